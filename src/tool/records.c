/* records.c: reads back the JSON Lines records that `lumahist stats` writes,
 * for `lumahist merge` (its sums and its report, video sections included)
 * and for resuming a run (--skip-existing), keeping only the fields those
 * need: a small strict JSON reader that takes the histogram's counts as exact
 * 64-bit integers and the other numbers as the doubles they were written
 * from (%.17g). */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "lht-batch.h"

/* Objects and arrays nest this deep at most in anything worth reading. */
#define MAX_DEPTH 32

typedef struct {
  const char *start;
  const char *at;
  const char *end;
  char *error;
} Cursor;

static bool fail(Cursor *c, const char *what)
{
  if (!c->error)
    c->error = g_strdup_printf("%s at column %ld", what, (long)(c->at - c->start) + 1);
  return false;
}

static void skip_space(Cursor *c)
{
  while (c->at < c->end && (*c->at == ' ' || *c->at == '\t' || *c->at == '\r' || *c->at == '\n'))
    c->at++;
}

static bool expect(Cursor *c, char ch)
{
  skip_space(c);
  if (c->at >= c->end || *c->at != ch) {
    char what[32];
    snprintf(what, sizeof what, "expected '%c'", ch);
    return fail(c, what);
  }
  c->at++;
  return true;
}

static bool literal(Cursor *c, const char *word)
{
  size_t n = strlen(word);
  if ((size_t)(c->end - c->at) < n || memcmp(c->at, word, n) != 0)
    return fail(c, "unexpected value");
  c->at += n;
  return true;
}

static int hex_digit(char ch)
{
  return g_ascii_xdigit_value(ch);
}

static bool read_hex4(Cursor *c, gunichar *value)
{
  if (c->end - c->at < 4)
    return fail(c, "short \\u escape");
  *value = 0;
  for (int i = 0; i < 4; i++) {
    int d = hex_digit(c->at[i]);
    if (d < 0)
      return fail(c, "bad \\u escape");
    *value = *value * 16 + (gunichar)d;
  }
  c->at += 4;
  return true;
}

/* A string into out (when not NULL), escapes decoded to UTF-8. */
static bool read_string(Cursor *c, GString *out)
{
  if (!expect(c, '"'))
    return false;
  while (c->at < c->end) {
    char ch = *c->at++;
    if (ch == '"')
      return true;
    if ((unsigned char)ch < 0x20)
      return fail(c, "control character in a string");
    if (ch != '\\') {
      if (out)
        g_string_append_c(out, ch);
      continue;
    }
    if (c->at >= c->end)
      break;
    ch = *c->at++;
    gunichar u;
    switch (ch) {
    case '"':
    case '\\':
    case '/':
      u = (gunichar)ch;
      break;
    case 'b':
      u = '\b';
      break;
    case 'f':
      u = '\f';
      break;
    case 'n':
      u = '\n';
      break;
    case 'r':
      u = '\r';
      break;
    case 't':
      u = '\t';
      break;
    case 'u':
      if (!read_hex4(c, &u))
        return false;
      if (u >= 0xd800 && u < 0xdc00) {
        gunichar low;
        if (c->end - c->at < 6 || c->at[0] != '\\' || c->at[1] != 'u')
          return fail(c, "lone surrogate");
        c->at += 2;
        if (!read_hex4(c, &low) || low < 0xdc00 || low > 0xdfff)
          return fail(c, "bad surrogate pair");
        u = 0x10000 + ((u - 0xd800) << 10) + (low - 0xdc00);
      } else if (u >= 0xdc80 && u <= 0xdcff) {
        /* A byte of a file name that is not UTF-8, as json.c writes it. */
        if (out)
          g_string_append_c(out, (char)(u - 0xdc00));
        continue;
      } else if (u >= 0xdc00 && u < 0xe000) {
        return fail(c, "lone surrogate");
      }
      break;
    default:
      return fail(c, "bad escape");
    }
    if (out)
      g_string_append_unichar(out, u);
  }
  return fail(c, "unterminated string");
}

