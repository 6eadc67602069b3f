/* devices.c: the analysis contexts of a batch run: one per GPU named by
 * `--devices 0,1` (the pipeline makes each device current on the thread that
 * uses it, since the library never changes the device), one on the default device,
 * or one per decoding thread on the CPU.  The pipeline opens them on its
 * first analysis thread while the first images decode.  Each CUDA context's
 * thread may also have an nvJPEG decoder on a stream it shares with it. */
#include <errno.h>
#include <string.h>

#ifdef LH_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

#include "io/lhio-gpu.h"
#include "lhp.h"

bool lhp_devices_parse(const char *text, GArray *ids, char **error)
{
  char **parts = g_strsplit(text, ",", -1);
  bool ok = parts[0] != NULL;
  for (int i = 0; ok && parts[i]; i++) {
    const char *part = g_strstrip(parts[i]);
    char *end;
    errno = 0;
    gint64 id = g_ascii_isdigit(part[0]) ? g_ascii_strtoll(part, &end, 10) : -1;
    if (id < 0 || errno != 0 || *end != '\0' || id > 1023) {
      *error = g_strdup_printf("'%s' is not a device number", part);
      ok = false;
      break;
    }
    for (guint j = 0; j < ids->len; j++)
      if (g_array_index(ids, int, j) == (int)id) {
        *error = g_strdup_printf("device %d is named twice", (int)id);
        ok = false;
        break;
      }
    if (!ok)
      break;
    int value = (int)id;
    g_array_append_val(ids, value);
  }
  if (!parts[0])
    *error = g_strdup("no device named");
  g_strfreev(parts);
  return ok;
}

/* Is there such a device (0 or more)? */
static bool device_exists(int device, char **error)
{
#ifdef LH_HAVE_CUDA
  int count = 0;
  cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    *error = g_strdup_printf("no CUDA device is usable: %s", cudaGetErrorString(status));
    return false;
  }
  if (device >= count) {
    *error = g_strdup_printf("there is no CUDA device %d (%d found)", device, count);
    return false;
  }
  return true;
#else
  (void)device;
  *error = g_strdup("no CUDA device is usable: this lumahist was built without CUDA");
  return false;
#endif
}

bool lhp_device_use(int device, char **error)
{
  if (device < 0)
    return true;
  if (!device_exists(device, error))
    return false;
#ifdef LH_HAVE_CUDA
  cudaError_t status = cudaSetDevice(device);
  if (status != cudaSuccess) {
    *error =
        g_strdup_printf("CUDA device %d cannot be used: %s", device, cudaGetErrorString(status));
    return false;
  }
#endif
  return true;
}

static void contexts_alloc(LhpContexts *c, int n, LhBackend backend)
{
  c->n = n;
  c->contexts = g_new0(LhContext *, n);
  c->device_ids = g_new(int, n);
  for (int i = 0; i < n; i++)
    c->device_ids[i] = -1;
  c->backend = backend;
}

/* Opens per_device CUDA contexts on device (-1: the current one) into
 * c->contexts[first], [first + step], ...: a context and its thread per
 * stream, so that one's host copies overlap another's GPU work. */
static bool open_on_device(LhpContexts *c, int device, int first, int step, int per_device,
                           const char *what, const LhpReport *report)
{
  char *error = NULL;
  if (!lhp_device_use(device, &error)) {
    lhp_say(report, NULL, "%s: %s", what, error);
    g_free(error);
    return false;
  }
#ifdef LH_HAVE_CUDA
  if (device < 0 && cudaGetDevice(&device) != cudaSuccess)
    device = -1;
#endif
  for (int k = 0; k < per_device; k++) {
    int i = first + k * step;
    /* The CUDA backend takes the device current on this thread. */
    if (!c->contexts[i] && lh_context_new(LH_BACKEND_CUDA, &c->contexts[i]) < 0) {
      lhp_say(report, NULL, "%s: CUDA device %d: %s", what, device, lh_last_error());
      return false;
    }
    c->device_ids[i] = device;
  }
  return true;
}

/* lhp_context_open, with the option that asked for the backend, if any,
 * leading the message of a failure. */
static LhContext *context_open_for(LhBackend wanted, int device, bool verbose, const char *asked_by,
                                   const LhpReport *report)
{
  LhContext *context = NULL;
  /* auto: the GPU for every frame where one is usable.  The library's own
   * auto would send some frames in pageable memory to the CPU by measured
   * cost; the numbers are the same, but the records' backend field would
   * then change from run to run, and the tool's frames are page-locked
   * anyway.  (lh_context_new_on_device with device -1 is lh_context_new.) */
  if (wanted == LH_BACKEND_AUTO &&
      lh_context_new_on_device(LH_BACKEND_CUDA, device, &context) == LH_OK) {
    if (verbose)
      lhp_say(report, NULL, "using the cuda backend");
    return context;
  }
  if (lh_context_new_on_device(wanted, device, &context) < 0) {
    lhp_say(report, NULL, "%s%scannot use the %s backend: %s", asked_by ? asked_by : "",
            asked_by ? ": " : "", lh_backend_name(wanted), lh_last_error());
    return NULL;
  }
  if (verbose) {
    const char *note = lh_context_note(context);
    lhp_say(report, NULL, "using the %s backend%s%s", lh_backend_name(lh_context_backend(context)),
            *note ? ": " : "", note);
  }
  return context;
}

