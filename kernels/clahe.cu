/* clahe.cu: CLAHE on the GPU: tile histograms privatized per tile in shared
 * memory over the frame extended by reflection, each tile's clipped LUT in
 * one block, and the bilinear mix of the four nearest tile LUTs per pixel. */
#include "equalize.cuh"
#include "scan.cuh"

/* --- Tunables --------------------------------------------------------------
 * Up to this many bins each warp counts into its own copy of the tile
 * histogram (16 copies of 256 bins: 16 KiB), so that only the lanes of one
 * warp contend for an address; up to LHK_SHARED_MAX_BINS one copy per block
 * is shared; above, blocks add straight to the tile histogram in global
 * memory. */
#define LHK_CLAHE_WARP_COPIES_MAX_BINS 256
/* Consecutive pixels of a row one thread counts, aggregating runs of equal
 * bins in a register before each atomic. */
#define LHK_CLAHE_CHUNK 16
/* Histogram blocks aimed at per multiprocessor: each tile is split into
 * bands of rows until the grid has that many blocks. */
#define LHK_CLAHE_BLOCKS_PER_SM 2

enum { LHK_COUNT_WARPS, LHK_COUNT_BLOCK, LHK_COUNT_GLOBAL };

/* The stored rows' or columns' axis of grid g as a kernel walks it:
 * ORIENTED false, for a frame shown as stored, fixes what an orientation
 * varies, so that those kernels compile to the plain walk. */
template <bool ORIENTED>
__device__ __forceinline__ LhiClaheAxis lhk_clahe_axis(const LhiClaheGrid &g, bool rows,
                                                       uint32_t length)
{
  return ORIENTED ? lhi_clahe_stored_axis(&g, rows, length)
                  : lhi_clahe_plain_axis(&g, rows, length);
}

/* --- Tile histograms ------------------------------------------------------ */

template <int PIXEL, int MODE, bool ORIENTED>
__global__ void __launch_bounds__(LHK_BLOCK_THREADS)
    lhk_clahe_histogram_kernel(LhkPlane p, LhiClaheGrid g, uint32_t bins, uint32_t *tiles)
{
  extern __shared__ uint32_t counts[];
  const int tid = threadIdx.x, warp = tid >> 5;
  const uint32_t tile = blockIdx.x;
  /* The stored rows and columns the tile of the picture as shown covers
   * (lhi_clahe_stored_axis): its rows' and columns' tiles along them. */
  const LhiClaheAxis rows = lhk_clahe_axis<ORIENTED>(g, true, p.height);
  const LhiClaheAxis columns = lhk_clahe_axis<ORIENTED>(g, false, p.width);
  const uint32_t ty = tile / rows.stride % rows.tiles;
  const uint32_t tx = tile / columns.stride % columns.tiles;
  uint32_t *global = tiles + (size_t)tile * bins;
  const uint32_t copies = MODE == LHK_COUNT_WARPS ? LHK_WARPS : 1;
  if (MODE != LHK_COUNT_GLOBAL) {
    for (uint32_t v = tid; v < bins * copies; v += LHK_BLOCK_THREADS)
      counts[v] = 0;
    __syncthreads();
  }
  uint32_t *mine = MODE == LHK_COUNT_WARPS   ? counts + warp * bins
                   : MODE == LHK_COUNT_BLOCK ? counts
                                             : global;

  /* This block's band of the tile's rows, in extended coordinates. */
  const uint32_t th = rows.tile, tw = columns.tile;
  const uint32_t r0 = ty * th + (uint32_t)((uint64_t)th * blockIdx.y / gridDim.y);
  const uint32_t r1 = ty * th + (uint32_t)((uint64_t)th * (blockIdx.y + 1) / gridDim.y);
  const uint32_t chunks = (tw + LHK_CLAHE_CHUNK - 1) / LHK_CLAHE_CHUNK;
  const uint32_t items = (r1 - r0) * chunks;
  const uint32_t x_begin = tx * tw, x_end = x_begin + tw;
  const bool plain_columns = !columns.flip;

  uint32_t run_bin = 0, run_length = 0;
  for (uint32_t item = tid; item < items; item += LHK_BLOCK_THREADS) {
    const uint32_t r = r0 + item / chunks, c = item % chunks;
    const uint8_t *row = (const uint8_t *)p.in + (size_t)lhi_clahe_source(&rows, r) * p.in_stride;
    const uint32_t xa = x_begin + c * LHK_CLAHE_CHUNK;
    const uint32_t xb = min(xa + LHK_CLAHE_CHUNK, x_end);
    for (uint32_t x = xa; x < xb; x++) {
      const uint32_t sx = plain_columns && x < p.width ? x : lhi_clahe_source(&columns, x);
      uint32_t bin = lhk_luma_at<PIXEL>(row, sx, p);
      if (bin != run_bin) {
        if (run_length)
          atomicAdd(mine + run_bin, run_length);
        run_bin = bin;
        run_length = 0;
      }
      run_length++;
    }
  }
  if (run_length)
    atomicAdd(mine + run_bin, run_length);

  if (MODE != LHK_COUNT_GLOBAL) {
    __syncthreads();
    for (uint32_t v = tid; v < bins; v += LHK_BLOCK_THREADS) {
      uint32_t sum = 0;
      for (uint32_t k = 0; k < copies; k++)
        sum += counts[k * bins + v];
      if (sum)
        atomicAdd(global + v, sum);
    }
  }
}

