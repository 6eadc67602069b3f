/* formats-bench.c: per-frame analysis (histogram, statistics, 5 percentiles)
 * of each YUV layout against NV12 of the same size, in the same run: the
 * cost of reading Y where a format keeps it (every other byte of YUY2, the
 * 16-bit words of the 10 to 16-bit formats, v210's fields), as a ratio to
 * NV12's (issue 18's target: at most 1.2), and of GRAY16 and 16-bit R'G'B'
 * (the luma made of three samples a pixel).  Each format is timed in turn
 * with NV12 (one of each a run), median of --runs runs after two warm-ups,
 * wall time by CLOCK_MONOTONIC.  A photograph-like Y (a gradient
 * with noise); chroma random.
 *
 *   formats-bench [--runs N] [--threads N] [--size WxH] [--frames N] [--backend cpu|cuda]
 *
 * --frames N: N copies of each frame, analysed in turn, so that with N of a
 * few, no frame is still in the core's own caches from its last analysis
 * (as with frames that come from a decoder): every format reads its bytes
 * from further out, NV12 included.  1 by default: one frame, again and
 * again.
 *
 * With --backend cuda (a build with CUDA) the frames are copied to device
 * memory first, so that only the analysis is timed. */
#define _POSIX_C_SOURCE 200809L
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef LH_BENCH_CUDA
#include <cuda_runtime_api.h>
#endif

#include "../unit/test-formats.h"
#include "lumahist.h"

#define MAX_FRAMES 16

static double now(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int compare_doubles(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* A frame of format f: Y a gradient with noise at the format's depth, every
 * other byte random; R'G'B' the gradient in R, G and B, alpha random. */
static uint8_t *make_frame(LhFormat f, int w, int h, LhMemory memory, LhFrame *frame, size_t *bytes)
{
  const size_t stride = gen_row_bytes(f, w);
  const size_t size = lh_frame_buffer_size(f, w, h, stride);
  uint8_t *pixels = malloc(size);
  if (!pixels)
    return NULL;
  uint64_t state = 88172645463325252ULL;
  for (size_t i = 0; i < size; i++) {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    pixels[i] = (uint8_t)state;
  }
  const int depth = gen_format_depth(f);
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      state ^= state << 13;
      state ^= state >> 7;
      state ^= state << 17;
      uint32_t v8 = (uint32_t)(((size_t)y * (size_t)w + (size_t)x) / 97 % 200 + (state & 31));
      const uint32_t v = v8 << (depth - 8) | (uint32_t)(state >> 40) % (1u << (depth - 8));
      uint8_t *row = pixels + (size_t)y * stride;
      if (f == LH_FORMAT_RGBA16 || f == LH_FORMAT_BGRA16)
        for (int s = 0; s < 3; s++)
          gen_put_le16(row + 8 * (size_t)x + 2 * s, v);
      else
        gen_luma_put(f, row, x, v);
    }
  *bytes = size;
  uint8_t *data = pixels;
#ifdef LH_BENCH_CUDA
  if (memory == LH_MEMORY_CUDA) {
    void *device = NULL;
    if (cudaMalloc(&device, size) != cudaSuccess ||
        cudaMemcpy(device, pixels, size, cudaMemcpyHostToDevice) != cudaSuccess ||
        cudaDeviceSynchronize() != cudaSuccess) {
      free(pixels);
      return NULL;
    }
    free(pixels);
    data = device;
  }
#endif
  if (lh_frame_init(frame, f, memory, w, h, data, stride) < 0)
    return NULL;
  return data;
}

static void free_frame(uint8_t *data, LhMemory memory)
{
#ifdef LH_BENCH_CUDA
  if (memory == LH_MEMORY_CUDA) {
    cudaFree(data);
    return;
  }
#endif
  free(data);
}

static void analyze_or_exit(LhContext *ctx, const LhFrame *frame, const LhOptions *options,
                            LhStats *stats)
{
  if (lh_analyze(ctx, frame, options, stats) < 0) {
    fprintf(stderr, "formats-bench: %s: %s\n", lh_format_name(frame->format), lh_last_error());
    exit(1);
  }
}

static double median(double *ms, int runs)
{
  qsort(ms, (size_t)runs, sizeof *ms, compare_doubles);
  return ms[runs / 2];
}

/* The medians of runs analyses of frames and of as many of the NV12
 * frames, in turn (NV12 first in even runs, second in odd ones): the two
 * share whatever the machine did meanwhile (clocks, other work), which
 * moves a run's NV12 by more than 10 % on the GPU hosts.  Two warm-ups of
 * each. */
static void time_in_turn(LhContext *ctx, const LhFrame *frames, const LhFrame *nv12, int n_frames,
                         int runs, double *format_ms, double *nv12_ms)
{
  LhOptions options;
  lh_options_init(&options);
  lh_options_set_percentiles(&options, "1,5,50,95,99");
  LhStats stats;
  lh_stats_init(&stats);
  double *ms = malloc(2 * (size_t)runs * sizeof *ms);
  if (!ms) {
    fprintf(stderr, "formats-bench: no memory\n");
    exit(1);
  }
  for (int r = -2; r < runs; r++) {
    for (int k = 0; k < 2; k++) {
      const bool is_nv12 = (k == 0) == (r % 2 == 0);
      const LhFrame *frame = is_nv12 ? &nv12[(r + 2) % n_frames] : &frames[(r + 2) % n_frames];
      const double start = now();
      analyze_or_exit(ctx, frame, &options, &stats);
      if (r >= 0)
        ms[(is_nv12 ? runs : 0) + r] = (now() - start) * 1e3;
    }
  }
  *format_ms = median(ms, runs);
  *nv12_ms = median(ms + runs, runs);
  free(ms);
  lh_stats_clear(&stats);
}

int main(int argc, char **argv)
{
  int runs = 21, threads = 0, w = 1920, h = 1080, n_frames = 1;
  LhBackend backend = LH_BACKEND_CPU;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc)
      runs = atoi(argv[++i]);
    else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
      threads = atoi(argv[++i]);
    else if (strcmp(argv[i], "--frames") == 0 && i + 1 < argc && atoi(argv[i + 1]) >= 1 &&
             atoi(argv[i + 1]) <= MAX_FRAMES)
      n_frames = atoi(argv[++i]);
    else if (strcmp(argv[i], "--size") == 0 && i + 1 < argc &&
             sscanf(argv[i + 1], "%dx%d", &w, &h) == 2 && w > 0 && h > 0)
      i++;
    else if (strcmp(argv[i], "--backend") == 0 && i + 1 < argc &&
             lh_backend_from_name(argv[i + 1], &backend) == 0)
      i++;
    else {
      fprintf(stderr,
              "usage: formats-bench [--runs N] [--threads N] [--size WxH] [--frames 1..%d] "
              "[--backend cpu|cuda]\n",
              MAX_FRAMES);
      return 2;
    }
  }
  if (runs < 1)
    runs = 1;
  LhContext *ctx;
  if (lh_context_new(backend, &ctx) < 0) {
    fprintf(stderr, "formats-bench: %s\n", lh_last_error());
    return backend == LH_BACKEND_CUDA ? 77 : 1;
  }
  lh_context_set_threads(ctx, threads);
  LhMemory memory = LH_MEMORY_HOST;
