/* cpu/overlay.c: the CPU backend's drawing of the histogram overlay that
 * overlay.c lays out: the panel's luma and chroma by bands of rows, each
 * sample blended in the frame's own layout. */
#include <string.h>

#include "lh-private.h"

static uint32_t load_sample(const uint8_t *p, int bytes)
{
  if (bytes == 1)
    return *p;
  uint16_t v;
  memcpy(&v, p, sizeof v);
  return v;
}

static void store_sample(uint8_t *p, int bytes, uint32_t v)
{
  if (bytes == 1) {
    *p = (uint8_t)v;
  } else {
    uint16_t s = (uint16_t)v;
    memcpy(p, &s, sizeof s);
  }
}

/* Blends one sample: its significant bits above shift (P010: 6), in either
 * byte order.  A sample above top (a 16-bit word of a frame said to have
 * fewer bits) is blended as top, the value its analysis counted it as
 * (lhi_clamp_sample), not as bits past the ink's scale. */
static void blend_at(uint8_t *p, int bytes, int shift, bool big_endian, uint32_t top,
                     uint32_t colour, uint32_t alpha)
{
  uint32_t s = load_sample(p, bytes);
  if (big_endian)
    s = lhi_swap16(s);
  uint32_t v = lhi_blend(lhi_clamp_sample(s >> shift, top), colour, alpha) << shift;
  store_sample(p, bytes, big_endian ? lhi_swap16(v) : v);
}

/* Blends one 10-bit field of a v210 group. */
static void blend_v210(uint8_t *group, int field, uint32_t colour, uint32_t alpha)
{
  uint32_t words[4];
  memcpy(words, group, sizeof words);
  lhi_v210_set(words, field, lhi_blend(lhi_v210_get(words, field), colour, alpha));
  memcpy(group, words, sizeof words);
}

/* Blends the three 10-bit fields of a packed R'G'B' word; a 2-bit alpha
 * (RGB10A2) is composited over (lhi_blend_over, 3 its top), unused top bits
 * (r210) are kept. */
static void blend_packed10(uint8_t *p, const LhiFormatInfo *info, bool big_endian,
                           const LhiInk *ink)
{
  uint32_t word = lhi_load_word(p, big_endian);
  const int field[3] = {info->r, info->g, info->b};
  uint32_t rgb[3];
  for (int c = 0; c < 3; c++)
    rgb[c] = lhi_packed10_field(word, field[c]);
  if (info->a >= 0) {
    uint32_t alpha = lhi_packed10_field(word, info->a);
    lhi_blend_over(rgb, &alpha, 3, ink);
    word = (word & ~(3u << (10 * info->a))) | alpha << (10 * info->a);
  } else {
    for (int c = 0; c < 3; c++)
      rgb[c] = lhi_blend(rgb[c], ink->rgb[c], ink->alpha);
  }
  for (int c = 0; c < 3; c++)
    word = (word & ~(0x3ffu << (10 * field[c]))) | rgb[c] << (10 * field[c]);
  lhi_store_word(p, word, big_endian);
}

/* Composites the ink over an 8- or 16-bit R'G'B'A pixel (lhi_blend_over),
 * its alpha of the colours' depth; samples above top taken as top, as
 * blend_at does. */
static void blend_over_rgba(uint8_t *px, const LhiFormatInfo *info, uint32_t top, const LhiInk *ink)
{
  const int bytes = info->sample_bytes;
  const int index[3] = {info->r, info->g, info->b};
  uint32_t rgb[3];
  for (int c = 0; c < 3; c++)
    rgb[c] = lhi_clamp_sample(load_sample(px + index[c] * bytes, bytes), top);
  uint32_t alpha = lhi_clamp_sample(load_sample(px + info->a * bytes, bytes), top);
  lhi_blend_over(rgb, &alpha, top, ink);
  for (int c = 0; c < 3; c++)
    store_sample(px + index[c] * bytes, bytes, rgb[c]);
  store_sample(px + info->a * bytes, bytes, alpha);
}

