/* test-lumahist.c: tests of the lumahist element in system memory with GstCheck
 * and GstHarness: negotiation, passthrough, message fields and buffer metas
 * against the library run directly on the same frames, equalize, CLAHE,
 * temporal smoothing and overlay output against the library's, colorimetry,
 * message interval, caps changes, flushes, state changes and the backend. */
#include <string.h>

#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>
#include <gst/video/video.h>

#include <lumahist.h>

#include "gstlumahistmeta.h"
#include "lumahist-check.h"

/* Every field of the message, as documented; no other may appear. */
static const gchar *const message_fields[] = {
    "timestamp",
    "stream-time",
    "running-time",
    "duration",
    "frame",
    "backend",
    "format",
    "width",
    "height",
    "bit-depth",
    "matrix",
    "range",
    "count",
    "mean",
    "stddev",
    "min",
    "max",
    "median",
    "mean-norm",
    "stddev-norm",
    "min-norm",
    "max-norm",
    "median-norm",
    "clipped-low-count",
    "clipped-high-count",
    "below-legal-count",
    "above-legal-count",
    "clipped-low",
    "clipped-high",
    "below-legal",
    "above-legal",
    "percentiles",
    "percentile-values",
    "percentile-norms",
    "histogram",
};

static gboolean same_bytes(GstBuffer *a, GstBuffer *b)
{
  GstMapInfo ma, mb;
  gboolean same;

  fail_unless(gst_buffer_map(a, &ma, GST_MAP_READ));
  fail_unless(gst_buffer_map(b, &mb, GST_MAP_READ));
  same = ma.size == mb.size && memcmp(ma.data, mb.data, ma.size) == 0;
  gst_buffer_unmap(b, &mb);
  gst_buffer_unmap(a, &ma);
  return same;
}

static guint64 get_uint64(const GstStructure *s, const gchar *field)
{
  guint64 value = 0;
  fail_unless(gst_structure_get_uint64(s, field, &value), "no guint64 field %s", field);
  return value;
}

static guint get_uint(const GstStructure *s, const gchar *field)
{
  guint value = 0;
  fail_unless(gst_structure_get_uint(s, field, &value), "no guint field %s", field);
  return value;
}

static gint get_int(const GstStructure *s, const gchar *field)
{
  gint value = 0;
  fail_unless(gst_structure_get_int(s, field, &value), "no gint field %s", field);
  return value;
}

static gdouble get_double(const GstStructure *s, const gchar *field)
{
  gdouble value = 0;
  fail_unless(gst_structure_get_double(s, field, &value), "no gdouble field %s", field);
  return value;
}

static const gchar *get_string(const GstStructure *s, const gchar *field)
{
  const gchar *value = gst_structure_get_string(s, field);
  fail_unless(value != NULL, "no string field %s", field);
  return value;
}

/* The items of an array field, checked to be of one type and count. */
static const GValue *get_array(const GstStructure *s, const gchar *field, GType item_type, guint n)
{
  const GValue *array = gst_structure_get_value(s, field);

  fail_unless(array != NULL && GST_VALUE_HOLDS_ARRAY(array), "no array field %s", field);
  fail_unless_equals_int(gst_value_array_get_size(array), n);
  for (guint i = 0; i < n; i++)
    fail_unless(G_VALUE_TYPE(gst_value_array_get_value(array, i)) == item_type,
                "%s[%u] has type %s", field, i,
                G_VALUE_TYPE_NAME(gst_value_array_get_value(array, i)));
  return array;
}

static gboolean field_is_documented(GQuark field, const GValue *value, gpointer user_data)
{
  const gchar *name = g_quark_to_string(field);
  for (guint i = 0; i < G_N_ELEMENTS(message_fields); i++)
    if (strcmp(message_fields[i], name) == 0)
      return TRUE;
  fail("undocumented message field %s", name);
  return FALSE;
}

/* Checks every statistic of a message against the library's result. */
static void check_message_stats(const GstStructure *s, const LhStats *e, gboolean with_histogram)
{
  const GValue *array;
  guint n = (guint)e->n_percentiles;

  fail_unless(gst_structure_has_name(s, "lumahist"));
  gst_structure_foreach(s, field_is_documented, NULL);
  for (guint i = 0; i < G_N_ELEMENTS(message_fields); i++)
    if (strcmp(message_fields[i], "histogram") != 0 &&
        (n > 0 || !g_str_has_prefix(message_fields[i], "percentile")))
      fail_unless(gst_structure_has_field(s, message_fields[i]), "missing field %s",
                  message_fields[i]);

  fail_unless_equals_int(get_int(s, "bit-depth"), e->bit_depth);
  fail_unless_equals_string(get_string(s, "matrix"), lh_matrix_name(e->matrix));
  fail_unless_equals_string(get_string(s, "range"), lh_range_name(e->range));
  fail_unless_equals_uint64(get_uint64(s, "count"), e->count);
  /* Same library, same bits: the doubles must be equal, not merely close. */
  fail_unless(get_double(s, "mean") == e->mean, "mean %.17g != %.17g", get_double(s, "mean"),
              e->mean);
  fail_unless(get_double(s, "stddev") == e->stddev);
  fail_unless_equals_int(get_uint(s, "min"), e->min);
  fail_unless_equals_int(get_uint(s, "max"), e->max);
  fail_unless_equals_int(get_uint(s, "median"), e->median);
  fail_unless(get_double(s, "mean-norm") == e->mean_norm);
  fail_unless(get_double(s, "stddev-norm") == e->stddev_norm);
  fail_unless(get_double(s, "min-norm") == e->min_norm);
  fail_unless(get_double(s, "max-norm") == e->max_norm);
  fail_unless(get_double(s, "median-norm") == e->median_norm);
  fail_unless_equals_uint64(get_uint64(s, "clipped-low-count"), e->clipped_low_count);
  fail_unless_equals_uint64(get_uint64(s, "clipped-high-count"), e->clipped_high_count);
  fail_unless_equals_uint64(get_uint64(s, "below-legal-count"), e->below_legal_count);
  fail_unless_equals_uint64(get_uint64(s, "above-legal-count"), e->above_legal_count);
  fail_unless(get_double(s, "clipped-low") == e->clipped_low);
  fail_unless(get_double(s, "clipped-high") == e->clipped_high);
  fail_unless(get_double(s, "below-legal") == e->below_legal);
  fail_unless(get_double(s, "above-legal") == e->above_legal);

  if (n == 0) {
    /* An empty array's text form would read "(int)< >": no fields instead. */
    fail_if(gst_structure_has_field(s, "percentiles"));
    fail_if(gst_structure_has_field(s, "percentile-values"));
    fail_if(gst_structure_has_field(s, "percentile-norms"));
  } else {
    array = get_array(s, "percentiles", G_TYPE_DOUBLE, n);
    for (guint i = 0; i < n; i++)
      fail_unless(g_value_get_double(gst_value_array_get_value(array, i)) == e->percentile_p[i]);
    array = get_array(s, "percentile-values", G_TYPE_UINT, n);
    for (guint i = 0; i < n; i++)
      fail_unless_equals_int(g_value_get_uint(gst_value_array_get_value(array, i)),
                             e->percentile_value[i]);
    array = get_array(s, "percentile-norms", G_TYPE_DOUBLE, n);
    for (guint i = 0; i < n; i++)
      fail_unless(g_value_get_double(gst_value_array_get_value(array, i)) == e->percentile_norm[i]);
  }

  if (with_histogram) {
    array = get_array(s, "histogram", G_TYPE_UINT64, (guint)e->n_bins);
    for (guint i = 0; i < e->n_bins; i++)
      fail_unless_equals_uint64(g_value_get_uint64(gst_value_array_get_value(array, i)),
                                e->histogram[i]);
  } else {
    fail_if(gst_structure_has_field(s, "histogram"));
  }
}

/* The next `lumahist` element message on the bus (fails if there is none). */
static GstMessage *pop_lumahist_message(GstBus *bus)
{
  GstMessage *message = gst_bus_pop_filtered(bus, GST_MESSAGE_ELEMENT);

  fail_unless(message != NULL, "no element message");
  fail_unless(gst_structure_has_name(gst_message_get_structure(message), "lumahist"));
  return message;
}

static void assert_no_lumahist_message(GstBus *bus)
{
  GstMessage *message = gst_bus_pop_filtered(bus, GST_MESSAGE_ELEMENT);
  fail_unless(message == NULL, "unexpected message %" GST_PTR_FORMAT, message);
}

/* A harness around a lumahist element with these properties (set before it
 * starts) and a bus for its messages. */
static GstHarness *harness_new(GstBus **bus, const gchar *first_property, ...)
{
  GstElement *element = gst_element_factory_make("lumahist", NULL);
  GstHarness *h;
  va_list args;

  fail_unless(element != NULL, "no lumahist element (GST_PLUGIN_PATH?)");
  if (first_property) {
    va_start(args, first_property);
    g_object_set_valist(G_OBJECT(element), first_property, args);
    va_end(args);
  }
  *bus = gst_bus_new();
  gst_element_set_bus(element, *bus);
  h = gst_harness_new_with_element(element, "sink", "src");
  gst_object_unref(element);
  return h;
}

static void harness_free(GstHarness *h, GstBus *bus)
{
  gst_harness_teardown(h);
  gst_bus_set_flushing(bus, TRUE);
  gst_object_unref(bus);
}

/* ------------------------------------------------------------------------ */

GST_START_TEST(test_negotiation_each_format)
{
  for (guint i = 0; i < lhc_n_formats; i++) {
    gchar *caps_string = g_strdup_printf("video/x-raw,format=%s,width=63,height=17,framerate=25/1",
                                         lhc_formats[i].name);
    GstVideoInfo info = lhc_info_from_string(caps_string);
    GstCaps *caps = gst_caps_from_string(caps_string);
    GstBus *bus;
    GstHarness *h = harness_new(&bus, "backend", 1 /* cpu */, "matrix", 2 /* bt709 */, "range",
                                1 /* full */, "attach-meta", FALSE, NULL);
    GstBuffer *in, *out;
    GstCaps *negotiated;
    GstMessage *message;
    LhStats expected;

    GST_INFO("format %s", lhc_formats[i].name);
    gst_harness_set_src_caps(h, gst_caps_ref(caps));
    in = lhc_random_frame(&info, 1000 + i, 0);
    fail_unless_equals_int(gst_harness_push(h, gst_buffer_ref(in)), GST_FLOW_OK);
    out = gst_harness_pull(h);
    fail_unless(out == in, "%s: not passed through", lhc_formats[i].name);

    negotiated = gst_pad_get_current_caps(h->sinkpad);
    fail_unless(negotiated != NULL && gst_caps_is_equal(negotiated, caps),
                "%s: output caps %" GST_PTR_FORMAT, lhc_formats[i].name, negotiated);

    lhc_library_stats(in, &info, LH_MATRIX_BT709, LH_RANGE_FULL, "1,5,50,95,99", &expected);
    fail_unless_equals_int(expected.bit_depth, lhc_formats[i].depth);
    message = pop_lumahist_message(bus);
    check_message_stats(gst_message_get_structure(message), &expected, TRUE);
    fail_unless_equals_string(get_string(gst_message_get_structure(message), "format"),
                              lhc_formats[i].name);
    fail_unless_equals_int(get_int(gst_message_get_structure(message), "width"), 63);
    fail_unless_equals_int(get_int(gst_message_get_structure(message), "height"), 17);
    fail_unless_equals_string(get_string(gst_message_get_structure(message), "backend"), "cpu");

    lh_stats_clear(&expected);
    gst_message_unref(message);
    gst_caps_unref(negotiated);
    gst_buffer_unref(out);
    gst_buffer_unref(in);
    gst_caps_unref(caps);
    g_free(caps_string);
    harness_free(h, bus);
  }
}
GST_END_TEST;

/* One frame through videoconvert (no dithering), from caps in_caps to out_caps. */
static GstBuffer *videoconvert_frame(GstBuffer *in, const gchar *in_caps, const gchar *out_caps)
{
  GstHarness *c = gst_harness_new_parse("videoconvert dither=none");
  GstBuffer *out;

  gst_harness_set_src_caps_str(c, in_caps);
  gst_harness_set_sink_caps_str(c, out_caps);
  fail_unless_equals_int(gst_harness_push(c, gst_buffer_ref(in)), GST_FLOW_OK);
  out = gst_harness_pull(c);
  fail_unless(out != NULL, "videoconvert gave no frame");
  gst_harness_teardown(c);
  return out;
}

/* The R'G'B' formats of 10 and 16 bits against a format the library already
 * trusts, RGBA64_LE (LH_FORMAT_RGBA16): a frame made in RGBA64_LE and
 * converted to the format by videoconvert goes through the element; the
 * same frame converted back to RGBA64_LE by videoconvert (whose unpacking of
 * the 10-bit words is GStreamer's, not ours: v << 6 | v >> 4) and analysed
 * by the library as RGBA16 of 10 significant bits (v) must give the same
 * statistics, histogram included. */
