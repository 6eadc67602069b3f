/* video-stats.c: `lumahist stats` on a video file: one record per frame (the
 * image fields, plus time, frame difference, scene cut, black, frozen, out
 * of legal range, flicker) and a summary record for the file.  Frames come
 * from lhio-video (GStreamer) in host or CUDA memory and are analysed by the
 * library where they are. */
#include <errno.h>
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
  args->every = 1;
  args->timeout_s = LHT_VIDEO_DEFAULT_TIMEOUT_S;
  args->cut_threshold = LHT_VIDEO_CUT_THRESHOLD;
}

void lht_video_add_options(GOptionContext *context, LhtVideoArgs *args)
{
  GOptionEntry entries[] = {
      {"every", 0, 0, G_OPTION_ARG_INT, &args->every,
       "Video: analyse one decoded frame in N (default 1: all)", "N"},
      {"fps", 0, 0, G_OPTION_ARG_DOUBLE, &args->fps,
       "Video: analyse at most F frames a second of stream time (default: all)", "F"},
      {"start", 0, 0, G_OPTION_ARG_DOUBLE, &args->start_s,
       "Video: begin at this presentation time, seconds", "SECONDS"},
      {"duration", 0, 0, G_OPTION_ARG_DOUBLE, &args->duration_s,
       "Video: stop after this much stream time, seconds (default: to the end)", "SECONDS"},
      {"cut-threshold", 0, 0, G_OPTION_ARG_DOUBLE, &args->cut_threshold,
       "Video: histogram distance above which a frame is a scene cut (default 0.4)", "D"},
      {"video-timeout", 0, 0, G_OPTION_ARG_DOUBLE, &args->timeout_s,
       "Video: give a file up when no frame comes for this long (default 30 s)", "SECONDS"},
      {"video-memory", 0, 0, G_OPTION_ARG_STRING, &args->memory_name,
       "Video: where NVDEC decoders leave frames: cuda (default: read in place on the GPU) or "
       "system (copied to the host by the decoder)",
       "system|cuda"},
      {NULL, 0, 0, 0, NULL, NULL, NULL},
  };
  GOptionGroup *group = g_option_group_new(
      "video", "Options of video files:", "Show the options of video files", NULL, NULL);
  g_option_group_add_entries(group, entries);
  g_option_context_add_group(context, group);
}

void lht_video_args_clear(LhtVideoArgs *args)
{
  g_clear_pointer(&args->memory_name, g_free);
}

bool lht_video_args_check(LhtVideoArgs *args, const char *command)
{
  const char *problem = NULL;
  if (args->every < 1)
    problem = "--every must be at least 1";
  else if (!(args->fps >= 0) || !isfinite(args->fps))
    problem = "--fps must be a positive number of frames a second";
  else if (!(args->start_s >= 0) || !isfinite(args->start_s))
    problem = "--start must be a time in seconds, 0 or more";
  else if (!(args->duration_s >= 0) || !isfinite(args->duration_s))
    problem = "--duration must be a time in seconds, more than 0";
  else if (!(args->timeout_s > 0) || !isfinite(args->timeout_s))
    problem = "--video-timeout must be a time in seconds, more than 0";
  else if (!(args->cut_threshold >= 0 && args->cut_threshold <= 1))
    problem = "--cut-threshold must be in [0, 1]";
  else if (args->memory_name && strcmp(args->memory_name, "system") != 0 &&
           strcmp(args->memory_name, "cuda") != 0)
    problem = "--video-memory must be system or cuda";
  if (!problem) {
    args->cuda_memory = !args->memory_name || strcmp(args->memory_name, "cuda") == 0;
    return true;
  }
  lht_error(NULL, "%s", problem);
  fprintf(stderr, "Try '%s --help'.\n", command);
  return false;
}

/* ------------------------------------------------------------------------ */
/* The state of a run and of one file                                        */

/* min, max and mean of one per-frame statistic over a file. */
typedef struct {
  double min, max, sum;
  uint64_t n;
} Range;

static void range_add(Range *r, double value)
{
  if (!isfinite(value))
    return;
  if (r->n == 0 || value < r->min)
    r->min = value;
  if (r->n == 0 || value > r->max)
    r->max = value;
  r->sum += value;
  r->n++;
}

