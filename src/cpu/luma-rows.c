/* luma-rows.c: the luma of a row of 8-bit R'G'B' pixels, the CPU backend's
 * hottest loop.  Built at -O3 (meson) and, on x86-64, in SSE4.2 and AVX2
 * clones picked when the library loads: the byte shuffles that take three-
 * byte pixels apart need SSSE3, which x86-64's baseline lacks, so the
 * default build alone stays scalar.  The same integers as lhi_luma. */
#include "lh-private.h"

/* GCC's: clang 14 leaves out the dispatcher of a clone that its own file
 * does not call. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define LHI_ROW_CLONES __attribute__((target_clones("default", "sse4.2", "avx2")))
#else
#define LHI_ROW_CLONES
#endif

LHI_ROW_CLONES void lhi_luma_row3_u8(const uint8_t *restrict px, int width, const uint32_t *w,
                                     uint8_t *restrict luma)
{
  const uint32_t w0 = w[0], w1 = w[1], w2 = w[2];
  for (int x = 0; x < width; x++)
    luma[x] =
        (uint8_t)((w0 * px[3 * x] + w1 * px[3 * x + 1] + w2 * px[3 * x + 2] + LHI_LUMA_HALF) >>
                  LHI_LUMA_SHIFT);
}

LHI_ROW_CLONES void lhi_luma_row4_u8(const uint8_t *restrict px, int width, const uint32_t *w,
                                     uint8_t *restrict luma)
{
  const uint32_t w0 = w[0], w1 = w[1], w2 = w[2], w3 = w[3];
  for (int x = 0; x < width; x++)
    luma[x] = (uint8_t)((w0 * px[4 * x] + w1 * px[4 * x + 1] + w2 * px[4 * x + 2] +
                         w3 * px[4 * x + 3] + LHI_LUMA_HALF) >>
                        LHI_LUMA_SHIFT);
}
