/* pinned-pool.c: page-locked buffers for the decoders' pixels, so that the
 * CUDA backend copies each image to the device and back by DMA straight
 * from its rows, instead of first copying it into its staging buffer on the
 * analysis thread (a memcpy each way of every image, which took up to half
 * of each analysis thread's time on 16 cores).
 *
 * Page-locking is slow, and while cudaHostRegister runs the other threads'
 * CUDA calls wait: registering a buffer per new image size on the decoding
 * threads held the analysis threads' launches back (their streams idle
 * between events: five times the kernels' measured time on a 200-image
 * run).  So the pool registers one arena, once, on the thread that opens the
 * contexts, before any analysis runs, sized for the images in flight at the
 * size-weighted mean size of those decoded so far; buffers are cut from it
 * and reused, best fit.  Until the pool is enabled, on the CPU, and past the
 * arena, pixels come from malloc.  Any thread may take or give back a
 * buffer; release also takes what malloc gave.
 *
 * lhio has one pixel allocator for the process, and runs may overlap (two
 * Python iterators, or a run and lumahist.stats_file on another thread): the
 * allocator, set once, takes from the pool of the decoding thread
 * (lhp_pinned_pool_use) and gives a buffer back to the live pool that cut
 * it, or to free(). */
#include <stdlib.h>

#include "lhp.h"

/* The most page-locked memory: locked pages are taken from everything else
 * on the machine. */
#define ARENA_MAX_BYTES ((size_t)1 << 30)
/* Buffers are cut in steps of this, so that one serves images of about the
 * same size. */
#define BUFFER_STEP_BYTES ((size_t)1 << 20)
/* The size of an image when none has been decoded yet. */
#define GUESSED_IMAGE_BYTES ((size_t)8 << 20)
#define PAGE_BYTES 4096

typedef struct {
  void *data;
  size_t capacity;
} PinnedBuffer;

struct LhpPinnedPool {
  GMutex lock;
  LhContext *context; /* registered the arena; NULL until enabled */
  int device;
  uint8_t *arena;
  size_t arena_bytes, arena_used;
  GHashTable *buffers; /* data -> PinnedBuffer *, every buffer cut */
  GPtrArray *free;     /* PinnedBuffer * not holding an image */
  /* Images allocated before the pool was enabled: their number, bytes, and
   * the sum of their squares (for the size-weighted mean). */
  size_t seen, seen_bytes;
  double seen_squares;
};

/* The live pools, for release to find a buffer's (registry_lock first,
 * then a pool's lock), and the pool of each decoding thread. */
static GMutex registry_lock;
static GPtrArray *live_pools;
static _Thread_local LhpPinnedPool *thread_pool;

static void *pinned_alloc(size_t bytes, void *unused);
static void pinned_release(void *pixels, void *unused);

LhpPinnedPool *lhp_pinned_pool_new(void)
{
  LhpPinnedPool *pool = g_new0(LhpPinnedPool, 1);
  g_mutex_init(&pool->lock);
  pool->buffers = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
  pool->free = g_ptr_array_new();
  g_mutex_lock(&registry_lock);
  if (!live_pools) {
    live_pools = g_ptr_array_new();
    /* Once, before any pool's thread decodes; on a thread without a pool it
     * is malloc and free, so that it is never taken away. */
    lhio_set_pixel_allocator(
        &(LhioPixelAllocator){.alloc = pinned_alloc, .release = pinned_release});
  }
  g_ptr_array_add(live_pools, pool);
  g_mutex_unlock(&registry_lock);
  return pool;
}

void lhp_pinned_pool_use(LhpPinnedPool *pool)
{
  thread_pool = pool;
}

static size_t round_up(size_t bytes, size_t step)
{
  return (bytes + step - 1) / step * step;
}

