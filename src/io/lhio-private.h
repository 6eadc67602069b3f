/* lhio-private.h: what the files of lhio share: the per-format readers and
 * writers behind lhio_read()/lhio_write(), and the error helper. */
#ifndef LHIO_PRIVATE_H
#define LHIO_PRIVATE_H

#include <stdio.h>
#include <string.h>
#include <sys/types.h>

#include "lhio.h"

#if defined(__GNUC__)
#define LHIO_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define LHIO_PRINTF(f, a)
#endif

/* Sets the thread's message to "<path>: <reason>" and returns status. */
int lhio_fail(int status, const char *path, const char *format, ...) LHIO_PRINTF(3, 4);
/* lhio_fail(LH_ERROR_IO) with strerror(error) as the reason, remembered for
 * lhio_last_os_error(). */
int lhio_fail_os(int error, const char *path);

/* The big-endian 32-bit number at p, as PNG chunks and MP4 boxes store
 * their lengths. */
static inline uint32_t lhio_be32(const uint8_t *p)
{
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Whether the size bytes at data begin with the PNG signature. */
static inline bool lhio_png_signature_at(const uint8_t *data, size_t size)
{
  static const uint8_t signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  return size >= sizeof signature && memcmp(data, signature, sizeof signature) == 0;
}

/* Stores v at p big-endian, as MP4 boxes hold their numbers. */
static inline void lhio_put_be32(uint8_t *p, uint32_t v)
{
  p[0] = (uint8_t)(v >> 24);
  p[1] = (uint8_t)(v >> 16);
  p[2] = (uint8_t)(v >> 8);
  p[3] = (uint8_t)v;
}

/* Creates "<dir>/.<name>.<unique>.tmp" beside path (image.c), open for
 * writing, to be renamed over path once complete: its name starts with a dot
 * and ends in .tmp, so that a folder scan does not pick it up. */
int lhio_create_temp(const char *path, char **temp_path, FILE **file);
/* Puts the complete temporary file temp in place at path: place (NULL:
 * rename); removes temp if that fails (image.c). */
int lhio_place_temp(const char *temp, const char *path, LhioPlaceFunc place, void *data);

/* Whether fd is a named FIFO (mkfifo), whose writer may come after its
 * reader: an anonymous pipe had its writer from its start. */
bool lhio_is_named_fifo(int fd);
/* path opened to read, when it is a regular file (*size its size); else -1.
 * Never waits: the readers of a video's end (its last bytes, its header,
 * its index) reopen the path the demuxer read, and a FIFO's open() would
 * wait for a writer that has gone. */
int lhio_open_regular(const char *path, off_t *size);
/* What the first n bytes of a file that is no PNG or JPEG say it is ("a
 * WebP image", "a HEIF image (HEIC)", ...), or NULL (other-image-kind.c). */
const char *lhio_other_image_kind(const uint8_t *head, size_t n);
/* Whether data holds a whole PNG image and, right after it, the start of
 * another: PNG frames one after another, as FFmpeg's image2pipe writes
 * them (png-sequence.c). */
bool lhio_sniff_png_sequence(const uint8_t *data, size_t size);

/* wait, or lhio_set_fifo_wait's when NULL. */
const LhioFifoWait *lhio_fifo_wait_or_process(const LhioFifoWait *wait);

/* Readers get an open file positioned at its start and a zeroed image; on
 * failure they free what they allocated and leave the image zeroed.  The PNG
 * reader also gets the file's bytes when they are in memory (else NULL). */
int lhio_png_read(FILE *file, const LhioEncoded *encoded, const char *path, LhioReadMode mode,
                  uint64_t max_pixels, LhioImage *image);
int lhio_jpeg_read(FILE *file, const char *path, LhioReadMode mode, uint64_t max_pixels,
                   LhioImage *image);

/* libpng alone, without the fast path: what the fast path must match. */
int lhio_png_read_libpng(FILE *file, const char *path, uint64_t max_pixels, LhioImage *image);

#ifdef LHIO_HAVE_LIBDEFLATE
/* The fast path for the common PNGs (png-fast.c): LH_OK with the image png.c
 * would give, or LHIO_PNG_FAST_DECLINED, with no message and the image
 * untouched, for a file it does not cover or finds anything wrong with. */
#define LHIO_PNG_FAST_DECLINED 1
int lhio_png_fast_read(const uint8_t *data, size_t size, uint64_t max_pixels, LhioImage *image);
#endif

/* Writers check first whether they can write the image at all, so that
 * nothing is created for an image they refuse. */
/* A JPEG's metadata (jpeg-metadata.c): libjpeg asked to keep the segments
 * before jpeg_read_header, those it kept put in image->metadata after it;
 * the image's written after jpeg_start_compress. */
struct jpeg_decompress_struct;
struct jpeg_compress_struct;
void lhio_jpeg_save_markers(struct jpeg_decompress_struct *cinfo);
int lhio_jpeg_keep_saved_markers(struct jpeg_decompress_struct *cinfo, LhioImage *image);
void lhio_jpeg_write_metadata(struct jpeg_compress_struct *cinfo, const LhioImage *image);

/* A PNG's metadata (png-metadata.c): its carried chunks put in
 * image->metadata from the file's bytes; the image's written after
 * png_write_info. */
struct png_struct_def;
int lhio_png_metadata_from_bytes(const uint8_t *data, size_t size, LhioImage *image);
/* The frame count an animated PNG's acTL chunk states (before its image
 * data), or 0 (png-metadata.c). */
uint32_t lhio_png_animation_frames(const uint8_t *data, size_t size);
void lhio_png_write_metadata(struct png_struct_def *png, const LhioImage *image);

/* The boxes of an MP4 or QuickTime file (mp4-boxes.c).  The box at
 * data[at] within end: its type, where its payload starts and its whole
 * size; false when it does not fit. */
bool lhio_mp4_box_at(const uint8_t *data, size_t at, size_t end, const uint8_t **type,
                     size_t *payload, size_t *size);
/* The first box of type wanted among the boxes in [from, end): where its
 * payload starts and where it ends. */
bool lhio_mp4_child(const uint8_t *data, size_t from, size_t end, const char *wanted,
                    size_t *payload, size_t *child_end);

/* The first video track (trak whose handler is vide) among moov's children
 * from first: where its payload starts and ends, and its mdia box's. */
bool lhio_mp4_video_trak(const uint8_t *moov, size_t size, size_t first, size_t *trak,
                         size_t *trak_end, size_t *mdia, size_t *mdia_end);
/* The same for the first track whose handler is handler ("tmcd", ...). */
bool lhio_mp4_trak_of(const uint8_t *moov, size_t size, size_t first, const char *handler,
                      size_t *trak, size_t *trak_end, size_t *mdia, size_t *mdia_end);
/* How many tracks whose handler is handler ("tmcd", "soun", ...) the MP4
 * or QuickTime file at path holds (mp4-tracks.c); 0 when it cannot be
 * read. */
int lhio_mp4_tracks_of(const char *path, const char *handler);

/* Whether the MP4 or QuickTime file at path states full range for its
 * video (its sample entry's nclx colr box), which GStreamer 1.22's qtdemux
 * drops (mp4-colour-range.c); false when it states limited, none, or it
 * cannot be read. */
bool lhio_mp4_states_full_range(const char *path);

/* A file's top-level moov box, read whole. */
typedef struct {
  uint8_t *data; /* the box, its header included; NULL: the file has none */
  size_t size;
  size_t children;  /* where its first child starts in data */
  off_t at;         /* its offset in the file */
  size_t tail;      /* the bytes after it */
  bool media_after; /* they hold media data (mdat, moof): moov cannot grow */
} LhioMp4Moov;

/* Reads the moov box of the open file (none, one that does not fit in the
 * file, or above 64 MB: data NULL). */
int lhio_mp4_read_moov(int fd, const char *path, LhioMp4Moov *moov);
/* Writes data (size bytes) in place of the moov read, moving what follows
 * it where the size changed (refused when media data follows). */
int lhio_mp4_write_moov(int fd, const char *path, const LhioMp4Moov *moov, const uint8_t *data,
                        size_t size);
void lhio_mp4_moov_clear(LhioMp4Moov *moov);
/* The moov box of the regular file at path, for the readers that only look
 * (duration, timecode, colour range): false where there is none to read (a
 * pipe, read once by the demuxer; no moov; an error), moov then cleared. */
bool lhio_mp4_file_moov(const char *path, LhioMp4Moov *moov);

/* The duration in seconds that the first video track of the MP4 or
 * QuickTime file at path states (its media header), NAN when it is none,
 * states none or is not a regular file (mp4-track-duration.c). */
double lhio_mp4_video_duration(const char *path);

/* Whether the MP4 or QuickTime file at path was cut inside its media
 * (mp4-end.c): 1 when a top-level mdat, moof or moov box runs past the end
 * of the file, with the reason ("it ends 1000 bytes into its 4096-byte mdat
 * box") in why; 0 otherwise, and for what is not a regular file. */
int lhio_mp4_file_cut(const char *path, char *why, size_t why_size);

/* How a file ends, as its packets tell it. */
typedef enum {
  LHIO_FILE_END_UNKNOWN, /* not told: another kind of file, not a regular file, or
                            bytes that are no packet */
  LHIO_FILE_END_WHOLE,   /* the last packet ends with the file */
  LHIO_FILE_END_CUT,     /* the last packet runs past the end of the file */
} LhioFileEnd;

/* How an FLV, IVF, Ogg or MPEG program stream file ends, told by its first
 * bytes and a walk over its packets (packet-end.c: tags, frames, pages,
 * packs and PES packets); where it is cut, the reason ("it ends 300 bytes
 * into its 1234-byte FLV tag") in why. */
LhioFileEnd lhio_packet_file_end(const char *path, char *why, size_t why_size);

/* Writes a rotation of quarter_turns (1 to 3, clockwise) into the video
 * track's header of the MP4 or QuickTime file at path, where its matrix is
 * still the identity (mp4-rotation.c); other values do nothing. */
int lhio_mp4_set_rotation(const char *path, int quarter_turns);

/* Gives the movie, track and media headers of output (an MP4 or QuickTime
 * file qtmux or mp4mux wrote from input) input's creation time, in place
 * of the time of the run (mp4-creation-time.c). */
int lhio_mp4_keep_creation_time(const char *input, const char *output);

/* Copies input's chapters (a Nero chpl box in its moov's udta) into the
 * moov of output, an MP4 or QuickTime file qtmux or mp4mux wrote from it
 * (mp4-chapters.c).  Output is left as it is where its moov has chapters
 * already, cannot grow (media data after it) or has no place for them at
 * its udta's end (at its own where it has no udta): a box of size 0 or
 * bytes that make no box there. */
int lhio_mp4_keep_chapters(const char *input, const char *output);

/* An EBML element's header (mkv-ebml.c), as Matroska and WebM files are
 * made of: its ID (marker bits kept, as IDs are written), the width of its
 * size field, the size of its data (UINT64_MAX: unknown) and the header's
 * length. */
typedef struct {
  uint32_t id;
  int size_width;
  uint64_t size;
  size_t length;
} LhioEbmlHeader;

/* The header of the element at data (available bytes); false when they do
 * not hold one. */
bool lhio_ebml_header(const uint8_t *data, size_t available, LhioEbmlHeader *header);
/* The header of the element at offset at of the open file, before end. */
bool lhio_ebml_header_at(int fd, off_t at, off_t end, LhioEbmlHeader *header);
/* Calls each for the children of the open Matroska file's segment, in
 * order, with each one's offset and header, until it returns false or a
 * child of unknown size comes; false when the file has no segment. */
typedef bool (*LhioMkvChildFunc)(int fd, off_t at, const LhioEbmlHeader *header, void *data);
bool lhio_mkv_segment_children(int fd, LhioMkvChildFunc each, void *data);
/* The files attached to the Matroska or WebM file at path (fonts for its
 * subtitles, a cover), mkv-attachments.c; 0 when it has none or cannot be
 * read. */
int lhio_mkv_attachments(const char *path);

/* What a Matroska or WebM file states of its first video track's end
 * (mkv-track-end.c). */
typedef struct {
  double video_end;  /* its DURATION tag (FFmpeg's, mkvmerge's), seconds; NAN: none */
  bool other_tracks; /* tracks besides it (audio, subtitles) */
  bool cut;          /* its segment's stated size runs past the file's end */
  double cut_at;     /* when cut: the last block's time before the cut, seconds; NAN: none */
} LhioMkvVideoEnd;

/* Reads it from the file at path; false when that is no regular Matroska
 * or WebM file with a video track. */
bool lhio_mkv_video_end(const char *path, LhioMkvVideoEnd *end);

/* What the end of the YUV4MPEG2 file at path, whose frames_decoded frames
 * y4mdec gave, says (y4m-end.c): LH_ERROR_CORRUPT when it was cut inside a
 * frame (why: "the file is truncated: it ends 3614 bytes into a 4614-byte
 * YUV4MPEG2 frame"), LH_ERROR_UNSUPPORTED when it holds more whole frames
 * than were decoded (why says so), 0 when its frames are whole and all
 * decoded, or it cannot be told (a header this does not read, not a regular
 * file).  One walk of its frame headers. */
int lhio_y4m_end(const char *path, uint64_t frames_decoded, char *why, size_t why_size);

/* Whether the YUV4MPEG2 file at path is one GStreamer's y4mdec would fail
 * on with a message that reads as damage, or wait on until the timeout
 * (y4m-end.c): LH_ERROR_UNSUPPORTED (a colour space it does not read, no
 * frame at all) or LH_ERROR_CORRUPT (cut inside its first frame), with the
 * reason in why; 0 otherwise, or when it cannot be told (not a regular
 * YUV4MPEG2 file). */
int lhio_y4m_unreadable(const char *path, char *why, size_t why_size);

/* Whether the header of the YUV4MPEG2 file at path tags its samples full
 * range (XCOLORRANGE=FULL, as FFmpeg writes it), which GStreamer 1.22's
 * y4mdec does not read (y4m-end.c); false for limited, untagged, or no
 * regular YUV4MPEG2 file. */
bool lhio_y4m_states_full_range(const char *path);

/* Whether the file at path is in a container GStreamer cannot read, though
 * it has a demuxer that takes it and then hangs or fails with a message
 * that says nothing of why (NUT; video-kind.c): LH_ERROR_UNSUPPORTED with
 * the reason in why, 0 otherwise, when it cannot be read or is no regular
 * file (a FIFO is not opened). */
int lhio_video_unreadable_container(const char *path, char *why, size_t why_size);

/* Turns the tag values of the Matroska or WebM file at path, which
 * matroskamux wrote quoted and escaped as GStreamer serializes strings
 * ("My\ clip"), back into their text, in place (mkv-tags.c). */
int lhio_mkv_unquote_tags(const char *path);

int lhio_png_check(const char *path, const LhioImage *image);
int lhio_jpeg_check(const char *path, const LhioImage *image);

/* Presentation times for MPEG-1/2 video pictures whose packets have none
 * (mpeg-video-times.c): a program stream states one for the first picture
 * of a packet only.  One state a stream, from lhio_mpeg_times_init. */
#define LHIO_NO_TIME UINT64_MAX
typedef struct {
  uint64_t origin; /* time of temporal reference 0 in the current group, or LHIO_NO_TIME */
  uint64_t frame;  /* a frame's duration (the last packet's), 0 unknown */
  int last_place;  /* the largest temporal reference of the current group, -1 none */
  bool in_group;   /* a group header was seen: temporal references count from it */
  bool pulldown;   /* a picture repeats its first field: times left alone */
} LhioMpegTimes;

void lhio_mpeg_times_init(LhioMpegTimes *times);

/* One picture's packet (its bytes, its presentation time *pts or
 * LHIO_NO_TIME, its duration or LHIO_NO_TIME, nanoseconds): true where *pts
 * had no time and was given one, from the picture's temporal reference and
 * the times of the pictures before it in its group. */
bool lhio_mpeg_times_fill(LhioMpegTimes *times, const uint8_t *data, size_t size, uint64_t *pts,
                          uint64_t duration);

/* Writers get a fresh temporary file; the caller closes, renames or unlinks. */
int lhio_png_write(FILE *file, const char *path, const LhioImage *image,
                   const LhioWriteOptions *options);
int lhio_jpeg_write(FILE *file, const char *path, const LhioImage *image,
                    const LhioWriteOptions *options);

/* Bytes per row of the frame's first plane when its stride says 0. */
size_t lhio_packed_row_bytes(const LhFrame *frame);

/* Fills image->frame for one packed plane of pixels owned by the image. */
/* A pixel buffer from the program's allocator (lhio_set_pixel_allocator),
 * and its release; decoders use these for LhioImage.pixels alone. */
void *lhio_pixels_alloc(size_t bytes);
void lhio_pixels_release(void *pixels);

void lhio_set_frame(LhioImage *image, LhFormat format, int width, int height, int bit_depth,
                    size_t stride);

#endif /* LHIO_PRIVATE_H */
