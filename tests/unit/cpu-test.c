/* cpu-test.c: the CPU backend against an independent, naive reference on every
 * format, distribution and shape, plus invariants and argument checks. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frame-gen.h"
#include "lumahist.h"
#include "test-check.h"

/* ---- the reference: written from DESIGN.md's definitions, not from src/ ---- */

static const double matrix_kr[] = {0.299, 0.2126, 0.2627};
static const double matrix_kb[] = {0.114, 0.0722, 0.0593};

static uint32_t sample_at(const uint8_t *p, int bytes)
{
  if (bytes == 1)
    return *p;
  return (uint32_t)p[0] | ((uint32_t)p[1] << 8); /* little-endian host */
}

static uint32_t reference_luma(const LhFrame *f, int x, int y, LhMatrix m, int depth)
{
  int pb = gen_pixel_bytes(f->format), sb = gen_sample_bytes(f->format);
  const uint8_t *p = (const uint8_t *)f->planes[0] + (size_t)y * f->strides[0] + (size_t)x * pb;
  uint32_t max_value = (1u << depth) - 1;
  int ri = 0, bi = 2;
  if (f->format >= LH_FORMAT_YV12 && f->format <= LH_FORMAT_P016) {
    /* Y where the format keeps it (test-formats.h); above the depth: the top */
    uint32_t v =
        gen_luma_get(f->format, (const uint8_t *)f->planes[0] + (size_t)y * f->strides[0], x);
    return v > max_value ? max_value : v;
  }
  switch (f->format) {
  case LH_FORMAT_GRAY8:
  case LH_FORMAT_I420:
  case LH_FORMAT_NV12:
    return p[0];
  case LH_FORMAT_GRAY16: {
    uint32_t v = sample_at(p, 2);
    return v > max_value ? max_value : v;
  }
  case LH_FORMAT_RGB10A2_LE:
  case LH_FORMAT_BGR10A2_LE:
  case LH_FORMAT_R210: {
    uint32_t rgb[3];
    gen_packed10_rgb(f->format, p, rgb);
    int64_t kr = llround(matrix_kr[m] * 10000.0), kb = llround(matrix_kb[m] * 10000.0);
    int64_t num = kr * rgb[0] + (10000 - kr - kb) * rgb[1] + kb * rgb[2];
    return (uint32_t)((num + 5000) / 10000);
  }
  case LH_FORMAT_P010:
    return sample_at(p, 2) / 64;
  case LH_FORMAT_BGR:
  case LH_FORMAT_BGRA:
  case LH_FORMAT_BGRX:
  case LH_FORMAT_BGRA16:
    ri = 2;
    bi = 0;
    break;
  default:
    break;
  }
  /* 8-bit luma: 15-bit fixed-point weights, red and green rounded from the
   * matrix, blue the remainder (OpenCV's).  Deeper luma: the decimal
   * coefficients exactly (units of 10^-4), Y' = floor(Kr R + Kg G + Kb B +
   * 1/2) with no rounding error. */
  const int64_t one = depth > 8 ? 10000 : 32768;
  int64_t kr = llround(matrix_kr[m] * (double)one);
  int64_t kg = llround((1.0 - matrix_kr[m] - matrix_kb[m]) * (double)one);
  int64_t kb = one - kr - kg;
  int64_t r = sample_at(p + ri * sb, sb), g = sample_at(p + sb, sb), b = sample_at(p + bi * sb, sb);
  int64_t num = kr * r + kg * g + kb * b;
  uint32_t v = (uint32_t)((num + one / 2) / one); /* half up: num >= 0 */
  return v > max_value ? max_value : v;
}

static int compare_u32(const void *a, const void *b)
{
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return (x > y) - (x < y);
}

typedef struct {
  uint64_t *histogram;
  uint64_t count;
  double mean, stddev;
  uint32_t min, max, median;
  uint32_t percentile[LH_MAX_PERCENTILES];
  uint64_t low, high, below, above;
} Reference;

static void reference_analyze(const LhFrame *f, const LhOptions *o, int depth, Reference *ref)
{
  int x0 = 0, y0 = 0, w = f->width, h = f->height;
  if (o->roi.width && o->roi.height) {
    x0 = o->roi.x;
    y0 = o->roi.y;
    w = o->roi.width;
    h = o->roi.height;
  }
  size_t n = (size_t)w * (size_t)h;
  uint32_t *values = malloc(n * sizeof *values);
  ref->histogram = calloc((size_t)1 << depth, sizeof *ref->histogram);
  double sum = 0;
  size_t i = 0;
  for (int y = y0; y < y0 + h; y++)
    for (int x = x0; x < x0 + w; x++) {
      uint32_t v = reference_luma(f, x, y, o->matrix, depth);
      values[i++] = v;
      ref->histogram[v]++;
      sum += v;
    }
  qsort(values, n, sizeof *values, compare_u32);
  ref->count = n;
  ref->mean = sum / (double)n;
  double squares = 0;
  for (i = 0; i < n; i++)
    squares += ((double)values[i] - ref->mean) * ((double)values[i] - ref->mean);
  ref->stddev = sqrt(squares / (double)n);
  ref->min = values[0];
  ref->max = values[n - 1];
  /* nearest rank: the ceil(p/100 N)-th smallest, at least the first */
  ref->median = values[(n + 1) / 2 - 1];
  for (int k = 0; k < o->n_percentiles; k++) {
    double exact = o->percentiles[k] / 100.0 * (double)n;
    size_t rank = (size_t)ceil(exact - 1e-9 * (double)n);
    ref->percentile[k] = values[(rank < 1 ? 1 : rank) - 1];
  }
  uint32_t top = (1u << depth) - 1, black = 0, white = top;
  if (o->range == LH_RANGE_LIMITED) {
    black = 16u << (depth - 8);
    white = 235u << (depth - 8);
  }
  ref->low = ref->high = ref->below = ref->above = 0;
  for (i = 0; i < n; i++) {
    ref->low += values[i] == 0;
    ref->high += values[i] == top;
    if (o->range == LH_RANGE_LIMITED) {
      ref->below += values[i] < black;
      ref->above += values[i] > white;
    }
  }
  free(values);
}

