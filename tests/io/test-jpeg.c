/* test-jpeg.c: lhio's JPEG reader and writer: gray and colour round trips,
 * every component's sampling factors kept (Cb's and Cr's too, however
 * odd), the luma-only decode equal to libjpeg's own Y, RGB-coded, CMYK and
 * YCCK files (converted to R'G'B'), metadata kept, truncation, quality and
 * channel orders. */
#include "io-test.h"

#include <math.h>

/* jpeglib.h needs stdio.h (included above) before it. */
#include <jpeglib.h>

/* A smooth picture with some texture and noise, like a photograph as far as
 * a JPEG coder is concerned. */
static uint8_t *make_photo(int w, int h, int channels, uint64_t *seed)
{
  uint8_t *p = malloc((size_t)w * h * channels);
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      for (int c = 0; c < channels; c++) {
        double v = 128 + 90 * sin(x * 0.045 + c) * cos(y * 0.032 - c) + 30.0 * x / w - 15.0 * c +
                   (int)(test_rand(seed) % 9) - 4;
        p[((size_t)y * w + x) * channels + c] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
      }
  return p;
}

static LhioImage wrap(uint8_t *pixels, LhFormat format, int w, int h)
{
  LhioImage img = {.type = LHIO_FILE_JPEG, .pixels = pixels};
  img.frame = (LhFrame){.format = format,
                        .memory = LH_MEMORY_HOST,
                        .width = w,
                        .height = h,
                        .bit_depth = 8,
                        .planes = {pixels}};
  return img;
}

/* The header of a JPEG as libjpeg sees it. */
typedef struct {
  int width, height, components;
  J_COLOR_SPACE space;
  int h_samp[4], v_samp[4];
  bool progressive;
} JpegHeader;

static void read_header(const char *path, JpegHeader *hd)
{
  struct jpeg_decompress_struct c;
  struct jpeg_error_mgr err;
  FILE *f = fopen(path, "rb");
  if (!f) {
    perror(path);
    exit(99);
  }
  c.err = jpeg_std_error(&err);
  jpeg_create_decompress(&c);
  jpeg_stdio_src(&c, f);
  jpeg_read_header(&c, TRUE);
  hd->width = (int)c.image_width;
  hd->height = (int)c.image_height;
  hd->components = c.num_components;
  hd->space = c.jpeg_color_space;
  hd->progressive = c.progressive_mode;
  for (int i = 0; i < c.num_components && i < 4; i++) {
    hd->h_samp[i] = c.comp_info[i].h_samp_factor;
    hd->v_samp[i] = c.comp_info[i].v_samp_factor;
  }
  jpeg_destroy_decompress(&c);
  fclose(f);
}

/* Decodes with plain libjpeg into out_space; returns the pixels. */
static uint8_t *decode_lib(const char *path, J_COLOR_SPACE out_space, int *w, int *h, int *comps)
{
  struct jpeg_decompress_struct c;
  struct jpeg_error_mgr err;
  FILE *f = fopen(path, "rb");
  if (!f) {
    perror(path);
    exit(99);
  }
  c.err = jpeg_std_error(&err);
  jpeg_create_decompress(&c);
  jpeg_stdio_src(&c, f);
  jpeg_read_header(&c, TRUE);
  c.out_color_space = out_space;
  jpeg_start_decompress(&c);
  *w = (int)c.output_width;
  *h = (int)c.output_height;
  *comps = c.output_components;
  size_t row = (size_t)*w * *comps;
  uint8_t *p = malloc(row * *h);
  while (c.output_scanline < c.output_height) {
    JSAMPROW r = p + row * c.output_scanline;
    jpeg_read_scanlines(&c, &r, 1);
  }
  jpeg_finish_decompress(&c);
  jpeg_destroy_decompress(&c);
  fclose(f);
  return p;
}

/* Encodes with plain libjpeg: for files lhio does not write (CMYK, YCCK,
 * RGB-coded, progressive). */
/* Metadata segments a camera or an editor writes, in this order: Exif
 * (orientation 6: viewers turn the pixels a quarter), an ICC profile's
 * first APP2, IPTC, a comment, then XMP. */
