/* eq-test.c: equalization, CLAHE, temporal smoothing and overlays of the CPU
 * backend against the plain references of eq-reference.h on every format,
 * size and option, plus invariants, golden checksums of rendered overlays
 * and argument checks.  `eq-test --dump DIR` writes the overlay frames as
 * raw files for looking at them. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../unit/test-check.h"
#include "eq-reference.h"

static const LhFormat all_formats[] = {
    LH_FORMAT_GRAY8,
    LH_FORMAT_GRAY16,
    LH_FORMAT_RGB,
    LH_FORMAT_BGR,
    LH_FORMAT_RGBA,
    LH_FORMAT_BGRA,
    LH_FORMAT_RGBX,
    LH_FORMAT_BGRX,
    LH_FORMAT_RGB16,
    LH_FORMAT_RGBA16,
    LH_FORMAT_I420,
    LH_FORMAT_NV12,
    LH_FORMAT_P010,
    /* the YUV of cameras, capture cards and decoders */
    LH_FORMAT_YV12,
    LH_FORMAT_NV21,
    LH_FORMAT_Y42B,
    LH_FORMAT_Y444,
    LH_FORMAT_NV16,
    LH_FORMAT_NV24,
    LH_FORMAT_Y41B,
    LH_FORMAT_YUY2,
    LH_FORMAT_YVYU,
    LH_FORMAT_UYVY,
    LH_FORMAT_VYUY,
    LH_FORMAT_V210,
    LH_FORMAT_GRAY16_BE,
    LH_FORMAT_I420_10LE,
    LH_FORMAT_I420_12LE,
    LH_FORMAT_I422_10LE,
    LH_FORMAT_I422_12LE,
    LH_FORMAT_Y444_10LE,
    LH_FORMAT_Y444_12LE,
    LH_FORMAT_Y444_16LE,
    LH_FORMAT_P012,
    LH_FORMAT_P016,
    /* R'G'B' 10 and 16 bits */
    LH_FORMAT_RGB10A2_LE,
    LH_FORMAT_BGR10A2_LE,
    LH_FORMAT_R210,
    LH_FORMAT_BGRA16,
};
#define N_FORMATS (sizeof all_formats / sizeof *all_formats)

/* A second frame with the layout of g: a copy of its bytes, or filler. */
typedef struct {
  LhFrame frame;
  uint8_t *allocation;
  size_t size;
} Twin;

static void twin_of(const GenFrame *g, bool copy, Twin *t)
{
  t->size = g->size;
  t->allocation = malloc(g->size);
  if (copy)
    memcpy(t->allocation, g->allocation, g->size);
  else
    memset(t->allocation, 0xa5, g->size);
  t->frame = g->frame;
  for (int p = 0; p < 3; p++)
    if (g->frame.planes[p])
      t->frame.planes[p] = t->allocation + ((uint8_t *)g->frame.planes[p] - g->allocation);
}

/* Every byte of the rows of every plane that the format defines. */
static bool same_pixels(const LhFrame *a, const LhFrame *b, char *where, size_t n)
{
  size_t row_bytes = gen_row_bytes(a->format, a->width);
  for (int y = 0; y < a->height; y++) {
    const uint8_t *ra = (const uint8_t *)a->planes[0] + (size_t)y * a->strides[0];
    const uint8_t *rb = (const uint8_t *)b->planes[0] + (size_t)y * b->strides[0];
    for (size_t i = 0; i < row_bytes; i++)
      if (ra[i] != rb[i]) {
        snprintf(where, n, "plane 0 row %d byte %zu: %u != %u", y, i, ra[i], rb[i]);
        return false;
      }
  }
  if (ref_is_yuv(a->format)) {
    int rows;
    size_t bytes;
    ref_chroma(a, &rows, &bytes);
    for (int p = 1; p <= gen_chroma_planes(a->format); p++)
      for (int y = 0; y < rows; y++)
        if (memcmp((const uint8_t *)a->planes[p] + (size_t)y * a->strides[p],
                   (const uint8_t *)b->planes[p] + (size_t)y * b->strides[p], bytes) != 0) {
          snprintf(where, n, "chroma plane %d row %d", p, y);
          return false;
        }
  }
  return true;
}

static LhContext *cpu;

/* ------------------------------------------------------------------------ */
/* The LUT                                                                   */

static void test_lut_by_hand(void)
{
  uint64_t h[256] = {0};
  uint16_t lut[256];
  /* f = 10, N - h[f] = 8, scale 31.875: 3 * 31.875 = 95.625 -> 96, 8 -> 255 */
  h[10] = 2;
  h[20] = 3;
  h[30] = 5;
  CHECK(lh_lut_from_histogram(h, 8, LH_RANGE_FULL, lut) == 0, "%s", lh_last_error());
  CHECK(lut[0] == 0 && lut[10] == 0 && lut[19] == 0, "below and at the first bin");
  CHECK(lut[20] == 96 && lut[29] == 96, "lut[20] = %u", lut[20]);
  CHECK(lut[30] == 255 && lut[255] == 255, "lut[30] = %u", lut[30]);
  /* N - h[f] = 510: scale 0.5; ties go to even: 0.5 -> 0, 1.5 -> 2, 2.5 -> 2 */
  memset(h, 0, sizeof h);
  h[0] = 1;
  h[1] = 1;
  h[2] = 2;
  h[3] = 2;
  h[4] = 505;
  CHECK(lh_lut_from_histogram(h, 8, LH_RANGE_FULL, lut) == 0, "%s", lh_last_error());
  CHECK(lut[1] == 0 && lut[2] == 2 && lut[3] == 2 && lut[4] == 255,
        "ties: %u %u %u %u (want 0 2 2 255)", lut[1], lut[2], lut[3], lut[4]);
  /* limited range: black 16, white 235 */
  CHECK(lh_lut_from_histogram(h, 8, LH_RANGE_LIMITED, lut) == 0, "%s", lh_last_error());
  CHECK(lut[0] == 16 && lut[4] == 235 && lut[255] == 235, "limited %u %u", lut[0], lut[4]);
  /* one value only: the identity */
  memset(h, 0, sizeof h);
  h[77] = 1000;
  CHECK(lh_lut_from_histogram(h, 8, LH_RANGE_FULL, lut) == 0, "%s", lh_last_error());
  CHECK(lut[0] == 0 && lut[77] == 77 && lut[255] == 255, "constant: %u", lut[77]);
  CHECK(lh_lut_from_histogram(h, 7, LH_RANGE_FULL, lut) == LH_ERROR_INVALID_ARGUMENT, "depth 7");
  CHECK(lh_lut_from_histogram(NULL, 8, LH_RANGE_FULL, lut) == LH_ERROR_INVALID_ARGUMENT, "NULL");
  /* Counts that sum past 2^64 wrapped the total (here to 0: the identity). */
  memset(h, 0, sizeof h);
  h[10] = h[200] = (uint64_t)1 << 63;
  CHECK(lh_lut_from_histogram(h, 8, LH_RANGE_FULL, lut) == LH_ERROR_INVALID_ARGUMENT,
        "counts past 2^64: lut[200] = %u", lut[200]);
  h[200] = ((uint64_t)1 << 63) - 1;
  CHECK(lh_lut_from_histogram(h, 8, LH_RANGE_FULL, lut) == 0 && lut[200] == 255,
        "counts of 2^64 - 1: %s", lh_last_error());
}

static void test_lut_random(void)
{
  uint64_t rng = 12345;
  for (int depth = 8; depth <= 16; depth += 2) {
    size_t bins = (size_t)1 << depth;
    uint64_t *h = calloc(bins, sizeof *h);
    uint16_t *lut = malloc(bins * sizeof *lut), *want = malloc(bins * sizeof *want);
    for (int trial = 0; trial < 40; trial++) {
      int sparse = trial % 4;
      for (size_t v = 0; v < bins; v++) {
        uint64_t r = gen_next(&rng);
        h[v] = sparse == 0   ? r % 1000
               : sparse == 1 ? (r % 50 == 0 ? r % 100000 : 0)
               : sparse == 2 ? (r % 7 == 0) * ((r >> 20) % ((uint64_t)1 << 36))
                             : (v > bins / 3 && v < bins / 3 + 3) * (r % 5);
      }
      for (int range = 0; range < 2; range++) {
        uint32_t black, white;
        ref_range(depth, (LhRange)range, &black, &white);
        ref_lut(h, depth, black, white, want);
        CHECK(lh_lut_from_histogram(h, depth, (LhRange)range, lut) == 0, "%s", lh_last_error());
        size_t bad = bins;
        for (size_t v = 0; v < bins && bad == bins; v++)
          if (lut[v] != want[v])
            bad = v;
        CHECK(bad == bins, "depth %d trial %d range %d: lut[%zu] = %u, want %u", depth, trial,
              range, bad, lut[bad < bins ? bad : 0], want[bad < bins ? bad : 0]);
      }
    }
    free(h);
    free(lut);
    free(want);
  }
}

/* ------------------------------------------------------------------------ */
/* Global equalization and CLAHE on every format                             */

typedef struct {
  int width, height;
  size_t extra_stride, offset;
} Shape;

static const Shape shapes[] = {
    {1, 1, 0, 0}, {7, 5, 3, 1}, {64, 48, 0, 0}, {33, 17, 5, 3}, {120, 2, 16, 0}, {3, 90, 0, 2},
};
#define N_SHAPES (sizeof shapes / sizeof *shapes)

typedef struct {
  LhEqualizeMode mode;
  int tiles_x, tiles_y;
  double clip;
} Mode;

/* Runs one case out of place (into a copy of in, and into filler) and in
 * place, against the reference. */
static void check_case(const GenFrame *g, const LhEqualizeOptions *o, const char *what)
{
  Twin want, copy, filler, inplace;
  twin_of(g, true, &want);
  twin_of(g, true, &copy);
  twin_of(g, false, &filler);
  twin_of(g, true, &inplace);
  if (o->mode == LH_EQUALIZE_GLOBAL)
    ref_equalize(&g->frame, &want.frame, o->matrix, o->range);
  else
    ref_clahe(&g->frame, &want.frame, o->matrix, o->range, o->tiles_x, o->tiles_y, o->clip_limit);

  int status = lh_equalize(cpu, &g->frame, &copy.frame, o);
  CHECK(status == 0, "%s: %s", what, lh_last_error());
  /* into a copy: every byte, padding included, is the reference's */
  CHECK(memcmp(copy.allocation, want.allocation, want.size) == 0, "%s: into a copy", what);
  char where[128] = "";
  status = lh_equalize(cpu, &g->frame, &filler.frame, o);
  CHECK(status == 0 && same_pixels(&filler.frame, &want.frame, where, sizeof where),
        "%s: into another buffer: %s", what, where);
  status = lh_equalize(cpu, &inplace.frame, &inplace.frame, o);
  CHECK(status == 0 && memcmp(inplace.allocation, want.allocation, want.size) == 0, "%s: in place",
        what);
  free(want.allocation);
  free(copy.allocation);
  free(filler.allocation);
  free(inplace.allocation);
}

