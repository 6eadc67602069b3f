/* pipeline.c: the batch pipeline of the tool and the Python module: images
 * are decoded on a pool of threads, analysed in batches by one thread per
 * analysis context (a GPU, or the CPU), optionally finished on the pool again
 * (encoded and written), and handed back in input order, with a bounded
 * number of images in memory.
 *
 *   main thread ──dispatch──> pool: decode ──> device queue ──> context
 *        ^                                                    threads: analyse,
 *        │                                                    device_step
 *        └──── done queue <── pool: finish_step <─────────────────┘
 *
 * The main thread alone dispatches, reorders, reports and emits, so that
 * output needs no lock and comes out in the order of the inputs.  The pool
 * takes finishing before decoding, and the last images largest first
 * (task_order), so that the run's end is not one thread's long image.
 *
 * The first context thread opens the contexts while the pool already
 * decodes: CUDA's start-up (a few tenths of a second, most of it making the
 * device's primary context) then overlaps the first images' decoding instead
 * of coming before it.  Nothing is reported or emitted until the contexts
 * are open, so a run that cannot open them says only that. */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include <glib/gstdio.h>

#include "io/lhio-gpu.h"
#include "lhp.h"

/* Frames per lh_analyze_batch call on the GPU: enough to fill it with small
 * images, few enough that the first results come back soon. */
#define CUDA_BATCH_FRAMES 16
/* JPEGs per nvJPEG call when they are decoded on the GPU: the hardware
 * backend spreads a batch over the GPU's JPEG engines (7 on an H100), and
 * each engine works on several images at once. */
#define GPU_DECODE_BATCH_FRAMES 64
/* How long a context thread waits for the next JPEG of a batch. */
#define GPU_DECODE_FILL_WAIT_US 2000
#define MAX_BATCH_FRAMES 64
/* Tasks a context thread takes at once when JPEGs go to nvJPEG: a batch of
 * undecoded JPEGs and the images the CPU decoded meanwhile, which ride
 * along rather than wait for the next batch. */
#define MAX_BATCH_TASKS (2 * MAX_BATCH_FRAMES)

typedef enum {
  STAGE_DECODE,
  STAGE_FINISH,
} Stage;

/* Moments of an image's way through a run, stamped for LUMAHIST_TRACE
 * (trace_task). */
typedef enum {
  MOMENT_DISPATCHED, /* handed to the decoding threads */
  MOMENT_DECODING,   /* a decoding thread began it */
  MOMENT_DECODED,    /* decoded there, or read for nvJPEG */
  MOMENT_TAKEN,      /* taken into a context thread's batch */
  MOMENT_DONE,       /* handed back to the main thread */
  MOMENT_EMITTED,    /* its record out, in input order */
  N_MOMENTS
} Moment;

typedef struct {
  LhpItem item; /* first, so that the steps' LhpItem * is the task */
  Stage stage;
  bool cancelled; /* not started: a stop signal came first */
  /* One of the run's last images, decoded largest file first (task_order);
   * file_bytes is its size, 0 when it cannot be read. */
  bool last_stretch;
  goffset file_bytes;
  /* Of those, a file named as a JPEG while JPEGs go to nvJPEG: reading it
   * is all its decoding costs here. */
  bool for_gpu_decoder;
  /* A JPEG on its way to nvJPEG: its bytes and headers; once the GPU has
   * given it back (cpu_only), the bytes the CPU decodes. */
  LhioEncoded encoded;
  LhioJpegInfo jpeg;
  bool cpu_only;
  /* Counted in Pipeline.others_waiting until decoded: not named as a JPEG. */
  bool other_waiting;
  gint64 moments[N_MOMENTS]; /* g_get_monotonic_time(), 0: not reached */
} Task;

typedef struct Pipeline Pipeline;

typedef struct {
  Pipeline *pipeline;
  int index;
  /* Its nvJPEG decoder, started on a thread of its own (decoder_start) while
   * the context analyses what the CPU decodes, and installed (decoder_install)
   * once started, or when a JPEG for it arrives first. */
  /* It takes the JPEGs for nvJPEG (and makes a decoder).  With split, only
   * the first context of each device does, from jpeg_queue. */
  bool decodes;
  bool drains_both; /* split, but the run is abandoned: it takes from both queues */
  GThread *decoder_starter;
  gint decoder_started; /* atomic: the starter has finished */
  LhioGpuJpeg *decoder; /* NULL: none, or not yet installed */
  void *decode_stream;
  char *decoder_error; /* why it could not be started */
} ContextThread;

struct Pipeline {
  const LhpPipelineSpec *spec;
  LhpContexts *contexts; /* filled by the opener */
  LhpPinnedPool *pinned; /* the decoders' pixels: page-locked once CUDA is open */
  int jobs;
  guint n_paths;
  gint gpu_jpeg; /* JPEGs go to the contexts' threads undecoded, for nvJPEG
                    (atomic: off once the contexts turn out to be the CPU's) */
  bool planar;   /* and they are decoded to planar YCbCr, changed, and encoded
                    again there (spec->gpu_jpeg_quality) */
  /* --decoder auto: a decoding thread that finds this many JPEGs already
   * waiting for nvJPEG decodes its own with libjpeg-turbo (0: never), so
   * the CPU's cores and the GPU's JPEG engines work together. */
  gint gpu_share_limit;
  /* --decoder auto: until a context's nvJPEG decoder has started
   * (gpu_started, atomic), the decoding threads take every JPEG: starting
   * it takes most of a second, in which 16 cores decode about a thousand. */
  bool cpu_while_starting;
  gint gpu_started;
  gint decoders_starting; /* atomic: decoders begun and not yet started */
  gint contexts_opened;   /* atomic: the opener is done opening (or failed to) */
  /* Images decoded before the contexts are open (a CUDA context takes
   * 0.2-0.3 s) wait for them, and the decoding threads stop at the holding
   * bound (two images a thread) after a few dozen: in a run of many times
   * the bound, they are analysed on the CPU meanwhile (analyse_here).  On an
   * H100 host with 16 cores, 2000 JPEGs took 0.1-0.2 s less.  Only with
   * cpu_while_starting, whose records already say cpu or cuda as the
   * start-up goes: a run that names its decoder keeps the same records
   * from one run to the next, the backend field included. */
  bool early_cpu;
  /* CPU contexts for the images analysed on the decoding threads while
   * nvJPEG starts (analyse_on_cpu): one per thread at most, kept here
   * between uses and freed at the end of the run. */
  GAsyncQueue *cpu_contexts;
  bool jpeg_named;  /* a path is named as a JPEG: the decoders start at once */
  gint gpu_waiting; /* undecoded JPEGs in the device queue (atomic) */
  gint cpu_sharing; /* threads decoding such JPEGs on the CPU (atomic) */
  /* Images not named as JPEGs (PNGs), dispatched and not yet decoded
   * (atomic): only the CPU decodes them, and while any waits, a JPEG that
   * nvJPEG could take is left to it (cpu_share_take). */
  gint others_waiting;
  int cpu_share_slots; /* at most this many */
  double pin_s;        /* page-locking the pool's arena, by the opener */
  /* The pool: threads of the run's own, joined at its end, taking tasks from
   * pool_queue in task_order.  Not a GThreadPool, whose threads GLib keeps
   * idle for the next pool of the process once it is freed: a fork()ed child
   * inherits their count without the threads, and hands its first run's work
   * to none (Python's multiprocessing, PyTorch's DataLoader workers). */
  GAsyncQueue *pool_queue;
  GThread **pool_threads;
  int n_pool_threads;
  GAsyncQueue *device_queue;
  /* stats decoding on the GPU with two or more contexts a device (split,
   * atomic, set once the contexts are open): the JPEGs for nvJPEG go to
   * jpeg_queue, which the first context of each device takes, and the
   * images decoded on the CPU to device_queue, which the others take, so
   * that their copies and analysis do not wait between nvJPEG's batches
   * (nvjpegDecodeBatched holds its thread for most of the engines' time). */
  GAsyncQueue *jpeg_queue;
  gint split;
  GAsyncQueue *done_queue;
  gint64 start_us;
  gint released;  /* tasks handed back, their pixels freed (atomic) */
  gint abandoned; /* the run cannot start: every task is cancelled (atomic) */
  GMutex lock;    /* guards the timings and counts below */
  double decode_s;
  double device_s;
  double finish_s;
  guint gpu_hardware, gpu_hybrid, gpu_fallback;
  guint gpu_encoded, gpu_encode_fallback;
  double gpu_encode_wall_s;
  gint gpu_shared; /* JPEGs --decoder auto decoded on the CPU beside the GPU (atomic) */
  double gpu_decode_s, gpu_decode_wall_s, gpu_open_s;
  bool gpu_jpeg_warned; /* a context could not start nvJPEG: said once */
  guint *per_context;
  /* Set by the opener before it pushes contexts_settled, read after. */
  int batch_frames;
  double open_s;
  int n_threads;     /* threads that take from the device queue, the opener's included */
  GThread **threads; /* [0] unused: the opener's own is joined by the main thread */
  ContextThread *selves;
};

static bool first_of_device(const LhpContexts *contexts, int i);

