/* output.c: writes the record of each image as JSON Lines, CSV or an aligned
 * table, with every field in one documented order.
 *
 * Fields of a record, in this order (jsonl keys and csv columns alike):
 *
 *   path          string   the file as found (named, or folder + entry names)
 *   width         integer  of the image, in pixels (the whole image, not the ROI)
 *   height        integer
 *   bit_depth     integer  of the luma values: 8, or 16 for 16-bit PNG (up to 16)
 *   matrix        string   "bt601", "bt709" or "bt2020" (used for RGB input only)
 *   range         string   "full" or "limited"
 *   backend       string   "cpu" or "cuda": where the numbers were computed
 *   decoder       string   "libjpeg-turbo", "libpng", "nvjpeg-hardware" or "nvjpeg-gpu":
 *                          what decoded the image
 *   converted_from string  "CMYK" or "YCCK": a JPEG of that colour space, converted to
 *                          R'G'B' (as Pillow converts it) for its luma.  jsonl: only in
 *                          the records of such images; csv: always, empty otherwise
 *   count         integer  pixels analysed (the ROI's area with --roi)
 *   mean          number   in code values
 *   stddev        number   population standard deviation, in code values
 *   min           integer  code value
 *   max           integer  code value
 *   median        integer  code value, the nearest-rank P(50)
 *   clipped_low   number   fraction of pixels at code value 0
 *   clipped_high  number   fraction of pixels at code value 2^bit_depth - 1
 *   below_legal   number   limited range: fraction below black (16 << (bit_depth - 8)); else 0
 *   above_legal   number   limited range: fraction above white (235 << (bit_depth - 8)); else 0
 *   mean_norm     number   mean mapped to [0, 1]: full range v / (2^bit_depth - 1),
 *   stddev_norm   number     limited range (v - black) / (white - black)
 *   min_norm      number     (stddev_norm is stddev scaled alike, without the offset)
 *   max_norm      number
 *   median_norm   number
 *   percentiles   object   jsonl: {"P": value, ...} for each asked P, in the asked order;
 *                          csv: one integer column "pP" for each
 *   percentiles_norm       jsonl: {"P": normalized value, ...}; csv: columns "pP_norm"
 *   histogram     array    2^bit_depth counts of code values 0, 1, ...; csv: one column of
 *                          counts separated by spaces; left out with --no-histogram
 *
 * A video frame's record (README, "Video files") has "frame", "pts", "duration" and
 * "keyframe" after path, its decoder is the GStreamer element, and "diff",
 * "cut_distance", "scene_cut", "black", "frozen", "out_of_legal", "flicker",
 * "signalstats_low", "signalstats_high" and "decode_warning" come before the
 * histogram; in csv those columns follow the percentiles' (empty for images) when
 * the run has a video.
 *
 * P is written in the shortest form that reads back as the same number ("1",
 * "99.9").  Integers are exact; other numbers are printed with "%.17g", which
 * reads back to the same double; a non-finite number is written null in jsonl
 * and left empty in csv.  JSON strings are UTF-8: a path byte that is not part
 * of valid UTF-8 is written as the escape of a lone low surrogate, \udc80 to
 * \udcff (Python's surrogateescape), so that the record keeps the name.  CSV
 * quotes a field holding a comma, a double quote, a line break or outer
 * spaces, doubling its quotes (RFC 4180), and ends lines with "\n".  The table
 * shows path, size, mean, std, min, median, max and the asked percentiles in
 * aligned columns, for people to read.
 */
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lht-batch.h"
#include "lht.h"

struct LhtWriter {
  FILE *out;
  LhtFormat format;
  bool with_histogram;
  bool with_video; /* csv: the video columns */
  int n_percentiles;
  char keys[LH_MAX_PERCENTILES][32];
  int path_width; /* table only */
  int percentile_widths[LH_MAX_PERCENTILES];
};

bool lht_format_from_name(const char *name, LhtFormat *format)
{
  static const char *const names[] = {"jsonl", "csv", "table"};
  for (size_t i = 0; i < G_N_ELEMENTS(names); i++)
    if (strcmp(names[i], name) == 0) {
      *format = (LhtFormat)i;
      return true;
    }
  return false;
}

/* A path as the table shows it: U+FFFD for each byte that is not UTF-8, a
 * control character, which would break the row or turn it around (C1's and
 * the bidirectional ones included), as '?'. */
