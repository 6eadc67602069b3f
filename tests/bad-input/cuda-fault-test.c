/* cuda-fault-test.c: the CUDA backend under faults, through the public API
 * only.  Out of device memory (a host frame larger than any GPU's memory,
 * reserved but never touched) must give LH_ERROR_NO_MEMORY with a message and
 * leave the context usable, with results equal to the CPU's; a frame at an
 * address that is no device memory (a fault, as a lost device gives) must give
 * a status and a message, and every later call a result or a status, never a
 * crash or a hang.  Exit 77 where no CUDA device is usable. */
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../unit/test-check.h"
#include "lumahist.h"

static uint8_t small_pixels[96 * 64];

static void small_frame(LhFrame *frame)
{
  for (size_t i = 0; i < sizeof small_pixels; i++)
    small_pixels[i] = (uint8_t)(i * 37 + i / 96);
  lh_frame_init(frame, LH_FORMAT_GRAY8, LH_MEMORY_HOST, 96, 64, small_pixels, 0);
}

/* The small frame on ctx gives the CPU's numbers; returns the status. */
static int analyze_small(LhContext *ctx, const char *when)
{
  LhContext *cpu = NULL;
  LhFrame frame;
  small_frame(&frame);
  LhOptions options;
  lh_options_init(&options);
  lh_options_set_percentiles(&options, "1,50,99");
  LhStats got, want;
  lh_stats_init(&got);
  lh_stats_init(&want);
  lh_context_new(LH_BACKEND_CPU, &cpu);
  lh_analyze(cpu, &frame, &options, &want);
  int status = lh_analyze(ctx, &frame, &options, &got);
  if (status == LH_OK)
    CHECK(got.count == want.count && got.mean == want.mean && got.median == want.median &&
              got.percentile_value[2] == want.percentile_value[2] &&
              memcmp(got.histogram, want.histogram, 256 * sizeof(uint64_t)) == 0,
          "%s: CUDA and CPU differ on the small frame", when);
  lh_stats_clear(&got);
  lh_stats_clear(&want);
  lh_context_free(cpu);
  return status;
}

/* The small frame equalized on ctx equals the CPU's; returns the status. */
static int equalize_small(LhContext *ctx, const char *when)
{
  LhContext *cpu = NULL;
  LhFrame in, got, want;
  small_frame(&in);
  static uint8_t got_pixels[sizeof small_pixels], want_pixels[sizeof small_pixels];
  lh_frame_init(&got, LH_FORMAT_GRAY8, LH_MEMORY_HOST, 96, 64, got_pixels, 0);
  lh_frame_init(&want, LH_FORMAT_GRAY8, LH_MEMORY_HOST, 96, 64, want_pixels, 0);
  LhEqualizeOptions options;
  lh_equalize_options_init(&options);
  lh_context_new(LH_BACKEND_CPU, &cpu);
  lh_equalize(cpu, &in, &want, &options);
  int status = lh_equalize(ctx, &in, &got, &options);
  if (status == LH_OK)
    CHECK(memcmp(got_pixels, want_pixels, sizeof got_pixels) == 0,
          "%s: CUDA and CPU equalize the small frame differently", when);
  lh_context_free(cpu);
  return status;
}