static void test_formats(void)
{
  static const Mode modes[] = {
      {LH_EQUALIZE_GLOBAL, 0, 0, 0},  {LH_EQUALIZE_CLAHE, 8, 8, 40.0},
      {LH_EQUALIZE_CLAHE, 3, 2, 2.0}, {LH_EQUALIZE_CLAHE, 1, 1, 0.0},
      {LH_EQUALIZE_CLAHE, 5, 4, 0.3},
  };
  static const GenDistribution dists[] = {GEN_PHOTO, GEN_UNIFORM, GEN_CONSTANT, GEN_MOSTLY_ONE,
                                          GEN_NARROW_BAND};
  int seed = 1;
  for (size_t f = 0; f < N_FORMATS; f++)
    for (size_t s = 0; s < N_SHAPES; s++)
      for (size_t m = 0; m < sizeof modes / sizeof *modes; m++) {
        LhFormat format = all_formats[f];
        const Shape *sh = &shapes[s];
        /* 16-bit samples at 16, 12 and 8 significant bits; 16-bit CLAHE
         * references are slow: fewer of them */
        static const int wide_depths[] = {16, 12, 8};
        const bool variable_depth = format == LH_FORMAT_GRAY16 || format == LH_FORMAT_GRAY16_BE ||
                                    format == LH_FORMAT_RGB16 || format == LH_FORMAT_RGBA16;
        int depth = variable_depth ? wide_depths[s % 3] : 0;
        if (depth == 0 && gen_format_depth(format) == 16 && modes[m].mode == LH_EQUALIZE_CLAHE &&
            modes[m].tiles_x * modes[m].tiles_y > 6)
          continue;
        if (depth == 16 && modes[m].mode == LH_EQUALIZE_CLAHE &&
            modes[m].tiles_x * modes[m].tiles_y > 6)
          continue;
        GenDistribution d = dists[(f + s + m) % (sizeof dists / sizeof *dists)];
        /* 16-bit samples start on even addresses; an interleaved chroma row
         * of an odd width is a sample pair longer than the luma row, so its
         * stride needs room (as GStreamer rounds it up) */
        const size_t sb = (size_t)gen_sample_bytes(format);
        size_t offset = sh->offset / sb * sb;
        size_t extra = sh->extra_stride;
        if (gen_chroma_planes(format) == 1 && sh->width % 2)
          extra += 4;
        GenFrame g;
        if (gen_frame(&g, format, sh->width, sh->height, depth, extra, offset, d,
                      (uint64_t)seed++) < 0) {
          CHECK(0, "gen_frame %s", lh_format_name(format));
          continue;
        }
        LhEqualizeOptions o;
        lh_equalize_options_init(&o);
        o.mode = modes[m].mode;
        o.tiles_x = modes[m].tiles_x;
        o.tiles_y = modes[m].tiles_y;
        o.clip_limit = modes[m].clip;
        o.matrix = (LhMatrix)(seed % 3);
        o.range = seed % 5 == 0 ? LH_RANGE_LIMITED : LH_RANGE_FULL;
        char what[200];
        snprintf(what, sizeof what,
                 "%s %dx%d depth %d %s %s tiles %dx%d clip %g matrix %d range %d",
                 lh_format_name(format), sh->width, sh->height, depth, gen_distribution_names[d],
                 o.mode == LH_EQUALIZE_GLOBAL ? "global" : "clahe", o.tiles_x, o.tiles_y,
                 o.clip_limit, o.matrix, o.range);
        check_case(&g, &o, what);
        gen_free(&g);
      }
}

/* lh_apply_lut with a LUT of one image on another. */
static void test_apply_lut(void)
{
  GenFrame g;
  gen_frame(&g, LH_FORMAT_BGRA, 40, 30, 0, 4, 0, GEN_PHOTO, 99);
  uint16_t lut[256];
  for (int v = 0; v < 256; v++)
    lut[v] = (uint16_t)(255 - v);
  Twin want, got;
  twin_of(&g, true, &want);
  twin_of(&g, true, &got);
  ref_apply(&g.frame, &want.frame, lut, LH_MATRIX_BT709);
  CHECK(lh_apply_lut(cpu, &g.frame, &got.frame, lut, LH_MATRIX_BT709) == 0, "%s", lh_last_error());
  CHECK(memcmp(want.allocation, got.allocation, got.size) == 0, "apply an inverting LUT");
  lut[3] = 256;
  CHECK(lh_apply_lut(cpu, &g.frame, &got.frame, lut, LH_MATRIX_BT709) == LH_ERROR_INVALID_ARGUMENT,
        "a LUT entry above white");
  free(want.allocation);
  free(got.allocation);
  gen_free(&g);
}

/* ------------------------------------------------------------------------ */
/* Invariants                                                                */

static void gray_stats(const uint8_t *p, size_t n, double *mean, double *sd)
{
  double s = 0, q = 0;
  for (size_t i = 0; i < n; i++)
    s += p[i];
  *mean = s / (double)n;
  for (size_t i = 0; i < n; i++)
    q += (p[i] - *mean) * (p[i] - *mean);
  *sd = sqrt(q / (double)n);
}

static void test_invariants(void)
{
  /* A low-contrast photograph-like frame: a smooth field in 90 .. 150. */
  const int w = 320, h = 240;
  uint8_t *in = malloc((size_t)w * h), *out = malloc((size_t)w * h);
  uint64_t rng = 7;
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      double v = 120 + 22 * sin(x / 37.0) * cos(y / 23.0) + 6 * sin((x + y) / 5.0) +
                 (double)(gen_next(&rng) % 9) - 4;
      in[(size_t)y * w + x] = (uint8_t)lrint(v);
    }
  double mean_in, sd_in, mean_out, sd_out;
  gray_stats(in, (size_t)w * h, &mean_in, &sd_in);
  LhFrame fin, fout;
  lh_frame_init(&fin, LH_FORMAT_GRAY8, LH_MEMORY_HOST, w, h, in, 0);
  lh_frame_init(&fout, LH_FORMAT_GRAY8, LH_MEMORY_HOST, w, h, out, 0);
  LhEqualizeOptions o;
  lh_equalize_options_init(&o);
  CHECK(lh_equalize(cpu, &fin, &fout, &o) == 0, "%s", lh_last_error());
  gray_stats(out, (size_t)w * h, &mean_out, &sd_out);
  CHECK(sd_out > 2.5 * sd_in, "global: sd %.2f -> %.2f", sd_in, sd_out);

  /* Flat: the output CDF follows the diagonal to within the largest input bin. */
  uint64_t hist_in[256] = {0}, hist_out[256] = {0};
  for (int i = 0; i < w * h; i++) {
    hist_in[in[i]]++;
    hist_out[out[i]]++;
  }
  uint64_t biggest = 0;
  for (int v = 0; v < 256; v++)
    biggest = hist_in[v] > biggest ? hist_in[v] : biggest;
  double worst = 0, cum = 0;
  for (int v = 0; v < 256; v++) {
    cum += (double)hist_out[v] / (w * h);
    double d = fabs(cum - (v + 1) / 256.0);
    worst = d > worst ? d : worst;
  }
  CHECK(worst <= (double)biggest / (w * h) + 2.0 / 256, "flatness: %.4f (biggest bin %.4f)", worst,
        (double)biggest / (w * h));
  /* monotone: a brighter input pixel is never darker out */
  int order_broken = 0;
  for (int i = 1; i < w * h; i++)
    order_broken +=
        (in[i] > in[i - 1]) != (out[i] > out[i - 1]) && in[i] != in[i - 1] && out[i] != out[i - 1];
  CHECK(order_broken == 0, "global equalization reordered %d pairs", order_broken);

  o.mode = LH_EQUALIZE_CLAHE;
  o.clip_limit = 2.0;
  CHECK(lh_equalize(cpu, &fin, &fout, &o) == 0, "%s", lh_last_error());
  gray_stats(out, (size_t)w * h, &mean_out, &sd_out);
  CHECK(sd_out > 1.5 * sd_in, "CLAHE: sd %.2f -> %.2f", sd_in, sd_out);

  /* Colour keeps its hue: the channel ratios of a pixel barely move. */
  GenFrame g;
  gen_frame(&g, LH_FORMAT_RGB, 64, 64, 0, 0, 0, GEN_PHOTO, 5);
  Twin t;
  twin_of(&g, true, &t);
  o.mode = LH_EQUALIZE_GLOBAL;
  CHECK(lh_equalize(cpu, &g.frame, &t.frame, &o) == 0, "%s", lh_last_error());
  int drift = 0;
  for (int i = 0; i < 64 * 64; i++) {
    const uint8_t *a = (const uint8_t *)g.frame.planes[0] + 3 * i,
                  *b = (const uint8_t *)t.frame.planes[0] + 3 * i;
    /* rounding moves small samples by more than 5 %; clamping moves any */
    if (a[0] < 32 || a[1] < 32 || b[0] < 32 || b[1] < 32 || b[0] == 255 || b[1] == 255)
      continue;
    double ra = (double)a[0] / a[1], rb = (double)b[0] / b[1];
    drift += fabs(ra - rb) > 0.05 * ra;
  }
  CHECK(drift == 0, "%d pixels changed hue", drift);
  free(t.allocation);
  gen_free(&g);
  free(in);
  free(out);
}

/* ------------------------------------------------------------------------ */
/* Temporal smoothing                                                        */

#define SEQ_W 160
#define SEQ_H 120

/* Frame t of a sequence: a fixed textured scene with a bright square of
 * changing size and place (content that moves the histogram); from frame
 * `cut` on, another scene (a dark one). */
static void sequence_frame(uint8_t *p, int t, int cut)
{
  uint64_t rng = 1000 + (uint64_t)t;
  for (int y = 0; y < SEQ_H; y++)
    for (int x = 0; x < SEQ_W; x++) {
      double v = t < cut ? 60 + 120.0 * x / SEQ_W + 25 * sin(y / 9.0)
                         : 10 + 40.0 * y / SEQ_H + 10 * cos(x / 7.0);
      p[y * SEQ_W + x] = (uint8_t)lrint(v);
    }
  if (t < cut) {
    int side = (int)(gen_next(&rng) % 48), x0 = (int)(gen_next(&rng) % (SEQ_W - 48)),
        y0 = (int)(gen_next(&rng) % (SEQ_H - 48));
    for (int y = y0; y < y0 + side; y++)
      memset(p + y * SEQ_W + x0, 250, (size_t)side);
  }
}

/* The reference of a temporal run of global equalization. */
typedef struct {
  int window, frames, head;
  uint16_t ring[LH_TEMPORAL_MAX_WINDOW][256];
  uint32_t profile[32];
  bool has_profile;
  uint64_t cuts;
  double threshold;
} RefWindow;

static void ref_profile(const uint64_t *h, uint32_t *profile)
{
  uint64_t coarse[32] = {0}, total = 0;
  for (int v = 0; v < 256; v++) {
    coarse[v / 8] += h[v];
    total += h[v];
  }
  for (int k = 0; k < 32; k++)
    profile[k] = (uint32_t)((coarse[k] << 20) / total);
}

static void ref_temporal(RefWindow *w, const LhFrame *in, LhFrame *out)
{
  uint64_t *h = ref_histogram(in, LH_MATRIX_BT601);
  uint16_t lut[256];
  ref_lut(h, 8, 0, 255, lut);
  uint32_t profile[32];
  ref_profile(h, profile);
  if (w->has_profile) {
    uint32_t d = 0;
    for (int k = 0; k < 32; k++)
      d += profile[k] > w->profile[k] ? profile[k] - w->profile[k] : w->profile[k] - profile[k];
    if (d / 2097152.0 > w->threshold) {
      w->frames = 0;
      w->cuts++;
    }
  }
  memcpy(w->profile, profile, sizeof profile);
  w->has_profile = true;
  memcpy(w->ring[w->head], lut, sizeof lut);
  w->head = (w->head + 1) % w->window;
  if (w->frames < w->window)
    w->frames++;
  uint16_t mean[256];
  for (int v = 0; v < 256; v++) {
    uint32_t sum = 0;
    for (int k = 1; k <= w->frames; k++)
      sum += w->ring[(w->head - k + w->window) % w->window][v];
    mean[v] = (uint16_t)((sum + (uint32_t)w->frames / 2) / (uint32_t)w->frames);
  }
  ref_apply(in, out, mean, LH_MATRIX_BT601);
  free(h);
}

