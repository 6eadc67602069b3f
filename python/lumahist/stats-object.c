/* stats-object.c: the result of lumahist.stats as a C object over the
 * LhStats that the library filled (stats-object.h).  Building the record's
 * fields as Python objects for every call, and the histogram's copy, was
 * most of what a call on a small frame or on the GPU cost beyond the
 * library's: here a field becomes a Python object only when it is read.
 *
 * The fields behave as the plain attributes they were: assigning one
 * stores the value in the instance's __dict__, where it hides the library's
 * value, and an instance pickles and copies.  They are data descriptors
 * that look in that __dict__ first, not non-data ones that Python looks
 * past: pydoc shows the docstrings of data descriptors alone. */
#include "stats-object.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

/* The fields, in the order of the tool's records, then the rest. */
typedef enum {
  FIELD_WIDTH,
  FIELD_HEIGHT,
  FIELD_BIT_DEPTH,
  FIELD_MATRIX,
  FIELD_RANGE,
  FIELD_BACKEND,
  FIELD_COUNT,
  FIELD_MEAN,
  FIELD_STDDEV,
  FIELD_MIN,
  FIELD_MAX,
  FIELD_MEDIAN,
  FIELD_CLIPPED_LOW,
  FIELD_CLIPPED_HIGH,
  FIELD_BELOW_LEGAL,
  FIELD_ABOVE_LEGAL,
  FIELD_MEAN_NORM,
  FIELD_STDDEV_NORM,
  FIELD_MIN_NORM,
  FIELD_MAX_NORM,
  FIELD_MEDIAN_NORM,
  FIELD_PERCENTILES,
  FIELD_PERCENTILES_NORM,
  FIELD_HISTOGRAM,
  FIELD_PATH,
  FIELD_DECODER,
  FIELD_CONVERTED_FROM,
  /* A video frame's, in the order of its record (VideoFrame's only). */
  FIELD_FRAME,
  FIELD_PTS,
  FIELD_DURATION,
  FIELD_KEYFRAME,
  FIELD_DIFF,
  FIELD_CUT_DISTANCE,
  FIELD_SCENE_CUT,
  FIELD_BLACK,
  FIELD_FROZEN,
  FIELD_OUT_OF_LEGAL,
  FIELD_FLICKER,
  FIELD_SIGNALSTATS_LOW,
  FIELD_SIGNALSTATS_HIGH,
  FIELD_DECODE_WARNING,
  FIELD_TOTAL,
} Field;

#define FIELD_FIRST_OF_FRAME FIELD_FRAME

/* Each field's name and what help() says of it: its meaning, unit and
 * range as README's "Fields of a record" and "Video files" define them. */
