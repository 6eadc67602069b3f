/* lumahist-bench.cu: times lumahist's kernels against CUB and against a
 * device-to-device copy (the bandwidth ceiling), in one run, and prints a
 * table (and a CSV with --csv PATH).
 *
 * Method: every time is the median of --runs runs (default 100) measured
 * with CUDA events.  Before each timed run a short spin kernel is queued, so
 * that the host's launch latency is hidden and the events measure the GPU's
 * work, gaps between its kernels included.  Inputs rotate over enough
 * buffers that the working set is at least three times the L2 cache (read
 * from the device), so no run finds its input in L2.  All inputs are made on
 * the device from a seeded hash.  GB/s of a histogram counts the bytes read;
 * the copy's GB/s counts bytes read + written (the issue's "copy rate"), and
 * "% copy" is the one over the other.  "vs CUB" is CUB's time over ours
 * (above 1: we are faster). */
#include <cuda_runtime.h>

#include <algorithm>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <string>
#include <vector>

#include <cuda/atomic>

#include <cub/device/device_histogram.cuh>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <thrust/iterator/counting_iterator.h>

#include "lh-kernels.h"

#define CHECK_CUDA(call)                                                                           \
  do {                                                                                             \
    cudaError_t err_ = (call);                                                                     \
    if (err_ != cudaSuccess) {                                                                     \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(err_));     \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)

/* ------------------------------------------------------------------------ */
/* Inputs                                                                    */

enum Dist { UNIFORM, PHOTO, SINGLE, MOSTLY_ONE, SAME_BANK, NARROW_BAND, N_DISTS };
static const char *const dist_names[N_DISTS] = {"uniform", "photo",     "single",
                                                "60%-one", "same-bank", "narrow-band"};

__device__ __forceinline__ uint64_t mix64(uint64_t x)
{
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

/* One 8-bit sample of a distribution at pixel (x, y) of a w x h image,
 * channel c: as tests/unit/frame-gen.h defines them. */
__device__ __forceinline__ uint8_t sample8(int dist, uint64_t seed, uint64_t i, uint32_t x,
                                           uint32_t y, uint32_t w, uint32_t h)
{
  const uint64_t r = mix64(seed ^ (i * 0xD1B54A32D192ED03ull));
  switch (dist) {
  case UNIFORM:
    return (uint8_t)r;
  case PHOTO: {
    /* a smooth gradient over the frame plus +-4 % noise */
    float g = 0.6f * x / (float)(w > 1 ? w - 1 : 1) + 0.4f * y / (float)(h > 1 ? h - 1 : 1);
    float v = (g + ((float)(r % 2001) - 1000.0f) / 1000.0f * 0.04f) * 255.0f;
    return (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
  }
  case SINGLE:
    return 85;
  case MOSTLY_ONE:
    return (r % 10) < 6 ? 178 : (uint8_t)(r >> 8);
  case SAME_BANK:
    return (uint8_t)((r % 8) * 32); /* 8 bins, one shared-memory bank */
  default:
    return (uint8_t)(127 + r % 5);
  }
}

__global__ void gen_image(uint8_t *out, uint32_t w, uint32_t h, int channels, int dist,
                          uint64_t seed)
{
  const uint64_t n = (uint64_t)w * h * channels;
  for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (uint64_t)gridDim.x * blockDim.x) {
    const uint64_t p = i / channels;
    out[i] = sample8(dist, seed, i, (uint32_t)(p % w), (uint32_t)(p / w), w, h);
  }
}

template <typename K> __global__ void gen_keys(K *out, uint64_t n, int dist, uint64_t seed)
{
  for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (uint64_t)gridDim.x * blockDim.x) {
    const uint64_t r = mix64(seed ^ (i * 0xD1B54A32D192ED03ull));
    /* UNIFORM: every bit random; PHOTO: 8-bit luma of a 4K photo. */
    out[i] = dist == UNIFORM ? (K)r
                             : (K)sample8(PHOTO, seed, i, (uint32_t)(i % 3840),
                                          (uint32_t)(i / 3840), 3840, 2160);
  }
}

/* Keeps the GPU busy while the host queues the timed work. */
__global__ void spin(unsigned long long ns)
{
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  } while (t - t0 < ns);
}

/* The floors of a one-frame histogram: a launch that does nothing, and one
 * that only reads the frame (16-byte loads, four in flight a thread, on as
 * many blocks as our kernels): no histogram of it can take less. */
__global__ void empty_kernel(void)
{
}

template <bool SHARED>
__global__ void __launch_bounds__(512) read_only(const uint4 *data, uint32_t n, unsigned *sink)
{
  /* SHARED: first zero 64 KiB of shared memory, as our 8-bit kernels do. */
  extern __shared__ uint4 shared[];
  if (SHARED) {
    for (uint32_t i = threadIdx.x; i < 65536 / 16; i += blockDim.x)
      shared[i] = make_uint4(0, 0, 0, 0);
    __syncthreads();
  }
  const uint32_t threads = gridDim.x * blockDim.x;
  uint32_t x = SHARED ? shared[threadIdx.x].x : 0;
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += 4 * threads) {
    uint4 u[4];
#pragma unroll
    for (int k = 0; k < 4; k++)
      u[k] = i + k * threads < n ? __ldg(data + i + k * threads) : make_uint4(0, 0, 0, 0);
#pragma unroll
    for (int k = 0; k < 4; k++)
      x ^= u[k].x ^ u[k].y ^ u[k].z ^ u[k].w;
  }
  if (x == 0x9e3779b9u) /* never, as far as the compiler knows otherwise */
    atomicAdd(sink, 1u);
}

/* An empty launch with as many bytes of parameters as lhk_histogram_finish
 * passes (16 images and the finish): what carrying them costs a launch. */
struct FinishSizedParams {
  unsigned char bytes[LHK_MAX_IMAGES * sizeof(LhkImage) + sizeof(LhkFinish)];
};
__global__ void empty_kernel_params(const __grid_constant__ FinishSizedParams p)
{
  (void)p;
}

/* The floor of any one-launch histogram of a frame: the read above, then
 * what a grid-wide merge must do at the least, as our fused kernel does it:
 * (COMMIT) 256 64-bit atomics a block into 4 copies, a ticket, and the last
 * block's loads of the 4 x 256 copies, whose sums it stores while it clears
 * them.  No counting, no scan, no statistics. */
