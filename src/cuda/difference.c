/* cuda/difference.c: the frame difference on the CUDA backend: the previous
 * frame's luma kept in device memory, device frames read where they are,
 * host frames copied to the device first, the kernel of difference.cu on
 * the backend's stream, and only the 64-bit sum copied back. */
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "cuda/backend.h"
#include "lh-kernels.h"

/* The sum's room at the start of the device block, before the keys (which
 * then start at a 256-byte boundary, as cudaMalloc's blocks do). */
#define SUM_BYTES 256

typedef struct {
  void *device;        /* the sum, then the previous frame's keys (width x height) */
  LhiCudaBuffer frame; /* device copy of host frames' plane 0 */
  int sm_count;
} CudaDifference;

static void cuda_difference_free(void *data)
{
  CudaDifference *c = data;
  if (!c)
    return;
  /* cudaFree waits for the work that uses the memory. */
  cudaFree(c->device);
  lhi_cuda_release(&c->frame, false);
  free(c);
}

static const LhiDifferenceOps cuda_difference_ops = {.free = cuda_difference_free};

static int cuda_difference_new(const LhiDifferenceJob *job, CudaDifference **out)
{
  const LhFrame *frame = &job->frame;
  const size_t keys = (size_t)frame->width * (size_t)frame->height *
                      (size_t)lhi_difference_key_bytes(lhi_format_info(frame->format));
  CudaDifference *c = calloc(1, sizeof *c);
  if (!c)
    return lhi_error(LH_ERROR_NO_MEMORY, "out of memory for a frame difference state");
  int device = 0;
  cudaError_t error = cudaGetDevice(&device);
  if (error == cudaSuccess)
    error = cudaDeviceGetAttribute(&c->sm_count, cudaDevAttrMultiProcessorCount, device);
  if (error == cudaSuccess)
    error = cudaMalloc(&c->device, SUM_BYTES + keys);
  if (error != cudaSuccess) {
    cuda_difference_free(c);
    return lhi_cuda_failure(error, "the previous frame's luma", __FILE__, __LINE__);
  }
  *out = c;
  return LH_OK;
}

/* Queues the work of one push; the clock is started and marked here. */
static int queue_difference(void *state, CudaDifference *c, const LhiDifferenceJob *job,
                            unsigned long long *sum)
{
  const LhFrame *frame = &job->frame;
  const LhiFormatInfo *info = lhi_format_info(frame->format);
  cudaStream_t stream = lhi_cuda_stream(state);
  LhiCudaClock *clock = lhi_cuda_clock(state);
  LhkDifference k;
  memset(&k, 0, sizeof k);
  k.data = frame->planes[0];
  k.stride = frame->strides[0];
  k.width = (uint32_t)frame->width;
  k.height = (uint32_t)frame->height;
  if (info->chroma == LHI_CHROMA_V210) {
    k.keys = LHK_KEYS_V210;
  } else if (info->sample_bytes == 2) {
    k.keys = LHK_KEYS_Y16;
    k.shift = (uint32_t)info->luma_shift;
    k.swap = info->big_endian ? 1 : 0;
    k.max_value = (1u << job->bit_depth) - 1;
  } else {
    k.keys = LHK_KEYS_Y8;
    k.step = (uint32_t)info->pixel_bytes;
    k.offset = (uint32_t)info->luma_offset;
  }
  k.previous = (uint8_t *)c->device + SUM_BYTES;
  k.compare = job->compare;

  int status = LH_OK;
  if (frame->memory == LH_MEMORY_HOST) {
    /* Plane 0 only, rows at a 16-byte pitch; from pageable memory the copy
     * returns once the source is read, so the caller may reuse it then. */
    const size_t row_bytes = lhi_format_row_bytes(info, frame->width);
    const size_t pitch = lhi_cuda_align_up(row_bytes, 16);
    if ((status = lhi_cuda_device_reserve(&c->frame, pitch * (size_t)frame->height, false,
                                          stream)) < 0 ||
        (status = lhi_cuda_clock_start(clock, stream)) < 0)
      return status;
    LHI_CUDA_CHECK(cudaMemcpy2DAsync(c->frame.data, pitch, frame->planes[0], frame->strides[0],
                                     row_bytes, (size_t)frame->height, cudaMemcpyHostToDevice,
                                     stream));
    if ((status = lhi_cuda_clock_mark(clock, LHI_SPAN_TRANSFER,
                                      (uint64_t)row_bytes * (uint64_t)frame->height, stream)) < 0)
      return status;
    k.data = c->frame.data;
    k.stride = pitch;
  } else if ((status = lhi_cuda_clock_start(clock, stream)) < 0) {
    return status;
  }
  LHI_CUDA_CHECK(lhk_difference(&k, c->sm_count, (unsigned long long *)c->device, stream));
  LHI_CUDA_CHECK(cudaMemcpyAsync(sum, c->device, sizeof *sum, cudaMemcpyDeviceToHost, stream));
  return lhi_cuda_clock_mark(clock, LHI_SPAN_COMPUTE, 0, stream);
}

int lhi_cuda_difference(void *state, LhDifference *difference, LhiDifferenceJob *job)
{
  int checked = lhi_cuda_frame_check(lhi_cuda_place(state), &job->frame, "the frame");
  if (checked < 0)
    return checked;
  CudaDifference *c = difference->data;
  if (!c) {
    int status = cuda_difference_new(job, &c);
    if (status < 0)
      return status;
    lhi_difference_attach(difference, &cuda_difference_ops, c);
  }
  cudaStream_t stream = lhi_cuda_stream(state);
  unsigned long long sum = 0;
  int status = queue_difference(state, c, job, &sum);
  if (status == LH_OK) {
    cudaError_t error = cudaStreamSynchronize(stream);
    if (error != cudaSuccess)
      status = lhi_cuda_failure(error, "cudaStreamSynchronize", __FILE__, __LINE__);
  }
  if (status < 0) {
    lhi_cuda_clock_abandon(lhi_cuda_clock(state));
    /* Queued work ends before the sum's host memory goes with this call. */
    cudaStreamSynchronize(stream);
    return status;
  }
  lhi_cuda_clock_end(lhi_cuda_clock(state));
  job->sum = sum;
  return LH_OK;
}
