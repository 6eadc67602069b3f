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
 * best fit, and joined again when freed.  Until the pool is enabled, on
 * the CPU, and past the arena, pixels come from malloc.  Any thread may
 * take or give back a buffer; release also takes what malloc gave.
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
/* How long a decoding thread waits for a piece of the arena. */
#define ARENA_WAIT_US (100 * 1000)

/* A piece of the arena, free or holding an image; the pieces tile the
 * arena in address order, and free neighbours are joined again, so that a
 * run whose images change size (JPEG luma planes first, R'G'B' PNGs later)
 * does not leave the arena cut into pieces too small for what comes. */
typedef struct PinnedBuffer PinnedBuffer;
struct PinnedBuffer {
  uint8_t *data;
  size_t capacity;
  bool in_use;
  PinnedBuffer *prev, *next;
};

struct LhpPinnedPool {
  GMutex lock;
  LhContext *context; /* registered the arena; NULL until enabled */
  int device;
  uint8_t *arena;
  size_t arena_bytes;
  PinnedBuffer *first; /* the arena's pieces, by address */
  GHashTable *in_use;  /* data -> PinnedBuffer * holding an image */
  /* Images allocated before the pool was enabled: their number, bytes, and
   * the sum of their squares (for the size-weighted mean). */
  size_t seen, seen_bytes;
  double seen_squares;
  /* Images given malloc's memory after it was enabled: no piece free. */
  size_t past, past_bytes;
  bool wait_for_room; /* lhp_pinned_pool_enable's */
  GCond freed;        /* a piece was given back */
  double waited_s;    /* by decoding threads for a piece, summed */
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
  pool->in_use = g_hash_table_new(g_direct_hash, g_direct_equal);
  g_cond_init(&pool->freed);
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

void lhp_pinned_pool_enable(LhpPinnedPool *pool, LhContext *context, int device, guint in_flight,
                            bool wait_for_room)
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
  pool->wait_for_room = wait_for_room;
  pool->first = g_new0(PinnedBuffer, 1);
  pool->first->data = arena;
  pool->first->capacity = bytes;
  g_mutex_unlock(&pool->lock);
}

/* The smallest free piece that holds bytes, in use from now on, its rest
 * (whole steps) a free piece after it; NULL when none is large enough. */
static PinnedBuffer *take_piece(LhpPinnedPool *pool, size_t bytes)
{
  const size_t capacity = round_up(bytes, BUFFER_STEP_BYTES);
  PinnedBuffer *best = NULL;
  for (PinnedBuffer *b = pool->first; b; b = b->next)
    if (!b->in_use && b->capacity >= capacity && (!best || b->capacity < best->capacity))
      best = b;
  if (!best)
    return NULL;
  if (best->capacity > capacity) {
    PinnedBuffer *rest = g_new0(PinnedBuffer, 1);
    rest->data = best->data + capacity;
    rest->capacity = best->capacity - capacity;
    rest->prev = best;
    rest->next = best->next;
    if (best->next)
      best->next->prev = rest;
    best->next = rest;
    best->capacity = capacity;
  }
  best->in_use = true;
  g_hash_table_insert(pool->in_use, best->data, best);
  return best;
}

/* Joins a free piece to the next one, which goes. */
static void join_next(PinnedBuffer *b)
{
  PinnedBuffer *next = b->next;
  b->capacity += next->capacity;
  b->next = next->next;
  if (next->next)
    next->next->prev = b;
  g_free(next);
}

/* Frees a piece, joined to its free neighbours. */
static void give_back_piece(LhpPinnedPool *pool, PinnedBuffer *b)
{
  g_hash_table_remove(pool->in_use, b->data);
  b->in_use = false;
  if (b->next && !b->next->in_use)
    join_next(b);
  if (b->prev && !b->prev->in_use)
    join_next(b->prev);
}

static void *pinned_alloc(size_t bytes, void *unused)
{
  LhpPinnedPool *pool = thread_pool;
  if (!pool)
    return malloc(bytes);
  PinnedBuffer *b = NULL;
  g_mutex_lock(&pool->lock);
  if (pool->arena) {
    b = take_piece(pool, bytes);
    if (!b && pool->wait_for_room && bytes <= pool->arena_bytes) {
      /* The images in the arena are on their way to the device, whose
       * threads free them soon: waiting for one costs less than pageable
       * memory, whose copies are staged on an analysis thread (on an H100
       * host, PNGs past the arena slowed the analysis threads and nvJPEG's
       * batches 3-6 times over).  Not for ever, and not in a run whose
       * images stay for a finish step on these same threads (equalize's
       * encoding): this thread could be holding one up. */
      gint64 start = g_get_monotonic_time();
      gint64 deadline = start + ARENA_WAIT_US;
      while (!b && g_cond_wait_until(&pool->freed, &pool->lock, deadline))
        b = take_piece(pool, bytes);
      if (!b)
        b = take_piece(pool, bytes);
      pool->waited_s += (double)(g_get_monotonic_time() - start) / 1e6;
    }
    if (!b) {
      pool->past++;
      pool->past_bytes += bytes;
    }
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
    b = g_hash_table_lookup(pool->in_use, pixels);
    if (b) {
      give_back_piece(pool, b);
      g_cond_broadcast(&pool->freed);
    }
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

size_t lhp_pinned_pool_past(LhpPinnedPool *pool, size_t *bytes, double *waited_s)
{
  g_mutex_lock(&pool->lock);
  size_t images = pool->past;
  *bytes = pool->past_bytes;
  *waited_s = pool->waited_s;
  g_mutex_unlock(&pool->lock);
  return images;
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
  while (pool->first) {
    PinnedBuffer *next = pool->first->next;
    g_free(pool->first);
    pool->first = next;
  }
  g_hash_table_destroy(pool->in_use);
  g_cond_clear(&pool->freed);
  g_mutex_clear(&pool->lock);
  g_free(pool);
}
