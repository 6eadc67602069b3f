/* dispatch-test.c: the per-frame choice of an AUTO context (dispatch.c),
 * with no GPU.  The chooser gets costs made up by the test and must probe
 * both paths, take the cheaper, look at the other again less and less often,
 * follow drift on either path without flapping, keep keys apart and forget
 * the least recently used.  Routes must send CUDA and page-locked frames to
 * the context's own backend whatever the costs say, keep stateful streams on
 * their state's side, and report the side taken.  Last, real calls through a
 * context whose "GPU" is a stand-in running the CPU code under the CUDA kind:
 * the front ends route analysis, equalization, temporal windows, overlays and
 * frame differences, the costs measured by the clock reach the chooser, and
 * the results equal a CPU context's, byte for byte. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frame-gen.h"
#include "lh-private.h"
#include "test-check.h"

static const LhiCostKey key_4k = {LHI_OP_ANALYZE, LH_FORMAT_NV12, 3840, 2160};

/* Picks and records one call whose path costs cost[path]; returns the path. */
static LhiPath call(LhiChooser *chooser, const LhiCostKey *key, const double *cost)
{
  LhiPath path = lhi_chooser_pick(chooser, key);
  lhi_chooser_record(chooser, key, path, cost[path]);
  return path;
}

static const LhiCostEntry *entry_of(const LhiChooser *chooser, const LhiCostKey *key)
{
  for (int i = 0; i < chooser->n_entries; i++)
    if (memcmp(&chooser->entries[i].key, key, sizeof *key) == 0)
      return &chooser->entries[i];
  return NULL;
}

/* Probing: each path in turn, warm-up left out, then the cheaper. */
static void test_probing(void)
{
  LhiChooser chooser = {0};
  double cost[2] = {[LHI_PATH_CPU] = 2e-3, [LHI_PATH_GPU] = 1e-3};
  const uint32_t each = LHI_WARMUP_CALLS + LHI_PROBE_CALLS;
  uint32_t taken[2] = {0, 0};
  LhiPath previous = LHI_PATH_COUNT;
  for (uint32_t i = 0; i < 2 * each; i++) {
    LhiPath path = lhi_chooser_pick(&chooser, &key_4k);
    CHECK(path != previous, "probe %u took path %d twice in a row", i, (int)path);
    /* The warm-up calls are dear and must not count. */
    bool warm_up = taken[path] < LHI_WARMUP_CALLS;
    lhi_chooser_record(&chooser, &key_4k, path, warm_up ? 1.0 : cost[path]);
    taken[path]++;
    previous = path;
  }
  const LhiCostEntry *e = entry_of(&chooser, &key_4k);
  CHECK(e && e->decided, "not decided after %u probes of each path", each);
  CHECK(e && e->chosen == LHI_PATH_GPU, "chose the dearer path");
  CHECK(e && fabs(e->cost[LHI_PATH_CPU] - 2e-3) < 1e-12 &&
            fabs(e->cost[LHI_PATH_GPU] - 1e-3) < 1e-12,
        "probe means %g %g, not 2e-3 1e-3 (the warm-up counted?)", e ? e->cost[0] : 0,
        e ? e->cost[1] : 0);
  CHECK(taken[0] == each && taken[1] == each, "probes %u %u, not %u each", taken[0], taken[1],
        each);

  /* Re-probes of the CPU after 16, 32, 64, ... calls, up to 1024, while it
   * stays dearer. */
  uint32_t expected = LHI_REPROBE_FIRST, run = 0;
  int probes = 0;
  for (int i = 0; i < 20000; i++) {
    LhiPath path = call(&chooser, &key_4k, cost);
    if (path == LHI_PATH_GPU) {
      run++;
      continue;
    }
    CHECK(run == expected, "re-probe %d after %u calls, not %u", probes, run, expected);
    probes++;
    run = 0;
    expected = expected * 2 > LHI_REPROBE_LAST ? LHI_REPROBE_LAST : expected * 2;
  }
  CHECK(probes >= 10 && probes <= 30, "%d re-probes in 20000 calls", probes);
  CHECK(chooser.switches == 0, "%" PRIu64 " switches with steady costs", chooser.switches);
}

