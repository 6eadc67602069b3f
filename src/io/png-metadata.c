/* png-metadata.c: a PNG's colour and text chunks carried from the file read
 * to the PNG written from it (equalize, clahe, overlay): its ICC profile or
 * sRGB, gamma, chromaticities and cICP (how its samples are to be shown),
 * its pixel density, its text (XMP among it) and its Exif.  Without them a
 * Display P3 screenshot came back in the wrong colours and a 300 dpi scan
 * at no density.
 *
 * They travel in LhioImage.metadata as the chunks stood in the file
 * (length, type, data, CRC), and are written after the header, before the
 * image data.  Chunks that describe the file's own coding (PLTE, tRNS,
 * bKGD, sBIT, hIST, sPLT: a palette image is written as R'G'B') are not
 * carried, nor tIME, the time of a change this is not, nor a chunk whose
 * CRC is wrong: libpng drops such a chunk on reading, and written again with
 * a CRC of its own it would pass for sound.  An animation's control chunk
 * (APNG's acTL) is not carried either, only its frame count noted: the
 * frames after the first are not read, and a still image is written. */
#include <stdlib.h>
#include <string.h>

#include <png.h>
#include <zlib.h>

#include "lhio-private.h"

static const char carried_types[][5] = {"iCCP", "sRGB", "gAMA", "cHRM", "cICP",
                                        "pHYs", "tEXt", "zTXt", "iTXt", "eXIf"};

static bool carried(const uint8_t *type)
{
  for (size_t k = 0; k < sizeof carried_types / sizeof carried_types[0]; k++)
    if (memcmp(type, carried_types[k], 4) == 0)
      return true;
  return false;
}

/* Whether a whole chunk (length, type, data, CRC) has the CRC of its type
 * and data. */
static bool crc_matches(const uint8_t *chunk, uint32_t length)
{
  uLong crc = crc32(0L, chunk + 4, 4 + length);
  return crc == lhio_be32(chunk + 8 + length);
}

/* The frame count of an animation's control chunk (acTL) at chunk, where it
 * is one and sound; else 0. */
static uint32_t animation_frames(const uint8_t *chunk, uint32_t length)
{
  if (memcmp(chunk + 4, "acTL", 4) != 0 || length != 8 || !crc_matches(chunk, length))
    return 0;
  return lhio_be32(chunk + 8);
}

uint32_t lhio_png_animation_frames(const uint8_t *data, size_t size)
{
  if (!lhio_png_signature_at(data, size))
    return 0;
  /* acTL comes before the first IDAT. */
  for (size_t at = 8; size - at >= 12;) {
    const uint32_t length = lhio_be32(data + at);
    if (length > size - at - 12 || memcmp(data + at + 4, "IDAT", 4) == 0)
      break;
    const uint32_t frames = animation_frames(data + at, length);
    if (frames)
      return frames;
    at += 12 + (size_t)length;
  }
  return 0;
}

int lhio_png_metadata_from_bytes(const uint8_t *data, size_t size, LhioImage *image)
{
  if (!lhio_png_signature_at(data, size))
    return LH_OK;
  size_t at = 8;
  while (size - at >= 12) {
    const uint32_t length = lhio_be32(data + at);
    if (length > size - at - 12)
      break; /* cut short: what came before is kept */
    const uint8_t *type = data + at + 4;
    if (memcmp(type, "IEND", 4) == 0)
      break;
    const size_t whole = 12 + (size_t)length;
    const uint32_t frames = animation_frames(data + at, length);
    if (frames)
      image->png_frames = frames;
    if (carried(type) && crc_matches(data + at, length)) {
      uint8_t *grown = realloc(image->metadata, image->metadata_size + whole);
      if (!grown)
        return LH_ERROR_NO_MEMORY;
      memcpy(grown + image->metadata_size, data + at, whole);
      image->metadata = grown;
      image->metadata_size += whole;
    }
    at += whole;
  }
  return LH_OK;
}

void lhio_png_write_metadata(struct png_struct_def *png, const LhioImage *image)
{
  const uint8_t *at = image->metadata, *end = at ? at + image->metadata_size : NULL;
  while (at && end - at >= 12) {
    const uint32_t length = lhio_be32(at);
    if (length > (size_t)(end - at) - 12)
      break;
    png_write_chunk(png, at + 4, at + 8, length);
    at += 12 + (size_t)length;
  }
}
