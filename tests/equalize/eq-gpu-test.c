/* eq-gpu-test.c: equalization, CLAHE, LUTs, temporal windows, the chroma
 * rule LH_CHROMA_SCALE and overlays on the CUDA backend against the CPU
 * backend, bit for bit, for frames in host memory (pageable, staged; and
 * page-locked, copied without staging) and in device memory (aligned rows
 * that take the 16-byte path and odd ones that do not, out of place and in
 * place).  Exits 77 when no CUDA device is usable. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "../unit/test-check.h"
#include "eq-reference.h"

static LhContext *cpu, *gpu;

typedef enum {
  TWIN_HOST,   /* malloc: the library stages it */
  TWIN_PINNED, /* cudaMallocHost: the library copies it without staging */
  TWIN_DEVICE,
} TwinMemory;

/* A copy of a host frame's bytes and layout, in host or device memory. */
typedef struct {
  LhFrame frame;
  uint8_t *allocation;
  size_t size;
  bool device;
  bool pinned;
} Twin;

static void twin_of(const GenFrame *g, TwinMemory memory, Twin *t)
{
  const bool device = memory == TWIN_DEVICE;
  t->size = g->size;
  t->device = device;
  t->pinned = memory == TWIN_PINNED;
  if (t->pinned) {
    if (cudaMallocHost((void **)&t->allocation, g->size) != cudaSuccess) {
      fprintf(stderr, "cudaMallocHost of %zu bytes failed\n", g->size);
      exit(1);
    }
    memcpy(t->allocation, g->allocation, g->size);
  } else if (device) {
    /* Complete before the library's own stream reads it (lumahist.h). */
    if (cudaMalloc((void **)&t->allocation, g->size) != cudaSuccess ||
        cudaMemcpy(t->allocation, g->allocation, g->size, cudaMemcpyHostToDevice) != cudaSuccess ||
        cudaDeviceSynchronize() != cudaSuccess) {
      fprintf(stderr, "cudaMalloc/cudaMemcpy of %zu bytes failed\n", g->size);
      exit(1);
    }
  } else {
    t->allocation = malloc(g->size);
    memcpy(t->allocation, g->allocation, g->size);
  }
  t->frame = g->frame;
  t->frame.memory = device ? LH_MEMORY_CUDA : LH_MEMORY_HOST;
  for (int p = 0; p < 3; p++)
    if (g->frame.planes[p])
      t->frame.planes[p] = t->allocation + ((uint8_t *)g->frame.planes[p] - g->allocation);
}

/* The bytes of a twin on the host (a new buffer for device twins). */
static uint8_t *twin_bytes(const Twin *t)
{
  uint8_t *bytes = malloc(t->size);
  if (t->device) {
    if (cudaDeviceSynchronize() != cudaSuccess ||
        cudaMemcpy(bytes, t->allocation, t->size, cudaMemcpyDeviceToHost) != cudaSuccess) {
      fprintf(stderr, "copy back failed\n");
      exit(1);
    }
  } else {
    memcpy(bytes, t->allocation, t->size);
  }
  return bytes;
}

static void twin_free(Twin *t)
{
  if (t->device)
    cudaFree(t->allocation);
  else if (t->pinned)
    cudaFreeHost(t->allocation);
  else
    free(t->allocation);
}

static size_t first_difference(const uint8_t *a, const uint8_t *b, size_t n)
{
  for (size_t i = 0; i < n; i++)
    if (a[i] != b[i])
      return i;
  return n;
}

/* An overlay drawn by the CPU on want and by the CUDA backend on a host, a
 * page-locked and a device twin of a frame; got[] the three results' bytes
 * (the device frame's copied back). */
typedef struct {
  Twin want, host, pinned, dev;
  uint8_t *dev_bytes;
  const uint8_t *got[3];
} OverlayTwins;

static const char *const overlay_twin_names[3] = {"host frame", "page-locked host frame",
                                                  "device frame"};

