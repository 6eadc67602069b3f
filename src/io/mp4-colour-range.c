/* mp4-colour-range.c: whether an MP4 or QuickTime file's video states full
 * range in its sample entry's colr box ("nclx": the colour primaries,
 * transfer and matrix code points of ISO/IEC 23091-2, then a byte whose
 * top bit is the full-range flag).  GStreamer 1.22's qtdemux reads the code
 * points and drops the flag, and its caps' colorimetry (bt601, bt709, ...)
 * then says limited: a phone's full-range clip, which states all three
 * code points, was measured and equalized as limited range, and written
 * back tagged so.  The decoders' input caps are corrected with this
 * (gst-decoder-setup.c). */
#include <string.h>

#include "lhio-private.h"

/* The bytes of a visual sample entry before its child boxes (ISO/IEC
 * 14496-12: reserved and data reference index, 16 bytes of pre-defined
 * and reserved fields, width and height, resolutions, frame count,
 * compressor name, depth, pre-defined). */
#define VISUAL_SAMPLE_ENTRY_FIELDS 78

static bool full_range_in_moov(const uint8_t *moov, size_t size, size_t first)
{
  size_t trak, trak_end, mdia, mdia_end, minf, minf_end, stbl, stbl_end, stsd, stsd_end;
  if (!lhio_mp4_video_trak(moov, size, first, &trak, &trak_end, &mdia, &mdia_end) ||
      !lhio_mp4_child(moov, mdia, mdia_end, "minf", &minf, &minf_end) ||
      !lhio_mp4_child(moov, minf, minf_end, "stbl", &stbl, &stbl_end) ||
      !lhio_mp4_child(moov, stbl, stbl_end, "stsd", &stsd, &stsd_end))
    return false;
  /* Version and flags, the entry count, then the first entry. */
  const uint8_t *type;
  size_t entry, entry_size;
  if (stsd_end - stsd < 8 || !lhio_mp4_box_at(moov, stsd + 8, stsd_end, &type, &entry, &entry_size))
    return false;
  const size_t entry_end = stsd + 8 + entry_size;
  size_t colr, colr_end;
  if (entry_end - entry < VISUAL_SAMPLE_ENTRY_FIELDS ||
      !lhio_mp4_child(moov, entry + VISUAL_SAMPLE_ENTRY_FIELDS, entry_end, "colr", &colr,
                      &colr_end))
    return false;
  /* "nclc" (QuickTime's) has no range flag. */
  return colr_end - colr >= 11 && memcmp(moov + colr, "nclx", 4) == 0 && (moov[colr + 10] & 0x80);
}

bool lhio_mp4_states_full_range(const char *path)
{
  LhioMp4Moov moov;
  bool full =
      lhio_mp4_file_moov(path, &moov) && full_range_in_moov(moov.data, moov.size, moov.children);
  lhio_mp4_moov_clear(&moov);
  return full;
}
