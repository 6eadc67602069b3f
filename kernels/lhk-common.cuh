/* lhk-common.cuh: what every kernel file of kernels/ shares: the check that
 * follows each launch, and the block size of the per-frame kernels. */
#ifndef LHK_COMMON_CUH
#define LHK_COMMON_CUH

#include <cuda_runtime.h>
#include <stdint.h>

#include "lh-kernels.h"

/* Threads of every block in kernels/: a histogram block (the fused path
 * finishes a frame in the block that commits last, so the two agree). */
#define LHK_BLOCK_THREADS 512
#define LHK_WARPS (LHK_BLOCK_THREADS / 32)

/* Copies of the histogram the fused path's blocks commit to (block b to copy
 * b % LHK_FUSED_COPIES), summed by the finishing block (scan.cuh).  Fewer
 * copies queue more same-address atomics in L2 (one 4K frame is counted by
 * some 400 blocks); more copies cost the finishing block more loads.  On a 4K
 * frame (H200, kernels/NOTES.md) 4 measured best: 1 took up to 3 us more on
 * 256-bin inputs, 16 took 0.5 us more on every input.  -DLHK_FUSED_COPIES=n
 * builds another count, for measuring. */
#ifndef LHK_FUSED_COPIES
#define LHK_FUSED_COPIES 4
#endif

typedef unsigned long long lhk_u64;
typedef unsigned __int128 lhk_u128;

/* Phase times of the fused path, for finding where one frame's time goes:
 * built with -DLHK_PHASE_TIMES (meson setup -Dcuda_args=-DLHK_PHASE_TIMES),
 * thread 0 of each of the first 1024 blocks writes the global timer (ns) at
 * the end of phase k, which lumahist-bench --only frame prints
 * (kernels/NOTES.md).  LHK_PHASE_END(k) adds the barrier where the code has
 * none.  Otherwise both are nothing. */
#ifdef LHK_PHASE_TIMES
#define LHK_PHASES 12
static __device__ unsigned long long lhk_phase_times[1024][LHK_PHASES];
#define LHK_STAMP(k)                                                                               \
  do {                                                                                             \
    if (threadIdx.x == 0 && blockIdx.x < 1024) {                                                   \
      unsigned long long t_;                                                                       \
      asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t_));                                       \
      lhk_phase_times[blockIdx.x][k] = t_;                                                         \
    }                                                                                              \
  } while (0)
#define LHK_PHASE_END(k)                                                                           \
  do {                                                                                             \
    __syncthreads();                                                                               \
    LHK_STAMP(k);                                                                                  \
  } while (0)
#else
#define LHK_STAMP(k)                                                                               \
  do {                                                                                             \
  } while (0)
#define LHK_PHASE_END(k) LHK_STAMP(k)
#endif

#ifdef LH_DEBUG_SYNC
#define LHK_DEBUG_SYNC_STREAM(stream)                                                              \
  do {                                                                                             \
    cudaError_t sync_error_ = cudaStreamSynchronize(stream);                                       \
    if (sync_error_ != cudaSuccess)                                                                \
      return sync_error_;                                                                          \
  } while (0)
#else
#define LHK_DEBUG_SYNC_STREAM(stream)                                                              \
  do {                                                                                             \
  } while (0)
#endif

/* After each launch: its configuration error now, its fault at once in a
 * debug build (LH_DEBUG_SYNC). */
#define LHK_CHECK_LAUNCH(stream)                                                                   \
  do {                                                                                             \
    cudaError_t launch_error_ = cudaGetLastError();                                                \
    if (launch_error_ != cudaSuccess)                                                              \
      return launch_error_;                                                                        \
    LHK_DEBUG_SYNC_STREAM(stream);                                                                 \
  } while (0)

#define LHK_RETURN_IF_ERROR(call)                                                                  \
  do {                                                                                             \
    cudaError_t error_ = (call);                                                                   \
    if (error_ != cudaSuccess)                                                                     \
      return error_;                                                                               \
  } while (0)

/* The word of a packed 10-bit R'G'B' pixel (LHK_PIXEL_RGB10) in its own byte
 * order, from the 32-bit value read little-endian. */
__device__ __forceinline__ uint32_t lhk_word_order(uint32_t w, uint32_t swap_bytes)
{
  return swap_bytes ? __byte_perm(w, 0, 0x0123) : w;
}

/* The same read byte by byte from any address. */
__device__ __forceinline__ uint32_t lhk_load_word(const uint8_t *p, uint32_t swap_bytes)
{
  const uint32_t w = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
                     (uint32_t)p[3] << 24;
  return lhk_word_order(w, swap_bytes);
}

/* The histogram of a result block, behind its header. */
__device__ __forceinline__ lhk_u64 *lhk_result_histogram(void *result)
{
  return (lhk_u64 *)((char *)result + LHK_RESULT_HEADER_BYTES);
}

#endif /* LHK_COMMON_CUH */
