/* gstlumahist.c: the lumahist element, which measures the luminance histogram,
 * statistics and percentiles of each video frame with the lumahist library and
 * reports them in an element message and a buffer meta. */

/**
 * SECTION:element-lumahist
 * @title: lumahist
 *
 * lumahist measures the luma (Y') of every video frame: its histogram, mean,
 * standard deviation, minimum, maximum, clipping, median and any percentiles,
 * with the lumahist library, on an NVIDIA GPU (CUDA) or on the CPU (the
 * numbers are the same, bit for bit).  In mode `analyze` the element is a
 * passthrough: frames leave exactly as they came, without a copy.
 *
 * Mode `equalize` also rewrites the luma of each frame in place by global
 * histogram equalization (OpenCV's equalizeHist LUT, generalized to 16 bits),
 * and mode `clahe` by contrast-limited adaptive equalization
 * (#GstLumahist:tiles-x × #GstLumahist:tiles-y tiles, #GstLumahist:clip-limit,
 * as OpenCV's createCLAHE).  Only luma changes: the Y plane of YUV frames, or
 * each R'G'B' pixel scaled to its new luma, keeping its hue.  With
 * #GstLumahist:temporal-window > 1, the LUTs are averaged over the last
 * frames, so that equalized video does not flicker; a scene cut (see
 * #GstLumahist:cut-threshold), a flush, or a change of what the LUTs are
 * made with (the mode, the frame size or depth, the tiles,
 * #GstLumahist:clip-limit, the range, and the matrix of R'G'B' frames)
 * restarts the window, as do frames that go by unequalized (mode `analyze`
 * for a while).  With
 * #GstLumahist:overlay, a graph of the histogram, with markers at the median
 * and percentiles and bands where pixels clip, is drawn on the frame in any
 * mode, in colour (inside its panel, the chroma of YUV frames changes too),
 * upright in the picture as #GstLumahist:overlay-direction will show it;
 * CLAHE's tile grid is laid on that picture too.
 * The LUTs of the temporal window take #GstLumahist:temporal-window × tiles
 * × 2^bit-depth × 2 bytes (tiles: 1, or #GstLumahist:tiles-x ×
 * #GstLumahist:tiles-y for CLAHE).  The statistics (messages, meta, overlay)
 * are always those of the frame as it came in, before equalization.  A gap
 * that holds a picture (videorate marks the frames it repeats so) is a frame
 * like the others; a gap too small for one and a buffer without bytes carry
 * no picture: they go on untouched, without a message or a meta.
 *
 * Input is raw video in system memory or, when the plugin was built with
 * GStreamer's CUDA library, in CUDA memory (`video/x-raw(memory:CUDAMemory)`,
 * as nvh264dec, nvjpegdec or cudaupload produce it), which is read in place on
 * the GPU.  Formats: GRAY8, GRAY16_LE, GRAY16_BE; R'G'B' RGB, BGR, RGBA,
 * BGRA, RGBx, BGRx, RGBA64_LE, BGRA64_LE and 10-bit RGB10A2_LE, BGR10A2_LE,
 * r210; YUV 4:2:0 I420, YV12, NV12, NV21, I420_10LE, I420_12LE, P010_10LE,
 * P012_LE, P016_LE; 4:2:2 Y42B, NV16, I422_10LE, I422_12LE and packed YUY2,
 * YVYU, UYVY, VYUY, v210; 4:4:4 Y444, NV24, Y444_10LE, Y444_12LE,
 * Y444_16LE; 4:1:1 Y41B.  For YUV formats the Y samples are the luma, read
 * where they lie (no conversion), and only they are rewritten; for R'G'B'
 * formats luma is Kr·R' + (1 − Kr − Kb)·G' + Kb·B' with the weights of
 * #GstLumahist:matrix.  The luma has the format's depth: 8 bits, 10
 * (P010_10LE, v210, the _10LE formats, RGB10A2_LE, BGR10A2_LE, r210), 12
 * (P012_LE, the _12LE formats) or 16 (GRAY16, RGBA64_LE, BGRA64_LE, P016_LE,
 * Y444_16LE).
 *
 * Unless #GstLumahist:matrix and #GstLumahist:range say otherwise, both come
 * from the caps' colorimetry: the colour matrix (BT.601, BT.709 or BT.2020;
 * FCC counts as BT.601 and SMPTE 240M as BT.709), or for RGB caps, which
 * carry no YUV matrix, the colour primaries (BT.709 primaries, as sRGB's,
 * give BT.709); the range is the colorimetry's (unknown: limited for YUV,
 * full otherwise).
 *
 * With #GstLumahist:post-messages (the default), the element posts an element
 * message named `lumahist` for every frame, or for the first of every
 * #GstLumahist:message-interval frames, before the frame is pushed on.  Its
 * fields ("code values" are luma values of `bit-depth` bits, 0 ..
 * 2^bit-depth − 1; "normalized" values map the declared range to [0, 1]:
 * black to 0 and white to 1, so limited-range values outside the legal range
 * fall outside [0, 1]):
 *
 * * #guint64 `timestamp`: the buffer's presentation timestamp (ns), or
 *   GST_CLOCK_TIME_NONE (2^64 − 1) when it has none
 * * #guint64 `stream-time`: the timestamp as stream time (ns), or
 *   GST_CLOCK_TIME_NONE
 * * #guint64 `running-time`: the timestamp as running time (ns), or
 *   GST_CLOCK_TIME_NONE
 * * #guint64 `duration`: the buffer's duration (ns), or GST_CLOCK_TIME_NONE
 * * #guint64 `frame`: index of the frame since the element started or was
 *   last flushed, from 0
 * * #gchararray `backend`: the backend that analysed it: "cpu" or "cuda"
 * * #gchararray `format`: the GStreamer video format, e.g. "NV12"
 * * #gint `width`, #gint `height`: the frame size in pixels, ≥ 1
 * * #gint `bit-depth`: bits of the luma values: 8, 10, 12 or 16
 * * #gchararray `matrix`: "bt601", "bt709" or "bt2020"
 * * #gchararray `range`: "full" or "limited"
 * * #guint64 `count`: pixels analysed (width × height)
 * * #gdouble `mean`: mean luma, code values, 0 .. 2^bit-depth − 1
 * * #gdouble `stddev`: population standard deviation, code values, ≥ 0
 * * #guint `min`, #guint `max`, #guint `median`: code values; the median is
 *   the 50th percentile as defined below
 * * #gdouble `mean-norm`, `stddev-norm`, `min-norm`, `max-norm`,
 *   `median-norm`: the same, normalized
 * * #guint64 `clipped-low-count`: pixels at code value 0
 * * #guint64 `clipped-high-count`: pixels at code value 2^bit-depth − 1
 * * #guint64 `below-legal-count`, `above-legal-count`: limited range only,
 *   pixels below black (16 × 2^(bit-depth − 8)) or above white
 *   (235 × 2^(bit-depth − 8)); 0 in full range
 * * #gdouble `clipped-low`, `clipped-high`, `below-legal`, `above-legal`:
 *   the four counts as fractions of `count`, 0 .. 1
 * * #GstValueArray of #gdouble `percentiles`: the percentiles asked for by
 *   #GstLumahist:percentiles, each 0 .. 100, in that order
 * * #GstValueArray of #guint `percentile-values`: the value of each
 *   percentile, code values; P(p) is the smallest v with
 *   count(luma ≤ v) ≥ ⌈p/100 × count⌉, and P(0) is the minimum
 * * #GstValueArray of #gdouble `percentile-norms`: the same, normalized.
 *   These three are left out when #GstLumahist:percentiles is empty.
 * * #GstValueArray of #guint64 `histogram`: 2^bit-depth counts, one per code
 *   value from 0; they add up to `count`.  Left out when
 *   #GstLumahist:post-histogram is %FALSE.
 *
 * With #GstLumahist:attach-meta (the default) every analysed buffer also
 * carries a #GstLumahistMeta holding the same values as the library's LhStats
 * (see gstlumahistmeta.h), for applications that take frames from an appsink
 * or a pad probe.
 *
 * The backend is chosen when the element starts (READY → PAUSED):
 * #GstLumahist:backend `auto` uses CUDA when a device is usable and otherwise
 * the CPU, posting one warning message that says why.  With CUDA, `auto`
 * still chooses for each frame: frames in CUDA memory and in page-locked
 * system memory go to the GPU, frames in ordinary system memory to the CPU's
 * threads or to the GPU, whichever the times measured on the first frames
 * (and again now and then) say is cheaper (see lh_context_new()); the
 * results are the same bits either way.  #GstLumahist:active-backend tells
 * where the last frame went, and the message field `backend` where each
 * reported frame was analysed.  The element shares the
 * pipeline's CUDA context (GstCudaContext) with the other CUDA elements and
 * makes it current around every library call.
 *
 * ## Example launch lines
 * |[
 * gst-launch-1.0 -m videotestsrc num-buffers=10 ! lumahist ! fakesink
 * ]| prints ten `lumahist` messages.
 * |[
 * gst-launch-1.0 -m filesrc location=movie.mp4 ! parsebin ! nvh264dec ! \
 *     lumahist percentiles=1,50,99 message-interval=25 post-histogram=false ! fakesink
 * ]| analyses decoded frames in place in CUDA memory, one message a second at 25 fps.
 * |[
 * gst-launch-1.0 v4l2src ! videoconvert ! video/x-raw,format=NV12 ! \
 *     lumahist mode=clahe temporal-window=8 overlay=true ! videoconvert ! autovideosink
 * ]| shows a camera with CLAHE and the histogram of each frame drawn on it.
 */

#include <string.h>

#include <gst/video/video.h>

#ifdef HAVE_GST_CUDA
#include <gst/cuda/gstcudabufferpool.h>
#include <gst/cuda/gstcudaloader.h>
#include <gst/cuda/gstcudamemory.h>
#include <gst/cuda/gstcudautils.h>
#ifdef HAVE_GST_CUDA_STREAM
#include <gst/cuda/gstcudastream.h>
#endif
#endif

#include "gst-colorimetry.h"
#include "gstlumahist.h"
#include "gstlumahisthostpool.h"

GST_DEBUG_CATEGORY_STATIC(gst_lumahist_debug);
#define GST_CAT_DEFAULT gst_lumahist_debug

enum {
  PROP_0,
  PROP_MODE,
  PROP_BACKEND,
  PROP_ACTIVE_BACKEND,
  PROP_CUDA_DEVICE_ID,
  PROP_N_THREADS,
  PROP_PAGE_LOCK,
  PROP_MATRIX,
  PROP_RANGE,
  PROP_PERCENTILES,
  PROP_PERCENTILE_METHOD,
  PROP_POST_MESSAGES,
  PROP_MESSAGE_INTERVAL,
  PROP_POST_HISTOGRAM,
  PROP_ATTACH_META,
  PROP_TILES_X,
  PROP_TILES_Y,
  PROP_CLIP_LIMIT,
  PROP_TEMPORAL_WINDOW,
  PROP_CUT_THRESHOLD,
  PROP_OVERLAY,
  PROP_OVERLAY_X,
  PROP_OVERLAY_Y,
  PROP_OVERLAY_WIDTH,
  PROP_OVERLAY_HEIGHT,
  PROP_OVERLAY_OPACITY,
  PROP_OVERLAY_SCALE,
  PROP_OVERLAY_MARKERS,
  PROP_OVERLAY_CLIPPING,
  PROP_CLIP_WARNING,
  PROP_OVERLAY_DIRECTION,
  N_PROPERTIES
};

