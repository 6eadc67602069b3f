/* cuda/equalize.c: equalization, CLAHE, temporal windows and overlays on the
 * CUDA backend: host frames staged through pinned memory, device frames
 * rewritten where they are, the kernels of equalize.cu, clahe.cu and
 * overlay.cu queued on the backend's stream. */
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "cuda/backend.h"
#include "lh-kernels.h"

/* Offsets of planes inside the device and staging buffers. */
#define ALIGNMENT 256

typedef struct {
  LhkDevice device;
  LhiCudaBuffer frame;     /* device copy of a host frame's planes */
  LhiCudaBuffer staging;   /* pinned host memory those copies go through */
  LhiCudaBuffer histogram; /* 64-bit luma histogram, zero between frames */
  LhiCudaBuffer scratch;   /* lhk_histogram's scratch, zero between frames */
  LhiCudaBuffer tiles;     /* CLAHE tile histograms, zero between frames */
  LhiCudaBuffer cut;       /* CLAHE's 64-bit scene-cut histogram, zero between frames */
  LhiCudaBuffer luts;      /* 16-bit LUT entries */
  LhiCudaBuffer columns;   /* overlay bar heights, then column flags */
  /* A failure in the middle of a frame may leave the buffers that are kept
   * zero dirty. */
  bool dirty;
  const void *place; /* the CUDA context of the state (a temporal window's key) */
} CudaEqualize;

void lhi_cuda_equalize_free(void *data)
{
  CudaEqualize *e = data;
  if (!e)
    return;
  lhi_cuda_release(&e->frame, false);
  lhi_cuda_release(&e->staging, true);
  lhi_cuda_release(&e->histogram, false);
  lhi_cuda_release(&e->scratch, false);
  lhi_cuda_release(&e->tiles, false);
  lhi_cuda_release(&e->cut, false);
  lhi_cuda_release(&e->luts, false);
  lhi_cuda_release(&e->columns, false);
  free(e);
}

/* This context's buffers, made on first use; cleared again after a failure. */
static int open_extra(void *state, CudaEqualize **out)
{
  void **slot = lhi_cuda_equalize_slot(state);
  CudaEqualize *e = *slot;
  if (!e) {
    e = calloc(1, sizeof *e);
    if (!e)
      return lhi_error(LH_ERROR_NO_MEMORY, "out of memory for the CUDA equalizer");
    cudaError_t error = lhk_device_init(&e->device);
    if (error != cudaSuccess) {
      free(e);
      return lhi_cuda_failure(error, "lhk_device_init", __FILE__, __LINE__);
    }
    e->place = lhi_cuda_place(state)->context;
    *slot = e;
  }
  if (e->dirty) {
    cudaStream_t stream = lhi_cuda_stream(state);
    LHI_CUDA_CHECK(cudaStreamSynchronize(stream));
    LhiCudaBuffer *zeroed[] = {&e->histogram, &e->scratch, &e->tiles, &e->cut};
    for (size_t i = 0; i < sizeof zeroed / sizeof *zeroed; i++)
      if (zeroed[i]->data)
        LHI_CUDA_CHECK(cudaMemsetAsync(zeroed[i]->data, 0, zeroed[i]->size, stream));
    e->dirty = false;
  }
  *out = e;
  return LH_OK;
}

/* ------------------------------------------------------------------------ */
/* Host frames: every plane packed at a 16-byte pitch into one device buffer */

typedef struct {
  int n_planes;
  size_t row_bytes[3];
  int rows[3];
  size_t pitch[3];
  size_t offset[3];
  size_t total;
} Layout;

/* The frame's own bytes in a layout: its rows, without the pitch's padding. */
static uint64_t layout_frame_bytes(const Layout *layout)
{
  uint64_t bytes = 0;
  for (int p = 0; p < layout->n_planes; p++)
    bytes += (uint64_t)layout->row_bytes[p] * (uint64_t)layout->rows[p];
  return bytes;
}

