/* gpu-compare.h: what the GPU tests share: seeded frames whose luma follows a
 * chosen distribution, frames laid out in host, pinned or device memory with
 * any pitch and plane start, and a field-by-field comparison of two LhStats
 * that says what differs. */
#ifndef LH_GPU_COMPARE_H
#define LH_GPU_COMPARE_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "lumahist.h"
#include "test-formats.h"

#define SKIP_EXIT 77

typedef enum {
  DIST_UNIFORM, /* every sample uniform random (16-bit formats: past the depth too) */
  DIST_PHOTO,   /* smooth colour fields plus noise, like a natural photo */
  DIST_SINGLE,  /* one colour everywhere */
  DIST_SIXTY,   /* 60 % one colour, the rest uniform */
  DIST_BANK,    /* gray levels b + 32 k, k < 8: one shared-memory bank */
  DIST_BAND,    /* gray levels in a band 8 codes wide */
  DIST_COUNT
} Dist;

static const char *const dist_names[DIST_COUNT] = {"uniform", "photo",     "single",
                                                   "sixty",   "same-bank", "narrow-band"};

static inline uint64_t rng_next(uint64_t *state)
{
  uint64_t x = *state;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  *state = x;
  return x * 0x2545F4914F6CDD1DULL;
}

typedef enum { MEM_HOST, MEM_PINNED, MEM_DEVICE } MemKind;
static const char *const mem_names[] = {"host", "pinned", "device"};

/* One test frame: its samples on the host, and the frame the library sees
 * (in the memory asked for). */
typedef struct {
  LhFrame frame;      /* what is analysed */
  LhFrame host_frame; /* the same samples in host memory (for the CPU) */
  uint8_t *host_block;
  uint8_t *view_block; /* pinned or device block, or NULL */
  MemKind mem;
  size_t block_size;
} TestFrame;

static inline bool format_is_wide(LhFormat f)
{
  return f == LH_FORMAT_GRAY16 || f == LH_FORMAT_P010 || f == LH_FORMAT_RGB16 ||
         f == LH_FORMAT_RGBA16 || f == LH_FORMAT_BGRA16;
}

static inline bool format_is_rgb(LhFormat f)
{
  return (f >= LH_FORMAT_RGB && f <= LH_FORMAT_RGBA16) || gen_is_packed10(f) ||
         f == LH_FORMAT_BGRA16;
}

static inline int format_samples(LhFormat f)
{
  switch (f) {
  case LH_FORMAT_RGB:
  case LH_FORMAT_BGR:
  case LH_FORMAT_RGB16:
  case LH_FORMAT_RGB10A2_LE: /* three fields and two bits of the word */
  case LH_FORMAT_BGR10A2_LE:
  case LH_FORMAT_R210:
    return 3;
  case LH_FORMAT_RGBA:
  case LH_FORMAT_BGRA:
  case LH_FORMAT_RGBX:
  case LH_FORMAT_BGRX:
  case LH_FORMAT_RGBA16:
  case LH_FORMAT_BGRA16:
    return 4;
  default:
    return 1;
  }
}

/* The samples of one pixel: gray levels are written to every colour sample,
 * so that their luma is the level itself (the weights sum to one). */
static inline void gen_pixel(Dist d, uint64_t *rng, int x, int y, uint32_t top, uint32_t level_a,
                             uint32_t *s, int n)
{
  uint64_t r = rng_next(rng);
  switch (d) {
  case DIST_UNIFORM:
    for (int i = 0; i < n; i++)
      s[i] = (uint32_t)(rng_next(rng) % ((uint64_t)top + 1));
    return;
  case DIST_PHOTO:
    for (int i = 0; i < n; i++) {
      double f = 0.5 + 0.25 * sin(x * 0.0131 + y * 0.0071 + 1.7 * i) +
                 0.18 * cos(y * 0.0113 - x * 0.0049 + 0.9 * i) +
                 ((double)(rng_next(rng) % 2001) - 1000.0) * 0.00003;
      f = f < 0 ? 0 : f > 1 ? 1 : f;
      s[i] = (uint32_t)(f * top + 0.5);
    }
    return;
  case DIST_SINGLE:
    for (int i = 0; i < n; i++)
      s[i] = (level_a * (i + 3) / 4) % (top + 1);
    return;
  case DIST_SIXTY:
    if (r % 10 < 6)
      gen_pixel(DIST_SINGLE, rng, x, y, top, level_a, s, n);
    else
      gen_pixel(DIST_UNIFORM, rng, x, y, top, level_a, s, n);
    return;
  case DIST_BANK: {
    uint32_t v = (level_a % 32 + 32 * (uint32_t)(r % 8)) % (top + 1);
    for (int i = 0; i < n; i++)
      s[i] = v;
    return;
  }
  default: { /* DIST_BAND */
    uint32_t v = (level_a + (uint32_t)(r % 8)) % (top + 1);
    for (int i = 0; i < n; i++)
      s[i] = v;
    return;
  }
  }
}

