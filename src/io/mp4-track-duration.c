/* mp4-track-duration.c: how long the video track of an MP4 or QuickTime file
 * says it lasts.  The container's duration, which qtdemux reports, is its
 * longest track's: a whole clip whose audio runs on after its video would
 * look cut against it when only the video is decoded (lumahist stats). */
#include <math.h>
#include <string.h>

#include "lhio-private.h"

/* The media header (mdhd) of moov's first video track: its duration in
 * seconds, NAN when there is none or it states none (a fragmented file). */
static double video_duration_in_moov(const uint8_t *moov, size_t size, size_t first)
{
  size_t trak, trak_end, mdia, mdia_end, mdhd, mdhd_end;
  if (lhio_mp4_video_trak(moov, size, first, &trak, &trak_end, &mdia, &mdia_end)) {
    /* An empty mdhd has no version to tell its layout by. */
    if (!lhio_mp4_child(moov, mdia, mdia_end, "mdhd", &mdhd, &mdhd_end) || mdhd == mdhd_end)
      return NAN;
    /* Version and flags, then the two times (4 or 8 bytes each), the
     * timescale (4) and the duration (4 or 8). */
    const bool wide = moov[mdhd] == 1;
    const size_t timescale_at = mdhd + 4 + (wide ? 16 : 8);
    if (mdhd_end - mdhd < (timescale_at - mdhd) + 4 + (wide ? 8 : 4))
      return NAN;
    const uint32_t timescale = lhio_be32(moov + timescale_at);
    uint64_t duration = lhio_be32(moov + timescale_at + 4);
    if (wide)
      duration = duration << 32 | lhio_be32(moov + timescale_at + 8);
    if (timescale == 0 || duration == 0 || duration == UINT64_MAX ||
        (!wide && duration == UINT32_MAX))
      return NAN;
    return (double)duration / timescale;
  }
  return NAN;
}

double lhio_mp4_video_duration(const char *path)
{
  LhioMp4Moov moov;
  double duration = NAN;
  if (lhio_mp4_file_moov(path, &moov))
    duration = video_duration_in_moov(moov.data, moov.size, moov.children);
  lhio_mp4_moov_clear(&moov);
  return duration;
}
