/* fuzz-common.h: what the libFuzzer targets share: files over fuzz bytes, the
 * checks every decoded image or refusal must pass, and a CPU context. */
#ifndef FUZZ_COMMON_H
#define FUZZ_COMMON_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lhio-private.h"
#include "lumahist.h"

/* Far below the tool's default: a fuzzer input of a few kilobytes may declare
 * a large image that zlib or libjpeg fill quickly, and each run must stay fast. */
#define FUZZ_MAX_PIXELS ((uint64_t)1 << 20)

#define FUZZ_ASSERT(cond)                                                                          \
  do {                                                                                             \
    if (!(cond)) {                                                                                 \
      fprintf(stderr, "%s:%d: assertion failed: %s (last error: %s)\n", __FILE__, __LINE__, #cond, \
              lh_last_error());                                                                    \
      abort();                                                                                     \
    }                                                                                              \
  } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A read-only FILE over the bytes (fmemopen refuses a size of 0). */
static inline FILE *fuzz_open_bytes(const uint8_t *data, size_t size)
{
  FILE *file = size ? fmemopen((void *)data, size, "rb") : fopen("/dev/null", "rb");
  FUZZ_ASSERT(file != NULL);
  return file;
}

/* A refusal: a known negative status, "<path>: <reason>", no pixels kept. */
static inline void fuzz_check_failure(int status, const char *path, LhioImage *image)
{
  FUZZ_ASSERT(status < 0 && strcmp(lh_status_name(status), "unknown") != 0);
  const char *message = lh_last_error();
  size_t n = strlen(path);
  FUZZ_ASSERT(strncmp(message, path, n) == 0 && strncmp(message + n, ": ", 2) == 0 &&
              message[n + 2] != '\0');
  FUZZ_ASSERT(image->pixels == NULL && image->alpha == NULL && image->metadata == NULL);
  lhio_image_clear(image);
}

/* A decoded image is what lhio.h promises, and every byte of it is there. */
static inline void fuzz_check_image(const LhioImage *image)
{
  const LhFrame *frame = &image->frame;
  FUZZ_ASSERT(frame->width > 0 && frame->height > 0);
  FUZZ_ASSERT((uint64_t)frame->width * (uint64_t)frame->height <= FUZZ_MAX_PIXELS);
  FUZZ_ASSERT(frame->planes[0] == image->pixels && image->pixels != NULL);
  size_t row = lhio_packed_row_bytes(frame);
  FUZZ_ASSERT(row > 0 && frame->strides[0] >= row);
  /* Read the last byte of every row: ASan catches a buffer shorter than the frame. */
  volatile uint8_t sink = 0;
  for (int y = 0; y < frame->height; y++)
    sink ^= image->pixels[(size_t)y * frame->strides[0] + row - 1];
  if (image->alpha) {
    FUZZ_ASSERT(image->alpha_stride > 0);
    sink ^=
        image->alpha[(size_t)(frame->height - 1) * image->alpha_stride + image->alpha_stride - 1];
  }
  (void)sink;
}

static inline LhContext *fuzz_context(void)
{
  static LhContext *context;
  if (!context)
    FUZZ_ASSERT(lh_context_new(LH_BACKEND_CPU, &context) == LH_OK);
  return context;
}

/* The image analyses, and its histogram holds every pixel. */
static inline void fuzz_analyze_image(const LhioImage *image)
{
  LhOptions options;
  lh_options_init(&options);
  FUZZ_ASSERT(lh_options_set_percentiles(&options, "0,1,50,99.9,100") == LH_OK);
  LhStats stats;
  lh_stats_init(&stats);
  FUZZ_ASSERT(lh_analyze(fuzz_context(), &image->frame, &options, &stats) == LH_OK);
  uint64_t total = 0;
  for (size_t i = 0; i < stats.n_bins; i++)
    total += stats.histogram[i];
  FUZZ_ASSERT(stats.count == (uint64_t)image->frame.width * (uint64_t)image->frame.height);
  FUZZ_ASSERT(total == stats.count);
  FUZZ_ASSERT(stats.min <= stats.median && stats.median <= stats.max);
  lh_stats_clear(&stats);
}

static inline void fuzz_assert_same_pixels(const LhioImage *a, const LhioImage *b)
{
  FUZZ_ASSERT(a->frame.format == b->frame.format);
  FUZZ_ASSERT(a->frame.width == b->frame.width && a->frame.height == b->frame.height);
  size_t row = lhio_packed_row_bytes(&a->frame);
  for (int y = 0; y < a->frame.height; y++)
    FUZZ_ASSERT(memcmp(a->pixels + (size_t)y * a->frame.strides[0],
                       b->pixels + (size_t)y * b->frame.strides[0], row) == 0);
  FUZZ_ASSERT((a->alpha == NULL) == (b->alpha == NULL));
  if (a->alpha) {
    size_t alpha_row = (size_t)a->frame.width * (a->frame.format == LH_FORMAT_GRAY16 ? 2 : 1);
    for (int y = 0; y < a->frame.height; y++)
      FUZZ_ASSERT(memcmp(a->alpha + (size_t)y * a->alpha_stride,
                         b->alpha + (size_t)y * b->alpha_stride, alpha_row) == 0);
  }
}

#endif /* FUZZ_COMMON_H */
