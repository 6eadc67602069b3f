/* luma-test.c: the arithmetic of lh-luma.h, the one definition both backends
 * compile.  Luma of more than 8 bits must be floor(Kr R + Kg G + Kb B + 1/2)
 * exactly (the matrix's decimal coefficients, no rounding error), checked
 * densely over the 16-bit cube against an exact integer reference and
 * against the float64 formula (which may only differ at exact ties, where its
 * own rounding error decides); 8-bit luma keeps OpenCV's 15-bit weights. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "lh-private.h"
#include "test-check.h"

/* (Kr, Kb) as DESIGN.md gives them. */
static const double matrix_kr[] = {0.299, 0.2126, 0.2627};
static const double matrix_kb[] = {0.114, 0.0722, 0.0593};
static const char *const matrix_names[] = {"BT.601", "BT.709", "BT.2020"};

typedef struct {
  uint64_t checked;
  uint64_t ties;         /* exact value k + 1/2 */
  uint64_t float64_off;  /* float64's floor(Y + 0.5) differs from the exact value */
  uint64_t fourteen_off; /* the 8-bit rule's weights differ from the exact value */
} Counts;

static uint64_t rng_state = 0x9e3779b97f4a7c15u;

static uint32_t next16(void)
{
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return (uint32_t)(rng_state >> 48);
}

/* One pixel: the library's luma against the exact reference (integers in
 * units of 10^-6, far finer than the coefficients need) and float64. */
static void check_pixel(LhMatrix m, LhiLumaWeights w, LhiLumaWeights w14, uint32_t r, uint32_t g,
                        uint32_t b, Counts *c)
{
  /* Exact: 10^6 Y as an integer, the weights taken from the doubles. */
  const int64_t kr = llround(matrix_kr[m] * 1e6), kb = llround(matrix_kb[m] * 1e6);
  const int64_t kg = 1000000 - kr - kb;
  const int64_t y6 = kr * r + kg * g + kb * b;
  const uint32_t exact = (uint32_t)((y6 + 500000) / 1000000);
  const uint32_t ours = lhi_luma_wide(r, g, b, w);
  c->checked++;
  if (ours != exact) {
    CHECK(0, "%s: luma(%u, %u, %u) = %u, exact floor(Y + 1/2) = %u", matrix_names[m], r, g, b, ours,
          exact);
    return;
  }
  const double kg_f = 1.0 - matrix_kr[m] - matrix_kb[m];
  const uint32_t f64 = (uint32_t)floor(matrix_kr[m] * r + kg_f * g + matrix_kb[m] * b + 0.5);
  const bool tie = y6 % 1000000 == 500000;
  c->ties += tie;
  if (f64 != exact) {
    c->float64_off++;
    CHECK(tie, "%s: float64 gives %u for (%u, %u, %u), exact %u, and it is not a tie",
          matrix_names[m], f64, r, g, b, exact);
  }
  c->fourteen_off += lhi_luma_wide(r, g, b, w14) != exact;
}

static void test_matrix(LhMatrix m)
{
  const LhiLumaWeights w = lhi_luma_weights(m, 16), w14 = lhi_luma_weights(m, 8);
  CHECK(w.one == 10000 && w.kr + w.kg + w.kb == 10000, "%s: exact weights sum to %u",
        matrix_names[m], w.kr + w.kg + w.kb);
  CHECK(w.kr == (uint32_t)llround(matrix_kr[m] * 1e4) &&
            w.kb == (uint32_t)llround(matrix_kb[m] * 1e4),
        "%s: exact weights %u, %u, %u", matrix_names[m], w.kr, w.kg, w.kb);
  /* Every depth above 8 takes the exact rule; 8 bits the 15-bit one:
   * Kr and Kg rounded, Kb the rest, as OpenCV's cvtColor (BT.601). */
  for (int depth = 9; depth <= 16; depth++)
    CHECK(lhi_luma_weights(m, depth).one == 10000, "%s depth %d: not exact", matrix_names[m],
          depth);
  const double kg = 1.0 - matrix_kr[m] - matrix_kb[m];
  CHECK(w14.one == 32768 && w14.kr == (uint32_t)llround(matrix_kr[m] * 32768) &&
            w14.kg == (uint32_t)llround(kg * 32768) && w14.kr + w14.kg + w14.kb == 32768,
        "%s: 8-bit weights %u, %u, %u", matrix_names[m], w14.kr, w14.kg, w14.kb);
  if (m == LH_MATRIX_BT601)
    CHECK(w14.kr == 9798 && w14.kg == 19235 && w14.kb == 3735,
          "bt601: 8-bit weights %u, %u, %u, not OpenCV's 9798, 19235, 3735", w14.kr, w14.kg,
          w14.kb);

  Counts c = {0};
  /* Every gray level is itself, and the corners of the cube. */
  for (uint32_t v = 0; v <= 65535; v++)
    CHECK(lhi_luma_wide(v, v, v, w) == v, "%s: gray %u has luma %u", matrix_names[m], v,
          lhi_luma_wide(v, v, v, w));
  for (int corner = 0; corner < 8; corner++)
    check_pixel(m, w, w14, corner & 1 ? 65535 : 0, corner & 2 ? 65535 : 0, corner & 4 ? 65535 : 0,
                &c);
  /* Densely: every R, G every 61 codes (and 65535), B random; then random
   * triples near the top, where the sums are largest. */
  for (uint32_t r = 0; r <= 65535; r++)
    for (uint32_t g = 0; g <= 65535; g = g == 65535 ? 65536 : (g + 61 > 65535 ? 65535 : g + 61))
      check_pixel(m, w, w14, r, g, next16(), &c);
  for (int i = 0; i < 4000000; i++)
    check_pixel(m, w, w14, 65535 - next16() % 256, 65535 - next16() % 256, 65535 - next16() % 256,
                &c);
  printf("%s: %llu pixels exact; %llu exact ties (float64 off on %llu of them, all ties); "
         "the 8-bit rule's weights off on %.2f %%\n",
         matrix_names[m], (unsigned long long)c.checked, (unsigned long long)c.ties,
         (unsigned long long)c.float64_off, 100.0 * (double)c.fourteen_off / (double)c.checked);
}

/* A sum of 16-bit samples and exact weights, and the rounding term, fit 32 bits. */
static void test_no_overflow(void)
{
  CHECK(10000ull * 65535 + 5000 < (1ull << 32), "exact sums overflow 32 bits");
  CHECK(32768ull * 65535 + 16384 < (1ull << 32), "15-bit sums overflow 32 bits");
}

int main(void)
{
  test_no_overflow();
  for (int m = LH_MATRIX_BT601; m <= LH_MATRIX_BT2020; m++)
    test_matrix((LhMatrix)m);
  printf("%d checks, %d failures\n", checks, failures);
  return failures != 0;
}
