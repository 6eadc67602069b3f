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

/* The luma key of pixel x of a row, for every format: the one definition
 * that the fast row loops below must match. */
static inline uint32_t pixel_key(const LhiFormatInfo *info, const uint8_t *row, int x, uint32_t max,
                                 LhiLumaWeights w)
{
  if (info->chroma == LHI_CHROMA_V210) {
    uint32_t words[4];
    memcpy(words, row + (size_t)(x / 6) * LHI_V210_GROUP_BYTES, sizeof words);
    return lhi_v210_get(words, lhi_v210_y_field(x % 6));
  }
  const uint8_t *px = row + (size_t)x * (size_t)info->pixel_bytes;
  if (info->r >= 0 && info->sample_bytes == 1)
    return lhi_luma(px[info->r], px[info->g], px[info->b], w);
  if (lhi_format_is_packed10_rgb(info))
    return lhi_packed10_luma(lhi_load_word(px, info->big_endian), info, w);
  if (info->r >= 0)
    return lhi_clamp_sample(lhi_luma_wide(load16(px + 2 * info->r), load16(px + 2 * info->g),
                                          load16(px + 2 * info->b), w),
                            max);
  if (info->sample_bytes == 2) {
    uint32_t v = load16(px);
    return lhi_clamp_sample((info->big_endian ? lhi_swap16(v) : v) >> info->luma_shift, max);
  }
  return px[info->luma_offset];
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
    for (int y_ = (first_row); y_ < (end_row); y_++) {                                             \
      const uint8_t *row_ = row_at((frame), y_);                                                   \
      for (int x_ = 0; x_ < (frame)->width; x_++) {                                                \
        uint32_t key = pixel_key(info_, row_, x_, max_, (job)->weights);                           \
        KEY_STATEMENT;                                                                             \
      }                                                                                            \
    }                                                                                              \
  } while (0)

/* Does the format's luma come from 16-bit samples (GRAY16 either way
 * round, the Y plane of the 10, 12 and 16-bit formats, 16-bit R'G'B') or
 * v210's fields, counted as keys? */
static bool counts_keys(const LhiFormatInfo *info)
{
  return info->sample_bytes == 2 || info->chroma == LHI_CHROMA_V210;
}

/* Keys counted into histogram by the row loops of cpu/luma-rows.c: the Y
 * of 16-bit words and of v210, and the luma of 16-bit R'G'B', counted as
 * their keys are made.  16-bit keys count into narrow, this
 * band's 8-bit counters (zeroed) and carries, which the caller adds in;
 * without narrow, into histogram (zeroed, this band's alone). */
static void histogram_rows_keys(const LhiJob *job, int y0, int y1, uint64_t *histogram,
                                LhiNarrow *narrow)
{
  const LhFrame *frame = &job->frame;
  const LhiFormatInfo *info = lhi_format_info(frame->format);
  const uint32_t max = (1u << job->bit_depth) - 1;
  const int width = frame->width;
  LhiCount16 c;
  if (job->bit_depth == 16 && narrow) {
    lhi_count16_begin_narrow(&c, narrow);
  } else if (job->bit_depth == 16 || lhi_count16_begin(&c, histogram, job->bit_depth) < 0) {
    /* no memory for the counters: the general loop, which needs none */
    FOR_EACH_LUMA_IN(frame, job, y0, y1, histogram[key]++);
    return;
  }
  /* 16-bit Y in little-endian words whole: counted as they lie.  (Big-
   * endian ones through keys made and swapped 32 at a time: swapped one
   * by one in the counting loop, or counted as they lie into counters
   * swapped back at the end, they measured slower.) */
  const bool words = job->bit_depth == 16 && info->r < 0 && info->luma_shift == 0 &&
                     !info->big_endian && info->chroma != LHI_CHROMA_V210;
  /* 16-bit R'G'B': the weight of each sample. */
  uint32_t sample_weights[3] = {0, 0, 0};
  if (info->r >= 0) {
    sample_weights[info->r] = job->weights.kr;
    sample_weights[info->g] = job->weights.kg;
    sample_weights[info->b] = job->weights.kb;
  }
  for (int y = y0; y < y1; y++) {
    if (words) {
      lhi_count16_words_row(&c, row_at(frame, y), width);
      continue;
    }
    if (info->chroma == LHI_CHROMA_V210) {
      lhi_count16_v210_row(&c, row_at(frame, y), width);
    } else if (info->r >= 0) {
      lhi_count16_rgb16_row(&c, row_at(frame, y), width, info->pixel_bytes, sample_weights,
                            job->weights, max);
    } else {
      lhi_count16_y16_row(&c, row_at(frame, y), width, info->luma_shift, max, info->big_endian);
    }
  }
  lhi_count16_end(&c);
}

