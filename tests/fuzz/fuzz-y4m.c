/* fuzz-y4m.c: libFuzzer target for what a YUV4MPEG2 file's header and frame
 * headers tell before y4mdec reads it (lhio_y4m_unreadable) and after
 * (lhio_y4m_end, given how many frames were decoded).  Any bytes, written
 * to a file, give one of their answers, never a read outside the file or a
 * walk that does not end; a reason exactly when the answer is not 0; the
 * same answer whatever room the reason gets (a buffer of one byte is not
 * overrun); a cut whatever the frames decoded, and "more frames than
 * decoded" exactly below the count of whole frames it states; and the file
 * as it was. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz-common.h"
#include "fuzz-file.h"
#include "lhio-private.h"

/* A reason in why (filled with 'x' before) exactly when given is true: a
 * string within the buffer; none is an empty one or the buffer untouched. */
static void check_reason(bool given, const char *why, size_t why_size)
{
  if (given)
    FUZZ_ASSERT(memchr(why, '\0', why_size) != NULL && why[0] != '\0' && why[0] != 'x');
  else
    FUZZ_ASSERT(why[0] == '\0' || why[0] == 'x');
}

/* The answer, checked against its reason and the smaller rooms. */
static int check_unreadable(const char *path)
{
  char why[192], small[1];
  memset(why, 'x', sizeof why);
  const int status = lhio_y4m_unreadable(path, why, sizeof why);
  FUZZ_ASSERT(status == 0 || status == LH_ERROR_UNSUPPORTED || status == LH_ERROR_CORRUPT);
  check_reason(status != 0, why, sizeof why);
  small[0] = 'x';
  FUZZ_ASSERT(lhio_y4m_unreadable(path, small, 1) == status);
  FUZZ_ASSERT(status ? small[0] == '\0' : small[0] == '\0' || small[0] == 'x');
  FUZZ_ASSERT(lhio_y4m_unreadable(path, NULL, 0) == status);
  return status;
}

/* The answer for frames_decoded; *whole: the whole frames its reason
 * states when it is LH_ERROR_UNSUPPORTED. */
static int check_end(const char *path, uint64_t frames_decoded, uint64_t *whole)
{
  char why[192], small[1];
  memset(why, 'x', sizeof why);
  const int status = lhio_y4m_end(path, frames_decoded, why, sizeof why);
  FUZZ_ASSERT(status == 0 || status == LH_ERROR_UNSUPPORTED || status == LH_ERROR_CORRUPT);
  check_reason(status != 0, why, sizeof why);
  if (status == LH_ERROR_UNSUPPORTED) {
    unsigned long long decoded, stated;
    FUZZ_ASSERT(sscanf(why, "GStreamer's y4mdec decoded %llu of the file's %llu frames", &decoded,
                       &stated) == 2);
    FUZZ_ASSERT(decoded == frames_decoded && stated > decoded);
    *whole = stated;
  }
  small[0] = 'x';
  FUZZ_ASSERT(lhio_y4m_end(path, frames_decoded, small, 1) == status);
  FUZZ_ASSERT(status ? small[0] == '\0' : small[0] == '\0' || small[0] == 'x');
  FUZZ_ASSERT(lhio_y4m_end(path, frames_decoded, NULL, 0) == status);
  return status;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  const char *path = fuzz_input_file("input.y4m", data, size);
  const int unreadable = check_unreadable(path);

  uint64_t whole = 0;
  const int first = check_end(path, 0, &whole);
  /* Cut inside the first frame before: cut after, however many came. */
  FUZZ_ASSERT(unreadable != LH_ERROR_CORRUPT || first == LH_ERROR_CORRUPT);
  if (first == LH_ERROR_CORRUPT) {
    const uint64_t counts[] = {1, 2, 1000, UINT64_MAX};
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++)
      FUZZ_ASSERT(check_end(path, counts[i], &whole) == LH_ERROR_CORRUPT);
  } else if (first == LH_ERROR_UNSUPPORTED) {
    /* Whole frames not all decoded: exactly below their count. */
    uint64_t stated = whole;
    FUZZ_ASSERT(check_end(path, stated - 1, &whole) == LH_ERROR_UNSUPPORTED && whole == stated);
    FUZZ_ASSERT(check_end(path, stated, &whole) == 0);
    FUZZ_ASSERT(check_end(path, UINT64_MAX, &whole) == 0);
  } else {
    FUZZ_ASSERT(check_end(path, 1, &whole) == 0);
  }

  fuzz_check_unchanged(path, data, size);
  return 0;
}
