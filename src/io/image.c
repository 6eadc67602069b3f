/* image.c: the format-independent half of lhio: sniffing, dispatch to the PNG
 * and JPEG code, and writing through a temporary file renamed into place. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <linux/magic.h>
#include <sys/vfs.h>
#endif

#include "lhio-private.h"
#include "lhio-video.h"

static const uint8_t png_magic[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
static const uint8_t jpeg_magic[3] = {0xff, 0xd8, 0xff};

/* The errno of this thread's last failure, when it was a system call's
 * (lhio_fail_os), and that failure's message: lhio_last_os_error() answers
 * for the library's last error only while it is still this one. */
static _Thread_local int last_os_error;
static _Thread_local char last_os_message[640];

int lhio_fail(int status, const char *path, const char *format, ...)
{
  char reason[512];
  va_list args;
  va_start(args, format);
  vsnprintf(reason, sizeof reason, format, args);
  va_end(args);
  last_os_error = 0;
  return lh_set_error(status, "%s: %s", path ? path : "(null)", reason);
}

int lhio_fail_os(int error, const char *path)
{
  int status = lhio_fail(LH_ERROR_IO, path, "%s", strerror(error));
  const char *message = lh_last_error();
  last_os_error = error;
  snprintf(last_os_message, sizeof last_os_message, "%s", message ? message : "");
  return status;
}

int lhio_last_os_error(void)
{
  const char *message = lh_last_error();
  return last_os_error && message && strcmp(message, last_os_message) == 0 ? last_os_error : 0;
}

LhioFileType lhio_sniff(const uint8_t *head, size_t n)
{
  if (!head)
    return LHIO_FILE_UNKNOWN;
  if (n >= sizeof png_magic && memcmp(head, png_magic, sizeof png_magic) == 0)
    return LHIO_FILE_PNG;
  if (n >= sizeof jpeg_magic && memcmp(head, jpeg_magic, sizeof jpeg_magic) == 0)
    return LHIO_FILE_JPEG;
  return LHIO_FILE_UNKNOWN;
}

/* Whether the n bytes we have are the start of a magic number: such a file
 * is a truncated image, not one of an unknown kind. */
static bool is_magic_prefix(const uint8_t *head, size_t n)
{
  return (n < sizeof png_magic && memcmp(head, png_magic, n) == 0) ||
         (n < sizeof jpeg_magic && memcmp(head, jpeg_magic, n) == 0);
}

/* The extension of path's last component, from its dot; NULL for none. */
static const char *extension_of(const char *path)
{
  const char *dot = path ? strrchr(path, '.') : NULL;
  return dot && !strchr(dot, '/') ? dot : NULL;
}

bool lhio_is_jpeg_name(const char *path)
{
  /* .jfif is what Windows names a JPEG saved from a browser; .jpe is
   * JPEG's third extension in the MIME types. */
  static const char *const extensions[] = {".jpg", ".jpeg", ".jpe", ".jfif"};
  const char *dot = extension_of(path);
  for (size_t k = 0; dot && k < sizeof extensions / sizeof extensions[0]; k++)
    if (strcasecmp(dot, extensions[k]) == 0)
      return true;
  return false;
}

bool lhio_is_image_name(const char *path)
{
  const char *dot = extension_of(path);
  return (dot && strcasecmp(dot, ".png") == 0) || lhio_is_jpeg_name(path);
}

size_t lhio_packed_row_bytes(const LhFrame *frame)
{
  size_t pixel_bytes;
  switch (frame->format) {
  case LH_FORMAT_GRAY8:
    pixel_bytes = 1;
    break;
  case LH_FORMAT_GRAY16:
    pixel_bytes = 2;
    break;
  case LH_FORMAT_RGB:
  case LH_FORMAT_BGR:
    pixel_bytes = 3;
    break;
  case LH_FORMAT_RGBA:
  case LH_FORMAT_BGRA:
  case LH_FORMAT_RGBX:
  case LH_FORMAT_BGRX:
    pixel_bytes = 4;
    break;
  case LH_FORMAT_RGB16:
    pixel_bytes = 6;
    break;
  case LH_FORMAT_RGBA16:
    pixel_bytes = 8;
    break;
  default:
    return 0;
  }
  return pixel_bytes * (size_t)frame->width;
}

