/* lhio-gst.h: what the GStreamer sources of lhio share (video.c,
 * video-rewrite.c): starting GStreamer once, and the colorimetry rules. */
#ifndef LHIO_GST_H
#define LHIO_GST_H

#include <gst/video/video.h>

#include "lumahist.h"

/* GStreamer is started once per process; NULL or why it could not be. */
const char *lhio_gstreamer_started(void);

/* The matrix and range of a stream's colorimetry, as the element reads them
 * (plugin/gstlumahist.c): a stated range wins even when the matrix is not. */
LhMatrix lhio_matrix_from_colorimetry(const GstVideoInfo *info);
LhRange lhio_range_from_colorimetry(const GstVideoInfo *info);

#endif /* LHIO_GST_H */
