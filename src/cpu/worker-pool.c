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
 * and calls that follow each other closely start at once.
 *
 * Parts are taken and counted done by atomic operations, not under a
 * lock: with one, the 15 workers of a 16-core call that all saw it at once
 * queued on one mutex, each loser sleeping in the kernel until the one
 * before let go, twice a part (to take it and to count it done).  Sleeping
 * threads wait on a futex (Linux), which wakes them all at once with no
 * lock to take again: a condition variable's waiters each retake its mutex
 * on waking, one after another. */
#define _GNU_SOURCE /* sched_getaffinity */
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <linux/futex.h>
#include <sys/syscall.h>
#endif

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
  int threads; /* wanted, the caller's included (atomic: set_threads may change it) */
  int started; /* worker threads running (the caller's own) */
  /* The process the workers run in: a fork()ed child has none of them. */
  pid_t workers_pid;
  Worker workers[LHI_MAX_THREADS - 1];
  /* The call in progress: task, arg, n_parts and n_slots are written by
   * the caller before it publishes the call in `next`, and stay as they
   * are until every part is done. */
  void (*task)(int part, int slot, void *arg);
  void *arg;
  int n_parts; /* atomic: read by workers that may be late to the call */
  int n_slots; /* atomic: threads (the caller is slot 0, worker i slot i + 1) that may take parts */
  /* The call's generation (high 32 bits) and its next part to take (low
   * 32, PARTS_CLOSED while the call is set up): a part is taken by one
   * compare-and-swap that also checks the call is still the one the thread
   * saw, so a worker late to a call can never take a part of the next one
   * with the last one's task. */
  uint64_t next;
  /* Atomic, and the words sleeping threads wait on: the generation last
   * published or stopping (posted), the call's parts counted (parts_done). */
  unsigned posted;
  int parts_done;
  bool stopping;        /* atomic */
  int sleeping_workers; /* atomic: workers asleep or about to be */
  int caller_sleeping;  /* atomic */
#ifndef __linux__
  pthread_mutex_t lock; /* elsewhere: a condition variable for both words */
  pthread_cond_t changed;
#endif
};

/* Sleeps while *word holds value; may also return for nothing (the caller
 * looks again). */
static void sleep_while(LhiPool *pool, const void *word, int value)
{
#ifdef __linux__
  (void)pool;
  syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, value, NULL, NULL, 0);
#else
  pthread_mutex_lock(&pool->lock);
  if (__atomic_load_n((const int *)word, __ATOMIC_SEQ_CST) == value)
    pthread_cond_wait(&pool->changed, &pool->lock);
  pthread_mutex_unlock(&pool->lock);
#endif
}

/* Wakes every thread sleeping on word, after it changed. */
static void wake_all(LhiPool *pool, const void *word)
{
#ifdef __linux__
  (void)pool;
  syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
#else
  (void)word;
  pthread_mutex_lock(&pool->lock);
  pthread_cond_broadcast(&pool->changed);
  pthread_mutex_unlock(&pool->lock);
#endif
}

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

/* The part index of `next` while the caller sets a call up. */
#define PARTS_CLOSED 0xffffffffu

static unsigned generation_of(uint64_t next)
{
  return (unsigned)(next >> 32);
}

/* Waits up to POOL_SPIN_NS, awake, until done(pool) holds;
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
  return generation_of(__atomic_load_n(&pool->next, __ATOMIC_ACQUIRE)) != seen ||
         __atomic_load_n(&pool->stopping, __ATOMIC_ACQUIRE);
}

static bool parts_all_done(const LhiPool *pool, unsigned n_parts)
{
  return __atomic_load_n(&pool->parts_done, __ATOMIC_ACQUIRE) == (int)n_parts;
}

/* A thread count within 1 .. LHI_MAX_THREADS. */
static int clamped_threads(long threads)
{
  return threads < 1 ? 1 : threads > LHI_MAX_THREADS ? LHI_MAX_THREADS : (int)threads;
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
  return clamped_threads(n);
}

int lhi_pool_new(int threads, LhiPool **out)
{
  *out = NULL;
  LhiPool *pool = calloc(1, sizeof *pool);
  if (!pool)
    return lhi_error(LH_ERROR_NO_MEMORY, "out of memory for a worker pool");
  pool->threads = clamped_threads(threads);
#ifndef __linux__
  pthread_mutex_init(&pool->lock, NULL);
  pthread_cond_init(&pool->changed, NULL);
#endif
  *out = pool;
  return LH_OK;
}

/* Takes the parts of call `generation` on thread `slot` until none is
 * left (or the call is over: every part taken by others and done). */
