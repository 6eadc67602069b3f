/* gst-colorimetry.c: the library's format of a GStreamer video format, the
 * matrix and range a stream's colorimetry implies, and the Exif orientation
 * of its image-orientation tag: one rule for the element
 * (plugin/gstlumahist.c) and the tool's video sources (video.c,
 * video-rewrite.c), both of which compile it. */
#include "gst-colorimetry.h"

bool lhio_gst_format(GstVideoFormat video, LhFormat *format)
{
  static const struct {
    GstVideoFormat video;
    LhFormat lh;
  } format_map[] = {
      {GST_VIDEO_FORMAT_GRAY8, LH_FORMAT_GRAY8},
      {GST_VIDEO_FORMAT_GRAY16_LE, LH_FORMAT_GRAY16},
      {GST_VIDEO_FORMAT_RGB, LH_FORMAT_RGB},
      {GST_VIDEO_FORMAT_BGR, LH_FORMAT_BGR},
      {GST_VIDEO_FORMAT_RGBA, LH_FORMAT_RGBA},
      {GST_VIDEO_FORMAT_BGRA, LH_FORMAT_BGRA},
      {GST_VIDEO_FORMAT_RGBx, LH_FORMAT_RGBX},
      {GST_VIDEO_FORMAT_BGRx, LH_FORMAT_BGRX},
      {GST_VIDEO_FORMAT_RGBA64_LE, LH_FORMAT_RGBA16},
      {GST_VIDEO_FORMAT_I420, LH_FORMAT_I420},
      {GST_VIDEO_FORMAT_NV12, LH_FORMAT_NV12},
      {GST_VIDEO_FORMAT_P010_10LE, LH_FORMAT_P010},
      /* the other YUV layouts */
      {GST_VIDEO_FORMAT_YV12, LH_FORMAT_YV12},
      {GST_VIDEO_FORMAT_NV21, LH_FORMAT_NV21},
      {GST_VIDEO_FORMAT_Y42B, LH_FORMAT_Y42B},
      {GST_VIDEO_FORMAT_Y444, LH_FORMAT_Y444},
      {GST_VIDEO_FORMAT_NV16, LH_FORMAT_NV16},
      {GST_VIDEO_FORMAT_NV24, LH_FORMAT_NV24},
      {GST_VIDEO_FORMAT_Y41B, LH_FORMAT_Y41B},
      {GST_VIDEO_FORMAT_YUY2, LH_FORMAT_YUY2},
      {GST_VIDEO_FORMAT_YVYU, LH_FORMAT_YVYU},
      {GST_VIDEO_FORMAT_UYVY, LH_FORMAT_UYVY},
      {GST_VIDEO_FORMAT_VYUY, LH_FORMAT_VYUY},
      {GST_VIDEO_FORMAT_v210, LH_FORMAT_V210},
      {GST_VIDEO_FORMAT_GRAY16_BE, LH_FORMAT_GRAY16_BE},
      {GST_VIDEO_FORMAT_I420_10LE, LH_FORMAT_I420_10LE},
      {GST_VIDEO_FORMAT_I420_12LE, LH_FORMAT_I420_12LE},
      {GST_VIDEO_FORMAT_I422_10LE, LH_FORMAT_I422_10LE},
      {GST_VIDEO_FORMAT_I422_12LE, LH_FORMAT_I422_12LE},
      {GST_VIDEO_FORMAT_Y444_10LE, LH_FORMAT_Y444_10LE},
      {GST_VIDEO_FORMAT_Y444_12LE, LH_FORMAT_Y444_12LE},
      {GST_VIDEO_FORMAT_Y444_16LE, LH_FORMAT_Y444_16LE},
      {GST_VIDEO_FORMAT_P012_LE, LH_FORMAT_P012},
      {GST_VIDEO_FORMAT_P016_LE, LH_FORMAT_P016},
      /* R'G'B' 10 and 16 bits */
      {GST_VIDEO_FORMAT_RGB10A2_LE, LH_FORMAT_RGB10A2_LE},
      {GST_VIDEO_FORMAT_BGR10A2_LE, LH_FORMAT_BGR10A2_LE},
      {GST_VIDEO_FORMAT_r210, LH_FORMAT_R210},
      {GST_VIDEO_FORMAT_BGRA64_LE, LH_FORMAT_BGRA16},
  };
  for (gsize i = 0; i < G_N_ELEMENTS(format_map); i++) {
    if (format_map[i].video == video) {
      *format = format_map[i].lh;
      return true;
    }
  }
  return false;
}

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

LhRange lhio_caps_range(const GstCaps *caps, const GstVideoInfo *info)
{
  /* gst_video_info_from_caps() replaces a YUV colorimetry whose matrix is
   * unknown ("1:0:0:0", a full-range H.264 stream without matrix) by the
   * default for the size, range included: the caps' own range wins. */
  const char *colorimetry =
      gst_structure_get_string(gst_caps_get_structure(caps, 0), "colorimetry");
  GstVideoColorimetry stated;
  if (colorimetry && gst_video_colorimetry_from_string(&stated, colorimetry) &&
      stated.range != GST_VIDEO_COLOR_RANGE_UNKNOWN)
    return stated.range == GST_VIDEO_COLOR_RANGE_0_255 ? LH_RANGE_FULL : LH_RANGE_LIMITED;
  return lhio_colorimetry_range(info);
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

int lhio_gst_exif_orientation(GstVideoOrientationMethod method)
{
  switch (method) {
  case GST_VIDEO_ORIENTATION_HORIZ:
    return 2;
  case GST_VIDEO_ORIENTATION_180:
    return 3;
  case GST_VIDEO_ORIENTATION_VERT:
    return 4;
  case GST_VIDEO_ORIENTATION_UL_LR:
    return 5;
  case GST_VIDEO_ORIENTATION_90R:
    return 6;
  case GST_VIDEO_ORIENTATION_UR_LL:
    return 7;
  case GST_VIDEO_ORIENTATION_90L:
    return 8;
  default:
    return 1;
  }
}
