/* test-lumahist-cuda.c: tests of the lumahist element on CUDA memory
 * (cudaupload ! lumahist ! cudadownload): every format cudaupload makes, values
 * equal to the library's on the CPU, frames untouched, the buffer meta, the
 * pipeline's CUDA context shared, the CPU backend on CUDA memory, equalize,
 * CLAHE and overlay output equal to the library's, state cycles, and system
 * memory from a pool page-locked for the CUDA backend.  Exits 77 (skip), saying
 * why, where there is no CUDA device, no cudaupload element or no CUDA backend
 * in the library. */
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>
#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>
#include <gst/video/video.h>

#include <lumahist.h>

#include "gstlumahistmeta.h"
#include "lumahist-check.h"

#define N_FRAMES 3

/* The library's formats, and whether cudaupload (GStreamer 1.22) makes them. */
static const struct {
  const gchar *name;
  gboolean required;
} formats[] = {
    {"NV12", TRUE},
    {"I420", TRUE},
    {"P010_10LE", TRUE},
    {"RGBA", TRUE},
    {"BGRA", TRUE},
    {"RGBx", TRUE},
    {"BGRx", TRUE},
    {"RGB", TRUE},
    {"BGR", TRUE},
    {"GRAY8", FALSE},
    {"GRAY16_LE", FALSE},
    {"RGBA64_LE", FALSE},
    /* the YUV of cameras and decoders, where cudaupload carries them (v210
     * stays in system memory: GStreamer's CUDA elements carry none) */
    {"YV12", FALSE},
    {"NV21", FALSE},
    {"Y42B", FALSE},
    {"Y444", FALSE},
    {"NV16", FALSE},
    {"NV24", FALSE},
    {"Y41B", FALSE},
    {"YUY2", FALSE},
    {"YVYU", FALSE},
    {"UYVY", FALSE},
    {"VYUY", FALSE},
    {"GRAY16_BE", FALSE},
    {"I420_10LE", FALSE},
    {"I420_12LE", FALSE},
    {"I422_10LE", FALSE},
    {"I422_12LE", FALSE},
    {"Y444_10LE", FALSE},
    {"Y444_12LE", FALSE},
    {"Y444_16LE", FALSE},
    {"P012_LE", FALSE},
    {"P016_LE", FALSE},
    /* R'G'B' 10 and 16 bits */
    {"RGB10A2_LE", FALSE},
    {"BGR10A2_LE", FALSE},
    {"r210", FALSE},
    {"BGRA64_LE", FALSE},
};

static void check_stats_equal(const LhStats *got, const LhStats *e)
{
  fail_unless_equals_int(got->bit_depth, e->bit_depth);
  fail_unless_equals_uint64(got->count, e->count);
  fail_unless(got->mean == e->mean, "mean %.17g != %.17g", got->mean, e->mean);
  fail_unless(got->stddev == e->stddev);
  fail_unless_equals_int(got->min, e->min);
  fail_unless_equals_int(got->max, e->max);
  fail_unless_equals_int(got->median, e->median);
  fail_unless_equals_uint64(got->clipped_low_count, e->clipped_low_count);
  fail_unless_equals_uint64(got->clipped_high_count, e->clipped_high_count);
  fail_unless_equals_int(got->n_percentiles, e->n_percentiles);
  for (int i = 0; i < e->n_percentiles; i++)
    fail_unless_equals_int(got->percentile_value[i], e->percentile_value[i]);
  fail_unless_equals_uint64(got->n_bins, e->n_bins);
  fail_unless(memcmp(got->histogram, e->histogram, e->n_bins * sizeof(uint64_t)) == 0);
}

/* The message fields that carry LhStats values, read back into one. */
static void stats_from_message(const GstStructure *s, LhStats *stats)
{
  const GValue *array;
  gint depth = 0;
  guint64 count = 0, low = 0, high = 0;

  lh_stats_init(stats);
  fail_unless(gst_structure_get(
      s, "bit-depth", G_TYPE_INT, &depth, "count", G_TYPE_UINT64, &count, "mean", G_TYPE_DOUBLE,
      &stats->mean, "stddev", G_TYPE_DOUBLE, &stats->stddev, "min", G_TYPE_UINT, &stats->min, "max",
      G_TYPE_UINT, &stats->max, "median", G_TYPE_UINT, &stats->median, "clipped-low-count",
      G_TYPE_UINT64, &low, "clipped-high-count", G_TYPE_UINT64, &high, NULL));
  stats->bit_depth = depth;
  stats->count = count;
  stats->clipped_low_count = low;
  stats->clipped_high_count = high;
  array = gst_structure_get_value(s, "percentile-values");
  fail_unless(array != NULL);
  stats->n_percentiles = (int)gst_value_array_get_size(array);
  for (int i = 0; i < stats->n_percentiles && i < LH_MAX_PERCENTILES; i++)
    stats->percentile_value[i] = g_value_get_uint(gst_value_array_get_value(array, (guint)i));
  array = gst_structure_get_value(s, "histogram");
  fail_unless(array != NULL);
  stats->n_bins = gst_value_array_get_size(array);
  stats->histogram = malloc(stats->n_bins * sizeof(uint64_t));
  for (guint i = 0; i < stats->n_bins; i++)
    stats->histogram[i] = g_value_get_uint64(gst_value_array_get_value(array, i));
}

typedef struct {
  guint n_buffers;
  guint n_with_meta;
  LhStats meta_stats[N_FRAMES];
  LhBackend meta_backend;
} ProbeData;

/* Takes the metas as they leave lumahist (cudadownload drops them). */
static GstPadProbeReturn meta_probe(GstPad *pad, GstPadProbeInfo *info, gpointer user_data)
{
  ProbeData *data = user_data;
  GstLumahistMeta *meta = gst_buffer_get_lumahist_meta(GST_PAD_PROBE_INFO_BUFFER(info));

  if (meta && data->n_buffers < N_FRAMES) {
    LhStats *copy = &data->meta_stats[data->n_buffers];
    *copy = meta->stats;
    copy->histogram = malloc(meta->stats.n_bins * sizeof(uint64_t));
    memcpy(copy->histogram, meta->stats.histogram, meta->stats.n_bins * sizeof(uint64_t));
    data->meta_backend = meta->backend;
    data->n_with_meta++;
  }
  data->n_buffers++;
  return GST_PAD_PROBE_OK;
}

/* Notes an error as soon as it is posted (the message stays on the bus). */
static GstBusSyncReply note_error(GstBus *bus, GstMessage *message, gpointer user_data)
{
  if (GST_MESSAGE_TYPE(message) == GST_MESSAGE_ERROR)
    g_atomic_int_set((gint *)user_data, 1);
  return GST_BUS_PASS;
}

