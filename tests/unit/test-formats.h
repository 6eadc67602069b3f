/* test-formats.h: the bytes of each pixel format, written out for the tests
 * from DESIGN.md (the library's own table is what they check, so they do not
 * use it). */
#ifndef LH_TEST_FORMATS_H
#define LH_TEST_FORMATS_H

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
  default: /* GRAY8, I420, NV12 */
    return 1;
  }
}

/* Bytes per sample: 2 for the 16-bit formats, else 1. */
static inline int gen_sample_bytes(LhFormat f)
{
  return (f == LH_FORMAT_GRAY16 || f == LH_FORMAT_P010 || f == LH_FORMAT_RGB16 ||
          f == LH_FORMAT_RGBA16)
             ? 2
             : 1;
}

#endif
