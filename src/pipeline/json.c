/* json.c: the JSON that records are written in (lhp-video.h), one writer for
 * the tool and the Python module: strings, numbers and percentile keys as
 * every record writes them, and a video's summary record, which
 * lumahist.stats_files reads back (json.loads) rather than writing it again. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lhp-video.h"

static void json_escaped_run(FILE *out, const char *text, size_t n)
{
  size_t plain = 0; /* the start of the run of bytes written as they are */
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)text[i];
    if (c != '"' && c != '\\' && c >= 0x20 && c != 0x7f)
      continue;
    fwrite(text + plain, 1, i - plain, out);
    plain = i + 1;
    if (c == '"' || c == '\\')
      fprintf(out, "\\%c", c);
    else if (c == '\n')
      fputs("\\n", out);
    else if (c == '\t')
      fputs("\\t", out);
    else
      fprintf(out, "\\u%04x", c);
  }
  fwrite(text + plain, 1, n - plain, out);
}

void lhp_json_string(FILE *out, const char *text)
{
  fputc('"', out);
  size_t left = strlen(text);
  const char *end;
  while (!g_utf8_validate(text, (gssize)left, &end)) {
    json_escaped_run(out, text, (size_t)(end - text));
    /* A byte that is not UTF-8 (always 0x80 or above) as the lone low
     * surrogate U+DC80 + its value less 0x80, as Python's surrogateescape
     * decodes a file name: os.fsencode(json.loads(...)) gives the name's
     * bytes back, and two names that differ there stay two. */
    fprintf(out, "\\u%04x", 0xdc00 + (unsigned char)*end);
    left -= (size_t)(end - text) + 1;
    text = end + 1;
  }
  json_escaped_run(out, text, left);
  fputc('"', out);
}

/* Numbers and keys are written and read in the C locale, whatever the
 * program's LC_NUMERIC: a Python program that set its users' locale gave
 * "mean":12,5, which is not JSON, and "12,5" keys. */
void lhp_json_number(FILE *out, double value)
{
  char text[G_ASCII_DTOSTR_BUF_SIZE];
  if (isfinite(value))
    fputs(g_ascii_formatd(text, sizeof text, "%.17g", value), out);
  else
    fputs("null", out);
}

void lhp_write_counts(FILE *out, const uint64_t *counts, size_t n, char separator)
{
  /* A histogram is most of a record's text (256 to 65536 numbers): made
   * here a block at a time, not by a printf call each, which took a third
   * of a run over small images, on the thread that writes every record. */
  char block[4096];
  size_t used = 0;
  for (size_t i = 0; i < n; i++) {
    char digits[20];
    int k = 0;
    uint64_t v = counts[i];
    do {
      digits[k++] = (char)('0' + v % 10);
      v /= 10;
    } while (v);
    if (used + (size_t)k + 1 > sizeof block) {
      fwrite(block, 1, used, out);
      used = 0;
    }
    if (i)
      block[used++] = separator;
    while (k)
      block[used++] = digits[--k];
  }
  fwrite(block, 1, used, out);
}

void lhp_percentile_key(char *key, size_t size, double p)
{
  /* Records are matched by their keys (merge, --skip-existing): every
   * writer takes them from here.  -0 (a double from Python or the C API;
   * the list parser makes it 0) is keyed "0", as --percentiles -0 is. */
  p += 0.0;
  for (int digits = 1; digits <= 17; digits++) {
    char format[8];
    snprintf(format, sizeof format, "%%.%dg", digits);
    g_ascii_formatd(key, (int)size, format, p);
    if (g_ascii_strtod(key, NULL) == p && (!strchr(key, 'e') || (p != 0 && p < 1e-4)))
      return;
  }
}

/* ------------------------------------------------------------------------ */
/* A video's summary record                                                  */

