/* test-errors.c: how lhio refuses what it cannot read or write: missing,
 * empty, unknown, truncated, corrupt, oversized and empty-dimension files;
 * failed writes that must leave nothing behind; messages "<path>: <reason>";
 * libpng/libjpeg never printing on their own; and a program's pixel
 * allocator, given back every buffer it gave, on failures too. */
#include <fcntl.h>

/* jpeglib.h needs stdio.h (from io-test.h) before it. */
#include "io-test.h"

#include <jpeglib.h>

static void check_message(const char *what, const char *path)
{
  const char *msg = lh_last_error();
  size_t n = strlen(path);
  CHECK(strncmp(msg, path, n) == 0 && strncmp(msg + n, ": ", 2) == 0 && msg[n + 2] != '\0',
        "%s: message \"%s\" is not \"%s: <reason>\"", what, msg, path);
}

static void expect_read_error(const char *path, int status, const char *what)
{
  for (int mode = LHIO_READ_FULL; mode <= LHIO_READ_LUMA; mode++) {
    LhioImage img;
    memset(&img, 0x55, sizeof img); /* the reader must clear it */
    CHECK_STATUS(lhio_read(path, mode, 0, &img), status, what);
    check_message(what, path);
    CHECK(img.pixels == NULL && img.alpha == NULL && img.frame.width == 0,
          "%s: image not left empty", what);
  }
}

/* A small valid PNG written with plain libpng, its bytes returned. */
static uint8_t *make_png(const char *path, int w, int h, size_t *size, const char *text)
{
  RawPng raw = {.width = w,
                .height = h,
                .color_type = PNG_COLOR_TYPE_RGB,
                .bit_depth = 8,
                .channels = 3,
                .text = text};
  raw.samples = calloc((size_t)w * h * 3, sizeof *raw.samples);
  for (int i = 0; i < w * h * 3; i++)
    raw.samples[i] = (uint16_t)(i * 7 % 256);
  raw_png_write(path, &raw);
  free(raw.samples);
  return test_read_file(path, size);
}

static uint8_t *make_jpeg(const char *path, int w, int h, size_t *size)
{
  uint8_t *p = malloc((size_t)w * h * 3);
  for (int i = 0; i < w * h * 3; i++)
    p[i] = (uint8_t)(i * 13 % 256);
  LhioImage img = {.type = LHIO_FILE_JPEG, .pixels = p};
  img.frame = (LhFrame){.format = LH_FORMAT_RGB,
                        .memory = LH_MEMORY_HOST,
                        .width = w,
                        .height = h,
                        .bit_depth = 8,
                        .planes = {p}};
  if (lhio_write(path, &img, NULL) != LH_OK) {
    fprintf(stderr, "cannot write %s: %s\n", path, lh_last_error());
    exit(99);
  }
  lhio_image_clear(&img);
  return test_read_file(path, size);
}

/* Offset of a JPEG marker (0xff, code) in data, or 0. */
static size_t find_marker(const uint8_t *data, size_t size, uint8_t code)
{
  for (size_t i = 2; i + 1 < size; i++)
    if (data[i] == 0xff && data[i + 1] == code)
      return i;
  return 0;
}

