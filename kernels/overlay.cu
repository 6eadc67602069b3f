/* overlay.cu: the histogram overlay panel blended into a frame on the GPU,
 * one thread per pixel of the panel (and per chroma sample under it), with
 * the inks and the blends of lh-overlay.h that the CPU draws with. */
#include "lh-overlay.h"
#include "lh-yuv.h"
#include "lhk-common.cuh"

/* --- Tunables --------------------------------------------------------------- */
#define LHK_OVERLAY_BLOCK_X 32
#define LHK_OVERLAY_BLOCK_Y 8

__device__ __forceinline__ uint32_t lhk_get(const uint8_t *p, int bytes)
{
  return bytes == 1 ? p[0] : (uint32_t)p[0] | ((uint32_t)p[1] << 8);
}

__device__ __forceinline__ void lhk_put(uint8_t *p, int bytes, uint32_t v)
{
  p[0] = (uint8_t)v;
  if (bytes == 2)
    p[1] = (uint8_t)(v >> 8);
}

/* One sample blended; P010 keeps its 10 bits at the top, GRAY16_BE its
 * bytes the other way round.  A packed 4:2:2 byte is written by its own
 * thread: bytes are stored whole, so neighbours never clash. */
__device__ __forceinline__ void lhk_blend_at(uint8_t *p, int bytes, uint32_t shift, uint32_t top,
                                             uint32_t colour, uint32_t alpha,
                                             bool big_endian = false)
{
  uint32_t s = lhk_get(p, bytes);
  if (big_endian)
    s = lhi_swap16(s);
  const uint32_t v = lhi_blend(lhi_clamp_sample(s >> shift, top), colour, alpha) << shift;
  lhk_put(p, bytes, big_endian ? lhi_swap16(v) : v);
}

struct LhkOverlayArea {
  int x0, y0, x1, y1; /* the part of the panel inside the frame */
};

__device__ __forceinline__ const LhiInk &lhk_ink_at(const LhkOverlay &o, int x, int y)
{
  return o.inks[lhi_overlay_ink_turned(o.orientation, o.panel_x, o.panel_y, o.panel_width,
                                       o.panel_height, o.bar_heights, o.column_flags, x, y)];
}

__global__ void lhk_overlay_luma_kernel(LhkOverlay o, LhkOverlayArea a, int pixel_bytes,
                                        int sample_bytes)
{
  const int x = a.x0 + (int)(blockIdx.x * blockDim.x + threadIdx.x);
  const int y = a.y0 + (int)(blockIdx.y * blockDim.y + threadIdx.y);
  if (x >= a.x1 || y >= a.y1)
    return;
  const LhiInk &ink = lhk_ink_at(o, x, y);
  uint8_t *px = (uint8_t *)o.planes[0] + (size_t)y * o.strides[0] + (size_t)x * pixel_bytes;
  if (o.pixel == LHK_PIXEL_RGB10) {
    /* The three fields of the word; a 2-bit alpha composited over (3 its
     * top), unused top bits kept, as cpu/overlay.c does. */
    uint32_t word = lhk_load_word(px, o.swap_bytes);
    uint32_t rgb[3];
    for (int c = 0; c < 3; c++)
      rgb[c] = lhi_packed10_field(word, o.rgb_index[c]);
    if (o.alpha_index >= 0) {
      uint32_t alpha = lhi_packed10_field(word, o.alpha_index);
      lhi_blend_over(rgb, &alpha, 3, &ink);
      word = (word & ~(3u << (10 * o.alpha_index))) | alpha << (10 * o.alpha_index);
    } else {
      for (int c = 0; c < 3; c++)
        rgb[c] = lhi_blend(rgb[c], ink.rgb[c], ink.alpha);
    }
    for (int c = 0; c < 3; c++) {
      const int at = 10 * o.rgb_index[c];
      word = (word & ~(0x3ffu << at)) | rgb[c] << at;
    }
    word = lhk_word_order(word, o.swap_bytes);
    for (int i = 0; i < 4; i++)
      px[i] = (uint8_t)(word >> (8 * i));
  } else if (o.alpha_index >= 0) {
    /* Straight alpha of the colours' depth: the ink composited over. */
    uint32_t rgb[3];
    for (int c = 0; c < 3; c++)
      rgb[c] = lhi_clamp_sample(lhk_get(px + o.rgb_index[c] * sample_bytes, sample_bytes), o.top);
    uint8_t *alpha_at = px + o.alpha_index * sample_bytes;
    uint32_t alpha = lhi_clamp_sample(lhk_get(alpha_at, sample_bytes), o.top);
    lhi_blend_over(rgb, &alpha, o.top, &ink);
    for (int c = 0; c < 3; c++)
      lhk_put(px + o.rgb_index[c] * sample_bytes, sample_bytes, rgb[c]);
    lhk_put(alpha_at, sample_bytes, alpha);
  } else if (o.rgb_index[0] >= 0) {
    for (int c = 0; c < 3; c++)
      lhk_blend_at(px + o.rgb_index[c] * sample_bytes, sample_bytes, 0, o.top, ink.rgb[c],
                   ink.alpha);
  } else {
    lhk_blend_at(px + o.luma_offset, sample_bytes, o.shift, o.top, ink.y, ink.alpha,
                 o.big_endian != 0);
  }
}

