/* devices-test.c: contexts and CUDA devices.  A context works on the device
 * (the CUDA context) it was made on, whatever device is current at each
 * call, and gives the caller's current device back; a frame in another
 * device's memory is refused with a message, and the process's CUDA goes on
 * working (it used to be an illegal address, which ends every CUDA context
 * of the process).  Frames are seeded random gray, 8 and 16-bit, odd sizes
 * and padded rows; results against the CPU backend, bit for bit.  The
 * checks across devices need two GPUs: with one, the program says so and
 * runs the rest.  Exits 77 when no CUDA device is usable. */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "lumahist.h"
#include "test-check.h"

#define SKIP_EXIT 77

/* A gray frame: its samples on the host, and a copy in device `device`'s
 * memory (the current device is left as it was). */
typedef struct {
  LhFormat format;
  int width, height;
  size_t stride;
  uint8_t *host;
  void *device_data;
  int device;
} Gray;

static uint64_t next(uint64_t *state)
{
  *state ^= *state << 13;
  *state ^= *state >> 7;
  *state ^= *state << 17;
  return *state;
}

static Gray gray_make(LhFormat format, int width, int height, int device, uint64_t seed)
{
  const int sample = format == LH_FORMAT_GRAY16 ? 2 : 1;
  Gray g = {format, width, height, (size_t)width * sample + 24, NULL, NULL, device};
  size_t bytes = g.stride * (size_t)height;
  g.host = malloc(bytes);
  for (size_t i = 0; i < bytes; i++)
    g.host[i] = (uint8_t)(next(&seed) >> 24);
  int current = 0;
  cudaGetDevice(&current);
  cudaSetDevice(device);
  if (cudaMalloc(&g.device_data, bytes) != cudaSuccess ||
      cudaMemcpy(g.device_data, g.host, bytes, cudaMemcpyHostToDevice) != cudaSuccess) {
    fprintf(stderr, "cannot make a frame on device %d\n", device);
    exit(1);
  }
  cudaSetDevice(current);
  return g;
}

static void gray_free(Gray *g)
{
  cudaFree(g->device_data); /* any device's pointer: unified addressing */
  free(g->host);
}

static LhFrame frame_of(const Gray *g, bool on_device)
{
  LhFrame f;
  lh_frame_init(&f, g->format, on_device ? LH_MEMORY_CUDA : LH_MEMORY_HOST, g->width, g->height,
                on_device ? g->device_data : (void *)g->host, g->stride);
  return f;
}

static int current_device(void)
{
  int d = -1;
  cudaGetDevice(&d);
  return d;
}

static bool same_stats(const LhStats *a, const LhStats *b)
{
  return a->count == b->count && a->min == b->min && a->max == b->max && a->median == b->median &&
         a->mean == b->mean && a->stddev == b->stddev && a->n_bins == b->n_bins &&
         memcmp(a->histogram, b->histogram, a->n_bins * sizeof *a->histogram) == 0;
}

/* ctx's analysis of g on the device equals the CPU's of its host copy. */
static void check_analysis(LhContext *ctx, LhContext *cpu, const Gray *g, const char *what)
{
  LhStats got, want;
  lh_stats_init(&got);
  lh_stats_init(&want);
  LhFrame on_device = frame_of(g, true), on_host = frame_of(g, false);
  int status = lh_analyze(ctx, &on_device, NULL, &got);
  CHECK(status == LH_OK, "%s: analysis failed", what);
  CHECK(lh_analyze(cpu, &on_host, NULL, &want) == LH_OK, "%s: CPU analysis", what);
  CHECK(status != LH_OK || same_stats(&got, &want), "%s: statistics differ from the CPU's", what);
  lh_stats_clear(&got);
  lh_stats_clear(&want);
}

/* ctx's global equalization of g in place on its device equals the CPU's. */
static void check_equalize(LhContext *ctx, LhContext *cpu, Gray *g, const char *what)
{
  size_t bytes = g->stride * (size_t)g->height;
  uint8_t *want = malloc(bytes), *got = malloc(bytes);
  memcpy(want, g->host, bytes);
  LhFrame on_host, on_device = frame_of(g, true);
  lh_frame_init(&on_host, g->format, LH_MEMORY_HOST, g->width, g->height, want, g->stride);
  CHECK(lh_equalize(cpu, &on_host, &on_host, NULL) == LH_OK, "%s: CPU equalize", what);
  int status = lh_equalize(ctx, &on_device, &on_device, NULL);
  CHECK(status == LH_OK, "%s: equalize failed", what);
  CHECK(cudaDeviceSynchronize() == cudaSuccess, "%s: CUDA after equalize", what);
  cudaMemcpy(got, g->device_data, bytes, cudaMemcpyDeviceToHost);
  int rows_differ = 0;
  const size_t row = (size_t)g->width * (g->format == LH_FORMAT_GRAY16 ? 2 : 1);
  for (int y = 0; y < g->height; y++)
    rows_differ += memcmp(got + y * g->stride, want + y * g->stride, row) != 0;
  CHECK(status != LH_OK || rows_differ == 0, "%s: %d rows differ from the CPU's", what,
        rows_differ);
  cudaMemcpy(g->device_data, g->host, bytes, cudaMemcpyHostToDevice); /* as made */
  free(want);
  free(got);
}

