/* lht-batch.h: what the tool's batch machinery shares (prefix lht_): the
 * options of batch runs, progress, sharding, dataset records, reading
 * records back, and the report.  The threaded decode/analyse pipeline and
 * the devices are src/pipeline/'s (lhp.h). */
#ifndef LHT_BATCH_H
#define LHT_BATCH_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <glib.h>

#include "io/lhio.h"
#include "lht-video-report.h"
#include "lht.h"
#include "lumahist.h"
#include "pipeline/lhp.h"

/* ------------------------------------------------------------------------ */
/* Report thresholds (report.c), on values normalized to [0, 1]              */

#define LHT_DEFAULT_DARK_BELOW 0.25
#define LHT_DEFAULT_BRIGHT_ABOVE 0.75
#define LHT_DEFAULT_LOW_CONTRAST_BELOW 0.3

typedef struct {
  double dark_below;         /* too dark: median below this */
  double bright_above;       /* too bright: median above this */
  double low_contrast_below; /* low contrast: P95 - P5 below this */
} LhtThresholds;

/* Whether each threshold is a number in [0, 1] (report.c); the rule as the
 * usage error says it. */
bool lht_thresholds_valid(double dark_below, double bright_above, double low_contrast_below);
#define LHT_THRESHOLDS_RULE                                                                        \
  "a report threshold (--dark-below, --bright-above, --low-contrast-below) must be a number in "   \
  "[0, 1]"

/* ------------------------------------------------------------------------ */
/* Options of batch runs (batch.c)                                           */

/* Which options a subcommand takes. */
enum {
  LHT_BATCH_STATS = 1 << 0,   /* --output, --dataset, --report and thresholds */
  LHT_BATCH_OUTPUTS = 1 << 1, /* subcommands that write an image per input */
};

typedef struct {
  unsigned kinds;
  /* as parsed */
  int jobs;
  int streams;
  gboolean progress;
  gboolean quiet;
  gboolean skip_existing;
  gboolean timing;
  gboolean dataset;
  char *shard;
  char *devices;
  char *decoder_name;
  char *output;
  char *report;
  char *files_from; /* --files-from: a file listing more PATHs ('-': standard input) */
  double dark_below;
  double bright_above;
  double low_contrast_below;
  /* after lht_batch_args_check() */
  LhpDecoder decoder;
  guint shard_index;  /* 0-based */
  guint shard_count;  /* 0: no sharding */
  GArray *device_ids; /* of int; NULL when --devices is not given */
  LhtThresholds thresholds;
} LhtBatchArgs;

void lht_batch_args_init(LhtBatchArgs *args, unsigned kinds);
void lht_batch_args_clear(LhtBatchArgs *args);

/* Adds the batch options to the main group of context. */
void lht_batch_add_options(GOptionContext *context, LhtBatchArgs *args);

/* Checks and converts what was parsed; reports a usage error (with a pointer
 * to `command --help`) and returns false when something is wrong. */
bool lht_batch_args_check(LhtBatchArgs *args, const char *command);

/* The exit status of what --devices or --decoder gpu refuse with backend
 * (said on stderr, a usage error with a pointer to `command --help`), before
 * anything is read or made; -1 when they go. */
int lht_batch_backend_refuses(const LhtBatchArgs *args, LhBackend backend, const char *command);

/* Appends the paths that --files-from lists to *paths (a NULL-ended vector
 * of the PATH arguments, replaced by a longer one; NULL: none given);
 * false, said on stderr, when the list cannot be read, is empty with no PATH
 * given, or is standard input where '-' is also an image (files-from.c). */
bool lht_batch_add_listed_paths(const LhtBatchArgs *args, char ***paths);

/* The number of decoding threads: --jobs, or the cores. */
int lht_batch_jobs(const LhtBatchArgs *args);

/* Fills paths (empty) with the image files that args name (lht_walk) and
 * that fall in this shard (all of them without --shard), each path once: one
 * named again, or named and found in a folder named too, is left out with
 * one line; false if any path failed. */
bool lht_batch_collect(const LhtBatchArgs *args, char *const *names, int n_names, GPtrArray *paths);

/* Whether an output already exists, for --skip-existing on subcommands that
 * write a file per input: it is then skipped. */
bool lht_output_exists(const char *path);

/* The options of video files (lht-video.h). */
typedef struct LhtVideoArgs LhtVideoArgs;

/* Everything `lumahist stats` asked for, for lht_batch_stats(). */
typedef struct {
  char *const *names; /* the PATH arguments */
  int n_names;
  const LhOptions *options;
  LhtFormat format;
  bool with_histogram;
  LhBackend backend;
  uint64_t max_pixels;
  bool verbose;
  /* Video files (lht-video.h); NULL when the command takes none. */
  const LhtVideoArgs *video;
  bool matrix_given; /* --matrix / --range given: they override a video's colorimetry */
  bool range_given;
} LhtStatsJob;

