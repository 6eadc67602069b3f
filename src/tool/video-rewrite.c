/* video-rewrite.c: the videos among the inputs of `lumahist equalize`,
 * `clahe` and `overlay`, each written back under --out with the same name
 * and container (lhio_video_rewrite: decode, change each frame here, encode
 * with the input's codec, other streams copied), one after the other after
 * the images, with --codec, --crf and, for equalization, temporal smoothing.
 * A full disk stops them, as it stops the images (LhtWriteStop). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <glib/gstdio.h>

#include "lht-video.h"

void lht_video_out_args_init(LhtVideoOutArgs *args)
{
  memset(args, 0, sizeof *args);
  args->crf = G_MININT; /* not given: lhio's default (any crf < 0) */
  args->temporal_window = LHT_VIDEO_TEMPORAL_WINDOW;
  args->cut_threshold = LHP_VIDEO_CUT_THRESHOLD;
  args->timeout_s = LHP_VIDEO_DEFAULT_TIMEOUT_S;
  args->program = G_MININT; /* not given: 0 once checked */
}

void lht_video_out_add_options(GOptionContext *context, LhtVideoOutArgs *args, bool temporal)
{
  GOptionEntry entries[] = {
      {"codec", 0, 0, G_OPTION_ARG_STRING, &args->codec,
       "Video: the GStreamer encoder (x264enc, x265enc, vp9enc, avenc_mpeg4, ...; default: one "
       "for the input's codec)",
       "ELEMENT"},
      {"crf", 0, 0, G_OPTION_ARG_INT, &args->crf,
       "Video: constant quality on x264's CRF scale, 0 (lossless where the encoder has it) .. 51 "
       "(default 18)",
       "N"},
      {"bitrate", 0, 0, G_OPTION_ARG_INT, &args->bitrate_kbps,
       "Video: a mean bitrate in kbit/s instead of constant quality", "KBPS"},
      {"video-timeout", 0, 0, G_OPTION_ARG_DOUBLE, &args->timeout_s,
       "Video: give a file up when no frame comes for this long (default 30 s)", "SECONDS"},
      {"program", 0, 0, G_OPTION_ARG_INT, &args->program,
       "Video: the program of an MPEG-TS to write (default: the first whose map comes, as "
       "GStreamer's tsdemux takes it; a file of several says which)",
       "N"},
      {NULL, 0, 0, 0, NULL, NULL, NULL},
  };
  GOptionEntry temporal_entries[] = {
      {"temporal-window", 0, 0, G_OPTION_ARG_INT, &args->temporal_window,
       "Video: average the LUTs of the last N frames (default 8; 1: each frame on its own)", "N"},
      {"cut-threshold", 0, 0, G_OPTION_ARG_DOUBLE, &args->cut_threshold,
       "Video: histogram distance above which a frame is a scene cut and restarts the window "
       "(default 0.4)",
       "D"},
      {NULL, 0, 0, 0, NULL, NULL, NULL},
  };
  GOptionGroup *group = g_option_group_new("video", "Options of video files (written back):",
                                           "Show the options of video files", NULL, NULL);
  g_option_group_add_entries(group, entries);
  if (temporal)
    g_option_group_add_entries(group, temporal_entries);
  g_option_context_add_group(context, group);
}

bool lht_video_out_args_check(LhtVideoOutArgs *args, const char *command)
{
  const char *problem = NULL;
  if (args->program == G_MININT)
    args->program = 0;
  else if (args->program < 1 || args->program > LHIO_TS_MAX_PROGRAM_NUMBER)
    problem = "--program must be a program number, 1 .. 65535";
  if (args->crf != G_MININT && (args->crf < 0 || args->crf > LHIO_VIDEO_MAX_CRF))
    problem = "--crf must be in 0 .. 51";
  else if (args->bitrate_kbps < 0 || args->bitrate_kbps > 2000000)
    problem = "--bitrate must be in 1 .. 2000000 kbit/s";
  else if (args->bitrate_kbps > 0 && args->crf >= 0)
    problem = "--crf and --bitrate do not go together";
  else if (args->temporal_window < 1 || args->temporal_window > LH_TEMPORAL_MAX_WINDOW)
    problem = "--temporal-window must be in 1 .. 256";
  else if (!(args->cut_threshold >= 0 && args->cut_threshold <= 1))
    problem = "--cut-threshold must be in [0, 1]";
  else if (!(args->timeout_s > 0) || !isfinite(args->timeout_s))
    problem = "--video-timeout must be a time in seconds, more than 0";
  if (!problem)
    return true;
  lht_usage_error(command, "%s", problem);
  return false;
}

void lht_video_out_args_clear(LhtVideoOutArgs *args)
{
  g_clear_pointer(&args->codec, g_free);
}

typedef struct {
  LhContext *context;
  const LhtVideoChange *change;
  LhtProgress *progress;
  uint64_t frame; /* of the video under way */
} FrameRun;

