/* test-formats.h: the bytes of each pixel format, written out for the tests
 * from DESIGN.md (the library's own table is what they check, so they do not
 * use it). */
#ifndef LH_TEST_FORMATS_H
#define LH_TEST_FORMATS_H

#include <stdbool.h>
#include <stdint.h>

#include "lumahist.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Bytes per pixel of plane 0 (the Y plane of YUV formats; a pair of pixels
 * of packed 4:2:2 is 4 bytes, a v210 group of 6 is 16). */
static inline int gen_pixel_bytes(LhFormat f)
{
  switch (f) {
  case LH_FORMAT_GRAY16:
  case LH_FORMAT_P010:
  case LH_FORMAT_GRAY16_BE:
  case LH_FORMAT_I420_10LE:
  case LH_FORMAT_I420_12LE:
  case LH_FORMAT_I422_10LE:
  case LH_FORMAT_I422_12LE:
  case LH_FORMAT_Y444_10LE:
  case LH_FORMAT_Y444_12LE:
  case LH_FORMAT_Y444_16LE:
  case LH_FORMAT_P012:
  case LH_FORMAT_P016:
  case LH_FORMAT_YUY2:
  case LH_FORMAT_YVYU:
  case LH_FORMAT_UYVY:
  case LH_FORMAT_VYUY:
    return 2;
  case LH_FORMAT_V210:
    return 16;
  case LH_FORMAT_RGB:
  case LH_FORMAT_BGR:
    return 3;
  case LH_FORMAT_RGBA:
  case LH_FORMAT_BGRA:
  case LH_FORMAT_RGBX:
  case LH_FORMAT_BGRX:
    return 4;
  case LH_FORMAT_RGB16:
    return 6;
  case LH_FORMAT_RGBA16:
    return 8;
  /* R'G'B' 10 and 16 bits */
  case LH_FORMAT_RGB10A2_LE:
  case LH_FORMAT_BGR10A2_LE:
  case LH_FORMAT_R210:
    return 4;
  case LH_FORMAT_BGRA16:
    return 8;
  default: /* GRAY8, I420, NV12 */
    return 1;
  }
}

/* The 10-bit R'G'B' formats packed in 32-bit words (GStreamer's RGB10A2_LE,
 * BGR10A2_LE, r210). */
static inline bool gen_is_packed10(LhFormat f)
{
  return f == LH_FORMAT_RGB10A2_LE || f == LH_FORMAT_BGR10A2_LE || f == LH_FORMAT_R210;
}

/* Bit positions of R', G', B' in the word, and the word's byte order, as
 * GStreamer's video-format.c packs them. */
static inline void gen_packed10_layout(LhFormat f, int *r_bit, int *b_bit, bool *big_endian)
{
  *r_bit = f == LH_FORMAT_RGB10A2_LE ? 0 : 20;
  *b_bit = f == LH_FORMAT_RGB10A2_LE ? 20 : 0;
  *big_endian = f == LH_FORMAT_R210;
}

