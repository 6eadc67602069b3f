/* embed-link.c: the smallest application of the library, built by
 * pkg-config-link-test.sh with nothing but pkg-config's flags. */
#include <lumahist.h>
#include <stdio.h>

int main(void)
{
  unsigned char pixels[4] = {10, 20, 30, 40};
  LhContext *context;
  LhFrame frame;
  LhStats stats;
  int status = lh_context_new(LH_BACKEND_AUTO, &context);
  if (status < 0) {
    printf("FAIL: lh_context_new: %s\n", lh_last_error());
    return 1;
  }
  lh_stats_init(&stats);
  status = lh_frame_init(&frame, LH_FORMAT_GRAY8, LH_MEMORY_HOST, 2, 2, pixels, 0);
  if (status == LH_OK)
    status = lh_analyze(context, &frame, NULL, &stats);
  const int failed = status < 0 || stats.median != 20;
  if (failed)
    printf("FAIL: lh_analyze: status %d (%s), median %u\n", status, lh_last_error(), stats.median);
  else
    printf("lumahist %s on %s: median %u\n", lh_version(),
           lh_backend_name(lh_context_last_backend(context)), stats.median);
  lh_stats_clear(&stats);
  lh_context_free(context);
  return failed;
}