static const struct {
  int marker;
  const char *data;
  unsigned size;
} test_metadata[] = {
    {JPEG_APP0 + 1, "Exif\0\0MM\0*\0\0\0\x08\0\x01\x01\x12\0\x03\0\0\0\x01\0\x06\0\0\0\0\0\0", 32},
    {JPEG_APP0 + 2, "ICC_PROFILE\0\x01\x01not really a profile", 34},
    {JPEG_APP0 + 13, "Photoshop 3.0\08BIM\x04\x04\0\0\0\0\0\0", 26},
    {JPEG_COM, "a comment", 9},
    {JPEG_APP0 + 1, "http://ns.adobe.com/xap/1.0/\0<x:xmpmeta/>", 41},
};
#define N_TEST_METADATA (sizeof test_metadata / sizeof test_metadata[0])

static void encode_lib(const char *path, const uint8_t *pixels, int w, int h, J_COLOR_SPACE in,
                       int comps, J_COLOR_SPACE coded, bool progressive, int hs, int vs,
                       bool metadata)
{
  struct jpeg_compress_struct c;
  struct jpeg_error_mgr err;
  FILE *f = fopen(path, "wb");
  if (!f) {
    perror(path);
    exit(99);
  }
  c.err = jpeg_std_error(&err);
  jpeg_create_compress(&c);
  jpeg_stdio_dest(&c, f);
  c.image_width = (JDIMENSION)w;
  c.image_height = (JDIMENSION)h;
  c.input_components = comps;
  c.in_color_space = in;
  jpeg_set_defaults(&c);
  jpeg_set_colorspace(&c, coded);
  jpeg_set_quality(&c, 90, TRUE);
  if (hs) {
    c.comp_info[0].h_samp_factor = hs;
    c.comp_info[0].v_samp_factor = vs;
  }
  if (progressive)
    jpeg_simple_progression(&c);
  jpeg_start_compress(&c, TRUE);
  for (size_t k = 0; metadata && k < N_TEST_METADATA; k++)
    jpeg_write_marker(&c, test_metadata[k].marker, (const JOCTET *)test_metadata[k].data,
                      test_metadata[k].size);
  while (c.next_scanline < c.image_height) {
    JSAMPROW r = (JSAMPROW)(pixels + (size_t)c.next_scanline * w * comps);
    jpeg_write_scanlines(&c, &r, 1);
  }
  jpeg_finish_compress(&c);
  jpeg_destroy_compress(&c);
  fclose(f);
}

static void error_stats(const uint8_t *a, const uint8_t *b, size_t n, double *mean, int *max)
{
  double sum = 0;
  *max = 0;
  for (size_t i = 0; i < n; i++) {
    int d = abs((int)a[i] - (int)b[i]);
    sum += d;
    if (d > *max)
      *max = d;
  }
  *mean = sum / (double)n;
}

static void test_gray(const char *dir, uint64_t *seed)
{
  const int w = 211, h = 157;
  uint8_t *src = make_photo(w, h, 1, seed);
  LhioImage img = wrap(src, LH_FORMAT_GRAY8, w, h);
  const char *path = test_path(dir, "gray.jpg");
  CHECK_STATUS(lhio_write(path, &img, NULL), LH_OK, "write gray JPEG");
  JpegHeader hd;
  read_header(path, &hd);
  CHECK(hd.space == JCS_GRAYSCALE && hd.components == 1, "gray JPEG coded as space %d, %d comps",
        hd.space, hd.components);

  LhioImage back, luma;
  CHECK_STATUS(lhio_read(path, LHIO_READ_FULL, 0, &back), LH_OK, "read gray JPEG");
  if (back.pixels) {
    CHECK(back.type == LHIO_FILE_JPEG, "type %d", back.type);
    CHECK(back.frame.format == LH_FORMAT_GRAY8 && back.frame.width == w && back.frame.height == h,
          "gray JPEG read as %s %dx%d", lh_format_name(back.frame.format), back.frame.width,
          back.frame.height);
    CHECK(back.source_channels == 1 && !back.luma_only && back.source_bit_depth == 8,
          "gray JPEG: channels %d luma_only %d", back.source_channels, back.luma_only);
    double mean;
    int max;
    error_stats(src, back.pixels, (size_t)w * h, &mean, &max);
    CHECK(mean < 1.5 && max <= 24, "gray round trip error: mean %.2f max %d", mean, max);
    CHECK_STATUS(lhio_read(path, LHIO_READ_LUMA, 0, &luma), LH_OK, "luma read of gray JPEG");
    CHECK(luma.pixels && memcmp(luma.pixels, back.pixels, (size_t)w * h) == 0,
          "luma read of a gray JPEG differs from the full read");
    lhio_image_clear(&luma);
  }
  lhio_image_clear(&back);
  lhio_image_clear(&img);
}