static void test_sniff(void)
{
  static const uint8_t png[] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0};
  static const uint8_t jpeg[] = {0xff, 0xd8, 0xff, 0xe0};
  static const uint8_t gif[] = {'G', 'I', 'F', '8', '9', 'a', 0, 0};
  CHECK(lhio_sniff(png, sizeof png) == LHIO_FILE_PNG, "PNG magic not recognised");
  CHECK(lhio_sniff(png, 7) == LHIO_FILE_UNKNOWN, "7 bytes of PNG magic taken for PNG");
  CHECK(lhio_sniff(jpeg, sizeof jpeg) == LHIO_FILE_JPEG, "JPEG magic not recognised");
  CHECK(lhio_sniff(jpeg, 2) == LHIO_FILE_UNKNOWN, "2 bytes of JPEG magic taken for JPEG");
  CHECK(lhio_sniff(gif, sizeof gif) == LHIO_FILE_UNKNOWN, "GIF taken for an image we read");
  CHECK(lhio_sniff(NULL, 0) == LHIO_FILE_UNKNOWN, "NULL sniffed as something");

  /* .jpe and .jfif are JPEG's own extensions (Windows names a JPEG saved
   * from a browser .jfif); .jfi and .jpgx are not. */
  static const struct {
    const char *name;
    bool image;
    bool jpeg;
  } names[] = {
      {"a.png", true, false},         {"a.PNG", true, false},   {"dir/b.jpg", true, true},
      {"c.JPeG", true, true},         {"d.jpe", true, true},    {"d.JFIF", true, true},
      {"d.jfi", false, false},        {"d.jpgx", false, false}, {"e.png.txt", false, false},
      {"png", false, false},          {".png", true, false},    {"dir.png/file", false, false},
      {"dir.jpg/file", false, false}, {"f.tiff", false, false}, {"", false, false}};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    CHECK(lhio_is_image_name(names[i].name) == names[i].image, "lhio_is_image_name(\"%s\")",
          names[i].name);
    CHECK(lhio_is_jpeg_name(names[i].name) == names[i].jpeg, "lhio_is_jpeg_name(\"%s\")",
          names[i].name);
  }
  CHECK(!lhio_is_image_name(NULL), "lhio_is_image_name(NULL)");
  CHECK(!lhio_is_jpeg_name(NULL), "lhio_is_jpeg_name(NULL)");
}

static void test_bad_files(const char *dir)
{
  const char *missing = test_path(dir, "missing.png");
  expect_read_error(missing, LH_ERROR_IO, "missing file");
  expect_read_error(dir, LH_ERROR_IO, "a folder");

  const char *empty = test_path(dir, "empty.png");
  test_write_file(empty, "", 0);
  expect_read_error(empty, LH_ERROR_CORRUPT, "empty file");

  const char *text = test_path(dir, "text.jpg");
  test_write_file(text, "hello, world\n", 13);
  expect_read_error(text, LH_ERROR_UNSUPPORTED, "text named .jpg");

  const char *gif = test_path(dir, "image.png");
  test_write_file(gif, "GIF89a\1\0\1\0\0\0\0;", 14);
  expect_read_error(gif, LH_ERROR_UNSUPPORTED, "GIF named .png");

  /* The kind comes from the bytes: a PNG named .jpg reads as PNG. */
  size_t size;
  uint8_t *png = make_png(test_path(dir, "real.png"), 5, 4, &size, NULL);
  const char *misnamed = test_path(dir, "misnamed.jpg");
  test_write_file(misnamed, png, size);
  LhioImage img;
  CHECK_STATUS(lhio_read(misnamed, LHIO_READ_FULL, 0, &img), LH_OK, "PNG named .jpg");
  CHECK(img.type == LHIO_FILE_PNG, "PNG named .jpg read as type %d", img.type);
  lhio_image_clear(&img);

  /* Truncated PNGs, from inside the magic to the last byte of IEND. */
  size_t cuts[] = {4, 8, 20, 40, size / 2, size - 12, size - 1};
  for (size_t c = 0; c < sizeof cuts / sizeof cuts[0]; c++) {
    char what[64];
    snprintf(what, sizeof what, "PNG cut to %zu of %zu bytes", cuts[c], size);
    const char *cut = test_path(dir, "cut.png");
    test_write_file(cut, png, cuts[c]);
    expect_read_error(cut, LH_ERROR_CORRUPT, what);
  }

  /* A flipped byte in the pixel data breaks IDAT's CRC. */
  uint8_t *bad = malloc(size);
  memcpy(bad, png, size);
  for (size_t i = 8; i + 8 < size; i++)
    if (memcmp(bad + i, "IDAT", 4) == 0) {
      bad[i + 6] ^= 0x40;
      break;
    }
  const char *flipped = test_path(dir, "flipped.png");
  test_write_file(flipped, bad, size);
  expect_read_error(flipped, LH_ERROR_CORRUPT, "PNG with a corrupt IDAT");
  free(bad);
  free(png);

  uint8_t *jpeg = make_jpeg(test_path(dir, "real.jpg"), 32, 24, &size);
  size_t sos = find_marker(jpeg, size, 0xda);
  CHECK(sos > 0, "no SOS marker in the test JPEG");
  size_t jcuts[] = {2, 3, 20, sos, sos + 20, size - 2};
  for (size_t c = 0; c < sizeof jcuts / sizeof jcuts[0]; c++) {
    char what[64];
    snprintf(what, sizeof what, "JPEG cut to %zu of %zu bytes", jcuts[c], size);
    const char *cut = test_path(dir, "cut.jpg");
    test_write_file(cut, jpeg, jcuts[c]);
    expect_read_error(cut, LH_ERROR_CORRUPT, what);
  }
  free(jpeg);
}