void lhio_set_frame(LhioImage *image, LhFormat format, int width, int height, int bit_depth,
                    size_t stride)
{
  LhFrame *frame = &image->frame;
  memset(frame, 0, sizeof *frame);
  frame->format = format;
  frame->memory = LH_MEMORY_HOST;
  frame->width = width;
  frame->height = height;
  frame->bit_depth = bit_depth;
  frame->planes[0] = image->pixels;
  frame->strides[0] = stride;
}

static LhioPixelAllocator pixel_allocator;

void lhio_set_pixel_allocator(const LhioPixelAllocator *allocator)
{
  if (allocator)
    pixel_allocator = *allocator;
  else
    memset(&pixel_allocator, 0, sizeof pixel_allocator);
}

void *lhio_pixels_alloc(size_t bytes)
{
  if (bytes == 0)
    bytes = 1;
  return pixel_allocator.alloc ? pixel_allocator.alloc(bytes, pixel_allocator.user) : malloc(bytes);
}

void lhio_pixels_release(void *pixels)
{
  if (!pixels)
    return;
  if (pixel_allocator.release)
    pixel_allocator.release(pixels, pixel_allocator.user);
  else
    free(pixels);
}

void lhio_image_clear(LhioImage *image)
{
  if (!image)
    return;
  lhio_pixels_release(image->pixels);
  free(image->alpha);
  free(image->metadata);
  memset(image, 0, sizeof *image);
}

const char *lhio_decoder_name(LhioDecoder decoder)
{
  switch (decoder) {
  case LHIO_DECODER_LIBJPEG:
    return "libjpeg-turbo";
  case LHIO_DECODER_LIBPNG:
    return "libpng";
  case LHIO_DECODER_NVJPEG_HARDWARE:
    return "nvjpeg-hardware";
  case LHIO_DECODER_NVJPEG_GPU:
    return "nvjpeg-gpu";
  default:
    return "none";
  }
}

/* The bytes that tell a PNG from a JPEG (and from anything else). */
#define SNIFF_BYTES 8

/* How long a named FIFO waits for a writer, and what ends the wait sooner
 * (lhio_set_fifo_wait). */
static LhioFifoWait process_fifo_wait = {LHIO_DEFAULT_FIFO_WAIT_S, NULL};

void lhio_set_fifo_wait(double seconds, volatile sig_atomic_t *stop)
{
  process_fifo_wait.seconds = seconds > 0 ? seconds : 0;
  process_fifo_wait.stop = stop;
}

const LhioFifoWait *lhio_fifo_wait_or_process(const LhioFifoWait *wait)
{
  return wait ? wait : &process_fifo_wait;
}

/* Whether fd is a named FIFO (mkfifo), whose writer may open it after it was
 * opened to read.  An anonymous pipe (a shell's |, /dev/stdin, <(...)) had
 * its writer from its start: no writer there means its end. */
int lhio_open_regular(const char *path, off_t *size)
{
  /* O_NONBLOCK: a FIFO's open() to read would wait for a writer; a regular
   * file's reads are the same with it. */
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0)
    return -1;
  struct stat info;
  if (fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    close(fd);
    return -1;
  }
  *size = info.st_size;
  return fd;
}

bool lhio_is_named_fifo(int fd)
{
  struct stat info;
  if (fstat(fd, &info) != 0 || !S_ISFIFO(info.st_mode))
    return false;
#ifdef __linux__
  struct statfs fs;
  return fstatfs(fd, &fs) == 0 && fs.f_type != PIPEFS_MAGIC;
#else
  return false; /* no way to tell: read as before, to its end */
#endif
}

static double seconds_now(void)
{
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (double)now.tv_sec + (double)now.tv_nsec * 1e-9;
}

/* Milliseconds between two looks for a writer that opened the FIFO and has
 * written nothing yet (poll() wakes for bytes, not for an open), or for a
 * stop. */
#define FIFO_LOOK_MS 100