static const struct {
  const char *name;
  const char *doc;
} fields[FIELD_TOTAL] = {
    [FIELD_WIDTH] = {"width", "The image's (or frame's) width in pixels; None for DatasetStats."},
    [FIELD_HEIGHT] = {"height",
                      "The image's (or frame's) height in pixels; None for DatasetStats."},
    [FIELD_BIT_DEPTH] = {"bit_depth",
                         "Significant bits of the luma code values, 8 .. 16 (the format's: 10 "
                         "for P010, 16 for a 16-bit PNG); the histogram has 2^bit_depth bins."},
    [FIELD_MATRIX] = {"matrix", "The R'G'B' to luma weights used: 'bt601', 'bt709' or 'bt2020' "
                                "(gray and YUV luma is the sample itself)."},
    [FIELD_RANGE] = {"range",
                     "How code values were read: 'full', or 'limited' (black 16 and white 235 at "
                     "8 bits, times 2^(bit_depth - 8)); the *_norm values and below_legal and "
                     "above_legal follow it."},
    [FIELD_BACKEND] = {"backend", "Where it was analysed: 'cpu' or 'cuda'; None for DatasetStats."},
    [FIELD_COUNT] = {"count", "Pixels analysed."},
    [FIELD_MEAN] = {"mean", "Mean luma, in code values (0 .. 2^bit_depth - 1)."},
    [FIELD_STDDEV] = {"stddev", "Population standard deviation of the luma, in code values."},
    [FIELD_MIN] = {"min", "Lowest luma code value."},
    [FIELD_MAX] = {"max", "Highest luma code value."},
    [FIELD_MEDIAN] = {"median", "Median luma code value: the nearest-rank P(50), the smallest "
                                "value v with count(<= v) >= ceil(count / 2)."},
    [FIELD_CLIPPED_LOW] = {"clipped_low", "Fraction (0 .. 1) of the pixels at code value 0."},
    [FIELD_CLIPPED_HIGH] = {"clipped_high",
                            "Fraction (0 .. 1) of the pixels at code value 2^bit_depth - 1."},
    [FIELD_BELOW_LEGAL] = {"below_legal",
                           "Limited range: fraction (0 .. 1) of the pixels below black (16 at 8 "
                           "bits, scaled to the depth); 0 for full range."},
    [FIELD_ABOVE_LEGAL] = {"above_legal",
                           "Limited range: fraction (0 .. 1) of the pixels above white (235 at 8 "
                           "bits, scaled to the depth); 0 for full range."},
    [FIELD_MEAN_NORM] = {"mean_norm", "mean mapped to the declared range: black 0, white 1 "
                                      "(limited-range values outside it fall outside 0 .. 1)."},
    [FIELD_STDDEV_NORM] = {"stddev_norm",
                           "stddev in units of the declared range (white - black is 1)."},
    [FIELD_MIN_NORM] = {"min_norm", "min mapped to the declared range, as mean_norm."},
    [FIELD_MAX_NORM] = {"max_norm", "max mapped to the declared range, as mean_norm."},
    [FIELD_MEDIAN_NORM] = {"median_norm", "median mapped to the declared range, as mean_norm."},
    [FIELD_PERCENTILES] = {"percentiles",
                           "{p: code value}: the nearest-rank percentile P(p) of the luma for "
                           "each p asked for (0 .. 100), in the order asked; P(0) is min."},
    [FIELD_PERCENTILES_NORM] = {"percentiles_norm",
                                "{p: value}: each percentile mapped to the declared range, as "
                                "mean_norm."},
    [FIELD_HISTOGRAM] = {"histogram", "The luma histogram: a read-only NumPy array of "
                                      "2^bit_depth uint64 counts, one per code value."},
    [FIELD_PATH] = {"path", "The file's path (stats_files); None for an array."},
    [FIELD_DECODER] = {"decoder",
                       "What decoded the file: 'libjpeg-turbo', 'libpng', 'nvjpeg-hardware' or "
                       "'nvjpeg-gpu' for an image, the GStreamer element for a video ('' for "
                       "raw video); None for an array."},
    [FIELD_CONVERTED_FROM] = {"converted_from",
                              "'CMYK' or 'YCCK' for a JPEG whose pixels were converted from that "
                              "colour space to R'G'B'; None otherwise."},
    [FIELD_FRAME] = {"frame", "The frame's index among the decoded frames from start on."},
    [FIELD_PTS] = {"pts", "The frame's presentation time, seconds, as GStreamer gives it; None "
                          "when unknown."},
    [FIELD_DURATION] = {"duration", "The frame's duration, seconds; None when unknown."},
    [FIELD_KEYFRAME] = {"keyframe", "Whether the decoder's input was a sync point, as the parser "
                                    "flagged it; None when there is no decoder."},
    [FIELD_DIFF] = {"diff",
                    "Mean absolute difference of the luma with the previous record's frame, in "
                    "code values (FFmpeg's YDIF); None for the first and for R'G'B' frames."},
    [FIELD_CUT_DISTANCE] = {"cut_distance",
                            "Histogram distance to the previous record's frame (total variation "
                            "distance of the histograms folded to 32 bins), 0 .. 1; None for "
                            "the first."},
    [FIELD_SCENE_CUT] = {"scene_cut", "Whether cut_distance is above cut_threshold."},
    [FIELD_BLACK] = {"black",
                     "Whether at least 98 % of the pixels are at or below black + 10 % of "
                     "(white - black) of the declared range (FFmpeg blackdetect's defaults)."},
    [FIELD_FROZEN] = {"frozen", "Whether diff is at most 0.1 % of the code range "
                                "(2^bit_depth - 1; FFmpeg freezedetect's default noise)."},
    [FIELD_OUT_OF_LEGAL] = {"out_of_legal",
                            "Fraction (0 .. 1) of the pixels below 16 or above 235 (times "
                            "2^(bit_depth - 8)), whatever the declared range."},
    [FIELD_FLICKER] = {"flicker",
                       "Standard deviation of the frame means (mean) over the last second of "
                       "stream time, the frames with pts in (pts - 1 s, pts] (the last 25 "
                       "frames without timestamps), in code values."},
    [FIELD_SIGNALSTATS_LOW] = {"signalstats_low",
                               "FFmpeg signalstats' YLOW: the smallest code value v with "
                               "count(<= v) >= lrint(count * 10 / 100)."},
    [FIELD_SIGNALSTATS_HIGH] = {"signalstats_high",
                                "FFmpeg signalstats' YHIGH: the smallest code value v with "
                                "count(<= v) >= lrint(count * 90 / 100)."},
    [FIELD_DECODE_WARNING] = {"decode_warning",
                              "Whether the decoder flagged the frame corrupted or warned before "
                              "it."},
};