static void overlay_twins(const GenFrame *g, const LhStats *stats, const LhOverlayOptions *oo,
                          OverlayTwins *t)
{
  twin_of(g, TWIN_HOST, &t->want);
  twin_of(g, TWIN_HOST, &t->host);
  twin_of(g, TWIN_PINNED, &t->pinned);
  twin_of(g, TWIN_DEVICE, &t->dev);
  CHECK(lh_overlay(cpu, &t->want.frame, stats, oo) == 0, "%s", lh_last_error());
  CHECK(lh_overlay(gpu, &t->host.frame, stats, oo) == 0, "%s", lh_last_error());
  CHECK(lh_overlay(gpu, &t->pinned.frame, stats, oo) == 0, "%s", lh_last_error());
  CHECK(lh_overlay(gpu, &t->dev.frame, stats, oo) == 0, "%s", lh_last_error());
  t->dev_bytes = twin_bytes(&t->dev);
  t->got[0] = t->host.allocation;
  t->got[1] = t->pinned.allocation;
  t->got[2] = t->dev_bytes;
}

static void overlay_twins_free(OverlayTwins *t)
{
  free(t->dev_bytes);
  twin_free(&t->want);
  twin_free(&t->host);
  twin_free(&t->pinned);
  twin_free(&t->dev);
}

/* GPU (host frames: pageable, page-locked out of place, page-locked in
 * place; device frames out of place and in place) == CPU. */
static void compare_equalize(const GenFrame *g, const LhEqualizeOptions *o, const uint16_t *lut,
                             const char *what)
{
  Twin want, host, pin_in, pin_out, pin_place, dev_out, dev_in, dev_place;
  twin_of(g, TWIN_HOST, &want);
  twin_of(g, TWIN_HOST, &host);
  twin_of(g, TWIN_PINNED, &pin_in);
  twin_of(g, TWIN_PINNED, &pin_out);
  twin_of(g, TWIN_PINNED, &pin_place);
  twin_of(g, TWIN_DEVICE, &dev_in);
  twin_of(g, TWIN_DEVICE, &dev_out);
  twin_of(g, TWIN_DEVICE, &dev_place);
  int s;
  if (lut)
    s = lh_apply_lut_chroma(cpu, &g->frame, &want.frame, lut, o->matrix, o->chroma);
  else
    s = lh_equalize(cpu, &g->frame, &want.frame, o);
  CHECK(s == 0, "%s: CPU: %s", what, lh_last_error());

  Twin *outs[5] = {&host, &pin_out, &pin_place, &dev_out, &dev_place};
  const LhFrame *ins[5] = {&g->frame, &pin_in.frame, &pin_place.frame, &dev_in.frame,
                           &dev_place.frame};
  const char *names[5] = {"host frames", "page-locked host frames", "page-locked, in place",
                          "device frames", "device, in place"};
  for (int k = 0; k < 5; k++) {
    const LhFrame *in = ins[k];
    if (lut)
      s = lh_apply_lut_chroma(gpu, in, &outs[k]->frame, lut, o->matrix, o->chroma);
    else
      s = lh_equalize(gpu, in, &outs[k]->frame, o);
    CHECK(s == 0, "%s, %s: %s", what, names[k], lh_last_error());
    uint8_t *bytes = twin_bytes(outs[k]);
    size_t at = first_difference(bytes, want.allocation, want.size);
    CHECK(at == want.size, "%s, %s: byte %zu is %u, the CPU's %u", what, names[k], at,
          at < want.size ? bytes[at] : 0, at < want.size ? want.allocation[at] : 0);
    free(bytes);
  }
  twin_free(&want);
  twin_free(&host);
  twin_free(&pin_in);
  twin_free(&pin_out);
  twin_free(&pin_place);
  twin_free(&dev_in);
  twin_free(&dev_out);
  twin_free(&dev_place);
}

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

typedef struct {
  int width, height;
  size_t extra_stride, offset;
} Shape;

/* 256 wide and no padding: every format's rows start 16-byte aligned. */
static const Shape shapes[] = {
    {1, 1, 0, 0},    {7, 5, 3, 1},  {256, 36, 0, 0},  {33, 17, 5, 3},
    {120, 2, 16, 0}, {3, 90, 0, 2}, {640, 360, 0, 0}, {641, 359, 7, 1},
};

