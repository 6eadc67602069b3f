/* nvjpeg-abi-test.c: the declarations of src/io/nvjpeg-api.h against the real
 * nvjpeg.h, where it is installed (GPU hosts): the values of every constant
 * lhio passes, the layout of nvjpegImage_t, and the type of every entry point
 * it looks up, so that a mismatch fails the build of this test instead of
 * corrupting a decode. */
#include <assert.h>
#include <stddef.h>
#include <stdio.h>

#include <nvjpeg.h>

#include "nvjpeg-api.h"

_Static_assert(LHNJ_STATUS_SUCCESS == NVJPEG_STATUS_SUCCESS, "status");
_Static_assert(LHNJ_STATUS_NOT_INITIALIZED == NVJPEG_STATUS_NOT_INITIALIZED, "status");
_Static_assert(LHNJ_STATUS_INVALID_PARAMETER == NVJPEG_STATUS_INVALID_PARAMETER, "status");
_Static_assert(LHNJ_STATUS_BAD_JPEG == NVJPEG_STATUS_BAD_JPEG, "status");
_Static_assert(LHNJ_STATUS_JPEG_NOT_SUPPORTED == NVJPEG_STATUS_JPEG_NOT_SUPPORTED, "status");
_Static_assert(LHNJ_STATUS_ALLOCATOR_FAILURE == NVJPEG_STATUS_ALLOCATOR_FAILURE, "status");
_Static_assert(LHNJ_STATUS_EXECUTION_FAILED == NVJPEG_STATUS_EXECUTION_FAILED, "status");
_Static_assert(LHNJ_STATUS_ARCH_MISMATCH == NVJPEG_STATUS_ARCH_MISMATCH, "status");
_Static_assert(LHNJ_STATUS_INTERNAL_ERROR == NVJPEG_STATUS_INTERNAL_ERROR, "status");
_Static_assert(LHNJ_STATUS_IMPLEMENTATION_NOT_SUPPORTED ==
                   NVJPEG_STATUS_IMPLEMENTATION_NOT_SUPPORTED,
               "status");
_Static_assert(LHNJ_STATUS_INCOMPLETE_BITSTREAM == NVJPEG_STATUS_INCOMPLETE_BITSTREAM, "status");
_Static_assert(LHNJ_BACKEND_DEFAULT == NVJPEG_BACKEND_DEFAULT, "backend");
_Static_assert(LHNJ_BACKEND_HYBRID == NVJPEG_BACKEND_HYBRID, "backend");
_Static_assert(LHNJ_BACKEND_GPU_HYBRID == NVJPEG_BACKEND_GPU_HYBRID, "backend");
_Static_assert(LHNJ_BACKEND_HARDWARE == NVJPEG_BACKEND_HARDWARE, "backend");
_Static_assert(LHNJ_OUTPUT_Y == NVJPEG_OUTPUT_Y, "output format");
_Static_assert(LHNJ_OUTPUT_YUV == NVJPEG_OUTPUT_YUV, "output format");
_Static_assert(LHNJ_CSS_444 == NVJPEG_CSS_444, "chroma subsampling");
_Static_assert(LHNJ_CSS_422 == NVJPEG_CSS_422, "chroma subsampling");
_Static_assert(LHNJ_CSS_420 == NVJPEG_CSS_420, "chroma subsampling");
_Static_assert(LHNJ_CSS_GRAY == NVJPEG_CSS_GRAY, "chroma subsampling");
_Static_assert(sizeof(nvjpegChromaSubsampling_t) == sizeof(int), "enums are passed as int");
_Static_assert(LHNJ_ENCODING_BASELINE_DCT == NVJPEG_ENCODING_BASELINE_DCT, "encoding");
_Static_assert(LHNJ_ENCODING_PROGRESSIVE_DCT_HUFFMAN == NVJPEG_ENCODING_PROGRESSIVE_DCT_HUFFMAN,
               "encoding");
_Static_assert(sizeof(nvjpegJpegEncoding_t) == sizeof(int), "enums are passed as int");
_Static_assert(LHNJ_MAX_COMPONENT == NVJPEG_MAX_COMPONENT, "components");
_Static_assert(sizeof(LhnjImage) == sizeof(nvjpegImage_t), "nvjpegImage_t");
_Static_assert(offsetof(LhnjImage, pitch) == offsetof(nvjpegImage_t, pitch), "nvjpegImage_t");
_Static_assert(sizeof(nvjpegStatus_t) == sizeof(int), "enums are passed as int");
_Static_assert(sizeof(nvjpegBackend_t) == sizeof(int), "enums are passed as int");
_Static_assert(sizeof(nvjpegOutputFormat_t) == sizeof(int), "enums are passed as int");

/* The entry point's type with every opaque handle, enum and cudaStream_t
 * replaced as nvjpeg-api.h declares it: same sizes and classes at the ABI
 * level.  Checked by calling convention rather than by C type identity,
 * which the different handle types would refuse. */
#define SAME_ARITY(real, ours) _Static_assert(sizeof(&real) == sizeof(ours), #real)

int main(void)
{
  LhnjApi api;
  SAME_ARITY(nvjpegCreateEx, api.CreateEx);
  SAME_ARITY(nvjpegDecodeBatched, api.DecodeBatched);
  SAME_ARITY(nvjpegEncodeYUV, api.EncodeYUV);
  SAME_ARITY(nvjpegEncoderParamsSetEncoding, api.EncoderParamsSetEncoding);
  SAME_ARITY(nvjpegEncodeRetrieveBitstream, api.EncodeRetrieveBitstream);
  (void)api;
  nvjpegEncoderState_t encoder_state = NULL;
  nvjpegEncoderParams_t encoder_params = NULL;
  _Static_assert(sizeof encoder_state == sizeof(LhnjEncoderState), "encoder state");
  _Static_assert(sizeof encoder_params == sizeof(LhnjEncoderParams), "encoder params");
  (void)encoder_state;
  (void)encoder_params;
  /* Parameter-by-parameter: a call through our type with the real types'
   * values must compile without conversions that lose information. */
  nvjpegHandle_t handle = NULL;
  nvjpegJpegState_t state = NULL;
  nvjpegJpegStream_t stream = NULL;
  _Static_assert(sizeof handle == sizeof(LhnjHandle), "handle");
  _Static_assert(sizeof state == sizeof(LhnjState), "state");
  _Static_assert(sizeof stream == sizeof(LhnjStream), "stream");
  _Static_assert(sizeof(cudaStream_t) == sizeof(void *), "stream");
  const char *why = NULL;
  if (!lhnj_api(&why)) {
    printf("SKIP: %s\n", why);
    return 77;
  }
  printf("libnvjpeg loaded; declarations match nvjpeg.h\n");
  return 0;
}
