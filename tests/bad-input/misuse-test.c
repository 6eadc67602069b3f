/* misuse-test.c: every public entry point given what a careless caller gives
 * it (NULL pointers, unknown enums, short strides, sizes that overflow,
 * percentiles outside [0, 100], odd 4:2:0 sizes, cleared and re-cleared
 * results) must answer with a status and a message, never a crash; buffers
 * are exactly as large as the API says, so that ASan or valgrind see any read
 * or write past them.  With --no-device (run with CUDA_VISIBLE_DEVICES=""),
 * checks what asking for the CUDA backend without a device gives. */
#include <dlfcn.h>
#include <limits.h>
#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../unit/test-check.h"
#include "../unit/test-formats.h"
#include "lumahist.h"

/* A call that must fail with status and say something about it. */
#define EXPECT(call, status, what)                                                                 \
  do {                                                                                             \
    lh_set_error(0, "%s", "");                                                                     \
    int got_ = (call);                                                                             \
    CHECK(got_ == (status), "%s: status %d (%s), expected %s", what, got_, lh_status_name(got_),   \
          lh_status_name(status));                                                                 \
    if ((status) < 0)                                                                              \
      CHECK(lh_last_error()[0] != '\0', "%s: no message", what);                                   \
  } while (0)

static const LhFormat all_formats[] = {
    LH_FORMAT_GRAY8, LH_FORMAT_GRAY16, LH_FORMAT_RGB,  LH_FORMAT_BGR,   LH_FORMAT_RGBA,
    LH_FORMAT_BGRA,  LH_FORMAT_RGBX,   LH_FORMAT_BGRX, LH_FORMAT_RGB16, LH_FORMAT_RGBA16,
    LH_FORMAT_I420,  LH_FORMAT_NV12,   LH_FORMAT_P010,
};
#define N_FORMATS (sizeof all_formats / sizeof all_formats[0])

/* A frame over a buffer of exactly lh_frame_buffer_size() bytes, filled with a
 * pattern (16-bit samples kept to 10 significant bits at the top for P010). */
static uint8_t *exact_frame(LhFrame *frame, LhFormat format, int width, int height, size_t stride)
{
  size_t size = lh_frame_buffer_size(format, width, height, stride);
  uint8_t *data = malloc(size ? size : 1);
  for (size_t i = 0; i < size; i++)
    data[i] = (uint8_t)(i * 29 + 7);
  int status = lh_frame_init(frame, format, LH_MEMORY_HOST, width, height, data, stride);
  CHECK(status == LH_OK, "lh_frame_init %s %dx%d stride %zu", lh_format_name(format), width, height,
        stride);
  return data;
}

/* ------------------------------------------------------------------------ */

static void test_names(void)
{
  for (int s = 1; s >= -9; s--)
    CHECK(lh_status_name(s) != NULL && lh_status_name(s)[0] != '\0', "status %d has no name", s);
  CHECK(strcmp(lh_status_name(12345), "unknown") == 0, "an unknown status");
  CHECK(lh_format_name((LhFormat)-1) == NULL && lh_format_name(LH_FORMAT_COUNT) == NULL,
        "names of formats out of range");
  CHECK(lh_matrix_name((LhMatrix)3) == NULL && lh_matrix_name((LhMatrix)-1) == NULL, "matrix");
  CHECK(lh_range_name((LhRange)2) == NULL && lh_backend_name((LhBackend)3) == NULL, "range");
  LhMatrix m = LH_MATRIX_BT709;
  LhRange r = LH_RANGE_LIMITED;
  LhBackend b = LH_BACKEND_CUDA;
  EXPECT(lh_matrix_from_name(NULL, &m), LH_ERROR_INVALID_ARGUMENT, "matrix name NULL");
  EXPECT(lh_matrix_from_name("bt601", NULL), LH_ERROR_INVALID_ARGUMENT, "matrix out NULL");
  EXPECT(lh_matrix_from_name("", &m), LH_ERROR_INVALID_ARGUMENT, "matrix \"\"");
  EXPECT(lh_matrix_from_name("BT601 ", &m), LH_ERROR_INVALID_ARGUMENT, "matrix \"BT601 \"");
  EXPECT(lh_range_from_name(NULL, &r), LH_ERROR_INVALID_ARGUMENT, "range name NULL");
  EXPECT(lh_range_from_name("full", NULL), LH_ERROR_INVALID_ARGUMENT, "range out NULL");
  EXPECT(lh_backend_from_name(NULL, &b), LH_ERROR_INVALID_ARGUMENT, "backend name NULL");
  EXPECT(lh_backend_from_name("cpu", NULL), LH_ERROR_INVALID_ARGUMENT, "backend out NULL");
  CHECK(m == LH_MATRIX_BT709 && r == LH_RANGE_LIMITED && b == LH_BACKEND_CUDA,
        "a failed lookup changed its output");
  /* In any case, as lh_format_from_name() reads formats ("BT709" was
   * refused where "YUY2" and "yuy2" were both taken). */
  CHECK(lh_matrix_from_name("BT709", &m) == LH_OK && m == LH_MATRIX_BT709 &&
            lh_range_from_name("Limited", &r) == LH_OK && r == LH_RANGE_LIMITED &&
            lh_backend_from_name("CPU", &b) == LH_OK && b == LH_BACKEND_CPU,
        "names in capitals: %s", lh_last_error());
  CHECK(lh_version() != NULL && lh_version()[0] != '\0', "no version");
}