template <int PIXEL, bool ORIENTED>
static cudaError_t clahe_histograms_as(const LhkDevice *device, const LhkPlane &p,
                                       const LhiClaheGrid &g, uint32_t bins, uint32_t *tiles,
                                       cudaStream_t stream)
{
  const uint32_t n_tiles = (uint32_t)(g.tiles_x * g.tiles_y);
  uint32_t target = (uint32_t)device->sm_count * LHK_CLAHE_BLOCKS_PER_SM;
  uint32_t splits = (target + n_tiles - 1) / n_tiles;
  splits = min(splits, lhi_clahe_stored_axis(&g, true, p.height).tile);
  splits = max(splits, 1u);
  dim3 grid(n_tiles, splits);
  if (bins <= LHK_CLAHE_WARP_COPIES_MAX_BINS)
    lhk_clahe_histogram_kernel<PIXEL, LHK_COUNT_WARPS, ORIENTED>
        <<<grid, LHK_BLOCK_THREADS, LHK_WARPS * bins * sizeof(uint32_t), stream>>>(p, g, bins,
                                                                                   tiles);
  else if (bins <= LHK_SHARED_MAX_BINS)
    lhk_clahe_histogram_kernel<PIXEL, LHK_COUNT_BLOCK, ORIENTED>
        <<<grid, LHK_BLOCK_THREADS, bins * sizeof(uint32_t), stream>>>(p, g, bins, tiles);
  else
    lhk_clahe_histogram_kernel<PIXEL, LHK_COUNT_GLOBAL, ORIENTED>
        <<<grid, LHK_BLOCK_THREADS, 0, stream>>>(p, g, bins, tiles);
  LHK_CHECK_LAUNCH(stream);
  return cudaSuccess;
}

template <int PIXEL>
static cudaError_t clahe_histograms(const LhkDevice *device, const LhkPlane &p,
                                    const LhiClaheGrid &g, uint32_t bins, uint32_t *tiles,
                                    cudaStream_t stream)
{
  return g.orientation > 1
             ? clahe_histograms_as<PIXEL, true>(device, p, g, bins, tiles, stream)
             : clahe_histograms_as<PIXEL, false>(device, p, g, bins, tiles, stream);
}

static bool valid_grid(const LhiClaheGrid *g, uint32_t bins)
{
  return g->tiles_x >= 1 && g->tiles_y >= 1 && g->tile_w >= 1 && g->tile_h >= 1 && bins >= 256 &&
         bins <= LHK_MAX_BINS && (bins & (bins - 1)) == 0 && g->white < bins &&
         g->black <= g->white;
}

