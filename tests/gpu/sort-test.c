/* sort-test.c: the GPU radix sort against a host sort on many key arrays, and
 * percentiles by sorting against percentiles from the histogram (launcher and
 * public API, CUDA and CPU backends).  Exits 77 when no CUDA device is usable. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "frame-gen.h"
#include "lh-kernels.h"
#include "lh-private.h"
#include "lumahist.h"
#include "test-check.h"

#define CUDA_OR_DIE(call)                                                                          \
  do {                                                                                             \
    cudaError_t err_ = (call);                                                                     \
    if (err_ != cudaSuccess) {                                                                     \
      fprintf(stderr, "FAIL %s:%d: %s: %s\n", __FILE__, __LINE__, #call,                           \
              cudaGetErrorString(err_));                                                           \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)

static LhkDevice device;

/* ------------------------------------------------------------------------ */
/* Key arrays                                                                */

typedef enum {
  KEYS_RANDOM,    /* every bit random */
  KEYS_CONSTANT,  /* one value */
  KEYS_FEW,       /* three values */
  KEYS_SORTED,    /* ascending, with repeats */
  KEYS_REVERSED,  /* descending */
  KEYS_LOW_BYTE,  /* only the low 8 bits vary (8-bit luma in 16-bit keys) */
  KEYS_ONE_DIGIT, /* random, but bits 8..15 all ones (a bucket taking every key) */
  KEYS_COUNT
} KeyDistribution;

static const char *const key_names[KEYS_COUNT] = {"random",   "constant", "few",      "sorted",
                                                  "reversed", "low-byte", "one-digit"};

static void make_keys(uint32_t *keys, size_t n, KeyDistribution d, int key_bits, uint64_t seed)
{
  uint64_t rng = seed * 0x9E3779B97F4A7C15ULL + 7;
  const uint32_t mask = key_bits == 32 ? 0xffffffffu : (1u << key_bits) - 1;
  for (size_t i = 0; i < n; i++) {
    uint32_t r = (uint32_t)(gen_next(&rng) >> 16);
    uint32_t v;
    switch (d) {
    case KEYS_RANDOM:
      v = r;
      break;
    case KEYS_CONSTANT:
      v = 0x9e37c1a5u;
      break;
    case KEYS_FEW:
      v = (r % 3 == 0) ? 0u : (r % 3 == 1) ? 0x0101u : mask;
      break;
    case KEYS_SORTED:
      v = (uint32_t)(i / 3);
      break;
    case KEYS_REVERSED:
      v = (uint32_t)(n - i);
      break;
    case KEYS_LOW_BYTE:
      v = r & 0xffu;
      break;
    case KEYS_ONE_DIGIT:
    default:
      v = r | 0xff00u;
      break;
    }
    keys[i] = v & mask;
  }
}

static int compare_u32(const void *a, const void *b)
{
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return (x > y) - (x < y);
}

/* A stable sort by bits [begin, end) (end - begin <= 16): what an LSD sort of
 * a bit range must give, equal digits keeping their input order. */
static void host_stable_sort_bits(const uint32_t *in, uint32_t *out, size_t n, int begin, int end)
{
  const uint32_t mask = (1u << (end - begin)) - 1;
  size_t *offsets = calloc((size_t)mask + 2, sizeof *offsets);
  for (size_t i = 0; i < n; i++)
    offsets[((in[i] >> begin) & mask) + 1]++;
  for (uint32_t d = 0; d <= mask; d++)
    offsets[d + 1] += offsets[d];
  for (size_t i = 0; i < n; i++)
    out[offsets[(in[i] >> begin) & mask]++] = in[i];
  free(offsets);
}

/* Sorts keys (key_bits 16 or 32 wide) on the GPU by bits [begin, end) with
 * r-bit digits and compares with expected; the output is poisoned first so
 * that an unwritten key shows. */
