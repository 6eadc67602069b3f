/* test-formats.h: the bytes of each pixel format, written out for the tests
 * from DESIGN.md (the library's own table is what they check, so they do not
 * use it). */
#ifndef LH_TEST_FORMATS_H
#define LH_TEST_FORMATS_H

#include <stdbool.h>
#include <stdint.h>

#include "lumahist.h"

/* Bytes per pixel of plane 0 (the Y plane of YUV formats). */
static inline int gen_pixel_bytes(LhFormat f)
{
  switch (f) {
  case LH_FORMAT_GRAY16:
  case LH_FORMAT_P010:
    return 2;
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

/* Bytes per sample: 2 for the 16-bit formats, 4 (the word) for packed 10-bit, else 1. */
static inline int gen_sample_bytes(LhFormat f)
{
  if (gen_is_packed10(f))
    return 4; /* the word */
  return (f == LH_FORMAT_GRAY16 || f == LH_FORMAT_P010 || f == LH_FORMAT_RGB16 ||
          f == LH_FORMAT_RGBA16 || f == LH_FORMAT_BGRA16)
             ? 2
             : 1;
}

#endif
