/* fuzz-video-kind.c: libFuzzer target for what tells a video file from an
 * image (video-kind.c): the sniffers of a file's first bytes
 * (lhio_video_extension, lhio_sniff_video) on an exact-size copy, the
 * names (lhio_is_video_name), lhio_sniff_motion_jpeg on an exact-size
 * copy (a yes only for a JPEG start, an end marker and a second start),
 * lhio_other_image_kind on the head (none for a PNG or JPEG),
 * and, on the input written to files named as
 * they key on (.bin, .mkv, .MJPEG, .mjpg), lhio_path_is_video,
 * lhio_is_motion_jpeg, lhio_motion_jpeg_cut and
 * lhio_video_unreadable_container.  Any bytes give an extension of the
 * known ones (one a video's name takes), the same from the first
 * LHIO_VIDEO_SNIFF_BYTES as from all; a path's answer as lhio-video.h
 * states it from its content and name; a reason exactly when a cut or an
 * unreadable container is told, the same answer whatever room the reason
 * gets; and the files as they were. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz-common.h"
#include "fuzz-file.h"
#include "lhio-private.h"
#include "lhio-video.h"

/* Zero padding lhio_motion_jpeg_cut looks through for a frame's end. */
#define MOTION_JPEG_PADDING ((size_t)1 << 20)

static const char *const known_extensions[] = {
    ".mov", ".3gp", ".mp4", ".webm", ".mkv", ".ts",  ".m2ts", ".avi",  ".y4m",  ".mpg", ".flv",
    ".ivf", ".mxf", ".asf", ".ogv",  ".dv",  ".nut", ".m2v",  ".hevc", ".h264", ".rm",
};

static void check_extension(const char *extension)
{
  if (!extension[0])
    return;
  bool known = false;
  for (size_t i = 0; i < sizeof known_extensions / sizeof known_extensions[0]; i++)
    known = known || strcmp(extension, known_extensions[i]) == 0;
  FUZZ_ASSERT(known);
  /* A name with it is a video's; NUT's excepted, which no demuxer reads
   * and whose files are refused by their content. */
  char name[32];
  snprintf(name, sizeof name, "clip%s", extension);
  FUZZ_ASSERT(lhio_is_video_name(name) == (strcmp(extension, ".nut") != 0));
}

/* A reason in why (filled with 'x' before) exactly when given is true: a
 * string within the buffer; none is an empty one or the buffer untouched. */
static void check_reason(bool given, const char *why, size_t why_size)
{
  if (given)
    FUZZ_ASSERT(memchr(why, '\0', why_size) != NULL && why[0] != '\0' && why[0] != 'x');
  else
    FUZZ_ASSERT(why[0] == '\0' || why[0] == 'x');
}

/* Cut, as lhio-video.h states it: the bytes but zero padding do not end
 * with an end-of-image marker (told where the padding is not too long). */
static bool expected_cut(const uint8_t *data, size_t size, bool *told)
{
  size_t n = size;
  while (n > 0 && data[n - 1] == 0)
    n--;
  *told = size - n < MOTION_JPEG_PADDING;
  return n > 0 && !(n >= 2 && data[n - 2] == 0xff && data[n - 1] == 0xd9);
}

static void check_motion_jpeg_cut(const char *path, const uint8_t *data, size_t size)
{
  char why[192], small[1];
  memset(why, 'x', sizeof why);
  const bool cut = lhio_motion_jpeg_cut(path, why, sizeof why);
  check_reason(cut, why, sizeof why);
  bool told;
  const bool expected = expected_cut(data, size, &told);
  FUZZ_ASSERT(!told || cut == expected);
  small[0] = 'x';
  FUZZ_ASSERT(lhio_motion_jpeg_cut(path, small, 1) == cut);
  FUZZ_ASSERT(cut ? small[0] == '\0' : small[0] == '\0' || small[0] == 'x');
  FUZZ_ASSERT(lhio_motion_jpeg_cut(path, NULL, 0) == cut);
}

static void check_unreadable_container(const char *path, bool nut)
{
  char why[256], small[1];
  memset(why, 'x', sizeof why);
  const int status = lhio_video_unreadable_container(path, why, sizeof why);
  FUZZ_ASSERT(status == (nut ? LH_ERROR_UNSUPPORTED : 0));
  check_reason(status != 0, why, sizeof why);
  small[0] = 'x';
  FUZZ_ASSERT(lhio_video_unreadable_container(path, small, 1) == status);
  FUZZ_ASSERT(status ? small[0] == '\0' : small[0] == '\0' || small[0] == 'x');
  FUZZ_ASSERT(lhio_video_unreadable_container(path, NULL, 0) == status);
}