LhContext *lhp_context_open(LhBackend wanted, int device, bool verbose, const LhpReport *report)
{
  return context_open_for(wanted, device, verbose, NULL, report);
}

int lhp_first_device(const GArray *device_ids)
{
  return device_ids && device_ids->len > 0 ? g_array_index(device_ids, int, 0) : -1;
}

int lhp_contexts_count(const LhpContextsWanted *wanted, LhBackend backend)
{
  int per_device = wanted->per_device > 0 ? wanted->per_device : 1;
  if (wanted->device_ids)
    return (int)wanted->device_ids->len * per_device;
  if (backend == LH_BACKEND_CUDA)
    return per_device;
  /* The CPU analyses as fast as it decodes only on as many threads. */
  return wanted->cpu_workers > 0 ? wanted->cpu_workers : 1;
}

/* Runs work on each of n items (item i at base + i * size) at once: items
 * 1 to n - 1 on threads of their own, item 0 on this thread, as is any
 * whose thread cannot be had. */
static void at_once(GThreadFunc work, gpointer base, gsize size, guint n)
{
  GThread **threads = g_new0(GThread *, n);
  for (guint i = 1; i < n; i++) {
    gpointer item = (char *)base + i * size;
    threads[i] = g_thread_try_new("lumahist-device", work, item, NULL);
    if (!threads[i])
      work(item);
  }
  if (n > 0)
    work(base);
  for (guint i = 1; i < n; i++)
    if (threads[i])
      g_thread_join(threads[i]);
  g_free(threads);
}

/* One device's contexts of --devices, opened beside the others'. */
typedef struct {
  LhpContexts *contexts;
  const LhpContextsWanted *wanted;
  int index; /* in wanted->device_ids */
  int per_device;
  bool opened;
} DeviceOpening;

static gpointer open_device_contexts(gpointer data)
{
  DeviceOpening *o = data;
  const GArray *ids = o->wanted->device_ids;
  const char *by = o->wanted->devices_by ? o->wanted->devices_by : "--devices";
  o->opened = open_on_device(o->contexts, g_array_index(ids, int, o->index), o->index,
                             (int)ids->len, o->per_device, by, o->wanted->report);
  return NULL;
}

bool lhp_contexts_open(LhpContexts *c, const LhpContextsWanted *wanted)
{
  memset(c, 0, sizeof *c);
  int per_device = wanted->per_device > 0 ? wanted->per_device : 1;
  if (wanted->device_ids) {
    int devices = (int)wanted->device_ids->len;
    /* Every device there before any is opened: one message, as before. */
    for (int d = 0; d < devices; d++) {
      char *error = NULL;
      if (!device_exists(g_array_index(wanted->device_ids, int, d), &error)) {
        lhp_say(wanted->report, NULL, "%s: %s",
                wanted->devices_by ? wanted->devices_by : "--devices", error);
        g_free(error);
        return false;
      }
    }
    contexts_alloc(c, lhp_contexts_count(wanted, LH_BACKEND_CUDA), LH_BACKEND_CUDA);
    /* The devices at once: one after the other, two H200s' contexts were
     * open 0.74 s into a run, at once 0.58-0.62 s (one H200's: 0.39-0.50 s).
     * The images the CPU decodes meanwhile wait for them. */
    DeviceOpening *openings = g_new0(DeviceOpening, wanted->device_ids->len);
    for (int d = 0; d < devices; d++)
      openings[d] = (DeviceOpening){c, wanted, d, per_device, false};
    at_once(open_device_contexts, openings, sizeof *openings, wanted->device_ids->len);
    bool opened = true;
    for (int d = 0; d < devices; d++)
      opened = opened && openings[d].opened;
    g_free(openings);
    if (!opened) {
      lhp_contexts_close(c);
      return false;
    }
    if (wanted->verbose)
      lhp_say(wanted->report, NULL, "using the cuda backend on %d device%s, %d stream%s each",
              devices, devices > 1 ? "s" : "", per_device, per_device > 1 ? "s" : "");
    return true;
  }

  LhContext *first =
      context_open_for(wanted->backend, -1, wanted->verbose, wanted->asked_by, wanted->report);
  if (!first)
    return false;
  LhBackend backend = lh_context_backend(first);
  contexts_alloc(c, lhp_contexts_count(wanted, backend), backend);
  c->contexts[0] = first;
  if (backend == LH_BACKEND_CUDA) {
    /* On the device current now; the contexts' threads make it current too. */
    if (!open_on_device(c, -1, 0, 1, per_device, "cuda", wanted->report)) {
      lhp_contexts_close(c);
      return false;
    }
    return true;
  }
  for (int i = 1; i < c->n; i++)
    if (lh_context_new(LH_BACKEND_CPU, &c->contexts[i]) < 0) {
      lhp_say(wanted->report, NULL, "cannot use the cpu backend: %s", lh_last_error());
      lhp_contexts_close(c);
      return false;
    }
  /* The cores are shared among the contexts, each working on its own
   * images: with one context a decoding thread (the default), a frame is
   * not split further. */
  int cores = (int)g_get_num_processors();
  for (int i = 0; i < c->n; i++)
    lh_context_set_threads(c->contexts[i], cores / c->n > 1 ? cores / c->n : 1);
  return true;
}

