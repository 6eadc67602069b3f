/* header-strict.c: an application's use of lumahist.h in the C that C89 and
 * C++98 share, for header-strict-test.sh to compile in each standard the
 * header promises (README, "The library"): its types, its enumerators, its
 * version macros and its functions, whose references must come out
 * unmangled from C++.  It is compiled, not run. */
#include <lumahist.h>

#if !LH_CHECK_VERSION(0, 1, 0)
#error "lumahist 0.1.0 or later is needed"
#endif

int header_strict_use(LhContext *context, const LhFrame *frame);

int header_strict_use(LhContext *context, const LhFrame *frame)
{
  LhOptions options;
  LhStats stats;
  LhFormat format = LH_FORMAT_GRAY8;
  LhBackend backend = LH_BACKEND_AUTO;
  LhMatrix matrix = LH_MATRIX_BT601;
  int status;

  lh_options_init(&options);
  options.matrix = matrix;
  lh_stats_init(&stats);
  status = lh_analyze(context, frame, &options, &stats);
  lh_stats_clear(&stats);
  if (status != LH_OK || lh_format_name(format) == NULL || lh_backend_name(backend) == NULL)
    return LH_ERROR_INVALID_ARGUMENT;
  if (!LH_CHECK_VERSION(LH_VERSION_MAJOR, LH_VERSION_MINOR, LH_VERSION_MICRO))
    return LH_ERROR_UNSUPPORTED;
  return lh_version()[0] == '\0' ? LH_ERROR_UNSUPPORTED : LH_OK;
}