/* Outliers (a preempted thread, a page fault) decide nothing: not while
 * probing, not once decided. */
static void test_outliers(void)
{
  LhiChooser chooser = {0};
  double cost[2] = {[LHI_PATH_CPU] = 1.5e-3, [LHI_PATH_GPU] = 1e-3};
  int gpu_timed = 0;
  while (!entry_of(&chooser, &key_4k) || !entry_of(&chooser, &key_4k)->decided) {
    LhiPath path = lhi_chooser_pick(&chooser, &key_4k);
    bool hiccup = path == LHI_PATH_GPU && ++gpu_timed == LHI_WARMUP_CALLS + 1;
    lhi_chooser_record(&chooser, &key_4k, path, hiccup ? 100e-3 : cost[path]);
  }
  CHECK(entry_of(&chooser, &key_4k)->chosen == LHI_PATH_GPU,
        "one slow probe of the GPU put the choice on the CPU");
  for (int i = 0; i < 5; i++)
    call(&chooser, &key_4k, cost);
  lhi_chooser_record(&chooser, &key_4k, LHI_PATH_GPU, 100e-3);
  CHECK(entry_of(&chooser, &key_4k)->chosen == LHI_PATH_GPU && chooser.switches == 0,
        "one slow call moved the choice");
  CHECK(entry_of(&chooser, &key_4k)->cost[LHI_PATH_GPU] < 1.2e-3,
        "one call of 100x the average moved it to %g", entry_of(&chooser, &key_4k)->cost[1]);
}

/* The chosen path gets dearer: the switch comes within a few calls. */
static void test_drift_of_chosen(void)
{
  LhiChooser chooser = {0};
  double cost[2] = {[LHI_PATH_CPU] = 2e-3, [LHI_PATH_GPU] = 1e-3};
  for (int i = 0; i < 200; i++)
    call(&chooser, &key_4k, cost);
  cost[LHI_PATH_GPU] = 5e-3; /* the bus is busy now */
  int calls = 0;
  while (calls < 100 && entry_of(&chooser, &key_4k)->chosen == LHI_PATH_GPU) {
    call(&chooser, &key_4k, cost);
    calls++;
  }
  CHECK(entry_of(&chooser, &key_4k)->chosen == LHI_PATH_CPU, "still on the GPU after %d calls",
        calls);
  CHECK(calls <= 10, "took %d calls to leave a path 5x dearer", calls);
  CHECK(chooser.switches == 1, "%" PRIu64 " switches", chooser.switches);
  /* And the CPU path stays chosen; the GPU is looked at again from 16 on. */
  uint32_t taken[2] = {0, 0};
  for (int i = 0; i < LHI_REPROBE_FIRST + 1; i++)
    taken[call(&chooser, &key_4k, cost)]++;
  CHECK(taken[LHI_PATH_GPU] == 1, "the GPU re-probed %u times in the first %d calls after a switch",
        taken[LHI_PATH_GPU], LHI_REPROBE_FIRST + 1);
}

/* The other path gets cheaper: only its probes see it, and the switch comes
 * by the second probe after the change. */
static void test_drift_of_other(void)
{
  LhiChooser chooser = {0};
  double cost[2] = {[LHI_PATH_CPU] = 2e-3, [LHI_PATH_GPU] = 1e-3};
  for (int i = 0; i < 100; i++)
    call(&chooser, &key_4k, cost);
  cost[LHI_PATH_CPU] = 0.4e-3; /* the cores are free now */
  int cpu_probes = 0, calls = 0;
  while (calls < 5000 && entry_of(&chooser, &key_4k)->chosen == LHI_PATH_GPU) {
    cpu_probes += call(&chooser, &key_4k, cost) == LHI_PATH_CPU;
    calls++;
  }
  CHECK(entry_of(&chooser, &key_4k)->chosen == LHI_PATH_CPU, "never moved to the cheaper CPU");
  CHECK(cpu_probes <= 2, "%d probes of the cheaper CPU before moving", cpu_probes);
}

