/* mp4-end.c: whether an MP4 or QuickTime file was cut inside its media.
 * qtdemux ends such a file quietly at the last whole sample: a file whose
 * sample tables come first (faststart, a fragmented file) loses its last
 * frames without a word, and the frames' times show that only where more
 * than half a second is gone.  The boxes tell it exactly: each top-level
 * box states its size, and a cut leaves the one it falls in (the media
 * data, a fragment) running past the end of the file. */
#include <string.h>
#include <unistd.h>

#include "lhio-private.h"

/* The boxes whose cut loses media: the samples themselves, a fragment's
 * tables, the movie's.  Bytes after the last box that do not make one
 * (padding, a trailer some writer appends) are no cut. */
static bool carries_media(const uint8_t type[4])
{
  return memcmp(type, "mdat", 4) == 0 || memcmp(type, "moof", 4) == 0 ||
         memcmp(type, "moov", 4) == 0;
}

int lhio_mp4_file_cut(const char *path, char *why, size_t why_size)
{
  if (why_size)
    why[0] = '\0';
  off_t end;
  int fd = lhio_open_regular(path, &end);
  if (fd < 0)
    return 0; /* a pipe is read once, by the demuxer */
  int cut = 0;
  for (off_t at = 0; end - at >= 8;) {
    uint8_t head[16];
    const ssize_t got = pread(fd, head, sizeof head, at);
    if (got < 8)
      break;
    uint64_t length = lhio_be32(head);
    if (length == 0)
      break; /* the last box, to the end of the file */
    if (length == 1) {
      if (got < 16)
        break;
      length = (uint64_t)lhio_be32(head + 8) << 32 | lhio_be32(head + 12);
      if (length < 16)
        break;
    } else if (length < 8) {
      break; /* not a box: nothing more can be told */
    }
    if (length > (uint64_t)(end - at)) {
      if (carries_media(head + 4)) {
        snprintf(why, why_size, "it ends %lld bytes into its %llu-byte %.4s box",
                 (long long)(end - at), (unsigned long long)length, (const char *)head + 4);
        cut = 1;
      }
      break;
    }
    at += (off_t)length;
  }
  close(fd);
  return cut;
}