/* The next frame from an appsink, or NULL once the pipeline has failed (a
 * failed pipeline never ends the stream) or after 20 s. */
static GstSample *pull_frame(GstElement *sink, gint *failed)
{
  for (guint tries = 0; tries < 200 && !g_atomic_int_get(failed); tries++) {
    GstSample *sample = gst_app_sink_try_pull_sample(GST_APP_SINK(sink), 100 * GST_MSECOND);
    if (sample || gst_app_sink_is_eos(GST_APP_SINK(sink)))
      return sample;
  }
  return NULL;
}

static gboolean cudaupload_makes(const gchar *format)
{
  GstElementFactory *factory = gst_element_factory_find("cudaupload");
  const GList *templates;
  gboolean makes = FALSE;
  gchar *wanted_string = g_strdup_printf("video/x-raw(memory:CUDAMemory),format=%s", format);
  GstCaps *wanted = gst_caps_from_string(wanted_string);

  fail_unless(factory != NULL);
  for (templates = gst_element_factory_get_static_pad_templates(factory); templates;
       templates = templates->next) {
    GstStaticPadTemplate *templ = templates->data;
    if (templ->direction == GST_PAD_SRC) {
      GstCaps *caps = gst_static_pad_template_get_caps(templ);
      makes = gst_caps_can_intersect(caps, wanted);
      gst_caps_unref(caps);
    }
  }
  gst_caps_unref(wanted);
  g_free(wanted_string);
  gst_object_unref(factory);
  return makes;
}

/* The GstCudaContext object in a context query's answer, or NULL. */
static GObject *cuda_context_of(GstPad *pad)
{
  GstQuery *query = gst_query_new_context("gst.cuda.context");
  GstContext *context = NULL;
  GObject *object = NULL;

  if (gst_pad_query(pad, query)) {
    gst_query_parse_context(query, &context);
    if (context) {
      const GstStructure *s = gst_context_get_structure(context);
      for (gint i = 0; i < gst_structure_n_fields(s) && !object; i++) {
        const GValue *value = gst_structure_get_value(s, gst_structure_nth_field_name(s, i));
        if (G_VALUE_HOLDS_OBJECT(value))
          object = g_value_get_object(value);
      }
    }
  }
  gst_query_unref(query);
  return object; /* the cuda elements keep it alive while the pipeline runs */
}

/* A width for frames of format in CUDA memory: odd where it can be, so that
 * the memory is pitched.  Packed 4:2:2 gets an even one: GStreamer 1.22's
 * CUDA memory copies an odd-width row of it short of its last pixel pair's
 * V byte (width x 2 bytes, not the row's whole pairs), so the frames would
 * differ before lumahist sees them.  Odd widths of those formats are
 * checked in system memory (test-lumahist.c). */
static gint cuda_width(const gchar *format, gint odd_width)
{
  static const gchar *const packed_422[] = {"YUY2", "YVYU", "UYVY", "VYUY"};
  for (guint i = 0; i < G_N_ELEMENTS(packed_422); i++)
    if (g_str_equal(format, packed_422[i]))
      return odd_width + 1;
  return odd_width;
}

/* cudaupload ! lumahist ! cudadownload on random frames of one format: checks
 * the caps, the messages, the metas and the pixels. */
static void run_format(guint index, const gchar *backend, gboolean check_context)
{
  /* An odd size, so that CUDA memory is pitched; matrix and range are set
   * by properties, so the caps need no colorimetry. */
  gchar *caps_string = g_strdup_printf("video/x-raw,format=%s,width=%d,height=35,framerate=25/1",
                                       formats[index].name, cuda_width(formats[index].name, 63));
  gchar *description;
  GstElement *pipeline, *lumahist, *src, *sink, *upload;
  GstCaps *caps;
  GstVideoInfo info;
  GstBuffer *inputs[N_FRAMES];
  LhStats expected[N_FRAMES];
  ProbeData probe = {0};
  GstPad *pad;
  GstBus *bus;
  guint n_messages = 0;
  gboolean done = FALSE;
  gchar *active = NULL;
  gint failed = 0;

  caps = gst_caps_from_string(caps_string);
  fail_unless(gst_video_info_from_caps(&info, caps));
  description = g_strdup_printf(
      "appsrc name=src format=time ! cudaupload name=up ! video/x-raw(memory:CUDAMemory) ! "
      "lumahist name=l backend=%s matrix=bt709 range=full percentiles=0,1,50,99,100 ! "
      "cudadownload ! video/x-raw ! appsink name=sink sync=false",
      backend);
  GST_INFO("%s: %s", formats[index].name, description);
  pipeline = gst_parse_launch(description, NULL);
  fail_unless(pipeline != NULL);
  src = gst_bin_get_by_name(GST_BIN(pipeline), "src");
  sink = gst_bin_get_by_name(GST_BIN(pipeline), "sink");
  lumahist = gst_bin_get_by_name(GST_BIN(pipeline), "l");
  upload = gst_bin_get_by_name(GST_BIN(pipeline), "up");
  g_object_set(src, "caps", caps, NULL);
  pad = gst_element_get_static_pad(lumahist, "src");
  gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_BUFFER, meta_probe, &probe, NULL);
  gst_object_unref(pad);
  bus = gst_element_get_bus(pipeline);
  gst_bus_set_sync_handler(bus, note_error, &failed, NULL);

  fail_unless(gst_element_set_state(pipeline, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE);
  for (guint i = 0; i < N_FRAMES; i++) {
    inputs[i] = lhc_random_frame(&info, 4000 + 31 * index + i, i * 40 * GST_MSECOND);
    lhc_library_stats(inputs[i], &info, LH_MATRIX_BT709, LH_RANGE_FULL, "0,1,50,99,100",
                      &expected[i]);
    fail_unless_equals_int(gst_app_src_push_buffer(GST_APP_SRC(src), gst_buffer_ref(inputs[i])),
                           GST_FLOW_OK);
  }
  gst_app_src_end_of_stream(GST_APP_SRC(src));

  for (guint i = 0; i < N_FRAMES; i++) {
    GstSample *sample = pull_frame(sink, &failed);
    GstVideoInfo out_info;
    fail_unless(sample != NULL, "%s: no frame %u", formats[index].name, i);
    fail_unless(gst_video_info_from_caps(&out_info, gst_sample_get_caps(sample)));
    fail_unless(lhc_same_pixels(inputs[i], &info, gst_sample_get_buffer(sample), &out_info),
                "%s: frame %u changed", formats[index].name, i);
    gst_sample_unref(sample);
  }

  /* Negotiated in CUDA memory, with the pipeline's one CUDA context. */
  {
    GstPad *sinkpad = gst_element_get_static_pad(lumahist, "sink");
    GstCaps *current = gst_pad_get_current_caps(sinkpad);
    fail_unless(current != NULL);
    fail_unless(gst_caps_features_contains(gst_caps_get_features(current, 0), "memory:CUDAMemory"),
                "caps %" GST_PTR_FORMAT, current);
    if (check_context) {
      GstPad *up_src = gst_element_get_static_pad(upload, "src");
      GObject *ours = cuda_context_of(sinkpad);
      GObject *theirs = cuda_context_of(up_src);
      fail_unless(ours != NULL, "lumahist does not answer the CUDA context query");
      fail_unless(ours == theirs, "lumahist and cudaupload use different CUDA contexts");
      gst_object_unref(up_src);
    }
    gst_caps_unref(current);
    gst_object_unref(sinkpad);
  }

  while (!done) {
    GstMessage *message = gst_bus_timed_pop_filtered(
        bus, 10 * GST_SECOND, GST_MESSAGE_EOS | GST_MESSAGE_ERROR | GST_MESSAGE_ELEMENT);
    fail_unless(message != NULL, "timeout");
    if (GST_MESSAGE_TYPE(message) == GST_MESSAGE_ERROR) {
      GError *error = NULL;
      gchar *debug = NULL;
      gst_message_parse_error(message, &error, &debug);
      fail("%s: %s (%s)", formats[index].name, error->message, debug);
    } else if (GST_MESSAGE_TYPE(message) == GST_MESSAGE_EOS) {
      done = TRUE;
    } else if (gst_structure_has_name(gst_message_get_structure(message), "lumahist")) {
      const GstStructure *s = gst_message_get_structure(message);
      LhStats got;
      fail_unless(n_messages < N_FRAMES);
      fail_unless_equals_string(gst_structure_get_string(s, "backend"), backend);
      stats_from_message(s, &got);
      check_stats_equal(&got, &expected[n_messages]);
      lh_stats_clear(&got);
      n_messages++;
    }
    gst_message_unref(message);
  }
  fail_unless_equals_int(n_messages, N_FRAMES);

  g_object_get(lumahist, "active-backend", &active, NULL);
  fail_unless_equals_string(active, backend);
  fail_unless_equals_int(probe.n_with_meta, N_FRAMES);
  fail_unless_equals_int(probe.meta_backend,
                         strcmp(backend, "cuda") == 0 ? LH_BACKEND_CUDA : LH_BACKEND_CPU);
  for (guint i = 0; i < N_FRAMES; i++) {
    check_stats_equal(&probe.meta_stats[i], &expected[i]);
    lh_stats_clear(&probe.meta_stats[i]);
    lh_stats_clear(&expected[i]);
    gst_buffer_unref(inputs[i]);
  }

  fail_unless_equals_int(gst_element_set_state(pipeline, GST_STATE_NULL), GST_STATE_CHANGE_SUCCESS);
  g_free(active);
  gst_bus_set_sync_handler(bus, NULL, NULL, NULL);
  gst_object_unref(bus);
  gst_object_unref(upload);
  gst_object_unref(lumahist);
  gst_object_unref(sink);
  gst_object_unref(src);
  gst_object_unref(pipeline);
  gst_caps_unref(caps);
  g_free(description);
  g_free(caps_string);
}

