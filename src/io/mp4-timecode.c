/* mp4-timecode.c: whether an MP4 or QuickTime file has a timecode track
 * (tmcd: the SMPTE time of its first frame, as cameras and editing
 * software write it).  GStreamer 1.22's qtdemux exposes no such track, so
 * a file rewritten from one comes out without it, and that is said rather
 * than left unnoticed. */

#include "lhio-private.h"

bool lhio_mp4_has_timecode(const char *path)
{
  LhioMp4Moov moov;
  bool found = false;
  if (lhio_mp4_file_moov(path, &moov)) {
    size_t trak, trak_end, mdia, mdia_end;
    found = lhio_mp4_trak_of(moov.data, moov.size, moov.children, "tmcd", &trak, &trak_end, &mdia,
                             &mdia_end);
  }
  lhio_mp4_moov_clear(&moov);
  return found;
}
