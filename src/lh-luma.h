/* lh-luma.h: the fixed-point R'G'B' -> Y' definition shared, bit for bit, by
 * the CPU backend (C) and the CUDA kernels (CUDA C).  Plain C, no includes
 * beyond <stdint.h>, so that kernels/ may include it. */
#ifndef LH_LUMA_H
#define LH_LUMA_H

#include <stdint.h>

#ifdef __CUDACC__
#define LHI_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define LHI_HOST_DEVICE static inline
#endif

/* 14 fractional bits, as OpenCV's cvtColor(RGB2GRAY) uses: with them BT.601
 * luma of 8-bit input equals OpenCV's gray conversion exactly.  The weights
 * sum to 2^14 so that white stays white; the products of 16-bit samples stay
 * below 2^31. */
#define LHI_LUMA_SHIFT 14
#define LHI_LUMA_ONE (1u << LHI_LUMA_SHIFT)
#define LHI_LUMA_HALF (1u << (LHI_LUMA_SHIFT - 1))

/* Kr and Kb rounded to 14 bits; Kg takes what is left so the sum is exact. */
#define LHI_BT601_KR 4899u  /* 0.299  * 16384 = 4898.8 */
#define LHI_BT601_KB 1868u  /* 0.114  * 16384 = 1867.8 */
#define LHI_BT709_KR 3483u  /* 0.2126 * 16384 = 3483.2 */
#define LHI_BT709_KB 1183u  /* 0.0722 * 16384 = 1182.9 */
#define LHI_BT2020_KR 4304u /* 0.2627 * 16384 = 4304.1 */
#define LHI_BT2020_KB 972u  /* 0.0593 * 16384 = 971.6 */

typedef struct {
  uint32_t kr;
  uint32_t kg;
  uint32_t kb;
} LhiLumaWeights;

/* Y' = Kr R' + Kg G' + Kb B', rounded half up. */
LHI_HOST_DEVICE uint32_t lhi_luma(uint32_t r, uint32_t g, uint32_t b, LhiLumaWeights w)
{
  return (w.kr * r + w.kg * g + w.kb * b + LHI_LUMA_HALF) >> LHI_LUMA_SHIFT;
}

/* A GRAY16 sample of bit_depth significant bits; out-of-range values (which a
 * well-formed frame does not have) count in the top bin rather than past it. */
LHI_HOST_DEVICE uint32_t lhi_clamp_sample(uint32_t v, uint32_t max_value)
{
  return v > max_value ? max_value : v;
}

#endif /* LH_LUMA_H */
