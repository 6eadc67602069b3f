/* stats.c: `lumahist stats`, one record of histogram, statistics and
 * percentiles for each image file named or found in the folders named. */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>

#include "io/lhio.h"
#include "lht-batch.h"
#include "lht-video.h"
#include "lht.h"

typedef struct {
  char *format;
  char *percentiles;
  char *percentile_method;
  char *roi;
  gboolean no_histogram;
  LhtLumaArgs luma;
  char **paths;
} StatsArgs;

static void stats_args_clear(StatsArgs *args)
{
  g_free(args->format);
  g_free(args->percentiles);
  lht_luma_args_clear(&args->luma);
  g_free(args->percentile_method);
  g_free(args->roi);
  g_strfreev(args->paths);
}

/* Parses "X,Y,W,H" of non-negative integers with W and H at least 1. */
static bool parse_roi(const char *text, LhRect *roi)
{
  gint64 values[4];
  const char *cursor = text;
  for (int i = 0; i < 4; i++) {
    char *end;
    errno = 0;
    if (!g_ascii_isdigit(*cursor))
      return false;
    values[i] = g_ascii_strtoll(cursor, &end, 10);
    if (errno != 0 || values[i] > G_MAXINT || *end != (i < 3 ? ',' : '\0'))
      return false;
    cursor = end + 1;
  }
  if (values[2] < 1 || values[3] < 1)
    return false;
  *roi = (LhRect){(int)values[0], (int)values[1], (int)values[2], (int)values[3]};
  return true;
}

static bool parse_percentile_method(const char *name, LhPercentileMethod *method)
{
  static const struct {
    const char *name;
    LhPercentileMethod method;
  } methods[] = {
      {"auto", LH_PERCENTILE_AUTO},
      {"hist", LH_PERCENTILE_HISTOGRAM},
      {"sort", LH_PERCENTILE_SORT},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(methods); i++)
    if (strcmp(methods[i].name, name) == 0) {
      *method = methods[i].method;
      return true;
    }
  return false;
}

/* A record's percentiles are keyed by p, so each p may appear once: later
 * repeats are dropped, keeping the order asked. */
static void drop_repeated_percentiles(LhOptions *options)
{
  int kept = 0;
  for (int i = 0; i < options->n_percentiles; i++) {
    bool seen = false;
    for (int j = 0; j < kept && !seen; j++)
      seen = options->percentiles[j] == options->percentiles[i];
    if (!seen)
      options->percentiles[kept++] = options->percentiles[i];
  }
  options->n_percentiles = kept;
}

/* Checks every option into *options, *format and *backend; prints the problem
 * and returns false on a usage error. */
static bool check_args(const StatsArgs *args, LhOptions *options, LhtFormat *format,
                       LhBackend *backend)
{
  lh_options_init(options);
  if (!lht_format_from_name(args->format ? args->format : "jsonl", format)) {
    lht_usage_error("lumahist stats", "unknown --format '%s' (expected jsonl, csv or table)",
                    args->format);
    return false;
  }
  if (lh_options_set_percentiles(options, args->percentiles ? args->percentiles
                                                            : LHT_DEFAULT_PERCENTILES) < 0) {
    lht_usage_error("lumahist stats", "--percentiles: %s", lh_last_error());
    return false;
  }
  drop_repeated_percentiles(options);
  char *why = lht_luma_args_check(&args->luma, &options->matrix, &options->range, backend);
  if (why) {
    lht_usage_error("lumahist stats", "%s", why);
    g_free(why);
    return false;
  }
  if (args->percentile_method &&
      !parse_percentile_method(args->percentile_method, &options->percentile_method)) {
    lht_usage_error("lumahist stats",
                    "unknown --percentile-method '%s' (expected auto, hist or sort)",
                    args->percentile_method);
    return false;
  }
  if (args->roi && !parse_roi(args->roi, &options->roi)) {
    lht_usage_error("lumahist stats",
                    "--roi '%s': expected X,Y,W,H, non-negative integers with W, H >= 1",
                    args->roi);
    return false;
  }
  if (!args->paths || !args->paths[0]) {
    lht_usage_error("lumahist stats", "no PATH given");
    return false;
  }
  return true;
}