/* Costs within the margin, with noise: no flapping. */
static void test_no_flapping(void)
{
  LhiChooser chooser = {0};
  uint64_t rng = 7;
  int calls_on[2] = {0, 0};
  for (int i = 0; i < 20000; i++) {
    double noise = (double)(gen_next(&rng) % 1001) / 1000.0 * 0.06; /* 0 .. 6 % */
    double cost[2] = {[LHI_PATH_CPU] = 1.00e-3 * (1 + noise), [LHI_PATH_GPU] = 1.02e-3};
    calls_on[call(&chooser, &key_4k, cost)]++;
  }
  CHECK(chooser.switches <= 2, "%" PRIu64 " switches between paths within 6 %% of each other",
        chooser.switches);
}

/* Keys apart; the least recently used one forgotten when the table is full;
 * lhi_chooser_best does not probe. */
static void test_keys(void)
{
  LhiChooser chooser = {0};
  const LhiCostKey small = {LHI_OP_ANALYZE, LH_FORMAT_NV12, 64, 36};
  const LhiCostKey clahe = {LHI_OP_CLAHE, LH_FORMAT_NV12, 3840, 2160};
  double big_cost[2] = {[LHI_PATH_CPU] = 3e-3, [LHI_PATH_GPU] = 1e-3};
  double small_cost[2] = {[LHI_PATH_CPU] = 5e-6, [LHI_PATH_GPU] = 60e-6};
  CHECK(lhi_chooser_best(&chooser, &small, LHI_PATH_CPU) == LHI_PATH_CPU &&
            lhi_chooser_best(&chooser, &small, LHI_PATH_GPU) == LHI_PATH_GPU,
        "an undecided key did not give the fallback");
  for (int i = 0; i < 50; i++) {
    call(&chooser, &key_4k, big_cost);
    call(&chooser, &small, small_cost);
    call(&chooser, &clahe, small_cost); /* same frames, another call: its own costs */
  }
  CHECK(entry_of(&chooser, &key_4k)->chosen == LHI_PATH_GPU, "4K analysis not on the GPU");
  CHECK(entry_of(&chooser, &small)->chosen == LHI_PATH_CPU, "small analysis not on the CPU");
  CHECK(entry_of(&chooser, &clahe)->chosen == LHI_PATH_CPU, "4K CLAHE not on the CPU");
  const LhiCostEntry before = *entry_of(&chooser, &small);
  for (int i = 0; i < 10; i++)
    CHECK(lhi_chooser_best(&chooser, &small, LHI_PATH_GPU) == LHI_PATH_CPU, "best is not chosen");
  CHECK(entry_of(&chooser, &small)->since_probe == before.since_probe,
        "lhi_chooser_best advanced the probe counter");

  /* Fill the table: key_4k, used last of the three, and the new keys stay;
   * small, the least recently used, goes. */
  call(&chooser, &clahe, small_cost);
  call(&chooser, &key_4k, big_cost);
  for (int k = 0; k < LHI_CHOOSER_KEYS - 2; k++) {
    LhiCostKey key = {LHI_OP_ANALYZE, LH_FORMAT_GRAY8, 100 + k, 100};
    call(&chooser, &key, small_cost);
  }
  CHECK(chooser.n_entries == LHI_CHOOSER_KEYS, "%d entries", chooser.n_entries);
  CHECK(entry_of(&chooser, &small) == NULL, "the least recently used key is still there");
  CHECK(entry_of(&chooser, &key_4k) && entry_of(&chooser, &key_4k)->decided,
        "a recent key was forgotten");
  CHECK(entry_of(&chooser, &clahe) && entry_of(&chooser, &clahe)->decided,
        "a recent key was forgotten");
  /* The forgotten key starts over with probes. */
  CHECK(lhi_chooser_pick(&chooser, &small) == LHI_PATH_GPU && !entry_of(&chooser, &small)->decided,
        "a key made again is not probed afresh");
}

