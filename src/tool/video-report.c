/* video-report.c: the video sections of `--report FILE.html`.  Each video
 * analysed by `stats` gets a section: a strip of thumbnails, its luma over
 * time (P1-P99 and P10-P90 bands, the median) with black and frozen spans
 * shaded, its clipped and out-of-legal fractions, and its frame differences
 * with a marker at each scene cut; a table sums the videos up with the values
 * of their summary records.  Everything is inline SVG and PNG data URIs, so
 * the page stays self-contained.  `merge` feeds the same sections from the
 * frames' and summaries' records, which carry every number drawn (the
 * percentiles come from each frame's histogram, as for a frame analysed
 * here) but no pixels: those sections have no thumbnails and say so.
 *
 * Series longer than LHT_VIDEO_REPORT_MAX_POINTS are decimated into runs of
 * neighbouring frames, each drawn as its extremes (the lowest P1 and P10, the
 * highest P90, P99, clipping and difference; the mean median) so that a
 * one-frame spike stays visible.  Cuts and spans are drawn at their exact
 * times. */
#include <math.h>
#include <string.h>

#include <zlib.h>

#include "lht-batch.h"
#include "lht-video-report.h"

#define THUMB_MAX_WIDTH 128
#define THUMB_MAX_HEIGHT 96
#define THUMB_BOX_SAMPLES 4
#define CHART_WIDTH 1024.0

/* The luma percentiles drawn, normalized to [0, 1] as the image report's. */
static const double drawn_percentiles[] = {1, 10, 50, 90, 99};
enum { Q1, Q10, Q50, Q90, Q99, N_DRAWN };

typedef struct {
  double pts;
  uint64_t frame;
  float q[N_DRAWN];
  float clipped_low, clipped_high, out_of_legal; /* fractions */
  float diff;                                    /* code values; NAN for the first */
  bool scene_cut;
} Sample;

typedef struct {
  double pts;
  uint64_t frame; /* of those analysed, from 0 */
  int width, height;
  guint8 *pixels; /* 8-bit gray, tightly packed */
} Thumb;

typedef struct {
  char *path;        /* as records write it */
  GArray *samples;   /* of Sample */
  GPtrArray *thumbs; /* of Thumb, every thumb_step-th frame */
  uint64_t thumb_step;
  uint64_t seen; /* frames given */
  bool all_timed;
  bool from_records; /* fed from records, which hold no pixels: no thumbnails */
  int bit_depth;
  /* From the summary. */
  LhtVideoSummary summary; /* its pointers point at the copies below */
  char *decoder;
  char *error;
  GArray *black;  /* of LhpVideoSpan */
  GArray *frozen; /* of LhpVideoSpan */
} Section;

struct LhtVideoReport {
  GPtrArray *sections; /* of Section, ended */
  Section *open;
  LhOptions options;
  LhStats scratch;
};

static void thumb_free(gpointer data)
{
  Thumb *t = data;
  g_free(t->pixels);
  g_free(t);
}

static void section_free(gpointer data)
{
  Section *s = data;
  if (!s)
    return;
  g_free(s->path);
  g_array_free(s->samples, TRUE);
  g_ptr_array_free(s->thumbs, TRUE);
  g_free(s->decoder);
  g_free(s->error);
  if (s->black)
    g_array_free(s->black, TRUE);
  if (s->frozen)
    g_array_free(s->frozen, TRUE);
  g_free(s);
}

LhtVideoReport *lht_video_report_new(void)
{
  LhtVideoReport *r = g_new0(LhtVideoReport, 1);
  r->sections = g_ptr_array_new_with_free_func(section_free);
  lh_options_init(&r->options);
  r->options.n_percentiles = N_DRAWN;
  memcpy(r->options.percentiles, drawn_percentiles, sizeof drawn_percentiles);
  lh_stats_init(&r->scratch);
  return r;
}

void lht_video_report_free(LhtVideoReport *r)
{
  if (!r)
    return;
  section_free(r->open);
  g_ptr_array_free(r->sections, TRUE);
  lh_stats_clear(&r->scratch);
  g_free(r);
}

void lht_video_report_begin(LhtVideoReport *r, const char *path)
{
  section_free(r->open);
  Section *s = g_new0(Section, 1);
  s->path = lht_path_shown(path);
  s->samples = g_array_new(FALSE, FALSE, sizeof(Sample));
  s->thumbs = g_ptr_array_new_with_free_func(thumb_free);
  s->thumb_step = 1;
  s->all_timed = true;
  r->open = s;
}

guint lht_video_report_count(const LhtVideoReport *r)
{
  return r->sections->len;
}

/* ------------------------------------------------------------------------ */
/* Thumbnails                                                                */

