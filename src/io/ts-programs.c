/* ts-programs.c: the programs an MPEG-TS file carries, from its first
 * bytes.  GStreamer's tsdemux (program-number -1) plays one program: the
 * first whose map (PMT) comes after the program association table (PAT).
 * A broadcast capture of a whole multiplex holds several, and the others
 * would be left out without a word; the tool says which one is read. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lhio-private.h"
#include "lhio-video.h"
#include "ts-packet.h"

#define PAT_PID 0x0000
#define PAT_TABLE_ID 0x00
#define PMT_TABLE_ID 0x02
/* A section's bytes at most (ISO 13818-1: section_length up to 1021). */
#define SECTION_BYTES 1024

/* Where the first run of LHIO_TS_RUN_PACKETS packets of kind starts in
 * head, or -1: a capture may begin inside a packet. */
static long first_run(const uint8_t *head, size_t n, const LhioTsPacketKind *kind)
{
  size_t reach = (LHIO_TS_RUN_PACKETS - 1) * kind->size + kind->sync;
  for (size_t i = kind->sync; i + reach - kind->sync < n && i < kind->size + kind->sync; i++) {
    int k = 0;
    while (k < LHIO_TS_RUN_PACKETS && head[i + (size_t)k * kind->size] == LHIO_TS_SYNC_BYTE)
      k++;
    if (k == LHIO_TS_RUN_PACKETS)
      return (long)(i - kind->sync);
  }
  return -1;
}

/* One packet's fields: its PID, whether a section or PES starts in it, and
 * its payload (NULL when it has none or its header is broken). */
typedef struct {
  unsigned pid;
  bool unit_start;
  const uint8_t *payload;
  size_t size;
} Packet;

static bool read_packet(const uint8_t *p, Packet *packet)
{
  if (p[0] != LHIO_TS_SYNC_BYTE || (p[1] & 0x80))
    return false; /* out of step, or flagged with a transport error */
  packet->pid = ((unsigned)(p[1] & 0x1f) << 8) | p[2];
  packet->unit_start = p[1] & 0x40;
  unsigned control = (p[3] >> 4) & 3;
  size_t start = LHIO_TS_HEADER_BYTES + (control & 2 ? 1 + (size_t)p[4] : 0);
  packet->payload = (control & 1) && start < LHIO_TS_BYTES ? p + start : NULL;
  packet->size = packet->payload ? LHIO_TS_BYTES - start : 0;
  return true;
}

/* A section of table table_id gathered from the packets of pid, from the
 * first that starts one at or after *at on; *at is left after its first
 * packet.  Its length, or 0 when none is whole in head. */
static size_t gather_section(const uint8_t *head, size_t n, const LhioTsPacketKind *kind,
                             size_t *at, unsigned pid, uint8_t table_id,
                             uint8_t section[SECTION_BYTES])
{
  size_t have = 0, want = 0;
  for (; *at + kind->sync + LHIO_TS_BYTES <= n; *at += kind->size) {
    Packet packet;
    if (!read_packet(head + *at + kind->sync, &packet) || packet.pid != pid || !packet.payload)
      continue;
    const uint8_t *data = packet.payload;
    size_t size = packet.size;
    if (want == 0) {
      if (!packet.unit_start || size < 1 || (size_t)data[0] + 1 >= size)
        continue;
      size_t pointer = data[0];
      data += 1 + pointer;
      size -= 1 + pointer;
      if (data[0] != table_id || size < 3)
        continue;
      want = 3 + (((size_t)(data[1] & 0x0f) << 8) | data[2]);
      if (want > SECTION_BYTES || want < 12) {
        want = 0;
        continue;
      }
    } else if (packet.unit_start) {
      return 0; /* a new section before this one ended: lost packets */
    }
    size_t take = size < want - have ? size : want - have;
    memcpy(section + have, data, take);
    have += take;
    if (have == want) {
      *at += kind->size;
      return want;
    }
  }
  return 0;
}

/* The elementary streams a program map section (length bytes) lists, -1
 * when it is not one. */
static int count_streams(const uint8_t *section, size_t length)
{
  if (length < 16)
    return -1;
  const size_t end = length - 4; /* the CRC */
  size_t at = 12 + (((size_t)(section[10] & 0x0f) << 8) | section[11]);
  int streams = 0;
  while (at + 5 <= end) {
    const size_t info = ((size_t)(section[at + 3] & 0x0f) << 8) | section[at + 4];
    if (at + 5 + info > end)
      return -1;
    streams++;
    at += 5 + info;
  }
  return streams;
}

