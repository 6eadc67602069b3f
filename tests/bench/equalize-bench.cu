/* equalize-bench.cu: times lumahist's equalization, CLAHE, LUT application
 * and overlay on a 4K frame in device memory through the public API, as the
 * GPU runs them; equalize-bench.py runs it beside OpenCV on the host's cores.
 *
 * Method (as lumahist-bench): every time is the median of --runs runs
 * measured with CUDA events on the context's stream.  Before each run a spin
 * kernel of ~300 us is queued, so that the host's work in the call (checks,
 * launches) is hidden and the events measure the GPU's work, the gaps
 * between its kernels included.  Inputs rotate over enough frames that the
 * working set is three times the L2 cache, so no run finds its frame in L2.
 * Frames are written to separate outputs (the input stays as it is).
 *
 * usage: equalize-bench [--runs N] [--width W] [--height H] [--frame-out PATH]
 * prints one line per case: "case  median_us  min_us  MB/s", and with
 * --frame-out writes the GRAY8 frame used (raw) for the OpenCV side. */
#include <cuda_runtime.h>

#include <algorithm>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>

#include "lumahist.h"

#define CHECK_CUDA(call)                                                                           \
  do {                                                                                             \
    cudaError_t err_ = (call);                                                                     \
    if (err_ != cudaSuccess) {                                                                     \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(err_));     \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)

#define CHECK_LH(call)                                                                             \
  do {                                                                                             \
    int status_ = (call);                                                                          \
    if (status_ < 0) {                                                                             \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, lh_last_error());              \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)

