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
/* v210: a unit is one group of 6 pixels, its 16 bytes one "sample".  Its
 * pixels are reached by group and index (lhk_luma_at, LhkV210Group), not
 * by address (lhk_luma_of, lhk_write_pixel), and a row is cut into whole
 * groups (lhk_row_split): the rewriting kernels have a v210 variant each. */
template <> struct LhkRewrite<LHK_PIXEL_V210> {
  enum { SAMPLE_BYTES = 16, SAMPLES = 1, UNIT_BYTES = 16, PX = 6 };
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

/* The luma of pixel x of a row, any layout (v210's from its group). */
template <int PIXEL>
__device__ __forceinline__ uint32_t lhk_luma_at(const uint8_t *row, uint32_t x, const LhkPlane &p)
{
  typedef LhkRewrite<PIXEL> R;
  if constexpr (PIXEL == LHK_PIXEL_V210) {
    /* the word of Y (x mod 6), read byte by byte (any alignment) */
    const int field = lhi_v210_y_field((int)(x % LHI_V210_GROUP_PIXELS));
    const uint8_t *group = row + (size_t)(x / LHI_V210_GROUP_PIXELS) * LHI_V210_GROUP_BYTES;
    return (lhk_load_word(group + 4 * (field / 3), 0) >> (10 * (field % 3))) & 0x3ffu;
  } else {
    return lhk_luma_of<PIXEL>(row + (size_t)x * R::SAMPLES * R::SAMPLE_BYTES, p);
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
  if (PIXEL == LHK_PIXEL_V210) {
    /* every group a slot, the last one partial when width % 6 != 0; the
     * v210 kernels read unaligned groups byte by byte */
    split.units = split.slots = (p.width + LHI_V210_GROUP_PIXELS - 1) / LHI_V210_GROUP_PIXELS;
    return split;
  }
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

/* A v210 group in registers, read and written whole: its four words by one
 * 16-byte access where both planes' rows are 16-byte aligned, else byte by
 * byte.  Only Y fields are set: the Cb and Cr fields, the top two bits of
 * each word and the Y fields past a row's width stay as they were read. */
struct LhkV210Group {
  uint32_t w[4];

  __device__ __forceinline__ void load(const uint8_t *p, bool aligned)
  {
    if (aligned) {
      const uint4 v = *(const uint4 *)p; /* not __ldg: in may be out */
      w[0] = v.x;
      w[1] = v.y;
      w[2] = v.z;
      w[3] = v.w;
    } else {
#pragma unroll
      for (int i = 0; i < 4; i++)
        w[i] = lhk_load_word(p + 4 * i, 0);
    }
  }
  __device__ __forceinline__ void store(uint8_t *p, bool aligned) const
  {
    if (aligned) {
      *(uint4 *)p = make_uint4(w[0], w[1], w[2], w[3]);
    } else {
#pragma unroll
      for (int i = 0; i < 16; i++)
        p[i] = (uint8_t)(w[i / 4] >> (8 * (i % 4)));
    }
  }
  __device__ __forceinline__ uint32_t y(int k) const
  {
    return lhi_v210_get(w, lhi_v210_y_field(k));
  }
  __device__ __forceinline__ void set_y(int k, uint32_t value)
  {
    lhi_v210_set(w, lhi_v210_y_field(k), value);
  }
};

/* Whether every group of a plane's rows, in and out, is 16-byte aligned. */
__device__ __forceinline__ bool lhk_v210_aligned(const LhkPlane &p)
{
  const uintptr_t bits =
      (uintptr_t)p.in | (uintptr_t)p.out | (uintptr_t)p.in_stride | (uintptr_t)p.out_stride;
  return bits % 16 == 0;
}

/* The pixels of group g of a v210 row of width pixels: 6, or fewer in the
 * last group. */
__device__ __forceinline__ uint32_t lhk_v210_pixels(uint32_t width, uint32_t g)
{
  return min(width - g * LHI_V210_GROUP_PIXELS, (uint32_t)LHI_V210_GROUP_PIXELS);
}

#endif /* LHK_EQUALIZE_CUH */