GST_START_TEST(test_rgb_deep_formats_match_videoconvert)
{
  static const gchar *const formats[] = {"RGB10A2_LE", "BGR10A2_LE", "r210", "BGRA64_LE"};
  const gchar *trusted = "video/x-raw,format=RGBA64_LE,width=61,height=23,framerate=25/1";
  GstVideoInfo trusted_info = lhc_info_from_string(trusted);

  for (guint i = 0; i < G_N_ELEMENTS(formats); i++) {
    gboolean ten = g_str_has_suffix(formats[i], "10A2_LE") || strcmp(formats[i], "r210") == 0;
    gchar *caps = g_strdup_printf("video/x-raw,format=%s,width=61,height=23,framerate=25/1",
                                  formats[i]);
    GstBuffer *source = i % 2 ? lhc_random_frame(&trusted_info, 77 + i, 0)
                              : lhc_low_contrast_frame(&trusted_info, 77 + i, 0);
    GstBuffer *in = videoconvert_frame(source, trusted, caps);
    GstBuffer *back = videoconvert_frame(in, caps, trusted);
    GstBus *bus;
    GstHarness *h = harness_new(&bus, "backend", 1 /* cpu */, "matrix", 3 /* bt2020 */, "range",
                                1 /* full */, "attach-meta", FALSE, NULL);
    GstVideoFrame vframe;
    LhFrame frame;
    LhOptions options;
    LhContext *context = NULL;
    LhStats expected;
    GstMessage *message;
    guint16 *samples = g_new(guint16, 61 * 23 * 4);

    GST_INFO("format %s", formats[i]);
    /* The trusted frame: the 10 bits of each sample (16 as they are). */
    fail_unless(gst_video_frame_map(&vframe, &trusted_info, back, GST_MAP_READ));
    for (gint y = 0; y < 23; y++) {
      const guint8 *row = (const guint8 *)GST_VIDEO_FRAME_PLANE_DATA(&vframe, 0) +
                          (gsize)y * GST_VIDEO_FRAME_PLANE_STRIDE(&vframe, 0);
      for (gint k = 0; k < 61 * 4; k++) {
        guint16 v = GST_READ_UINT16_LE(row + 2 * k);
        samples[y * 61 * 4 + k] = ten ? v >> 6 : v;
      }
    }
    gst_video_frame_unmap(&vframe);
    fail_unless_equals_int(
        lh_frame_init(&frame, LH_FORMAT_RGBA16, LH_MEMORY_HOST, 61, 23, samples, 0), LH_OK);
    frame.bit_depth = ten ? 10 : 16;
    lh_options_init(&options);
    options.matrix = LH_MATRIX_BT2020;
    fail_unless_equals_int(lh_options_set_percentiles(&options, "1,5,50,95,99"), LH_OK);
    fail_unless_equals_int(lh_context_new(LH_BACKEND_CPU, &context), LH_OK);
    lh_stats_init(&expected);
    fail_unless_equals_int(lh_analyze(context, &frame, &options, &expected), LH_OK);
    lh_context_free(context);
    fail_unless(expected.max > expected.min, "%s: a flat test frame", formats[i]);

    gst_harness_set_src_caps_str(h, caps);
    fail_unless_equals_int(gst_harness_push(h, gst_buffer_ref(in)), GST_FLOW_OK);
    gst_buffer_unref(gst_harness_pull(h));
    message = pop_lumahist_message(bus);
    fail_unless_equals_string(get_string(gst_message_get_structure(message), "format"),
                              formats[i]);
    check_message_stats(gst_message_get_structure(message), &expected, TRUE);

    gst_message_unref(message);
    lh_stats_clear(&expected);
    g_free(samples);
    gst_buffer_unref(back);
    gst_buffer_unref(in);
    gst_buffer_unref(source);
    g_free(caps);
    harness_free(h, bus);
  }
}
GST_END_TEST;

GST_START_TEST(test_unsupported_format_refused)
{
  GstBus *bus;
  GstHarness *h = harness_new(&bus, "backend", 1, NULL);
  GstVideoInfo info = lhc_info_from_string("video/x-raw,format=AYUV,width=16,height=16");
  GstCaps *caps = gst_caps_from_string("video/x-raw,format=AYUV,width=16,height=16");

  fail_if(gst_pad_peer_query_accept_caps(h->srcpad, caps));
  gst_harness_set_src_caps(h, caps);
  fail_unless_equals_int(gst_harness_push(h, lhc_random_frame(&info, 7, 0)),
                         GST_FLOW_NOT_NEGOTIATED);
  assert_no_lumahist_message(bus);

  /* Alternate fields (one field a buffer) are not frames: not accepted. */
  caps = gst_caps_from_string("video/x-raw(format:Interlaced),format=GRAY8,width=16,height=16,"
                              "interlace-mode=alternate");
  fail_if(gst_pad_peer_query_accept_caps(h->srcpad, caps));
  gst_caps_unref(caps);
  harness_free(h, bus);
}
GST_END_TEST;

/* Frames leave as they came: the same memory, the same bytes. */
GST_START_TEST(test_passthrough_untouched)
{
  const gchar *caps_string = "video/x-raw,format=NV12,width=64,height=36,framerate=25/1";
  GstVideoInfo info = lhc_info_from_string(caps_string);
  GstBus *bus;
  GstHarness *h = harness_new(&bus, "backend", 1, NULL);

  gst_harness_set_src_caps_str(h, caps_string);
  for (guint held = 0; held < 2; held++) {
    GstBuffer *in = lhc_random_frame(&info, 42 + held, held * 40 * GST_MSECOND);
    GstBuffer *out;
    GstMapInfo in_map, out_map;
    guint8 *before;

    fail_unless(gst_buffer_map(in, &in_map, GST_MAP_READ));
    before = g_memdup2(in_map.data, in_map.size);
    gst_buffer_unmap(in, &in_map);

    /* held: the test keeps a reference, so the element may not write on the
     * buffer (not even a meta) and must pass a copy that shares the memory. */
    if (held)
      gst_buffer_ref(in);
    fail_unless_equals_int(gst_harness_push(h, in), GST_FLOW_OK);
    out = gst_harness_pull(h);
    if (!held)
      fail_unless(out == in);
    else
      fail_unless(gst_buffer_get_lumahist_meta(in) == NULL, "meta added to a held buffer");

    fail_unless(gst_buffer_map(out, &out_map, GST_MAP_READ));
    fail_unless_equals_uint64(out_map.size, GST_VIDEO_INFO_SIZE(&info));
    fail_unless(memcmp(out_map.data, before, out_map.size) == 0, "pixels changed");
    if (held) {
      fail_unless(gst_buffer_map(in, &in_map, GST_MAP_READ));
      fail_unless(in_map.data == out_map.data, "pixels copied");
      gst_buffer_unmap(in, &in_map);
    }
    gst_buffer_unmap(out, &out_map);
    fail_unless(gst_buffer_get_lumahist_meta(out) != NULL);
    fail_unless_equals_uint64(GST_BUFFER_PTS(out), held * 40 * GST_MSECOND);

    gst_message_unref(pop_lumahist_message(bus));
    if (held)
      gst_buffer_unref(in);
    gst_buffer_unref(out);
    g_free(before);
  }
  harness_free(h, bus);
}
GST_END_TEST;

GST_START_TEST(test_meta)
{
  const gchar *caps_string =
      "video/x-raw,format=RGBA,width=40,height=30,framerate=25/1,colorimetry=sRGB";
  GstVideoInfo info = lhc_info_from_string(caps_string);
  GstBus *bus;
  GstHarness *h =
      harness_new(&bus, "backend", 1, "percentiles", "10,90", "post-messages", FALSE, NULL);
  LhStats expected;

  gst_harness_set_src_caps_str(h, caps_string);
  for (guint i = 0; i < 3; i++) {
    GstBuffer *in = lhc_random_frame(&info, 77 + i, i * 40 * GST_MSECOND);
    GstBuffer *out, *copy;
    GstLumahistMeta *meta;

    lhc_library_stats(in, &info, LH_MATRIX_BT709, LH_RANGE_FULL, "10,90", &expected);
    fail_unless_equals_int(gst_harness_push(h, in), GST_FLOW_OK);
    out = gst_harness_pull(h);
    meta = gst_buffer_get_lumahist_meta(out);
    fail_unless(meta != NULL);
    fail_unless_equals_int(meta->backend, LH_BACKEND_CPU);
    fail_unless_equals_uint64(meta->frame, i);
    fail_unless_equals_int(meta->stats.bit_depth, 8);
    fail_unless_equals_int(meta->stats.matrix, LH_MATRIX_BT709);
    fail_unless_equals_int(meta->stats.range, LH_RANGE_FULL);
    fail_unless_equals_uint64(meta->stats.count, 40 * 30);
    fail_unless(meta->stats.mean == expected.mean);
    fail_unless(meta->stats.stddev == expected.stddev);
    fail_unless_equals_int(meta->stats.median, expected.median);
    fail_unless_equals_int(meta->stats.n_percentiles, 2);
    fail_unless_equals_int(meta->stats.percentile_value[0], expected.percentile_value[0]);
    fail_unless_equals_int(meta->stats.percentile_value[1], expected.percentile_value[1]);
    fail_unless_equals_uint64(meta->stats.n_bins, 256);
    fail_unless(memcmp(meta->stats.histogram, expected.histogram, 256 * sizeof(uint64_t)) == 0);

    /* A copy of the buffer carries its own copy of the meta. */
    copy = gst_buffer_copy(out);
    gst_buffer_unref(out);
    meta = gst_buffer_get_lumahist_meta(copy);
    fail_unless(meta != NULL);
    fail_unless(memcmp(meta->stats.histogram, expected.histogram, 256 * sizeof(uint64_t)) == 0);
    gst_buffer_unref(copy);
    lh_stats_clear(&expected);
  }
  /* post-messages=false: none at all. */
  assert_no_lumahist_message(bus);

  /* attach-meta=false: no meta. */
  g_object_set(h->element, "attach-meta", FALSE, NULL);
  {
    GstBuffer *out;
    fail_unless_equals_int(gst_harness_push(h, lhc_random_frame(&info, 5, 0)), GST_FLOW_OK);
    out = gst_harness_pull(h);
    fail_unless(gst_buffer_get_lumahist_meta(out) == NULL);
    gst_buffer_unref(out);
  }
  harness_free(h, bus);
}
GST_END_TEST;

/* Matrix and range from the caps' colorimetry, unless the properties say. */
GST_START_TEST(test_colorimetry)
{
  static const struct {
    const gchar *caps;
    gint matrix_property; /* GstLumahistMatrix: 0 auto, 1 bt601, 2 bt709, 3 bt2020 */
    gint range_property;  /* GstLumahistRange: 0 auto, 1 full, 2 limited */
    LhMatrix matrix;
    LhRange range;
  } cases[] = {
      /* sRGB: BT.709 primaries, full range */
      {"RGB,colorimetry=sRGB", 0, 0, LH_MATRIX_BT709, LH_RANGE_FULL},
      /* RGB caps keep the primaries and range of a YUV colorimetry */
      {"BGRx,colorimetry=bt601", 0, 0, LH_MATRIX_BT601, LH_RANGE_LIMITED},
      {"RGBA,colorimetry=bt2020", 0, 0, LH_MATRIX_BT2020, LH_RANGE_LIMITED},
      {"I420,colorimetry=bt601", 0, 0, LH_MATRIX_BT601, LH_RANGE_LIMITED},
      {"NV12,colorimetry=bt709", 0, 0, LH_MATRIX_BT709, LH_RANGE_LIMITED},
      {"NV12,colorimetry=bt2020", 0, 0, LH_MATRIX_BT2020, LH_RANGE_LIMITED},
      /* 0-255 range, BT.709 matrix, transfer and primaries */
      {"I420,colorimetry=(string)1:3:5:1", 0, 0, LH_MATRIX_BT709, LH_RANGE_FULL},
      /* properties win */
      {"RGB,colorimetry=sRGB", 1, 2, LH_MATRIX_BT601, LH_RANGE_LIMITED},
      {"NV12,colorimetry=bt709", 3, 1, LH_MATRIX_BT2020, LH_RANGE_FULL},
  };

  for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
    gchar *caps_string =
        g_strdup_printf("video/x-raw,format=%s,width=48,height=32,framerate=25/1", cases[i].caps);
    GstVideoInfo info = lhc_info_from_string(caps_string);
    GstBus *bus;
    GstHarness *h = harness_new(&bus, "backend", 1, "matrix", cases[i].matrix_property, "range",
                                cases[i].range_property, NULL);
    GstBuffer *in = lhc_random_frame(&info, 300 + i, 0);
    GstMessage *message;
    LhStats expected;

    GST_INFO("case %u: %s", i, caps_string);
    gst_harness_set_src_caps_str(h, caps_string);
    lhc_library_stats(in, &info, cases[i].matrix, cases[i].range, "1,5,50,95,99", &expected);
    fail_unless_equals_int(gst_harness_push(h, in), GST_FLOW_OK);
    gst_buffer_unref(gst_harness_pull(h));
    message = pop_lumahist_message(bus);
    check_message_stats(gst_message_get_structure(message), &expected, TRUE);

    /* The matrix matters for RGB: another one gives another mean. */
    if (GST_VIDEO_INFO_IS_RGB(&info)) {
      LhStats other;
      in = lhc_random_frame(&info, 300 + i, 0);
      lhc_library_stats(in, &info,
                        cases[i].matrix == LH_MATRIX_BT601 ? LH_MATRIX_BT709 : LH_MATRIX_BT601,
                        cases[i].range, "50", &other);
      fail_if(other.mean == expected.mean, "case %u: the matrix does not change the mean", i);
      lh_stats_clear(&other);
      gst_buffer_unref(in);
    }
    lh_stats_clear(&expected);
    gst_message_unref(message);
    g_free(caps_string);
    harness_free(h, bus);
  }
}
GST_END_TEST;

