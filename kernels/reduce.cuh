/* reduce.cuh: the single-block reduction of a histogram into the exact
 * integer moments (count, sums, min, max, clipped and out-of-legal counts),
 * shared by the reduce kernel and the per-frame finishing in scan.cu and
 * histogram.cu. */
#ifndef LHK_REDUCE_CUH
#define LHK_REDUCE_CUH

#include "lhk-common.cuh"

/* One thread's share of the moments.  Only exact integer arithmetic, in the
 * same formulas as lhi_moments_from_histogram, so that the result is the
 * CPU's bit for bit whatever the order of the additions. */
struct LhkMoments {
  lhk_u64 count;
  lhk_u64 sum;
  lhk_u64 below;
  lhk_u64 above;
  lhk_u128 sum_squares;
  uint32_t min; /* UINT32_MAX while no value was seen */
  uint32_t max;
};

/* Partials of the block in shared memory, one array per field so that
 * neighbouring threads touch neighbouring words (no bank conflicts). */
struct LhkMomentsShared {
  lhk_u64 count[LHK_BLOCK_THREADS];
  lhk_u64 sum[LHK_BLOCK_THREADS];
  lhk_u64 below[LHK_BLOCK_THREADS];
  lhk_u64 above[LHK_BLOCK_THREADS];
  lhk_u64 squares_lo[LHK_BLOCK_THREADS];
  lhk_u64 squares_hi[LHK_BLOCK_THREADS];
  uint32_t min[LHK_BLOCK_THREADS];
  uint32_t max[LHK_BLOCK_THREADS];
};

__device__ __forceinline__ void lhk_moments_init(LhkMoments &m)
{
  m.count = m.sum = m.below = m.above = 0;
  m.sum_squares = 0;
  m.min = UINT32_MAX;
  m.max = 0;
}

/* Bin v holds h values. */
__device__ __forceinline__ void lhk_moments_add(LhkMoments &m, uint32_t v, lhk_u64 h,
                                                uint32_t black, uint32_t white)
{
  if (h == 0)
    return;
  m.count += h;
  m.sum += h * v;
  m.sum_squares += (lhk_u128)h * ((lhk_u64)v * v);
  m.min = min(m.min, v);
  m.max = max(m.max, v);
  if (v < black)
    m.below += h;
  if (v > white)
    m.above += h;
}

__device__ __forceinline__ void lhk_moments_merge(LhkMoments &a, const LhkMoments &b)
{
  a.count += b.count;
  a.sum += b.sum;
  a.below += b.below;
  a.above += b.above;
  a.sum_squares += b.sum_squares;
  a.min = min(a.min, b.min);
  a.max = max(a.max, b.max);
}

__device__ __forceinline__ void lhk_moments_store(LhkMomentsShared &s, int i, const LhkMoments &m)
{
  s.count[i] = m.count;
  s.sum[i] = m.sum;
  s.below[i] = m.below;
  s.above[i] = m.above;
  s.squares_lo[i] = (lhk_u64)m.sum_squares;
  s.squares_hi[i] = (lhk_u64)(m.sum_squares >> 64);
  s.min[i] = m.min;
  s.max[i] = m.max;
}

__device__ __forceinline__ void lhk_moments_load(const LhkMomentsShared &s, int i, LhkMoments &m)
{
  m.count = s.count[i];
  m.sum = s.sum[i];
  m.below = s.below[i];
  m.above = s.above[i];
  m.sum_squares = ((lhk_u128)s.squares_hi[i] << 64) | s.squares_lo[i];
  m.min = s.min[i];
  m.max = s.max[i];
}

__device__ __forceinline__ void lhk_moments_shuffle_down(LhkMoments &m, int offset)
{
  const unsigned all = 0xffffffffu;
  LhkMoments o;
  o.count = __shfl_down_sync(all, m.count, offset);
  o.sum = __shfl_down_sync(all, m.sum, offset);
  o.below = __shfl_down_sync(all, m.below, offset);
  o.above = __shfl_down_sync(all, m.above, offset);
  lhk_u64 lo = __shfl_down_sync(all, (lhk_u64)m.sum_squares, offset);
  lhk_u64 hi = __shfl_down_sync(all, (lhk_u64)(m.sum_squares >> 64), offset);
  o.sum_squares = ((lhk_u128)hi << 64) | lo;
  o.min = __shfl_down_sync(all, m.min, offset);
  o.max = __shfl_down_sync(all, m.max, offset);
  lhk_moments_merge(m, o);
}

/* Reduces every thread's m into thread 0's (the others' m is left partial).
 * The active threads stay contiguous as the stride halves, so whole warps
 * drop out together and no warp diverges; the last 32 partials are combined
 * by shuffles without shared memory or barriers.  Ends with a barrier, so
 * that s may be reused at once. */
__device__ __forceinline__ void lhk_block_reduce_moments(LhkMoments &m, LhkMomentsShared &s)
{
  const int tid = threadIdx.x;
  lhk_moments_store(s, tid, m);
  __syncthreads();
  for (int stride = LHK_BLOCK_THREADS / 2; stride >= 32; stride /= 2) {
    if (tid < stride) {
      LhkMoments other;
      lhk_moments_load(s, tid + stride, other);
      lhk_moments_merge(m, other);
      if (stride > 32)
        lhk_moments_store(s, tid, m);
    }
    __syncthreads();
  }
  if (tid < 32) {
    for (int offset = 16; offset > 0; offset /= 2)
      lhk_moments_shuffle_down(m, offset);
  }
}

/* The moments in a result header (thread 0's m, after the block reduction).
 * clipped_low and clipped_high are the first and last bins. */
__device__ __forceinline__ void lhk_moments_write(const LhkMoments &m, lhk_u64 first_bin,
                                                  lhk_u64 last_bin, LhkResult *r)
{
  r->count = m.count;
  r->sum = m.sum;
  r->sum_squares_lo = (lhk_u64)m.sum_squares;
  r->sum_squares_hi = (lhk_u64)(m.sum_squares >> 64);
  r->clipped_low = first_bin;
  r->clipped_high = last_bin;
  r->below_legal = m.below;
  r->above_legal = m.above;
  r->min = m.count ? m.min : 0;
  r->max = m.max;
}

#endif /* LHK_REDUCE_CUH */
