/* difference.c: the frame-difference state of video (the mean absolute
 * difference of a frame's luma to the previous frame's): its argument
 * checks, its restart on a new stream of frames, and the division that
 * turns a backend's exact sum into the mean. */
#include <math.h>
#include <stdlib.h>

#include "lh-private.h"

LH_API int lh_difference_new(LhDifference **out)
{
  if (!out)
    return lhi_error(LH_ERROR_INVALID_ARGUMENT, "difference pointer is NULL");
  *out = calloc(1, sizeof **out);
  if (!*out)
    return lhi_error(LH_ERROR_NO_MEMORY, "out of memory for a difference state");
  return LH_OK;
}

static void drop_data(LhDifference *difference)
{
  if (difference->ops)
    difference->ops->free(difference->data);
  difference->ops = NULL;
  difference->data = NULL;
  difference->has_previous = false;
}

LH_API void lh_difference_free(LhDifference *difference)
{
  if (!difference)
    return;
  drop_data(difference);
  free(difference);
}

LH_API void lh_difference_reset(LhDifference *difference)
{
  if (difference)
    difference->has_previous = false;
}

void lhi_difference_attach(LhDifference *difference, const LhiDifferenceOps *ops, void *data)
{
  drop_data(difference);
  difference->ops = ops;
  difference->data = data;
}

static bool same_key(const LhiDifferenceKey *a, const LhiDifferenceKey *b)
{
  return a->backend == b->backend && a->place == b->place && a->format == b->format &&
         a->width == b->width && a->height == b->height && a->bit_depth == b->bit_depth;
}

static int difference_push_call(LhContext *context, LhDifference *difference, const LhFrame *frame,
                                double *mean_abs)
{
  if (mean_abs)
    *mean_abs = NAN;
  if (!context || !difference || !mean_abs)
    return lhi_error(LH_ERROR_INVALID_ARGUMENT, "%s is NULL",
                     !context      ? "context"
                     : !difference ? "difference state"
                                   : "mean_abs");
  /* Whatever fails below, the next frame is a first one: a failed push may
   * have overwritten part of the previous frame's luma. */
  const bool had_previous = difference->has_previous;
  difference->has_previous = false;
  int status = lhi_frame_validate(frame);
  if (status < 0)
    return status;
  const LhiFormatInfo *info = lhi_format_info(frame->format);
  if (info->r >= 0)
    return lhi_error(LH_ERROR_UNSUPPORTED,
                     "%s frames have no luma plane to compare: the frame difference takes gray "
                     "and YUV frames",
                     info->name);
  /* The previous frame's luma lives on the backend it was pushed to: the
   * stream stays there, so that no difference is lost to a move. */
  LhiRoute route;
  lhi_route_begin(context, LHI_OP_DIFFERENCE, frame, 1, true,
                  had_previous && difference->data ? difference->key.backend : NULL, &route);
  if (!route.backend->difference)
    return lhi_error(LH_ERROR_UNSUPPORTED, "the %s backend has no frame difference",
                     route.backend->name);

  LhiDifferenceJob job = {.frame = *frame, .bit_depth = lhi_frame_luma_depth(frame)};
  const void *place = NULL;
  if (route.backend->device)
    route.backend->device(route.state, &place);
  const LhiDifferenceKey key = {.backend = route.backend,
                                .place = place,
                                .format = frame->format,
                                .width = frame->width,
                                .height = frame->height,
                                .bit_depth = job.bit_depth};
  if (!same_key(&key, &difference->key))
    drop_data(difference);
  difference->key = key;
  job.compare = had_previous && difference->data != NULL;
  status = route.backend->difference(route.state, difference, &job);
  lhi_route_end(context, &route, status, 1);
  if (status < 0)
    return status;
  difference->has_previous = true;
  if (job.compare)
    *mean_abs = (double)job.sum / ((double)frame->width * (double)frame->height);
  return LH_OK;
}

LH_API int lh_difference_push(LhContext *context, LhDifference *difference, const LhFrame *frame,
                              double *mean_abs)
{
  int status = lhi_context_enter(context);
  if (status < 0)
    return status;
  status = difference_push_call(context, difference, frame, mean_abs);
  lhi_context_leave(context);
  return status;
}