static void test_equalize(void)
{
  static const struct {
    LhEqualizeMode mode;
    int tx, ty;
    double clip;
  } modes[] = {
      {LH_EQUALIZE_GLOBAL, 0, 0, 0},   {LH_EQUALIZE_CLAHE, 8, 8, 40.0},
      {LH_EQUALIZE_CLAHE, 3, 2, 2.0},  {LH_EQUALIZE_CLAHE, 1, 1, 0.0},
      {LH_EQUALIZE_CLAHE, 16, 9, 0.5},
  };
  static const GenDistribution dists[] = {GEN_PHOTO,      GEN_UNIFORM,     GEN_CONSTANT,
                                          GEN_MOSTLY_ONE, GEN_NARROW_BAND, GEN_SAME_BANK};
  int seed = 1;
  for (size_t f = 0; f < sizeof all_formats / sizeof *all_formats; f++)
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++)
      for (size_t m = 0; m < sizeof modes / sizeof *modes + 1; m++) {
        LhFormat format = all_formats[f];
        const Shape *sh = &shapes[s];
        const bool variable_depth = format == LH_FORMAT_GRAY16 || format == LH_FORMAT_GRAY16_BE ||
                                    format == LH_FORMAT_RGB16 || format == LH_FORMAT_RGBA16 ||
                                    format == LH_FORMAT_BGRA16;
        int depth = variable_depth ? (int[]){16, 12, 10, 9}[(s + m) % 4] : 0;
        /* samples at addresses of their own size, as lh_frame_init asks */
        const size_t sample = (size_t)gen_sample_bytes(format);
        size_t offset = sh->offset / sample * sample;
        size_t extra = sh->extra_stride;
        if (gen_chroma_planes(format) == 1 && sh->width % 2)
          extra += 4;
        GenDistribution d = dists[(f + s + m) % (sizeof dists / sizeof *dists)];
        GenFrame g;
        if (gen_frame(&g, format, sh->width, sh->height, depth, extra, offset, d,
                      (uint64_t)seed++) < 0) {
          CHECK(0, "gen_frame %s", lh_format_name(format));
          continue;
        }
        LhEqualizeOptions o;
        lh_equalize_options_init(&o);
        o.matrix = (LhMatrix)(seed % 3);
        o.range = seed % 4 == 0 ? LH_RANGE_LIMITED : LH_RANGE_FULL;
        uint16_t *lut = NULL;
        char what[200];
        if (m == sizeof modes / sizeof *modes) {
          /* a LUT of the caller's: reversed */
          size_t bins = (size_t)1 << ref_depth(&g.frame);
          lut = malloc(bins * sizeof *lut);
          for (size_t v = 0; v < bins; v++)
            lut[v] = (uint16_t)(bins - 1 - v);
          snprintf(what, sizeof what, "%s %dx%d depth %d %s LUT", lh_format_name(format), sh->width,
                   sh->height, depth, gen_distribution_names[d]);
        } else {
          o.mode = modes[m].mode;
          o.tiles_x = modes[m].tx;
          o.tiles_y = modes[m].ty;
          o.clip_limit = modes[m].clip;
          /* every Exif orientation in turn: the grid is the picture's as shown */
          o.orientation = o.mode == LH_EQUALIZE_CLAHE ? (int)((f + s + m) % 9) : 0;
          snprintf(what, sizeof what,
                   "%s %dx%d depth %d %s %s %dx%d clip %g range %d orientation %d",
                   lh_format_name(format), sh->width, sh->height, depth, gen_distribution_names[d],
                   o.mode ? "clahe" : "global", o.tiles_x, o.tiles_y, o.clip_limit, o.range,
                   o.orientation);
        }
        compare_equalize(&g, &o, lut, what);
        free(lut);
        gen_free(&g);
      }
}

/* v210: rows of whole groups and every partial last group (width % 6 = 1 ..
 * 5), odd heights, rows that start 16-byte aligned (the kernels' 16-byte
 * path) and rows that start 4, 8 or 12 bytes past (their byte path), every
 * distribution, global, CLAHE and a caller's LUT; then overlays whose panel
 * starts and ends inside groups, or runs past the frame. */
