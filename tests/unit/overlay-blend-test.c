/* overlay-blend-test.c: the arithmetic of lh-overlay.h's blends, the one
 * definition both backends compile.  lhi_blend_over (the panel composited
 * over a pixel of straight alpha) must give lhi_blend's bits on an opaque
 * pixel, every 8-bit case and sampled 10, 12 and 16-bit ones (packed
 * 10-bit's 2-bit alpha too); elsewhere each colour and the alpha must be the
 * exact "over" rounded half up, checked against the rational value, and
 * the ends (transparent pixel, transparent or full ink) exact. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "lh-overlay.h"
#include "test-check.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15u;
static uint64_t cases;

static uint32_t next_below(uint32_t n)
{
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return (uint32_t)((rng_state >> 16) % n);
}

static LhiInk ink_of(uint32_t r, uint32_t g, uint32_t b, uint32_t alpha)
{
  LhiInk ink = {{(uint16_t)r, (uint16_t)g, (uint16_t)b}, 0, 0, 0, (uint16_t)alpha};
  return ink;
}

/* One opaque pixel (alpha alpha_top): lhi_blend's colours, the alpha kept.
 * Returns whether it held, reporting the first case that did not. */
static bool opaque_is_lhi_blend(const uint32_t rgb_in[3], uint32_t alpha_top, const LhiInk *ink,
                                const char *what)
{
  uint32_t rgb[3] = {rgb_in[0], rgb_in[1], rgb_in[2]}, pixel_alpha = alpha_top;
  cases++;
  lhi_blend_over(rgb, &pixel_alpha, alpha_top, ink);
  bool same = pixel_alpha == alpha_top;
  for (int c = 0; c < 3; c++)
    same = same && rgb[c] == lhi_blend(rgb_in[c], ink->rgb[c], ink->alpha);
  if (!same)
    CHECK(0,
          "%s: opaque (%u, %u, %u) alpha %u under ink (%u, %u, %u) at %u gave (%u, %u, %u) "
          "alpha %u, lhi_blend (%u, %u, %u)",
          what, rgb_in[0], rgb_in[1], rgb_in[2], alpha_top, ink->rgb[0], ink->rgb[1], ink->rgb[2],
          ink->alpha, rgb[0], rgb[1], rgb[2], pixel_alpha,
          lhi_blend(rgb_in[0], ink->rgb[0], ink->alpha),
          lhi_blend(rgb_in[1], ink->rgb[1], ink->alpha),
          lhi_blend(rgb_in[2], ink->rgb[2], ink->alpha));
  return same;
}

static void test_opaque_8bit_every_case(void)
{
  for (uint32_t alpha = 0; alpha <= 256; alpha++)
    for (uint32_t k = 0; k < 256; k++)
      for (uint32_t s = 0; s < 256; s++) {
        const uint32_t rgb[3] = {s, 255 - s, s ^ 0x5a};
        const LhiInk ink = ink_of(k, k ^ 0xa5, 255 - k, alpha);
        if (!opaque_is_lhi_blend(rgb, 255, &ink, "8-bit"))
          return;
      }
}

/* Deeper samples, alpha of the colours' depth; packed 10-bit's alpha of 2
 * bits under 10-bit colours. */
static void test_opaque_sampled(void)
{
  static const struct {
    uint32_t colour_top, alpha_top;
    const char *what;
  } depths[] = {{1023, 1023, "10-bit"},
                {4095, 4095, "12-bit"},
                {65535, 65535, "16-bit"},
                {1023, 3, "packed 10-bit"}};
  static const uint32_t alphas[] = {0, 1, 127, 128, 129, 255, 256};
  for (size_t d = 0; d < sizeof depths / sizeof *depths; d++) {
    const uint32_t top = depths[d].colour_top, n = top + 1;
    bool ok = true;
    for (int i = 0; i < 2000000 && ok; i++) {
      const uint32_t rgb[3] = {next_below(n), next_below(n), next_below(n)};
      const uint32_t alpha = i < 1000 ? alphas[i % 7] : next_below(257);
      const LhiInk ink = ink_of(next_below(n), next_below(n), next_below(n), alpha);
      ok = opaque_is_lhi_blend(rgb, depths[d].alpha_top, &ink, depths[d].what);
    }
    for (size_t a = 0; a < sizeof alphas / sizeof *alphas && ok; a++) {
      const uint32_t ends[3] = {0, top, top};
      const LhiInk ink = ink_of(top, 0, top, alphas[a]);
      ok = opaque_is_lhi_blend(ends, depths[d].alpha_top, &ink, depths[d].what);
    }
  }
}

