/* threads-test.c: the CPU backend on 2, 3 and 8 threads against itself on
 * one (lh_context_set_threads): the same histogram, statistics and output
 * bytes of analysis, global equalization and CLAHE (chroma kept and scaled)
 * and overlays, for every format family, odd sizes (fewer rows than
 * threads, parts of uneven height), padded rows and the distributions of
 * frame-gen.h.  A part counted twice, a row left out or a race between
 * threads changes some byte. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "frame-gen.h"
#include "lumahist.h"
#include "test-check.h"

/* 12-bit ones: more than 1024 bins, the threads' histograms added up by
 * every thread, each a range of bins. */
static const LhFormat formats[] = {LH_FORMAT_GRAY8,      LH_FORMAT_GRAY16,    LH_FORMAT_RGB,
                                   LH_FORMAT_BGRA,       LH_FORMAT_I420,      LH_FORMAT_NV12,
                                   LH_FORMAT_P010,       LH_FORMAT_P012,      LH_FORMAT_Y444_12LE,
                                   LH_FORMAT_RGB16,      LH_FORMAT_GRAY16_BE, LH_FORMAT_P016,
                                   LH_FORMAT_BGRA16};
/* 1x1 and 5x3: fewer rows than threads; the others past the size where a
 * frame is split (64 Ki pixels a part), with uneven parts. */
static const int sizes[][2] = {{1, 1}, {5, 3}, {333, 97}, {1021, 767}, {1920, 1081}};
static const int thread_counts[] = {2, 3, 8};

static bool same_stats(const LhStats *a, const LhStats *b)
{
  return a->count == b->count && a->mean == b->mean && a->stddev == b->stddev && a->min == b->min &&
         a->max == b->max && a->median == b->median && a->n_bins == b->n_bins &&
         memcmp(a->histogram, b->histogram, a->n_bins * sizeof *a->histogram) == 0 &&
         memcmp(a->percentile_value, b->percentile_value, sizeof a->percentile_value) == 0;
}

/* The output of equalizing a fresh copy of the input (seeded alike) into a
 * fresh output buffer, as bytes to compare. */
static int equalize_bytes(LhContext *ctx, LhFormat f, int w, int h, GenDistribution d,
                          uint64_t seed, LhEqualizeMode mode, LhChromaRule chroma, GenFrame *out)
{
  GenFrame in;
  if (gen_frame(&in, f, w, h, 0, 7, 0, d, seed) < 0 || gen_frame(out, f, w, h, 0, 7, 0, d, 99) < 0)
    return -1;
  LhEqualizeOptions options;
  lh_equalize_options_init(&options);
  options.mode = mode;
  options.chroma = chroma;
  options.tiles_x = 5;
  options.tiles_y = 3;
  int status = lh_equalize(ctx, &in.frame, &out->frame, &options);
  gen_free(&in);
  return status;
}

/* The bytes of a frame with its histogram drawn on most of it, on the
 * context's threads. */
static int overlay_bytes(LhContext *ctx, LhFormat f, int w, int h, GenDistribution d, uint64_t seed,
                         GenFrame *g)
{
  if (gen_frame(g, f, w, h, 0, 3, 0, d, seed) < 0)
    return -1;
  LhOptions options;
  lh_options_init(&options);
  lh_options_set_percentiles(&options, "5,95");
  LhStats stats;
  lh_stats_init(&stats);
  int status = lh_analyze(ctx, &g->frame, &options, &stats);
  LhOverlayOptions overlay;
  lh_overlay_options_init(&overlay);
  overlay.rect = (LhRect){w / 9, h / 7 + 1, w - w / 5, h - h / 4};
  if (status == LH_OK)
    status = lh_overlay(ctx, &g->frame, &stats, &overlay);
  lh_stats_clear(&stats);
  return status;
}

