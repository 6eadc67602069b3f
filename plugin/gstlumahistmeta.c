/* gstlumahistmeta.c: the GstLumahistMeta buffer meta: registration, life
 * cycle and copying with its buffer. */
#include <stdlib.h>
#include <string.h>

#include <gst/video/video.h>

#include "gstlumahist.h"

GType gst_lumahist_meta_api_get_type(void)
{
  static GType type = 0;
  /* The values describe these pixels at this size in this colour space: an
   * element that changes any of them drops the meta. */
  static const gchar *tags[] = {GST_META_TAG_VIDEO_STR, GST_META_TAG_VIDEO_SIZE_STR,
                                GST_META_TAG_VIDEO_COLORSPACE_STR, NULL};

  if (g_once_init_enter(&type)) {
    GType api = gst_meta_api_type_register(GST_LUMAHIST_META_API_NAME, tags);
    g_once_init_leave(&type, api);
  }
  return type;
}

static gboolean gst_lumahist_meta_init(GstMeta *meta, gpointer params, GstBuffer *buffer)
{
  GstLumahistMeta *lmeta = (GstLumahistMeta *)meta;

  lmeta->backend = LH_BACKEND_CPU;
  lmeta->frame = 0;
  lh_stats_init(&lmeta->stats);
  return TRUE;
}

static void gst_lumahist_meta_free(GstMeta *meta, GstBuffer *buffer)
{
  lh_stats_clear(&((GstLumahistMeta *)meta)->stats);
}

static gboolean gst_lumahist_meta_transform(GstBuffer *dest, GstMeta *meta, GstBuffer *buffer,
                                            GQuark type, gpointer data)
{
  GstLumahistMeta *src = (GstLumahistMeta *)meta;
  GstMetaTransformCopy *copy = data;
  LhStats stats;

  /* Only a copy of the whole buffer keeps the same pixels. */
  if (!GST_META_TRANSFORM_IS_COPY(type) || copy->region)
    return FALSE;

  stats = src->stats;
  stats.histogram = NULL;
  if (src->stats.histogram) {
    /* malloc, not g_malloc: lh_stats_clear() releases it with free() */
    stats.histogram = malloc(src->stats.n_bins * sizeof *stats.histogram);
    if (!stats.histogram)
      return FALSE;
    memcpy(stats.histogram, src->stats.histogram, src->stats.n_bins * sizeof *stats.histogram);
  }
  gst_buffer_add_lumahist_meta(dest, src->backend, src->frame, &stats);
  return TRUE;
}

const GstMetaInfo *gst_lumahist_meta_get_info(void)
{
  static const GstMetaInfo *info = NULL;

  if (g_once_init_enter((GstMetaInfo **)&info)) {
    const GstMetaInfo *registered = gst_meta_register(
        gst_lumahist_meta_api_get_type(), "GstLumahistMeta", sizeof(GstLumahistMeta),
        gst_lumahist_meta_init, gst_lumahist_meta_free, gst_lumahist_meta_transform);
    g_once_init_leave((GstMetaInfo **)&info, (GstMetaInfo *)registered);
  }
  return info;
}

GstLumahistMeta *gst_buffer_add_lumahist_meta(GstBuffer *buffer, LhBackend backend, guint64 frame,
                                              LhStats *stats)
{
  GstLumahistMeta *meta;

  g_return_val_if_fail(gst_buffer_is_writable(buffer), NULL);

  meta = (GstLumahistMeta *)gst_buffer_add_meta(buffer, gst_lumahist_meta_get_info(), NULL);
  meta->backend = backend;
  meta->frame = frame;
  meta->stats = *stats;
  lh_stats_init(stats);
  return meta;
}