int lht_stats_main(int argc, char **argv)
{
  StatsArgs args = {0};
  GOptionEntry entries[] = {
      {"format", 'f', 0, G_OPTION_ARG_STRING, &args.format,
       "Output format: jsonl (one JSON object per line, the default), csv or table",
       "jsonl|csv|table"},
      {"percentiles", 'p', 0, G_OPTION_ARG_STRING, &args.percentiles,
       "Percentiles to report, comma-separated numbers in [0, 100] "
       "(default " LHT_DEFAULT_PERCENTILES ")",
       "LIST"},
      {"percentile-method", 0, 0, G_OPTION_ARG_STRING, &args.percentile_method,
       "auto (default), hist (cumulative histogram) or sort; all give the same values",
       "auto|hist|sort"},
      {"roi", 0, 0, G_OPTION_ARG_STRING, &args.roi,
       "Analyse only this rectangle of each image, in pixels", "X,Y,W,H"},
      {"no-histogram", 0, 0, G_OPTION_ARG_NONE, &args.no_histogram,
       "Leave the histogram out of each record", NULL},
      {G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &args.paths, NULL, "PATH…"},
      {NULL, 0, 0, 0, NULL, NULL, NULL},
  };
  GOptionContext *option_context = g_option_context_new(NULL);
  g_option_context_set_summary(
      option_context,
      "Writes one record per image: size, bit depth, matrix, range, backend, count, mean,\n"
      "standard deviation, min, max, median, clipped and out-of-legal-range fractions, the\n"
      "same normalized to [0, 1], the percentiles and the histogram.  PATHs are PNG or JPEG\n"
      "files, video files (mp4, mov, mkv, webm, ts, avi, y4m, ...: a record per frame and a\n"
      "summary; decoded by GStreamer), or folders searched recursively for *.png, *.jpg,\n"
      "*.jpeg, *.jpe, *.jfif and video files in sorted order; '-' is an image on standard\n"
      "input.  A video's matrix and range come from its colorimetry unless --matrix or\n"
      "--range is given.");
  g_option_context_set_description(
      option_context,
      "Exit status: 0 all files done, 1 some file failed, 2 usage error,\n"
      "128 + N stopped by signal N (SIGINT, SIGTERM, SIGHUP): resume with --skip-existing.");
  g_option_context_add_main_entries(option_context, entries, NULL);
  lht_luma_args_add(option_context, &args.luma);
  LhtBatchArgs batch;
  lht_batch_args_init(&batch, LHT_BATCH_STATS);
  lht_batch_add_options(option_context, &batch);
  LhtVideoArgs video;
  lht_video_args_init(&video);
  lht_video_add_options(option_context, &video);

  int status = lht_parse_options(option_context, &argc, &argv, "lumahist stats");
  g_option_context_free(option_context);
  if (status < 0 && !lht_batch_add_listed_paths(&batch, &args.paths))
    status = LHT_EXIT_USAGE;
  if (status >= 0) {
    lht_batch_args_clear(&batch);
    stats_args_clear(&args);
    return status;
  }

  LhOptions options;
  LhtFormat format = LHT_FORMAT_JSONL;
  LhBackend wanted = LH_BACKEND_AUTO;
  if (!check_args(&args, &options, &format, &wanted) ||
      !lht_batch_args_check(&batch, "lumahist stats") ||
      !lht_video_args_check(&video, "lumahist stats")) {
    lht_batch_args_clear(&batch);
    lht_video_args_clear(&video);
    stats_args_clear(&args);
    return LHT_EXIT_USAGE;
  }

  /* Decoding on many threads, analysis in batches, records in input order. */
  LhtStatsJob job = {
      .names = args.paths,
      .n_names = (int)g_strv_length(args.paths),
      .options = &options,
      .format = format,
      .with_histogram = !args.no_histogram,
      .backend = wanted,
      .max_pixels = (uint64_t)args.luma.max_pixels,
      .verbose = args.luma.verbose,
      .video = &video,
      .matrix_given = args.luma.matrix != NULL,
      .range_given = args.luma.range != NULL,
  };
  lht_walk_include_videos(true);
  status = lht_batch_stats(&batch, &job);
  lht_batch_args_clear(&batch);
  lht_video_args_clear(&video);
  stats_args_clear(&args);
  return status;
}
