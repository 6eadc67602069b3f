/* _lumahist.c: the Python extension over lumahist.h: frames from arrays
 * that export the buffer protocol (NumPy, Pillow, bytes-like), read in
 * place; analysis, equalization, CLAHE and LUTs with the GIL released; the
 * library's failures as lumahist.Error subclasses.  lumahist/__init__.py
 * wraps it in the documented API. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdbool.h>
#include <string.h>

#include "lhio.h"
#include "lumahist.h"

/* The capsule that holds an LhTemporal (lumahist.Temporal). */
#define TEMPORAL_CAPSULE "lumahist.LhTemporal"

/* Error classes, by LhStatus: set by the package at import (set_errors). */
static PyObject *error_classes[9];

static PyObject *raise_status(int status)
{
  int index = -status;
  PyObject *cls = index >= 1 && index <= 8 && error_classes[index] ? error_classes[index]
                  : error_classes[0]                               ? error_classes[0]
                                                                   : PyExc_RuntimeError;
  PyObject *args = Py_BuildValue("(si)", lh_last_error(), status);
  if (args) {
    PyErr_SetObject(cls, args);
    Py_DECREF(args);
  }
  return NULL;
}

static PyObject *raise_invalid(const char *message)
{
  lh_set_error(LH_ERROR_INVALID_ARGUMENT, "%s", message);
  return raise_status(LH_ERROR_INVALID_ARGUMENT);
}

/* One context per backend per thread, made on first use: contexts are not
 * shared between threads, and making one (CUDA's start-up) is slow. */
static _Thread_local LhContext *thread_contexts[3];

static LhContext *context_for(LhBackend backend)
{
  LhContext **slot = &thread_contexts[backend];
  if (!*slot) {
    int status;
    PyThreadState *released = PyEval_SaveThread();
    status = lh_context_new(backend, slot);
    PyEval_RestoreThread(released);
    if (status < 0) {
      *slot = NULL;
      raise_status(status);
      return NULL;
    }
  }
  return *slot;
}

/* A frame over an array's buffer: H x W (gray), H x W x C (C = 3 or 4,
 * interleaved), or for NV12/I420 the H*3/2 x W layout of the planes; uint8
 * or uint16 samples; rows may be padded (any row stride), but each row's
 * samples must be packed. */
typedef struct {
  Py_buffer view;
  bool held;
  LhFrame frame;
  bool on_device;  /* a CUDA array (__cuda_array_interface__), read in place */
  bool has_stream; /* its producer named a stream that the work is queued on */
  void *stream;    /* that cudaStream_t (1: the legacy default stream, 2: per-thread) */
} ArrayFrame;

static void array_frame_release(ArrayFrame *a)
{
  if (a->held)
    PyBuffer_Release(&a->view);
  a->held = false;
}

/* Device arrays: the backend is CUDA unless the caller chose; the work goes
 * on the producer's stream when it named one. */
static LhBackend backend_for(LhBackend asked, const ArrayFrame *a)
{
  return a->on_device && asked == LH_BACKEND_AUTO ? LH_BACKEND_CUDA : asked;
}

static void stream_begin(LhContext *context, const ArrayFrame *a)
{
  if (a->on_device && a->has_stream)
    lh_context_set_stream(context, a->stream);
}

static void stream_end(LhContext *context, const ArrayFrame *a)
{
  if (a->on_device && a->has_stream)
    lh_context_set_stream(context, NULL);
}

static int format_from_name(const char *name, LhFormat *format)
{
  static const struct {
    const char *name;
    LhFormat format;
  } names[] = {
      {"GRAY8", LH_FORMAT_GRAY8},   {"GRAY16", LH_FORMAT_GRAY16}, {"RGB", LH_FORMAT_RGB},
      {"BGR", LH_FORMAT_BGR},       {"RGBA", LH_FORMAT_RGBA},     {"BGRA", LH_FORMAT_BGRA},
      {"RGBX", LH_FORMAT_RGBX},     {"BGRX", LH_FORMAT_BGRX},     {"RGB16", LH_FORMAT_RGB16},
      {"RGBA16", LH_FORMAT_RGBA16}, {"I420", LH_FORMAT_I420},     {"NV12", LH_FORMAT_NV12},
      {"P010", LH_FORMAT_P010},
  };
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (strcmp(names[i].name, name) == 0) {
      *format = names[i].format;
      return 0;
    }
  return -1;
}

/* The format of an H x W (x C) array of sample_bytes samples, or format_name. */
static int infer_format(const char *format_name, Py_ssize_t channels, int sample_bytes,
                        LhFormat *format)
{
  if (format_name)
    return format_from_name(format_name, format);
  if (channels == 1)
    *format = sample_bytes == 1 ? LH_FORMAT_GRAY8 : LH_FORMAT_GRAY16;
  else if (channels == 3)
    *format = sample_bytes == 1 ? LH_FORMAT_RGB : LH_FORMAT_RGB16;
  else if (channels == 4)
    *format = sample_bytes == 1 ? LH_FORMAT_RGBA : LH_FORMAT_RGBA16;
  else
    return -1;
  return 0;
}

