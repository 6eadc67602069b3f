/* gstlumahisthostpool.h: a video buffer pool of page-locked system memory
 * (lh_host_alloc), which the element offers upstream in the ALLOCATION query
 * when it analyses system-memory frames on the CUDA backend, so that
 * decoders and sources write their frames where the GPU copies them from
 * directly.  Not installed. */
#ifndef GST_LUMAHIST_HOST_POOL_H
#define GST_LUMAHIST_HOST_POOL_H

#include <gst/gst.h>
#include <gst/video/video.h>

G_BEGIN_DECLS

/* The memory type of the pool's memories (gst_memory_is_type). */
#define GST_LUMAHIST_HOST_MEMORY_TYPE "LumahistPageLocked"

/* A pool for frames of caps (system memory), min_buffers allocated up front,
 * with video meta, or NULL when no page-locked memory can be had here (no
 * CUDA backend or device: the reason is logged).  cuda_context, a
 * GstCudaContext or NULL, is made current around the allocations and frees;
 * the pool holds it. */
GstBufferPool *gst_lumahist_host_pool_new(GstCaps *caps, guint min_buffers, gpointer cuda_context);

G_END_DECLS

#endif /* GST_LUMAHIST_HOST_POOL_H */