/* The plane averaged over boxes down to at most THUMB_MAX_WIDTH x
 * THUMB_MAX_HEIGHT, as 8-bit codes (deeper samples shifted down, rounded):
 * the coded Y, not stretched to the range, so that out-of-legal shows.  A
 * box reads at most THUMB_BOX_SAMPLES x THUMB_BOX_SAMPLES evenly spread
 * pixels: plenty for a picture, and a 4K frame costs 150 k reads, not 8 M. */
static Thumb *thumb_new(const LhtLumaPlane *luma, int bit_depth, double pts)
{
  int w = luma->width, h = luma->height;
  int tw = MIN(w, THUMB_MAX_WIDTH);
  int th = MAX(1, (int)lround((double)h * tw / w));
  if (th > THUMB_MAX_HEIGHT) {
    th = THUMB_MAX_HEIGHT;
    tw = MAX(1, (int)lround((double)w * th / h));
  }
  Thumb *t = g_new0(Thumb, 1);
  t->pts = pts;
  t->width = tw;
  t->height = th;
  t->pixels = g_new(guint8, (size_t)tw * (size_t)th);
  double scale = luma->sample_bytes == 2 ? ldexp(1.0, 8 - bit_depth) : 1.0;
  for (int ty = 0; ty < th; ty++) {
    int y0 = (int)((int64_t)ty * h / th), y1 = (int)((int64_t)(ty + 1) * h / th);
    for (int tx = 0; tx < tw; tx++) {
      int x0 = (int)((int64_t)tx * w / tw), x1 = (int)((int64_t)(tx + 1) * w / tw);
      int ny = MIN(y1 - y0, THUMB_BOX_SAMPLES), nx = MIN(x1 - x0, THUMB_BOX_SAMPLES);
      uint64_t sum = 0;
      for (int j = 0; j < ny; j++) {
        int y = y0 + (int)(((int64_t)(2 * j + 1) * (y1 - y0)) / (2 * ny));
        const uint8_t *row = luma->plane + (size_t)y * luma->stride;
        for (int i = 0; i < nx; i++) {
          int x = x0 + (int)(((int64_t)(2 * i + 1) * (x1 - x0)) / (2 * nx));
          sum += luma->sample_bytes == 1 ? row[x] : ((const uint16_t *)(const void *)row)[x];
        }
      }
      double v = (double)sum / ((double)ny * nx) * scale;
      t->pixels[(size_t)ty * tw + tx] = (guint8)CLAMP(lround(v), 0, 255);
    }
  }
  return t;
}

/* Candidates held for a video's thumbnails while it is read: between HELD
 * and 2 x HELD evenly spaced frames, enough for the THUMBNAILS chosen at its
 * end to lie within 1/(2 HELD) of its length from where they are meant to. */
#define THUMB_CANDIDATES (4 * LHT_VIDEO_REPORT_THUMBNAILS)

/* Keeps every thumb_step-th frame; at 2 x THUMB_CANDIDATES kept, drops every
 * other and doubles the step, so that whatever the length (unknown until the
 * end) between THUMB_CANDIDATES and twice as many evenly spaced frames are
 * held. */
static void keep_thumbnail(Section *s, const LhtLumaPlane *luma, int bit_depth, double pts)
{
  uint64_t index = s->seen++;
  if (index % s->thumb_step != 0 || !luma || !luma->plane)
    return;
  Thumb *thumb = thumb_new(luma, bit_depth, pts);
  thumb->frame = index;
  g_ptr_array_add(s->thumbs, thumb);
  if (s->thumbs->len >= 2 * THUMB_CANDIDATES) {
    /* The even-numbered ones to the front, in order; the odd ones to the
     * back, where shrinking the array frees them. */
    for (guint i = 1, kept = 1; i < s->thumbs->len; i++) {
      if (i % 2 == 0) {
        Thumb *t = g_ptr_array_index(s->thumbs, i);
        s->thumbs->pdata[i] = s->thumbs->pdata[kept];
        s->thumbs->pdata[kept++] = t;
      }
    }
    g_ptr_array_set_size(s->thumbs, (s->thumbs->len + 1) / 2);
    s->thumb_step *= 2;
  }
}

static void put_be32(GByteArray *out, uint32_t v)
{
  const guint8 b[4] = {(guint8)(v >> 24), (guint8)(v >> 16), (guint8)(v >> 8), (guint8)v};
  g_byte_array_append(out, b, 4);
}

static void png_chunk(GByteArray *png, const char *type, const guint8 *data, uint32_t n)
{
  put_be32(png, n);
  g_byte_array_append(png, (const guint8 *)type, 4);
  if (n)
    g_byte_array_append(png, data, n);
  uLong crc = crc32(0, (const Bytef *)type, 4);
  if (n)
    crc = crc32(crc, data, n);
  put_be32(png, (uint32_t)crc);
}

