/* report.c: `--report FILE.html`, one self-contained page (inline CSS, SVG and
 * script; nothing fetched) that shows a folder's luminance at a glance: the
 * dataset histogram, percentile bands over the images, and a sortable table of
 * every image with a small histogram, its statistics and flags.
 *
 * Every figure comes from the image's histogram through
 * lh_stats_from_histogram(), so a report made by `merge` from records equals
 * the one `stats` makes from the images.  Values are normalized to [0, 1] for
 * the range (black 0, white 1), so one threshold serves 8- and 16-bit images:
 *   too dark       median < dark_below          (--dark-below, default 0.25)
 *   too bright     median > bright_above        (--bright-above, default 0.75)
 *   low contrast   P95 - P5 < low_contrast_below (--low-contrast-below, default 0.3)
 * The charts fold 16-bit histograms to 256 bins; they are pictures, the
 * records hold the exact numbers.
 *
 * Videos analysed by `stats` also get their own sections over time, drawn by
 * video-report.c (lht_report_videos()), before the images'. */
#include <math.h>
#include <string.h>

#include "lht-batch.h"
#include "lht-video-report.h"

#define MINI_BINS 32
#define BAND_COLUMNS 600 /* at most, in the percentile band chart */

enum {
  FLAG_DARK = 1,
  FLAG_BRIGHT = 2,
  FLAG_LOW_CONTRAST = 4,
};

/* The report's own percentiles, in this order. */
static const double report_percentiles[] = {1, 5, 25, 75, 95, 99};
enum { P1, P5, P25, P75, P95, P99, N_REPORT_PERCENTILES };

typedef struct {
  char *path; /* as records write it (valid UTF-8) */
  int width;
  int height;
  int bit_depth;
  double mean, stddev, min, max, median;
  double p[N_REPORT_PERCENTILES];
  double clipped_low, clipped_high;
  guint8 mini[MINI_BINS]; /* bar heights, 0 .. 255 of the tallest */
  unsigned flags;
} Entry;

struct LhtReport {
  LhtThresholds thresholds;
  LhOptions options; /* matrix, range and the report's percentiles */
  GArray *entries;   /* of Entry */
  guint64 folded[256];
  LhStats stats; /* scratch */
  bool failed;
  LhtVideoReport *videos; /* created when a video is first added */
};

static void entry_clear(gpointer data)
{
  g_free(((Entry *)data)->path);
}

LhtReport *lht_report_new(const LhtThresholds *thresholds, LhMatrix matrix, LhRange range)
{
  LhtReport *r = g_new0(LhtReport, 1);
  r->thresholds = *thresholds;
  lh_options_init(&r->options);
  r->options.matrix = matrix;
  r->options.range = range;
  r->options.n_percentiles = N_REPORT_PERCENTILES;
  memcpy(r->options.percentiles, report_percentiles, sizeof report_percentiles);
  r->entries = g_array_new(FALSE, TRUE, sizeof(Entry));
  g_array_set_clear_func(r->entries, entry_clear);
  lh_stats_init(&r->stats);
  return r;
}

void lht_report_free(LhtReport *r)
{
  if (!r)
    return;
  g_array_free(r->entries, TRUE);
  lh_stats_clear(&r->stats);
  lht_video_report_free(r->videos);
  g_free(r);
}

LhtVideoReport *lht_report_videos(LhtReport *r)
{
  if (!r->videos)
    r->videos = lht_video_report_new();
  return r->videos;
}