static void test_v210(void)
{
  static const Shape v210_shapes[] = {
      {2, 3, 0, 0},    {6, 1, 0, 0},    {8, 7, 4, 4},   {9, 5, 0, 8},    {10, 2, 12, 12},
      {11, 9, 3, 0},   {12, 4, 16, 4},  {13, 13, 0, 0}, {96, 31, 0, 0},  {101, 17, 20, 8},
      {1920, 9, 0, 0}, {1923, 6, 4, 0}, {1, 37, 0, 4},  {641, 359, 0, 0}};
  static const struct {
    LhEqualizeMode mode;
    int tx, ty;
    double clip;
  } modes[] = {
      {LH_EQUALIZE_GLOBAL, 0, 0, 0},  {LH_EQUALIZE_CLAHE, 8, 8, 40.0},
      {LH_EQUALIZE_CLAHE, 3, 2, 2.0}, {LH_EQUALIZE_CLAHE, 1, 1, 0.0},
      {LH_EQUALIZE_CLAHE, 5, 7, 0.5},
  };
  const size_t n_modes = sizeof modes / sizeof *modes;
  uint64_t seed = 9000;
  for (size_t s = 0; s < sizeof v210_shapes / sizeof *v210_shapes; s++)
    for (size_t m = 0; m < n_modes + 1; m++) {
      const Shape *sh = &v210_shapes[s];
      GenDistribution d = (GenDistribution)((s + m) % GEN_COUNT);
      GenFrame g;
      if (gen_frame(&g, LH_FORMAT_V210, sh->width, sh->height, 0, sh->extra_stride, sh->offset, d,
                    seed++) < 0) {
        CHECK(0, "gen_frame v210");
        continue;
      }
      LhEqualizeOptions o;
      lh_equalize_options_init(&o);
      o.range = s % 3 == 0 ? LH_RANGE_LIMITED : LH_RANGE_FULL;
      uint16_t *lut = NULL;
      char what[200];
      if (m == n_modes) {
        /* a caller's LUT: random levels of 10 bits */
        lut = malloc(1024 * sizeof *lut);
        uint64_t rng = seed;
        for (size_t v = 0; v < 1024; v++)
          lut[v] = (uint16_t)(gen_next(&rng) % 1024);
        snprintf(what, sizeof what, "v210 %dx%d stride +%zu offset %zu %s LUT", sh->width,
                 sh->height, sh->extra_stride, sh->offset, gen_distribution_names[d]);
      } else {
        o.mode = modes[m].mode;
        o.tiles_x = modes[m].tx;
        o.tiles_y = modes[m].ty;
        o.clip_limit = modes[m].clip;
        o.orientation = o.mode == LH_EQUALIZE_CLAHE ? (int)((s + m) % 9) : 0;
        snprintf(what, sizeof what,
                 "v210 %dx%d stride +%zu offset %zu %s %s %dx%d clip %g range %d orientation %d",
                 sh->width, sh->height, sh->extra_stride, sh->offset, gen_distribution_names[d],
                 o.mode ? "clahe" : "global", o.tiles_x, o.tiles_y, o.clip_limit, o.range,
                 o.orientation);
      }
      compare_equalize(&g, &o, lut, what);
      free(lut);
      gen_free(&g);
    }

  static const struct {
    int width, height;
    size_t extra, offset;
    LhRect rect;
  } overlays[] = {
      {97, 61, 0, 0, {7, 3, 50, 40}},     {97, 61, 4, 4, {5, 0, 13, 20}},
      {320, 181, 0, 0, {0, 0, 320, 181}}, {101, 40, 8, 12, {88, 31, 40, 30}},
      {1921, 45, 0, 0, {1, 1, 1919, 43}}, {13, 9, 0, 0, {-2, -1, 20, 20}},
      {200, 64, 12, 8, {0, 0, 0, 0}},
  };
  for (size_t k = 0; k < sizeof overlays / sizeof *overlays; k++) {
    GenFrame g;
    if (gen_frame(&g, LH_FORMAT_V210, overlays[k].width, overlays[k].height, 0, overlays[k].extra,
                  overlays[k].offset, GEN_PHOTO, seed++) < 0) {
      CHECK(0, "gen_frame v210");
      continue;
    }
    LhOptions ao;
    lh_options_init(&ao);
    ao.range = k % 2 ? LH_RANGE_LIMITED : LH_RANGE_FULL;
    lh_options_set_percentiles(&ao, "1,50,99");
    LhStats stats;
    lh_stats_init(&stats);
    CHECK(lh_analyze(cpu, &g.frame, &ao, &stats) == 0, "%s", lh_last_error());
    LhOverlayOptions oo;
    lh_overlay_options_init(&oo);
    oo.range = ao.range;
    oo.scale = k % 2 ? LH_OVERLAY_LINEAR : LH_OVERLAY_LOG;
    oo.rect = overlays[k].rect;
    OverlayTwins t;
    overlay_twins(&g, &stats, &oo, &t);
    const Twin *want = &t.want;
    CHECK(memcmp(want->allocation, g.allocation, want->size) != 0,
          "overlay v210 case %zu: the CPU drew nothing", k);
    for (int i = 0; i < 3; i++) {
      size_t at = first_difference(t.got[i], want->allocation, want->size);
      CHECK(at == want->size,
            "overlay v210 case %zu %dx%d rect %d,%d %dx%d, %s: byte %zu is %u, the CPU's %u", k,
            overlays[k].width, overlays[k].height, oo.rect.x, oo.rect.y, oo.rect.width,
            oo.rect.height, overlay_twin_names[i], at, at < want->size ? t.got[i][at] : 0,
            at < want->size ? want->allocation[at] : 0);
    }
    overlay_twins_free(&t);
    lh_stats_clear(&stats);
    gen_free(&g);
  }
}

