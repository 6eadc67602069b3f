/* dataset.c: the dataset record: the histograms of every image summed (one
 * sum per bit depth) and their statistics and percentiles through
 * lh_stats_from_histogram(), so that a single run (`stats --dataset`) and the
 * merge of its shards (`merge`) write the very same bytes.
 *
 * A dataset record has the fields of an image record (output.c) without
 * width, height and backend, which belong to one image, and starts with
 *   "path": null, "dataset": true, "images": N
 * where N is the number of images summed; "count" is their pixels.  The
 * histogram is always written: it is what makes the record mergeable. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lht-batch.h"

struct LhtDataset {
  guint64 *histograms[17]; /* by bit depth, 2^depth bins; NULL when none */
  guint64 images[17];
  /* The luma of the first image summed, which every other one must share:
   * a video's matrix and range are its stream's, an image's the options'. */
  bool have_luma;
  LhMatrix matrix;
  LhRange range;
  guint64 refused;
};

LhtDataset *lht_dataset_new(void)
{
  return g_new0(LhtDataset, 1);
}

void lht_dataset_free(LhtDataset *d)
{
  if (!d)
    return;
  for (int i = 0; i < 17; i++)
    g_free(d->histograms[i]);
  g_free(d);
}

/* images: 1 for an image's (or video's) histogram, an earlier dataset
 * record's images for its sum. */
static bool add_images(LhtDataset *d, const char *path, int bit_depth, LhMatrix matrix,
                       LhRange range, const uint64_t *histogram, guint64 images)
{
  if (bit_depth < 8 || bit_depth > 16)
    return false;
  if (!d->have_luma) {
    d->have_luma = true;
    d->matrix = matrix;
    d->range = range;
  } else if (matrix != d->matrix || range != d->range) {
    lht_error(path,
              "--matrix %s --range %s, the dataset's first image %s %s: histograms of different "
              "luma cannot be summed (give --matrix and --range)",
              lh_matrix_name(matrix), lh_range_name(range), lh_matrix_name(d->matrix),
              lh_range_name(d->range));
    d->refused++;
    return false;
  }
  size_t bins = (size_t)1 << bit_depth;
  if (!d->histograms[bit_depth])
    d->histograms[bit_depth] = g_new0(guint64, bins);
  guint64 *sum = d->histograms[bit_depth];
  for (size_t i = 0; i < bins; i++)
    sum[i] += histogram[i];
  d->images[bit_depth] += images;
  return true;
}

bool lht_dataset_add(LhtDataset *d, const char *path, int bit_depth, LhMatrix matrix, LhRange range,
                     const uint64_t *histogram)
{
  return add_images(d, path, bit_depth, matrix, range, histogram, 1);
}

bool lht_dataset_add_record(LhtDataset *d, const LhtParsedRecord *record)
{
  LhMatrix matrix = LH_MATRIX_BT601;
  LhRange range = LH_RANGE_FULL;
  lh_matrix_from_name(record->matrix, &matrix);
  lh_range_from_name(record->range, &range);
  return add_images(d, record->path, record->bit_depth, matrix, range,
                    (const uint64_t *)(void *)record->histogram->data,
                    record->dataset ? record->images : 1);
}

guint64 lht_dataset_refused(const LhtDataset *d)
{
  return d->refused;
}

guint64 lht_dataset_images(const LhtDataset *d)
{
  guint64 n = 0;
  for (int i = 0; i < 17; i++)
    n += d->images[i];
  return n;
}

static void json_double(FILE *out, const char *key, double value)
{
  fprintf(out, ",\"%s\":", key);
  lhp_json_number(out, value);
}

static void write_jsonl(FILE *out, const LhStats *s, guint64 images, const LhOptions *options)
{
  fprintf(out, "{\"path\":null,\"dataset\":true,\"images\":%" G_GUINT64_FORMAT, images);
  fprintf(out, ",\"bit_depth\":%d,\"matrix\":\"%s\",\"range\":\"%s\",\"count\":%" PRIu64,
          s->bit_depth, lh_matrix_name(s->matrix), lh_range_name(s->range), s->count);
  json_double(out, "mean", s->mean);
  json_double(out, "stddev", s->stddev);
  fprintf(out, ",\"min\":%" PRIu32 ",\"max\":%" PRIu32 ",\"median\":%" PRIu32, s->min, s->max,
          s->median);
  json_double(out, "clipped_low", s->clipped_low);
  json_double(out, "clipped_high", s->clipped_high);
  json_double(out, "below_legal", s->below_legal);
  json_double(out, "above_legal", s->above_legal);
  json_double(out, "mean_norm", s->mean_norm);
  json_double(out, "stddev_norm", s->stddev_norm);
  json_double(out, "min_norm", s->min_norm);
  json_double(out, "max_norm", s->max_norm);
  json_double(out, "median_norm", s->median_norm);
  char key[32];
  fputs(",\"percentiles\":{", out);
  for (int i = 0; i < options->n_percentiles; i++) {
    lhp_percentile_key(key, sizeof key, options->percentiles[i]);
    fprintf(out, "%s\"%s\":%" PRIu32, i ? "," : "", key, s->percentile_value[i]);
  }
  fputs("},\"percentiles_norm\":{", out);
  for (int i = 0; i < options->n_percentiles; i++) {
    lhp_percentile_key(key, sizeof key, options->percentiles[i]);
    fprintf(out, "%s\"%s\":", i ? "," : "", key);
    lhp_json_number(out, s->percentile_norm[i]);
  }
  fputs("},\"histogram\":[", out);
  lhp_write_counts(out, s->histogram, s->n_bins, ',');
  fputs("]}\n", out);
}

static void write_table(FILE *out, const LhStats *s, guint64 images, const LhOptions *options)
{
  fprintf(out,
          "dataset (%" G_GUINT64_FORMAT " image%s, %d-bit): mean %.2f  std %.2f  min %" PRIu32
          "  median %" PRIu32 "  max %" PRIu32,
          images, images == 1 ? "" : "s", s->bit_depth, s->mean, s->stddev, s->min, s->median,
          s->max);
  char key[32];
  for (int i = 0; i < options->n_percentiles; i++) {
    lhp_percentile_key(key, sizeof key, options->percentiles[i]);
    fprintf(out, "  p%s %" PRIu32, key, s->percentile_value[i]);
  }
  fputc('\n', out);
}

bool lht_dataset_write(const LhtDataset *d, FILE *out, LhtFormat format, const LhOptions *given)
{
  static const guint64 no_counts[256];
  LhOptions luma = *given;
  const LhOptions *options = &luma;
  if (d->have_luma) {
    luma.matrix = d->matrix;
    luma.range = d->range;
  }
  bool any = lht_dataset_images(d) > 0;
  bool ok = true;
  LhStats stats;
  lh_stats_init(&stats);
  for (int depth = 8; depth <= 16 && ok; depth++) {
    const guint64 *histogram = d->histograms[depth];
    if (!histogram && (any || depth != 8))
      continue;
    if (!histogram)
      histogram = no_counts;
    if (lh_stats_from_histogram(histogram, depth, options, &stats) < 0) {
      lht_error(NULL, "dataset statistics: %s", lh_last_error());
      ok = false;
      break;
    }
    if (format == LHT_FORMAT_TABLE)
      write_table(out, &stats, d->images[depth], options);
    else
      write_jsonl(out, &stats, d->images[depth], options);
  }
  lh_stats_clear(&stats);
  return ok;
}
