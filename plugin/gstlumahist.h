/* gstlumahist.h: the lumahist element (a GstBaseTransform) and the plugin's
 * internal entry points for its buffer meta.  Not installed. */
#ifndef GST_LUMAHIST_H
#define GST_LUMAHIST_H

#include <gst/base/gstbasetransform.h>
#include <gst/gst.h>
#include <gst/video/video.h>
#include <lumahist.h>

#ifdef HAVE_GST_CUDA
#include <gst/cuda/gstcudacontext.h>
#endif

#include "gstlumahistmeta.h"
#include "gstlumahistpins.h"

G_BEGIN_DECLS

/* What the element does to the frames it analyses. */
typedef enum {
  GST_LUMAHIST_MODE_ANALYZE,  /* measure only: passthrough */
  GST_LUMAHIST_MODE_EQUALIZE, /* global histogram equalization, in place */
  GST_LUMAHIST_MODE_CLAHE,    /* contrast-limited adaptive equalization, in place */
} GstLumahistMode;

typedef enum {
  GST_LUMAHIST_BACKEND_AUTO,
  GST_LUMAHIST_BACKEND_CPU,
  GST_LUMAHIST_BACKEND_CUDA,
} GstLumahistBackend;

/* AUTO takes the value from the caps' colorimetry. */
typedef enum {
  GST_LUMAHIST_MATRIX_AUTO,
  GST_LUMAHIST_MATRIX_BT601,
  GST_LUMAHIST_MATRIX_BT709,
  GST_LUMAHIST_MATRIX_BT2020,
} GstLumahistMatrix;

typedef enum {
  GST_LUMAHIST_RANGE_AUTO,
  GST_LUMAHIST_RANGE_FULL,
  GST_LUMAHIST_RANGE_LIMITED,
} GstLumahistRange;

#define GST_TYPE_LUMAHIST (gst_lumahist_get_type())
G_DECLARE_FINAL_TYPE(GstLumahist, gst_lumahist, GST, LUMAHIST, GstBaseTransform)

struct _GstLumahist {
  GstBaseTransform parent;

  /* Properties, read and written under the object lock. */
  GstLumahistMode mode;
  GstLumahistBackend backend;
  gint cuda_device_id;
  gint n_threads;
  gboolean page_lock;
  GstLumahistMatrix matrix;
  GstLumahistRange range;
  gchar *percentiles;
  gboolean post_messages;
  guint message_interval;
  gboolean post_histogram;
  gboolean attach_meta;
  const gchar *active_backend; /* a static string: "none", "cpu" or "cuda" */
  /* percentiles, parsed; the other LhOptions fields are set per frame */
  LhOptions options;
  gint tiles_x;
  gint tiles_y;
  gdouble clip_limit;
  guint temporal_window;
  gdouble cut_threshold;
  gboolean overlay;
  LhRect overlay_rect;
  gdouble overlay_opacity;
  LhOverlayScale overlay_scale;
  gboolean overlay_markers;
  gboolean overlay_clipping;
  gdouble clip_warning;
  GstVideoOrientationMethod overlay_direction;

  /* Streaming state, touched only by the streaming and state-change threads. */
  LhContext *lh;
  GstLumahistBackend started_backend; /* the backend property when the element started */
  gboolean pins_on;                   /* the page-lock property when it started */
  gboolean warned_fallback;
  GstVideoInfo info;
  LhFormat lh_format;
  gboolean cuda_caps; /* the negotiated caps carry memory:CUDAMemory */
  LhMatrix caps_matrix;
  LhRange caps_range;
  guint64 frame_count;
  /* The stream's image-orientation tags, for overlay-direction=auto: a stream
   * tag wins over a global one, and a new stream forgets both (as videoflip
   * video-direction=auto takes them). */
  GstVideoOrientationMethod tag_direction_global;
  GstVideoOrientationMethod tag_direction_stream;
  gboolean has_tag_direction_stream;
  gchar *stream_id;
  LhStats stats;
  LhBackend analysed_on; /* the backend that made stats (auto chooses per frame) */
  /* LUT smoothing across frames, made for these two settings */
  LhTemporal *temporal;
  guint temporal_window_made;
  gdouble cut_threshold_made;
  /* A frame went by without equalization since the window's last frame. */
  gboolean temporal_missed;
  /* system memory of upstream's pool, page-locked for the CUDA backend */
  GstLumahistPins *pins;
  /* Held from reading mode and overlay to setting passthrough from them, so
   * that of two threads setting them the last one's passthrough stays
   * (the object lock cannot be: gst_base_transform_set_passthrough takes it). */
  GMutex passthrough_lock;

#ifdef HAVE_GST_CUDA
  /* The context shared with the pipeline (answers context queries), and the
   * one the library context was created in, which must be current around
   * every library call (device memory belongs to one CUDA context). */
  GstCudaContext *cuda_ctx;
  GstCudaContext *lh_cuda_ctx;
  /* Equalization of CUDA frames that upstream still holds (not writable):
   * written from the input (rewrite_source) into a frame of this pool,
   * made once per caps, rather than into a copy that GstBaseTransform would
   * allocate and fill for every frame. */
  GstBufferPool *rewrite_pool;
  GstBuffer *rewrite_source;
#endif
};

GST_ELEMENT_REGISTER_DECLARE(lumahist);

/* The buffer meta (gstlumahistmeta.c). */
GType gst_lumahist_meta_api_get_type(void);
const GstMetaInfo *gst_lumahist_meta_get_info(void);

/* Attaches a meta holding *stats to a writable buffer; the meta takes the
 * histogram and *stats is left empty (lh_stats_init). */
GstLumahistMeta *gst_buffer_add_lumahist_meta(GstBuffer *buffer, LhBackend backend, guint64 frame,
                                              LhStats *stats);

G_END_DECLS

#endif /* GST_LUMAHIST_H */