static void check_gpu_sort(const uint32_t *keys, const uint32_t *expected, size_t n, int key_bits,
                           int begin, int end, int radix_bits, const char *what)
{
  const size_t key_bytes = key_bits / 8;
  const size_t scratch_bytes = lhk_radix_sort_scratch_bytes(n, (int)key_bytes, radix_bits);
  CHECK(scratch_bytes > 0, "scratch size for r=%d", radix_bits);
  void *d_in, *d_out, *d_scratch;
  CUDA_OR_DIE(cudaMalloc(&d_in, n * key_bytes + 16));
  CUDA_OR_DIE(cudaMalloc(&d_out, n * key_bytes + 16));
  CUDA_OR_DIE(cudaMalloc(&d_scratch, scratch_bytes));
  void *host = malloc(n * key_bytes + 16);
  for (size_t i = 0; i < n; i++) {
    if (key_bits == 16)
      ((uint16_t *)host)[i] = (uint16_t)keys[i];
    else
      ((uint32_t *)host)[i] = keys[i];
  }
  CUDA_OR_DIE(cudaMemcpy(d_in, host, n * key_bytes, cudaMemcpyHostToDevice));
  CUDA_OR_DIE(cudaDeviceSynchronize()); /* landed before any stream reads it */
  CUDA_OR_DIE(cudaMemset(d_out, 0xa5, n * key_bytes + 16));
  CUDA_OR_DIE(cudaMemset(d_scratch, 0x5a, scratch_bytes)); /* scratch needs no zeroing */

  cudaError_t err = key_bits == 16 ? lhk_radix_sort_u16(&device, d_in, d_out, n, begin, end,
                                                        radix_bits, d_scratch, scratch_bytes, 0)
                                   : lhk_radix_sort_u32(&device, d_in, d_out, n, begin, end,
                                                        radix_bits, d_scratch, scratch_bytes, 0);
  if (err == cudaSuccess)
    err = cudaDeviceSynchronize();
  CHECK(err == cudaSuccess, "%s: sort failed: %s", what, cudaGetErrorString(err));
  if (err != cudaSuccess) {
    fprintf(stderr, "giving up: the CUDA context may be unusable\n");
    exit(1);
  }
  CUDA_OR_DIE(cudaMemcpy(host, d_out, n * key_bytes + 16, cudaMemcpyDeviceToHost));
  size_t bad = 0, first_bad = 0;
  for (size_t i = 0; i < n; i++) {
    uint32_t got = key_bits == 16 ? ((uint16_t *)host)[i] : ((uint32_t *)host)[i];
    if (got != expected[i] && bad++ == 0)
      first_bad = i;
  }
  /* The 16 bytes behind the output must be left as they were. */
  const uint8_t *tail = (const uint8_t *)host + n * key_bytes;
  bool tail_ok = true;
  for (int i = 0; i < 16; i++)
    tail_ok = tail_ok && tail[i] == 0xa5;
  CHECK(bad == 0, "%s: %zu of %zu keys wrong, first at %zu: got 0x%x, want 0x%x", what, bad, n,
        first_bad, key_bits == 16 ? ((uint16_t *)host)[first_bad] : ((uint32_t *)host)[first_bad],
        expected[first_bad]);
  CHECK(tail_ok, "%s: wrote past the end of the output", what);
  /* The input must be left as it was. */
  CUDA_OR_DIE(cudaMemcpy(host, d_in, n * key_bytes, cudaMemcpyDeviceToHost));
  bool input_ok = true;
  for (size_t i = 0; i < n && input_ok; i++)
    input_ok = (key_bits == 16 ? ((uint16_t *)host)[i] : ((uint32_t *)host)[i]) == keys[i];
  CHECK(input_ok, "%s: the input was changed", what);
  free(host);
  CUDA_OR_DIE(cudaFree(d_in));
  CUDA_OR_DIE(cudaFree(d_out));
  CUDA_OR_DIE(cudaFree(d_scratch));
}

