/* nvjpeg-compare.c: the luma that nvJPEG decodes on the GPU against the luma
 * that libjpeg-turbo decodes (lhio_read, LHIO_READ_LUMA), pixel by pixel, for
 * each JPEG named or found in the folders named; and lh_analyze on the CUDA
 * backend over the decoded device plane against the CPU backend over the same
 * pixels copied to the host, bit for bit (the "GPU == CPU on the same pixels"
 * contract, now for planes that never were on the host).
 *
 * Usage: nvjpeg-compare [--max-diff N] [--batch N[,N...]] [--expect-routes]
 *                       [--verbose] PATH...
 *        nvjpeg-compare --check
 *
 * Files go to lhio_gpu_jpeg_decode_luma in batches of the sizes --batch lists,
 * taken in turn (so one run exercises several batch sizes and the decoder's
 * reuse).  A file that lhio_jpeg_probe keeps from the GPU (gpu_refusal) is
 * decoded by libjpeg-turbo alone, as the tool does.  --expect-routes: files
 * in a folder named cpu-fallback must be kept from the GPU and every other
 * file must be decoded there (make-jpeg-variants.py lays its files out so).
 * Prints one line per file, then a summary per variant (the file's folder)
 * and overall.
 *
 * Exit status: 0; 1 when a file's largest difference is above --max-diff, a
 * file given to the GPU failed there, the analyses differ, or a route is not
 * the expected one; 77 (skip) when no CUDA device or no nvJPEG is usable;
 * 2 for a usage error.  --check only says whether it would skip. */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include <cuda_runtime_api.h>

#include "gpu-compare.h"
#include "lhio-gpu.h"
#include "lhio.h"
#include "lumahist.h"

/* nvJPEG's IDCT and libjpeg-turbo's (islow) round differently; a larger
 * difference than this is a decoding error, not rounding.  A first bound,
 * to be set from what the H100's and H200's decoders measure. */
#define DEFAULT_MAX_DIFF 1
#define DEFAULT_BATCH 8
#define MAX_BATCH_SIZES 16
#define CPU_FALLBACK_FOLDER "cpu-fallback"
#define PERCENTILES "0,0.1,1,5,25,50,75,95,99,99.9,100"

typedef enum {
  ROUTE_GPU,          /* decoded by nvJPEG */
  ROUTE_GPU_FAILED,   /* given to nvJPEG, which failed on it */
  ROUTE_CPU,          /* kept from the GPU by the probe (gpu_refusal) */
  ROUTE_PROBE_FAILED, /* refused by lhio_load or lhio_jpeg_probe */
  ROUTE_NOT_JPEG,     /* not a JPEG: not compared */
} Route;

typedef struct {
  char *path;
  char variant[64];
  Route route;
  LhioDecoder decoder;
  int width, height;
  int max_diff;
  uint64_t differing, pixels;
  bool failed;
} FileResult;

typedef struct {
  char name[64];
  int files, hardware, hybrid, cpu, refused, failed, analysis_mismatches;
  int max_diff;
  uint64_t differing, pixels;
  int64_t signed_sum; /* sum of GPU - CPU over the pixels */
} VariantSummary;

typedef struct {
  int max_diff;
  int batch_sizes[MAX_BATCH_SIZES];
  int n_batch_sizes;
  bool expect_routes;
  bool verbose;
  LhContext *cpu, *gpu;
  LhioGpuJpeg *decoder;
  cudaStream_t stream;
  LhOptions options;
  VariantSummary *variants;
  int n_variants;
  int failures;
} Run;

/* ------------------------------------------------------------------------ */
/* Files                                                                     */

typedef struct {
  char **paths;
  int n, cap;
} PathList;

static void path_list_add(PathList *list, const char *path)
{
  if (list->n == list->cap) {
    list->cap = list->cap ? 2 * list->cap : 64;
    list->paths = realloc(list->paths, list->cap * sizeof *list->paths);
    if (!list->paths) {
      perror("realloc");
      exit(99);
    }
  }
  list->paths[list->n++] = strdup(path);
}

static bool is_jpeg_name(const char *name)
{
  const char *dot = strrchr(name, '.');
  return dot && (strcasecmp(dot, ".jpg") == 0 || strcasecmp(dot, ".jpeg") == 0);
}