/* Mean |difference| between consecutive outputs over the pixels that are
 * scene in both (not the square). */
static double flicker(const uint8_t *a, const uint8_t *b, const uint8_t *ia, const uint8_t *ib)
{
  double sum = 0;
  int n = 0;
  for (int i = 0; i < SEQ_W * SEQ_H; i++)
    if (ia[i] != 250 && ib[i] != 250) {
      sum += abs((int)a[i] - (int)b[i]);
      n++;
    }
  return sum / n;
}

static void test_temporal(void)
{
  const int n_frames = 40, cut = 30;
  uint8_t *in = malloc((size_t)n_frames * SEQ_W * SEQ_H);
  uint8_t *plain = malloc((size_t)n_frames * SEQ_W * SEQ_H);
  uint8_t *smooth = malloc((size_t)n_frames * SEQ_W * SEQ_H);
  uint8_t *want = malloc((size_t)SEQ_W * SEQ_H);
  LhTemporal *temporal = NULL;
  CHECK(lh_temporal_new(8, 0.4, &temporal) == 0, "%s", lh_last_error());
  RefWindow *ref = calloc(1, sizeof *ref);
  ref->window = 8;
  ref->threshold = 0.4;
  LhEqualizeOptions o, ot;
  lh_equalize_options_init(&o);
  ot = o;
  ot.temporal = temporal;
  for (int t = 0; t < n_frames; t++) {
    uint8_t *p = in + (size_t)t * SEQ_W * SEQ_H;
    sequence_frame(p, t, cut);
    LhFrame fin, fplain, fsmooth, fwant;
    lh_frame_init(&fin, LH_FORMAT_GRAY8, LH_MEMORY_HOST, SEQ_W, SEQ_H, p, 0);
    lh_frame_init(&fplain, LH_FORMAT_GRAY8, LH_MEMORY_HOST, SEQ_W, SEQ_H,
                  plain + (size_t)t * SEQ_W * SEQ_H, 0);
    lh_frame_init(&fsmooth, LH_FORMAT_GRAY8, LH_MEMORY_HOST, SEQ_W, SEQ_H,
                  smooth + (size_t)t * SEQ_W * SEQ_H, 0);
    lh_frame_init(&fwant, LH_FORMAT_GRAY8, LH_MEMORY_HOST, SEQ_W, SEQ_H, want, 0);
    CHECK(lh_equalize(cpu, &fin, &fplain, &o) == 0, "%s", lh_last_error());
    CHECK(lh_equalize(cpu, &fin, &fsmooth, &ot) == 0, "%s", lh_last_error());
    ref_temporal(ref, &fin, &fwant);
    CHECK(memcmp(want, fsmooth.planes[0], (size_t)SEQ_W * SEQ_H) == 0,
          "temporal frame %d differs from the reference", t);
    int frames;
    uint64_t cuts;
    CHECK(lh_temporal_query(temporal, &frames, &cuts) == 0, "%s", lh_last_error());
    CHECK(frames == ref->frames && cuts == ref->cuts, "frame %d: window %d cuts %llu, want %d %llu",
          t, frames, (unsigned long long)cuts, ref->frames, (unsigned long long)ref->cuts);
    if (t == cut)
      CHECK(cuts == 1 && frames == 1 &&
                memcmp(fsmooth.planes[0], fplain.planes[0], (size_t)SEQ_W * SEQ_H) == 0,
            "the frame after the cut is equalized on its own");
  }
  int frames;
  uint64_t cuts;
  lh_temporal_query(temporal, &frames, &cuts);
  CHECK(cuts == 1, "one scene cut, %llu found", (unsigned long long)cuts);

  double f_plain = 0, f_smooth = 0;
  for (int t = 1 + ref->window; t < cut; t++) {
    size_t a = (size_t)(t - 1) * SEQ_W * SEQ_H, b = (size_t)t * SEQ_W * SEQ_H;
    f_plain += flicker(plain + a, plain + b, in + a, in + b);
    f_smooth += flicker(smooth + a, smooth + b, in + a, in + b);
  }
  printf("temporal: flicker %.3f -> %.3f codes per frame (window 8)\n", f_plain / (cut - 9),
         f_smooth / (cut - 9));
  CHECK(f_smooth < f_plain / 3, "flicker %.3f -> %.3f: not reduced 3 times", f_plain, f_smooth);

  lh_temporal_reset(temporal);
  lh_temporal_query(temporal, &frames, &cuts);
  CHECK(frames == 0 && cuts == 0, "reset: %d frames, %llu cuts", frames, (unsigned long long)cuts);

  /* CLAHE: a repeated frame gives its own CLAHE; window 1 is no smoothing. */
  LhTemporal *one = NULL;
  lh_temporal_new(1, 0.4, &one);
  LhEqualizeOptions oc, oct;
  lh_equalize_options_init(&oc);
  oc.mode = LH_EQUALIZE_CLAHE;
  oc.tiles_x = 4;
  oc.tiles_y = 3;
  oct = oc;
  oct.temporal = temporal;
  LhEqualizeOptions oc1 = oc;
  oc1.temporal = one;
  for (int t = 0; t < 12; t++) {
    LhFrame fin, fa, fb, fc;
    uint8_t *p = in + (size_t)(t < 6 ? 3 : t) * SEQ_W * SEQ_H;
    lh_frame_init(&fin, LH_FORMAT_GRAY8, LH_MEMORY_HOST, SEQ_W, SEQ_H, p, 0);
    lh_frame_init(&fa, LH_FORMAT_GRAY8, LH_MEMORY_HOST, SEQ_W, SEQ_H, plain, 0);
    lh_frame_init(&fb, LH_FORMAT_GRAY8, LH_MEMORY_HOST, SEQ_W, SEQ_H, smooth, 0);
    lh_frame_init(&fc, LH_FORMAT_GRAY8, LH_MEMORY_HOST, SEQ_W, SEQ_H, want, 0);
    lh_equalize(cpu, &fin, &fa, &oc);
    CHECK(lh_equalize(cpu, &fin, &fb, &oct) == 0, "%s", lh_last_error());
    CHECK(lh_equalize(cpu, &fin, &fc, &oc1) == 0, "%s", lh_last_error());
    CHECK(memcmp(plain, want, (size_t)SEQ_W * SEQ_H) == 0, "CLAHE window 1, frame %d", t);
    if (t < 6)
      CHECK(memcmp(plain, smooth, (size_t)SEQ_W * SEQ_H) == 0, "CLAHE of a still, frame %d", t);
  }
  lh_temporal_free(one);

  /* A change of range, clip limit or (R'G'B') matrix starts the window
   * afresh: its LUTs are of another kind, and no mean of the two's. */
  for (int change = 0; change < 3; change++) {
    const LhFormat format = change == 2 ? LH_FORMAT_RGB : LH_FORMAT_GRAY8;
    const int channels = change == 2 ? 3 : 1;
    uint8_t *pixels = malloc((size_t)SEQ_W * SEQ_H * channels);
    uint8_t *out = malloc((size_t)SEQ_W * SEQ_H * channels);
    lh_temporal_reset(temporal);
    LhEqualizeOptions before, after;
    lh_equalize_options_init(&before);
    before.mode = change == 1 ? LH_EQUALIZE_CLAHE : LH_EQUALIZE_GLOBAL;
    before.temporal = temporal;
    after = before;
    if (change == 0)
      after.range = LH_RANGE_LIMITED;
    else if (change == 1)
      after.clip_limit = 2 * before.clip_limit;
    else
      after.matrix = LH_MATRIX_BT709;
    for (int t = 0; t < 4; t++) {
      for (int i = 0; i < SEQ_W * SEQ_H; i++) /* the same scene, each frame a little brighter */
        for (int c = 0; c < channels; c++)
          pixels[(size_t)i * channels + c] =
              (uint8_t)(in[(size_t)5 * SEQ_W * SEQ_H + i] / 2 + 2 * t + 40 * c);
      LhFrame fin, fout;
      lh_frame_init(&fin, format, LH_MEMORY_HOST, SEQ_W, SEQ_H, pixels, 0);
      lh_frame_init(&fout, format, LH_MEMORY_HOST, SEQ_W, SEQ_H, out, 0);
      CHECK(lh_equalize(cpu, &fin, &fout, t < 3 ? &before : &after) == 0, "%s", lh_last_error());
      int in_window;
      CHECK(lh_temporal_query(temporal, &in_window, NULL) == 0, "%s", lh_last_error());
      CHECK(in_window == (t < 3 ? t + 1 : 1), "change %d, frame %d: %d frames in the window",
            change, t, in_window);
    }
    free(pixels);
    free(out);
  }
  lh_temporal_free(temporal);
  CHECK(lh_temporal_new(0, 0.4, &temporal) == LH_ERROR_INVALID_ARGUMENT, "window 0");
  CHECK(lh_temporal_new(4, 1.5, &temporal) == LH_ERROR_INVALID_ARGUMENT, "threshold 1.5");
  free(ref);
  free(in);
  free(plain);
  free(smooth);
  free(want);
}

static void test_distance(void)
{
  uint64_t a[256] = {0}, b[256] = {0};
  a[0] = 100;
  b[255] = 7;
  CHECK(lh_histogram_distance(a, a, 8) == 0.0, "identical");
  CHECK(lh_histogram_distance(a, b, 8) == 1.0, "disjoint: %g", lh_histogram_distance(a, b, 8));
  b[255] = 0;
  b[0] = 50;
  b[200] = 50;
  CHECK(lh_histogram_distance(a, b, 8) == 0.5, "half moved: %g", lh_histogram_distance(a, b, 8));
  /* within one coarse bin (8 codes) nothing counts */
  memset(b, 0, sizeof b);
  b[7] = 3;
  CHECK(lh_histogram_distance(a, b, 8) == 0.0, "same coarse bin");
  CHECK(isnan(lh_histogram_distance(a, b, 4)), "depth 4");
}

/* ------------------------------------------------------------------------ */
/* Overlays                                                                  */

static uint32_t crc32_of(const uint8_t *p, size_t n)
{
  uint32_t crc = 0xffffffffu;
  for (size_t i = 0; i < n; i++) {
    crc ^= p[i];
    for (int k = 0; k < 8; k++)
      crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1)));
  }
  return ~crc;
}

typedef struct {
  LhFormat format;
  int width, height, depth;
  GenDistribution distribution;
  LhRect rect;
  LhOverlayScale scale;
  LhRange range;
  double opacity;
  uint32_t crc; /* of the whole buffer after drawing */
} OverlayCase;

/* Checksums of frames drawn by this code after the images were looked at
 * (eq-test --dump).  BGRA's and RGBA16's since the panel is composited over
 * their alpha (test_overlays_alpha). */
