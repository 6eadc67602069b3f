/* png-fast.c: the common PNGs (8- or 16-bit gray, gray + alpha, RGB, RGBA,
 * not interlaced, no palette, no tRNS) decoded from memory with libdeflate
 * and our own unfiltering, to exactly the frame that png.c's libpng reader
 * gives.  Whatever is not that common case, and whatever is wrong with a file
 * (a bad CRC, a short file, a bad zlib stream, a chunk libpng refuses), is
 * declined without a message, so that libpng reads it and says what it says.
 * One difference is left, for deflate data made on purpose: libdeflate takes
 * what zlib refuses (length codes 286-287, distance codes 30-31, more than
 * 286 or 30 codes in a dynamic block's header); no encoder writes them, and
 * in a damaged file they come only with IDAT CRCs that still match.
 *
 * Why: on 4K photographs libpng spends about half its time in zlib's inflate
 * and most of the rest in its scalar Paeth unfilter; libdeflate inflates the
 * whole stream in one call at twice zlib's speed or more, and the Paeth
 * predictor of one pixel's channels fits in one SSE2 register. */
#include <libdeflate.h>
#include <stdlib.h>
#include <string.h>

#include "lhio-private.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define HOST_IS_BIG_ENDIAN 1
#else
#define HOST_IS_BIG_ENDIAN 0
#endif

enum { PNG_GRAY = 0, PNG_RGB = 2, PNG_GRAY_ALPHA = 4, PNG_RGBA = 6 };
enum { FILTER_NONE, FILTER_SUB, FILTER_UP, FILTER_AVERAGE, FILTER_PAETH };

/* libpng's default cap on a chunk other than IDAT (PNG_USER_CHUNK_MALLOC_MAX,
 * which png.c leaves as it is): a longer chunk is an error there. */
#define LIBPNG_CHUNK_MAX 8000000u
#define PNG_UINT_31 0x7fffffffu

static const uint8_t png_signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};

/* What the chunks of a file say, once every one of them has been checked. */
typedef struct {
  uint32_t width, height;
  int depth, color_type, channels;
  size_t bpp;       /* bytes a pixel in the file */
  size_t row_bytes; /* without the filter byte */
  const uint8_t *first_idat;
  size_t idat_count, idat_bytes;
} PngChunks;

static bool is_letter(uint8_t c)
{
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}

/* A chunk's CRC covers its type and data. */
static bool crc_matches(const uint8_t *chunk, uint32_t length)
{
  return libdeflate_crc32(0, chunk + 4, 4 + (size_t)length) == lhio_be32(chunk + 8 + length);
}

static bool parse_ihdr(const uint8_t *data, PngChunks *png)
{
  png->width = lhio_be32(data);
  png->height = lhio_be32(data + 4);
  png->depth = data[8];
  png->color_type = data[9];
  /* compression 0, filter method 0, no interlacing */
  if (data[10] != 0 || data[11] != 0 || data[12] != 0)
    return false;
  if (png->depth != 8 && png->depth != 16)
    return false;
  switch (png->color_type) {
  case PNG_GRAY:
    png->channels = 1;
    break;
  case PNG_GRAY_ALPHA:
    png->channels = 2;
    break;
  case PNG_RGB:
    png->channels = 3;
    break;
  case PNG_RGBA:
    png->channels = 4;
    break;
  default:
    return false;
  }
  png->bpp = (size_t)png->channels * (png->depth / 8);
  png->row_bytes = png->bpp * png->width;
  return true;
}

/* libpng's cap on one IDAT chunk (png_check_chunk_length): the image's
 * filtered bytes and zlib's worst overhead on them, or the general cap. */
static size_t idat_limit(const PngChunks *png)
{
  uint64_t row_factor = png->row_bytes + 1;
  uint64_t limit = PNG_UINT_31;
  if (png->height <= UINT32_MAX / row_factor) {
    limit = png->height * row_factor;
    uint64_t factor = row_factor > 32566 ? 32566 : row_factor;
    limit += 6 + 5 * (limit / factor + 1);
    if (limit > PNG_UINT_31)
      limit = PNG_UINT_31;
  }
  return limit < LIBPNG_CHUNK_MAX ? LIBPNG_CHUNK_MAX : (size_t)limit;
}

