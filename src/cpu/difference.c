/* cpu/difference.c: the frame difference on the CPU: the frame's rows split
 * into parts across the context's threads, each part's luma made into keys
 * (cpu/luma-rows.c), compared with the previous frame's and kept in its
 * place.  The threads' sums are integers added after: the same on any
 * number of threads. */
#include <stdlib.h>
#include <string.h>

#include "lh-private.h"

/* The previous frame's luma: width keys a row, rows one after the other. */
typedef struct {
  uint8_t *previous;
  size_t row_bytes;
  /* a row of keys for each thread, where the frame's rows are not keys already */
  uint8_t *scratch;
  size_t scratch_size;
} CpuDifference;

static void cpu_difference_free(void *data)
{
  CpuDifference *c = data;
  if (!c)
    return;
  free(c->previous);
  free(c->scratch);
  free(c);
}

static const LhiDifferenceOps cpu_difference_ops = {.free = cpu_difference_free};

typedef struct {
  const LhiDifferenceJob *job;
  const LhiFormatInfo *info;
  CpuDifference *data;
  int bands;                      /* parts of rows, a few a thread */
  int slots;                      /* the threads (lhi_pool_run_slots) */
  bool direct;                    /* the frame's rows are the keys (8-bit samples, one a pixel) */
  uint64_t sums[LHI_MAX_THREADS]; /* by thread */
} DifferenceBands;

/* Row y's keys: the frame's own row where its samples are the keys, else
 * the thread's row `keys`, made from it. */
static const void *row_keys(const DifferenceBands *d, int y, void *keys)
{
  const LhFrame *frame = &d->job->frame;
  const uint8_t *row = (const uint8_t *)frame->planes[0] + (size_t)y * frame->strides[0];
  const LhiFormatInfo *info = d->info;
  if (d->direct)
    return row;
  if (info->chroma == LHI_CHROMA_V210) {
    lhi_v210_keys_row(row, frame->width, keys);
  } else if (info->sample_bytes == 2) {
    lhi_y16_keys_row(row, frame->width, info->luma_shift, (1u << d->job->bit_depth) - 1,
                     info->big_endian, keys);
  } else { /* packed 4:2:2: Y every other byte */
    uint8_t *k = keys;
    row += info->luma_offset;
    for (int x = 0; x < frame->width; x++)
      k[x] = row[2 * (size_t)x];
  }
  return keys;
}

static void difference_band(int band, int slot, void *arg)
{
  DifferenceBands *d = arg;
  const LhFrame *frame = &d->job->frame;
  CpuDifference *c = d->data;
  const int key_bytes = lhi_difference_key_bytes(d->info);
  void *keys = d->direct ? NULL : c->scratch + (size_t)slot * c->row_bytes;
  uint64_t sum = 0;
  for (int y = lhi_band_start(band, d->bands, frame->height),
           end = lhi_band_start(band + 1, d->bands, frame->height);
       y < end; y++) {
    const void *row = row_keys(d, y, keys);
    uint8_t *previous = c->previous + (size_t)y * c->row_bytes;
    if (!d->job->compare)
      memcpy(previous, row, c->row_bytes);
    else if (key_bytes == 1)
      sum += lhi_difference_row_u8(row, previous, frame->width);
    else
      sum += lhi_difference_row_u16(row, (uint16_t *)(void *)previous, frame->width);
  }
  d->sums[slot] += sum;
}

static CpuDifference *cpu_difference_new(const LhiDifferenceJob *job, const LhiFormatInfo *info)
{
  CpuDifference *c = calloc(1, sizeof *c);
  if (!c)
    return NULL;
  c->row_bytes = (size_t)job->frame.width * (size_t)lhi_difference_key_bytes(info);
  c->previous = malloc(c->row_bytes * (size_t)job->frame.height);
  if (!c->previous) {
    free(c);
    return NULL;
  }
  return c;
}

int lhi_cpu_difference(void *state, LhDifference *difference, LhiDifferenceJob *job)
{
  const LhFrame *frame = &job->frame;
  if (frame->memory != LH_MEMORY_HOST)
    return lhi_error(LH_ERROR_UNSUPPORTED,
                     "the CPU backend cannot read frames in CUDA device memory");
  const LhiFormatInfo *info = lhi_format_info(frame->format);
  CpuDifference *c = difference->data;
  if (!c) {
    c = cpu_difference_new(job, info);
    if (!c)
      return lhi_error(LH_ERROR_NO_MEMORY, "out of memory for the luma of a %dx%d frame",
                       frame->width, frame->height);
    lhi_difference_attach(difference, &cpu_difference_ops, c);
  }

  LhiPool *pool = state ? ((LhiCpuState *)state)->pool : NULL;
  DifferenceBands d = {
      .job = job,
      .info = info,
      .data = c,
      .bands = lhi_part_count(pool, frame->width, frame->height),
      .direct = info->sample_bytes == 1 && info->pixel_bytes == 1,
  };
  d.slots = lhi_slot_count(pool, d.bands);
  if (!d.direct) {
    size_t need = (size_t)d.slots * c->row_bytes;
    if (need > c->scratch_size) {
      uint8_t *scratch = malloc(need);
      if (!scratch)
        return lhi_error(LH_ERROR_NO_MEMORY, "out of memory for %d rows of luma", d.slots);
      free(c->scratch);
      c->scratch = scratch;
      c->scratch_size = need;
    }
  }
  lhi_pool_run_slots(pool, d.bands, d.slots, difference_band, &d);
  job->sum = 0;
  for (int slot = 0; slot < d.slots; slot++)
    job->sum += d.sums[slot];
  return LH_OK;
}