static bool is_planar(LhFormat format)
{
  return format == LH_FORMAT_NV12 || format == LH_FORMAT_I420 || format == LH_FORMAT_P010;
}

/* A CUDA array (CuPy, PyTorch, Numba: __cuda_array_interface__ version 2 or
 * 3) as a frame in device memory, read and written where it is. */
static int device_frame_get(ArrayFrame *a, PyObject *interface, const char *format_name,
                            int bit_depth, bool writable, const char *what)
{
  char message[256];
  PyObject *shape = PyDict_Check(interface) ? PyDict_GetItemString(interface, "shape") : NULL;
  PyObject *typestr = PyDict_Check(interface) ? PyDict_GetItemString(interface, "typestr") : NULL;
  PyObject *data = PyDict_Check(interface) ? PyDict_GetItemString(interface, "data") : NULL;
  PyObject *strides = PyDict_Check(interface) ? PyDict_GetItemString(interface, "strides") : NULL;
  PyObject *stream = PyDict_Check(interface) ? PyDict_GetItemString(interface, "stream") : NULL;
  if (!shape || !PyTuple_Check(shape) || !typestr || !PyUnicode_Check(typestr) || !data ||
      !PyTuple_Check(data) || PyTuple_GET_SIZE(data) != 2) {
    snprintf(message, sizeof message, "%s: a malformed __cuda_array_interface__", what);
    return raise_invalid(message), -1;
  }
  const char *type = PyUnicode_AsUTF8(typestr);
  int sample_bytes = type && (strcmp(type, "|u1") == 0 || strcmp(type, "<u1") == 0)   ? 1
                     : type && (strcmp(type, "<u2") == 0 || strcmp(type, "=u2") == 0) ? 2
                                                                                      : 0;
  Py_ssize_t ndim = PyTuple_GET_SIZE(shape);
  if (!sample_bytes || (ndim != 2 && ndim != 3)) {
    snprintf(message, sizeof message,
             "%s: a CUDA array of %s and %zd dimensions: uint8 or uint16, H x W or H x W x C", what,
             type ? type : "?", ndim);
    return raise_invalid(message), -1;
  }
  Py_ssize_t dims[3] = {1, 1, 1}, steps[3];
  for (Py_ssize_t i = 0; i < ndim; i++)
    dims[i] = PyLong_AsSsize_t(PyTuple_GET_ITEM(shape, i));
  steps[ndim - 1] = sample_bytes;
  for (Py_ssize_t i = ndim - 2; i >= 0; i--)
    steps[i] = steps[i + 1] * dims[i + 1];
  if (strides && strides != Py_None) {
    if (!PyTuple_Check(strides) || PyTuple_GET_SIZE(strides) != ndim)
      return raise_invalid("a malformed __cuda_array_interface__ (strides)"), -1;
    for (Py_ssize_t i = 0; i < ndim; i++)
      steps[i] = PyLong_AsSsize_t(PyTuple_GET_ITEM(strides, i));
  }
  if (PyErr_Occurred())
    return -1;
  Py_ssize_t rows = dims[0], columns = dims[1], channels = ndim == 3 ? dims[2] : 1;
  if (rows < 1 || columns < 1 || channels < 1 || rows > INT32_MAX || columns > INT32_MAX) {
    snprintf(message, sizeof message, "%s: an empty or too large CUDA array", what);
    return raise_invalid(message), -1;
  }
  if ((ndim == 3 && steps[2] != sample_bytes) || steps[1] != channels * sample_bytes ||
      steps[0] < columns * channels * sample_bytes) {
    snprintf(message, sizeof message,
             "%s: the samples of a row are not packed; pass a contiguous copy", what);
    return raise_invalid(message), -1;
  }
  if (writable && PyObject_IsTrue(PyTuple_GET_ITEM(data, 1)) == 1) {
    snprintf(message, sizeof message, "%s: a read-only CUDA array", what);
    return raise_invalid(message), -1;
  }
  LhFormat format;
  if (infer_format(format_name, channels, sample_bytes, &format) < 0) {
    snprintf(message, sizeof message, "%s: no format for %zd channels ('%s')", what, channels,
             format_name ? format_name : "");
    return raise_invalid(message), -1;
  }
  int height = (int)rows;
  if (is_planar(format)) {
    if (channels != 1 || rows % 3 != 0)
      return raise_invalid("an (H * 3 / 2) x W array of planes expected"), -1;
    height = (int)(rows / 3 * 2);
  }
  void *pointer = PyLong_AsVoidPtr(PyTuple_GET_ITEM(data, 0));
  if (PyErr_Occurred())
    return -1;
  if (lh_frame_init(&a->frame, format, LH_MEMORY_CUDA, (int)columns, height, pointer,
                    (size_t)steps[0]) < 0)
    return raise_status(LH_ERROR_INVALID_ARGUMENT), -1;
  a->frame.bit_depth = bit_depth;
  a->on_device = true;
  /* Version 3: the producer's stream, on which the work is queued (None or
   * absent: the data is ready now). */
  if (stream && stream != Py_None) {
    a->stream = PyLong_AsVoidPtr(stream);
    if (PyErr_Occurred())
      return -1;
    a->has_stream = true;
  }
  return 0;
}

