/* y4m-end.c: what a YUV4MPEG2 file's header and frames tell before and
 * after GStreamer's y4mdec reads it.  Its header states the frame's size and
 * shape (W, H and the C tag of the chroma), and each frame is "FRAME",
 * optional parameters, a newline and its planes, so the frames are walked
 * from the header on, a frame header at a time, to tell whether the file
 * was cut in the middle of one: y4mdec drops a short last frame quietly,
 * and a file states no duration to hold the frames against.  Bytes after
 * the last whole frame that do not begin one are left alone: junk, not a
 * cut.  The header also tells the samples' range (FFmpeg's XCOLORRANGE
 * tag), which y4mdec does not read.  Before it is read, the header tells what y4mdec would fail on
 * with a message that reads as damage ("Failed to parse YUV4MPEG header"): a colour space it does
 * not read, and no frame at all; and a file cut inside its first frame, on which the pipeline would
 * wait for a frame until it timed out. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/* What a stream header states of its frames. */
typedef struct {
  uint64_t width, height;
  const char *chroma; /* the C tag's value, not terminated; "420" when there is none */
  size_t chroma_length;
  bool chroma_stated;
  bool full_range; /* XCOLORRANGE=FULL, FFmpeg's tag of full-range samples */
} Y4mHeader;

/* Reads the header line (length bytes, without its newline); false when
 * it states no frame size this reads. */
static bool parse_header(const char *header, size_t length, Y4mHeader *parsed)
{
  *parsed = (Y4mHeader){.chroma = "420", .chroma_length = 3};
  for (size_t at = sizeof MAGIC - 1; at < length;) {
    size_t end = at;
    while (end < length && header[end] != ' ')
      end++;
    char token[32] = "";
    if (end - at < sizeof token)
      memcpy(token, header + at, end - at);
    if (token[0] == 'W')
      parsed->width = strtoull(token + 1, NULL, 10);
    else if (token[0] == 'H')
      parsed->height = strtoull(token + 1, NULL, 10);
    else if (header[at] == 'C') {
      parsed->chroma = header + at + 1;
      parsed->chroma_length = end - at - 1;
      parsed->chroma_stated = true;
    } else if (strcmp(token, "XCOLORRANGE=FULL") == 0) {
      parsed->full_range = true;
    }
    at = end + 1;
  }
  /* A frame of more than 2^40 bytes is no frame a header states sensibly. */
  return parsed->width > 0 && parsed->height > 0 && parsed->width <= (1u << 20) &&
         parsed->height <= (1u << 20);
}

/* The frame size the header line (length bytes, without its newline)
 * states; 0 when it states none this reads. */
static uint64_t stated_frame_bytes(const char *header, size_t length)
{
  Y4mHeader parsed;
  if (!parse_header(header, length, &parsed))
    return 0;
  return frame_bytes(parsed.width, parsed.height, parsed.chroma, parsed.chroma_length);
}

/* Whether GStreamer 1.22's y4mdec reads frames of this header right.  It
 * takes the C tag's leading number alone (C0420 is C420): 420, 422 and 444
 * are read as 8-bit I420, Y42B and Y444 whatever follows, any other fails
 * the header ("Failed to parse YUV4MPEG header": C411, Cmono); a tag that
 * states other frames (C420p10, C444alpha) fails at the first frame
 * header, which is not where 8-bit planes would end ("Failed to parse
 * YUV4MPEG frame").  A suffix this does not know (C420xyz) is left to
 * y4mdec, which reads it. */
static bool y4mdec_reads(const Y4mHeader *parsed)
{
  if (!parsed->chroma_stated)
    return true;
  char tag[32] = "";
  if (parsed->chroma_length < sizeof tag)
    memcpy(tag, parsed->chroma, parsed->chroma_length);
  const unsigned long shape = strtoul(tag, NULL, 10);
  if (shape != 420 && shape != 422 && shape != 444)
    return false;
  char eight_bit[4];
  snprintf(eight_bit, sizeof eight_bit, "%lu", shape);
  const uint64_t stated =
      frame_bytes(parsed->width, parsed->height, parsed->chroma, parsed->chroma_length);
  return stated == 0 || stated == frame_bytes(parsed->width, parsed->height, eight_bit, 3);
}

/* The file at path opened, its start read into buffer (HEADER_BYTES, *got
 * bytes) and *size its size; -1 when it is no regular YUV4MPEG2 file. */
