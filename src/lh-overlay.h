/* lh-overlay.h: what each pixel of the histogram overlay panel shows and how
 * a colour is blended into a sample, shared by the CPU code and the CUDA
 * kernels so that both draw the same bits.  Plain C; kernels/ includes it. */
#ifndef LH_OVERLAY_H
#define LH_OVERLAY_H

#include <stdint.h>

#include "lh-luma.h"

/* The colours of the panel, in the order of the palette. */
enum {
  LHI_INK_BACKGROUND,
  LHI_INK_BORDER,
  LHI_INK_BAR,
  LHI_INK_MEDIAN,
  LHI_INK_PERCENTILE,
  LHI_INK_BAND_LOW,
  LHI_INK_BAND_HIGH,
  LHI_INK_ZONE,
  LHI_INK_COUNT
};

/* Flags of a column of the panel's inside. */
#define LHI_COLUMN_MEDIAN 0x01u
#define LHI_COLUMN_PERCENTILE 0x02u
#define LHI_COLUMN_BAND_LOW 0x04u
#define LHI_COLUMN_BAND_HIGH 0x08u
#define LHI_COLUMN_ZONE 0x10u

/* One colour in the terms of the frame being drawn on: samples of its bit
 * depth (R'G'B' in that order, Y'CbCr, or Y' alone for gray) and an alpha
 * of 0 .. 256. */
typedef struct {
  uint16_t rgb[3];
  uint16_t y;
  uint16_t cb;
  uint16_t cr;
  uint16_t alpha;
} LhiInk;

/* The ink of pixel (px, py) of a panel of width x height (both >= 3): a
 * 1-pixel border around columns of bars, drawn bottom up; a column's
 * markers are drawn over its bar, its bands and zone under it. */
LHI_HOST_DEVICE int lhi_overlay_ink(int width, int height, const uint16_t *bar_heights,
                                    const uint8_t *column_flags, int px, int py)
{
  if (px == 0 || py == 0 || px == width - 1 || py == height - 1)
    return LHI_INK_BORDER;
  int column = px - 1;
  int row_from_bottom = height - 2 - py;
  uint32_t flags = column_flags[column];
  if (flags & LHI_COLUMN_MEDIAN)
    return LHI_INK_MEDIAN;
  if (flags & LHI_COLUMN_PERCENTILE)
    return LHI_INK_PERCENTILE;
  if (row_from_bottom < (int)bar_heights[column])
    return LHI_INK_BAR;
  if (flags & LHI_COLUMN_BAND_LOW)
    return LHI_INK_BAND_LOW;
  if (flags & LHI_COLUMN_BAND_HIGH)
    return LHI_INK_BAND_HIGH;
  if (flags & LHI_COLUMN_ZONE)
    return LHI_INK_ZONE;
  return LHI_INK_BACKGROUND;
}

/* The ink under pixel (x, y) of a frame as it is stored, of a panel that
 * takes columns [left, left + across) and rows [top, top + down) there and
 * is to read upright in the frame as it is shown: turned by the Exif
 * orientation (1 or 0: as stored; 2: mirrored left to right; 3: half a turn;
 * 4: mirrored top to bottom; 5: transposed; 6: a quarter turn clockwise; 7:
 * transposed the other way; 8: a quarter turn counterclockwise).  From 5 on,
 * the panel as shown is down pixels wide and across high. */