/* A gray 8-bit PNG of the thumb, base64; NULL if zlib failed. */
static char *thumb_png_base64(const Thumb *t)
{
  /* Each row filtered with PNG's Sub filter (the difference to the pixel on
   * the left), which deflate packs better than raw pixels. */
  size_t row = (size_t)t->width + 1, raw_size = row * (size_t)t->height;
  guint8 *raw = g_malloc(raw_size);
  for (int y = 0; y < t->height; y++) {
    const guint8 *in = t->pixels + (size_t)y * t->width;
    guint8 *out = raw + (size_t)y * row;
    out[0] = 1;
    for (int x = 0; x < t->width; x++)
      out[1 + x] = (guint8)(in[x] - (x ? in[x - 1] : 0));
  }
  uLongf packed_size = compressBound((uLong)raw_size);
  guint8 *packed = g_malloc(packed_size);
  int status = compress2(packed, &packed_size, raw, (uLong)raw_size, 9);
  g_free(raw);
  if (status != Z_OK) {
    g_free(packed);
    return NULL;
  }
  GByteArray *png = g_byte_array_new();
  static const guint8 signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  g_byte_array_append(png, signature, 8);
  GByteArray *header = g_byte_array_new();
  put_be32(header, (uint32_t)t->width);
  put_be32(header, (uint32_t)t->height);
  const guint8 rest[5] = {8, 0, 0, 0, 0}; /* 8 bits, gray, deflate, no filter set, no interlace */
  g_byte_array_append(header, rest, 5);
  png_chunk(png, "IHDR", header->data, header->len);
  g_byte_array_free(header, TRUE);
  png_chunk(png, "IDAT", packed, (uint32_t)packed_size);
  png_chunk(png, "IEND", NULL, 0);
  g_free(packed);
  char *text = g_base64_encode(png->data, png->len);
  g_byte_array_free(png, TRUE);
  return text;
}

/* ------------------------------------------------------------------------ */
/* Gathering                                                                 */

/* The sample drawn for a frame, from what its record holds. */
static void add_sample(LhtVideoReport *r, Section *s, const LhtVideoFrameRecord *f)
{
  Sample sample = {
      .pts = f->pts,
      .frame = f->frame,
      .clipped_low = (float)f->clipped_low,
      .clipped_high = (float)f->clipped_high,
      .out_of_legal = (float)f->out_of_legal,
      .diff = (float)f->diff,
      .scene_cut = f->scene_cut,
  };
  r->options.matrix = f->matrix;
  r->options.range = f->range;
  if (f->histogram &&
      lh_stats_from_histogram(f->histogram, f->bit_depth, &r->options, &r->scratch) == 0)
    for (int i = 0; i < N_DRAWN; i++)
      sample.q[i] = (float)r->scratch.percentile_norm[i];
  else
    for (int i = 0; i < N_DRAWN; i++)
      sample.q[i] = NAN;
  if (!isfinite(f->pts))
    s->all_timed = false;
  if (s->samples->len == 0)
    s->bit_depth = f->bit_depth;
  g_array_append_val(s->samples, sample);
}

void lht_video_report_frame(LhtVideoReport *r, const LhpFrameFields *fields, const LhStats *stats,
                            const LhtLumaPlane *luma)
{
  Section *s = r->open;
  if (!s)
    return;
  LhtVideoFrameRecord f = {
      .frame = fields->frame,
      .pts = fields->pts,
      .bit_depth = stats->bit_depth,
      .matrix = stats->matrix,
      .range = stats->range,
      .histogram = stats->histogram,
      .clipped_low = stats->clipped_low,
      .clipped_high = stats->clipped_high,
      .out_of_legal = fields->out_of_legal,
      .diff = fields->diff,
      .scene_cut = fields->scene_cut,
  };
  add_sample(r, s, &f);
  keep_thumbnail(s, stats->bit_depth == s->bit_depth ? luma : NULL, stats->bit_depth, fields->pts);
}

void lht_video_report_frame_record(LhtVideoReport *r, const LhtVideoFrameRecord *frame)
{
  Section *s = r->open;
  if (!s)
    return;
  s->from_records = true;
  add_sample(r, s, frame);
}

void lht_video_report_drop(LhtVideoReport *r)
{
  section_free(r->open);
  r->open = NULL;
}

static GArray *copy_array(const void *data, guint n, guint size)
{
  GArray *a = g_array_sized_new(FALSE, FALSE, size, n);
  if (n)
    g_array_append_vals(a, data, n);
  return a;
}

/* Keeps THUMBNAILS of the candidates: those nearest to frames evenly spaced
 * from the first analysed to the last (a rounded index into the held ones
 * gave gaps of one and two steps, and none near the end). */
