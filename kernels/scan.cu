/* scan.cu: kernels of the cumulative histogram: the per-frame finishing
 * (histogram out, moments, percentile values from the running CDF; one block
 * per frame) and the plain CDF for lookup tables. */
#include "scan.cuh"

/* Frames finished by one launch; their ranks make the parameters large
 * (LHK_MAX_IMAGES x ~560 bytes, within the 32 KiB that CUDA 12.1+ allows on
 * Volta and newer), but spare an upload before the launch. */
template <int N> struct LhkFinishParams {
  LhkFinish frames[N];
};

template <int N>
__global__ void __launch_bounds__(LHK_BLOCK_THREADS)
    lhk_finish_kernel(const __grid_constant__ LhkFinishParams<N> p)
{
  __shared__ LhkFinishShared shared;
  lhk_finish_frame(p.frames[blockIdx.x], shared);
}

__global__ void __launch_bounds__(LHK_BLOCK_THREADS)
    lhk_cdf_kernel(const lhk_u64 *histogram, uint32_t bins, lhk_u64 *cdf)
{
  __shared__ lhk_u64 warp_totals[LHK_WARPS];
  lhk_u64 carry = 0;
  for (uint32_t base = 0; base < bins; base += LHK_BLOCK_THREADS) {
    const uint32_t v = base + threadIdx.x;
    lhk_u64 tile_total,
        c = lhk_block_inclusive_scan(v < bins ? histogram[v] : 0, warp_totals, &tile_total);
    if (v < bins)
      cdf[v] = carry + c;
    carry += tile_total;
    __syncthreads();
  }
}

template <int N>
static cudaError_t launch_finish(const LhkFinish *frames, int n, cudaStream_t stream)
{
  LhkFinishParams<N> p;
  for (int i = 0; i < n; i++)
    p.frames[i] = frames[i];
  lhk_finish_kernel<N><<<n, LHK_BLOCK_THREADS, 0, stream>>>(p);
  LHK_CHECK_LAUNCH(stream);
  return cudaSuccess;
}

extern "C" cudaError_t lhk_finish(const LhkFinish *frames, int n_frames, cudaStream_t stream)
{
  if (n_frames < 0 || (n_frames > 0 && !frames))
    return cudaErrorInvalidValue;
  for (int i = 0; i < n_frames; i++)
    if (frames[i].bins == 0 || frames[i].n_ranks < 0 || frames[i].n_ranks > LHK_MAX_RANKS)
      return cudaErrorInvalidValue;
  /* A single frame, the latency case, gets the small parameter block. */
  if (n_frames == 1)
    return launch_finish<1>(frames, 1, stream);
  for (int first = 0; first < n_frames; first += LHK_MAX_IMAGES) {
    int n = n_frames - first < LHK_MAX_IMAGES ? n_frames - first : LHK_MAX_IMAGES;
    LHK_RETURN_IF_ERROR(launch_finish<LHK_MAX_IMAGES>(frames + first, n, stream));
  }
  return cudaSuccess;
}

extern "C" cudaError_t lhk_cdf(const unsigned long long *histogram, uint32_t bins,
                               unsigned long long *cdf, cudaStream_t stream)
{
  if (!histogram || !cdf || bins == 0)
    return cudaErrorInvalidValue;
  lhk_cdf_kernel<<<1, LHK_BLOCK_THREADS, 0, stream>>>(histogram, bins, cdf);
  LHK_CHECK_LAUNCH(stream);
  return cudaSuccess;
}
