/* test-png.c: lhio's PNG reader and writer on every colour type, bit depth,
 * transparency and interlacing, against files written and read by plain
 * libpng; round trips through lhio; strides and channel orders on writing. */
#include "io-test.h"

/* What lhio is expected to give for a PNG, worked out from its samples. */
typedef struct {
  LhFormat format;
  int depth;    /* 8 or 16 */
  int channels; /* in the frame */
  bool alpha_plane;
  uint16_t *values; /* width * height * channels */
  uint16_t *alpha;  /* width * height, or NULL */
} Expected;

static void expect_read(const RawPng *raw, Expected *e)
{
  size_t n = (size_t)raw->width * raw->height;
  int max8 = 255, max = raw->bit_depth == 16 ? 65535 : 255;
  bool trns = raw->n_trans > 0 || raw->has_trans_color;
  memset(e, 0, sizeof *e);
  e->depth = raw->bit_depth == 16 ? 16 : 8;
  switch (raw->color_type) {
  case PNG_COLOR_TYPE_PALETTE:
    e->channels = trns ? 4 : 3;
    break;
  case PNG_COLOR_TYPE_GRAY:
    e->channels = 1;
    e->alpha_plane = trns;
    break;
  case PNG_COLOR_TYPE_GRAY_ALPHA:
    e->channels = 1;
    e->alpha_plane = true;
    break;
  case PNG_COLOR_TYPE_RGB:
    e->channels = trns ? 4 : 3;
    break;
  default:
    e->channels = 4;
  }
  static const LhFormat f8[] = {LH_FORMAT_GRAY8, 0, LH_FORMAT_RGB, LH_FORMAT_RGBA};
  static const LhFormat f16[] = {LH_FORMAT_GRAY16, 0, LH_FORMAT_RGB16, LH_FORMAT_RGBA16};
  e->format = e->depth == 16 ? f16[e->channels - 1] : f8[e->channels - 1];
  e->values = malloc(n * e->channels * sizeof *e->values);
  e->alpha = e->alpha_plane ? malloc(n * sizeof *e->alpha) : NULL;

  for (size_t i = 0; i < n; i++) {
    const uint16_t *s = raw->samples + i * raw->channels;
    uint16_t *v = e->values + i * e->channels;
    switch (raw->color_type) {
    case PNG_COLOR_TYPE_PALETTE: {
      png_color c = raw->palette[s[0]];
      v[0] = c.red;
      v[1] = c.green;
      v[2] = c.blue;
      if (trns)
        v[3] = s[0] < raw->n_trans ? raw->trans_alpha[s[0]] : max8;
      break;
    }
    case PNG_COLOR_TYPE_GRAY: {
      unsigned levels = (1u << raw->bit_depth) - 1;
      v[0] = raw->bit_depth < 8 ? (uint16_t)(s[0] * 255 / levels) : s[0];
      if (trns)
        e->alpha[i] = s[0] == raw->trans_color.gray ? 0 : max;
      break;
    }
    case PNG_COLOR_TYPE_GRAY_ALPHA:
      v[0] = s[0];
      e->alpha[i] = s[1];
      break;
    case PNG_COLOR_TYPE_RGB:
      memcpy(v, s, 3 * sizeof *v);
      if (trns)
        v[3] = s[0] == raw->trans_color.red && s[1] == raw->trans_color.green &&
                       s[2] == raw->trans_color.blue
                   ? 0
                   : max;
      break;
    default:
      memcpy(v, s, 4 * sizeof *v);
    }
  }
}

static unsigned frame_sample(const LhFrame *f, int depth, int channels, int x, int y, int c)
{
  const uint8_t *row = (const uint8_t *)f->planes[0] + (size_t)y * f->strides[0];
  if (depth == 16)
    return ((const uint16_t *)row)[x * channels + c];
  return row[x * channels + c];
}

/* Compares an lhio image with what is expected; returns the number of
 * mismatching samples (the first few are printed). */