static const OverlayCase overlay_cases[] = {
    {LH_FORMAT_RGB,
     320,
     200,
     0,
     GEN_PHOTO,
     {0, 0, 0, 0},
     LH_OVERLAY_LOG,
     LH_RANGE_FULL,
     0.8,
     0xd2ac5768},
    {LH_FORMAT_GRAY8,
     300,
     160,
     0,
     GEN_MOSTLY_ONE,
     {10, 10, 200, 90},
     LH_OVERLAY_LINEAR,
     LH_RANGE_FULL,
     1.0,
     0x81c5ee98},
    {LH_FORMAT_BGRA,
     257,
     129,
     0,
     GEN_UNIFORM,
     {-20, 60, 150, 80},
     LH_OVERLAY_LOG,
     LH_RANGE_LIMITED,
     0.6,
     0xbedcf5b9},
    {LH_FORMAT_GRAY16,
     240,
     120,
     12,
     GEN_PHOTO,
     {0, 0, 0, 0},
     LH_OVERLAY_LOG,
     LH_RANGE_FULL,
     0.8,
     0xc7dcb426},
    {LH_FORMAT_RGBA16,
     200,
     100,
     0,
     GEN_TWO_VALUES,
     {150, 50, 70, 70},
     LH_OVERLAY_LINEAR,
     LH_RANGE_FULL,
     0.5,
     0x8ad189a0},
    {LH_FORMAT_I420,
     321,
     181,
     0,
     GEN_PHOTO,
     {5, 41, 161, 99},
     LH_OVERLAY_LOG,
     LH_RANGE_LIMITED,
     0.8,
     0x5b16a801},
    {LH_FORMAT_NV12,
     320,
     180,
     0,
     GEN_PHOTO,
     {0, 0, 0, 0},
     LH_OVERLAY_LINEAR,
     LH_RANGE_FULL,
     0.9,
     0xc6b7d60d},
    {LH_FORMAT_P010,
     256,
     144,
     0,
     GEN_PHOTO,
     {11, 11, 130, 70},
     LH_OVERLAY_LOG,
     LH_RANGE_FULL,
     0.75,
     0xf9db1619},
};

/* A frame with clipping at both ends for the bands: the top and bottom rows
 * black and white. */
static void add_clipping(GenFrame *g)
{
  int pb = gen_pixel_bytes(g->frame.format), sb = gen_sample_bytes(g->frame.format);
  uint32_t top = (1u << ref_depth(&g->frame)) - 1;
  if (g->frame.format == LH_FORMAT_P010)
    top <<= 6;
  for (int y = 0; y < g->frame.height / 10; y++) {
    uint8_t *lo = (uint8_t *)g->frame.planes[0] + (size_t)y * g->frame.strides[0];
    uint8_t *hi =
        (uint8_t *)g->frame.planes[0] + (size_t)(g->frame.height - 1 - y) * g->frame.strides[0];
    for (int x = 0; x < g->frame.width; x++)
      for (int c = 0; c < pb / sb; c++) {
        ref_put(lo + x * pb + c * sb, sb, 0);
        ref_put(hi + x * pb + c * sb, sb, top);
      }
  }
}

static void test_overlays(const char *dump)
{
  for (size_t i = 0; i < sizeof overlay_cases / sizeof *overlay_cases; i++) {
    const OverlayCase *c = &overlay_cases[i];
    GenFrame g;
    gen_frame(&g, c->format, c->width, c->height, c->depth, 8, 0, c->distribution, 77 + i);
    add_clipping(&g);
    LhOptions ao;
    lh_options_init(&ao);
    ao.range = c->range;
    lh_options_set_percentiles(&ao, "5,95");
    LhStats stats;
    lh_stats_init(&stats);
    CHECK(lh_analyze(cpu, &g.frame, &ao, &stats) == 0, "%s", lh_last_error());
    LhOverlayOptions oo;
    lh_overlay_options_init(&oo);
    oo.rect = c->rect;
    oo.scale = c->scale;
    oo.range = c->range;
    oo.opacity = c->opacity;
    CHECK(lh_overlay(cpu, &g.frame, &stats, &oo) == 0, "%s", lh_last_error());
    uint32_t crc = crc32_of(g.allocation, g.size);
    if (dump) {
      char path[512];
      snprintf(path, sizeof path, "%s/overlay-%zu-%s-%dx%d-%zu.raw", dump, i,
               lh_format_name(c->format), c->width, c->height, g.frame.strides[0]);
      FILE *f = fopen(path, "wb");
      if (f) {
        fwrite(g.frame.planes[0], 1, g.size - ((uint8_t *)g.frame.planes[0] - g.allocation) - 16,
               f);
        fclose(f);
      }
      printf("{%s crc 0x%08x}\n", path, crc);
    } else {
      CHECK(crc == c->crc, "overlay %zu (%s %dx%d): crc 0x%08x, golden 0x%08x", i,
            lh_format_name(c->format), c->width, c->height, crc, c->crc);
    }
    lh_stats_clear(&stats);
    gen_free(&g);
  }

  /* Outside the frame: nothing drawn, no error. */
  GenFrame g;
  gen_frame(&g, LH_FORMAT_RGB, 50, 40, 0, 0, 0, GEN_PHOTO, 3);
  uint32_t before = crc32_of(g.allocation, g.size);
  LhStats stats;
  lh_stats_init(&stats);
  lh_analyze(cpu, &g.frame, NULL, &stats);
  LhOverlayOptions oo;
  lh_overlay_options_init(&oo);
  oo.rect = (LhRect){60, 0, 20, 20};
  CHECK(lh_overlay(cpu, &g.frame, &stats, &oo) == 0, "%s", lh_last_error());
  CHECK(crc32_of(g.allocation, g.size) == before, "a panel off the frame drew something");
  oo.rect = (LhRect){0, 0, 2, 20};
  CHECK(lh_overlay(cpu, &g.frame, &stats, &oo) == LH_ERROR_INVALID_ARGUMENT, "a 2-pixel panel");
  oo.rect = (LhRect){0, 0, 0, 0};
  oo.opacity = 1.5;
  CHECK(lh_overlay(cpu, &g.frame, &stats, &oo) == LH_ERROR_INVALID_ARGUMENT, "opacity 1.5");
  oo.opacity = 0;
  CHECK(lh_overlay(cpu, &g.frame, &stats, &oo) == 0 && crc32_of(g.allocation, g.size) == before,
        "opacity 0 changes nothing");
  lh_stats_clear(&stats);
  CHECK(lh_overlay(cpu, &g.frame, &stats, &oo) == LH_ERROR_INVALID_ARGUMENT, "empty stats");
  gen_free(&g);
}

/* Where pixel (x, y) of a frame stored w pixels wide and h high is shown
 * under Exif orientation o (the inverse of lhi_overlay_ink_turned's map). */
static void shown_at(int o, int w, int h, int x, int y, int *sx, int *sy)
{
  switch (o) {
  case 2:
    *sx = w - 1 - x, *sy = y;
    break;
  case 3:
    *sx = w - 1 - x, *sy = h - 1 - y;
    break;
  case 4:
    *sx = x, *sy = h - 1 - y;
    break;
  case 5:
    *sx = y, *sy = x;
    break;
  case 6:
    *sx = h - 1 - y, *sy = x;
    break;
  case 7:
    *sx = h - 1 - y, *sy = w - 1 - x;
    break;
  case 8:
    *sx = y, *sy = w - 1 - x;
    break;
  default:
    *sx = x, *sy = y;
  }
}

/* An overlay on a frame stored turned, with its orientation, is the
 * overlay on the upright frame, turned: for every orientation, panel (the
 * default, partly off the frame, one wider than the frame is high) and
 * packed format, the stored frame is made from the upright one, both are
 * drawn on, and every pixel is compared where it is shown. */
/* The address of pixel (x, y) of a one-plane frame of pb bytes a pixel. */
static uint8_t *pixel_at(const LhFrame *f, int x, int y, int pb)
{
  return (uint8_t *)f->planes[0] + (size_t)y * f->strides[0] + (size_t)x * pb;
}

/* turned (stored, as a file with Exif orientation o holds it) from up (the
 * picture as shown). */
static void turn(int o, const LhFrame *up, LhFrame *turned, int pb)
{
  for (int y = 0; y < turned->height; y++)
    for (int x = 0; x < turned->width; x++) {
      int sx, sy;
      shown_at(o, turned->width, turned->height, x, y, &sx, &sy);
      memcpy(pixel_at(turned, x, y, pb), pixel_at(up, sx, sy, pb), (size_t)pb);
    }
}

/* The pixels of turned that differ from those of up where they are shown. */
static int pixels_unlike_turned(int o, const LhFrame *up, const LhFrame *turned, int pb)
{
  int unlike = 0;
  for (int y = 0; y < turned->height; y++)
    for (int x = 0; x < turned->width; x++) {
      int sx, sy;
      shown_at(o, turned->width, turned->height, x, y, &sx, &sy);
      unlike += memcmp(pixel_at(turned, x, y, pb), pixel_at(up, sx, sy, pb), (size_t)pb) != 0;
    }
  return unlike;
}

static void test_overlays_turned(void)
{
  static const LhFormat formats[] = {LH_FORMAT_GRAY8, LH_FORMAT_RGB, LH_FORMAT_GRAY16,
                                     LH_FORMAT_BGRA};
  static const LhRect rects[] = {{0, 0, 0, 0}, {-5, 7, 40, 30}, {3, 50, 90, 9}};
  const int width = 97, height = 61; /* upright */
  for (size_t f = 0; f < sizeof formats / sizeof *formats; f++)
    for (int o = 1; o <= 8; o++)
      for (size_t r = 0; r < sizeof rects / sizeof *rects; r++) {
        const LhFormat format = formats[f];
        const int pb = gen_pixel_bytes(format);
        const int w = o >= 5 ? height : width, h = o >= 5 ? width : height; /* stored */
        GenFrame up, turned;
        gen_frame(&up, format, width, height, 0, 3, 0, GEN_PHOTO, 900 + (uint64_t)o);
        gen_frame(&turned, format, w, h, 0, 5, 0, GEN_UNIFORM, 1);
        turn(o, &up.frame, &turned.frame, pb);
        LhStats stats;
        lh_stats_init(&stats);
        CHECK(lh_analyze(cpu, &up.frame, NULL, &stats) == 0, "%s", lh_last_error());
        LhOverlayOptions oo;
        lh_overlay_options_init(&oo);
        oo.rect = rects[r];
        CHECK(lh_overlay(cpu, &up.frame, &stats, &oo) == 0, "%s", lh_last_error());
        oo.orientation = o;
        CHECK(lh_overlay(cpu, &turned.frame, &stats, &oo) == 0, "%s", lh_last_error());
        const int bad = pixels_unlike_turned(o, &up.frame, &turned.frame, pb);
        CHECK(bad == 0, "overlay %s orientation %d rect %zu: %d pixels differ from the upright's",
              lh_format_name(format), o, r, bad);
        lh_stats_clear(&stats);
        gen_free(&up);
        gen_free(&turned);
      }
  LhOverlayOptions oo;
  lh_overlay_options_init(&oo);
  GenFrame g;
  gen_frame(&g, LH_FORMAT_GRAY8, 40, 30, 0, 0, 0, GEN_PHOTO, 5);
  LhStats stats;
  lh_stats_init(&stats);
  lh_analyze(cpu, &g.frame, NULL, &stats);
  oo.orientation = 9;
  CHECK(lh_overlay(cpu, &g.frame, &stats, &oo) == LH_ERROR_INVALID_ARGUMENT, "orientation 9");
  oo.orientation = -1;
  CHECK(lh_overlay(cpu, &g.frame, &stats, &oo) == LH_ERROR_INVALID_ARGUMENT, "orientation -1");
  /* A panel placed at int's ends is off the frame in every orientation: its
   * mirrored edge (width - x - w) overflowed int (undefined behaviour, which
   * the sanitized run stops at; the element takes overlay-x up to INT_MAX). */
  static const LhRect far[] = {{INT_MAX, 0, 65536, 65536},   {0, INT_MAX, 65536, 65536},
                               {INT_MAX, INT_MAX, 3, 3},     {INT_MIN, 0, 3, 3},
                               {0, INT_MIN, 65536, 3},       {INT_MIN, INT_MIN, 65536, 65536},
                               {INT_MAX - 2, INT_MIN, 3, 3}, {INT_MIN, INT_MAX, 3, 65536}};
  const uint32_t before = crc32_of(g.allocation, g.size);
  for (int o = 1; o <= 8; o++)
    for (size_t r = 0; r < sizeof far / sizeof *far; r++) {
      oo.orientation = o;
      oo.rect = far[r];
      CHECK(lh_overlay(cpu, &g.frame, &stats, &oo) == 0 && crc32_of(g.allocation, g.size) == before,
            "orientation %d rect %d,%d %dx%d: %s", o, far[r].x, far[r].y, far[r].width,
            far[r].height, lh_last_error());
    }
  /* The default panel's margins of a frame over 2^30 pixels wide (or high,
   * turned): width * 2 overflowed int.  One row: nothing is drawn, so a few
   * bytes stand for the frame. */
  static uint8_t row[16];
  LhFrame wide;
  for (int o = 0; o <= 8; o++) {
    const bool turned = o >= 5;
    lh_frame_init(&wide, LH_FORMAT_GRAY8, LH_MEMORY_HOST, turned ? 1 : INT_MAX,
                  turned ? INT_MAX : 1, row, turned ? 1 : 0);
    oo.orientation = o;
    oo.rect = (LhRect){0, 0, 0, 0};
    CHECK(lh_overlay(cpu, &wide, &stats, &oo) == 0, "orientation %d on a %dx%d frame: %s", o,
          wide.width, wide.height, lh_last_error());
  }
  lh_stats_clear(&stats);
  gen_free(&g);
}

