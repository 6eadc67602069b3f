/* png.c: PNG reading and writing through libpng, every colour type and bit
 * depth, errors turned into a status and message instead of abort or stderr;
 * reading tries the fast path for the common PNGs (png-fast.c) first. */
#include <errno.h>
#include <limits.h>
#include <png.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "lhio-private.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define HOST_IS_BIG_ENDIAN 1
#else
#define HOST_IS_BIG_ENDIAN 0
#endif

/* What libpng's callbacks share with the code that called libpng.  It lives in
 * memory whose address libpng holds, so its fields are valid after longjmp. */
typedef struct {
  FILE *file;
  int status; /* set before png_error() when the cause is known */
  char message[256];
  png_structp png;
  png_infop info;
  uint8_t *pixels;
  uint8_t *alpha;
  png_bytep *rows;
  uint8_t *scratch; /* writing: a converted copy of the pixels */
} PngState;

static void on_error(png_structp png, png_const_charp message)
{
  PngState *state = png_get_error_ptr(png);
  snprintf(state->message, sizeof state->message, "%s", message);
  png_longjmp(png, 1);
}

/* Warnings (a bad ancillary chunk, an unknown sRGB profile) do not stop the
 * image from being read; the library must not print them. */
static void on_warning(png_structp png, png_const_charp message)
{
}

static void on_read(png_structp png, png_bytep data, size_t n)
{
  PngState *state = png_get_io_ptr(png);
  if (fread(data, 1, n, state->file) == n)
    return;
  if (ferror(state->file)) {
    state->status = LH_ERROR_IO;
    png_error(png, strerror(errno));
  }
  state->status = LH_ERROR_CORRUPT;
  png_error(png, "truncated file");
}

static void on_write(png_structp png, png_bytep data, size_t n)
{
  PngState *state = png_get_io_ptr(png);
  if (fwrite(data, 1, n, state->file) != n) {
    state->status = LH_ERROR_IO;
    png_error(png, strerror(errno));
  }
}

static void on_flush(png_structp png)
{
  PngState *state = png_get_io_ptr(png);
  if (fflush(state->file) != 0) {
    state->status = LH_ERROR_IO;
    png_error(png, strerror(errno));
  }
}

/* The status of an error libpng raised by itself: its own allocation
 * failures say so; anything else is a malformed file. */
static int status_of(const PngState *state)
{
  if (state->status)
    return state->status;
  if (strstr(state->message, "memory"))
    return LH_ERROR_NO_MEMORY;
  return LH_ERROR_CORRUPT;
}

/* rows x row_bytes from allocate, or NULL when the product overflows. */
static void *checked_alloc_with(void *(*allocate)(size_t), size_t rows, size_t row_bytes)
{
  size_t bytes;
  if (__builtin_mul_overflow(rows, row_bytes, &bytes))
    return NULL;
  return allocate(bytes ? bytes : 1);
}

static void *checked_alloc(size_t rows, size_t row_bytes)
{
  return checked_alloc_with(malloc, rows, row_bytes);
}

/* The decoded image's pixels, from the program's allocator. */
static void *checked_pixels_alloc(size_t rows, size_t row_bytes)
{
  return checked_alloc_with(lhio_pixels_alloc, rows, row_bytes);
}

/* ------------------------------------------------------------------------ */
/* Reading                                                                   */