/* Runs `lumahist stats` over the files: returns the exit status. */
int lht_batch_stats(LhtBatchArgs *args, const LhtStatsJob *job);

/* ------------------------------------------------------------------------ */
/* Sharding (shard.c)                                                        */

/* Parses "i/n" (0 <= i < n: 0-based, as Kubernetes' completion index and a
 * Slurm array of 0-(n-1) count) into an index and a count. */
bool lht_shard_parse(const char *text, guint *index, guint *count);

/* The shard (0 .. count-1) of a file by its path relative to the folder it
 * was found in (a file named on the command line: its name): a hash of the
 * bytes, stable across runs, machines and versions, and independent of the
 * other files. */
guint lht_shard_of(const char *relative_path, guint count);

/* ------------------------------------------------------------------------ */
/* Progress on stderr (progress.c)                                           */

typedef struct LhtProgress LhtProgress;

/* A bar on a terminal (stderr), or plain lines every few seconds when stderr
 * is not one and lines were asked for; nothing when quiet. */
LhtProgress *lht_progress_new(guint total, bool lines_asked, bool quiet);
/* What it counts, "images" unless said: "videos", or "files" for both. */
void lht_progress_counts(LhtProgress *progress, const char *noun);
void lht_progress_update(LhtProgress *progress, guint done, guint failed);
/* A word on the file under way (a video's frame), NULL to take it off. */
void lht_progress_note(LhtProgress *progress, const char *note);
/* A file done (or failed) outside the pipeline: a video; counted from then on. */
void lht_progress_count(LhtProgress *progress, bool failed);
/* Takes the bar off the line, so that another line can be written. */
void lht_progress_clear(LhtProgress *progress);
/* The last line: done, failed, rate; and frees. */
void lht_progress_finish(LhtProgress *progress, guint done, guint failed, bool interrupted);
/* Frees without a line, after a run that did not start. */
void lht_progress_free(LhtProgress *progress);

/* The tool's side of src/pipeline/ (pipeline-report.c).  A pipeline's
 * report: its messages as "lumahist: PATH: message" lines on
 * stderr (a file's taking the bar off the line first: they come from the
 * thread that draws it), its progress on progress (may be NULL). */
LhpReport lht_progress_report(LhtProgress *progress);

/* One context on the wanted backend (lhp_context_open), on the first of
 * device_ids (--devices; NULL: the current device), its messages on
 * stderr. */
LhContext *lht_context_open(LhBackend wanted, const GArray *device_ids, bool verbose);

/* ------------------------------------------------------------------------ */
/* Subcommands that write an image per input (rewrite-batch.c)               */

/* Runs change over the inputs of plan (lht_plan_outputs() into out_dir),
 * once lht_batch_backend_refuses has let args and backend go, on
 * the pipeline: decoding and writing on the pool, change on the analysis
 * threads, where lhp_worker_context() gives it the thread's context.  Leaves
 * out the inputs marked in leave_out (may be NULL), those of other shards
 * (--shard: by the output's path below out_dir) and, with --skip-existing,
 * those whose output exists.  written_note (may be NULL) gives what to say
 * of each image written, with data.  Adds the outputs written to *write_stop and,
 * when a full disk stopped the run, sets its error and adds the inputs not
 * done, for lht_write_stop_say once the videos are done too.  Returns the
 * exit status: 0, 1 when an input failed, 2 for a usage error, 128 + the
 * signal that stopped the run. */
int lht_batch_rewrite(LhtBatchArgs *args, const LhtPlan *plan, const char *out_dir,
                      const bool *leave_out, const LhtRewriteOptions *options,
                      LhtRewriteFunc change, LhtWrittenNoteFunc written_note, void *data,
                      LhBackend backend, bool verbose, LhtWriteStop *write_stop);

/* Whether --shard gives this run the input written to output: a hash of the
 * output's path below out_dir (the input's path below the folder named, or
 * its name), the same on every machine.  True without --shard. */
bool lht_shard_takes_output(const LhtBatchArgs *args, const char *out_dir, const char *output);

/* ------------------------------------------------------------------------ */
/* Dataset records (dataset.c)                                               */

/* The histograms of many images, summed for each bit depth. */
typedef struct LhtDataset LhtDataset;

LhtDataset *lht_dataset_new(void);
void lht_dataset_free(LhtDataset *dataset);
/* Adds one image's (or video's) histogram of 2^bit_depth bins, whose luma
 * must be the first one's: false, reported on stderr (path: why) and
 * counted, when its matrix or range differ, as `merge` refuses such a
 * record. */
bool lht_dataset_add(LhtDataset *dataset, const char *path, int bit_depth, LhMatrix matrix,
                     LhRange range, const uint64_t *histogram);
