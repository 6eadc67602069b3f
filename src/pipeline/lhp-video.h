/* lhp-video.h: the statistics of video files (prefix lhp_video_), shared by
 * `lumahist stats` and lumahist.stats_files: the options of video input and
 * their checks, the frame loop (decoding through lhio-video, sampling,
 * analysis where the frame is), the measures of each frame (difference,
 * scene cut, black, frozen, out of legal range, flicker, signalstats' YLOW
 * and YHIGH) and the summary of a file (video-stats.c), and the summary's
 * JSON record with the JSON pieces every record is written with (json.c).
 * Each front end writes or hands over the frames' records itself. */
#ifndef LHP_VIDEO_H
#define LHP_VIDEO_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <glib.h>

#include "io/lhio-video.h"
#include "lhp.h"
#include "lumahist.h"

/* Thresholds of the per-frame flags (README, "Video files"). */
#define LHP_VIDEO_CUT_THRESHOLD 0.4    /* the element's default cut-threshold */
#define LHP_VIDEO_BLACK_PIXEL 0.10     /* a pixel at or below 10 % of the range is black */
#define LHP_VIDEO_BLACK_FRACTION 0.98  /* a frame with 98 % black pixels is black */
#define LHP_VIDEO_FROZEN_DIFF 0.001    /* diff at most 0.1 % of the code range: frozen */
#define LHP_VIDEO_FLICKER_WINDOW_S 1.0 /* flicker: std of frame means over 1 s */
#define LHP_VIDEO_DEFAULT_TIMEOUT_S 30.0

/* ------------------------------------------------------------------------ */
/* Options                                                                   */

/* The options of video input: the tool's --every ... --video-memory, and
 * Python's every= ... video_memory=. */
typedef struct {
  int every;         /* one decoded frame in N */
  double fps;        /* at most F frames a second; 0 all */
  double start_s;    /* frames from this presentation time on */
  bool start_given;  /* start_s was asked for; else duration_s counts from the first frame */
  double duration_s; /* of stream time; 0 to the end */
  int program;       /* the MPEG-TS program read, 1 .. 65535; 0 the one tsdemux takes */
  double timeout_s;  /* a file is given up when no frame comes for this long */
  double cut_threshold;
  const char *memory; /* where NVDEC leaves frames: "cuda", "system"; NULL "cuda" */
  bool cuda_memory;   /* set by lhp_video_options_check: memory is "cuda" */
} LhpVideoOptions;

void lhp_video_options_init(LhpVideoOptions *options);

/* Checks the options and sets cuda_memory; for a bad one, false with the
 * option's name as Python spells it ("every", "cut_threshold") in *option
 * and what it must be ("must be at least 1") in *rule, which the tool says
 * of "--every", "--cut-threshold". */
bool lhp_video_options_check(LhpVideoOptions *options, const char **option, const char **rule);

/* ------------------------------------------------------------------------ */
/* Frames                                                                    */

/* What a video frame's record holds beside an image's. */
typedef struct {
  const char *decoder; /* the GStreamer decoder, instead of an image's LhioDecoder */
  uint64_t frame;      /* decoded frames before it */
  double pts;          /* seconds; NAN unknown */
  double duration;     /* seconds; NAN unknown */
  int keyframe;        /* 1, 0, -1 unknown */
  double diff;         /* mean |Y - Y of the previous record's frame|; NAN for the first */
  double cut_distance; /* lh_histogram_distance to the previous record's frame; NAN first */
  bool scene_cut;
  bool black;
  bool frozen;
  double out_of_legal;      /* fraction outside 16..235 (scaled), whatever the range */
  double flicker;           /* std of the frame means over the last second */
  uint32_t signalstats_low; /* FFmpeg signalstats' YLOW and YHIGH (README) */
  uint32_t signalstats_high;
  bool decode_warning; /* the decoder warned of damage before this frame */
} LhpFrameFields;