void lht_report_add(LhtReport *r, const char *path, int width, int height, int bit_depth,
                    const uint64_t *histogram)
{
  LhStats *s = &r->stats;
  if (lh_stats_from_histogram(histogram, bit_depth, &r->options, s) < 0) {
    lht_error(path, "report: %s", lh_last_error());
    r->failed = true;
    return;
  }
  Entry e = {
      .path = lht_path_shown(path),
      .width = width,
      .height = height,
      .bit_depth = bit_depth,
      .mean = s->mean_norm,
      .stddev = s->stddev_norm,
      .min = s->min_norm,
      .max = s->max_norm,
      .median = s->median_norm,
      .clipped_low = s->clipped_low,
      .clipped_high = s->clipped_high,
  };
  for (int i = 0; i < N_REPORT_PERCENTILES; i++)
    e.p[i] = s->percentile_norm[i];

  guint64 mini[MINI_BINS] = {0}, tallest = 0;
  size_t bins = (size_t)1 << bit_depth;
  for (size_t v = 0; v < bins; v++) {
    mini[v * MINI_BINS / bins] += histogram[v];
    r->folded[v * 256 / bins] += histogram[v];
  }
  for (int i = 0; i < MINI_BINS; i++)
    tallest = MAX(tallest, mini[i]);
  for (int i = 0; i < MINI_BINS; i++)
    e.mini[i] = tallest ? (guint8)((mini[i] * 255 + tallest / 2) / tallest) : 0;

  if (s->count) {
    if (e.median < r->thresholds.dark_below)
      e.flags |= FLAG_DARK;
    if (e.median > r->thresholds.bright_above)
      e.flags |= FLAG_BRIGHT;
    /* From the code values: the difference of two normalized values is not
     * always the normalized difference ((65 - 14) / 255 is 0.2; 65 / 255 -
     * 14 / 255 is less), and the flag is for a span below the threshold. */
    uint32_t black_to_white = r->options.range == LH_RANGE_LIMITED ? (235u - 16u) << (bit_depth - 8)
                                                                   : (1u << bit_depth) - 1;
    double span = (double)(s->percentile_value[P95] - s->percentile_value[P5]) / black_to_white;
    if (span < r->thresholds.low_contrast_below)
      e.flags |= FLAG_LOW_CONTRAST;
  }
  g_array_append_val(r->entries, e);
}

bool lht_thresholds_valid(double dark_below, double bright_above, double low_contrast_below)
{
  const double thresholds[] = {dark_below, bright_above, low_contrast_below};
  for (size_t i = 0; i < G_N_ELEMENTS(thresholds); i++)
    if (!(thresholds[i] >= 0 && thresholds[i] <= 1))
      return false;
  return true;
}

/* ------------------------------------------------------------------------ */
/* Writing                                                                   */

/* A JSON string that is safe inside <script>: no "</script>", no U+2028, and
 * no control character, C1 ones (U+0080 .. U+009F) included, which HTML
 * counts as parse errors in a page's text. */
static void script_string(GString *out, const char *text)
{
  g_string_append_c(out, '"');
  for (const unsigned char *c = (const unsigned char *)text; *c; c++) {
    if (*c == '"' || *c == '\\')
      g_string_append_printf(out, "\\%c", *c);
    else if (*c < 0x20 || *c == '<' || *c == '>' || *c == '&' || *c == 0x7f)
      g_string_append_printf(out, "\\u%04x", *c);
    else if (c[0] == 0xc2 && c[1] >= 0x80 && c[1] <= 0x9f) {
      g_string_append_printf(out, "\\u%04x", c[1]);
      c++;
    } else if (c[0] == 0xe2 && c[1] == 0x80 && (c[2] == 0xa8 || c[2] == 0xa9)) {
      g_string_append_printf(out, "\\u%04x", c[2] == 0xa8 ? 0x2028 : 0x2029);
      c += 2;
    } else
      g_string_append_c(out, (char)*c);
  }
  g_string_append_c(out, '"');
}

/* Four decimals: plenty for a picture, and short. */
static void number(GString *out, double value)
{
  if (!isfinite(value))
    g_string_append(out, "null");
  else
    g_string_append_printf(out, "%.4f", value);
}

static const char page_style[] =
    "body{font:14px/1.4 system-ui,-apple-system,'Segoe UI',sans-serif;margin:24px;"
    "color:#1d2330;background:#f6f7f9}\n"
    "h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:0 0 8px}\n"
    "section{background:#fff;border:1px solid #dde1e8;border-radius:8px;padding:14px 18px;"
    "margin:14px 0}\n"
    ".summary span{display:inline-block;margin-right:18px}\n"
    ".chart{width:100%;max-width:1100px;height:auto;display:block}\n"
    ".note{color:#5b6475;font-size:12px}\n"
    "table{border-collapse:collapse;font-size:12.5px}\n"
    "th{position:sticky;top:0;background:#eef1f6;cursor:pointer;text-align:right;"
    "padding:4px 6px;border-bottom:2px solid #c9d0dc;white-space:nowrap;user-select:none}\n"
    "th.text,td.text{text-align:left}\nth.nosort{cursor:default}\n"
    "th.asc::after{content:' \\25B2'}th.desc::after{content:' \\25BC'}\n"
    "td{text-align:right;padding:3px 6px;border-bottom:1px solid #eceff4;white-space:nowrap;"
    "font-variant-numeric:tabular-nums}\n"
    "td.text{max-width:340px;overflow:hidden;text-overflow:ellipsis}\n"
    ".scroll{overflow-x:auto}\n"
    "tr.flagged td{background:#fff8e6}\n"
    ".badge{display:inline-block;border-radius:9px;padding:0 7px;margin-left:3px;font-size:11px;"
    "color:#fff}\n.dark{background:#3b4a6b}.bright{background:#d08a00}.lowc{background:#8a5cc2}\n"
    ".mini{width:96px;height:22px;vertical-align:middle;background:#f1f3f7}\n"
    ".controls{margin:0 0 8px}.controls label{margin-right:16px}\n"
    "button{margin:0 4px}\n";