static inline void put16(uint8_t *p, uint32_t v)
{
  uint16_t h = (uint16_t)v;
  memcpy(p, &h, 2);
}

/* Fills a frame of width x height at bit depth (0: the format's own) with
 * rows `stride` bytes apart starting `offset` bytes into a block, places it
 * in the memory asked for, and describes it.  Returns false (with a message)
 * when memory is short. */
static inline bool test_frame_make(TestFrame *t, LhFormat format, int width, int height,
                                   int bit_depth, Dist dist, uint64_t seed, size_t pad,
                                   size_t offset, MemKind mem)
{
  memset(t, 0, sizeof *t);
  const int bpp = gen_pixel_bytes(format), n = format_samples(format);
  const size_t sb = (size_t)gen_sample_bytes(format);
  /* YUV of cameras and decoders: Y where the format keeps it, the rest of
   * the row (packed chroma, v210's other fields) random */
  const bool yuv_luma = format >= LH_FORMAT_YV12 && format <= LH_FORMAT_P016;
  const size_t stride = (gen_row_bytes(format, width) + pad + sb - 1) / sb * sb;
  t->block_size = offset + stride * (size_t)height;
  t->host_block = malloc(t->block_size);
  if (!t->host_block) {
    fprintf(stderr, "out of host memory for a %dx%d %s frame\n", width, height,
            lh_format_name(format));
    return false;
  }
  memset(t->host_block, 0xa5, t->block_size); /* padding that must not be read */
  int depth = bit_depth ? bit_depth : gen_format_depth(format);
  /* Uniform samples of the formats of variable depth use all 16 bits, past
   * the depth, to exercise the clamp. */
  bool full = (format_is_wide(format) || format == LH_FORMAT_GRAY16_BE) &&
              format != LH_FORMAT_P010 && dist == DIST_UNIFORM;
  uint32_t top = full ? 0xffff : (1u << depth) - 1;
  uint64_t rng = seed * 0x9E3779B97F4A7C15ULL + 1;
  uint32_t level = (uint32_t)(rng_next(&rng) % ((uint64_t)top + 1));
  if (dist == DIST_BAND && level > top - 8)
    level = top - 8;
  for (int y = 0; y < height; y++) {
    uint8_t *row = t->host_block + offset + (size_t)y * stride;
    if (yuv_luma) {
      for (size_t i = 0; i < gen_row_bytes(format, width); i++)
        row[i] = (uint8_t)rng_next(&rng);
      for (int x = 0; x < width; x++) {
        uint32_t s[4] = {0, 0, 0, 0};
        gen_pixel(dist, &rng, x, y, top, level, s, 1);
        gen_luma_put(format, row, x, s[0]);
      }
      continue;
    }
    for (int x = 0; x < width; x++) {
      uint32_t s[4] = {0, 0, 0, 0};
      gen_pixel(dist, &rng, x, y, top, level, s, n);
      uint8_t *px = row + (size_t)x * bpp;
      if (gen_is_packed10(format)) {
        gen_packed10_store(format, px, s, (uint32_t)rng_next(&rng));
        continue;
      }
      for (int i = 0; i < n; i++) {
        if (format == LH_FORMAT_P010)
          put16(px, (s[i] << 6) | (uint32_t)(rng_next(&rng) & 63));
        else if (format_is_wide(format))
          put16(px + 2 * i, s[i]);
        else
          px[i] = (uint8_t)s[i];
      }
      if (n == 4) /* alpha or padding byte: anything */
        format_is_wide(format) ? put16(px + 6, (uint32_t)rng_next(&rng))
                               : (void)(px[3] = (uint8_t)rng_next(&rng));
    }
  }
  LhFrame f = {.format = format,
               .memory = LH_MEMORY_HOST,
               .width = width,
               .height = height,
               .bit_depth = bit_depth};
  f.planes[0] = t->host_block + offset;
  f.strides[0] = stride;
  t->host_frame = f;
  t->mem = mem;
  if (mem == MEM_PINNED) {
    if (cudaMallocHost((void **)&t->view_block, t->block_size) != cudaSuccess) {
      fprintf(stderr, "cudaMallocHost of %zu bytes failed\n", t->block_size);
      return false;
    }
    memcpy(t->view_block, t->host_block, t->block_size);
    f.planes[0] = t->view_block + offset;
  } else if (mem == MEM_DEVICE) {
    /* cudaMemcpy from pageable memory may return before the copy lands, and
     * the library's own stream does not wait for the default stream: the
     * frame must be complete before it is analysed (lumahist.h). */
    if (cudaMalloc((void **)&t->view_block, t->block_size) != cudaSuccess ||
        cudaMemcpy(t->view_block, t->host_block, t->block_size, cudaMemcpyHostToDevice) !=
            cudaSuccess ||
        cudaDeviceSynchronize() != cudaSuccess) {
      fprintf(stderr, "cudaMalloc/cudaMemcpy of %zu bytes failed\n", t->block_size);
      return false;
    }
    f.memory = LH_MEMORY_CUDA;
    f.planes[0] = t->view_block + offset;
  }
  t->frame = f;
  return true;
}