/* v, the rounding half up of num / den: |v - num / den| <= 1/2, a tie
 * rounded up. */
static bool rounds_half_up(uint64_t v, uint64_t num, uint64_t den)
{
  const int64_t twice_off = 2 * ((int64_t)(v * den) - (int64_t)num);
  return twice_off > -(int64_t)den && twice_off <= (int64_t)den;
}

/* Any pixel: the exact "over", rounded; the ends exact. */
static void test_over_any_alpha(void)
{
  /* 255, 1023 and packed 10-bit divide in 32 bits, 4095 and 65535 in 64 */
  static const uint32_t tops[][2] = {
      {255, 255}, {1023, 1023}, {4095, 4095}, {65535, 65535}, {1023, 3}};
  for (size_t d = 0; d < sizeof tops / sizeof *tops; d++) {
    const uint32_t top = tops[d][0], alpha_top = tops[d][1];
    int bad = 0;
    for (int i = 0; i < 3000000 && bad < 5; i++) {
      const uint32_t in[3] = {next_below(top + 1), next_below(top + 1), next_below(top + 1)};
      const uint32_t pick = next_below(8);
      const uint32_t a_in = pick == 0 ? 0 : pick == 1 ? alpha_top : next_below(alpha_top + 1);
      const uint32_t pick_ink = next_below(8);
      const uint32_t alpha = pick_ink == 0 ? 0 : pick_ink == 1 ? 256 : next_below(257);
      const LhiInk ink =
          ink_of(next_below(top + 1), next_below(top + 1), next_below(top + 1), alpha);
      uint32_t rgb[3] = {in[0], in[1], in[2]}, a = a_in;
      lhi_blend_over(rgb, &a, alpha_top, &ink);
      cases++;
      /* A + (alpha_top - A) alpha / 256 */
      bool ok = rounds_half_up(a, (uint64_t)a_in * 256 + (uint64_t)(alpha_top - a_in) * alpha, 256);
      const uint64_t under = (uint64_t)a_in * (256 - alpha), over = (uint64_t)alpha_top * alpha;
      for (int c = 0; c < 3; c++) {
        if (under + over == 0)
          ok = ok && rgb[c] == in[c]; /* nothing over nothing: kept */
        else
          ok = ok && rounds_half_up(rgb[c], in[c] * under + ink.rgb[c] * over, under + over);
        if (a_in == 0 && alpha > 0)
          ok = ok && rgb[c] == ink.rgb[c];
        if (alpha == 256)
          ok = ok && rgb[c] == ink.rgb[c];
      }
      if (alpha == 0)
        ok = ok && a == a_in;
      if (alpha == 256)
        ok = ok && a == alpha_top;
      if (!ok) {
        bad++;
        CHECK(0,
              "top %u, alpha top %u: (%u, %u, %u) alpha %u under ink (%u, %u, %u) at %u gave "
              "(%u, %u, %u) alpha %u",
              top, alpha_top, in[0], in[1], in[2], a_in, ink.rgb[0], ink.rgb[1], ink.rgb[2], alpha,
              rgb[0], rgb[1], rgb[2], a);
      }
    }
  }
}

int main(void)
{
  test_opaque_8bit_every_case();
  test_opaque_sampled();
  test_over_any_alpha();
  printf("%llu cases, %d failures\n", (unsigned long long)cases, failures);
  return failures != 0;
}