static bool read_number_text(Cursor *c, const char **start, size_t *length)
{
  skip_space(c);
  const char *s = c->at;
  if (c->at < c->end && *c->at == '-')
    c->at++;
  const char *digits = c->at;
  while (c->at < c->end && g_ascii_isdigit(*c->at))
    c->at++;
  if (c->at == digits)
    return fail(c, "expected a number");
  if (c->at < c->end && *c->at == '.') {
    c->at++;
    while (c->at < c->end && g_ascii_isdigit(*c->at))
      c->at++;
  }
  if (c->at < c->end && (*c->at == 'e' || *c->at == 'E')) {
    c->at++;
    if (c->at < c->end && (*c->at == '+' || *c->at == '-'))
      c->at++;
    while (c->at < c->end && g_ascii_isdigit(*c->at))
      c->at++;
  }
  *start = s;
  *length = (size_t)(c->at - s);
  return true;
}

/* A non-negative integer, exact up to 2^64 - 1. */
static bool read_uint64(Cursor *c, guint64 *value)
{
  skip_space(c);
  const char *s = c->at;
  guint64 v = 0;
  while (c->at < c->end && g_ascii_isdigit(*c->at)) {
    guint digit = (guint)(*c->at - '0');
    if (v > (G_MAXUINT64 - digit) / 10)
      return fail(c, "integer too large");
    v = v * 10 + digit;
    c->at++;
  }
  if (c->at == s || (c->at < c->end && (*c->at == '.' || *c->at == 'e' || *c->at == 'E')))
    return fail(c, "expected a non-negative integer");
  *value = v;
  return true;
}

static bool read_int(Cursor *c, int *value)
{
  guint64 v;
  if (!read_uint64(c, &v))
    return false;
  if (v > G_MAXINT)
    return fail(c, "integer too large");
  *value = (int)v;
  return true;
}

static bool skip_value(Cursor *c, int depth)
{
  if (depth > MAX_DEPTH)
    return fail(c, "nested too deep");
  skip_space(c);
  if (c->at >= c->end)
    return fail(c, "expected a value");
  switch (*c->at) {
  case '"':
    return read_string(c, NULL);
  case 't':
    return literal(c, "true");
  case 'f':
    return literal(c, "false");
  case 'n':
    return literal(c, "null");
  case '[':
    c->at++;
    skip_space(c);
    if (c->at < c->end && *c->at == ']') {
      c->at++;
      return true;
    }
    do {
      if (!skip_value(c, depth + 1))
        return false;
      skip_space(c);
    } while (c->at < c->end && *c->at == ',' && c->at++);
    return expect(c, ']');
  case '{':
    c->at++;
    skip_space(c);
    if (c->at < c->end && *c->at == '}') {
      c->at++;
      return true;
    }
    do {
      if (!read_string(c, NULL) || !expect(c, ':') || !skip_value(c, depth + 1))
        return false;
      skip_space(c);
    } while (c->at < c->end && *c->at == ',' && c->at++);
    return expect(c, '}');
  default: {
    const char *start;
    size_t length;
    return read_number_text(c, &start, &length);
  }
  }
}

/* A number, or null as NAN. */
static bool read_double(Cursor *c, double *value)
{
  skip_space(c);
  if (c->at < c->end && *c->at == 'n') {
    *value = NAN;
    return literal(c, "null");
  }
  const char *start;
  size_t length;
  if (!read_number_text(c, &start, &length))
    return false;
  char text[64];
  if (length >= sizeof text)
    return fail(c, "number too long");
  memcpy(text, start, length);
  text[length] = '\0';
  *value = g_ascii_strtod(text, NULL);
  return true;
}

static bool read_bool(Cursor *c, bool *value)
{
  skip_space(c);
  *value = c->at < c->end && *c->at == 't';
  return literal(c, *value ? "true" : "false");
}

