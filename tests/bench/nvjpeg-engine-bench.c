/* nvjpeg-engine-bench.c: how fast nvJPEG's hardware backend (the NVJPG
 * engines) decodes the luma of a folder of JPEGs, with no file reading, no
 * analysis and no pipeline around it: the ceiling that `lumahist stats
 * --decoder gpu` can reach, and how the host's calls should be arranged to
 * reach it (issue 14).
 *
 * usage: nvjpeg-engine-bench [--threads T] [--batch B] [--depth D]
 *                            [--handles shared|own] [--images N] FOLDER
 *
 * Every .jpg/.jpeg file in FOLDER that the hardware backend takes is read
 * into memory once.  T threads then decode N images between them (the files
 * in turn), each in batched calls of B images (nvjpegDecodeBatched,
 * NVJPEG_OUTPUT_Y, into device memory), with D decoder states in flight per
 * thread: a state's next batch is submitted only once its previous one is
 * done, so D = 2 lets the host prepare one batch while the engines decode
 * the other.  Handles: one hardware handle shared by every thread (as
 * lumahist does), or one per thread.
 *
 * It prints images/s over the decoding (the handles' creation apart, given
 * beside it), and the host time per image spent in nvjpegDecodeBatched,
 * which bounds what one thread can submit. */
#define _GNU_SOURCE
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <cuda_runtime.h>

#include "lhio.h"
#include "nvjpeg-api.h"

#define MAX_DEPTH 4

typedef struct {
  const unsigned char *data;
  size_t length;
  int width, height;
} File;

typedef struct {
  const LhnjApi *nj;
  LhnjHandle shared;
  File *files;
  int n_files;
  int batch;
  int depth;
  bool own_handles;
  int images; /* this thread's share */
  int first;  /* the file it starts at */
  size_t plane_bytes;
  size_t pitch;
  /* results */
  double create_s;
  double call_s; /* in nvjpegDecodeBatched */
  double wall_s;
  int decoded;
  int failed_status;
} Worker;