/* The input's bytes up to its first NUL as a name, and in upper case. */
static void check_names(const uint8_t *data, size_t size)
{
  const uint8_t *nul = memchr(data, '\0', size);
  const size_t length = nul ? (size_t)(nul - data) : size;
  char *name = malloc(length + 1), *upper = malloc(length + 1);
  FUZZ_ASSERT(name != NULL && upper != NULL);
  memcpy(name, data, length);
  name[length] = '\0';
  for (size_t i = 0; i <= length; i++)
    upper[i] = name[i] >= 'a' && name[i] <= 'z' ? (char)(name[i] - 'a' + 'A') : name[i];
  FUZZ_ASSERT(lhio_is_video_name(name) == lhio_is_video_name(upper));
  free(name);
  free(upper);
  FUZZ_ASSERT(!lhio_is_video_name(NULL));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  uint8_t *copy = fuzz_copy(data, size);
  const char *extension = lhio_video_extension(copy, size);
  check_extension(extension);
  FUZZ_ASSERT(lhio_sniff_video(copy, size) == (extension[0] != '\0'));
  /* Motion JPEG: a JPEG, and another one's start after the first's end. */
  if (lhio_sniff_motion_jpeg(copy, size))
    FUZZ_ASSERT(size >= 7 && copy[0] == 0xff && copy[1] == 0xd8 &&
                memmem(copy + 2, size - 2, "\xff\xd9", 2) != NULL &&
                memmem(copy + 4, size - 4, "\xff\xd8\xff", 3) != NULL);
  /* PNG frames one after another: a PNG's signature, an IEND chunk, and the
   * signature again after it. */
  static const char png_signature[] = "\x89PNG\r\n\x1a\n";
  if (lhio_sniff_png_sequence(copy, size)) {
    const uint8_t *iend = memmem(copy + 8, size - 8, "IEND", 4);
    FUZZ_ASSERT(size >= 8 + 12 + 8 && memcmp(copy, png_signature, 8) == 0 && iend != NULL &&
                memmem(iend + 8, size - (size_t)(iend + 8 - copy), png_signature, 8) != NULL);
  }
  const size_t head = size < LHIO_VIDEO_SNIFF_BYTES ? size : LHIO_VIDEO_SNIFF_BYTES;
  free(copy);
  copy = fuzz_copy(data, head);
  FUZZ_ASSERT(strcmp(lhio_video_extension(copy, head), extension) == 0);
  const LhioFileType image = lhio_sniff(copy, head);
  /* The other images' kinds (other-image-kind.c), from the same head: none
   * for a PNG or a JPEG, and one of a few words' phrases. */
  const char *other = lhio_other_image_kind(copy, head);
  FUZZ_ASSERT(!other || (image == LHIO_FILE_UNKNOWN &&
                         (strncmp(other, "a ", 2) == 0 || strncmp(other, "an ", 3) == 0)));
  free(copy);
  FUZZ_ASSERT(lhio_video_extension(NULL, size)[0] == '\0' && !lhio_sniff_video(NULL, size));
  check_names(data, size);

  const bool video = extension[0] != '\0';
  const bool nut = strcmp(extension, ".nut") == 0;
  /* Its content alone. */
  const char *plain = fuzz_input_file("input.bin", data, size);
  FUZZ_ASSERT(lhio_path_is_video(plain) == video);
  FUZZ_ASSERT(!lhio_is_motion_jpeg(plain));
  check_unreadable_container(plain, nut);
  /* A video's name: a video unless its content is an image's. */
  const char *named = fuzz_input_file("input.mkv", data, size);
  FUZZ_ASSERT(lhio_path_is_video(named) == (video || image == LHIO_FILE_UNKNOWN));
  FUZZ_ASSERT(!lhio_is_motion_jpeg(named));
  /* Motion JPEG's names (any case): a JPEG's content is one. */
  const char *names[] = {"input.MJPEG", "input.mjpg"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    const char *motion = fuzz_input_file(names[i], data, size);
    FUZZ_ASSERT(lhio_is_motion_jpeg(motion) == (image == LHIO_FILE_JPEG));
    FUZZ_ASSERT(lhio_path_is_video(motion) == (video || image != LHIO_FILE_PNG));
    check_motion_jpeg_cut(motion, data, size);
    fuzz_check_unchanged(motion, data, size);
  }

  fuzz_check_unchanged(plain, data, size);
  fuzz_check_unchanged(named, data, size);
  return 0;
}