GST_START_TEST(test_cuda_formats)
{
  guint tested = 0;

  for (guint i = 0; i < G_N_ELEMENTS(formats); i++) {
    if (!cudaupload_makes(formats[i].name)) {
      fail_if(formats[i].required, "cudaupload does not make %s", formats[i].name);
      GST_INFO("cudaupload does not make %s: not tested", formats[i].name);
      continue;
    }
    run_format(i, "cuda", i == 0);
    tested++;
  }
  fail_unless(tested >= 9);
}
GST_END_TEST;

/* The CPU backend on CUDA memory reads it through a download, same values. */
GST_START_TEST(test_cuda_memory_cpu_backend)
{
  run_format(0, "cpu", FALSE);
  run_format(3, "cpu", FALSE);
}
GST_END_TEST;

/* mode and overlay on CUDA memory: the frames that come out of cudadownload
 * are the library's CPU result; the statistics are those of the input.  A
 * backend whose build cannot equalize yet fails with NOT_IMPLEMENTED: that is
 * reported, and the test then checks nothing more for it. */
/* How upstream keeps the frames it passes on, so that the element may not
 * rewrite them in place. */
typedef enum {
  HOLD_NOTHING,
  HOLD_BUFFER, /* a reference to the buffer: it is not writable */
  HOLD_MEMORY, /* a shallow copy goes on (as from imagefreeze or tee): the
                * buffer is writable, its memory is shared */
} Hold;

/* Keeps a reference to every buffer that reaches the pad. */
static GstPadProbeReturn hold_buffer(GstPad *pad, GstPadProbeInfo *info, gpointer held)
{
  g_ptr_array_add(held, gst_buffer_ref(GST_PAD_PROBE_INFO_BUFFER(info)));
  return GST_PAD_PROBE_OK;
}

/* Keeps every buffer that reaches the pad and passes on a shallow copy. */
static GstPadProbeReturn hold_memory(GstPad *pad, GstPadProbeInfo *info, gpointer held)
{
  GstBuffer *buffer = GST_PAD_PROBE_INFO_BUFFER(info);
  GstBuffer *copy = gst_buffer_copy(buffer);

  g_ptr_array_add(held, buffer);
  GST_PAD_PROBE_INFO_DATA(info) = copy;
  fail_unless(gst_buffer_is_writable(copy) && !gst_buffer_is_all_memory_writable(copy));
  return GST_PAD_PROBE_OK;
}

/* The library's options for what the rewrite pipelines ask of the element
 * (REWRITE_PROPERTIES): mode 1 equalize, 2 CLAHE. */
#define REWRITE_PROPERTIES "matrix=bt709 range=full tiles-x=3 tiles-y=2 clip-limit=3"
static void rewrite_options(gint mode, LhEqualizeOptions *equalize, LhOverlayOptions *overlay)
{
  lh_equalize_options_init(equalize);
  equalize->mode = mode == 2 ? LH_EQUALIZE_CLAHE : LH_EQUALIZE_GLOBAL;
  equalize->matrix = LH_MATRIX_BT709;
  equalize->range = LH_RANGE_FULL;
  equalize->tiles_x = 3;
  equalize->tiles_y = 2;
  equalize->clip_limit = 3.0;
  lh_overlay_options_init(overlay);
  overlay->matrix = LH_MATRIX_BT709;
  overlay->range = LH_RANGE_FULL;
}

