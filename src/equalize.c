/* equalize.c: global equalization (equalizeHist's LUT, generalized to 16
 * bits), LUT application with the colour rule, and the public entry points
 * that check their arguments for every backend (the CPU implementation:
 * cpu/equalize.c). */
#include <string.h>

#include "lh-private.h"

LH_API void lh_equalize_options_init(LhEqualizeOptions *options)
{
  if (!options)
    return;
  memset(options, 0, sizeof *options);
  options->mode = LH_EQUALIZE_GLOBAL;
  options->matrix = LH_MATRIX_BT601;
  options->range = LH_RANGE_FULL;
  options->tiles_x = 8;
  options->tiles_y = 8;
  options->clip_limit = 40.0;
}

void lhi_build_lut(const uint64_t *histogram, int bit_depth, uint32_t black, uint32_t white,
                   uint16_t *lut)
{
  uint32_t n_bins = 1u << bit_depth;
  uint64_t total = 0;
  uint32_t first = n_bins;
  for (uint32_t v = 0; v < n_bins; v++) {
    if (histogram[v] && first == n_bins)
      first = v;
    total += histogram[v];
  }
  if (total == 0 || histogram[first] == total) {
    /* equalizeHist leaves a constant image as it is */
    for (uint32_t v = 0; v < n_bins; v++)
      lut[v] = (uint16_t)v;
    return;
  }
  uint32_t span = white - black;
  float scale = lhi_lut_scale(span, total - histogram[first]);
  for (uint32_t v = 0; v <= first; v++)
    lut[v] = (uint16_t)black;
  uint64_t cumulative = 0;
  for (uint32_t v = first + 1; v < n_bins; v++) {
    cumulative += histogram[v];
    lut[v] = (uint16_t)(black + lhi_lut_level(cumulative, scale, span));
  }
}

LH_API int lh_lut_from_histogram(const uint64_t *histogram, int bit_depth, LhRange range,
                                 uint16_t *lut)
{
  if (!histogram || !lut)
    return lhi_error(LH_ERROR_INVALID_ARGUMENT, "histogram or LUT is NULL");
  if (bit_depth < 8 || bit_depth > 16)
    return lhi_error(LH_ERROR_INVALID_ARGUMENT, "bit depth %d is not in 8 .. 16", bit_depth);
  if (range != LH_RANGE_FULL && range != LH_RANGE_LIMITED)
    return lhi_error(LH_ERROR_INVALID_ARGUMENT, "unknown range %d", (int)range);
  /* lhi_build_lut's 64-bit total would wrap, as lh_stats_from_histogram's
   * pixel count would. */
  uint64_t total = 0;
  for (size_t v = 0; v < ((size_t)1 << bit_depth); v++)
    if (__builtin_add_overflow(total, histogram[v], &total))
      return lhi_error(LH_ERROR_INVALID_ARGUMENT,
                       "the histogram's counts sum past 2^64 - 1 pixels");
  uint32_t black, white;
  lhi_range_limits(bit_depth, range, &black, &white);
  lhi_build_lut(histogram, bit_depth, black, white, lut);
  return LH_OK;
}

/* ------------------------------------------------------------------------ */
/* Argument checks shared by lh_equalize and lh_apply_lut                    */

/* The chroma planes (1, and 2 for the planar formats) of a frame: samples
 * of a row (pairs for the semi-planar ones) and rows, rounded up. */
void lhi_chroma_shape(const LhFrame *frame, size_t *row_bytes, int *rows)
{
  const LhiFormatInfo *info = lhi_format_info(frame->format);
  const int64_t sub_x = (int64_t)1 << info->chroma_x_shift,
                sub_y = (int64_t)1 << info->chroma_y_shift;
  const size_t samples = (size_t)(((int64_t)frame->width + sub_x - 1) / sub_x);
  *rows = (int)(((int64_t)frame->height + sub_y - 1) / sub_y);
  *row_bytes =
      samples * (size_t)info->sample_bytes * (info->chroma == LHI_CHROMA_SEMI_PLANAR ? 2 : 1);
}

int lhi_check_chroma(const LhFrame *frame, const char *which)
{
  const LhiFormatInfo *info = lhi_format_info(frame->format);
  size_t row_bytes;
  int rows;
  lhi_chroma_shape(frame, &row_bytes, &rows);
  for (int p = 1; p < info->n_planes; p++)
    if (!frame->planes[p] || frame->strides[p] < row_bytes)
      return lhi_error(LH_ERROR_INVALID_ARGUMENT,
                       "%s %s frame: chroma plane %d is missing or its stride is below %zu", which,
                       info->name, p, row_bytes);
  return LH_OK;
}

