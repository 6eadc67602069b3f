/* difference-test.c: lh_difference_push on the CPU backend against a naive
 * reference (the Y samples read as test-formats.h lays them out, not as
 * src/ does), on seeded random, photo-like and constant frames, odd sizes,
 * padded rows and misaligned planes, the YUV and gray formats; the same bits
 * on 1 and 8 threads; NAN on the first frame and after a reset or a change
 * of size, format or depth; sums past 32 bits; refusals. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frame-gen.h"
#include "lumahist.h"
#include "test-check.h"

static const LhFormat formats[] = {
    LH_FORMAT_GRAY8,     LH_FORMAT_NV12, LH_FORMAT_I420,      LH_FORMAT_YUY2,
    LH_FORMAT_UYVY,      LH_FORMAT_P010, LH_FORMAT_GRAY16,    LH_FORMAT_GRAY16_BE,
    LH_FORMAT_I420_10LE, LH_FORMAT_P012, LH_FORMAT_Y444_16LE, LH_FORMAT_V210,
};
/* 1x1 and 7x5: one band; the others past 64 Ki pixels, split across threads
 * in bands of uneven height. */
static const int sizes[][2] = {{1, 1}, {7, 5}, {333, 97}, {1021, 767}, {1920, 1081}};

/* ---- the reference ---- */

static uint32_t reference_key(const LhFrame *f, int x, int y)
{
  int depth = f->bit_depth ? f->bit_depth : gen_format_depth(f->format);
  uint32_t max_value = (1u << depth) - 1;
  uint32_t v =
      gen_luma_get(f->format, (const uint8_t *)f->planes[0] + (size_t)y * f->strides[0], x);
  return v > max_value ? max_value : v;
}

static double reference_difference(const LhFrame *a, const LhFrame *b)
{
  uint64_t sum = 0;
  for (int y = 0; y < a->height; y++)
    for (int x = 0; x < a->width; x++) {
      uint32_t ka = reference_key(a, x, y), kb = reference_key(b, x, y);
      sum += ka > kb ? ka - kb : kb - ka;
    }
  return (double)sum / ((double)a->width * (double)a->height);
}

static bool same_bits(double a, double b)
{
  return memcmp(&a, &b, sizeof a) == 0;
}

/* Pushes frame and returns the mean (NAN on failure, which is checked). */
static double push(LhContext *ctx, LhDifference *d, const LhFrame *frame, const char *what)
{
  double mean = -1;
  int status = lh_difference_push(ctx, d, frame, &mean);
  CHECK(status == LH_OK, "%s: push gave %s", what, lh_status_name(status));
  return status == LH_OK ? mean : NAN;
}

/* ---- the cases ---- */

/* Three frames of one format and size, each with its own row padding and
 * plane start, pushed in turn (and again after a reset) on a context of one
 * thread and one of eight: each mean the reference's, bit for bit. */
