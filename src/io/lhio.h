/* lhio.h: reading and writing PNG (libpng) and JPEG (libjpeg-turbo) images as
 * lumahist frames, for the command-line tool and the tests.  Functions return
 * 0 or a negative LhStatus and set the message that lh_last_error() returns. */
#ifndef LHIO_H
#define LHIO_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lumahist.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  LHIO_FILE_UNKNOWN,
  LHIO_FILE_PNG,
  LHIO_FILE_JPEG,
} LhioFileType;

typedef enum {
  LHIO_READ_FULL, /* every channel, ready to be written back */
  LHIO_READ_LUMA, /* only what luma statistics need: a colour JPEG is decoded
                     to its Y component alone (no colour conversion, no chroma
                     upsampling); PNG is read in full */
} LhioReadMode;

/* Which decoder made an image, as records name it (lhio_decoder_name). */
typedef enum {
  LHIO_DECODER_NONE,
  LHIO_DECODER_LIBJPEG,         /* "libjpeg-turbo", on the CPU */
  LHIO_DECODER_LIBPNG,          /* "libpng", on the CPU */
  LHIO_DECODER_NVJPEG_HARDWARE, /* "nvjpeg-hardware": the GPU's JPEG engines (NVJPG) */
  LHIO_DECODER_NVJPEG_GPU,      /* "nvjpeg-gpu": nvJPEG's hybrid decoder, IDCT on the GPU */
} LhioDecoder;

const char *lhio_decoder_name(LhioDecoder decoder);

/* A decoded image.  Pixels are one contiguous buffer described by frame
 * (memory LH_MEMORY_HOST), owned by the image. */
typedef struct {
  LhioFileType type;
  LhFrame frame;      /* GRAY8, GRAY16, RGB, RGBA, RGB16 or RGBA16 */
  uint8_t *pixels;    /* frame.planes[0] */
  uint8_t *alpha;     /* gray+alpha input: the alpha plane, kept for writing back; else NULL */
  size_t alpha_stride;
  /* What the file was, so that a writer can give back the same kind. */
  int source_bit_depth;     /* PNG: 1, 2, 4, 8 or 16; JPEG: 8 */
  int source_channels;      /* 1 gray, 2 gray+alpha, 3 colour, 4 colour+alpha */
  bool source_palette;      /* PNG palette image (expanded on reading) */
  bool source_interlaced;   /* PNG Adam7 */
  bool luma_only;           /* a colour JPEG read with LHIO_READ_LUMA: frame is GRAY8 */
  /* A JPEG's sampling factors, Y's then (Y'CbCr files only) Cb's and Cr's,
   * so that its chroma subsampling, however odd, is written back; 0: not
   * known (a fresh image's 4:2:0, or chroma 1x1 beside a known Y). */
  int jpeg_h_samp[3], jpeg_v_samp[3];
  /* A JPEG's JFIF pixel density (unit 0: aspect ratio only, 1: per inch,
   * 2: per cm), written back so that a 300 dpi print file does not come
   * back unitless; x density 0: none stated, the writer's default (1:1). */
  int jfif_density_unit, jfif_x_density, jfif_y_density;
  /* A JPEG's coding, written back the same way: progressive (SOF2, SOF10)
   * or sequential, arithmetic or Huffman, and its restart interval in MCUs
   * (0: none), so that a file made progressive for the web does not come
   * back baseline, nor one made arithmetic for its size back larger. */
  bool jpeg_progressive, jpeg_arithmetic;
  unsigned jpeg_restart_interval;
  LhioDecoder decoder;          /* what decoded it */
  /* "CMYK" or "YCCK": a JPEG of that colour space, whose pixels were
   * converted to R'G'B' (frame RGB) as Pillow converts them; else NULL. */
  const char *converted_from;
  /* An animated PNG (APNG): the frame count its acTL chunk states (only
   * the default image, IDAT's, is read); else 0. */
  uint32_t png_frames;
  /* An image read in full: its file's metadata, written back into a file
   * of the same type made from the image.  A JPEG's APP1 (Exif, XMP), APP2
   * (ICC profile, but not a converted CMYK file's), APP13 (IPTC) and COM
   * segments, each whole (0xFF, marker, length, data; jpeg-metadata.c); a
   * PNG's colour, density, text and Exif chunks, each whole (length, type,
   * data, CRC; png-metadata.c); in file order.  NULL: none. */
  uint8_t *metadata;
  size_t metadata_size;
} LhioImage;

