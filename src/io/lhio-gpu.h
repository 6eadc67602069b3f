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

/* Sets the decoder up for batches of `batch` JPEGs decoded to luma, or with
 * planar, to planar YCbCr: the hardware backend's set-up for a batch size
 * takes a few tenths of a second, which a decoder made ahead of its first
 * batch (on a thread of its own) spends then rather than on that batch. */
int lhio_gpu_jpeg_warm(LhioGpuJpeg *decoder, int batch, bool planar);

/* Whether the decoder has the hardware backend. */
bool lhio_gpu_jpeg_has_hardware(const LhioGpuJpeg *decoder);

/* One JPEG of a batch: its bytes and what lhio_jpeg_probe read (an image it
 * refused for the GPU is not to be given). */
typedef struct {
  const LhioEncoded *encoded;
  const LhioJpegInfo *info;
  /* out */
  int status; /* 0, or negative: nvJPEG failed on it (reason says
                 why); decode it on the CPU instead */
  char reason[192];
  LhioDecoder decoder; /* NVJPEG_HARDWARE or NVJPEG_GPU */
  uint8_t *luma;       /* device memory of the decoder, width x height */
  size_t pitch;
  /* lhio_gpu_jpeg_decode_planar only: */
  LhFormat format;    /* GRAY8, I420, Y42B or Y444: the file's sampling */
  uint8_t *chroma[2]; /* Cb and Cr at that sampling; NULL for GRAY8 */
  size_t chroma_pitch;
} LhioGpuJpegJob;

/* Decodes the luma (Y) of n JPEGs into device memory that belongs to the
 * decoder and stays valid until its next call.  The work is queued on the
 * decoder's stream: work queued after it there sees the pixels.  Those the
 * hardware backend takes go in one batched call; the rest, and every image
 * of a batch the engine refused, one by one on the hybrid backend, so that a
 * file nvJPEG rejects fails alone.  Returns the number decoded, or a
 * negative status when the decoder itself failed (no memory). */
int lhio_gpu_jpeg_decode_luma(LhioGpuJpeg *decoder, LhioGpuJpegJob *jobs, int n);

/* The planar format in which lhio_gpu_jpeg_decode_planar gives a file back
 * and lhio_gpu_jpeg_encode writes it again with the same sampling: GRAY8
 * (one component), I420 (4:2:0), Y42B (4:2:2) or Y444 (4:4:4), chroma
 * sampled 1x1.  Returns false with *why (static text) for the others (4:4:0,
 * 4:1:1, unusual factors), which the library has no planar format for, and
 * for what info->gpu_refusal already keeps from nvJPEG. */
bool lhio_gpu_jpeg_planar_format(const LhioJpegInfo *info, LhFormat *format, const char **why);

/* Decodes n JPEGs, each of which lhio_gpu_jpeg_planar_format takes, to
 * planar Y, Cb, Cr in device memory of the decoder, chroma as the file
 * samples it (no upsampling, no colour conversion): jobs[i].format,
 * luma/pitch and chroma/chroma_pitch.  Otherwise as
 * lhio_gpu_jpeg_decode_luma. */
int lhio_gpu_jpeg_decode_planar(LhioGpuJpeg *decoder, LhioGpuJpegJob *jobs, int n);

/* Encodes a frame in the decoder's device memory or any other (GRAY8, I420,
 * Y42B or Y444; LH_MEMORY_CUDA, on the calling thread's device) as a
 * baseline JPEG (progressive: a progressive one, as the input was) with
 * that chroma sampling, at quality 1..100, with nvJPEG's
 * encoder on the decoder's stream (after the work queued there), and
 * returns the file's bytes in *out (malloc'd; lhio_encoded_clear frees
 * them).  On failure, the frame is left as it was and the message says why. */
int lhio_gpu_jpeg_encode(LhioGpuJpeg *decoder, const LhFrame *frame, int quality, bool progressive,
                         LhioEncoded *out);

/* GPU time of the decoder's calls so far, from CUDA events on its stream. */
double lhio_gpu_jpeg_device_seconds(const LhioGpuJpeg *decoder);

#ifdef __cplusplus
}
#endif

#endif /* LHIO_GPU_H */
