/* luma-rows-test.c: the CPU backend's vectorized row loops (cpu/luma-rows.c)
 * against a plain loop written here, on each code path this machine can run
 * (AVX2, SSE4.1, none): the luma of 8-bit R'G'B' rows and its counting, and
 * the counting of 8-bit rows, on seeded random rows of every width 0 .. 100
 * and some longer ones, at odd offsets (unaligned pointers, and a row that
 * ends where its buffer does), with the weights of every matrix placed at
 * every byte position a 3 or 4-byte pixel could have them, so that a wrong
 * shuffle or a wrong lane order fails; and the luma keys of packed 10-bit
 * R'G'B' words, either byte order, the weights at every field, and of
 * 16-bit R'G'B' (6 and 8 bytes a pixel) at depths 8, 10, 12 and 16; and
 * the counting of the Y of 16-bit words and of v210 as its keys are made,
 * through the narrow counters, flushed and carried; and the counting of
 * packed 10-bit and 16-bit R'G'B' as their luma keys are made; and the narrow counters
 * added into 65536 bins with their blocks' sums, and the moments and
 * percentile values made from those sums against stats.c's from the bins. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lh-private.h"
#include "test-check.h"

static const char *const simd_names[] = {"none", "SSE4.1", "best (AVX2 where there is)"};
static const LhMatrix matrices[] = {LH_MATRIX_BT601, LH_MATRIX_BT709, LH_MATRIX_BT2020};
static const char *const matrix_names[] = {"BT.601", "BT.709", "BT.2020"};
static const int offsets[] = {0, 1, 3, 7, 13};
/* Past the 100: the 256-pixel chunks of lhi_count8_rgb_row, 32-pixel steps. */
static const int long_widths[] = {255, 256, 257, 511, 1000, 3845};

static uint64_t rng_state = 0x2545f4914f6cdd1du;

static uint32_t next_random(void)
{
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return (uint32_t)(rng_state >> 32);
}

/* Random bytes; kind 1: one value; kind 2: one value +-1 (a flat sky). */
static void fill_row(uint8_t *p, size_t n, int kind)
{
  const uint8_t base = (uint8_t)next_random();
  for (size_t i = 0; i < n; i++)
    p[i] = kind == 0   ? (uint8_t)next_random()
           : kind == 1 ? base
                       : (uint8_t)(base + (next_random() % 3) - 1);
}

static uint32_t reference_luma(const uint8_t *px, int pixel_bytes, const uint32_t *w)
{
  uint32_t sum = LHI_LUMA_HALF;
  for (int i = 0; i < pixel_bytes; i++)
    sum += w[i] * px[i];
  return sum >> LHI_LUMA_SHIFT;
}

/* One row: its luma by lhi_luma_row_u8 and its counts by
 * lhi_count8_rgb_row, against the plain loop.  The row is the last bytes of
 * its buffer, so that a read past it reaches memory the sanitizers and
 * valgrind know is not the row's. */
static void check_rgb_row(int pixel_bytes, const uint32_t *w, int width, int offset, int kind,
                          const char *what)
{
  const size_t row_bytes = (size_t)pixel_bytes * (size_t)width;
  uint8_t *buffer = malloc((size_t)offset + row_bytes + 1);
  uint8_t *luma = malloc((size_t)width + 1);
  if (!buffer || !luma) {
    fprintf(stderr, "luma-rows-test: out of memory\n");
    exit(1);
  }
  uint8_t *px = buffer + offset;
  fill_row(px, row_bytes, kind);
  luma[width] = 0xa5; /* must stay */
  lhi_luma_row_u8(px, width, pixel_bytes, w, luma);
  uint64_t expected[256] = {0}, counted[256] = {0};
  int wrong = 0, first_wrong = -1;
  for (int x = 0; x < width; x++) {
    const uint32_t y = reference_luma(px + (size_t)pixel_bytes * (size_t)x, pixel_bytes, w);
    expected[y]++;
    if (luma[x] != y && wrong++ == 0)
      first_wrong = x;
  }
  CHECK(wrong == 0, "%s, width %d, offset %d: %d luma wrong, first at x = %d (%u, expected %u)",
        what, width, offset, wrong, first_wrong, first_wrong >= 0 ? luma[first_wrong] : 0,
        first_wrong >= 0
            ? reference_luma(px + (size_t)pixel_bytes * (size_t)first_wrong, pixel_bytes, w)
            : 0);
  CHECK(luma[width] == 0xa5, "%s, width %d, offset %d: the byte after the row was written", what,
        width, offset);

  LhiCount8 count;
  lhi_count8_begin(&count, counted);
  lhi_count8_rgb_row(&count, px, width, pixel_bytes, w);
  lhi_count8_rgb_row(&count, px, width, pixel_bytes, w); /* twice: the counts add up */
  lhi_count8_end(&count);
  int bad_bins = 0;
  for (int v = 0; v < 256; v++)
    bad_bins += counted[v] != 2 * expected[v];
  CHECK(bad_bins == 0, "%s, width %d, offset %d: %d bins of lhi_count8_rgb_row wrong", what, width,
        offset, bad_bins);
  free(buffer);
  free(luma);
}