static int sort_names(const struct dirent **a, const struct dirent **b)
{
  return strcmp((*a)->d_name, (*b)->d_name);
}

/* The JPEGs under folder, each folder's entries in byte order. */
static void collect_folder(PathList *list, const char *folder)
{
  struct dirent **entries;
  int n = scandir(folder, &entries, NULL, sort_names);
  if (n < 0) {
    fprintf(stderr, "nvjpeg-compare: %s: %s\n", folder, strerror(errno));
    exit(2);
  }
  for (int i = 0; i < n; i++) {
    const char *name = entries[i]->d_name;
    if (strcmp(name, ".") != 0 && strcmp(name, "..") != 0) {
      char *path;
      if (asprintf(&path, "%s/%s", folder, name) < 0)
        exit(99);
      struct stat st;
      if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        collect_folder(list, path);
      else if (is_jpeg_name(name))
        path_list_add(list, path);
      free(path);
    }
    free(entries[i]);
  }
  free(entries);
}

/* The variant of a file: the name of the folder it is in. */
static void variant_of(const char *path, char *out, size_t size)
{
  const char *slash = strrchr(path, '/');
  if (!slash) {
    snprintf(out, size, ".");
    return;
  }
  const char *start = slash;
  while (start > path && start[-1] != '/')
    start--;
  snprintf(out, size, "%.*s", (int)(slash - start), start);
  if (!*out)
    snprintf(out, size, "/");
}

static VariantSummary *variant_summary(Run *run, const char *name)
{
  for (int i = 0; i < run->n_variants; i++)
    if (strcmp(run->variants[i].name, name) == 0)
      return &run->variants[i];
  run->variants = realloc(run->variants, (run->n_variants + 1) * sizeof *run->variants);
  if (!run->variants)
    exit(99);
  VariantSummary *v = &run->variants[run->n_variants++];
  memset(v, 0, sizeof *v);
  snprintf(v->name, sizeof v->name, "%s", name);
  return v;
}

/* ------------------------------------------------------------------------ */
/* One file                                                                  */

typedef struct {
  FileResult result;
  LhioEncoded encoded;
  LhioJpegInfo info;
  char probe_message[512];
  bool load_failed;      /* lhio_load refused it, before the probe */
  char cpu_refusal[512]; /* kept from the GPU, and libjpeg-turbo refused it: why */
  int job;               /* index in the batch's jobs, or -1 */
} Item;

