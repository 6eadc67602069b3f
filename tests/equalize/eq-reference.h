/* eq-reference.h: equalization, CLAHE and the colour rule written again from
 * the definitions in lumahist.h, plainly and slowly, for the tests to hold
 * the library against (nothing here calls the code under test). */
#ifndef LH_TEST_EQ_REFERENCE_H
#define LH_TEST_EQ_REFERENCE_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../unit/frame-gen.h"
#include "lumahist.h"

static const double ref_kr[] = {0.299, 0.2126, 0.2627};
static const double ref_kb[] = {0.114, 0.0722, 0.0593};

static inline uint32_t ref_get(const uint8_t *p, int bytes)
{
  return bytes == 1 ? p[0] : (uint32_t)p[0] | ((uint32_t)p[1] << 8);
}

static inline void ref_put(uint8_t *p, int bytes, uint32_t v)
{
  p[0] = (uint8_t)v;
  if (bytes == 2)
    p[1] = (uint8_t)(v >> 8);
}

static inline bool ref_is_yuv(LhFormat f)
{
  int xs, ys;
  return gen_chroma_subsampling(f, &xs, &ys);
}

/* The YUV formats of cameras and decoders, and GRAY16_BE: Y read and written
 * where test-formats.h says it lies. */
static inline bool ref_is_new_luma(LhFormat f)
{
  return f >= LH_FORMAT_YV12 && f <= LH_FORMAT_P016;
}

/* Sample positions of R and B in a pixel (G is 1); -1 for gray and YUV. */
static inline void ref_rgb_order(LhFormat f, int *ri, int *bi)
{
  switch (f) {
  case LH_FORMAT_RGB:
  case LH_FORMAT_RGBA:
  case LH_FORMAT_RGBX:
  case LH_FORMAT_RGB16:
  case LH_FORMAT_RGBA16:
    *ri = 0;
    *bi = 2;
    break;
  case LH_FORMAT_BGR:
  case LH_FORMAT_BGRA:
  case LH_FORMAT_BGRX:
  case LH_FORMAT_BGRA16:
    *ri = 2;
    *bi = 0;
    break;
  default:
    *ri = *bi = -1;
  }
}

static inline int ref_depth(const LhFrame *f)
{
  if (f->format == LH_FORMAT_P010 ||
      (ref_is_new_luma(f->format) && f->format != LH_FORMAT_GRAY16_BE))
    return gen_format_depth(f->format);
  if (gen_is_packed10(f->format))
    return 10;
  if (gen_sample_bytes(f->format) == 2)
    return f->bit_depth ? f->bit_depth : 16;
  return 8;
}

/* Y' with 14-bit weights (Kr, Kb rounded, Kg the rest) for 8-bit luma, the
 * exact decimal weights (units of 10^-4) above, rounded half up. */
static inline uint32_t ref_luma(const LhFrame *f, int x, int y, LhMatrix m)
{
  int pb = gen_pixel_bytes(f->format), sb = gen_sample_bytes(f->format), depth = ref_depth(f);
  const uint8_t *p = (const uint8_t *)f->planes[0] + (size_t)y * f->strides[0] + (size_t)x * pb;
  uint32_t top = (1u << depth) - 1;
  if (gen_is_packed10(f->format)) {
    uint32_t rgb[3];
    gen_packed10_rgb(f->format, p, rgb);
    int64_t kr = llround(ref_kr[m] * 10000.0), kb = llround(ref_kb[m] * 10000.0);
    return (uint32_t)((kr * rgb[0] + (10000 - kr - kb) * rgb[1] + kb * rgb[2] + 5000) / 10000);
  }
  int ri, bi;
  ref_rgb_order(f->format, &ri, &bi);
  if (ref_is_new_luma(f->format)) {
    uint32_t v =
        gen_luma_get(f->format, (const uint8_t *)f->planes[0] + (size_t)y * f->strides[0], x);
    return v > top ? top : v;
  }
  if (ri < 0) {
    uint32_t v = ref_get(p, sb);
    if (f->format == LH_FORMAT_P010)
      return v / 64;
    return v > top ? top : v;
  }
  /* 8 bits: 15-bit weights, Kr and Kg rounded, Kb the rest (OpenCV's);
   * deeper: the decimal coefficients exactly. */
  const int64_t one = depth > 8 ? 10000 : 32768;
  int64_t kr = llround(ref_kr[m] * (double)one);
  int64_t kg = llround((1.0 - ref_kr[m] - ref_kb[m]) * (double)one);
  int64_t kb = one - kr - kg;
  int64_t num =
      kr * ref_get(p + ri * sb, sb) + kg * ref_get(p + sb, sb) + kb * ref_get(p + bi * sb, sb);
  uint32_t v = (uint32_t)((num + one / 2) / one);
  return v > top ? top : v;
}

