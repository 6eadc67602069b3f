/* stats.c: statistics and percentiles finished on the host from a histogram
 * or from a backend's exact integer moments, the same code for every backend. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lh-private.h"

/* Percentiles are taken to PERCENT_SCALE parts of a percent, so that the rank
 * of p = 99.9 is exact integer arithmetic and not at the mercy of 99.9 having
 * no exact binary form (99.9 / 100 * 1000 would round up to 1000). */
#define PERCENT_SCALE 1000000ULL

uint64_t lhi_percentile_rank(double p, uint64_t count)
{
  if (count == 0)
    return 0;
  unsigned __int128 scaled = (unsigned __int128)llround(p * (double)PERCENT_SCALE);
  unsigned __int128 whole = 100 * (unsigned __int128)PERCENT_SCALE;
  uint64_t rank = (uint64_t)((scaled * count + whole - 1) / whole);
  if (rank < 1)
    rank = 1;
  if (rank > count)
    rank = count;
  return rank;
}

void lhi_range_limits(int bit_depth, LhRange range, uint32_t *black, uint32_t *white)
{
  if (range == LH_RANGE_LIMITED) {
    *black = 16u << (bit_depth - 8);
    *white = 235u << (bit_depth - 8);
  } else {
    *black = 0;
    *white = (1u << bit_depth) - 1;
  }
}

void lhi_moments_from_histogram(const uint64_t *histogram, int bit_depth, LhRange range,
                                LhiMoments *moments)
{
  uint32_t n_bins = 1u << bit_depth, black, white;
  lhi_range_limits(bit_depth, range, &black, &white);
  memset(moments, 0, sizeof *moments);
  moments->clipped_low = histogram[0];
  moments->clipped_high = histogram[n_bins - 1];
  /* The occupied span first, then sums over it with no test a bin: the
   * loop that takes 65536 bins of 16-bit luma at the pace of a frame. */
  uint32_t first = 0;
  while (first < n_bins && histogram[first] == 0)
    first++;
  if (first == n_bins)
    return; /* no pixels: every moment 0 */
  uint32_t last = n_bins - 1;
  while (histogram[last] == 0)
    last--;
  moments->min = first;
  moments->max = last;
  uint64_t count = 0;
  unsigned __int128 sum = 0, sum_squares = 0;
  for (uint32_t v = first; v <= last; v++) {
    const uint64_t h = histogram[v];
    count += h;
    sum += (unsigned __int128)h * v;
    sum_squares += (unsigned __int128)h * ((uint64_t)v * v);
  }
  moments->count = count;
  moments->sum = sum;
  moments->sum_squares = sum_squares;
  if (range == LH_RANGE_LIMITED) {
    for (uint32_t v = 0; v < black; v++)
      moments->below_legal += histogram[v];
    for (uint32_t v = white + 1; v < n_bins; v++)
      moments->above_legal += histogram[v];
  }
}

/* The ranks' slots in increasing order of rank, so that one walk of the
 * CDF visits them all. */
static void order_ranks(const uint64_t *ranks, int n_ranks, int *order)
{
  for (int i = 0; i < n_ranks; i++) {
    int j = i;
    while (j > 0 && ranks[order[j - 1]] > ranks[i]) {
      order[j] = order[j - 1];
      j--;
    }
    order[j] = i;
  }
}

void lhi_values_from_histogram(const uint64_t *histogram, int bit_depth, const uint64_t *ranks,
                               int n_ranks, uint32_t *values)
{
  int order[LHI_MAX_RANKS];
  order_ranks(ranks, n_ranks, order);
  uint32_t n_bins = 1u << bit_depth, v = 0;
  uint64_t cumulative = histogram[0];
  for (int k = 0; k < n_ranks; k++) {
    uint64_t rank = ranks[order[k]];
    while (cumulative < rank && v + 1 < n_bins)
      cumulative += histogram[++v];
    values[order[k]] = v;
  }
}

