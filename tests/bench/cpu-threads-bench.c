/* cpu-threads-bench.c: the CPU backend on one thread and on every core, per
 * 4K frame (NV12 and RGB, a photograph-like frame): analysis (histogram,
 * statistics, 5 percentiles), global equalization and CLAHE 8x8.  Wall time
 * by CLOCK_MONOTONIC, median of --runs runs after a warm-up, and the ratio.
 * Then the analysis of each packed or deep R'G'B' format against NV12 of the
 * same size, in the same run (issue 18's target: at most 1.2x NV12).
 * Beside each format, "read only": the same threads only reading the bytes
 * that its analysis reads (the Y plane; every byte of R'G'B'), threads
 * already awake, as a floor for the analysis where memory bounds it.
 * --scaling instead: 4K NV12 and RGB analysis, RGBX analysis and NV12
 * equalization and CLAHE on 1, 2, 4, 8 ... threads and on every core, with
 * the speed-up over one thread and its share of the ideal.
 *
 *   cpu-threads-bench [--runs N] [--threads N] [--scaling]
 *   (default 15 runs; threads: the cores this process may run on) */
#define _GNU_SOURCE /* sched_getaffinity */
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lumahist.h"

#define WIDTH 3840
#define HEIGHT 2160

static double now(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int compare_doubles(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

typedef enum { ANALYZE, EQUALIZE, CLAHE } Operation;

static const char *const operation_names[] = {"analyze", "equalize", "clahe 8x8"};

/* Median milliseconds of one operation on frame (out: a frame like it). */
static double time_operation(LhContext *ctx, Operation op, const LhFrame *frame, LhFrame *out,
                             int runs)
{
  LhOptions options;
  lh_options_init(&options);
  lh_options_set_percentiles(&options, "1,5,50,95,99");
  LhEqualizeOptions eq;
  lh_equalize_options_init(&eq);
  eq.mode = op == CLAHE ? LH_EQUALIZE_CLAHE : LH_EQUALIZE_GLOBAL;
  LhStats stats;
  lh_stats_init(&stats);
  double *ms = malloc((size_t)runs * sizeof *ms);
  for (int r = -1; r < runs; r++) { /* run -1 warms up */
    double start = now();
    int status = op == ANALYZE ? lh_analyze(ctx, frame, &options, &stats)
                               : lh_equalize(ctx, frame, out, &eq);
    if (status < 0) {
      fprintf(stderr, "cpu-threads-bench: %s: %s\n", operation_names[op], lh_last_error());
      exit(1);
    }
    if (r >= 0)
      ms[r] = (now() - start) * 1e3;
  }
  qsort(ms, (size_t)runs, sizeof *ms, compare_doubles);
  double median = ms[runs / 2];
  free(ms);
  lh_stats_clear(&stats);
  return median;
}

/* The read floor: threads that spin until a run starts, each then sums the
 * 64-bit words of its slice of the bytes, and count themselves done. */
typedef struct {
  const uint64_t *words;
  size_t n_words;
  int threads;
  int generation; /* atomic: run r starts when it becomes r + 1; -1 stops */
  int done;       /* atomic: threads done with the current run */
  uint64_t sink[64][8];
} ReadFloor;

typedef struct {
  ReadFloor *floor;
  int index;
} ReadThread;

static void read_slice(ReadFloor *r, int index)
{
  const size_t first = r->n_words * (size_t)index / (size_t)r->threads,
               end = r->n_words * (size_t)(index + 1) / (size_t)r->threads;
  uint64_t sum = 0;
  for (size_t i = first; i < end; i++)
    sum += r->words[i];
  r->sink[index % 64][0] += sum; /* so that the reads are not left out */
  __atomic_add_fetch(&r->done, 1, __ATOMIC_ACQ_REL);
}

static void *read_thread(void *data)
{
  ReadThread *t = data;
  for (int seen = 0;;) {
    int generation;
    while ((generation = __atomic_load_n(&t->floor->generation, __ATOMIC_ACQUIRE)) == seen)
      ;
    if (generation < 0)
      return NULL;
    seen = generation;
    read_slice(t->floor, t->index);
  }
}

/* Median milliseconds to read bytes (a multiple of 8) on threads threads. */
static double read_floor_ms(const uint8_t *bytes, size_t n, int threads, int runs)
{
  ReadFloor r = {(const uint64_t *)bytes, n / 8, threads, 0, 0, {{0}}};
  ReadThread t[256];
  pthread_t id[256];
  int started = 0;
  for (int i = 1; i < threads && i < 256; i++) {
    t[i] = (ReadThread){&r, i};
    if (pthread_create(&id[i], NULL, read_thread, &t[i]) != 0)
      break;
    started++;
  }
  r.threads = started + 1;
  double *ms = malloc((size_t)runs * sizeof *ms);
  for (int run = -1; run < runs; run++) {
    double start = now();
    __atomic_store_n(&r.done, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&r.generation, run + 2, __ATOMIC_RELEASE);
    read_slice(&r, 0);
    while (__atomic_load_n(&r.done, __ATOMIC_ACQUIRE) < r.threads)
      ;
    if (run >= 0)
      ms[run] = (now() - start) * 1e3;
  }
  __atomic_store_n(&r.generation, -1, __ATOMIC_RELEASE);
  for (int i = 1; i <= started; i++)
    pthread_join(id[i], NULL);
  qsort(ms, (size_t)runs, sizeof *ms, compare_doubles);
  double median = ms[runs / 2];
  free(ms);
  return median;
}

/* The bytes of a frame of size bytes that its analysis reads: NV12's Y
 * plane, every byte of the others here (whole frames of one plane). */
static size_t analysis_bytes(LhFormat format, size_t size)
{
  return format == LH_FORMAT_NV12 ? (size_t)WIDTH * HEIGHT : size;
}

/* A smooth gradient with noise, as a photograph's histogram is. */
static void fill(uint8_t *p, size_t n)
{
  uint64_t state = 88172645463325252ULL;
  for (size_t i = 0; i < n; i++) {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    p[i] = (uint8_t)((i / 97) % 200 + (state & 31));
  }
}

/* The cores this process may run on, as the library counts them. */
static int core_count(void)
{
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof allowed, &allowed) == 0 && CPU_COUNT(&allowed) >= 1)
    return CPU_COUNT(&allowed);
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n >= 1 ? (int)n : 1;
}

