/* luma-rows.c: the CPU backend's row loops: the luma of a row of 8-bit
 * R'G'B' pixels, its hottest loop, the counting of 8-bit rows (and of the luma of R'G'B' rows,
 * fused) and of 10 to 16-bit keys (the Y of 16-bit words and of v210, and the luma of packed
 * 10-bit R'G'B', counted as their keys are made), and the keys of a row of 16-bit samples, of
 * v210 and of packed 10-bit and 16-bit R'G'B'.  On x86-64
 * with AVX2 (every x86-64 CPU since 2013), 32 pixels at a time: each pixel's bytes shuffled into
 * 16-bit pairs (R, G) and (B, next) in place and weighed by pmaddwd, so that the sums are the
 * 32-bit integers of lhi_luma; with SSE4.1 only, 16 at a time, the bytes taken apart into one
 * vector per byte position.  Elsewhere, and for the last pixels of a row, the plain loop.  Built at
 * -O3 (meson). */
#include <stdlib.h>
#include <string.h>

#include "lh-private.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define LHI_ROWS_SSE41 1
#endif

static void row3_plain(const uint8_t *px, int first, int width, const uint32_t *w, uint8_t *luma)
{
  for (int x = first; x < width; x++)
    luma[x] = (uint8_t)((w[0] * px[3 * x] + w[1] * px[3 * x + 1] + w[2] * px[3 * x + 2] +
                         LHI_LUMA_HALF) >>
                        LHI_LUMA_SHIFT);
}

static void row4_plain(const uint8_t *px, int first, int width, const uint32_t *w, uint8_t *luma)
{
  for (int x = first; x < width; x++)
    luma[x] = (uint8_t)((w[0] * px[4 * x] + w[1] * px[4 * x + 1] + w[2] * px[4 * x + 2] +
                         w[3] * px[4 * x + 3] + LHI_LUMA_HALF) >>
                        LHI_LUMA_SHIFT);
}

#ifdef LHI_ROWS_SSE41
/* Bytes ahead of the pixels being weighed that the loops ask the cache
 * for: without it a 4-byte row streams at a fifth of the speed of its
 * arithmetic on some x86 hosts (the hardware prefetcher alone keeps too
 * few lines in flight for a loop this long per line). */
#define LUMA_PREFETCH_BYTES 2048

/* Asks for the lines LUMA_PREFETCH_BYTES past each 64 of the bytes a step
 * reads (steps of up to 128 bytes).  always_inline: GCC 12 takes a call of
 * it, which has no effect it can see, for one it may drop, and did so in
 * the always_inline loops below. */
__attribute__((always_inline)) static inline void prefetch_ahead(const uint8_t *block,
                                                                 int step_bytes)
{
  _mm_prefetch((const char *)block + LUMA_PREFETCH_BYTES, _MM_HINT_T0);
  if (step_bytes > 64)
    _mm_prefetch((const char *)block + LUMA_PREFETCH_BYTES + 64, _MM_HINT_T0);
}

/* Every weight is below 2^15 (they sum to 2^15), so pmaddwd's signed
 * 16-bit products of samples (< 2^8) and weights are exact, and so are the
 * 32-bit sums. */

/* The weights of byte positions 0 and 1, and of position 2 and the rounding
 * (weighing a lane of ones), as pmaddwd's pairs. */
__attribute__((target("ssse3,sse4.1"))) static inline void
pair_weights(const uint32_t *w, __m128i *w01, __m128i *w2half)
{
  *w01 = _mm_set1_epi32((int)((w[1] << 16) | w[0]));
  *w2half = _mm_set1_epi32((int)(((uint32_t)LHI_LUMA_HALF << 16) | w[2]));
}

/* (a0 * w0 + b0 * w1) for the 8 16-bit lanes of a and b, as 2 x 4 int32. */
__attribute__((target("ssse3,sse4.1"))) static inline void
weigh_pairs(__m128i a, __m128i b, __m128i weights, __m128i *low, __m128i *high)
{
  *low = _mm_madd_epi16(_mm_unpacklo_epi16(a, b), weights);
  *high = _mm_madd_epi16(_mm_unpackhi_epi16(a, b), weights);
}

/* The luma of 16 pixels from planes p0, p1, p2 (one vector per byte
 * position) as 16 bytes. */
__attribute__((target("ssse3,sse4.1"))) static inline __m128i
luma16(__m128i p0, __m128i p1, __m128i p2, __m128i w01, __m128i w2half)
{
  const __m128i zero = _mm_setzero_si128(), one = _mm_set1_epi16(1);
  __m128i out[2];
  for (int half = 0; half < 2; half++) {
    __m128i a = half ? _mm_unpackhi_epi8(p0, zero) : _mm_unpacklo_epi8(p0, zero);
    __m128i b = half ? _mm_unpackhi_epi8(p1, zero) : _mm_unpacklo_epi8(p1, zero);
    __m128i c = half ? _mm_unpackhi_epi8(p2, zero) : _mm_unpacklo_epi8(p2, zero);
    __m128i ab_low, ab_high, c_low, c_high;
    weigh_pairs(a, b, w01, &ab_low, &ab_high);
    weigh_pairs(c, one, w2half, &c_low, &c_high);
    __m128i low = _mm_srli_epi32(_mm_add_epi32(ab_low, c_low), LHI_LUMA_SHIFT);
    __m128i high = _mm_srli_epi32(_mm_add_epi32(ab_high, c_high), LHI_LUMA_SHIFT);
    out[half] = _mm_packus_epi32(low, high);
  }
  return _mm_packus_epi16(out[0], out[1]);
}