/* Pushed once per context thread, and once per pool thread, to end it. */
static Task end_of_work;
/* Pushed by the opener on the done queue once the contexts are open, or
 * could not be. */
static Task contexts_settled;

static volatile sig_atomic_t stop_signal;

/* The context of the analysis thread running on this thread, if any. */
static _Thread_local LhContext *thread_context;

LhContext *lhp_worker_context(LhContext *fallback)
{
  return thread_context ? thread_context : fallback;
}

static void on_stop_signal(int signal_number)
{
  /* SA_RESETHAND made the next one fatal: a second Ctrl-C ends at once. */
  stop_signal = signal_number;
}

volatile sig_atomic_t *lhp_pipeline_stop_flag(void)
{
  return &stop_signal;
}

/* SIGHUP too: a closed terminal or a dropped ssh session ends a run as
 * Ctrl-C does, not at once with temporary files left behind. */
static const int stop_signals[LHP_STOP_SIGNALS] = {SIGINT, SIGTERM, SIGHUP};

/* How many lhp_stop_signals_catch calls are not yet released: a front end
 * catches the signals for its whole command, and the runs inside it (the
 * pipeline, the videos) neither reset the flag nor give the handlers back
 * between them, where a signal killed the process without a word. */
static int stop_signals_depth;

void lhp_stop_signals_catch(LhpStopSignals *saved)
{
  if (stop_signals_depth++ > 0)
    return;
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_handler = on_stop_signal;
  action.sa_flags = SA_RESTART | SA_RESETHAND;
  sigemptyset(&action.sa_mask);
  stop_signal = 0;
  for (int i = 0; i < LHP_STOP_SIGNALS; i++) {
    sigaction(stop_signals[i], NULL, &saved->old[i]);
    /* One ignored when the run began stays ignored, as GNU's programs
     * leave it: nohup ignores SIGHUP so that a run outlives its terminal,
     * and a shell starts a job in the background with SIGINT ignored so
     * that a Ctrl-C for the foreground leaves it alone.  Caught, either
     * stopped the run it was meant to spare. */
    if (saved->old[i].sa_handler != SIG_IGN)
      sigaction(stop_signals[i], &action, NULL);
  }
}

void lhp_stop_signals_release(const LhpStopSignals *saved)
{
  if (--stop_signals_depth > 0)
    return;
  for (int i = 0; i < LHP_STOP_SIGNALS; i++)
    sigaction(stop_signals[i], &saved->old[i], NULL);
}

const char *lhp_signal_name(int signal_number)
{
  switch (signal_number) {
  case SIGINT:
    return "SIGINT";
  case SIGTERM:
    return "SIGTERM";
  case SIGHUP:
    return "SIGHUP";
  default:
    return "a signal";
  }
}

void lhp_item_fail(LhpItem *item, int status, const char *format, ...)
{
  va_list args;
  va_start(args, format);
  g_free(item->reason);
  item->reason = g_strdup_vprintf(format, args);
  va_end(args);
  item->status = status < 0 ? status : LH_ERROR_IO;
}

static double timeval_seconds(const struct timeval *t)
{
  return (double)t->tv_sec + (double)t->tv_usec / 1e6;
}

static double seconds_since(gint64 start_us)
{
  return (double)(g_get_monotonic_time() - start_us) / G_USEC_PER_SEC;
}

static void add_time(Pipeline *p, double *total, double seconds)
{
  g_mutex_lock(&p->lock);
  *total += seconds;
  g_mutex_unlock(&p->lock);
}

/* The pool's order of work.  An image's finish comes before any decoding:
 * its pixels are already held.  Decoding follows the inputs, except for the
 * run's last images (those dispatched once no more than the holding bound
 * is left), which go largest file first: the longest-first rule, so that a
 * large PNG does not end the run alone on one thread while the others
 * idle.  JPEGs for nvJPEG go before them: read at once, they keep the GPU's
 * decoders busy while the CPU decodes the rest (last of all, they left the
 * GPU idle for the last 0.25 s of a run of PNGs and JPEGs, then decoding
 * 360 at once, on an H100 host). */
static gint task_order(gconstpointer a, gconstpointer b, gpointer unused)
{
  (void)unused;
  const Task *x = a, *y = b;
  if (x->stage != y->stage)
    return x->stage == STAGE_FINISH ? -1 : 1;
  if (x->stage == STAGE_DECODE && x->last_stretch != y->last_stretch)
    return x->last_stretch ? 1 : -1;
  if (x->stage == STAGE_DECODE && x->last_stretch && x->for_gpu_decoder != y->for_gpu_decoder)
    return x->for_gpu_decoder ? -1 : 1;
  if (x->stage == STAGE_DECODE && x->last_stretch && x->file_bytes != y->file_bytes)
    return x->file_bytes > y->file_bytes ? -1 : 1;
  return x->item.index < y->item.index ? -1 : x->item.index > y->item.index;
}

/* The size of a file, as the cost of its image; 0 when it cannot be read
 * (the decoding will say why). */
static goffset file_bytes(const char *path)
{
  GStatBuf buf;
  return g_stat(path, &buf) == 0 ? (goffset)buf.st_size : 0;
}

static void task_free(Task *task)
{
  lhio_image_clear(&task->item.image);
  lhio_encoded_clear(&task->encoded);
  lhio_encoded_clear(&task->item.output);
  lh_stats_clear(&task->item.stats);
  g_free(task->item.reason);
  g_free(task->item.note);
  g_free(task);
}

/* Hands a task back to the main thread; its pixels go first unless emit
 * wants them, so that results waiting for their turn cost little memory. */
static void send_done(Pipeline *p, Task *task)
{
  if (!p->spec->keep_pixels)
    lhio_image_clear(&task->item.image);
  lhio_encoded_clear(&task->encoded);
  task->moments[MOMENT_DONE] = g_get_monotonic_time();
  g_atomic_int_inc(&p->released);
  g_async_queue_push(p->done_queue, task);
}

/* Hands a task back undone: the run stopped before its turn. */
static void send_cancelled(Pipeline *p, Task *task)
{
  task->cancelled = true;
  send_done(p, task);
}

static bool is_abandoned(Pipeline *p)
{
  return g_atomic_int_get(&p->abandoned) != 0;
}

static void run_finish(Pipeline *p, Task *task)
{
  const LhpPipelineSpec *spec = p->spec;
  if (is_abandoned(p)) {
    send_cancelled(p, task);
    return;
  }
  if (spec->finish_step && task->item.status == 0) {
    gint64 start = g_get_monotonic_time();
    spec->finish_step(&task->item, spec->data);
    add_time(p, &p->finish_s, seconds_since(start));
  }
  send_done(p, task);
}

/* decode()'s answer for a JPEG left to nvJPEG. */
#define DECODE_ON_GPU 1

/* Sets the item's note, for --verbose, on why its JPEG is decoded here (and
 * when the output is written, encoded here too). */
static void note_cpu_decode(Pipeline *p, Task *task, const char *why)
{
  if (p->spec->verbose && task->encoded.type == LHIO_FILE_JPEG && !task->item.note)
    task->item.note = g_strdup_printf("%s by libjpeg-turbo, not nvJPEG: %s",
                                      p->planar ? "decoded and encoded" : "decoded", why);
}

/* Whether this thread decodes a JPEG that nvJPEG could take itself, and
 * why (NULL: it does not): while nvJPEG starts, always; then when the JPEGs
 * already waiting for nvJPEG keep the GPU's decoders busy until it could
 * have decoded one more, and a few threads are left free meanwhile
 * (cpu_share_slots): they keep reading files for the GPU, whose queue would
 * otherwise wait on a whole CPU decode to refill, and nvJPEG's host work
 * keeps its cores.  An answer takes a slot: give it back with
 * cpu_share_done. */
static const char *cpu_share_take(Pipeline *p)
{
  if (p->cpu_while_starting && !g_atomic_int_get(&p->gpu_started)) {
    g_atomic_int_add(&p->cpu_sharing, 1);
    return "nvJPEG was still starting (--decoder auto)";
  }
  int limit = g_atomic_int_get(&p->gpu_share_limit);
  if (limit <= 0 || g_atomic_int_get(&p->gpu_waiting) < limit)
    return NULL;
  /* In a folder of PNGs and JPEGs the CPU's decoding is the longer part:
   * a JPEG decoded here delays a PNG, and on an H100 host with 16 cores
   * it slowed nvJPEG's batches too (their GPU time an image 1.7-3.7 ms
   * against 0.7 ms with the CPU on PNGs alone). */
  if (g_atomic_int_get(&p->others_waiting) > 0)
    return NULL;
  if (g_atomic_int_add(&p->cpu_sharing, 1) >= p->cpu_share_slots) {
    g_atomic_int_add(&p->cpu_sharing, -1);
    return NULL;
  }
  return "the GPU had enough JPEGs waiting (--decoder auto)";
}

static void cpu_share_done(Pipeline *p)
{
  g_atomic_int_add(&p->cpu_sharing, -1);
}

/* Decodes the task's file on this thread, or, when JPEGs go to the GPU and
 * nvJPEG can take this one, reads its bytes and headers only and answers
 * DECODE_ON_GPU.  A JPEG the GPU gave back (cpu_only) is decoded from the
 * bytes already read. */
