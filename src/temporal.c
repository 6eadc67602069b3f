/* temporal.c: the temporal state of video equalization (a window of LUTs,
 * restarted at scene cuts), the scene-cut distance, and the CPU's windows. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lh-private.h"

LH_API int lh_temporal_new(int window, double cut_threshold, LhTemporal **out)
{
  if (!out)
    return lhi_error(LH_ERROR_INVALID_ARGUMENT, "temporal pointer is NULL");
  *out = NULL;
  if (window < 1 || window > LH_TEMPORAL_MAX_WINDOW)
    return lhi_error(LH_ERROR_INVALID_ARGUMENT, "temporal window %d is not in 1 .. %d", window,
                     LH_TEMPORAL_MAX_WINDOW);
  if (!(cut_threshold >= 0.0 && cut_threshold <= 1.0))
    return lhi_error(LH_ERROR_INVALID_ARGUMENT, "scene-cut threshold %g is not in [0, 1]",
                     cut_threshold);
  LhTemporal *temporal = calloc(1, sizeof *temporal);
  if (!temporal)
    return lhi_error(LH_ERROR_NO_MEMORY, "out of memory for a temporal state");
  temporal->window = window;
  temporal->cut_threshold = (uint32_t)llround(cut_threshold * (double)(1u << (LHI_CUT_SHIFT + 1)));
  *out = temporal;
  return LH_OK;
}

static void drop_data(LhTemporal *temporal)
{
  if (temporal->ops)
    temporal->ops->free(temporal->data);
  temporal->ops = NULL;
  temporal->data = NULL;
  memset(&temporal->key, 0, sizeof temporal->key);
}

LH_API void lh_temporal_free(LhTemporal *temporal)
{
  if (!temporal)
    return;
  drop_data(temporal);
  free(temporal);
}

LH_API void lh_temporal_reset(LhTemporal *temporal)
{
  if (temporal && temporal->ops)
    temporal->ops->reset(temporal->data);
}

LH_API int lh_temporal_query(LhTemporal *temporal, int *frames, uint64_t *cuts)
{
  if (!temporal)
    return lhi_error(LH_ERROR_INVALID_ARGUMENT, "temporal state is NULL");
  int n = 0;
  uint64_t c = 0;
  if (temporal->ops) {
    int status = temporal->ops->query(temporal->data, &n, &c);
    if (status < 0)
      return status;
  }
  if (frames)
    *frames = n;
  if (cuts)
    *cuts = c;
  return LH_OK;
}

/* Field by field: a key's padding bytes are whatever its initializer left. */
static bool same_key(const LhiTemporalKey *a, const LhiTemporalKey *b)
{
  return a->backend == b->backend && a->place == b->place && a->kind == b->kind &&
         a->width == b->width && a->height == b->height && a->bit_depth == b->bit_depth &&
         a->tiles_x == b->tiles_x && a->tiles_y == b->tiles_y && a->orientation == b->orientation &&
         a->black == b->black && a->white == b->white && a->clip == b->clip &&
         a->weights.kr == b->weights.kr && a->weights.kg == b->weights.kg &&
         a->weights.kb == b->weights.kb && a->weights.one == b->weights.one;
}

LhiTemporalKey lhi_temporal_key(const LhiBackend *backend, const LhiEqualizeJob *job, int width,
                                int height)
{
  LhiTemporalKey key = {.backend = backend,
                        .kind = job->kind,
                        .width = width,
                        .height = height,
                        .bit_depth = job->bit_depth,
                        .black = job->black,
                        .white = job->white};
  if (lhi_format_info(job->in.format)->r >= 0) /* the matrix makes no other format's luma */
    key.weights = job->weights;
  if (job->kind == LHI_EQUALIZE_CLAHE) {
    key.tiles_x = job->grid.tiles_x;
    key.tiles_y = job->grid.tiles_y;
    key.orientation = job->grid.orientation;
    key.clip = job->grid.clip;
  }
  return key;
}

void *lhi_temporal_data(LhTemporal *temporal, const LhiTemporalKey *key)
{
  if (temporal->ops && !same_key(&temporal->key, key))
    drop_data(temporal);
  return temporal->data;
}

void lhi_temporal_attach(LhTemporal *temporal, const LhiTemporalKey *key, const LhiTemporalOps *ops,
                         void *data)
{
  drop_data(temporal);
  temporal->key = *key;
  temporal->ops = ops;
  temporal->data = data;
}

/* ------------------------------------------------------------------------ */
/* The scene-cut distance                                                    */

void lhi_cut_profile(const uint64_t *histogram, int bit_depth, uint32_t *profile)
{
  uint64_t coarse[LHI_CUT_BINS] = {0};
  uint64_t total = 0;
  uint32_t n_bins = 1u << bit_depth;
  int shift = bit_depth - LHI_CUT_LOG2_BINS;
  for (uint32_t v = 0; v < n_bins; v++) {
    coarse[v >> shift] += histogram[v];
    total += histogram[v];
  }
  for (int k = 0; k < LHI_CUT_BINS; k++)
    profile[k] = lhi_cut_share(coarse[k], total);
}