/* 8-bit R'G'B' (3 or 4 bytes a pixel, any order): each row's luma made and
 * counted a few pixels at a time (lhi_count8_rgb_row, vectorized). */
static void histogram_rows_rgb8(const LhiJob *job, int y0, int y1, uint64_t *histogram)
{
  const LhFrame *frame = &job->frame;
  const int width = frame->width, pixel_bytes = lhi_format_info(frame->format)->pixel_bytes;
  uint32_t weights[4];
  lhi_byte_weights(frame->format, job->weights, weights);
  LhiCount8 count;
  lhi_count8_begin(&count, histogram);
  for (int y = y0; y < y1; y++)
    lhi_count8_rgb_row(&count, row_at(frame, y), width, pixel_bytes, weights);
  lhi_count8_end(&count);
}

/* Packed 10-bit R'G'B': each row's keys counted as they are made
 * (lhi_count16_packed10_row, vectorized; the weights permuted to field
 * order once). */
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
  LhiCount16 c;
  if (lhi_count16_begin(&c, histogram, job->bit_depth) < 0) { /* no memory: the general loop */
    FOR_EACH_LUMA_IN(frame, job, y0, y1, histogram[key]++);
    return;
  }
  for (int y = y0; y < y1; y++)
    lhi_count16_packed10_row(&c, row_at(frame, y), frame->width, big, fw);
  lhi_count16_end(&c);
}

/* Counts rows [y0, y1) of the job's frame into histogram (zeroed), 16-bit
 * keys through narrow (histogram_rows_keys). */
static void histogram_rows(const LhiJob *job, int y0, int y1, uint64_t *histogram,
                           LhiNarrow *narrow)
{
  const LhFrame *frame = &job->frame;
  const LhiFormatInfo *info = lhi_format_info(frame->format);
  if (info->r >= 0 && info->sample_bytes == 1) {
    histogram_rows_rgb8(job, y0, y1, histogram);
    return;
  }
  if (lhi_format_is_packed10_rgb(info)) {
    histogram_rows_packed10(job, y0, y1, histogram);
    return;
  }
  if (info->r < 0 && info->sample_bytes == 1) {
    /* 8-bit Y, alone (gray, planar and semi-planar YUV) or every other
     * byte (packed 4:2:2): the samples are the luma. */
    const int step = info->pixel_bytes;
    LhiCount8 count;
    lhi_count8_begin(&count, histogram);
    for (int y = y0; y < y1; y++) {
      const uint8_t *row = row_at(frame, y) + info->luma_offset;
      if (step == 1)
        lhi_count8_row(&count, row, frame->width);
      else
        lhi_count8_row_step2(&count, row, frame->width);
    }
    lhi_count8_end(&count);
    return;
  }
  if (counts_keys(info)) {
    histogram_rows_keys(job, y0, y1, histogram, narrow);
    return;
  }
  FOR_EACH_LUMA_IN(frame, job, y0, y1, histogram[key]++);
}

/* Each thread zeroes its own histogram (histogram_part).  Histograms of
 * more than this many bins are then added up by all the threads, each a
 * range of bins: zeroed one after another on the calling thread, 16
 * bands' 65536 counters (1 MiB) or 4096 bins (512 KiB), with the bins then
 * added up there, took 10 to 30 % of a 4K frame's time on 16 cores.  Up
 * to it the calling thread adds: 15 threads' 1024 bins are a few
 * microseconds of adding, about what waking the threads again costs (and
 * of three runs on 16 cores, two had 10-bit frames slower the other way,
 * one faster). */