/* Fills a from object; format_name NULL infers the format from the shape
 * and the sample size.  writable: the array is written (out=). */
static int array_frame_get(ArrayFrame *a, PyObject *object, const char *format_name, int bit_depth,
                           bool writable, const char *what)
{
  memset(a, 0, sizeof *a);
  if (PyObject_HasAttrString(object, "__cuda_array_interface__")) {
    PyObject *interface = PyObject_GetAttrString(object, "__cuda_array_interface__");
    if (!interface)
      return -1;
    int status = device_frame_get(a, interface, format_name, bit_depth, writable, what);
    Py_DECREF(interface);
    return status;
  }
  int flags = PyBUF_STRIDES | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
  if (PyObject_GetBuffer(object, &a->view, flags) < 0) {
    PyErr_Clear();
    char message[200];
    snprintf(message, sizeof message,
             "%s: not an array with a%s buffer (a NumPy array, or anything with the buffer "
             "protocol)",
             what, writable ? " writable" : "");
    raise_invalid(message);
    return -1;
  }
  a->held = true;
  Py_buffer *v = &a->view;
  char message[256];
  const char *kind = v->format ? v->format : "B";
  if (*kind == '<' || *kind == '=' || *kind == '@')
    kind++;
  int sample_bytes = (int)v->itemsize;
  if (!((sample_bytes == 1 && (*kind == 'B')) || (sample_bytes == 2 && (*kind == 'H')))) {
    snprintf(message, sizeof message, "%s: samples of type '%s' (%d bytes): uint8 or uint16 only",
             what, v->format ? v->format : "?", sample_bytes);
    goto invalid;
  }
  if (v->ndim != 2 && v->ndim != 3) {
    snprintf(message, sizeof message,
             "%s: %d dimensions: H x W (gray) or H x W x C (colour) expected", what, v->ndim);
    goto invalid;
  }
  Py_ssize_t rows = v->shape[0], columns = v->shape[1];
  Py_ssize_t channels = v->ndim == 3 ? v->shape[2] : 1;
  if (rows < 1 || columns < 1 || channels < 1) {
    snprintf(message, sizeof message, "%s: an empty array (%zd x %zd)", what, rows, columns);
    goto invalid;
  }
  if (rows > INT32_MAX || columns > INT32_MAX) {
    snprintf(message, sizeof message, "%s: too large", what);
    goto invalid;
  }
  /* Each row's samples packed; rows at any positive stride. */
  if ((v->ndim == 3 && v->strides[2] != sample_bytes) ||
      v->strides[1] != (Py_ssize_t)(channels * sample_bytes) || v->strides[0] <= 0 ||
      v->strides[0] < columns * channels * sample_bytes) {
    snprintf(message, sizeof message,
             "%s: the samples of a row are not packed (strides %zd, %zd%s); pass a contiguous "
             "copy (numpy.ascontiguousarray)",
             what, v->strides[0], v->strides[1], v->ndim == 3 ? ", ..." : "");
    goto invalid;
  }
  LhFormat format;
  int height = (int)rows;
  if (infer_format(format_name, channels, sample_bytes, &format) < 0) {
    if (format_name)
      snprintf(message, sizeof message, "%s: unknown format '%s'", what, format_name);
    else
      snprintf(message, sizeof message, "%s: %zd channels: 1, 3 or 4 expected", what, channels);
    goto invalid;
  }
  if (is_planar(format)) {
    /* The planes one after the other: height * 3 / 2 rows of the luma's
     * width (GStreamer's layout for an even height). */
    if (channels != 1 || rows % 3 != 0) {
      snprintf(message, sizeof message,
               "%s: %s wants an (H * 3 / 2) x W array of its planes, not %zd x %zd x %zd", what,
               format_name, rows, columns, channels);
      goto invalid;
    }
    height = (int)(rows / 3 * 2);
  }
  if (lh_frame_init(&a->frame, format, LH_MEMORY_HOST, (int)columns, height, v->buf,
                    (size_t)v->strides[0]) < 0) {
    array_frame_release(a);
    raise_status(LH_ERROR_INVALID_ARGUMENT);
    return -1;
  }
  /* A row of the array is a row of the frame's (first) plane. */
  size_t plane_row = is_planar(format) ? (size_t)columns * (format == LH_FORMAT_P010 ? 2 : 1)
                                       : lh_frame_buffer_size(format, (int)columns, 1, 0);
  if (plane_row != (size_t)(columns * channels * sample_bytes)) {
    snprintf(message, sizeof message,
             "%s: rows of %zd x %zd samples of %d bytes are not rows of %s", what, columns,
             channels, sample_bytes, format_name ? format_name : "that format");
    goto invalid;
  }
  a->frame.bit_depth = bit_depth;
  return 0;

invalid:
  array_frame_release(a);
  raise_invalid(message);
  return -1;
}