#define DEFAULT_MODE GST_LUMAHIST_MODE_ANALYZE
#define DEFAULT_BACKEND GST_LUMAHIST_BACKEND_AUTO
#define DEFAULT_CUDA_DEVICE_ID -1
#define DEFAULT_N_THREADS 0
#define DEFAULT_PAGE_LOCK TRUE
#define DEFAULT_MATRIX GST_LUMAHIST_MATRIX_AUTO
#define DEFAULT_RANGE GST_LUMAHIST_RANGE_AUTO
#define DEFAULT_PERCENTILES "1,5,50,95,99"
#define DEFAULT_PERCENTILE_METHOD LH_PERCENTILE_AUTO
#define DEFAULT_POST_MESSAGES TRUE
#define DEFAULT_MESSAGE_INTERVAL 1
#define DEFAULT_POST_HISTOGRAM TRUE
#define DEFAULT_ATTACH_META TRUE
/* OpenCV createCLAHE's defaults */
#define DEFAULT_TILES 8
#define DEFAULT_CLIP_LIMIT 40.0
#define DEFAULT_TEMPORAL_WINDOW 1
#define DEFAULT_CUT_THRESHOLD 0.4
#define DEFAULT_OVERLAY FALSE
#define DEFAULT_OVERLAY_OPACITY 0.8
#define DEFAULT_OVERLAY_SCALE LH_OVERLAY_LOG
#define DEFAULT_OVERLAY_MARKERS TRUE
#define DEFAULT_OVERLAY_CLIPPING TRUE
#define DEFAULT_CLIP_WARNING 0.005
#define DEFAULT_OVERLAY_DIRECTION GST_VIDEO_ORIENTATION_IDENTITY
/* The sides of an overlay panel that lh_overlay() draws. */
#define OVERLAY_MIN_SIDE 3
#define OVERLAY_MAX_SIDE 65536

/* The page-locked pool offered upstream starts with this many frames; the
 * upstream element raises it to what it holds at once. */
#define HOST_POOL_MIN_BUFFERS 3

static GParamSpec *properties[N_PROPERTIES];

/* Every library format that GStreamer has a video format for. */
#define LUMAHIST_BASE_FORMATS                                                                      \
  "GRAY8, GRAY16_LE, RGB, BGR, RGBA, BGRA, RGBx, BGRx, RGBA64_LE, I420, NV12, P010_10LE, "         \
  "RGB10A2_LE, BGR10A2_LE, r210, BGRA64_LE, "
/* The YUV of cameras (YUY2), capture cards (UYVY, v210) and decoders. */
#define LUMAHIST_YUV_FORMATS                                                                       \
  "YV12, NV21, Y42B, Y444, NV16, NV24, Y41B, YUY2, YVYU, UYVY, VYUY, GRAY16_BE, I420_10LE, "       \
  "I420_12LE, I422_10LE, I422_12LE, Y444_10LE, Y444_12LE, Y444_16LE, P012_LE, P016_LE"
#define LUMAHIST_FORMATS "{ " LUMAHIST_BASE_FORMATS LUMAHIST_YUV_FORMATS ", v210 }"
/* In CUDA memory, not v210: the library has its kernels, but GStreamer's
 * CUDA elements (GST_CUDA_FORMATS of nvcodec: cudaupload, cudaconvert, the
 * NVDEC decoders) carry no v210, so no peer would negotiate it. */
#define LUMAHIST_CUDA_FORMATS "{ " LUMAHIST_BASE_FORMATS LUMAHIST_YUV_FORMATS " }"

#ifdef HAVE_GST_CUDA
#define LUMAHIST_CAPS                                                                              \
  GST_VIDEO_CAPS_MAKE_WITH_FEATURES(GST_CAPS_FEATURE_MEMORY_CUDA_MEMORY, LUMAHIST_CUDA_FORMATS)    \
  ";" GST_VIDEO_CAPS_MAKE(LUMAHIST_FORMATS)
#else
#define LUMAHIST_CAPS GST_VIDEO_CAPS_MAKE(LUMAHIST_FORMATS)
#endif

static GstStaticPadTemplate sink_template =
    GST_STATIC_PAD_TEMPLATE("sink", GST_PAD_SINK, GST_PAD_ALWAYS, GST_STATIC_CAPS(LUMAHIST_CAPS));
static GstStaticPadTemplate src_template =
    GST_STATIC_PAD_TEMPLATE("src", GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS(LUMAHIST_CAPS));

#define gst_lumahist_parent_class parent_class
G_DEFINE_TYPE(GstLumahist, gst_lumahist, GST_TYPE_BASE_TRANSFORM);
GST_ELEMENT_REGISTER_DEFINE(lumahist, "lumahist", GST_RANK_NONE, GST_TYPE_LUMAHIST);

/* ------------------------------------------------------------------------ */
/* Enumerations of the properties                                            */

#define GST_TYPE_LUMAHIST_MODE (gst_lumahist_mode_get_type())
static GType gst_lumahist_mode_get_type(void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
      {GST_LUMAHIST_MODE_ANALYZE, "Measure only; frames pass through untouched", "analyze"},
      {GST_LUMAHIST_MODE_EQUALIZE, "Global histogram equalization of the luma", "equalize"},
      {GST_LUMAHIST_MODE_CLAHE, "Contrast-limited adaptive equalization (CLAHE) of the luma",
       "clahe"},
      {0, NULL, NULL},
  };

  if (g_once_init_enter(&type))
    g_once_init_leave(&type, g_enum_register_static("GstLumahistMode", values));
  return type;
}

#define GST_TYPE_LUMAHIST_BACKEND (gst_lumahist_backend_get_type())
static GType gst_lumahist_backend_get_type(void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
      {GST_LUMAHIST_BACKEND_AUTO, "CUDA when a device is usable, else the CPU", "auto"},
      {GST_LUMAHIST_BACKEND_CPU, "The CPU", "cpu"},
      {GST_LUMAHIST_BACKEND_CUDA, "CUDA; fail to start without a usable device", "cuda"},
      {0, NULL, NULL},
  };

  if (g_once_init_enter(&type))
    g_once_init_leave(&type, g_enum_register_static("GstLumahistBackend", values));
  return type;
}

#define GST_TYPE_LUMAHIST_MATRIX (gst_lumahist_matrix_get_type())
static GType gst_lumahist_matrix_get_type(void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
      {GST_LUMAHIST_MATRIX_AUTO, "From the caps' colorimetry", "auto"},
      {GST_LUMAHIST_MATRIX_BT601, "BT.601 (Kr 0.299, Kb 0.114)", "bt601"},
      {GST_LUMAHIST_MATRIX_BT709, "BT.709 (Kr 0.2126, Kb 0.0722)", "bt709"},
      {GST_LUMAHIST_MATRIX_BT2020, "BT.2020 (Kr 0.2627, Kb 0.0593)", "bt2020"},
      {0, NULL, NULL},
  };

  if (g_once_init_enter(&type))
    g_once_init_leave(&type, g_enum_register_static("GstLumahistMatrix", values));
  return type;
}

#define GST_TYPE_LUMAHIST_RANGE (gst_lumahist_range_get_type())
static GType gst_lumahist_range_get_type(void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
      {GST_LUMAHIST_RANGE_AUTO, "From the caps' colorimetry", "auto"},
      {GST_LUMAHIST_RANGE_FULL, "Full range (0-255 for 8 bits)", "full"},
      {GST_LUMAHIST_RANGE_LIMITED, "Limited range (16-235 for 8 bits)", "limited"},
      {0, NULL, NULL},
  };

  if (g_once_init_enter(&type))
    g_once_init_leave(&type, g_enum_register_static("GstLumahistRange", values));
  return type;
}

#define GST_TYPE_LUMAHIST_PERCENTILE_METHOD (gst_lumahist_percentile_method_get_type())
static GType gst_lumahist_percentile_method_get_type(void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
      {LH_PERCENTILE_AUTO, "The faster exact method for the backend and frame size", "auto"},
      {LH_PERCENTILE_HISTOGRAM, "Walk the cumulative histogram", "histogram"},
      {LH_PERCENTILE_SORT, "Sort the luma values (radix sort on the GPU)", "sort"},
      {0, NULL, NULL},
  };

  if (g_once_init_enter(&type))
    g_once_init_leave(&type, g_enum_register_static("GstLumahistPercentileMethod", values));
  return type;
}

#define GST_TYPE_LUMAHIST_OVERLAY_SCALE (gst_lumahist_overlay_scale_get_type())
static GType gst_lumahist_overlay_scale_get_type(void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
      {LH_OVERLAY_LINEAR, "Bar heights proportional to counts", "linear"},
      {LH_OVERLAY_LOG, "Bar heights proportional to log(1 + count)", "log"},
      {0, NULL, NULL},
  };

  if (g_once_init_enter(&type))
    g_once_init_leave(&type, g_enum_register_static("GstLumahistOverlayScale", values));
  return type;
}

static LhBackend lh_backend_of(GstLumahistBackend backend)
{
  switch (backend) {
  case GST_LUMAHIST_BACKEND_CPU:
    return LH_BACKEND_CPU;
  case GST_LUMAHIST_BACKEND_CUDA:
    return LH_BACKEND_CUDA;
  default:
    return LH_BACKEND_AUTO;
  }
}

/* ------------------------------------------------------------------------ */
/* Caps                                                                      */

/* ------------------------------------------------------------------------ */
/* The library context and the CUDA context it lives in                    */

/* Makes the CUDA context of the library context current on this thread, if
 * it has one; FALSE when that failed.  Pair with gst_lumahist_leave(). */
static gboolean gst_lumahist_enter(GstLumahist *self)
{
#ifdef HAVE_GST_CUDA
  if (self->lh_cuda_ctx && !gst_cuda_context_push(self->lh_cuda_ctx))
    return FALSE;
#endif
  return TRUE;
}

static void gst_lumahist_leave(GstLumahist *self)
{
#ifdef HAVE_GST_CUDA
  if (self->lh_cuda_ctx)
    gst_cuda_context_pop(NULL);
#endif
}

/* The same two, in the form GstLumahistPins calls them. */
static gboolean gst_lumahist_pins_enter(gpointer element)
{
  return gst_lumahist_enter(element);
}

static void gst_lumahist_pins_leave(gpointer element)
{
  gst_lumahist_leave(element);
}

static void gst_lumahist_set_active_backend(GstLumahist *self, const gchar *name)
{
  /* Only the streaming and state-change threads write it: read unlocked. */
  if (self->active_backend == name)
    return;
  GST_OBJECT_LOCK(self);
  self->active_backend = name;
  GST_OBJECT_UNLOCK(self);
  g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_ACTIVE_BACKEND]);
}

static void gst_lumahist_close_library(GstLumahist *self)
{
  /* Pinned memory is unpinned while its library context exists. */
  gst_lumahist_pins_clear(self->pins);
  if (self->lh || self->temporal) {
    /* Device memory is released in the context it was made in. */
    gboolean entered = gst_lumahist_enter(self);
    lh_temporal_free(self->temporal);
    lh_context_free(self->lh);
    if (entered)
      gst_lumahist_leave(self);
    self->temporal = NULL;
    self->lh = NULL;
  }
#ifdef HAVE_GST_CUDA
  gst_clear_object(&self->lh_cuda_ctx);
#endif
}

/* (Re)creates the library context for the backend the element started with,
 * inside cuda_ctx (a GstCudaContext) when it is not NULL. */
