/* video-kind.c: tells video files from images by their first bytes (and by
 * their name as a hint), in every build, with or without GStreamer. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lhio-private.h"
#include "lhio-video.h"
#include "lhio.h"

/* NUT's file ID string, its terminating NUL included. */
#define NUT_MAGIC "nut/multimedia container"
/* Zero bytes at a Motion JPEG file's end looked through, at most, for its
 * last frame's end (all zeros: the end is not told). */
#define MOTION_JPEG_PADDING_LIMIT ((off_t)1 << 20)

static bool at(const uint8_t *head, size_t n, size_t offset, const char *magic, size_t length)
{
  return n >= offset + length && memcmp(head + offset, magic, length) == 0;
}

/* ISO BMFF: a box size then "ftyp" and the major brand.  HEIF and AVIF
 * images are ISO BMFF too: their still-image brands are not video. */
static bool is_iso_video(const uint8_t *head, size_t n)
{
  static const char *const still_brands[] = {"heic", "heix", "mif1", "msf1", "avif"};
  if (at(head, n, 4, "ftyp", 4)) {
    if (n < 12)
      return false;
    for (size_t i = 0; i < sizeof still_brands / sizeof still_brands[0]; i++)
      if (memcmp(head + 8, still_brands[i], 4) == 0)
        return false;
    return true;
  }
  /* Old QuickTime files begin with another top-level atom. */
  static const char *const atoms[] = {"moov", "mdat", "wide", "free", "skip", "pnot"};
  for (size_t i = 0; i < sizeof atoms / sizeof atoms[0]; i++)
    if (at(head, n, 4, atoms[i], 4))
      return true;
  return false;
}

/* A DV stream (DIF): its first block a header block (section type 0,
 * sequence 0, block 0; the DSF bit then ones) and the next a subcode block
 * (section type 1), as FFmpeg and camcorders write it. */
static bool is_dv(const uint8_t *head, size_t n)
{
  return n >= 84 && head[0] == 0x1f && head[1] == 0x07 && head[2] == 0x00 &&
         (head[3] & 0x7f) == 0x3f && head[80] == 0x3f && head[81] == 0x07 && head[82] == 0x00;
}

/* MPEG-TS packets of 188 bytes (or M2TS's of 192, a 4-byte time code first):
 * the sync byte 0x47 at the start of three packets in a row. */
static bool is_transport_stream(const uint8_t *head, size_t n)
{
  const size_t sizes[] = {188, 192};
  const size_t offsets[] = {0, 4};
  for (int k = 0; k < 2; k++) {
    bool all = n >= offsets[k] + 2 * sizes[k] + 1;
    for (int i = 0; all && i < 3; i++)
      all = head[offsets[k] + (size_t)i * sizes[k]] == 0x47;
    if (all)
      return true;
  }
  return false;
}

/* A bare elementary stream as encoders write it: a start code (00 00 01,
 * or 00 00 00 01 for H.264 and H.265) and then what such a stream begins
 * with: H.264's sequence parameter set or access unit delimiter (NAL types
 * 7, 9), H.265's video parameter set or delimiter (32, 35), MPEG-1/2's
 * sequence header (B3).  The extension, or "". */
static const char *elementary_stream_extension(const uint8_t *head, size_t n)
{
  size_t at = n >= 4 && head[0] == 0 && head[1] == 0 && head[2] == 0 && head[3] == 1 ? 4
              : n >= 3 && head[0] == 0 && head[1] == 0 && head[2] == 1               ? 3
                                                                                     : 0;
  if (at == 0 || n < at + 2)
    return "";
  if (at == 3 && head[3] == 0xb3)
    return ".m2v";
  const uint8_t nal = head[at];
  if (nal & 0x80) /* forbidden_zero_bit */
    return "";
  const int h264_type = nal & 0x1f, h265_type = (nal >> 1) & 0x3f;
  /* H.265's header has a zero layer id and a temporal id plus one of 1. */
  if ((h265_type == 32 || h265_type == 35) && (nal & 1) == 0 && head[at + 1] == 1)
    return ".hevc";
  if ((h264_type == 7 || h264_type == 9) && (h264_type == 9 || (nal & 0x60) != 0))
    return ".h264";
  return "";
}