/* hold_input: upstream keeps each CUDA frame, so the element writes the
 * result into a frame of its own (the CUDA backend from its pool); the
 * frames held must come out untouched. */
static void run_rewrite(const gchar *format, const gchar *backend, gint mode, gboolean overlay,
                        Hold hold_input)
{
  gchar *caps_string = g_strdup_printf("video/x-raw,format=%s,width=%d,height=54,framerate=25/1",
                                       format, cuda_width(format, 97));
  GstVideoInfo info = lhc_info_from_string(caps_string);
  gchar *description = g_strdup_printf(
      "appsrc name=src format=time caps=\"%s\" ! cudaupload ! video/x-raw(memory:CUDAMemory) ! "
      "lumahist name=lh backend=%s mode=%d overlay=%d " REWRITE_PROPERTIES
      " ! cudadownload ! video/x-raw ! appsink name=sink sync=false",
      caps_string, backend, mode, overlay);
  GstElement *pipeline = gst_parse_launch(description, NULL);
  GstElement *src = gst_bin_get_by_name(GST_BIN(pipeline), "src");
  GstElement *sink = gst_bin_get_by_name(GST_BIN(pipeline), "sink");
  GstBus *bus = gst_element_get_bus(pipeline);
  GPtrArray *held = g_ptr_array_new_with_free_func((GDestroyNotify)gst_buffer_unref);
  if (hold_input) {
    GstElement *lh = gst_bin_get_by_name(GST_BIN(pipeline), "lh");
    GstPad *pad = gst_element_get_static_pad(lh, "sink");
    gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_BUFFER,
                      hold_input == HOLD_MEMORY ? hold_memory : hold_buffer, held, NULL);
    gst_object_unref(pad);
    gst_object_unref(lh);
  }
  GstBuffer *inputs[N_FRAMES], *expected[N_FRAMES];
  LhEqualizeOptions equalize;
  LhOverlayOptions overlay_options;
  GstMessage *error;
  guint n_samples;
  gint failed = 0;

  GST_INFO("%s", description);
  rewrite_options(mode, &equalize, &overlay_options);

  gst_bus_set_sync_handler(bus, note_error, &failed, NULL);
  fail_unless(gst_element_set_state(pipeline, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE);
  for (guint i = 0; i < N_FRAMES; i++) {
    LhStats stats;
    inputs[i] = lhc_low_contrast_frame(&info, 6000 + i, i * 40 * GST_MSECOND);
    lhc_library_stats(inputs[i], &info, LH_MATRIX_BT709, LH_RANGE_FULL, "1,5,50,95,99", &stats);
    expected[i] = lhc_library_output(inputs[i], &info, mode ? &equalize : NULL,
                                     overlay ? &overlay_options : NULL, &stats);
    lh_stats_clear(&stats);
    fail_unless_equals_int(gst_app_src_push_buffer(GST_APP_SRC(src), gst_buffer_ref(inputs[i])),
                           GST_FLOW_OK);
  }
  gst_app_src_end_of_stream(GST_APP_SRC(src));

  for (n_samples = 0; n_samples < N_FRAMES; n_samples++) {
    guint i = n_samples;
    GstSample *sample = pull_frame(sink, &failed);
    GstVideoInfo out_info;

    if (!sample) /* an error: looked at below */
      break;
    fail_unless(gst_video_info_from_caps(&out_info, gst_sample_get_caps(sample)));
    fail_unless(lhc_same_pixels(expected[i], &info, gst_sample_get_buffer(sample), &out_info),
                "%s %s mode %d overlay %d: frame %u differs from the library's", format, backend,
                mode, overlay, i);
    gst_sample_unref(sample);
  }
  error = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR);
  fail_unless(n_samples == N_FRAMES || error != NULL, "%s: %u frames and no error", format,
              n_samples);
  if (error) {
    GError *gerror = NULL;
    gchar *debug = NULL;
    gst_message_parse_error(error, &gerror, &debug);
    if (g_error_matches(gerror, GST_STREAM_ERROR, GST_STREAM_ERROR_NOT_IMPLEMENTED))
      g_print("NOTE: %s %s mode %d overlay %d not checked: %s (%s)\n", format, backend, mode,
              overlay, gerror->message, debug);
    else
      fail("%s: %s (%s)", format, gerror->message, debug);
    g_error_free(gerror);
    g_free(debug);
    gst_message_unref(error);
  }

  fail_unless_equals_int(gst_element_set_state(pipeline, GST_STATE_NULL), GST_STATE_CHANGE_SUCCESS);
  if (hold_input) {
    fail_unless(held->len == n_samples || error != NULL, "%s: %u frames held, %u out", format,
                held->len, n_samples);
    for (guint i = 0; i < held->len && i < N_FRAMES; i++)
      fail_unless(lhc_same_pixels(inputs[i], &info, g_ptr_array_index(held, i), &info),
                  "%s %s mode %d overlay %d: frame %u held upstream was changed", format, backend,
                  mode, overlay, i);
  }
  g_ptr_array_unref(held);
  for (guint i = 0; i < N_FRAMES; i++) {
    gst_buffer_unref(expected[i]);
    gst_buffer_unref(inputs[i]);
  }
  gst_bus_set_sync_handler(bus, NULL, NULL, NULL);
  gst_object_unref(bus);
  gst_object_unref(sink);
  gst_object_unref(src);
  gst_object_unref(pipeline);
  g_free(description);
  g_free(caps_string);
}

GST_START_TEST(test_cuda_equalize_overlay)
{
  static const gchar *const rewrite_formats[] = {
      "NV12", "P010_10LE", "RGBA", "BGR", "I420",
      /* packed 4:2:2 (a webcam's), planar 4:2:2 10-bit, semi-planar 4:4:4, 12 bits at the top */
      "YUY2", "UYVY", "I422_10LE", "NV24", "P012_LE", "YV12"};

  for (guint i = 0; i < G_N_ELEMENTS(rewrite_formats); i++) {
    /* The first five every cudaupload makes; GStreamer 1.22's makes no NV24
     * (measured on the H100: not negotiated). */
    if (!cudaupload_makes(rewrite_formats[i])) {
      fail_if(i < 5, "cudaupload does not make %s", rewrite_formats[i]);
      g_print("NOTE: cudaupload does not make %s: its rewrite in CUDA memory not checked\n",
              rewrite_formats[i]);
      continue;
    }
    for (guint b = 0; b < 2; b++) {
      const gchar *backend = b ? "cuda" : "cpu";
      run_rewrite(rewrite_formats[i], backend, 1, FALSE, HOLD_NOTHING);
      run_rewrite(rewrite_formats[i], backend, 2, FALSE, HOLD_NOTHING);
      run_rewrite(rewrite_formats[i], backend, 0, TRUE, HOLD_NOTHING);
      run_rewrite(rewrite_formats[i], backend, 2, TRUE, HOLD_NOTHING);
      /* Frames upstream keeps: into the element's own frames. */
      run_rewrite(rewrite_formats[i], backend, 1, FALSE, HOLD_BUFFER);
      run_rewrite(rewrite_formats[i], backend, 2, TRUE, HOLD_BUFFER);
      run_rewrite(rewrite_formats[i], backend, 0, TRUE, HOLD_BUFFER);
      run_rewrite(rewrite_formats[i], backend, 1, FALSE, HOLD_MEMORY);
      run_rewrite(rewrite_formats[i], backend, 2, TRUE, HOLD_MEMORY);
    }
  }
}
GST_END_TEST;

