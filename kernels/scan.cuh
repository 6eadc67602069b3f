/* scan.cuh: the block-wide scan of a histogram (its cumulative counts) and
 * the finishing of one frame in one block: histogram copied out and cleared,
 * moments reduced, percentile values looked up in the running CDF.  Shared
 * by scan.cu (kernels of their own) and histogram.cu (the block that commits
 * last finishes the frame). */
#ifndef LHK_SCAN_CUH
#define LHK_SCAN_CUH

#include "reduce.cuh"

/* Shared memory of lhk_finish_frame.  The CDF tile is done with before the
 * moments are reduced, so the two share the space. */
union LhkFinishShared {
  struct {
    lhk_u64 cdf[LHK_BLOCK_THREADS];
    lhk_u64 warp_totals[LHK_WARPS];
  } scan;
  LhkMomentsShared moments;
};

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

/* Finishes one frame with the whole block: the histogram goes into the
 * result block and is cleared behind (so the next frame may add to it), the
 * moments are reduced, and each rank r gets the smallest v with cdf(v) >= r,
 * as lhi_values_from_histogram (r = 0 gives 0, r > count the top bin).  The
 * bins are walked in tiles of one bin per thread with coalesced loads; the
 * thread of rank k looks for it in the tile where the CDF crosses it. */
__device__ __forceinline__ void lhk_finish_frame(const LhkFinish &f, LhkFinishShared &sh)
{
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
