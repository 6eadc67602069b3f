/* cuda/backend.c: the CUDA backend: frames to the device (or read where they
 * are), histogram, moments and percentile values by the kernels of kernels/,
 * and the results of a whole batch back in one copy. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "cuda/backend.h"
#include "lh-kernels.h"

#if LHK_MAX_RANKS != LHI_MAX_RANKS
#error "lh-kernels.h and lh-private.h disagree on the number of ranks"
#endif

/* Offsets of frames and result blocks inside their buffers. */
#define ALIGNMENT 256

typedef struct {
  LhiCudaPlace place; /* where every call runs (cuda/place.c) */
  LhkDevice device;
  cudaStream_t own_stream;
  cudaStream_t stream; /* own_stream or the caller's */
  /* Work that a call left queued (equalize and overlay on a caller's
   * stream return without waiting): recorded here, so that a call on
   * another stream, which reuses the same buffers (the overlay's columns,
   * the LUTs), first waits for it (lhi_cuda_note_queued). */
  cudaEvent_t queued;
  cudaStream_t queued_on;
  bool queued_pending;
  /* An error in the middle of a batch may leave the accumulators or the
   * scratch (which every launch otherwise leaves zero) dirty. */
  bool needs_reset;
  LhiCudaBuffer frames;       /* device copies of host frames */
  LhiCudaBuffer staging;      /* pinned host memory those copies go through */
  LhiCudaBuffer histograms;   /* accumulators of one launch, kept zero between launches */
  LhiCudaBuffer scratch;      /* of lhk_histogram, kept zero likewise */
  LhiCudaBuffer results;      /* device result blocks of a batch */
  LhiCudaBuffer results_host; /* pinned, their copy on the host */
  LhiCudaBuffer sort_scratch; /* of lhk_sort_percentiles */
  void *equalize;             /* cuda/equalize.c's buffers (lhi_cuda_equalize_slot) */
  LhiCudaClock *clock;        /* the device time of the calls (lh_context_device_time) */
} CudaState;

static void cuda_close(void *state)
{
  CudaState *s = state;
  if (!s)
    return;
  /* Freed where they were made, whatever this thread has current now. */
  bool pushed = false;
  if (s->place.context)
    (void)lhi_cuda_place_enter(&s->place, &pushed);
  if (s->own_stream)
    cudaStreamSynchronize(s->own_stream);
  lhi_cuda_release(&s->frames, false);
  lhi_cuda_release(&s->staging, true);
  lhi_cuda_release(&s->histograms, false);
  lhi_cuda_release(&s->scratch, false);
  lhi_cuda_release(&s->results, false);
  lhi_cuda_release(&s->results_host, true);
  lhi_cuda_release(&s->sort_scratch, false);
  lhi_cuda_equalize_free(s->equalize);
  lhi_cuda_clock_free(s->clock);
  if (s->queued)
    cudaEventDestroy(s->queued);
  if (s->own_stream)
    cudaStreamDestroy(s->own_stream);
  lhi_cuda_place_leave(pushed);
  free(s);
}

static int cuda_open(void **state)
{
  *state = NULL;
  int count = 0;
  cudaError_t error = cudaGetDeviceCount(&count);
  /* Without the driver at all, the runtime says its version is too old
   * ("CUDA driver version is insufficient"), which sends users looking for a
   * driver update on a machine that has no GPU. */
  int driver = 0;
  if (error != cudaSuccess && cudaDriverGetVersion(&driver) == cudaSuccess && driver == 0)
    return lhi_error(LH_ERROR_NO_DEVICE,
                     "no usable CUDA device: no NVIDIA driver is installed (libcuda.so.1)");
  if (error != cudaSuccess)
    return lhi_error(LH_ERROR_NO_DEVICE, "no usable CUDA device: %s", cudaGetErrorString(error));
  if (count == 0)
    return lhi_error(LH_ERROR_NO_DEVICE, "no CUDA device found");
  /* Makes (or joins) the primary context of the current device, which the
   * calling thread or the host application chose. */
  error = cudaFree(NULL);
  if (error != cudaSuccess)
    return lhi_error(LH_ERROR_NO_DEVICE, "the CUDA device cannot be used: %s",
                     cudaGetErrorString(error));

  CudaState *s = calloc(1, sizeof *s);
  if (s && !(s->clock = lhi_cuda_clock_new())) {
    free(s);
    s = NULL;
  }
  if (!s)
    return lhi_error(LH_ERROR_NO_MEMORY, "out of memory for the CUDA backend");
  int status = lhi_cuda_place_here(&s->place);
  if (status < 0) {
    cuda_close(s);
    return status;
  }
  error = cudaStreamCreateWithFlags(&s->own_stream, cudaStreamNonBlocking);
  if (error == cudaSuccess)
    error = cudaEventCreateWithFlags(&s->queued, cudaEventDisableTiming);
  if (error == cudaSuccess)
    error = lhk_device_init(&s->device);
  if (error != cudaSuccess) {
    status = lhi_cuda_failure(error, "opening the CUDA backend", __FILE__, __LINE__);
    cuda_close(s);
    return status;
  }
  s->stream = s->own_stream;
  *state = s;
  return LH_OK;
}

