/* cpu/backend.c: the reference backend, plain C on the host: histogram of a
 * frame's luma, moments and percentile values, the numbers the GPU must match.
 * A frame's rows are split into bands that the context's threads count into
 * histograms of their own, summed after: the same counts on any number of
 * threads. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lh-private.h"

static const uint8_t *row_at(const LhFrame *frame, int y)
{
  return (const uint8_t *)frame->planes[0] + (size_t)y * frame->strides[0];
}

static uint16_t load16(const uint8_t *p)
{
  uint16_t v;
  memcpy(&v, p, sizeof v);
  return v;
}

/* Calls visit(key, context) for every pixel's luma key, row by row.  One
 * function for both the histogram and the sort keys keeps the luma of the
 * two methods the same by construction. */
#define FOR_EACH_LUMA(frame, job, KEY_STATEMENT)                                                   \
  FOR_EACH_LUMA_IN(frame, job, 0, (frame)->height, KEY_STATEMENT)

/* The same over rows [first_row, end_row). */
#define FOR_EACH_LUMA_IN(frame, job, first_row, end_row, KEY_STATEMENT)                            \
  do {                                                                                             \
    const LhiFormatInfo *info_ = lhi_format_info((frame)->format);                                 \
    const uint32_t max_ = (1u << (job)->bit_depth) - 1;                                            \
    const LhiLumaWeights w_ = (job)->weights;                                                      \
    for (int y_ = (first_row); y_ < (end_row); y_++) {                                             \
      const uint8_t *row_ = row_at((frame), y_);                                                   \
      for (int x_ = 0; x_ < (frame)->width; x_++) {                                                \
        const uint8_t *px_ = row_ + (size_t)x_ * (size_t)info_->pixel_bytes;                       \
        uint32_t key;                                                                              \
        if (info_->r >= 0 && info_->sample_bytes == 1)                                             \
          key = lhi_luma(px_[info_->r], px_[info_->g], px_[info_->b], w_);                         \
        else if (info_->sample_bytes == 4)                                                         \
          key = lhi_packed10_luma(                                                                 \
              lhi_load_word(px_, lhi_format_big_endian_words((frame)->format)), info_, w_);        \
        else if (info_->r >= 0)                                                                    \
          key = lhi_clamp_sample(lhi_luma_wide(load16(px_ + 2 * info_->r), load16(px_ + 2 * info_->g), \
                                          load16(px_ + 2 * info_->b), w_),                         \
                                 max_);                                                            \
        else if ((frame)->format == LH_FORMAT_P010)                                                \
          key = (uint32_t)load16(px_) >> 6;                                                        \
        else if (info_->sample_bytes == 2)                                                         \
          key = lhi_clamp_sample(load16(px_), max_);                                               \
        else                                                                                       \
          key = px_[0];                                                                            \
        KEY_STATEMENT;                                                                             \
      }                                                                                            \
    }                                                                                              \
  } while (0)

/* 8-bit R'G'B' (3 or 4 bytes a pixel, any order): the luma of a row into a
 * buffer by the vectorized row loops, then counted (lhi_count8). */
static void histogram_rows_rgb8(const LhiJob *job, int y0, int y1, uint64_t *histogram)
{
  const LhFrame *frame = &job->frame;
  const int width = frame->width, pixel_bytes = lhi_format_info(frame->format)->pixel_bytes;
  uint8_t *luma = malloc((size_t)width);
  if (!luma) { /* no memory for a row: the general loop, which needs none */
    FOR_EACH_LUMA_IN(frame, job, y0, y1, histogram[key]++);
    return;
  }
  uint32_t weights[4];
  lhi_byte_weights(frame->format, job->weights, weights);
  LhiCount8 count;
  lhi_count8_begin(&count, histogram);
  for (int y = y0; y < y1; y++) {
    lhi_luma_row_u8(row_at(frame, y), width, pixel_bytes, weights, luma);
    lhi_count8_row(&count, luma, width);
  }
  lhi_count8_end(&count);
  free(luma);
}

/* Packed 10-bit R'G'B': the fields of each word weighed in place (the
 * weights permuted to field order once), four interleaved sub-histograms so
 * that runs of one value do not wait on their own increments. */