/* The count of bins [first, end) of a 65536-bin histogram: whole blocks
 * from their sums, the bins of a block cut by first or end one by one. */
static uint64_t count_between(const uint64_t *histogram, const LhiBlockSums *blocks, uint32_t first,
                              uint32_t end)
{
  uint64_t count = 0;
  uint32_t v = first;
  for (; v < end && v % LHI_BLOCK_BINS != 0; v++)
    count += histogram[v];
  for (; v + LHI_BLOCK_BINS <= end; v += LHI_BLOCK_BINS)
    count += blocks->count[v / LHI_BLOCK_BINS];
  for (; v < end; v++)
    count += histogram[v];
  return count;
}

void lhi_moments_from_blocks(const uint64_t *histogram, const LhiBlockSums *blocks, LhRange range,
                             LhiMoments *moments)
{
  const uint32_t n_bins = 65536;
  uint32_t black, white;
  lhi_range_limits(16, range, &black, &white);
  memset(moments, 0, sizeof *moments);
  moments->clipped_low = histogram[0];
  moments->clipped_high = histogram[n_bins - 1];
  int first_block = 0;
  while (first_block < LHI_BLOCKS && blocks->count[first_block] == 0)
    first_block++;
  if (first_block == LHI_BLOCKS)
    return; /* no pixels: every moment 0 */
  int last_block = LHI_BLOCKS - 1;
  while (blocks->count[last_block] == 0)
    last_block--;
  uint32_t first = (uint32_t)first_block * LHI_BLOCK_BINS;
  while (histogram[first] == 0)
    first++;
  uint32_t last = (uint32_t)last_block * LHI_BLOCK_BINS + LHI_BLOCK_BINS - 1;
  while (histogram[last] == 0)
    last--;
  moments->min = first;
  moments->max = last;
  /* With v = base + j: Σ h v = base Σ h + Σ h j and Σ h v² = base² Σ h +
   * 2 base Σ h j + Σ h j², the same integers as lhi_moments_from_histogram's
   * sums (exact in 128 bits). */
  uint64_t count = 0;
  unsigned __int128 sum = 0, sum_squares = 0;
  for (int b = first_block; b <= last_block; b++) {
    const uint64_t base = (uint64_t)b * LHI_BLOCK_BINS, h = blocks->count[b];
    count += h;
    sum += (unsigned __int128)base * h + blocks->sum[b];
    sum_squares += (unsigned __int128)(base * base) * h +
                   (unsigned __int128)(2 * base) * blocks->sum[b] + blocks->sum_squares[b];
  }
  moments->count = count;
  moments->sum = sum;
  moments->sum_squares = sum_squares;
  if (range == LH_RANGE_LIMITED) {
    moments->below_legal = count_between(histogram, blocks, 0, black);
    moments->above_legal = count_between(histogram, blocks, white + 1, n_bins);
  }
}

void lhi_values_from_blocks(const uint64_t *histogram, const LhiBlockSums *blocks,
                            const uint64_t *ranks, int n_ranks, uint32_t *values)
{
  int order[LHI_MAX_RANKS];
  order_ranks(ranks, n_ranks, order);
  /* The block where the CDF first reaches the rank (or the last), then
   * the bin in it: the smallest v with count(<= v) >= rank, as
   * lhi_values_from_histogram's walk finds it (the top bin where none). */
  int b = 0;
  uint64_t before = 0; /* the count of the blocks before b */
  for (int k = 0; k < n_ranks; k++) {
    const uint64_t rank = ranks[order[k]];
    while (b + 1 < LHI_BLOCKS && before + blocks->count[b] < rank)
      before += blocks->count[b++];
    uint32_t v = (uint32_t)b * LHI_BLOCK_BINS;
    uint64_t cumulative = before + histogram[v];
    while (cumulative < rank && v + 1 < 65536)
      cumulative += histogram[++v];
    values[order[k]] = v;
  }
}