/* One analysed frame, as the frame loop hands it over. */
typedef struct {
  const char *path;
  int width, height;
  LhBackend backend; /* where it was analysed */
  /* Its statistics with their histogram: the callee may take them (a copy
   * of the struct, then lh_stats_init on this one). */
  LhStats *stats;
  const LhpFrameFields *fields;
  /* The decoder, for lhio_video_host_luma() (the report's thumbnails), and
   * the decoded frame. */
  LhioVideo *video;
  const LhioVideoFrame *decoded;
} LhpVideoFrame;

/* ------------------------------------------------------------------------ */
/* A file's summary                                                          */

/* min, max and mean of one per-frame statistic over a file. */
typedef struct {
  double min, max, sum;
  uint64_t n; /* frames where it was finite */
} LhpVideoRange;

/* A run of consecutive flagged frames (black or frozen). */
typedef struct {
  double start, end; /* seconds: the first frame's pts, the last one's end */
  uint64_t first_frame;
  uint64_t frames;
} LhpVideoSpan;

/* The per-frame statistics the summary ranges over, in its record's order
 * (lhp_video_stat_names), before the percentiles. */
enum {
  LHP_VIDEO_STAT_MEAN,
  LHP_VIDEO_STAT_STDDEV,
  LHP_VIDEO_STAT_MIN,
  LHP_VIDEO_STAT_MAX,
  LHP_VIDEO_STAT_MEDIAN,
  LHP_VIDEO_STAT_CLIPPED_LOW,
  LHP_VIDEO_STAT_CLIPPED_HIGH,
  LHP_VIDEO_STAT_OUT_OF_LEGAL,
  LHP_VIDEO_STAT_DIFF,
  LHP_VIDEO_STAT_CUT_DISTANCE,
  LHP_VIDEO_STAT_FLICKER,
  LHP_VIDEO_STAT_COUNT
};
extern const char *const lhp_video_stat_names[LHP_VIDEO_STAT_COUNT];

/* What a video's summary record says. */
typedef struct {
  const char *path;
  const char *decoder;
  const char *error; /* why the file ended early; NULL: read to its end */
  uint64_t frames;   /* analysed */
  uint64_t decode_warnings;
  double first_pts, end_pts; /* the first frame's pts, the last one's end */
  int width, height, bit_depth;
  LhMatrix matrix;
  LhRange range;
  LhBackend backend; /* where the last frame was analysed */
  /* The statistics of the summed histogram (of the first frame's depth), with
   * the job's percentiles; NULL when they could not be had (said).  The
   * callee may take them, as a frame's. */
  LhStats *total;
  const uint64_t *histogram;
  const LhpVideoRange *stats;       /* LHP_VIDEO_STAT_COUNT */
  const LhpVideoRange *percentiles; /* total->n_percentiles */
  const double *cuts;               /* pts of each scene cut */
  guint n_cuts;
  const LhpVideoSpan *black;
  guint n_black;
  const LhpVideoSpan *frozen;
  guint n_frozen;
} LhpVideoSummary;

/* Writes the summary's JSON Lines record (README, "Video files"): a
 * "summary": true record with the statistics of the summed histogram, the
 * min/max/mean of each per-frame statistic, the cut times, the black and
 * frozen spans and whether the file was read to its end; the histogram last
 * when with_histogram.  summary->total must be there. */
void lhp_video_summary_write(FILE *out, const LhpVideoSummary *summary, bool with_histogram);

/* ------------------------------------------------------------------------ */
/* The frame loop                                                            */

