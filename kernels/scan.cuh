/* scan.cuh: the block-wide scan of a histogram (its cumulative counts) and
 * the finishing of one frame in one block: histogram copied out and cleared,
 * moments reduced, percentile values looked up in the running CDF.  Shared
 * by scan.cu (kernels of their own) and histogram.cu (the block that commits
 * last finishes the frame). */
#ifndef LHK_SCAN_CUH
#define LHK_SCAN_CUH

#include "reduce.cuh"

/* Shared memory of lhk_finish_frame.  The CDF tile is done with before the
 * moments are reduced, so the two share the space; a frame of one tile needs
 * only each warp's totals. */
union LhkFinishShared {
  struct {
    lhk_u64 cdf[LHK_BLOCK_THREADS];
    lhk_u64 warp_totals[LHK_WARPS];
  } scan;
  LhkMomentsShared moments;
  struct {
    lhk_u64 count[LHK_WARPS];
    lhk_u64 sum[LHK_WARPS];
    lhk_u64 squares_lo[LHK_WARPS];
    lhk_u64 squares_hi[LHK_WARPS];
  } one_tile;
};

__device__ __forceinline__ lhk_u64 lhk_warp_sum(lhk_u64 x)
{
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2)
    x += __shfl_xor_sync(0xffffffffu, x, offset);
  return x;
}

__device__ __forceinline__ lhk_u128 lhk_warp_sum128(lhk_u128 x)
{
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) {
    const lhk_u64 lo = __shfl_xor_sync(0xffffffffu, (lhk_u64)x, offset);
    const lhk_u64 hi = __shfl_xor_sync(0xffffffffu, (lhk_u64)(x >> 64), offset);
    x += (lhk_u128)hi << 64 | lo;
  }
  return x;
}

/* Inclusive scan of one value per thread over the block: shuffles within each
 * warp, then one warp scans the warps' totals.  *block_total gets the sum of
 * all.  The caller puts a barrier between two calls (warp_totals is reused). */
__device__ __forceinline__ lhk_u64 lhk_block_inclusive_scan(lhk_u64 x, lhk_u64 *warp_totals,
                                                            lhk_u64 *block_total)
{
  const unsigned all = 0xffffffffu;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  for (int offset = 1; offset < 32; offset *= 2) {
    lhk_u64 y = __shfl_up_sync(all, x, offset);
    if (lane >= offset)
      x += y;
  }
  if (lane == 31)
    warp_totals[warp] = x;
  __syncthreads();
  if (warp == 0) {
    lhk_u64 t = lane < LHK_WARPS ? warp_totals[lane] : 0;
    for (int offset = 1; offset < 32; offset *= 2) {
      lhk_u64 y = __shfl_up_sync(all, t, offset);
      if (lane >= offset)
        t += y;
    }
    if (lane < LHK_WARPS)
      warp_totals[lane] = t;
  }
  __syncthreads();
  if (warp > 0)
    x += warp_totals[warp - 1];
  *block_total = warp_totals[LHK_WARPS - 1];
  return x;
}

/* Smallest i with cdf[i] >= target, cdf non-decreasing over the tile and
 * cdf[LHK_BLOCK_THREADS - 1] >= target. */