static void test_contexts(void)
{
  EXPECT(lh_context_new(LH_BACKEND_CPU, NULL), LH_ERROR_INVALID_ARGUMENT, "context out NULL");
  for (int backend = -1; backend <= 7; backend += 8) {
    LhContext *c = (LhContext *)&failures; /* not NULL: it must be cleared */
    EXPECT(lh_context_new((LhBackend)backend, &c), LH_ERROR_INVALID_ARGUMENT, "unknown backend");
    CHECK(c == NULL, "a failed lh_context_new left *context set");
  }
  lh_context_free(NULL);
  CHECK(lh_context_note(NULL) != NULL, "note of NULL");
  EXPECT(lh_context_set_stream(NULL, NULL), LH_ERROR_INVALID_ARGUMENT, "set_stream NULL");
  char byte = 0;
  EXPECT(lh_host_register(NULL, &byte, 1), LH_ERROR_INVALID_ARGUMENT, "host_register NULL context");
  EXPECT(lh_host_unregister(NULL, &byte), LH_ERROR_INVALID_ARGUMENT, "host_unregister NULL");
  void *none = &byte;
  EXPECT(lh_host_alloc(NULL, 64, &none), LH_ERROR_INVALID_ARGUMENT, "host_alloc NULL context");
  lh_host_free(NULL);
  LhContext *cpu_context = NULL;
  if (lh_context_new(LH_BACKEND_CPU, &cpu_context) == LH_OK) {
    EXPECT(lh_host_register(cpu_context, NULL, 1), LH_ERROR_INVALID_ARGUMENT, "register NULL");
    EXPECT(lh_host_register(cpu_context, &byte, 0), LH_ERROR_INVALID_ARGUMENT, "register 0 bytes");
    EXPECT(lh_host_register(cpu_context, &byte, 1), LH_ERROR_UNSUPPORTED, "register on the CPU");
    void *memory = &byte;
    EXPECT(lh_host_alloc(cpu_context, 64, &memory), LH_ERROR_UNSUPPORTED, "host_alloc on the CPU");
    CHECK(memory == NULL, "a refused lh_host_alloc left *memory set");
    EXPECT(lh_host_alloc(cpu_context, 0, &memory), LH_ERROR_INVALID_ARGUMENT, "host_alloc 0 bytes");
    EXPECT(lh_host_alloc(cpu_context, 64, NULL), LH_ERROR_INVALID_ARGUMENT, "host_alloc into NULL");
    LhDeviceTime time;
    memset(&time, 0xff, sizeof time);
    EXPECT(lh_context_device_time(cpu_context, &time), LH_ERROR_UNSUPPORTED,
           "device time on the CPU");
    CHECK(time.calls == 0 && time.transfer_s == 0 && time.compute_s == 0,
          "a refused lh_context_device_time left the times unset");
    EXPECT(lh_context_device_time(cpu_context, NULL), LH_ERROR_INVALID_ARGUMENT,
           "device time into NULL");
    lh_context_free(cpu_context);
  }
  LhDeviceTime time;
  EXPECT(lh_context_device_time(NULL, &time), LH_ERROR_INVALID_ARGUMENT,
         "device time of a NULL context");
  EXPECT(lh_context_device_time(NULL, NULL), LH_ERROR_INVALID_ARGUMENT, "device time all NULL");

  LhContext *c = NULL;
  int status = lh_context_new(LH_BACKEND_CUDA, &c);
  if (status == LH_OK) {
    CHECK(lh_context_backend(c) == LH_BACKEND_CUDA, "CUDA context on another backend");
    EXPECT(lh_context_device_time(c, NULL), LH_ERROR_INVALID_ARGUMENT,
           "CUDA device time into NULL");
    EXPECT(lh_context_device_time(c, &time), LH_OK, "device time of a fresh CUDA context");
    CHECK(time.calls == 0 && time.transfer_s == 0 && time.compute_s == 0,
          "a fresh CUDA context has device time");
    lh_context_free(c);
  } else {
    CHECK(status == LH_ERROR_NO_DEVICE && lh_last_error()[0] != '\0' && c == NULL,
          "CUDA without a device: status %s", lh_status_name(status));
  }
  EXPECT(lh_context_new(LH_BACKEND_AUTO, &c), LH_OK, "auto backend");
  if (c && lh_context_backend(c) == LH_BACKEND_CPU)
    CHECK(lh_context_note(c)[0] != '\0', "auto chose the CPU without saying why");
  lh_context_free(c);
}

/* 16-bit chroma planes need no alignment (lh_format_alignment): the
 * library copies them a byte at a time.  lh_frame_init() lays a padded Y
 * stride of 4k + 2 bytes' chroma rows an odd number of bytes apart, and a
 * chroma plane may lie at an odd address: equalize copies either exactly. */
static void test_16_bit_chroma(LhContext *ctx)
{
  const LhFormat formats[] = {LH_FORMAT_I420_10LE, LH_FORMAT_I420_12LE, LH_FORMAT_I422_10LE};
  for (size_t k = 0; k < sizeof formats / sizeof formats[0]; k++) {
    const char *name = lh_format_name(formats[k]);
    const size_t size = lh_frame_buffer_size(formats[k], 5, 3, 14);
    uint8_t *bytes = malloc(size + 1), *copy = calloc(size + 1, 1);
    for (size_t i = 0; i < size + 1; i++)
      bytes[i] = (uint8_t)(i * 37 % 251) & (i % 2 ? 0x03 : 0xff); /* 10-bit words */
    LhFrame in, out;
    EXPECT(lh_frame_init(&in, formats[k], LH_MEMORY_HOST, 5, 3, bytes, 14), LH_OK, name);
    CHECK(in.strides[1] == 7 && in.strides[2] == 7, "%s 5x3, Y stride 14: chroma strides %zu, %zu",
          name, in.strides[1], in.strides[2]);
    EXPECT(lh_frame_init(&out, formats[k], LH_MEMORY_HOST, 5, 3, copy, 14), LH_OK, name);
    /* The input's first chroma plane one byte on: at an odd address. */
    memmove((uint8_t *)in.planes[1] + 1, in.planes[1],
            (size_t)((uint8_t *)bytes + size - (uint8_t *)in.planes[1]));
    in.planes[1] = (uint8_t *)in.planes[1] + 1;
    in.planes[2] = (uint8_t *)in.planes[2] + 1;
    LhEqualizeOptions eo;
    lh_equalize_options_init(&eo);
    EXPECT(lh_equalize(ctx, &in, &out, &eo), LH_OK, name);
    size_t row_bytes;
    int rows;
    lh_format_plane_size(formats[k], 1, 5, 3, &row_bytes, &rows);
    bool same = true;
    for (int p = 1; p <= 2; p++)
      for (int y = 0; y < rows; y++)
        same =
            same && memcmp((uint8_t *)in.planes[p] + (size_t)y * in.strides[p],
                           (uint8_t *)out.planes[p] + (size_t)y * out.strides[p], row_bytes) == 0;
    CHECK(same, "%s: chroma at odd strides and an odd address not copied as it was", name);
    free(bytes);
    free(copy);
  }
}

