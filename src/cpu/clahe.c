/* cpu/clahe.c: the CPU backend's CLAHE: luma by parts of rows, the tile
 * histograms and LUTs (clahe.c's) by tiles, the bilinear interpolation of
 * the tile LUTs by parts of rows.  The grid is the picture's as shown
 * (LhiClaheGrid.orientation): the stored rows and columns are walked as
 * its axes (lhi_clahe_stored_axis). */
#include <stdlib.h>

#include "lh-private.h"

/* A CLAHE frame's work, split for the CPU backend's threads: luma and the
 * interpolation by parts of rows (a few a thread), tile histograms and
 * LUTs by tiles.  Each part writes only its own rows, tiles or the buffer
 * of the thread that runs it. */
typedef struct {
  const LhiEqualizeJob *job;
  const LhiClaheGrid *grid;
  size_t bins;
  int bands;          /* the parts of rows */
  int slots;          /* the threads (lhi_pool_run_slots) */
  uint16_t *luma;     /* the whole frame's */
  uint16_t *new_luma; /* a row per thread */
  uint32_t *histograms;
  uint16_t *luts;
  LhiClaheAxis rows;    /* the frame's rows and columns as the grid sees them */
  LhiClaheAxis columns; /* (lhi_clahe_stored_axis) */
  const int *source_x;
  const uint32_t *axis_x;
} Clahe;

static void luma_band(int band, void *data)
{
  Clahe *c = data;
  const int width = c->job->in.width, height = c->job->in.height;
  for (int y = lhi_band_start(band, c->bands, height);
       y < lhi_band_start(band + 1, c->bands, height); y++)
    lhi_cpu_luma_row(c->job, y, c->luma + (size_t)y * (size_t)width);
}

/* The histogram of one tile, over the picture as shown extended by
 * reflection: the stored rows and columns it covers, some of them twice.
 * A part a tile, not a row of tiles: 8 rows of tiles kept half of 16
 * threads idle. */
static void tile_histogram(int tile, void *data)
{
  Clahe *c = data;
  const int width = c->job->in.width;
  const LhiClaheAxis *rows = &c->rows, *columns = &c->columns;
  const uint32_t row_tile = (uint32_t)tile / rows->stride % rows->tiles;
  const uint32_t column_tile = (uint32_t)tile / columns->stride % columns->tiles;
  uint32_t *histogram = c->histograms + (size_t)tile * c->bins;
  const int *source_x = c->source_x + (size_t)column_tile * columns->tile;
  for (uint32_t e = row_tile * rows->tile; e < (row_tile + 1) * rows->tile; e++) {
    const uint16_t *row = c->luma + (size_t)lhi_clahe_source(rows, e) * (size_t)width;
    for (uint32_t x = 0; x < columns->tile; x++)
      histogram[row[source_x[x]]]++;
  }
}

static void tile_lut(int tile, void *data)
{
  Clahe *c = data;
  lhi_clahe_tile_lut(c->histograms + (size_t)tile * c->bins, c->job->bit_depth, c->grid,
                     c->luts + (size_t)tile * c->bins);
}

/* Bilinear interpolation between the four nearest tile centres. */
static void interpolate_band(int band, int slot, void *data)
{
  Clahe *c = data;
  const int width = c->job->in.width, height = c->job->in.height;
  const size_t bins = c->bins;
  uint16_t *new_luma = c->new_luma + (size_t)slot * (size_t)width;
  for (int y = lhi_band_start(band, c->bands, height);
       y < lhi_band_start(band + 1, c->bands, height); y++) {
    /* Transposed (lhi_clahe_stored_axis), upper and lower are the tiles
     * left and right as shown, and the mix is the same (lhi_clahe_mix). */
    uint32_t ty0, ty1, wy;
    lhi_clahe_axis_at(&c->rows, (uint32_t)y, &ty0, &ty1, &wy);
    const uint16_t *upper = c->luts + (size_t)ty0 * bins;
    const uint16_t *lower = c->luts + (size_t)ty1 * bins;
    const uint16_t *row = c->luma + (size_t)y * (size_t)width;
    const uint32_t *axis_x = c->axis_x;
    for (int x = 0; x < width; x++) {
      size_t left = axis_x[3 * x] * bins + row[x], right = axis_x[3 * x + 1] * bins + row[x];
      new_luma[x] = (uint16_t)lhi_clahe_mix(upper[left], upper[right], lower[left], lower[right],
                                            axis_x[3 * x + 2], wy);
    }
    lhi_cpu_write_row(c->job, y, row, new_luma, NULL);
  }
}

