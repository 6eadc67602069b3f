/* gpu-jpeg.c: decoding JPEG batches into device memory with nvJPEG (the
 * luma alone, or planar Y, Cb, Cr as the file samples them): the hardware
 * backend (NVJPG engines) for the files it takes, in one batched call, and
 * the hybrid backend for the rest, one by one; and encoding planar frames
 * in device memory back to JPEG with nvJPEG's encoder. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "lhio-gpu.h"
#include "lhio-private.h"
#include "nvjpeg-api.h"

/* Rows of a decoded plane start at multiples of this: the histogram
 * kernels read 16-byte words, and the engines write whole 64-byte lines. */
#define PITCH_ALIGN 128
/* The tallest MCU (4:1:0 and 4:4:0 at v = 2 go to 16; 32 leaves a margin). */
#define MCU_ROWS 32

typedef struct {
  uint8_t *memory;
  size_t bytes;
} Slot;

struct LhioGpuJpeg {
  const LhnjApi *nj;
  cudaStream_t stream;
  struct DeviceHandles *handles; /* the device's shared handles (below) */
  LhnjHandle hardware;           /* NULL where the GPU has no JPEG engine */
  LhnjHandle hybrid;             /* NULL until a file needs it */
  LhnjState hardware_state;
  LhnjStream parsed;   /* headers, for the hardware backend's verdict */
  int hardware_batch;  /* the batch size hardware_state was set up for; 0: none */
  int hardware_format; /* and the output format */
  LhnjState hybrid_state;
  LhnjEncoderState encoder_state; /* NULL until a frame is encoded */
  LhnjEncoderParams encoder_params;
  Slot *slots; /* one device plane per job of a call */
  int n_slots;
  cudaEvent_t began, ended;
  bool timing; /* began and ended hold a call's interval not yet added */
  double seconds;
};

/* nvJPEG's library handles, one pair per device, shared by the decoders of
 * every thread (nvJPEG allows that; states, streams and buffers are per
 * thread).  Making the hardware backend's handle takes about a second, so
 * it is made once, and early (lhio_gpu_jpeg_prepare). */
#define MAX_DEVICES 64

typedef struct DeviceHandles {
  /* Each device's own: making a device's handles (most of a second) does
   * not hold up another device's (--devices 0,1 started its decoders one
   * device after the other). */
  pthread_mutex_t lock;
  bool made;
  int device;
  int status;        /* of making the first handle: 0, or the LhStatus */
  int hybrid_status; /* of making the hybrid one */
  char why[160];
  LhnjHandle hardware;
  LhnjHandle hybrid;
} DeviceHandles;

static DeviceHandles device_handles[MAX_DEVICES];
static pthread_once_t handles_once = PTHREAD_ONCE_INIT;

static void handles_init(void)
{
  for (int i = 0; i < MAX_DEVICES; i++)
    pthread_mutex_init(&device_handles[i].lock, NULL);
}

bool lhio_gpu_jpeg_usable(const char **why)
{
  return lhnj_api(why) != NULL;
}

/* The message for a failed CUDA call, as status + message. */
static int cuda_fail(cudaError_t error, const char *what)
{
  return lh_set_error(error == cudaErrorMemoryAllocation ? LH_ERROR_NO_MEMORY : LH_ERROR_CUDA,
                      "nvJPEG decoding: %s: %s", what, cudaGetErrorString(error));
}

static int nvjpeg_fail(int status, const char *what)
{
  return lh_set_error(status == LHNJ_STATUS_ALLOCATOR_FAILURE ? LH_ERROR_NO_MEMORY : LH_ERROR_CUDA,
                      "nvJPEG: %s: %s", what, lhnj_status_name(status));
}

/* The hybrid backend's handle of a device, made on first need: where the
 * engine takes every file, a run never makes it.  Under h->lock. */
static int make_hybrid(const LhnjApi *nj, DeviceHandles *h, int device)
{
  if (h->hybrid || h->hybrid_status < 0)
    return h->hybrid_status;
  int status = nj->CreateEx(LHNJ_BACKEND_DEFAULT, NULL, NULL, 0, &h->hybrid);
  if (status != LHNJ_STATUS_SUCCESS) {
    h->hybrid = NULL;
    h->hybrid_status = status == LHNJ_STATUS_ALLOCATOR_FAILURE ? LH_ERROR_NO_MEMORY : LH_ERROR_CUDA;
    snprintf(h->why, sizeof h->why, "nvJPEG: cannot create a decoder on device %d: %s", device,
             lhnj_status_name(status));
  }
  return h->hybrid_status;
}

