/* files.c: lumahist.stats_files on the tool's batch pipeline (src/pipeline/):
 * the folders are walked as `lumahist stats` walks them, and the images are
 * decoded on a pool of threads (JPEGs on the GPU by nvJPEG where it can be
 * loaded) and analysed in batches per context, on a thread of the run's own;
 * videos go through the tool's frame loop (lhp-video.h) on that thread, in
 * their place among the images, each giving its frames' records and its
 * summary.  Its results come to the iterator in input order through a
 * bounded queue:
 * the pipeline waits in emit while the consumer is behind, so memory stays
 * bounded however many files there are.  The iterator waits with the GIL
 * released, and looks at Python's signals (Ctrl-C) while it waits.  Closing
 * it (break, garbage collection, an exception) stops the run and joins its
 * thread: nothing is left running. */
#include <math.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

#include <glib.h>

#include "module.h"
#include "pipeline/lhp-video.h"
#include "pipeline/lhp.h"
#include "stats-object.h"

/* Results and failures waiting for the consumer, at most: each holds its
 * statistics and histogram (2 KiB at 8 bits, 512 KiB at 16). */
#define QUEUE_ENTRIES 32
/* How often a waiting iterator looks at Python's signals. */
#define SIGNAL_CHECK_US (G_USEC_PER_SEC / 10)

typedef enum {
  ENTRY_RECORD,  /* an image's statistics */
  ENTRY_FRAME,   /* a video frame's */
  ENTRY_SUMMARY, /* a video's summary */
  ENTRY_FAILURE, /* a file that failed, or a path the walk could not read */
  ENTRY_NOTE,    /* what the walk said of a path that is not a failure */
} EntryKind;

typedef struct {
  EntryKind kind;
  char *path;
  char *reason; /* FAILURE, NOTE */
  int status;   /* FAILURE */
  int os_error; /* FAILURE, NOTE: the errno of a system call's failure; 0 none */
  LhStats stats;
  int width, height;
  LhBackend backend;
  LhioDecoder decoder;        /* RECORD */
  const char *converted_from; /* RECORD: a static name, or NULL */
  char *video_decoder;        /* FRAME, SUMMARY: the GStreamer element */
  LhpFrameFields fields;      /* FRAME (its decoder is video_decoder) */
  char *summary_json;         /* SUMMARY: its record, without the histogram */
} Entry;

/* One run, shared by its thread and the iterator. */
typedef struct {
  /* Set before the thread starts. */
  char **names; /* NULL-terminated */
  int n_names;
  LhOptions options;
  LhBackend backend;
  LhpDecoder decoder;
  GArray *device_ids; /* devices=: the tool's --devices; NULL when not given */
  int jobs;
  uint64_t max_pixels;
  LhpVideoOptions video;
  LhioFifoWait fifo_wait; /* its stop is the run's: closing ends a wait */
  bool matrix_given; /* matrix= / range= given: they override a video's colorimetry */
  bool range_given;
  /* The run's thread only: the paths, the videos' places among the
   * images, and the videos' frame loop. */
  GPtrArray *paths;
  LhpVideoPlaces places;
  LhpVideoStats *videos;
  LhpReport report;
  /* Under lock. */
  GMutex lock;
  GCond changed;
  GQueue entries;
  GPtrArray *messages; /* the run's own (path NULL), not yet warned of */
  GPtrArray *said;     /* all of them, for the exception of a run that did not start */
  bool closing;        /* the iterator is gone: emit refuses */
  bool finished;       /* the thread is done */
  bool not_started;    /* the contexts could not be opened */
  /* The pipeline's stop flag: set by the iterator when it closes. */
  gint stop;
  LhBackend run_backend; /* the contexts', for records analysed nowhere else */
} Run;

typedef struct {
  PyObject_HEAD Run *run;
  GThread *thread;
  pid_t pid; /* the process whose thread runs it: a fork()ed child has none */
  bool raise_errors;
  bool done; /* exhausted, raised or closed: StopIteration from now on */
} FilesIterator;