static void choose_thumbnails(Section *s)
{
  const guint held = s->thumbs->len, shown = LHT_VIDEO_REPORT_THUMBNAILS;
  if (held <= shown)
    return;
  const double last = (double)(s->seen - 1);
  for (guint i = 0; i < shown; i++) {
    const double frame = last * i / (shown - 1);
    guint k = (guint)MIN(floor(frame / (double)s->thumb_step + 0.5), (double)(held - 1));
    /* k >= i, and it grows with i: position k is never taken again. */
    gpointer t = s->thumbs->pdata[i];
    s->thumbs->pdata[i] = s->thumbs->pdata[k];
    s->thumbs->pdata[k] = t;
  }
  g_ptr_array_set_size(s->thumbs, shown);
}

void lht_video_report_end(LhtVideoReport *r, const LhtVideoSummary *summary)
{
  Section *s = r->open;
  if (!s)
    return;
  r->open = NULL;
  choose_thumbnails(s);
  s->summary = *summary;
  s->decoder = g_strdup(summary->decoder ? summary->decoder : "");
  s->error = g_strdup(summary->error);
  s->black = copy_array(summary->black, summary->n_black, sizeof(LhpVideoSpan));
  s->frozen = copy_array(summary->frozen, summary->n_frozen, sizeof(LhpVideoSpan));
  s->summary.decoder = s->decoder;
  s->summary.error = s->error;
  s->summary.black = (const LhpVideoSpan *)(void *)s->black->data;
  s->summary.frozen = (const LhpVideoSpan *)(void *)s->frozen->data;
  g_ptr_array_add(r->sections, s);
}

/* ------------------------------------------------------------------------ */
/* Drawing                                                                   */

/* Text or an attribute's value.  A character HTML cannot hold (a C0 control
 * but tab and line feed, DEL, a C1 control) is U+FFFD, as a byte that is not
 * UTF-8 is: written as a character reference, &#x1; is a parse error and
 * &#x80; .. &#x9f; are read as Windows-1252 ("€" for U+0080), another name. */
static void append_escaped(GString *out, const char *text)
{
  char *shown = lht_path_shown(text);
  for (const char *c = shown; *c; c = g_utf8_next_char(c)) {
    gunichar u = g_utf8_get_char(c);
    if (u == '&')
      g_string_append(out, "&amp;");
    else if (u == '<')
      g_string_append(out, "&lt;");
    else if (u == '>')
      g_string_append(out, "&gt;");
    else if (u == '"')
      g_string_append(out, "&quot;");
    else if (u == '\'')
      g_string_append(out, "&apos;");
    else if ((u < 0x20 && u != '\t' && u != '\n') || (u >= 0x7f && u <= 0x9f))
      g_string_append(out, "\xef\xbf\xbd");
    else
      g_string_append_unichar(out, u);
  }
  g_free(shown);
}

static void append_value(GString *out, double value, int decimals)
{
  if (isfinite(value))
    g_string_append_printf(out, "%.*f", decimals, value);
  else
    g_string_append(out, "&ndash;");
}

static double spans_seconds(const GArray *spans)
{
  double total = 0;
  for (guint i = 0; i < spans->len; i++) {
    const LhpVideoSpan *span = &g_array_index(spans, LhpVideoSpan, i);
    total += span->end - span->start;
  }
  return total;
}

/* A section's series reduced to at most LHT_VIDEO_REPORT_MAX_POINTS. */
typedef struct {
  guint n;
  double *x;
  double *q[N_DRAWN];
  double *clipped_low, *clipped_high, *out_of_legal, *diff;
  double x_min, x_max;
} Series;

static double x_of(const Section *s, const Sample *sample)
{
  return s->all_timed ? sample->pts : (double)sample->frame;
}

static double low_of(double a, double b)
{
  return isfinite(a) && (!isfinite(b) || a < b) ? a : b;
}

static double high_of(double a, double b)
{
  return isfinite(a) && (!isfinite(b) || a > b) ? a : b;
}

