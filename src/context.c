/* context.c: the public context: backend choice and the analysis entry points
 * that check their arguments, cut frames to the region and finish results. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lh-private.h"

static int open_backend(LhContext *context, const LhiBackend *backend)
{
  int status = backend->open(&context->state);
  if (status == LH_OK)
    context->backend = backend;
  return status;
}

/* The CUDA backend opened in the current CUDA context, or (device 0 or
 * more) in that device's primary context, the caller's made current again. */
static int open_cuda(LhContext *context, int device)
{
#ifdef LH_HAVE_CUDA
  if (device < 0)
    return open_backend(context, &lhi_cuda_backend);
  int status = lhi_cuda_on_device(device);
  if (status < 0)
    return status;
  status = open_backend(context, &lhi_cuda_backend);
  lhi_cuda_on_device_end(device);
  return status;
#else
  (void)context;
  (void)device;
  return lhi_error(LH_ERROR_NO_DEVICE, "lumahist was built without CUDA support");
#endif
}

static int context_new(LhBackend backend, int device, LhContext **out)
{
  if (!out)
    return lhi_error(LH_ERROR_INVALID_ARGUMENT, "context pointer is NULL");
  *out = NULL;
  if (backend != LH_BACKEND_AUTO && backend != LH_BACKEND_CPU && backend != LH_BACKEND_CUDA)
    return lhi_error(LH_ERROR_INVALID_ARGUMENT, "unknown backend %d", (int)backend);
  if (backend == LH_BACKEND_CPU && device >= 0)
    return lhi_error(LH_ERROR_INVALID_ARGUMENT,
                     "the CPU backend has no device %d: make a CPU context with lh_context_new",
                     device);
  LhContext *context = calloc(1, sizeof *context);
  if (!context)
    return lhi_error(LH_ERROR_NO_MEMORY, "out of memory for a context");

  int status = LH_OK;
  if (backend == LH_BACKEND_CPU) {
    status = open_backend(context, &lhi_cpu_backend);
  } else {
    status = open_cuda(context, device);
    if (status < 0 && backend == LH_BACKEND_AUTO) {
      snprintf(context->note, sizeof context->note, "using the CPU: %s", lh_last_error());
      status = open_backend(context, &lhi_cpu_backend);
    } else if (status == LH_OK && backend == LH_BACKEND_AUTO) {
      /* Host frames in pageable memory may cost less on the CPU. */
      status = lhi_cpu_backend.open(&context->cpu_state);
      if (status < 0)
        context->backend->close(context->state);
    }
  }
  if (status < 0) {
    free(context);
    return status;
  }
  context->last_backend = context->backend->kind;
  *out = context;
  return LH_OK;
}

LH_API int lh_context_new(LhBackend backend, LhContext **out)
{
  return context_new(backend, -1, out);
}

LH_API int lh_context_new_on_device(LhBackend backend, int device, LhContext **out)
{
  return context_new(backend, device, out);
}

LH_API int lh_context_device(const LhContext *context)
{
  const void *cuda_context = NULL;
  return context && context->backend->device
             ? context->backend->device(context->state, &cuda_context)
             : -1;
}

LH_API int lh_device_of(const void *memory)
{
#ifdef LH_HAVE_CUDA
  return lhi_cuda_memory_device(memory);
#else
  (void)memory;
  return -1;
#endif
}

LH_API int lh_device_current(void)
{
#ifdef LH_HAVE_CUDA
  return lhi_cuda_current_device();
#else
  return -1;
#endif
}

LH_API void lh_context_free(LhContext *context)
{
  if (!context)
    return;
  if (context->cpu_state)
    lhi_cpu_backend.close(context->cpu_state);
  context->backend->close(context->state);
  free(context);
}

LH_API LhBackend lh_context_backend(const LhContext *context)
{
  return context ? context->backend->kind : LH_BACKEND_CPU;
}

LH_API LhBackend lh_context_last_backend(const LhContext *context)
{
  return context ? context->last_backend : LH_BACKEND_CPU;
}

LH_API const char *lh_context_note(const LhContext *context)
{
  return context ? context->note : "";
}

/* Every call on a CUDA state runs in the CUDA context it was made in
 * (cuda/place.c says why); the caller's is current again afterwards. */
static int place_enter(LhContext *context, bool *pushed)
{
  *pushed = false;
  return context->backend->enter ? context->backend->enter(context->state, pushed) : LH_OK;
}