/* zlib's level for PNG when none is asked for: 1, with the SUB filter and
 * zlib's RLE strategy, as OpenCV's imwrite (png.c).  On equalized 1080p-4K
 * photographs libpng's own default, 6, took 2-5 times as long for files
 * 10-20 % smaller, and encoding is most of a batch's time. */
#define LHIO_DEFAULT_PNG_COMPRESSION 1
/* png_compression for zlib's level 0: stored, not compressed. */
#define LHIO_PNG_UNCOMPRESSED (-1)

/* Puts a complete temporary file, beside path, into place at path: LH_OK,
 * or a negative status with the message set (lh_set_error), and the
 * temporary file is then removed.  A program writing many outputs at once
 * checks there, under its own lock, that path is not a file it has written
 * already (src/tool/written.c). */
typedef int (*LhioPlaceFunc)(const char *temp, const char *path, void *data);

/* A zeroed struct asks for the defaults. */
typedef struct {
  int jpeg_quality;    /* 1..100; 0 = 95 */
  int png_compression; /* zlib level 1..9 or LHIO_PNG_UNCOMPRESSED;
                          0 = LHIO_DEFAULT_PNG_COMPRESSION */
  LhioPlaceFunc place; /* NULL: rename(temp, path) */
  void *place_data;
} LhioWriteOptions;

/* Which kind of file by its first bytes (not its name). */
LhioFileType lhio_sniff(const uint8_t *head, size_t n);

/* The length of name's longest prefix of at most room bytes that does not
 * cut a UTF-8 character: as much of a file name as a temporary file's name
 * beside it has room for within NAME_MAX. */
size_t lhio_name_prefix(const char *name, size_t room);

/* Whether a path's extension is one the tool reads (.png, .jpg, .jpeg, .jpe,
 * .jfif, any case), and whether it is a JPEG's (all but .png). */
bool lhio_is_image_name(const char *path);
bool lhio_is_jpeg_name(const char *path);

/* Images above max_pixels (0: LHIO_DEFAULT_MAX_PIXELS) are refused with
 * LH_ERROR_TOO_LARGE before any pixel buffer is allocated. */
#define LHIO_DEFAULT_MAX_PIXELS ((uint64_t)1 << 28)

/* Reads an image file.  A named FIFO (mkfifo) waits for a program to open
 * it for writing, as `cat FIFO` does, for up to the time
 * lhio_set_fifo_wait() sets; then it is refused.  A writer that has it open
 * is waited for as long as it takes, as on any pipe. */
int lhio_read(const char *path, LhioReadMode mode, uint64_t max_pixels, LhioImage *image);

/* The errno of the system call whose failure is the library's last error
 * on this thread (lh_last_error(): a file missing, forbidden, unreadable),
 * or 0 when that error was not one. */
int lhio_last_os_error(void);

/* How long a named FIFO waits for a writer unless set otherwise: a program
 * started a moment later (`lumahist stats FIFO & cat a.png > FIFO`) comes in
 * time, and a FIFO that none will write to does not hold a run for ever. */
#define LHIO_DEFAULT_FIFO_WAIT_S 30.0
/* Sets that time for every later read (0: no limit), and a flag that ends
 * the wait sooner once non-zero (a caught signal's; NULL: none).  Set
 * before reading, not while reads run. */
void lhio_set_fifo_wait(double seconds, volatile sig_atomic_t *stop);

/* One caller's FIFO wait, for reads that must not share the process's:
 * runs of the Python module at the same time, each with its own time and
 * its own stop (closing its iterator). */
typedef struct {
  double seconds;                    /* 0: no limit */
  const volatile sig_atomic_t *stop; /* non-zero ends the wait; NULL: none */
} LhioFifoWait;

/* A whole file in memory, for decoders that take bytes (nvJPEG). */
typedef struct {
  LhioFileType type;
  uint8_t *data;
  size_t size;
} LhioEncoded;

