/* overlay.c: `lumahist overlay`, which writes each image with the graph of
 * its own luma histogram, percentile markers and clipping bands drawn on it. */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>

#include "lht-batch.h"
#include "lht-video.h"
#include "lht.h"

#define COMMAND "lumahist overlay"
#define DEFAULT_MARKERS "5,95"

typedef struct {
  char *out_dir;
  char *rect;
  char *scale;
  char *percentiles;
  char *opacity;
  char *clip_warning;
  gboolean no_markers;
  gboolean no_clipping;
  LhtEncodeArgs encode;
  LhtLumaArgs luma;
  char **paths;
} OverlayArgs;

static void overlay_args_clear(OverlayArgs *args)
{
  g_free(args->out_dir);
  lht_luma_args_clear(&args->luma);
  g_free(args->encode.png_compression);
  g_free(args->rect);
  g_free(args->scale);
  g_free(args->percentiles);
  g_free(args->opacity);
  g_free(args->clip_warning);
  g_strfreev(args->paths);
}

/* "X,Y,W,H": X and Y may be negative (the panel is clipped), W and H >= 3. */
static bool parse_rect(const char *text, LhRect *rect)
{
  long values[4];
  const char *cursor = text;
  for (int i = 0; i < 4; i++) {
    char *end;
    errno = 0;
    values[i] = strtol(cursor, &end, 10);
    if (end == cursor || errno != 0 || values[i] < -65536 || values[i] > 1L << 30 ||
        *end != (i < 3 ? ',' : '\0'))
      return false;
    cursor = end + 1;
  }
  if (values[2] < 3 || values[3] < 3 || values[2] > 65536 || values[3] > 65536)
    return false;
  *rect = (LhRect){(int)values[0], (int)values[1], (int)values[2], (int)values[3]};
  return true;
}

typedef struct {
  LhOptions analysis;
  LhOverlayOptions overlay;
  LhtRewriteOptions rewrite; /* how the outputs are encoded */
  bool matrix_given;         /* videos: else the stream's colorimetry */
  bool range_given;
  /* The video under way (one at a time, on one thread): its first frame
   * seen, and what to say of it once written (no_panel_note). */
  bool video_frame_seen;
  char *video_note;
} OverlayRun;

/* Why lh_overlay draws nothing on a frame of width x height (as stored,
 * shown turned by orientation): a line to say once the file is written
 * without its panel, or NULL.  The default panel fits any frame of 3x3 or
 * more; one --rect places (3x3 or more) is drawn where it meets the frame
 * as shown, and nowhere when it misses it. */
static char *no_panel_note(const LhOverlayOptions *overlay, int width, int height, int orientation)
{
  if (orientation >= 5) {
    int stored_width = width;
    width = height;
    height = stored_width;
  }
  const LhRect *rect = &overlay->rect;
  if (rect->width == 0 || rect->height == 0) {
    if (width >= 3 && height >= 3)
      return NULL;
    return g_strdup_printf("%dx%d pixels: written without the histogram panel, which needs 3x3 "
                           "at least",
                           width, height);
  }
  if (rect->x < width && rect->y < height && (int64_t)rect->x + rect->width > 0 &&
      (int64_t)rect->y + rect->height > 0)
    return NULL;
  return g_strdup_printf("--rect %d,%d,%d,%d is outside its %dx%d pixels: written without the "
                         "histogram panel",
                         rect->x, rect->y, rect->width, rect->height, width, height);
}

