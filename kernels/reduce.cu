/* reduce.cu: the single-block reduction of one histogram into its moments,
 * for a caller that holds a histogram in device memory (the per-frame path
 * folds the same reduction into its finishing, scan.cuh). */
#include "reduce.cuh"

/* Each thread first sums a coarsened, interleaved share of the bins (the
 * loads of a warp are adjacent, so coalesced), then the block reduces. */
__global__ void __launch_bounds__(LHK_BLOCK_THREADS)
    lhk_moments_kernel(const lhk_u64 *histogram, uint32_t bins, uint32_t black, uint32_t white,
                       LhkResult *result)
{
  __shared__ LhkMomentsShared shared;
  LhkMoments m;
  lhk_moments_init(m);
  for (uint32_t v = threadIdx.x; v < bins; v += LHK_BLOCK_THREADS)
    lhk_moments_add(m, v, histogram[v], black, white);
  lhk_block_reduce_moments(m, shared);
  if (threadIdx.x == 0)
    lhk_moments_write(m, histogram[0], histogram[bins - 1], result);
}

extern "C" cudaError_t lhk_moments(const unsigned long long *histogram, uint32_t bins,
                                   uint32_t black, uint32_t white, LhkResult *result,
                                   cudaStream_t stream)
{
  if (!histogram || !result || bins == 0)
    return cudaErrorInvalidValue;
  lhk_moments_kernel<<<1, LHK_BLOCK_THREADS, 0, stream>>>(histogram, bins, black, white, result);
  LHK_CHECK_LAUNCH(stream);
  return cudaSuccess;
}
