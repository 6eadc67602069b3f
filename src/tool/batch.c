/* batch.c: the options that batch runs share (--jobs, --progress, --quiet,
 * --shard, --devices, --skip-existing, --timing; for stats also --output,
 * --dataset, --report and its thresholds) and the batch run of `lumahist
 * stats`: files, shard, resume, the pipeline, records in input order, each
 * written whole, then the dataset record and the report. */
#define _GNU_SOURCE /* fopencookie */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lht-batch.h"
#include "lht-video.h"

void lht_batch_args_init(LhtBatchArgs *args, unsigned kinds)
{
  memset(args, 0, sizeof *args);
  args->kinds = kinds;
  args->streams = LHP_DEFAULT_STREAMS;
  args->dark_below = LHT_DEFAULT_DARK_BELOW;
  args->bright_above = LHT_DEFAULT_BRIGHT_ABOVE;
  args->low_contrast_below = LHT_DEFAULT_LOW_CONTRAST_BELOW;
}

void lht_batch_args_clear(LhtBatchArgs *args)
{
  g_free(args->shard);
  g_free(args->devices);
  g_free(args->decoder_name);
  g_free(args->output);
  g_free(args->report);
  g_free(args->files_from);
  if (args->device_ids)
    g_array_free(args->device_ids, TRUE);
  memset(args, 0, sizeof *args);
}

void lht_batch_add_options(GOptionContext *context, LhtBatchArgs *args)
{
  GOptionEntry common[] = {
      {"jobs", 'j', 0, G_OPTION_ARG_INT, &args->jobs,
       "Decode on N threads (default 0: one per core)", "N"},
      {"progress", 0, 0, G_OPTION_ARG_NONE, &args->progress,
       "Progress lines on stderr when it is not a terminal (a terminal gets a bar anyway)", NULL},
      {"quiet", 0, 0, G_OPTION_ARG_NONE, &args->quiet,
       "No progress bar or lines; errors are still reported", NULL},
      {"shard", 0, 0, G_OPTION_ARG_STRING, &args->shard,
       "Take only shard I of N (0 <= I < N) of the files, split by a hash of each file's path "
       "below the folder named",
       "I/N"},
      {"devices", 0, 0, G_OPTION_ARG_STRING, &args->devices,
       "Spread the work over these CUDA devices, e.g. 0,1 (videos go to the first)", "LIST"},
      {"streams", 0, 0, G_OPTION_ARG_INT, &args->streams,
       "CUDA streams per device, each with a thread feeding it (default 2; when stats decodes "
       "JPEGs on the GPU, the first decodes them and the others analyse the rest)",
       "N"},
      {"skip-existing", 0, 0, G_OPTION_ARG_NONE, &args->skip_existing,
       (args->kinds & LHT_BATCH_STATS)
           ? "With --output: keep the records already in FILE and do only the other files"
           : "Leave out the inputs whose output already exists",
       NULL},
      {"decoder", 0, 0, G_OPTION_ARG_STRING, &args->decoder_name,
       (args->kinds & LHT_BATCH_STATS)
           ? "Where JPEGs are decoded: auto (the GPU, with nvJPEG, when it and a CUDA device are "
             "usable), cpu (libjpeg-turbo) or gpu"
           : "Where JPEGs are decoded, changed and encoded again: auto (the GPU, with nvJPEG, "
             "when it and a CUDA device are usable), cpu (libjpeg-turbo) or gpu",
       "auto|cpu|gpu"},
      {"files-from", 0, 0, G_OPTION_ARG_FILENAME, &args->files_from,
       "Also take the PATHs listed in FILE ('-': standard input), one a line, or NUL-separated "
       "as find -print0 writes them",
       "FILE"},
      {"timing", 0, 0, G_OPTION_ARG_NONE, &args->timing,
       "Say on stderr where the time went (decoding, analysis, GPU share of the wall time)", NULL},
      {NULL, 0, 0, 0, NULL, NULL, NULL},
  };
  g_option_context_add_main_entries(context, common, NULL);
  if (!(args->kinds & LHT_BATCH_STATS))
    return;
  GOptionEntry stats[] = {
      {"output", 'o', 0, G_OPTION_ARG_FILENAME, &args->output,
       "Write the records to FILE (each record whole, so an interrupted run leaves only "
       "complete ones)",
       "FILE"},
      {"dataset", 0, 0, G_OPTION_ARG_NONE, &args->dataset,
       "End with the dataset record: all images' histograms summed, with their statistics "
       "(as `lumahist merge` makes from shards)",
       NULL},
      {"report", 0, 0, G_OPTION_ARG_FILENAME, &args->report,
       "Write a self-contained HTML page with the dataset histogram, percentile bands and a "
       "sortable table of every image",
       "FILE.html"},
      {"dark-below", 0, 0, G_OPTION_ARG_DOUBLE, &args->dark_below,
       "Report: flag images whose median is below X, in [0, 1] (default 0.25)", "X"},
      {"bright-above", 0, 0, G_OPTION_ARG_DOUBLE, &args->bright_above,
       "Report: flag images whose median is above X (default 0.75)", "X"},
      {"low-contrast-below", 0, 0, G_OPTION_ARG_DOUBLE, &args->low_contrast_below,
       "Report: flag images whose P95 - P5 is below X (default 0.3)", "X"},
      {NULL, 0, 0, 0, NULL, NULL, NULL},
  };
  g_option_context_add_main_entries(context, stats, NULL);
}