/* On the pipeline's streaming thread, the only one that uses the context
 * and the progress while a video is rewritten. */
static int change_frame(const LhFrame *in, LhFrame *out, LhMatrix matrix, LhRange range,
                        int orientation, void *data)
{
  FrameRun *run = data;
  int status =
      run->change->change(run->context, in, out, matrix, range, orientation, run->change->data);
  char note[64];
  snprintf(note, sizeof note, "frame %" G_GUINT64_FORMAT, run->frame++);
  lht_progress_note(run->progress, note);
  return status;
}

/* The output of the plan's input i: its planned name, and where the input
 * has no name of its own (a video redirected to standard input) the
 * extension of its container, which the output keeps: OUT/stdin.mkv
 * (OUT/stdin.mjpeg for Motion JPEG). */
static char *video_output(const LhtPlan *plan, guint i)
{
  const char *output = g_ptr_array_index(plan->outputs, i);
  if (!lht_plan_named_by_content(plan, i))
    return g_strdup(output);
  const char *input = g_ptr_array_index(plan->inputs, i);
  /* Motion JPEG begins as an image does: its content as a whole tells it. */
  if (lhio_is_motion_jpeg(input))
    return g_strconcat(output, ".mjpeg", NULL);
  uint8_t head[LHIO_VIDEO_SNIFF_BYTES];
  size_t n = 0;
  /* A file redirected to standard input opens again at its start. */
  FILE *file = fopen(input, "rb");
  if (file) {
    n = fread(head, 1, sizeof head, file);
    fclose(file);
  }
  return g_strconcat(output, lhio_video_extension(head, n), NULL);
}

/* A transport stream of several programs is written with the one tsdemux
 * read: the others are left out, and said so. */
static void say_programs_left_out(const char *input, LhtProgress *progress)
{
  char list[512], kept[64];
  if (!lhio_ts_several_programs(input, list, sizeof list, kept, sizeof kept, "one"))
    return;
  lht_progress_clear(progress);
  lht_error(input,
            "written with %s alone of its %s: GStreamer's tsdemux reads one program (--program N "
            "writes another)",
            kept, list);
}

/* The errno of the library's last error when it is the output's write that
 * failed ("INPUT: writing OUTPUT: why", video-rewrite.c in lhio) in a way
 * that stops the run (lht_write_stop_error); else 0. */
static int write_failure_stopping(const char *input, const char *output)
{
  char *prefix = g_strdup_printf("%s: writing %s: ", input, output);
  const char *message = lh_last_error();
  int error = message && g_str_has_prefix(message, prefix)
                  ? lht_write_stop_error(message + strlen(prefix))
                  : 0;
  g_free(prefix);
  return error;
}