static inline void test_frame_free(TestFrame *t)
{
  if (t->view_block) {
    if (t->mem == MEM_PINNED)
      cudaFreeHost(t->view_block);
    else
      cudaFree(t->view_block);
  }
  free(t->host_block);
  memset(t, 0, sizeof *t);
}

/* Bitwise equality of doubles: both backends must give the same bits. */
static inline bool same_double(double a, double b)
{
  return memcmp(&a, &b, sizeof a) == 0;
}

/* Compares every field; writes what differs first into why. */
static inline bool stats_equal(const LhStats *a, const LhStats *b, char *why, size_t size)
{
#define CHECK_INT(field)                                                                           \
  if (a->field != b->field) {                                                                      \
    snprintf(why, size, #field ": %llu vs %llu", (unsigned long long)a->field,                     \
             (unsigned long long)b->field);                                                        \
    return false;                                                                                  \
  }
#define CHECK_DOUBLE(field)                                                                        \
  if (!same_double(a->field, b->field)) {                                                          \
    snprintf(why, size, #field ": %.17g vs %.17g", a->field, b->field);                            \
    return false;                                                                                  \
  }
  CHECK_INT(bit_depth);
  CHECK_INT(matrix);
  CHECK_INT(range);
  CHECK_INT(count);
  CHECK_INT(min);
  CHECK_INT(max);
  CHECK_INT(median);
  CHECK_INT(clipped_low_count);
  CHECK_INT(clipped_high_count);
  CHECK_INT(below_legal_count);
  CHECK_INT(above_legal_count);
  CHECK_INT(n_percentiles);
  CHECK_INT(n_bins);
  CHECK_DOUBLE(mean);
  CHECK_DOUBLE(stddev);
  CHECK_DOUBLE(clipped_low);
  CHECK_DOUBLE(clipped_high);
  CHECK_DOUBLE(below_legal);
  CHECK_DOUBLE(above_legal);
  CHECK_DOUBLE(mean_norm);
  CHECK_DOUBLE(stddev_norm);
  CHECK_DOUBLE(min_norm);
  CHECK_DOUBLE(max_norm);
  CHECK_DOUBLE(median_norm);
  for (int i = 0; i < a->n_percentiles; i++) {
    CHECK_DOUBLE(percentile_p[i]);
    CHECK_INT(percentile_value[i]);
    CHECK_DOUBLE(percentile_norm[i]);
  }
  for (size_t v = 0; v < a->n_bins; v++) {
    if (a->histogram[v] != b->histogram[v]) {
      snprintf(why, size, "histogram[%zu]: %llu vs %llu", v, (unsigned long long)a->histogram[v],
               (unsigned long long)b->histogram[v]);
      return false;
    }
  }
  return true;
#undef CHECK_INT
#undef CHECK_DOUBLE
}

/* The CUDA context, or exit 77 with the reason when no device is usable. */
static inline LhContext *cuda_context_or_skip(void)
{
  LhContext *context = NULL;
  int status = lh_context_new(LH_BACKEND_CUDA, &context);
  if (status == LH_ERROR_NO_DEVICE) {
    printf("SKIP: %s\n", lh_last_error());
    exit(SKIP_EXIT);
  }
  if (status < 0) {
    fprintf(stderr, "lh_context_new(cuda): %s: %s\n", lh_status_name(status), lh_last_error());
    exit(1);
  }
  return context;
}

#endif /* LH_GPU_COMPARE_H */