const char *lhio_video_extension(const uint8_t *head, size_t n)
{
  static const uint8_t ebml[] = {0x1a, 0x45, 0xdf, 0xa3};
  static const uint8_t mpeg_ps[] = {0x00, 0x00, 0x01, 0xba};
  static const uint8_t mxf[] = {0x06, 0x0e, 0x2b, 0x34};
  static const uint8_t asf[] = {0x30, 0x26, 0xb2, 0x75, 0x8e, 0x66, 0xcf, 0x11};
  if (!head)
    return "";
  if (is_iso_video(head, n)) {
    /* QuickTime's brand, or an old QuickTime file with no ftyp at all. */
    if (!at(head, n, 4, "ftyp", 4) || at(head, n, 8, "qt  ", 4))
      return ".mov";
    return at(head, n, 8, "3g", 2) ? ".3gp" : ".mp4";
  }
  if (at(head, n, 0, (const char *)ebml, sizeof ebml)) {
    /* The EBML header's DocType comes within its first few dozen bytes. */
    for (size_t i = 0; i + 4 <= n && i < 64; i++)
      if (memcmp(head + i, "webm", 4) == 0)
        return ".webm";
    return ".mkv";
  }
  if (is_transport_stream(head, n))
    return n > 188 && head[0] == 0x47 && head[188] == 0x47 ? ".ts" : ".m2ts";
  if (at(head, n, 0, "RIFF", 4) && at(head, n, 8, "AVI ", 4))
    return ".avi";
  if (at(head, n, 0, "YUV4MPEG2", 9))
    return ".y4m";
  if (at(head, n, 0, (const char *)mpeg_ps, sizeof mpeg_ps))
    return ".mpg";
  if (at(head, n, 0, "FLV\x01", 4))
    return ".flv";
  if (at(head, n, 0, "DKIF", 4))
    return ".ivf";
  if (at(head, n, 0, (const char *)mxf, sizeof mxf))
    return ".mxf";
  if (at(head, n, 0, (const char *)asf, sizeof asf))
    return ".asf";
  if (at(head, n, 0, "OggS", 4))
    return ".ogv";
  if (at(head, n, 0, ".RMF", 4))
    return ".rm";
  if (is_dv(head, n))
    return ".dv";
  /* GStreamer reads no NUT file (lhio_video_unreadable_container), but a
   * NUT file is a video, to be refused as one, not as an image. */
  if (at(head, n, 0, NUT_MAGIC, sizeof NUT_MAGIC))
    return ".nut";
  return elementary_stream_extension(head, n);
}

bool lhio_sniff_video(const uint8_t *head, size_t n)
{
  return lhio_video_extension(head, n)[0] != '\0';
}

/* ASCII case only: strcasecmp follows the locale (a Python program may have
 * set its user's), and in a Turkish one "AVI" is not "avi". */
static bool ascii_equal_ignoring_case(const char *a, const char *b)
{
  for (; *a && *b; a++, b++) {
    char ca = *a >= 'A' && *a <= 'Z' ? (char)(*a - 'A' + 'a') : *a;
    char cb = *b >= 'A' && *b <= 'Z' ? (char)(*b - 'A' + 'a') : *b;
    if (ca != cb)
      return false;
  }
  return *a == *b;
}

/* The extension of path's last component (its last dot on), or NULL. */
static const char *extension_of(const char *path)
{
  const char *dot = path ? strrchr(path, '.') : NULL;
  return dot && !strchr(dot, '/') ? dot : NULL;
}

bool lhio_is_video_name(const char *path)
{
  /* After the usual ones: RealMedia; AVI as DivX named it; MPEG-1/2
   * program and elementary streams, JVC camcorders' .tod and DVD-VR's
   * .vro; MPEG-TS as set-top boxes name it; stereoscopic Matroska.  Not
   * .mod, which is also a tracker music file. */
  static const char *const extensions[] = {
      ".mp4", ".m4v",  ".mov",  ".qt",   ".3gp", ".mkv", ".webm", ".ts",  ".mts", ".m2ts",  ".avi",
      ".y4m", ".mpg",  ".mpeg", ".vob",  ".flv", ".ogv", ".mxf",  ".ivf", ".wmv", ".asf",   ".h264",
      ".264", ".h265", ".265",  ".hevc", ".f4v", ".3g2", ".dv",   ".dif", ".m2v", ".mjpeg", ".mjpg",
      ".rm",  ".rmvb", ".divx", ".m2p",  ".mpe", ".m1v", ".mpv",  ".tod", ".vro", ".trp",   ".mk3d",
  };
  const char *dot = extension_of(path);
  if (!dot)
    return false;
  for (size_t i = 0; i < sizeof extensions / sizeof extensions[0]; i++)
    if (ascii_equal_ignoring_case(dot, extensions[i]))
      return true;
  return false;
}