static void append_dataset_chart(LhtReport *r, GString *out)
{
  const double width = 1024, height = 240;
  guint64 tallest = 0, total = 0;
  for (int i = 0; i < 256; i++) {
    tallest = MAX(tallest, r->folded[i]);
    total += r->folded[i];
  }
  g_string_append_printf(out,
                         "<svg class=\"chart\" id=\"dataset-chart\" viewBox=\"0 -14 %.0f %.0f\" "
                         "role=\"img\" aria-label=\"dataset histogram\">\n",
                         width, height + 34);
  g_string_append_printf(out,
                         "<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" "
                         "fill=\"#f1f3f7\"/>\n",
                         width, height);
  /* Linear and log heights; the checkbox shows one of them. */
  for (int scale = 0; scale < 2; scale++) {
    double top = scale ? log1p((double)tallest) : (double)tallest;
    g_string_append_printf(out, "<path class=\"%s\" fill=\"%s\" %sd=\"M0 %.0f",
                           scale ? "log" : "linear", scale ? "#5577aa" : "#2f4f86",
                           scale ? "style=\"display:none\" " : "", height);
    for (int i = 0; i < 256; i++) {
      double v = scale ? log1p((double)r->folded[i]) : (double)r->folded[i];
      double h = top > 0 ? v / top * (height - 4) : 0;
      g_string_append_printf(out, "V%.1fH%dV", height - h, (i + 1) * 4);
      g_string_append_printf(out, "%.0f", height);
    }
    g_string_append(out, "Z\"/>\n");
  }
  if (total) {
    /* Markers at the folded histogram's own percentiles. */
    LhOptions options = r->options;
    options.n_percentiles = 5;
    double marks[] = {1, 5, 50, 95, 99};
    memcpy(options.percentiles, marks, sizeof marks);
    if (lh_stats_from_histogram(r->folded, 8, &options, &r->stats) == 0) {
      for (int i = 0; i < 5; i++) {
        double x = r->stats.percentile_value[i] * 4 + 2;
        const char *colour = i == 2 ? "#1a9850" : "#d9822b";
        /* Labels on three levels, so that neighbours do not overlap. */
        const int label_y[] = {26, 12, -3, 12, 26};
        char label[32];
        if (i == 2)
          snprintf(label, sizeof label, "median %u", (unsigned)r->stats.percentile_value[i]);
        else
          snprintf(label, sizeof label, "P%g", marks[i]);
        g_string_append_printf(out,
                               "<line x1=\"%.0f\" x2=\"%.0f\" y1=\"0\" y2=\"%.0f\" stroke=\"%s\" "
                               "stroke-width=\"2\" stroke-dasharray=\"%s\"/>"
                               "<text x=\"%.0f\" y=\"%d\" font-size=\"11\" text-anchor=\"middle\" "
                               "fill=\"%s\" stroke=\"#fff\" stroke-width=\"3\" "
                               "paint-order=\"stroke\">%s</text>\n",
                               x, x, height, colour, i == 2 ? "none" : "5 3", x, label_y[i], colour,
                               label);
      }
    }
  }
  for (int v = 0; v <= 256; v += 32) {
    int x = v == 256 ? 1023 : v * 4;
    g_string_append_printf(out,
                           "<text x=\"%d\" y=\"%.0f\" font-size=\"11\" fill=\"#5b6475\" "
                           "text-anchor=\"%s\">%d</text>\n",
                           x, height + 15,
                           v == 0     ? "start"
                           : v == 256 ? "end"
                                      : "middle",
                           v == 256 ? 255 : v);
  }
  g_string_append(out, "</svg>\n");
}