static char *table_path(const char *path)
{
  char *shown = lht_path_shown(path);
  char *to = shown;
  for (const char *c = shown; *c;) {
    const size_t hidden = lht_hidden_control_bytes(c);
    if (hidden || (unsigned char)*c < 0x20 || *c == 0x7f) {
      *to++ = '?';
      c += hidden ? hidden : 1;
    } else {
      *to++ = *c++;
    }
  }
  *to = '\0';
  return shown;
}

/* Columns a table path (valid UTF-8) takes in a terminal: two for a wide
 * character (CJK), none for a combining one. */
static int display_width(const char *text)
{
  size_t n = 0;
  for (const char *c = text; *c; c = g_utf8_next_char(c)) {
    gunichar u = g_utf8_get_char(c);
    n += g_unichar_iszerowidth(u) ? 0 : g_unichar_iswide(u) ? 2 : 1;
  }
  return n > INT_MAX ? INT_MAX : (int)n;
}

static const char *const csv_fixed_columns =
    "path,width,height,bit_depth,matrix,range,backend,decoder,converted_from,count,mean,stddev,"
    "min,max,median,"
    "clipped_low,clipped_high,below_legal,above_legal,"
    "mean_norm,stddev_norm,min_norm,max_norm,median_norm";
static const char *const csv_video_columns =
    ",frame,pts,duration,keyframe,diff,cut_distance,scene_cut,black,frozen,out_of_legal,flicker,"
    "signalstats_low,signalstats_high,decode_warning";

enum { TABLE_SIZE_WIDTH = 11, TABLE_REAL_WIDTH = 9, TABLE_CODE_WIDTH = 6, TABLE_FRAME_WIDTH = 8 };

static void write_table_header(LhtWriter *w)
{
  fprintf(w->out, "%-*s  %*s  %*s  %*s  %*s  %*s  %*s", w->path_width, "path", TABLE_SIZE_WIDTH,
          "size", TABLE_REAL_WIDTH, "mean", TABLE_REAL_WIDTH, "std", TABLE_CODE_WIDTH, "min",
          TABLE_CODE_WIDTH, "median", TABLE_CODE_WIDTH, "max");
  for (int i = 0; i < w->n_percentiles; i++) {
    char label[40];
    snprintf(label, sizeof label, "p%s", w->keys[i]);
    fprintf(w->out, "  %*s", w->percentile_widths[i], label);
  }
  fputc('\n', w->out);
}

LhtWriter *lht_writer_new(FILE *out, LhtFormat format, const LhOptions *options,
                          bool with_histogram, const GPtrArray *paths)
{
  return lht_writer_new_video(out, format, options, with_histogram, paths, false);
}

LhtWriter *lht_writer_new_video(FILE *out, LhtFormat format, const LhOptions *options,
                                bool with_histogram, const GPtrArray *paths, bool with_video)
{
  LhtWriter *w = g_new0(LhtWriter, 1);
  w->out = out;
  w->format = format;
  w->with_histogram = with_histogram;
  w->with_video = with_video;
  w->n_percentiles = options->n_percentiles;
  for (int i = 0; i < w->n_percentiles; i++) {
    lhp_percentile_key(w->keys[i], sizeof w->keys[i], options->percentiles[i]);
  }

  if (format == LHT_FORMAT_CSV) {
    fputs(csv_fixed_columns, out);
    for (int i = 0; i < w->n_percentiles; i++)
      fprintf(out, ",p%s", w->keys[i]);
    for (int i = 0; i < w->n_percentiles; i++)
      fprintf(out, ",p%s_norm", w->keys[i]);
    if (with_video)
      fputs(csv_video_columns, out);
    if (with_histogram)
      fputs(",histogram", out);
    fputc('\n', out);
  } else if (format == LHT_FORMAT_TABLE) {
    w->path_width = 4;
    for (guint i = 0; paths && i < paths->len; i++) {
      char *shown = table_path(g_ptr_array_index(paths, i));
      /* A video's frames: " #FRAME" after the path (up to a million). */
      int n = display_width(shown) + (with_video ? TABLE_FRAME_WIDTH : 0);
      g_free(shown);
      if (n > w->path_width)
        w->path_width = n;
    }
    for (int i = 0; i < w->n_percentiles; i++) {
      int n = 1 + (int)strlen(w->keys[i]);
      w->percentile_widths[i] = n > TABLE_CODE_WIDTH ? n : TABLE_CODE_WIDTH;
    }
    write_table_header(w);
  }
  return w;
}

/* ------------------------------------------------------------------------ */
/* JSON Lines                                                                */

