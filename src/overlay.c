/* overlay.c: the histogram overlay: panel placement, bar heights, markers and
 * bands worked out on the host for every backend, the colours in the frame's
 * own terms (the CPU drawing: cpu/overlay.c). */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lh-private.h"

LH_API void lh_overlay_options_init(LhOverlayOptions *options)
{
  if (!options)
    return;
  memset(options, 0, sizeof *options);
  options->opacity = 0.8;
  options->scale = LH_OVERLAY_LOG;
  options->markers = 1;
  options->clipping = 1;
  options->clip_warning = 0.005;
  options->matrix = LH_MATRIX_BT601;
  options->range = LH_RANGE_FULL;
}

/* The inks in 8-bit R'G'B' and their strength (256: the full opacity). */
static const struct {
  uint8_t rgb[3];
  uint16_t strength;
} ink_colours[LHI_INK_COUNT] = {
    [LHI_INK_BACKGROUND] = {{16, 16, 16}, 160},  [LHI_INK_BORDER] = {{128, 128, 128}, 256},
    [LHI_INK_BAR] = {{230, 230, 230}, 256},      [LHI_INK_MEDIAN] = {{64, 224, 64}, 256},
    [LHI_INK_PERCENTILE] = {{255, 192, 0}, 256}, [LHI_INK_BAND_LOW] = {{64, 128, 255}, 256},
    [LHI_INK_BAND_HIGH] = {{255, 64, 64}, 256},  [LHI_INK_ZONE] = {{112, 32, 32}, 256},
};

static uint16_t to_code(double v, double max_value)
{
  double c = floor(v * max_value + 0.5);
  return (uint16_t)(c < 0 ? 0 : c > max_value ? max_value : c);
}

/* An 8-bit colour as samples of `depth` bits and as Y'CbCr of the matrix and
 * range (the same formulas as the video standards, rounded once). */
static LhiInk make_ink(int index, int depth, double opacity, LhMatrix matrix, LhRange range)
{
  static const double kr_of[] = {0.299, 0.2126, 0.2627}, kb_of[] = {0.114, 0.0722, 0.0593};
  const double max_value = (double)((1u << depth) - 1);
  const double kr = kr_of[matrix], kb = kb_of[matrix];
  double r = ink_colours[index].rgb[0] / 255.0, g = ink_colours[index].rgb[1] / 255.0,
         b = ink_colours[index].rgb[2] / 255.0;
  double y = kr * r + (1 - kr - kb) * g + kb * b;
  double cb = (b - y) / (2 * (1 - kb)), cr = (r - y) / (2 * (1 - kr));
  LhiInk ink;
  for (int c = 0; c < 3; c++)
    ink.rgb[c] = to_code(ink_colours[index].rgb[c] / 255.0, max_value);
  if (range == LH_RANGE_LIMITED) {
    double unit = (double)(1u << (depth - 8));
    ink.y = to_code((16 + 219 * y) * unit / max_value, max_value);
    ink.cb = to_code((128 + 224 * cb) * unit / max_value, max_value);
    ink.cr = to_code((128 + 224 * cr) * unit / max_value, max_value);
  } else {
    double mid = (double)(1u << (depth - 1));
    ink.y = to_code(y, max_value);
    ink.cb = to_code((mid + cb * max_value) / max_value, max_value);
    ink.cr = to_code((mid + cr * max_value) / max_value, max_value);
  }
  ink.alpha = (uint16_t)floor(opacity * ink_colours[index].strength + 0.5);
  return ink;
}

/* Bins [first, end) of column c of n columns over n_bins bins: at least one. */
static void column_bins(size_t c, size_t n, size_t n_bins, size_t *first, size_t *end)
{
  *first = c * n_bins / n;
  *end = (c + 1) * n_bins / n;
  if (*end <= *first)
    *end = *first + 1;
}

static void mark_value(uint8_t *flags, size_t n, size_t n_bins, uint32_t value, uint8_t flag)
{
  for (size_t c = 0; c < n; c++) {
    size_t first, end;
    column_bins(c, n, n_bins, &first, &end);
    if (value >= first && value < end)
      flags[c] |= flag;
  }
}