static void one_device(LhContext *cpu)
{
  LhContext *ctx = NULL;
  CHECK(lh_context_new_on_device(LH_BACKEND_CUDA, 0, &ctx) == LH_OK && ctx,
        "a context on device 0");
  if (!ctx)
    return;
  CHECK(lh_context_device(ctx) == 0, "its device: %d", lh_context_device(ctx));
  CHECK(lh_device_current() == current_device(), "lh_device_current");
  Gray g = gray_make(LH_FORMAT_GRAY8, 641, 359, 0, 11);
  CHECK(lh_device_of(g.device_data) == 0, "device memory's device: %d",
        lh_device_of(g.device_data));
  CHECK(lh_device_of(g.host) == -1, "host memory is a device's");
  void *pinned = NULL, *managed = NULL;
  cudaHostAlloc(&pinned, 4096, cudaHostAllocPortable);
  cudaMallocManaged(&managed, 4096, cudaMemAttachGlobal);
  CHECK(lh_device_of(pinned) == -1, "page-locked memory is a device's");
  CHECK(lh_device_of(managed) == -1, "managed memory is a device's");
  cudaFreeHost(pinned);
  cudaFree(managed);
  check_analysis(ctx, cpu, &g, "device 0");
  check_equalize(ctx, cpu, &g, "device 0");
  gray_free(&g);
  lh_context_free(ctx);
}

static void two_devices(LhContext *cpu)
{
  cudaSetDevice(0);
  LhContext *on0 = NULL, *on1 = NULL;
  CHECK(lh_context_new_on_device(LH_BACKEND_CUDA, 0, &on0) == LH_OK, "a context on device 0");
  CHECK(lh_context_new_on_device(LH_BACKEND_CUDA, 1, &on1) == LH_OK, "a context on device 1");
  CHECK(current_device() == 0, "making a context on device 1 left device %d current",
        current_device());
  if (!on0 || !on1)
    return;
  CHECK(lh_context_device(on1) == 1, "device of the context made on 1: %d", lh_context_device(on1));
  Gray g0 = gray_make(LH_FORMAT_GRAY8, 1921, 1081, 0, 21);
  Gray g1 = gray_make(LH_FORMAT_GRAY16, 777, 555, 1, 22);
  Gray g1_8 = gray_make(LH_FORMAT_GRAY8, 1023, 767, 1, 23);
  CHECK(lh_device_of(g1.device_data) == 1, "device 1's memory: %d", lh_device_of(g1.device_data));

  /* Device 1's frame on device 0's context: refused, and CUDA still works. */
  LhStats s;
  lh_stats_init(&s);
  LhFrame f1 = frame_of(&g1, true);
  CHECK(lh_analyze(on0, &f1, NULL, &s) == LH_ERROR_INVALID_ARGUMENT &&
            strstr(lh_last_error(), "memory of CUDA device 1") &&
            strstr(lh_last_error(), "works on device 0"),
        "device 1's frame on device 0's context");
  LhFrame f1_8 = frame_of(&g1_8, true);
  CHECK(lh_equalize(on0, &f1_8, &f1_8, NULL) == LH_ERROR_INVALID_ARGUMENT,
        "device 1's frame equalized on device 0's context");
  LhFrame f0 = frame_of(&g0, true);
  CHECK(lh_equalize(on1, &f0, &f1_8, NULL) == LH_ERROR_INVALID_ARGUMENT,
        "device 0's frame into device 1's on device 1's context");
  LhDifference *difference = NULL;
  lh_difference_new(&difference);
  double mad = 0;
  CHECK(lh_difference_push(on0, difference, &f1_8, &mad) == LH_ERROR_INVALID_ARGUMENT,
        "device 1's frame's difference on device 0's context");
  lh_difference_free(difference);
  lh_stats_clear(&s);
  CHECK(cudaDeviceSynchronize() == cudaSuccess && cudaGetLastError() == cudaSuccess,
        "CUDA after the refusals: %s", cudaGetErrorString(cudaGetLastError()));
  check_analysis(on0, cpu, &g0, "device 0 after the refusals");

  /* Each context on its own device, whichever is current; the caller's
   * current device as it was after each call. */
  for (int current = 0; current < 2; current++) {
    char what[96];
    cudaSetDevice(current);
    snprintf(what, sizeof what, "device 1's context, device %d current", current);
    check_analysis(on1, cpu, &g1, what);
    check_analysis(on1, cpu, &g1_8, what);
    check_equalize(on1, cpu, &g1_8, what);
    CHECK(current_device() == current, "%s: device %d current after", what, current_device());
    snprintf(what, sizeof what, "device 0's context, device %d current", current);
    check_analysis(on0, cpu, &g0, what);
    check_equalize(on0, cpu, &g0, what);
    CHECK(current_device() == current, "%s: device %d current after", what, current_device());
  }

  /* One temporal window over frames of both devices: each device's frames
   * start it afresh (its LUTs are in the other device's memory), equal to
   * a window of their own. */
  cudaSetDevice(0);
  LhTemporal *shared = NULL, *alone = NULL;
  lh_temporal_new(4, 0, &shared);
  lh_temporal_new(4, 0, &alone);
  LhEqualizeOptions with_shared, with_alone;
  lh_equalize_options_init(&with_shared);
  lh_equalize_options_init(&with_alone);
  with_shared.temporal = shared;
  with_alone.temporal = alone;
  Gray g0_8 = gray_make(LH_FORMAT_GRAY8, 1023, 767, 0, 23); /* g1_8's samples on device 0 */
  LhFrame f0_8 = frame_of(&g0_8, true);
  CHECK(lh_equalize(on0, &f0_8, &f0_8, &with_shared) == LH_OK, "temporal on device 0");
  CHECK(lh_equalize(on1, &f1_8, &f1_8, &with_shared) == LH_OK, "the same window on device 1");
  size_t bytes = g1_8.stride * (size_t)g1_8.height;
  uint8_t *shared_out = malloc(bytes), *alone_out = malloc(bytes);
  cudaMemcpy(shared_out, g1_8.device_data, bytes, cudaMemcpyDeviceToHost);
  cudaMemcpy(g1_8.device_data, g1_8.host, bytes, cudaMemcpyHostToDevice);
  CHECK(lh_equalize(on1, &f1_8, &f1_8, &with_alone) == LH_OK, "a window of its own on device 1");
  cudaMemcpy(alone_out, g1_8.device_data, bytes, cudaMemcpyDeviceToHost);
  CHECK(memcmp(shared_out, alone_out, bytes) == 0,
        "device 1's frame in a window of device 0's frames differs from one in a window of "
        "its own");
  CHECK(cudaDeviceSynchronize() == cudaSuccess, "CUDA after the windows");
  free(shared_out);
  free(alone_out);
  lh_temporal_free(shared);
  lh_temporal_free(alone);
  gray_free(&g0_8);

  gray_free(&g0);
  gray_free(&g1);
  gray_free(&g1_8);
  lh_context_free(on0);
  cudaSetDevice(1);
  lh_context_free(on1); /* freed with another device current than its own */
  CHECK(current_device() == 1 && cudaGetLastError() == cudaSuccess, "after the frees");
  cudaSetDevice(0);
}