static int compare_by_median(gconstpointer a, gconstpointer b, gpointer data)
{
  const Entry *entries = data;
  const Entry *x = &entries[*(const guint *)a], *y = &entries[*(const guint *)b];
  if (x->median != y->median)
    return x->median < y->median ? -1 : 1;
  return *(const guint *)a < *(const guint *)b ? -1 : 1;
}

static void append_band(GString *out, const double *low, const double *high, int n, double width,
                        double height, const char *fill)
{
  g_string_append_printf(out, "<path fill=\"%s\" d=\"", fill);
  for (int i = 0; i < n; i++) {
    double x = n > 1 ? width * i / (n - 1) : width / 2;
    g_string_append_printf(out, "%s%.1f %.1f", i ? "L" : "M", x, height * (1 - high[i]));
  }
  for (int i = n - 1; i >= 0; i--) {
    double x = n > 1 ? width * i / (n - 1) : width / 2;
    g_string_append_printf(out, "L%.1f %.1f", x, height * (1 - low[i]));
  }
  g_string_append(out, "Z\"/>\n");
}

/* The images sorted by median, left to right; at each, bands from P1 to P99,
 * P5 to P95 and P25 to P75, and the median.  Above BAND_COLUMNS images, each
 * column is a run of neighbours: its bands reach the lowest low edge and the
 * highest high edge among them (an average drew edges no image has and hid
 * the clipped ones), its median is theirs averaged. */
static void append_band_chart(LhtReport *r, GString *out)
{
  const double width = 1024, height = 260;
  guint n = r->entries->len;
  g_string_append_printf(out,
                         "<svg class=\"chart\" id=\"band-chart\" viewBox=\"-34 -8 %.0f %.0f\" "
                         "role=\"img\" aria-label=\"percentile bands over the images\">\n",
                         width + 40, height + 30);
  g_string_append_printf(out,
                         "<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" "
                         "fill=\"#f1f3f7\"/>\n",
                         width, height);
  for (int i = 0; i <= 4; i++) {
    double y = height * i / 4;
    g_string_append_printf(out,
                           "<line x1=\"0\" x2=\"%.0f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#dde1e8\"/>"
                           "<text x=\"-6\" y=\"%.1f\" font-size=\"11\" fill=\"#5b6475\" "
                           "text-anchor=\"end\">%.2f</text>\n",
                           width, y, y, y + 4, 1 - i / 4.0);
  }
  if (n > 0) {
    guint *order = g_new(guint, n);
    for (guint i = 0; i < n; i++)
      order[i] = i;
    g_qsort_with_data(order, (gint)n, sizeof *order, compare_by_median, r->entries->data);
    int columns = n > BAND_COLUMNS ? BAND_COLUMNS : (int)n;
    /* low and high of each band, and the median, per column */
    double *v[7];
    for (int k = 0; k < 7; k++)
      v[k] = g_new0(double, columns);
    for (int c = 0; c < columns; c++) {
      guint from = (guint)((guint64)c * n / columns), to = (guint)((guint64)(c + 1) * n / columns);
      for (guint i = from; i < to; i++) {
        const Entry *e = &g_array_index(r->entries, Entry, order[i]);
        const double values[7] = {e->p[P1],  e->p[P99], e->p[P5], e->p[P95],
                                  e->p[P25], e->p[P75], e->median};
        for (int k = 0; k < 7; k++) {
          const double value = isfinite(values[k]) ? values[k] : 0;
          if (k == 6)
            v[k][c] += value / (to - from);
          else if (i == from || (k % 2 == 0 ? value < v[k][c] : value > v[k][c]))
            v[k][c] = value; /* even k: a low edge, odd: a high one */
        }
      }
    }
    for (int k = 0; k < 7; k++)
      for (int c = 0; c < columns; c++)
        v[k][c] = CLAMP(v[k][c], -0.02, 1.02);
    append_band(out, v[0], v[1], columns, width, height, "#c9d7ef");
    append_band(out, v[2], v[3], columns, width, height, "#8fadde");
    append_band(out, v[4], v[5], columns, width, height, "#4f79bd");
    g_string_append(out, "<path fill=\"none\" stroke=\"#d9822b\" stroke-width=\"2\" d=\"");
    for (int c = 0; c < columns; c++) {
      double x = columns > 1 ? width * c / (columns - 1) : width / 2;
      g_string_append_printf(out, "%s%.1f %.1f", c ? "L" : "M", x, height * (1 - v[6][c]));
    }
    g_string_append(out, "\"/>\n");
    for (int k = 0; k < 7; k++)
      g_free(v[k]);
    g_free(order);
  }
  /* The dark and bright thresholds, against which the median is judged. */
  const double lines[2] = {r->thresholds.dark_below, r->thresholds.bright_above};
  for (int i = 0; i < 2; i++)
    if (lines[i] >= 0 && lines[i] <= 1)
      g_string_append_printf(out,
                             "<line x1=\"0\" x2=\"%.0f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
                             "stroke-dasharray=\"6 4\" stroke-width=\"1.5\"/>\n",
                             width, height * (1 - lines[i]), height * (1 - lines[i]),
                             i ? "#d08a00" : "#3b4a6b");
  g_string_append_printf(out,
                         "<text x=\"%.0f\" y=\"%.0f\" font-size=\"11\" fill=\"#5b6475\" "
                         "text-anchor=\"middle\">%u image%s, sorted by median</text>\n",
                         width / 2, height + 18, n, n == 1 ? "" : "s");
  g_string_append(out, "</svg>\n");
}