static void lay_out_columns(const LhStats *stats, const LhOverlayOptions *options, int inner_w,
                            int inner_h, uint64_t *peaks, uint16_t *heights, uint8_t *flags)
{
  const size_t n = (size_t)inner_w, n_bins = stats->n_bins;
  uint64_t top = 0;
  for (size_t c = 0; c < n; c++) {
    size_t first, end;
    column_bins(c, n, n_bins, &first, &end);
    peaks[c] = 0;
    for (size_t v = first; v < end; v++)
      peaks[c] = stats->histogram[v] > peaks[c] ? stats->histogram[v] : peaks[c];
    top = peaks[c] > top ? peaks[c] : top;
  }
  for (size_t c = 0; c < n; c++) {
    uint64_t h = 0;
    if (top > 0 && options->scale == LH_OVERLAY_LINEAR)
      h = (uint64_t)(((unsigned __int128)peaks[c] * (unsigned)inner_h + top / 2) / top);
    else if (top > 0)
      h = (uint64_t)floor(log1p((double)peaks[c]) / log1p((double)top) * inner_h + 0.5);
    heights[c] = (uint16_t)(h > (uint64_t)inner_h ? (uint64_t)inner_h : h);
    flags[c] = 0;
  }

  if (options->clipping) {
    if (stats->range == LH_RANGE_LIMITED) {
      uint32_t black, white;
      lhi_range_limits(stats->bit_depth, LH_RANGE_LIMITED, &black, &white);
      for (size_t c = 0; c < n; c++) {
        size_t first, end;
        column_bins(c, n, n_bins, &first, &end);
        if (end <= black || first > white)
          flags[c] |= LHI_COLUMN_ZONE;
      }
    }
    size_t band = n / 64 > 2 ? n / 64 : 2;
    band = band > n ? n : band;
    if (stats->count > 0) {
      double low = (double)stats->clipped_low_count / (double)stats->count;
      double high = (double)stats->clipped_high_count / (double)stats->count;
      for (size_t c = 0; c < band; c++) {
        if (low > 0 && low >= options->clip_warning)
          flags[c] |= LHI_COLUMN_BAND_LOW;
        if (high > 0 && high >= options->clip_warning)
          flags[n - 1 - c] |= LHI_COLUMN_BAND_HIGH;
      }
    }
  }
  if (options->markers && stats->count > 0) {
    for (int i = 0; i < stats->n_percentiles; i++)
      mark_value(flags, n, n_bins, stats->percentile_value[i], LHI_COLUMN_PERCENTILE);
    mark_value(flags, n, n_bins, stats->median, LHI_COLUMN_MEDIAN);
  }
}

/* The largest panel side, as for options->rect: bar heights are 16-bit, so
 * a taller inside wrapped them (a 270000-row frame's full bar drew 1962 rows). */
#define MAX_PANEL_SIDE 65536

static void default_panel(int width, int height, LhRect *panel)
{
  /* In 64 bits: width * 2 overflowed int past 1073741798 pixels. */
  int margin_x = (int)(((int64_t)width * 2 + 50) / 100),
      margin_y = (int)(((int64_t)height * 2 + 50) / 100);
  int w = width / 3, h = height / 4;
  if (w < 64)
    w = width < 64 ? width : 64;
  if (h < 32)
    h = height < 32 ? height : 32;
  w = w > MAX_PANEL_SIDE ? MAX_PANEL_SIDE : w;
  h = h > MAX_PANEL_SIDE ? MAX_PANEL_SIDE : h;
  if (margin_x + w > width)
    margin_x = width - w;
  if (margin_y + h > height)
    margin_y = height - h;
  *panel = (LhRect){margin_x, height - margin_y - h, w, h};
}

/* size - at - extent, the far edge of a span mirrored in a side of size:
 * taken in 64 bits, since a panel placed near INT_MAX (or INT_MIN)
 * overflowed int.  A result past int's range is off the frame either way,
 * and stays off clamped to INT_MAX or INT_MIN. */
static int mirrored(int size, int at, int extent)
{
  const int64_t edge = (int64_t)size - at - extent;
  return edge > INT_MAX ? INT_MAX : edge < INT_MIN ? INT_MIN : (int)edge;
}