static void lay_out(const LhFrame *frame, bool with_chroma, Layout *layout)
{
  const LhiFormatInfo *info = lhi_format_info(frame->format);
  memset(layout, 0, sizeof *layout);
  layout->n_planes = with_chroma && info->is_yuv ? info->n_planes : 1;
  layout->row_bytes[0] = lhi_format_row_bytes(info, frame->width);
  layout->rows[0] = frame->height;
  for (int p = 1; p < layout->n_planes; p++)
    lhi_chroma_shape(frame, &layout->row_bytes[p], &layout->rows[p]);
  for (int p = 0; p < layout->n_planes; p++) {
    layout->pitch[p] = lhi_cuda_align_up(layout->row_bytes[p], 16);
    layout->offset[p] = layout->total;
    layout->total =
        lhi_cuda_align_up(layout->total + layout->pitch[p] * (size_t)layout->rows[p], ALIGNMENT);
  }
}

/* Host frames in page-locked memory (lh_host_register; the tool decodes
 * into such buffers) are copied by the DMA engines straight from and to
 * their rows; others go through the staging buffer, one memcpy each way. */
static bool frame_is_pinned(const LhFrame *frame, const Layout *layout)
{
  for (int p = 0; p < layout->n_planes; p++)
    if (!lhi_cuda_is_pinned_host(frame->planes[p]))
      return false;
  return true;
}

/* Copies a host frame's planes into e->frame and points *device at them;
 * the call's clock starts once the host has staged them, and the copy to the
 * device is its first interval. */
static int upload(CudaEqualize *e, LhiCudaClock *clock, const LhFrame *frame, const Layout *layout,
                  LhFrame *device, cudaStream_t stream)
{
  const bool pinned = frame_is_pinned(frame, layout);
  int status = lhi_cuda_device_reserve(&e->frame, layout->total, false, stream);
  if (status == LH_OK && !pinned)
    status = lhi_cuda_host_reserve(&e->staging, layout->total);
  if (status < 0)
    return status;
  if (!pinned) {
    /* The staging buffer may still feed the previous frame's copy. */
    LHI_CUDA_CHECK(cudaStreamSynchronize(stream));
  }
  *device = *frame;
  device->memory = LH_MEMORY_CUDA;
  for (int p = 0; p < layout->n_planes; p++) {
    device->planes[p] = (uint8_t *)e->frame.data + layout->offset[p];
    device->strides[p] = layout->pitch[p];
    if (pinned)
      continue;
    uint8_t *staged = (uint8_t *)e->staging.data + layout->offset[p];
    for (int y = 0; y < layout->rows[p]; y++)
      memcpy(staged + (size_t)y * layout->pitch[p],
             (const uint8_t *)frame->planes[p] + (size_t)y * frame->strides[p],
             layout->row_bytes[p]);
  }
  if ((status = lhi_cuda_clock_start(clock, stream)) < 0)
    return status;
  if (pinned) {
    for (int p = 0; p < layout->n_planes; p++)
      LHI_CUDA_CHECK(cudaMemcpy2DAsync(device->planes[p], layout->pitch[p], frame->planes[p],
                                       frame->strides[p], layout->row_bytes[p],
                                       (size_t)layout->rows[p], cudaMemcpyHostToDevice, stream));
  } else {
    LHI_CUDA_CHECK(cudaMemcpyAsync(e->frame.data, e->staging.data, layout->total,
                                   cudaMemcpyHostToDevice, stream));
  }
  return lhi_cuda_clock_mark(clock, LHI_SPAN_TRANSFER, layout_frame_bytes(layout), stream);
}

/* The device copy back into a host frame (the clock's last interval),
 * waiting for the stream. */
