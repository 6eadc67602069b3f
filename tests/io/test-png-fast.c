/* test-png-fast.c: the fast path for common PNGs (png-fast.c) against png.c's
 * libpng reader, frame for frame and byte for byte: seeded random, smooth and
 * constant images of every covered colour type and bit depth, odd sizes,
 * every filter type (forced per row by our own encoder, and chosen by
 * libpng's), one or many IDAT chunks, the bundled samples; files it must
 * leave to libpng (palette, tRNS, interlaced, low bit depths); and broken
 * files, which must give exactly libpng's status and message.
 * Usage: test-png-fast [SAMPLES_DIR] */
#include <zlib.h>

#include "io-test.h"
#include "lhio-private.h"

#ifndef LHIO_HAVE_LIBDEFLATE
int main(void)
{
  printf("SKIP: built without libdeflate, so there is no PNG fast path to test\n");
  return 77;
}
#else

#define MAX_PIXELS ((uint64_t)1 << 40)

/* ------------------------------------------------------------------------ */
/* A growable byte buffer                                                    */

typedef struct {
  uint8_t *data;
  size_t size, capacity;
} Bytes;

static void bytes_put(Bytes *b, const void *data, size_t n)
{
  if (b->size + n > b->capacity) {
    b->capacity = (b->size + n) * 2 + 64;
    b->data = realloc(b->data, b->capacity);
  }
  memcpy(b->data + b->size, data, n);
  b->size += n;
}

static void bytes_put_be32(Bytes *b, uint32_t v)
{
  uint8_t p[4];
  test_put_be32(p, v);
  bytes_put(b, p, 4);
}

static void put_chunk(Bytes *b, const char *type, const uint8_t *data, size_t n)
{
  bytes_put_be32(b, (uint32_t)n);
  size_t start = b->size;
  bytes_put(b, type, 4);
  if (n)
    bytes_put(b, data, n);
  bytes_put_be32(b, (uint32_t)crc32(0, b->data + start, (uInt)(n + 4)));
}

/* A file's signature and IHDR (compression, filter method and interlacing 0). */
static void put_header(Bytes *b, int width, int height, int depth, int color_type)
{
  static const uint8_t signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  bytes_put(b, signature, 8);
  uint8_t ihdr[13] = {0};
  test_put_be32(ihdr, (uint32_t)width);
  test_put_be32(ihdr + 4, (uint32_t)height);
  ihdr[8] = (uint8_t)depth;
  ihdr[9] = (uint8_t)color_type;
  put_chunk(b, "IHDR", ihdr, 13);
}

/* ------------------------------------------------------------------------ */
/* Images and our own encoder                                                */

typedef enum { CONTENT_NOISE, CONTENT_SMOOTH, CONTENT_CONSTANT } Content;

static const char *content_name[] = {"noise", "smooth", "constant"};

static int type_channels(int color_type)
{
  return color_type == 0 ? 1 : color_type == 4 ? 2 : color_type == 2 ? 3 : 4;
}

/* Unfiltered rows, as the file's bytes (16-bit big-endian). */
static uint8_t *make_rows(int width, int height, int color_type, int depth, Content content,
                          uint64_t *seed)
{
  size_t row_bytes = (size_t)width * type_channels(color_type) * depth / 8;
  uint8_t *rows = malloc(row_bytes * height + 1);
  uint8_t level = (uint8_t)test_rand(seed);
  for (int y = 0; y < height; y++)
    for (size_t i = 0; i < row_bytes; i++) {
      uint8_t v;
      if (content == CONTENT_NOISE)
        v = (uint8_t)test_rand(seed);
      else if (content == CONTENT_CONSTANT)
        v = level;
      else /* a gradient with a little noise: the predictors' ties and near-ties */
        v = (uint8_t)(i / 3 + 2 * y + (test_rand(seed) % 5));
      rows[y * row_bytes + i] = v;
    }
  return rows;
}

static uint8_t paeth(int a, int b, int c)
{
  int p = a + b - c, pa = abs(p - a), pb = abs(p - b), pc = abs(p - c);
  if (pa <= pb && pa <= pc)
    return (uint8_t)a;
  return (uint8_t)(pb <= pc ? b : c);
}

