/* test-gpu.c: the CUDA backend against the CPU backend, bit for bit (the
 * histogram, every statistic, every percentile), over every format, sizes
 * from 1x1 to 8K, pitched rows and odd plane starts, host, pinned and device
 * memory, batches, a caller's stream, value distributions that stress the
 * kernels, 9..16-bit depths, limited range, regions of interest, percentiles
 * by sorting; and the launchers of kernels/ against the host reference; and
 * the device time that lh_context_device_time counts.
 *
 * Usage: test-gpu SUITE, SUITE one of formats, large, depths, options, batch,
 * sort, kernels, fused (wide histograms and packed 4:2:2 in one launch), smoke
 * (a quick cross-section, for compute-sanitizer), registered, device-time.
 * Exits 77 when no CUDA device is usable. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "cuda/backend.h"
#include "gpu-compare.h"
#include "lh-kernels.h"
#include "lh-private.h"

typedef struct {
  LhFormat format;
  int width, height, depth;
  Dist dist;
  uint64_t seed;
  size_t pad, offset;
  MemKind mem;
  LhMatrix matrix;
  LhRange range;
  LhRect roi;
  LhPercentileMethod method;
  int n_percentiles; /* 0: the default list */
} Case;

static LhContext *cpu, *gpu;
static int n_cases, n_failures;

static const double default_percentiles[] = {0, 0.1, 1, 5, 25, 75, 95, 99, 99.9, 100};

static void print_case(FILE *out, const Case *c)
{
  fprintf(out,
          "format=%s size=%dx%d depth=%d dist=%s seed=%llu pad=%zu offset=%zu mem=%s "
          "matrix=%s range=%s roi=%d,%d,%dx%d method=%d percentiles=%d",
          lh_format_name(c->format), c->width, c->height, c->depth, dist_names[c->dist],
          (unsigned long long)c->seed, c->pad, c->offset, mem_names[c->mem],
          lh_matrix_name(c->matrix), lh_range_name(c->range), c->roi.x, c->roi.y, c->roi.width,
          c->roi.height, (int)c->method, c->n_percentiles);
}

static void case_options(const Case *c, LhOptions *o)
{
  lh_options_init(o);
  o->matrix = c->matrix;
  o->range = c->range;
  o->roi = c->roi;
  o->percentile_method = c->method;
  if (c->n_percentiles == 0) {
    o->n_percentiles = (int)(sizeof default_percentiles / sizeof default_percentiles[0]);
    memcpy(o->percentiles, default_percentiles, sizeof default_percentiles);
  } else {
    /* Many percentiles, the ends and near-ends included. */
    uint64_t rng = c->seed + 17;
    o->n_percentiles = c->n_percentiles;
    for (int i = 0; i < c->n_percentiles; i++)
      o->percentiles[i] = (double)(rng_next(&rng) % 1000001) / 10000.0;
    o->percentiles[0] = 0;
    if (c->n_percentiles > 3) {
      o->percentiles[1] = 100;
      o->percentiles[2] = 0.0001;
      o->percentiles[3] = 99.9999;
    }
  }
}

static void fail(const Case *c, const char *what)
{
  n_failures++;
  fprintf(stderr, "FAIL: ");
  print_case(stderr, c);
  fprintf(stderr, ": %s\n", what);
}

/* The reference of a case: the CPU backend on the same samples in host
 * memory, by the cumulative histogram. */
static bool reference(const Case *c, const TestFrame *t, LhStats *ref)
{
  LhOptions o;
  case_options(c, &o);
  o.percentile_method = LH_PERCENTILE_HISTOGRAM;
  int status = lh_analyze(cpu, &t->host_frame, &o, ref);
  if (status < 0) {
    char why[600];
    snprintf(why, sizeof why, "CPU analysis: %s: %s", lh_status_name(status), lh_last_error());
    fail(c, why);
    return false;
  }
  return true;
}

static void check_against(const Case *c, const LhStats *ref, const LhStats *got)
{
  char why[256];
  n_cases++;
  if (!stats_equal(ref, got, why, sizeof why))
    fail(c, why);
}

/* One case: frame made, CPU reference, GPU result, compared.  ref may carry
 * an earlier reference of the same samples (NULL: computed here). */
static void run_case(const Case *c, const LhStats *known_ref)
{
  TestFrame t;
  if (!test_frame_make(&t, c->format, c->width, c->height, c->depth, c->dist, c->seed, c->pad,
                       c->offset, c->mem)) {
    fail(c, "could not make the frame");
    test_frame_free(&t);
    return;
  }
  LhStats ref, got;
  lh_stats_init(&ref);
  lh_stats_init(&got);
  if (known_ref || reference(c, &t, &ref)) {
    LhOptions o;
    case_options(c, &o);
    int status = lh_analyze(gpu, &t.frame, &o, &got);
    if (status < 0) {
      char why[600];
      snprintf(why, sizeof why, "GPU analysis: %s: %s", lh_status_name(status), lh_last_error());
      fail(c, why);
    } else {
      check_against(c, known_ref ? known_ref : &ref, &got);
    }
  }
  lh_stats_clear(&ref);
  lh_stats_clear(&got);
  test_frame_free(&t);
}

static Case base_case(LhFormat format, int width, int height, Dist dist, uint64_t seed)
{
  Case c;
  memset(&c, 0, sizeof c);
  c.format = format;
  c.width = width;
  c.height = height;
  c.dist = dist;
  c.seed = seed;
  c.matrix = LH_MATRIX_BT601;
  c.range = LH_RANGE_FULL;
  c.method = LH_PERCENTILE_HISTOGRAM;
  return c;
}

/* Layouts every small case is tried in: tight and padded rows, odd plane
 * starts (even for 16-bit samples, which must be), host, pinned and device. */
typedef struct {
  size_t pad8, offset8, pad16, offset16;
  MemKind mem;
} Layout;

static const Layout layouts[] = {
    {0, 0, 0, 0, MEM_HOST},       {13, 5, 14, 6, MEM_HOST},  {0, 0, 0, 0, MEM_DEVICE},
    {13, 5, 14, 6, MEM_DEVICE},   {3, 12, 2, 4, MEM_DEVICE}, {7, 3, 10, 2, MEM_PINNED},
    {16, 16, 16, 16, MEM_DEVICE}, {0, 5, 0, 6, MEM_DEVICE},  {0, 4, 0, 2, MEM_DEVICE},
};

static void apply_layout(Case *c, const Layout *l)
{
  bool wide = gen_sample_bytes(c->format) > 1;
  c->pad = wide ? l->pad16 : l->pad8;
  c->offset = wide ? l->offset16 : l->offset8;
  if (gen_sample_bytes(c->format) == 4) /* v210's 32-bit words */
    c->offset &= ~(size_t)3;
  c->mem = l->mem;
}

/* The GPU result of one frame in every layout against one CPU reference. */
static void run_layouts(Case c)
{
  TestFrame t;
  LhStats ref;
  lh_stats_init(&ref);
  if (!test_frame_make(&t, c.format, c.width, c.height, c.depth, c.dist, c.seed, 0, 0, MEM_HOST)) {
    fail(&c, "could not make the frame");
  } else if (reference(&c, &t, &ref)) {
    for (size_t l = 0; l < sizeof layouts / sizeof layouts[0]; l++) {
      apply_layout(&c, &layouts[l]);
      run_case(&c, &ref);
    }
  }
  test_frame_free(&t);
  lh_stats_clear(&ref);
}

/* Every format on every region of a 200x90 frame, with every percentile and
 * the two ranges in turn, in every layout. */
static void run_rois(const LhFormat *formats, size_t n_formats, const LhRect *rois, size_t n_rois,
                     uint64_t *seed)
{
  for (size_t f = 0; f < n_formats; f++)
    for (size_t r = 0; r < n_rois; r++) {
      Case c = base_case(formats[f], 200, 90, (Dist)(r % DIST_COUNT), (*seed)++);
      c.roi = rois[r];
      c.n_percentiles = LH_MAX_PERCENTILES;
      c.range = r % 2 ? LH_RANGE_LIMITED : LH_RANGE_FULL;
      run_layouts(c);
    }
}

static void suite_formats(void)
{
  static const int sizes[][2] = {{1, 1}, {1, 37},   {37, 1},  {3, 5},    {17, 9},
                                 {2, 2}, {1919, 3}, {64, 64}, {333, 77}, {4099, 2}};
  uint64_t seed = 1;
  for (int f = 0; f < LH_FORMAT_COUNT; f++)
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
      for (int d = 0; d < DIST_COUNT; d++)
        run_layouts(base_case((LhFormat)f, sizes[s][0], sizes[s][1], (Dist)d, seed++));
  /* v210: rows of whole groups of 6 (width % 6 = 0, tight rows taking one
   * run of groups) and every partial last group (width % 6 = 1 .. 5), one
   * row and odd heights. */
  static const int v210_sizes[][2] = {
      {6, 1},    {7, 1},    {8, 5},    {9, 3},    {10, 7},   {11, 1},   {12, 9},   {13, 2},
      {14, 1},   {15, 5},   {16, 3},   {17, 11},  {96, 33},  {97, 33},  {98, 1},   {99, 17},
      {100, 33}, {101, 31}, {1920, 3}, {1921, 5}, {1922, 1}, {1923, 2}, {1924, 7}, {1925, 3}};
  for (size_t s = 0; s < sizeof v210_sizes / sizeof v210_sizes[0]; s++)
    for (int d = 0; d < DIST_COUNT; d++)
      run_layouts(base_case(LH_FORMAT_V210, v210_sizes[s][0], v210_sizes[s][1], (Dist)d, seed++));
}