static void write_jsonl(LhtWriter *w, const LhtRecord *r)
{
  FILE *out = w->out;
  const LhStats *s = r->stats;
  const LhpFrameFields *v = r->video;
  fputs("{\"path\":", out);
  lhp_json_string(out, r->path);
  if (v) {
    fprintf(out, ",\"frame\":%" PRIu64 ",\"pts\":", v->frame);
    lhp_json_number(out, v->pts);
    fputs(",\"duration\":", out);
    lhp_json_number(out, v->duration);
    fprintf(out, ",\"keyframe\":%s", v->keyframe < 0 ? "null" : v->keyframe ? "true" : "false");
  }
  fprintf(out, ",\"width\":%d,\"height\":%d,\"bit_depth\":%d", r->width, r->height, s->bit_depth);
  fprintf(out, ",\"matrix\":\"%s\",\"range\":\"%s\",\"backend\":\"%s\",\"decoder\":",
          lh_matrix_name(s->matrix), lh_range_name(s->range), lh_backend_name(r->backend));
  lhp_json_string(out, v ? v->decoder : lhio_decoder_name(r->decoder));
  if (r->converted_from)
    fprintf(out, ",\"converted_from\":\"%s\"", r->converted_from);
  fprintf(out, ",\"count\":%" PRIu64, s->count);
  const struct {
    const char *key;
    double value;
  } reals[] = {
      {"mean", s->mean},
      {"stddev", s->stddev},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(reals); i++) {
    fprintf(out, ",\"%s\":", reals[i].key);
    lhp_json_number(out, reals[i].value);
  }
  fprintf(out, ",\"min\":%" PRIu32 ",\"max\":%" PRIu32 ",\"median\":%" PRIu32, s->min, s->max,
          s->median);
  const struct {
    const char *key;
    double value;
  } more[] = {
      {"clipped_low", s->clipped_low}, {"clipped_high", s->clipped_high},
      {"below_legal", s->below_legal}, {"above_legal", s->above_legal},
      {"mean_norm", s->mean_norm},     {"stddev_norm", s->stddev_norm},
      {"min_norm", s->min_norm},       {"max_norm", s->max_norm},
      {"median_norm", s->median_norm},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(more); i++) {
    fprintf(out, ",\"%s\":", more[i].key);
    lhp_json_number(out, more[i].value);
  }
  fputs(",\"percentiles\":{", out);
  for (int i = 0; i < w->n_percentiles; i++)
    fprintf(out, "%s\"%s\":%" PRIu32, i ? "," : "", w->keys[i], s->percentile_value[i]);
  fputs("},\"percentiles_norm\":{", out);
  for (int i = 0; i < w->n_percentiles; i++) {
    fprintf(out, "%s\"%s\":", i ? "," : "", w->keys[i]);
    lhp_json_number(out, s->percentile_norm[i]);
  }
  fputc('}', out);
  if (v) {
    fputs(",\"diff\":", out);
    lhp_json_number(out, v->diff);
    fputs(",\"cut_distance\":", out);
    lhp_json_number(out, v->cut_distance);
    fprintf(out, ",\"scene_cut\":%s,\"black\":%s,\"frozen\":%s,\"out_of_legal\":",
            v->scene_cut ? "true" : "false", v->black ? "true" : "false",
            v->frozen ? "true" : "false");
    lhp_json_number(out, v->out_of_legal);
    fputs(",\"flicker\":", out);
    lhp_json_number(out, v->flicker);
    fprintf(out,
            ",\"signalstats_low\":%" PRIu32 ",\"signalstats_high\":%" PRIu32
            ",\"decode_warning\":%s",
            v->signalstats_low, v->signalstats_high, v->decode_warning ? "true" : "false");
  }
  if (w->with_histogram) {
    fputs(",\"histogram\":[", out);
    lhp_write_counts(out, s->histogram, s->n_bins, ',');
    fputc(']', out);
  }
  fputs("}\n", out);
}

/* ------------------------------------------------------------------------ */
/* CSV                                                                       */

static void csv_string(FILE *out, const char *text)
{
  size_t n = strlen(text);
  bool quote =
      strpbrk(text, ",\"\r\n") != NULL || (n > 0 && (text[0] == ' ' || text[n - 1] == ' '));
  if (!quote) {
    fputs(text, out);
    return;
  }
  fputc('"', out);
  for (const char *c = text; *c; c++) {
    if (*c == '"')
      fputc('"', out);
    fputc(*c, out);
  }
  fputc('"', out);
}

