/* lht-batch.h: what the tool's batch machinery shares (prefix lht_): the
 * options of batch runs, the threaded decode/analyse pipeline, progress,
 * sharding, devices, dataset records, reading records back, and the report. */
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

/* ------------------------------------------------------------------------ */
/* Options of batch runs (batch.c)                                           */

/* CUDA streams (contexts, each with its thread) per device: while one
 * thread copies frames into its pinned staging, another's kernels run. */
#define LHT_DEFAULT_STREAMS 2

/* Where JPEGs are decoded (--decoder). */
typedef enum {
  LHT_DECODER_AUTO, /* nvJPEG and libjpeg-turbo side by side when nvJPEG and a
                       device are usable: a file goes where it is decoded sooner */
  LHT_DECODER_CPU,  /* libjpeg-turbo */
  LHT_DECODER_GPU,  /* nvJPEG, libjpeg-turbo only for what it cannot decode */
} LhtDecoder;

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
  double dark_below;
  double bright_above;
  double low_contrast_below;
  /* after lht_batch_args_check() */
  LhtDecoder decoder;
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

/* The number of decoding threads: --jobs, or the cores. */
int lht_batch_jobs(const LhtBatchArgs *args);

/* Appends to paths the image files that args name (lht_walk) and that fall
 * in this shard (all of them without --shard); false if any path failed. */
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
/* Contexts and devices (devices.c)                                          */

/* Parses "0,1,3" into device numbers (no repeats). */
bool lht_devices_parse(const char *text, GArray *ids, char **error);

typedef struct {
  int n;
  LhContext **contexts;
  int *device_ids; /* the CUDA device of each context; -1: none set (CPU, or the default) */
  LhBackend backend;
} LhtContexts;

/* What a batch run asks of its analysis contexts. */
typedef struct {
  LhBackend backend;        /* --backend */
  const GArray *device_ids; /* --devices; NULL when not given */
  int cpu_workers;          /* contexts when the CPU is used */
  int per_device;           /* --streams: CUDA contexts per device */
  bool verbose;             /* say which backend is used and why */
  const char *asked_by;     /* the option that asked for the backend
                               ("--decoder gpu"), to begin a failure's message */
} LhtContextsWanted;

/* One context on the wanted backend; one line on stderr and NULL when it
 * cannot be had; with verbose, a line saying which backend is used and why. */
LhContext *lht_context_open(LhBackend wanted, bool verbose);

/* Opens the analysis contexts: per_device CUDA contexts (streams) on each
 * device of device_ids, or for AUTO/CUDA without ids on the default device,
 * or cpu_workers CPU contexts when the CPU is used.  Reports the problem and
 * returns false (contexts then zeroed). */
bool lht_contexts_open(LhtContexts *contexts, const LhtContextsWanted *wanted);
/* How many contexts lht_contexts_open() opens when it ends up on backend. */
int lht_contexts_count(const LhtContextsWanted *wanted, LhBackend backend);
/* Frees them; a zeroed LhtContexts too. */
void lht_contexts_close(LhtContexts *contexts);

/* Makes device current on the calling thread (cudaSetDevice); -1 does
 * nothing.  False with *error set (to be freed) when it cannot. */
bool lht_device_use(int device, char **error);

/* A GPU JPEG decoder on the calling thread's device, with a stream of its
 * own, which the context that analyses its images is then set to use too
 * (lh_context_set_stream), so that the analysis follows the decoding on the
 * device without a wait on the host.  False with *error set (to be freed)
 * when it cannot be had. */
typedef struct LhioGpuJpeg LhioGpuJpeg;
bool lht_gpu_jpeg_open(LhioGpuJpeg **decoder, void **stream, char **error);
/* Waits for the work queued on that stream; false with *error set (to be
 * freed) when it failed. */
bool lht_gpu_stream_sync(void *stream, char **error);
/* Frees both and gives the context its own stream back. */
void lht_gpu_jpeg_close(LhContext *context, LhioGpuJpeg *decoder, void *stream);