static int check_pair(const LhFrame *in, const LhFrame *out)
{
  int status = lhi_frame_validate(in);
  if (status < 0)
    return status;
  status = lhi_frame_validate(out);
  if (status < 0)
    return status;
  if (in->format != out->format || in->width != out->width || in->height != out->height ||
      in->memory != out->memory || lhi_frame_luma_depth(in) != lhi_frame_luma_depth(out))
    return lhi_error(LH_ERROR_INVALID_ARGUMENT,
                     "input %s %dx%d and output %s %dx%d differ in format, size, bit depth or "
                     "memory",
                     lh_format_name(in->format), in->width, in->height, lh_format_name(out->format),
                     out->width, out->height);
  const LhiFormatInfo *info = lhi_format_info(in->format);
  if (info->is_yuv && in->planes[0] != out->planes[0]) {
    status = lhi_check_chroma(in, "input");
    if (status == LH_OK)
      status = lhi_check_chroma(out, "output");
  }
  return status;
}

bool lhi_chroma_rule_applies(LhFormat format, bool *supported)
{
  const LhiFormatInfo *info = lhi_format_info(format);
  const bool applies = info->sample_bytes == 1 && (info->chroma == LHI_CHROMA_PLANAR ||
                                                   info->chroma == LHI_CHROMA_SEMI_PLANAR);
  *supported = applies || !info->is_yuv;
  return applies;
}

void lhi_chroma_sample_layout(const LhFrame *frame, int which, int *plane, size_t *offset,
                              size_t *step)
{
  const LhiFormatInfo *info = lhi_format_info(frame->format);
  const int index = which == 0 ? info->cb_index : info->cr_index;
  if (info->chroma == LHI_CHROMA_SEMI_PLANAR) {
    *plane = 1;
    *offset = (size_t)index;
    *step = 2;
  } else {
    *plane = index;
    *offset = 0;
    *step = 1;
  }
}

/* Whether job's out gets its chroma by LH_CHROMA_SCALE; an error for a YUV
 * format the rule does not cover. */
static int set_chroma_rule(LhiEqualizeJob *job, LhChromaRule rule)
{
  if (rule != LH_CHROMA_KEEP && rule != LH_CHROMA_SCALE)
    return lhi_error(LH_ERROR_INVALID_ARGUMENT, "unknown chroma rule %d", (int)rule);
  bool supported;
  const bool applies = lhi_chroma_rule_applies(job->in.format, &supported);
  if (rule == LH_CHROMA_SCALE && !supported)
    return lhi_error(LH_ERROR_UNSUPPORTED,
                     "scaling chroma takes 8-bit planar and semi-planar YUV (I420, YV12, Y42B, "
                     "Y444, Y41B, NV12, NV21, NV16, NV24), not %s",
                     lh_format_name(job->in.format));
  job->scale_chroma = rule == LH_CHROMA_SCALE && applies;
  /* Rewritten chroma is read and written in place too. */
  int status = LH_OK;
  if (job->scale_chroma && (status = lhi_check_chroma(&job->in, "input")) == LH_OK)
    status = lhi_check_chroma(&job->out, "output");
  return status;
}

static int run_job(LhContext *context, LhiEqualizeJob *job)
{
  /* A temporal window lives on the backend that made it: its stream stays
   * there, so that the averaged LUTs are those of every frame. */
  const bool stateful = job->temporal != NULL;
  const LhiBackend *stay = stateful && job->temporal->ops ? job->temporal->key.backend : NULL;
  LhiRoute route;
  lhi_route_begin(context,
                  job->kind == LHI_EQUALIZE_GLOBAL  ? LHI_OP_EQUALIZE
                  : job->kind == LHI_EQUALIZE_CLAHE ? LHI_OP_CLAHE
                                                    : LHI_OP_LUT,
                  &job->in, 1, stateful, stay, &route);
  if (!route.backend->equalize)
    return lhi_error(LH_ERROR_UNSUPPORTED, "the %s backend cannot equalize", route.backend->name);
  lhi_clear_error();
  int status = route.backend->equalize(route.state, job);
  lhi_route_end(context, &route, status, 1);
  return status;
}