static int download(CudaEqualize *e, LhiCudaClock *clock, const Layout *layout,
                    const LhFrame *frame, cudaStream_t stream)
{
  const bool pinned = frame_is_pinned(frame, layout);
  if (pinned) {
    for (int p = 0; p < layout->n_planes; p++)
      LHI_CUDA_CHECK(cudaMemcpy2DAsync(frame->planes[p], frame->strides[p],
                                       (const uint8_t *)e->frame.data + layout->offset[p],
                                       layout->pitch[p], layout->row_bytes[p],
                                       (size_t)layout->rows[p], cudaMemcpyDeviceToHost, stream));
  } else {
    const int reserved = lhi_cuda_host_reserve(&e->staging, layout->total);
    if (reserved < 0)
      return reserved;
    LHI_CUDA_CHECK(cudaMemcpyAsync(e->staging.data, e->frame.data, layout->total,
                                   cudaMemcpyDeviceToHost, stream));
  }
  int status = lhi_cuda_clock_mark(clock, LHI_SPAN_TRANSFER, layout_frame_bytes(layout), stream);
  if (status < 0)
    return status;
  LHI_CUDA_CHECK(cudaStreamSynchronize(stream));
  for (int p = 0; !pinned && p < layout->n_planes; p++) {
    const uint8_t *staged = (const uint8_t *)e->staging.data + layout->offset[p];
    for (int y = 0; y < layout->rows[p]; y++)
      memcpy((uint8_t *)frame->planes[p] + (size_t)y * frame->strides[p],
             staged + (size_t)y * layout->pitch[p], layout->row_bytes[p]);
  }
  return LH_OK;
}

/* ------------------------------------------------------------------------ */
/* Temporal windows in device memory                                         */

typedef struct {
  void *device;
  cudaStream_t stream; /* of the last frame */
} DeviceWindow;

static void device_window_free(void *data)
{
  DeviceWindow *w = data;
  if (!w)
    return;
  /* cudaFree waits for the work that uses it; the stream of the last frame
   * may be gone with its context by now. */
  cudaFree(w->device);
  free(w);
}

static void device_window_reset(void *data)
{
  DeviceWindow *w = data;
  /* A zero header restarts the window (its sums are overwritten then). */
  if (cudaMemsetAsync(w->device, 0, LHK_TEMPORAL_HEADER_BYTES, w->stream) == cudaSuccess)
    cudaStreamSynchronize(w->stream);
}

static int device_window_query(void *data, int *frames, uint64_t *cuts)
{
  DeviceWindow *w = data;
  uint8_t header[LHK_TEMPORAL_HEADER_BYTES];
  LHI_CUDA_CHECK(
      cudaMemcpyAsync(header, w->device, sizeof header, cudaMemcpyDeviceToHost, w->stream));
  LHI_CUDA_CHECK(cudaStreamSynchronize(w->stream));
  unsigned long long c;
  lhk_temporal_header_counts(header, frames, &c);
  *cuts = c;
  return LH_OK;
}

static const LhiTemporalOps device_window_ops = {
    .free = device_window_free,
    .reset = device_window_reset,
    .query = device_window_query,
};

static int device_window(LhTemporal *temporal, const LhiTemporalKey *key, size_t entries,
                         cudaStream_t stream, DeviceWindow **out)
{
  DeviceWindow *w = lhi_temporal_data(temporal, key);
  if (!w) {
    w = calloc(1, sizeof *w);
    if (!w)
      return lhi_error(LH_ERROR_NO_MEMORY, "out of memory for a temporal window");
    size_t bytes = lhk_temporal_bytes(temporal->window, entries);
    cudaError_t error = cudaMalloc(&w->device, bytes);
    if (error == cudaSuccess)
      error = cudaMemsetAsync(w->device, 0, bytes, stream);
    if (error != cudaSuccess) {
      cudaFree(w->device);
      free(w);
      return lhi_cuda_failure(error, "a temporal window", __FILE__, __LINE__);
    }
    w->stream = stream;
    lhi_temporal_attach(temporal, key, &device_window_ops, w);
  }
  w->stream = stream;
  *out = w;
  return LH_OK;
}

/* ------------------------------------------------------------------------ */
/* Equalization                                                              */

static LhkPlane plane_of(const LhiEqualizeJob *job, const LhFrame *in, const LhFrame *out)
{
  const LhiFormatInfo *info = lhi_format_info(in->format);
  LhkPlane p;
  memset(&p, 0, sizeof p);
  p.in = in->planes[0];
  p.out = out->planes[0];
  p.in_stride = in->strides[0];
  p.out_stride = out->strides[0];
  p.width = (uint32_t)in->width;
  p.height = (uint32_t)in->height;
  lhi_cuda_luma_word(in->format, &p.shift, &p.keep, &p.swap);
  p.max_value = (1u << job->bit_depth) - 1;
  if (info->r >= 0) {
    p.weights[info->r] = job->weights.kr;
    p.weights[info->g] = job->weights.kg;
    p.weights[info->b] = job->weights.kb;
    p.luma_one = job->weights.one;
    p.swap_bytes = lhi_format_big_endian_words(in->format);
  }
  return p;
}