typedef LhtVideoSpan Span; /* the report draws them as they are */

typedef struct {
  double pts;
  double mean;
} TimedMean;

enum {
  STAT_MEAN,
  STAT_STDDEV,
  STAT_MIN,
  STAT_MAX,
  STAT_MEDIAN,
  STAT_CLIPPED_LOW,
  STAT_CLIPPED_HIGH,
  STAT_OUT_OF_LEGAL,
  STAT_DIFF,
  STAT_CUT_DISTANCE,
  STAT_FLICKER,
  STAT_COUNT
};
static const char *const stat_names[STAT_COUNT] = {
    "mean",         "stddev",       "min",  "max",          "median",  "clipped_low",
    "clipped_high", "out_of_legal", "diff", "cut_distance", "flicker",
};

struct LhtVideoStats {
  LhtVideoJob job;
  LhContext *host_context;
  LhContext *cuda_context;
  LhBackend backend;       /* where the last frame was analysed */
  uint64_t analysed_on[3]; /* this file's frames analysed on each LhBackend */

  /* The previous record's frame, for diff (its luma, kept by the library
   * where the frame was analysed) and cuts (its histogram). */
  LhDifference *difference;
  uint64_t *previous_histogram;
  int previous_depth;

  /* One file's summary. */
  Range stats[STAT_COUNT];
  Range percentiles[LH_MAX_PERCENTILES];
  uint64_t *histogram; /* summed, of the first frame's depth */
  int depth;
  int width, height;
  LhMatrix matrix;
  LhRange range;
  uint64_t frames;
  uint64_t warnings;
  double first_pts, end_pts;
  GArray *cuts;   /* of double */
  GArray *black;  /* of Span */
  GArray *frozen; /* of Span */
  bool in_black, in_frozen;
  GArray *window; /* of TimedMean: the last second's means */
};

LhtVideoStats *lht_video_stats_new(const LhtVideoJob *job)
{
  LhtVideoStats *v = g_new0(LhtVideoStats, 1);
  v->job = *job;
  v->backend = job->backend;
  v->cuts = g_array_new(FALSE, FALSE, sizeof(double));
  v->black = g_array_new(FALSE, FALSE, sizeof(Span));
  v->frozen = g_array_new(FALSE, FALSE, sizeof(Span));
  v->window = g_array_new(FALSE, FALSE, sizeof(TimedMean));
  return v;
}

void lht_video_stats_free(LhtVideoStats *v)
{
  if (!v)
    return;
  /* Device memory of the host context's backend, if CUDA: freed before it.
   * (A CUDA frames' state went with its file's decoder context.) */
  lh_difference_free(v->difference);
  lh_context_free(v->host_context);
  lh_context_free(v->cuda_context);
  g_free(v->previous_histogram);
  g_free(v->histogram);
  g_array_free(v->cuts, TRUE);
  g_array_free(v->black, TRUE);
  g_array_free(v->frozen, TRUE);
  g_array_free(v->window, TRUE);
  g_free(v);
}

void lht_video_stats_set_stop(LhtVideoStats *v, volatile sig_atomic_t *stop)
{
  v->job.stop = stop;
}

static volatile sig_atomic_t video_stop_signal;
static struct sigaction old_int, old_term;

static void on_video_stop(int signal_number)
{
  video_stop_signal = signal_number;
}

volatile sig_atomic_t *lht_video_signals_catch(void)
{
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_handler = on_video_stop;
  /* As the pipeline's: a second Ctrl-C ends at once. */
  action.sa_flags = SA_RESTART | SA_RESETHAND;
  sigemptyset(&action.sa_mask);
  video_stop_signal = 0;
  sigaction(SIGINT, &action, &old_int);
  sigaction(SIGTERM, &action, &old_term);
  return &video_stop_signal;
}

void lht_video_signals_release(void)
{
  sigaction(SIGINT, &old_int, NULL);
  sigaction(SIGTERM, &old_term, NULL);
}

LhBackend lht_video_stats_backend(const LhtVideoStats *v)
{
  return v->backend;
}

