/* cpu/equalize.c: the CPU backend's global equalization and LUT
 * application: luma rows, the histogram by parts of rows, the LUT written
 * back with the colour rule, chroma copied or scaled. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "lh-private.h"

static uint16_t load16(const uint8_t *p)
{
  uint16_t v;
  memcpy(&v, p, sizeof v);
  return v;
}

static void store16(uint8_t *p, uint32_t v)
{
  uint16_t s = (uint16_t)v;
  memcpy(p, &s, sizeof s);
}

/* The 8-bit luma of an 8-bit R'G'B' row (3 or 4 bytes a pixel), by the
 * vectorized row loops of cpu/luma-rows.c. */
static void luma_row_u8(const LhiEqualizeJob *job, const uint8_t *row, uint8_t *luma)
{
  uint32_t weights[4];
  lhi_byte_weights(job->in.format, job->weights, weights);
  lhi_luma_row_u8(row, job->in.width, lhi_format_info(job->in.format)->pixel_bytes, weights, luma);
}

void lhi_cpu_luma_row(const LhiEqualizeJob *job, int y, uint16_t *luma)
{
  const LhFrame *frame = &job->in;
  const LhiFormatInfo *info = lhi_format_info(frame->format);
  const uint8_t *row = (const uint8_t *)frame->planes[0] + (size_t)y * frame->strides[0];
  const uint32_t max_value = (1u << job->bit_depth) - 1;
  const LhiLumaWeights w = job->weights;
  const size_t step = (size_t)info->pixel_bytes;
  if (info->r >= 0 && info->sample_bytes == 1) {
    /* 8-bit R'G'B' (most photographs): the vectorized row loops into the
     * upper half of the row's bytes, then widened in place from the left,
     * each byte read before the write that covers it (2x + 1 < width + x). */
    uint8_t *bytes = (uint8_t *)luma + frame->width;
    luma_row_u8(job, row, bytes);
    for (int x = 0; x < frame->width; x++)
      luma[x] = bytes[x];
    return;
  }
  if (info->r < 0 && info->sample_bytes == 1) {
    /* GRAY8 and the Y plane of 8-bit YUV: the samples, widened; packed
     * 4:2:2: every other byte. */
    const uint8_t *y_samples = row + info->luma_offset;
    if (step == 1)
      for (int x = 0; x < frame->width; x++)
        luma[x] = y_samples[x];
    else
      for (int x = 0; x < frame->width; x++)
        luma[x] = y_samples[2 * (size_t)x];
    return;
  }
  if (info->chroma == LHI_CHROMA_V210) {
    for (int x = 0; x < frame->width; x += LHI_V210_GROUP_PIXELS) {
      uint32_t words[4];
      memcpy(words, row + (size_t)(x / 6) * LHI_V210_GROUP_BYTES, sizeof words);
      for (int k = 0; k < LHI_V210_GROUP_PIXELS && x + k < frame->width; k++)
        luma[x + k] = (uint16_t)lhi_v210_get(words, lhi_v210_y_field(k));
    }
    return;
  }
  if (lhi_format_is_packed10_rgb(info)) {
    const bool big = lhi_format_big_endian_words(frame->format);
    for (int x = 0; x < frame->width; x++)
      luma[x] = (uint16_t)lhi_packed10_luma(lhi_load_word(row + 4 * (size_t)x, big), info, w);
    return;
  }
  for (int x = 0; x < frame->width; x++) {
    const uint8_t *px = row + (size_t)x * step;
    uint32_t v;
    if (info->r >= 0 && info->sample_bytes == 1)
      v = lhi_luma(px[info->r], px[info->g], px[info->b], w);
    else if (info->r >= 0)
      v = lhi_clamp_sample(lhi_luma_wide(load16(px + 2 * info->r), load16(px + 2 * info->g),
                                         load16(px + 2 * info->b), w),
                           max_value);
    else if (info->sample_bytes == 2)
      v = lhi_clamp_sample(
          (info->big_endian ? lhi_swap16(load16(px)) : load16(px)) >> info->luma_shift, max_value);
    else
      v = px[0];
    luma[x] = (uint16_t)v;
  }
}

/* Row y of an 8-bit R'G'B' out: lhi_cpu_write_row's loop for the commonest
 * layout, without its per-pixel choice of sample size, which -O2 does not
 * take out of it. */
