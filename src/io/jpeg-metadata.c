/* jpeg-metadata.c: a JPEG's metadata carried from the file read to the file
 * written from it (equalize, clahe, overlay): its Exif (with the orientation
 * that viewers turn the pixels by), XMP, ICC profile, IPTC and comments.
 * Without them a phone's portrait photograph came back lying on its side.
 *
 * The metadata travel in LhioImage.metadata as the segments stood in the
 * file: 0xFF, the marker, a 16-bit big-endian length (itself included) and
 * the data.  libjpeg-turbo gives them to the CPU path (its saved markers);
 * the GPU path reads them from the file's bytes and puts them into what
 * nvJPEG encoded. */
#include <stdlib.h>
#include <string.h>

/* jpeglib.h needs FILE and size_t declared before it. */
#include <stdio.h>

#include <jpeglib.h>

#include "lhio-private.h"

#define MARKER_SOI 0xD8
#define MARKER_EOI 0xD9
#define MARKER_SOS 0xDA

/* ICC profiles are carried in APP2 segments that begin with this. */
static const char icc_tag[] = "ICC_PROFILE";

/* Whether a segment is metadata to carry: APP1 (Exif, XMP), APP2's ICC
 * profile, APP13 (IPTC) and COM.  JFIF's APP0 and Adobe's APP14 describe the
 * coding, which the writer sets itself.  The other APP2 segments describe
 * what came after the image in the file: MPF indexes a phone's depth map or
 * HDR gain map by byte offsets, FlashPix's extensions its data.  Neither is
 * written, and an index carried over would point into the new image's own
 * data.  An ICC profile describes the colours as they were stored: not those
 * of a CMYK file converted to R'G'B'. */
static bool carried(int marker, const uint8_t *data, size_t size, bool converted)
{
  if (marker == JPEG_APP0 + 2)
    return !converted && size >= sizeof icc_tag && memcmp(data, icc_tag, sizeof icc_tag) == 0;
  return marker == JPEG_APP0 + 1 || marker == JPEG_APP0 + 13 || marker == JPEG_COM;
}

/* JFIF's APP0: "JFIF\0", version (2 bytes), density unit, X and Y density
 * (16-bit big-endian each), thumbnail size (2 bytes). */
static const char jfif_tag[] = "JFIF";
#define JFIF_DENSITY_AT 7 /* the unit's offset in the segment's data */
#define JFIF_MIN_DATA 14

static bool is_jfif(int marker, const uint8_t *data, size_t size)
{
  return marker == JPEG_APP0 && size >= JFIF_MIN_DATA &&
         memcmp(data, jfif_tag, sizeof jfif_tag) == 0;
}

/* Appends one segment (data of at most 65533 bytes) to the image's. */
static int append_segment(LhioImage *image, int marker, const uint8_t *data, size_t size)
{
  uint8_t *grown = realloc(image->metadata, image->metadata_size + 4 + size);
  if (!grown)
    return LH_ERROR_NO_MEMORY;
  uint8_t *at = grown + image->metadata_size;
  at[0] = 0xFF;
  at[1] = (uint8_t)marker;
  at[2] = (uint8_t)((size + 2) >> 8);
  at[3] = (uint8_t)((size + 2) & 0xFF);
  memcpy(at + 4, data, size);
  image->metadata = grown;
  image->metadata_size += 4 + size;
  return LH_OK;
}

void lhio_jpeg_save_markers(struct jpeg_decompress_struct *cinfo)
{
  jpeg_save_markers(cinfo, JPEG_APP0 + 1, 0xFFFF);
  jpeg_save_markers(cinfo, JPEG_APP0 + 2, 0xFFFF);
  jpeg_save_markers(cinfo, JPEG_APP0 + 13, 0xFFFF);
  jpeg_save_markers(cinfo, JPEG_COM, 0xFFFF);
}

int lhio_jpeg_keep_saved_markers(struct jpeg_decompress_struct *cinfo, LhioImage *image)
{
  const bool converted = image->converted_from != NULL;
  for (jpeg_saved_marker_ptr m = cinfo->marker_list; m; m = m->next) {
    /* A segment cut short by the end of the data is not whole: left out. */
    if (m->data_length != m->original_length ||
        !carried(m->marker, m->data, m->data_length, converted))
      continue;
    if (append_segment(image, m->marker, m->data, m->data_length) < 0)
      return LH_ERROR_NO_MEMORY;
  }
  return LH_OK;
}

