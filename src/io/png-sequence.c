/* png-sequence.c: PNG images one after another in one stream, as FFmpeg's
 * image2pipe writes a video's frames (`ffmpeg -i clip.mp4 -f image2pipe
 * -c:v png - | lumahist stats -`).  Read as one image, such a pipe gave the
 * first frame's record alone, with exit 0: the image reader refuses it, as
 * it refuses Motion JPEG on a pipe. */
#include <string.h>

#include "lhio-private.h"

/* Where the PNG image at the start of data ends (just after its IEND
 * chunk's CRC), or 0 where it does not end within the bytes.  The walk
 * steps over each chunk by its length; the CRCs are the decoder's. */
static size_t png_image_end(const uint8_t *data, size_t size)
{
  if (!lhio_png_signature_at(data, size))
    return 0;
  size_t at = 8;
  while (size - at >= 12) {
    const uint32_t length = lhio_be32(data + at);
    /* Length, type, data and CRC, within the bytes. */
    if (length > size - at - 12)
      return 0;
    const bool end = memcmp(data + at + 4, "IEND", 4) == 0;
    at += 12 + (size_t)length;
    if (end)
      return at;
  }
  return 0;
}

bool lhio_sniff_png_sequence(const uint8_t *data, size_t size)
{
  const size_t end = png_image_end(data, size);
  return end > 0 && lhio_png_signature_at(data + end, size - end);
}
