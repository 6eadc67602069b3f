/* overlay.cu: the histogram overlay panel blended into a frame on the GPU,
 * one thread per pixel of the panel (and per chroma sample under it), with
 * the inks and the blend of lh-overlay.h that the CPU draws with. */
#include "lh-overlay.h"
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

/* One sample blended; P010 keeps its 10 bits at the top. */
__device__ __forceinline__ void lhk_blend_at(uint8_t *p, int bytes, uint32_t shift, uint32_t colour,
                                             uint32_t alpha)
{
  lhk_put(p, bytes, lhi_blend(lhk_get(p, bytes) >> shift, colour, alpha) << shift);
}

struct LhkOverlayArea {
  int x0, y0, x1, y1; /* the part of the panel inside the frame */
};

__device__ __forceinline__ const LhiInk &lhk_ink_at(const LhkOverlay &o, int x, int y)
{
  return o.inks[lhi_overlay_ink(o.panel_width, o.panel_height, o.bar_heights, o.column_flags,
                                x - o.panel_x, y - o.panel_y)];
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
    /* The three fields of the word, its top two bits kept. */
    uint32_t word = lhk_load_word(px, o.swap_bytes);
    for (int c = 0; c < 3; c++) {
      const int at = 10 * o.rgb_index[c];
      const uint32_t v = lhi_blend(lhi_packed10_field(word, o.rgb_index[c]), ink.rgb[c], ink.alpha);
      word = (word & ~(0x3ffu << at)) | v << at;
    }
    word = lhk_word_order(word, o.swap_bytes);
    for (int i = 0; i < 4; i++)
      px[i] = (uint8_t)(word >> (8 * i));
  } else if (o.rgb_index[0] >= 0) {
    for (int c = 0; c < 3; c++)
      lhk_blend_at(px + o.rgb_index[c] * sample_bytes, sample_bytes, 0, ink.rgb[c], ink.alpha);
  } else {
    lhk_blend_at(px, sample_bytes, o.shift, ink.y, ink.alpha);
  }
}

/* Each chroma sample takes the ink of its top-left luma pixel. */
__global__ void lhk_overlay_chroma_kernel(LhkOverlay o, LhkOverlayArea a, int sample_bytes)
{
  const int cx = (a.x0 + 1) / 2 + (int)(blockIdx.x * blockDim.x + threadIdx.x);
  const int cy = (a.y0 + 1) / 2 + (int)(blockIdx.y * blockDim.y + threadIdx.y);
  if (2 * cx >= a.x1 || 2 * cy >= a.y1)
    return;
  const LhiInk &ink = lhk_ink_at(o, 2 * cx, 2 * cy);
  if (o.chroma == 2) {
    uint8_t *p = (uint8_t *)o.planes[1] + (size_t)cy * o.strides[1] + (size_t)cx * 2 * sample_bytes;
    lhk_blend_at(p, sample_bytes, o.shift, ink.cb, ink.alpha);
    lhk_blend_at(p + sample_bytes, sample_bytes, o.shift, ink.cr, ink.alpha);
  } else {
    lhk_blend_at((uint8_t *)o.planes[1] + (size_t)cy * o.strides[1] + cx, 1, 0, ink.cb, ink.alpha);
    lhk_blend_at((uint8_t *)o.planes[2] + (size_t)cy * o.strides[2] + cx, 1, 0, ink.cr, ink.alpha);
  }
}

static void pixel_bytes_of(LhkPixel pixel, int *pixel_bytes, int *sample_bytes)
{
  static const int pixel_table[LHK_PIXEL_COUNT] = {1, 2, 3, 4, 6, 8, 4};
  static const int sample_table[LHK_PIXEL_COUNT] = {1, 2, 1, 1, 2, 2, 4};
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
  int pixel_bytes, sample_bytes;
  pixel_bytes_of(o.pixel, &pixel_bytes, &sample_bytes);
  const dim3 block(LHK_OVERLAY_BLOCK_X, LHK_OVERLAY_BLOCK_Y);
  dim3 grid((a.x1 - a.x0 + block.x - 1) / block.x, (a.y1 - a.y0 + block.y - 1) / block.y);
  lhk_overlay_luma_kernel<<<grid, block, 0, stream>>>(o, a, pixel_bytes, sample_bytes);
  LHK_CHECK_LAUNCH(stream);
  if (o.chroma) {
    int cw = (a.x1 + 1) / 2 - (a.x0 + 1) / 2, ch = (a.y1 + 1) / 2 - (a.y0 + 1) / 2;
    if (cw > 0 && ch > 0) {
      dim3 chroma_grid((cw + block.x - 1) / block.x, (ch + block.y - 1) / block.y);
      lhk_overlay_chroma_kernel<<<chroma_grid, block, 0, stream>>>(o, a, sample_bytes);
      LHK_CHECK_LAUNCH(stream);
    }
  }
  return cudaSuccess;
}