static void series_make(const Section *s, Series *d)
{
  guint n = s->samples->len;
  guint m = MIN(n, LHT_VIDEO_REPORT_MAX_POINTS);
  d->n = m;
  double **all[] = {&d->x,      &d->q[Q1],       &d->q[Q10],       &d->q[Q50],       &d->q[Q90],
                    &d->q[Q99], &d->clipped_low, &d->clipped_high, &d->out_of_legal, &d->diff};
  for (size_t k = 0; k < G_N_ELEMENTS(all); k++)
    *all[k] = g_new(double, MAX(m, 1));
  for (guint c = 0; c < m; c++) {
    guint from = (guint)((guint64)c * n / m), to = (guint)((guint64)(c + 1) * n / m);
    const Sample *first = &g_array_index(s->samples, Sample, from);
    d->x[c] = x_of(s, first);
    double q[N_DRAWN], median_sum = 0, peaks[3] = {NAN, NAN, NAN};
    for (int i = 0; i < N_DRAWN; i++)
      q[i] = NAN;
    guint medians = 0;
    for (guint i = from; i < to; i++) {
      const Sample *e = &g_array_index(s->samples, Sample, i);
      q[Q1] = low_of(e->q[Q1], q[Q1]);
      q[Q10] = low_of(e->q[Q10], q[Q10]);
      q[Q90] = high_of(e->q[Q90], q[Q90]);
      q[Q99] = high_of(e->q[Q99], q[Q99]);
      if (isfinite(e->q[Q50])) {
        median_sum += e->q[Q50];
        medians++;
      }
      peaks[0] = high_of(e->clipped_low, peaks[0]);
      peaks[1] = high_of(e->clipped_high, peaks[1]);
      peaks[2] = high_of(e->out_of_legal, peaks[2]);
      d->diff[c] = i == from ? e->diff : high_of(e->diff, d->diff[c]);
    }
    q[Q50] = medians ? median_sum / medians : NAN;
    for (int i = 0; i < N_DRAWN; i++)
      d->q[i][c] = q[i];
    d->clipped_low[c] = peaks[0];
    d->clipped_high[c] = peaks[1];
    d->out_of_legal[c] = peaks[2];
  }
  /* The time axis: the first frame to the end of the last, or of a span. */
  d->x_min = m ? d->x[0] : 0;
  d->x_max = d->x_min;
  if (n) {
    const Sample *last = &g_array_index(s->samples, Sample, n - 1);
    d->x_max = x_of(s, last) + (s->all_timed ? 0 : 1);
  }
  if (s->all_timed) {
    const GArray *spans[2] = {s->black, s->frozen};
    for (int k = 0; k < 2; k++)
      for (guint i = 0; i < spans[k]->len; i++)
        d->x_max = MAX(d->x_max, g_array_index(spans[k], LhpVideoSpan, i).end);
  }
  if (!(d->x_max > d->x_min))
    d->x_max = d->x_min + 1;
}

static void series_clear(Series *d)
{
  double *all[] = {d->x,      d->q[Q1],       d->q[Q10],       d->q[Q50],       d->q[Q90],
                   d->q[Q99], d->clipped_low, d->clipped_high, d->out_of_legal, d->diff};
  for (size_t k = 0; k < G_N_ELEMENTS(all); k++)
    g_free(all[k]);
}

typedef struct {
  const Series *d;
  double height;
  double y_low, y_high; /* the values at the bottom and top */
} Plot;

static double plot_x(const Plot *p, double x)
{
  return CHART_WIDTH * (x - p->d->x_min) / (p->d->x_max - p->d->x_min);
}

static double plot_y(const Plot *p, double v)
{
  double y = p->height * (p->y_high - v) / (p->y_high - p->y_low);
  return CLAMP(y, -2, p->height + 2);
}

/* Seconds as "12.34 s", "m:ss.s" from a minute, "h:mm:ss" from an hour;
 * or a frame number. */
static void axis_label(char *label, size_t size, double x, bool timed)
{
  if (!timed) {
    g_snprintf(label, size, "frame %.0f", x);
  } else if (fabs(x) < 60) {
    g_snprintf(label, size, "%.2f s", x);
  } else if (fabs(x) < 3600) {
    int minutes = (int)(x / 60);
    g_snprintf(label, size, "%d:%04.1f", minutes, x - 60.0 * minutes);
  } else {
    long whole = lround(x);
    g_snprintf(label, size, "%ld:%02ld:%02ld", whole / 3600, whole / 60 % 60, whole % 60);
  }
}

/* The frame, the horizontal grid with its labels, and the time axis. */
static void plot_open(GString *out, const Plot *p, const char *class_name, const char *label,
                      const char *unit, bool timed)
{
  g_string_append_printf(
      out,
      "<svg class=\"chart %s\" viewBox=\"-48 -8 %.0f %.0f\" role=\"img\" "
      "aria-label=\"%s\">\n"
      "<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"#f1f3f7\"/>\n",
      class_name, CHART_WIDTH + 56, p->height + 30, label, CHART_WIDTH, p->height);
  double span = p->y_high - p->y_low;
  int decimals = span < 0.1 ? 3 : span < 10 ? 2 : 0;
  for (int i = 0; i <= 4; i++) {
    double v = p->y_low + (p->y_high - p->y_low) * i / 4;
    double y = plot_y(p, v);
    g_string_append_printf(out,
                           "<line x1=\"0\" x2=\"%.0f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#dde1e8\"/>"
                           "<text x=\"-6\" y=\"%.1f\" font-size=\"11\" fill=\"#5b6475\" "
                           "text-anchor=\"end\">%.*f%s</text>\n",
                           CHART_WIDTH, y, y, y + 4, decimals, v, unit);
  }
  for (int i = 0; i <= 8; i++) {
    double x = p->d->x_min + (p->d->x_max - p->d->x_min) * i / 8;
    char tick[48];
    axis_label(tick, sizeof tick, x, timed);
    g_string_append_printf(out,
                           "<text x=\"%.1f\" y=\"%.0f\" font-size=\"11\" fill=\"#5b6475\" "
                           "text-anchor=\"%s\">%s</text>\n",
                           plot_x(p, x), p->height + 15,
                           i == 0   ? "start"
                           : i == 8 ? "end"
                                    : "middle",
                           tick);
  }
}