static int decode(Pipeline *p, Task *task)
{
  const LhpPipelineSpec *spec = p->spec;
  LhpItem *item = &task->item;
  if (!task->encoded.data && !g_atomic_int_get(&p->gpu_jpeg))
    return lhio_read_waiting(item->path, spec->read_mode, spec->max_pixels, spec->fifo_wait,
                             &item->image);
  int status = LH_OK;
  bool shared = false; /* a JPEG for nvJPEG decoded here instead (cpu_share_take) */
  if (!task->encoded.data) {
    status = lhio_load_waiting(item->path, spec->fifo_wait, &task->encoded);
    if (status == LH_OK && task->encoded.type == LHIO_FILE_JPEG && !task->cpu_only) {
      /* The headers refuse what lhio_read would refuse from them, with
       * the same message. */
      status = lhio_jpeg_probe(item->path, &task->encoded, spec->max_pixels, &task->jpeg);
      const char *refusal = task->jpeg.gpu_refusal;
      LhFormat planar_format;
      if (status == LH_OK && p->planar && !refusal)
        lhio_gpu_jpeg_planar_format(&task->jpeg, &planar_format, &refusal);
      const char *share = status == LH_OK && !refusal ? cpu_share_take(p) : NULL;
      if (status == LH_OK && !refusal && !share) {
        g_atomic_int_inc(&p->gpu_waiting);
        return DECODE_ON_GPU;
      } else if (share) {
        shared = true;
        g_atomic_int_inc(&p->gpu_shared);
        note_cpu_decode(p, task, share);
      } else if (status == LH_OK) {
        note_cpu_decode(p, task, refusal);
      }
    }
  }
  if (status == LH_OK)
    status = lhio_read_memory(item->path, &task->encoded, spec->read_mode, spec->max_pixels,
                              &item->image);
  if (shared)
    cpu_share_done(p);
  lhio_encoded_clear(&task->encoded);
  return status;
}

/* Whether the run is asked to stop: a signal it catches, or its caller. */
static bool stop_asked(const Pipeline *p)
{
  const LhpPipelineSpec *spec = p->spec;
  return (spec->catch_signals && stop_signal) || (spec->stop && g_atomic_int_get(spec->stop));
}

/* Whether the image a decoding thread has just decoded is analysed there,
 * on the CPU, as --backend auto may (not when a backend or devices are
 * named): in a long run, before the contexts are open (early_cpu); and
 * while nvJPEG's decoders start (--decoder auto, stats), the CUDA
 * contexts' copies wait on the driver, which nvJPEG's set-up holds (on an
 * H200, 128 frames took 0.2-0.36 s to analyse then, 0.02-0.07 s after),
 * and the images decoded meanwhile would wait in turn. */
static bool analyse_here(Pipeline *p)
{
  const LhpContextsWanted *wanted = &p->spec->contexts;
  if (wanted->backend != LH_BACKEND_AUTO || wanted->device_ids || !p->spec->analyze ||
      p->spec->device_step)
    return false;
  if (p->early_cpu && !g_atomic_int_get(&p->contexts_opened))
    return true;
  return p->cpu_while_starting && g_atomic_int_get(&p->decoders_starting) > 0 &&
         !g_atomic_int_get(&p->gpu_started);
}

/* Analyses the task's image on this thread with one of the run's CPU
 * contexts (one thread each: the other cores decode); false when no
 * context can be had, and the image goes to the analysis threads. */
static bool analyse_on_cpu(Pipeline *p, Task *task)
{
  LhContext *context = g_async_queue_try_pop(p->cpu_contexts);
  if (!context) {
    if (lh_context_new(LH_BACKEND_CPU, &context) < 0)
      return false;
    lh_context_set_threads(context, 1);
  }
  LhpItem *item = &task->item;
  int status = lh_analyze(context, &item->image.frame, p->spec->analyze, &item->stats);
  item->backend = LH_BACKEND_CPU;
  if (status < 0)
    lhp_item_fail(item, status, "%s", lhp_reason(status, item->path));
  g_async_queue_push(p->cpu_contexts, context);
  return true;
}

/* Ends the task's count in others_waiting, if it has one. */
static void other_decoded(Pipeline *p, Task *task)
{
  if (task->other_waiting) {
    task->other_waiting = false;
    g_atomic_int_add(&p->others_waiting, -1);
  }
}

static void pool_task(Pipeline *p, Task *task)
{
  const LhpPipelineSpec *spec = p->spec;
  LhpItem *item = &task->item;
  /* The pool's threads are this run's alone: its pixels come from its arena. */
  lhp_pinned_pool_use(p->pinned);

  if (task->stage == STAGE_FINISH) {
    run_finish(p, task);
    return;
  }
  /* After Ctrl-C the images not yet begun are left for --skip-existing: the
   * run ends after the ones in hand instead of after every one dispatched. */
  if (stop_asked(p) || is_abandoned(p)) {
    other_decoded(p, task);
    send_cancelled(p, task);
    return;
  }
  gint64 start = g_get_monotonic_time();
  if (!task->moments[MOMENT_DECODING])
    task->moments[MOMENT_DECODING] = start;
  int status = decode(p, task);
  add_time(p, &p->decode_s, seconds_since(start));
  task->moments[MOMENT_DECODED] = g_get_monotonic_time();
  other_decoded(p, task);
  if (status < 0) {
    item->os_error = lhio_last_os_error();
    lhp_item_fail(item, status, "%s", lhp_reason(status, item->path));
    send_done(p, task);
    return;
  }
  if (status == DECODE_ON_GPU) {
    /* Sized from its headers; the context's thread decodes it. */
    item->width = task->jpeg.width;
    item->height = task->jpeg.height;
    g_async_queue_push(g_atomic_int_get(&p->split) ? p->jpeg_queue : p->device_queue, task);
    return;
  }
  item->width = item->image.frame.width;
  item->height = item->image.frame.height;
  item->decoder = item->image.decoder;
  item->converted_from = item->image.converted_from;
  if (item->image.png_frames > 1 && spec->read_mode == LHIO_READ_LUMA)
    /* Its record, like any reader's image of it, is of that one picture
     * (the rewriting commands say so of what they write). */
    lhp_say(&spec->report, item->path,
            "an animated PNG of %u frames: its default image is read (the one viewers without "
            "animation show)",
            item->image.png_frames);
  if (analyse_here(p) && analyse_on_cpu(p, task)) {
    run_finish(p, task);
  } else if (spec->analyze || spec->device_step) {
    g_async_queue_push(p->device_queue, task);
  } else {
    run_finish(p, task);
  }
}

/* Whether a task from the device queue is a JPEG still to be decoded. */
static bool is_for_nvjpeg(const Task *task)
{
  return task->encoded.data && !task->cpu_only;
}

static gpointer pool_thread(gpointer data)
{
  Pipeline *p = data;
  Task *task;
  while ((task = g_async_queue_pop(p->pool_queue)) != &end_of_work)
    pool_task(p, task);
  return NULL;
}

static void pool_push(Pipeline *p, Task *task)
{
  g_async_queue_push_sorted(p->pool_queue, task, task_order, NULL);
}

/* Starts the pool's jobs threads; *error set when one cannot be started
 * (pool_end ends those that were). */
static void pool_start(Pipeline *p, int jobs, GError **error)
{
  p->pool_queue = g_async_queue_new();
  p->pool_threads = g_new0(GThread *, jobs);
  while (p->n_pool_threads < jobs) {
    GThread *thread = g_thread_try_new("lumahist-decode", pool_thread, p, error);
    if (!thread)
      return;
    p->pool_threads[p->n_pool_threads++] = thread;
  }
}

/* Ends the pool's threads once the tasks pushed before are done, and joins
 * them: none is left when the run returns. */
static void pool_end(Pipeline *p)
{
  /* Pushed unsorted: after every task. */
  for (int i = 0; i < p->n_pool_threads; i++)
    g_async_queue_push(p->pool_queue, &end_of_work);
  for (int i = 0; i < p->n_pool_threads; i++)
    g_thread_join(p->pool_threads[i]);
  g_free(p->pool_threads);
  if (p->pool_queue)
    g_async_queue_unref(p->pool_queue);
}

/* Sends a JPEG back to the pool, to be decoded on the CPU from the bytes
 * already read; it comes back to a context thread as any decoded image. */
static void requeue_on_cpu(Pipeline *p, Task *task, const char *why)
{
  note_cpu_decode(p, task, why);
  task->cpu_only = true;
  pool_push(p, task);
}

/* Sends a JPEG that the GPU did not decode back to the pool. */
static void send_to_cpu(Pipeline *p, Task *task, const char *why)
{
  g_mutex_lock(&p->lock);
  p->gpu_fallback++;
  g_mutex_unlock(&p->lock);
  requeue_on_cpu(p, task, why);
}

/* Decodes the batch's undecoded JPEGs with nvJPEG into device memory, each
 * then a GRAY8 frame there (or with planar, a GRAY8, I420, Y42B or Y444
 * frame of the file's sampling), and takes out of the batch those it could
 * not decode (they go to the CPU).  Returns the batch's new size. */