guint64 lht_dataset_images(const LhtDataset *dataset);
/* The images lht_dataset_add() refused. */
guint64 lht_dataset_refused(const LhtDataset *dataset);
/* Writes the dataset record of each bit depth present (one of 8 bits with no
 * image when there is none), in jsonl or as a table line, in the luma of the
 * images summed (options' matrix and range when there is none); false if
 * lh_stats_from_histogram() failed (reported). */
bool lht_dataset_write(const LhtDataset *dataset, FILE *out, LhtFormat format,
                       const LhOptions *options);

/* ------------------------------------------------------------------------ */
/* Reading records back (records.c)                                          */

/* What the batch tools need of a jsonl record.  Numbers a record leaves
 * out, or writes as null, read as NAN. */
typedef struct {
  char *path;         /* NULL for a dataset record */
  bool dataset;       /* "dataset": true */
  bool video_frame;   /* a video frame's record ("frame") */
  bool video_summary; /* a video's summary record ("summary": true) */
  int width;
  int height;
  int bit_depth;
  char matrix[16];
  char range[16];
  GPtrArray *percentile_keys; /* of char *, in the record's order */
  GArray *histogram;          /* of guint64; empty when the record has none */
  double clipped_low;
  double clipped_high;
  guint64 count;  /* pixels analysed */
  guint64 images; /* a dataset record's images; 0 in others */
  /* A video frame's record: what the report draws of it. */
  guint64 frame;
  double pts;
  double diff;
  double out_of_legal;
  bool scene_cut;
  /* A video's summary record: what the report says of the video. */
  guint64 frames;
  double duration;
  char *decoder;                        /* NULL when the record has none */
  char *error;                          /* NULL: the video was read to its end */
  double mean_min, mean_mean, mean_max; /* "frame_stats": "mean" */
  double flicker_max;                   /* "frame_stats": "flicker": "max" */
  guint n_cuts;
  GArray *black;  /* of LhpVideoSpan */
  GArray *frozen; /* of LhpVideoSpan */
} LhtParsedRecord;

/* lht_dataset_add() of a record read back (merge, --skip-existing): its
 * matrix and range by their names; a dataset record (an earlier merge's)
 * adds its images, any other one image (dataset.c). */
bool lht_dataset_add_record(LhtDataset *dataset, const LhtParsedRecord *record);

void lht_parsed_record_init(LhtParsedRecord *record);
void lht_parsed_record_clear(LhtParsedRecord *record);

/* The path of a record as records are matched by it (--skip-existing, merge):
 * absolute and without "." and "..", so that ./photos/a.png, photos/a.png
 * and /data/photos/a.png (run in /data) are one file (the bytes of the path
 * only: a link is not followed); to be freed. */
char *lht_record_path_key(const char *path);

/* Parses one line (without its '\n'); false with *error set (to be freed). */
bool lht_record_parse(const char *line, size_t length, LhtParsedRecord *record, char **error);

/* Called for each complete line of a file: offset is where the line starts.
 * Returns false to stop. */
typedef bool (*LhtRecordFunc)(const LhtParsedRecord *record, guint64 line_number, off_t offset,
                              void *data);

/* Reads every line of in (named name in messages) and calls func for each
 * record.  A malformed line is reported as "NAME:LINE: reason" and makes the
 * result false, and reading goes on; without complete_end, a file whose
 * first ten lines are all malformed is given up, in one more line.
 * *complete_end, when not NULL, is the
 * offset after the last line that ends with '\n' (a last line without one,
 * the remains of an interrupted write, is not read then). */
bool lht_records_read(FILE *in, const char *name, LhtRecordFunc func, void *data,
                      off_t *complete_end);

/* A FILE reading in's pipe, FIFO or socket that fails (EINTR) once a stop
 * signal is caught, where a read() blocked in the kernel would restart and
 * wait for the writer's next bytes; NULL when in is not one (read in as it
 * is).  Closing it leaves in open (stoppable-stream.c). */
FILE *lht_stoppable_stream(FILE *in);

/* path as a page or a table shows it: each byte that is not part of valid
 * UTF-8 replaced by U+FFFD (records keep those bytes: json.c); to be
 * freed. */
char *lht_path_shown(const char *path);

/* ------------------------------------------------------------------------ */
/* The HTML report (report.c)                                                */

typedef struct LhtReport LhtReport;

LhtReport *lht_report_new(const LhtThresholds *thresholds, LhMatrix matrix, LhRange range);
void lht_report_free(LhtReport *report);
/* One image, in the order they are to be listed. */
void lht_report_add(LhtReport *report, const char *path, int width, int height, int bit_depth,
                    const uint64_t *histogram);
/* The video sections of the page (video-report.c), made on first use. */
typedef struct LhtVideoReport LhtVideoReport;
LhtVideoReport *lht_report_videos(LhtReport *report);
/* Writes the page to filename through a temporary file renamed over it;
 * false after reporting the problem. */
bool lht_report_write(LhtReport *report, const char *filename);
/* Whether no image and no video was added. */
bool lht_report_is_empty(const LhtReport *report);

#endif /* LHT_BATCH_H */