const LhiCudaPlace *lhi_cuda_place(void *state)
{
  return &((CudaState *)state)->place;
}

static int cuda_enter(void *state, bool *pushed)
{
  return lhi_cuda_place_enter(&((CudaState *)state)->place, pushed);
}

static void cuda_leave(void *state, bool pushed)
{
  (void)state;
  lhi_cuda_place_leave(pushed);
}

static int cuda_device(void *state, const void **cuda_context)
{
  const LhiCudaPlace *place = &((CudaState *)state)->place;
  *cuda_context = place->context;
  return place->device;
}

static int cuda_set_stream(void *state, void *cuda_stream)
{
  CudaState *s = state;
  s->stream = cuda_stream ? (cudaStream_t)cuda_stream : s->own_stream;
  /* The event, not the stream it was recorded on: that stream may be gone
   * (a GStreamer buffer pool's, say). */
  if (s->queued_pending && s->stream != s->queued_on) {
    cudaError_t error = cudaStreamWaitEvent(s->stream, s->queued, 0);
    if (error != cudaSuccess)
      return lhi_cuda_failure(error, "cudaStreamWaitEvent", __FILE__, __LINE__);
  }
  return LH_OK;
}

int lhi_cuda_note_queued(void *state)
{
  CudaState *s = state;
  cudaError_t error = cudaEventRecord(s->queued, s->stream);
  if (error != cudaSuccess)
    return lhi_cuda_failure(error, "cudaEventRecord", __FILE__, __LINE__);
  s->queued_on = s->stream;
  s->queued_pending = true;
  return LH_OK;
}

static int cuda_host_register(void *state, void *memory, size_t bytes)
{
  (void)state;
  cudaError_t error = bytes ? cudaHostRegister(memory, bytes, cudaHostRegisterPortable)
                            : cudaHostUnregister(memory);
  if (error == cudaErrorHostMemoryAlreadyRegistered || error == cudaErrorHostMemoryNotRegistered) {
    (void)cudaGetLastError();
    return lhi_error(LH_ERROR_INVALID_ARGUMENT, "%s: the memory is %s page-locked",
                     bytes ? "lh_host_register" : "lh_host_unregister", bytes ? "already" : "not");
  }
  if (error != cudaSuccess)
    return lhi_cuda_failure(error, bytes ? "cudaHostRegister" : "cudaHostUnregister", __FILE__,
                            __LINE__);
  return LH_OK;
}

static int cuda_host_alloc(void *state, size_t bytes, void **memory)
{
  (void)state;
  /* Portable: pinned for every CUDA context, since the frames may be read in
   * another context than the one current here. */
  cudaError_t error = cudaHostAlloc(memory, bytes, cudaHostAllocPortable);
  if (error != cudaSuccess) {
    *memory = NULL;
    return lhi_cuda_failure(error, "cudaHostAlloc", __FILE__, __LINE__);
  }
  return LH_OK;
}

void lhi_cuda_host_free(void *memory)
{
  cudaError_t error = cudaFreeHost(memory);
  if (error != cudaSuccess)
    (void)cudaGetLastError(); /* nothing a free can report; don't leave it sticky */
}

cudaStream_t lhi_cuda_stream(void *state)
{
  return ((CudaState *)state)->stream;
}

bool lhi_cuda_stream_is_own(void *state)
{
  const CudaState *s = state;
  return s->stream == s->own_stream;
}

void **lhi_cuda_equalize_slot(void *state)
{
  return &((CudaState *)state)->equalize;
}

LhiCudaClock *lhi_cuda_clock(void *state)
{
  return ((CudaState *)state)->clock;
}

static int cuda_device_time(void *state, LhDeviceTime *time)
{
  return lhi_cuda_clock_read(((CudaState *)state)->clock, time);
}