static gboolean gst_lumahist_open_library(GstLumahist *self, GstLumahistBackend backend,
                                          gpointer cuda_ctx)
{
  LhContext *lh = NULL;
  int status;

  gst_lumahist_close_library(self);
#ifdef HAVE_GST_CUDA
  if (cuda_ctx)
    self->lh_cuda_ctx = gst_object_ref(cuda_ctx);
#endif
  if (!gst_lumahist_enter(self))
    goto push_failed;
  status = lh_context_new(lh_backend_of(backend), &lh);
  gst_lumahist_leave(self);
  if (status < 0)
    goto open_failed;

  self->lh = lh;
  GST_OBJECT_LOCK(self);
  int n_threads = self->n_threads;
  GST_OBJECT_UNLOCK(self);
  lh_context_set_threads(lh, n_threads);
  gst_lumahist_set_active_backend(self, lh_backend_name(lh_context_backend(lh)));
  GST_INFO_OBJECT(self, "analysing on the %s backend", lh_backend_name(lh_context_backend(lh)));
  if (backend == GST_LUMAHIST_BACKEND_AUTO && lh_context_backend(lh) == LH_BACKEND_CPU &&
      !self->warned_fallback) {
    self->warned_fallback = TRUE;
    GST_ELEMENT_WARNING(self, RESOURCE, NOT_FOUND,
                        ("CUDA is not usable here: lumahist analyses frames on the CPU."),
                        ("%s", lh_context_note(lh)));
  }
  return TRUE;

  /* ERRORS */
push_failed:
  GST_ELEMENT_ERROR(self, RESOURCE, FAILED, ("Could not make the CUDA context current."), (NULL));
  gst_lumahist_close_library(self);
  return FALSE;
open_failed:
  GST_ELEMENT_ERROR(
      self, RESOURCE, OPEN_READ_WRITE,
      ("Could not start the lumahist %s backend.", lh_backend_name(lh_backend_of(backend))),
      ("%s: %s", lh_status_name(status), lh_last_error()));
  gst_lumahist_close_library(self);
  return FALSE;
}

/* ------------------------------------------------------------------------ */
/* GstElement and GstBaseTransform                                           */

static void gst_lumahist_set_context(GstElement *element, GstContext *context)
{
#ifdef HAVE_GST_CUDA
  GstLumahist *self = GST_LUMAHIST(element);
  gint device_id;

  GST_OBJECT_LOCK(self);
  device_id = self->cuda_device_id;
  GST_OBJECT_UNLOCK(self);
  gst_cuda_handle_set_context(element, context, device_id, &self->cuda_ctx);
#endif
  GST_ELEMENT_CLASS(parent_class)->set_context(element, context);
}

static gboolean gst_lumahist_query(GstBaseTransform *trans, GstPadDirection direction,
                                   GstQuery *query)
{
#ifdef HAVE_GST_CUDA
  GstLumahist *self = GST_LUMAHIST(trans);

  if (GST_QUERY_TYPE(query) == GST_QUERY_CONTEXT &&
      gst_cuda_handle_context_query(GST_ELEMENT(trans), query, self->cuda_ctx))
    return TRUE;
#endif
  return GST_BASE_TRANSFORM_CLASS(parent_class)->query(trans, direction, query);
}

/* Upstream asks what buffers to write frames into.  Frames in system memory
 * that the CUDA backend will copy to the GPU are best written into
 * page-locked memory: when nobody downstream proposed a pool (passthrough
 * forwards the query), the element offers one, with its allocator first
 * (decoders take the first allocator with the first pool). */
static gboolean gst_lumahist_propose_allocation(GstBaseTransform *trans, GstQuery *decide_query,
                                                GstQuery *query)
{
  GstLumahist *self = GST_LUMAHIST(trans);
  gboolean answered =
      GST_BASE_TRANSFORM_CLASS(parent_class)->propose_allocation(trans, decide_query, query);
  GstCaps *caps = NULL;
  gboolean need_pool = FALSE;
  guint crop_index;

  /* The element measures and rewrites the whole frame it is given: upstream
   * that left the cropping to downstream (a crop meta, which the base class
   * copies from downstream's answer) would have it measure the uncropped
   * picture.  Upstream crops instead. */
  while (gst_query_find_allocation_meta(query, GST_VIDEO_CROP_META_API_TYPE, &crop_index))
    gst_query_remove_nth_allocation_meta(query, crop_index);

  gst_query_parse_allocation(query, &caps, &need_pool);
  if (!self->pins_on || !caps || !self->lh || lh_context_backend(self->lh) != LH_BACKEND_CUDA ||
      gst_query_get_n_allocation_pools(query) > 0)
    return answered;
  GstCapsFeatures *features = gst_caps_get_features(caps, 0);
  if (features && !gst_caps_features_is_any(features) &&
      !gst_caps_features_contains(features, GST_CAPS_FEATURE_MEMORY_SYSTEM_MEMORY))
    return answered;
  GstVideoInfo info;
  if (!gst_video_info_from_caps(&info, caps))
    return answered;

  gpointer cuda_context = NULL;
#ifdef HAVE_GST_CUDA
  cuda_context = self->lh_cuda_ctx;
#endif
  GstBufferPool *pool = gst_lumahist_host_pool_new(caps, HOST_POOL_MIN_BUFFERS, cuda_context);
  if (!pool)
    return answered;
  GstStructure *config = gst_buffer_pool_get_config(pool);
  GstAllocator *allocator = NULL;
  GstAllocationParams params;
  gst_buffer_pool_config_get_allocator(config, &allocator, &params);
  if (gst_query_get_n_allocation_params(query) > 0)
    gst_query_set_nth_allocation_param(query, 0, allocator, &params);
  else
    gst_query_add_allocation_param(query, allocator, &params);
  gst_structure_free(config);
  gst_query_add_allocation_pool(query, pool, (guint)GST_VIDEO_INFO_SIZE(&info),
                                HOST_POOL_MIN_BUFFERS, 0);
  gst_query_add_allocation_meta(query, GST_VIDEO_META_API_TYPE, NULL);
  gst_object_unref(pool);
  GST_DEBUG_OBJECT(self, "offered a page-locked pool for %" GST_PTR_FORMAT, caps);
  return TRUE;
}

/* Whether a buffer has a frame to measure or rewrite: not one without bytes
 * (a source's empty buffer between frames), nor a gap too small to hold the
 * frame.  A gap that holds it, as the frames that videorate repeats do, is a
 * frame of the stream as shown: measured, rewritten and counted like the
 * frames around it. */
static gboolean gst_lumahist_holds_picture(GstLumahist *self, GstBuffer *buffer)
{
  gsize size = gst_buffer_get_size(buffer);

  if (size == 0)
    return FALSE;
  if (!GST_BUFFER_FLAG_IS_SET(buffer, GST_BUFFER_FLAG_GAP))
    return TRUE;
  return gst_buffer_get_video_meta(buffer) != NULL || size >= GST_VIDEO_INFO_SIZE(&self->info);
}

#ifdef HAVE_GST_CUDA
static void gst_lumahist_clear_rewrite_pool(GstLumahist *self)
{
  gst_clear_buffer(&self->rewrite_source);
  if (self->rewrite_pool) {
    gst_buffer_pool_set_active(self->rewrite_pool, FALSE);
    gst_clear_object(&self->rewrite_pool);
  }
}

/* Whether equalization can write this buffer's frame into another: the
 * element rewrites frames, this one has a picture (gst_lumahist_holds_picture,
 * as transform_ip asks), and the library runs on CUDA in the buffer's own
 * CUDA context. */
static gboolean gst_lumahist_rewrites_from(GstLumahist *self, GstBuffer *input)
{
  GstMemory *mem;
  GstLumahistMode mode;

  GST_OBJECT_LOCK(self);
  mode = self->mode;
  GST_OBJECT_UNLOCK(self);
  if (mode == GST_LUMAHIST_MODE_ANALYZE || !gst_lumahist_holds_picture(self, input) ||
      !self->cuda_caps || !self->lh || lh_context_backend(self->lh) != LH_BACKEND_CUDA ||
      gst_buffer_n_memory(input) != 1)
    return FALSE;
  mem = gst_buffer_peek_memory(input, 0);
  return gst_is_cuda_memory(mem) && GST_CUDA_MEMORY_CAST(mem)->context == self->lh_cuda_ctx;
}

/* An output buffer from the element's CUDA pool, with the input's
 * timestamps, flags and metas, for equalization to write the input's frame
 * into (rewrite_source).  FALSE when no pool can be made: the base class
 * then copies the input. */
static gboolean gst_lumahist_pooled_output(GstLumahist *self, GstBuffer *input, GstBuffer **outbuf)
{
  GstBaseTransform *trans = GST_BASE_TRANSFORM(self);

  if (!self->rewrite_pool) {
    GstBufferPool *pool = gst_cuda_buffer_pool_new(self->lh_cuda_ctx);
    GstStructure *config = gst_buffer_pool_get_config(pool);
    GstCaps *caps = gst_video_info_to_caps(&self->info);

    gst_caps_set_features(caps, 0,
                          gst_caps_features_new(GST_CAPS_FEATURE_MEMORY_CUDA_MEMORY, NULL));
    gst_buffer_pool_config_set_params(config, caps, (guint)GST_VIDEO_INFO_SIZE(&self->info), 0, 0);
    gst_buffer_pool_config_add_option(config, GST_BUFFER_POOL_OPTION_VIDEO_META);
    gst_caps_unref(caps);
    if (!gst_buffer_pool_set_config(pool, config) || !gst_buffer_pool_set_active(pool, TRUE)) {
      GST_WARNING_OBJECT(self, "no CUDA buffer pool for rewritten frames; copying them");
      gst_object_unref(pool);
      return FALSE;
    }
    self->rewrite_pool = pool;
  }
  if (gst_buffer_pool_acquire_buffer(self->rewrite_pool, outbuf, NULL) != GST_FLOW_OK)
    return FALSE;
  if (!GST_BASE_TRANSFORM_GET_CLASS(trans)->copy_metadata(trans, input, *outbuf)) {
    gst_clear_buffer(outbuf);
    return FALSE;
  }
  gst_buffer_replace(&self->rewrite_source, input);
  return TRUE;
}
#endif

static void gst_lumahist_forget_tags(GstLumahist *self)
{
  self->tag_direction_global = GST_VIDEO_ORIENTATION_IDENTITY;
  self->tag_direction_stream = GST_VIDEO_ORIENTATION_IDENTITY;
  self->has_tag_direction_stream = FALSE;
}

static gboolean gst_lumahist_start(GstBaseTransform *trans)
{
  GstLumahist *self = GST_LUMAHIST(trans);
  GstLumahistBackend backend;
  gint device_id;

  GST_OBJECT_LOCK(self);
  backend = self->backend;
  device_id = self->cuda_device_id;
  self->pins_on = self->page_lock;
  GST_OBJECT_UNLOCK(self);

  self->started_backend = backend;
  self->frame_count = 0;
  self->warned_fallback = FALSE;
#ifdef HAVE_GST_CUDA
  /* Work in the pipeline's CUDA context (or offer ours to it), so that
   * buffers move between CUDA elements without a context switch.  Without
   * libcuda or a device, the library decides on its own below. */
  if (backend != GST_LUMAHIST_BACKEND_CPU && gst_cuda_load_library() &&
      !gst_cuda_ensure_element_context(GST_ELEMENT(self), device_id, &self->cuda_ctx))
    GST_INFO_OBJECT(self, "no CUDA context for device %d", device_id);
  return gst_lumahist_open_library(self, backend, self->cuda_ctx);
#else
  (void)device_id;
  return gst_lumahist_open_library(self, backend, NULL);
#endif
}