static inline void ref_range(int depth, LhRange range, uint32_t *black, uint32_t *white)
{
  if (range == LH_RANGE_LIMITED) {
    *black = 16u << (depth - 8);
    *white = 235u << (depth - 8);
  } else {
    *black = 0;
    *white = (1u << depth) - 1;
  }
}

/* equalizeHist's LUT: float scale, round to nearest even, saturated. */
static inline void ref_lut(const uint64_t *h, int depth, uint32_t black, uint32_t white,
                           uint16_t *lut)
{
  size_t bins = (size_t)1 << depth, first = 0;
  uint64_t total = 0;
  for (size_t v = 0; v < bins; v++)
    total += h[v];
  while (first < bins && h[first] == 0)
    first++;
  if (total == 0 || h[first] == total) {
    for (size_t v = 0; v < bins; v++)
      lut[v] = (uint16_t)v;
    return;
  }
  float scale = (float)(white - black) / (float)(total - h[first]);
  uint64_t cum = 0;
  for (size_t v = 0; v < bins; v++) {
    if (v > first)
      cum += h[v];
    long r = v > first ? lrintf((float)cum * scale) : 0;
    if (r > (long)(white - black))
      r = (long)(white - black);
    lut[v] = (uint16_t)(black + (uint32_t)r);
  }
}

/* A colour sample c of a pixel whose luma goes from y to y_new. */
static inline uint32_t ref_colour(uint32_t c, uint32_t y, uint32_t y_new, uint32_t top)
{
  if (y == 0)
    return y_new;
  uint64_t gain = (((uint64_t)y_new << 16) + y / 2) / y;
  uint64_t v = ((uint64_t)c * gain + 32768) >> 16;
  return v > top ? top : (uint32_t)v;
}

/* Writes pixel (x, y) of out from in, its luma going to y_new. */
static inline void ref_write(const LhFrame *in, LhFrame *out, int x, int y, uint32_t luma,
                             uint32_t y_new)
{
  int pb = gen_pixel_bytes(in->format), sb = gen_sample_bytes(in->format), depth = ref_depth(in);
  const uint8_t *s = (const uint8_t *)in->planes[0] + (size_t)y * in->strides[0] + (size_t)x * pb;
  uint8_t *d = (uint8_t *)out->planes[0] + (size_t)y * out->strides[0] + (size_t)x * pb;
  if (gen_is_packed10(in->format)) {
    /* The three fields scaled, the top two bits of the word kept. */
    uint32_t rgb[3];
    gen_packed10_rgb(in->format, s, rgb);
    for (int i = 0; i < 3; i++)
      rgb[i] = ref_colour(rgb[i], luma, y_new, 1023);
    uint32_t top2 = gen_packed10_top(in->format, s);
    gen_packed10_store(in->format, d, rgb, top2);
    return;
  }
  int ri, bi;
  ref_rgb_order(in->format, &ri, &bi);
  if (ref_is_new_luma(in->format)) {
    /* only Y changes: packed chroma beside it stays as out has it */
    gen_luma_put(in->format, (uint8_t *)out->planes[0] + (size_t)y * out->strides[0], x, y_new);
    return;
  }
  if (ri < 0) {
    ref_put(d, sb, in->format == LH_FORMAT_P010 ? y_new * 64 : y_new);
    return;
  }
  uint32_t top = (1u << depth) - 1, c[4];
  int n = pb / sb;
  for (int i = 0; i < n; i++)
    c[i] = ref_get(s + i * sb, sb);
  for (int i = 0; i < 3; i++)
    c[i] = ref_colour(c[i], luma, y_new, top);
  for (int i = 0; i < n; i++)
    ref_put(d + i * sb, sb, c[i]);
}

/* Chroma rows and bytes per row of the chroma planes of a YUV frame. */
static inline void ref_chroma(const LhFrame *f, int *rows, size_t *bytes)
{
  gen_chroma_shape(f->format, f->width, f->height, bytes, rows);
}

/* Chroma planes, and for packed YUV the chroma beside Y in plane 0 (out's
 * Y then rewritten by ref_write). */