static PyTypeObject stats_base_type;

/* The classes calls make instances of, by StatsKind (the package's Stats,
 * DatasetStats, VideoFrame and VideoSummary); the base type itself until
 * the package registers them. */
static PyTypeObject *result_classes[] = {&stats_base_type, &stats_base_type, &stats_base_type,
                                         &stats_base_type};

/* restore_stats, which pickles name to rebuild an instance. */
static PyObject *restore_function;

/* The library's names of matrices, ranges and backends are static strings:
 * their Python strings are made once. */
static PyObject *name_object(const char *name)
{
  static struct {
    const char *name;
    PyObject *object;
  } cache[16];
  if (!name)
    Py_RETURN_NONE;
  for (size_t i = 0; i < sizeof cache / sizeof cache[0]; i++) {
    if (cache[i].name == name)
      return Py_NewRef(cache[i].object);
    if (!cache[i].name) {
      PyObject *object = PyUnicode_InternFromString(name);
      if (!object)
        return NULL;
      cache[i].name = name;
      cache[i].object = object;
      return Py_NewRef(object);
    }
  }
  return PyUnicode_FromString(name);
}

/* The histogram as a read-only NumPy array of uint64 over a bytes copy, as
 * numpy.frombuffer(bytes, numpy.uint64) makes it. */
static PyObject *histogram_array(const StatsObject *s)
{
  static PyObject *frombuffer, *uint64;
  if (!frombuffer) {
    PyObject *numpy = PyImport_ImportModule("numpy");
    if (!numpy)
      return NULL;
    PyObject *function = PyObject_GetAttrString(numpy, "frombuffer");
    PyObject *type = function ? PyObject_GetAttrString(numpy, "uint64") : NULL;
    Py_DECREF(numpy);
    if (!type) {
      Py_XDECREF(function);
      return NULL;
    }
    frombuffer = function;
    uint64 = type;
  }
  PyObject *bytes = PyBytes_FromStringAndSize((const char *)s->stats.histogram,
                                              (Py_ssize_t)(s->stats.n_bins * sizeof(uint64_t)));
  if (!bytes)
    return NULL;
  PyObject *array = PyObject_CallFunctionObjArgs(frombuffer, bytes, uint64, NULL);
  Py_DECREF(bytes);
  return array;
}

/* {p: value} (norm: {p: normalized value}), in the order asked for. */
static PyObject *percentile_dict(const LhStats *stats, bool norm)
{
  PyObject *dict = PyDict_New();
  for (int i = 0; dict && i < stats->n_percentiles; i++) {
    PyObject *p = PyFloat_FromDouble(stats->percentile_p[i]);
    PyObject *value = norm ? PyFloat_FromDouble(stats->percentile_norm[i])
                           : PyLong_FromUnsignedLong(stats->percentile_value[i]);
    if (!p || !value || PyDict_SetItem(dict, p, value) < 0)
      Py_CLEAR(dict);
    Py_XDECREF(p);
    Py_XDECREF(value);
  }
  return dict;
}

/* An object made once and kept: the same one at every read, as an
 * attribute is. */
static PyObject *kept(PyObject **slot, PyObject *made)
{
  if (!made)
    return NULL;
  *slot = made;
  return Py_NewRef(made);
}

/* A time or measure that a frame may lack (NAN): None then, as its record's null. */
static PyObject *float_or_none(double value)
{
  return isfinite(value) ? PyFloat_FromDouble(value) : Py_NewRef(Py_None);
}

