/* auto-test.c: an AUTO context on a GPU host, which sends each host frame in
 * pageable memory to the CPU's threads or to the GPU by measured cost
 * (src/dispatch.c), against a CPU and a CUDA context, bit for bit: analysis
 * of streams of NV12 (4K, 640x360, odd and padded), GRAY8, RGBA and P010
 * frames, equalization, CLAHE, LUTs and overlays, a temporal CLAHE stream
 * across a scene cut and a frame-difference stream.  Every call's reported
 * backend (lh_context_last_backend) is checked against what the GPU did: the
 * context's device-time call count grows by one exactly when it says "cuda".
 * Frames in page-locked and in device memory must always go to the GPU; the
 * first frames of each stream must go to both (the probes), so reported
 * switches are exercised.  Prints the time a frame of 4K NV12 analysis
 * takes on each context.  Exits 77 when no CUDA device is usable. */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime_api.h>

#include "gpu-compare.h"
#include "lumahist.h"

static LhContext *cpu, *cuda, *autoc;
static int n_checks, n_failures;

static void fail(const char *what, ...)
{
  n_failures++;
  fprintf(stderr, "FAIL: ");
  va_list args;
  va_start(args, what);
  vfprintf(stderr, what, args);
  va_end(args);
  fprintf(stderr, " (last error: \"%s\")\n", lh_last_error());
}

#define CHECK(cond, ...)                                                                           \
  do {                                                                                             \
    n_checks++;                                                                                    \
    if (!(cond))                                                                                   \
      fail(__VA_ARGS__);                                                                           \
  } while (0)

/* ------------------------------------------------------------------------ */
/* Where each call of the AUTO context went                                  */

typedef struct {
  const char *name;
  int on[2]; /* calls on the CPU, on CUDA */
  int switches;
  LhBackend previous;
  uint64_t gpu_calls; /* the device-time count before the call */
} Report;

static uint64_t gpu_calls(void)
{
  LhDeviceTime time;
  if (lh_context_device_time(autoc, &time) < 0) {
    fail("lh_context_device_time");
    return 0;
  }
  return time.calls;
}

static void report_begin(Report *r)
{
  r->gpu_calls = gpu_calls();
}

/* The call just made must have worked where lh_context_last_backend says. */
static LhBackend report_end(Report *r, int call)
{
  uint64_t after = gpu_calls();
  LhBackend b = lh_context_last_backend(autoc);
  CHECK(b == LH_BACKEND_CPU || b == LH_BACKEND_CUDA, "%s call %d: reported backend %d", r->name,
        call, (int)b);
  CHECK((b == LH_BACKEND_CUDA) == (after == r->gpu_calls + 1),
        "%s call %d: reported %s, the GPU did %" PRIu64 " calls", r->name, call, lh_backend_name(b),
        after - r->gpu_calls);
  r->on[b == LH_BACKEND_CUDA]++;
  if (r->on[0] + r->on[1] > 1 && b != r->previous)
    r->switches++;
  r->previous = b;
  return b;
}

static void report_print(const Report *r)
{
  printf("%-34s %3d on cpu, %3d on cuda, %2d switches\n", r->name, r->on[0], r->on[1], r->switches);
}

/* ------------------------------------------------------------------------ */
/* Analysis streams                                                          */

