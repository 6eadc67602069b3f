/* stats.c: `lumahist stats`, one record of histogram, statistics and
 * percentiles for each image file named or found in the folders named. */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>

#include "io/lhio.h"
#include "lht.h"

#define DEFAULT_PERCENTILES "1,5,50,95,99"

typedef struct {
  char *format;
  char *percentiles;
  char *matrix;
  char *range;
  char *backend;
  char *percentile_method;
  char *roi;
  gboolean no_histogram;
  gint64 max_pixels;
  gboolean verbose;
  char **paths;
} StatsArgs;

static void stats_args_clear(StatsArgs *args)
{
  g_free(args->format);
  g_free(args->percentiles);
  g_free(args->matrix);
  g_free(args->range);
  g_free(args->backend);
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

static int usage_error(const char *format, ...) G_GNUC_PRINTF(1, 2);

static int usage_error(const char *format, ...)
{
  va_list args;
  fputs("lumahist: ", stderr);
  va_start(args, format);
  vfprintf(stderr, format, args);
  va_end(args);
  fputs("\nTry 'lumahist stats --help'.\n", stderr);
  return LHT_EXIT_USAGE;
}

/* Checks every option into *options, *format and *backend; prints the problem
 * and returns false on a usage error. */
static bool check_args(const StatsArgs *args, LhOptions *options, LhtFormat *format,
                       LhBackend *backend)
{
  lh_options_init(options);
  if (!lht_format_from_name(args->format ? args->format : "jsonl", format)) {
    usage_error("unknown --format '%s' (expected jsonl, csv or table)", args->format);
    return false;
  }
  if (lh_options_set_percentiles(options,
                                 args->percentiles ? args->percentiles : DEFAULT_PERCENTILES) < 0) {
    usage_error("--percentiles: %s", lh_last_error());
    return false;
  }
  drop_repeated_percentiles(options);
  if (args->matrix && lh_matrix_from_name(args->matrix, &options->matrix) < 0) {
    usage_error("--matrix: %s", lh_last_error());
    return false;
  }
  if (args->range && lh_range_from_name(args->range, &options->range) < 0) {
    usage_error("--range: %s", lh_last_error());
    return false;
  }
  if (args->backend && lh_backend_from_name(args->backend, backend) < 0) {
    usage_error("--backend: %s", lh_last_error());
    return false;
  }
  if (args->percentile_method &&
      !parse_percentile_method(args->percentile_method, &options->percentile_method)) {
    usage_error("unknown --percentile-method '%s' (expected auto, hist or sort)",
                args->percentile_method);
    return false;
  }
  if (args->roi && !parse_roi(args->roi, &options->roi)) {
    usage_error("--roi '%s': expected X,Y,W,H, non-negative integers with W, H >= 1", args->roi);
    return false;
  }
  if (args->max_pixels < 0) {
    usage_error("--max-pixels must not be negative (0: the default limit)");
    return false;
  }
  if (!args->paths || !args->paths[0]) {
    usage_error("no PATH given");
    return false;
  }
  return true;
}

/* Reads and analyses one file and writes its record; false if it failed. */
static bool stats_one(LhContext *context, const char *path, const LhOptions *options,
                      uint64_t max_pixels, LhStats *stats, LhtWriter *writer)
{
  LhioImage image;
  memset(&image, 0, sizeof image);
  int status = lhio_read(path, LHIO_READ_LUMA, max_pixels, &image);
  if (status >= 0)
    status = lh_analyze(context, &image.frame, options, stats);
  if (status < 0) {
    lht_error(path, "%s", lht_reason(status, path));
  } else {
    LhtRecord record = {
        .path = path,
        .width = image.frame.width,
        .height = image.frame.height,
        .backend = lh_context_backend(context),
        .stats = stats,
    };
    lht_writer_record(writer, &record);
  }
  lhio_image_clear(&image);
  return status >= 0;
}

int lht_stats_main(int argc, char **argv)
{
  StatsArgs args = {0};
  GOptionEntry entries[] = {
      {"format", 'f', 0, G_OPTION_ARG_STRING, &args.format,
       "Output format: jsonl (one JSON object per line, the default), csv or table", "FORMAT"},
      {"percentiles", 'p', 0, G_OPTION_ARG_STRING, &args.percentiles,
       "Percentiles to report, comma-separated numbers in [0, 100] (default " DEFAULT_PERCENTILES
       ")",
       "LIST"},
      {"matrix", 'm', 0, G_OPTION_ARG_STRING, &args.matrix,
       "R'G'B' to luma matrix: bt601 (default), bt709 or bt2020", "MATRIX"},
      {"range", 'r', 0, G_OPTION_ARG_STRING, &args.range,
       "Code value range: full (default) or limited (16-235 for 8 bits)", "RANGE"},
      {"backend", 'b', 0, G_OPTION_ARG_STRING, &args.backend,
       "auto (CUDA if a device is usable, else the CPU; the default), cpu or cuda", "BACKEND"},
      {"percentile-method", 0, 0, G_OPTION_ARG_STRING, &args.percentile_method,
       "auto (default), hist (cumulative histogram) or sort; all give the same values", "METHOD"},
      {"roi", 0, 0, G_OPTION_ARG_STRING, &args.roi,
       "Analyse only this rectangle of each image, in pixels", "X,Y,W,H"},
      {"no-histogram", 0, 0, G_OPTION_ARG_NONE, &args.no_histogram,
       "Leave the histogram out of each record", NULL},
      {"max-pixels", 0, 0, G_OPTION_ARG_INT64, &args.max_pixels,
       "Refuse images with more pixels than N (default 2^28)", "N"},
      {"verbose", 'v', 0, G_OPTION_ARG_NONE, &args.verbose,
       "Say on stderr which backend is used and why", NULL},
      {G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &args.paths, NULL, "PATH…"},
      {NULL, 0, 0, 0, NULL, NULL, NULL},
  };
  GOptionContext *option_context = g_option_context_new(NULL);
  g_option_context_set_summary(
      option_context,
      "Writes one record per image: size, bit depth, matrix, range, backend, count, mean,\n"
      "standard deviation, min, max, median, clipped and out-of-legal-range fractions, the\n"
      "same normalized to [0, 1], the percentiles and the histogram.  PATHs are PNG or JPEG\n"
      "files, or folders searched recursively for *.png, *.jpg and *.jpeg in sorted order.");
  g_option_context_set_description(
      option_context, "Exit status: 0 all files done, 1 some file failed, 2 usage error.");
  g_option_context_add_main_entries(option_context, entries, NULL);

  int status = lht_parse_options(option_context, &argc, &argv, "lumahist stats");
  g_option_context_free(option_context);
  if (status >= 0) {
    stats_args_clear(&args);
    return status;
  }

  LhOptions options;
  LhtFormat format = LHT_FORMAT_JSONL;
  LhBackend wanted = LH_BACKEND_AUTO;
  if (!check_args(&args, &options, &format, &wanted)) {
    stats_args_clear(&args);
    return LHT_EXIT_USAGE;
  }

  LhContext *context = NULL;
  if (lh_context_new(wanted, &context) < 0) {
    lht_error(NULL, "cannot use the %s backend: %s", lh_backend_name(wanted), lh_last_error());
    stats_args_clear(&args);
    return LHT_EXIT_FAILURE;
  }
  if (args.verbose) {
    const char *note = lh_context_note(context);
    lht_error(NULL, "using the %s backend%s%s", lh_backend_name(lh_context_backend(context)),
              *note ? ": " : "", note);
  }

  GPtrArray *paths = g_ptr_array_new_with_free_func(g_free);
  bool ok = lht_walk(args.paths, (int)g_strv_length(args.paths), paths);
  LhtWriter *writer = lht_writer_new(stdout, format, &options, !args.no_histogram, paths);
  LhStats stats;
  lh_stats_init(&stats);
  for (guint i = 0; i < paths->len; i++) {
    /* A failed file is reported and the run goes on; the status tells at the end. */
    if (!stats_one(context, g_ptr_array_index(paths, i), &options, (uint64_t)args.max_pixels,
                   &stats, writer))
      ok = false;
  }
  lh_stats_clear(&stats);
  if (!lht_writer_finish(writer)) {
    lht_error(NULL, "writing the records failed: %s", g_strerror(errno));
    ok = false;
  }
  g_ptr_array_free(paths, TRUE);
  lh_context_free(context);
  stats_args_clear(&args);
  return ok ? LHT_EXIT_OK : LHT_EXIT_FAILURE;
}