GST_START_TEST(test_timestamps)
{
  const gchar *caps_string = "video/x-raw,format=GRAY8,width=16,height=16,framerate=25/1";
  GstVideoInfo info = lhc_info_from_string(caps_string);
  GstBus *bus;
  GstHarness *h = harness_new(&bus, "backend", 1, NULL);
  GstSegment segment;
  GstMessage *message;
  const GstStructure *s;
  GstBuffer *in;

  gst_harness_set_src_caps_str(h, caps_string);
  /* Running time counts from the segment start (1 s), stream time from its
   * time (5 s): a frame at 1.5 s runs at 0.5 s and shows 5.5 s. */
  gst_segment_init(&segment, GST_FORMAT_TIME);
  segment.start = 1 * GST_SECOND;
  segment.time = 5 * GST_SECOND;
  segment.position = segment.start;
  fail_unless(gst_harness_push_event(h, gst_event_new_segment(&segment)));

  in = lhc_random_frame(&info, 9, 1500 * GST_MSECOND);
  fail_unless_equals_int(gst_harness_push(h, in), GST_FLOW_OK);
  gst_buffer_unref(gst_harness_pull(h));
  message = pop_lumahist_message(bus);
  s = gst_message_get_structure(message);
  fail_unless_equals_uint64(get_uint64(s, "timestamp"), 1500 * GST_MSECOND);
  fail_unless_equals_uint64(get_uint64(s, "running-time"), 500 * GST_MSECOND);
  fail_unless_equals_uint64(get_uint64(s, "stream-time"), 5500 * GST_MSECOND);
  fail_unless_equals_uint64(get_uint64(s, "duration"), 40 * GST_MSECOND);
  fail_unless_equals_uint64(get_uint64(s, "frame"), 0);
  fail_unless(GST_MESSAGE_SRC(message) == GST_OBJECT(h->element));
  gst_message_unref(message);

  /* No timestamp: all three are GST_CLOCK_TIME_NONE. */
  in = lhc_random_frame(&info, 10, GST_CLOCK_TIME_NONE);
  GST_BUFFER_DURATION(in) = GST_CLOCK_TIME_NONE;
  fail_unless_equals_int(gst_harness_push(h, in), GST_FLOW_OK);
  gst_buffer_unref(gst_harness_pull(h));
  message = pop_lumahist_message(bus);
  s = gst_message_get_structure(message);
  fail_unless_equals_uint64(get_uint64(s, "timestamp"), GST_CLOCK_TIME_NONE);
  fail_unless_equals_uint64(get_uint64(s, "running-time"), GST_CLOCK_TIME_NONE);
  fail_unless_equals_uint64(get_uint64(s, "stream-time"), GST_CLOCK_TIME_NONE);
  fail_unless_equals_uint64(get_uint64(s, "duration"), GST_CLOCK_TIME_NONE);
  fail_unless_equals_uint64(get_uint64(s, "frame"), 1);
  gst_message_unref(message);
  harness_free(h, bus);
}
GST_END_TEST;

GST_START_TEST(test_message_interval)
{
  const gchar *caps_string = "video/x-raw,format=I420,width=32,height=24,framerate=25/1";
  GstVideoInfo info = lhc_info_from_string(caps_string);
  GstBus *bus;
  GstHarness *h = harness_new(&bus, "backend", 1, "message-interval", 3, "attach-meta", FALSE,
                              "post-histogram", FALSE, NULL);
  LhStats expected[7];

  gst_harness_set_src_caps_str(h, caps_string);
  for (guint i = 0; i < 7; i++) {
    GstBuffer *in = lhc_random_frame(&info, 500 + i, i * 40 * GST_MSECOND);
    lhc_library_stats(in, &info, LH_MATRIX_BT601, LH_RANGE_LIMITED, "1,5,50,95,99", &expected[i]);
    fail_unless_equals_int(gst_harness_push(h, in), GST_FLOW_OK);
    gst_buffer_unref(gst_harness_pull(h));
  }
  /* Frames 0, 3 and 6, each with its own values. */
  for (guint i = 0; i < 7; i += 3) {
    GstMessage *message = pop_lumahist_message(bus);
    const GstStructure *s = gst_message_get_structure(message);
    fail_unless_equals_uint64(get_uint64(s, "frame"), i);
    fail_unless_equals_uint64(get_uint64(s, "timestamp"), i * 40 * GST_MSECOND);
    check_message_stats(s, &expected[i], FALSE);
    gst_message_unref(message);
  }
  assert_no_lumahist_message(bus);
  for (guint i = 0; i < 7; i++)
    lh_stats_clear(&expected[i]);
  harness_free(h, bus);
}
GST_END_TEST;

GST_START_TEST(test_no_messages)
{
  const gchar *caps_string = "video/x-raw,format=GRAY8,width=8,height=8,framerate=25/1";
  GstVideoInfo info = lhc_info_from_string(caps_string);
  GstBus *bus;
  GstHarness *h =
      harness_new(&bus, "backend", 1, "post-messages", FALSE, "attach-meta", FALSE, NULL);
  GstBuffer *gap;

  gst_harness_set_src_caps_str(h, caps_string);
  fail_unless_equals_int(gst_harness_push(h, lhc_random_frame(&info, 1, 0)), GST_FLOW_OK);
  gst_buffer_unref(gst_harness_pull(h));
  assert_no_lumahist_message(bus);

  /* A gap too small for a picture (a source's filler): no message, no
   * failure.  (One that holds a picture is a frame: test_gap_with_picture_is_a_frame.) */
  g_object_set(h->element, "post-messages", TRUE, NULL);
  gap = gst_buffer_new_wrapped(g_memdup2("\x55\x55", 2), 2);
  GST_BUFFER_PTS(gap) = 40 * GST_MSECOND;
  GST_BUFFER_FLAG_SET(gap, GST_BUFFER_FLAG_GAP);
  fail_unless_equals_int(gst_harness_push(h, gap), GST_FLOW_OK);
  gst_buffer_unref(gst_harness_pull(h));
  assert_no_lumahist_message(bus);
  harness_free(h, bus);
}
GST_END_TEST;

/* videorate marks the frames it repeats with the GAP flag, and they hold the
 * whole picture: frames of the stream as shown.  Equalized or overlaid, they
 * must come out rewritten as the frames around them do (they came out as
 * they went in: `videorate ! lumahist mode=equalize` flickered between
 * equalized and raw frames), with their message and meta, counted.  A gap
 * too small to hold a picture goes on untouched and does not count. */
GST_START_TEST(test_gap_with_picture_is_a_frame)
{
  const gchar *caps_string =
      "video/x-raw,format=I420,width=64,height=48,framerate=25/1,colorimetry=bt709";
  GstVideoInfo info = lhc_info_from_string(caps_string);

  for (guint overlay_on = 0; overlay_on < 2; overlay_on++) {
    GstBus *bus;
    GstHarness *h = harness_new(&bus, "backend", 1, "mode", overlay_on ? 0 : 1 /* equalize */,
                                "overlay", overlay_on, "matrix", 2, "range", 1, NULL);
    GstBuffer *repeat = lhc_low_contrast_frame(&info, 7000 + overlay_on, 40 * GST_MSECOND);
    GstBuffer *tiny = gst_buffer_new_wrapped(g_memdup2("\x55", 1), 1);
    GstBuffer *out, *expected;
    LhEqualizeOptions equalize;
    LhOverlayOptions overlay;
    LhStats stats;
    GstMessage *message;

    GST_INFO("%s", overlay_on ? "overlay" : "equalize");
    lhc_library_stats(repeat, &info, LH_MATRIX_BT709, LH_RANGE_FULL, "1,5,50,95,99", &stats);
    lh_equalize_options_init(&equalize);
    equalize.mode = LH_EQUALIZE_GLOBAL;
    equalize.matrix = LH_MATRIX_BT709;
    equalize.range = LH_RANGE_FULL;
    lh_overlay_options_init(&overlay);
    overlay.matrix = LH_MATRIX_BT709;
    overlay.range = LH_RANGE_FULL;
    expected = lhc_library_output(repeat, &info, overlay_on ? NULL : &equalize,
                                  overlay_on ? &overlay : NULL, overlay_on ? &stats : NULL);
    fail_if(same_bytes(expected, repeat), "the rewrite changes nothing");

    gst_harness_set_src_caps_str(h, caps_string);
    fail_unless_equals_int(gst_harness_push(h, lhc_random_frame(&info, 7100, 0)), GST_FLOW_OK);
    gst_buffer_unref(gst_harness_pull(h));
    gst_message_unref(pop_lumahist_message(bus));

    GST_BUFFER_FLAG_SET(repeat, GST_BUFFER_FLAG_GAP);
    fail_unless_equals_int(gst_harness_push(h, gst_buffer_ref(repeat)), GST_FLOW_OK);
    out = gst_harness_pull(h);
    fail_unless(same_bytes(out, expected), "%s: the repeated frame was not rewritten",
                overlay_on ? "overlay" : "equalize");
    fail_unless(GST_BUFFER_FLAG_IS_SET(out, GST_BUFFER_FLAG_GAP));
    fail_unless(gst_buffer_get_lumahist_meta(out) != NULL, "the repeated frame has no meta");
    gst_buffer_unref(out);
    message = pop_lumahist_message(bus);
    fail_unless_equals_uint64(get_uint64(gst_message_get_structure(message), "frame"), 1);
    check_message_stats(gst_message_get_structure(message), &stats, TRUE);
    gst_message_unref(message);

    GST_BUFFER_FLAG_SET(tiny, GST_BUFFER_FLAG_GAP);
    GST_BUFFER_PTS(tiny) = 80 * GST_MSECOND;
    fail_unless_equals_int(gst_harness_push(h, tiny), GST_FLOW_OK);
    out = gst_harness_pull(h);
    fail_unless_equals_uint64(gst_buffer_get_size(out), 1);
    gst_buffer_unref(out);
    assert_no_lumahist_message(bus);

    /* The next picture is frame 2: the tiny gap did not count. */
    fail_unless_equals_int(
        gst_harness_push(h, lhc_random_frame(&info, 7200, 120 * GST_MSECOND)), GST_FLOW_OK);
    gst_buffer_unref(gst_harness_pull(h));
    message = pop_lumahist_message(bus);
    fail_unless_equals_uint64(get_uint64(gst_message_get_structure(message), "frame"), 2);
    gst_message_unref(message);
    message = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR);
    fail_unless(message == NULL, "error %" GST_PTR_FORMAT, message);

    lh_stats_clear(&stats);
    gst_buffer_unref(expected);
    gst_buffer_unref(repeat);
    harness_free(h, bus);
  }
}
GST_END_TEST;

GST_START_TEST(test_resolution_change)
{
  const gchar *caps_strings[] = {
      "video/x-raw,format=RGB,width=64,height=48,framerate=25/1,colorimetry=sRGB",
      "video/x-raw,format=RGB,width=17,height=9,framerate=25/1,colorimetry=sRGB",
      "video/x-raw,format=GRAY16_LE,width=20,height=10,framerate=25/1",
      "video/x-raw,format=NV12,width=128,height=72,framerate=25/1,colorimetry=bt709",
  };
  const LhRange ranges[] = {LH_RANGE_FULL, LH_RANGE_FULL, LH_RANGE_FULL, LH_RANGE_LIMITED};
  GstBus *bus;
  GstHarness *h = harness_new(&bus, "backend", 1, "matrix", 2 /* bt709 */, NULL);

  for (guint i = 0; i < G_N_ELEMENTS(caps_strings); i++) {
    GstVideoInfo info = lhc_info_from_string(caps_strings[i]);
    GstBuffer *in = lhc_random_frame(&info, 900 + i, i * 40 * GST_MSECOND);
    GstMessage *message;
    const GstStructure *s;
    LhStats expected;

    gst_harness_set_src_caps_str(h, caps_strings[i]);
    lhc_library_stats(in, &info, LH_MATRIX_BT709, ranges[i], "1,5,50,95,99", &expected);
    fail_unless_equals_int(gst_harness_push(h, in), GST_FLOW_OK);
    gst_buffer_unref(gst_harness_pull(h));
    message = pop_lumahist_message(bus);
    s = gst_message_get_structure(message);
    fail_unless_equals_int(get_int(s, "width"), GST_VIDEO_INFO_WIDTH(&info));
    fail_unless_equals_int(get_int(s, "height"), GST_VIDEO_INFO_HEIGHT(&info));
    fail_unless_equals_uint64(get_uint64(s, "frame"), i);
    check_message_stats(s, &expected, TRUE);
    lh_stats_clear(&expected);
    gst_message_unref(message);
  }
  harness_free(h, bus);
}
GST_END_TEST;

GST_START_TEST(test_flush)
{
  const gchar *caps_string = "video/x-raw,format=BGRA,width=32,height=16,framerate=25/1";
  GstVideoInfo info = lhc_info_from_string(caps_string);
  GstBus *bus;
  GstHarness *h = harness_new(&bus, "backend", 1, "message-interval", 2, NULL);
  GstSegment segment;
  GstMessage *message;
  GstBuffer *in;
  LhStats expected;

  gst_harness_set_src_caps_str(h, caps_string);
  for (guint i = 0; i < 3; i++) {
    fail_unless_equals_int(gst_harness_push(h, lhc_random_frame(&info, i, i * 40 * GST_MSECOND)),
                           GST_FLOW_OK);
    gst_buffer_unref(gst_harness_pull(h));
  }
  /* frames 0 and 2 */
  gst_message_unref(pop_lumahist_message(bus));
  gst_message_unref(pop_lumahist_message(bus));
  assert_no_lumahist_message(bus);

  fail_unless(gst_harness_push_event(h, gst_event_new_flush_start()));
  fail_unless(gst_harness_push_event(h, gst_event_new_flush_stop(TRUE)));
  gst_segment_init(&segment, GST_FORMAT_TIME);
  fail_unless(gst_harness_push_event(h, gst_event_new_segment(&segment)));

  /* After the flush the count starts again: the first frame is frame 0. */
  in = lhc_random_frame(&info, 99, 0);
  lhc_library_stats(in, &info, LH_MATRIX_BT709, LH_RANGE_FULL, "1,5,50,95,99", &expected);
  fail_unless_equals_int(gst_harness_push(h, in), GST_FLOW_OK);
  gst_buffer_unref(gst_harness_pull(h));
  message = pop_lumahist_message(bus);
  fail_unless_equals_uint64(get_uint64(gst_message_get_structure(message), "frame"), 0);
  check_message_stats(gst_message_get_structure(message), &expected, TRUE);
  gst_message_unref(message);
  lh_stats_clear(&expected);
  harness_free(h, bus);
}
GST_END_TEST;