static PyObject *field_value(StatsObject *s, Field field)
{
  const LhStats *st = &s->stats;
  const LhpFrameFields *f = &s->frame;
  switch (field) {
  case FIELD_WIDTH:
    return s->dataset ? Py_NewRef(Py_None) : PyLong_FromLong(s->width);
  case FIELD_HEIGHT:
    return s->dataset ? Py_NewRef(Py_None) : PyLong_FromLong(s->height);
  case FIELD_BIT_DEPTH:
    return PyLong_FromLong(st->bit_depth);
  case FIELD_MATRIX:
    return name_object(lh_matrix_name(st->matrix));
  case FIELD_RANGE:
    return name_object(lh_range_name(st->range));
  case FIELD_BACKEND:
    return s->dataset ? Py_NewRef(Py_None) : name_object(lh_backend_name(s->backend));
  case FIELD_COUNT:
    return PyLong_FromUnsignedLongLong(st->count);
  case FIELD_MEAN:
    return PyFloat_FromDouble(st->mean);
  case FIELD_STDDEV:
    return PyFloat_FromDouble(st->stddev);
  case FIELD_MIN:
    return PyLong_FromUnsignedLong(st->min);
  case FIELD_MAX:
    return PyLong_FromUnsignedLong(st->max);
  case FIELD_MEDIAN:
    return PyLong_FromUnsignedLong(st->median);
  case FIELD_CLIPPED_LOW:
    return PyFloat_FromDouble(st->clipped_low);
  case FIELD_CLIPPED_HIGH:
    return PyFloat_FromDouble(st->clipped_high);
  case FIELD_BELOW_LEGAL:
    return PyFloat_FromDouble(st->below_legal);
  case FIELD_ABOVE_LEGAL:
    return PyFloat_FromDouble(st->above_legal);
  case FIELD_MEAN_NORM:
    return PyFloat_FromDouble(st->mean_norm);
  case FIELD_STDDEV_NORM:
    return PyFloat_FromDouble(st->stddev_norm);
  case FIELD_MIN_NORM:
    return PyFloat_FromDouble(st->min_norm);
  case FIELD_MAX_NORM:
    return PyFloat_FromDouble(st->max_norm);
  case FIELD_MEDIAN_NORM:
    return PyFloat_FromDouble(st->median_norm);
  case FIELD_PERCENTILES:
    return s->percentiles ? Py_NewRef(s->percentiles)
                          : kept(&s->percentiles, percentile_dict(st, false));
  case FIELD_PERCENTILES_NORM:
    return s->percentiles_norm ? Py_NewRef(s->percentiles_norm)
                               : kept(&s->percentiles_norm, percentile_dict(st, true));
  case FIELD_HISTOGRAM:
    return s->histogram ? Py_NewRef(s->histogram) : kept(&s->histogram, histogram_array(s));
  case FIELD_PATH:
    return Py_NewRef(s->path);
  case FIELD_DECODER:
    return Py_NewRef(s->decoder);
  case FIELD_CONVERTED_FROM:
    return Py_NewRef(s->converted_from);
  case FIELD_FRAME:
    return PyLong_FromUnsignedLongLong(f->frame);
  case FIELD_PTS:
    return float_or_none(f->pts);
  case FIELD_DURATION:
    return float_or_none(f->duration);
  case FIELD_KEYFRAME:
    return f->keyframe < 0 ? Py_NewRef(Py_None) : PyBool_FromLong(f->keyframe);
  case FIELD_DIFF:
    return float_or_none(f->diff);
  case FIELD_CUT_DISTANCE:
    return float_or_none(f->cut_distance);
  case FIELD_SCENE_CUT:
    return PyBool_FromLong(f->scene_cut);
  case FIELD_BLACK:
    return PyBool_FromLong(f->black);
  case FIELD_FROZEN:
    return PyBool_FromLong(f->frozen);
  case FIELD_OUT_OF_LEGAL:
    return float_or_none(f->out_of_legal);
  case FIELD_FLICKER:
    return float_or_none(f->flicker);
  case FIELD_SIGNALSTATS_LOW:
    return PyLong_FromUnsignedLong(f->signalstats_low);
  case FIELD_SIGNALSTATS_HIGH:
    return PyLong_FromUnsignedLong(f->signalstats_high);
  case FIELD_DECODE_WARNING:
    return PyBool_FromLong(f->decode_warning);
  default:
    PyErr_SetString(PyExc_SystemError, "lumahist: no such field");
    return NULL;
  }
}

/* ------------------------------------------------------------------------ */
/* The descriptor of one field                                               */

typedef struct {
  PyObject_HEAD Field field;
  PyObject *name; /* interned: the key of the instance's __dict__ */
} FieldObject;

