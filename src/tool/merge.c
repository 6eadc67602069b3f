/* merge.c: `lumahist merge FILE...`, which sums the histograms of the jsonl
 * records of several runs (the shards of one folder, --shard i/n) into the
 * dataset record, the same bytes as `lumahist stats --dataset` over it all,
 * and can draw the same report: its videos' sections too, from their frames'
 * records, without thumbnails (records hold no pixels).  Files of dataset
 * records alone (earlier merges) are summed as the images they count. */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "lht-batch.h"
#include "lht-video-report.h"

/* Records of another matrix or range each said, up to this many. */
#define SAID_OTHER_LUMA 10

typedef struct {
  char *format;
  char *percentiles;
  char *report;
  double dark_below;
  double bright_above;
  double low_contrast_below;
  char **files;
} MergeArgs;

typedef struct {
  const MergeArgs *args;
  const char *name; /* the file being read */
  LhtDataset *dataset;
  LhtReport *report;
  GHashTable *seen; /* paths, as lht_record_path_key() makes them */
  guint64 duplicates;
  bool have_first;
  char matrix[16];
  char range[16];
  /* The percentiles of the image records summed: the first's, then any
   * another holds; keys_differ once two records' lists differ. */
  GPtrArray *keys;
  bool keys_differ;
  bool keys_noted;    /* a record's percentiles (none, with -p '', too) were noted */
  guint64 other_luma; /* records refused for another matrix or range */
  bool failed;
  /* The dataset records of the file being read that are not the sum of its
   * image records before them (those `stats --dataset` writes, skipped):
   * an earlier merge's, summed at its end if it holds no image record. */
  GPtrArray *file_datasets; /* of PendingDataset */
  bool file_has_images;
  /* The image records of the file being read so far, summed by bit depth,
   * as `stats --dataset` sums them into its record. */
  guint64 *file_histograms[17];
  guint64 file_images[17];
  /* A file held image records and an earlier merge's dataset records:
   * nothing is written, as for image records and merges in two files. */
  bool merge_among_images;
  /* Files read, by device and inode: a file of dataset records named again
   * is counted once, as an image's record met again is. */
  GArray *files_read; /* of FileIdentity */
  /* The dataset records summed (PendingDataset), which another one just
   * like them is said to repeat, and the first file of each kind summed:
   * image records and dataset records are not summed together. */
  GPtrArray *datasets_summed;
  const char *first_images_file;
  const char *first_datasets_file;
  /* The video whose frames' records are being read into the report's open
   * section, until its summary record ends it; NULL when none. */
  char *video_path;
} Merge;

typedef struct {
  LhtParsedRecord record;
  char *where; /* FILE:LINE */
} PendingDataset;

typedef struct {
  dev_t device;
  ino_t inode;
  const char *name;
} FileIdentity;

static PendingDataset *pending_dataset_new(const LhtParsedRecord *record, const char *where)
{
  PendingDataset *p = g_new0(PendingDataset, 1);
  lht_parsed_record_init(&p->record);
  p->record.dataset = true;
  p->record.images = record->images;
  p->record.count = record->count;
  p->record.bit_depth = record->bit_depth;
  g_strlcpy(p->record.matrix, record->matrix, sizeof p->record.matrix);
  g_strlcpy(p->record.range, record->range, sizeof p->record.range);
  for (guint i = 0; i < record->percentile_keys->len; i++)
    g_ptr_array_add(p->record.percentile_keys,
                    g_strdup(g_ptr_array_index(record->percentile_keys, i)));
  g_array_append_vals(p->record.histogram, record->histogram->data, record->histogram->len);
  p->where = g_strdup(where);
  return p;
}

static void pending_dataset_free(gpointer data)
{
  PendingDataset *p = data;
  lht_parsed_record_clear(&p->record);
  g_free(p->where);
  g_free(p);
}

static LhtReport *report_of(Merge *m, const char *matrix_name, const char *range_name)
{
  if (!m->report) {
    LhMatrix matrix = LH_MATRIX_BT601;
    LhRange range = LH_RANGE_FULL;
    lh_matrix_from_name(matrix_name, &matrix);
    lh_range_from_name(range_name, &range);
    LhtThresholds thresholds = {m->args->dark_below, m->args->bright_above,
                                m->args->low_contrast_below};
    m->report = lht_report_new(&thresholds, matrix, range);
  }
  return m->report;
}

