/* gstlumahistpins.c: page-locked pool memory for the CUDA backend.
 *
 * A frame in pageable memory reaches the GPU through two copies: into the
 * library's pinned staging buffer on the CPU, then to the device.  For a 4K
 * frame the first one costs more than everything else the element does.
 * Sources in a pipeline mostly draw their frames from a buffer pool that
 * recycles a handful of memories, so the element page-locks each of them
 * once (cudaHostRegister through lh_host_register) and the library then
 * copies frames straight from them.  A weak reference on each memory unpins
 * it just before it is freed, since freeing pinned memory behind the
 * driver's back leaves the pages locked. */
#include "gstlumahistpins.h"

GST_DEBUG_CATEGORY_STATIC(gst_lumahist_pins_debug);
#define GST_CAT_DEFAULT gst_lumahist_pins_debug

/* A pool holds a few buffers; a source that keeps making new memory in its
 * pool would otherwise pin without end. */
#define MAX_PINNED 64

struct _GstLumahistPins {
  GMutex lock;
  GHashTable *memories; /* GstMemory * -> its base address if we pinned it, else NULL */
  LhContext *lh;
  GstLumahistPinsEnter enter;
  GstLumahistPinsLeave leave;
  gpointer element;
};

GstLumahistPins *gst_lumahist_pins_new(GstLumahistPinsEnter enter, GstLumahistPinsLeave leave,
                                       gpointer element)
{
  GST_DEBUG_CATEGORY_INIT(gst_lumahist_pins_debug, "lumahistpins", 0,
                          "lumahist: page-locked pool memory");
  GstLumahistPins *pins = g_new0(GstLumahistPins, 1);
  g_mutex_init(&pins->lock);
  pins->memories = g_hash_table_new(NULL, NULL);
  pins->enter = enter;
  pins->leave = leave;
  pins->element = element;
  return pins;
}

/* Called with the lock held and the CUDA context current. */
static void unpin(GstLumahistPins *pins, gpointer base)
{
  int status = lh_host_unregister(pins->lh, base);
  if (status < 0)
    GST_WARNING("could not unpin memory %p: %s", base, lh_last_error());
}

static void memory_freed(gpointer data, GstMiniObject *where)
{
  GstLumahistPins *pins = data;
  GstMemory *memory = (GstMemory *)where;
  gpointer base;

  g_mutex_lock(&pins->lock);
  if (g_hash_table_lookup_extended(pins->memories, memory, NULL, &base)) {
    g_hash_table_remove(pins->memories, memory);
    if (base && pins->enter(pins->element)) {
      unpin(pins, base);
      pins->leave(pins->element);
    }
  }
  g_mutex_unlock(&pins->lock);
}

/* The whole allocation behind memory (not just its current region), so that
 * a later resize of the memory stays inside the pinned range. */
static gpointer pin(GstLumahistPins *pins, GstMemory *memory)
{
  GstMapInfo map;
  gsize offset, maxsize;
  gpointer base = NULL;

  gst_memory_get_sizes(memory, &offset, &maxsize);
  if (!gst_memory_map(memory, &map, GST_MAP_READ))
    return NULL;
  base = map.data - offset;
  int status = lh_host_register(pins->lh, base, maxsize);
  gst_memory_unmap(memory, &map);
  if (status < 0) {
    /* Already pinned by someone else (it is then fast as it is), or the
     * driver refused: either way the frame is still analysed, staged. */
    GST_DEBUG("not pinning %" G_GSIZE_FORMAT " bytes at %p: %s", maxsize, base, lh_last_error());
    return NULL;
  }
  GST_DEBUG("pinned %" G_GSIZE_FORMAT " bytes at %p", maxsize, base);
  return base;
}

void gst_lumahist_pins_add(GstLumahistPins *pins, LhContext *lh, GstBuffer *buffer)
{
  if (!buffer->pool || lh_context_backend(lh) != LH_BACKEND_CUDA)
    return;
  g_mutex_lock(&pins->lock);
  pins->lh = lh;
  for (guint i = 0; i < gst_buffer_n_memory(buffer); i++) {
    GstMemory *memory = gst_buffer_peek_memory(buffer, i);
    /* Only plain system memory, and not a share of another memory (its
     * parent owns the pages). */
    if (memory->parent || !gst_memory_is_type(memory, GST_ALLOCATOR_SYSMEM) ||
        g_hash_table_contains(pins->memories, memory) ||
        g_hash_table_size(pins->memories) >= MAX_PINNED)
      continue;
    g_hash_table_insert(pins->memories, memory, pin(pins, memory));
    gst_mini_object_weak_ref(GST_MINI_OBJECT(memory), memory_freed, pins);
  }
  g_mutex_unlock(&pins->lock);
}

void gst_lumahist_pins_clear(GstLumahistPins *pins)
{
  GHashTableIter iter;
  gpointer memory, base;

  g_mutex_lock(&pins->lock);
  if (g_hash_table_size(pins->memories) > 0) {
    gboolean entered = pins->enter(pins->element);
    g_hash_table_iter_init(&iter, pins->memories);
    while (g_hash_table_iter_next(&iter, &memory, &base)) {
      gst_mini_object_weak_unref(GST_MINI_OBJECT(memory), memory_freed, pins);
      if (entered && base)
        unpin(pins, base);
      g_hash_table_iter_remove(&iter);
    }
    if (entered)
      pins->leave(pins->element);
  }
  g_mutex_unlock(&pins->lock);
}

void gst_lumahist_pins_free(GstLumahistPins *pins)
{
  if (!pins)
    return;
  gst_lumahist_pins_clear(pins);
  g_hash_table_unref(pins->memories);
  g_mutex_clear(&pins->lock);
  g_free(pins);
}
