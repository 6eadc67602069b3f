/* appsink-messages.c: an application that runs a pipeline through the lumahist
 * element into an appsink and prints, for every frame, the mean, median and
 * 99th percentile of its luma, read both from the element's `lumahist` bus
 * message and from the GstLumahistMeta on the buffer, checking that they agree.
 *
 *   appsink-messages [--frames N] [SOURCE]
 *
 * SOURCE is the start of a gst-launch description that produces raw video,
 * e.g. "filesrc location=movie.mkv ! decodebin ! videoconvert"; by default a
 * moving test pattern.  The lumahist plugin is found on GST_PLUGIN_PATH (e.g.
 * build/plugin) or where GStreamer's plugins are installed.
 *
 * Build: cc appsink-messages.c $(pkg-config --cflags --libs gstreamer-app-1.0 lumahist)
 * (gstlumahistmeta.h is installed beside lumahist.h). */

#include <gst/app/gstappsink.h>
#include <gst/gst.h>
#include <gstlumahistmeta.h>
#include <lumahist.h>

/* How long one wait for a sample lasts before the bus is looked at again, so
 * that an error upstream (which brings no end-of-stream) ends the program. */
#define PULL_TIMEOUT (100 * GST_MSECOND)

/* The percentile the program prints beside the median. */
#define PERCENTILE 99.0

/* The value of percentile p among the message's `percentiles` and
 * `percentile-values` arrays; FALSE when it was not asked for. */
static gboolean message_percentile(const GstStructure *s, gdouble p, guint *value)
{
  const GValue *ps = gst_structure_get_value(s, "percentiles");
  const GValue *values = gst_structure_get_value(s, "percentile-values");

  if (!ps || !values || !GST_VALUE_HOLDS_ARRAY(ps) || !GST_VALUE_HOLDS_ARRAY(values))
    return FALSE;
  for (guint i = 0; i < gst_value_array_get_size(ps) && i < gst_value_array_get_size(values); i++) {
    if (g_value_get_double(gst_value_array_get_value(ps, i)) == p) {
      *value = g_value_get_uint(gst_value_array_get_value(values, i));
      return TRUE;
    }
  }
  return FALSE;
}

/* The same from the meta's statistics. */
static gboolean meta_percentile(const LhStats *stats, double p, guint *value)
{
  for (int i = 0; i < stats->n_percentiles; i++) {
    if (stats->percentile_p[i] == p) {
      *value = stats->percentile_value[i];
      return TRUE;
    }
  }
  return FALSE;
}

/* Moves the `lumahist` messages waiting on the bus into pending (as their
 * structures) and reports an error or an end-of-stream there. */
static gboolean drain_bus(GstBus *bus, GQueue *pending, gboolean *eos)
{
  GstMessage *msg;

  while ((msg = gst_bus_pop_filtered(bus, GST_MESSAGE_ELEMENT | GST_MESSAGE_ERROR |
                                              GST_MESSAGE_WARNING | GST_MESSAGE_EOS))) {
    GError *error = NULL;
    gchar *debug = NULL;

    switch (GST_MESSAGE_TYPE(msg)) {
    case GST_MESSAGE_ELEMENT:
      if (gst_message_has_name(msg, "lumahist"))
        g_queue_push_tail(pending, gst_structure_copy(gst_message_get_structure(msg)));
      break;
    case GST_MESSAGE_WARNING:
      gst_message_parse_warning(msg, &error, &debug);
      g_printerr("warning from %s: %s\n", GST_OBJECT_NAME(msg->src), error->message);
      break;
    case GST_MESSAGE_ERROR:
      gst_message_parse_error(msg, &error, &debug);
      g_printerr("error from %s: %s\n%s\n", GST_OBJECT_NAME(msg->src), error->message,
                 debug ? debug : "");
      g_clear_error(&error);
      g_free(debug);
      gst_message_unref(msg);
      return FALSE;
    case GST_MESSAGE_EOS:
      *eos = TRUE;
      break;
    default:
      break;
    }
    g_clear_error(&error);
    g_free(debug);
    gst_message_unref(msg);
  }
  return TRUE;
}

/* The pending message of frame `frame`, removed from the queue with those of
 * earlier frames (which had no buffer here); NULL if it has not come. */
static GstStructure *take_message(GQueue *pending, guint64 frame)
{
  GstStructure *s;
  guint64 f;

  while ((s = g_queue_peek_head(pending))) {
    if (!gst_structure_get_uint64(s, "frame", &f) || f < frame) {
      gst_structure_free(g_queue_pop_head(pending));
      continue;
    }
    return f == frame ? g_queue_pop_head(pending) : NULL;
  }
  return NULL;
}

/* Prints one frame's line; returns FALSE when the message and the meta
 * disagree. */