static bool cuda_prefer_sort(void *state, uint64_t pixels, int bit_depth)
{
  /* The histogram's CDF is read in one block after a pass that the sort
   * needs too (the keys), so it is never the slower of the two. */
  return false;
}

/* ------------------------------------------------------------------------ */
/* Planning a batch                                                          */

/* What the kernels need of one job, worked out before anything is queued so
 * that every buffer is sized once per batch. */
typedef struct {
  LhkPixel pixel;
  uint32_t bins;
  LhkImage image;         /* data filled in once the frame's device address is known */
  size_t row_bytes;       /* host frames: bytes of one row of the region */
  size_t device_pitch;    /* host frames: row pitch of the device copy */
  size_t frame_offset;    /* host frames: offset in s->frames and s->staging */
  size_t result_offset;   /* in s->results */
  bool host_pinned;       /* host frame in page-locked memory: copied without staging */
  uint32_t rows_per_band; /* rows of one image (all of them unless the frame is huge) */
} Plan;

bool lhi_cuda_is_pinned_host(const void *pointer)
{
  struct cudaPointerAttributes attributes;
  if (cudaPointerGetAttributes(&attributes, pointer) != cudaSuccess) {
    cudaGetLastError(); /* pageable memory is not an error worth keeping */
    return false;
  }
  return attributes.type == cudaMemoryTypeHost;
}

static bool cuda_claims_frame(void *state, const LhFrame *frame)
{
  (void)state;
  return frame->memory == LH_MEMORY_CUDA || lhi_cuda_is_pinned_host(frame->planes[0]);
}

static void plan_job(const LhiJob *job, Plan *plan)
{
  const LhFrame *frame = &job->frame;
  const LhiFormatInfo *info = lhi_format_info(frame->format);
  memset(plan, 0, sizeof *plan);
  plan->pixel = lhi_cuda_pixel_of(frame->format);
  plan->bins = 1u << job->bit_depth;
  plan->image.stride = frame->strides[0];
  plan->image.width = (uint32_t)frame->width;
  plan->image.height = (uint32_t)frame->height;
  lhi_cuda_luma_word(frame->format, &plan->image.shift, &plan->image.keep, &plan->image.swap);
  plan->image.max_value = plan->bins - 1;
  if (info->r >= 0) {
    plan->image.weights[info->r] = job->weights.kr;
    plan->image.weights[info->g] = job->weights.kg;
    plan->image.weights[info->b] = job->weights.kb;
    plan->image.luma_one = job->weights.one;
    plan->image.swap_bytes = lhi_format_big_endian_words(frame->format);
  }
  /* v210: whole groups of 6 (a "pixel" of its table is a group) */
  plan->row_bytes = info->chroma == LHI_CHROMA_V210
                        ? lhi_format_row_bytes(info, frame->width)
                        : (size_t)frame->width * (size_t)info->pixel_bytes;
  plan->device_pitch = lhi_cuda_align_up(plan->row_bytes, 16);
  if (frame->memory == LH_MEMORY_HOST)
    plan->host_pinned = lhi_cuda_is_pinned_host(frame->planes[0]);
  /* The kernels count up to 2^31 units (pixels and row ends) per image in
   * 32-bit counters: huge frames go in bands of rows. */
  uint64_t rows = ((1ull << 31) - 1) / ((uint64_t)frame->width + 1);
  plan->rows_per_band = rows < (uint64_t)frame->height ? (uint32_t)rows : (uint32_t)frame->height;
}

static bool is_banded(const Plan *plan)
{
  return plan->rows_per_band < plan->image.height;
}

/* Jobs first .. first+count-1 form one launch: same pixel layout and bins,
 * at most LHK_MAX_IMAGES of them, and a banded frame alone. */
static size_t group_size(const Plan *plans, size_t first, size_t n)
{
  if (is_banded(&plans[first]))
    return 1;
  size_t count = 1;
  while (first + count < n && count < LHK_MAX_IMAGES) {
    const Plan *p = &plans[first + count];
    if (p->pixel != plans[first].pixel || p->bins != plans[first].bins || is_banded(p))
      break;
    count++;
  }
  return count;
}

/* ------------------------------------------------------------------------ */
/* Running a batch                                                           */

/* Host frames go to the device buffer through the pinned staging buffer
 * (rows packed at a 16-byte pitch, so that the kernels read them with vector
 * loads), or straight from the caller's memory when it is pinned.  First the
 * host's copies into the staging buffer, all of them, so that the device's
 * copies after them are queued back to back and timed without host work. */