static void file_reset(LhtVideoStats *v)
{
  memset(v->stats, 0, sizeof v->stats);
  memset(v->percentiles, 0, sizeof v->percentiles);
  g_free(v->histogram);
  v->histogram = NULL;
  v->depth = 0;
  v->frames = 0;
  v->warnings = 0;
  v->first_pts = NAN;
  v->end_pts = NAN;
  g_array_set_size(v->cuts, 0);
  g_array_set_size(v->black, 0);
  g_array_set_size(v->frozen, 0);
  g_array_set_size(v->window, 0);
  v->in_black = v->in_frozen = false;
  lh_difference_reset(v->difference);
  v->previous_depth = 0;
}

/* ------------------------------------------------------------------------ */
/* Per-frame measures                                                        */

/* FFmpeg signalstats' YLOW / YHIGH: the smallest value whose cumulative count
 * reaches lrint(N * p / 100.) (its integer arithmetic, N * p first). */
static uint32_t signalstats_percentile(const LhStats *s, int p)
{
  long threshold = lrint((double)(s->count * (uint64_t)p) / 100.);
  uint64_t sum = 0;
  for (size_t i = 0; i < s->n_bins; i++) {
    sum += s->histogram[i];
    if ((long long)sum >= (long long)threshold)
      return (uint32_t)i;
  }
  return (uint32_t)(s->n_bins - 1);
}

/* Fractions from the histogram: at or below `black` (black frames), and
 * outside the legal range 16..235 scaled to the depth. */
static void histogram_fractions(const LhStats *s, double *black_fraction, double *out_of_legal)
{
  int shift = s->bit_depth - 8;
  uint64_t legal_low = 16ull << shift, legal_high = 235ull << shift;
  double black_code = s->range == LH_RANGE_LIMITED ? (double)legal_low : 0.0;
  double white_code = s->range == LH_RANGE_LIMITED ? (double)legal_high : (double)(s->n_bins - 1);
  double black_level = black_code + LHT_VIDEO_BLACK_PIXEL * (white_code - black_code);
  uint64_t dark = 0, outside = 0;
  for (size_t i = 0; i < s->n_bins; i++) {
    if ((double)i <= black_level)
      dark += s->histogram[i];
    if (i < legal_low || i > legal_high)
      outside += s->histogram[i];
  }
  double n = s->count ? (double)s->count : 1.0;
  *black_fraction = (double)dark / n;
  *out_of_legal = (double)outside / n;
}

/* The std of the frame means over the last LHT_VIDEO_FLICKER_WINDOW_S of
 * stream time (the last 25 frames when there are no timestamps). */
static double flicker(LhtVideoStats *v, double pts, double mean)
{
  TimedMean entry = {pts, mean};
  g_array_append_val(v->window, entry);
  guint keep_from = 0;
  for (guint i = 0; i < v->window->len; i++) {
    double t = g_array_index(v->window, TimedMean, i).pts;
    bool old = isfinite(pts) && isfinite(t) ? t <= pts - LHT_VIDEO_FLICKER_WINDOW_S
                                            : v->window->len - i > 25;
    if (old)
      keep_from = i + 1;
  }
  if (keep_from)
    g_array_remove_range(v->window, 0, keep_from);
  double sum = 0, sum2 = 0;
  guint n = v->window->len;
  for (guint i = 0; i < n; i++)
    sum += g_array_index(v->window, TimedMean, i).mean;
  double average = sum / n;
  for (guint i = 0; i < n; i++) {
    double d = g_array_index(v->window, TimedMean, i).mean - average;
    sum2 += d * d;
  }
  return sqrt(sum2 / n);
}

/* Opens, extends or closes a span of flagged frames. */
static void track_span(GArray *spans, bool *open, bool flagged, const LhtFrameFields *f)
{
  double end = isfinite(f->duration) ? f->pts + f->duration : f->pts;
  if (flagged && !*open) {
    Span span = {f->pts, end, f->frame, 1};
    g_array_append_val(spans, span);
    *open = true;
  } else if (flagged) {
    Span *span = &g_array_index(spans, Span, spans->len - 1);
    span->end = end;
    span->frames++;
  } else {
    *open = false;
  }
}

/* ------------------------------------------------------------------------ */
/* Analysis                                                                  */

/* The frame's statistics, and its diff (the mean absolute difference of its
 * luma to the previous record's frame, FFmpeg's YDIF: NAN for the first, after
 * a change of size, or for R'G'B' frames, which have no luma plane), both by
 * the context that reads the frame where it is. */