static double now_s(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static bool jpeg_name(const char *name)
{
  const char *dot = strrchr(name, '.');
  return dot && (strcasecmp(dot, ".jpg") == 0 || strcasecmp(dot, ".jpeg") == 0);
}

static int compare_names(const void *a, const void *b)
{
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The folder's JPEGs that the hardware backend takes, read into memory;
 * *verdict_us: the host time per file of asking nvJPEG whether it does
 * (nvjpegJpegStreamParseHeader and nvjpegDecodeBatchedSupported). */
static int load_files(const LhnjApi *nj, LhnjHandle handle, const char *folder, File **files,
                      double *verdict_us)
{
  DIR *dir = opendir(folder);
  if (!dir) {
    perror(folder);
    return -1;
  }
  char **names = NULL;
  int n_names = 0;
  struct dirent *entry;
  while ((entry = readdir(dir)))
    if (jpeg_name(entry->d_name)) {
      names = realloc(names, (size_t)(n_names + 1) * sizeof *names);
      if (asprintf(&names[n_names], "%s/%s", folder, entry->d_name) < 0)
        return -1;
      n_names++;
    }
  closedir(dir);
  qsort(names, (size_t)n_names, sizeof *names, compare_names);
  LhnjStream parsed;
  if (nj->JpegStreamCreate(handle, &parsed) != LHNJ_STATUS_SUCCESS)
    return -1;
  *files = calloc((size_t)n_names, sizeof **files);
  int n = 0;
  for (int i = 0; i < n_names; i++) {
    LhioEncoded encoded;
    LhioJpegInfo info;
    int supported = 1;
    bool probed = lhio_load(names[i], &encoded) == 0 && encoded.type == LHIO_FILE_JPEG &&
                  lhio_jpeg_probe(names[i], &encoded, 0, &info) == 0 && !info.progressive;
    double t0 = now_s();
    if (probed &&
        nj->JpegStreamParseHeader(handle, encoded.data, encoded.size, parsed) ==
            LHNJ_STATUS_SUCCESS &&
        nj->DecodeBatchedSupported(handle, parsed, &supported) == LHNJ_STATUS_SUCCESS &&
        supported == 0) {
      *verdict_us += (now_s() - t0) * 1e6;
      (*files)[n++] = (File){encoded.data, encoded.size, info.width, info.height};
    } else {
      fprintf(stderr, "nvjpeg-engine-bench: %s: left out (not for the hardware backend)\n",
              names[i]);
    }
    free(names[i]);
  }
  free(names);
  nj->JpegStreamDestroy(parsed);
  if (n > 0)
    *verdict_us /= n;
  return n;
}

static void *worker_main(void *arg)
{
  Worker *w = arg;
  const LhnjApi *nj = w->nj;
  double t0 = now_s();
  LhnjHandle handle = w->shared;
  if (w->own_handles && nj->CreateEx(LHNJ_BACKEND_HARDWARE, NULL, NULL, 0, &handle) != 0) {
    w->failed_status = -1;
    return NULL;
  }
  LhnjState states[MAX_DEPTH];
  cudaStream_t streams[MAX_DEPTH];
  unsigned char *planes[MAX_DEPTH];
  int pending[MAX_DEPTH] = {0};
  for (int s = 0; s < w->depth; s++) {
    nj->JpegStateCreate(handle, &states[s]);
    nj->DecodeBatchedInitialize(handle, states[s], w->batch, 1, LHNJ_OUTPUT_Y);
    cudaStreamCreateWithFlags(&streams[s], cudaStreamNonBlocking);
    if (cudaMalloc((void **)&planes[s], w->plane_bytes * (size_t)w->batch) != cudaSuccess) {
      w->failed_status = -2;
      return NULL;
    }
  }
  const unsigned char **data = malloc((size_t)w->batch * sizeof *data);
  size_t *lengths = malloc((size_t)w->batch * sizeof *lengths);
  LhnjImage *out = calloc((size_t)w->batch, sizeof *out);
  w->create_s = now_s() - t0;

  double start = now_s();
  int next = w->first, s = 0;
  for (int done = 0; done < w->images; done += w->batch, s = (s + 1) % w->depth) {
    /* The state's previous batch must be finished before it is reused. */
    if (pending[s]) {
      cudaStreamSynchronize(streams[s]);
      w->decoded += pending[s];
      pending[s] = 0;
    }
    int n = w->images - done < w->batch ? w->images - done : w->batch;
    for (int k = 0; k < n; k++) {
      File *f = &w->files[next];
      next = (next + 1) % w->n_files;
      data[k] = f->data;
      lengths[k] = f->length;
      out[k].channel[0] = planes[s] + (size_t)k * w->plane_bytes;
      out[k].pitch[0] = w->pitch;
    }
    if (n != w->batch)
      nj->DecodeBatchedInitialize(handle, states[s], n, 1, LHNJ_OUTPUT_Y);
    double c0 = now_s();
    int status = nj->DecodeBatched(handle, states[s], data, lengths, out, streams[s]);
    w->call_s += now_s() - c0;
    if (status != LHNJ_STATUS_SUCCESS) {
      w->failed_status = status;
      break;
    }
    pending[s] = n;
  }
  for (int k = 0; k < w->depth; k++) {
    cudaStreamSynchronize(streams[k]);
    w->decoded += pending[k];
  }
  w->wall_s = now_s() - start;
  for (int k = 0; k < w->depth; k++) {
    nj->JpegStateDestroy(states[k]);
    cudaStreamDestroy(streams[k]);
    cudaFree(planes[k]);
  }
  if (w->own_handles)
    nj->Destroy(handle);
  free(data);
  free(lengths);
  free(out);
  return NULL;
}

int main(int argc, char **argv)
{
  int threads = 1, batch = 64, depth = 1, images = 2000;
  bool own = false;
  const char *folder = NULL;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
      threads = atoi(argv[++i]);
    else if (strcmp(argv[i], "--batch") == 0 && i + 1 < argc)
      batch = atoi(argv[++i]);
    else if (strcmp(argv[i], "--depth") == 0 && i + 1 < argc)
      depth = atoi(argv[++i]);
    else if (strcmp(argv[i], "--images") == 0 && i + 1 < argc)
      images = atoi(argv[++i]);
    else if (strcmp(argv[i], "--handles") == 0 && i + 1 < argc)
      own = strcmp(argv[++i], "own") == 0;
    else if (argv[i][0] != '-')
      folder = argv[i];
    else {
      fprintf(stderr, "usage: %s [--threads T] [--batch B] [--depth D] [--handles shared|own] "
                      "[--images N] FOLDER\n",
              argv[0]);
      return 2;
    }
  }
  if (!folder || threads < 1 || batch < 1 || depth < 1 || depth > MAX_DEPTH || images < 1) {
    fprintf(stderr, "nvjpeg-engine-bench: a FOLDER, and counts of at least 1 (depth <= %d)\n",
            MAX_DEPTH);
    return 2;
  }
  const char *why = NULL;
  const LhnjApi *nj = lhnj_api(&why);
  int devices = 0;
  if (!nj || cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    printf("nvjpeg-engine-bench: skipped: %s\n", nj ? "no CUDA device" : why);
    return 77;
  }
  double t0 = now_s();
  LhnjHandle shared;
  if (nj->CreateEx(LHNJ_BACKEND_HARDWARE, NULL, NULL, 0, &shared) != LHNJ_STATUS_SUCCESS) {
    printf("nvjpeg-engine-bench: skipped: this GPU has no JPEG engine\n");
    return 77;
  }
  double create_s = now_s() - t0;
  File *files = NULL;
  double verdict_us = 0;
  int n_files = load_files(nj, shared, folder, &files, &verdict_us);
  if (n_files <= 0) {
    fprintf(stderr, "nvjpeg-engine-bench: no JPEG in %s for the hardware backend\n", folder);
    return 1;
  }
  size_t pitch = 0, plane = 0, bytes = 0;
  for (int i = 0; i < n_files; i++) {
    size_t p = ((size_t)files[i].width + 127) / 128 * 128;
    size_t b = p * (((size_t)files[i].height + 31) / 32 * 32);
    pitch = p > pitch ? p : pitch;
    plane = b > plane ? b : plane;
    bytes += files[i].length;
  }
  plane = pitch * (plane / pitch + 32);

  Worker *workers = calloc((size_t)threads, sizeof *workers);
  pthread_t *ids = calloc((size_t)threads, sizeof *ids);
  double start = now_s();
  for (int t = 0; t < threads; t++) {
    workers[t] = (Worker){.nj = nj, .shared = shared, .files = files, .n_files = n_files,
                          .batch = batch, .depth = depth, .own_handles = own,
                          .images = images / threads + (t < images % threads),
                          .first = (int)((long)t * n_files / threads), .plane_bytes = plane,
                          .pitch = pitch};
    pthread_create(&ids[t], NULL, worker_main, &workers[t]);
  }
  double wall_max = 0, create_max = 0, call_s = 0;
  int decoded = 0, failed = 0;
  for (int t = 0; t < threads; t++) {
    pthread_join(ids[t], NULL);
    Worker *w = &workers[t];
    wall_max = w->wall_s > wall_max ? w->wall_s : wall_max;
    create_max = w->create_s > create_max ? w->create_s : create_max;
    call_s += w->call_s;
    decoded += w->decoded;
    if (w->failed_status)
      failed = w->failed_status;
  }
  double whole = now_s() - start;
  printf("threads %d batch %3d depth %d handles %-6s: %d images (%d files, %.0f KB mean) in %.3f "
         "s = %7.1f images/s; with the states' set-up %.3f s = %7.1f images/s; host in "
         "DecodeBatched %.3f ms/image; shared handle made in %.3f s; the hardware backend's verdict "
         "%.1f us/file%s\n",
         threads, batch, depth, own ? "own" : "shared", decoded, n_files,
         (double)bytes / n_files / 1e3, wall_max, decoded / wall_max, whole, decoded / whole,
         call_s * 1e3 / (decoded ? decoded : 1), create_s, verdict_us,
         failed ? " (a call FAILED)" : "");
  (void)create_max;
  nj->Destroy(shared);
  return failed ? 1 : 0;
}