/* The luma histogram of the plane into e->histogram (zero before), in bands
 * of rows small enough for lhk_histogram's 32-bit counters. */
static int frame_histogram(CudaEqualize *e, LhkPixel pixel, const LhkPlane *p, uint32_t bins,
                           cudaStream_t stream)
{
  int status = lhi_cuda_device_reserve(&e->histogram, bins * sizeof(uint64_t), true, stream);
  if (status == LH_OK)
    status =
        lhi_cuda_device_reserve(&e->scratch, lhk_histogram_scratch_bytes(bins, 1), true, stream);
  if (status < 0)
    return status;
  uint64_t band_rows = ((1ull << 31) - 1) / ((uint64_t)p->width + 1);
  for (uint32_t y = 0; y < p->height; y += (uint32_t)band_rows) {
    LhkImage image;
    memset(&image, 0, sizeof image);
    image.data = (const uint8_t *)p->in + (size_t)y * p->in_stride;
    image.stride = p->in_stride;
    image.width = p->width;
    image.height = p->height - y < band_rows ? p->height - y : (uint32_t)band_rows;
    image.shift = p->shift;
    image.keep = p->keep;
    image.swap = p->swap;
    image.max_value = p->max_value;
    memcpy(image.weights, p->weights, sizeof image.weights);
    image.luma_one = p->luma_one;
    image.swap_bytes = p->swap_bytes;
    LHI_CUDA_CHECK(lhk_histogram(&e->device, pixel, bins, &image, 1, e->histogram.data, 1,
                                 e->scratch.data, stream));
  }
  return LH_OK;
}

/* LH_CHROMA_SCALE: out's chroma from in's, before in's Y is rewritten (the
 * kernel makes the new luma from luts itself). */
static int scale_chroma_on_device(const LhiEqualizeJob *job, const LhFrame *in, const LhFrame *out,
                                  const uint16_t *luts, cudaStream_t stream)
{
  const LhiFormatInfo *info = lhi_format_info(in->format);
  LhkChroma c;
  memset(&c, 0, sizeof c);
  c.luma = in->planes[0];
  c.luma_stride = in->strides[0];
  c.width = (uint32_t)in->width;
  c.height = (uint32_t)in->height;
  for (int k = 0; k < 2; k++) {
    int plane;
    size_t offset, step;
    lhi_chroma_sample_layout(in, k, &plane, &offset, &step);
    c.in[k] = (const uint8_t *)in->planes[plane] + offset;
    c.out[k] = (uint8_t *)out->planes[plane] + offset;
    c.in_stride[k] = in->strides[plane];
    c.out_stride[k] = out->strides[plane];
    c.step = (uint32_t)step;
  }
  c.x_shift = (uint32_t)info->chroma_x_shift;
  c.y_shift = (uint32_t)info->chroma_y_shift;
  if (job->kind == LHI_EQUALIZE_CLAHE)
    LHI_CUDA_CHECK(lhk_scale_chroma_clahe(&c, &job->grid, luts, stream));
  else
    LHI_CUDA_CHECK(lhk_scale_chroma_lut(&c, luts, stream));
  return LH_OK;
}