int lht_video_rewrite_plan(const LhtPlan *plan, const bool *is_video, const bool *leave_out,
                           const LhtBatchArgs *batch, const char *out_dir,
                           const LhtVideoOutArgs *args, LhBackend backend, bool verbose,
                           const LhtVideoChange *change, LhtWriteStop *write_stop)
{
  GArray *pending = g_array_new(FALSE, FALSE, sizeof(guint));
  guint skipped = 0;
  for (guint i = 0; i < plan->inputs->len; i++) {
    const char *output = g_ptr_array_index(plan->outputs, i);
    if (!is_video[i] || (leave_out && leave_out[i]))
      continue;
    if (!lht_shard_takes_output(batch, out_dir, output))
      continue;
    /* Another video may come through standard input: it is never skipped. */
    if (batch->skip_existing && !lht_plan_named_by_content(plan, i) && lht_output_exists(output)) {
      skipped++;
      continue;
    }
    g_array_append_val(pending, i);
  }
  if (skipped && (verbose || batch->progress) && !batch->quiet)
    lht_error(NULL, "skipping %u video%s whose output exists", skipped, skipped == 1 ? "" : "s");
  if (pending->len == 0) {
    g_array_free(pending, TRUE);
    return LHT_EXIT_OK;
  }
  if (write_stop->error) {
    /* The images filled the disk: no video is tried, each would fail on it. */
    write_stop->not_done += pending->len;
    g_array_free(pending, TRUE);
    return LHT_EXIT_FAILURE;
  }

  FrameRun run = {.context = lht_context_open(backend, batch->device_ids, verbose),
                  .change = change};
  /* GStreamer's NVDEC decoders of that device (the frames come to the host,
   * but the decoding is that device's work too). */
  lhio_video_prefer_cuda_device(lhp_first_device(batch->device_ids));
  if (!run.context) {
    g_array_free(pending, TRUE);
    return LHT_EXIT_FAILURE;
  }
  LhtProgress *progress = lht_progress_new(pending->len, batch->progress, batch->quiet);
  lht_progress_counts(progress, "videos");
  run.progress = progress;
  LhpStopSignals old_handlers;
  lhp_stop_signals_catch(&old_handlers);
  volatile sig_atomic_t *stop = lhp_pipeline_stop_flag();
  LhioVideoRewriteOptions options = {
      .codec = args->codec,
      .crf = args->crf,
      .bitrate_kbps = args->bitrate_kbps,
      .timeout_s = args->timeout_s,
      .program = args->program,
      .stop = stop,
      .change = change_frame,
      .fills_output = change->fills_output,
      .data = &run,
  };
  guint done = 0, failed = 0;
  for (guint k = 0; k < pending->len && !*stop; k++) {
    int stopping = 0; /* a write that stops the run (lht_write_stop_error) */
    guint i = g_array_index(pending, guint, k);
    const char *input = g_ptr_array_index(plan->inputs, i);
    char *output = video_output(plan, i);
    run.frame = 0;
    char *folder = g_path_get_dirname(output);
    int made = g_mkdir_with_parents(folder, 0777);
    int error = errno;
    g_free(folder);
    bool ok = true;
    if (made != 0) {
      lht_progress_clear(progress);
      lht_error(input, "cannot make the folder of %s: %s", output, g_strerror(error));
      ok = false;
    } else if (lht_plan_holds_input(plan, output)) {
      /* Checked again at the last moment: a file may have been linked since. */
      lht_progress_clear(progress);
      lht_error(input, "its output %s is an input; not overwritten", output);
      ok = false;
    }
    int status = ok && change->begin ? change->begin(run.context, change->data) : LH_OK;
    LhioVideoRewriteResult result;
    memset(&result, 0, sizeof result);
    LhtPlacing placing = {.written = plan->written, .input = input};
    options.place = lht_written_place;
    options.place_data = &placing;
    if (ok && status >= 0)
      status = lhio_video_rewrite(input, output, &options, &result);
    if (ok && (placing.first || placing.guarded)) {
      char *why = lht_placing_refusal(&placing, output);
      lht_progress_clear(progress);
      lht_error(input, "%s", why);
      g_free(why);
      ok = false;
    } else if (ok && status < 0 && !*stop) {
      lht_progress_clear(progress);
      /* The message already names the file. */
      lht_error(NULL, "%s", lh_last_error());
      stopping = write_failure_stopping(input, output);
      ok = false;
    }
    lht_placing_clear(&placing);
    if (ok && status >= 0 && result.left_out) {
      lht_progress_clear(progress);
      lht_error(input, "written without its stream %s", result.left_out);
    }
    if (ok && status >= 0 && args->program == 0 && strcmp(result.muxer, "mpegtsmux") == 0)
      say_programs_left_out(input, progress);
    if (ok && status >= 0 && result.attachments_left_out > 0) {
      lht_progress_clear(progress);
      lht_error(input,
                "written without its %d attached file%s (fonts, covers): GStreamer 1.22's "
                "matroskamux writes none",
                result.attachments_left_out, result.attachments_left_out == 1 ? "" : "s");
    }
    if (ok && status >= 0 && result.timecode_left_out) {
      lht_progress_clear(progress);
      lht_error(input, "written without its timecode track (tmcd): GStreamer 1.22's qtdemux gives "
                       "none to copy");
    }
    if (ok && status >= 0 && result.alpha_left_out) {
      lht_progress_clear(progress);
      lht_error(input, "written without its alpha channel (GStreamer 1.22 writes no VP8 or VP9 "
                       "alpha): its frames are opaque");
    }
    char *note =
        ok && status >= 0 && change->written_note ? change->written_note(change->data) : NULL;
    if (note) {
      lht_progress_clear(progress);
      lht_error(input, "%s", note);
      g_free(note);
    }
    free(result.left_out);
    if (ok && status >= 0 && verbose) {
      lht_progress_clear(progress);
      lht_error(input, "%" G_GUINT64_FORMAT " frames: %s -> %s into %s", result.frames,
                result.decoder[0] ? result.decoder : "raw", result.encoder, result.muxer);
    }
    g_free(output);
    if (*stop)
      break;
    if (ok && status >= 0)
      done++;
    else
      failed++;
    lht_progress_count(progress, !(ok && status >= 0));
    if (stopping) {
      write_stop->error = stopping;
      write_stop->not_done += pending->len - k - 1;
      break;
    }
  }
  write_stop->written += done;
  lht_progress_note(progress, NULL);
  lhp_stop_signals_release(&old_handlers);
  int signal_number = *stop;
  /* Each video was counted as it ended (lht_progress_count). */
  lht_progress_finish(progress, 0, 0, signal_number != 0);
  lh_context_free(run.context);
  bool resumable = lht_plan_any_resumable(plan, (const guint *)pending->data, pending->len);
  g_array_free(pending, TRUE);
  if (signal_number) {
    lht_error(NULL, "stopped by %s: %u video%s written%s", lhp_signal_name(signal_number), done,
              done == 1 ? "" : "s", resumable ? "; run again with --skip-existing to go on" : "");
    return 128 + signal_number;
  }
  return failed ? LHT_EXIT_FAILURE : LHT_EXIT_OK;
}