bool lht_batch_args_check(LhtBatchArgs *args, const char *command)
{
  if (args->jobs < 0) {
    lht_usage_error(command, "--jobs must be 1 or more (0: one per core)");
    return false;
  }
  if (args->streams < 1 || args->streams > 16) {
    lht_usage_error(command, "--streams must be 1 to 16");
    return false;
  }
  if (args->decoder_name) {
    if (strcmp(args->decoder_name, "auto") == 0)
      args->decoder = LHP_DECODER_AUTO;
    else if (strcmp(args->decoder_name, "cpu") == 0)
      args->decoder = LHP_DECODER_CPU;
    else if (strcmp(args->decoder_name, "gpu") == 0)
      args->decoder = LHP_DECODER_GPU;
    else {
      lht_usage_error(command, "--decoder '%s': expected auto, cpu or gpu", args->decoder_name);
      return false;
    }
  }
  if (args->shard && !lht_shard_parse(args->shard, &args->shard_index, &args->shard_count)) {
    lht_usage_error(command, "--shard '%s': expected I/N with 0 <= I < N, e.g. 0/4", args->shard);
    return false;
  }
  if (args->devices) {
    char *error = NULL;
    args->device_ids = g_array_new(FALSE, FALSE, sizeof(int));
    if (!lhp_devices_parse(args->devices, args->device_ids, &error)) {
      lht_usage_error(command, "--devices '%s': %s (expected a list such as 0,1)", args->devices,
                      error);
      g_free(error);
      return false;
    }
  }
  if (!lht_thresholds_valid(args->dark_below, args->bright_above, args->low_contrast_below)) {
    lht_usage_error(command, LHT_THRESHOLDS_RULE);
    return false;
  }
  const char *refusal = lht_output_path_refusal(args->output);
  if (refusal) {
    lht_usage_error(command, "--output '': %s", refusal);
    return false;
  }
  refusal = lht_output_path_refusal(args->report);
  if (refusal) {
    lht_usage_error(command, "--report '': %s", refusal);
    return false;
  }
  lht_standard_output_named(&args->report);
  args->thresholds =
      (LhtThresholds){args->dark_below, args->bright_above, args->low_contrast_below};
  return true;
}

int lht_batch_jobs(const LhtBatchArgs *args)
{
  return args->jobs > 0 ? args->jobs : (int)g_get_num_processors();
}

/* The part of path below the folder name it was found in; the file's own
 * name for a file named on the command line (as equalize names its output). */
static const char *relative_path(const char *name, bool is_folder, const char *path)
{
  if (!is_folder) {
    const char *slash = strrchr(path, '/');
    return slash && slash[1] ? slash + 1 : path;
  }
  size_t n = strlen(name);
  while (n > 0 && name[n - 1] == '/')
    n--;
  if (strncmp(path, name, n) == 0 && path[n] == '/')
    return path + n + 1;
  return path;
}

static bool collect(const LhtBatchArgs *args, char *const *names, int n_names, GPtrArray *paths)
{
  if (!args->shard_count)
    return lht_walk(names, n_names, NULL, paths);
  bool ok = true;
  GPtrArray *found = g_ptr_array_new();
  for (int i = 0; i < n_names; i++) {
    g_ptr_array_set_size(found, 0);
    ok = lht_walk(&names[i], 1, NULL, found) && ok;
    struct stat info;
    bool is_folder = stat(names[i], &info) == 0 && S_ISDIR(info.st_mode);
    for (guint j = 0; j < found->len; j++) {
      char *path = g_ptr_array_index(found, j);
      if (lht_shard_of(relative_path(names[i], is_folder, path), args->shard_count) ==
          args->shard_index)
        g_ptr_array_add(paths, path);
      else
        g_free(path);
    }
  }
  g_ptr_array_free(found, TRUE);
  return ok;
}

bool lht_batch_collect(const LhtBatchArgs *args, char *const *names, int n_names, GPtrArray *paths)
{
  bool ok = collect(args, names, n_names, paths);
  LhpReport report = lht_progress_report(NULL);
  lhp_drop_repeated_paths(paths, &report);
  return ok;
}

bool lht_output_exists(const char *path)
{
  struct stat info;
  return stat(path, &info) == 0;
}

/* ------------------------------------------------------------------------ */
/* Records written whole                                                     */

/* Records are formatted into a buffer and written with one write(2) each,
 * so that a run stopped by a signal never leaves half a record behind. */
typedef struct {
  int fd;
  const char *name; /* for messages */
  GString *buffer;
  FILE *stream; /* writes into buffer */
  bool failed;
  /* The progress bar, when the records go to a terminal: it is cleared
   * before each write, or a record went on after the bar on its line. */
  LhtProgress *bar;
} Sink;