/* Colour round trips with each sampling, Y's and Cb's and Cr's: the file
 * says what was asked, the pixels come back close, and re-encoding what was
 * read keeps every component's factors. */
static void test_colour(const char *dir, uint64_t *seed)
{
  /* Y, Cb, Cr as h x v; a chroma 0x0 is not known, written as 1x1.  3x3
   * and up: more than the 10 blocks an MCU of one interleaved scan.  The
   * last rows sample Cb and Cr unlike each other, or chroma finer than Y. */
  static const int samplings[][6] = {{2, 2, 0, 0, 0, 0}, {2, 1, 0, 0, 0, 0}, {1, 1, 0, 0, 0, 0},
                                     {1, 2, 0, 0, 0, 0}, {4, 2, 0, 0, 0, 0}, {3, 3, 0, 0, 0, 0},
                                     {4, 4, 0, 0, 0, 0}, {2, 2, 1, 1, 2, 1}, {2, 2, 2, 1, 1, 2},
                                     {1, 1, 2, 2, 1, 1}, {4, 2, 1, 1, 2, 2}, {4, 4, 2, 2, 1, 1}};
  const int w = 203, h = 149;
  uint8_t *src = make_photo(w, h, 3, seed);
  for (size_t s = 0; s < sizeof samplings / sizeof samplings[0]; s++) {
    int want_h[3], want_v[3];
    for (int c = 0; c < 3; c++) {
      want_h[c] = samplings[s][2 * c] ? samplings[s][2 * c] : 1;
      want_v[c] = samplings[s][2 * c + 1] ? samplings[s][2 * c + 1] : 1;
    }
    char what[64];
    snprintf(what, sizeof what, "colour %dx%d,%dx%d,%dx%d sampling", want_h[0], want_v[0],
             want_h[1], want_v[1], want_h[2], want_v[2]);
    LhioImage img = wrap(src, LH_FORMAT_RGB, w, h);
    for (int c = 0; c < 3; c++) {
      img.jpeg_h_samp[c] = samplings[s][2 * c];
      img.jpeg_v_samp[c] = samplings[s][2 * c + 1];
    }
    const char *path = test_path(dir, "colour.jpg");
    const char *again = test_path(dir, "colour-again.jpg");
    CHECK_STATUS(lhio_write(path, &img, NULL), LH_OK, what);
    JpegHeader hd;
    read_header(path, &hd);
    CHECK(hd.space == JCS_YCbCr && hd.components == 3, "%s: coded as space %d", what, hd.space);
    bool same = true;
    for (int c = 0; c < 3; c++)
      same = same && hd.h_samp[c] == want_h[c] && hd.v_samp[c] == want_v[c];
    CHECK(same, "%s: file has Y %dx%d Cb %dx%d Cr %dx%d", what, hd.h_samp[0], hd.v_samp[0],
          hd.h_samp[1], hd.v_samp[1], hd.h_samp[2], hd.v_samp[2]);

    LhioImage back;
    CHECK_STATUS(lhio_read(path, LHIO_READ_FULL, 0, &back), LH_OK, what);
    if (back.pixels) {
      CHECK(back.frame.format == LH_FORMAT_RGB && back.frame.width == w && back.frame.height == h &&
                back.frame.strides[0] == (size_t)w * 3,
            "%s: read as %s %dx%d", what, lh_format_name(back.frame.format), back.frame.width,
            back.frame.height);
      same = true;
      for (int c = 0; c < 3; c++)
        same = same && back.jpeg_h_samp[c] == want_h[c] && back.jpeg_v_samp[c] == want_v[c];
      CHECK(same && back.source_channels == 3 && !back.luma_only,
            "%s: image says Y %dx%d Cb %dx%d Cr %dx%d, %d channels", what, back.jpeg_h_samp[0],
            back.jpeg_v_samp[0], back.jpeg_h_samp[1], back.jpeg_v_samp[1], back.jpeg_h_samp[2],
            back.jpeg_v_samp[2], back.source_channels);
      double mean;
      int max;
      error_stats(src, back.pixels, (size_t)w * h * 3, &mean, &max);
      CHECK(mean < 3.0, "%s: round trip mean error %.2f (max %d)", what, mean, max);

      LhioWriteOptions options = {.jpeg_quality = 80};
      CHECK_STATUS(lhio_write(again, &back, &options), LH_OK, what);
      read_header(again, &hd);
      same = true;
      for (int c = 0; c < 3; c++)
        same = same && hd.h_samp[c] == want_h[c] && hd.v_samp[c] == want_v[c];
      CHECK(same, "%s: re-encoding gave Y %dx%d Cb %dx%d Cr %dx%d", what, hd.h_samp[0],
            hd.v_samp[0], hd.h_samp[1], hd.v_samp[1], hd.h_samp[2], hd.v_samp[2]);
    }
    lhio_image_clear(&back);
  }

  /* An image with no JPEG history (from a PNG, say) gets libjpeg's 4:2:0. */
  LhioImage fresh = wrap(src, LH_FORMAT_RGB, w, h);
  const char *path = test_path(dir, "fresh.jpg");
  CHECK_STATUS(lhio_write(path, &fresh, NULL), LH_OK, "fresh colour JPEG");
  JpegHeader hd;
  read_header(path, &hd);
  CHECK(hd.h_samp[0] == 2 && hd.v_samp[0] == 2, "fresh colour JPEG sampled %dx%d", hd.h_samp[0],
        hd.v_samp[0]);
  free(src);
}

