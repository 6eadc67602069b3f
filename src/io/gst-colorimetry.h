/* gst-colorimetry.h: the matrix and range of a GStreamer stream's
 * colorimetry, as the element and the tool's video sources read them (a
 * stated range wins even when the matrix is not known). */
#ifndef LHIO_GST_COLORIMETRY_H
#define LHIO_GST_COLORIMETRY_H

#include <gst/video/video.h>

#include "lumahist.h"

LhMatrix lhio_colorimetry_matrix(const GstVideoInfo *info);
LhRange lhio_colorimetry_range(const GstVideoInfo *info);

#endif /* LHIO_GST_COLORIMETRY_H */