static int equalize_on_device(CudaEqualize *e, LhiEqualizeJob *job, const LhFrame *in,
                              const LhFrame *out, cudaStream_t stream)
{
  const LhkPixel pixel = lhi_cuda_pixel_of(in->format);
  const LhkPlane plane = plane_of(job, in, out);
  const uint32_t bins = 1u << job->bit_depth;
  const LhiClaheGrid *grid = &job->grid;
  const size_t n_tiles =
      job->kind == LHI_EQUALIZE_CLAHE ? (size_t)grid->tiles_x * (size_t)grid->tiles_y : 1;
  const size_t entries = n_tiles * bins;
  int status = lhi_cuda_device_reserve(&e->luts, entries * sizeof(uint16_t), false, stream);
  if (status < 0)
    return status;
  uint16_t *luts = e->luts.data;

  DeviceWindow *window = NULL;
  if (job->temporal && job->kind != LHI_EQUALIZE_LUT) {
    LhiTemporalKey key = lhi_temporal_key(&lhi_cuda_backend, job, in->width, in->height);
    key.place = e->place;
    if ((status = device_window(job->temporal, &key, entries, stream, &window)) < 0)
      return status;
  }
  const int window_frames = job->temporal ? job->temporal->window : 1;
  const uint32_t threshold = job->temporal ? job->temporal->cut_threshold : 0;

  switch (job->kind) {
  case LHI_EQUALIZE_LUT:
    LHI_CUDA_CHECK(
        cudaMemcpyAsync(luts, job->lut, bins * sizeof(uint16_t), cudaMemcpyHostToDevice, stream));
    if (job->scale_chroma && (status = scale_chroma_on_device(job, in, out, luts, stream)) < 0)
      return status;
    LHI_CUDA_CHECK(lhk_apply_lut(pixel, &plane, luts, bins, stream));
    break;
  case LHI_EQUALIZE_GLOBAL:
    if ((status = frame_histogram(e, pixel, &plane, bins, stream)) < 0)
      return status;
    if (window)
      LHI_CUDA_CHECK(lhk_temporal_decide(window->device, e->histogram.data, bins, 0, window_frames,
                                         threshold, stream));
    LHI_CUDA_CHECK(lhk_equalize_lut(e->histogram.data, bins, job->black, job->white, luts, stream));
    if (window)
      LHI_CUDA_CHECK(lhk_temporal_smooth(window->device, luts, entries, stream));
    if (job->scale_chroma && (status = scale_chroma_on_device(job, in, out, luts, stream)) < 0)
      return status;
    LHI_CUDA_CHECK(lhk_apply_lut(pixel, &plane, luts, bins, stream));
    break;
  case LHI_EQUALIZE_CLAHE:
    if ((status = lhi_cuda_device_reserve(&e->tiles, entries * sizeof(uint32_t), true, stream)) <
            0 ||
        (window &&
         (status = lhi_cuda_device_reserve(&e->cut, bins * sizeof(uint64_t), true, stream)) < 0))
      return status;
    LHI_CUDA_CHECK(
        lhk_clahe_histograms(&e->device, pixel, &plane, grid, bins, e->tiles.data, stream));
    LHI_CUDA_CHECK(
        lhk_clahe_luts(grid, bins, e->tiles.data, luts, window ? e->cut.data : NULL, stream));
    if (window) {
      LHI_CUDA_CHECK(lhk_temporal_decide(window->device, e->cut.data, bins, 1, window_frames,
                                         threshold, stream));
      LHI_CUDA_CHECK(lhk_temporal_smooth(window->device, luts, entries, stream));
    }
    if (job->scale_chroma && (status = scale_chroma_on_device(job, in, out, luts, stream)) < 0)
      return status;
    LHI_CUDA_CHECK(lhk_clahe_apply(pixel, &plane, grid, bins, luts, stream));
    break;
  }
  return LH_OK;
}

/* Device frames: plane 0 copied from in to out. */
static int copy_device_plane0(const LhiEqualizeJob *job, cudaStream_t stream)
{
  LHI_CUDA_CHECK(cudaMemcpy2DAsync(
      job->out.planes[0], job->out.strides[0], job->in.planes[0], job->in.strides[0],
      lhi_format_row_bytes(lhi_format_info(job->in.format), job->in.width), (size_t)job->in.height,
      cudaMemcpyDeviceToDevice, stream));
  return LH_OK;
}

/* Device frames: chroma planes copied when out is another frame. */
static int copy_device_chroma(const LhiEqualizeJob *job, cudaStream_t stream)
{
  const LhiFormatInfo *info = lhi_format_info(job->in.format);
  if (!info->is_yuv || job->in.planes[0] == job->out.planes[0])
    return LH_OK;
  size_t row_bytes;
  int rows;
  lhi_chroma_shape(&job->in, &row_bytes, &rows);
  for (int p = 1; p < info->n_planes; p++)
    if (job->in.planes[p] != job->out.planes[p])
      LHI_CUDA_CHECK(cudaMemcpy2DAsync(job->out.planes[p], job->out.strides[p], job->in.planes[p],
                                       job->in.strides[p], row_bytes, (size_t)rows,
                                       cudaMemcpyDeviceToDevice, stream));
  return LH_OK;
}

