/* gstlumahisthostpool.c: page-locked frames for upstream.
 *
 * A frame in pageable memory reaches the GPU through two copies, the first
 * into the library's pinned staging buffer (about 2.4 ms for a 4K frame,
 * more than the analysis).  GstLumahistPins registers memories that come back
 * again, but registering costs a millisecond a memory and misses sources that
 * allocate anew.  A decoder or source that takes this pool writes every frame
 * into page-locked memory to begin with, and the library copies it to the
 * device in one step.
 *
 * The allocator has its own library context, made in the pipeline's CUDA
 * context, since its memories are allocated and freed on upstream's threads
 * and may outlive the element's context (a pool lives as long as its last
 * buffer). */
#include "gstlumahisthostpool.h"

#include <lumahist.h>

#ifdef HAVE_GST_CUDA
#include <gst/cuda/gstcudacontext.h>
#include <gst/cuda/gstcudautils.h>
#endif

GST_DEBUG_CATEGORY_STATIC(gst_lumahist_host_pool_debug);
#define GST_CAT_DEFAULT gst_lumahist_host_pool_debug

/* ------------------------------------------------------------------------ */
/* The allocator                                                             */

#define GST_TYPE_LUMAHIST_HOST_ALLOCATOR (gst_lumahist_host_allocator_get_type())
G_DECLARE_FINAL_TYPE(GstLumahistHostAllocator, gst_lumahist_host_allocator, GST,
                     LUMAHIST_HOST_ALLOCATOR, GstAllocator)

struct _GstLumahistHostAllocator {
  GstAllocator parent;
  gpointer cuda_context; /* GstCudaContext, or NULL */
  LhContext *lh;
};

typedef struct {
  GstMemory memory;
  gpointer base; /* from lh_host_alloc; a share points into its parent's */
} HostMemory;

G_DEFINE_TYPE(GstLumahistHostAllocator, gst_lumahist_host_allocator, GST_TYPE_ALLOCATOR)

static gboolean enter(GstLumahistHostAllocator *self)
{
#ifdef HAVE_GST_CUDA
  if (self->cuda_context && !gst_cuda_context_push(self->cuda_context))
    return FALSE;
#else
  (void)self;
#endif
  return TRUE;
}

static void leave(GstLumahistHostAllocator *self)
{
#ifdef HAVE_GST_CUDA
  if (self->cuda_context)
    gst_cuda_context_pop(NULL);
#else
  (void)self;
#endif
}

static GstMemory *host_alloc(GstAllocator *allocator, gsize size, GstAllocationParams *params)
{
  GstLumahistHostAllocator *self = GST_LUMAHIST_HOST_ALLOCATOR(allocator);
  /* lh_host_alloc gives whole pages, so aligning the offset after the
   * prefix aligns the data. */
  gsize offset = (params->prefix + params->align) & ~params->align;
  gsize maxsize = offset + size + params->padding;
  gpointer base = NULL;
  if (!enter(self)) {
    GST_WARNING_OBJECT(self, "cannot make the CUDA context current");
    return NULL;
  }
  int status = lh_host_alloc(self->lh, maxsize, &base);
  leave(self);
  if (status < 0) {
    GST_WARNING_OBJECT(self, "no page-locked memory of %" G_GSIZE_FORMAT " bytes: %s", maxsize,
                       lh_last_error());
    return NULL;
  }
  GST_LOG_OBJECT(self, "%" G_GSIZE_FORMAT " bytes page-locked at %p", maxsize, base);
  HostMemory *memory = g_new0(HostMemory, 1);
  gst_memory_init(&memory->memory, params->flags, allocator, NULL, maxsize, params->align, offset,
                  size);
  memory->base = base;
  if (offset && (params->flags & GST_MEMORY_FLAG_ZERO_PREFIXED))
    memset(base, 0, offset);
  if (params->padding && (params->flags & GST_MEMORY_FLAG_ZERO_PADDED))
    memset((guint8 *)base + offset + size, 0, params->padding);
  return &memory->memory;
}

static void host_free(GstAllocator *allocator, GstMemory *gst_memory)
{
  GstLumahistHostAllocator *self = GST_LUMAHIST_HOST_ALLOCATOR(allocator);
  HostMemory *memory = (HostMemory *)gst_memory;
  if (!gst_memory->parent) {
    gboolean entered = enter(self);
    lh_host_free(memory->base);
    if (entered)
      leave(self);
  }
  g_free(memory);
}

