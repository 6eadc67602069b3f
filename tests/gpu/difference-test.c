/* difference-test.c: lh_difference_push on the CUDA backend against the CPU
 * backend, bit for bit: the YUV and gray formats (packed 4:2:2, P010's
 * shifted samples, 16-bit samples past their depth, big-endian words,
 * v210), sizes from 1x1 to 4K, padded rows and odd plane starts, frames in
 * device, pinned and host memory and mixed in one stream, a caller's
 * stream; NAN on the first frame, after a reset, a change of size or of
 * backend; a sum past 32 bits.  `smoke` leaves out the frames of 1080p and
 * 4K (for compute-sanitizer).  Exits 77 when no CUDA device is usable. */
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

static LhContext *cpu, *gpu;
static int n_cases, n_failures;

typedef struct {
  LhFormat format;
  int width, height, depth;
  Dist dist;
  uint64_t seed;
  size_t pad, offset;
  MemKind mem[3]; /* of the three frames of the case */
} Case;

static void fail(const Case *c, const char *what, ...)
{
  n_failures++;
  fprintf(stderr,
          "FAIL: format=%s size=%dx%d depth=%d dist=%s seed=%llu pad=%zu offset=%zu "
          "mem=%s,%s,%s: ",
          lh_format_name(c->format), c->width, c->height, c->depth, dist_names[c->dist],
          (unsigned long long)c->seed, c->pad, c->offset, mem_names[c->mem[0]],
          mem_names[c->mem[1]], mem_names[c->mem[2]]);
  va_list args;
  va_start(args, what);
  vfprintf(stderr, what, args);
  va_end(args);
  fprintf(stderr, " (last error: \"%s\")\n", lh_last_error());
}

static bool same_mean(double a, double b)
{
  return isnan(a) ? isnan(b) : same_double(a, b);
}

/* Pushes the frames in order on the context, a reset before push `reset_at`
 * (-1: none); false (after a failure report) when a push fails. */
static bool run_pushes(const Case *c, LhContext *ctx, const LhFrame *const *frames, int n,
                       int reset_at, double *means)
{
  LhDifference *d = NULL;
  if (lh_difference_new(&d) < 0) {
    fail(c, "lh_difference_new");
    return false;
  }
  bool ok = true;
  for (int k = 0; k < n && ok; k++) {
    if (k == reset_at)
      lh_difference_reset(d);
    int status = lh_difference_push(ctx, d, frames[k], &means[k]);
    if (status < 0) {
      fail(c, "%s push %d: %s", ctx == gpu ? "CUDA" : "CPU", k, lh_status_name(status));
      ok = false;
    }
  }
  lh_difference_free(d);
  return ok;
}

/* Three frames (the third of other content), pushed as 0 1 2 2 | reset | 2 0
 * on the CPU from host memory and on the GPU from the memory of the case. */
static void run_case(const Case *c)
{
  TestFrame t[3];
  bool made = true;
  for (int i = 0; i < 3; i++) {
    Dist dist = i == 2 ? DIST_UNIFORM : c->dist;
    made = made && test_frame_make(&t[i], c->format, c->width, c->height, c->depth, dist,
                                   c->seed + (uint64_t)i, c->pad + (size_t)i * 4,
                                   i == 1 ? 0 : c->offset, c->mem[i]);
  }
  if (made) {
    enum { N = 6 };
    const int order[N] = {0, 1, 2, 2, 2, 0};
    const LhFrame *host[N], *view[N];
    for (int k = 0; k < N; k++) {
      host[k] = &t[order[k]].host_frame;
      view[k] = &t[order[k]].frame;
    }
    double want[N], got[N];
    n_cases++;
    if (run_pushes(c, cpu, host, N, 4, want) && run_pushes(c, gpu, view, N, 4, got)) {
      for (int k = 0; k < N; k++)
        if (!same_mean(want[k], got[k]))
          fail(c, "push %d: CUDA %.17g, CPU %.17g", k, got[k], want[k]);
      if (!isnan(want[0]) || !isnan(want[4]) || want[3] != 0.0)
        fail(c, "CPU: first %g, after the reset %g, a frame twice %g", want[0], want[4], want[3]);
    }
  } else {
    fail(c, "could not make the frames");
  }
  for (int i = 0; i < 3; i++)
    test_frame_free(&t[i]);
}