/* The end of a call: on the clock when it succeeded, and after a failure,
 * the buffers made clean again on the next call.  Device frames rewritten on
 * the backend's own stream are waited for here, since no caller can wait for
 * that stream (lumahist.h, LH_MEMORY_CUDA): without it, a GStreamer element
 * downstream copied frames that CLAHE was still writing.  On a caller's
 * stream the work is left queued for the caller to order.  Host frames have
 * been waited for by their download. */
static int finish_call(void *state, CudaEqualize *e, cudaStream_t stream, bool device_frame,
                       int status)
{
  LhiCudaClock *clock = lhi_cuda_clock(state);
  if (status == LH_OK && device_frame && lhi_cuda_stream_is_own(state)) {
    cudaError_t error = cudaStreamSynchronize(stream);
    if (error != cudaSuccess)
      status = lhi_cuda_failure(error, "cudaStreamSynchronize", __FILE__, __LINE__);
  } else if (status == LH_OK && device_frame) {
    /* Left queued on the caller's stream, reading this context's buffers. */
    status = lhi_cuda_note_queued(state);
  }
  if (status < 0) {
    lhi_cuda_clock_abandon(clock);
    cudaStreamSynchronize(stream);
    e->dirty = true;
  } else {
    lhi_cuda_clock_end(clock);
  }
  return status;
}

int lhi_cuda_equalize(void *state, LhiEqualizeJob *job)
{
  CudaEqualize *e;
  int status = lhi_cuda_frame_check(lhi_cuda_place(state), &job->in, "the input frame");
  if (status == LH_OK && job->out.planes[0] != job->in.planes[0]) /* not in place */
    status = lhi_cuda_frame_check(lhi_cuda_place(state), &job->out, "the output frame");
  if (status == LH_OK)
    status = open_extra(state, &e);
  if (status < 0)
    return status;
  cudaStream_t stream = lhi_cuda_stream(state);
  LhiCudaClock *clock = lhi_cuda_clock(state);
  if (job->in.memory == LH_MEMORY_CUDA) {
    /* Queued and left running: the clock counts it on a later call. */
    status = lhi_cuda_clock_start(clock, stream);
    const LhFrame *from = &job->in;
    if (status == LH_OK && lhi_format_info(job->in.format)->chroma == LHI_CHROMA_PACKED &&
        job->in.planes[0] != job->out.planes[0]) {
      /* Packed chroma lies beside Y (a last pair of an odd width past the
       * Y the kernels write): the plane copied whole, then Y in place.
       * (v210's kernels read and write whole groups, chroma with Y.) */
      status = copy_device_plane0(job, stream);
      from = &job->out;
    }
    if (status == LH_OK)
      status = equalize_on_device(e, job, from, &job->out, stream);
    if (status == LH_OK && !job->scale_chroma)
      status = copy_device_chroma(job, stream);
    if (status == LH_OK)
      status = lhi_cuda_clock_mark(clock, LHI_SPAN_COMPUTE, 0, stream);
  } else {
    /* Rewritten in place on the device, then copied to out on the host;
     * the chroma planes travel too when they are rewritten. */
    Layout layout;
    LhFrame device;
    lay_out(&job->in, job->scale_chroma, &layout);
    status = upload(e, clock, &job->in, &layout, &device, stream);
    if (status == LH_OK)
      status = equalize_on_device(e, job, &device, &device, stream);
    if (status == LH_OK)
      status = lhi_cuda_clock_mark(clock, LHI_SPAN_COMPUTE, 0, stream);
    if (status == LH_OK)
      status = download(e, clock, &layout, &job->out, stream);
    if (status == LH_OK && !job->scale_chroma)
      lhi_cpu_copy_chroma(NULL, job);
  }
  return finish_call(state, e, stream, job->in.memory == LH_MEMORY_CUDA, status);
}