/* A string, or null as NULL, into *out (its old value freed). */
static bool read_string_or_null(Cursor *c, char **out)
{
  skip_space(c);
  g_clear_pointer(out, g_free);
  if (c->at < c->end && *c->at == 'n')
    return literal(c, "null");
  GString *text = g_string_new(NULL);
  bool ok = read_string(c, text);
  *out = g_string_free(text, !ok);
  return ok;
}

/* Calls field(c, key, data) for each member of an object; the value is
 * field's to read (or skip). */
typedef bool (*FieldFunc)(Cursor *c, const char *key, void *data);

static bool read_object(Cursor *c, FieldFunc field, void *data)
{
  if (!expect(c, '{'))
    return false;
  skip_space(c);
  if (c->at < c->end && *c->at == '}') {
    c->at++;
    return true;
  }
  do {
    GString *key = g_string_new(NULL);
    bool ok = read_string(c, key) && expect(c, ':') && field(c, key->str, data);
    g_string_free(key, TRUE);
    if (!ok)
      return false;
    skip_space(c);
  } while (c->at < c->end && *c->at == ',' && c->at++);
  return expect(c, '}');
}

/* Calls element(c, data) for each element of an array. */
static bool read_array(Cursor *c, bool (*element)(Cursor *c, void *data), void *data)
{
  if (!expect(c, '['))
    return false;
  skip_space(c);
  if (c->at < c->end && *c->at == ']') {
    c->at++;
    return true;
  }
  do {
    if (!element(c, data))
      return false;
    skip_space(c);
  } while (c->at < c->end && *c->at == ',' && c->at++);
  return expect(c, ']');
}

/* One statistic of "frame_stats": {"min", "max", "mean"}. */
typedef struct {
  double min, max, mean;
} FrameRange;

static bool range_field(Cursor *c, const char *key, void *data)
{
  FrameRange *r = data;
  if (strcmp(key, "min") == 0)
    return read_double(c, &r->min);
  if (strcmp(key, "max") == 0)
    return read_double(c, &r->max);
  if (strcmp(key, "mean") == 0)
    return read_double(c, &r->mean);
  return skip_value(c, 2);
}

static bool frame_stats_field(Cursor *c, const char *key, void *data)
{
  LhtParsedRecord *r = data;
  FrameRange range = {NAN, NAN, NAN};
  if (strcmp(key, "mean") == 0) {
    if (!read_object(c, range_field, &range))
      return false;
    r->mean_min = range.min;
    r->mean_mean = range.mean;
    r->mean_max = range.max;
    return true;
  }
  if (strcmp(key, "flicker") == 0) {
    if (!read_object(c, range_field, &range))
      return false;
    r->flicker_max = range.max;
    return true;
  }
  return skip_value(c, 2);
}

static bool span_field(Cursor *c, const char *key, void *data)
{
  LhpVideoSpan *span = data;
  if (strcmp(key, "start") == 0)
    return read_double(c, &span->start);
  if (strcmp(key, "end") == 0)
    return read_double(c, &span->end);
  if (strcmp(key, "first_frame") == 0)
    return read_uint64(c, &span->first_frame);
  if (strcmp(key, "frames") == 0)
    return read_uint64(c, &span->frames);
  return skip_value(c, 3);
}

static bool span_element(Cursor *c, void *data)
{
  LhpVideoSpan span = {NAN, NAN, 0, 0};
  if (!read_object(c, span_field, &span))
    return false;
  g_array_append_val((GArray *)data, span);
  return true;
}

static bool cut_element(Cursor *c, void *data)
{
  double pts;
  if (!read_double(c, &pts))
    return false;
  (*(guint *)data)++;
  return true;
}

static bool read_short_string(Cursor *c, char *out, size_t size)
{
  GString *text = g_string_new(NULL);
  bool ok = read_string(c, text);
  if (ok && text->len >= size)
    ok = fail(c, "unexpected value");
  if (ok)
    memcpy(out, text->str, text->len + 1);
  g_string_free(text, TRUE);
  return ok;
}