static int compare_image(const char *what, const LhioImage *img, const Expected *e, int w, int h)
{
  int bad = 0;
  CHECK(img->frame.format == e->format, "%s: format %s, expected %s", what,
        lh_format_name(img->frame.format), lh_format_name(e->format));
  CHECK(img->frame.width == w && img->frame.height == h, "%s: %dx%d, expected %dx%d", what,
        img->frame.width, img->frame.height, w, h);
  CHECK(img->frame.bit_depth == e->depth, "%s: bit depth %d, expected %d", what,
        img->frame.bit_depth, e->depth);
  CHECK(img->frame.memory == LH_MEMORY_HOST && img->frame.planes[0] == img->pixels,
        "%s: frame does not describe the image's pixels", what);
  CHECK((img->alpha != NULL) == e->alpha_plane, "%s: alpha plane %s, expected %s", what,
        img->alpha ? "present" : "absent", e->alpha_plane ? "present" : "absent");
  if (img->frame.format != e->format || img->frame.width != w || img->frame.height != h ||
      (img->alpha != NULL) != e->alpha_plane)
    return 1;
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      for (int c = 0; c < e->channels; c++) {
        unsigned got = frame_sample(&img->frame, e->depth, e->channels, x, y, c);
        unsigned want = e->values[((size_t)y * w + x) * e->channels + c];
        if (got != want && bad++ < 5)
          fprintf(stderr, "%s: (%d,%d) channel %d: %u, expected %u\n", what, x, y, c, got, want);
      }
      if (e->alpha_plane) {
        const uint8_t *row = img->alpha + (size_t)y * img->alpha_stride;
        unsigned got = e->depth == 16 ? ((const uint16_t *)row)[x] : row[x];
        unsigned want = e->alpha[(size_t)y * w + x];
        if (got != want && bad++ < 5)
          fprintf(stderr, "%s: (%d,%d) alpha: %u, expected %u\n", what, x, y, got, want);
      }
    }
  CHECK(bad == 0, "%s: %d samples differ", what, bad);
  return bad;
}

/* The PNG lhio is expected to write back for a source: palette expanded to
 * RGB(A) 8-bit, a tRNS colour key as a real alpha channel, everything else
 * as it was (low-bit gray at its own depth). */
static void expect_written(const RawPng *src, const Expected *e, RawPng *out)
{
  size_t n = (size_t)src->width * src->height;
  memset(out, 0, sizeof *out);
  out->width = src->width;
  out->height = src->height;
  out->interlace = src->interlace;
  bool trns = src->n_trans > 0 || src->has_trans_color;
  if (src->color_type == PNG_COLOR_TYPE_PALETTE || trns) {
    out->bit_depth = e->depth;
    out->color_type = e->alpha_plane     ? PNG_COLOR_TYPE_GRAY_ALPHA
                      : e->channels == 4 ? PNG_COLOR_TYPE_RGB_ALPHA
                                         : PNG_COLOR_TYPE_RGB;
    out->channels = raw_png_channels(out->color_type);
    out->samples = malloc(n * out->channels * sizeof *out->samples);
    for (size_t i = 0; i < n; i++) {
      if (e->alpha_plane) {
        out->samples[2 * i] = e->values[i];
        out->samples[2 * i + 1] = e->alpha[i];
      } else {
        memcpy(out->samples + i * out->channels, e->values + i * e->channels,
               out->channels * sizeof *out->samples);
      }
    }
  } else {
    out->bit_depth = src->bit_depth;
    out->color_type = src->color_type;
    out->channels = src->channels;
    out->samples = malloc(n * out->channels * sizeof *out->samples);
    memcpy(out->samples, src->samples, n * out->channels * sizeof *out->samples);
  }
}