static void test_frames(LhContext *ctx)
{
  uint8_t pixels[64] = {0};
  LhFrame f;
  EXPECT(lh_frame_init(NULL, LH_FORMAT_GRAY8, LH_MEMORY_HOST, 4, 4, pixels, 0),
         LH_ERROR_INVALID_ARGUMENT, "lh_frame_init NULL frame");
  EXPECT(lh_frame_init(&f, LH_FORMAT_GRAY8, LH_MEMORY_HOST, 4, 4, NULL, 0),
         LH_ERROR_INVALID_ARGUMENT, "lh_frame_init NULL data");
  int unknown[] = {-1, LH_FORMAT_COUNT, 1000, INT_MIN};
  for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
    EXPECT(lh_frame_init(&f, (LhFormat)unknown[i], LH_MEMORY_HOST, 4, 4, pixels, 0),
           LH_ERROR_INVALID_ARGUMENT, "lh_frame_init unknown format");
    CHECK(strstr(lh_last_error(), "format") != NULL, "format %d: message", unknown[i]);
    CHECK(lh_frame_buffer_size((LhFormat)unknown[i], 4, 4, 0) == 0, "size of format %d",
          unknown[i]);
  }
  EXPECT(lh_frame_init(&f, LH_FORMAT_GRAY8, (LhMemory)7, 4, 4, pixels, 0),
         LH_ERROR_INVALID_ARGUMENT, "unknown memory kind");
  int sizes[][2] = {{0, 4}, {4, 0}, {-1, 4}, {4, -3}, {INT_MIN, INT_MIN}};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    EXPECT(lh_frame_init(&f, LH_FORMAT_GRAY8, LH_MEMORY_HOST, sizes[i][0], sizes[i][1], pixels, 0),
           LH_ERROR_INVALID_ARGUMENT, "a size below 1");
    CHECK(lh_frame_buffer_size(LH_FORMAT_I420, sizes[i][0], sizes[i][1], 0) == 0,
          "buffer size of %dx%d", sizes[i][0], sizes[i][1]);
  }

  /* A stride one byte short of a row, in every format, at init and analysis. */
  LhOptions o;
  lh_options_init(&o);
  LhStats s;
  lh_stats_init(&s);
  for (size_t k = 0; k < N_FORMATS; k++) {
    LhFormat format = all_formats[k];
    size_t row = gen_row_bytes(format, 5);
    uint8_t *data = malloc(row * 8);
    memset(data, 0x40, row * 8);
    char what[64];
    snprintf(what, sizeof what, "%s stride %zu < row %zu", lh_format_name(format), row - 1, row);
    EXPECT(lh_frame_init(&f, format, LH_MEMORY_HOST, 5, 4, data, row - 1),
           LH_ERROR_INVALID_ARGUMENT, what);
    CHECK(strstr(lh_last_error(), "stride") != NULL, "%s: message", what);
    f = (LhFrame){.format = format,
                  .memory = LH_MEMORY_HOST,
                  .width = 5,
                  .height = 4,
                  .planes = {data},
                  .strides = {row - 1}};
    EXPECT(lh_analyze(ctx, &f, &o, &s), LH_ERROR_INVALID_ARGUMENT, what);
    f.strides[0] = 0; /* 0 is "packed" only for lh_frame_init */
    EXPECT(lh_analyze(ctx, &f, &o, &s), LH_ERROR_INVALID_ARGUMENT, "stride 0 in a frame");
    free(data);
  }

  /* A stride below a row has no buffer size: lh_frame_init() refuses it. */
  CHECK(lh_frame_buffer_size(LH_FORMAT_GRAY8, 4, 4, 2) == 0 &&
            lh_frame_buffer_size(LH_FORMAT_I420_10LE, 5, 3, 9) == 0,
        "buffer size of a stride below a row: %zu", lh_frame_buffer_size(LH_FORMAT_GRAY8, 4, 4, 2));
  test_16_bit_chroma(ctx);

  /* Sizes whose bytes do not fit in memory: refused, never computed modulo 2^64. */
  CHECK(lh_frame_buffer_size(LH_FORMAT_GRAY8, 16, 16, SIZE_MAX / 8) == 0,
        "buffer size that overflows: %zu",
        lh_frame_buffer_size(LH_FORMAT_GRAY8, 16, 16, SIZE_MAX / 8));
  CHECK(lh_frame_buffer_size(LH_FORMAT_NV12, 2, 4, SIZE_MAX / 5) == 0,
        "NV12 buffer size that overflows");
  f = (LhFrame){.format = LH_FORMAT_GRAY8,
                .memory = LH_MEMORY_HOST,
                .width = 4,
                .height = 4,
                .planes = {pixels},
                .strides = {SIZE_MAX / 2}};
  EXPECT(lh_analyze(ctx, &f, &o, &s), LH_ERROR_INVALID_ARGUMENT, "stride x height overflows");
  f.width = INT_MAX;
  f.height = INT_MAX;
  f.strides[0] = (size_t)INT_MAX * 8;
  EXPECT(lh_analyze(ctx, &f, &o, &s), LH_ERROR_TOO_LARGE, "INT_MAX x INT_MAX frame");

  /* Bit depths a format cannot have. */
  uint16_t wide[16] = {0};
  struct {
    LhFormat format;
    int depth;
  } depths[] = {{LH_FORMAT_GRAY16, 7}, {LH_FORMAT_GRAY16, 17}, {LH_FORMAT_GRAY16, -1},
                {LH_FORMAT_GRAY8, 10}, {LH_FORMAT_RGB, 16},    {LH_FORMAT_P010, 16},
                {LH_FORMAT_RGB16, 99}};
  for (size_t i = 0; i < sizeof depths / sizeof depths[0]; i++) {
    f = (LhFrame){.format = depths[i].format,
                  .memory = LH_MEMORY_HOST,
                  .width = 1,
                  .height = 1,
                  .bit_depth = depths[i].depth,
                  .planes = {wide},
                  .strides = {sizeof wide}};
    EXPECT(lh_analyze(ctx, &f, &o, &s), LH_ERROR_INVALID_ARGUMENT, "bit depth");
  }
  lh_stats_clear(&s);
}