/* Rewrites a PNG's IHDR size (and CRC) in place. */
static void patch_ihdr(uint8_t *png, uint32_t w, uint32_t h)
{
  /* signature (8), length (4), "IHDR" at 12, data at 16, CRC at 29 */
  test_put_be32(png + 16, w);
  test_put_be32(png + 20, h);
  test_put_be32(png + 29, test_crc32(png + 12, 17));
}

static void test_sizes(const char *dir)
{
  size_t size;
  uint8_t *png = make_png(test_path(dir, "size.png"), 64, 64, &size, NULL);
  const char *path = test_path(dir, "size.png");
  LhioImage img;
  CHECK_STATUS(lhio_read(path, LHIO_READ_FULL, 4096, &img), LH_OK, "64x64 PNG at a 4096 limit");
  lhio_image_clear(&img);
  CHECK_STATUS(lhio_read(path, LHIO_READ_FULL, 4095, &img), LH_ERROR_TOO_LARGE,
               "64x64 PNG at a 4095 limit");
  check_message("PNG over the limit", path);

  /* A header claiming 10^10 pixels is refused before any pixel buffer: at
   * the default limit, and below libpng's own (which would say corrupt). */
  const char *huge = test_path(dir, "huge.png");
  patch_ihdr(png, 100000, 100000);
  test_write_file(huge, png, size);
  expect_read_error(huge, LH_ERROR_TOO_LARGE, "PNG of 100000x100000");
  patch_ihdr(png, 2000000, 1);
  test_write_file(huge, png, size);
  CHECK_STATUS(lhio_read(huge, LHIO_READ_FULL, 1000, &img), LH_ERROR_TOO_LARGE,
               "PNG 2000000 wide at a 1000 limit");
  patch_ihdr(png, 0, 64);
  test_write_file(huge, png, size);
  expect_read_error(huge, LH_ERROR_CORRUPT, "PNG 0 wide");
  patch_ihdr(png, 64, 0);
  test_write_file(huge, png, size);
  expect_read_error(huge, LH_ERROR_CORRUPT, "PNG 0 high");
  free(png);

  uint8_t *jpeg = make_jpeg(test_path(dir, "size.jpg"), 64, 48, &size);
  path = test_path(dir, "size.jpg");
  CHECK_STATUS(lhio_read(path, LHIO_READ_LUMA, 64 * 48, &img), LH_OK, "JPEG at its limit");
  lhio_image_clear(&img);
  CHECK_STATUS(lhio_read(path, LHIO_READ_LUMA, 64 * 48 - 1, &img), LH_ERROR_TOO_LARGE,
               "JPEG over the limit");
  /* SOF0: marker, length (2), precision (1), height (2), width (2). */
  size_t sof = find_marker(jpeg, size, 0xc0);
  CHECK(sof > 0, "no SOF0 in the test JPEG");
  if (sof) {
    uint8_t *p = jpeg + sof + 5;
    p[0] = 60000 >> 8, p[1] = 60000 & 0xff, p[2] = 60000 >> 8, p[3] = 60000 & 0xff;
    const char *big = test_path(dir, "big.jpg");
    test_write_file(big, jpeg, size);
    expect_read_error(big, LH_ERROR_TOO_LARGE, "JPEG of 60000x60000");
    p[0] = p[1] = 0;
    test_write_file(big, jpeg, size);
    expect_read_error(big, LH_ERROR_CORRUPT, "JPEG 0 high");
  }
  free(jpeg);
}