template <bool COMMIT>
__global__ void __launch_bounds__(512)
    read_merge(const uint4 *data, uint32_t n, unsigned long long *copies, unsigned *ticket,
               unsigned long long *out)
{
  __shared__ bool last;
  const uint32_t threads = gridDim.x * blockDim.x;
  uint32_t x = 0;
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += 4 * threads) {
    uint4 u[4];
#pragma unroll
    for (int k = 0; k < 4; k++)
      u[k] = i + k * threads < n ? __ldg(data + i + k * threads) : make_uint4(0, 0, 0, 0);
#pragma unroll
    for (int k = 0; k < 4; k++)
      x ^= u[k].x ^ u[k].y ^ u[k].z ^ u[k].w;
  }
  if (COMMIT && threadIdx.x < 256)
    atomicAdd(copies + (blockIdx.x % 4) * 256 + threadIdx.x, (unsigned long long)(x & 1) + 1);
  else if (x == 0x9e3779b9u)
    atomicAdd(out + 256, 1ull);
  __syncthreads();
  if (threadIdx.x == 0) {
    cuda::atomic_ref<unsigned, cuda::thread_scope_device> t(*ticket);
    last = t.fetch_add(1u, cuda::memory_order_acq_rel) == gridDim.x - 1;
  }
  __syncthreads();
  if (last && threadIdx.x < 256) {
    unsigned long long c[4];
#pragma unroll
    for (int k = 0; k < 4; k++)
      c[k] = __ldcg(copies + k * 256 + threadIdx.x);
    out[threadIdx.x] = c[0] + c[1] + c[2] + c[3];
#pragma unroll
    for (int k = 0; k < 4; k++)
      copies[k * 256 + threadIdx.x] = 0;
    if (threadIdx.x == 0)
      *ticket = 0;
  }
}

/* ------------------------------------------------------------------------ */
/* Timing and the table                                                      */

static int g_runs = 100;
static cudaStream_t g_stream;
static cudaEvent_t g_start, g_stop;
static size_t g_l2_bytes;

template <typename F> static double median_us(F work, unsigned long long spin_ns = 40000)
{
  for (int i = 0; i < 3; i++)
    work(i);
  std::vector<float> ms(g_runs);
  for (int r = 0; r < g_runs; r++) {
    spin<<<1, 1, 0, g_stream>>>(spin_ns);
    CHECK_CUDA(cudaEventRecord(g_start, g_stream));
    work(r);
    CHECK_CUDA(cudaEventRecord(g_stop, g_stream));
    CHECK_CUDA(cudaEventSynchronize(g_stop));
    CHECK_CUDA(cudaEventElapsedTime(&ms[r], g_start, g_stop));
  }
  CHECK_CUDA(cudaGetLastError());
  std::sort(ms.begin(), ms.end());
  return 1000.0 * ms[g_runs / 2];
}

/* Buffers of `bytes` each so that together they are at least 3x the L2. */
static int rotation(size_t bytes, int at_least = 2)
{
  size_t n = (3 * g_l2_bytes + bytes - 1) / bytes;
  return (int)std::max<size_t>(n, (size_t)at_least);
}

struct Row {
  std::string bench, size, dist, impl;
  double us, gbps, vs_cub, pct_copy;
};
static std::vector<Row> g_rows;

static void add_row(const std::string &bench, const std::string &size, const std::string &dist,
                    const std::string &impl, double us, double bytes_read, double cub_us,
                    double copy_gbps)
{
  Row r;
  r.bench = bench;
  r.size = size;
  r.dist = dist;
  r.impl = impl;
  r.us = us;
  r.gbps = bytes_read > 0 ? bytes_read / (us * 1e-6) / 1e9 : 0;
  r.vs_cub = cub_us > 0 ? cub_us / us : 0;
  r.pct_copy = copy_gbps > 0 && bytes_read > 0 ? 100.0 * r.gbps / copy_gbps : 0;
  g_rows.push_back(r);
  printf("%-22s %-10s %-12s %-26s %10.2f %9.1f %8s %8s\n", bench.c_str(), size.c_str(),
         dist.c_str(), impl.c_str(), us, r.gbps,
         r.vs_cub > 0 ? (std::to_string(r.vs_cub).substr(0, 5) + "x").c_str() : "",
         r.pct_copy > 0 ? (std::to_string(r.pct_copy).substr(0, 5) + "%").c_str() : "");
  fflush(stdout);
}

static void print_header(void)
{
  printf("%-22s %-10s %-12s %-26s %10s %9s %8s %8s\n", "bench", "size", "input", "implementation",
         "us", "GB/s", "vs CUB", "% copy");
}

/* ------------------------------------------------------------------------ */
/* Copy: the ceiling                                                         */

static double copy_gbps(const std::vector<uint8_t *> &src, uint8_t *dst, size_t bytes,
                        const std::string &size)
{
  double us = median_us([&](int r) {
    CHECK_CUDA(
        cudaMemcpyAsync(dst, src[r % src.size()], bytes, cudaMemcpyDeviceToDevice, g_stream));
  });
  double gbps = 2.0 * bytes / (us * 1e-6) / 1e9;
  add_row("copy (read+write)", size, "-", "cudaMemcpy D2D", us, 2.0 * bytes, 0, 0);
  return gbps;
}

/* ------------------------------------------------------------------------ */
/* Histograms                                                                */

struct Image8 {
  std::vector<uint8_t *> buffers;
  uint32_t width, height;
  int channels;
  size_t bytes;
};

static Image8 make_images(uint32_t w, uint32_t h, int channels, int n_buffers)
{
  Image8 im;
  im.width = w;
  im.height = h;
  im.channels = channels;
  im.bytes = (size_t)w * h * channels;
  for (int i = 0; i < n_buffers; i++) {
    uint8_t *p;
    CHECK_CUDA(cudaMalloc(&p, im.bytes));
    im.buffers.push_back(p);
  }
  return im;
}

static void fill_images(Image8 &im, int dist)
{
  for (size_t i = 0; i < im.buffers.size(); i++)
    gen_image<<<1024, 256, 0, g_stream>>>(im.buffers[i], im.width, im.height, im.channels, dist,
                                          1000 * dist + i);
  CHECK_CUDA(cudaStreamSynchronize(g_stream));
}

static void free_images(Image8 &im)
{
  for (uint8_t *p : im.buffers)
    CHECK_CUDA(cudaFree(p));
  im.buffers.clear();
}

static LhkImage lhk_image(const Image8 &im, int i, const uint32_t weights[3])
{
  LhkImage image;
  memset(&image, 0, sizeof image);
  image.data = im.buffers[i % im.buffers.size()];
  image.stride = (size_t)im.width * im.channels;
  image.width = im.width;
  image.height = im.height;
  image.max_value = 255;
  if (weights)
    memcpy(image.weights, weights, sizeof image.weights);
  return image;
}

/* BT.601 in the order R, G, B (lh-luma.h). */
static const uint32_t bt601_rgb[3] = {9798, 19235, 32768 - 9798 - 19235};

struct HistBuffers {
  unsigned long long *hist; /* ours: 64-bit counts */
  void *scratch;
  unsigned int *cub_hist; /* CUB: 32-bit counts */
  void *cub_temp;
  size_t cub_temp_bytes;
};