void lhp_contexts_close(LhpContexts *c)
{
  for (int i = 0; i < c->n; i++) {
    if (c->contexts[i] && c->device_ids[i] >= 0) {
      char *error = NULL;
      /* Its memory is on that device: free it there. */
      if (!lhp_device_use(c->device_ids[i], &error))
        g_free(error);
    }
    lh_context_free(c->contexts[i]);
  }
  g_free(c->contexts);
  g_free(c->device_ids);
  memset(c, 0, sizeof *c);
}

bool lhp_gpu_jpeg_usable(const char **why)
{
  return lhio_gpu_jpeg_usable(why);
}

bool lhp_gpu_jpeg_open(LhioGpuJpeg **decoder, void **stream, char **error)
{
  *decoder = NULL;
  *stream = NULL;
#ifdef LH_HAVE_CUDA
  cudaStream_t own;
  cudaError_t status = cudaStreamCreateWithFlags(&own, cudaStreamNonBlocking);
  if (status != cudaSuccess) {
    *error = g_strdup_printf("cannot create a CUDA stream: %s", cudaGetErrorString(status));
    return false;
  }
  if (lhio_gpu_jpeg_new(own, decoder) < 0) {
    *error = g_strdup(lh_last_error());
    lhio_gpu_jpeg_free(*decoder);
    *decoder = NULL;
    cudaStreamDestroy(own);
    return false;
  }
  *stream = own;
  return true;
#else
  *error = g_strdup("this lumahist was built without CUDA");
  return false;
#endif
}

bool lhp_gpu_stream_sync(void *stream, char **error)
{
#ifdef LH_HAVE_CUDA
  cudaError_t status = cudaStreamSynchronize((cudaStream_t)stream);
  if (status != cudaSuccess) {
    *error = g_strdup_printf("CUDA: %s", cudaGetErrorString(status));
    return false;
  }
#else
  (void)stream;
  (void)error;
#endif
  return true;
}

void lhp_gpu_jpeg_close(LhContext *context, LhioGpuJpeg *decoder, void *stream)
{
  lhio_gpu_jpeg_free(decoder);
#ifdef LH_HAVE_CUDA
  if (stream) {
    lh_context_set_stream(context, NULL);
    cudaStreamDestroy((cudaStream_t)stream);
  }
#else
  (void)context;
  (void)stream;
#endif
}

/* What lhp_gpu_jpeg_leave keeps until the process exits: reachable, so that
 * leak checkers do not count it, and never used again. */
static GMutex left_lock;
static GPtrArray *left_for_exit;

void lhp_gpu_jpeg_leave(LhContext *context, LhioGpuJpeg *decoder, void *stream)
{
#ifdef LH_HAVE_CUDA
  if (stream)
    lh_context_set_stream(context, NULL);
#else
  (void)context;
#endif
  g_mutex_lock(&left_lock);
  if (!left_for_exit)
    left_for_exit = g_ptr_array_new();
  if (decoder)
    g_ptr_array_add(left_for_exit, decoder);
  if (stream)
    g_ptr_array_add(left_for_exit, stream);
  g_mutex_unlock(&left_lock);
}

/* device: an int, -1 for the current device. */
static gpointer prepare_on_device(gpointer device)
{
  char *error = NULL;
  if (lhp_device_use(*(const int *)device, &error))
    lhio_gpu_jpeg_prepare(); /* a failure is reported where the decoders are made */
  g_free(error);
  return NULL;
}

void lhp_gpu_jpeg_prepare(const GArray *device_ids)
{
  if (!device_ids || device_ids->len == 0) {
    int current = -1;
    prepare_on_device(&current);
    return;
  }
  /* Each device's handles at once (one after the other, two H200s'
   * decoders started 1.5 s into a run, one H200's 0.4 s; at once
   * 0.64-1.53 s: nvJPEG's own set-up is partly one at a time). */
  at_once(prepare_on_device, device_ids->data, sizeof(int), device_ids->len);
}

/* Runs that hold nvJPEG's handles. */
static GMutex gpu_jpeg_lock;
static int gpu_jpeg_runs;

void lhp_gpu_jpeg_hold(void)
{
  g_mutex_lock(&gpu_jpeg_lock);
  gpu_jpeg_runs++;
  g_mutex_unlock(&gpu_jpeg_lock);
}

void lhp_gpu_jpeg_let_go(bool free_them)
{
  g_mutex_lock(&gpu_jpeg_lock);
  if (--gpu_jpeg_runs == 0 && free_them)
    lhio_gpu_jpeg_shutdown();
  g_mutex_unlock(&gpu_jpeg_lock);
}
