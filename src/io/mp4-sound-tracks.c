/* mp4-sound-tracks.c: how many sound tracks an MP4 or QuickTime file
 * holds.  GStreamer 1.22's qtdemux skips a track shorter than a fifth of
 * the file ("assuming preview image or something"): a clip's 0.1 s of AAC
 * beside 2 s of video never reached the muxer, and the file was written
 * without its audio in silence.  The rewrite counts the audio streams it
 * was given against these, and says what is missing. */

#include "lhio-private.h"

int lhio_mp4_sound_tracks(const char *path)
{
  LhioMp4Moov moov;
  int tracks = 0;
  if (lhio_mp4_file_moov(path, &moov)) {
    size_t trak, trak_end = moov.children, mdia, mdia_end;
    while (lhio_mp4_trak_of(moov.data, moov.size, trak_end, "soun", &trak, &trak_end, &mdia,
                            &mdia_end))
      tracks++;
  }
  lhio_mp4_moov_clear(&moov);
  return tracks;
}