extern "C" cudaError_t lhk_clahe_histograms(const LhkDevice *device, LhkPixel pixel,
                                            const LhkPlane *plane, const LhiClaheGrid *grid,
                                            uint32_t bins, uint32_t *tile_histograms,
                                            cudaStream_t stream)
{
  if (!valid_grid(grid, bins))
    return cudaErrorInvalidValue;
  switch (pixel) {
  case LHK_PIXEL_Y8:
    return clahe_histograms<LHK_PIXEL_Y8>(device, *plane, *grid, bins, tile_histograms, stream);
  case LHK_PIXEL_Y16:
    return clahe_histograms<LHK_PIXEL_Y16>(device, *plane, *grid, bins, tile_histograms, stream);
  case LHK_PIXEL_RGB8:
    return clahe_histograms<LHK_PIXEL_RGB8>(device, *plane, *grid, bins, tile_histograms, stream);
  case LHK_PIXEL_RGBA8:
    return clahe_histograms<LHK_PIXEL_RGBA8>(device, *plane, *grid, bins, tile_histograms, stream);
  case LHK_PIXEL_RGB16:
    return clahe_histograms<LHK_PIXEL_RGB16>(device, *plane, *grid, bins, tile_histograms, stream);
  case LHK_PIXEL_RGBA16:
    return clahe_histograms<LHK_PIXEL_RGBA16>(device, *plane, *grid, bins, tile_histograms, stream);
  case LHK_PIXEL_RGB10:
    return clahe_histograms<LHK_PIXEL_RGB10>(device, *plane, *grid, bins, tile_histograms, stream);
  case LHK_PIXEL_V210:
    return clahe_histograms<LHK_PIXEL_V210>(device, *plane, *grid, bins, tile_histograms, stream);
  default:
    return cudaErrorInvalidValue;
  }
}

/* --- Tile LUTs ------------------------------------------------------------- */

/* lhi_clahe_tile_lut for tile blockIdx.x: the clipped excess summed, spread
 * evenly, its remainder one count every `step` bins from bin 0, then the
 * LUT from the running sum, walked in tiles of one bin per thread. */
__global__ void __launch_bounds__(LHK_BLOCK_THREADS)
    lhk_clahe_lut_kernel(LhiClaheGrid g, uint32_t bins, uint32_t *tiles, uint16_t *luts,
                         lhk_u64 *cut_histogram)
{
  __shared__ lhk_u64 warp_totals[LHK_WARPS];
  __shared__ uint32_t warp_clipped[LHK_WARPS];
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  uint32_t *histogram = tiles + (size_t)blockIdx.x * bins;
  uint16_t *lut = luts + (size_t)blockIdx.x * bins;
  const uint32_t clip = g.clip;

  uint32_t clipped = 0;
  for (uint32_t v = tid; v < bins; v += LHK_BLOCK_THREADS) {
    uint32_t h = histogram[v];
    if (cut_histogram && h)
      atomicAdd(cut_histogram + v, (lhk_u64)h);
    if (clip && h > clip)
      clipped += h - clip;
  }
  for (int offset = 16; offset > 0; offset /= 2)
    clipped += __shfl_down_sync(0xffffffffu, clipped, offset);
  if (lane == 0)
    warp_clipped[warp] = clipped;
  __syncthreads();
  clipped = 0;
  for (int w = 0; w < LHK_WARPS; w++)
    clipped += warp_clipped[w];
  const uint32_t batch = clipped / bins, residual = clipped - batch * bins;
  const uint32_t step = residual ? max(bins / residual, 1u) : 1;
  const uint32_t span = g.white - g.black;

  lhk_u64 carry = 0;
  for (uint32_t base = 0; base < bins; base += LHK_BLOCK_THREADS) {
    const uint32_t v = base + tid;
    uint32_t h = 0;
    if (v < bins) {
      h = histogram[v];
      histogram[v] = 0;
      if (clip)
        h = min(h, clip) + batch + (v % step == 0 && v / step < residual ? 1 : 0);
    }
    lhk_u64 tile_total;
    lhk_u64 cumulative = carry + lhk_block_inclusive_scan(h, warp_totals, &tile_total);
    if (v < bins)
      lut[v] = (uint16_t)(g.black + lhi_lut_level(cumulative, g.lut_scale, span));
    carry += tile_total;
    __syncthreads();
  }
}

