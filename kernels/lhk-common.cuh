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

typedef unsigned long long lhk_u64;
typedef unsigned __int128 lhk_u128;

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

/* The histogram of a result block, behind its header. */
__device__ __forceinline__ lhk_u64 *lhk_result_histogram(void *result)
{
  return (lhk_u64 *)((char *)result + LHK_RESULT_HEADER_BYTES);
}

#endif /* LHK_COMMON_CUH */