static void compare_raw(const char *what, const RawPng *got, const RawPng *want)
{
  CHECK(got->width == want->width && got->height == want->height, "%s: size %dx%d, expected %dx%d",
        what, got->width, got->height, want->width, want->height);
  CHECK(got->color_type == want->color_type, "%s: colour type %d, expected %d", what,
        got->color_type, want->color_type);
  CHECK(got->bit_depth == want->bit_depth, "%s: bit depth %d, expected %d", what, got->bit_depth,
        want->bit_depth);
  CHECK(got->interlace == want->interlace, "%s: interlace %d, expected %d", what, got->interlace,
        want->interlace);
  if (got->width != want->width || got->height != want->height ||
      got->color_type != want->color_type)
    return;
  size_t n = (size_t)got->width * got->height * got->channels;
  size_t bad = 0;
  for (size_t i = 0; i < n; i++)
    if (got->samples[i] != want->samples[i] && bad++ < 5)
      fprintf(stderr, "%s: sample %zu: %u, expected %u\n", what, i, got->samples[i],
              want->samples[i]);
  CHECK(bad == 0, "%s: %zu samples differ", what, bad);
}

static void make_raw(RawPng *raw, int color_type, int depth, bool trns, int interlace, int w, int h,
                     uint64_t *seed)
{
  memset(raw, 0, sizeof *raw);
  raw->width = w;
  raw->height = h;
  raw->color_type = color_type;
  raw->bit_depth = depth;
  raw->interlace = interlace;
  raw->channels = raw_png_channels(color_type);
  unsigned max = (1u << depth) - 1;
  if (color_type == PNG_COLOR_TYPE_PALETTE) {
    raw->n_palette = 1 << depth;
    for (int i = 0; i < raw->n_palette; i++) {
      raw->palette[i].red = (uint8_t)test_rand(seed);
      raw->palette[i].green = (uint8_t)test_rand(seed);
      raw->palette[i].blue = (uint8_t)test_rand(seed);
    }
    if (trns) {
      /* Fewer alphas than entries: the rest are opaque. */
      raw->n_trans = raw->n_palette > 1 ? raw->n_palette / 2 : 1;
      for (int i = 0; i < raw->n_trans; i++)
        raw->trans_alpha[i] = (uint8_t)test_rand(seed);
    }
  } else if (trns) {
    raw->has_trans_color = true;
    raw->trans_color.gray = (uint16_t)(test_rand(seed) & max);
    raw->trans_color.red = (uint16_t)(test_rand(seed) & max);
    raw->trans_color.green = (uint16_t)(test_rand(seed) & max);
    raw->trans_color.blue = (uint16_t)(test_rand(seed) & max);
  }
  size_t n = (size_t)w * h * raw->channels;
  raw->samples = malloc(n * sizeof *raw->samples);
  for (size_t i = 0; i < n; i++)
    raw->samples[i] = (uint16_t)(test_rand(seed) & max);
  /* Make sure the colour key occurs, so transparency is really exercised. */
  if (raw->has_trans_color && n >= (size_t)raw->channels * 2) {
    uint16_t key[3] = {raw->trans_color.red, raw->trans_color.green, raw->trans_color.blue};
    if (raw->channels == 1)
      raw->samples[1] = raw->trans_color.gray;
    else
      memcpy(raw->samples + 3, key, sizeof key);
  }
}

static bool same_images(const LhioImage *a, const LhioImage *b)
{
  if (a->frame.format != b->frame.format || a->frame.width != b->frame.width ||
      a->frame.height != b->frame.height || (a->alpha != NULL) != (b->alpha != NULL))
    return false;
  static const int pixel_bytes[LH_FORMAT_COUNT] = {
      [LH_FORMAT_GRAY8] = 1, [LH_FORMAT_GRAY16] = 2, [LH_FORMAT_RGB] = 3,
      [LH_FORMAT_RGBA] = 4,  [LH_FORMAT_RGB16] = 6,  [LH_FORMAT_RGBA16] = 8};
  size_t row = (size_t)a->frame.width * pixel_bytes[a->frame.format];
  for (int y = 0; y < a->frame.height; y++)
    if (memcmp(a->pixels + y * a->frame.strides[0], b->pixels + y * b->frame.strides[0], row))
      return false;
  if (a->alpha)
    for (int y = 0; y < a->frame.height; y++)
      if (memcmp(a->alpha + y * a->alpha_stride, b->alpha + y * b->alpha_stride, row))
        return false;
  return true;
}