/* The handles of the calling thread's current device, made on first use:
 * the hardware backend's, or where the GPU has no engine, the hybrid's. */
static int handles_of_current_device(const LhnjApi *nj, DeviceHandles **handles)
{
  int device = 0;
  cudaError_t error = cudaGetDevice(&device);
  if (error != cudaSuccess)
    return cuda_fail(error, "no current device");
  if (device < 0 || device >= MAX_DEVICES)
    return lh_set_error(LH_ERROR_UNSUPPORTED, "nvJPEG: device %d is beyond %d", device,
                        MAX_DEVICES);
  pthread_once(&handles_once, handles_init);
  DeviceHandles *h = &device_handles[device];
  pthread_mutex_lock(&h->lock);
  if (!h->made) {
    h->made = true;
    h->device = device;
    /* The hardware backend exists on A100, A30, H100, H200 and later;
     * where it does not, making it fails and the hybrid backend does
     * everything.  No NVJPEG_FLAGS_BITSTREAM_STRICT: on an H100 it did not
     * make the engine report damaged entropy-coded data either. */
    if (nj->CreateEx(LHNJ_BACKEND_HARDWARE, NULL, NULL, 0, &h->hardware) != LHNJ_STATUS_SUCCESS) {
      h->hardware = NULL;
      h->status = make_hybrid(nj, h, device);
    }
  }
  int status = h->status;
  pthread_mutex_unlock(&h->lock);
  if (status < 0)
    return lh_set_error(status, "%s", h->why);
  *handles = h;
  return LH_OK;
}

int lhio_gpu_jpeg_prepare(void)
{
  const char *why = NULL;
  const LhnjApi *nj = lhnj_api(&why);
  if (!nj)
    return lh_set_error(LH_ERROR_UNSUPPORTED, "nvJPEG: %s", why);
  DeviceHandles *handles;
  return handles_of_current_device(nj, &handles);
}

void lhio_gpu_jpeg_shutdown(void)
{
  const LhnjApi *nj = lhnj_api(NULL);
  if (!nj)
    return;
  pthread_once(&handles_once, handles_init);
  for (int i = 0; i < MAX_DEVICES; i++) {
    DeviceHandles *h = &device_handles[i];
    pthread_mutex_lock(&h->lock);
    if (h->hardware)
      nj->Destroy(h->hardware);
    if (h->hybrid)
      nj->Destroy(h->hybrid);
    h->made = false;
    h->device = 0;
    h->status = 0;
    h->hybrid_status = 0;
    h->why[0] = '\0';
    h->hardware = NULL;
    h->hybrid = NULL;
    pthread_mutex_unlock(&h->lock);
  }
}

/* The device's hybrid-backend handle, shared by its decoders, made on first
 * need (by the hybrid decoder or the encoder, whichever comes first). */
static int hybrid_handle(LhioGpuJpeg *d)
{
  pthread_mutex_lock(&d->handles->lock);
  int status = make_hybrid(d->nj, d->handles, d->handles->device);
  d->hybrid = d->handles->hybrid;
  pthread_mutex_unlock(&d->handles->lock);
  return status < 0 ? lh_set_error(status, "%s", d->handles->why) : LH_OK;
}

/* The decoder's hybrid backend, made on first need: the device's handle,
 * shared, and a state of its own. */
static int hybrid_ready(LhioGpuJpeg *d)
{
  if (d->hybrid_state)
    return LH_OK;
  int status = hybrid_handle(d);
  if (status < 0)
    return status;
  int nj_status = d->nj->JpegStateCreate(d->hybrid, &d->hybrid_state);
  if (nj_status != LHNJ_STATUS_SUCCESS) {
    d->hybrid_state = NULL;
    return nvjpeg_fail(nj_status, "cannot create a decoder");
  }
  return LH_OK;
}

