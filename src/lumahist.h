/* lumahist.h: the public API of lumahist, luminance histograms, statistics and
 * percentiles of images and video frames, on the GPU (CUDA) or the CPU.
 *
 * Every function that can fail returns 0 (LH_OK) or a negative LhStatus, and
 * sets a thread-local message that lh_last_error() returns.  The library never
 * prints, never exits and keeps no global mutable state.  All numbers are the
 * same, bit for bit, on the CPU and the CUDA backend.
 */
#ifndef LUMAHIST_H
#define LUMAHIST_H

#include <stddef.h>
#include <stdint.h>

#include "lumahist-version.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(LH_BUILDING_LIBRARY) && defined(__GNUC__)
#define LH_API __attribute__((visibility("default")))
#else
#define LH_API
#endif

/* ------------------------------------------------------------------------ */
/* Status and errors                                                         */

typedef enum {
  LH_OK = 0,
  LH_ERROR_INVALID_ARGUMENT = -1, /* a NULL pointer, bad size, stride, option */
  LH_ERROR_UNSUPPORTED = -2,      /* a format or mode this build cannot do */
  LH_ERROR_NO_MEMORY = -3,        /* host or device allocation failed */
  LH_ERROR_NO_DEVICE = -4,        /* the CUDA backend was asked for, none usable */
  LH_ERROR_CUDA = -5,             /* a CUDA call failed; the message says which */
  LH_ERROR_IO = -6,               /* a file could not be read or written */
  LH_ERROR_CORRUPT = -7,          /* a file is not a valid image */
  LH_ERROR_TOO_LARGE = -8         /* dimensions above the configured pixel limit */
} LhStatus;

/* The message of the last failed call on this thread ("" if none). */
LH_API const char *lh_last_error(void);

/* Sets this thread's message (printf-style) and returns status, for code
 * built on the library (image readers, front ends) that reports the same way. */