static Case base_case(LhFormat format, int width, int height, Dist dist, uint64_t seed)
{
  Case c = {.format = format, .width = width, .height = height, .dist = dist, .seed = seed};
  c.mem[0] = c.mem[1] = c.mem[2] = MEM_DEVICE;
  return c;
}

/* smoke: the small sizes only, for compute-sanitizer. */
static bool smoke;

static void suite_formats(void)
{
  static const LhFormat formats[] = {
      LH_FORMAT_GRAY8,     LH_FORMAT_NV12,      LH_FORMAT_I420, LH_FORMAT_YUY2,
      LH_FORMAT_UYVY,      LH_FORMAT_P010,      LH_FORMAT_P016, LH_FORMAT_GRAY16,
      LH_FORMAT_GRAY16_BE, LH_FORMAT_I420_10LE, LH_FORMAT_V210,
  };
  static const int sizes[][2] = {{1, 1}, {17, 9}, {1919, 3}, {333, 77}, {1920, 1080}};
  const size_t n_sizes = sizeof sizes / sizeof sizes[0] - (smoke ? 1 : 0);
  for (size_t f = 0; f < sizeof formats / sizeof formats[0]; f++)
    for (size_t s = 0; s < n_sizes; s++)
      for (int layout = 0; layout < 3; layout++) {
        Dist dist = (Dist)((f + s + (size_t)layout) % DIST_COUNT);
        Case c = base_case(formats[f], sizes[s][0], sizes[s][1], dist, 10 * f + s);
        /* tight; padded rows; padded with odd plane starts for 8-bit samples */
        if (layout > 0)
          c.pad = 13;
        if (layout == 2 && gen_sample_bytes(formats[f]) == 1)
          c.offset = 3;
        /* device frames; then host and pinned frames mixed in among them */
        if (layout == 1) {
          c.mem[0] = MEM_HOST;
          c.mem[2] = MEM_PINNED;
        }
        run_case(&c);
      }
  /* 16-bit samples of fewer significant bits: uniform samples use all 16,
   * which both must clamp alike */
  static const int depths[] = {9, 10, 12, 14};
  for (size_t i = 0; i < sizeof depths / sizeof depths[0]; i++) {
    Case c = base_case(LH_FORMAT_GRAY16, 641, 359, DIST_UNIFORM, 500 + i);
    c.depth = depths[i];
    run_case(&c);
    c.format = LH_FORMAT_GRAY16_BE;
    c.mem[1] = MEM_HOST;
    run_case(&c);
  }
  if (smoke)
    return;
  /* 4K, as NVDEC gives it: NV12 and P010 in device memory */
  run_case(&(Case){.format = LH_FORMAT_NV12,
                   .width = 3840,
                   .height = 2160,
                   .dist = DIST_PHOTO,
                   .seed = 900,
                   .pad = 256,
                   .mem = {MEM_DEVICE, MEM_DEVICE, MEM_DEVICE}});
  run_case(&(Case){.format = LH_FORMAT_P010,
                   .width = 3840,
                   .height = 2160,
                   .dist = DIST_SIXTY,
                   .seed = 901,
                   .pad = 512,
                   .mem = {MEM_DEVICE, MEM_DEVICE, MEM_DEVICE}});
}

/* The state restarts on another size and on another backend; R'G'B' and
 * a sum past 2^32 on the GPU; the caller's stream. */