static int parse_common(const char *matrix_name, const char *range_name, const char *backend_name,
                        LhMatrix *matrix, LhRange *range, LhBackend *backend)
{
  if (lh_matrix_from_name(matrix_name, matrix) < 0 || lh_range_from_name(range_name, range) < 0 ||
      lh_backend_from_name(backend_name, backend) < 0) {
    raise_status(LH_ERROR_INVALID_ARGUMENT);
    return -1;
  }
  return 0;
}

/* A dict of the statistics, with the histogram as bytes of uint64. */
static PyObject *stats_to_dict(const LhStats *s)
{
  PyObject *p = PyTuple_New(s->n_percentiles);
  PyObject *values = PyTuple_New(s->n_percentiles);
  PyObject *norms = PyTuple_New(s->n_percentiles);
  if (!p || !values || !norms)
    goto fail;
  for (int i = 0; i < s->n_percentiles; i++) {
    PyTuple_SET_ITEM(p, i, PyFloat_FromDouble(s->percentile_p[i]));
    PyTuple_SET_ITEM(values, i, PyLong_FromUnsignedLong(s->percentile_value[i]));
    PyTuple_SET_ITEM(norms, i, PyFloat_FromDouble(s->percentile_norm[i]));
  }
  PyObject *histogram = PyBytes_FromStringAndSize((const char *)s->histogram,
                                                  (Py_ssize_t)(s->n_bins * sizeof *s->histogram));
  if (!histogram)
    goto fail;
  return Py_BuildValue(
      "{s:i,s:s,s:s,s:K,s:d,s:d,s:k,s:k,s:k,s:d,s:d,s:d,s:d,s:d,s:d,s:d,s:d,s:d,s:N,s:N,s:N,s:N}",
      "bit_depth", s->bit_depth, "matrix", lh_matrix_name(s->matrix), "range",
      lh_range_name(s->range), "count", (unsigned long long)s->count, "mean", s->mean, "stddev",
      s->stddev, "min", (unsigned long)s->min, "max", (unsigned long)s->max, "median",
      (unsigned long)s->median, "clipped_low", s->clipped_low, "clipped_high", s->clipped_high,
      "below_legal", s->below_legal, "above_legal", s->above_legal, "mean_norm", s->mean_norm,
      "stddev_norm", s->stddev_norm, "min_norm", s->min_norm, "max_norm", s->max_norm,
      "median_norm", s->median_norm, "percentile_p", p, "percentile_values", values,
      "percentile_norms", norms, "histogram", histogram);
fail:
  Py_XDECREF(p);
  Py_XDECREF(values);
  Py_XDECREF(norms);
  return NULL;
}

/* stats_to_dict and what a record adds: the image's size, the backend and,
 * for a file, its decoder (NULL: none) and the colour space its pixels were
 * converted from (NULL: none). */
static PyObject *stats_to_record(const LhStats *stats, int width, int height, LhBackend backend,
                                 const char *decoder, const char *converted_from)
{
  PyObject *result = stats_to_dict(stats);
  if (!result)
    return NULL;
  PyObject *size = Py_BuildValue("(ii)", width, height);
  PyObject *name = PyUnicode_FromString(lh_backend_name(backend));
  PyObject *decoded_by = decoder ? PyUnicode_FromString(decoder) : NULL;
  if (!size || !name || (decoder && !decoded_by) ||
      PyDict_SetItemString(result, "size", size) < 0 ||
      PyDict_SetItemString(result, "backend", name) < 0 ||
      (decoded_by && PyDict_SetItemString(result, "decoder", decoded_by) < 0))
    Py_CLEAR(result);
  PyObject *from = converted_from ? PyUnicode_FromString(converted_from) : NULL;
  if (result && converted_from &&
      (!from || PyDict_SetItemString(result, "converted_from", from) < 0))
    Py_CLEAR(result);
  Py_XDECREF(size);
  Py_XDECREF(name);
  Py_XDECREF(decoded_by);
  Py_XDECREF(from);
  return result;
}

/* Analyses an array into *stats and, with overlay, draws the histogram into
 * it; *width and *height the frame's, *backend the backend used.  0, or -1
 * with the Python exception set. */