LH_API int lh_set_error(int status, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* A constant name for a status, e.g. "invalid-argument". */
LH_API const char *lh_status_name(int status);

/* The version of the library running, "MAJOR.MINOR.MICRO": the
 * LH_VERSION_* numbers of the headers it was built with (lumahist-version.h),
 * which may be newer than those an application was compiled against. */
LH_API const char *lh_version(void);

/* ------------------------------------------------------------------------ */
/* Frames                                                                    */

/* Pixel formats.  8-bit unless named otherwise; 16-bit samples are in host
 * (little-endian) order.  For YUV formats only the Y plane is analysed. */
typedef enum {
  LH_FORMAT_GRAY8,  /* one plane, 1 byte per pixel */
  LH_FORMAT_GRAY16, /* one plane, 2 bytes per pixel, bit_depth significant bits (LSB) */
  LH_FORMAT_RGB,    /* packed R, G, B */
  LH_FORMAT_BGR,
  LH_FORMAT_RGBA,
  LH_FORMAT_BGRA,
  LH_FORMAT_RGBX, /* like RGBA, the 4th byte ignored */
  LH_FORMAT_BGRX,
  LH_FORMAT_RGB16,  /* packed R, G, B of 16 bits each (16-bit PNG) */
  LH_FORMAT_RGBA16, /* packed R, G, B, A of 16 bits each */
  LH_FORMAT_I420,   /* planar Y, U, V; chroma halved both ways (rounded up) */
  LH_FORMAT_NV12,   /* planar Y, interleaved UV; chroma halved both ways */
  LH_FORMAT_P010,   /* as NV12 with 16-bit samples, 10 significant bits at the top */
  /* More YUV, as cameras, capture cards and decoders give it (GStreamer's
   * layouts and names).  Chroma is subsampled 4:2:0 (halved both ways),
   * 4:2:2 (halved across), 4:1:1 (quartered across) or not at all (4:4:4),
   * sizes rounded up; planar formats keep Y, U, V in planes 0, 1, 2 (YV12:
   * Y, V, U), semi-planar ones Y and interleaved pairs in planes 0, 1. */
  LH_FORMAT_YV12,      /* as I420 with V before U */
  LH_FORMAT_NV21,      /* as NV12 with VU pairs */
  LH_FORMAT_Y42B,      /* planar 4:2:2 */
  LH_FORMAT_Y444,      /* planar 4:4:4 */
  LH_FORMAT_NV16,      /* semi-planar 4:2:2 */
  LH_FORMAT_NV24,      /* semi-planar 4:4:4 */
  LH_FORMAT_Y41B,      /* planar 4:1:1 */
  LH_FORMAT_YUY2,      /* packed 4:2:2, one plane of Y0 U Y1 V (webcams) */
  LH_FORMAT_YVYU,      /* packed Y0 V Y1 U */
  LH_FORMAT_UYVY,      /* packed U Y0 V Y1 (capture cards) */
  LH_FORMAT_VYUY,      /* packed V Y0 U Y1 */
  LH_FORMAT_V210,      /* packed 10-bit 4:2:2: 6 pixels in four 32-bit little-endian words
                          (SDI capture cards); regions start at a multiple of 6 pixels */
  LH_FORMAT_GRAY16_BE, /* as GRAY16, samples big-endian */
  LH_FORMAT_I420_10LE, /* as I420 with 16-bit samples, 10 significant bits at the bottom */
  LH_FORMAT_I420_12LE, /* 12 bits at the bottom */
  LH_FORMAT_I422_10LE, /* as Y42B with 16-bit samples, 10 bits at the bottom */
  LH_FORMAT_I422_12LE,
  LH_FORMAT_Y444_10LE, /* as Y444 with 16-bit samples, 10 bits at the bottom */
  LH_FORMAT_Y444_12LE,
  LH_FORMAT_Y444_16LE,
  LH_FORMAT_P012,      /* as P010 with 12 significant bits at the top */
  LH_FORMAT_P016,      /* as P010 with 16 significant bits */
  /* R'G'B' 10 and 16 bits */
  /* 10-bit R'G'B' packed in one 32-bit word a pixel, GStreamer's layouts: */
  LH_FORMAT_RGB10A2_LE, /* little-endian words: R bits 0-9, G 10-19, B 20-29, alpha 30-31 */
  LH_FORMAT_BGR10A2_LE, /* little-endian words: B bits 0-9, G 10-19, R 20-29, alpha 30-31 */
  LH_FORMAT_R210,       /* big-endian words: B bits 0-9, G 10-19, R 20-29, 2 bits unused */
  LH_FORMAT_BGRA16,     /* packed B, G, R, A of 16 bits each (GStreamer's BGRA64_LE; its
                           RGBA64_LE is LH_FORMAT_RGBA16) */
  LH_FORMAT_COUNT
} LhFormat;

/* "GRAY8", "RGB", "NV12", ...; NULL for a value out of range. */
LH_API const char *lh_format_name(LhFormat format);

/* The format called name: a name that lh_format_name() gives, or
 * GStreamer's name of the same layout (GRAY16_LE, P010_10LE, P012_LE,
 * P016_LE, RGBA64_LE, BGRA64_LE, r210, RGBx, ...), in any case.  "RGB16" is
 * lumahist's 16-bit R, G, B, not GStreamer's 5-6-5 format of that name. */
LH_API int lh_format_from_name(const char *name, LhFormat *format);

/* The luma bit depth of a frame of this format whose bit_depth is 0: 8, 10,
 * 12 or 16; 0 for a value out of range. */
LH_API int lh_format_bit_depth(LhFormat format);

/* The alignment, in bytes, that a frame of this format needs of its first
 * plane's address and stride (the Y or packed plane, read a sample at a
 * time): the size of its samples (1; 2 for 16-bit samples; 4 for formats of
 * 32-bit words: packed 10-bit R'G'B', v210).  A frame without it is refused
 * (LH_ERROR_INVALID_ARGUMENT): copy it to an aligned one first.  Chroma
 * planes need none: they are copied and drawn into a byte at a time (and
 * lh_frame_init() gives 16-bit chroma an odd stride where a padded Y
 * stride is 4k + 2 bytes).  0 for a value out of range. */
LH_API int lh_format_alignment(LhFormat format);

/* The part of plane `plane` (0 .. 2) that a width x height frame of this
 * format uses: *rows rows of *row_bytes bytes, as lh_frame_init() lays the
 * planes out (chroma sizes rounded up; the pairs of packed 4:2:2 pixels and
 * v210's groups of 6 whole).  Every byte the library reads or writes lies in
 * those rows, at the plane's stride.  A plane the format does not have: 0
 * rows of 0 bytes. */
LH_API int lh_format_plane_size(LhFormat format, int plane, int width, int height,
                                size_t *row_bytes, int *rows);

/* Where a frame's planes live. */
typedef enum {
  LH_MEMORY_HOST, /* ordinary (or pinned) host memory */
  /* CUDA device memory of the current device, complete when the call is
   * made: written on the context's stream (lh_context_set_stream) or
   * synchronized first.  The context's own stream does not wait for the
   * default stream, and cudaMemcpy from pageable memory may return before
   * its copy has landed.  Frames the library rewrites (lh_equalize,
   * lh_apply_lut, lh_overlay) are complete when the call returns if the
   * context uses its own stream; on a stream given with
   * lh_context_set_stream the work is queued there, and the caller orders
   * what reads the frame after it. */
  LH_MEMORY_CUDA
} LhMemory;

/* A frame: format, size and where each plane is.  Strides are in bytes and
 * may be larger than a row (pitched memory).  planes[1..2] and strides[1..2]
 * are only read for YUV formats and only when the operation touches chroma. */
typedef struct {
  LhFormat format;
  LhMemory memory;
  int width;
  int height;
  int bit_depth; /* significant bits; 0 means the format's own (GRAY16: 16) */
  void *planes[3];
  size_t strides[3];
} LhFrame;

/* Fills *frame for one contiguous buffer holding all planes with the given
 * row stride of the first plane (0: tightly packed).  The chroma planes
 * follow the Y plane's height rows one after the other, each of
 * ceil(height / 2^subsampling) rows at the Y stride scaled as the row is
 * (ceil(stride / 2^subsampling), twice that for the pairs of NV24; the Y
 * stride itself for NV12, NV21, NV16 and P01x), or a whole chroma row where
 * that is more.  This is not always GStreamer's layout: GstVideoInfo rounds
 * chroma strides up to 4 bytes and starts the chroma of 4:2:0 formats after
 * an even number of Y rows (I420 66x48, 63x47; NV12 63x47), so for its
 * buffers set planes[] and strides[] from its offsets and strides. */
LH_API int lh_frame_init(LhFrame *frame, LhFormat format, LhMemory memory, int width, int height,
                         void *data, size_t stride);

/* Bytes that lh_frame_init() expects at data for this format, size and stride;
 * 0 for an unknown format, a side below 1, a stride below a row (which
 * lh_frame_init() refuses), or a size beyond a size_t. */
LH_API size_t lh_frame_buffer_size(LhFormat format, int width, int height, size_t stride);

/* ------------------------------------------------------------------------ */
/* Analysis options                                                          */

/* The R'G'B' -> Y' matrix (ignored for gray and YUV input). */
typedef enum {
  LH_MATRIX_BT601, /* Kr 0.299, Kb 0.114: JPEG/JFIF, OpenCV, Pillow */
  LH_MATRIX_BT709, /* Kr 0.2126, Kb 0.0722: HD video */
  LH_MATRIX_BT2020 /* Kr 0.2627, Kb 0.0593: UHD video */
} LhMatrix;

/* How code values are to be read: full range, or limited ("video", 16-235
 * for 8 bits, scaled by 2^(bits-8) above). */
typedef enum { LH_RANGE_FULL, LH_RANGE_LIMITED } LhRange;

/* How percentiles are found; both methods are exact and give equal values. */
typedef enum {
  LH_PERCENTILE_AUTO,      /* the faster of the two for this backend and size */
  LH_PERCENTILE_HISTOGRAM, /* from the cumulative histogram */
  LH_PERCENTILE_SORT       /* by sorting the luma values (GPU radix sort) */
} LhPercentileMethod;

LH_API const char *lh_matrix_name(LhMatrix matrix);           /* "bt601", ... */
LH_API const char *lh_range_name(LhRange range);              /* "full", "limited" */
/* The matrix or range a name that lh_matrix_name() or lh_range_name()
 * gives stands for, in any case ("BT709" too). */
LH_API int lh_matrix_from_name(const char *name, LhMatrix *matrix);
LH_API int lh_range_from_name(const char *name, LhRange *range);

#define LH_MAX_PERCENTILES 64

/* A rectangle in pixels; a zero width or height means the whole frame. */
typedef struct {
  int x;
  int y;
  int width;
  int height;
} LhRect;

typedef struct {
  LhMatrix matrix;
  LhRange range;
  LhRect roi;
  LhPercentileMethod percentile_method;
  int n_percentiles;                      /* 0 .. LH_MAX_PERCENTILES */
  double percentiles[LH_MAX_PERCENTILES]; /* each in [0, 100] */
} LhOptions;

/* Defaults: BT.601, full range, whole frame, automatic method, no extra
 * percentiles (the median is always computed). */
LH_API void lh_options_init(LhOptions *options);

/* Parses "1,5,50,95,99" into options->percentiles. */
LH_API int lh_options_set_percentiles(LhOptions *options, const char *list);

/* ------------------------------------------------------------------------ */
/* Results                                                                   */

/* The statistics of one frame.  Values are code values of bit_depth bits;
 * the *_norm fields map the declared range to [0, 1] (black to 0, white or
 * nominal peak to 1; limited-range values outside it fall outside [0, 1]).
 * Initialise with lh_stats_init(); release with lh_stats_clear(). */
typedef struct {
  int bit_depth; /* of the luma values: 8 .. 16 */
  LhMatrix matrix;
  LhRange range;
  uint64_t count; /* pixels analysed */
  double mean;
  double stddev; /* population standard deviation */
  uint32_t min;
  uint32_t max;
  uint32_t median; /* P(50) */
  uint64_t clipped_low_count;  /* pixels at code value 0 */
  uint64_t clipped_high_count; /* pixels at code value 2^bit_depth - 1 */
  uint64_t below_legal_count;  /* limited range: below black (16); else 0 */
  uint64_t above_legal_count;  /* limited range: above white (235); else 0 */
  double clipped_low;          /* the four counts above as fractions of count */
  double clipped_high;
  double below_legal;
  double above_legal;
  double mean_norm;
  double stddev_norm;
  double min_norm;
  double max_norm;
  double median_norm;
  int n_percentiles;
  double percentile_p[LH_MAX_PERCENTILES];
  uint32_t percentile_value[LH_MAX_PERCENTILES];
  double percentile_norm[LH_MAX_PERCENTILES];
  size_t n_bins;       /* 2^bit_depth */
  uint64_t *histogram; /* n_bins counts, owned by this struct */
} LhStats;

LH_API void lh_stats_init(LhStats *stats);
LH_API void lh_stats_clear(LhStats *stats);

/* Code value -> [0, 1] for a bit depth and range; NAN for a bit depth
 * outside 1 .. 16 (8 .. 16 for limited range) or an unknown range. */
LH_API double lh_normalize(double value, int bit_depth, LhRange range);

/* Statistics and percentiles from a histogram alone (e.g. a sum of the
 * histograms of many frames; histograms are additive).  Its counts must sum
 * to at most 2^64 - 1 (LH_ERROR_INVALID_ARGUMENT past that). */
LH_API int lh_stats_from_histogram(const uint64_t *histogram, int bit_depth,
                                   const LhOptions *options, LhStats *stats);

/* ------------------------------------------------------------------------ */
/* Context                                                                   */

typedef enum {
  LH_BACKEND_AUTO, /* CUDA when a device is usable, else the CPU; with CUDA,
                      each host frame in pageable memory where it costs less */
  LH_BACKEND_CPU,
  LH_BACKEND_CUDA
} LhBackend;

LH_API const char *lh_backend_name(LhBackend backend); /* "auto", "cpu", "cuda" */
/* The backend a name that lh_backend_name() gives stands for, in any case. */
LH_API int lh_backend_from_name(const char *name, LhBackend *backend);

typedef struct LhContext LhContext;

/* Creates a context on the requested backend.  AUTO falls back to the CPU
 * when no CUDA device is usable (lh_context_note() says why); CUDA fails with
 * LH_ERROR_NO_DEVICE then.  The CUDA backend works in the CUDA context
 * current on the calling thread (the current device's primary context, or
 * one the application pushed), and only there: each later call, from any
 * thread, with any device current, runs in that context (pushed for the
 * call when another is current, popped before it returns, so the caller's
 * current device and context are as they were).  A frame in another
 * device's memory is refused (LH_ERROR_INVALID_ARGUMENT): reading it would
 * be an illegal address, which ends every CUDA context of the process.
 *
 * An AUTO context on CUDA also runs the CPU backend, and chooses for each
 * call where its frames go: frames in CUDA memory, and host frames in
 * page-locked memory (lh_host_register, lh_host_alloc, cudaHostAlloc), to
 * the GPU; host frames in ordinary (pageable) memory, which the GPU only
 * reads after a copy into pinned memory, to the CPU's threads or to the GPU,
 * whichever is cheaper for that call on frames of that format and size.
 * Cheaper is measured: the first calls of each kind go to each side in turn
 * and are timed (the host's wall time of the call), then the cheaper side
 * gets them, and the other is timed again now and then (after 16 calls, then
 * 32, 64, ... up to 1024 while it stays dearer) so that a change of load is
 * followed (src/dispatch.c has the details).  The results are the same
 * bits either way.  A stream with state (a temporal window, a frame
 * difference) stays on the side where its state is, and starts on the side
 * the measures chose.  lh_context_last_backend() tells where each call
 * went.
 *
 * One call at a time may use a context: its CPU threads, device buffers
 * and measures serve one call.  A call on frames (lh_analyze[_batch],
 * lh_equalize, lh_apply_lut[_chroma], lh_overlay, lh_difference_push) made
 * while another thread's runs on the same context is refused with
 * LH_ERROR_INVALID_ARGUMENT ("in use").  Give each thread its own context,
 * or hold a lock around the calls; different contexts may be used at once.
 * A fork()ed child may go on using and then free a CPU context of its
 * parent: it starts CPU threads of its own. */
LH_API int lh_context_new(LhBackend backend, LhContext **context);
LH_API void lh_context_free(LhContext *context);

/* As lh_context_new, on CUDA device `device` (its primary context) whatever
 * device is current; the caller's current context and device are left as
 * they were, a thread with none current too.  A device that does not exist
 * is LH_ERROR_NO_DEVICE (AUTO: the CPU, with lh_context_note() saying why);
 * device -1 is lh_context_new(); LH_BACKEND_CPU with a device is
 * LH_ERROR_INVALID_ARGUMENT.  One context a device serves frames in that
 * device's memory (lh_device_of). */
LH_API int lh_context_new_on_device(LhBackend backend, int device, LhContext **context);

/* The CUDA device the context works on, or -1 for a CPU context. */
LH_API int lh_context_device(const LhContext *context);

/* The CUDA device whose memory `memory` is in (cudaMalloc and its kin), or
 * -1 for host memory (page-locked or not), managed memory (which every
 * device reads) and builds without CUDA. */
LH_API int lh_device_of(const void *memory);

/* The calling thread's current CUDA device (cudaGetDevice, which makes no
 * CUDA context), or -1 when no device is usable or the build has no CUDA. */
LH_API int lh_device_current(void);

/* The context's backend: LH_BACKEND_CUDA when it uses a GPU (which takes
 * device frames, and lh_host_register, lh_host_alloc, lh_context_set_stream
 * and lh_context_device_time), else LH_BACKEND_CPU.  An AUTO context on CUDA
 * sends some host frames to the CPU all the same: see lh_context_new(). */
LH_API LhBackend lh_context_backend(const LhContext *context);

/* Where the last call on frames that succeeded (lh_analyze,
 * lh_analyze_batch, lh_equalize, lh_apply_lut, lh_overlay,
 * lh_difference_push) ran: LH_BACKEND_CPU or LH_BACKEND_CUDA; before any,
 * lh_context_backend(). */
LH_API LhBackend lh_context_last_backend(const LhContext *context);

/* Why AUTO chose the CPU, or "" when it did not. */
LH_API const char *lh_context_note(const LhContext *context);

/* Threads the CPU backend splits each frame across (row bands, tiles): 0,
 * the default, one per core; 1 keeps every call on the calling thread (a
 * program that already runs one context per core wants that); at most 256
 * (more is taken as 256).  The numbers are the same on any number.  The CUDA backend ignores it (an
 * AUTO context on CUDA gives it to its CPU side). */
LH_API int lh_context_set_threads(LhContext *context, int threads);

/* The cudaStream_t (passed as void *) that GPU work is queued on; NULL
 * restores the context's own stream.  Ignored by the CPU backend. */
LH_API int lh_context_set_stream(LhContext *context, void *cuda_stream);

/* Page-locks host memory that frames will come from again and again (the
 * buffers of a pool, say), so that the CUDA backend copies such frames to the
 * device straight from it, without its staging copy.  bytes from memory on
 * are locked (whole pages); lh_host_unregister undoes it and must come before
 * the memory is freed.  Registering is slow (about a millisecond for a 4K
 * frame): worth it for memory that is used many times.  The CPU backend has
 * nothing to do and returns LH_ERROR_UNSUPPORTED, which callers may ignore;
 * memory that is already page-locked gives LH_ERROR_INVALID_ARGUMENT. */
LH_API int lh_host_register(LhContext *context, void *memory, size_t bytes);
LH_API int lh_host_unregister(LhContext *context, void *memory);

/* Allocates bytes of page-locked host memory (CUDA's portable host memory,
 * made in the CUDA context current on this thread, or the device's primary
 * one), for frames that are written once and read by the CUDA backend: a
 * buffer pool offered to a decoder, say.  Such frames go to the device
 * straight from it, as registered memory does, without registering each
 * buffer.  The CPU backend returns LH_ERROR_UNSUPPORTED.  Free it with
 * lh_host_free(), which needs no context: the memory may outlive the one
 * that allocated it, and be freed on any thread. */
LH_API int lh_host_alloc(LhContext *context, size_t bytes, void **memory);
LH_API void lh_host_free(void *memory);

/* The device time of a CUDA context's calls, measured with CUDA events on
 * its stream: how much of the GPU's time they took, for a share of the wall
 * time that host threads cannot measure (their calls include copies into
 * pinned memory and waiting). */
typedef struct {
  /* Copies of frames between host and device: the uploads of host frames,
   * and the download of the result of lh_equalize, lh_apply_lut and
   * lh_overlay on host frames. */
  double transfer_s;
  /* The kernels and the small copies around them (results, LUTs, overlay
   * columns, chroma planes between device frames). */
  double compute_s;
  uint64_t calls; /* the calls measured */
  /* The bytes of the frames those copies moved (their rows, without the
   * device's padding): with transfer_s, the rate the host link gave. */
  uint64_t transfer_bytes;
} LhDeviceTime;

/* Totals since the context was made, over the calls that did GPU work and
 * succeeded.  Each interval runs from one event to the next on the stream, so
 * it also holds the time the stream waited for the host to queue its next
 * operation or shared the GPU with other streams: summed over contexts that
 * run at once, the totals bound the GPU's busy time from above (the first
 * call to launch a kernel also holds CUDA's loading of it, when modules are
 * loaded lazily).  The host's own copies into pinned staging memory are not
 * in them.  Waits for the context's queued work, which calls on CUDA device
 * frames leave running.  The CPU backend returns LH_ERROR_UNSUPPORTED; *time
 * is zero on failure. */
LH_API int lh_context_device_time(LhContext *context, LhDeviceTime *time);

/* Analyses one frame: histogram, statistics and percentiles. */
LH_API int lh_analyze(LhContext *context, const LhFrame *frame, const LhOptions *options,
                      LhStats *stats);

/* Analyses n frames with the same options in one call (one batch of GPU work). */
LH_API int lh_analyze_batch(LhContext *context, const LhFrame *frames, size_t n,
                            const LhOptions *options, LhStats *stats);

/* ------------------------------------------------------------------------ */
/* Equalization: global (OpenCV equalizeHist) and CLAHE (OpenCV createCLAHE)  */
/*                                                                           */
/* Only luma changes.  Gray: the samples.  YUV: the Y plane; chroma is left   */
/* as it came (copied when out is another frame), unless LH_CHROMA_SCALE      */
/* (below) is asked for.  R'G'B': each colour                                 */
/* sample c of a pixel of luma Y (lhi_luma, the options' matrix) that is      */
/* given the new luma Y' becomes                                              */
/*   Y > 0:  min(max, (c * gain + 2^15) >> 16),  gain = ((Y' << 16) + Y/2) / Y */
/*   Y == 0: Y' (a black pixel turns gray: it has no hue to keep)             */
/* with integer division and max = 2^bit_depth - 1; alpha (or the ignored     */
/* fourth sample) is copied.  Every backend gives these exact values.         */
/*                                                                           */
/* LH_CHROMA_SCALE asks for that rule on YUV frames too, in Y'CbCr: with a    */
/* full-range matrix (JPEG's BT.601), scaling R', G', B' by g scales Y' and   */
/* Cb - 128, Cr - 128 by g.  For 8-bit planar and semi-planar YUV (I420,      */
/* YV12, Y42B, Y444, Y41B, NV12, NV21, NV16, NV24) each chroma sample c       */
/* covers the luma pixels of its footprint (2x2 at 4:2:0, 2x1 at 4:2:2, 4x1   */
/* at 4:1:1, 1x1 at 4:4:4, cut by the frame's right and bottom edges); with   */
/* S and S' the sums of their old and new luma, c becomes                     */
/*   S > 0:  128 + m or 128 - m for c >= 128 or c < 128, clamped to 0 .. 255, */
/*           m = (|c - 128| * gain + 2^15) >> 16,  gain = ((S' << 16) + S/2) / S */
/*   S == 0: 128 (black has no hue to keep, as a black R'G'B' pixel turns gray) */
/* Other YUV formats give LH_ERROR_UNSUPPORTED with it; gray and R'G'B'       */
/* frames are unaffected (R'G'B' always gets the gain rule).                  */

typedef enum {
  LH_EQUALIZE_GLOBAL, /* one LUT from the frame's luma histogram */
  LH_EQUALIZE_CLAHE   /* contrast-limited adaptive, a LUT per tile, bilinear between them */
} LhEqualizeMode;

/* Video: LUTs (in CLAHE mode, every tile's LUT) averaged over the last
 * `window` frames, so that equalized video does not flicker when the content
 * moves; the window restarts at a scene cut.  See lh_temporal_new(). */
typedef struct LhTemporal LhTemporal;

/* What equalization does to the chroma of YUV frames. */
typedef enum {
  LH_CHROMA_KEEP, /* as it came (copied when out is another frame): the default */
  LH_CHROMA_SCALE /* scaled with the luma's gain, the R'G'B' rule in Y'CbCr (above) */
} LhChromaRule;

#define LH_CLAHE_MAX_TILES 64

typedef struct {
  LhEqualizeMode mode;
  LhMatrix matrix; /* luma of R'G'B' input */
  LhRange range;   /* the output spans the range's black .. white (full: 0 .. 2^bits - 1) */
  int tiles_x;     /* CLAHE grid, 1 .. LH_CLAHE_MAX_TILES each way; the call takes about
                      tiles_x * tiles_y * 2^bit_depth * 6 bytes (1.5 GiB: 16 bits, 64x64) */
  int tiles_y;
  double clip_limit;    /* CLAHE: createCLAHE's clipLimit; <= 0 no clipping */
  LhTemporal *temporal; /* NULL: each frame on its own */
  LhChromaRule chroma;  /* YUV frames' chroma */
  /* CLAHE: how the frame is shown, as an Exif orientation (1 or 0: as
   * stored; 2: mirrored left to right; 3: half a turn; 4: mirrored top to
   * bottom; 5: mirrored along the main diagonal; 6: a quarter turn
   * clockwise; 7: mirrored along the other diagonal; 8: a quarter turn
   * anticlockwise), as LhOverlayOptions' is.  The grid is the picture's as
   * shown (tiles_x across it, extended on its right and bottom): the same
   * frame as cv::createCLAHE gives on the picture turned upright, turned
   * back (within the bounds lh_equalize() states).  Global equalization is
   * the same either way. */
  int orientation;
} LhEqualizeOptions;

/* Defaults: global, BT.601, full range, CLAHE 8 x 8 tiles with clip limit 40
 * (createCLAHE's defaults), no temporal smoothing, chroma kept, orientation
 * 0 (as stored). */
LH_API void lh_equalize_options_init(LhEqualizeOptions *options);

/* Equalizes in into out: the same format, size and memory; strides may
 * differ; out == in (or out's planes those of in) equalizes in place.
 *
 * GLOBAL: the LUT of lh_lut_from_histogram() on in's luma histogram
 * (bit-exact with cv::equalizeHist on 8-bit gray).
 * CLAHE: as cv::createCLAHE(clip_limit, (tiles_x, tiles_y))->apply():
 * when tiles do not divide the frame, the frame is extended on the right and
 * bottom by reflection (BORDER_REFLECT_101) to tiles_x * ceil and the tiles
 * are of that size, both ways as soon as either side does not divide (as
 * OpenCV does); each tile's histogram is clipped at
 * max(1, (int)(clip_limit * tile_pixels / bins)) (no clipping from 2^31 up,
 * where OpenCV's int conversion overflows), the excess spread evenly,
 * the remainder one count every max(1, bins / remainder) bins from bin 0;
 * tile LUT[v] = black + min(white - black, rint((float)cdf(v) * s)) with
 * s = (float)(white - black) / (float)tile_pixels (IEEE single, as OpenCV);
 * a pixel's value is the bilinear mix of the four nearest tile LUTs with
 * 16-bit fixed-point weights, rounded half up (within 1 of OpenCV at 8 bits;
 * at 16 bits some pixels differ by 2 where tiles are small and their LUTs
 * steep, as the README says). */
LH_API int lh_equalize(LhContext *context, const LhFrame *in, LhFrame *out,
                       const LhEqualizeOptions *options);

/* The global equalization LUT of a histogram of 2^bit_depth bins (any
 * count, e.g. the sum of the histograms of many images): with f the first
 * non-empty bin, N the total and s = (float)(white - black) / (float)(N - h[f])
 * in IEEE single precision,
 *   lut[v] = black                                    for v <= f
 *   lut[v] = black + min(white - black, rint((float)(h[f+1] + .. + h[v]) * s))  for v > f
 * (rint: to nearest, ties to even; equalizeHist's LUT for 8 bits, full range).
 * When one bin holds every count (or none does) the LUT is the identity, as
 * equalizeHist leaves a constant image as it is.  lut has 2^bit_depth entries.
 * The counts must sum to at most 2^64 - 1 (LH_ERROR_INVALID_ARGUMENT past that). */
LH_API int lh_lut_from_histogram(const uint64_t *histogram, int bit_depth, LhRange range,
                                 uint16_t *lut);

/* Maps in's luma through lut (2^depth entries in host memory, depth the luma
 * depth of in) into out, with the colour rule above; out as for lh_equalize. */
LH_API int lh_apply_lut(LhContext *context, const LhFrame *in, LhFrame *out, const uint16_t *lut,
                        LhMatrix matrix);

/* lh_apply_lut with a chroma rule for YUV frames (lh_apply_lut keeps it). */
LH_API int lh_apply_lut_chroma(LhContext *context, const LhFrame *in, LhFrame *out,
                               const uint16_t *lut, LhMatrix matrix, LhChromaRule chroma);

/* ------------------------------------------------------------------------ */
/* Temporal smoothing for video                                              */
/*                                                                           */
/* Each frame's LUT (each tile's, for CLAHE) is put in a window of the last   */
/* `window` frames and the LUT applied is the rounded mean of the window:     */
/* (sum + n/2) / n over the n <= window LUTs since the last cut.  A cut is     */
/* declared when lh_histogram_distance() between this frame's luma histogram  */
/* (CLAHE: the sum of its tile histograms) and the previous frame's is above  */
/* cut_threshold; the window then holds this frame alone.                    */

#define LH_TEMPORAL_MAX_WINDOW 256

/* window 1 .. LH_TEMPORAL_MAX_WINDOW frames; cut_threshold in [0, 1]
 * (1: never cut; 0.4 is a good start).  A state serves one stream of frames of
 * one size, depth, mode, grid, clip limit, range (and, for R'G'B', matrix) on
 * one backend; any change of those starts it afresh.  One call at a time may
 * use it. */
LH_API int lh_temporal_new(int window, double cut_threshold, LhTemporal **temporal);
LH_API void lh_temporal_free(LhTemporal *temporal);

/* Forgets every frame (the next one starts a new window). */
LH_API void lh_temporal_reset(LhTemporal *temporal);

/* Frames in the window now and scene cuts found since creation, reset or a
 * change of stream.  On the CUDA backend this waits for the queued work of
 * the last frame. */
LH_API int lh_temporal_query(LhTemporal *temporal, int *frames, uint64_t *cuts);

/* The scene-cut measure: the total variation distance (1/2) sum |p - q| of
 * the two histograms folded to 32 equal bins and normalized, p_k =
 * floor(count_k * 2^20 / N) (0 when N is 0), in [0, 1] with steps of
 * 2^-21.  Histograms of 2^bit_depth bins, 8 <= bit_depth <= 16; NAN for a
 * NULL histogram or another bit depth. */
LH_API double lh_histogram_distance(const uint64_t *a, const uint64_t *b, int bit_depth);

/* ------------------------------------------------------------------------ */
/* Frame difference for video                                                */
/*                                                                           */
/* The mean absolute difference of a frame's luma to the previous frame's:   */
/* sum |Y - Y_prev| / N over its N pixels (FFmpeg signalstats' YDIF).  The   */
/* sum is an exact 64-bit integer on every backend and the division is made  */
/* on the host, (double)sum / (double)N, so that the CPU and the GPU give    */
/* the same bits.  Y is what the histogram counts: the Y samples of YUV      */
/* formats (planar and semi-planar Y planes, every other byte of packed      */
/* 4:2:2, v210's 10-bit fields), gray samples, and 16-bit samples shifted    */
/* down (P010: its 10-bit values) and clamped to the frame's bit depth.      */
/* R'G'B' frames give LH_ERROR_UNSUPPORTED: their luma needs a matrix, which */
/* this call does not take (analyse them, or convert them to YUV, first).    */

typedef struct LhDifference LhDifference;

/* A state keeps a copy of the last frame's luma in the memory of the
 * backend it was pushed to (host memory for the CPU; device memory for CUDA,
 * allocated in the CUDA context current then).  It serves one stream of
 * frames of one size, format and bit depth on one backend: any change of
 * those, like a reset, makes the next frame the first again.  One call at a
 * time may use it.  A state used on the CUDA backend holds device memory: free
 * it (or push it to another backend, which frees that memory) while the CUDA
 * context it was used in is current, before that context is destroyed. */
LH_API int lh_difference_new(LhDifference **difference);
LH_API void lh_difference_free(LhDifference *difference);

/* Forgets the previous frame (its memory is kept for the next one). */
LH_API void lh_difference_reset(LhDifference *difference);

/* Compares frame's luma with that of the previous frame pushed to this
 * state, and keeps frame's in its place.  *mean_abs is the mean absolute
 * difference, or NAN for the first frame (after creation, a reset, a change
 * of size, format, bit depth or backend, or a failed push).  The CUDA backend
 * takes host and CUDA frames, mixed as they come (host frames are copied to
 * the device), the CPU backend host frames.  A CUDA frame is read where it
 * is, on the context's stream: only the 8-byte sum comes back to the host. */
LH_API int lh_difference_push(LhContext *context, LhDifference *difference, const LhFrame *frame,
                              double *mean_abs);

/* ------------------------------------------------------------------------ */
/* Histogram overlay                                                         */

typedef enum {
  LH_OVERLAY_LINEAR, /* bar heights proportional to counts */
  LH_OVERLAY_LOG     /* to log(1 + count) */
} LhOverlayScale;

typedef struct {
  LhRect rect;          /* the panel, in the frame as shown (orientation); zero width or
                           height: the default placement */
  double opacity;       /* 0 .. 1, of the bars and markers; the panel is 5/8 of it */
  LhOverlayScale scale; /* default LOG */
  int markers;          /* non-zero: a line at the median and at each percentile of stats */
  int clipping;         /* non-zero: bands at the ends (clipped pixels) and shaded
                           illegal zones (limited range) */
  double clip_warning;  /* fraction of pixels clipped at one end that lights its band */
  LhMatrix matrix;      /* the colours' Y'CbCr for gray and YUV frames */
  LhRange range;
  /* How the frame is shown, as an Exif orientation (a JPEG's or a phone
   * video's rotation): 0 or 1, as stored; 2 mirrored left to right; 3 half
   * a turn; 4 mirrored top to bottom; 5 transposed; 6 a quarter turn
   * clockwise; 7 transposed the other way; 8 a quarter turn
   * counterclockwise.  The panel is placed and drawn so that it reads
   * upright, bottom-left, in the frame turned so. */
  int orientation;
} LhOverlayOptions;

/* Defaults: the default placement (bottom-left, a third of the width, a
 * quarter of the height, 2 % margins, at least 64 x 32 where the frame is as
 * large, at most 65536 x 65536 as a rect is), opacity 0.8, log scale, markers
 * and clipping bands on, clip warning 0.005, BT.601, full range, orientation
 * 0 (as stored). */
LH_API void lh_overlay_options_init(LhOverlayOptions *options);

/* Draws the histogram of stats (usually of this frame) into frame, in its
 * own format: an alpha-blended panel with a 1-pixel border, one column per
 * pixel of its inside showing the largest count among the bins of that
 * column, lines at the percentile values (median green, others amber), a
 * blue / red band at the low / high end when clip_warning is reached, and
 * for limited range a dark red shade over the codes outside it.  Colour
 * samples are blended as (s * (256 - a) + c * a + 128) >> 8; on formats
 * with alpha (RGBA, BGRA, RGBA16, BGRA16, RGB10A2_LE, BGR10A2_LE; not the
 * padding of RGBX, BGRX, r210) the panel is composited over the pixel with
 * straight alpha A of 0 .. top: alpha A + ((top - A) * a + 128) / 256
 * rounded as above, each colour (c * top * a + s * A * (256 - a) + w / 2) / w,
 * w = A * (256 - a) + top * a (kept where w is 0), which on opaque pixels
 * is the plain blend; RGB10A2's alpha has top 3.  YUV frames get the panel
 * on Y and, at each chroma sample, the colour of its top-left luma pixel on
 * Cb and Cr.  The panel is clipped to the frame. */
LH_API int lh_overlay(LhContext *context, LhFrame *frame, const LhStats *stats,
                      const LhOverlayOptions *options);

/* lh_overlay on a GRAY8 or GRAY16 frame in host memory whose alpha is a
 * plane of its own, as a gray+alpha PNG decodes: alpha holds a sample of
 * the frame's size for each pixel (straight alpha at the full scale of the
 * sample: 255, 65535), alpha_stride bytes a row (0: packed).  The panel is
 * composited over each pixel as on formats with alpha (the gray sample as
 * each colour, the ink's luma as the colour) and the alpha plane takes the
 * result's alpha, so the panel shows where the image is transparent.
 * Drawn on the host whatever the context's backend. */
LH_API int lh_overlay_gray_alpha(LhContext *context, LhFrame *frame, void *alpha,
                                 size_t alpha_stride, const LhStats *stats,
                                 const LhOverlayOptions *options);

#ifdef __cplusplus
}
#endif

#endif /* LUMAHIST_H */