static HistBuffers make_hist_buffers(size_t max_samples)
{
  HistBuffers b;
  CHECK_CUDA(cudaMalloc(&b.hist, 256 * sizeof(unsigned long long)));
  CHECK_CUDA(cudaMemset(b.hist, 0, 256 * sizeof(unsigned long long)));
  size_t scratch = lhk_histogram_scratch_bytes(256, 1);
  CHECK_CUDA(cudaMalloc(&b.scratch, scratch ? scratch : 1));
  CHECK_CUDA(cudaMemset(b.scratch, 0, scratch ? scratch : 1));
  CHECK_CUDA(cudaMalloc(&b.cub_hist, 256 * sizeof(unsigned int)));
  b.cub_temp_bytes = 0;
  CHECK_CUDA(cub::DeviceHistogram::HistogramEven((void *)nullptr, b.cub_temp_bytes,
                                                 (const uint8_t *)nullptr, b.cub_hist, 257, 0, 256,
                                                 (int)max_samples));
  CHECK_CUDA(cudaMalloc(&b.cub_temp, b.cub_temp_bytes));
  return b;
}

static void free_hist_buffers(HistBuffers &b)
{
  CHECK_CUDA(cudaFree(b.hist));
  CHECK_CUDA(cudaFree(b.scratch));
  CHECK_CUDA(cudaFree(b.cub_hist));
  CHECK_CUDA(cudaFree(b.cub_temp));
}

static bool g_mismatch = false;

/* Our histogram of buffer 0 against CUB's: the same counts, or the table
 * means nothing. */
static void check_hist(const LhkDevice *dev, const Image8 &im, HistBuffers &b, LhkPixel pixel,
                       const char *what)
{
  CHECK_CUDA(cudaMemsetAsync(b.hist, 0, 256 * sizeof(unsigned long long), g_stream));
  LhkImage image = lhk_image(im, 0, pixel == LHK_PIXEL_Y8 ? nullptr : bt601_rgb);
  CHECK_CUDA(lhk_histogram(dev, pixel, 256, &image, 1, b.hist, 1, b.scratch, g_stream));
  unsigned long long ours[256];
  CHECK_CUDA(cudaMemcpyAsync(ours, b.hist, sizeof ours, cudaMemcpyDeviceToHost, g_stream));
  CHECK_CUDA(cudaStreamSynchronize(g_stream));
  unsigned long long total = 0;
  for (int i = 0; i < 256; i++)
    total += ours[i];
  const unsigned long long pixels = (unsigned long long)im.width * im.height;
  bool ok = total == pixels;
  if (ok && pixel == LHK_PIXEL_Y8) {
    CHECK_CUDA(cub::DeviceHistogram::HistogramEven(b.cub_temp, b.cub_temp_bytes, im.buffers[0],
                                                   b.cub_hist, 257, 0, 256, (int)im.bytes,
                                                   g_stream));
    unsigned int theirs[256];
    CHECK_CUDA(
        cudaMemcpyAsync(theirs, b.cub_hist, sizeof theirs, cudaMemcpyDeviceToHost, g_stream));
    CHECK_CUDA(cudaStreamSynchronize(g_stream));
    for (int i = 0; i < 256 && ok; i++)
      ok = ours[i] == theirs[i];
  }
  if (!ok) {
    printf("MISMATCH: %s: our histogram differs from CUB's (or misses pixels)\n", what);
    g_mismatch = true;
  }
}

/* With --gray8-variants, every 8-bit gray kernel of histogram.cu (named
 * "gray8 I: NAME" in the table) instead of the default one alone. */
static bool g_gray8_variants = false;

struct Gray8Choice {
  LhkDevice dev;
  std::string name;
};

static std::vector<Gray8Choice> gray8_choices(const LhkDevice *dev, bool gray8)
{
  std::vector<Gray8Choice> out;
  if (!gray8 || !g_gray8_variants) {
    out.push_back({*dev, "lhk_histogram"});
    return out;
  }
  for (int v = 0; v < lhk_gray8_variant_count(); v++) {
    Gray8Choice c = {*dev, "gray8 " + std::to_string(v) + ": " + lhk_gray8_variant_name(v)};
    c.dev.gray8_variant[0] = c.dev.gray8_variant[1] = v;
    out.push_back(c);
  }
  return out;
}

/* 8-bit gray (and RGB: luma in the pass) histograms of one frame or of a
 * 1 GiB batch, ours against CUB's HistogramEven over 256 bins. */
static void bench_histograms(const LhkDevice *dev, const char *size, uint32_t w, uint32_t h,
                             int channels, const std::vector<int> &dists)
{
  const size_t bytes = (size_t)w * h * channels;
  Image8 im = make_images(w, h, channels, rotation(bytes));
  HistBuffers b = make_hist_buffers((size_t)w * h);
  uint8_t *dst;
  CHECK_CUDA(cudaMalloc(&dst, bytes));
  const LhkPixel pixel = channels == 1   ? LHK_PIXEL_Y8
                         : channels == 3 ? LHK_PIXEL_RGB8
                                         : LHK_PIXEL_RGBA8;
  const char *bench = channels == 1   ? "hist gray8"
                      : channels == 3 ? "hist RGB (luma)"
                                      : "hist RGBA (luma)";
  fill_images(im, UNIFORM);
  const double copy = copy_gbps(im.buffers, dst, bytes, size);
  for (int dist : dists) {
    fill_images(im, dist);
    check_hist(dev, im, b, pixel,
               (std::string(bench) + " " + size + " " + dist_names[dist]).c_str());
    double cub_us = 0;
    if (channels == 1) {
      cub_us = median_us([&](int r) {
        CHECK_CUDA(cub::DeviceHistogram::HistogramEven(
            b.cub_temp, b.cub_temp_bytes, im.buffers[r % im.buffers.size()], b.cub_hist, 257, 0,
            256, (int)bytes, g_stream));
      });
      add_row(bench, size, dist_names[dist], "cub::HistogramEven", cub_us, (double)bytes, 0, copy);
    }
    for (const Gray8Choice &c : gray8_choices(dev, channels == 1)) {
      if (c.name != "lhk_histogram")
        check_hist(
            &c.dev, im, b, pixel,
            (std::string(bench) + " " + size + " " + dist_names[dist] + " " + c.name).c_str());
      double us = median_us([&](int r) {
        LhkImage image = lhk_image(im, r, channels == 1 ? nullptr : bt601_rgb);
        CHECK_CUDA(lhk_histogram(&c.dev, pixel, 256, &image, 1, b.hist, 1, b.scratch, g_stream));
      });
      add_row(bench, size, dist_names[dist], c.name, us, (double)bytes, cub_us, copy);
    }
  }
  CHECK_CUDA(cudaFree(dst));
  free_hist_buffers(b);
  free_images(im);
}

/* ------------------------------------------------------------------------ */
/* One frame: histogram + statistics + percentiles                           */

struct Moments {
  unsigned long long count, sum, sum_squares;
  unsigned int min, max;
};