static int decode_on_gpu(Pipeline *p, LhioGpuJpeg *decoder, Task **batch, int n)
{
  LhioGpuJpegJob jobs[MAX_BATCH_TASKS];
  int of_job[MAX_BATCH_TASKS];
  int n_jobs = 0;
  for (int i = 0; i < n; i++)
    if (is_for_nvjpeg(batch[i])) {
      memset(&jobs[n_jobs], 0, sizeof jobs[n_jobs]);
      jobs[n_jobs].encoded = &batch[i]->encoded;
      jobs[n_jobs].info = &batch[i]->jpeg;
      of_job[n_jobs++] = i;
    }
  if (n_jobs == 0)
    return n;
  g_atomic_int_add(&p->gpu_waiting, -n_jobs);
  gint64 start = g_get_monotonic_time();
  int decoded = !decoder    ? -1
                : p->planar ? lhio_gpu_jpeg_decode_planar(decoder, jobs, n_jobs)
                            : lhio_gpu_jpeg_decode_luma(decoder, jobs, n_jobs);
  const char *failure = decoder ? lh_last_error() : "nvJPEG could not be started on this device";
  guint hardware = 0, hybrid = 0;
  bool keep[MAX_BATCH_TASKS];
  for (int i = 0; i < n; i++)
    keep[i] = true;
  for (int j = 0; j < n_jobs; j++) {
    Task *task = batch[of_job[j]];
    if (decoded < 0 || jobs[j].status != 0) {
      keep[of_job[j]] = false;
      send_to_cpu(p, task, decoded < 0 ? failure : jobs[j].reason);
      continue;
    }
    LhioImage *image = &task->item.image;
    LhFrame *frame = &image->frame;
    lh_frame_init(frame, jobs[j].format, LH_MEMORY_CUDA, task->jpeg.width, task->jpeg.height,
                  jobs[j].luma, jobs[j].pitch);
    if (jobs[j].format != LH_FORMAT_GRAY8) {
      frame->planes[1] = jobs[j].chroma[0];
      frame->planes[2] = jobs[j].chroma[1];
      frame->strides[1] = frame->strides[2] = jobs[j].chroma_pitch;
    }
    image->type = LHIO_FILE_JPEG;
    image->decoder = task->item.decoder = jobs[j].decoder;
    image->luma_only = !p->planar && task->jpeg.components > 1;
    image->source_bit_depth = 8;
    image->source_channels = task->jpeg.components;
    image->jpeg_h_samp[0] = task->jpeg.h_samp;
    image->jpeg_v_samp[0] = task->jpeg.v_samp;
    image->jpeg_progressive = task->jpeg.progressive;
    image->jpeg_restart_interval = task->jpeg.restart_interval;
    /* Written back with what nvJPEG encodes (encode_on_gpu).  Out of
     * memory for them, the image goes to the CPU, which says so. */
    if (p->planar && lhio_jpeg_metadata_from_bytes(&task->encoded, image) < 0) {
      lhio_image_clear(image);
      keep[of_job[j]] = false;
      send_to_cpu(p, task, "no memory for the file's metadata");
      continue;
    }
    hardware += jobs[j].decoder == LHIO_DECODER_NVJPEG_HARDWARE;
    hybrid += jobs[j].decoder == LHIO_DECODER_NVJPEG_GPU;
  }
  double wall = seconds_since(start);
  g_mutex_lock(&p->lock);
  p->gpu_hardware += hardware;
  p->gpu_hybrid += hybrid;
  p->gpu_decode_wall_s += wall;
  g_mutex_unlock(&p->lock);
  int kept = 0;
  for (int i = 0; i < n; i++)
    if (keep[i])
      batch[kept++] = batch[i];
  return kept;
}

/* With planar: encodes with nvJPEG, into each item's output, the images of
 * the batch that nvJPEG decoded (frames in device memory, changed there by
 * device_step, on the decoder's stream).  One it cannot encode is decoded,
 * changed and encoded again on the CPU, from the file's bytes, and leaves
 * the batch.  Returns the batch's new size. */
static int encode_on_gpu(Pipeline *p, LhioGpuJpeg *decoder, Task **batch, int n)
{
  if (!p->planar || !decoder)
    return n;
  gint64 start = g_get_monotonic_time();
  guint encoded = 0, fallback = 0;
  int kept = 0;
  for (int i = 0; i < n; i++) {
    Task *task = batch[i];
    LhpItem *item = &task->item;
    if (item->status != 0 || item->image.frame.memory != LH_MEMORY_CUDA) {
      batch[kept++] = task;
      continue;
    }
    if (lhio_gpu_jpeg_encode(decoder, &item->image.frame, p->spec->gpu_jpeg_quality,
                             task->jpeg.progressive, &item->output) == LH_OK &&
        lhio_jpeg_insert_metadata(&item->output, &item->image) == LH_OK) {
      encoded++;
      batch[kept++] = task;
      continue;
    }
    /* The frame was the decoder's memory: the CPU starts from the bytes. */
    char *why = g_strdup(lh_last_error());
    lhio_encoded_clear(&item->output);
    lhio_image_clear(&item->image);
    item->decoder = LHIO_DECODER_NONE;
    fallback++;
    requeue_on_cpu(p, task, why);
    g_free(why);
  }
  double wall = seconds_since(start);
  g_mutex_lock(&p->lock);
  p->gpu_encoded += encoded;
  p->gpu_encode_fallback += fallback;
  p->gpu_encode_wall_s += wall;
  g_mutex_unlock(&p->lock);
  return kept;
}

/* Analyses the batch in one call; when that fails, frame by frame, so that
 * only the frames at fault fail. */
static void analyse(Pipeline *p, LhContext *context, Task **batch, int n, LhStats *stats)
{
  const LhOptions *options = p->spec->analyze;
  LhFrame frames[MAX_BATCH_TASKS];
  for (int i = 0; i < n; i++)
    frames[i] = batch[i]->item.image.frame;
  int batch_status = lh_analyze_batch(context, frames, (size_t)n, options, stats);
  LhBackend batch_backend = lh_context_last_backend(context);
  for (int i = 0; i < n; i++) {
    LhpItem *item = &batch[i]->item;
    int status = batch_status;
    item->backend = batch_backend;
    if (status < 0 && n > 1) {
      status = lh_analyze(context, &frames[i], options, &stats[i]);
      item->backend = lh_context_last_backend(context);
    }
    if (status < 0) {
      lhp_item_fail(item, status, "%s", lhp_reason(status, item->path));
    } else {
      /* The item takes the histogram; the slot gets a new one next time. */
      item->stats = stats[i];
      lh_stats_init(&stats[i]);
    }
  }
}

/* A context's nvJPEG decoder, made and set up for the run's batches on a
 * thread of its own (the handles' and the batch's set-up take most of a
 * second), on the context's device. */
static gpointer decoder_start(gpointer data)
{
  ContextThread *self = data;
  Pipeline *p = self->pipeline;
  gint64 start = g_get_monotonic_time();
  char *error = NULL;
  if (lhp_device_use(p->contexts->device_ids[self->index], &error) &&
      lhp_gpu_jpeg_open(&self->decoder, &self->decode_stream, &error)) {
    /* A failed set-up is tried again by the first batch, which says why. */
    lhio_gpu_jpeg_warm(self->decoder, p->batch_frames, p->planar);
  }
  self->decoder_error = error;
  add_time(p, &p->gpu_open_s, seconds_since(start));
  g_atomic_int_set(&self->decoder_started, 1);
  if (self->decoder)
    g_atomic_int_set(&p->gpu_started, 1);
  g_atomic_int_add(&p->decoders_starting, -1);
  return NULL;
}

/* Starts the context's decoder on a thread of its own, or, when no thread
 * can be had, on this one. */
static void decoder_begin(ContextThread *self)
{
  g_atomic_int_inc(&self->pipeline->decoders_starting);
  self->decoder_starter = g_thread_try_new("lumahist-nvjpeg", decoder_start, self, NULL);
  if (!self->decoder_starter)
    decoder_start(self);
}

/* Waits for the context's decoder to start, and has the context follow its
 * stream; a decoder that could not start is said once for the run, and the
 * context's JPEGs go to the CPU. */
static void decoder_install(ContextThread *self, LhContext *context)
{
  Pipeline *p = self->pipeline;
  if (self->decoder_starter)
    g_thread_join(self->decoder_starter);
  self->decoder_starter = NULL;
  if (self->decoder && lh_context_set_stream(context, self->decode_stream) < 0) {
    self->decoder_error = g_strdup(lh_last_error());
    lhp_gpu_jpeg_close(context, self->decoder, self->decode_stream);
    self->decoder = NULL;
    self->decode_stream = NULL;
  }
  if (!self->decoder_error)
    return;
  g_mutex_lock(&p->lock);
  bool say = !p->gpu_jpeg_warned;
  p->gpu_jpeg_warned = true;
  g_mutex_unlock(&p->lock);
  if (say)
    lhp_say(&p->spec->report, NULL,
            "nvJPEG cannot decode on CUDA device %d (%s): JPEGs are decoded on the CPU",
            p->contexts->device_ids[self->index], self->decoder_error);
  g_clear_pointer(&self->decoder_error, g_free);
}

/* The next task of either queue: waits on the first, looks at the second
 * every 10 ms.  An end of work in the second is another thread's: it is
 * left there. */