static inline void ref_copy_chroma(const LhFrame *in, LhFrame *out)
{
  if (!ref_is_yuv(in->format))
    return;
  if (gen_chroma_planes(in->format) == 0) {
    for (int y = 0; y < in->height; y++)
      memcpy((uint8_t *)out->planes[0] + (size_t)y * out->strides[0],
             (const uint8_t *)in->planes[0] + (size_t)y * in->strides[0],
             gen_row_bytes(in->format, in->width));
    return;
  }
  int rows;
  size_t bytes;
  ref_chroma(in, &rows, &bytes);
  for (int p = 1; p <= gen_chroma_planes(in->format); p++)
    for (int y = 0; y < rows; y++)
      memcpy((uint8_t *)out->planes[p] + (size_t)y * out->strides[p],
             (const uint8_t *)in->planes[p] + (size_t)y * in->strides[p], bytes);
}

/* Formats whose chroma LH_CHROMA_SCALE rewrites: 8-bit planar and
 * semi-planar YUV. */
static inline bool ref_scales_chroma(LhFormat f)
{
  return gen_chroma_planes(f) > 0 && gen_sample_bytes(f) == 1;
}

/* LH_CHROMA_SCALE as lumahist.h defines it: out's chroma from in's, with the
 * old luma in in's Y plane and the new in out's.  Cb and Cr get the same
 * gain, so every chroma sample is taken alike. */
static inline void ref_scale_chroma(const LhFrame *in, LhFrame *out)
{
  int xs, ys, rows;
  size_t bytes;
  gen_chroma_subsampling(in->format, &xs, &ys);
  ref_chroma(in, &rows, &bytes);
  const int fx = 1 << xs, fy = 1 << ys;
  for (int cy = 0; cy < rows; cy++)
    for (int cx = 0; (size_t)cx < ((size_t)in->width + (size_t)fx - 1) / (size_t)fx; cx++) {
      uint64_t old_sum = 0, new_sum = 0;
      for (int y = cy * fy; y < (cy + 1) * fy && y < in->height; y++)
        for (int x = cx * fx; x < (cx + 1) * fx && x < in->width; x++) {
          old_sum += ((const uint8_t *)in->planes[0])[(size_t)y * in->strides[0] + (size_t)x];
          new_sum += ((const uint8_t *)out->planes[0])[(size_t)y * out->strides[0] + (size_t)x];
        }
      for (int c = 0; c < 2; c++) {
        int field;
        const int32_t v = *gen_chroma_at(in, c, cx, cy, &field);
        int64_t result = 128;
        if (old_sum > 0) {
          const uint64_t gain = ((new_sum << 16) + old_sum / 2) / old_sum;
          const int64_t magnitude = (int64_t)(((uint64_t)abs(v - 128) * gain + 32768) >> 16);
          result = v >= 128 ? 128 + magnitude : 128 - magnitude;
          result = result < 0 ? 0 : result > 255 ? 255 : result;
        }
        *gen_chroma_at(out, c, cx, cy, &field) = (uint8_t)result;
      }
    }
}

static inline uint64_t *ref_histogram(const LhFrame *f, LhMatrix m)
{
  uint64_t *h = calloc((size_t)1 << ref_depth(f), sizeof *h);
  for (int y = 0; y < f->height; y++)
    for (int x = 0; x < f->width; x++)
      h[ref_luma(f, x, y, m)]++;
  return h;
}

/* out from in through one LUT. */
static inline void ref_apply(const LhFrame *in, LhFrame *out, const uint16_t *lut, LhMatrix m)
{
  ref_copy_chroma(in, out);
  for (int y = 0; y < in->height; y++)
    for (int x = 0; x < in->width; x++) {
      uint32_t l = ref_luma(in, x, y, m);
      ref_write(in, out, x, y, l, lut[l]);
    }
}

static inline void ref_equalize(const LhFrame *in, LhFrame *out, LhMatrix m, LhRange range)
{
  int depth = ref_depth(in);
  uint64_t *h = ref_histogram(in, m);
  uint16_t *lut = malloc(((size_t)1 << depth) * sizeof *lut);
  uint32_t black, white;
  ref_range(depth, range, &black, &white);
  ref_lut(h, depth, black, white, lut);
  ref_apply(in, out, lut, m);
  free(lut);
  free(h);
}

/* ---- CLAHE ---- */

/* Reflection without repeating the edge, by folding onto a period. */
static inline int ref_reflect(int p, int len)
{
  if (len == 1)
    return 0;
  int period = 2 * (len - 1);
  p %= period;
  if (p < 0)
    p += period;
  return p >= len ? period - p : p;
}