/* A video frame's record, into its video's section.  `stats` writes a
 * video's frames one after the other and then its summary, in one file:
 * a frame of another path begins another section (dropping one whose
 * summary never came, as an interrupted run leaves it). */
static void report_frame(Merge *m, const LhtParsedRecord *record)
{
  /* The report is made here when a video comes first: its frames' matrix
   * and range are those of its summary, the first record summed. */
  LhtVideoReport *videos = lht_report_videos(report_of(m, record->matrix, record->range));
  if (!m->video_path || strcmp(m->video_path, record->path) != 0) {
    lht_video_report_begin(videos, record->path);
    g_free(m->video_path);
    m->video_path = g_strdup(record->path);
  }
  LhtVideoFrameRecord frame = {
      .frame = record->frame,
      .pts = record->pts,
      .bit_depth = record->bit_depth,
      .histogram =
          record->histogram->len ? (const uint64_t *)(void *)record->histogram->data : NULL,
      .clipped_low = record->clipped_low,
      .clipped_high = record->clipped_high,
      .out_of_legal = record->out_of_legal,
      .diff = record->diff,
      .scene_cut = record->scene_cut,
  };
  lh_matrix_from_name(record->matrix, &frame.matrix);
  lh_range_from_name(record->range, &frame.range);
  lht_video_report_frame_record(videos, &frame);
}

/* The end of the frames being read: their section ends with summary (the
 * record of the same video, summed) or, without one, is dropped. */
static void report_video_end(Merge *m, const LhtParsedRecord *summary)
{
  if (!m->video_path)
    return;
  LhtVideoReport *videos = lht_report_videos(m->report);
  if (summary && strcmp(summary->path, m->video_path) == 0) {
    LhtVideoSummary video = {
        .frames = summary->frames,
        .duration = summary->duration,
        .width = summary->width,
        .height = summary->height,
        .bit_depth = summary->bit_depth,
        .decoder = summary->decoder,
        .mean_min = summary->mean_min,
        .mean_mean = summary->mean_mean,
        .mean_max = summary->mean_max,
        .flicker_max = summary->flicker_max,
        .n_cuts = summary->n_cuts,
        .black = (const LhpVideoSpan *)(void *)summary->black->data,
        .n_black = summary->black->len,
        .frozen = (const LhpVideoSpan *)(void *)summary->frozen->data,
        .n_frozen = summary->frozen->len,
        .error = summary->error,
    };
    lht_video_report_end(videos, &video);
  } else {
    lht_video_report_drop(videos);
  }
  g_clear_pointer(&m->video_path, g_free);
}

/* Keys name the same percentile when their numbers are equal: older records
 * wrote P0 as "-0", which as another key made the dataset record hold "0"
 * twice. */
static bool same_percentile(const char *a, const char *b)
{
  if (strcmp(a, b) == 0)
    return true;
  char *a_end, *b_end;
  const double x = g_ascii_strtod(a, &a_end);
  const double y = g_ascii_strtod(b, &b_end);
  return a_end != a && *a_end == '\0' && b_end != b && *b_end == '\0' && x == y;
}

static bool has_key(const GPtrArray *keys, const char *key)
{
  for (guint i = 0; i < keys->len; i++)
    if (same_percentile(g_ptr_array_index(keys, i), key))
      return true;
  return false;
}

/* The record's percentiles into the dataset's: records of runs with other
 * --percentiles make the list every percentile any of them holds, which
 * merge_options puts in increasing order, so that the dataset record does
 * not depend on the order the files are named in. */
static bool same_keys(const GPtrArray *a, const GPtrArray *b)
{
  if (a->len != b->len)
    return false;
  for (guint i = 0; i < a->len; i++)
    if (strcmp(g_ptr_array_index(a, i), g_ptr_array_index(b, i)) != 0)
      return false;
  return true;
}

