/* cuda/common.c: what the CUDA backend's host files share: the report of a
 * failed CUDA call, device and pinned buffers that grow and are reused, and
 * the kernels' name for each pixel layout. */
#include <stdbool.h>

#include "cuda/backend.h"

/* Buffers grow by at least this factor, so that a stream of slowly growing
 * frames does not reallocate each time. */
#define GROWTH_NUM 5
#define GROWTH_DEN 4
/* Every buffer's size is a multiple of this (whole cache lines, and room for
 * the 256-byte offsets of frames and result blocks inside it). */
#define BUFFER_ALIGNMENT 256

/* Errors after which CUDA documents the context as corrupt: every later call
 * in this process fails, whatever lumahist does. */
static bool is_sticky(cudaError_t error)
{
  switch (error) {
  case cudaErrorIllegalAddress:
  case cudaErrorLaunchFailure:
  case cudaErrorHardwareStackError:
  case cudaErrorIllegalInstruction:
  case cudaErrorMisalignedAddress:
  case cudaErrorInvalidAddressSpace:
  case cudaErrorInvalidPc:
  case cudaErrorAssert:
  case cudaErrorECCUncorrectable:
  case cudaErrorDevicesUnavailable:
    return true;
  default:
    return false;
  }
}

int lhi_cuda_failure(cudaError_t error, const char *call, const char *file, int line)
{
  /* A failed call stays the runtime's last error, which the next launch
   * check (cudaGetLastError) would report again: read it off, so that one
   * batch out of device memory does not fail every later one.  A sticky
   * error (a fault) is not cleared by this and keeps being reported. */
  (void)cudaGetLastError();
  int status = error == cudaErrorMemoryAllocation ? LH_ERROR_NO_MEMORY : LH_ERROR_CUDA;
  return lhi_error(status, "%s:%d: %s: %s (%s)%s", file, line, call, cudaGetErrorString(error),
                   cudaGetErrorName(error),
                   is_sticky(error) ? "; the CUDA context is no longer usable in this process"
                                    : "");
}

size_t lhi_cuda_align_up(size_t n, size_t alignment)
{
  return (n + alignment - 1) / alignment * alignment;
}

static size_t grown(const LhiCudaBuffer *buffer, size_t size)
{
  size_t bigger = buffer->size / GROWTH_DEN * GROWTH_NUM;
  return lhi_cuda_align_up(size > bigger ? size : bigger, BUFFER_ALIGNMENT);
}

int lhi_cuda_device_reserve(LhiCudaBuffer *buffer, size_t size, bool zero, cudaStream_t stream)
{
  if (size <= buffer->size)
    return LH_OK;
  size_t new_size = grown(buffer, size);
  if (buffer->data) {
    LHI_CUDA_CHECK(cudaFree(buffer->data));
    buffer->data = NULL;
    buffer->size = 0;
  }
  LHI_CUDA_CHECK(cudaMalloc(&buffer->data, new_size));
  buffer->size = new_size;
  if (zero)
    LHI_CUDA_CHECK(cudaMemsetAsync(buffer->data, 0, new_size, stream));
  return LH_OK;
}

int lhi_cuda_host_reserve(LhiCudaBuffer *buffer, size_t size)
{
  if (size <= buffer->size)
    return LH_OK;
  size_t new_size = grown(buffer, size);
  if (buffer->data) {
    LHI_CUDA_CHECK(cudaFreeHost(buffer->data));
    buffer->data = NULL;
    buffer->size = 0;
  }
  LHI_CUDA_CHECK(cudaMallocHost(&buffer->data, new_size));
  buffer->size = new_size;
  return LH_OK;
}

void lhi_cuda_release(LhiCudaBuffer *buffer, bool host)
{
  if (buffer->data) {
    if (host)
      cudaFreeHost(buffer->data);
    else
      cudaFree(buffer->data);
  }
  buffer->data = NULL;
  buffer->size = 0;
}

LhkPixel lhi_cuda_pixel_of(LhFormat format)
{
  const LhiFormatInfo *info = lhi_format_info(format);
  if (info && info->chroma == LHI_CHROMA_V210)
    return LHK_PIXEL_V210;
  if (info && info->r < 0 && (info->sample_bytes == 2 || info->chroma == LHI_CHROMA_PACKED))
    return LHK_PIXEL_Y16; /* 16-bit Y, and packed 4:2:2 read as 16-bit words */
  switch (format) {
  case LH_FORMAT_RGB:
  case LH_FORMAT_BGR:
    return LHK_PIXEL_RGB8;
  case LH_FORMAT_RGBA:
  case LH_FORMAT_BGRA:
  case LH_FORMAT_RGBX:
  case LH_FORMAT_BGRX:
    return LHK_PIXEL_RGBA8;
  case LH_FORMAT_RGB16:
    return LHK_PIXEL_RGB16;
  case LH_FORMAT_RGBA16:
    return LHK_PIXEL_RGBA16;
  /* R'G'B' 10 and 16 bits: weights and swap_bytes say the order */
  case LH_FORMAT_RGB10A2_LE:
  case LH_FORMAT_BGR10A2_LE:
  case LH_FORMAT_R210:
    return LHK_PIXEL_RGB10;
  case LH_FORMAT_BGRA16:
    return LHK_PIXEL_RGBA16;
  default: /* GRAY8 and the Y plane of 8-bit planar YUV */
    return LHK_PIXEL_Y8;
  }
}

void lhi_cuda_luma_word(LhFormat format, uint32_t *shift, uint32_t *keep, uint32_t *swap)
{
  const LhiFormatInfo *info = lhi_format_info(format);
  uint32_t mask;
  lhi_format_luma_word(info, &mask, shift);
  *keep = ~mask & 0xffffu;
  *swap = info->big_endian ? 1 : 0;
}