uint32_t lhi_cut_distance(const uint32_t *a, const uint32_t *b)
{
  uint32_t d = 0;
  for (int k = 0; k < LHI_CUT_BINS; k++)
    d += a[k] > b[k] ? a[k] - b[k] : b[k] - a[k];
  return d;
}

LH_API double lh_histogram_distance(const uint64_t *a, const uint64_t *b, int bit_depth)
{
  if (!a || !b || bit_depth < 8 || bit_depth > 16)
    return NAN;
  /* Sums of many frames may pass the 2^44 counts that lhi_cut_share's 64
   * bits take: the same shares with 128-bit products. */
  const uint64_t *h[2] = {a, b};
  uint32_t profile[2][LHI_CUT_BINS];
  uint32_t n_bins = 1u << bit_depth;
  int shift = bit_depth - LHI_CUT_LOG2_BINS;
  for (int i = 0; i < 2; i++) {
    unsigned __int128 coarse[LHI_CUT_BINS] = {0}, total = 0;
    for (uint32_t v = 0; v < n_bins; v++) {
      coarse[v >> shift] += h[i][v];
      total += h[i][v];
    }
    for (int k = 0; k < LHI_CUT_BINS; k++)
      profile[i][k] = total ? (uint32_t)((coarse[k] << LHI_CUT_SHIFT) / total) : 0;
  }
  return lhi_cut_distance(profile[0], profile[1]) / (double)(1u << (LHI_CUT_SHIFT + 1));
}

/* ------------------------------------------------------------------------ */
/* Host windows                                                              */

typedef struct {
  int window;
  size_t n_entries; /* LUT entries of one frame */
  uint16_t *ring;   /* window frames of n_entries */
  uint32_t *sums;   /* of the frames in the window; < 256 * 65536 */
  uint32_t profile[LHI_CUT_BINS];
  bool has_profile;
  int frames; /* in the window */
  int head;   /* the slot of the next frame: the oldest once the window is full */
  uint64_t cuts;
} HostWindow;

static void host_window_free(void *data)
{
  HostWindow *w = data;
  if (!w)
    return;
  free(w->ring);
  free(w->sums);
  free(w);
}

static void host_window_reset(void *data)
{
  HostWindow *w = data;
  w->frames = 0;
  w->head = 0;
  w->has_profile = false;
  w->cuts = 0;
  memset(w->sums, 0, w->n_entries * sizeof *w->sums);
}

static int host_window_query(void *data, int *frames, uint64_t *cuts)
{
  const HostWindow *w = data;
  *frames = w->frames;
  *cuts = w->cuts;
  return LH_OK;
}

static const LhiTemporalOps host_window_ops = {
    .free = host_window_free,
    .reset = host_window_reset,
    .query = host_window_query,
};

static HostWindow *host_window_new(int window, size_t n_entries)
{
  HostWindow *w = calloc(1, sizeof *w);
  if (!w)
    return NULL;
  w->window = window;
  w->n_entries = n_entries;
  w->ring = malloc((size_t)window * n_entries * sizeof *w->ring);
  w->sums = calloc(n_entries, sizeof *w->sums);
  if (!w->ring || !w->sums) {
    host_window_free(w);
    return NULL;
  }
  return w;
}

int lhi_temporal_host_step(LhTemporal *temporal, const LhiTemporalKey *key,
                           const uint64_t *cut_histogram, int bit_depth, uint16_t *luts,
                           size_t n_entries)
{
  HostWindow *w = lhi_temporal_data(temporal, key);
  if (!w) {
    w = host_window_new(temporal->window, n_entries);
    if (!w)
      return lhi_error(LH_ERROR_NO_MEMORY, "out of memory for a window of %d LUTs of %zu entries",
                       temporal->window, n_entries);
    lhi_temporal_attach(temporal, key, &host_window_ops, w);
  }

  uint32_t profile[LHI_CUT_BINS];
  lhi_cut_profile(cut_histogram, bit_depth, profile);
  if (w->has_profile && lhi_cut_distance(profile, w->profile) > temporal->cut_threshold) {
    w->frames = 0;
    w->cuts++;
    memset(w->sums, 0, n_entries * sizeof *w->sums);
  }
  memcpy(w->profile, profile, sizeof profile);
  w->has_profile = true;

  uint16_t *slot = w->ring + (size_t)w->head * n_entries;
  bool full = w->frames == w->window;
  for (size_t i = 0; i < n_entries; i++) {
    if (full)
      w->sums[i] -= slot[i];
    w->sums[i] += luts[i];
    slot[i] = luts[i];
  }
  w->head = (w->head + 1) % w->window;
  if (!full)
    w->frames++;
  uint32_t n = (uint32_t)w->frames;
  for (size_t i = 0; i < n_entries; i++)
    luts[i] = (uint16_t)((w->sums[i] + n / 2) / n);
  return LH_OK;
}
