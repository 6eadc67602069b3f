/* fuzz-file-end.c: libFuzzer target for lhio_mp4_file_cut() and
 * lhio_packet_file_end(), which walk the boxes of an MP4 and the packets of
 * an FLV, IVF, Ogg or MPEG-PS file that a demuxer took, to tell a cut one:
 * any bytes, written to a file, give one of their answers, never a read
 * outside the file or a walk that does not end; a reason exactly when the
 * answer is a cut; the same answer whatever room the reason gets (a buffer
 * of one byte is not overrun); and the file as it was. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz-common.h"
#include "fuzz-file.h"
#include "lhio-private.h"

static char path[32];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  /* The walks key on the bytes alone, not on a name. */
  if (!path[0])
    fuzz_memory_file(path, sizeof path, "input");
  fuzz_write_file(path, data, size);
  char why[192], small[1];

  memset(why, 'x', sizeof why);
  const int cut = lhio_mp4_file_cut(path, why, sizeof why);
  FUZZ_ASSERT(cut == 0 || cut == 1);
  FUZZ_ASSERT(memchr(why, '\0', sizeof why) != NULL);
  FUZZ_ASSERT((cut == 1) == (why[0] != '\0'));
  FUZZ_ASSERT(cut == 0 || strstr(why, " box") != NULL);
  small[0] = 'x';
  FUZZ_ASSERT(lhio_mp4_file_cut(path, small, 1) == cut && small[0] == '\0');
  FUZZ_ASSERT(lhio_mp4_file_cut(path, NULL, 0) == cut);

  memset(why, 'x', sizeof why);
  const LhioFileEnd end = lhio_packet_file_end(path, why, sizeof why);
  FUZZ_ASSERT(end == LHIO_FILE_END_UNKNOWN || end == LHIO_FILE_END_WHOLE ||
              end == LHIO_FILE_END_CUT);
  FUZZ_ASSERT(memchr(why, '\0', sizeof why) != NULL);
  FUZZ_ASSERT((end == LHIO_FILE_END_CUT) == (why[0] != '\0'));
  small[0] = 'x';
  FUZZ_ASSERT(lhio_packet_file_end(path, small, 1) == end && small[0] == '\0');
  FUZZ_ASSERT(lhio_packet_file_end(path, NULL, 0) == end);

  fuzz_check_unchanged(path, data, size);
  return 0;
}