static void test_case(const char *dir, int color_type, int depth, bool trns, int interlace, int w,
                      int h, uint64_t *seed)
{
  char what[128];
  snprintf(what, sizeof what, "type %d depth %d%s%s %dx%d", color_type, depth, trns ? " tRNS" : "",
           interlace ? " Adam7" : "", w, h);
  RawPng src, want, got;
  make_raw(&src, color_type, depth, trns, interlace, w, h, seed);
  const char *in = test_path(dir, "in.png");
  const char *out = test_path(dir, "out.png");
  raw_png_write(in, &src);

  Expected e;
  expect_read(&src, &e);
  LhioImage img, luma, again;
  CHECK_STATUS(lhio_read(in, LHIO_READ_FULL, 0, &img), LH_OK, what);
  if (img.pixels) {
    compare_image(what, &img, &e, w, h);
    CHECK(img.type == LHIO_FILE_PNG, "%s: type %d", what, img.type);
    CHECK(img.source_bit_depth == depth, "%s: source depth %d", what, img.source_bit_depth);
    CHECK(img.source_palette == (color_type == PNG_COLOR_TYPE_PALETTE), "%s: palette flag", what);
    CHECK(img.source_interlaced == (interlace != 0), "%s: interlace flag", what);
    CHECK(img.source_channels == e.channels + (e.alpha_plane ? 1 : 0), "%s: source channels %d",
          what, img.source_channels);
    CHECK(!img.luma_only, "%s: luma_only set for a PNG", what);

    /* Luma mode reads a PNG in full. */
    CHECK_STATUS(lhio_read(in, LHIO_READ_LUMA, 0, &luma), LH_OK, what);
    CHECK(same_images(&img, &luma), "%s: luma mode read differs", what);
    lhio_image_clear(&luma);

    CHECK_STATUS(lhio_write(out, &img, NULL), LH_OK, what);
    raw_png_read(out, &got);
    expect_written(&src, &e, &want);
    compare_raw(what, &got, &want);
    free(got.samples);
    free(want.samples);

    CHECK_STATUS(lhio_read(out, LHIO_READ_FULL, 0, &again), LH_OK, what);
    CHECK(same_images(&img, &again), "%s: lhio round trip differs", what);
    lhio_image_clear(&again);
  }
  lhio_image_clear(&img);
  free(e.values);
  free(e.alpha);
  free(src.samples);
}

/* A frame with padding after each row, in BGR order, or with a filler byte,
 * is written as the plain RGB it stands for. */
static void test_layouts(const char *dir, uint64_t *seed)
{
  const int w = 23, h = 7;
  RawPng src, got;
  make_raw(&src, PNG_COLOR_TYPE_RGB_ALPHA, 8, false, 0, w, h, seed);
  static const struct {
    LhFormat format;
    int order[4]; /* frame byte k holds RGBA channel order[k]; -1 filler */
    int channels; /* in the file */
  } cases[] = {
      {LH_FORMAT_RGB, {0, 1, 2, -2}, 3},  {LH_FORMAT_BGR, {2, 1, 0, -2}, 3},
      {LH_FORMAT_RGBA, {0, 1, 2, 3}, 4},  {LH_FORMAT_BGRA, {2, 1, 0, 3}, 4},
      {LH_FORMAT_RGBX, {0, 1, 2, -1}, 3}, {LH_FORMAT_BGRX, {2, 1, 0, -1}, 3},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    int bytes = cases[k].order[3] == -2 ? 3 : 4;
    size_t stride = (size_t)w * bytes + 13;
    LhioImage img = {.type = LHIO_FILE_PNG};
    img.pixels = malloc(stride * h);
    memset(img.pixels, 0xee, stride * h);
    for (int y = 0; y < h; y++)
      for (int x = 0; x < w; x++)
        for (int b = 0; b < bytes; b++) {
          int c = cases[k].order[b];
          img.pixels[y * stride + x * bytes + b] =
              c < 0 ? 0x5a : (uint8_t)src.samples[((size_t)y * w + x) * 4 + c];
        }
    img.frame = (LhFrame){.format = cases[k].format,
                          .memory = LH_MEMORY_HOST,
                          .width = w,
                          .height = h,
                          .bit_depth = 8,
                          .planes = {img.pixels},
                          .strides = {stride}};
    const char *out = test_path(dir, "layout.png");
    const char *name = lh_format_name(cases[k].format);
    CHECK_STATUS(lhio_write(out, &img, NULL), LH_OK, name);
    raw_png_read(out, &got);
    CHECK(got.channels == cases[k].channels && got.bit_depth == 8, "%s: %d channels, depth %d",
          name, got.channels, got.bit_depth);
    size_t bad = 0;
    if (got.channels == cases[k].channels)
      for (size_t i = 0; i < (size_t)w * h; i++)
        for (int c = 0; c < got.channels; c++)
          bad += got.samples[i * got.channels + c] != src.samples[i * 4 + c];
    CHECK(bad == 0, "%s: %zu samples differ", name, bad);
    free(got.samples);
    lhio_image_clear(&img);
  }
  free(src.samples);
}

