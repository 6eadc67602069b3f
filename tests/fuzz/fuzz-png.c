/* fuzz-png.c: libFuzzer target for the PNG reader: any bytes must give an
 * image or a status with a "<path>: <reason>" message, never a crash; an image
 * that was read must analyse, and survive a write (at any zlib level) and a read
 * back unchanged.  With the fast path (png-fast.c), whatever it decodes libpng
 * alone must decode too, to the same frame. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz-common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  FILE *file = fuzz_open_bytes(data, size);
  LhioImage image;
  memset(&image, 0, sizeof image);
  /* The bytes in memory too, as lhio_read_memory gives them: the fast path's way. */
  LhioEncoded encoded = {.type = LHIO_FILE_PNG, .data = (uint8_t *)data, .size = size};
  int status = lhio_png_read(file, &encoded, "fuzz.png", LHIO_READ_FULL, FUZZ_MAX_PIXELS, &image);
  fclose(file);
#ifdef LHIO_HAVE_LIBDEFLATE
  if (status == LH_OK) {
    LhioImage fast, alone;
    memset(&fast, 0, sizeof fast);
    memset(&alone, 0, sizeof alone);
    if (lhio_png_fast_read(data, size, FUZZ_MAX_PIXELS, &fast) == LH_OK) {
      FILE *again = fuzz_open_bytes(data, size);
      FUZZ_ASSERT(lhio_png_read_libpng(again, "fuzz.png", FUZZ_MAX_PIXELS, &alone) == LH_OK);
      fclose(again);
      fuzz_assert_same_pixels(&fast, &alone);
      lhio_image_clear(&alone);
    }
    lhio_image_clear(&fast);
  }
#endif
  if (status < 0) {
    fuzz_check_failure(status, "fuzz.png", &image);
    return 0;
  }
  image.type = LHIO_FILE_PNG;
  fuzz_check_image(&image);
  fuzz_analyze_image(&image);
  /* Its carried chunks, as lhio_read keeps them, go into what is written:
   * whatever they hold, the file written must read back. */
  FUZZ_ASSERT(lhio_png_metadata_from_bytes(data, size, &image) == LH_OK);
  /* A frame count a luma read finds (an acTL before the image data), the
   * full read's walk over every chunk finds too. */
  FUZZ_ASSERT(lhio_png_animation_frames(data, size) == 0 || image.png_frames != 0);

  /* Lossless at every zlib level (one chosen by the input's size): what lhio
   * writes, lhio reads back sample for sample. */
  char *bytes = NULL;
  size_t n = 0;
  FILE *out = open_memstream(&bytes, &n);
  FUZZ_ASSERT(out != NULL);
  int level = (int)(size % 10);
  LhioWriteOptions options = {.png_compression = level ? level : LHIO_PNG_UNCOMPRESSED};
  status = lhio_png_write(out, "fuzz-out.png", &image, &options);
  FUZZ_ASSERT(fclose(out) == 0);
  FUZZ_ASSERT(status == LH_OK);
  FILE *again = fuzz_open_bytes((const uint8_t *)bytes, n);
  LhioImage back;
  memset(&back, 0, sizeof back);
  LhioEncoded written = {.type = LHIO_FILE_PNG, .data = (uint8_t *)bytes, .size = n};
  status = lhio_png_read(again, &written, "fuzz-out.png", LHIO_READ_FULL, FUZZ_MAX_PIXELS, &back);
  fclose(again);
  FUZZ_ASSERT(status == LH_OK);
  fuzz_assert_same_pixels(&image, &back);
  lhio_image_clear(&back);
  free(bytes);
  lhio_image_clear(&image);
  return 0;
}