/* lhi_gain(y, y_new) of every pair of 8-bit values, made once per process
 * (256 KiB): CLAHE gives each pixel its own new luma, and a division per
 * pixel cost more than the rest of its row writing. */
static uint32_t gain_pairs[256 * 256];
static pthread_once_t gain_pairs_once = PTHREAD_ONCE_INIT;

static void make_gain_pairs(void)
{
  for (uint32_t v = 1; v < 256; v++)
    for (uint32_t v_new = 0; v_new < 256; v_new++)
      gain_pairs[v * 256 + v_new] = lhi_gain(v, v_new);
}

static void write_row_rgb8(const LhiEqualizeJob *job, int y, const uint16_t *luma,
                           const uint16_t *new_luma, const uint32_t *gains)
{
  if (!gains)
    pthread_once(&gain_pairs_once, make_gain_pairs);
  const LhiFormatInfo *info = lhi_format_info(job->in.format);
  const uint8_t *src = (const uint8_t *)job->in.planes[0] + (size_t)y * job->in.strides[0];
  uint8_t *dst = (uint8_t *)job->out.planes[0] + (size_t)y * job->out.strides[0];
  const size_t step = (size_t)info->pixel_bytes;
  const bool copy_alpha = step == 4 && src != dst;
  for (int x = 0; x < job->in.width; x++, src += step, dst += step) {
    const uint32_t v = luma[x];
    if (v == 0) {
      dst[0] = dst[1] = dst[2] = (uint8_t)new_luma[x];
    } else {
      const uint32_t gain = gains ? gains[v] : gain_pairs[v * 256 + (new_luma[x] & 255)];
      dst[0] = (uint8_t)lhi_apply_gain(src[0], gain, 255);
      dst[1] = (uint8_t)lhi_apply_gain(src[1], gain, 255);
      dst[2] = (uint8_t)lhi_apply_gain(src[2], gain, 255);
    }
    if (copy_alpha)
      dst[3] = src[3];
  }
}

void lhi_cpu_write_row(const LhiEqualizeJob *job, int y, const uint16_t *luma,
                       const uint16_t *new_luma, const uint32_t *gains)
{
  const LhiFormatInfo *info = lhi_format_info(job->in.format);
  const uint8_t *in_row = (const uint8_t *)job->in.planes[0] + (size_t)y * job->in.strides[0];
  uint8_t *out_row = (uint8_t *)job->out.planes[0] + (size_t)y * job->out.strides[0];
  const int width = job->in.width;
  if (info->chroma == LHI_CHROMA_V210) {
    /* Each group's words rewritten with the new Y fields, chroma as it was
     * (and the fields of a last group's pixels past the width). */
    for (int x = 0; x < width; x += LHI_V210_GROUP_PIXELS) {
      uint32_t words[4];
      const size_t at = (size_t)(x / 6) * LHI_V210_GROUP_BYTES;
      memcpy(words, in_row + at, sizeof words);
      for (int k = 0; k < LHI_V210_GROUP_PIXELS && x + k < width; k++)
        lhi_v210_set(words, lhi_v210_y_field(k), new_luma[x + k]);
      memcpy(out_row + at, words, sizeof words);
    }
    return;
  }
  if (info->chroma == LHI_CHROMA_PACKED) {
    /* Chroma from in's row, then Y over it, every other byte. */
    if (in_row != out_row)
      memcpy(out_row, in_row, lhi_format_row_bytes(info, width));
    uint8_t *y_samples = out_row + info->luma_offset;
    for (int x = 0; x < width; x++)
      y_samples[2 * (size_t)x] = (uint8_t)new_luma[x];
    return;
  }
  if (info->r < 0) {
    const int shift = info->luma_shift;
    for (int x = 0; x < width; x++) {
      if (info->sample_bytes == 2) {
        uint32_t v = (uint32_t)new_luma[x] << shift;
        store16(out_row + 2 * (size_t)x, info->big_endian ? lhi_swap16(v) : v);
      } else {
        out_row[x] = (uint8_t)new_luma[x];
      }
    }
    return;
  }
  if (info->sample_bytes == 1) {
    write_row_rgb8(job, y, luma, new_luma, gains);
    return;
  }
  if (lhi_format_is_packed10_rgb(info)) {
    /* Each field scaled, the top two bits kept. */
    const bool big = lhi_format_big_endian_words(job->in.format);
    for (int x = 0; x < width; x++) {
      const uint32_t word = lhi_load_word(in_row + 4 * (size_t)x, big);
      const uint32_t gain = luma[x] ? lhi_gain(luma[x], new_luma[x]) : 0;
      uint32_t out = word & 0xc0000000u;
      for (int i = 0; i < 3; i++)
        out |= (luma[x] ? lhi_apply_gain(lhi_packed10_field(word, i), gain, 1023) : new_luma[x])
               << (10 * i);
      lhi_store_word(out_row + 4 * (size_t)x, out, big);
    }
    return;
  }
  /* 16-bit R'G'B'. */
  const uint32_t max_value = (1u << job->bit_depth) - 1;
  const size_t step = (size_t)info->pixel_bytes;
  const bool copy_alpha = step == 8 && in_row != out_row;
  for (int x = 0; x < width; x++) {
    const uint8_t *src = in_row + (size_t)x * step;
    uint8_t *dst = out_row + (size_t)x * step;
    uint32_t gain = luma[x] ? lhi_gain(luma[x], new_luma[x]) : 0;
    for (int c = 0; c < 3; c++) {
      uint32_t s = load16(src + 2 * c);
      store16(dst + 2 * c, luma[x] ? lhi_apply_gain(s, gain, max_value) : new_luma[x]);
    }
    if (copy_alpha)
      memcpy(dst + 6, src + 6, 2);
  }
}