static void test_options(LhContext *ctx)
{
  lh_options_init(NULL);
  LhOptions o;
  lh_options_init(&o);
  EXPECT(lh_options_set_percentiles(NULL, "1"), LH_ERROR_INVALID_ARGUMENT, "options NULL");
  EXPECT(lh_options_set_percentiles(&o, NULL), LH_ERROR_INVALID_ARGUMENT, "list NULL");
  EXPECT(lh_options_set_percentiles(&o, "10,20"), LH_OK, "a good list");
  const char *bad[] = {"101", "-0.5", "100.0000001", "nan", "inf", "-inf", "1,,2",
                       "1,",  ",1",   "1;2",         "5x",  "1e3", "0x10", "1, ,2"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    EXPECT(lh_options_set_percentiles(&o, bad[i]), LH_ERROR_INVALID_ARGUMENT, bad[i]);
    CHECK(o.n_percentiles == 2 && o.percentiles[0] == 10 && o.percentiles[1] == 20,
          "\"%s\" changed the options", bad[i]);
  }
  /* Spaces around items are taken; -0 is 0. */
  EXPECT(lh_options_set_percentiles(&o, " 5 ,95 , -0"), LH_OK, "spaces around items");
  CHECK(o.n_percentiles == 3 && o.percentiles[0] == 5 && o.percentiles[1] == 95 &&
            o.percentiles[2] == 0 && !signbit(o.percentiles[2]),
        "\" 5 ,95 , -0\": %d percentiles", o.n_percentiles);
  char many[LH_MAX_PERCENTILES * 4 + 8] = "";
  for (int i = 0; i <= LH_MAX_PERCENTILES; i++)
    strcat(many, i ? ",1" : "1");
  EXPECT(lh_options_set_percentiles(&o, many), LH_ERROR_INVALID_ARGUMENT, "65 percentiles");

  uint8_t pixels[16];
  for (int i = 0; i < 16; i++)
    pixels[i] = (uint8_t)(i * 16 + 3);
  LhFrame f;
  EXPECT(lh_frame_init(&f, LH_FORMAT_GRAY8, LH_MEMORY_HOST, 4, 4, pixels, 0), LH_OK, "frame");
  LhStats s;
  lh_stats_init(&s);
  uint64_t histogram[256] = {0};
  histogram[3] = 5;
  double outside[] = {-0.001, 100.001, NAN, INFINITY, -INFINITY, -0.0 - 1e-300, 1e308, 100.0000001};
  for (size_t i = 0; i < sizeof outside / sizeof outside[0]; i++) {
    lh_options_init(&o);
    o.n_percentiles = 2;
    o.percentiles[0] = 50;
    o.percentiles[1] = outside[i];
    char what[64];
    snprintf(what, sizeof what, "percentile %g", outside[i]);
    EXPECT(lh_analyze(ctx, &f, &o, &s), LH_ERROR_INVALID_ARGUMENT, what);
    EXPECT(lh_stats_from_histogram(histogram, 8, &o, &s), LH_ERROR_INVALID_ARGUMENT, what);
  }
  /* The message names the value as given ("percentile 100 is outside"
   * with %g). */
  CHECK(strstr(lh_last_error(), "percentile 100.0000001 is outside") != NULL, "message \"%s\"",
        lh_last_error());
  lh_options_init(&o);
  o.n_percentiles = 2;
  o.percentiles[0] = 0;
  o.percentiles[1] = 100;
  EXPECT(lh_analyze(ctx, &f, &o, &s), LH_OK, "percentiles 0 and 100");
  CHECK(s.percentile_value[0] == s.min && s.percentile_value[1] == s.max, "P0 %u P100 %u",
        s.percentile_value[0], s.percentile_value[1]);
  int counts[] = {-1, LH_MAX_PERCENTILES + 1, INT_MAX, INT_MIN};
  for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
    lh_options_init(&o);
    o.n_percentiles = counts[i];
    EXPECT(lh_analyze(ctx, &f, &o, &s), LH_ERROR_INVALID_ARGUMENT, "n_percentiles");
  }
  lh_options_init(&o);
  o.matrix = (LhMatrix)3;
  EXPECT(lh_analyze(ctx, &f, &o, &s), LH_ERROR_INVALID_ARGUMENT, "matrix 3");
  lh_options_init(&o);
  o.range = (LhRange)-1;
  EXPECT(lh_analyze(ctx, &f, &o, &s), LH_ERROR_INVALID_ARGUMENT, "range -1");
  lh_options_init(&o);
  o.percentile_method = (LhPercentileMethod)9;
  EXPECT(lh_analyze(ctx, &f, &o, &s), LH_ERROR_INVALID_ARGUMENT, "method 9");

  /* Regions that do not lie inside the frame, some near INT_MAX. */
  LhRect rois[] = {{-1, 0, 2, 2},      {0, -1, 2, 2},           {3, 0, 2, 2},
                   {0, 0, 5, 1},       {0, 0, -1, 2},           {0, 0, 2, -1},
                   {INT_MAX, 0, 1, 1}, {1, 0, INT_MAX, 1},      {INT_MIN, 0, 1, 1},
                   {0, 3, 1, INT_MAX}, {2, 2, INT_MAX, INT_MAX}};
  for (size_t i = 0; i < sizeof rois / sizeof rois[0]; i++) {
    lh_options_init(&o);
    o.roi = rois[i];
    EXPECT(lh_analyze(ctx, &f, &o, &s), LH_ERROR_INVALID_ARGUMENT, "region outside");
  }
  lh_options_init(&o);
  o.roi = (LhRect){3, 3, 1, 1};
  EXPECT(lh_analyze(ctx, &f, &o, &s), LH_OK, "the last pixel as a region");
  CHECK(s.count == 1 && s.min == pixels[15], "1-pixel region: count %llu min %u",
        (unsigned long long)s.count, s.min);
  lh_stats_clear(&s);
}

static void test_stats(LhContext *ctx)
{
  lh_stats_init(NULL);
  lh_stats_clear(NULL);
  LhStats zeroed;
  memset(&zeroed, 0, sizeof zeroed);
  lh_stats_clear(&zeroed);
  lh_stats_clear(&zeroed);
  CHECK(zeroed.histogram == NULL && zeroed.n_bins == 0, "a cleared struct is not empty");
  CHECK(isnan(lh_normalize(1, 0, LH_RANGE_FULL)) && isnan(lh_normalize(1, 17, LH_RANGE_FULL)),
        "lh_normalize at depths 0 and 17");
  /* Limited range has no black below 8 bits (16 << (bit_depth - 8)). */
  CHECK(isnan(lh_normalize(1, 4, LH_RANGE_LIMITED)) && isnan(lh_normalize(1, 8, (LhRange)7)),
        "lh_normalize of limited range at 4 bits, or of an unknown range");
  CHECK(lh_normalize(3, 2, LH_RANGE_FULL) == 1.0 && lh_normalize(16, 8, LH_RANGE_LIMITED) == 0.0,
        "lh_normalize at 2 bits full range, 8 bits limited");
  {
    uint64_t one[256] = {1};
    CHECK(isnan(lh_histogram_distance(NULL, one, 8)) && isnan(lh_histogram_distance(one, one, 7)) &&
              lh_histogram_distance(one, one, 8) == 0.0,
          "lh_histogram_distance of NULL, at 7 bits, of equal histograms");
  }

  uint64_t histogram[65536] = {0};
  LhStats s;
  lh_stats_init(&s);
  EXPECT(lh_stats_from_histogram(NULL, 8, NULL, &s), LH_ERROR_INVALID_ARGUMENT, "NULL hist");
  {
    /* Counts that sum past 2^64 wrapped the pixel count and the ranks. */
    uint64_t wide[256] = {0};
    wide[10] = wide[200] = (uint64_t)1 << 63;
    EXPECT(lh_stats_from_histogram(wide, 8, NULL, &s), LH_ERROR_INVALID_ARGUMENT,
           "counts past 2^64");
    wide[200] = ((uint64_t)1 << 63) - 1;
    EXPECT(lh_stats_from_histogram(wide, 8, NULL, &s), LH_OK, "counts of 2^64 - 1");
  }
  EXPECT(lh_stats_from_histogram(histogram, 8, NULL, NULL), LH_ERROR_INVALID_ARGUMENT,
         "NULL stats");
  EXPECT(lh_stats_from_histogram(histogram, 7, NULL, &s), LH_ERROR_INVALID_ARGUMENT, "depth 7");
  EXPECT(lh_stats_from_histogram(histogram, 17, NULL, &s), LH_ERROR_INVALID_ARGUMENT, "depth 17");
  EXPECT(lh_stats_from_histogram(histogram, 8, NULL, &s), LH_OK, "an empty histogram");
  CHECK(s.count == 0 && s.mean == 0 && s.stddev == 0, "empty histogram: count %llu",
        (unsigned long long)s.count);
  /* The same stats reused across depths, then cleared twice. */
  histogram[1000] = 7;
  EXPECT(lh_stats_from_histogram(histogram, 16, NULL, &s), LH_OK, "16 bits");
  CHECK(s.n_bins == 65536 && s.min == 1000 && s.max == 1000, "16 bits into 8-bit stats");
  histogram[1000] = 0;
  histogram[200] = 3;
  EXPECT(lh_stats_from_histogram(histogram, 8, NULL, &s), LH_OK, "8 bits again");
  CHECK(s.n_bins == 256 && s.median == 200, "8 bits into 16-bit stats");
  lh_stats_clear(&s);
  lh_stats_clear(&s);

  /* A histogram whose counts sum past 2^64 must not give nonsense silently:
   * either a status or numbers within the code range. */
  memset(histogram, 0, 256 * sizeof histogram[0]);
  histogram[0] = UINT64_MAX;
  histogram[255] = UINT64_MAX;
  int status = lh_stats_from_histogram(histogram, 8, NULL, &s);
  CHECK(status < 0 || (s.min <= s.max && s.max <= 255 && s.median <= 255),
        "counts past 2^64: status %d min %u max %u", status, s.min, s.max);
  lh_stats_clear(&s);

  uint8_t pixels[4] = {1, 2, 3, 4};
  LhFrame f;
  lh_frame_init(&f, LH_FORMAT_GRAY8, LH_MEMORY_HOST, 2, 2, pixels, 0);
  EXPECT(lh_analyze(NULL, &f, NULL, &s), LH_ERROR_INVALID_ARGUMENT, "NULL context");
  EXPECT(lh_analyze(ctx, NULL, NULL, &s), LH_ERROR_INVALID_ARGUMENT, "NULL frame");
  EXPECT(lh_analyze(ctx, &f, NULL, NULL), LH_ERROR_INVALID_ARGUMENT, "NULL stats");
  EXPECT(lh_analyze(ctx, &f, NULL, &s), LH_OK, "NULL options: the defaults");
  CHECK(s.count == 4 && s.median == 2, "defaults: count %llu median %u",
        (unsigned long long)s.count, s.median);
  EXPECT(lh_analyze_batch(ctx, NULL, 0, NULL, NULL), LH_OK, "an empty batch");
  EXPECT(lh_analyze_batch(ctx, NULL, 2, NULL, &s), LH_ERROR_INVALID_ARGUMENT, "NULL frames");
  LhFrame frames[2] = {f, f};
  frames[1].format = (LhFormat)99;
  LhStats two[2];
  lh_stats_init(&two[0]);
  lh_stats_init(&two[1]);
  EXPECT(lh_analyze_batch(ctx, frames, 2, NULL, two), LH_ERROR_INVALID_ARGUMENT, "bad frame 1");
  CHECK(strstr(lh_last_error(), "frame 1") != NULL, "the batch does not say which frame");
  lh_stats_clear(&two[0]);
  lh_stats_clear(&two[1]);
  lh_stats_clear(&s);
}