static bool overlay_image(LhioImage *image, const char *path, void *data)
{
  OverlayRun *run = data;
  /* Only on the batch pipeline's analysis threads. */
  LhContext *context = lhp_worker_context(NULL);
  LhStats stats;
  lh_stats_init(&stats);
  /* Drawn to read upright where a viewer turns the image by its Exif. */
  LhOverlayOptions overlay = run->overlay;
  overlay.orientation = lhio_image_orientation(image);
  int status = lh_analyze(context, &image->frame, &run->analysis, &stats);
  /* A gray+alpha PNG's alpha is a plane apart: the panel is composited
   * over it, else it was invisible where the image is transparent. */
  if (status >= 0 && image->alpha)
    status = lh_overlay_gray_alpha(context, &image->frame, image->alpha, image->alpha_stride,
                                   &stats, &overlay);
  else if (status >= 0)
    status = lh_overlay(context, &image->frame, &stats, &overlay);
  lh_stats_clear(&stats);
  if (status < 0) {
    lht_error(path, "%s", lht_reason(status, path));
    return false;
  }
  return true;
}

static char *overlay_written_note(const LhioImage *image, void *data)
{
  const OverlayRun *run = data;
  return no_panel_note(&run->overlay, image->frame.width, image->frame.height,
                       lhio_image_orientation(image));
}

static int overlay_video_begin(LhContext *context, void *data)
{
  (void)context;
  OverlayRun *run = data;
  run->video_frame_seen = false;
  g_clear_pointer(&run->video_note, g_free);
  return LH_OK;
}

static char *overlay_video_written_note(void *data)
{
  OverlayRun *run = data;
  return g_steal_pointer(&run->video_note);
}

/* A video frame: the graph of its own histogram drawn on it, upright as a
 * player turns the frame. */
static int overlay_video_frame(LhContext *context, const LhFrame *in, LhFrame *frame,
                               LhMatrix matrix, LhRange range, int orientation, void *data)
{
  (void)in; /* the same frame: drawn on in place */
  OverlayRun *run = data;
  LhOptions analysis = run->analysis;
  LhOverlayOptions overlay = run->overlay;
  overlay.orientation = orientation;
  if (!run->matrix_given)
    analysis.matrix = overlay.matrix = matrix;
  if (!run->range_given)
    analysis.range = overlay.range = range;
  /* Every frame of a video has the first one's size and turn. */
  if (!run->video_frame_seen) {
    run->video_frame_seen = true;
    run->video_note = no_panel_note(&overlay, frame->width, frame->height, orientation);
  }
  LhStats stats;
  lh_stats_init(&stats);
  int status = lh_analyze(context, frame, &analysis, &stats);
  if (status >= 0)
    status = lh_overlay(context, frame, &stats, &overlay);
  lh_stats_clear(&stats);
  return status;
}

static bool check_args(const OverlayArgs *args, OverlayRun *run, LhBackend *backend)
{
  LhOptions *analysis = &run->analysis;
  LhOverlayOptions *overlay = &run->overlay;
  lh_options_init(analysis);
  lh_overlay_options_init(overlay);
  const char *refusal = lht_out_dir_refusal(args->out_dir);
  if (refusal)
    return lht_usage_error(COMMAND, "%s", refusal), false;
  char *why = lht_luma_args_check(&args->luma, &analysis->matrix, &analysis->range, backend);
  if (why) {
    lht_usage_error(COMMAND, "%s", why);
    g_free(why);
    return false;
  }
  overlay->matrix = analysis->matrix;
  overlay->range = analysis->range;
  run->matrix_given = args->luma.matrix != NULL;
  run->range_given = args->luma.range != NULL;
  if (lh_options_set_percentiles(analysis,
                                 args->percentiles ? args->percentiles : DEFAULT_MARKERS) < 0)
    return lht_usage_error(COMMAND, "--percentiles: %s", lh_last_error()), false;
  if (args->rect && !parse_rect(args->rect, &overlay->rect))
    return lht_usage_error(COMMAND, "--rect '%s': expected X,Y,W,H with W, H in 3 .. 65536",
                           args->rect),
           false;
  if (args->scale && strcmp(args->scale, "log") == 0)
    overlay->scale = LH_OVERLAY_LOG;
  else if (args->scale && strcmp(args->scale, "linear") == 0)
    overlay->scale = LH_OVERLAY_LINEAR;
  else if (args->scale)
    return lht_usage_error(COMMAND, "unknown --scale '%s' (expected log or linear)", args->scale),
           false;
  if (args->opacity && !lht_parse_number(args->opacity, 0, 1, &overlay->opacity))
    return lht_usage_error(COMMAND, "--opacity '%s' is not a number in [0, 1]", args->opacity),
           false;
  if (args->clip_warning && !lht_parse_number(args->clip_warning, 0, 1, &overlay->clip_warning))
    return lht_usage_error(COMMAND, "--clip-warning '%s' is not a fraction in [0, 1]",
                           args->clip_warning),
           false;
  overlay->markers = !args->no_markers;
  overlay->clipping = !args->no_clipping;
  if (!lht_encode_options_parse(&args->encode, &run->rewrite, &why)) {
    lht_usage_error(COMMAND, "%s", why);
    g_free(why);
    return false;
  }
  if (!args->paths || !args->paths[0])
    return lht_usage_error(COMMAND, "no PATH given"), false;
  return true;
}

