/* lhp.h: the batch pipeline (prefix lhp_), shared by the command-line tool
 * and the Python module: the analysis contexts of a run and their devices
 * (devices.c), page-locked pixel buffers (pinned-pool.c), and the threaded
 * decode -> analyse -> finish -> emit pipeline itself (pipeline.c).  It
 * prints nothing: what it has to say goes to the caller's LhpReport. */
#ifndef LHP_H
#define LHP_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include <glib.h>

#include "io/lhio.h"
#include "lumahist.h"

/* What a run has to say, and its progress; every member may be NULL. */
typedef struct {
  /* One message: a failed file (path its path), a note on one (--verbose),
   * or the run's own (path NULL): a context or thread that cannot be had,
   * nvJPEG unusable on a device, which backend is used.  Called from any
   * of the run's threads, one call at a time. */
  void (*say)(const char *path, const char *message, void *data);
  /* Items emitted and failed so far, on the thread that runs the pipeline. */
  void (*progress)(guint done, guint failed, void *data);
  void *data;
} LhpReport;

/* Says message (printf-style) through report, which may be NULL. */
void lhp_say(const LhpReport *report, const char *path, const char *format, ...)
    G_GNUC_PRINTF(3, 4);
/* Says strerror(error), a system call's failure on path; while report->say
 * runs, lhp_said_os_error() gives error (0 during any other say). */
void lhp_say_os_error(const LhpReport *report, const char *path, int error);
/* The same with a clause after it, in parentheses (NULL: none). */
void lhp_say_os_error_because(const LhpReport *report, const char *path, int error,
                              const char *because);
int lhp_said_os_error(void);

/* Appends to paths (newly allocated strings) the files named by args (walk.c):
 * a file as it is ("-" as /dev/stdin), a folder by its image files (.png,
 * .jpg, .jpeg in any case; with videos, its video files too,
 * lhio_is_video_name) found recursively with the entries of each folder in
 * sorted byte order.  Says
 * each path that cannot be read and goes on; returns false if there was
 * any.  A link back up the tree is said and skipped, which is not a
 * failure.  leave_out (NULL: none) is a folder not descended when it lies
 * below an argument: the folder a command writes its outputs to, so that
 * one run's outputs are not the next run's inputs.  stop (NULL: none): once
 * it is set, from any thread, the walk ends where it is and returns false
 * (lumahist.stats_files closed during a long walk). */
bool lhp_walk(char *const *args, int n_args, bool videos, const char *leave_out,
              const volatile gint *stop, const LhpReport *report, GPtrArray *paths);
/* Leaves out of paths each one that came before (a file named twice, or
 * named and found in a folder named too), freed, and says so: as a folder
 * reached twice, it is read once, so that a dataset counts it once, as a
 * merge of its records, which keeps one a path, does (walk.c). */
void lhp_drop_repeated_paths(GPtrArray *paths, const LhpReport *report);

/* The message of the library's last error without a leading "PATH: ", which
 * a line that names the file writes already; the status name when there is
 * no message. */
const char *lhp_reason(int status, const char *path);

/* Where JPEGs are decoded (the tool's --decoder, Python's decoder=). */
typedef enum {
  LHP_DECODER_AUTO, /* nvJPEG and libjpeg-turbo side by side when nvJPEG and a
                       device are usable: a file goes where it is decoded sooner */
  LHP_DECODER_CPU,  /* libjpeg-turbo */
  LHP_DECODER_GPU,  /* nvJPEG, libjpeg-turbo only for what it cannot decode */
} LhpDecoder;

/* ------------------------------------------------------------------------ */
/* Contexts and devices (devices.c)                                          */

/* Parses "0,1,3" into device numbers (no repeats). */
bool lhp_devices_parse(const char *text, GArray *ids, char **error);

typedef struct {
  int n;
  LhContext **contexts;
  int *device_ids; /* the CUDA device of each context; -1: none set (CPU, or the default) */
  LhBackend backend;
} LhpContexts;