/* Walks every chunk up to IEND.  True only for a file whose pixels libpng
 * reads without an error and without a transform png.c would ask for: IHDR
 * first, IDAT chunks in one run, IEND, critical CRCs right, no chunk that is
 * cut short, too long or of an invalid name, no PLTE or tRNS. */
static bool walk_chunks(const uint8_t *data, size_t size, PngChunks *png)
{
  if (size < 8 || memcmp(data, png_signature, 8) != 0)
    return false;
  enum { BEFORE_IDAT, IN_IDAT, AFTER_IDAT } where = BEFORE_IDAT;
  bool first = true;
  size_t pos = 8;
  for (;;) {
    if (size - pos < 12)
      return false;
    const uint8_t *chunk = data + pos;
    uint32_t length = lhio_be32(chunk);
    const uint8_t *type = chunk + 4;
    if (length > PNG_UINT_31 || size - pos - 12 < length)
      return false;
    if (!is_letter(type[0]) || !is_letter(type[1]) || !is_letter(type[2]) || !is_letter(type[3]))
      return false;
    bool is_idat = memcmp(type, "IDAT", 4) == 0;
    if (first) {
      if (memcmp(type, "IHDR", 4) != 0 || length != 13 || !crc_matches(chunk, length) ||
          !parse_ihdr(chunk + 8, png))
        return false;
      first = false;
    } else if (is_idat) {
      if (where == AFTER_IDAT || length > idat_limit(png))
        return false;
      /* The CRC is checked as the data is gathered (gather_idat). */
      if (where == BEFORE_IDAT)
        png->first_idat = chunk;
      where = IN_IDAT;
      png->idat_count++;
      png->idat_bytes += length;
    } else if (memcmp(type, "IEND", 4) == 0) {
      return where != BEFORE_IDAT && length == 0 && crc_matches(chunk, length);
    } else if (!(type[0] & 0x20) || memcmp(type, "tRNS", 4) == 0 || length > LIBPNG_CHUNK_MAX) {
      /* A critical chunk (PLTE, a second IHDR, an unknown one) or the one
       * ancillary chunk that changes the pixels; libpng decides. */
      return false;
    } else if (where == IN_IDAT) {
      where = AFTER_IDAT;
    }
    /* An ancillary chunk whose CRC is wrong is dropped by libpng with a
     * warning: it does not matter to the pixels. */
    pos += 12 + (size_t)length;
  }
}

/* The zlib stream of the IDAT chunks, their CRCs checked: the one chunk's
 * data in place, or several gathered into *gathered (to be freed). */
static const uint8_t *gather_idat(const PngChunks *png, uint8_t **gathered)
{
  *gathered = NULL;
  const uint8_t *chunk = png->first_idat;
  if (png->idat_count == 1)
    return crc_matches(chunk, lhio_be32(chunk)) ? chunk + 8 : NULL;
  uint8_t *stream = malloc(png->idat_bytes ? png->idat_bytes : 1);
  if (!stream)
    return NULL;
  size_t filled = 0;
  for (size_t i = 0; i < png->idat_count; i++) {
    uint32_t length = lhio_be32(chunk);
    if (!crc_matches(chunk, length)) {
      free(stream);
      return NULL;
    }
    memcpy(stream + filled, chunk + 8, length);
    filled += length;
    chunk += 12 + (size_t)length;
  }
  *gathered = stream;
  return stream;
}

/* zlib (and so libpng) refuses a distance beyond the window the stream's
 * header declares; libdeflate does not look.  Any distance fits when the
 * window is zlib's largest or when all the data fits in it. */
static bool window_is_safe(const uint8_t *stream, size_t n, size_t inflated)
{
  if (n < 2)
    return false;
  int window_log = (stream[0] >> 4) + 8;
  return window_log == 15 || inflated <= ((size_t)1 << window_log);
}

/* ------------------------------------------------------------------------ */
/* Unfiltering (PNG specification, section 9).  out is raw or before it,   */
/* each pixel read before it is written; prev is the row above, unfiltered, */
/* or zeros for the first row.                                              */

static void unfilter_sub(uint8_t *out, const uint8_t *raw, size_t n, size_t bpp)
{
  for (size_t i = 0; i < bpp; i++)
    out[i] = raw[i];
  for (size_t i = bpp; i < n; i++)
    out[i] = (uint8_t)(raw[i] + out[i - bpp]);
}