static gboolean gst_lumahist_stop(GstBaseTransform *trans)
{
  GstLumahist *self = GST_LUMAHIST(trans);

#ifdef HAVE_GST_CUDA
  gst_lumahist_clear_rewrite_pool(self);
#endif
  gst_lumahist_close_library(self);
  lh_stats_clear(&self->stats);
#ifdef HAVE_GST_CUDA
  gst_clear_object(&self->cuda_ctx);
#endif
  gst_lumahist_forget_tags(self);
  g_clear_pointer(&self->stream_id, g_free);
  gst_lumahist_set_active_backend(self, "none");
  return TRUE;
}

static gboolean gst_lumahist_set_caps(GstBaseTransform *trans, GstCaps *incaps, GstCaps *outcaps)
{
  GstLumahist *self = GST_LUMAHIST(trans);
  GstVideoInfo info;
  LhFormat format;

  if (!gst_video_info_from_caps(&info, incaps))
    goto invalid_caps;
  if (!lhio_gst_format(GST_VIDEO_INFO_FORMAT(&info), &format))
    goto unsupported_format;

  self->info = info;
  self->lh_format = format;
  self->cuda_caps = FALSE;
#ifdef HAVE_GST_CUDA
  gst_lumahist_clear_rewrite_pool(self); /* its frames have the old caps */
  {
    GstCapsFeatures *features = gst_caps_get_features(incaps, 0);
    self->cuda_caps =
        features && gst_caps_features_contains(features, GST_CAPS_FEATURE_MEMORY_CUDA_MEMORY);
  }
#endif
  self->caps_matrix = lhio_colorimetry_matrix(&info);
  self->caps_range = lhio_colorimetry_range(&info);
  GST_DEBUG_OBJECT(self, "%s %dx%d in %s memory; colorimetry gives %s, %s range",
                   GST_VIDEO_INFO_NAME(&info), GST_VIDEO_INFO_WIDTH(&info),
                   GST_VIDEO_INFO_HEIGHT(&info), self->cuda_caps ? "CUDA" : "system",
                   lh_matrix_name(self->caps_matrix), lh_range_name(self->caps_range));
  return TRUE;

  /* ERRORS */
invalid_caps:
  GST_ERROR_OBJECT(self, "invalid caps %" GST_PTR_FORMAT, incaps);
  return FALSE;
unsupported_format:
  GST_ERROR_OBJECT(self, "unsupported format in %" GST_PTR_FORMAT, incaps);
  return FALSE;
}

/* The image-orientation tags, taken as videoflip video-direction=auto takes
 * them, so that a panel drawn here stands upright after such a videoflip. */
static void gst_lumahist_note_tags(GstLumahist *self, GstEvent *event)
{
  GstTagList *tags;
  GstVideoOrientationMethod method;
  gboolean found;

  gst_event_parse_tag(event, &tags);
  found = gst_video_orientation_from_tag(tags, &method);
  if (found && method == GST_VIDEO_ORIENTATION_CUSTOM)
    return;
  /* A tag list without the tag: upright, for its scope. */
  if (!found)
    method = GST_VIDEO_ORIENTATION_IDENTITY;
  if (gst_tag_list_get_scope(tags) == GST_TAG_SCOPE_STREAM) {
    self->tag_direction_stream = method;
    self->has_tag_direction_stream = found;
  } else {
    self->tag_direction_global = method;
  }
}

/* Restarts the temporal window; the window lives where its backend keeps
 * it, device memory on CUDA, so in the library context's CUDA context. */
static void gst_lumahist_reset_temporal(GstLumahist *self)
{
  gboolean entered;

  if (!self->temporal)
    return;
  entered = gst_lumahist_enter(self);
  lh_temporal_reset(self->temporal);
  if (entered)
    gst_lumahist_leave(self);
}

static gboolean gst_lumahist_sink_event(GstBaseTransform *trans, GstEvent *event)
{
  GstLumahist *self = GST_LUMAHIST(trans);
  const gchar *stream_id;

  if (GST_EVENT_TYPE(event) == GST_EVENT_TAG)
    gst_lumahist_note_tags(self, event);
  if (GST_EVENT_TYPE(event) == GST_EVENT_STREAM_START) {
    gst_event_parse_stream_start(event, &stream_id);
    if (g_strcmp0(stream_id, self->stream_id) != 0) {
      gst_lumahist_forget_tags(self);
      g_free(self->stream_id);
      self->stream_id = g_strdup(stream_id);
    }
  }

  /* After a flush (a seek), the next frame is frame 0 and gets a message,
   * and equalization does not smooth across the jump. */
  if (GST_EVENT_TYPE(event) == GST_EVENT_FLUSH_STOP) {
    self->frame_count = 0;
    /* On the thread that pushes the flush, in the element's CUDA context. */
    gst_lumahist_reset_temporal(self);
  }
  return GST_BASE_TRANSFORM_CLASS(parent_class)->sink_event(trans, event);
}

static GstFlowReturn gst_lumahist_prepare_output_buffer(GstBaseTransform *trans, GstBuffer *input,
                                                        GstBuffer **outbuf)
{
  GstLumahist *self = GST_LUMAHIST(trans);
  gboolean attach_meta;

  GST_OBJECT_LOCK(self);
  attach_meta = self->attach_meta;
  GST_OBJECT_UNLOCK(self);

  /* A passthrough buffer that others hold cannot take a meta.  A shallow copy
   * shares its memory, so no pixel is copied; the base class then pushes the
   * copy and drops the input. */
  if (attach_meta && gst_base_transform_is_passthrough(trans) && !gst_buffer_is_writable(input)) {
    *outbuf = gst_buffer_copy(input);
    return *outbuf ? GST_FLOW_OK : GST_FLOW_ERROR;
  }
#ifdef HAVE_GST_CUDA
  /* A frame that others hold (the buffer, or only its memory: imagefreeze and
   * tee push shallow copies) is written into one of the element's own.  Left
   * to the base class and gst_buffer_map, shared CUDA memory would be copied
   * into a newly allocated block on every frame. */
  if (!gst_base_transform_is_passthrough(trans) &&
      (!gst_buffer_is_writable(input) || !gst_buffer_is_all_memory_writable(input)) &&
      gst_lumahist_rewrites_from(self, input) && gst_lumahist_pooled_output(self, input, outbuf))
    return GST_FLOW_OK;
#endif
  return GST_BASE_TRANSFORM_CLASS(parent_class)->prepare_output_buffer(trans, input, outbuf);
}

#ifdef HAVE_GST_CUDA
/* Reads a CUDA buffer in place when the library runs on CUDA: sets the map
 * flags, memory kind and stream, reopening the library in the buffer's own
 * CUDA context if it is another one (device memory is only valid there).  In
 * every other case the buffer is mapped for the host, which downloads it. */
static gboolean gst_lumahist_prepare_cuda(GstLumahist *self, GstBuffer *buffer, GstMapFlags *flags,
                                          LhMemory *memory, void **stream)
{
  GstMemory *mem;
  GstCudaMemory *cmem;

  if (!self->cuda_caps || lh_context_backend(self->lh) != LH_BACKEND_CUDA ||
      gst_buffer_n_memory(buffer) != 1)
    return TRUE;
  mem = gst_buffer_peek_memory(buffer, 0);
  if (!gst_is_cuda_memory(mem))
    return TRUE;

  cmem = GST_CUDA_MEMORY_CAST(mem);
  if (cmem->context != self->lh_cuda_ctx) {
    GST_INFO_OBJECT(self, "buffer in another CUDA context; moving the library there");
    if (!gst_lumahist_open_library(self, self->started_backend, cmem->context))
      return FALSE;
    if (lh_context_backend(self->lh) != LH_BACKEND_CUDA)
      return TRUE;
  }
  *flags |= GST_MAP_CUDA;
  *memory = LH_MEMORY_CUDA;
#ifdef HAVE_GST_CUDA_STREAM
  {
    /* Queue the analysis behind the work that wrote the buffer. */
    GstCudaStream *cuda_stream = gst_cuda_memory_get_stream(cmem);
    *stream = cuda_stream ? (void *)gst_cuda_stream_get_handle(cuda_stream) : NULL;
  }
#endif
  return TRUE;
}
#endif

/* What to do with one frame, settled from the properties before it is mapped. */
typedef struct {
  gboolean analyze; /* statistics into self->stats (messages, meta, overlay) */
  LhOptions options;
  gboolean equalize;
  LhEqualizeOptions equalize_options;
  gboolean overlay;
  LhOverlayOptions overlay_options;
} GstLumahistWork;

/* Maps buffer for the library as a frame: in place on the device when the
 * library runs on CUDA and the buffer is CUDA memory, else on the host;
 * *stream (may be NULL) is the CUDA stream that wrote it, if any. */
static gboolean gst_lumahist_map(GstLumahist *self, GstBuffer *buffer, GstMapFlags flags,
                                 GstVideoFrame *vframe, LhFrame *frame, void **stream)
{
  LhMemory memory = LH_MEMORY_HOST;
  void *its_stream = NULL;

#ifdef HAVE_GST_CUDA
  if (!gst_lumahist_prepare_cuda(self, buffer, &flags, &memory, &its_stream))
    return FALSE;
#endif
  if (!gst_video_frame_map(vframe, &self->info, buffer, flags))
    return FALSE;
  memset(frame, 0, sizeof *frame);
  frame->format = self->lh_format;
  frame->memory = memory;
  frame->width = GST_VIDEO_FRAME_WIDTH(vframe);
  frame->height = GST_VIDEO_FRAME_HEIGHT(vframe);
  for (guint i = 0; i < GST_VIDEO_FRAME_N_PLANES(vframe) && i < G_N_ELEMENTS(frame->planes); i++) {
    frame->planes[i] = GST_VIDEO_FRAME_PLANE_DATA(vframe, i);
    frame->strides[i] = (size_t)GST_VIDEO_FRAME_PLANE_STRIDE(vframe, i);
  }
  if (stream)
    *stream = its_stream;
  return TRUE;
}

/* Whether the library takes frame where it lies: its planes' addresses and
 * strides multiples of its samples' size (lh_format_alignment).  A buffer
 * at an odd offset (rawvideoparse's plane-offsets, a sub-buffer of a
 * demuxer's read) may hold 16-bit samples at odd addresses. */
static gboolean gst_lumahist_aligned(const LhFrame *frame)
{
  uintptr_t align = (uintptr_t)lh_format_alignment(frame->format);

  for (guint i = 0; i < G_N_ELEMENTS(frame->planes); i++)
    if (frame->planes[i] &&
        ((uintptr_t)frame->planes[i] % align != 0 || frame->strides[i] % align != 0))
      return FALSE;
  return TRUE;
}

/* Copies vframe into a new buffer of the same format and size laid out as
 * GStreamer lays out its own (aligned strides), mapped into *staged_vframe
 * and described by *frame; FALSE if it could not be made. */
static gboolean gst_lumahist_stage(GstLumahist *self, GstVideoFrame *vframe,
                                   GstVideoFrame *staged_vframe, LhFrame *frame)
{
  GstVideoInfo info;
  GstAllocationParams params;
  GstBuffer *staged;
  gboolean mapped;

  if (!gst_video_info_set_format(&info, GST_VIDEO_FRAME_FORMAT(vframe),
                                 (guint)GST_VIDEO_FRAME_WIDTH(vframe),
                                 (guint)GST_VIDEO_FRAME_HEIGHT(vframe)))
    return FALSE;
  gst_allocation_params_init(&params);
  params.align = 15;
  staged = gst_buffer_new_allocate(NULL, GST_VIDEO_INFO_SIZE(&info), &params);
  if (!staged)
    return FALSE;
  mapped = gst_video_frame_map(staged_vframe, &info, staged, GST_MAP_READWRITE);
  /* The frame holds its own reference while mapped. */
  gst_buffer_unref(staged);
  if (!mapped)
    return FALSE;
  if (!gst_video_frame_copy(staged_vframe, vframe)) {
    gst_video_frame_unmap(staged_vframe);
    return FALSE;
  }
  GST_LOG_OBJECT(self, "frame samples not aligned: worked on in an aligned copy");
  for (guint i = 0; i < GST_VIDEO_FRAME_N_PLANES(staged_vframe) && i < G_N_ELEMENTS(frame->planes);
       i++) {
    frame->planes[i] = GST_VIDEO_FRAME_PLANE_DATA(staged_vframe, i);
    frame->strides[i] = (size_t)GST_VIDEO_FRAME_PLANE_STRIDE(staged_vframe, i);
  }
  return TRUE;
}

