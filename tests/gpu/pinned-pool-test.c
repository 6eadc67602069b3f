/* pinned-pool-test.c: the batch pipeline's page-locked arena
 * (src/pipeline/pinned-pool.c), through the pixel allocator the decoders
 * use: pieces cut best fit and joined again when freed (two freed
 * neighbours hold an image of both sizes; everything freed, the whole arena
 * is one piece again), a decoding thread waiting for a piece that another
 * thread frees, pageable memory after the wait or for an image larger than
 * the arena (at once for a pool that does not wait), and seeded random sizes, taken and freed in
 * random order, never overlapping.  Exits 77 when no CUDA device is usable (page-locking needs
 * one). */
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>

#include "io/lhio-private.h"
#include "lumahist.h"
#include "pipeline/lhp.h"

#define MIB ((size_t)1 << 20)
/* With no image seen, the pool sizes its arena for 8 MiB images. */
#define IMAGE_GUESS (8 * MIB)
#define IMAGES 4
#define ARENA (IMAGES * IMAGE_GUESS)

static int n_checks, n_failures;

static bool check(bool ok, const char *what, ...)
{
  n_checks++;
  if (!ok) {
    n_failures++;
    va_list args;
    va_start(args, what);
    fprintf(stderr, "FAIL: ");
    vfprintf(stderr, what, args);
    fprintf(stderr, "\n");
    va_end(args);
  }
  return ok;
}

static size_t past(LhpPinnedPool *pool, double *waited_s)
{
  size_t bytes;
  double waited;
  size_t images = lhp_pinned_pool_past(pool, &bytes, &waited);
  if (waited_s)
    *waited_s = waited;
  return images;
}

typedef struct {
  void *pixels;
  gulong delay_us;
} LateRelease;

static gpointer release_later(gpointer data)
{
  LateRelease *late = data;
  g_usleep(late->delay_us);
  lhio_pixels_release(late->pixels);
  return NULL;
}

/* Whether [a, a + n) and [b, b + m) overlap. */
static bool overlap(const uint8_t *a, size_t n, const uint8_t *b, size_t m)
{
  return a < b + m && b < a + n;
}

static void joined_pieces(LhpPinnedPool *pool)
{
  void *a = lhio_pixels_alloc(IMAGE_GUESS);
  void *b = lhio_pixels_alloc(IMAGE_GUESS);
  void *c = lhio_pixels_alloc(IMAGE_GUESS - 1);
  void *d = lhio_pixels_alloc(IMAGE_GUESS / 2 + 1);
  check(past(pool, NULL) == 0, "four images of at most 8 MiB: %zu past a 32 MiB arena",
        past(pool, NULL));
  /* Pieces are cut in order from the arena's start. */
  check((uint8_t *)b == (uint8_t *)a + IMAGE_GUESS && (uint8_t *)c == (uint8_t *)b + IMAGE_GUESS,
        "pieces not cut one after the other: %p %p %p", a, b, c);
  lhio_pixels_release(b);
  lhio_pixels_release(c);
  void *bc = lhio_pixels_alloc(2 * IMAGE_GUESS);
  check(bc == b && past(pool, NULL) == 0,
        "two freed neighbours do not hold an image of both sizes (%p, expected %p; %zu past)", bc,
        b, past(pool, NULL));
  /* What d (5 MiB, a step up from 4 MiB + 1) left of the arena holds 3 MiB. */
  void *e = lhio_pixels_alloc(3 * MIB);
  check(past(pool, NULL) == 0 && (uint8_t *)e == (uint8_t *)d + 5 * MIB,
        "the arena's last 3 MiB after a 5 MiB piece are not the next image's (%p, d %p)", e, d);
  lhio_pixels_release(a);
  lhio_pixels_release(bc);
  lhio_pixels_release(d);
  lhio_pixels_release(e);
  void *all = lhio_pixels_alloc(ARENA);
  check(all == a && past(pool, NULL) == 0,
        "every piece freed: the arena is not one piece again (%p, %zu past)", all,
        past(pool, NULL));
  lhio_pixels_release(all);
}

static void waits_for_room(LhpPinnedPool *pool)
{
  void *full = lhio_pixels_alloc(ARENA - IMAGE_GUESS);
  void *last = lhio_pixels_alloc(IMAGE_GUESS);
  size_t before = past(pool, NULL);
  double waited_before;
  past(pool, &waited_before);

  /* Freed 30 ms later by another thread: the wait ends with its piece. */
  LateRelease late = {.pixels = last, .delay_us = 30000};
  GThread *thread = g_thread_new("release", release_later, &late);
  void *got = lhio_pixels_alloc(IMAGE_GUESS);
  g_thread_join(thread);
  double waited;
  size_t after = past(pool, &waited);
  check(got == last && after == before,
        "a piece freed during the wait was not given (%p, expected %p; past %zu -> %zu)", got, last,
        before, after);
  check(waited - waited_before >= 0.02 && waited - waited_before < 0.09,
        "waited %.3f s for a piece freed after 0.03 s", waited - waited_before);

  /* Nothing freed: pageable memory after the wait (100 ms). */
  void *pageable = lhio_pixels_alloc(IMAGE_GUESS);
  double waited_more;
  after = past(pool, &waited_more);
  check(pageable != NULL && after == before + 1, "a full arena: %zu past, expected %zu", after,
        before + 1);
  check(waited_more - waited >= 0.09, "gave pageable memory after %.3f s, not after the wait",
        waited_more - waited);
  memset(pageable, 0x5a, IMAGE_GUESS); /* it is real memory */
  lhio_pixels_release(pageable);

  /* Larger than the arena: pageable at once. */
  lhio_pixels_release(got);
  lhio_pixels_release(full);
  void *huge = lhio_pixels_alloc(ARENA + 1);
  double waited_huge;
  after = past(pool, &waited_huge);
  check(huge != NULL && after == before + 2 && waited_huge - waited_more < 0.01,
        "an image larger than the arena: %zu past (expected %zu), waited %.3f s", after, before + 2,
        waited_huge - waited_more);
  lhio_pixels_release(huge);
}