static Task *pop_either(GAsyncQueue *first, GAsyncQueue *second)
{
  for (;;) {
    Task *task = g_async_queue_timeout_pop(first, 10000);
    if (task)
      return task;
    task = g_async_queue_try_pop(second);
    if (task == &end_of_work)
      g_async_queue_push(second, task);
    else if (task)
      return task;
  }
}

/* A context that does not decode passes the JPEGs for nvJPEG it was given
 * (queued before the split was known) to those that do; returns the
 * batch's new size. */
static int pass_on_jpegs(Pipeline *p, Task **batch, int n)
{
  int kept = 0;
  for (int i = 0; i < n; i++) {
    if (is_for_nvjpeg(batch[i]))
      g_async_queue_push(p->jpeg_queue, batch[i]);
    else
      batch[kept++] = batch[i];
  }
  return kept;
}

/* Whether any task of the batch is a JPEG still to be decoded. */
static bool has_jpeg_for_nvjpeg(Task *const *batch, int n)
{
  for (int i = 0; i < n; i++)
    if (is_for_nvjpeg(batch[i]))
      return true;
  return false;
}

/* The queue a context thread takes its tasks from: with split, a context
 * that decodes takes the JPEGs for nvJPEG, the others the decoded images. */
static GAsyncQueue *queue_of(Pipeline *p, const ContextThread *self)
{
  return self->decodes && g_atomic_int_get(&p->split) ? p->jpeg_queue : p->device_queue;
}

static gpointer context_thread(gpointer data)
{
  ContextThread *self = data;
  Pipeline *p = self->pipeline;
  const LhpPipelineSpec *spec = p->spec;
  LhContext *context = p->contexts->contexts[self->index];
  char *device_error = NULL;
  lhp_device_use(p->contexts->device_ids[self->index], &device_error);
  thread_context = context;
  GAsyncQueue *queue = queue_of(p, self);
  /* Without a path named as a JPEG, the decoder starts when the first JPEG
   * comes (by its content), not for a run of PNGs. */
  bool decoder_begun = false;
  if (self->decodes && g_atomic_int_get(&p->gpu_jpeg) && !device_error && p->jpeg_named) {
    decoder_begin(self);
    decoder_begun = true;
  }

  LhStats stats[MAX_BATCH_TASKS];
  for (int i = 0; i < MAX_BATCH_TASKS; i++)
    lh_stats_init(&stats[i]);
  Task *batch[MAX_BATCH_TASKS];
  bool ending = false;
  while (!ending) {
    Task *task = self->drains_both ? pop_either(queue, p->device_queue) : g_async_queue_pop(queue);
    if (task == &end_of_work)
      break;
    int n = 0;
    task->moments[MOMENT_TAKEN] = g_get_monotonic_time();
    batch[n++] = task;
    /* Whatever else is waiting joins the batch.  nvJPEG's hardware backend
     * is set up for one batch size, and setting it up again costs more than
     * a short wait for the decoding threads to fill the batch with JPEGs;
     * images decoded on the CPU come along without counting. */
    bool fill = self->decodes && g_atomic_int_get(&p->gpu_jpeg) != 0;
    int undecoded = is_for_nvjpeg(task);
    while ((fill ? undecoded < p->batch_frames && n < MAX_BATCH_TASKS : n < p->batch_frames) &&
           (task = fill ? g_async_queue_timeout_pop(queue, GPU_DECODE_FILL_WAIT_US)
                        : g_async_queue_try_pop(queue))) {
      if (task == &end_of_work) {
        ending = true;
        break;
      }
      task->moments[MOMENT_TAKEN] = g_get_monotonic_time();
      batch[n++] = task;
      undecoded += is_for_nvjpeg(task);
    }

    if (!self->decodes)
      n = pass_on_jpegs(p, batch, n);
    if (is_abandoned(p)) {
      for (int i = 0; i < n; i++)
        send_cancelled(p, batch[i]);
      continue;
    }
    bool jpegs = has_jpeg_for_nvjpeg(batch, n);
    if (jpegs && !decoder_begun && !device_error) {
      decoder_begin(self);
      decoder_begun = true;
    }
    if (self->decoder_starter && (jpegs || g_atomic_int_get(&self->decoder_started)))
      decoder_install(self, context);
    LhioGpuJpeg *decoder = self->decoder;
    void *decode_stream = self->decode_stream;
    gint64 start = g_get_monotonic_time();
    if (device_error) {
      for (int i = 0; i < n; i++)
        lhp_item_fail(&batch[i]->item, LH_ERROR_NO_DEVICE, "%s", device_error);
    } else {
      n = decode_on_gpu(p, decoder, batch, n);
      if (spec->analyze && n > 0)
        analyse(p, context, batch, n, stats);
    }
    for (int i = 0; i < n; i++) {
      LhpItem *item = &batch[i]->item;
      item->worker = self->index;
      if (item->status == 0 && spec->device_step)
        spec->device_step(context, item, spec->data);
    }
    if (p->planar && decode_stream && !device_error) {
      /* On the decoder's stream the library queues its work and returns:
       * the images decoded on the CPU are changed in their host memory only
       * once it has run, before they are encoded on the pool. */
      char *error = NULL;
      if (!lhp_gpu_stream_sync(decode_stream, &error)) {
        for (int i = 0; i < n; i++)
          if (batch[i]->item.status == 0)
            lhp_item_fail(&batch[i]->item, LH_ERROR_CUDA, "%s", error);
        g_free(error);
      }
      n = encode_on_gpu(p, decoder, batch, n);
    }
    g_mutex_lock(&p->lock);
    p->device_s += seconds_since(start);
    p->per_context[self->index] += (guint)n;
    g_mutex_unlock(&p->lock);

    for (int i = 0; i < n; i++) {
      if (spec->finish_step && batch[i]->item.status == 0) {
        batch[i]->stage = STAGE_FINISH;
        pool_push(p, batch[i]);
      } else {
        send_done(p, batch[i]);
      }
    }
  }
  for (int i = 0; i < MAX_BATCH_TASKS; i++)
    lh_stats_clear(&stats[i]);
  if (self->decoder_starter)
    decoder_install(self, context);
  if (self->decoder) {
    double seconds = lhio_gpu_jpeg_device_seconds(self->decoder);
    add_time(p, &p->gpu_decode_s, seconds);
  }
  if (spec->process_ends_after)
    lhp_gpu_jpeg_leave(context, self->decoder, self->decode_stream);
  else
    lhp_gpu_jpeg_close(context, self->decoder, self->decode_stream);
  g_free(device_error);
  return NULL;
}

/* Whether a run decodes JPEGs with nvJPEG: statistics (luma only), or
 * images written back (planar, gpu_jpeg_quality), on CUDA, unless --decoder
 * cpu, where libnvjpeg is found.  Until the contexts are
 * open, CUDA is the bet of every backend but the CPU's. */
static bool gpu_jpeg_for(const LhpPipelineSpec *spec, LhBackend backend)
{
  bool wanted = spec->read_mode == LHIO_READ_LUMA ||
                (spec->read_mode == LHIO_READ_FULL && spec->gpu_jpeg_quality > 0);
  return spec->decoder != LHP_DECODER_CPU && wanted && backend != LH_BACKEND_CPU &&
         lhp_gpu_jpeg_usable(NULL);
}

/* Frames per lh_analyze_batch call on a backend. */
static int batch_frames_for(const LhpPipelineSpec *spec, LhBackend backend)
{
  int frames = spec->batch_frames;
  if (frames <= 0)
    frames = backend != LH_BACKEND_CUDA    ? 1
             : gpu_jpeg_for(spec, backend) ? GPU_DECODE_BATCH_FRAMES
                                           : CUDA_BATCH_FRAMES;
  return frames < MAX_BATCH_FRAMES ? frames : MAX_BATCH_FRAMES;
}

/* JPEGs left waiting for nvJPEG before the decoding threads of --decoder
 * auto decode their own (Pipeline.gpu_share_limit): a batch per context,
 * the next while one decodes. */
static int gpu_share_limit_for(const LhpPipelineSpec *spec, LhBackend backend, int contexts)
{
  /* Not for images written back: sharing them was slower, measured on an
   * H200 with 16 cores (equalize of 200 and 1000 JPEGs: 1.99 and 2.67 s
   * shared, 1.67 and 2.41 s all on nvJPEG); the CPU's decoding and encoding
   * threads take cores from the GPU path's own. */
  if (spec->decoder != LHP_DECODER_AUTO || !gpu_jpeg_for(spec, backend) ||
      spec->read_mode == LHIO_READ_FULL)
    return 0;
  return contexts * batch_frames_for(spec, backend);
}

/* Images whose pixels may be held at a time: two per decoding thread, so
 * that none waits for work, and a batch per context; when the CPU decodes
 * beside nvJPEG, two batches more per context (the JPEGs that wait for it,
 * and those read meanwhile) and four more per decoding thread (decoded while
 * a batch is on the GPU, and ready to be taken): a tighter bound left the
 * decoding threads idle, the bound reached by images that waited for the
 * analysis. */