/* ------------------------------------------------------------------------ */
/* Routes, through a context whose GPU is a stand-in                          */

/* The stand-in runs the CPU code under the CUDA kind and counts its calls;
 * it claims CUDA frames and the host memory the test calls page-locked. */
static int stand_in_calls;
static const void *page_locked_memory;

static bool stand_in_claims(void *state, const LhFrame *frame)
{
  (void)state;
  return frame->memory == LH_MEMORY_CUDA || frame->planes[0] == page_locked_memory;
}

static int stand_in_analyze(void *state, LhiJob *jobs, size_t n)
{
  stand_in_calls++;
  return lhi_cpu_backend.analyze(state, jobs, n);
}

static int stand_in_equalize(void *state, LhiEqualizeJob *job)
{
  stand_in_calls++;
  return lhi_cpu_backend.equalize(state, job);
}

static int stand_in_overlay(void *state, const LhiOverlayJob *job)
{
  stand_in_calls++;
  return lhi_cpu_backend.overlay(state, job);
}

static int stand_in_difference(void *state, LhDifference *difference, LhiDifferenceJob *job)
{
  stand_in_calls++;
  return lhi_cpu_backend.difference(state, difference, job);
}

static LhiBackend stand_in;

/* An AUTO context as lh_context_new makes it on a GPU host, the stand-in
 * in the GPU's place. */
static LhContext *dual_context(void)
{
  stand_in = lhi_cpu_backend;
  stand_in.name = "stand-in";
  stand_in.kind = LH_BACKEND_CUDA;
  stand_in.claims_frame = stand_in_claims;
  stand_in.analyze = stand_in_analyze;
  stand_in.equalize = stand_in_equalize;
  stand_in.overlay = stand_in_overlay;
  stand_in.difference = stand_in_difference;
  LhContext *c = calloc(1, sizeof *c);
  if (!c || stand_in.open(&c->state) < 0 || lhi_cpu_backend.open(&c->cpu_state) < 0) {
    fprintf(stderr, "cannot make the test's context: %s\n", lh_last_error());
    exit(1);
  }
  c->backend = &stand_in;
  c->last_backend = LH_BACKEND_CUDA;
  return c;
}

/* Makes the chooser of c pick the CPU for key (decided, long before a probe). */
static void prefer_cpu(LhContext *c, const LhiCostKey *key)
{
  double cost[2] = {[LHI_PATH_CPU] = 1e-3, [LHI_PATH_GPU] = 9e-3};
  for (int i = 0; i < 12; i++)
    call(&c->chooser, key, cost);
  CHECK(lhi_chooser_best(&c->chooser, key, LHI_PATH_GPU) == LHI_PATH_CPU, "setup: not on the CPU");
}