static void note_percentiles(Merge *m, const LhtParsedRecord *record)
{
  const GPtrArray *keys = record->percentile_keys;
  const bool first = !m->keys_noted;
  m->keys_noted = true;
  /* A run's records all have one list: one pass each, not a search a key. */
  if (same_keys(keys, m->keys))
    return;
  if (!first && keys->len != m->keys->len)
    m->keys_differ = true;
  for (guint i = 0; i < keys->len; i++) {
    const char *key = g_ptr_array_index(keys, i);
    if (has_key(m->keys, key))
      continue;
    if (!first)
      m->keys_differ = true;
    g_ptr_array_add(m->keys, g_strdup(key));
  }
}

static gint compare_percentile_keys(gconstpointer a, gconstpointer b)
{
  const double x = g_ascii_strtod(*(char *const *)a, NULL);
  const double y = g_ascii_strtod(*(char *const *)b, NULL);
  return (x > y) - (x < y);
}

/* Whether record can be summed with those before it: it has a histogram,
 * and the luma of the first one summed (said at where when not). */
static bool summable(Merge *m, const LhtParsedRecord *record, const char *where)
{
  if (record->histogram->len == 0) {
    lht_error(where, "a record without a histogram (written with --no-histogram?)");
    return false;
  }
  if (!m->have_first) {
    m->have_first = true;
    g_strlcpy(m->matrix, record->matrix, sizeof m->matrix);
    g_strlcpy(m->range, record->range, sizeof m->range);
  } else if (strcmp(m->matrix, record->matrix) != 0 || strcmp(m->range, record->range) != 0) {
    /* A shard run with other options has them on every record: its first
     * few say so, the count says the rest. */
    if (m->other_luma++ < SAID_OTHER_LUMA)
      lht_error(where,
                "written with --matrix %s --range %s, the first record with %s %s: "
                "histograms of different luma cannot be summed",
                record->matrix, record->range, m->matrix, m->range);
    return false;
  }
  return true;
}

static bool same_sum(const LhtParsedRecord *a, const LhtParsedRecord *b)
{
  return a->images == b->images && a->bit_depth == b->bit_depth &&
         strcmp(a->matrix, b->matrix) == 0 && strcmp(a->range, b->range) == 0 &&
         a->histogram->len == b->histogram->len &&
         memcmp(a->histogram->data, b->histogram->data, a->histogram->len * sizeof(guint64)) == 0;
}

/* An earlier merge's dataset record, as the images it counts: no path
 * tells them apart, so one just like a record already summed (a copy of
 * its file?) is said, and summed. */
static void sum_dataset(Merge *m, PendingDataset *p)
{
  const LhtParsedRecord *record = &p->record;
  if (record->images == 0 && record->histogram->len > 0) {
    lht_error(p->where, "a dataset record without its images (\"images\"): not summed");
    m->failed = true;
    pending_dataset_free(p);
    return;
  }
  if (!summable(m, record, p->where)) {
    m->failed = true;
    pending_dataset_free(p);
    return;
  }
  for (guint i = 0; i < m->datasets_summed->len; i++) {
    const PendingDataset *before = g_ptr_array_index(m->datasets_summed, i);
    if (same_sum(&before->record, record)) {
      lht_error(p->where,
                "the same dataset record as %s (the same images twice?): summed again; "
                "leave out a copy",
                before->where);
      break;
    }
  }
  note_percentiles(m, record);
  lht_dataset_add_record(m->dataset, record);
  if (!m->first_datasets_file)
    m->first_datasets_file = m->name;
  g_ptr_array_add(m->datasets_summed, p);
}

static bool valid_bit_depth(const LhtParsedRecord *record)
{
  return record->bit_depth >= 8 && record->bit_depth <= 16 &&
         record->histogram->len == (guint)1 << record->bit_depth;
}

static void add_to_file_sum(Merge *m, const LhtParsedRecord *record)
{
  if (!valid_bit_depth(record))
    return;
  const int depth = record->bit_depth;
  const guint bins = record->histogram->len;
  if (!m->file_histograms[depth])
    m->file_histograms[depth] = g_new0(guint64, bins);
  const guint64 *histogram = (const guint64 *)(void *)record->histogram->data;
  for (guint i = 0; i < bins; i++)
    m->file_histograms[depth][i] += histogram[i];
  m->file_images[depth]++;
}