/* Random sizes, taken and freed in random order; each live image holds its
 * own byte pattern, checked before it is freed; none overlaps another.  At
 * most 8 images of at most 3 MiB are live: 24 MiB of the 32 MiB arena, so
 * a miss (a wait of 100 ms, then pageable memory) comes only from pieces
 * left apart, which joining makes rare. */
static void random_sizes(LhpPinnedPool *pool, uint32_t seed)
{
  enum { SLOTS = 8, ROUNDS = 2000 };
  void *live[SLOTS] = {0};
  size_t size[SLOTS] = {0};
  GRand *rand = g_rand_new_with_seed(seed);
  size_t past_before = past(pool, NULL);
  for (int round = 0; round < ROUNDS; round++) {
    int slot = g_rand_int_range(rand, 0, SLOTS);
    if (live[slot]) {
      const uint8_t *bytes = live[slot];
      const uint8_t mark = (uint8_t)(slot * 37 + 11);
      if (!check(bytes[0] == mark && bytes[size[slot] / 2] == mark && bytes[size[slot] - 1] == mark,
                 "seed %u round %d: image %d (%zu bytes) overwritten", seed, round, slot,
                 size[slot]))
        break;
      lhio_pixels_release(live[slot]);
      live[slot] = NULL;
      continue;
    }
    /* Half under a step, half whole steps of 1 to 3 MiB. */
    size_t bytes = g_rand_boolean(rand) ? (size_t)g_rand_int_range(rand, 1, (gint32)MIB)
                                        : (size_t)g_rand_int_range(rand, 1, 4) * MIB;
    live[slot] = lhio_pixels_alloc(bytes);
    size[slot] = bytes;
    uint8_t *p = live[slot];
    p[0] = p[bytes / 2] = p[bytes - 1] = (uint8_t)(slot * 37 + 11);
    for (int other = 0; other < SLOTS; other++)
      if (other != slot && live[other] &&
          !check(!overlap(live[slot], bytes, live[other], size[other]),
                 "seed %u round %d: images %d and %d overlap", seed, round, slot, other))
        round = ROUNDS;
  }
  for (int slot = 0; slot < SLOTS; slot++)
    lhio_pixels_release(live[slot]);
  g_rand_free(rand);
  size_t misses = past(pool, NULL) - past_before;
  printf("seed %u: %d rounds, %zu images past the arena\n", seed, ROUNDS, misses);
  check(misses <= ROUNDS / 100, "seed %u: %zu of about %d images past the arena", seed, misses,
        ROUNDS / 2);
  void *all = lhio_pixels_alloc(ARENA);
  check(past(pool, NULL) == past_before + misses,
        "seed %u: every image freed, the arena is not one piece again", seed);
  lhio_pixels_release(all);
}

int main(void)
{
  LhContext *context = NULL;
  if (lh_context_new(LH_BACKEND_CUDA, &context) < 0) {
    printf("SKIP: no usable CUDA device (%s)\n", lh_last_error());
    return 77;
  }
  LhpPinnedPool *pool = lhp_pinned_pool_new();
  lhp_pinned_pool_use(pool);
  lhp_pinned_pool_enable(pool, context, 0, IMAGES, true);
  if (!check(lhp_pinned_pool_bytes(pool) == ARENA, "arena of %zu bytes, expected %zu",
             lhp_pinned_pool_bytes(pool), ARENA)) {
    lhp_pinned_pool_free(pool);
    lh_context_free(context);
    return 1;
  }
  joined_pieces(pool);
  waits_for_room(pool);
  for (uint32_t seed = 1; seed <= 4; seed++)
    random_sizes(pool, seed);
  lhp_pinned_pool_use(NULL);
  lhp_pinned_pool_free(pool);

  /* A pool that does not wait (a run with a finish step): a full arena
   * gives pageable memory at once. */
  LhpPinnedPool *no_wait = lhp_pinned_pool_new();
  lhp_pinned_pool_use(no_wait);
  lhp_pinned_pool_enable(no_wait, context, 0, IMAGES, false);
  void *full = lhio_pixels_alloc(ARENA);
  void *more = lhio_pixels_alloc(IMAGE_GUESS);
  double waited;
  size_t past_now = past(no_wait, &waited);
  check(full != NULL && more != NULL && past_now == 1 && waited < 0.01,
        "without waiting: %zu past, waited %.3f s", past_now, waited);
  lhio_pixels_release(more);
  lhio_pixels_release(full);
  lhp_pinned_pool_use(NULL);
  lhp_pinned_pool_free(no_wait);
  lh_context_free(context);
  printf("%d checks, %d failures\n", n_checks, n_failures);
  return n_failures ? 1 : 0;
}