/* Odd sizes of 4:2:0 formats: accepted, chroma rounded up as GStreamer lays
 * it out; every operation stays inside lh_frame_buffer_size() bytes. */
static void test_odd_420(LhContext *ctx)
{
  const LhFormat formats[] = {LH_FORMAT_I420, LH_FORMAT_NV12, LH_FORMAT_P010};
  const int sizes[][2] = {{1, 1}, {7, 5}, {3, 1}, {1, 3}, {17, 9}, {2, 3}};
  for (size_t k = 0; k < 3; k++) {
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
      int w = sizes[i][0], h = sizes[i][1];
      for (int padded = 0; padded <= 1; padded++) {
        size_t stride = padded ? w * (size_t)gen_pixel_bytes(formats[k]) + 6 : 0;
        char what[96];
        snprintf(what, sizeof what, "%s %dx%d stride %zu", lh_format_name(formats[k]), w, h,
                 stride);
        size_t row = (size_t)w * (size_t)gen_pixel_bytes(formats[k]);
        size_t y_stride = stride ? stride : row;
        /* Chroma rows: half the luma stride (I420) or all of it (NV12, P010),
         * but never less than ceil(w / 2) samples (two interleaved). */
        size_t chroma_rows = ((size_t)h + 1) / 2;
        bool planar = formats[k] == LH_FORMAT_I420;
        size_t chroma_stride = planar ? (y_stride + 1) / 2 : y_stride;
        size_t chroma_row =
            ((size_t)w + 1) / 2 * (size_t)gen_pixel_bytes(formats[k]) * (planar ? 1 : 2);
        if (chroma_stride < chroma_row)
          chroma_stride = chroma_row;
        size_t want = y_stride * h + (planar ? 2 : 1) * chroma_rows * chroma_stride;
        CHECK(lh_frame_buffer_size(formats[k], w, h, stride) == want, "%s: buffer %zu, not %zu",
              what, lh_frame_buffer_size(formats[k], w, h, stride), want);

        LhFrame in, out;
        uint8_t *a = exact_frame(&in, formats[k], w, h, stride);
        uint8_t *b = exact_frame(&out, formats[k], w, h, stride);
        LhStats s;
        lh_stats_init(&s);
        EXPECT(lh_analyze(ctx, &in, NULL, &s), LH_OK, what);
        CHECK(s.count == (uint64_t)w * h, "%s: count %llu", what, (unsigned long long)s.count);

        size_t size = lh_frame_buffer_size(formats[k], w, h, stride);
        uint8_t *before = malloc(size);
        memcpy(before, a, size);
        LhEqualizeOptions eo;
        lh_equalize_options_init(&eo);
        for (int mode = 0; mode <= 1; mode++) {
          eo.mode = mode ? LH_EQUALIZE_CLAHE : LH_EQUALIZE_GLOBAL;
          EXPECT(lh_equalize(ctx, &in, &out, &eo), LH_OK, what);
          size_t y_bytes = y_stride * h;
          CHECK(memcmp(a, before, size) == 0, "%s: equalize changed its input", what);
          CHECK(memcmp(b + y_bytes, a + y_bytes, size - y_bytes) == 0,
                "%s: equalize did not copy chroma as it came", what);
          EXPECT(lh_equalize(ctx, &out, &out, &eo), LH_OK, "in place");
        }
        LhOverlayOptions oo;
        lh_overlay_options_init(&oo);
        oo.rect = (LhRect){0, 0, w < 3 ? 3 : w, h < 3 ? 3 : h};
        EXPECT(lh_overlay(ctx, &in, &s, &oo), LH_OK, what);
        lh_overlay_options_init(&oo);
        EXPECT(lh_overlay(ctx, &in, &s, &oo), LH_OK, what);
        lh_stats_clear(&s);
        free(before);
        free(a);
        free(b);
      }
    }
  }
}