/* Whether a dataset record is `stats --dataset`'s: the sum of the image
 * records before it in its file.  An earlier merge's output joined to image
 * records (cat m1.jsonl s2.jsonl) is not: it comes before them, or sums
 * images of other files. */
static bool sums_file_images(const Merge *m, const LhtParsedRecord *record)
{
  if (!valid_bit_depth(record))
    return false;
  const int depth = record->bit_depth;
  return m->file_images[depth] > 0 && record->images == m->file_images[depth] &&
         memcmp(record->histogram->data, m->file_histograms[depth],
                record->histogram->len * sizeof(guint64)) == 0;
}

static void reset_file_sums(Merge *m)
{
  for (int i = 0; i < 17; i++) {
    g_clear_pointer(&m->file_histograms[i], g_free);
    m->file_images[i] = 0;
  }
}

static bool merge_record(const LhtParsedRecord *record, guint64 line, off_t offset, void *data)
{
  Merge *m = data;
  /* A signal (caught by main.c) ends a long read between two records. */
  if (*lhp_pipeline_stop_flag())
    return false;
  if (record->dataset) {
    if (sums_file_images(m, record))
      return true;
    /* The sum of no image (an empty shard's) sums nothing either way, but
     * its percentiles are the ones its run asked for: merged alone, or
     * with other empty shards, the dataset record lists them as stats
     * --dataset of no image does (it listed none). */
    if (record->images > 0 || record->count > 0 || record->histogram->len == 0) {
      char *where = g_strdup_printf("%s:%" G_GUINT64_FORMAT, m->name, line);
      g_ptr_array_add(m->file_datasets, pending_dataset_new(record, where));
      g_free(where);
    } else {
      note_percentiles(m, record);
    }
    return true;
  }
  m->file_has_images = true;
  if (!record->video_frame)
    add_to_file_sum(m, record);
  if (record->video_frame) {
    /* Its video's summary record holds its counts; the report draws it. */
    if (m->args->report)
      report_frame(m, record);
    return true;
  }
  char *where = g_strdup_printf("%s:%" G_GUINT64_FORMAT, m->name, line);
  bool bad = !summable(m, record, where);
  g_free(where);
  /* A video is drawn once, as it is summed: not when its summary is refused
   * or repeats one already read. */
  char *key = lht_record_path_key(record->path);
  bool duplicate = !bad && g_hash_table_contains(m->seen, key);
  report_video_end(m, record->video_summary && !bad && !duplicate ? record : NULL);
  if (bad || duplicate) {
    g_free(key);
    m->failed = m->failed || bad;
    m->duplicates += duplicate;
    return true;
  }
  g_hash_table_add(m->seen, key);
  if (!m->first_images_file)
    m->first_images_file = m->name;
  note_percentiles(m, record);
  const guint64 *histogram = (const guint64 *)(void *)record->histogram->data;
  lht_dataset_add_record(m->dataset, record);
  if (m->args->report)
    lht_report_add(report_of(m, m->matrix, m->range), record->path, record->width, record->height,
                   record->bit_depth, histogram);
  return true;
}