static int analyze_on(LhtVideoStats *v, LhContext *context, const LhFrame *frame,
                      const LhOptions *options, LhStats *stats, double *diff)
{
  *diff = NAN;
  int status = lh_analyze(context, frame, options, stats);
  if (status < 0)
    return status;
  /* Where the library ran it (the tool's contexts are on one backend, but
   * the record says what happened, not what was asked). */
  v->backend = lh_context_last_backend(context);
  v->analysed_on[v->backend]++;
  if (!v->difference && (status = lh_difference_new(&v->difference)) < 0)
    return status;
  status = lh_difference_push(context, v->difference, frame, diff);
  /* R'G'B': no diff, and the next frame's is NAN too (the state restarts). */
  return status == LH_ERROR_UNSUPPORTED ? LH_OK : status;
}

static int analyze(LhtVideoStats *v, LhioVideo *video, const LhioVideoFrame *f,
                   const LhOptions *options, LhStats *stats, double *diff)
{
  if (f->frame.memory == LH_MEMORY_CUDA) {
    int status = lhio_video_cuda_enter(video);
    if (status < 0)
      return status;
    /* The library works inside the decoder's CUDA context, as the element
     * does: device pointers are valid there only.  The frame never leaves
     * the device: the diff's previous luma is kept there too. */
    if (!v->cuda_context)
      status = lh_context_new(LH_BACKEND_CUDA, &v->cuda_context);
    if (status >= 0)
      status = analyze_on(v, v->cuda_context, &f->frame, options, stats, diff);
    lhio_video_cuda_leave(video);
    return status;
  }
  if (!v->host_context) {
    v->host_context = lht_context_open(v->job.backend, v->job.verbose);
    if (!v->host_context)
      return lh_set_error(LH_ERROR_NO_DEVICE, "no analysis context");
  }
  return analyze_on(v, v->host_context, &f->frame, options, stats, diff);
}

/* Fills the frame's fields and adds it to the summary. */
static void measure(LhtVideoStats *v, LhioVideo *video, const LhioVideoFrame *f, const LhStats *s,
                    double diff, LhtFrameFields *fields)
{
  fields->decoder = lhio_video_decoder(video);
  fields->frame = f->index;
  fields->pts = f->pts;
  fields->duration = f->duration;
  fields->keyframe = f->keyframe;
  fields->decode_warning = f->warned;
  fields->diff = diff;
  fields->cut_distance = NAN;
  if (v->previous_histogram && v->previous_depth == s->bit_depth)
    fields->cut_distance = lh_histogram_distance(s->histogram, v->previous_histogram, s->bit_depth);
  fields->scene_cut =
      isfinite(fields->cut_distance) && fields->cut_distance > v->job.args->cut_threshold;
  double black_fraction;
  histogram_fractions(s, &black_fraction, &fields->out_of_legal);
  fields->black = black_fraction >= LHT_VIDEO_BLACK_FRACTION;
  double code_range = (double)(s->n_bins - 1);
  fields->frozen = isfinite(fields->diff) && fields->diff <= LHT_VIDEO_FROZEN_DIFF * code_range;
  fields->flicker = flicker(v, f->pts, s->mean);
  fields->signalstats_low = signalstats_percentile(s, 10);
  fields->signalstats_high = signalstats_percentile(s, 90);

  if (s->bit_depth != v->previous_depth) {
    g_free(v->previous_histogram);
    v->previous_histogram = g_new(uint64_t, s->n_bins);
    v->previous_depth = s->bit_depth;
  }
  memcpy(v->previous_histogram, s->histogram, s->n_bins * sizeof *s->histogram);

  /* The summary. */
  if (v->frames == 0) {
    v->depth = s->bit_depth;
    v->histogram = g_new0(uint64_t, s->n_bins);
    v->width = f->frame.width;
    v->height = f->frame.height;
    v->matrix = s->matrix;
    v->range = s->range;
    v->first_pts = f->pts;
  }
  if (s->bit_depth == v->depth)
    for (size_t i = 0; i < s->n_bins; i++)
      v->histogram[i] += s->histogram[i];
  v->frames++;
  v->warnings += f->warned;
  v->end_pts = isfinite(f->duration) ? f->pts + f->duration : f->pts;
  const double values[STAT_COUNT] = {
      s->mean,         s->stddev,
      s->min,          s->max,
      s->median,       s->clipped_low,
      s->clipped_high, fields->out_of_legal,
      fields->diff,    fields->cut_distance,
      fields->flicker,
  };
  for (int i = 0; i < STAT_COUNT; i++)
    range_add(&v->stats[i], values[i]);
  for (int i = 0; i < s->n_percentiles; i++)
    range_add(&v->percentiles[i], s->percentile_value[i]);
  if (fields->scene_cut)
    g_array_append_val(v->cuts, fields->pts);
  track_span(v->black, &v->in_black, fields->black, fields);
  track_span(v->frozen, &v->in_frozen, fields->frozen, fields);
}

