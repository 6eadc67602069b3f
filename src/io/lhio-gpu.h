/* lhio-gpu.h: JPEG decoding on the GPU with nvJPEG, for the tool and the
 * tests.  libnvjpeg is loaded at run time (dlopen), as GStreamer's nvcodec
 * loads its vendor libraries, so every CUDA build carries this path and it
 * turns on where the library is installed.  Functions return 0 or a negative
 * LhStatus and set the message that lh_last_error() returns. */
#ifndef LHIO_GPU_H
#define LHIO_GPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lhio.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Whether nvJPEG can be used: built with it (meson's nvjpeg feature) and
 * libnvjpeg found.  Loads the library once; thread-safe.  When it cannot,
 * *why (may be NULL) says why, in a static string. */
bool lhio_gpu_jpeg_usable(const char **why);

/* A decoder for one CUDA stream (one analysis thread): nvJPEG's handles for
 * the hardware backend (the NVJPG engines of A100, H100, H200), where the GPU
 * has it, and for the GPU hybrid backend, and device buffers for a batch of
 * decoded luma planes, reused from call to call. */
typedef struct LhioGpuJpeg LhioGpuJpeg;

/* Makes nvJPEG's library handles for the calling thread's current device,
 * which every decoder on it shares: about a second for the hardware
 * backend's, so a program calls this early, on a thread of its own, while
 * it reads its first files.  Thread-safe; later calls return at once. */
int lhio_gpu_jpeg_prepare(void);
/* Frees those handles, once every decoder is freed. */
void lhio_gpu_jpeg_shutdown(void);

/* On the calling thread's current device; cuda_stream is a cudaStream_t
 * (NULL: the default stream). */
int lhio_gpu_jpeg_new(void *cuda_stream, LhioGpuJpeg **decoder);
void lhio_gpu_jpeg_free(LhioGpuJpeg *decoder);

/* Whether the decoder has the hardware backend. */
bool lhio_gpu_jpeg_has_hardware(const LhioGpuJpeg *decoder);

/* One JPEG of a batch: its bytes and what lhio_jpeg_probe read (an image it
 * refused for the GPU is not to be given). */
typedef struct {
  const LhioEncoded *encoded;
  const LhioJpegInfo *info;
  /* out */
  int status;           /* 0, or negative: nvJPEG failed on it (reason says
                           why); decode it on the CPU instead */
  char reason[192];
  LhioDecoder decoder;  /* NVJPEG_HARDWARE or NVJPEG_GPU */
  uint8_t *luma;        /* device memory of the decoder, width x height */
  size_t pitch;
} LhioGpuJpegJob;

/* Decodes the luma (Y) of n JPEGs into device memory that belongs to the
 * decoder and stays valid until its next call.  The work is queued on the
 * decoder's stream: work queued after it there sees the pixels.  Those the
 * hardware backend takes go in one batched call; the rest, and every image
 * of a batch the engine refused, one by one on the hybrid backend, so that a
 * file nvJPEG rejects fails alone.  Returns the number decoded, or a
 * negative status when the decoder itself failed (no memory). */
int lhio_gpu_jpeg_decode_luma(LhioGpuJpeg *decoder, LhioGpuJpegJob *jobs, int n);

/* GPU time of the decoder's calls so far, from CUDA events on its stream. */
double lhio_gpu_jpeg_device_seconds(const LhioGpuJpeg *decoder);

#ifdef __cplusplus
}
#endif

#endif /* LHIO_GPU_H */
