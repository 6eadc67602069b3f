/* test-mpeg-times.c: lhio_mpeg_times_fill() on MPEG-2 streams written here
 * picture by picture, in coded order, as a program stream's packets give
 * them (a presentation time on some pictures only): every picture left
 * without one gets its display time, across groups of pictures, open and
 * closed, whichever pictures keep theirs; pictures with a time keep it; a
 * stream that repeats fields, one with no group headers and bytes that are
 * no picture are left alone; and cut or random bytes in buffers of exactly
 * their size are read within them. */
#include "io-test.h"

#include "lhio-private.h"

#define FRAME 40000000ull /* ns: 25 frames a second */
#define BASE 540000000ull /* ns: the first picture's display time */

typedef struct {
  uint8_t bytes[64];
  size_t size;
  uint64_t display; /* the picture's true display time */
} Picture;

static void put(Picture *p, const uint8_t *bytes, size_t n)
{
  memcpy(p->bytes + p->size, bytes, n);
  p->size += n;
}

/* One coded picture: a group header first when it opens a group, its
 * picture header (temporal reference place), a picture coding extension
 * (repeat_first_field as asked) and slice bytes that hold no start code. */
static Picture make_picture(bool group, int place, bool repeat_first_field, uint64_t display)
{
  Picture p = {.size = 0, .display = display};
  if (group)
    put(&p, (const uint8_t[]){0, 0, 1, 0xb8, 0x08, 0x00, 0x08, 0x00}, 8);
  put(&p,
      (const uint8_t[]){0, 0, 1, 0x00, (uint8_t)(place >> 2), (uint8_t)((place & 3) << 6 | 0x08),
                        0xff, 0xf8},
      8);
  put(&p,
      (const uint8_t[]){0, 0, 1, 0xb5, 0x8f, 0xff, 0xf3, repeat_first_field ? 0x82 : 0x80, 0x80},
      9);
  put(&p, (const uint8_t[]){0, 0, 1, 0x01, 0xff, 0xff, 0xff, 0xff}, 8);
  return p;
}

/* Coded order of a group of 12 pictures (temporal references): closed,
 * I(0) P(3) B(1) B(2) ...; open, I(2) B(0) B(1) P(5) ..., its first
 * B-pictures shown before the I-picture. */
static const int closed_group[12] = {0, 3, 1, 2, 6, 4, 5, 9, 7, 8, 11, 10};
static const int open_group[12] = {2, 0, 1, 5, 3, 4, 8, 6, 7, 11, 9, 10};

/* groups groups in coded order, their true display times from BASE; the
 * picture at repeat_at (coded index, -1 none) repeats its first field.
 * Returns the count. */
static int make_stream(Picture *out, int groups, bool open, int repeat_at)
{
  const int *order = open ? open_group : closed_group;
  int n = 0;
  for (int g = 0; g < groups; g++)
    for (int k = 0; k < 12; k++, n++)
      out[n] = make_picture(k == 0, order[k], n == repeat_at,
                            BASE + (uint64_t)(g * 12 + order[k]) * FRAME);
  return n;
}

/* Runs the stream with a time on the pictures keep says, the rest none;
 * counts the pictures given a time and those given a wrong one. */
static void run(const Picture *pictures, int n, bool (*keep)(int), int *filled, int *wrong,
                int *kept_changed)
{
  LhioMpegTimes times;
  lhio_mpeg_times_init(&times);
  *filled = *wrong = *kept_changed = 0;
  for (int i = 0; i < n; i++) {
    uint8_t *exact = malloc(pictures[i].size);
    memcpy(exact, pictures[i].bytes, pictures[i].size);
    uint64_t pts = keep(i) ? pictures[i].display : LHIO_NO_TIME;
    const bool gave = lhio_mpeg_times_fill(&times, exact, pictures[i].size, &pts, FRAME);
    free(exact);
    if (keep(i)) {
      *kept_changed += gave || pts != pictures[i].display;
    } else if (gave) {
      (*filled)++;
      *wrong += pts != pictures[i].display;
    } else {
      *wrong += pts != LHIO_NO_TIME;
    }
  }
}

static bool first_only(int i)
{
  return i == 0;
}
static bool every_fifth(int i)
{
  return i % 5 == 3;
}
static bool none(int i)
{
  (void)i;
  return false;
}

