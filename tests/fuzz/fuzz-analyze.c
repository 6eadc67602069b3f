/* fuzz-analyze.c: libFuzzer target for the library's analysis entry: a frame
 * (format, size, stride, depth, pixels), options and a region all come from
 * the input.  The call must refuse with a status and a message or succeed with
 * consistent numbers; both percentile methods and a re-computation from the
 * histogram must agree.  The pixel buffer is exactly as large as the frame
 * needs, so a read past it is caught by ASan. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../unit/test-formats.h"
#include "fuzz-common.h"

/* Consumes the input front to back; past its end every byte reads 0. */
typedef struct {
  const uint8_t *data;
  size_t size;
  size_t at;
} Reader;

static unsigned take8(Reader *r)
{
  return r->at < r->size ? r->data[r->at++] : 0;
}

static unsigned take16(Reader *r)
{
  unsigned lo = take8(r);
  return lo | (take8(r) << 8);
}

static void check_stats(const LhStats *s, uint64_t count, const LhOptions *o)
{
  FUZZ_ASSERT(s->count == count);
  FUZZ_ASSERT(s->bit_depth >= 8 && s->bit_depth <= 16 && s->n_bins == (size_t)1 << s->bit_depth);
  uint64_t total = 0, below_median = 0;
  for (size_t v = 0; v < s->n_bins; v++) {
    total += s->histogram[v];
    if (v < s->median)
      below_median += s->histogram[v];
  }
  FUZZ_ASSERT(total == count);
  FUZZ_ASSERT(s->histogram[s->min] > 0 && s->histogram[s->max] > 0);
  FUZZ_ASSERT(s->min <= s->median && s->median <= s->max);
  /* Nearest rank: fewer than half the pixels lie below the median. */
  FUZZ_ASSERT(below_median * 2 < count);
  FUZZ_ASSERT(s->mean >= s->min && s->mean <= s->max && s->stddev >= 0 && isfinite(s->stddev));
  FUZZ_ASSERT(s->clipped_low >= 0 && s->clipped_low <= 1 && s->clipped_high >= 0 &&
              s->clipped_high <= 1);
  FUZZ_ASSERT(s->n_percentiles == o->n_percentiles);
  for (int i = 0; i < s->n_percentiles; i++) {
    FUZZ_ASSERT(s->percentile_value[i] >= s->min && s->percentile_value[i] <= s->max);
    for (int j = 0; j < s->n_percentiles; j++)
      if (o->percentiles[i] <= o->percentiles[j])
        FUZZ_ASSERT(s->percentile_value[i] <= s->percentile_value[j]);
  }
}