/* A thread with no CUDA context current makes a context on device 1 (the
 * first thing done on that device in the process): the thread's current
 * device is the runtime's default after, as before the call. */
static void *context_from_a_new_thread(void *out)
{
  int before = current_device();
  CHECK(lh_context_new_on_device(LH_BACKEND_CUDA, 1, (LhContext **)out) == LH_OK,
        "a context on device 1 from a new thread: %s", lh_last_error());
  CHECK(current_device() == before,
        "a new thread left with device %d current after making a context on device 1 (%d "
        "before)",
        current_device(), before);
  return NULL;
}

static void new_thread_on_device_1(LhContext *cpu)
{
  LhContext *on1 = NULL;
  pthread_t thread;
  pthread_create(&thread, NULL, context_from_a_new_thread, &on1);
  pthread_join(thread, NULL);
  if (!on1)
    return;
  /* The context outlives the thread that made it, and works from this
   * one, with device 0 current. */
  Gray g = gray_make(LH_FORMAT_GRAY8, 999, 333, 1, 31);
  cudaSetDevice(0);
  check_analysis(on1, cpu, &g, "device 1's context made by a thread that ended");
  check_equalize(on1, cpu, &g, "device 1's context made by a thread that ended");
  gray_free(&g);
  lh_context_free(on1);
}

int main(void)
{
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    printf("SKIP: no usable CUDA device\n");
    return SKIP_EXIT;
  }
  LhContext *cpu = NULL;
  if (lh_context_new(LH_BACKEND_CPU, &cpu) != LH_OK)
    return 1;
  if (count >= 2)
    new_thread_on_device_1(cpu); /* before anything else starts device 1 */
  one_device(cpu);
  if (count >= 2)
    two_devices(cpu);
  else
    printf("one CUDA device: the checks across devices need two, not run\n");
  lh_context_free(cpu);
  printf("%s: %d checks, %d failure(s)\n", failures ? "FAILED" : "ok", checks, failures);
  return failures ? 1 : 0;
}