GST_START_TEST(test_percentiles_property)
{
  const gchar *caps_string = "video/x-raw,format=GRAY16_LE,width=33,height=31,framerate=25/1";
  GstVideoInfo info = lhc_info_from_string(caps_string);
  GstBus *bus;
  GstHarness *h = harness_new(&bus, "backend", 1, "percentiles", "0,100,50,12.5", NULL);
  GstMessage *message;
  const GstStructure *s;
  const GValue *values;
  gchar *percentiles = NULL;
  guint64 sum = 0;
  GstBuffer *in;
  LhStats expected;
  gchar *text;

  /* A bad list is refused with a warning and the previous one stays. */
  ASSERT_WARNING(g_object_set(h->element, "percentiles", "5,abc", NULL));
  ASSERT_WARNING(g_object_set(h->element, "percentiles", "101", NULL));
  g_object_get(h->element, "percentiles", &percentiles, NULL);
  fail_unless_equals_string(percentiles, "0,100,50,12.5");
  g_free(percentiles);

  gst_harness_set_src_caps_str(h, caps_string);
  fail_unless_equals_int(gst_harness_push(h, lhc_random_frame(&info, 31, 0)), GST_FLOW_OK);
  gst_buffer_unref(gst_harness_pull(h));
  message = pop_lumahist_message(bus);
  s = gst_message_get_structure(message);
  /* Invariants: P(0) is the minimum, P(100) the maximum, P(50) the median,
   * and the 65536 bins of a 16-bit histogram add up to the pixel count. */
  values = get_array(s, "percentile-values", G_TYPE_UINT, 4);
  fail_unless_equals_int(g_value_get_uint(gst_value_array_get_value(values, 0)),
                         get_uint(s, "min"));
  fail_unless_equals_int(g_value_get_uint(gst_value_array_get_value(values, 1)),
                         get_uint(s, "max"));
  fail_unless_equals_int(g_value_get_uint(gst_value_array_get_value(values, 2)),
                         get_uint(s, "median"));
  values = get_array(s, "histogram", G_TYPE_UINT64, 65536);
  for (guint i = 0; i < 65536; i++)
    sum += g_value_get_uint64(gst_value_array_get_value(values, i));
  fail_unless_equals_uint64(sum, 33 * 31);
  fail_unless_equals_uint64(get_uint64(s, "count"), 33 * 31);
  gst_message_unref(message);

  /* An empty list: the median only, the list reads back empty, and the
   * message has no percentile field (whose text would read "(int)< >"). */
  g_object_set(h->element, "percentiles", "", NULL);
  g_object_get(h->element, "percentiles", &percentiles, NULL);
  fail_unless_equals_string(percentiles, "");
  g_free(percentiles);
  in = lhc_random_frame(&info, 32, 0);
  lhc_library_stats(in, &info, LH_MATRIX_BT601, LH_RANGE_FULL, "", &expected);
  fail_unless_equals_int(expected.n_percentiles, 0);
  fail_unless_equals_int(gst_harness_push(h, in), GST_FLOW_OK);
  gst_buffer_unref(gst_harness_pull(h));
  message = pop_lumahist_message(bus);
  s = gst_message_get_structure(message);
  check_message_stats(s, &expected, TRUE);
  text = gst_structure_to_string(s);
  fail_if(strstr(text, "(int)<") != NULL, "%s", text);
  g_free(text);
  gst_message_unref(message);
  lh_stats_clear(&expected);
  harness_free(h, bus);
}
GST_END_TEST;

/* Equalization: the element's output is the library's, the input buffer
 * (held elsewhere) is left alone, and the message describes the input. */
GST_START_TEST(test_equalize_each_format)
{
  for (guint i = 0; i < lhc_n_formats; i++) {
    gchar *caps_string = g_strdup_printf("video/x-raw,format=%s,width=61,height=19,framerate=25/1",
                                         lhc_formats[i].name);
    GstVideoInfo info = lhc_info_from_string(caps_string);
    GstBus *bus;
    GstHarness *h =
        harness_new(&bus, "backend", 1, "mode", 1 /* equalize */, "matrix", 2, "range", 1, NULL);
    GstBuffer *in = lhc_low_contrast_frame(&info, 2000 + i, 0);
    GstBuffer *in_copy = gst_buffer_copy_deep(in);
    GstBuffer *out, *expected;
    GstMessage *message;
    LhEqualizeOptions equalize;
    LhStats input_stats;

    GST_INFO("format %s", lhc_formats[i].name);
    lh_equalize_options_init(&equalize);
    equalize.mode = LH_EQUALIZE_GLOBAL;
    equalize.matrix = LH_MATRIX_BT709;
    equalize.range = LH_RANGE_FULL;
    expected = lhc_library_output(in, &info, &equalize, NULL, NULL);
    fail_if(same_bytes(expected, in), "%s: equalization changes nothing", lhc_formats[i].name);
    lhc_library_stats(in, &info, LH_MATRIX_BT709, LH_RANGE_FULL, "1,5,50,95,99", &input_stats);

    gst_harness_set_src_caps_str(h, caps_string);
    fail_unless_equals_int(gst_harness_push(h, gst_buffer_ref(in)), GST_FLOW_OK);
    out = gst_harness_pull(h);
    fail_unless(out != in);
    fail_unless(same_bytes(out, expected), "%s: output differs from the library's",
                lhc_formats[i].name);
    fail_unless(same_bytes(in, in_copy), "%s: the held input was written", lhc_formats[i].name);
    fail_unless(gst_buffer_get_lumahist_meta(out) != NULL);

    message = pop_lumahist_message(bus);
    check_message_stats(gst_message_get_structure(message), &input_stats, TRUE);
    gst_message_unref(message);

    lh_stats_clear(&input_stats);
    gst_buffer_unref(expected);
    gst_buffer_unref(out);
    gst_buffer_unref(in_copy);
    gst_buffer_unref(in);
    g_free(caps_string);
    harness_free(h, bus);
  }
}
GST_END_TEST;

/* Formats of 16-bit samples or 32-bit words in a buffer whose planes lie at
 * addresses the library cannot read them at (it refuses such a frame): the
 * element works on an aligned copy, so the statistics and the output are
 * those of the aligned frame, in place and into a new buffer, and what lies
 * around the planes is left as it was.  (The stream stopped with "16-bit
 * samples need a plane address and stride that are multiples of 2".) */
GST_START_TEST(test_misaligned_samples)
{
  guint checked = 0;

  for (guint i = 0; i < lhc_n_formats; i++) {
    gsize align = (gsize)lh_format_alignment(lhc_formats[i].lh);
    if (align < 2)
      continue;
    gchar *caps_string = g_strdup_printf("video/x-raw,format=%s,width=13,height=7,framerate=25/1",
                                         lhc_formats[i].name);
    GstVideoInfo info = lhc_info_from_string(caps_string);
    GstBuffer *in = lhc_low_contrast_frame(&info, 3100 + i, 0);
    LhEqualizeOptions equalize;
    LhStats input_stats;

    GST_INFO("format %s", lhc_formats[i].name);
    lh_equalize_options_init(&equalize);
    equalize.mode = LH_EQUALIZE_GLOBAL;
    equalize.matrix = LH_MATRIX_BT709;
    equalize.range = LH_RANGE_FULL;
    GstBuffer *expected = lhc_library_output(in, &info, &equalize, NULL, NULL);
    lhc_library_stats(in, &info, LH_MATRIX_BT709, LH_RANGE_FULL, "1,5,50,95,99", &input_stats);
    for (gint mode = 0; mode <= 1; mode++) {
      for (gint held = 0; held <= 1; held++) {
        GstBus *bus;
        GstHarness *h = harness_new(&bus, "backend", 1, "mode", mode, "matrix", 2, "range", 1,
                                    "percentiles", "1,5,50,95,99", NULL);
        GstBuffer *odd = lhc_misaligned_copy(in, &info, align / 2);
        GstBuffer *odd_copy = gst_buffer_copy_deep(odd);
        GstBuffer *out;
        GstMessage *message;
        GstMapInfo a, b;

        gst_harness_set_src_caps_str(h, caps_string);
        /* Held: the element writes a new buffer; not held: in place. */
        fail_unless_equals_int(gst_harness_push(h, held ? gst_buffer_ref(odd) : odd), GST_FLOW_OK);
        out = gst_harness_pull(h);
        fail_unless(out != NULL, "%s mode %d: no output", lhc_formats[i].name, mode);
        fail_unless(lhc_same_pixels(out, &info, mode ? expected : in, &info),
                    "%s mode %d held %d: the output is not the aligned frame's",
                    lhc_formats[i].name, mode, held);
        if (!held && gst_buffer_get_size(out) == gst_buffer_get_size(odd_copy)) {
          /* In place: the bytes around the planes are as they came. */
          fail_unless(gst_buffer_map(out, &a, GST_MAP_READ));
          fail_unless(gst_buffer_map(odd_copy, &b, GST_MAP_READ));
          fail_unless(memcmp(a.data, b.data, align / 2) == 0, "%s: the bytes before the frame",
                      lhc_formats[i].name);
          gst_buffer_unmap(odd_copy, &b);
          gst_buffer_unmap(out, &a);
        }
        if (held)
          fail_unless(same_bytes(odd, odd_copy), "%s: the held input was written",
                      lhc_formats[i].name);
        message = pop_lumahist_message(bus);
        check_message_stats(gst_message_get_structure(message), &input_stats, TRUE);
        gst_message_unref(message);
        gst_buffer_unref(out);
        if (held)
          gst_buffer_unref(odd);
        gst_buffer_unref(odd_copy);
        harness_free(h, bus);
        checked++;
      }
    }
    lh_stats_clear(&input_stats);
    gst_buffer_unref(expected);
    gst_buffer_unref(in);
    g_free(caps_string);
  }
  fail_unless(checked >= 4 * 15, "%u cases: the 16-bit formats are missing", checked);
}
GST_END_TEST;

GST_START_TEST(test_clahe)
{
  static const struct {
    const gchar *format;
    gint tiles_x, tiles_y;
    gdouble clip_limit;
  } cases[] = {
      {"GRAY8", 8, 8, 40.0},    {"GRAY8", 3, 2, 2.5},     {"NV12", 4, 3, 2.0},
      {"I420", 5, 1, 0.0},      {"RGBx", 2, 2, 3.0},      {"BGR", 7, 5, 1.0},
      {"GRAY16_LE", 3, 3, 2.0}, {"P010_10LE", 4, 4, 4.0}, {"RGBA64_LE", 2, 3, 2.0},
  };

  for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
    gchar *caps_string =
        g_strdup_printf("video/x-raw,format=%s,width=70,height=45,framerate=25/1", cases[i].format);
    GstVideoInfo info = lhc_info_from_string(caps_string);
    GstBus *bus;
    GstHarness *h = harness_new(&bus, "backend", 1, "mode", 2 /* clahe */, "matrix", 1, "range", 1,
                                "tiles-x", cases[i].tiles_x, "tiles-y", cases[i].tiles_y,
                                "clip-limit", cases[i].clip_limit, "post-messages", FALSE, NULL);
    GstBuffer *in = lhc_low_contrast_frame(&info, 3000 + i, 0);
    GstBuffer *out, *expected, *global;
    LhEqualizeOptions equalize;

    GST_INFO("case %u: %s %dx%d clip %g", i, cases[i].format, cases[i].tiles_x, cases[i].tiles_y,
             cases[i].clip_limit);
    lh_equalize_options_init(&equalize);
    equalize.mode = LH_EQUALIZE_CLAHE;
    equalize.matrix = LH_MATRIX_BT601;
    equalize.range = LH_RANGE_FULL;
    equalize.tiles_x = cases[i].tiles_x;
    equalize.tiles_y = cases[i].tiles_y;
    equalize.clip_limit = cases[i].clip_limit;
    expected = lhc_library_output(in, &info, &equalize, NULL, NULL);
    /* CLAHE is not global equalization: the test would see a mix-up. */
    equalize.mode = LH_EQUALIZE_GLOBAL;
    global = lhc_library_output(in, &info, &equalize, NULL, NULL);
    fail_if(same_bytes(expected, global));

    gst_harness_set_src_caps_str(h, caps_string);
    fail_unless_equals_int(gst_harness_push(h, in), GST_FLOW_OK);
    out = gst_harness_pull(h);
    fail_unless(same_bytes(out, expected), "case %u: output differs from the library's", i);

    gst_buffer_unref(global);
    gst_buffer_unref(expected);
    gst_buffer_unref(out);
    g_free(caps_string);
    harness_free(h, bus);
  }
}
GST_END_TEST;

/* temporal-window: the LUTs of the last frames are averaged, as the library
 * does with its own temporal state; a flush starts afresh. */
GST_START_TEST(test_temporal_window)
{
  GstBus *bus;
  GstHarness *h = harness_new(&bus, "backend", 1, "mode", 1, "temporal-window", 3, "cut-threshold",
                              1.0, "post-messages", FALSE, "attach-meta", FALSE, NULL);

  lhc_check_temporal_window(h, "video/x-raw,format=GRAY8,width=40,height=30,framerate=25/1", 4000);
  harness_free(h, bus);
}
GST_END_TEST;

