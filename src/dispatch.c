/* dispatch.c: where an AUTO context on CUDA sends each call: device frames
 * and page-locked host frames to the GPU, host frames in pageable memory to
 * the CPU's pool or to the GPU, whichever the times measured so far say is
 * cheaper for that call on frames of that format and size.
 *
 * A pageable frame reaches the GPU through a copy into pinned memory on the
 * CPU and a copy over the bus; whether that beats the CPU's threads depends
 * on the host's cores and memory, the GPU, the link and what else runs, so
 * it is measured, not guessed: the host's wall time of each call (both paths
 * return once the results are on the host).  Each path is timed a few times
 * at first, then the cheaper one is taken and the other timed again now and
 * then, less often each time it confirms the choice, so that a change of
 * load is followed.  Both paths give the same bits, so the choice only
 * changes the time. */
#include <string.h>
#include <time.h>

#include "lh-private.h"

/* ------------------------------------------------------------------------ */
/* The chooser: costs in, paths out (no clock, no backend)                   */

static bool same_key(const LhiCostKey *a, const LhiCostKey *b)
{
  return a->op == b->op && a->format == b->format && a->width == b->width && a->height == b->height;
}

/* The entry of key, made (in place of the least recently used one when the
 * table is full) if there is none. */
static LhiCostEntry *entry_of(LhiChooser *chooser, const LhiCostKey *key)
{
  LhiCostEntry *entry = NULL;
  for (int i = 0; i < chooser->n_entries && !entry; i++)
    if (same_key(&chooser->entries[i].key, key))
      entry = &chooser->entries[i];
  if (!entry) {
    if (chooser->n_entries < LHI_CHOOSER_KEYS) {
      entry = &chooser->entries[chooser->n_entries++];
    } else {
      entry = &chooser->entries[0];
      for (int i = 1; i < LHI_CHOOSER_KEYS; i++)
        if (chooser->entries[i].last_use < entry->last_use)
          entry = &chooser->entries[i];
    }
    memset(entry, 0, sizeof *entry);
    entry->key = *key;
  }
  entry->last_use = ++chooser->uses;
  return entry;
}

static LhiPath other_path(LhiPath path)
{
  return path == LHI_PATH_CPU ? LHI_PATH_GPU : LHI_PATH_CPU;
}

static uint32_t timed_calls(const LhiCostEntry *entry, LhiPath path)
{
  return entry->calls[path] > LHI_WARMUP_CALLS ? entry->calls[path] - LHI_WARMUP_CALLS : 0;
}

/* Are both paths timed enough for a first choice? */
static bool probed(const LhiCostEntry *entry)
{
  return timed_calls(entry, LHI_PATH_CPU) >= LHI_PROBE_CALLS &&
         timed_calls(entry, LHI_PATH_GPU) >= LHI_PROBE_CALLS;
}

LhiPath lhi_chooser_pick(LhiChooser *chooser, const LhiCostKey *key)
{
  LhiCostEntry *entry = entry_of(chooser, key);
  if (!entry->decided)
    /* Each path in turn, the GPU first: its warm-up (loading the kernels)
     * is the longer one and is over soonest. */
    return entry->calls[LHI_PATH_CPU] < entry->calls[LHI_PATH_GPU] ? LHI_PATH_CPU : LHI_PATH_GPU;
  if (entry->since_probe >= entry->probe_interval) {
    entry->since_probe = 0;
    return other_path(entry->chosen);
  }
  entry->since_probe++;
  return entry->chosen;
}

LhiPath lhi_chooser_best(LhiChooser *chooser, const LhiCostKey *key, LhiPath fallback)
{
  LhiCostEntry *entry = entry_of(chooser, key);
  return entry->decided ? entry->chosen : fallback;
}