static ssize_t sink_append(void *cookie, const char *data, size_t size)
{
  g_string_append_len(((Sink *)cookie)->buffer, data, (gssize)size);
  return (ssize_t)size;
}

static void sink_open(Sink *sink, int fd, const char *name)
{
  sink->fd = fd;
  sink->name = name;
  sink->buffer = g_string_sized_new(4096);
  sink->failed = false;
  cookie_io_functions_t functions = {.write = sink_append};
  sink->stream = fopencookie(sink, "w", functions);
}

static bool sink_commit(Sink *sink)
{
  fflush(sink->stream);
  const char *at = sink->buffer->str;
  size_t left = sink->buffer->len;
  /* A full disk takes part of a write: the file is cut back to the records
   * before it (where it can seek: not a pipe), so that it ends with a whole
   * record, as after a signal. */
  off_t before = left > 0 && !sink->failed ? lseek(sink->fd, 0, SEEK_END) : -1;
  if (left > 0 && sink->bar)
    lht_progress_clear(sink->bar);
  while (left > 0 && !sink->failed) {
    ssize_t n = write(sink->fd, at, left);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      lht_error(sink->name, "cannot write the records: %s", g_strerror(n < 0 ? errno : EIO));
      sink->failed = true;
      if (at != sink->buffer->str && before >= 0 && ftruncate(sink->fd, before) != 0)
        lht_error(sink->name, "cannot cut off the part of a record written: %s", g_strerror(errno));
      break;
    }
    at += n;
    left -= (size_t)n;
  }
  g_string_truncate(sink->buffer, 0);
  return !sink->failed;
}

static void sink_close(Sink *sink)
{
  if (sink->stream)
    fclose(sink->stream);
  g_string_free(sink->buffer, TRUE);
}

/* ------------------------------------------------------------------------ */
/* Resuming from the records already in --output                             */

typedef struct {
  const LhtStatsJob *job;
  const char *name;
  GHashTable *done; /* paths as written, made absolute (lht_record_path_key) */
  guint64 repeated; /* records of a path already read: counted once, as merge does */
  LhtDataset *dataset;
  LhtReport *report;
  off_t dataset_offset; /* where the trailing dataset records start; -1 none */
  off_t video_offset;   /* where the frames of a video without its summary start; -1 none */
  char *mismatch;       /* why the file cannot be continued */
  /* What resume_trim() is to do once the run starts. */
  off_t keep;      /* the bytes to keep; -1: all of them */
  bool incomplete; /* the last line is incomplete */
} Resume;

/* The pixels an image's record counts: roi's (the library refuses one that
 * does not lie inside the image), or the whole image's without one. */
static guint64 pixels_analysed(const LhtParsedRecord *record, const LhRect *roi)
{
  if (roi->width > 0 && roi->height > 0)
    return (guint64)roi->width * (guint64)roi->height;
  return (guint64)record->width * (guint64)record->height;
}

static bool resume_record(const LhtParsedRecord *record, guint64 line, off_t offset, void *data)
{
  Resume *r = data;
  const LhOptions *options = r->job->options;
  if (record->dataset) {
    if (r->dataset_offset < 0)
      r->dataset_offset = offset;
    return true;
  }
  /* A dataset record is rewritten at the end only when nothing follows it. */
  r->dataset_offset = -1;
  /* A video is done once its summary is written; the frames of one that is
   * not (an interrupted run) are dropped and it is done again. */
  if (record->video_frame) {
    if (r->video_offset < 0)
      r->video_offset = offset;
    return true;
  }
  r->video_offset = -1;
  bool video = record->video_summary;
  /* A video's matrix and range are its stream's unless given. */
  if (!video && (strcmp(record->matrix, lh_matrix_name(options->matrix)) != 0 ||
                 strcmp(record->range, lh_range_name(options->range)) != 0)) {
    r->mismatch = g_strdup_printf("line %" G_GUINT64_FORMAT " was written with --matrix %s "
                                  "--range %s",
                                  line, record->matrix, record->range);
    return false;
  }
  if (!video && record->count != pixels_analysed(record, &options->roi)) {
    r->mismatch = g_strdup_printf("line %" G_GUINT64_FORMAT " counts %" G_GUINT64_FORMAT
                                  " pixels of its %dx%d image: written with another --roi",
                                  line, record->count, record->width, record->height);
    return false;
  }
  if (g_hash_table_size(r->done) == 0) {
    bool same = (int)record->percentile_keys->len == options->n_percentiles;
    for (int i = 0; same && i < options->n_percentiles; i++) {
      char key[32];
      lhp_percentile_key(key, sizeof key, options->percentiles[i]);
      same = strcmp(key, g_ptr_array_index(record->percentile_keys, i)) == 0;
    }
    if (!same) {
      /* Both lists said, as the records' order is their columns' in CSV:
       * the same percentiles in another order are other ones here. */
      GString *theirs = g_string_new(NULL), *ours = g_string_new(NULL);
      for (guint i = 0; i < record->percentile_keys->len; i++)
        g_string_append_printf(theirs, "%s%s", i ? "," : "",
                               (const char *)g_ptr_array_index(record->percentile_keys, i));
      for (int i = 0; i < options->n_percentiles; i++) {
        char key[32];
        lhp_percentile_key(key, sizeof key, options->percentiles[i]);
        g_string_append_printf(ours, "%s%s", i ? "," : "", key);
      }
      r->mismatch = g_strdup_printf("its records have --percentiles '%s', this run '%s'",
                                    theirs->str, ours->str);
      g_string_free(theirs, TRUE);
      g_string_free(ours, TRUE);
      return false;
    }
    if ((record->histogram->len > 0) != r->job->with_histogram) {
      r->mismatch = g_strdup(r->job->with_histogram ? "its records were written with "
                                                      "--no-histogram"
                                                    : "its records have histograms (add none "
                                                      "with --no-histogram only to a new file)");
      return false;
    }
  }
  if ((r->dataset || r->report) && record->histogram->len == 0) {
    r->mismatch = g_strdup("--dataset and --report need the histograms of its records");
    return false;
  }
  /* A file that holds a record twice (two runs' outputs joined): counted
   * once in the dataset and the report, as merge counts it. */
  if (!g_hash_table_add(r->done, lht_record_path_key(record->path))) {
    r->repeated++;
    return true;
  }
  const guint64 *histogram = (const guint64 *)(void *)record->histogram->data;
  if (r->dataset)
    lht_dataset_add_record(r->dataset, record);
  if (r->report)
    lht_report_add(r->report, record->path, record->width, record->height, record->bit_depth,
                   histogram);
  return true;
}