/* LH_CHROMA_SCALE on every 8-bit planar and semi-planar YUV format: odd
 * sizes (partial footprints), padded and misaligned rows, black pixels, each
 * equalization and LUTs, in every memory and placement compare_equalize
 * takes; a 4K I420 frame (the tool's JPEGs) both ways. */
static void test_chroma_scale(void)
{
  static const LhFormat formats[] = {
      LH_FORMAT_I420, LH_FORMAT_YV12, LH_FORMAT_Y42B, LH_FORMAT_Y444, LH_FORMAT_Y41B,
      LH_FORMAT_NV12, LH_FORMAT_NV21, LH_FORMAT_NV16, LH_FORMAT_NV24,
  };
  static const Shape chroma_shapes[] = {
      {1, 1, 0, 0}, {7, 5, 3, 1},  {256, 36, 0, 0}, {33, 17, 5, 3},   {6, 1, 0, 0},
      {1, 6, 1, 0}, {3, 90, 0, 2}, {130, 3, 16, 0}, {641, 359, 7, 1},
  };
  static const struct {
    LhEqualizeMode mode;
    int tx, ty;
    double clip;
  } modes[] = {
      {LH_EQUALIZE_GLOBAL, 0, 0, 0},
      {LH_EQUALIZE_CLAHE, 8, 8, 40.0},
      {LH_EQUALIZE_CLAHE, 3, 2, 2.0},
      {LH_EQUALIZE_CLAHE, 1, 1, 0.0},
  };
  static const GenDistribution dists[] = {GEN_PHOTO,      GEN_UNIFORM,     GEN_CONSTANT,
                                          GEN_MOSTLY_ONE, GEN_NARROW_BAND, GEN_TWO_VALUES};
  const size_t n_modes = sizeof modes / sizeof *modes;
  int seed = 9000;
  for (size_t f = 0; f < sizeof formats / sizeof *formats; f++)
    for (size_t s = 0; s < sizeof chroma_shapes / sizeof *chroma_shapes; s++)
      for (size_t m = 0; m < n_modes + 1; m++) {
        const LhFormat format = formats[f];
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
        const bool black = (f + s + m) % 3 == 0;
        for (int y = 0; black && y < g.frame.height; y++)
          for (int x = 0; x < g.frame.width; x++)
            if ((x + 2 * y) % (3 + (int)m) == 0)
              ((uint8_t *)g.frame.planes[0])[(size_t)y * g.frame.strides[0] + (size_t)x] = 0;
        LhEqualizeOptions o;
        lh_equalize_options_init(&o);
        o.chroma = LH_CHROMA_SCALE;
        o.range = seed % 4 == 0 ? LH_RANGE_LIMITED : LH_RANGE_FULL;
        uint16_t lut[256];
        char what[200];
        if (m == n_modes) {
          uint64_t rng = (uint64_t)seed * 0x9E3779B97F4A7C15ULL + 5;
          for (int v = 0; v < 256; v++)
            lut[v] = (uint16_t)(gen_next(&rng) & 255);
        } else {
          o.mode = modes[m].mode;
          o.tiles_x = modes[m].tx;
          o.tiles_y = modes[m].ty;
          o.clip_limit = modes[m].clip;
          o.orientation = o.mode == LH_EQUALIZE_CLAHE ? (int)((f + s + m) % 9) : 0;
        }
        snprintf(what, sizeof what,
                 "chroma scale %s %dx%d %s%s %s %dx%d clip %g range %d orientation %d",
                 lh_format_name(format), sh->width, sh->height, gen_distribution_names[d],
                 black ? " with black pixels" : "",
                 m == n_modes ? "random LUT"
                 : o.mode     ? "clahe"
                              : "global",
                 o.tiles_x, o.tiles_y, o.clip_limit, o.range, o.orientation);
        compare_equalize(&g, &o, m == n_modes ? lut : NULL, what);
        gen_free(&g);
      }
  GenFrame g;
  gen_frame(&g, LH_FORMAT_I420, 3840, 2160, 0, 0, 0, GEN_PHOTO, 4100);
  for (int mode = 0; mode < 2; mode++) {
    LhEqualizeOptions o;
    lh_equalize_options_init(&o);
    o.chroma = LH_CHROMA_SCALE;
    o.mode = mode ? LH_EQUALIZE_CLAHE : LH_EQUALIZE_GLOBAL;
    compare_equalize(&g, &o, NULL, mode ? "chroma scale 4K I420 clahe" : "chroma scale 4K I420");
  }
  gen_free(&g);
}