/* temporal-window on the CUDA backend: the window lives in device memory
 * and a flush (a seek) restarts it; frames equal the library's on the CPU
 * with its own window, restarted at the same frame.  (The element restarts
 * it in its CUDA context; in this harness, on system memory, the library's
 * context is the device's primary one, which the runtime makes current on
 * any thread, so a restart outside the context would pass here too.) */
GST_START_TEST(test_cuda_temporal_flush)
{
  GstHarness *h = gst_harness_new_parse("lumahist backend=cuda mode=equalize temporal-window=3 "
                                        "cut-threshold=1.0 post-messages=false attach-meta=false");

  lhc_check_temporal_window(h, "video/x-raw,format=GRAY8,width=64,height=48,framerate=25/1", 5000);
  gst_harness_teardown(h);
}
GST_END_TEST;

/* v210 (capture cards) stays in system memory, GStreamer's CUDA elements
 * carrying none; the CUDA backend takes those frames with its own kernels:
 * statistics, equalize, CLAHE and the overlay equal the library's on the
 * CPU, rows of whole groups and rows whose last group is partial. */
GST_START_TEST(test_cuda_v210_system_memory)
{
  static const struct {
    gint mode; /* 0 analyse, 1 equalize, 2 CLAHE */
    gboolean overlay;
  } cases[] = {{0, FALSE}, {1, FALSE}, {2, FALSE}, {0, TRUE}, {2, TRUE}};
  static const gint widths[] = {97, 96, 1921};

  for (guint w = 0; w < G_N_ELEMENTS(widths); w++)
    for (guint c = 0; c < G_N_ELEMENTS(cases); c++) {
      gchar *caps_string =
          g_strdup_printf("video/x-raw,format=v210,width=%d,height=%d,framerate=25/1", widths[w],
                          widths[w] > 1000 ? 33 : 54);
      gchar *description =
          g_strdup_printf("lumahist backend=cuda mode=%d overlay=%d " REWRITE_PROPERTIES,
                          cases[c].mode, cases[c].overlay);
      GstVideoInfo info = lhc_info_from_string(caps_string);
      GstCaps *caps = gst_caps_from_string(caps_string);
      GstHarness *h = gst_harness_new_parse(description);
      LhEqualizeOptions equalize;
      LhOverlayOptions overlay_options;

      rewrite_options(cases[c].mode, &equalize, &overlay_options);
      gst_harness_set_caps(h, gst_caps_ref(caps), caps);
      for (guint i = 0; i < N_FRAMES; i++) {
        GstBuffer *in = lhc_low_contrast_frame(&info, 8000 + 10 * w + i, i * 40 * GST_MSECOND);
        LhStats stats;
        lhc_library_stats(in, &info, LH_MATRIX_BT709, LH_RANGE_FULL, "1,5,50,95,99", &stats);
        GstBuffer *expected =
            lhc_library_output(in, &info, cases[c].mode ? &equalize : NULL,
                               cases[c].overlay ? &overlay_options : NULL, &stats);
        GstBuffer *out = gst_harness_push_and_pull(h, gst_buffer_ref(in));
        fail_unless(out != NULL, "%s: no frame out", description);
        GstLumahistMeta *meta = gst_buffer_get_lumahist_meta(out);
        fail_unless(meta != NULL, "%s: no meta", description);
        fail_unless_equals_int(meta->backend, LH_BACKEND_CUDA);
        if (cases[c].mode == 0)
          check_stats_equal(&meta->stats, &stats);
        fail_unless(lhc_same_pixels(expected, &info, out, &info),
                    "v210 %dx%d %s: frame %u differs from the library's", widths[w],
                    GST_VIDEO_INFO_HEIGHT(&info), description, i);
        gst_buffer_unref(out);
        gst_buffer_unref(expected);
        gst_buffer_unref(in);
        lh_stats_clear(&stats);
      }
      gst_harness_teardown(h);
      g_free(description);
      g_free(caps_string);
    }
}
GST_END_TEST;

/* System memory frames whose 16-bit samples (32-bit words) lie at odd
 * addresses, worked on by the CUDA backend through the element's aligned
 * copy: the CPU library's values and pixels. */
GST_START_TEST(test_cuda_misaligned_system_memory)
{
  static const gchar *const misaligned_formats[] = {"GRAY16_LE", "P010_10LE", "I420_12LE",
                                                    "v210",      "RGBA64_LE", "r210"};

  for (guint f = 0; f < G_N_ELEMENTS(misaligned_formats); f++)
    for (gint mode = 0; mode <= 2; mode++) {
      gchar *caps_string = g_strdup_printf(
          "video/x-raw,format=%s,width=97,height=54,framerate=25/1", misaligned_formats[f]);
      gchar *description =
          g_strdup_printf("lumahist backend=cuda mode=%d " REWRITE_PROPERTIES, mode);
      GstVideoInfo info = lhc_info_from_string(caps_string);
      GstCaps *caps = gst_caps_from_string(caps_string);
      GstHarness *h = gst_harness_new_parse(description);
      LhEqualizeOptions equalize;
      LhOverlayOptions overlay_options;
      gsize align = (gsize)lh_format_alignment(lhc_format(GST_VIDEO_INFO_FORMAT(&info))->lh);

      rewrite_options(mode, &equalize, &overlay_options);
      gst_harness_set_caps(h, gst_caps_ref(caps), caps);
      GstBuffer *in = lhc_low_contrast_frame(&info, 8500 + 10 * f + (guint)mode, 0);
      LhStats stats;
      lhc_library_stats(in, &info, LH_MATRIX_BT709, LH_RANGE_FULL, "1,5,50,95,99", &stats);
      GstBuffer *expected = lhc_library_output(in, &info, mode ? &equalize : NULL, NULL, &stats);
      GstBuffer *out =
          gst_harness_push_and_pull(h, lhc_misaligned_copy(in, &info, align > 1 ? align / 2 : 1));
      fail_unless(out != NULL, "%s %s: no frame out", misaligned_formats[f], description);
      GstLumahistMeta *meta = gst_buffer_get_lumahist_meta(out);
      fail_unless(meta != NULL, "%s: no meta", description);
      fail_unless_equals_int(meta->backend, LH_BACKEND_CUDA);
      check_stats_equal(&meta->stats, &stats);
      fail_unless(lhc_same_pixels(out, &info, expected, &info),
                  "%s %s: the frame differs from the library's", misaligned_formats[f],
                  description);
      gst_buffer_unref(out);
      gst_buffer_unref(expected);
      gst_buffer_unref(in);
      lh_stats_clear(&stats);
      gst_harness_teardown(h);
      g_free(description);
      g_free(caps_string);
    }
}
GST_END_TEST;