static gpointer host_map(GstMemory *gst_memory, gsize maxsize, GstMapFlags flags)
{
  (void)maxsize;
  (void)flags;
  return ((HostMemory *)gst_memory)->base;
}

static void host_unmap(GstMemory *gst_memory)
{
  (void)gst_memory;
}

static GstMemory *host_share(GstMemory *gst_memory, gssize offset, gssize size)
{
  HostMemory *memory = (HostMemory *)gst_memory;
  GstMemory *parent = gst_memory->parent ? gst_memory->parent : gst_memory;
  if (size == -1)
    size = (gssize)gst_memory->size - offset;
  HostMemory *share = g_new0(HostMemory, 1);
  gst_memory_init(&share->memory,
                  GST_MINI_OBJECT_FLAGS(parent) | GST_MINI_OBJECT_FLAG_LOCK_READONLY,
                  gst_memory->allocator, parent, gst_memory->maxsize, gst_memory->align,
                  gst_memory->offset + (gsize)offset, (gsize)size);
  share->base = memory->base;
  return &share->memory;
}

static void gst_lumahist_host_allocator_finalize(GObject *object)
{
  GstLumahistHostAllocator *self = GST_LUMAHIST_HOST_ALLOCATOR(object);
  if (self->lh) {
    gboolean entered = enter(self);
    lh_context_free(self->lh);
    if (entered)
      leave(self);
  }
  if (self->cuda_context)
    gst_object_unref(self->cuda_context);
  G_OBJECT_CLASS(gst_lumahist_host_allocator_parent_class)->finalize(object);
}

static void gst_lumahist_host_allocator_class_init(GstLumahistHostAllocatorClass *klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS(klass);
  GstAllocatorClass *allocator_class = GST_ALLOCATOR_CLASS(klass);

  gobject_class->finalize = gst_lumahist_host_allocator_finalize;
  allocator_class->alloc = host_alloc;
  allocator_class->free = host_free;
}

static void gst_lumahist_host_allocator_init(GstLumahistHostAllocator *self)
{
  GstAllocator *allocator = GST_ALLOCATOR(self);
  allocator->mem_type = GST_LUMAHIST_HOST_MEMORY_TYPE;
  allocator->mem_map = host_map;
  allocator->mem_unmap = host_unmap;
  allocator->mem_share = host_share;
  /* mem_copy and mem_is_span: GstAllocator's fallbacks (copy into system
   * memory; never spans). */
}

/* ------------------------------------------------------------------------ */
/* The pool                                                                  */

GstBufferPool *gst_lumahist_host_pool_new(GstCaps *caps, guint min_buffers, gpointer cuda_context)
{
  GST_DEBUG_CATEGORY_INIT(gst_lumahist_host_pool_debug, "lumahisthostpool", 0,
                          "lumahist: page-locked buffer pool offered upstream");
  GstVideoInfo info;
  if (!gst_video_info_from_caps(&info, caps))
    return NULL;

  GstLumahistHostAllocator *allocator = g_object_new(GST_TYPE_LUMAHIST_HOST_ALLOCATOR, NULL);
  gst_object_ref_sink(allocator);
#ifdef HAVE_GST_CUDA
  if (cuda_context)
    allocator->cuda_context = gst_object_ref(cuda_context);
#else
  (void)cuda_context;
#endif
  int status = LH_ERROR_NO_DEVICE;
  if (enter(allocator)) {
    status = lh_context_new(LH_BACKEND_CUDA, &allocator->lh);
    leave(allocator);
  }
  if (status < 0) {
    GST_INFO("no page-locked pool: %s", lh_last_error());
    gst_object_unref(allocator);
    return NULL;
  }

  GstBufferPool *pool = gst_video_buffer_pool_new();
  GstStructure *config = gst_buffer_pool_get_config(pool);
  gst_buffer_pool_config_set_params(config, caps, (guint)GST_VIDEO_INFO_SIZE(&info), min_buffers,
                                    0);
  gst_buffer_pool_config_set_allocator(config, GST_ALLOCATOR(allocator), NULL);
  gst_buffer_pool_config_add_option(config, GST_BUFFER_POOL_OPTION_VIDEO_META);
  gst_object_unref(allocator); /* the config holds it, then the pool */
  if (!gst_buffer_pool_set_config(pool, config)) {
    GST_WARNING("the page-locked pool refused its configuration");
    gst_object_unref(pool);
    return NULL;
  }
  return pool;
}