static void suite_large(void)
{
  uint64_t seed = 1000;
  for (int f = 0; f < LH_FORMAT_COUNT; f++) {
    Case c = base_case((LhFormat)f, 1920, 1080, (Dist)(f % DIST_COUNT), seed++);
    for (int l = 0; l < 4; l++) {
      apply_layout(&c, &layouts[l]);
      run_case(&c, NULL);
    }
    c = base_case((LhFormat)f, 3840, 2160, f % 2 ? DIST_PHOTO : DIST_UNIFORM, seed++);
    c.mem = MEM_DEVICE;
    run_case(&c, NULL);
  }
  static const struct {
    LhFormat format;
    int depth;
    Dist dist;
  } eight_k[] = {
      {LH_FORMAT_GRAY8, 0, DIST_UNIFORM},   {LH_FORMAT_GRAY8, 0, DIST_PHOTO},
      {LH_FORMAT_GRAY8, 0, DIST_SIXTY},     {LH_FORMAT_GRAY8, 0, DIST_BANK},
      {LH_FORMAT_RGBA, 0, DIST_UNIFORM},    {LH_FORMAT_BGRX, 0, DIST_PHOTO},
      {LH_FORMAT_RGB, 0, DIST_PHOTO},       {LH_FORMAT_NV12, 0, DIST_SINGLE},
      {LH_FORMAT_P010, 0, DIST_UNIFORM},    {LH_FORMAT_GRAY16, 12, DIST_PHOTO},
      {LH_FORMAT_GRAY16, 16, DIST_UNIFORM}, {LH_FORMAT_RGBA16, 0, DIST_PHOTO},
  };
  for (size_t i = 0; i < sizeof eight_k / sizeof eight_k[0]; i++) {
    Case c = base_case(eight_k[i].format, 7680, 4320, eight_k[i].dist, seed++);
    c.depth = eight_k[i].depth;
    TestFrame t;
    LhStats ref;
    lh_stats_init(&ref);
    if (test_frame_make(&t, c.format, c.width, c.height, c.depth, c.dist, c.seed, 0, 0, MEM_HOST) &&
        reference(&c, &t, &ref)) {
      c.mem = MEM_HOST;
      run_case(&c, &ref);
      c.mem = MEM_DEVICE;
      run_case(&c, &ref);
    }
    test_frame_free(&t);
    lh_stats_clear(&ref);
  }
}

static void suite_depths(void)
{
  static const int sizes[][2] = {{257, 131}, {1, 1000}, {1000, 1}, {1921, 17}};
  uint64_t seed = 5000;
  for (int depth = 8; depth <= 16; depth++)
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
      for (int d = 0; d < DIST_COUNT; d++) {
        Case c = base_case(LH_FORMAT_GRAY16, sizes[s][0], sizes[s][1], (Dist)d, seed++);
        c.depth = depth;
        run_layouts(c);
      }
  /* Frames wide enough for every resident block, in many clusters
   * (histograms of more than 4096 bins). */
  static const int wide_depths[] = {13, 16};
  for (size_t i = 0; i < sizeof wide_depths / sizeof wide_depths[0]; i++)
    for (int d = 0; d < DIST_COUNT; d++) {
      Case c = base_case(d % 2 ? LH_FORMAT_GRAY16 : LH_FORMAT_RGB16, 3840, 2160, (Dist)d, seed++);
      c.depth = wide_depths[i];
      run_layouts(c);
    }
  static const int rgb_depths[] = {8, 9, 10, 12, 14, 16};
  for (size_t i = 0; i < sizeof rgb_depths / sizeof rgb_depths[0]; i++)
    for (int d = 0; d < DIST_COUNT; d++) {
      Case c = base_case(i % 2 ? LH_FORMAT_RGB16 : LH_FORMAT_RGBA16, 203, 61, (Dist)d, seed++);
      c.depth = rgb_depths[i];
      run_layouts(c);
    }
  for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
    for (int d = 0; d < DIST_COUNT; d++)
      run_layouts(base_case(LH_FORMAT_P010, sizes[s][0], sizes[s][1], (Dist)d, seed++));
}

static void suite_options(void)
{
  uint64_t seed = 9000;
  static const LhFormat limited_formats[] = {LH_FORMAT_GRAY8, LH_FORMAT_RGB,    LH_FORMAT_NV12,
                                             LH_FORMAT_P010,  LH_FORMAT_GRAY16, LH_FORMAT_RGBA16,
                                             LH_FORMAT_R210,  LH_FORMAT_V210};
  for (size_t f = 0; f < sizeof limited_formats / sizeof limited_formats[0]; f++)
    for (int d = 0; d < DIST_COUNT; d++) {
      Case c = base_case(limited_formats[f], 131, 67, (Dist)d, seed++);
      c.range = LH_RANGE_LIMITED;
      c.depth = limited_formats[f] == LH_FORMAT_GRAY16 ? 12 : 0;
      run_layouts(c);
    }
  static const LhFormat rgb_formats[] = {
      LH_FORMAT_RGB,        LH_FORMAT_BGR,        LH_FORMAT_RGBA, LH_FORMAT_BGRX,
      LH_FORMAT_RGB16,      LH_FORMAT_RGBA16,     LH_FORMAT_RGB10A2_LE,
      LH_FORMAT_BGR10A2_LE, LH_FORMAT_R210,       LH_FORMAT_BGRA16};
  for (size_t f = 0; f < sizeof rgb_formats / sizeof rgb_formats[0]; f++)
    for (int m = LH_MATRIX_BT709; m <= LH_MATRIX_BT2020; m++)
      for (int d = 0; d < DIST_COUNT; d += 1) {
        Case c = base_case(rgb_formats[f], 97, 41, (Dist)d, seed++);
        c.matrix = (LhMatrix)m;
        run_layouts(c);
      }
  /* Regions of interest: odd corners, one pixel, one row, one column, all. */
  static const LhRect rois[] = {{1, 1, 1, 1},    {3, 2, 101, 37}, {0, 5, 200, 1}, {7, 0, 1, 90},
                                {0, 0, 200, 90}, {13, 11, 17, 3}, {199, 89, 1, 1}};
  static const LhFormat roi_formats[] = {LH_FORMAT_GRAY8, LH_FORMAT_RGB,    LH_FORMAT_RGBA,
                                         LH_FORMAT_I420,  LH_FORMAT_GRAY16, LH_FORMAT_P010,
                                         LH_FORMAT_RGB16, LH_FORMAT_RGB10A2_LE};
  run_rois(roi_formats, sizeof roi_formats / sizeof roi_formats[0], rois,
           sizeof rois / sizeof rois[0], &seed);
  /* v210's regions start at a group: x a multiple of 6, any width. */
  static const LhRect v210_rois[] = {{0, 0, 1, 1},    {6, 2, 101, 37},  {0, 5, 200, 1},
                                     {12, 0, 1, 90},  {0, 0, 200, 90},  {18, 11, 17, 3},
                                     {198, 89, 2, 1}, {96, 40, 103, 49}};
  for (size_t r = 0; r < sizeof v210_rois / sizeof v210_rois[0]; r++) {
    Case c = base_case(LH_FORMAT_V210, 200, 90, (Dist)(r % DIST_COUNT), seed++);
    c.roi = v210_rois[r];
    c.n_percentiles = LH_MAX_PERCENTILES;
    c.range = r % 2 ? LH_RANGE_LIMITED : LH_RANGE_FULL;
    run_layouts(c);
    c.method = LH_PERCENTILE_SORT;
    run_layouts(c);
  }
}

/* A batch of frames of many formats, sizes and memories in one call (more
 * of one kind than one launch takes, and kinds alternating), against each
 * frame's CPU reference; on the context's stream and on a caller's. */
static void batch_once(const Case *cases, size_t n, const char *label)
{
  TestFrame *frames = calloc(n, sizeof *frames);
  LhFrame *views = calloc(n, sizeof *views);
  LhStats *refs = calloc(n, sizeof *refs), *got = calloc(n, sizeof *got);
  bool ok = frames && views && refs && got;
  for (size_t i = 0; ok && i < n; i++) {
    lh_stats_init(&refs[i]);
    lh_stats_init(&got[i]);
    ok = test_frame_make(&frames[i], cases[i].format, cases[i].width, cases[i].height,
                         cases[i].depth, cases[i].dist, cases[i].seed, cases[i].pad,
                         cases[i].offset, cases[i].mem) &&
         reference(&cases[i], &frames[i], &refs[i]);
    views[i] = frames[i].frame;
  }
  if (ok) {
    LhOptions o;
    case_options(&cases[0], &o);
    int status = lh_analyze_batch(gpu, views, n, &o, got);
    if (status < 0) {
      char why[700];
      snprintf(why, sizeof why, "%s: GPU batch of %zu: %s: %s", label, n, lh_status_name(status),
               lh_last_error());
      fail(&cases[0], why);
    } else {
      for (size_t i = 0; i < n; i++)
        check_against(&cases[i], &refs[i], &got[i]);
    }
  } else {
    fail(&cases[0], "could not make the batch");
  }
  for (size_t i = 0; i < n && frames && refs && got; i++) {
    test_frame_free(&frames[i]);
    lh_stats_clear(&refs[i]);
    lh_stats_clear(&got[i]);
  }
  free(frames);
  free(views);
  free(refs);
  free(got);
}