static void fail(Run *run, FileResult *r, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

static void fail(Run *run, FileResult *r, const char *format, ...)
{
  va_list ap;
  va_start(ap, format);
  printf("FAIL: %s: ", r->path);
  vprintf(format, ap);
  printf("\n");
  va_end(ap);
  r->failed = true;
  run->failures++;
}

/* Loads and probes one file: which route it takes. */
static void prepare(Item *item)
{
  FileResult *r = &item->result;
  item->job = -1;
  if (lhio_load(r->path, &item->encoded) < 0) {
    r->route = ROUTE_PROBE_FAILED;
    item->load_failed = true;
    snprintf(item->probe_message, sizeof item->probe_message, "%s", lh_last_error());
    return;
  }
  if (item->encoded.type != LHIO_FILE_JPEG) {
    r->route = ROUTE_NOT_JPEG;
    return;
  }
  if (lhio_jpeg_probe(r->path, &item->encoded, 0, &item->info) < 0) {
    r->route = ROUTE_PROBE_FAILED;
    snprintf(item->probe_message, sizeof item->probe_message, "%s", lh_last_error());
    return;
  }
  r->width = item->info.width;
  r->height = item->info.height;
  r->route = item->info.gpu_refusal ? ROUTE_CPU : ROUTE_GPU;
}

/* Where the GPU's and the CPU's pixels differ: the largest difference, how
 * many differ, and the first one that differs most. */
static void compare_pixels(Run *run, FileResult *r, const uint8_t *gpu, size_t gpu_stride,
                           const LhioImage *cpu, VariantSummary *v)
{
  int worst_x = -1, worst_y = -1, worst_gpu = 0, worst_cpu = 0;
  int64_t signed_sum = 0;
  uint64_t histogram[511] = {0};
  for (int y = 0; y < r->height; y++) {
    const uint8_t *g = gpu + (size_t)y * gpu_stride;
    const uint8_t *c = (const uint8_t *)cpu->frame.planes[0] + (size_t)y * cpu->frame.strides[0];
    for (int x = 0; x < r->width; x++) {
      int d = (int)g[x] - (int)c[x];
      histogram[d + 255]++;
      signed_sum += d;
      int a = d < 0 ? -d : d;
      if (a > r->max_diff) {
        r->max_diff = a;
        worst_x = x;
        worst_y = y;
        worst_gpu = g[x];
        worst_cpu = c[x];
      }
    }
  }
  r->pixels = (uint64_t)r->width * r->height;
  r->differing = r->pixels - histogram[255];
  v->signed_sum += signed_sum;
  if (r->max_diff > run->max_diff)
    fail(run, r, "a pixel differs by %d, above --max-diff %d: (%d, %d) GPU %d, CPU %d", r->max_diff,
         run->max_diff, worst_x, worst_y, worst_gpu, worst_cpu);
  if (run->verbose && r->differing) {
    printf("  %s: GPU - CPU:", r->path);
    for (int d = -255; d <= 255; d++)
      if (histogram[d + 255] && d != 0)
        printf(" %+d: %llu", d, (unsigned long long)histogram[d + 255]);
    printf("; mean %+.5f\n", (double)signed_sum / (double)r->pixels);
  }
}

/* lh_analyze on the device plane (CUDA backend) against the same pixels on
 * the host (CPU backend): every statistic and the histogram the same. */
static void compare_analysis(Run *run, FileResult *r, VariantSummary *v, const LhioGpuJpegJob *job,
                             uint8_t *host, size_t host_stride)
{
  LhFrame device_frame, host_frame;
  LhStats gpu_stats, cpu_stats;
  lh_stats_init(&gpu_stats);
  lh_stats_init(&cpu_stats);
  int status = lh_frame_init(&device_frame, LH_FORMAT_GRAY8, LH_MEMORY_CUDA, r->width, r->height,
                             job->luma, job->pitch);
  if (status == 0)
    status = lh_analyze(run->gpu, &device_frame, &run->options, &gpu_stats);
  if (status < 0) {
    fail(run, r, "lh_analyze on the device plane: %s: %s", lh_status_name(status), lh_last_error());
    v->analysis_mismatches++;
    goto done;
  }
  status = lh_frame_init(&host_frame, LH_FORMAT_GRAY8, LH_MEMORY_HOST, r->width, r->height, host,
                         host_stride);
  if (status == 0)
    status = lh_analyze(run->cpu, &host_frame, &run->options, &cpu_stats);
  if (status < 0) {
    fail(run, r, "lh_analyze on the host copy: %s: %s", lh_status_name(status), lh_last_error());
    v->analysis_mismatches++;
    goto done;
  }
  char why[256];
  if (!stats_equal(&gpu_stats, &cpu_stats, why, sizeof why)) {
    fail(run, r, "the CUDA backend on the device plane and the CPU backend on its copy differ: %s",
         why);
    v->analysis_mismatches++;
  } else if (gpu_stats.count != (uint64_t)r->width * r->height) {
    fail(run, r, "lh_analyze counted %llu pixels of %dx%d", (unsigned long long)gpu_stats.count,
         r->width, r->height);
    v->analysis_mismatches++;
  }
done:
  lh_stats_clear(&gpu_stats);
  lh_stats_clear(&cpu_stats);
}

/* libjpeg-turbo's luma of the file, checked to be what the probe said: a
 * GRAY8 plane where gray8 is true (what nvJPEG's Y is compared with; an
 * RGB-coded JPEG, kept from the GPU, is read as RGB). */
static int read_cpu(Run *run, FileResult *r, LhioImage *image, bool gray8)
{
  if (lhio_read(r->path, LHIO_READ_LUMA, 0, image) < 0)
    return -1;
  if ((gray8 && image->frame.format != LH_FORMAT_GRAY8) || image->frame.memory != LH_MEMORY_HOST ||
      image->frame.width != r->width || image->frame.height != r->height) {
    fail(run, r, "lhio_read (luma) gave %s %dx%d, the probe %dx%d",
         lh_format_name(image->frame.format), image->frame.width, image->frame.height, r->width,
         r->height);
    return -2;
  }
  if (image->decoder != LHIO_DECODER_LIBJPEG) {
    fail(run, r, "lhio_read says its decoder was %s", lhio_decoder_name(image->decoder));
    return -2;
  }
  return 0;
}

static void finish_gpu(Run *run, Item *item, const LhioGpuJpegJob *job, VariantSummary *v)
{
  FileResult *r = &item->result;
  if (job->status < 0) {
    r->route = ROUTE_GPU_FAILED;
    v->failed++;
    /* Not a failure of lumahist: the tool decodes such a file with
     * libjpeg-turbo (the fail column counts them, for the record). */
    printf("note: %s: nvJPEG refused it (%s); the tool decodes it on the CPU\n", r->path,
           job->reason);
    return;
  }
  r->decoder = job->decoder;
  if (job->decoder == LHIO_DECODER_NVJPEG_HARDWARE)
    v->hardware++;
  else if (job->decoder == LHIO_DECODER_NVJPEG_GPU)
    v->hybrid++;
  else
    fail(run, r, "decoded on the GPU, but the job says decoder %s",
         lhio_decoder_name(job->decoder));
  if (!job->luma || job->pitch < (size_t)r->width) {
    fail(run, r, "the job's plane is %p with pitch %zu for width %d", (void *)job->luma, job->pitch,
         r->width);
    return;
  }

  size_t stride = (size_t)r->width;
  uint8_t *host = malloc(stride * r->height);
  if (!host) {
    perror("malloc");
    exit(99);
  }
  cudaError_t e = cudaMemcpy2DAsync(host, stride, job->luma, job->pitch, stride, r->height,
                                    cudaMemcpyDeviceToHost, run->stream);
  if (e == cudaSuccess)
    e = cudaStreamSynchronize(run->stream);
  if (e != cudaSuccess) {
    fail(run, r, "copying the device plane: %s", cudaGetErrorString(e));
    free(host);
    return;
  }
  compare_analysis(run, r, v, job, host, stride);

  LhioImage image = {0};
  int status = read_cpu(run, r, &image, true);
  if (status == -1)
    fail(run, r, "nvJPEG decoded it but libjpeg-turbo refuses it: %s", lh_last_error());
  else if (status == 0)
    compare_pixels(run, r, host, stride, &image, v);
  lhio_image_clear(&image);
  free(host);
}

static void finish_cpu(Run *run, Item *item, VariantSummary *v)
{
  FileResult *r = &item->result;
  LhioImage image = {0};
  v->cpu++;
  int status = read_cpu(run, r, &image, false);
  if (status == 0)
    r->decoder = image.decoder;
  else if (status == -1)
    snprintf(item->cpu_refusal, sizeof item->cpu_refusal, "%s", lh_last_error());
  lhio_image_clear(&image);
}

static void finish_refused(Run *run, Item *item, VariantSummary *v)
{
  FileResult *r = &item->result;
  LhioImage image = {0};
  const char *refuser = item->load_failed ? "lhio_load" : "lhio_jpeg_probe";
  v->refused++;
  /* lhio_load and the probe refuse what lhio_read refuses before decoding,
   * with the same message: the tool reports a file alike on either route. */
  if (lhio_read(r->path, LHIO_READ_LUMA, 0, &image) == 0)
    fail(run, r, "%s refused it (%s) but lhio_read reads it", refuser, item->probe_message);
  else if (strcmp(lh_last_error(), item->probe_message) != 0)
    fail(run, r, "%s says \"%s\", lhio_read \"%s\"", refuser, item->probe_message, lh_last_error());
  lhio_image_clear(&image);
}

static void print_result(const Item *item)
{
  const FileResult *r = &item->result;
  switch (r->route) {
  case ROUTE_GPU:
    printf("%s: %s %dx%d: max |diff| %d, %llu of %llu pixels differ (%.4f %%)\n", r->path,
           lhio_decoder_name(r->decoder), r->width, r->height, r->max_diff,
           (unsigned long long)r->differing, (unsigned long long)r->pixels,
           r->pixels ? 100.0 * (double)r->differing / (double)r->pixels : 0.0);
    break;
  case ROUTE_GPU_FAILED:
    printf("%s: nvJPEG failed\n", r->path);
    break;
  case ROUTE_CPU:
    if (item->cpu_refusal[0])
      printf("%s: %dx%d, kept from the GPU (%s), refused by libjpeg-turbo: %s\n", r->path, r->width,
             r->height, item->info.gpu_refusal, item->cpu_refusal);
    else
      printf("%s: %s %dx%d, kept from the GPU: %s\n", r->path, lhio_decoder_name(r->decoder),
             r->width, r->height, item->info.gpu_refusal);
    break;
  case ROUTE_PROBE_FAILED:
    printf("%s: refused by %s: %s\n", r->path, item->load_failed ? "lhio_load" : "the probe",
           item->probe_message);
    break;
  case ROUTE_NOT_JPEG:
    printf("%s: not a JPEG, not compared\n", r->path);
    break;
  }
}

static void check_route(Run *run, Item *item)
{
  FileResult *r = &item->result;
  if (!run->expect_routes || r->route == ROUTE_NOT_JPEG)
    return;
  bool on_gpu = r->route == ROUTE_GPU || r->route == ROUTE_GPU_FAILED;
  if (strcmp(r->variant, CPU_FALLBACK_FOLDER) == 0) {
    if (on_gpu)
      fail(run, r, "given to nvJPEG, but nvJPEG is not to get this kind of JPEG");
  } else if (r->route == ROUTE_CPU && (strstr(item->info.gpu_refusal, "gray file whose component") ||
                                        strstr(item->info.gpu_refusal, "4:1:1"))) {
    /* Kinds the tool keeps from nvJPEG because it decodes them wrongly; a
     * real one is among the samples (fog-pier-gray.jpg). */
    printf("note: %s: kept from the GPU: %s\n", r->path, item->info.gpu_refusal);
  } else if (r->route == ROUTE_CPU) {
    fail(run, r, "kept from the GPU (%s), but nvJPEG is to decode it", item->info.gpu_refusal);
  } else if (r->route == ROUTE_PROBE_FAILED) {
    fail(run, r, "refused (%s), but it is a valid JPEG", item->probe_message);
  }
}

/* Loads, decodes and checks items[0..n). */
static void run_batch(Run *run, Item *items, int n)
{
  LhioGpuJpegJob *jobs = calloc(n, sizeof *jobs);
  if (!jobs)
    exit(99);
  int n_jobs = 0;
  for (int i = 0; i < n; i++) {
    prepare(&items[i]);
    if (items[i].result.route == ROUTE_GPU) {
      items[i].job = n_jobs;
      jobs[n_jobs].encoded = &items[i].encoded;
      jobs[n_jobs].info = &items[i].info;
      n_jobs++;
    }
  }
  int decoded = n_jobs ? lhio_gpu_jpeg_decode_luma(run->decoder, jobs, n_jobs) : 0;
  if (decoded < 0) {
    printf("FAIL: lhio_gpu_jpeg_decode_luma on a batch of %d: %s: %s\n", n_jobs,
           lh_status_name(decoded), lh_last_error());
    run->failures++;
  } else {
    int ok = 0;
    for (int j = 0; j < n_jobs; j++)
      ok += jobs[j].status == 0;
    if (ok != decoded) {
      printf("FAIL: lhio_gpu_jpeg_decode_luma returned %d, but %d of its %d jobs succeeded\n",
             decoded, ok, n_jobs);
      run->failures++;
    }
  }

  for (int i = 0; i < n; i++) {
    Item *item = &items[i];
    FileResult *r = &item->result;
    VariantSummary *v = variant_summary(run, r->variant);
    if (r->route != ROUTE_NOT_JPEG)
      v->files++;
    if (r->route == ROUTE_GPU && decoded < 0) {
      r->route = ROUTE_GPU_FAILED;
      v->failed++;
      r->failed = true;
    } else if (r->route == ROUTE_GPU) {
      finish_gpu(run, item, &jobs[item->job], v);
    } else if (r->route == ROUTE_CPU) {
      finish_cpu(run, item, v);
    } else if (r->route == ROUTE_PROBE_FAILED) {
      finish_refused(run, item, v);
    }
    if (r->route == ROUTE_GPU) {
      if (r->max_diff > v->max_diff)
        v->max_diff = r->max_diff;
      v->differing += r->differing;
      v->pixels += r->pixels;
    }
    print_result(item);
    check_route(run, item);
    lhio_encoded_clear(&item->encoded);
  }
  free(jobs);
}

/* ------------------------------------------------------------------------ */
/* Summary                                                                   */

static void print_summary_line(const VariantSummary *v)
{
  printf("%-22s %5d %5d %5d %5d %5d %5d %4d %10.5f %+9.5f %5d\n", v->name, v->files, v->hardware,
         v->hybrid, v->cpu, v->refused, v->failed, v->max_diff,
         v->pixels ? 100.0 * (double)v->differing / (double)v->pixels : 0.0,
         v->pixels ? (double)v->signed_sum / (double)v->pixels : 0.0, v->analysis_mismatches);
}

static void print_summary(const Run *run)
{
  printf("\n%-22s %5s %5s %5s %5s %5s %5s %4s %10s %9s %5s\n", "variant", "files", "hw", "gpu",
         "cpu", "refus", "fail", "max", "differ %", "mean d", "stats");
  VariantSummary all = {.name = "all"};
  for (int i = 0; i < run->n_variants; i++) {
    const VariantSummary *v = &run->variants[i];
    print_summary_line(v);
    all.files += v->files;
    all.hardware += v->hardware;
    all.hybrid += v->hybrid;
    all.cpu += v->cpu;
    all.refused += v->refused;
    all.failed += v->failed;
    all.analysis_mismatches += v->analysis_mismatches;
    all.differing += v->differing;
    all.pixels += v->pixels;
    all.signed_sum += v->signed_sum;
    if (v->max_diff > all.max_diff)
      all.max_diff = v->max_diff;
  }
  print_summary_line(&all);
  printf("(hw: nvjpeg-hardware, gpu: nvjpeg-gpu, cpu: kept from the GPU, refus: refused by the "
         "probe; max: largest |GPU - CPU|; differ %%: of the GPU-decoded pixels; mean d: mean "
         "GPU - CPU; stats: CUDA != CPU analyses)\n");
  printf("GPU decoding time: %.3f ms; largest difference %d, bound %d\n",
         1e3 * lhio_gpu_jpeg_device_seconds(run->decoder), all.max_diff, run->max_diff);
}

/* ------------------------------------------------------------------------ */

static void usage(void)
{
  fprintf(stderr, "usage: nvjpeg-compare [--max-diff N] [--batch N[,N...]] [--expect-routes] "
                  "[--verbose] PATH...\n       nvjpeg-compare --check\n");
  exit(2);
}

static int parse_int(const char *s, int lo, int hi)
{
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno || end == s || *end || v < lo || v > hi)
    usage();
  return (int)v;
}

