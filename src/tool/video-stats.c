/* video-stats.c: `lumahist stats` on a video file: the frame loop of
 * src/pipeline/ (lhp-video.h) gives a record per frame and a summary for the
 * file, which this writes (JSON Lines, CSV or table), commits and hands to
 * --dataset, --report and the progress bar. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lht-video-report.h"
#include "lht-video.h"

/* ------------------------------------------------------------------------ */
/* Options                                                                   */

void lht_video_args_init(LhtVideoArgs *args)
{
  memset(args, 0, sizeof *args);
  lhp_video_options_init(&args->options);
  args->options.program = G_MININT; /* not given: 0 once checked */
  /* Not given: 0 once checked, "all frames" and "to the end". */
  args->options.fps = args->options.duration_s = -G_MAXDOUBLE;
}

/* --start, noted as given: without it --duration counts from the first
 * frame.  Read as GOption reads a double. */
static gboolean parse_start(const gchar *name, const gchar *value, gpointer data, GError **error)
{
  LhtVideoArgs *args = data;
  char *end = NULL;
  double start = g_ascii_strtod(value, &end);
  if (!end || end == value || *end != '\0') {
    g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                "Cannot parse double value \u201c%s\u201d for %s", value, name);
    return FALSE;
  }
  args->options.start_s = start;
  args->options.start_given = true;
  return TRUE;
}

void lht_video_add_options(GOptionContext *context, LhtVideoArgs *args)
{
  GOptionEntry entries[] = {
      {"every", 0, 0, G_OPTION_ARG_INT, &args->options.every,
       "Video: analyse one decoded frame in N (default 1: all)", "N"},
      {"fps", 0, 0, G_OPTION_ARG_DOUBLE, &args->options.fps,
       "Video: analyse at most F frames a second of stream time (default: all)", "F"},
      {"start", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)parse_start,
       "Video: begin at this presentation time, seconds (default: the first frame)", "SECONDS"},
      {"duration", 0, 0, G_OPTION_ARG_DOUBLE, &args->options.duration_s,
       "Video: stop after this much stream time, seconds, from --start or the first frame "
       "(default: to the end)",
       "SECONDS"},
      {"cut-threshold", 0, 0, G_OPTION_ARG_DOUBLE, &args->options.cut_threshold,
       "Video: histogram distance above which a frame is a scene cut (default 0.4)", "D"},
      {"program", 0, 0, G_OPTION_ARG_INT, &args->options.program,
       "Video: the program of an MPEG-TS to read (default: the first whose map comes, as "
       "GStreamer's tsdemux takes it; a file of several says which)",
       "N"},
      {"video-timeout", 0, 0, G_OPTION_ARG_DOUBLE, &args->options.timeout_s,
       "Video: give a file up when no frame comes for this long (default 30 s)", "SECONDS"},
      {"video-memory", 0, 0, G_OPTION_ARG_STRING, &args->memory_name,
       "Video: where NVDEC decoders leave frames: cuda (default: read in place on the GPU) or "
       "system (copied to the host by the decoder)",
       "system|cuda"},
      {NULL, 0, 0, 0, NULL, NULL, NULL},
  };
  GOptionGroup *group = g_option_group_new(
      "video", "Options of video files:", "Show the options of video files", args, NULL);
  g_option_group_add_entries(group, entries);
  g_option_context_add_group(context, group);
}

void lht_video_args_clear(LhtVideoArgs *args)
{
  g_clear_pointer(&args->memory_name, g_free);
}

bool lht_video_args_check(LhtVideoArgs *args, const char *command)
{
  const char *option, *rule;
  args->options.memory = args->memory_name;
  /* 0 is no program (the network's): given, it is refused. */
  if (args->options.program == G_MININT)
    args->options.program = 0;
  else if (args->options.program == 0)
    args->options.program = -1;
  /* 0 is the shared options' "not given" too: given (--duration 0 read as
   * the whole video, though its rule says more than 0), it is refused. */
  double *given[] = {&args->options.fps, &args->options.duration_s};
  for (size_t i = 0; i < G_N_ELEMENTS(given); i++)
    *given[i] = *given[i] == -G_MAXDOUBLE ? 0 : *given[i] == 0 ? -1 : *given[i];
  if (lhp_video_options_check(&args->options, &option, &rule))
    return true;
  /* The shared check names options as Python does: cut_threshold is
   * --cut-threshold here. */
  char *dashed = g_strdelimit(g_strdup(option), "_", '-');
  lht_usage_error(command, "--%s %s", dashed, rule);
  g_free(dashed);
  return false;
}

/* ------------------------------------------------------------------------ */
/* Records                                                                   */

struct LhtVideoStats {
  LhtVideoJob job;
  LhpReport report; /* the frame loop's notes, on the progress bar's terms */
  LhpVideoStats *loop;
  uint64_t frames; /* records of frames written, every file's */
};