/* What a batch run asks of its analysis contexts. */
typedef struct {
  LhBackend backend;        /* --backend */
  const GArray *device_ids; /* --devices; NULL when not given */
  int cpu_workers;          /* contexts when the CPU is used */
  int per_device;           /* --streams: CUDA contexts per device */
  bool verbose;             /* say which backend is used and why */
  const char *asked_by;     /* the option that asked for the backend
                               ("--decoder gpu"), to begin a failure's message */
  const LhpReport *report;  /* where those messages go; may be NULL (the
                               pipeline sets its spec's) */
  const char *devices_by;   /* the option that named device_ids, to begin a
                               failure's message (NULL: "--devices") */
} LhpContextsWanted;

/* CUDA streams (contexts, each with its thread) per device, as the tool and
 * the Python module open them unless told otherwise: while one thread copies
 * frames into its pinned staging, another's kernels run.  A stats run that
 * decodes on the GPU makes one nvJPEG decoder a device whatever the streams
 * (a second only added its start-up and contended for the engines,
 * tests/bench/results/h100-decoder-auto.txt), and its other streams analyse
 * what the CPU decodes (pipeline.c, jpeg_queue). */
#define LHP_DEFAULT_STREAMS 2

/* One context on the wanted backend, on CUDA device `device` (-1: the
 * current one); NULL when it cannot be had, said through report; with
 * verbose, a message saying which backend is used and why. */
LhContext *lhp_context_open(LhBackend wanted, int device, bool verbose, const LhpReport *report);
/* The first of device_ids (--devices, devices=: where videos, read one at
 * a time, go), or -1 when there is none (NULL or empty). */
int lhp_first_device(const GArray *device_ids);

/* Opens the analysis contexts: per_device CUDA contexts (streams) on each
 * device of device_ids, or for AUTO/CUDA without ids on the default device,
 * or cpu_workers CPU contexts when the CPU is used.  Says the problem
 * (wanted->report) and returns false (contexts then zeroed). */
bool lhp_contexts_open(LhpContexts *contexts, const LhpContextsWanted *wanted);
/* How many contexts lhp_contexts_open() opens when it ends up on backend. */
int lhp_contexts_count(const LhpContextsWanted *wanted, LhBackend backend);
/* Frees them; a zeroed LhpContexts too. */
void lhp_contexts_close(LhpContexts *contexts);

/* Makes device current on the calling thread (cudaSetDevice); -1 does
 * nothing.  False with *error set (to be freed) when it cannot. */
bool lhp_device_use(int device, char **error);

/* A GPU JPEG decoder on the calling thread's device, with a stream of its
 * own, which the context that analyses its images is then set to use too
 * (lh_context_set_stream), so that the analysis follows the decoding on the
 * device without a wait on the host.  False with *error set (to be freed)
 * when it cannot be had. */
typedef struct LhioGpuJpeg LhioGpuJpeg;
bool lhp_gpu_jpeg_open(LhioGpuJpeg **decoder, void **stream, char **error);
/* Waits for the work queued on that stream; false with *error set (to be
 * freed) when it failed. */
bool lhp_gpu_stream_sync(void *stream, char **error);
/* Frees both and gives the context its own stream back. */
void lhp_gpu_jpeg_close(LhContext *context, LhioGpuJpeg *decoder, void *stream);
/* As lhp_gpu_jpeg_close for the context, but the decoder and its stream are
 * kept, unused, until the process exits (LhpPipelineSpec.process_ends_after). */
void lhp_gpu_jpeg_leave(LhContext *context, LhioGpuJpeg *decoder, void *stream);

/* Makes nvJPEG's shared handles on each device of device_ids (NULL: the
 * default one), the slow part of starting it, on the calling thread. */
void lhp_gpu_jpeg_prepare(const GArray *device_ids);
/* A run that may decode with nvJPEG holds its handles from its start to its
 * end; the last to let them go frees them, when free_them says so, once
 * every decoder is closed: never while another run uses them. */