struct BinMoments {
  const unsigned int *hist;
  __host__ __device__ Moments operator()(unsigned int bin) const
  {
    const unsigned long long h = hist[bin];
    Moments m;
    m.count = h;
    m.sum = h * bin;
    m.sum_squares = h * bin * bin;
    m.min = h ? bin : 0xffffffffu;
    m.max = h ? bin : 0u;
    return m;
  }
};

struct AddMoments {
  __host__ __device__ Moments operator()(const Moments &a, const Moments &b) const
  {
    Moments m;
    m.count = a.count + b.count;
    m.sum = a.sum + b.sum;
    m.sum_squares = a.sum_squares + b.sum_squares;
    m.min = a.min < b.min ? a.min : b.min;
    m.max = a.max > b.max ? a.max : b.max;
    return m;
  }
};

static const unsigned bench_percentiles[5] = {1, 5, 50, 95, 99};

static void fill_finish(LhkFinish *f, unsigned long long *hist, void *result, uint64_t pixels)
{
  memset(f, 0, sizeof *f);
  f->histogram = hist;
  f->result = result;
  f->bins = 256;
  f->black = 0;
  f->white = 255;
  f->n_ranks = 6;
  f->ranks[0] = (pixels + 1) / 2; /* the median, as lhi_percentile_rank(50) */
  /* max(1, ceil(p / 100 N)) as lhi_percentile_rank; these p are whole. */
  for (int i = 0; i < 5; i++) {
    unsigned long long r = ((unsigned long long)bench_percentiles[i] * pixels + 99) / 100;
    f->ranks[i + 1] = r < 1 ? 1 : r > pixels ? pixels : r;
  }
}

#ifdef LHK_PHASE_TIMES
extern "C" cudaError_t lhk_phase_times_read(unsigned long long *out);

/* The phase times of the last fused launch (kernels/lhk-common.cuh), in ns
 * from the first block's start: each phase's end, latest and mean over the
 * blocks, and the finishing block's two. */
static void print_phase_times(const char *dist)
{
  enum {
    BLOCKS = 1024,
    PHASES = 12,
    BLOCK_PHASES = 5,
    LOADED = 6,
    FINISHED = 5,
    SUMMED = 7,
    SCANNED = 8,
    PAST_BARRIER = 9,
    TOTALS = 10,
    THRESHOLDS = 11
  };
  static unsigned long long t[BLOCKS][PHASES];
  CHECK_CUDA(lhk_phase_times_read(&t[0][0]));
  /* The launch's blocks are the first n, whose start stamps are recent. */
  unsigned long long newest = 0, t0 = ~0ull;
  for (int b = 0; b < BLOCKS; b++)
    newest = std::max(newest, t[b][0]);
  int n = 0;
  while (n < BLOCKS && t[n][0] + 1000000 > newest)
    t0 = std::min(t0, t[n++][0]);
  static const char *const names[BLOCK_PHASES] = {"started", "zeroed", "counted", "committed",
                                                  "ticket"};
  printf("phases %s, %d blocks (latest / mean ns):", dist, n);
  unsigned long long loaded = 0, scanned = 0, past_barrier = 0, totals = 0, thresholds = 0,
                     finished = 0;
  for (int k = 0; k < BLOCK_PHASES; k++) {
    unsigned long long latest = 0;
    double mean = 0;
    for (int b = 0; b < n; b++) {
      latest = std::max(latest, t[b][k] - t0);
      mean += (double)(t[b][k] - t0) / n;
    }
    printf(" %s %llu / %.0f", names[k], latest, mean);
  }
  for (int b = 0; b < n; b++)
    if (t[b][FINISHED] > t0 && t[b][FINISHED] - t0 < 1000000) {
      loaded = t[b][LOADED] - t0;
      scanned = t[b][SCANNED] - t0;
      past_barrier = t[b][PAST_BARRIER] - t0;
      totals = t[b][TOTALS] - t0;
      thresholds = t[b][THRESHOLDS] - t0;
      finished = t[b][FINISHED] - t0;
    }
  unsigned long long summed_latest = 0;
  double summed_mean = 0;
  for (int b = 0; b < n; b++) {
    summed_latest = std::max(summed_latest, t[b][SUMMED] - t0);
    summed_mean += (double)(t[b][SUMMED] - t0) / n;
  }
  printf("; thread 0 summed %llu / %.0f", summed_latest, summed_mean);
  printf("; last block: copies loaded %llu, scanned %llu, past the barrier %llu, warp totals "
         "%llu, thresholds %llu, finished %llu\n",
         loaded, scanned, past_barrier, totals, thresholds, finished);
}
#endif