static void stage_host_frames(CudaState *s, const LhiJob *jobs, const Plan *plans, size_t n)
{
  for (size_t j = 0; j < n; j++) {
    const LhFrame *frame = &jobs[j].frame;
    const Plan *plan = &plans[j];
    if (frame->memory != LH_MEMORY_HOST || plan->host_pinned)
      continue;
    uint8_t *staged = (uint8_t *)s->staging.data + plan->frame_offset;
    const uint8_t *row = frame->planes[0];
    for (int y = 0; y < frame->height; y++, row += frame->strides[0])
      memcpy(staged + (size_t)y * plan->device_pitch, row, plan->row_bytes);
  }
}

/* Then the device's copies: each pinned frame's, and one for the staged. */
static int upload_host_frames(CudaState *s, const LhiJob *jobs, const Plan *plans, size_t n,
                              size_t staged_bytes, uint64_t *frame_bytes)
{
  *frame_bytes = 0;
  for (size_t j = 0; j < n; j++) {
    const LhFrame *frame = &jobs[j].frame;
    const Plan *plan = &plans[j];
    if (frame->memory != LH_MEMORY_HOST)
      continue;
    *frame_bytes += (uint64_t)plan->row_bytes * (uint64_t)frame->height;
    if (!plan->host_pinned)
      continue;
    uint8_t *device = (uint8_t *)s->frames.data + plan->frame_offset;
    LHI_CUDA_CHECK(cudaMemcpy2DAsync(device, plan->device_pitch, frame->planes[0],
                                     frame->strides[0], plan->row_bytes, (size_t)frame->height,
                                     cudaMemcpyHostToDevice, s->stream));
  }
  if (staged_bytes > 0)
    LHI_CUDA_CHECK(cudaMemcpyAsync(s->frames.data, s->staging.data, staged_bytes,
                                   cudaMemcpyHostToDevice, s->stream));
  return LH_OK;
}

static void fill_finish(CudaState *s, const LhiJob *job, const Plan *plan, int slot,
                        LhkFinish *finish)
{
  memset(finish, 0, sizeof *finish);
  finish->histogram = (unsigned long long *)s->histograms.data + (size_t)slot * plan->bins;
  finish->result = (uint8_t *)s->results.data + plan->result_offset;
  finish->bins = plan->bins;
  lhi_range_limits(job->bit_depth, job->range, &finish->black, &finish->white);
  finish->n_ranks = job->n_ranks;
  for (int k = 0; k < job->n_ranks; k++)
    finish->ranks[k] = job->ranks[k];
}

/* Queues one group: its histogram launch(es), then its finishing. */
static int run_group(CudaState *s, const LhiJob *jobs, Plan *plans, size_t count)
{
  const Plan *first = &plans[0];
  LhkFinish finish[LHK_MAX_IMAGES];
  for (size_t k = 0; k < count; k++)
    fill_finish(s, &jobs[k], &plans[k], (int)k, &finish[k]);

  if (count == 1 && first->bins <= lhk_histogram_finish_max_bins(&s->device) && !is_banded(first)) {
    LHI_CUDA_CHECK(lhk_histogram_finish(&s->device, first->pixel, &first->image, &finish[0],
                                        s->scratch.data, s->stream));
    return LH_OK;
  }
  if (is_banded(first)) {
    LhkImage band = first->image;
    for (uint32_t y = 0; y < first->image.height; y += first->rows_per_band) {
      band.data = (const uint8_t *)first->image.data + (size_t)y * first->image.stride;
      band.height = first->image.height - y < first->rows_per_band ? first->image.height - y
                                                                   : first->rows_per_band;
      LHI_CUDA_CHECK(lhk_histogram(&s->device, first->pixel, first->bins, &band, 1,
                                   s->histograms.data, 1, s->scratch.data, s->stream));
    }
  } else {
    LhkImage images[LHK_MAX_IMAGES];
    for (size_t k = 0; k < count; k++) {
      images[k] = plans[k].image;
      images[k].slot = (uint32_t)k;
    }
    LHI_CUDA_CHECK(lhk_histogram(&s->device, first->pixel, first->bins, images, (int)count,
                                 s->histograms.data, (int)count, s->scratch.data, s->stream));
  }
  LHI_CUDA_CHECK(lhk_finish(finish, (int)count, s->stream));
  return LH_OK;
}

/* Percentiles by sorting: the values the CDF put in the result block are
 * overwritten by those of the sorted keys (the two are equal by definition,
 * and the tests hold them to it). */