/* CLAHE of a turned frame (an Exif orientation) is CLAHE of the picture as
 * shown, turned back, bit for bit: its grid (a non-square one, on sides no
 * tile count divides) is the upright picture's, extended on its right and
 * bottom.  It was the stored frame's. */
static void test_clahe_turned(void)
{
  static const LhFormat formats[] = {LH_FORMAT_GRAY8, LH_FORMAT_RGB, LH_FORMAT_GRAY16,
                                     LH_FORMAT_BGRA};
  static const struct {
    int tx, ty;
    double clip;
  } grids[] = {{8, 3, 2.0}, {5, 7, 40.0}, {1, 1, 0.0}};
  const int width = 97, height = 61; /* upright */
  for (size_t f = 0; f < sizeof formats / sizeof *formats; f++)
    for (int o = 1; o <= 8; o++)
      for (size_t k = 0; k < sizeof grids / sizeof *grids; k++) {
        const LhFormat format = formats[f];
        const int pb = gen_pixel_bytes(format);
        const int w = o >= 5 ? height : width, h = o >= 5 ? width : height; /* stored */
        GenFrame up, turned;
        gen_frame(&up, format, width, height, format == LH_FORMAT_GRAY16 ? 12 : 0, 3, 0, GEN_PHOTO,
                  700 + (uint64_t)o);
        gen_frame(&turned, format, w, h, format == LH_FORMAT_GRAY16 ? 12 : 0, 5, 0, GEN_UNIFORM, 1);
        turn(o, &up.frame, &turned.frame, pb);
        LhEqualizeOptions eo;
        lh_equalize_options_init(&eo);
        eo.mode = LH_EQUALIZE_CLAHE;
        eo.tiles_x = grids[k].tx;
        eo.tiles_y = grids[k].ty;
        eo.clip_limit = grids[k].clip;
        CHECK(lh_equalize(cpu, &up.frame, &up.frame, &eo) == 0, "%s", lh_last_error());
        eo.orientation = o;
        CHECK(lh_equalize(cpu, &turned.frame, &turned.frame, &eo) == 0, "%s", lh_last_error());
        const int bad = pixels_unlike_turned(o, &up.frame, &turned.frame, pb);
        CHECK(bad == 0, "CLAHE %s orientation %d tiles %dx%d: %d pixels differ from the upright's",
              lh_format_name(format), o, grids[k].tx, grids[k].ty, bad);
        gen_free(&up);
        gen_free(&turned);
      }
  LhEqualizeOptions eo;
  lh_equalize_options_init(&eo);
  eo.mode = LH_EQUALIZE_CLAHE;
  GenFrame g;
  gen_frame(&g, LH_FORMAT_GRAY8, 40, 30, 0, 0, 0, GEN_PHOTO, 5);
  eo.orientation = 9;
  CHECK(lh_equalize(cpu, &g.frame, &g.frame, &eo) == LH_ERROR_INVALID_ARGUMENT, "orientation 9");
  eo.orientation = -1;
  CHECK(lh_equalize(cpu, &g.frame, &g.frame, &eo) == LH_ERROR_INVALID_ARGUMENT, "orientation -1");
  gen_free(&g);
}

/* Overlays on YUV of any subsampling and layout, against the same picture
 * in 4:4:4 planar of the same depth: Y drawn alike, and each chroma sample
 * (cx, cy) as the 4:4:4 one at its top-left luma pixel (cx << xs, cy << ys),
 * where the inputs agree.  4:4:4 itself is held to I420 and P010 (golden
 * checksums above) the same way. */
static LhFormat full_chroma_twin(int depth)
{
  return depth == 8    ? LH_FORMAT_Y444
         : depth == 10 ? LH_FORMAT_Y444_10LE
         : depth == 12 ? LH_FORMAT_Y444_12LE
                       : LH_FORMAT_Y444_16LE;
}

static void test_overlays_yuv(void)
{
  static const LhRect rects[] = {{0, 0, 0, 0}, {-5, 7, 50, 30}, {13, 3, 41, 33}};
  int cases = 0;
  for (size_t f = 0; f < N_FORMATS; f++) {
    const LhFormat format = all_formats[f];
    int xs, ys;
    if (!gen_chroma_subsampling(format, &xs, &ys))
      continue;
    const int depth = gen_format_depth(format);
    const LhFormat twin = full_chroma_twin(depth);
    for (size_t r = 0; r < sizeof rects / sizeof *rects; r++) {
      const int w = 67 + (int)r, h = 41 + (int)r;
      GenFrame a, b;
      gen_frame(&a, format, w, h, 0, 8 + 2 * r, 0, GEN_PHOTO, 300 + f * 7 + r);
      gen_frame(&b, twin, w, h, 0, 4, 0, GEN_CONSTANT, 1);
      uint64_t rng = 99 + f;
      for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
          gen_luma_put(
              twin, (uint8_t *)b.frame.planes[0] + (size_t)y * b.frame.strides[0], x,
              gen_luma_get(format,
                           (const uint8_t *)a.frame.planes[0] + (size_t)y * a.frame.strides[0], x));
          for (int c = 0; c < 2; c++)
            gen_chroma_put(&b.frame, c, x, y, (uint32_t)gen_next(&rng) & ((1u << depth) - 1));
        }
      int crows;
      size_t cbytes;
      gen_chroma_shape(format, w, h, &cbytes, &crows);
      const int ccols = (w + (1 << xs) - 1) >> xs;
      for (int cy = 0; cy < crows; cy++)
        for (int cx = 0; cx < ccols; cx++)
          for (int c = 0; c < 2; c++)
            gen_chroma_put(&a.frame, c, cx, cy, gen_chroma_get(&b.frame, c, cx << xs, cy << ys));
      uint32_t before = crc32_of(a.allocation, a.size);

      LhOptions ao;
      lh_options_init(&ao);
      ao.range = r == 1 ? LH_RANGE_LIMITED : LH_RANGE_FULL;
      lh_options_set_percentiles(&ao, "5,95");
      LhStats stats;
      lh_stats_init(&stats);
      CHECK(lh_analyze(cpu, &a.frame, &ao, &stats) == 0, "%s", lh_last_error());
      LhOverlayOptions oo;
      lh_overlay_options_init(&oo);
      oo.rect = rects[r];
      oo.range = ao.range;
      oo.matrix = (LhMatrix)(r % 3);
      int sa = lh_overlay(cpu, &a.frame, &stats, &oo), sb = lh_overlay(cpu, &b.frame, &stats, &oo);
      CHECK(sa == 0 && sb == 0, "overlay %s: %s", lh_format_name(format), lh_last_error());
      CHECK(crc32_of(a.allocation, a.size) != before, "overlay %s drew nothing",
            lh_format_name(format));
      int bad = 0;
      for (int y = 0; y < h && !bad; y++)
        for (int x = 0; x < w && !bad; x++) {
          uint32_t ya = gen_luma_get(
              format, (const uint8_t *)a.frame.planes[0] + (size_t)y * a.frame.strides[0], x);
          uint32_t yb = gen_luma_get(
              twin, (const uint8_t *)b.frame.planes[0] + (size_t)y * b.frame.strides[0], x);
          if (ya != yb) {
            CHECK(0, "overlay %s %dx%d rect %zu: Y at %d,%d is %u, %s has %u",
                  lh_format_name(format), w, h, r, x, y, ya, lh_format_name(twin), yb);
            bad = 1;
          }
        }
      for (int cy = 0; cy < crows && !bad; cy++)
        for (int cx = 0; cx < ccols && !bad; cx++)
          for (int c = 0; c < 2 && !bad; c++) {
            uint32_t va = gen_chroma_get(&a.frame, c, cx, cy);
            uint32_t vb = gen_chroma_get(&b.frame, c, cx << xs, cy << ys);
            if (va != vb) {
              CHECK(0, "overlay %s %dx%d rect %zu: %s at %d,%d is %u, %s has %u",
                    lh_format_name(format), w, h, r, c ? "Cr" : "Cb", cx, cy, va,
                    lh_format_name(twin), vb);
              bad = 1;
            }
          }
      lh_stats_clear(&stats);
      gen_free(&a);
      gen_free(&b);
      cases++;
    }
  }
  printf("yuv overlays: %d cases\n", cases);
}

/* ------------------------------------------------------------------------ */
/* LH_CHROMA_SCALE                                                           */

static const LhFormat chroma_formats[] = {
    LH_FORMAT_I420, LH_FORMAT_YV12, LH_FORMAT_Y42B, LH_FORMAT_Y444, LH_FORMAT_Y41B,
    LH_FORMAT_NV12, LH_FORMAT_NV21, LH_FORMAT_NV16, LH_FORMAT_NV24,
};
#define N_CHROMA_FORMATS (sizeof chroma_formats / sizeof *chroma_formats)

/* Odd sides leave partial footprints on the right and bottom (4:1:1: 1, 2
 * or 3 pixels wide); padding and offsets misalign rows. */
static const Shape chroma_shapes[] = {
    {1, 1, 0, 0}, {7, 5, 3, 1}, {64, 48, 0, 0}, {33, 17, 5, 3},
    {6, 1, 0, 0}, {1, 6, 1, 0}, {3, 90, 0, 2},  {130, 3, 16, 0},
};
#define N_CHROMA_SHAPES (sizeof chroma_shapes / sizeof *chroma_shapes)

/* Luma of every pixel with (x + 2 y) % period == 0 set to black: footprints
 * partly and wholly black. */
static void blacken(GenFrame *g, int period)
{
  for (int y = 0; y < g->frame.height; y++)
    for (int x = 0; x < g->frame.width; x++)
      if ((x + 2 * y) % period == 0)
        ((uint8_t *)g->frame.planes[0])[(size_t)y * g->frame.strides[0] + (size_t)x] = 0;
}