/* The error for equalization out of memory.  What grows out of bounds is the
 * LUTs of the temporal window: an entry of 2 bytes per code value, tile and
 * frame of the window (16-bit CLAHE over 64 x 64 tiles and 256 frames asks
 * for 137 GB), so the message names the properties to lower. */
static void gst_lumahist_post_no_memory(GstLumahist *self, const LhEqualizeOptions *equalize,
                                        int status)
{
  gboolean clahe = equalize->mode == LH_EQUALIZE_CLAHE;
  guint64 tiles = clahe ? (guint64)equalize->tiles_x * (guint64)equalize->tiles_y : 1;
  guint64 window = equalize->temporal ? self->temporal_window_made : 1;
  int bit_depth = lh_format_bit_depth(self->lh_format);
  guint64 bytes = window * tiles * ((guint64)1 << bit_depth) * 2;

  GST_ELEMENT_ERROR(self, RESOURCE, NO_SPACE_LEFT,
                    ("Not enough memory to equalize a frame: lower temporal-window%s.",
                     clahe ? ", tiles-x or tiles-y" : ""),
                    ("%s: %s; the LUTs take temporal-window %" G_GUINT64_FORMAT
                     " x %" G_GUINT64_FORMAT
                     " tiles x 2^%d code values x 2 bytes = %" G_GUINT64_FORMAT " bytes",
                     lh_status_name(status), lh_last_error(), window, tiles, bit_depth, bytes));
}

/* Runs the library on a buffer: analysis (into self->stats), then
 * equalization and the overlay, as work says: in place, or, when source is
 * another buffer (gst_lumahist_pooled_output), from source's frame into
 * buffer's. */
static GstFlowReturn gst_lumahist_process(GstLumahist *self, GstBuffer *source, GstBuffer *buffer,
                                          const GstLumahistWork *work)
{
  GstVideoFrame in_vframe, out_vframe, staged_vframe;
  gboolean rewrite = work->equalize || work->overlay;
  gboolean apart = source && source != buffer;
  gboolean staged = FALSE;
  void *stream = NULL;
  const gchar *what = "analyse";
  LhFrame in, out;
  int status = LH_OK;

  if (apart) {
    if (!gst_lumahist_map(self, source, GST_MAP_READ, &in_vframe, &in, &stream))
      goto map_failed;
    if (!gst_lumahist_map(self, buffer, GST_MAP_WRITE, &out_vframe, &out, NULL)) {
      gst_video_frame_unmap(&in_vframe);
      goto map_failed;
    }
  } else {
    if (!gst_lumahist_map(self, buffer, rewrite ? GST_MAP_READWRITE : GST_MAP_READ, &in_vframe, &in,
                          &stream))
      goto map_failed;
    out = in;
  }
  /* Samples the library cannot read where they lie are worked on in an
   * aligned copy of the input, copied back to the output when changed. */
  if (in.memory == LH_MEMORY_HOST &&
      (!gst_lumahist_aligned(&in) || (apart && !gst_lumahist_aligned(&out)))) {
    if (!gst_lumahist_stage(self, &in_vframe, &staged_vframe, &in)) {
      gst_video_frame_unmap(&in_vframe);
      if (apart)
        gst_video_frame_unmap(&out_vframe);
      goto stage_failed;
    }
    staged = TRUE;
    out = in;
  }

  if (!gst_lumahist_enter(self)) {
    if (staged)
      gst_video_frame_unmap(&staged_vframe);
    gst_video_frame_unmap(&in_vframe);
    if (apart)
      gst_video_frame_unmap(&out_vframe);
    goto push_failed;
  }
  if (in.memory == LH_MEMORY_HOST && self->pins_on)
    gst_lumahist_pins_add(self->pins, self->lh, buffer);
  status = lh_context_set_stream(self->lh, stream);
  /* The statistics are those of the frame as it came in. */
  if (status == LH_OK && work->analyze) {
    status = lh_analyze(self->lh, &in, &work->options, &self->stats);
    self->analysed_on = lh_context_last_backend(self->lh);
  }
  if (status == LH_OK && work->equalize) {
    what = "equalize";
    status = lh_equalize(self->lh, &in, &out, &work->equalize_options);
  }
  if (status == LH_OK && work->overlay) {
    what = "draw the histogram on";
    status = lh_overlay(self->lh, &out, &self->stats, &work->overlay_options);
  }
#ifdef HAVE_GST_CUDA
  /* Work left queued on the input's stream must be done before the pool's
   * frame, which does not carry that stream, goes downstream. */
  if (status == LH_OK && apart && stream &&
      !gst_cuda_result(CuStreamSynchronize((CUstream)stream))) {
    gst_lumahist_leave(self);
    if (staged)
      gst_video_frame_unmap(&staged_vframe);
    gst_video_frame_unmap(&in_vframe);
    gst_video_frame_unmap(&out_vframe);
    GST_ELEMENT_ERROR(self, STREAM, FAILED, ("Could not equalize a frame."),
                      ("waiting for the CUDA stream failed"));
    return GST_FLOW_ERROR;
  }
#endif
  gst_lumahist_leave(self);
  if (staged) {
    if (status == LH_OK && rewrite &&
        !gst_video_frame_copy(apart ? &out_vframe : &in_vframe, &staged_vframe))
      status = lh_set_error(LH_ERROR_INVALID_ARGUMENT, "the aligned copy could not be copied back");
    gst_video_frame_unmap(&staged_vframe);
  }
  gst_video_frame_unmap(&in_vframe);
  if (apart)
    gst_video_frame_unmap(&out_vframe);
  if (status == LH_OK)
    gst_lumahist_set_active_backend(self, lh_backend_name(lh_context_last_backend(self->lh)));
  if (status == LH_ERROR_UNSUPPORTED)
    goto unsupported;
  if (status == LH_ERROR_NO_MEMORY && work->equalize)
    goto no_memory_to_equalize;
  if (status < 0)
    goto failed;
  return GST_FLOW_OK;

  /* ERRORS */
map_failed:
  GST_ELEMENT_ERROR(self, STREAM, FORMAT, ("Could not map a video frame."),
                    ("buffer %" GST_PTR_FORMAT " does not fit the caps", buffer));
  return GST_FLOW_ERROR;
push_failed:
  GST_ELEMENT_ERROR(self, RESOURCE, FAILED, ("Could not make the CUDA context current."), (NULL));
  return GST_FLOW_ERROR;
stage_failed:
  GST_ELEMENT_ERROR(self, RESOURCE, NO_SPACE_LEFT, ("Could not copy a video frame."),
                    ("frame %" GST_PTR_FORMAT ": its samples are not aligned, and an aligned copy "
                     "could not be made",
                     buffer));
  return GST_FLOW_ERROR;
unsupported:
  GST_ELEMENT_ERROR(self, STREAM, NOT_IMPLEMENTED,
                    ("The %s backend of this lumahist build cannot %s frames.",
                     lh_backend_name(lh_context_backend(self->lh)), what),
                    ("%s", lh_last_error()));
  return GST_FLOW_ERROR;
no_memory_to_equalize:
  gst_lumahist_post_no_memory(self, &work->equalize_options, status);
  return GST_FLOW_ERROR;
failed:
  GST_ELEMENT_ERROR(self, STREAM, FAILED, ("Could not %s a frame.", what),
                    ("%s: %s", lh_status_name(status), lh_last_error()));
  return GST_FLOW_ERROR;
}

/* The temporal state for these settings: NULL for a window of one frame,
 * else the current one, or a new one when the window or threshold changed.
 * A window whose LUTs were made with other equalize settings (range, clip
 * limit, R'G'B' matrix, mode, grid) is restarted by the library itself. */
static gboolean gst_lumahist_temporal(GstLumahist *self, guint window, gdouble cut_threshold,
                                      LhEqualizeOptions *equalize)
{
  int status;

  if (self->temporal &&
      (window != self->temporal_window_made || cut_threshold != self->cut_threshold_made)) {
    gboolean entered = gst_lumahist_enter(self);
    lh_temporal_free(self->temporal);
    if (entered)
      gst_lumahist_leave(self);
    self->temporal = NULL;
  }
  /* The window is of the last frames: not of those before frames that went
   * by unequalized (mode analyze for a while). */
  if (self->temporal && self->temporal_missed) {
    GST_DEBUG_OBJECT(self, "frames went by without equalization: restarting the temporal window");
    gst_lumahist_reset_temporal(self);
  }
  self->temporal_missed = FALSE;
  if (window > 1 && !self->temporal) {
    status = lh_temporal_new((int)window, cut_threshold, &self->temporal);
    if (status < 0) {
      GST_ELEMENT_ERROR(self, LIBRARY, SETTINGS, ("Could not set up temporal smoothing."),
                        ("%s: %s", lh_status_name(status), lh_last_error()));
      return FALSE;
    }
    self->temporal_window_made = window;
    self->cut_threshold_made = cut_threshold;
  }
  equalize->temporal = self->temporal;
  return TRUE;
}

/* The arrays of a message are built for every frame (a histogram: 256 to
 * 65536 values), so each item is appended by value: a GValue of a plain
 * number owns nothing, and a bitwise copy of an initialized one is a value
 * the array can take, without gst_value_array_append_value's
 * g_value_init and g_value_copy per item. */
static GValue uint64_array(const uint64_t *values, gsize n)
{
  GValue array = G_VALUE_INIT;
  GValue item = G_VALUE_INIT;

  gst_value_array_init(&array, (guint)n);
  g_value_init(&item, G_TYPE_UINT64);
  for (gsize i = 0; i < n; i++) {
    GValue taken;

    g_value_set_uint64(&item, values[i]);
    taken = item;
    gst_value_array_append_and_take_value(&array, &taken);
  }
  return array;
}

static GValue uint_array(const uint32_t *values, gsize n)
{
  GValue array = G_VALUE_INIT;
  GValue item = G_VALUE_INIT;

  gst_value_array_init(&array, (guint)n);
  g_value_init(&item, G_TYPE_UINT);
  for (gsize i = 0; i < n; i++) {
    GValue taken;

    g_value_set_uint(&item, values[i]);
    taken = item;
    gst_value_array_append_and_take_value(&array, &taken);
  }
  return array;
}

static GValue double_array(const double *values, gsize n)
{
  GValue array = G_VALUE_INIT;
  GValue item = G_VALUE_INIT;

  gst_value_array_init(&array, (guint)n);
  g_value_init(&item, G_TYPE_DOUBLE);
  for (gsize i = 0; i < n; i++) {
    GValue taken;

    g_value_set_double(&item, values[i]);
    taken = item;
    gst_value_array_append_and_take_value(&array, &taken);
  }
  return array;
}

/* The `lumahist` element message for the frame in self->stats; the fields are
 * documented at the top of this file and in plugin/README.md. */