static void test_equalize_misuse(LhContext *ctx)
{
  LhFrame in, out, other;
  uint8_t *a = exact_frame(&in, LH_FORMAT_RGB, 6, 4, 0);
  uint8_t *b = exact_frame(&out, LH_FORMAT_RGB, 6, 4, 0);
  uint8_t *c = exact_frame(&other, LH_FORMAT_RGB, 6, 5, 0);
  LhEqualizeOptions eo;
  lh_equalize_options_init(NULL);
  lh_equalize_options_init(&eo);
  EXPECT(lh_equalize(NULL, &in, &out, &eo), LH_ERROR_INVALID_ARGUMENT, "equalize NULL ctx");
  EXPECT(lh_equalize(ctx, NULL, &out, &eo), LH_ERROR_INVALID_ARGUMENT, "equalize NULL in");
  EXPECT(lh_equalize(ctx, &in, NULL, &eo), LH_ERROR_INVALID_ARGUMENT, "equalize NULL out");
  EXPECT(lh_equalize(ctx, &in, &out, NULL), LH_OK, "equalize with default options");
  EXPECT(lh_equalize(ctx, &in, &other, &eo), LH_ERROR_INVALID_ARGUMENT, "sizes differ");
  other = out;
  other.format = LH_FORMAT_BGR;
  EXPECT(lh_equalize(ctx, &in, &other, &eo), LH_ERROR_INVALID_ARGUMENT, "formats differ");
  other = out;
  other.strides[0] = 17;
  EXPECT(lh_equalize(ctx, &in, &other, &eo), LH_ERROR_INVALID_ARGUMENT, "short out stride");
  other = out;
  other.memory = LH_MEMORY_CUDA;
  int status = lh_equalize(ctx, &other, &other, &eo);
  CHECK(status == LH_ERROR_UNSUPPORTED || status == LH_ERROR_INVALID_ARGUMENT ||
            lh_context_backend(ctx) == LH_BACKEND_CUDA,
        "CUDA memory on the CPU: status %d", status);
  eo.mode = (LhEqualizeMode)5;
  EXPECT(lh_equalize(ctx, &in, &out, &eo), LH_ERROR_INVALID_ARGUMENT, "mode 5");
  lh_equalize_options_init(&eo);
  eo.mode = LH_EQUALIZE_CLAHE;
  int tiles[][2] = {{0, 8}, {8, 0}, {-1, 1}, {LH_CLAHE_MAX_TILES + 1, 1}, {INT_MAX, INT_MAX}};
  for (size_t i = 0; i < sizeof tiles / sizeof tiles[0]; i++) {
    eo.tiles_x = tiles[i][0];
    eo.tiles_y = tiles[i][1];
    EXPECT(lh_equalize(ctx, &in, &out, &eo), LH_ERROR_INVALID_ARGUMENT, "CLAHE tiles");
  }
  /* More tiles than pixels, and odd clip limits: a status or a result, no crash. */
  eo.tiles_x = LH_CLAHE_MAX_TILES;
  eo.tiles_y = LH_CLAHE_MAX_TILES;
  status = lh_equalize(ctx, &in, &out, &eo);
  CHECK(status == LH_OK || status == LH_ERROR_INVALID_ARGUMENT, "64x64 tiles on 6x4: %d", status);
  double limits[] = {NAN, INFINITY, -1, 0, 1e300};
  eo.tiles_x = eo.tiles_y = 2;
  for (size_t i = 0; i < sizeof limits / sizeof limits[0]; i++) {
    eo.clip_limit = limits[i];
    status = lh_equalize(ctx, &in, &out, &eo);
    CHECK(status == LH_OK || (status == LH_ERROR_INVALID_ARGUMENT && *lh_last_error()),
          "clip limit %g: status %d", limits[i], status);
  }

  uint64_t histogram[256] = {0};
  uint16_t lut[65536];
  EXPECT(lh_lut_from_histogram(NULL, 8, LH_RANGE_FULL, lut), LH_ERROR_INVALID_ARGUMENT, "LUT");
  EXPECT(lh_lut_from_histogram(histogram, 8, LH_RANGE_FULL, NULL), LH_ERROR_INVALID_ARGUMENT,
         "LUT out NULL");
  EXPECT(lh_lut_from_histogram(histogram, 7, LH_RANGE_FULL, lut), LH_ERROR_INVALID_ARGUMENT,
         "LUT depth 7");
  EXPECT(lh_lut_from_histogram(histogram, 8, (LhRange)4, lut), LH_ERROR_INVALID_ARGUMENT,
         "LUT range 4");
  EXPECT(lh_lut_from_histogram(histogram, 8, LH_RANGE_FULL, lut), LH_OK, "LUT of nothing");
  EXPECT(lh_apply_lut(ctx, &in, &out, NULL, LH_MATRIX_BT601), LH_ERROR_INVALID_ARGUMENT,
         "apply NULL LUT");
  EXPECT(lh_apply_lut(ctx, &in, &out, lut, (LhMatrix)9), LH_ERROR_INVALID_ARGUMENT, "matrix 9");
  EXPECT(lh_apply_lut(ctx, &in, &out, lut, LH_MATRIX_BT709), LH_OK, "apply a LUT");

  LhTemporal *t = (LhTemporal *)&failures;
  EXPECT(lh_temporal_new(0, 0.4, &t), LH_ERROR_INVALID_ARGUMENT, "window 0");
  CHECK(t == NULL, "a failed lh_temporal_new left *temporal set");
  EXPECT(lh_temporal_new(LH_TEMPORAL_MAX_WINDOW + 1, 0.4, &t), LH_ERROR_INVALID_ARGUMENT,
         "window too long");
  EXPECT(lh_temporal_new(4, NAN, &t), LH_ERROR_INVALID_ARGUMENT, "threshold NaN");
  EXPECT(lh_temporal_new(4, -0.1, &t), LH_ERROR_INVALID_ARGUMENT, "threshold -0.1");
  EXPECT(lh_temporal_new(4, 1.5, &t), LH_ERROR_INVALID_ARGUMENT, "threshold 1.5");
  EXPECT(lh_temporal_new(4, 0.4, NULL), LH_ERROR_INVALID_ARGUMENT, "temporal out NULL");
  lh_temporal_free(NULL);
  lh_temporal_reset(NULL);
  EXPECT(lh_temporal_query(NULL, NULL, NULL), LH_ERROR_INVALID_ARGUMENT, "query NULL");
  CHECK(isnan(lh_histogram_distance(NULL, histogram, 8)) &&
            isnan(lh_histogram_distance(histogram, histogram, 7)),
        "histogram distance of nothing");
  /* One state fed frames of changing size, depth and mode starts afresh each time. */
  EXPECT(lh_temporal_new(4, 0.4, &t), LH_OK, "temporal");
  EXPECT(lh_temporal_query(t, NULL, NULL), LH_OK, "query with NULL outputs");
  lh_equalize_options_init(&eo);
  eo.temporal = t;
  LhFrame g;
  for (int round = 0; round < 2; round++) {
    for (size_t k = 0; k < N_FORMATS; k++) {
      for (int mode = 0; mode <= 1; mode++) {
        eo.mode = mode ? LH_EQUALIZE_CLAHE : LH_EQUALIZE_GLOBAL;
        eo.tiles_x = 2 + (int)k % 3;
        eo.tiles_y = 3;
        uint8_t *d = exact_frame(&g, all_formats[k], 9 + (int)k, 5 + mode, 0);
        char what[64];
        snprintf(what, sizeof what, "temporal %s mode %d", lh_format_name(all_formats[k]), mode);
        EXPECT(lh_equalize(ctx, &g, &g, &eo), LH_OK, what);
        free(d);
      }
    }
  }
  int frames = -1;
  EXPECT(lh_temporal_query(t, &frames, NULL), LH_OK, "query");
  CHECK(frames >= 1 && frames <= 4, "frames in the window: %d", frames);
  lh_temporal_free(t);

  LhStats s;
  lh_stats_init(&s);
  LhOverlayOptions oo;
  lh_overlay_options_init(NULL);
  lh_overlay_options_init(&oo);
  EXPECT(lh_overlay(ctx, &in, &s, &oo), LH_ERROR_INVALID_ARGUMENT, "overlay of empty stats");
  EXPECT(lh_analyze(ctx, &in, NULL, &s), LH_OK, "analyze");
  EXPECT(lh_overlay(NULL, &in, &s, &oo), LH_ERROR_INVALID_ARGUMENT, "overlay NULL ctx");
  EXPECT(lh_overlay(ctx, NULL, &s, &oo), LH_ERROR_INVALID_ARGUMENT, "overlay NULL frame");
  EXPECT(lh_overlay(ctx, &in, NULL, &oo), LH_ERROR_INVALID_ARGUMENT, "overlay NULL stats");
  EXPECT(lh_overlay(ctx, &in, &s, NULL), LH_OK, "overlay with default options");
  /* Markers are read from percentile_value[0 .. n_percentiles): a count past
   * the array was read beyond the struct. */
  int kept_percentiles = s.n_percentiles;
  int counts[] = {-1, LH_MAX_PERCENTILES + 1, 100000};
  for (size_t i = 0; i < 3; i++) {
    s.n_percentiles = counts[i];
    EXPECT(lh_overlay(ctx, &in, &s, NULL), LH_ERROR_INVALID_ARGUMENT, "overlay n_percentiles");
  }
  s.n_percentiles = kept_percentiles;
  double opacities[] = {NAN, -0.1, 1.1};
  for (size_t i = 0; i < 3; i++) {
    oo.opacity = opacities[i];
    EXPECT(lh_overlay(ctx, &in, &s, &oo), LH_ERROR_INVALID_ARGUMENT, "opacity");
  }
  lh_overlay_options_init(&oo);
  LhRect rects[] = {{-100, -100, 103, 103},
                    {5, 3, 100, 100},
                    {INT_MAX, INT_MAX, 3, 3},
                    {INT_MIN, INT_MIN, 65536, 65536},
                    {-2, 1, 3, 3}};
  for (size_t i = 0; i < sizeof rects / sizeof rects[0]; i++) {
    oo.rect = rects[i];
    EXPECT(lh_overlay(ctx, &in, &s, &oo), LH_OK, "a panel partly or wholly off the frame");
  }
  /* A gray frame's alpha plane of its own: the panel composited over it
   * (a transparent plane gets the panel's opacity where it is drawn), only
   * for GRAY8 / GRAY16, rows of a row's bytes at least, never NULL. */
  LhFrame gray;
  uint8_t *gray_pixels = exact_frame(&gray, LH_FORMAT_GRAY8, 200, 120, 0);
  uint8_t *transparent = calloc(200 * 120, 1);
  LhStats gray_stats;
  lh_stats_init(&gray_stats);
  EXPECT(lh_analyze(ctx, &gray, NULL, &gray_stats), LH_OK, "analyze a gray frame");
  EXPECT(lh_overlay_gray_alpha(ctx, &gray, transparent, 0, &gray_stats, NULL), LH_OK,
         "overlay over a gray frame's alpha plane");
  size_t shown = 0;
  for (size_t i = 0; i < 200 * 120; i++)
    shown += transparent[i] > 0;
  CHECK(shown > 0 && shown < 200 * 120, "the panel over a transparent gray frame: %zu pixels shown",
        shown);
  EXPECT(lh_overlay_gray_alpha(ctx, &gray, NULL, 0, &gray_stats, NULL), LH_ERROR_INVALID_ARGUMENT,
         "overlay with a NULL alpha plane");
  EXPECT(lh_overlay_gray_alpha(ctx, &gray, transparent, 199, &gray_stats, NULL),
         LH_ERROR_INVALID_ARGUMENT, "an alpha stride below a row");
  EXPECT(lh_overlay_gray_alpha(ctx, &in, transparent, 0, &s, NULL), LH_ERROR_UNSUPPORTED,
         "an alpha plane of its own with a colour frame");
  lh_stats_clear(&gray_stats);
  free(transparent);
  free(gray_pixels);
  oo.rect = (LhRect){0, 0, 2, 2};
  EXPECT(lh_overlay(ctx, &in, &s, &oo), LH_ERROR_INVALID_ARGUMENT, "a 2x2 panel");
  oo.rect = (LhRect){0, 0, 70000, 4};
  EXPECT(lh_overlay(ctx, &in, &s, &oo), LH_ERROR_INVALID_ARGUMENT, "a panel 70000 wide");
  /* Stats of another depth than the frame's. */
  LhStats deep;
  lh_stats_init(&deep);
  static uint64_t deep_histogram[65536];
  deep_histogram[500] = 3;
  EXPECT(lh_stats_from_histogram(deep_histogram, 16, NULL, &deep), LH_OK, "16-bit stats");
  lh_overlay_options_init(&oo);
  status = lh_overlay(ctx, &in, &deep, &oo);
  CHECK(status == LH_OK || status == LH_ERROR_INVALID_ARGUMENT, "16-bit stats on RGB: %d", status);
  lh_stats_clear(&deep);
  lh_stats_clear(&s);
  free(a);
  free(b);
  free(c);
}