/* A line through finite values; a gap where there are none. */
static void plot_line(GString *out, const Plot *p, const double *v, const char *colour,
                      const char *extra)
{
  g_string_append_printf(out, "<path fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" %sd=\"",
                         colour, extra);
  bool pen_down = false;
  for (guint i = 0; i < p->d->n; i++) {
    if (!isfinite(v[i])) {
      pen_down = false;
      continue;
    }
    g_string_append_printf(out, "%s%.1f %.1f", pen_down ? "L" : "M", plot_x(p, p->d->x[i]),
                           plot_y(p, v[i]));
    pen_down = true;
  }
  g_string_append(out, "\"/>\n");
}

static void plot_band(GString *out, const Plot *p, const double *low, const double *high,
                      const char *fill)
{
  g_string_append_printf(out, "<path fill=\"%s\" d=\"", fill);
  guint n = p->d->n;
  bool any = false;
  for (guint i = 0; i < n; i++)
    if (isfinite(low[i]) && isfinite(high[i])) {
      g_string_append_printf(out, "%s%.1f %.1f", any ? "L" : "M", plot_x(p, p->d->x[i]),
                             plot_y(p, high[i]));
      any = true;
    }
  for (guint i = n; i-- > 0;)
    if (isfinite(low[i]) && isfinite(high[i]))
      g_string_append_printf(out, "L%.1f %.1f", plot_x(p, p->d->x[i]), plot_y(p, low[i]));
  g_string_append(out, any ? "Z\"/>\n" : "\"/>\n");
}

/* Spans at their times, or at their frames when the video has no times. */
static void plot_spans(GString *out, const Plot *p, const GArray *spans, bool timed,
                       const char *class_name, const char *fill, const char *what)
{
  for (guint i = 0; i < spans->len; i++) {
    const LhpVideoSpan *span = &g_array_index(spans, LhpVideoSpan, i);
    double x0 = plot_x(p, timed ? span->start : (double)span->first_frame);
    double x1 = plot_x(p, timed ? span->end : (double)(span->first_frame + span->frames));
    g_string_append_printf(out,
                           "<rect class=\"%s\" x=\"%.1f\" y=\"0\" width=\"%.1f\" height=\"%.0f\" "
                           "fill=\"%s\"><title>%s %.3f&ndash;%.3f s (%" G_GUINT64_FORMAT
                           " frame%s)</title></rect>\n",
                           class_name, x0, MAX(x1 - x0, 1.0), p->height, fill, what, span->start,
                           span->end, span->frames, span->frames == 1 ? "" : "s");
  }
}

static double series_max(const double *v, guint n)
{
  double m = 0;
  for (guint i = 0; i < n; i++)
    if (isfinite(v[i]) && v[i] > m)
      m = v[i];
  return m;
}

static void legend(GString *out, const char *const *items)
{
  g_string_append(out, "<p class=\"legend\">");
  for (int i = 0; items[i]; i += 2)
    g_string_append_printf(out, "<span><i style=\"background:%s\"></i>%s</span>", items[i],
                           items[i + 1]);
  g_string_append(out, "</p>\n");
}