static bool close_enough(double a, double b)
{
  return fabs(a - b) <= 1e-9 * (fabs(b) + 1.0);
}

static bool same_bits(double a, double b)
{
  return memcmp(&a, &b, sizeof a) == 0;
}

/* Analyses a frame with the library and the reference and compares all fields. */
static void check_frame(LhContext *ctx, const LhFrame *f, const LhOptions *o, const char *what)
{
  int depth = f->bit_depth ? f->bit_depth : gen_format_depth(f->format);
  LhStats s;
  lh_stats_init(&s);
  int status = lh_analyze(ctx, f, o, &s);
  CHECK(status == LH_OK, "%s: status %d: %s", what, status, lh_last_error());
  if (status != LH_OK)
    return;
  Reference ref;
  reference_analyze(f, o, depth, &ref);
  CHECK(s.bit_depth == depth, "%s: depth %d != %d", what, s.bit_depth, depth);
  CHECK(s.n_bins == ((size_t)1 << depth), "%s: n_bins %zu", what, s.n_bins);
  size_t bad_bin = SIZE_MAX;
  uint64_t total = 0;
  for (size_t b = 0; b < s.n_bins; b++) {
    total += s.histogram[b];
    if (s.histogram[b] != ref.histogram[b] && bad_bin == SIZE_MAX)
      bad_bin = b;
  }
  CHECK(bad_bin == SIZE_MAX, "%s: bin %zu: %llu != %llu", what, bad_bin,
        bad_bin == SIZE_MAX ? 0ULL : (unsigned long long)s.histogram[bad_bin],
        bad_bin == SIZE_MAX ? 0ULL : (unsigned long long)ref.histogram[bad_bin]);
  CHECK(total == s.count, "%s: bins sum to %llu, count %llu", what, (unsigned long long)total,
        (unsigned long long)s.count);
  CHECK(s.count == ref.count, "%s: count", what);
  CHECK(close_enough(s.mean, ref.mean), "%s: mean %.12g != %.12g", what, s.mean, ref.mean);
  CHECK(close_enough(s.stddev, ref.stddev), "%s: stddev %.12g != %.12g", what, s.stddev,
        ref.stddev);
  CHECK(s.min == ref.min && s.max == ref.max, "%s: min/max %u/%u != %u/%u", what, s.min, s.max,
        ref.min, ref.max);
  CHECK(s.median == ref.median, "%s: median %u != %u", what, s.median, ref.median);
  for (int k = 0; k < o->n_percentiles; k++) {
    CHECK(s.percentile_value[k] == ref.percentile[k], "%s: P%g %u != %u", what, o->percentiles[k],
          s.percentile_value[k], ref.percentile[k]);
    if (k > 0 && o->percentiles[k] >= o->percentiles[k - 1])
      CHECK(s.percentile_value[k] >= s.percentile_value[k - 1], "%s: percentiles not monotonic",
            what);
  }
  CHECK(s.clipped_low_count == ref.low && s.clipped_high_count == ref.high,
        "%s: clipped %llu/%llu != %llu/%llu", what, (unsigned long long)s.clipped_low_count,
        (unsigned long long)s.clipped_high_count, (unsigned long long)ref.low,
        (unsigned long long)ref.high);
  CHECK(s.below_legal_count == ref.below && s.above_legal_count == ref.above,
        "%s: legal %llu/%llu != %llu/%llu", what, (unsigned long long)s.below_legal_count,
        (unsigned long long)s.above_legal_count, (unsigned long long)ref.below,
        (unsigned long long)ref.above);
  CHECK(close_enough(s.clipped_low, (double)ref.low / ref.count), "%s: clipped_low fraction", what);
  double black = o->range == LH_RANGE_LIMITED ? (16u << (depth - 8)) : 0.0;
  double white = o->range == LH_RANGE_LIMITED ? (235u << (depth - 8)) : (1u << depth) - 1.0;
  CHECK(close_enough(s.mean_norm, (ref.mean - black) / (white - black)), "%s: mean_norm", what);
  CHECK(close_enough(s.median_norm, (ref.median - black) / (white - black)), "%s: median_norm",
        what);

  /* The statistics of its own histogram, made the general way (the 65536
   * bins walked, lh_stats_from_histogram), must be the same bits as the
   * backend's (16-bit keys: from the sums of 256-bin blocks kept as the
   * counters were added in). */
  LhStats u;
  lh_stats_init(&u);
  status = lh_stats_from_histogram(s.histogram, depth, o, &u);
  CHECK(status == LH_OK && u.count == s.count && same_bits(u.mean, s.mean) &&
            same_bits(u.stddev, s.stddev) && u.min == s.min && u.max == s.max &&
            u.median == s.median && u.clipped_low_count == s.clipped_low_count &&
            u.clipped_high_count == s.clipped_high_count &&
            u.below_legal_count == s.below_legal_count &&
            u.above_legal_count == s.above_legal_count &&
            memcmp(u.percentile_value, s.percentile_value,
                   (size_t)o->n_percentiles * sizeof u.percentile_value[0]) == 0,
        "%s: the statistics of its histogram are not the same bits (mean %.17g/%.17g, stddev "
        "%.17g/%.17g, median %u/%u)",
        what, u.mean, s.mean, u.stddev, s.stddev, u.median, s.median);
  lh_stats_clear(&u);

  /* The sort method must find the same values. */
  LhOptions by_sort = *o;
  by_sort.percentile_method = LH_PERCENTILE_SORT;
  LhStats t;
  lh_stats_init(&t);
  status = lh_analyze(ctx, f, &by_sort, &t);
  CHECK(status == LH_OK && t.median == s.median &&
            memcmp(t.percentile_value, s.percentile_value,
                   (size_t)o->n_percentiles * sizeof t.percentile_value[0]) == 0,
        "%s: sort method disagrees with the histogram", what);
  lh_stats_clear(&t);
  free(ref.histogram);
  lh_stats_clear(&s);
}