/* A setting that changes the LUTs, changed while playing, restarts the
 * temporal window: the frames after it are not averaged with LUTs made
 * under the old one (clip-limit, range and, for R'G'B', matrix; the
 * library restarts a window at a change of those too, and of mode, size,
 * depth or tiles).  The frame of the change is checked to be one the
 * window changes: under the old settings, with the frames before it in the
 * window, it differs from itself alone. */
GST_START_TEST(test_temporal_window_restarts_on_settings)
{
  static const struct {
    const gchar *format;
    gint mode; /* 1 equalize, 2 clahe */
    const gchar *property, *before, *after;
    gdouble clip_before, clip_after;
    LhMatrix matrix_before, matrix_after;
    LhRange range_before, range_after;
  } cases[] = {
      {"GRAY8", 2, "clip-limit", "40", "2", 40.0, 2.0, LH_MATRIX_BT601, LH_MATRIX_BT601,
       LH_RANGE_FULL, LH_RANGE_FULL},
      {"I420", 2, "range", "full", "limited", 4.0, 4.0, LH_MATRIX_BT601, LH_MATRIX_BT601,
       LH_RANGE_FULL, LH_RANGE_LIMITED},
      {"GRAY8", 1, "range", "limited", "full", 40.0, 40.0, LH_MATRIX_BT601, LH_MATRIX_BT601,
       LH_RANGE_LIMITED, LH_RANGE_FULL},
      {"RGBx", 2, "matrix", "bt601", "bt2020", 4.0, 4.0, LH_MATRIX_BT601, LH_MATRIX_BT2020,
       LH_RANGE_FULL, LH_RANGE_FULL},
  };

  for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
    gchar *caps_string =
        g_strdup_printf("video/x-raw,format=%s,width=64,height=48,framerate=25/1", cases[i].format);
    GstVideoInfo info = lhc_info_from_string(caps_string);
    GstBus *bus;
    GstHarness *h = harness_new(&bus, "backend", 1, "mode", cases[i].mode, "temporal-window", 4,
                                "cut-threshold", 1.0, "tiles-x", 4, "tiles-y", 3, "post-messages",
                                FALSE, "attach-meta", FALSE, NULL);
    GstElement *element = gst_harness_find_element(h, "lumahist");
    LhTemporal *restarted = NULL, *kept = NULL, *alone = NULL;
    LhEqualizeOptions equalize, unchanged;

    GST_INFO("case %u: %s %s -> %s", i, cases[i].property, cases[i].before, cases[i].after);
    fail_unless_equals_int(lh_temporal_new(4, 1.0, &restarted), LH_OK);
    fail_unless_equals_int(lh_temporal_new(4, 1.0, &kept), LH_OK);
    fail_unless_equals_int(lh_temporal_new(4, 1.0, &alone), LH_OK);
    lh_equalize_options_init(&equalize);
    equalize.mode = cases[i].mode == 2 ? LH_EQUALIZE_CLAHE : LH_EQUALIZE_GLOBAL;
    equalize.tiles_x = 4;
    equalize.tiles_y = 3;
    gst_util_set_object_arg(G_OBJECT(element), cases[i].property, cases[i].before);
    if (strcmp(cases[i].property, "matrix") != 0)
      g_object_set(element, "matrix", 1 /* bt601 */, NULL);
    if (strcmp(cases[i].property, "range") != 0)
      g_object_set(element, "range", 1 /* full */, NULL);
    if (strcmp(cases[i].property, "clip-limit") != 0)
      g_object_set(element, "clip-limit", cases[i].clip_before, NULL);
    gst_harness_set_src_caps_str(h, caps_string);

    for (guint f = 0; f < 5; f++) {
      gboolean after = f >= 3;
      GstBuffer *in, *out, *expected, *mixed, *single;

      if (f == 3) {
        gst_util_set_object_arg(G_OBJECT(element), cases[i].property, cases[i].after);
        lh_temporal_reset(restarted);
      }
      equalize.clip_limit = after ? cases[i].clip_after : cases[i].clip_before;
      equalize.matrix = after ? cases[i].matrix_after : cases[i].matrix_before;
      equalize.range = after ? cases[i].range_after : cases[i].range_before;
      in = f % 2 ? lhc_low_contrast_frame(&info, 5000 + f, f * 40 * GST_MSECOND)
                 : lhc_random_frame(&info, 5000 + f, f * 40 * GST_MSECOND);
      equalize.temporal = restarted;
      expected = lhc_library_output(in, &info, &equalize, NULL, NULL);
      if (f == 0)
        unchanged = equalize;
      unchanged.temporal = kept;
      mixed = lhc_library_output(in, &info, &unchanged, NULL, NULL);
      lh_temporal_reset(alone);
      unchanged.temporal = alone;
      single = lhc_library_output(in, &info, &unchanged, NULL, NULL);
      if (f == 3)
        fail_if(same_bytes(single, mixed),
                "case %u: the old LUTs change nothing: the test proves nothing", i);

      fail_unless_equals_int(gst_harness_push(h, in), GST_FLOW_OK);
      out = gst_harness_pull(h);
      fail_unless(same_bytes(out, expected),
                  "case %u frame %u: %s %s -> %s did not restart the window", i, f,
                  cases[i].property, cases[i].before, cases[i].after);
      gst_buffer_unref(single);
      gst_buffer_unref(mixed);
      gst_buffer_unref(expected);
      gst_buffer_unref(out);
    }
    lh_temporal_free(alone);
    lh_temporal_free(kept);
    lh_temporal_free(restarted);
    gst_object_unref(element);
    g_free(caps_string);
    harness_free(h, bus);
  }
}
GST_END_TEST;

/* Frames that go by without equalization (mode=analyze for a while) leave
 * the window: back in equalize mode, the frames are not averaged with the
 * LUTs of frames from before that time. */
GST_START_TEST(test_temporal_window_restarts_after_analyze)
{
  const gchar *caps_string = "video/x-raw,format=GRAY8,width=40,height=30,framerate=25/1";
  GstVideoInfo info = lhc_info_from_string(caps_string);
  GstBus *bus;
  GstHarness *h = harness_new(&bus, "backend", 1, "mode", 1, "temporal-window", 8, "cut-threshold",
                              1.0, "matrix", 1, "range", 1, "post-messages", FALSE, NULL);
  GstElement *element = gst_harness_find_element(h, "lumahist");
  LhTemporal *restarted = NULL, *kept = NULL;
  LhEqualizeOptions equalize;

  fail_unless_equals_int(lh_temporal_new(8, 1.0, &restarted), LH_OK);
  fail_unless_equals_int(lh_temporal_new(8, 1.0, &kept), LH_OK);
  lh_equalize_options_init(&equalize);
  equalize.matrix = LH_MATRIX_BT601;
  equalize.range = LH_RANGE_FULL;
  gst_harness_set_src_caps_str(h, caps_string);

  for (guint f = 0; f < 7; f++) {
    gboolean analyze = f == 3 || f == 4;
    GstBuffer *in = f % 2 ? lhc_low_contrast_frame(&info, 6000 + f, f * 40 * GST_MSECOND)
                          : lhc_random_frame(&info, 6000 + f, f * 40 * GST_MSECOND);
    GstBuffer *out, *expected = NULL, *mixed;

    g_object_set(element, "mode", analyze ? 0 : 1, NULL);
    if (f == 5)
      lh_temporal_reset(restarted);
    if (!analyze) {
      equalize.temporal = restarted;
      expected = lhc_library_output(in, &info, &equalize, NULL, NULL);
      equalize.temporal = kept;
      mixed = lhc_library_output(in, &info, &equalize, NULL, NULL);
      if (f == 5)
        fail_if(same_bytes(expected, mixed),
                "the old LUTs change nothing: the test proves nothing");
      gst_buffer_unref(mixed);
    } else {
      expected = gst_buffer_copy_deep(in);
    }

    fail_unless_equals_int(gst_harness_push(h, in), GST_FLOW_OK);
    out = gst_harness_pull(h);
    fail_unless(same_bytes(out, expected), "frame %u differs from the library's", f);
    gst_buffer_unref(expected);
    gst_buffer_unref(out);
  }
  lh_temporal_free(kept);
  lh_temporal_free(restarted);
  gst_object_unref(element);
  harness_free(h, bus);
}
GST_END_TEST;

GST_START_TEST(test_overlay)
{
  static const struct {
    const gchar *caps;
    gint mode;
    LhRange range;
  } cases[] = {
      {"RGB,colorimetry=sRGB", 0, LH_RANGE_FULL},
      {"NV12,colorimetry=bt709", 0, LH_RANGE_LIMITED},
      {"GRAY8", 0, LH_RANGE_FULL},
      {"BGRA,colorimetry=sRGB", 1, LH_RANGE_FULL},
      {"I420,colorimetry=bt709", 2, LH_RANGE_LIMITED},
  };

  for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
    gchar *caps_string =
        g_strdup_printf("video/x-raw,format=%s,width=96,height=64,framerate=25/1", cases[i].caps);
    GstVideoInfo info = lhc_info_from_string(caps_string);
    GstBus *bus;
    GstHarness *h = harness_new(&bus, "backend", 1, "mode", cases[i].mode, "matrix", 2, "overlay",
                                TRUE, "overlay-x", 6, "overlay-y", 10, "overlay-width", 50,
                                "overlay-height", 30, "overlay-opacity", 0.6, "overlay-scale",
                                0 /* linear */, "clip-warning", 0.01, NULL);
    GstBuffer *in = lhc_random_frame(&info, 5000 + i, 0);
    GstBuffer *out, *expected, *plain;
    LhEqualizeOptions equalize;
    LhOverlayOptions overlay;
    LhStats stats;
    GstMessage *message;

    GST_INFO("case %u: %s", i, caps_string);
    lhc_library_stats(in, &info, LH_MATRIX_BT709, cases[i].range, "1,5,50,95,99", &stats);
    lh_equalize_options_init(&equalize);
    equalize.mode = cases[i].mode == 2 ? LH_EQUALIZE_CLAHE : LH_EQUALIZE_GLOBAL;
    equalize.matrix = LH_MATRIX_BT709;
    equalize.range = cases[i].range;
    lh_overlay_options_init(&overlay);
    overlay.rect = (LhRect){6, 10, 50, 30};
    overlay.opacity = 0.6;
    overlay.scale = LH_OVERLAY_LINEAR;
    overlay.clip_warning = 0.01;
    overlay.matrix = LH_MATRIX_BT709;
    overlay.range = cases[i].range;
    expected = lhc_library_output(in, &info, cases[i].mode ? &equalize : NULL, &overlay, &stats);
    plain = lhc_library_output(in, &info, cases[i].mode ? &equalize : NULL, NULL, NULL);
    fail_if(same_bytes(expected, plain), "case %u: the overlay draws nothing", i);

    gst_harness_set_src_caps_str(h, caps_string);
    fail_unless_equals_int(gst_harness_push(h, gst_buffer_ref(in)), GST_FLOW_OK);
    out = gst_harness_pull(h);
    fail_unless(out != in, "case %u: passed through", i);
    fail_unless(same_bytes(out, expected), "case %u: output differs from the library's", i);
    message = pop_lumahist_message(bus);
    check_message_stats(gst_message_get_structure(message), &stats, TRUE);
    gst_message_unref(message);

    lh_stats_clear(&stats);
    gst_buffer_unref(plain);
    gst_buffer_unref(expected);
    gst_buffer_unref(out);
    gst_buffer_unref(in);
    g_free(caps_string);
    harness_free(h, bus);
  }
}
GST_END_TEST;

/* The mode and the overlay may change while playing: passthrough follows. */
GST_START_TEST(test_mode_change_while_playing)
{
  const gchar *caps_string = "video/x-raw,format=GRAY8,width=32,height=32,framerate=25/1";
  GstVideoInfo info = lhc_info_from_string(caps_string);
  GstBus *bus;
  GstHarness *h =
      harness_new(&bus, "backend", 1, "attach-meta", FALSE, "post-messages", FALSE, NULL);
  LhEqualizeOptions equalize;
  GstBuffer *in, *out, *expected;

  lh_equalize_options_init(&equalize);
  gst_harness_set_src_caps_str(h, caps_string);
  in = lhc_low_contrast_frame(&info, 1, 0);
  fail_unless_equals_int(gst_harness_push(h, gst_buffer_ref(in)), GST_FLOW_OK);
  out = gst_harness_pull(h);
  fail_unless(out == in);
  gst_buffer_unref(out);
  gst_buffer_unref(in);

  g_object_set(h->element, "mode", 1 /* equalize */, NULL);
  in = lhc_low_contrast_frame(&info, 2, 40 * GST_MSECOND);
  expected = lhc_library_output(in, &info, &equalize, NULL, NULL);
  fail_unless_equals_int(gst_harness_push(h, in), GST_FLOW_OK);
  out = gst_harness_pull(h);
  fail_unless(same_bytes(out, expected));
  gst_buffer_unref(out);
  gst_buffer_unref(expected);

  g_object_set(h->element, "mode", 0 /* analyze */, NULL);
  in = lhc_low_contrast_frame(&info, 3, 80 * GST_MSECOND);
  fail_unless_equals_int(gst_harness_push(h, gst_buffer_ref(in)), GST_FLOW_OK);
  out = gst_harness_pull(h);
  fail_unless(out == in);
  gst_buffer_unref(out);
  gst_buffer_unref(in);
  harness_free(h, bus);
}
GST_END_TEST;