static int read_png(PngState *state, const char *path, uint64_t max_pixels, LhioImage *image)
{
  png_structp png = state->png;
  png_infop info = state->info;
  if (setjmp(png_jmpbuf(png)))
    return lhio_fail(status_of(state), path, "%s", state->message);

  png_set_read_fn(png, state, on_read);
  /* libpng's own default limit (1e6 pixels a side) would refuse large images
   * as corrupt; the pixel limit below is ours to enforce. */
  png_set_user_limits(png, 0x7fffffff, 0x7fffffff);
#ifdef PNG_HANDLE_AS_UNKNOWN_SUPPORTED
  /* Text, profiles, EXIF and suggested palettes change no pixel here; as
   * chunks it does not know, libpng skips them as it reads them, instead of
   * first allocating whatever length they claim (1.8 GB for a 124-byte file
   * that the fuzzer found, which then ends as "truncated file" anyway). */
  static const png_byte unused_chunks[] = "tEXt\0zTXt\0iTXt\0iCCP\0sPLT\0eXIf";
  png_set_keep_unknown_chunks(png, PNG_HANDLE_CHUNK_NEVER, unused_chunks, 6);
#endif
  png_read_info(png, info);

  png_uint_32 width, height;
  int depth, color_type, interlace;
  png_get_IHDR(png, info, &width, &height, &depth, &color_type, &interlace, NULL, NULL);
  if (width == 0 || height == 0)
    return lhio_fail(LH_ERROR_CORRUPT, path, "image has no pixels (%ux%u)", (unsigned)width,
                     (unsigned)height);
  if ((uint64_t)width * height > max_pixels)
    return lhio_fail(LH_ERROR_TOO_LARGE, path, "%ux%u is %llu pixels, above the limit of %llu",
                     (unsigned)width, (unsigned)height, (unsigned long long)width * height,
                     (unsigned long long)max_pixels);
  if (width > INT_MAX || height > INT_MAX)
    return lhio_fail(LH_ERROR_TOO_LARGE, path, "%ux%u is too large", (unsigned)width,
                     (unsigned)height);

  bool has_trns = png_get_valid(png, info, PNG_INFO_tRNS) != 0;
  image->source_bit_depth = depth;
  image->source_palette = color_type == PNG_COLOR_TYPE_PALETTE;
  image->source_interlaced = interlace != PNG_INTERLACE_NONE;
  switch (color_type) {
  case PNG_COLOR_TYPE_GRAY:
    image->source_channels = has_trns ? 2 : 1;
    break;
  case PNG_COLOR_TYPE_GRAY_ALPHA:
    image->source_channels = 2;
    break;
  case PNG_COLOR_TYPE_PALETTE:
  case PNG_COLOR_TYPE_RGB:
    image->source_channels = has_trns ? 4 : 3;
    break;
  default:
    image->source_channels = 4;
    break;
  }

  /* Palette to RGB(A), low-bit gray scaled to 8 bits, a tRNS colour key to a
   * real alpha channel: everything arrives as 8- or 16-bit samples. */
  if (color_type == PNG_COLOR_TYPE_PALETTE)
    png_set_palette_to_rgb(png);
  if (color_type == PNG_COLOR_TYPE_GRAY && depth < 8)
    png_set_expand_gray_1_2_4_to_8(png);
  if (has_trns)
    png_set_tRNS_to_alpha(png);
  if (depth == 16 && !HOST_IS_BIG_ENDIAN)
    png_set_swap(png);
  png_set_interlace_handling(png);
  png_read_update_info(png, info);

  int channels = png_get_channels(png, info);
  int out_depth = png_get_bit_depth(png, info);
  size_t row_bytes = png_get_rowbytes(png, info);
  if (channels != image->source_channels || (out_depth != 8 && out_depth != 16))
    return lhio_fail(LH_ERROR_UNSUPPORTED, path, "unexpected layout after expansion (%d x %d bits)",
                     channels, out_depth);

  state->pixels = checked_pixels_alloc(height, row_bytes);
  state->rows = checked_alloc(height, sizeof *state->rows);
  if (!state->pixels || !state->rows)
    return lhio_fail(LH_ERROR_NO_MEMORY, path, "no memory for %ux%u pixels", (unsigned)width,
                     (unsigned)height);
  for (png_uint_32 y = 0; y < height; y++)
    state->rows[y] = state->pixels + y * row_bytes;
  png_read_image(png, state->rows);
  /* Reading to IEND makes a file cut short after its pixel data an error too. */
  png_read_end(png, NULL);

  int sample_bytes = out_depth / 8;
  size_t stride = row_bytes;
  if (channels == 2) {
    /* Gray + alpha: the gray samples are compacted in place to the front of
     * the buffer (each moves down, never over one not yet read); alpha goes
     * to its own plane. */
    size_t pixels = (size_t)width * height;
    state->alpha = malloc(pixels * sample_bytes);
    if (!state->alpha)
      return lhio_fail(LH_ERROR_NO_MEMORY, path, "no memory for the alpha plane");
    for (size_t i = 0; i < pixels; i++) {
      memmove(state->pixels + i * sample_bytes, state->pixels + 2 * i * sample_bytes, sample_bytes);
      memcpy(state->alpha + i * sample_bytes, state->pixels + (2 * i + 1) * sample_bytes,
             sample_bytes);
    }
    stride = (size_t)width * sample_bytes;
    image->alpha_stride = stride;
  }

  static const LhFormat formats[2][4] = {
      {LH_FORMAT_GRAY8, LH_FORMAT_GRAY8, LH_FORMAT_RGB, LH_FORMAT_RGBA},
      {LH_FORMAT_GRAY16, LH_FORMAT_GRAY16, LH_FORMAT_RGB16, LH_FORMAT_RGBA16},
  };
  image->pixels = state->pixels;
  image->alpha = state->alpha;
  state->pixels = NULL;
  state->alpha = NULL;
  lhio_set_frame(image, formats[sample_bytes - 1][channels - 1], (int)width, (int)height, out_depth,
                 stride);
  return LH_OK;
}

