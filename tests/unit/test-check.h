/* test-check.h: CHECK(cond, format, ...) for the C tests: a failed check is
 * counted and printed with its place, the condition, the case's parameters and
 * the library's last message; main() returns failures != 0. */
#ifndef LH_TEST_CHECK_H
#define LH_TEST_CHECK_H

#include <stdio.h>

#include "lumahist.h"

static int failures;
static int checks;

#define CHECK(cond, ...)                                                                           \
  do {                                                                                             \
    checks++;                                                                                      \
    if (!(cond)) {                                                                                 \
      failures++;                                                                                  \
      fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);                              \
      fprintf(stderr, __VA_ARGS__);                                                                \
      fprintf(stderr, " (last error: \"%s\")\n", lh_last_error());                                 \
    }                                                                                              \
  } while (0)

#endif
