/* lumahist-check.c: test frames and the library reference shared by the
 * element tests (see lumahist-check.h). */
#include <string.h>

#include "lumahist-check.h"

const LhcFormat lhc_formats[] = {
    {"GRAY8", LH_FORMAT_GRAY8, 8},
    {"GRAY16_LE", LH_FORMAT_GRAY16, 16},
    {"RGB", LH_FORMAT_RGB, 8},
    {"BGR", LH_FORMAT_BGR, 8},
    {"RGBA", LH_FORMAT_RGBA, 8},
    {"BGRA", LH_FORMAT_BGRA, 8},
    {"RGBx", LH_FORMAT_RGBX, 8},
    {"BGRx", LH_FORMAT_BGRX, 8},
    {"RGBA64_LE", LH_FORMAT_RGBA16, 16},
    {"I420", LH_FORMAT_I420, 8},
    {"NV12", LH_FORMAT_NV12, 8},
    {"P010_10LE", LH_FORMAT_P010, 10},
    /* the YUV of cameras, capture cards and decoders */
    {"YV12", LH_FORMAT_YV12, 8},
    {"NV21", LH_FORMAT_NV21, 8},
    {"Y42B", LH_FORMAT_Y42B, 8},
    {"Y444", LH_FORMAT_Y444, 8},
    {"NV16", LH_FORMAT_NV16, 8},
    {"NV24", LH_FORMAT_NV24, 8},
    {"Y41B", LH_FORMAT_Y41B, 8},
    {"YUY2", LH_FORMAT_YUY2, 8},
    {"YVYU", LH_FORMAT_YVYU, 8},
    {"UYVY", LH_FORMAT_UYVY, 8},
    {"VYUY", LH_FORMAT_VYUY, 8},
    {"v210", LH_FORMAT_V210, 10},
    {"GRAY16_BE", LH_FORMAT_GRAY16_BE, 16},
    {"I420_10LE", LH_FORMAT_I420_10LE, 10},
    {"I420_12LE", LH_FORMAT_I420_12LE, 12},
    {"I422_10LE", LH_FORMAT_I422_10LE, 10},
    {"I422_12LE", LH_FORMAT_I422_12LE, 12},
    {"Y444_10LE", LH_FORMAT_Y444_10LE, 10},
    {"Y444_12LE", LH_FORMAT_Y444_12LE, 12},
    {"Y444_16LE", LH_FORMAT_Y444_16LE, 16},
    {"P012_LE", LH_FORMAT_P012, 12},
    {"P016_LE", LH_FORMAT_P016, 16},
    /* R'G'B' 10 and 16 bits */
    {"RGB10A2_LE", LH_FORMAT_RGB10A2_LE, 10},
    {"BGR10A2_LE", LH_FORMAT_BGR10A2_LE, 10},
    {"r210", LH_FORMAT_R210, 10},
    {"BGRA64_LE", LH_FORMAT_BGRA16, 16},
};
const guint lhc_n_formats = G_N_ELEMENTS(lhc_formats);

const LhcFormat *lhc_format(GstVideoFormat format)
{
  for (guint i = 0; i < lhc_n_formats; i++)
    if (gst_video_format_from_string(lhc_formats[i].name) == format)
      return &lhc_formats[i];
  fail("format %s is not one of the library's", gst_video_format_to_string(format));
  return NULL;
}

GstVideoInfo lhc_info_from_string(const gchar *caps_string)
{
  GstVideoInfo info;
  GstCaps *caps = gst_caps_from_string(caps_string);

  fail_unless(caps != NULL, "bad caps %s", caps_string);
  fail_unless(gst_video_info_from_caps(&info, caps), "bad video caps %s", caps_string);
  gst_caps_unref(caps);
  return info;
}

