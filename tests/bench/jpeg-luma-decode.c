/* jpeg-luma-decode.c: what decoding only the Y component of colour JPEGs
 * saves over decoding them to RGB and computing luma, for statistics.
 *
 * usage: jpeg-luma-decode [--repeat N] [FOLDER]   (FOLDER: samples/ by default)
 *
 * For every colour (YCbCr) JPEG in FOLDER, it times, N times each in
 * alternation, the two ways to a 256-bin luma histogram:
 *   full: lhio_read(LHIO_READ_FULL) (entropy decode, IDCT of all components,
 *         chroma upsampling, YCbCr->RGB), then BT.601 luma per pixel;
 *   luma: lhio_read(LHIO_READ_LUMA) (entropy decode, IDCT of Y only);
 * and prints the median of each in ms per image, and full / luma.  Times are
 * of the thread's CPU (decoding is single-threaded), so that other work on a
 * shared machine does not count; the minimum is printed beside the median. */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "lh-luma.h"
#include "lhio.h"
#include "thread-time.h"

static int compare_names(const void *a, const void *b)
{
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The histogram and mean of what a read gave: luma of RGB, or Y as it is. */
static double histogram(const LhioImage *img, uint64_t bins[256])
{
  static const LhiLumaWeights bt601 = {LHI_BT601_KR, LHI_BT601_KG,
                                       LHI_LUMA_ONE - LHI_BT601_KR - LHI_BT601_KG, LHI_LUMA_ONE};
  memset(bins, 0, 256 * sizeof *bins);
  const LhFrame *f = &img->frame;
  uint64_t sum = 0;
  for (int y = 0; y < f->height; y++) {
    const uint8_t *row = (const uint8_t *)f->planes[0] + (size_t)y * f->strides[0];
    if (f->format == LH_FORMAT_GRAY8) {
      for (int x = 0; x < f->width; x++)
        bins[row[x]]++;
    } else {
      for (int x = 0; x < f->width; x++) {
        const uint8_t *p = row + 3 * x;
        bins[lhi_luma(p[0], p[1], p[2], bt601)]++;
      }
    }
  }
  for (int v = 0; v < 256; v++)
    sum += bins[v] * v;
  return (double)sum / ((double)f->width * f->height);
}

/* Reads path in mode and builds its histogram; returns the time in ms, or a
 * negative value on failure. */
static double run(const char *path, LhioReadMode mode, double *decode_ms, double *mean)
{
  uint64_t bins[256];
  LhioImage img;
  double t0 = thread_cpu_ms();
  if (lhio_read(path, mode, 0, &img) != LH_OK) {
    fprintf(stderr, "%s\n", lh_last_error());
    return -1;
  }
  double t1 = thread_cpu_ms();
  *mean = histogram(&img, bins);
  double t2 = thread_cpu_ms();
  lhio_image_clear(&img);
  *decode_ms = t1 - t0;
  return t2 - t0;
}

int main(int argc, char **argv)
{
  const char *folder = "samples";
  int repeat = 20;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--repeat") == 0 && i + 1 < argc) {
      repeat = atoi(argv[++i]);
    } else if (strcmp(argv[i], "--help") == 0 || argv[i][0] == '-') {
      printf("usage: %s [--repeat N] [FOLDER]\n", argv[0]);
      return strcmp(argv[i], "--help") == 0 ? 0 : 2;
    } else {
      folder = argv[i];
    }
  }
  if (repeat < 1)
    repeat = 1;

  DIR *dir = opendir(folder);
  if (!dir) {
    perror(folder);
    return 1;
  }
  char **names = NULL;
  size_t n_names = 0;
  struct dirent *e;
  while ((e = readdir(dir))) {
    const char *dot = strrchr(e->d_name, '.');
    if (dot && (strcasecmp(dot, ".jpg") == 0 || strcasecmp(dot, ".jpeg") == 0)) {
      names = realloc(names, (n_names + 1) * sizeof *names);
      names[n_names++] = strdup(e->d_name);
    }
  }
  closedir(dir);
  qsort(names, n_names, sizeof *names, compare_names);

  printf("JPEG to luma histogram: ms of CPU per image, median of %d runs (minimum)\n", repeat);
  printf("%-28s %9s %4s | %7s %7s %17s | %17s | %6s | %s\n", "image", "size", "samp", "RGB dec",
         "+luma", "full", "luma-only", "saving", "mean Y' / Y");
  double *full = malloc(repeat * sizeof *full), *luma = malloc(repeat * sizeof *luma);
  double *full_dec = malloc(repeat * sizeof *full_dec),
         *luma_dec = malloc(repeat * sizeof *luma_dec);
  double total_full = 0, total_luma = 0;
  double mpix = 0;
  int measured = 0;
  for (size_t k = 0; k < n_names; k++) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", folder, names[k]);
    LhioImage probe;
    if (lhio_read(path, LHIO_READ_LUMA, 0, &probe) != LH_OK) {
      fprintf(stderr, "skipped: %s\n", lh_last_error());
      continue;
    }
    int w = probe.frame.width, h = probe.frame.height, hs = probe.jpeg_h_samp[0],
        vs = probe.jpeg_v_samp[0];
    bool colour = probe.luma_only;
    lhio_image_clear(&probe);
    if (!colour) {
      printf("%-28s skipped: not a YCbCr JPEG\n", names[k]);
      continue;
    }
    double mean_full = 0, mean_luma = 0;
    bool ok = true;
    for (int r = 0; r < repeat && ok; r++) {
      full[r] = run(path, LHIO_READ_FULL, &full_dec[r], &mean_full);
      luma[r] = run(path, LHIO_READ_LUMA, &luma_dec[r], &mean_luma);
      ok = full[r] >= 0 && luma[r] >= 0;
    }
    if (!ok)
      continue;
    double f = median_ms(full, repeat), l = median_ms(luma, repeat),
           fd = median_ms(full_dec, repeat);
    printf(
        "%-28s %4dx%-4d %dx%d | %7.3f %7.3f %7.3f (%7.3f) | %7.3f (%7.3f) | %5.2fx | %.2f / %.2f\n",
        names[k], w, h, hs, vs, fd, f - fd, f, full[0], l, luma[0], f / l, mean_full, mean_luma);
    total_full += f;
    total_luma += l;
    mpix += (double)w * h / 1e6;
    measured++;
  }
  if (measured) {
    printf("%-28s %6.2f MP      | %25.3f           | %7.3f           | %5.2fx |\n", "all (medians)",
           mpix, total_full, total_luma, total_full / total_luma);
    printf("throughput: full %.1f MP/s, luma-only %.1f MP/s\n", mpix / total_full * 1e3,
           mpix / total_luma * 1e3);
  } else {
    printf("no colour JPEG in %s\n", folder);
  }
  for (size_t k = 0; k < n_names; k++)
    free(names[k]);
  free(names);
  free(full);
  free(luma);
  free(full_dec);
  free(luma_dec);
  return measured ? 0 : 77;
}