__global__ void spin_kernel(long long cycles)
{
  long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

static uint64_t mix64(uint64_t x)
{
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

/* A photograph-like frame: a smooth field, a bright and a dark region, noise. */
static void make_frame(uint8_t *p, int w, int h, int channels, uint64_t seed)
{
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      double g = 0.45 * x / (w - 1) + 0.25 * y / (h - 1);
      if (x > w / 2 && y < h / 3)
        g += 0.3; /* sky */
      if (x < w / 5 && y > 2 * h / 3)
        g *= 0.3; /* shadow */
      for (int c = 0; c < channels; c++) {
        uint64_t r = mix64(seed ^ ((uint64_t)(y * w + x) * 4 + c));
        double v = (g + ((double)(r % 2001) - 1000.0) / 1000.0 * 0.05) * 255.0 * (0.9 + 0.05 * c);
        p[((size_t)y * w + x) * channels + c] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
      }
    }
}

struct Bench {
  LhContext *context;
  cudaStream_t stream;
  cudaEvent_t start, stop;
  long long spin_cycles;
  int runs;
};

struct Frames {
  std::vector<void *> inputs;
  void *output;
  LhFormat format;
  int width, height;
  size_t bytes;
};

static void make_frames(Frames *f, LhFormat format, int w, int h, int channels, size_t l2)
{
  f->format = format;
  f->width = w;
  f->height = h;
  f->bytes = lh_frame_buffer_size(format, w, h, 0);
  std::vector<uint8_t> host(f->bytes);
  make_frame(host.data(), w, h, channels, 1);
  /* chroma (NV12): mid gray */
  size_t luma = (size_t)w * h * channels;
  memset(host.data() + luma, 128, f->bytes - luma);
  size_t n = std::max<size_t>(2, (3 * l2 + f->bytes - 1) / f->bytes);
  for (size_t i = 0; i < n; i++) {
    void *d;
    CHECK_CUDA(cudaMalloc(&d, f->bytes));
    CHECK_CUDA(cudaMemcpy(d, host.data(), f->bytes, cudaMemcpyHostToDevice));
    f->inputs.push_back(d);
  }
  CHECK_CUDA(cudaMalloc(&f->output, f->bytes));
}

static void free_frames(Frames *f)
{
  for (void *d : f->inputs)
    cudaFree(d);
  cudaFree(f->output);
}

static LhFrame device_frame(const Frames *f, void *data)
{
  LhFrame frame;
  CHECK_LH(lh_frame_init(&frame, f->format, LH_MEMORY_CUDA, f->width, f->height, data, 0));
  return frame;
}

enum Op { EQUALIZE, APPLY_LUT, OVERLAY };

/* The median and least GPU time of one call, in microseconds. */
static void time_case(Bench *b, const char *name, Frames *f, Op op, const LhEqualizeOptions *eo,
                      const uint16_t *lut, const LhStats *stats)
{
  std::vector<float> times;
  LhOverlayOptions oo;
  lh_overlay_options_init(&oo);
  for (int run = -3; run < b->runs; run++) {
    LhFrame in = device_frame(f, f->inputs[(size_t)(run + 3) % f->inputs.size()]);
    LhFrame out = device_frame(f, f->output);
    spin_kernel<<<1, 1, 0, b->stream>>>(b->spin_cycles);
    CHECK_CUDA(cudaEventRecord(b->start, b->stream));
    switch (op) {
    case EQUALIZE:
      CHECK_LH(lh_equalize(b->context, &in, &out, eo));
      break;
    case APPLY_LUT:
      CHECK_LH(lh_apply_lut(b->context, &in, &out, lut, LH_MATRIX_BT601));
      break;
    case OVERLAY:
      CHECK_LH(lh_overlay(b->context, &in, stats, &oo));
      break;
    }
    CHECK_CUDA(cudaEventRecord(b->stop, b->stream));
    CHECK_CUDA(cudaEventSynchronize(b->stop));
    float ms;
    CHECK_CUDA(cudaEventElapsedTime(&ms, b->start, b->stop));
    if (run >= 0)
      times.push_back(ms * 1000.0f);
  }
  std::sort(times.begin(), times.end());
  float median = times[times.size() / 2];
  printf("%-34s %10.1f %10.1f %10.0f\n", name, median, times[0],
         (double)f->bytes / (median * 1e-6) / 1e6);
  fflush(stdout);
}

int main(int argc, char **argv)
{
  int runs = 100, w = 3840, h = 2160;
  const char *frame_out = NULL;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--runs") && i + 1 < argc)
      runs = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--width") && i + 1 < argc)
      w = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--height") && i + 1 < argc)
      h = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--frame-out") && i + 1 < argc)
      frame_out = argv[++i];
    else {
      fprintf(stderr, "usage: %s [--runs N] [--width W] [--height H] [--frame-out PATH]\n",
              argv[0]);
      return 2;
    }
  }
  Bench b;
  b.runs = runs < 1 ? 1 : runs;
  if (lh_context_new(LH_BACKEND_CUDA, &b.context) < 0) {
    fprintf(stderr, "no CUDA backend: %s\n", lh_last_error());
    return 77;
  }
  int device, clock_khz, l2;
  CHECK_CUDA(cudaGetDevice(&device));
  CHECK_CUDA(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, device));
  CHECK_CUDA(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device));
  cudaDeviceProp prop;
  CHECK_CUDA(cudaGetDeviceProperties(&prop, device));
  b.spin_cycles = (long long)clock_khz * 300 / 1000; /* ~300 us */
  CHECK_CUDA(cudaStreamCreateWithFlags(&b.stream, cudaStreamNonBlocking));
  CHECK_CUDA(cudaEventCreate(&b.start));
  CHECK_CUDA(cudaEventCreate(&b.stop));
  CHECK_LH(lh_context_set_stream(b.context, b.stream));
  printf("# %s, %dx%d frames in device memory, median of %d runs\n", prop.name, w, h, b.runs);
  printf("%-34s %10s %10s %10s\n", "case", "median_us", "min_us", "MB/s");

  Frames gray, rgba, nv12;
  make_frames(&gray, LH_FORMAT_GRAY8, w, h, 1, (size_t)l2);
  make_frames(&rgba, LH_FORMAT_RGBA, w, h, 4, (size_t)l2);
  make_frames(&nv12, LH_FORMAT_NV12, w, h, 1, (size_t)l2);
  if (frame_out) {
    std::vector<uint8_t> host(gray.bytes);
    CHECK_CUDA(cudaMemcpy(host.data(), gray.inputs[0], gray.bytes, cudaMemcpyDeviceToHost));
    FILE *file = fopen(frame_out, "wb");
    if (!file || fwrite(host.data(), 1, host.size(), file) != host.size() || fclose(file) != 0) {
      fprintf(stderr, "cannot write %s\n", frame_out);
      return 1;
    }
  }

  LhEqualizeOptions global, clahe;
  lh_equalize_options_init(&global);
  clahe = global;
  clahe.mode = LH_EQUALIZE_CLAHE;
  time_case(&b, "equalize GRAY8", &gray, EQUALIZE, &global, NULL, NULL);
  time_case(&b, "clahe 8x8 GRAY8", &gray, EQUALIZE, &clahe, NULL, NULL);
  time_case(&b, "equalize NV12", &nv12, EQUALIZE, &global, NULL, NULL);
  time_case(&b, "clahe 8x8 NV12", &nv12, EQUALIZE, &clahe, NULL, NULL);
  time_case(&b, "equalize RGBA", &rgba, EQUALIZE, &global, NULL, NULL);
  time_case(&b, "clahe 8x8 RGBA", &rgba, EQUALIZE, &clahe, NULL, NULL);

  LhTemporal *temporal;
  CHECK_LH(lh_temporal_new(8, 0.4, &temporal));
  LhEqualizeOptions smooth = global;
  smooth.temporal = temporal;
  time_case(&b, "equalize GRAY8 temporal (8)", &gray, EQUALIZE, &smooth, NULL, NULL);
  smooth = clahe;
  smooth.temporal = temporal;
  time_case(&b, "clahe 8x8 GRAY8 temporal (8)", &gray, EQUALIZE, &smooth, NULL, NULL);
  lh_temporal_free(temporal);

  uint16_t lut[256];
  for (int v = 0; v < 256; v++)
    lut[v] = (uint16_t)(255 - v);
  time_case(&b, "apply LUT GRAY8 (host LUT)", &gray, APPLY_LUT, NULL, lut, NULL);
  time_case(&b, "apply LUT RGBA (host LUT)", &rgba, APPLY_LUT, NULL, lut, NULL);

  LhStats stats;
  lh_stats_init(&stats);
  LhFrame first = device_frame(&gray, gray.inputs[0]);
  CHECK_LH(lh_analyze(b.context, &first, NULL, &stats));
  time_case(&b, "overlay GRAY8 (1280x540 panel)", &gray, OVERLAY, NULL, NULL, &stats);
  time_case(&b, "overlay NV12", &nv12, OVERLAY, NULL, NULL, &stats);
  time_case(&b, "overlay RGBA", &rgba, OVERLAY, NULL, NULL, &stats);
  lh_stats_clear(&stats);

  free_frames(&gray);
  free_frames(&rgba);
  free_frames(&nv12);
  lh_context_free(b.context);
  return 0;
}