static void unfilter_up(uint8_t *out, const uint8_t *raw, const uint8_t *prev, size_t n)
{
  size_t i = 0;
#if defined(__SSE2__)
  /* Each block is loaded before it is stored: right when out is raw or
   * a little before it (the in-place compaction), where a compiler's
   * vectorized loop would see the overlap and fall back to bytes. */
  for (; i + 16 <= n; i += 16) {
    __m128i x = _mm_loadu_si128((const __m128i *)(raw + i));
    __m128i b = _mm_loadu_si128((const __m128i *)(prev + i));
    _mm_storeu_si128((__m128i *)(out + i), _mm_add_epi8(x, b));
  }
#endif
  for (; i < n; i++)
    out[i] = (uint8_t)(raw[i] + prev[i]);
}

static void unfilter_average_scalar(uint8_t *out, const uint8_t *raw, const uint8_t *prev, size_t n,
                                    size_t bpp)
{
  for (size_t i = 0; i < bpp; i++)
    out[i] = (uint8_t)(raw[i] + (prev[i] >> 1));
  for (size_t i = bpp; i < n; i++)
    out[i] = (uint8_t)(raw[i] + ((out[i - bpp] + prev[i]) >> 1));
}

static inline uint8_t paeth_predictor(int a, int b, int c)
{
  int pa = abs(b - c), pb = abs(a - c), pc = abs(a + b - 2 * c);
  if (pa <= pb && pa <= pc)
    return (uint8_t)a;
  return (uint8_t)(pb <= pc ? b : c);
}

static void unfilter_paeth_scalar(uint8_t *out, const uint8_t *raw, const uint8_t *prev, size_t n,
                                  size_t bpp)
{
  for (size_t i = 0; i < bpp; i++)
    out[i] = (uint8_t)(raw[i] + prev[i]); /* a = c = 0: b predicts */
  for (size_t i = bpp; i < n; i++)
    out[i] = (uint8_t)(raw[i] + paeth_predictor(out[i - bpp], prev[i], prev[i - bpp]));
}

#if defined(__SSE2__)
/* One pixel of bpp bytes (3 to 8) in the 16-bit lanes of a register: the
 * channels of a pixel are independent, the pixels of a row are not. */
static inline uint64_t load_bytes(const uint8_t *p, size_t n)
{
  uint16_t u16;
  uint32_t u32;
  uint64_t u64;
  switch (n) {
  case 3: /* in registers: a zeroed 8-byte slot filled in part would stall on reading it */
    memcpy(&u16, p, 2);
    return u16 | (uint64_t)p[2] << 16;
  case 4:
    memcpy(&u32, p, 4);
    return u32;
  case 6:
    memcpy(&u32, p, 4);
    memcpy(&u16, p + 4, 2);
    return u32 | (uint64_t)u16 << 32;
  default:
    memcpy(&u64, p, 8);
    return u64;
  }
}

static inline __m128i load_pixel(const uint8_t *p, size_t bpp)
{
  return _mm_unpacklo_epi8(_mm_cvtsi64_si128((long long)load_bytes(p, bpp)), _mm_setzero_si128());
}

static inline void store_pixel(uint8_t *p, __m128i x, size_t bpp)
{
  uint64_t v = (uint64_t)_mm_cvtsi128_si64(_mm_packus_epi16(x, x));
  memcpy(p, &v, bpp);
}

static inline __m128i abs16(__m128i x)
{
  return _mm_max_epi16(x, _mm_sub_epi16(_mm_setzero_si128(), x));
}

static inline __m128i select16(__m128i mask, __m128i yes, __m128i no)
{
  return _mm_or_si128(_mm_and_si128(mask, yes), _mm_andnot_si128(mask, no));
}

/* Paeth's predictor of each 16-bit lane: of a (left), b (up) and c (up
 * left), the nearest to p = a + b - c, ties to a, then b, then c. */
static inline __m128i paeth_nearest(__m128i a, __m128i b, __m128i c)
{
  /* |p - a| = |b - c|, |p - b| = |a - c|, |p - c| = |a - c + b - c| */
  __m128i b_c = _mm_sub_epi16(b, c), a_c = _mm_sub_epi16(a, c);
  __m128i pa = abs16(b_c), pb = abs16(a_c), pc = abs16(_mm_add_epi16(a_c, b_c));
  __m128i smallest = _mm_min_epi16(_mm_min_epi16(pa, pb), pc);
  __m128i nearest = select16(_mm_cmpeq_epi16(pb, smallest), b, c);
  return select16(_mm_cmpeq_epi16(pa, smallest), a, nearest);
}

