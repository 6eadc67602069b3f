/* equalize.cuh: what the rewriting kernels (equalize.cu, clahe.cu) share:
 * how each pixel layout is read as luma and written back with new luma
 * (lumahist.h's colour rule), and how a row is cut into 16-byte units. */
#ifndef LHK_EQUALIZE_CUH
#define LHK_EQUALIZE_CUH

#include "lh-equalize.h"
#include "lh-yuv.h"
#include "lhk-common.cuh"

/* Threads of a rewriting block: a row of 4K GRAY8 is 240 units of 16 pixels. */
#define LHK_REWRITE_THREADS 256
/* Blocks down the frame; each takes a band of consecutive rows. */
#define LHK_REWRITE_MAX_ROW_BLOCKS 1024

/* A unit is UNIT_BYTES (a multiple of 16) holding PX whole pixels; a pixel
 * is SAMPLES samples of SAMPLE_BYTES, of which the first three are colour. */
template <int PIXEL> struct LhkRewrite;
template <> struct LhkRewrite<LHK_PIXEL_Y8> {
  enum { SAMPLE_BYTES = 1, SAMPLES = 1, UNIT_BYTES = 16, PX = 16 };
};
template <> struct LhkRewrite<LHK_PIXEL_Y16> {
  enum { SAMPLE_BYTES = 2, SAMPLES = 1, UNIT_BYTES = 16, PX = 8 };
};
template <> struct LhkRewrite<LHK_PIXEL_RGB8> {
  enum { SAMPLE_BYTES = 1, SAMPLES = 3, UNIT_BYTES = 48, PX = 16 };
};
template <> struct LhkRewrite<LHK_PIXEL_RGBA8> {
  enum { SAMPLE_BYTES = 1, SAMPLES = 4, UNIT_BYTES = 16, PX = 4 };
};
template <> struct LhkRewrite<LHK_PIXEL_RGB16> {
  enum { SAMPLE_BYTES = 2, SAMPLES = 3, UNIT_BYTES = 48, PX = 8 };
};
template <> struct LhkRewrite<LHK_PIXEL_RGBA16> {
  enum { SAMPLE_BYTES = 2, SAMPLES = 4, UNIT_BYTES = 16, PX = 2 };
};
/* The packed 10-bit word as one "sample" of 4 bytes (lhk_luma_of and
 * lhk_write_pixel take it apart). */
template <> struct LhkRewrite<LHK_PIXEL_RGB10> {
  enum { SAMPLE_BYTES = 4, SAMPLES = 1, UNIT_BYTES = 16, PX = 4 };
};

/* Whether a layout's pixels are R'G'B' (a colour gain per pixel). */
template <int PIXEL> __host__ __device__ constexpr bool lhk_is_colour()
{
  return LhkRewrite<PIXEL>::SAMPLES > 1 || PIXEL == LHK_PIXEL_RGB10;
}

template <int PIXEL> __device__ __forceinline__ uint32_t lhk_sample(const uint8_t *px, int i)
{
  if constexpr (LhkRewrite<PIXEL>::SAMPLE_BYTES == 1)
    return px[i];
  else
    return (uint32_t)px[2 * i] | ((uint32_t)px[2 * i + 1] << 8);
}

template <int PIXEL> __device__ __forceinline__ void lhk_set_sample(uint8_t *px, int i, uint32_t v)
{
  if constexpr (LhkRewrite<PIXEL>::SAMPLE_BYTES == 1) {
    px[i] = (uint8_t)v;
  } else {
    px[2 * i] = (uint8_t)v;
    px[2 * i + 1] = (uint8_t)(v >> 8);
  }
}

/* The luma of a pixel, as the CPU (lhi_cpu_luma_row) computes it. */
template <int PIXEL>
__device__ __forceinline__ uint32_t lhk_luma_of(const uint8_t *px, const LhkPlane &p)
{
  typedef LhkRewrite<PIXEL> R;
  if constexpr (PIXEL == LHK_PIXEL_RGB10) {
    const uint32_t word = lhk_load_word(px, p.swap_bytes);
    const LhiLumaWeights w = {p.weights[0], p.weights[1], p.weights[2], p.luma_one};
    return lhi_luma_wide(lhi_packed10_field(word, 0), lhi_packed10_field(word, 1),
                         lhi_packed10_field(word, 2), w);
  } else if constexpr (R::SAMPLES == 1) {
    uint32_t v = lhk_sample<PIXEL>(px, 0);
    if (R::SAMPLE_BYTES == 1)
      return v;
    return lhi_word_luma(p.swap ? lhi_swap16(v) : v, ~p.keep & 0xffffu, p.shift, p.max_value);
  } else {
    const LhiLumaWeights w = {p.weights[0], p.weights[1], p.weights[2], p.luma_one};
    const uint32_t r = lhk_sample<PIXEL>(px, 0), g = lhk_sample<PIXEL>(px, 1),
                   b = lhk_sample<PIXEL>(px, 2);
    if constexpr (R::SAMPLE_BYTES == 1)
      return lhi_luma(r, g, b, w);
    else
      return min(lhi_luma_wide(r, g, b, w), p.max_value);
  }
}

