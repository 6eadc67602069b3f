/* worker-pool.c: the CPU backend's threads.  A frame is split into parts
 * (row bands, tiles) that the pool's threads and the caller take one by
 * one; the call returns when every part is done.  Threads start on the
 * first call that can use them, so a context kept to one thread (the
 * tool's, one per decoding thread) starts none. */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "lh-private.h"

typedef struct {
  LhiPool *pool;
  int index; /* 0 .. LHI_MAX_THREADS - 2: worker i works while threads > i + 1 */
  pthread_t thread;
} Worker;

struct LhiPool {
  int threads; /* wanted, the caller's included */
  int started; /* worker threads running */
  Worker workers[LHI_MAX_THREADS - 1];
  pthread_mutex_t lock;
  pthread_cond_t work_posted;
  pthread_cond_t work_done;
  /* The call in progress: parts [0, n) of task, handed out in order. */
  void (*task)(int part, void *arg);
  void *arg;
  int n_parts;
  int next_part;
  int parts_done;
  unsigned generation; /* bumped for each call, so that a worker joins each once */
  bool stopping;
};

int lhi_cpu_count(void)
{
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n >= 1 && n <= LHI_MAX_THREADS ? (int)n : n > LHI_MAX_THREADS ? LHI_MAX_THREADS : 1;
}

int lhi_pool_new(int threads, LhiPool **out)
{
  *out = NULL;
  LhiPool *pool = calloc(1, sizeof *pool);
  if (!pool)
    return lhi_error(LH_ERROR_NO_MEMORY, "out of memory for a worker pool");
  pool->threads = threads < 1 ? 1 : threads > LHI_MAX_THREADS ? LHI_MAX_THREADS : threads;
  pthread_mutex_init(&pool->lock, NULL);
  pthread_cond_init(&pool->work_posted, NULL);
  pthread_cond_init(&pool->work_done, NULL);
  *out = pool;
  return LH_OK;
}

/* Takes parts until none is left; with the lock held on entry and exit. */
static void take_parts(LhiPool *pool)
{
  while (pool->next_part < pool->n_parts) {
    int part = pool->next_part++;
    pthread_mutex_unlock(&pool->lock);
    pool->task(part, pool->arg);
    pthread_mutex_lock(&pool->lock);
    if (++pool->parts_done == pool->n_parts)
      pthread_cond_broadcast(&pool->work_done);
  }
}

static void *worker_main(void *data)
{
  Worker *self = data;
  LhiPool *pool = self->pool;
  unsigned seen = 0;
  pthread_mutex_lock(&pool->lock);
  for (;;) {
    while (!pool->stopping && pool->generation == seen)
      pthread_cond_wait(&pool->work_posted, &pool->lock);
    if (pool->stopping)
      break;
    seen = pool->generation;
    /* A pool set to fewer threads keeps its extra workers idle. */
    if (self->index < pool->threads - 1)
      take_parts(pool);
  }
  pthread_mutex_unlock(&pool->lock);
  return NULL;
}

/* Starts the workers the pool is to have; with fewer (the system refused
 * threads), the caller does the rest of the work. */
static void start_workers(LhiPool *pool)
{
  int wanted = pool->threads - 1;
  while (pool->started < wanted) {
    Worker *worker = &pool->workers[pool->started];
    worker->pool = pool;
    worker->index = pool->started;
    if (pthread_create(&worker->thread, NULL, worker_main, worker) != 0)
      break;
    pool->started++;
  }
  if (pool->started < wanted)
    pool->threads = pool->started + 1; /* do not try again at every call */
}

void lhi_pool_run(LhiPool *pool, int n_parts, void (*task)(int part, void *arg), void *arg)
{
  if (n_parts <= 0)
    return;
  if (!pool || pool->threads <= 1 || n_parts == 1) {
    for (int part = 0; part < n_parts; part++)
      task(part, arg);
    return;
  }
  pthread_mutex_lock(&pool->lock);
  start_workers(pool);
  pool->task = task;
  pool->arg = arg;
  pool->n_parts = n_parts;
  pool->next_part = 0;
  pool->parts_done = 0;
  pool->generation++;
  pthread_cond_broadcast(&pool->work_posted);
  take_parts(pool);
  while (pool->parts_done < pool->n_parts)
    pthread_cond_wait(&pool->work_done, &pool->lock);
  pool->task = NULL;
  pthread_mutex_unlock(&pool->lock);
}

int lhi_pool_threads(const LhiPool *pool)
{
  return pool ? pool->threads : 1;
}

void lhi_pool_set_threads(LhiPool *pool, int threads)
{
  /* More threads start at the next call; fewer take effect at once, the
   * extra workers only idle. */
  pthread_mutex_lock(&pool->lock);
  pool->threads = threads < 1 ? 1 : threads > LHI_MAX_THREADS ? LHI_MAX_THREADS : threads;
  pthread_mutex_unlock(&pool->lock);
}

void lhi_pool_free(LhiPool *pool)
{
  if (!pool)
    return;
  pthread_mutex_lock(&pool->lock);
  pool->stopping = true;
  pthread_cond_broadcast(&pool->work_posted);
  pthread_mutex_unlock(&pool->lock);
  for (int i = 0; i < pool->started; i++)
    pthread_join(pool->workers[i].thread, NULL);
  pthread_cond_destroy(&pool->work_posted);
  pthread_cond_destroy(&pool->work_done);
  pthread_mutex_destroy(&pool->lock);
  free(pool);
}

/* Below this many pixels a frame is one band: the threads' hand-off costs
 * more than they save (about 10 us against 0.1 ms of counting). */
#define MIN_PIXELS_PER_BAND (64 * 1024)

int lhi_band_count(const LhiPool *pool, int width, int height)
{
  int threads = lhi_pool_threads(pool);
  int64_t by_size = (int64_t)width * height / MIN_PIXELS_PER_BAND;
  int bands = by_size < threads ? (int)by_size : threads;
  if (bands > height)
    bands = height;
  return bands >= 1 ? bands : 1;
}

int lhi_band_start(int band, int bands, int height)
{
  return (int)((int64_t)height * band / bands);
}