/* The luma-only decode is exactly the Y channel libjpeg gives when asked for
 * YCbCr output, for every sampling, odd sizes and progressive files; and it
 * is close to the BT.601 luma of the decoded RGB (JPEG's Y is BT.601). */
static void test_luma_only(const char *dir, uint64_t *seed)
{
  static const struct {
    int w, h, hs, vs;
    bool progressive;
  } cases[] = {
      {160, 120, 2, 2, false}, {33, 17, 2, 2, false}, {97, 61, 2, 1, false}, {64, 48, 1, 1, false},
      {75, 53, 1, 2, false},   {129, 95, 2, 2, true}, {1, 1, 2, 2, false},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    int w = cases[k].w, h = cases[k].h;
    char what[96];
    snprintf(what, sizeof what, "luma %dx%d sampling %dx%d%s", w, h, cases[k].hs, cases[k].vs,
             cases[k].progressive ? " progressive" : "");
    uint8_t *src = make_photo(w, h, 3, seed);
    const char *path = test_path(dir, "luma.jpg");
    encode_lib(path, src, w, h, JCS_RGB, 3, JCS_YCbCr, cases[k].progressive, cases[k].hs,
               cases[k].vs, false);
    int yw, yh, comps;
    uint8_t *ycc = decode_lib(path, JCS_YCbCr, &yw, &yh, &comps);

    LhioImage luma, full;
    CHECK_STATUS(lhio_read(path, LHIO_READ_LUMA, 0, &luma), LH_OK, what);
    CHECK_STATUS(lhio_read(path, LHIO_READ_FULL, 0, &full), LH_OK, what);
    if (luma.pixels && full.pixels) {
      CHECK(luma.luma_only && luma.frame.format == LH_FORMAT_GRAY8 && luma.source_channels == 3,
            "%s: luma_only %d format %s channels %d", what, luma.luma_only,
            lh_format_name(luma.frame.format), luma.source_channels);
      CHECK(luma.frame.width == w && luma.frame.height == h, "%s: %dx%d", what, luma.frame.width,
            luma.frame.height);
      size_t n = (size_t)w * h, differ = 0;
      double sum = 0;
      for (size_t i = 0; i < n && luma.frame.format == LH_FORMAT_GRAY8; i++) {
        differ += luma.pixels[i] != ycc[3 * i];
        const uint8_t *p = full.pixels + 3 * i;
        sum += fabs(luma.pixels[i] - (0.299 * p[0] + 0.587 * p[1] + 0.114 * p[2]));
      }
      CHECK(differ == 0, "%s: %zu of %zu Y samples differ from libjpeg's", what, differ, n);
      CHECK(sum / n < 1.0, "%s: Y is %.2f from the luma of the decoded RGB on average", what,
            sum / n);
    }
    lhio_image_clear(&luma);
    lhio_image_clear(&full);
    free(ycc);
    free(src);
  }
}