static void test_radix_sort(void)
{
  /* Tiles are 8192 keys: lengths at and around one and two tiles. */
  static const size_t lengths[] = {1,    2,     31,    1000,  8191,   8192,
                                   8193, 16383, 16385, 65537, 100003, 1u << 20};
  static const int radix[] = {4, 6, 8};
  const size_t n_lengths = sizeof lengths / sizeof lengths[0];
  for (int key_bits = 16; key_bits <= 32; key_bits += 16) {
    for (size_t li = 0; li < n_lengths; li++) {
      const size_t n = lengths[li];
      uint32_t *keys = malloc(n * sizeof *keys), *expected = malloc(n * sizeof *expected);
      for (int d = 0; d < KEYS_COUNT; d++) {
        make_keys(keys, n, (KeyDistribution)d, key_bits, n * 31 + (size_t)d);
        memcpy(expected, keys, n * sizeof *keys);
        qsort(expected, n, sizeof *expected, compare_u32);
        for (int ri = 0; ri < 3; ri++) {
          char what[128];
          snprintf(what, sizeof what, "u%d %s n=%zu r=%d", key_bits, key_names[d], n, radix[ri]);
          check_gpu_sort(keys, expected, n, key_bits, 0, key_bits, radix[ri], what);
        }
      }
      free(keys);
      free(expected);
    }
  }

  /* Bit ranges that the digit width does not divide; equal digits must keep
   * their order (stability), which a full-key sort cannot show. */
  static const struct {
    int key_bits, begin, end;
  } ranges[] = {{16, 3, 13}, {16, 0, 8}, {32, 0, 16}, {32, 8, 20}, {32, 17, 31}, {16, 5, 5}};
  const size_t n = 100003;
  uint32_t *keys = malloc(n * sizeof *keys), *expected = malloc(n * sizeof *expected);
  for (size_t k = 0; k < sizeof ranges / sizeof ranges[0]; k++) {
    make_keys(keys, n, KEYS_RANDOM, ranges[k].key_bits, 1234 + k);
    if (ranges[k].begin == ranges[k].end)
      memcpy(expected, keys, n * sizeof *keys);
    else
      host_stable_sort_bits(keys, expected, n, ranges[k].begin, ranges[k].end);
    for (int ri = 0; ri < 3; ri++) {
      char what[128];
      snprintf(what, sizeof what, "u%d bits [%d, %d) n=%zu r=%d", ranges[k].key_bits,
               ranges[k].begin, ranges[k].end, n, radix[ri]);
      check_gpu_sort(keys, expected, n, ranges[k].key_bits, ranges[k].begin, ranges[k].end,
                     radix[ri], what);
    }
  }
  free(keys);
  free(expected);

  /* 8M 32-bit keys, as the benchmark sorts them. */
  const size_t big = 8u << 20;
  keys = malloc(big * sizeof *keys);
  expected = malloc(big * sizeof *expected);
  make_keys(keys, big, KEYS_RANDOM, 32, 99);
  memcpy(expected, keys, big * sizeof *keys);
  qsort(expected, big, sizeof *expected, compare_u32);
  check_gpu_sort(keys, expected, big, 32, 0, 32, 0, "u32 random n=8M r=default");
  free(keys);
  free(expected);

  /* Arguments that must be refused. */
  CHECK(lhk_radix_sort_scratch_bytes(100, 2, 5) == 0, "r=5 is not built");
  CHECK(lhk_radix_sort_u16(&device, NULL, NULL, 10, 0, 16, 0, NULL, 0, 0) != cudaSuccess,
        "NULL keys");
  CHECK(lhk_radix_sort_u32(&device, (const uint32_t *)16, (uint32_t *)64, 10, 0, 33, 0, (void *)256,
                           1u << 20, 0) != cudaSuccess,
        "end bit 33");
  (void)cudaGetLastError();
}

/* ------------------------------------------------------------------------ */
/* Percentiles                                                               */

static const double test_percentiles[] = {0, 0.1, 1, 5, 25, 50, 75, 95, 99, 99.9, 100};
#define N_TEST_PERCENTILES ((int)(sizeof test_percentiles / sizeof test_percentiles[0]))

static void set_percentiles(LhOptions *options, LhPercentileMethod method, LhMatrix matrix)
{
  lh_options_init(options);
  options->matrix = matrix;
  options->percentile_method = method;
  options->n_percentiles = N_TEST_PERCENTILES;
  for (int i = 0; i < N_TEST_PERCENTILES; i++)
    options->percentiles[i] = test_percentiles[i];
}

