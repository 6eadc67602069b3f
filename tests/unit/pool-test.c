/* pool-test.c: the CPU backend's worker pool (cpu/worker-pool.c) under
 * stress: every part of every call run exactly once, by the pool's threads
 * and the caller, with the results of all of them seen by the caller when
 * the call returns; calls back to back (workers still watching for the
 * next), calls after a pause (workers asleep), parts of very different
 * lengths (late workers), one part, more parts than threads, and the
 * number of threads changed between calls; calls whose parts learn
 * their thread's slot: one thread a slot, within the call's slots; and a
 * fork()ed child's calls and free of the pool it inherited. */
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lh-private.h"

#define MAX_PARTS 300

typedef struct {
  unsigned call;                         /* this call's number, to tell calls apart */
  unsigned done[MAX_PARTS];              /* call number once the part ran */
  unsigned repeated;                     /* atomic: parts that ran twice in one call */
  unsigned long long payload[MAX_PARTS]; /* written by the part, read by the caller */
  int spin_part;                         /* this part works much longer than the others (-1 none,
                                            -2: every part short) */
} Call;

/* The part's length: one long part (spin_part), else a few hundred steps,
 * or a few (spin_part -2: every part short). */
static int part_rounds(int part, const Call *c)
{
  if (c->spin_part == -2)
    return 1 + part % 3;
  return part == c->spin_part ? 200000 : 200 + part % 7 * 50;
}

/* Some work whose result the caller checks, longer for one part. */
static unsigned long long payload_of(int part, const Call *c)
{
  unsigned long long x = (unsigned long long)part * 0x9E3779B97F4A7C15ull ^ c->call;
  for (int i = 0; i < part_rounds(part, c); i++)
    x = x * 6364136223846793005ull + 1442695040888963407ull;
  return x;
}

static void run_part(int part, void *arg)
{
  Call *c = arg;
  if (__atomic_exchange_n(&c->done[part], c->call, __ATOMIC_RELAXED) == c->call)
    __atomic_add_fetch(&c->repeated, 1, __ATOMIC_RELAXED);
  c->payload[part] = payload_of(part, c);
}

/* Runs call `number` of n_parts parts; false (and a line) if a part did
 * not run, ran twice, or its result was not seen when the call returned. */
static bool run_call(LhiPool *pool, Call *c, unsigned number, int n_parts, int spin_part,
                     const char *what)
{
  c->call = number;
  c->repeated = 0;
  c->spin_part = spin_part;
  lhi_pool_run(pool, n_parts, run_part, c);
  int missing = 0, wrong = 0;
  for (int p = 0; p < n_parts; p++) {
    missing += c->done[p] != c->call;
    wrong += c->payload[p] != payload_of(p, c);
  }
  if (!missing && !wrong && !c->repeated)
    return true;
  fprintf(stderr,
          "FAIL: %s call %u (%d parts, %d threads): %d parts not run, %d results not seen, "
          "%u run twice\n",
          what, number, n_parts, lhi_pool_threads(pool), missing, wrong, c->repeated);
  return false;
}

/* Slot calls (lhi_pool_run_slots): each slot is one thread's, so no two
 * parts with the same slot run at once, and every slot is below both the
 * call's n_slots and the pool's threads. */
typedef struct {
  Call *call;
  int n_slots;
  int busy[LHI_MAX_THREADS]; /* atomic: the slot's part is running */
  unsigned shared;           /* atomic: parts that found their slot busy */
  unsigned out_of_range;     /* atomic: parts given a slot beyond the call's */
} SlotCall;

static void run_slot_part(int part, int slot, void *arg)
{
  SlotCall *s = arg;
  if (slot < 0 || slot >= s->n_slots) {
    __atomic_add_fetch(&s->out_of_range, 1, __ATOMIC_RELAXED);
  } else if (__atomic_exchange_n(&s->busy[slot], 1, __ATOMIC_ACQ_REL)) {
    __atomic_add_fetch(&s->shared, 1, __ATOMIC_RELAXED);
  }
  run_part(part, s->call);
  if (slot >= 0 && slot < s->n_slots)
    __atomic_store_n(&s->busy[slot], 0, __ATOMIC_RELEASE);
}

static bool run_slot_call(LhiPool *pool, Call *c, unsigned number, int n_parts, int n_slots)
{
  SlotCall s = {.call = c,
                .n_slots = n_slots < lhi_pool_threads(pool) ? n_slots : lhi_pool_threads(pool)};
  c->call = number;
  c->repeated = 0;
  c->spin_part = -1;
  lhi_pool_run_slots(pool, n_parts, n_slots, run_slot_part, &s);
  int missing = 0;
  for (int p = 0; p < n_parts; p++)
    missing += c->done[p] != c->call || c->payload[p] != payload_of(p, c);
  if (!missing && !c->repeated && !s.shared && !s.out_of_range)
    return true;
  fprintf(stderr,
          "FAIL: slots call %u (%d parts, %d slots, %d threads): %d parts not run or not seen, "
          "%u run twice, %u on a busy slot, %u on a slot out of range\n",
          number, n_parts, n_slots, lhi_pool_threads(pool), missing, c->repeated, s.shared,
          s.out_of_range);
  return false;
}