static void analysis_stream(LhFormat format, int width, int height, size_t pad, int frames,
                            MemKind mem)
{
  char name[96];
  snprintf(name, sizeof name, "analyze %s %dx%d %s", lh_format_name(format), width, height,
           mem_names[mem]);
  Report r = {.name = name};
  LhOptions options;
  lh_options_init(&options);
  lh_options_set_percentiles(&options, "0.5,1,50,99,99.5");
  for (int f = 0; f < frames; f++) {
    TestFrame t;
    Dist dist = (Dist)(f % DIST_COUNT);
    /* Plane starts off by a sample or two, at the samples' alignment. */
    size_t offset = (size_t)(f % 3) * (size_t)gen_sample_bytes(format);
    if (!test_frame_make(&t, format, width, height, 0, dist, 9000 + (uint64_t)f, pad, offset,
                         mem)) {
      fail("%s: no memory", name);
      return;
    }
    LhStats s_auto, s_cpu, s_cuda;
    lh_stats_init(&s_auto);
    lh_stats_init(&s_cpu);
    lh_stats_init(&s_cuda);
    report_begin(&r);
    int status = lh_analyze(autoc, &t.frame, &options, &s_auto);
    CHECK(status == LH_OK, "%s frame %d: %s", name, f, lh_status_name(status));
    LhBackend b = report_end(&r, f);
    if (mem != MEM_HOST)
      CHECK(b == LH_BACKEND_CUDA, "%s frame %d went to the CPU", name, f);
    CHECK(lh_analyze(cpu, &t.host_frame, &options, &s_cpu) == LH_OK, "%s: cpu", name);
    CHECK(lh_analyze(cuda, &t.frame, &options, &s_cuda) == LH_OK, "%s: cuda", name);
    char why[160];
    CHECK(stats_equal(&s_auto, &s_cpu, why, sizeof why), "%s frame %d (%s, on %s): vs cpu: %s",
          name, f, dist_names[dist], lh_backend_name(b), why);
    CHECK(stats_equal(&s_auto, &s_cuda, why, sizeof why), "%s frame %d (%s, on %s): vs cuda: %s",
          name, f, dist_names[dist], lh_backend_name(b), why);
    lh_stats_clear(&s_auto);
    lh_stats_clear(&s_cpu);
    lh_stats_clear(&s_cuda);
    test_frame_free(&t);
  }
  report_print(&r);
  if (mem == MEM_HOST) {
    /* The probes: warm-up and three timed calls of each side first. */
    CHECK(r.on[0] >= 4 && r.on[1] >= 4, "%s: %d frames on the CPU, %d on CUDA: not both probed",
          name, r.on[0], r.on[1]);
    CHECK(r.switches >= 2, "%s: %d switches", name, r.switches);
  } else {
    CHECK(r.on[0] == 0, "%s: %d frames on the CPU", name, r.on[0]);
  }
}

/* ------------------------------------------------------------------------ */
/* Rewrites: equalize, CLAHE, LUT, overlay, each on three copies of a frame  */

typedef enum { REWRITE_GLOBAL, REWRITE_CLAHE, REWRITE_LUT, REWRITE_OVERLAY } Rewrite;
static const char *const rewrite_names[] = {"equalize", "clahe", "lut", "overlay"};

static int rewrite(LhContext *ctx, Rewrite kind, LhFrame *frame, LhTemporal *temporal)
{
  LhEqualizeOptions eq;
  lh_equalize_options_init(&eq);
  eq.temporal = temporal;
  switch (kind) {
  case REWRITE_GLOBAL:
    return lh_equalize(ctx, frame, frame, &eq);
  case REWRITE_CLAHE:
    eq.mode = LH_EQUALIZE_CLAHE;
    eq.tiles_x = 7;
    eq.tiles_y = 5;
    eq.clip_limit = 3.0;
    return lh_equalize(ctx, frame, frame, &eq);
  case REWRITE_LUT: {
    uint16_t lut[256];
    for (int v = 0; v < 256; v++)
      lut[v] = (uint16_t)(255 - v / 2);
    return lh_apply_lut(ctx, frame, frame, lut, LH_MATRIX_BT709);
  }
  case REWRITE_OVERLAY:
  default: {
    /* The statistics of the frame as the CPU sees it: the same anywhere. */
    LhStats stats;
    lh_stats_init(&stats);
    LhOptions options;
    lh_options_init(&options);
    lh_options_set_percentiles(&options, "5,95");
    int status = lh_analyze(cpu, frame, &options, &stats);
    LhOverlayOptions overlay;
    lh_overlay_options_init(&overlay);
    if (status == LH_OK)
      status = lh_overlay(ctx, frame, &stats, &overlay);
    lh_stats_clear(&stats);
    return status;
  }
  }
}