GstBuffer *lhc_random_frame(const GstVideoInfo *info, guint32 seed, GstClockTime pts)
{
  GstBuffer *buffer = gst_buffer_new_allocate(NULL, GST_VIDEO_INFO_SIZE(info), NULL);
  GstMapInfo map;
  guint32 x = seed ? seed : 1;

  fail_unless(gst_buffer_map(buffer, &map, GST_MAP_WRITE));
  for (gsize i = 0; i < map.size; i++) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    map.data[i] = (guint8)(x >> 24);
  }
  gst_buffer_unmap(buffer, &map);
  GST_BUFFER_PTS(buffer) = pts;
  GST_BUFFER_DURATION(buffer) = 40 * GST_MSECOND;
  return buffer;
}

GstBuffer *lhc_low_contrast_frame(const GstVideoInfo *info, guint32 seed, GstClockTime pts)
{
  GstBuffer *buffer = lhc_random_frame(info, seed, pts);
  GstMapInfo map;

  fail_unless(gst_buffer_map(buffer, &map, GST_MAP_WRITE));
  for (gsize i = 0; i < map.size; i++)
    map.data[i] = (guint8)(96 + map.data[i] % 64);
  gst_buffer_unmap(buffer, &map);
  return buffer;
}

LhFrame lhc_frame_of(GstVideoFrame *vframe)
{
  LhFrame frame;

  memset(&frame, 0, sizeof frame);
  frame.format = lhc_format(GST_VIDEO_FRAME_FORMAT(vframe))->lh;
  frame.memory = LH_MEMORY_HOST;
  frame.width = GST_VIDEO_FRAME_WIDTH(vframe);
  frame.height = GST_VIDEO_FRAME_HEIGHT(vframe);
  for (guint i = 0; i < GST_VIDEO_FRAME_N_PLANES(vframe) && i < 3; i++) {
    frame.planes[i] = GST_VIDEO_FRAME_PLANE_DATA(vframe, i);
    frame.strides[i] = (size_t)GST_VIDEO_FRAME_PLANE_STRIDE(vframe, i);
  }
  return frame;
}

void lhc_library_stats(GstBuffer *buffer, const GstVideoInfo *info, LhMatrix matrix, LhRange range,
                       const gchar *percentiles, LhStats *stats)
{
  GstVideoFrame vframe;
  LhFrame frame;
  LhOptions options;
  LhContext *context = NULL;

  fail_unless(gst_video_frame_map(&vframe, info, buffer, GST_MAP_READ));
  frame = lhc_frame_of(&vframe);
  lh_options_init(&options);
  options.matrix = matrix;
  options.range = range;
  fail_unless_equals_int(lh_options_set_percentiles(&options, percentiles), LH_OK);
  fail_unless_equals_int(lh_context_new(LH_BACKEND_CPU, &context), LH_OK);
  lh_stats_init(stats);
  fail_unless_equals_int(lh_analyze(context, &frame, &options, stats), LH_OK);
  lh_context_free(context);
  gst_video_frame_unmap(&vframe);
}

GstBuffer *lhc_library_output(GstBuffer *in, const GstVideoInfo *info,
                              const LhEqualizeOptions *equalize, const LhOverlayOptions *overlay,
                              const LhStats *stats)
{
  GstBuffer *out = gst_buffer_copy_deep(in);
  GstVideoFrame vframe;
  LhFrame frame;
  LhContext *context = NULL;

  fail_unless(gst_video_frame_map(&vframe, info, out, GST_MAP_READWRITE));
  frame = lhc_frame_of(&vframe);
  fail_unless_equals_int(lh_context_new(LH_BACKEND_CPU, &context), LH_OK);
  if (equalize)
    fail_unless_equals_int(lh_equalize(context, &frame, &frame, equalize), LH_OK);
  if (overlay)
    fail_unless_equals_int(lh_overlay(context, &frame, stats, overlay), LH_OK);
  lh_context_free(context);
  gst_video_frame_unmap(&vframe);
  return out;
}