static void bench_frame_stats(const LhkDevice *dev)
{
  const uint32_t w = 3840, h = 2160;
  const size_t bytes = (size_t)w * h;
  Image8 im = make_images(w, h, 1, rotation(bytes));
  HistBuffers b = make_hist_buffers(bytes);
  void *result;
  CHECK_CUDA(cudaMalloc(&result, lhk_result_bytes(256)));
  Moments *cub_moments;
  CHECK_CUDA(cudaMalloc(&cub_moments, sizeof(Moments)));
  size_t reduce_bytes = 0;
  Moments init = {0, 0, 0, 0xffffffffu, 0};
  thrust::counting_iterator<unsigned int> bins(0);
  CHECK_CUDA(cub::DeviceReduce::TransformReduce(nullptr, reduce_bytes, bins, cub_moments, 256,
                                                AddMoments(), BinMoments{b.cub_hist}, init));
  void *reduce_temp;
  CHECK_CUDA(cudaMalloc(&reduce_temp, reduce_bytes));
  LhkFinish finish;
  fill_finish(&finish, b.hist, result, bytes);

  const std::vector<Gray8Choice> choices = gray8_choices(dev, true);
  const LhkDevice *our_dev = dev;
  auto ours_two = [&](int r) {
    LhkImage image = lhk_image(im, r, nullptr);
    CHECK_CUDA(
        lhk_histogram(our_dev, LHK_PIXEL_Y8, 256, &image, 1, b.hist, 1, b.scratch, g_stream));
    CHECK_CUDA(lhk_finish(&finish, 1, g_stream));
  };
  auto ours_fused = [&](int r) {
    LhkImage image = lhk_image(im, r, nullptr);
    CHECK_CUDA(lhk_histogram_finish(our_dev, LHK_PIXEL_Y8, &image, &finish, b.scratch, g_stream));
  };
  auto cub_pair = [&](int r) {
    CHECK_CUDA(cub::DeviceHistogram::HistogramEven(b.cub_temp, b.cub_temp_bytes,
                                                   im.buffers[r % im.buffers.size()], b.cub_hist,
                                                   257, 0, 256, (int)bytes, g_stream));
    CHECK_CUDA(cub::DeviceReduce::TransformReduce(reduce_temp, reduce_bytes, bins, cub_moments, 256,
                                                  AddMoments(), BinMoments{b.cub_hist}, init,
                                                  g_stream));
  };
  /* One graph per input buffer, captured once: replays are the timed part. */
  auto capture = [&](auto work, int n) {
    std::vector<cudaGraphExec_t> execs(n);
    for (int i = 0; i < n; i++) {
      cudaGraph_t graph;
      CHECK_CUDA(cudaStreamBeginCapture(g_stream, cudaStreamCaptureModeThreadLocal));
      work(i);
      CHECK_CUDA(cudaStreamEndCapture(g_stream, &graph));
      CHECK_CUDA(cudaGraphInstantiate(&execs[i], graph, 0));
      CHECK_CUDA(cudaGraphDestroy(graph));
    }
    return execs;
  };
  const int n = (int)im.buffers.size();
  unsigned *sink;
  CHECK_CUDA(cudaMalloc(&sink, sizeof *sink));
  add_row("4K floor", "3840x2160", "-", "empty kernel",
          median_us([&](int) { empty_kernel<<<1, 32, 0, g_stream>>>(); }), 0, 0, 0);
  CHECK_CUDA(
      cudaFuncSetAttribute(read_only<true>, cudaFuncAttributeMaxDynamicSharedMemorySize, 65536));
  CHECK_CUDA(cudaFuncSetAttribute(read_only<true>, cudaFuncAttributePreferredSharedMemoryCarveout,
                                  cudaSharedmemCarveoutMaxShared));
  for (int shared = 0; shared <= 1; shared++) {
    for (int blocks_per_sm : {2, 3}) {
      const unsigned grid = (unsigned)dev->sm_count * blocks_per_sm;
      add_row("4K floor", "3840x2160", "-",
              std::string(shared ? "read + 64 KiB zeroed, " : "read only, ") +
                  std::to_string(blocks_per_sm) + " blocks/SM",
              median_us([&](int r) {
                const uint4 *frame = (const uint4 *)im.buffers[r % n];
                if (shared)
                  read_only<true><<<grid, 512, 65536, g_stream>>>(frame, bytes / 16, sink);
                else
                  read_only<false><<<grid, 512, 0, g_stream>>>(frame, bytes / 16, sink);
              }),
              (double)bytes, 0, 0);
    }
  }
  add_row("4K floor", "3840x2160", "-", "empty kernel, 1.3 KiB parameters", median_us([&](int) {
            FinishSizedParams big;
            memset(&big, 0, sizeof big);
            empty_kernel_params<<<1, 32, 0, g_stream>>>(big);
          }),
          0, 0, 0);
  {
    unsigned long long *copies;
    unsigned *ticket;
    CHECK_CUDA(cudaMalloc(&copies, (4 * 256 + 257) * sizeof *copies));
    CHECK_CUDA(cudaMalloc(&ticket, sizeof *ticket));
    CHECK_CUDA(cudaMemset(copies, 0, (4 * 256 + 257) * sizeof *copies));
    CHECK_CUDA(cudaMemset(ticket, 0, sizeof *ticket));
    unsigned long long *out = copies + 4 * 256;
    for (int commit = 0; commit <= 1; commit++) {
      for (int blocks_per_sm : {2, 3}) {
        const unsigned grid = (unsigned)dev->sm_count * blocks_per_sm;
        add_row("4K floor", "3840x2160", "-",
                std::string(commit ? "read + commit + ticket + merge, "
                                   : "read + ticket + last block's loads, ") +
                    std::to_string(blocks_per_sm) + " blocks/SM",
                median_us([&](int r) {
                  const uint4 *frame = (const uint4 *)im.buffers[r % n];
                  if (commit)
                    read_merge<true>
                        <<<grid, 512, 0, g_stream>>>(frame, bytes / 16, copies, ticket, out);
                  else
                    read_merge<false>
                        <<<grid, 512, 0, g_stream>>>(frame, bytes / 16, copies, ticket, out);
                }),
                (double)bytes, 0, 0);
      }
    }
    CHECK_CUDA(cudaFree(copies));
    CHECK_CUDA(cudaFree(ticket));
  }
  CHECK_CUDA(cudaFree(sink));
  for (int dist : {UNIFORM, PHOTO, SINGLE}) {
    fill_images(im, dist);
    const char *d = dist_names[dist];
    double cub_us = median_us(cub_pair);
    add_row("4K hist+stats", "3840x2160", d, "CUB hist + CUB reduce", cub_us, (double)bytes, 0, 0);
    auto cub_graphs = capture(cub_pair, n);
    double cub_graph_us =
        median_us([&](int r) { CHECK_CUDA(cudaGraphLaunch(cub_graphs[r % n], g_stream)); });
    add_row("4K hist+stats", "3840x2160", d, "CUB hist + reduce (graph)", cub_graph_us,
            (double)bytes, 0, 0);
    for (const Gray8Choice &c : choices) {
      our_dev = &c.dev;
      const std::string v = c.name == "lhk_histogram" ? "" : " [" + c.name + "]";
      add_row("4K hist+stats+5 pct", "3840x2160", d, "lhk_histogram + lhk_finish" + v,
              median_us(ours_two), (double)bytes, cub_us, 0);
      add_row("4K hist+stats+5 pct", "3840x2160", d, "lhk_histogram_finish" + v,
              median_us(ours_fused), (double)bytes, cub_us, 0);
      auto graphs = capture(ours_two, n);
      add_row("4K hist+stats+5 pct", "3840x2160", d, "hist + finish (graph)" + v,
              median_us([&](int r) { CHECK_CUDA(cudaGraphLaunch(graphs[r % n], g_stream)); }),
              (double)bytes, cub_graph_us, 0);
      auto fused_graphs = capture(ours_fused, n);
      add_row("4K hist+stats+5 pct", "3840x2160", d, "histogram_finish (graph)" + v,
              median_us([&](int r) { CHECK_CUDA(cudaGraphLaunch(fused_graphs[r % n], g_stream)); }),
              (double)bytes, cub_graph_us, 0);
      for (auto *set : {&graphs, &fused_graphs})
        for (cudaGraphExec_t e : *set)
          CHECK_CUDA(cudaGraphExecDestroy(e));
    }
    for (cudaGraphExec_t e : cub_graphs)
      CHECK_CUDA(cudaGraphExecDestroy(e));
  }
#ifdef LHK_PHASE_TIMES
  for (int dist : {UNIFORM, PHOTO, SINGLE}) {
    fill_images(im, dist);
    for (int rep = 0; rep < 5; rep++) {
      spin<<<1, 1, 0, g_stream>>>(40000);
      ours_fused(rep);
      CHECK_CUDA(cudaStreamSynchronize(g_stream));
      print_phase_times(dist_names[dist]);
    }
  }
#endif
  our_dev = dev;
  /* Our moments against CUB's on the last input, as a sanity check. */
  cub_pair(0);
  ours_two(0);
  Moments theirs;
  LhkResult ours;
  CHECK_CUDA(
      cudaMemcpyAsync(&theirs, cub_moments, sizeof theirs, cudaMemcpyDeviceToHost, g_stream));
  CHECK_CUDA(cudaMemcpyAsync(&ours, result, sizeof ours, cudaMemcpyDeviceToHost, g_stream));
  CHECK_CUDA(cudaStreamSynchronize(g_stream));
  if (ours.count != theirs.count || ours.sum != theirs.sum ||
      ours.sum_squares_lo != theirs.sum_squares || ours.min != theirs.min ||
      ours.max != theirs.max) {
    printf("MISMATCH: 4K moments: ours count %llu sum %llu, CUB count %llu sum %llu\n", ours.count,
           ours.sum, theirs.count, theirs.sum);
    g_mismatch = true;
  }
  CHECK_CUDA(cudaFree(reduce_temp));
  CHECK_CUDA(cudaFree(cub_moments));
  CHECK_CUDA(cudaFree(result));
  free_hist_buffers(b);
  free_images(im);
}