/* A program that set a locale with a decimal comma (as GStreamer and GTK
 * applications do with setlocale(LC_ALL, "")) still gets "1,50,99.9" read as
 * three percentiles.  Such a locale is made with localedef when the system
 * has none. */
static void test_percentiles_in_a_comma_locale(void)
{
  static const char *const names[] = {"de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8", "fr_FR.utf8"};
  char dir[] = "/tmp/lumahist-locale-XXXXXX";
  bool made = false;
  const char *name = NULL;
  for (size_t i = 0; i < sizeof names / sizeof names[0] && !name; i++)
    if (setlocale(LC_NUMERIC, names[i]))
      name = names[i];
  if (!name && mkdtemp(dir)) {
    made = true;
    char command[128];
    snprintf(command, sizeof command,
             "localedef -c -i de_DE -f UTF-8 %s/de_DE.UTF-8 >/dev/null 2>&1", dir);
    if (system(command) != -1) {
      setenv("LOCPATH", dir, 1);
      if (setlocale(LC_NUMERIC, "de_DE.UTF-8"))
        name = "de_DE.UTF-8 (made with localedef)";
    }
  }
  if (!name) {
    printf("note: no locale with a decimal comma here, nor localedef to make one: "
           "percentile parsing in such a locale not tested\n");
  } else {
    CHECK(strcmp(localeconv()->decimal_point, ",") == 0, "%s has no decimal comma", name);
    LhOptions o;
    lh_options_init(&o);
    EXPECT(lh_options_set_percentiles(&o, "1,50,99.9"), LH_OK, "\"1,50,99.9\" in a comma locale");
    CHECK(o.n_percentiles == 3 && o.percentiles[0] == 1 && o.percentiles[1] == 50 &&
              o.percentiles[2] == 99.9,
          "in %s \"1,50,99.9\" is %d percentiles: %g %g", name, o.n_percentiles, o.percentiles[0],
          o.percentiles[1]);
    printf("percentiles parsed alike in %s\n", name);
  }
  setlocale(LC_NUMERIC, "C");
  if (made) {
    char command[128];
    snprintf(command, sizeof command, "rm -rf %s", dir);
    CHECK(system(command) == 0, "cannot remove %s", dir);
    unsetenv("LOCPATH");
  }
}

/* The message is per thread: an error on another thread does not replace it. */
static void *fail_elsewhere(void *arg)
{
  lh_context_new((LhBackend)42, NULL);
  *(bool *)arg = strlen(lh_last_error()) > 0;
  return NULL;
}