static void suite_batch(void)
{
  enum { N = 48 };
  Case cases[N];
  uint64_t seed = 20000;
  /* Mixed: formats change every few frames, 18 GRAY8 frames in a row. */
  for (int i = 0; i < N; i++) {
    LhFormat f = i < 18 ? LH_FORMAT_GRAY8 : (LhFormat)((i / 3) % LH_FORMAT_COUNT);
    int w = 1 + (int)((i * 97) % 700), h = 1 + (int)((i * 61) % 300);
    cases[i] = base_case(f, w, h, (Dist)(i % DIST_COUNT), seed++);
    if (f == LH_FORMAT_GRAY16)
      cases[i].depth = 8 + i % 9;
    apply_layout(&cases[i], &layouts[i % (sizeof layouts / sizeof layouts[0])]);
  }
  batch_once(cases, N, "mixed batch");
  /* Many small frames of one kind, and two big ones among small ones. */
  for (int i = 0; i < N; i++) {
    cases[i] = base_case(LH_FORMAT_NV12, 64 + i, 36 + i, (Dist)(i % DIST_COUNT), seed++);
    cases[i].mem = i % 2 ? MEM_DEVICE : MEM_HOST;
  }
  cases[5].width = 3840;
  cases[5].height = 2160;
  cases[40].width = 1920;
  cases[40].height = 1080;
  batch_once(cases, N, "NV12 batch");

  /* A caller's stream, then back to the context's own. */
  cudaStream_t stream;
  if (cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess) {
    fail(&cases[0], "cudaStreamCreate failed");
    return;
  }
  if (lh_context_set_stream(gpu, stream) < 0)
    fail(&cases[0], "lh_context_set_stream failed");
  batch_once(cases, 12, "on a caller's stream");
  run_case(&cases[5], NULL);
  lh_context_set_stream(gpu, NULL);
  cudaStreamDestroy(stream);
  batch_once(cases + 12, 12, "back on the own stream");

  /* Buffers that grow and are reused: small, large, small, 16-bit. */
  static const int sizes[][2] = {{3, 3}, {4000, 3000}, {5, 1}, {1024, 1024}, {7680, 4320}};
  for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
    Case c = base_case(s % 2 ? LH_FORMAT_BGRA : LH_FORMAT_GRAY16, sizes[s][0], sizes[s][1],
                       DIST_PHOTO, seed++);
    run_case(&c, NULL);
  }
}

/* Host memory page-locked by lh_host_register (what the element does with a
 * pool's buffers) is read without staging and gives the same numbers; the
 * misuses of the pair are refused. */
static void registered_once(Case c)
{
  TestFrame t;
  LhStats ref, got;
  lh_stats_init(&ref);
  lh_stats_init(&got);
  if (!test_frame_make(&t, c.format, c.width, c.height, c.depth, c.dist, c.seed, c.pad, c.offset,
                       MEM_HOST) ||
      !reference(&c, &t, &ref)) {
    fail(&c, "could not make the frame");
    goto done;
  }
  int status = lh_host_register(gpu, t.host_block, t.block_size);
  if (status < 0) {
    fail(&c, lh_last_error());
    goto done;
  }
  n_cases++;
  if (lh_host_register(gpu, t.host_block, t.block_size) != LH_ERROR_INVALID_ARGUMENT)
    fail(&c, "registering twice was not refused");
  LhOptions o;
  case_options(&c, &o);
  for (int round = 0; round < 3; round++) {
    status = lh_analyze(gpu, &t.frame, &o, &got);
    if (status < 0) {
      fail(&c, lh_last_error());
      break;
    }
    check_against(&c, &ref, &got);
  }
  if (lh_host_unregister(gpu, t.host_block) != LH_OK)
    fail(&c, "unregistering failed");
  n_cases++;
  if (lh_host_unregister(gpu, t.host_block) != LH_ERROR_INVALID_ARGUMENT)
    fail(&c, "unregistering twice was not refused");
  /* Plain host memory again: staged, the same numbers. */
  if (lh_analyze(gpu, &t.frame, &o, &got) < 0)
    fail(&c, lh_last_error());
  else
    check_against(&c, &ref, &got);
done:
  lh_stats_clear(&ref);
  lh_stats_clear(&got);
  test_frame_free(&t);
}

/* A frame copied into memory from lh_host_alloc (what the element's pool
 * gives decoders) is read without staging and gives the same numbers; the
 * memory outlives the context that made it. */
static void allocated_once(Case c)
{
  TestFrame t;
  LhStats ref, got;
  lh_stats_init(&ref);
  lh_stats_init(&got);
  LhContext *maker = NULL;
  void *pinned = NULL;
  if (!test_frame_make(&t, c.format, c.width, c.height, c.depth, c.dist, c.seed, c.pad, c.offset,
                       MEM_HOST) ||
      !reference(&c, &t, &ref)) {
    fail(&c, "could not make the frame");
    goto done;
  }
  n_cases++;
  if (lh_context_new(LH_BACKEND_CUDA, &maker) < 0 ||
      lh_host_alloc(maker, t.block_size, &pinned) < 0) {
    fail(&c, lh_last_error());
    goto done;
  }
  lh_context_free(maker);
  maker = NULL;
  memcpy(pinned, t.host_block, t.block_size);
  LhFrame frame = t.frame;
  for (int p = 0; p < 3; p++)
    if (frame.planes[p])
      frame.planes[p] = (uint8_t *)pinned + ((const uint8_t *)t.frame.planes[p] - t.host_block);
  LhOptions o;
  case_options(&c, &o);
  for (int round = 0; round < 2; round++) {
    if (lh_analyze(gpu, &frame, &o, &got) < 0) {
      fail(&c, lh_last_error());
      break;
    }
    check_against(&c, &ref, &got);
  }
done:
  lh_host_free(pinned);
  lh_context_free(maker);
  lh_stats_clear(&ref);
  lh_stats_clear(&got);
  test_frame_free(&t);
}

static void suite_registered(void)
{
  uint64_t seed = 60000;
  registered_once(base_case(LH_FORMAT_NV12, 3840, 2160, DIST_PHOTO, seed++));
  registered_once(base_case(LH_FORMAT_GRAY8, 1, 1, DIST_SINGLE, seed++));
  Case c = base_case(LH_FORMAT_BGRA, 1917, 33, DIST_BANK, seed++);
  c.pad = 12;
  c.offset = 4;
  registered_once(c);
  c = base_case(LH_FORMAT_GRAY16, 641, 479, DIST_UNIFORM, seed++);
  c.depth = 12;
  registered_once(c);
  allocated_once(base_case(LH_FORMAT_NV12, 3840, 2160, DIST_PHOTO, seed++));
  c = base_case(LH_FORMAT_YUY2, 1281, 17, DIST_BANK, seed++);
  c.pad = 6;
  allocated_once(c);

  Case none = base_case(LH_FORMAT_GRAY8, 1, 1, DIST_SINGLE, seed++);
  uint8_t byte = 0;
  n_cases++;
  if (lh_host_register(cpu, &byte, 1) != LH_ERROR_UNSUPPORTED)
    fail(&none, "the CPU backend accepted a registration");
  n_cases++;
  if (lh_host_register(gpu, &byte, 0) != LH_ERROR_INVALID_ARGUMENT ||
      lh_host_register(gpu, NULL, 1) != LH_ERROR_INVALID_ARGUMENT)
    fail(&none, "an empty or NULL registration was accepted");
  n_cases++;
  void *memory = &byte;
  if (lh_host_alloc(cpu, 64, &memory) != LH_ERROR_UNSUPPORTED || memory != NULL)
    fail(&none, "the CPU backend allocated page-locked memory");
  n_cases++;
  if (lh_host_alloc(gpu, 0, &memory) != LH_ERROR_INVALID_ARGUMENT)
    fail(&none, "an empty allocation was accepted");
}

/* ------------------------------------------------------------------------ */
/* lh_context_device_time                                                    */

typedef enum { SAME, GROWS } Change;

/* Reads the device time after a step and checks it against the last one:
 * calls up by exactly added, the frames' bytes copied up by exactly bytes,
 * each time grown or left exactly as it was (totals never go down), and below
 * a second for these few frames. */
static void time_step(LhContext *context, LhDeviceTime *last, const char *step, uint64_t added,
                      uint64_t bytes, Change transfer, Change compute)
{
  LhDeviceTime now;
  n_cases++;
  int status = lh_context_device_time(context, &now);
  if (status < 0) {
    fprintf(stderr, "FAIL: device time after %s: %s: %s\n", step, lh_status_name(status),
            lh_last_error());
    n_failures++;
    return;
  }
  bool ok =
      now.calls == last->calls + added && now.transfer_bytes == last->transfer_bytes + bytes &&
      (transfer == GROWS ? now.transfer_s > last->transfer_s
                         : now.transfer_s == last->transfer_s) &&
      (compute == GROWS ? now.compute_s > last->compute_s : now.compute_s == last->compute_s) &&
      now.transfer_s < 1.0 && now.compute_s < 1.0;
  if (!ok) {
    fprintf(stderr,
            "FAIL: device time after %s (calls +%llu, bytes +%llu, transfer %s, compute %s "
            "expected): calls %llu -> %llu, bytes %llu -> %llu, transfer %.9f -> %.9f s, "
            "compute %.9f -> %.9f s\n",
            step, (unsigned long long)added, (unsigned long long)bytes,
            transfer == GROWS ? "grows" : "same", compute == GROWS ? "grows" : "same",
            (unsigned long long)last->calls, (unsigned long long)now.calls,
            (unsigned long long)last->transfer_bytes, (unsigned long long)now.transfer_bytes,
            last->transfer_s, now.transfer_s, last->compute_s, now.compute_s);
    n_failures++;
  }
  *last = now;
}