/* Where the JPEG image at the start of data ends (just after its
 * end-of-image marker), or 0 where it does not end within the bytes;
 * *indexed: it has an APP2 MPF segment (CIPA DC-007), which indexes images
 * stored after it in the same file.  The walk steps over each marker
 * segment by its length and through each scan's entropy-coded data, in
 * which 0xFF is followed by 0 (a stuffed byte) or a restart marker. */
static size_t jpeg_image_end(const uint8_t *data, size_t size, bool *indexed)
{
  *indexed = false;
  if (size < 4 || data[0] != 0xff || data[1] != 0xd8)
    return 0;
  size_t at = 2;
  while (at + 2 <= size) {
    if (data[at] != 0xff)
      return 0;
    const uint8_t marker = data[at + 1];
    if (marker == 0xff) { /* fill byte */
      at++;
      continue;
    }
    if (marker == 0xd9)
      return at + 2;
    if ((marker >= 0xd0 && marker <= 0xd7) || marker == 0x01) { /* no length */
      at += 2;
      continue;
    }
    if (at + 4 > size)
      return 0;
    const size_t length = (size_t)data[at + 2] << 8 | data[at + 3];
    if (length < 2 || length > size - at - 2)
      return 0;
    if (marker == 0xe2 && length >= 6 && memcmp(data + at + 4, "MPF", 4) == 0)
      *indexed = true;
    at += 2 + length;
    if (marker == 0xda) { /* the scan's data, to the next marker */
      while (at + 1 < size && !(data[at] == 0xff && data[at + 1] != 0 &&
                                !(data[at + 1] >= 0xd0 && data[at + 1] <= 0xd7)))
        at++;
    }
  }
  return 0;
}

bool lhio_sniff_motion_jpeg(const uint8_t *data, size_t size)
{
  bool indexed;
  size_t end = jpeg_image_end(data, size, &indexed);
  if (end == 0 || indexed)
    return false;
  while (end < size && data[end] == 0)
    end++;
  return size - end >= 3 && data[end] == 0xff && data[end + 1] == 0xd8 && data[end + 2] == 0xff;
}

/* Motion JPEG's first bytes are a JPEG's, so only its name tells it: read as
 * an image, it was its first frame. */
static bool is_motion_jpeg_name(const char *path)
{
  const char *dot = extension_of(path);
  return dot &&
         (ascii_equal_ignoring_case(dot, ".mjpeg") || ascii_equal_ignoring_case(dot, ".mjpg"));
}

/* Standard input ('-') has no name to tell Motion JPEG by: where it is a
 * regular file (`< clip.mjpeg`), its content tells it (a pipe's is told
 * once it is read whole, by the image reader).  Its first image is read, a
 * MiB and then twice as much at a time, up to UNNAMED_JPEG_LIMIT (no
 * mapping: a file cut while mapped would end the process). */
#define UNNAMED_JPEG_LIMIT ((size_t)64 << 20)

static bool is_unnamed_motion_jpeg(const char *path)
{
  if (strcmp(path, "/dev/stdin") != 0)
    return false;
  off_t size;
  const int fd = lhio_open_regular(path, &size);
  if (fd < 0)
    return false;
  bool motion = false, indexed;
  uint8_t *bytes = NULL;
  size_t have = 0;
  for (size_t want = (size_t)1 << 20; have < UNNAMED_JPEG_LIMIT; want *= 2) {
    if (want > UNNAMED_JPEG_LIMIT)
      want = UNNAMED_JPEG_LIMIT;
    uint8_t *grown = realloc(bytes, want);
    if (!grown)
      break;
    bytes = grown;
    const ssize_t got = pread(fd, bytes + have, want - have, (off_t)have);
    if (got <= 0)
      break;
    have += (size_t)got;
    /* Decided once what was read holds the first image's end and a byte
     * after it that is no zero padding, or is the whole file. */
    size_t after = jpeg_image_end(bytes, have, &indexed);
    while (after > 0 && after < have && bytes[after] == 0)
      after++;
    if ((after > 0 && after + 3 <= have) || have < want) {
      motion = lhio_sniff_motion_jpeg(bytes, have);
      break;
    }
  }
  free(bytes);
  close(fd);
  return motion;
}