static void write_range(FILE *out, const char *key, const LhpVideoRange *r)
{
  fprintf(out, "\"%s\":{\"min\":", key);
  lhp_json_number(out, r->n ? r->min : NAN);
  fputs(",\"max\":", out);
  lhp_json_number(out, r->n ? r->max : NAN);
  fputs(",\"mean\":", out);
  lhp_json_number(out, r->n ? r->sum / (double)r->n : NAN);
  fputc('}', out);
}

static void write_spans(FILE *out, const char *key, const LhpVideoSpan *spans, guint n)
{
  fprintf(out, ",\"%s\":[", key);
  for (guint i = 0; i < n; i++) {
    const LhpVideoSpan *span = &spans[i];
    fputs(i ? ",{\"start\":" : "{\"start\":", out);
    lhp_json_number(out, span->start);
    fputs(",\"end\":", out);
    lhp_json_number(out, span->end);
    fprintf(out, ",\"first_frame\":%" PRIu64 ",\"frames\":%" PRIu64 "}", span->first_frame,
            span->frames);
  }
  fputc(']', out);
}

void lhp_video_summary_write(FILE *out, const LhpVideoSummary *v, bool with_histogram)
{
  const LhStats *total = v->total;
  fputs("{\"path\":", out);
  lhp_json_string(out, v->path);
  fprintf(out, ",\"summary\":true,\"complete\":%s,\"frames\":%" PRIu64 ",\"duration\":",
          v->error ? "false" : "true", v->frames);
  lhp_json_number(out, v->end_pts - v->first_pts);
  fputs(",\"start\":", out);
  lhp_json_number(out, v->first_pts);
  fprintf(out, ",\"width\":%d,\"height\":%d,\"bit_depth\":%d,\"matrix\":\"%s\",\"range\":\"%s\"",
          v->width, v->height, v->bit_depth, lh_matrix_name(v->matrix), lh_range_name(v->range));
  fprintf(out, ",\"backend\":\"%s\",\"decoder\":", lh_backend_name(v->backend));
  lhp_json_string(out, v->decoder);
  fprintf(out, ",\"count\":%" PRIu64 ",\"mean\":", total->count);
  lhp_json_number(out, total->mean);
  fputs(",\"stddev\":", out);
  lhp_json_number(out, total->stddev);
  fprintf(out, ",\"min\":%" PRIu32 ",\"max\":%" PRIu32 ",\"median\":%" PRIu32, total->min,
          total->max, total->median);
  fputs(",\"percentiles\":{", out);
  for (int i = 0; i < total->n_percentiles; i++) {
    char key[32];
    lhp_percentile_key(key, sizeof key, total->percentile_p[i]);
    fprintf(out, "%s\"%s\":%" PRIu32, i ? "," : "", key, total->percentile_value[i]);
  }
  fputs("},\"frame_stats\":{", out);
  for (int i = 0; i < LHP_VIDEO_STAT_COUNT; i++) {
    if (i)
      fputc(',', out);
    write_range(out, lhp_video_stat_names[i], &v->stats[i]);
  }
  for (int i = 0; i < total->n_percentiles; i++) {
    char key[40], name[48];
    lhp_percentile_key(key, sizeof key, total->percentile_p[i]);
    snprintf(name, sizeof name, "p%s", key);
    fputc(',', out);
    write_range(out, name, &v->percentiles[i]);
  }
  fputs("},\"cuts\":[", out);
  for (guint i = 0; i < v->n_cuts; i++) {
    if (i)
      fputc(',', out);
    lhp_json_number(out, v->cuts[i]);
  }
  fputc(']', out);
  write_spans(out, "black", v->black, v->n_black);
  write_spans(out, "frozen", v->frozen, v->n_frozen);
  fprintf(out, ",\"decode_warnings\":%" PRIu64, v->decode_warnings);
  if (v->error) {
    fputs(",\"error\":", out);
    lhp_json_string(out, v->error);
  }
  if (with_histogram) {
    fputs(",\"histogram\":[", out);
    lhp_write_counts(out, v->histogram, total->n_bins, ',');
    fputc(']', out);
  }
  fputs("}\n", out);
}