/* Whether host memory is page-locked: a registration of it is refused as
 * already done.  (Registering it here and undoing that leaves it as it was.) */
static gboolean is_pinned(LhContext *lh, GstMemory *memory)
{
  GstMapInfo map;
  gsize offset, maxsize;

  gst_memory_get_sizes(memory, &offset, &maxsize);
  fail_unless(gst_memory_map(memory, &map, GST_MAP_READ));
  guint8 *base = map.data - offset;
  int status = lh_host_register(lh, base, maxsize);
  gst_memory_unmap(memory, &map);
  if (status == LH_OK) {
    fail_unless_equals_int(lh_host_unregister(lh, base), LH_OK);
  } else {
    fail_unless_equals_int(status, LH_ERROR_INVALID_ARGUMENT);
  }
  return status != LH_OK;
}

/* System memory that comes again (a pool's, a repeated frame's) is
 * page-locked by the element for the CUDA backend (no staging copy) from its
 * second frame on, gives the library's values, and is unlocked when the
 * element stops; memory seen once is left alone. */
GST_START_TEST(test_cuda_pinned_pool)
{
  const gchar *caps_string = "video/x-raw,format=NV12,width=1920,height=1080,framerate=25/1";
  GstVideoInfo info = lhc_info_from_string(caps_string);
  GstCaps *caps = gst_caps_from_string(caps_string);
  GstBufferPool *pool = gst_video_buffer_pool_new();
  GstStructure *config = gst_buffer_pool_get_config(pool);
  LhContext *lh = NULL;
  GstBuffer *pooled[2];

  fail_unless_equals_int(lh_context_new(LH_BACKEND_CUDA, &lh), LH_OK);
  gst_buffer_pool_config_set_params(config, caps, (guint)GST_VIDEO_INFO_SIZE(&info), 2, 2);
  fail_unless(gst_buffer_pool_set_config(pool, config));
  fail_unless(gst_buffer_pool_set_active(pool, TRUE));

  GstHarness *h = gst_harness_new_parse("lumahist backend=cuda post-messages=false");
  gst_harness_set_caps(h, gst_caps_ref(caps), caps);
  for (guint round = 0; round < 3; round++) {
    for (guint i = 0; i < 2; i++) {
      GstBuffer *random =
          lhc_random_frame(&info, 1000 * round + i, (2 * round + i) * GST_SECOND / 25);
      GstMapInfo from, to;
      LhStats expected;

      fail_unless_equals_int(gst_buffer_pool_acquire_buffer(pool, &pooled[i], NULL), GST_FLOW_OK);
      fail_unless(gst_buffer_map(random, &from, GST_MAP_READ));
      fail_unless(gst_buffer_map(pooled[i], &to, GST_MAP_WRITE));
      memcpy(to.data, from.data, MIN(from.size, to.size));
      gst_buffer_unmap(pooled[i], &to);
      gst_buffer_unmap(random, &from);
      gst_buffer_copy_into(pooled[i], random, GST_BUFFER_COPY_TIMESTAMPS, 0, -1);
      gst_buffer_unref(random);
      lhc_library_stats(pooled[i], &info, LH_MATRIX_BT709, LH_RANGE_LIMITED, "1,5,50,95,99",
                        &expected);

      GstBuffer *out = gst_harness_push_and_pull(h, pooled[i]);
      GstLumahistMeta *meta = gst_buffer_get_lumahist_meta(out);
      fail_unless(meta != NULL);
      fail_unless_equals_int(meta->backend, LH_BACKEND_CUDA);
      check_stats_equal(&meta->stats, &expected);
      fail_unless(is_pinned(lh, gst_buffer_peek_memory(out, 0)) == (round > 0),
                  "pool memory pinned %s its second frame", round > 0 ? "after" : "before");
      gst_buffer_unref(out); /* back to the pool */
      lh_stats_clear(&expected);
    }
  }

  /* From no pool: seen once, analysed staged, not pinned; pushed again (as
   * imagefreeze does), pinned. */
  GstBuffer *loose = lhc_random_frame(&info, 7, 0);
  for (guint push = 0; push < 2; push++) {
    GstBuffer *out = gst_harness_push_and_pull(h, gst_buffer_ref(loose));
    fail_unless(is_pinned(lh, gst_buffer_peek_memory(loose, 0)) == (push == 1),
                "a repeated frame's memory pinned %s its second frame", push ? "after" : "before");
    gst_buffer_unref(out);
  }

  /* page-lock=false: memory that comes again is left as it is. */
  GstHarness *unlocked = gst_harness_new_parse("lumahist backend=cuda page-lock=false "
                                               "post-messages=false");
  gst_harness_set_caps_str(unlocked, caps_string, caps_string);
  GstBuffer *again = lhc_random_frame(&info, 8, 0);
  for (guint push = 0; push < 3; push++) {
    GstBuffer *out = gst_harness_push_and_pull(unlocked, gst_buffer_ref(again));
    fail_if(is_pinned(lh, gst_buffer_peek_memory(again, 0)), "page-lock=false pinned a frame");
    fail_unless(gst_buffer_get_lumahist_meta(out) != NULL);
    gst_buffer_unref(out);
  }
  gst_harness_teardown(unlocked);
  gst_buffer_unref(again);

  /* Stopping the element unpins the pool's memory, which lives on. */
  for (guint i = 0; i < 2; i++)
    fail_unless_equals_int(gst_buffer_pool_acquire_buffer(pool, &pooled[i], NULL), GST_FLOW_OK);
  gst_harness_teardown(h);
  for (guint i = 0; i < 2; i++) {
    fail_if(is_pinned(lh, gst_buffer_peek_memory(pooled[i], 0)), "still pinned after stop");
    gst_buffer_unref(pooled[i]);
  }
  fail_if(is_pinned(lh, gst_buffer_peek_memory(loose, 0)), "still pinned after stop");
  gst_buffer_unref(loose);
  fail_unless(gst_buffer_pool_set_active(pool, FALSE));
  gst_object_unref(pool);
  lh_context_free(lh);
}
GST_END_TEST;

