/* mp4-creation-time.c: an MP4 or QuickTime file rewritten from another keeps
 * its creation time.  GStreamer 1.22's qtmux and mp4mux stamp the movie
 * (mvhd), each track (tkhd) and each track's media (mdhd) with the time of
 * the run, and take no tag for it (a datetime tag given to them changed
 * nothing), so a clip equalized today said it was filmed today.  The
 * input's movie creation time (seconds since 1904, 0 for none) is put into
 * those boxes of the finished file in place; their modification times stay
 * the run's, which is when the file was changed. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "lhio-private.h"

static uint64_t be64(const uint8_t *p)
{
  return (uint64_t)lhio_be32(p) << 32 | lhio_be32(p + 4);
}

/* A full box of times (mvhd, tkhd, mdhd) at payload, up to end: version 0
 * holds its creation time in 32 bits after the version and flags, version
 * 1 in 64. */
static bool creation_time_of(const uint8_t *box, size_t payload, size_t end, uint64_t *seconds)
{
  if (end - payload < 12 || box[payload] > 1 || (box[payload] == 1 && end - payload < 20))
    return false;
  *seconds = box[payload] == 1 ? be64(box + payload + 4) : lhio_be32(box + payload + 4);
  return true;
}

/* Writes seconds as the box's creation time where it fits the box's
 * version (a version-0 box ends in 2040). */
static void set_creation_time(uint8_t *box, size_t payload, size_t end, uint64_t seconds)
{
  uint64_t old;
  if (!creation_time_of(box, payload, end, &old))
    return;
  if (box[payload] == 1) {
    lhio_put_be32(box + payload + 4, (uint32_t)(seconds >> 32));
    lhio_put_be32(box + payload + 8, (uint32_t)seconds);
  } else if (seconds <= UINT32_MAX) {
    lhio_put_be32(box + payload + 4, (uint32_t)seconds);
  }
}

/* The movie's creation time in a moov read whole; false if it has none. */
static bool movie_creation_time(const LhioMp4Moov *moov, uint64_t *seconds)
{
  size_t mvhd, mvhd_end;
  return moov->data &&
         lhio_mp4_child(moov->data, moov->children, moov->size, "mvhd", &mvhd, &mvhd_end) &&
         creation_time_of(moov->data, mvhd, mvhd_end, seconds);
}

/* Gives the movie, every track and every track's media seconds. */
static void stamp(LhioMp4Moov *moov, uint64_t seconds)
{
  uint8_t *data = moov->data;
  size_t payload, end;
  if (lhio_mp4_child(data, moov->children, moov->size, "mvhd", &payload, &end))
    set_creation_time(data, payload, end, seconds);
  const uint8_t *type;
  size_t trak, size;
  for (size_t at = moov->children; lhio_mp4_box_at(data, at, moov->size, &type, &trak, &size);
       at += size) {
    if (memcmp(type, "trak", 4) != 0)
      continue;
    const size_t trak_end = at + size;
    size_t mdia, mdia_end;
    if (lhio_mp4_child(data, trak, trak_end, "tkhd", &payload, &end))
      set_creation_time(data, payload, end, seconds);
    if (lhio_mp4_child(data, trak, trak_end, "mdia", &mdia, &mdia_end) &&
        lhio_mp4_child(data, mdia, mdia_end, "mdhd", &payload, &end))
      set_creation_time(data, payload, end, seconds);
  }
}

int lhio_mp4_keep_creation_time(const char *input, const char *output)
{
  int fd = open(input, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return lhio_fail_os(errno, input);
  LhioMp4Moov moov;
  int status = lhio_mp4_read_moov(fd, input, &moov);
  uint64_t seconds;
  const bool known = status == LH_OK && movie_creation_time(&moov, &seconds);
  lhio_mp4_moov_clear(&moov);
  close(fd);
  if (!known)
    return status;

  fd = open(output, O_RDWR | O_CLOEXEC);
  if (fd < 0)
    return lhio_fail_os(errno, output);
  status = lhio_mp4_read_moov(fd, output, &moov);
  if (status == LH_OK && moov.data) {
    stamp(&moov, seconds);
    status = lhio_mp4_write_moov(fd, output, &moov, moov.data, moov.size);
  }
  lhio_mp4_moov_clear(&moov);
  if (close(fd) != 0 && status == LH_OK)
    status = lhio_fail_os(errno, output);
  return status;
}
