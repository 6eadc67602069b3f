/* clahe.c: contrast-limited adaptive histogram equalization with the grid,
 * clip limit and redistribution of OpenCV's createCLAHE: the grid and tile
 * LUTs both backends use (the CPU implementation: cpu/clahe.c). */
#include <math.h>

#include "lh-private.h"

int lhi_clahe_grid(int width, int height, int bit_depth, int tiles_x, int tiles_y,
                   double clip_limit, uint32_t black, uint32_t white, LhiClaheGrid *grid)
{
  if (tiles_x < 1 || tiles_x > LH_CLAHE_MAX_TILES || tiles_y < 1 || tiles_y > LH_CLAHE_MAX_TILES)
    return lhi_error(LH_ERROR_INVALID_ARGUMENT, "CLAHE grid %dx%d: each side must be in 1 .. %d",
                     tiles_x, tiles_y, LH_CLAHE_MAX_TILES);
  if (!isfinite(clip_limit))
    return lhi_error(LH_ERROR_INVALID_ARGUMENT,
                     "CLAHE clip limit %g is not finite (0 or below: no clipping)", clip_limit);
  if (width >= LHI_CLAHE_MAX_SIDE || height >= LHI_CLAHE_MAX_SIDE)
    return lhi_error(LH_ERROR_TOO_LARGE, "CLAHE takes sides below 2^30, not %dx%d", width, height);
  /* OpenCV extends both sides by (tiles - side % tiles) as soon as either
   * side is not a multiple: a whole tile more on a side that divides. */
  bool divides = width % tiles_x == 0 && height % tiles_y == 0;
  int tile_w = divides ? width / tiles_x : (width + tiles_x - width % tiles_x) / tiles_x;
  int tile_h = divides ? height / tiles_y : (height + tiles_y - height % tiles_y) / tiles_y;
  uint64_t area = (uint64_t)tile_w * (uint64_t)tile_h;
  if (area >= ((uint64_t)1 << 31))
    return lhi_error(LH_ERROR_TOO_LARGE,
                     "CLAHE tiles of %dx%d pixels are too large (2^31 or more); use more tiles",
                     tile_w, tile_h);
  uint32_t bins = 1u << bit_depth;
  uint32_t clip = 0;
  if (clip_limit > 0.0) {
    double limit = clip_limit * (double)area / (double)bins;
    clip = limit >= (double)area ? (uint32_t)area : (uint32_t)limit;
    if (clip < 1)
      clip = 1;
  }
  *grid = (LhiClaheGrid){
      .tiles_x = tiles_x,
      .tiles_y = tiles_y,
      .tile_w = tile_w,
      .tile_h = tile_h,
      .clip = clip,
      .black = black,
      .white = white,
      .lut_scale = lhi_lut_scale(white - black, area),
      .recip_x = ((uint64_t)1 << 48) / (2 * (uint64_t)tile_w),
      .recip_y = ((uint64_t)1 << 48) / (2 * (uint64_t)tile_h),
  };
  return LH_OK;
}

void lhi_clahe_tile_lut(uint32_t *histogram, int bit_depth, const LhiClaheGrid *grid, uint16_t *lut)
{
  const uint32_t bins = 1u << bit_depth;
  if (grid->clip > 0) {
    uint32_t clipped = 0;
    for (uint32_t v = 0; v < bins; v++)
      if (histogram[v] > grid->clip) {
        clipped += histogram[v] - grid->clip;
        histogram[v] = grid->clip;
      }
    uint32_t batch = clipped / bins;
    uint32_t residual = clipped - batch * bins;
    for (uint32_t v = 0; v < bins; v++)
      histogram[v] += batch;
    if (residual > 0) {
      uint32_t step = bins / residual > 1 ? bins / residual : 1;
      for (uint32_t v = 0; v < bins && residual > 0; v += step, residual--)
        histogram[v]++;
    }
  }
  const uint32_t span = grid->white - grid->black;
  uint64_t cumulative = 0;
  for (uint32_t v = 0; v < bins; v++) {
    cumulative += histogram[v];
    lut[v] = (uint16_t)(grid->black + lhi_lut_level(cumulative, grid->lut_scale, span));
  }
}
