/* equalize.c: `lumahist equalize` (global histogram equalization, per image
 * or with one LUT for all, saved or loaded) and `lumahist clahe`, writing
 * each image equalized under an output folder. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <glib.h>

#include "lht-batch.h"
#include "lht-video.h"
#include "lht.h"

/* The first line of a LUT file; the 2^depth entries follow. */
#define LUT_MAGIC "lumahist-lut 1 bit_depth"

typedef struct {
  bool clahe;
  char *out_dir;
  char *tiles;
  char *clip;
  LhtEncodeArgs encode;
  gboolean global;
  char *save_lut;
  char *apply_lut;
  LhtLumaArgs luma;
  char **paths;
} EqualizeArgs;

static void equalize_args_clear(EqualizeArgs *args)
{
  g_free(args->out_dir);
  lht_luma_args_clear(&args->luma);
  g_free(args->encode.png_compression);
  g_free(args->tiles);
  g_free(args->clip);
  g_free(args->save_lut);
  g_free(args->apply_lut);
  g_strfreev(args->paths);
}

/* "lumahist clahe" or "lumahist equalize", for the usage errors. */
static const char *command_of(const EqualizeArgs *args)
{
  return args->clahe ? "lumahist clahe" : "lumahist equalize";
}

/* "8x8", "8,8" or "8" (square). */
static bool parse_tiles(const char *text, int *tiles_x, int *tiles_y)
{
  char *end;
  long x = strtol(text, &end, 10), y = x;
  if (end == text)
    return false;
  if (*end == 'x' || *end == 'X' || *end == ',') {
    const char *second = end + 1;
    y = strtol(second, &end, 10);
    if (end == second)
      return false;
  }
  if (*end != '\0' || x < 1 || y < 1 || x > LH_CLAHE_MAX_TILES || y > LH_CLAHE_MAX_TILES)
    return false;
  *tiles_x = (int)x;
  *tiles_y = (int)y;
  return true;
}

/* ------------------------------------------------------------------------ */
/* LUT files: a line "lumahist-lut 1 bit_depth D", then 2^D entries.         */

static bool save_lut(const char *path, const uint16_t *lut, int bit_depth)
{
  GString *text = g_string_new(NULL);
  g_string_append_printf(text, "%s %d\n", LUT_MAGIC, bit_depth);
  size_t n = (size_t)1 << bit_depth;
  for (size_t v = 0; v < n; v++)
    g_string_append_printf(text, "%u%c", lut[v], v % 16 == 15 || v + 1 == n ? '\n' : ' ');
  GError *error = NULL;
  bool ok = lht_save_file(path, text->str, text->len, &error);
  if (!ok) {
    lht_error(path, "cannot save the LUT: %s", error->message);
    g_error_free(error);
  }
  g_string_free(text, TRUE);
  return ok;
}

static uint16_t *load_lut(const char *path, int *bit_depth)
{
  char *text = NULL;
  GError *error = NULL;
  if (!g_file_get_contents(path, &text, NULL, &error)) {
    lht_error(path, "cannot read the LUT: %s", error->message);
    g_error_free(error);
    return NULL;
  }
  uint16_t *lut = NULL;
  const char *cursor = text;
  size_t magic = strlen(LUT_MAGIC);
  char *end;
  long depth = -1;
  if (strncmp(cursor, LUT_MAGIC, magic) == 0 && cursor[magic] == ' ') {
    depth = strtol(cursor + magic, &end, 10);
    /* The first line ends with the depth: "bit_depth 8x" is no LUT of 8
     * bits whose first entry is bad. */
    const char *rest = end;
    while (*rest == ' ' || *rest == '\t' || *rest == '\r')
      rest++;
    if (*rest != '\n' && *rest != '\0')
      depth = -1;
  }
  if (depth < 8 || depth > 16) {
    lht_error(path, "not a LUT file (its first line must be '%s D', D in 8 .. 16)", LUT_MAGIC);
    goto done;
  }
  cursor = end;
  size_t n = (size_t)1 << depth;
  lut = malloc(n * sizeof *lut);
  for (size_t v = 0; v < n; v++) {
    /* Each entry digits alone, spaces or line ends between: strtol took
     * "254+253" as two entries and "1e2" as 1 (then named the next one). */
    while (g_ascii_isspace(*cursor))
      cursor++;
    const char *item = cursor;
    size_t value = 0;
    while (g_ascii_isdigit(*cursor) && value < n)
      value = value * 10 + (size_t)(*cursor++ - '0');
    if (*item == '\0') {
      lht_error(path, "LUT entry %zu is missing (a %ld-bit LUT has %zu)", v, depth, n);
    } else if (cursor == item || value >= n || (*cursor && !g_ascii_isspace(*cursor))) {
      size_t length = 0;
      while (item[length] && !g_ascii_isspace(item[length]) && length < 24)
        length++;
      lht_error(path, "LUT entry %zu ('%.*s') is not a whole number in 0 .. %zu", v, (int)length,
                item, n - 1);
    } else {
      lut[v] = (uint16_t)value;
      continue;
    }
    free(lut);
    lut = NULL;
    goto done;
  }
  while (g_ascii_isspace(*cursor))
    cursor++;
  if (*cursor) {
    /* "an 8-bit", "an 11-bit", as the numbers are read */
    lht_error(path, "more than %zu entries in %s %ld-bit LUT", n,
              depth == 8 || depth == 11 ? "an" : "a", depth);
    free(lut);
    lut = NULL;
  }
  *bit_depth = (int)depth;
done:
  g_free(text);
  return lut;
}