static void test_sequence(LhContext *one, LhContext *eight, LhFormat f, int w, int h, int depth,
                          GenDistribution dist, uint64_t seed)
{
  const int sb = gen_sample_bytes(f);
  GenFrame g[3];
  for (int i = 0; i < 3; i++) {
    /* odd starts for 8-bit samples; 16-bit and v210 words stay aligned */
    size_t pad = (size_t)(i * 5 + (w % 3)) * (size_t)sb, offset = sb == 1 ? (size_t)i : 0;
    if (gen_frame(&g[i], f, w, h, depth, pad, offset, i == 2 ? GEN_UNIFORM : dist, seed + i) < 0) {
      CHECK(false, "%s %dx%d: cannot make frame %d", lh_format_name(f), w, h, i);
      for (int k = 0; k < i; k++)
        gen_free(&g[k]);
      return;
    }
  }
  const double want[] = {NAN,
                         reference_difference(&g[0].frame, &g[1].frame),
                         reference_difference(&g[1].frame, &g[2].frame),
                         0.0,
                         NAN,
                         reference_difference(&g[2].frame, &g[0].frame)};
  const int order[] = {0, 1, 2, 2, 2, 0}; /* a reset before the fifth push */
  LhContext *contexts[2] = {one, eight};
  double got[2][6];
  for (int c = 0; c < 2; c++) {
    LhDifference *d = NULL;
    CHECK(lh_difference_new(&d) == LH_OK, "lh_difference_new");
    if (!d)
      break;
    for (int k = 0; k < 6; k++) {
      if (k == 4)
        lh_difference_reset(d);
      char what[160];
      snprintf(what, sizeof what, "%s/%d %dx%d %s seed %llu, %s, push %d", lh_format_name(f), depth,
               w, h, gen_distribution_names[dist], (unsigned long long)seed,
               c ? "8 threads" : "1 thread", k);
      got[c][k] = push(contexts[c], d, &g[order[k]].frame, what);
      CHECK(isnan(want[k]) ? isnan(got[c][k]) : same_bits(got[c][k], want[k]),
            "%s: mean %.17g, reference %.17g", what, got[c][k], want[k]);
    }
    lh_difference_free(d);
  }
  for (int k = 0; k < 6; k++)
    CHECK(isnan(got[0][k]) ? isnan(got[1][k]) : same_bits(got[0][k], got[1][k]),
          "%s %dx%d push %d: %.17g on 1 thread, %.17g on 8", lh_format_name(f), w, h, k, got[0][k],
          got[1][k]);
  for (int i = 0; i < 3; i++)
    gen_free(&g[i]);
}

static void test_formats(LhContext *one, LhContext *eight)
{
  const GenDistribution dists[] = {GEN_UNIFORM, GEN_PHOTO, GEN_CONSTANT, GEN_NARROW_BAND};
  for (size_t fi = 0; fi < sizeof formats / sizeof formats[0]; fi++)
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
      GenDistribution dist = dists[(fi + s) % (sizeof dists / sizeof dists[0])];
      test_sequence(one, eight, formats[fi], sizes[s][0], sizes[s][1], 0, dist, 100 * fi + s);
    }
  /* GRAY16 of fewer significant bits */
  test_sequence(one, eight, LH_FORMAT_GRAY16, 333, 97, 10, GEN_UNIFORM, 7);
  test_sequence(one, eight, LH_FORMAT_GRAY16_BE, 1021, 767, 12, GEN_PHOTO, 8);
}

/* A frame of one value everywhere (every sample byte for 8-bit formats, the
 * 16-bit word for the others), tightly packed. */
static void fill_frame(GenFrame *g, LhFormat f, int w, int h, int depth, uint32_t word)
{
  CHECK(gen_frame(g, f, w, h, depth, 0, 0, GEN_CONSTANT, 1) == 0, "gen_frame");
  size_t bytes = (size_t)g->frame.strides[0] * (size_t)h;
  uint8_t *p = g->frame.planes[0];
  if (gen_sample_bytes(f) == 1) {
    memset(p, (int)word, bytes);
  } else {
    for (size_t i = 0; i + 1 < bytes; i += 2) {
      p[i] = (uint8_t)word;
      p[i + 1] = (uint8_t)(word >> 8);
    }
  }
}

/* The values compared are those the histogram counts: GRAY16 above its
 * depth clamped to the top, P010's low six bits dropped, chroma ignored. */