/* The LhkImage of a frame in device memory, as the CUDA backend builds it. */
static LhkPixel image_of(const LhFrame *frame, const void *d_plane, LhMatrix matrix, int depth,
                         LhkImage *image)
{
  const LhiFormatInfo *info = lhi_format_info(frame->format);
  LhiLumaWeights w = lhi_luma_weights(matrix, depth);
  memset(image, 0, sizeof *image);
  image->data = d_plane;
  image->stride = frame->strides[0];
  image->width = (uint32_t)frame->width;
  image->height = (uint32_t)frame->height;
  image->max_value = (1u << depth) - 1;
  uint32_t mask;
  lhi_format_luma_word(info, &mask, &image->shift);
  image->keep = ~mask & 0xffffu;
  image->swap = info->big_endian;
  if (info->chroma == LHI_CHROMA_V210)
    return LHK_PIXEL_V210;
  if (info->r >= 0) {
    image->weights[info->r] = w.kr;
    image->weights[info->g] = w.kg;
    image->weights[info->b] = w.kb;
    image->luma_one = w.one;
    image->swap_bytes = lhi_format_big_endian_words(frame->format);
    if (info->sample_bytes == 4)
      return LHK_PIXEL_RGB10;
    if (info->sample_bytes == 1)
      return info->pixel_bytes == 3 ? LHK_PIXEL_RGB8 : LHK_PIXEL_RGBA8;
    return info->pixel_bytes == 6 ? LHK_PIXEL_RGB16 : LHK_PIXEL_RGBA16;
  }
  return info->sample_bytes == 1 && info->pixel_bytes == 1 ? LHK_PIXEL_Y8 : LHK_PIXEL_Y16;
}

static bool same_stats(const LhStats *a, const LhStats *b, const char *what, const char *pair)
{
  bool same = a->count == b->count && a->min == b->min && a->max == b->max &&
              a->median == b->median && a->mean == b->mean && a->stddev == b->stddev &&
              a->n_percentiles == b->n_percentiles && a->n_bins == b->n_bins &&
              memcmp(a->histogram, b->histogram, a->n_bins * sizeof *a->histogram) == 0;
  for (int i = 0; same && i < a->n_percentiles; i++)
    same = a->percentile_value[i] == b->percentile_value[i];
  CHECK(same, "%s: %s differ (median %u vs %u, min %u/%u, max %u/%u)", what, pair, a->median,
        b->median, a->min, b->min, a->max, b->max);
  for (int i = 0; !same && i < a->n_percentiles; i++)
    if (a->percentile_value[i] != b->percentile_value[i])
      fprintf(stderr, "  P(%g): %u vs %u\n", a->percentile_p[i], a->percentile_value[i],
              b->percentile_value[i]);
  return same;
}

/* One frame: CPU histogram percentiles are the reference; the launcher on a
 * device copy, and lh_analyze on the CUDA backend by sort and by histogram,
 * from host and from device memory, must all give the same values. */