gboolean lhc_same_pixels(GstBuffer *a, const GstVideoInfo *a_info, GstBuffer *b,
                         const GstVideoInfo *b_info)
{
  GstVideoFrame fa, fb;
  gboolean same = TRUE;

  fail_unless(gst_video_frame_map(&fa, a_info, a, GST_MAP_READ));
  fail_unless(gst_video_frame_map(&fb, b_info, b, GST_MAP_READ));
  for (guint p = 0; p < GST_VIDEO_FRAME_N_PLANES(&fa) && same; p++) {
    guint c = 0;
    gsize row_bytes;

    /* The first component of the plane spans its whole pixel (packed RGB,
     * interleaved UV) or is its only one. */
    while (GST_VIDEO_FORMAT_INFO_PLANE(fa.info.finfo, c) != p)
      c++;
    row_bytes = (gsize)GST_VIDEO_FRAME_COMP_WIDTH(&fa, c) * GST_VIDEO_FRAME_COMP_PSTRIDE(&fa, c);
    /* v210 has no pixel stride: its whole groups of 6 pixels in 16 bytes */
    if (GST_VIDEO_FRAME_FORMAT(&fa) == GST_VIDEO_FORMAT_v210)
      row_bytes = ((gsize)GST_VIDEO_FRAME_WIDTH(&fa) + 5) / 6 * 16;
    /* packed 4:2:2 of an odd width: the last pair whole */
    else if (GST_VIDEO_FORMAT_INFO_IS_YUV(fa.info.finfo) && GST_VIDEO_FRAME_N_PLANES(&fa) == 1)
      row_bytes = ((gsize)GST_VIDEO_FRAME_WIDTH(&fa) + 1) / 2 * 4;
    for (gint y = 0; y < GST_VIDEO_FRAME_COMP_HEIGHT(&fa, c) && same; y++) {
      const guint8 *ra = (const guint8 *)GST_VIDEO_FRAME_PLANE_DATA(&fa, p) +
                         (gsize)y * GST_VIDEO_FRAME_PLANE_STRIDE(&fa, p);
      const guint8 *rb = (const guint8 *)GST_VIDEO_FRAME_PLANE_DATA(&fb, p) +
                         (gsize)y * GST_VIDEO_FRAME_PLANE_STRIDE(&fb, p);
      same = memcmp(ra, rb, row_bytes) == 0;
      if (!same)
        GST_INFO("plane %u row %d differs", p, y);
    }
  }
  gst_video_frame_unmap(&fb);
  gst_video_frame_unmap(&fa);
  return same;
}

void lhc_check_temporal_window(GstHarness *h, const gchar *caps_string, guint32 seed)
{
  GstVideoInfo info = lhc_info_from_string(caps_string);
  LhTemporal *temporal = NULL;
  LhEqualizeOptions equalize;
  GstSegment segment;
  gboolean smoothing_seen = FALSE;

  fail_unless_equals_int(lh_temporal_new(3, 1.0, &temporal), LH_OK);
  lh_equalize_options_init(&equalize);
  equalize.matrix = LH_MATRIX_BT601;
  equalize.range = LH_RANGE_FULL;
  gst_harness_set_src_caps_str(h, caps_string);
  for (guint i = 0; i < 7; i++) {
    GstBuffer *in, *out, *expected, *alone;

    if (i == 5) {
      /* A flush: the element's window restarts, as the reference's does. */
      fail_unless(gst_harness_push_event(h, gst_event_new_flush_start()));
      fail_unless(gst_harness_push_event(h, gst_event_new_flush_stop(TRUE)));
      gst_segment_init(&segment, GST_FORMAT_TIME);
      fail_unless(gst_harness_push_event(h, gst_event_new_segment(&segment)));
      lh_temporal_reset(temporal);
    }
    in = i % 2 ? lhc_low_contrast_frame(&info, seed + i, i * 40 * GST_MSECOND)
               : lhc_random_frame(&info, seed + i, i * 40 * GST_MSECOND);
    equalize.temporal = temporal;
    expected = lhc_library_output(in, &info, &equalize, NULL, NULL);
    equalize.temporal = NULL;
    alone = lhc_library_output(in, &info, &equalize, NULL, NULL);
    smoothing_seen |= !lhc_same_pixels(expected, &info, alone, &info);
    if (i == 0 || i == 5)
      fail_unless(lhc_same_pixels(expected, &info, alone, &info),
                  "frame %u: a new window starts with it", i);

    fail_unless_equals_int(gst_harness_push(h, in), GST_FLOW_OK);
    out = gst_harness_pull(h);
    fail_unless(out != NULL && lhc_same_pixels(out, &info, expected, &info),
                "frame %u differs from the library's with its window%s", i,
                i == 5 ? " (restarted by the flush)" : "");
    gst_buffer_unref(alone);
    gst_buffer_unref(expected);
    gst_buffer_unref(out);
  }
  fail_unless(smoothing_seen, "the window never changed a frame: the test proves nothing");
  lh_temporal_free(temporal);
}

