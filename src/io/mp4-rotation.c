/* mp4-rotation.c: a video's rotation written into the MP4 or QuickTime file
 * rewritten from it.  A phone stores a portrait clip in landscape with a
 * rotation in its video track's header (tkhd) matrix, which qtdemux reads
 * as the image-orientation tag; GStreamer 1.22's mp4mux and qtmux write no
 * rotation, so the clip written back played lying on its side.  The matrix
 * is put into the finished file in place (the same 36 bytes), in qtdemux's
 * convention, so that the tag read back is the input's. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lhio-private.h"

static void put_be32(uint8_t *p, uint32_t v)
{
  p[0] = (uint8_t)(v >> 24);
  p[1] = (uint8_t)(v >> 16);
  p[2] = (uint8_t)(v >> 8);
  p[3] = (uint8_t)v;
}

/* The box at data[at] within end: its type, payload and size; false when
 * it does not fit. */
static bool box_at(const uint8_t *data, size_t at, size_t end, const uint8_t **type,
                   size_t *payload, size_t *size)
{
  if (end - at < 8)
    return false;
  uint64_t length = lhio_be32(data + at);
  size_t header = 8;
  if (length == 1) {
    if (end - at < 16)
      return false;
    length = (uint64_t)lhio_be32(data + at + 8) << 32 | lhio_be32(data + at + 12);
    header = 16;
  } else if (length == 0) {
    length = end - at;
  }
  if (length < header || length > end - at)
    return false;
  *type = data + at + 4;
  *payload = at + header;
  *size = (size_t)length;
  return true;
}

/* The first box of that type among the children of [from, end). */
static bool child(const uint8_t *data, size_t from, size_t end, const char *wanted, size_t *payload,
                  size_t *child_end)
{
  const uint8_t *type;
  size_t inner, size;
  for (size_t at = from; box_at(data, at, end, &type, &inner, &size); at += size)
    if (memcmp(type, wanted, 4) == 0) {
      *payload = inner;
      *child_end = at + size;
      return true;
    }
  return false;
}

/* Writes into moov (in memory) the video track's matrix for quarter_turns
 * (1, 2 or 3 clockwise) where the matrix is still the identity; true if it
 * was written. */
static bool rotate_in_moov(uint8_t *moov, size_t size, int quarter_turns)
{
  const uint8_t *type;
  size_t payload, box_size;
  const size_t first = lhio_be32(moov) == 1 ? 16 : 8; /* after moov's own header */
  for (size_t at = first; box_at(moov, at, size, &type, &payload, &box_size); at += box_size) {
    if (memcmp(type, "trak", 4) != 0)
      continue;
    const size_t trak_end = at + box_size;
    size_t mdia, mdia_end, hdlr, hdlr_end, tkhd, tkhd_end;
    if (!child(moov, payload, trak_end, "mdia", &mdia, &mdia_end) ||
        !child(moov, mdia, mdia_end, "hdlr", &hdlr, &hdlr_end) || hdlr_end - hdlr < 12 ||
        memcmp(moov + hdlr + 8, "vide", 4) != 0)
      continue;
    if (!child(moov, payload, trak_end, "tkhd", &tkhd, &tkhd_end))
      return false;
    /* version and flags, the times and ids (20 or 32 bytes), 16 more. */
    const size_t matrix = tkhd + 4 + (moov[tkhd] == 1 ? 32 : 20) + 16;
    if (tkhd_end - tkhd < matrix - tkhd + 36 + 8)
      return false;
    static const uint32_t identity[9] = {0x10000, 0, 0, 0, 0x10000, 0, 0, 0, 0x40000000};
    for (int k = 0; k < 9; k++)
      if (lhio_be32(moov + matrix + 4 * k) != identity[k])
        return false; /* the muxer wrote one: it stays */
    const uint32_t width = lhio_be32(moov + matrix + 36), height = lhio_be32(moov + matrix + 40);
    /* a, b, c, d in 16.16 (-1 as 0xFFFF0000), then the translation that
     * brings the turned picture back to the origin. */
    const uint32_t one = 0x10000, minus_one = 0xFFFF0000u;
    uint32_t m[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0x40000000};
    if (quarter_turns == 1) {
      m[1] = one, m[3] = minus_one, m[6] = height;
    } else if (quarter_turns == 2) {
      m[0] = minus_one, m[4] = minus_one, m[6] = width, m[7] = height;
    } else {
      m[1] = minus_one, m[3] = one, m[7] = width;
    }
    for (int k = 0; k < 9; k++)
      put_be32(moov + matrix + 4 * k, m[k]);
    return true;
  }
  return false;
}

int lhio_mp4_set_rotation(const char *path, int quarter_turns)
{
  if (quarter_turns < 1 || quarter_turns > 3)
    return LH_OK;
  int fd = open(path, O_RDWR | O_CLOEXEC);
  if (fd < 0)
    return lhio_fail(LH_ERROR_IO, path, "%s", strerror(errno));
  off_t end = lseek(fd, 0, SEEK_END);
  int status = LH_OK;
  /* The top-level boxes, read a header at a time, up to moov. */
  for (off_t at = 0; status == LH_OK && end - at >= 8;) {
    uint8_t head[16];
    const ssize_t got = pread(fd, head, sizeof head, at);
    if (got < 8) {
      status = lhio_fail(LH_ERROR_IO, path, "%s", strerror(errno));
      break;
    }
    uint64_t length = lhio_be32(head);
    if (length == 1 && got < 16)
      break;
    if (length == 1)
      length = (uint64_t)lhio_be32(head + 8) << 32 | lhio_be32(head + 12);
    else if (length == 0)
      length = (uint64_t)(end - at);
    if (length < 8 || length > (uint64_t)(end - at))
      break;
    if (memcmp(head + 4, "moov", 4) == 0 && length <= (64u << 20)) {
      uint8_t *moov = malloc((size_t)length);
      if (!moov) {
        status = lhio_fail(LH_ERROR_NO_MEMORY, path, "no memory for its moov box");
      } else if (pread(fd, moov, (size_t)length, at) != (ssize_t)length) {
        status = lhio_fail(LH_ERROR_IO, path, "%s", strerror(errno));
      } else if (rotate_in_moov(moov, (size_t)length, quarter_turns) &&
                 pwrite(fd, moov, (size_t)length, at) != (ssize_t)length) {
        status = lhio_fail(LH_ERROR_IO, path, "%s", strerror(errno));
      }
      free(moov);
      break;
    }
    at += (off_t)length;
  }
  if (close(fd) != 0 && status == LH_OK)
    status = lhio_fail(LH_ERROR_IO, path, "%s", strerror(errno));
  return status;
}