static gboolean print_frame(GstBuffer *buffer, const GstLumahistMeta *meta, GstStructure *s)
{
  gdouble mean = 0;
  guint median = 0, p = 0, meta_p = 0;
  gboolean have_p;

  if (!gst_structure_get(s, "mean", G_TYPE_DOUBLE, &mean, "median", G_TYPE_UINT, &median, NULL) ||
      !message_percentile(s, PERCENTILE, &p)) {
    g_printerr("a lumahist message without mean, median or P%g\n", PERCENTILE);
    return FALSE;
  }
  g_print("%5" G_GUINT64_FORMAT "  %" GST_TIME_FORMAT "  %-4s %8.2f %6u %6u", meta->frame,
          GST_TIME_ARGS(GST_BUFFER_PTS(buffer)), lh_backend_name(meta->backend), mean, median, p);

  have_p = meta_percentile(&meta->stats, PERCENTILE, &meta_p);
  if (meta->stats.mean != mean || meta->stats.median != median || !have_p || meta_p != p) {
    g_print("  the meta says mean %.2f median %u P%g %u\n", meta->stats.mean, meta->stats.median,
            PERCENTILE, meta_p);
    return FALSE;
  }
  g_print("\n");
  return TRUE;
}

int main(int argc, char **argv)
{
  gint frames = 30;
  GOptionEntry entries[] = {
      {"frames", 'n', 0, G_OPTION_ARG_INT, &frames,
       "Frames of the default test source (default 30)", "N"},
      {NULL},
  };
  GOptionContext *options = g_option_context_new("[SOURCE] - print lumahist's per-frame values");
  GError *error = NULL;
  gchar *source, *description;
  GstElement *pipeline, *sink;
  GstBus *bus;
  GQueue pending = G_QUEUE_INIT;
  gboolean eos = FALSE, ok = TRUE;
  guint64 n_frames = 0, n_checked = 0;

  g_option_context_add_main_entries(options, entries, NULL);
  g_option_context_add_group(options, gst_init_get_option_group());
  if (!g_option_context_parse(options, &argc, &argv, &error)) {
    g_printerr("appsink-messages: %s\n", error->message);
    return 2;
  }
  g_option_context_free(options);

  if (argc > 1)
    source = g_strjoinv(" ", argv + 1);
  else
    source = g_strdup_printf("videotestsrc num-buffers=%d pattern=ball motion=sweep "
                             "! video/x-raw,format=NV12,width=640,height=360,framerate=30/1",
                             frames);
  /* percentiles= asks for P99 beside the median; the appsink takes frames as
   * fast as they come (sync=false) and holds a few. */
  description =
      g_strdup_printf("%s ! lumahist name=lumahist percentiles=50,%g post-histogram=false "
                      "! appsink name=sink sync=false max-buffers=4",
                      source, PERCENTILE);
  g_free(source);
  /* FATAL_ERRORS: a missing element (lumahist not on GST_PLUGIN_PATH) fails
   * here rather than leaving a pipeline with a hole in it. */
  pipeline = gst_parse_launch_full(description, NULL, GST_PARSE_FLAG_FATAL_ERRORS, &error);
  if (!pipeline) {
    g_printerr("appsink-messages: %s\n  in: %s\n", error->message, description);
    g_clear_error(&error);
    g_free(description);
    return 1;
  }
  g_print("pipeline: %s\n", description);
  g_free(description);
  sink = gst_bin_get_by_name(GST_BIN(pipeline), "sink");
  bus = gst_element_get_bus(pipeline);

  if (gst_element_set_state(pipeline, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE) {
    drain_bus(bus, &pending, &eos);
    g_printerr("appsink-messages: the pipeline did not start\n");
    ok = FALSE;
  } else {
    g_print("%5s  %-17s  %-4s %8s %6s %6s\n", "frame", "time", "on", "mean", "median", "P99");
  }

  while (ok) {
    GstSample *sample = gst_app_sink_try_pull_sample(GST_APP_SINK(sink), PULL_TIMEOUT);

    if (!drain_bus(bus, &pending, &eos)) {
      ok = FALSE;
    } else if (sample) {
      GstBuffer *buffer = gst_sample_get_buffer(sample);
      GstLumahistMeta *meta = gst_buffer_get_lumahist_meta(buffer);
      GstStructure *s;

      n_frames++;
      if (!meta) {
        g_printerr("frame %" G_GUINT64_FORMAT " has no lumahist meta\n", n_frames - 1);
        ok = FALSE;
      } else if (!(s = take_message(&pending, meta->frame))) {
        /* lumahist posts a frame's message before it pushes the frame on,
         * so the message is on the bus by the time the frame is here. */
        g_printerr("no lumahist message for frame %" G_GUINT64_FORMAT "\n", meta->frame);
        ok = FALSE;
      } else {
        ok = print_frame(buffer, meta, s);
        n_checked++;
        gst_structure_free(s);
      }
    } else if (eos || gst_app_sink_is_eos(GST_APP_SINK(sink))) {
      break;
    }
    if (sample)
      gst_sample_unref(sample);
  }

  gst_element_set_state(pipeline, GST_STATE_NULL);
  g_queue_clear_full(&pending, (GDestroyNotify)gst_structure_free);
  gst_object_unref(bus);
  gst_object_unref(sink);
  gst_object_unref(pipeline);
  if (ok && n_checked == 0) {
    g_printerr("appsink-messages: no frame came\n");
    ok = FALSE;
  }
  if (ok)
    g_print("%" G_GUINT64_FORMAT " frames: messages and metas agree\n", n_checked);
  gst_deinit();
  return ok ? 0 : 1;
}