/* The first bytes of a regular file into head (LHIO_VIDEO_SNIFF_BYTES);
 * -1 where it cannot be read, -2 where it is no regular file (a pipe or
 * device, not read ahead of its decoder: its name decides). */
static long read_head(const char *path, uint8_t *head)
{
  struct stat info;
  if (stat(path, &info) != 0)
    return -1;
  if (!S_ISREG(info.st_mode))
    return -2;
  FILE *file = fopen(path, "rb");
  if (!file)
    return -1;
  size_t n = fread(head, 1, LHIO_VIDEO_SNIFF_BYTES, file);
  fclose(file);
  return (long)n;
}

bool lhio_path_is_video(const char *path)
{
  uint8_t head[LHIO_VIDEO_SNIFF_BYTES];
  const long got = read_head(path, head);
  if (got == -2)
    return lhio_is_video_name(path);
  if (got < 0)
    return false;
  const size_t n = (size_t)got;
  if (lhio_sniff_video(head, n))
    return true;
  const LhioFileType type = lhio_sniff(head, n);
  if (type == LHIO_FILE_JPEG && (is_motion_jpeg_name(path) || is_unnamed_motion_jpeg(path)))
    return true;
  return lhio_is_video_name(path) && type == LHIO_FILE_UNKNOWN;
}

bool lhio_is_motion_jpeg(const char *path)
{
  if (is_unnamed_motion_jpeg(path))
    return true;
  if (!is_motion_jpeg_name(path))
    return false;
  uint8_t head[LHIO_VIDEO_SNIFF_BYTES];
  const long got = read_head(path, head);
  return got == -2 || (got >= 0 && lhio_sniff(head, (size_t)got) == LHIO_FILE_JPEG);
}

bool lhio_motion_jpeg_cut(const char *path, char *why, size_t why_size)
{
  off_t size;
  int fd = lhio_open_regular(path, &size);
  if (fd < 0)
    return false;
  /* The last byte that is not zero padding, looked for backwards a block
   * at a time: a recorder that sets the file's size first may leave far
   * more than a block of zeros after a frame it was cut inside. */
  uint8_t block[4096];
  off_t last = -1;
  for (off_t end = size; end > 0 && last < 0 && size - end < MOTION_JPEG_PADDING_LIMIT;) {
    const off_t from = end > (off_t)sizeof block ? end - (off_t)sizeof block : 0;
    const ssize_t got = pread(fd, block, (size_t)(end - from), from);
    if (got != (ssize_t)(end - from))
      break;
    for (size_t n = (size_t)got; n > 0 && last < 0; n--)
      if (block[n - 1] != 0)
        last = from + (off_t)(n - 1);
    end = from;
  }
  uint8_t marker[2] = {0, 0};
  const bool cut = last >= 0 && !(last >= 1 && pread(fd, marker, 2, last - 1) == 2 &&
                                  marker[0] == 0xff && marker[1] == 0xd9);
  close(fd);
  if (cut)
    snprintf(why, why_size,
             "the file is truncated: its last frame has no end-of-image marker (cut inside it)");
  return cut;
}

int lhio_video_unreadable_container(const char *path, char *why, size_t why_size)
{
  /* Only a regular file is looked at: opening a FIFO with no writer blocks
   * for good, and one that has a writer must not lose its first bytes. */
  struct stat info;
  if (stat(path, &info) != 0 || !S_ISREG(info.st_mode))
    return 0;
  FILE *file = fopen(path, "rb");
  if (!file)
    return 0;
  uint8_t head[sizeof NUT_MAGIC];
  size_t n = fread(head, 1, sizeof head, file);
  fclose(file);
  if (!at(head, n, 0, NUT_MAGIC, sizeof NUT_MAGIC))
    return 0;
  snprintf(why, why_size,
           "a NUT file: GStreamer 1.22 has no working demuxer for NUT (gst-libav's avdemux_nut "
           "never ends a raw video stream and fails on H.264); convert it to another container");
  return LH_ERROR_UNSUPPORTED;
}