/* always_inline with a constant bpp: the loads and stores become plain moves. */
static inline __attribute__((always_inline)) void
unfilter_paeth_sse2(uint8_t *out, const uint8_t *raw, const uint8_t *prev, size_t n, size_t bpp)
{
  const __m128i low_byte = _mm_set1_epi16(0xff);
  __m128i a = _mm_setzero_si128(), c = _mm_setzero_si128();
  for (size_t i = 0; i < n; i += bpp) {
    __m128i b = load_pixel(prev + i, bpp);
    __m128i x = load_pixel(raw + i, bpp);
    a = _mm_and_si128(_mm_add_epi16(paeth_nearest(a, b, c), x), low_byte);
    c = b;
    store_pixel(out + i, a, bpp);
  }
}

/* Two Paeth rows at once, 8-bit pixels of bpp 3 or 4: the low half of a
 * register does pixel k of row 0 while the high half does pixel k - 1 of
 * row 1, whose a, b and c are all known by then (b and c are row 0's last
 * two results).  Each pixel still waits for its left neighbour, but the two
 * chains overlap, so a pair costs about what one pixel did.  raw0 must not
 * lie under out1 (unfilter_image copies it aside). */
static inline __attribute__((always_inline)) void
unfilter_paeth_pair_sse2(uint8_t *out0, uint8_t *out1, const uint8_t *raw0, const uint8_t *raw1,
                         const uint8_t *prev, size_t n, size_t bpp)
{
  const __m128i low_byte = _mm_set1_epi16(0xff), zero = _mm_setzero_si128();
  /* a: [row 0 pixel k-1 | row 1 pixel k-2]; c: [prev k-1 | row 0 pixel k-2] */
  __m128i a = zero, c = zero;
  for (size_t i = 0; i <= n; i += bpp) {
    uint64_t p = i < n ? load_bytes(prev + i, bpp) : 0;
    uint64_t x0 = i < n ? load_bytes(raw0 + i, bpp) : 0;
    uint64_t x1 = i > 0 ? load_bytes(raw1 + i - bpp, bpp) : 0;
    __m128i x = _mm_unpacklo_epi8(_mm_cvtsi64_si128((long long)(x0 | x1 << 32)), zero);
    __m128i b = _mm_unpacklo_epi64(_mm_unpacklo_epi8(_mm_cvtsi64_si128((long long)p), zero), a);
    a = _mm_and_si128(_mm_add_epi16(paeth_nearest(a, b, c), x), low_byte);
    c = b;
    uint64_t both = (uint64_t)_mm_cvtsi128_si64(_mm_packus_epi16(a, a));
    uint32_t pixel0 = (uint32_t)both, pixel1 = (uint32_t)(both >> 32);
    if (i < n)
      memcpy(out0 + i, &pixel0, bpp);
    /* At i = 0 the high half was the Paeth of zeros, 0: row 1's a, as due. */
    if (i > 0)
      memcpy(out1 + i - bpp, &pixel1, bpp);
  }
}

static inline __attribute__((always_inline)) void
unfilter_average_sse2(uint8_t *out, const uint8_t *raw, const uint8_t *prev, size_t n, size_t bpp)
{
  const __m128i low_byte = _mm_set1_epi16(0xff);
  __m128i a = _mm_setzero_si128();
  for (size_t i = 0; i < n; i += bpp) {
    __m128i b = load_pixel(prev + i, bpp);
    __m128i x = load_pixel(raw + i, bpp);
    a = _mm_and_si128(_mm_add_epi16(x, _mm_srli_epi16(_mm_add_epi16(a, b), 1)), low_byte);
    store_pixel(out + i, a, bpp);
  }
}

static inline __attribute__((always_inline)) void unfilter_pixels_sse2(int filter, uint8_t *out,
                                                                       const uint8_t *raw,
                                                                       const uint8_t *prev,
                                                                       size_t n, size_t bpp)
{
  if (filter == FILTER_PAETH)
    unfilter_paeth_sse2(out, raw, prev, n, bpp);
  else
    unfilter_average_sse2(out, raw, prev, n, bpp);
}
#endif

/* Average or Paeth: by SSE2 loops made for each pixel size of 3 to 8 bytes
 * (bpp a constant in each), else byte by byte. */