/* An RGB-coded JPEG has no Y component: luma mode decodes it in full. */
static void test_rgb_coded(const char *dir, uint64_t *seed)
{
  const int w = 40, h = 30;
  uint8_t *src = make_photo(w, h, 3, seed);
  const char *path = test_path(dir, "rgb-coded.jpg");
  encode_lib(path, src, w, h, JCS_RGB, 3, JCS_RGB, false, 0, 0, false);
  LhioImage img;
  CHECK_STATUS(lhio_read(path, LHIO_READ_LUMA, 0, &img), LH_OK, "RGB-coded JPEG");
  CHECK(img.frame.format == LH_FORMAT_RGB && !img.luma_only,
        "RGB-coded JPEG in luma mode read as %s, luma_only %d", lh_format_name(img.frame.format),
        img.luma_only);
  lhio_image_clear(&img);
  free(src);
}

static void test_cmyk(const char *dir, uint64_t *seed)
{
  const int w = 24, h = 16;
  uint8_t *src = make_photo(w, h, 4, seed);
  static const struct {
    J_COLOR_SPACE coded;
    const char *name;
  } cases[] = {{JCS_CMYK, "CMYK"}, {JCS_YCCK, "YCCK"}};
  for (size_t k = 0; k < 2; k++) {
    const char *path = test_path(dir, k ? "ycck.jpg" : "cmyk.jpg");
    encode_lib(path, src, w, h, JCS_CMYK, 4, cases[k].coded, false, 0, 0, false);
    JpegHeader hd;
    read_header(path, &hd);
    CHECK(hd.space == cases[k].coded, "test file for %s is coded as %d", cases[k].name, hd.space);
    /* libjpeg's own CMYK (Adobe-inverted samples), converted by the rule
     * lhio documents: R = round(c k / 255).  tests/cli checks the rule
     * against Pillow's conversion. */
    int dw, dh, comps;
    uint8_t *cmyk = decode_lib(path, JCS_CMYK, &dw, &dh, &comps);
    CHECK(dw == w && dh == h && comps == 4, "%s decoded by libjpeg as %dx%d x%d", cases[k].name, dw,
          dh, comps);
    for (int mode = LHIO_READ_FULL; mode <= LHIO_READ_LUMA; mode++) {
      LhioImage img;
      CHECK_STATUS(lhio_read(path, mode, 0, &img), LH_OK, cases[k].name);
      CHECK(img.frame.format == LH_FORMAT_RGB && img.frame.width == w && img.frame.height == h &&
                !img.luma_only && img.converted_from &&
                strcmp(img.converted_from, cases[k].name) == 0,
            "%s read as %s %dx%d, converted from %s", cases[k].name,
            lh_format_name(img.frame.format), img.frame.width, img.frame.height,
            img.converted_from ? img.converted_from : "nothing");
      int off = 0;
      for (int y = 0; img.pixels && y < h; y++)
        for (int x = 0; x < w; x++) {
          const uint8_t *in = cmyk + ((size_t)y * w + x) * 4;
          const uint8_t *out = img.pixels + (size_t)y * img.frame.strides[0] + (size_t)x * 3;
          for (int c = 0; c < 3; c++)
            off += out[c] != (in[c] * in[3] + 127) / 255;
        }
      CHECK(off == 0, "%s: %d samples differ from round(c k / 255)", cases[k].name, off);
      lhio_image_clear(&img);
    }
    free(cmyk);
  }
  free(src);
}

/* The segments of the metadata whose first `count` entries of test_metadata
 * are set in keep (bit k), as lhio keeps them: whole, in file order. */
static size_t expected_metadata(unsigned keep, uint8_t *out)
{
  size_t n = 0;
  for (size_t k = 0; k < N_TEST_METADATA; k++) {
    if (!(keep >> k & 1))
      continue;
    unsigned length = test_metadata[k].size + 2;
    out[n++] = 0xFF;
    out[n++] = (uint8_t)test_metadata[k].marker;
    out[n++] = (uint8_t)(length >> 8);
    out[n++] = (uint8_t)length;
    memcpy(out + n, test_metadata[k].data, test_metadata[k].size);
    n += test_metadata[k].size;
  }
  return n;
}

static void check_metadata(const LhioImage *img, unsigned keep, const char *what)
{
  uint8_t want[1024];
  size_t n = expected_metadata(keep, want);
  CHECK(img->metadata_size == n && (n == 0 || memcmp(img->metadata, want, n) == 0),
        "%s: %zu bytes of metadata, %zu expected (or other bytes)", what, img->metadata_size, n);
}