static int run_sorts(CudaState *s, const LhiJob *jobs, const Plan *plans, size_t count)
{
  for (size_t k = 0; k < count; k++) {
    if (!jobs[k].use_sort)
      continue;
    uint32_t *values = (uint32_t *)((uint8_t *)s->results.data + plans[k].result_offset +
                                    offsetof(LhkResult, values));
    LHI_CUDA_CHECK(
        lhk_sort_percentiles(&s->device, plans[k].pixel, &plans[k].image, jobs[k].bit_depth,
                             (const unsigned long long *)jobs[k].ranks, jobs[k].n_ranks, values,
                             s->sort_scratch.data, s->sort_scratch.size, s->stream));
  }
  return LH_OK;
}

static void unpack_result(const uint8_t *block, LhiJob *job, uint32_t bins)
{
  const LhkResult *r = (const LhkResult *)block;
  LhiMoments *m = &job->moments;
  m->count = r->count;
  m->sum = r->sum;
  m->sum_squares = ((unsigned __int128)r->sum_squares_hi << 64) | r->sum_squares_lo;
  m->min = r->min;
  m->max = r->max;
  m->clipped_low = r->clipped_low;
  m->clipped_high = r->clipped_high;
  m->below_legal = r->below_legal;
  m->above_legal = r->above_legal;
  for (int k = 0; k < job->n_ranks; k++)
    job->values[k] = r->values[k];
  memcpy(job->histogram, block + LHK_RESULT_HEADER_BYTES, (size_t)bins * sizeof(uint64_t));
}

/* Clears what an earlier failed batch may have left behind. */
static int reset_after_error(CudaState *s)
{
  if (!s->needs_reset)
    return LH_OK;
  LHI_CUDA_CHECK(cudaStreamSynchronize(s->stream));
  if (s->histograms.data)
    LHI_CUDA_CHECK(cudaMemsetAsync(s->histograms.data, 0, s->histograms.size, s->stream));
  if (s->scratch.data)
    LHI_CUDA_CHECK(cudaMemsetAsync(s->scratch.data, 0, s->scratch.size, s->stream));
  s->needs_reset = false;
  return LH_OK;
}

