/* lh-equalize.h: the integer and single-precision arithmetic of equalization,
 * CLAHE and temporal smoothing that the CPU code and the CUDA kernels share,
 * so that both give the same bits.  Plain C; kernels/ includes it. */
#ifndef LH_EQUALIZE_H
#define LH_EQUALIZE_H

#include <stdbool.h>
#include <stdint.h>

#include "lh-luma.h"

#ifndef __CUDACC__
#include <math.h>
#endif

/* Fractional bits of the colour gain new_luma / old_luma. */
#define LHI_GAIN_SHIFT 16
/* Fractional bits of the CLAHE interpolation weights. */
#define LHI_CLAHE_WEIGHT_SHIFT 16
#define LHI_CLAHE_WEIGHT_ONE (1u << LHI_CLAHE_WEIGHT_SHIFT)
/* CLAHE works on sides below this, so that 2 x + tile fits 32 bits. */
#define LHI_CLAHE_MAX_SIDE (1 << 30)
/* Scene cuts compare histograms folded to this many bins, each a fraction
 * of the frame in units of 2^-LHI_CUT_SHIFT: coarse enough that noise and a
 * small brightness drift move few counts across bins. */
#define LHI_CUT_BINS 32
#define LHI_CUT_LOG2_BINS 5
#define LHI_CUT_SHIFT 20

/* The scale of an equalization LUT: span / total in IEEE single precision,
 * as OpenCV computes (hist_size - 1.f) / total. */
LHI_HOST_DEVICE float lhi_lut_scale(uint32_t span, uint64_t total)
{
#ifdef __CUDA_ARCH__
  return __fdiv_rn(__uint2float_rn(span), __ull2float_rn(total));
#else
  return (float)span / (float)total;
#endif
}

/* One LUT level: min(span, rint((float)cumulative * scale)), ties to even,
 * OpenCV's saturate_cast<uchar>(sum * scale). */
LHI_HOST_DEVICE uint32_t lhi_lut_level(uint64_t cumulative, float scale, uint32_t span)
{
#ifdef __CUDA_ARCH__
  uint32_t level = __float2uint_rn(__fmul_rn(__ull2float_rn(cumulative), scale));
#else
  uint32_t level = (uint32_t)rintf((float)cumulative * scale);
#endif
  return level < span ? level : span;
}

/* The gain that takes luma y (> 0) to y_new, 16 fractional bits, rounded.
 * (65535 << 16) + 32767 still fits 32 bits. */
LHI_HOST_DEVICE uint32_t lhi_gain(uint32_t y, uint32_t y_new)
{
  return ((y_new << LHI_GAIN_SHIFT) + (y >> 1)) / y;
}

/* A colour sample scaled by a gain, rounded half up, clamped to max. */
LHI_HOST_DEVICE uint32_t lhi_apply_gain(uint32_t sample, uint32_t gain, uint32_t max_value)
{
  uint64_t v = ((uint64_t)sample * gain + (1u << (LHI_GAIN_SHIFT - 1))) >> LHI_GAIN_SHIFT;
  return v > max_value ? max_value : (uint32_t)v;
}

/* LH_CHROMA_SCALE's rule (lumahist.h) for an 8-bit chroma sample c whose
 * footprint's luma sums to sum before and sum_new after.  8-bit footprints
 * hold at most 4 pixels: lhi_gain's sums stay below 2^16. */
#define LHI_CHROMA_ZERO 128u
LHI_HOST_DEVICE uint32_t lhi_scale_chroma(uint32_t c, uint32_t sum, uint32_t sum_new)
{
  if (sum == 0)
    return LHI_CHROMA_ZERO;
  const uint32_t gain = lhi_gain(sum, sum_new);
  const int above = c >= LHI_CHROMA_ZERO;
  const uint32_t d = above ? c - LHI_CHROMA_ZERO : LHI_CHROMA_ZERO - c;
  const uint64_t m = ((uint64_t)d * gain + (1u << (LHI_GAIN_SHIFT - 1))) >> LHI_GAIN_SHIFT;
  if (above)
    return m >= 255 - LHI_CHROMA_ZERO ? 255 : LHI_CHROMA_ZERO + (uint32_t)m;
  return m >= LHI_CHROMA_ZERO ? 0 : LHI_CHROMA_ZERO - (uint32_t)m;
}