void lhp_gpu_jpeg_hold(void);
void lhp_gpu_jpeg_let_go(bool free_them);

/* Whether JPEGs can be decoded on the GPU here, judged without touching the
 * device (libnvjpeg found); *why says why not. */
bool lhp_gpu_jpeg_usable(const char **why);

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
  char *reason;               /* the failure, said as "PATH: reason" */
  int os_error;               /* the failure's errno, when a system call's on the file; else 0 */
  int worker;                 /* the context (device) that analysed it; -1 none */
  LhBackend backend;          /* where it was analysed (AUTO: not analysed) */
  LhioDecoder decoder;        /* what decoded it (kept when its pixels are freed) */
  const char *converted_from; /* LhioImage.converted_from, kept likewise */
  char *note;                 /* with --verbose: why its JPEG was not decoded on the GPU */
  LhioEncoded output;         /* spec->gpu_jpeg_quality: the output file, encoded by nvJPEG
                                 on the GPU (finish_step writes it); else empty */
  void *user;                 /* the steps' own data */
} LhpItem;

/* Marks an item failed (status < 0) with the reason (printf-style). */
void lhp_item_fail(LhpItem *item, int status, const char *format, ...) G_GNUC_PRINTF(3, 4);

typedef struct {
  LhpContextsWanted contexts; /* opened by the run, while it decodes */
  int jobs;                   /* threads that decode (and run finish_step) */
  LhioReadMode read_mode;     /* how images are decoded */
  LhpDecoder decoder;         /* LHIO_READ_LUMA on CUDA: JPEGs decoded there by nvJPEG
                                 (lhio-gpu.h) unless LHP_DECODER_CPU */
  int gpu_jpeg_quality;       /* 1..100 on LHIO_READ_FULL (equalize, clahe, overlay): JPEGs
                                 nvJPEG takes are decoded to planar YCbCr on the GPU,
                                 device_step changes them there, and nvJPEG encodes them
                                 at this quality into item->output, unless
                                 LHP_DECODER_CPU; 0: decoded on the CPU */
  bool verbose;               /* item notes are printed */
  uint64_t max_pixels;        /* lhio_read's limit */
  const LhioFifoWait *fifo_wait; /* how long a named FIFO waits for its writer;
                                    NULL: lhio_set_fifo_wait's */
  const LhOptions *analyze;   /* non-NULL: each image is analysed into item->stats,
                                 in batches of up to batch_frames per context */
  int batch_frames;           /* 0: the default for the backend */
  bool keep_pixels;           /* emit needs item->image: its pixels are not freed
                                 once the work on them is done */
  /* In a context's thread after the analysis (e.g. equalizing on the GPU);
   * returns false after lhp_item_fail().  May be NULL. */
  bool (*device_step)(LhContext *context, LhpItem *item, void *data);
  /* Back on a decoding thread (e.g. encoding and writing); may be NULL. */
  bool (*finish_step)(LhpItem *item, void *data);
  /* On the calling thread once the contexts are open, before any item is
   * reported or emitted (the steps may have begun): what a run that cannot
   * start must not do (e.g. empty the output file).  False ends the run as
   * if the contexts had failed; it says why itself.  May be NULL. */
  bool (*ready)(const LhpContexts *contexts, void *data);
  /* On the calling thread, for each item that did not fail, in input order;
   * false stops the run as a signal does (e.g. the output cannot be written). */
  bool (*emit)(LhpItem *item, void *data);
  /* Likewise for each item that failed, in its place among them; NULL: its
   * reason is said (report) instead. */
  bool (*failed)(LhpItem *item, void *data);
  /* After a stop, the items not yet begun come back undone, a gap in the
   * inputs: emit and failed are not called for the items after it (their
   * records would come before the gap's when a run resumes), but a reason
   * said through report still is.  True: they are called for those items
   * too, in input order, where each item's output stands alone (a file of
   * its own, written by finish_step) and emit counts it. */
  bool emit_past_gaps;
  void *data;
  /* SIGINT, SIGTERM and SIGHUP stop the run (the tool); false leaves the
   * process's handlers alone (the Python module, whose Ctrl-C is its own). */
  bool catch_signals;
  /* May be NULL; once *stop is set (from any thread) the run stops as at a
   * signal: what is under way is finished, nothing more is emitted. */
  const volatile gint *stop;
  /* nvJPEG's handles outlive the run, for the next one in the process (a
   * second to make again); else freed at its end, as no other run uses them. */
  bool keep_gpu_jpeg;
  /* The process ends with the run (the tool): nvJPEG's decoders and handles
   * are left to its exit, which gives the GPU's memory and engines back at
   * once; freed one by one, they took 0.15-0.2 s of a 2-second run of 2000
   * JPEGs on an H100 host. */
  bool process_ends_after;
  LhpReport report; /* failures, notes, the run's messages, progress */
} LhpPipelineSpec;