/* R', G', B' of the packed pixel at p. */
static inline void gen_packed10_rgb(LhFormat f, const uint8_t *p, uint32_t rgb[3])
{
  int r_bit, b_bit;
  bool big;
  gen_packed10_layout(f, &r_bit, &b_bit, &big);
  uint32_t w = big ? (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]
                   : (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
  rgb[0] = (w >> r_bit) & 0x3ff;
  rgb[1] = (w >> 10) & 0x3ff;
  rgb[2] = (w >> b_bit) & 0x3ff;
}

/* The sample of a pixel that is a straight alpha, which the overlay
 * composites over: -1 if none (RGBX's fourth byte is padding).  RGB10A2_LE
 * and BGR10A2_LE have theirs in the word's top two bits (gen_packed10_top),
 * r210 none. */
static inline int gen_alpha_sample(LhFormat f)
{
  return f == LH_FORMAT_RGBA || f == LH_FORMAT_BGRA || f == LH_FORMAT_RGBA16 ||
                 f == LH_FORMAT_BGRA16
             ? 3
             : -1;
}

static inline bool gen_has_alpha(LhFormat f)
{
  return gen_alpha_sample(f) >= 0 || f == LH_FORMAT_RGB10A2_LE || f == LH_FORMAT_BGR10A2_LE;
}

/* The top two bits (alpha or unused) of the packed pixel at p. */
static inline uint32_t gen_packed10_top(LhFormat f, const uint8_t *p)
{
  return (f == LH_FORMAT_R210 ? p[0] : p[3]) >> 6;
}

/* The word of a packed pixel from R', G', B' and its top two bits (alpha or unused). */
static inline void gen_packed10_store(LhFormat f, uint8_t *p, const uint32_t rgb[3], uint32_t top)
{
  int r_bit, b_bit;
  bool big;
  gen_packed10_layout(f, &r_bit, &b_bit, &big);
  uint32_t w = rgb[0] << r_bit | rgb[1] << 10 | rgb[2] << b_bit | (top & 3) << 30;
  for (int i = 0; i < 4; i++)
    p[i] = (uint8_t)(w >> (big ? 24 - 8 * i : 8 * i));
}

/* Bytes per sample: 2 for the 16-bit formats, 4 for v210's and packed
 * 10-bit R'G'B''s words, else 1. */
static inline int gen_sample_bytes(LhFormat f)
{
  if (f == LH_FORMAT_V210 || gen_is_packed10(f))
    return 4;
  if (f == LH_FORMAT_YUY2 || f == LH_FORMAT_YVYU || f == LH_FORMAT_UYVY || f == LH_FORMAT_VYUY)
    return 1;
  return gen_pixel_bytes(f) == 2 || f == LH_FORMAT_RGB16 || f == LH_FORMAT_RGBA16 ||
                 f == LH_FORMAT_BGRA16
             ? 2
             : 1;
}

/* ---- The YUV layouts of cameras, capture cards and decoders, written from
 * GStreamer's video-format documentation: where Y, Cb and Cr lie. ---- */

/* Y in a plane of its own or packed among chroma (not RGB). */
static inline bool gen_is_luma_format(LhFormat f)
{
  return f == LH_FORMAT_GRAY8 || f == LH_FORMAT_GRAY16 || f == LH_FORMAT_I420 ||
         f == LH_FORMAT_NV12 || f == LH_FORMAT_P010 || (f >= LH_FORMAT_YV12 && f <= LH_FORMAT_P016);
}

static inline bool gen_is_packed422(LhFormat f)
{
  return f == LH_FORMAT_YUY2 || f == LH_FORMAT_YVYU || f == LH_FORMAT_UYVY || f == LH_FORMAT_VYUY;
}

/* The format's own depth of Y. */
static inline int gen_format_depth(LhFormat f)
{
  switch (f) {
  case LH_FORMAT_P010:
  case LH_FORMAT_V210:
  case LH_FORMAT_RGB10A2_LE:
  case LH_FORMAT_BGR10A2_LE:
  case LH_FORMAT_R210:
  case LH_FORMAT_I420_10LE:
  case LH_FORMAT_I422_10LE:
  case LH_FORMAT_Y444_10LE:
    return 10;
  case LH_FORMAT_I420_12LE:
  case LH_FORMAT_I422_12LE:
  case LH_FORMAT_Y444_12LE:
  case LH_FORMAT_P012:
    return 12;
  default:
    return gen_sample_bytes(f) == 2 ? 16 : 8;
  }
}

/* Bytes of a row of w pixels of plane 0. */
static inline size_t gen_row_bytes(LhFormat f, int w)
{
  if (gen_is_packed422(f))
    return ((size_t)w + 1) / 2 * 4;
  if (f == LH_FORMAT_V210)
    return ((size_t)w + 5) / 6 * 16;
  return (size_t)w * (size_t)gen_pixel_bytes(f);
}

static inline uint32_t gen_le16(const uint8_t *p)
{
  return (uint32_t)p[0] | (uint32_t)p[1] << 8;
}

static inline void gen_put_le16(uint8_t *p, uint32_t v)
{
  p[0] = (uint8_t)v;
  p[1] = (uint8_t)(v >> 8);
}

/* v210: 6 pixels in four little-endian 32-bit words of three 10-bit fields
 * (bits 0-9, 10-19, 20-29): Cb0 Y0 Cr0 | Y1 Cb1 Y2 | Cr1 Y3 Cb2 | Y4 Cr2 Y5. */
static inline uint32_t gen_v210_get(const uint8_t *group, int field)
{
  const uint8_t *w = group + 4 * (field / 3);
  uint32_t word =
      (uint32_t)w[0] | (uint32_t)w[1] << 8 | (uint32_t)w[2] << 16 | (uint32_t)w[3] << 24;
  return (word >> (10 * (field % 3))) & 0x3ff;
}

static inline void gen_v210_put(uint8_t *group, int field, uint32_t v)
{
  uint8_t *w = group + 4 * (field / 3);
  uint32_t word =
      (uint32_t)w[0] | (uint32_t)w[1] << 8 | (uint32_t)w[2] << 16 | (uint32_t)w[3] << 24;
  int shift = 10 * (field % 3);
  word = (word & ~(0x3ffu << shift)) | (v & 0x3ff) << shift;
  for (int i = 0; i < 4; i++)
    w[i] = (uint8_t)(word >> (8 * i));
}

/* The sample word of Y (x) of a row of a luma format, and its value. */
static inline uint32_t gen_luma_get(LhFormat f, const uint8_t *row, int x)
{
  static const int v210_y[6] = {1, 3, 5, 7, 9, 11};
  switch (f) {
  case LH_FORMAT_V210:
    return gen_v210_get(row + (size_t)(x / 6) * 16, v210_y[x % 6]);
  case LH_FORMAT_YUY2:
  case LH_FORMAT_YVYU:
    return row[2 * (size_t)x];
  case LH_FORMAT_UYVY:
  case LH_FORMAT_VYUY:
    return row[2 * (size_t)x + 1];
  case LH_FORMAT_GRAY16_BE:
    return (uint32_t)row[2 * (size_t)x] << 8 | row[2 * (size_t)x + 1];
  case LH_FORMAT_P010:
    return gen_le16(row + 2 * (size_t)x) >> 6;
  case LH_FORMAT_P012:
    return gen_le16(row + 2 * (size_t)x) >> 4;
  default:
    return gen_sample_bytes(f) == 2 ? gen_le16(row + 2 * (size_t)x) : row[x];
  }
}

static inline void gen_luma_put(LhFormat f, uint8_t *row, int x, uint32_t v)
{
  static const int v210_y[6] = {1, 3, 5, 7, 9, 11};
  switch (f) {
  case LH_FORMAT_V210:
    gen_v210_put(row + (size_t)(x / 6) * 16, v210_y[x % 6], v);
    break;
  case LH_FORMAT_YUY2:
  case LH_FORMAT_YVYU:
    row[2 * (size_t)x] = (uint8_t)v;
    break;
  case LH_FORMAT_UYVY:
  case LH_FORMAT_VYUY:
    row[2 * (size_t)x + 1] = (uint8_t)v;
    break;
  case LH_FORMAT_GRAY16_BE:
    row[2 * (size_t)x] = (uint8_t)(v >> 8);
    row[2 * (size_t)x + 1] = (uint8_t)v;
    break;
  case LH_FORMAT_P010:
    gen_put_le16(row + 2 * (size_t)x, v << 6);
    break;
  case LH_FORMAT_P012:
    gen_put_le16(row + 2 * (size_t)x, v << 4);
    break;
  default:
    if (gen_sample_bytes(f) == 2)
      gen_put_le16(row + 2 * (size_t)x, v);
    else
      row[x] = (uint8_t)v;
  }
}

/* Chroma subsampling of a YUV format: 2^xs across, 2^ys down. */
static inline bool gen_chroma_subsampling(LhFormat f, int *xs, int *ys)
{
  *xs = *ys = 0;
  switch (f) {
  case LH_FORMAT_I420:
  case LH_FORMAT_NV12:
  case LH_FORMAT_P010:
  case LH_FORMAT_YV12:
  case LH_FORMAT_NV21:
  case LH_FORMAT_I420_10LE:
  case LH_FORMAT_I420_12LE:
  case LH_FORMAT_P012:
  case LH_FORMAT_P016:
    *xs = *ys = 1;
    return true;
  case LH_FORMAT_Y42B:
  case LH_FORMAT_NV16:
  case LH_FORMAT_YUY2:
  case LH_FORMAT_YVYU:
  case LH_FORMAT_UYVY:
  case LH_FORMAT_VYUY:
  case LH_FORMAT_V210:
  case LH_FORMAT_I422_10LE:
  case LH_FORMAT_I422_12LE:
    *xs = 1;
    return true;
  case LH_FORMAT_Y41B:
    *xs = 2;
    return true;
  case LH_FORMAT_Y444:
  case LH_FORMAT_NV24:
  case LH_FORMAT_Y444_10LE:
  case LH_FORMAT_Y444_12LE:
  case LH_FORMAT_Y444_16LE:
    return true;
  default:
    return false;
  }
}

/* Chroma planes: 0 (packed), 1 (semi-planar: pairs) or 2 (planar). */
static inline int gen_chroma_planes(LhFormat f)
{
  switch (f) {
  case LH_FORMAT_NV12:
  case LH_FORMAT_NV21:
  case LH_FORMAT_NV16:
  case LH_FORMAT_NV24:
  case LH_FORMAT_P010:
  case LH_FORMAT_P012:
  case LH_FORMAT_P016:
    return 1;
  case LH_FORMAT_I420:
  case LH_FORMAT_YV12:
  case LH_FORMAT_Y42B:
  case LH_FORMAT_Y444:
  case LH_FORMAT_Y41B:
  case LH_FORMAT_I420_10LE:
  case LH_FORMAT_I420_12LE:
  case LH_FORMAT_I422_10LE:
  case LH_FORMAT_I422_12LE:
  case LH_FORMAT_Y444_10LE:
  case LH_FORMAT_Y444_12LE:
  case LH_FORMAT_Y444_16LE:
    return 2;
  default:
    return 0;
  }
}

/* Bytes of a row of the chroma plane(s), and rows, of a w x h frame. */
static inline void gen_chroma_shape(LhFormat f, int w, int h, size_t *row_bytes, int *rows)
{
  int xs, ys;
  gen_chroma_subsampling(f, &xs, &ys);
  size_t samples = ((size_t)w + (1u << xs) - 1) >> xs;
  *rows = (h + (1 << ys) - 1) >> ys;
  *row_bytes = samples * (size_t)gen_sample_bytes(f) * (gen_chroma_planes(f) == 1 ? 2 : 1);
}

/* Where chroma sample c (0 Cb, 1 Cr) at (cx, cy) lies; for v210 the group
 * and its field. */
static inline uint8_t *gen_chroma_at(const LhFrame *frame, int c, int cx, int cy, int *field)
{
  LhFormat f = frame->format;
  size_t sb = (size_t)gen_sample_bytes(f);
  *field = -1;
  switch (f) {
  case LH_FORMAT_V210: {
    static const int cb[3] = {0, 4, 8}, cr[3] = {2, 6, 10};
    *field = c == 0 ? cb[cx % 3] : cr[cx % 3];
    return (uint8_t *)frame->planes[0] + (size_t)cy * frame->strides[0] + (size_t)(cx / 3) * 16;
  }
  case LH_FORMAT_YUY2:
  case LH_FORMAT_YVYU:
  case LH_FORMAT_UYVY:
  case LH_FORMAT_VYUY: {
    /* byte of U and of V in Y0 U Y1 V, Y0 V Y1 U, U Y0 V Y1, V Y0 U Y1 */
    static const int u_byte[4] = {1, 3, 0, 2}, v_byte[4] = {3, 1, 2, 0};
    int k = f == LH_FORMAT_YUY2 ? 0 : f == LH_FORMAT_YVYU ? 1 : f == LH_FORMAT_UYVY ? 2 : 3;
    return (uint8_t *)frame->planes[0] + (size_t)cy * frame->strides[0] + 4 * (size_t)cx +
           (c == 0 ? u_byte[k] : v_byte[k]);
  }
  default:
    break;
  }
  if (gen_chroma_planes(f) == 1) {
    int first_is_cr = f == LH_FORMAT_NV21;
    int which = c ^ first_is_cr;
    return (uint8_t *)frame->planes[1] + (size_t)cy * frame->strides[1] + (size_t)cx * 2 * sb +
           (size_t)which * sb;
  }
  int plane = f == LH_FORMAT_YV12 ? 2 - c : 1 + c;
  return (uint8_t *)frame->planes[plane] + (size_t)cy * frame->strides[plane] + (size_t)cx * sb;
}

/* Chroma sample c at (cx, cy) as a value of the format's depth. */
static inline uint32_t gen_chroma_get(const LhFrame *frame, int c, int cx, int cy)
{
  int field;
  const uint8_t *p = gen_chroma_at(frame, c, cx, cy, &field);
  LhFormat f = frame->format;
  if (field >= 0)
    return gen_v210_get(p, field);
  if (gen_sample_bytes(f) == 1)
    return p[0];
  uint32_t v = gen_le16(p);
  return f == LH_FORMAT_P010 ? v >> 6 : f == LH_FORMAT_P012 ? v >> 4 : v;
}

static inline void gen_chroma_put(const LhFrame *frame, int c, int cx, int cy, uint32_t v)
{
  int field;
  uint8_t *p = gen_chroma_at(frame, c, cx, cy, &field);
  LhFormat f = frame->format;
  if (field >= 0)
    gen_v210_put(p, field, v);
  else if (gen_sample_bytes(f) == 1)
    p[0] = (uint8_t)v;
  else
    gen_put_le16(p, f == LH_FORMAT_P010 ? v << 6 : f == LH_FORMAT_P012 ? v << 4 : v);
}

#endif