static bool read_keys(Cursor *c, GPtrArray *keys)
{
  if (!expect(c, '{'))
    return false;
  skip_space(c);
  if (c->at < c->end && *c->at == '}') {
    c->at++;
    return true;
  }
  do {
    GString *key = g_string_new(NULL);
    if (!read_string(c, key) || !expect(c, ':') || !skip_value(c, 1)) {
      g_string_free(key, TRUE);
      return false;
    }
    g_ptr_array_add(keys, g_string_free(key, FALSE));
    skip_space(c);
  } while (c->at < c->end && *c->at == ',' && c->at++);
  return expect(c, '}');
}

static bool read_counts(Cursor *c, GArray *counts)
{
  if (!expect(c, '['))
    return false;
  skip_space(c);
  if (c->at < c->end && *c->at == ']') {
    c->at++;
    return true;
  }
  do {
    guint64 v;
    if (!read_uint64(c, &v))
      return false;
    g_array_append_val(counts, v);
    skip_space(c);
  } while (c->at < c->end && *c->at == ',' && c->at++);
  return expect(c, ']');
}

static bool read_field(Cursor *c, const char *key, LhtParsedRecord *r)
{
  skip_space(c);
  if (strcmp(key, "path") == 0) {
    if (c->at < c->end && *c->at == 'n')
      return literal(c, "null");
    GString *path = g_string_new(NULL);
    bool ok = read_string(c, path);
    g_free(r->path);
    r->path = g_string_free(path, !ok);
    return ok;
  }
  if (strcmp(key, "dataset") == 0) {
    if (c->at < c->end && *c->at == 't') {
      r->dataset = true;
      return literal(c, "true");
    }
    r->dataset = false;
    return literal(c, "false");
  }
  if (strcmp(key, "frame") == 0) {
    r->video_frame = true;
    return read_uint64(c, &r->frame);
  }
  if (strcmp(key, "summary") == 0) {
    if (c->at < c->end && *c->at == 't') {
      r->video_summary = true;
      return literal(c, "true");
    }
    return literal(c, "false");
  }
  if (strcmp(key, "width") == 0)
    return read_int(c, &r->width);
  if (strcmp(key, "height") == 0)
    return read_int(c, &r->height);
  if (strcmp(key, "bit_depth") == 0)
    return read_int(c, &r->bit_depth);
  /* A name the tool never writes (a hand-edited record) would be summed
   * under the run's matrix or range, unseen. */
  LhMatrix matrix;
  LhRange range;
  if (strcmp(key, "matrix") == 0)
    return read_short_string(c, r->matrix, sizeof r->matrix) &&
           (lh_matrix_from_name(r->matrix, &matrix) == LH_OK || fail(c, "an unknown matrix"));
  if (strcmp(key, "range") == 0)
    return read_short_string(c, r->range, sizeof r->range) &&
           (lh_range_from_name(r->range, &range) == LH_OK || fail(c, "an unknown range"));
  if (strcmp(key, "percentiles") == 0) {
    g_ptr_array_set_size(r->percentile_keys, 0);
    return read_keys(c, r->percentile_keys);
  }
  if (strcmp(key, "histogram") == 0) {
    g_array_set_size(r->histogram, 0);
    return read_counts(c, r->histogram);
  }
  if (strcmp(key, "clipped_low") == 0)
    return read_double(c, &r->clipped_low);
  if (strcmp(key, "clipped_high") == 0)
    return read_double(c, &r->clipped_high);
  if (strcmp(key, "pts") == 0)
    return read_double(c, &r->pts);
  if (strcmp(key, "diff") == 0)
    return read_double(c, &r->diff);
  if (strcmp(key, "out_of_legal") == 0)
    return read_double(c, &r->out_of_legal);
  if (strcmp(key, "scene_cut") == 0)
    return read_bool(c, &r->scene_cut);
  if (strcmp(key, "frames") == 0)
    return read_uint64(c, &r->frames);
  if (strcmp(key, "images") == 0)
    return read_uint64(c, &r->images);
  if (strcmp(key, "count") == 0)
    return read_uint64(c, &r->count);
  if (strcmp(key, "duration") == 0)
    return read_double(c, &r->duration);
  if (strcmp(key, "decoder") == 0)
    return read_string_or_null(c, &r->decoder);
  if (strcmp(key, "error") == 0)
    return read_string_or_null(c, &r->error);
  if (strcmp(key, "frame_stats") == 0)
    return read_object(c, frame_stats_field, r);
  if (strcmp(key, "cuts") == 0) {
    r->n_cuts = 0;
    return read_array(c, cut_element, &r->n_cuts);
  }
  if (strcmp(key, "black") == 0 || strcmp(key, "frozen") == 0) {
    GArray *spans = key[0] == 'b' ? r->black : r->frozen;
    /* A frame's record has "black" too: a flag, not spans. */
    skip_space(c);
    if (c->at < c->end && *c->at != '[')
      return skip_value(c, 1);
    g_array_set_size(spans, 0);
    return read_array(c, span_element, spans);
  }
  return skip_value(c, 1);
}