static void take_parts(LhiPool *pool, unsigned generation, int slot)
{
  uint64_t next = __atomic_load_n(&pool->next, __ATOMIC_ACQUIRE);
  for (;;) {
    if (generation_of(next) != generation)
      return;
    if ((uint32_t)next == PARTS_CLOSED) { /* the caller is setting this call up */
      cpu_relax();
      next = __atomic_load_n(&pool->next, __ATOMIC_ACQUIRE);
      continue;
    }
    /* n_parts and n_slots may already be the next call's, if this one
     * ended since `next` was read; but the caller closed `next` before it
     * wrote them (lhi_pool_run_slots), so the compare-and-swap below then
     * fails, and a slot turned away had no part of this call left. */
    const int n_parts = __atomic_load_n(&pool->n_parts, __ATOMIC_ACQUIRE);
    const int part = (int)(uint32_t)next;
    if (part >= n_parts || slot >= __atomic_load_n(&pool->n_slots, __ATOMIC_ACQUIRE))
      return;
    if (!__atomic_compare_exchange_n(&pool->next, &next, next + 1, true, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE))
      continue; /* next now holds what another thread left */
    /* The call cannot end, nor task change, while this part is not done. */
    pool->task(part, slot, pool->arg);
    if (__atomic_add_fetch(&pool->parts_done, 1, __ATOMIC_SEQ_CST) == n_parts) {
      /* The last part: wake the caller if it went to sleep. */
      if (__atomic_load_n(&pool->caller_sleeping, __ATOMIC_SEQ_CST))
        wake_all(pool, &pool->parts_done);
      return;
    }
    next = __atomic_load_n(&pool->next, __ATOMIC_ACQUIRE);
  }
}

static void *worker_main(void *data)
{
  Worker *self = data;
  LhiPool *pool = self->pool;
  unsigned seen = 0;
  for (;;) {
    if (!spin_until(pool, call_posted, seen)) {
      /* Counted first, so that a call posted from now on wakes this
       * thread; one posted already changed `posted`, and the futex then
       * does not sleep. */
      __atomic_add_fetch(&pool->sleeping_workers, 1, __ATOMIC_SEQ_CST);
      while (!call_posted(pool, seen))
        sleep_while(pool, &pool->posted, (int)seen);
      __atomic_sub_fetch(&pool->sleeping_workers, 1, __ATOMIC_SEQ_CST);
    }
    if (__atomic_load_n(&pool->stopping, __ATOMIC_ACQUIRE))
      break;
    seen = generation_of(__atomic_load_n(&pool->next, __ATOMIC_ACQUIRE));
    /* A pool set to fewer threads keeps its extra workers idle (the
     * call's n_slots). */
    take_parts(pool, seen, self->index + 1);
  }
  return NULL;
}

/* Starts the workers the pool is to have; with fewer (the system refused
 * threads), the caller does the rest of the work. */
static void start_workers(LhiPool *pool)
{
  /* A fork()ed child has the pool but not its threads: it starts its own
   * (the parent's sleepers counted none of them). */
  const pid_t pid = getpid();
  if (pool->workers_pid != pid) {
    pool->started = 0;
    __atomic_store_n(&pool->sleeping_workers, 0, __ATOMIC_RELAXED);
    pool->workers_pid = pid;
  }
  int wanted = __atomic_load_n(&pool->threads, __ATOMIC_RELAXED) - 1;
  while (pool->started < wanted) {
    Worker *worker = &pool->workers[pool->started];
    worker->pool = pool;
    worker->index = pool->started;
    if (pthread_create(&worker->thread, NULL, worker_main, worker) != 0)
      break;
    pool->started++;
  }
  if (pool->started < wanted) /* do not try again at every call */
    __atomic_store_n(&pool->threads, pool->started + 1, __ATOMIC_RELAXED);
}

