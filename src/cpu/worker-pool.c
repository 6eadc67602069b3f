/* worker-pool.c: the CPU backend's threads.  A frame is split into parts
 * (row bands, tiles) that the pool's threads and the caller take one by
 * one; the call returns when every part is done.  Threads start on the
 * first call that can use them, so a context kept to one thread (the
 * tool's, one per decoding thread) starts none.
 *
 * Waking a thread that sleeps on a condition variable takes tens of
 * microseconds (a futex, the scheduler, an interrupt to its core), as long
 * as a 4K frame's band on 16 cores takes to count; so a worker that has
 * done its parts watches for the next call for a while (POOL_SPIN_NS)
 * before it sleeps, and the caller watches for the last part the same way,
 * and calls that follow each other closely start at once. */
#define _GNU_SOURCE /* sched_getaffinity */
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "lh-private.h"

/* How long a worker waits for the next call, and the caller for the last
 * parts, before sleeping: about what the CPU needs to count a quarter of a
 * 4K frame, longer than a wake-up and short enough that idle workers give
 * their cores back at once, to a video's next frame as to anything else. */
#define POOL_SPIN_NS 100000

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
  /* Written under the lock, also read without it (atomically) while a
   * thread waits for them to change. */
  int parts_done;
  unsigned generation; /* bumped for each call, so that a worker joins each once */
  bool stopping;
};

static int64_t now_ns(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

/* Waits up to POOL_SPIN_NS, without the lock, until done(pool) holds;
 * true if it did. */
static bool spin_until(const LhiPool *pool, bool (*done)(const LhiPool *pool, unsigned value),
                       unsigned value)
{
  const int64_t end = now_ns() + POOL_SPIN_NS;
  for (;;) {
    for (int i = 0; i < 64; i++) {
      if (done(pool, value))
        return true;
      cpu_relax();
    }
    if (now_ns() > end)
      return false;
  }
}

static bool call_posted(const LhiPool *pool, unsigned seen)
{
  return __atomic_load_n(&pool->generation, __ATOMIC_ACQUIRE) != seen ||
         __atomic_load_n(&pool->stopping, __ATOMIC_ACQUIRE);
}

static bool parts_all_done(const LhiPool *pool, unsigned n_parts)
{
  return __atomic_load_n(&pool->parts_done, __ATOMIC_ACQUIRE) == (int)n_parts;
}

int lhi_cpu_count(void)
{
  /* The cores this process may run on (taskset, a container's cpuset),
   * else those online: more threads than cores would wait on each other. */
  long n = sysconf(_SC_NPROCESSORS_ONLN);
#ifdef CPU_COUNT
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof allowed, &allowed) == 0 && CPU_COUNT(&allowed) >= 1)
    n = CPU_COUNT(&allowed);
#endif
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
    __atomic_store_n(&pool->parts_done, pool->parts_done + 1, __ATOMIC_RELEASE);
    if (pool->parts_done == pool->n_parts)
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
    if (!pool->stopping && pool->generation == seen) {
      pthread_mutex_unlock(&pool->lock);
      spin_until(pool, call_posted, seen);
      pthread_mutex_lock(&pool->lock);
    }
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
  __atomic_store_n(&pool->generation, pool->generation + 1, __ATOMIC_RELEASE);
  pthread_cond_broadcast(&pool->work_posted);
  take_parts(pool);
  if (pool->parts_done < pool->n_parts) {
    /* The last parts are being counted by workers: watch for them. */
    pthread_mutex_unlock(&pool->lock);
    spin_until(pool, parts_all_done, (unsigned)n_parts);
    pthread_mutex_lock(&pool->lock);
  }
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
  __atomic_store_n(&pool->stopping, true, __ATOMIC_RELEASE);
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