/* What test_mode_change_over_tee shares with its probes and its thread. */
typedef struct {
  GstElement *lumahist;
  GstBuffer *reference; /* the frame as videotestsrc made it (gradient: the same each time) */
  gint stop;
  guint changed;  /* frames of the other branch not as they were made */
  guint received; /* frames of the other branch */
} TeeRace;

static GstPadProbeReturn keep_reference(GstPad *pad, GstPadProbeInfo *info, gpointer data)
{
  TeeRace *race = data;

  if (!race->reference)
    race->reference = gst_buffer_copy_deep(GST_PAD_PROBE_INFO_BUFFER(info));
  return GST_PAD_PROBE_OK;
}

static GstPadProbeReturn compare_with_reference(GstPad *pad, GstPadProbeInfo *info, gpointer data)
{
  TeeRace *race = data;

  race->received++;
  if (!same_bytes(GST_PAD_PROBE_INFO_BUFFER(info), race->reference))
    race->changed++;
  return GST_PAD_PROBE_OK;
}

static gpointer toggle_mode_and_overlay(gpointer data)
{
  TeeRace *race = data;

  for (guint i = 0; !g_atomic_int_get(&race->stop); i++) {
    if (i % 4 < 2)
      g_object_set(race->lumahist, "mode", i % 2 /* equalize, analyze */, NULL);
    else
      g_object_set(race->lumahist, "overlay", i % 2 == 0, NULL);
  }
  return NULL;
}

/* mode and overlay set from another thread while frames come through a tee,
 * which makes them read-only: the base class may pass a frame through, not
 * made writable, and the element then see the new value.  Such a frame is
 * analysed, not rewritten: no critical on mapping it, no error, and the
 * other branch gets every frame as it was made.  (Before the fix, a
 * "write map requested on non-writable buffer" critical, then the error
 * "Could not map a video frame", within a few thousand frames.) */
GST_START_TEST(test_mode_change_over_tee)
{
  GstElement *pipeline =
      gst_parse_launch("videotestsrc num-buffers=20000 pattern=gradient ! "
                       "video/x-raw,format=GRAY8,width=64,height=48,framerate=25/1 ! tee name=t "
                       "t. ! queue ! fakesink name=other sync=false "
                       "t. ! lumahist name=l backend=cpu post-messages=false attach-meta=false ! "
                       "fakesink sync=false",
                       NULL);
  TeeRace race = {NULL, NULL, 0, 0, 0};
  GstElement *tee, *other;
  GstPad *pad;
  GstBus *bus;
  GstMessage *message;
  GThread *thread;

  fail_unless(pipeline != NULL);
  race.lumahist = gst_bin_get_by_name(GST_BIN(pipeline), "l");
  tee = gst_bin_get_by_name(GST_BIN(pipeline), "t");
  other = gst_bin_get_by_name(GST_BIN(pipeline), "other");
  pad = gst_element_get_static_pad(tee, "sink");
  gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_BUFFER, keep_reference, &race, NULL);
  gst_object_unref(pad);
  pad = gst_element_get_static_pad(other, "sink");
  gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_BUFFER, compare_with_reference, &race, NULL);
  gst_object_unref(pad);

  thread = g_thread_new("toggle", toggle_mode_and_overlay, &race);
  fail_unless(gst_element_set_state(pipeline, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE);
  bus = gst_element_get_bus(pipeline);
  message = gst_bus_timed_pop_filtered(bus, 50 * GST_SECOND, GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  g_atomic_int_set(&race.stop, 1);
  g_thread_join(thread);
  fail_unless(message != NULL, "timeout");
  if (GST_MESSAGE_TYPE(message) == GST_MESSAGE_ERROR) {
    GError *error = NULL;
    gst_message_parse_error(message, &error, NULL);
    fail("error: %s", error->message);
  }
  fail_unless(gst_element_set_state(pipeline, GST_STATE_NULL) == GST_STATE_CHANGE_SUCCESS);
  fail_unless_equals_int(race.received, 20000);
  fail_unless_equals_int(race.changed, 0);

  gst_message_unref(message);
  gst_object_unref(bus);
  gst_buffer_unref(race.reference);
  gst_object_unref(other);
  gst_object_unref(tee);
  gst_object_unref(race.lumahist);
  gst_object_unref(pipeline);
}
GST_END_TEST;

/* Two threads setting `mode` at once, one to analyze and one to equalize,
 * round after round: when both are done, passthrough must be what the mode
 * that stayed says.  The element read the mode under its lock and set
 * passthrough after letting go, so the thread that lost the race for the
 * mode could set passthrough last: mode=equalize with passthrough on, and
 * frames others also hold (a tee) analysed but never equalized.  The race
 * is narrow: it takes many rounds to show (3 runs in 5 at 100000 rounds
 * before the fix). */
typedef struct {
  GstElement *element;
  gint mode;   /* what this thread sets */
  gint *round; /* atomic: the round to play, 0 to stop */
  gint *done;  /* atomic: the sets done, two a round */
} ModeSetter;

static gpointer set_mode_each_round(gpointer data)
{
  ModeSetter *setter = data;
  for (gint played = -1;;) {
    gint round;
    while ((round = g_atomic_int_get(setter->round)) == played)
      g_thread_yield(); /* both threads start a round together */
    if (round == 0)
      return NULL;
    played = round;
    g_object_set(setter->element, "mode", setter->mode, NULL);
    g_atomic_int_inc(setter->done);
  }
}

GST_START_TEST(test_mode_set_from_two_threads)
{
  GstElement *element = gst_element_factory_make("lumahist", NULL);
  gint round = -1, done = 0, inconsistent = 0, mode;
  ModeSetter setters[2] = {{element, 0, &round, &done}, {element, 1, &round, &done}};
  GThread *threads[2];
  const gint rounds = 300000;

  fail_unless(element != NULL);
  g_atomic_int_set(&round, -1);
  for (int i = 0; i < 2; i++)
    threads[i] = g_thread_new("mode-setter", set_mode_each_round, &setters[i]);
  for (gint r = 1; r <= rounds; r++) {
    g_atomic_int_set(&round, r);
    while (g_atomic_int_get(&done) < 2 * r)
      g_thread_yield();
    g_object_get(element, "mode", &mode, NULL);
    if (gst_base_transform_is_passthrough(GST_BASE_TRANSFORM(element)) != (mode == 0))
      inconsistent++;
  }
  g_atomic_int_set(&round, 0);
  for (int i = 0; i < 2; i++)
    g_thread_join(threads[i]);
  fail_unless_equals_int(inconsistent, 0);
  gst_object_unref(element);
}
GST_END_TEST;

/* A buffer without memory between two frames (an application's
 * gst_buffer_new(), as a gap without the flag): it goes on untouched, gets
 * no message and no meta, and is not counted as a frame; in every mode. */
GST_START_TEST(test_empty_buffer)
{
  const gchar *caps_string = "video/x-raw,format=GRAY8,width=16,height=16,framerate=25/1";
  GstVideoInfo info = lhc_info_from_string(caps_string);

  for (guint i = 0; i < 3; i++) {
    GstBus *bus;
    GstHarness *h = harness_new(&bus, "backend", 1, "mode", i == 1 ? 1 /* equalize */ : 0,
                                "overlay", i == 2, NULL);
    GstBuffer *empty = gst_buffer_new();
    GstBuffer *out;
    GstMessage *message;

    GST_INFO("mode %s", i == 0 ? "analyze" : i == 1 ? "equalize" : "overlay");
    gst_harness_set_src_caps_str(h, caps_string);
    fail_unless_equals_int(gst_harness_push(h, lhc_random_frame(&info, 60, 0)), GST_FLOW_OK);
    gst_buffer_unref(gst_harness_pull(h));
    GST_BUFFER_PTS(empty) = 40 * GST_MSECOND;
    fail_unless_equals_int(gst_harness_push(h, empty), GST_FLOW_OK);
    out = gst_harness_pull(h);
    fail_unless_equals_uint64(gst_buffer_get_size(out), 0);
    fail_unless_equals_uint64(GST_BUFFER_PTS(out), 40 * GST_MSECOND);
    fail_unless(gst_buffer_get_lumahist_meta(out) == NULL);
    gst_buffer_unref(out);
    fail_unless_equals_int(gst_harness_push(h, lhc_random_frame(&info, 61, 80 * GST_MSECOND)),
                           GST_FLOW_OK);
    gst_buffer_unref(gst_harness_pull(h));

    /* Frames 0 and 1: the two pictures, nothing for the empty buffer. */
    for (guint64 frame = 0; frame < 2; frame++) {
      message = pop_lumahist_message(bus);
      fail_unless_equals_uint64(get_uint64(gst_message_get_structure(message), "frame"), frame);
      fail_unless_equals_uint64(get_uint64(gst_message_get_structure(message), "timestamp"),
                                frame * 80 * GST_MSECOND);
      gst_message_unref(message);
    }
    assert_no_lumahist_message(bus);
    message = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR);
    fail_unless(message == NULL, "error %" GST_PTR_FORMAT, message);
    harness_free(h, bus);
  }
}
GST_END_TEST;

/* A tag list of image-orientation value (NULL: another tag only) in scope. */
static GstEvent *orientation_tag(const gchar *value, GstTagScope scope)
{
  GstTagList *tags = value ? gst_tag_list_new(GST_TAG_IMAGE_ORIENTATION, value, NULL)
                           : gst_tag_list_new(GST_TAG_TITLE, "clip", NULL);
  gst_tag_list_set_scope(tags, scope);
  return gst_event_new_tag(tags);
}

/* overlay-direction turns the panel as videoflip's video-direction turns the
 * picture; auto follows the image-orientation tags as videoflip
 * video-direction=auto does (a stream tag over a global one, a stream tag
 * list without it gives the global one back, a new stream forgets both), so
 * that after such a videoflip the panel stands upright, bottom left. */
GST_START_TEST(test_overlay_direction)
{
  static const struct {
    GstVideoOrientationMethod direction;
    const gchar *global_tag, *stream_tag; /* "": a list without the tag */
    gboolean new_stream;                  /* a stream-start after the tags */
    gint orientation;                     /* Exif's, the library's */
  } cases[] = {
      {GST_VIDEO_ORIENTATION_IDENTITY, NULL, "rotate-90", FALSE, 1},
      {GST_VIDEO_ORIENTATION_90R, NULL, NULL, FALSE, 6},
      {GST_VIDEO_ORIENTATION_UR_LL, NULL, "rotate-180", FALSE, 7},
      {GST_VIDEO_ORIENTATION_AUTO, NULL, NULL, FALSE, 1},
      {GST_VIDEO_ORIENTATION_AUTO, NULL, "rotate-90", FALSE, 6},
      {GST_VIDEO_ORIENTATION_AUTO, NULL, "rotate-270", FALSE, 8},
      {GST_VIDEO_ORIENTATION_AUTO, "flip-rotate-0", NULL, FALSE, 2},
      {GST_VIDEO_ORIENTATION_AUTO, "rotate-180", "flip-rotate-270", FALSE, 5},
      {GST_VIDEO_ORIENTATION_AUTO, "rotate-180", "", FALSE, 3},
      {GST_VIDEO_ORIENTATION_AUTO, "rotate-180", "rotate-90", TRUE, 1},
  };
  const gchar *caps_string = "video/x-raw,format=I420,width=90,height=60,framerate=25/1";
  GstVideoInfo info = lhc_info_from_string(caps_string);
  GstBuffer *in = lhc_random_frame(&info, 77, 0);
  GstBuffer *upright;
  LhOverlayOptions overlay;
  LhStats stats;

  lhc_library_stats(in, &info, LH_MATRIX_BT601, LH_RANGE_LIMITED, "1,5,50,95,99", &stats);
  lh_overlay_options_init(&overlay);
  overlay.matrix = LH_MATRIX_BT601;
  overlay.range = LH_RANGE_LIMITED;
  upright = lhc_library_output(in, &info, NULL, &overlay, &stats);
  for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
    GstBus *bus;
    GstHarness *h = harness_new(&bus, "backend", 1, "overlay", TRUE, "matrix", 1,
                                "overlay-direction", cases[i].direction, NULL);
    GstBuffer *out, *expected;

    GST_INFO("case %u", i);
    gst_harness_set_src_caps_str(h, caps_string);
    if (cases[i].global_tag)
      gst_harness_push_event(h, orientation_tag(cases[i].global_tag, GST_TAG_SCOPE_GLOBAL));
    if (cases[i].stream_tag)
      gst_harness_push_event(h, orientation_tag(*cases[i].stream_tag ? cases[i].stream_tag : NULL,
                                                GST_TAG_SCOPE_STREAM));
    if (cases[i].new_stream)
      gst_harness_push_event(h, gst_event_new_stream_start("the next clip"));
    overlay.orientation = cases[i].orientation;
    expected = lhc_library_output(in, &info, NULL, &overlay, &stats);
    fail_unless(cases[i].orientation == 1 || !same_bytes(expected, upright),
                "case %u: the turned panel is the upright one: the test proves nothing", i);
    fail_unless_equals_int(gst_harness_push(h, gst_buffer_ref(in)), GST_FLOW_OK);
    out = gst_harness_pull(h);
    fail_unless(same_bytes(out, expected), "case %u: not the panel of Exif orientation %d", i,
                cases[i].orientation);
    gst_buffer_unref(out);
    gst_buffer_unref(expected);
    harness_free(h, bus);
  }

  /* custom is no turn: refused, the direction stays. */
  {
    GstElement *element = gst_element_factory_make("lumahist", NULL);
    GstVideoOrientationMethod direction;
    g_object_set(element, "overlay-direction", GST_VIDEO_ORIENTATION_90L, NULL);
    ASSERT_WARNING(g_object_set(element, "overlay-direction", GST_VIDEO_ORIENTATION_CUSTOM, NULL));
    g_object_get(element, "overlay-direction", &direction, NULL);
    fail_unless_equals_int(direction, GST_VIDEO_ORIENTATION_90L);
    gst_object_unref(element);
  }
  gst_buffer_unref(upright);
  lh_stats_clear(&stats);
  gst_buffer_unref(in);
}
GST_END_TEST;