#define BANDS_SHARE_MIN_BINS 1024

typedef struct {
  const LhiJob *job;
  int bands;    /* parts of rows, a few a thread */
  int slots;    /* threads that count (lhi_pool_run_slots) */
  int n_narrow; /* 16-bit keys: the slots that counted, first in narrow (add_narrow_part) */
  size_t bins;
  uint64_t *histograms;       /* slots x bins, added into the job's; NULL: one slot, the job's */
  bool used[LHI_MAX_THREADS]; /* whether the slot counted (its histogram zeroed) */
  LhiNarrow *narrow;          /* 16-bit keys: each slot's counters and carries, and no histograms */
  LhiBlockSums *blocks;       /* 16-bit keys: the sums kept as the counters are added in */
} HistogramBands;

static uint64_t *slot_histogram(const HistogramBands *h, int slot)
{
  return h->histograms ? h->histograms + (size_t)slot * h->bins : h->job->histogram;
}

/* 16-bit keys: the rows of `part` into the 8-bit counters of the thread
 * that takes it, zeroed by its first part (its carries go on from where
 * its last part left them). */
static void narrow_part(int part, int slot, void *data)
{
  HistogramBands *h = data;
  int height = h->job->frame.height;
  if (!h->used[slot]) {
    memset(h->narrow[slot].counters, 0, 65536);
    h->used[slot] = true;
  }
  histogram_rows(h->job, lhi_band_start(part, h->bands, height),
                 lhi_band_start(part + 1, h->bands, height), h->job->histogram, &h->narrow[slot]);
}

/* The rows of `part` into the histogram of the thread that takes it,
 * zeroed by its first part. */
static void histogram_part(int part, int slot, void *data)
{
  HistogramBands *h = data;
  int height = h->job->frame.height;
  uint64_t *histogram = slot_histogram(h, slot);
  if (!h->used[slot]) {
    memset(histogram, 0, h->bins * sizeof *histogram);
    h->used[slot] = true;
  }
  histogram_rows(h->job, lhi_band_start(part, h->bands, height),
                 lhi_band_start(part + 1, h->bands, height), histogram, NULL);
}

/* Sets bins [first, end) of the job's histogram to the sums of the slots
 * that counted (at least one: there is a part). */
static void add_slot_histograms(const HistogramBands *h, size_t first, size_t end)
{
  uint64_t *histogram = h->job->histogram;
  bool first_slot = true;
  for (int slot = 0; slot < h->slots; slot++) {
    if (!h->used[slot])
      continue;
    const uint64_t *counted = slot_histogram(h, slot);
    if (first_slot)
      memcpy(histogram + first, counted + first, (end - first) * sizeof *histogram);
    else
      for (size_t v = first; v < end; v++)
        histogram[v] += counted[v];
    first_slot = false;
  }
}

/* add_slot_histograms by every thread, each a range of bins: more than
 * BANDS_SHARE_MIN_BINS. */
static void add_slot_histograms_part(int part, void *data)
{
  const HistogramBands *h = data;
  add_slot_histograms(h, h->bins * (size_t)part / (size_t)h->slots,
                      h->bins * (size_t)(part + 1) / (size_t)h->slots);
}

/* Each thread adds every band's 8-bit counters and carries of a range of
 * blocks of bins, and keeps their sums. */
static void add_narrow_part(int part, void *data)
{
  HistogramBands *h = data;
  lhi_count16_add_narrow(h->job->histogram, h->narrow, h->n_narrow, LHI_BLOCKS * part / h->slots,
                         LHI_BLOCKS * (part + 1) / h->slots, h->blocks);
}

/* Each slot's 65536 8-bit counters (zeroed by its first part: narrow_part)
 * and room for its carries, in one allocation after the slots' LhiNarrow;
 * NULL without memory.  A slot may take every part, so each has room for
 * the whole frame's carries (an 8-bit counter wraps once in 256 keys):
 * memory only reserved, written as counters wrap. */
