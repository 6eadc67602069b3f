/* ts-end.c: tells whether an MPEG-TS (or M2TS) file was cut, from its last
 * bytes.  A transport stream has no index, no stated duration and no end
 * marker, and GStreamer's tsdemux ends a cut file quietly (it drops a short
 * last packet and pushes the last PES as far as it goes), so the frames
 * before the cut come out as if the file were whole.  Its end still shows
 * two kinds of cut:
 *
 *  - the last packet is shorter than the others: a cut at any byte but the
 *    one in every 188 (192, 204, 208) that ends a packet;
 *  - a stream's last PES packet is shorter than its header says.  Muxers
 *    finish every PES they start, and GStreamer's mpegtsmux states the
 *    length of each, audio's and video's; FFmpeg's leaves video's unstated
 *    (0, "to the next one"), so a cut between two of its packets inside a
 *    video PES is not seen here.
 *
 * The packet size and where packets start come from the end itself (a run of
 * sync bytes at one stride), not from the head: a capture may begin inside a
 * packet, and a stream that lost bytes on the way is in step again later.
 * Bytes after the last packet that do not begin one are left alone: junk
 * some tools append, not a cut. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lhio-private.h"
#include "lhio-video.h"
#include "ts-packet.h"

#define PES_HEADER_BYTES 6

const LhioTsPacketKind lhio_ts_packet_kinds[LHIO_TS_PACKET_KINDS] = {
    {188, 0, "MPEG-TS"},
    {192, 4, "M2TS"},
    {204, 0, "MPEG-TS"},
    {208, 0, "MPEG-TS"},
};

/* Where in tail the last packet of a run of LHIO_TS_RUN_PACKETS starts, or -1. */
static long last_run(const uint8_t *tail, size_t n, const LhioTsPacketKind *kind)
{
  size_t reach = (LHIO_TS_RUN_PACKETS - 1) * kind->size + kind->sync;
  for (size_t i = n; i-- > reach;) {
    if (tail[i] != LHIO_TS_SYNC_BYTE)
      continue;
    int k = 1;
    while (k < LHIO_TS_RUN_PACKETS && tail[i - (size_t)k * kind->size] == LHIO_TS_SYNC_BYTE)
      k++;
    if (k == LHIO_TS_RUN_PACKETS)
      return (long)(i - kind->sync);
  }
  return -1;
}

typedef enum {
  PES_UNKNOWN, /* no start seen, or not a PES of stated length */
  PES_SIZED,   /* a PES whose header states its length */
} PesState;

typedef struct {
  uint8_t state;
  uint32_t expected; /* bytes of the PES, its 6-byte header included */
  uint32_t have;
} PidState;

/* The packets of tail from the first one of the grid that ends at last (the
 * start of the last whole packet) on: 1 when a PES of stated length is cut
 * short at the end, why saying which. */
static int pes_cut(const uint8_t *tail, size_t last, const LhioTsPacketKind *kind, char *why,
                   size_t why_size)
{
  PidState *pids = calloc(LHIO_TS_PID_COUNT, sizeof *pids);
  if (!pids)
    return 0;
  for (size_t at = last % kind->size; at <= last; at += kind->size) {
    const uint8_t *p = tail + at + kind->sync;
    if (p[0] != LHIO_TS_SYNC_BYTE) {
      /* Out of step (bytes lost on the way): what came before says nothing
       * of the streams' ends. */
      memset(pids, 0, LHIO_TS_PID_COUNT * sizeof *pids);
      continue;
    }
    unsigned pid = ((unsigned)(p[1] & 0x1f) << 8) | p[2];
    bool transport_error = p[1] & 0x80, unit_start = p[1] & 0x40;
    unsigned control = (p[3] >> 4) & 3;
    if (pid == LHIO_TS_NULL_PID)
      continue;
    PidState *s = &pids[pid];
    size_t start = LHIO_TS_HEADER_BYTES;
    if (control & 2)
      start += 1 + (size_t)p[4];
    if (transport_error || start > LHIO_TS_BYTES) {
      s->state = PES_UNKNOWN;
      continue;
    }
    size_t payload = control & 1 ? LHIO_TS_BYTES - start : 0;
    const uint8_t *data = p + start;
    if (unit_start) {
      unsigned length = payload >= PES_HEADER_BYTES && data[0] == 0 && data[1] == 0 && data[2] == 1
                            ? ((unsigned)data[4] << 8) | data[5]
                            : 0;
      s->state = length ? PES_SIZED : PES_UNKNOWN;
      s->expected = length + PES_HEADER_BYTES;
      s->have = (uint32_t)payload;
    } else if (s->state == PES_SIZED) {
      s->have += (uint32_t)payload;
    }
  }
  int cut = 0;
  for (unsigned pid = 0; pid < LHIO_TS_PID_COUNT && !cut; pid++)
    if (pids[pid].state == PES_SIZED && pids[pid].have < pids[pid].expected) {
      snprintf(why, why_size,
               "the last PES packet of its stream 0x%04x ends after %u of its %u bytes", pid,
               pids[pid].have, pids[pid].expected);
      cut = 1;
    }
  free(pids);
  return cut;
}

int lhio_ts_end_cut(const uint8_t *tail, size_t n, char *why, size_t why_size)
{
  if (why_size)
    why[0] = '\0';
  for (size_t k = 0; k < LHIO_TS_PACKET_KINDS; k++) {
    const LhioTsPacketKind *kind = &lhio_ts_packet_kinds[k];
    long found = last_run(tail, n, kind);
    if (found < 0)
      continue;
    size_t last = (size_t)found;
    if (last + kind->size > n) {
      snprintf(why, why_size, "it ends %zu bytes into a %zu-byte %s packet", n - last, kind->size,
               kind->name);
      return 1;
    }
    size_t after = n - (last + kind->size);
    if (after > 0 && after <= kind->sync) {
      /* Only the start of M2TS's time code is left of the next packet. */
      snprintf(why, why_size, "it ends %zu bytes into a %zu-byte %s packet", after, kind->size,
               kind->name);
      return 1;
    }
    if (after > 0)
      return 0;
    return pes_cut(tail, last, kind, why, why_size);
  }
  return 0;
}

int lhio_ts_file_cut(const char *path, char *why, size_t why_size)
{
  off_t size;
  int fd = lhio_open_regular(path, &size);
  if (fd < 0)
    return 0; /* a pipe is read once, by the demuxer */
  int cut = 0;
  if (size > 0) {
    size_t n = (size_t)size < LHIO_TS_END_BYTES ? (size_t)size : LHIO_TS_END_BYTES;
    uint8_t *tail = malloc(n);
    if (tail && pread(fd, tail, n, size - (off_t)n) == (ssize_t)n)
      cut = lhio_ts_end_cut(tail, n, why, why_size);
    free(tail);
  }
  close(fd);
  return cut;
}