/* The three weights of matrix at every placement in a 3 or 4-byte pixel
 * (the fourth position weighing nothing: the vector paths; weighing
 * something: the plain loop's fallback), every width and offset. */
static void test_rgb_rows(int simd)
{
  for (int m = 0; m < 3; m++) {
    const LhiLumaWeights lw = lhi_luma_weights(matrices[m], 8);
    const uint32_t k[3] = {lw.kr, lw.kg, lw.kb};
    for (int pixel_bytes = 3; pixel_bytes <= 4; pixel_bytes++)
      for (int r = 0; r < pixel_bytes; r++)
        for (int g = 0; g < pixel_bytes; g++)
          for (int b = 0; b < pixel_bytes; b++) {
            if (r == g || g == b || r == b)
              continue;
            uint32_t w[4] = {0, 0, 0, 0};
            w[r] = k[0];
            w[g] = k[1];
            w[b] = k[2];
            char what[160];
            snprintf(what, sizeof what, "%s, %d bytes a pixel, R G B at bytes %d %d %d (simd %s)",
                     matrix_names[m], pixel_bytes, r, g, b, simd_names[simd]);
            for (int width = 0; width <= 100; width++)
              for (size_t o = 0; o < sizeof offsets / sizeof offsets[0]; o++)
                check_rgb_row(pixel_bytes, w, width, offsets[o], width % 3, what);
            for (size_t i = 0; i < sizeof long_widths / sizeof long_widths[0]; i++)
              for (int kind = 0; kind < 3; kind++)
                check_rgb_row(pixel_bytes, w, long_widths[i], (int)i, kind, what);
          }
  }
}

/* The library's byte weights of each 8-bit R'G'B' format, against the byte
 * order its name says. */
static void test_byte_weights(void)
{
  static const struct {
    LhFormat format;
    int r, g, b;
  } orders[] = {
      {LH_FORMAT_RGB, 0, 1, 2},  {LH_FORMAT_BGR, 2, 1, 0},  {LH_FORMAT_RGBA, 0, 1, 2},
      {LH_FORMAT_BGRA, 2, 1, 0}, {LH_FORMAT_RGBX, 0, 1, 2}, {LH_FORMAT_BGRX, 2, 1, 0},
  };
  for (int m = 0; m < 3; m++) {
    const LhiLumaWeights lw = lhi_luma_weights(matrices[m], 8);
    for (size_t i = 0; i < sizeof orders / sizeof orders[0]; i++) {
      uint32_t w[4];
      lhi_byte_weights(orders[i].format, lw, w);
      CHECK(w[orders[i].r] == lw.kr && w[orders[i].g] == lw.kg && w[orders[i].b] == lw.kb &&
                w[0] + w[1] + w[2] + w[3] == LHI_LUMA_ONE,
            "%s, %s: byte weights %u %u %u %u", lh_format_name(orders[i].format), matrix_names[m],
            w[0], w[1], w[2], w[3]);
    }
  }
  /* Global equalization of gray and YUV frames asks too (cpu/equalize.c):
   * their r, g, b of -1 must not place weights before w. */
  static const LhFormat others[] = {LH_FORMAT_GRAY8, LH_FORMAT_I420,   LH_FORMAT_NV12,
                                    LH_FORMAT_YUY2,  LH_FORMAT_GRAY16, LH_FORMAT_RGB16};
  const LhiLumaWeights lw = lhi_luma_weights(LH_MATRIX_BT601, 8);
  for (size_t i = 0; i < sizeof others / sizeof others[0]; i++) {
    uint32_t guarded[6] = {0xdeadbeef, 1, 1, 1, 1, 0xdeadbeef};
    lhi_byte_weights(others[i], lw, guarded + 1);
    CHECK(guarded[0] == 0xdeadbeef && guarded[5] == 0xdeadbeef,
          "%s: byte weights written outside w", lh_format_name(others[i]));
    CHECK(guarded[1] == 0 && guarded[2] == 0 && guarded[3] == 0 && guarded[4] == 0,
          "%s: byte weights %u %u %u %u, not 0", lh_format_name(others[i]), guarded[1], guarded[2],
          guarded[3], guarded[4]);
  }
}

/* lhi_count8_row and lhi_count8_row_step2 against plain counting. */
static void test_count_rows(void)
{
  for (int width = 0; width <= 300; width++)
    for (int step = 1; step <= 2; step++) {
      const int offset = width % 5;
      const size_t bytes = (size_t)step * (size_t)width;
      uint8_t *buffer = malloc((size_t)offset + bytes + 1);
      if (!buffer)
        exit(1);
      uint8_t *row = buffer + offset;
      fill_row(row, bytes, width % 3);
      uint64_t expected[256] = {0}, counted[256] = {0};
      for (int x = 0; x < width; x++)
        expected[row[step * x]]++;
      LhiCount8 count;
      lhi_count8_begin(&count, counted);
      if (step == 1)
        lhi_count8_row(&count, row, width);
      else
        lhi_count8_row_step2(&count, row, width);
      lhi_count8_end(&count);
      int bad_bins = 0;
      for (int v = 0; v < 256; v++)
        bad_bins += counted[v] != expected[v];
      CHECK(bad_bins == 0, "lhi_count8_row%s, width %d, offset %d: %d bins wrong",
            step == 2 ? "_step2" : "", width, offset, bad_bins);
      free(buffer);
    }
}