/* ------------------------------------------------------------------------ */

typedef struct {
  LhContext *context; /* --global's; the batch's threads use their own */
  LhEqualizeOptions options;
  const uint16_t *lut; /* one LUT for every image (--global, --apply-lut) */
  int lut_depth;
  LhtRewriteOptions rewrite; /* how the outputs are encoded */
  /* Videos: the stream's colorimetry unless --matrix / --range, and the
   * temporal window (NULL with --temporal-window 1). */
  bool matrix_given;
  bool range_given;
  LhTemporal *temporal;
} EqualizeRun;

static int luma_depth(const LhFrame *frame)
{
  if (frame->format == LH_FORMAT_GRAY16 || frame->format == LH_FORMAT_RGB16 ||
      frame->format == LH_FORMAT_RGBA16)
    return frame->bit_depth ? frame->bit_depth : 16;
  return frame->format == LH_FORMAT_P010 ? 10 : 8;
}

/* The luma histogram of an image, as lh_analyze counts it. */
static int image_histogram(LhContext *context, const LhFrame *frame, LhMatrix matrix,
                           LhStats *stats)
{
  LhOptions options;
  lh_options_init(&options);
  options.matrix = matrix;
  return lh_analyze(context, frame, &options, stats);
}

static bool equalize_image(LhioImage *image, const char *path, void *data)
{
  EqualizeRun *run = data;
  /* On the batch pipeline: the context of this analysis thread. */
  LhContext *context = lhp_worker_context(run->context);
  LhFrame *frame = &image->frame;
  /* The only YUV stills are the JPEGs nvJPEG decoded (planar Y'CbCr, JPEG's
   * full-range BT.601): their chroma scales with the luma, which is the
   * gain rule the CPU path applies to the R'G'B' it decodes them to, so
   * that the colours do not depend on the decoder.  Gray and R'G'B' frames
   * are the same either way. */
  LhEqualizeOptions options = run->options;
  options.chroma = LH_CHROMA_SCALE;
  /* CLAHE's grid is the picture's as a viewer shows it (Exif orientation),
   * as OpenCV's imread turns it before createCLAHE sees it. */
  options.orientation = lhio_image_orientation(image);
  int status;
  if (run->lut) {
    if (luma_depth(frame) != run->lut_depth) {
      lht_error(path, "%d-bit luma; the LUT is for %d bits", luma_depth(frame), run->lut_depth);
      return false;
    }
    status = lh_apply_lut_chroma(context, frame, frame, run->lut, options.matrix, options.chroma);
  } else {
    status = lh_equalize(context, frame, frame, &options);
  }
  if (status < 0) {
    lht_error(path, "%s", lht_reason(status, path));
    return false;
  }
  return true;
}

/* A video starts a new temporal window. */
static int begin_video(LhContext *context, void *data)
{
  EqualizeRun *run = data;
  if (run->temporal)
    lh_temporal_reset(run->temporal);
  return LH_OK;
}

/* A video frame: its luma equalized (only Y changes), the LUT averaged
 * over the temporal window. */
