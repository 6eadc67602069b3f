/* lhio-video.h: video files as a source of lumahist frames, decoded by
 * GStreamer (decodebin3: NVDEC decoders when a GPU is usable, software ones
 * otherwise), one frame at a time, in host or CUDA memory.  Functions return 0
 * or a negative LhStatus and set the message that lh_last_error() returns.
 * In a build without GStreamer the sniffing works and opening a video fails
 * with LH_ERROR_UNSUPPORTED, saying so. */
#ifndef LHIO_VIDEO_H
#define LHIO_VIDEO_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lhio.h"
#include "lumahist.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bytes of a file's head that lhio_sniff_video() wants (an MPEG-TS file is
 * told by its sync byte every 188 bytes, an M2TS one every 192). */
#define LHIO_VIDEO_SNIFF_BYTES 512

/* Whether the first bytes are those of a video container or stream: ISO BMFF
 * / QuickTime (mp4, mov, m4v, 3gp; not the still-image brands of HEIF and
 * AVIF), Matroska / WebM (EBML), MPEG-TS and M2TS, AVI, YUV4MPEG2, MPEG-PS,
 * FLV, IVF, MXF, ASF, Ogg, DV, NUT (which GStreamer cannot read: opening
 * one says so). */
bool lhio_sniff_video(const uint8_t *head, size_t n);

/* Whether a path's extension is that of a video file (.mp4, .mov, .mkv,
 * .webm, .ts, .m2ts, .avi, .y4m, .mpg, ...; any case): a hint for files whose
 * content says nothing (a raw .h264 stream), and what folders are searched
 * for besides images. */
bool lhio_is_video_name(const char *path);

/* The file name extension of the container whose head this is (".mp4",
 * ".mov", ".mkv", ".webm", ".ts", ".avi", ...), for an output that has no
 * name of its own (a video on standard input); "" when head is no video
 * lhio_sniff_video() knows. */
const char *lhio_video_extension(const uint8_t *head, size_t n);

/* Whether path is a video to be decoded by lhio_video_open(): its content
 * says so, or its name does and its content is not a PNG or JPEG, or it is
 * Motion JPEG (lhio_is_motion_jpeg).  A file that cannot be read is not one
 * (its reader reports why). */
bool lhio_path_is_video(const char *path);

/* Whether path is named as Motion JPEG (.mjpeg, .mjpg: JPEG frames one
 * after the other, nothing around them, as a webcam or `ffmpeg -f mjpeg`
 * writes them) and, when it is a regular file, begins as a JPEG; or is
 * standard input ("/dev/stdin", which has no name) redirected from a
 * regular file that lhio_sniff_motion_jpeg() tells Motion JPEG. */
bool lhio_is_motion_jpeg(const char *path);

/* Whether bytes held whole in memory (a pipe's, which has no name) are
 * Motion JPEG: a first JPEG image, then right after its end-of-image marker
 * (and any zero bytes) the start of another.  A camera's JPEG whose APP2
 * MPF index lists images stored after the first (a depth map, a gain map,
 * a preview) is one image, as are bytes after the end that begin no JPEG
 * (a phone's Motion Photo video). */
bool lhio_sniff_motion_jpeg(const uint8_t *data, size_t size);

/* Whether a Motion JPEG file is cut: its last frame lacks the end-of-image
 * marker (jpegparse drops such a frame, and the stream ended quietly), said
 * in why; zero bytes after it are padding, looked through for 1 MiB (a
 * file that ends in more zeros is not told cut).  False for a file that is
 * not a regular one (a FIFO is not opened). */
bool lhio_motion_jpeg_cut(const char *path, char *why, size_t why_size);

/* The end of an MPEG-TS or M2TS file (ts-end.c): whether it was cut.  A
 * transport stream states no duration and demuxers end a cut one quietly;
 * its last bytes show a cut that leaves a packet short (188 bytes, 192 for
 * M2TS, 204 or 208 with parity), or a stream's last PES packet shorter than
 * its header states.  A cut between two packets inside a PES of unstated
 * length (FFmpeg writes video so) is not seen. */

/* Bytes of a file's end that lhio_ts_file_cut() reads. */
#define LHIO_TS_END_BYTES (1024 * 1024)

/* tail: the last n bytes of a file.  1 when they show it was cut, with the
 * reason (a clause: "it ends 75 bytes into a 188-byte MPEG-TS packet") in
 * why; 0 when the end is whole or cannot be told (no run of packets, bytes
 * after the last packet that do not begin one). */
int lhio_ts_end_cut(const uint8_t *tail, size_t n, char *why, size_t why_size);

/* The same on a regular file, from its last LHIO_TS_END_BYTES; 0 as well
 * when it cannot be read. */
int lhio_ts_file_cut(const char *path, char *why, size_t why_size);