/* Composites the ink over a gray sample whose alpha is in a plane of its
 * own (lhi_blend_over, the gray as each colour), the alpha at the full scale
 * of its bytes. */
static void blend_over_gray(uint8_t *px, uint8_t *alpha_px, int bytes, uint32_t top,
                            const LhiInk *ink)
{
  const uint32_t gray = lhi_clamp_sample(load_sample(px, bytes), top);
  uint32_t value[3] = {gray, gray, gray};
  uint32_t alpha = load_sample(alpha_px, bytes);
  LhiInk gray_ink = *ink;
  gray_ink.rgb[0] = gray_ink.rgb[1] = gray_ink.rgb[2] = ink->y;
  lhi_blend_over(value, &alpha, bytes == 1 ? 0xffu : 0xffffu, &gray_ink);
  store_sample(px, bytes, value[0]);
  store_sample(alpha_px, bytes, alpha);
}

/* The panel's part of a frame, split in row bands for the CPU backend's
 * threads: luma rows, then chroma rows. */
typedef struct {
  const LhiOverlayJob *job;
  const LhiFormatInfo *info;
  int x0, y0, x1, y1;
  int bands;
} OverlayBands;

static void draw_luma_band(int band, void *data)
{
  const OverlayBands *o = data;
  const LhiOverlayJob *job = o->job;
  const LhFrame *frame = &job->frame;
  const LhiFormatInfo *info = o->info;
  const LhRect *panel = &job->panel;
  const int bytes = info->sample_bytes, shift = info->luma_shift;
  const uint32_t top = (1u << job->sample_depth) - 1;
  const int rows = o->y1 - o->y0;
  for (int y = o->y0 + lhi_band_start(band, o->bands, rows);
       y < o->y0 + lhi_band_start(band + 1, o->bands, rows); y++) {
    uint8_t *row = (uint8_t *)frame->planes[0] + (size_t)y * frame->strides[0];
    for (int x = o->x0; x < o->x1; x++) {
      const LhiInk *ink = &job->inks[lhi_overlay_ink_turned(
          job->orientation, panel->x, panel->y, panel->width, panel->height, job->bar_heights,
          job->column_flags, x, y)];
      if (info->chroma == LHI_CHROMA_V210) {
        blend_v210(row + (size_t)(x / 6) * LHI_V210_GROUP_BYTES, lhi_v210_y_field(x % 6), ink->y,
                   ink->alpha);
        continue;
      }
      uint8_t *px = row + (size_t)x * (size_t)info->pixel_bytes;
      if (lhi_format_is_packed10_rgb(info)) {
        blend_packed10(px, info, lhi_format_big_endian_words(frame->format), ink);
      } else if (info->a >= 0) {
        blend_over_rgba(px, info, top, ink);
      } else if (info->r >= 0) {
        blend_at(px + info->r * bytes, bytes, 0, false, top, ink->rgb[0], ink->alpha);
        blend_at(px + info->g * bytes, bytes, 0, false, top, ink->rgb[1], ink->alpha);
        blend_at(px + info->b * bytes, bytes, 0, false, top, ink->rgb[2], ink->alpha);
      } else if (job->alpha) {
        blend_over_gray(px, job->alpha + (size_t)y * job->alpha_stride + (size_t)x * bytes, bytes,
                        top, ink);
      } else {
        blend_at(px + info->luma_offset, bytes, shift, info->big_endian, top, ink->y, ink->alpha);
      }
    }
  }
}