int lhi_cpu_clahe(LhiCpuState *state, LhiEqualizeJob *job)
{
  const LhiClaheGrid *grid = &job->grid;
  const int width = job->in.width, height = job->in.height;
  const size_t bins = (size_t)1 << job->bit_depth;
  const size_t n_tiles = (size_t)grid->tiles_x * (size_t)grid->tiles_y;
  LhiPool *pool = state ? state->pool : NULL;
  Clahe c = {.job = job,
             .grid = grid,
             .bins = bins,
             .bands = lhi_part_count(pool, width, height),
             .rows = lhi_clahe_stored_axis(grid, true, (uint32_t)height),
             .columns = lhi_clahe_stored_axis(grid, false, (uint32_t)width)};
  const int ext_w = (int)(c.columns.tiles * c.columns.tile);
  c.slots = lhi_slot_count(pool, c.bands);

  c.luma = malloc((size_t)width * (size_t)height * sizeof *c.luma);
  c.new_luma = malloc((size_t)c.slots * (size_t)width * sizeof *c.new_luma);
  c.histograms = calloc(n_tiles * bins, sizeof *c.histograms);
  c.luts = malloc(n_tiles * bins * sizeof *c.luts);
  int *source_x = malloc((size_t)ext_w * sizeof *source_x);
  uint32_t *axis_x = malloc(3 * (size_t)width * sizeof *axis_x);
  uint64_t *cut_histogram = job->temporal ? calloc(bins, sizeof *cut_histogram) : NULL;
  c.source_x = source_x;
  c.axis_x = axis_x;
  int status = LH_OK;
  if (!c.luma || !c.new_luma || !c.histograms || !c.luts || !source_x || !axis_x ||
      (job->temporal && !cut_histogram)) {
    status =
        lhi_error(LH_ERROR_NO_MEMORY, "out of memory for CLAHE of a %dx%d frame", width, height);
    goto done;
  }

  lhi_pool_run(pool, c.bands, luma_band, &c);
  for (int x = 0; x < ext_w; x++)
    source_x[x] = (int)lhi_clahe_source(&c.columns, (uint32_t)x);
  lhi_pool_run(pool, (int)n_tiles, tile_histogram, &c);

  if (job->temporal)
    for (size_t t = 0; t < n_tiles; t++)
      for (size_t v = 0; v < bins; v++)
        cut_histogram[v] += c.histograms[t * bins + v];
  lhi_pool_run(pool, (int)n_tiles, tile_lut, &c);
  if (job->temporal) {
    LhiTemporalKey key = lhi_temporal_key(&lhi_cpu_backend, job, width, height);
    status = lhi_temporal_host_step(job->temporal, &key, cut_histogram, job->bit_depth, c.luts,
                                    n_tiles * bins);
    if (status < 0)
      goto done;
  }

  for (int x = 0; x < width; x++)
    lhi_clahe_axis_at(&c.columns, (uint32_t)x, &axis_x[3 * x], &axis_x[3 * x + 1],
                      &axis_x[3 * x + 2]);
  lhi_pool_run_slots(pool, c.bands, c.slots, interpolate_band, &c);
  /* The chroma from the old luma kept in c.luma and the new in out's Y. */
  if (job->scale_chroma)
    status = lhi_cpu_scale_chroma(pool, job, c.luma, NULL);
  else
    lhi_cpu_copy_chroma(pool, job);

done:
  free(c.luma);
  free(c.new_luma);
  free(c.histograms);
  free(c.luts);
  free(source_x);
  free(axis_x);
  free(cut_histogram);
  return status;
}