static bool same_stats(const LhStats *a, const LhStats *b)
{
  if (a->count != b->count || a->min != b->min || a->max != b->max || a->median != b->median ||
      a->mean != b->mean || a->stddev != b->stddev || a->n_percentiles != b->n_percentiles ||
      a->clipped_low_count != b->clipped_low_count ||
      a->clipped_high_count != b->clipped_high_count ||
      a->below_legal_count != b->below_legal_count ||
      a->above_legal_count != b->above_legal_count || a->n_bins != b->n_bins)
    return false;
  for (int i = 0; i < a->n_percentiles; i++)
    if (a->percentile_value[i] != b->percentile_value[i])
      return false;
  return memcmp(a->histogram, b->histogram, a->n_bins * sizeof *a->histogram) == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  Reader r = {data, size, 0};
  /* A few values past the last format test the refusal of unknown ones. */
  LhFormat format = (LhFormat)(take8(&r) % (LH_FORMAT_COUNT + 2));
  unsigned flags = take8(&r);
  int width = (int)(take16(&r) % 130);
  int height = (int)(take16(&r) % 130);
  int stride_delta = (int)(take8(&r) % 40) - 8; /* some strides are short of a row */
  int bit_depth = (flags & 0x80) ? (int)(take8(&r) % 18) : 0;

  LhOptions options;
  lh_options_init(&options);
  options.matrix = (LhMatrix)(take8(&r) % 4);
  options.range = (LhRange)(take8(&r) % 3);
  options.percentile_method = (LhPercentileMethod)(take8(&r) % 4);
  options.n_percentiles = (int)(take8(&r) % (LH_MAX_PERCENTILES + 2));
  for (int i = 0; i < options.n_percentiles && i < LH_MAX_PERCENTILES; i++) {
    unsigned raw = take16(&r);
    /* Mostly within [0, 100], in steps as fine as 1/600, some outside. */
    options.percentiles[i] = raw == 0xffff ? NAN : (double)raw / 600.0 - 4.0;
  }
  if (flags & 0x40) {
    options.roi.x = (int)(take16(&r) % 140) - 5;
    options.roi.y = (int)(take16(&r) % 140) - 5;
    options.roi.width = (int)(take16(&r) % 140) - 5;
    options.roi.height = (int)(take16(&r) % 140) - 5;
  }

  /* The buffer: lh_frame_buffer_size for whole frames, or exactly the rows
   * of plane 0 when only plane 0 is described. */
  bool known = (unsigned)format < LH_FORMAT_COUNT;
  size_t row = gen_row_bytes(format, width);
  size_t stride = (size_t)((long)row + stride_delta > 0 ? (long)row + stride_delta : 0);
  LhFrame frame;
  memset(&frame, 0, sizeof frame);
  size_t bytes = 0;
  uint8_t *pixels = NULL;
  int status;
  if (known && (flags & 0x20) && width > 0 && height > 0 && stride >= row) {
    bytes = lh_frame_buffer_size(format, width, height, stride);
    FUZZ_ASSERT(bytes >= stride * (size_t)(height - 1) + row);
    pixels = malloc(bytes);
    status = lh_frame_init(&frame, format, LH_MEMORY_HOST, width, height, pixels, stride);
    FUZZ_ASSERT(status == LH_OK || (status < 0 && *lh_last_error()));
    frame.bit_depth = bit_depth;
  } else {
    bytes = height > 0 && stride >= row ? stride * (size_t)(height - 1) + row : 1;
    pixels = malloc(bytes ? bytes : 1);
    frame = (LhFrame){.format = format,
                      .memory = (flags & 0x10) && (flags & 0x08) ? LH_MEMORY_CUDA : LH_MEMORY_HOST,
                      .width = width,
                      .height = height,
                      .bit_depth = bit_depth,
                      .planes = {(flags & 0x04) && (flags & 0x02) ? NULL : pixels},
                      .strides = {stride}};
  }
  FUZZ_ASSERT(pixels != NULL);
  for (size_t i = 0; i < bytes; i++)
    pixels[i] = r.at < r.size ? data[r.at++] : (uint8_t)(i * 151 + flags);

  LhContext *context = fuzz_context();
  LhStats stats;
  lh_stats_init(&stats);
  status = lh_analyze(context, &frame, &options, &stats);
  if (status < 0) {
    FUZZ_ASSERT(strcmp(lh_status_name(status), "unknown") != 0 && *lh_last_error() != '\0');
  } else {
    int w = options.roi.width > 0 && options.roi.height > 0 ? options.roi.width : width;
    int h = options.roi.width > 0 && options.roi.height > 0 ? options.roi.height : height;
    check_stats(&stats, (uint64_t)w * (uint64_t)h, &options);

    /* Both exact methods, and the histogram alone, give the same numbers. */
    LhOptions other = options;
    other.percentile_method = options.percentile_method == LH_PERCENTILE_SORT
                                  ? LH_PERCENTILE_HISTOGRAM
                                  : LH_PERCENTILE_SORT;
    LhStats again;
    lh_stats_init(&again);
    FUZZ_ASSERT(lh_analyze(context, &frame, &other, &again) == LH_OK);
    FUZZ_ASSERT(same_stats(&stats, &again));
    lh_stats_clear(&again);
    FUZZ_ASSERT(lh_stats_from_histogram(stats.histogram, stats.bit_depth, &options, &again) ==
                LH_OK);
    FUZZ_ASSERT(same_stats(&stats, &again));
    lh_stats_clear(&again);
  }
  lh_stats_clear(&stats);
  lh_stats_clear(&stats); /* twice: a cleared struct stays clearable */
  free(pixels);
  return 0;
}