/* 16-bit frames of fewer significant bits (10-bit video) are scaled to 16 bits
 * as PNG wants: the top bits of each written sample are the frame's value. */
static void test_sbit(const char *dir, uint64_t *seed)
{
  const int w = 17, h = 5, depth = 10;
  LhioImage img = {.type = LHIO_FILE_PNG};
  uint16_t *v = malloc((size_t)w * h * 2);
  for (int i = 0; i < w * h; i++)
    v[i] = (uint16_t)(test_rand(seed) & ((1u << depth) - 1));
  v[0] = 0;
  v[1] = (1u << depth) - 1;
  img.pixels = (uint8_t *)v;
  img.frame = (LhFrame){.format = LH_FORMAT_GRAY16,
                        .memory = LH_MEMORY_HOST,
                        .width = w,
                        .height = h,
                        .bit_depth = depth,
                        .planes = {v}};
  const char *out = test_path(dir, "sbit.png");
  CHECK_STATUS(lhio_write(out, &img, NULL), LH_OK, "GRAY16 10-bit");
  RawPng got;
  raw_png_read(out, &got);
  CHECK(got.bit_depth == 16 && got.color_type == PNG_COLOR_TYPE_GRAY, "depth %d type %d",
        got.bit_depth, got.color_type);
  int bad = 0;
  for (int i = 0; i < w * h; i++)
    bad += (got.samples[i] >> (16 - depth)) != v[i];
  CHECK(bad == 0, "10-bit: %d samples do not keep their value in the top bits", bad);
  CHECK(got.samples[1] == 65535, "10-bit white written as %u, expected 65535", got.samples[1]);
  free(got.samples);
  lhio_image_clear(&img);
}

/* The zlib level: every level reads back the same pixels, stored is the
 * largest, the default is level 1's file byte for byte, and levels outside
 * zlib's are refused before any file is made. */
static void test_compression(const char *dir, uint64_t *seed)
{
  const int w = 96, h = 64;
  LhioImage img = {.type = LHIO_FILE_PNG};
  img.pixels = malloc((size_t)w * h * 3);
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      for (int c = 0; c < 3; c++)
        img.pixels[((size_t)y * w + x) * 3 + c] =
            (uint8_t)(x * 2 + y * (c + 1) + (int)(test_rand(seed) % 5));
  img.frame = (LhFrame){.format = LH_FORMAT_RGB,
                        .memory = LH_MEMORY_HOST,
                        .width = w,
                        .height = h,
                        .bit_depth = 8,
                        .planes = {img.pixels},
                        .strides = {(size_t)w * 3}};
  size_t sizes[11]; /* by png_compression + 1: stored, default, levels 1..9 */
  uint8_t *files[11];
  for (int level = LHIO_PNG_UNCOMPRESSED; level <= 9; level++) {
    char what[64];
    snprintf(what, sizeof what, "png_compression %d", level);
    const char *out = test_path(dir, "level.png");
    LhioWriteOptions options = {.png_compression = level};
    CHECK_STATUS(lhio_write(out, &img, &options), LH_OK, what);
    sizes[level + 1] = 0;
    files[level + 1] = test_read_file(out, &sizes[level + 1]);
    LhioImage back;
    CHECK_STATUS(lhio_read(out, LHIO_READ_FULL, 0, &back), LH_OK, what);
    CHECK(same_images(&img, &back), "%s: pixels differ after a round trip", what);
    lhio_image_clear(&back);
  }
  CHECK(sizes[0] > sizes[1] && sizes[0] > sizes[10], "stored %zu bytes, default %zu, level 9 %zu",
        sizes[0], sizes[1], sizes[10]);
  /* The default's filters and strategy (OpenCV's) are checked by the CLI's
   * test (test_eq_cli.py), which reads the rows' filter bytes. */
  for (int k = 0; k < 11; k++)
    free(files[k]);
  static const int bad[] = {-2, 10};
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
    LhioWriteOptions options = {.png_compression = bad[k]};
    CHECK_STATUS(lhio_write(test_path(dir, "bad.png"), &img, &options), LH_ERROR_INVALID_ARGUMENT,
                 "png_compression out of range");
  }
  CHECK(access(test_path(dir, "bad.png"), F_OK) != 0, "a refused write left a file");
  lhio_image_clear(&img);
}