static void append_data(LhtReport *r, GString *out)
{
  g_string_append(out, "<script>\nconst DATA=[\n");
  for (guint i = 0; i < r->entries->len; i++) {
    const Entry *e = &g_array_index(r->entries, Entry, i);
    g_string_append_printf(out, "[%u,", i + 1);
    script_string(out, e->path);
    g_string_append_printf(out, ",%d,%d,%d", e->width, e->height, e->bit_depth);
    const double values[] = {e->mean,
                             e->stddev,
                             e->min,
                             e->p[P5],
                             e->median,
                             e->p[P95],
                             e->max,
                             e->p[P95] - e->p[P5],
                             e->clipped_low * 100,
                             e->clipped_high * 100};
    for (size_t k = 0; k < G_N_ELEMENTS(values); k++) {
      g_string_append_c(out, ',');
      number(out, values[k]);
    }
    g_string_append_printf(out, ",%u,\"", e->flags);
    for (int k = 0; k < MINI_BINS; k++)
      g_string_append_printf(out, "%02x", e->mini[k]);
    g_string_append(out, "\"],\n");
  }
  g_string_append(out, "];\n</script>\n");
}

/* Builds the table from DATA: sorting by any column, a filter, pages. */
static const char page_script[] =
    "<script>\n"
    "(function(){\n"
    "'use strict';\n"
    "var COLS=[\n"
    " {i:0,t:'#'},{i:1,t:'path',text:1},{i:15,t:'flags',text:1},{i:-1,t:'size'},{i:4,t:'bits'},\n"
    " {i:5,t:'mean',f:3},{i:6,t:'std',f:3},{i:7,t:'min',f:3},{i:8,t:'P5',f:3},\n"
    " {i:9,t:'median',f:3},{i:10,t:'P95',f:3},{i:11,t:'max',f:3},{i:12,t:'P95\\u2212P5',f:3},\n"
    " {i:13,t:'clip low %',f:2},{i:14,t:'clip high %',f:2},{i:16,t:'histogram',nosort:1}];\n"
    "var PAGE=200, page=0, sortCol=0, sortDir=1, rows=DATA.slice();\n"
    "var table=document.getElementById('images');\n"
    "function key(r,c){return c.i<0?r[2]*r[3]:c.i===15?r[15]*1000+r[9]:r[c.i];}\n"
    "function esc(s){return String(s).replace(/[&<>\"]/g,function(ch){\n"
    "  return {'&':'&amp;','<':'&lt;','>':'&gt;','\"':'&quot;'}[ch];});}\n"
    "function mini(hex){var s='<svg class=\"mini\" viewBox=\"0 0 64 22\" "
    "preserveAspectRatio=\"none\">';\n"
    "  for(var k=0;k<32;k++){var h=parseInt(hex.substr(2*k,2),16)*21/255;\n"
    "    if(h>0)s+='<rect x=\"'+2*k+'\" y=\"'+(22-h).toFixed(1)+'\" width=\"2\" height=\"'"
    "+h.toFixed(1)+'\" fill=\"#2f4f86\"/>';}\n"
    "  return s+'</svg>';}\n"
    "function flags(f){var s='';\n"
    "  if(f&1)s+='<span class=\"badge dark\">too dark</span>';\n"
    "  if(f&2)s+='<span class=\"badge bright\">too bright</span>';\n"
    "  if(f&4)s+='<span class=\"badge lowc\">low contrast</span>';\n"
    "  return s;}\n"
    "function cell(r,c){if(c.i<0)return r[2]+'\\u00d7'+r[3];\n"
    "  if(c.i===15)return flags(r[15]);if(c.i===16)return mini(r[16]);\n"
    "  var v=r[c.i];if(c.f!==undefined)return v===null?'':v.toFixed(c.f);return esc(v);}\n"
    "function head(){var h='<thead><tr>';\n"
    "  COLS.forEach(function(c,n){var cl=(c.text?'text ':'')+(c.nosort?'nosort ':'')+\n"
    "    (n===sortCol?(sortDir>0?'asc':'desc'):'');\n"
    "    h+='<th data-col=\"'+n+'\" class=\"'+cl+'\">'+esc(c.t)+'</th>';});\n"
    "  return h+'</tr></thead>';}\n"
    "function filtered(){var only=document.getElementById('flagged').checked;\n"
    "  var q=document.getElementById('search').value.toLowerCase();\n"
    "  return rows.filter(function(r){return (!only||r[15])&&(!q||r[1].toLowerCase()"
    ".indexOf(q)>=0);});}\n"
    "function render(){var list=filtered(), pages=Math.max(1,Math.ceil(list.length/PAGE));\n"
    "  if(page>=pages)page=pages-1;var b='<tbody>';\n"
    "  list.slice(page*PAGE,(page+1)*PAGE).forEach(function(r){\n"
    "    b+='<tr'+(r[15]?' class=\"flagged\"':'')+'>';\n"
    "    COLS.forEach(function(c){b+='<td'+(c.text?' class=\"text\"':'')+\n"
    "      (c.i===1?' title=\"'+esc(r[1])+'\"':'')+'>'+cell(r,c)+'</td>';});\n"
    "    b+='</tr>';});\n"
    "  table.innerHTML=head()+b+'</tbody>';\n"
    "  document.getElementById('pageinfo').textContent=list.length+' of '+DATA.length+\n"
    "    ' images; page '+(page+1)+' of '+pages;}\n"
    "table.addEventListener('click',function(ev){var th=ev.target.closest('th');\n"
    "  if(!th)return;var n=+th.getAttribute('data-col');if(COLS[n].nosort)return;\n"
    "  if(n===sortCol)sortDir=-sortDir;else{sortCol=n;sortDir=1;}\n"
    "  var c=COLS[n];rows.sort(function(a,b){var x=key(a,c),y=key(b,c);\n"
    "    if(x===y)return a[0]-b[0];if(x===null)return 1;if(y===null)return -1;\n"
    "    return (x<y?-1:1)*sortDir;});page=0;render();});\n"
    "document.getElementById('flagged').addEventListener('change',function(){page=0;render();});\n"
    "document.getElementById('search').addEventListener('input',function(){page=0;render();});\n"
    "document.getElementById('prev').addEventListener('click',function(){if(page>0){page--;"
    "render();}});\n"
    "document.getElementById('next').addEventListener('click',function(){page++;render();});\n"
    "document.getElementById('logscale').addEventListener('change',function(ev){\n"
    "  var svg=document.getElementById('dataset-chart');\n"
    "  svg.querySelector('.log').style.display=ev.target.checked?'':'none';\n"
    "  svg.querySelector('.linear').style.display=ev.target.checked?'none':'';});\n"
    "render();\n"
    "})();\n"
    "</script>\n";