static LhiNarrow *narrow_new(const LhFrame *frame, int slots)
{
  const size_t room = (size_t)frame->width * (size_t)frame->height / 256 + 1;
  const size_t head = (size_t)slots * sizeof(LhiNarrow), counters = (size_t)slots * 65536;
  LhiNarrow *narrow = malloc(head + counters + (size_t)slots * room * sizeof(uint16_t));
  if (!narrow)
    return NULL;
  uint8_t *memory = (uint8_t *)narrow + head;
  uint16_t *carry = (uint16_t *)(memory + counters);
  for (int slot = 0; slot < slots; slot++) {
    narrow[slot].counters = memory + (size_t)slot * 65536;
    narrow[slot].carries = carry + (size_t)slot * room;
    narrow[slot].n_carries = 0;
  }
  return narrow;
}

/* Counts the job's frame into its histogram.  Returns whether blocks got
 * the 65536 bins' sums (16-bit keys through the narrow counters). */
static bool histogram_frame(LhiCpuState *state, const LhiJob *job, LhiBlockSums *blocks)
{
  const LhFrame *frame = &job->frame;
  const size_t bins = (size_t)1 << job->bit_depth;
  /* state NULL: the calling thread alone */
  LhiPool *pool = state ? state->pool : NULL;
  HistogramBands h = {.job = job, .bins = bins, .blocks = blocks};
  /* Parts of rows, a few a thread, each counted into the counters of the
   * thread that takes it. */
  h.bands = lhi_part_count(pool, frame->width, frame->height);
  h.slots = lhi_slot_count(pool, h.bands);
  if (job->bit_depth == 16 && counts_keys(lhi_format_info(frame->format))) {
    /* 16-bit keys: every thread's own 8-bit counters (64 KiB) and carries,
     * added into the bins by all the threads at the end, which write each
     * bin whole: no thread has 65536 64-bit bins to zero and add up, and
     * the bins need no zeroing.  (A frame of 2^32 pixels or more, whose
     * sums the blocks cannot take: the general loop.) */
    const uint64_t pixels = (uint64_t)frame->width * (uint64_t)frame->height;
    if (pixels < LHI_BLOCK_SUMS_MAX_COUNT)
      h.narrow = narrow_new(frame, h.slots);
    if (!h.narrow) { /* the general loop, on one thread */
      h.bands = h.slots = 1;
      lhi_pool_run_slots(pool, 1, 1, histogram_part, &h);
      return false;
    }
    lhi_pool_run_slots(pool, h.bands, h.slots, narrow_part, &h);
    /* The slots that counted first, for lhi_count16_add_narrow. */
    for (int slot = 0; slot < h.slots; slot++)
      if (h.used[slot])
        h.narrow[h.n_narrow++] = h.narrow[slot];
    lhi_pool_run(pool, h.slots, add_narrow_part, &h);
    free(h.narrow);
    return true;
  }
  if (h.slots > 1 && !(h.histograms = malloc((size_t)h.slots * bins * sizeof *h.histograms)))
    h.slots = 1; /* no memory for the threads' histograms: one thread */
  lhi_pool_run_slots(pool, h.bands, h.slots, histogram_part, &h);
  /* The threads' histograms added up: wide ones by all the threads, each
   * a range of bins; up to BANDS_SHARE_MIN_BINS by this one. */
  if (h.histograms && bins > BANDS_SHARE_MIN_BINS)
    lhi_pool_run(pool, h.slots, add_slot_histograms_part, &h);
  else if (h.histograms)
    add_slot_histograms(&h, 0, bins);
  free(h.histograms);
  return false;
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
    LhiBlockSums blocks;
    const bool by_blocks = histogram_frame(state, job, &blocks);
    if (by_blocks)
      lhi_moments_from_blocks(job->histogram, &blocks, job->range, &job->moments);
    else
      lhi_moments_from_histogram(job->histogram, job->bit_depth, job->range, &job->moments);
    if (job->use_sort) {
      int status = values_by_sort(job);
      if (status < 0)
        return status;
    } else if (by_blocks) {
      lhi_values_from_blocks(job->histogram, &blocks, job->ranks, job->n_ranks, job->values);
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
    .difference = lhi_cpu_difference,
};
