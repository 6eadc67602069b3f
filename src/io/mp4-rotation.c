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

/* Writes into moov (in memory) the video track's matrix for quarter_turns
 * (1, 2 or 3 clockwise) where the matrix is still the identity; true if it
 * was written. */
static bool rotate_in_moov(uint8_t *moov, size_t size, int quarter_turns)
{
  const size_t first = lhio_be32(moov) == 1 ? 16 : 8; /* after moov's own header */
  size_t trak, trak_end, mdia, mdia_end, tkhd, tkhd_end;
  if (lhio_mp4_video_trak(moov, size, first, &trak, &trak_end, &mdia, &mdia_end)) {
    /* An empty tkhd has no version to tell its layout by. */
    if (!lhio_mp4_child(moov, trak, trak_end, "tkhd", &tkhd, &tkhd_end) || tkhd == tkhd_end)
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
      lhio_put_be32(moov + matrix + 4 * k, m[k]);
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
    return lhio_fail_os(errno, path);
  LhioMp4Moov moov;
  int status = lhio_mp4_read_moov(fd, path, &moov);
  if (status == LH_OK && moov.data && rotate_in_moov(moov.data, moov.size, quarter_turns))
    status = lhio_mp4_write_moov(fd, path, &moov, moov.data, moov.size);
  lhio_mp4_moov_clear(&moov);
  if (close(fd) != 0 && status == LH_OK)
    status = lhio_fail_os(errno, path);
  return status;
}