static bool read_file(Merge *m, const char *file)
{
  bool standard_input = strcmp(file, "-") == 0;
  FILE *in = standard_input ? stdin : fopen(file, "r");
  if (!in) {
    lht_error(file, "%s", g_strerror(errno));
    return false;
  }
  m->name = standard_input ? "stdin" : file;
  m->file_has_images = false;
  reset_file_sums(m);
  FILE *stream = lht_stoppable_stream(in);
  bool ok = lht_records_read(stream ? stream : in, m->name, merge_record, m, NULL);
  if (stream)
    fclose(stream);
  if (*lhp_pipeline_stop_flag()) {
    /* Stopped: nothing more is said of a file read in part. */
    if (!standard_input)
      fclose(in);
    return false;
  }
  /* A video's records are all in one file: frames left without their
   * summary at its end (an interrupted run) are not drawn. */
  report_video_end(m, NULL);
  struct stat st;
  bool identified = fstat(fileno(in), &st) == 0 && S_ISREG(st.st_mode);
  const char *named_before = NULL;
  for (guint i = 0; identified && i < m->files_read->len && !named_before; i++) {
    const FileIdentity *f = &g_array_index(m->files_read, FileIdentity, i);
    if (f->device == st.st_dev && f->inode == st.st_ino)
      named_before = f->name;
  }
  if (identified && !named_before)
    g_array_append_val(m->files_read, ((FileIdentity){st.st_dev, st.st_ino, m->name}));
  if (m->file_has_images && !named_before && m->file_datasets->len > 0) {
    const PendingDataset *first = g_ptr_array_index(m->file_datasets, 0);
    lht_error(first->where,
              "a dataset record that is not the sum of the image records before it (an earlier "
              "merge's, joined to image records?), which names no image: an image in both would "
              "count twice; merge the image records' files first (lumahist merge FILE... > "
              "part.jsonl), then the dataset records with it; no dataset record written");
    m->merge_among_images = true;
  }
  if (m->file_has_images || named_before) {
    if (!m->file_has_images)
      lht_error(m->name, "the same file as %s, named before: its dataset records counted once",
                named_before);
    g_ptr_array_set_size(m->file_datasets, 0);
  } else {
    while (m->file_datasets->len > 0)
      sum_dataset(m, g_ptr_array_steal_index(m->file_datasets, 0));
  }
  if (!standard_input)
    fclose(in);
  return ok;
}

/* The options' matrix, range and percentiles: those of the records unless
 * --percentiles says otherwise. */
static bool merge_options(const Merge *m, const MergeArgs *args, LhOptions *options)
{
  lh_options_init(options);
  if (m->have_first) {
    lh_matrix_from_name(m->matrix, &options->matrix);
    lh_range_from_name(m->range, &options->range);
  }
  if (args->percentiles) {
    if (lh_options_set_percentiles(options, args->percentiles) < 0) {
      lht_error(NULL, "--percentiles: %s", lh_last_error());
      return false;
    }
    return true;
  }
  /* No record at all (empty files): stats' own list, as stats --dataset of
   * no image writes it, so that the two give the same bytes. */
  if (!m->keys_noted)
    return lh_options_set_percentiles(options, LHT_DEFAULT_PERCENTILES) == 0;
  if (m->keys_differ)
    g_ptr_array_sort(m->keys, compare_percentile_keys);
  GString *list = g_string_new(NULL);
  for (guint i = 0; i < m->keys->len; i++)
    g_string_append_printf(list, "%s%s", i ? "," : "", (char *)g_ptr_array_index(m->keys, i));
  bool ok = list->len == 0 || lh_options_set_percentiles(options, list->str) == 0;
  if (!ok)
    lht_error(NULL, "the records' percentiles %s: %s", list->str, lh_last_error());
  g_string_free(list, TRUE);
  return ok;
}