/* Each chroma sample takes the ink of its top-left luma pixel. */
/* The first chroma sample at or after luma position v of 2^shift. */
__host__ __device__ __forceinline__ int lhk_chroma_first(int v, int shift)
{
  return (v + (1 << shift) - 1) >> shift;
}

__global__ void lhk_overlay_chroma_kernel(LhkOverlay o, LhkOverlayArea a, int sample_bytes)
{
  const int xs = o.chroma_x_shift, ys = o.chroma_y_shift;
  const int cx = lhk_chroma_first(a.x0, xs) + (int)(blockIdx.x * blockDim.x + threadIdx.x);
  const int cy = lhk_chroma_first(a.y0, ys) + (int)(blockIdx.y * blockDim.y + threadIdx.y);
  if (cx << xs >= a.x1 || cy << ys >= a.y1)
    return;
  const LhiInk &ink = lhk_ink_at(o, cx << xs, cy << ys);
  uint8_t *cb, *cr;
  if (o.chroma == 3) {
    uint8_t *pair = (uint8_t *)o.planes[0] + (size_t)cy * o.strides[0] + 4 * (size_t)cx;
    cb = pair + o.cb_index;
    cr = pair + o.cr_index;
  } else if (o.chroma == 2) {
    uint8_t *p = (uint8_t *)o.planes[1] + (size_t)cy * o.strides[1] + (size_t)cx * 2 * sample_bytes;
    cb = p + o.cb_index * sample_bytes;
    cr = p + o.cr_index * sample_bytes;
  } else {
    cb = (uint8_t *)o.planes[o.cb_index] + (size_t)cy * o.strides[o.cb_index] +
         (size_t)cx * sample_bytes;
    cr = (uint8_t *)o.planes[o.cr_index] + (size_t)cy * o.strides[o.cr_index] +
         (size_t)cx * sample_bytes;
  }
  lhk_blend_at(cb, sample_bytes, o.shift, o.top, ink.cb, ink.alpha);
  lhk_blend_at(cr, sample_bytes, o.shift, o.top, ink.cr, ink.alpha);
}

/* v210: one thread per group (and row) under the panel, since the fields of
 * a group share words: the Y fields of its pixels inside the panel and the
 * Cb, Cr fields of its pairs whose first pixel is inside, each blended with
 * the ink of its pixel (the pair's first, as lhk_overlay_chroma_kernel), the
 * group written back whole. */
