/* scan.cuh: the block-wide scan of a histogram (its cumulative counts) and
 * the finishing of one frame in one block: histogram copied out and cleared,
 * moments reduced, percentile values looked up in the running CDF.  Shared
 * by scan.cu (kernels of their own) and histogram.cu (the block that commits
 * last finishes the frame). */
#ifndef LHK_SCAN_CUH
#define LHK_SCAN_CUH

#include <cuda/atomic>

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
    lhk_u64 cdf[LHK_BLOCK_THREADS]; /* within each warp's 32 bins */
    lhk_u64 count[LHK_WARPS];
    lhk_u64 sum[LHK_WARPS];
    lhk_u64 squares_lo[LHK_WARPS];
    lhk_u64 squares_hi[LHK_WARPS];
  } one_tile;
};

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

/* The exact sum of a 64-bit value over the warp, in 128 bits.  From sm_80
 * on, three single-instruction warp reductions (REDUX) of its 22-, 22- and
 * 20-bit pieces, whose sums over 32 lanes fit 32 bits, instead of five
 * dependent rounds of shuffles and adds. */
__device__ __forceinline__ lhk_u128 lhk_warp_sum_wide(lhk_u64 x)
{
#if __CUDA_ARCH__ >= 800
  const unsigned all = 0xffffffffu;
  const lhk_u128 low = __reduce_add_sync(all, (unsigned)(x & 0x3fffff));
  const lhk_u128 middle = __reduce_add_sync(all, (unsigned)(x >> 22 & 0x3fffff));
  const lhk_u128 high = __reduce_add_sync(all, (unsigned)(x >> 44));
  return low + (middle << 22) + (high << 44);
#else
  return lhk_warp_sum128(x);
#endif
}

/* The same modulo 2^64. */
__device__ __forceinline__ lhk_u64 lhk_warp_sum(lhk_u64 x)
{
  return (lhk_u64)lhk_warp_sum_wide(x);
}

/* Inclusive scan over the first LANES lanes of the warp (the others get
 * partial sums), in 32 bits, one shuffle a round instead of two, when no
 * value reaches 2^27 (32 of them cannot add up to 2^32: any one frame). */