static void suite_state(void)
{
  Case c = base_case(LH_FORMAT_NV12, 64, 48, DIST_UNIFORM, 77);
  TestFrame a, b, small, rgb;
  if (!test_frame_make(&a, LH_FORMAT_NV12, 64, 48, 0, DIST_UNIFORM, 1, 0, 0, MEM_DEVICE) ||
      !test_frame_make(&b, LH_FORMAT_NV12, 64, 48, 0, DIST_PHOTO, 2, 0, 0, MEM_DEVICE) ||
      !test_frame_make(&small, LH_FORMAT_NV12, 64, 47, 0, DIST_PHOTO, 3, 0, 0, MEM_DEVICE) ||
      !test_frame_make(&rgb, LH_FORMAT_RGB, 64, 48, 0, DIST_PHOTO, 4, 0, 0, MEM_DEVICE)) {
    fail(&c, "could not make the frames");
    return;
  }
  n_cases++;
  LhDifference *d = NULL;
  lh_difference_new(&d);
  double want = NAN, mean[8];
  LhDifference *ref = NULL;
  lh_difference_new(&ref);
  lh_difference_push(cpu, ref, &a.host_frame, &want);
  lh_difference_push(cpu, ref, &b.host_frame, &want);

  int s0 = lh_difference_push(gpu, d, &a.frame, &mean[0]);
  int s1 = lh_difference_push(gpu, d, &small.frame, &mean[1]);
  int s2 = lh_difference_push(gpu, d, &a.frame, &mean[2]);
  int s3 = lh_difference_push(gpu, d, &b.frame, &mean[3]);
  /* the same state on the CPU: a new backend, then host frames compared there */
  int s4 = lh_difference_push(cpu, d, &a.host_frame, &mean[4]);
  int s5 = lh_difference_push(cpu, d, &b.host_frame, &mean[5]);
  /* and back on the GPU */
  int s6 = lh_difference_push(gpu, d, &a.frame, &mean[6]);
  int s7 = lh_difference_push(gpu, d, &b.host_frame, &mean[7]);
  if (s0 || s1 || s2 || s3 || s4 || s5 || s6 || s7)
    fail(&c, "a push failed: %d %d %d %d %d %d %d %d", s0, s1, s2, s3, s4, s5, s6, s7);
  if (!isnan(mean[0]) || !isnan(mean[1]) || !isnan(mean[2]))
    fail(&c, "first, new size, size back: %g %g %g, not NAN", mean[0], mean[1], mean[2]);
  if (!same_mean(mean[3], want) || !same_mean(mean[5], want) || !same_mean(mean[7], want))
    fail(&c, "a then b: CUDA %.17g, CPU %.17g, CUDA from host %.17g, reference %.17g", mean[3],
         mean[5], mean[7], want);
  if (!isnan(mean[4]) || !isnan(mean[6]))
    fail(&c, "after a change of backend: %g and %g, not NAN", mean[4], mean[6]);

  double out = 0;
  int status = lh_difference_push(gpu, d, &rgb.frame, &out);
  if (status != LH_ERROR_UNSUPPORTED || !isnan(out))
    fail(&c, "RGB on the GPU: %s, %g", lh_status_name(status), out);
  status = lh_difference_push(cpu, d, &a.frame, &out);
  if (status != LH_ERROR_UNSUPPORTED)
    fail(&c, "a device frame on the CPU: %s", lh_status_name(status));

  /* A caller's stream: the frames written on it, the pushes queued on it. */
  cudaStream_t stream;
  if (cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) == cudaSuccess) {
    lh_context_set_stream(gpu, stream);
    lh_difference_reset(d);
    s0 = lh_difference_push(gpu, d, &a.frame, &mean[0]);
    s1 = lh_difference_push(gpu, d, &b.frame, &mean[1]);
    if (s0 || s1 || !isnan(mean[0]) || !same_mean(mean[1], want))
      fail(&c, "on the caller's stream: %d %d, %g then %.17g (want %.17g)", s0, s1, mean[0],
           mean[1], want);
    lh_context_set_stream(gpu, NULL);
    cudaStreamDestroy(stream);
  }
  lh_difference_free(d);
  lh_difference_free(ref);
  test_frame_free(&a);
  test_frame_free(&b);
  test_frame_free(&small);
  test_frame_free(&rgb);

  /* 70001 x 3 GRAY16 from 0 to 65535: 13.8 G, past a 32-bit sum. */
  TestFrame zero, top;
  Case big = base_case(LH_FORMAT_GRAY16, 70001, 3, DIST_SINGLE, 0);
  if (!test_frame_make(&zero, LH_FORMAT_GRAY16, 70001, 3, 0, DIST_SINGLE, 5, 0, 0, MEM_DEVICE) ||
      !test_frame_make(&top, LH_FORMAT_GRAY16, 70001, 3, 0, DIST_SINGLE, 6, 0, 0, MEM_DEVICE)) {
    fail(&big, "could not make the frames");
    return;
  }
  cudaMemset(zero.view_block, 0, zero.block_size);
  cudaMemset(top.view_block, 0xff, top.block_size);
  cudaDeviceSynchronize();
  n_cases++;
  lh_difference_new(&d);
  s0 = lh_difference_push(gpu, d, &zero.frame, &mean[0]);
  s1 = lh_difference_push(gpu, d, &top.frame, &mean[1]);
  if (s0 || s1 || mean[1] != 65535.0)
    fail(&big, "0 then 65535: %d %d, %.17g", s0, s1, mean[1]);
  lh_difference_free(d);
  test_frame_free(&zero);
  test_frame_free(&top);
}