int lhio_gpu_jpeg_new(void *cuda_stream, LhioGpuJpeg **decoder)
{
  const char *why = NULL;
  const LhnjApi *nj = lhnj_api(&why);
  *decoder = NULL;
  if (!nj)
    return lh_set_error(LH_ERROR_UNSUPPORTED, "nvJPEG: %s", why);
  DeviceHandles *handles;
  int status = handles_of_current_device(nj, &handles);
  if (status < 0)
    return status;
  LhioGpuJpeg *d = calloc(1, sizeof *d);
  if (!d)
    return lh_set_error(LH_ERROR_NO_MEMORY, "out of memory");
  d->nj = nj;
  d->stream = (cudaStream_t)cuda_stream;
  d->handles = handles;
  d->hardware = handles->hardware;
  if (d->hardware && (nj->JpegStateCreate(d->hardware, &d->hardware_state) != LHNJ_STATUS_SUCCESS ||
                      nj->JpegStreamCreate(d->hardware, &d->parsed) != LHNJ_STATUS_SUCCESS)) {
    lhio_gpu_jpeg_free(d);
    return nvjpeg_fail(LHNJ_STATUS_INTERNAL_ERROR, "cannot set up the hardware decoder");
  }
  if (!d->hardware && (status = hybrid_ready(d)) < 0) {
    lhio_gpu_jpeg_free(d);
    return status;
  }
  cudaError_t error = cudaEventCreate(&d->began);
  if (error == cudaSuccess)
    error = cudaEventCreate(&d->ended);
  if (error != cudaSuccess) {
    lhio_gpu_jpeg_free(d);
    return cuda_fail(error, "events");
  }
  *decoder = d;
  return LH_OK;
}

/* Adds the last call's interval once its work is done. */
static void settle_timing(LhioGpuJpeg *d)
{
  if (!d->timing)
    return;
  float ms = 0;
  if (cudaEventSynchronize(d->ended) == cudaSuccess &&
      cudaEventElapsedTime(&ms, d->began, d->ended) == cudaSuccess)
    d->seconds += ms / 1e3;
  d->timing = false;
}

void lhio_gpu_jpeg_free(LhioGpuJpeg *d)
{
  if (!d)
    return;
  const LhnjApi *nj = d->nj;
  if (d->stream || d->n_slots)
    cudaStreamSynchronize(d->stream);
  settle_timing(d);
  for (int i = 0; i < d->n_slots; i++)
    cudaFree(d->slots[i].memory);
  free(d->slots);
  if (d->parsed)
    nj->JpegStreamDestroy(d->parsed);
  if (d->hardware_state)
    nj->JpegStateDestroy(d->hardware_state);
  if (d->hybrid_state)
    nj->JpegStateDestroy(d->hybrid_state);
  if (d->encoder_params)
    nj->EncoderParamsDestroy(d->encoder_params);
  if (d->encoder_state)
    nj->EncoderStateDestroy(d->encoder_state);
  if (d->began)
    cudaEventDestroy(d->began);
  if (d->ended)
    cudaEventDestroy(d->ended);
  free(d);
}

bool lhio_gpu_jpeg_has_hardware(const LhioGpuJpeg *d)
{
  return d && d->hardware;
}

double lhio_gpu_jpeg_device_seconds(const LhioGpuJpeg *d)
{
  settle_timing((LhioGpuJpeg *)d);
  return d->seconds;
}

/* A plane's rows, pitch and bytes for `width` x `height` samples: room for
 * the whole MCUs nvJPEG may write past the last row and column (seen with
 * 4:1:1 files a few rows high, whose rows landed in the next plane). */
static size_t plane_bytes(int width, int height, size_t *pitch)
{
  *pitch = ((size_t)width + PITCH_ALIGN - 1) / PITCH_ALIGN * PITCH_ALIGN;
  size_t rows = ((size_t)height + MCU_ROWS - 1) / MCU_ROWS * MCU_ROWS;
  return *pitch * rows;
}

/* The size of a chroma plane of a file that lhio_gpu_jpeg_planar_format
 * takes; a gray file's two scratch planes are the size of its luma, for
 * whatever nvJPEG's YUV output writes there. */
static void chroma_size(const LhioGpuJpegJob *job, int *width, int *height)
{
  const LhioJpegInfo *info = job->info;
  bool gray = job->format == LH_FORMAT_GRAY8;
  int h = gray ? 1 : info->h_samp, v = gray ? 1 : info->v_samp;
  *width = (info->width + h - 1) / h;
  *height = (info->height + v - 1) / v;
}

/* Device room for n images of the jobs' sizes (the luma plane, and with
 * planar, two chroma planes after it); slots grow, never shrink, so that a
 * run of like-sized photographs allocates once. */