static int equalize_video_frame(LhContext *context, const LhFrame *in, LhFrame *out,
                                LhMatrix matrix, LhRange range, int orientation, void *data)
{
  EqualizeRun *run = data;
  LhEqualizeOptions options = run->options;
  options.orientation = orientation; /* CLAHE's grid: the picture as a player shows it */
  if (!run->matrix_given)
    options.matrix = matrix;
  if (!run->range_given)
    options.range = range;
  options.temporal = run->temporal;
  return lh_equalize(context, in, out, &options);
}

/* Whether path can be read a second time: a regular file (standard input
 * redirected from one too), not a pipe, whose bytes the first read took. */
static bool can_read_again(const char *path)
{
  struct stat info;
  return stat(path, &info) != 0 || S_ISREG(info.st_mode);
}

/* --global: the sum of the luma histograms of every input and its LUT.
 * Inputs that cannot be read, or of another bit depth than the first, are
 * marked in failed[] and reported unless another shard's (theirs[]): every
 * shard reads every input for the one LUT, and each failure is said once.
 * NULL as well once *stop is set (a signal: the run stops). */
static uint16_t *global_lut(EqualizeRun *run, const LhtPlan *plan, uint64_t max_pixels,
                            const bool *theirs, bool *failed, int *depth,
                            const volatile sig_atomic_t *stop)
{
  uint64_t *sum = NULL;
  *depth = 0;
  LhStats stats;
  lh_stats_init(&stats);
  for (guint i = 0; i < plan->inputs->len && !*stop; i++) {
    const char *path = g_ptr_array_index(plan->inputs, i);
    if (failed[i])
      continue;
    LhioImage image;
    memset(&image, 0, sizeof image);
    int status = lhio_read(path, LHIO_READ_FULL, max_pixels, &image);
    if (status >= 0)
      status = image_histogram(run->context, &image.frame, run->options.matrix, &stats);
    lhio_image_clear(&image);
    if (status < 0) {
      if (!theirs[i])
        lht_error(path, "%s", lht_reason(status, path));
      failed[i] = true;
      continue;
    }
    if (!sum) {
      *depth = stats.bit_depth;
      sum = calloc(stats.n_bins, sizeof *sum);
    } else if (stats.bit_depth != *depth) {
      if (!theirs[i])
        lht_error(path, "%d-bit luma; --global needs every image at %d bits like the first",
                  stats.bit_depth, *depth);
      failed[i] = true;
      continue;
    }
    for (size_t v = 0; v < stats.n_bins; v++)
      sum[v] += stats.histogram[v];
  }
  lh_stats_clear(&stats);
  if (!sum || *stop) {
    free(sum);
    return NULL;
  }
  uint16_t *lut = malloc(((size_t)1 << *depth) * sizeof *lut);
  lh_lut_from_histogram(sum, *depth, run->options.range, lut);
  free(sum);
  return lut;
}

static bool check_args(EqualizeArgs *args, EqualizeRun *run, LhBackend *backend)
{
  LhEqualizeOptions *options = &run->options;
  lh_equalize_options_init(options);
  options->mode = args->clahe ? LH_EQUALIZE_CLAHE : LH_EQUALIZE_GLOBAL;
  const char *refusal = lht_out_dir_refusal(args->out_dir);
  if (refusal)
    return lht_usage_error(command_of(args), "%s", refusal), false;
  char *why = lht_luma_args_check(&args->luma, &options->matrix, &options->range, backend);
  if (why) {
    lht_usage_error(command_of(args), "%s", why);
    g_free(why);
    return false;
  }
  run->matrix_given = args->luma.matrix != NULL;
  run->range_given = args->luma.range != NULL;
  if (args->tiles && !parse_tiles(args->tiles, &options->tiles_x, &options->tiles_y))
    return lht_usage_error(command_of(args), "--tiles '%s': expected COLSxROWS, each 1 .. %d",
                           args->tiles, LH_CLAHE_MAX_TILES),
           false;
  if (args->clip && !lht_parse_number(args->clip, 0, G_MAXDOUBLE, &options->clip_limit))
    return lht_usage_error(command_of(args), "--clip '%s': expected a number >= 0 (0: no limit)",
                           args->clip),
           false;
  if (!lht_encode_options_parse(&args->encode, &run->rewrite, &why)) {
    lht_usage_error(command_of(args), "%s", why);
    g_free(why);
    return false;
  }
  if (args->global && args->apply_lut)
    return lht_usage_error(command_of(args), "--global and --apply-lut do not go together"), false;
  if (args->save_lut && args->apply_lut)
    return lht_usage_error(command_of(args), "--save-lut and --apply-lut do not go together"),
           false;
  refusal = lht_output_path_refusal(args->save_lut);
  if (refusal)
    return lht_usage_error(command_of(args), "--save-lut '': %s", refusal), false;
  if (!args->paths || !args->paths[0])
    return lht_usage_error(command_of(args), "no PATH given"), false;
  return true;
}