/* The time of one push of a 4K NV12 device frame, printed (no check): what
 * the frame difference adds to a video's frame. */
static void time_4k(void)
{
  TestFrame a, b;
  Case c = base_case(LH_FORMAT_NV12, 3840, 2160, DIST_PHOTO, 1);
  if (!test_frame_make(&a, LH_FORMAT_NV12, 3840, 2160, 0, DIST_PHOTO, 1, 0, 0, MEM_DEVICE) ||
      !test_frame_make(&b, LH_FORMAT_NV12, 3840, 2160, 0, DIST_PHOTO, 2, 0, 0, MEM_DEVICE)) {
    fail(&c, "could not make the frames");
    return;
  }
  LhDifference *d = NULL;
  lh_difference_new(&d);
  double mean;
  const int runs = 200;
  struct timespec t0, t1;
  int status = lh_difference_push(gpu, d, &a.frame, &mean);
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (int i = 0; i < runs && status == LH_OK; i++)
    status = lh_difference_push(gpu, d, i % 2 ? &a.frame : &b.frame, &mean);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  if (status != LH_OK)
    fail(&c, "timed push: %s", lh_status_name(status));
  else
    printf("4K NV12 device frame: %.1f us a push (wall, the sum's copy and wait included)\n",
           ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec)) / runs /
               1e3);
  lh_difference_free(d);
  test_frame_free(&a);
  test_frame_free(&b);
}

int main(int argc, char **argv)
{
  if (argc > 2 || (argc == 2 && strcmp(argv[1], "smoke") != 0)) {
    fprintf(stderr, "usage: %s [smoke]\n", argv[0]);
    return 2;
  }
  smoke = argc == 2;
  setvbuf(stdout, NULL, _IOLBF, 0);
  gpu = cuda_context_or_skip();
  if (lh_context_new(LH_BACKEND_CPU, &cpu) < 0) {
    fprintf(stderr, "lh_context_new(cpu): %s\n", lh_last_error());
    return 1;
  }
  suite_formats();
  suite_state();
  if (!smoke)
    time_4k();
  printf("difference: %d cases, %d failures\n", n_cases, n_failures);
  lh_context_free(gpu);
  lh_context_free(cpu);
  return n_failures ? 1 : (n_cases ? 0 : 1);
}