/* A library call that must succeed; false (counted as a failure) if not. */
static bool call_ok(int status, const char *what)
{
  n_cases++;
  if (status < 0) {
    fprintf(stderr, "FAIL: %s: %s: %s\n", what, lh_status_name(status), lh_last_error());
    n_failures++;
    return false;
  }
  return true;
}

/* Copies and kernels of host frames, kernels alone of device frames, counted
 * once each; equalizations of device frames, which leave their work running,
 * are counted when the read has waited for them, also past the clock's ring
 * of calls in flight and on a caller's stream. */
static void suite_device_time(void)
{
  LhContext *context = NULL;
  if (!call_ok(lh_context_new(LH_BACKEND_CUDA, &context), "lh_context_new"))
    return;
  TestFrame gray, rgb, pinned, device;
  memset(&gray, 0, sizeof gray);
  memset(&rgb, 0, sizeof rgb);
  memset(&pinned, 0, sizeof pinned);
  memset(&device, 0, sizeof device);
  LhStats stats;
  lh_stats_init(&stats);
  cudaStream_t stream = NULL;
  n_cases++;
  if (!test_frame_make(&gray, LH_FORMAT_GRAY8, 3840, 2160, 0, DIST_PHOTO, 70000, 0, 0, MEM_HOST) ||
      !test_frame_make(&rgb, LH_FORMAT_RGB, 1920, 1080, 0, DIST_PHOTO, 70001, 0, 0, MEM_HOST) ||
      !test_frame_make(&pinned, LH_FORMAT_NV12, 1920, 1080, 0, DIST_PHOTO, 70002, 0, 0,
                       MEM_PINNED) ||
      !test_frame_make(&device, LH_FORMAT_GRAY8, 3840, 2160, 0, DIST_PHOTO, 70003, 0, 0,
                       MEM_DEVICE)) {
    fprintf(stderr, "FAIL: device time: could not make the frames\n");
    n_failures++;
    goto done;
  }

  /* The frames' bytes: the analyses copy the plane they read, luma's for
   * NV12; equalize and overlay copy the frame there and back. */
  const uint64_t gray_bytes = 3840 * 2160, rgb_bytes = 1920 * 1080 * 3, nv12_y_bytes = 1920 * 1080;
  LhDeviceTime last;
  memset(&last, 0xff, sizeof last); /* whatever a fresh context gives must be written */
  n_cases++;
  if (lh_context_device_time(context, &last) != LH_OK || last.calls != 0 || last.transfer_s != 0 ||
      last.compute_s != 0 || last.transfer_bytes != 0) {
    fprintf(stderr, "FAIL: device time of a fresh context: %s, calls %llu, %g s, %g s\n",
            lh_last_error(), (unsigned long long)last.calls, last.transfer_s, last.compute_s);
    n_failures++;
    memset(&last, 0, sizeof last);
  }

  if (!call_ok(lh_analyze(context, &gray.frame, NULL, &stats), "analyze 4K GRAY8") ||
      !call_ok(lh_analyze(context, &rgb.frame, NULL, &stats), "analyze RGB"))
    goto done;
  time_step(context, &last, "two analyses of host frames", 2, gray_bytes + rgb_bytes, GROWS, GROWS);
  /* Read again with nothing done in between: nothing changes. */
  time_step(context, &last, "a second read", 0, 0, SAME, SAME);
  if (!call_ok(lh_analyze(context, &pinned.frame, NULL, &stats), "analyze pinned NV12"))
    goto done;
  time_step(context, &last, "an analysis of a pinned frame", 1, nv12_y_bytes, GROWS, GROWS);
  if (!call_ok(lh_analyze(context, &device.frame, NULL, &stats), "analyze device GRAY8"))
    goto done;
  time_step(context, &last, "an analysis of a device frame", 1, 0, SAME, GROWS);
  LhFrame batch[3] = {gray.frame, device.frame, rgb.frame};
  LhStats batch_stats[3];
  for (int i = 0; i < 3; i++)
    lh_stats_init(&batch_stats[i]);
  int status = lh_analyze_batch(context, batch, 3, NULL, batch_stats);
  for (int i = 0; i < 3; i++)
    lh_stats_clear(&batch_stats[i]);
  if (!call_ok(status, "analyze a batch of 3"))
    goto done;
  time_step(context, &last, "a batch of 3 frames", 1, gray_bytes + rgb_bytes, GROWS, GROWS);

  LhEqualizeOptions eq;
  lh_equalize_options_init(&eq);
  if (!call_ok(lh_equalize(context, &gray.frame, &gray.frame, &eq), "equalize a host frame"))
    goto done;
  time_step(context, &last, "equalizing a host frame", 1, 2 * gray_bytes, GROWS, GROWS);
  if (!call_ok(lh_analyze(context, &rgb.frame, NULL, &stats), "analyze RGB again"))
    goto done;
  LhOverlayOptions overlay;
  lh_overlay_options_init(&overlay);
  if (!call_ok(lh_overlay(context, &rgb.frame, &stats, &overlay), "overlay on a host frame"))
    goto done;
  time_step(context, &last, "an analysis and an overlay of a host frame", 2, 3 * rgb_bytes, GROWS,
            GROWS);

  /* Device frames: no copy of the frame, and no wait in the call. */
  if (!call_ok(lh_equalize(context, &device.frame, &device.frame, &eq), "equalize a device frame"))
    goto done;
  time_step(context, &last, "equalizing a device frame", 1, 0, SAME, GROWS);
  const int many = LHI_CLOCK_CALLS + 5;
  for (int i = 0; i < many; i++) {
    eq.mode = i % 2 ? LH_EQUALIZE_CLAHE : LH_EQUALIZE_GLOBAL;
    if (!call_ok(lh_equalize(context, &device.frame, &device.frame, &eq),
                 "equalize a device frame again"))
      goto done;
  }
  time_step(context, &last, "more equalizations of a device frame than the ring holds",
            (uint64_t)many, 0, SAME, GROWS);
  if (!call_ok(lh_overlay(context, &device.frame, &stats, &overlay), "overlay on a device frame"))
    goto done;
  time_step(context, &last, "an overlay on a device frame", 1, 0, SAME, GROWS);

  /* The events go on the caller's stream. */
  if (!call_ok(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) == cudaSuccess
                   ? LH_OK
                   : LH_ERROR_CUDA,
               "cudaStreamCreate") ||
      !call_ok(lh_context_set_stream(context, stream), "lh_context_set_stream"))
    goto done;
  eq.mode = LH_EQUALIZE_GLOBAL;
  for (int i = 0; i < 3; i++)
    if (!call_ok(lh_equalize(context, &device.frame, &device.frame, &eq),
                 "equalize a device frame on a caller's stream"))
      goto done;
  if (!call_ok(lh_analyze(context, &gray.frame, NULL, &stats), "analyze on a caller's stream"))
    goto done;
  time_step(context, &last, "calls on a caller's stream", 4, gray_bytes, GROWS, GROWS);

done:
  if (context)
    lh_context_set_stream(context, NULL);
  if (stream)
    cudaStreamDestroy(stream);
  lh_stats_clear(&stats);
  test_frame_free(&gray);
  test_frame_free(&rgb);
  test_frame_free(&pinned);
  test_frame_free(&device);
  lh_context_free(context);
}

/* A small cross-section of the suites above, quick enough to run under
 * compute-sanitizer. */
static void suite_smoke(void)
{
  static const int sizes[][2] = {{1, 1}, {17, 9}, {1919, 3}, {333, 77}};
  uint64_t seed = 50000;
  for (int f = 0; f < LH_FORMAT_COUNT; f++)
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
      for (int d = 0; d < DIST_COUNT; d += 3) {
        Case c = base_case((LhFormat)f, sizes[s][0], sizes[s][1], (Dist)d, seed++);
        c.depth = f == LH_FORMAT_GRAY16 ? 10 + 3 * (int)(s % 3) : 0;
        c.mem = MEM_HOST;
        run_case(&c, NULL);
        apply_layout(&c, &layouts[3]);
        run_case(&c, NULL);
      }
  Case cases[3] = {base_case(LH_FORMAT_RGB, 31, 7, DIST_PHOTO, seed++),
                   base_case(LH_FORMAT_RGB, 640, 3, DIST_BANK, seed++),
                   base_case(LH_FORMAT_RGB, 1, 1, DIST_SINGLE, seed++)};
  cases[1].mem = MEM_DEVICE;
  batch_once(cases, 3, "smoke batch");
}

/* Percentiles by the GPU radix sort equal those of the CPU's histogram. */
static void suite_sort(void)
{
  static const int sizes[][2] = {{1, 1}, {37, 1}, {1, 37}, {17, 9}, {640, 480}, {1920, 1080}};
  uint64_t seed = 30000;
  for (int f = 0; f < LH_FORMAT_COUNT; f++)
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
      for (int d = 0; d < DIST_COUNT; d += (s < 4 ? 1 : 2)) {
        Case c = base_case((LhFormat)f, sizes[s][0], sizes[s][1], (Dist)d, seed++);
        c.method = LH_PERCENTILE_SORT;
        c.n_percentiles = s % 2 ? LH_MAX_PERCENTILES : 0;
        c.depth = f == LH_FORMAT_GRAY16 ? 9 + (int)(s % 8) : 0;
        apply_layout(&c, &layouts[s % (sizeof layouts / sizeof layouts[0])]);
        run_case(&c, NULL);
      }
  Case c = base_case(LH_FORMAT_RGBA, 200, 90, DIST_PHOTO, seed++);
  c.method = LH_PERCENTILE_SORT;
  c.roi = (LhRect){3, 5, 77, 31};
  c.range = LH_RANGE_LIMITED;
  run_layouts(c);
}