static void place_leave(LhContext *context, bool pushed)
{
  if (context->backend->leave)
    context->backend->leave(context->state, pushed);
}

LH_API int lh_context_set_stream(LhContext *context, void *cuda_stream)
{
  if (!context)
    return lhi_error(LH_ERROR_INVALID_ARGUMENT, "context is NULL");
  bool pushed;
  int status = place_enter(context, &pushed);
  if (status == LH_OK)
    status = context->backend->set_stream(context->state, cuda_stream);
  place_leave(context, pushed);
  return status;
}

LH_API int lh_context_set_threads(LhContext *context, int threads)
{
  if (!context)
    return lhi_error(LH_ERROR_INVALID_ARGUMENT, "context is NULL");
  if (threads < 0)
    return lhi_error(LH_ERROR_INVALID_ARGUMENT, "threads must be 0 (one per core) or more, not %d",
                     threads);
  int status =
      context->cpu_state ? lhi_cpu_backend.set_threads(context->cpu_state, threads) : LH_OK;
  if (status == LH_OK && context->backend->set_threads)
    status = context->backend->set_threads(context->state, threads);
  return status;
}

static int host_register(LhContext *context, void *memory, size_t bytes)
{
  if (!context || !memory)
    return lhi_error(LH_ERROR_INVALID_ARGUMENT, "%s is NULL", context ? "memory" : "context");
  if (!context->backend->host_register)
    return lhi_error(LH_ERROR_UNSUPPORTED, "the %s backend reads host memory where it is",
                     context->backend->name);
  bool pushed;
  int status = place_enter(context, &pushed);
  if (status == LH_OK)
    status = context->backend->host_register(context->state, memory, bytes);
  place_leave(context, pushed);
  return status;
}

LH_API int lh_host_register(LhContext *context, void *memory, size_t bytes)
{
  if (bytes == 0)
    return lhi_error(LH_ERROR_INVALID_ARGUMENT, "no bytes to register");
  return host_register(context, memory, bytes);
}

LH_API int lh_host_unregister(LhContext *context, void *memory)
{
  return host_register(context, memory, 0);
}

LH_API int lh_host_alloc(LhContext *context, size_t bytes, void **memory)
{
  if (memory)
    *memory = NULL;
  if (!context || !memory)
    return lhi_error(LH_ERROR_INVALID_ARGUMENT, "%s is NULL", context ? "memory" : "context");
  if (bytes == 0)
    return lhi_error(LH_ERROR_INVALID_ARGUMENT, "no bytes to allocate");
  if (!context->backend->host_alloc)
    return lhi_error(LH_ERROR_UNSUPPORTED, "the %s backend reads host memory where it is",
                     context->backend->name);
  bool pushed;
  int status = place_enter(context, &pushed);
  if (status == LH_OK)
    status = context->backend->host_alloc(context->state, bytes, memory);
  place_leave(context, pushed);
  return status;
}

LH_API void lh_host_free(void *memory)
{
  if (!memory)
    return;
#ifdef LH_HAVE_CUDA
  /* Only the CUDA backend allocates: anything else is a caller's error. */
  lhi_cuda_host_free(memory);
#endif
}

LH_API int lh_context_device_time(LhContext *context, LhDeviceTime *time)
{
  if (time)
    memset(time, 0, sizeof *time);
  if (!context || !time)
    return lhi_error(LH_ERROR_INVALID_ARGUMENT, "%s is NULL", context ? "time" : "context");
  if (!context->backend->device_time)
    return lhi_error(LH_ERROR_UNSUPPORTED,
                     "the %s backend uses no GPU: there is no device time to measure",
                     context->backend->name);
  bool pushed;
  int status = place_enter(context, &pushed);
  if (status == LH_OK)
    status = context->backend->device_time(context->state, time);
  place_leave(context, pushed);
  if (status < 0)
    memset(time, 0, sizeof *time);
  return status;
}

int lhi_context_enter(LhContext *context)
{
  if (!context)
    return LH_OK;
  if (__atomic_exchange_n(&context->busy, 1, __ATOMIC_ACQUIRE))
    return lhi_error(LH_ERROR_INVALID_ARGUMENT,
                     "the context is in use by another thread's call: a context serves one call "
                     "at a time (give each thread its own, or hold a lock around the calls)");
  int status = place_enter(context, &context->pushed);
  if (status < 0)
    __atomic_store_n(&context->busy, 0, __ATOMIC_RELEASE);
  return status;
}