static void test_every_format(LhContext *ctx)
{
  static const int sizes[][2] = {{1, 1}, {1, 7}, {9, 1}, {3, 5}, {17, 13}, {64, 32}, {333, 97}};
  LhOptions o;
  lh_options_init(&o);
  lh_options_set_percentiles(&o, "0,1,5,25,50,75,95,99,99.9,100");
  int case_number = 0;
  for (int f = 0; f < LH_FORMAT_COUNT; f++)
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
      for (int d = 0; d < GEN_COUNT; d++) {
        GenFrame g;
        size_t extra = (size_t)(case_number % 3) * 5; /* tight, or padded by 5 or 10 bytes */
        const int sb = gen_sample_bytes((LhFormat)f);
        size_t offset = sb > 1 ? (size_t)(sb * (case_number % 2)) : (size_t)(case_number % 4);
        if (gen_frame(&g, (LhFormat)f, sizes[s][0], sizes[s][1], 0, extra, offset,
                      (GenDistribution)d, (uint64_t)case_number + 1) < 0) {
          CHECK(0, "cannot make frame: %s", lh_last_error());
          continue;
        }
        o.matrix = (LhMatrix)(case_number % 3);
        o.range = (case_number % 4 == 3) ? LH_RANGE_LIMITED : LH_RANGE_FULL;
        char what[200];
        snprintf(what, sizeof what, "%s %dx%d %s stride+%zu offset %zu matrix %d range %d",
                 lh_format_name((LhFormat)f), sizes[s][0], sizes[s][1], gen_distribution_names[d],
                 extra, offset, (int)o.matrix, (int)o.range);
        check_frame(ctx, &g.frame, &o, what);
        gen_free(&g);
        case_number++;
      }
  printf("every format: %d cases\n", case_number);
}

/* Frames with more pixels of one value than the CPU's narrow counters hold
 * (10 to 16-bit keys: four copies of 16-bit counters flushed before one
 * could wrap, or one 8-bit counter a key that carries into its bin as it
 * wraps), four times over: on one thread, and on every core, where each
 * band still has enough. */
static void test_counter_wraps(LhContext *ctx)
{
  static const LhFormat formats[] = {LH_FORMAT_P010, LH_FORMAT_I420_10LE, LH_FORMAT_I420_12LE,
                                     LH_FORMAT_P012, LH_FORMAT_GRAY16_BE, LH_FORMAT_Y444_16LE,
                                     LH_FORMAT_P016, LH_FORMAT_V210};
  static const GenDistribution distributions[] = {GEN_CONSTANT, GEN_MOSTLY_ONE, GEN_NARROW_BAND,
                                                  GEN_PHOTO};
  LhOptions o;
  lh_options_init(&o);
  lh_options_set_percentiles(&o, "0,1,50,99,100");
  int seed = 1;
  for (int threads = 1; threads >= 0; threads--) {
    lh_context_set_threads(ctx, threads);
    for (size_t f = 0; f < sizeof formats / sizeof formats[0]; f++)
      for (size_t d = 0; d < sizeof distributions / sizeof distributions[0]; d++) {
        GenFrame g;
        if (gen_frame(&g, formats[f], 1031, 523, 0, 10, 0, distributions[d], (uint64_t)seed++) <
            0) {
          CHECK(0, "cannot make frame: %s", lh_last_error());
          continue;
        }
        char what[160];
        snprintf(what, sizeof what, "%s 1031x523 %s stride+10 threads %d",
                 lh_format_name(formats[f]), gen_distribution_names[distributions[d]], threads);
        check_frame(ctx, &g.frame, &o, what);
        gen_free(&g);
      }
  }
  lh_context_set_threads(ctx, 0);
}

/* 16-bit Y at the ends of the range, in the first and the last bin of the
 * 65536 (and so in the first and last 256-bin block): all 0, all 65535,
 * the two alternating, one pixel at the other end, on one thread and on
 * every core, odd sizes with padded strides. */
static void test_16bit_extremes(LhContext *ctx)
{
  static const LhFormat formats[] = {LH_FORMAT_GRAY16, LH_FORMAT_GRAY16_BE, LH_FORMAT_Y444_16LE,
                                     LH_FORMAT_P016};
  static const int sizes[][2] = {{1031, 523}, {3, 1}, {1, 257}};
  LhOptions o;
  lh_options_init(&o);
  lh_options_set_percentiles(&o, "0,0.0001,50,99.9999,100");
  for (int threads = 1; threads >= 0; threads--) {
    lh_context_set_threads(ctx, threads);
    for (size_t f = 0; f < sizeof formats / sizeof formats[0]; f++)
      for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (int fill = 0; fill < 5; fill++) {
          const int w = sizes[s][0], h = sizes[s][1];
          GenFrame g;
          if (gen_frame(&g, formats[f], w, h, 0, 6, 0, GEN_CONSTANT, (uint64_t)fill) < 0) {
            CHECK(0, "cannot make frame: %s", lh_last_error());
            continue;
          }
          for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++) {
              const bool first = x == 0 && y == 0;
              const uint32_t v = fill == 0   ? 0
                                 : fill == 1 ? 65535
                                 : fill == 2 ? ((x + y) % 2 ? 65535 : 0)
                                 : fill == 3 ? (first ? 65535 : 0)
                                             : (first ? 0 : 65535);
              gen_luma_put(formats[f],
                           (uint8_t *)g.frame.planes[0] + (size_t)y * g.frame.strides[0], x, v);
            }
          o.range = fill % 2 ? LH_RANGE_LIMITED : LH_RANGE_FULL;
          char what[160];
          snprintf(what, sizeof what, "%s %dx%d stride+6 fill %d threads %d",
                   lh_format_name(formats[f]), w, h, fill, threads);
          check_frame(ctx, &g.frame, &o, what);
          gen_free(&g);
        }
  }
  lh_context_set_threads(ctx, 0);
}

static void test_high_depths(LhContext *ctx)
{
  LhOptions o;
  lh_options_init(&o);
  lh_options_set_percentiles(&o, "1,50,99");
  static const LhFormat formats[] = {LH_FORMAT_GRAY16, LH_FORMAT_RGB16, LH_FORMAT_RGBA16};
  for (size_t i = 0; i < 3; i++)
    for (int depth = 9; depth <= 16; depth++)
      for (int d = 0; d < GEN_COUNT; d++) {
        GenFrame g;
        gen_frame(&g, formats[i], 101, 37, depth, 6, 0, (GenDistribution)d, (uint64_t)depth);
        o.range = depth % 2 ? LH_RANGE_LIMITED : LH_RANGE_FULL;
        char what[128];
        snprintf(what, sizeof what, "%s depth %d %s", lh_format_name(formats[i]), depth,
                 gen_distribution_names[d]);
        check_frame(ctx, &g.frame, &o, what);
        gen_free(&g);
      }
}