extern "C" cudaError_t lhk_clahe_luts(const LhiClaheGrid *grid, uint32_t bins,
                                      uint32_t *tile_histograms, uint16_t *luts,
                                      unsigned long long *cut_histogram, cudaStream_t stream)
{
  if (!valid_grid(grid, bins))
    return cudaErrorInvalidValue;
  lhk_clahe_lut_kernel<<<grid->tiles_x * grid->tiles_y, LHK_BLOCK_THREADS, 0, stream>>>(
      *grid, bins, tile_histograms, luts, cut_histogram);
  LHK_CHECK_LAUNCH(stream);
  return cudaSuccess;
}

/* --- Interpolation ----------------------------------------------------------- */

/* lhi_clahe_axis stepped along a row of the frame as stored: pos = 2 x +
 * tile = q twice + num, x the position along the picture as shown, which
 * runs back along the row when the columns' axis is flipped. */
struct LhkAxisWalk {
  uint32_t q;
  uint32_t num;
  uint32_t twice;
  bool back;
};

__device__ __forceinline__ LhkAxisWalk lhk_axis_start(uint32_t x, const LhiClaheAxis &columns)
{
  LhkAxisWalk a;
  a.twice = 2 * columns.tile;
  a.back = columns.flip;
  uint32_t pos = 2 * lhi_clahe_shown(&columns, x) + columns.tile;
  a.q = pos / a.twice;
  a.num = pos - a.q * a.twice;
  return a;
}

__device__ __forceinline__ void lhk_axis_next(LhkAxisWalk &a)
{
  if (a.back) {
    /* Walked no further than the row's last pixel (position 0 as
     * shown, pos = tile): q stays at 0 or above.  A step past it, which
     * the caller then drops, wraps q. */
    if (a.num >= 2) {
      a.num -= 2;
    } else {
      a.num += a.twice - 2;
      a.q--;
    }
  } else {
    a.num += 2;
    if (a.num >= a.twice) {
      a.num -= a.twice;
      a.q++;
    }
  }
}

/* The new luma of luma y at the walk's position: the mix of the four
 * nearest tile LUTs (transposed, upper and lower are the tiles left and
 * right as shown, the mix the same: lhi_clahe_mix). */
__device__ __forceinline__ uint32_t lhk_clahe_level(uint32_t y, const LhkAxisWalk &a,
                                                    const LhiClaheAxis &columns,
                                                    const uint16_t *upper, const uint16_t *lower,
                                                    uint32_t wy, uint32_t bins)
{
  const uint32_t wx = (uint32_t)(((uint64_t)a.num * columns.recip) >> 32);
  const uint32_t t0 = a.q == 0 ? 0 : a.q - 1, t1 = min(a.q, columns.tiles - 1);
  const size_t step = (size_t)columns.stride * bins;
  const size_t left = t0 * step + y, right = t1 * step + y;
  return lhi_clahe_mix(__ldg(upper + left), __ldg(upper + right), __ldg(lower + left),
                       __ldg(lower + right), wx, wy);
}

/* The LUT rows of the tiles above and below a frame row (the rows' axis
 * as the grid sees it), and its weight between them. */
struct LhkClaheRow {
  const uint16_t *upper, *lower;
  uint32_t wy;
};

__device__ __forceinline__ LhkClaheRow lhk_clahe_row(uint32_t row, const LhiClaheAxis &rows,
                                                     uint32_t bins, const uint16_t *luts)
{
  uint32_t ty0, ty1;
  LhkClaheRow r;
  lhi_clahe_axis_at(&rows, row, &ty0, &ty1, &r.wy);
  r.upper = luts + (size_t)ty0 * bins;
  r.lower = luts + (size_t)ty1 * bins;
  return r;
}

