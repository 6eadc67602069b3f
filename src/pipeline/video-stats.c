/* video-stats.c: the statistics of a video file, for `lumahist stats` and
 * lumahist.stats_files alike (lhp-video.h): frames come from lhio-video
 * (GStreamer) in host or CUDA memory, are sampled as the options say and
 * analysed by the library where they are; each gets its measures (time,
 * frame difference, scene cut, black, frozen, out of legal range, flicker)
 * and is added to the file's summary.  The front end gets each frame and
 * the summary through the job's callbacks and writes them. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lhp-video.h"

/* ------------------------------------------------------------------------ */
/* Options                                                                   */

void lhp_video_options_init(LhpVideoOptions *options)
{
  memset(options, 0, sizeof *options);
  options->every = 1;
  options->timeout_s = LHP_VIDEO_DEFAULT_TIMEOUT_S;
  options->cut_threshold = LHP_VIDEO_CUT_THRESHOLD;
}

/* Names the bad option and what it must be, for lhp_video_options_check. */
static bool refuse(const char **option, const char **rule, const char *name, const char *what)
{
  *option = name;
  *rule = what;
  return false;
}

bool lhp_video_options_check(LhpVideoOptions *o, const char **option, const char **rule)
{
  if (o->every < 1)
    return refuse(option, rule, "every", "must be at least 1");
  if (!(o->fps >= 0) || !isfinite(o->fps))
    return refuse(option, rule, "fps", "must be a positive number of frames a second");
  if (!(o->start_s >= 0) || !isfinite(o->start_s))
    return refuse(option, rule, "start", "must be a time in seconds, 0 or more");
  if (!(o->duration_s >= 0) || !isfinite(o->duration_s))
    return refuse(option, rule, "duration", "must be a time in seconds, more than 0");
  if (!(o->timeout_s > 0) || !isfinite(o->timeout_s))
    return refuse(option, rule, "video_timeout", "must be a time in seconds, more than 0");
  if (o->program < 0 || o->program > LHIO_TS_MAX_PROGRAM_NUMBER)
    return refuse(option, rule, "program", "must be a program number, 1 .. 65535");
  if (!(o->cut_threshold >= 0 && o->cut_threshold <= 1))
    return refuse(option, rule, "cut_threshold", "must be in [0, 1]");
  if (o->memory && strcmp(o->memory, "system") != 0 && strcmp(o->memory, "cuda") != 0)
    return refuse(option, rule, "video_memory", "must be system or cuda");
  o->cuda_memory = !o->memory || strcmp(o->memory, "cuda") == 0;
  return true;
}

/* ------------------------------------------------------------------------ */
/* The state of a run and of one file                                        */

static void range_add(LhpVideoRange *r, double value)
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

typedef struct {
  double pts;
  double mean;
} TimedMean;

const char *const lhp_video_stat_names[LHP_VIDEO_STAT_COUNT] = {
    "mean",         "stddev",       "min",  "max",          "median",  "clipped_low",
    "clipped_high", "out_of_legal", "diff", "cut_distance", "flicker",
};

struct LhpVideoStats {
  LhpVideoJob job;
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
  LhpVideoRange stats[LHP_VIDEO_STAT_COUNT];
  LhpVideoRange percentiles[LH_MAX_PERCENTILES];
  uint64_t *histogram; /* summed, of the first frame's depth */
  int depth;
  int width, height;
  LhMatrix matrix;
  LhRange range;
  uint64_t frames;
  uint64_t warnings;
  double first_pts, end_pts;
  GArray *cuts;   /* of double */
  GArray *black;  /* of LhpVideoSpan */
  GArray *frozen; /* of LhpVideoSpan */
  bool in_black, in_frozen;
  GArray *window; /* of TimedMean: the last second's means */
};

LhpVideoStats *lhp_video_stats_new(const LhpVideoJob *job)
{
  LhpVideoStats *v = g_new0(LhpVideoStats, 1);
  v->job = *job;
  v->backend = job->backend;
  v->cuts = g_array_new(FALSE, FALSE, sizeof(double));
  v->black = g_array_new(FALSE, FALSE, sizeof(LhpVideoSpan));
  v->frozen = g_array_new(FALSE, FALSE, sizeof(LhpVideoSpan));
  v->window = g_array_new(FALSE, FALSE, sizeof(TimedMean));
  return v;
}

void lhp_video_stats_free(LhpVideoStats *v)
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

static void file_reset(LhpVideoStats *v)
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
  double black_level = black_code + LHP_VIDEO_BLACK_PIXEL * (white_code - black_code);
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