/* Makes nvJPEG's shared handles on each device of device_ids (NULL: the
 * default one), the slow part of starting it, on the calling thread; and
 * frees them at the end of a run, once every decoder is closed. */
void lht_gpu_jpeg_prepare(const GArray *device_ids);
void lht_gpu_jpeg_shutdown(void);

/* Whether JPEGs can be decoded on the GPU here, judged without touching the
 * device (libnvjpeg found); *why says why not. */
bool lht_gpu_jpeg_usable(const char **why);

/* ------------------------------------------------------------------------ */
/* Progress on stderr (progress.c)                                           */

typedef struct LhtProgress LhtProgress;

/* A bar on a terminal (stderr), or plain lines every few seconds when stderr
 * is not one and lines were asked for; nothing when quiet. */
LhtProgress *lht_progress_new(guint total, bool lines_asked, bool quiet);
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

/* ------------------------------------------------------------------------ */
/* The pipeline (pipeline.c)                                                 */

/* One input on its way through the pipeline. */
typedef struct {
  guint index; /* in the list of paths */
  const char *path;
  LhioImage image;
  LhStats stats; /* filled when the spec asks for analysis */
  int width;     /* of the decoded image (kept when its pixels are freed) */
  int height;
  int status;                 /* 0, or the negative status of the failure */
  char *reason;               /* the failure, for "lumahist: PATH: reason" */
  int worker;                 /* the context (device) that analysed it; -1 none */
  LhBackend backend;          /* where it was analysed (AUTO: not analysed) */
  LhioDecoder decoder;        /* what decoded it (kept when its pixels are freed) */
  const char *converted_from; /* LhioImage.converted_from, kept likewise */
  char *note;                 /* with --verbose: why its JPEG was not decoded on the GPU */
  LhioEncoded output;         /* spec->gpu_jpeg_quality: the output file, encoded by nvJPEG
                                 on the GPU (finish_step writes it); else empty */
  void *user;                 /* the steps' own data */
} LhtItem;

/* Marks an item failed (status < 0) with the reason (printf-style). */
void lht_item_fail(LhtItem *item, int status, const char *format, ...) G_GNUC_PRINTF(3, 4);

typedef struct {
  LhtContextsWanted contexts; /* opened by the run, while it decodes */
  int jobs;                   /* threads that decode (and run finish_step) */
  LhioReadMode read_mode;     /* how images are decoded */
  LhtDecoder decoder;         /* LHIO_READ_LUMA on CUDA: JPEGs decoded there by nvJPEG
                                 (lhio-gpu.h) unless LHT_DECODER_CPU */
  int gpu_jpeg_quality;       /* 1..100 on LHIO_READ_FULL (equalize, clahe, overlay): JPEGs
                                 nvJPEG takes are decoded to planar YCbCr on the GPU,
                                 device_step changes them there, and nvJPEG encodes them
                                 at this quality into item->output, unless
                                 LHT_DECODER_CPU; 0: decoded on the CPU */
  bool verbose;               /* item notes are printed */
  uint64_t max_pixels;        /* lhio_read's limit */
  const LhOptions *analyze;   /* non-NULL: each image is analysed into item->stats,
                                 in batches of up to batch_frames per context */
  int batch_frames;           /* 0: the default for the backend */
  bool keep_pixels;           /* emit needs item->image: its pixels are not freed
                                 once the work on them is done */
  /* In a context's thread after the analysis (e.g. equalizing on the GPU);
   * returns false after lht_item_fail().  May be NULL. */
  bool (*device_step)(LhContext *context, LhtItem *item, void *data);
  /* Back on a decoding thread (e.g. encoding and writing); may be NULL. */
  bool (*finish_step)(LhtItem *item, void *data);
  /* On the calling thread once the contexts are open, before any item is
   * reported or emitted (the steps may have begun): what a run that cannot
   * start must not do (e.g. empty the output file).  False ends the run as
   * if the contexts had failed; it says why itself.  May be NULL. */
  bool (*ready)(const LhtContexts *contexts, void *data);
  /* On the calling thread, for each item that did not fail, in input order;
   * false stops the run as a signal does (e.g. the output cannot be written). */
  bool (*emit)(LhtItem *item, void *data);
  void *data;
  LhtProgress *progress; /* may be NULL */
} LhtPipelineSpec;