static void test_thread_local_message(void)
{
  lh_set_error(LH_ERROR_IO, "main thread message");
  bool other_has_message = false;
  pthread_t thread;
  pthread_create(&thread, NULL, fail_elsewhere, &other_has_message);
  pthread_join(thread, NULL);
  CHECK(other_has_message, "the other thread got no message");
  CHECK(strcmp(lh_last_error(), "main thread message") == 0, "message replaced: %s",
        lh_last_error());
}

/* Run with CUDA_VISIBLE_DEVICES="": the CUDA backend has no device. */
static int test_no_device(void)
{
  const char *visible = getenv("CUDA_VISIBLE_DEVICES");
  if (!visible || *visible) {
    printf("SKIP: --no-device needs CUDA_VISIBLE_DEVICES set to \"\"\n");
    return 77;
  }
  LhContext *c = (LhContext *)&failures;
  EXPECT(lh_context_new(LH_BACKEND_CUDA, &c), LH_ERROR_NO_DEVICE, "CUDA with no device");
  CHECK(c == NULL, "*context set after NO_DEVICE");
  printf("lh_context_new(CUDA): %s: %s\n", lh_status_name(LH_ERROR_NO_DEVICE), lh_last_error());
  /* A CUDA build on a machine without the driver says so, not that the
   * driver is too old. */
  void *driver = dlopen("libcuda.so.1", RTLD_LAZY);
  if (driver)
    dlclose(driver);
  else if (strstr(lh_last_error(), "built without CUDA") == NULL)
    CHECK(strstr(lh_last_error(), "no NVIDIA driver") != NULL, "no driver: \"%s\"",
          lh_last_error());
  EXPECT(lh_context_new(LH_BACKEND_AUTO, &c), LH_OK, "auto with no device");
  if (c) {
    CHECK(lh_context_backend(c) == LH_BACKEND_CPU, "auto chose %s",
          lh_backend_name(lh_context_backend(c)));
    CHECK(strstr(lh_context_note(c), "CPU") != NULL, "note: \"%s\"", lh_context_note(c));
    printf("auto: %s\n", lh_context_note(c));
    uint8_t pixels[4] = {9, 9, 9, 9};
    LhFrame f;
    LhStats s;
    lh_stats_init(&s);
    lh_frame_init(&f, LH_FORMAT_GRAY8, LH_MEMORY_HOST, 2, 2, pixels, 0);
    EXPECT(lh_analyze(c, &f, NULL, &s), LH_OK, "analysis after falling back");
    f.memory = LH_MEMORY_CUDA;
    EXPECT(lh_analyze(c, &f, NULL, &s), LH_ERROR_UNSUPPORTED, "a CUDA frame without CUDA");
    lh_stats_clear(&s);
    lh_context_free(c);
  }
  return failures ? 1 : 0;
}

/* A long call in one thread (a batch of many frames, all one buffer). */
typedef struct {
  LhContext *context;
  LhFrame *frames;
  LhStats *stats;
  size_t n;
  volatile int started;
  int status;
} LongCall;

static void *run_long_call(void *data)
{
  LongCall *call = data;
  __atomic_store_n(&call->started, 1, __ATOMIC_RELEASE);
  call->status = lh_analyze_batch(call->context, call->frames, call->n, NULL, call->stats);
  return NULL;
}

/* Two threads in one context: the second call while the first runs is
 * refused, "in use", and the first's numbers stay right (they crashed the
 * worker pool); once it is over the context serves the other thread. */
static void test_one_call_at_a_time(void)
{
  enum { W = 1920, H = 1080, N = 1000 };
  LhContext *c = NULL;
  EXPECT(lh_context_new(LH_BACKEND_CPU, &c), LH_OK, "a CPU context");
  uint8_t *pixels = malloc((size_t)W * H);
  LhFrame *frames = calloc(N, sizeof *frames);
  LhStats *stats = calloc(N, sizeof *stats);
  if (!c || !pixels || !frames || !stats) {
    CHECK(false, "no memory for the test");
    free(pixels), free(frames), free(stats), lh_context_free(c);
    return;
  }
  for (size_t i = 0; i < (size_t)W * H; i++)
    pixels[i] = (uint8_t)(i * 2654435761u >> 24);
  for (int i = 0; i < N; i++) {
    lh_frame_init(&frames[i], LH_FORMAT_GRAY8, LH_MEMORY_HOST, W, H, pixels, 0);
    lh_stats_init(&stats[i]);
  }
  LongCall call = {.context = c, .frames = frames, .stats = stats, .n = N};
  pthread_t thread;
  CHECK(pthread_create(&thread, NULL, run_long_call, &call) == 0, "a thread");
  while (!__atomic_load_n(&call.started, __ATOMIC_ACQUIRE))
    ;
  struct timespec pause = {0, 20 * 1000 * 1000};
  nanosleep(&pause, NULL);
  LhStats mine;
  lh_stats_init(&mine);
  LhFrame small;
  uint8_t four[4] = {1, 2, 3, 4};
  lh_frame_init(&small, LH_FORMAT_GRAY8, LH_MEMORY_HOST, 2, 2, four, 0);
  int refused = lh_analyze(c, &small, NULL, &mine);
  /* The batch's statistics are finished after all its frames are counted. */
  bool still_running = __atomic_load_n(&stats[N - 1].count, __ATOMIC_ACQUIRE) == 0;
  pthread_join(thread, NULL);
  if (still_running)
    CHECK(refused == LH_ERROR_INVALID_ARGUMENT && strstr(lh_last_error(), "in use"),
          "a call while another thread's runs: status %d (%s)", refused, lh_last_error());
  else
    printf("note: the long call ended within 20 ms: the refusal was not tested\n");
  CHECK(call.status == LH_OK, "the long call failed: %d", call.status);
  for (int i = 0; i < N; i++)
    CHECK(stats[i].count == (uint64_t)W * H && stats[i].median == stats[0].median,
          "frame %d of the long call: count %llu", i, (unsigned long long)stats[i].count);
  EXPECT(lh_analyze(c, &small, NULL, &mine), LH_OK, "the context after the long call");
  CHECK(mine.count == 4 && mine.median == 2, "after: count %llu median %u",
        (unsigned long long)mine.count, mine.median);
  for (int i = 0; i < N; i++)
    lh_stats_clear(&stats[i]);
  lh_stats_clear(&mine);
  free(stats);
  free(frames);
  free(pixels);
  lh_context_free(c);
}

int main(int argc, char **argv)
{
  if (argc > 1 && strcmp(argv[1], "--no-device") == 0)
    return test_no_device();
  LhContext *ctx = NULL;
  if (lh_context_new(LH_BACKEND_CPU, &ctx) < 0) {
    fprintf(stderr, "no CPU context: %s\n", lh_last_error());
    return 1;
  }
  test_names();
  test_contexts();
  test_frames(ctx);
  test_options(ctx);
  test_stats(ctx);
  test_odd_420(ctx);
  test_equalize_misuse(ctx);
  test_thread_local_message();
  test_percentiles_in_a_comma_locale();
  test_one_call_at_a_time();
  lh_context_free(ctx);
  if (failures) {
    fprintf(stderr, "%d failure(s)\n", failures);
    return 1;
  }
  printf("misuse: all checks passed\n");
  return 0;
}
