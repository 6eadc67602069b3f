/* soak-element.c: pushes many small frames through the lumahist element with
 * GstHarness, changing caps (format, size, colorimetry) and mode (analyze,
 * equalize, CLAHE, overlay, temporal window) at random every few frames, and
 * checks that memory stays flat.  Every 1000 frames the element is brought
 * back to one reference setting for a few frames (what is alive then depends
 * less on the random setting of the moment, e.g. a 16-bit CLAHE window of
 * LUTs) and the heap in use and the resident size are sampled.  The lowest
 * sample of the second half of the run may not exceed the lowest of the first
 * half (after warm-up) by more than a bound: a leak raises every sample, a
 * state that happens to be alive at one sample raises only that one.
 *
 *   soak-element [FRAMES] [--no-rss]
 *
 * --no-rss leaves out the memory bounds (for runs under the leaks tracer,
 * valgrind or ASan, whose own bookkeeping grows). */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gst/check/gstharness.h>
#include <gst/gst.h>
#include <gst/video/video.h>

/* Growth allowed between the halves of the run (about 4000 frames and 200
 * caps changes apart): a leak of 64 bytes a frame, or of 1.3 KiB a caps
 * change, is above it; the noise measured is below 0.1 MiB. */
#define HEAP_BOUND_BYTES (256u << 10)
#define RSS_BOUND_BYTES (4u << 20)
#define SAMPLE_EVERY 1000
#define WARM_UP 2000
#define REFERENCE_CAPS "video/x-raw,format=I420,width=64,height=48,framerate=25/1"
#define REFERENCE_FRAMES 8

static const char *const formats[] = {"GRAY8", "GRAY16_LE", "RGB",  "BGR",
                                      "RGBA",  "BGRA",      "RGBx", "BGRx",
                                      "I420",  "RGBA64_LE", "NV12", "P010_10LE"};
static const char *const modes[] = {"analyze", "equalize", "clahe"};

static long resident_bytes(void)
{
  long pages_total = 0, pages_resident = 0;
  FILE *f = fopen("/proc/self/statm", "r");
  if (!f)
    return -1;
  if (fscanf(f, "%ld %ld", &pages_total, &pages_resident) != 2)
    pages_resident = -1;
  fclose(f);
  return pages_resident < 0 ? -1 : pages_resident * sysconf(_SC_PAGESIZE);
}

/* Bytes handed out by malloc and not yet freed. */
static long heap_in_use(void)
{
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
  struct mallinfo2 info = mallinfo2();
  return (long)(info.uordblks + info.hblkhd);
#else
  return -1;
#endif
}

static guint32 xorshift(guint32 *state)
{
  guint32 x = *state;
  x ^= x << 13;
  x ^= x >> 17;
  x ^= x << 5;
  return *state = x;
}

static GstBuffer *random_frame(const GstVideoInfo *info, guint32 *state, guint64 index)
{
  GstBuffer *buffer = gst_buffer_new_allocate(NULL, GST_VIDEO_INFO_SIZE(info), NULL);
  GstMapInfo map;
  gst_buffer_map(buffer, &map, GST_MAP_WRITE);
  /* A random level and spread, so that equalization has work to do. */
  guint32 base = xorshift(state) & 0xff, spread = (xorshift(state) & 0x7f) + 1;
  for (gsize i = 0; i < map.size; i++)
    map.data[i] = (guint8)(base + xorshift(state) % spread);
  gst_buffer_unmap(buffer, &map);
  GST_BUFFER_PTS(buffer) = index * 40 * GST_MSECOND;
  GST_BUFFER_DURATION(buffer) = 40 * GST_MSECOND;
  return buffer;
}