static LhioImage small_rgb(void)
{
  static uint8_t pixels[4 * 3 * 3];
  for (size_t i = 0; i < sizeof pixels; i++)
    pixels[i] = (uint8_t)(i * 20);
  LhioImage img = {.type = LHIO_FILE_PNG};
  img.frame = (LhFrame){.format = LH_FORMAT_RGB,
                        .memory = LH_MEMORY_HOST,
                        .width = 4,
                        .height = 3,
                        .bit_depth = 8,
                        .planes = {pixels}};
  return img;
}

static void test_writes(const char *dir)
{
  char *wdir;
  if (asprintf(&wdir, "%s/write", dir) < 0 || mkdir(wdir, 0755) != 0) {
    perror("mkdir");
    exit(99);
  }
  const char *file = test_path(wdir, "file.txt");
  test_write_file(file, "x", 1);
  LhioImage img = small_rgb();

  /* The parent of the target is a regular file: nothing can be created (this
   * holds for root too, unlike a read-only folder). */
  char *under_file;
  if (asprintf(&under_file, "%s/out.png", file) < 0)
    exit(99);
  CHECK_STATUS(lhio_write(under_file, &img, NULL), LH_ERROR_IO, "write under a regular file");
  check_message("write under a regular file", under_file);
  free(under_file);

  /* The target is a folder: the temporary file is written, the rename fails
   * and the temporary file must go. */
  const char *folder = test_path(wdir, "taken.png");
  mkdir(folder, 0755);
  test_write_file(test_path(folder, "keep"), "k", 1);
  CHECK_STATUS(lhio_write(folder, &img, NULL), LH_ERROR_IO, "write over a folder");
  check_message("write over a folder", folder);
  CHECK(test_count_entries(wdir) == 2,
        "%d entries in the output folder after a failed write, "
        "expected 2 (a temporary file left behind?)",
        test_count_entries(wdir));

  /* Refused images create nothing. */
  LhioImage wide = img;
  wide.frame.format = LH_FORMAT_RGB16;
  wide.frame.bit_depth = 16;
  wide.frame.width = 2;
  wide.type = LHIO_FILE_JPEG;
  CHECK_STATUS(lhio_write(test_path(wdir, "deep.jpg"), &wide, NULL), LH_ERROR_UNSUPPORTED,
               "16-bit JPEG");
  LhioImage yuv = img;
  yuv.frame.format = LH_FORMAT_NV12;
  CHECK_STATUS(lhio_write(test_path(wdir, "nv12.png"), &yuv, NULL), LH_ERROR_UNSUPPORTED,
               "NV12 PNG");
  LhioImage empty = img;
  empty.frame.planes[0] = NULL;
  CHECK_STATUS(lhio_write(test_path(wdir, "none.png"), &empty, NULL), LH_ERROR_INVALID_ARGUMENT,
               "frame without pixels");
  LhioImage narrow = img;
  narrow.frame.strides[0] = 5;
  CHECK_STATUS(lhio_write(test_path(wdir, "narrow.png"), &narrow, NULL), LH_ERROR_INVALID_ARGUMENT,
               "stride below a row");
  LhioImage device = img;
  device.frame.memory = LH_MEMORY_CUDA;
  CHECK_STATUS(lhio_write(test_path(wdir, "device.png"), &device, NULL), LH_ERROR_INVALID_ARGUMENT,
               "device memory");
  LhioImage untyped = img;
  untyped.type = LHIO_FILE_UNKNOWN;
  CHECK_STATUS(lhio_write(test_path(wdir, "out.tiff"), &untyped, NULL), LH_ERROR_INVALID_ARGUMENT,
               "no type, unknown extension");
  CHECK_STATUS(lhio_write(NULL, &img, NULL), LH_ERROR_INVALID_ARGUMENT, "NULL path");
  CHECK_STATUS(lhio_write(test_path(wdir, "x.png"), NULL, NULL), LH_ERROR_INVALID_ARGUMENT,
               "NULL image");
  CHECK(test_count_entries(wdir) == 2, "%d entries after refused writes, expected 2",
        test_count_entries(wdir));

  /* No type: the extension decides. */
  const char *by_name = test_path(wdir, "by-name.JPG");
  CHECK_STATUS(lhio_write(by_name, &untyped, NULL), LH_OK, "type from the name");
  LhioImage back;
  CHECK_STATUS(lhio_read(by_name, LHIO_READ_FULL, 0, &back), LH_OK, "read by-name.JPG");
  CHECK(back.type == LHIO_FILE_JPEG, "by-name.JPG written as type %d", back.type);
  lhio_image_clear(&back);
  unlink(by_name);

  /* Writing over an existing file replaces it whole, and a new file gets
   * 0666 less the umask like any other. */
  const char *target = test_path(wdir, "target.png");
  test_write_file(target, "old contents", 12);
  mode_t old_mask = umask(022);
  CHECK_STATUS(lhio_write(target, &img, NULL), LH_OK, "write over a file");
  const char *fresh = test_path(wdir, "fresh.png");
  CHECK_STATUS(lhio_write(fresh, &img, NULL), LH_OK, "write a new file");
  umask(old_mask);
  struct stat st;
  CHECK(stat(fresh, &st) == 0 && (st.st_mode & 0777) == 0644, "new file mode %o, expected 644",
        (unsigned)(st.st_mode & 0777));
  CHECK_STATUS(lhio_read(target, LHIO_READ_FULL, 0, &back), LH_OK, "read the replaced file");
  CHECK(back.pixels && back.frame.width == 4 && back.frame.height == 3 &&
            memcmp(back.pixels, img.frame.planes[0], 36) == 0,
        "replaced file does not hold the new image");
  lhio_image_clear(&back);
  CHECK(test_count_entries(wdir) == 4, "%d entries after two writes, expected 4",
        test_count_entries(wdir));
  free(wdir);
}