/* Filters one row by the PNG specification's definition. */
static void filter_row(uint8_t *out, const uint8_t *row, const uint8_t *prev, size_t n, int bpp,
                       int filter)
{
  for (size_t i = 0; i < n; i++) {
    int a = i >= (size_t)bpp ? row[i - bpp] : 0;
    int b = prev ? prev[i] : 0;
    int c = prev && i >= (size_t)bpp ? prev[i - bpp] : 0;
    int predicted = filter == 1   ? a
                    : filter == 2 ? b
                    : filter == 3 ? (a + b) / 2
                    : filter == 4 ? paeth(a, b, c)
                                  : 0;
    out[i] = (uint8_t)(row[i] - predicted);
  }
}

typedef struct {
  int filter;                   /* 0-4 for every row, or -1: a random one per row */
  int level;                    /* zlib level, 0 (stored blocks) to 9 */
  size_t idat_chunk;            /* bytes an IDAT chunk at most; 0: one chunk */
  bool text_before, text_after; /* ancillary chunks around the IDAT run */
} EncodeOptions;

/* A whole PNG file from unfiltered rows, written here without libpng. */
static Bytes encode_png(const uint8_t *rows, int width, int height, int color_type, int depth,
                        const EncodeOptions *o, uint64_t *seed)
{
  int bpp = type_channels(color_type) * depth / 8;
  size_t row_bytes = (size_t)width * bpp;
  size_t filtered_size = (row_bytes + 1) * height;
  uint8_t *filtered = malloc(filtered_size);
  for (int y = 0; y < height; y++) {
    uint8_t *f = filtered + y * (row_bytes + 1);
    f[0] = (uint8_t)(o->filter >= 0 ? o->filter : (int)(test_rand(seed) % 5));
    filter_row(f + 1, rows + y * row_bytes, y ? rows + (y - 1) * row_bytes : NULL, row_bytes, bpp,
               f[0]);
  }
  uLongf zsize = compressBound(filtered_size);
  uint8_t *z = malloc(zsize);
  if (compress2(z, &zsize, filtered, filtered_size, o->level) != Z_OK) {
    fprintf(stderr, "compress2 failed\n");
    exit(99);
  }
  Bytes b = {0};
  put_header(&b, width, height, depth, color_type);
  if (o->text_before)
    put_chunk(&b, "tEXt", (const uint8_t *)"Comment\0before", 14);
  size_t step = o->idat_chunk ? o->idat_chunk : zsize;
  for (size_t at = 0; at < zsize; at += step)
    put_chunk(&b, "IDAT", z + at, at + step <= zsize ? step : zsize - at);
  if (o->text_after)
    put_chunk(&b, "tEXt", (const uint8_t *)"Comment\0after", 13);
  put_chunk(&b, "IEND", NULL, 0);
  free(z);
  free(filtered);
  return b;
}

/* ------------------------------------------------------------------------ */
/* The comparison                                                            */

static int read_libpng(const Bytes *file, LhioImage *image, char *message, size_t message_size)
{
  memset(image, 0, sizeof *image);
  FILE *f = fmemopen(file->data, file->size, "rb");
  int status = lhio_png_read_libpng(f, "x.png", MAX_PIXELS, image);
  fclose(f);
  snprintf(message, message_size, "%s", status < 0 ? lh_last_error() : "");
  if (status < 0)
    lhio_image_clear(image);
  return status;
}