/* GRAY16 samples above the declared depth land in the top bin. */
static void test_out_of_range_samples(LhContext *ctx)
{
  GenFrame g;
  gen_frame(&g, LH_FORMAT_GRAY16, 50, 20, 0, 0, 0, GEN_UNIFORM, 7);
  g.frame.bit_depth = 10;
  LhOptions o;
  lh_options_init(&o);
  check_frame(ctx, &g.frame, &o, "GRAY16 depth 10 with 16-bit samples");
  gen_free(&g);
}

static void test_regions(LhContext *ctx)
{
  LhOptions o;
  lh_options_init(&o);
  lh_options_set_percentiles(&o, "10,90");
  static const LhRect rois[] = {{0, 0, 1, 1}, {5, 3, 10, 4}, {0, 0, 40, 30}, {39, 29, 1, 1}};
  static const LhFormat formats[] = {LH_FORMAT_GRAY8,     LH_FORMAT_BGRA,  LH_FORMAT_NV12,
                                     LH_FORMAT_P010,      LH_FORMAT_RGB16, LH_FORMAT_P016,
                                     LH_FORMAT_GRAY16_BE, LH_FORMAT_BGRA16};
  for (size_t f = 0; f < sizeof formats / sizeof formats[0]; f++)
    for (size_t r = 0; r < 4; r++) {
      GenFrame g;
      gen_frame(&g, formats[f], 40, 30, 0, 3, 0, GEN_PHOTO, r + 11);
      o.roi = rois[r];
      char what[128];
      snprintf(what, sizeof what, "%s roi %d,%d %dx%d", lh_format_name(formats[f]), rois[r].x,
               rois[r].y, rois[r].width, rois[r].height);
      check_frame(ctx, &g.frame, &o, what);
      gen_free(&g);
    }
}

/* The YUV formats of cameras and decoders: statistics identical to those of
 * their Y plane copied out as GRAY8 or GRAY16 of the format's depth (the
 * formats we already trust), on odd and padded shapes, and regions. */
static void test_yuv_as_gray(LhContext *ctx)
{
  static const int sizes[][2] = {{1, 1}, {7, 3}, {13, 11}, {64, 36}, {321, 17}};
  LhOptions o;
  lh_options_init(&o);
  lh_options_set_percentiles(&o, "1,10,50,90,99");
  int cases = 0;
  for (int f = LH_FORMAT_YV12; f <= LH_FORMAT_P016; f++)
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
      const LhFormat format = (LhFormat)f;
      const int w = sizes[s][0], h = sizes[s][1], depth = gen_format_depth(format);
      GenFrame g;
      if (gen_frame(&g, format, w, h, 0, (size_t)(s % 3) * 6, 0, (GenDistribution)(s % GEN_COUNT),
                    (uint64_t)(f * 31 + (int)s)) < 0) {
        CHECK(0, "cannot make a %s frame: %s", lh_format_name(format), lh_last_error());
        continue;
      }
      const LhFormat gray_format = depth == 8 ? LH_FORMAT_GRAY8 : LH_FORMAT_GRAY16;
      GenFrame gray;
      gen_frame(&gray, gray_format, w, h, depth == 8 ? 0 : depth, 4, 0, GEN_CONSTANT, 1);
      for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
          gen_luma_put(
              gray_format, (uint8_t *)gray.frame.planes[0] + (size_t)y * gray.frame.strides[0], x,
              gen_luma_get(format,
                           (const uint8_t *)g.frame.planes[0] + (size_t)y * g.frame.strides[0], x));
      for (int r = 0; r < 2; r++) {
        /* the whole frame, then a region starting at a multiple of 6 */
        o.roi = r == 0 || w < 8 ? (LhRect){0, 0, 0, 0} : (LhRect){6, h / 3, w - 7, h - h / 3};
        LhStats a, b;
        lh_stats_init(&a);
        lh_stats_init(&b);
        char what[160];
        snprintf(what, sizeof what, "%s %dx%d as %s%s", lh_format_name(format), w, h,
                 lh_format_name(gray_format), r ? " region" : "");
        int sa = lh_analyze(ctx, &g.frame, &o, &a), sg = lh_analyze(ctx, &gray.frame, &o, &b);
        CHECK(sa == LH_OK && sg == LH_OK, "%s: %s", what, lh_last_error());
        if (sa == LH_OK && sg == LH_OK) {
          CHECK(a.bit_depth == depth && b.bit_depth == depth, "%s: depth %d, gray %d", what,
                a.bit_depth, b.bit_depth);
          CHECK(a.n_bins == b.n_bins && memcmp(a.histogram, b.histogram, a.n_bins * 8) == 0,
                "%s: histograms differ", what);
          CHECK(a.count == b.count && a.mean == b.mean && a.stddev == b.stddev && a.min == b.min &&
                    a.max == b.max && a.median == b.median &&
                    memcmp(a.percentile_value, b.percentile_value, 5 * 4) == 0 &&
                    a.clipped_low_count == b.clipped_low_count &&
                    a.clipped_high_count == b.clipped_high_count,
                "%s: statistics differ (mean %.6f / %.6f)", what, a.mean, b.mean);
        }
        lh_stats_clear(&a);
        lh_stats_clear(&b);
        cases++;
      }
      gen_free(&gray);
      gen_free(&g);
    }
  o.roi = (LhRect){0, 0, 0, 0};
  /* v210 regions start at a group of 6 pixels */
  GenFrame g;
  gen_frame(&g, LH_FORMAT_V210, 20, 4, 0, 0, 0, GEN_PHOTO, 5);
  o.roi = (LhRect){3, 0, 6, 2};
  LhStats s;
  lh_stats_init(&s);
  CHECK(lh_analyze(ctx, &g.frame, &o, &s) == LH_ERROR_INVALID_ARGUMENT &&
            strstr(lh_last_error(), "multiple of 6") != NULL,
        "v210 region at x = 3: %s", lh_last_error());
  /* v210 words are 32-bit: a stride not a multiple of 4 is refused */
  LhFrame bad = g.frame;
  bad.strides[0] = 130;
  o.roi = (LhRect){0, 0, 0, 0};
  CHECK(lh_analyze(ctx, &bad, &o, &s) == LH_ERROR_INVALID_ARGUMENT, "v210 stride 130");
  /* Each format's samples lie at multiples of lh_format_alignment(), which
   * the GStreamer element reads to know a buffer it must copy first: a
   * frame at an address off by less is refused, one on it taken. */
  for (int i = 0; i < LH_FORMAT_COUNT; i++) {
    const LhFormat f = (LhFormat)i;
    const int align = lh_format_alignment(f);
    uint8_t *block = calloc(1, lh_frame_buffer_size(f, 6, 2, 0) + 8);
    for (int offset = 0; offset <= 4 && block; offset++) {
      /* lh_frame_init refuses such an address itself: moved by hand. */
      LhFrame at;
      CHECK(lh_frame_init(&at, f, LH_MEMORY_HOST, 6, 2, block, 0) == LH_OK, "%s: %s",
            lh_format_name(f), lh_last_error());
      for (int p = 0; p < 3; p++)
        if (at.planes[p])
          at.planes[p] = (uint8_t *)at.planes[p] + offset;
      const int status = lh_analyze(ctx, &at, &o, &s);
      CHECK((status == LH_OK) == (offset % align == 0) &&
                (status == LH_OK || strstr(lh_last_error(), "multiples of")),
            "%s (alignment %d) at offset %d: %s", lh_format_name(f), align, offset,
            status == LH_OK ? "taken" : lh_last_error());
    }
    free(block);
  }
  /* a packed 4:2:2 row of an odd width holds the whole last pair */
  LhFrame yuy2;
  uint8_t bytes[64] = {0};
  CHECK(lh_frame_init(&yuy2, LH_FORMAT_YUY2, LH_MEMORY_HOST, 5, 2, bytes, 10) ==
            LH_ERROR_INVALID_ARGUMENT,
        "YUY2 width 5 stride 10 (the last pair needs 12)");
  CHECK(lh_frame_buffer_size(LH_FORMAT_YUY2, 5, 2, 0) == 24 &&
            lh_frame_buffer_size(LH_FORMAT_V210, 7, 2, 0) == 64 &&
            lh_frame_buffer_size(LH_FORMAT_Y42B, 5, 3, 0) == 15 + 2 * 3 * 3 &&
            lh_frame_buffer_size(LH_FORMAT_Y41B, 9, 2, 0) == 18 + 2 * 2 * 3 &&
            lh_frame_buffer_size(LH_FORMAT_NV24, 3, 2, 0) == 6 + 12 &&
            lh_frame_buffer_size(LH_FORMAT_I422_10LE, 4, 2, 0) == 16 + 2 * 2 * 4,
        "buffer sizes of the new layouts");
  lh_stats_clear(&s);
  gen_free(&g);
  printf("yuv as gray: %d cases\n", cases);
}

