/* lhio-gst.h: what the GStreamer sources of lhio share (video.c,
 * video-rewrite.c): starting GStreamer once, and the colorimetry rules (gst-colorimetry.h). */
#ifndef LHIO_GST_H
#define LHIO_GST_H

#include <gst/video/video.h>

#include "gst-colorimetry.h"
#include "lumahist.h"

/* GStreamer is started once per process; NULL or why it could not be. */
const char *lhio_gstreamer_started(void);

/* Settings of a video decoder made for a file, before its first frame
 * (gst-decoder-setup.c): jpegdec's exact IDCT, avdec_ffv1 kept from a
 * crash of gst-libav 1.22; with full_range (the file states it where its
 * demuxer drops it: lhio_mp4_states_full_range), its input caps' range is
 * made full, so that its frames are read, changed and written back so. */
void lhio_gst_set_up_decoder(GstElement *decoder, bool full_range);

/* The caps that pass through pad made full range: a decoder's input caps
 * (above), or y4mdec's output where the file's header tags its samples
 * full (lhio_y4m_states_full_range), which y4mdec does not read. */
void lhio_gst_make_range_full(GstPad *pad);

/* y4menc's header tagged XCOLORRANGE=FULL, as FFmpeg writes and reads it,
 * where the frames it takes are full range (gst-y4m-range.c). */
void lhio_gst_tag_y4m_range(GstElement *y4menc);

/* Whether a buffer into a video decoder is a frame it is to give out: not
 * a header with no time, and inside the segment it was last given (a
 * frame outside is decoded and dropped). */
bool lhio_gst_decoder_frame_in(GstBuffer *buffer, const GstSegment *segment);

/* When an error whose debug text is debug is the decoder's output that no
 * GStreamer format names (FFV1's yuva444p: "not-negotiated" upstream, the
 * decoder's output never set), the line to say (g_free), else NULL. */
char *lhio_gst_unnegotiated_decoder(GstElement *decoder, const char *debug);

/* When caps are a video stream its demuxer could not name, known only by
 * the container's name for its codec (matroskademux's video/x-unknown with
 * the CodecID, avidemux's video/x-avi-unknown with the fourcc, qtdemux's
 * video/x-gst-fourcc-XXXX), the line to say (g_free; gst-unknown-codec.c):
 * "GStreamer 1.22 has no decoder for its video: a codec it does not know
 * (AVI fourcc ULY0)"; else NULL. */
char *lhio_gst_unknown_codec(const GstCaps *caps);

/* Whether what was read of a video file, its frames or its streams (what)
 * ending at end_time (seconds; the last frame frame_time long), stops short
 * of the file's duration (seconds, NAN unknown; for an AVI, avi, the frame
 * count its header states, when the file is cut): demuxers end a cut file
 * as if it were whole.  The message ("the file is truncated: its frames
 * end at ...") to why. */
bool lhio_video_ends_short(const char *path, bool avi, double duration, const char *what,
                           double end_time, double frame_time, char *why, size_t why_size);

#endif /* LHIO_GST_H */