/* A 4K frame of each 8-bit family, global and CLAHE 8x8. */
static void test_4k(void)
{
  static const LhFormat formats[] = {LH_FORMAT_GRAY8, LH_FORMAT_RGBA, LH_FORMAT_NV12};
  for (size_t f = 0; f < 3; f++) {
    GenFrame g;
    gen_frame(&g, formats[f], 3840, 2160, 0, 0, 0, GEN_PHOTO, 4000 + f);
    for (int mode = 0; mode < 2; mode++) {
      LhEqualizeOptions o;
      lh_equalize_options_init(&o);
      o.mode = mode ? LH_EQUALIZE_CLAHE : LH_EQUALIZE_GLOBAL;
      char what[64];
      snprintf(what, sizeof what, "4K %s %s", lh_format_name(formats[f]),
               mode ? "clahe" : "global");
      compare_equalize(&g, &o, NULL, what);
    }
    gen_free(&g);
  }
}

/* A sequence with moving content and two cuts: every output and every
 * window count the same on both backends, global and CLAHE. */
static void test_temporal(void)
{
  for (int mode = 0; mode < 4; mode++) {
    /* modes 2, 3: I420 with its chroma scaled, the LUTs smoothed first */
    const bool scaled = mode >= 2;
    LhTemporal *tc = NULL, *tg = NULL;
    lh_temporal_new(6, 0.3, &tc);
    lh_temporal_new(6, 0.3, &tg);
    LhEqualizeOptions oc, og;
    lh_equalize_options_init(&oc);
    oc.mode = mode % 2 ? LH_EQUALIZE_CLAHE : LH_EQUALIZE_GLOBAL;
    oc.chroma = scaled ? LH_CHROMA_SCALE : LH_CHROMA_KEEP;
    oc.tiles_x = 5;
    oc.tiles_y = 4;
    og = oc;
    oc.temporal = tc;
    og.temporal = tg;
    for (int t = 0; t < 32; t++) {
      GenDistribution d = t < 10 ? GEN_PHOTO : t < 20 ? GEN_NARROW_BAND : GEN_UNIFORM;
      if (t == 30) { /* another range (and clip limit) starts both windows afresh */
        oc.range = og.range = LH_RANGE_LIMITED;
        oc.clip_limit = og.clip_limit = 3.0;
      }
      GenFrame g;
      gen_frame(&g, scaled ? LH_FORMAT_I420 : LH_FORMAT_GRAY8, 200, 120, 0, 0, 0, d,
                100 + (uint64_t)t);
      Twin want, dev_in, dev_out;
      twin_of(&g, TWIN_HOST, &want);
      twin_of(&g, TWIN_DEVICE, &dev_in);
      twin_of(&g, TWIN_DEVICE, &dev_out);
      CHECK(lh_equalize(cpu, &g.frame, &want.frame, &oc) == 0, "%s", lh_last_error());
      CHECK(lh_equalize(gpu, &dev_in.frame, &dev_out.frame, &og) == 0, "%s", lh_last_error());
      uint8_t *bytes = twin_bytes(&dev_out);
      CHECK(memcmp(bytes, want.allocation, want.size) == 0, "temporal %s%s frame %d",
            mode % 2 ? "clahe" : "global", scaled ? " (I420, chroma scaled)" : "", t);
      int fc, fg;
      uint64_t cc, cg;
      lh_temporal_query(tc, &fc, &cc);
      CHECK(lh_temporal_query(tg, &fg, &cg) == 0, "%s", lh_last_error());
      CHECK(fc == fg && cc == cg, "temporal %s frame %d: CPU %d frames %llu cuts, GPU %d %llu",
            mode % 2 ? "clahe" : "global", t, fc, (unsigned long long)cc, fg,
            (unsigned long long)cg);
      /* cuts at frames 10 and 20; the count restarts at the reset after 14 */
      if (t == 13 || t == 29)
        CHECK(cg == 1, "frame %d: one cut, %llu found", t, (unsigned long long)cg);
      if (t == 30)
        CHECK(fg == 1, "frame 30, another range: %d frames in the GPU's window", fg);
      free(bytes);
      twin_free(&want);
      twin_free(&dev_in);
      twin_free(&dev_out);
      gen_free(&g);
      if (t == 14) {
        lh_temporal_reset(tc);
        lh_temporal_reset(tg);
      }
    }
    lh_temporal_free(tc);
    lh_temporal_free(tg);
  }
}

