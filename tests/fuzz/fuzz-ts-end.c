/* fuzz-ts-end.c: libFuzzer target for lhio_ts_end_cut(), which reads the
 * last bytes of any file that GStreamer's tsdemux took: any bytes give 0 or
 * 1, never a read outside them; a 1 comes with its reason and a 0 without
 * one; and the answer does not depend on the room given for the reason (a
 * buffer of one byte, of exactly that size, is not overrun).  And for
 * lhio_ts_programs(), which reads the first bytes of such a file. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz-common.h"
#include "lhio-video.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  /* A copy of exactly the size, so that a read past it is caught. */
  uint8_t *tail = malloc(size ? size : 1);
  FUZZ_ASSERT(tail != NULL);
  if (size)
    memcpy(tail, data, size);
  char why[160];
  memset(why, 'x', sizeof why);
  int cut = lhio_ts_end_cut(tail, size, why, sizeof why);
  FUZZ_ASSERT(cut == 0 || cut == 1);
  FUZZ_ASSERT(memchr(why, '\0', sizeof why) != NULL);
  FUZZ_ASSERT((cut == 1) == (why[0] != '\0'));
  char *small = malloc(1);
  FUZZ_ASSERT(small != NULL);
  FUZZ_ASSERT(lhio_ts_end_cut(tail, size, small, 1) == cut && small[0] == '\0');
  FUZZ_ASSERT(lhio_ts_end_cut(tail, size, NULL, 0) == cut);
  free(small);
  /* The programs a head lists (ts-programs.c) from the same bytes: within
   * them, at most LHIO_TS_MAX_PROGRAMS, and the one mapped first among
   * those listed. */
  LhioTsPrograms programs;
  lhio_ts_programs(tail, size, &programs);
  FUZZ_ASSERT(programs.count >= 0 && programs.count <= LHIO_TS_MAX_PROGRAMS);
  bool listed = programs.first_mapped == -1;
  for (int i = 0; i < programs.count; i++) {
    FUZZ_ASSERT(programs.numbers[i] > 0 && programs.numbers[i] <= 0xffff);
    listed = listed || programs.numbers[i] == programs.first_mapped;
  }
  FUZZ_ASSERT(listed);
  free(tail);
  return 0;
}