static int reserve_slots(LhioGpuJpeg *d, LhioGpuJpegJob *jobs, int n, bool planar)
{
  if (n > d->n_slots) {
    Slot *slots = realloc(d->slots, (size_t)n * sizeof *slots);
    if (!slots)
      return lh_set_error(LH_ERROR_NO_MEMORY, "out of memory");
    memset(slots + d->n_slots, 0, (size_t)(n - d->n_slots) * sizeof *slots);
    d->slots = slots;
    d->n_slots = n;
  }
  for (int i = 0; i < n; i++) {
    const LhioJpegInfo *info = jobs[i].info;
    size_t pitch, chroma_pitch = 0, chroma_bytes = 0;
    size_t luma_bytes = plane_bytes(info->width, info->height, &pitch);
    if (planar) {
      int chroma_width, chroma_height;
      chroma_size(&jobs[i], &chroma_width, &chroma_height);
      chroma_bytes = plane_bytes(chroma_width, chroma_height, &chroma_pitch);
    }
    size_t bytes = luma_bytes + 2 * chroma_bytes;
    Slot *slot = &d->slots[i];
    if (slot->bytes < bytes) {
      /* The planes may still be read by work queued before this call. */
      cudaStreamSynchronize(d->stream);
      cudaFree(slot->memory);
      slot->memory = NULL;
      slot->bytes = 0;
      cudaError_t error = cudaMalloc((void **)&slot->memory, bytes);
      if (error != cudaSuccess) {
        cudaGetLastError();
        return cuda_fail(error, "no device memory for a decoded plane");
      }
      slot->bytes = bytes;
    }
    jobs[i].luma = slot->memory;
    jobs[i].pitch = pitch;
    jobs[i].chroma[0] = planar ? slot->memory + luma_bytes : NULL;
    jobs[i].chroma[1] = planar ? slot->memory + luma_bytes + chroma_bytes : NULL;
    jobs[i].chroma_pitch = chroma_pitch;
  }
  return LH_OK;
}

static LhnjImage destination_of(const LhioGpuJpegJob *job)
{
  LhnjImage image;
  memset(&image, 0, sizeof image);
  image.channel[0] = job->luma;
  image.pitch[0] = job->pitch;
  for (int c = 0; c < 2 && job->chroma[c]; c++) {
    image.channel[1 + c] = job->chroma[c];
    image.pitch[1 + c] = job->chroma_pitch;
  }
  return image;
}

/* Whether the hardware backend takes the file, by nvJPEG's own verdict on
 * its headers (baseline, one scan, a sampling the engine knows). */
static bool hardware_takes(LhioGpuJpeg *d, const LhioGpuJpegJob *job)
{
  const LhioEncoded *e = job->encoded;
  if (job->info->progressive)
    return false;
  /* A gray file whose one component claims 2x2 (or other) sampling: the
   * engine laid its blocks out as MCUs of that size, not of one block as
   * the standard has it for a single-component scan (measured on an H100:
   * the same histogram, 87 % of the pixels moved). */
  if (job->info->components == 1 && (job->info->h_samp != 1 || job->info->v_samp != 1))
    return false;
  if (d->nj->JpegStreamParseHeader(d->hardware, e->data, e->size, d->parsed) != LHNJ_STATUS_SUCCESS)
    return false;
  int unsupported = 1;
  return d->nj->DecodeBatchedSupported(d->hardware, d->parsed, &unsupported) ==
             LHNJ_STATUS_SUCCESS &&
         unsupported == 0;
}

/* Sets the hardware state up for batches of n images in output_format,
 * unless it already is. */
static int hardware_batch_ready(LhioGpuJpeg *d, int n, int output_format)
{
  if (d->hardware_batch == n && d->hardware_format == output_format)
    return LHNJ_STATUS_SUCCESS;
  int status = d->nj->DecodeBatchedInitialize(d->hardware, d->hardware_state, n, 1, output_format);
  d->hardware_batch = status == LHNJ_STATUS_SUCCESS ? n : 0;
  d->hardware_format = output_format;
  return status;
}

int lhio_gpu_jpeg_warm(LhioGpuJpeg *d, int batch, bool planar)
{
  if (!d->hardware || batch <= 0)
    return LH_OK;
  int status = hardware_batch_ready(d, batch, planar ? LHNJ_OUTPUT_YUV : LHNJ_OUTPUT_Y);
  return status == LHNJ_STATUS_SUCCESS ? LH_OK : nvjpeg_fail(status, "setting up a batch");
}

