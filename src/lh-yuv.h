/* lh-yuv.h: where the luma and chroma samples of packed YUV layouts lie
 * (v210's 10-bit fields, Y inside a 16-bit word), shared by the CPU code and
 * the CUDA kernels so that both read and write the same bits.  Plain C;
 * kernels/ includes it. */
#ifndef LH_YUV_H
#define LH_YUV_H

#include <stdint.h>

#include "lh-luma.h"

/* v210: a group of 6 pixels is four 32-bit little-endian words of three
 * 10-bit fields each (bits 0, 10, 20):
 *   word 0: Cb0 Y0 Cr0   word 1: Y1 Cb1 Y2   word 2: Cr1 Y3 Cb2   word 3: Y4 Cr2 Y5
 * Field f of a group is word f / 3, bits 10 * (f % 3); the tables give the
 * field of Y k (k < 6) and of Cb, Cr of pair k (k < 3, pixels 2k and 2k + 1). */
#define LHI_V210_GROUP_PIXELS 6
#define LHI_V210_GROUP_BYTES 16

LHI_HOST_DEVICE int lhi_v210_y_field(int k)
{
  /* 1, 3, 5, 7, 9, 11 */
  return 2 * k + 1;
}
LHI_HOST_DEVICE int lhi_v210_cb_field(int k)
{
  /* 0, 4, 8 */
  return 4 * k;
}
LHI_HOST_DEVICE int lhi_v210_cr_field(int k)
{
  /* 2, 6, 10 */
  return 4 * k + 2;
}

LHI_HOST_DEVICE uint32_t lhi_v210_get(const uint32_t *words, int field)
{
  return (words[field / 3] >> (10 * (field % 3))) & 0x3ffu;
}

LHI_HOST_DEVICE void lhi_v210_set(uint32_t *words, int field, uint32_t value)
{
  const int shift = 10 * (field % 3);
  words[field / 3] = (words[field / 3] & ~(0x3ffu << shift)) | (value & 0x3ffu) << shift;
}

/* Y in a 16-bit sample word (after any byte swap): the bits of mask, shifted
 * down by shift, clamped to max_value (GRAY16 with fewer significant bits);
 * written back as the new value shifted up, the bits outside mask kept
 * (packed 4:2:2 read as 16-bit words: YUY2's Y is the low byte, UYVY's the
 * high one, the other byte chroma). */
LHI_HOST_DEVICE uint32_t lhi_word_luma(uint32_t word, uint32_t mask, uint32_t shift,
                                       uint32_t max_value)
{
  return lhi_clamp_sample((word & mask) >> shift, max_value);
}

LHI_HOST_DEVICE uint32_t lhi_word_with_luma(uint32_t word, uint32_t mask, uint32_t shift,
                                            uint32_t luma)
{
  return (word & ~mask & 0xffffu) | ((luma << shift) & 0xffffu);
}

LHI_HOST_DEVICE uint32_t lhi_swap16(uint32_t v)
{
  return ((v & 0xffu) << 8) | ((v >> 8) & 0xffu);
}

#endif /* LH_YUV_H */