static void entry_free(Entry *entry)
{
  lh_stats_clear(&entry->stats);
  g_free(entry->path);
  g_free(entry->reason);
  g_free(entry->video_decoder);
  g_free(entry->summary_json);
  g_free(entry);
}

static Entry *entry_new(EntryKind kind, const char *path, const char *reason, int status)
{
  Entry *entry = g_new0(Entry, 1);
  entry->kind = kind;
  entry->path = g_strdup(path);
  entry->reason = g_strdup(reason);
  entry->status = status;
  lh_stats_init(&entry->stats);
  return entry;
}

/* Queues an entry, waiting while the queue is full; false (the entry
 * freed) once the iterator is gone. */
static bool queue_entry(Run *run, Entry *entry)
{
  g_mutex_lock(&run->lock);
  while (!run->closing && g_queue_get_length(&run->entries) >= QUEUE_ENTRIES)
    g_cond_wait(&run->changed, &run->lock);
  bool open = !run->closing;
  if (open) {
    g_queue_push_tail(&run->entries, entry);
    g_cond_broadcast(&run->changed);
  }
  g_mutex_unlock(&run->lock);
  if (!open)
    entry_free(entry);
  return open;
}

/* The pipeline's messages that name no file: a context that cannot be had,
 * nvJPEG unusable on a device.  Any of its threads. */
static void say_of_run(const char *path, const char *message, void *data)
{
  Run *run = data;
  g_mutex_lock(&run->lock);
  char *text = path ? g_strdup_printf("%s: %s", path, message) : g_strdup(message);
  g_ptr_array_add(run->messages, text);
  g_ptr_array_add(run->said, g_strdup(text));
  g_mutex_unlock(&run->lock);
}

/* The walk's, kept until it is known whether they were failures. */
static void say_of_walk(const char *path, const char *message, void *data)
{
  Entry *entry = entry_new(ENTRY_NOTE, path, message, LH_ERROR_IO);
  entry->os_error = lhp_said_os_error();
  g_ptr_array_add(data, entry);
}

static bool on_ready(const LhpContexts *contexts, void *data)
{
  ((Run *)data)->run_backend = contexts->backend;
  return true;
}

/* ------------------------------------------------------------------------ */
/* Videos                                                                    */

/* A frame's record: its statistics taken, its fields copied. */
static bool on_frame(const LhpVideoFrame *frame, void *data)
{
  Entry *entry = entry_new(ENTRY_FRAME, frame->path, NULL, 0);
  entry->stats = *frame->stats;
  lh_stats_init(frame->stats);
  entry->width = frame->width;
  entry->height = frame->height;
  entry->backend = frame->backend;
  entry->fields = *frame->fields;
  entry->video_decoder = g_strdup(frame->fields->decoder);
  entry->fields.decoder = NULL;
  return queue_entry(data, entry);
}

/* The summary's record as the tool writes it (the iterator reads it back),
 * without its histogram: the statistics, taken, hold that. */
static bool on_summary(const LhpVideoSummary *summary, void *data)
{
  if (!summary->total)
    return true; /* said (a RuntimeWarning): the tool writes none either */
  char *text = NULL;
  size_t size = 0;
  FILE *out = open_memstream(&text, &size);
  if (!out)
    return true;
  lhp_video_summary_write(out, summary, false);
  bool written = fclose(out) == 0;
  Entry *entry = entry_new(ENTRY_SUMMARY, summary->path, NULL, 0);
  entry->summary_json = g_strndup(text, size);
  free(text);
  if (!written) {
    entry_free(entry);
    return true;
  }
  entry->stats = *summary->total;
  lh_stats_init(summary->total);
  entry->width = summary->width;
  entry->height = summary->height;
  entry->backend = summary->backend;
  entry->video_decoder = g_strdup(summary->decoder);
  return queue_entry(data, entry);
}

