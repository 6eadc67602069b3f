/* cuda-frames.cu: a CUDA application that calls lumahist on NV12 frames in its
 * own device memory, on its own stream, and checks every number and every
 * equalized pixel against lumahist's CPU backend on the same frames.
 *
 *   cuda-frames [--width W] [--height H] [--frames N]
 *
 * Each frame is written by a kernel of the application into pitched device
 * memory (the Y and UV planes allocated apart, as a decoder might), then on
 * the same stream, without a synchronization in between, lumahist analyses it,
 * equalizes it by CLAHE into a second frame and globally in place.  Exits 0
 * when the GPU and the CPU agree bit for bit, 1 when not, and 77 when there is
 * no usable CUDA device.
 *
 * Build: nvcc cuda-frames.cu $(pkg-config --cflags --libs lumahist) */

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include <cuda_runtime.h>
#include <lumahist.h>

#define SKIP 77

/* Stops on a failed CUDA call, saying which and where. */
#define CUDA_OK(call)                                                                              \
  do {                                                                                             \
    cudaError_t error_ = (call);                                                                   \
    if (error_ != cudaSuccess) {                                                                   \
      fprintf(stderr, "cuda-frames: %s:%d: %s: %s\n", __FILE__, __LINE__, #call,                   \
              cudaGetErrorString(error_));                                                         \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)

/* Stops on a failed lumahist call, with the library's message. */
#define LH_OK_OR_DIE(call)                                                                         \
  do {                                                                                             \
    int status_ = (call);                                                                          \
    if (status_ < 0) {                                                                             \
      fprintf(stderr, "cuda-frames: %s:%d: %s: %s: %s\n", __FILE__, __LINE__, #call,               \
              lh_status_name(status_), lh_last_error());                                           \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)

/* A dim, low-contrast picture that moves with t: soft diagonal bands with a
 * brighter disc, plus a fixed pseudo-random grain; chroma a slow gradient. */
__global__ void fill_nv12(unsigned char *y_plane, size_t y_pitch, unsigned char *uv_plane,
                          size_t uv_pitch, int width, int height, int t)
{
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= width || y >= height)
    return;
  unsigned grain = ((unsigned)x * 73856093u) ^ ((unsigned)y * 19349663u);
  int band = ((x + y + 8 * t) / 16) % 24;
  int dx = x - (width / 4 + 6 * t) % width, dy = y - height / 2;
  int disc = dx * dx + dy * dy < height * height / 16 ? 30 : 0;
  y_plane[(size_t)y * y_pitch + x] = (unsigned char)(40 + band + disc + (grain >> 28));
  if (x % 2 == 0 && y % 2 == 0) {
    unsigned char *uv = uv_plane + (size_t)(y / 2) * uv_pitch + x;
    uv[0] = (unsigned char)(96 + 64 * x / width);
    uv[1] = (unsigned char)(160 - 64 * y / height);
  }
}

/* An NV12 frame in device memory, its planes allocated apart, and a host
 * copy of it laid out the same way for the CPU backend. */
struct Nv12 {
  LhFrame device;
  LhFrame host;
  size_t row_bytes[2];
  int rows[2];
};

static void nv12_alloc(Nv12 *f, int width, int height)
{
  memset(f, 0, sizeof *f);
  f->row_bytes[0] = (size_t)width;
  f->rows[0] = height;
  f->row_bytes[1] = 2 * (size_t)((width + 1) / 2);
  f->rows[1] = (height + 1) / 2;
  f->device.format = f->host.format = LH_FORMAT_NV12;
  f->device.width = f->host.width = width;
  f->device.height = f->host.height = height;
  f->device.memory = LH_MEMORY_CUDA;
  f->host.memory = LH_MEMORY_HOST;
  for (int p = 0; p < 2; p++) {
    CUDA_OK(cudaMallocPitch(&f->device.planes[p], &f->device.strides[p], f->row_bytes[p],
                            (size_t)f->rows[p]));
    /* Pinned, so that the copies back are truly asynchronous. */
    f->host.strides[p] = f->row_bytes[p];
    CUDA_OK(cudaMallocHost(&f->host.planes[p], f->row_bytes[p] * (size_t)f->rows[p]));
  }
}

static void nv12_free(Nv12 *f)
{
  for (int p = 0; p < 2; p++) {
    cudaFree(f->device.planes[p]);
    cudaFreeHost(f->host.planes[p]);
  }
}

/* Queues the copy of the device frame into the host one on stream. */
static void nv12_download(Nv12 *f, cudaStream_t stream)
{
  for (int p = 0; p < 2; p++)
    CUDA_OK(cudaMemcpy2DAsync(f->host.planes[p], f->host.strides[p], f->device.planes[p],
                              f->device.strides[p], f->row_bytes[p], (size_t)f->rows[p],
                              cudaMemcpyDeviceToHost, stream));
}

/* Whether the two host frames hold the same pixels (plane 0 only, or both). */
static bool same_pixels(const Nv12 *a, const LhFrame *b, int planes)
{
  for (int p = 0; p < planes; p++)
    for (int r = 0; r < a->rows[p]; r++)
      if (memcmp((const unsigned char *)a->host.planes[p] + (size_t)r * a->host.strides[p],
                 (const unsigned char *)b->planes[p] + (size_t)r * b->strides[p],
                 a->row_bytes[p]) != 0)
        return false;
  return true;
}

/* Every field of two analyses, compared exactly; prints the first that differs. */
static bool same_stats(const LhStats *a, const LhStats *b)
{
  const char *field = NULL;
  if (a->count != b->count)
    field = "count";
  else if (a->mean != b->mean || a->stddev != b->stddev)
    field = "mean or stddev";
  else if (a->min != b->min || a->max != b->max || a->median != b->median)
    field = "min, max or median";
  else if (a->clipped_low_count != b->clipped_low_count ||
           a->clipped_high_count != b->clipped_high_count ||
           a->below_legal_count != b->below_legal_count ||
           a->above_legal_count != b->above_legal_count)
    field = "clipping counts";
  else if (a->n_percentiles != b->n_percentiles ||
           memcmp(a->percentile_value, b->percentile_value,
                  sizeof a->percentile_value[0] * (size_t)a->n_percentiles) != 0)
    field = "percentiles";
  else if (a->n_bins != b->n_bins ||
           memcmp(a->histogram, b->histogram, sizeof a->histogram[0] * a->n_bins) != 0)
    field = "histogram";
  if (field)
    printf("  GPU and CPU differ in the %s\n", field);
  return field == NULL;
}

static double seconds(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
  int width = 1920, height = 1080, frames = 8;
  for (int i = 1; i < argc; i++) {
    if (i + 1 < argc && strcmp(argv[i], "--width") == 0)
      width = atoi(argv[++i]);
    else if (i + 1 < argc && strcmp(argv[i], "--height") == 0)
      height = atoi(argv[++i]);
    else if (i + 1 < argc && strcmp(argv[i], "--frames") == 0)
      frames = atoi(argv[++i]);
    else {
      fprintf(stderr, "usage: cuda-frames [--width W] [--height H] [--frames N]\n");
      return 2;
    }
  }
  if (width < 1 || height < 1 || frames < 1) {
    fprintf(stderr, "cuda-frames: width, height and frames must be at least 1\n");
    return 2;
  }

  /* The application chooses the device; lumahist works on whichever is
   * current and never changes it. */
  int devices = 0;
  cudaError_t error = cudaGetDeviceCount(&devices);
  if (error != cudaSuccess || devices == 0) {
    printf("SKIP: no usable CUDA device (%s)\n",
           error != cudaSuccess ? cudaGetErrorString(error) : "none found");
    return SKIP;
  }
  CUDA_OK(cudaSetDevice(0));
  cudaDeviceProp prop;
  CUDA_OK(cudaGetDeviceProperties(&prop, 0));

  LhContext *gpu = NULL, *cpu = NULL;
  int status = lh_context_new(LH_BACKEND_CUDA, &gpu);
  if (status == LH_ERROR_NO_DEVICE || status == LH_ERROR_UNSUPPORTED) {
    printf("SKIP: lumahist's CUDA backend cannot run here: %s\n", lh_last_error());
    return SKIP;
  }
  LH_OK_OR_DIE(status);
  LH_OK_OR_DIE(lh_context_new(LH_BACKEND_CPU, &cpu));

  /* The application's own stream: its kernel and lumahist's work queue on it
   * in order, so lumahist reads each frame only once it is written. */
  cudaStream_t stream;
  CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  LH_OK_OR_DIE(lh_context_set_stream(gpu, stream));

  Nv12 frame, clahe;
  nv12_alloc(&frame, width, height);
  nv12_alloc(&clahe, width, height);

  LhOptions options;
  lh_options_init(&options);
  LH_OK_OR_DIE(lh_options_set_percentiles(&options, "1,50,99"));
  LhEqualizeOptions global, adaptive;
  lh_equalize_options_init(&global);
  lh_equalize_options_init(&adaptive);
  adaptive.mode = LH_EQUALIZE_CLAHE;
  adaptive.clip_limit = 4;

  /* The CPU's frames: a copy of the original, equalized in place and into clahe_out. */
  LhFrame original = frame.host, clahe_out = clahe.host;
  for (int p = 0; p < 2; p++) {
    original.planes[p] = malloc(frame.row_bytes[p] * (size_t)frame.rows[p]);
    clahe_out.planes[p] = malloc(clahe.row_bytes[p] * (size_t)clahe.rows[p]);
    if (!original.planes[p] || !clahe_out.planes[p]) {
      fprintf(stderr, "cuda-frames: out of memory\n");
      return 1;
    }
  }

  printf("%s: %d frames of %dx%d NV12, Y pitch %zu, UV pitch %zu bytes\n", prop.name, frames, width,
         height, frame.device.strides[0], frame.device.strides[1]);
  printf("%5s %8s %8s %4s %6s %4s  %s\n", "frame", "mean", "stddev", "P1", "median", "P99",
         "GPU = CPU");

  bool all_equal = true;
  dim3 block(32, 8);
  dim3 grid((unsigned)(width + 31) / 32, (unsigned)(height + 7) / 8);
  for (int t = 0; t < frames; t++) {
    fill_nv12<<<grid, block, 0, stream>>>(
        (unsigned char *)frame.device.planes[0], frame.device.strides[0],
        (unsigned char *)frame.device.planes[1], frame.device.strides[1], width, height, t);
    CUDA_OK(cudaGetLastError());
    nv12_download(&frame, stream); /* the original, for the CPU */

    LhStats gpu_stats, cpu_stats;
    lh_stats_init(&gpu_stats);
    lh_stats_init(&cpu_stats);
    LH_OK_OR_DIE(lh_analyze(gpu, &frame.device, &options, &gpu_stats));
    LH_OK_OR_DIE(lh_equalize(gpu, &frame.device, &clahe.device, &adaptive));
    LH_OK_OR_DIE(lh_equalize(gpu, &frame.device, &frame.device, &global));
    CUDA_OK(cudaStreamSynchronize(stream));
    /* The host copy of the original was queued before the equalization, so it
     * holds the frame as the kernel wrote it. */
    for (int p = 0; p < 2; p++)
      memcpy(original.planes[p], frame.host.planes[p], frame.row_bytes[p] * (size_t)frame.rows[p]);
    nv12_download(&frame, stream);
    nv12_download(&clahe, stream);
    CUDA_OK(cudaStreamSynchronize(stream));

    /* The same work on the CPU, on the same bytes. */
    LH_OK_OR_DIE(lh_analyze(cpu, &original, &options, &cpu_stats));
    LH_OK_OR_DIE(lh_equalize(cpu, &original, &clahe_out, &adaptive));
    LH_OK_OR_DIE(lh_equalize(cpu, &original, &original, &global));

    bool equal = same_stats(&gpu_stats, &cpu_stats);
    if (!same_pixels(&clahe, &clahe_out, 2)) {
      printf("  the CLAHE frames differ\n");
      equal = false;
    }
    /* The global equalization changed Y only; the chroma is still the kernel's. */
    if (!same_pixels(&frame, &original, 2)) {
      printf("  the globally equalized frames differ\n");
      equal = false;
    }
    printf("%5d %8.3f %8.3f %4u %6u %4u  %s\n", t, gpu_stats.mean, gpu_stats.stddev,
           gpu_stats.percentile_value[0], gpu_stats.median, gpu_stats.percentile_value[2],
           equal ? "yes" : "NO");
    all_equal = all_equal && equal;
    lh_stats_clear(&gpu_stats);
    lh_stats_clear(&cpu_stats);
  }

  /* What each call costs on its own, on the last frame (wall time, each call
   * waited for: lh_analyze returns its results, the others are synchronized). */
  const int repeats = 20;
  LhStats stats;
  lh_stats_init(&stats);
  double t0 = seconds();
  for (int i = 0; i < repeats; i++)
    LH_OK_OR_DIE(lh_analyze(gpu, &frame.device, &options, &stats));
  double t1 = seconds();
  for (int i = 0; i < repeats; i++)
    LH_OK_OR_DIE(lh_equalize(gpu, &frame.device, &clahe.device, &global));
  CUDA_OK(cudaStreamSynchronize(stream));
  double t2 = seconds();
  for (int i = 0; i < repeats; i++)
    LH_OK_OR_DIE(lh_equalize(gpu, &frame.device, &clahe.device, &adaptive));
  CUDA_OK(cudaStreamSynchronize(stream));
  double t3 = seconds();
  lh_stats_clear(&stats);
  printf("GPU, per frame: analysis %.3f ms, global equalization %.3f ms, CLAHE %.3f ms\n",
         1e3 * (t1 - t0) / repeats, 1e3 * (t2 - t1) / repeats, 1e3 * (t3 - t2) / repeats);

  for (int p = 0; p < 2; p++) {
    free(original.planes[p]);
    free(clahe_out.planes[p]);
  }
  nv12_free(&frame);
  nv12_free(&clahe);
  lh_context_free(gpu);
  lh_context_free(cpu);
  CUDA_OK(cudaStreamDestroy(stream));
  printf(all_equal ? "all frames: the GPU and the CPU agree bit for bit\n"
                   : "FAIL: the GPU and the CPU differ\n");
  return all_equal ? 0 : 1;
}
