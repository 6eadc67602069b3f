/* lumahist-check.h: what the element tests share: test frames, the library's
 * formats, and the library run directly (on the CPU) as the reference. */
#ifndef LUMAHIST_CHECK_H
#define LUMAHIST_CHECK_H

#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>
#include <gst/video/video.h>

#include <lumahist.h>

/* A format the element takes, what the library calls it and the bit depth of
 * its luma (DESIGN.md). */
typedef struct {
  const gchar *name;
  LhFormat lh;
  gint depth;
} LhcFormat;

extern const LhcFormat lhc_formats[];
extern const guint lhc_n_formats;

/* The entry of a GStreamer format in lhc_formats (fails the test if none). */
const LhcFormat *lhc_format(GstVideoFormat format);

GstVideoInfo lhc_info_from_string(const gchar *caps_string);

/* A frame of seeded pseudo-random bytes (xorshift32), 40 ms long, at pts. */
GstBuffer *lhc_random_frame(const GstVideoInfo *info, guint32 seed, GstClockTime pts);

/* The same with every byte in 96 .. 159: a low-contrast picture that
 * equalization visibly stretches (16-bit samples too stay in a narrow band). */
GstBuffer *lhc_low_contrast_frame(const GstVideoInfo *info, guint32 seed, GstClockTime pts);

/* The library's view of a frame mapped for the host. */
LhFrame lhc_frame_of(GstVideoFrame *vframe);

/* The library's statistics of a frame. */
void lhc_library_stats(GstBuffer *buffer, const GstVideoInfo *info, LhMatrix matrix, LhRange range,
                       const gchar *percentiles, LhStats *stats);

/* A copy of a frame equalized (equalize != NULL) and with the histogram of
 * stats drawn (overlay != NULL) by the library: what the element must output. */
GstBuffer *lhc_library_output(GstBuffer *in, const GstVideoInfo *info,
                              const LhEqualizeOptions *equalize, const LhOverlayOptions *overlay,
                              const LhStats *stats);

/* A copy of in (laid out as info says) whose planes start `offset` bytes
 * into the buffer and whose strides are `offset` bytes longer (a video meta
 * says where), as rawvideoparse's plane-offsets or a demuxer's sub-buffer
 * may give: 16-bit samples at odd addresses, 32-bit words at 2 mod 4. */
GstBuffer *lhc_misaligned_copy(GstBuffer *in, const GstVideoInfo *info, gsize offset);

/* Equal visible bytes of two frames, whose strides may differ. */
gboolean lhc_same_pixels(GstBuffer *a, const GstVideoInfo *a_info, GstBuffer *b,
                         const GstVideoInfo *b_info);

/* Seven frames of caps_string (seeded random and low-contrast ones) through
 * h, an equalizing element with temporal-window=3 and cut-threshold=1.0,
 * and a flush before the sixth: each output equals the library's (on the
 * CPU) with a window of its own, restarted at the flush. */
void lhc_check_temporal_window(GstHarness *h, const gchar *caps_string, guint32 seed);

#endif /* LUMAHIST_CHECK_H */