/* The std of the frame means over the last LHP_VIDEO_FLICKER_WINDOW_S of
 * stream time (the last 25 frames when there are no timestamps). */
static double flicker(LhpVideoStats *v, double pts, double mean)
{
  TimedMean entry = {pts, mean};
  g_array_append_val(v->window, entry);
  guint keep_from = 0;
  for (guint i = 0; i < v->window->len; i++) {
    double t = g_array_index(v->window, TimedMean, i).pts;
    /* The window is (pts - 1 s, pts]: a frame exactly a second older is out.
     * pts are whole nanoseconds in seconds, so half a nanosecond decides
     * what the subtraction's rounding would (1.16 - 1.0 < 0.16 kept the
     * frame at 0.16 s, a window of 26 frames at 25 frames/s). */
    bool old = isfinite(pts) && isfinite(t) ? t <= pts - LHP_VIDEO_FLICKER_WINDOW_S + 0.5e-9
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
static void track_span(GArray *spans, bool *open, bool flagged, const LhpFrameFields *f)
{
  double end = isfinite(f->duration) ? f->pts + f->duration : f->pts;
  if (flagged && !*open) {
    LhpVideoSpan span = {f->pts, end, f->frame, 1};
    g_array_append_val(spans, span);
    *open = true;
  } else if (flagged) {
    LhpVideoSpan *span = &g_array_index(spans, LhpVideoSpan, spans->len - 1);
    span->end = end;
    span->frames++;
  } else {
    *open = false;
  }
}

/* ------------------------------------------------------------------------ */
/* Analysis                                                                  */

/* The part of a video frame (whose luma is a plane of its own: GRAY8,
 * GRAY16, P010, as lhio gives them) that roi takes, so that its diff is of
 * the pixels its statistics are; the frame itself without a roi, and for
 * R'G'B' (no diff). */
static LhFrame frame_in_roi(const LhFrame *frame, const LhRect *roi)
{
  LhFrame part = *frame;
  bool luma_plane = frame->format == LH_FORMAT_GRAY8 || frame->format == LH_FORMAT_GRAY16 ||
                    frame->format == LH_FORMAT_P010;
  if (roi->width <= 0 || roi->height <= 0 || !luma_plane)
    return part;
  size_t sample = frame->format == LH_FORMAT_GRAY8 ? 1 : 2;
  part.planes[0] =
      (uint8_t *)frame->planes[0] + (size_t)roi->y * frame->strides[0] + (size_t)roi->x * sample;
  part.width = roi->width;
  part.height = roi->height;
  return part;
}

/* The frame's statistics, and its diff (the mean absolute difference of its
 * luma to the previous record's frame, FFmpeg's YDIF: NAN for the first, after
 * a change of size, or for R'G'B' frames, which have no luma plane), both by
 * the context that reads the frame where it is. */
static int analyze_on(LhpVideoStats *v, LhContext *context, const LhFrame *frame,
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
  LhFrame part = frame_in_roi(frame, &options->roi);
  status = lh_difference_push(context, v->difference, &part, diff);
  /* R'G'B': no diff, and the next frame's is NAN too (the state restarts). */
  return status == LH_ERROR_UNSUPPORTED ? LH_OK : status;
}

static int analyze(LhpVideoStats *v, LhioVideo *video, const LhioVideoFrame *f,
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
    v->host_context = lhp_context_open(v->job.backend, lhp_first_device(v->job.device_ids),
                                       v->job.verbose, v->job.report);
    if (!v->host_context)
      return lh_set_error(LH_ERROR_NO_DEVICE, "no analysis context");
  }
  return analyze_on(v, v->host_context, &f->frame, options, stats, diff);
}

/* Fills the frame's fields and adds it to the summary. */
static void measure(LhpVideoStats *v, LhioVideo *video, const LhioVideoFrame *f, const LhStats *s,
                    double diff, LhpFrameFields *fields)
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
      isfinite(fields->cut_distance) && fields->cut_distance > v->job.video->cut_threshold;
  double black_fraction;
  histogram_fractions(s, &black_fraction, &fields->out_of_legal);
  fields->black = black_fraction >= LHP_VIDEO_BLACK_FRACTION;
  double code_range = (double)(s->n_bins - 1);
  fields->frozen = isfinite(fields->diff) && fields->diff <= LHP_VIDEO_FROZEN_DIFF * code_range;
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
  const double values[LHP_VIDEO_STAT_COUNT] = {
      s->mean,         s->stddev,
      s->min,          s->max,
      s->median,       s->clipped_low,
      s->clipped_high, fields->out_of_legal,
      fields->diff,    fields->cut_distance,
      fields->flicker,
  };
  for (int i = 0; i < LHP_VIDEO_STAT_COUNT; i++)
    range_add(&v->stats[i], values[i]);
  for (int i = 0; i < s->n_percentiles; i++)
    range_add(&v->percentiles[i], s->percentile_value[i]);
  if (fields->scene_cut)
    g_array_append_val(v->cuts, fields->pts);
  track_span(v->black, &v->in_black, fields->black, fields);
  track_span(v->frozen, &v->in_frozen, fields->frozen, fields);
}