static void append_section(const Section *s, guint number, GString *out)
{
  const LhtVideoSummary *v = &s->summary;
  g_string_append_printf(out, "<section class=\"video\" id=\"video-%u\" data-path=\"", number);
  append_escaped(out, s->path);
  g_string_append(out, "\"><h2>");
  append_escaped(out, s->path);
  g_string_append_printf(out, "</h2>\n<p class=\"note\">%d&times;%d, %d-bit, decoded by ", v->width,
                         v->height, v->bit_depth);
  append_escaped(out, v->decoder[0] ? v->decoder : "?");
  g_string_append_printf(out, "; %" G_GUINT64_FORMAT " frames analysed", v->frames);
  if (isfinite(v->duration))
    g_string_append_printf(out, " over %.3f s", v->duration);
  g_string_append(out, ".</p>\n");
  if (v->error) {
    g_string_append(out, "<p class=\"incomplete\">Incomplete: ");
    append_escaped(out, v->error);
    g_string_append(out, "</p>\n");
  }

  /* Thumbnails: those chosen at the video's end (choose_thumbnails). */
  guint shown = s->thumbs->len;
  if (shown) {
    g_string_append(out, "<div class=\"thumbs\">");
    for (guint k = 0; k < shown; k++) {
      const Thumb *t = g_ptr_array_index(s->thumbs, k);
      char *png = thumb_png_base64(t);
      if (!png)
        continue;
      char when[48];
      if (isfinite(t->pts))
        g_snprintf(when, sizeof when, "%.2f s", t->pts);
      else
        g_snprintf(when, sizeof when, "frame %" G_GUINT64_FORMAT, t->frame);
      g_string_append_printf(out,
                             "<figure><img class=\"thumb\" width=\"%d\" height=\"%d\" "
                             "alt=\"luma at %s\" src=\"data:image/png;base64,%s\">"
                             "<figcaption>%s</figcaption></figure>",
                             t->width, t->height, when, png, when);
      g_free(png);
    }
    g_string_append(out, "</div>\n<p class=\"note\">Luma (Y) as coded, not stretched to the "
                         "range, of evenly spaced frames.</p>\n");
  } else if (s->from_records) {
    g_string_append(out, "<p class=\"note no-thumbs\">No thumbnails: this section was drawn "
                         "from the frames' records (<code>lumahist merge</code>), which hold "
                         "no pixels.</p>\n");
  }

  Series d;
  series_make(s, &d);
  bool timed = s->all_timed;
  guint n = s->samples->len;
  if (d.n < n)
    g_string_append_printf(out,
                           "<p class=\"note decimated\">%u frames drawn as %u points: each point "
                           "is a run of about %.1f frames, drawn as its lowest P1 and P10, its "
                           "highest P90, P99, clipping, out-of-legal and difference, and its "
                           "mean median. Cuts and spans are at their exact times.</p>\n",
                           n, d.n, (double)n / d.n);

  g_string_append(out, "<h3>Luma over time</h3>\n");
  /* Limited-range values below black or above white go a little outside. */
  Plot luma = {&d, 200, 0, 1};
  plot_open(out, &luma, "luma-chart", "luma percentiles over time", "", timed);
  plot_band(out, &luma, d.q[Q1], d.q[Q99], "#c9d7ef");
  plot_band(out, &luma, d.q[Q10], d.q[Q90], "#7f9fd6");
  plot_line(out, &luma, d.q[Q50], "#d9822b", "class=\"median\" ");
  plot_spans(out, &luma, s->black, timed, "span-black", "rgba(29,35,48,0.3)", "black");
  plot_spans(out, &luma, s->frozen, timed, "span-frozen", "rgba(74,144,226,0.3)", "frozen");
  g_string_append(out, "</svg>\n");
  const char *luma_items[] = {
      "#c9d7ef", "P1&ndash;P99",       "#7f9fd6",      "P10&ndash;P90",        "#d9822b",
      "median",  "rgba(29,35,48,0.3)", "black frames", "rgba(74,144,226,0.3)", "frozen frames",
      NULL};
  legend(out, luma_items);

  g_string_append(out, "<h3>Clipping and out-of-legal range</h3>\n");
  double clip_max = 100 * MAX(series_max(d.clipped_low, d.n), MAX(series_max(d.clipped_high, d.n),
                                                                  series_max(d.out_of_legal, d.n)));
  double *percent[3];
  const double *fractions[3] = {d.clipped_low, d.clipped_high, d.out_of_legal};
  for (int k = 0; k < 3; k++) {
    percent[k] = g_new(double, MAX(d.n, 1));
    for (guint i = 0; i < d.n; i++)
      percent[k][i] = 100 * fractions[k][i];
  }
  Plot clip = {&d, 120, 0, MAX(1.0, ceil(clip_max * 1.1))};
  plot_open(out, &clip, "clip-chart", "clipped and out-of-legal fractions over time", " %", timed);
  plot_line(out, &clip, percent[2], "#c2410c", "stroke-dasharray=\"5 3\" ");
  plot_line(out, &clip, percent[0], "#3b4a6b", "");
  plot_line(out, &clip, percent[1], "#d08a00", "");
  g_string_append(out, "</svg>\n");
  for (int k = 0; k < 3; k++)
    g_free(percent[k]);
  const char *clip_items[] = {"#3b4a6b", "at code 0 (clipped low)",
                              "#d08a00", "at the top code (clipped high)",
                              "#c2410c", "outside 16&ndash;235 (scaled to the depth)",
                              NULL};
  legend(out, clip_items);

  g_string_append(out, "<h3>Frame differences and scene cuts</h3>\n");
  double diff_max = series_max(d.diff, d.n);
  Plot diff = {&d, 140, 0, MAX(1.0, ceil(diff_max * 1.1))};
  plot_open(out, &diff, "diff-chart", "frame differences and scene cuts over time", "", timed);
  /* The cuts from the frames' flags (the summary's list is of their pts,
   * which a video without times lacks), never decimated. */
  for (guint i = 0; i < n; i++) {
    const Sample *e = &g_array_index(s->samples, Sample, i);
    if (!e->scene_cut)
      continue;
    double x = plot_x(&diff, x_of(s, e));
    g_string_append_printf(out,
                           "<g class=\"cut\"><line x1=\"%.1f\" x2=\"%.1f\" y1=\"0\" "
                           "y2=\"%.0f\" stroke=\"#c0392b\" stroke-width=\"1.5\"/>"
                           "<path d=\"M%.1f 0l-5 -7h10z\" fill=\"#c0392b\"/>"
                           "<title>scene cut at ",
                           x, x, diff.height, x);
    if (timed)
      g_string_append_printf(out, "%.3f s", e->pts);
    else
      g_string_append_printf(out, "frame %" G_GUINT64_FORMAT, e->frame);
    g_string_append(out, "</title></g>\n");
  }
  plot_line(out, &diff, d.diff, "#2f4f86", "class=\"diff\" ");
  g_string_append(out, "</svg>\n");
  const char *diff_items[] = {"#2f4f86", "mean |Y &minus; previous Y|, code values", "#c0392b",
                              "scene cut", NULL};
  legend(out, diff_items);
  series_clear(&d);
  g_string_append(out, "</section>\n");
}