/* A copy of in (laid out as info says) whose planes start `offset` bytes
 * into the buffer and whose strides are `offset` bytes longer, as
 * rawvideoparse's plane-offsets or a demuxer's sub-buffer may give: 16-bit
 * samples at odd addresses, 32-bit words at addresses of 2 mod 4. */
GstBuffer *lhc_misaligned_copy(GstBuffer *in, const GstVideoInfo *info, gsize offset)
{
  GstVideoFrame from;
  gsize offsets[GST_VIDEO_MAX_PLANES] = {0};
  gint strides[GST_VIDEO_MAX_PLANES] = {0};
  guint rows[GST_VIDEO_MAX_PLANES] = {0};
  gsize size = offset;
  GstBuffer *out;
  GstMapInfo map;

  fail_unless(gst_video_frame_map(&from, info, in, GST_MAP_READ));
  for (guint p = 0; p < GST_VIDEO_FRAME_N_PLANES(&from); p++) {
    /* The rows of a plane are those of its components (v210 has one
     * plane and components that all say its height). */
    for (guint c = 0; c < GST_VIDEO_INFO_N_COMPONENTS(info); c++)
      if (GST_VIDEO_FORMAT_INFO_PLANE(info->finfo, c) == p)
        rows[p] = MAX(rows[p], (guint)GST_VIDEO_INFO_COMP_HEIGHT(info, c));
    offsets[p] = size;
    strides[p] = GST_VIDEO_FRAME_PLANE_STRIDE(&from, p) + (gint)offset;
    size += (gsize)strides[p] * rows[p] + offset;
  }
  out = gst_buffer_new_allocate(NULL, size, NULL);
  fail_unless(gst_buffer_map(out, &map, GST_MAP_WRITE));
  memset(map.data, 0xa5, size);
  for (guint p = 0; p < GST_VIDEO_FRAME_N_PLANES(&from); p++)
    for (guint y = 0; y < rows[p]; y++)
      memcpy(map.data + offsets[p] + (gsize)y * (gsize)strides[p],
             (const guint8 *)GST_VIDEO_FRAME_PLANE_DATA(&from, p) +
                 (gsize)y * (gsize)GST_VIDEO_FRAME_PLANE_STRIDE(&from, p),
             (gsize)GST_VIDEO_FRAME_PLANE_STRIDE(&from, p));
  gst_buffer_unmap(out, &map);
  gst_video_frame_unmap(&from);
  gst_buffer_add_video_meta_full(out, GST_VIDEO_FRAME_FLAG_NONE, GST_VIDEO_INFO_FORMAT(info),
                                 (guint)GST_VIDEO_INFO_WIDTH(info),
                                 (guint)GST_VIDEO_INFO_HEIGHT(info), GST_VIDEO_INFO_N_PLANES(info),
                                 offsets, strides);
  GST_BUFFER_PTS(out) = GST_BUFFER_PTS(in);
  GST_BUFFER_DURATION(out) = GST_BUFFER_DURATION(in);
  return out;
}