/* ------------------------------------------------------------------------ */
/* Radix sort                                                                */

template <typename K>
static void bench_sort(const LhkDevice *dev, const char *size, uint64_t n, int dist)
{
  const size_t bytes = n * sizeof(K);
  const int key_bits = 8 * sizeof(K);
  const int n_in = rotation(2 * bytes);
  std::vector<K *> in(n_in);
  for (int i = 0; i < n_in; i++) {
    CHECK_CUDA(cudaMalloc(&in[i], bytes));
    gen_keys<K><<<1024, 256, 0, g_stream>>>(in[i], n, dist, 77 + i);
  }
  K *out, *cub_out;
  CHECK_CUDA(cudaMalloc(&out, bytes));
  CHECK_CUDA(cudaMalloc(&cub_out, bytes));
  size_t cub_bytes = 0;
  CHECK_CUDA(
      cub::DeviceRadixSort::SortKeys(nullptr, cub_bytes, in[0], cub_out, (int)n, 0, key_bits));
  void *cub_temp;
  CHECK_CUDA(cudaMalloc(&cub_temp, cub_bytes));
  size_t our_bytes = 0;
  for (int r : {4, 6, 8})
    our_bytes = std::max(our_bytes, lhk_radix_sort_scratch_bytes(n, sizeof(K), r));
  void *scratch;
  CHECK_CUDA(cudaMalloc(&scratch, our_bytes));
  CHECK_CUDA(cudaStreamSynchronize(g_stream));

  const std::string bench = std::string("sort u") + std::to_string(key_bits);
  double cub_us = median_us([&](int r) {
    CHECK_CUDA(cub::DeviceRadixSort::SortKeys(cub_temp, cub_bytes, in[r % n_in], cub_out, (int)n, 0,
                                              key_bits, g_stream));
  });
  /* Sorting reads and writes every key once per pass at least: GB/s here is
   * keys x key bytes / time. */
  add_row(bench, size, dist_names[dist], "cub::DeviceRadixSort", cub_us, (double)bytes, 0, 0);
  std::vector<K> a(n), c(n);
  for (int radix : {4, 6, 8}) {
    auto sort = [&](int r) {
      cudaError_t e = sizeof(K) == 2
                          ? lhk_radix_sort_u16(dev, (const uint16_t *)in[r % n_in], (uint16_t *)out,
                                               n, 0, key_bits, radix, scratch, our_bytes, g_stream)
                          : lhk_radix_sort_u32(dev, (const uint32_t *)in[r % n_in], (uint32_t *)out,
                                               n, 0, key_bits, radix, scratch, our_bytes, g_stream);
      CHECK_CUDA(e);
    };
    /* The same keys as CUB's, or the timing means nothing. */
    CHECK_CUDA(cub::DeviceRadixSort::SortKeys(cub_temp, cub_bytes, in[1 % n_in], cub_out, (int)n, 0,
                                              key_bits, g_stream));
    sort(1);
    CHECK_CUDA(cudaMemcpyAsync(a.data(), out, bytes, cudaMemcpyDeviceToHost, g_stream));
    CHECK_CUDA(cudaMemcpyAsync(c.data(), cub_out, bytes, cudaMemcpyDeviceToHost, g_stream));
    CHECK_CUDA(cudaStreamSynchronize(g_stream));
    if (a != c) {
      printf("MISMATCH: %s %s r=%d: our sort differs from CUB's\n", bench.c_str(), size, radix);
      g_mismatch = true;
    }
    add_row(bench, size, dist_names[dist], "lhk_radix_sort r=" + std::to_string(radix),
            median_us(sort), (double)bytes, cub_us, 0);
  }
  for (K *p : in)
    CHECK_CUDA(cudaFree(p));
  CHECK_CUDA(cudaFree(out));
  CHECK_CUDA(cudaFree(cub_out));
  CHECK_CUDA(cudaFree(cub_temp));
  CHECK_CUDA(cudaFree(scratch));
}

/* Percentiles of one 4K frame by sort and by histogram: what the `auto`
 * method should pick.  Gray 8-bit and 16-bit (65536 bins). */