typedef struct {
  guint done;       /* items emit took (returned true for) */
  guint failed;     /* items reported as failed */
  int signal;       /* the SIGINT / SIGTERM / SIGHUP that stopped the run; 0 if none */
  bool stopped;     /* emit or failed asked to stop, or *spec->stop was set */
  bool not_started; /* the contexts could not be opened, a thread could not be
                       started, or ready refused: reported, and nothing was
                       reported or emitted besides */
  double wall_s;    /* of the whole run, the contexts' opening included */
  double open_s;    /* from the start until the contexts were open */
  double decode_s;  /* summed over threads */
  double device_s;  /* in lh_analyze_batch and device_step, summed over contexts */
  double finish_s;
  size_t pinned_bytes; /* page-locked buffers the images were decoded into */
  size_t past_pinned;  /* images decoded past them, into pageable memory */
  size_t past_pinned_bytes;
  double pinned_wait_s;      /* decoding threads waited for page-locked room, summed */
  guint gpu_hardware;        /* JPEGs decoded by nvJPEG's hardware backend */
  guint gpu_hybrid;          /* by its hybrid backend */
  guint gpu_fallback;        /* sent to the GPU and decoded on the CPU after all */
  guint gpu_shared;          /* --decoder auto: decoded on the CPU while the GPU was busy */
  double gpu_decode_s;       /* GPU time of the nvJPEG calls (CUDA events), summed */
  double gpu_decode_wall_s;  /* the contexts' threads in those calls */
  double gpu_open_s;         /* starting the decoders, summed over the contexts */
  guint gpu_encoded;         /* outputs encoded by nvJPEG (gpu_jpeg_quality) */
  guint gpu_encode_fallback; /* decoded on the GPU, then not encoded there: done again on
                                the CPU */
  double gpu_encode_wall_s;  /* the contexts' threads in nvJPEG's encoder, summed */
  double cpu_user_s;         /* the process's CPU time over the run */
  double cpu_system_s;
  double pinned_s;    /* locking them, after the contexts' opening */
  guint *per_context; /* items analysed by each context (n of contexts) */
} LhpPipelineResult;

/* Opens *contexts as spec->contexts asks while the first images decode, and
 * sends each path through decode -> analysis / device_step (the contexts'
 * threads, each making its device current first) -> finish_step -> emit, with
 * the pixels of at most 2 x jobs + contexts x batch images in memory (results
 * waiting for their turn keep only their statistics).  Failures are said
 * (spec->report) as they come to the front, once the contexts are open.
 * With catch_signals, SIGINT, SIGTERM and SIGHUP stop the dispatching; what
 * is under way is finished and emitted, then the run returns with
 * result->signal set.
 * Runs may go on at the same time in one process (each with its threads,
 * contexts and page-locked arena).  JPEGs for nvJPEG: each context starts
 * its decoder on a thread of its own; a statistics run (LHIO_READ_LUMA)
 * makes one a device, on its first context, and its other contexts analyse
 * the images the CPU decodes; with LHP_DECODER_AUTO the CPU takes every
 * JPEG until a decoder has started, and with contexts.backend AUTO (no
 * devices named) the images decoded then are analysed on the decoding
 * threads, on the CPU (item->backend).  Close *contexts
 * with lhp_contexts_close (zeroed when not opened) and free
 * result->per_context with g_free. */