/* Reads path whole into *encoded, refusing what lhio_read refuses before
 * decoding (unreadable, empty, truncated magic, not a PNG or JPEG) with the
 * same messages.  Special files are read as lhio_read reads them. */
int lhio_load(const char *path, LhioEncoded *encoded);
void lhio_encoded_clear(LhioEncoded *encoded);

/* lhio_read and lhio_load with a FIFO wait of the caller's (NULL:
 * lhio_set_fifo_wait's). */
int lhio_read_waiting(const char *path, LhioReadMode mode, uint64_t max_pixels,
                      const LhioFifoWait *wait, LhioImage *image);
int lhio_load_waiting(const char *path, const LhioFifoWait *wait, LhioEncoded *encoded);

/* lhio_read on bytes already in memory (from lhio_load); path names them in
 * messages. */
int lhio_read_memory(const char *path, const LhioEncoded *encoded, LhioReadMode mode,
                     uint64_t max_pixels, LhioImage *image);

/* What a JPEG's headers say, read by libjpeg-turbo without decoding the
 * entropy-coded data: enough to size its luma and to choose a decoder. */
typedef struct {
  int width, height;
  int components;
  bool ycbcr;       /* the file's Y is its luma (YCbCr, or one gray component) */
  bool progressive; /* SOF2 */
  bool arithmetic;  /* arithmetic-coded entropy data */
  int precision;    /* bits per sample: 8, or 12 */
  int h_samp, v_samp;    /* luma sampling factors */
  bool chroma_1x1;       /* every other component sampled 1x1 (or none) */
  unsigned restart_interval;
  bool ends_with_eoi; /* an EOI marker follows the first scan's data: not cut short */
  /* Why nvJPEG is not asked to decode it (libjpeg-turbo does), or NULL. */
  const char *gpu_refusal;
} LhioJpegInfo;

/* Reads the headers of encoded (a JPEG) into *info; refuses what lhio_read
 * refuses from the headers alone (no pixels, above max_pixels, corrupt
 * markers) with the same messages. */
int lhio_jpeg_probe(const char *path, const LhioEncoded *encoded, uint64_t max_pixels,
                    LhioJpegInfo *info);

/* Appends to image->metadata those of encoded (a JPEG's bytes, as
 * lhio_load reads them), as lhio_read keeps them for a JPEG read in full.
 * Bytes that are not a JPEG's give none. */
int lhio_jpeg_metadata_from_bytes(const LhioEncoded *encoded, LhioImage *image);
/* Puts image->metadata into encoded (a JPEG, as nvJPEG encodes one) after
 * its SOI and JFIF APP0, where lhio_write would have written them. */
int lhio_jpeg_insert_metadata(LhioEncoded *encoded, const LhioImage *image);

/* The Exif orientation of an image read in full (its metadata's Exif: 1 to
 * 8, as LhOverlayOptions.orientation takes it), or 1 when it has none
 * (exif-orientation.c). */
int lhio_image_orientation(const LhioImage *image);

/* Writes image to path as its type says, through a temporary file in the
 * same folder renamed over path when complete; never leaves a partial file. */
int lhio_write(const char *path, const LhioImage *image, const LhioWriteOptions *options);

/* Writes a file already encoded (by nvJPEG on the GPU) to path, through a
 * temporary file put in place as lhio_write does; of options (NULL: the
 * defaults) only the place. */
int lhio_write_encoded(const char *path, const LhioEncoded *encoded,
                       const LhioWriteOptions *options);

void lhio_image_clear(LhioImage *image);

/* Where decoded pixels (LhioImage.pixels) live: malloc and free unless a
 * program gives its own, e.g. page-locked buffers that a GPU copies without
 * staging them.  alloc returns NULL when it has no memory; release takes
 * what alloc gave, from any thread.  Set before reading, not while reads
 * run; NULL gives back malloc and free.  The allocator must outlive the
 * images it made. */
typedef struct {
  void *(*alloc)(size_t bytes, void *user);
  void (*release)(void *pixels, void *user);
  void *user;
} LhioPixelAllocator;

void lhio_set_pixel_allocator(const LhioPixelAllocator *allocator);

#ifdef __cplusplus
}
#endif

#endif /* LHIO_H */