/* The programs of an MPEG-TS (or M2TS) file, as its first program
 * association table lists them (the network's program 0 aside), and the
 * one GStreamer's tsdemux plays: the first whose map (PMT) comes after that
 * table (-1 when none does in the bytes read). */
#define LHIO_TS_MAX_PROGRAMS 64
typedef struct {
  int count;
  int numbers[LHIO_TS_MAX_PROGRAMS];
  int first_mapped;
  /* The elementary streams that program's map lists, -1 when its map is
   * not whole in the bytes read. */
  int first_mapped_streams;
} LhioTsPrograms;

/* Bytes of a file's head that lhio_ts_file_programs() reads: tables come
 * again every 0.1 s or so, 0.8 s of a 20 Mbit/s multiplex. */
#define LHIO_TS_HEAD_BYTES (2 * 1024 * 1024)

/* head: the first n bytes of a file.  Count 0 when no whole table is in
 * them (not a transport stream, or one that begins with none). */
void lhio_ts_programs(const uint8_t *head, size_t n, LhioTsPrograms *programs);
/* The same on a regular file, from its first LHIO_TS_HEAD_BYTES; -1 when
 * it cannot be read (a pipe: none read). */
int lhio_ts_file_programs(const char *path, LhioTsPrograms *programs);

/* Whether the file at path is an MPEG-TS of several programs: then "3
 * programs (7, 3, 9)" into list, and "program 7", the one tsdemux plays,
 * into played (unknown: unknown). */
bool lhio_ts_several_programs(const char *path, char *list, size_t list_size, char *played,
                              size_t played_size, const char *unknown);

/* The program numbers a transport stream may have: 0 is the network's. */
#define LHIO_TS_MAX_PROGRAM_NUMBER 65535
/* LH_OK when program (> 0) is one of path's, or path is no MPEG-TS whose
 * programs its head lists (another container: program does not apply);
 * else LH_ERROR_INVALID_ARGUMENT, the message naming its programs. */
int lhio_ts_program_check(const char *path, int program);

/* Whether this build reads video (GStreamer found); *why says why not. */
bool lhio_video_available(const char **why);

typedef struct LhioVideo LhioVideo;

/* A zeroed struct asks for the defaults. */
typedef struct {
  bool allow_cuda;  /* frames may come in CUDA memory (NVDEC decoders) */
  double start_s;   /* frames before this presentation time are decoded and dropped */
  int program;      /* the MPEG-TS program read (lhio_ts_program_check); 0: tsdemux's choice */
  double timeout_s; /* no frame and no end for this long: a stuck pipeline; 0: 30 s */
  /* May be NULL; once non-zero (set from any thread or a signal handler),
   * lhio_video_next() stops waiting for a frame within a tenth of a second
   * and returns LHIO_VIDEO_STOPPED. */
  volatile sig_atomic_t *stop;
  /* How long a named FIFO waits for its writer's first bytes (NULL:
   * lhio_set_fifo_wait's). */
  const LhioFifoWait *fifo_wait;
} LhioVideoOptions;

/* lhio_video_next()'s return when options->stop ended its wait: no failure
 * (the file was neither read to its end nor found damaged). */
#define LHIO_VIDEO_STOPPED 2

/* One decoded frame, valid until the next lhio_video_next() or close. */
typedef struct {
  /* The luma: the Y plane of YUV as GRAY8, GRAY16 (10, 12, 16 bits in the low
   * bits), P010 or NV12; R'G'B' frames as they are.  Memory host or CUDA. */
  LhFrame frame;
  uint64_t index;  /* decoded frames before it from --start on */
  double pts;      /* seconds; NAN when the buffer has none */
  double duration; /* seconds; NAN when unknown */
  int keyframe;    /* 1 a keyframe, 0 not, -1 unknown */
  bool warned;     /* the decoder warned (a damaged stream) since the last frame */
  LhMatrix matrix; /* from the stream's colorimetry, as the element reads it */
  LhRange range;
  const char *format; /* GStreamer's name, e.g. "I420_10LE" */
} LhioVideoFrame;

/* Makes the NVDEC decoders of CUDA device `device` the ones GStreamer
 * chooses from now on, in this process (nvcodec registers one element a
 * device: nvh264dec, nvh264device1dec, ...; gst-nvdec-device.c); -1 puts
 * back nvcodec's own choice (the first device's), where another device's
 * was made first before. */
void lhio_video_prefer_cuda_device(int device);

/* Starts decoding path (its first video stream).  Fails for a file that is
 * not a video GStreamer reads, before any frame. */
int lhio_video_open(const char *path, const LhioVideoOptions *options, LhioVideo **video);

/* The next frame into *frame: 1, or 0 at the end of the stream (the first
 * call too, when every frame came before options->start_s), or a negative
 * status for a failure (the stream is damaged, no decoder, no video stream,
 * stuck), or LHIO_VIDEO_STOPPED (options->stop), after the last two of which
 * only lhio_video_close() may be called. */
