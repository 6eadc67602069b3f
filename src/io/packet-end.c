/* packet-end.c: whether an FLV, IVF, Ogg or MPEG program stream file was cut
 * inside its last packet.  Their demuxers end such a file quietly at the
 * last whole packet, a frame or two short, and the frames' times show that
 * only where more than half a second is gone.  Each packet states its
 * length (an FLV tag, an IVF frame, an Ogg page, an MPEG-PS pack or PES
 * packet), so a walk from the first one finds the packet that runs past the
 * end of the file, or ends with it: then the file is whole, and its frames
 * need not be held against a duration, which is the longest stream's (audio
 * that runs on after the video is no cut).  A walk that meets bytes that
 * are no packet stops there and tells nothing: a trailer some writer
 * appends is no cut. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "lhio-private.h"

/* Bytes of a packet's header that a walk reads at once: an Ogg page's
 * header with the longest segment table. */
#define HEAD_BYTES (27 + 255)

typedef struct {
  int fd;
  off_t end;
  const char *name; /* of the cut packet, e.g. "FLV tag" */
  uint64_t length;  /* its stated length, header included */
  off_t into;       /* the bytes of it in the file */
} Walk;

/* The bytes at the walk's offset at, up to HEAD_BYTES: how many were read. */
static size_t read_head(const Walk *w, off_t at, uint8_t *head)
{
  const off_t left = w->end - at;
  const size_t want = left < HEAD_BYTES ? (size_t)left : HEAD_BYTES;
  const ssize_t got = pread(w->fd, head, want, at);
  return got > 0 ? (size_t)got : 0;
}

/* Whether the packet of length bytes at offset at runs past the end of the
 * file: the walk ends cut there, in it. */
static bool runs_past_end(Walk *w, off_t at, uint64_t length, const char *name)
{
  if (length <= (uint64_t)(w->end - at))
    return false;
  w->name = name;
  w->length = length;
  w->into = w->end - at;
  return true;
}

/* FLV: a header that states its size, a 4-byte previous tag size, then
 * tags of an 11-byte header (type, 24-bit data size, time, stream id), the
 * data and the previous tag size again.  A tag cut in its trailing size
 * alone has lost no media and is no cut. */
static LhioFileEnd walk_flv(Walk *w)
{
  uint8_t head[HEAD_BYTES];
  if (read_head(w, 0, head) < 9)
    return LHIO_FILE_END_UNKNOWN;
  for (off_t at = (off_t)lhio_be32(head + 5) + 4; at < w->end;) {
    const size_t got = read_head(w, at, head);
    const unsigned type = got ? head[0] & 0x1f : 0;
    if (type != 8 && type != 9 && type != 18)
      return LHIO_FILE_END_UNKNOWN; /* audio, video and script tags only */
    if (got < 11)
      return runs_past_end(w, at, 11, "FLV tag header") ? LHIO_FILE_END_CUT : LHIO_FILE_END_UNKNOWN;
    const uint64_t data = (uint64_t)head[1] << 16 | (uint64_t)head[2] << 8 | head[3];
    if (runs_past_end(w, at, 11 + data, "FLV tag"))
      return LHIO_FILE_END_CUT;
    at += (off_t)(11 + data + 4);
  }
  return LHIO_FILE_END_WHOLE;
}