static void test_sample_values(LhContext *ctx)
{
  LhDifference *d = NULL;
  lh_difference_new(&d);
  GenFrame a, b;
  fill_frame(&a, LH_FORMAT_GRAY16, 9, 4, 10, 2000); /* read as 1023 */
  fill_frame(&b, LH_FORMAT_GRAY16, 9, 4, 10, 1000);
  push(ctx, d, &a.frame, "GRAY16/10 of 2000");
  double mean = push(ctx, d, &b.frame, "GRAY16/10 of 1000");
  CHECK(mean == 23.0, "GRAY16 at 10 bits, 2000 (clamped to 1023) then 1000: %.17g, not 23", mean);
  gen_free(&a);
  gen_free(&b);

  lh_difference_reset(d);
  fill_frame(&a, LH_FORMAT_P010, 6, 4, 0, (700u << 6) | 0x3f);
  fill_frame(&b, LH_FORMAT_P010, 6, 4, 0, 705u << 6);
  push(ctx, d, &a.frame, "P010 of 700 and low bits");
  mean = push(ctx, d, &b.frame, "P010 of 705");
  CHECK(mean == 5.0, "P010 700 (low bits set) then 705: %.17g, not 5", mean);
  gen_free(&a);
  gen_free(&b);

  /* YUY2: Y0 U Y1 V; only the even bytes are luma */
  lh_difference_reset(d);
  fill_frame(&a, LH_FORMAT_YUY2, 6, 3, 0, 0);
  fill_frame(&b, LH_FORMAT_YUY2, 6, 3, 0, 0);
  uint8_t *pb = b.frame.planes[0];
  for (size_t i = 0; i < b.frame.strides[0] * 3; i += 2)
    pb[i + 1] = 200;
  pb[b.frame.strides[0] + 4] = 60; /* Y of pixel 2 of row 1 */
  push(ctx, d, &a.frame, "YUY2 of zero");
  mean = push(ctx, d, &b.frame, "YUY2 of other chroma");
  CHECK(mean == 60.0 / 18.0, "YUY2 with one Y of 60 and chroma changed: %.17g, not 60/18", mean);
  gen_free(&a);
  gen_free(&b);
  lh_difference_free(d);
}

/* Rows wider than the row loop's 32-bit chunks, every difference 65535: a
 * sum past 2^32. */
static void test_large_sum(LhContext *ctx)
{
  LhDifference *d = NULL;
  lh_difference_new(&d);
  GenFrame a, b;
  fill_frame(&a, LH_FORMAT_GRAY16, 70001, 3, 0, 0);
  fill_frame(&b, LH_FORMAT_GRAY16, 70001, 3, 0, 0xffff);
  push(ctx, d, &a.frame, "GRAY16 of 0");
  double mean = push(ctx, d, &b.frame, "GRAY16 of 65535");
  CHECK(mean == 65535.0, "70001x3 GRAY16, 0 then 65535: %.17g", mean);
  mean = push(ctx, d, &a.frame, "GRAY16 of 0 again");
  CHECK(mean == 65535.0, "70001x3 GRAY16, 65535 then 0: %.17g", mean);
  gen_free(&a);
  gen_free(&b);
  lh_difference_free(d);
}