static void test_out_of_memory(LhContext *ctx)
{
  /* 2^38 bytes (256 GiB): more than any GPU holds, and within the library's
   * 2^40-pixel limit.  MAP_NORESERVE: the pages are never touched. */
  const int width = 1 << 18, height = 1 << 20;
  size_t bytes = (size_t)width * height;
  void *huge = mmap(NULL, bytes, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (huge == MAP_FAILED) {
    printf("note: cannot reserve %zu GiB of address space; out-of-memory case not run\n",
           bytes >> 30);
    return;
  }
  LhFrame frame;
  lh_frame_init(&frame, LH_FORMAT_GRAY8, LH_MEMORY_HOST, width, height, huge, 0);
  LhOptions options;
  lh_options_init(&options);
  options.percentile_method = LH_PERCENTILE_HISTOGRAM;
  LhStats stats;
  lh_stats_init(&stats);
  for (int round = 0; round < 2; round++) {
    int status = lh_analyze(ctx, &frame, &options, &stats);
    printf("%dx%d host frame (%zu GiB): %s: %s\n", width, height, bytes >> 30,
           lh_status_name(status), lh_last_error());
    CHECK(status == LH_ERROR_NO_MEMORY || status == LH_ERROR_TOO_LARGE,
          "a frame larger than the device: status %s", lh_status_name(status));
    CHECK(lh_last_error()[0] != '\0', "no message for a frame larger than the device");
    CHECK(analyze_small(ctx, "after running out of device memory") == LH_OK,
          "the context is not usable after running out of device memory");
  }
  /* Equalized in place: refused before anything is written (the mapping is
   * read-only, so a write would be a crash). */
  LhEqualizeOptions eo;
  lh_equalize_options_init(&eo);
  int eq_status = lh_equalize(ctx, &frame, &frame, &eo);
  printf("equalizing it: %s: %s\n", lh_status_name(eq_status), lh_last_error());
  CHECK(eq_status == LH_ERROR_NO_MEMORY || eq_status == LH_ERROR_TOO_LARGE,
        "equalizing a frame larger than the device: %s", lh_status_name(eq_status));
  CHECK(equalize_small(ctx, "after equalizing out of memory") == LH_OK,
        "equalization is not usable after running out of device memory");
  CHECK(analyze_small(ctx, "after equalizing out of memory") == LH_OK,
        "analysis is not usable after equalization ran out of device memory");

  /* In a batch with a small frame, the whole batch is refused; then the
   * small frame alone works. */
  LhFrame both[2];
  small_frame(&both[0]);
  both[1] = frame;
  LhStats two[2];
  lh_stats_init(&two[0]);
  lh_stats_init(&two[1]);
  int status = lh_analyze_batch(ctx, both, 2, &options, two);
  CHECK(status == LH_ERROR_NO_MEMORY || status == LH_ERROR_TOO_LARGE,
        "a batch with a frame larger than the device: %s", lh_status_name(status));
  CHECK(analyze_small(ctx, "after a batch out of memory") == LH_OK, "context after the batch");
  lh_stats_clear(&two[0]);
  lh_stats_clear(&two[1]);
  lh_stats_clear(&stats);
  munmap(huge, bytes);
}

/* Last: a fault may leave the device unusable for the rest of the process. */
static void test_fault(LhContext *ctx)
{
  LhFrame frame;
  lh_frame_init(&frame, LH_FORMAT_GRAY8, LH_MEMORY_CUDA, 256, 256, (void *)(uintptr_t)0x10000, 0);
  LhStats stats;
  lh_stats_init(&stats);
  int status = lh_analyze(ctx, &frame, NULL, &stats);
  printf("a CUDA frame at 0x10000: %s: %s\n", lh_status_name(status), lh_last_error());
  CHECK(status < 0 && lh_last_error()[0] != '\0', "a frame at no device address: status %s",
        lh_status_name(status));
  for (int round = 0; round < 3; round++) {
    status = analyze_small(ctx, "after a fault");
    printf("then a good frame: %s%s%s\n", lh_status_name(status), status ? ": " : "",
           status ? lh_last_error() : "");
    CHECK(status == LH_OK || (status < 0 && lh_last_error()[0] != '\0'),
          "after a fault, neither a result nor a message");
  }
  lh_stats_clear(&stats);
  LhContext *again = NULL;
  status = lh_context_new(LH_BACKEND_AUTO, &again);
  printf("a new auto context after the fault: %s, backend %s\n", lh_status_name(status),
         again ? lh_backend_name(lh_context_backend(again)) : "none");
  CHECK(status == LH_OK || lh_last_error()[0] != '\0', "new context after a fault");
  if (again)
    analyze_small(again, "a new context after a fault");
  lh_context_free(again);
}

static void on_alarm(int signal)
{
  static const char message[] = "FAIL: cuda-fault-test hung (120 s)\n";
  (void)signal;
  write(2, message, sizeof message - 1);
  _exit(1);
}

int main(void)
{
  signal(SIGALRM, on_alarm);
  alarm(120);
  LhContext *ctx = NULL;
  int status = lh_context_new(LH_BACKEND_CUDA, &ctx);
  if (status == LH_ERROR_NO_DEVICE) {
    printf("SKIP: no usable CUDA device: %s\n", lh_last_error());
    return 77;
  }
  if (status < 0) {
    fprintf(stderr, "FAIL: lh_context_new(CUDA): %s: %s\n", lh_status_name(status),
            lh_last_error());
    return 1;
  }
  CHECK(analyze_small(ctx, "a fresh context") == LH_OK, "a fresh CUDA context");
  CHECK(equalize_small(ctx, "a fresh context") == LH_OK, "equalize on a fresh CUDA context");
  test_out_of_memory(ctx);
  test_fault(ctx);
  lh_context_free(ctx);
  if (failures) {
    fprintf(stderr, "%d failure(s)\n", failures);
    return 1;
  }
  printf("cuda faults: all checks passed\n");
  return 0;
}