/* OpenCV's BORDER_REFLECT_101 (gfedcb|abcdefgh|gfedcba): the pixel that
 * position p of an extended side of len pixels shows. */
LHI_HOST_DEVICE int lhi_reflect101(int p, int len)
{
  if (len == 1)
    return 0;
  while (p < 0 || p >= len)
    p = p < 0 ? -p : 2 * len - 2 - p;
  return p;
}

/* A CLAHE grid on one frame (clahe.c fills it). */
typedef struct {
  int tiles_x;
  int tiles_y;
  int tile_w; /* tiles of the frame extended to tiles_x * tile_w by reflection */
  int tile_h;
  uint32_t clip;  /* per-bin count limit of a tile histogram; 0: none */
  uint32_t black; /* output black .. white */
  uint32_t white;
  float lut_scale;  /* (white - black) / (tile_w * tile_h), lhi_lut_scale */
  uint64_t recip_x; /* floor(2^48 / (2 tile_w)): weights without a division */
  uint64_t recip_y;
  /* How the frame is shown, as an Exif orientation (0 or 1: as stored):
   * the grid above is the picture's as shown, tiles_x across it. */
  int orientation;
} LhiClaheGrid;

/* One axis of the frame as stored (its rows or its columns), as an
 * oriented grid sees it: the axis of the picture as shown that it runs
 * along, from which end, and how far one tile's LUTs are from the next
 * along it (tile t's are at t * stride * bins): 1 across the picture as
 * shown, tiles_x down it.  Tile (tx, ty) of the picture as shown is LUT
 * ty * tiles_x + tx whatever the orientation. */
typedef struct {
  uint32_t tile;   /* pixels of a tile along it */
  uint32_t tiles;  /* tiles along it */
  uint64_t recip;  /* floor(2^48 / (2 tile)) */
  uint32_t stride; /* LUTs from a tile to the next along it */
  uint32_t length; /* pixels of the frame along it */
  bool flip;       /* the picture as shown runs along it from its far end */
} LhiClaheAxis;

/* The axis of a frame shown as stored (orientation 0 or 1) along its rows
 * (rows true: y) or columns, what an orientation varies fixed (no flip,
 * LUTs a tile apart across): kernels that take it for such frames compile
 * to the plain walk (in the general one a 4K GRAY8 frame's CLAHE took 8 us
 * more on an H100). */
LHI_HOST_DEVICE LhiClaheAxis lhi_clahe_plain_axis(const LhiClaheGrid *g, bool rows, uint32_t length)
{
  LhiClaheAxis a = {
      .tile = (uint32_t)(rows ? g->tile_h : g->tile_w),
      .tiles = (uint32_t)(rows ? g->tiles_y : g->tiles_x),
      .recip = rows ? g->recip_y : g->recip_x,
      .stride = rows ? (uint32_t)g->tiles_x : 1u,
      .length = length,
      .flip = false,
  };
  return a;
}

/* The stored rows' axis (rows true: y) or columns' (x) of a frame of
 * length pixels along it, under grid's orientation: the plain axis of the
 * direction it runs in the picture as shown.  Exif orientations 5 to 8 turn
 * the stored x axis into the shown y; 2, 3, 7 and 8 show the stored columns
 * from the right, 3, 4, 6 and 7 the rows from the bottom. */
LHI_HOST_DEVICE LhiClaheAxis lhi_clahe_stored_axis(const LhiClaheGrid *g, bool rows,
                                                   uint32_t length)
{
  const int o = g->orientation;
  LhiClaheAxis a = lhi_clahe_plain_axis(g, rows != (o >= 5), length);
  a.flip = rows ? (o == 3 || o == 4 || o == 6 || o == 7) : (o == 2 || o == 3 || o == 7 || o == 8);
  return a;
}