/* Whether a format's samples are 16-bit words that may hold more than its
 * depth (a malformed frame): those the overlay blends as 2^depth - 1. */
static bool words_may_pass_depth(LhFormat format)
{
  if (format == LH_FORMAT_GRAY16 || format == LH_FORMAT_GRAY16_BE || format == LH_FORMAT_RGB16 ||
      format == LH_FORMAT_RGBA16)
    return true; /* frames of fewer bits, as the test draws them (12) */
  /* not P010 and P012, whose bits are the word's top ones, nor 16-bit */
  return gen_sample_bytes(format) == 2 && !gen_is_packed10(format) && format != LH_FORMAT_V210 &&
         format != LH_FORMAT_P010 && format != LH_FORMAT_P012 && gen_format_depth(format) < 16;
}

/* Variants: 0 full range, 1 limited and linear, 2 an odd size and a panel
 * partly off the frame, 3 (16-bit words) samples past the depth.  Frames
 * with alpha have pixels transparent, opaque, half and anything between
 * (gen_alpha_mix), which the panel is composited over (lhi_blend_over). */
static void test_overlays(void)
{
  int seed = 0;
  for (size_t f = 0; f < sizeof all_formats / sizeof *all_formats; f++)
    for (int variant = 0; variant < 4; variant++) {
      LhFormat format = all_formats[f];
      if (variant == 3 && !words_may_pass_depth(format))
        continue;
      int w = variant == 2 ? 97 : 320, h = variant == 2 ? 61 : 181;
      size_t extra = gen_chroma_planes(format) == 1 && w % 2 ? 4 : 0;
      GenFrame g;
      gen_frame(&g, format, w, h,
                format == LH_FORMAT_GRAY16 || format == LH_FORMAT_GRAY16_BE ||
                        format == LH_FORMAT_RGB16 || format == LH_FORMAT_RGBA16
                    ? 12
                    : 0,
                extra + (size_t)variant, 0, GEN_PHOTO, 500 + (uint64_t)seed++);
      gen_alpha_mix(&g, (uint64_t)seed);
      if (variant == 3)
        gen_words_past_depth(&g, g.frame.bit_depth ? g.frame.bit_depth : gen_format_depth(format),
                             (uint64_t)seed);
      LhOptions ao;
      lh_options_init(&ao);
      ao.range = variant == 1 ? LH_RANGE_LIMITED : LH_RANGE_FULL;
      lh_options_set_percentiles(&ao, "1,50,99");
      LhStats stats;
      lh_stats_init(&stats);
      CHECK(lh_analyze(cpu, &g.frame, &ao, &stats) == 0, "%s", lh_last_error());
      LhOverlayOptions oo;
      lh_overlay_options_init(&oo);
      oo.range = ao.range;
      oo.scale = variant == 1 ? LH_OVERLAY_LINEAR : LH_OVERLAY_LOG;
      if (variant == 2)
        oo.rect = (LhRect){-7, 21, 60, 50};
      /* every orientation on every layout, the subsampled ones among them */
      oo.orientation = (int)((f * 3 + (size_t)variant) % 9);
      OverlayTwins t;
      overlay_twins(&g, &stats, &oo, &t);
      for (int i = 0; i < 3; i++)
        CHECK(memcmp(t.got[i], t.want.allocation, t.want.size) == 0,
              "overlay %s variant %d orientation %d, %s", lh_format_name(format), variant,
              oo.orientation, overlay_twin_names[i]);
      overlay_twins_free(&t);
      lh_stats_clear(&stats);
      gen_free(&g);
    }
}

