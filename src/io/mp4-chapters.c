/* mp4-chapters.c: an MP4 or QuickTime file rewritten from another keeps its
 * chapters.  GStreamer 1.22's qtdemux reads none (no table of contents, the
 * chapter text track not exposed) and qtmux and mp4mux write none (they are
 * not GstTocSetters), so the input's chapter list, a Nero chpl box in its
 * movie's user data (as FFmpeg, mp4v2 and HandBrake write it; its times are
 * in 100 ns units, not the tracks' time scales), is copied into the finished
 * file's moov/udta.  moov grows: that takes a file whose media data lies
 * before moov, as qtmux and mp4mux write it unless asked for fast start. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lhio-private.h"

/* The first box of type wanted in [from, end): where it starts and its
 * whole size. */
static bool find_box(const uint8_t *data, size_t from, size_t end, const char *wanted, size_t *at,
                     size_t *size)
{
  const uint8_t *type;
  size_t payload;
  for (*at = from; lhio_mp4_box_at(data, *at, end, &type, &payload, size); *at += *size)
    if (memcmp(type, wanted, 4) == 0)
      return true;
  return false;
}

/* The chpl box in moov/udta: its start and size within the moov read. */
static bool find_chapters(const LhioMp4Moov *moov, size_t *at, size_t *size)
{
  size_t udta, udta_end;
  return moov->data &&
         lhio_mp4_child(moov->data, moov->children, moov->size, "udta", &udta, &udta_end) &&
         find_box(moov->data, udta, udta_end, "chpl", at, size);
}

/* Whether the boxes of [from, end) follow each other to exactly its end,
 * each stating its size: one of size 0 runs to the end and would take in
 * a box put after it, and one put after bytes that make no box would be
 * read by none. */
static bool boxes_fill(const uint8_t *data, size_t from, size_t end)
{
  const uint8_t *type;
  size_t payload, size, at = from;
  while (at < end && lhio_mp4_box_at(data, at, end, &type, &payload, &size) &&
         lhio_be32(data + at) != 0)
    at += size;
  return at == end;
}

/* Adds grow to the size of the box at data[at] (32 or 64 bits).  A size
 * of 0 (the box runs to the end of its parent, or of the file) stays 0:
 * the box still ends where its parent does. */
static void grow_box(uint8_t *data, size_t at, size_t grow)
{
  if (lhio_be32(data + at) == 0)
    return;
  if (lhio_be32(data + at) == 1) {
    uint64_t size = (uint64_t)lhio_be32(data + at + 8) << 32 | lhio_be32(data + at + 12);
    size += grow;
    lhio_put_be32(data + at + 8, (uint32_t)(size >> 32));
    lhio_put_be32(data + at + 12, (uint32_t)size);
  } else {
    lhio_put_be32(data + at, lhio_be32(data + at) + (uint32_t)grow);
  }
}

/* Whether the chapters can be put at the end of moov's udta, or of moov in
 * a udta of their own where it has none: the boxes there fill it. */
static bool has_room(const LhioMp4Moov *moov)
{
  size_t udta, udta_end;
  if (lhio_mp4_child(moov->data, moov->children, moov->size, "udta", &udta, &udta_end))
    return boxes_fill(moov->data, udta, udta_end);
  return boxes_fill(moov->data, moov->children, moov->size);
}

/* moov with the chpl box (chpl_size bytes) put at the end of its udta, or
 * in a new udta at its end; NULL without memory. */
static uint8_t *with_chapters(const LhioMp4Moov *moov, const uint8_t *chpl, size_t chpl_size,
                              size_t *new_size)
{
  size_t udta_at, udta_size;
  const bool has_udta =
      find_box(moov->data, moov->children, moov->size, "udta", &udta_at, &udta_size);
  const size_t header = has_udta ? 0 : 8;
  const size_t insert_at = has_udta ? udta_at + udta_size : moov->size;
  *new_size = moov->size + header + chpl_size;
  uint8_t *data = malloc(*new_size);
  if (!data)
    return NULL;
  memcpy(data, moov->data, insert_at);
  if (!has_udta) {
    lhio_put_be32(data + insert_at, (uint32_t)(8 + chpl_size));
    memcpy(data + insert_at + 4, "udta", 4);
  }
  memcpy(data + insert_at + header, chpl, chpl_size);
  memcpy(data + insert_at + header + chpl_size, moov->data + insert_at, moov->size - insert_at);
  grow_box(data, 0, header + chpl_size);
  if (has_udta)
    grow_box(data, udta_at, chpl_size);
  return data;
}

int lhio_mp4_keep_chapters(const char *input, const char *output)
{
  int fd = open(input, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return lhio_fail_os(errno, input);
  LhioMp4Moov moov;
  int status = lhio_mp4_read_moov(fd, input, &moov);
  close(fd);
  size_t at, size;
  /* Version and flags, a 4-byte field of version 1, and the count. */
  if (status < 0 || !find_chapters(&moov, &at, &size) || size < 8 + 4 + 1) {
    lhio_mp4_moov_clear(&moov);
    return status;
  }
  uint8_t *chpl = malloc(size);
  if (!chpl) {
    lhio_mp4_moov_clear(&moov);
    return lhio_fail(LH_ERROR_NO_MEMORY, input, "no memory for its chapters");
  }
  memcpy(chpl, moov.data + at, size);
  lhio_mp4_moov_clear(&moov);

  fd = open(output, O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    free(chpl);
    return lhio_fail_os(errno, output);
  }
  status = lhio_mp4_read_moov(fd, output, &moov);
  size_t ignored_at, ignored_size;
  if (status == LH_OK && moov.data && !moov.media_after &&
      !find_chapters(&moov, &ignored_at, &ignored_size) && has_room(&moov)) {
    size_t new_size;
    uint8_t *data = with_chapters(&moov, chpl, size, &new_size);
    status = data ? lhio_mp4_write_moov(fd, output, &moov, data, new_size)
                  : lhio_fail(LH_ERROR_NO_MEMORY, output, "no memory for its moov box");
    free(data);
  }
  lhio_mp4_moov_clear(&moov);
  free(chpl);
  if (close(fd) != 0 && status == LH_OK)
    status = lhio_fail_os(errno, output);
  return status;
}