/* Reads the records of fd (open for reading and appending) and collects the
 * paths done; what is to be dropped (an incomplete last line, trailing
 * dataset records) is only noted, for resume_trim().  False after reporting
 * why the file cannot be continued. */
static bool resume_read(Resume *r, int fd)
{
  int copy = dup(fd);
  FILE *in = copy >= 0 ? fdopen(copy, "r") : NULL;
  if (!in) {
    lht_error(r->name, "%s", g_strerror(errno));
    if (copy >= 0)
      close(copy);
    return false;
  }
  off_t complete_end = 0;
  r->dataset_offset = -1;
  r->video_offset = -1;
  bool ok = lht_records_read(in, r->name, resume_record, r, &complete_end);
  struct stat info;
  bool stat_ok = fstat(fileno(in), &info) == 0;
  fclose(in);
  if (r->mismatch) {
    lht_error(r->name, "cannot be continued: %s; use the same options or another --output",
              r->mismatch);
    return false;
  }
  if (!ok) {
    lht_error(r->name, "cannot be continued: it holds lines that are not records");
    return false;
  }
  off_t end = complete_end;
  if (r->dataset_offset >= 0)
    end = r->dataset_offset;
  if (r->video_offset >= 0)
    end = r->video_offset;
  r->keep = stat_ok && end < info.st_size ? end : -1;
  r->incomplete = stat_ok && complete_end < info.st_size;
  return true;
}

/* Drops what resume_read() noted, once the run has started.  False after
 * reporting why it could not. */
static bool resume_trim(const Resume *r, int fd, bool verbose)
{
  if (r->keep >= 0) {
    if (r->incomplete)
      lht_error(r->name, "dropping an incomplete last line (left by an interrupted run)");
    if (ftruncate(fd, r->keep) != 0) {
      lht_error(r->name, "%s", g_strerror(errno));
      return false;
    }
  }
  if (verbose)
    lht_error(r->name, "%u record%s already there", g_hash_table_size(r->done),
              g_hash_table_size(r->done) == 1 ? "" : "s");
  if (r->repeated)
    lht_error(r->name,
              "%" G_GUINT64_FORMAT " record%s of an image already read (the same path) "
              "counted once",
              r->repeated, r->repeated == 1 ? "" : "s");
  return true;
}

int lht_batch_backend_refuses(const LhtBatchArgs *args, LhBackend backend, const char *command)
{
  if (args->device_ids && backend == LH_BACKEND_CPU)
    return lht_usage_error(command, "--devices and --backend cpu do not go together");
  if (args->decoder == LHP_DECODER_GPU) {
    const char *why = NULL;
    if (backend == LH_BACKEND_CPU)
      return lht_usage_error(command, "--decoder gpu needs the CUDA backend, not --backend cpu");
    if (!lhp_gpu_jpeg_usable(&why)) {
      lht_error(NULL, "--decoder gpu: %s", why);
      return LHT_EXIT_FAILURE;
    }
  }
  return -1;
}

/* ------------------------------------------------------------------------ */
/* One writer a records file                                                 */

/* What a second run writing the same --output is told: the records of two
 * runs would mix (each seeks to the end of the other's), and a truncation
 * would cut the first's. */
static void refuse_second_writer(const char *name)
{
  lht_error(name, "another lumahist run is writing it (the file is locked); not touched: give "
                  "each run its own --output");
}

/* Locks the records file open on fd for this run, so that a second run that
 * names it is refused (refuse_second_writer) instead of writing over it.  A
 * FIFO or a device is written through, unlocked, as is a file on a file
 * system without locks.  False after the refusal. */