void lhi_pool_run_slots(LhiPool *pool, int n_parts, int n_slots,
                        void (*task)(int part, int slot, void *arg), void *arg)
{
  if (n_parts <= 0)
    return;
  const int threads = lhi_pool_threads(pool);
  if (n_slots > threads)
    n_slots = threads;
  if (n_slots <= 1 || n_parts == 1) {
    for (int part = 0; part < n_parts; part++)
      task(part, 0, arg);
    return;
  }
  start_workers(pool);
  /* A new generation, closed while the call is set up: a worker still in
   * the last call (it saw its last parts taken) may read the n_parts
   * written below, and must then find `next` changed, or it would take a
   * part of this call as one of that (n_parts is written with release, so
   * that whoever reads it sees `next` closed). */
  const unsigned generation = generation_of(__atomic_load_n(&pool->next, __ATOMIC_RELAXED)) + 1;
  __atomic_store_n(&pool->next, (uint64_t)generation << 32 | PARTS_CLOSED, __ATOMIC_RELAXED);
  pool->task = task;
  pool->arg = arg;
  __atomic_store_n(&pool->parts_done, 0, __ATOMIC_RELAXED);
  __atomic_store_n(&pool->n_slots, n_slots, __ATOMIC_RELEASE);
  __atomic_store_n(&pool->n_parts, n_parts, __ATOMIC_RELEASE);
  /* Open it: part 0 next; then wake the workers that sleep. */
  __atomic_store_n(&pool->next, (uint64_t)generation << 32, __ATOMIC_RELEASE);
  __atomic_store_n(&pool->posted, generation, __ATOMIC_SEQ_CST);
  if (__atomic_load_n(&pool->sleeping_workers, __ATOMIC_SEQ_CST) > 0)
    wake_all(pool, &pool->posted);
  take_parts(pool, generation, 0);
  /* The last parts may be being counted by workers: watch for them, then
   * sleep until the last one wakes us. */
  if (!spin_until(pool, parts_all_done, (unsigned)n_parts)) {
    __atomic_store_n(&pool->caller_sleeping, 1, __ATOMIC_SEQ_CST);
    for (;;) {
      const int done = __atomic_load_n(&pool->parts_done, __ATOMIC_SEQ_CST);
      if (done == n_parts)
        break;
      sleep_while(pool, &pool->parts_done, done);
    }
    __atomic_store_n(&pool->caller_sleeping, 0, __ATOMIC_RELAXED);
  }
  pool->task = NULL;
}

/* lhi_pool_run's task, called as a slot task. */
typedef struct {
  void (*task)(int part, void *arg);
  void *arg;
} PartTask;

static void run_part_task(int part, int slot, void *data)
{
  (void)slot;
  const PartTask *t = data;
  t->task(part, t->arg);
}

void lhi_pool_run(LhiPool *pool, int n_parts, void (*task)(int part, void *arg), void *arg)
{
  PartTask t = {task, arg};
  lhi_pool_run_slots(pool, n_parts, LHI_MAX_THREADS, run_part_task, &t);
}

int lhi_pool_threads(const LhiPool *pool)
{
  return pool ? __atomic_load_n(&pool->threads, __ATOMIC_RELAXED) : 1;
}

void lhi_pool_set_threads(LhiPool *pool, int threads)
{
  /* More threads start at the next call; fewer take effect at once, the
   * extra workers only idle. */
  __atomic_store_n(&pool->threads, clamped_threads(threads), __ATOMIC_RELAXED);
}

void lhi_pool_free(LhiPool *pool)
{
  if (!pool)
    return;
  __atomic_store_n(&pool->stopping, true, __ATOMIC_SEQ_CST);
  __atomic_add_fetch(&pool->posted, 1, __ATOMIC_SEQ_CST); /* so that sleepers wake */
  wake_all(pool, &pool->posted);
  /* A fork()ed child's started workers are its parent's threads: none to join. */
  const int started = pool->workers_pid == getpid() ? pool->started : 0;
  for (int i = 0; i < started; i++)
    pthread_join(pool->workers[i].thread, NULL);
#ifndef __linux__
  pthread_cond_destroy(&pool->changed);
  pthread_mutex_destroy(&pool->lock);
#endif
  free(pool);
}

/* Below this many pixels a part is not worth its own hand-off (about 10
 * us against 0.1 ms of counting): a smaller frame is fewer parts, one
 * below it. */
#define MIN_PIXELS_PER_PART (64 * 1024)
/* Parts a thread may take of a frame: a thread that wakes late (tens of
 * microseconds on a busy or virtual machine, as long as a 4K band takes on
 * 16 cores) leaves its parts to the others, where with one band a thread
 * the call would wait for it. */
#define PARTS_PER_THREAD 4

int lhi_part_count(const LhiPool *pool, int width, int height)
{
  int threads = lhi_pool_threads(pool);
  if (threads <= 1)
    return 1;
  int64_t by_size = (int64_t)width * height / MIN_PIXELS_PER_PART;
  int64_t parts = (int64_t)threads * PARTS_PER_THREAD;
  if (parts > by_size)
    parts = by_size;
  if (parts > height)
    parts = height;
  return parts >= 1 ? (int)parts : 1;
}

int lhi_slot_count(const LhiPool *pool, int n_parts)
{
  return n_parts > 1 ? lhi_pool_threads(pool) : 1;
}

int lhi_band_start(int band, int bands, int height)
{
  return (int)((int64_t)height * band / bands);
}
