/* gst-colorimetry.h: the matrix and range of a GStreamer stream's
 * colorimetry, as the element and the tool's video sources read them (a
 * stated range wins even when the matrix is not known). */
#ifndef LHIO_GST_COLORIMETRY_H
#define LHIO_GST_COLORIMETRY_H

#include <stdbool.h>

#include <gst/video/video.h>

#include "lumahist.h"

LhMatrix lhio_colorimetry_matrix(const GstVideoInfo *info);
LhRange lhio_colorimetry_range(const GstVideoInfo *info);
/* Whether caps state full range, whatever gst_video_info_from_caps() makes
 * of them (it takes a YUV stream of no stated matrix for limited range). */
bool lhio_caps_state_full_range(const GstCaps *caps);

#endif /* LHIO_GST_COLORIMETRY_H */