static bool lock_records(int fd, const char *name)
{
  struct stat info;
  if (fstat(fd, &info) != 0 || !S_ISREG(info.st_mode))
    return true;
  int locked;
  while ((locked = flock(fd, LOCK_EX | LOCK_NB)) != 0 && errno == EINTR)
    continue;
  if (locked != 0 && errno == EWOULDBLOCK) {
    refuse_second_writer(name);
    return false;
  }
  return true;
}

/* Whether fd is a regular file (one that is emptied, trimmed and locked). */
static bool is_regular(int fd)
{
  struct stat info;
  return fstat(fd, &info) == 0 && S_ISREG(info.st_mode);
}

/* ------------------------------------------------------------------------ */
/* lumahist stats                                                            */

typedef struct {
  const LhtStatsJob *job;
  const LhtBatchArgs *args;
  const GPtrArray *paths;
  Resume *resume; /* with --skip-existing */
  guint skipped;  /* files already done */
  int fd;         /* of the records; -1 until open */
  const char *out_name;
  Sink sink;
  LhtWriter *writer; /* once the run has started */
  LhBackend backend;
  LhtDataset *dataset;
  LhtReport *report;
  /* Videos, run in input order between the pipeline's images. */
  const GPtrArray *images; /* what the pipeline runs: the paths that are not videos */
  LhpVideoPlaces places;
  guint videos_done; /* with their summary record written */
  guint videos_failed;
  gint64 videos_us; /* spent in them (--timing) */
  /* Of those, the ones run inside the pipeline's run, between its images:
   * its wall and CPU time, which --timing gives the images, hold them. */
  bool inside_pipeline;
  gint64 videos_inside_us;
  double videos_inside_cpu_s[2]; /* user, system */
  /* A video was stopped before its summary: nothing after it is written, so
   * that its frames' records stay last, where --skip-existing drops them. */
  bool video_cut;
  LhtVideoStats *video;
  LhtProgress *progress;
} StatsRun;

static bool commit_records(void *data)
{
  return sink_commit(&((StatsRun *)data)->sink);
}

/* Once the contexts are open: only now is the output emptied or trimmed and
 * the header written, so that a run that cannot start (--backend cuda
 * without a device, say) leaves the output as it was. */
static bool stats_ready(const LhpContexts *contexts, void *data)
{
  StatsRun *run = data;
  const LhtBatchArgs *args = run->args;
  run->backend = contexts->backend;
  if (run->fd < 0) {
    /* Not there when the run started (or not a regular file).  With
     * --skip-existing a file made since is another run's: its records were
     * not read.  A FIFO or a device (/dev/stdout on a pipe) is opened for
     * writing only: read and write, the run was a FIFO's reader itself, and
     * once its reader left (head) it waited forever on a full pipe. */
    struct stat info;
    bool special = stat(args->output, &info) == 0 && !S_ISREG(info.st_mode);
    int flags = (special ? O_WRONLY : O_RDWR) | O_CREAT | O_CLOEXEC |
                (args->skip_existing ? O_APPEND | O_EXCL : 0);
    run->fd = open(args->output, flags, 0666);
    if (run->fd < 0 && errno == EEXIST && args->skip_existing) {
      refuse_second_writer(args->output);
      return false;
    }
    if (run->fd < 0) {
      lht_error(args->output, "%s", g_strerror(errno));
      return false;
    }
    if (!lock_records(run->fd, args->output))
      return false;
  }
  /* Emptied only once it is this run's (locked), never before. */
  if (args->output && !args->skip_existing && is_regular(run->fd) && ftruncate(run->fd, 0) != 0) {
    lht_error(args->output, "%s", g_strerror(errno));
    return false;
  }
  if (run->resume && !resume_trim(run->resume, run->fd, run->job->verbose))
    return false;
  if (run->skipped && (run->job->verbose || args->progress) && !args->quiet)
    lht_error(args->output, "skipping %u file%s already done", run->skipped,
              run->skipped == 1 ? "" : "s");
  sink_open(&run->sink, run->fd, run->out_name);
  run->sink.bar = isatty(run->fd) ? run->progress : NULL;
  run->writer = lht_writer_new_video(run->sink.stream, run->job->format, run->job->options,
                                     run->job->with_histogram, run->paths,
                                     lhp_video_places_videos(&run->places) > 0);
  sink_commit(&run->sink);
  if (lhp_video_places_videos(&run->places) > 0) {
    LhtVideoJob video_job = {
        .args = run->job->video,
        .options = run->job->options,
        .matrix_given = run->job->matrix_given,
        .range_given = run->job->range_given,
        .format = run->job->format,
        .with_histogram = run->job->with_histogram,
        .backend = run->job->backend,
        .device_ids = run->args->device_ids,
        .verbose = run->job->verbose,
        .writer = run->writer,
        .stream = run->sink.stream,
        .commit = commit_records,
        .commit_data = run,
        .dataset = run->dataset,
        .report = run->report,
        .progress = run->progress,
        .stop = lhp_pipeline_stop_flag(),
    };
    run->video = lht_video_stats_new(&video_job);
  }
  return true;
}