void lhi_chooser_record(LhiChooser *chooser, const LhiCostKey *key, LhiPath path, double seconds)
{
  LhiCostEntry *entry = entry_of(chooser, key);
  uint32_t timed = timed_calls(entry, path);
  entry->calls[path]++;
  if (entry->calls[path] <= LHI_WARMUP_CALLS)
    return;
  if (!entry->decided) {
    /* The fastest probe: a thread preempted or a page faulted only adds
     * time, and one such call must not decide. */
    if (timed == 0 || seconds < entry->cost[path])
      entry->cost[path] = seconds;
    if (probed(entry)) {
      entry->decided = true;
      entry->chosen =
          entry->cost[LHI_PATH_GPU] < entry->cost[LHI_PATH_CPU] ? LHI_PATH_GPU : LHI_PATH_CPU;
      entry->probe_interval = LHI_REPROBE_FIRST;
      entry->since_probe = 0;
    }
    return;
  }
  /* One call may take far longer (preempted, a page fault): it moves the
   * average as one twice the average would, so that a change of load that
   * lasts moves it within a few calls and a hiccup does not. */
  const double before = entry->cost[path];
  if (before > 0 && seconds > LHI_OUTLIER_RATIO * before)
    seconds = LHI_OUTLIER_RATIO * before;
  const double weight = path == entry->chosen ? LHI_CHOSEN_WEIGHT : LHI_PROBED_WEIGHT;
  entry->cost[path] += weight * (seconds - before);
  LhiPath other = other_path(entry->chosen);
  if (entry->cost[other] < (1.0 - LHI_SWITCH_MARGIN) * entry->cost[entry->chosen]) {
    entry->chosen = other;
    entry->probe_interval = LHI_REPROBE_FIRST;
    entry->since_probe = 0;
    chooser->switches++;
  } else if (path == other) {
    /* A probe that found the other path's cost as it was confirms the
     * choice: look again later.  One that found it moved looks again soon. */
    if (seconds > (1.0 + LHI_SWITCH_MARGIN) * before ||
        seconds < (1.0 - LHI_SWITCH_MARGIN) * before)
      entry->probe_interval = LHI_REPROBE_FIRST;
    else if (entry->probe_interval < LHI_REPROBE_LAST)
      entry->probe_interval *= 2;
  }
}

/* ------------------------------------------------------------------------ */
/* Routes: the chooser's paths as the context's backends                     */

static uint64_t now_ns(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void take(LhContext *context, LhiPath path, LhiRoute *route)
{
  route->path = path;
  route->backend = path == LHI_PATH_CPU ? &lhi_cpu_backend : context->backend;
  route->state = path == LHI_PATH_CPU ? context->cpu_state : context->state;
}

void lhi_route_begin(LhContext *context, LhiOperation op, const LhFrame *frames, size_t n,
                     bool stateful, const LhiBackend *stay, LhiRoute *route)
{
  memset(route, 0, sizeof *route);
  route->backend = context->backend;
  route->state = context->state;
  route->path = LHI_PATH_GPU;
  if (!context->cpu_state || n == 0)
    return;
  for (size_t i = 0; i < n; i++)
    if (frames[i].memory != LH_MEMORY_HOST ||
        (context->backend->claims_frame &&
         context->backend->claims_frame(context->state, &frames[i])))
      return;
  route->key = (LhiCostKey){op, frames[0].format, frames[0].width, frames[0].height};
  if (stateful) {
    if (stay == &lhi_cpu_backend)
      take(context, LHI_PATH_CPU, route);
    else if (!stay || stay != context->backend) {
      /* A new stream: where this call is cheaper, or else where the
       * analysis of such frames is (reading the frame costs the most). */
      LhiCostKey analysis = route->key;
      analysis.op = LHI_OP_ANALYZE;
      LhiPath fallback = lhi_chooser_best(&context->chooser, &analysis, LHI_PATH_GPU);
      take(context, lhi_chooser_best(&context->chooser, &route->key, fallback), route);
    }
    return;
  }
  take(context, lhi_chooser_pick(&context->chooser, &route->key), route);
  route->timed = true;
  route->start_ns = now_ns();
}

void lhi_route_end(LhContext *context, const LhiRoute *route, int status, size_t n)
{
  if (status < 0)
    return;
  if (route->timed && n > 0)
    lhi_chooser_record(&context->chooser, &route->key, route->path,
                       (double)(now_ns() - route->start_ns) * 1e-9 / (double)n);
  context->last_backend = route->backend->kind;
}