static guint holding_for(const LhpPipelineSpec *spec, int jobs, LhBackend backend, int contexts)
{
  int shared = gpu_share_limit_for(spec, backend, contexts);
  return (guint)(2 * jobs + contexts * batch_frames_for(spec, backend) +
                 (shared > 0 ? 2 * shared + 4 * jobs : 0));
}

/* Until the contexts are open, --backend auto may end up on CUDA or on the
 * CPU: the smaller of the two bounds holds until then, so that either run
 * keeps to its own.  *most is the larger, for sizing. */
static guint holding_before_open(const LhpPipelineSpec *spec, int jobs, guint *most)
{
  const LhpContextsWanted *wanted = &spec->contexts;
  guint cuda =
      holding_for(spec, jobs, LH_BACKEND_CUDA, lhp_contexts_count(wanted, LH_BACKEND_CUDA));
  guint cpu = holding_for(spec, jobs, LH_BACKEND_CPU, lhp_contexts_count(wanted, LH_BACKEND_CPU));
  if (wanted->device_ids || wanted->backend == LH_BACKEND_CUDA)
    cpu = cuda;
  else if (wanted->backend == LH_BACKEND_CPU)
    cuda = cpu;
  *most = cuda > cpu ? cuda : cpu;
  return cuda < cpu ? cuda : cpu;
}

/* After the contexts failed: hands back whatever reaches the device queue
 * until the end. */
static void cancel_until_end(Pipeline *p)
{
  Task *task;
  while ((task = g_async_queue_pop(p->device_queue)) != &end_of_work)
    send_cancelled(p, task);
}

/* The first context thread: it opens every context (lhp_contexts_open, with
 * its messages) while the pool decodes, starts the other contexts' threads,
 * then serves context 0 itself.  Contexts made on this thread and used on
 * others are no change: the main thread used to make them.  A CUDA context
 * and its stream belong to no thread, and each context thread makes its
 * device current before its first call (lhp_device_use).  When the contexts
 * cannot be opened, or a thread cannot be started, the run is abandoned: its
 * tasks come back cancelled and the main thread reports nothing more. */
static gpointer opener_thread(gpointer data)
{
  Pipeline *p = data;
  const LhpPipelineSpec *spec = p->spec;
  p->n_threads = 1;
  /* No image to run (a run of videos, which open their own contexts in the
   * decoder's CUDA context): --backend auto takes the CPU, which costs
   * nothing to open, rather than a CUDA context and its start-up time that
   * nothing would use.  A backend or devices asked for are still opened,
   * so that a run that cannot have them says so as before. */
  LhpContextsWanted wanted = spec->contexts;
  wanted.report = &spec->report;
  if (p->n_paths == 0 && !wanted.device_ids && wanted.backend == LH_BACKEND_AUTO)
    wanted.backend = LH_BACKEND_CPU;
  /* CPU contexts, one a decoding thread: no more than those (p->jobs). */
  if (wanted.cpu_workers > p->jobs)
    wanted.cpu_workers = p->jobs;
  bool opened = lhp_contexts_open(p->contexts, &wanted);
  p->open_s = seconds_since(p->start_us);
  if (opened) {
    int n = p->contexts->n;
    if (p->contexts->backend != LH_BACKEND_CUDA)
      g_atomic_int_set(&p->gpu_jpeg, 0);
    p->batch_frames = batch_frames_for(spec, p->contexts->backend);
    /* stats split as jpeg_queue says where a device has two contexts or more */
    int devices = 0;
    for (int i = 0; i < n; i++)
      devices += first_of_device(p->contexts, i);
    bool split = g_atomic_int_get(&p->gpu_jpeg) && !p->planar && n > devices;
    g_atomic_int_set(&p->gpu_share_limit,
                     gpu_share_limit_for(spec, p->contexts->backend, split ? devices : n));
    p->per_context = g_new0(guint, n);
    /* Before the analysis threads start (pinned-pool.c says why).  Images
     * in flight: about two a decoding thread (one decoding, one waiting for
     * its analysis or finish) and one a context; the holding bound, with a
     * batch a context, is seldom reached, and the arena is locked memory
     * whether used or not. */
    if (p->contexts->backend == LH_BACKEND_CUDA) {
      gint64 start = g_get_monotonic_time();
      guint in_flight = (guint)(2 * p->jobs + n);
      lhp_pinned_pool_enable(p->pinned, p->contexts->contexts[0], p->contexts->device_ids[0],
                             in_flight < p->n_paths ? in_flight : p->n_paths,
                             spec->finish_step == NULL);
      p->pin_s = seconds_since(start);
    }
    p->threads = g_new0(GThread *, n);
    p->selves = g_new(ContextThread, n);
    for (int i = 0; i < n; i++)
      p->selves[i] = (ContextThread){
          .pipeline = p, .index = i, .decodes = !split || first_of_device(p->contexts, i)};
    g_atomic_int_set(&p->split, split);
    /* Threads can be refused (a ulimit, an address space already reserved
     * by the CUDA driver): that ends the run with a message, not an abort. */
    GError *error = NULL;
    while (!error && p->n_threads < n) {
      p->threads[p->n_threads] =
          g_thread_try_new("lumahist-analysis", context_thread, &p->selves[p->n_threads], &error);
      if (p->threads[p->n_threads])
        p->n_threads++;
    }
    if (error) {
      lhp_say(&spec->report, NULL, "cannot start the worker threads: %s", error->message);
      g_error_free(error);
      g_atomic_int_set(&p->abandoned, 1);
      /* A context that would take the CPU's images may be missing: this
       * thread hands back what reaches either queue. */
      p->selves[0].drains_both = split;
    }
  } else {
    g_atomic_int_set(&p->abandoned, 1);
  }
  g_atomic_int_set(&p->contexts_opened, 1);
  g_async_queue_push(p->done_queue, &contexts_settled);
  if (opened)
    context_thread(&p->selves[0]);
  else
    cancel_until_end(p);
  return NULL;
}

/* LUMAHIST_TRACE=FILE: a line an image, written as its record goes out,
 * for finding where a run's time goes (which stage waits on which): its
 * index, decoder and backend, then the seconds from the run's start at each
 * Moment, -1 for one it did not reach (an image decoded and analysed on a
 * decoding thread is never taken by a context). */
static FILE *trace_open(const LhpPipelineSpec *spec)
{
  const char *path = getenv("LUMAHIST_TRACE");
  if (!path || !*path)
    return NULL;
  FILE *trace = fopen(path, "w");
  if (!trace)
    lhp_say(&spec->report, path, "cannot write the trace (LUMAHIST_TRACE): %s", g_strerror(errno));
  return trace;
}

static void trace_task(FILE *trace, const Pipeline *p, Task *task)
{
  task->moments[MOMENT_EMITTED] = g_get_monotonic_time();
  fprintf(trace, "%u %s %s", task->item.index, lhio_decoder_name(task->item.decoder),
          lh_backend_name(task->item.backend));
  for (int k = 0; k < N_MOMENTS; k++)
    fprintf(trace, " %.4f",
            task->moments[k] ? (double)(task->moments[k] - p->start_us) / 1e6 : -1.0);
  fputc('\n', trace);
}

/* --decoder auto leaves nvJPEG out of a run whose JPEGs the decoding
 * threads get through in less time than nvJPEG takes to start: the run
 * would wait for it, not use it.  On an H100 host with 16 cores, one to 64
 * JPEGs of 1080p-4K took 1.18-1.49 s to analyse with nvJPEG (its handles
 * are made at 0.6 s, after the CUDA context) and 0.38-0.65 s without;
 * equalized, 1.47-1.77 s against 0.39-1.09 s
 * (tests/bench/results/h100-session14-small-runs.txt). */
#define NVJPEG_START_S 1.0
/* Bytes of JPEG files a decoding thread gets through a second: luma alone
 * for statistics (13.2 ms a thread for the bench folder's 351 KB mean, on
 * the same host), and decoded, changed and encoded again for the rewriting
 * commands (about 100 images/s on 16 threads: 2.2 MB/s a thread). */
#define CPU_JPEG_LUMA_BYTES_PER_S 26.6e6
#define CPU_JPEG_REWRITE_BYTES_PER_S 2.2e6

/* Whether the JPEGs among paths (by name) hold more bytes than jobs
 * decoding threads get through while nvJPEG starts; *megabytes: those
 * counted before the answer came. */
static bool jpegs_outlast_nvjpeg_start(const LhpPipelineSpec *spec, const GPtrArray *paths,
                                       int jobs, double *megabytes)
{
  const double per_thread =
      spec->read_mode == LHIO_READ_LUMA ? CPU_JPEG_LUMA_BYTES_PER_S : CPU_JPEG_REWRITE_BYTES_PER_S;
  const double enough = per_thread * jobs * NVJPEG_START_S;
  double bytes = 0;
  for (guint i = 0; i < paths->len && bytes <= enough; i++) {
    const char *path = g_ptr_array_index(paths, i);
    if (lhio_is_jpeg_name(path))
      bytes += (double)file_bytes(path);
  }
  *megabytes = bytes / 1e6;
  return bytes > enough;
}

/* Whether any path is named as a JPEG. */
static bool any_jpeg_name(const GPtrArray *paths)
{
  for (guint i = 0; i < paths->len; i++)
    if (lhio_is_jpeg_name(g_ptr_array_index(paths, i)))
      return true;
  return false;
}