int lhio_video_next(LhioVideo *video, LhioVideoFrame *frame);

/* The luma plane of the current frame in host memory (a CUDA frame's is
 * downloaded, once per frame): *plane, *stride, and bytes per sample (1 or
 * 2); P010's samples are shifted down to its 10 bits. */
int lhio_video_host_luma(LhioVideo *video, const uint8_t **plane, size_t *stride,
                         int *sample_bytes);

/* Around library calls on CUDA frames: makes the CUDA context the frames
 * live in current on this thread, and undoes it.  Nothing while no frame
 * came in CUDA memory.  That context lives until lhio_video_close(): free
 * what was made in it (a library context) between these, before closing. */
int lhio_video_cuda_enter(LhioVideo *video);
void lhio_video_cuda_leave(LhioVideo *video);

/* The decoder element in use ("avdec_h264", "nvh264dec", ...), once the
 * first frame came; "" before. */
const char *lhio_video_decoder(const LhioVideo *video);
/* The duration of the file, seconds; NAN when unknown. */
double lhio_video_duration(LhioVideo *video);
/* Whether GStreamer's tsdemux reads it (an MPEG-TS or M2TS), once the
 * first frame came: lhio_ts_file_programs() says which of its programs. */
bool lhio_video_transport_stream(LhioVideo *video);

void lhio_video_close(LhioVideo *video);

/* ------------------------------------------------------------------------ */
/* Rewriting a video (video-rewrite.c): every frame of its first video stream
 * decoded, changed by the caller in system memory, encoded again and muxed
 * into the input's container with its other streams copied unchanged.      */

/* Changes one decoded frame (host memory; the format GStreamer decoded,
 * matrix and range from its colorimetry) from in into out: out is in (the
 * frame changed in place), or with fills_output a frame of the same format
 * and size, elsewhere, to be written whole.  orientation: how a player turns
 * the frames (the stream's image-orientation tag: a phone's portrait clip),
 * as an Exif orientation (LhOverlayOptions.orientation); 1 when not turned.
 * 0 or a negative status with the message set (lh_set_error), which ends the
 * rewrite. */
typedef int (*LhioVideoChange)(const LhFrame *in, LhFrame *out, LhMatrix matrix, LhRange range,
                               int orientation, void *data);

/* Quality: the encoders' constant-quality scale, as x264's CRF (0 lossless
 * where the encoder has it, 51 worst). */
#define LHIO_VIDEO_DEFAULT_CRF 18
#define LHIO_VIDEO_MAX_CRF 51

typedef struct {
  const char *codec; /* the encoder element (x264enc, ...); NULL: one for the input's codec */
  int crf;           /* 0 .. LHIO_VIDEO_MAX_CRF; < 0: LHIO_VIDEO_DEFAULT_CRF */
  int bitrate_kbps;  /* > 0: a mean bitrate instead of crf */
  double timeout_s;  /* no frame and no end for this long: a stuck pipeline; 0: 30 s */
  int program;       /* the MPEG-TS program written (lhio_ts_program_check); 0: tsdemux's */
  /* Non-zero stops the rewrite (a signal): no output is left. */
  volatile sig_atomic_t *stop;
  LhioVideoChange change;
  bool fills_output; /* change writes every sample of out (lh_equalize does) */
  void *data;
  LhioPlaceFunc place; /* puts the finished file in place (NULL: rename), as */
  void *place_data;    /* LhioWriteOptions.place */
} LhioVideoRewriteOptions;

typedef struct {
  char encoder[64]; /* the encoder element that ran */
  char decoder[64];
  char muxer[64];
  uint64_t frames; /* frames changed */
  bool stopped;    /* options->stop ended it */
  /* The streams left out because the muxer does not take them (their caps,
   * "; " between), or NULL; to be freed with free(). */
  char *left_out;
  /* The video had an alpha channel (VP8/VP9 with alpha, as WebM stores
   * it), which the frames written have not: GStreamer 1.22's encoders and
   * muxers write none. */
  bool alpha_left_out;
  /* The MP4 or QuickTime input had a timecode track (tmcd), which the file
   * written has not: GStreamer 1.22's qtdemux exposes none to copy. */
  bool timecode_left_out;
  /* The files attached to the Matroska input (fonts, a cover), none of
   * which the file written has: GStreamer 1.22's matroskamux writes none. */
  int attachments_left_out;
} LhioVideoRewriteResult;

/* Writes output from input through a temporary file beside output, renamed
 * over it once the muxer has finished; on any failure (or a stop) no file is
 * left.  The output's folder must exist. */
int lhio_video_rewrite(const char *input, const char *output,
                       const LhioVideoRewriteOptions *options, LhioVideoRewriteResult *result);

#ifdef __cplusplus
}
#endif

#endif /* LHIO_VIDEO_H */