/* A JPEG's JFIF density (a 300 x 240 dpi scan) is read and written back,
 * by lhio_write (the CPU) and by lhio_jpeg_insert_metadata into the JFIF
 * APP0 another encoder wrote (nvJPEG): both wrote their own 1:1 before. */
static void check_density(const char *path, int unit, int x, int y, const char *what)
{
  LhioImage back;
  CHECK_STATUS(lhio_read(path, LHIO_READ_FULL, 0, &back), LH_OK, what);
  CHECK(back.jfif_density_unit == unit && back.jfif_x_density == x && back.jfif_y_density == y,
        "%s: JFIF density %d %dx%d, expected %d %dx%d", what, back.jfif_density_unit,
        back.jfif_x_density, back.jfif_y_density, unit, x, y);
  lhio_image_clear(&back);
}

static void test_density_kept(const char *dir, uint64_t *seed)
{
  const int w = 24, h = 16;
  uint8_t *src = make_photo(w, h, 4, seed);
  const char *path = test_path(dir, "density.jpg");
  encode_lib(path, src, w, h, JCS_RGB, 3, JCS_YCbCr, false, 2, 2, false);
  check_density(path, 0, 1, 1, "libjpeg's default");

  LhioImage img;
  CHECK_STATUS(lhio_read(path, LHIO_READ_FULL, 0, &img), LH_OK, "density: read");
  img.jfif_density_unit = 1;
  img.jfif_x_density = 300;
  img.jfif_y_density = 240;
  const char *again = test_path(dir, "density-again.jpg");
  CHECK_STATUS(lhio_write(again, &img, NULL), LH_OK, "density: write");
  check_density(again, 1, 300, 240, "written by lhio_write");

  LhioEncoded bytes;
  CHECK_STATUS(lhio_load(again, &bytes), LH_OK, "density: load");
  LhioImage from_bytes = {0};
  CHECK_STATUS(lhio_jpeg_metadata_from_bytes(&bytes, &from_bytes), LH_OK, "density: from bytes");
  CHECK(from_bytes.jfif_density_unit == 1 && from_bytes.jfif_x_density == 300 &&
            from_bytes.jfif_y_density == 240,
        "density from the bytes: %d %dx%d", from_bytes.jfif_density_unit, from_bytes.jfif_x_density,
        from_bytes.jfif_y_density);
  lhio_encoded_clear(&bytes);
  CHECK_STATUS(lhio_load(path, &bytes), LH_OK, "density: load plain");
  CHECK_STATUS(lhio_jpeg_insert_metadata(&bytes, &from_bytes), LH_OK, "density: insert");
  const char *joined = test_path(dir, "density-joined.jpg");
  test_write_file(joined, bytes.data, bytes.size);
  lhio_encoded_clear(&bytes);
  check_density(joined, 1, 300, 240, "inserted into another encoder's JFIF");
  lhio_image_clear(&from_bytes);
  lhio_image_clear(&img);
  free(src);
}

/* A JPEG's Exif, ICC profile, IPTC, comments and XMP are kept when it is
 * read in full and written back after the header of a JPEG made from it,
 * by lhio_write (the CPU) and by lhio_jpeg_insert_metadata into bytes
 * another encoder made (nvJPEG); not the ICC profile of a CMYK file
 * converted to R'G'B'. */