static void bench_percentile_methods(const LhkDevice *dev)
{
  const uint32_t w = 3840, h = 2160;
  const uint64_t pixels = (uint64_t)w * h;
  for (int depth : {8, 16}) {
    const int sample_bytes = depth == 8 ? 1 : 2;
    const size_t bytes = pixels * sample_bytes;
    const int n = rotation(bytes);
    std::vector<uint8_t *> frames(n);
    for (int i = 0; i < n; i++) {
      CHECK_CUDA(cudaMalloc(&frames[i], bytes));
      gen_image<<<1024, 256, 0, g_stream>>>(frames[i], w * sample_bytes, h, 1, PHOTO, 5 + i);
    }
    const uint32_t bins = 1u << depth;
    unsigned long long *hist;
    CHECK_CUDA(cudaMalloc(&hist, bins * sizeof(unsigned long long)));
    CHECK_CUDA(cudaMemset(hist, 0, bins * sizeof(unsigned long long)));
    void *result, *hist_scratch, *sort_scratch;
    CHECK_CUDA(cudaMalloc(&result, lhk_result_bytes(bins)));
    size_t hs = lhk_histogram_scratch_bytes(bins, 1);
    CHECK_CUDA(cudaMalloc(&hist_scratch, hs ? hs : 1));
    CHECK_CUDA(cudaMemset(hist_scratch, 0, hs ? hs : 1));
    const size_t ss = lhk_sort_scratch_bytes(pixels);
    CHECK_CUDA(cudaMalloc(&sort_scratch, ss));
    uint32_t *values;
    CHECK_CUDA(cudaMalloc(&values, LHK_MAX_RANKS * sizeof(uint32_t)));
    LhkFinish finish;
    fill_finish(&finish, hist, result, pixels);
    finish.bins = bins;
    finish.white = bins - 1;
    const LhkPixel pixel = depth == 8 ? LHK_PIXEL_Y8 : LHK_PIXEL_Y16;
    auto image_of = [&](int r) {
      LhkImage image;
      memset(&image, 0, sizeof image);
      image.data = frames[r % n];
      image.stride = (size_t)w * sample_bytes;
      image.width = w;
      image.height = h;
      image.max_value = bins - 1;
      return image;
    };
    const std::string size = std::string("4K ") + std::to_string(depth) + "-bit";
    double hist_us = median_us([&](int r) {
      LhkImage image = image_of(r);
      CHECK_CUDA(lhk_histogram(dev, pixel, bins, &image, 1, hist, 1, hist_scratch, g_stream));
      CHECK_CUDA(lhk_finish(&finish, 1, g_stream));
    });
    add_row("percentiles method", size, "photo", "hist: histogram + finish", hist_us, (double)bytes,
            0, 0);
    double sort_us = median_us([&](int r) {
      LhkImage image = image_of(r);
      CHECK_CUDA(lhk_sort_percentiles(dev, pixel, &image, depth, finish.ranks, finish.n_ranks,
                                      values, sort_scratch, ss, g_stream));
    });
    add_row("percentiles method", size, "photo", "sort: lhk_sort_percentiles", sort_us,
            (double)bytes, 0, 0);
    /* Both must find the same values. */
    LhkResult res;
    uint32_t by_sort[LHK_MAX_RANKS];
    LhkImage image = image_of(0);
    CHECK_CUDA(lhk_histogram(dev, pixel, bins, &image, 1, hist, 1, hist_scratch, g_stream));
    CHECK_CUDA(lhk_finish(&finish, 1, g_stream));
    CHECK_CUDA(lhk_sort_percentiles(dev, pixel, &image, depth, finish.ranks, finish.n_ranks, values,
                                    sort_scratch, ss, g_stream));
    CHECK_CUDA(cudaMemcpyAsync(&res, result, sizeof res, cudaMemcpyDeviceToHost, g_stream));
    CHECK_CUDA(cudaMemcpyAsync(by_sort, values, sizeof by_sort, cudaMemcpyDeviceToHost, g_stream));
    CHECK_CUDA(cudaStreamSynchronize(g_stream));
    for (int i = 0; i < finish.n_ranks; i++)
      if (res.values[i] != by_sort[i]) {
        printf("MISMATCH: %s rank %llu: histogram %u, sort %u\n", size.c_str(), finish.ranks[i],
               res.values[i], by_sort[i]);
        g_mismatch = true;
      }
    printf("  -> auto for %s: %s is faster (%.1f vs %.1f us)\n", size.c_str(),
           hist_us <= sort_us ? "hist" : "sort", hist_us <= sort_us ? hist_us : sort_us,
           hist_us <= sort_us ? sort_us : hist_us);
    for (uint8_t *p : frames)
      CHECK_CUDA(cudaFree(p));
    CHECK_CUDA(cudaFree(hist));
    CHECK_CUDA(cudaFree(result));
    CHECK_CUDA(cudaFree(hist_scratch));
    CHECK_CUDA(cudaFree(sort_scratch));
    CHECK_CUDA(cudaFree(values));
  }
}

/* ------------------------------------------------------------------------ */
/* 10 to 16-bit frames: where the time of one goes                          */

/* Samples of `depth` bits in 16-bit words: UNIFORM every bin alike, PHOTO
 * the 8-bit photo in the top bits and noise below. */
__global__ void gen_wide(uint16_t *out, uint64_t n, int depth, int dist, uint64_t seed)
{
  for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (uint64_t)gridDim.x * blockDim.x) {
    const uint64_t r = mix64(seed ^ (i * 0xD1B54A32D192ED03ull));
    const uint32_t low = (uint32_t)r & ((1u << (depth - 8)) - 1);
    out[i] = dist == UNIFORM ? (uint16_t)(r & ((1u << depth) - 1))
                             : (uint16_t)(sample8(PHOTO, seed, i, (uint32_t)(i % 3840),
                                                  (uint32_t)(i / 3840), 3840, 2160)
                                              << (depth - 8) |
                                          low);
  }
}

/* One 4K frame of 10, 12 and 16-bit Y: the histogram (for 16 bits each way
 * of privatizing more than 4096 bins: global copies, clusters of 2 to 16
 * blocks), the finish, and the result block's copy to the host, each alone,
 * beside the 8-bit frame's fused launch; 10 and 12 bits also fused
 * (lhk_histogram_finish, 1, 2 and 4 copies). */
static void bench_wide(void)
{
  const uint32_t w = 3840, h = 2160;
  const uint64_t pixels = (uint64_t)w * h;
  const size_t bytes = pixels * 2;
  const int n = rotation(bytes);
  std::vector<uint16_t *> frames(n);
  for (int i = 0; i < n; i++)
    CHECK_CUDA(cudaMalloc(&frames[i], bytes));
  unsigned long long *hist;
  void *result, *scratch, *host;
  const size_t scratch_bytes = lhk_histogram_scratch_bytes(65536, 1);
  CHECK_CUDA(cudaMalloc(&hist, 65536 * sizeof(unsigned long long)));
  CHECK_CUDA(cudaMemset(hist, 0, 65536 * sizeof(unsigned long long)));
  CHECK_CUDA(cudaMalloc(&result, lhk_result_bytes(65536)));
  CHECK_CUDA(cudaMalloc(&scratch, scratch_bytes));
  CHECK_CUDA(cudaMemset(scratch, 0, scratch_bytes));
  CHECK_CUDA(cudaMallocHost(&host, lhk_result_bytes(65536)));
  struct Variant {
    const char *name, *slice;
  };
  const Variant variants[] = {{"global copies", "0"},          {"clusters of 2", "131072"},
                              {"clusters of 4", "65536"},       {"clusters of 8", "32768"},
                              {"clusters of 16", "16384"}};
  for (int depth : {10, 12, 16}) {
    const uint32_t bins = 1u << depth;
    for (int dist : {UNIFORM, PHOTO}) {
      for (int i = 0; i < n; i++)
        gen_wide<<<1024, 256, 0, g_stream>>>(frames[i], pixels, depth, dist, 77 + i);
      CHECK_CUDA(cudaStreamSynchronize(g_stream));
      auto image_of = [&](int r) {
        LhkImage image;
        memset(&image, 0, sizeof image);
        image.data = frames[r % n];
        image.stride = (size_t)w * 2;
        image.width = w;
        image.height = h;
        image.max_value = bins - 1;
        return image;
      };
      const std::string size = std::string("4K ") + std::to_string(depth) + "-bit";
      for (const Variant &v : variants) {
        if (depth < 16 && strcmp(v.slice, "32768") != 0)
          continue; /* 4096 bins and fewer: shared memory, whatever the slice */
        setenv("LHK_CLUSTER_SLICE_BYTES", v.slice, 1);
        LhkDevice dev;
        CHECK_CUDA(lhk_device_init(&dev));
        const std::string impl =
            std::string("histogram, ") + (depth < 16 ? "shared" : v.name);
        double us = median_us([&](int r) {
          LhkImage image = image_of(r);
          CHECK_CUDA(lhk_histogram(&dev, LHK_PIXEL_Y16, bins, &image, 1, hist, 1, scratch,
                                   g_stream));
        });
        add_row("wide frame", size, dist_names[dist], impl, us, (double)bytes, 0, 0);
        CHECK_CUDA(cudaMemsetAsync(hist, 0, bins * sizeof(unsigned long long), g_stream));
      }
      unsetenv("LHK_CLUSTER_SLICE_BYTES");
      /* 10 and 12 bits: histogram and finish in one launch, against the two
       * rows above and the finish below, with each count of copies the
       * blocks commit to (LHK_FUSED_WIDE_COPIES). */
      for (const char *copies : {"1", "2", "4"}) {
        if (depth == 16)
          break;
        setenv("LHK_FUSED_WIDE_COPIES", copies, 1);
        LhkDevice dev;
        CHECK_CUDA(lhk_device_init(&dev));
        LhkFinish finish;
        fill_finish(&finish, hist, result, pixels);
        finish.bins = bins;
        finish.white = bins - 1;
        const std::string impl = std::string("histogram + finish, fused, ") + copies + " cop" +
                                 (copies[0] == '1' ? "y" : "ies");
        double us = median_us([&](int r) {
          LhkImage image = image_of(r);
          CHECK_CUDA(lhk_histogram_finish(&dev, LHK_PIXEL_Y16, &image, &finish, scratch, g_stream));
        });
        add_row("wide frame", size, dist_names[dist], impl, us, (double)bytes, 0, 0);
      }
      unsetenv("LHK_FUSED_WIDE_COPIES");
    }
    LhkFinish finish;
    fill_finish(&finish, hist, result, pixels);
    finish.bins = bins;
    finish.white = bins - 1;
    const std::string size = std::string("4K ") + std::to_string(depth) + "-bit";
    add_row("wide frame", size, "-", "finish (lhk_finish)",
            median_us([&](int) { CHECK_CUDA(lhk_finish(&finish, 1, g_stream)); }), 0, 0, 0);
    add_row("wide frame", size, "-", "result block to host",
            median_us([&](int) {
              CHECK_CUDA(cudaMemcpyAsync(host, result, lhk_result_bytes(bins),
                                         cudaMemcpyDeviceToHost, g_stream));
            }),
            0, 0, 0);
  }
  for (uint16_t *p : frames)
    CHECK_CUDA(cudaFree(p));
  CHECK_CUDA(cudaFree(hist));
  CHECK_CUDA(cudaFree(result));
  CHECK_CUDA(cudaFree(scratch));
  CHECK_CUDA(cudaFreeHost(host));
}