/* The report's video section (video-report.c) of a frame: its host plane,
 * for thumbnails (a CUDA frame is downloaded for them: only when there is a
 * report). */
static void report_frame(LhtVideoStats *v, const LhpVideoFrame *frame)
{
  LhtLumaPlane luma = {.width = frame->width, .height = frame->height};
  if (lhio_video_host_luma(frame->video, &luma.plane, &luma.stride, &luma.sample_bytes) < 0)
    luma.plane = NULL;
  lht_video_report_frame(lht_report_videos(v->job.report), frame->fields, frame->stats, &luma);
}

static bool write_frame(const LhpVideoFrame *frame, void *data)
{
  LhtVideoStats *v = data;
  const LhtVideoJob *job = &v->job;
  if (job->report)
    report_frame(v, frame);
  LhtRecord record = {
      .path = frame->path,
      .width = frame->width,
      .height = frame->height,
      .backend = frame->backend,
      .stats = frame->stats,
      .video = frame->fields,
  };
  lht_writer_record(job->writer, &record);
  v->frames++;
  if (!job->commit(job->commit_data))
    return false;
  if (job->progress) {
    char note[64];
    snprintf(note, sizeof note, "frame %" PRIu64, frame->fields->frame);
    lht_progress_note(job->progress, note);
  }
  return true;
}

static void report_summary(LhtVideoStats *v, const LhpVideoSummary *s)
{
  const LhpVideoRange *mean = &s->stats[LHP_VIDEO_STAT_MEAN];
  const LhpVideoRange *flicker = &s->stats[LHP_VIDEO_STAT_FLICKER];
  LhtVideoSummary summary = {
      .frames = s->frames,
      .duration = s->end_pts - s->first_pts,
      .width = s->width,
      .height = s->height,
      .bit_depth = s->bit_depth,
      .decoder = s->decoder,
      .mean_min = mean->n ? mean->min : NAN,
      .mean_mean = mean->n ? mean->sum / (double)mean->n : NAN,
      .mean_max = mean->n ? mean->max : NAN,
      .flicker_max = flicker->n ? flicker->max : NAN,
      .n_cuts = s->n_cuts,
      .black = s->black,
      .n_black = s->n_black,
      .frozen = s->frozen,
      .n_frozen = s->n_frozen,
      .error = s->error,
  };
  lht_video_report_end(lht_report_videos(v->job.report), &summary);
}

/* The summary record (jsonl only), the dataset's sum and the report. */
static bool write_summary(const LhpVideoSummary *summary, void *data)
{
  LhtVideoStats *v = data;
  const LhtVideoJob *job = &v->job;
  if (job->format == LHT_FORMAT_JSONL && summary->total)
    lhp_video_summary_write(job->stream, summary, job->with_histogram);
  bool going = job->commit(job->commit_data);
  if (job->dataset)
    lht_dataset_add(job->dataset, summary->path, summary->bit_depth, summary->matrix,
                    summary->range, summary->histogram);
  if (job->report) {
    lht_report_add(job->report, summary->path, summary->width, summary->height, summary->bit_depth,
                   summary->histogram);
    report_summary(v, summary);
  }
  return going;
}

LhtVideoStats *lht_video_stats_new(const LhtVideoJob *job)
{
  LhtVideoStats *v = g_new0(LhtVideoStats, 1);
  v->job = *job;
  v->report = lht_progress_report(job->progress);
  LhpVideoJob loop = {
      .video = &job->args->options,
      .options = job->options,
      .matrix_given = job->matrix_given,
      .range_given = job->range_given,
      .backend = job->backend,
      .device_ids = job->device_ids,
      .verbose = job->verbose,
      .report = &v->report,
      .frame = write_frame,
      .summary = write_summary,
      .data = v,
      .stop = job->stop,
  };
  v->loop = lhp_video_stats_new(&loop);
  return v;
}

void lht_video_stats_free(LhtVideoStats *v)
{
  if (!v)
    return;
  lhp_video_stats_free(v->loop);
  g_free(v);
}

uint64_t lht_video_stats_frames(const LhtVideoStats *v)
{
  return v ? v->frames : 0;
}

bool lht_video_stats_file(LhtVideoStats *v, const char *path)
{
  if (v->job.report)
    lht_video_report_begin(lht_report_videos(v->job.report), path);
  char *failure = NULL;
  LhpVideoOutcome outcome = lhp_video_stats_file(v->loop, path, NULL, &failure);
  if (v->job.progress)
    lht_progress_note(v->job.progress, NULL);
  if (failure)
    lht_error(path, "%s", failure);
  g_free(failure);
  return outcome == LHP_VIDEO_DONE;
}