__global__ void lhk_overlay_v210_kernel(LhkOverlay o, LhkOverlayArea a)
{
  const int g = a.x0 / LHI_V210_GROUP_PIXELS + (int)(blockIdx.x * blockDim.x + threadIdx.x);
  const int y = a.y0 + (int)(blockIdx.y * blockDim.y + threadIdx.y);
  const int x_first = g * LHI_V210_GROUP_PIXELS;
  if (x_first >= a.x1 || y >= a.y1)
    return;
  uint8_t *group =
      (uint8_t *)o.planes[0] + (size_t)y * o.strides[0] + (size_t)g * LHI_V210_GROUP_BYTES;
  uint32_t w[4];
  for (int i = 0; i < 4; i++)
    w[i] = lhk_load_word(group + 4 * i, 0);
  for (int k = 0; k < LHI_V210_GROUP_PIXELS; k++) {
    const int x = x_first + k;
    if (x < a.x0 || x >= a.x1)
      continue;
    const LhiInk &ink = lhk_ink_at(o, x, y);
    const int f = lhi_v210_y_field(k);
    lhi_v210_set(w, f, lhi_blend(lhi_v210_get(w, f), ink.y, ink.alpha));
  }
  for (int pair = 0; pair < LHI_V210_GROUP_PIXELS / 2; pair++) {
    const int x = x_first + 2 * pair;
    if (x < a.x0 || x >= a.x1)
      continue;
    const LhiInk &ink = lhk_ink_at(o, x, y);
    const int cb = lhi_v210_cb_field(pair), cr = lhi_v210_cr_field(pair);
    lhi_v210_set(w, cb, lhi_blend(lhi_v210_get(w, cb), ink.cb, ink.alpha));
    lhi_v210_set(w, cr, lhi_blend(lhi_v210_get(w, cr), ink.cr, ink.alpha));
  }
  for (int i = 0; i < 16; i++)
    group[i] = (uint8_t)(w[i / 4] >> (8 * (i % 4)));
}

static void pixel_bytes_of(LhkPixel pixel, int *pixel_bytes, int *sample_bytes)
{
  static const int pixel_table[LHK_PIXEL_COUNT] = {1, 2, 3, 4, 6, 8, 4, 16};
  static const int sample_table[LHK_PIXEL_COUNT] = {1, 2, 1, 1, 2, 2, 4, 4};
  *pixel_bytes = pixel_table[pixel];
  *sample_bytes = sample_table[pixel];
}

extern "C" cudaError_t lhk_overlay(const LhkOverlay *overlay, cudaStream_t stream)
{
  const LhkOverlay &o = *overlay;
  if ((unsigned)o.pixel >= LHK_PIXEL_COUNT || o.panel_width < 3 || o.panel_height < 3)
    return cudaErrorInvalidValue;
  LhkOverlayArea a;
  a.x0 = max(o.panel_x, 0);
  a.y0 = max(o.panel_y, 0);
  a.x1 = (int)min((long long)o.panel_x + o.panel_width, (long long)o.frame_width);
  a.y1 = (int)min((long long)o.panel_y + o.panel_height, (long long)o.frame_height);
  if (a.x0 >= a.x1 || a.y0 >= a.y1)
    return cudaSuccess;
  const dim3 block(LHK_OVERLAY_BLOCK_X, LHK_OVERLAY_BLOCK_Y);
  if (o.pixel == LHK_PIXEL_V210) {
    const int groups = (a.x1 - 1) / LHI_V210_GROUP_PIXELS - a.x0 / LHI_V210_GROUP_PIXELS + 1;
    dim3 grid((groups + block.x - 1) / block.x, (a.y1 - a.y0 + block.y - 1) / block.y);
    lhk_overlay_v210_kernel<<<grid, block, 0, stream>>>(o, a);
    LHK_CHECK_LAUNCH(stream);
    return cudaSuccess;
  }
  int pixel_bytes, sample_bytes;
  pixel_bytes_of(o.pixel, &pixel_bytes, &sample_bytes);
  if (o.chroma == 3) { /* packed 4:2:2: Y a byte of each 2-byte pixel */
    pixel_bytes = 2;
    sample_bytes = 1;
  }
  dim3 grid((a.x1 - a.x0 + block.x - 1) / block.x, (a.y1 - a.y0 + block.y - 1) / block.y);
  lhk_overlay_luma_kernel<<<grid, block, 0, stream>>>(o, a, pixel_bytes, sample_bytes);
  LHK_CHECK_LAUNCH(stream);
  if (o.chroma) {
    const int xs = o.chroma_x_shift, ys = o.chroma_y_shift;
    int cw = lhk_chroma_first(a.x1, xs) - lhk_chroma_first(a.x0, xs);
    int ch = lhk_chroma_first(a.y1, ys) - lhk_chroma_first(a.y0, ys);
    if (cw > 0 && ch > 0) {
      dim3 chroma_grid((cw + block.x - 1) / block.x, (ch + block.y - 1) / block.y);
      lhk_overlay_chroma_kernel<<<chroma_grid, block, 0, stream>>>(o, a, sample_bytes);
      LHK_CHECK_LAUNCH(stream);
    }
  }
  return cudaSuccess;
}