/* ------------------------------------------------------------------------ */
/* The summary record                                                        */

static void write_range(FILE *out, const char *key, const Range *r)
{
  fprintf(out, "\"%s\":{\"min\":", key);
  lht_json_number(out, r->n ? r->min : NAN);
  fputs(",\"max\":", out);
  lht_json_number(out, r->n ? r->max : NAN);
  fputs(",\"mean\":", out);
  lht_json_number(out, r->n ? r->sum / (double)r->n : NAN);
  fputc('}', out);
}

static void write_spans(FILE *out, const char *key, const GArray *spans)
{
  fprintf(out, ",\"%s\":[", key);
  for (guint i = 0; i < spans->len; i++) {
    const Span *span = &g_array_index(spans, Span, i);
    fputs(i ? ",{\"start\":" : "{\"start\":", out);
    lht_json_number(out, span->start);
    fputs(",\"end\":", out);
    lht_json_number(out, span->end);
    fprintf(out, ",\"first_frame\":%" PRIu64 ",\"frames\":%" PRIu64 "}", span->first_frame,
            span->frames);
  }
  fputc(']', out);
}

/* jsonl only: a "summary": true record with the statistics of the summed
 * histogram, min/max/mean of each per-frame statistic, the cut times, the
 * black and frozen spans, and whether the file was read to its end. */
static void write_summary(LhtVideoStats *v, const char *path, const char *decoder,
                          const char *error)
{
  FILE *out = v->job.stream;
  const LhtVideoJob *job = &v->job;
  LhOptions options = *job->options;
  options.matrix = v->matrix;
  options.range = v->range;
  LhStats total;
  lh_stats_init(&total);
  if (lh_stats_from_histogram(v->histogram, v->depth, &options, &total) < 0) {
    lht_error(path, "summary: %s", lh_last_error());
    lh_stats_clear(&total);
    return;
  }
  fputs("{\"path\":", out);
  lht_json_string(out, path);
  fprintf(out, ",\"summary\":true,\"complete\":%s,\"frames\":%" PRIu64 ",\"duration\":",
          error ? "false" : "true", v->frames);
  lht_json_number(out, v->end_pts - v->first_pts);
  fputs(",\"start\":", out);
  lht_json_number(out, v->first_pts);
  fprintf(out, ",\"width\":%d,\"height\":%d,\"bit_depth\":%d,\"matrix\":\"%s\",\"range\":\"%s\"",
          v->width, v->height, v->depth, lh_matrix_name(v->matrix), lh_range_name(v->range));
  fprintf(out, ",\"backend\":\"%s\",\"decoder\":", lh_backend_name(v->backend));
  lht_json_string(out, decoder);
  fprintf(out, ",\"count\":%" PRIu64 ",\"mean\":", total.count);
  lht_json_number(out, total.mean);
  fputs(",\"stddev\":", out);
  lht_json_number(out, total.stddev);
  fprintf(out, ",\"min\":%" PRIu32 ",\"max\":%" PRIu32 ",\"median\":%" PRIu32, total.min, total.max,
          total.median);
  fputs(",\"percentiles\":{", out);
  for (int i = 0; i < total.n_percentiles; i++) {
    char key[32];
    lht_percentile_key(key, sizeof key, total.percentile_p[i]);
    fprintf(out, "%s\"%s\":%" PRIu32, i ? "," : "", key, total.percentile_value[i]);
  }
  fputs("},\"frame_stats\":{", out);
  for (int i = 0; i < STAT_COUNT; i++) {
    if (i)
      fputc(',', out);
    write_range(out, stat_names[i], &v->stats[i]);
  }
  for (int i = 0; i < total.n_percentiles; i++) {
    char key[40], name[48];
    lht_percentile_key(key, sizeof key, total.percentile_p[i]);
    snprintf(name, sizeof name, "p%s", key);
    fputc(',', out);
    write_range(out, name, &v->percentiles[i]);
  }
  fputs("},\"cuts\":[", out);
  for (guint i = 0; i < v->cuts->len; i++) {
    if (i)
      fputc(',', out);
    lht_json_number(out, g_array_index(v->cuts, double, i));
  }
  fputc(']', out);
  write_spans(out, "black", v->black);
  write_spans(out, "frozen", v->frozen);
  fprintf(out, ",\"decode_warnings\":%" PRIu64, v->warnings);
  if (error) {
    fputs(",\"error\":", out);
    lht_json_string(out, error);
  }
  if (job->with_histogram) {
    fputs(",\"histogram\":[", out);
    for (size_t i = 0; i < total.n_bins; i++)
      fprintf(out, "%s%" PRIu64, i ? "," : "", v->histogram[i]);
    fputc(']', out);
  }
  fputs("}\n", out);
  lh_stats_clear(&total);
}