/* New caps and element settings, as a pipeline renegotiating would bring. */
static gchar *change_everything(GstElement *element, GRand *rand)
{
  const char *format = formats[g_rand_int_range(rand, 0, G_N_ELEMENTS(formats))];
  int width = g_rand_int_range(rand, 1, 97), height = g_rand_int_range(rand, 1, 65);
  const char *colorimetry = "";
  switch (g_rand_int_range(rand, 0, 3)) {
  case 1:
    colorimetry = ",colorimetry=bt709";
    break;
  case 2:
    colorimetry = ",colorimetry=bt601";
    break;
  }
  if (format[0] == 'R' || format[0] == 'B')
    colorimetry = g_rand_boolean(rand) ? ",colorimetry=sRGB" : "";
  gst_util_set_object_arg(G_OBJECT(element), "mode",
                          modes[g_rand_int_range(rand, 0, G_N_ELEMENTS(modes))]);
  g_object_set(element, "overlay", g_rand_boolean(rand), "temporal-window",
               (guint)g_rand_int_range(rand, 1, 9), "tiles-x", g_rand_int_range(rand, 1, 5),
               "tiles-y", g_rand_int_range(rand, 1, 5), "message-interval",
               (guint)g_rand_int_range(rand, 1, 4), "post-histogram", g_rand_boolean(rand), NULL);
  return g_strdup_printf("video/x-raw,format=%s,width=%d,height=%d,framerate=25/1%s", format, width,
                         height, colorimetry);
}

typedef struct {
  GstHarness *h;
  GstBus *bus;
  GstVideoInfo info;
  guint32 state;
  guint64 pushed;
  guint messages;
  guint failures;
} Soak;

static void set_caps(Soak *soak, const gchar *caps_string)
{
  GstCaps *caps = gst_caps_from_string(caps_string);
  gst_video_info_from_caps(&soak->info, caps);
  gst_caps_unref(caps);
  gst_harness_set_src_caps_str(soak->h, caps_string);
}

/* One frame in, one frame out of the same size; the bus drained. */
static void push_one(Soak *soak)
{
  guint64 i = soak->pushed++;
  GstFlowReturn flow = gst_harness_push(soak->h, random_frame(&soak->info, &soak->state, i));
  if (flow != GST_FLOW_OK) {
    fprintf(stderr, "FAIL: frame %" G_GUINT64_FORMAT ": push returned %s\n", i,
            gst_flow_get_name(flow));
    soak->failures++;
    return;
  }
  GstBuffer *out = gst_harness_pull(soak->h);
  if (!out || gst_buffer_get_size(out) != GST_VIDEO_INFO_SIZE(&soak->info)) {
    fprintf(stderr, "FAIL: frame %" G_GUINT64_FORMAT ": output of %zu bytes, expected %zu\n", i,
            out ? gst_buffer_get_size(out) : 0, GST_VIDEO_INFO_SIZE(&soak->info));
    soak->failures++;
  }
  if (out)
    gst_buffer_unref(out);
  /* The harness keeps every event that reaches either end until it is
   * pulled: caps and segments downstream, reconfigure upstream. */
  GstEvent *event;
  while ((event = gst_harness_try_pull_event(soak->h)))
    gst_event_unref(event);
  while ((event = gst_harness_try_pull_upstream_event(soak->h)))
    gst_event_unref(event);
  GstMessage *message;
  while ((message = gst_bus_pop(soak->bus))) {
    if (GST_MESSAGE_TYPE(message) == GST_MESSAGE_ERROR) {
      GError *error = NULL;
      gst_message_parse_error(message, &error, NULL);
      fprintf(stderr, "FAIL: frame %" G_GUINT64_FORMAT ": error message: %s\n", i, error->message);
      g_error_free(error);
      soak->failures++;
    } else if (gst_message_has_name(message, "lumahist")) {
      soak->messages++;
    }
    gst_message_unref(message);
  }
}