/* A 4K frame of format filled as fill() does, and one like it for output. */
typedef struct {
  LhFrame in, out;
  uint8_t *in_pixels, *out_pixels;
} BenchFrames;

static void make_frames(LhFormat format, BenchFrames *f)
{
  size_t size = lh_frame_buffer_size(format, WIDTH, HEIGHT, 0);
  f->in_pixels = malloc(size);
  f->out_pixels = malloc(size);
  if (!f->in_pixels || !f->out_pixels) {
    fprintf(stderr, "cpu-threads-bench: out of memory\n");
    exit(1);
  }
  fill(f->in_pixels, size);
  lh_frame_init(&f->in, format, LH_MEMORY_HOST, WIDTH, HEIGHT, f->in_pixels, 0);
  lh_frame_init(&f->out, format, LH_MEMORY_HOST, WIDTH, HEIGHT, f->out_pixels, 0);
}

static void free_frames(BenchFrames *f)
{
  free(f->in_pixels);
  free(f->out_pixels);
}

/* Each operation on 1, 2, 4 ... threads up to the cores, and on the cores. */
static void print_scaling(LhContext *ctx, int runs, int cores)
{
  static const struct {
    LhFormat format;
    Operation op;
  } rows[] = {{LH_FORMAT_NV12, ANALYZE},  {LH_FORMAT_RGB, ANALYZE}, {LH_FORMAT_RGBX, ANALYZE},
              {LH_FORMAT_NV12, EQUALIZE}, {LH_FORMAT_NV12, CLAHE}};
  int counts[16], n_counts = 0;
  for (int t = 1; t < cores && n_counts < 15; t *= 2)
    counts[n_counts++] = t;
  counts[n_counts++] = cores;
  printf("4K frames (%dx%d), CPU backend, median of %d runs, ms on N threads (speed-up over 1 "
         "thread; its share of N)\n",
         WIDTH, HEIGHT, runs);
  printf("%-6s %-10s", "format", "operation");
  for (int i = 0; i < n_counts; i++)
    printf(" %18d", counts[i]);
  printf("\n");
  for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
    BenchFrames f;
    make_frames(rows[r].format, &f);
    printf("%-6s %-10s", lh_format_name(rows[r].format), operation_names[rows[r].op]);
    double one = 0;
    for (int i = 0; i < n_counts; i++) {
      lh_context_set_threads(ctx, counts[i]);
      double ms = time_operation(ctx, rows[r].op, &f.in, &f.out, runs);
      if (i == 0)
        one = ms;
      printf(" %7.3f (%4.1fx %3.0f%%)", ms, one / ms, 100 * one / ms / counts[i]);
      fflush(stdout);
    }
    printf("\n");
    free_frames(&f);
  }
}

