/* other-image-kind.c: what an image file that is no PNG or JPEG is, by its
 * first bytes, so that its refusal names it.  Pictures saved from the web
 * as .jpg are often WebP or AVIF, and phones save HEIC: "not a PNG or JPEG
 * file" alone left the user to find out why a .jpg was refused. */
#include <string.h>

#include "lhio-private.h"

static bool starts_with(const uint8_t *head, size_t n, const void *magic, size_t size)
{
  return n >= size && memcmp(head, magic, size) == 0;
}

/* An ISO base media file (HEIF, AVIF, a Canon CR3) whose major brand is
 * an image's. */
static const char *iso_image_kind(const uint8_t *head, size_t n)
{
  if (n < 12 || memcmp(head + 4, "ftyp", 4) != 0)
    return NULL;
  static const struct {
    char brand[5];
    const char *kind;
  } brands[] = {
      {"avif", "an AVIF image"},         {"avis", "an AVIF image sequence"},
      {"heic", "a HEIF image (HEIC)"},   {"heix", "a HEIF image (HEIC)"},
      {"heim", "a HEIF image (HEIC)"},   {"heis", "a HEIF image (HEIC)"},
      {"hevc", "a HEIF image sequence"}, {"mif1", "a HEIF image"},
      {"msf1", "a HEIF image sequence"}, {"crx ", "a Canon raw photo (CR3)"},
  };
  for (size_t i = 0; i < sizeof brands / sizeof brands[0]; i++)
    if (memcmp(head + 8, brands[i].brand, 4) == 0)
      return brands[i].kind;
  return NULL;
}

const char *lhio_other_image_kind(const uint8_t *head, size_t n)
{
  static const uint8_t jxl_container[] = {0,   0,   0,    0x0c, 'J',  'X',
                                          'L', ' ', 0x0d, 0x0a, 0x87, 0x0a};
  static const uint8_t jp2_container[] = {0,   0,   0,    0x0c, 'j',  'P',
                                          ' ', ' ', 0x0d, 0x0a, 0x87, 0x0a};
  if (!head || lhio_sniff(head, n) != LHIO_FILE_UNKNOWN)
    return NULL; /* ftyp four bytes into a JPEG is a JPEG's bytes */
  if (starts_with(head, n, "GIF87a", 6) || starts_with(head, n, "GIF89a", 6))
    return "a GIF image";
  if (n >= 12 && memcmp(head, "RIFF", 4) == 0 && memcmp(head + 8, "WEBP", 4) == 0)
    return "a WebP image";
  /* TIFF, and the camera raw files built on it (DNG, NEF, CR2, ARW). */
  if (starts_with(head, n, "II*\0", 4) || starts_with(head, n, "MM\0*", 4))
    return "a TIFF image (or a camera's raw photo)";
  /* "BM", the file's size, two reserved zero words, the pixels' offset,
   * then the size of a known info header. */
  if (n >= 18 && head[0] == 'B' && head[1] == 'M' && !head[6] && !head[7] && !head[8] && !head[9] &&
      !head[15] && !head[16] && !head[17] &&
      (head[14] == 12 || head[14] == 40 || head[14] == 52 || head[14] == 56 || head[14] == 108 ||
       head[14] == 124))
    return "a BMP image";
  if (starts_with(head, n, "\xff\x0a", 2) || starts_with(head, n, jxl_container, 12))
    return "a JPEG XL image";
  if (starts_with(head, n, "\xff\x4f\xff\x51", 4) || starts_with(head, n, jp2_container, 12))
    return "a JPEG 2000 image";
  if (starts_with(head, n, "8BPS", 4))
    return "a Photoshop document";
  if (starts_with(head, n, "qoif", 4))
    return "a QOI image";
  if (starts_with(head, n, "%PDF-", 5))
    return "a PDF document";
  return iso_image_kind(head, n);
}