static void check_same_image(const char *what, const LhioImage *fast, const LhioImage *ref)
{
  const LhFrame *a = &fast->frame, *b = &ref->frame;
  CHECK(a->format == b->format && a->width == b->width && a->height == b->height &&
            a->bit_depth == b->bit_depth && a->strides[0] == b->strides[0] &&
            a->memory == b->memory,
        "%s: frame %s %dx%d depth %d stride %zu, libpng %s %dx%d depth %d stride %zu", what,
        lh_format_name(a->format), a->width, a->height, a->bit_depth, a->strides[0],
        lh_format_name(b->format), b->width, b->height, b->bit_depth, b->strides[0]);
  CHECK(fast->source_bit_depth == ref->source_bit_depth &&
            fast->source_channels == ref->source_channels &&
            fast->source_palette == ref->source_palette &&
            fast->source_interlaced == ref->source_interlaced,
        "%s: source fields differ", what);
  CHECK((fast->alpha != NULL) == (ref->alpha != NULL) && fast->alpha_stride == ref->alpha_stride,
        "%s: alpha plane %p stride %zu, libpng %p stride %zu", what, (void *)fast->alpha,
        fast->alpha_stride, (void *)ref->alpha, ref->alpha_stride);
  if (a->format != b->format || a->width != b->width || a->height != b->height ||
      a->strides[0] != b->strides[0] || a->planes[0] != fast->pixels)
    return;
  size_t row = lhio_packed_row_bytes(a);
  for (int y = 0; y < a->height; y++) {
    const uint8_t *p = a->planes[0] + y * a->strides[0], *q = b->planes[0] + y * b->strides[0];
    if (memcmp(p, q, row) != 0) {
      size_t x = 0;
      while (p[x] == q[x])
        x++;
      CHECK(false, "%s: row %d differs from byte %zu: %u, libpng %u", what, y, x, p[x], q[x]);
      return;
    }
    if (fast->alpha && ref->alpha && fast->alpha_stride == ref->alpha_stride)
      CHECK(memcmp(fast->alpha + y * fast->alpha_stride, ref->alpha + y * ref->alpha_stride,
                   fast->alpha_stride) == 0,
            "%s: alpha row %d differs", what, y);
  }
}

/* A file the fast path covers: it must take it, and give libpng's frame;
 * through lhio_read_memory and lhio_read too. */
static void check_covered(const char *what, const Bytes *file, const char *dir, bool via_api)
{
  LhioImage ref, fast = {0};
  char message[512];
  int ref_status = read_libpng(file, &ref, message, sizeof message);
  CHECK_STATUS(ref_status, LH_OK, what);
  int status = lhio_png_fast_read(file->data, file->size, MAX_PIXELS, &fast);
  CHECK(status == LH_OK, "%s: the fast path declined a file it covers", what);
  if (status == LH_OK && ref_status == LH_OK)
    check_same_image(what, &fast, &ref);
  lhio_image_clear(&fast);
  if (via_api && ref_status == LH_OK) {
    char label[600];
    LhioEncoded encoded = {.type = LHIO_FILE_PNG, .data = file->data, .size = file->size};
    LhioImage image;
    snprintf(label, sizeof label, "%s (lhio_read_memory)", what);
    CHECK_STATUS(lhio_read_memory("x.png", &encoded, LHIO_READ_LUMA, 0, &image), LH_OK, label);
    check_same_image(label, &image, &ref);
    CHECK(image.decoder == LHIO_DECODER_LIBPNG, "%s: decoder %d", label, (int)image.decoder);
    lhio_image_clear(&image);
    const char *path = test_path(dir, "covered.png");
    test_write_file(path, file->data, file->size);
    snprintf(label, sizeof label, "%s (lhio_read)", what);
    CHECK_STATUS(lhio_read(path, LHIO_READ_FULL, 0, &image), LH_OK, label);
    check_same_image(label, &image, &ref);
    lhio_image_clear(&image);
  }
  lhio_image_clear(&ref);
}

/* A file the fast path must leave to libpng (out of its scope, or broken):
 * it declines, and lhio's readers give libpng's status, message and frame. */