int lhio_png_read_libpng(FILE *file, const char *path, uint64_t max_pixels, LhioImage *image)
{
  PngState state = {.file = file};
  state.png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &state, on_error, on_warning);
  if (state.png)
    state.info = png_create_info_struct(state.png);
  int status;
  if (!state.png || !state.info)
    status = lhio_fail(LH_ERROR_NO_MEMORY, path, "cannot create a PNG reader");
  else
    status = read_png(&state, path, max_pixels, image);
  png_destroy_read_struct(state.png ? &state.png : NULL, state.info ? &state.info : NULL, NULL);
  lhio_pixels_release(state.pixels);
  free(state.alpha);
  free(state.rows);
  return status;
}

/* Deflate's largest expansion: a 258-byte match coded in 2 bits (a 1-bit
 * length code and a 1-bit distance code), so N bytes of IDAT data inflate to
 * at most 1032 N bytes of rows. */
#define DEFLATE_MAX_EXPANSION 1032u

/* The bits a pixel of a valid colour type and depth takes in the file, or 0. */
static unsigned png_pixel_bits(int color_type, int depth)
{
  const bool low_depth = depth == 1 || depth == 2 || depth == 4;
  switch (color_type) {
  case PNG_COLOR_TYPE_GRAY:
    return low_depth || depth == 8 || depth == 16 ? (unsigned)depth : 0;
  case PNG_COLOR_TYPE_PALETTE:
    return low_depth || depth == 8 ? (unsigned)depth : 0;
  case PNG_COLOR_TYPE_GRAY_ALPHA:
    return depth == 8 || depth == 16 ? 2u * depth : 0;
  case PNG_COLOR_TYPE_RGB:
    return depth == 8 || depth == 16 ? 3u * depth : 0;
  case PNG_COLOR_TYPE_RGB_ALPHA:
    return depth == 8 || depth == 16 ? 4u * depth : 0;
  default:
    return 0;
  }
}

/* Refuses a PNG whose IDAT data is too short to inflate to the pixels its
 * header declares, before libpng allocates its row buffers (clearing one)
 * and png.c the frame: a 100-byte file declaring 2^28 16-bit RGBA pixels in
 * one row, within the pixel limit, had libpng clear a 2 GiB row before it
 * found the data short.  Only a sound header within the limit is judged
 * here; libpng says what is wrong with the others. */
static int check_idat_size(const uint8_t *data, size_t size, const char *path, uint64_t max_pixels)
{
  static const uint8_t signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
  if (size < 33 || memcmp(data, signature, 8) != 0 || lhio_be32(data + 8) != 13 ||
      memcmp(data + 12, "IHDR", 4) != 0 || crc32(0L, data + 12, 17) != lhio_be32(data + 29))
    return LH_OK;
  const uint32_t width = lhio_be32(data + 16), height = lhio_be32(data + 20);
  const unsigned pixel_bits = png_pixel_bits(data[25], data[24]);
  if (pixel_bits == 0 || width == 0 || height == 0 || width > INT_MAX || height > INT_MAX ||
      (uint64_t)width * height > max_pixels)
    return LH_OK;
  uint64_t least_bits, least_rows;
  if (__builtin_mul_overflow((uint64_t)width * height, pixel_bits, &least_bits))
    least_rows = UINT64_MAX;
  else
    least_rows = least_bits / 8;

  /* The IDAT bytes the file holds, those of a chunk cut short included. */
  uint64_t idat = 0;
  bool whole = false;
  size_t at = 33;
  while (size - at >= 8) {
    const uint32_t length = lhio_be32(data + at);
    const size_t available = size - at - 8;
    if (memcmp(data + at + 4, "IDAT", 4) == 0)
      idat += length < available ? length : available;
    if (length > available || available - length < 4)
      break;
    if (memcmp(data + at + 4, "IEND", 4) == 0) {
      whole = true;
      break;
    }
    at += 12 + (size_t)length;
  }
  uint64_t most;
  if (__builtin_mul_overflow(idat, DEFLATE_MAX_EXPANSION, &most) || most >= least_rows)
    return LH_OK;
  /* Cut short, libpng would say so when it ran out of data. */
  if (!whole)
    return lhio_fail(LH_ERROR_CORRUPT, path, "truncated file");
  return lhio_fail(LH_ERROR_CORRUPT, path,
                   "damaged file: its image data (%llu bytes) is too short for %ux%u pixels",
                   (unsigned long long)idat, (unsigned)width, (unsigned)height);
}