/* --timing: the pipeline's lines where it had images ("0 images in 0.001
 * s wall" was all a run of videos said), and the videos' own. */
static double seconds_between(const struct timeval *from, const struct timeval *to)
{
  return (double)(to->tv_sec - from->tv_sec) + (double)(to->tv_usec - from->tv_usec) / 1e6;
}

static void print_timing(const StatsRun *run, const LhpPipelineResult *result,
                         const LhpContexts *contexts)
{
  /* The images' lines without the videos run between them: their wall
   * and CPU time went into the pipeline's (1 image in 3.953 s wall, 3.9 s
   * of CPU per image, for a PNG beside a 40 s clip). */
  LhpPipelineResult images_alone = *result;
  images_alone.wall_s -= (double)run->videos_inside_us / G_USEC_PER_SEC;
  images_alone.cpu_user_s -= run->videos_inside_cpu_s[0];
  images_alone.cpu_system_s -= run->videos_inside_cpu_s[1];
  if (run->images->len > 0)
    lhp_pipeline_print_timing(&images_alone, contexts);
  const guint videos = run->videos_done + run->videos_failed;
  if (videos == 0)
    return;
  const double seconds = (double)run->videos_us / G_USEC_PER_SEC;
  const uint64_t frames = lht_video_stats_frames(run->video);
  lht_error(NULL,
            "timing: %u video%s, %" G_GUINT64_FORMAT " frame%s in %.3f s (%.1f frames/s), "
            "decoded and analysed one video at a time between the images",
            videos, videos == 1 ? "" : "s", frames, frames == 1 ? "" : "s", seconds,
            seconds > 0 ? (double)frames / seconds : 0.0);
}

/* Runs one video; false when a signal stopped it before its summary. */
static bool run_video(StatsRun *run, const char *path)
{
  volatile sig_atomic_t *stop = lhp_pipeline_stop_flag();
  const gint64 start = g_get_monotonic_time();
  struct rusage before, after;
  getrusage(RUSAGE_SELF, &before);
  bool ok = lht_video_stats_file(run->video, path);
  const gint64 spent = g_get_monotonic_time() - start;
  getrusage(RUSAGE_SELF, &after);
  run->videos_us += spent;
  if (run->inside_pipeline) {
    run->videos_inside_us += spent;
    run->videos_inside_cpu_s[0] += seconds_between(&before.ru_utime, &after.ru_utime);
    run->videos_inside_cpu_s[1] += seconds_between(&before.ru_stime, &after.ru_stime);
  }
  if (!ok && *stop) {
    /* Neither done nor failed: done again by --skip-existing. */
    run->video_cut = true;
    return false;
  }
  if (ok)
    run->videos_done++;
  else
    run->videos_failed++;
  lht_progress_count(run->progress, !ok);
  return true;
}

/* Runs the videos that come before the pipeline's image number image;
 * false when the records cannot be written or a signal came. */
static bool run_videos_before(StatsRun *run, guint image)
{
  while (lhp_video_places_due(&run->places, image)) {
    volatile sig_atomic_t *stop = lhp_pipeline_stop_flag();
    if (*stop || run->sink.failed)
      return false;
    if (!run_video(run, lhp_video_places_next(&run->places, image)))
      return false;
  }
  return !run->sink.failed;
}

static bool emit_record(LhpItem *item, void *data)
{
  StatsRun *run = data;
  if (run->video_cut || (run->video && !run_videos_before(run, item->index)))
    return false;
  LhtRecord record = {
      .path = item->path,
      .width = item->width,
      .height = item->height,
      .backend = item->backend != LH_BACKEND_AUTO ? item->backend : run->backend,
      .decoder = item->decoder,
      .converted_from = item->converted_from,
      .stats = &item->stats,
  };
  lht_writer_record(run->writer, &record);
  bool ok = sink_commit(&run->sink);
  if (run->dataset)
    lht_dataset_add(run->dataset, item->path, item->stats.bit_depth, item->stats.matrix,
                    item->stats.range, item->stats.histogram);
  if (run->report)
    lht_report_add(run->report, item->path, record.width, record.height, item->stats.bit_depth,
                   item->stats.histogram);
  return ok;
}

/* Whether two paths name one file: the same place once links are followed
 * (lht_landing_path: a link to a file not there yet lands where that file
 * will be), or one regular file that exists under both (a hard link; a
 * terminal may well be both /dev/stdout and /dev/stderr). */
static bool same_file(const char *a, const char *b)
{
  char *landing_a = lht_landing_path(a);
  char *landing_b = lht_landing_path(b);
  bool same = strcmp(landing_a, landing_b) == 0;
  g_free(landing_a);
  g_free(landing_b);
  struct stat info_a, info_b;
  return same || (stat(a, &info_a) == 0 && stat(b, &info_b) == 0 && S_ISREG(info_a.st_mode) &&
                  info_a.st_dev == info_b.st_dev && info_a.st_ino == info_b.st_ino);
}