static void test_batch(LhContext *ctx)
{
  GenFrame g[3];
  gen_frame(&g[0], LH_FORMAT_GRAY8, 30, 20, 0, 0, 0, GEN_UNIFORM, 1);
  gen_frame(&g[1], LH_FORMAT_RGB, 7, 3, 0, 1, 1, GEN_PHOTO, 2);
  gen_frame(&g[2], LH_FORMAT_GRAY8, 5, 5, 0, 0, 0, GEN_CONSTANT, 3);
  LhFrame frames[3] = {g[0].frame, g[1].frame, g[2].frame};
  LhStats batch[3], single;
  LhOptions o;
  lh_options_init(&o);
  lh_options_set_percentiles(&o, "5,95");
  for (int i = 0; i < 3; i++)
    lh_stats_init(&batch[i]);
  CHECK(lh_analyze_batch(ctx, frames, 3, &o, batch) == LH_OK, "batch: %s", lh_last_error());
  for (int i = 0; i < 3; i++) {
    lh_stats_init(&single);
    lh_analyze(ctx, &frames[i], &o, &single);
    CHECK(single.count == batch[i].count && single.mean == batch[i].mean &&
              single.percentile_value[1] == batch[i].percentile_value[1] &&
              memcmp(single.histogram, batch[i].histogram, single.n_bins * 8) == 0,
          "batch frame %d differs from a single analysis", i);
    lh_stats_clear(&single);
    lh_stats_clear(&batch[i]);
    gen_free(&g[i]);
  }
}

/* Histograms are additive: stats of a summed histogram equal those of the union. */
static void test_from_histogram(LhContext *ctx)
{
  GenFrame a, b, both;
  gen_frame(&a, LH_FORMAT_GRAY8, 40, 10, 0, 0, 0, GEN_PHOTO, 5);
  gen_frame(&b, LH_FORMAT_GRAY8, 40, 10, 0, 0, 0, GEN_MOSTLY_ONE, 6);
  gen_frame(&both, LH_FORMAT_GRAY8, 40, 20, 0, 0, 0, GEN_CONSTANT, 1);
  memcpy(both.frame.planes[0], a.frame.planes[0], 400);
  memcpy((uint8_t *)both.frame.planes[0] + 400, b.frame.planes[0], 400);
  LhOptions o;
  lh_options_init(&o);
  lh_options_set_percentiles(&o, "1,33.3,99");
  LhStats sa, sb, sum, direct;
  lh_stats_init(&sa);
  lh_stats_init(&sb);
  lh_stats_init(&sum);
  lh_stats_init(&direct);
  lh_analyze(ctx, &a.frame, &o, &sa);
  lh_analyze(ctx, &b.frame, &o, &sb);
  lh_analyze(ctx, &both.frame, &o, &direct);
  uint64_t merged[256];
  for (int i = 0; i < 256; i++)
    merged[i] = sa.histogram[i] + sb.histogram[i];
  CHECK(lh_stats_from_histogram(merged, 8, &o, &sum) == LH_OK, "from histogram");
  CHECK(sum.count == direct.count && sum.mean == direct.mean && sum.stddev == direct.stddev &&
            sum.median == direct.median &&
            memcmp(sum.percentile_value, direct.percentile_value, 3 * 4) == 0,
        "merged histogram stats differ from the direct analysis");
  lh_stats_clear(&sa);
  lh_stats_clear(&sb);
  lh_stats_clear(&sum);
  lh_stats_clear(&direct);
  gen_free(&a);
  gen_free(&b);
  gen_free(&both);

  /* Histograms summed over many frames: Σ v h(v) passes 2^64 at 2^48 pixels
   * of 16-bit luma, and wrapped (a mean of 8191.5 for half black, half
   * white; 3 for 2^62 white pixels). */
  uint64_t *huge = calloc(65536, sizeof *huge);
  LhStats big;
  lh_stats_init(&big);
  huge[0] = huge[65535] = (uint64_t)1 << 50;
  CHECK(lh_stats_from_histogram(huge, 16, NULL, &big) == LH_OK, "huge histogram");
  CHECK(big.mean == 32767.5 && big.stddev == 32767.5 && big.mean_norm == 0.5,
        "2^51 pixels, half black: mean %g stddev %g mean_norm %g", big.mean, big.stddev,
        big.mean_norm);
  huge[0] = 0;
  huge[65535] = (uint64_t)1 << 62;
  CHECK(lh_stats_from_histogram(huge, 16, NULL, &big) == LH_OK && big.mean == 65535 &&
            big.stddev == 0,
        "2^62 white pixels: mean %g stddev %g", big.mean, big.stddev);
  lh_stats_clear(&big);
  free(huge);
}