static uint32_t le32(const uint8_t *p)
{
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* IVF: a header that states its size, then frames of a 12-byte header
 * (32-bit little-endian size, 64-bit time) and the data. */
static LhioFileEnd walk_ivf(Walk *w)
{
  uint8_t head[HEAD_BYTES];
  if (read_head(w, 0, head) < 32)
    return LHIO_FILE_END_UNKNOWN;
  const off_t header = (off_t)(head[6] | head[7] << 8);
  if (header < 32)
    return LHIO_FILE_END_UNKNOWN;
  for (off_t at = header; at < w->end;) {
    const size_t got = read_head(w, at, head);
    if (got < 12)
      return runs_past_end(w, at, 12, "IVF frame header") ? LHIO_FILE_END_CUT
                                                          : LHIO_FILE_END_UNKNOWN;
    const uint64_t length = 12 + (uint64_t)le32(head);
    if (runs_past_end(w, at, length, "IVF frame"))
      return LHIO_FILE_END_CUT;
    at += (off_t)length;
  }
  return LHIO_FILE_END_WHOLE;
}

/* Ogg: pages of a 27-byte header ("OggS", the count of segments last), the
 * segment table and the segments. */
static LhioFileEnd walk_ogg(Walk *w)
{
  uint8_t head[HEAD_BYTES];
  for (off_t at = 0; at < w->end;) {
    const size_t got = read_head(w, at, head);
    if (got < 4 || memcmp(head, "OggS", 4) != 0)
      return LHIO_FILE_END_UNKNOWN;
    if (got < 27 || got < 27 + (size_t)head[26])
      return runs_past_end(w, at, 27 + (uint64_t)(got >= 27 ? head[26] : 0), "Ogg page header")
                 ? LHIO_FILE_END_CUT
                 : LHIO_FILE_END_UNKNOWN;
    uint64_t length = 27 + (uint64_t)head[26];
    for (int s = 0; s < head[26]; s++)
      length += head[27 + s];
    if (runs_past_end(w, at, length, "Ogg page"))
      return LHIO_FILE_END_CUT;
    at += (off_t)length;
  }
  return LHIO_FILE_END_WHOLE;
}

/* MPEG program stream: start codes 00 00 01 and an id; a pack header of 12
 * bytes (MPEG-1) or 14 and its stuffing (MPEG-2), the end code, and every
 * other packet (system header, PES) 6 bytes and the length it states. */
static LhioFileEnd walk_program_stream(Walk *w)
{
  uint8_t head[HEAD_BYTES];
  for (off_t at = 0; at < w->end;) {
    const size_t got = read_head(w, at, head);
    if (got < 4 || head[0] != 0 || head[1] != 0 || head[2] != 1 || head[3] < 0xb9)
      return LHIO_FILE_END_UNKNOWN;
    uint64_t length;
    const char *name = "MPEG-PS packet";
    if (head[3] == 0xb9) {
      length = 4; /* the end code */
    } else if (head[3] == 0xba) {
      name = "MPEG-PS pack header";
      if (got < 5)
        return runs_past_end(w, at, 12, name) ? LHIO_FILE_END_CUT : LHIO_FILE_END_UNKNOWN;
      if ((head[4] & 0xc0) == 0x40) {
        if (got < 14)
          return runs_past_end(w, at, 14, name) ? LHIO_FILE_END_CUT : LHIO_FILE_END_UNKNOWN;
        length = 14 + (head[13] & 7);
      } else if ((head[4] & 0xf0) == 0x20) {
        length = 12;
      } else {
        return LHIO_FILE_END_UNKNOWN;
      }
    } else {
      if (got < 6)
        return runs_past_end(w, at, 6, name) ? LHIO_FILE_END_CUT : LHIO_FILE_END_UNKNOWN;
      length = 6 + ((uint64_t)head[4] << 8 | head[5]);
    }
    if (runs_past_end(w, at, length, name))
      return LHIO_FILE_END_CUT;
    at += (off_t)length;
  }
  return LHIO_FILE_END_WHOLE;
}

LhioFileEnd lhio_packet_file_end(const char *path, char *why, size_t why_size)
{
  if (why_size)
    why[0] = '\0';
  Walk w = {.fd = -1};
  w.fd = lhio_open_regular(path, &w.end);
  if (w.fd < 0)
    return LHIO_FILE_END_UNKNOWN; /* a pipe is read once, by the demuxer */
  uint8_t magic[4];
  const bool got = pread(w.fd, magic, sizeof magic, 0) == (ssize_t)sizeof magic;
  LhioFileEnd end = LHIO_FILE_END_UNKNOWN;
  if (got && memcmp(magic, "FLV", 3) == 0)
    end = walk_flv(&w);
  else if (got && memcmp(magic, "DKIF", 4) == 0)
    end = walk_ivf(&w);
  else if (got && memcmp(magic, "OggS", 4) == 0)
    end = walk_ogg(&w);
  else if (got && memcmp(magic, "\0\0\1\xba", 4) == 0)
    end = walk_program_stream(&w);
  close(w.fd);
  if (end == LHIO_FILE_END_CUT)
    snprintf(why, why_size, "it ends %lld bytes into its %llu-byte %s", (long long)w.into,
             (unsigned long long)w.length, w.name);
  return end;
}