void lhio_ts_programs(const uint8_t *head, size_t n, LhioTsPrograms *programs)
{
  memset(programs, 0, sizeof *programs);
  programs->first_mapped = -1;
  programs->first_mapped_streams = -1;
  if (!head)
    return;
  for (size_t k = 0; k < LHIO_TS_PACKET_KINDS; k++) {
    const LhioTsPacketKind *kind = &lhio_ts_packet_kinds[k];
    long found = first_run(head, n, kind);
    if (found < 0)
      continue;
    size_t at = (size_t)found;
    uint8_t section[SECTION_BYTES];
    size_t length = gather_section(head, n, kind, &at, PAT_PID, PAT_TABLE_ID, section);
    if (length == 0)
      return;
    /* After the 8 bytes of its header, 4 bytes a program up to the CRC;
     * program 0 gives the network table's PID, not a program's. */
    unsigned map_pids[LHIO_TS_MAX_PROGRAMS];
    for (size_t i = 8; i + 4 <= length - 4 && programs->count < LHIO_TS_MAX_PROGRAMS; i += 4) {
      int number = (section[i] << 8) | section[i + 1];
      if (number == 0)
        continue;
      map_pids[programs->count] = ((unsigned)(section[i + 2] & 0x1f) << 8) | section[i + 3];
      programs->numbers[programs->count++] = number;
    }
    /* The first of their maps to come is the program tsdemux plays. */
    unsigned first_map_pid = 0;
    size_t first_map_at = at;
    for (; at + kind->sync + LHIO_TS_BYTES <= n && programs->first_mapped < 0; at += kind->size) {
      Packet packet;
      if (!read_packet(head + at + kind->sync, &packet) || !packet.unit_start || !packet.payload ||
          packet.size < 2 || (size_t)packet.payload[0] + 1 >= packet.size)
        continue;
      if (packet.payload[1 + packet.payload[0]] != PMT_TABLE_ID)
        continue;
      for (int i = 0; i < programs->count; i++)
        if (map_pids[i] == packet.pid) {
          programs->first_mapped = programs->numbers[i];
          first_map_pid = packet.pid;
          first_map_at = at;
          break;
        }
    }
    if (programs->first_mapped >= 0) {
      size_t map_length =
          gather_section(head, n, kind, &first_map_at, first_map_pid, PMT_TABLE_ID, section);
      if (map_length > 0)
        programs->first_mapped_streams = count_streams(section, map_length);
    }
    return;
  }
}

int lhio_ts_file_programs(const char *path, LhioTsPrograms *programs)
{
  memset(programs, 0, sizeof *programs);
  programs->first_mapped = -1;
  off_t size;
  int fd = lhio_open_regular(path, &size);
  if (fd < 0)
    return -1;
  size_t n = (size_t)size < LHIO_TS_HEAD_BYTES ? (size_t)size : LHIO_TS_HEAD_BYTES;
  uint8_t *head = malloc(n ? n : 1);
  int status = -1;
  if (head && pread(fd, head, n, 0) == (ssize_t)n) {
    lhio_ts_programs(head, n, programs);
    status = 0;
  }
  free(head);
  close(fd);
  return status;
}

static void programs_list(const LhioTsPrograms *programs, char *text, size_t size)
{
  if (size == 0)
    return;
  int n = snprintf(text, size, "%d program%s (", programs->count, programs->count == 1 ? "" : "s");
  for (int i = 0; i < programs->count && n >= 0 && (size_t)n < size; i++)
    n += snprintf(text + n, size - (size_t)n, "%s%d", i ? ", " : "", programs->numbers[i]);
  if (n >= 0 && (size_t)n < size)
    snprintf(text + n, size - (size_t)n, ")");
}

bool lhio_ts_several_programs(const char *path, char *list, size_t list_size, char *played,
                              size_t played_size, const char *unknown)
{
  LhioTsPrograms programs;
  if (lhio_ts_file_programs(path, &programs) < 0 || programs.count < 2)
    return false;
  programs_list(&programs, list, list_size);
  if (programs.first_mapped >= 0)
    snprintf(played, played_size, "program %d", programs.first_mapped);
  else
    snprintf(played, played_size, "%s", unknown);
  return true;
}

int lhio_ts_program_check(const char *path, int program)
{
  LhioTsPrograms programs;
  if (lhio_ts_file_programs(path, &programs) < 0 || programs.count == 0)
    return LH_OK;
  for (int i = 0; i < programs.count; i++)
    if (programs.numbers[i] == program)
      return LH_OK;
  char list[512];
  programs_list(&programs, list, sizeof list);
  return lhio_fail(LH_ERROR_INVALID_ARGUMENT, path, "no program %d in it: it has %s", program,
                   list);
}