/* mode=clahe lays its grid on the picture as overlay-direction shows it (a
 * non-square grid on sides no tile count divides), as the library does for
 * that Exif orientation: it was the stored frame's grid whatever the
 * direction. */
GST_START_TEST(test_clahe_direction)
{
  static const struct {
    GstVideoOrientationMethod direction;
    const gchar *stream_tag;
    gint orientation; /* Exif's, the library's */
  } cases[] = {
      {GST_VIDEO_ORIENTATION_IDENTITY, "rotate-90", 1},
      {GST_VIDEO_ORIENTATION_90R, NULL, 6},
      {GST_VIDEO_ORIENTATION_AUTO, "rotate-270", 8},
      {GST_VIDEO_ORIENTATION_AUTO, "flip-rotate-0", 2},
      {GST_VIDEO_ORIENTATION_UL_LR, NULL, 5},
  };
  const gchar *caps_string = "video/x-raw,format=I420,width=91,height=61,framerate=25/1";
  GstVideoInfo info = lhc_info_from_string(caps_string);
  GstBuffer *in = lhc_random_frame(&info, 78, 0);
  LhEqualizeOptions clahe;
  GstBuffer *upright;

  lh_equalize_options_init(&clahe);
  clahe.mode = LH_EQUALIZE_CLAHE;
  clahe.tiles_x = 8;
  clahe.tiles_y = 3;
  clahe.matrix = LH_MATRIX_BT709;
  clahe.range = LH_RANGE_LIMITED;
  upright = lhc_library_output(in, &info, &clahe, NULL, NULL);
  for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
    GstBus *bus;
    GstHarness *h =
        harness_new(&bus, "backend", 1, "mode", 2 /* clahe */, "tiles-x", 8, "tiles-y", 3,
                    "temporal-window", 1, "overlay-direction", cases[i].direction, NULL);
    GstBuffer *out, *expected;

    GST_INFO("case %u", i);
    gst_harness_set_src_caps_str(h, caps_string);
    if (cases[i].stream_tag)
      gst_harness_push_event(h, orientation_tag(cases[i].stream_tag, GST_TAG_SCOPE_STREAM));
    clahe.orientation = cases[i].orientation;
    expected = lhc_library_output(in, &info, &clahe, NULL, NULL);
    fail_unless(cases[i].orientation == 1 || !same_bytes(expected, upright),
                "case %u: the turned grid gives the upright one's frame: the test proves nothing",
                i);
    fail_unless_equals_int(gst_harness_push(h, gst_buffer_ref(in)), GST_FLOW_OK);
    out = gst_harness_pull(h);
    fail_unless(same_bytes(out, expected), "case %u: not CLAHE of Exif orientation %d", i,
                cases[i].orientation);
    gst_buffer_unref(out);
    gst_buffer_unref(expected);
    harness_free(h, bus);
  }
  gst_buffer_unref(upright);
  gst_buffer_unref(in);
}
GST_END_TEST;

/* Upstream asks whether it may leave cropping to downstream (videocrop, and
 * decoders with padded frames, attach a GstVideoCropMeta then).  The element
 * analyses and rewrites the whole frame it is given, so it must not pass on
 * downstream's yes (fakevideosink's, a display sink's): with it, `videocrop
 * ! lumahist ! fakevideosink` measured the uncropped picture, count and all. */
GST_START_TEST(test_crop_meta_not_proposed)
{
  const gchar *caps_string = "video/x-raw,format=I420,width=64,height=48,framerate=25/1";

  for (guint mode = 0; mode < 2; mode++) {
    GstBus *bus;
    GstHarness *h = harness_new(&bus, "backend", 1, "mode", mode /* analyze, equalize */, NULL);
    GstCaps *caps = gst_caps_from_string(caps_string);
    GstQuery *query;

    GST_INFO("mode %s", mode ? "equalize" : "analyze");
    gst_harness_add_propose_allocation_meta(h, GST_VIDEO_META_API_TYPE, NULL);
    gst_harness_add_propose_allocation_meta(h, GST_VIDEO_CROP_META_API_TYPE, NULL);
    gst_harness_set_src_caps(h, gst_caps_ref(caps));
    query = gst_query_new_allocation(caps, TRUE);
    fail_unless(gst_pad_peer_query(h->srcpad, query));
    /* Downstream's answer came through... */
    fail_unless(gst_query_find_allocation_meta(query, GST_VIDEO_META_API_TYPE, NULL));
    /* ...without the crop meta. */
    fail_if(gst_query_find_allocation_meta(query, GST_VIDEO_CROP_META_API_TYPE, NULL),
            "the crop meta was proposed upstream in mode %u", mode);
    gst_query_unref(query);
    gst_caps_unref(caps);
    harness_free(h, bus);
  }
}
GST_END_TEST;

/* overlay-width and overlay-height take 0 (the default placement) or 3 ..
 * 65536, the sides lh_overlay() draws: a side of 1 or 2, set while playing,
 * is refused with a warning and the previous one stays (it used to be taken
 * and fail every frame after it), and one above 65536 is out of the param
 * spec's range.  A panel off the frame draws nothing and fails nothing. */
GST_START_TEST(test_overlay_size_property)
{
  const gchar *caps_string = "video/x-raw,format=GRAY8,width=32,height=24,framerate=25/1";
  GstVideoInfo info = lhc_info_from_string(caps_string);
  GstBus *bus;
  GstHarness *h = harness_new(&bus, "backend", 1, "overlay", TRUE, "overlay-width", 20,
                              "overlay-height", 10, "post-messages", FALSE, NULL);
  GParamSpecInt *spec;
  GstBuffer *in, *out, *expected;
  LhOverlayOptions overlay;
  LhStats stats;
  gint width, height;

  spec = G_PARAM_SPEC_INT(
      g_object_class_find_property(G_OBJECT_GET_CLASS(h->element), "overlay-width"));
  fail_unless_equals_int(spec->minimum, 0);
  fail_unless_equals_int(spec->maximum, 65536);
  spec = G_PARAM_SPEC_INT(
      g_object_class_find_property(G_OBJECT_GET_CLASS(h->element), "overlay-height"));
  fail_unless_equals_int(spec->minimum, 0);
  fail_unless_equals_int(spec->maximum, 65536);

  gst_harness_set_src_caps_str(h, caps_string);
  fail_unless_equals_int(gst_harness_push(h, lhc_random_frame(&info, 70, 0)), GST_FLOW_OK);
  gst_buffer_unref(gst_harness_pull(h));

  /* While playing: refused, and the next frame gets the 20x10 panel. */
  ASSERT_WARNING(g_object_set(h->element, "overlay-width", 2, NULL));
  ASSERT_WARNING(g_object_set(h->element, "overlay-height", 1, NULL));
  ASSERT_WARNING(g_object_set(h->element, "overlay-width", 65537, NULL));
  g_object_get(h->element, "overlay-width", &width, "overlay-height", &height, NULL);
  fail_unless_equals_int(width, 20);
  fail_unless_equals_int(height, 10);
  in = lhc_random_frame(&info, 71, 40 * GST_MSECOND);
  lhc_library_stats(in, &info, LH_MATRIX_BT601, LH_RANGE_FULL, "1,5,50,95,99", &stats);
  lh_overlay_options_init(&overlay);
  overlay.rect = (LhRect){0, 0, 20, 10};
  overlay.matrix = LH_MATRIX_BT601;
  overlay.range = LH_RANGE_FULL;
  expected = lhc_library_output(in, &info, NULL, &overlay, &stats);
  fail_unless_equals_int(gst_harness_push(h, in), GST_FLOW_OK);
  out = gst_harness_pull(h);
  fail_unless(same_bytes(out, expected), "not the 20x10 panel");
  gst_buffer_unref(out);
  gst_buffer_unref(expected);
  lh_stats_clear(&stats);

  /* 0 and the largest sides are taken; the largest panel at the far corner
   * lies off the frame and draws nothing. */
  g_object_set(h->element, "overlay-width", 0, "overlay-height", 0, NULL);
  g_object_set(h->element, "overlay-x", G_MAXINT, "overlay-y", G_MAXINT, "overlay-width", 65536,
               "overlay-height", 65536, NULL);
  g_object_get(h->element, "overlay-width", &width, "overlay-height", &height, NULL);
  fail_unless_equals_int(width, 65536);
  fail_unless_equals_int(height, 65536);
  in = lhc_random_frame(&info, 72, 80 * GST_MSECOND);
  expected = gst_buffer_copy_deep(in);
  fail_unless_equals_int(gst_harness_push(h, in), GST_FLOW_OK);
  out = gst_harness_pull(h);
  fail_unless(same_bytes(out, expected), "a panel off the frame drew");
  gst_buffer_unref(out);
  gst_buffer_unref(expected);
  fail_unless(gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR) == NULL);
  harness_free(h, bus);
}
GST_END_TEST;

/* Runs a pipeline to EOS; returns the number of lumahist messages and counts
 * warnings.  Each message's frame index must follow the previous. */