/* ------------------------------------------------------------------------ */
/* The report's video section (video-report.c)                               */

static void report_frame(LhtVideoStats *v, LhioVideo *video, const LhioVideoFrame *f,
                         const LhtFrameFields *fields, const LhStats *s)
{
  /* The host plane, for thumbnails (a CUDA frame is downloaded for them:
   * only when there is a report). */
  LhtLumaPlane luma = {.width = f->frame.width, .height = f->frame.height};
  if (lhio_video_host_luma(video, &luma.plane, &luma.stride, &luma.sample_bytes) < 0)
    luma.plane = NULL;
  lht_video_report_frame(lht_report_videos(v->job.report), fields, s, &luma);
}

static void report_summary(LhtVideoStats *v, const char *decoder, const char *error)
{
  const Range *mean = &v->stats[STAT_MEAN], *flicker = &v->stats[STAT_FLICKER];
  LhtVideoSummary summary = {
      .frames = v->frames,
      .duration = v->end_pts - v->first_pts,
      .width = v->width,
      .height = v->height,
      .bit_depth = v->depth,
      .decoder = decoder,
      .mean_min = mean->n ? mean->min : NAN,
      .mean_mean = mean->n ? mean->sum / (double)mean->n : NAN,
      .mean_max = mean->n ? mean->max : NAN,
      .flicker_max = flicker->n ? flicker->max : NAN,
      .n_cuts = v->cuts->len,
      .black = (const Span *)(void *)v->black->data,
      .n_black = v->black->len,
      .frozen = (const Span *)(void *)v->frozen->data,
      .n_frozen = v->frozen->len,
      .error = error,
  };
  lht_video_report_end(lht_report_videos(v->job.report), &summary);
}

/* ------------------------------------------------------------------------ */
/* One file                                                                  */

/* Whether the frame is one the sampling options keep. */
static bool sampled(const LhtVideoArgs *args, const LhioVideoFrame *f, double *next_time)
{
  if (f->index % (uint64_t)args->every != 0)
    return false;
  if (args->fps > 0 && isfinite(f->pts)) {
    if (isfinite(*next_time) && f->pts < *next_time - 1e-9)
      return false;
    double step = 1.0 / args->fps;
    *next_time = isfinite(*next_time) ? *next_time + step : f->pts + step;
    /* After a gap, the next sample is a step after this frame. */
    if (*next_time <= f->pts)
      *next_time = f->pts + step;
  }
  return true;
}