/* The position along the picture as shown of stored position p of axis a. */
LHI_HOST_DEVICE uint32_t lhi_clahe_shown(const LhiClaheAxis *a, uint32_t p)
{
  return a->flip ? a->length - 1 - p : p;
}

/* The stored position of extended position e along axis a (as shown,
 * extended by reflection past its far end). */
LHI_HOST_DEVICE uint32_t lhi_clahe_source(const LhiClaheAxis *a, uint32_t e)
{
  return lhi_clahe_shown(a, (uint32_t)lhi_reflect101((int)e, (int)a->length));
}

/* Where pixel x lies between the tile centres of one axis, as OpenCV's
 * x / tile - 0.5: the two tiles t0, t1 (clamped to the grid) and the weight
 * of t1 in units of 2^-16 (truncated). */
LHI_HOST_DEVICE void lhi_clahe_axis(uint32_t x, uint32_t tile, uint32_t tiles, uint64_t recip,
                                    uint32_t *t0, uint32_t *t1, uint32_t *weight)
{
  uint32_t twice = 2 * tile;
  uint32_t pos = 2 * x + tile; /* (2 x - tile) + 2 tile, never negative */
  uint32_t q = pos / twice;    /* floor((2 x - tile) / (2 tile)) + 1 */
  uint32_t num = pos - q * twice;
  /* num < 2 tile, so num * recip < 2^48 */
  *weight = (uint32_t)(((uint64_t)num * recip) >> 32);
  *t0 = q == 0 ? 0 : q - 1;
  *t1 = q > tiles - 1 ? tiles - 1 : q;
}

/* lhi_clahe_axis of stored position p along axis a: the two tiles as the
 * offsets of their LUTs (in LUTs: times stride) and the second's weight. */
LHI_HOST_DEVICE void lhi_clahe_axis_at(const LhiClaheAxis *a, uint32_t p, uint32_t *t0,
                                       uint32_t *t1, uint32_t *weight)
{
  lhi_clahe_axis(lhi_clahe_shown(a, p), a->tile, a->tiles, a->recip, t0, t1, weight);
  *t0 *= a->stride;
  *t1 *= a->stride;
}

/* The bilinear mix of four tile LUT values; the weights of the right and
 * lower tiles are wx, wy in 2^-16.  Each row fits 32 bits (65535 * 2^16).
 * Exact until its one rounding, so the same with the axes swapped:
 * mix(a, b, c, d, wx, wy) == mix(a, c, b, d, wy, wx), which lets a
 * transposed frame (lhi_clahe_stored_axis) mix rows for columns. */
LHI_HOST_DEVICE uint32_t lhi_clahe_mix(uint32_t top_left, uint32_t top_right, uint32_t bottom_left,
                                       uint32_t bottom_right, uint32_t wx, uint32_t wy)
{
  uint32_t top = top_left * (LHI_CLAHE_WEIGHT_ONE - wx) + top_right * wx;
  uint32_t bottom = bottom_left * (LHI_CLAHE_WEIGHT_ONE - wx) + bottom_right * wx;
  uint64_t v = (uint64_t)top * (LHI_CLAHE_WEIGHT_ONE - wy) + (uint64_t)bottom * wy +
               ((uint64_t)1 << (2 * LHI_CLAHE_WEIGHT_SHIFT - 1));
  return (uint32_t)(v >> (2 * LHI_CLAHE_WEIGHT_SHIFT));
}

/* A coarse bin's share of a histogram for the scene-cut distance. */
LHI_HOST_DEVICE uint32_t lhi_cut_share(uint64_t count, uint64_t total)
{
  return total ? (uint32_t)((count << LHI_CUT_SHIFT) / total) : 0;
}

#endif /* LH_EQUALIZE_H */
