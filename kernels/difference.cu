/* difference.cu: the frame difference of video on the GPU: one pass reads
 * each luma value of the frame and the previous frame's value from its copy,
 * adds |a - b| to a 64-bit sum, and writes the frame's value into the copy. */
#include "lh-yuv.h"
#include "lhk-common.cuh"

/* --- Tunables --------------------------------------------------------------
 * Threads of a block: 8 blocks fill an SM's 2048 threads. */
#define LHK_DIFFERENCE_THREADS 256
/* The grid is sized to the blocks that are resident at once (this many per
 * SM), not to the frame: each thread strides over the pixels, so the sums of
 * a 4K frame (8.3 M pixels) meet in about a thousand atomics, not 32 000. */
#define LHK_DIFFERENCE_BLOCKS_PER_SM 8

/* The key of pixel x of a row, as the histogram kernels count it
 * (lhi_word_luma's shift and clamp, lh-yuv.h's v210 fields). */
template <int KEYS>
__device__ __forceinline__ uint32_t lhk_difference_key(const uint8_t *row, uint32_t x,
                                                       const LhkDifference &d)
{
  if constexpr (KEYS == LHK_KEYS_Y8) {
    return row[(size_t)x * d.step + d.offset];
  } else if constexpr (KEYS == LHK_KEYS_Y16) {
    uint32_t word = ((const uint16_t *)row)[x];
    if (d.swap)
      word = lhi_swap16(word);
    return lhi_word_luma(word, 0xffffu, d.shift, d.max_value);
  } else {
    const uint32_t *group =
        (const uint32_t *)(row + (size_t)(x / LHI_V210_GROUP_PIXELS) * LHI_V210_GROUP_BYTES);
    return lhi_v210_get(group, lhi_v210_y_field((int)(x % LHI_V210_GROUP_PIXELS)));
  }
}

/* Adjacent threads take adjacent pixels of a row (coalesced loads and
 * stores), blocks down the grid take rows in turn; each thread sums its
 * share in a register, the block reduces the sums (the active threads stay
 * contiguous as the stride halves, shuffles for the last warp) and one
 * thread adds the block's total to *sum. */
template <int KEYS, typename Key>
__global__ void __launch_bounds__(LHK_DIFFERENCE_THREADS)
    lhk_difference_kernel(LhkDifference d, lhk_u64 *sum)
{
  __shared__ lhk_u64 partial[LHK_DIFFERENCE_THREADS];
  const uint32_t tid = threadIdx.x;
  const uint32_t first_x = blockIdx.x * LHK_DIFFERENCE_THREADS + tid;
  const uint32_t step_x = gridDim.x * LHK_DIFFERENCE_THREADS;
  lhk_u64 acc = 0;
  for (uint32_t y = blockIdx.y; y < d.height; y += gridDim.y) {
    const uint8_t *row = (const uint8_t *)d.data + (size_t)y * d.stride;
    Key *previous = (Key *)d.previous + (size_t)y * d.width;
    for (uint32_t x = first_x; x < d.width; x += step_x) {
      const uint32_t key = lhk_difference_key<KEYS>(row, x, d);
      if (d.compare) {
        const uint32_t before = previous[x];
        acc += key > before ? key - before : before - key;
      }
      previous[x] = (Key)key;
    }
  }

  partial[tid] = acc;
  __syncthreads();
  for (uint32_t stride = LHK_DIFFERENCE_THREADS / 2; stride >= 32; stride /= 2) {
    if (tid < stride) {
      acc += partial[tid + stride];
      if (stride > 32)
        partial[tid] = acc;
    }
    __syncthreads();
  }
  if (tid < 32) {
    for (int offset = 16; offset > 0; offset /= 2)
      acc += __shfl_down_sync(0xffffffffu, acc, offset);
    if (tid == 0 && acc != 0)
      atomicAdd(sum, acc);
  }
}

template <int KEYS, typename Key>
static cudaError_t launch(const LhkDifference &d, int sm_count, lhk_u64 *sum, cudaStream_t stream)
{
  const uint32_t resident = (uint32_t)(sm_count > 0 ? sm_count : 1) * LHK_DIFFERENCE_BLOCKS_PER_SM;
  uint32_t blocks_x = (d.width + LHK_DIFFERENCE_THREADS - 1) / LHK_DIFFERENCE_THREADS;
  blocks_x = blocks_x < resident ? blocks_x : resident;
  uint32_t blocks_y = resident / blocks_x;
  blocks_y = blocks_y < d.height ? blocks_y : d.height;
  blocks_y = blocks_y < 65535 ? blocks_y : 65535;
  blocks_y = blocks_y > 0 ? blocks_y : 1;
  lhk_difference_kernel<KEYS, Key>
      <<<dim3(blocks_x, blocks_y), LHK_DIFFERENCE_THREADS, 0, stream>>>(d, sum);
  LHK_CHECK_LAUNCH(stream);
  return cudaSuccess;
}

extern "C" cudaError_t lhk_difference(const LhkDifference *difference, int sm_count,
                                      unsigned long long *sum, cudaStream_t stream)
{
  if (!difference || !sum || !difference->previous)
    return cudaErrorInvalidValue;
  LHK_RETURN_IF_ERROR(cudaMemsetAsync(sum, 0, sizeof *sum, stream));
  const LhkDifference &d = *difference;
  if (d.width == 0 || d.height == 0)
    return cudaSuccess;
  switch (d.keys) {
  case LHK_KEYS_Y8:
    return launch<LHK_KEYS_Y8, uint8_t>(d, sm_count, sum, stream);
  case LHK_KEYS_Y16:
    return launch<LHK_KEYS_Y16, uint16_t>(d, sm_count, sum, stream);
  case LHK_KEYS_V210:
    return launch<LHK_KEYS_V210, uint16_t>(d, sm_count, sum, stream);
  default:
    return cudaErrorInvalidValue;
  }
}
