/* mkv-attachments.c: how many files a Matroska file carries attached (the
 * fonts its ASS subtitles are drawn with, a cover picture).  GStreamer
 * 1.22's matroskamux writes no attachments, so a file rewritten from one
 * comes out without them, and that is said rather than left unnoticed. */
#include <fcntl.h>
#include <unistd.h>

#include "lhio-private.h"

#define ID_ATTACHMENTS 0x1941A469u
#define ID_ATTACHED_FILE 0x61A7u

static bool count_attached(int fd, off_t at, const LhioEbmlHeader *header, void *data)
{
  int *count = data;
  if (header->id != ID_ATTACHMENTS)
    return true;
  const off_t end = at + (off_t)(header->length + header->size);
  LhioEbmlHeader child;
  for (off_t file = at + (off_t)header->length;
       lhio_ebml_header_at(fd, file, end, &child) && child.size != UINT64_MAX &&
       child.size <= (uint64_t)(end - file) - child.length;
       file += (off_t)(child.length + child.size))
    *count += child.id == ID_ATTACHED_FILE;
  return true;
}

int lhio_mkv_attachments(const char *path)
{
  off_t size;
  int fd = lhio_open_regular(path, &size);
  if (fd < 0)
    return 0;
  int count = 0;
  lhio_mkv_segment_children(fd, count_attached, &count);
  close(fd);
  return count;
}
