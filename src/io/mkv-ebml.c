/* mkv-ebml.c: the headers of the EBML elements a Matroska or WebM file is
 * made of, read in memory or from the file, and the walk over its segment's
 * children, for what is read from such a file (mkv-track-end.c,
 * mkv-attachments.c) and put into one matroskamux finished (mkv-tags.c). */
#include <unistd.h>

#include "lhio-private.h"

/* The width of the variable-length integer whose first byte is first. */
static int vint_width(uint8_t first)
{
  for (int width = 1; width <= 8; width++)
    if (first & (0x80u >> (width - 1)))
      return width;
  return 0;
}

bool lhio_ebml_header(const uint8_t *data, size_t available, LhioEbmlHeader *header)
{
  if (available < 2)
    return false;
  const int id_width = vint_width(data[0]);
  if (id_width == 0 || id_width > 4 || (size_t)id_width >= available)
    return false;
  header->id = 0;
  for (int i = 0; i < id_width; i++)
    header->id = header->id << 8 | data[i];
  const uint8_t *size = data + id_width;
  header->size_width = vint_width(size[0]);
  if (header->size_width == 0 || (size_t)(id_width + header->size_width) > available)
    return false;
  uint64_t value = size[0] & (0xFFu >> header->size_width);
  bool all_ones = value == (0xFFu >> header->size_width);
  for (int i = 1; i < header->size_width; i++) {
    value = value << 8 | size[i];
    all_ones = all_ones && size[i] == 0xFF;
  }
  header->size = all_ones ? UINT64_MAX : value;
  header->length = (size_t)(id_width + header->size_width);
  return true;
}

bool lhio_ebml_header_at(int fd, off_t at, off_t end, LhioEbmlHeader *header)
{
  /* Only the bytes before end: a header that runs past it (past the end of
   * the element it is read in) is none, and the walks that take the bytes
   * left before end less its length would wrap around. */
  uint8_t bytes[12];
  if (at < 0 || end - at <= 0)
    return false;
  const size_t want = end - at < (off_t)sizeof bytes ? (size_t)(end - at) : sizeof bytes;
  const ssize_t got = pread(fd, bytes, want, at);
  return got > 0 && lhio_ebml_header(bytes, (size_t)got, header);
}

#define ID_EBML 0x1A45DFA3u
#define ID_SEGMENT 0x18538067u

bool lhio_mkv_segment_children(int fd, LhioMkvChildFunc each, void *data)
{
  const off_t end = lseek(fd, 0, SEEK_END);
  LhioEbmlHeader header;
  off_t at = 0;
  if (lhio_ebml_header_at(fd, at, end, &header) && header.id == ID_EBML &&
      header.size != UINT64_MAX)
    at += (off_t)(header.length + header.size);
  if (!lhio_ebml_header_at(fd, at, end, &header) || header.id != ID_SEGMENT)
    return false;
  const off_t segment_end =
      header.size == UINT64_MAX ? end : at + (off_t)(header.length + header.size);
  /* A header at a time: clusters are stepped over, not read.  One of
   * unknown size (a live recording's) ends the walk. */
  for (at += (off_t)header.length;
       lhio_ebml_header_at(fd, at, segment_end, &header) && header.size != UINT64_MAX &&
       header.size <= (uint64_t)(segment_end - at) - header.length;
       at += (off_t)(header.length + header.size))
    if (!each(fd, at, &header, data))
      break;
  return true;
}