int main(int argc, char **argv)
{
  int runs = 15, threads = 0;
  bool scaling = false;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc)
      runs = atoi(argv[++i]);
    else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
      threads = atoi(argv[++i]);
    else if (strcmp(argv[i], "--scaling") == 0)
      scaling = true;
    else {
      fprintf(stderr, "usage: cpu-threads-bench [--runs N] [--threads N] [--scaling]\n");
      return 2;
    }
  }
  if (runs < 1)
    runs = 1;
  LhContext *ctx;
  if (lh_context_new(LH_BACKEND_CPU, &ctx) < 0) {
    fprintf(stderr, "cpu-threads-bench: %s\n", lh_last_error());
    return 1;
  }
  const int cores = core_count();
  if (threads <= 0)
    threads = cores;
  if (scaling) {
    print_scaling(ctx, runs, threads);
    lh_context_free(ctx);
    return 0;
  }
  const LhFormat formats[] = {LH_FORMAT_NV12, LH_FORMAT_RGB};
  printf("4K frames (%dx%d), CPU backend, median of %d runs; threads: 1 and %d (%d cores)\n",
         WIDTH, HEIGHT, runs, threads, cores);
  printf("%-6s %-10s %10s %10s %8s\n", "format", "operation", "1 thread", "all", "ratio");
  for (size_t f = 0; f < sizeof formats / sizeof formats[0]; f++) {
    size_t stride = formats[f] == LH_FORMAT_RGB ? 3 * WIDTH : WIDTH;
    size_t size = lh_frame_buffer_size(formats[f], WIDTH, HEIGHT, stride);
    uint8_t *in_pixels = malloc(size), *out_pixels = malloc(size);
    if (!in_pixels || !out_pixels)
      return 1;
    fill(in_pixels, size);
    LhFrame in, out;
    lh_frame_init(&in, formats[f], LH_MEMORY_HOST, WIDTH, HEIGHT, in_pixels, stride);
    lh_frame_init(&out, formats[f], LH_MEMORY_HOST, WIDTH, HEIGHT, out_pixels, stride);
    for (int op = ANALYZE; op <= CLAHE; op++) {
      lh_context_set_threads(ctx, 1);
      double one = time_operation(ctx, (Operation)op, &in, &out, runs);
      lh_context_set_threads(ctx, threads);
      double all = time_operation(ctx, (Operation)op, &in, &out, runs);
      printf("%-6s %-10s %8.2f ms %7.2f ms %7.2fx\n", lh_format_name(formats[f]),
             operation_names[op], one, all, one / all);
    }
    const size_t read = analysis_bytes(formats[f], size);
    const double one = read_floor_ms(in_pixels, read & ~(size_t)7, 1, runs);
    const double all = read_floor_ms(in_pixels, read & ~(size_t)7, threads, runs);
    printf("%-6s %-10s %8.2f ms %7.2f ms %7.2fx  (%.1f MB, threads awake)\n",
           lh_format_name(formats[f]), "read only", one, all, one / all, (double)read / 1e6);
    free(in_pixels);
    free(out_pixels);
  }

  /* Analysis per frame, each format against NV12 of the same size. */
  const LhFormat against[] = {LH_FORMAT_NV12,       LH_FORMAT_RGB10A2_LE, LH_FORMAT_BGR10A2_LE,
                              LH_FORMAT_R210,       LH_FORMAT_BGRA16,     LH_FORMAT_RGBA16,
                              LH_FORMAT_RGBX,       LH_FORMAT_RGB};
  printf("\nanalyze, 4K, against NV12 of the same size (same run); read only: the frame's bytes\n"
         "read by the same threads, awake (what the analysis reads but NV12's chroma), against\n"
         "NV12's analysis\n");
  printf("%-11s %10s %8s %10s %8s %12s %8s %10s %8s\n", "format", "1 thread", "/NV12", "all",
         "/NV12", "read only 1", "/NV12", "read all", "/NV12");
  double nv12_one = 0, nv12_all = 0;
  for (size_t f = 0; f < sizeof against / sizeof against[0]; f++) {
    size_t size = lh_frame_buffer_size(against[f], WIDTH, HEIGHT, 0);
    uint8_t *pixels = malloc(size);
    if (!pixels)
      return 1;
    fill(pixels, size);
    LhFrame in;
    lh_frame_init(&in, against[f], LH_MEMORY_HOST, WIDTH, HEIGHT, pixels, 0);
    lh_context_set_threads(ctx, 1);
    double one = time_operation(ctx, ANALYZE, &in, NULL, runs);
    lh_context_set_threads(ctx, threads);
    double all = time_operation(ctx, ANALYZE, &in, NULL, runs);
    if (f == 0) {
      nv12_one = one;
      nv12_all = all;
    }
    const size_t read = analysis_bytes(against[f], size);
    const double read_one = read_floor_ms(pixels, read & ~(size_t)7, 1, runs);
    const double read_all = read_floor_ms(pixels, read & ~(size_t)7, threads, runs);
    printf("%-11s %7.2f ms %7.2fx %7.2f ms %7.2fx %9.2f ms %7.2fx %7.2f ms %7.2fx\n",
           lh_format_name(against[f]), one, one / nv12_one, all, all / nv12_all, read_one,
           read_one / nv12_one, read_all, read_all / nv12_all);
    free(pixels);
  }
  lh_context_free(ctx);
  return 0;
}