static const char video_style[] =
    "<style>\n"
    ".thumbs{display:flex;gap:6px;flex-wrap:wrap;margin:6px 0}\n"
    ".thumbs figure{margin:0;text-align:center;font-size:11px;color:#5b6475}\n"
    ".thumbs img{display:block;image-rendering:auto;border:1px solid #dde1e8;background:#000}\n"
    "h3{font-size:14px;margin:12px 0 4px}\n"
    ".legend span{display:inline-block;margin-right:14px;font-size:12px;color:#5b6475}\n"
    ".legend i{display:inline-block;width:14px;height:10px;margin-right:4px;"
    "vertical-align:middle}\n"
    ".incomplete{color:#b42318}\n"
    "</style>\n";

void lht_video_report_append_html(const LhtVideoReport *r, GString *out)
{
  guint n = r->sections->len;
  if (!n)
    return;
  g_string_append(out, video_style);
  g_string_append_printf(out,
                         "<section><h2>Videos</h2>\n<p class=\"note\">%u video%s. Mean luma: "
                         "min, mean and max of the frame means (code values); black and frozen: "
                         "seconds in such spans; flicker: the largest std of the frame means "
                         "over one second (code values).</p>\n"
                         "<div class=\"scroll\"><table id=\"video-summary\"><thead><tr>"
                         "<th class=\"text nosort\">file</th><th class=\"nosort\">frames</th>"
                         "<th class=\"nosort\">duration s</th><th class=\"nosort\">mean luma "
                         "min</th><th class=\"nosort\">mean</th><th class=\"nosort\">max</th>"
                         "<th class=\"nosort\">cuts</th><th class=\"nosort\">black s</th>"
                         "<th class=\"nosort\">frozen s</th><th class=\"nosort\">flicker</th>"
                         "</tr></thead><tbody>\n",
                         n, n == 1 ? "" : "s");
  for (guint i = 0; i < n; i++) {
    const Section *s = g_ptr_array_index(r->sections, i);
    const LhtVideoSummary *v = &s->summary;
    g_string_append_printf(out, "<tr><td class=\"text\"><a href=\"#video-%u\">", i + 1);
    append_escaped(out, s->path);
    g_string_append_printf(out, "</a></td><td>%" G_GUINT64_FORMAT "</td><td>", v->frames);
    append_value(out, v->duration, 3);
    const double values[] = {v->mean_min, v->mean_mean, v->mean_max};
    for (int k = 0; k < 3; k++) {
      g_string_append(out, "</td><td>");
      append_value(out, values[k], 3);
    }
    g_string_append_printf(out, "</td><td>%u</td><td>", v->n_cuts);
    append_value(out, spans_seconds(s->black), 3);
    g_string_append(out, "</td><td>");
    append_value(out, spans_seconds(s->frozen), 3);
    g_string_append(out, "</td><td>");
    append_value(out, v->flicker_max, 3);
    g_string_append(out, "</td></tr>\n");
  }
  g_string_append(out, "</tbody></table></div>\n</section>\n");
  for (guint i = 0; i < n; i++)
    append_section(g_ptr_array_index(r->sections, i), i + 1, out);
}