static void check_frame(LhContext *cpu, LhContext *gpu, LhFormat format, int w, int h, int depth,
                        size_t pad, GenDistribution dist, LhMatrix matrix, uint64_t seed)
{
  char what[160];
  snprintf(what, sizeof what, "%s %dx%d depth %d pad %zu %s %s", lh_format_name(format), w, h,
           depth, pad, gen_distribution_names[dist], lh_matrix_name(matrix));
  GenFrame g;
  /* Padded frames also start off alignment (an odd address for 8-bit ones). */
  const size_t offset = pad ? (size_t)gen_sample_bytes(format) : 0;
  if (gen_frame(&g, format, w, h, depth, pad, offset, dist, seed) < 0) {
    CHECK(false, "%s: cannot make the frame", what);
    return;
  }
  /* GRAY16 of fewer than 16 bits: a few samples above the top code must be
   * clamped into the top bin, by the sort's keys as by the histogram. */
  if (format == LH_FORMAT_GRAY16 && depth < 16 && w * h > 4) {
    uint16_t big = 0xffff;
    memcpy(g.frame.planes[0], &big, 2);
    memcpy((uint8_t *)g.frame.planes[0] + (size_t)(h - 1) * g.frame.strides[0], &big, 2);
  }
  const int luma_depth = lhi_frame_luma_depth(&g.frame);

  LhOptions by_hist, by_sort;
  set_percentiles(&by_hist, LH_PERCENTILE_HISTOGRAM, matrix);
  set_percentiles(&by_sort, LH_PERCENTILE_SORT, matrix);
  LhStats ref, cpu_sort, gpu_hist, gpu_sort, dev_sort;
  lh_stats_init(&ref);
  lh_stats_init(&cpu_sort);
  lh_stats_init(&gpu_hist);
  lh_stats_init(&gpu_sort);
  lh_stats_init(&dev_sort);
  int status = lh_analyze(cpu, &g.frame, &by_hist, &ref);
  CHECK(status == 0, "%s: CPU analysis: %s", what, lh_last_error());
  if (status < 0)
    goto done;
  status = lh_analyze(cpu, &g.frame, &by_sort, &cpu_sort);
  CHECK(status == 0, "%s: CPU sort analysis: %s", what, lh_last_error());
  if (status == 0)
    same_stats(&ref, &cpu_sort, what, "CPU hist and CPU sort");

  /* The launcher alone, on a device copy of the frame. */
  void *d_frame;
  CUDA_OR_DIE(cudaMalloc(&d_frame, g.size));
  CUDA_OR_DIE(cudaMemcpy(d_frame, g.allocation, g.size, cudaMemcpyHostToDevice));
  CUDA_OR_DIE(cudaDeviceSynchronize()); /* landed before any stream reads it */
  const void *d_plane = (const uint8_t *)d_frame + ((uint8_t *)g.frame.planes[0] - g.allocation);
  LhkImage image;
  LhkPixel pixel = image_of(&g.frame, d_plane, matrix, luma_depth, &image);
  unsigned long long ranks[LHK_MAX_RANKS];
  const uint64_t count = (uint64_t)w * (uint64_t)h;
  ranks[0] = lhi_percentile_rank(50, count);
  for (int i = 0; i < N_TEST_PERCENTILES; i++)
    ranks[i + 1] = lhi_percentile_rank(test_percentiles[i], count);
  const size_t scratch_bytes = lhk_sort_scratch_bytes(count);
  void *d_scratch;
  uint32_t *d_values;
  CUDA_OR_DIE(cudaMalloc(&d_scratch, scratch_bytes));
  CUDA_OR_DIE(cudaMalloc((void **)&d_values, LHK_MAX_RANKS * sizeof(uint32_t)));
  CUDA_OR_DIE(cudaMemset(d_values, 0xff, LHK_MAX_RANKS * sizeof(uint32_t)));
  cudaError_t err =
      lhk_sort_percentiles(&device, pixel, &image, luma_depth, ranks, N_TEST_PERCENTILES + 1,
                           d_values, d_scratch, scratch_bytes, 0);
  if (err == cudaSuccess)
    err = cudaDeviceSynchronize();
  CHECK(err == cudaSuccess, "%s: lhk_sort_percentiles: %s", what, cudaGetErrorString(err));
  if (err != cudaSuccess) {
    fprintf(stderr, "giving up: the CUDA context may be unusable\n");
    exit(1);
  }
  uint32_t values[LHK_MAX_RANKS];
  CUDA_OR_DIE(cudaMemcpy(values, d_values, sizeof values, cudaMemcpyDeviceToHost));
  CHECK(values[0] == ref.median, "%s: launcher median %u, histogram %u", what, values[0],
        ref.median);
  for (int i = 0; i < N_TEST_PERCENTILES; i++)
    CHECK(values[i + 1] == ref.percentile_value[i], "%s: launcher P(%g) = %u, histogram %u", what,
          test_percentiles[i], values[i + 1], ref.percentile_value[i]);
  CUDA_OR_DIE(cudaFree(d_scratch));
  CUDA_OR_DIE(cudaFree(d_values));

  /* The public API on the CUDA backend. */
  status = lh_analyze(gpu, &g.frame, &by_hist, &gpu_hist);
  CHECK(status == 0, "%s: CUDA hist analysis: %s", what, lh_last_error());
  if (status == 0)
    same_stats(&ref, &gpu_hist, what, "CPU and CUDA hist");
  status = lh_analyze(gpu, &g.frame, &by_sort, &gpu_sort);
  CHECK(status == 0, "%s: CUDA sort analysis: %s", what, lh_last_error());
  if (status == 0)
    same_stats(&ref, &gpu_sort, what, "CPU hist and CUDA sort");
  LhFrame device_frame = g.frame;
  device_frame.memory = LH_MEMORY_CUDA;
  for (int p = 0; p < 3; p++)
    if (g.frame.planes[p])
      device_frame.planes[p] = (uint8_t *)d_frame + ((uint8_t *)g.frame.planes[p] - g.allocation);
  status = lh_analyze(gpu, &device_frame, &by_sort, &dev_sort);
  CHECK(status == 0, "%s: CUDA sort analysis of a device frame: %s", what, lh_last_error());
  if (status == 0)
    same_stats(&ref, &dev_sort, what, "CPU hist and CUDA sort of a device frame");
  CUDA_OR_DIE(cudaFree(d_frame));

done:
  lh_stats_clear(&ref);
  lh_stats_clear(&cpu_sort);
  lh_stats_clear(&gpu_hist);
  lh_stats_clear(&gpu_sort);
  lh_stats_clear(&dev_sort);
  gen_free(&g);
}