/* A new size, format or depth starts afresh; so does a failed push. */
static void test_restarts(LhContext *ctx)
{
  LhDifference *d = NULL;
  lh_difference_new(&d);
  GenFrame g8, g8_tall, nv12, i420, g16_10, g16_12, rgb;
  gen_frame(&g8, LH_FORMAT_GRAY8, 10, 10, 0, 0, 0, GEN_UNIFORM, 1);
  gen_frame(&g8_tall, LH_FORMAT_GRAY8, 10, 11, 0, 0, 0, GEN_UNIFORM, 2);
  gen_frame(&nv12, LH_FORMAT_NV12, 10, 11, 0, 0, 0, GEN_UNIFORM, 3);
  gen_frame(&i420, LH_FORMAT_I420, 10, 11, 0, 0, 0, GEN_UNIFORM, 4);
  gen_frame(&g16_10, LH_FORMAT_GRAY16, 10, 11, 10, 0, 0, GEN_UNIFORM, 5);
  gen_frame(&g16_12, LH_FORMAT_GRAY16, 10, 11, 12, 0, 0, GEN_UNIFORM, 6);
  gen_frame(&rgb, LH_FORMAT_RGB, 10, 11, 0, 0, 0, GEN_UNIFORM, 7);

  CHECK(isnan(push(ctx, d, &g8.frame, "first")), "the first frame gives NAN");
  CHECK(isnan(push(ctx, d, &g8_tall.frame, "taller")), "a new size gives NAN");
  CHECK(push(ctx, d, &g8_tall.frame, "taller again") == 0.0, "the same frame twice gives 0");
  CHECK(isnan(push(ctx, d, &nv12.frame, "NV12")), "a new format gives NAN");
  double mean = push(ctx, d, &i420.frame, "I420");
  CHECK(isnan(mean), "NV12 then I420 (a new format) gives NAN, not %g", mean);
  CHECK(isnan(push(ctx, d, &g16_10.frame, "GRAY16/10")), "GRAY16 after I420 gives NAN");
  CHECK(isnan(push(ctx, d, &g16_12.frame, "GRAY16/12")), "a new depth gives NAN");
  mean = push(ctx, d, &g16_10.frame, "GRAY16/10 again");
  CHECK(isnan(mean), "back to 10 bits gives NAN, not %g", mean);
  mean = push(ctx, d, &g16_10.frame, "GRAY16/10 twice");
  CHECK(mean == 0.0, "the same frame twice gives 0, not %g", mean);

  /* A refused frame: NAN, and the next one is a first one. */
  double out = 1;
  int status = lh_difference_push(ctx, d, &rgb.frame, &out);
  CHECK(status == LH_ERROR_UNSUPPORTED, "RGB: %s", lh_status_name(status));
  CHECK(isnan(out), "a refused frame's mean is NAN, not %g", out);
  CHECK(isnan(push(ctx, d, &g16_10.frame, "after RGB")), "after a refused frame: NAN");
  LhFrame device = g16_10.frame;
  device.memory = LH_MEMORY_CUDA;
  status = lh_difference_push(ctx, d, &device, &out);
  CHECK(status == LH_ERROR_UNSUPPORTED, "a CUDA frame on the CPU: %s", lh_status_name(status));
  CHECK(isnan(push(ctx, d, &g16_10.frame, "after CUDA")), "after a refused CUDA frame: NAN");
  LhFrame bad = g16_10.frame;
  bad.strides[0] = 2;
  status = lh_difference_push(ctx, d, &bad, &out);
  CHECK(status == LH_ERROR_INVALID_ARGUMENT, "a stride below the row: %s", lh_status_name(status));
  CHECK(isnan(push(ctx, d, &g16_10.frame, "after a bad frame")), "after a bad frame: NAN");

  CHECK(lh_difference_push(NULL, d, &g8.frame, &out) == LH_ERROR_INVALID_ARGUMENT, "NULL context");
  CHECK(lh_difference_push(ctx, NULL, &g8.frame, &out) == LH_ERROR_INVALID_ARGUMENT, "NULL state");
  CHECK(lh_difference_push(ctx, d, NULL, &out) == LH_ERROR_INVALID_ARGUMENT, "NULL frame");
  CHECK(lh_difference_push(ctx, d, &g8.frame, NULL) == LH_ERROR_INVALID_ARGUMENT, "NULL mean");
  CHECK(lh_difference_new(NULL) == LH_ERROR_INVALID_ARGUMENT, "NULL out");
  lh_difference_reset(NULL);
  lh_difference_free(NULL);

  GenFrame *all[] = {&g8, &g8_tall, &nv12, &i420, &g16_10, &g16_12, &rgb};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
    gen_free(all[i]);
  lh_difference_free(d);
}

int main(void)
{
  LhContext *one = NULL, *eight = NULL;
  if (lh_context_new(LH_BACKEND_CPU, &one) < 0 || lh_context_new(LH_BACKEND_CPU, &eight) < 0) {
    fprintf(stderr, "lh_context_new: %s\n", lh_last_error());
    return 1;
  }
  lh_context_set_threads(one, 1);
  lh_context_set_threads(eight, 8);
  test_formats(one, eight);
  test_sample_values(eight);
  test_large_sum(eight);
  test_restarts(one);
  lh_context_free(one);
  lh_context_free(eight);
  printf("%d checks, %d failures\n", checks, failures);
  return failures != 0;
}