static void check_declined(const char *what, const Bytes *file, const char *dir)
{
  LhioImage ref, fast = {0}, image;
  char message[512];
  int ref_status = read_libpng(file, &ref, message, sizeof message);
  int status = lhio_png_fast_read(file->data, file->size, MAX_PIXELS, &fast);
  CHECK(status == LHIO_PNG_FAST_DECLINED, "%s: the fast path took it (status %d)", what, status);
  CHECK(fast.pixels == NULL && fast.frame.width == 0, "%s: declined but touched the image", what);
  lhio_image_clear(&fast);

  char label[600];
  LhioEncoded encoded = {.type = LHIO_FILE_PNG, .data = file->data, .size = file->size};
  const char *path = test_path(dir, "x.png");
  test_write_file(path, file->data, file->size);
  for (int via_file = 0; via_file < 2; via_file++) {
    snprintf(label, sizeof label, "%s (%s)", what, via_file ? "lhio_read" : "lhio_read_memory");
    int s = via_file ? lhio_read(path, LHIO_READ_FULL, MAX_PIXELS, &image)
                     : lhio_read_memory("x.png", &encoded, LHIO_READ_FULL, MAX_PIXELS, &image);
    CHECK(s == ref_status, "%s: status %d, libpng alone %d", label, s, ref_status);
    /* the path is the same in both: the file was read as "<dir>/x.png" */
    if (s < 0 && ref_status < 0) {
      const char *reason = strstr(lh_last_error(), "x.png: ");
      CHECK(reason && strcmp(reason, message) == 0, "%s: message \"%s\", libpng alone \"%s\"",
            label, lh_last_error(), message);
    }
    if (s == LH_OK && ref_status == LH_OK)
      check_same_image(label, &image, &ref);
    lhio_image_clear(&image);
  }
  lhio_image_clear(&ref);
}

/* ------------------------------------------------------------------------ */
/* Cases                                                                     */

static const int color_types[] = {0, 4, 2, 6};
static const int sizes[][2] = {{1, 1}, {3, 7}, {1023, 5}, {2, 1}, {1, 9}, {64, 48}, {127, 33}};

static void test_own_encoder(const char *dir, uint64_t *seed)
{
  int cases = 0;
  for (size_t t = 0; t < 4; t++)
    for (int depth = 8; depth <= 16; depth += 8)
      for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (int filter = -1; filter <= 4; filter++)
          for (int content = 0; content < 3; content++) {
            int w = sizes[s][0], h = sizes[s][1];
            if (content == CONTENT_CONSTANT && filter != -1)
              continue;
            uint8_t *rows = make_rows(w, h, color_types[t], depth, content, seed);
            EncodeOptions o = {.filter = filter,
                               .level = (int)(test_rand(seed) % 10),
                               .idat_chunk = test_rand(seed) % 2 ? 0 : 1 + test_rand(seed) % 300,
                               .text_before = test_rand(seed) % 2,
                               .text_after = test_rand(seed) % 2};
            Bytes file = encode_png(rows, w, h, color_types[t], depth, &o, seed);
            char what[256];
            snprintf(what, sizeof what, "type %d depth %d %dx%d filter %d %s level %d idat %zu",
                     color_types[t], depth, w, h, filter, content_name[content], o.level,
                     o.idat_chunk);
            check_covered(what, &file, dir, cases++ % 7 == 0);
            free(file.data);
            free(rows);
          }
  printf("own encoder: %d files\n", cases);
}

static void write_to_bytes(png_structp png, png_bytep data, size_t n)
{
  bytes_put(png_get_io_ptr(png), data, n);
}

static void flush_nothing(png_structp png)
{
}

/* libpng's own writer: its filter choices (one forced, or its heuristic),
 * small compression buffers for many IDAT chunks, its windows for small
 * images, and what else is asked for (palette, tRNS, interlacing...). */
typedef struct {
  int color_type, depth, interlace, filters, buffer;
  bool trns, gamma, srgb, sbit;
} LibpngOptions;