/* Waits, as `cat` does, until a writer opens the named FIFO fd (opened to
 * read without blocking), or wait->seconds (0: no limit) pass, or
 * wait->stop is set.  A read that
 * cannot block tells: 0 while no writer has it open, EAGAIN once one has
 * and has written nothing yet, else the first bytes, which go to *first.
 * A writer that came and went without writing (POLLHUP; Linux only says it
 * when one came) leaves the FIFO empty. */
static int wait_for_writer(const char *path, int fd, const LhioFifoWait *wait, LhioEncoded *first)
{
  double limit = wait->seconds;
  uint8_t head[SNIFF_BYTES];
  double start = seconds_now();
  for (;;) {
    ssize_t n = read(fd, head, sizeof head);
    if (n > 0) {
      first->data = malloc((size_t)n);
      if (!first->data)
        return lhio_fail(LH_ERROR_NO_MEMORY, path, "no memory for %zd bytes", n);
      memcpy(first->data, head, (size_t)n);
      first->size = (size_t)n;
      return LH_OK;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
      return LH_OK; /* a writer: reads block for its bytes from now on */
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return lhio_fail_os(errno, path);
    double waited = seconds_now() - start;
    if (limit > 0 && waited >= limit)
      return lhio_fail(LH_ERROR_IO, path, "a FIFO no writer opened in %g s", limit);
    if (wait->stop && *wait->stop)
      return lhio_fail(LH_ERROR_IO, path, "a FIFO no writer opened before the run was stopped");
    int timeout = FIFO_LOOK_MS;
    if (limit > 0 && (limit - waited) * 1000 < timeout)
      timeout = (int)((limit - waited) * 1000) + 1;
    struct pollfd look = {.fd = fd, .events = POLLIN};
    if (poll(&look, 1, timeout) > 0 && !(look.revents & POLLIN) &&
        (look.revents & (POLLHUP | POLLERR)))
      return LH_OK; /* it reads as empty */
  }
}

/* Reads up to n bytes of file into into, as fread does.  A stream (a pipe,
 * FIFO or socket: stop is given for those) is read with poll() and read(),
 * looking at stop every FIFO_LOOK_MS while no bytes come: a read() blocked
 * in the kernel is restarted after a caught Ctrl-C (SA_RESTART), so the run
 * would wait for the writer's next bytes, or its end, before stopping.  A
 * failure sets *failed to its errno, or to ECANCELED once stop is set. */
static size_t read_input(FILE *file, uint8_t *into, size_t n, const volatile sig_atomic_t *stop,
                         int *failed)
{
  *failed = 0;
  if (!stop) {
    size_t got = fread(into, 1, n, file);
    if (got < n && ferror(file))
      *failed = errno ? errno : EIO;
    return got;
  }
  /* The FILE's own buffer is never used for a stream: all its reads are
   * these. */
  size_t got = 0;
  while (got < n) {
    if (*stop) {
      *failed = ECANCELED;
      break;
    }
    struct pollfd look = {.fd = fileno(file), .events = POLLIN};
    int ready = poll(&look, 1, FIFO_LOOK_MS);
    if (ready < 0 && errno != EINTR) {
      *failed = errno;
      break;
    }
    if (ready <= 0)
      continue;
    ssize_t m = read(look.fd, into + got, n - got);
    if (m == 0)
      break; /* its end */
    if (m < 0 && errno != EINTR && errno != EAGAIN) {
      *failed = errno;
      break;
    }
    if (m > 0)
      got += (size_t)m;
  }
  return got;
}

/* The failure of read_input, *failed, as the library's error. */
static int fail_read(const char *path, int failed)
{
  if (failed == ECANCELED)
    return lhio_fail(LH_ERROR_IO, path, "the run was stopped before the end of it came");
  return lhio_fail_os(failed, path);
}

/* The stop flag that read_input looks at for fd, which is a stream's, else
 * NULL. */
static const volatile sig_atomic_t *stream_stop(int fd, const LhioFifoWait *wait)
{
  struct stat info;
  if (fstat(fd, &info) != 0 || !(S_ISFIFO(info.st_mode) || S_ISSOCK(info.st_mode)))
    return NULL;
  return lhio_fifo_wait_or_process(wait)->stop;
}

/* Opens path for reading, without blocking: a FIFO with no writer would
 * block open() for ever.  A named FIFO then waits for its writer
 * (wait_for_writer; wait NULL: the process's); its first bytes, read
 * meanwhile, go to *first (empty on entry).  Reads block again as usual,
 * so a pipe is read in full. */
static int open_input(const char *path, const LhioFifoWait *wait, FILE **file, LhioEncoded *first)
{
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    return lhio_fail_os(errno, path);
  if (isatty(fd)) {
    /* `lumahist stats -` typed at a prompt: nothing would come but what is
     * typed, as gzip and xz refuse to read compressed data from one. */
    close(fd);
    return lhio_fail(LH_ERROR_UNSUPPORTED, path,
                     "a terminal: images are not typed in; redirect a file (- < photo.jpg), "
                     "pipe one in, or name the files");
  }
  if (lhio_is_named_fifo(fd)) {
    int status = wait_for_writer(path, fd, lhio_fifo_wait_or_process(wait), first);
    if (status < 0) {
      close(fd);
      return status;
    }
  }
  int flags = fcntl(fd, F_GETFL);
  *file = NULL;
  if (flags >= 0 && fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) == 0)
    *file = fdopen(fd, "rb");
  if (!*file) {
    int err = errno;
    close(fd);
    lhio_encoded_clear(first);
    return lhio_fail_os(err, path);
  }
  return LH_OK;
}