/* ------------------------------------------------------------------------ */

static void usage(void)
{
  printf("usage: lumahist-bench [--csv PATH] [--runs N] [--only hist|gray8|frame|sort|method|wide]\n"
         "                      [--gray8-variants]\n"
         "Times lumahist's CUDA kernels against CUB and a device-to-device copy;\n"
         "--gray8-variants: every 8-bit gray histogram kernel, each checked against CUB.\n");
}

int main(int argc, char **argv)
{
  setvbuf(stdout, nullptr, _IOLBF, 0);
  const char *csv_path = nullptr, *only = nullptr;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--csv") && i + 1 < argc) {
      csv_path = argv[++i];
    } else if (!strcmp(argv[i], "--runs") && i + 1 < argc) {
      g_runs = atoi(argv[++i]);
    } else if (!strcmp(argv[i], "--only") && i + 1 < argc) {
      only = argv[++i];
    } else if (!strcmp(argv[i], "--gray8-variants")) {
      g_gray8_variants = true;
    } else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      usage();
      return 0;
    } else {
      usage();
      return 2;
    }
  }
  if (g_runs < 50) {
    fprintf(stderr, "lumahist-bench: --runs must be at least 50 (the median of many runs)\n");
    return 2;
  }
  int n_devices = 0;
  if (cudaGetDeviceCount(&n_devices) != cudaSuccess || n_devices == 0) {
    fprintf(stderr, "lumahist-bench: no usable CUDA device\n");
    return 1;
  }
  LhkDevice dev;
  CHECK_CUDA(lhk_device_init(&dev));
  cudaDeviceProp prop;
  CHECK_CUDA(cudaGetDeviceProperties(&prop, dev.device));
  int l2 = 0;
  CHECK_CUDA(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev.device));
  g_l2_bytes = (size_t)l2;
  CHECK_CUDA(cudaStreamCreateWithFlags(&g_stream, cudaStreamNonBlocking));
  CHECK_CUDA(cudaEventCreate(&g_start));
  CHECK_CUDA(cudaEventCreate(&g_stop));
  printf("device: %s, %d SMs, L2 %.1f MB; median of %d runs per row\n", prop.name,
         prop.multiProcessorCount, l2 / 1e6, g_runs);
  print_header();

  const std::vector<int> all = {UNIFORM, PHOTO, SINGLE, MOSTLY_ONE, SAME_BANK, NARROW_BAND};
  auto want = [&](const char *what) { return !only || !strcmp(only, what); };
  if (want("hist") || want("gray8")) {
    bench_histograms(&dev, "4K", 3840, 2160, 1, all);
    bench_histograms(&dev, "1GiB", 16384, 65536, 1, all);
  }
  if (want("hist")) {
    bench_histograms(&dev, "4K", 3840, 2160, 3, {UNIFORM, PHOTO, SINGLE});
    bench_histograms(&dev, "4K", 3840, 2160, 4, {UNIFORM, PHOTO});
    bench_histograms(&dev, "1.07GB", 16384, 21846, 3, {UNIFORM, PHOTO, SINGLE});
  }
  if (want("frame"))
    bench_frame_stats(&dev);
  if (want("sort")) {
    bench_sort<uint16_t>(&dev, "4K keys", 3840ull * 2160, UNIFORM);
    bench_sort<uint16_t>(&dev, "4K keys", 3840ull * 2160, PHOTO);
    bench_sort<uint32_t>(&dev, "8M keys", 8ull << 20, UNIFORM);
  }
  if (want("method"))
    bench_percentile_methods(&dev);
  if (want("wide"))
    bench_wide();

  if (csv_path) {
    FILE *f = fopen(csv_path, "w");
    if (!f) {
      perror(csv_path);
      return 1;
    }
    fprintf(f, "bench,size,input,implementation,median_us,gb_per_s,vs_cub,pct_of_copy\n");
    for (const Row &r : g_rows)
      fprintf(f, "%s,%s,%s,%s,%.3f,%.2f,%.3f,%.1f\n", r.bench.c_str(), r.size.c_str(),
              r.dist.c_str(), r.impl.c_str(), r.us, r.gbps, r.vs_cub, r.pct_copy);
    fclose(f);
  }
  if (g_mismatch) {
    printf("lumahist-bench: results differ between implementations (see MISMATCH lines)\n");
    return 1;
  }
  return 0;
}