void lhi_context_leave(LhContext *context)
{
  if (!context)
    return;
  place_leave(context, context->pushed);
  __atomic_store_n(&context->busy, 0, __ATOMIC_RELEASE);
}

/* Everything a backend needs for one frame, from the caller's frame (valid:
 * lh_analyze_batch checks every frame before it routes them) and options. */
static int prepare_job(const LhiRoute *route, const LhFrame *frame, const LhOptions *options,
                       LhStats *stats, LhiJob *job)
{
  memset(job, 0, sizeof *job);
  int status = lhi_frame_crop(frame, &options->roi, &job->frame);
  if (status < 0)
    return status;
  job->bit_depth = lhi_frame_luma_depth(frame);
  job->weights = lhi_luma_weights(options->matrix, job->bit_depth);
  job->range = options->range;
  uint64_t pixels = (uint64_t)job->frame.width * (uint64_t)job->frame.height;
  switch (options->percentile_method) {
  case LH_PERCENTILE_SORT:
    job->use_sort = true;
    break;
  case LH_PERCENTILE_HISTOGRAM:
    job->use_sort = false;
    break;
  default:
    job->use_sort = route->backend->prefer_sort(route->state, pixels, job->bit_depth);
    break;
  }
  job->n_ranks = lhi_fill_ranks(options, pixels, job->ranks);
  status = lhi_stats_reserve(stats, job->bit_depth);
  if (status < 0)
    return status;
  job->histogram = stats->histogram;
  return LH_OK;
}

/* A failure of frame i of a batch of n says which frame it was. */
static int name_frame(int status, size_t i, size_t n)
{
  if (status < 0 && n > 1) {
    char message[512];
    snprintf(message, sizeof message, "frame %zu: %s", i, lh_last_error());
    lhi_error(status, "%s", message);
  }
  return status;
}

static int analyze_batch_call(LhContext *context, const LhFrame *frames, size_t n,
                              const LhOptions *options, LhStats *stats)
{
  if (!context || (n > 0 && (!frames || !stats)))
    return lhi_error(LH_ERROR_INVALID_ARGUMENT, "context, frames or stats is NULL");
  if (n == 0)
    return LH_OK;
  LhOptions defaults;
  if (!options) {
    lh_options_init(&defaults);
    options = &defaults;
  }
  int status = lhi_options_validate(options);
  if (status < 0)
    return status;

  /* Checked first: where the frames go depends on where they are. */
  for (size_t i = 0; i < n && status == LH_OK; i++) {
    status = name_frame(lhi_frame_validate(&frames[i]), i, n);
  }
  if (status < 0)
    return status;

  LhiJob *jobs = calloc(n, sizeof *jobs);
  if (!jobs)
    return lhi_error(LH_ERROR_NO_MEMORY, "out of memory for %zu jobs", n);
  LhiRoute route;
  lhi_route_begin(context, LHI_OP_ANALYZE, frames, n, false, NULL, &route);
  for (size_t i = 0; i < n && status == LH_OK; i++) {
    status = name_frame(prepare_job(&route, &frames[i], options, &stats[i], &jobs[i]), i, n);
  }
  if (status == LH_OK) {
    status = route.backend->analyze(route.state, jobs, n);
    lhi_route_end(context, &route, status, n);
  }
  for (size_t i = 0; i < n && status == LH_OK; i++)
    status = lhi_stats_finish(&stats[i], jobs[i].bit_depth, options->matrix, options->range,
                              options, &jobs[i].moments, jobs[i].values);
  free(jobs);
  return status;
}

LH_API int lh_analyze_batch(LhContext *context, const LhFrame *frames, size_t n,
                            const LhOptions *options, LhStats *stats)
{
  int status = lhi_context_enter(context);
  if (status < 0)
    return status;
  status = analyze_batch_call(context, frames, n, options, stats);
  lhi_context_leave(context);
  return status;
}

LH_API int lh_analyze(LhContext *context, const LhFrame *frame, const LhOptions *options,
                      LhStats *stats)
{
  if (!frame || !stats)
    return lhi_error(LH_ERROR_INVALID_ARGUMENT, "frame or stats is NULL");
  return lh_analyze_batch(context, frame, 1, options, stats);
}