static void pause_us(long us)
{
  struct timespec t = {us / 1000000, (us % 1000000) * 1000};
  nanosleep(&t, NULL);
}

/* This process's threads (Linux's /proc); 0 where that cannot be read. */
static int process_threads(void)
{
  DIR *tasks = opendir("/proc/self/task");
  if (!tasks)
    return 0;
  int n = 0;
  for (struct dirent *e; (e = readdir(tasks));)
    n += e->d_name[0] != '.';
  closedir(tasks);
  return n;
}

/* A child fork()ed after the pool's workers started has the pool but not
 * its threads: its calls run on workers of its own, it frees the pool (no
 * join of its parent's threads), and the parent's pool goes on.  False
 * (and a line) if not. */
static bool fork_test(LhiPool *pool, Call *c)
{
  lhi_pool_set_threads(pool, 4);
  if (!run_call(pool, c, 300000u, 64, -1, "before fork"))
    return false;
  fflush(NULL);
  const pid_t pid = fork();
  if (pid < 0) {
    fprintf(stderr, "fork failed: the fork case is not run\n");
    return true;
  }
  if (pid == 0) {
    alarm(60); /* a hang is a failure, not a stuck suite */
    bool ok = true;
    for (unsigned round = 0; round < 50 && ok; round++)
      ok = run_call(pool, c, 300001u + round, 64, round % 2 ? 10 : -1, "forked child");
    const int threads = process_threads();
    lhi_pool_free(pool);
    if (threads != 0 && threads < 4)
      fprintf(stderr, "FAIL: the forked child ran its calls on %d thread(s), not 4\n", threads);
    _exit(ok && (threads == 0 || threads >= 4) ? 0 : 1);
  }
  int status = 0;
  if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fprintf(stderr, "FAIL: the forked child %s %d\n",
            WIFSIGNALED(status) ? "died of signal" : "exited with",
            WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
    return false;
  }
  return run_call(pool, c, 300100u, 64, -1, "parent after fork");
}

int main(void)
{
  LhiPool *pool;
  if (lhi_pool_new(8, &pool) < 0) {
    fprintf(stderr, "lhi_pool_new: %s\n", lh_last_error());
    return 1;
  }
  static Call c;
  memset(&c, 0, sizeof c);
  int failures = 0, calls = 0;
  unsigned long long seed = 12345;
  for (int round = 0; round < 3000; round++) {
    seed = seed * 6364136223846793005ull + 1;
    const unsigned r = (unsigned)(seed >> 33);
    /* Threads: mostly 8, at times fewer or more (more start workers). */
    if (round % 97 == 0)
      lhi_pool_set_threads(pool, 1 + (int)(r % 12));
    const int n_parts = r % 5 == 0 ? 1 : 1 + (int)(r % MAX_PARTS);
    calls++;
    if (!run_call(pool, &c, (unsigned)round + 1, n_parts,
                  r % 3 == 0 ? (int)(r / 7 % (unsigned)n_parts) : -1, "mixed") &&
        ++failures > 10)
      break;
    /* Now and then a pause longer than the workers watch for the next call
     * (POOL_SPIN_NS, 0.1 ms): they go to sleep and must be woken. */
    if (r % 11 == 0)
      pause_us(150 + r % 300);
  }
  /* Calls back to back of tiny parts, few then many: a worker that has
   * just done the last part of one call looks for another part while the
   * caller sets up the next, larger one. */
  lhi_pool_set_threads(pool, 8);
  for (int round = 0; round < 20000 && failures <= 10; round++) {
    const int n_parts = round % 2 ? 2 + round % 5 : 100 + round % 50;
    calls++;
    if (!run_call(pool, &c, 100000u + (unsigned)round, n_parts, -2, "back-to-back"))
      failures++;
  }
  /* Slot calls: as many slots as threads, fewer (threads beyond take no
   * part), more (clamped to the threads); at times asleep. */
  for (int round = 0; round < 3000 && failures <= 10; round++) {
    seed = seed * 6364136223846793005ull + 1;
    const unsigned r = (unsigned)(seed >> 33);
    if (round % 101 == 0)
      lhi_pool_set_threads(pool, 1 + (int)(r % 12));
    calls++;
    if (!run_slot_call(pool, &c, 200000u + (unsigned)round, 1 + (int)(r % 64),
                       1 + (int)(r / 64 % 14)))
      failures++;
    if (r % 13 == 0)
      pause_us(150 + r % 300);
  }
  calls++;
  if (!fork_test(pool, &c))
    failures++;
  lhi_pool_free(pool);
  printf("pool: %d calls, %d failures\n", calls, failures);
  return failures ? 1 : 0;
}
