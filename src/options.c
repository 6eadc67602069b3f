/* options.c: analysis options and the names of matrices, ranges and backends. */
#include <locale.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "lh-private.h"

LH_API void lh_options_init(LhOptions *options)
{
  if (!options)
    return;
  memset(options, 0, sizeof *options);
  options->matrix = LH_MATRIX_BT601;
  options->range = LH_RANGE_FULL;
  options->percentile_method = LH_PERCENTILE_AUTO;
}

static int parse_percentiles(const char *list, double *values, int *count)
{
  int n = 0;
  const char *cursor = list;
  while (*cursor) {
    if (n == LH_MAX_PERCENTILES)
      return lhi_error(LH_ERROR_INVALID_ARGUMENT, "more than %d percentiles in \"%s\"",
                       LH_MAX_PERCENTILES, list);
    char *end;
    /* strtod's ERANGE is not looked at: it says overflow, which gives
     * HUGE_VAL (refused as not finite), or underflow, which gives the
     * nearest subnormal or 0, a number in [0, 100] all the same ("5e-324"
     * was refused). */
    double p = strtod(cursor, &end);
    /* Spaces around an item are the writer's ("5, 95" and "5 ,95" alike);
     * strtod's hexadecimal ("0x10") is no percentile anyone means. */
    bool number = end != cursor;
    bool hexadecimal = memchr(cursor, 'x', (size_t)(end - cursor)) != NULL ||
                       memchr(cursor, 'X', (size_t)(end - cursor)) != NULL;
    while (*end == ' ' || *end == '\t')
      end++;
    if (!number || hexadecimal || !isfinite(p) || p < 0.0 || p > 100.0 ||
        (*end != ',' && *end != '\0'))
      return lhi_error(LH_ERROR_INVALID_ARGUMENT,
                       "percentile list \"%s\": each item must be a number in [0, 100]", list);
    values[n++] = p + 0.0; /* -0 is 0 (and its key "0", not "-0") */
    cursor = *end == ',' ? end + 1 : end;
    if (*end == ',' && *cursor == '\0')
      return lhi_error(LH_ERROR_INVALID_ARGUMENT, "percentile list \"%s\" ends with a comma", list);
  }
  *count = n;
  return LH_OK;
}

LH_API int lh_options_set_percentiles(LhOptions *options, const char *list)
{
  if (!options || !list)
    return lhi_error(LH_ERROR_INVALID_ARGUMENT, "options or percentile list is NULL");
  /* Numbers are read in the C locale on this thread, whatever the program's
   * LC_NUMERIC: where the decimal mark is a comma, strtod would read
   * "1,50,99" as 1.5 and 99. */
  locale_t c_numeric = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
  if (!c_numeric)
    return lhi_error(LH_ERROR_NO_MEMORY, "out of memory for the C locale");
  locale_t previous = uselocale(c_numeric);
  double values[LH_MAX_PERCENTILES];
  int n = 0;
  int status = parse_percentiles(list, values, &n);
  uselocale(previous);
  freelocale(c_numeric);
  if (status < 0)
    return status;
  memcpy(options->percentiles, values, (size_t)n * sizeof values[0]);
  options->n_percentiles = n;
  return LH_OK;
}

static const char *const matrix_names[] = {"bt601", "bt709", "bt2020"};
static const char *const range_names[] = {"full", "limited"};
static const char *const backend_names[] = {"auto", "cpu", "cuda"};

#define N_ELEMENTS(a) (sizeof(a) / sizeof((a)[0]))

static int find_name(const char *const *names, size_t n, const char *name)
{
  if (!name)
    return -1;
  for (size_t i = 0; i < n; i++)
    if (lhi_names_equal(names[i], name))
      return (int)i;
  return -1;
}

LH_API const char *lh_matrix_name(LhMatrix matrix)
{
  return (unsigned)matrix < N_ELEMENTS(matrix_names) ? matrix_names[matrix] : NULL;
}

LH_API const char *lh_range_name(LhRange range)
{
  return (unsigned)range < N_ELEMENTS(range_names) ? range_names[range] : NULL;
}

LH_API const char *lh_backend_name(LhBackend backend)
{
  return (unsigned)backend < N_ELEMENTS(backend_names) ? backend_names[backend] : NULL;
}

LH_API int lh_matrix_from_name(const char *name, LhMatrix *matrix)
{
  if (!matrix)
    return lhi_error(LH_ERROR_INVALID_ARGUMENT, "the matrix result pointer is NULL");
  int i = find_name(matrix_names, N_ELEMENTS(matrix_names), name);
  if (i < 0)
    return lhi_error(LH_ERROR_INVALID_ARGUMENT,
                     "unknown matrix \"%s\" (expected bt601, bt709 or bt2020)",
                     name ? name : "(null)");
  *matrix = (LhMatrix)i;
  return LH_OK;
}

LH_API int lh_range_from_name(const char *name, LhRange *range)
{
  if (!range)
    return lhi_error(LH_ERROR_INVALID_ARGUMENT, "the range result pointer is NULL");
  int i = find_name(range_names, N_ELEMENTS(range_names), name);
  if (i < 0)
    return lhi_error(LH_ERROR_INVALID_ARGUMENT, "unknown range \"%s\" (expected full or limited)",
                     name ? name : "(null)");
  *range = (LhRange)i;
  return LH_OK;
}

LH_API int lh_backend_from_name(const char *name, LhBackend *backend)
{
  if (!backend)
    return lhi_error(LH_ERROR_INVALID_ARGUMENT, "the backend result pointer is NULL");
  int i = find_name(backend_names, N_ELEMENTS(backend_names), name);
  if (i < 0)
    return lhi_error(LH_ERROR_INVALID_ARGUMENT,
                     "unknown backend \"%s\" (expected auto, cpu or cuda)",
                     name ? name : "(null)");
  *backend = (LhBackend)i;
  return LH_OK;
}