void lhp_pipeline_run(const LhpPipelineSpec *spec, LhpContexts *contexts, const GPtrArray *paths,
                      LhpPipelineResult *result);

/* The signal that stops a run under way (0: none yet), for work done in emit
 * (a video's frames) to stop between steps too. */
volatile sig_atomic_t *lhp_pipeline_stop_flag(void);

/* The signals that stop a run (catch_signals): SIGINT, SIGTERM and SIGHUP,
 * caught into the flag lhp_pipeline_stop_flag() returns (reset to 0), each
 * once: the second one ends the process at once.  One that is ignored
 * (nohup's SIGHUP, a background job's SIGINT) stays ignored.  lhp_pipeline_run catches
 * them itself; a front end catches them for its whole command (its walk,
 * the videos after the last image), and then the catches inside (the
 * pipeline's) leave the handlers and the flag as they are: calls nest. */
#define LHP_STOP_SIGNALS 3
typedef struct {
  struct sigaction old[LHP_STOP_SIGNALS];
} LhpStopSignals;

void lhp_stop_signals_catch(LhpStopSignals *saved);
/* Puts back the handlers saved by lhp_stop_signals_catch. */
void lhp_stop_signals_release(const LhpStopSignals *saved);

/* "SIGINT", "SIGTERM" or "SIGHUP" for result->signal, for the message of a
 * stopped run. */
const char *lhp_signal_name(int signal_number);

/* Page-locked buffers for decoded pixels (pinned-pool.c), a pool a run.
 * lhio's pixel allocator (set once for the process, by the first pool)
 * takes an image's pixels from the pool that the decoding thread uses
 * (lhp_pinned_pool_use), or from malloc on other threads, and gives each
 * buffer back to the pool it came from, so that runs may overlap and other
 * threads may read images meanwhile.  Buffers come from malloc until the
 * pool is enabled with a CUDA context, which page-locks (on device, -1 the
 * current one) an arena for in_flight images of the size-weighted mean size
 * seen so far; and past the arena.
 * Enable it before any analysis runs: page-locking stalls other threads'
 * CUDA calls.  Free the pool once every image it gave is released, before
 * the context is closed. */
typedef struct LhpPinnedPool LhpPinnedPool;

LhpPinnedPool *lhp_pinned_pool_new(void);
/* wait_for_room: a decoding thread that finds no room waits a while for
 * some (the images in the arena are on their way to the device) before it
 * takes pageable memory; not where images stay for a finish step on those
 * same threads. */
void lhp_pinned_pool_enable(LhpPinnedPool *pool, LhContext *context, int device, guint in_flight,
                            bool wait_for_room);
/* The pool that the calling thread's decoders take pixels from (NULL:
 * none, malloc). */
void lhp_pinned_pool_use(LhpPinnedPool *pool);
size_t lhp_pinned_pool_bytes(LhpPinnedPool *pool); /* the arena's size */
/* Images given pageable memory once the arena was enabled (none of it
 * came free in time to hold them), their bytes, and the time decoding
 * threads waited for a piece of it. */
size_t lhp_pinned_pool_past(LhpPinnedPool *pool, size_t *bytes, double *waited_s);
void lhp_pinned_pool_free(LhpPinnedPool *pool);

/* In a device_step (or a function it calls): the context of the calling
 * analysis thread; fallback on any other thread. */
LhContext *lhp_worker_context(LhContext *fallback);

/* Prints the --timing summary of a run on stderr, with the GPU's own time
 * read from the contexts (lh_context_device_time): before they are closed. */
void lhp_pipeline_print_timing(const LhpPipelineResult *result, const LhpContexts *contexts);

#endif /* LHP_H */