LH_API double lh_normalize(double value, int bit_depth, LhRange range)
{
  /* Limited range is defined from 8 bits up (16 << (bit_depth - 8)). */
  if (bit_depth < 1 || bit_depth > 16 || (range != LH_RANGE_FULL && range != LH_RANGE_LIMITED) ||
      (range == LH_RANGE_LIMITED && bit_depth < 8))
    return NAN;
  uint32_t black, white;
  lhi_range_limits(bit_depth, range, &black, &white);
  return (value - (double)black) / (double)(white - black);
}

/* count·Σv² − (Σv)², the variance times count², exactly while it fits. */
static double variance(const LhiMoments *m)
{
  double n = (double)m->count;
  if (m->count < ((uint64_t)1 << 47)) {
    unsigned __int128 a = m->sum_squares * m->count;
    unsigned __int128 b = m->sum * m->sum;
    return a > b ? (double)(a - b) / (n * n) : 0.0;
  }
  long double mean = (long double)m->sum / n;
  long double v = (long double)m->sum_squares / n - mean * mean;
  return v > 0 ? (double)v : 0.0;
}

int lhi_stats_reserve(LhStats *stats, int bit_depth)
{
  size_t n_bins = (size_t)1 << bit_depth;
  if (stats->histogram && stats->n_bins == n_bins)
    return LH_OK;
  uint64_t *histogram = realloc(stats->histogram, n_bins * sizeof *histogram);
  if (!histogram)
    return lhi_error(LH_ERROR_NO_MEMORY, "out of memory for a %zu-bin histogram", n_bins);
  stats->histogram = histogram;
  stats->n_bins = n_bins;
  return LH_OK;
}

int lhi_stats_finish(LhStats *stats, int bit_depth, LhMatrix matrix, LhRange range,
                     const LhOptions *options, const LhiMoments *moments, const uint32_t *values)
{
  uint32_t black, white;
  lhi_range_limits(bit_depth, range, &black, &white);
  double scale = (double)(white - black);
  double n = (double)moments->count;

  stats->bit_depth = bit_depth;
  stats->matrix = matrix;
  stats->range = range;
  stats->count = moments->count;
  stats->mean = moments->count ? (double)moments->sum / n : 0.0;
  stats->stddev = moments->count ? sqrt(variance(moments)) : 0.0;
  stats->min = moments->min;
  stats->max = moments->max;
  stats->median = values[0];
  stats->clipped_low_count = moments->clipped_low;
  stats->clipped_high_count = moments->clipped_high;
  stats->below_legal_count = moments->below_legal;
  stats->above_legal_count = moments->above_legal;
  stats->clipped_low = moments->count ? (double)moments->clipped_low / n : 0.0;
  stats->clipped_high = moments->count ? (double)moments->clipped_high / n : 0.0;
  stats->below_legal = moments->count ? (double)moments->below_legal / n : 0.0;
  stats->above_legal = moments->count ? (double)moments->above_legal / n : 0.0;
  stats->mean_norm = lh_normalize(stats->mean, bit_depth, range);
  stats->stddev_norm = stats->stddev / scale;
  stats->min_norm = lh_normalize(stats->min, bit_depth, range);
  stats->max_norm = lh_normalize(stats->max, bit_depth, range);
  stats->median_norm = lh_normalize(stats->median, bit_depth, range);
  stats->n_percentiles = options->n_percentiles;
  for (int i = 0; i < options->n_percentiles; i++) {
    stats->percentile_p[i] = options->percentiles[i];
    stats->percentile_value[i] = values[i + 1];
    stats->percentile_norm[i] = lh_normalize(values[i + 1], bit_depth, range);
  }
  return LH_OK;
}

