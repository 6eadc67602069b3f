/* pinned-pool.c: page-locked buffers for the decoders' pixels, so that the
 * CUDA backend copies each image to the device and back by DMA straight
 * from its rows, instead of first copying it into its staging buffer on the
 * analysis thread (a memcpy each way of every image, which took up to half
 * of each analysis thread's time on 16 cores).
 *
 * Buffers are kept and reused: page-locking costs more than a copy, so a
 * buffer pays off only when it holds many images.  Until the contexts are
 * open, and on the CPU, pixels come from malloc; past the pool's cap, too.
 * Any thread may take or give back a buffer; release also takes what malloc
 * gave (the images decoded before the pool was ready). */
#include <stdlib.h>

#include "lht-batch.h"

/* At most this much page-locked memory: the images in flight (twice the
 * decoding threads plus a batch per context, lht-batch.h) are rarely more,
 * and locked pages are taken from everything else on the machine. */
#define POOL_CAP_BYTES ((size_t)1 << 30)
/* Buffers are sized in steps of this, so that one serves images of about
 * the same size. */
#define POOL_STEP_BYTES ((size_t)1 << 20)
#define PAGE_BYTES 4096

typedef struct {
  void *data;
  size_t capacity;
} PinnedBuffer;

struct LhtPinnedPool {
  GMutex lock;
  LhContext *context; /* registers the buffers; NULL until enabled */
  int device;         /* made current on a thread before it registers */
  size_t locked;      /* bytes of all the buffers */
  GHashTable *buffers; /* data -> PinnedBuffer *, every buffer of the pool */
  GPtrArray *free;     /* PinnedBuffer * not holding an image */
};

LhtPinnedPool *lht_pinned_pool_new(void)
{
  LhtPinnedPool *pool = g_new0(LhtPinnedPool, 1);
  g_mutex_init(&pool->lock);
  pool->buffers = g_hash_table_new(g_direct_hash, g_direct_equal);
  pool->free = g_ptr_array_new();
  return pool;
}

void lht_pinned_pool_enable(LhtPinnedPool *pool, LhContext *context, int device)
{
  g_mutex_lock(&pool->lock);
  pool->context = context;
  pool->device = device;
  g_mutex_unlock(&pool->lock);
}

/* The smallest free buffer that holds bytes, taken off the free list. */
static PinnedBuffer *take_free(LhtPinnedPool *pool, size_t bytes)
{
  guint best = pool->free->len;
  for (guint i = 0; i < pool->free->len; i++) {
    const PinnedBuffer *b = g_ptr_array_index(pool->free, i);
    if (b->capacity >= bytes &&
        (best == pool->free->len ||
         b->capacity < ((PinnedBuffer *)g_ptr_array_index(pool->free, best))->capacity))
      best = i;
  }
  return best < pool->free->len ? g_ptr_array_remove_index_fast(pool->free, best) : NULL;
}

/* A new page-locked buffer of capacity bytes, or NULL when the memory or the
 * lock cannot be had.  Called without the pool's lock: registering takes
 * milliseconds. */
static PinnedBuffer *new_buffer(LhContext *context, int device, size_t capacity)
{
  void *data = NULL;
  if (posix_memalign(&data, PAGE_BYTES, capacity) != 0)
    return NULL;
  char *error = NULL;
  /* The decoding threads have no device of their own; registering goes to
   * the pool's (and, page-locked for every context, serves them all). */
  if (!lht_device_use(device, &error) || lh_host_register(context, data, capacity) < 0) {
    g_free(error);
    free(data);
    return NULL;
  }
  PinnedBuffer *b = g_new(PinnedBuffer, 1);
  b->data = data;
  b->capacity = capacity;
  return b;
}

void *lht_pinned_alloc(size_t bytes, void *user)
{
  LhtPinnedPool *pool = user;
  g_mutex_lock(&pool->lock);
  LhContext *context = pool->context;
  PinnedBuffer *b = context ? take_free(pool, bytes) : NULL;
  const size_t capacity = (bytes + POOL_STEP_BYTES - 1) / POOL_STEP_BYTES * POOL_STEP_BYTES;
  const bool grow = context && !b && pool->locked + capacity <= POOL_CAP_BYTES;
  if (grow)
    pool->locked += capacity; /* claimed now, so that no other thread passes the cap */
  g_mutex_unlock(&pool->lock);
  if (b)
    return b->data;
  if (grow) {
    b = new_buffer(context, pool->device, capacity);
    g_mutex_lock(&pool->lock);
    if (b)
      g_hash_table_insert(pool->buffers, b->data, b);
    else
      pool->locked -= capacity;
    g_mutex_unlock(&pool->lock);
    if (b)
      return b->data;
  }
  return malloc(bytes);
}

void lht_pinned_release(void *pixels, void *user)
{
  LhtPinnedPool *pool = user;
  g_mutex_lock(&pool->lock);
  PinnedBuffer *b = g_hash_table_lookup(pool->buffers, pixels);
  if (b)
    g_ptr_array_add(pool->free, b);
  g_mutex_unlock(&pool->lock);
  if (!b)
    free(pixels);
}

size_t lht_pinned_pool_bytes(LhtPinnedPool *pool)
{
  g_mutex_lock(&pool->lock);
  size_t locked = pool->locked;
  g_mutex_unlock(&pool->lock);
  return locked;
}

void lht_pinned_pool_free(LhtPinnedPool *pool)
{
  if (!pool)
    return;
  /* Every image is gone by now: every buffer is on the free list. */
  char *error = NULL;
  if (pool->context && !lht_device_use(pool->device, &error))
    g_free(error);
  GHashTableIter iter;
  gpointer key, value;
  g_hash_table_iter_init(&iter, pool->buffers);
  while (g_hash_table_iter_next(&iter, &key, &value)) {
    PinnedBuffer *b = value;
    lh_host_unregister(pool->context, b->data);
    free(b->data);
    g_free(b);
  }
  g_hash_table_destroy(pool->buffers);
  g_ptr_array_free(pool->free, TRUE);
  g_mutex_clear(&pool->lock);
  g_free(pool);
}
