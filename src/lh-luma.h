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

/* Two rules, one per luma depth.
 *
 * 8-bit luma: 15 fractional bits, OpenCV's: with Kr and Kg rounded to them
 * and Kb what is left (BT.601: 9798, 19235, 3735, OpenCV's cvtColor
 * weights), BT.601 luma of 8-bit R'G'B' equals cv2.cvtColor(RGB2GRAY)'s on
 * every one of the 2^24 triplets (OpenCV 4.6 and later).  The weights sum to
 * 2^15 so that white stays white; each is below 2^15, so SIMD's signed
 * 16-bit products with 8-bit samples are exact.
 *
 * Luma of more than 8 bits (16-bit and 10-bit R'G'B'): correctly rounded.
 * 14-bit weights put some 14 % of the pixels of a 16-bit photograph one code
 * away from floor(Y + 1/2) (a few bits more still put many); here the
 * weights are the matrix's own decimal coefficients in units of 10^-4
 * (BT.601 2990, 5870, 1140), so that
 * S = Wr R' + Wg G' + Wb B' is exactly 10^4 Y and (S + 5000) / 10000, an
 * integer division, is exactly floor(Y + 1/2) for every input.  S stays
 * below 10^4 * 65536 < 2^30. */
#define LHI_LUMA_SHIFT 15
#define LHI_LUMA_ONE (1u << LHI_LUMA_SHIFT)
#define LHI_LUMA_HALF (1u << (LHI_LUMA_SHIFT - 1))
#define LHI_LUMA_EXACT_ONE 10000u

/* Kr and Kg rounded to 15 bits; Kb takes what is left, so the sum is exact. */
#define LHI_BT601_KR 9798u   /* 0.299  * 32768 = 9797.6 */
#define LHI_BT601_KG 19235u  /* 0.587  * 32768 = 19234.8 */
#define LHI_BT709_KR 6966u   /* 0.2126 * 32768 = 6966.5 */
#define LHI_BT709_KG 23436u  /* 0.7152 * 32768 = 23435.7 */
#define LHI_BT2020_KR 8608u  /* 0.2627 * 32768 = 8608.2 */
#define LHI_BT2020_KG 22217u /* 0.678  * 32768 = 22216.7 */

/* The exact coefficients in units of 10^-4; Kg = 1 - Kr - Kb is exact too. */
#define LHI_BT601_KR_EXACT 2990u
#define LHI_BT601_KB_EXACT 1140u
#define LHI_BT709_KR_EXACT 2126u
#define LHI_BT709_KB_EXACT 722u
#define LHI_BT2020_KR_EXACT 2627u
#define LHI_BT2020_KB_EXACT 593u

typedef struct {
  uint32_t kr;
  uint32_t kg;
  uint32_t kb;
  uint32_t one; /* their sum: LHI_LUMA_ONE (8-bit luma) or LHI_LUMA_EXACT_ONE */
} LhiLumaWeights;

/* 8-bit luma: Y' = Kr R' + Kg G' + Kb B' with 15-bit weights, rounded half up. */
LHI_HOST_DEVICE uint32_t lhi_luma(uint32_t r, uint32_t g, uint32_t b, LhiLumaWeights w)
{
  return (w.kr * r + w.kg * g + w.kb * b + LHI_LUMA_HALF) >> LHI_LUMA_SHIFT;
}

/* Luma of samples wider than 8 bits, by the rule its weights are of: the
 * exact one above 8 bits, the 15-bit one for 8 significant bits in 16-bit
 * samples (so that they give what the same 8-bit image gives).  The
 * division is by a constant, which compilers make a multiply and a shift. */
LHI_HOST_DEVICE uint32_t lhi_luma_wide(uint32_t r, uint32_t g, uint32_t b, LhiLumaWeights w)
{
  const uint32_t s = w.kr * r + w.kg * g + w.kb * b;
  return w.one == LHI_LUMA_EXACT_ONE ? (s + LHI_LUMA_EXACT_ONE / 2) / LHI_LUMA_EXACT_ONE
                                     : (s + LHI_LUMA_HALF) >> LHI_LUMA_SHIFT;
}

/* Field i (bits 10 i .. 10 i + 9) of a packed 10-bit R'G'B' word, the word
 * read in its own byte order (r210's big-endian words swapped first). */
LHI_HOST_DEVICE uint32_t lhi_packed10_field(uint32_t word, int i)
{
  return (word >> (10 * i)) & 0x3ffu;
}

/* A GRAY16 sample of bit_depth significant bits; out-of-range values (which a
 * well-formed frame does not have) count in the top bin rather than past it. */
LHI_HOST_DEVICE uint32_t lhi_clamp_sample(uint32_t v, uint32_t max_value)
{
  return v > max_value ? max_value : v;
}

#endif /* LH_LUMA_H */