static void test_format(LhContext *ctx, LhFormat f)
{
  LhOptions options;
  lh_options_init(&options);
  lh_options_set_percentiles(&options, "0,1,10,50,90,99,100");
  for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
    int w = sizes[s][0], h = sizes[s][1];
    GenDistribution d = (GenDistribution)((s + (size_t)f) % GEN_COUNT);
    uint64_t seed = 1000 + s;
    GenFrame g;
    CHECK(gen_frame(&g, f, w, h, 0, 5, 0, d, seed) == 0, "frame %s %dx%d", lh_format_name(f), w, h);
    LhStats one, many;
    lh_stats_init(&one);
    lh_stats_init(&many);
    lh_context_set_threads(ctx, 1);
    CHECK(lh_analyze(ctx, &g.frame, &options, &one) == LH_OK, "analyze %s %dx%d on 1 thread: %s",
          lh_format_name(f), w, h, lh_last_error());
    GenFrame eq_one[2], clahe_one[2], overlay_one;
    int overlay_status = overlay_bytes(ctx, f, w, h, d, seed, &overlay_one);
    /* Chroma kept, and scaled with the luma (YUV; the chroma pass splits
     * its rows across the threads too). */
    static const LhChromaRule rules[2] = {LH_CHROMA_KEEP, LH_CHROMA_SCALE};
    int eq_status[2], clahe_status[2];
    for (int r = 0; r < 2; r++) {
      eq_status[r] =
          equalize_bytes(ctx, f, w, h, d, seed, LH_EQUALIZE_GLOBAL, rules[r], &eq_one[r]);
      clahe_status[r] =
          equalize_bytes(ctx, f, w, h, d, seed, LH_EQUALIZE_CLAHE, rules[r], &clahe_one[r]);
    }
    for (size_t t = 0; t < sizeof thread_counts / sizeof thread_counts[0]; t++) {
      int threads = thread_counts[t];
      lh_context_set_threads(ctx, threads);
      CHECK(lh_analyze(ctx, &g.frame, &options, &many) == LH_OK && same_stats(&one, &many),
            "analyze %s %dx%d %s: %d threads differ from one", lh_format_name(f), w, h,
            gen_distribution_names[d], threads);
      for (int r = 0; r < 2; r++) {
        GenFrame eq, clahe;
        CHECK(equalize_bytes(ctx, f, w, h, d, seed, LH_EQUALIZE_GLOBAL, rules[r], &eq) ==
                      eq_status[r] &&
                  (eq_status[r] < 0 || memcmp(eq.allocation, eq_one[r].allocation, eq.size) == 0),
              "equalize %s %dx%d %s, chroma %s: %d threads differ from one", lh_format_name(f),
              w, h, gen_distribution_names[d], r ? "scaled" : "kept", threads);
        CHECK(equalize_bytes(ctx, f, w, h, d, seed, LH_EQUALIZE_CLAHE, rules[r], &clahe) ==
                      clahe_status[r] &&
                  (clahe_status[r] < 0 ||
                   memcmp(clahe.allocation, clahe_one[r].allocation, clahe.size) == 0),
              "CLAHE %s %dx%d %s, chroma %s: %d threads differ from one", lh_format_name(f), w,
              h, gen_distribution_names[d], r ? "scaled" : "kept", threads);
        gen_free(&eq);
        gen_free(&clahe);
      }
      GenFrame drawn;
      CHECK(overlay_bytes(ctx, f, w, h, d, seed, &drawn) == overlay_status &&
                (overlay_status < 0 ||
                 memcmp(drawn.allocation, overlay_one.allocation, drawn.size) == 0),
            "overlay %s %dx%d %s: %d threads differ from one", lh_format_name(f), w, h,
            gen_distribution_names[d], threads);
      gen_free(&drawn);
    }
    gen_free(&overlay_one);
    for (int r = 0; r < 2; r++) {
      gen_free(&eq_one[r]);
      gen_free(&clahe_one[r]);
    }
    lh_stats_clear(&one);
    lh_stats_clear(&many);
    gen_free(&g);
  }
}

int main(void)
{
  LhContext *ctx = NULL;
  if (lh_context_new(LH_BACKEND_CPU, &ctx) != LH_OK) {
    fprintf(stderr, "cannot make a CPU context: %s\n", lh_last_error());
    return 1;
  }
  CHECK(lh_context_set_threads(ctx, -1) == LH_ERROR_INVALID_ARGUMENT, "threads -1 accepted");
  CHECK(lh_context_set_threads(NULL, 2) == LH_ERROR_INVALID_ARGUMENT, "a NULL context accepted");
  for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++)
    test_format(ctx, formats[i]);
  /* Back to one per core, and freed with its threads running. */
  CHECK(lh_context_set_threads(ctx, 0) == LH_OK, "threads 0 refused");
  lh_context_free(ctx);
  printf("%s: %d check(s), %d failure(s)\n", failures ? "FAILED" : "ok", checks, failures);
  return failures ? 1 : 0;
}