int lht_merge_main(int argc, char **argv)
{
  MergeArgs args = {
      .dark_below = LHT_DEFAULT_DARK_BELOW,
      .bright_above = LHT_DEFAULT_BRIGHT_ABOVE,
      .low_contrast_below = LHT_DEFAULT_LOW_CONTRAST_BELOW,
  };
  GOptionEntry entries[] = {
      {"format", 'f', 0, G_OPTION_ARG_STRING, &args.format,
       "jsonl (the dataset record, the default) or table", "jsonl|table"},
      {"percentiles", 'p', 0, G_OPTION_ARG_STRING, &args.percentiles,
       "Percentiles of the dataset (default: those of the records; where they differ, every one "
       "any "
       "record holds)",
       "LIST"},
      {"report", 0, 0, G_OPTION_ARG_FILENAME, &args.report,
       "Also write the HTML report of the images and videos in the records (videos: no "
       "thumbnails)",
       "FILE.html"},
      {"dark-below", 0, 0, G_OPTION_ARG_DOUBLE, &args.dark_below,
       "Report: flag images whose median is below X, in [0, 1] (default 0.25)", "X"},
      {"bright-above", 0, 0, G_OPTION_ARG_DOUBLE, &args.bright_above,
       "Report: flag images whose median is above X (default 0.75)", "X"},
      {"low-contrast-below", 0, 0, G_OPTION_ARG_DOUBLE, &args.low_contrast_below,
       "Report: flag images whose P95 - P5 is below X (default 0.3)", "X"},
      {G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &args.files, NULL, "FILE…"},
      {NULL, 0, 0, 0, NULL, NULL, NULL},
  };
  GOptionContext *context = g_option_context_new(NULL);
  g_option_context_set_summary(
      context,
      "Reads the jsonl records of `lumahist stats` runs (e.g. one per --shard; '-' is stdin)\n"
      "and writes the dataset record: every image's histogram summed, with its statistics and\n"
      "percentiles, the same as `lumahist stats --dataset` over all the images at once.\n"
      "A file of dataset records alone (an earlier merge's) is summed as the images it counts;\n"
      "dataset records that sum the image records before them (stats --dataset) are skipped;\n"
      "an image found twice (however its path is spelled) counts once.");
  g_option_context_set_description(
      context, "Exit status: 0 all records merged, 1 some input failed, 2 usage error.");
  g_option_context_add_main_entries(context, entries, NULL);
  int status = lht_parse_options(context, &argc, &argv, "lumahist merge");
  g_option_context_free(context);

  LhtFormat format = LHT_FORMAT_JSONL;
  if (status < 0) {
    if (args.format && (!lht_format_from_name(args.format, &format) || format == LHT_FORMAT_CSV)) {
      status = lht_usage_error("lumahist merge", "unknown --format '%s' (expected jsonl or table)",
                               args.format);
    } else if (!args.files || !args.files[0]) {
      status = lht_usage_error("lumahist merge", "no FILE given");
    }
  }
  if (status < 0 &&
      !lht_thresholds_valid(args.dark_below, args.bright_above, args.low_contrast_below))
    status = lht_usage_error("lumahist merge", LHT_THRESHOLDS_RULE);
  if (status < 0 && lht_output_path_refusal(args.report))
    status =
        lht_usage_error("lumahist merge", "--report '': %s", lht_output_path_refusal(args.report));
  lht_standard_output_named(&args.report);
  if (status < 0) {
    /* What merge writes is never one of the records files it reads: the
     * record appended to them (>>), or written over their start (1<>). */
    GPtrArray *files = g_ptr_array_new();
    for (int i = 0; args.files[i]; i++)
      g_ptr_array_add(files, strcmp(args.files[i], "-") == 0 ? "/dev/stdin" : args.files[i]);
    if (lht_is_one_of("/dev/stdout", files)) {
      status = lht_usage_error("lumahist merge",
                               "standard output is one of the records files, which are never "
                               "overwritten: redirect the dataset record to a file of its own");
    } else if (args.report && lht_is_one_of(args.report, files)) {
      status = lht_usage_error(
          "lumahist merge", "--report %s is one of the records files, which are never overwritten",
          args.report);
    } else if (args.report && lht_is_standard_output(args.report)) {
      /* The dataset record always goes to standard output, as stats'
       * records do without --output. */
      status = lht_usage_error(
          "lumahist merge",
          "--report %s is standard output, where the dataset record goes: give the page a path "
          "of its own, or redirect the record (> merged.jsonl)",
          args.report);
    }
    g_ptr_array_free(files, TRUE);
  }
  if (status >= 0) {
    g_free(args.format);
    g_free(args.percentiles);
    g_free(args.report);
    g_strfreev(args.files);
    return status;
  }

  /* The page is written at the end: a folder it cannot be written into is
   * said now, before every shard is read, as stats --report says it. */
  if (args.report && !lht_save_file_possible(args.report)) {
    g_free(args.format);
    g_free(args.percentiles);
    g_free(args.report);
    g_strfreev(args.files);
    return LHT_EXIT_FAILURE;
  }

  Merge m = {
      .args = &args,
      .dataset = lht_dataset_new(),
      .seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL),
      .keys = g_ptr_array_new_with_free_func(g_free),
      .file_datasets = g_ptr_array_new_with_free_func(pending_dataset_free),
      .files_read = g_array_new(FALSE, FALSE, sizeof(FileIdentity)),
      .datasets_summed = g_ptr_array_new_with_free_func(pending_dataset_free),
  };
  bool ok = true;
  volatile sig_atomic_t *stop = lhp_pipeline_stop_flag();
  for (int i = 0; args.files[i] && !*stop; i++)
    ok = read_file(&m, args.files[i]) && ok;
  ok = ok && !m.failed;
  /* Stopped while reading: no dataset record or page of a part of them. */
  int signal_number = *stop;
  if (signal_number)
    lht_error(NULL, "stopped by %s while reading the records: nothing written",
              lhp_signal_name(signal_number));
  if (m.other_luma > SAID_OTHER_LUMA)
    lht_error(NULL,
              "%" G_GUINT64_FORMAT
              " records of another matrix or range in all, not summed (the first %d said above)",
              m.other_luma, SAID_OTHER_LUMA);
  if (m.duplicates)
    lht_error(NULL,
              "%" G_GUINT64_FORMAT " record%s of an image already read (the same path) "
              "counted once",
              m.duplicates, m.duplicates == 1 ? "" : "s");

  LhOptions options;
  if (signal_number) {
    lh_options_init(&options);
  } else if (m.merge_among_images) {
    lh_options_init(&options);
    ok = false;
  } else if (m.first_images_file && m.first_datasets_file) {
    /* A dataset record names none of its images: one also among the image
     * records would count twice, unseen. */
    lh_options_init(&options);
    lht_error(NULL,
              "%s holds image records and %s dataset records (earlier merges), which name no "
              "image: an image in both would count twice; merge the image records' files first "
              "(lumahist merge FILE... > part.jsonl), then the dataset records with it; no "
              "dataset record written",
              m.first_images_file, m.first_datasets_file);
    ok = false;
  } else if (!ok && !m.have_first) {
    /* Nothing read, and something could not be: a dataset of no image
     * would stand for inputs that were never counted (an empty input, read
     * whole, still gives one). */
    lh_options_init(&options);
    lht_error(NULL, "no record was read: no dataset record written");
  } else if (merge_options(&m, &args, &options)) {
    if (!lht_dataset_write(m.dataset, stdout, format, &options))
      ok = false;
  } else {
    ok = false;
  }
  if (fflush(stdout) != 0 || ferror(stdout)) {
    lht_error(NULL, "writing the dataset record failed: %s", g_strerror(errno));
    ok = false;
  }
  if (signal_number) {
    /* Said above. */
  } else if (args.report && m.merge_among_images) {
    lht_error(args.report, "not written: a records file was refused (said above)");
    ok = false;
  } else if (args.report && !ok && !m.have_first) {
    /* No record was read (said above): a page of no image would stand for
     * inputs never counted, as the dataset record would. */
    lht_error(args.report, "not written: no record was read");
  } else if (args.report && m.first_datasets_file) {
    lht_error(args.report,
              "not written: the dataset records of %s hold no image to draw (merge --report "
              "over the images' records)",
              m.first_datasets_file);
    ok = false;
  } else if (args.report) {
    if (!m.report) {
      LhtThresholds thresholds = {args.dark_below, args.bright_above, args.low_contrast_below};
      m.report = lht_report_new(&thresholds, options.matrix, options.range);
    }
    if (!lht_report_write(m.report, args.report))
      ok = false;
  }

  lht_report_free(m.report);
  lht_dataset_free(m.dataset);
  g_hash_table_destroy(m.seen);
  g_ptr_array_free(m.keys, TRUE);
  g_ptr_array_free(m.file_datasets, TRUE);
  reset_file_sums(&m);
  g_array_free(m.files_read, TRUE);
  g_ptr_array_free(m.datasets_summed, TRUE);
  g_free(args.format);
  g_free(args.percentiles);
  g_free(args.report);
  g_strfreev(args.files);
  if (signal_number)
    return 128 + signal_number;
  return ok ? LHT_EXIT_OK : LHT_EXIT_FAILURE;
}