static int analyze_array(PyObject *image, const char *format_name, int bit_depth, LhBackend asked,
                         const LhOptions *options, const LhOverlayOptions *overlay, LhStats *stats,
                         int *width, int *height, LhBackend *backend)
{
  ArrayFrame a;
  if (array_frame_get(&a, image, format_name, bit_depth, overlay != NULL,
                      overlay ? "out" : "image") < 0)
    return -1;
  LhContext *context = context_for(backend_for(asked, &a));
  if (!context) {
    array_frame_release(&a);
    return -1;
  }
  int status;
  stream_begin(context, &a);
  PyThreadState *released = PyEval_SaveThread();
  status = lh_analyze(context, &a.frame, options, stats);
  if (status >= 0 && overlay)
    status = lh_overlay(context, &a.frame, stats, overlay);
  PyEval_RestoreThread(released);
  stream_end(context, &a);
  *width = a.frame.width;
  *height = a.frame.height;
  *backend = lh_context_backend(context);
  array_frame_release(&a);
  if (status < 0) {
    raise_status(status);
    return -1;
  }
  return 0;
}

static PyObject *py_stats(PyObject *self, PyObject *args, PyObject *kwargs)
{
  static char *keywords[] = {"image",   "matrix",    "range",  "percentiles", "roi",
                             "backend", "bit_depth", "format", NULL};
  PyObject *image;
  const char *matrix_name = "bt601", *range_name = "full", *backend_name = "auto";
  const char *percentiles = "", *format_name = NULL;
  int roi[4] = {0, 0, 0, 0}, bit_depth = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|$sss(iiii)siz", keywords, &image, &matrix_name,
                                   &range_name, &percentiles, &roi[0], &roi[1], &roi[2], &roi[3],
                                   &backend_name, &bit_depth, &format_name))
    return NULL;
  LhOptions options;
  lh_options_init(&options);
  LhBackend backend;
  if (parse_common(matrix_name, range_name, backend_name, &options.matrix, &options.range,
                   &backend) < 0)
    return NULL;
  if (*percentiles && lh_options_set_percentiles(&options, percentiles) < 0)
    return raise_status(LH_ERROR_INVALID_ARGUMENT);
  options.roi = (LhRect){roi[0], roi[1], roi[2], roi[3]};
  LhStats stats;
  lh_stats_init(&stats);
  int width, height;
  LhBackend used;
  PyObject *result = NULL;
  if (analyze_array(image, format_name, bit_depth, backend, &options, NULL, &stats, &width, &height,
                    &used) == 0) {
    result = stats_to_record(&stats, width, height, used, NULL, NULL);
  }
  lh_stats_clear(&stats);
  return result;
}

/* Reads a PNG or JPEG file with lumahist's decoders (a colour JPEG's Y
 * component alone, as `lumahist stats` reads it) and analyses it: the
 * tool's record, decoder included. */
static PyObject *py_stats_file(PyObject *self, PyObject *args, PyObject *kwargs)
{
  static char *keywords[] = {"path",    "matrix",     "range", "percentiles",
                             "backend", "max_pixels", NULL};
  PyObject *path_object;
  const char *matrix_name = "bt601", *range_name = "full", *backend_name = "auto",
             *percentiles = "";
  unsigned long long max_pixels = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O&|$ssssK", keywords, PyUnicode_FSConverter,
                                   &path_object, &matrix_name, &range_name, &percentiles,
                                   &backend_name, &max_pixels))
    return NULL;
  const char *path = PyBytes_AS_STRING(path_object);
  LhOptions options;
  lh_options_init(&options);
  LhBackend backend;
  PyObject *result = NULL;
  if (parse_common(matrix_name, range_name, backend_name, &options.matrix, &options.range,
                   &backend) < 0 ||
      (*percentiles && lh_options_set_percentiles(&options, percentiles) < 0 &&
       !raise_status(LH_ERROR_INVALID_ARGUMENT))) {
    Py_DECREF(path_object);
    return NULL;
  }
  LhContext *context = context_for(backend);
  if (!context) {
    Py_DECREF(path_object);
    return NULL;
  }
  LhioImage image;
  LhStats stats;
  lh_stats_init(&stats);
  int status;
  PyThreadState *released = PyEval_SaveThread();
  status = lhio_read(path, LHIO_READ_LUMA, max_pixels, &image);
  if (status >= 0)
    status = lh_analyze(context, &image.frame, &options, &stats);
  PyEval_RestoreThread(released);
  if (status < 0) {
    raise_status(status);
  } else {
    result = stats_to_record(&stats, image.frame.width, image.frame.height,
                             lh_context_backend(context), lhio_decoder_name(image.decoder),
                             image.converted_from);
  }
  lhio_image_clear(&image);
  lh_stats_clear(&stats);
  Py_DECREF(path_object);
  return result;
}

