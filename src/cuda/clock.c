/* cuda/clock.c: the device time of a CUDA context's calls, from events
 * recorded on its stream around the copies of frames and the kernels, counted
 * once they are complete so that a call which does not wait for its work is
 * not made to. */
#include <stdlib.h>

#include "cuda/backend.h"

typedef struct {
  cudaEvent_t start;
  cudaEvent_t marks[LHI_CLOCK_MARKS];
  LhiSpan spans[LHI_CLOCK_MARKS]; /* of the interval ending at each mark */
  int n_marks;
  uint64_t transfer_bytes;
} ClockCall;

/* Ended calls wait in a ring, oldest first, until their last event is
 * complete; the slot after them holds the call being recorded. */
struct LhiCudaClock {
  ClockCall calls[LHI_CLOCK_CALLS];
  int oldest;
  int in_flight;  /* ended, not yet counted */
  bool recording; /* the slot after them was started */
  LhDeviceTime total;
};

LhiCudaClock *lhi_cuda_clock_new(void)
{
  return calloc(1, sizeof(LhiCudaClock));
}

void lhi_cuda_clock_free(LhiCudaClock *clock)
{
  if (!clock)
    return;
  /* Events still pending are released by CUDA once they complete. */
  for (int c = 0; c < LHI_CLOCK_CALLS; c++) {
    ClockCall *call = &clock->calls[c];
    if (call->start)
      cudaEventDestroy(call->start);
    for (int m = 0; m < LHI_CLOCK_MARKS; m++)
      if (call->marks[m])
        cudaEventDestroy(call->marks[m]);
  }
  free(clock);
}

static ClockCall *oldest_call(LhiCudaClock *clock)
{
  return &clock->calls[clock->oldest];
}

static cudaEvent_t last_event(const ClockCall *call)
{
  return call->marks[call->n_marks - 1];
}

static void drop_oldest(LhiCudaClock *clock)
{
  clock->oldest = (clock->oldest + 1) % LHI_CLOCK_CALLS;
  clock->in_flight--;
}

/* Adds the oldest call, whose events are complete, to the totals.  It leaves
 * the ring even when CUDA cannot time it, so that one bad call does not stop
 * every later one from being counted. */
static int count_oldest(LhiCudaClock *clock)
{
  ClockCall *call = oldest_call(clock);
  double spans[2] = {0, 0};
  cudaEvent_t from = call->start;
  for (int m = 0; m < call->n_marks; m++) {
    float ms = 0;
    cudaError_t error = cudaEventElapsedTime(&ms, from, call->marks[m]);
    if (error != cudaSuccess) {
      drop_oldest(clock);
      return lhi_cuda_failure(error, "cudaEventElapsedTime", __FILE__, __LINE__);
    }
    spans[call->spans[m]] += ms / 1000.0;
    from = call->marks[m];
  }
  clock->total.transfer_s += spans[LHI_SPAN_TRANSFER];
  clock->total.compute_s += spans[LHI_SPAN_COMPUTE];
  clock->total.transfer_bytes += call->transfer_bytes;
  clock->total.calls++;
  drop_oldest(clock);
  return LH_OK;
}

/* Counts the calls that are done, oldest first, up to the first that is not:
 * later calls on the same stream cannot be done before it, and those on
 * another stream wait for a later look. */
static int count_done(LhiCudaClock *clock)
{
  while (clock->in_flight > 0) {
    cudaError_t error = cudaEventQuery(last_event(oldest_call(clock)));
    if (error == cudaErrorNotReady) {
      /* Not a failure: kept from the next launch's check of the last error. */
      (void)cudaGetLastError();
      return LH_OK;
    }
    if (error != cudaSuccess) {
      drop_oldest(clock);
      return lhi_cuda_failure(error, "cudaEventQuery", __FILE__, __LINE__);
    }
    int status = count_oldest(clock);
    if (status < 0)
      return status;
  }
  return LH_OK;
}

static int wait_and_count_oldest(LhiCudaClock *clock)
{
  cudaError_t error = cudaEventSynchronize(last_event(oldest_call(clock)));
  if (error != cudaSuccess) {
    drop_oldest(clock);
    return lhi_cuda_failure(error, "cudaEventSynchronize", __FILE__, __LINE__);
  }
  return count_oldest(clock);
}

static int make_event(cudaEvent_t *event)
{
  if (!*event)
    LHI_CUDA_CHECK(cudaEventCreate(event));
  return LH_OK;
}

int lhi_cuda_clock_start(LhiCudaClock *clock, cudaStream_t stream)
{
  /* A call left open would be a bug of the caller; its slot is reused. */
  clock->recording = false;
  int status = count_done(clock);
  if (status == LH_OK && clock->in_flight == LHI_CLOCK_CALLS)
    status = wait_and_count_oldest(clock);
  if (status < 0)
    return status;

  ClockCall *call = &clock->calls[(clock->oldest + clock->in_flight) % LHI_CLOCK_CALLS];
  if ((status = make_event(&call->start)) < 0)
    return status;
  for (int m = 0; m < LHI_CLOCK_MARKS; m++)
    if ((status = make_event(&call->marks[m])) < 0)
      return status;
  LHI_CUDA_CHECK(cudaEventRecord(call->start, stream));
  call->n_marks = 0;
  call->transfer_bytes = 0;
  clock->recording = true;
  return LH_OK;
}

int lhi_cuda_clock_mark(LhiCudaClock *clock, LhiSpan span, uint64_t bytes, cudaStream_t stream)
{
  ClockCall *call = &clock->calls[(clock->oldest + clock->in_flight) % LHI_CLOCK_CALLS];
  if (!clock->recording || call->n_marks == LHI_CLOCK_MARKS)
    return lhi_error(LH_ERROR_CUDA, "%s:%d: a clock mark %s (a bug of lumahist)", __FILE__,
                     __LINE__, clock->recording ? "past the last" : "outside a call");
  LHI_CUDA_CHECK(cudaEventRecord(call->marks[call->n_marks], stream));
  call->spans[call->n_marks] = span;
  call->n_marks++;
  call->transfer_bytes += bytes;
  return LH_OK;
}

void lhi_cuda_clock_end(LhiCudaClock *clock)
{
  const ClockCall *call = &clock->calls[(clock->oldest + clock->in_flight) % LHI_CLOCK_CALLS];
  if (clock->recording && call->n_marks > 0)
    clock->in_flight++;
  clock->recording = false;
}

void lhi_cuda_clock_abandon(LhiCudaClock *clock)
{
  clock->recording = false;
}

int lhi_cuda_clock_read(LhiCudaClock *clock, LhDeviceTime *time)
{
  while (clock->in_flight > 0) {
    int status = wait_and_count_oldest(clock);
    if (status < 0)
      return status;
  }
  *time = clock->total;
  return LH_OK;
}