/* One LH_CHROMA_SCALE case (lut: lh_apply_lut_chroma with it) into a copy,
 * into filler and in place, against the reference of the luma rule followed
 * by ref_scale_chroma. */
static void check_chroma_case(const GenFrame *g, const LhEqualizeOptions *o, const uint16_t *lut,
                              const char *what)
{
  Twin want, copy, filler, inplace;
  twin_of(g, true, &want);
  twin_of(g, true, &copy);
  twin_of(g, false, &filler);
  twin_of(g, true, &inplace);
  if (lut)
    ref_apply(&g->frame, &want.frame, lut, o->matrix);
  else if (o->mode == LH_EQUALIZE_GLOBAL)
    ref_equalize(&g->frame, &want.frame, o->matrix, o->range);
  else
    ref_clahe(&g->frame, &want.frame, o->matrix, o->range, o->tiles_x, o->tiles_y, o->clip_limit);
  ref_scale_chroma(&g->frame, &want.frame);

  Twin *outs[3] = {&copy, &filler, &inplace};
  const char *names[3] = {"into a copy", "into another buffer", "in place"};
  for (int k = 0; k < 3; k++) {
    const LhFrame *in = k == 2 ? &inplace.frame : &g->frame;
    int status = lut ? lh_apply_lut_chroma(cpu, in, &outs[k]->frame, lut, o->matrix, o->chroma)
                     : lh_equalize(cpu, in, &outs[k]->frame, o);
    char where[128] = "";
    bool same = k == 1 ? same_pixels(&outs[k]->frame, &want.frame, where, sizeof where)
                       : memcmp(outs[k]->allocation, want.allocation, want.size) == 0;
    CHECK(status == 0 && same, "%s: %s %s", what, names[k], where);
  }
  free(want.allocation);
  free(copy.allocation);
  free(filler.allocation);
  free(inplace.allocation);
}

static void test_chroma_scale(void)
{
  static const Mode modes[] = {
      {LH_EQUALIZE_GLOBAL, 0, 0, 0},
      {LH_EQUALIZE_CLAHE, 8, 8, 40.0},
      {LH_EQUALIZE_CLAHE, 3, 2, 2.0},
      {LH_EQUALIZE_CLAHE, 1, 1, 0.0},
  };
  static const GenDistribution dists[] = {GEN_PHOTO,      GEN_UNIFORM,     GEN_CONSTANT,
                                          GEN_MOSTLY_ONE, GEN_NARROW_BAND, GEN_TWO_VALUES};
  const size_t n_modes = sizeof modes / sizeof *modes;
  int seed = 7000, cases = 0;
  for (size_t f = 0; f < N_CHROMA_FORMATS; f++)
    for (size_t s = 0; s < N_CHROMA_SHAPES; s++)
      for (size_t m = 0; m < n_modes + 2; m++) {
        const LhFormat format = chroma_formats[f];
        const Shape *sh = &chroma_shapes[s];
        size_t extra = sh->extra_stride;
        if (gen_chroma_planes(format) == 1 && sh->width % 2)
          extra += 4;
        GenDistribution d = dists[(f + s + m) % (sizeof dists / sizeof *dists)];
        GenFrame g;
        if (gen_frame(&g, format, sh->width, sh->height, 0, extra, sh->offset, d,
                      (uint64_t)seed++) < 0) {
          CHECK(0, "gen_frame %s", lh_format_name(format));
          continue;
        }
        if ((f + s + m) % 3 == 0)
          blacken(&g, 3 + (int)(m % 4));
        LhEqualizeOptions o;
        lh_equalize_options_init(&o);
        o.chroma = LH_CHROMA_SCALE;
        o.range = seed % 4 == 0 ? LH_RANGE_LIMITED : LH_RANGE_FULL;
        uint16_t lut[256];
        const bool with_lut = m >= n_modes;
        char what[200];
        if (with_lut) {
          /* reversed, or a random map */
          uint64_t rng = (uint64_t)seed * 0x9E3779B97F4A7C15ULL + 5;
          for (int v = 0; v < 256; v++)
            lut[v] = m == n_modes ? (uint16_t)(255 - v) : (uint16_t)(gen_next(&rng) & 255);
          snprintf(what, sizeof what, "chroma scale %s %dx%d %s %s LUT", lh_format_name(format),
                   sh->width, sh->height, gen_distribution_names[d],
                   m == n_modes ? "reversed" : "random");
        } else {
          o.mode = modes[m].mode;
          o.tiles_x = modes[m].tiles_x;
          o.tiles_y = modes[m].tiles_y;
          o.clip_limit = modes[m].clip;
          snprintf(what, sizeof what, "chroma scale %s %dx%d %s %s tiles %dx%d clip %g range %d",
                   lh_format_name(format), sh->width, sh->height, gen_distribution_names[d],
                   o.mode == LH_EQUALIZE_GLOBAL ? "global" : "clahe", o.tiles_x, o.tiles_y,
                   o.clip_limit, o.range);
        }
        check_chroma_case(&g, &o, with_lut ? lut : NULL, what);
        gen_free(&g);
        cases++;
      }
  printf("chroma scaling: %d cases\n", cases);
}

/* The rule worked by hand on a 2x2 I420 frame whose luma doubles: sums 100
 * and 200, gain ((200 << 16) + 50) / 100 = 131072. */
static void test_chroma_by_hand(void)
{
  static const struct {
    uint8_t c, want;
  } cases[] = {
      {138, 148}, /* 10 * 2 */
      {100, 72},  /* -28 * 2 */
      {128, 128}, /* neutral stays */
      {250, 255}, /* 128 + 244 clamped */
      {0, 0},     /* 128 - 256 clamped */
      {129, 130}, {127, 126},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    uint8_t bytes[6] = {10, 20, 30, 40, cases[i].c, cases[i].c};
    LhFrame f;
    lh_frame_init(&f, LH_FORMAT_I420, LH_MEMORY_HOST, 2, 2, bytes, 2);
    uint16_t lut[256];
    for (int v = 0; v < 256; v++)
      lut[v] = (uint16_t)(2 * v > 255 ? 255 : 2 * v);
    CHECK(lh_apply_lut_chroma(cpu, &f, &f, lut, LH_MATRIX_BT601, LH_CHROMA_SCALE) == 0, "%s",
          lh_last_error());
    CHECK(bytes[0] == 20 && bytes[3] == 80 && bytes[4] == cases[i].want &&
              bytes[5] == cases[i].want,
          "chroma %u: Cb %u Cr %u, expected %u", cases[i].c, bytes[4], bytes[5], cases[i].want);
  }
  /* a black footprint's chroma turns neutral; an identity LUT changes nothing */
  uint8_t black[6] = {0, 0, 0, 0, 17, 240};
  LhFrame f;
  lh_frame_init(&f, LH_FORMAT_I420, LH_MEMORY_HOST, 2, 2, black, 2);
  uint16_t identity[256];
  for (int v = 0; v < 256; v++)
    identity[v] = (uint16_t)v;
  CHECK(lh_apply_lut_chroma(cpu, &f, &f, identity, LH_MATRIX_BT601, LH_CHROMA_SCALE) == 0, "%s",
        lh_last_error());
  CHECK(black[4] == 128 && black[5] == 128, "black footprint: Cb %u Cr %u", black[4], black[5]);
  GenFrame g;
  gen_frame(&g, LH_FORMAT_Y42B, 37, 11, 0, 3, 1, GEN_PHOTO, 77);
  Twin t;
  twin_of(&g, true, &t);
  CHECK(lh_apply_lut_chroma(cpu, &g.frame, &g.frame, identity, LH_MATRIX_BT601, LH_CHROMA_SCALE) ==
                0 &&
            memcmp(g.allocation, t.allocation, g.size) == 0,
        "an identity LUT with LH_CHROMA_SCALE changed the frame");
  free(t.allocation);
  gen_free(&g);
}

/* KEEP is the default and gives what it gave; SCALE leaves gray and R'G'B'
 * as KEEP does and refuses the YUV it does not cover. */
static void test_chroma_rule_edges(void)
{
  static const LhFormat same[] = {LH_FORMAT_GRAY8, LH_FORMAT_GRAY16, LH_FORMAT_RGB, LH_FORMAT_BGRA,
                                  LH_FORMAT_RGB16};
  static const LhFormat refused[] = {LH_FORMAT_P010,      LH_FORMAT_YUY2,      LH_FORMAT_UYVY,
                                     LH_FORMAT_V210,      LH_FORMAT_I420_10LE, LH_FORMAT_Y444_16LE,
                                     LH_FORMAT_I422_12LE, LH_FORMAT_P016};
  LhEqualizeOptions o;
  lh_equalize_options_init(&o);
  CHECK(o.chroma == LH_CHROMA_KEEP, "default chroma rule %d", (int)o.chroma);
  for (size_t i = 0; i < sizeof same / sizeof *same; i++)
    for (int mode = 0; mode < 2; mode++) {
      GenFrame g;
      gen_frame(&g, same[i], 29, 13, 0, 2, 0, GEN_PHOTO, 300 + i);
      Twin keep, scale;
      twin_of(&g, true, &keep);
      twin_of(&g, true, &scale);
      o.mode = mode ? LH_EQUALIZE_CLAHE : LH_EQUALIZE_GLOBAL;
      o.chroma = LH_CHROMA_KEEP;
      CHECK(lh_equalize(cpu, &g.frame, &keep.frame, &o) == 0, "%s", lh_last_error());
      o.chroma = LH_CHROMA_SCALE;
      CHECK(lh_equalize(cpu, &g.frame, &scale.frame, &o) == 0, "%s", lh_last_error());
      CHECK(memcmp(keep.allocation, scale.allocation, g.size) == 0, "%s: SCALE differs from KEEP",
            lh_format_name(same[i]));
      free(keep.allocation);
      free(scale.allocation);
      gen_free(&g);
    }
  lh_equalize_options_init(&o);
  for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
    GenFrame g;
    gen_frame(&g, refused[i], 24, 8, 0, 0, 0, GEN_PHOTO, 400 + i);
    Twin t;
    twin_of(&g, true, &t);
    o.chroma = LH_CHROMA_SCALE;
    CHECK(lh_equalize(cpu, &g.frame, &g.frame, &o) == LH_ERROR_UNSUPPORTED &&
              strstr(lh_last_error(), lh_format_name(refused[i])) != NULL,
          "%s with LH_CHROMA_SCALE", lh_format_name(refused[i]));
    CHECK(memcmp(g.allocation, t.allocation, g.size) == 0, "%s: refused but written",
          lh_format_name(refused[i]));
    uint16_t lut[1024] = {0};
    CHECK(lh_apply_lut_chroma(cpu, &g.frame, &g.frame, lut, LH_MATRIX_BT601, LH_CHROMA_SCALE) ==
              LH_ERROR_UNSUPPORTED,
          "%s: lh_apply_lut_chroma with LH_CHROMA_SCALE", lh_format_name(refused[i]));
    o.chroma = LH_CHROMA_KEEP;
    CHECK(lh_equalize(cpu, &g.frame, &g.frame, &o) == 0, "%s with KEEP: %s",
          lh_format_name(refused[i]), lh_last_error());
    free(t.allocation);
    gen_free(&g);
  }
  GenFrame g;
  gen_frame(&g, LH_FORMAT_I420, 16, 8, 0, 0, 0, GEN_PHOTO, 9);
  o.chroma = (LhChromaRule)5;
  CHECK(lh_equalize(cpu, &g.frame, &g.frame, &o) == LH_ERROR_INVALID_ARGUMENT, "chroma rule 5");
  uint16_t lut[256];
  for (int v = 0; v < 256; v++)
    lut[v] = (uint16_t)(255 - v);
  CHECK(lh_apply_lut_chroma(cpu, &g.frame, &g.frame, lut, LH_MATRIX_BT601, (LhChromaRule)-1) ==
            LH_ERROR_INVALID_ARGUMENT,
        "chroma rule -1");
  /* in place, SCALE needs the chroma planes that KEEP does without */
  LhFrame no_chroma = g.frame;
  no_chroma.planes[2] = NULL;
  o.chroma = LH_CHROMA_SCALE;
  CHECK(lh_equalize(cpu, &no_chroma, &no_chroma, &o) == LH_ERROR_INVALID_ARGUMENT &&
            strstr(lh_last_error(), "chroma plane 2") != NULL,
        "in place without a chroma plane, SCALE");
  o.chroma = LH_CHROMA_KEEP;
  CHECK(lh_equalize(cpu, &no_chroma, &no_chroma, &o) == 0, "%s", lh_last_error());
  /* lh_apply_lut is lh_apply_lut_chroma with KEEP */
  Twin a, b;
  twin_of(&g, true, &a);
  twin_of(&g, true, &b);
  CHECK(lh_apply_lut(cpu, &g.frame, &a.frame, lut, LH_MATRIX_BT601) == 0 &&
            lh_apply_lut_chroma(cpu, &g.frame, &b.frame, lut, LH_MATRIX_BT601, LH_CHROMA_KEEP) ==
                0 &&
            memcmp(a.allocation, b.allocation, g.size) == 0,
        "lh_apply_lut and lh_apply_lut_chroma(KEEP) differ");
  free(a.allocation);
  free(b.allocation);
  gen_free(&g);
}