static void test_routes(void)
{
  LhContext *c = dual_context();
  static uint8_t pixels[4][64 * 36];
  LhFrame host, locked, device;
  lh_frame_init(&host, LH_FORMAT_GRAY8, LH_MEMORY_HOST, 64, 36, pixels[0], 0);
  lh_frame_init(&locked, LH_FORMAT_GRAY8, LH_MEMORY_HOST, 64, 36, pixels[1], 0);
  lh_frame_init(&device, LH_FORMAT_GRAY8, LH_MEMORY_CUDA, 64, 36, pixels[2], 0);
  page_locked_memory = pixels[1];
  const LhiCostKey key = {LHI_OP_ANALYZE, LH_FORMAT_GRAY8, 64, 36};
  prefer_cpu(c, &key);
  /* Past any re-probe: the chosen path's calls only. */
  c->chooser.entries[0].probe_interval = 1u << 30;

  LhiRoute route;
  lhi_route_begin(c, LHI_OP_ANALYZE, &host, 1, false, NULL, &route);
  CHECK(route.backend == &lhi_cpu_backend && route.state == c->cpu_state && route.timed,
        "a pageable host frame did not go to the cheaper CPU");
  lhi_route_end(c, &route, LH_OK, 1);
  CHECK(lh_context_last_backend(c) == LH_BACKEND_CPU, "last backend %s after a CPU call",
        lh_backend_name(lh_context_last_backend(c)));
  /* CUDA memory and page-locked memory never move, whatever the costs. */
  for (int i = 0; i < 100; i++) {
    lhi_route_begin(c, LHI_OP_ANALYZE, &device, 1, false, NULL, &route);
    CHECK(route.backend == &stand_in && !route.timed, "a CUDA frame went to the %s",
          route.backend->name);
    lhi_route_begin(c, LHI_OP_ANALYZE, &locked, 1, false, NULL, &route);
    CHECK(route.backend == &stand_in && !route.timed, "a page-locked frame went to the %s",
          route.backend->name);
  }
  lhi_route_end(c, &route, LH_OK, 1);
  CHECK(lh_context_last_backend(c) == LH_BACKEND_CUDA, "last backend %s after a GPU call",
        lh_backend_name(lh_context_last_backend(c)));
  /* A batch with one CUDA frame among host frames goes whole to the GPU. */
  LhFrame batch[3] = {host, host, device};
  lhi_route_begin(c, LHI_OP_ANALYZE, batch, 3, false, NULL, &route);
  CHECK(route.backend == &stand_in, "a batch holding a CUDA frame went to the %s",
        route.backend->name);
  /* A failed call reports nothing and records no time. */
  uint32_t calls_before = c->chooser.entries[0].calls[LHI_PATH_CPU];
  lhi_route_begin(c, LHI_OP_ANALYZE, &host, 1, false, NULL, &route);
  lhi_route_end(c, &route, LH_ERROR_INVALID_ARGUMENT, 1);
  CHECK(lh_context_last_backend(c) == LH_BACKEND_CUDA, "a failed call was reported");
  CHECK(c->chooser.entries[0].calls[LHI_PATH_CPU] == calls_before, "a failed call was timed");

  /* State: it stays where it lives; an empty one starts where analysis of
   * such frames is cheaper, without probing. */
  lhi_route_begin(c, LHI_OP_DIFFERENCE, &host, 1, true, &stand_in, &route);
  CHECK(route.backend == &stand_in && !route.timed, "a GPU state's stream left the GPU");
  lhi_route_begin(c, LHI_OP_DIFFERENCE, &host, 1, true, &lhi_cpu_backend, &route);
  CHECK(route.backend == &lhi_cpu_backend && !route.timed, "a CPU state's stream left the CPU");
  lhi_route_begin(c, LHI_OP_DIFFERENCE, &device, 1, true, &lhi_cpu_backend, &route);
  CHECK(route.backend == &stand_in, "a CUDA frame went to the CPU for its state");
  lhi_route_begin(c, LHI_OP_DIFFERENCE, &host, 1, true, NULL, &route);
  CHECK(route.backend == &lhi_cpu_backend && !route.timed,
        "an empty state did not start where analysis is cheaper");
  LhFrame other = host;
  other.width = 32;
  lhi_route_begin(c, LHI_OP_DIFFERENCE, &other, 1, true, NULL, &route);
  CHECK(route.backend == &stand_in, "a state of frames never measured did not start on the GPU");
  lh_context_free(c);

  /* A context with one backend sends everything there. */
  LhContext *cpu = NULL;
  CHECK(lh_context_new(LH_BACKEND_CPU, &cpu) == LH_OK, "no CPU context");
  if (cpu) {
    lhi_route_begin(cpu, LHI_OP_ANALYZE, &host, 1, false, NULL, &route);
    CHECK(route.backend == &lhi_cpu_backend && !route.timed, "a CPU context routed elsewhere");
    lh_context_free(cpu);
  }
}

/* ------------------------------------------------------------------------ */
/* Real calls through the front ends                                         */