static void histogram_rows_packed10(const LhiJob *job, int y0, int y1, uint64_t *histogram)
{
  const LhFrame *frame = &job->frame;
  const LhiFormatInfo *info = lhi_format_info(frame->format);
  const bool big = lhi_format_big_endian_words(frame->format);
  const LhiLumaWeights w = job->weights;
  uint32_t field_weight[3];
  field_weight[info->r] = w.kr;
  field_weight[info->g] = w.kg;
  field_weight[info->b] = w.kb;
  const LhiLumaWeights fw = {field_weight[0], field_weight[1], field_weight[2], w.one};
  uint32_t(*sub)[1024] = calloc(4, sizeof *sub);
  if (!sub) { /* no memory for them: the general loop */
    FOR_EACH_LUMA_IN(frame, job, y0, y1, histogram[key]++);
    return;
  }
  const int width = frame->width;
  int64_t pending = 0;
  for (int y = y0; y < y1; y++) {
    const uint8_t *row = row_at(frame, y);
    if (pending + width > INT32_MAX) { /* before a 32-bit counter could overflow */
      for (int v = 0; v < 1024; v++)
        histogram[v] += (uint64_t)sub[0][v] + sub[1][v] + sub[2][v] + sub[3][v];
      memset(sub, 0, 4 * sizeof *sub);
      pending = 0;
    }
    pending += width;
    for (int x = 0; x < width; x++) {
      const uint32_t word = lhi_load_word(row + 4 * (size_t)x, big);
      sub[x & 3][lhi_luma_wide(word & 0x3ff, (word >> 10) & 0x3ff, (word >> 20) & 0x3ff, fw)]++;
    }
  }
  for (int v = 0; v < 1024; v++)
    histogram[v] += (uint64_t)sub[0][v] + sub[1][v] + sub[2][v] + sub[3][v];
  free(sub);
}

/* Counts rows [y0, y1) of the job's frame into histogram (zeroed). */
static void histogram_rows(const LhiJob *job, int y0, int y1, uint64_t *histogram)
{
  const LhFrame *frame = &job->frame;
  const LhiFormatInfo *info = lhi_format_info(frame->format);
  if (info->r >= 0 && info->sample_bytes == 1) {
    histogram_rows_rgb8(job, y0, y1, histogram);
    return;
  }
  if (info->sample_bytes == 4) {
    histogram_rows_packed10(job, y0, y1, histogram);
    return;
  }
  if (frame->format == LH_FORMAT_GRAY8 || frame->format == LH_FORMAT_I420 ||
      frame->format == LH_FORMAT_NV12) {
    /* The common 8-bit single-sample case: the samples are the luma. */
    LhiCount8 count;
    lhi_count8_begin(&count, histogram);
    for (int y = y0; y < y1; y++)
      lhi_count8_row(&count, row_at(frame, y), frame->width);
    lhi_count8_end(&count);
    return;
  }
  FOR_EACH_LUMA_IN(frame, job, y0, y1, histogram[key]++);
}

typedef struct {
  const LhiJob *job;
  int bands;
  size_t bins;
  uint64_t *histograms; /* bands x bins; band 0 is the job's own */
} HistogramBands;

static void histogram_band(int band, void *data)
{
  HistogramBands *h = data;
  int height = h->job->frame.height;
  uint64_t *histogram = band == 0 ? h->job->histogram : h->histograms + (size_t)band * h->bins;
  histogram_rows(h->job, lhi_band_start(band, h->bands, height),
                 lhi_band_start(band + 1, h->bands, height), histogram);
}

static int histogram_frame(LhiCpuState *state, const LhiJob *job)
{
  const LhFrame *frame = &job->frame;
  const size_t bins = (size_t)1 << job->bit_depth;
  memset(job->histogram, 0, bins * sizeof *job->histogram);
  HistogramBands h = {job, lhi_band_count(state->pool, frame->width, frame->height), bins, NULL};
  if (h.bands > 1) {
    h.histograms = calloc((size_t)h.bands * bins, sizeof *h.histograms);
    if (!h.histograms)
      h.bands = 1; /* no memory for the bands' histograms: one thread */
  }
  lhi_pool_run(state->pool, h.bands, histogram_band, &h);
  for (int band = 1; band < h.bands; band++)
    for (size_t v = 0; v < bins; v++)
      job->histogram[v] += h.histograms[(size_t)band * bins + v];
  free(h.histograms);
  return LH_OK;
}