/* equalize (global or CLAHE) and apply_lut: in into out (the same array for
 * in place). */
static PyObject *py_rewrite(PyObject *self, PyObject *args, PyObject *kwargs)
{
  static char *keywords[] = {"image",     "out",     "mode",     "lut",        "matrix",
                             "range",     "tiles_x", "tiles_y",  "clip_limit", "backend",
                             "bit_depth", "format",  "temporal", NULL};
  PyObject *image, *out, *lut_object = Py_None, *temporal = Py_None;
  const char *mode = "global", *matrix_name = "bt601", *range_name = "full", *backend_name = "auto",
             *format_name = NULL;
  int tiles_x = 8, tiles_y = 8, bit_depth = 0;
  double clip_limit = 40.0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO|$sOssiidsizO", keywords, &image, &out, &mode,
                                   &lut_object, &matrix_name, &range_name, &tiles_x, &tiles_y,
                                   &clip_limit, &backend_name, &bit_depth, &format_name, &temporal))
    return NULL;
  LhEqualizeOptions options;
  lh_equalize_options_init(&options);
  LhBackend backend;
  if (parse_common(matrix_name, range_name, backend_name, &options.matrix, &options.range,
                   &backend) < 0)
    return NULL;
  bool lut_mode = strcmp(mode, "lut") == 0;
  if (strcmp(mode, "clahe") == 0)
    options.mode = LH_EQUALIZE_CLAHE;
  else if (strcmp(mode, "global") != 0 && !lut_mode)
    return raise_invalid("mode: global, clahe or lut");
  options.tiles_x = tiles_x;
  options.tiles_y = tiles_y;
  options.clip_limit = clip_limit;
  if (temporal != Py_None) {
    options.temporal = PyCapsule_GetPointer(temporal, TEMPORAL_CAPSULE);
    if (!options.temporal) {
      PyErr_Clear();
      return raise_invalid("temporal: a lumahist.Temporal expected");
    }
  }

  ArrayFrame in, dst, lut;
  memset(&lut, 0, sizeof lut);
  if (array_frame_get(&in, image, format_name, bit_depth, false, "image") < 0)
    return NULL;
  if (array_frame_get(&dst, out, format_name, bit_depth, true, "out") < 0) {
    array_frame_release(&in);
    return NULL;
  }
  const uint16_t *table = NULL;
  if (lut_mode) {
    if (PyObject_GetBuffer(lut_object, &lut.view, PyBUF_FORMAT | PyBUF_C_CONTIGUOUS) < 0) {
      PyErr_Clear();
      array_frame_release(&in);
      array_frame_release(&dst);
      return raise_invalid("lut: a contiguous uint16 array of 2^bit_depth entries expected");
    }
    lut.held = true;
    int depth = in.frame.bit_depth ? in.frame.bit_depth
                : (in.frame.format == LH_FORMAT_GRAY16 || in.frame.format == LH_FORMAT_RGB16 ||
                   in.frame.format == LH_FORMAT_RGBA16)
                    ? 16
                : in.frame.format == LH_FORMAT_P010 ? 10
                                                    : 8;
    if (lut.view.itemsize != 2 || lut.view.len != ((Py_ssize_t)2 << depth)) {
      array_frame_release(&in);
      array_frame_release(&dst);
      array_frame_release(&lut);
      return raise_invalid("lut: a uint16 array of 2^bit_depth entries expected");
    }
    table = lut.view.buf;
  }
  LhContext *context = context_for(backend_for(backend, &in));
  if (!context) {
    array_frame_release(&in);
    array_frame_release(&dst);
    array_frame_release(&lut);
    return NULL;
  }
  int status;
  stream_begin(context, &in);
  PyThreadState *released = PyEval_SaveThread();
  if (lut_mode)
    status = lh_apply_lut(context, &in.frame, &dst.frame, table, options.matrix);
  else
    status = lh_equalize(context, &in.frame, &dst.frame, &options);
  PyEval_RestoreThread(released);
  stream_end(context, &in);
  array_frame_release(&in);
  array_frame_release(&dst);
  array_frame_release(&lut);
  if (status < 0)
    return raise_status(status);
  Py_RETURN_NONE;
}

static PyObject *py_lut_from_histogram(PyObject *self, PyObject *args, PyObject *kwargs)
{
  static char *keywords[] = {"histogram", "range", NULL};
  Py_buffer h;
  const char *range_name = "full";
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "y*|$s", keywords, &h, &range_name))
    return NULL;
  LhRange range;
  size_t bins = (size_t)h.len / sizeof(uint64_t);
  int depth = 0;
  while (depth <= 16 && ((size_t)1 << depth) != bins)
    depth++;
  PyObject *result = NULL;
  if (lh_range_from_name(range_name, &range) < 0 || (size_t)h.len % sizeof(uint64_t) != 0 ||
      depth < 8 || depth > 16) {
    if (depth < 8 || depth > 16)
      lh_set_error(LH_ERROR_INVALID_ARGUMENT, "a histogram of 2^8 .. 2^16 uint64 counts expected");
    raise_status(LH_ERROR_INVALID_ARGUMENT);
  } else {
    result = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(bins * sizeof(uint16_t)));
    if (result) {
      int status =
          lh_lut_from_histogram(h.buf, depth, range, (uint16_t *)PyBytes_AS_STRING(result));
      if (status < 0) {
        Py_CLEAR(result);
        raise_status(status);
      }
    }
  }
  PyBuffer_Release(&h);
  return result;
}