/* The hardware backend's batched call over the jobs listed in which. */
static int decode_on_hardware(LhioGpuJpeg *d, LhioGpuJpegJob *jobs, const int *which, int n,
                              int output_format)
{
  const unsigned char **data = malloc((size_t)n * sizeof *data);
  size_t *lengths = malloc((size_t)n * sizeof *lengths);
  LhnjImage *destinations = malloc((size_t)n * sizeof *destinations);
  int status = LHNJ_STATUS_ALLOCATOR_FAILURE;
  if (data && lengths && destinations) {
    for (int k = 0; k < n; k++) {
      const LhioGpuJpegJob *job = &jobs[which[k]];
      data[k] = job->encoded->data;
      lengths[k] = job->encoded->size;
      destinations[k] = destination_of(job);
    }
    status = hardware_batch_ready(d, n, output_format);
    if (status == LHNJ_STATUS_SUCCESS)
      status = d->nj->DecodeBatched(d->hardware, d->hardware_state, data, lengths, destinations,
                                    d->stream);
    if (status != LHNJ_STATUS_SUCCESS)
      d->hardware_batch = 0; /* a failed batch needs initializing again */
  }
  free(data);
  free(lengths);
  free(destinations);
  return status;
}

bool lhio_gpu_jpeg_planar_format(const LhioJpegInfo *info, LhFormat *format, const char **why)
{
  const char *refusal = info->gpu_refusal;
  if (!refusal && info->components == 1)
    *format = LH_FORMAT_GRAY8;
  else if (!refusal && info->components != 3)
    refusal = "neither one nor three components";
  else if (!refusal && !info->chroma_1x1)
    refusal = "chroma components sampled other than 1x1";
  else if (!refusal && info->h_samp == 2 && info->v_samp == 2)
    *format = LH_FORMAT_I420;
  else if (!refusal && info->h_samp == 2 && info->v_samp == 1)
    *format = LH_FORMAT_Y42B;
  else if (!refusal && info->h_samp == 1 && info->v_samp == 1)
    *format = LH_FORMAT_Y444;
  else if (!refusal)
    refusal = "chroma sampling other than 4:2:0, 4:2:2 and 4:4:4 (no planar frame format)";
  if (refusal && why)
    *why = refusal;
  return refusal == NULL;
}

/* Decodes the jobs with output_format: LHNJ_OUTPUT_Y into their luma, or
 * LHNJ_OUTPUT_YUV into their luma and chroma planes. */
static int decode_jobs(LhioGpuJpeg *d, LhioGpuJpegJob *jobs, int n, int output_format)
{
  if (n <= 0)
    return 0;
  int status = reserve_slots(d, jobs, n, output_format == LHNJ_OUTPUT_YUV);
  if (status < 0)
    return status;
  settle_timing(d);
  cudaEventRecord(d->began, d->stream);

  int *on_hardware = malloc((size_t)n * sizeof *on_hardware);
  if (!on_hardware)
    return lh_set_error(LH_ERROR_NO_MEMORY, "out of memory");
  int n_hardware = 0;
  for (int i = 0; i < n; i++) {
    jobs[i].status = 1; /* not yet decoded */
    jobs[i].reason[0] = '\0';
    if (d->hardware && hardware_takes(d, &jobs[i]))
      on_hardware[n_hardware++] = i;
  }
  if (n_hardware > 0) {
    int nj_status = decode_on_hardware(d, jobs, on_hardware, n_hardware, output_format);
    /* A batch the engine refused is decoded again one file at a time on the
     * hybrid backend, so that only the file at fault fails. */
    for (int k = 0; nj_status == LHNJ_STATUS_SUCCESS && k < n_hardware; k++) {
      jobs[on_hardware[k]].status = 0;
      jobs[on_hardware[k]].decoder = LHIO_DECODER_NVJPEG_HARDWARE;
    }
  }
  free(on_hardware);

  int decoded = 0;
  for (int i = 0; i < n; i++) {
    LhioGpuJpegJob *job = &jobs[i];
    if (job->status == 1 && hybrid_ready(d) < 0) {
      job->status = LH_ERROR_CUDA;
      snprintf(job->reason, sizeof job->reason, "%s", lh_last_error());
    } else if (job->status == 1) {
      LhnjImage destination = destination_of(job);
      int nj_status = d->nj->Decode(d->hybrid, d->hybrid_state, job->encoded->data,
                                    job->encoded->size, output_format, &destination, d->stream);
      /* The state's buffers serve the next file: its decoding waits for
       * this one's device work.  Without the wait, a progressive gray file
       * decoded on the hybrid backend among others in a batch once came out
       * 1.09 code values off in mean on an H100 (cli-decoder-gpu; the same
       * file alone, in nvjpeg-compare, was right); nvJPEG's documentation
       * does not say whether nvjpegDecode may reuse the state before the
       * work it queued has run. */
      if (nj_status == LHNJ_STATUS_SUCCESS && cudaStreamSynchronize(d->stream) != cudaSuccess)
        nj_status = LHNJ_STATUS_EXECUTION_FAILED;
      if (nj_status == LHNJ_STATUS_SUCCESS) {
        job->status = 0;
        job->decoder = LHIO_DECODER_NVJPEG_GPU;
      } else {
        job->status =
            nj_status == LHNJ_STATUS_ALLOCATOR_FAILURE ? LH_ERROR_NO_MEMORY : LH_ERROR_CORRUPT;
        snprintf(job->reason, sizeof job->reason, "nvJPEG: %s", lhnj_status_name(nj_status));
      }
    }
    decoded += job->status == 0;
  }
  /* An error nvJPEG left behind in the runtime is not the next call's. */
  cudaError_t error = cudaGetLastError();
  cudaEventRecord(d->ended, d->stream);
  d->timing = true;
  if (error != cudaSuccess)
    return cuda_fail(error, "decoding");
  return decoded;
}

