/* frame-gen.h: seeded test frames of every format and distribution, shared by
 * the CPU and GPU tests (host memory, optional padding and odd plane starts). */
#ifndef LH_TEST_FRAME_GEN_H
#define LH_TEST_FRAME_GEN_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lumahist.h"
#include "test-formats.h"

typedef enum {
  GEN_UNIFORM,     /* every sample uniform random */
  GEN_CONSTANT,    /* one value everywhere */
  GEN_TWO_VALUES,  /* two values, random mix */
  GEN_PHOTO,       /* smooth gradient plus noise, like a natural image */
  GEN_MOSTLY_ONE,  /* 60 % one value, the rest random */
  GEN_SAME_BANK,   /* eight values 32 apart: one shared-memory bank */
  GEN_NARROW_BAND, /* a band a few codes wide */
  GEN_COUNT
} GenDistribution;

static const char *const gen_distribution_names[GEN_COUNT] = {
    "uniform", "constant", "two-values", "photo", "mostly-one", "same-bank", "narrow-band"};

/* xorshift64*: small, seeded, the same on every platform. */
static inline uint64_t gen_next(uint64_t *state)
{
  uint64_t x = *state;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  *state = x;
  return x * 0x2545F4914F6CDD1DULL;
}

/* One sample of max_value+1 codes at (x, y) for a distribution. */
static inline uint32_t gen_sample(GenDistribution d, uint64_t *rng, int x, int y, int w, int h,
                                  uint32_t max_value)
{
  uint64_t r = gen_next(rng);
  switch (d) {
  case GEN_UNIFORM:
    return (uint32_t)(r % ((uint64_t)max_value + 1));
  case GEN_CONSTANT:
    return max_value / 3;
  case GEN_TWO_VALUES:
    return (r & 1) ? max_value / 5 : max_value - max_value / 7;
  case GEN_PHOTO: {
    double g = ((double)x / (w > 1 ? w - 1 : 1) * 0.6 + (double)y / (h > 1 ? h - 1 : 1) * 0.4);
    double noise = ((double)(r % 2001) - 1000.0) / 1000.0 * 0.04;
    double v = (g + noise) * max_value;
    return v < 0 ? 0 : v > max_value ? max_value : (uint32_t)v;
  }
  case GEN_MOSTLY_ONE:
    return (r % 10) < 6 ? (max_value * 7) / 10 : (uint32_t)((r >> 8) % ((uint64_t)max_value + 1));
  case GEN_SAME_BANK: {
    uint32_t step = (max_value + 1) >= 256 ? 32u * ((max_value + 1) / 256) : 1;
    return (uint32_t)((r % 8) * step) & max_value;
  }
  case GEN_NARROW_BAND:
  default:
    return (uint32_t)((max_value / 2) + r % 5);
  }
}

/* A host frame in one allocation.  extra_stride bytes pad each row; offset
 * shifts the start of plane 0 (an odd offset misaligns 8-bit formats). */
typedef struct {
  LhFrame frame;
  uint8_t *allocation;
  size_t size;
} GenFrame;

static inline void gen_store(uint8_t *p, int sample_bytes, uint32_t v)
{
  if (sample_bytes == 1) {
    *p = (uint8_t)v;
  } else {
    uint16_t s = (uint16_t)v;
    memcpy(p, &s, 2);
  }
}

/* Fills a frame of format f; bit_depth 0 = the format's own.  Chroma (in its
 * planes, or packed beside Y) is random bytes that analysis must ignore. */
static inline int gen_frame(GenFrame *g, LhFormat f, int w, int h, int bit_depth,
                            size_t extra_stride, size_t offset, GenDistribution d, uint64_t seed)
{
  int pb = gen_pixel_bytes(f), sb = gen_sample_bytes(f);
  size_t stride = gen_row_bytes(f, w) + extra_stride;
  stride = (stride + (size_t)sb - 1) / (size_t)sb * (size_t)sb;
  size_t size = lh_frame_buffer_size(f, w, h, stride);
  g->size = size + offset + 16;
  g->allocation = malloc(g->size);
  if (!g->allocation)
    return -1;
  uint64_t rng = seed * 0x9E3779B97F4A7C15ULL + 1;
  for (size_t i = 0; i < g->size; i++)
    g->allocation[i] = (uint8_t)gen_next(&rng);
  if (lh_frame_init(&g->frame, f, LH_MEMORY_HOST, w, h, g->allocation + offset, stride) < 0)
    return -1;
  g->frame.bit_depth = bit_depth;
  int depth = bit_depth ? bit_depth : gen_format_depth(f);
  uint32_t max_value = (1u << depth) - 1;
  int channels = pb / sb;
  if (gen_is_luma_format(f) && f != LH_FORMAT_GRAY16) {
    /* Y where the format keeps it; chroma (and padding) stays random */
    for (int y = 0; y < h; y++) {
      uint8_t *row = (uint8_t *)g->frame.planes[0] + (size_t)y * stride;
      for (int x = 0; x < w; x++)
        gen_luma_put(f, row, x, gen_sample(d, &rng, x, y, w, h, max_value));
    }
    return 0;
  }
  for (int y = 0; y < h; y++) {
    uint8_t *row = (uint8_t *)g->frame.planes[0] + (size_t)y * stride;
    if (gen_is_packed10(f)) {
      for (int x = 0; x < w; x++) {
        uint32_t rgb[3];
        for (int c = 0; c < 3; c++)
          rgb[c] = gen_sample(d, &rng, x + c, y, w, h, max_value);
        gen_packed10_store(f, row + (size_t)x * pb, rgb, (uint32_t)gen_next(&rng));
      }
      continue;
    }
    for (int x = 0; x < w; x++)
      for (int c = 0; c < channels; c++) {
        uint32_t v = gen_sample(d, &rng, x + c, y, w, h, max_value);
        if (f == LH_FORMAT_P010)
          v <<= 6;
        gen_store(row + (size_t)x * pb + (size_t)c * sb, sb, v);
      }
  }
  return 0;
}