/* Everything the statistics of a video need besides the file. */
typedef struct {
  const LhpVideoOptions *video; /* checked */
  const LhOptions *options;     /* its matrix and range only when given: */
  bool matrix_given;
  bool range_given;
  LhBackend backend; /* asked for */
  /* Of int: the first is the CUDA device NVDEC decodes on and the frames
   * are analysed on (--devices, devices=; videos go one at a time); NULL
   * or empty: the current device, and GStreamer's first NVDEC. */
  const GArray *device_ids;
  bool verbose; /* say how the frames were decoded and where analysed */
  const LhpReport *report;
  /* Each analysed frame, in order; false stops the file (not a failure). */
  bool (*frame)(const LhpVideoFrame *frame, void *data);
  /* Once a file with at least one analysed frame ends (read to its end or
   * not); false stops as frame's does. */
  bool (*summary)(const LhpVideoSummary *summary, void *data);
  void *data;
  /* May be NULL; non-zero stops between frames, and ends a wait for one (a
   * file opening or stuck) within a tenth of a second: the signal that
   * asked, or a run's own flag (lumahist.stats_files closed). */
  volatile sig_atomic_t *stop;
  /* How long a named FIFO waits for its writer (NULL: lhio_set_fifo_wait's). */
  const LhioFifoWait *fifo_wait;
} LhpVideoJob;

typedef enum {
  LHP_VIDEO_DONE,    /* read to its end */
  LHP_VIDEO_FAILED,  /* opened or read with a failure: *failure says why */
  LHP_VIDEO_STOPPED, /* a callback or job->stop stopped it */
} LhpVideoOutcome;

typedef struct LhpVideoStats LhpVideoStats;

LhpVideoStats *lhp_video_stats_new(const LhpVideoJob *job);
/* Decodes one video and gives each sampled frame's record to job->frame,
 * then the summary to job->summary.  A failed file gives the frames before
 * the damage and a summary with the error (when any frame came), then
 * LHP_VIDEO_FAILED with the negative status in *status and the reason, to
 * be freed, in *failure, to be said as "PATH: reason" ("... (the N frames
 * decoded are kept)"); status may be NULL. */
LhpVideoOutcome lhp_video_stats_file(LhpVideoStats *stats, const char *path, int *status,
                                     char **failure);
void lhp_video_stats_free(LhpVideoStats *stats);

/* ------------------------------------------------------------------------ */
/* Videos in their place among a run's images (video-places.c)              */

/* A run's paths split into the images the batch pipeline takes and the
 * videos, which each front end runs between the pipeline's images (as its
 * records come out) so that every record stays in input order. */
typedef struct {
  const GPtrArray *paths;
  GArray *image_at; /* of guint: each image's place in paths */
  GArray *video_at; /* of guint: each video's place in paths, in order */
  guint next;       /* the next video to run */
} LhpVideoPlaces;

/* Splits paths (which must outlive places): each that lhio_path_is_video
 * takes for a video when find_videos is true, every other one appended to
 * images (not a copy). */
void lhp_video_places_split(LhpVideoPlaces *places, const GPtrArray *paths, bool find_videos,
                            GPtrArray *images);
/* Whether a video comes before the pipeline's image number image (its
 * index among the images; G_MAXUINT: the end) and is not yet taken. */
bool lhp_video_places_due(const LhpVideoPlaces *places, guint image);
/* That video, taken; NULL when none. */
const char *lhp_video_places_next(LhpVideoPlaces *places, guint image);
/* How many videos the paths hold (0 before the split). */
guint lhp_video_places_videos(const LhpVideoPlaces *places);
void lhp_video_places_clear(LhpVideoPlaces *places);

/* ------------------------------------------------------------------------ */
/* JSON pieces, as every record writes them (json.c)                         */

/* A string, UTF-8: a byte that is not part of valid UTF-8 as the escape of
 * a lone low surrogate, \udc80 to \udcff (Python's surrogateescape). */
void lhp_json_string(FILE *out, const char *text);
/* "%.17g", which reads back to the same double; null when not finite. */
void lhp_json_number(FILE *out, double value);
/* counts in decimal, separator between them (a histogram's bins). */
void lhp_write_counts(FILE *out, const uint64_t *counts, size_t n, char separator);
/* The key of percentile p: the shortest "%.Ng" that reads back as p ("1",
 * "99.9"), without an exponent unless p needs one (below 1e-4). */
void lhp_percentile_key(char *key, size_t size, double p);

#endif /* LHP_VIDEO_H */