int lhio_gpu_jpeg_decode_luma(LhioGpuJpeg *d, LhioGpuJpegJob *jobs, int n)
{
  for (int i = 0; i < n; i++) {
    jobs[i].format = LH_FORMAT_GRAY8;
    jobs[i].chroma[0] = jobs[i].chroma[1] = NULL;
  }
  return decode_jobs(d, jobs, n, LHNJ_OUTPUT_Y);
}

int lhio_gpu_jpeg_decode_planar(LhioGpuJpeg *d, LhioGpuJpegJob *jobs, int n)
{
  for (int i = 0; i < n; i++) {
    const char *why = NULL;
    if (!lhio_gpu_jpeg_planar_format(jobs[i].info, &jobs[i].format, &why))
      return lh_set_error(LH_ERROR_INVALID_ARGUMENT,
                          "lhio_gpu_jpeg_decode_planar: job %d cannot be decoded to planes: %s", i,
                          why);
  }
  return decode_jobs(d, jobs, n, LHNJ_OUTPUT_YUV);
}

/* The decoder's encoder, made on first need on the hybrid backend's handle
 * (the encoder is not the JPEG engines'). */
static int encoder_ready(LhioGpuJpeg *d)
{
  if (d->encoder_params)
    return LH_OK;
  int status = hybrid_handle(d);
  if (status < 0)
    return status;
  int nj_status = LHNJ_STATUS_SUCCESS;
  if (!d->encoder_state)
    nj_status = d->nj->EncoderStateCreate(d->hybrid, &d->encoder_state, d->stream);
  if (nj_status != LHNJ_STATUS_SUCCESS) {
    d->encoder_state = NULL;
    return nvjpeg_fail(nj_status, "cannot create an encoder");
  }
  nj_status = d->nj->EncoderParamsCreate(d->hybrid, &d->encoder_params, d->stream);
  if (nj_status != LHNJ_STATUS_SUCCESS) {
    d->encoder_params = NULL;
    return nvjpeg_fail(nj_status, "cannot create the encoder's parameters");
  }
  return LH_OK;
}

/* nvJPEG's name of a planar frame format's sampling; -1 for others. */
static int subsampling_of(LhFormat format)
{
  switch (format) {
  case LH_FORMAT_GRAY8:
    return LHNJ_CSS_GRAY;
  case LH_FORMAT_I420:
    return LHNJ_CSS_420;
  case LH_FORMAT_Y42B:
    return LHNJ_CSS_422;
  case LH_FORMAT_Y444:
    return LHNJ_CSS_444;
  default:
    return -1;
  }
}

/* nvJPEG's encoder status as a message: "nvJPEG encoder: what: status". */
static int encoder_fail(int status, const char *what)
{
  return lh_set_error(status == LHNJ_STATUS_ALLOCATOR_FAILURE ? LH_ERROR_NO_MEMORY : LH_ERROR_CUDA,
                      "nvJPEG encoder: %s: %s", what, lhnj_status_name(status));
}