/* ------------------------------------------------------------------------ */
/* Arguments                                                                 */

static void test_arguments(void)
{
  GenFrame a, b;
  gen_frame(&a, LH_FORMAT_RGB, 20, 10, 0, 0, 0, GEN_PHOTO, 1);
  gen_frame(&b, LH_FORMAT_RGBA, 20, 10, 0, 0, 0, GEN_PHOTO, 2);
  LhEqualizeOptions o;
  lh_equalize_options_init(&o);
  CHECK(lh_equalize(NULL, &a.frame, &a.frame, &o) == LH_ERROR_INVALID_ARGUMENT, "no context");
  CHECK(lh_equalize(cpu, &a.frame, &b.frame, &o) == LH_ERROR_INVALID_ARGUMENT, "format mismatch");
  CHECK(strstr(lh_last_error(), "differ") != NULL, "message: %s", lh_last_error());
  o.mode = LH_EQUALIZE_CLAHE;
  o.tiles_x = 0;
  CHECK(lh_equalize(cpu, &a.frame, &a.frame, &o) == LH_ERROR_INVALID_ARGUMENT, "0 tiles");
  o.tiles_x = LH_CLAHE_MAX_TILES + 1;
  CHECK(lh_equalize(cpu, &a.frame, &a.frame, &o) == LH_ERROR_INVALID_ARGUMENT, "65 tiles");
  o.tiles_x = 8;
  o.clip_limit = NAN;
  CHECK(lh_equalize(cpu, &a.frame, &a.frame, &o) == LH_ERROR_INVALID_ARGUMENT, "NaN clip");
  /* inf was refused as "not a number" */
  o.clip_limit = INFINITY;
  CHECK(lh_equalize(cpu, &a.frame, &a.frame, &o) == LH_ERROR_INVALID_ARGUMENT &&
            strstr(lh_last_error(), "inf is not finite"),
        "inf clip: %s", lh_last_error());
  o.clip_limit = 40;
  o.mode = (LhEqualizeMode)7;
  CHECK(lh_equalize(cpu, &a.frame, &a.frame, &o) == LH_ERROR_INVALID_ARGUMENT, "mode 7");
  /* NULL options: the defaults */
  CHECK(lh_equalize(cpu, &a.frame, &a.frame, NULL) == 0, "%s", lh_last_error());
  /* a YUV frame out of place needs its chroma planes */
  GenFrame y;
  gen_frame(&y, LH_FORMAT_NV12, 16, 8, 0, 0, 0, GEN_PHOTO, 3);
  Twin t;
  twin_of(&y, true, &t);
  t.frame.planes[1] = NULL;
  CHECK(lh_equalize(cpu, &y.frame, &t.frame, NULL) == LH_ERROR_INVALID_ARGUMENT, "no chroma");
  /* in place it does not */
  y.frame.planes[1] = NULL;
  CHECK(lh_equalize(cpu, &y.frame, &y.frame, NULL) == 0, "%s", lh_last_error());
  LhFrame device = a.frame;
  device.memory = LH_MEMORY_CUDA;
  CHECK(lh_equalize(cpu, &device, &device, NULL) == LH_ERROR_UNSUPPORTED, "CUDA memory on CPU");
  free(t.allocation);
  gen_free(&y);
  gen_free(&a);
  gen_free(&b);
}

/* ------------------------------------------------------------------------ */
/* Packed 10-bit R'G'B' against the same pixels as RGBA16 of 10 bits         */

/* An RGBA16 frame of depth 10 holding the fields of a packed frame: its
 * 2-bit alpha (RGB10A2) as the same opacity in 10 bits (a 341: 3 is 1023),
 * r210's unused top bits as opaque; tops[] the top bits of each pixel. */
static void unpack_to_rgba16(const LhFrame *packed, GenFrame *wide, uint8_t *tops)
{
  const int w = packed->width, h = packed->height;
  wide->size = (size_t)w * h * 8;
  wide->allocation = malloc(wide->size);
  lh_frame_init(&wide->frame, LH_FORMAT_RGBA16, LH_MEMORY_HOST, w, h, wide->allocation, 0);
  wide->frame.bit_depth = 10;
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      const uint8_t *p =
          (const uint8_t *)packed->planes[0] + (size_t)y * packed->strides[0] + 4 * x;
      uint32_t rgb[3];
      gen_packed10_rgb(packed->format, p, rgb);
      uint8_t *q = wide->allocation + ((size_t)y * w + x) * 8;
      for (int c = 0; c < 3; c++)
        ref_put(q + 2 * c, 2, rgb[c]);
      tops[(size_t)y * w + x] = (uint8_t)gen_packed10_top(packed->format, p);
      ref_put(q + 6, 2, gen_has_alpha(packed->format) ? 341 * tops[(size_t)y * w + x] : 1023);
    }
}

/* Whether the packed frame holds what the RGBA16 one does: the colours, a
 * 2-bit alpha the nearest to the 10-bit one, unused top bits as they were
 * (tops). */
static bool same_as_rgba16(const LhFrame *packed, const GenFrame *wide, const uint8_t *tops)
{
  for (int y = 0; y < packed->height; y++)
    for (int x = 0; x < packed->width; x++) {
      const uint8_t *p =
          (const uint8_t *)packed->planes[0] + (size_t)y * packed->strides[0] + 4 * x;
      const uint8_t *q = wide->allocation + ((size_t)y * packed->width + x) * 8;
      uint32_t rgb[3];
      gen_packed10_rgb(packed->format, p, rgb);
      for (int c = 0; c < 3; c++)
        if (rgb[c] != ref_get(q + 2 * c, 2))
          return false;
      const uint32_t top = gen_packed10_top(packed->format, p);
      if (gen_has_alpha(packed->format) ? top != (ref_get(q + 6, 2) * 3 + 511) / 1023
                                        : top != tops[(size_t)y * packed->width + x])
        return false;
    }
  return true;
}

/* Analysis, equalization, CLAHE and overlays of RGB10A2_LE, BGR10A2_LE and
 * r210 give what RGBA16 frames of depth 10 with the same samples give
 * (a separate code path, checked against eq-reference.h above), the
 * overlay's alpha to the nearest of 2 bits. */
static void test_packed10_as_rgba16(void)
{
  static const LhFormat packed[] = {LH_FORMAT_RGB10A2_LE, LH_FORMAT_BGR10A2_LE, LH_FORMAT_R210};
  static const int sizes[][2] = {{37, 23}, {64, 16}, {1, 9}, {131, 67}};
  int seed = 500;
  for (size_t f = 0; f < sizeof packed / sizeof *packed; f++)
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
      for (int op = 0; op < 4; op++) {
        GenFrame g, wide;
        gen_frame(&g, packed[f], sizes[s][0], sizes[s][1], 0, 4 * (s % 2), 4 * (s % 4),
                  op % 2 ? GEN_PHOTO : GEN_UNIFORM, (uint64_t)seed++);
        uint8_t *tops = malloc((size_t)sizes[s][0] * sizes[s][1]);
        unpack_to_rgba16(&g.frame, &wide, tops);
        char what[160];
        snprintf(what, sizeof what, "%s %dx%d op %d", lh_format_name(packed[f]), sizes[s][0],
                 sizes[s][1], op);
        LhOptions ao;
        lh_options_init(&ao);
        ao.matrix = (LhMatrix)(seed % 3);
        LhStats a, b;
        lh_stats_init(&a);
        lh_stats_init(&b);
        CHECK(lh_analyze(cpu, &g.frame, &ao, &a) == 0 && lh_analyze(cpu, &wide.frame, &ao, &b) == 0,
              "%s: %s", what, lh_last_error());
        CHECK(a.bit_depth == 10 && a.n_bins == b.n_bins && a.mean == b.mean &&
                  a.median == b.median &&
                  memcmp(a.histogram, b.histogram, a.n_bins * sizeof *a.histogram) == 0,
              "%s: statistics differ from RGBA16's", what);
        LhEqualizeOptions eo;
        lh_equalize_options_init(&eo);
        eo.matrix = ao.matrix;
        int status_a, status_b;
        if (op < 3) {
          eo.mode = op == 0 ? LH_EQUALIZE_GLOBAL : LH_EQUALIZE_CLAHE;
          eo.tiles_x = op == 1 ? 3 : 8;
          eo.tiles_y = 2;
          status_a = lh_equalize(cpu, &g.frame, &g.frame, &eo);
          status_b = lh_equalize(cpu, &wide.frame, &wide.frame, &eo);
        } else {
          LhOverlayOptions oo;
          lh_overlay_options_init(&oo);
          oo.matrix = ao.matrix;
          status_a = lh_overlay(cpu, &g.frame, &a, &oo);
          status_b = lh_overlay(cpu, &wide.frame, &b, &oo);
        }
        CHECK(status_a == 0 && status_b == 0, "%s: %s", what, lh_last_error());
        CHECK(same_as_rgba16(&g.frame, &wide, tops), "%s: pixels differ from RGBA16's", what);
        free(tops);
        lh_stats_clear(&a);
        lh_stats_clear(&b);
        gen_free(&g);
        gen_free(&wide);
      }
}

/* A frame of 16-bit words with samples above its depth (a GRAY16 frame said
 * to be 10-bit, say) is analysed as if they were 2^depth - 1
 * (lhi_clamp_sample); the overlay blends them as that value too, so that
 * the panel drawn on it is the one drawn on the clamped frame, and the
 * samples it does not cover stay as they came.  The overlay used to blend
 * the raw words: 60000 in a 10-bit panel came out 12342 .. 30032. */