/* Each chroma sample takes the ink of its top-left luma pixel. */
static void draw_chroma_band(int band, void *data)
{
  const OverlayBands *o = data;
  const LhiOverlayJob *job = o->job;
  const LhFrame *frame = &job->frame;
  const LhiFormatInfo *info = o->info;
  const LhRect *panel = &job->panel;
  const int bytes = info->sample_bytes, shift = info->luma_shift;
  const uint32_t top = (1u << job->sample_depth) - 1;
  const int xs = info->chroma_x_shift, ys = info->chroma_y_shift;
  const int sub_x = 1 << xs, sub_y = 1 << ys;
  /* chroma rows cy with y0 <= cy * sub_y < y1, columns likewise */
  const int first = (o->y0 + sub_y - 1) >> ys, end = (o->y1 + sub_y - 1) >> ys;
  const int rows = end - first;
  for (int cy = first + lhi_band_start(band, o->bands, rows);
       cy < first + lhi_band_start(band + 1, o->bands, rows); cy++) {
    for (int cx = (o->x0 + sub_x - 1) >> xs; cx << xs < o->x1; cx++) {
      const LhiInk *ink = &job->inks[lhi_overlay_ink_turned(
          job->orientation, panel->x, panel->y, panel->width, panel->height, job->bar_heights,
          job->column_flags, cx << xs, cy << ys)];
      uint8_t *cb, *cr;
      switch (info->chroma) {
      case LHI_CHROMA_V210: {
        uint8_t *group = (uint8_t *)frame->planes[0] + (size_t)cy * frame->strides[0] +
                         (size_t)(cx / 3) * LHI_V210_GROUP_BYTES;
        blend_v210(group, lhi_v210_cb_field(cx % 3), ink->cb, ink->alpha);
        blend_v210(group, lhi_v210_cr_field(cx % 3), ink->cr, ink->alpha);
        continue;
      }
      case LHI_CHROMA_PACKED: {
        uint8_t *pair =
            (uint8_t *)frame->planes[0] + (size_t)cy * frame->strides[0] + 4 * (size_t)cx;
        cb = pair + info->cb_index;
        cr = pair + info->cr_index;
        break;
      }
      case LHI_CHROMA_SEMI_PLANAR: {
        uint8_t *pair = (uint8_t *)frame->planes[1] + (size_t)cy * frame->strides[1] +
                        (size_t)cx * 2 * (size_t)bytes;
        cb = pair + info->cb_index * bytes;
        cr = pair + info->cr_index * bytes;
        break;
      }
      default: /* LHI_CHROMA_PLANAR */
        cb = (uint8_t *)frame->planes[info->cb_index] +
             (size_t)cy * frame->strides[info->cb_index] + (size_t)cx * (size_t)bytes;
        cr = (uint8_t *)frame->planes[info->cr_index] +
             (size_t)cy * frame->strides[info->cr_index] + (size_t)cx * (size_t)bytes;
        break;
      }
      blend_at(cb, bytes, shift, false, top, ink->cb, ink->alpha);
      blend_at(cr, bytes, shift, false, top, ink->cr, ink->alpha);
    }
  }
}

int lhi_cpu_overlay(void *state, const LhiOverlayJob *job)
{
  const LhFrame *frame = &job->frame;
  if (frame->memory != LH_MEMORY_HOST)
    return lhi_error(LH_ERROR_UNSUPPORTED,
                     "the CPU backend cannot draw on frames in CUDA device memory");
  const LhRect *panel = &job->panel;
  LhiPool *pool = state ? ((LhiCpuState *)state)->pool : NULL;
  OverlayBands o = {.job = job, .info = lhi_format_info(frame->format)};
  o.x0 = panel->x > 0 ? panel->x : 0;
  o.y0 = panel->y > 0 ? panel->y : 0;
  o.x1 = panel->x + panel->width < frame->width ? panel->x + panel->width : frame->width;
  o.y1 = panel->y + panel->height < frame->height ? panel->y + panel->height : frame->height;
  if (o.x1 <= o.x0 || o.y1 <= o.y0)
    return LH_OK;
  o.bands = lhi_part_count(pool, o.x1 - o.x0, o.y1 - o.y0);
  lhi_pool_run(pool, o.bands, draw_luma_band, &o);
  if (o.info->is_yuv)
    lhi_pool_run(pool, o.bands, draw_chroma_band, &o);
  return LH_OK;
}