/* ------------------------------------------------------------------------ */
/* One file                                                                  */

/* Whether the frame is one the sampling options keep. */
static bool sampled(const LhpVideoOptions *args, const LhioVideoFrame *f, double *next_time)
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

/* The summary of the file so far to job->summary; false to stop. */
static bool give_summary(LhpVideoStats *v, const char *path, const char *decoder, const char *error)
{
  LhOptions options = *v->job.options;
  options.matrix = v->matrix;
  options.range = v->range;
  LhStats total;
  lh_stats_init(&total);
  bool have_total = lh_stats_from_histogram(v->histogram, v->depth, &options, &total) >= 0;
  if (!have_total)
    lhp_say(v->job.report, path, "summary: %s", lh_last_error());
  LhpVideoSummary summary = {
      .path = path,
      .decoder = decoder,
      .error = error,
      .frames = v->frames,
      .decode_warnings = v->warnings,
      .first_pts = v->first_pts,
      .end_pts = v->end_pts,
      .width = v->width,
      .height = v->height,
      .bit_depth = v->depth,
      .matrix = v->matrix,
      .range = v->range,
      .backend = v->backend,
      .total = have_total ? &total : NULL,
      .histogram = v->histogram,
      .stats = v->stats,
      .percentiles = v->percentiles,
      .cuts = (const double *)(void *)v->cuts->data,
      .n_cuts = v->cuts->len,
      .black = (const LhpVideoSpan *)(void *)v->black->data,
      .n_black = v->black->len,
      .frozen = (const LhpVideoSpan *)(void *)v->frozen->data,
      .n_frozen = v->frozen->len,
  };
  bool going = v->job.summary(&summary, v->job.data);
  lh_stats_clear(&total);
  return going;
}

/* A transport stream of several programs (a broadcast multiplex) is read
 * as tsdemux reads it, one program: said, where the others would be left
 * out without a word. */
static void say_programs(const LhpVideoJob *job, const char *path)
{
  char list[512], read[64];
  if (!lhio_ts_several_programs(path, list, sizeof list, read, sizeof read, "one of them"))
    return;
  lhp_say(job->report, path,
          "an MPEG-TS of %s: %s is read, the first whose map comes (GStreamer's tsdemux reads "
          "one program; --program N, program=N in Python, reads another)",
          list, read);
}