bool lht_video_stats_file(LhtVideoStats *v, const char *path)
{
  const LhtVideoJob *job = &v->job;
  const LhtVideoArgs *args = job->args;
  file_reset(v);
  LhioVideoOptions video_options = {
      /* NVDEC's frames stay in CUDA memory unless --video-memory system:
       * analysis and the frame difference read them there. */
      .allow_cuda = args->cuda_memory && job->backend != LH_BACKEND_CPU,
      .start_s = args->start_s,
      .timeout_s = args->timeout_s,
  };
  LhioVideo *video = NULL;
  int status = lhio_video_open(path, &video_options, &video);
  if (status < 0) {
    lht_error(path, "%s", lht_reason(status, path));
    return false;
  }
  if (job->report)
    lht_video_report_begin(lht_report_videos(job->report), path);
  double end_time = args->duration_s > 0 ? args->start_s + args->duration_s : INFINITY;
  double next_time = NAN;
  char *error = NULL;
  bool stopped = false;
  LhStats stats;
  lh_stats_init(&stats);
  for (;;) {
    if (job->stop && *job->stop) {
      stopped = true;
      break;
    }
    LhioVideoFrame f;
    status = lhio_video_next(video, &f);
    if (status == 0)
      break;
    if (status < 0) {
      error = g_strdup(lht_reason(status, path));
      break;
    }
    if (isfinite(f.pts) && f.pts >= end_time - 1e-9)
      break;
    if (!sampled(args, &f, &next_time))
      continue;
    LhOptions options = *job->options;
    if (!job->matrix_given)
      options.matrix = f.matrix;
    if (!job->range_given)
      options.range = f.range;
    double diff;
    status = analyze(v, video, &f, &options, &stats, &diff);
    if (status < 0) {
      error = g_strdup_printf("frame %" PRIu64 ": %s", f.index, lht_reason(status, path));
      break;
    }
    if (job->verbose && v->frames == 0)
      lht_error(path, "decoded by %s, %s frames in %s memory, analysed on %s",
                lhio_video_decoder(video), f.format,
                f.frame.memory == LH_MEMORY_CUDA ? "CUDA" : "system", lh_backend_name(v->backend));
    LhtFrameFields fields;
    measure(v, video, &f, &stats, diff, &fields);
    if (job->report)
      report_frame(v, video, &f, &fields, &stats);
    LhtRecord record = {
        .path = path,
        .width = f.frame.width,
        .height = f.frame.height,
        .backend = v->backend,
        .stats = &stats,
        .video = &fields,
    };
    lht_writer_record(job->writer, &record);
    if (!job->commit(job->commit_data)) {
      stopped = true;
      break;
    }
    if (job->progress) {
      char note[64];
      snprintf(note, sizeof note, "frame %" PRIu64, f.index);
      lht_progress_note(job->progress, note);
    }
  }
  lh_stats_clear(&stats);
  if (job->verbose && v->analysed_on[LH_BACKEND_CPU] && v->analysed_on[LH_BACKEND_CUDA])
    lht_error(path,
              "%" PRIu64 " frames analysed on cuda, %" PRIu64 " on cpu (--backend auto sends each "
              "frame in system memory where it costs less)",
              v->analysed_on[LH_BACKEND_CUDA], v->analysed_on[LH_BACKEND_CPU]);
  memset(v->analysed_on, 0, sizeof v->analysed_on);
  if (!stopped && v->frames > 0) {
    if (job->format == LHT_FORMAT_JSONL)
      write_summary(v, path, lhio_video_decoder(video), error);
    if (!job->commit(job->commit_data))
      stopped = true;
    if (job->dataset)
      lht_dataset_add(job->dataset, v->depth, v->histogram);
    if (job->report) {
      lht_report_add(job->report, path, v->width, v->height, v->depth, v->histogram);
      report_summary(v, lhio_video_decoder(video), error);
    }
  }
  if (job->progress)
    lht_progress_note(job->progress, NULL);
  if (v->cuda_context) {
    /* Made in this file's decoder context, which dies with the video:
     * freed there, and made again for the next file's; so is the diff's
     * state, whose previous luma is device memory of that context. */
    lhio_video_cuda_enter(video);
    lh_difference_free(v->difference);
    v->difference = NULL;
    lh_context_free(v->cuda_context);
    v->cuda_context = NULL;
    lhio_video_cuda_leave(video);
  }
  lhio_video_close(video);
  if (error) {
    if (v->frames > 0)
      lht_error(path, "%s (the %" PRIu64 " frames decoded are kept)", error, v->frames);
    else
      lht_error(path, "%s", error);
  }
  bool ok = !error && !stopped;
  g_free(error);
  return ok;
}