static Bytes libpng_encode(int w, int h, const LibpngOptions *o, uint64_t *seed)
{
  Bytes b = {0};
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, raw_png_error, NULL);
  png_infop info = png_create_info_struct(png);
  png_set_write_fn(png, &b, write_to_bytes, flush_nothing);
  png_set_IHDR(png, info, w, h, o->depth, o->color_type, o->interlace, 0, 0);
  png_set_filter(png, 0, o->filters);
  if (o->buffer)
    png_set_compression_buffer_size(png, o->buffer);
  if (o->color_type == PNG_COLOR_TYPE_PALETTE) {
    png_color palette[256];
    for (int i = 0; i < 256; i++)
      palette[i] = (png_color){(png_byte)i, (png_byte)(255 - i), (png_byte)(i * 7)};
    png_set_PLTE(png, info, palette, 1 << o->depth);
  }
  if (o->trns) {
    png_color_16 key = {.red = 7, .green = 7, .blue = 7, .gray = 7};
    png_byte alpha[2] = {0, 128};
    png_set_tRNS(png, info, alpha, o->color_type == PNG_COLOR_TYPE_PALETTE ? 2 : 0, &key);
  }
  if (o->gamma)
    png_set_gAMA(png, info, 0.5);
  if (o->srgb)
    png_set_sRGB(png, info, PNG_sRGB_INTENT_PERCEPTUAL);
  if (o->sbit) {
    png_color_8 sig = {.red = 5, .green = 6, .blue = 5, .gray = 5, .alpha = 3};
    png_set_sBIT(png, info, &sig);
  }
  png_write_info(png, info);
  int bits =
      o->depth * (o->color_type == PNG_COLOR_TYPE_PALETTE ? 1 : type_channels(o->color_type));
  size_t row_bytes = ((size_t)w * bits + 7) / 8;
  uint8_t *rows = make_rows((int)row_bytes, h, 0, 8, CONTENT_SMOOTH, seed);
  png_bytep *pointers = malloc(h * sizeof *pointers);
  for (int y = 0; y < h; y++)
    pointers[y] = rows + y * row_bytes;
  png_write_image(png, pointers);
  png_write_end(png, info);
  png_destroy_write_struct(&png, &info);
  free(pointers);
  free(rows);
  return b;
}

static void test_libpng_writer(const char *dir, uint64_t *seed)
{
  static const int filters[] = {PNG_FILTER_NONE, PNG_FILTER_SUB,   PNG_FILTER_UP,
                                PNG_FILTER_AVG,  PNG_FILTER_PAETH, PNG_ALL_FILTERS};
  int cases = 0;
  for (size_t t = 0; t < 4; t++)
    for (int depth = 8; depth <= 16; depth += 8)
      for (size_t f = 0; f < sizeof filters / sizeof filters[0]; f++) {
        LibpngOptions o = {.color_type = color_types[t],
                           .depth = depth,
                           .filters = filters[f],
                           .buffer = f % 2 ? 97 : 0,
                           .gamma = f == 2,
                           .srgb = f == 3,
                           .sbit = f == 4};
        int w = 5 + (int)(test_rand(seed) % 300), h = 1 + (int)(test_rand(seed) % 40);
        Bytes file = libpng_encode(w, h, &o, seed);
        char what[200];
        snprintf(what, sizeof what, "libpng: type %d depth %d %dx%d filters 0x%x buffer %d",
                 o.color_type, depth, w, h, o.filters, o.buffer);
        check_covered(what, &file, dir, f == 5);
        free(file.data);
        cases++;
      }
  /* Out of scope: libpng reads them, the fast path declines. */
  static const LibpngOptions others[] = {
      {.color_type = PNG_COLOR_TYPE_PALETTE, .depth = 8, .filters = PNG_ALL_FILTERS},
      {.color_type = PNG_COLOR_TYPE_PALETTE, .depth = 4, .filters = PNG_ALL_FILTERS, .trns = true},
      {.color_type = PNG_COLOR_TYPE_GRAY, .depth = 1, .filters = PNG_ALL_FILTERS},
      {.color_type = PNG_COLOR_TYPE_GRAY, .depth = 4, .filters = PNG_ALL_FILTERS},
      {.color_type = PNG_COLOR_TYPE_GRAY, .depth = 8, .filters = PNG_ALL_FILTERS, .trns = true},
      {.color_type = PNG_COLOR_TYPE_RGB, .depth = 8, .filters = PNG_ALL_FILTERS, .trns = true},
      {.color_type = PNG_COLOR_TYPE_RGB, .depth = 16, .filters = PNG_ALL_FILTERS, .trns = true},
      {.color_type = PNG_COLOR_TYPE_RGB, .depth = 8, .filters = PNG_ALL_FILTERS, .interlace = 1},
      {.color_type = PNG_COLOR_TYPE_RGBA, .depth = 16, .filters = PNG_ALL_FILTERS, .interlace = 1},
  };
  for (size_t i = 0; i < sizeof others / sizeof others[0]; i++) {
    Bytes file = libpng_encode(37, 11, &others[i], seed);
    char what[200];
    snprintf(what, sizeof what, "out of scope: type %d depth %d trns %d interlace %d",
             others[i].color_type, others[i].depth, others[i].trns, others[i].interlace);
    check_declined(what, &file, dir);
    LhioImage image;
    CHECK_STATUS(lhio_read_memory(
                     "x.png",
                     &(LhioEncoded){.type = LHIO_FILE_PNG, .data = file.data, .size = file.size},
                     LHIO_READ_FULL, 0, &image),
                 LH_OK, what);
    lhio_image_clear(&image);
    free(file.data);
    cases++;
  }
  printf("libpng writer: %d files\n", cases);
}