/* A chunk (length, type, data, CRC) appended to out at *n. */
static void put_chunk(uint8_t *out, size_t *n, const char *type, const void *data, uint32_t size)
{
  test_put_be32(out + *n, size);
  memcpy(out + *n + 4, type, 4);
  memcpy(out + *n + 8, data, size);
  test_put_be32(out + *n + 8 + size, test_crc32(out + *n + 4, 4 + (size_t)size));
  *n += 12 + (size_t)size;
}

/* A PNG's colour, density, text and Exif chunks are kept when it is read in
 * full and written into the PNG made from it (a palette image's too, written
 * as R'G'B'); tIME, the time of a change that this is not, is left out. */
static void test_metadata_kept(const char *dir, uint64_t *seed)
{
  static const uint8_t gama[4] = {0, 0, 0xB1, 0x8F}; /* 1 / 2.2 */
  static const uint8_t chrm[32] = {
      0, 0, 0x7A, 0x26, 0, 0, 0x80, 0x84, 0, 0, 0xFA, 0,    0, 0, 0x80, 0xE8,
      0, 0, 0x75, 0x30, 0, 0, 0xEA, 0x60, 0, 0, 0x3A, 0x98, 0, 0, 0x17, 0x70}; /* sRGB's */
  static const uint8_t phys[9] = {0, 0, 0x2E, 0x23, 0, 0, 0x2E, 0x23, 1};      /* 300 dpi */
  static const char text[] = "Title\0a scan";
  static const char itxt[] = "XML:com.adobe.xmp\0\0\0\0\0<x:xmpmeta/>";
  static const uint8_t exif[26] = {'M', 'M', 0, 42, 0, 0, 0, 8, 0, 1, 1, 0x12, 0, 3,
                                   0,   0,   0, 1,  0, 6, 0, 0, 0, 0, 0, 0}; /* orientation 6 */
  static const uint8_t time[7] = {0x07, 0xEA, 11, 27, 12, 0, 0};
  uint8_t added[256], want[256];
  size_t n_added = 0, n_want = 0;
  put_chunk(added, &n_added, "gAMA", gama, sizeof gama);
  put_chunk(added, &n_added, "cHRM", chrm, sizeof chrm);
  put_chunk(added, &n_added, "pHYs", phys, sizeof phys);
  put_chunk(added, &n_added, "tIME", time, sizeof time);
  put_chunk(added, &n_added, "tEXt", text, sizeof text - 1);
  put_chunk(added, &n_added, "iTXt", itxt, sizeof itxt - 1);
  put_chunk(added, &n_added, "eXIf", exif, sizeof exif);
  /* What is kept: all but tIME, in the same order. */
  const size_t time_at = 12 + sizeof gama + 12 + sizeof chrm + 12 + sizeof phys;
  memcpy(want, added, time_at);
  n_want = n_added - (12 + sizeof time);
  memcpy(want + time_at, added + time_at + 12 + sizeof time, n_want - time_at);

  static const int types[] = {PNG_COLOR_TYPE_RGB, PNG_COLOR_TYPE_PALETTE, PNG_COLOR_TYPE_GRAY};
  for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
    char what[64];
    snprintf(what, sizeof what, "metadata of a type %d PNG", types[t]);
    RawPng src;
    make_raw(&src, types[t], 8, false, PNG_INTERLACE_NONE, 19, 11, seed);
    const char *plain = test_path(dir, "metadata-plain.png");
    const char *path = test_path(dir, "metadata.png");
    const char *out = test_path(dir, "metadata-out.png");
    raw_png_write(plain, &src);
    free(src.samples);
    /* The chunks after IHDR (8 + 25 bytes), where a camera or an editor puts them. */
    size_t size = 0;
    uint8_t *bytes = test_read_file(plain, &size);
    uint8_t *with = malloc(size + n_added);
    memcpy(with, bytes, 33);
    memcpy(with + 33, added, n_added);
    memcpy(with + 33 + n_added, bytes + 33, size - 33);
    test_write_file(path, with, size + n_added);
    free(bytes);
    free(with);

    LhioImage img, luma, back;
    CHECK_STATUS(lhio_read(path, LHIO_READ_FULL, 0, &img), LH_OK, what);
    CHECK(img.metadata_size == n_want && memcmp(img.metadata, want, n_want) == 0,
          "%s: %zu bytes of metadata read, %zu expected (or other bytes)", what, img.metadata_size,
          n_want);
    CHECK_STATUS(lhio_read(path, LHIO_READ_LUMA, 0, &luma), LH_OK, what);
    CHECK(luma.metadata_size == 0, "%s: %zu bytes of metadata for statistics", what,
          luma.metadata_size);
    lhio_image_clear(&luma);
    CHECK_STATUS(lhio_write(out, &img, NULL), LH_OK, what);
    CHECK_STATUS(lhio_read(out, LHIO_READ_FULL, 0, &back), LH_OK, what);
    CHECK(back.metadata_size == n_want && memcmp(back.metadata, want, n_want) == 0,
          "%s: %zu bytes of metadata written back, %zu expected (or other bytes)", what,
          back.metadata_size, n_want);
    CHECK(same_images(&img, &back), "%s: the pixels changed on the way", what);
    lhio_image_clear(&back);
    lhio_image_clear(&img);
  }
}