/* One pixel: its luma, the mix of the four LUTs, written back. */
template <int PIXEL>
__device__ __forceinline__ void lhk_clahe_pixel(const uint8_t *src, uint8_t *dst,
                                                const LhkAxisWalk &a, const LhiClaheAxis &columns,
                                                const uint16_t *upper, const uint16_t *lower,
                                                uint32_t wy, uint32_t bins, const LhkPlane &p)
{
  const uint32_t y = lhk_luma_of<PIXEL>(src, p);
  const uint32_t y_new = lhk_clahe_level(y, a, columns, upper, lower, wy, bins);
  const uint32_t gain = lhk_is_colour<PIXEL>() && y ? lhi_gain(y, y_new) : 0;
  lhk_write_pixel<PIXEL>(src, dst, y, y_new, gain, p);
}

template <int PIXEL, bool ORIENTED>
__global__ void __launch_bounds__(LHK_REWRITE_THREADS)
    lhk_clahe_apply_kernel(LhkPlane p, LhiClaheGrid g, uint32_t bins, const uint16_t *luts)
{
  typedef LhkRewrite<PIXEL> R;
  const LhkRowSplit split = lhk_row_split<PIXEL>(p);
  const uint32_t slot = blockIdx.x * blockDim.x + threadIdx.x;
  if (slot >= split.slots)
    return;
  const LhiClaheAxis rows = lhk_clahe_axis<ORIENTED>(g, true, p.height);
  const LhiClaheAxis columns = lhk_clahe_axis<ORIENTED>(g, false, p.width);
  uint32_t row, end;
  lhk_block_rows(p.height, &row, &end);
  for (; row < end; row++) {
    const LhkClaheRow r = lhk_clahe_row(row, rows, bins, luts);
    const uint8_t *in = (const uint8_t *)p.in + row * p.in_stride;
    uint8_t *out = (uint8_t *)p.out + row * p.out_stride;
    if (slot < split.units) {
      LhkUnit<PIXEL> unit;
      unit.load(in + (size_t)slot * R::UNIT_BYTES);
      LhkAxisWalk a = lhk_axis_start(slot * R::PX, columns);
#pragma unroll
      for (int i = 0; i < R::PX; i++) {
        uint8_t *px = unit.bytes + i * R::SAMPLES * R::SAMPLE_BYTES;
        lhk_clahe_pixel<PIXEL>(px, px, a, columns, r.upper, r.lower, r.wy, bins, p);
        lhk_axis_next(a);
      }
      unit.store(out + (size_t)slot * R::UNIT_BYTES);
    } else {
      uint32_t x = split.units * R::PX + (slot - split.units);
      size_t offset = (size_t)x * R::SAMPLES * R::SAMPLE_BYTES;
      LhkAxisWalk a = lhk_axis_start(x, columns);
      lhk_clahe_pixel<PIXEL>(in + offset, out + offset, a, columns, r.upper, r.lower, r.wy, bins,
                             p);
    }
  }
}

/* v210: one thread per group of a row (lhk_row_split), the Y fields of its
 * pixels mixed, the group stored whole. */