/* Reads the first bytes of file and says what it is, refusing what is not
 * an image.  Leaves file at its start or, where it cannot go back (a pipe),
 * puts the bytes it read in *ahead (NULL: the file must seek), for
 * read_whole to read the rest after them.  *ahead may hold the first bytes
 * already (open_input's of a FIFO), at most SNIFF_BYTES. */
static int sniff_input(const char *path, FILE *file, const volatile sig_atomic_t *stop,
                       LhioFileType *type, LhioEncoded *ahead)
{
  uint8_t head[SNIFF_BYTES];
  size_t before = ahead ? ahead->size : 0;
  if (before)
    memcpy(head, ahead->data, before);
  int failed;
  size_t n = before + read_input(file, head + before, sizeof head - before, stop, &failed);
  if (failed)
    return fail_read(path, failed);
  *type = lhio_sniff(head, n);
  if (*type == LHIO_FILE_UNKNOWN) {
    if (n == 0)
      return lhio_fail(LH_ERROR_CORRUPT, path, "empty file");
    if (is_magic_prefix(head, n))
      return lhio_fail(LH_ERROR_CORRUPT, path, "truncated file");
    /* A video comes here only where it could not be looked at before being
     * read: on a pipe, which its demuxer could not seek in either. */
    uint8_t more[LHIO_VIDEO_SNIFF_BYTES];
    memcpy(more, head, n);
    size_t m = n + read_input(file, more + n, sizeof more - n, stop, &failed);
    if (failed)
      return fail_read(path, failed);
    const char *kind = lhio_other_image_kind(more, m);
    if (kind)
      return lhio_fail(LH_ERROR_UNSUPPORTED, path, "not a PNG or JPEG file but %s", kind);
    if (lhio_sniff_video(more, m))
      return lhio_fail(LH_ERROR_UNSUPPORTED, path,
                       "a video: videos are read from files, not from a pipe or standard input");
    return lhio_fail(LH_ERROR_UNSUPPORTED, path, "not a PNG or JPEG file");
  }
  if (before == 0 && fseek(file, 0, SEEK_SET) == 0)
    return LH_OK;
  if (before == 0 && (errno != ESPIPE || !ahead))
    return lhio_fail_os(errno, path);
  uint8_t *grown = realloc(ahead->data, n);
  if (!grown)
    return lhio_fail(LH_ERROR_NO_MEMORY, path, "no memory for %zu bytes", n);
  memcpy(grown, head, n);
  ahead->data = grown;
  ahead->size = n;
  return LH_OK;
}

/* Decodes an open file of a known type; encoded: its bytes, when they are
 * in memory (else NULL). */
