/* lhio-gst.h: what the GStreamer sources of lhio share (video.c,
 * video-rewrite.c): starting GStreamer once, and the colorimetry rules (gst-colorimetry.h). */
#ifndef LHIO_GST_H
#define LHIO_GST_H

#include <gst/video/video.h>

#include "gst-colorimetry.h"
#include "lumahist.h"

/* GStreamer is started once per process; NULL or why it could not be. */
const char *lhio_gstreamer_started(void);

#endif /* LHIO_GST_H */