/* The StatsObject a field is read from or written to, or NULL with the
 * exception set. */
static StatsObject *field_owner(PyObject *self, PyObject *object)
{
  Field field = ((FieldObject *)self)->field;
  if (!PyObject_TypeCheck(object, &stats_base_type)) {
    PyErr_Format(PyExc_TypeError, "the field %s belongs to lumahist.Stats objects, not to %s",
                 fields[field].name, Py_TYPE(object)->tp_name);
    return NULL;
  }
  return (StatsObject *)object;
}

static PyObject *field_get(PyObject *self, PyObject *object, PyObject *type)
{
  (void)type;
  if (!object)
    return Py_NewRef(self); /* read on the class */
  const FieldObject *descriptor = (const FieldObject *)self;
  StatsObject *s = field_owner(self, object);
  if (!s)
    return NULL;
  if (s->dict) {
    PyObject *assigned = PyDict_GetItemWithError(s->dict, descriptor->name);
    if (assigned)
      return Py_NewRef(assigned);
    if (PyErr_Occurred())
      return NULL;
  }
  if (descriptor->field >= FIELD_FIRST_OF_FRAME && !s->video_frame) {
    PyErr_Format(PyExc_AttributeError, "%s has no video frame's %s", Py_TYPE(object)->tp_name,
                 fields[descriptor->field].name);
    return NULL;
  }
  return field_value(s, descriptor->field);
}

/* Assignment and del, as on a plain attribute: in the instance's __dict__
 * (del of a field never assigned raises AttributeError, as it did). */
static int field_set(PyObject *self, PyObject *object, PyObject *value)
{
  const FieldObject *descriptor = (const FieldObject *)self;
  StatsObject *s = field_owner(self, object);
  if (!s)
    return -1;
  if (value) {
    if (!s->dict && !(s->dict = PyDict_New()))
      return -1;
    return PyDict_SetItem(s->dict, descriptor->name, value);
  }
  int found = s->dict ? PyDict_Contains(s->dict, descriptor->name) : 0;
  if (found > 0)
    return PyDict_DelItem(s->dict, descriptor->name);
  if (found == 0)
    PyErr_Format(PyExc_AttributeError, "'%.100s' object has no attribute '%U'",
                 Py_TYPE(object)->tp_name, descriptor->name);
  return -1;
}

static PyObject *field_repr(PyObject *self)
{
  return PyUnicode_FromFormat("<field '%s' of lumahist.Stats>",
                              fields[((FieldObject *)self)->field].name);
}

static PyObject *field_doc(PyObject *self, void *unused)
{
  (void)unused;
  return PyUnicode_FromString(fields[((FieldObject *)self)->field].doc);
}

static void field_dealloc(PyObject *self)
{
  Py_XDECREF(((FieldObject *)self)->name);
  PyObject_Free(self);
}