static void test_bad_arguments(LhContext *ctx)
{
  uint8_t pixels[64] = {0};
  LhFrame f;
  LhStats s;
  LhOptions o;
  lh_stats_init(&s);
  lh_options_init(&o);
  CHECK(lh_analyze(NULL, &f, &o, &s) == LH_ERROR_INVALID_ARGUMENT, "NULL context");
  CHECK(lh_analyze(ctx, NULL, &o, &s) == LH_ERROR_INVALID_ARGUMENT, "NULL frame");
  CHECK(strlen(lh_last_error()) > 0, "no message for a NULL frame");
  lh_frame_init(&f, LH_FORMAT_GRAY8, LH_MEMORY_HOST, 8, 8, pixels, 8);
  CHECK(lh_analyze(ctx, &f, &o, NULL) == LH_ERROR_INVALID_ARGUMENT, "NULL stats");
  f.strides[0] = 7;
  CHECK(lh_analyze(ctx, &f, &o, &s) == LH_ERROR_INVALID_ARGUMENT, "short stride");
  CHECK(strstr(lh_last_error(), "stride") != NULL, "stride message: %s", lh_last_error());
  f.strides[0] = 8;
  f.format = (LhFormat)99;
  CHECK(lh_analyze(ctx, &f, &o, &s) == LH_ERROR_INVALID_ARGUMENT, "unknown format");
  f.format = LH_FORMAT_GRAY8;
  f.planes[0] = NULL;
  CHECK(lh_analyze(ctx, &f, &o, &s) == LH_ERROR_INVALID_ARGUMENT, "NULL plane");
  f.planes[0] = pixels;
  f.width = 0;
  CHECK(lh_analyze(ctx, &f, &o, &s) == LH_ERROR_INVALID_ARGUMENT, "zero width");
  f.width = 8;
  CHECK(lh_options_set_percentiles(&o, "50,101") == LH_ERROR_INVALID_ARGUMENT, "p > 100");
  CHECK(lh_options_set_percentiles(&o, "-1") == LH_ERROR_INVALID_ARGUMENT, "p < 0");
  CHECK(lh_options_set_percentiles(&o, "5,x") == LH_ERROR_INVALID_ARGUMENT, "p not a number");
  /* Every spelling of a number in [0, 100] is taken, the subnormal and the
   * underflowing ones too (strtod's ERANGE refused "5e-324"); beyond 100 and
   * hexadecimal are not. */
  static const struct {
    const char *text;
    double value;
  } taken[] = {
      {"5e-324", 5e-324}, {"1e-300", 1e-300},  {"2.2250738585072014e-308", 2.2250738585072014e-308},
      {"1e-400", 0.0},    {"100.0000", 100.0}, {"1e2", 100.0}};
  for (size_t i = 0; i < sizeof taken / sizeof taken[0]; i++)
    CHECK(lh_options_set_percentiles(&o, taken[i].text) == LH_OK && o.n_percentiles == 1 &&
              o.percentiles[0] == taken[i].value,
          "percentile \"%s\" not taken as %g: %s", taken[i].text, taken[i].value, lh_last_error());
  CHECK(lh_options_set_percentiles(&o, "1e400") == LH_ERROR_INVALID_ARGUMENT, "p 1e400");
  CHECK(lh_options_set_percentiles(&o, "100.0000000001") == LH_ERROR_INVALID_ARGUMENT,
        "p just over 100");
  CHECK(lh_options_set_percentiles(&o, "0x1p-2") == LH_ERROR_INVALID_ARGUMENT, "p hexadecimal");
  lh_options_init(&o);
  o.n_percentiles = 1;
  o.percentiles[0] = NAN;
  CHECK(lh_analyze(ctx, &f, &o, &s) == LH_ERROR_INVALID_ARGUMENT, "NaN percentile");
  lh_options_init(&o);
  o.roi = (LhRect){4, 4, 5, 5};
  CHECK(lh_analyze(ctx, &f, &o, &s) == LH_ERROR_INVALID_ARGUMENT, "roi outside");
  lh_options_init(&o);
  f.memory = LH_MEMORY_CUDA;
  CHECK(lh_analyze(ctx, &f, &o, &s) == LH_ERROR_UNSUPPORTED, "device memory on the CPU");
  f.memory = LH_MEMORY_HOST;
  f.format = LH_FORMAT_GRAY16;
  f.planes[0] = pixels + 1;
  CHECK(lh_analyze(ctx, &f, &o, &s) == LH_ERROR_INVALID_ARGUMENT, "odd 16-bit address");
  f.planes[0] = pixels;
  f.bit_depth = 17;
  CHECK(lh_analyze(ctx, &f, &o, &s) == LH_ERROR_INVALID_ARGUMENT, "depth 17");
  LhContext *bad = NULL;
  CHECK(lh_context_new((LhBackend)7, &bad) == LH_ERROR_INVALID_ARGUMENT && bad == NULL,
        "unknown backend");
  /* A NULL result is what is wrong with a known name, not the name. */
  CHECK(lh_matrix_from_name("bt709", NULL) == LH_ERROR_INVALID_ARGUMENT &&
            strstr(lh_last_error(), "NULL") && !strstr(lh_last_error(), "unknown"),
        "matrix name with a NULL result");
  CHECK(lh_range_from_name("limited", NULL) == LH_ERROR_INVALID_ARGUMENT &&
            strstr(lh_last_error(), "NULL") && !strstr(lh_last_error(), "unknown"),
        "range name with a NULL result");
  CHECK(lh_backend_from_name("cpu", NULL) == LH_ERROR_INVALID_ARGUMENT &&
            strstr(lh_last_error(), "NULL") && !strstr(lh_last_error(), "unknown"),
        "backend name with a NULL result");
  lh_stats_clear(&s);
}