int lhio_png_read(FILE *file, const LhioEncoded *encoded, const char *path, LhioReadMode mode,
                  uint64_t max_pixels, LhioImage *image)
{
  if (encoded) {
    int status = check_idat_size(encoded->data, encoded->size, path, max_pixels);
    if (status < 0)
      return status;
  }
#ifdef LHIO_HAVE_LIBDEFLATE
  int fast = encoded ? lhio_png_fast_read(encoded->data, encoded->size, max_pixels, image)
                     : LHIO_PNG_FAST_DECLINED;
  if (fast != LHIO_PNG_FAST_DECLINED)
    return fast;
#endif
  return lhio_png_read_libpng(file, path, max_pixels, image);
}

/* ------------------------------------------------------------------------ */
/* Writing                                                                   */

/* How a frame goes into a PNG. */
typedef struct {
  int color_type;
  int bit_depth;    /* of the file */
  int sample_bytes; /* of the frame */
  int channels;     /* of the frame (RGBX counts 4) */
  bool bgr;
  bool filler; /* a 4th byte to drop */
} PngLayout;

/* Whether every value of an 8-bit gray frame is one of a low depth's levels:
 * a multiple of 255 / (2^depth - 1), which divides 255 for 1, 2 and 4 bits. */
static bool on_levels(const LhFrame *frame, int depth)
{
  unsigned step = 255u / ((1u << depth) - 1);
  size_t stride = frame->strides[0] ? frame->strides[0] : (size_t)frame->width;
  for (int y = 0; y < frame->height; y++) {
    const uint8_t *row = (const uint8_t *)frame->planes[0] + (size_t)y * stride;
    for (int x = 0; x < frame->width; x++)
      if (row[x] % step != 0)
        return false;
  }
  return true;
}

static int png_layout(const char *path, const LhioImage *image, PngLayout *layout)
{
  const LhFrame *frame = &image->frame;
  memset(layout, 0, sizeof *layout);
  layout->sample_bytes = 1;
  layout->bit_depth = 8;
  switch (frame->format) {
  case LH_FORMAT_GRAY16:
    layout->sample_bytes = 2;
    layout->bit_depth = 16;
    /* fallthrough */
  case LH_FORMAT_GRAY8:
    layout->color_type = image->alpha ? PNG_COLOR_TYPE_GRAY_ALPHA : PNG_COLOR_TYPE_GRAY;
    layout->channels = 1;
    break;
  case LH_FORMAT_BGR:
    layout->bgr = true;
    /* fallthrough */
  case LH_FORMAT_RGB:
    layout->color_type = PNG_COLOR_TYPE_RGB;
    layout->channels = 3;
    break;
  case LH_FORMAT_BGRA:
    layout->bgr = true;
    /* fallthrough */
  case LH_FORMAT_RGBA:
    layout->color_type = PNG_COLOR_TYPE_RGB_ALPHA;
    layout->channels = 4;
    break;
  case LH_FORMAT_BGRX:
    layout->bgr = true;
    /* fallthrough */
  case LH_FORMAT_RGBX:
    layout->color_type = PNG_COLOR_TYPE_RGB;
    layout->channels = 4;
    layout->filler = true;
    break;
  case LH_FORMAT_RGB16:
    layout->color_type = PNG_COLOR_TYPE_RGB;
    layout->channels = 3;
    layout->sample_bytes = 2;
    layout->bit_depth = 16;
    break;
  case LH_FORMAT_RGBA16:
    layout->color_type = PNG_COLOR_TYPE_RGB_ALPHA;
    layout->channels = 4;
    layout->sample_bytes = 2;
    layout->bit_depth = 16;
    break;
  default: {
    const char *name = lh_format_name(frame->format);
    return lhio_fail(LH_ERROR_UNSUPPORTED, path, "cannot write %s frames as PNG",
                     name ? name : "unknown");
  }
  }
  if (image->alpha && layout->channels != 1)
    return lhio_fail(LH_ERROR_INVALID_ARGUMENT, path,
                     "a separate alpha plane goes only with a gray frame");
  /* Gray read from a 1, 2 or 4-bit file goes back at that depth while its
   * values are still that depth's levels; equalized or drawn on, they fall
   * between them, and 8 bits keep them apart. */
  if (layout->color_type == PNG_COLOR_TYPE_GRAY && layout->bit_depth == 8 &&
      !image->source_palette &&
      (image->source_bit_depth == 1 || image->source_bit_depth == 2 ||
       image->source_bit_depth == 4) &&
      on_levels(frame, image->source_bit_depth))
    layout->bit_depth = image->source_bit_depth;
  return LH_OK;
}