int lht_overlay_main(int argc, char **argv)
{
  OverlayArgs args = {0};
  GOptionEntry entries[] = {
      {"out", 'o', 0, G_OPTION_ARG_FILENAME, &args.out_dir,
       "Folder for the results (made if missing); never an input's own file", "DIR"},
      {"rect", 0, 0, G_OPTION_ARG_STRING, &args.rect,
       "The panel, in pixels (default: bottom-left, a third of the width, a quarter of the "
       "height)",
       "X,Y,W,H"},
      {"opacity", 0, 0, G_OPTION_ARG_STRING, &args.opacity,
       "Opacity of the bars and markers, 0..1 (default 0.8)", "A"},
      {"scale", 0, 0, G_OPTION_ARG_STRING, &args.scale,
       "Bar heights: log (default, log(1 + count)) or linear", "log|linear"},
      {"percentiles", 'p', 0, G_OPTION_ARG_STRING, &args.percentiles,
       "Percentiles to mark besides the median (default " DEFAULT_MARKERS ")", "LIST"},
      {"no-markers", 0, 0, G_OPTION_ARG_NONE, &args.no_markers, "No median and percentile lines",
       NULL},
      {"no-clipping", 0, 0, G_OPTION_ARG_NONE, &args.no_clipping,
       "No clipping bands or illegal-range shading", NULL},
      {"clip-warning", 0, 0, G_OPTION_ARG_STRING, &args.clip_warning,
       "Fraction of pixels at one end that lights its band (default 0.005)", "F"},
      {G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &args.paths, NULL, "PATH…"},
      {NULL, 0, 0, 0, NULL, NULL, NULL},
  };
  GOptionContext *option_context = g_option_context_new(NULL);
  g_option_context_set_summary(
      option_context,
      "Writes each image with a panel showing its luma histogram (log or linear counts),\n"
      "lines at the median (green) and the percentiles (amber), and blue / red bands when\n"
      "pixels clip at black / white, in the same format and bit depth.");
  g_option_context_set_description(
      option_context,
      "PATHs are PNG or JPEG files, video files, or folders searched recursively;\n"
      "a file found in a folder keeps its path below it under DIR (a folder's\n"
      "search leaves DIR out).  '-' is an image on standard input, written as\n"
      "DIR/stdin.png or DIR/stdin.jpg as it is (so is a pipe or FIFO whose name is\n"
      "not an image's).  A video is written back in its container and codec\n"
      "(--codec, --crf), its audio and subtitles copied.\n"
      "Exit status: 0 all files done, 1 some file failed, 2 usage error,\n"
      "128 + N stopped by signal N (SIGINT, SIGTERM, SIGHUP): resume with --skip-existing.");
  g_option_context_add_main_entries(option_context, entries, NULL);
  lht_luma_args_add(option_context, &args.luma);
  lht_encode_options_add(option_context, &args.encode);
  LhtBatchArgs batch;
  lht_batch_args_init(&batch, LHT_BATCH_OUTPUTS);
  lht_batch_add_options(option_context, &batch);
  LhtVideoOutArgs video;
  lht_video_out_args_init(&video);
  lht_video_out_add_options(option_context, &video, false);
  int status = lht_parse_options(option_context, &argc, &argv, COMMAND);
  g_option_context_free(option_context);
  if (status < 0 && !lht_batch_add_listed_paths(&batch, &args.paths))
    status = LHT_EXIT_USAGE;
  if (status >= 0) {
    lht_batch_args_clear(&batch);
    lht_video_out_args_clear(&video);
    overlay_args_clear(&args);
    return status;
  }

  OverlayRun run = {0};
  LhBackend wanted = LH_BACKEND_AUTO;
  if (!check_args(&args, &run, &wanted) || !lht_batch_args_check(&batch, COMMAND) ||
      !lht_video_out_args_check(&video, COMMAND)) {
    lht_batch_args_clear(&batch);
    lht_video_out_args_clear(&video);
    overlay_args_clear(&args);
    return LHT_EXIT_USAGE;
  }
  /* Folders give their videos too: each is written back as a video. */
  lht_walk_include_videos(true);
  LhtPlan plan = {0};
  bool ok = lht_plan_outputs(args.paths, (int)g_strv_length(args.paths), args.out_dir, &plan);
  /* Stopped in the walk: no folder made, nothing read. */
  status = lht_stopped_before_start();
  if (status) {
    lht_video_out_args_clear(&video);
    lht_batch_args_clear(&batch);
    lht_plan_clear(&plan);
    overlay_args_clear(&args);
    return status;
  }
  LhtRewriteOptions rewrite = run.rewrite;
  rewrite.max_pixels = (uint64_t)args.luma.max_pixels;
  bool *is_video = g_new0(bool, plan.inputs->len + 1);
  guint images = 0;
  for (guint i = 0; i < plan.inputs->len; i++) {
    is_video[i] = lhio_path_is_video(g_ptr_array_index(plan.inputs, i));
    images += !is_video[i];
  }
  /* Decoding and writing on --jobs threads, the drawing on the contexts'. */
  status = lht_batch_backend_refuses(&batch, wanted, COMMAND);
  if (status < 0 && plan.inputs->len > 0 && !lht_out_dir_usable(args.out_dir))
    status = LHT_EXIT_FAILURE;
  const bool out_usable = status < 0;
  if (out_usable)
    status = LHT_EXIT_OK;
  LhtWriteStop write_stop = {0};
  if (out_usable && images)
    status = lht_batch_rewrite(&batch, &plan, args.out_dir, is_video, &rewrite, overlay_image,
                               overlay_written_note, &run, wanted, args.luma.verbose, &write_stop);
  /* Then the videos, one after the other. */
  if (out_usable && (status == LHT_EXIT_OK || status == LHT_EXIT_FAILURE)) {
    LhtVideoChange change = {.begin = overlay_video_begin,
                             .change = overlay_video_frame,
                             .written_note = overlay_video_written_note,
                             .data = &run};
    int video_status = lht_video_rewrite_plan(&plan, is_video, NULL, &batch, args.out_dir, &video,
                                              wanted, args.luma.verbose, &change, &write_stop);
    if (video_status != LHT_EXIT_OK && (status == LHT_EXIT_OK || video_status > LHT_EXIT_USAGE))
      status = video_status;
    /* Once, after the videos too: a full disk stops them as it does the images. */
    lht_write_stop_say(&write_stop, args.out_dir);
  }
  if (status == LHT_EXIT_OK && !ok)
    status = LHT_EXIT_FAILURE;

  g_free(run.video_note);
  g_free(is_video);
  lht_video_out_args_clear(&video);
  lht_batch_args_clear(&batch);
  lht_plan_clear(&plan);
  overlay_args_clear(&args);
  return status;
}