/* The chroma planes' rows in bands, for the pool: on one thread a 4K NV12
 * frame's 4 MB of chroma took a third of CPU equalization on 16 cores. */
typedef struct {
  const LhiEqualizeJob *job;
  int n_planes;
  size_t row_bytes;
  int rows;
  int bands;
} ChromaCopy;

static void copy_chroma_band(int band, void *arg)
{
  const ChromaCopy *c = arg;
  const LhFrame *in = &c->job->in, *out = &c->job->out;
  const int y0 = lhi_band_start(band, c->bands, c->rows);
  const int y1 = lhi_band_start(band + 1, c->bands, c->rows);
  for (int p = 1; p < c->n_planes; p++) {
    if (in->planes[p] == out->planes[p])
      continue;
    for (int y = y0; y < y1; y++)
      memcpy((uint8_t *)out->planes[p] + (size_t)y * out->strides[p],
             (const uint8_t *)in->planes[p] + (size_t)y * in->strides[p], c->row_bytes);
  }
}

void lhi_cpu_copy_chroma(LhiPool *pool, const LhiEqualizeJob *job)
{
  const LhiFormatInfo *info = lhi_format_info(job->in.format);
  if (!info->is_yuv || job->in.planes[0] == job->out.planes[0])
    return;
  ChromaCopy c = {.job = job, .n_planes = info->n_planes};
  lhi_chroma_shape(&job->in, &c.row_bytes, &c.rows);
  c.bands = lhi_part_count(pool, (int)c.row_bytes, c.rows);
  lhi_pool_run(pool, c.bands, copy_chroma_band, &c);
}

/* 8-bit formats whose luma is the sample itself (GRAY8, and Y of I420 and
 * NV12): a byte in, its LUT entry out, with no luma row between. */
static bool is_y8(const LhiEqualizeJob *job)
{
  const LhiFormatInfo *info = lhi_format_info(job->in.format);
  return info->r < 0 && info->sample_bytes == 1 && info->pixel_bytes == 1;
}

/* The histogram of rows [y0, y1) of the frame's luma into histogram; 8-bit
 * luma through lhi_count8. */
