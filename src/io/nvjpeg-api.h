/* nvjpeg-api.h: the few nvJPEG entry points lhio uses, declared here rather
 * than taken from nvjpeg.h, and loaded from libnvjpeg at run time: CI and
 * build machines have no libnvjpeg (Debian's CUDA packages lack it), GPU
 * hosts do.  The values and layouts below are nvJPEG's ABI (CUDA 11 to 13);
 * tests/gpu/nvjpeg-abi-test.c checks them against nvjpeg.h where the header
 * is installed. */
#ifndef LHIO_NVJPEG_API_H
#define LHIO_NVJPEG_API_H

#include <stddef.h>

/* nvjpegStatus_t */
enum {
  LHNJ_STATUS_SUCCESS = 0,
  LHNJ_STATUS_NOT_INITIALIZED = 1,
  LHNJ_STATUS_INVALID_PARAMETER = 2,
  LHNJ_STATUS_BAD_JPEG = 3,
  LHNJ_STATUS_JPEG_NOT_SUPPORTED = 4,
  LHNJ_STATUS_ALLOCATOR_FAILURE = 5,
  LHNJ_STATUS_EXECUTION_FAILED = 6,
  LHNJ_STATUS_ARCH_MISMATCH = 7,
  LHNJ_STATUS_INTERNAL_ERROR = 8,
  LHNJ_STATUS_IMPLEMENTATION_NOT_SUPPORTED = 9,
  LHNJ_STATUS_INCOMPLETE_BITSTREAM = 10,
};

/* nvjpegBackend_t */
enum {
  LHNJ_BACKEND_DEFAULT = 0,
  LHNJ_BACKEND_HYBRID = 1,
  LHNJ_BACKEND_GPU_HYBRID = 2,
  LHNJ_BACKEND_HARDWARE = 3,
};

/* nvjpegOutputFormat_t: planar Y, Cb, Cr as the file holds them (chroma
 * at its own sampling), or the luma plane alone */
enum { LHNJ_OUTPUT_YUV = 1, LHNJ_OUTPUT_Y = 2 };

/* nvjpegChromaSubsampling_t: those lhio decodes and encodes on the GPU */
enum {
  LHNJ_CSS_444 = 0,
  LHNJ_CSS_422 = 1,
  LHNJ_CSS_420 = 2,
  LHNJ_CSS_GRAY = 6,
};

/* nvjpegJpegEncoding_t: the SOF marker the encoder writes */
enum {
  LHNJ_ENCODING_BASELINE_DCT = 0xc0,
  LHNJ_ENCODING_PROGRESSIVE_DCT_HUFFMAN = 0xc2,
};

#define LHNJ_MAX_COMPONENT 4

/* nvjpegImage_t */
typedef struct {
  unsigned char *channel[LHNJ_MAX_COMPONENT];
  size_t pitch[LHNJ_MAX_COMPONENT];
} LhnjImage;

/* Opaque handles (nvjpegHandle_t, nvjpegJpegState_t, nvjpegJpegStream_t,
 * nvjpegEncoderState_t, nvjpegEncoderParams_t). */
typedef struct LhnjHandle *LhnjHandle;
typedef struct LhnjState *LhnjState;
typedef struct LhnjStream *LhnjStream;
typedef struct LhnjEncoderState *LhnjEncoderState;
typedef struct LhnjEncoderParams *LhnjEncoderParams;

/* Every function returns an nvjpegStatus_t (an int-sized enum). */
typedef struct {
  int (*CreateEx)(int backend, void *dev_allocator, void *pinned_allocator, unsigned flags,
                  LhnjHandle *handle);
  int (*Destroy)(LhnjHandle handle);
  int (*JpegStateCreate)(LhnjHandle handle, LhnjState *state);
  int (*JpegStateDestroy)(LhnjState state);
  int (*Decode)(LhnjHandle handle, LhnjState state, const unsigned char *data, size_t length,
                int output_format, LhnjImage *destination, void *cuda_stream);
  int (*DecodeBatchedInitialize)(LhnjHandle handle, LhnjState state, int batch_size,
                                 int max_cpu_threads, int output_format);
  int (*DecodeBatched)(LhnjHandle handle, LhnjState state, const unsigned char *const *data,
                       const size_t *lengths, LhnjImage *destinations, void *cuda_stream);
  int (*DecodeBatchedSupported)(LhnjHandle handle, LhnjStream stream, int *is_supported);
  int (*JpegStreamCreate)(LhnjHandle handle, LhnjStream *stream);
  int (*JpegStreamDestroy)(LhnjStream stream);
  int (*JpegStreamParseHeader)(LhnjHandle handle, const unsigned char *data, size_t length,
                               LhnjStream stream);
  /* The encoder (cuda_stream is a cudaStream_t). */
  int (*EncoderStateCreate)(LhnjHandle handle, LhnjEncoderState *state, void *cuda_stream);
  int (*EncoderStateDestroy)(LhnjEncoderState state);
  int (*EncoderParamsCreate)(LhnjHandle handle, LhnjEncoderParams *params, void *cuda_stream);
  int (*EncoderParamsDestroy)(LhnjEncoderParams params);
  int (*EncoderParamsSetQuality)(LhnjEncoderParams params, const int quality, void *cuda_stream);
  int (*EncoderParamsSetOptimizedHuffman)(LhnjEncoderParams params, const int optimized,
                                          void *cuda_stream);
  int (*EncoderParamsSetSamplingFactors)(LhnjEncoderParams params, const int chroma_subsampling,
                                         void *cuda_stream);
  int (*EncoderParamsSetEncoding)(LhnjEncoderParams params, int encoding, void *cuda_stream);
  int (*EncodeYUV)(LhnjHandle handle, LhnjEncoderState state, const LhnjEncoderParams params,
                   const LhnjImage *source, int chroma_subsampling, int width, int height,
                   void *cuda_stream);
  int (*EncodeRetrieveBitstream)(LhnjHandle handle, LhnjEncoderState state, unsigned char *data,
                                 size_t *length, void *cuda_stream);
} LhnjApi;

/* The loaded entry points, or NULL with *why (static text) when libnvjpeg
 * cannot be loaded or lacks one of them.  Loads once; thread-safe. */
const LhnjApi *lhnj_api(const char **why);

/* nvJPEG's status as words, for messages. */
const char *lhnj_status_name(int status);

#endif /* LHIO_NVJPEG_API_H */
