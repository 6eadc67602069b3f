/* fuzz-jpeg.c: libFuzzer target for the JPEG reader in both modes (full RGB
 * and the luma-only decode): any bytes give an image or a status with a
 * message, never a crash; both modes agree on the size and on success; an
 * image read in full analyses and writes back as a JPEG of the same size. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz-common.h"

static int read_mode(const uint8_t *data, size_t size, LhioReadMode mode, LhioImage *image)
{
  FILE *file = fuzz_open_bytes(data, size);
  memset(image, 0, sizeof *image);
  int status = lhio_jpeg_read(file, "fuzz.jpg", mode, FUZZ_MAX_PIXELS, image);
  fclose(file);
  if (status < 0) {
    fuzz_check_failure(status, "fuzz.jpg", image);
    return status;
  }
  image->type = LHIO_FILE_JPEG;
  fuzz_check_image(image);
  fuzz_analyze_image(image);
  return status;
}

static void write_back(const LhioImage *image)
{
  char *bytes = NULL;
  size_t n = 0;
  FILE *out = open_memstream(&bytes, &n);
  FUZZ_ASSERT(out != NULL);
  LhioWriteOptions options = {.jpeg_quality = 50};
  int status = lhio_jpeg_write(out, "fuzz-out.jpg", image, &options);
  FUZZ_ASSERT(fclose(out) == 0);
  FUZZ_ASSERT(status == LH_OK);
  FILE *again = fuzz_open_bytes((const uint8_t *)bytes, n);
  LhioImage back;
  memset(&back, 0, sizeof back);
  status = lhio_jpeg_read(again, "fuzz-out.jpg", LHIO_READ_FULL, FUZZ_MAX_PIXELS, &back);
  fclose(again);
  FUZZ_ASSERT(status == LH_OK);
  FUZZ_ASSERT(back.frame.width == image->frame.width && back.frame.height == image->frame.height);
  FUZZ_ASSERT(back.frame.format == image->frame.format);
  lhio_image_clear(&back);
  free(bytes);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  LhioImage full, luma;
  int full_status = read_mode(data, size, LHIO_READ_FULL, &full);
  int luma_status = read_mode(data, size, LHIO_READ_LUMA, &luma);
  /* The same bytes are accepted or refused alike, with the same size: only
   * the colour conversion differs between the modes. */
  FUZZ_ASSERT((full_status == LH_OK) == (luma_status == LH_OK));
  if (full_status == LH_OK) {
    FUZZ_ASSERT(full.frame.width == luma.frame.width && full.frame.height == luma.frame.height);
    write_back(&full);
  }
  lhio_image_clear(&full);
  lhio_image_clear(&luma);
  return 0;
}