/* Exits 77 with the reason when no CUDA device or no nvJPEG is usable. */
static void skip_unless_usable(void)
{
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0) {
    printf("SKIP: no CUDA device is usable (%s)\n",
           e != cudaSuccess ? cudaGetErrorString(e) : "none found");
    exit(SKIP_EXIT);
  }
  const char *why = NULL;
  if (!lhio_gpu_jpeg_usable(&why)) {
    printf("SKIP: nvJPEG is not usable: %s\n", why ? why : "(no reason given)");
    exit(SKIP_EXIT);
  }
}

int main(int argc, char **argv)
{
  Run run = {.max_diff = DEFAULT_MAX_DIFF, .batch_sizes = {DEFAULT_BATCH}, .n_batch_sizes = 1};
  PathList files = {0};
  bool check_only = false;
  int first_path = argc;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--max-diff") == 0 && i + 1 < argc) {
      run.max_diff = parse_int(argv[++i], 0, 255);
    } else if (strcmp(argv[i], "--batch") == 0 && i + 1 < argc) {
      char *list = strdup(argv[++i]), *save = NULL;
      run.n_batch_sizes = 0;
      for (char *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (run.n_batch_sizes == MAX_BATCH_SIZES)
          usage();
        run.batch_sizes[run.n_batch_sizes++] = parse_int(tok, 1, 4096);
      }
      free(list);
      if (!run.n_batch_sizes)
        usage();
    } else if (strcmp(argv[i], "--expect-routes") == 0) {
      run.expect_routes = true;
    } else if (strcmp(argv[i], "--verbose") == 0 || strcmp(argv[i], "-v") == 0) {
      run.verbose = true;
    } else if (strcmp(argv[i], "--check") == 0) {
      check_only = true;
    } else if (strcmp(argv[i], "--") == 0) {
      first_path = i + 1;
      break;
    } else if (argv[i][0] == '-') {
      usage();
    } else {
      first_path = i;
      break;
    }
  }
  if (!check_only && first_path >= argc)
    usage();

  skip_unless_usable();
  if (check_only) {
    printf("a CUDA device and nvJPEG are usable\n");
    return 0;
  }

  for (int i = first_path; i < argc; i++) {
    struct stat st;
    if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode))
      collect_folder(&files, argv[i]);
    else
      path_list_add(&files, argv[i]);
  }
  if (files.n == 0) {
    printf("FAIL: no JPEG files under the paths given\n");
    return 1;
  }

  run.gpu = cuda_context_or_skip();
  int status = lh_context_new(LH_BACKEND_CPU, &run.cpu);
  cudaError_t e = cudaStreamCreateWithFlags(&run.stream, cudaStreamNonBlocking);
  if (status < 0 || e != cudaSuccess) {
    fprintf(stderr, "nvjpeg-compare: setting up: %s %s\n", lh_last_error(), cudaGetErrorString(e));
    return 1;
  }
  /* The analyses are queued after the decoding on one stream. */
  status = lh_context_set_stream(run.gpu, run.stream);
  if (status == 0)
    status = lhio_gpu_jpeg_new(run.stream, &run.decoder);
  if (status < 0) {
    printf("FAIL: making the nvJPEG decoder: %s: %s\n", lh_status_name(status), lh_last_error());
    return 1;
  }
  lh_options_init(&run.options);
  if (lh_options_set_percentiles(&run.options, PERCENTILES) < 0) {
    fprintf(stderr, "nvjpeg-compare: %s\n", lh_last_error());
    return 1;
  }
  int device = 0;
  struct cudaDeviceProp prop;
  cudaGetDevice(&device);
  cudaGetDeviceProperties(&prop, device);
  printf("device %d: %s; nvJPEG hardware backend: %s; %d files; bound %d\n", device, prop.name,
         lhio_gpu_jpeg_has_hardware(run.decoder) ? "yes" : "no", files.n, run.max_diff);

  int hardware_used = 0, gpu_routes = 0;
  for (int start = 0, turn = 0; start < files.n; turn++) {
    int n = run.batch_sizes[turn % run.n_batch_sizes];
    if (n > files.n - start)
      n = files.n - start;
    Item *items = calloc(n, sizeof *items);
    if (!items)
      exit(99);
    for (int i = 0; i < n; i++) {
      items[i].result.path = files.paths[start + i];
      variant_of(files.paths[start + i], items[i].result.variant, sizeof items[i].result.variant);
    }
    run_batch(&run, items, n);
    for (int i = 0; i < n; i++) {
      hardware_used += items[i].result.decoder == LHIO_DECODER_NVJPEG_HARDWARE;
      gpu_routes += items[i].result.route == ROUTE_GPU;
    }
    free(items);
    start += n;
  }
  /* Baseline 4:2:0 and gray files are what the engines take first of all. */
  if (run.expect_routes && lhio_gpu_jpeg_has_hardware(run.decoder) && gpu_routes > 0 &&
      hardware_used == 0) {
    printf("FAIL: the GPU has the hardware backend, but it decoded none of %d files\n", gpu_routes);
    run.failures++;
  }

  print_summary(&run);
  lhio_gpu_jpeg_free(run.decoder);
  cudaStreamDestroy(run.stream);
  lh_context_free(run.gpu);
  lh_context_free(run.cpu);
  for (int i = 0; i < files.n; i++)
    free(files.paths[i]);
  free(files.paths);
  free(run.variants);
  if (run.failures) {
    printf("%d failure(s)\n", run.failures);
    return 1;
  }
  printf("nvjpeg-compare: all checks passed\n");
  return 0;
}