static void test_overlays_past_depth(void)
{
  static const struct {
    LhFormat format;
    int depth; /* 0: the format's */
  } cases[] = {
      {LH_FORMAT_GRAY16, 10},   {LH_FORMAT_GRAY16, 12},   {LH_FORMAT_GRAY16_BE, 12},
      {LH_FORMAT_RGB16, 12},    {LH_FORMAT_RGBA16, 10},   {LH_FORMAT_I420_10LE, 0},
      {LH_FORMAT_Y444_12LE, 0}, {LH_FORMAT_I422_10LE, 0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    const LhFormat format = cases[i].format;
    const int depth = cases[i].depth ? cases[i].depth : gen_format_depth(format);
    const int w = 71, h = 45;
    GenFrame raw, clamped;
    gen_frame(&raw, format, w, h, cases[i].depth, 6, 0, GEN_PHOTO, 700 + i);
    gen_frame(&clamped, format, w, h, cases[i].depth, 6, 0, GEN_PHOTO, 700 + i);
    gen_words_past_depth(&raw, depth, 31 + i);
    gen_words_past_depth(&clamped, depth, 31 + i);
    gen_words_clamp(&clamped, depth);
    const uint32_t before = crc32_of(clamped.allocation, clamped.size);

    LhOptions ao;
    lh_options_init(&ao);
    LhStats stats, stats_clamped;
    lh_stats_init(&stats);
    lh_stats_init(&stats_clamped);
    CHECK(lh_analyze(cpu, &raw.frame, &ao, &stats) == 0 &&
              lh_analyze(cpu, &clamped.frame, &ao, &stats_clamped) == 0,
          "%s", lh_last_error());
    /* (R'G'B': the luma of the words is what is clamped, README's Python
     * section, not each word, so only the Y formats' histograms agree.) */
    const bool rgb = format == LH_FORMAT_RGB16 || format == LH_FORMAT_RGBA16;
    CHECK(rgb || (stats.n_bins == stats_clamped.n_bins &&
                  memcmp(stats.histogram, stats_clamped.histogram,
                         stats.n_bins * sizeof *stats.histogram) == 0),
          "%s at %d bits: samples past the depth are not analysed as the top value (max %u, "
          "clamped frame's %u)",
          lh_format_name(format), depth, stats.max, stats_clamped.max);
    LhOverlayOptions oo;
    lh_overlay_options_init(&oo);
    oo.rect = (LhRect){-4, 5, 60, 36};
    CHECK(lh_overlay(cpu, &raw.frame, &stats, &oo) == 0 &&
              lh_overlay(cpu, &clamped.frame, &stats, &oo) == 0,
          "%s", lh_last_error());
    CHECK(crc32_of(clamped.allocation, clamped.size) != before, "overlay %s drew nothing",
          lh_format_name(format));
    /* Outside the panel the raw words are kept: clamped now, they are the
     * clamped frame's; inside, the panel must be the clamped frame's. */
    size_t first_bad = SIZE_MAX;
    uint32_t got = 0, want = 0;
    for (size_t k = 0; k < gen_word_count(&raw) && first_bad == SIZE_MAX; k++) {
      const uint32_t v = gen_word_get(&raw, k), top = (1u << depth) - 1;
      got = v > top ? top : v;
      want = gen_word_get(&clamped, k);
      if (got != want)
        first_bad = k;
    }
    CHECK(first_bad == SIZE_MAX,
          "overlay %s at %d bits with samples past it: word %zu is %u (clamped), the clamped "
          "frame's overlay has %u",
          lh_format_name(format), depth, first_bad, got, want);
    lh_stats_clear(&stats);
    lh_stats_clear(&stats_clamped);
    gen_free(&raw);
    gen_free(&clamped);
  }
}

/* Overlays on frames with alpha: the panel is composited over the image
 * with straight alpha, so that it shows where the image is transparent.  It
 * used to blend the colours only and keep the alpha: on a transparent
 * image (a product photograph on no background) the panel did not show.
 * Each pixel is checked against "over" worked out here from its ink: the
 * ink's colour as the panel drawn on a fully transparent copy of the frame
 * shows it (over nothing the ink comes out as it is), its alpha the one of
 * the opacity's two (the background's 160 / 256 of it, or all of it) that
 * gives the alpha that copy got.  On opaque pixels the colours must also be
 * those the plain blend gave before. */
static void test_overlays_alpha(void)
{
  static const struct {
    LhFormat format;
    int depth;
    double opacity;
  } cases[] = {
      {LH_FORMAT_RGBA, 0, 0.8},    {LH_FORMAT_BGRA, 0, 0.6},   {LH_FORMAT_RGBA16, 0, 0.8},
      {LH_FORMAT_RGBA16, 12, 0.7}, {LH_FORMAT_BGRA16, 0, 1.0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    const LhFormat format = cases[i].format;
    const int pb = gen_pixel_bytes(format), sb = gen_sample_bytes(format);
    const int a = gen_alpha_sample(format);
    GenFrame g;
    gen_frame(&g, format, 150, 91, cases[i].depth, 4, 0, GEN_PHOTO, 40 + i);
    gen_alpha_mix(&g, 60 + i);
    const uint32_t top = (1u << ref_depth(&g.frame)) - 1;
    Twin before, probe;
    twin_of(&g, true, &before);
    twin_of(&g, true, &probe);
    for (int y = 0; y < g.frame.height; y++)
      for (int x = 0; x < g.frame.width; x++)
        ref_put(pixel_at(&probe.frame, x, y, pb) + a * sb, sb, 0);
    LhStats stats;
    lh_stats_init(&stats);
    CHECK(lh_analyze(cpu, &g.frame, NULL, &stats) == 0, "%s", lh_last_error());
    LhOverlayOptions oo;
    lh_overlay_options_init(&oo);
    oo.opacity = cases[i].opacity;
    oo.rect = (LhRect){-3, 40, 90, 48};
    CHECK(lh_overlay(cpu, &g.frame, &stats, &oo) == 0 &&
              lh_overlay(cpu, &probe.frame, &stats, &oo) == 0,
          "%s", lh_last_error());
    const uint32_t ink_alphas[2] = {(uint32_t)floor(cases[i].opacity * 160 + 0.5),
                                    (uint32_t)floor(cases[i].opacity * 256 + 0.5)};
    int bad = 0, transparent = 0, partly = 0, opaque = 0;
    for (int y = 0; y < g.frame.height; y++)
      for (int x = 0; x < g.frame.width; x++) {
        const uint8_t *was = pixel_at(&before.frame, x, y, pb);
        const uint8_t *got = pixel_at(&g.frame, x, y, pb);
        const uint8_t *over_nothing = pixel_at(&probe.frame, x, y, pb);
        const uint32_t a_was = ref_get(was + a * sb, sb), a_got = ref_get(got + a * sb, sb);
        const uint32_t a_over_nothing = ref_get(over_nothing + a * sb, sb);
        uint32_t alpha = 0; /* the ink's, 0 .. 256: 0 off the panel */
        for (int k = 0; k < 2; k++)
          if (a_over_nothing != 0 && a_over_nothing == (top * ink_alphas[k] + 128) >> 8)
            alpha = ink_alphas[k];
        if (a_over_nothing != 0 && alpha == 0) {
          if (bad++ < 4)
            CHECK(0, "%s at %d,%d: alpha %u over nothing is no ink's", lh_format_name(format), x, y,
                  a_over_nothing);
          continue;
        }
        bool ok = a_got == (a_was * (256 - alpha) + top * alpha + 128) >> 8;
        const uint64_t under = (uint64_t)a_was * (256 - alpha), over = (uint64_t)top * alpha;
        for (int c = 0; c < 4; c++) {
          if (c == a)
            continue;
          const uint64_t sample = ref_get(was + c * sb, sb),
                         ink = ref_get(over_nothing + c * sb, sb);
          const uint32_t want =
              under + over == 0
                  ? (uint32_t)sample
                  : (uint32_t)((sample * under + ink * over + (under + over) / 2) / (under + over));
          ok = ok && ref_get(got + c * sb, sb) == want;
          /* the plain blend, as drawn before alpha was composited */
          if (a_was == top)
            ok =
                ok && want == ((uint32_t)sample * (256 - alpha) + (uint32_t)ink * alpha + 128) >> 8;
        }
        if (alpha > 0) {
          transparent += a_was == 0;
          opaque += a_was == top;
          partly += a_was > 0 && a_was < top;
        }
        if (!ok && bad++ < 4)
          CHECK(0, "%s at %d,%d: alpha %u under an ink of alpha %u: not composited over",
                lh_format_name(format), x, y, a_was, alpha);
      }
    CHECK(bad == 0, "%s: %d pixels wrong", lh_format_name(format), bad);
    CHECK(transparent > 100 && partly > 100 && opaque > 100,
          "%s: the panel covers %d transparent, %d partly and %d opaque pixels",
          lh_format_name(format), transparent, partly, opaque);
    lh_stats_clear(&stats);
    free(before.allocation);
    free(probe.allocation);
    gen_free(&g);
  }
}

/* The default panel of a frame taller than 4 x 65536 rows: a bar is at most
 * 65536 rows (16-bit heights), and the full bar of a flat frame filled only
 * 1962 of the 67498 rows inside the panel of a 270000-row frame. */
static void test_overlay_tall_default_panel(void)
{
  const int w = 96, h = 270000;
  uint8_t *pixels = malloc((size_t)w * h);
  CHECK(pixels != NULL, "no memory for a %dx%d frame", w, h);
  if (!pixels)
    return;
  memset(pixels, 100, (size_t)w * h); /* not the border's grey, 128 */
  LhFrame frame;
  lh_frame_init(&frame, LH_FORMAT_GRAY8, LH_MEMORY_HOST, w, h, pixels, 0);
  LhStats stats;
  lh_stats_init(&stats);
  LhOverlayOptions oo;
  lh_overlay_options_init(&oo);
  oo.opacity = 1.0; /* the bar's own grey, 230 */
  oo.markers = 0;
  oo.clipping = 0;
  CHECK(lh_analyze(cpu, &frame, NULL, &stats) == 0 && lh_overlay(cpu, &frame, &stats, &oo) == 0,
        "%s", lh_last_error());
  /* The panel's rows (those a column inside it changed) and the one full bar. */
  int panel_rows = 0, bar_rows = 0;
  for (int x = 0; x < w; x++) {
    int changed = 0, bar = 0;
    for (int y = 0; y < h; y++) {
      changed += pixels[(size_t)y * w + x] != 100;
      bar += pixels[(size_t)y * w + x] == 230;
    }
    panel_rows = changed > panel_rows ? changed : panel_rows;
    bar_rows = bar > bar_rows ? bar : bar_rows;
  }
  CHECK(panel_rows >= 3 && panel_rows <= 65536 && bar_rows == panel_rows - 2,
        "the default panel of a %dx%d frame: %d rows, its full bar %d rows", w, h, panel_rows,
        bar_rows);
  lh_stats_clear(&stats);
  free(pixels);
}

int main(int argc, char **argv)
{
  const char *dump = argc == 3 && strcmp(argv[1], "--dump") == 0 ? argv[2] : NULL;
  if (lh_context_new(LH_BACKEND_CPU, &cpu) < 0) {
    fprintf(stderr, "no CPU context: %s\n", lh_last_error());
    return 1;
  }
  if (!dump) {
    test_lut_by_hand();
    test_lut_random();
    test_formats();
    test_packed10_as_rgba16();
    test_apply_lut();
    test_invariants();
    test_temporal();
    test_distance();
    test_arguments();
    test_chroma_by_hand();
    test_chroma_scale();
    test_chroma_rule_edges();
    test_overlays_yuv();
    test_overlays_turned();
    test_clahe_turned();
    test_overlays_past_depth();
    test_overlays_alpha();
    test_overlay_tall_default_panel();
  }
  test_overlays(dump);
  lh_context_free(cpu);
  if (failures) {
    fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  printf("all equalization checks passed\n");
  return 0;
}