/* Bad input makes libpng and libjpeg want to print (warnings on ancillary
 * chunks, stray bytes between JPEG markers, errors): nothing may reach stderr,
 * and the harmless cases still read. */
static void test_silence(const char *dir)
{
  size_t png_size, jpeg_size;
  uint8_t *png = make_png(test_path(dir, "text.png"), 6, 5, &png_size, "a comment");
  uint8_t *jpeg = make_jpeg(test_path(dir, "quiet.jpg"), 16, 16, &jpeg_size);

  /* A broken CRC on the tEXt chunk: libpng warns and drops the chunk. */
  for (size_t i = 8; i + 4 < png_size; i++)
    if (memcmp(png + i, "tEXt", 4) == 0) {
      png[i + 5] ^= 0x20;
      break;
    }
  const char *bad_text = test_path(dir, "bad-text.png");
  test_write_file(bad_text, png, png_size);

  /* Three stray bytes before the second marker: libjpeg warns. */
  size_t second = 2 + 2 + ((size_t)jpeg[4] << 8 | jpeg[5]);
  uint8_t *stray = malloc(jpeg_size + 3);
  memcpy(stray, jpeg, second);
  memset(stray + second, 0, 3);
  memcpy(stray + second + 3, jpeg + second, jpeg_size - second);
  const char *stray_path = test_path(dir, "stray.jpg");
  test_write_file(stray_path, stray, jpeg_size + 3);

  const char *cut_path = test_path(dir, "cut-quiet.jpg");
  test_write_file(cut_path, jpeg, jpeg_size / 2);

  const char *log = test_path(dir, "stderr.log");
  fflush(stderr);
  int saved = dup(2);
  int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  dup2(fd, 2);
  close(fd);
  LhioImage img1, img2, img3;
  int s1 = lhio_read(bad_text, LHIO_READ_FULL, 0, &img1);
  int s2 = lhio_read(stray_path, LHIO_READ_LUMA, 0, &img2);
  int s3 = lhio_read(cut_path, LHIO_READ_FULL, 0, &img3);
  fflush(stderr);
  dup2(saved, 2);
  close(saved);

  CHECK_STATUS(s1, LH_OK, "PNG with a bad tEXt CRC");
  CHECK_STATUS(s2, LH_OK, "JPEG with stray bytes between markers");
  CHECK_STATUS(s3, LH_ERROR_CORRUPT, "truncated JPEG");
  size_t logged = 0;
  uint8_t *text = test_read_file(log, &logged);
  CHECK(logged == 0, "libpng/libjpeg printed %zu bytes: %.*s", logged, (int)logged, (char *)text);
  free(text);
  lhio_image_clear(&img1);
  lhio_image_clear(&img2);
  lhio_image_clear(&img3);
  free(stray);
  free(png);
  free(jpeg);
}

