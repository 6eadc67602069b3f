/* y4m-end.c: tells whether a YUV4MPEG2 file was cut in the middle of a
 * frame.  Its header states the frame's size and shape (W, H and the C tag
 * of the chroma), and each frame is "FRAME", optional parameters, a newline
 * and its planes, so the frames are walked from the header on, a frame
 * header at a time; GStreamer's y4mdec drops a short last frame quietly, and
 * a file states no duration to hold the frames against.  Bytes after the
 * last whole frame that do not begin one are left alone: junk, not a cut. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lhio-private.h"

#define MAGIC "YUV4MPEG2 "
#define FRAME_MAGIC "FRAME"
/* The stream header and a frame header are lines of text, far below these. */
#define HEADER_BYTES 4096
#define FRAME_HEADER_BYTES 1024

/* The bytes of one frame's planes for a header's W, H and C tag (a missing
 * C is 4:2:0); 0 for a chroma tag not known. */
static uint64_t frame_bytes(uint64_t width, uint64_t height, const char *chroma, size_t length)
{
  const uint64_t half_width = (width + 1) / 2, quarter_width = (width + 3) / 4;
  const uint64_t half_height = (height + 1) / 2;
  uint64_t chroma_samples;
  size_t shape;
  if (length >= 3 && strncmp(chroma, "420", 3) == 0) {
    chroma_samples = 2 * half_width * half_height;
    shape = 3;
  } else if (length >= 3 && strncmp(chroma, "422", 3) == 0) {
    chroma_samples = 2 * half_width * height;
    shape = 3;
  } else if (length >= 3 && strncmp(chroma, "411", 3) == 0) {
    chroma_samples = 2 * quarter_width * height;
    shape = 3;
  } else if (length == 8 && strncmp(chroma, "444alpha", 8) == 0) {
    return 4 * width * height;
  } else if (length >= 3 && strncmp(chroma, "444", 3) == 0) {
    chroma_samples = 2 * width * height;
    shape = 3;
  } else if (length >= 4 && strncmp(chroma, "mono", 4) == 0) {
    chroma_samples = 0;
    shape = 4;
  } else {
    return 0;
  }
  /* 420jpeg, 420paldv and 420mpeg2 site their chroma apart, the same size;
   * p10, p12, p16 (and mono16) take two bytes a sample. */
  const char *rest = chroma + shape;
  const size_t rest_length = length - shape;
  uint64_t sample_bytes = 1;
  if (rest_length >= 2 && (rest[0] == 'p' || (shape == 4 && rest[0] >= '0' && rest[0] <= '9'))) {
    int depth = atoi(rest[0] == 'p' ? rest + 1 : rest);
    if (depth <= 8 || depth > 16)
      return 0;
    sample_bytes = 2;
  } else if (shape == 3 && rest_length > 0 && strncmp(rest, "jpeg", rest_length) != 0 &&
             strncmp(rest, "paldv", rest_length) != 0 && strncmp(rest, "mpeg2", rest_length) != 0) {
    return 0;
  }
  return (width * height + chroma_samples) * sample_bytes;
}

/* The frame size the header line (length bytes, without its newline)
 * states; 0 when it states none this reads. */
static uint64_t stated_frame_bytes(const char *header, size_t length)
{
  uint64_t width = 0, height = 0;
  const char *chroma = "420";
  size_t chroma_length = 3;
  for (size_t at = sizeof MAGIC - 1; at < length;) {
    size_t end = at;
    while (end < length && header[end] != ' ')
      end++;
    char token[32] = "";
    if (end - at < sizeof token)
      memcpy(token, header + at, end - at);
    if (token[0] == 'W')
      width = strtoull(token + 1, NULL, 10);
    else if (token[0] == 'H')
      height = strtoull(token + 1, NULL, 10);
    else if (header[at] == 'C') {
      chroma = header + at + 1;
      chroma_length = end - at - 1;
    }
    at = end + 1;
  }
  /* A frame of more than 2^40 bytes is no frame a header states sensibly. */
  if (width == 0 || height == 0 || width > (1u << 20) || height > (1u << 20))
    return 0;
  return frame_bytes(width, height, chroma, chroma_length);
}

int lhio_y4m_file_cut(const char *path, char *why, size_t why_size)
{
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return 0;
  struct stat info;
  char buffer[HEADER_BYTES];
  int cut = 0;
  ssize_t got;
  if (fstat(fd, &info) != 0 || !S_ISREG(info.st_mode) ||
      (got = pread(fd, buffer, sizeof buffer, 0)) < (ssize_t)(sizeof MAGIC - 1) ||
      memcmp(buffer, MAGIC, sizeof MAGIC - 1) != 0) {
    close(fd);
    return 0;
  }
  const char *newline = memchr(buffer, '\n', (size_t)got);
  const uint64_t planes = newline ? stated_frame_bytes(buffer, (size_t)(newline - buffer)) : 0;
  const uint64_t size = (uint64_t)info.st_size;
  uint64_t at = newline ? (uint64_t)(newline - buffer) + 1 : size;
  while (planes > 0 && at < size) {
    got = pread(fd, buffer, FRAME_HEADER_BYTES, (off_t)at);
    if (got <= 0)
      break;
    const size_t available = (size_t)got;
    /* Not the start of a frame, not even a cut one: junk after the last. */
    const size_t magic = available < sizeof FRAME_MAGIC - 1 ? available : sizeof FRAME_MAGIC - 1;
    if (memcmp(buffer, FRAME_MAGIC, magic) != 0)
      break;
    newline = memchr(buffer, '\n', available);
    if (!newline && available == FRAME_HEADER_BYTES)
      break; /* no frame header this long */
    const uint64_t frame = newline ? (uint64_t)(newline - buffer) + 1 + planes : 0;
    if (!newline || at + frame > size) {
      snprintf(why, why_size, "it ends %llu bytes into a %llu-byte YUV4MPEG2 frame",
               (unsigned long long)(size - at),
               (unsigned long long)(newline ? frame : sizeof FRAME_MAGIC + planes));
      cut = 1;
      break;
    }
    at += frame;
  }
  close(fd);
  return cut;
}