static void unfilter_by_pixel(int filter, uint8_t *out, const uint8_t *raw, const uint8_t *prev,
                              size_t n, size_t bpp)
{
#if defined(__SSE2__)
  switch (bpp) {
  case 3:
    unfilter_pixels_sse2(filter, out, raw, prev, n, 3);
    return;
  case 4:
    unfilter_pixels_sse2(filter, out, raw, prev, n, 4);
    return;
  case 6:
    unfilter_pixels_sse2(filter, out, raw, prev, n, 6);
    return;
  case 8:
    unfilter_pixels_sse2(filter, out, raw, prev, n, 8);
    return;
  }
#endif
  if (filter == FILTER_PAETH)
    unfilter_paeth_scalar(out, raw, prev, n, bpp);
  else
    unfilter_average_scalar(out, raw, prev, n, bpp);
}

/* False for a filter type the specification does not have (libpng: "bad
 * adaptive filter value"). */
static bool unfilter_row(int filter, uint8_t *out, const uint8_t *raw, const uint8_t *prev,
                         size_t n, size_t bpp)
{
  switch (filter) {
  case FILTER_NONE:
    memmove(out, raw, n);
    return true;
  case FILTER_SUB:
    unfilter_sub(out, raw, n, bpp);
    return true;
  case FILTER_UP:
    unfilter_up(out, raw, prev, n);
    return true;
  case FILTER_AVERAGE:
  case FILTER_PAETH:
    unfilter_by_pixel(filter, out, raw, prev, n, bpp);
    return true;
  default:
    return false;
  }
}

/* ------------------------------------------------------------------------ */
/* The frame, as png.c lays it out                                          */

/* Big-endian 16-bit samples to the host's order, as png_set_swap does. */
static void copy_samples16(uint8_t *out, const uint8_t *in, size_t n)
{
  if (HOST_IS_BIG_ENDIAN) {
    memcpy(out, in, n);
    return;
  }
  for (size_t i = 0; i + 1 < n; i += 2) {
    uint8_t high = in[i], low = in[i + 1]; /* out may be in, or before it */
    out[i] = low;
    out[i + 1] = high;
  }
}

/* A gray + alpha row to png.c's two planes: gray in the frame, alpha apart;
 * gray may be in (each sample moves down, never over one not yet read). */
static void split_gray_alpha(uint8_t *gray, uint8_t *alpha, const uint8_t *in, size_t width,
                             size_t sample_bytes)
{
  for (size_t x = 0; x < width; x++) {
    const uint8_t *s = in + 2 * x * sample_bytes;
    if (sample_bytes == 1) {
      gray[x] = s[0];
      alpha[x] = s[1];
    } else {
      copy_samples16(gray + 2 * x, s, 2);
      copy_samples16(alpha + 2 * x, s + 2, 2);
    }
  }
}

/* Row y of the unfiltered image to png.c's layout, in place: 16-bit samples
 * to the host's order; gray + alpha split, gray compacted to the front of
 * the buffer as png.c does it, alpha to its plane. */
static void finish_row(const PngChunks *png, uint8_t *pixels, uint8_t *alpha, size_t y)
{
  size_t sample_bytes = (size_t)png->depth / 8;
  uint8_t *row = pixels + y * png->row_bytes;
  if (png->channels == 2) {
    size_t plane_row = png->width * sample_bytes;
    split_gray_alpha(pixels + y * plane_row, alpha + y * plane_row, row, png->width, sample_bytes);
  } else if (sample_bytes == 2) {
    copy_samples16(row, row, png->row_bytes);
  }
}

/* Unfilters the inflated rows, each (1 + row_bytes) bytes from the start of
 * pixels, into packed rows of row_bytes from its start: row y's output ends
 * before its input starts, so one buffer does.  Each row is finished
 * (finish_row) once the row below has been unfiltered from it. */
