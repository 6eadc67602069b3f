/* lht-video-report.h: the video part of `--report FILE.html` (prefix
 * lht_video_report_): per video, its luma over time, clipping, frame
 * differences with cuts, black and frozen spans and a thumbnail strip, and a
 * summary table of the videos.  video-stats.c feeds it frame by frame as it
 * analyses them, merge.c from the frames' records; report.c owns it and
 * places its HTML in the page. */
#ifndef LHT_VIDEO_REPORT_H
#define LHT_VIDEO_REPORT_H

#include <stdbool.h>
#include <stdint.h>

#include <glib.h>

#include "lht.h"
#include "lumahist.h"

/* At most this many points per drawn series: longer videos are decimated. */
#define LHT_VIDEO_REPORT_MAX_POINTS 2000
/* Thumbnails per video, evenly spaced over its analysed frames. */
#define LHT_VIDEO_REPORT_THUMBNAILS 8

/* What a video's summary record says that the report shows. */
typedef struct {
  uint64_t frames;
  double duration;
  int width, height, bit_depth;
  const char *decoder;
  double mean_min, mean_mean, mean_max; /* of the frame means, code values */
  double flicker_max;
  guint n_cuts; /* scene cuts (the report draws them from the frames' flags) */
  const LhpVideoSpan *black;
  guint n_black;
  const LhpVideoSpan *frozen;
  guint n_frozen;
  const char *error; /* why the file ended early, or NULL */
} LhtVideoSummary;

/* One frame as its record gives it: what the sections draw, without pixels. */
typedef struct {
  uint64_t frame;
  double pts; /* seconds; NAN unknown */
  int bit_depth;
  LhMatrix matrix;
  LhRange range;
  const uint64_t *histogram; /* 2^bit_depth counts; NULL: no percentiles drawn */
  double clipped_low, clipped_high, out_of_legal; /* fractions */
  double diff;                                    /* code values; NAN for the first */
  bool scene_cut;
} LhtVideoFrameRecord;

/* A frame's luma plane in host memory, for thumbnails; plane NULL when there
 * is none (R'G'B' frames). */
typedef struct {
  const uint8_t *plane;
  size_t stride;
  int sample_bytes; /* 1, or 2 (bit_depth bits in the low bits) */
  int width, height;
} LhtLumaPlane;

typedef struct LhtVideoReport LhtVideoReport;

LhtVideoReport *lht_video_report_new(void);
void lht_video_report_free(LhtVideoReport *report);
/* Starts a video's section; a section begun and not ended is dropped. */
void lht_video_report_begin(LhtVideoReport *report, const char *path);
/* One analysed frame: its record's fields and statistics (with histogram). */
void lht_video_report_frame(LhtVideoReport *report, const LhpFrameFields *fields,
                            const LhStats *stats, const LhtLumaPlane *luma);
/* One frame read back from its record (`lumahist merge`): drawn as the frame
 * itself would be, but records hold no pixels, so the section has no
 * thumbnails and says why. */
void lht_video_report_frame_record(LhtVideoReport *report, const LhtVideoFrameRecord *frame);
/* Ends the section begun last with the file's summary. */
void lht_video_report_end(LhtVideoReport *report, const LhtVideoSummary *summary);
/* Drops the section begun last, not ended (its summary is missing or refused). */
void lht_video_report_drop(LhtVideoReport *report);
/* How many videos have a section. */
guint lht_video_report_count(const LhtVideoReport *report);
/* The summary table and one section per video, as HTML. */
void lht_video_report_append_html(const LhtVideoReport *report, GString *out);

#endif /* LHT_VIDEO_REPORT_H */