typedef struct {
  guint done;       /* items emitted */
  guint failed;     /* items reported as failed */
  int signal;       /* the SIGINT / SIGTERM that stopped the run; 0 if none */
  bool stopped;     /* emit asked to stop */
  bool not_started; /* the contexts could not be opened, a thread could not be
                       started, or ready refused: reported, and nothing was
                       reported or emitted besides */
  double wall_s;    /* of the whole run, the contexts' opening included */
  double open_s;    /* from the start until the contexts were open */
  double decode_s;  /* summed over threads */
  double device_s;  /* in lh_analyze_batch and device_step, summed over contexts */
  double finish_s;
  size_t pinned_bytes;      /* page-locked buffers the images were decoded into */
  guint gpu_hardware;       /* JPEGs decoded by nvJPEG's hardware backend */
  guint gpu_hybrid;         /* by its hybrid backend */
  guint gpu_fallback;       /* sent to the GPU and decoded on the CPU after all */
  guint gpu_shared;         /* --decoder auto: decoded on the CPU while the GPU was busy */
  double gpu_decode_s;      /* GPU time of the nvJPEG calls (CUDA events), summed */
  double gpu_decode_wall_s; /* the contexts' threads in those calls */
  double gpu_open_s;        /* starting the decoders, summed over the contexts */
  guint gpu_encoded;        /* outputs encoded by nvJPEG (gpu_jpeg_quality) */
  guint gpu_encode_fallback; /* decoded on the GPU, then not encoded there: done again on
                                the CPU */
  double gpu_encode_wall_s; /* the contexts' threads in nvJPEG's encoder, summed */
  double cpu_user_s;        /* the process's CPU time over the run */
  double cpu_system_s;
  double pinned_s;    /* locking them, after the contexts' opening */
  guint *per_context; /* items analysed by each context (n of contexts) */
} LhtPipelineResult;

/* Opens *contexts as spec->contexts asks while the first images decode, and
 * sends each path through decode -> analysis / device_step (the contexts'
 * threads, each making its device current first) -> finish_step -> emit, with
 * the pixels of at most 2 x jobs + contexts x batch images in memory (results
 * waiting for their turn keep only their statistics).  Failures are
 * reported on stderr as they come to the front, once the contexts are open.
 * SIGINT and SIGTERM stop the dispatching; what is under way is finished and
 * emitted, then the run returns with result->signal set.  Close *contexts
 * with lht_contexts_close (zeroed when not opened) and free
 * result->per_context with g_free. */
void lht_pipeline_run(const LhtPipelineSpec *spec, LhtContexts *contexts, const GPtrArray *paths,
                      LhtPipelineResult *result);

/* The signal that stops a run under way (0: none yet), for work done in emit
 * (a video's frames) to stop between steps too. */
volatile sig_atomic_t *lht_pipeline_stop_flag(void);

/* "SIGINT" or "SIGTERM" for result->signal, for the message of a stopped run. */
const char *lht_signal_name(int signal_number);

/* Page-locked buffers for decoded pixels (pinned-pool.c), given to lhio as
 * its pixel allocator (lht_pinned_alloc, lht_pinned_release, the pool as
 * user) for a run.  Buffers come from malloc until the pool is enabled with
 * a CUDA context, which page-locks (on device, -1 the current one) an arena
 * for in_flight images of the size-weighted mean size seen so far; and past
 * the arena.
 * Enable it before any analysis runs: page-locking stalls other threads'
 * CUDA calls.  Free the pool once every image it gave is released, before
 * the context is closed. */
typedef struct LhtPinnedPool LhtPinnedPool;