/* What test_cuda_offered_pool's probe saw on lumahist's sink pad. */
typedef struct {
  guint frames;
  guint page_locked; /* in the memory of the pool lumahist offered */
  guint analysed;    /* frames whose meta equals the library's values */
} Offered;

static GstPadProbeReturn count_offered(GstPad *pad, GstPadProbeInfo *probe, gpointer data)
{
  Offered *seen = data;
  GstBuffer *buffer = GST_PAD_PROBE_INFO_BUFFER(probe);
  (void)pad;
  seen->frames++;
  if (gst_buffer_n_memory(buffer) > 0 &&
      gst_memory_is_type(gst_buffer_peek_memory(buffer, 0), "LumahistPageLocked"))
    seen->page_locked++;
  return GST_PAD_PROBE_OK;
}

/* The analysed frames (after lumahist) carry the library's values. */
static GstPadProbeReturn check_offered(GstPad *pad, GstPadProbeInfo *probe, gpointer data)
{
  Offered *seen = data;
  GstBuffer *buffer = GST_PAD_PROBE_INFO_BUFFER(probe);
  GstLumahistMeta *meta = gst_buffer_get_lumahist_meta(buffer);
  GstCaps *caps = gst_pad_get_current_caps(pad);
  GstVideoInfo info;
  LhStats expected;
  /* The caps of the pad, not the test's: the first frame passes while the
   * pipeline prerolls, before run_offered has them. */
  gboolean known = caps && gst_video_info_from_caps(&info, caps);
  if (caps)
    gst_caps_unref(caps);
  if (!meta || !known)
    return GST_PAD_PROBE_OK;
  lhc_library_stats(buffer, &info, meta->stats.matrix, meta->stats.range, "1,5,50,95,99",
                    &expected);
  if (expected.count == meta->stats.count && expected.mean == meta->stats.mean &&
      expected.min == meta->stats.min && expected.max == meta->stats.max &&
      expected.median == meta->stats.median)
    seen->analysed++;
  lh_stats_clear(&expected);
  return GST_PAD_PROBE_OK;
}

/* Runs `upstream ! lumahist name=l <element> ! fakesink` to its end and
 * counts the frames lumahist received in the page-locked memory it offers. */