static GstMessage *gst_lumahist_message_new(GstLumahist *self, GstBuffer *buffer, guint64 frame,
                                            gboolean with_histogram)
{
  GstBaseTransform *trans = GST_BASE_TRANSFORM(self);
  const LhStats *st = &self->stats;
  GstClockTime timestamp = GST_BUFFER_PTS(buffer);
  GstClockTime stream_time = GST_CLOCK_TIME_NONE;
  GstClockTime running_time = GST_CLOCK_TIME_NONE;
  GstStructure *s;
  GValue array;
  gsize n = (gsize)st->n_percentiles;

  if (trans->segment.format == GST_FORMAT_TIME) {
    stream_time = gst_segment_to_stream_time(&trans->segment, GST_FORMAT_TIME, timestamp);
    running_time = gst_segment_to_running_time(&trans->segment, GST_FORMAT_TIME, timestamp);
  }

  s = gst_structure_new(
      "lumahist", "timestamp", G_TYPE_UINT64, (guint64)timestamp, "stream-time", G_TYPE_UINT64,
      (guint64)stream_time, "running-time", G_TYPE_UINT64, (guint64)running_time, "duration",
      G_TYPE_UINT64, (guint64)GST_BUFFER_DURATION(buffer), "frame", G_TYPE_UINT64, frame, "backend",
      G_TYPE_STRING, lh_backend_name(self->analysed_on), "format", G_TYPE_STRING,
      GST_VIDEO_INFO_NAME(&self->info), "width", G_TYPE_INT, GST_VIDEO_INFO_WIDTH(&self->info),
      "height", G_TYPE_INT, GST_VIDEO_INFO_HEIGHT(&self->info), "bit-depth", G_TYPE_INT,
      st->bit_depth, "matrix", G_TYPE_STRING, lh_matrix_name(st->matrix), "range", G_TYPE_STRING,
      lh_range_name(st->range), "count", G_TYPE_UINT64, (guint64)st->count, "mean", G_TYPE_DOUBLE,
      st->mean, "stddev", G_TYPE_DOUBLE, st->stddev, "min", G_TYPE_UINT, (guint)st->min, "max",
      G_TYPE_UINT, (guint)st->max, "median", G_TYPE_UINT, (guint)st->median, "mean-norm",
      G_TYPE_DOUBLE, st->mean_norm, "stddev-norm", G_TYPE_DOUBLE, st->stddev_norm, "min-norm",
      G_TYPE_DOUBLE, st->min_norm, "max-norm", G_TYPE_DOUBLE, st->max_norm, "median-norm",
      G_TYPE_DOUBLE, st->median_norm, "clipped-low-count", G_TYPE_UINT64,
      (guint64)st->clipped_low_count, "clipped-high-count", G_TYPE_UINT64,
      (guint64)st->clipped_high_count, "below-legal-count", G_TYPE_UINT64,
      (guint64)st->below_legal_count, "above-legal-count", G_TYPE_UINT64,
      (guint64)st->above_legal_count, "clipped-low", G_TYPE_DOUBLE, st->clipped_low, "clipped-high",
      G_TYPE_DOUBLE, st->clipped_high, "below-legal", G_TYPE_DOUBLE, st->below_legal, "above-legal",
      G_TYPE_DOUBLE, st->above_legal, NULL);

  /* An empty GstValueArray has no item type: its text form (gst-launch -m,
   * gst_structure_to_string) reads "(int)< >", against the types documented.
   * With no percentiles asked for, the fields are left out instead. */
  if (n > 0) {
    array = double_array(st->percentile_p, n);
    gst_structure_take_value(s, "percentiles", &array);
    array = uint_array(st->percentile_value, n);
    gst_structure_take_value(s, "percentile-values", &array);
    array = double_array(st->percentile_norm, n);
    gst_structure_take_value(s, "percentile-norms", &array);
  }
  if (with_histogram) {
    array = uint64_array(st->histogram, st->n_bins);
    gst_structure_take_value(s, "histogram", &array);
  }
  return gst_message_new_element(GST_OBJECT(self), s);
}

#ifdef HAVE_GST_CUDA
/* Copies source's frame into buffer through host mappings: slow, but only
 * for a frame of the rewrite pool whose rewriting was turned off between
 * gst_lumahist_pooled_output and transform_ip. */
static gboolean gst_lumahist_copy_frame(GstLumahist *self, GstBuffer *source, GstBuffer *buffer)
{
  GstVideoFrame in_vframe, out_vframe;
  gboolean copied;

  if (!gst_video_frame_map(&in_vframe, &self->info, source, GST_MAP_READ))
    return FALSE;
  if (!gst_video_frame_map(&out_vframe, &self->info, buffer, GST_MAP_WRITE)) {
    gst_video_frame_unmap(&in_vframe);
    return FALSE;
  }
  copied = gst_video_frame_copy(&out_vframe, &in_vframe);
  gst_video_frame_unmap(&out_vframe);
  gst_video_frame_unmap(&in_vframe);
  return copied;
}
#endif

/* transform_ip for a buffer whose frame is in source when source is not NULL
 * (a buffer of the rewrite pool, gst_lumahist_pooled_output), else in the
 * buffer itself. */
static GstFlowReturn gst_lumahist_transform_frame(GstLumahist *self, GstBuffer *source,
                                                  GstBuffer *buffer)
{
  GstLumahistWork work;
  GstLumahistMode mode;
  GstLumahistMatrix matrix;
  GstLumahistRange range;
  GstVideoOrientationMethod direction;
  gboolean post_messages, post_histogram, attach_meta, want_message;
  guint interval, window;
  gdouble cut_threshold;
  guint64 frame;
  GstFlowReturn ret;

  /* A buffer without a picture goes on untouched. */
  if (!gst_lumahist_holds_picture(self, buffer))
    return GST_FLOW_OK;

  memset(&work, 0, sizeof work);
  lh_equalize_options_init(&work.equalize_options);
  lh_overlay_options_init(&work.overlay_options);
  GST_OBJECT_LOCK(self);
  work.options = self->options;
  mode = self->mode;
  matrix = self->matrix;
  range = self->range;
  post_messages = self->post_messages;
  interval = self->message_interval;
  post_histogram = self->post_histogram;
  attach_meta = self->attach_meta;
  work.equalize_options.tiles_x = self->tiles_x;
  work.equalize_options.tiles_y = self->tiles_y;
  work.equalize_options.clip_limit = self->clip_limit;
  window = self->temporal_window;
  cut_threshold = self->cut_threshold;
  work.overlay = self->overlay;
  work.overlay_options.rect = self->overlay_rect;
  work.overlay_options.opacity = self->overlay_opacity;
  work.overlay_options.scale = self->overlay_scale;
  work.overlay_options.markers = self->overlay_markers;
  work.overlay_options.clipping = self->overlay_clipping;
  work.overlay_options.clip_warning = self->clip_warning;
  direction = self->overlay_direction;
  GST_OBJECT_UNLOCK(self);
  if (direction == GST_VIDEO_ORIENTATION_AUTO)
    direction =
        self->has_tag_direction_stream ? self->tag_direction_stream : self->tag_direction_global;
  work.overlay_options.orientation = lhio_gst_exif_orientation(direction);
  /* CLAHE's grid is laid on the picture so shown too, as the tool lays it
   * on a video its player turns. */
  work.equalize_options.orientation = work.overlay_options.orientation;

  frame = self->frame_count++;
  want_message = post_messages && frame % interval == 0;
  /* The mode and the overlay may change from another thread after the base
   * class read the passthrough they set and made the buffer writable, or not.
   * A frame it passed on as it came, which others may hold (a tee), is not
   * rewritten: the change takes effect from the next frame. */
  if (!gst_buffer_is_writable(buffer)) {
    mode = GST_LUMAHIST_MODE_ANALYZE;
    work.overlay = FALSE;
  }
  work.analyze = want_message || attach_meta || work.overlay;
  work.equalize = mode != GST_LUMAHIST_MODE_ANALYZE;
#ifdef HAVE_GST_CUDA
  /* A frame of the rewrite pool that is no longer rewritten still needs its
   * picture. */
  if (source && !work.equalize && !work.overlay) {
    if (!gst_lumahist_copy_frame(self, source, buffer))
      goto copy_failed;
    source = NULL;
  }
#endif
  if (!work.equalize)
    self->temporal_missed = TRUE;
  /* An unreported frame without a meta that is not rewritten needs no work. */
  if (!work.analyze && !work.equalize)
    return GST_FLOW_OK;

  work.options.matrix = matrix == GST_LUMAHIST_MATRIX_AUTO     ? self->caps_matrix
                        : matrix == GST_LUMAHIST_MATRIX_BT709  ? LH_MATRIX_BT709
                        : matrix == GST_LUMAHIST_MATRIX_BT2020 ? LH_MATRIX_BT2020
                                                               : LH_MATRIX_BT601;
  work.options.range = range == GST_LUMAHIST_RANGE_AUTO      ? self->caps_range
                       : range == GST_LUMAHIST_RANGE_LIMITED ? LH_RANGE_LIMITED
                                                             : LH_RANGE_FULL;
  work.equalize_options.mode =
      mode == GST_LUMAHIST_MODE_CLAHE ? LH_EQUALIZE_CLAHE : LH_EQUALIZE_GLOBAL;
  work.equalize_options.matrix = work.options.matrix;
  work.equalize_options.range = work.options.range;
  if (work.equalize && !gst_lumahist_temporal(self, window, cut_threshold, &work.equalize_options))
    return GST_FLOW_ERROR;
  work.overlay_options.matrix = work.options.matrix;
  work.overlay_options.range = work.options.range;

  ret = gst_lumahist_process(self, source, buffer, &work);
  if (ret != GST_FLOW_OK)
    return ret;

  if (want_message)
    gst_element_post_message(GST_ELEMENT(self),
                             gst_lumahist_message_new(self, buffer, frame, post_histogram));
  if (attach_meta && gst_buffer_is_writable(buffer))
    gst_buffer_add_lumahist_meta(buffer, self->analysed_on, frame, &self->stats);
  return GST_FLOW_OK;

  /* ERRORS */
#ifdef HAVE_GST_CUDA
copy_failed:
  GST_ELEMENT_ERROR(self, STREAM, FAILED, ("Could not copy a video frame."),
                    ("buffer %" GST_PTR_FORMAT " into %" GST_PTR_FORMAT, source, buffer));
  return GST_FLOW_ERROR;
#endif
}

static GstFlowReturn gst_lumahist_transform_ip(GstBaseTransform *trans, GstBuffer *buffer)
{
  GstLumahist *self = GST_LUMAHIST(trans);
  GstFlowReturn ret;

#ifdef HAVE_GST_CUDA
  /* Taken whatever happens to the frame, so that it never stays for the next. */
  GstBuffer *source = g_steal_pointer(&self->rewrite_source);
  ret = gst_lumahist_transform_frame(self, source, buffer);
  gst_clear_buffer(&source);
#else
  ret = gst_lumahist_transform_frame(self, NULL, buffer);
#endif
  return ret;
}

/* ------------------------------------------------------------------------ */
/* Properties                                                                */

static void gst_lumahist_set_percentiles(GstLumahist *self, const gchar *list)
{
  LhOptions parsed;

  if (!list)
    list = "";
  lh_options_init(&parsed);
  if (lh_options_set_percentiles(&parsed, list) < 0) {
    g_warning("lumahist: ignoring percentiles \"%s\": %s", list, lh_last_error());
    return;
  }
  self->options.n_percentiles = parsed.n_percentiles;
  memcpy(self->options.percentiles, parsed.percentiles, sizeof parsed.percentiles);
  g_free(self->percentiles);
  self->percentiles = g_strdup(list);
}

