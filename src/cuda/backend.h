/* cuda/backend.h: what the CUDA backend's state offers the other host files
 * of that backend (cuda/equalize.c), and what they offer it back. */
#ifndef LH_CUDA_BACKEND_H
#define LH_CUDA_BACKEND_H

#include <cuda_runtime_api.h>

#include "lh-kernels.h"
#include "lh-private.h"

/* Reports a failed CUDA call (file:line, the call, CUDA's words) as
 * LH_ERROR_NO_MEMORY or LH_ERROR_CUDA, saying when the context is lost. */
int lhi_cuda_failure(cudaError_t error, const char *call, const char *file, int line);

#define LHI_CUDA_CHECK(call)                                                                       \
  do {                                                                                             \
    cudaError_t error_ = (call);                                                                   \
    if (error_ != cudaSuccess)                                                                     \
      return lhi_cuda_failure(error_, #call, __FILE__, __LINE__);                                  \
  } while (0)

/* Device or pinned host memory, grown when too small and otherwise reused. */
typedef struct {
  void *data;
  size_t size;
} LhiCudaBuffer;

size_t lhi_cuda_align_up(size_t n, size_t alignment);

/* At least size bytes of device memory; zeroed on stream when new if zero. */
int lhi_cuda_device_reserve(LhiCudaBuffer *buffer, size_t size, bool zero, cudaStream_t stream);

/* At least size bytes of pinned host memory. */
int lhi_cuda_host_reserve(LhiCudaBuffer *buffer, size_t size);

void lhi_cuda_release(LhiCudaBuffer *buffer, bool host);

/* How the kernels read a format's plane 0 (the Y plane of YUV formats). */
LhkPixel lhi_cuda_pixel_of(LhFormat format);

/* The Y16 view of a format's words: LhkImage's shift, keep and swap. */
void lhi_cuda_luma_word(LhFormat format, uint32_t *shift, uint32_t *keep, uint32_t *swap);

/* The stream the backend's work goes on now (its own or the caller's). */
cudaStream_t lhi_cuda_stream(void *state);

/* Is that the backend's own stream, which no caller can wait for? */
bool lhi_cuda_stream_is_own(void *state);

/* A call returns with work still queued on the stream: the next call on
 * another stream waits for it first (lh_context_set_stream). */
int lhi_cuda_note_queued(void *state);

/* Is host memory page-locked (cudaHostAlloc, lh_host_register), so that the
 * DMA engines can copy it without staging? */
bool lhi_cuda_is_pinned_host(const void *pointer);

/* A pointer in the state that cuda/equalize.c owns: NULL at first, given to
 * lhi_cuda_equalize_free when the backend closes. */
void **lhi_cuda_equalize_slot(void *state);

/* ------------------------------------------------------------------------ */
/* The device time of a context's calls (cuda/clock.c)                      */

/* What the interval that ends at a mark was spent on. */
typedef enum {
  LHI_SPAN_TRANSFER, /* frames copied between host and device */
  LHI_SPAN_COMPUTE,  /* kernels and the small copies around them */
} LhiSpan;

/* Marks one call may make. */
#define LHI_CLOCK_MARKS 4
/* Calls whose events may be in flight: a call that finds this many waits for
 * the oldest, so that calls which do not synchronize stay asynchronous. */
#define LHI_CLOCK_CALLS 8

typedef struct LhiCudaClock LhiCudaClock;

/* A clock with nothing measured, or NULL when memory is short; its events
 * are made on first use, on the device current then. */
LhiCudaClock *lhi_cuda_clock_new(void);
void lhi_cuda_clock_free(LhiCudaClock *clock);

/* Begins a call's measure: counts the earlier calls whose work is done, then
 * records the start on stream.  Comes right before the call's first queued
 * operation, after any host copy into pinned memory. */
int lhi_cuda_clock_start(LhiCudaClock *clock, cudaStream_t stream);

/* Records on stream the end of an interval spent on span, which began at the
 * start or at the previous mark; bytes: the frames' bytes a transfer moved
 * (0 for compute). */
int lhi_cuda_clock_mark(LhiCudaClock *clock, LhiSpan span, uint64_t bytes, cudaStream_t stream);

/* The call succeeded: it is counted once its events are complete. */
void lhi_cuda_clock_end(LhiCudaClock *clock);

/* The call failed: what it recorded is dropped.  Nothing to do when it did
 * not start. */
void lhi_cuda_clock_abandon(LhiCudaClock *clock);

/* Waits for every ended call's events and gives the totals. */
int lhi_cuda_clock_read(LhiCudaClock *clock, LhDeviceTime *time);

/* The clock of the backend's state (lhi_cuda_stream's state). */
LhiCudaClock *lhi_cuda_clock(void *state);

/* cuda/equalize.c: equalization and overlays, and the release of their
 * buffers. */
int lhi_cuda_equalize(void *state, LhiEqualizeJob *job);
int lhi_cuda_overlay(void *state, const LhiOverlayJob *job);
void lhi_cuda_equalize_free(void *data);

/* cuda/difference.c: the frame difference (lh_difference_push). */
int lhi_cuda_difference(void *state, LhDifference *difference, LhiDifferenceJob *job);

/* ------------------------------------------------------------------------ */
/* Where a context's work runs (cuda/place.c)                               */

/* The CUDA context (a CUcontext) current when the backend opened, and its
 * device: every call of the backend runs there. */
typedef struct {
  void *context;
  int device;
} LhiCudaPlace;

/* The place of the calling thread's current CUDA context, which the
 * runtime has made. */
int lhi_cuda_place_here(LhiCudaPlace *place);

/* Makes place's CUDA context current for a call, if another is (pushed
 * then: lhi_cuda_place_leave(true) pops it when the call ends). */
int lhi_cuda_place_enter(const LhiCudaPlace *place, bool *pushed);
void lhi_cuda_place_leave(bool pushed);

/* Where the backend's state works (its CUDA context and device). */
const LhiCudaPlace *lhi_cuda_place(void *state);

/* A frame in CUDA memory must be in place's device's: another device's is
 * refused (LH_ERROR_INVALID_ARGUMENT), what naming it in the message. */
int lhi_cuda_frame_check(const LhiCudaPlace *place, const LhFrame *frame, const char *what);

#endif /* LH_CUDA_BACKEND_H */