static int decode_input(const char *path, FILE *file, const LhioEncoded *encoded, LhioFileType type,
                        LhioReadMode mode, uint64_t max_pixels, LhioImage *image)
{
  int status = type == LHIO_FILE_PNG ? lhio_png_read(file, encoded, path, mode, max_pixels, image)
                                     : lhio_jpeg_read(file, path, mode, max_pixels, image);
  /* A PNG's metadata come from its bytes (a JPEG's, libjpeg keeps). */
  if (status == LH_OK && type == LHIO_FILE_PNG && encoded && mode == LHIO_READ_FULL &&
      lhio_png_metadata_from_bytes(encoded->data, encoded->size, image) < 0)
    status = lhio_fail(LH_ERROR_NO_MEMORY, path, "no memory for the file's metadata");
  /* Read for its luma, an animation's frame count alone. */
  if (status == LH_OK && type == LHIO_FILE_PNG && encoded && mode == LHIO_READ_LUMA)
    image->png_frames = lhio_png_animation_frames(encoded->data, encoded->size);
  if (status < 0) {
    lhio_image_clear(image);
  } else {
    image->type = type;
    image->decoder = type == LHIO_FILE_PNG ? LHIO_DECODER_LIBPNG : LHIO_DECODER_LIBJPEG;
  }
  return status;
}

static int check_read_arguments(const char *path, LhioReadMode mode, LhioImage *image)
{
  if (!image)
    return lh_set_error(LH_ERROR_INVALID_ARGUMENT, "lhio_read: image is NULL");
  memset(image, 0, sizeof *image);
  if (!path)
    return lh_set_error(LH_ERROR_INVALID_ARGUMENT, "lhio_read: path is NULL");
  if (mode != LHIO_READ_FULL && mode != LHIO_READ_LUMA)
    return lhio_fail(LH_ERROR_INVALID_ARGUMENT, path, "unknown read mode %d", (int)mode);
  return LH_OK;
}

/* Whether a stream's bytes hold several images one after another: Motion
 * JPEG, or PNG frames as FFmpeg's image2pipe writes them. */
static bool holds_several_images(const LhioEncoded *encoded)
{
  if (encoded->type == LHIO_FILE_JPEG)
    return lhio_sniff_motion_jpeg(encoded->data, encoded->size);
  return encoded->type == LHIO_FILE_PNG && lhio_sniff_png_sequence(encoded->data, encoded->size);
}

/* A pipe's bytes that are several images rather than one: refused as the
 * videos on a pipe are (sniff_input), where decoding the first one alone
 * would pass for the stream's result. */
static int refuse_piped_video(const char *path, const LhioEncoded *encoded)
{
  if (!holds_several_images(encoded))
    return LH_OK;
  if (encoded->type == LHIO_FILE_PNG)
    return lhio_fail(LH_ERROR_UNSUPPORTED, path,
                     "PNG images one after another (as FFmpeg's image2pipe writes a video's "
                     "frames): one image is read from a pipe or standard input; give the video "
                     "itself as a file, or its frames as files");
  return lhio_fail(LH_ERROR_UNSUPPORTED, path,
                   "a Motion JPEG video (JPEG frames one after another): videos are read from "
                   "files, not from a pipe or standard input; save it as a .mjpeg file");
}

/* Bytes read at a time from a file whose size is not known ahead (a pipe). */
#define LOAD_CHUNK ((size_t)1 << 20)

/* The most bytes a stream (a pipe, FIFO or socket) gives one image: more
 * than the largest PNG or JPEG within the default --max-pixels holds (16-bit
 * R'G'B'A stored uncompressed, 8 bytes a pixel, and room for metadata).  A
 * stream that never ended after an image's first bytes was held in memory
 * until the process was killed. */
#define STREAM_BYTES_LIMIT ((size_t)8 * LHIO_DEFAULT_MAX_PIXELS + ((size_t)64 << 20))

/* Reads file from where it is to its end into encoded, after the bytes it
 * may hold already (sniff_input's of a pipe): a regular file in one read of
 * its size, anything else as it grows, up to STREAM_BYTES_LIMIT, and only
 * until it is seen to hold several images (refuse_piped_video says so: an
 * endless camera stream is not read to its end). */