/* ------------------------------------------------------------------------ */
/* The launchers alone, on histograms no frame of a test could produce       */

#define CUDA_OR_FAIL(call)                                                                         \
  do {                                                                                             \
    cudaError_t e_ = (call);                                                                       \
    if (e_ != cudaSuccess) {                                                                       \
      fprintf(stderr, "FAIL: %s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
      n_failures++;                                                                                \
      goto done;                                                                                   \
    }                                                                                              \
  } while (0)

static void kernel_case(int bit_depth, LhRange range, int shape, uint64_t seed)
{
  const uint32_t bins = 1u << bit_depth;
  const size_t result_bytes = lhk_result_bytes(bins);
  uint64_t *h = calloc(bins, sizeof *h), *cdf = calloc(bins, sizeof *cdf);
  uint8_t *result = malloc(result_bytes), *result2 = malloc(result_bytes);
  unsigned long long *d_h = NULL, *d_cdf = NULL;
  void *d_result = NULL, *d_result2 = NULL;
  uint64_t rng = seed;
  n_cases++;
  if (!h || !cdf || !result || !result2) {
    n_failures++;
    goto done;
  }
  /* shape 0: random counts up to 2^40 in every bin; 1: a few bins of up to
   * 2^52 (sums that wrap 64 bits, squares that need 128); 2: empty; 3: one
   * bin; 4: only the ends. */
  for (uint32_t v = 0; v < bins; v++) {
    uint64_t r = rng_next(&rng);
    if (shape == 0)
      h[v] = r >> 24;
    else if (shape == 1)
      h[v] = r % 97 == 0 ? (rng_next(&rng) >> 12) : 0;
  }
  if (shape == 3)
    h[rng_next(&rng) % bins] = 12345;
  if (shape == 4)
    h[0] = h[bins - 1] = 7;

  LhiMoments expected;
  lhi_moments_from_histogram(h, bit_depth, range, &expected);
  uint64_t ranks[LHK_MAX_RANKS];
  uint32_t expected_values[LHK_MAX_RANKS];
  int n_ranks = LHK_MAX_RANKS;
  for (int k = 0; k < n_ranks; k++) {
    uint64_t r = rng_next(&rng);
    ranks[k] = expected.count ? 1 + r % expected.count : 0;
  }
  ranks[0] = 0;                  /* below every value: 0, as the CPU walk gives */
  ranks[1] = expected.count + 1; /* past the end: the top bin */
  ranks[2] = expected.count;
  ranks[3] = 1;
  lhi_values_from_histogram(h, bit_depth, ranks, n_ranks, expected_values);

  CUDA_OR_FAIL(cudaMalloc((void **)&d_h, bins * sizeof *h));
  CUDA_OR_FAIL(cudaMalloc((void **)&d_cdf, bins * sizeof *h));
  CUDA_OR_FAIL(cudaMalloc(&d_result, result_bytes));
  CUDA_OR_FAIL(cudaMalloc(&d_result2, result_bytes));
  CUDA_OR_FAIL(cudaMemcpy(d_h, h, bins * sizeof *h, cudaMemcpyHostToDevice));
  CUDA_OR_FAIL(cudaMemset(d_result, 0xff, result_bytes));
  uint32_t black, white;
  lhi_range_limits(bit_depth, range, &black, &white);
  CUDA_OR_FAIL(lhk_moments(d_h, bins, black, white, (LhkResult *)d_result2, 0));
  CUDA_OR_FAIL(lhk_cdf(d_h, bins, d_cdf, 0));
  CUDA_OR_FAIL(cudaMemcpy(cdf, d_cdf, bins * sizeof *cdf, cudaMemcpyDeviceToHost));
  LhkFinish finish;
  memset(&finish, 0, sizeof finish);
  finish.histogram = d_h;
  finish.result = d_result;
  finish.bins = bins;
  finish.black = black;
  finish.white = white;
  finish.n_ranks = n_ranks;
  for (int k = 0; k < n_ranks; k++)
    finish.ranks[k] = ranks[k];
  CUDA_OR_FAIL(lhk_finish(&finish, 1, 0));
  CUDA_OR_FAIL(cudaMemcpy(result, d_result, result_bytes, cudaMemcpyDeviceToHost));
  CUDA_OR_FAIL(cudaMemcpy(result2, d_result2, sizeof(LhkResult), cudaMemcpyDeviceToHost));
  {
    uint64_t sum = 0;
    for (uint32_t v = 0; v < bins; v++) {
      sum += h[v];
      if (cdf[v] != sum) {
        fprintf(stderr, "FAIL: kernels depth=%d shape=%d: cdf[%u] %llu, expected %llu\n", bit_depth,
                shape, v, (unsigned long long)cdf[v], (unsigned long long)sum);
        n_failures++;
        break;
      }
    }
    /* The finishing leaves the histogram cleared for the next frame. */
    uint64_t *left = calloc(bins, sizeof *left);
    if (left && cudaMemcpy(left, d_h, bins * sizeof *left, cudaMemcpyDeviceToHost) == cudaSuccess)
      for (uint32_t v = 0; v < bins; v++)
        if (left[v] != 0) {
          fprintf(stderr, "FAIL: kernels depth=%d shape=%d: histogram not cleared at %u\n",
                  bit_depth, shape, v);
          n_failures++;
          break;
        }
    free(left);
  }
  for (int which = 0; which < 2; which++) {
    const LhkResult *r = (const LhkResult *)(which ? result2 : result);
    unsigned __int128 squares = ((unsigned __int128)r->sum_squares_hi << 64) | r->sum_squares_lo;
    /* The device keeps Σ v h(v) in 64 bits, enough for any frame (2^40
     * pixels of 16-bit luma stay below 2^56); the host's is exact in 128 for
     * summed histograms.  These made-up counts pass 2^64: the device's sum
     * is the host's modulo 2^64. */
    bool same = r->count == expected.count && r->sum == (uint64_t)expected.sum &&
                squares == expected.sum_squares && r->min == expected.min &&
                r->max == expected.max && r->clipped_low == expected.clipped_low &&
                r->clipped_high == expected.clipped_high &&
                r->below_legal == expected.below_legal && r->above_legal == expected.above_legal;
    if (!same) {
      fprintf(stderr,
              "FAIL: %s depth=%d range=%s shape=%d seed=%llu: count %llu/%llu sum %llu/%llu "
              "min %u/%u max %u/%u clipped %llu,%llu/%llu,%llu legal %llu,%llu/%llu,%llu\n",
              which ? "lhk_moments" : "lhk_finish", bit_depth, lh_range_name(range), shape,
              (unsigned long long)seed, r->count, (unsigned long long)expected.count, r->sum,
              (unsigned long long)expected.sum, r->min, expected.min, r->max, expected.max,
              r->clipped_low, r->clipped_high, (unsigned long long)expected.clipped_low,
              (unsigned long long)expected.clipped_high, r->below_legal, r->above_legal,
              (unsigned long long)expected.below_legal, (unsigned long long)expected.above_legal);
      n_failures++;
    }
  }
  {
    const LhkResult *r = (const LhkResult *)result;
    for (int k = 0; k < n_ranks; k++)
      if (r->values[k] != expected_values[k]) {
        fprintf(stderr, "FAIL: lhk_finish depth=%d shape=%d: rank %llu: value %u, expected %u\n",
                bit_depth, shape, (unsigned long long)ranks[k], r->values[k], expected_values[k]);
        n_failures++;
        break;
      }
    if (memcmp(result + LHK_RESULT_HEADER_BYTES, h, bins * sizeof *h) != 0) {
      fprintf(stderr, "FAIL: lhk_finish depth=%d shape=%d: histogram copy differs\n", bit_depth,
              shape);
      n_failures++;
    }
  }
done:
  cudaFree(d_h);
  cudaFree(d_cdf);
  cudaFree(d_result);
  cudaFree(d_result2);
  free(h);
  free(cdf);
  free(result);
  free(result2);
}

/* lhk_histogram on v210 at any byte alignment (the library's frames are
 * 4-byte aligned; the launcher takes any address), in the shared mode and in
 * the global one (more than LHK_SHARED_MAX_BINS bins), one image and two in
 * one launch (the second narrower: another partial last group), against the
 * Y fields counted on the host. */
static void v210_launcher_case(const LhkDevice *device, int width, int height, size_t offset,
                               size_t pad, uint32_t bins, uint64_t seed)
{
  const size_t stride = gen_row_bytes(LH_FORMAT_V210, width) + pad;
  const size_t size = offset + stride * (size_t)height + 16;
  int narrow = width > 6 ? width - 6 - (int)(seed % 5) : width;
  if (narrow < 1)
    narrow = 1;
  uint8_t *host = malloc(size);
  uint64_t *expected = calloc(2 * (size_t)bins, sizeof *expected);
  uint64_t *got = calloc(2 * (size_t)bins, sizeof *got);
  uint8_t *d_frame = NULL;
  unsigned long long *d_histograms = NULL;
  void *d_scratch = NULL;
  const size_t scratch_bytes = lhk_histogram_scratch_bytes(bins, 2);
  uint64_t rng = seed;
  n_cases++;
  if (!host || !expected || !got) {
    n_failures++;
    goto done;
  }
  for (size_t i = 0; i < size; i++)
    host[i] = (uint8_t)rng_next(&rng);
  for (int y = 0; y < height; y++) {
    const uint8_t *row = host + offset + (size_t)y * stride;
    for (int x = 0; x < width; x++) {
      expected[gen_luma_get(LH_FORMAT_V210, row, x)]++;
      if (x < narrow)
        expected[bins + gen_luma_get(LH_FORMAT_V210, row, x)]++;
    }
  }
  CUDA_OR_FAIL(cudaMalloc((void **)&d_frame, size));
  CUDA_OR_FAIL(cudaMalloc((void **)&d_histograms, 2 * (size_t)bins * sizeof *got));
  CUDA_OR_FAIL(cudaMalloc(&d_scratch, scratch_bytes));
  CUDA_OR_FAIL(cudaMemcpy(d_frame, host, size, cudaMemcpyHostToDevice));
  for (int n_images = 1; n_images <= 2; n_images++) {
    CUDA_OR_FAIL(cudaMemset(d_histograms, 0, 2 * (size_t)bins * sizeof *got));
    CUDA_OR_FAIL(cudaMemset(d_scratch, 0, scratch_bytes));
    LhkImage images[2];
    memset(images, 0, sizeof images);
    for (int i = 0; i < 2; i++) {
      images[i].data = d_frame + offset;
      images[i].stride = stride;
      images[i].width = (uint32_t)(i ? narrow : width);
      images[i].height = (uint32_t)height;
      images[i].slot = (uint32_t)i;
      images[i].max_value = bins - 1;
    }
    CUDA_OR_FAIL(lhk_histogram(device, LHK_PIXEL_V210, bins, images, n_images, d_histograms,
                               n_images, d_scratch, 0));
    CUDA_OR_FAIL(
        cudaMemcpy(got, d_histograms, 2 * (size_t)bins * sizeof *got, cudaMemcpyDeviceToHost));
    for (size_t v = 0; v < (size_t)n_images * bins; v++)
      if (got[v] != expected[v]) {
        fprintf(stderr,
                "FAIL: lhk_histogram v210 %dx%d (narrow %d) offset %zu pad %zu bins %u images %d: "
                "image %zu bin %zu: %llu, expected %llu\n",
                width, height, narrow, offset, pad, bins, n_images, v / bins, v % bins,
                (unsigned long long)got[v], (unsigned long long)expected[v]);
        n_failures++;
        break;
      }
  }
done:
  cudaFree(d_frame);
  cudaFree(d_histograms);
  cudaFree(d_scratch);
  free(host);
  free(expected);
  free(got);
}

/* ------------------------------------------------------------------------ */
/* The fused path of wide histograms and packed 4:2:2 (issue 18)             */

/* The LhkResult a finish must give for histogram h (bins bins), the legal
 * limits black and white and the ranks, worked out here from the
 * definitions (lh-kernels.h), not by the library's own code. */
static void expected_result(const uint64_t *h, uint32_t bins, uint32_t black, uint32_t white,
                            const uint64_t *ranks, int n_ranks, LhkResult *r)
{
  memset(r, 0, sizeof *r);
  unsigned __int128 squares = 0;
  bool seen = false;
  for (uint32_t v = 0; v < bins; v++) {
    r->count += h[v];
    r->sum += h[v] * v;
    squares += (unsigned __int128)h[v] * ((uint64_t)v * v);
    if (h[v]) {
      if (!seen)
        r->min = v;
      seen = true;
      r->max = v;
    }
    if (v < black)
      r->below_legal += h[v];
    if (v > white)
      r->above_legal += h[v];
  }
  r->sum_squares_lo = (uint64_t)squares;
  r->sum_squares_hi = (uint64_t)(squares >> 64);
  r->clipped_low = h[0];
  r->clipped_high = h[bins - 1];
  for (int k = 0; k < n_ranks; k++) {
    uint64_t c = 0;
    uint32_t v = 0;
    if (ranks[k] == 0)
      v = 0;
    else if (ranks[k] > r->count)
      v = bins - 1;
    else
      while ((c += h[v]) < ranks[k])
        v++;
    r->values[k] = v;
  }
}

/* Compares a result block (header and histogram) with the expected one;
 * false, with the first difference in why. */
static bool result_equal(const uint8_t *block, const LhkResult *e, const uint64_t *h, uint32_t bins,
                         int n_ranks, char *why, size_t size)
{
  const LhkResult *r = (const LhkResult *)block;
#define FIELD(f)                                                                                   \
  if (r->f != e->f) {                                                                              \
    snprintf(why, size, #f " %llu, expected %llu", (unsigned long long)r->f,                       \
             (unsigned long long)e->f);                                                            \
    return false;                                                                                  \
  }
  FIELD(count)
  FIELD(sum)
  FIELD(sum_squares_lo)
  FIELD(sum_squares_hi)
  FIELD(clipped_low)
  FIELD(clipped_high)
  FIELD(below_legal)
  FIELD(above_legal)
  FIELD(min)
  FIELD(max)
#undef FIELD
  for (int k = 0; k < n_ranks; k++)
    if (r->values[k] != e->values[k]) {
      snprintf(why, size, "rank %d: value %u, expected %u", k, r->values[k], e->values[k]);
      return false;
    }
  const uint64_t *got = (const uint64_t *)(block + LHK_RESULT_HEADER_BYTES);
  for (uint32_t v = 0; v < bins; v++)
    if (got[v] != h[v]) {
      snprintf(why, size, "bin %u: %llu, expected %llu", v, (unsigned long long)got[v],
               (unsigned long long)h[v]);
      return false;
    }
  return true;
}

/* The buffers every fused case shares: the scratch, one zeroed allocation
 * kept for all cases as the library keeps it (every launch must leave it
 * zero: the tickets and the copies), checked after each launch. */
typedef struct {
  LhkDevice device;
  void *d_scratch;
  size_t scratch_bytes;
  uint8_t *scratch_copy;
} FusedBench;

static bool scratch_left_zero(FusedBench *b, const char *label)
{
  if (cudaMemcpy(b->scratch_copy, b->d_scratch, b->scratch_bytes, cudaMemcpyDeviceToHost) !=
      cudaSuccess) {
    fprintf(stderr, "FAIL: %s: cudaMemcpy of the scratch\n", label);
    n_failures++;
    return false;
  }
  for (size_t i = 0; i < b->scratch_bytes; i++)
    if (b->scratch_copy[i]) {
      fprintf(stderr, "FAIL: %s: scratch byte %zu left %u (the next launch would see it)\n", label,
              i, b->scratch_copy[i]);
      n_failures++;
      return false;
    }
  return true;
}

/* lhk_histogram_finish of one LHK_PIXEL_Y16 image (words, shift, swap) of
 * 2^bit_depth bins, against the histogram counted here: shape 0 words
 * uniform in the bins, 1 uniform over 16 bits (most clamped into the top
 * bin), 2 one value (a constant frame), 3 all but a few pixels one value, 4
 * the two end bins, 5 a few bins far apart.  Limited range at a random
 * black / white when `limited`.  The image starts `offset` bytes (even) into
 * its allocation, rows `pad` bytes apart beyond the width. */
static void fused_wide_case(FusedBench *b, int bit_depth, int width, int height, size_t offset,
                            size_t pad, int shape, bool limited, uint32_t shift, uint32_t swap,
                            uint64_t seed)
{
  const uint32_t bins = 1u << bit_depth, max_value = bins - 1;
  const size_t stride = (size_t)width * 2 + pad;
  const size_t size = offset + stride * (size_t)height;
  const size_t result_bytes = lhk_result_bytes(bins);
  uint8_t *host = malloc(size), *result = malloc(result_bytes);
  uint64_t *h = calloc(bins, sizeof *h);
  uint8_t *d_frame = NULL, *d_result = NULL;
  uint64_t rng = seed;
  char label[200], why[200];
  snprintf(label, sizeof label,
           "lhk_histogram_finish y16 depth=%d %dx%d offset=%zu pad=%zu shape=%d limited=%d "
           "shift=%u swap=%u seed=%llu",
           bit_depth, width, height, offset, pad, shape, (int)limited, shift, swap,
           (unsigned long long)seed);
  n_cases++;
  if (!host || !result || !h) {
    n_failures++;
    goto done;
  }
  const uint32_t one = (uint32_t)(rng_next(&rng) % bins);
  for (size_t i = 0; i < size; i++)
    host[i] = (uint8_t)rng_next(&rng);
  for (int y = 0; y < height; y++)
    for (int x = 0; x < width; x++) {
      uint8_t *p = host + offset + (size_t)y * stride + 2 * (size_t)x;
      const uint64_t r = rng_next(&rng);
      uint32_t key;
      switch (shape) {
      case 0:
        key = (uint32_t)(r % bins);
        break;
      case 1:
        key = (uint32_t)(r & 0xffff) >> shift;
        break;
      case 2:
        key = one;
        break;
      case 3:
        key = r % 1000 == 0 ? (uint32_t)(r >> 32) % bins : one;
        break;
      case 4:
        key = r & 1 ? max_value : 0;
        break;
      default:
        key = (uint32_t)(r % 5) * (bins / 5) + (uint32_t)(r % 3);
        break;
      }
      /* The key in the word's top bits (below them noise the shift drops). */
      const uint32_t word = (key << shift | (uint32_t)(r >> 48) % (1u << shift)) & 0xffff;
      p[swap ? 1 : 0] = (uint8_t)word;
      p[swap ? 0 : 1] = (uint8_t)(word >> 8);
      const uint32_t read = word >> shift;
      h[read < max_value ? read : max_value]++;
    }
  uint32_t black = 0, white = max_value;
  if (limited) {
    black = (uint32_t)(rng_next(&rng) % bins);
    white = black + (uint32_t)(rng_next(&rng) % (bins - black));
  }
  uint64_t count = (uint64_t)width * height;
  uint64_t ranks[LHK_MAX_RANKS];
  const int n_ranks = LHK_MAX_RANKS;
  for (int k = 0; k < n_ranks; k++)
    ranks[k] = 1 + rng_next(&rng) % count;
  ranks[0] = 0;
  ranks[1] = count + 1;
  ranks[2] = count;
  ranks[3] = 1;
  LhkResult expected;
  expected_result(h, bins, black, white, ranks, n_ranks, &expected);

  CUDA_OR_FAIL(cudaMalloc((void **)&d_frame, size));
  CUDA_OR_FAIL(cudaMalloc((void **)&d_result, result_bytes));
  CUDA_OR_FAIL(cudaMemcpy(d_frame, host, size, cudaMemcpyHostToDevice));
  LhkImage image;
  memset(&image, 0, sizeof image);
  image.data = d_frame + offset;
  image.stride = stride;
  image.width = (uint32_t)width;
  image.height = (uint32_t)height;
  image.shift = shift;
  image.swap = swap;
  image.max_value = max_value;
  LhkFinish finish;
  memset(&finish, 0, sizeof finish);
  finish.histogram = (unsigned long long *)d_result; /* not used: the scratch holds the counts */
  finish.result = d_result;
  finish.bins = bins;
  finish.black = black;
  finish.white = white;
  finish.n_ranks = n_ranks;
  for (int k = 0; k < n_ranks; k++)
    finish.ranks[k] = ranks[k];
  /* Twice: the second launch finds the tickets and copies the first left. */
  for (int round = 0; round < 2; round++) {
    CUDA_OR_FAIL(cudaMemset(d_result, 0xa5, result_bytes));
    CUDA_OR_FAIL(lhk_histogram_finish(&b->device, LHK_PIXEL_Y16, &image, &finish, b->d_scratch, 0));
    CUDA_OR_FAIL(cudaMemcpy(result, d_result, result_bytes, cudaMemcpyDeviceToHost));
    if (!result_equal(result, &expected, h, bins, n_ranks, why, sizeof why)) {
      fprintf(stderr, "FAIL: %s round %d: %s\n", label, round, why);
      n_failures++;
      break;
    }
    if (!scratch_left_zero(b, label))
      break;
  }
done:
  cudaFree(d_frame);
  cudaFree(d_result);
  free(host);
  free(result);
  free(h);
}

/* Packed 4:2:2 at any byte alignment and pitch (Y the low byte of each word,
 * YUY2's, or the high, UYVY's): lhk_histogram of one image and of two in one
 * launch (the second starting one byte later, so one of the two rows starts
 * at an odd address), and lhk_histogram_finish, against the Y bytes counted
 * here.  shape 0 random, 1 one value (a constant frame), 2 a band of 8
 * values, 3 one value but for a byte in a thousand. */
static void packed422_launcher_case(FusedBench *b, int width, int height, size_t offset, size_t pad,
                                    uint32_t y_byte, int shape, uint64_t seed)
{
  const size_t stride = (size_t)width * 2 + pad;
  const size_t size = offset + 1 + stride * (size_t)height + 16;
  const size_t result_bytes = lhk_result_bytes(256);
  uint8_t *host = malloc(size), *result = malloc(result_bytes);
  uint64_t *expected = calloc(512, sizeof *expected), *got = calloc(512, sizeof *got);
  uint8_t *d_frame = NULL, *d_result = NULL;
  unsigned long long *d_histograms = NULL;
  uint64_t rng = seed;
  char label[200], why[200];
  snprintf(label, sizeof label,
           "packed 4:2:2 %dx%d offset=%zu pad=%zu y_byte=%u shape=%d seed=%llu", width, height,
           offset, pad, y_byte, shape, (unsigned long long)seed);
  n_cases++;
  if (!host || !result || !expected || !got) {
    n_failures++;
    goto done;
  }
  /* Every byte of the block alike (Y, chroma and padding): image 1's Y
   * bytes are image 0's chroma. */
  const uint8_t level = (uint8_t)rng_next(&rng);
  for (size_t i = 0; i < size; i++) {
    const uint64_t r = rng_next(&rng);
    host[i] = shape == 0   ? (uint8_t)r
              : shape == 1 ? level
              : shape == 2 ? (uint8_t)(level + r % 8)
                           : (r % 1000 == 0 ? (uint8_t)(r >> 40) : level);
  }
  /* Image 0 at offset, image 1 one byte further on (the same rows shifted:
   * each of its pixels is a word that straddles two of image 0's). */
  for (int i = 0; i < 2; i++)
    for (int y = 0; y < height; y++)
      for (int x = 0; x < width; x++)
        expected[i * 256 +
                 host[offset + (size_t)i + (size_t)y * stride + 2 * (size_t)x + y_byte]]++;

  CUDA_OR_FAIL(cudaMalloc((void **)&d_frame, size));
  CUDA_OR_FAIL(cudaMalloc((void **)&d_result, result_bytes));
  CUDA_OR_FAIL(cudaMalloc((void **)&d_histograms, 512 * sizeof *got));
  CUDA_OR_FAIL(cudaMemcpy(d_frame, host, size, cudaMemcpyHostToDevice));
  LhkImage images[2];
  memset(images, 0, sizeof images);
  for (int i = 0; i < 2; i++) {
    images[i].data = d_frame + offset + i;
    images[i].stride = stride;
    images[i].width = (uint32_t)width;
    images[i].height = (uint32_t)height;
    images[i].slot = (uint32_t)i;
    images[i].shift = 8 * y_byte;
    images[i].keep = y_byte ? 0x00ffu : 0xff00u;
    images[i].max_value = 255;
  }
  for (int n_images = 1; n_images <= 2; n_images++) {
    CUDA_OR_FAIL(cudaMemset(d_histograms, 0, 512 * sizeof *got));
    CUDA_OR_FAIL(lhk_histogram(&b->device, LHK_PIXEL_Y16, 256, images, n_images, d_histograms,
                               n_images, b->d_scratch, 0));
    CUDA_OR_FAIL(cudaMemcpy(got, d_histograms, 512 * sizeof *got, cudaMemcpyDeviceToHost));
    for (int v = 0; v < 256 * n_images; v++)
      if (got[v] != expected[v]) {
        fprintf(stderr, "FAIL: lhk_histogram %s images=%d: image %d bin %d: %llu, expected %llu\n",
                label, n_images, v / 256, v % 256, (unsigned long long)got[v],
                (unsigned long long)expected[v]);
        n_failures++;
        break;
      }
  }
  for (int i = 0; i < 2; i++) {
    const uint64_t count = (uint64_t)width * height;
    uint64_t ranks[LHK_MAX_RANKS];
    for (int k = 0; k < LHK_MAX_RANKS; k++)
      ranks[k] = 1 + rng_next(&rng) % count;
    ranks[0] = 0;
    ranks[1] = count;
    LhkResult e;
    expected_result(expected + 256 * i, 256, 16, 235, ranks, LHK_MAX_RANKS, &e);
    LhkFinish finish;
    memset(&finish, 0, sizeof finish);
    finish.histogram = d_histograms;
    finish.result = d_result;
    finish.bins = 256;
    finish.black = 16;
    finish.white = 235;
    finish.n_ranks = LHK_MAX_RANKS;
    for (int k = 0; k < LHK_MAX_RANKS; k++)
      finish.ranks[k] = ranks[k];
    /* Finished alone: its histogram is the launch's only slot. */
    LhkImage alone = images[i];
    alone.slot = 0;
    CUDA_OR_FAIL(
        lhk_histogram_finish(&b->device, LHK_PIXEL_Y16, &alone, &finish, b->d_scratch, 0));
    CUDA_OR_FAIL(cudaMemcpy(result, d_result, result_bytes, cudaMemcpyDeviceToHost));
    if (!result_equal(result, &e, expected + 256 * i, 256, LHK_MAX_RANKS, why, sizeof why)) {
      fprintf(stderr, "FAIL: lhk_histogram_finish %s image %d: %s\n", label, i, why);
      n_failures++;
    }
    if (!scratch_left_zero(b, label))
      break;
  }
done:
  cudaFree(d_frame);
  cudaFree(d_result);
  cudaFree(d_histograms);
  free(host);
  free(result);
  free(expected);
  free(got);
}

/* The fused histograms of 9 to 12 bits and packed 4:2:2 by the 8-bit kernel:
 * the launchers on the edge cases of their reads and their finish, then
 * frames through the library against the CPU (layouts, regions, ranges).
 * Run as is and with LHK_FUSED_WIDE_COPIES=1 and 4 and LHK_UNFUSED_WIDE=1
 * (tests/gpu/meson.build). */
static void suite_fused(void)
{
  uint64_t seed = 60000;
  FusedBench b;
  memset(&b, 0, sizeof b);
  if (lhk_device_init(&b.device) != cudaSuccess) {
    fprintf(stderr, "FAIL: lhk_device_init\n");
    n_failures++;
    return;
  }
  printf("fused: finish up to %u bins, %u copies above %d bins; packed 4:2:2 kernel %s\n",
         lhk_histogram_finish_max_bins(&b.device), b.device.fused_wide_copies, 512,
         b.device.packed422_blocks_per_sm[1] > 0 && !b.device.unfused_wide ? "on" : "off");
  b.scratch_bytes = lhk_histogram_scratch_bytes(4096, 2);
  b.scratch_copy = malloc(b.scratch_bytes);
  if (!b.scratch_copy || cudaMalloc(&b.d_scratch, b.scratch_bytes) != cudaSuccess ||
      cudaMemset(b.d_scratch, 0, b.scratch_bytes) != cudaSuccess) {
    fprintf(stderr, "FAIL: scratch for the fused cases\n");
    n_failures++;
    goto done;
  }

  /* The launchers.  Sizes: one pixel, odd rows, a few blocks, every
   * resident block (4K). */
  static const int wide_sizes[][2] = {{1, 1},  {3, 1},     {1, 5},    {17, 9},
                                      {33, 7}, {257, 129}, {1921, 3}, {3840, 2160}};
  for (int depth = 9; depth <= 12; depth++)
    for (size_t s = 0; s < sizeof wide_sizes / sizeof wide_sizes[0]; s++)
      for (int shape = 0; shape < 6; shape++) {
        const bool big = wide_sizes[s][0] * wide_sizes[s][1] > 1000000;
        if (big && shape % 2 && depth != 12)
          continue; /* the 4K cases: every shape at 12 bits, some at the others */
        fused_wide_case(&b, depth, wide_sizes[s][0], wide_sizes[s][1], (s % 4) * 2,
                        s % 3 ? 2 * s + 2 : 0, shape, (shape + s) % 2 == 1,
                        depth == 10 && s % 2 ? 6 : 0, (uint32_t)(s == 3), seed++);
      }
  static const int packed_sizes[][2] = {{1, 1},     {2, 1},    {7, 3},      {8, 2},   {15, 4},
                                        {16, 5},    {17, 1},   {31, 9},     {33, 33}, {100, 7},
                                        {640, 480}, {1923, 5}, {3840, 2160}};
  for (size_t s = 0; s < sizeof packed_sizes / sizeof packed_sizes[0]; s++)
    for (size_t offset = 0; offset < 18; offset += (packed_sizes[s][0] > 1000 ? 5 : 1))
      packed422_launcher_case(&b, packed_sizes[s][0], packed_sizes[s][1], offset,
                              (offset % 3) * (offset + 1), (uint32_t)(offset / 2 % 2),
                              (int)((s + offset) % 4), seed++);

  /* Frames through the library: every format the fused path takes, in
   * every layout (odd plane starts for the 8-bit packed formats), every
   * distribution. */
  {
    static const LhFormat formats[] = {
        LH_FORMAT_YUY2,      LH_FORMAT_YVYU,      LH_FORMAT_UYVY,       LH_FORMAT_VYUY,
        LH_FORMAT_P010,      LH_FORMAT_P012,      LH_FORMAT_I420_10LE,  LH_FORMAT_I420_12LE,
        LH_FORMAT_I422_12LE, LH_FORMAT_Y444_12LE, LH_FORMAT_V210,       LH_FORMAT_GRAY16,
        LH_FORMAT_RGB16,     LH_FORMAT_R210,      LH_FORMAT_RGB10A2_LE, LH_FORMAT_GRAY16_BE};
    static const int sizes[][2] = {{1, 1}, {2, 3}, {5, 1}, {17, 9}, {63, 5}, {641, 479}};
    for (size_t f = 0; f < sizeof formats / sizeof formats[0]; f++)
      for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (int d = 0; d < DIST_COUNT; d++) {
          Case c = base_case(formats[f], sizes[s][0], sizes[s][1], (Dist)d, seed++);
          /* the formats of variable depth at 9 to 12 bits */
          if (formats[f] == LH_FORMAT_GRAY16 || formats[f] == LH_FORMAT_RGB16 ||
              formats[f] == LH_FORMAT_GRAY16_BE)
            c.depth = 9 + (int)((s + (size_t)d) % 4);
          c.range = (s + (size_t)d) % 2 ? LH_RANGE_LIMITED : LH_RANGE_FULL;
          c.n_percentiles = d % 2 ? LH_MAX_PERCENTILES : 0;
          run_layouts(c);
        }
    /* 4K frames in device memory: every resident block. */
    for (size_t f = 0; f < sizeof formats / sizeof formats[0]; f++)
      for (int d = 0; d < 3; d++) {
        Case c = base_case(formats[f], 3840, 2160, (Dist)d, seed++);
        if (formats[f] == LH_FORMAT_GRAY16 || formats[f] == LH_FORMAT_RGB16 ||
            formats[f] == LH_FORMAT_GRAY16_BE)
          c.depth = 10 + d;
        c.mem = MEM_DEVICE;
        run_case(&c, NULL);
      }
    /* Regions of interest: odd corners (an odd x puts a packed 4:2:2 row
     * at an odd word of its pair), one pixel, one row, one column. */
    static const LhRect rois[] = {{1, 1, 1, 1},  {3, 2, 101, 37}, {0, 5, 200, 1},
                                  {7, 0, 1, 90}, {13, 11, 17, 3}, {199, 89, 1, 1}};
    static const LhFormat roi_formats[] = {LH_FORMAT_YUY2, LH_FORMAT_UYVY, LH_FORMAT_P012,
                                           LH_FORMAT_I420_12LE, LH_FORMAT_Y444_10LE};
    run_rois(roi_formats, sizeof roi_formats / sizeof roi_formats[0], rois,
             sizeof rois / sizeof rois[0], &seed);
  }
done:
  cudaFree(b.d_scratch);
  free(b.scratch_copy);
}

static void suite_kernels(void)
{
  uint64_t seed = 40000;
  static const int depths[] = {8, 9, 10, 12, 16};
  for (size_t d = 0; d < sizeof depths / sizeof depths[0]; d++)
    for (int shape = 0; shape < 5; shape++)
      for (int range = 0; range < 2; range++)
        kernel_case(depths[d], (LhRange)range, shape, seed++);

  /* Invalid arguments are refused before any launch. */
  LhkImage image;
  memset(&image, 0, sizeof image);
  n_cases++;
  if (lhk_histogram(NULL, LHK_PIXEL_Y8, 256, &image, 1, NULL, 1, NULL, 0) !=
          cudaErrorInvalidValue ||
      lhk_finish(NULL, -1, 0) != cudaErrorInvalidValue) {
    fprintf(stderr, "FAIL: launchers accepted invalid arguments\n");
    n_failures++;
  }

  LhkDevice device;
  if (lhk_device_init(&device) != cudaSuccess) {
    fprintf(stderr, "FAIL: lhk_device_init\n");
    n_failures++;
    return;
  }
  static const int v210_sizes[][2] = {{1, 1},    {6, 3},    {7, 2},   {47, 5},
                                      {1920, 9}, {1925, 4}, {4099, 3}};
  static const size_t offsets[] = {0, 1, 2, 3, 4, 8, 12, 16};
  for (size_t s = 0; s < sizeof v210_sizes / sizeof v210_sizes[0]; s++)
    for (size_t o = 0; o < sizeof offsets / sizeof offsets[0]; o++)
      for (int global = 0; global < 2; global++)
        v210_launcher_case(&device, v210_sizes[s][0], v210_sizes[s][1], offsets[o],
                           (s + o) % 3 == 0 ? 0 : 5 + o, global ? 8192 : 1024, seed++);
}

int main(int argc, char **argv)
{
  if (argc != 2) {
    fprintf(stderr,
            "usage: %s formats|large|depths|options|batch|sort|kernels|fused|smoke|registered|"
            "device-time\n",
            argv[0]);
    return 2;
  }
  /* Lines reach a log before a crash could swallow them. */
  setvbuf(stdout, NULL, _IOLBF, 0);
  gpu = cuda_context_or_skip();
  if (lh_context_new(LH_BACKEND_CPU, &cpu) < 0) {
    fprintf(stderr, "lh_context_new(cpu): %s\n", lh_last_error());
    return 1;
  }
  const char *suite = argv[1];
  if (!strcmp(suite, "formats"))
    suite_formats();
  else if (!strcmp(suite, "large"))
    suite_large();
  else if (!strcmp(suite, "depths"))
    suite_depths();
  else if (!strcmp(suite, "options"))
    suite_options();
  else if (!strcmp(suite, "batch"))
    suite_batch();
  else if (!strcmp(suite, "sort"))
    suite_sort();
  else if (!strcmp(suite, "kernels"))
    suite_kernels();
  else if (!strcmp(suite, "fused"))
    suite_fused();
  else if (!strcmp(suite, "smoke"))
    suite_smoke();
  else if (!strcmp(suite, "registered"))
    suite_registered();
  else if (!strcmp(suite, "device-time"))
    suite_device_time();
  else {
    fprintf(stderr, "unknown suite %s\n", suite);
    return 2;
  }
  printf("%s: %d cases, %d failures\n", suite, n_cases, n_failures);
  lh_context_free(gpu);
  lh_context_free(cpu);
  return n_failures ? 1 : (n_cases ? 0 : 1);
}