static void check_streams(void)
{
  static Picture pictures[400];
  for (int open = 0; open <= 1; open++) {
    const char *kind = open ? "open" : "closed";
    const int n = make_stream(pictures, 8, open, -1);
    int filled, wrong, kept;
    run(pictures, n, first_only, &filled, &wrong, &kept);
    CHECK(filled == n - 1 && wrong == 0 && kept == 0,
          "%s groups, a time on the first picture only: %d of %d given one, %d wrong, %d timed "
          "changed",
          kind, filled, n - 1, wrong, kept);
    /* The pictures before the first timed one have no origin yet. */
    int want = 0;
    for (int i = 3; i < n; i++)
      want += !every_fifth(i);
    run(pictures, n, every_fifth, &filled, &wrong, &kept);
    CHECK(filled == want && wrong == 0 && kept == 0,
          "%s groups, every fifth picture timed: %d of %d given one, %d wrong, %d changed", kind,
          filled, want, wrong, kept);
    run(pictures, n, none, &filled, &wrong, &kept);
    CHECK(filled == 0 && wrong == 0, "%s groups, no times at all: %d given", kind, filled);
  }
  /* 3:2 pulldown: from the first picture that repeats a field, nothing. */
  const int n = make_stream(pictures, 4, false, 7);
  int filled, wrong, kept;
  run(pictures, n, first_only, &filled, &wrong, &kept);
  CHECK(filled == 6 && wrong == 0 && kept == 0,
        "a repeated field at picture 7: %d given (the 6 before it), %d wrong", filled, wrong);
  /* No group headers: temporal references count from nothing known. */
  Picture bare[12];
  for (int i = 0; i < 12; i++)
    bare[i] = make_picture(false, i, false, BASE + (uint64_t)i * FRAME);
  run(bare, 12, first_only, &filled, &wrong, &kept);
  CHECK(filled == 0 && wrong == 0, "no group header: %d given", filled);
}

/* A jump in the times (a new recording spliced on): a timed picture of the
 * new group sets the origin again for those after it. */
static void check_discontinuity(void)
{
  static Picture pictures[96];
  const int n = make_stream(pictures, 4, false, -1);
  for (int i = 24; i < n; i++)
    pictures[i].display += 10 * 1000000000ull;
  LhioMpegTimes times;
  lhio_mpeg_times_init(&times);
  int wrong_after = 0;
  for (int i = 0; i < n; i++) {
    uint64_t pts = i == 0 || i == 25 ? pictures[i].display : LHIO_NO_TIME;
    lhio_mpeg_times_fill(&times, pictures[i].bytes, pictures[i].size, &pts, FRAME);
    if (i > 25)
      wrong_after += pts != pictures[i].display;
  }
  CHECK(wrong_after == 0, "after the jump: %d pictures given a time off it", wrong_after);
}

/* Cut headers and random bytes, each in a buffer of exactly its size: no
 * read past it (the sanitized run), and a time given only where none was. */
static void check_any_bytes(void)
{
  Picture p = make_picture(true, 5, false, BASE);
  LhioMpegTimes times;
  for (size_t cut = 0; cut <= p.size; cut++) {
    lhio_mpeg_times_init(&times);
    uint8_t *exact = malloc(cut ? cut : 1);
    memcpy(exact, p.bytes, cut);
    uint64_t pts = BASE;
    lhio_mpeg_times_fill(&times, exact, cut, &pts, FRAME);
    pts = LHIO_NO_TIME;
    lhio_mpeg_times_fill(&times, exact, cut, &pts, FRAME);
    free(exact);
  }
  uint64_t seed = 77;
  lhio_mpeg_times_init(&times);
  for (int i = 0; i < 20000; i++) {
    size_t size = (size_t)(test_rand(&seed) % 40);
    uint8_t *exact = malloc(size ? size : 1);
    for (size_t k = 0; k < size; k++) {
      uint32_t r = test_rand(&seed);
      exact[k] = r % 3 == 0 ? 0 : r % 3 == 1 ? 1 : (uint8_t)(r >> 8);
    }
    const bool timed = test_rand(&seed) % 4 == 0;
    uint64_t pts = timed ? (uint64_t)test_rand(&seed) * 1000 : LHIO_NO_TIME;
    const bool gave = lhio_mpeg_times_fill(&times, exact, size, &pts,
                                           test_rand(&seed) % 8 ? FRAME : LHIO_NO_TIME);
    CHECK(!gave || !timed, "random bytes %d: a time given where one was", i);
    CHECK(gave || !timed || pts != LHIO_NO_TIME, "random bytes %d: a time taken away", i);
    free(exact);
  }
}

int main(void)
{
  check_streams();
  check_discontinuity();
  check_any_bytes();
  return test_failures ? 1 : 0;
}