/* A side of the overlay panel: 0 (the default placement) or 3 .. 65536, the
 * param spec's maximum.  Set while playing, a panel too small to draw would
 * fail every frame after it: refused, the previous side stays. */
static void gst_lumahist_set_overlay_side(gint *side, GParamSpec *pspec, gint value)
{
  if (value > 0 && value < OVERLAY_MIN_SIDE) {
    g_warning("lumahist: ignoring %s %d: 0 (the default placement) or at least %d",
              g_param_spec_get_name(pspec), value, OVERLAY_MIN_SIDE);
    return;
  }
  *side = value;
}

/* Analysis alone passes frames on as they are; equalization and the overlay
 * rewrite them in place (the base class makes them writable first). */
static void gst_lumahist_update_passthrough(GstLumahist *self)
{
  gboolean passthrough;

  g_mutex_lock(&self->passthrough_lock);
  GST_OBJECT_LOCK(self);
  passthrough = self->mode == GST_LUMAHIST_MODE_ANALYZE && !self->overlay;
  GST_OBJECT_UNLOCK(self);
  gst_base_transform_set_passthrough(GST_BASE_TRANSFORM(self), passthrough);
  g_mutex_unlock(&self->passthrough_lock);
}

static void gst_lumahist_set_property(GObject *object, guint prop_id, const GValue *value,
                                      GParamSpec *pspec)
{
  GstLumahist *self = GST_LUMAHIST(object);

  /* Read when the element starts: a change while it runs reads back at once
   * but takes effect at the next start, which is said where a user sees it
   * (before the object lock, which posting a message takes). */
  if ((pspec->flags & GST_PARAM_MUTABLE_READY) && GST_STATE(self) > GST_STATE_READY)
    GST_ELEMENT_WARNING(self, LIBRARY, SETTINGS,
                        ("%s was changed while %s: it takes effect when the element next starts",
                         pspec->name, gst_element_state_get_name(GST_STATE(self))),
                        (NULL));

  GST_OBJECT_LOCK(self);
  switch (prop_id) {
  case PROP_MODE:
    self->mode = g_value_get_enum(value);
    break;
  case PROP_BACKEND:
    self->backend = g_value_get_enum(value);
    break;
  case PROP_CUDA_DEVICE_ID:
    self->cuda_device_id = g_value_get_int(value);
    break;
  case PROP_N_THREADS:
    self->n_threads = g_value_get_int(value);
    break;
  case PROP_PAGE_LOCK:
    self->page_lock = g_value_get_boolean(value);
    break;
  case PROP_MATRIX:
    self->matrix = g_value_get_enum(value);
    break;
  case PROP_RANGE:
    self->range = g_value_get_enum(value);
    break;
  case PROP_PERCENTILES:
    gst_lumahist_set_percentiles(self, g_value_get_string(value));
    break;
  case PROP_PERCENTILE_METHOD:
    self->options.percentile_method = g_value_get_enum(value);
    break;
  case PROP_POST_MESSAGES:
    self->post_messages = g_value_get_boolean(value);
    break;
  case PROP_MESSAGE_INTERVAL:
    self->message_interval = g_value_get_uint(value);
    break;
  case PROP_POST_HISTOGRAM:
    self->post_histogram = g_value_get_boolean(value);
    break;
  case PROP_ATTACH_META:
    self->attach_meta = g_value_get_boolean(value);
    break;
  case PROP_TILES_X:
    self->tiles_x = g_value_get_int(value);
    break;
  case PROP_TILES_Y:
    self->tiles_y = g_value_get_int(value);
    break;
  case PROP_CLIP_LIMIT:
    self->clip_limit = g_value_get_double(value);
    break;
  case PROP_TEMPORAL_WINDOW:
    self->temporal_window = g_value_get_uint(value);
    break;
  case PROP_CUT_THRESHOLD:
    self->cut_threshold = g_value_get_double(value);
    break;
  case PROP_OVERLAY:
    self->overlay = g_value_get_boolean(value);
    break;
  case PROP_OVERLAY_X:
    self->overlay_rect.x = g_value_get_int(value);
    break;
  case PROP_OVERLAY_Y:
    self->overlay_rect.y = g_value_get_int(value);
    break;
  case PROP_OVERLAY_WIDTH:
    gst_lumahist_set_overlay_side(&self->overlay_rect.width, pspec, g_value_get_int(value));
    break;
  case PROP_OVERLAY_HEIGHT:
    gst_lumahist_set_overlay_side(&self->overlay_rect.height, pspec, g_value_get_int(value));
    break;
  case PROP_OVERLAY_OPACITY:
    self->overlay_opacity = g_value_get_double(value);
    break;
  case PROP_OVERLAY_SCALE:
    self->overlay_scale = g_value_get_enum(value);
    break;
  case PROP_OVERLAY_MARKERS:
    self->overlay_markers = g_value_get_boolean(value);
    break;
  case PROP_OVERLAY_CLIPPING:
    self->overlay_clipping = g_value_get_boolean(value);
    break;
  case PROP_CLIP_WARNING:
    self->clip_warning = g_value_get_double(value);
    break;
  case PROP_OVERLAY_DIRECTION:
    if (g_value_get_enum(value) == GST_VIDEO_ORIENTATION_CUSTOM)
      g_warning("lumahist: ignoring overlay-direction custom: the panel needs a turn or a flip");
    else
      self->overlay_direction = g_value_get_enum(value);
    break;
  default:
    G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
    break;
  }
  GST_OBJECT_UNLOCK(self);

  if (prop_id == PROP_MODE || prop_id == PROP_OVERLAY)
    gst_lumahist_update_passthrough(self);
}

static void gst_lumahist_get_property(GObject *object, guint prop_id, GValue *value,
                                      GParamSpec *pspec)
{
  GstLumahist *self = GST_LUMAHIST(object);

  GST_OBJECT_LOCK(self);
  switch (prop_id) {
  case PROP_MODE:
    g_value_set_enum(value, self->mode);
    break;
  case PROP_BACKEND:
    g_value_set_enum(value, self->backend);
    break;
  case PROP_ACTIVE_BACKEND:
    g_value_set_string(value, self->active_backend);
    break;
  case PROP_CUDA_DEVICE_ID:
    g_value_set_int(value, self->cuda_device_id);
    break;
  case PROP_N_THREADS:
    g_value_set_int(value, self->n_threads);
    break;
  case PROP_PAGE_LOCK:
    g_value_set_boolean(value, self->page_lock);
    break;
  case PROP_MATRIX:
    g_value_set_enum(value, self->matrix);
    break;
  case PROP_RANGE:
    g_value_set_enum(value, self->range);
    break;
  case PROP_PERCENTILES:
    g_value_set_string(value, self->percentiles);
    break;
  case PROP_PERCENTILE_METHOD:
    g_value_set_enum(value, self->options.percentile_method);
    break;
  case PROP_POST_MESSAGES:
    g_value_set_boolean(value, self->post_messages);
    break;
  case PROP_MESSAGE_INTERVAL:
    g_value_set_uint(value, self->message_interval);
    break;
  case PROP_POST_HISTOGRAM:
    g_value_set_boolean(value, self->post_histogram);
    break;
  case PROP_ATTACH_META:
    g_value_set_boolean(value, self->attach_meta);
    break;
  case PROP_TILES_X:
    g_value_set_int(value, self->tiles_x);
    break;
  case PROP_TILES_Y:
    g_value_set_int(value, self->tiles_y);
    break;
  case PROP_CLIP_LIMIT:
    g_value_set_double(value, self->clip_limit);
    break;
  case PROP_TEMPORAL_WINDOW:
    g_value_set_uint(value, self->temporal_window);
    break;
  case PROP_CUT_THRESHOLD:
    g_value_set_double(value, self->cut_threshold);
    break;
  case PROP_OVERLAY:
    g_value_set_boolean(value, self->overlay);
    break;
  case PROP_OVERLAY_X:
    g_value_set_int(value, self->overlay_rect.x);
    break;
  case PROP_OVERLAY_Y:
    g_value_set_int(value, self->overlay_rect.y);
    break;
  case PROP_OVERLAY_WIDTH:
    g_value_set_int(value, self->overlay_rect.width);
    break;
  case PROP_OVERLAY_HEIGHT:
    g_value_set_int(value, self->overlay_rect.height);
    break;
  case PROP_OVERLAY_OPACITY:
    g_value_set_double(value, self->overlay_opacity);
    break;
  case PROP_OVERLAY_SCALE:
    g_value_set_enum(value, self->overlay_scale);
    break;
  case PROP_OVERLAY_MARKERS:
    g_value_set_boolean(value, self->overlay_markers);
    break;
  case PROP_OVERLAY_CLIPPING:
    g_value_set_boolean(value, self->overlay_clipping);
    break;
  case PROP_CLIP_WARNING:
    g_value_set_double(value, self->clip_warning);
    break;
  case PROP_OVERLAY_DIRECTION:
    g_value_set_enum(value, self->overlay_direction);
    break;
  default:
    G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
    break;
  }
  GST_OBJECT_UNLOCK(self);
}

static void gst_lumahist_finalize(GObject *object)
{
  GstLumahist *self = GST_LUMAHIST(object);

  gst_lumahist_close_library(self);
  gst_lumahist_pins_free(self->pins);
  lh_stats_clear(&self->stats);
#ifdef HAVE_GST_CUDA
  gst_clear_object(&self->cuda_ctx);
#endif
  g_free(self->percentiles);
  g_free(self->stream_id);
  g_mutex_clear(&self->passthrough_lock);
  G_OBJECT_CLASS(parent_class)->finalize(object);
}