/* Devices as a machine without a GPU (or a build without CUDA) has them,
 * and what holds on any machine: host memory is no device's, the CPU
 * backend has none, a device that does not exist is refused (AUTO: the CPU,
 * saying why).  tests/gpu/devices-test.c has the rest, on GPUs. */
static void test_devices(LhContext *cpu)
{
  static uint8_t host[64];
  CHECK(lh_device_of(host) == -1 && lh_device_of(NULL) == -1, "host memory is a device's");
  CHECK(lh_context_device(cpu) == -1 && lh_context_device(NULL) == -1, "a CPU context's device");
  LhContext *made = NULL;
  CHECK(lh_context_new_on_device(LH_BACKEND_CPU, 0, &made) == LH_ERROR_INVALID_ARGUMENT &&
            made == NULL && strstr(lh_last_error(), "CPU backend has no device 0"),
        "a CPU context on device 0");
  CHECK(lh_context_new_on_device(LH_BACKEND_CUDA, 4096, &made) == LH_ERROR_NO_DEVICE &&
            made == NULL,
        "a CUDA context on device 4096");
  CHECK(lh_context_new_on_device(LH_BACKEND_AUTO, 4096, &made) == LH_OK && made &&
            lh_context_backend(made) == LH_BACKEND_CPU && lh_context_device(made) == -1 &&
            strstr(lh_context_note(made), "using the CPU: "),
        "an AUTO context on device 4096: %s", made ? lh_context_note(made) : "none");
  lh_context_free(made);
  made = NULL;
  if (lh_device_current() < 0) {
    CHECK(lh_context_new_on_device(LH_BACKEND_CUDA, 0, &made) == LH_ERROR_NO_DEVICE && !made,
          "a CUDA context on device 0 without a device");
  } else {
    CHECK(lh_context_new_on_device(LH_BACKEND_CUDA, 0, &made) == LH_OK && made &&
              lh_context_device(made) == 0,
          "a CUDA context on device 0");
    lh_context_free(made);
  }
}

/* Names, depths and plane sizes of every format, against test-formats.h's
 * own description of the layouts (which the front ends rely on to build
 * frames over their callers' buffers). */