template <bool ORIENTED>
__global__ void __launch_bounds__(LHK_REWRITE_THREADS)
    lhk_clahe_apply_v210_kernel(LhkPlane p, LhiClaheGrid g, uint32_t bins, const uint16_t *luts)
{
  const LhkRowSplit split = lhk_row_split<LHK_PIXEL_V210>(p);
  const uint32_t slot = blockIdx.x * blockDim.x + threadIdx.x;
  if (slot >= split.slots)
    return;
  const bool aligned = lhk_v210_aligned(p);
  const uint32_t pixels = lhk_v210_pixels(p.width, slot);
  const size_t at = (size_t)slot * LHI_V210_GROUP_BYTES;
  const LhiClaheAxis rows = lhk_clahe_axis<ORIENTED>(g, true, p.height);
  const LhiClaheAxis columns = lhk_clahe_axis<ORIENTED>(g, false, p.width);
  uint32_t row, end;
  lhk_block_rows(p.height, &row, &end);
  for (; row < end; row++) {
    const LhkClaheRow r = lhk_clahe_row(row, rows, bins, luts);
    LhkV210Group group;
    group.load((const uint8_t *)p.in + row * p.in_stride + at, aligned);
    LhkAxisWalk a = lhk_axis_start(slot * LHI_V210_GROUP_PIXELS, columns);
#pragma unroll
    for (int k = 0; k < LHI_V210_GROUP_PIXELS; k++) {
      if (k < pixels) {
        group.set_y(k, lhk_clahe_level(group.y(k), a, columns, r.upper, r.lower, r.wy, bins));
        /* not past the row's last pixel: a walk back would pass position 0 */
        if (k + 1 < pixels)
          lhk_axis_next(a);
      }
    }
    group.store((uint8_t *)p.out + row * p.out_stride + at, aligned);
  }
}

template <int PIXEL>
static cudaError_t clahe_apply(const LhkPlane &p, const LhiClaheGrid &g, uint32_t bins,
                               const uint16_t *luts, cudaStream_t stream)
{
  dim3 grid;
  lhk_rewrite_grid<PIXEL>(p, &grid);
  if (g.orientation > 1)
    lhk_clahe_apply_kernel<PIXEL, true><<<grid, LHK_REWRITE_THREADS, 0, stream>>>(p, g, bins, luts);
  else
    lhk_clahe_apply_kernel<PIXEL, false><<<grid, LHK_REWRITE_THREADS, 0, stream>>>(p, g, bins, luts);
  LHK_CHECK_LAUNCH(stream);
  return cudaSuccess;
}

extern "C" cudaError_t lhk_clahe_apply(LhkPixel pixel, const LhkPlane *plane,
                                       const LhiClaheGrid *grid, uint32_t bins,
                                       const uint16_t *luts, cudaStream_t stream)
{
  if (!valid_grid(grid, bins))
    return cudaErrorInvalidValue;
  if (plane->width == 0 || plane->height == 0)
    return cudaSuccess;
  switch (pixel) {
  case LHK_PIXEL_Y8:
    return clahe_apply<LHK_PIXEL_Y8>(*plane, *grid, bins, luts, stream);
  case LHK_PIXEL_Y16:
    return clahe_apply<LHK_PIXEL_Y16>(*plane, *grid, bins, luts, stream);
  case LHK_PIXEL_RGB8:
    return clahe_apply<LHK_PIXEL_RGB8>(*plane, *grid, bins, luts, stream);
  case LHK_PIXEL_RGBA8:
    return clahe_apply<LHK_PIXEL_RGBA8>(*plane, *grid, bins, luts, stream);
  case LHK_PIXEL_RGB16:
    return clahe_apply<LHK_PIXEL_RGB16>(*plane, *grid, bins, luts, stream);
  case LHK_PIXEL_RGBA16:
    return clahe_apply<LHK_PIXEL_RGBA16>(*plane, *grid, bins, luts, stream);
  case LHK_PIXEL_RGB10:
    return clahe_apply<LHK_PIXEL_RGB10>(*plane, *grid, bins, luts, stream);
  case LHK_PIXEL_V210: {
    dim3 launch;
    lhk_rewrite_grid<LHK_PIXEL_V210>(*plane, &launch);
    if (grid->orientation > 1)
      lhk_clahe_apply_v210_kernel<true>
          <<<launch, LHK_REWRITE_THREADS, 0, stream>>>(*plane, *grid, bins, luts);
    else
      lhk_clahe_apply_v210_kernel<false>
          <<<launch, LHK_REWRITE_THREADS, 0, stream>>>(*plane, *grid, bins, luts);
    LHK_CHECK_LAUNCH(stream);
    return cudaSuccess;
  }
  default:
    return cudaErrorInvalidValue;
  }
}
