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

/* Histograms of more than LHK_FINISH_CHUNK_BINS bins (scan.cuh): a block
 * per chunk, then one to gather. */
__global__ void __launch_bounds__(LHK_BLOCK_THREADS)
    lhk_finish_chunks_kernel(const __grid_constant__ LhkFinish f)
{
  __shared__ LhkMomentsShared shared;
  lhk_finish_chunk(f, shared);
}

__global__ void __launch_bounds__(LHK_BLOCK_THREADS)
    lhk_finish_gather_kernel(const __grid_constant__ LhkFinish f)
{
  lhk_finish_gather(f);
}

static cudaError_t launch_finish_chunks(const LhkFinish &f, cudaStream_t stream)
{
  lhk_finish_chunks_kernel<<<f.bins / LHK_FINISH_CHUNK_BINS, LHK_BLOCK_THREADS, 0, stream>>>(f);
  LHK_CHECK_LAUNCH(stream);
  lhk_finish_gather_kernel<<<1, LHK_BLOCK_THREADS, 0, stream>>>(f);
  LHK_CHECK_LAUNCH(stream);
  return cudaSuccess;
}

/* Whether a frame's histogram is finished in chunks: more bins than one
 * chunk, a whole number of chunks, and one copy. */
static bool chunked(const LhkFinish &f)
{
  return f.bins > LHK_FINISH_CHUNK_BINS && f.bins % LHK_FINISH_CHUNK_BINS == 0 &&
         f.bins <= LHK_MAX_BINS && f.n_copies <= 1;
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
  /* Wide histograms by chunks, one frame at a time; the others together. */
  LhkFinish rest[LHK_MAX_IMAGES];
  int n_rest = 0;
  for (int i = 0; i < n_frames; i++) {
    if (chunked(frames[i])) {
      LHK_RETURN_IF_ERROR(launch_finish_chunks(frames[i], stream));
      continue;
    }
    rest[n_rest++] = frames[i];
    if (n_rest == LHK_MAX_IMAGES || (i == n_frames - 1 && n_rest > 0)) {
      /* A single frame, the latency case, gets the small parameter block. */
      LHK_RETURN_IF_ERROR(n_rest == 1 ? launch_finish<1>(rest, 1, stream)
                                      : launch_finish<LHK_MAX_IMAGES>(rest, n_rest, stream));
      n_rest = 0;
    }
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
