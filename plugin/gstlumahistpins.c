/* gstlumahistpins.c: page-locked pool memory for the CUDA backend.
 *
 * A frame in pageable memory reaches the GPU through two copies: into the
 * library's pinned staging buffer on the CPU, then to the device.  For a 4K
 * frame the first one costs more than everything else the element does.
 * Sources in a pipeline mostly draw their frames from a buffer pool that
 * recycles a handful of memories, or push the same memory again (imagefreeze),
 * so the element page-locks a memory the second time it sees it
 * (cudaHostRegister through lh_host_register, about a millisecond for a 4K
 * frame) and the library then copies frames straight from it.  Memory seen
 * only once, a source that allocates every frame anew, is never pinned.  A weak reference on each
 * memory unpins it just before it is freed, since freeing pinned memory behind the driver's back
 * leaves the pages locked. */
#include "gstlumahistpins.h"

GST_DEBUG_CATEGORY_STATIC(gst_lumahist_pins_debug);
#define GST_CAT_DEFAULT gst_lumahist_pins_debug

/* A pool holds a few buffers; this bounds what is pinned at once should a
 * source keep many memories alive and reuse them all. */
#define MAX_PINNED 64

/* What is known of a memory seen while it is alive. */
typedef struct {
  gpointer base;  /* the pinned address, or NULL: not pinned */
  gboolean tried; /* pinning was tried (and base says how it went) */
} Seen;

struct _GstLumahistPins {
  GMutex lock;
  GHashTable *memories; /* GstMemory * -> Seen */
  guint n_pinned;
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
  pins->memories = g_hash_table_new_full(NULL, NULL, NULL, g_free);
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

  g_mutex_lock(&pins->lock);
  Seen *seen = g_hash_table_lookup(pins->memories, memory);
  if (seen && seen->base) {
    if (pins->enter(pins->element)) {
      unpin(pins, seen->base);
      pins->leave(pins->element);
    }
    pins->n_pinned--;
  }
  g_hash_table_remove(pins->memories, memory);
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
  if (lh_context_backend(lh) != LH_BACKEND_CUDA)
    return;
  g_mutex_lock(&pins->lock);
  pins->lh = lh;
  for (guint i = 0; i < gst_buffer_n_memory(buffer); i++) {
    GstMemory *memory = gst_buffer_peek_memory(buffer, i);
    /* Only plain system memory, and not a share of another memory (its
     * parent owns the pages). */
    if (memory->parent || !gst_memory_is_type(memory, GST_ALLOCATOR_SYSMEM))
      continue;
    Seen *seen = g_hash_table_lookup(pins->memories, memory);
    if (!seen) {
      g_hash_table_insert(pins->memories, memory, g_new0(Seen, 1));
      gst_mini_object_weak_ref(GST_MINI_OBJECT(memory), memory_freed, pins);
    } else if (!seen->tried && pins->n_pinned < MAX_PINNED) {
      seen->tried = TRUE;
      seen->base = pin(pins, memory);
      if (seen->base)
        pins->n_pinned++;
    }
  }
  g_mutex_unlock(&pins->lock);
}

void gst_lumahist_pins_clear(GstLumahistPins *pins)
{
  GHashTableIter iter;
  gpointer memory, value;

  g_mutex_lock(&pins->lock);
  if (g_hash_table_size(pins->memories) > 0) {
    gboolean entered = pins->enter(pins->element);
    g_hash_table_iter_init(&iter, pins->memories);
    while (g_hash_table_iter_next(&iter, &memory, &value)) {
      Seen *seen = value;
      gst_mini_object_weak_unref(GST_MINI_OBJECT(memory), memory_freed, pins);
      if (entered && seen->base)
        unpin(pins, seen->base);
      g_hash_table_iter_remove(&iter);
    }
    if (entered)
      pins->leave(pins->element);
    pins->n_pinned = 0;
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