static guint run_to_eos(GstElement *pipeline, guint *warnings, gchar **backend_in_messages)
{
  GstBus *bus = gst_element_get_bus(pipeline);
  guint n = 0;
  gboolean done = FALSE;

  *warnings = 0;
  fail_unless(gst_element_set_state(pipeline, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE);
  while (!done) {
    GstMessage *message = gst_bus_timed_pop_filtered(bus, 10 * GST_SECOND,
                                                     GST_MESSAGE_EOS | GST_MESSAGE_ERROR |
                                                         GST_MESSAGE_WARNING | GST_MESSAGE_ELEMENT);
    fail_unless(message != NULL, "timeout");
    switch (GST_MESSAGE_TYPE(message)) {
    case GST_MESSAGE_EOS:
      done = TRUE;
      break;
    case GST_MESSAGE_ERROR: {
      GError *error = NULL;
      gst_message_parse_error(message, &error, NULL);
      fail("error: %s", error->message);
      break;
    }
    case GST_MESSAGE_WARNING:
      (*warnings)++;
      break;
    default: {
      const GstStructure *s = gst_message_get_structure(message);
      if (gst_structure_has_name(s, "lumahist")) {
        fail_unless_equals_uint64(get_uint64(s, "frame"), n);
        g_free(*backend_in_messages);
        *backend_in_messages = g_strdup(get_string(s, "backend"));
        n++;
      }
      break;
    }
    }
    gst_message_unref(message);
  }
  gst_object_unref(bus);
  return n;
}

/* The histogram of a message as counts. */
static guint64 *message_histogram(const GstStructure *s, guint *n_bins)
{
  const GValue *array = gst_structure_get_value(s, "histogram");
  guint64 *counts;

  fail_unless(array != NULL && GST_VALUE_HOLDS_ARRAY(array), "no histogram");
  *n_bins = gst_value_array_get_size(array);
  counts = g_new(guint64, *n_bins);
  for (guint i = 0; i < *n_bins; i++)
    counts[i] = g_value_get_uint64(gst_value_array_get_value(array, i));
  return counts;
}

/* The YUV formats of cameras and decoders against the same frames converted
 * by videoconvert to GRAY8 or GRAY16_LE, a format the element already had:
 * the same Y statistics (8 bits), or for 10 and 12 bits the same counts at
 * the codes videoconvert widens each value to (v << 6 | v >> 4, v << 4 |
 * v >> 8).  videotestsrc's snow gives random Y. */
GST_START_TEST(test_yuv_against_videoconvert)
{
  for (guint i = 0; i < lhc_n_formats; i++) {
    const LhcFormat *f = &lhc_formats[i];
    if (f->lh < LH_FORMAT_YV12 || f->lh > LH_FORMAT_P016)
      continue;
    const gchar *gray = f->depth == 8 ? "GRAY8" : "GRAY16_LE";
    gchar *description = g_strdup_printf(
        "videotestsrc num-buffers=2 pattern=snow ! video/x-raw,format=%s,width=67,height=35 "
        "! tee name=t t. ! queue ! lumahist name=direct backend=cpu ! fakesink "
        "t. ! queue ! videoconvert dither=none ! video/x-raw,format=%s "
        "! lumahist name=converted backend=cpu ! fakesink",
        f->name, gray);
    GError *error = NULL;
    GstElement *pipeline = gst_parse_launch(description, &error);
    fail_unless(pipeline != NULL && error == NULL, "%s: %s", description,
                error ? error->message : "");
    GstBus *bus = gst_element_get_bus(pipeline);
    guint64 *direct[2] = {NULL, NULL}, *converted[2] = {NULL, NULL};
    guint direct_bins = 0, converted_bins = 0, n_direct = 0, n_converted = 0;
    gboolean done = FALSE;

    GST_INFO("format %s against %s", f->name, gray);
    fail_unless(gst_element_set_state(pipeline, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE);
    while (!done) {
      GstMessage *message = gst_bus_timed_pop_filtered(
          bus, 10 * GST_SECOND, GST_MESSAGE_EOS | GST_MESSAGE_ERROR | GST_MESSAGE_ELEMENT);
      fail_unless(message != NULL, "%s: timeout", f->name);
      if (GST_MESSAGE_TYPE(message) == GST_MESSAGE_ERROR) {
        GError *e = NULL;
        gst_message_parse_error(message, &e, NULL);
        fail("%s: error: %s", f->name, e->message);
      } else if (GST_MESSAGE_TYPE(message) == GST_MESSAGE_EOS) {
        done = TRUE;
      } else if (gst_structure_has_name(gst_message_get_structure(message), "lumahist")) {
        const GstStructure *s = gst_message_get_structure(message);
        gboolean is_direct = g_strcmp0(GST_OBJECT_NAME(GST_MESSAGE_SRC(message)), "direct") == 0;
        guint *n = is_direct ? &n_direct : &n_converted;
        fail_unless(*n < 2);
        if (is_direct) {
          fail_unless_equals_int(get_int(s, "bit-depth"), f->depth);
          fail_unless_equals_string(get_string(s, "format"), f->name);
          direct[*n] = message_histogram(s, &direct_bins);
        } else {
          converted[*n] = message_histogram(s, &converted_bins);
        }
        (*n)++;
      }
      gst_message_unref(message);
    }
    fail_unless_equals_int(n_direct, 2);
    fail_unless_equals_int(n_converted, 2);
    fail_unless_equals_int(direct_bins, 1u << f->depth);
    for (guint frame = 0; frame < 2; frame++) {
      guint64 nonzero = 0;
      for (guint v = 0; v < direct_bins; v++) {
        guint wide = f->depth == 10 ? (v << 6 | v >> 4) : f->depth == 12 ? (v << 4 | v >> 8) : v;
        fail_unless(wide < converted_bins);
        fail_unless(direct[frame][v] == converted[frame][wide],
                    "%s frame %u: code %u counts %" G_GUINT64_FORMAT
                    ", %s code %u %" G_GUINT64_FORMAT,
                    f->name, frame, v, direct[frame][v], gray, wide, converted[frame][wide]);
        nonzero += direct[frame][v] != 0;
      }
      fail_unless(nonzero > 16, "%s: snow gave only %" G_GUINT64_FORMAT " values", f->name,
                  nonzero);
      g_free(direct[frame]);
      g_free(converted[frame]);
    }
    fail_unless(gst_element_set_state(pipeline, GST_STATE_NULL) == GST_STATE_CHANGE_SUCCESS);
    gst_object_unref(bus);
    gst_object_unref(pipeline);
    g_free(description);
  }
}
GST_END_TEST;

static gchar *active_backend(GstElement *pipeline)
{
  GstElement *element = gst_bin_get_by_name(GST_BIN(pipeline), "l");
  gchar *name = NULL;

  g_object_get(element, "active-backend", &name, NULL);
  gst_object_unref(element);
  return name;
}

GST_START_TEST(test_state_cycles)
{
  GstElement *pipeline = gst_parse_launch(
      "videotestsrc num-buffers=4 pattern=ball ! video/x-raw,format=I420,width=64,height=48 ! "
      "lumahist name=l backend=cpu ! fakesink",
      NULL);
  gchar *name;

  fail_unless(pipeline != NULL);
  name = active_backend(pipeline);
  fail_unless_equals_string(name, "none");
  g_free(name);
  for (guint cycle = 0; cycle < 5; cycle++) {
    guint warnings;
    gchar *backend = NULL;

    fail_unless_equals_int(run_to_eos(pipeline, &warnings, &backend), 4);
    fail_unless_equals_int(warnings, 0);
    fail_unless_equals_string(backend, "cpu");
    name = active_backend(pipeline);
    fail_unless_equals_string(name, "cpu");
    g_free(name);
    g_free(backend);
    fail_unless_equals_int(gst_element_set_state(pipeline, GST_STATE_NULL),
                           GST_STATE_CHANGE_SUCCESS);
    name = active_backend(pipeline);
    fail_unless_equals_string(name, "none");
    g_free(name);
  }
  gst_object_unref(pipeline);
}
GST_END_TEST;

/* A property read when the element starts (backend, cuda-device-id,
 * n-threads, page-lock), changed while it runs, reads back at once but acts
 * at the next start: one warning on the bus says so, naming it; in READY
 * none. */
GST_START_TEST(test_start_property_changed_while_running)
{
  GstElement *pipeline =
      gst_parse_launch("videotestsrc pattern=ball ! video/x-raw,format=I420,width=64,height=48 ! "
                       "lumahist name=l backend=cpu ! fakesink",
                       NULL);
  GstElement *element = gst_bin_get_by_name(GST_BIN(pipeline), "l");
  GstBus *bus = gst_element_get_bus(pipeline);
  GstMessage *message;
  GError *error = NULL;
  gchar *debug = NULL;

  fail_unless_equals_int(gst_element_set_state(pipeline, GST_STATE_READY),
                         GST_STATE_CHANGE_SUCCESS);
  g_object_set(element, "n-threads", 2, NULL);
  fail_unless(gst_bus_pop_filtered(bus, GST_MESSAGE_WARNING) == NULL);
  gst_element_set_state(pipeline, GST_STATE_PAUSED);
  fail_unless_equals_int(gst_element_get_state(pipeline, NULL, NULL, 5 * GST_SECOND),
                         GST_STATE_CHANGE_SUCCESS);
  g_object_set(element, "n-threads", 3, NULL);
  message = gst_bus_timed_pop_filtered(bus, GST_SECOND, GST_MESSAGE_WARNING);
  fail_unless(message != NULL, "no warning for n-threads changed while PAUSED");
  gst_message_parse_warning(message, &error, &debug);
  fail_unless(strstr(error->message, "n-threads was changed while PAUSED") != NULL, "%s",
              error->message);
  g_clear_error(&error);
  g_free(debug);
  gst_message_unref(message);
  /* A property that acts at once says nothing. */
  g_object_set(element, "mode", 1, NULL);
  fail_unless(gst_bus_pop_filtered(bus, GST_MESSAGE_WARNING) == NULL);
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(bus);
  gst_object_unref(element);
  gst_object_unref(pipeline);
}
GST_END_TEST;

/* backend=auto: CUDA where a device is usable, else the CPU with exactly one
 * warning; the messages name the backend that active-backend reports. */
GST_START_TEST(test_backend_auto)
{
  GstElement *pipeline =
      gst_parse_launch("videotestsrc num-buffers=3 ! video/x-raw,format=NV12,width=64,height=48 ! "
                       "lumahist name=l ! fakesink",
                       NULL);
  guint warnings;
  gchar *backend = NULL, *active;

  fail_unless_equals_int(run_to_eos(pipeline, &warnings, &backend), 3);
  active = active_backend(pipeline);
  GST_INFO("active backend %s, %u warnings", active, warnings);
  fail_unless_equals_string(backend, active);
  if (strcmp(active, "cpu") == 0) {
    fail_unless_equals_int(warnings, 1);
  } else {
    fail_unless_equals_string(active, "cuda");
    fail_unless_equals_int(warnings, 0);
  }
  fail_unless_equals_int(gst_element_set_state(pipeline, GST_STATE_NULL), GST_STATE_CHANGE_SUCCESS);

  /* Without a device, backend=cuda must refuse to start with an error. */
  if (strcmp(active, "cpu") == 0) {
    GstElement *element = gst_bin_get_by_name(GST_BIN(pipeline), "l");
    GstBus *bus = gst_element_get_bus(pipeline);
    GstMessage *error;

    g_object_set(element, "backend", 2 /* cuda */, NULL);
    fail_unless_equals_int(gst_element_set_state(pipeline, GST_STATE_PAUSED),
                           GST_STATE_CHANGE_FAILURE);
    error = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR);
    fail_unless(error != NULL);
    fail_unless(GST_MESSAGE_SRC(error) == GST_OBJECT(element));
    gst_message_unref(error);
    gst_element_set_state(pipeline, GST_STATE_NULL);
    gst_object_unref(bus);
    gst_object_unref(element);
  }
  g_free(active);
  g_free(backend);
  gst_object_unref(pipeline);
}
GST_END_TEST;

static void count_notify(GObject *object, GParamSpec *pspec, gpointer data)
{
  (*(guint *)data)++;
}

/* backend=auto decides per frame (on a GPU host, a frame in pageable memory
 * goes to the CPU or the GPU by measured cost; here, with no GPU, always the
 * CPU): every frame's message and meta name the backend that analysed it,
 * one of the two, active-backend follows the last frame and is notified at
 * each change, and the numbers and the equalized bytes are the CPU
 * library's whatever the choice.  Frames are new buffers each time
 * (pageable, never page-locked), of an odd size. */
GST_START_TEST(test_backend_auto_per_frame)
{
  const gchar *caps_string = "video/x-raw,format=NV12,width=97,height=61,framerate=25/1";
  GstVideoInfo info = lhc_info_from_string(caps_string);

  for (guint mode = 0; mode < 2; mode++) {
    GstBus *bus;
    GstHarness *h =
        harness_new(&bus, "mode", mode /* analyze, equalize */, "matrix", 1, "range", 1, NULL);
    guint notifies = 0, changes = 0, on[2] = {0, 0};
    gchar *previous = NULL;
    LhEqualizeOptions equalize;

    lh_equalize_options_init(&equalize);
    gst_harness_set_src_caps_str(h, caps_string);
    g_object_get(h->element, "active-backend", &previous, NULL);
    GST_INFO("mode %u: active-backend %s at the start", mode, previous);
    fail_unless(strcmp(previous, "cpu") == 0 || strcmp(previous, "cuda") == 0);
    g_signal_connect(h->element, "notify::active-backend", G_CALLBACK(count_notify), &notifies);
    for (guint i = 0; i < 24; i++) {
      GstBuffer *in = lhc_random_frame(&info, 500 + i, i * 40 * GST_MSECOND);
      GstBuffer *expected = mode ? lhc_library_output(in, &info, &equalize, NULL, NULL) : NULL;
      GstBuffer *out;
      GstMessage *message;
      const GstStructure *s;
      GstLumahistMeta *meta;
      LhStats stats;
      gchar *active = NULL;
      const gchar *backend;

      lhc_library_stats(in, &info, LH_MATRIX_BT601, LH_RANGE_FULL, "1,5,50,95,99", &stats);
      fail_unless_equals_int(gst_harness_push(h, in), GST_FLOW_OK);
      out = gst_harness_pull(h);
      message = pop_lumahist_message(bus);
      s = gst_message_get_structure(message);
      check_message_stats(s, &stats, TRUE);
      backend = get_string(s, "backend");
      fail_unless(strcmp(backend, "cpu") == 0 || strcmp(backend, "cuda") == 0, "backend %s",
                  backend);
      on[strcmp(backend, "cuda") == 0]++;
      meta = gst_buffer_get_lumahist_meta(out);
      fail_unless(meta != NULL);
      fail_unless_equals_string(lh_backend_name(meta->backend), backend);
      g_object_get(h->element, "active-backend", &active, NULL);
      if (mode == 0) {
        fail_unless_equals_string(active, backend);
      } else {
        fail_unless(same_bytes(out, expected), "frame %u: equalized on %s, not the library's", i,
                    active);
      }
      changes += strcmp(active, previous) != 0;
      g_free(previous);
      previous = active;
      if (expected)
        gst_buffer_unref(expected);
      gst_buffer_unref(out);
      gst_message_unref(message);
      lh_stats_clear(&stats);
    }
    GST_INFO("mode %u: %u frames analysed on the CPU, %u on CUDA, %u changes", mode, on[0], on[1],
             changes);
    fail_unless_equals_int(notifies, changes);
    g_free(previous);
    harness_free(h, bus);
  }
}
GST_END_TEST;

static Suite *lumahist_suite(void)
{
  Suite *s = suite_create("lumahist");
  TCase *tc = tcase_create("general");

  suite_add_tcase(s, tc);
  tcase_add_test(tc, test_negotiation_each_format);
  tcase_add_test(tc, test_rgb_deep_formats_match_videoconvert);
  tcase_add_test(tc, test_unsupported_format_refused);
  tcase_add_test(tc, test_passthrough_untouched);
  tcase_add_test(tc, test_meta);
  tcase_add_test(tc, test_colorimetry);
  tcase_add_test(tc, test_timestamps);
  tcase_add_test(tc, test_message_interval);
  tcase_add_test(tc, test_no_messages);
  tcase_add_test(tc, test_gap_with_picture_is_a_frame);
  tcase_add_test(tc, test_resolution_change);
  tcase_add_test(tc, test_flush);
  tcase_add_test(tc, test_percentiles_property);
  tcase_add_test(tc, test_equalize_each_format);
  tcase_add_test(tc, test_misaligned_samples);
  tcase_add_test(tc, test_clahe);
  tcase_add_test(tc, test_temporal_window);
  tcase_add_test(tc, test_temporal_window_restarts_on_settings);
  tcase_add_test(tc, test_temporal_window_restarts_after_analyze);
  tcase_add_test(tc, test_overlay);
  tcase_add_test(tc, test_mode_change_while_playing);
  tcase_add_test(tc, test_mode_change_over_tee);
  tcase_add_test(tc, test_mode_set_from_two_threads);
  tcase_add_test(tc, test_empty_buffer);
  tcase_add_test(tc, test_crop_meta_not_proposed);
  tcase_add_test(tc, test_overlay_size_property);
  tcase_add_test(tc, test_overlay_direction);
  tcase_add_test(tc, test_clahe_direction);
  tcase_add_test(tc, test_state_cycles);
  tcase_add_test(tc, test_start_property_changed_while_running);
  tcase_add_test(tc, test_backend_auto);
  tcase_add_test(tc, test_backend_auto_per_frame);
  tcase_add_test(tc, test_yuv_against_videoconvert);
  return s;
}

GST_CHECK_MAIN(lumahist);