static int read_whole(const char *path, FILE *file, const volatile sig_atomic_t *stop,
                      LhioEncoded *encoded)
{
  struct stat info;
  size_t capacity = LOAD_CHUNK;
  const bool regular = fstat(fileno(file), &info) == 0 && S_ISREG(info.st_mode);
  if (regular && info.st_size > 0)
    capacity = (size_t)info.st_size + 1; /* + 1: end of file is seen in one read */
  int status = LH_OK;
  while (status == LH_OK) {
    uint8_t *grown = realloc(encoded->data, capacity);
    if (!grown) {
      status = lhio_fail(LH_ERROR_NO_MEMORY, path, "no memory for %zu bytes", capacity);
      break;
    }
    encoded->data = grown;
    int failed;
    encoded->size +=
        read_input(file, encoded->data + encoded->size, capacity - encoded->size, stop, &failed);
    if (failed)
      status = fail_read(path, failed);
    else if (encoded->size < capacity)
      break; /* end of file */
    else if (!regular && holds_several_images(encoded))
      break;
    else if (!regular && encoded->size >= STREAM_BYTES_LIMIT)
      status = lhio_fail(LH_ERROR_TOO_LARGE, path,
                         "more than %zu MiB came with no end: more than any image within the "
                         "default --max-pixels takes (a stream that does not end?)",
                         STREAM_BYTES_LIMIT >> 20);
    else {
      capacity += capacity / 2 + LOAD_CHUNK;
      if (!regular && capacity > STREAM_BYTES_LIMIT)
        capacity = STREAM_BYTES_LIMIT;
    }
  }
  if (status < 0)
    lhio_encoded_clear(encoded);
  return status;
}

int lhio_read(const char *path, LhioReadMode mode, uint64_t max_pixels, LhioImage *image)
{
  return lhio_read_waiting(path, mode, max_pixels, NULL, image);
}

int lhio_read_waiting(const char *path, LhioReadMode mode, uint64_t max_pixels,
                      const LhioFifoWait *wait, LhioImage *image)
{
  int status = check_read_arguments(path, mode, image);
  if (status < 0)
    return status;
  if (max_pixels == 0)
    max_pixels = LHIO_DEFAULT_MAX_PIXELS;
  FILE *file;
  LhioEncoded encoded = {0};
  status = open_input(path, wait, &file, &encoded);
  if (status < 0)
    return status;
  const volatile sig_atomic_t *stop = stream_stop(fileno(file), wait);
  LhioFileType type;
  status = sniff_input(path, file, stop, &type, &encoded);
  const bool piped = encoded.size > 0;
  if (status == LH_OK && (type == LHIO_FILE_PNG || piped)) {
    /* A PNG is read whole first: the fast path for the common ones
     * (png-fast.c) inflates all its IDAT data in one call.  So is a pipe,
     * whose first bytes are read already. */
    encoded.type = type;
    status = read_whole(path, file, stop, &encoded);
    if (status == LH_OK && piped)
      status = refuse_piped_video(path, &encoded);
    if (status == LH_OK)
      status = lhio_read_memory(path, &encoded, mode, max_pixels, image);
  } else if (status == LH_OK) {
    status = decode_input(path, file, NULL, type, mode, max_pixels, image);
  }
  lhio_encoded_clear(&encoded);
  fclose(file);
  return status;
}

int lhio_load(const char *path, LhioEncoded *encoded)
{
  return lhio_load_waiting(path, NULL, encoded);
}

int lhio_load_waiting(const char *path, const LhioFifoWait *wait, LhioEncoded *encoded)
{
  if (!encoded)
    return lh_set_error(LH_ERROR_INVALID_ARGUMENT, "lhio_load: encoded is NULL");
  memset(encoded, 0, sizeof *encoded);
  if (!path)
    return lh_set_error(LH_ERROR_INVALID_ARGUMENT, "lhio_load: path is NULL");
  FILE *file;
  int status = open_input(path, wait, &file, encoded);
  if (status < 0)
    return status;
  const volatile sig_atomic_t *stop = stream_stop(fileno(file), wait);
  status = sniff_input(path, file, stop, &encoded->type, encoded);
  const bool piped = encoded->size > 0;
  if (status == LH_OK)
    status = read_whole(path, file, stop, encoded);
  if (status == LH_OK && piped)
    status = refuse_piped_video(path, encoded);
  fclose(file);
  if (status < 0)
    lhio_encoded_clear(encoded);
  return status;
}