static void test_percentiles_by_sort(void)
{
  LhContext *cpu = NULL, *gpu = NULL;
  if (lh_context_new(LH_BACKEND_CPU, &cpu) < 0 || lh_context_new(LH_BACKEND_CUDA, &gpu) < 0) {
    CHECK(false, "contexts: %s", lh_last_error());
    lh_context_free(cpu);
    return;
  }
  static const struct {
    LhFormat format;
    int depth;
  } formats[] = {
      {LH_FORMAT_GRAY8, 0},
      {LH_FORMAT_GRAY16, 0},
      {LH_FORMAT_GRAY16, 12},
      {LH_FORMAT_GRAY16, 9},
      {LH_FORMAT_RGB, 0},
      {LH_FORMAT_BGR, 0},
      {LH_FORMAT_RGBA, 0},
      {LH_FORMAT_BGRX, 0},
      {LH_FORMAT_RGB16, 0},
      {LH_FORMAT_RGBA16, 10},
      {LH_FORMAT_I420, 0},
      {LH_FORMAT_NV12, 0},
      {LH_FORMAT_P010, 0},
      /* Y in 16-bit words of every kind: packed 4:2:2 bytes, big-endian, 12 bits at the top */
      {LH_FORMAT_YUY2, 0},
      {LH_FORMAT_UYVY, 0},
      {LH_FORMAT_GRAY16_BE, 0},
      {LH_FORMAT_P012, 0},
      {LH_FORMAT_I420_10LE, 0},
      {LH_FORMAT_NV21, 0},
      /* v210's groups of 6, the last partial where width % 6 != 0 */
      {LH_FORMAT_V210, 0},
  };
  static const struct {
    int w, h;
    size_t pad;
  } sizes[] = {{1, 1, 0}, {2, 1, 0}, {17, 5, 3}, {641, 479, 13}, {1920, 1080, 0}};
  uint64_t seed = 1;
  for (size_t f = 0; f < sizeof formats / sizeof formats[0]; f++)
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
      for (int d = 0; d < GEN_COUNT; d++) {
        /* All distributions on the mid size, two on the others. */
        if (s != 3 && d != GEN_UNIFORM && d != GEN_PHOTO)
          continue;
        LhMatrix matrix = (LhMatrix)(seed % 3);
        check_frame(cpu, gpu, formats[f].format, sizes[s].w, sizes[s].h, formats[f].depth,
                    sizes[s].pad, (GenDistribution)d, matrix, seed++);
      }
  /* A 4K and an 8K frame: several tiles of every pass, a 16-bit one too. */
  check_frame(cpu, gpu, LH_FORMAT_GRAY8, 3840, 2160, 0, 0, GEN_PHOTO, LH_MATRIX_BT601, seed++);
  check_frame(cpu, gpu, LH_FORMAT_RGBA, 3840, 2160, 0, 64, GEN_MOSTLY_ONE, LH_MATRIX_BT709, seed++);
  check_frame(cpu, gpu, LH_FORMAT_GRAY16, 7680, 4320, 0, 0, GEN_UNIFORM, LH_MATRIX_BT601, seed++);
  lh_context_free(cpu);
  lh_context_free(gpu);
}

int main(void)
{
  setvbuf(stdout, NULL, _IOLBF, 0); /* progress survives a crash */
  int n_devices = 0;
  cudaError_t err = cudaGetDeviceCount(&n_devices);
  if (err != cudaSuccess || n_devices == 0) {
    printf("SKIP: no usable CUDA device (%s)\n",
           err != cudaSuccess ? cudaGetErrorString(err) : "none found");
    return 77;
  }
  err = lhk_device_init(&device);
  if (err != cudaSuccess) {
    printf("SKIP: CUDA device unusable: %s\n", cudaGetErrorString(err));
    return 77;
  }
  test_radix_sort();
  printf("radix sort: %d checks, %d failures\n", checks, failures);
  test_percentiles_by_sort();
  printf("all: %d checks, %d failures\n", checks, failures);
  return failures ? 1 : 0;
}
