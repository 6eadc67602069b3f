/* chroma.c: LH_CHROMA_SCALE on the CPU backend: each chroma sample of an
 * 8-bit planar or semi-planar YUV frame scaled about 128 by the gain of the
 * luma of its footprint (lhi_scale_chroma), in bands of chroma rows. */
#include <stdlib.h>
#include <string.h>

#include "lh-private.h"

typedef struct {
  const LhiEqualizeJob *job;
  const uint16_t *old_luma; /* NULL: in's Y plane */
  const uint16_t *lut;      /* NULL: out's Y plane holds the new luma */
  int bands;                /* parts of the chroma rows, a few a thread */
  int slots;                /* the threads (lhi_pool_run_slots) */
  int rows;                 /* chroma rows */
  size_t samples;           /* chroma samples of a row */
  uint32_t *sums;           /* slots x 2 x samples: old and new sums of each footprint */
} ChromaPass;

static void add_luma_row(const ChromaPass *c, int y, int x_shift, uint32_t *sum, uint32_t *sum_new)
{
  const LhiEqualizeJob *job = c->job;
  const int width = job->in.width;
  const uint8_t *out_y = (const uint8_t *)job->out.planes[0] + (size_t)y * job->out.strides[0];
  if (c->old_luma) {
    const uint16_t *old = c->old_luma + (size_t)y * (size_t)width;
    for (int x = 0; x < width; x++) {
      sum[x >> x_shift] += old[x];
      sum_new[x >> x_shift] += c->lut ? c->lut[old[x]] : out_y[x];
    }
    return;
  }
  const uint8_t *old = (const uint8_t *)job->in.planes[0] + (size_t)y * job->in.strides[0];
  for (int x = 0; x < width; x++) {
    sum[x >> x_shift] += old[x];
    sum_new[x >> x_shift] += c->lut ? c->lut[old[x]] : out_y[x];
  }
}

static void scale_band(int band, int slot, void *data)
{
  ChromaPass *c = data;
  const LhiEqualizeJob *job = c->job;
  const LhiFormatInfo *info = lhi_format_info(job->in.format);
  uint32_t *sum = c->sums + (size_t)slot * 2 * c->samples, *sum_new = sum + c->samples;
  int plane[2];
  size_t offset[2], step[2];
  for (int k = 0; k < 2; k++)
    lhi_chroma_sample_layout(&job->in, k, &plane[k], &offset[k], &step[k]);
  for (int cy = lhi_band_start(band, c->bands, c->rows);
       cy < lhi_band_start(band + 1, c->bands, c->rows); cy++) {
    memset(sum, 0, 2 * c->samples * sizeof *sum);
    const int y0 = cy << info->chroma_y_shift;
    const int y1 = y0 + (1 << info->chroma_y_shift);
    for (int y = y0; y < y1 && y < job->in.height; y++)
      add_luma_row(c, y, info->chroma_x_shift, sum, sum_new);
    for (int k = 0; k < 2; k++) {
      const uint8_t *src =
          (const uint8_t *)job->in.planes[plane[k]] + (size_t)cy * job->in.strides[plane[k]];
      uint8_t *dst = (uint8_t *)job->out.planes[plane[k]] + (size_t)cy * job->out.strides[plane[k]];
      for (size_t i = 0; i < c->samples; i++) {
        const size_t at = offset[k] + i * step[k];
        dst[at] = (uint8_t)lhi_scale_chroma(src[at], sum[i], sum_new[i]);
      }
    }
  }
}

int lhi_cpu_scale_chroma(LhiPool *pool, const LhiEqualizeJob *job, const uint16_t *old_luma,
                         const uint16_t *lut)
{
  const LhiFormatInfo *info = lhi_format_info(job->in.format);
  ChromaPass c = {.job = job, .old_luma = old_luma, .lut = lut};
  c.samples =
      (size_t)(((int64_t)job->in.width + (1 << info->chroma_x_shift) - 1) >> info->chroma_x_shift);
  c.rows =
      (int)(((int64_t)job->in.height + (1 << info->chroma_y_shift) - 1) >> info->chroma_y_shift);
  c.bands = lhi_part_count(pool, job->in.width, c.rows);
  c.slots = lhi_slot_count(pool, c.bands);
  c.sums = malloc((size_t)c.slots * 2 * c.samples * sizeof *c.sums);
  if (!c.sums)
    return lhi_error(LH_ERROR_NO_MEMORY, "out of memory for the chroma of a %dx%d frame",
                     job->in.width, job->in.height);
  lhi_pool_run_slots(pool, c.bands, c.slots, scale_band, &c);
  free(c.sums);
  return LH_OK;
}