static int check_frame(const char *path, const LhioImage *image)
{
  const LhFrame *frame = &image->frame;
  if (frame->memory != LH_MEMORY_HOST)
    return lhio_fail(LH_ERROR_INVALID_ARGUMENT, path, "the frame is not in host memory");
  if (frame->width <= 0 || frame->height <= 0 || !frame->planes[0])
    return lhio_fail(LH_ERROR_INVALID_ARGUMENT, path, "the frame has no pixels (%dx%d)",
                     frame->width, frame->height);
  if (frame->strides[0] != 0 && frame->strides[0] < lhio_packed_row_bytes(frame))
    return lhio_fail(LH_ERROR_INVALID_ARGUMENT, path, "stride %zu is less than a row",
                     frame->strides[0]);
  return LH_OK;
}

int lhio_png_check(const char *path, const LhioImage *image)
{
  PngLayout layout;
  int status = check_frame(path, image);
  if (status < 0)
    return status;
  status = png_layout(path, image, &layout);
  if (status < 0)
    return status;
  int max_depth = layout.sample_bytes * 8;
  if (image->frame.bit_depth < 0 || image->frame.bit_depth > max_depth ||
      (layout.sample_bytes == 1 && image->frame.bit_depth != 0 && image->frame.bit_depth != 8))
    return lhio_fail(LH_ERROR_INVALID_ARGUMENT, path, "bit depth %d does not fit %s",
                     image->frame.bit_depth, lh_format_name(image->frame.format));
  return LH_OK;
}

/* Builds the rows libpng is to write: the frame's own rows when it can take
 * them as they are, else a converted copy (gray + alpha interleaved, or gray
 * requantized to a low bit depth). */
static int prepare_rows(PngState *state, const char *path, const LhioImage *image,
                        const PngLayout *layout)
{
  const LhFrame *frame = &image->frame;
  size_t width = (size_t)frame->width, height = (size_t)frame->height;
  size_t stride = frame->strides[0] ? frame->strides[0] : lhio_packed_row_bytes(frame);
  const uint8_t *src = frame->planes[0];
  int sb = layout->sample_bytes;

  state->rows = checked_alloc(height, sizeof *state->rows);
  if (!state->rows)
    return lhio_fail(LH_ERROR_NO_MEMORY, path, "out of memory");

  size_t row_bytes = 0;
  if (layout->color_type == PNG_COLOR_TYPE_GRAY_ALPHA) {
    size_t alpha_stride = image->alpha_stride ? image->alpha_stride : width * sb;
    row_bytes = width * 2 * sb;
    state->scratch = checked_alloc(height, row_bytes);
    if (!state->scratch)
      return lhio_fail(LH_ERROR_NO_MEMORY, path, "out of memory");
    for (size_t y = 0; y < height; y++) {
      const uint8_t *g = src + y * stride, *a = image->alpha + y * alpha_stride;
      uint8_t *out = state->scratch + y * row_bytes;
      for (size_t x = 0; x < width; x++) {
        memcpy(out + 2 * x * sb, g + x * sb, sb);
        memcpy(out + (2 * x + 1) * sb, a + x * sb, sb);
      }
    }
  } else if (layout->bit_depth < 8) {
    /* One sample per byte, rounded to the nearest of the 2^depth levels;
     * png_set_packing() packs them.  Values read from such a file are exact
     * multiples of 255 / (2^depth - 1) and come back unchanged. */
    unsigned levels = (1u << layout->bit_depth) - 1;
    row_bytes = width;
    state->scratch = checked_alloc(height, row_bytes);
    if (!state->scratch)
      return lhio_fail(LH_ERROR_NO_MEMORY, path, "out of memory");
    for (size_t y = 0; y < height; y++)
      for (size_t x = 0; x < width; x++)
        state->scratch[y * row_bytes + x] = (uint8_t)((src[y * stride + x] * levels + 127) / 255);
  }
  for (size_t y = 0; y < height; y++)
    state->rows[y] =
        state->scratch ? state->scratch + y * row_bytes : (png_bytep)(src + y * stride);
  return LH_OK;
}