void lhio_jpeg_write_metadata(struct jpeg_compress_struct *cinfo, const LhioImage *image)
{
  if (image->type != LHIO_FILE_JPEG)
    return; /* another type's metadata, which a JPEG cannot hold */
  const uint8_t *at = image->metadata, *end = at ? at + image->metadata_size : NULL;
  while (at && end - at >= 4) {
    size_t length = (size_t)at[2] << 8 | at[3];
    if (length < 2 || (size_t)(end - at) < 2 + length)
      break;
    jpeg_write_marker(cinfo, at[1], at + 4, (unsigned)(length - 2));
    at += 2 + length;
  }
}

int lhio_jpeg_metadata_from_bytes(const LhioEncoded *encoded, LhioImage *image)
{
  const uint8_t *data = encoded->data, *end = data + encoded->size;
  if (encoded->size < 2 || data[0] != 0xFF || data[1] != MARKER_SOI)
    return LH_OK;
  const bool converted = image->converted_from != NULL;
  const uint8_t *at = data + 2;
  /* The segments before the first scan; fill bytes (0xFF runs) allowed. */
  while (end - at >= 4) {
    if (at[0] != 0xFF)
      break;
    int marker = at[1];
    if (marker == 0xFF) {
      at++;
      continue;
    }
    if (marker == MARKER_SOS || marker == MARKER_EOI)
      break;
    size_t length = (size_t)at[2] << 8 | at[3];
    if (length < 2 || (size_t)(end - at) < 2 + length)
      break;
    if (is_jfif(marker, at + 4, length - 2)) {
      const uint8_t *density = at + 4 + JFIF_DENSITY_AT;
      image->jfif_density_unit = density[0];
      image->jfif_x_density = density[1] << 8 | density[2];
      image->jfif_y_density = density[3] << 8 | density[4];
    }
    if (carried(marker, at + 4, length - 2, converted) &&
        append_segment(image, marker, at + 4, length - 2) < 0)
      return LH_ERROR_NO_MEMORY;
    at += 2 + length;
  }
  return LH_OK;
}

int lhio_jpeg_insert_metadata(LhioEncoded *encoded, const LhioImage *image)
{
  const bool density = image->jfif_x_density > 0 && image->jfif_y_density > 0;
  if (!image->metadata_size && !density)
    return LH_OK;
  uint8_t *data = encoded->data;
  if (encoded->size < 2 || data[0] != 0xFF || data[1] != MARKER_SOI)
    return lh_set_error(LH_ERROR_CORRUPT, "the encoder's output does not begin with a JPEG's SOI");
  /* After the SOI, and after a JFIF APP0 if the encoder wrote one: where a
   * JPEG's Exif is looked for.  The encoder's JFIF states its own density
   * (1:1, no unit): the input's replaces it. */
  size_t cut = 2;
  if (encoded->size >= 6 && data[2] == 0xFF && data[3] == JPEG_APP0) {
    size_t length = (size_t)data[4] << 8 | data[5];
    if (encoded->size >= 4 + length) {
      cut = 4 + length;
      if (density && length >= 2 && is_jfif(JPEG_APP0, data + 6, length - 2)) {
        uint8_t *at = data + 6 + JFIF_DENSITY_AT;
        at[0] = (uint8_t)image->jfif_density_unit;
        at[1] = (uint8_t)(image->jfif_x_density >> 8);
        at[2] = (uint8_t)(image->jfif_x_density & 0xFF);
        at[3] = (uint8_t)(image->jfif_y_density >> 8);
        at[4] = (uint8_t)(image->jfif_y_density & 0xFF);
      }
    }
  }
  if (!image->metadata_size)
    return LH_OK;
  uint8_t *joined = malloc(encoded->size + image->metadata_size);
  if (!joined)
    return lh_set_error(LH_ERROR_NO_MEMORY, "no memory for a JPEG of %zu bytes",
                        encoded->size + image->metadata_size);
  memcpy(joined, data, cut);
  memcpy(joined + cut, image->metadata, image->metadata_size);
  memcpy(joined + cut + image->metadata_size, data + cut, encoded->size - cut);
  free(encoded->data);
  encoded->data = joined;
  encoded->size += image->metadata_size;
  return LH_OK;
}