static void gst_lumahist_class_init(GstLumahistClass *klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS(klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS(klass);
  GstBaseTransformClass *trans_class = GST_BASE_TRANSFORM_CLASS(klass);
  const GParamFlags rw = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING;
  const GParamFlags rw_ready = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY;

  GST_DEBUG_CATEGORY_INIT(gst_lumahist_debug, "lumahist", 0, "lumahist element");

  gobject_class->set_property = gst_lumahist_set_property;
  gobject_class->get_property = gst_lumahist_get_property;
  gobject_class->finalize = gst_lumahist_finalize;

  properties[PROP_MODE] = g_param_spec_enum(
      "mode", "Mode", "Measure only, or also equalize the luma of the frames in place",
      GST_TYPE_LUMAHIST_MODE, DEFAULT_MODE, rw);
  properties[PROP_BACKEND] =
      g_param_spec_enum("backend", "Backend", "Where to compute; applies when the element starts",
                        GST_TYPE_LUMAHIST_BACKEND, DEFAULT_BACKEND, rw_ready);
  properties[PROP_ACTIVE_BACKEND] = g_param_spec_string(
      "active-backend", "Active backend",
      "Where the last frame went: \"cpu\" or \"cuda\" once started (backend=auto with CUDA "
      "chooses per frame), \"none\" before",
      "none", G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  properties[PROP_CUDA_DEVICE_ID] = g_param_spec_int(
      "cuda-device-id", "CUDA device ID",
      "The CUDA device to use when no CUDA context is shared with the pipeline (-1: any)", -1,
      G_MAXINT, DEFAULT_CUDA_DEVICE_ID, rw_ready);
  properties[PROP_N_THREADS] = g_param_spec_int(
      "n-threads", "Threads",
      "Threads the CPU backend splits each frame across (0: one per core); applies when the "
      "element starts",
      0, 256, DEFAULT_N_THREADS, rw_ready);
  properties[PROP_PAGE_LOCK] = g_param_spec_boolean(
      "page-lock", "Page-lock",
      "With the CUDA backend, offer upstream a pool of page-locked system memory and page-lock "
      "buffers that come again, so that frames reach the GPU in one copy (such frames always go "
      "to the GPU); false leaves system memory as it comes, and backend=auto then sends each "
      "frame to the CPU or the GPU, whichever costs less; applies when the element starts",
      DEFAULT_PAGE_LOCK, rw_ready);
  properties[PROP_MATRIX] = g_param_spec_enum(
      "matrix", "Matrix", "R'G'B' to Y' weights for RGB input, reported for every input",
      GST_TYPE_LUMAHIST_MATRIX, DEFAULT_MATRIX, rw);
  properties[PROP_RANGE] =
      g_param_spec_enum("range", "Range", "How code values are read: full or limited range",
                        GST_TYPE_LUMAHIST_RANGE, DEFAULT_RANGE, rw);
  properties[PROP_PERCENTILES] = g_param_spec_string(
      "percentiles", "Percentiles",
      "Comma-separated percentiles to report, each in [0, 100], at most 64 (the median is "
      "always reported; empty: no others, and no percentile fields in the messages)",
      DEFAULT_PERCENTILES, rw);
  properties[PROP_PERCENTILE_METHOD] =
      g_param_spec_enum("percentile-method", "Percentile method",
                        "How percentiles are found (all methods give the same values)",
                        GST_TYPE_LUMAHIST_PERCENTILE_METHOD, DEFAULT_PERCENTILE_METHOD, rw);
  properties[PROP_POST_MESSAGES] = g_param_spec_boolean(
      "post-messages", "Post messages", "Post a \"lumahist\" element message per analysed frame",
      DEFAULT_POST_MESSAGES, rw);
  properties[PROP_MESSAGE_INTERVAL] = g_param_spec_uint(
      "message-interval", "Message interval",
      "Post a message for the first of every N frames (in analyze mode without overlay, frames "
      "that get neither a message nor a meta are not analysed)",
      1, G_MAXUINT, DEFAULT_MESSAGE_INTERVAL, rw);
  properties[PROP_POST_HISTOGRAM] = g_param_spec_boolean(
      "post-histogram", "Post histogram", "Put the histogram in the messages (2^bit-depth values)",
      DEFAULT_POST_HISTOGRAM, rw);
  properties[PROP_ATTACH_META] = g_param_spec_boolean(
      "attach-meta", "Attach meta",
      "Attach a GstLumahistMeta with the statistics to every frame (analyses every frame)",
      DEFAULT_ATTACH_META, rw);
  properties[PROP_TILES_X] =
      g_param_spec_int("tiles-x", "Tiles across", "CLAHE: columns of the tile grid", 1,
                       LH_CLAHE_MAX_TILES, DEFAULT_TILES, rw);
  properties[PROP_TILES_Y] =
      g_param_spec_int("tiles-y", "Tiles down", "CLAHE: rows of the tile grid", 1,
                       LH_CLAHE_MAX_TILES, DEFAULT_TILES, rw);
  properties[PROP_CLIP_LIMIT] = g_param_spec_double(
      "clip-limit", "Clip limit", "CLAHE: OpenCV createCLAHE's clipLimit (0: no clipping)", 0.0,
      G_MAXDOUBLE, DEFAULT_CLIP_LIMIT, rw);
  properties[PROP_TEMPORAL_WINDOW] = g_param_spec_uint(
      "temporal-window", "Temporal window",
      "Equalize with the mean LUT of the last N frames, so that video does not flicker (1: "
      "each frame on its own); the window takes N x tiles x 2^bit-depth x 2 bytes",
      1, LH_TEMPORAL_MAX_WINDOW, DEFAULT_TEMPORAL_WINDOW, rw);
  properties[PROP_CUT_THRESHOLD] = g_param_spec_double(
      "cut-threshold", "Cut threshold",
      "Histogram distance above which a frame is a scene cut and restarts the temporal window "
      "(1: never)",
      0.0, 1.0, DEFAULT_CUT_THRESHOLD, rw);
  properties[PROP_OVERLAY] = g_param_spec_boolean(
      "overlay", "Overlay", "Draw the luma histogram on the frames", DEFAULT_OVERLAY, rw);
  properties[PROP_OVERLAY_X] = g_param_spec_int(
      "overlay-x", "Overlay x",
      "Left edge of the histogram panel in pixels, once overlay-width and overlay-height are "
      "both set (until then the default placement)",
      0, G_MAXINT, 0, rw);
  properties[PROP_OVERLAY_Y] = g_param_spec_int(
      "overlay-y", "Overlay y",
      "Top edge of the histogram panel in pixels, once overlay-width and overlay-height are both "
      "set (until then the default placement)",
      0, G_MAXINT, 0, rw);
  properties[PROP_OVERLAY_WIDTH] = g_param_spec_int(
      "overlay-width", "Overlay width",
      "Width of the histogram panel in pixels, 3 .. 65536 (0: the default placement, "
      "bottom left, a third of the width)",
      0, OVERLAY_MAX_SIDE, 0, rw);
  properties[PROP_OVERLAY_HEIGHT] = g_param_spec_int(
      "overlay-height", "Overlay height",
      "Height of the histogram panel in pixels, 3 .. 65536 (0: the default placement, a "
      "quarter of the height)",
      0, OVERLAY_MAX_SIDE, 0, rw);
  properties[PROP_OVERLAY_OPACITY] =
      g_param_spec_double("overlay-opacity", "Overlay opacity",
                          "Opacity of the bars and markers (the panel gets 5/8 of it)", 0.0, 1.0,
                          DEFAULT_OVERLAY_OPACITY, rw);
  properties[PROP_OVERLAY_SCALE] = g_param_spec_enum(
      "overlay-scale", "Overlay scale", "Bar heights: linear or logarithmic in the counts",
      GST_TYPE_LUMAHIST_OVERLAY_SCALE, DEFAULT_OVERLAY_SCALE, rw);
  properties[PROP_OVERLAY_MARKERS] = g_param_spec_boolean(
      "overlay-markers", "Overlay markers", "Lines at the median and at each percentile",
      DEFAULT_OVERLAY_MARKERS, rw);
  properties[PROP_OVERLAY_CLIPPING] = g_param_spec_boolean(
      "overlay-clipping", "Overlay clipping",
      "Bands at the ends when pixels clip, and shaded illegal zones in limited range",
      DEFAULT_OVERLAY_CLIPPING, rw);
  properties[PROP_CLIP_WARNING] = g_param_spec_double(
      "clip-warning", "Clip warning",
      "Fraction of pixels clipped at one end that lights the overlay's band there", 0.0, 1.0,
      DEFAULT_CLIP_WARNING, rw);
  properties[PROP_OVERLAY_DIRECTION] = g_param_spec_enum(
      "overlay-direction", "Overlay direction",
      "How the frames will be shown, as videoflip's video-direction turns them: the panel is "
      "placed and drawn upright in the picture so turned, and CLAHE's grid laid on it (auto: "
      "by the stream's image-orientation tag, for a videoflip video-direction=auto after this "
      "element)",
      GST_TYPE_VIDEO_ORIENTATION_METHOD, DEFAULT_OVERLAY_DIRECTION, rw);
  g_object_class_install_properties(gobject_class, N_PROPERTIES, properties);

  gst_element_class_set_static_metadata(
      element_class, "Luminance histogram", "Filter/Analyzer/Video",
      "Measures the luma histogram, statistics and percentiles of video frames on an NVIDIA GPU "
      "or the CPU and posts them as messages and buffer metas",
      "lumahist developers");
  gst_element_class_add_static_pad_template(element_class, &sink_template);
  gst_element_class_add_static_pad_template(element_class, &src_template);
  element_class->set_context = GST_DEBUG_FUNCPTR(gst_lumahist_set_context);

  trans_class->passthrough_on_same_caps = FALSE;
  trans_class->transform_ip_on_passthrough = TRUE;
  trans_class->start = GST_DEBUG_FUNCPTR(gst_lumahist_start);
  trans_class->stop = GST_DEBUG_FUNCPTR(gst_lumahist_stop);
  trans_class->set_caps = GST_DEBUG_FUNCPTR(gst_lumahist_set_caps);
  trans_class->query = GST_DEBUG_FUNCPTR(gst_lumahist_query);
  trans_class->propose_allocation = GST_DEBUG_FUNCPTR(gst_lumahist_propose_allocation);
  trans_class->sink_event = GST_DEBUG_FUNCPTR(gst_lumahist_sink_event);
  trans_class->prepare_output_buffer = GST_DEBUG_FUNCPTR(gst_lumahist_prepare_output_buffer);
  trans_class->transform_ip = GST_DEBUG_FUNCPTR(gst_lumahist_transform_ip);

  gst_type_mark_as_plugin_api(GST_TYPE_LUMAHIST_MODE, 0);
  gst_type_mark_as_plugin_api(GST_TYPE_LUMAHIST_BACKEND, 0);
  gst_type_mark_as_plugin_api(GST_TYPE_LUMAHIST_MATRIX, 0);
  gst_type_mark_as_plugin_api(GST_TYPE_LUMAHIST_RANGE, 0);
  gst_type_mark_as_plugin_api(GST_TYPE_LUMAHIST_PERCENTILE_METHOD, 0);
  gst_type_mark_as_plugin_api(GST_TYPE_LUMAHIST_OVERLAY_SCALE, 0);

  /* Registered here so that applications find the meta's API by name as soon
   * as the element exists. */
  gst_lumahist_meta_get_info();
#ifdef HAVE_GST_CUDA
  gst_cuda_memory_init_once();
#endif
}

static void gst_lumahist_init(GstLumahist *self)
{
  GstBaseTransform *trans = GST_BASE_TRANSFORM(self);

  self->pins = gst_lumahist_pins_new(gst_lumahist_pins_enter, gst_lumahist_pins_leave, self);
  g_mutex_init(&self->passthrough_lock);
  self->mode = DEFAULT_MODE;
  self->backend = DEFAULT_BACKEND;
  self->cuda_device_id = DEFAULT_CUDA_DEVICE_ID;
  self->n_threads = DEFAULT_N_THREADS;
  self->page_lock = DEFAULT_PAGE_LOCK;
  self->matrix = DEFAULT_MATRIX;
  self->range = DEFAULT_RANGE;
  self->post_messages = DEFAULT_POST_MESSAGES;
  self->message_interval = DEFAULT_MESSAGE_INTERVAL;
  self->post_histogram = DEFAULT_POST_HISTOGRAM;
  self->attach_meta = DEFAULT_ATTACH_META;
  self->tiles_x = DEFAULT_TILES;
  self->tiles_y = DEFAULT_TILES;
  self->clip_limit = DEFAULT_CLIP_LIMIT;
  self->temporal_window = DEFAULT_TEMPORAL_WINDOW;
  self->cut_threshold = DEFAULT_CUT_THRESHOLD;
  self->overlay = DEFAULT_OVERLAY;
  self->overlay_opacity = DEFAULT_OVERLAY_OPACITY;
  self->overlay_scale = DEFAULT_OVERLAY_SCALE;
  self->overlay_markers = DEFAULT_OVERLAY_MARKERS;
  self->overlay_clipping = DEFAULT_OVERLAY_CLIPPING;
  self->clip_warning = DEFAULT_CLIP_WARNING;
  self->overlay_direction = DEFAULT_OVERLAY_DIRECTION;
  self->active_backend = "none";
  lh_options_init(&self->options);
  self->options.percentile_method = DEFAULT_PERCENTILE_METHOD;
  gst_lumahist_set_percentiles(self, DEFAULT_PERCENTILES);
  lh_stats_init(&self->stats);
  gst_video_info_init(&self->info);

  gst_base_transform_set_in_place(trans, TRUE);
  gst_lumahist_update_passthrough(self);
}