#ifdef LH_BENCH_CUDA
  if (lh_context_backend(ctx) == LH_BACKEND_CUDA)
    memory = LH_MEMORY_CUDA;
#endif
  static const LhFormat formats[] = {
      LH_FORMAT_NV12,      LH_FORMAT_I420,      LH_FORMAT_YV12,      LH_FORMAT_NV21,
      LH_FORMAT_Y42B,      LH_FORMAT_Y444,      LH_FORMAT_NV16,      LH_FORMAT_NV24,
      LH_FORMAT_Y41B,      LH_FORMAT_YUY2,      LH_FORMAT_YVYU,      LH_FORMAT_UYVY,
      LH_FORMAT_VYUY,      LH_FORMAT_V210,      LH_FORMAT_GRAY16_BE, LH_FORMAT_P010,
      LH_FORMAT_I420_10LE, LH_FORMAT_I420_12LE, LH_FORMAT_I422_10LE, LH_FORMAT_I422_12LE,
      LH_FORMAT_Y444_10LE, LH_FORMAT_Y444_12LE, LH_FORMAT_Y444_16LE, LH_FORMAT_P012,
      LH_FORMAT_P016,      LH_FORMAT_GRAY16,    LH_FORMAT_RGBA16,    LH_FORMAT_BGRA16,
  };
  printf("%dx%d frames (%d in turn), %s backend (%s memory), threads %s, median of %d runs\n", w, h,
         n_frames, lh_backend_name(lh_context_backend(ctx)),
         memory == LH_MEMORY_CUDA ? "device" : "host", threads ? "as asked" : "every core (0)",
         runs);
  printf("%-10s %5s %10s %10s %8s\n", "format", "bits", "analysis", "NV12", "vs NV12");
  LhFrame nv12[MAX_FRAMES];
  uint8_t *nv12_data[MAX_FRAMES];
  size_t bytes;
  for (int k = 0; k < n_frames; k++) {
    nv12_data[k] = make_frame(LH_FORMAT_NV12, w, h, memory, &nv12[k], &bytes);
    if (!nv12_data[k]) {
      fprintf(stderr, "formats-bench: no memory for an NV12 frame\n");
      return 1;
    }
  }
  int over = 0;
  for (size_t f = 0; f < sizeof formats / sizeof formats[0]; f++) {
    LhFrame frames[MAX_FRAMES];
    uint8_t *data[MAX_FRAMES];
    for (int k = 0; k < n_frames; k++) {
      data[k] = make_frame(formats[f], w, h, memory, &frames[k], &bytes);
      if (!data[k]) {
        fprintf(stderr, "formats-bench: no memory for a %s frame\n", lh_format_name(formats[f]));
        return 1;
      }
    }
    double ms, nv12_ms;
    time_in_turn(ctx, frames, nv12, n_frames, runs, &ms, &nv12_ms);
    const double ratio = ms / nv12_ms;
    over += ratio > 1.2;
    printf("%-10s %5d %7.4f ms %7.4f ms %7.2fx%s\n", lh_format_name(formats[f]),
           gen_format_depth(formats[f]), ms, nv12_ms, ratio, ratio > 1.2 ? "  (above 1.2)" : "");
    for (int k = 0; k < n_frames; k++)
      free_frame(data[k], memory);
  }
  for (int k = 0; k < n_frames; k++)
    free_frame(nv12_data[k], memory);
  printf("%d format(s) above 1.2x NV12\n", over);
  lh_context_free(ctx);
  return 0;
}