static bool same_stats(const LhStats *a, const LhStats *b)
{
  return a->count == b->count && a->mean == b->mean && a->stddev == b->stddev && a->min == b->min &&
         a->max == b->max && a->median == b->median && a->n_bins == b->n_bins &&
         memcmp(a->histogram, b->histogram, a->n_bins * sizeof *a->histogram) == 0 &&
         memcmp(a->percentile_value, b->percentile_value, sizeof a->percentile_value) == 0;
}

static void test_front_ends(void)
{
  LhContext *dual = dual_context();
  LhContext *cpu = NULL;
  if (lh_context_new(LH_BACKEND_CPU, &cpu) < 0) {
    CHECK(false, "no CPU context");
    lh_context_free(dual);
    return;
  }
  page_locked_memory = NULL;
  LhOptions options;
  lh_options_init(&options);
  lh_options_set_percentiles(&options, "1,50,99");
  LhTemporal *temporal[2] = {NULL, NULL};
  LhDifference *difference[2] = {NULL, NULL};
  for (int k = 0; k < 2; k++) {
    lh_temporal_new(6, 0.3, &temporal[k]);
    lh_difference_new(&difference[k]);
  }
  LhEqualizeOptions eq;
  lh_equalize_options_init(&eq);
  eq.mode = LH_EQUALIZE_CLAHE;
  eq.tiles_x = 5;
  eq.tiles_y = 3;
  LhOverlayOptions overlay;
  lh_overlay_options_init(&overlay);

  int served[2] = {0, 0}, switches = 0, temporal_sides[2] = {0, 0}, difference_sides[2] = {0, 0};
  LhBackend previous = LH_BACKEND_AUTO;
  for (int f = 0; f < 60; f++) {
    /* A stream of NV12 frames, odd-sized and padded, a scene cut at 30. */
    GenFrame g[2];
    GenDistribution d = f < 30 ? GEN_PHOTO : GEN_UNIFORM;
    for (int k = 0; k < 2; k++)
      if (gen_frame(&g[k], LH_FORMAT_NV12, 161, 97, 0, 24, 0, d, 1000 + (uint64_t)f) < 0) {
        CHECK(false, "no memory for frames");
        return;
      }
    LhStats s[2];
    double diff[2];
    LhContext *ctx[2] = {dual, cpu};
    for (int k = 0; k < 2; k++) {
      lh_stats_init(&s[k]);
      int calls = stand_in_calls;
      CHECK(lh_analyze(ctx[k], &g[k].frame, &options, &s[k]) == LH_OK, "analyze, frame %d", f);
      if (k == 0) {
        LhBackend b = lh_context_last_backend(dual);
        CHECK((b == LH_BACKEND_CUDA) == (stand_in_calls == calls + 1),
              "frame %d reported on %s, the stand-in called %d times", f, lh_backend_name(b),
              stand_in_calls - calls);
        served[b == LH_BACKEND_CUDA]++;
        switches += previous != LH_BACKEND_AUTO && b != previous;
        previous = b;
      }
      eq.temporal = temporal[k];
      calls = stand_in_calls;
      CHECK(lh_equalize(ctx[k], &g[k].frame, &g[k].frame, &eq) == LH_OK, "equalize, frame %d", f);
      if (k == 0)
        temporal_sides[stand_in_calls > calls]++;
      CHECK(lh_overlay(ctx[k], &g[k].frame, &s[k], &overlay) == LH_OK, "overlay, frame %d", f);
      calls = stand_in_calls;
      CHECK(lh_difference_push(ctx[k], difference[k], &g[k].frame, &diff[k]) == LH_OK,
            "difference, frame %d", f);
      if (k == 0)
        difference_sides[stand_in_calls > calls]++;
    }
    CHECK(same_stats(&s[0], &s[1]), "frame %d: statistics differ from the CPU context's", f);
    CHECK(memcmp(g[0].allocation, g[1].allocation, g[0].size) == 0,
          "frame %d: the equalized frame with its overlay differs from the CPU context's", f);
    CHECK((isnan(diff[0]) && isnan(diff[1]) && f == 0) || diff[0] == diff[1],
          "frame %d: difference %.17g, the CPU context's %.17g", f, diff[0], diff[1]);
    for (int k = 0; k < 2; k++) {
      lh_stats_clear(&s[k]);
      gen_free(&g[k]);
    }
  }
  CHECK(served[0] > 0 && served[1] > 0, "analysis served %d on the CPU, %d on the stand-in",
        served[0], served[1]);
  CHECK(switches >= 2, "only %d switches while probing", switches);
  /* A temporal window and a difference state are on one side after their
   * first frame (the first one starts on the GPU: no decision yet). */
  CHECK(temporal_sides[0] >= 59 || temporal_sides[1] >= 59,
        "the temporal stream moved: %d frames on the CPU, %d on the stand-in", temporal_sides[0],
        temporal_sides[1]);
  CHECK(difference_sides[0] == 60 || difference_sides[1] == 60,
        "the difference stream moved: %d frames on the CPU, %d on the stand-in",
        difference_sides[0], difference_sides[1]);
  /* Real times reached the chooser. */
  const LhiCostKey key = {LHI_OP_ANALYZE, LH_FORMAT_NV12, 161, 97};
  const LhiCostEntry *e = entry_of(&dual->chooser, &key);
  CHECK(e && e->decided && e->cost[0] > 0 && e->cost[1] > 0,
        "the analysis costs were not measured");
  if (e)
    printf("161x97 NV12 analysis: cpu %.1f us, stand-in %.1f us a frame, chose %s\n",
           e->cost[0] * 1e6, e->cost[1] * 1e6, e->chosen == LHI_PATH_CPU ? "cpu" : "stand-in");
  /* Threads reach the CPU side too. */
  CHECK(lh_context_set_threads(dual, 3) == LH_OK, "set threads");
  CHECK(lhi_pool_threads(((LhiCpuState *)dual->cpu_state)->pool) == 3,
        "the CPU side has %d threads, not 3",
        lhi_pool_threads(((LhiCpuState *)dual->cpu_state)->pool));
  for (int k = 0; k < 2; k++) {
    lh_temporal_free(temporal[k]);
    lh_difference_free(difference[k]);
  }
  lh_context_free(dual);
  lh_context_free(cpu);
}