static PyObject *py_from_histogram(PyObject *self, PyObject *args, PyObject *kwargs)
{
  static char *keywords[] = {"histogram", "matrix", "range", "percentiles", NULL};
  Py_buffer h;
  const char *matrix_name = "bt601", *range_name = "full", *percentiles = "";
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "y*|$sss", keywords, &h, &matrix_name, &range_name,
                                   &percentiles))
    return NULL;
  LhOptions options;
  lh_options_init(&options);
  size_t bins = (size_t)h.len / sizeof(uint64_t);
  int depth = 0;
  while (depth <= 16 && ((size_t)1 << depth) != bins)
    depth++;
  PyObject *result = NULL;
  LhStats stats;
  lh_stats_init(&stats);
  int status = LH_OK;
  if (lh_matrix_from_name(matrix_name, &options.matrix) < 0 ||
      lh_range_from_name(range_name, &options.range) < 0 ||
      (*percentiles && lh_options_set_percentiles(&options, percentiles) < 0))
    status = LH_ERROR_INVALID_ARGUMENT;
  else if ((size_t)h.len % sizeof(uint64_t) != 0 || depth < 8 || depth > 16)
    status = lh_set_error(LH_ERROR_INVALID_ARGUMENT,
                          "a histogram of 2^8 .. 2^16 uint64 counts expected");
  else
    status = lh_stats_from_histogram(h.buf, depth, &options, &stats);
  PyBuffer_Release(&h);
  if (status < 0)
    raise_status(status);
  else
    result = stats_to_dict(&stats);
  lh_stats_clear(&stats);
  return result;
}

/* Analyses image (with percentiles, for the markers) and draws its
 * histogram into it, in place. */
static PyObject *py_overlay(PyObject *self, PyObject *args, PyObject *kwargs)
{
  static char *keywords[] = {"image",   "percentiles", "rect",         "opacity", "scale",
                             "markers", "clipping",    "clip_warning", "matrix",  "range",
                             "backend", "bit_depth",   "format",       NULL};
  PyObject *image;
  const char *percentiles = "", *scale = "log", *matrix_name = "bt601", *range_name = "full",
             *backend_name = "auto", *format_name = NULL;
  int rect[4] = {0, 0, 0, 0}, markers = 1, clipping = 1, bit_depth = 0;
  double opacity = 0.8, clip_warning = 0.005;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|$s(iiii)dsppdsssiz", keywords, &image,
                                   &percentiles, &rect[0], &rect[1], &rect[2], &rect[3], &opacity,
                                   &scale, &markers, &clipping, &clip_warning, &matrix_name,
                                   &range_name, &backend_name, &bit_depth, &format_name))
    return NULL;
  LhOptions options;
  lh_options_init(&options);
  LhOverlayOptions overlay;
  lh_overlay_options_init(&overlay);
  LhBackend backend;
  if (parse_common(matrix_name, range_name, backend_name, &options.matrix, &options.range,
                   &backend) < 0)
    return NULL;
  if (*percentiles && lh_options_set_percentiles(&options, percentiles) < 0)
    return raise_status(LH_ERROR_INVALID_ARGUMENT);
  if (strcmp(scale, "log") != 0 && strcmp(scale, "linear") != 0)
    return raise_invalid("scale: log or linear");
  overlay.rect = (LhRect){rect[0], rect[1], rect[2], rect[3]};
  overlay.opacity = opacity;
  overlay.scale = strcmp(scale, "log") == 0 ? LH_OVERLAY_LOG : LH_OVERLAY_LINEAR;
  overlay.markers = markers;
  overlay.clipping = clipping;
  overlay.clip_warning = clip_warning;
  overlay.matrix = options.matrix;
  overlay.range = options.range;
  LhStats stats;
  lh_stats_init(&stats);
  int width, height;
  LhBackend used;
  int status = analyze_array(image, format_name, bit_depth, backend, &options, &overlay, &stats,
                             &width, &height, &used);
  lh_stats_clear(&stats);
  if (status < 0)
    return NULL;
  Py_RETURN_NONE;
}

/* The GPU time of this thread's CUDA context (lh_context_device_time), or
 * None when the thread has none. */