int main(void)
{
  char *dir = test_make_dir();
  uint64_t seed = 20240611;
  static const struct {
    int color_type;
    int depths[5];
    bool trns_possible;
  } types[] = {
      {PNG_COLOR_TYPE_GRAY, {1, 2, 4, 8, 16}, true}, {PNG_COLOR_TYPE_GRAY_ALPHA, {8, 16}, false},
      {PNG_COLOR_TYPE_RGB, {8, 16}, true},           {PNG_COLOR_TYPE_RGB_ALPHA, {8, 16}, false},
      {PNG_COLOR_TYPE_PALETTE, {1, 2, 4, 8}, true},
  };
  static const int sizes[][2] = {{37, 21}, {3, 5}, {1, 1}};
  int cases = 0;
  for (size_t t = 0; t < sizeof types / sizeof types[0]; t++)
    for (int d = 0; d < 5 && types[t].depths[d]; d++)
      for (int trns = 0; trns <= (int)types[t].trns_possible; trns++)
        for (int interlace = 0; interlace <= 1; interlace++)
          for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++, cases++)
            test_case(dir, types[t].color_type, types[t].depths[d], trns,
                      interlace ? PNG_INTERLACE_ADAM7 : PNG_INTERLACE_NONE, sizes[s][0],
                      sizes[s][1], &seed);
  printf("%d PNG read/write cases\n", cases);
  test_layouts(dir, &seed);
  test_sbit(dir, &seed);
  test_compression(dir, &seed);
  test_metadata_kept(dir, &seed);
  CHECK(test_count_entries(dir) >= 0, "scratch folder vanished");
  test_remove_dir(dir);
  return test_result("test-png");
}