static void test_samples(const char *dir, const char *samples)
{
  static const char *names[] = {"camera-gray.png", "cat-chelsea.png", "mountain-trail-gray16.png"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", samples, names[i]);
    Bytes file = {0};
    file.data = test_read_file(path, &file.size);
    CHECK(file.data != NULL, "cannot read %s", path);
    if (file.data)
      check_covered(names[i], &file, dir, true);
    free(file.data);
  }
}

/* ------------------------------------------------------------------------ */
/* Broken files                                                              */

/* The offset of the nth chunk of a type, or 0. */
static size_t find_chunk(const Bytes *b, const char *type, int nth)
{
  for (size_t pos = 8; pos + 12 <= b->size;) {
    uint32_t length = (uint32_t)b->data[pos] << 24 | b->data[pos + 1] << 16 |
                      b->data[pos + 2] << 8 | b->data[pos + 3];
    if (memcmp(b->data + pos + 4, type, 4) == 0 && nth-- == 0)
      return pos;
    pos += 12 + (size_t)length;
  }
  return 0;
}

static uint32_t chunk_length(const Bytes *b, size_t chunk)
{
  const uint8_t *p = b->data + chunk;
  return (uint32_t)p[0] << 24 | p[1] << 16 | p[2] << 8 | p[3];
}

static void fix_crc(Bytes *b, size_t chunk)
{
  uint32_t length = chunk_length(b, chunk);
  test_put_be32(b->data + chunk + 8 + length, test_crc32(b->data + chunk + 4, 4 + length));
}

static Bytes copy_of(const Bytes *b)
{
  Bytes c = {malloc(b->size + 64), b->size, b->size + 64};
  memcpy(c.data, b->data, b->size);
  return c;
}

/* The file with a chunk put in before the chunk at offset at. */
static Bytes with_chunk(const Bytes *b, size_t at, const char *type, const uint8_t *data, size_t n)
{
  Bytes c = {0};
  bytes_put(&c, b->data, at);
  put_chunk(&c, type, data, n);
  bytes_put(&c, b->data + at, b->size - at);
  return c;
}

/* Filtered rows compressed into one IDAT by zlib at level 6, as given. */
static Bytes with_stream(int w, int h, int color_type, const uint8_t *filtered, size_t n)
{
  uLongf zsize = compressBound(n);
  uint8_t *z = malloc(zsize);
  compress2(z, &zsize, filtered, n, 6);
  Bytes b = {0};
  put_header(&b, w, h, 8, color_type);
  put_chunk(&b, "IDAT", z, zsize);
  put_chunk(&b, "IEND", NULL, 0);
  free(z);
  return b;
}