static void count_luma(const LhiEqualizeJob *job, int y0, int y1, uint16_t *luma,
                       uint64_t *histogram)
{
  const int width = job->in.width;
  if (job->bit_depth > 8) {
    for (int y = y0; y < y1; y++) {
      lhi_cpu_luma_row(job, y, luma);
      for (int x = 0; x < width; x++)
        histogram[luma[x]]++;
    }
    return;
  }
  LhiCount8 count;
  lhi_count8_begin(&count, histogram);
  const LhiFormatInfo *info = lhi_format_info(job->in.format);
  uint32_t weights[4];
  lhi_byte_weights(job->in.format, job->weights, weights);
  uint8_t *bytes = (uint8_t *)luma;
  for (int y = y0; y < y1; y++) {
    /* 8-bit Y: the samples themselves.  8-bit R'G'B': counted as its luma
     * is made (vectorized).  Anything else of 8 significant bits (GRAY16, RGB16 at depth 8):
     * the 16-bit luma row, narrowed in place from the left (byte x is
     * written after element x, the last to cover it, was read). */
    const uint8_t *row = (const uint8_t *)job->in.planes[0] + (size_t)y * job->in.strides[0];
    if (info->r >= 0 && info->sample_bytes == 1) {
      lhi_count8_rgb_row(&count, row, width, info->pixel_bytes, weights);
      continue;
    } else if (info->chroma == LHI_CHROMA_PACKED) {
      lhi_count8_row_step2(&count, row + info->luma_offset, width);
      continue;
    } else if (!is_y8(job)) {
      lhi_cpu_luma_row(job, y, luma);
      for (int x = 0; x < width; x++)
        bytes[x] = (uint8_t)luma[x];
      row = bytes;
    }
    lhi_count8_row(&count, row, width);
  }
  lhi_count8_end(&count);
}

/* A global or LUT equalization split in parts of rows, a few a thread:
 * each thread has its luma buffers and, while counting, a histogram of its
 * own. */
typedef struct {
  const LhiEqualizeJob *job;
  int bands; /* the parts */
  int slots; /* the threads (lhi_pool_run_slots) */
  size_t bins;
  uint16_t *luma;       /* slots x 2 rows: old and new luma */
  uint64_t *histograms; /* slots x bins */
  const uint16_t *lut;
  const uint32_t *gains;
} EqualizeBands;

static void count_band(int band, int slot, void *data)
{
  EqualizeBands *e = data;
  const int height = e->job->in.height;
  count_luma(e->job, lhi_band_start(band, e->bands, height),
             lhi_band_start(band + 1, e->bands, height),
             e->luma + (size_t)slot * 2 * (size_t)e->job->in.width,
             e->histograms + (size_t)slot * e->bins);
}

/* 8-bit R'G'B' with a gain per luma value: each sample scaled by the gain of
 * its pixel's luma, a black pixel set to the new luma of 0; alpha copied. */
static void write_row_rgb8_gains(const LhiEqualizeJob *job, int y, const uint8_t *luma,
                                 const uint16_t *lut, const uint32_t *gains)
{
  const LhiFormatInfo *info = lhi_format_info(job->in.format);
  const uint8_t *src = (const uint8_t *)job->in.planes[0] + (size_t)y * job->in.strides[0];
  uint8_t *dst = (uint8_t *)job->out.planes[0] + (size_t)y * job->out.strides[0];
  const size_t step = (size_t)info->pixel_bytes;
  const bool copy_alpha = step == 4 && src != dst;
  const uint8_t black = (uint8_t)lut[0];
  for (int x = 0; x < job->in.width; x++, src += step, dst += step) {
    const uint32_t gain = gains[luma[x]];
    if (luma[x] == 0) {
      dst[0] = dst[1] = dst[2] = black;
    } else {
      dst[0] = (uint8_t)lhi_apply_gain(src[0], gain, 255);
      dst[1] = (uint8_t)lhi_apply_gain(src[1], gain, 255);
      dst[2] = (uint8_t)lhi_apply_gain(src[2], gain, 255);
    }
    if (copy_alpha)
      dst[3] = src[3];
  }
}

static void apply_band(int band, int slot, void *data)
{
  EqualizeBands *e = data;
  const int width = e->job->in.width, height = e->job->in.height;
  if (is_y8(e->job)) {
    const LhFrame *in = &e->job->in, *out = &e->job->out;
    uint8_t lut8[256];
    for (int v = 0; v < 256; v++)
      lut8[v] = (uint8_t)e->lut[v];
    for (int y = lhi_band_start(band, e->bands, height);
         y < lhi_band_start(band + 1, e->bands, height); y++) {
      const uint8_t *src = (const uint8_t *)in->planes[0] + (size_t)y * in->strides[0];
      uint8_t *dst = (uint8_t *)out->planes[0] + (size_t)y * out->strides[0];
      for (int x = 0; x < width; x++)
        dst[x] = lut8[src[x]];
    }
    return;
  }
  uint16_t *luma = e->luma + (size_t)slot * 2 * (size_t)width;
  uint16_t *new_luma = luma + width;
  if (e->gains) {
    /* 8-bit R'G'B': the luma row vectorized, then a gain per pixel. */
    const LhFrame *in = &e->job->in;
    for (int y = lhi_band_start(band, e->bands, height);
         y < lhi_band_start(band + 1, e->bands, height); y++) {
      luma_row_u8(e->job, (const uint8_t *)in->planes[0] + (size_t)y * in->strides[0],
                  (uint8_t *)luma);
      write_row_rgb8_gains(e->job, y, (const uint8_t *)luma, e->lut, e->gains);
    }
    return;
  }
  for (int y = lhi_band_start(band, e->bands, height);
       y < lhi_band_start(band + 1, e->bands, height); y++) {
    lhi_cpu_luma_row(e->job, y, luma);
    for (int x = 0; x < width; x++)
      new_luma[x] = e->lut[luma[x]];
    lhi_cpu_write_row(e->job, y, luma, new_luma, e->gains);
  }
}

