/* fuzz-mkv.c: libFuzzer target for the EBML element headers that Matroska and
 * WebM files are made of (lhio_ebml_header in memory, lhio_ebml_header_at
 * from a file) and for the walk over a file's segment that tells where its
 * video track ends and whether it was cut (lhio_mkv_video_end), and the
 * one that counts its attached files (lhio_mkv_attachments).  Any bytes
 * give a header that lies within the bytes given (or before the end given:
 * a read past either is caught), the one that exactly its own bytes give
 * and that one byte less does not; an answer of the walk that is one it
 * promises, the same at every call; and the file as it was. */
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz-common.h"
#include "fuzz-file.h"
#include "lhio-private.h"

/* Offsets of the input at which a header is read, at most. */
#define MAX_OFFSETS 64
/* Bytes given to lhio_ebml_header at an offset, at most. */
#define HEADER_ROOM 16

static bool same_header(const LhioEbmlHeader *a, const LhioEbmlHeader *b)
{
  return a->id == b->id && a->size_width == b->size_width && a->size == b->size &&
         a->length == b->length;
}

/* The header in available bytes at data: false, or one that is what its
 * bytes say.  Read from an exact-size copy of at most HEADER_ROOM bytes
 * (copies of the whole input at every offset would make each run slow):
 * a header is 12 bytes at most, and the same from more. */
static bool check_header(const uint8_t *data, size_t available, LhioEbmlHeader *header)
{
  if (available > HEADER_ROOM)
    available = HEADER_ROOM;
  uint8_t *copy = fuzz_copy(data, available);
  const bool ok = lhio_ebml_header(copy, available, header);
  free(copy);
  if (!ok)
    return false;
  FUZZ_ASSERT(available >= 2);
  const int id_width = (int)header->length - header->size_width;
  FUZZ_ASSERT(id_width >= 1 && id_width <= 4);
  FUZZ_ASSERT(header->size_width >= 1 && header->size_width <= 8);
  FUZZ_ASSERT(header->length <= available);
  /* The ID keeps its marker: its first byte is the data's first. */
  FUZZ_ASSERT(header->id >> 8 * (id_width - 1) == data[0]);
  FUZZ_ASSERT(header->size == UINT64_MAX ||
              header->size < ((uint64_t)1 << 7 * header->size_width) - 1);
  /* Its own bytes are enough, one fewer are not. */
  LhioEbmlHeader again;
  copy = fuzz_copy(data, header->length);
  FUZZ_ASSERT(lhio_ebml_header(copy, header->length, &again) && same_header(&again, header));
  FUZZ_ASSERT(!lhio_ebml_header(copy, header->length - 1, &again));
  free(copy);
  return true;
}

/* The header at offset at of the file on fd (the input's size bytes),
 * before end: the one its bytes there hold, within them. */
static void check_header_at(int fd, const uint8_t *data, size_t size, off_t at, off_t end)
{
  LhioEbmlHeader header, expected;
  const bool ok = lhio_ebml_header_at(fd, at, end, &header);
  if (at >= end || (size_t)at >= size) {
    FUZZ_ASSERT(!ok);
    return;
  }
  size_t available = size - (size_t)at;
  if ((uint64_t)(end - at) < available)
    available = (size_t)(end - at);
  FUZZ_ASSERT(ok == check_header(data + at, available, &expected));
  if (ok) {
    FUZZ_ASSERT(same_header(&header, &expected));
    FUZZ_ASSERT(header.length <= (uint64_t)(end - at));
  }
}

static bool same_end(const LhioMkvVideoEnd *a, const LhioMkvVideoEnd *b)
{
  /* NAN is not equal to itself. */
  return ((isnan(a->video_end) && isnan(b->video_end)) || a->video_end == b->video_end) &&
         a->other_tracks == b->other_tracks && a->cut == b->cut &&
         ((isnan(a->cut_at) && isnan(b->cut_at)) || a->cut_at == b->cut_at);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  /* The whole input, then the first bytes at each offset. */
  LhioEbmlHeader header, first;
  uint8_t *copy = fuzz_copy(data, size);
  const bool whole = lhio_ebml_header(copy, size, &header);
  free(copy);
  FUZZ_ASSERT(whole == check_header(data, size, &first));
  FUZZ_ASSERT(!whole || same_header(&header, &first));
  for (size_t at = 1; at < size && at < MAX_OFFSETS; at++)
    check_header(data + at, size - at, &header);

  const char *path = fuzz_input_file("input.mkv", data, size);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  FUZZ_ASSERT(fd >= 0);
  /* The elements one after the other from the start, as the segment's
   * children are walked, each before the file's end, before its own end,
   * one byte before that and a byte after the start. */
  off_t at = 0;
  for (int count = 0; count < MAX_OFFSETS && (size_t)at < size; count++) {
    const off_t ends[] = {(off_t)size, (off_t)size + 100, at + 1, at + 2, at + data[at] % 13};
    for (size_t i = 0; i < sizeof ends / sizeof ends[0]; i++)
      check_header_at(fd, data, size, at, ends[i]);
    if (!lhio_ebml_header_at(fd, at, (off_t)size, &header) || header.size == UINT64_MAX ||
        header.size > size)
      break;
    check_header_at(fd, data, size, at, at + (off_t)(header.length + header.size));
    check_header_at(fd, data, size, at, at + (off_t)(header.length + header.size) - 1);
    /* Into a master element's data when it is one (the first child). */
    at += (off_t)header.length + (data[at] & 1 ? 0 : (off_t)header.size);
  }
  FUZZ_ASSERT(!lhio_ebml_header_at(fd, (off_t)size, (off_t)size + 12, &header));
  close(fd);

  LhioMkvVideoEnd end, again;
  const bool found = lhio_mkv_video_end(path, &end);
  /* Cut: the segment (after the EBML header, when there is one of known
   * size) states a size that runs past the file's end. */
  size_t segment = 0;
  if (check_header(data, size, &header) && header.id == 0x1A45DFA3u &&
      header.size <= size - header.length)
    segment = header.length + (size_t)header.size;
  const bool cut = segment < size && check_header(data + segment, size - segment, &header) &&
                   header.id == 0x18538067u && header.size != UINT64_MAX &&
                   header.size > size - segment - header.length;
  FUZZ_ASSERT(!found || end.cut == cut);
  if (found) {
    FUZZ_ASSERT(isnan(end.video_end) || (isfinite(end.video_end) && end.video_end > 0));
    FUZZ_ASSERT(end.cut || isnan(end.cut_at));
    FUZZ_ASSERT(isnan(end.cut_at) || isfinite(end.cut_at));
  }
  FUZZ_ASSERT(lhio_mkv_video_end(path, &again) == found);
  FUZZ_ASSERT(!found || same_end(&end, &again));
  /* The attached files, counted on the same walk over the segment: no
   * more than the bytes could hold (an AttachedFile header is 3 bytes). */
  const int attached = lhio_mkv_attachments(path);
  FUZZ_ASSERT(attached >= 0 && (size_t)attached <= size / 3);
  FUZZ_ASSERT(lhio_mkv_attachments(path) == attached);

  fuzz_check_unchanged(path, data, size);
  return 0;
}