int lhio_gpu_jpeg_encode(LhioGpuJpeg *d, const LhFrame *frame, int quality, bool progressive,
                         LhioEncoded *out)
{
  memset(out, 0, sizeof *out);
  int subsampling = subsampling_of(frame->format);
  if (subsampling < 0) {
    const char *name = lh_format_name(frame->format);
    return lh_set_error(LH_ERROR_UNSUPPORTED, "nvJPEG encoder: %s frames are not encoded here",
                        name ? name : "unknown");
  }
  if (frame->memory != LH_MEMORY_CUDA || !frame->planes[0])
    return lh_set_error(LH_ERROR_INVALID_ARGUMENT,
                        "nvJPEG encoder: the frame is not in CUDA device memory");
  if (quality < 1 || quality > 100)
    return lh_set_error(LH_ERROR_INVALID_ARGUMENT, "nvJPEG encoder: quality %d is not in 1..100",
                        quality);
  int status = encoder_ready(d);
  if (status < 0)
    return status;
  const LhnjApi *nj = d->nj;
  /* Baseline with the standard Huffman tables, as libjpeg-turbo's
   * jpeg_set_defaults writes them on the CPU path, or progressive with
   * optimized tables, which libjpeg-turbo's progressive mode always
   * computes: files of the same kind either way.  Every parameter is set
   * on every call, as the parameters serve each frame in turn. */
  int nj_status = nj->EncoderParamsSetQuality(d->encoder_params, quality, d->stream);
  if (nj_status == LHNJ_STATUS_SUCCESS)
    nj_status = nj->EncoderParamsSetSamplingFactors(d->encoder_params, subsampling, d->stream);
  if (nj_status == LHNJ_STATUS_SUCCESS)
    nj_status = nj->EncoderParamsSetEncoding(d->encoder_params,
                                             progressive ? LHNJ_ENCODING_PROGRESSIVE_DCT_HUFFMAN
                                                         : LHNJ_ENCODING_BASELINE_DCT,
                                             d->stream);
  if (nj_status == LHNJ_STATUS_SUCCESS)
    nj_status = nj->EncoderParamsSetOptimizedHuffman(d->encoder_params, progressive, d->stream);
  if (nj_status != LHNJ_STATUS_SUCCESS)
    return encoder_fail(nj_status, "parameters");
  LhnjImage source;
  memset(&source, 0, sizeof source);
  int planes = subsampling == LHNJ_CSS_GRAY ? 1 : 3;
  for (int c = 0; c < planes; c++) {
    source.channel[c] = frame->planes[c];
    source.pitch[c] = frame->strides[c];
  }
  nj_status = nj->EncodeYUV(d->hybrid, d->encoder_state, d->encoder_params, &source, subsampling,
                            frame->width, frame->height, d->stream);
  if (nj_status != LHNJ_STATUS_SUCCESS) {
    cudaGetLastError();
    return encoder_fail(nj_status, "encoding");
  }
  /* The length first, then the bytes, each once the work before is done
   * (as NVIDIA's samples do). */
  size_t length = 0;
  nj_status = nj->EncodeRetrieveBitstream(d->hybrid, d->encoder_state, NULL, &length, d->stream);
  cudaError_t error = cudaStreamSynchronize(d->stream);
  if (nj_status != LHNJ_STATUS_SUCCESS || error != cudaSuccess || length == 0) {
    cudaGetLastError();
    return error != cudaSuccess
               ? cuda_fail(error, "encoding")
               : encoder_fail(nj_status != LHNJ_STATUS_SUCCESS ? nj_status
                                                               : LHNJ_STATUS_EXECUTION_FAILED,
                              "the encoded size");
  }
  uint8_t *data = malloc(length);
  if (!data)
    return lh_set_error(LH_ERROR_NO_MEMORY, "out of memory for an encoded JPEG of %zu bytes",
                        length);
  nj_status = nj->EncodeRetrieveBitstream(d->hybrid, d->encoder_state, data, &length, d->stream);
  error = cudaStreamSynchronize(d->stream);
  if (nj_status != LHNJ_STATUS_SUCCESS || error != cudaSuccess) {
    free(data);
    cudaGetLastError();
    return error != cudaSuccess ? cuda_fail(error, "encoding")
                                : encoder_fail(nj_status, "retrieving the file");
  }
  out->type = LHIO_FILE_JPEG;
  out->data = data;
  out->size = length;
  return LH_OK;
}