static int write_png(PngState *state, const char *path, const LhioImage *image,
                     const LhioWriteOptions *options)
{
  PngLayout layout;
  int status = png_layout(path, image, &layout);
  if (status < 0)
    return status;
  status = prepare_rows(state, path, image, &layout);
  if (status < 0)
    return status;

  png_structp png = state->png;
  png_infop info = state->info;
  if (setjmp(png_jmpbuf(png)))
    return lhio_fail(status_of(state), path, "%s", state->message);
  png_set_write_fn(png, state, on_write, on_flush);
  /* The default is OpenCV's imwrite: zlib's fastest level, the SUB filter
   * on every row and zlib's RLE strategy (encoding is most of a rewriting
   * batch's time; libpng's choice of a filter per row made it 0.85x OpenCV
   * on PNG folders).  A level asked for is zlib's, libpng choosing the
   * filters: smaller files, slower. */
  int level = options->png_compression;
  if (level == 0) {
    png_set_filter(png, PNG_FILTER_TYPE_BASE, PNG_FILTER_SUB);
    png_set_compression_strategy(png, Z_RLE);
    level = LHIO_DEFAULT_PNG_COMPRESSION;
  }
  png_set_compression_level(png, level == LHIO_PNG_UNCOMPRESSED ? 0 : level);
  png_set_IHDR(png, info, (png_uint_32)image->frame.width, (png_uint_32)image->frame.height,
               layout.bit_depth, layout.color_type,
               image->source_interlaced ? PNG_INTERLACE_ADAM7 : PNG_INTERLACE_NONE,
               PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);

  /* 16-bit samples of fewer significant bits (10-bit video, say) are scaled
   * up to the full 16 bits as PNG expects, with sBIT saying what they were. */
  int depth = image->frame.bit_depth;
  bool shift = layout.bit_depth == 16 && depth > 0 && depth < 16;
  if (shift) {
    png_color_8 sig = {.red = depth, .green = depth, .blue = depth, .gray = depth};
    if (layout.color_type & PNG_COLOR_MASK_ALPHA)
      sig.alpha = 16;
    png_set_sBIT(png, info, &sig);
  }
  png_write_info(png, info);
  if (image->type == LHIO_FILE_PNG)
    lhio_png_write_metadata(png, image);
  if (shift) {
    png_color_8 sig = {.red = depth, .green = depth, .blue = depth, .gray = depth, .alpha = 16};
    png_set_shift(png, &sig);
  }
  if (layout.bit_depth < 8)
    png_set_packing(png);
  if (layout.bit_depth == 16 && !HOST_IS_BIG_ENDIAN)
    png_set_swap(png);
  if (layout.bgr)
    png_set_bgr(png);
  if (layout.filler)
    png_set_filler(png, 0, PNG_FILLER_AFTER);
  png_write_image(png, state->rows);
  png_write_end(png, NULL);
  return LH_OK;
}

int lhio_png_write(FILE *file, const char *path, const LhioImage *image,
                   const LhioWriteOptions *options)
{
  PngState state = {.file = file};
  state.png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &state, on_error, on_warning);
  if (state.png)
    state.info = png_create_info_struct(state.png);
  int status;
  if (!state.png || !state.info)
    status = lhio_fail(LH_ERROR_NO_MEMORY, path, "cannot create a PNG writer");
  else
    status = write_png(&state, path, image, options);
  png_destroy_write_struct(state.png ? &state.png : NULL, state.info ? &state.info : NULL);
  free(state.rows);
  free(state.scratch);
  return status;
}