/* A pixel allocator that counts what it gives and takes back, and marks its
 * buffers with a header so that a buffer from elsewhere is caught. */
typedef struct {
  int given, taken, foreign;
  void *last;
} CountingAllocator;

#define ALLOCATOR_MARK 0x6c756d61u

static void *counting_alloc(size_t bytes, void *user)
{
  CountingAllocator *a = user;
  uint32_t *block = malloc(bytes + 16);
  block[0] = ALLOCATOR_MARK;
  a->given++;
  a->last = (uint8_t *)block + 16;
  return a->last;
}

static void counting_release(void *pixels, void *user)
{
  CountingAllocator *a = user;
  uint32_t *block = (uint32_t *)((uint8_t *)pixels - 16);
  if (block[0] != ALLOCATOR_MARK) {
    a->foreign++;
    return;
  }
  block[0] = 0;
  a->taken++;
  free(block);
}

/* Decoded pixels come from the program's allocator and go back to it: read
 * and cleared, and when a read fails half way (truncated files) or before
 * any pixel (too large); alpha planes and libpng's rows are not its own. */
static void test_pixel_allocator(const char *dir)
{
  CountingAllocator a = {0};
  LhioPixelAllocator allocator = {counting_alloc, counting_release, &a};
  size_t png_size, jpeg_size;
  uint8_t *png = make_png(test_path(dir, "alloc.png"), 37, 23, &png_size, NULL);
  uint8_t *jpeg = make_jpeg(test_path(dir, "alloc.jpg"), 37, 23, &jpeg_size);
  lhio_set_pixel_allocator(&allocator);

  const char *files[2] = {test_path(dir, "alloc.png"), test_path(dir, "alloc.jpg")};
  for (int f = 0; f < 2; f++)
    for (int mode = LHIO_READ_FULL; mode <= LHIO_READ_LUMA; mode++) {
      LhioImage img;
      const int given = a.given;
      CHECK_STATUS(lhio_read(files[f], mode, 0, &img), LH_OK, "read with an allocator");
      CHECK(a.given == given + 1 && img.pixels == a.last && img.frame.planes[0] == a.last,
            "%s: the pixels are not the allocator's (%d buffers given)", files[f], a.given - given);
      lhio_image_clear(&img);
    }
  CHECK(a.taken == a.given, "%d pixel buffers given, %d taken back", a.given, a.taken);

  const char *cut = test_path(dir, "alloc-cut.png");
  test_write_file(cut, png, png_size - 20);
  expect_read_error(cut, LH_ERROR_CORRUPT, "truncated PNG, with an allocator");
  const char *cut_jpeg = test_path(dir, "alloc-cut.jpg");
  test_write_file(cut_jpeg, jpeg, jpeg_size / 2);
  expect_read_error(cut_jpeg, LH_ERROR_CORRUPT, "truncated JPEG, with an allocator");
  CHECK(a.given >= 6 && a.taken == a.given && a.foreign == 0,
        "after failed reads: %d given, %d taken back, %d not its own", a.given, a.taken, a.foreign);

  lhio_set_pixel_allocator(NULL);
  LhioImage img;
  const int given = a.given;
  CHECK_STATUS(lhio_read(files[0], LHIO_READ_FULL, 0, &img), LH_OK, "read after unsetting");
  CHECK(a.given == given, "the allocator was used after it was unset");
  lhio_image_clear(&img);
  free(png);
  free(jpeg);
}

int main(void)
{
  char *dir = test_make_dir();
  test_sniff();
  test_bad_files(dir);
  test_sizes(dir);
  test_writes(dir);
  test_silence(dir);
  test_pixel_allocator(dir);
  test_remove_dir(dir);
  return test_result("test-errors");
}