__attribute__((target("ssse3,sse4.1"))) static int row3_sse41(const uint8_t *px, int width,
                                                              const uint32_t *w, uint8_t *luma)
{
  /* Byte i of a 48-byte block of 16 pixels is position i % 3 of pixel i / 3:
   * each position gathered from the three 16-byte loads. */
  const __m128i p0a = _mm_setr_epi8(0, 3, 6, 9, 12, 15, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
  const __m128i p0b = _mm_setr_epi8(-1, -1, -1, -1, -1, -1, 2, 5, 8, 11, 14, -1, -1, -1, -1, -1);
  const __m128i p0c = _mm_setr_epi8(-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 1, 4, 7, 10, 13);
  const __m128i p1a = _mm_setr_epi8(1, 4, 7, 10, 13, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
  const __m128i p1b = _mm_setr_epi8(-1, -1, -1, -1, -1, 0, 3, 6, 9, 12, 15, -1, -1, -1, -1, -1);
  const __m128i p1c = _mm_setr_epi8(-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 2, 5, 8, 11, 14);
  const __m128i p2a = _mm_setr_epi8(2, 5, 8, 11, 14, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
  const __m128i p2b = _mm_setr_epi8(-1, -1, -1, -1, -1, 1, 4, 7, 10, 13, -1, -1, -1, -1, -1, -1);
  const __m128i p2c = _mm_setr_epi8(-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 0, 3, 6, 9, 12, 15);
  __m128i w01, w2half;
  pair_weights(w, &w01, &w2half);
  int x = 0;
  for (; x + 16 <= width; x += 16) {
    const uint8_t *block = px + 3 * (size_t)x;
    prefetch_ahead(block, 48);
    __m128i a = _mm_loadu_si128((const __m128i *)block);
    __m128i b = _mm_loadu_si128((const __m128i *)(block + 16));
    __m128i c = _mm_loadu_si128((const __m128i *)(block + 32));
    __m128i p0 = _mm_or_si128(_mm_or_si128(_mm_shuffle_epi8(a, p0a), _mm_shuffle_epi8(b, p0b)),
                              _mm_shuffle_epi8(c, p0c));
    __m128i p1 = _mm_or_si128(_mm_or_si128(_mm_shuffle_epi8(a, p1a), _mm_shuffle_epi8(b, p1b)),
                              _mm_shuffle_epi8(c, p1c));
    __m128i p2 = _mm_or_si128(_mm_or_si128(_mm_shuffle_epi8(a, p2a), _mm_shuffle_epi8(b, p2b)),
                              _mm_shuffle_epi8(c, p2c));
    _mm_storeu_si128((__m128i *)(luma + x), luma16(p0, p1, p2, w01, w2half));
  }
  return x;
}

__attribute__((target("ssse3,sse4.1"))) static int row4_sse41(const uint8_t *px, int width,
                                                              const uint32_t *w, uint8_t *luma)
{
  /* Four 16-byte loads of 4 pixels each; positions 0, 1, 2 of the 16
   * pixels gathered (position 3, alpha or padding, weighs nothing: w[3] is
   * 0 for every 4-byte R'G'B' format). */
  const __m128i take[3] = {
      _mm_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1),
      _mm_setr_epi8(1, 5, 9, 13, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1),
      _mm_setr_epi8(2, 6, 10, 14, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1)};
  __m128i w01, w2half;
  pair_weights(w, &w01, &w2half);
  int x = 0;
  for (; x + 16 <= width; x += 16) {
    const uint8_t *block = px + 4 * (size_t)x;
    prefetch_ahead(block, 64);
    __m128i v[4], p[3];
    for (int k = 0; k < 4; k++)
      v[k] = _mm_loadu_si128((const __m128i *)(block + 16 * k));
    /* Position j of pixels 4k .. 4k + 3 in the low 4 bytes of each load's
     * shuffle, then the four put side by side. */
    for (int j = 0; j < 3; j++) {
      __m128i a = _mm_shuffle_epi8(v[0], take[j]), b = _mm_shuffle_epi8(v[1], take[j]);
      __m128i c = _mm_shuffle_epi8(v[2], take[j]), d = _mm_shuffle_epi8(v[3], take[j]);
      p[j] = _mm_unpacklo_epi64(_mm_unpacklo_epi32(a, b), _mm_unpacklo_epi32(c, d));
    }
    _mm_storeu_si128((__m128i *)(luma + x), luma16(p[0], p[1], p[2], w01, w2half));
  }
  return x;
}

/* ---- AVX2: 32 pixels a step ---- */

/* The shuffles that put 4 pixels of a 128-bit lane (pixel k at byte
 * pixel_bytes * k) into 16-bit pairs: bytes (0, 1) of each pixel, and
 * (2, 3) (3 bytes a pixel: byte 2 alone, the 3 belongs to the next pixel).
 * pmaddwd of the pairs by (w0, w1) and (w2, w3) gives two 32-bit halves of
 * each pixel's weighted sum. */
typedef struct {
  __m256i take01, take23;
  __m256i w01, w23, half;
} Luma8Avx2;

__attribute__((target("avx2"))) static inline Luma8Avx2 luma8_avx2_setup(int pixel_bytes,
                                                                         const uint32_t *w)
{
  Luma8Avx2 l;
  if (pixel_bytes == 3) {
    l.take01 = _mm256_setr_epi8(0, -1, 1, -1, 3, -1, 4, -1, 6, -1, 7, -1, 9, -1, 10, -1, 0, -1, 1,
                                -1, 3, -1, 4, -1, 6, -1, 7, -1, 9, -1, 10, -1);
    l.take23 = _mm256_setr_epi8(2, -1, -1, -1, 5, -1, -1, -1, 8, -1, -1, -1, 11, -1, -1, -1, 2, -1,
                                -1, -1, 5, -1, -1, -1, 8, -1, -1, -1, 11, -1, -1, -1);
  } else {
    l.take01 = _mm256_setr_epi8(0, -1, 1, -1, 4, -1, 5, -1, 8, -1, 9, -1, 12, -1, 13, -1, 0, -1, 1,
                                -1, 4, -1, 5, -1, 8, -1, 9, -1, 12, -1, 13, -1);
    l.take23 = _mm256_setr_epi8(2, -1, 3, -1, 6, -1, 7, -1, 10, -1, 11, -1, 14, -1, 15, -1, 2, -1,
                                3, -1, 6, -1, 7, -1, 10, -1, 11, -1, 14, -1, 15, -1);
  }
  l.w01 = _mm256_set1_epi32((int)((w[1] << 16) | w[0]));
  l.w23 = _mm256_set1_epi32((int)((pixel_bytes == 4 ? w[3] << 16 : 0) | w[2]));
  l.half = _mm256_set1_epi32((int)LHI_LUMA_HALF);
  return l;
}

/* The luma of 8 pixels, 4 a lane, as 8 32-bit lanes (pixels 0-3 in the
 * low lane, 4-7 in the high one). */
__attribute__((target("avx2"))) static inline __m256i luma8_avx2(const Luma8Avx2 *l, __m256i px)
{
  __m256i sum = _mm256_add_epi32(_mm256_madd_epi16(_mm256_shuffle_epi8(px, l->take01), l->w01),
                                 _mm256_madd_epi16(_mm256_shuffle_epi8(px, l->take23), l->w23));
  return _mm256_srli_epi32(_mm256_add_epi32(sum, l->half), LHI_LUMA_SHIFT);
}

/* The luma of the 32 pixels at block as 32 bytes in order.  3 bytes a
 * pixel: groups of 8 pixels (24 bytes) spread 12 bytes a lane by vpermd;
 * the last group loaded 8 bytes early so that no byte past the 96 is read. */
__attribute__((target("avx2"))) static inline __m256i
luma32_avx2(const Luma8Avx2 *l, const uint8_t *block, int pixel_bytes)
{
  __m256i g[4];
  if (pixel_bytes == 3) {
    const __m256i spread = _mm256_setr_epi32(0, 1, 2, 0, 3, 4, 5, 0);
    const __m256i spread_last = _mm256_setr_epi32(2, 3, 4, 0, 5, 6, 7, 0);
    for (int k = 0; k < 3; k++)
      g[k] = luma8_avx2(l, _mm256_permutevar8x32_epi32(
                               _mm256_loadu_si256((const __m256i *)(block + 24 * k)), spread));
    g[3] = luma8_avx2(l, _mm256_permutevar8x32_epi32(
                             _mm256_loadu_si256((const __m256i *)(block + 64)), spread_last));
  } else {
    for (int k = 0; k < 4; k++)
      g[k] = luma8_avx2(l, _mm256_loadu_si256((const __m256i *)(block + 32 * k)));
  }
  /* Packed within lanes, the 4-pixel runs come out as 0, 8, 16, 24 (low
   * lane) and 4, 12, 20, 28 (high lane): put back in order. */
  __m256i bytes =
      _mm256_packus_epi16(_mm256_packus_epi32(g[0], g[1]), _mm256_packus_epi32(g[2], g[3]));
  return _mm256_permutevar8x32_epi32(bytes, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

__attribute__((target("avx2"))) static int row_avx2(const uint8_t *px, int width, int pixel_bytes,
                                                    const uint32_t *w, uint8_t *luma)
{
  const Luma8Avx2 l = luma8_avx2_setup(pixel_bytes, w);
  int x = 0;
  for (; x + 32 <= width; x += 32) {
    const uint8_t *block = px + (size_t)pixel_bytes * (size_t)x;
    prefetch_ahead(block, 32 * pixel_bytes);
    _mm256_storeu_si256((__m256i *)(luma + x), luma32_avx2(&l, block, pixel_bytes));
  }
  return x;
}

#endif

static LhiSimd simd_allowed = LHI_SIMD_BEST;

LhiSimd lhi_rows_set_simd(LhiSimd simd)
{
  LhiSimd previous = simd_allowed;
  simd_allowed = simd;
  return previous;
}

#ifdef LHI_ROWS_SSE41
static bool have_sse41(void)
{
  return simd_allowed >= LHI_SIMD_SSE41 && __builtin_cpu_supports("sse4.1") &&
         __builtin_cpu_supports("ssse3");
}

static bool have_avx2(void)
{
  return simd_allowed >= LHI_SIMD_BEST && __builtin_cpu_supports("avx2");
}
#endif

void lhi_luma_row3_u8(const uint8_t *px, int width, const uint32_t *w, uint8_t *luma)
{
  int done = 0;
#ifdef LHI_ROWS_SSE41
  if (have_avx2())
    done = row_avx2(px, width, 3, w, luma);
  else if (have_sse41())
    done = row3_sse41(px, width, w, luma);
#endif
  row3_plain(px, done, width, w, luma);
}

void lhi_luma_row4_u8(const uint8_t *px, int width, const uint32_t *w, uint8_t *luma)
{
  int done = 0;
#ifdef LHI_ROWS_SSE41
  /* The vector path weighs three positions: with a weight on the fourth
   * (no format has one), the plain loop. */
  if (w[3] == 0 && have_avx2())
    done = row_avx2(px, width, 4, w, luma);
  else if (w[3] == 0 && have_sse41())
    done = row4_sse41(px, width, w, luma);
#endif
  row4_plain(px, done, width, w, luma);
}

void lhi_byte_weights(LhFormat format, LhiLumaWeights weights, uint32_t *w)
{
  const LhiFormatInfo *info = lhi_format_info(format);
  w[0] = w[1] = w[2] = w[3] = 0;
  /* Gray and YUV have no R'G'B' byte (r, g, b are -1): no weight to place. */
  if (info->r < 0 || info->sample_bytes != 1)
    return;
  w[info->r] = weights.kr;
  w[info->g] = weights.kg;
  w[info->b] = weights.kb;
}

void lhi_luma_row_u8(const uint8_t *px, int width, int pixel_bytes, const uint32_t *w,
                     uint8_t *luma)
{
  if (pixel_bytes == 3)
    lhi_luma_row3_u8(px, width, w, luma);
  else
    lhi_luma_row4_u8(px, width, w, luma);
}

/* Pixels the 32-bit sub-histograms take before they are added into the
 * 64-bit bins: none can overflow, whatever the rows hold. */
#define COUNT8_FLUSH (((int64_t)1 << 31) - 1)

void lhi_count8_begin(LhiCount8 *c, uint64_t *histogram)
{
  memset(c->sub, 0, sizeof c->sub);
  c->histogram = histogram;
  c->pending = 0;
}

void lhi_count8_end(LhiCount8 *c)
{
  for (int v = 0; v < 256; v++) {
    uint64_t sum = 0;
    for (int k = 0; k < LHI_COUNT8_COPIES; k++)
      sum += c->sub[k][v];
    c->histogram[v] += sum;
  }
  memset(c->sub, 0, sizeof c->sub);
  c->pending = 0;
}

/* Makes room for width more pixels in the 32-bit counters. */
static inline void count8_reserve(LhiCount8 *c, int width)
{
  if (c->pending + width > COUNT8_FLUSH)
    lhi_count8_end(c);
  c->pending += width;
}

/* Pixel x goes into copy x % 8 (n a multiple of 8). */
static inline void count8_block(uint32_t (*sub)[LHI_COUNT8_STRIDE], const uint8_t *v, int n)
{
  for (int x = 0; x < n; x += 8) {
    sub[0][v[x]]++;
    sub[1][v[x + 1]]++;
    sub[2][v[x + 2]]++;
    sub[3][v[x + 3]]++;
    sub[4][v[x + 4]]++;
    sub[5][v[x + 5]]++;
    sub[6][v[x + 6]]++;
    sub[7][v[x + 7]]++;
  }
}

void lhi_count8_row(LhiCount8 *c, const uint8_t *row, int width)
{
  count8_reserve(c, width);
  const int whole = width & ~7;
  count8_block(c->sub, row, whole);
  for (int x = whole; x < width; x++)
    c->sub[x & 7][row[x]]++;
}

void lhi_count8_row_step2(LhiCount8 *c, const uint8_t *row, int width)
{
  count8_reserve(c, width);
  int x = 0;
  for (; x + 4 <= width; x += 4) {
    c->sub[0][row[2 * x]]++;
    c->sub[1][row[2 * x + 2]]++;
    c->sub[2][row[2 * x + 4]]++;
    c->sub[3][row[2 * x + 6]]++;
  }
  for (; x < width; x++)
    c->sub[x & 3][row[2 * x]]++;
}

#ifdef LHI_ROWS_SSE41
/* 32 pixels a step, software-pipelined: the luma of the next 32 pixels is
 * made and stored while these, stored a step before, are counted, so that
 * the counting's byte loads never wait on the vector store just made and
 * the CPU weighs and counts at once (4K RGB on one core: 3.0 ms against
 * 3.2 for chunks of 256, 4.3 for a store counted at once). */
__attribute__((target("avx2"))) static int
count_rgb_avx2(LhiCount8 *c, const uint8_t *px, int width, int pixel_bytes, const uint32_t *w)
{
  const Luma8Avx2 l = luma8_avx2_setup(pixel_bytes, w);
  uint32_t(*sub)[LHI_COUNT8_STRIDE] = c->sub;
  _Alignas(32) uint8_t luma[2][32];
  if (width < 32)
    return 0;
  _mm256_store_si256((__m256i *)luma[0], luma32_avx2(&l, px, pixel_bytes));
  int x = 32, k = 0;
  for (; x + 32 <= width; x += 32, k ^= 1) {
    const uint8_t *block = px + (size_t)pixel_bytes * (size_t)x;
    prefetch_ahead(block, 32 * pixel_bytes);
    _mm256_store_si256((__m256i *)luma[k ^ 1], luma32_avx2(&l, block, pixel_bytes));
    count8_block(sub, luma[k], 32);
  }
  count8_block(sub, luma[k], 32);
  return x;
}
#endif

/* Without AVX2, and for the last pixels of a row: pixels whose luma is
 * made, into a buffer that stays in the L1 cache, then counted. */
#define COUNT_RGB_CHUNK 256

void lhi_count8_rgb_row(LhiCount8 *c, const uint8_t *px, int width, int pixel_bytes,
                        const uint32_t *w)
{
  count8_reserve(c, width);
  uint8_t luma[COUNT_RGB_CHUNK];
  int x = 0;
#ifdef LHI_ROWS_SSE41
  if (w[3] == 0 && have_avx2())
    x = count_rgb_avx2(c, px, width, pixel_bytes, w);
#endif
  while (x < width) {
    const int n = width - x < COUNT_RGB_CHUNK ? width - x : COUNT_RGB_CHUNK;
    lhi_luma_row_u8(px + (size_t)pixel_bytes * (size_t)x, n, pixel_bytes, w, luma);
    const int whole = n & ~7;
    count8_block(c->sub, luma, whole);
    for (int k = whole; k < n; k++)
      c->sub[k & 7][luma[k]]++;
    x += n;
  }
}

/* ---- Counting keys of 10 to 16 bits ---- */

/* Counters between the copies (256 bytes), so that one key's counters in
 * two copies are not a multiple of 4 KiB apart, which the CPU would take
 * for the same address and make each increment wait on the other's. */
#define COUNT16_SKEW 128

int lhi_count16_begin(LhiCount16 *c, uint64_t *histogram, int bit_depth)
{
  c->bins = (size_t)1 << bit_depth;
  c->stride = c->bins + COUNT16_SKEW;
  c->histogram = histogram;
  c->pending = 0;
  c->narrow = NULL;
  c->narrow_band = NULL;
  c->carry = NULL;
  c->sub = calloc(4 * c->stride, sizeof *c->sub);
  return c->sub ? 0 : -1;
}

void lhi_count16_begin_narrow(LhiCount16 *c, LhiNarrow *band)
{
  c->bins = 65536;
  c->stride = c->bins;
  c->histogram = NULL;
  c->pending = 0;
  c->sub = NULL;
  c->narrow = band->counters;
  c->narrow_band = band;
  c->carry = band->carries + band->n_carries;
}

/* One block of 256 bins at first: the bands' counters added up into the
 * bins (which held nothing that counts: the carries come after) and the
 * block's sums kept (LhiBlockSums). */
static void add_narrow_block_plain(uint64_t *histogram, const LhiNarrow *bands, int n_bands,
                                   size_t first, uint64_t *count, uint64_t *sum,
                                   uint64_t *sum_squares)
{
  uint64_t c = 0, s = 0, s2 = 0;
  for (uint32_t j = 0; j < LHI_BLOCK_BINS; j++) {
    uint64_t h = 0;
    for (int k = 0; k < n_bands; k++)
      h += bands[k].counters[first + j];
    histogram[first + j] = h;
    c += h;
    s += h * j;
    s2 += h * (j * j);
  }
  *count = c;
  *sum = s;
  *sum_squares = s2;
}

#ifdef LHI_ROWS_SSE41
/* The same, 4 bins a step (the counters' sum below 2^32, so that pmuludq's
 * products of its low 32 bits by j and j² are the exact h j and h j²). */
__attribute__((target("avx2"))) static void
add_narrow_block_avx2(uint64_t *histogram, const LhiNarrow *bands, int n_bands, size_t first,
                      uint64_t *count, uint64_t *sum, uint64_t *sum_squares)
{
  __m256i c = _mm256_setzero_si256(), s = c, s2 = c;
  __m256i j = _mm256_setr_epi64x(0, 1, 2, 3);
  const __m256i four = _mm256_set1_epi64x(4);
  for (uint32_t i = 0; i < LHI_BLOCK_BINS; i += 4) {
    __m256i h = _mm256_setzero_si256();
    for (int k = 0; k < n_bands; k++) {
      int32_t four_counters;
      memcpy(&four_counters, bands[k].counters + first + i, sizeof four_counters);
      h = _mm256_add_epi64(h, _mm256_cvtepu8_epi64(_mm_cvtsi32_si128(four_counters)));
    }
    _mm256_storeu_si256((__m256i *)(histogram + first + i), h);
    c = _mm256_add_epi64(c, h);
    s = _mm256_add_epi64(s, _mm256_mul_epu32(h, j));
    s2 = _mm256_add_epi64(s2, _mm256_mul_epu32(h, _mm256_mul_epu32(j, j)));
    j = _mm256_add_epi64(j, four);
  }
  _Alignas(32) uint64_t lanes[3][4];
  _mm256_store_si256((__m256i *)lanes[0], c);
  _mm256_store_si256((__m256i *)lanes[1], s);
  _mm256_store_si256((__m256i *)lanes[2], s2);
  *count = lanes[0][0] + lanes[0][1] + lanes[0][2] + lanes[0][3];
  *sum = lanes[1][0] + lanes[1][1] + lanes[1][2] + lanes[1][3];
  *sum_squares = lanes[2][0] + lanes[2][1] + lanes[2][2] + lanes[2][3];
}
#endif

void lhi_count16_add_narrow(uint64_t *histogram, const LhiNarrow *bands, int n_bands,
                            int first_block, int end_block, LhiBlockSums *blocks)
{
  for (int b = first_block; b < end_block; b++) {
    const size_t first = (size_t)b * LHI_BLOCK_BINS;
#ifdef LHI_ROWS_SSE41
    if (have_avx2()) {
      add_narrow_block_avx2(histogram, bands, n_bands, first, &blocks->count[b], &blocks->sum[b],
                            &blocks->sum_squares[b]);
      continue;
    }
#endif
    add_narrow_block_plain(histogram, bands, n_bands, first, &blocks->count[b], &blocks->sum[b],
                           &blocks->sum_squares[b]);
  }
  /* Each carry: 256 more in its key's bin, and in its block's sums. */
  const uint32_t first_key = (uint32_t)first_block * LHI_BLOCK_BINS,
                 end_key = (uint32_t)end_block * LHI_BLOCK_BINS;
  for (int k = 0; k < n_bands; k++)
    for (size_t i = 0; i < bands[k].n_carries; i++) {
      const uint32_t key = bands[k].carries[i];
      if (key < first_key || key >= end_key)
        continue;
      const uint64_t j = key % LHI_BLOCK_BINS;
      histogram[key] += 256;
      blocks->count[key / LHI_BLOCK_BINS] += 256;
      blocks->sum[key / LHI_BLOCK_BINS] += 256 * j;
      blocks->sum_squares[key / LHI_BLOCK_BINS] += 256 * j * j;
    }
}

/* The four copies' counts added into the bins, the copies zeroed. */
static void count16_flush(LhiCount16 *c)
{
  const uint16_t *s0 = c->sub, *s1 = s0 + c->stride, *s2 = s1 + c->stride, *s3 = s2 + c->stride;
  /* held: a store into the bins may alias c (a bin a loop, not vectorized,
   * made the flushes a twentieth of a 12-bit 1080p frame's time) */
  uint64_t *histogram = c->histogram;
  const size_t bins = c->bins;
  for (size_t v = 0; v < bins; v++)
    histogram[v] += (uint64_t)s0[v] + s1[v] + s2[v] + s3[v];
  memset(c->sub, 0, 4 * c->stride * sizeof *c->sub);
  c->pending = 0;
}

void lhi_count16_end(LhiCount16 *c)
{
  if (c->sub)
    count16_flush(c);
  free(c->sub);
  c->sub = NULL;
  if (c->narrow_band)
    c->narrow_band->n_carries = (size_t)(c->carry - c->narrow_band->carries);
}

/* A key counted in its band's 8-bit counter (narrow, c's, held by the
 * caller: a byte store may alias c); the rare wrap is a carry of 256
 * written down in the band's list, added into the bin with the counters:
 * no atomic add into bins that the threads share, and no bins to zero
 * before they count.  The list's end stays in c, not in a register: one
 * more live value in the vector loops that inline this made GCC spill in
 * v210's (1.13x NV12 -> 1.69x). */
static inline void count_narrow(uint8_t *narrow, LhiCount16 *c, uint32_t key)
{
  if (__builtin_expect(++narrow[key] == 0, 0))
    *c->carry++ = (uint16_t)key;
}

/* Makes room for width more keys: with four copies, pixel x of a row goes
 * into copy x % 4 (a row's keys counted from its first, in pieces of a
 * multiple of 4 but the last), so a copy takes at most (width + 3) / 4 of
 * a row: flushed before any of its counters could wrap.  The 8-bit
 * counters carry as they wrap. */
static inline void count16_reserve(LhiCount16 *c, int width)
{
  if (c->narrow)
    return;
  const int64_t per_copy = (width + 3) / 4;
  if (c->pending + per_copy > UINT16_MAX)
    count16_flush(c);
  c->pending += per_copy;
}

/* n keys counted (n a multiple of 4), room made for them first
 * (count16_reserve), narrow whether c has narrow counters.  Inline in the
 * vector loops below, where n and narrow are constants: each loop made
 * for one kind of counters (with both kinds' code in one loop, GCC spilled
 * in v210's: 1.13x NV12 -> 1.69x). */
__attribute__((always_inline)) static inline void
count16_block_as(LhiCount16 *c, const uint16_t *keys, int n, bool narrow_counters)
{
  if (narrow_counters) {
    uint8_t *narrow = c->narrow;
    for (int x = 0; x < n; x += 4) {
      count_narrow(narrow, c, keys[x]);
      count_narrow(narrow, c, keys[x + 1]);
      count_narrow(narrow, c, keys[x + 2]);
      count_narrow(narrow, c, keys[x + 3]);
    }
    return;
  }
  uint16_t *s0 = c->sub, *s1 = s0 + c->stride, *s2 = s1 + c->stride, *s3 = s2 + c->stride;
  for (int x = 0; x < n; x += 4) {
    s0[keys[x]]++;
    s1[keys[x + 1]]++;
    s2[keys[x + 2]]++;
    s3[keys[x + 3]]++;
  }
}

static inline void count16_block(LhiCount16 *c, const uint16_t *keys, int n)
{
  if (c->narrow)
    count16_block_as(c, keys, n, true);
  else
    count16_block_as(c, keys, n, false);
}

/* Any n: the last n % 4 keys into copies 0, 1, 2. */
static void count16_keys(LhiCount16 *c, const uint16_t *keys, int n)
{
  const int whole = n & ~3;
  count16_block(c, keys, whole);
  for (int x = whole; x < n; x++) {
    if (c->narrow)
      count_narrow(c->narrow, c, keys[x]);
    else
      c->sub[(size_t)(x & 3) * c->stride + keys[x]]++;
  }
}

void lhi_count16_row(LhiCount16 *c, const uint16_t *keys, int width)
{
  count16_reserve(c, width);
  count16_keys(c, keys, width);
}

void lhi_count16_words_row(LhiCount16 *c, const uint8_t *row, int width)
{
  uint8_t *narrow = c->narrow;
  int x = 0;
  for (; x + 4 <= width; x += 4)
    for (int k = 0; k < 4; k++) {
      uint16_t word;
      memcpy(&word, row + 2 * (size_t)(x + k), sizeof word);
      count_narrow(narrow, c, word);
    }
  for (; x < width; x++) {
    uint16_t word;
    memcpy(&word, row + 2 * (size_t)x, sizeof word);
    count_narrow(narrow, c, word);
  }
}

/* ---- Y of 16-bit words and of v210, as keys ---- */

static void y16_keys_plain(const uint8_t *row, int first, int width, int shift, uint32_t max,
                           bool big_endian, uint16_t *keys)
{
  for (int x = first; x < width; x++) {
    uint32_t v = big_endian ? (uint32_t)row[2 * x] << 8 | row[2 * x + 1]
                            : (uint32_t)row[2 * x] | (uint32_t)row[2 * x + 1] << 8;
    v >>= shift;
    keys[x] = (uint16_t)(v > max ? max : v);
  }
}

#ifdef LHI_ROWS_SSE41
__attribute__((target("ssse3,sse4.1"))) static int y16_keys_sse41(const uint8_t *row, int width,
                                                                  int shift, uint32_t max,
                                                                  bool big_endian, uint16_t *keys)
{
  const __m128i swap = _mm_setr_epi8(1, 0, 3, 2, 5, 4, 7, 6, 9, 8, 11, 10, 13, 12, 15, 14);
  const __m128i top = _mm_set1_epi16((short)max), count = _mm_cvtsi32_si128(shift);
  int x = 0;
  for (; x + 8 <= width; x += 8) {
    __m128i v = _mm_loadu_si128((const __m128i *)(row + 2 * (size_t)x));
    if (big_endian)
      v = _mm_shuffle_epi8(v, swap);
    v = _mm_min_epu16(_mm_srl_epi16(v, count), top);
    _mm_storeu_si128((__m128i *)(keys + x), v);
  }
  return x;
}
/* The same, 16 samples at a time with AVX2 (every x86-64 CPU since 2013):
 * the pass that first reads a row from memory, so half the instructions of
 * the SSE loop keep it a small part of the row's time. */
__attribute__((target("avx2"))) static int y16_keys_avx2(const uint8_t *row, int width, int shift,
                                                         uint32_t max, bool big_endian,
                                                         uint16_t *keys)
{
  const __m256i swap = _mm256_setr_epi8(1, 0, 3, 2, 5, 4, 7, 6, 9, 8, 11, 10, 13, 12, 15, 14, 1, 0,
                                        3, 2, 5, 4, 7, 6, 9, 8, 11, 10, 13, 12, 15, 14);
  const __m256i top = _mm256_set1_epi16((short)max);
  const __m128i count = _mm_cvtsi32_si128(shift);
  int x = 0;
  if (big_endian) {
    for (; x + 16 <= width; x += 16) {
      __m256i v = _mm256_loadu_si256((const __m256i *)(row + 2 * (size_t)x));
      v = _mm256_min_epu16(_mm256_srl_epi16(_mm256_shuffle_epi8(v, swap), count), top);
      _mm256_storeu_si256((__m256i *)(keys + x), v);
    }
  } else {
    for (; x + 16 <= width; x += 16) {
      __m256i v = _mm256_loadu_si256((const __m256i *)(row + 2 * (size_t)x));
      v = _mm256_min_epu16(_mm256_srl_epi16(v, count), top);
      _mm256_storeu_si256((__m256i *)(keys + x), v);
    }
  }
  return x;
}

/* v210, two 6-pixel groups at a time: within each 16-byte group, Y k is
 * the 10 bits at bit 2, 0 or 4 of the byte pair starting at byte 1, 4, 6,
 * 9, 12, 14 (words 0 to 3 at bits 10, 32, 52, 74, 96, 116 of the group).
 * The pairs are gathered into 16-bit lanes, shifted up to bit 4 by a
 * multiply (2^(4 - offset)), down by 4 and masked; the two groups' six
 * keys then put side by side. */
__attribute__((target("avx2"))) static int v210_keys_avx2(const uint8_t *row, int width,
                                                          uint16_t *keys)
{
  const __m256i gather = _mm256_setr_epi8(1, 2, 4, 5, 6, 7, 9, 10, 12, 13, 14, 15, -1, -1, -1, -1,
                                          1, 2, 4, 5, 6, 7, 9, 10, 12, 13, 14, 15, -1, -1, -1, -1);
  const __m256i align = _mm256_setr_epi16(4, 16, 1, 4, 16, 1, 0, 0, 4, 16, 1, 4, 16, 1, 0, 0);
  const __m256i ten_bits = _mm256_set1_epi16(0x3ff);
  const __m256i side_by_side = _mm256_setr_epi32(0, 1, 2, 4, 5, 6, 3, 7);
  int x = 0;
  /* 12 keys a step, 16 stored: the last 4 lanes fall on keys the next step
   * writes, so a step goes only where 16 keys fit in the row. */
  for (; x + 16 <= width; x += 12, row += 2 * LHI_V210_GROUP_BYTES) {
    __m256i v = _mm256_shuffle_epi8(_mm256_loadu_si256((const __m256i *)row), gather);
    v = _mm256_and_si256(_mm256_srli_epi16(_mm256_mullo_epi16(v, align), 4), ten_bits);
    _mm256_storeu_si256((__m256i *)(keys + x), _mm256_permutevar8x32_epi32(v, side_by_side));
  }
  return x;
}
#endif

void lhi_y16_keys_row(const uint8_t *row, int width, int shift, uint32_t max, bool big_endian,
                      uint16_t *keys)
{
  int done = 0;
#ifdef LHI_ROWS_SSE41
  if (have_avx2())
    done = y16_keys_avx2(row, width, shift, max, big_endian, keys);
  else if (have_sse41())
    done = y16_keys_sse41(row, width, shift, max, big_endian, keys);
#endif
  y16_keys_plain(row, done, width, shift, max, big_endian, keys);
}

void lhi_v210_keys_row(const uint8_t *row, int width, uint16_t *keys)
{
  int x = 0;
#ifdef LHI_ROWS_SSE41
  if (have_avx2())
    x = v210_keys_avx2(row, width, keys);
  row += (size_t)(x / LHI_V210_GROUP_PIXELS) * LHI_V210_GROUP_BYTES;
#endif
  for (; x + 6 <= width; x += 6, row += LHI_V210_GROUP_BYTES) {
    uint32_t w[4];
    memcpy(w, row, sizeof w);
    keys[x] = (uint16_t)((w[0] >> 10) & 0x3ff);
    keys[x + 1] = (uint16_t)(w[1] & 0x3ff);
    keys[x + 2] = (uint16_t)((w[1] >> 20) & 0x3ff);
    keys[x + 3] = (uint16_t)((w[2] >> 10) & 0x3ff);
    keys[x + 4] = (uint16_t)(w[3] & 0x3ff);
    keys[x + 5] = (uint16_t)((w[3] >> 20) & 0x3ff);
  }
  if (x < width) {
    uint32_t w[4];
    memcpy(w, row, sizeof w);
    for (int k = 0; x + k < width; k++)
      keys[x + k] = (uint16_t)lhi_v210_get(w, lhi_v210_y_field(k));
  }
}

/* ---- Y of 16-bit words and of v210, counted as their keys are made ---- */

/* Keys made a piece at a time into a buffer that stays in the L1 cache,
 * then counted: no row of keys.  A multiple of 4 (count16_reserve), of 6
 * (v210's groups) and of the vector steps. */
#define COUNT16_PIECE 240

#ifdef LHI_ROWS_SSE41
/* The keys of the 16 words at p (y16_keys_avx2's step). */
__attribute__((target("avx2"))) static inline __m256i
y16_keys16_avx2(const uint8_t *p, __m128i shift, __m256i top, bool big_endian)
{
  const __m256i swap = _mm256_setr_epi8(1, 0, 3, 2, 5, 4, 7, 6, 9, 8, 11, 10, 13, 12, 15, 14, 1, 0,
                                        3, 2, 5, 4, 7, 6, 9, 8, 11, 10, 13, 12, 15, 14);
  __m256i v = _mm256_loadu_si256((const __m256i *)p);
  if (big_endian)
    v = _mm256_shuffle_epi8(v, swap);
  return _mm256_min_epu16(_mm256_srl_epi16(v, shift), top);
}

/* 32 keys a step, software-pipelined as count_rgb_avx2: the keys of the
 * next 32 words are made and stored while those stored a step before are
 * counted, and the row is asked for ahead of its reads, so that its bytes
 * come in while the CPU counts (a pass making the row's keys first reads
 * twice NV12's bytes in a burst that waits on memory, then counts: 1.2 to
 * 1.3x NV12 at 1080p; counted as made, 1.1x).  always_inline: each caller
 * gets a loop with its byte order and kind of counters fixed. */
__attribute__((target("avx2"), always_inline)) static inline int
count_y16_avx2_loop(LhiCount16 *c, const uint8_t *row, int width, int shift, uint32_t max,
                    bool big_endian, bool narrow)
{
  const __m256i top = _mm256_set1_epi16((short)max);
  const __m128i count = _mm_cvtsi32_si128(shift);
  _Alignas(32) uint16_t keys[2][32];
  if (width < 32)
    return 0;
  _mm256_store_si256((__m256i *)keys[0], y16_keys16_avx2(row, count, top, big_endian));
  _mm256_store_si256((__m256i *)(keys[0] + 16), y16_keys16_avx2(row + 32, count, top, big_endian));
  int x = 32, k = 0;
  for (; x + 32 <= width; x += 32, k ^= 1) {
    const uint8_t *block = row + 2 * (size_t)x;
    prefetch_ahead(block, 64);
    _mm256_store_si256((__m256i *)keys[k ^ 1], y16_keys16_avx2(block, count, top, big_endian));
    _mm256_store_si256((__m256i *)(keys[k ^ 1] + 16),
                       y16_keys16_avx2(block + 32, count, top, big_endian));
    count16_block_as(c, keys[k], 32, narrow);
  }
  count16_block_as(c, keys[k], 32, narrow);
  return x;
}

__attribute__((target("avx2"))) static int count_y16_avx2(LhiCount16 *c, const uint8_t *row,
                                                          int width, int shift, uint32_t max,
                                                          bool big_endian)
{
  if (c->narrow)
    return big_endian ? count_y16_avx2_loop(c, row, width, shift, max, true, true)
                      : count_y16_avx2_loop(c, row, width, shift, max, false, true);
  return big_endian ? count_y16_avx2_loop(c, row, width, shift, max, true, false)
                    : count_y16_avx2_loop(c, row, width, shift, max, false, false);
}

/* v210 the same way, 48 keys (8 groups, 128 bytes) a step (24 a step: 1.23x
 * NV12 at 1080p, 48: 1.17x). */
__attribute__((target("avx2"))) static inline __m256i v210_keys12_avx2(const uint8_t *p)
{
  const __m256i gather = _mm256_setr_epi8(1, 2, 4, 5, 6, 7, 9, 10, 12, 13, 14, 15, -1, -1, -1, -1,
                                          1, 2, 4, 5, 6, 7, 9, 10, 12, 13, 14, 15, -1, -1, -1, -1);
  const __m256i align = _mm256_setr_epi16(4, 16, 1, 4, 16, 1, 0, 0, 4, 16, 1, 4, 16, 1, 0, 0);
  const __m256i ten_bits = _mm256_set1_epi16(0x3ff);
  const __m256i side_by_side = _mm256_setr_epi32(0, 1, 2, 4, 5, 6, 3, 7);
  __m256i v = _mm256_shuffle_epi8(_mm256_loadu_si256((const __m256i *)p), gather);
  v = _mm256_and_si256(_mm256_srli_epi16(_mm256_mullo_epi16(v, align), 4), ten_bits);
  return _mm256_permutevar8x32_epi32(v, side_by_side);
}

/* The 24 keys of 4 groups at p into keys[0 .. 11] and keys[16 .. 27]: two
 * aligned stores that do not overlap (overlapping ones, the second at
 * keys + 12, left keys that a load must wait for). */
__attribute__((target("avx2"))) static inline void v210_keys24_avx2(const uint8_t *p,
                                                                    uint16_t *keys)
{
  _mm256_store_si256((__m256i *)keys, v210_keys12_avx2(p));
  _mm256_store_si256((__m256i *)(keys + 16), v210_keys12_avx2(p + 32));
}

__attribute__((target("avx2"), always_inline)) static inline int
count_v210_avx2_loop(LhiCount16 *c, const uint8_t *row, int width, bool narrow)
{
  _Alignas(32) uint16_t keys[2][64];
  if (width < 48)
    return 0;
  v210_keys24_avx2(row, keys[0]);
  v210_keys24_avx2(row + 64, keys[0] + 32);
  int x = 48, k = 0;
  for (; x + 48 <= width; x += 48, k ^= 1) {
    const uint8_t *block = row + (size_t)(x / LHI_V210_GROUP_PIXELS) * LHI_V210_GROUP_BYTES;
    prefetch_ahead(block, 128);
    v210_keys24_avx2(block, keys[k ^ 1]);
    v210_keys24_avx2(block + 64, keys[k ^ 1] + 32);
    count16_block_as(c, keys[k], 12, narrow);
    count16_block_as(c, keys[k] + 16, 12, narrow);
    count16_block_as(c, keys[k] + 32, 12, narrow);
    count16_block_as(c, keys[k] + 48, 12, narrow);
  }
  count16_block_as(c, keys[k], 12, narrow);
  count16_block_as(c, keys[k] + 16, 12, narrow);
  count16_block_as(c, keys[k] + 32, 12, narrow);
  count16_block_as(c, keys[k] + 48, 12, narrow);
  return x;
}

__attribute__((target("avx2"))) static int count_v210_avx2(LhiCount16 *c, const uint8_t *row,
                                                           int width)
{
  if (c->narrow)
    return count_v210_avx2_loop(c, row, width, true);
  return count_v210_avx2_loop(c, row, width, false);
}
#endif

void lhi_count16_y16_row(LhiCount16 *c, const uint8_t *row, int width, int shift, uint32_t max,
                         bool big_endian)
{
  count16_reserve(c, width);
  int x = 0;
#ifdef LHI_ROWS_SSE41
  if (have_avx2())
    x = count_y16_avx2(c, row, width, shift, max, big_endian);
#endif
  uint16_t keys[COUNT16_PIECE];
  for (; x < width; x += COUNT16_PIECE) {
    const int n = width - x < COUNT16_PIECE ? width - x : COUNT16_PIECE;
    lhi_y16_keys_row(row + 2 * (size_t)x, n, shift, max, big_endian, keys);
    count16_keys(c, keys, n);
  }
}

void lhi_count16_v210_row(LhiCount16 *c, const uint8_t *row, int width)
{
  count16_reserve(c, width);
  int x = 0;
#ifdef LHI_ROWS_SSE41
  if (have_avx2())
    x = count_v210_avx2(c, row, width);
#endif
  uint16_t keys[COUNT16_PIECE];
  for (; x < width; x += COUNT16_PIECE) {
    const int n = width - x < COUNT16_PIECE ? width - x : COUNT16_PIECE;
    lhi_v210_keys_row(row + (size_t)(x / LHI_V210_GROUP_PIXELS) * LHI_V210_GROUP_BYTES, n, keys);
    count16_keys(c, keys, n);
  }
}

/* ---- The luma keys of packed 10-bit R'G'B' ---- */

static void packed10_keys_plain(const uint8_t *row, int first, int width, bool big_endian,
                                LhiLumaWeights fw, uint16_t *keys)
{
  for (int x = first; x < width; x++) {
    const uint32_t word = lhi_load_word(row + 4 * (size_t)x, big_endian);
    keys[x] = (uint16_t)lhi_luma_wide(word & 0x3ff, (word >> 10) & 0x3ff, (word >> 20) & 0x3ff, fw);
  }
}

#ifdef LHI_ROWS_SSE41
/* The constants of packed10_keys16_avx2, set up once a row. */
typedef struct {
  __m256i swap, ten, ten_high, one_high, w01, w2half;
  __m256 exact_one;
} Packed10Avx2;

__attribute__((target("avx2"))) static inline Packed10Avx2 packed10_avx2_setup(LhiLumaWeights fw)
{
  Packed10Avx2 p;
  p.swap = _mm256_setr_epi8(3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12, 3, 2, 1, 0, 7, 6,
                            5, 4, 11, 10, 9, 8, 15, 14, 13, 12);
  p.ten = _mm256_set1_epi32(0x3ff);
  p.ten_high = _mm256_set1_epi32(0x3ff << 16);
  p.one_high = _mm256_set1_epi32(1 << 16);
  p.w01 = _mm256_set1_epi32((int)((fw.kg << 16) | fw.kr));
  p.w2half = _mm256_set1_epi32((int)(((LHI_LUMA_EXACT_ONE / 2) << 16) | fw.kb));
  p.exact_one = _mm256_set1_ps((float)LHI_LUMA_EXACT_ONE);
  return p;
}

/* The keys of the 16 words at block, in order, as 16-bit lanes: fields 0
 * and 1 of each word put side by side as 16-bit halves and weighed by
 * pmaddwd, field 2 beside a 1 that weighs the rounding half (5000).  The
 * sum s is below 1023 * 10^4 + 5000 < 2^24, exact as a float, and the float
 * quotient s / 10^4, correctly rounded, truncates to floor(s / 10^4): where
 * that is k, s / 10^4 <= k + 1 - 10^-4, and a float near k < 1024 is
 * within 2^-14 of the real quotient, so it stays below k + 1 (in any
 * rounding mode).  The division is not what bounds the counting loop
 * below: a multiply by a float reciprocal (exact only when rounding to
 * nearest or down) or an integer multiply-high measured no faster at 4K. */
__attribute__((target("avx2"), always_inline)) static inline __m256i
packed10_keys16_avx2(const Packed10Avx2 *p, const uint8_t *block, bool big_endian)
{
  __m256i key[2];
  for (int h = 0; h < 2; h++) {
    __m256i v = _mm256_loadu_si256((const __m256i *)(block + 32 * h));
    if (big_endian)
      v = _mm256_shuffle_epi8(v, p->swap);
    __m256i f01 = _mm256_or_si256(_mm256_and_si256(v, p->ten),
                                  _mm256_and_si256(_mm256_slli_epi32(v, 6), p->ten_high));
    __m256i f2 = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi32(v, 20), p->ten), p->one_high);
    __m256i sum =
        _mm256_add_epi32(_mm256_madd_epi16(f01, p->w01), _mm256_madd_epi16(f2, p->w2half));
    key[h] = _mm256_cvttps_epi32(_mm256_div_ps(_mm256_cvtepi32_ps(sum), p->exact_one));
  }
  /* packus within lanes: 0-3, 8-11, 4-7, 12-15; put back in order. */
  return _mm256_permute4x64_epi64(_mm256_packus_epi32(key[0], key[1]), 0xd8);
}

__attribute__((target("avx2"))) static int packed10_keys_avx2(const uint8_t *row, int width,
                                                              bool big_endian, LhiLumaWeights fw,
                                                              uint16_t *keys)
{
  const Packed10Avx2 p = packed10_avx2_setup(fw);
  int x = 0;
  for (; x + 16 <= width; x += 16) {
    const uint8_t *block = row + 4 * (size_t)x;
    prefetch_ahead(block, 64);
    _mm256_storeu_si256((__m256i *)(keys + x), packed10_keys16_avx2(&p, block, big_endian));
  }
  return x;
}

/* 32 keys (128 bytes) a step, software-pipelined as count_y16_avx2_loop:
 * the keys of the next 32 words made and stored while those stored a step
 * before are counted, the row asked for ahead of its reads (4K on one core:
 * 1.37 to 1.48x NV12; keys of 256 pixels made, then counted: 1.76x). */
__attribute__((target("avx2"), always_inline)) static inline int
count_packed10_avx2_loop(LhiCount16 *c, const uint8_t *row, int width, bool big_endian,
                         LhiLumaWeights fw, bool narrow)
{
  const Packed10Avx2 p = packed10_avx2_setup(fw);
  _Alignas(32) uint16_t keys[2][32];
  if (width < 32)
    return 0;
  _mm256_store_si256((__m256i *)keys[0], packed10_keys16_avx2(&p, row, big_endian));
  _mm256_store_si256((__m256i *)(keys[0] + 16), packed10_keys16_avx2(&p, row + 64, big_endian));
  int x = 32, k = 0;
  for (; x + 32 <= width; x += 32, k ^= 1) {
    const uint8_t *block = row + 4 * (size_t)x;
    prefetch_ahead(block, 128);
    _mm256_store_si256((__m256i *)keys[k ^ 1], packed10_keys16_avx2(&p, block, big_endian));
    _mm256_store_si256((__m256i *)(keys[k ^ 1] + 16),
                       packed10_keys16_avx2(&p, block + 64, big_endian));
    count16_block_as(c, keys[k], 32, narrow);
  }
  count16_block_as(c, keys[k], 32, narrow);
  return x;
}

__attribute__((target("avx2"))) static int count_packed10_avx2(LhiCount16 *c, const uint8_t *row,
                                                               int width, bool big_endian,
                                                               LhiLumaWeights fw)
{
  if (c->narrow)
    return big_endian ? count_packed10_avx2_loop(c, row, width, true, fw, true)
                      : count_packed10_avx2_loop(c, row, width, false, fw, true);
  return big_endian ? count_packed10_avx2_loop(c, row, width, true, fw, false)
                    : count_packed10_avx2_loop(c, row, width, false, fw, false);
}
#endif

void lhi_packed10_keys_row(const uint8_t *row, int width, bool big_endian, LhiLumaWeights fw,
                           uint16_t *keys)
{
  int done = 0;
#ifdef LHI_ROWS_SSE41
  /* The vector loop has the rule of luma above 8 bits (the weights' sum
   * 10^4), which is the packed formats' (they are 10-bit). */
  if (fw.one == LHI_LUMA_EXACT_ONE && have_avx2())
    done = packed10_keys_avx2(row, width, big_endian, fw, keys);
#endif
  packed10_keys_plain(row, done, width, big_endian, fw, keys);
}

void lhi_count16_packed10_row(LhiCount16 *c, const uint8_t *row, int width, bool big_endian,
                              LhiLumaWeights fw)
{
  count16_reserve(c, width);
  int x = 0;
#ifdef LHI_ROWS_SSE41
  if (fw.one == LHI_LUMA_EXACT_ONE && have_avx2())
    x = count_packed10_avx2(c, row, width, big_endian, fw);
#endif
  uint16_t keys[COUNT16_PIECE];
  for (; x < width; x += COUNT16_PIECE) {
    const int n = width - x < COUNT16_PIECE ? width - x : COUNT16_PIECE;
    lhi_packed10_keys_row(row + 4 * (size_t)x, n, big_endian, fw, keys);
    count16_keys(c, keys, n);
  }
}

/* ---- The luma keys of 16-bit R'G'B' ---- */

static uint32_t sample16(const uint8_t *p)
{
  return (uint32_t)p[0] | (uint32_t)p[1] << 8;
}

static void rgb16_keys_plain(const uint8_t *row, int first, int width, int pixel_bytes,
                             const uint32_t *w, LhiLumaWeights rule, uint32_t max, uint16_t *keys)
{
  const LhiLumaWeights weights = {w[0], w[1], w[2], rule.one};
  for (int x = first; x < width; x++) {
    const uint8_t *px = row + (size_t)pixel_bytes * (size_t)x;
    keys[x] = (uint16_t)lhi_clamp_sample(
        lhi_luma_wide(sample16(px), sample16(px + 2), sample16(px + 4), weights), max);
  }
}

#ifdef LHI_ROWS_SSE41
/* 16 pixels a step.  pmaddwd weighs signed 16-bit lanes: each sample v is
 * taken as v - 2^15 (its top bit flipped), which takes 2^15 times the
 * weights' sum off the sum, added back with the rounding half.  Each
 * pixel's samples (0, 1) and (2, 3) are weighed as pairs in place (the
 * fourth, alpha or a zero, weighs nothing), and the pairs added by phaddd.
 * The sum t of the exact rule (< 2^30) is divided by 10^4 as
 * (t * 3518437209) >> 45: 3518437209 * 10^4 exceeds 2^45 by 1168, an error
 * below t * 1168 / 2^45 / 10^4 < 4e-6 in a quotient whose fraction is at
 * most 1 - 10^-4, so the floor is exact. */
#define RGB16_DIVIDE_MULTIPLIER 3518437209u
#define RGB16_DIVIDE_SHIFT 45

__attribute__((target("avx2"))) static inline __m256i
rgb16_luma8(__m256i a, __m256i b, __m256i weights, __m256i bias, bool exact)
{
  const __m256i flip = _mm256_set1_epi16((short)0x8000);
  __m256i sums = _mm256_hadd_epi32(_mm256_madd_epi16(_mm256_xor_si256(a, flip), weights),
                                   _mm256_madd_epi16(_mm256_xor_si256(b, flip), weights));
  /* phaddd within lanes: pixels 0 1 4 5 | 2 3 6 7; put in order. */
  sums = _mm256_permutevar8x32_epi32(sums, _mm256_setr_epi32(0, 1, 4, 5, 2, 3, 6, 7));
  sums = _mm256_add_epi32(sums, bias);
  if (!exact)
    return _mm256_srli_epi32(sums, LHI_LUMA_SHIFT);
  const __m256i multiplier = _mm256_set1_epi32((int)RGB16_DIVIDE_MULTIPLIER);
  __m256i even = _mm256_srli_epi64(_mm256_mul_epu32(sums, multiplier), RGB16_DIVIDE_SHIFT);
  __m256i odd = _mm256_srli_epi64(_mm256_mul_epu32(_mm256_srli_epi64(sums, 32), multiplier),
                                  RGB16_DIVIDE_SHIFT);
  return _mm256_blend_epi32(even, _mm256_slli_epi64(odd, 32), 0xaa);
}

/* The constants of rgb16_keys16_avx2, set up once a row. */
typedef struct {
  __m256i weights, bias, top, spread, spread_late, widen;
} Rgb16Avx2;

__attribute__((target("avx2"))) static inline Rgb16Avx2
rgb16_avx2_setup(const uint32_t *w, LhiLumaWeights rule, uint32_t max)
{
  const bool exact = rule.one == LHI_LUMA_EXACT_ONE;
  const uint32_t half = exact ? LHI_LUMA_EXACT_ONE / 2 : LHI_LUMA_HALF;
  Rgb16Avx2 p;
  p.weights = _mm256_set1_epi64x((int64_t)((uint64_t)w[2] << 32 | w[1] << 16 | w[0]));
  p.bias = _mm256_set1_epi32((int)((1u << 15) * rule.one + half));
  p.top = _mm256_set1_epi32((int)max);
  /* 6 bytes a pixel: 4 pixels (24 bytes) spread 12 bytes a lane, the
   * second 4 loaded 8 bytes early (no byte past the 48 read), then each
   * pixel's 3 samples and a zero put in 8 bytes. */
  p.spread = _mm256_setr_epi32(0, 1, 2, 0, 3, 4, 5, 0);
  p.spread_late = _mm256_setr_epi32(2, 3, 4, 0, 5, 6, 7, 0);
  p.widen = _mm256_setr_epi8(0, 1, 2, 3, 4, 5, -1, -1, 6, 7, 8, 9, 10, 11, -1, -1, 0, 1, 2, 3, 4, 5,
                             -1, -1, 6, 7, 8, 9, 10, 11, -1, -1);
  return p;
}

/* The keys of the 16 pixels at block, in order, as 16-bit lanes. */
__attribute__((target("avx2"), always_inline)) static inline __m256i
rgb16_keys16_avx2(const Rgb16Avx2 *p, const uint8_t *block, int pixel_bytes, bool exact)
{
  __m256i key[2];
  for (int h = 0; h < 2; h++) {
    const uint8_t *half_block = block + (size_t)pixel_bytes * 8 * (size_t)h;
    __m256i a, b;
    if (pixel_bytes == 8) {
      a = _mm256_loadu_si256((const __m256i *)half_block);
      b = _mm256_loadu_si256((const __m256i *)(half_block + 32));
    } else {
      a = _mm256_shuffle_epi8(
          _mm256_permutevar8x32_epi32(_mm256_loadu_si256((const __m256i *)half_block), p->spread),
          p->widen);
      b = _mm256_shuffle_epi8(
          _mm256_permutevar8x32_epi32(_mm256_loadu_si256((const __m256i *)(half_block + 16)),
                                      p->spread_late),
          p->widen);
    }
    key[h] = _mm256_min_epu32(rgb16_luma8(a, b, p->weights, p->bias, exact), p->top);
  }
  return _mm256_permute4x64_epi64(_mm256_packus_epi32(key[0], key[1]), 0xd8);
}

__attribute__((target("avx2"))) static int rgb16_keys_avx2(const uint8_t *row, int width,
                                                           int pixel_bytes, const uint32_t *w,
                                                           LhiLumaWeights rule, uint32_t max,
                                                           uint16_t *keys)
{
  const bool exact = rule.one == LHI_LUMA_EXACT_ONE;
  const Rgb16Avx2 p = rgb16_avx2_setup(w, rule, max);
  int x = 0;
  for (; x + 16 <= width; x += 16) {
    const uint8_t *block = row + (size_t)pixel_bytes * (size_t)x;
    prefetch_ahead(block, 16 * pixel_bytes);
    _mm256_storeu_si256((__m256i *)(keys + x), rgb16_keys16_avx2(&p, block, pixel_bytes, exact));
  }
  return x;
}

/* 32 keys a step, software-pipelined as count_packed10_avx2_loop: the
 * keys of the next 32 pixels (192 or 256 bytes) made and stored while those
 * stored a step before are counted, the row asked for ahead of its reads
 * (a row of keys made, then counted: 1080p RGBA64 2.1-2.3x NV12).  The
 * pixel size and the rule fixed in each caller's loop. */
__attribute__((target("avx2"), always_inline)) static inline int
count_rgb16_avx2_loop(LhiCount16 *c, const uint8_t *row, int width, int pixel_bytes,
                      const Rgb16Avx2 *p, bool exact, bool narrow)
{
  _Alignas(32) uint16_t keys[2][32];
  if (width < 32)
    return 0;
  const size_t half = 16 * (size_t)pixel_bytes;
  _mm256_store_si256((__m256i *)keys[0], rgb16_keys16_avx2(p, row, pixel_bytes, exact));
  _mm256_store_si256((__m256i *)(keys[0] + 16),
                     rgb16_keys16_avx2(p, row + half, pixel_bytes, exact));
  int x = 32, k = 0;
  for (; x + 32 <= width; x += 32, k ^= 1) {
    const uint8_t *block = row + (size_t)pixel_bytes * (size_t)x;
    for (int line = 0; line < 32 * pixel_bytes; line += 64)
      _mm_prefetch((const char *)block + LUMA_PREFETCH_BYTES + line, _MM_HINT_T0);
    _mm256_store_si256((__m256i *)keys[k ^ 1], rgb16_keys16_avx2(p, block, pixel_bytes, exact));
    _mm256_store_si256((__m256i *)(keys[k ^ 1] + 16),
                       rgb16_keys16_avx2(p, block + half, pixel_bytes, exact));
    count16_block_as(c, keys[k], 32, narrow);
  }
  count16_block_as(c, keys[k], 32, narrow);
  return x;
}

__attribute__((target("avx2"))) static int count_rgb16_avx2(LhiCount16 *c, const uint8_t *row,
                                                            int width, int pixel_bytes,
                                                            const uint32_t *w, LhiLumaWeights rule,
                                                            uint32_t max)
{
  const Rgb16Avx2 p = rgb16_avx2_setup(w, rule, max);
  const bool exact = rule.one == LHI_LUMA_EXACT_ONE;
  /* narrow counters: 16 bits, whose rule is the exact one */
  if (c->narrow && exact)
    return pixel_bytes == 8 ? count_rgb16_avx2_loop(c, row, width, 8, &p, true, true)
                            : count_rgb16_avx2_loop(c, row, width, 6, &p, true, true);
  if (c->narrow)
    return pixel_bytes == 8 ? count_rgb16_avx2_loop(c, row, width, 8, &p, false, true)
                            : count_rgb16_avx2_loop(c, row, width, 6, &p, false, true);
  if (exact)
    return pixel_bytes == 8 ? count_rgb16_avx2_loop(c, row, width, 8, &p, true, false)
                            : count_rgb16_avx2_loop(c, row, width, 6, &p, true, false);
  return pixel_bytes == 8 ? count_rgb16_avx2_loop(c, row, width, 8, &p, false, false)
                          : count_rgb16_avx2_loop(c, row, width, 6, &p, false, false);
}
#endif

void lhi_rgb16_keys_row(const uint8_t *row, int width, int pixel_bytes, const uint32_t *w,
                        LhiLumaWeights rule, uint32_t max, uint16_t *keys)
{
  int done = 0;
#ifdef LHI_ROWS_SSE41
  if (have_avx2())
    done = rgb16_keys_avx2(row, width, pixel_bytes, w, rule, max, keys);
#endif
  rgb16_keys_plain(row, done, width, pixel_bytes, w, rule, max, keys);
}

void lhi_count16_rgb16_row(LhiCount16 *c, const uint8_t *row, int width, int pixel_bytes,
                           const uint32_t *w, LhiLumaWeights rule, uint32_t max)
{
  count16_reserve(c, width);
  int x = 0;
#ifdef LHI_ROWS_SSE41
  if (have_avx2())
    x = count_rgb16_avx2(c, row, width, pixel_bytes, w, rule, max);
#endif
  uint16_t keys[COUNT16_PIECE];
  for (; x < width; x += COUNT16_PIECE) {
    const int n = width - x < COUNT16_PIECE ? width - x : COUNT16_PIECE;
    lhi_rgb16_keys_row(row + (size_t)pixel_bytes * (size_t)x, n, pixel_bytes, w, rule, max, keys);
    count16_keys(c, keys, n);
  }
}

/* ---- Absolute differences of two rows of keys ---- */

/* Keys summed into a 32-bit counter at a time, which vectorizes (psadbw for
 * bytes): 65536 differences of at most 65535 stay below 2^32. */
#define DIFFERENCE_CHUNK 65536

uint64_t lhi_difference_row_u8(const uint8_t *restrict keys, uint8_t *restrict previous, int width)
{
  uint64_t sum = 0;
  for (int first = 0; first < width; first += DIFFERENCE_CHUNK) {
    const int end = width - first < DIFFERENCE_CHUNK ? width : first + DIFFERENCE_CHUNK;
    uint32_t chunk = 0;
    for (int x = first; x < end; x++) {
      const int d = (int)keys[x] - (int)previous[x];
      chunk += (uint32_t)(d < 0 ? -d : d);
    }
    sum += chunk;
  }
  memcpy(previous, keys, (size_t)width);
  return sum;
}

uint64_t lhi_difference_row_u16(const uint16_t *restrict keys, uint16_t *restrict previous,
                                int width)
{
  uint64_t sum = 0;
  for (int first = 0; first < width; first += DIFFERENCE_CHUNK) {
    const int end = width - first < DIFFERENCE_CHUNK ? width : first + DIFFERENCE_CHUNK;
    uint32_t chunk = 0;
    for (int x = first; x < end; x++) {
      const int d = (int)keys[x] - (int)previous[x];
      chunk += (uint32_t)(d < 0 ? -d : d);
    }
    sum += chunk;
  }
  memcpy(previous, keys, (size_t)width * sizeof *keys);
  return sum;
}
