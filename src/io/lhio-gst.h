/* lhio-gst.h: what the GStreamer sources of lhio share (video.c,
 * video-rewrite.c): starting GStreamer once, and the colorimetry rules (gst-colorimetry.h). */
#ifndef LHIO_GST_H
#define LHIO_GST_H

#include <gst/video/video.h>

#include "gst-colorimetry.h"
#include "lumahist.h"

/* GStreamer is started once per process; NULL or why it could not be. */
const char *lhio_gstreamer_started(void);

/* Whether what was read of a video file, its frames or its streams (what)
 * ending at end_time (seconds; the last frame frame_time long), stops short
 * of the file's duration (seconds, NAN unknown; for an AVI, avi, the frame
 * count its header states, when the file is cut): demuxers end a cut file
 * as if it were whole.  The message ("the file is truncated: its frames
 * end at ...") to why. */
bool lhio_video_ends_short(const char *path, bool avi, double duration, const char *what,
                           double end_time, double frame_time, char *why, size_t why_size);

#endif /* LHIO_GST_H */