/* Writes a pixel of luma y with its new luma y_new to dst (src: its samples
 * as read; the two may be one): the gain of (y, y_new) is passed in, for
 * callers that tabulate it.  A fourth sample is copied. */
template <int PIXEL>
__device__ __forceinline__ void lhk_write_pixel(const uint8_t *src, uint8_t *dst, uint32_t y,
                                                uint32_t y_new, uint32_t gain, const LhkPlane &p)
{
  typedef LhkRewrite<PIXEL> R;
  if constexpr (PIXEL == LHK_PIXEL_RGB10) {
    /* Each field scaled, the top two bits kept. */
    const uint32_t word = lhk_load_word(src, p.swap_bytes);
    uint32_t out = word & 0xc0000000u;
#pragma unroll
    for (int i = 0; i < 3; i++)
      out |= (y ? lhi_apply_gain(lhi_packed10_field(word, i), gain, 1023u) : y_new) << (10 * i);
    out = lhk_word_order(out, p.swap_bytes);
#pragma unroll
    for (int i = 0; i < 4; i++)
      dst[i] = (uint8_t)(out >> (8 * i));
  } else if constexpr (R::SAMPLES == 1) {
    if (R::SAMPLE_BYTES == 1) {
      lhk_set_sample<PIXEL>(dst, 0, y_new);
    } else {
      /* the bits that are not Y (packed chroma) as src has them */
      const uint32_t word =
          p.swap ? lhi_swap16(lhk_sample<PIXEL>(src, 0)) : lhk_sample<PIXEL>(src, 0);
      const uint32_t v = lhi_word_with_luma(word, ~p.keep & 0xffffu, p.shift, y_new);
      lhk_set_sample<PIXEL>(dst, 0, p.swap ? lhi_swap16(v) : v);
    }
  } else {
    uint32_t c[R::SAMPLES];
#pragma unroll
    for (int i = 0; i < R::SAMPLES; i++)
      c[i] = lhk_sample<PIXEL>(src, i);
#pragma unroll
    for (int i = 0; i < 3; i++)
      c[i] = y ? lhi_apply_gain(c[i], gain, p.max_value) : y_new;
#pragma unroll
    for (int i = 0; i < R::SAMPLES; i++)
      lhk_set_sample<PIXEL>(dst, i, c[i]);
  }
}

/* How the rows of a plane are cut: when both frames' rows start on 16-byte
 * boundaries, a row is width / PX vector units and then the pixels left
 * over; otherwise every pixel is read on its own.  Thread u of a row's
 * threads takes unit u (u < units) or leftover pixel u - units. */
struct LhkRowSplit {
  uint32_t units;
  uint32_t slots; /* units + leftover pixels */
};

template <int PIXEL> __host__ __device__ inline LhkRowSplit lhk_row_split(const LhkPlane &p)
{
  uintptr_t bits =
      (uintptr_t)p.in | (uintptr_t)p.out | (uintptr_t)p.in_stride | (uintptr_t)p.out_stride;
  LhkRowSplit split;
  split.units = bits % 16 == 0 ? p.width / LhkRewrite<PIXEL>::PX : 0;
  split.slots = split.units + (p.width - split.units * LhkRewrite<PIXEL>::PX);
  return split;
}

/* A grid of rewriting blocks: x across a row's slots, y down bands of rows. */
template <int PIXEL> inline void lhk_rewrite_grid(const LhkPlane &p, dim3 *grid)
{
  LhkRowSplit split = lhk_row_split<PIXEL>(p);
  grid->x = (split.slots + LHK_REWRITE_THREADS - 1) / LHK_REWRITE_THREADS;
  grid->y = p.height < LHK_REWRITE_MAX_ROW_BLOCKS ? p.height : LHK_REWRITE_MAX_ROW_BLOCKS;
  grid->z = 1;
}

/* The rows [first, end) of this block's band. */
__device__ __forceinline__ void lhk_block_rows(uint32_t height, uint32_t *first, uint32_t *end)
{
  uint32_t per_block = (height + gridDim.y - 1) / gridDim.y;
  *first = blockIdx.y * per_block;
  *end = min(height, *first + per_block);
}

/* A unit of a row in registers: 16-byte words, read and written whole. */
template <int PIXEL> struct LhkUnit {
  union {
    uint4 words[LhkRewrite<PIXEL>::UNIT_BYTES / 16];
    uint8_t bytes[LhkRewrite<PIXEL>::UNIT_BYTES];
  };
  __device__ __forceinline__ void load(const uint8_t *p)
  {
#pragma unroll
    for (int i = 0; i < LhkRewrite<PIXEL>::UNIT_BYTES / 16; i++)
      words[i] = ((const uint4 *)p)[i]; /* not __ldg: in may be out */
  }
  __device__ __forceinline__ void store(uint8_t *p) const
  {
#pragma unroll
    for (int i = 0; i < LhkRewrite<PIXEL>::UNIT_BYTES / 16; i++)
      ((uint4 *)p)[i] = words[i];
  }
};

#endif /* LHK_EQUALIZE_CUH */