static PyObject *py_device_time(PyObject *self, PyObject *unused)
{
  LhContext *context = thread_contexts[LH_BACKEND_CUDA];
  if (!context && thread_contexts[LH_BACKEND_AUTO] &&
      lh_context_backend(thread_contexts[LH_BACKEND_AUTO]) == LH_BACKEND_CUDA)
    context = thread_contexts[LH_BACKEND_AUTO];
  if (!context)
    Py_RETURN_NONE;
  LhDeviceTime time;
  int status = lh_context_device_time(context, &time);
  if (status < 0)
    return raise_status(status);
  return Py_BuildValue("{s:d,s:d,s:K,s:K}", "transfer_s", time.transfer_s, "compute_s",
                       time.compute_s, "calls", (unsigned long long)time.calls, "transfer_bytes",
                       (unsigned long long)time.transfer_bytes);
}

static void temporal_destroy(PyObject *capsule)
{
  lh_temporal_free(PyCapsule_GetPointer(capsule, TEMPORAL_CAPSULE));
}

static PyObject *py_temporal_new(PyObject *self, PyObject *args)
{
  int window;
  double cut_threshold;
  if (!PyArg_ParseTuple(args, "id", &window, &cut_threshold))
    return NULL;
  LhTemporal *temporal;
  int status = lh_temporal_new(window, cut_threshold, &temporal);
  if (status < 0)
    return raise_status(status);
  PyObject *capsule = PyCapsule_New(temporal, TEMPORAL_CAPSULE, temporal_destroy);
  if (!capsule)
    lh_temporal_free(temporal);
  return capsule;
}

static PyObject *py_temporal_reset(PyObject *self, PyObject *capsule)
{
  LhTemporal *temporal = PyCapsule_GetPointer(capsule, TEMPORAL_CAPSULE);
  if (!temporal)
    return NULL;
  lh_temporal_reset(temporal);
  Py_RETURN_NONE;
}

static PyObject *py_set_errors(PyObject *self, PyObject *classes)
{
  if (!PyTuple_Check(classes) || PyTuple_GET_SIZE(classes) != 9)
    return raise_invalid("set_errors: a tuple of 9 classes");
  for (int i = 0; i < 9; i++) {
    Py_XDECREF(error_classes[i]);
    error_classes[i] = PyTuple_GET_ITEM(classes, i);
    Py_INCREF(error_classes[i]);
  }
  Py_RETURN_NONE;
}

static PyObject *py_version(PyObject *self, PyObject *unused)
{
  return PyUnicode_FromString(lh_version());
}

static PyMethodDef methods[] = {
    {"stats", (PyCFunction)(void (*)(void))py_stats, METH_VARARGS | METH_KEYWORDS,
     "stats(image, *, matrix, range, percentiles, roi, backend, bit_depth, format) -> dict"},
    {"rewrite", (PyCFunction)(void (*)(void))py_rewrite, METH_VARARGS | METH_KEYWORDS,
     "rewrite(image, out, *, mode, lut, matrix, range, tiles_x, tiles_y, clip_limit, backend, "
     "bit_depth, format)"},
    {"lut_from_histogram", (PyCFunction)(void (*)(void))py_lut_from_histogram,
     METH_VARARGS | METH_KEYWORDS, "lut_from_histogram(histogram, *, range) -> bytes"},
    {"stats_file", (PyCFunction)(void (*)(void))py_stats_file, METH_VARARGS | METH_KEYWORDS,
     "stats_file(path, *, matrix, range, percentiles, backend, max_pixels) -> dict"},
    {"from_histogram", (PyCFunction)(void (*)(void))py_from_histogram, METH_VARARGS | METH_KEYWORDS,
     "from_histogram(histogram, *, matrix, range, percentiles)"},
    {"overlay", (PyCFunction)(void (*)(void))py_overlay, METH_VARARGS | METH_KEYWORDS,
     "overlay(image, *, percentiles, rect, opacity, scale, markers, clipping, clip_warning, "
     "matrix, range, backend, bit_depth, format)"},
    {"temporal_new", py_temporal_new, METH_VARARGS, "temporal_new(window, cut_threshold)"},
    {"temporal_reset", py_temporal_reset, METH_O, "temporal_reset(capsule)"},
    {"set_errors", py_set_errors, METH_O, "set_errors((Error, by -status ...))"},
    {"device_time", py_device_time, METH_NOARGS, "this thread's CUDA context's GPU time"},
    {"version", py_version, METH_NOARGS, "the library's version"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    .m_base = PyModuleDef_HEAD_INIT,
    .m_name = "_lumahist",
    .m_doc = "lumahist's C extension (use the lumahist package)",
    .m_size = -1,
    .m_methods = methods,
};

PyMODINIT_FUNC PyInit__lumahist(void);

PyMODINIT_FUNC PyInit__lumahist(void)
{
  return PyModule_Create(&module);
}