static PyGetSetDef field_getset[] = {
    {"__doc__", field_doc, NULL, "what the field is", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject field_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "lumahist._lumahist.StatsField",
    .tp_basicsize = sizeof(FieldObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A field of lumahist.Stats, read from the library's result.",
    .tp_dealloc = field_dealloc,
    .tp_getset = field_getset,
    .tp_descr_get = field_get,
    .tp_descr_set = field_set,
    .tp_repr = field_repr,
};

/* ------------------------------------------------------------------------ */
/* The base type                                                             */

static int stats_traverse(PyObject *self, visitproc visit, void *arg)
{
  StatsObject *s = (StatsObject *)self;
  Py_VISIT(s->path);
  Py_VISIT(s->decoder);
  Py_VISIT(s->converted_from);
  Py_VISIT(s->histogram);
  Py_VISIT(s->percentiles);
  Py_VISIT(s->percentiles_norm);
  Py_VISIT(s->dict);
  return 0;
}

static int stats_clear(PyObject *self)
{
  StatsObject *s = (StatsObject *)self;
  Py_CLEAR(s->path);
  Py_CLEAR(s->decoder);
  Py_CLEAR(s->converted_from);
  Py_CLEAR(s->histogram);
  Py_CLEAR(s->percentiles);
  Py_CLEAR(s->percentiles_norm);
  Py_CLEAR(s->dict);
  return 0;
}

static void stats_dealloc(PyObject *self)
{
  PyObject_GC_UnTrack(self);
  stats_clear(self);
  lh_stats_clear(&((StatsObject *)self)->stats);
  Py_TYPE(self)->tp_free(self);
}

static StatsObject *stats_alloc(PyTypeObject *cls)
{
  StatsObject *s = (StatsObject *)cls->tp_alloc(cls, 0);
  if (!s)
    return NULL;
  /* tp_alloc zeroed it: an initialised LhStats, no objects made yet. */
  s->path = Py_NewRef(Py_None);
  s->decoder = Py_NewRef(Py_None);
  s->converted_from = Py_NewRef(Py_None);
  return s;
}

StatsObject *stats_object_new(StatsKind kind)
{
  StatsObject *s = stats_alloc(result_classes[kind]);
  if (s) {
    s->dataset = kind == STATS_DATASET;
    s->video_frame = kind == STATS_VIDEO_FRAME;
  }
  return s;
}

/* Pickling: the class, the library's numbers, and the instance's __dict__
 * (what was assigned), rebuilt by restore_stats. */
static PyObject *stats_state(const StatsObject *s)
{
  const LhStats *st = &s->stats;
  const int n = st->n_percentiles;
  PyObject *p = PyTuple_New(n), *values = PyTuple_New(n), *norms = PyTuple_New(n);
  PyObject *histogram = PyBytes_FromStringAndSize((const char *)st->histogram,
                                                  (Py_ssize_t)(st->n_bins * sizeof(uint64_t)));
  if (!p || !values || !norms || !histogram)
    goto fail;
  for (int i = 0; i < n; i++) {
    PyObject *items[3] = {PyFloat_FromDouble(st->percentile_p[i]),
                          PyLong_FromUnsignedLong(st->percentile_value[i]),
                          PyFloat_FromDouble(st->percentile_norm[i])};
    PyTuple_SET_ITEM(p, i, items[0]);
    PyTuple_SET_ITEM(values, i, items[1]);
    PyTuple_SET_ITEM(norms, i, items[2]);
    if (!items[0] || !items[1] || !items[2])
      goto fail;
  }
  return Py_BuildValue(
      "(iiiiOOOiiiKddIIIKKKKdddddddddNNNNOOO)", s->width, s->height, (int)s->backend,
      (int)s->dataset, s->path, s->decoder, s->converted_from, st->bit_depth, (int)st->matrix,
      (int)st->range, (unsigned long long)st->count, st->mean, st->stddev, st->min, st->max,
      st->median, (unsigned long long)st->clipped_low_count,
      (unsigned long long)st->clipped_high_count, (unsigned long long)st->below_legal_count,
      (unsigned long long)st->above_legal_count, st->clipped_low, st->clipped_high, st->below_legal,
      st->above_legal, st->mean_norm, st->stddev_norm, st->min_norm, st->max_norm, st->median_norm,
      p, values, norms, histogram, s->histogram ? s->histogram : Py_None,
      s->percentiles ? s->percentiles : Py_None,
      s->percentiles_norm ? s->percentiles_norm : Py_None);
fail:
  Py_XDECREF(p);
  Py_XDECREF(values);
  Py_XDECREF(norms);
  Py_XDECREF(histogram);
  return NULL;
}

/* A video frame's fields, for pickling. */
static PyObject *frame_state(const LhpFrameFields *f)
{
  return Py_BuildValue("(KddiddiiiddIIi)", (unsigned long long)f->frame, f->pts, f->duration,
                       f->keyframe, f->diff, f->cut_distance, (int)f->scene_cut, (int)f->black,
                       (int)f->frozen, f->out_of_legal, f->flicker, f->signalstats_low,
                       f->signalstats_high, (int)f->decode_warning);
}

static int frame_from_state(PyObject *state, LhpFrameFields *f)
{
  unsigned long long frame;
  int scene_cut, black, frozen, decode_warning;
  if (!PyArg_ParseTuple(state, "KddiddpppddIIp", &frame, &f->pts, &f->duration, &f->keyframe,
                        &f->diff, &f->cut_distance, &scene_cut, &black, &frozen, &f->out_of_legal,
                        &f->flicker, &f->signalstats_low, &f->signalstats_high, &decode_warning))
    return -1;
  f->frame = frame;
  f->scene_cut = scene_cut;
  f->black = black;
  f->frozen = frozen;
  f->decode_warning = decode_warning;
  return 0;
}

static PyObject *stats_reduce(PyObject *self, PyObject *unused)
{
  (void)unused;
  const StatsObject *s = (const StatsObject *)self;
  PyObject *state = stats_state(s);
  if (!state)
    return NULL;
  PyObject *dict = PyObject_GetAttrString(self, "__dict__");
  if (!dict) {
    PyErr_Clear();
    dict = Py_NewRef(Py_None);
  }
  if (s->video_frame) {
    PyObject *frame = frame_state(&s->frame);
    if (!frame) {
      Py_DECREF(state);
      Py_DECREF(dict);
      return NULL;
    }
    return Py_BuildValue("O(ONN)N", restore_function, (PyObject *)Py_TYPE(self), state, frame,
                         dict);
  }
  return Py_BuildValue("O(ON)N", restore_function, (PyObject *)Py_TYPE(self), state, dict);
}

PyObject *stats_object_restore(PyObject *self, PyObject *args)
{
  (void)self;
  PyObject *cls, *path, *decoder, *converted_from, *p, *values, *norms, *histogram;
  PyObject *kept_histogram, *kept_percentiles, *kept_norms, *frame = Py_None;
  int width, height, backend, dataset, bit_depth, matrix, range;
  unsigned long long count, clipped_low, clipped_high, below_legal, above_legal;
  unsigned int min, max, median;
  double d[14];
  if (!PyArg_ParseTuple(args, "O!(iiipOOOiiiKddIIIKKKKdddddddddO!O!O!SOOO)|O:restore_stats",
                        &PyType_Type, &cls, &width, &height, &backend, &dataset, &path, &decoder,
                        &converted_from, &bit_depth, &matrix, &range, &count, &d[0], &d[1], &min,
                        &max, &median, &clipped_low, &clipped_high, &below_legal, &above_legal,
                        &d[2], &d[3], &d[4], &d[5], &d[6], &d[7], &d[8], &d[9], &d[10],
                        &PyTuple_Type, &p, &PyTuple_Type, &values, &PyTuple_Type, &norms,
                        &histogram, &kept_histogram, &kept_percentiles, &kept_norms, &frame))
    return NULL;
  const Py_ssize_t n = PyTuple_GET_SIZE(p);
  if (!PyType_IsSubtype((PyTypeObject *)cls, &stats_base_type) || bit_depth < 8 || bit_depth > 16 ||
      PyBytes_GET_SIZE(histogram) != (Py_ssize_t)(sizeof(uint64_t) << bit_depth) ||
      !lh_matrix_name((LhMatrix)matrix) || !lh_range_name((LhRange)range) ||
      !lh_backend_name((LhBackend)backend) || n > LH_MAX_PERCENTILES ||
      PyTuple_GET_SIZE(values) != n || PyTuple_GET_SIZE(norms) != n) {
    PyErr_SetString(PyExc_ValueError, "restore_stats: not the state of a lumahist.Stats");
    return NULL;
  }
  StatsObject *s = stats_alloc((PyTypeObject *)cls);
  if (!s)
    return NULL;
  LhStats *st = &s->stats;
  s->width = width;
  s->height = height;
  s->backend = (LhBackend)backend;
  s->dataset = dataset;
  if (frame != Py_None) {
    if (frame_from_state(frame, &s->frame) < 0) {
      Py_DECREF(s);
      return NULL;
    }
    s->video_frame = true;
  }
  Py_SETREF(s->path, Py_NewRef(path));
  Py_SETREF(s->decoder, Py_NewRef(decoder));
  Py_SETREF(s->converted_from, Py_NewRef(converted_from));
  st->bit_depth = bit_depth;
  st->matrix = (LhMatrix)matrix;
  st->range = (LhRange)range;
  st->count = count;
  st->mean = d[0];
  st->stddev = d[1];
  st->min = min;
  st->max = max;
  st->median = median;
  st->clipped_low_count = clipped_low;
  st->clipped_high_count = clipped_high;
  st->below_legal_count = below_legal;
  st->above_legal_count = above_legal;
  st->clipped_low = d[2];
  st->clipped_high = d[3];
  st->below_legal = d[4];
  st->above_legal = d[5];
  st->mean_norm = d[6];
  st->stddev_norm = d[7];
  st->min_norm = d[8];
  st->max_norm = d[9];
  st->median_norm = d[10];
  st->n_percentiles = (int)n;
  for (Py_ssize_t i = 0; i < n; i++) {
    st->percentile_p[i] = PyFloat_AsDouble(PyTuple_GET_ITEM(p, i));
    st->percentile_value[i] = (uint32_t)PyLong_AsUnsignedLong(PyTuple_GET_ITEM(values, i));
    st->percentile_norm[i] = PyFloat_AsDouble(PyTuple_GET_ITEM(norms, i));
  }
  st->n_bins = (size_t)1 << bit_depth;
  st->histogram = malloc(st->n_bins * sizeof(uint64_t));
  if (!st->histogram) {
    Py_DECREF(s);
    return PyErr_NoMemory();
  }
  memcpy(st->histogram, PyBytes_AS_STRING(histogram), st->n_bins * sizeof(uint64_t));
  if (kept_histogram != Py_None)
    s->histogram = Py_NewRef(kept_histogram);
  if (kept_percentiles != Py_None)
    s->percentiles = Py_NewRef(kept_percentiles);
  if (kept_norms != Py_None)
    s->percentiles_norm = Py_NewRef(kept_norms);
  if (PyErr_Occurred()) {
    Py_DECREF(s);
    return NULL;
  }
  return (PyObject *)s;
}

static PyMethodDef stats_methods[] = {
    {"__reduce__", stats_reduce, METH_NOARGS, "pickles as restore_stats(cls, state)"},
    {NULL, NULL, 0, NULL},
};

/* The base type holds the instance's __dict__ (the subclasses add none),
 * so that the fields find assigned values without a private API. */
static PyGetSetDef stats_getset[] = {
    {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject stats_base_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "lumahist._lumahist.StatsBase",
    .tp_basicsize = sizeof(StatsObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "The library's result that lumahist.Stats reads its fields from.",
    .tp_dealloc = stats_dealloc,
    .tp_traverse = stats_traverse,
    .tp_clear = stats_clear,
    .tp_methods = stats_methods,
    .tp_getset = stats_getset,
    .tp_dictoffset = offsetof(StatsObject, dict),
    /* No tp_new: instances come from the module's calls alone. */
};

/* Gives cls the descriptors of fields first .. end - 1 (in its dict: the
 * base type, static, takes no setattr). */
static int add_fields(PyTypeObject *cls, Field first, Field end)
{
  for (Field f = first; f < end; f++) {
    FieldObject *field = PyObject_New(FieldObject, &field_type);
    if (!field)
      return -1;
    field->field = f;
    field->name = PyUnicode_InternFromString(fields[f].name);
    if (!field->name) {
      Py_DECREF(field);
      return -1;
    }
    int status = PyDict_SetItemString(cls->tp_dict, fields[f].name, (PyObject *)field);
    Py_DECREF(field);
    if (status < 0)
      return -1;
  }
  PyType_Modified(cls);
  return 0;
}

int stats_object_add_type(PyObject *module)
{
  if (PyType_Ready(&field_type) < 0 || PyType_Ready(&stats_base_type) < 0)
    return -1;
  if (add_fields(&stats_base_type, 0, FIELD_FIRST_OF_FRAME) < 0)
    return -1;
  restore_function = PyObject_GetAttrString(module, "restore_stats");
  if (!restore_function)
    return -1;
  Py_INCREF(&stats_base_type);
  if (PyModule_AddObject(module, "StatsBase", (PyObject *)&stats_base_type) < 0) {
    Py_DECREF(&stats_base_type);
    return -1;
  }
  return 0;
}

PyObject *stats_object_set_result_types(PyObject *self, PyObject *args)
{
  (void)self;
  PyTypeObject *classes[4];
  if (!PyArg_ParseTuple(args, "O!O!O!O!:set_result_types", &PyType_Type, &classes[0], &PyType_Type,
                        &classes[1], &PyType_Type, &classes[2], &PyType_Type, &classes[3]))
    return NULL;
  for (int i = 0; i < 4; i++)
    if (!PyType_IsSubtype(classes[i], &stats_base_type)) {
      PyErr_SetString(PyExc_TypeError, "set_result_types: subclasses of StatsBase expected");
      return NULL;
    }
  if (add_fields(classes[STATS_VIDEO_FRAME], FIELD_FIRST_OF_FRAME, FIELD_TOTAL) < 0)
    return NULL;
  for (int i = 0; i < 4; i++) {
    Py_INCREF(classes[i]);
    if (result_classes[i] != &stats_base_type)
      Py_DECREF(result_classes[i]);
    result_classes[i] = classes[i];
  }
  Py_RETURN_NONE;
}
