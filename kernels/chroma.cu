/* chroma.cu: LH_CHROMA_SCALE on the GPU: each chroma sample of an 8-bit
 * planar or semi-planar YUV frame scaled about 128 by the gain of its
 * footprint's luma (lhi_scale_chroma), one thread per sample position (Cb
 * and Cr).  It runs before Y is rewritten and makes the new luma itself from
 * the old, through the LUT or the CLAHE tile LUTs as the rewriting kernels
 * do, so that in-place frames need no copy of the old Y. */
#include "lh-equalize.h"
#include "lhk-common.cuh"

/* --- Tunables --------------------------------------------------------------
 * A block: a warp across a chroma row (coalesced reads of its luma rows),
 * CHROMA_BLOCK_ROWS rows down. */
#define LHK_CHROMA_BLOCK_ROWS 8
/* Blocks down the frame at most; each then strides over further rows. */
#define LHK_CHROMA_MAX_ROW_BLOCKS 8192

/* The new luma of pixel (x, y) of old luma v: the LUT's entry, or the CLAHE
 * mix of its four tile LUTs (lhk_clahe_pixel's arithmetic; transposed,
 * upper and lower are the tiles left and right as shown, the mix the same:
 * lhi_clahe_mix). */
template <bool CLAHE>
__device__ __forceinline__ uint32_t lhk_chroma_new_luma(uint32_t x, uint32_t y, uint32_t v,
                                                        const uint16_t *luts,
                                                        const LhiClaheAxis &rows,
                                                        const LhiClaheAxis &columns)
{
  if constexpr (!CLAHE) {
    return __ldg(luts + v);
  } else {
    const uint32_t bins = 256;
    uint32_t tx0, tx1, wx, ty0, ty1, wy;
    lhi_clahe_axis_at(&columns, x, &tx0, &tx1, &wx);
    lhi_clahe_axis_at(&rows, y, &ty0, &ty1, &wy);
    const uint16_t *upper = luts + (size_t)ty0 * bins;
    const uint16_t *lower = luts + (size_t)ty1 * bins;
    const size_t left = (size_t)tx0 * bins + v, right = (size_t)tx1 * bins + v;
    return lhi_clahe_mix(__ldg(upper + left), __ldg(upper + right), __ldg(lower + left),
                         __ldg(lower + right), wx, wy);
  }
}

template <bool CLAHE, bool ORIENTED>
__global__ void lhk_scale_chroma_kernel(LhkChroma c, const uint16_t *luts, LhiClaheGrid g)
{
  const uint32_t cx = blockIdx.x * blockDim.x + threadIdx.x;
  const uint32_t samples = (c.width + (1u << c.x_shift) - 1) >> c.x_shift;
  const uint32_t rows = (c.height + (1u << c.y_shift) - 1) >> c.y_shift;
  if (cx >= samples)
    return;
  /* ORIENTED false, a frame shown as stored: what an orientation varies
   * fixed, as clahe.cu's kernels have it. */
  const LhiClaheAxis luma_rows = ORIENTED ? lhi_clahe_stored_axis(&g, true, c.height)
                                          : lhi_clahe_plain_axis(&g, true, c.height);
  const LhiClaheAxis luma_columns = ORIENTED ? lhi_clahe_stored_axis(&g, false, c.width)
                                             : lhi_clahe_plain_axis(&g, false, c.width);
  const uint32_t x0 = cx << c.x_shift, x1 = min(c.width, x0 + (1u << c.x_shift));
  for (uint32_t cy = blockIdx.y * blockDim.y + threadIdx.y; cy < rows;
       cy += gridDim.y * blockDim.y) {
    const uint32_t y0 = cy << c.y_shift, y1 = min(c.height, y0 + (1u << c.y_shift));
    uint32_t sum = 0, sum_new = 0;
    for (uint32_t y = y0; y < y1; y++) {
      /* not __ldg: the Y plane may be the one the frame's chroma is in */
      const uint8_t *row = (const uint8_t *)c.luma + (size_t)y * c.luma_stride;
      for (uint32_t x = x0; x < x1; x++) {
        const uint32_t v = row[x];
        sum += v;
        sum_new += lhk_chroma_new_luma<CLAHE>(x, y, v, luts, luma_rows, luma_columns);
      }
    }
#pragma unroll
    for (int k = 0; k < 2; k++) {
      const size_t at = (size_t)cx * c.step;
      const uint8_t *src = (const uint8_t *)c.in[k] + (size_t)cy * c.in_stride[k];
      uint8_t *dst = (uint8_t *)c.out[k] + (size_t)cy * c.out_stride[k];
      dst[at] = (uint8_t)lhi_scale_chroma(src[at], sum, sum_new);
    }
  }
}

template <bool CLAHE>
static cudaError_t scale_chroma(const LhkChroma *c, const uint16_t *luts, const LhiClaheGrid &g,
                                cudaStream_t stream)
{
  if (c->width == 0 || c->height == 0)
    return cudaSuccess;
  if (c->x_shift > 2 || c->y_shift > 1 || (c->step != 1 && c->step != 2))
    return cudaErrorInvalidValue;
  const uint32_t samples = (c->width + (1u << c->x_shift) - 1) >> c->x_shift;
  const uint32_t rows = (c->height + (1u << c->y_shift) - 1) >> c->y_shift;
  const dim3 block(32, LHK_CHROMA_BLOCK_ROWS);
  const uint32_t row_blocks = (rows + LHK_CHROMA_BLOCK_ROWS - 1) / LHK_CHROMA_BLOCK_ROWS;
  const dim3 grid((samples + 31) / 32,
                  row_blocks < LHK_CHROMA_MAX_ROW_BLOCKS ? row_blocks : LHK_CHROMA_MAX_ROW_BLOCKS);
  if (CLAHE && g.orientation > 1)
    lhk_scale_chroma_kernel<CLAHE, true><<<grid, block, 0, stream>>>(*c, luts, g);
  else
    lhk_scale_chroma_kernel<CLAHE, false><<<grid, block, 0, stream>>>(*c, luts, g);
  LHK_CHECK_LAUNCH(stream);
  return cudaSuccess;
}

extern "C" cudaError_t lhk_scale_chroma_lut(const LhkChroma *chroma, const uint16_t *lut,
                                            cudaStream_t stream)
{
  const LhiClaheGrid none = {};
  return scale_chroma<false>(chroma, lut, none, stream);
}

extern "C" cudaError_t lhk_scale_chroma_clahe(const LhkChroma *chroma, const LhiClaheGrid *grid,
                                              const uint16_t *luts, cudaStream_t stream)
{
  if (grid->tiles_x < 1 || grid->tiles_y < 1 || grid->tile_w < 1 || grid->tile_h < 1)
    return cudaErrorInvalidValue;
  return scale_chroma<true>(chroma, luts, *grid, stream);
}
