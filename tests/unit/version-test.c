/* version-test.c: the version numbers of lumahist-version.h are the
 * library's (lh_version()) and, when given, meson.build's; LH_CHECK_VERSION
 * is true for that version and older ones and false for newer ones, in #if
 * as applications use it and in expressions.  Built by meson against the
 * build's headers, and by pkg-config-link-test.sh against the installed ones. */
#include <lumahist.h>
#include <stdio.h>
#include <string.h>

#include "test-check.h"

#if !LH_CHECK_VERSION(LH_VERSION_MAJOR, LH_VERSION_MINOR, LH_VERSION_MICRO)
#error "LH_CHECK_VERSION is false for the headers' own version"
#endif
#if LH_CHECK_VERSION(LH_VERSION_MAJOR, LH_VERSION_MINOR, LH_VERSION_MICRO + 1)
#error "LH_CHECK_VERSION is true for a later version"
#endif

int main(int argc, char **argv)
{
  char headers[64];
  snprintf(headers, sizeof headers, "%d.%d.%d", LH_VERSION_MAJOR, LH_VERSION_MINOR,
           LH_VERSION_MICRO);
  CHECK(strcmp(headers, lh_version()) == 0, "headers %s, library %s", headers, lh_version());
  if (argc > 1)
    CHECK(strcmp(headers, argv[1]) == 0, "headers %s, meson.build %s", headers, argv[1]);

  /* This version and older ones, an older part beating any later part after it. */
  CHECK(LH_CHECK_VERSION(LH_VERSION_MAJOR, LH_VERSION_MINOR, LH_VERSION_MICRO), "%s", headers);
  CHECK(LH_CHECK_VERSION(0, 0, 0), "%s", headers);
  if (LH_VERSION_MICRO > 0)
    CHECK(LH_CHECK_VERSION(LH_VERSION_MAJOR, LH_VERSION_MINOR, LH_VERSION_MICRO - 1), "%s",
          headers);
  if (LH_VERSION_MINOR > 0)
    CHECK(LH_CHECK_VERSION(LH_VERSION_MAJOR, LH_VERSION_MINOR - 1, 999), "%s", headers);
  if (LH_VERSION_MAJOR > 0)
    CHECK(LH_CHECK_VERSION(LH_VERSION_MAJOR - 1, 999, 999), "%s", headers);
  /* Newer ones, a newer part beating any earlier part after it. */
  CHECK(!LH_CHECK_VERSION(LH_VERSION_MAJOR, LH_VERSION_MINOR, LH_VERSION_MICRO + 1), "%s", headers);
  CHECK(!LH_CHECK_VERSION(LH_VERSION_MAJOR, LH_VERSION_MINOR + 1, 0), "%s", headers);
  CHECK(!LH_CHECK_VERSION(LH_VERSION_MAJOR + 1, 0, 0), "%s", headers);

  printf("lumahist headers %s, library %s: %d checks, %d failed\n", headers, lh_version(), checks,
         failures);
  return failures != 0;
}