void lhp_pinned_pool_enable(LhpPinnedPool *pool, LhContext *context, int device, guint in_flight)
{
  g_mutex_lock(&pool->lock);
  /* The size-weighted mean: a large image stays in flight longer (its
   * decoding, copies and encoding take longer), so the images in flight at
   * any moment are mostly the large ones.  On 2000 files (1500 JPEG luma,
   * 500 PNG RGB, 16 cores, H200), against the plain mean: 428 MB locked
   * instead of 250, the analysis threads 11 % of the wall time in the
   * library instead of 19 %, 467 images/s against 449 (medians of 3). */
  size_t image = pool->seen_bytes ? (size_t)(pool->seen_squares / (double)pool->seen_bytes)
                                  : GUESSED_IMAGE_BYTES;
  g_mutex_unlock(&pool->lock);
  /* Room for the images in flight at the mean size, each rounded up a step
   * (the bound on images in flight is seldom reached; past the arena,
   * images are staged as before). */
  size_t bytes = (size_t)in_flight * round_up(image, BUFFER_STEP_BYTES);
  if (bytes > ARENA_MAX_BYTES)
    bytes = ARENA_MAX_BYTES;
  void *arena = NULL;
  char *error = NULL;
  if (bytes == 0 || posix_memalign(&arena, PAGE_BYTES, bytes) != 0)
    return;
  if (!lhp_device_use(device, &error) || lh_host_register(context, arena, bytes) < 0) {
    /* Not page-locked (a container's limit, say): staged copies as before. */
    g_free(error);
    free(arena);
    return;
  }
  g_mutex_lock(&pool->lock);
  pool->context = context;
  pool->device = device;
  pool->arena = arena;
  pool->arena_bytes = bytes;
  g_mutex_unlock(&pool->lock);
}

/* The smallest free buffer that holds bytes, taken off the free list. */
static PinnedBuffer *take_free(LhpPinnedPool *pool, size_t bytes)
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

/* A new buffer cut from what is left of the arena, or NULL. */
static PinnedBuffer *cut_buffer(LhpPinnedPool *pool, size_t bytes)
{
  const size_t capacity = round_up(bytes, BUFFER_STEP_BYTES);
  if (pool->arena_bytes - pool->arena_used < capacity)
    return NULL;
  PinnedBuffer *b = g_new(PinnedBuffer, 1);
  b->data = pool->arena + pool->arena_used;
  b->capacity = capacity;
  pool->arena_used += capacity;
  g_hash_table_insert(pool->buffers, b->data, b);
  return b;
}

static void *pinned_alloc(size_t bytes, void *unused)
{
  LhpPinnedPool *pool = thread_pool;
  if (!pool)
    return malloc(bytes);
  PinnedBuffer *b = NULL;
  g_mutex_lock(&pool->lock);
  if (pool->arena) {
    b = take_free(pool, bytes);
    if (!b)
      b = cut_buffer(pool, bytes);
  } else if (!pool->context) {
    pool->seen++;
    pool->seen_bytes += bytes;
    pool->seen_squares += (double)bytes * (double)bytes;
  }
  g_mutex_unlock(&pool->lock);
  return b ? b->data : malloc(bytes);
}

static void pinned_release(void *pixels, void *unused)
{
  PinnedBuffer *b = NULL;
  g_mutex_lock(&registry_lock);
  for (guint i = 0; !b && i < live_pools->len; i++) {
    LhpPinnedPool *pool = g_ptr_array_index(live_pools, i);
    g_mutex_lock(&pool->lock);
    b = g_hash_table_lookup(pool->buffers, pixels);
    if (b)
      g_ptr_array_add(pool->free, b);
    g_mutex_unlock(&pool->lock);
  }
  g_mutex_unlock(&registry_lock);
  if (!b)
    free(pixels);
}

size_t lhp_pinned_pool_bytes(LhpPinnedPool *pool)
{
  g_mutex_lock(&pool->lock);
  size_t bytes = pool->arena_bytes;
  g_mutex_unlock(&pool->lock);
  return bytes;
}

void lhp_pinned_pool_free(LhpPinnedPool *pool)
{
  if (!pool)
    return;
  g_mutex_lock(&registry_lock);
  g_ptr_array_remove_fast(live_pools, pool);
  g_mutex_unlock(&registry_lock);
  /* Every image is gone by now: no buffer is in use. */
  if (pool->arena) {
    char *error = NULL;
    if (!lhp_device_use(pool->device, &error))
      g_free(error);
    lh_host_unregister(pool->context, pool->arena);
    free(pool->arena);
  }
  g_hash_table_destroy(pool->buffers); /* and the buffers' records */
  g_ptr_array_free(pool->free, TRUE);
  g_mutex_clear(&pool->lock);
  g_free(pool);
}