LhtPinnedPool *lht_pinned_pool_new(void);
void lht_pinned_pool_enable(LhtPinnedPool *pool, LhContext *context, int device, guint in_flight);
void *lht_pinned_alloc(size_t bytes, void *pool);
void lht_pinned_release(void *pixels, void *pool);
size_t lht_pinned_pool_bytes(LhtPinnedPool *pool); /* the arena's size */
void lht_pinned_pool_free(LhtPinnedPool *pool);

/* In a device_step (or a function it calls): the context of the calling
 * analysis thread; fallback on any other thread. */
LhContext *lht_worker_context(LhContext *fallback);

/* Prints the --timing summary of a run on stderr, with the GPU's own time
 * read from the contexts (lh_context_device_time): before they are closed. */
void lht_pipeline_print_timing(const LhtPipelineResult *result, const LhtContexts *contexts);

/* ------------------------------------------------------------------------ */
/* Subcommands that write an image per input (rewrite-batch.c)               */

/* Runs change over the inputs of plan (lht_plan_outputs() into out_dir) on
 * the pipeline: decoding and writing on the pool, change on the analysis
 * threads, where lht_worker_context() gives it the thread's context.  Leaves
 * out the inputs marked in leave_out (may be NULL), those of other shards
 * (--shard: by the output's path below out_dir) and, with --skip-existing,
 * those whose output exists.  Returns the exit status: 0, 1 when an input
 * failed, 2 for a usage error, 128 + the signal that stopped the run. */
int lht_batch_rewrite(LhtBatchArgs *args, const LhtPlan *plan, const char *out_dir,
                      const bool *leave_out, const LhtRewriteOptions *options,
                      LhtRewriteFunc change, void *data, LhBackend backend, bool verbose);

/* The output's path below out_dir: the input's path below the folder named,
 * or its name, the same on every machine (what --shard hashes). */
const char *lht_output_shard_key(const char *out_dir, const char *output);

/* ------------------------------------------------------------------------ */
/* Dataset records (dataset.c)                                               */

/* The histograms of many images, summed for each bit depth. */
typedef struct LhtDataset LhtDataset;

LhtDataset *lht_dataset_new(void);
void lht_dataset_free(LhtDataset *dataset);
/* Adds one image's histogram of 2^bit_depth bins. */
void lht_dataset_add(LhtDataset *dataset, int bit_depth, const uint64_t *histogram);
guint64 lht_dataset_images(const LhtDataset *dataset);
/* Writes the dataset record of each bit depth present (one of 8 bits with no
 * image when there is none), in jsonl or as a table line; false if
 * lh_stats_from_histogram() failed (reported). */
bool lht_dataset_write(const LhtDataset *dataset, FILE *out, LhtFormat format,
                       const LhOptions *options);

/* The key of percentile p in records: the shortest "%.Ng" that reads back
 * as p, as output.c writes it. */
void lht_percentile_key(char *key, size_t size, double p);

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
  GArray *black;  /* of LhtVideoSpan */
  GArray *frozen; /* of LhtVideoSpan */
} LhtParsedRecord;

void lht_parsed_record_init(LhtParsedRecord *record);
void lht_parsed_record_clear(LhtParsedRecord *record);

/* Parses one line (without its '\n'); false with *error set (to be freed). */
bool lht_record_parse(const char *line, size_t length, LhtParsedRecord *record, char **error);

/* Called for each complete line of a file: offset is where the line starts.
 * Returns false to stop. */
typedef bool (*LhtRecordFunc)(const LhtParsedRecord *record, guint64 line_number, off_t offset,
                              void *data);

/* Reads every line of in (named name in messages) and calls func for each
 * record.  A malformed line is reported as "NAME:LINE: reason" and makes the
 * result false, and reading goes on.  *complete_end, when not NULL, is the
 * offset after the last line that ends with '\n' (a last line without one,
 * the remains of an interrupted write, is not read then). */
bool lht_records_read(FILE *in, const char *name, LhtRecordFunc func, void *data,
                      off_t *complete_end);

/* path with each byte that is not part of valid UTF-8 replaced by U+FFFD,
 * as record writers write it; to be freed. */
char *lht_path_as_written(const char *path);

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

#endif /* LHT_BATCH_H */
