/* gst-colorimetry.c: the matrix and range a GStreamer stream's colorimetry
 * implies, one rule for the element (plugin/gstlumahist.c) and the tool's
 * video sources (video.c, video-rewrite.c), both of which compile it. */
#include "gst-colorimetry.h"

/* The luma weights that the caps imply.  RGB caps carry matrix "rgb", so their
 * primaries decide; with neither known, GStreamer's own default for the frame
 * height (as gst_video_info_from_caps() applies it to YUV) decides. */
LhMatrix lhio_colorimetry_matrix(const GstVideoInfo *info)
{
  switch (info->colorimetry.matrix) {
  case GST_VIDEO_COLOR_MATRIX_BT601:
  case GST_VIDEO_COLOR_MATRIX_FCC: /* Kr 0.30, Kb 0.11: nearest is BT.601 */
    return LH_MATRIX_BT601;
  case GST_VIDEO_COLOR_MATRIX_BT709:
  case GST_VIDEO_COLOR_MATRIX_SMPTE240M: /* Kr 0.212, Kb 0.087: nearest is BT.709 */
    return LH_MATRIX_BT709;
  case GST_VIDEO_COLOR_MATRIX_BT2020:
    return LH_MATRIX_BT2020;
  default:
    break;
  }
  switch (info->colorimetry.primaries) {
  case GST_VIDEO_COLOR_PRIMARIES_BT709:
    return LH_MATRIX_BT709;
  case GST_VIDEO_COLOR_PRIMARIES_BT2020:
    return LH_MATRIX_BT2020;
  case GST_VIDEO_COLOR_PRIMARIES_BT470M:
  case GST_VIDEO_COLOR_PRIMARIES_BT470BG:
  case GST_VIDEO_COLOR_PRIMARIES_SMPTE170M:
    return LH_MATRIX_BT601;
  default:
    break;
  }
  if (GST_VIDEO_INFO_HEIGHT(info) >= 2160)
    return LH_MATRIX_BT2020;
  return GST_VIDEO_INFO_HEIGHT(info) > 576 ? LH_MATRIX_BT709 : LH_MATRIX_BT601;
}

bool lhio_caps_state_full_range(const GstCaps *caps)
{
  /* gst_video_info_from_caps() replaces a YUV colorimetry whose matrix is
   * unknown ("1:0:0:0", a full-range H.264 stream without matrix) by the
   * default for the size, range included: the caps' own range wins. */
  const char *colorimetry =
      gst_structure_get_string(gst_caps_get_structure(caps, 0), "colorimetry");
  GstVideoColorimetry stated;
  return colorimetry && gst_video_colorimetry_from_string(&stated, colorimetry) &&
         stated.range == GST_VIDEO_COLOR_RANGE_0_255;
}

LhRange lhio_colorimetry_range(const GstVideoInfo *info)
{
  switch (info->colorimetry.range) {
  case GST_VIDEO_COLOR_RANGE_0_255:
    return LH_RANGE_FULL;
  case GST_VIDEO_COLOR_RANGE_16_235:
    return LH_RANGE_LIMITED;
  default:
    return GST_VIDEO_INFO_IS_YUV(info) ? LH_RANGE_LIMITED : LH_RANGE_FULL;
  }
}