/* The ranks the median and the options' percentiles ask for. */
int lhi_fill_ranks(const LhOptions *options, uint64_t count, uint64_t *ranks)
{
  ranks[0] = lhi_percentile_rank(50.0, count);
  for (int i = 0; i < options->n_percentiles; i++)
    ranks[i + 1] = lhi_percentile_rank(options->percentiles[i], count);
  return 1 + options->n_percentiles;
}

LH_API void lh_stats_init(LhStats *stats)
{
  if (stats)
    memset(stats, 0, sizeof *stats);
}

LH_API void lh_stats_clear(LhStats *stats)
{
  if (!stats)
    return;
  free(stats->histogram);
  memset(stats, 0, sizeof *stats);
}

int lhi_options_validate(const LhOptions *options)
{
  if (options->matrix < LH_MATRIX_BT601 || options->matrix > LH_MATRIX_BT2020)
    return lhi_error(LH_ERROR_INVALID_ARGUMENT, "unknown matrix %d", (int)options->matrix);
  if (options->range != LH_RANGE_FULL && options->range != LH_RANGE_LIMITED)
    return lhi_error(LH_ERROR_INVALID_ARGUMENT, "unknown range %d", (int)options->range);
  if (options->percentile_method < LH_PERCENTILE_AUTO ||
      options->percentile_method > LH_PERCENTILE_SORT)
    return lhi_error(LH_ERROR_INVALID_ARGUMENT, "unknown percentile method %d",
                     (int)options->percentile_method);
  if (options->n_percentiles < 0 || options->n_percentiles > LH_MAX_PERCENTILES)
    return lhi_error(LH_ERROR_INVALID_ARGUMENT, "%d percentiles: at most %d may be asked for",
                     options->n_percentiles, LH_MAX_PERCENTILES);
  for (int i = 0; i < options->n_percentiles; i++)
    if (!(options->percentiles[i] >= 0.0 && options->percentiles[i] <= 100.0))
      /* %.15g: %g wrote 100.0000001 as "100", inside the range it names. */
      return lhi_error(LH_ERROR_INVALID_ARGUMENT, "percentile %.15g is outside [0, 100]",
                       options->percentiles[i]);
  return LH_OK;
}

LH_API int lh_stats_from_histogram(const uint64_t *histogram, int bit_depth,
                                   const LhOptions *options, LhStats *stats)
{
  LhOptions defaults;
  if (!options) {
    lh_options_init(&defaults);
    options = &defaults;
  }
  if (!histogram || !stats)
    return lhi_error(LH_ERROR_INVALID_ARGUMENT, "histogram or stats is NULL");
  if (bit_depth < 8 || bit_depth > 16)
    return lhi_error(LH_ERROR_INVALID_ARGUMENT, "bit depth %d is outside 8..16", bit_depth);
  int status = lhi_options_validate(options);
  if (status < 0)
    return status;
  /* The pixel count and the ranks are 64-bit: counts that sum past 2^64
   * would wrap them quietly. */
  uint64_t total = 0;
  for (size_t v = 0; v < ((size_t)1 << bit_depth); v++)
    if (__builtin_add_overflow(total, histogram[v], &total))
      return lhi_error(LH_ERROR_INVALID_ARGUMENT,
                       "the histogram's counts sum past 2^64 - 1 pixels");
  status = lhi_stats_reserve(stats, bit_depth);
  if (status < 0)
    return status;
  if (stats->histogram != histogram)
    memcpy(stats->histogram, histogram, stats->n_bins * sizeof *histogram);

  LhiMoments moments;
  lhi_moments_from_histogram(histogram, bit_depth, options->range, &moments);
  uint64_t ranks[LHI_MAX_RANKS];
  uint32_t values[LHI_MAX_RANKS] = {0};
  int n_ranks = lhi_fill_ranks(options, moments.count, ranks);
  if (moments.count)
    lhi_values_from_histogram(histogram, bit_depth, ranks, n_ranks, values);
  return lhi_stats_finish(stats, bit_depth, options->matrix, options->range, options, &moments,
                          values);
}
