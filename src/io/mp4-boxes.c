/* mp4-boxes.c: the boxes of an MP4 or QuickTime file, walked in memory, and
 * a file's moov box read whole and written back, for what is put into a
 * file qtmux or mp4mux finished (mp4-rotation.c, mp4-creation-time.c,
 * mp4-chapters.c). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lhio-private.h"

/* A moov larger than this is left alone (a long clip's sample tables take
 * a few MB). */
#define MOOV_LIMIT (64u << 20)

bool lhio_mp4_box_at(const uint8_t *data, size_t at, size_t end, const uint8_t **type,
                     size_t *payload, size_t *size)
{
  if (at > end || end - at < 8)
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

bool lhio_mp4_child(const uint8_t *data, size_t from, size_t end, const char *wanted,
                    size_t *payload, size_t *child_end)
{
  const uint8_t *type;
  size_t inner, size;
  for (size_t at = from; lhio_mp4_box_at(data, at, end, &type, &inner, &size); at += size)
    if (memcmp(type, wanted, 4) == 0) {
      *payload = inner;
      *child_end = at + size;
      return true;
    }
  return false;
}

bool lhio_mp4_video_trak(const uint8_t *moov, size_t size, size_t first, size_t *trak,
                         size_t *trak_end, size_t *mdia, size_t *mdia_end)
{
  return lhio_mp4_trak_of(moov, size, first, "vide", trak, trak_end, mdia, mdia_end);
}

bool lhio_mp4_trak_of(const uint8_t *moov, size_t size, size_t first, const char *handler,
                      size_t *trak, size_t *trak_end, size_t *mdia, size_t *mdia_end)
{
  const uint8_t *type;
  size_t payload, box_size;
  for (size_t at = first; lhio_mp4_box_at(moov, at, size, &type, &payload, &box_size);
       at += box_size) {
    size_t hdlr, hdlr_end;
    if (memcmp(type, "trak", 4) == 0 &&
        lhio_mp4_child(moov, payload, at + box_size, "mdia", mdia, mdia_end) &&
        lhio_mp4_child(moov, *mdia, *mdia_end, "hdlr", &hdlr, &hdlr_end) && hdlr_end - hdlr >= 12 &&
        memcmp(moov + hdlr + 8, handler, 4) == 0) {
      *trak = payload;
      *trak_end = at + box_size;
      return true;
    }
  }
  return false;
}

/* The top-level box header at offset at of the file: its type and size;
 * false at the end or where it does not fit (in the file, or a 64-bit
 * size too small for its own header). */
static bool file_box_at(int fd, off_t at, off_t end, uint8_t type[4], uint64_t *length)
{
  uint8_t head[16];
  if (end - at < 8)
    return false;
  const ssize_t got = pread(fd, head, sizeof head, at);
  if (got < 8)
    return false;
  *length = lhio_be32(head);
  if (*length == 1 && got < 16)
    return false;
  uint64_t header = 8;
  if (*length == 1) {
    *length = (uint64_t)lhio_be32(head + 8) << 32 | lhio_be32(head + 12);
    header = 16;
  } else if (*length == 0) {
    *length = (uint64_t)(end - at);
  }
  memcpy(type, head + 4, 4);
  return *length >= header && *length <= (uint64_t)(end - at);
}

int lhio_mp4_read_moov(int fd, const char *path, LhioMp4Moov *moov)
{
  memset(moov, 0, sizeof *moov);
  const off_t end = lseek(fd, 0, SEEK_END);
  uint8_t type[4];
  uint64_t length;
  off_t at = 0;
  bool found = false;
  while (!found && file_box_at(fd, at, end, type, &length)) {
    found = memcmp(type, "moov", 4) == 0;
    if (!found)
      at += (off_t)length;
  }
  /* A moov that does not fit (a file cut inside it) is none. */
  if (!found || length > MOOV_LIMIT)
    return LH_OK;
  moov->data = malloc((size_t)length);
  if (!moov->data)
    return lhio_fail(LH_ERROR_NO_MEMORY, path, "no memory for its moov box");
  if (pread(fd, moov->data, (size_t)length, at) != (ssize_t)length) {
    lhio_mp4_moov_clear(moov);
    return lhio_fail(LH_ERROR_IO, path, "%s", errno ? strerror(errno) : "short read");
  }
  moov->size = (size_t)length;
  moov->at = at;
  moov->children = lhio_be32(moov->data) == 1 ? 16 : 8;
  /* What follows it: media data there would move if moov grew. */
  moov->tail = (size_t)(end - at - (off_t)length);
  for (off_t next = at + (off_t)length; file_box_at(fd, next, end, type, &length);
       next += (off_t)length)
    if (memcmp(type, "mdat", 4) == 0 || memcmp(type, "moof", 4) == 0)
      moov->media_after = true;
  if (moov->tail > MOOV_LIMIT)
    moov->media_after = true; /* not moved through memory either */
  return LH_OK;
}

int lhio_mp4_write_moov(int fd, const char *path, const LhioMp4Moov *moov, const uint8_t *data,
                        size_t size)
{
  if (size != moov->size && moov->media_after)
    return lhio_fail(LH_ERROR_INVALID_ARGUMENT, path, "its moov box cannot change size");
  uint8_t *tail = NULL;
  const off_t tail_at = moov->at + (off_t)moov->size;
  if (size != moov->size && moov->tail) {
    /* The boxes after moov (qtmux's XMP uuid) move with its end. */
    tail = malloc(moov->tail);
    if (!tail)
      return lhio_fail(LH_ERROR_NO_MEMORY, path, "no memory for the end of the file");
    if (pread(fd, tail, moov->tail, tail_at) != (ssize_t)moov->tail) {
      free(tail);
      return lhio_fail(LH_ERROR_IO, path, "%s", errno ? strerror(errno) : "short read");
    }
  }
  int status = LH_OK;
  if (pwrite(fd, data, size, moov->at) != (ssize_t)size ||
      (tail && pwrite(fd, tail, moov->tail, moov->at + (off_t)size) != (ssize_t)moov->tail) ||
      (size < moov->size && ftruncate(fd, moov->at + (off_t)size + (off_t)moov->tail) != 0))
    status = lhio_fail_os(errno, path);
  free(tail);
  return status;
}

void lhio_mp4_moov_clear(LhioMp4Moov *moov)
{
  free(moov->data);
  memset(moov, 0, sizeof *moov);
}

bool lhio_mp4_file_moov(const char *path, LhioMp4Moov *moov)
{
  memset(moov, 0, sizeof *moov);
  off_t size;
  int fd = lhio_open_regular(path, &size);
  if (fd < 0)
    return false;
  const bool read = lhio_mp4_read_moov(fd, path, moov) == LH_OK && moov->data;
  close(fd);
  if (!read)
    lhio_mp4_moov_clear(moov);
  return read;
}