static void test_broken(const char *dir, uint64_t *seed)
{
  int w = 45, h = 13;
  uint8_t *rows = make_rows(w, h, 2, 8, CONTENT_SMOOTH, seed);
  EncodeOptions o = {.filter = -1, .level = 6, .idat_chunk = 200, .text_after = true};
  Bytes good = encode_png(rows, w, h, 2, 8, &o, seed);
  check_covered("the good file", &good, dir, true);
  size_t ihdr = find_chunk(&good, "IHDR", 0), idat = find_chunk(&good, "IDAT", 0);
  size_t idat2 = find_chunk(&good, "IDAT", 1), text = find_chunk(&good, "tEXt", 0);
  size_t iend = find_chunk(&good, "IEND", 0);
  size_t last_idat = text; /* the run ends before tEXt */
  CHECK(ihdr && idat && idat2 && text && iend, "the test file lacks a chunk");

  struct {
    const char *what;
    size_t offset;
    bool fix; /* recompute the chunk's CRC after the flip */
    size_t chunk;
  } flips[] = {
      {"IHDR CRC flipped", ihdr + 8 + 13, false, 0},
      {"IHDR data flipped", ihdr + 8 + 2, false, 0},
      {"IHDR bit depth 7 (CRC right)", ihdr + 8 + 8, true, ihdr},
      {"IHDR interlace 2 (CRC right)", ihdr + 8 + 12, true, ihdr},
      {"IHDR compression 1 (CRC right)", ihdr + 8 + 10, true, ihdr},
      {"IDAT data flipped", idat + 8 + 50, false, 0},
      {"second IDAT CRC flipped", idat2 + 8 + chunk_length(&good, idat2), false, 0},
      {"zlib header flipped (CRC right)", idat + 8, true, idat},
      {"deflate data flipped (CRC right)", idat + 8 + 100, true, idat},
      {"tEXt CRC flipped (libpng warns only)", text + 8 + 13, false, 0},
      {"IEND CRC flipped", iend + 8, false, 0},
      {"IEND type flipped", iend + 4, false, 0},
      {"IDAT type to an invalid name", idat + 5, false, 0},
  };
  for (size_t i = 0; i < sizeof flips / sizeof flips[0]; i++) {
    Bytes bad = copy_of(&good);
    bad.data[flips[i].offset] ^= flips[i].offset == idat + 5 ? 0x40 : 0x10;
    if (flips[i].fix)
      fix_crc(&bad, flips[i].chunk);
    if (strstr(flips[i].what, "libpng warns"))
      check_covered(flips[i].what, &bad, dir, false);
    else
      check_declined(flips[i].what, &bad, dir);
    free(bad.data);
  }

  /* Adler-32 wrong: libpng reads the pixels and only warns; the fast path
   * leaves it to libpng. */
  {
    Bytes bad = copy_of(&good);
    bad.data[last_idat - 5] ^= 1;
    size_t last = idat;
    for (size_t k = idat; k < last_idat; k += 12 + chunk_length(&bad, k))
      last = k;
    fix_crc(&bad, last);
    check_declined("Adler-32 flipped (CRC right)", &bad, dir);
    free(bad.data);
  }

  /* Cut short at every kind of place. */
  size_t cuts[] = {8,    20,        ihdr + 25, idat + 4, idat + 60,    idat2 - 1,
                   text, text + 10, iend,      iend + 6, good.size - 1};
  for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
    Bytes bad = copy_of(&good);
    bad.size = cuts[i];
    char what[64];
    snprintf(what, sizeof what, "cut at %zu of %zu", cuts[i], good.size);
    check_declined(what, &bad, dir);
    free(bad.data);
  }

  /* Chunks libpng refuses or that change the pixels. */
  static const uint8_t palette[6] = {1, 2, 3, 4, 5, 6};
  struct {
    const char *what;
    size_t at;
    const char *type;
    const uint8_t *data;
    size_t n;
    bool covered;
  } inserts[] = {
      {"unknown critical chunk before IDAT", idat, "ABCD", palette, 6, false},
      {"unknown critical chunk before IEND", iend, "ABCD", palette, 6, false},
      {"PLTE in an RGB image", idat, "PLTE", palette, 6, false},
      {"tRNS in an RGB image", idat, "tRNS", palette, 6, false},
      {"second IHDR", idat, "IHDR", palette, 6, false},
      {"IDAT after tEXt (after the run)", iend, "IDAT", palette, 6, false},
      {"unknown ancillary chunk before IDAT", idat, "abCd", palette, 6, true},
      {"unknown ancillary chunk before IEND", iend, "zzzz", palette, 6, true},
      {"empty IDAT in the run", idat2, "IDAT", NULL, 0, true},
  };
  for (size_t i = 0; i < sizeof inserts / sizeof inserts[0]; i++) {
    Bytes bad = with_chunk(&good, inserts[i].at, inserts[i].type, inserts[i].data, inserts[i].n);
    if (inserts[i].covered)
      check_covered(inserts[i].what, &bad, dir, false);
    else
      check_declined(inserts[i].what, &bad, dir);
    free(bad.data);
  }

  /* Garbage after IEND: libpng never reads it; both give the image. */
  {
    Bytes more = copy_of(&good);
    bytes_put(&more, "garbage after IEND", 18);
    check_covered("garbage after IEND", &more, dir, true);
    free(more.data);
  }
  /* Garbage between the last IDAT and IEND: no chunk libpng would read. */
  {
    Bytes bad = {0};
    bytes_put(&bad, good.data, iend);
    bytes_put(&bad, "\x00\x00\x00\x02!!junkcrc", 12);
    bytes_put(&bad, good.data + iend, good.size - iend);
    check_declined("garbage before IEND", &bad, dir);
    free(bad.data);
  }

  /* Streams of the wrong length, or rows with a bad filter byte, each
   * compressed properly, so that only the content is wrong. */
  size_t n = (size_t)(3 * w + 1) * h;
  uint8_t *filtered = calloc(n + 3 * w + 1, 1);
  for (size_t k = 0; k < n + 3 * w + 1; k++)
    filtered[k] = k % (3 * w + 1) == 0 ? 0 : (uint8_t)test_rand(seed);
  struct {
    const char *what;
    size_t size;
    size_t bad_filter_row; /* or SIZE_MAX */
  } streams[] = {
      {"one row missing", n - (3 * w + 1), SIZE_MAX},
      {"one byte missing", n - 1, SIZE_MAX},
      {"one byte too many (libpng warns only)", n + 1, SIZE_MAX},
      {"one row too many (libpng warns only)", n + 3 * w + 1, SIZE_MAX},
      {"filter type 5 in row 0", n, 0},
      {"filter type 5 in the last row", n, (size_t)h - 1},
  };
  for (size_t i = 0; i < sizeof streams / sizeof streams[0]; i++) {
    uint8_t *f = malloc(streams[i].size);
    memcpy(f, filtered, streams[i].size);
    if (streams[i].bad_filter_row != SIZE_MAX)
      f[streams[i].bad_filter_row * (3 * w + 1)] = 5;
    Bytes bad = with_stream(w, h, 2, f, streams[i].size);
    check_declined(streams[i].what, &bad, dir);
    free(bad.data);
    free(f);
  }
  /* The right length: the check above is not declining everything. */
  Bytes right = with_stream(w, h, 2, filtered, n);
  check_covered("a stream of the right length", &right, dir, false);
  free(right.data);

  /* Above the pixel limit and empty: libpng's messages. */
  {
    LhioImage image;
    LhioEncoded encoded = {.type = LHIO_FILE_PNG, .data = good.data, .size = good.size};
    CHECK_STATUS(lhio_read_memory("x.png", &encoded, LHIO_READ_FULL, (uint64_t)w * h - 1, &image),
                 LH_ERROR_TOO_LARGE, "one pixel above the limit");
    CHECK(strstr(lh_last_error(), "above the limit"), "limit message: %s", lh_last_error());
    CHECK_STATUS(lhio_read_memory("x.png", &encoded, LHIO_READ_FULL, (uint64_t)w * h, &image),
                 LH_OK, "at the limit");
    lhio_image_clear(&image);
    Bytes bad = copy_of(&good);
    test_put_be32(bad.data + ihdr + 8, 0);
    fix_crc(&bad, ihdr);
    check_declined("width 0", &bad, dir);
    free(bad.data);
  }
  free(filtered);
  free(good.data);
  free(rows);
}

int main(int argc, char **argv)
{
  uint64_t seed = 20240611;
  char *dir = test_make_dir();
  test_own_encoder(dir, &seed);
  test_libpng_writer(dir, &seed);
  if (argc > 1)
    test_samples(dir, argv[1]);
  test_broken(dir, &seed);
  test_remove_dir(dir);
  return test_result("test-png-fast");
}
#endif