/* Without a GPU, AUTO is the CPU and says so for every call. */
static void test_auto_without_gpu(void)
{
  LhContext *c = NULL;
  CHECK(lh_context_new(LH_BACKEND_AUTO, &c) == LH_OK, "no AUTO context");
  if (!c)
    return;
  if (lh_context_backend(c) != LH_BACKEND_CPU) {
    printf("a GPU is usable here: the CPU-only AUTO case is left to the GPU test\n");
    lh_context_free(c);
    return;
  }
  CHECK(c->cpu_state == NULL, "a CPU AUTO context keeps a second CPU backend");
  GenFrame g;
  if (gen_frame(&g, LH_FORMAT_RGB, 33, 17, 0, 5, 1, GEN_UNIFORM, 5) == 0) {
    LhStats s;
    lh_stats_init(&s);
    CHECK(lh_analyze(c, &g.frame, NULL, &s) == LH_OK, "analyze");
    CHECK(lh_context_last_backend(c) == LH_BACKEND_CPU, "last backend %s",
          lh_backend_name(lh_context_last_backend(c)));
    lh_stats_clear(&s);
    gen_free(&g);
  }
  lh_context_free(c);
  CHECK(lh_context_last_backend(NULL) == LH_BACKEND_CPU, "NULL context");
}

int main(void)
{
  test_probing();
  test_outliers();
  test_drift_of_chosen();
  test_drift_of_other();
  test_no_flapping();
  test_keys();
  test_routes();
  test_front_ends();
  test_auto_without_gpu();
  printf("%d checks, %d failures\n", checks, failures);
  return failures != 0;
}