LHI_HOST_DEVICE int lhi_overlay_ink_turned(int orientation, int left, int top, int across, int down,
                                           const uint16_t *bar_heights, const uint8_t *column_flags,
                                           int x, int y)
{
  const int ox = x - left, oy = y - top;
  switch (orientation) {
  case 2:
    return lhi_overlay_ink(across, down, bar_heights, column_flags, across - 1 - ox, oy);
  case 3:
    return lhi_overlay_ink(across, down, bar_heights, column_flags, across - 1 - ox, down - 1 - oy);
  case 4:
    return lhi_overlay_ink(across, down, bar_heights, column_flags, ox, down - 1 - oy);
  case 5:
    return lhi_overlay_ink(down, across, bar_heights, column_flags, oy, ox);
  case 6:
    return lhi_overlay_ink(down, across, bar_heights, column_flags, down - 1 - oy, ox);
  case 7:
    return lhi_overlay_ink(down, across, bar_heights, column_flags, down - 1 - oy, across - 1 - ox);
  case 8:
    return lhi_overlay_ink(down, across, bar_heights, column_flags, oy, across - 1 - ox);
  default:
    return lhi_overlay_ink(across, down, bar_heights, column_flags, ox, oy);
  }
}

/* The columns of bars of such a panel: the pixels across it as shown, less
 * the border's two. */
LHI_HOST_DEVICE int lhi_overlay_columns(int orientation, int across, int down)
{
  return (orientation >= 5 ? down : across) - 2;
}

/* sample * (256 - alpha) + colour * alpha, over 256, rounded half up. */
LHI_HOST_DEVICE uint32_t lhi_blend(uint32_t sample, uint32_t colour, uint32_t alpha)
{
  return (sample * (256 - alpha) + colour * alpha + 128) >> 8;
}

/* The ink composited over a pixel of straight (not premultiplied) alpha, as
 * a compositor lays a layer over an image, so that the panel shows where
 * the image is transparent: rgb[] and *pixel_alpha (0 .. alpha_top; the
 * colours' own top does not matter) in, the result out.  The alpha becomes
 * lhi_blend(A, alpha_top, a), A + (alpha_top - A) a / 256; each colour
 * the mean of the ink's and its own weighted by their shares of that
 * alpha, rounded half up:
 *   (ink alpha_top a + C A (256 - a) + w / 2) / w,  w = A (256 - a) + alpha_top a.
 * On an opaque pixel (A = alpha_top) both weights are lhi_blend's times
 * alpha_top, and w / 2 its 128 times alpha_top: lhi_blend's value, bit for
 * bit, so an opaque pixel takes lhi_blend itself, with no division.  A
 * transparent pixel under a transparent ink (w = 0) is kept.  16-bit colours
 * and alphas make products of 2^40, so those take 64 bits; with an alpha
 * under 1024 the colours are 10-bit at most (8-bit R'G'B'A, RGB10A2's 2-bit
 * alpha) and the sums stay under 2^30: 32 bits, whose division costs the
 * GPU a fraction of a 64-bit one.  Both give the same quotient. */
LHI_HOST_DEVICE void lhi_blend_over(uint32_t rgb[3], uint32_t *pixel_alpha, uint32_t alpha_top,
                                    const LhiInk *ink)
{
  if (*pixel_alpha == alpha_top) {
    for (int c = 0; c < 3; c++)
      rgb[c] = lhi_blend(rgb[c], ink->rgb[c], ink->alpha);
    return;
  }
  if (alpha_top < 1024) {
    const uint32_t under = *pixel_alpha * (256 - ink->alpha);
    const uint32_t over = alpha_top * ink->alpha;
    const uint32_t weight = under + over;
    if (weight > 0)
      for (int c = 0; c < 3; c++)
        rgb[c] = (rgb[c] * under + ink->rgb[c] * over + weight / 2) / weight;
  } else {
    const uint64_t under = (uint64_t)*pixel_alpha * (256 - ink->alpha);
    const uint64_t over = (uint64_t)alpha_top * ink->alpha;
    const uint64_t weight = under + over;
    if (weight > 0)
      for (int c = 0; c < 3; c++)
        rgb[c] = (uint32_t)((rgb[c] * under + ink->rgb[c] * over + weight / 2) / weight);
  }
  *pixel_alpha = lhi_blend(*pixel_alpha, alpha_top, ink->alpha);
}

#endif /* LH_OVERLAY_H */