/* Runs the videos before the pipeline's image number image (all of them:
 * G_MAXUINT); false once the iterator is gone. */
static bool run_videos_before(Run *run, guint image)
{
  const char *path;
  while ((path = lhp_video_places_next(&run->places, image))) {
    if (!run->videos) {
      /* GStreamer's streaming threads come from GLib's thread pools, whose
       * idle threads wait 15 s for the next task of the process: a fork()ed
       * child inherits their count without them, and its videos wait for
       * threads that never come.  With none kept, only a fork within half a
       * second of a video still does (GStreamer's task pool keeps its own
       * threads that long). */
      g_thread_pool_set_max_unused_threads(0);
      LhpVideoJob job = {
          .video = &run->video,
          .options = &run->options,
          .matrix_given = run->matrix_given,
          .range_given = run->range_given,
          .backend = run->backend,
          .device_ids = run->device_ids,
          .report = &run->report,
          .frame = on_frame,
          .summary = on_summary,
          .data = run,
          /* Also ends the wait for a video's frame (one opening or stuck). */
          .stop = &run->stop,
          .fifo_wait = &run->fifo_wait,
      };
      run->videos = lhp_video_stats_new(&job);
    }
    int status = LH_ERROR_IO;
    char *failure = NULL;
    LhpVideoOutcome outcome = lhp_video_stats_file(run->videos, path, &status, &failure);
    bool going = outcome != LHP_VIDEO_STOPPED;
    if (outcome == LHP_VIDEO_FAILED)
      going = queue_entry(run, entry_new(ENTRY_FAILURE, path, failure, status));
    g_free(failure);
    if (!going)
      return false;
  }
  return true;
}

/* ------------------------------------------------------------------------ */
/* Images                                                                    */

static bool on_emit(LhpItem *item, void *data)
{
  Run *run = data;
  if (!run_videos_before(run, item->index))
    return false;
  Entry *entry = entry_new(ENTRY_RECORD, item->path, NULL, 0);
  /* The entry takes the statistics and their histogram. */
  entry->stats = item->stats;
  lh_stats_init(&item->stats);
  entry->width = item->width;
  entry->height = item->height;
  entry->backend = item->backend != LH_BACKEND_AUTO ? item->backend : run->run_backend;
  entry->decoder = item->decoder;
  entry->converted_from = item->converted_from;
  return queue_entry(run, entry);
}

static bool on_failed(LhpItem *item, void *data)
{
  Run *run = data;
  if (!run_videos_before(run, item->index))
    return false;
  Entry *entry =
      entry_new(ENTRY_FAILURE, item->path,
                item->reason ? item->reason : lh_status_name(item->status), item->status);
  entry->os_error = item->os_error;
  return queue_entry(run, entry);
}