static void csv_double(FILE *out, double value)
{
  fputc(',', out);
  if (isfinite(value))
    fprintf(out, "%.17g", value);
}

static void write_csv(LhtWriter *w, const LhtRecord *r)
{
  FILE *out = w->out;
  const LhStats *s = r->stats;
  const LhpFrameFields *v = r->video;
  csv_string(out, r->path);
  fprintf(out, ",%d,%d,%d,%s,%s,%s,", r->width, r->height, s->bit_depth,
          lh_matrix_name(s->matrix), lh_range_name(s->range), lh_backend_name(r->backend));
  csv_string(out, v ? v->decoder : lhio_decoder_name(r->decoder));
  fprintf(out, ",%s,%" PRIu64, r->converted_from ? r->converted_from : "", s->count);
  csv_double(out, s->mean);
  csv_double(out, s->stddev);
  fprintf(out, ",%" PRIu32 ",%" PRIu32 ",%" PRIu32, s->min, s->max, s->median);
  const double reals[] = {s->clipped_low, s->clipped_high, s->below_legal,
                          s->above_legal, s->mean_norm,    s->stddev_norm,
                          s->min_norm,    s->max_norm,     s->median_norm};
  for (size_t i = 0; i < G_N_ELEMENTS(reals); i++)
    csv_double(out, reals[i]);
  for (int i = 0; i < w->n_percentiles; i++)
    fprintf(out, ",%" PRIu32, s->percentile_value[i]);
  for (int i = 0; i < w->n_percentiles; i++)
    csv_double(out, s->percentile_norm[i]);
  if (w->with_video && v) {
    fprintf(out, ",%" PRIu64, v->frame);
    csv_double(out, v->pts);
    csv_double(out, v->duration);
    fprintf(out, ",%s", v->keyframe < 0 ? "" : v->keyframe ? "1" : "0");
    csv_double(out, v->diff);
    csv_double(out, v->cut_distance);
    fprintf(out, ",%d,%d,%d", v->scene_cut, v->black, v->frozen);
    csv_double(out, v->out_of_legal);
    csv_double(out, v->flicker);
    fprintf(out, ",%" PRIu32 ",%" PRIu32 ",%d", v->signalstats_low, v->signalstats_high,
            v->decode_warning);
  } else if (w->with_video) {
    fputs(",,,,,,,,,,,,,,", out);
  }
  if (w->with_histogram) {
    fputc(',', out);
    lhp_write_counts(out, s->histogram, s->n_bins, ' ');
  }
  fputc('\n', out);
}

/* ------------------------------------------------------------------------ */
/* Table                                                                     */

static void write_table(LhtWriter *w, const LhtRecord *r)
{
  FILE *out = w->out;
  const LhStats *s = r->stats;
  char *path = table_path(r->path);
  if (r->video) {
    /* Its frames told apart by their number, as the records' "frame". */
    char *numbered = g_strdup_printf("%s #%" PRIu64, path, r->video->frame);
    g_free(path);
    path = numbered;
  }
  char size[32];
  snprintf(size, sizeof size, "%dx%d", r->width, r->height);
  int pad = w->path_width - display_width(path);
  fprintf(out, "%s%*s  %*s  %*.2f  %*.2f  %*" PRIu32 "  %*" PRIu32 "  %*" PRIu32, path,
          pad > 0 ? pad : 0, "", TABLE_SIZE_WIDTH, size, TABLE_REAL_WIDTH, s->mean,
          TABLE_REAL_WIDTH, s->stddev, TABLE_CODE_WIDTH, s->min, TABLE_CODE_WIDTH, s->median,
          TABLE_CODE_WIDTH, s->max);
  for (int i = 0; i < w->n_percentiles; i++)
    fprintf(out, "  %*" PRIu32, w->percentile_widths[i], s->percentile_value[i]);
  fputc('\n', out);
  g_free(path);
}

void lht_writer_record(LhtWriter *writer, const LhtRecord *record)
{
  switch (writer->format) {
  case LHT_FORMAT_JSONL:
    write_jsonl(writer, record);
    break;
  case LHT_FORMAT_CSV:
    write_csv(writer, record);
    break;
  case LHT_FORMAT_TABLE:
    write_table(writer, record);
    break;
  }
}

bool lht_writer_finish(LhtWriter *writer)
{
  bool ok = fflush(writer->out) == 0 && !ferror(writer->out);
  g_free(writer);
  return ok;
}