int lht_equalize_main(int argc, char **argv)
{
  EqualizeArgs args = {.clahe = strcmp(argv[0], "clahe") == 0};
  GOptionEntry common[] = {
      {"out", 'o', 0, G_OPTION_ARG_FILENAME, &args.out_dir,
       "Folder for the results (made if missing); never an input's own file", "DIR"},
      {G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &args.paths, NULL, "PATH…"},
      {NULL, 0, 0, 0, NULL, NULL, NULL},
  };
  GOptionEntry global_entries[] = {
      {"global", 'g', 0, G_OPTION_ARG_NONE, &args.global,
       "One LUT for all inputs, from the sum of their histograms", NULL},
      {"save-lut", 0, 0, G_OPTION_ARG_FILENAME, &args.save_lut,
       "Save the LUT (of --global, or of the one input) to FILE", "FILE"},
      {"apply-lut", 0, 0, G_OPTION_ARG_FILENAME, &args.apply_lut,
       "Map every input through the LUT saved in FILE", "FILE"},
      {NULL, 0, 0, 0, NULL, NULL, NULL},
  };
  GOptionEntry clahe_entries[] = {
      {"tiles", 't', 0, G_OPTION_ARG_STRING, &args.tiles,
       "Tile grid COLSxROWS, each 1..64, or N for NxN (default 8x8)", "GRID"},
      {"clip", 'c', 0, G_OPTION_ARG_STRING, &args.clip,
       "Clip limit as OpenCV's createCLAHE (default 40; 0: no limit)", "LIMIT"},
      {NULL, 0, 0, 0, NULL, NULL, NULL},
  };
  GOptionContext *option_context = g_option_context_new(NULL);
  g_option_context_set_summary(
      option_context,
      args.clahe
          ? "Writes each image with contrast-limited adaptive histogram equalization of its\n"
            "luma (OpenCV createCLAHE's grid and clip limit), in the same format and bit depth.\n"
            "Colour images keep their chroma: each pixel's R'G'B' is scaled by new/old luma."
          : "Writes each image with its luma histogram equalized (OpenCV equalizeHist's LUT,\n"
            "16-bit images too), in the same format and bit depth.  Colour images keep\n"
            "their chroma: each pixel's R'G'B' is scaled by new/old luma.");
  g_option_context_set_description(
      option_context,
      "PATHs are PNG or JPEG files, video files, or folders searched recursively;\n"
      "a file found in a folder keeps its path below it under DIR (a folder's\n"
      "search leaves DIR out).  '-' is an image on standard input, written as\n"
      "DIR/stdin.png or DIR/stdin.jpg as it is (so is a pipe or FIFO whose name is\n"
      "not an image's).  A video is written back in its container and codec\n"
      "(--codec, --crf), its audio and subtitles copied, the equalization smoothed\n"
      "over --temporal-window frames.\n"
      "Exit status: 0 all files done, 1 some file failed, 2 usage error,\n"
      "128 + N stopped by signal N (SIGINT, SIGTERM, SIGHUP): resume with --skip-existing.");
  g_option_context_add_main_entries(option_context, common, NULL);
  lht_luma_args_add(option_context, &args.luma);
  lht_encode_options_add(option_context, &args.encode);
  g_option_context_add_main_entries(option_context, args.clahe ? clahe_entries : global_entries,
                                    NULL);
  LhtBatchArgs batch;
  lht_batch_args_init(&batch, LHT_BATCH_OUTPUTS);
  lht_batch_add_options(option_context, &batch);
  LhtVideoOutArgs video;
  lht_video_out_args_init(&video);
  lht_video_out_add_options(option_context, &video, true);
  const char *command = args.clahe ? "lumahist clahe" : "lumahist equalize";
  int status = lht_parse_options(option_context, &argc, &argv, command);
  g_option_context_free(option_context);
  if (status < 0 && !lht_batch_add_listed_paths(&batch, &args.paths))
    status = LHT_EXIT_USAGE;
  if (status >= 0) {
    lht_batch_args_clear(&batch);
    lht_video_out_args_clear(&video);
    equalize_args_clear(&args);
    return status;
  }

  /* Every way out after the options were parsed goes through done:, which
   * frees what was made so far. */
  EqualizeRun run = {0};
  LhtPlan plan = {0};
  bool *failed = NULL, *is_video = NULL, *not_image = NULL, *theirs = NULL;
  uint16_t *lut = NULL;
  LhpStopSignals old_handlers;
  bool catching = false; /* SIGINT, SIGTERM, SIGHUP before the batch (old_handlers) */
  volatile sig_atomic_t *stop = lhp_pipeline_stop_flag();
  LhBackend wanted = LH_BACKEND_AUTO;
  if (!check_args(&args, &run, &wanted) || !lht_batch_args_check(&batch, command) ||
      !lht_video_out_args_check(&video, command)) {
    status = LHT_EXIT_USAGE;
    goto done;
  }
  if (video.temporal_window > 1 &&
      lh_temporal_new(video.temporal_window, video.cut_threshold, &run.temporal) < 0) {
    lht_error(NULL, "temporal smoothing: %s", lh_last_error());
    status = LHT_EXIT_FAILURE;
    goto done;
  }

  /* Folders give their videos too: each is written back as a video. */
  lht_walk_include_videos(true);
  bool ok = lht_plan_outputs(args.paths, (int)g_strv_length(args.paths), args.out_dir, &plan);
  /* Stopped in the walk: no folder made, no LUT read or saved. */
  status = lht_stopped_before_start();
  if (status)
    goto done;
  if (args.save_lut && !args.global && plan.inputs->len != 1) {
    status =
        lht_usage_error(command_of(&args), "--save-lut without --global takes one input image");
    goto done;
  }
  if (args.save_lut &&
      (lht_plan_holds_input(&plan, args.save_lut) || lht_plan_holds_output(&plan, args.save_lut))) {
    status = lht_usage_error(
        command_of(&args),
        "--save-lut %s is an input or an output image; give it a path of its own", args.save_lut);
    goto done;
  }

  /* A LUT that cannot be read leaves nothing to do: said before --out is
   * made. */
  if (args.apply_lut && !(lut = load_lut(args.apply_lut, &run.lut_depth))) {
    status = LHT_EXIT_FAILURE;
    goto done;
  }
  int refused = lht_batch_backend_refuses(&batch, wanted, command);
  /* A LUT that could not be saved is said before any input is read, as a
   * --report that cannot be is: before --out is made, unless it goes into
   * a folder --out makes. */
  bool inputs = plan.inputs->len > 0;
  char *lut_folder = args.save_lut ? g_path_get_dirname(args.save_lut) : NULL;
  bool lut_folder_there = lut_folder && g_file_test(lut_folder, G_FILE_TEST_EXISTS);
  g_free(lut_folder);
  if (refused < 0 && inputs && lut_folder_there && !lht_save_file_possible(args.save_lut))
    refused = LHT_EXIT_FAILURE;
  if (refused < 0 && inputs && !lht_out_dir_usable(args.out_dir))
    refused = LHT_EXIT_FAILURE;
  if (refused < 0 && inputs && args.save_lut && !lut_folder_there &&
      !lht_save_file_possible(args.save_lut))
    refused = LHT_EXIT_FAILURE;
  if (refused >= 0) {
    status = refused;
    goto done;
  }

  /* --global reads every input for its histogram before the batch, on a
   * context of its own.  Otherwise the batch opens its contexts while it
   * decodes (and says which backend with --verbose). */
  /* --save-lut of one image is --global over that image: its LUT is made
   * and saved before the batch, whether or not its output is skipped. */
  bool one_lut = args.global || args.save_lut;
  if (one_lut) {
    /* Caught while every input is read for the LUT, as the batch and the
     * videos catch them: Ctrl-C there stops the run with its line and exit
     * status, as it does later, instead of killing it without a word. */
    lhp_stop_signals_catch(&old_handlers);
    catching = true;
    run.context = lht_context_open(wanted, batch.device_ids, false);
    if (!run.context) {
      status = LHT_EXIT_FAILURE;
      goto done;
    }
  }

  LhtRewriteOptions rewrite = run.rewrite;
  rewrite.max_pixels = (uint64_t)args.luma.max_pixels;
  failed = g_new0(bool, plan.inputs->len + 1);
  is_video = g_new0(bool, plan.inputs->len + 1);
  not_image = g_new0(bool, plan.inputs->len + 1);
  /* --global's LUT is made of every input, in every shard; the inputs of
   * other shards are not this run's to report or to write. */
  theirs = g_new0(bool, plan.inputs->len + 1);
  guint images = 0;
  for (guint i = 0; i < plan.inputs->len; i++) {
    const char *path = g_ptr_array_index(plan.inputs, i);
    theirs[i] = !lht_shard_takes_output(&batch, args.out_dir, g_ptr_array_index(plan.outputs, i));
    is_video[i] = lhio_path_is_video(path);
    if (is_video[i] && (args.global || args.apply_lut || args.save_lut)) {
      /* One LUT for a whole video would undo what equalizing it is for. */
      if (!theirs[i])
        lht_error(path, "a video; --global, --save-lut and --apply-lut take images only");
      failed[i] = true;
    } else if (one_lut && !can_read_again(path)) {
      if (!theirs[i])
        lht_error(path, "a pipe or FIFO is read once; --global and --save-lut read each input "
                        "twice (for the LUT, then to equalize): save it to a file first");
      failed[i] = true;
    }
    images += !is_video[i];
  }
  if (one_lut) {
    lut = global_lut(&run, &plan, rewrite.max_pixels, theirs, failed, &run.lut_depth, stop);
    /* --out is made if missing, before a LUT saved into it.  One that
     * fails all the same (a disk full since) leaves the images unwritten:
     * the user asked for both. */
    if (lut && args.save_lut &&
        (g_mkdir_with_parents(args.out_dir, 0777) != 0 ||
         !save_lut(args.save_lut, lut, run.lut_depth))) {
      free(lut);
      lut = NULL;
    }
  }
  run.lut = lut;
  /* Given back before the batch, which catches them itself. */
  if (catching) {
    lhp_stop_signals_release(&old_handlers);
    catching = false;
    int signal_number = *stop;
    if (signal_number) {
      lht_error(NULL, "stopped by %s while reading the inputs for the LUT: no output written",
                lhp_signal_name(signal_number));
      status = 128 + signal_number;
      goto done;
    }
  }

  bool can_run = lut || (!args.apply_lut && !one_lut);
  /* Decoding and writing on --jobs threads, the equalization on the contexts'. */
  status = LHT_EXIT_OK;
  for (guint i = 0; i < plan.inputs->len; i++)
    not_image[i] = failed[i] || is_video[i];
  LhtWriteStop write_stop = {0};
  if (can_run && images)
    status = lht_batch_rewrite(&batch, &plan, args.out_dir, not_image, &rewrite, equalize_image,
                               NULL, &run, wanted, args.luma.verbose, &write_stop);
  /* Then the videos, one after the other, each with every thread of the
   * encoder and the CPU backend's pool. */
  if (status == LHT_EXIT_OK || status == LHT_EXIT_FAILURE) {
    /* lh_equalize writes Y through the LUT and copies chroma: the output
     * frame need not start as a copy of the input. */
    LhtVideoChange change = {
        .begin = begin_video, .change = equalize_video_frame, .fills_output = true, .data = &run};
    int video_status = lht_video_rewrite_plan(&plan, is_video, failed, &batch, args.out_dir, &video,
                                              wanted, args.luma.verbose, &change, &write_stop);
    if (video_status != LHT_EXIT_OK && (status == LHT_EXIT_OK || video_status > LHT_EXIT_USAGE))
      status = video_status;
    /* Once, after the videos too: a full disk stops them as it does the images. */
    lht_write_stop_say(&write_stop, args.out_dir);
  }
  for (guint i = 0; i < plan.inputs->len; i++)
    if (!theirs[i] && (failed[i] || !can_run))
      ok = false;
  if (status == LHT_EXIT_OK && !ok)
    status = LHT_EXIT_FAILURE;

done:
  if (catching)
    lhp_stop_signals_release(&old_handlers);
  lht_batch_args_clear(&batch);
  lht_video_out_args_clear(&video);
  lh_temporal_free(run.temporal);
  free(lut);
  g_free(failed);
  g_free(is_video);
  g_free(not_image);
  g_free(theirs);
  lh_context_free(run.context);
  lht_plan_clear(&plan);
  equalize_args_clear(&args);
  return status;
}