static gpointer run_thread(gpointer data)
{
  Run *run = data;
  GPtrArray *paths = g_ptr_array_new_with_free_func(g_free);
  GPtrArray *walk_said = g_ptr_array_new();
  LhpReport walk_report = {.say = say_of_walk, .data = walk_said};
  /* Closing the iterator ends a long walk too (a tree of many folders, a
   * slow network share), as it ends the pipeline. */
  bool walked = lhp_walk(run->names, run->n_names, true, NULL, &run->stop, &walk_report, paths);
  lhp_drop_repeated_paths(paths, &walk_report);
  /* A walk that failed said its failures (and perhaps a note on a link back
   * up the tree, which goes as one): they come first, as the tool's do. */
  for (guint i = 0; !walked && i < walk_said->len; i++)
    ((Entry *)g_ptr_array_index(walk_said, i))->kind = ENTRY_FAILURE;
  /* Videos are run between the pipeline's images, in their place, as the
   * tool runs them (a path is one when its content or name says so). */
  GPtrArray *images = g_ptr_array_new();
  run->paths = paths;
  lhp_video_places_split(&run->places, paths, true, images);
  bool going = true; /* the iterator is still there */
  for (guint i = 0; i < walk_said->len; i++) {
    Entry *entry = g_ptr_array_index(walk_said, i);
    if (going)
      going = queue_entry(run, entry);
    else
      entry_free(entry);
  }
  g_ptr_array_free(walk_said, TRUE);

  LhpContexts contexts = {0};
  LhpPipelineResult result = {0};
  if (going) {
    LhpPipelineSpec spec = {
        .contexts = {run->backend, run->device_ids, run->jobs, LHP_DEFAULT_STREAMS, false,
                     run->decoder == LHP_DECODER_GPU ? "decoder=\"gpu\"" : NULL, NULL, "devices="},
        .jobs = run->jobs,
        .read_mode = LHIO_READ_LUMA,
        .decoder = run->decoder,
        .max_pixels = run->max_pixels,
        .fifo_wait = &run->fifo_wait,
        .analyze = &run->options,
        .ready = on_ready,
        .emit = on_emit,
        .failed = on_failed,
        .data = run,
        .report = run->report,
        .stop = &run->stop,
        /* The next stats_files call in this process starts at once. */
        .keep_gpu_jpeg = true,
    };
    lhp_pipeline_run(&spec, &contexts, images, &result);
    /* The videos after the last image. */
    if (!result.not_started && !result.stopped)
      run_videos_before(run, G_MAXUINT);
    g_free(result.per_context);
    lhp_contexts_close(&contexts);
  }
  lhp_video_stats_free(run->videos);
  run->videos = NULL;
  g_ptr_array_free(images, TRUE);
  g_ptr_array_free(paths, TRUE);
  run->paths = NULL;
  lhp_video_places_clear(&run->places);
  g_mutex_lock(&run->lock);
  run->finished = true;
  run->not_started = result.not_started;
  g_cond_broadcast(&run->changed);
  g_mutex_unlock(&run->lock);
  return NULL;
}

static void run_free(Run *run)
{
  if (!run)
    return;
  Entry *entry;
  while ((entry = g_queue_pop_head(&run->entries)))
    entry_free(entry);
  g_ptr_array_free(run->messages, TRUE);
  g_ptr_array_free(run->said, TRUE);
  g_strfreev(run->names);
  if (run->device_ids)
    g_array_free(run->device_ids, TRUE);
  g_mutex_clear(&run->lock);
  g_cond_clear(&run->changed);
  g_free(run);
}

/* Stops the run, if it goes on, and waits for its thread (GIL released):
 * emit refuses from now on, and the pipeline finishes what is under way. */
static void iterator_close(FilesIterator *self)
{
  self->done = true;
  if (!self->thread)
    return;
  if (self->pid != getpid()) {
    /* A fork()ed child's copy: the run's thread is the parent's, and its
     * lock may have been held at the fork.  Left as it is. */
    self->thread = NULL;
    return;
  }
  Run *run = self->run;
  g_mutex_lock(&run->lock);
  run->closing = true;
  g_atomic_int_set(&run->stop, 1);
  g_cond_broadcast(&run->changed);
  g_mutex_unlock(&run->lock);
  /* Taken while the GIL is held: another thread's close() (or the end of
   * its loop) may run while this one waits, and only one may join. */
  GThread *thread = self->thread;
  self->thread = NULL;
  PyThreadState *released = PyEval_SaveThread();
  g_thread_join(thread);
  PyEval_RestoreThread(released);
}