LhpVideoOutcome lhp_video_stats_file(LhpVideoStats *v, const char *path, int *failed_status,
                                     char **failure)
{
  const LhpVideoJob *job = &v->job;
  const LhpVideoOptions *args = job->video;
  *failure = NULL;
  file_reset(v);
  LhioVideoOptions video_options = {
      /* NVDEC's frames stay in CUDA memory unless the options say system:
       * analysis and the frame difference read them there. */
      .allow_cuda = args->cuda_memory && job->backend != LH_BACKEND_CPU,
      .start_s = args->start_s,
      .program = args->program,
      .timeout_s = args->timeout_s,
      /* A stop ends the wait for a frame too (a file opening or stuck). */
      .stop = job->stop,
      .fifo_wait = job->fifo_wait,
  };
  if (lhio_is_motion_jpeg(path) &&
      ((args->start_given && args->start_s > 0) || args->duration_s > 0 || args->fps > 0)) {
    /* jpegparse times its first frame alone: the others would all pass
     * through a start, duration or rate asked, as if it were not. */
    *failure = g_strdup("Motion JPEG with no container has no frame times, so a start, "
                        "duration or fps asked cannot pick its frames (--every N, every=N in "
                        "Python, takes one frame in N)");
    if (failed_status)
      *failed_status = LH_ERROR_UNSUPPORTED;
    return LHP_VIDEO_FAILED;
  }
  LhioVideo *video = NULL;
  lhio_video_prefer_cuda_device(lhp_first_device(job->device_ids)); /* its NVDEC's */
  int status = lhio_video_open(path, &video_options, &video);
  if (status < 0) {
    *failure = g_strdup(lhp_reason(status, path));
    if (failed_status)
      *failed_status = status;
    return LHP_VIDEO_FAILED;
  }
  /* Without a start asked, the time asked begins at the first frame, not
   * at 0: a stream's first pts may be anywhere (a transport stream's, one
   * with B-frames in an MP4 whose edit list GStreamer does not apply). */
  bool window_set = args->start_given || !(args->duration_s > 0);
  double end_time = args->duration_s > 0 ? args->start_s + args->duration_s : INFINITY;
  double next_time = NAN;
  double after_window = NAN; /* the pts of the first frame past --duration */
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
    if (status == LHIO_VIDEO_STOPPED) {
      stopped = true;
      break;
    }
    if (status == 0)
      break;
    if (status < 0) {
      error = g_strdup(lhp_reason(status, path));
      break;
    }
    if (!window_set && isfinite(f.pts)) {
      end_time = f.pts + args->duration_s;
      window_set = true;
    }
    if (isfinite(f.pts) && f.pts >= end_time - 1e-9) {
      after_window = f.pts;
      break;
    }
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
      error = g_strdup_printf("frame %" PRIu64 ": %s", f.index, lhp_reason(status, path));
      break;
    }
    if (job->verbose && v->frames == 0) {
      LhContext *used = f.frame.memory == LH_MEMORY_CUDA ? v->cuda_context : v->host_context;
      char device[32] = "";
      if (v->backend == LH_BACKEND_CUDA && lh_context_device(used) >= 0)
        snprintf(device, sizeof device, " (device %d)", lh_context_device(used));
      lhp_say(job->report, path, "decoded by %s, %s frames in %s memory, analysed on %s%s",
              lhio_video_decoder(video), f.format,
              f.frame.memory == LH_MEMORY_CUDA ? "CUDA" : "system", lh_backend_name(v->backend),
              device);
    }
    LhpFrameFields fields;
    measure(v, video, &f, &stats, diff, &fields);
    LhpVideoFrame frame = {
        .path = path,
        .width = f.frame.width,
        .height = f.frame.height,
        .backend = v->backend,
        .stats = &stats,
        .fields = &fields,
        .video = video,
        .decoded = &f,
    };
    if (!job->frame(&frame, job->data)) {
      stopped = true;
      break;
    }
  }
  lh_stats_clear(&stats);
  if (!stopped && !error && v->frames == 0) {
    /* Read to its end, or past the time asked, without a frame in that
     * time: the file is whole, the time asked holds none of it. */
    status = LH_ERROR_CORRUPT;
    /* Numbers in the C locale (a Python program may have set its user's):
     * "0.5 s", not "0,5 s", in an English line. */
    char start[G_ASCII_DTOSTR_BUF_SIZE], end[G_ASCII_DTOSTR_BUF_SIZE];
    char next[G_ASCII_DTOSTR_BUF_SIZE], length[G_ASCII_DTOSTR_BUF_SIZE];
    g_ascii_formatd(start, sizeof start, "%g", args->start_s);
    g_ascii_formatd(end, sizeof end, "%g", end_time);
    g_ascii_formatd(next, sizeof next, "%.3f", after_window);
    double duration = lhio_video_duration(video);
    g_ascii_formatd(length, sizeof length, "%.3f", duration);
    if (isfinite(after_window))
      error = g_strdup_printf("no frame in the time asked, [%s s, %s s): the next is at %s s",
                              start, end, next);
    else if (isfinite(duration))
      error = g_strdup_printf("no frame at or after %s s, the start asked: the video lasts %s s",
                              start, length);
    else
      error = g_strdup_printf("no frame at or after %s s, the start asked", start);
  }
  if (job->verbose && v->analysed_on[LH_BACKEND_CPU] && v->analysed_on[LH_BACKEND_CUDA])
    lhp_say(job->report, path,
            "%" PRIu64 " frames analysed on cuda, %" PRIu64 " on cpu (backend auto sends each "
            "frame in system memory where it costs less)",
            v->analysed_on[LH_BACKEND_CUDA], v->analysed_on[LH_BACKEND_CPU]);
  memset(v->analysed_on, 0, sizeof v->analysed_on);
  if (!stopped && v->frames > 0 && args->program == 0 && lhio_video_transport_stream(video))
    say_programs(job, path);
  if (!stopped && v->frames > 0 && !give_summary(v, path, lhio_video_decoder(video), error))
    stopped = true;
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
    if (failed_status)
      *failed_status = status;
    if (v->frames > 0)
      *failure = g_strdup_printf("%s (the %" PRIu64 " frames decoded are kept)", error, v->frames);
    else
      *failure = g_steal_pointer(&error);
    g_free(error);
    return LHP_VIDEO_FAILED;
  }
  return stopped ? LHP_VIDEO_STOPPED : LHP_VIDEO_DONE;
}