static int analyze_planned(CudaState *s, LhiJob *jobs, Plan *plans, size_t n)
{
  /* Sizes of everything the batch needs, then the buffers, then the work. */
  size_t staged = 0, uploaded = 0, results = 0, histograms = 0, scratch = 0;
  /* Staged frames first, so that one copy moves them all; frames in the
   * caller's pinned memory get device room after them. */
  for (int pinned = 0; pinned <= 1; pinned++) {
    for (size_t j = 0; j < n; j++) {
      Plan *plan = &plans[j];
      if (jobs[j].frame.memory != LH_MEMORY_HOST || plan->host_pinned != (pinned == 1))
        continue;
      plan->frame_offset = uploaded;
      uploaded = lhi_cuda_align_up(uploaded + plan->device_pitch * plan->image.height, ALIGNMENT);
    }
    if (!pinned)
      staged = uploaded;
  }
  for (size_t j = 0; j < n; j++) {
    plans[j].result_offset = results;
    results = lhi_cuda_align_up(results + lhk_result_bytes(plans[j].bins), ALIGNMENT);
  }
  size_t sort_bytes = 0;
  for (size_t j = 0; j < n; j++) {
    if (!jobs[j].use_sort)
      continue;
    uint64_t keys = (uint64_t)jobs[j].frame.width * (uint64_t)jobs[j].frame.height;
    if (keys > LHK_SORT_MAX_KEYS)
      return lhi_error(LH_ERROR_TOO_LARGE,
                       "%dx%d frame: percentiles by sorting take at most %u pixels; use the "
                       "histogram method",
                       jobs[j].frame.width, jobs[j].frame.height, LHK_SORT_MAX_KEYS);
    size_t bytes = lhk_sort_scratch_bytes(keys);
    sort_bytes = bytes > sort_bytes ? bytes : sort_bytes;
  }
  for (size_t j = 0; j < n;) {
    size_t count = group_size(plans, j, n);
    size_t h = count * plans[j].bins * sizeof(unsigned long long);
    size_t sc = lhk_histogram_scratch_bytes(plans[j].bins, (int)count);
    histograms = h > histograms ? h : histograms;
    scratch = sc > scratch ? sc : scratch;
    j += count;
  }
  int status = LH_OK;
  if ((status = lhi_cuda_device_reserve(&s->frames, uploaded, false, s->stream)) < 0 ||
      (status = lhi_cuda_host_reserve(&s->staging, staged)) < 0 ||
      (status = lhi_cuda_device_reserve(&s->histograms, histograms, true, s->stream)) < 0 ||
      (status = lhi_cuda_device_reserve(&s->scratch, scratch, true, s->stream)) < 0 ||
      (status = lhi_cuda_device_reserve(&s->results, results, false, s->stream)) < 0 ||
      (status = lhi_cuda_host_reserve(&s->results_host, results)) < 0 ||
      (status = lhi_cuda_device_reserve(&s->sort_scratch, sort_bytes, false, s->stream)) < 0)
    return status;

  for (size_t j = 0; j < n; j++) {
    if (jobs[j].frame.memory == LH_MEMORY_HOST) {
      plans[j].image.data = (const uint8_t *)s->frames.data + plans[j].frame_offset;
      plans[j].image.stride = plans[j].device_pitch;
    } else {
      plans[j].image.data = jobs[j].frame.planes[0];
    }
  }
  stage_host_frames(s, jobs, plans, n);
  if ((status = lhi_cuda_clock_start(s->clock, s->stream)) < 0)
    return status;
  uint64_t frame_bytes = 0;
  if (uploaded > 0 &&
      ((status = upload_host_frames(s, jobs, plans, n, staged, &frame_bytes)) < 0 ||
       (status = lhi_cuda_clock_mark(s->clock, LHI_SPAN_TRANSFER, frame_bytes, s->stream)) < 0))
    return status;
  for (size_t j = 0; j < n;) {
    size_t count = group_size(plans, j, n);
    if ((status = run_group(s, &jobs[j], &plans[j], count)) < 0 ||
        (status = run_sorts(s, &jobs[j], &plans[j], count)) < 0)
      return status;
    j += count;
  }
  LHI_CUDA_CHECK(cudaMemcpyAsync(s->results_host.data, s->results.data, results,
                                 cudaMemcpyDeviceToHost, s->stream));
  if ((status = lhi_cuda_clock_mark(s->clock, LHI_SPAN_COMPUTE, 0, s->stream)) < 0)
    return status;
  LHI_CUDA_CHECK(cudaStreamSynchronize(s->stream));
  for (size_t j = 0; j < n; j++)
    unpack_result((const uint8_t *)s->results_host.data + plans[j].result_offset, &jobs[j],
                  plans[j].bins);
  return LH_OK;
}

static int cuda_analyze(void *state, LhiJob *jobs, size_t n_jobs)
{
  CudaState *s = state;
  int status = reset_after_error(s);
  if (status < 0)
    return status;
  Plan *plans = calloc(n_jobs, sizeof *plans);
  if (!plans)
    return lhi_error(LH_ERROR_NO_MEMORY, "out of memory for %zu frame plans", n_jobs);
  for (size_t j = 0; j < n_jobs && status == LH_OK; j++) {
    if ((status = lhi_cuda_frame_check(&s->place, &jobs[j].frame, "the frame")) < 0)
      break;
    plan_job(&jobs[j], &plans[j]);
    if (plans[j].rows_per_band == 0)
      status = lhi_error(LH_ERROR_TOO_LARGE, "rows of %d pixels are too wide for the CUDA backend",
                         jobs[j].frame.width);
  }
  if (status == LH_OK)
    status = analyze_planned(s, jobs, plans, n_jobs);
  if (status < 0) {
    lhi_cuda_clock_abandon(s->clock);
    /* Let queued work end before the staging buffers can be reused. */
    cudaStreamSynchronize(s->stream);
    s->needs_reset = true;
  } else {
    lhi_cuda_clock_end(s->clock);
  }
  free(plans);
  return status;
}

const LhiBackend lhi_cuda_backend = {
    .name = "cuda",
    .kind = LH_BACKEND_CUDA,
    .open = cuda_open,
    .close = cuda_close,
    .set_stream = cuda_set_stream,
    .enter = cuda_enter,
    .leave = cuda_leave,
    .device = cuda_device,
    .host_register = cuda_host_register,
    .host_alloc = cuda_host_alloc,
    .claims_frame = cuda_claims_frame,
    .prefer_sort = cuda_prefer_sort,
    .analyze = cuda_analyze,
    .equalize = lhi_cuda_equalize,
    .overlay = lhi_cuda_overlay,
    .device_time = cuda_device_time,
    .difference = lhi_cuda_difference,
};