static gpointer prepare_thread(gpointer data)
{
  Pipeline *p = data;
  lhp_gpu_jpeg_prepare(p->spec->contexts.device_ids);
  return NULL;
}

void lhp_pipeline_run(const LhpPipelineSpec *spec, LhpContexts *contexts, const GPtrArray *paths,
                      LhpPipelineResult *result)
{
  gint64 start = g_get_monotonic_time();
  memset(result, 0, sizeof *result);
  memset(contexts, 0, sizeof *contexts);
  Pipeline p = {
      .spec = spec,
      .contexts = contexts,
      .device_queue = g_async_queue_new(),
      .jpeg_queue = g_async_queue_new(),
      .cpu_contexts = g_async_queue_new(),
      .done_queue = g_async_queue_new(),
      .start_us = start,
  };
  g_mutex_init(&p.lock);
  /* No more decoding threads than files: each file is one task at a time,
   * and a single image on a machine of many cores starts one thread, not
   * one a core. */
  int jobs = spec->jobs > 0 ? spec->jobs : 1;
  if (paths->len > 0 && (guint)jobs > paths->len)
    jobs = (int)paths->len;
  p.jobs = jobs;
  p.n_paths = paths->len;
  p.gpu_jpeg =
      gpu_jpeg_for(spec, spec->contexts.device_ids ? LH_BACKEND_CUDA : spec->contexts.backend);
  double jpeg_megabytes = 0;
  if (p.gpu_jpeg && spec->decoder == LHP_DECODER_AUTO &&
      !jpegs_outlast_nvjpeg_start(spec, paths, jobs, &jpeg_megabytes)) {
    p.gpu_jpeg = 0;
    if (spec->verbose && any_jpeg_name(paths))
      lhp_say(&spec->report, NULL,
              "JPEGs decoded on the CPU: their %.1f MB take %d decoding thread%s less time than "
              "nvJPEG takes to start (--decoder gpu uses it anyway)",
              jpeg_megabytes, jobs, jobs > 1 ? "s" : "");
  }
  p.planar = spec->read_mode == LHIO_READ_FULL && spec->gpu_jpeg_quality > 0;
  /* nvJPEG's calls take about two cores' host work at the engines' rate
   * (1.2 ms of CPU per image at 1800 images/s on an H100); one more thread
   * reads for it. */
  p.cpu_share_slots = jobs > 4 ? jobs - 3 : 1;
  p.jpeg_named = any_jpeg_name(paths);
  if (p.gpu_jpeg)
    p.gpu_share_limit = gpu_share_limit_for(spec, LH_BACKEND_CUDA,
                                            lhp_contexts_count(&spec->contexts, LH_BACKEND_CUDA));
  /* Not for images written back, as gpu_share_limit_for says: on an H200
   * with 16 cores, equalize of 200 JPEGs took 1.75 s with the CPU taking
   * them while nvJPEG started, 1.66 s without. */
  p.cpu_while_starting = p.gpu_share_limit > 0;
  FILE *trace = trace_open(spec);
  struct rusage usage_before;
  getrusage(RUSAGE_SELF, &usage_before);

  /* Holding pixels: dispatched and not yet handed back; this bounds memory.
   * In flight: dispatched and not yet emitted, a wider window, so that one
   * slow image (a large PNG) at the front does not stall the threads. */
  guint most;
  guint holding = holding_before_open(spec, jobs, &most);
  guint window = 8 * holding;
  p.early_cpu = p.cpu_while_starting && paths->len > 8 * holding;
  guint slots = 8 * most; /* of pending: the widest window either backend can have */
  Task **pending = g_new0(Task *, slots);
  guint n = paths->len, next_dispatch = 0, next_emit = 0;

  /* Before any decoding: every image's pixels come from the pool. */
  p.pinned = lhp_pinned_pool_new();

  /* nvJPEG's handles take longer to make than the CUDA contexts: begun on a
   * thread of their own first, while the contexts open and files are read.
   * Not without a JPEG among the paths (a run of videos: a second of the
   * driver's time at start-up, beside NVDEC's own); a JPEG by content alone
   * gets them when it comes. */
  GThread *preparer = NULL;
  const bool holds_gpu_jpeg = p.gpu_jpeg != 0; /* p.gpu_jpeg may go off */
  if (holds_gpu_jpeg)
    lhp_gpu_jpeg_hold();
  if (p.gpu_jpeg && p.jpeg_named)
    preparer = g_thread_try_new("lumahist-nvjpeg", prepare_thread, &p, NULL);
  /* The opener next, so that CUDA starts as early as it can. */
  GError *thread_error = NULL;
  GThread *opener = g_thread_try_new("lumahist-analysis", opener_thread, &p, &thread_error);
  if (opener)
    pool_start(&p, jobs, &thread_error);
  if (thread_error) {
    lhp_say(&spec->report, NULL, "cannot start the worker threads: %s", thread_error->message);
    g_clear_error(&thread_error);
    g_atomic_int_set(&p.abandoned, 1);
  }
  bool settled = opener == NULL;

  LhpStopSignals old_handlers;
  if (spec->catch_signals)
    lhp_stop_signals_catch(&old_handlers);

  bool stopping = is_abandoned(&p);
  bool cut = stopping; /* the run did not start: nothing is reported or emitted */
  /* A task cancelled by a stop was reached: a gap in the inputs done. */
  bool gap = false;
  result->not_started = stopping;
  /* A signal the front end caught before the run (in its walk, say): none
   * of its files is started. */
  if (stop_asked(&p) && !stopping) {
    stopping = true;
    result->stopped = !(spec->catch_signals && stop_signal);
  }
  while (!settled || next_emit < next_dispatch || (!stopping && next_dispatch < n)) {
    while (!stopping && next_dispatch < n && next_dispatch - next_emit < window &&
           next_dispatch - (guint)g_atomic_int_get(&p.released) < holding) {
      Task *task = g_new0(Task, 1);
      task->item.index = next_dispatch;
      task->item.path = g_ptr_array_index(paths, next_dispatch);
      task->item.worker = -1;
      lh_stats_init(&task->item.stats);
      task->stage = STAGE_DECODE;
      task->moments[MOMENT_DISPATCHED] = g_get_monotonic_time();
      const bool jpeg_name = lhio_is_jpeg_name(task->item.path);
      if (p.gpu_share_limit > 0 && !jpeg_name) {
        task->other_waiting = true;
        g_atomic_int_inc(&p.others_waiting);
      }
      task->last_stretch = n - next_dispatch <= holding;
      if (task->last_stretch) {
        task->file_bytes = file_bytes(task->item.path);
        task->for_gpu_decoder = jpeg_name && g_atomic_int_get(&p.gpu_jpeg);
      }
      pool_push(&p, task);
      next_dispatch++;
    }
    Task *task = g_async_queue_timeout_pop(p.done_queue, G_USEC_PER_SEC / 10);
    if (task == &contexts_settled) {
      task = NULL;
      settled = true;
      if (!is_abandoned(&p) && spec->ready && !spec->ready(contexts, spec->data))
        g_atomic_int_set(&p.abandoned, 1);
      if (is_abandoned(&p)) {
        result->not_started = stopping = cut = true;
      } else {
        holding = holding_for(spec, jobs, contexts->backend, contexts->n);
        window = 8 * holding;
      }
    }
    if (task)
      pending[task->item.index % slots] = task;
    while (settled && next_emit < next_dispatch && pending[next_emit % slots]) {
      task = pending[next_emit % slots];
      pending[next_emit % slots] = NULL;
      if (trace)
        trace_task(trace, &p, task);
      gap = gap || task->cancelled;
      if (cut || task->cancelled) {
        /* Not started: among those not done. */
      } else if (gap && !spec->emit_past_gaps && (task->item.status == 0 || spec->failed)) {
        /* A record after a gap is dropped: the records stay the prefix of
         * the inputs that --skip-existing resumes after.  A failure said
         * through report leaves no record: it is said and counted, not
         * lost among the inputs not done. */
      } else if (task->item.status < 0) {
        /* Without a reason, the step has reported the failure itself. */
        if (spec->failed) {
          if (!spec->failed(&task->item, spec->data))
            result->stopped = stopping = true;
        } else if (task->item.reason) {
          lhp_say(&spec->report, task->item.path, "%s", task->item.reason);
        }
        result->failed++;
      } else {
        if (task->item.note)
          lhp_say(&spec->report, task->item.path, "%s", task->item.note);
        /* An item emit refused was not written: not done. */
        if (spec->emit(&task->item, spec->data))
          result->done++;
        else
          result->stopped = stopping = true;
      }
      task_free(task);
      next_emit++;
    }
    if (stop_asked(&p) && !stopping) {
      stopping = true;
      result->stopped = !(spec->catch_signals && stop_signal);
    }
    /* A bar only once the contexts' messages, if any, are out. */
    if (settled && !result->not_started && spec->report.progress)
      spec->report.progress(result->done, result->failed, spec->report.data);
  }

  /* Settled: n_threads is the opener's and the threads it started. */
  for (int i = 0; opener && i < p.n_threads; i++)
    g_async_queue_push(p.selves ? queue_of(&p, &p.selves[i]) : p.device_queue, &end_of_work);
  if (opener)
    g_thread_join(opener);
  for (int i = 1; i < p.n_threads; i++)
    g_thread_join(p.threads[i]);
  if (preparer)
    g_thread_join(preparer);
  /* Handles made without the preparer (a JPEG by content alone) are kept,
   * as they were. */
  if (holds_gpu_jpeg)
    lhp_gpu_jpeg_let_go(preparer && !spec->keep_gpu_jpeg && !spec->process_ends_after);
  pool_end(&p);
  if (spec->catch_signals) {
    lhp_stop_signals_release(&old_handlers);
    result->signal = stop_signal;
  }

  result->wall_s = seconds_since(start);
  result->open_s = p.open_s;
  result->decode_s = p.decode_s;
  result->device_s = p.device_s;
  result->finish_s = p.finish_s;
  result->per_context = p.per_context;
  result->gpu_hardware = p.gpu_hardware;
  result->gpu_hybrid = p.gpu_hybrid;
  result->gpu_fallback = p.gpu_fallback;
  result->gpu_shared = (guint)g_atomic_int_get(&p.gpu_shared);
  result->gpu_decode_s = p.gpu_decode_s;
  result->gpu_decode_wall_s = p.gpu_decode_wall_s;
  result->gpu_open_s = p.gpu_open_s;
  result->gpu_encoded = p.gpu_encoded;
  result->gpu_encode_fallback = p.gpu_encode_fallback;
  result->gpu_encode_wall_s = p.gpu_encode_wall_s;
  struct rusage usage_after;
  getrusage(RUSAGE_SELF, &usage_after);
  result->cpu_user_s =
      timeval_seconds(&usage_after.ru_utime) - timeval_seconds(&usage_before.ru_utime);
  result->cpu_system_s =
      timeval_seconds(&usage_after.ru_stime) - timeval_seconds(&usage_before.ru_stime);
  /* Every task is freed: the pool holds no image. */
  result->pinned_bytes = lhp_pinned_pool_bytes(p.pinned);
  result->past_pinned =
      lhp_pinned_pool_past(p.pinned, &result->past_pinned_bytes, &result->pinned_wait_s);
  result->pinned_s = p.pin_s;
  lhp_pinned_pool_free(p.pinned);
  g_free(pending);
  if (trace)
    fclose(trace);
  g_free(p.threads);
  g_free(p.selves);
  LhContext *cpu_context;
  while ((cpu_context = g_async_queue_try_pop(p.cpu_contexts)))
    lh_context_free(cpu_context);
  g_async_queue_unref(p.cpu_contexts);
  g_async_queue_unref(p.jpeg_queue);
  g_async_queue_unref(p.device_queue);
  g_async_queue_unref(p.done_queue);
  g_mutex_clear(&p.lock);
}