static void test_format_facts(void)
{
  for (int i = 0; i < LH_FORMAT_COUNT; i++) {
    LhFormat f = (LhFormat)i, found = LH_FORMAT_COUNT;
    const char *name = lh_format_name(f);
    CHECK(name && lh_format_from_name(name, &found) == LH_OK && found == f, "format %d by name %s",
          i, name ? name : "(null)");
    char other_case[32];
    size_t n = strlen(name);
    for (size_t k = 0; k <= n && k < sizeof other_case; k++)
      other_case[k] = (char)(name[k] >= 'A' && name[k] <= 'Z'   ? name[k] - 'A' + 'a'
                             : name[k] >= 'a' && name[k] <= 'z' ? name[k] - 'a' + 'A'
                                                                : name[k]);
    found = LH_FORMAT_COUNT;
    CHECK(lh_format_from_name(other_case, &found) == LH_OK && found == f, "%s as %s", name,
          other_case);
    CHECK(lh_format_bit_depth(f) == gen_format_depth(f), "%s: depth %d, expected %d", name,
          lh_format_bit_depth(f), gen_format_depth(f));
    CHECK(lh_format_alignment(f) == gen_sample_bytes(f), "%s: alignment %d, expected %d", name,
          lh_format_alignment(f), gen_sample_bytes(f));
    static const int sizes[][2] = {{1, 1}, {5, 3}, {6, 4}, {13, 7}, {48, 33}};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
      const int w = sizes[s][0], h = sizes[s][1];
      size_t row = 99;
      int rows = 99;
      CHECK(lh_format_plane_size(f, 0, w, h, &row, &rows) == LH_OK && row == gen_row_bytes(f, w) &&
                rows == h,
            "%s %dx%d plane 0: %zu bytes x %d rows", name, w, h, row, rows);
      int xs, ys;
      const bool yuv = gen_chroma_subsampling(f, &xs, &ys);
      const int chroma_planes = gen_chroma_planes(f);
      const size_t chroma_row = (size_t)((w + (1 << xs) - 1) >> xs) * (size_t)gen_sample_bytes(f) *
                                (chroma_planes == 1 ? 2 : 1);
      const int chroma_rows = (h + (1 << ys) - 1) >> ys;
      /* Every byte of every plane's rows lies in the buffer that
       * lh_frame_buffer_size() asks for. */
      uint8_t *base = (uint8_t *)(uintptr_t)4096;
      LhFrame frame;
      CHECK(lh_frame_init(&frame, f, LH_MEMORY_HOST, w, h, base, 0) == LH_OK, "%s %dx%d init", name,
            w, h);
      const size_t size = lh_frame_buffer_size(f, w, h, 0);
      for (int p = 1; p <= 2; p++) {
        const bool has = yuv && p <= chroma_planes;
        CHECK(lh_format_plane_size(f, p, w, h, &row, &rows) == LH_OK &&
                  row == (has ? chroma_row : 0) && rows == (has ? chroma_rows : 0),
              "%s %dx%d plane %d: %zu bytes x %d rows, expected %zu x %d", name, w, h, p, row, rows,
              has ? chroma_row : 0, has ? chroma_rows : 0);
        if (has)
          CHECK((size_t)((uint8_t *)frame.planes[p] - base) +
                        frame.strides[p] * (size_t)(rows - 1) + row <=
                    size,
                "%s %dx%d: plane %d ends past the buffer of %zu bytes", name, w, h, p, size);
      }
    }
  }
  static const struct {
    const char *name;
    LhFormat format;
  } aliases[] = {
      {"GRAY16_LE", LH_FORMAT_GRAY16}, {"P010_10LE", LH_FORMAT_P010},
      {"P012_LE", LH_FORMAT_P012},     {"p016_le", LH_FORMAT_P016},
      {"RGBA64_LE", LH_FORMAT_RGBA16}, {"BGRA64_LE", LH_FORMAT_BGRA16},
      {"r210", LH_FORMAT_R210},        {"RGBx", LH_FORMAT_RGBX},
      {"v210", LH_FORMAT_V210},
  };
  for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++) {
    LhFormat found = LH_FORMAT_COUNT;
    CHECK(lh_format_from_name(aliases[i].name, &found) == LH_OK && found == aliases[i].format,
          "GStreamer's name %s", aliases[i].name);
  }
  LhFormat untouched = LH_FORMAT_NV12;
  static const char *const unknown[] = {"", "YUY9", "NV1", "NV120", "I420 ", "RGB565"};
  for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++)
    CHECK(lh_format_from_name(unknown[i], &untouched) == LH_ERROR_INVALID_ARGUMENT &&
              untouched == LH_FORMAT_NV12 && strstr(lh_last_error(), "unknown pixel format"),
          "\"%s\" is not a format", unknown[i]);
  CHECK(lh_format_from_name(NULL, &untouched) == LH_ERROR_INVALID_ARGUMENT, "NULL name");
  CHECK(lh_format_from_name("GRAY8", NULL) == LH_ERROR_INVALID_ARGUMENT, "NULL result");
  CHECK(lh_format_bit_depth(LH_FORMAT_COUNT) == 0 && lh_format_bit_depth((LhFormat)-1) == 0,
        "the depth of no format");
  CHECK(lh_format_alignment(LH_FORMAT_COUNT) == 0 && lh_format_alignment((LhFormat)-1) == 0,
        "the alignment of no format");
  size_t row;
  int rows;
  CHECK(
      lh_format_plane_size(LH_FORMAT_COUNT, 0, 4, 4, &row, &rows) == LH_ERROR_INVALID_ARGUMENT &&
          lh_format_plane_size(LH_FORMAT_I420, 3, 4, 4, &row, &rows) == LH_ERROR_INVALID_ARGUMENT &&
          lh_format_plane_size(LH_FORMAT_I420, 1, 0, 4, &row, &rows) == LH_ERROR_INVALID_ARGUMENT &&
          lh_format_plane_size(LH_FORMAT_I420, 1, 4, 4, NULL, &rows) == LH_ERROR_INVALID_ARGUMENT,
      "plane sizes of bad arguments");
  /* Each refusal names what is wrong: a known format is not "unknown". */
  CHECK(lh_format_plane_size(LH_FORMAT_I420, 1, 4, 4, &row, NULL) == LH_ERROR_INVALID_ARGUMENT &&
            strstr(lh_last_error(), "NULL") && !strstr(lh_last_error(), "unknown"),
        "plane size with a NULL result: %s", lh_last_error());
  CHECK(lh_format_plane_size(LH_FORMAT_COUNT, 0, 4, 4, &row, &rows) == LH_ERROR_INVALID_ARGUMENT &&
            strstr(lh_last_error(), "unknown pixel format") && !strstr(lh_last_error(), "NULL"),
        "plane size of an unknown format: %s", lh_last_error());
}

/* P(p) lands where the cumulative histogram says: cdf(P-1) < rank <= cdf(P). */
static void test_percentile_invariant(LhContext *ctx)
{
  GenFrame g;
  gen_frame(&g, LH_FORMAT_RGBX, 123, 45, 0, 0, 0, GEN_PHOTO, 77);
  LhOptions o;
  lh_options_init(&o);
  lh_options_set_percentiles(&o, "0.1,2.5,12.5,37,50,62.5,90,97.5,99.9");
  LhStats s;
  lh_stats_init(&s);
  CHECK(lh_analyze(ctx, &g.frame, &o, &s) == LH_OK, "analyze");
  for (int k = 0; k < o.n_percentiles; k++) {
    uint64_t below = 0, upto = 0;
    for (uint32_t v = 0; v <= s.percentile_value[k]; v++)
      upto += s.histogram[v];
    below = upto - s.histogram[s.percentile_value[k]];
    double need = o.percentiles[k] / 100.0 * (double)s.count;
    CHECK((double)upto >= need - 1e-6 && (double)below < need, "P%g = %u breaks the CDF",
          o.percentiles[k], s.percentile_value[k]);
  }
  lh_stats_clear(&s);
  gen_free(&g);
}

int main(void)
{
  LhContext *ctx = NULL;
  if (lh_context_new(LH_BACKEND_CPU, &ctx) != LH_OK) {
    fprintf(stderr, "cannot make a CPU context: %s\n", lh_last_error());
    return 1;
  }
  if (lh_context_backend(ctx) != LH_BACKEND_CPU) {
    fprintf(stderr, "asked for the CPU, got %s\n", lh_backend_name(lh_context_backend(ctx)));
    return 1;
  }
  test_every_format(ctx);
  test_high_depths(ctx);
  test_counter_wraps(ctx);
  test_16bit_extremes(ctx);
  test_out_of_range_samples(ctx);
  test_regions(ctx);
  test_yuv_as_gray(ctx);
  test_batch(ctx);
  test_from_histogram(ctx);
  test_percentile_invariant(ctx);
  test_bad_arguments(ctx);
  test_devices(ctx);
  test_format_facts();
  lh_context_free(ctx);
  printf("%s: %d failure(s)\n", failures ? "FAILED" : "ok", failures);
  return failures ? 1 : 0;
}