/* A packed word of fields 0, 1, 2 (bits 0-9, 10-19, 20-29) and top 2 bits. */
static uint32_t word_of(uint32_t f0, uint32_t f1, uint32_t f2, uint32_t top)
{
  return f0 | f1 << 10 | f2 << 20 | top << 30;
}

/* lhi_packed10_keys_row against lhi_luma_wide of the fields: random words
 * (kind 0), the extremes of each field (kind 1: 0 or 1023), and greys
 * r = g = b (kind 2, where every quotient is a whole number). */
static void test_packed10_rows(int simd)
{
  for (int m = 0; m < 3; m++) {
    const LhiLumaWeights lw = lhi_luma_weights(matrices[m], 10);
    const uint32_t k[3] = {lw.kr, lw.kg, lw.kb};
    static const int perms[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2},
                                    {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
    for (int p = 0; p < 6; p++)
      for (int big = 0; big <= 1; big++) {
        uint32_t fwv[3];
        for (int i = 0; i < 3; i++)
          fwv[perms[p][i]] = k[i];
        const LhiLumaWeights fw = {fwv[0], fwv[1], fwv[2], lw.one};
        for (int width = 0; width <= 100 + 300 * (p == 0); width++) {
          const int offset = width % 5, kind = width % 3;
          uint8_t *buffer = malloc((size_t)offset + 4 * (size_t)width + 1);
          uint16_t *keys = malloc(((size_t)width + 1) * sizeof *keys);
          if (!buffer || !keys)
            exit(1);
          uint8_t *row = buffer + offset;
          uint32_t *words = malloc(((size_t)width + 1) * sizeof *words);
          for (int x = 0; x < width; x++) {
            uint32_t f[3];
            for (int i = 0; i < 3; i++)
              f[i] = kind == 0 ? next_random() & 0x3ff : kind == 1 ? (next_random() & 1) * 1023 : 0;
            if (kind == 2)
              f[0] = f[1] = f[2] = (uint32_t)x * 1023 / (width > 1 ? width - 1 : 1);
            words[x] = word_of(f[0], f[1], f[2], next_random() & 3);
            lhi_store_word(row + 4 * (size_t)x, words[x], big);
          }
          keys[width] = 0xa5a5;
          lhi_packed10_keys_row(row, width, big, fw, keys);
          int wrong = 0, first = -1;
          for (int x = 0; x < width; x++) {
            const uint32_t w = words[x];
            const uint32_t want =
                lhi_luma_wide(w & 0x3ff, (w >> 10) & 0x3ff, (w >> 20) & 0x3ff, fw);
            if (keys[x] != want && wrong++ == 0)
              first = x;
          }
          CHECK(wrong == 0 && keys[width] == 0xa5a5,
                "packed10 %s, weights at fields %d %d %d, %s-endian, simd %s, width %d: %d keys "
                "wrong (first at %d), end marker %s",
                matrix_names[m], perms[p][0], perms[p][1], perms[p][2], big ? "big" : "little",
                simd_names[simd], width, wrong, first, keys[width] == 0xa5a5 ? "kept" : "written");
          free(words);
          free(buffer);
          free(keys);
        }
      }
  }
}

/* lhi_rgb16_keys_row against lhi_luma_wide of the samples, clamped:
 * random samples (kind 0), extremes (kind 1: 0 or 65535), greys (kind 2),
 * at each depth's rule (8 bits: the 14-bit weights) and maximum. */
static void test_rgb16_rows(int simd)
{
  static const int depths[] = {8, 10, 12, 16};
  static const int perms[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
  for (int m = 0; m < 3; m++)
    for (size_t d = 0; d < sizeof depths / sizeof depths[0]; d++) {
      const LhiLumaWeights lw = lhi_luma_weights(matrices[m], depths[d]);
      const uint32_t max = (1u << depths[d]) - 1, k[3] = {lw.kr, lw.kg, lw.kb};
      for (int pixel_bytes = 6; pixel_bytes <= 8; pixel_bytes += 2)
        for (int p = 0; p < 6; p++) {
          uint32_t w[3];
          for (int i = 0; i < 3; i++)
            w[perms[p][i]] = k[i];
          const LhiLumaWeights sample_rule = {w[0], w[1], w[2], lw.one};
          for (int width = 0; width <= 100 + 200 * (p == 0); width++) {
            const int offset = width % 5, kind = width % 3;
            const size_t bytes = (size_t)pixel_bytes * (size_t)width;
            uint8_t *buffer = malloc((size_t)offset + bytes + 1);
            uint16_t *keys = malloc(((size_t)width + 1) * sizeof *keys);
            if (!buffer || !keys)
              exit(1);
            uint8_t *row = buffer + offset;
            for (int x = 0; x < width; x++)
              for (int i = 0; i < pixel_bytes / 2; i++) {
                uint32_t v = kind == 0   ? next_random() & 0xffff
                             : kind == 1 ? (next_random() & 1) * 0xffffu
                                         : (uint32_t)x * 0xffffu / (width > 1 ? width - 1 : 1);
                row[(size_t)pixel_bytes * x + 2 * i] = (uint8_t)v;
                row[(size_t)pixel_bytes * x + 2 * i + 1] = (uint8_t)(v >> 8);
              }
            keys[width] = 0xa5a5;
            lhi_rgb16_keys_row(row, width, pixel_bytes, w, lw, max, keys);
            int wrong = 0, first = -1;
            for (int x = 0; x < width; x++) {
              const uint8_t *px = row + (size_t)pixel_bytes * x;
              uint32_t s[3];
              for (int i = 0; i < 3; i++)
                s[i] = (uint32_t)px[2 * i] | (uint32_t)px[2 * i + 1] << 8;
              uint32_t want = lhi_luma_wide(s[0], s[1], s[2], sample_rule);
              want = want > max ? max : want;
              if (keys[x] != want && wrong++ == 0)
                first = x;
            }
            CHECK(wrong == 0 && keys[width] == 0xa5a5,
                  "rgb16 %s, depth %d, %d bytes a pixel, weights at samples %d %d %d, simd %s, "
                  "width %d: %d keys wrong (first at %d), end marker %s",
                  matrix_names[m], depths[d], pixel_bytes, perms[p][0], perms[p][1], perms[p][2],
                  simd_names[simd], width, wrong, first,
                  keys[width] == 0xa5a5 ? "kept" : "written");
            free(buffer);
            free(keys);
          }
        }
    }
}

/* The Y of 16-bit words and of v210 counted as their keys are made
 * (lhi_count16_y16_row, lhi_count16_v210_row) against keys taken one by
 * one here and counted plainly: the 16-bit words of P010 / P012 (shifted
 * down), of the 10 and 12-bit planar formats (random bits above the depth:
 * clamped) and of GRAY16 either way round (the 8-bit counters that carry),
 * random, one value or one value +-1; each row counted `repeats` times,
 * enough for the long rows of one value to make the 16-bit copies flush
 * before they wrap and the 8-bit counters carry many times over. */
typedef struct {
  int depth, shift, big_endian;
} Y16Layout;

static const Y16Layout y16_layouts[] = {{10, 6, 0}, {12, 4, 0}, {10, 0, 0},
                                        {12, 0, 0}, {16, 0, 0}, {16, 0, 1}};

static uint32_t y16_key(const uint8_t *p, Y16Layout l)
{
  const uint32_t word = l.big_endian ? (uint32_t)p[0] << 8 | p[1] : (uint32_t)p[0] | p[1] << 8;
  const uint32_t max = (1u << l.depth) - 1, v = word >> l.shift;
  return v > max ? max : v;
}

static uint32_t v210_key(const uint8_t *row, int x)
{
  uint32_t words[4];
  memcpy(words, row + (size_t)(x / LHI_V210_GROUP_PIXELS) * LHI_V210_GROUP_BYTES, sizeof words);
  return lhi_v210_get(words, lhi_v210_y_field(x % LHI_V210_GROUP_PIXELS));
}

/* The histograms and counters of one check of a counting row loop: keys
 * of depth bits counted into counted, at 16 bits through 8-bit counters and
 * a list of their carries with exactly the room the backend makes for them
 * (width x repeats keys).  expected is the caller's to fill. */
typedef struct {
  int depth;
  uint64_t *expected, *counted;
  LhiNarrow narrow;
  size_t room;
  LhiCount16 c;
} Count16Check;

static void count16_check_begin(Count16Check *k, int depth, int width, int repeats)
{
  k->depth = depth;
  k->expected = calloc(65536, sizeof *k->expected);
  k->counted = calloc(65536, sizeof *k->counted);
  k->room = (size_t)width * (size_t)repeats / 256 + 1;
  k->narrow = (LhiNarrow){calloc(65536, 1), malloc(k->room * sizeof(uint16_t)), 0};
  if (!k->expected || !k->counted || !k->narrow.counters || !k->narrow.carries)
    exit(1);
  if (depth == 16)
    lhi_count16_begin_narrow(&k->c, &k->narrow);
  else if (lhi_count16_begin(&k->c, k->counted, depth) < 0)
    exit(1);
}

/* Ends the counting and frees the check; the bins counted wrong. */
static int count16_check_end(Count16Check *k)
{
  lhi_count16_end(&k->c);
  if (k->depth == 16) {
    CHECK(k->narrow.n_carries <= k->room, "count16 16-bit: %zu carries, room for %zu",
          k->narrow.n_carries, k->room);
    LhiBlockSums blocks;
    lhi_count16_add_narrow(k->counted, &k->narrow, 1, 0, LHI_BLOCKS, &blocks);
  }
  int bad_bins = 0;
  for (int v = 0; v < 65536; v++)
    bad_bins += k->counted[v] != k->expected[v];
  free(k->expected);
  free(k->counted);
  free(k->narrow.counters);
  free(k->narrow.carries);
  return bad_bins;
}

/* One row (the last bytes of its buffer) counted repeats times; v210: l is
 * 10-bit with no shift. */
static void check_count16_row(bool v210, Y16Layout l, int width, int kind, int repeats,
                              const char *simd_name)
{
  const size_t bytes = v210 ? (size_t)(width + LHI_V210_GROUP_PIXELS - 1) / LHI_V210_GROUP_PIXELS *
                                  LHI_V210_GROUP_BYTES
                            : 2 * (size_t)width;
  const int offset = v210 ? 4 * (width % 3) : width % 5;
  uint8_t *buffer = malloc((size_t)offset + bytes + 1);
  Count16Check k;
  count16_check_begin(&k, l.depth, width, repeats);
  if (!buffer)
    exit(1);
  uint8_t *row = buffer + offset;
  /* kinds 1 and 2 on v210: one value (+-1) in every field */
  if (v210 && kind != 0) {
    const uint32_t base = next_random() & 0x3ff;
    for (size_t g = 0; g < bytes; g += 4) {
      uint32_t word = 0;
      for (int f = 0; f < 3; f++) {
        const uint32_t v = kind == 1 ? base : (base + next_random() % 3 + 1023) % 1024;
        word |= v << (10 * f);
      }
      word |= next_random() << 30;
      memcpy(row + g, &word, sizeof word);
    }
  } else {
    fill_row(row, bytes, kind);
  }
  for (int x = 0; x < width; x++)
    k.expected[v210 ? v210_key(row, x) : y16_key(row + 2 * (size_t)x, l)] += (uint64_t)repeats;
  const uint32_t max = (1u << l.depth) - 1;
  for (int r = 0; r < repeats; r++) {
    if (v210)
      lhi_count16_v210_row(&k.c, row, width);
    else
      lhi_count16_y16_row(&k.c, row, width, l.shift, max, l.big_endian);
  }
  int bad_bins = count16_check_end(&k);
  CHECK(bad_bins == 0,
        "count16 %s, %d-bit, shift %d, %s-endian, simd %s, width %d, kind %d, %d "
        "times: %d bins wrong",
        v210 ? "v210" : "words", l.depth, l.shift, l.big_endian ? "big" : "little", simd_name,
        width, kind, repeats, bad_bins);
  free(buffer);
}

static void test_count16_rows(int simd)
{
  const Y16Layout v210_layout = {10, 0, 0};
  for (int width = 0; width <= 100; width++) {
    for (size_t l = 0; l < sizeof y16_layouts / sizeof y16_layouts[0]; l++)
      check_count16_row(false, y16_layouts[l], width, width % 3, 1, simd_names[simd]);
    check_count16_row(true, v210_layout, width, width % 3, 1, simd_names[simd]);
  }
  for (size_t w = 0; w < sizeof long_widths / sizeof long_widths[0]; w++)
    for (int kind = 0; kind < 3; kind++) {
      /* one value over 3845 x 80 pixels: (3845 + 3) / 4 x 80 > 65535 in a
       * copy, 300,000 in an 8-bit counter */
      const int repeats = long_widths[w] == 3845 ? 80 : 3;
      for (size_t l = 0; l < sizeof y16_layouts / sizeof y16_layouts[0]; l++)
        check_count16_row(false, y16_layouts[l], long_widths[w], kind, repeats, simd_names[simd]);
      check_count16_row(true, v210_layout, long_widths[w], kind, repeats, simd_names[simd]);
    }
}

/* Packed 10-bit R'G'B' counted as its keys are made
 * (lhi_count16_packed10_row) against lhi_luma_wide of each word's fields
 * counted plainly: random words (kind 0), one word (kind 1), one value +-1
 * in every field (kind 2), either byte order, the weights at every field;
 * the row (the last bytes of its buffer, at an odd offset) counted
 * `repeats` times, enough for a long row of one word to make the 16-bit
 * copies flush before they wrap. */
/* A row of 16-bit R'G'B' (the last bytes of its buffer) counted repeats
 * times by lhi_count16_rgb16_row, against lhi_luma_wide of its samples,
 * clamped; at 16 bits through the narrow counters and their carries. */
static void check_count16_rgb16_row(int pixel_bytes, const uint32_t *w, LhiLumaWeights lw,
                                    int depth, int width, int kind, int repeats, const char *what)
{
  const int offset = width % 5;
  const size_t bytes = (size_t)pixel_bytes * (size_t)width;
  uint8_t *buffer = malloc((size_t)offset + bytes + 1);
  Count16Check k;
  count16_check_begin(&k, depth, width, repeats);
  if (!buffer)
    exit(1);
  uint8_t *row = buffer + offset;
  const uint32_t max = (1u << depth) - 1, grey = next_random() & 0xffff;
  const LhiLumaWeights sample_rule = {w[0], w[1], w[2], lw.one};
  for (int x = 0; x < width; x++) {
    uint32_t s[3];
    for (int i = 0; i < pixel_bytes / 2; i++) {
      /* kind 0 random, 1 one grey (+-1) over the row, 2 the extremes */
      const uint32_t v = kind == 0   ? next_random() & 0xffff
                         : kind == 1 ? (grey + next_random() % 3 + 0xffff) % 0x10000
                                     : (next_random() & 1) * 0xffffu;
      row[(size_t)pixel_bytes * x + 2 * i] = (uint8_t)v;
      row[(size_t)pixel_bytes * x + 2 * i + 1] = (uint8_t)(v >> 8);
      if (i < 3)
        s[i] = v;
    }
    const uint32_t key = lhi_luma_wide(s[0], s[1], s[2], sample_rule);
    k.expected[key > max ? max : key] += (uint64_t)repeats;
  }
  for (int r = 0; r < repeats; r++)
    lhi_count16_rgb16_row(&k.c, row, width, pixel_bytes, w, lw, max);
  int bad_bins = count16_check_end(&k);
  CHECK(bad_bins == 0,
        "count16 rgb16 %s, depth %d, %d bytes a pixel, width %d, kind %d, %d "
        "times: %d bins wrong",
        what, depth, pixel_bytes, width, kind, repeats, bad_bins);
  free(buffer);
}

/* Every depth's rule (8 bits: the 14-bit weights, the other loop), both
 * pixel sizes, weights at the samples in two orders, every width to 100
 * and the long ones, one grey over 3845 x 80 pixels (counters flushed,
 * carried). */
static void test_count16_rgb16_rows(int simd)
{
  static const int depths[] = {8, 10, 12, 16};
  static const int perms[2][3] = {{0, 1, 2}, {2, 1, 0}};
  for (int m = 0; m < 3; m += 2)
    for (size_t d = 0; d < sizeof depths / sizeof depths[0]; d++) {
      const LhiLumaWeights lw = lhi_luma_weights(matrices[m], depths[d]);
      const uint32_t k[3] = {lw.kr, lw.kg, lw.kb};
      for (int pixel_bytes = 6; pixel_bytes <= 8; pixel_bytes += 2)
        for (int p = 0; p < 2; p++) {
          uint32_t w[3];
          for (int i = 0; i < 3; i++)
            w[perms[p][i]] = k[i];
          char what[96];
          snprintf(what, sizeof what, "%s, weights at samples %d %d %d, simd %s", matrix_names[m],
                   perms[p][0], perms[p][1], perms[p][2], simd_names[simd]);
          for (int width = 0; width <= 100; width++)
            check_count16_rgb16_row(pixel_bytes, w, lw, depths[d], width, width % 3, 1, what);
          for (size_t lw_i = 0; lw_i < sizeof long_widths / sizeof long_widths[0]; lw_i++)
            for (int kind = 0; kind < 3; kind++) {
              const int repeats = long_widths[lw_i] == 3845 && p == 0 && kind == 1 ? 80 : 2;
              check_count16_rgb16_row(pixel_bytes, w, lw, depths[d], long_widths[lw_i], kind,
                                      repeats, what);
            }
        }
    }
}

static void check_count16_packed10_row(LhiLumaWeights fw, bool big, int width, int kind,
                                       int repeats, const char *what)
{
  const int offset = width % 5;
  uint8_t *buffer = malloc((size_t)offset + 4 * (size_t)width + 1);
  Count16Check k;
  count16_check_begin(&k, 10, width, repeats);
  if (!buffer)
    exit(1);
  uint8_t *row = buffer + offset;
  const uint32_t one = next_random(), base = next_random() & 0x3ff;
  for (int x = 0; x < width; x++) {
    uint32_t word = one;
    if (kind == 0) {
      word = next_random();
    } else if (kind == 2) {
      word = next_random() << 30;
      for (int f = 0; f < 3; f++)
        word |= ((base + next_random() % 3 + 1023) % 1024) << (10 * f);
    }
    lhi_store_word(row + 4 * (size_t)x, word, big);
    k.expected[lhi_luma_wide(word & 0x3ff, (word >> 10) & 0x3ff, (word >> 20) & 0x3ff, fw)] +=
        (uint64_t)repeats;
  }
  for (int r = 0; r < repeats; r++)
    lhi_count16_packed10_row(&k.c, row, width, big, fw);
  int bad_bins = count16_check_end(&k);
  CHECK(bad_bins == 0, "count16 packed10 %s, %s-endian, width %d, kind %d, %d times: %d bins wrong",
        what, big ? "big" : "little", width, kind, repeats, bad_bins);
  free(buffer);
}

static void test_count16_packed10_rows(int simd)
{
  static const int perms[3][3] = {{0, 1, 2}, {2, 1, 0}, {1, 2, 0}};
  for (int m = 0; m < 3; m++) {
    const LhiLumaWeights lw = lhi_luma_weights(matrices[m], 10);
    const uint32_t k[3] = {lw.kr, lw.kg, lw.kb};
    for (int p = 0; p < 3; p++) {
      uint32_t fwv[3];
      for (int i = 0; i < 3; i++)
        fwv[perms[p][i]] = k[i];
      const LhiLumaWeights fw = {fwv[0], fwv[1], fwv[2], lw.one};
      char what[96];
      snprintf(what, sizeof what, "%s, weights at fields %d %d %d, simd %s", matrix_names[m],
               perms[p][0], perms[p][1], perms[p][2], simd_names[simd]);
      for (int big = 0; big <= 1; big++) {
        for (int width = 0; width <= 100; width++)
          check_count16_packed10_row(fw, big, width, width % 3, 1, what);
        for (size_t w = 0; w < sizeof long_widths / sizeof long_widths[0]; w++)
          for (int kind = 0; kind < 3; kind++) {
            /* one word over 3845 x 80 pixels: (3845 + 3) / 4 x 80 > 65535
             * in a copy */
            const int repeats = long_widths[w] == 3845 && m == 0 && p == 0 ? 80 : 2;
            check_count16_packed10_row(fw, big, long_widths[w], kind, repeats, what);
          }
      }
    }
  }
}

/* ---- The 8-bit counters of 16-bit keys added in, and the blocks' sums ---- */

/* Histograms for the sums: kind 0 random counts in every bin; 1 one bin
 * (at 0, at 65535 or anywhere); 2 a few bins here and there; 3 a photo's
 * span (a band of blocks, empty ones at both ends and one in the middle);
 * 4 nothing. */
static void fill_histogram(uint64_t *h, int kind, uint64_t scale)
{
  memset(h, 0, 65536 * sizeof *h);
  switch (kind) {
  case 0:
    for (int v = 0; v < 65536; v++)
      h[v] = next_random() % scale;
    break;
  case 1: {
    const uint32_t r = next_random() % 3;
    h[r == 0 ? 0 : r == 1 ? 65535 : next_random() % 65536] = 1 + next_random() % scale;
    break;
  }
  case 2:
    for (int k = 0; k < 7; k++)
      h[next_random() % 65536] += 1 + next_random() % scale;
    h[4095] += next_random() % 2; /* the limited range's limits */
    h[60160 + next_random() % 2] += next_random() % 2;
    break;
  case 3: {
    const uint32_t first = next_random() % 20000, end = first + 1 + next_random() % 40000;
    for (uint32_t v = first; v < end; v++)
      h[v] = next_random() % scale;
    memset(h + (first + end) / 2 / 256 * 256, 0, 256 * sizeof *h);
    break;
  }
  default:
    break;
  }
}

/* The 8-bit counters and carries of n_bands bands added into bins that
 * held anything (they are written whole), a range of blocks at a time, as
 * the threads do: the bins and each block's sums against plain ones.  The
 * carries (up to 63 of a key) at random keys, at keys where the counters
 * are 0 and 255, at 0 and 65535, or none. */
static void check_add_narrow(int n_bands, int kind, const char *simd_name)
{
  uint64_t *bins = malloc(65536 * sizeof *bins), *expected = malloc(65536 * sizeof *expected);
  LhiNarrow bands[3];
  if (!bins || !expected)
    exit(1);
  fill_histogram(expected, kind, 64); /* carries a key */
  for (int v = 0; v < 65536; v++) {
    expected[v] *= 256;
    bins[v] = next_random(); /* what the bins held is no part of the count */
  }
  for (int k = 0; k < n_bands; k++) {
    bands[k].counters = malloc(65536);
    size_t n = 0;
    for (int v = 0; v < 65536; v++)
      n += expected[v] / 256;
    bands[k].carries = malloc((n + 1) * sizeof(uint16_t));
    if (!bands[k].counters || !bands[k].carries)
      exit(1);
    bands[k].n_carries = 0;
    for (int v = 0; v < 65536; v++)
      bands[k].counters[v] = kind == 4 ? 0 : kind == 1 ? 255 : (uint8_t)next_random();
  }
  /* each key's carries shared out among the bands, in an order of keys
   * that is not theirs (from the top down) */
  for (int v = 65535; v >= 0; v--)
    for (uint64_t c = 0; c < expected[v] / 256; c++) {
      LhiNarrow *band = &bands[(v + c) % (uint64_t)n_bands];
      band->carries[band->n_carries++] = (uint16_t)v;
    }
  for (int k = 0; k < n_bands; k++)
    for (int v = 0; v < 65536; v++)
      expected[v] += bands[k].counters[v];
  LhiBlockSums blocks;
  memset(&blocks, 0xa5, sizeof blocks);
  const int cuts[] = {0, 1, 37, 128, 255, LHI_BLOCKS};
  for (int i = 0; i + 1 < (int)(sizeof cuts / sizeof cuts[0]); i++)
    lhi_count16_add_narrow(bins, bands, n_bands, cuts[i], cuts[i + 1], &blocks);
  int bad_bins = 0, bad_blocks = 0;
  for (int v = 0; v < 65536; v++)
    bad_bins += bins[v] != expected[v];
  for (int b = 0; b < LHI_BLOCKS; b++) {
    uint64_t count = 0, sum = 0, squares = 0;
    for (uint64_t j = 0; j < LHI_BLOCK_BINS; j++) {
      const uint64_t h = expected[(size_t)b * LHI_BLOCK_BINS + j];
      count += h;
      sum += h * j;
      squares += h * j * j;
    }
    bad_blocks +=
        blocks.count[b] != count || blocks.sum[b] != sum || blocks.sum_squares[b] != squares;
  }
  CHECK(bad_bins == 0 && bad_blocks == 0,
        "add_narrow, %d bands, kind %d, simd %s: %d bins, %d blocks wrong", n_bands, kind,
        simd_name, bad_bins, bad_blocks);
  for (int k = 0; k < n_bands; k++) {
    free(bands[k].counters);
    free(bands[k].carries);
  }
  free(bins);
  free(expected);
}

static void test_add_narrow(int simd)
{
  for (int copies = 1; copies <= 3; copies++)
    for (int kind = 0; kind <= 4; kind++)
      check_add_narrow(copies, kind, simd_names[simd]);
}

/* The moments and percentile values from the blocks' sums against those
 * of the whole histogram (stats.c's two ways), every field the same bits,
 * on histograms of every kind, counts from 1 to near 2^32. */
static void test_moments_from_blocks(void)
{
  uint64_t *h = malloc(65536 * sizeof *h);
  if (!h)
    exit(1);
  static const uint64_t scales[] = {2, 300, 65536, (uint64_t)1 << 16};
  for (int round = 0; round < 40; round++) {
    const int kind = round % 5;
    fill_histogram(h, kind, scales[round / 5 % 4]);
    LhiBlockSums blocks;
    for (int b = 0; b < LHI_BLOCKS; b++) {
      blocks.count[b] = blocks.sum[b] = blocks.sum_squares[b] = 0;
      for (uint64_t j = 0; j < LHI_BLOCK_BINS; j++) {
        const uint64_t n = h[(size_t)b * LHI_BLOCK_BINS + j];
        blocks.count[b] += n;
        blocks.sum[b] += n * j;
        blocks.sum_squares[b] += n * j * j;
      }
    }
    for (int r = 0; r < 2; r++) {
      const LhRange range = r ? LH_RANGE_LIMITED : LH_RANGE_FULL;
      LhiMoments a, b;
      lhi_moments_from_histogram(h, 16, range, &a);
      lhi_moments_from_blocks(h, &blocks, range, &b);
      CHECK(a.count == b.count && a.sum == b.sum && a.sum_squares == b.sum_squares &&
                a.min == b.min && a.max == b.max && a.clipped_low == b.clipped_low &&
                a.clipped_high == b.clipped_high && a.below_legal == b.below_legal &&
                a.above_legal == b.above_legal,
            "moments from blocks, round %d (kind %d), range %d: count %llu/%llu sum %llu/%llu "
            "min %u/%u max %u/%u legal %llu,%llu/%llu,%llu",
            round, kind, r, (unsigned long long)a.count, (unsigned long long)b.count,
            (unsigned long long)a.sum, (unsigned long long)b.sum, a.min, b.min, a.max, b.max,
            (unsigned long long)a.below_legal, (unsigned long long)a.above_legal,
            (unsigned long long)b.below_legal, (unsigned long long)b.above_legal);
      /* every rank at a block's edges and some between, out of order, and 0 */
      uint64_t ranks[LHI_MAX_RANKS];
      int n_ranks = 0;
      ranks[n_ranks++] = 0;
      ranks[n_ranks++] = a.count;
      ranks[n_ranks++] = 1;
      while (n_ranks < LHI_MAX_RANKS && a.count)
        ranks[n_ranks++] = 1 + (uint64_t)next_random() * (a.count - 1) / UINT32_MAX;
      uint32_t va[LHI_MAX_RANKS], vb[LHI_MAX_RANKS];
      lhi_values_from_histogram(h, 16, ranks, n_ranks, va);
      lhi_values_from_blocks(h, &blocks, ranks, n_ranks, vb);
      int bad = 0;
      for (int k = 0; k < n_ranks; k++)
        bad += va[k] != vb[k];
      CHECK(bad == 0, "values from blocks, round %d (kind %d): %d of %d wrong", round, kind, bad,
            n_ranks);
    }
  }
  free(h);
}

/* The vector loop's argument, checked over every sum it can meet: the
 * float quotient s / 10^4 truncates to the integer one. */
static void test_float_quotient(void)
{
  const uint32_t top = 1023 * LHI_LUMA_EXACT_ONE + LHI_LUMA_EXACT_ONE / 2;
  uint32_t wrong = 0, first = 0;
  for (uint32_t sum = 0; sum <= top; sum++) {
    volatile float q = (float)sum / (float)LHI_LUMA_EXACT_ONE;
    if ((uint32_t)q != sum / LHI_LUMA_EXACT_ONE && wrong++ == 0)
      first = sum;
  }
  CHECK(wrong == 0, "float quotient of %u sums wrong, first %u", wrong, first);
}

int main(void)
{
  test_byte_weights();
  test_float_quotient();
  for (int simd = LHI_SIMD_NONE; simd <= LHI_SIMD_BEST; simd++) {
    lhi_rows_set_simd((LhiSimd)simd);
    test_rgb_rows(simd);
    test_count_rows();
    test_packed10_rows(simd);
    test_rgb16_rows(simd);
    test_count16_rows(simd);
    test_count16_packed10_rows(simd);
    test_count16_rgb16_rows(simd);
    test_add_narrow(simd);
  }
  test_moments_from_blocks();
  lhi_rows_set_simd(LHI_SIMD_BEST);
  printf("luma-rows-test: %d checks, %d failures (x86 AVX2: %s, SSE4.1: %s)\n", checks, failures,
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
         __builtin_cpu_supports("avx2") ? "yes" : "no",
         __builtin_cpu_supports("sse4.1") ? "yes" : "no"
#else
         "no", "no"
#endif
  );
  return failures != 0;
}
