/* png-decode-bench.c: PNG decoding by libpng alone (png.c) against the fast
 * path for common PNGs (png-fast.c: libdeflate + our unfiltering), one thread.
 *
 * usage: png-decode-bench [--repeat N] FILE.png...
 *
 * Each file is read into memory once; then, N times each in alternation, it
 * is decoded from memory by libpng (lhio_png_read_libpng on an fmemopen'd
 * FILE, as lhio_read_memory does) and by the fast path.  The frames are
 * compared byte for byte; the median (and minimum) of each in ms of the
 * thread's CPU time are printed, and libpng / fast. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lhio-private.h"
#include "thread-time.h"

#ifndef LHIO_HAVE_LIBDEFLATE
int main(void)
{
  printf("SKIP: built without libdeflate: no PNG fast path to time\n");
  return 77;
}
#else
static bool same_frame(const LhioImage *a, const LhioImage *b)
{
  const LhFrame *x = &a->frame, *y = &b->frame;
  if (x->format != y->format || x->width != y->width || x->height != y->height ||
      x->strides[0] != y->strides[0] || (a->alpha != NULL) != (b->alpha != NULL))
    return false;
  if (memcmp(x->planes[0], y->planes[0], x->strides[0] * x->height) != 0)
    return false;
  return !a->alpha || memcmp(a->alpha, b->alpha, a->alpha_stride * x->height) == 0;
}

int main(int argc, char **argv)
{
  int repeat = 15, first = 1;
  if (argc > 2 && strcmp(argv[1], "--repeat") == 0) {
    repeat = atoi(argv[2]);
    first = 3;
  }
  if (first >= argc || repeat < 1) {
    fprintf(stderr, "usage: %s [--repeat N] FILE.png...\n", argv[0]);
    return 2;
  }
  int failures = 0;
  double *libpng_ms = malloc(repeat * sizeof *libpng_ms);
  double *fast_ms = malloc(repeat * sizeof *fast_ms);
  printf("%-40s %12s %12s %8s\n", "file", "libpng ms", "fast ms", "ratio");
  for (int f = first; f < argc; f++) {
    LhioEncoded encoded;
    if (lhio_load(argv[f], &encoded) < 0 || encoded.type != LHIO_FILE_PNG) {
      fprintf(stderr, "%s: %s\n", argv[f], lh_last_error());
      failures++;
      continue;
    }
    bool ok = true;
    for (int r = 0; r < repeat && ok; r++) {
      LhioImage ref = {0}, fast = {0};
      double t0 = thread_cpu_ms();
      FILE *file = fmemopen(encoded.data, encoded.size, "rb");
      int s1 = lhio_png_read_libpng(file, argv[f], 0xffffffffu, &ref);
      fclose(file);
      double t1 = thread_cpu_ms();
      int s2 = lhio_png_fast_read(encoded.data, encoded.size, 0xffffffffu, &fast);
      double t2 = thread_cpu_ms();
      libpng_ms[r] = t1 - t0;
      fast_ms[r] = t2 - t1;
      if (s1 != LH_OK || s2 != LH_OK) {
        fprintf(stderr, "%s: libpng %d, fast path %d (%s)\n", argv[f], s1, s2,
                s2 ? "declined" : "ok");
        ok = false;
      } else if (!same_frame(&ref, &fast)) {
        fprintf(stderr, "%s: the frames differ\n", argv[f]);
        ok = false;
      }
      lhio_image_clear(&ref);
      lhio_image_clear(&fast);
    }
    lhio_encoded_clear(&encoded);
    if (!ok) {
      failures++;
      continue;
    }
    double m1 = median_ms(libpng_ms, repeat), m2 = median_ms(fast_ms, repeat);
    const char *name = strrchr(argv[f], '/') ? strrchr(argv[f], '/') + 1 : argv[f];
    printf("%-40s %6.1f (%5.1f) %6.1f (%5.1f) %7.2fx\n", name, m1, libpng_ms[0], m2, fast_ms[0],
           m1 / m2);
  }
  free(libpng_ms);
  free(fast_ms);
  return failures ? 1 : 0;
}
#endif
