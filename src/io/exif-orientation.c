/* exif-orientation.c: how an image is to be shown, from the orientation tag
 * (0x0112) of its Exif: a phone stores a portrait photograph as it came off
 * the sensor, lying on its side, and tells viewers to turn it.  What is
 * drawn on the image (the overlay's panel) is turned the other way, so that
 * it reads upright where the viewer shows the photograph.
 *
 * The Exif is found in the metadata kept for writing back (jpeg-metadata.c,
 * png-metadata.c): a JPEG's APP1 segment that begins "Exif\0\0", a PNG's
 * eXIf chunk.  Both hold a TIFF header and its first directory. */
#include <string.h>

#include "lhio-private.h"

static uint32_t tiff_u16(const uint8_t *p, bool big_endian)
{
  return big_endian ? (uint32_t)p[0] << 8 | p[1] : (uint32_t)p[1] << 8 | p[0];
}

static uint32_t tiff_u32(const uint8_t *p, bool big_endian)
{
  return big_endian ? tiff_u16(p, true) << 16 | tiff_u16(p + 2, true)
                    : tiff_u16(p + 2, false) << 16 | tiff_u16(p, false);
}

/* The orientation in a TIFF structure of size bytes, or 1 when it has none
 * that is valid. */
static int tiff_orientation(const uint8_t *tiff, size_t size)
{
  if (size < 8 || (memcmp(tiff, "MM", 2) != 0 && memcmp(tiff, "II", 2) != 0))
    return 1;
  const bool big_endian = tiff[0] == 'M';
  if (tiff_u16(tiff + 2, big_endian) != 42)
    return 1;
  const uint32_t directory = tiff_u32(tiff + 4, big_endian);
  if (directory > size - 2)
    return 1;
  const uint32_t entries = tiff_u16(tiff + directory, big_endian);
  for (uint32_t i = 0; i < entries; i++) {
    const size_t at = (size_t)directory + 2 + 12 * (size_t)i;
    if (at + 12 > size)
      break;
    const uint8_t *entry = tiff + at;
    /* The tag, of type SHORT (3), one value, held in the entry itself. */
    if (tiff_u16(entry, big_endian) != 0x0112)
      continue;
    if (tiff_u16(entry + 2, big_endian) != 3 || tiff_u32(entry + 4, big_endian) < 1)
      return 1;
    const uint32_t orientation = tiff_u16(entry + 8, big_endian);
    return orientation >= 1 && orientation <= 8 ? (int)orientation : 1;
  }
  return 1;
}

int lhio_image_orientation(const LhioImage *image)
{
  const uint8_t *at = image->metadata;
  const uint8_t *end = at ? at + image->metadata_size : NULL;
  static const uint8_t exif_tag[6] = {'E', 'x', 'i', 'f', 0, 0};
  while (at && image->type == LHIO_FILE_JPEG && end - at >= 4) {
    const size_t length = (size_t)at[2] << 8 | at[3]; /* itself included */
    if (length < 2 || length > (size_t)(end - at) - 2)
      break;
    if (at[1] == 0xE1 && length - 2 >= sizeof exif_tag &&
        memcmp(at + 4, exif_tag, sizeof exif_tag) == 0)
      return tiff_orientation(at + 4 + sizeof exif_tag, length - 2 - sizeof exif_tag);
    at += 2 + length;
  }
  while (at && image->type == LHIO_FILE_PNG && end - at >= 12) {
    const uint32_t length = lhio_be32(at);
    if (length > (size_t)(end - at) - 12)
      break;
    if (memcmp(at + 4, "eXIf", 4) == 0)
      return tiff_orientation(at + 8, length);
    at += 12 + (size_t)length;
  }
  return 1;
}