/* On the context's own stream a rewritten device frame is complete when the
 * call returns (lumahist.h): read back at once on another stream, with no
 * device-wide synchronization, a 4K CLAHE frame and an overlay are whole.
 * (Without the wait, a GStreamer cudadownload after the element copied
 * frames half written.) */
static void test_done_on_return(void)
{
  cudaStream_t reader;
  CHECK(cudaStreamCreateWithFlags(&reader, cudaStreamNonBlocking) == cudaSuccess,
        "cudaStreamCreateWithFlags");
  for (int round = 0; round < 4; round++) {
    GenFrame g;
    gen_frame(&g, LH_FORMAT_NV12, 3840, 2160, 0, 0, 0, GEN_PHOTO, 7000 + (uint64_t)round);
    Twin want, dev;
    twin_of(&g, TWIN_HOST, &want);
    twin_of(&g, TWIN_DEVICE, &dev);
    int s;
    if (round % 2 == 0) {
      LhEqualizeOptions o;
      lh_equalize_options_init(&o);
      o.mode = LH_EQUALIZE_CLAHE;
      CHECK(lh_equalize(cpu, &want.frame, &want.frame, &o) == 0, "%s", lh_last_error());
      s = lh_equalize(gpu, &dev.frame, &dev.frame, &o);
    } else {
      LhStats stats;
      LhOptions ao;
      LhOverlayOptions oo;
      lh_stats_init(&stats);
      lh_options_init(&ao);
      lh_overlay_options_init(&oo);
      oo.rect = (LhRect){0, 0, 3840, 2160};
      CHECK(lh_analyze(cpu, &g.frame, &ao, &stats) == 0, "%s", lh_last_error());
      CHECK(lh_overlay(cpu, &want.frame, &stats, &oo) == 0, "%s", lh_last_error());
      s = lh_overlay(gpu, &dev.frame, &stats, &oo);
      lh_stats_clear(&stats);
    }
    CHECK(s == 0, "round %d: %s", round, lh_last_error());
    uint8_t *bytes = malloc(dev.size);
    CHECK(cudaMemcpyAsync(bytes, dev.allocation, dev.size, cudaMemcpyDeviceToHost, reader) ==
                  cudaSuccess &&
              cudaStreamSynchronize(reader) == cudaSuccess,
          "copy back on another stream");
    size_t at = first_difference(bytes, want.allocation, want.size);
    CHECK(at == want.size, "round %d (%s), read at once: byte %zu is %u, the CPU's %u", round,
          round % 2 ? "overlay" : "clahe", at, at < want.size ? bytes[at] : 0,
          at < want.size ? want.allocation[at] : 0);
    free(bytes);
    twin_free(&want);
    twin_free(&dev);
    gen_free(&g);
  }
  cudaStreamDestroy(reader);
}

int main(void)
{
  int status = lh_context_new(LH_BACKEND_CUDA, &gpu);
  if (status == LH_ERROR_NO_DEVICE) {
    printf("SKIP: no usable CUDA device: %s\n", lh_last_error());
    return 77;
  }
  if (status < 0 || lh_context_new(LH_BACKEND_CPU, &cpu) < 0) {
    fprintf(stderr, "contexts: %s\n", lh_last_error());
    return 1;
  }
  test_equalize();
  test_v210();
  test_4k();
  test_chroma_scale();
  test_temporal();
  test_overlays();
  test_done_on_return();
  lh_context_free(gpu);
  lh_context_free(cpu);
  if (failures) {
    fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  printf("the CUDA backend equalizes and draws as the CPU does\n");
  return 0;
}