static int open_header(const char *path, char *buffer, size_t *got, uint64_t *size)
{
  off_t file_size;
  int fd = lhio_open_regular(path, &file_size);
  if (fd < 0)
    return -1;
  const ssize_t n = pread(fd, buffer, HEADER_BYTES, 0);
  if (n < (ssize_t)(sizeof MAGIC - 1) || memcmp(buffer, MAGIC, sizeof MAGIC - 1) != 0) {
    close(fd);
    return -1;
  }
  *got = (size_t)n;
  *size = (uint64_t)file_size;
  return fd;
}

/* Walks the frames of the file open on fd (its header's first header_got
 * bytes in buffer, size bytes in all) from the first on, at most
 * max_frames of them: 1, with why, when the file ends inside one of
 * those; 0 when they are whole, or junk follows.  *whole (if not NULL):
 * the whole frames walked. */
static int find_cut(int fd, char *buffer, size_t header_got, uint64_t size, uint64_t max_frames,
                    char *why, size_t why_size, uint64_t *whole)
{
  uint64_t whole_frames = 0;
  if (!whole)
    whole = &whole_frames;
  *whole = 0;
  const char *newline = memchr(buffer, '\n', header_got);
  const uint64_t planes = newline ? stated_frame_bytes(buffer, (size_t)(newline - buffer)) : 0;
  uint64_t at = newline ? (uint64_t)(newline - buffer) + 1 : size;
  for (uint64_t walked = 0; planes > 0 && at < size && walked < max_frames; walked++) {
    const ssize_t got = pread(fd, buffer, FRAME_HEADER_BYTES, (off_t)at);
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
      return 1;
    }
    at += frame;
    ++*whole;
  }
  return 0;
}

int lhio_y4m_unreadable(const char *path, char *why, size_t why_size)
{
  char buffer[HEADER_BYTES];
  size_t got;
  uint64_t size;
  int fd = open_header(path, buffer, &got, &size);
  if (fd < 0)
    return 0;
  const char *newline = memchr(buffer, '\n', got);
  Y4mHeader parsed;
  int status = 0;
  char cut[96];
  if (!newline || !parse_header(buffer, (size_t)(newline - buffer), &parsed)) {
    status = 0;
  } else if (!y4mdec_reads(&parsed)) {
    snprintf(why, why_size,
             "YUV4MPEG2 colour space C%.*s: GStreamer's y4mdec reads only 8-bit 4:2:0, 4:2:2 "
             "and 4:4:4 (C420, C422, C444)",
             (int)parsed.chroma_length, parsed.chroma);
    status = LH_ERROR_UNSUPPORTED;
  } else if ((uint64_t)(newline - buffer) + 1 == size) {
    snprintf(why, why_size, "no frame: the YUV4MPEG2 file ends after its header");
    status = LH_ERROR_UNSUPPORTED;
  } else if (find_cut(fd, buffer, got, size, 1, cut, sizeof cut, NULL)) {
    /* y4mdec then never states its caps, and the pipeline waits for a
     * frame that will not come until --video-timeout. */
    snprintf(why, why_size, "the file is truncated: %s, the first (no frame to decode)", cut);
    status = LH_ERROR_CORRUPT;
  }
  close(fd);
  return status;
}

int lhio_y4m_end(const char *path, uint64_t frames_decoded, char *why, size_t why_size)
{
  char buffer[HEADER_BYTES], cut[96];
  size_t header_got;
  uint64_t size, whole;
  int fd = open_header(path, buffer, &header_got, &size);
  if (fd < 0)
    return 0; /* a pipe is read once, by y4mdec */
  int status = 0;
  if (find_cut(fd, buffer, header_got, size, UINT64_MAX, cut, sizeof cut, &whole)) {
    snprintf(why, why_size, "the file is truncated: %s", cut);
    status = LH_ERROR_CORRUPT;
  } else if (whole > frames_decoded) {
    /* GStreamer 1.22's y4mdec drops a file's last 60 to 72 bytes of
     * frames quietly: the last frames of a video of 6x6 pixels or less. */
    snprintf(why, why_size,
             "GStreamer's y4mdec decoded %llu of the file's %llu frames (it drops the last "
             "bytes of a file of frames this small)",
             (unsigned long long)frames_decoded, (unsigned long long)whole);
    status = LH_ERROR_UNSUPPORTED;
  }
  close(fd);
  return status;
}

bool lhio_y4m_states_full_range(const char *path)
{
  char buffer[HEADER_BYTES];
  size_t got;
  uint64_t size;
  int fd = open_header(path, buffer, &got, &size);
  if (fd < 0)
    return false;
  close(fd);
  const char *newline = memchr(buffer, '\n', got);
  Y4mHeader parsed;
  return newline && parse_header(buffer, (size_t)(newline - buffer), &parsed) && parsed.full_range;
}