int lht_batch_stats(LhtBatchArgs *args, const LhtStatsJob *job)
{
  const char *command = "lumahist stats";
  /* "-" names standard output, as it names standard input among the paths
   * (a file named "-" in the current folder was written). */
  if (args->output && strcmp(args->output, "-") == 0)
    g_clear_pointer(&args->output, g_free);
  if (args->skip_existing && !args->output)
    return lht_usage_error(command, "--skip-existing needs --output FILE (the records to keep)");
  if (args->skip_existing && job->format != LHT_FORMAT_JSONL)
    return lht_usage_error(command, "--skip-existing reads back jsonl records only");
  /* A FIFO or a device holds no records to keep: reading them back waited
   * forever on a FIFO. */
  struct stat output_kind;
  if (args->skip_existing && stat(args->output, &output_kind) == 0 &&
      (S_ISFIFO(output_kind.st_mode) || S_ISCHR(output_kind.st_mode)))
    return lht_usage_error(
        command, "--skip-existing needs --output to be a file (the records to keep), not a "
                 "FIFO or a device");
  if (args->dataset && job->format == LHT_FORMAT_CSV)
    return lht_usage_error(command, "--dataset writes a jsonl record or a table line, not CSV");
  if (args->output && args->report && same_file(args->output, args->report))
    return lht_usage_error(
        command, "--report %s is the --output file: give the page a path of its own", args->report);
  if (!args->output && args->report && lht_is_standard_output(args->report))
    return lht_usage_error(
        command,
        "--report %s is standard output, where the records go: give the page a path of its "
        "own, or the records --output FILE",
        args->report);
  int refused = lht_batch_backend_refuses(args, job->backend, command);
  if (refused >= 0)
    return refused;
  /* --decoder gpu: no quiet fall back to the CPU backend. */
  LhBackend backend = args->decoder == LHP_DECODER_GPU ? LH_BACKEND_CUDA : job->backend;

  int jobs = lht_batch_jobs(args);
  StatsRun run = {
      .job = job,
      .args = args,
      .fd = args->output ? -1 : STDOUT_FILENO,
      .out_name = args->output ? args->output : "stdout",
  };
  if (args->dataset)
    run.dataset = lht_dataset_new();
  if (args->report)
    run.report = lht_report_new(&args->thresholds, job->options->matrix, job->options->range);

  int status = LHT_EXIT_OK;
  GHashTable *done = NULL;
  Resume resume = {
      .job = job,
      .name = args->output,
      .dataset = run.dataset,
      .report = run.report,
      .dataset_offset = -1,
      .video_offset = -1,
      .keep = -1,
  };
  /* A records file there already is locked now, before any work, so that a
   * second run naming it is refused at once; it is emptied or trimmed only
   * once the run starts (stats_ready), and one not there is made then. */
  struct stat output_info;
  if (args->output && (args->skip_existing ||
                       (stat(args->output, &output_info) == 0 && S_ISREG(output_info.st_mode)))) {
    run.fd = open(args->output, O_RDWR | O_CLOEXEC | (args->skip_existing ? O_APPEND : 0));
    if (run.fd >= 0) {
      if (!lock_records(run.fd, args->output))
        status = LHT_EXIT_FAILURE;
    } else if (errno != ENOENT) {
      lht_error(args->output, "%s", g_strerror(errno));
      status = LHT_EXIT_FAILURE;
    }
  }
  if (args->skip_existing) {
    /* Read now, since the files to do depend on it, but not changed before
     * the run starts (stats_ready). */
    done = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    resume.done = done;
    if (run.fd >= 0 && status == LHT_EXIT_OK) {
      run.resume = &resume;
      if (!resume_read(&resume, run.fd))
        status = LHT_EXIT_FAILURE;
    }
  }
  /* The page is written at the end: a folder it cannot be written into is
   * said now, before the run, as an --output that cannot be opened is. */
  if (args->report && status == LHT_EXIT_OK && !lht_save_file_possible(args->report))
    status = LHT_EXIT_FAILURE;

  GPtrArray *paths = g_ptr_array_new_with_free_func(g_free);
  bool ok = true;
  if (status == LHT_EXIT_OK) {
    ok = lht_batch_collect(args, job->names, job->n_names, paths);
    if (done) {
      GPtrArray *remaining = g_ptr_array_new_with_free_func(g_free);
      for (guint i = 0; i < paths->len; i++) {
        /* Records give back the path's bytes, those that are not UTF-8 too. */
        const char *path = g_ptr_array_index(paths, i);
        char *key = lht_record_path_key(path);
        if (!g_hash_table_contains(done, key))
          g_ptr_array_add(remaining, g_strdup(path));
        g_free(key);
      }
      run.skipped = paths->len - remaining->len;
      g_ptr_array_free(paths, TRUE);
      paths = remaining;
    }
    /* A signal in the walk: the files found so far are not all, and the
     * output is left as it was (emptying it could hit an input not found). */
    int stopped = lht_stopped_before_start();
    if (stopped)
      status = stopped;
  }
  /* What the run writes must not be what it reads: the records (-o, or
   * standard output redirected: stats photos >> photos/x.png) or the page
   * written over an input image would destroy it. */
  const char *writes[] = {args->output ? args->output : "/dev/stdout", args->report};
  const char *option[] = {args->output ? "--output " : "standard output", "--report "};
  for (int i = 0; i < 2 && status == LHT_EXIT_OK; i++)
    if (writes[i] && lht_is_one_of(writes[i], paths)) {
      status = lht_usage_error(command, "%s%s is one of the inputs, which are never overwritten",
                               option[i], args->output || i > 0 ? writes[i] : "");
    }
  run.paths = paths;
  GPtrArray *images = g_ptr_array_new();
  lhp_video_places_split(&run.places, paths, run.job->video != NULL, images);
  run.images = images;

  if (status == LHT_EXIT_OK) {
    LhtProgress *progress = lht_progress_new(paths->len, args->progress, args->quiet);
    guint videos = lhp_video_places_videos(&run.places);
    if (videos > 0)
      lht_progress_counts(progress, videos == paths->len ? "videos" : "files");
    run.progress = progress;
    LhpPipelineSpec spec = {
        .contexts = {backend, args->device_ids, jobs, args->streams, job->verbose,
                     args->decoder == LHP_DECODER_GPU ? "--decoder gpu" : NULL},
        .jobs = jobs,
        .read_mode = LHIO_READ_LUMA,
        .decoder = args->decoder,
        .verbose = job->verbose,
        .max_pixels = job->max_pixels,
        .analyze = job->options,
        .ready = stats_ready,
        .emit = emit_record,
        .data = &run,
        .report = lht_progress_report(progress),
        .catch_signals = true,
        .process_ends_after = true,
    };
    LhpContexts contexts;
    LhpPipelineResult result;
    run.inside_pipeline = true;
    lhp_pipeline_run(&spec, &contexts, images, &result);
    run.inside_pipeline = false;
    if (result.not_started) {
      lht_progress_free(progress);
      ok = false;
    } else {
      Sink *sink = &run.sink;
      if (run.video && !result.signal && !result.stopped && !sink->failed) {
        /* The videos after the last image, with the signals caught again
         * into the flag the videos read. */
        LhpStopSignals old_handlers;
        lhp_stop_signals_catch(&old_handlers);
        volatile sig_atomic_t *stop = lhp_pipeline_stop_flag();
        const char *path;
        while (!*stop && !sink->failed && (path = lhp_video_places_next(&run.places, G_MAXUINT)))
          if (!run_video(&run, path))
            break;
        lhp_stop_signals_release(&old_handlers);
        result.signal = *stop;
      }
      if (run.videos_failed)
        ok = false;
      /* One that came after the pipeline gave the signals back to the
       * command's handler: no dataset record or page for a stopped run. */
      if (!result.signal && !result.stopped)
        result.signal = *lhp_pipeline_stop_flag();
      bool interrupted = result.signal != 0;
      sink->bar = NULL; /* freed by lht_progress_finish */
      lht_progress_finish(progress, result.done, result.failed, interrupted || result.stopped);
      if (args->timing)
        print_timing(&run, &result, &contexts);
      if (result.failed)
        ok = false;

      if (!lht_writer_finish(run.writer))
        sink->failed = true;
      sink_commit(sink);
      if (interrupted) {
        /* Files whose records are all written: a video stopped before its
         * summary is not one (--skip-existing does it again), nor a file
         * that failed. */
        guint files = result.done + run.videos_done;
        lht_error(NULL, "stopped by %s: the records of %u file%s written%s%s%s",
                  lhp_signal_name(result.signal), files, files == 1 ? "" : "s",
                  args->output ? " to " : "", args->output ? args->output : "",
                  args->output ? "; run again with --skip-existing to go on" : "");
        status = 128 + result.signal;
      } else if (!sink->failed && !result.stopped) {
        if (run.dataset) {
          if (!lht_dataset_write(run.dataset, sink->stream, job->format, job->options) ||
              lht_dataset_refused(run.dataset) > 0)
            ok = false;
          sink_commit(sink);
        }
        /* Every file failed: a page of no image would stand for files never
         * counted, and replace a good one of an earlier run (as merge). */
        if (run.report && !ok && lht_report_is_empty(run.report))
          lht_error(args->report, "not written: no file was analysed");
        else if (run.report && !lht_report_write(run.report, args->report))
          ok = false;
      }
      if (sink->failed || result.stopped)
        ok = false;
      sink_close(sink);
    }
    g_free(result.per_context);
    lhp_contexts_close(&contexts);
  }

  if (args->output && run.fd >= 0 && close(run.fd) != 0) {
    lht_error(args->output, "%s", g_strerror(errno));
    ok = false;
  }
  if (status == LHT_EXIT_OK && !ok)
    status = LHT_EXIT_FAILURE;
  if (done)
    g_hash_table_destroy(done);
  g_free(resume.mismatch);
  g_ptr_array_free(images, TRUE);
  lhp_video_places_clear(&run.places);
  lht_video_stats_free(run.video);
  g_ptr_array_free(paths, TRUE);
  lht_dataset_free(run.dataset);
  lht_report_free(run.report);
  return status;
}