static void test_metadata_kept(const char *dir, uint64_t *seed)
{
  const unsigned all = (1u << N_TEST_METADATA) - 1, no_icc = all & ~2u;
  const int w = 40, h = 24;
  uint8_t *src = make_photo(w, h, 4, seed);
  const char *path = test_path(dir, "metadata.jpg");
  encode_lib(path, src, w, h, JCS_RGB, 3, JCS_YCbCr, false, 2, 2, true);

  LhioImage img, luma, back;
  CHECK_STATUS(lhio_read(path, LHIO_READ_FULL, 0, &img), LH_OK, "metadata: read");
  check_metadata(&img, all, "read in full");
  CHECK_STATUS(lhio_read(path, LHIO_READ_LUMA, 0, &luma), LH_OK, "metadata: luma");
  check_metadata(&luma, 0, "luma only (statistics need none)");
  lhio_image_clear(&luma);

  /* lhio_write: the same segments back, the pixels decoded as before. */
  const char *again = test_path(dir, "metadata-again.jpg");
  CHECK_STATUS(lhio_write(again, &img, NULL), LH_OK, "metadata: write");
  CHECK_STATUS(lhio_read(again, LHIO_READ_FULL, 0, &back), LH_OK, "metadata: read again");
  check_metadata(&back, all, "written by lhio_write");
  lhio_image_clear(&back);

  /* The GPU path's: the file's bytes give the same segments, and put into
   * a JPEG without any (lhio_write of an image without metadata) they read
   * back as they were, with the same pixels. */
  LhioEncoded bytes;
  CHECK_STATUS(lhio_load(path, &bytes), LH_OK, "metadata: load");
  LhioImage from_bytes = {0};
  CHECK_STATUS(lhio_jpeg_metadata_from_bytes(&bytes, &from_bytes), LH_OK, "metadata: from bytes");
  check_metadata(&from_bytes, all, "read from the bytes");
  lhio_encoded_clear(&bytes);
  uint8_t *metadata = img.metadata;
  size_t metadata_size = img.metadata_size;
  img.metadata = NULL;
  img.metadata_size = 0;
  const char *bare = test_path(dir, "metadata-bare.jpg");
  CHECK_STATUS(lhio_write(bare, &img, NULL), LH_OK, "metadata: bare write");
  img.metadata = metadata;
  img.metadata_size = metadata_size;
  CHECK_STATUS(lhio_load(bare, &bytes), LH_OK, "metadata: load bare");
  CHECK_STATUS(lhio_jpeg_insert_metadata(&bytes, &from_bytes), LH_OK, "metadata: insert");
  const char *joined = test_path(dir, "metadata-joined.jpg");
  test_write_file(joined, bytes.data, bytes.size);
  lhio_encoded_clear(&bytes);
  LhioImage plain;
  CHECK_STATUS(lhio_read(bare, LHIO_READ_FULL, 0, &plain), LH_OK, "metadata: read bare");
  check_metadata(&plain, 0, "written without");
  CHECK_STATUS(lhio_read(joined, LHIO_READ_FULL, 0, &back), LH_OK, "metadata: read joined");
  check_metadata(&back, all, "inserted into another encoder's bytes");
  CHECK(plain.pixels && back.pixels && memcmp(plain.pixels, back.pixels, (size_t)w * h * 3) == 0,
        "metadata inserted: the pixels decode otherwise");
  lhio_image_clear(&plain);
  lhio_image_clear(&back);
  lhio_image_clear(&from_bytes);
  lhio_image_clear(&img);

  /* A CMYK file's profile is of its inks, not of the R'G'B' written. */
  const char *cmyk = test_path(dir, "metadata-cmyk.jpg");
  encode_lib(cmyk, src, w, h, JCS_CMYK, 4, JCS_CMYK, false, 0, 0, true);
  CHECK_STATUS(lhio_read(cmyk, LHIO_READ_FULL, 0, &img), LH_OK, "metadata: CMYK");
  check_metadata(&img, no_icc, "CMYK converted");
  lhio_image_clear(&img);
  free(src);
}

static void test_truncated(const char *dir, uint64_t *seed)
{
  const int w = 120, h = 90;
  uint8_t *src = make_photo(w, h, 3, seed);
  for (int progressive = 0; progressive <= 1; progressive++) {
    const char *whole = test_path(dir, "whole.jpg");
    encode_lib(whole, src, w, h, JCS_RGB, 3, JCS_YCbCr, progressive, 2, 2, false);
    size_t size = 0;
    uint8_t *data = test_read_file(whole, &size);
    size_t cuts[] = {2, 3, 100, size / 3, size / 2, size - 2, size - 1};
    for (size_t c = 0; c < sizeof cuts / sizeof cuts[0]; c++) {
      const char *path = test_path(dir, "cut.jpg");
      test_write_file(path, data, cuts[c]);
      for (int mode = LHIO_READ_FULL; mode <= LHIO_READ_LUMA; mode++) {
        char what[96];
        snprintf(what, sizeof what, "%s JPEG cut to %zu of %zu bytes, %s mode",
                 progressive ? "progressive" : "baseline", cuts[c], size,
                 mode == LHIO_READ_FULL ? "full" : "luma");
        LhioImage img;
        CHECK_STATUS(lhio_read(path, mode, 0, &img), LH_ERROR_CORRUPT, what);
        CHECK(strncmp(lh_last_error(), path, strlen(path)) == 0, "%s: message \"%s\"", what,
              lh_last_error());
        CHECK(img.pixels == NULL, "%s: pixels left behind", what);
        lhio_image_clear(&img);
      }
    }
    free(data);
  }
  free(src);
}