template <int LANES> __device__ __forceinline__ lhk_u64 lhk_warp_scan(lhk_u64 x)
{
  const unsigned all = 0xffffffffu;
  const uint32_t lane = threadIdx.x & 31;
  if (__all_sync(all, x < (1u << 27))) {
    uint32_t c = (uint32_t)x;
#pragma unroll
    for (int offset = 1; offset < LANES; offset *= 2) {
      const uint32_t y = __shfl_up_sync(all, c, offset);
      if (lane >= (uint32_t)offset)
        c += y;
    }
    return c;
  }
#pragma unroll
  for (int offset = 1; offset < LANES; offset *= 2) {
    const lhk_u64 y = __shfl_up_sync(all, x, offset);
    if (lane >= (uint32_t)offset)
      x += y;
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

/* Threshold k of a finish: k < n_ranks the ranks asked, k = n_ranks the
 * minimum and n_ranks + 1 the maximum, each into its field of the result. */
__device__ __forceinline__ void lhk_store_threshold(LhkResult *result, int k, int n_ranks,
                                                    uint32_t value)
{
  if (k < n_ranks)
    result->values[k] = value;
  else if (k == n_ranks)
    result->min = value;
  else
    result->max = value;
}

/* lhk_finish_frame for at most LHK_BLOCK_THREADS bins, the latency case (a
 * single 8-bit frame): one bin per thread and a single barrier.  Each thread
 * scans its warp's bins with shuffles and leaves its warp-local cumulative
 * count in shared memory.  After the barrier every result is read off the
 * cumulative histogram C by one warp each, in parallel and in a few steps:
 * each threshold t (a rank, min: t = 1, max: t = count) takes the smallest v
 * with C(v) >= t by two ballots, below_legal = C(black - 1) and above_legal =
 * count - C(white) one more warp, the sums another.  (Every thread testing
 * every threshold against its own bin kept the finishing block busy for
 * about 1 us after the barrier, a warp looking up each threshold by binary
 * search 0.6 us: an H200, kernels/NOTES.md.)  The sum of squares keeps its
 * 128 bits: a histogram may hold more than a frame's counts (the kernels
 * test gives it counts near 2^60). */
__device__ __forceinline__ void lhk_finish_one_tile(const LhkFinish &f, LhkFinishShared &sh)
{
  const unsigned all = 0xffffffffu;
  const uint32_t v = threadIdx.x, bins = f.bins, lane = v & 31, warp = v >> 5;
  const uint32_t copies = f.n_copies > 1 ? f.n_copies : 1;
  LhkResult *result = (LhkResult *)f.result;
  lhk_u64 h = 0;
  if (f.contributors && copies == LHK_FUSED_COPIES) {
    /* The fused path's copies, still being added to by the blocks' atomics,
     * which no block fenced: read (in L2, every copy at once) until each bin
     * has heard from every block.  This takes the place of a release by
     * every block and the acquire of the ticket (kernels/NOTES.md). */
    const lhk_u64 mask = (1ull << LHK_CONTRIBUTION_SHIFT) - 1;
    bool complete;
    do {
      lhk_u64 per_copy[LHK_FUSED_COPIES], blocks = 0;
      h = 0;
      if (v < bins) {
#pragma unroll
        for (int c = 0; c < LHK_FUSED_COPIES; c++)
          per_copy[c] = cuda::atomic_ref<lhk_u64, cuda::thread_scope_device>(
                            f.histogram[(size_t)c * bins + v])
                            .load(cuda::memory_order_relaxed);
#pragma unroll
        for (int c = 0; c < LHK_FUSED_COPIES; c++) {
          h += per_copy[c] & mask;
          blocks += per_copy[c] >> LHK_CONTRIBUTION_SHIFT;
        }
      }
      complete = v >= bins || blocks == f.contributors;
    } while (!__syncthreads_and(complete));
  } else if (v < bins) {
    /* Other blocks' atomics landed in L2: read past L1. */
    for (uint32_t c = 0; c < copies; c++)
      h += __ldcg(f.histogram + (size_t)c * bins + v);
  }
  if (v < bins) {
    for (uint32_t c = 0; c < copies; c++)
      f.histogram[(size_t)c * bins + v] = 0;
    lhk_result_histogram(f.result)[v] = h;
    if (v == 0)
      result->clipped_low = h;
    if (v == bins - 1)
      result->clipped_high = h;
  }
  LHK_PHASE_END(6);
  const lhk_u64 cdf = lhk_warp_scan<32>(h);
  const lhk_u64 sum = lhk_warp_sum(h * v);
  /* With v < 512 and h < 2^40, h v^2 < 2^58 and a warp's 32 of them fit 64
   * bits: half the work of the 128-bit sum, which only counts of 2^40 and
   * more need. */
  const lhk_u128 squares = __all_sync(all, h < (1ull << 40))
                               ? (lhk_u128)lhk_warp_sum(h * ((lhk_u64)v * v))
                               : lhk_warp_sum128((lhk_u128)h * ((lhk_u64)v * v));
  sh.one_tile.cdf[v] = cdf;
  if (lane == 31) {
    sh.one_tile.count[warp] = cdf;
    sh.one_tile.sum[warp] = sum;
    sh.one_tile.squares_lo[warp] = (lhk_u64)squares;
    sh.one_tile.squares_hi[warp] = (lhk_u64)(squares >> 64);
  }
  LHK_STAMP(8);
  __syncthreads();
  LHK_STAMP(9);

  /* Every warp: lane w < LHK_WARPS holds C at the last bin of warp w. */
  const lhk_u64 upto = lhk_warp_scan<LHK_WARPS>(lane < LHK_WARPS ? sh.one_tile.count[lane] : 0);
  const lhk_u64 count = __shfl_sync(all, upto, LHK_WARPS - 1);
  LHK_STAMP(10);

  /* Threshold k, one a warp: k < n_ranks the ranks (r = 0 gives 0, r > count
   * the top bin, as lhi_values_from_histogram), k = n_ranks min and
   * n_ranks + 1 max (0 when the histogram is empty).  For 1 <= t <= count,
   * the warps whose last C is below t are the first `w` (one ballot), and
   * in warp w the bins whose C reaches t are the last lanes (another). */
  const int n_ranks = f.n_ranks;
  for (int k = (int)warp; k < n_ranks + 2; k += LHK_WARPS) {
    const lhk_u64 t = k < n_ranks ? f.ranks[k] : k == n_ranks ? 1 : count;
    const uint32_t w = __popc(__ballot_sync(all, lane < LHK_WARPS - 1 && upto < t));
    const lhk_u64 before = __shfl_sync(all, upto, (w + 31) % 32);
    const lhk_u64 target = t - (w ? before : 0);
    const unsigned reach = __ballot_sync(all, sh.one_tile.cdf[w * 32 + lane] >= target);
    const uint32_t value = (k >= n_ranks && count == 0) ? 0
                           : t == 0                     ? 0
                           : t > count                  ? bins - 1
                                                        : w * 32 + __ffs(reach) - 1;
    if (lane == 0)
      lhk_store_threshold(result, k, n_ranks, value);
  }
  LHK_STAMP(11);

  if (warp == LHK_WARPS - 1) {
    /* C(black - 1) in lane 0 and C(white) in lane 1. */
    const uint32_t black = min(f.black, bins), white = min(f.white, bins - 1);
    const uint32_t x = lane == 0 ? (black > 0 ? black - 1 : 0) : white;
    const lhk_u64 before = __shfl_sync(all, upto, (x / 32 + 31) % 32);
    const lhk_u64 at = (x >= 32 ? before : 0) + sh.one_tile.cdf[x];
    if (lane == 0)
      result->below_legal = black == 0 ? 0 : at;
    if (lane == 1)
      result->above_legal = count - at;
  } else if (warp == LHK_WARPS - 2) {
    /* The warps' sums: the 128-bit sum of squares from the exact sum of the
     * low halves and the sum of the high halves. */
    const bool has = lane < LHK_WARPS;
    const lhk_u64 total = lhk_warp_sum(has ? sh.one_tile.sum[lane] : 0);
    const lhk_u128 low = lhk_warp_sum_wide(has ? sh.one_tile.squares_lo[lane] : 0);
    const lhk_u64 high = lhk_warp_sum(has ? sh.one_tile.squares_hi[lane] : 0);
    if (lane == 0) {
      const lhk_u128 q = low + ((lhk_u128)high << 64);
      result->count = count;
      result->sum = total;
      result->sum_squares_lo = (lhk_u64)q;
      result->sum_squares_hi = (lhk_u64)(q >> 64);
    }
  }
}

/* --- The fused path's finish of 1024 to LHK_FUSED_MAX_BINS bins: one tile ---
 * The bins are cut into segments of 32, one warp's worth: thread t loads
 * bins t, t + LHK_BLOCK_THREADS, ... (ITEMS of them, every load of the warp
 * one coalesced line, all issued at once), and each warp scans its segments
 * by shuffles, leaving in shared memory the count of each bin's segment up to
 * the bin, and each segment's total.  One barrier.  Then every warp scans the
 * segments' totals (lane l holding segments l G .. l G + G - 1) and reads
 * each threshold off them as lhk_finish_one_tile does off the warps': the
 * lane by one ballot, the segment among its G by shuffles, the bin by one
 * more ballot.  (lhk_finish_tiles, the separate launch's way for these
 * sizes, took a block scan and a dependent walk through L2 per rank: 4.7 us
 * for 1024 bins, 7.1 for 4096, launch included, on an H200.) */
struct LhkWideFinishShared {
  lhk_u64 cdf[LHK_FUSED_MAX_BINS];          /* bin v: the counts of bins 32 (v / 32) .. v */
  lhk_u64 segment[LHK_FUSED_MAX_BINS / 32]; /* the counts of bins 32 s .. 32 s + 31 */
  lhk_u64 sum[LHK_WARPS];
  lhk_u64 squares_lo[LHK_WARPS];
  lhk_u64 squares_hi[LHK_WARPS];
};

/* The running counts of the segments, as every lane of a warp holds them. */
template <int G> struct LhkSegmentScan {
  lhk_u64 total[G]; /* this lane's segments l G + j */
  lhk_u64 upto;     /* C at the last bin of this lane's last segment */
  lhk_u64 count;    /* C at the last bin */
};

template <int G>
__device__ __forceinline__ void lhk_segment_scan(const LhkWideFinishShared &sh,
                                                 LhkSegmentScan<G> &s)
{
  const uint32_t lane = threadIdx.x & 31;
  lhk_u64 mine = 0;
#pragma unroll
  for (int j = 0; j < G; j++) {
    s.total[j] = sh.segment[lane * G + j];
    mine += s.total[j];
  }
  s.upto = lhk_warp_scan<32>(mine);
  s.count = __shfl_sync(0xffffffffu, s.upto, 31);
}

/* C(x), the counts of bins 0 .. x, in every lane (x the same in all). */
template <int G>
__device__ __forceinline__ lhk_u64 lhk_segment_cdf_at(const LhkWideFinishShared &sh,
                                                      const LhkSegmentScan<G> &s, uint32_t x)
{
  const uint32_t segment = x / 32, l = segment / G, j = segment % G;
  const lhk_u64 before = __shfl_sync(0xffffffffu, s.upto, (l + 31) % 32);
  lhk_u64 c = (l ? before : 0) + sh.cdf[x];
#pragma unroll
  for (int k = 0; k < G; k++) {
    const lhk_u64 t = __shfl_sync(0xffffffffu, s.total[k], l);
    if ((uint32_t)k < j)
      c += t;
  }
  return c;
}

/* The smallest v with C(v) >= t, for 1 <= t <= count (t the same in all
 * lanes). */
template <int G>
__device__ __forceinline__ uint32_t lhk_segment_search(const LhkWideFinishShared &sh,
                                                       const LhkSegmentScan<G> &s, lhk_u64 t)
{
  const unsigned all = 0xffffffffu;
  const uint32_t lane = threadIdx.x & 31;
  /* The lane: the lanes whose running count is below t are the first l
   * (lane 31's is the count, which t does not pass). */
  const uint32_t l = __popc(__ballot_sync(all, lane < 31 && s.upto < t));
  const lhk_u64 before = __shfl_sync(all, s.upto, (l + 31) % 32);
  lhk_u64 target = t - (l ? before : 0);
  /* The segment among lane l's G: the first whose running count reaches
   * the target (the last one's does). */
  uint32_t j = G - 1;
  bool found = false;
#pragma unroll
  for (int k = 0; k < G; k++) {
    const lhk_u64 total = __shfl_sync(all, s.total[k], l);
    if (!found && total >= target) {
      j = (uint32_t)k;
      found = true;
    } else if (!found) {
      target -= total;
    }
  }
  /* The bin: the first of the segment whose count from the segment's start
   * reaches what is left of the target. */
  const uint32_t segment = l * G + j;
  const unsigned reach = __ballot_sync(all, sh.cdf[segment * 32 + lane] >= target);
  return segment * 32 + __ffs(reach) - 1;
}

/* ITEMS = bins / LHK_BLOCK_THREADS (2, 4 or 8: 1024 to 4096 bins); the
 * histogram's n_copies copies are summed, copied into the result block and
 * cleared; every count is read past L1 (other blocks' atomics landed in L2;
 * the caller made them visible first). */
template <int ITEMS>
__device__ __forceinline__ void lhk_finish_wide_tile(const LhkFinish &f, LhkWideFinishShared &sh)
{
  enum { G = ITEMS / 2 }; /* segments a lane, once the segments are scanned */
  static_assert(ITEMS * LHK_BLOCK_THREADS <= LHK_FUSED_MAX_BINS && ITEMS % 2 == 0,
                "1024 to LHK_FUSED_MAX_BINS bins");
  const uint32_t tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const uint32_t bins = ITEMS * LHK_BLOCK_THREADS;
  const uint32_t copies = f.n_copies > 1 ? f.n_copies : 1;
  LhkResult *result = (LhkResult *)f.result;
  lhk_u64 *out = lhk_result_histogram(f.result);

  lhk_u64 h[ITEMS];
#pragma unroll
  for (int i = 0; i < ITEMS; i++)
    h[i] = 0;
  for (uint32_t c = 0; c < copies; c++) {
    const lhk_u64 *copy = f.histogram + (size_t)c * bins;
#pragma unroll
    for (int i = 0; i < ITEMS; i++)
      h[i] += __ldcg(copy + i * LHK_BLOCK_THREADS + tid);
  }
  for (uint32_t c = 0; c < copies; c++) {
    lhk_u64 *copy = f.histogram + (size_t)c * bins;
#pragma unroll
    for (int i = 0; i < ITEMS; i++)
      copy[i * LHK_BLOCK_THREADS + tid] = 0;
  }
  lhk_u64 sum = 0;
  lhk_u128 squares = 0;
#pragma unroll
  for (int i = 0; i < ITEMS; i++) {
    const uint32_t v = i * LHK_BLOCK_THREADS + tid;
    out[v] = h[i];
    sum += h[i] * v;
    squares += (lhk_u128)h[i] * ((lhk_u64)v * v);
    /* Segment i * LHK_WARPS + warp: bins v - lane .. v - lane + 31. */
    const lhk_u64 within = lhk_warp_scan<32>(h[i]);
    sh.cdf[v] = within;
    if (lane == 31)
      sh.segment[i * LHK_WARPS + warp] = within;
  }
  if (tid == 0)
    result->clipped_low = h[0];
  if (tid == LHK_BLOCK_THREADS - 1)
    result->clipped_high = h[ITEMS - 1];
  /* The warp's sums, the squares' 128 bits from the exact sum of the low
   * halves and the sum of the high halves. */
  const lhk_u64 warp_sum = lhk_warp_sum(sum);
  const lhk_u128 warp_squares = lhk_warp_sum_wide((lhk_u64)squares) +
                                ((lhk_u128)lhk_warp_sum((lhk_u64)(squares >> 64)) << 64);
  if (lane == 0) {
    sh.sum[warp] = warp_sum;
    sh.squares_lo[warp] = (lhk_u64)warp_squares;
    sh.squares_hi[warp] = (lhk_u64)(warp_squares >> 64);
  }
  __syncthreads();

  LhkSegmentScan<G> scan;
  lhk_segment_scan<G>(sh, scan);
  const lhk_u64 count = scan.count;

  /* Threshold k, one a warp, as in lhk_finish_one_tile: k < n_ranks the
   * ranks (r = 0 gives 0, r > count the top bin), k = n_ranks min and
   * n_ranks + 1 max (0 when the histogram is empty). */
  const int n_ranks = f.n_ranks;
  for (int k = (int)warp; k < n_ranks + 2; k += LHK_WARPS) {
    const lhk_u64 t = k < n_ranks ? f.ranks[k] : k == n_ranks ? 1 : count;
    uint32_t value;
    if ((k >= n_ranks && count == 0) || t == 0)
      value = 0;
    else if (t > count)
      value = bins - 1;
    else
      value = lhk_segment_search<G>(sh, scan, t);
    if (lane == 0)
      lhk_store_threshold(result, k, n_ranks, value);
  }

  if (warp == LHK_WARPS - 1) {
    /* below_legal = C(black - 1), above_legal = count - C(white). */
    const uint32_t black = min(f.black, bins), white = min(f.white, bins - 1);
    const lhk_u64 below = black == 0 ? 0 : lhk_segment_cdf_at<G>(sh, scan, black - 1);
    const lhk_u64 at_white = lhk_segment_cdf_at<G>(sh, scan, white);
    if (lane == 0) {
      result->below_legal = below;
      result->above_legal = count - at_white;
    }
  } else if (warp == LHK_WARPS - 2) {
    const bool has = lane < LHK_WARPS;
    const lhk_u64 total = lhk_warp_sum(has ? sh.sum[lane] : 0);
    const lhk_u128 low = lhk_warp_sum_wide(has ? sh.squares_lo[lane] : 0);
    const lhk_u64 high = lhk_warp_sum(has ? sh.squares_hi[lane] : 0);
    if (lane == 0) {
      const lhk_u128 q = low + ((lhk_u128)high << 64);
      result->count = count;
      result->sum = total;
      result->sum_squares_lo = (lhk_u64)q;
      result->sum_squares_hi = (lhk_u64)(q >> 64);
    }
  }
}

/* Finishes one frame of more than LHK_BLOCK_THREADS bins with the whole
 * block, ITEMS consecutive bins a thread per tile (LHK_BLOCK_THREADS x ITEMS
 * bins): each thread loads its bins at once (vector loads past L1: other
 * blocks' atomics landed in L2), copies them into the result block, clears
 * them behind (so that the next frame may add to the histogram), adds them
 * to its moments and sums them; one block scan of the threads' sums gives
 * the CDF at each thread's last bin.  The thread of rank k then finds the
 * thread whose bins the CDF crosses it in (binary search over those sums)
 * and walks that thread's ITEMS bins.  (One bin a thread took 128 tiles,
 * each a dependent load and three barriers, for 65536 bins: 85 us on an
 * H200; tests/bench/lumahist-bench --only wide.) */
template <int ITEMS>
__device__ __forceinline__ void lhk_finish_tiles(const LhkFinish &f, LhkFinishShared &sh)
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
  for (uint32_t base = 0; base < bins; base += LHK_BLOCK_THREADS * ITEMS) {
    const uint32_t first = base + (uint32_t)tid * ITEMS;
    lhk_u64 h[ITEMS];
    /* Whole 16-byte pairs where the thread's bins are all in (always, for a
     * power of two of bins and aligned buffers); one by one otherwise. */
    const bool pairs = first + ITEMS <= bins && ((uintptr_t)histogram % 16 | (uintptr_t)out % 16) == 0;
    if (pairs) {
      const ulonglong2 *in = (const ulonglong2 *)(histogram + first);
#pragma unroll
      for (int i = 0; i < ITEMS / 2; i++) {
        const ulonglong2 pair = __ldcg(in + i);
        h[2 * i] = pair.x;
        h[2 * i + 1] = pair.y;
      }
#pragma unroll
      for (int i = 0; i < ITEMS / 2; i++) {
        ((ulonglong2 *)(histogram + first))[i] = make_ulonglong2(0, 0);
        ((ulonglong2 *)(out + first))[i] = make_ulonglong2(h[2 * i], h[2 * i + 1]);
      }
    } else {
#pragma unroll
      for (int i = 0; i < ITEMS; i++) {
        h[i] = 0;
        if (first + i < bins) {
          h[i] = __ldcg(histogram + first + i);
          histogram[first + i] = 0;
          out[first + i] = h[i];
        }
      }
    }
    lhk_u64 total = 0;
#pragma unroll
    for (int i = 0; i < ITEMS; i++) {
      lhk_moments_add(m, first + i, h[i], f.black, f.white);
      total += h[i];
    }
    lhk_u64 tile_total;
    sh.scan.cdf[tid] = lhk_block_inclusive_scan(total, sh.scan.warp_totals, &tile_total);
    __syncthreads();
    if (rank > carry && rank - carry <= tile_total) {
      const lhk_u64 target = rank - carry;
      const int owner = lhk_tile_search(sh.scan.cdf, target);
      lhk_u64 c = owner > 0 ? sh.scan.cdf[owner - 1] : 0;
      const lhk_u64 *bin = out + base + (uint32_t)owner * ITEMS;
      int i = 0;
      /* The owner's bins were written by another thread before the barrier. */
      while ((c += __ldcg(bin + i)) < target)
        i++;
      value = base + (uint32_t)owner * ITEMS + (uint32_t)i;
    }
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

/* --- Histograms of more than LHK_FINISH_CHUNK_BINS bins: many blocks ---
 * One block moves 1.5 MiB for a 65536-bin histogram (read, copied out,
 * cleared) at about 20 GB/s: 85 us on an H200 however the bins were cut into
 * tiles.  So block c of lhk_finish_chunks moves chunk c alone and leaves its
 * moments behind the result's header; lhk_finish_gather then adds them up
 * and finds each rank: the chunk from the chunks' counts, the run of 128 bins
 * in it from a warp's 32 lane sums, the bin from 32 more. */

/* A chunk's moments in the result block (64 bytes, LHK_RESULT_PARTIALS_OFFSET). */
struct LhkChunkMoments {
  lhk_u64 count, sum, below, above, squares_lo, squares_hi;
  uint32_t min, max;
  uint32_t unused[2];
};
static_assert(sizeof(LhkChunkMoments) == 64, "a chunk's moments take 64 bytes");

__device__ __forceinline__ LhkChunkMoments *lhk_chunk_moments(void *result)
{
  return (LhkChunkMoments *)((char *)result + LHK_RESULT_PARTIALS_OFFSET);
}

/* Block blockIdx.x of one frame: its chunk of LHK_FINISH_CHUNK_BINS bins, 8
 * consecutive bins a thread. */
__device__ __forceinline__ void lhk_finish_chunk(const LhkFinish &f, LhkMomentsShared &sh)
{
  enum { ITEMS = LHK_FINISH_CHUNK_BINS / LHK_BLOCK_THREADS };
  const uint32_t first = blockIdx.x * LHK_FINISH_CHUNK_BINS + threadIdx.x * ITEMS;
  lhk_u64 *histogram = f.histogram + first;
  lhk_u64 *out = lhk_result_histogram(f.result) + first;
  lhk_u64 h[ITEMS];
  if (((uintptr_t)histogram | (uintptr_t)out) % 16 == 0) {
#pragma unroll
    for (int i = 0; i < ITEMS / 2; i++) {
      const ulonglong2 pair = __ldcg((const ulonglong2 *)histogram + i);
      h[2 * i] = pair.x;
      h[2 * i + 1] = pair.y;
    }
#pragma unroll
    for (int i = 0; i < ITEMS / 2; i++) {
      ((ulonglong2 *)histogram)[i] = make_ulonglong2(0, 0);
      ((ulonglong2 *)out)[i] = make_ulonglong2(h[2 * i], h[2 * i + 1]);
    }
  } else {
#pragma unroll
    for (int i = 0; i < ITEMS; i++) {
      h[i] = __ldcg(histogram + i);
      histogram[i] = 0;
      out[i] = h[i];
    }
  }
  LhkMoments m;
  lhk_moments_init(m);
#pragma unroll
  for (int i = 0; i < ITEMS; i++)
    lhk_moments_add(m, first + i, h[i], f.black, f.white);
  lhk_block_reduce_moments(m, sh);
  if (threadIdx.x == 0) {
    LhkChunkMoments c;
    c.count = m.count;
    c.sum = m.sum;
    c.below = m.below;
    c.above = m.above;
    c.squares_lo = (lhk_u64)m.sum_squares;
    c.squares_hi = (lhk_u64)(m.sum_squares >> 64);
    c.min = m.min;
    c.max = m.max;
    lhk_chunk_moments(f.result)[blockIdx.x] = c;
  }
}

/* One block a frame, after lhk_finish_chunk: lane c of warp 0 holds chunk
 * c's moments, merged by shuffles; each warp takes ranks k = warp, warp +
 * LHK_WARPS, ... (and k = n_ranks, n_ranks + 1 the min and max are the
 * merged moments'). */
__device__ __forceinline__ void lhk_finish_gather(const LhkFinish &f)
{
  const unsigned all = 0xffffffffu;
  const uint32_t lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const uint32_t chunks = f.bins / LHK_FINISH_CHUNK_BINS;
  LhkResult *result = (LhkResult *)f.result;
  const lhk_u64 *out = lhk_result_histogram(f.result);
  const LhkChunkMoments *partial = lhk_chunk_moments(f.result);

  /* Every warp: the chunks' counts and their running sum. */
  const lhk_u64 chunk_count = lane < chunks ? __ldcg(&partial[lane].count) : 0;
  const lhk_u64 upto = lhk_warp_scan<32>(chunk_count);
  const lhk_u64 count = __shfl_sync(all, upto, 31);

  if (warp == 0) {
    LhkMoments m;
    lhk_moments_init(m);
    if (lane < chunks) {
      LhkChunkMoments c = partial[lane];
      m.count = c.count;
      m.sum = c.sum;
      m.below = c.below;
      m.above = c.above;
      m.sum_squares = (lhk_u128)c.squares_hi << 64 | c.squares_lo;
      m.min = c.min;
      m.max = c.max;
    }
    for (int offset = 16; offset > 0; offset /= 2)
      lhk_moments_shuffle_down(m, offset);
    if (lane == 0)
      lhk_moments_write(m, __ldcg(out), __ldcg(out + f.bins - 1), result);
  }

  for (int k = (int)warp; k < f.n_ranks; k += LHK_WARPS) {
    const lhk_u64 t = f.ranks[k];
    uint32_t value;
    if (t == 0) {
      value = 0;
    } else if (t > count) {
      value = f.bins - 1;
    } else {
      /* The chunk: the first whose running count reaches t. */
      const uint32_t c = __popc(__ballot_sync(all, lane < chunks && upto < t));
      lhk_u64 target = t - (c ? __shfl_sync(all, upto, (c + 31) % 32) : 0);
      /* The run of 128 bins: lane l sums bins 128 l .. 128 l + 127. */
      const ulonglong2 *run =
          (const ulonglong2 *)(out + (size_t)c * LHK_FINISH_CHUNK_BINS + lane * 128);
      lhk_u64 sum = 0;
#pragma unroll 16
      for (int i = 0; i < 64; i++) {
        const ulonglong2 pair = __ldcg(run + i);
        sum += pair.x + pair.y;
      }
      lhk_u64 within = lhk_warp_scan<32>(sum);
      const uint32_t r = __popc(__ballot_sync(all, within < target));
      target -= r ? __shfl_sync(all, within, (r + 31) % 32) : 0;
      /* The bin: 32 at a time through the run. */
      const lhk_u64 *bins = out + (size_t)c * LHK_FINISH_CHUNK_BINS + r * 128;
      value = 0;
      for (int step = 0; step < 4; step++) {
        within = lhk_warp_scan<32>(__ldcg(bins + step * 32 + lane));
        const unsigned reach = __ballot_sync(all, within >= target);
        if (reach) {
          value = c * LHK_FINISH_CHUNK_BINS + r * 128 + step * 32 + __ffs(reach) - 1;
          break;
        }
        target -= __shfl_sync(all, within, 31);
      }
    }
    if (lane == 0)
      result->values[k] = value;
  }
}

/* Finishes one frame with the whole block: the histogram goes into the
 * result block and is cleared behind, the moments are reduced, and each rank
 * r gets the smallest v with cdf(v) >= r, as lhi_values_from_histogram (r = 0
 * gives 0, r > count the top bin).  One tile takes the shorter way above. */
__device__ __forceinline__ void lhk_finish_frame(const LhkFinish &f, LhkFinishShared &sh)
{
  if (f.bins <= LHK_BLOCK_THREADS)
    lhk_finish_one_tile(f, sh);
  else if (f.bins <= 8 * LHK_BLOCK_THREADS)
    lhk_finish_tiles<4>(f, sh);
  else
    lhk_finish_tiles<16>(f, sh);
}

#endif /* LHK_SCAN_CUH */