void lhio_encoded_clear(LhioEncoded *encoded)
{
  if (!encoded)
    return;
  free(encoded->data);
  memset(encoded, 0, sizeof *encoded);
}

int lhio_read_memory(const char *path, const LhioEncoded *encoded, LhioReadMode mode,
                     uint64_t max_pixels, LhioImage *image)
{
  int status = check_read_arguments(path, mode, image);
  if (status < 0)
    return status;
  if (!encoded || !encoded->data || encoded->size == 0)
    return lhio_fail(LH_ERROR_CORRUPT, path, "empty file");
  if (max_pixels == 0)
    max_pixels = LHIO_DEFAULT_MAX_PIXELS;
  /* The decoders read a FILE: the same code reads files and memory. */
  FILE *file = fmemopen(encoded->data, encoded->size, "rb");
  if (!file)
    return lhio_fail(LH_ERROR_NO_MEMORY, path, "%s", strerror(errno));
  LhioFileType type;
  status = sniff_input(path, file, NULL, &type, NULL);
  if (status == LH_OK)
    status = decode_input(path, file, encoded, type, mode, max_pixels, image);
  fclose(file);
  return status;
}

/* ------------------------------------------------------------------------ */
/* Writing                                                                   */

static LhioFileType type_from_name(const char *path)
{
  if (lhio_is_jpeg_name(path))
    return LHIO_FILE_JPEG;
  return lhio_is_image_name(path) ? LHIO_FILE_PNG : LHIO_FILE_UNKNOWN;
}

size_t lhio_name_prefix(const char *name, size_t room)
{
  size_t n = strlen(name);
  if (n <= room)
    return n;
  n = room;
  while (n > 0 && ((unsigned char)name[n] & 0xc0) == 0x80)
    n--;
  return n;
}

/* Creates "<dir>/.<name>.<unique>.tmp" beside path.  open(O_EXCL) rather than
 * mkstemp() so that the mode is 0666 less the umask, as for any new file,
 * instead of mkstemp's 0600.  The name starts with a dot and does not end in
 * an image extension, so a concurrent folder scan does not pick it up.  A
 * name too long to take the rest within NAME_MAX is cut (at a UTF-8
 * character), so that any name the output may have gets a temporary file. */
int lhio_create_temp(const char *path, char **temp_path, FILE **file)
{
  static unsigned counter;
  const char *slash = strrchr(path, '/');
  int dir_len = slash ? (int)(slash - path) + 1 : 0;
  const char *name = slash ? slash + 1 : path;
  if (*name == '\0')
    return lhio_fail(LH_ERROR_INVALID_ARGUMENT, path, "not a file name");
  /* The dots, "PID-COUNTER-NANOSECONDS" at their longest and ".tmp". */
  enum { TEMP_AFFIXES = 2 + 20 + 1 + 10 + 1 + 16 + 4 };
  int name_len = (int)lhio_name_prefix(name, NAME_MAX - TEMP_AFFIXES);

  size_t size = strlen(path) + 64;
  char *temp = malloc(size);
  if (!temp)
    return lhio_fail(LH_ERROR_NO_MEMORY, path, "out of memory");
  for (int attempt = 0; attempt < 100; attempt++) {
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    unsigned unique = __atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED);
    snprintf(temp, size, "%.*s.%.*s.%ld-%u-%lx.tmp", dir_len, path, name_len, name, (long)getpid(),
             unique, (unsigned long)now.tv_nsec);
    int fd = open(temp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0) {
      if (errno == EEXIST)
        continue;
      int err = errno;
      free(temp);
      return lhio_fail(LH_ERROR_IO, path, "cannot create a temporary file: %s", strerror(err));
    }
    *file = fdopen(fd, "wb");
    if (!*file) {
      int err = errno;
      close(fd);
      unlink(temp);
      free(temp);
      return lhio_fail(LH_ERROR_NO_MEMORY, path, "%s", strerror(err));
    }
    *temp_path = temp;
    return LH_OK;
  }
  free(temp);
  return lhio_fail(LH_ERROR_IO, path, "cannot create a temporary file: too many name clashes");
}
int lhio_place_temp(const char *temp, const char *path, LhioPlaceFunc place, void *data)
{
  int status = LH_OK;
  if (place)
    status = place(temp, path, data);
  else if (rename(temp, path) != 0)
    status = lhio_fail_os(errno, path);
  if (status < 0)
    unlink(temp);
  return status;
}