static void test_quality(const char *dir, uint64_t *seed)
{
  const int w = 128, h = 96;
  uint8_t *src = make_photo(w, h, 3, seed);
  LhioImage img = wrap(src, LH_FORMAT_RGB, w, h);
  const char *low = test_path(dir, "q30.jpg"), *high = test_path(dir, "q95.jpg");
  LhioWriteOptions q30 = {.jpeg_quality = 30}, q95 = {.jpeg_quality = 95};
  CHECK_STATUS(lhio_write(low, &img, &q30), LH_OK, "quality 30");
  CHECK_STATUS(lhio_write(high, &img, &q95), LH_OK, "quality 95");
  struct stat a, b;
  CHECK(stat(low, &a) == 0 && stat(high, &b) == 0 && a.st_size < b.st_size,
        "quality 30 is not smaller than quality 95");
  LhioWriteOptions bad = {.jpeg_quality = 101};
  CHECK_STATUS(lhio_write(test_path(dir, "bad.jpg"), &img, &bad), LH_ERROR_INVALID_ARGUMENT,
               "quality 101");
  bad.jpeg_quality = -1;
  CHECK_STATUS(lhio_write(test_path(dir, "bad.jpg"), &img, &bad), LH_ERROR_INVALID_ARGUMENT,
               "quality -1");
  CHECK(access(test_path(dir, "bad.jpg"), F_OK) != 0, "a refused write left a file");
  lhio_image_clear(&img);
}

/* BGR and 4-byte frames encode to the same pixels as the RGB they hold. */
static void test_channel_orders(const char *dir, uint64_t *seed)
{
  const int w = 50, h = 38;
  uint8_t *rgb = make_photo(w, h, 3, seed);
  LhioImage ref = wrap(rgb, LH_FORMAT_RGB, w, h);
  const char *ref_path = test_path(dir, "order-rgb.jpg");
  CHECK_STATUS(lhio_write(ref_path, &ref, NULL), LH_OK, "RGB reference");
  int rw, rh, rc;
  uint8_t *want = decode_lib(ref_path, JCS_RGB, &rw, &rh, &rc);
  static const struct {
    LhFormat format;
    int bytes, order[4];
  } cases[] = {{LH_FORMAT_BGR, 3, {2, 1, 0, -1}},
               {LH_FORMAT_RGBA, 4, {0, 1, 2, -1}},
               {LH_FORMAT_BGRA, 4, {2, 1, 0, -1}},
               {LH_FORMAT_RGBX, 4, {0, 1, 2, -1}},
               {LH_FORMAT_BGRX, 4, {2, 1, 0, -1}}};
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    int bytes = cases[k].bytes;
    size_t stride = (size_t)w * bytes + 7;
    uint8_t *p = calloc(stride, h);
    for (int y = 0; y < h; y++)
      for (int x = 0; x < w; x++)
        for (int b = 0; b < bytes; b++)
          p[y * stride + x * bytes + b] =
              cases[k].order[b] < 0 ? 0x77 : rgb[((size_t)y * w + x) * 3 + cases[k].order[b]];
    LhioImage img = wrap(p, cases[k].format, w, h);
    img.frame.strides[0] = stride;
    const char *path = test_path(dir, "order.jpg");
    const char *name = lh_format_name(cases[k].format);
    CHECK_STATUS(lhio_write(path, &img, NULL), LH_OK, name);
    int gw, gh, gc;
    uint8_t *got = decode_lib(path, JCS_RGB, &gw, &gh, &gc);
    CHECK(gw == w && gh == h && memcmp(got, want, (size_t)w * h * 3) == 0,
          "%s frame does not encode like the RGB one", name);
    free(got);
    lhio_image_clear(&img);
  }
  free(want);
  lhio_image_clear(&ref);
}

int main(void)
{
  char *dir = test_make_dir();
  uint64_t seed = 7;
  test_gray(dir, &seed);
  test_colour(dir, &seed);
  test_luma_only(dir, &seed);
  test_rgb_coded(dir, &seed);
  test_cmyk(dir, &seed);
  test_metadata_kept(dir, &seed);
  test_density_kept(dir, &seed);
  test_truncated(dir, &seed);
  test_quality(dir, &seed);
  test_channel_orders(dir, &seed);
  test_remove_dir(dir);
  return test_result("test-jpeg");
}
