/* io-test.h: what the lhio tests share: checks that count failures, a
 * scratch folder, a seeded generator, file helpers, and PNG files written and
 * read with plain libpng (no lhio), so that lhio is checked against libpng
 * itself rather than against its own reader or writer. */
#ifndef IO_TEST_H
#define IO_TEST_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <ftw.h>
#include <png.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lhio.h"

static int test_failures;

#define CHECK(cond, ...)                                                                           \
  do {                                                                                             \
    if (!(cond)) {                                                                                 \
      test_failures++;                                                                             \
      fprintf(stderr, "%s:%d: FAILED: %s: ", __FILE__, __LINE__, #cond);                           \
      fprintf(stderr, __VA_ARGS__);                                                                \
      fprintf(stderr, "\n");                                                                       \
    }                                                                                              \
  } while (0)

/* A status check that prints the library's message with the failure. */
#define CHECK_STATUS(expr, expected, what)                                                         \
  do {                                                                                             \
    int status_ = (expr);                                                                          \
    CHECK(status_ == (expected), "%s: status %d (%s), expected %d (%s): %s", (what), status_,      \
          lh_status_name(status_), (int)(expected), lh_status_name(expected), lh_last_error());    \
  } while (0)

static inline int test_result(const char *name)
{
  if (test_failures)
    fprintf(stderr, "%s: %d check(s) failed\n", name, test_failures);
  else
    printf("%s: all checks passed\n", name);
  return test_failures ? 1 : 0;
}

/* ------------------------------------------------------------------------ */
/* Scratch files                                                             */

static inline char *test_make_dir(void)
{
  const char *base = getenv("TMPDIR");
  char *dir;
  if (asprintf(&dir, "%s/lhio-test-XXXXXX", base && *base ? base : "/tmp") < 0 || !mkdtemp(dir)) {
    perror("mkdtemp");
    exit(99);
  }
  return dir;
}

static inline int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
  return remove(path);
}

static inline void test_remove_dir(char *dir)
{
  nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
  free(dir);
}

/* "dir/name", in one of a few rotating buffers so that two can be live. */
static inline const char *test_path(const char *dir, const char *name)
{
  static char buffers[4][4096];
  static int next;
  char *out = buffers[next++ % 4];
  snprintf(out, sizeof buffers[0], "%s/%s", dir, name);
  return out;
}

static inline int test_count_entries(const char *dir)
{
  DIR *d = opendir(dir);
  if (!d)
    return -1;
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)))
    if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
      n++;
  closedir(d);
  return n;
}

static inline uint8_t *test_read_file(const char *path, size_t *size)
{
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *data = malloc(n > 0 ? (size_t)n : 1);
  *size = fread(data, 1, (size_t)n, f);
  fclose(f);
  return data;
}

static inline void test_write_file(const char *path, const void *data, size_t size)
{
  FILE *f = fopen(path, "wb");
  if (!f || fwrite(data, 1, size, f) != size) {
    perror(path);
    exit(99);
  }
  fclose(f);
}

/* ------------------------------------------------------------------------ */
/* Seeded generator (splitmix64)                                             */

static inline uint32_t test_rand(uint64_t *state)
{
  uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return (uint32_t)((z ^ (z >> 31)) >> 32);
}

/* ------------------------------------------------------------------------ */
/* PNG through plain libpng                                                  */

/* A PNG as its samples: one uint16 per channel per pixel, as the file holds
 * them (palette indices for palette images, unscaled low-bit gray). */
typedef struct {
  int width, height;
  int color_type, bit_depth, interlace;
  int channels;
  uint16_t *samples;
  int n_palette;
  png_color palette[256];
  int n_trans;
  uint8_t trans_alpha[256];
  bool has_trans_color;
  png_color_16 trans_color;
  const char *text; /* a tEXt chunk to add, or NULL */
} RawPng;

static inline int raw_png_channels(int color_type)
{
  switch (color_type) {
  case PNG_COLOR_TYPE_GRAY:
  case PNG_COLOR_TYPE_PALETTE:
    return 1;
  case PNG_COLOR_TYPE_GRAY_ALPHA:
    return 2;
  case PNG_COLOR_TYPE_RGB:
    return 3;
  default:
    return 4;
  }
}

static inline void raw_png_error(png_structp png, png_const_charp message)
{
  fprintf(stderr, "test libpng error: %s\n", message);
  exit(99);
}

/* Packs the samples into PNG rows by hand (MSB-first bits, big-endian
 * 16-bit) and writes them with no libpng transform. */