int main(int argc, char **argv)
{
  guint frames = 10000;
  gboolean check_memory = TRUE;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--no-rss") == 0)
      check_memory = FALSE;
    else
      frames = (guint)strtoul(argv[i], NULL, 10);
  }
  gst_init(NULL, NULL);
  GstElement *element = gst_element_factory_make("lumahist", NULL);
  if (!element) {
    printf("SKIP: no lumahist element (GST_PLUGIN_PATH?)\n");
    return 77;
  }
  const char *backend = g_getenv("LUMAHIST_SOAK_BACKEND");
  gst_util_set_object_arg(G_OBJECT(element), "backend", backend ? backend : "auto");
  Soak soak = {.bus = gst_bus_new(), .state = 2463534242u};
  gst_element_set_bus(element, soak.bus);
  soak.h = gst_harness_new_with_element(element, "sink", "src");
  gst_video_info_init(&soak.info);

  GRand *rand = g_rand_new_with_seed(20240917);
  guint until_change = 0, changes = 0;
  /* Lowest samples of the first half (after warm-up) and of the second. */
  long heap_low[2] = {-1, -1}, rss_low[2] = {-1, -1};
  gint64 start = g_get_monotonic_time();
  for (guint i = 0; i < frames && soak.failures == 0; i++) {
    if (until_change == 0) {
      gchar *caps_string = change_everything(element, rand);
      set_caps(&soak, caps_string);
      g_free(caps_string);
      until_change = (guint)g_rand_int_range(rand, 1, 40);
      changes++;
    }
    until_change--;
    push_one(&soak);
    if ((i + 1) % SAMPLE_EVERY == 0) {
      /* The reference setting, then the sample. */
      gst_util_set_object_arg(G_OBJECT(element), "mode", "analyze");
      g_object_set(element, "overlay", FALSE, "temporal-window", 1u, NULL);
      set_caps(&soak, REFERENCE_CAPS);
      for (int k = 0; k < REFERENCE_FRAMES; k++)
        push_one(&soak);
      until_change = 0;
      malloc_trim(0);
      long heap = heap_in_use(), rss = resident_bytes();
      if (i + 1 >= WARM_UP) {
        int half = i + 1 > (WARM_UP + frames) / 2;
        if (heap_low[half] < 0 || heap < heap_low[half])
          heap_low[half] = heap;
        if (rss_low[half] < 0 || rss < rss_low[half])
          rss_low[half] = rss;
      }
      printf("frame %5u: heap in use %.2f MiB, resident %.2f MiB, %u caps changes, "
             "%u messages\n",
             i + 1, heap / 1048576.0, rss / 1048576.0, changes, soak.messages);
    }
  }
  double seconds = (g_get_monotonic_time() - start) / 1e6;
  printf("%" G_GUINT64_FORMAT " frames, %u caps changes, %u messages in %.1f s\n", soak.pushed,
         changes, soak.messages, seconds);
  if (soak.messages == 0) {
    fprintf(stderr, "FAIL: no lumahist message at all\n");
    soak.failures++;
  }
  if (check_memory && rss_low[0] >= 0 && rss_low[1] >= 0) {
    long heap_growth = heap_low[1] - heap_low[0], rss_growth = rss_low[1] - rss_low[0];
    printf("growth, lowest sample of the second half over the first: heap in use %+.3f MiB "
           "(bound %.1f), resident %+.2f MiB (bound %.1f)\n",
           heap_growth / 1048576.0, HEAP_BOUND_BYTES / 1048576.0, rss_growth / 1048576.0,
           RSS_BOUND_BYTES / 1048576.0);
    if (heap_low[0] > 0 && heap_growth > (long)HEAP_BOUND_BYTES) {
      fprintf(stderr, "FAIL: the heap in use grew by %.3f MiB\n", heap_growth / 1048576.0);
      soak.failures++;
    }
    if (rss_growth > (long)RSS_BOUND_BYTES) {
      fprintf(stderr, "FAIL: resident memory grew by %.2f MiB\n", rss_growth / 1048576.0);
      soak.failures++;
    }
  } else if (check_memory) {
    printf("note: too few frames for a memory comparison (%d after warm-up needed)\n",
           2 * SAMPLE_EVERY);
  }
  g_rand_free(rand);
  gst_harness_teardown(soak.h);
  gst_bus_set_flushing(soak.bus, TRUE);
  gst_object_unref(soak.bus);
  gst_object_unref(element);
  gst_deinit();
  return soak.failures ? 1 : 0;
}