/* Where a panel placed in the frame as shown (turned by orientation) lies in
 * the frame as stored, width x height. */
static LhRect stored_panel(const LhRect *shown, int orientation, int width, int height)
{
  const int x = shown->x, y = shown->y, w = shown->width, h = shown->height;
  switch (orientation) {
  case 2:
    return (LhRect){mirrored(width, x, w), y, w, h};
  case 3:
    return (LhRect){mirrored(width, x, w), mirrored(height, y, h), w, h};
  case 4:
    return (LhRect){x, mirrored(height, y, h), w, h};
  case 5:
    return (LhRect){y, x, h, w};
  case 6:
    return (LhRect){y, mirrored(height, x, w), h, w};
  case 7:
    return (LhRect){mirrored(width, y, h), mirrored(height, x, w), h, w};
  case 8:
    return (LhRect){mirrored(width, y, h), x, h, w};
  default:
    return *shown;
  }
}

static int sample_depth(const LhFrame *frame)
{
  return lhi_frame_luma_depth(frame);
}

/* alpha: NULL, or a gray frame's own alpha plane (lh_overlay_gray_alpha). */
static int overlay_call(LhContext *context, LhFrame *frame, uint8_t *alpha, size_t alpha_stride,
                        const LhStats *stats, const LhOverlayOptions *options)
{
  if (!context || !frame || !stats)
    return lhi_error(LH_ERROR_INVALID_ARGUMENT, "context, frame or stats is NULL");
  LhOverlayOptions defaults;
  if (!options) {
    lh_overlay_options_init(&defaults);
    options = &defaults;
  }
  if (!stats->histogram || stats->bit_depth < 8 || stats->bit_depth > 16 ||
      stats->n_bins != ((size_t)1 << stats->bit_depth))
    return lhi_error(LH_ERROR_INVALID_ARGUMENT, "stats hold no histogram of 2^bit_depth bins");
  /* The markers are read from percentile_value[0 .. n_percentiles). */
  if (stats->n_percentiles < 0 || stats->n_percentiles > LH_MAX_PERCENTILES)
    return lhi_error(LH_ERROR_INVALID_ARGUMENT, "stats hold %d percentiles, not 0 .. %d",
                     stats->n_percentiles, LH_MAX_PERCENTILES);
  if (!(options->opacity >= 0.0 && options->opacity <= 1.0))
    return lhi_error(LH_ERROR_INVALID_ARGUMENT, "overlay opacity %g is not in [0, 1]",
                     options->opacity);
  if (options->scale != LH_OVERLAY_LINEAR && options->scale != LH_OVERLAY_LOG)
    return lhi_error(LH_ERROR_INVALID_ARGUMENT, "unknown overlay scale %d", (int)options->scale);
  if ((unsigned)options->matrix > LH_MATRIX_BT2020 ||
      (options->range != LH_RANGE_FULL && options->range != LH_RANGE_LIMITED))
    return lhi_error(LH_ERROR_INVALID_ARGUMENT, "unknown overlay matrix or range");
  if (options->orientation < 0 || options->orientation > 8)
    return lhi_error(LH_ERROR_INVALID_ARGUMENT, "overlay orientation %d is not in 0 .. 8",
                     options->orientation);
  /* NaN fails this too, and is no more negative than it is a fraction. */
  if (!(options->clip_warning >= 0.0))
    return lhi_error(LH_ERROR_INVALID_ARGUMENT,
                     "overlay clip warning %g is not a fraction of the pixels (0 or more)",
                     options->clip_warning);
  int status = lhi_frame_validate(frame);
  if (status < 0)
    return status;
  if (alpha) {
    if (frame->format != LH_FORMAT_GRAY8 && frame->format != LH_FORMAT_GRAY16)
      return lhi_error(LH_ERROR_UNSUPPORTED,
                       "an alpha plane of its own goes with a GRAY8 or GRAY16 frame");
    if (frame->memory != LH_MEMORY_HOST)
      return lhi_error(LH_ERROR_UNSUPPORTED, "a gray frame with alpha is drawn in host memory");
    const size_t row = (size_t)frame->width * lhi_format_info(frame->format)->sample_bytes;
    if (alpha_stride == 0)
      alpha_stride = row;
    if (alpha_stride < row)
      return lhi_error(LH_ERROR_INVALID_ARGUMENT, "alpha stride %zu is below a row's %zu bytes",
                       alpha_stride, row);
  }
  if (lhi_format_info(frame->format)->is_yuv) {
    status = lhi_check_chroma(frame, "overlay");
    if (status < 0)
      return status;
  }

  /* The panel is laid out in the frame as shown, and drawn where that lies
   * in the frame as stored. */
  const bool across_turned = options->orientation >= 5;
  LhRect shown = options->rect;
  if (shown.width == 0 || shown.height == 0)
    default_panel(across_turned ? frame->height : frame->width,
                  across_turned ? frame->width : frame->height, &shown);
  else if (shown.width < 3 || shown.height < 3 || shown.width > MAX_PANEL_SIDE ||
           shown.height > MAX_PANEL_SIDE)
    return lhi_error(LH_ERROR_INVALID_ARGUMENT,
                     "overlay panel %dx%d: each side must be in 3 .. 65536", shown.width,
                     shown.height);
  LhRect panel = stored_panel(&shown, options->orientation, frame->width, frame->height);
  /* Nothing to draw on a frame too small for a panel, or off the frame. */
  if (panel.width < 3 || panel.height < 3 || panel.x >= frame->width || panel.y >= frame->height ||
      (int64_t)panel.x + panel.width <= 0 || (int64_t)panel.y + panel.height <= 0)
    return LH_OK;
  LhiRoute route;
  if (!alpha) {
    lhi_route_begin(context, LHI_OP_OVERLAY, frame, 1, false, NULL, &route);
    if (!route.backend->overlay)
      return lhi_error(LH_ERROR_UNSUPPORTED, "the %s backend cannot draw overlays",
                       route.backend->name);
  }

  int inner_w = shown.width - 2, inner_h = shown.height - 2;
  uint16_t *heights = malloc((size_t)inner_w * sizeof *heights);
  uint8_t *flags = malloc((size_t)inner_w);
  uint64_t *peaks = malloc((size_t)inner_w * sizeof *peaks);
  if (!heights || !flags || !peaks) {
    free(heights);
    free(flags);
    free(peaks);
    return lhi_error(LH_ERROR_NO_MEMORY, "out of memory for an overlay panel");
  }
  lay_out_columns(stats, options, inner_w, inner_h, peaks, heights, flags);
  free(peaks);
  LhiOverlayJob job = {
      .frame = *frame,
      .sample_depth = sample_depth(frame),
      .panel = panel,
      .orientation = options->orientation,
      .bar_heights = heights,
      .column_flags = flags,
      .alpha = alpha,
      .alpha_stride = alpha_stride,
  };
  for (int i = 0; i < LHI_INK_COUNT; i++)
    job.inks[i] = make_ink(i, job.sample_depth, options->opacity, options->matrix, options->range);
  lhi_clear_error();
  if (alpha) {
    /* The panel's few pixels, on the host where the frame is: no backend
     * but the CPU's draws over an alpha plane apart. */
    status = lhi_cpu_overlay(NULL, &job);
  } else {
    status = route.backend->overlay(route.state, &job);
    lhi_route_end(context, &route, status, 1);
  }
  free(heights);
  free(flags);
  return status;
}

LH_API int lh_overlay(LhContext *context, LhFrame *frame, const LhStats *stats,
                      const LhOverlayOptions *options)
{
  int status = lhi_context_enter(context);
  if (status < 0)
    return status;
  status = overlay_call(context, frame, NULL, 0, stats, options);
  lhi_context_leave(context);
  return status;
}

LH_API int lh_overlay_gray_alpha(LhContext *context, LhFrame *frame, void *alpha,
                                 size_t alpha_stride, const LhStats *stats,
                                 const LhOverlayOptions *options)
{
  if (!alpha)
    return lhi_error(LH_ERROR_INVALID_ARGUMENT, "alpha is NULL");
  int status = lhi_context_enter(context);
  if (status < 0)
    return status;
  status = overlay_call(context, frame, alpha, alpha_stride, stats, options);
  lhi_context_leave(context);
  return status;
}