static inline void raw_png_write(const char *path, const RawPng *raw)
{
  FILE *f = fopen(path, "wb");
  if (!f) {
    perror(path);
    exit(99);
  }
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, raw_png_error, NULL);
  png_infop info = png_create_info_struct(png);
  png_init_io(png, f);
  png_set_IHDR(png, info, raw->width, raw->height, raw->bit_depth, raw->color_type, raw->interlace,
               PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  if (raw->color_type == PNG_COLOR_TYPE_PALETTE)
    png_set_PLTE(png, info, raw->palette, raw->n_palette);
  if (raw->n_trans || raw->has_trans_color)
    png_set_tRNS(png, info, raw->n_trans ? raw->trans_alpha : NULL, raw->n_trans,
                 raw->has_trans_color ? (png_color_16p)&raw->trans_color : NULL);
  if (raw->text) {
    png_text text = {
        .compression = PNG_TEXT_COMPRESSION_NONE, .key = "Comment", .text = (char *)raw->text};
    png_set_text(png, info, &text, 1);
  }
  png_write_info(png, info);

  int ch = raw_png_channels(raw->color_type);
  size_t row_bytes = ((size_t)raw->width * ch * raw->bit_depth + 7) / 8;
  uint8_t *data = calloc(raw->height, row_bytes);
  png_bytep *rows = malloc(raw->height * sizeof *rows);
  for (int y = 0; y < raw->height; y++) {
    uint8_t *row = data + y * row_bytes;
    rows[y] = row;
    for (int i = 0; i < raw->width * ch; i++) {
      unsigned v = raw->samples[(size_t)y * raw->width * ch + i];
      if (raw->bit_depth == 16) {
        row[2 * i] = (uint8_t)(v >> 8);
        row[2 * i + 1] = (uint8_t)v;
      } else if (raw->bit_depth == 8) {
        row[i] = (uint8_t)v;
      } else {
        int per_byte = 8 / raw->bit_depth;
        int shift = 8 - raw->bit_depth * (i % per_byte + 1);
        row[i / per_byte] |= (uint8_t)(v << shift);
      }
    }
  }
  png_write_image(png, rows);
  png_write_end(png, info);
  png_destroy_write_struct(&png, &info);
  fclose(f);
  free(rows);
  free(data);
}

/* Reads a PNG's samples as stored (png_set_packing only unpacks low-bit
 * samples to one per byte; 16-bit samples are joined from big-endian here). */
static inline void raw_png_read(const char *path, RawPng *raw)
{
  memset(raw, 0, sizeof *raw);
  FILE *f = fopen(path, "rb");
  if (!f) {
    perror(path);
    exit(99);
  }
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, NULL, raw_png_error, NULL);
  png_infop info = png_create_info_struct(png);
  png_init_io(png, f);
  png_read_info(png, info);
  png_uint_32 w, h;
  png_get_IHDR(png, info, &w, &h, &raw->bit_depth, &raw->color_type, &raw->interlace, NULL, NULL);
  raw->width = (int)w;
  raw->height = (int)h;
  raw->channels = raw_png_channels(raw->color_type);
  if (raw->bit_depth < 8)
    png_set_packing(png);
  png_set_interlace_handling(png);
  png_read_update_info(png, info);
  size_t row_bytes = png_get_rowbytes(png, info);
  uint8_t *data = malloc(h * row_bytes);
  png_bytep *rows = malloc(h * sizeof *rows);
  for (png_uint_32 y = 0; y < h; y++)
    rows[y] = data + y * row_bytes;
  png_read_image(png, rows);
  png_read_end(png, NULL);
  png_destroy_read_struct(&png, &info, NULL);
  fclose(f);

  size_t per_row = (size_t)w * raw->channels;
  raw->samples = malloc(h * per_row * sizeof *raw->samples);
  for (png_uint_32 y = 0; y < h; y++)
    for (size_t i = 0; i < per_row; i++) {
      const uint8_t *row = rows[y];
      raw->samples[y * per_row + i] =
          raw->bit_depth == 16 ? (uint16_t)(row[2 * i] << 8 | row[2 * i + 1]) : row[i];
    }
  free(rows);
  free(data);
}

/* ------------------------------------------------------------------------ */
/* PNG chunk CRC, to patch headers for the bad-input tests                   */

static inline uint32_t test_crc32(const uint8_t *data, size_t n)
{
  uint32_t crc = 0xffffffffu;
  for (size_t i = 0; i < n; i++) {
    crc ^= data[i];
    for (int k = 0; k < 8; k++)
      crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1u)));
  }
  return crc ^ 0xffffffffu;
}

static inline void test_put_be32(uint8_t *p, uint32_t v)
{
  p[0] = (uint8_t)(v >> 24);
  p[1] = (uint8_t)(v >> 16);
  p[2] = (uint8_t)(v >> 8);
  p[3] = (uint8_t)v;
}

#endif /* IO_TEST_H */