static int equalize_call(LhContext *context, const LhFrame *in, LhFrame *out,
                         const LhEqualizeOptions *options)
{
  if (!context || !in || !out)
    return lhi_error(LH_ERROR_INVALID_ARGUMENT, "context, input or output frame is NULL");
  LhEqualizeOptions defaults;
  if (!options) {
    lh_equalize_options_init(&defaults);
    options = &defaults;
  }
  if (options->mode != LH_EQUALIZE_GLOBAL && options->mode != LH_EQUALIZE_CLAHE)
    return lhi_error(LH_ERROR_INVALID_ARGUMENT, "unknown equalization mode %d", (int)options->mode);
  if ((unsigned)options->matrix > LH_MATRIX_BT2020)
    return lhi_error(LH_ERROR_INVALID_ARGUMENT, "unknown matrix %d", (int)options->matrix);
  if (options->range != LH_RANGE_FULL && options->range != LH_RANGE_LIMITED)
    return lhi_error(LH_ERROR_INVALID_ARGUMENT, "unknown range %d", (int)options->range);
  if (options->orientation < 0 || options->orientation > 8)
    return lhi_error(LH_ERROR_INVALID_ARGUMENT, "equalization orientation %d is not in 0 .. 8",
                     options->orientation);
  int status = check_pair(in, out);
  if (status < 0)
    return status;

  LhiEqualizeJob job = {
      .kind = options->mode == LH_EQUALIZE_CLAHE ? LHI_EQUALIZE_CLAHE : LHI_EQUALIZE_GLOBAL,
      .in = *in,
      .out = *out,
      .bit_depth = lhi_frame_luma_depth(in),
      .weights = lhi_luma_weights(options->matrix, lhi_frame_luma_depth(in)),
      .temporal = options->temporal,
  };
  if ((status = set_chroma_rule(&job, options->chroma)) < 0)
    return status;
  lhi_range_limits(job.bit_depth, options->range, &job.black, &job.white);
  if (job.kind == LHI_EQUALIZE_CLAHE) {
    /* The grid is the picture's as shown: a quarter turn swaps its sides. */
    const bool turned = options->orientation >= 5;
    status = lhi_clahe_grid(turned ? in->height : in->width, turned ? in->width : in->height,
                            job.bit_depth, options->tiles_x, options->tiles_y, options->clip_limit,
                            job.black, job.white, &job.grid);
    if (status < 0)
      return status;
    job.grid.orientation = options->orientation;
  }
  return run_job(context, &job);
}

LH_API int lh_equalize(LhContext *context, const LhFrame *in, LhFrame *out,
                       const LhEqualizeOptions *options)
{
  int status = lhi_context_enter(context);
  if (status < 0)
    return status;
  status = equalize_call(context, in, out, options);
  lhi_context_leave(context);
  return status;
}

LH_API int lh_apply_lut(LhContext *context, const LhFrame *in, LhFrame *out, const uint16_t *lut,
                        LhMatrix matrix)
{
  return lh_apply_lut_chroma(context, in, out, lut, matrix, LH_CHROMA_KEEP);
}

static int apply_lut_call(LhContext *context, const LhFrame *in, LhFrame *out, const uint16_t *lut,
                          LhMatrix matrix, LhChromaRule chroma)
{
  if (!context || !in || !out || !lut)
    return lhi_error(LH_ERROR_INVALID_ARGUMENT, "context, frame or LUT is NULL");
  if ((unsigned)matrix > LH_MATRIX_BT2020)
    return lhi_error(LH_ERROR_INVALID_ARGUMENT, "unknown matrix %d", (int)matrix);
  int status = check_pair(in, out);
  if (status < 0)
    return status;
  LhiEqualizeJob job = {
      .kind = LHI_EQUALIZE_LUT,
      .in = *in,
      .out = *out,
      .bit_depth = lhi_frame_luma_depth(in),
      .weights = lhi_luma_weights(matrix, lhi_frame_luma_depth(in)),
      .lut = lut,
  };
  if ((status = set_chroma_rule(&job, chroma)) < 0)
    return status;
  uint32_t max_value = (1u << job.bit_depth) - 1;
  for (uint32_t v = 0; v <= max_value; v++)
    if (lut[v] > max_value)
      return lhi_error(LH_ERROR_INVALID_ARGUMENT, "LUT entry %u is %u, above %u-bit white %u", v,
                       lut[v], job.bit_depth, max_value);
  job.white = max_value;
  return run_job(context, &job);
}

LH_API int lh_apply_lut_chroma(LhContext *context, const LhFrame *in, LhFrame *out,
                               const uint16_t *lut, LhMatrix matrix, LhChromaRule chroma)
{
  int status = lhi_context_enter(context);
  if (status < 0)
    return status;
  status = apply_lut_call(context, in, out, lut, matrix, chroma);
  lhi_context_leave(context);
  return status;
}