static inline int64_t ref_floor_div(int64_t a, int64_t b)
{
  int64_t q = a / b;
  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

/* x / tile - 1/2 as tiles t0, t1 and the weight of t1 in 2^-16. */
static inline void ref_axis(int x, int tile, int tiles, int *t0, int *t1, uint32_t *w)
{
  int64_t twice = 2 * (int64_t)tile;
  int64_t q = ref_floor_div(2 * (int64_t)x - tile, twice);
  uint64_t num = (uint64_t)((2 * (int64_t)x - tile) - q * twice);
  uint64_t recip = ((uint64_t)1 << 48) / (uint64_t)twice;
  *w = (uint32_t)((num * recip) >> 32);
  *t0 = q < 0 ? 0 : (int)q;
  *t1 = q + 1 > tiles - 1 ? tiles - 1 : (int)(q + 1);
}

static inline void ref_clahe(const LhFrame *in, LhFrame *out, LhMatrix m, LhRange range, int tx,
                             int ty, double clip_limit)
{
  const int w = in->width, h = in->height, depth = ref_depth(in);
  const size_t bins = (size_t)1 << depth;
  bool divides = w % tx == 0 && h % ty == 0;
  int tw = divides ? w / tx : (w + tx - w % tx) / tx;
  int th = divides ? h / ty : (h + ty - h % ty) / ty;
  uint64_t area = (uint64_t)tw * (uint64_t)th;
  uint32_t black, white;
  ref_range(depth, range, &black, &white);
  uint32_t clip = 0;
  if (clip_limit > 0) {
    double c = clip_limit * (double)area / (double)bins;
    clip = c >= (double)area ? (uint32_t)area : (uint32_t)c;
    if (clip < 1)
      clip = 1;
  }
  uint16_t *luma = malloc((size_t)w * h * sizeof *luma);
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      luma[(size_t)y * w + x] = (uint16_t)ref_luma(in, x, y, m);
  uint16_t *luts = malloc((size_t)tx * ty * bins * sizeof *luts);
  uint32_t *hist = malloc(bins * sizeof *hist);
  for (int j = 0; j < ty; j++)
    for (int i = 0; i < tx; i++) {
      memset(hist, 0, bins * sizeof *hist);
      for (int y = j * th; y < (j + 1) * th; y++)
        for (int x = i * tw; x < (i + 1) * tw; x++)
          hist[luma[(size_t)ref_reflect(y, h) * w + ref_reflect(x, w)]]++;
      if (clip) {
        uint32_t excess = 0;
        for (size_t v = 0; v < bins; v++)
          if (hist[v] > clip) {
            excess += hist[v] - clip;
            hist[v] = clip;
          }
        uint32_t each = excess / (uint32_t)bins, left = excess % (uint32_t)bins;
        for (size_t v = 0; v < bins; v++)
          hist[v] += each;
        if (left) {
          size_t step = bins / left ? bins / left : 1;
          for (size_t k = 0; k < left && k * step < bins; k++)
            hist[k * step]++;
        }
      }
      uint16_t *lut = luts + ((size_t)j * tx + i) * bins;
      float scale = (float)(white - black) / (float)area;
      uint64_t cum = 0;
      for (size_t v = 0; v < bins; v++) {
        cum += hist[v];
        long r = lrintf((float)cum * scale);
        lut[v] = (uint16_t)(black + (r > (long)(white - black) ? white - black : (uint32_t)r));
      }
    }
  ref_copy_chroma(in, out);
  for (int y = 0; y < h; y++) {
    int j0, j1;
    uint32_t wy;
    ref_axis(y, th, ty, &j0, &j1, &wy);
    for (int x = 0; x < w; x++) {
      int i0, i1;
      uint32_t wx;
      ref_axis(x, tw, tx, &i0, &i1, &wx);
      uint32_t l = luma[(size_t)y * w + x];
      uint64_t a = luts[((size_t)j0 * tx + i0) * bins + l],
               b = luts[((size_t)j0 * tx + i1) * bins + l];
      uint64_t c = luts[((size_t)j1 * tx + i0) * bins + l],
               d = luts[((size_t)j1 * tx + i1) * bins + l];
      uint64_t top = a * (65536 - wx) + b * wx, bottom = c * (65536 - wx) + d * wx;
      uint32_t y_new = (uint32_t)((top * (65536 - wy) + bottom * wy + ((uint64_t)1 << 31)) >> 32);
      ref_write(in, out, x, y, l, y_new);
    }
  }
  free(hist);
  free(luts);
  free(luma);
}

#endif