/* The 16-bit words of a frame's buffer (every plane, row padding too), in
 * its byte order: word i of its lh_frame_buffer_size bytes from plane 0. */
static inline uint32_t gen_word_get(const GenFrame *g, size_t i)
{
  const uint8_t *p = (const uint8_t *)g->frame.planes[0] + 2 * i;
  return g->frame.format == LH_FORMAT_GRAY16_BE ? (uint32_t)p[0] << 8 | p[1]
                                                : (uint32_t)p[1] << 8 | p[0];
}

static inline void gen_word_put(GenFrame *g, size_t i, uint32_t v)
{
  uint8_t *p = (uint8_t *)g->frame.planes[0] + 2 * i;
  const int high = g->frame.format == LH_FORMAT_GRAY16_BE ? 0 : 1;
  p[high] = (uint8_t)(v >> 8);
  p[1 - high] = (uint8_t)v;
}

static inline size_t gen_word_count(const GenFrame *g)
{
  return lh_frame_buffer_size(g->frame.format, g->frame.width, g->frame.height,
                              g->frame.strides[0]) /
         2;
}

/* Samples a malformed frame of 16-bit words has: every third word set above
 * 2^depth - 1 (and up to 65535), which the library takes as 2^depth - 1.
 * A 16-bit frame has none: it is left as it is. */
static inline void gen_words_past_depth(GenFrame *g, int depth, uint64_t seed)
{
  if (depth >= 16)
    return;
  const uint32_t max_value = (1u << depth) - 1;
  uint64_t rng = seed * 0x9E3779B97F4A7C15ULL + 7;
  for (size_t i = 0; i < gen_word_count(g); i += 3)
    gen_word_put(g, i, max_value + 1 + (uint32_t)(gen_next(&rng) % (65535 - max_value)));
}

/* Every 16-bit word of the frame's buffer clamped to 2^depth - 1. */
static inline void gen_words_clamp(GenFrame *g, int depth)
{
  const uint32_t max_value = (1u << depth) - 1;
  for (size_t i = 0; i < gen_word_count(g); i++)
    if (gen_word_get(g, i) > max_value)
      gen_word_put(g, i, max_value);
}

/* The alpha of every pixel of a frame with alpha (gen_has_alpha) set at
 * random to transparent, opaque, half or any value: gen_frame's are those
 * of its distribution, which seldom has the ends. */
static inline void gen_alpha_mix(GenFrame *g, uint64_t seed)
{
  const LhFormat f = g->frame.format;
  const int pb = gen_pixel_bytes(f), sb = gen_sample_bytes(f), a = gen_alpha_sample(f);
  const uint32_t top = (1u << (g->frame.bit_depth ? g->frame.bit_depth : gen_format_depth(f))) - 1;
  if (!gen_has_alpha(f))
    return;
  uint64_t rng = seed * 0x9E3779B97F4A7C15ULL + 11;
  for (int y = 0; y < g->frame.height; y++)
    for (int x = 0; x < g->frame.width; x++) {
      uint8_t *p = (uint8_t *)g->frame.planes[0] + (size_t)y * g->frame.strides[0] + (size_t)x * pb;
      const uint64_t r = gen_next(&rng);
      if (a < 0) { /* a packed 10-bit word's top two bits: each value of 0 .. 3 */
        p[3] = (uint8_t)((p[3] & 0x3f) | (r % 4) << 6);
        continue;
      }
      const uint32_t v = r % 4 == 0   ? 0
                         : r % 4 == 1 ? top
                         : r % 4 == 2 ? (top + 1) / 2
                                      : (uint32_t)((r >> 8) % (top + 1));
      gen_store(p + a * sb, sb, v);
    }
}

static inline void gen_free(GenFrame *g)
{
  free(g->allocation);
  g->allocation = NULL;
}

#endif
