/* mp4-tracks.c: how many tracks of a kind an MP4 or QuickTime file holds,
 * for the tracks GStreamer 1.22's qtdemux does not give out, so that a
 * file rewritten without them says so rather than leaving it unnoticed:
 * a timecode track (tmcd: the SMPTE time of its first frame, as cameras
 * and editing software write it), which it never exposes, and a sound
 * track shorter than a fifth of the file, which it skips ("assuming
 * preview image or something": 0.1 s of AAC beside 2 s of video). */

#include "lhio-private.h"

int lhio_mp4_tracks_of(const char *path, const char *handler)
{
  LhioMp4Moov moov;
  int tracks = 0;
  if (lhio_mp4_file_moov(path, &moov)) {
    size_t trak, trak_end = moov.children, mdia, mdia_end;
    while (lhio_mp4_trak_of(moov.data, moov.size, trak_end, handler, &trak, &trak_end, &mdia,
                            &mdia_end))
      tracks++;
  }
  lhio_mp4_moov_clear(&moov);
  return tracks;
}
