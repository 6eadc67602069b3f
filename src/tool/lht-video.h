/* lht-video.h: video files in the tool (prefix lht_video_): the options of
 * video input, `lumahist stats` on one video (video-stats.c): a record per
 * frame and a summary record per file, and the videos that equalize, clahe and
 * overlay write back (video-rewrite.c). */
#ifndef LHT_VIDEO_H
#define LHT_VIDEO_H

#include <signal.h>
#include <stdbool.h>

#include <glib.h>

#include "io/lhio-video.h"
#include "lht-batch.h"
#include "lht.h"
#include "pipeline/lhp-video.h"

/* The options of video input, as parsed: the shared ones (lhp-video.h),
 * whose memory is memory_name, the string GOption allocates. */
struct LhtVideoArgs {
  LhpVideoOptions options;
  char *memory_name; /* --video-memory system|cuda, as given */
};

void lht_video_args_init(LhtVideoArgs *args);
/* Adds --every, --fps, --start, --duration, --video-timeout, --cut-threshold,
 * --video-memory. */
void lht_video_add_options(GOptionContext *context, LhtVideoArgs *args);
/* Checks them; a usage error reported (with `command --help`) gives false. */
bool lht_video_args_check(LhtVideoArgs *args, const char *command);
/* Frees what parsing the options allocated. */
void lht_video_args_clear(LhtVideoArgs *args);

/* Everything `stats` on a video needs besides the file. */
typedef struct {
  const LhtVideoArgs *args;
  const LhOptions *options; /* its matrix and range only when given: */
  bool matrix_given;
  bool range_given;
  LhtFormat format;
  bool with_histogram;
  LhBackend backend;        /* asked for */
  const GArray *device_ids; /* --devices: videos on the first; NULL when not given */
  bool verbose;
  /* Where records go: written to stream, then commit() (false: stop). */
  LhtWriter *writer;
  FILE *stream;
  bool (*commit)(void *data);
  void *commit_data;
  LhtDataset *dataset; /* may be NULL: the video's summed histogram goes there */
  LhtReport *report;   /* may be NULL */
  LhtProgress *progress;
  /* Non-zero stops between frames (the signal that asked). */
  volatile sig_atomic_t *stop;
} LhtVideoJob;

/* The frame loop of src/pipeline/ (lhp-video.h) with the tool's writing. */
typedef struct LhtVideoStats LhtVideoStats;

LhtVideoStats *lht_video_stats_new(const LhtVideoJob *job);
/* Writes the records of one video; false after reporting why it failed (the
 * frames before the damage keep their records, the summary says so). */
bool lht_video_stats_file(LhtVideoStats *stats, const char *path);
/* The frames whose records it has written so far (NULL: 0). */
uint64_t lht_video_stats_frames(const LhtVideoStats *stats);
void lht_video_stats_free(LhtVideoStats *stats);

/* ------------------------------------------------------------------------ */
/* Videos written back by equalize, clahe and overlay (video-rewrite.c)      */

/* Temporal smoothing of equalized video, on by default: the LUTs of the
 * last 8 frames averaged (a third of a second at 25 frames/s), restarted at
 * a scene cut (the element's cut-threshold). */
#define LHT_VIDEO_TEMPORAL_WINDOW 8

typedef struct {
  char *codec;          /* --codec: the encoder element; NULL the input's codec's */
  gint crf;             /* --crf: 0 .. 51; -1 the default */
  gint bitrate_kbps;    /* --bitrate: 0 none (constant quality) */
  gint temporal_window; /* --temporal-window: 1 off */
  double cut_threshold; /* --cut-threshold */
  double timeout_s;     /* --video-timeout */
  gint program;         /* --program: the MPEG-TS program written; 0 tsdemux's choice */
} LhtVideoOutArgs;

void lht_video_out_args_init(LhtVideoOutArgs *args);
/* Adds --codec, --crf, --bitrate, --video-timeout, --program and, for equalization (temporal),
 * --temporal-window and --cut-threshold. */
void lht_video_out_add_options(GOptionContext *context, LhtVideoOutArgs *args, bool temporal);
/* A usage error reported (with `command --help`) gives false. */
bool lht_video_out_args_check(LhtVideoOutArgs *args, const char *command);
void lht_video_out_args_clear(LhtVideoOutArgs *args);

/* What a command does to the frames of its videos. */
typedef struct {
  /* Before each video (e.g. forgets the previous one's temporal window); may
   * be NULL.  0 or a negative status. */
  int (*begin)(LhContext *context, void *data);
  /* One frame, host memory, in into out (LhioVideoChange); 0 or a negative
   * status with the library's message set. */
  int (*change)(LhContext *context, const LhFrame *in, LhFrame *out, LhMatrix matrix, LhRange range,
                int orientation, void *data);
  bool fills_output; /* change writes all of out when it is not in */
  /* After a video is written: a line to say of it (g_malloc'd), or NULL;
   * may be NULL. */
  char *(*written_note)(void *data);
  void *data;
} LhtVideoChange;

/* Rewrites the inputs of plan marked in is_video (and not in leave_out)
 * one after the other, each into its output, honouring --shard and
 * --skip-existing.  A failing video is reported on one line and the rest go
 * on; SIGINT and SIGTERM stop between frames and leave no output for the
 * video under way.  A full disk (write_stop's error, set by the images
 * before or by a video here) leaves the videos after it unwritten, counted
 * in write_stop as are those written.  Returns the exit status (0, 1,
 * 128 + the signal). */
int lht_video_rewrite_plan(const LhtPlan *plan, const bool *is_video, const bool *leave_out,
                           const LhtBatchArgs *batch, const char *out_dir,
                           const LhtVideoOutArgs *args, LhBackend backend, bool verbose,
                           const LhtVideoChange *change, LhtWriteStop *write_stop);

#endif /* LHT_VIDEO_H */