/* ------------------------------------------------------------------------ */
/* Overlays                                                                  */

static int draw_on_device(CudaEqualize *e, const LhiOverlayJob *job, const LhFrame *frame,
                          cudaStream_t stream)
{
  const LhiFormatInfo *info = lhi_format_info(frame->format);
  const size_t columns =
      (size_t)lhi_overlay_columns(job->orientation, job->panel.width, job->panel.height);
  const size_t heights_bytes = lhi_cuda_align_up(columns * sizeof(uint16_t), 16);
  int status = lhi_cuda_device_reserve(&e->columns, heights_bytes + columns, false, stream);
  if (status < 0)
    return status;
  uint8_t *device_columns = e->columns.data;
  LHI_CUDA_CHECK(cudaMemcpyAsync(device_columns, job->bar_heights, columns * sizeof(uint16_t),
                                 cudaMemcpyHostToDevice, stream));
  LHI_CUDA_CHECK(cudaMemcpyAsync(device_columns + heights_bytes, job->column_flags, columns,
                                 cudaMemcpyHostToDevice, stream));
  LhkOverlay o;
  memset(&o, 0, sizeof o);
  for (int p = 0; p < 3; p++) {
    o.planes[p] = frame->planes[p];
    o.strides[p] = frame->strides[p];
  }
  o.pixel = lhi_cuda_pixel_of(frame->format);
  o.shift = (uint32_t)info->luma_shift;
  o.top = (1u << job->sample_depth) - 1;
  o.rgb_index[0] = info->r;
  o.rgb_index[1] = info->g;
  o.rgb_index[2] = info->b;
  o.alpha_index = info->a;
  o.chroma = info->chroma == LHI_CHROMA_PLANAR        ? 1
             : info->chroma == LHI_CHROMA_SEMI_PLANAR ? 2
             : info->chroma == LHI_CHROMA_PACKED      ? 3
                                                      : 0;
  o.chroma_x_shift = info->chroma_x_shift;
  o.chroma_y_shift = info->chroma_y_shift;
  o.cb_index = info->cb_index;
  o.cr_index = info->cr_index;
  o.luma_offset = info->luma_offset;
  o.big_endian = info->big_endian;
  o.swap_bytes = lhi_format_big_endian_words(frame->format);
  o.frame_width = frame->width;
  o.frame_height = frame->height;
  o.panel_x = job->panel.x;
  o.panel_y = job->panel.y;
  o.panel_width = job->panel.width;
  o.panel_height = job->panel.height;
  o.orientation = job->orientation;
  o.bar_heights = (const uint16_t *)device_columns;
  o.column_flags = device_columns + heights_bytes;
  memcpy(o.inks, job->inks, sizeof o.inks);
  LHI_CUDA_CHECK(lhk_overlay(&o, stream));
  return LH_OK;
}

int lhi_cuda_overlay(void *state, const LhiOverlayJob *job)
{
  CudaEqualize *e;
  int status = lhi_cuda_frame_check(lhi_cuda_place(state), &job->frame, "the frame");
  if (status == LH_OK)
    status = open_extra(state, &e);
  if (status < 0)
    return status;
  cudaStream_t stream = lhi_cuda_stream(state);
  LhiCudaClock *clock = lhi_cuda_clock(state);
  if (job->frame.memory == LH_MEMORY_CUDA) {
    status = lhi_cuda_clock_start(clock, stream);
    if (status == LH_OK)
      status = draw_on_device(e, job, &job->frame, stream);
    if (status == LH_OK)
      status = lhi_cuda_clock_mark(clock, LHI_SPAN_COMPUTE, 0, stream);
  } else {
    Layout layout;
    LhFrame device;
    lay_out(&job->frame, true, &layout);
    status = upload(e, clock, &job->frame, &layout, &device, stream);
    if (status == LH_OK)
      status = draw_on_device(e, job, &device, stream);
    if (status == LH_OK)
      status = lhi_cuda_clock_mark(clock, LHI_SPAN_COMPUTE, 0, stream);
    if (status == LH_OK)
      status = download(e, clock, &layout, &job->frame, stream);
  }
  return finish_call(state, e, stream, job->frame.memory == LH_MEMORY_CUDA, status);
}