void lht_parsed_record_init(LhtParsedRecord *r)
{
  memset(r, 0, sizeof *r);
  r->percentile_keys = g_ptr_array_new_with_free_func(g_free);
  r->histogram = g_array_new(FALSE, FALSE, sizeof(guint64));
  r->black = g_array_new(FALSE, FALSE, sizeof(LhpVideoSpan));
  r->frozen = g_array_new(FALSE, FALSE, sizeof(LhpVideoSpan));
}

void lht_parsed_record_clear(LhtParsedRecord *r)
{
  g_free(r->path);
  g_free(r->decoder);
  g_free(r->error);
  if (r->percentile_keys)
    g_ptr_array_free(r->percentile_keys, TRUE);
  if (r->histogram)
    g_array_free(r->histogram, TRUE);
  if (r->black)
    g_array_free(r->black, TRUE);
  if (r->frozen)
    g_array_free(r->frozen, TRUE);
  memset(r, 0, sizeof *r);
}

static void reset_record(LhtParsedRecord *r)
{
  g_clear_pointer(&r->path, g_free);
  g_clear_pointer(&r->decoder, g_free);
  g_clear_pointer(&r->error, g_free);
  r->dataset = false;
  r->video_frame = r->video_summary = false;
  r->width = r->height = r->bit_depth = 0;
  r->matrix[0] = r->range[0] = '\0';
  g_ptr_array_set_size(r->percentile_keys, 0);
  g_array_set_size(r->histogram, 0);
  r->clipped_low = r->clipped_high = NAN;
  r->count = 0;
  r->images = 0;
  r->frame = 0;
  r->pts = r->diff = r->out_of_legal = NAN;
  r->scene_cut = false;
  r->frames = 0;
  r->duration = NAN;
  r->mean_min = r->mean_mean = r->mean_max = r->flicker_max = NAN;
  r->n_cuts = 0;
  g_array_set_size(r->black, 0);
  g_array_set_size(r->frozen, 0);
}

char *lht_record_path_key(const char *path)
{
  return g_canonicalize_filename(path, NULL);
}

bool lht_record_parse(const char *line, size_t length, LhtParsedRecord *r, char **error)
{
  reset_record(r);
  Cursor c = {line, line, line + length, NULL};
  bool ok = expect(&c, '{');
  skip_space(&c);
  if (ok && c.at < c.end && *c.at == '}') {
    c.at++;
  } else {
    while (ok) {
      GString *key = g_string_new(NULL);
      ok = read_string(&c, key) && expect(&c, ':') && read_field(&c, key->str, r);
      g_string_free(key, TRUE);
      skip_space(&c);
      if (!ok || c.at >= c.end || *c.at != ',')
        break;
      c.at++;
    }
    ok = ok && expect(&c, '}');
  }
  skip_space(&c);
  if (ok && c.at != c.end)
    ok = fail(&c, "text after the record");
  if (ok && !r->dataset && !r->path)
    ok = fail(&c, "a record without a path");
  if (ok && r->histogram->len > 0 &&
      (r->bit_depth < 8 || r->bit_depth > 16 || r->histogram->len != (1u << r->bit_depth)))
    ok = fail(&c, "the histogram does not have 2^bit_depth counts");
  if (!ok) {
    *error = c.error ? c.error : g_strdup("malformed record");
    return false;
  }
  return true;
}