static void rewrite_stream(Rewrite kind, LhFormat format, int width, int height, int frames,
                           int window)
{
  char name[96];
  snprintf(name, sizeof name, "%s %s %dx%d%s", rewrite_names[kind], lh_format_name(format), width,
           height, window > 1 ? " temporal" : "");
  Report r = {.name = name};
  LhTemporal *temporal[3] = {NULL, NULL, NULL};
  LhContext *ctx[3] = {autoc, cpu, cuda};
  if (window > 1)
    for (int k = 0; k < 3; k++)
      lh_temporal_new(window, 0.3, &temporal[k]);
  for (int f = 0; f < frames; f++) {
    /* Photo-like frames, then a narrow band of grays: a scene cut half-way
     * (photo against uniform noise stays under the 0.3 threshold). */
    Dist dist = f < frames / 2 ? DIST_PHOTO : DIST_BAND;
    TestFrame t[3];
    for (int k = 0; k < 3; k++)
      if (!test_frame_make(&t[k], format, width, height, 0, dist, 700 + (uint64_t)f, 8, 0,
                           MEM_HOST)) {
        fail("%s: no memory", name);
        return;
      }
    report_begin(&r);
    int status = rewrite(autoc, kind, &t[0].frame, temporal[0]);
    CHECK(status == LH_OK, "%s frame %d: %s", name, f, lh_status_name(status));
    LhBackend b = report_end(&r, f);
    for (int k = 1; k < 3; k++) {
      CHECK(rewrite(ctx[k], kind, &t[k].frame, temporal[k]) == LH_OK, "%s: %s", name,
            k == 1 ? "cpu" : "cuda");
      CHECK(memcmp(t[0].host_block, t[k].host_block, t[0].block_size) == 0,
            "%s frame %d (on %s): bytes differ from the %s context's", name, f, lh_backend_name(b),
            k == 1 ? "cpu" : "cuda");
    }
    for (int k = 0; k < 3; k++)
      test_frame_free(&t[k]);
  }
  report_print(&r);
  if (window > 1) {
    /* The window stays where it started: on one side after the first frame. */
    CHECK(r.switches <= 1, "%s: the temporal stream moved %d times", name, r.switches);
    int frames_in[3];
    uint64_t cuts[3];
    for (int k = 0; k < 3; k++)
      lh_temporal_query(temporal[k], &frames_in[k], &cuts[k]);
    CHECK(cuts[0] == cuts[1] && cuts[0] >= 1 && frames_in[0] == frames_in[1],
          "%s: %" PRIu64 " cuts, %d frames in the window; the CPU's %" PRIu64 ", %d", name, cuts[0],
          frames_in[0], cuts[1], frames_in[1]);
    for (int k = 0; k < 3; k++)
      lh_temporal_free(temporal[k]);
  } else {
    CHECK(r.on[0] >= 4 && r.on[1] >= 4, "%s: %d frames on the CPU, %d on CUDA: not both probed",
          name, r.on[0], r.on[1]);
  }
}

/* A frame-difference stream: the state stays where its first frame went. */
static void difference_stream(void)
{
  Report r = {.name = "difference NV12 1920x1080"};
  LhDifference *d[3] = {NULL, NULL, NULL};
  LhContext *ctx[3] = {autoc, cpu, cuda};
  for (int k = 0; k < 3; k++)
    lh_difference_new(&d[k]);
  for (int f = 0; f < 24; f++) {
    TestFrame t;
    if (!test_frame_make(&t, LH_FORMAT_NV12, 1920, 1080, 0, (Dist)(f % DIST_COUNT),
                         300 + (uint64_t)f, 64, 0, MEM_HOST)) {
      fail("difference: no memory");
      return;
    }
    double mean[3];
    report_begin(&r);
    CHECK(lh_difference_push(autoc, d[0], &t.frame, &mean[0]) == LH_OK, "difference frame %d", f);
    report_end(&r, f);
    for (int k = 1; k < 3; k++)
      CHECK(lh_difference_push(ctx[k], d[k], &t.frame, &mean[k]) == LH_OK, "difference: %s",
            k == 1 ? "cpu" : "cuda");
    for (int k = 1; k < 3; k++)
      CHECK(f == 0 ? isnan(mean[0]) && isnan(mean[k]) : same_double(mean[0], mean[k]),
            "difference frame %d: %.17g, the %s context's %.17g", f, mean[0],
            k == 1 ? "cpu" : "cuda", mean[k]);
    test_frame_free(&t);
  }
  report_print(&r);
  CHECK(r.switches == 0, "the difference stream moved %d times", r.switches);
  for (int k = 0; k < 3; k++)
    lh_difference_free(d[k]);
}