/* LSD radix sort of 16-bit keys, two 8-bit digits. */
static void radix_sort_u16(uint16_t *keys, uint16_t *scratch, size_t n)
{
  for (int shift = 0; shift < 16; shift += 8) {
    size_t offsets[257] = {0};
    for (size_t i = 0; i < n; i++)
      offsets[((keys[i] >> shift) & 0xff) + 1]++;
    for (int d = 0; d < 256; d++)
      offsets[d + 1] += offsets[d];
    for (size_t i = 0; i < n; i++)
      scratch[offsets[(keys[i] >> shift) & 0xff]++] = keys[i];
    memcpy(keys, scratch, n * sizeof *keys);
  }
}

static int values_by_sort(LhiJob *job)
{
  const LhFrame *frame = &job->frame;
  size_t n = (size_t)frame->width * (size_t)frame->height;
  uint16_t *keys = malloc(n * sizeof *keys);
  uint16_t *scratch = malloc(n * sizeof *scratch);
  if (!keys || !scratch) {
    free(keys);
    free(scratch);
    return lhi_error(LH_ERROR_NO_MEMORY, "out of memory for %zu sort keys", n);
  }
  size_t i = 0;
  FOR_EACH_LUMA(frame, job, keys[i++] = (uint16_t)key);
  radix_sort_u16(keys, scratch, n);
  for (int k = 0; k < job->n_ranks; k++)
    job->values[k] = keys[job->ranks[k] - 1];
  free(keys);
  free(scratch);
  return LH_OK;
}

static int cpu_open(void **state)
{
  *state = NULL;
  LhiCpuState *cpu = calloc(1, sizeof *cpu);
  if (!cpu)
    return lhi_error(LH_ERROR_NO_MEMORY, "out of memory for the CPU backend");
  int status = lhi_pool_new(lhi_cpu_count(), &cpu->pool);
  if (status < 0) {
    free(cpu);
    return status;
  }
  *state = cpu;
  return LH_OK;
}

static void cpu_close(void *state)
{
  LhiCpuState *cpu = state;
  if (!cpu)
    return;
  lhi_pool_free(cpu->pool);
  free(cpu);
}

static int cpu_set_threads(void *state, int threads)
{
  LhiCpuState *cpu = state;
  lhi_pool_set_threads(cpu->pool, threads > 0 ? threads : lhi_cpu_count());
  return LH_OK;
}

static int cpu_set_stream(void *state, void *cuda_stream)
{
  return LH_OK;
}

static bool cpu_prefer_sort(void *state, uint64_t pixels, int bit_depth)
{
  return false; /* a sort is O(n) passes over the keys; the CDF walk is free */
}

static int cpu_analyze(void *state, LhiJob *jobs, size_t n_jobs)
{
  for (size_t j = 0; j < n_jobs; j++) {
    LhiJob *job = &jobs[j];
    if (job->frame.memory != LH_MEMORY_HOST)
      return lhi_error(LH_ERROR_UNSUPPORTED,
                       "the CPU backend cannot read frames in CUDA device memory");
    histogram_frame(state, job);
    lhi_moments_from_histogram(job->histogram, job->bit_depth, job->range, &job->moments);
    if (job->use_sort) {
      int status = values_by_sort(job);
      if (status < 0)
        return status;
    } else {
      lhi_values_from_histogram(job->histogram, job->bit_depth, job->ranks, job->n_ranks,
                                job->values);
    }
  }
  return LH_OK;
}

const LhiBackend lhi_cpu_backend = {
    .name = "cpu",
    .kind = LH_BACKEND_CPU,
    .open = cpu_open,
    .close = cpu_close,
    .set_stream = cpu_set_stream,
    .set_threads = cpu_set_threads,
    .prefer_sort = cpu_prefer_sort,
    .analyze = cpu_analyze,
    .equalize = lhi_cpu_equalize,
    .overlay = lhi_cpu_overlay,
};