static Offered run_offered(const gchar *upstream, const gchar *element)
{
  Offered seen = {0};
  gchar *description =
      g_strdup_printf("%s ! lumahist name=l %s post-messages=false ! fakesink", upstream, element);
  GstElement *pipeline = gst_parse_launch(description, NULL);
  fail_unless(pipeline != NULL, "cannot build %s", description);
  GstElement *lumahist = gst_bin_get_by_name(GST_BIN(pipeline), "l");
  GstPad *sinkpad = gst_element_get_static_pad(lumahist, "sink");
  GstPad *srcpad = gst_element_get_static_pad(lumahist, "src");
  gst_pad_add_probe(sinkpad, GST_PAD_PROBE_TYPE_BUFFER, count_offered, &seen, NULL);
  gst_pad_add_probe(srcpad, GST_PAD_PROBE_TYPE_BUFFER, check_offered, &seen, NULL);
  fail_unless(gst_element_set_state(pipeline, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE);
  GstBus *bus = gst_element_get_bus(pipeline);
  GstMessage *message =
      gst_bus_timed_pop_filtered(bus, 30 * GST_SECOND, GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  fail_unless(message != NULL, "%s: timeout", description);
  fail_if(GST_MESSAGE_TYPE(message) == GST_MESSAGE_ERROR, "%s: error", description);
  gst_message_unref(message);
  fail_unless_equals_int(gst_element_set_state(pipeline, GST_STATE_NULL), GST_STATE_CHANGE_SUCCESS);
  gst_object_unref(bus);
  gst_object_unref(sinkpad);
  gst_object_unref(srcpad);
  gst_object_unref(lumahist);
  gst_object_unref(pipeline);
  g_free(description);
  return seen;
}

/* With the CUDA backend on system memory, lumahist offers upstream a pool of
 * page-locked memory (propose_allocation): a source and a decoder write
 * every frame into it, in passthrough (analyze) and in place (equalize), and
 * the values are the library's.  The CPU backend offers none, nor does
 * page-lock=false (backend=auto then chooses per frame). */
GST_START_TEST(test_cuda_offered_pool)
{
  const gchar *source = "videotestsrc num-buffers=8 pattern=ball ! "
                        "video/x-raw,format=NV12,width=1280,height=720";
  const struct {
    const gchar *upstream;
    const gchar *element;
    gboolean offered;
  } cases[] = {
      {source, "backend=cuda", TRUE},
      {source, "backend=cuda mode=equalize", TRUE},
      {source, "backend=cpu", FALSE},
      {source, "backend=cuda page-lock=false", FALSE},
      {source, "backend=auto", TRUE},
      {source, "backend=auto page-lock=false", FALSE},
      {"videotestsrc num-buffers=8 pattern=snow ! video/x-raw,format=I420,width=641,height=361 ! "
       "jpegenc ! jpegdec",
       "backend=cuda", TRUE},
  };
  for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
    Offered seen = run_offered(cases[i].upstream, cases[i].element);
    fail_unless_equals_int(seen.frames, 8);
    fail_unless_equals_int(seen.page_locked, cases[i].offered ? 8 : 0);
    if (!strstr(cases[i].element, "equalize"))
      fail_unless_equals_int(seen.analysed, 8);
  }
  /* NVDEC giving system memory, where GStreamer has it. */
  const gchar *clip = g_getenv("LUMAHIST_TEST_CLIP");
  GstElementFactory *nvdec = gst_element_factory_find("nvh264dec");
  if (clip && nvdec) {
    gchar *upstream = g_strdup_printf(
        "filesrc location=%s ! qtdemux ! h264parse ! nvh264dec ! video/x-raw", clip);
    Offered seen = run_offered(upstream, "backend=cuda");
    fail_unless(seen.frames > 0);
    fail_unless_equals_int(seen.page_locked, seen.frames);
    fail_unless_equals_int(seen.analysed, seen.frames);
    g_free(upstream);
  } else {
    g_print("NOTE: nvh264dec %s: the decoder's use of the offered pool not checked\n",
            nvdec ? "present but no LUMAHIST_TEST_CLIP" : "absent");
  }
  if (nvdec)
    gst_object_unref(nvdec);

  /* Software H.264 decoders, where GStreamer has them (an encoder of the same
   * family makes the stream, so no clip is needed). */
  const struct {
    const gchar *encoder, *decoder;
  } software[] = {{"openh264enc", "openh264dec"}, {"x264enc", "avdec_h264"}};
  for (guint i = 0; i < G_N_ELEMENTS(software); i++) {
    GstElementFactory *encoder = gst_element_factory_find(software[i].encoder);
    GstElementFactory *decoder = gst_element_factory_find(software[i].decoder);
    if (encoder && decoder) {
      gchar *upstream = g_strdup_printf("videotestsrc num-buffers=8 pattern=ball ! "
                                        "video/x-raw,format=I420,width=640,height=360 ! "
                                        "%s ! h264parse ! %s",
                                        software[i].encoder, software[i].decoder);
      Offered seen = run_offered(upstream, "backend=cuda");
      fail_unless_equals_int(seen.frames, 8);
      fail_unless(seen.page_locked == 8, "%s wrote %u of 8 frames into the offered pool",
                  software[i].decoder, seen.page_locked);
      fail_unless_equals_int(seen.analysed, 8);
      g_print("%s wrote every frame into the offered page-locked pool\n", software[i].decoder);
      g_free(upstream);
    } else {
      g_print("NOTE: %s or %s absent: %s's use of the offered pool not checked\n",
              software[i].encoder, software[i].decoder, software[i].decoder);
    }
    if (encoder)
      gst_object_unref(encoder);
    if (decoder)
      gst_object_unref(decoder);
  }
}
GST_END_TEST;

GST_START_TEST(test_cuda_state_cycles)
{
  GstElement *pipeline = gst_parse_launch(
      "videotestsrc num-buffers=5 ! video/x-raw,format=NV12,width=1280,height=720 ! cudaupload ! "
      "lumahist name=l backend=cuda post-histogram=false ! cudadownload ! fakesink",
      NULL);
  GstBus *bus = gst_element_get_bus(pipeline);

  for (guint cycle = 0; cycle < 4; cycle++) {
    guint n = 0;
    gboolean done = FALSE;

    fail_unless(gst_element_set_state(pipeline, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE);
    while (!done) {
      GstMessage *message = gst_bus_timed_pop_filtered(
          bus, 10 * GST_SECOND, GST_MESSAGE_EOS | GST_MESSAGE_ERROR | GST_MESSAGE_ELEMENT);
      fail_unless(message != NULL, "timeout");
      fail_if(GST_MESSAGE_TYPE(message) == GST_MESSAGE_ERROR, "error in cycle %u", cycle);
      if (GST_MESSAGE_TYPE(message) == GST_MESSAGE_EOS)
        done = TRUE;
      else if (gst_structure_has_name(gst_message_get_structure(message), "lumahist"))
        n++;
      gst_message_unref(message);
    }
    fail_unless_equals_int(n, 5);
    fail_unless_equals_int(gst_element_set_state(pipeline, GST_STATE_NULL),
                           GST_STATE_CHANGE_SUCCESS);
  }
  gst_object_unref(bus);
  gst_object_unref(pipeline);
}
GST_END_TEST;

static Suite *lumahist_cuda_suite(void)
{
  Suite *s = suite_create("lumahist-cuda");
  TCase *tc = tcase_create("cuda");

  suite_add_tcase(s, tc);
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_cuda_formats);
  tcase_add_test(tc, test_cuda_memory_cpu_backend);
  tcase_add_test(tc, test_cuda_equalize_overlay);
  tcase_add_test(tc, test_cuda_misaligned_system_memory);
  tcase_add_test(tc, test_cuda_v210_system_memory);
  tcase_add_test(tc, test_cuda_state_cycles);
  tcase_add_test(tc, test_cuda_pinned_pool);
  tcase_add_test(tc, test_cuda_offered_pool);
  tcase_add_test(tc, test_cuda_temporal_flush);
  return s;
}

/* Why a cudaupload pipeline does not run, or NULL when it does. */
static gchar *probe_cudaupload(void)
{
  GstElement *pipeline;
  GstBus *bus;
  GstMessage *message;
  gchar *reason = NULL;

  pipeline =
      gst_parse_launch("videotestsrc num-buffers=1 ! cudaupload ! cudadownload ! fakesink", NULL);
  if (!pipeline)
    return g_strdup("cannot build a cudaupload pipeline");
  bus = gst_element_get_bus(pipeline);
  gst_element_set_state(pipeline, GST_STATE_PLAYING);
  message = gst_bus_timed_pop_filtered(bus, 20 * GST_SECOND, GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  if (!message) {
    reason = g_strdup("a cudaupload pipeline does not finish");
  } else if (GST_MESSAGE_TYPE(message) == GST_MESSAGE_ERROR) {
    GError *error = NULL;
    gst_message_parse_error(message, &error, NULL);
    reason = g_strdup_printf("cudaupload does not run: %s", error->message);
    g_error_free(error);
  }
  if (message)
    gst_message_unref(message);
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(bus);
  gst_object_unref(pipeline);
  return reason;
}

/* Why these tests cannot run here, or NULL when they can. */
static gchar *skip_reason(void)
{
  GstElementFactory *factory;
  gchar buffer[512];
  gsize length = 0;
  ssize_t n;
  int fds[2];
  pid_t pid;

#ifndef LH_TEST_HAVE_CUDA
  return g_strdup("the library was built without its CUDA backend");
#endif
  factory = gst_element_factory_find("cudaupload");
  if (!factory)
    return g_strdup("no cudaupload element (GStreamer's nvcodec plugin finds no CUDA device)");
  gst_object_unref(factory);

  /* The probe runs in a child process: the tests fork, and neither
   * GStreamer's threads nor a CUDA context survive a fork. */
  /* (check's assertions need a running test: plain checks here) */
  if (pipe(fds) != 0)
    return g_strdup("pipe() failed");
  pid = fork();
  if (pid < 0)
    return g_strdup("fork() failed");
  if (pid == 0) {
    gchar *reason = probe_cudaupload();
    close(fds[0]);
    if (reason && write(fds[1], reason, strlen(reason)) < 0)
      _exit(2);
    _exit(0);
  }
  close(fds[1]);
  while (length < sizeof buffer - 1 &&
         (n = read(fds[0], buffer + length, sizeof buffer - 1 - length)) > 0)
    length += (gsize)n;
  buffer[length] = '\0';
  close(fds[0]);
  waitpid(pid, NULL, 0);
  return length ? g_strdup(buffer) : NULL;
}

int main(int argc, char **argv)
{
  gchar *reason;

  gst_check_init(&argc, &argv);
  reason = skip_reason();
  if (reason) {
    g_print("SKIP: %s\n", reason);
    g_free(reason);
    return 77;
  }
  return gst_check_run_suite(lumahist_cuda_suite(), "lumahist-cuda", __FILE__);
}