/* ------------------------------------------------------------------------ */
/* What a frame costs on each context                                        */

static double now(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int compare_doubles(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static void time_4k(void)
{
  TestFrame t;
  if (!test_frame_make(&t, LH_FORMAT_NV12, 3840, 2160, 0, DIST_PHOTO, 1, 0, 0, MEM_HOST)) {
    fail("time: no memory");
    return;
  }
  LhContext *ctx[3] = {cpu, cuda, autoc};
  const char *names[3] = {"cpu", "cuda", "auto"};
  enum { RUNS = 200 };
  static double times[RUNS];
  LhStats stats;
  lh_stats_init(&stats);
  printf("4K NV12 analysis of a frame in pageable memory, median of %d:", RUNS);
  for (int k = 0; k < 3; k++) {
    int on_cuda = 0;
    for (int i = 0; i < RUNS; i++) {
      double start = now();
      lh_analyze(ctx[k], &t.frame, NULL, &stats);
      times[i] = now() - start;
      on_cuda += lh_context_last_backend(ctx[k]) == LH_BACKEND_CUDA;
    }
    qsort(times, RUNS, sizeof *times, compare_doubles);
    printf(" %s %.3f ms", names[k], times[RUNS / 2] * 1e3);
    if (ctx[k] == autoc)
      printf(" (%d of %d on cuda)", on_cuda, RUNS);
  }
  printf("\n");
  lh_stats_clear(&stats);
  test_frame_free(&t);
}

int main(void)
{
  setvbuf(stdout, NULL, _IOLBF, 0);
  cuda = cuda_context_or_skip();
  if (lh_context_new(LH_BACKEND_CPU, &cpu) < 0 || lh_context_new(LH_BACKEND_AUTO, &autoc) < 0) {
    fprintf(stderr, "lh_context_new: %s\n", lh_last_error());
    return 1;
  }
  CHECK(lh_context_backend(autoc) == LH_BACKEND_CUDA, "auto chose %s with a device",
        lh_backend_name(lh_context_backend(autoc)));
  CHECK(lh_context_last_backend(autoc) == LH_BACKEND_CUDA, "before any call: %s",
        lh_backend_name(lh_context_last_backend(autoc)));

  analysis_stream(LH_FORMAT_NV12, 3840, 2160, 0, 24, MEM_HOST);
  analysis_stream(LH_FORMAT_NV12, 640, 360, 0, 40, MEM_HOST);
  analysis_stream(LH_FORMAT_NV12, 97, 61, 40, 40, MEM_HOST);
  analysis_stream(LH_FORMAT_GRAY8, 1001, 333, 3, 40, MEM_HOST);
  analysis_stream(LH_FORMAT_RGBA, 1280, 720, 16, 40, MEM_HOST);
  analysis_stream(LH_FORMAT_P010, 1920, 1080, 0, 30, MEM_HOST);
  analysis_stream(LH_FORMAT_NV12, 1920, 1080, 64, 12, MEM_PINNED);
  analysis_stream(LH_FORMAT_NV12, 1920, 1080, 64, 12, MEM_DEVICE);
  rewrite_stream(REWRITE_GLOBAL, LH_FORMAT_RGBA, 1280, 720, 30, 1);
  rewrite_stream(REWRITE_CLAHE, LH_FORMAT_NV12, 1919, 1081, 30, 1);
  rewrite_stream(REWRITE_LUT, LH_FORMAT_GRAY8, 777, 555, 30, 1);
  rewrite_stream(REWRITE_OVERLAY, LH_FORMAT_RGBA, 1280, 720, 30, 1);
  rewrite_stream(REWRITE_CLAHE, LH_FORMAT_NV12, 1280, 720, 30, 6);
  difference_stream();
  time_4k();

  printf("auto: %d checks, %d failures\n", n_checks, n_failures);
  lh_context_free(autoc);
  lh_context_free(cuda);
  lh_context_free(cpu);
  return n_failures != 0;
}
