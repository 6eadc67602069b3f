/* gpu-jpeg.c: decoding the luma of JPEG batches into device memory with
 * nvJPEG: the hardware backend (NVJPG engines) for the files it takes, in
 * one batched call, and the hybrid backend for the rest, one by one. */
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
  LhnjStream parsed;  /* headers, for the hardware backend's verdict */
  int hardware_batch; /* the batch size hardware_state was set up for; 0: none */
  LhnjState hybrid_state;
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
  bool made;
  int device;
  int status;        /* of making the first handle: 0, or the LhStatus */
  int hybrid_status; /* of making the hybrid one */
  char why[160];
  LhnjHandle hardware;
  LhnjHandle hybrid;
} DeviceHandles;

static pthread_mutex_t handles_lock = PTHREAD_MUTEX_INITIALIZER;
static DeviceHandles device_handles[MAX_DEVICES];

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
 * engine takes every file, a run never makes it.  Under handles_lock. */
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
  pthread_mutex_lock(&handles_lock);
  DeviceHandles *h = &device_handles[device];
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
  pthread_mutex_unlock(&handles_lock);
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
  pthread_mutex_lock(&handles_lock);
  for (int i = 0; i < MAX_DEVICES; i++) {
    DeviceHandles *h = &device_handles[i];
    if (h->hardware)
      nj->Destroy(h->hardware);
    if (h->hybrid)
      nj->Destroy(h->hybrid);
    memset(h, 0, sizeof *h);
  }
  pthread_mutex_unlock(&handles_lock);
}

/* The decoder's hybrid backend, made on first need: the device's handle,
 * shared, and a state of its own. */
static int hybrid_ready(LhioGpuJpeg *d)
{
  if (d->hybrid_state)
    return LH_OK;
  pthread_mutex_lock(&handles_lock);
  int status = make_hybrid(d->nj, d->handles, d->handles->device);
  d->hybrid = d->handles->hybrid;
  pthread_mutex_unlock(&handles_lock);
  if (status < 0)
    return lh_set_error(status, "%s", d->handles->why);
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

/* Device room for n planes of the jobs' sizes; planes grow, never shrink,
 * so that a run of like-sized photographs allocates once. */
static int reserve_slots(LhioGpuJpeg *d, LhioGpuJpegJob *jobs, int n)
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
    size_t pitch = ((size_t)info->width + PITCH_ALIGN - 1) / PITCH_ALIGN * PITCH_ALIGN;
    /* nvJPEG may write whole MCUs, up to 32 rows high and wide, past the
     * image's last row (seen with 4:1:1 files a few rows high, whose rows
     * landed in the next plane): room for them. */
    size_t rows = ((size_t)info->height + MCU_ROWS - 1) / MCU_ROWS * MCU_ROWS;
    size_t bytes = pitch * rows;
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
  }
  return LH_OK;
}

static LhnjImage destination_of(const LhioGpuJpegJob *job)
{
  LhnjImage image;
  memset(&image, 0, sizeof image);
  image.channel[0] = job->luma;
  image.pitch[0] = job->pitch;
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

/* The hardware backend's batched call over the jobs listed in which. */
static int decode_on_hardware(LhioGpuJpeg *d, LhioGpuJpegJob *jobs, const int *which, int n)
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
    status = LHNJ_STATUS_SUCCESS;
    if (d->hardware_batch != n) {
      status = d->nj->DecodeBatchedInitialize(d->hardware, d->hardware_state, n, 1, LHNJ_OUTPUT_Y);
      d->hardware_batch = status == LHNJ_STATUS_SUCCESS ? n : 0;
    }
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

int lhio_gpu_jpeg_decode_luma(LhioGpuJpeg *d, LhioGpuJpegJob *jobs, int n)
{
  if (n <= 0)
    return 0;
  int status = reserve_slots(d, jobs, n);
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
    int nj_status = decode_on_hardware(d, jobs, on_hardware, n_hardware);
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
                                    job->encoded->size, LHNJ_OUTPUT_Y, &destination, d->stream);
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