/* Closes a temporary output written with lhio_create_temp() and, when all
 * went well (status LH_OK), puts it in place; otherwise removes it, so that
 * a failure leaves no partial file.  Returns the final status. */
static int finish_temp(const char *path, char *temp, FILE *file, int status,
                       const LhioWriteOptions *options)
{
  if (fclose(file) != 0 && status == LH_OK)
    status = lhio_fail_os(errno, path);
  if (status == LH_OK)
    status = lhio_place_temp(temp, path, options->place, options->place_data);
  else
    unlink(temp);
  free(temp);
  return status;
}

int lhio_write(const char *path, const LhioImage *image, const LhioWriteOptions *options)
{
  if (!path || !image)
    return lh_set_error(LH_ERROR_INVALID_ARGUMENT, "lhio_write: %s is NULL",
                        path ? "image" : "path");
  LhioWriteOptions defaults = {0};
  if (!options)
    options = &defaults;
  if (options->jpeg_quality < 0 || options->jpeg_quality > 100)
    return lhio_fail(LH_ERROR_INVALID_ARGUMENT, path, "JPEG quality %d is not in 1..100",
                     options->jpeg_quality);
  if (options->png_compression < LHIO_PNG_UNCOMPRESSED || options->png_compression > 9)
    return lhio_fail(LH_ERROR_INVALID_ARGUMENT, path,
                     "PNG compression %d is not a zlib level 1..9 or LHIO_PNG_UNCOMPRESSED",
                     options->png_compression);

  LhioFileType type = image->type;
  if (type == LHIO_FILE_UNKNOWN)
    type = type_from_name(path);
  int status;
  if (type == LHIO_FILE_PNG)
    status = lhio_png_check(path, image);
  else if (type == LHIO_FILE_JPEG)
    status = lhio_jpeg_check(path, image);
  else
    status = lhio_fail(LH_ERROR_INVALID_ARGUMENT, path,
                       "no file type given and the name does not end in .png, .jpg, .jpeg, .jpe "
                       "or .jfif");
  if (status < 0)
    return status;

  char *temp = NULL;
  FILE *file = NULL;
  status = lhio_create_temp(path, &temp, &file);
  if (status < 0)
    return status;

  if (type == LHIO_FILE_PNG)
    status = lhio_png_write(file, path, image, options);
  else
    status = lhio_jpeg_write(file, path, image, options);
  if (status == LH_OK && (fflush(file) != 0 || ferror(file)))
    status = lhio_fail_os(errno, path);
  return finish_temp(path, temp, file, status, options);
}

int lhio_write_encoded(const char *path, const LhioEncoded *encoded,
                       const LhioWriteOptions *options)
{
  LhioWriteOptions defaults = {0};
  if (!options)
    options = &defaults;
  if (!path || !encoded || !encoded->data || encoded->size == 0)
    return lh_set_error(LH_ERROR_INVALID_ARGUMENT, "lhio_write_encoded: %s",
                        path ? "no bytes to write" : "path is NULL");
  char *temp = NULL;
  FILE *file = NULL;
  int status = lhio_create_temp(path, &temp, &file);
  if (status < 0)
    return status;
  if (fwrite(encoded->data, 1, encoded->size, file) != encoded->size || fflush(file) != 0 ||
      ferror(file))
    status = lhio_fail_os(errno, path);
  return finish_temp(path, temp, file, status, options);
}