bool lht_report_is_empty(const LhtReport *r)
{
  return r->entries->len == 0 && !r->videos;
}

bool lht_report_write(LhtReport *r, const char *filename)
{
  guint n = r->entries->len, dark = 0, bright = 0, low = 0, flagged = 0;
  for (guint i = 0; i < n; i++) {
    unsigned f = g_array_index(r->entries, Entry, i).flags;
    dark += (f & FLAG_DARK) != 0;
    bright += (f & FLAG_BRIGHT) != 0;
    low += (f & FLAG_LOW_CONTRAST) != 0;
    flagged += f != 0;
  }
  /* Videos are rows of the images' table too, by their summed histograms. */
  const guint videos = r->videos ? lht_video_report_count(r->videos) : 0;
  const char *what = videos == 0   ? (n == 1 ? "image" : "images")
                     : videos == n ? (n == 1 ? "video" : "videos")
                                   : "images and videos";
  GString *out = g_string_sized_new(4096 + (gsize)n * 240);
  g_string_append(out, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                       "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src "
                       "'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; "
                       "img-src data:\">\n"
                       "<meta name=\"viewport\" content=\"width=device-width\">\n");
  g_string_append_printf(out,
                         "<title>lumahist report: %u %s</title>\n<style>\n%s</style>\n"
                         "</head>\n<body>\n",
                         n, what, page_style);
  g_string_append(out, "<h1>Luminance report</h1>\n<p class=\"note\">");
  g_string_append_printf(out,
                         "Made by lumahist %s. Luma %s, %s range; values normalized to [0, 1] "
                         "(black 0, white 1).</p>\n",
                         lh_version(), lh_matrix_name(r->options.matrix),
                         lh_range_name(r->options.range));
  g_string_append_printf(out,
                         "<section class=\"summary\"><span><b>%u</b> %s</span>"
                         "<span><b id=\"n-flagged\">%u</b> flagged:</span>"
                         "<span><span class=\"badge dark\">too dark</span> %u "
                         "(median &lt; %g, <code>--dark-below</code>)</span>"
                         "<span><span class=\"badge bright\">too bright</span> %u "
                         "(median &gt; %g, <code>--bright-above</code>)</span>"
                         "<span><span class=\"badge lowc\">low contrast</span> %u "
                         "(P95 &minus; P5 &lt; %g, <code>--low-contrast-below</code>)</span>"
                         "</section>\n",
                         n, what, flagged, dark, r->thresholds.dark_below, bright,
                         r->thresholds.bright_above, low, r->thresholds.low_contrast_below);
  if (r->videos)
    lht_video_report_append_html(r->videos, out);

  g_string_append(out, "<section><h2>Dataset histogram</h2>\n"
                       "<div class=\"controls\"><label><input type=\"checkbox\" id=\"logscale\">"
                       " log scale</label><span class=\"note\">All images' luma, folded to 256 "
                       "bins; lines at P1, P5, the median, P95 and P99.</span></div>\n");
  append_dataset_chart(r, out);
  g_string_append(out, "</section>\n<section><h2>Percentile bands over the images</h2>\n"
                       "<p class=\"note\">Each image, sorted by its median (orange line): P1"
                       "&ndash;P99 (light), P5&ndash;P95 and P25&ndash;P75 (dark) bands; past "
                       "600 images, each column spans a run of neighbours, from their lowest "
                       "to their highest edges, at their mean median. Dashed: the dark and "
                       "bright thresholds.</p>\n");
  append_band_chart(r, out);
  g_string_append(out, "</section>\n<section><h2>Images</h2>\n<div class=\"controls\">"
                       "<label><input type=\"checkbox\" id=\"flagged\"> flagged only</label>"
                       "<label>path contains <input type=\"search\" id=\"search\"></label>"
                       "<button id=\"prev\">&lsaquo; previous</button>"
                       "<button id=\"next\">next &rsaquo;</button> "
                       "<span id=\"pageinfo\" class=\"note\"></span></div>\n"
                       "<noscript><p>The table needs JavaScript.</p></noscript>\n"
                       "<div class=\"scroll\"><table id=\"images\"></table></div>\n<p "
                       "class=\"note\">Click a column to sort "
                       "by it; again to reverse.</p>\n</section>\n");
  append_data(r, out);
  g_string_append(out, page_script);
  g_string_append(out, "</body>\n</html>\n");

  GError *error = NULL;
  bool ok = lht_save_file(filename, out->str, out->len, &error);
  if (!ok) {
    lht_error(filename, "%s", error->message);
    g_error_free(error);
  }
  g_string_free(out, TRUE);
  return ok && !r->failed;
}