__device__ __forceinline__ int lhk_tile_search(const lhk_u64 *cdf, lhk_u64 target)
{
  int lo = 0, hi = LHK_BLOCK_THREADS - 1;
  while (lo < hi) {
    int mid = (lo + hi) / 2;
    if (cdf[mid] >= target)
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo;
}

/* lhk_finish_frame for at most LHK_BLOCK_THREADS bins, the latency case (a
 * single 8-bit frame): one bin per thread and a single barrier.  Each thread
 * scans its warp's bins with shuffles, and after the barrier adds the totals
 * of the warps before it; then every result but the two sums is read off the
 * cumulative histogram C by the one thread whose bin v has C(v - 1) < t <=
 * C(v) for its threshold t: a rank's value (rank r), min (t = 1), max
 * (t = count), and below_legal = C(black - 1), above_legal = count - C(white)
 * by the threads of those bins.  The sum of squares keeps its 128 bits: a
 * histogram may hold more than a frame's counts (the kernels test gives it
 * counts near 2^60). */
__device__ __forceinline__ void lhk_finish_one_tile(const LhkFinish &f, LhkFinishShared &sh)
{
  const uint32_t v = threadIdx.x, bins = f.bins, lane = v & 31, warp = v >> 5;
  const uint32_t copies = f.n_copies > 1 ? f.n_copies : 1;
  lhk_u64 h = 0;
  if (v < bins) {
    /* Other blocks' atomics landed in L2: read past L1.  The fused path's
     * copies are all loaded before the first is added, so that the block
     * waits for L2 once, not once per few copies. */
    if (copies == LHK_FUSED_COPIES) {
      lhk_u64 per_copy[LHK_FUSED_COPIES];
#pragma unroll
      for (int c = 0; c < LHK_FUSED_COPIES; c++)
        per_copy[c] = __ldcg(f.histogram + (size_t)c * bins + v);
#pragma unroll
      for (int c = 0; c < LHK_FUSED_COPIES; c++)
        h += per_copy[c];
    } else {
      for (uint32_t c = 0; c < copies; c++)
        h += __ldcg(f.histogram + (size_t)c * bins + v);
    }
    for (uint32_t c = 0; c < copies; c++)
      f.histogram[(size_t)c * bins + v] = 0;
    lhk_result_histogram(f.result)[v] = h;
  }
  LHK_PHASE_END(6);
  lhk_u64 cdf = h;
#pragma unroll
  for (int offset = 1; offset < 32; offset *= 2) {
    const lhk_u64 y = __shfl_up_sync(0xffffffffu, cdf, offset);
    if (lane >= (uint32_t)offset)
      cdf += y;
  }
  const lhk_u64 sum = lhk_warp_sum(h * v);
  /* With v < 512 and h < 2^40, h v^2 < 2^58 and a warp's 32 of them fit 64
   * bits: half the shuffles of the 128-bit sum, which only counts of 2^40
   * and more need. */
  const lhk_u128 squares = __all_sync(0xffffffffu, h < (1ull << 40))
                               ? (lhk_u128)lhk_warp_sum(h * ((lhk_u64)v * v))
                               : lhk_warp_sum128((lhk_u128)h * ((lhk_u64)v * v));
  if (lane == 31) {
    sh.one_tile.count[warp] = cdf;
    sh.one_tile.sum[warp] = sum;
    sh.one_tile.squares_lo[warp] = (lhk_u64)squares;
    sh.one_tile.squares_hi[warp] = (lhk_u64)(squares >> 64);
  }
  __syncthreads();
  lhk_u64 count = 0;
#pragma unroll
  for (uint32_t w = 0; w < LHK_WARPS; w++) {
    const lhk_u64 t = sh.one_tile.count[w];
    count += t;
    if (w < warp)
      cdf += t;
  }
  if (v >= bins)
    return;
  const lhk_u64 before = cdf - h; /* C(v - 1) */
  LhkResult *result = (LhkResult *)f.result;
  for (int k = 0; k < f.n_ranks; k++) {
    const lhk_u64 r = f.ranks[k];
    if (r == 0 ? v == 0 : r > count ? v == bins - 1 : before < r && r <= cdf)
      result->values[k] = v;
  }
  if (count == 0 ? v == 0 : before < 1 && 1 <= cdf)
    result->min = v;
  if (count == 0 ? v == 0 : before < count && count <= cdf)
    result->max = v;
  const uint32_t black = min(f.black, bins), white = min(f.white, bins - 1);
  if (black == 0 ? v == 0 : v == black - 1)
    result->below_legal = black == 0 ? 0 : cdf;
  if (v == white)
    result->above_legal = count - cdf;
  if (v == 0) {
    result->clipped_low = h;
    result->count = count;
    lhk_u64 s = 0;
    lhk_u128 q = 0;
#pragma unroll
    for (uint32_t w = 0; w < LHK_WARPS; w++) {
      s += sh.one_tile.sum[w];
      q += (lhk_u128)sh.one_tile.squares_hi[w] << 64 | sh.one_tile.squares_lo[w];
    }
    result->sum = s;
    result->sum_squares_lo = (lhk_u64)q;
    result->sum_squares_hi = (lhk_u64)(q >> 64);
  }
  if (v == bins - 1)
    result->clipped_high = h;
}

/* Finishes one frame with the whole block: the histogram goes into the
 * result block and is cleared behind (so the next frame may add to it), the
 * moments are reduced, and each rank r gets the smallest v with cdf(v) >= r,
 * as lhi_values_from_histogram (r = 0 gives 0, r > count the top bin).  The
 * bins are walked in tiles of one bin per thread with coalesced loads; the
 * thread of rank k looks for it in the tile where the CDF crosses it.  One
 * tile takes the shorter way above. */
__device__ __forceinline__ void lhk_finish_frame(const LhkFinish &f, LhkFinishShared &sh)
{
  if (f.bins <= LHK_BLOCK_THREADS) {
    lhk_finish_one_tile(f, sh);
    return;
  }
  const int tid = threadIdx.x;
  const uint32_t bins = f.bins;
  lhk_u64 *histogram = f.histogram;
  lhk_u64 *out = lhk_result_histogram(f.result);
  const int n_ranks = f.n_ranks;
  const lhk_u64 rank = tid < n_ranks ? f.ranks[tid] : 0;
  uint32_t value = rank == 0 ? 0 : bins - 1;

  LhkMoments m;
  lhk_moments_init(m);
  lhk_u64 carry = 0;
  for (uint32_t base = 0; base < bins; base += LHK_BLOCK_THREADS) {
    const uint32_t v = base + tid;
    lhk_u64 h = 0;
    if (v < bins) {
      /* Other blocks' atomics landed in L2: read past L1. */
      h = __ldcg(histogram + v);
      histogram[v] = 0;
      out[v] = h;
    }
    lhk_moments_add(m, v, h, f.black, f.white);
    lhk_u64 tile_total;
    sh.scan.cdf[tid] = lhk_block_inclusive_scan(h, sh.scan.warp_totals, &tile_total);
    __syncthreads();
    if (rank > carry && rank - carry <= tile_total)
      value = base + lhk_tile_search(sh.scan.cdf, rank - carry);
    carry += tile_total;
    __syncthreads();
  }

  lhk_block_reduce_moments(m, sh.moments);
  LhkResult *result = (LhkResult *)f.result;
  if (tid == 0)
    lhk_moments_write(m, out[0], out[bins - 1], result);
  if (tid < n_ranks)
    result->values[tid] = value;
}

#endif /* LHK_SCAN_CUH */