static bool unfilter_image(const PngChunks *png, uint8_t *pixels, uint8_t *alpha)
{
  size_t n = png->row_bytes, bpp = png->bpp;
  bool finish = png->depth == 16 || png->channels == 2;
  bool pairs = false;
#if defined(__SSE2__)
  pairs = png->depth == 8 && (bpp == 3 || bpp == 4);
#endif
  uint8_t *zeros = calloc(n ? n : 1, 1), *raw_copy = pairs ? malloc(n ? n : 1) : NULL;
  if (!zeros || (pairs && !raw_copy)) {
    free(zeros);
    return false;
  }
  const uint8_t *prev = zeros;
  bool ok = true;
  for (size_t y = 0; y < png->height && ok; y++) {
    const uint8_t *raw = pixels + y * (n + 1);
    uint8_t *out = pixels + y * n;
#if defined(__SSE2__)
    const uint8_t *next_raw = raw + n + 1;
    if (pairs && y + 1 < png->height && raw[0] == FILTER_PAETH && next_raw[0] == FILTER_PAETH) {
      /* The next row's output starts under the end of this row's input. */
      memcpy(raw_copy, raw + 1, n);
      if (bpp == 3)
        unfilter_paeth_pair_sse2(out, out + n, raw_copy, next_raw + 1, prev, n, 3);
      else
        unfilter_paeth_pair_sse2(out, out + n, raw_copy, next_raw + 1, prev, n, 4);
      prev = out + n;
      y++;
      continue;
    }
#endif
    ok = unfilter_row(raw[0], out, raw + 1, prev, n, bpp);
    prev = out;
    if (ok && finish && y > 0)
      finish_row(png, pixels, alpha, y - 1);
  }
  if (ok && finish)
    finish_row(png, pixels, alpha, png->height - 1);
  free(zeros);
  free(raw_copy);
  return ok;
}

int lhio_png_fast_read(const uint8_t *data, size_t size, uint64_t max_pixels, LhioImage *image)
{
  PngChunks png = {0};
  if (!data || !walk_chunks(data, size, &png))
    return LHIO_PNG_FAST_DECLINED;
  /* Empty or too large: libpng's path says so. */
  if (png.width == 0 || png.height == 0 || png.width > PNG_UINT_31 || png.height > PNG_UINT_31 ||
      (uint64_t)png.width * png.height > max_pixels)
    return LHIO_PNG_FAST_DECLINED;

  size_t inflated_size;
  if (__builtin_mul_overflow(png.row_bytes + 1, (size_t)png.height, &inflated_size))
    return LHIO_PNG_FAST_DECLINED;

  uint8_t *gathered = NULL, *pixels = NULL, *alpha = NULL;
  struct libdeflate_decompressor *inflater = NULL;
  int status = LHIO_PNG_FAST_DECLINED;
  const uint8_t *stream = gather_idat(&png, &gathered);
  if (!stream || !window_is_safe(stream, png.idat_bytes, inflated_size))
    goto done;
  inflater = libdeflate_alloc_decompressor();
  /* The rows are inflated into the frame's own buffer and unfiltered there
   * (unfilter_image): one buffer, a row per image more than png.c's. */
  pixels = lhio_pixels_alloc(inflated_size);
  size_t sample_bytes = (size_t)png.depth / 8;
  size_t stride = png.channels == 2 ? png.width * sample_bytes : png.row_bytes;
  if (png.channels == 2)
    alpha = malloc(stride * png.height);
  if (!inflater || !pixels || (png.channels == 2 && !alpha))
    goto done;
  /* Exactly the image's filtered rows, or it is declined: a stream that is
   * short, long, corrupt or fails its Adler-32 is libpng's to report. */
  if (libdeflate_zlib_decompress(inflater, stream, png.idat_bytes, pixels, inflated_size, NULL) !=
      LIBDEFLATE_SUCCESS)
    goto done;
  if (!unfilter_image(&png, pixels, alpha))
    goto done;

  image->source_bit_depth = png.depth;
  image->source_channels = png.channels;
  image->source_palette = false;
  image->source_interlaced = false;
  static const LhFormat formats[2][4] = {
      {LH_FORMAT_GRAY8, LH_FORMAT_GRAY8, LH_FORMAT_RGB, LH_FORMAT_RGBA},
      {LH_FORMAT_GRAY16, LH_FORMAT_GRAY16, LH_FORMAT_RGB16, LH_FORMAT_RGBA16},
  };
  image->pixels = pixels;
  image->alpha = alpha;
  image->alpha_stride = alpha ? stride : 0;
  pixels = NULL;
  alpha = NULL;
  lhio_set_frame(image, formats[sample_bytes - 1][png.channels - 1], (int)png.width,
                 (int)png.height, png.depth, stride);
  status = LH_OK;
done:
  if (inflater)
    libdeflate_free_decompressor(inflater);
  free(gathered);
  lhio_pixels_release(pixels);
  free(alpha);
  return status;
}