int lhi_cpu_equalize(void *state, LhiEqualizeJob *job)
{
  LhiCpuState *cpu = state;
  if (job->in.memory != LH_MEMORY_HOST)
    return lhi_error(LH_ERROR_UNSUPPORTED,
                     "the CPU backend cannot equalize frames in CUDA device memory");
  if (job->kind == LHI_EQUALIZE_CLAHE)
    return lhi_cpu_clahe(cpu, job);

  const size_t n_bins = (size_t)1 << job->bit_depth;
  const int width = job->in.width, height = job->in.height;
  LhiPool *pool = cpu ? cpu->pool : NULL;
  EqualizeBands e = {.job = job, .bands = lhi_part_count(pool, width, height), .bins = n_bins};
  e.slots = lhi_slot_count(pool, e.bands);
  uint16_t *lut = malloc(n_bins * sizeof *lut);
  e.luma = malloc((size_t)e.slots * 2 * (size_t)width * sizeof *e.luma);
  if (job->kind == LHI_EQUALIZE_GLOBAL)
    e.histograms = calloc((size_t)e.slots * n_bins, sizeof *e.histograms);
  int status = LH_OK;
  if (!lut || !e.luma || (job->kind == LHI_EQUALIZE_GLOBAL && !e.histograms)) {
    status =
        lhi_error(LH_ERROR_NO_MEMORY, "out of memory for equalizing a %dx%d frame", width, height);
    goto done;
  }

  if (job->kind == LHI_EQUALIZE_LUT) {
    memcpy(lut, job->lut, n_bins * sizeof *lut);
  } else {
    lhi_pool_run_slots(pool, e.bands, e.slots, count_band, &e);
    uint64_t *histogram = e.histograms; /* slot 0's, with the others added */
    for (int slot = 1; slot < e.slots; slot++)
      for (size_t v = 0; v < n_bins; v++)
        histogram[v] += e.histograms[(size_t)slot * n_bins + v];
    lhi_build_lut(histogram, job->bit_depth, job->black, job->white, lut);
    if (job->temporal) {
      LhiTemporalKey key = lhi_temporal_key(&lhi_cpu_backend, job, width, height);
      status = lhi_temporal_host_step(job->temporal, &key, histogram, job->bit_depth, lut, n_bins);
      if (status < 0)
        goto done;
    }
  }

  /* 8-bit R'G'B': a gain per luma value, not a division per pixel (luma v
   * becomes lut[v] wherever it is). */
  const LhiFormatInfo *info = lhi_format_info(job->in.format);
  uint32_t gains[256];
  const bool gain_table = info->r >= 0 && info->sample_bytes == 1;
  if (gain_table) {
    gains[0] = 0; /* black pixels take their new luma */
    for (uint32_t v = 1; v < 256; v++)
      gains[v] = lhi_gain(v, lut[v]);
  }
  e.lut = lut;
  e.gains = gain_table ? gains : NULL;
  /* The chroma first, from in's Y before it is rewritten (in place too). */
  if (job->scale_chroma && (status = lhi_cpu_scale_chroma(pool, job, NULL, lut)) < 0)
    goto done;
  lhi_pool_run_slots(pool, e.bands, e.slots, apply_band, &e);
  if (!job->scale_chroma)
    lhi_cpu_copy_chroma(pool, job);

done:
  free(lut);
  free(e.luma);
  free(e.histograms);
  return status;
}
