/* gstlumahistmeta.h: the buffer meta that the lumahist element attaches to each
 * analysed frame, and how an application finds it.
 *
 * The meta type is registered by the plugin when it loads, so an application
 * does not link to the plugin: it includes this header and lumahist.h and calls
 * gst_buffer_get_lumahist_meta(), which looks the API type up by name.
 *
 *   GstLumahistMeta *meta = gst_buffer_get_lumahist_meta (buffer);
 *   if (meta)
 *     g_print ("mean %.2f, median %u\n", meta->stats.mean, meta->stats.median);
 *
 * The meta is valid as long as the buffer is; it must not be modified.
 */
#ifndef GST_LUMAHIST_META_H
#define GST_LUMAHIST_META_H

#include <gst/gst.h>
#include <lumahist.h>

G_BEGIN_DECLS

/* The name under which the plugin registers the meta's API type. */
#define GST_LUMAHIST_META_API_NAME "GstLumahistMetaAPI"

/**
 * GstLumahistMeta:
 * @meta: the parent #GstMeta
 * @backend: the backend that computed the values (%LH_BACKEND_CPU or %LH_BACKEND_CUDA)
 * @frame: index of the frame since the element started or was last flushed
 * @stats: the statistics, percentiles and histogram of the frame, exactly as
 *   lh_analyze() returned them (see lumahist.h); @stats.histogram holds
 *   @stats.n_bins counts and is owned by the meta
 *
 * The analysis of one video frame.
 */
typedef struct {
  GstMeta meta;
  LhBackend backend;
  guint64 frame;
  LhStats stats;
} GstLumahistMeta;

/* The meta of a buffer, or NULL if it has none (or the plugin is not loaded). */
static inline GstLumahistMeta *gst_buffer_get_lumahist_meta(GstBuffer *buffer)
{
  GType api = g_type_from_name(GST_LUMAHIST_META_API_NAME);
  return api ? (GstLumahistMeta *)gst_buffer_get_meta(buffer, api) : NULL;
}

G_END_DECLS

#endif /* GST_LUMAHIST_META_H */