static void iterator_dealloc(FilesIterator *self)
{
  iterator_close(self);
  /* A fork()ed child's copy is left (iterator_close), a leak of the
   * parent's memory rather than a lock that may never be let go. */
  if (self->pid == getpid())
    run_free(self->run);
  Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *iterator_close_method(FilesIterator *self, PyObject *unused)
{
  iterator_close(self);
  Py_RETURN_NONE;
}

/* A message that names a file, as a str: its name decoded as the record's
 * path is (os.fsdecode), since the name's bytes need not be UTF-8. */
static PyObject *message_of(const char *text)
{
  return PyUnicode_DecodeFSDefault(text);
}

/* A RuntimeWarning of text, from the caller's line (PyErr_WarnEx takes UTF-8
 * only): 0, or -1 with the exception set. */
static int warn_text(const char *text)
{
  static PyObject *warn;
  if (!warn) {
    PyObject *warnings = PyImport_ImportModule("warnings");
    if (!warnings)
      return -1;
    warn = PyObject_GetAttrString(warnings, "warn");
    Py_DECREF(warnings);
    if (!warn)
      return -1;
  }
  PyObject *message = message_of(text);
  if (!message)
    return -1;
  PyObject *result = PyObject_CallFunction(warn, "OOi", message, PyExc_RuntimeWarning, 1);
  Py_DECREF(message);
  if (!result)
    return -1;
  Py_DECREF(result);
  return 0;
}

/* Warns of each message: 0, or -1 with the exception set (warnings as
 * errors). */
static int warn_all(GPtrArray *messages)
{
  int status = 0;
  for (guint i = 0; status == 0 && i < messages->len; i++)
    status = warn_text(g_ptr_array_index(messages, i));
  return status;
}

/* A video summary's record (its JSON, as the tool writes it) as a dict,
 * read by json.loads: NULL with the exception set. */
static PyObject *summary_record(const char *text)
{
  static PyObject *loads;
  if (!loads) {
    PyObject *json = PyImport_ImportModule("json");
    if (!json)
      return NULL;
    loads = PyObject_GetAttrString(json, "loads");
    Py_DECREF(json);
    if (!loads)
      return NULL;
  }
  return PyObject_CallFunction(loads, "s", text);
}

/* The record of an entry: Stats (an image, as stats_file makes it),
 * VideoFrame or VideoSummary. */
static PyObject *record_of(Entry *entry)
{
  static const StatsKind kinds[] = {
      [ENTRY_RECORD] = STATS_IMAGE,
      [ENTRY_FRAME] = STATS_VIDEO_FRAME,
      [ENTRY_SUMMARY] = STATS_VIDEO_SUMMARY,
  };
  StatsObject *result = stats_object_new(kinds[entry->kind]);
  if (!result)
    return NULL;
  result->stats = entry->stats;
  result->width = entry->width;
  result->height = entry->height;
  result->backend = entry->backend;
  lh_stats_init(&entry->stats); /* taken */
  if (entry->kind == ENTRY_FRAME)
    result->frame = entry->fields;
  Py_SETREF(result->path, PyUnicode_DecodeFSDefault(entry->path));
  if (entry->kind == ENTRY_RECORD)
    Py_SETREF(result->decoder, PyUnicode_FromString(lhio_decoder_name(entry->decoder)));
  else
    Py_SETREF(result->decoder, PyUnicode_FromString(entry->video_decoder));
  if (result->path && result->decoder && entry->converted_from)
    Py_SETREF(result->converted_from, PyUnicode_FromString(entry->converted_from));
  if (!result->path || !result->decoder || !result->converted_from) {
    Py_DECREF(result);
    return NULL;
  }
  if (entry->kind == ENTRY_SUMMARY) {
    /* VideoSummary reads its own fields (frames, cuts, spans ...) from it. */
    PyObject *record = summary_record(entry->summary_json);
    int status = record ? PyObject_SetAttrString((PyObject *)result, "_record", record) : -1;
    Py_XDECREF(record);
    if (status < 0)
      Py_CLEAR(result);
  }
  return (PyObject *)result;
}

/* Waits a while for the next entry (NULL: none yet, or the run is over,
 * *finished), the GIL released; with one, or at the end, takes the run's
 * messages said meanwhile into *messages. */
static Entry *next_entry(Run *run, bool *finished, GPtrArray **messages)
{
  Entry *entry;
  PyThreadState *released = PyEval_SaveThread();
  g_mutex_lock(&run->lock);
  gint64 until = g_get_monotonic_time() + SIGNAL_CHECK_US;
  while (!(entry = g_queue_pop_head(&run->entries)) && !run->finished)
    if (!g_cond_wait_until(&run->changed, &run->lock, until)) {
      /* Timed out, but the lock is taken back after the run's thread may
       * have queued its last entry and finished meanwhile: that entry is
       * still to be given before the end is (it was lost, a file's
       * warning or record missing, about once in 30 loaded runs). */
      entry = g_queue_pop_head(&run->entries);
      break;
    }
  if (entry)
    g_cond_broadcast(&run->changed); /* room for the pipeline */
  *finished = run->finished && !entry;
  if ((entry || *finished) && run->messages->len > 0) {
    *messages = run->messages;
    run->messages = g_ptr_array_new_with_free_func(g_free);
  }
  g_mutex_unlock(&run->lock);
  PyEval_RestoreThread(released);
  return entry;
}

static PyObject *iterator_next(FilesIterator *self)
{
  if (!self->done && self->pid != getpid()) {
    /* Nothing in this process would ever feed it. */
    iterator_close(self);
    PyErr_SetString(PyExc_RuntimeError,
                    "a lumahist.stats_files iterator cannot be used in another process than the "
                    "one that made it (a fork()ed child): call stats_files in the child");
    return NULL;
  }
  Run *run = self->run;
  while (!self->done) {
    bool finished = false;
    GPtrArray *messages = NULL;
    Entry *entry = next_entry(run, &finished, &messages);
    if (finished && run->not_started) {
      /* Nothing ran: what the contexts said is the failure. */
      char *text = NULL;
      if (run->said->len > 0) {
        g_ptr_array_add(run->said, NULL);
        text = g_strjoinv("; ", (char **)run->said->pdata);
        g_ptr_array_remove_index(run->said, run->said->len - 1);
      }
      /* A GPU asked for (backend="cuda", devices=) and not there. */
      bool gpu_asked = run->backend == LH_BACKEND_CUDA || run->device_ids;
      raise_message(gpu_asked ? LH_ERROR_NO_DEVICE : LH_ERROR_UNSUPPORTED,
                    text ? text : "the analysis contexts could not be opened");
      g_free(text);
      if (messages)
        g_ptr_array_free(messages, TRUE);
      iterator_close(self);
      return NULL;
    }
    int status = messages ? warn_all(messages) : 0;
    if (messages)
      g_ptr_array_free(messages, TRUE);
    if (status < 0) {
      if (entry)
        entry_free(entry);
      iterator_close(self);
      return NULL;
    }
    if (!entry) {
      if (finished) {
        iterator_close(self);
        return NULL;
      }
      if (PyErr_CheckSignals() < 0) {
        iterator_close(self);
        return NULL;
      }
      continue;
    }
    PyObject *record = NULL;
    if (entry->kind == ENTRY_RECORD || entry->kind == ENTRY_FRAME || entry->kind == ENTRY_SUMMARY) {
      record = record_of(entry);
      if (!record)
        iterator_close(self);
    } else {
      char *text = g_strdup_printf("%s: %s", entry->path, entry->reason);
      if (entry->kind == ENTRY_FAILURE && self->raise_errors) {
        PyObject *message = message_of(text);
        if (message) {
          raise_file_error(entry->status, message, entry->os_error, entry->path);
          Py_DECREF(message);
        }
        iterator_close(self);
      } else if (warn_text(text) < 0) {
        iterator_close(self);
      } else {
        g_free(text);
        entry_free(entry);
        continue;
      }
      g_free(text);
    }
    entry_free(entry);
    return record;
  }
  return NULL;
}

static PyMethodDef iterator_methods[] = {
    {"close", (PyCFunction)iterator_close_method, METH_NOARGS,
     "close($self, /)\n--\n\n"
     "Stops the run (what is under way is finished and dropped) and waits for its threads."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject FilesIteratorType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "lumahist._lumahist.StatsFilesIterator",
    .tp_doc = "The records of lumahist.stats_files, in the order of the files.",
    .tp_basicsize = sizeof(FilesIterator),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_dealloc = (destructor)iterator_dealloc,
    .tp_iter = PyObject_SelfIter,
    .tp_iternext = (iternextfunc)iterator_next,
    .tp_methods = iterator_methods,
};

int files_add_type(PyObject *module)
{
  if (PyType_Ready(&FilesIteratorType) < 0)
    return -1;
  Py_INCREF(&FilesIteratorType);
  if (PyModule_AddObject(module, "StatsFilesIterator", (PyObject *)&FilesIteratorType) < 0) {
    Py_DECREF(&FilesIteratorType);
    return -1;
  }
  return 0;
}

/* The paths as bytes (os.fsencode), NULL-terminated; NULL with the
 * exception set. */
static char **names_from(PyObject *paths, int *n)
{
  PyObject *sequence = PySequence_Fast(paths, "paths: a sequence of paths");
  if (!sequence)
    return NULL;
  Py_ssize_t count = PySequence_Fast_GET_SIZE(sequence);
  char **names = g_new0(char *, count + 1);
  for (Py_ssize_t i = 0; i < count; i++) {
    PyObject *bytes;
    if (!PyUnicode_FSConverter(PySequence_Fast_GET_ITEM(sequence, i), &bytes)) {
      g_strfreev(names);
      Py_DECREF(sequence);
      return NULL;
    }
    names[i] = g_strdup(PyBytes_AS_STRING(bytes));
    Py_DECREF(bytes);
  }
  Py_DECREF(sequence);
  *n = (int)count;
  return names;
}

PyObject *files_stats(PyObject *self, PyObject *args, PyObject *kwargs)
{
  static char *keywords[] = {"paths",        "jobs",          "matrix",        "range",
                             "percentiles",  "backend",       "max_pixels",    "decoder",
                             "raise_errors", "every",         "fps",           "start",
                             "duration",     "cut_threshold", "video_timeout", "video_memory",
                             "fifo_wait",    "program",       "devices",       NULL};
  PyObject *paths, *percentiles = Py_None, *start = Py_None;
  int raise_errors = 0;
  IntArgument jobs = {"jobs", 0}, every = {"every", 1}, program = {"program", 0};
  const char *matrix_name = NULL, *range_name = NULL, *backend_name = "auto";
  const char *decoder_name = "auto", *devices = NULL;
  unsigned long long max_pixels = 0;
  double fifo_wait = LHIO_DEFAULT_FIFO_WAIT_S;
  LhpVideoOptions video;
  lhp_video_options_init(&video);
  every.value = video.every;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|$O&zzOsKspO&dOdddsdO&z", keywords, &paths,
                                   int_argument, &jobs, &matrix_name, &range_name, &percentiles,
                                   &backend_name, &max_pixels, &decoder_name, &raise_errors,
                                   int_argument, &every, &video.fps, &start, &video.duration_s,
                                   &video.cut_threshold, &video.timeout_s, &video.memory,
                                   &fifo_wait, int_argument, &program, &devices))
    return NULL;
  video.every = every.value;
  video.program = program.value;
  /* None: the tool's --start not given, duration counts from the first frame. */
  if (start != Py_None) {
    video.start_s = PyFloat_AsDouble(start);
    if (video.start_s == -1.0 && PyErr_Occurred())
      return NULL;
    video.start_given = true;
  }
  if (jobs.value < 0)
    return raise_invalid("jobs: 1 or more (None or 0: one per core, as the tool's --jobs 0)");
  if (!(fifo_wait >= 0) || !isfinite(fifo_wait))
    return raise_invalid("fifo_wait: seconds >= 0 (0: no limit), as the tool's --fifo-wait");
  /* The tool's checks and words, with the keywords' names. */
  const char *option, *rule;
  if (!lhp_video_options_check(&video, &option, &rule)) {
    char *text = g_strdup_printf("%s %s", option, rule);
    raise_invalid(text);
    g_free(text);
    return NULL;
  }
  LhOptions options;
  LhBackend backend;
  /* Without matrix= and range=, images are bt601 and full range, and a
   * video's come from its stream, as the tool does without --matrix and
   * --range. */
  if (stats_options_from(matrix_name ? matrix_name : "bt601", range_name ? range_name : "full",
                         backend_name, percentiles, &options, &backend) < 0)
    return NULL;
  LhpDecoder decoder;
  if (strcmp(decoder_name, "auto") == 0) {
    decoder = LHP_DECODER_AUTO;
  } else if (strcmp(decoder_name, "cpu") == 0) {
    decoder = LHP_DECODER_CPU;
  } else if (strcmp(decoder_name, "gpu") == 0) {
    decoder = LHP_DECODER_GPU;
    const char *why = NULL;
    if (backend == LH_BACKEND_CPU)
      return raise_invalid("decoder=\"gpu\" needs the CUDA backend, not backend=\"cpu\"");
    if (!lhp_gpu_jpeg_usable(&why)) {
      char *text = g_strdup_printf("decoder=\"gpu\": %s", why ? why : "nvJPEG cannot be used");
      raise_message(LH_ERROR_UNSUPPORTED, text);
      g_free(text);
      return NULL;
    }
    /* The GPU was asked for: no quiet fall back to the CPU backend. */
    backend = LH_BACKEND_CUDA;
  } else {
    return raise_invalid("decoder: auto, cpu or gpu");
  }

  /* The tool's --devices, with its words. */
  if (devices && backend == LH_BACKEND_CPU)
    return raise_invalid("devices= needs the CUDA backend, not backend=\"cpu\"");
  GArray *device_ids = NULL;
  if (devices) {
    char *error = NULL;
    device_ids = g_array_new(FALSE, FALSE, sizeof(int));
    if (!lhp_devices_parse(devices, device_ids, &error)) {
      char *text = g_strdup_printf("devices: %s", error);
      raise_invalid(text);
      g_free(text);
      g_free(error);
      g_array_free(device_ids, TRUE);
      return NULL;
    }
  }
  Run *run = g_new0(Run, 1);
  run->device_ids = device_ids;
  run->names = names_from(paths, &run->n_names);
  if (!run->names) {
    if (device_ids)
      g_array_free(device_ids, TRUE);
    g_free(run);
    return NULL;
  }
  run->options = options;
  run->backend = backend;
  run->decoder = decoder;
  run->jobs = jobs.value > 0 ? jobs.value : (int)g_get_num_processors();
  run->max_pixels = max_pixels;
  run->fifo_wait = (LhioFifoWait){.seconds = fifo_wait, .stop = &run->stop};
  run->video = video;
  run->video.memory = NULL; /* a Python string's: checked, cuda_memory says it */
  run->matrix_given = matrix_name != NULL;
  run->range_given = range_name != NULL;
  run->report = (LhpReport){.say = say_of_run, .data = run};
  g_mutex_init(&run->lock);
  g_cond_init(&run->changed);
  g_queue_init(&run->entries);
  run->messages = g_ptr_array_new_with_free_func(g_free);
  run->said = g_ptr_array_new_with_free_func(g_free);

  FilesIterator *iterator = PyObject_New(FilesIterator, &FilesIteratorType);
  if (!iterator) {
    run_free(run);
    return NULL;
  }
  iterator->run = run;
  iterator->thread = NULL;
  iterator->pid = getpid();
  iterator->raise_errors = raise_errors != 0;
  iterator->done = false;
  GError *error = NULL;
  iterator->thread = g_thread_try_new("lumahist-files", run_thread, run, &error);
  if (!iterator->thread) {
    raise_message(LH_ERROR_NO_MEMORY, error->message);
    g_error_free(error);
    Py_DECREF(iterator);
    return NULL;
  }
  return (PyObject *)iterator;
}