/* Is context i the first of its device (in the order of the contexts)? */
static bool first_of_device(const LhpContexts *contexts, int i)
{
  for (int j = 0; j < i; j++)
    if (contexts->device_ids[j] == contexts->device_ids[i])
      return false;
  return true;
}

/* The GPU's own time, from the events the library records around its copies
 * and kernels (lh_context_device_time): the analysis threads' time also holds
 * their copies into pinned memory and their waits.  The CPU has none.  The
 * kernels are the GPU's work; the frames' copies go over the host link (PCIe)
 * at its rate, so they are given apart, with that rate. */
static void print_device_time(const LhpContexts *contexts, double wall)
{
  if (contexts->backend != LH_BACKEND_CUDA)
    return;
  LhDeviceTime sum = {0};
  int devices = 0;
  for (int i = 0; i < contexts->n; i++) {
    LhDeviceTime time;
    char *error = NULL;
    /* Its events are on that device: read them there, as it is freed there. */
    if (!lhp_device_use(contexts->device_ids[i], &error))
      g_free(error);
    if (lh_context_device_time(contexts->contexts[i], &time) < 0) {
      fprintf(stderr, "lumahist: timing: GPU time (CUDA events): not measured: %s\n",
              lh_last_error());
      return;
    }
    sum.transfer_s += time.transfer_s;
    sum.compute_s += time.compute_s;
    sum.calls += time.calls;
    sum.transfer_bytes += time.transfer_bytes;
    devices += first_of_device(contexts, i);
  }
  if (devices == 0)
    return;
  char over[64];
  if (devices > 1)
    snprintf(over, sizeof over, "%d contexts on %d devices", contexts->n, devices);
  else
    snprintf(over, sizeof over, "%d context%s", contexts->n, contexts->n > 1 ? "s" : "");
  /* Microseconds: the kernels of a 4K frame take tens of them.  Streams of
   * one device overlap: their sum may count a moment twice.  Shares are of
   * the wall time of each device. */
  double per_device = 100.0 / wall / devices;
  fprintf(stderr,
          "lumahist: timing: GPU time (CUDA events): kernels %.6f s = %.3f %% of wall, "
          "frame copies %.6f s = %.3f %% (%.3f GB at %.1f GB/s), in %llu call%s, summed over %s "
          "(an upper bound of the busy share when contexts overlap)\n",
          sum.compute_s, sum.compute_s * per_device, sum.transfer_s, sum.transfer_s * per_device,
          (double)sum.transfer_bytes / 1e9,
          sum.transfer_s > 0 ? (double)sum.transfer_bytes / 1e9 / sum.transfer_s : 0.0,
          (unsigned long long)sum.calls, sum.calls == 1 ? "" : "s", over);
}

void lhp_pipeline_print_timing(const LhpPipelineResult *r, const LhpContexts *contexts)
{
  double wall = r->wall_s > 0 ? r->wall_s : 1e-9;
  fprintf(stderr,
          "lumahist: timing: %u image%s in %.3f s wall (%.1f images/s); decoding %.3f s, "
          "finishing %.3f s (summed over threads)\n",
          r->done + r->failed, r->done + r->failed == 1 ? "" : "s", r->wall_s,
          (r->done + r->failed) / wall, r->decode_s, r->finish_s);
  /* Part of the wall time, but not of the decoding's, which went on meanwhile. */
  fprintf(stderr, "lumahist: timing: %d %s context%s opened in %.3f s, while decoding went on\n",
          contexts->n, lh_backend_name(contexts->backend), contexts->n > 1 ? "s" : "", r->open_s);
  /* The contexts' threads hold the GPU work: the calls return when it is
   * done, so their time bounds the GPU's busy time from above. */
  fprintf(stderr, "lumahist: timing: analysis on %s: %.3f s over %d context%s = %.2f %% of wall\n",
          lh_backend_name(contexts->backend), r->device_s, contexts->n, contexts->n > 1 ? "s" : "",
          100.0 * r->device_s / wall / contexts->n);
  print_device_time(contexts, wall);
  /* The images decoded there went to the device and back without staging. */
  if (contexts->backend == LH_BACKEND_CUDA)
    fprintf(stderr,
            "lumahist: timing: pixels decoded into %.1f MB of page-locked memory, locked in "
            "%.3f s; decoding threads waited %.3f s for room in it; %zu images (%.1f MB) past "
            "it, in pageable memory\n",
            (double)r->pinned_bytes / 1e6, r->pinned_s, r->pinned_wait_s, r->past_pinned,
            (double)r->past_pinned_bytes / 1e6);
  guint on_gpu = r->gpu_hardware + r->gpu_hybrid;
  if (on_gpu + r->gpu_fallback + r->gpu_shared > 0)
    fprintf(stderr,
            "lumahist: timing: GPU decoding (nvJPEG): %u images (%u on the hardware decoder, %u on "
            "the GPU hybrid decoder, %u fell back to the CPU) in %.3f s over %d contexts "
            "(GPU time, CUDA events; %.3f s in the calls; decoders started in %.3f s); %u JPEGs "
            "decoded on the CPU beside it\n",
            on_gpu, r->gpu_hardware, r->gpu_hybrid, r->gpu_fallback, r->gpu_decode_s, contexts->n,
            r->gpu_decode_wall_s, r->gpu_open_s, r->gpu_shared);
  if (r->gpu_encoded + r->gpu_encode_fallback > 0)
    fprintf(stderr,
            "lumahist: timing: GPU encoding (nvJPEG): %u JPEGs in %.3f s in the calls over %d "
            "contexts; %u decoded on the GPU but not encoded there, done again on the CPU\n",
            r->gpu_encoded, r->gpu_encode_wall_s, contexts->n, r->gpu_encode_fallback);
  guint handled = r->done + r->failed;
  fprintf(stderr,
          "lumahist: timing: host CPU time: %.3f s user + %.3f s system = %.3f ms per image\n",
          r->cpu_user_s, r->cpu_system_s,
          handled ? 1e3 * (r->cpu_user_s + r->cpu_system_s) / handled : 0.0);
  /* Per device, over its streams, in the order of first appearance. */
  for (int i = 0; i < contexts->n; i++) {
    int device = contexts->device_ids[i];
    if (device < 0 || !first_of_device(contexts, i))
      continue;
    guint images = 0;
    for (int j = i; j < contexts->n; j++)
      if (contexts->device_ids[j] == device)
        images += r->per_context[j];
    fprintf(stderr, "lumahist: timing: device %d: %u images\n", device, images);
  }
}