/* Malformed lines, with no record before them, after which a file read for
 * merge is given up as not records at all. */
#define BAD_LINES_AT_MOST 10

bool lht_records_read(FILE *in, const char *name, LhtRecordFunc func, void *data,
                      off_t *complete_end)
{
  bool ok = true;
  char *line = NULL;
  size_t capacity = 0;
  ssize_t n;
  off_t offset = 0;
  guint64 line_number = 0, records = 0, bad_lines = 0;
  LhtParsedRecord record;
  lht_parsed_record_init(&record);
  while ((n = getline(&line, &capacity, in)) > 0) {
    /* A file that is no records at all (an image given by mistake, a CSV
     * output named for --skip-existing) gets a line, not one for each of
     * its million lines.  A resumed file is otherwise read to its end,
     * since what follows decides where it is cut, but one with a line that
     * is not a record is refused whatever follows. */
    if (records == 0 && bad_lines == BAD_LINES_AT_MOST) {
      lht_error(name,
                "not lumahist records: none of its first %d lines is one; the rest is "
                "not read",
                BAD_LINES_AT_MOST);
      break;
    }
    line_number++;
    bool terminated = line[n - 1] == '\n';
    if (!terminated && complete_end)
      break;
    size_t length = (size_t)n - (terminated ? 1 : 0);
    /* A byte-order mark that an editor (Windows' Notepad) put before the
     * first record: invisible there, it is no part of JSON. */
    const char *text = line;
    if (line_number == 1 && length >= 3 && memcmp(line, "\xef\xbb\xbf", 3) == 0) {
      text += 3;
      length -= 3;
    }
    /* The header of the tool's own CSV: one line saying so, not ten that
     * only say its lines are not JSON. */
    static const char csv_header[] = "path,width,height,bit_depth,";
    if (line_number == 1 && length >= sizeof csv_header - 1 &&
        memcmp(text, csv_header, sizeof csv_header - 1) == 0) {
      lht_error(name, "CSV records (--format csv): only JSON Lines records (--format jsonl) can "
                      "be read back");
      ok = false;
      break;
    }
    const char *c = text;
    while (c < text + length && g_ascii_isspace(*c))
      c++;
    if (c < text + length) {
      char *error = NULL;
      if (lht_record_parse(text, length, &record, &error)) {
        records++;
        if (!func(&record, line_number, offset, data)) {
          offset += n;
          break;
        }
      } else {
        char *where = g_strdup_printf("%s:%" G_GUINT64_FORMAT, name, line_number);
        /* A last line with no end that is no record: the file was cut (an
         * interrupted run, a copy not finished), which its parse error
         * ("expected ']' at column 1160") did not say. */
        if (!terminated)
          lht_error(where, "an incomplete last line, cut short (%s)", error);
        else
          lht_error(where, "%s", error);
        g_free(where);
        g_free(error);
        bad_lines++;
        ok = false;
      }
    }
    offset += n;
  }
  if (ferror(in)) {
    /* A read ended by a caught stop signal (lht_stoppable_stream) is not
     * the file's fault: the caller says the run was stopped. */
    if (!*lhp_pipeline_stop_flag())
      lht_error(name, "%s", g_strerror(errno));
    ok = false;
  }
  if (complete_end)
    *complete_end = offset;
  free(line);
  lht_parsed_record_clear(&record);
  return ok;
}

char *lht_path_shown(const char *path)
{
  GString *out = g_string_new(NULL);
  size_t left = strlen(path);
  const char *end;
  while (!g_utf8_validate(path, (gssize)left, &end)) {
    g_string_append_len(out, path, end - path);
    g_string_append(out, "\xef\xbf\xbd");
    left -= (size_t)(end - path) + 1;
    path = end + 1;
  }
  g_string_append_len(out, path, (gssize)left);
  return g_string_free(out, FALSE);
}
