/* _lumahist.c: the Python extension over lumahist.h: frames from arrays
 * that export the buffer protocol (NumPy, Pillow, bytes-like), read in
 * place; analysis, equalization, CLAHE and LUTs with the GIL released; the
 * library's failures as lumahist.Error subclasses.  lumahist/__init__.py
 * wraps it in the documented API. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lhio.h"
#include "lumahist.h"
#include "module.h"
#include "stats-object.h"

/* The capsule that holds a TemporalBox (lumahist.Temporal). */
#define TEMPORAL_CAPSULE "lumahist.LhTemporal"

/* A Temporal's state and its lock: equalize and clahe run with the GIL
 * released, and two threads passing one Temporal would otherwise update its
 * window at once (or free it, on a frame of another size, under the other's
 * feet).  Held around each call that uses it and around reset(). */
typedef struct {
  LhTemporal *temporal;
  pthread_mutex_t lock;
} TemporalBox;

/* Names looked up at every call, made once (interned): the attribute of
 * CUDA arrays and the keys of its dict. */
static PyObject *cuda_interface_name, *shape_key, *typestr_key, *data_key, *strides_key,
    *stream_key;

static int intern_names(void)
{
  struct {
    PyObject **slot;
    const char *text;
  } names[] = {{&cuda_interface_name, "__cuda_array_interface__"},
               {&shape_key, "shape"},
               {&typestr_key, "typestr"},
               {&data_key, "data"},
               {&strides_key, "strides"},
               {&stream_key, "stream"}};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (!*names[i].slot && !(*names[i].slot = PyUnicode_InternFromString(names[i].text)))
      return -1;
  return 0;
}

/* object.__cuda_array_interface__ read once: 1 and *value, or 0 where the
 * object has none, as hasattr() sees it (any exception that reading it
 * raises means none).  Reading it twice, as hasattr() then getattr() did,
 * ran the producer's property twice: PyTorch's is Python code. */
static int cuda_interface_of(PyObject *object, PyObject **value)
{
#if PY_VERSION_HEX >= 0x030D0000
  int found = PyObject_GetOptionalAttr(object, cuda_interface_name, value);
#else
  int found = _PyObject_LookupAttr(object, cuda_interface_name, value);
#endif
  if (found < 0) {
    PyErr_Clear();
    *value = NULL;
    return 0;
  }
  return found;
}

/* Error classes, by LhStatus: set by the package at import (set_errors). */
static PyObject *error_classes[9];

PyObject *raise_status(int status)
{
  return raise_message(status, lh_last_error());
}

PyObject *raise_message(int status, const char *message)
{
  PyObject *text = PyUnicode_FromString(message);
  if (!text)
    return NULL;
  raise_message_object(status, text);
  Py_DECREF(text);
  return NULL;
}

PyObject *raise_file_error(int status, PyObject *message, int os_error, const char *path)
{
  if (status != LH_ERROR_IO || os_error == 0 || !error_classes[-LH_ERROR_IO])
    return raise_message_object(status, message);
  PyObject *filename = PyUnicode_DecodeFSDefault(path);
  if (!filename)
    return NULL;
  PyObject *args = Py_BuildValue("(OiiO)", message, status, os_error, filename);
  Py_DECREF(filename);
  if (args) {
    PyErr_SetObject(error_classes[-LH_ERROR_IO], args);
    Py_DECREF(args);
  }
  return NULL;
}

PyObject *raise_message_object(int status, PyObject *message)
{
  int index = -status;
  PyObject *cls = index >= 1 && index <= 8 && error_classes[index] ? error_classes[index]
                  : error_classes[0]                               ? error_classes[0]
                                                                   : PyExc_RuntimeError;
  PyObject *args = Py_BuildValue("(Oi)", message, status);
  if (args) {
    PyErr_SetObject(cls, args);
    Py_DECREF(args);
  }
  return NULL;
}

PyObject *raise_invalid(const char *message)
{
  lh_set_error(LH_ERROR_INVALID_ARGUMENT, "%s", message);
  return raise_status(LH_ERROR_INVALID_ARGUMENT);
}

/* One context per backend per thread, and for CUDA (and AUTO) one per
 * device, made on first use: contexts are not shared between threads,
 * making one (CUDA's start-up) is slow, and a CUDA context works on its own
 * device only (an array in device 1's memory needs a context made there).
 * They are freed when their thread ends (a pthread key's destructor, which
 * runs then without Python): the threads of a pool or of a DataLoader come
 * and go, and each left its contexts behind (device buffers and pinned
 * memory on the GPU). */
#define MAX_DEVICES 64

typedef struct {
  LhContext *cpu;
  /* [0]: AUTO, [1]: CUDA; by device + 1, [0] for no usable device (AUTO's
   * CPU fallback, CUDA's error) */
  LhContext *on_device[2][MAX_DEVICES + 1];
} ThreadContexts;

static _Thread_local ThreadContexts *thread_contexts;
static pthread_key_t contexts_key;
static pthread_once_t contexts_key_once = PTHREAD_ONCE_INIT;
static bool contexts_key_made;

static void thread_contexts_free(void *value)
{
  ThreadContexts *contexts = value;
  lh_context_free(contexts->cpu);
  for (int b = 0; b < 2; b++)
    for (int d = 0; d <= MAX_DEVICES; d++)
      lh_context_free(contexts->on_device[b][d]);
  free(contexts);
}

static void contexts_key_make(void)
{
  contexts_key_made = pthread_key_create(&contexts_key, thread_contexts_free) == 0;
}

static LhContext **context_slot(ThreadContexts *contexts, LhBackend backend, int device)
{
  if (backend == LH_BACKEND_CPU)
    return &contexts->cpu;
  return &contexts->on_device[backend == LH_BACKEND_CUDA][device + 1];
}

/* The context of this thread for backend, on device (-1: none usable). */
static LhContext *context_on(LhBackend backend, int device)
{
  if (device >= MAX_DEVICES) {
    lh_set_error(LH_ERROR_UNSUPPORTED, "CUDA device %d: the module serves devices 0 to %d", device,
                 MAX_DEVICES - 1);
    raise_status(LH_ERROR_UNSUPPORTED);
    return NULL;
  }
  if (!thread_contexts) {
    ThreadContexts *contexts = calloc(1, sizeof *contexts);
    if (!contexts)
      return PyErr_NoMemory(), NULL;
    pthread_once(&contexts_key_once, contexts_key_make);
    /* Without a key (none left), kept for the process, as before. */
    if (contexts_key_made)
      pthread_setspecific(contexts_key, contexts);
    thread_contexts = contexts;
  }
  LhContext **slot = context_slot(thread_contexts, backend, device);
  if (!*slot) {
    int status;
    PyThreadState *released = PyEval_SaveThread();
    status = backend == LH_BACKEND_CPU ? lh_context_new(backend, slot)
                                       : lh_context_new_on_device(backend, device, slot);
    PyEval_RestoreThread(released);
    if (status < 0) {
      *slot = NULL;
      raise_status(status);
      return NULL;
    }
  }
  return *slot;
}

/* How an array holds a frame of each format: the shapes that NumPy and
 * OpenCV users hold (OpenCV's (H * 3 / 2) x W for I420 and NV12, H x W x 2
 * for YUY2), with the library's facts (lh_format_plane_size) deciding the
 * rest. */
typedef enum {
  SHAPE_NONE,   /* no array convention: a format newer than this table */
  SHAPE_GRAY,   /* H x W samples */
  SHAPE_PIXELS, /* H x W x C samples, C those of a pixel */
  SHAPE_WORDS,  /* H x W 32-bit words, one a pixel (10-bit packed R'G'B') */
  SHAPE_PLANES, /* the whole buffer: every plane, one after another, in rows
                   of the Y plane's width and stride */
  SHAPE_PAIRS,  /* packed 4:2:2: H x W x 2 bytes, or H x 2W */
  SHAPE_BYTES,  /* v210: H rows of bytes, 16 for each group of 6 pixels */
} ArrayShape;

typedef struct {
  ArrayShape shape;
  int channels;     /* SHAPE_PIXELS: samples a pixel */
  int sample_bytes; /* of the array's elements */
  bool big_endian;  /* the format's samples (GRAY16_BE, r210's words) */
} FormatArray;

static const FormatArray format_arrays[LH_FORMAT_COUNT] = {
    [LH_FORMAT_GRAY8] = {SHAPE_GRAY, 1, 1, false},
    [LH_FORMAT_GRAY16] = {SHAPE_GRAY, 1, 2, false},
    [LH_FORMAT_GRAY16_BE] = {SHAPE_GRAY, 1, 2, true},
    [LH_FORMAT_RGB] = {SHAPE_PIXELS, 3, 1, false},
    [LH_FORMAT_BGR] = {SHAPE_PIXELS, 3, 1, false},
    [LH_FORMAT_RGBA] = {SHAPE_PIXELS, 4, 1, false},
    [LH_FORMAT_BGRA] = {SHAPE_PIXELS, 4, 1, false},
    [LH_FORMAT_RGBX] = {SHAPE_PIXELS, 4, 1, false},
    [LH_FORMAT_BGRX] = {SHAPE_PIXELS, 4, 1, false},
    [LH_FORMAT_RGB16] = {SHAPE_PIXELS, 3, 2, false},
    [LH_FORMAT_RGBA16] = {SHAPE_PIXELS, 4, 2, false},
    [LH_FORMAT_BGRA16] = {SHAPE_PIXELS, 4, 2, false},
    [LH_FORMAT_RGB10A2_LE] = {SHAPE_WORDS, 1, 4, false},
    [LH_FORMAT_BGR10A2_LE] = {SHAPE_WORDS, 1, 4, false},
    [LH_FORMAT_R210] = {SHAPE_WORDS, 1, 4, true},
    [LH_FORMAT_I420] = {SHAPE_PLANES, 1, 1, false},
    [LH_FORMAT_YV12] = {SHAPE_PLANES, 1, 1, false},
    [LH_FORMAT_NV12] = {SHAPE_PLANES, 1, 1, false},
    [LH_FORMAT_NV21] = {SHAPE_PLANES, 1, 1, false},
    [LH_FORMAT_Y42B] = {SHAPE_PLANES, 1, 1, false},
    [LH_FORMAT_Y444] = {SHAPE_PLANES, 1, 1, false},
    [LH_FORMAT_NV16] = {SHAPE_PLANES, 1, 1, false},
    [LH_FORMAT_NV24] = {SHAPE_PLANES, 1, 1, false},
    [LH_FORMAT_Y41B] = {SHAPE_PLANES, 1, 1, false},
    [LH_FORMAT_P010] = {SHAPE_PLANES, 1, 2, false},
    [LH_FORMAT_P012] = {SHAPE_PLANES, 1, 2, false},
    [LH_FORMAT_P016] = {SHAPE_PLANES, 1, 2, false},
    [LH_FORMAT_I420_10LE] = {SHAPE_PLANES, 1, 2, false},
    [LH_FORMAT_I420_12LE] = {SHAPE_PLANES, 1, 2, false},
    [LH_FORMAT_I422_10LE] = {SHAPE_PLANES, 1, 2, false},
    [LH_FORMAT_I422_12LE] = {SHAPE_PLANES, 1, 2, false},
    [LH_FORMAT_Y444_10LE] = {SHAPE_PLANES, 1, 2, false},
    [LH_FORMAT_Y444_12LE] = {SHAPE_PLANES, 1, 2, false},
    [LH_FORMAT_Y444_16LE] = {SHAPE_PLANES, 1, 2, false},
    [LH_FORMAT_YUY2] = {SHAPE_PAIRS, 2, 1, false},
    [LH_FORMAT_YVYU] = {SHAPE_PAIRS, 2, 1, false},
    [LH_FORMAT_UYVY] = {SHAPE_PAIRS, 2, 1, false},
    [LH_FORMAT_VYUY] = {SHAPE_PAIRS, 2, 1, false},
    [LH_FORMAT_V210] = {SHAPE_BYTES, 1, 1, false},
};

/* An array as the buffer protocol or __cuda_array_interface__ describes it. */
typedef struct {
  void *data;
  int ndim;
  Py_ssize_t shape[3];
  Py_ssize_t strides[3];
  int itemsize;    /* 0: not an unsigned integer of 1, 2 or 4 bytes */
  bool big_endian; /* its elements */
  char type[32];   /* the element type as NumPy names it, for messages */
} ArrayView;

/* A frame over an array (the shapes of format_arrays); rows may be padded
 * (any row stride), but each row's samples must be packed. */
typedef struct {
  Py_buffer view;
  bool held;
  LhFrame frame;
  bool on_device;  /* a CUDA array (__cuda_array_interface__), read in place */
  bool has_stream; /* its producer named a stream that the work is queued on */
  void *stream;    /* that cudaStream_t (1: the legacy default stream, 2: per-thread) */
  char *begin;     /* the bytes the array's elements span: [begin, end) */
  char *end;
  void *copy; /* an overlapped input's own copy (free) */
} ArrayFrame;

/* The bytes an array's elements span, whatever the signs of its strides. */
static void view_extent(const ArrayView *a, ArrayFrame *frame)
{
  Py_ssize_t low = 0, high = a->itemsize;
  for (int i = 0; i < a->ndim && i < 3; i++) {
    Py_ssize_t reach = (a->shape[i] - 1) * a->strides[i];
    if (reach < 0)
      low += reach;
    else
      high += reach;
  }
  frame->begin = (char *)a->data + low;
  frame->end = (char *)a->data + high;
}

static void array_frame_release(ArrayFrame *a)
{
  if (a->held)
    PyBuffer_Release(&a->view);
  a->held = false;
  free(a->copy);
  a->copy = NULL;
}

/* The context for array a's frame (NULL: none yet, a file's): a CUDA
 * array's on the device whose memory it is in, anything else's on the
 * thread's current device, as PyTorch and CuPy put new work. */
static LhContext *context_for(LhBackend backend, const ArrayFrame *a)
{
  if (backend == LH_BACKEND_CPU)
    return context_on(backend, -1);
  int device = a && a->on_device ? lh_device_of(a->frame.planes[0]) : -1;
  return context_on(backend, device >= 0 ? device : lh_device_current());
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

/* The format of an array that names none: gray, RGB or RGBA by its shape,
 * 8 or 16 bits by its elements (big-endian 16-bit gray: GRAY16_BE). */
static int infer_format(const ArrayView *a, Py_ssize_t channels, LhFormat *format, const char *what)
{
  char message[256];
  static const LhFormat by_channels[2][5] = {
      {0, LH_FORMAT_GRAY8, 0, LH_FORMAT_RGB, LH_FORMAT_RGBA},
      {0, LH_FORMAT_GRAY16, 0, LH_FORMAT_RGB16, LH_FORMAT_RGBA16},
  };
  if (a->itemsize == 4) {
    snprintf(message, sizeof message,
             "%s: an array of 32-bit words: name its format (format=\"RGB10A2_LE\", "
             "\"BGR10A2_LE\" or \"R210\")",
             what);
    return raise_invalid(message), -1;
  }
  if (channels != 1 && channels != 3 && channels != 4) {
    snprintf(message, sizeof message,
             "%s: %zd channels: 1, 3 or 4 expected, or name the format (format=\"YUY2\", ...)",
             what, channels);
    return raise_invalid(message), -1;
  }
  if (a->big_endian && channels != 1) {
    snprintf(message, sizeof message,
             "%s: big-endian 16-bit colour has no format: pass the array as little-endian "
             "(array.astype('<u2'))",
             what);
    return raise_invalid(message), -1;
  }
  *format = a->big_endian ? LH_FORMAT_GRAY16_BE : by_channels[a->itemsize == 2][channels];
  return 0;
}

/* The elements that a frame of this shape needs, for messages. */
static const char *shape_wanted(ArrayShape shape)
{
  switch (shape) {
  case SHAPE_GRAY:
    return "an H x W array";
  case SHAPE_PIXELS:
    return "an H x W x C array, C the samples of its pixels";
  case SHAPE_WORDS:
    return "an H x W array of 32-bit words";
  case SHAPE_PLANES:
    return "a 2-D array of its planes' rows, one plane after another ((H * 3 / 2) x W for 4:2:0)";
  case SHAPE_PAIRS:
    return "an H x W x 2 or an H x 2W array of bytes";
  case SHAPE_BYTES:
    return "an H x (bytes a row) array of bytes";
  default:
    return "an array";
  }
}

/* The height of a SHAPE_PLANES frame of this width and stride whose planes
 * take `rows` rows: the one whose buffer (lh_frame_buffer_size), at the
 * array's stride, ends in the last of them.  The rows it takes grow with
 * the height (each adds a Y row at least), so there is one or none. */
static size_t plane_rows(LhFormat format, int width, int height, size_t stride)
{
  size_t size = lh_frame_buffer_size(format, width, height, stride);
  return size == 0 ? SIZE_MAX : (size - 1) / stride + 1;
}

static int planes_height(LhFormat format, int width, Py_ssize_t rows, size_t stride, int *height,
                         const char *what)
{
  int low = 1, high = rows > INT32_MAX ? INT32_MAX : (int)rows;
  while (low < high) {
    int middle = low + (high - low) / 2;
    if (plane_rows(format, width, middle, stride) >= (size_t)rows)
      high = middle;
    else
      low = middle + 1;
  }
  if (plane_rows(format, width, low, stride) == (size_t)rows) {
    *height = low;
    return 0;
  }
  char message[400];
  const int shorter = low > 1 ? low - 1 : 1;
  snprintf(message, sizeof message,
           "%s: %zd rows are not the planes of any %s frame %d wide at a stride of %zu bytes: "
           "a frame %d high takes %zu rows (its Y plane and its chroma), one %d high %zu",
           what, rows, lh_format_name(format), width, stride, shorter,
           plane_rows(format, width, shorter, stride), low, plane_rows(format, width, low, stride));
  return raise_invalid(message), -1;
}

/* Every byte of every plane's rows that the library reads or writes is an
 * element of the array: a frame over a view must not reach past its rows,
 * nor into the gaps between them (where a planar format's half-stride
 * chroma rows lie when the view is a slice of a wider buffer). */
static int check_planes_inside(const ArrayView *a, const LhFrame *frame, const char *what)
{
  const size_t stride = (size_t)a->strides[0], rows = (size_t)a->shape[0];
  const size_t row = (size_t)(a->shape[1] * (a->ndim == 3 ? a->shape[2] : 1) * a->itemsize);
  const size_t end = stride * (rows - 1) + row;
  for (int p = 0; p < 3; p++) {
    size_t row_bytes;
    int plane_rows;
    if (lh_format_plane_size(frame->format, p, frame->width, frame->height, &row_bytes,
                             &plane_rows) < 0)
      return raise_status(LH_ERROR_INVALID_ARGUMENT), -1;
    if (plane_rows == 0)
      continue;
    const size_t start = (size_t)((const char *)frame->planes[p] - (const char *)frame->planes[0]);
    const size_t plane_stride = frame->strides[p];
    const size_t last = start + (size_t)(plane_rows - 1) * plane_stride;
    /* Rows without gaps between them are one run of bytes; rows whose stride
     * is a multiple of the array's all start at the same column.  Only
     * other strides (I420's halved one in a padded view) need each row. */
    if (stride == row ? last + row_bytes <= end
                      : plane_stride % stride == 0 && start % stride + row_bytes <= row &&
                            last / stride < rows)
      continue;
    for (int i = 0; i < plane_rows; i++) {
      const size_t offset = start + (size_t)i * plane_stride;
      bool inside = stride == row ? offset + row_bytes <= end
                                  : offset / stride < rows && offset % stride + row_bytes <= row;
      if (inside)
        continue;
      char message[400];
      if (offset + row_bytes > end)
        snprintf(message, sizeof message,
                 "%s: the %s frame's plane %d ends past the array (row %d of %zu bytes at byte "
                 "%zu, the array's elements end at %zu)",
                 what, lh_format_name(frame->format), p, i, row_bytes, offset, end);
      else
        snprintf(message, sizeof message,
                 "%s: row %d of plane %d of the %s frame lies in the gap between the array's "
                 "rows (a slice of a wider buffer leaves the chroma out): pass the buffer's "
                 "whole rows with width=%d",
                 what, i, p, lh_format_name(frame->format), frame->width);
      return raise_invalid(message), -1;
    }
  }
  return 0;
}

/* The frame over an array a in memory: its format format_name (NULL: from
 * its shape and elements), width the frame's when its rows hold more than
 * the pixels (0: from its shape). */
static int frame_from_view(const ArrayView *a, LhMemory memory, const char *format_name, int width,
                           int bit_depth, const char *what, LhFrame *frame)
{
  char message[400];
  if (a->itemsize == 0) {
    snprintf(message, sizeof message,
             "%s: elements of type %s: uint8 or uint16 (uint32 for the packed 10-bit R'G'B' "
             "formats)",
             what, a->type);
    return raise_invalid(message), -1;
  }
  if (a->ndim != 2 && a->ndim != 3) {
    snprintf(message, sizeof message,
             "%s: %d dimensions: H x W (gray, planes, words) or H x W x C expected", what, a->ndim);
    return raise_invalid(message), -1;
  }
  const Py_ssize_t rows = a->shape[0], columns = a->shape[1];
  const Py_ssize_t channels = a->ndim == 3 ? a->shape[2] : 1;
  if (rows < 1 || columns < 1 || channels < 1) {
    snprintf(message, sizeof message, "%s: an empty array (%zd x %zd x %zd)", what, rows, columns,
             channels);
    return raise_invalid(message), -1;
  }
  if (rows > INT32_MAX || columns > INT32_MAX) {
    snprintf(message, sizeof message, "%s: %zd x %zd is too large", what, rows, columns);
    return raise_invalid(message), -1;
  }
  if (channels > 4) {
    snprintf(message, sizeof message, "%s: %zd channels: 1 to 4 expected", what, channels);
    return raise_invalid(message), -1;
  }
  /* Each row's samples packed; rows at any positive stride. */
  const Py_ssize_t row_bytes = columns * channels * a->itemsize;
  if ((a->ndim == 3 && a->strides[2] != a->itemsize) ||
      a->strides[1] != (Py_ssize_t)(channels * a->itemsize)) {
    snprintf(message, sizeof message,
             "%s: the samples of a row are not packed (strides %zd, %zd%s); pass a contiguous "
             "copy (numpy.ascontiguousarray)",
             what, a->strides[0], a->strides[1], a->ndim == 3 ? ", ..." : "");
    return raise_invalid(message), -1;
  }
  /* Packed rows that go upwards (image[::-1]) or overlap (broadcast_to) were
   * said to be rows whose samples are not packed. */
  if (a->strides[0] < row_bytes) {
    snprintf(message, sizeof message,
             "%s: %s (row stride %zd, a row %zd bytes); pass a contiguous copy "
             "(numpy.ascontiguousarray)",
             what,
             a->strides[0] < 0 ? "the rows go upwards in memory (a flipped view, image[::-1])"
                               : "the rows overlap in memory",
             a->strides[0], row_bytes);
    return raise_invalid(message), -1;
  }

  LhFormat format;
  if (format_name) {
    if (lh_format_from_name(format_name, &format) < 0) {
      snprintf(message, sizeof message,
               "%s: unknown format '%s' (lumahist.FORMATS lists the names)", what, format_name);
      return raise_invalid(message), -1;
    }
  } else if (infer_format(a, channels, &format, what) < 0) {
    return -1;
  }
  const FormatArray *fa = &format_arrays[format];
  const char *name = lh_format_name(format);
  if (fa->shape == SHAPE_NONE) {
    snprintf(message, sizeof message, "%s: the Python module has no array layout for %s", what,
             name);
    lh_set_error(LH_ERROR_UNSUPPORTED, "%s", message);
    return raise_status(LH_ERROR_UNSUPPORTED), -1;
  }
  if (a->itemsize != fa->sample_bytes) {
    static const char *const types[] = {"", "uint8", "uint16", "", "uint32"};
    snprintf(message, sizeof message, "%s: %s is held in %s arrays, not in %s ones", what, name,
             types[fa->sample_bytes], a->type);
    return raise_invalid(message), -1;
  }
  if (a->itemsize > 1 && a->big_endian != fa->big_endian) {
    if (fa->big_endian)
      snprintf(message, sizeof message,
               "%s: %s's samples are big-endian: pass a '>u%d' array (array.astype('>u%d') "
               "of the values, or array.view('>u%d') of bytes already in that order)",
               what, name, a->itemsize, a->itemsize, a->itemsize);
    else
      snprintf(message, sizeof message,
               "%s: %s's samples are little-endian, the array's big-endian%s", what, name,
               format == LH_FORMAT_GRAY16 ? ": that is GRAY16_BE" : "");
    return raise_invalid(message), -1;
  }

  /* The shape, and the width it gives. */
  bool fits;
  int shape_width = (int)columns;
  switch (fa->shape) {
  case SHAPE_PIXELS:
    fits = a->ndim == 3 && channels == fa->channels;
    break;
  case SHAPE_PAIRS:
    fits = channels == 2 || channels == 1;
    if (channels == 1)
      shape_width = (int)(columns / 2);
    break;
  case SHAPE_BYTES:
    fits = channels == 1;
    shape_width = (int)(columns / 16 * 6);
    break;
  default:
    fits = channels == 1;
  }
  if (!fits) {
    char shape[64] = "";
    if (a->ndim == 3)
      snprintf(shape, sizeof shape, " x %zd", channels);
    snprintf(message, sizeof message, "%s: %s wants %s%s, not %zd x %zd%s", what, name,
             shape_wanted(fa->shape),
             fa->shape == SHAPE_PIXELS ? (fa->channels == 3 ? " (C = 3)" : " (C = 4)") : "", rows,
             columns, shape);
    return raise_invalid(message), -1;
  }
  const bool rows_of_bytes =
      fa->shape == SHAPE_PLANES || fa->shape == SHAPE_PAIRS || fa->shape == SHAPE_BYTES;
  if (width < 0 || (width > 0 && !rows_of_bytes && width != shape_width)) {
    snprintf(message, sizeof message,
             "%s: width=%d: a %s array's width is its shape's (%d); width= is for the YUV "
             "formats whose arrays hold rows of planes or bytes",
             what, width, name, shape_width);
    return raise_invalid(message), -1;
  }
  const int frame_width = width > 0 ? width : shape_width;
  size_t frame_row = 0;
  int unused;
  if (frame_width > 0)
    lh_format_plane_size(format, 0, frame_width, 1, &frame_row, &unused);
  /* Without width=, the rows are exactly the pixels' (no padding in them
   * to mistake for pixels); with it, the rows may hold more. */
  if (frame_width < 1 || frame_row > (size_t)row_bytes ||
      (width == 0 && frame_row != (size_t)row_bytes)) {
    if (width > 0)
      snprintf(message, sizeof message,
               "%s: a %s row %d pixels wide is %zu bytes, more than the array's rows (%zd)", what,
               name, width, frame_row, row_bytes);
    else
      snprintf(message, sizeof message,
               "%s: rows of %zd bytes are not rows of %s pixels (%s): give the frame's width "
               "with width=",
               what, row_bytes, name,
               fa->shape == SHAPE_BYTES   ? "16 bytes for each group of 6"
               : fa->shape == SHAPE_PAIRS ? "an odd width takes its last pair whole"
                                          : "as wide as the array");
    return raise_invalid(message), -1;
  }

  int height = (int)rows;
  const size_t stride = (size_t)a->strides[0];
  if (fa->shape == SHAPE_PLANES &&
      planes_height(format, frame_width, rows, stride, &height, what) < 0)
    return -1;
  if (lh_frame_init(frame, format, memory, frame_width, height, a->data, stride) < 0)
    return raise_status(LH_ERROR_INVALID_ARGUMENT), -1;
  if (check_planes_inside(a, frame, what) < 0)
    return -1;
  frame->bit_depth = bit_depth;
  return 0;
}

/* The element type of a buffer-protocol format ("B", "<H", ">I", ...):
 * itemsize and byte order for unsigned integers of 1, 2 or 4 bytes. */
static void view_type_from_buffer(const Py_buffer *v, ArrayView *a)
{
  const char *format = v->format ? v->format : "B";
  char order = *format;
  if (order == '<' || order == '>' || order == '!' || order == '=' || order == '@')
    format++;
  const bool unsigned_type = format[0] && strchr("BHILQ", format[0]) && format[1] == '\0';
  const bool signed_type = format[0] && strchr("bhilq", format[0]) && format[1] == '\0';
  const bool float_type = format[0] && strchr("efd", format[0]) && format[1] == '\0';
  const int size = (int)v->itemsize;
  a->itemsize = unsigned_type && (size == 1 || size == 2 || size == 4) ? size : 0;
  a->big_endian = order == '>' || order == '!' ||
                  (order != '<' && PY_BIG_ENDIAN); /* native: this host's order */
  /* NumPy's names, which the caller knows the array by. */
  if (unsigned_type || signed_type || float_type)
    snprintf(a->type, sizeof a->type, "%s%s%d%s", unsigned_type ? "uint" : "",
             signed_type  ? "int"
             : float_type ? "float"
                          : "",
             8 * size, size > 1 && a->big_endian != (bool)PY_BIG_ENDIAN ? " (byte-swapped)" : "");
  else
    snprintf(a->type, sizeof a->type, "%s", v->format ? v->format : "?");
}

/* The element type of a __cuda_array_interface__ typestr ("|u1", "<u2"). */
static void view_type_from_typestr(const char *typestr, ArrayView *a)
{
  snprintf(a->type, sizeof a->type, "%s", typestr ? typestr : "?");
  a->itemsize = 0;
  if (!typestr || strlen(typestr) != 3 || typestr[1] != 'u' || !strchr("<>|=", typestr[0]))
    return;
  const int size = typestr[2] - '0';
  a->itemsize = size == 1 || size == 2 || size == 4 ? size : 0;
  a->big_endian = typestr[0] == '>' || (typestr[0] == '=' && PY_BIG_ENDIAN);
}

/* A CUDA array (CuPy, PyTorch, Numba: __cuda_array_interface__ version 2 or
 * 3) as a frame in device memory, read and written where it is. */
static int device_frame_get(ArrayFrame *a, PyObject *interface, const char *format_name, int width,
                            int bit_depth, bool writable, const char *what)
{
  char message[256];
  PyObject *shape = PyDict_Check(interface) ? PyDict_GetItemWithError(interface, shape_key) : NULL;
  PyObject *typestr =
      PyDict_Check(interface) ? PyDict_GetItemWithError(interface, typestr_key) : NULL;
  PyObject *data = PyDict_Check(interface) ? PyDict_GetItemWithError(interface, data_key) : NULL;
  PyObject *strides =
      PyDict_Check(interface) ? PyDict_GetItemWithError(interface, strides_key) : NULL;
  PyObject *stream =
      PyDict_Check(interface) ? PyDict_GetItemWithError(interface, stream_key) : NULL;
  if (!shape || !PyTuple_Check(shape) || !typestr || !PyUnicode_Check(typestr) || !data ||
      !PyTuple_Check(data) || PyTuple_GET_SIZE(data) != 2) {
    snprintf(message, sizeof message, "%s: a malformed __cuda_array_interface__", what);
    return raise_invalid(message), -1;
  }
  ArrayView view = {.ndim = (int)PyTuple_GET_SIZE(shape)};
  view_type_from_typestr(PyUnicode_AsUTF8(typestr), &view);
  if (PyErr_Occurred())
    return -1;
  if (view.ndim != 2 && view.ndim != 3) {
    snprintf(message, sizeof message, "%s: a CUDA array of %d dimensions: H x W or H x W x C", what,
             view.ndim);
    return raise_invalid(message), -1;
  }
  for (int i = 0; i < view.ndim; i++)
    view.shape[i] = PyLong_AsSsize_t(PyTuple_GET_ITEM(shape, i));
  /* Absent strides: C order. */
  view.strides[view.ndim - 1] = view.itemsize;
  for (int i = view.ndim - 2; i >= 0; i--)
    view.strides[i] = view.strides[i + 1] * view.shape[i + 1];
  if (strides && strides != Py_None) {
    if (!PyTuple_Check(strides) || PyTuple_GET_SIZE(strides) != view.ndim)
      return raise_invalid("a malformed __cuda_array_interface__ (strides)"), -1;
    for (int i = 0; i < view.ndim; i++)
      view.strides[i] = PyLong_AsSsize_t(PyTuple_GET_ITEM(strides, i));
  }
  if (PyErr_Occurred())
    return -1;
  if (writable && PyObject_IsTrue(PyTuple_GET_ITEM(data, 1)) == 1) {
    snprintf(message, sizeof message, "%s: a read-only CUDA array", what);
    return raise_invalid(message), -1;
  }
  view.data = PyLong_AsVoidPtr(PyTuple_GET_ITEM(data, 0));
  if (PyErr_Occurred())
    return -1;
  if (frame_from_view(&view, LH_MEMORY_CUDA, format_name, width, bit_depth, what, &a->frame) < 0)
    return -1;
  view_extent(&view, a);
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
 * and the elements, width 0 the width from the shape.  writable: the array
 * is written (out=). */
static int array_frame_get(ArrayFrame *a, PyObject *object, const char *format_name, int width,
                           int bit_depth, bool writable, const char *what)
{
  memset(a, 0, sizeof *a);
  PyObject *interface;
  if (cuda_interface_of(object, &interface)) {
    int status = device_frame_get(a, interface, format_name, width, bit_depth, writable, what);
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
  const Py_buffer *v = &a->view;
  ArrayView view = {.data = v->buf, .ndim = v->ndim};
  view_type_from_buffer(v, &view);
  /* A buffer may give no strides (ctypes arrays do): it is then in C
   * order, each row following the last. */
  Py_ssize_t c_stride = v->itemsize;
  for (int i = v->ndim - 1; i >= 0; i--) {
    if (i < 3) {
      view.shape[i] = v->shape[i];
      view.strides[i] = v->strides ? v->strides[i] : c_stride;
    }
    c_stride *= v->shape[i];
  }
  if (frame_from_view(&view, LH_MEMORY_HOST, format_name, width, bit_depth, what, &a->frame) < 0) {
    array_frame_release(a);
    return -1;
  }
  view_extent(&view, a);
  return 0;
}

/* The library rewrites in place only where out is the input itself: an out
 * that overlaps the input otherwise would have its samples read after
 * they were written.  Such an input on the host is read from a copy of its
 * bytes (as NumPy does for overlapping operands); on the device it is
 * refused.  0, or -1 with the exception set. */
static int input_apart_from(ArrayFrame *in, const ArrayFrame *out)
{
  bool overlap = in->begin < out->end && out->begin < in->end;
  bool same =
      in->frame.planes[0] == out->frame.planes[0] && in->frame.strides[0] == out->frame.strides[0];
  if (!overlap || same)
    return 0;
  if (in->on_device)
    return raise_invalid("out: overlaps the image without being it; give the image itself (in "
                         "place) or an array apart from it"),
           -1;
  size_t size = (size_t)(in->end - in->begin);
  in->copy = malloc(size ? size : 1);
  if (!in->copy)
    return PyErr_NoMemory(), -1;
  memcpy(in->copy, in->begin, size);
  for (int i = 0; i < 3; i++)
    if (in->frame.planes[i])
      in->frame.planes[i] = (char *)in->copy + ((char *)in->frame.planes[i] - in->begin);
  return 0;
}

int parse_common(const char *matrix_name, const char *range_name, const char *backend_name,
                 LhMatrix *matrix, LhRange *range, LhBackend *backend)
{
  if (lh_matrix_from_name(matrix_name, matrix) < 0 || lh_range_from_name(range_name, range) < 0 ||
      lh_backend_from_name(backend_name, backend) < 0) {
    raise_status(LH_ERROR_INVALID_ARGUMENT);
    return -1;
  }
  return 0;
}

/* A NumPy float of fewer than 64 bits (np.float32(99.9), an element of a
 * float32 array) as the number it prints as: its value widened is
 * 99.9000015258789, which keyed its percentile so, and s.percentiles[99.9]
 * was a KeyError.  NULL without an error for anything else. */
static PyObject *narrow_float_as_written(PyObject *item)
{
  if (PyFloat_Check(item) || PyLong_Check(item) || !PyObject_HasAttrString(item, "dtype"))
    return NULL;
  PyObject *dtype = PyObject_GetAttrString(item, "dtype");
  PyObject *kind = dtype ? PyObject_GetAttrString(dtype, "kind") : NULL;
  PyObject *size = dtype ? PyObject_GetAttrString(dtype, "itemsize") : NULL;
  PyObject *number = NULL;
  if (kind && size && PyUnicode_Check(kind) && PyUnicode_CompareWithASCIIString(kind, "f") == 0 &&
      PyLong_Check(size) && PyLong_AsLong(size) < 8) {
    PyObject *text = PyObject_Str(item);
    number = text ? PyFloat_FromString(text) : NULL;
    Py_XDECREF(text);
  }
  Py_XDECREF(size);
  Py_XDECREF(kind);
  Py_XDECREF(dtype);
  /* Anything odd on the way (a dtype without these): read as float() reads it. */
  if (!number)
    PyErr_Clear();
  return number;
}

/* The percentiles asked for: None (the median alone) or an iterable of
 * numbers, each read as float() reads it, into options.  The library's
 * parser reads them from text; each float goes to it as its repr() (the
 * shortest text that reads back as it), so those that the parser takes
 * come here as they are, and any it would refuse (outside [0, 100], not
 * finite, more than LH_MAX_PERCENTILES) go to it as that text, for its own
 * message. */
int percentiles_from(PyObject *object, LhOptions *options)
{
  options->n_percentiles = 0;
  if (object == Py_None)
    return 0;
  /* Text iterates as characters: "59" would be 5 and 9, silently. */
  if (PyUnicode_Check(object) || PyBytes_Check(object) || PyByteArray_Check(object))
    return raise_invalid("percentiles: numbers, such as (5, 95), not text"), -1;
  PyObject *iterator = PyObject_GetIter(object);
  if (!iterator)
    return -1;
  double first[LH_MAX_PERCENTILES], *values = first;
  size_t n = 0, room = LH_MAX_PERCENTILES;
  bool taken = true; /* by the parser as they are */
  PyObject *item;
  while ((item = PyIter_Next(iterator))) {
    PyObject *number = narrow_float_as_written(item);
    if (!number && !PyErr_Occurred())
      number = PyNumber_Float(item);
    /* An integer past any double: refused as a percentile out of [0, 100] is. */
    if (!number && PyErr_ExceptionMatches(PyExc_OverflowError)) {
      PyErr_Clear();
      raise_out_of_range("percentiles", item);
    }
    Py_DECREF(item);
    if (!number)
      break;
    double p = PyFloat_AS_DOUBLE(number);
    Py_DECREF(number);
    if (n == room) {
      double *more = PyMem_Malloc(2 * room * sizeof *more);
      if (!more) {
        PyErr_NoMemory();
        break;
      }
      memcpy(more, values, n * sizeof *values);
      if (values != first)
        PyMem_Free(values);
      values = more;
      room *= 2;
    }
    values[n++] = p;
    if (!(isfinite(p) && p >= 0.0 && p <= 100.0))
      taken = false;
  }
  Py_DECREF(iterator);
  int status = 0;
  if (PyErr_Occurred()) {
    status = -1;
  } else if (taken && n <= LH_MAX_PERCENTILES) {
    memcpy(options->percentiles, values, n * sizeof *values);
    options->n_percentiles = (int)n;
  } else {
    /* The text lumahist.stats passed the library before. */
    PyObject *text = PyUnicode_FromString("");
    for (size_t i = 0; text && i < n; i++) {
      char *repr = PyOS_double_to_string(values[i], 'r', 0, Py_DTSF_ADD_DOT_0, NULL);
      PyObject *joined = repr ? PyUnicode_FromFormat("%U%s%s", text, i > 0 ? "," : "", repr) : NULL;
      PyMem_Free(repr);
      Py_SETREF(text, joined);
    }
    const char *list = text ? PyUnicode_AsUTF8(text) : NULL;
    if (!list)
      status = -1;
    else if (*list && lh_options_set_percentiles(options, list) < 0)
      status = (raise_status(LH_ERROR_INVALID_ARGUMENT), -1);
    Py_XDECREF(text);
  }
  if (values != first)
    PyMem_Free(values);
  return status;
}

int stats_options_from(const char *matrix_name, const char *range_name, const char *backend_name,
                       PyObject *percentiles, LhOptions *options, LhBackend *backend)
{
  lh_options_init(options);
  if (parse_common(matrix_name, range_name, backend_name, &options->matrix, &options->range,
                   backend) < 0)
    return -1;
  return percentiles_from(percentiles, options);
}

/* Analyses an array into *stats and, with overlay, draws the histogram into
 * it; *width and *height the frame's, *backend the backend used.  0, or -1
 * with the Python exception set. */
static int analyze_array(PyObject *image, const char *format_name, int frame_width, int bit_depth,
                         LhBackend asked, const LhOptions *options, const LhOverlayOptions *overlay,
                         LhStats *stats, int *width, int *height, LhBackend *backend)
{
  ArrayFrame a;
  if (array_frame_get(&a, image, format_name, frame_width, bit_depth, overlay != NULL,
                      overlay ? "out" : "image") < 0)
    return -1;
  LhContext *context = context_for(backend_for(asked, &a), &a);
  if (!context) {
    array_frame_release(&a);
    return -1;
  }
  int status;
  stream_begin(context, &a);
  PyThreadState *released = PyEval_SaveThread();
  status = lh_analyze(context, &a.frame, options, stats);
  /* Where it was analysed: AUTO on a GPU host chooses per array in host
   * memory. */
  *backend = lh_context_last_backend(context);
  if (status >= 0 && overlay)
    status = lh_overlay(context, &a.frame, stats, overlay);
  PyEval_RestoreThread(released);
  stream_end(context, &a);
  *width = a.frame.width;
  *height = a.frame.height;
  array_frame_release(&a);
  if (status < 0) {
    raise_status(status);
    return -1;
  }
  return 0;
}

/* stats(image, matrix, range, percentiles, roi, backend, bit_depth, format,
 * width), all given, in this order (lumahist.stats passes them): a Stats
 * over the library's result. */
static PyObject *py_stats(PyObject *self, PyObject *args)
{
  PyObject *image, *percentiles;
  const char *matrix_name, *range_name, *backend_name, *format_name;
  int roi[4];
  IntArgument bit_depth = {"bit_depth", 0}, frame_width = {"width", 0};
  if (!PyArg_ParseTuple(args, "OssO(iiii)sO&zO&", &image, &matrix_name, &range_name, &percentiles,
                        &roi[0], &roi[1], &roi[2], &roi[3], &backend_name, int_argument, &bit_depth,
                        &format_name, int_argument, &frame_width))
    return NULL;
  LhOptions options;
  LhBackend backend;
  if (stats_options_from(matrix_name, range_name, backend_name, percentiles, &options, &backend) <
      0)
    return NULL;
  options.roi = (LhRect){roi[0], roi[1], roi[2], roi[3]};
  StatsObject *result = stats_object_new(STATS_IMAGE);
  if (result &&
      analyze_array(image, format_name, frame_width.value, bit_depth.value, backend, &options, NULL,
                    &result->stats, &result->width, &result->height, &result->backend) < 0)
    Py_CLEAR(result);
  return (PyObject *)result;
}

/* Reads a PNG or JPEG file with lumahist's decoders (a colour JPEG's Y
 * component alone, as `lumahist stats` reads it) and analyses it: the
 * tool's record, decoder included, path the object given. */
static PyObject *py_stats_file(PyObject *self, PyObject *args, PyObject *kwargs)
{
  static char *keywords[] = {"path",    "matrix",     "range", "percentiles",
                             "backend", "max_pixels", NULL};
  PyObject *path, *path_bytes, *percentiles = Py_None;
  const char *matrix_name = "bt601", *range_name = "full", *backend_name = "auto";
  unsigned long long max_pixels = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|$ssOsK", keywords, &path, &matrix_name,
                                   &range_name, &percentiles, &backend_name, &max_pixels))
    return NULL;
  LhOptions options;
  LhBackend backend;
  if (stats_options_from(matrix_name, range_name, backend_name, percentiles, &options, &backend) <
      0)
    return NULL;
  if (!PyUnicode_FSConverter(path, &path_bytes))
    return NULL;
  LhContext *context = context_for(backend, NULL);
  StatsObject *result = context ? stats_object_new(STATS_IMAGE) : NULL;
  if (!result) {
    Py_DECREF(path_bytes);
    return NULL;
  }
  LhioImage image;
  int status;
  PyThreadState *released = PyEval_SaveThread();
  status = lhio_read(PyBytes_AS_STRING(path_bytes), LHIO_READ_LUMA, max_pixels, &image);
  if (status >= 0)
    status = lh_analyze(context, &image.frame, &options, &result->stats);
  PyEval_RestoreThread(released);
  Py_DECREF(path_bytes);
  if (status < 0) {
    raise_status(status);
    Py_CLEAR(result);
  } else {
    result->width = image.frame.width;
    result->height = image.frame.height;
    result->backend = lh_context_last_backend(context);
    Py_SETREF(result->path, Py_NewRef(path));
    Py_SETREF(result->decoder, PyUnicode_FromString(lhio_decoder_name(image.decoder)));
    if (image.converted_from)
      Py_SETREF(result->converted_from, PyUnicode_FromString(image.converted_from));
    if (!result->decoder || !result->converted_from)
      Py_CLEAR(result);
  }
  lhio_image_clear(&image);
  return (PyObject *)result;
}

/* equalize (global or CLAHE) and apply_lut: in into out (the same array for
 * in place). */
static PyObject *py_rewrite(PyObject *self, PyObject *args, PyObject *kwargs)
{
  static char *keywords[] = {"image",       "out",     "mode",     "lut",        "matrix",
                             "range",       "tiles_x", "tiles_y",  "clip_limit", "backend",
                             "bit_depth",   "format",  "temporal", "width",      "chroma",
                             "orientation", NULL};
  PyObject *image, *out, *lut_object = Py_None, *temporal = Py_None;
  const char *mode = "global", *matrix_name = "bt601", *range_name = "full", *backend_name = "auto",
             *format_name = NULL, *chroma_name = "keep";
  int tiles_x = 8, tiles_y = 8;
  IntArgument bit_depth = {"bit_depth", 0}, frame_width = {"width", 0};
  IntArgument orientation = {"orientation", 1};
  double clip_limit = 40.0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO|$sOssiidsO&zOO&sO&", keywords, &image, &out,
                                   &mode, &lut_object, &matrix_name, &range_name, &tiles_x,
                                   &tiles_y, &clip_limit, &backend_name, int_argument, &bit_depth,
                                   &format_name, &temporal, int_argument, &frame_width,
                                   &chroma_name, int_argument, &orientation))
    return NULL;
  LhEqualizeOptions options;
  lh_equalize_options_init(&options);
  if (strcmp(chroma_name, "scale") == 0)
    options.chroma = LH_CHROMA_SCALE;
  else if (strcmp(chroma_name, "keep") != 0)
    return raise_invalid("chroma: keep or scale");
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
  options.orientation = orientation.value;
  TemporalBox *box = NULL;
  if (temporal != Py_None) {
    box = PyCapsule_GetPointer(temporal, TEMPORAL_CAPSULE);
    if (!box) {
      PyErr_Clear();
      return raise_invalid("temporal: a lumahist.Temporal expected");
    }
    options.temporal = box->temporal;
  }

  ArrayFrame in, dst, lut;
  memset(&lut, 0, sizeof lut);
  if (array_frame_get(&in, image, format_name, frame_width.value, bit_depth.value, false, "image") <
      0)
    return NULL;
  if (array_frame_get(&dst, out, format_name, frame_width.value, bit_depth.value, true, "out") <
      0) {
    array_frame_release(&in);
    return NULL;
  }
  if (input_apart_from(&in, &dst) < 0) {
    array_frame_release(&in);
    array_frame_release(&dst);
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
    /* The library reads 2^depth entries: a shorter table must not get that far. */
    int depth = in.frame.bit_depth ? in.frame.bit_depth : lh_format_bit_depth(in.frame.format);
    if (depth < 8 || depth > 16 || lut.view.itemsize != 2 ||
        lut.view.len != ((Py_ssize_t)2 << depth)) {
      array_frame_release(&in);
      array_frame_release(&dst);
      array_frame_release(&lut);
      return raise_invalid("lut: a uint16 array of 2^bit_depth entries expected");
    }
    table = lut.view.buf;
  }
  LhContext *context = context_for(backend_for(backend, &in), &in);
  if (!context) {
    array_frame_release(&in);
    array_frame_release(&dst);
    array_frame_release(&lut);
    return NULL;
  }
  int status;
  stream_begin(context, &in);
  PyThreadState *released = PyEval_SaveThread();
  /* Taken without the GIL: a thread waiting here lets the others run. */
  if (box)
    pthread_mutex_lock(&box->lock);
  if (lut_mode)
    status =
        lh_apply_lut_chroma(context, &in.frame, &dst.frame, table, options.matrix, options.chroma);
  else
    status = lh_equalize(context, &in.frame, &dst.frame, &options);
  if (box)
    pthread_mutex_unlock(&box->lock);
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

/* The dataset statistics of a summed histogram: a DatasetStats. */
static PyObject *py_from_histogram(PyObject *self, PyObject *args, PyObject *kwargs)
{
  static char *keywords[] = {"histogram", "matrix", "range", "percentiles", NULL};
  Py_buffer h;
  const char *matrix_name = "bt601", *range_name = "full";
  PyObject *percentiles = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "y*|$ssO", keywords, &h, &matrix_name, &range_name,
                                   &percentiles))
    return NULL;
  LhOptions options;
  lh_options_init(&options);
  size_t bins = (size_t)h.len / sizeof(uint64_t);
  int depth = 0;
  while (depth <= 16 && ((size_t)1 << depth) != bins)
    depth++;
  StatsObject *result = NULL;
  int status = LH_OK;
  if (lh_matrix_from_name(matrix_name, &options.matrix) < 0 ||
      lh_range_from_name(range_name, &options.range) < 0) {
    status = LH_ERROR_INVALID_ARGUMENT;
  } else if (percentiles_from(percentiles, &options) < 0) {
    PyBuffer_Release(&h);
    return NULL;
  } else if ((size_t)h.len % sizeof(uint64_t) != 0 || depth < 8 || depth > 16) {
    status = lh_set_error(LH_ERROR_INVALID_ARGUMENT,
                          "a histogram of 2^8 .. 2^16 uint64 counts expected");
  } else if ((result = stats_object_new(STATS_DATASET))) {
    status = lh_stats_from_histogram(h.buf, depth, &options, &result->stats);
  }
  PyBuffer_Release(&h);
  if (status < 0) {
    Py_CLEAR(result);
    raise_status(status);
  }
  return (PyObject *)result;
}

/* Analyses image (with percentiles, for the markers) and draws its
 * histogram into it, in place. */
static PyObject *py_overlay(PyObject *self, PyObject *args, PyObject *kwargs)
{
  static char *keywords[] = {"image",  "percentiles", "rect",        "opacity",
                             "scale",  "markers",     "clipping",    "clip_warning",
                             "matrix", "range",       "backend",     "bit_depth",
                             "format", "width",       "orientation", NULL};
  PyObject *image, *percentiles = Py_None;
  const char *scale = "log", *matrix_name = "bt601", *range_name = "full", *backend_name = "auto",
             *format_name = NULL;
  int rect[4] = {0, 0, 0, 0}, markers = 1, clipping = 1;
  IntArgument bit_depth = {"bit_depth", 0}, frame_width = {"width", 0};
  IntArgument orientation = {"orientation", 1};
  double opacity = 0.8, clip_warning = 0.005;
  if (!PyArg_ParseTupleAndKeywords(
          args, kwargs, "O|$O(iiii)dsppdsssO&zO&O&", keywords, &image, &percentiles, &rect[0],
          &rect[1], &rect[2], &rect[3], &opacity, &scale, &markers, &clipping, &clip_warning,
          &matrix_name, &range_name, &backend_name, int_argument, &bit_depth, &format_name,
          int_argument, &frame_width, int_argument, &orientation))
    return NULL;
  LhOptions options;
  LhOverlayOptions overlay;
  lh_overlay_options_init(&overlay);
  LhBackend backend;
  if (stats_options_from(matrix_name, range_name, backend_name, percentiles, &options, &backend) <
      0)
    return NULL;
  if (strcmp(scale, "log") != 0 && strcmp(scale, "linear") != 0)
    return raise_invalid("scale: log or linear");
  /* The library refuses a negative one; above 1, no band could ever light,
   * and the tool (--clip-warning) and the element (clip-warning) refuse it. */
  if (clip_warning > 1.0) {
    /* Its shortest text: %g wrote 1.0000001 as 1, "not above 1". */
    char *shown = PyOS_double_to_string(clip_warning, 'r', 0, 0, NULL);
    if (!shown)
      return NULL;
    char message[160];
    snprintf(message, sizeof message,
             "overlay clip warning %s is not a fraction of the pixels (1 or less, as the tool's "
             "--clip-warning)",
             shown);
    PyMem_Free(shown);
    return raise_invalid(message);
  }
  overlay.rect = (LhRect){rect[0], rect[1], rect[2], rect[3]};
  overlay.opacity = opacity;
  overlay.scale = strcmp(scale, "log") == 0 ? LH_OVERLAY_LOG : LH_OVERLAY_LINEAR;
  overlay.markers = markers;
  overlay.clipping = clipping;
  overlay.clip_warning = clip_warning;
  overlay.matrix = options.matrix;
  overlay.range = options.range;
  overlay.orientation = orientation.value;
  LhStats stats;
  lh_stats_init(&stats);
  int width, height;
  LhBackend used;
  int status = analyze_array(image, format_name, frame_width.value, bit_depth.value, backend,
                             &options, &overlay, &stats, &width, &height, &used);
  lh_stats_clear(&stats);
  if (status < 0)
    return NULL;
  Py_RETURN_NONE;
}

/* The GPU time of this thread's CUDA context on the current device
 * (lh_context_device_time), or None when the thread has none there. */
static PyObject *py_device_time(PyObject *self, PyObject *unused)
{
  int device = lh_device_current();
  LhContext *context = NULL;
  if (thread_contexts && device >= 0 && device < MAX_DEVICES) {
    context = *context_slot(thread_contexts, LH_BACKEND_CUDA, device);
    LhContext *automatic = *context_slot(thread_contexts, LH_BACKEND_AUTO, device);
    if (!context && automatic && lh_context_backend(automatic) == LH_BACKEND_CUDA)
      context = automatic;
  }
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

/* The C call alone, for tests/bench/python-bench.py: lh_analyze of image's
 * frame as lumahist.stats makes it (this thread's context, the stream the
 * producer names), runs times with the GIL released, with the percentiles
 * 1, 5, 50, 95 and 99 and one LhStats for every call, as a C program keeps
 * it: a list of each call's seconds by the monotonic clock. */
static PyObject *py_analyze_times(PyObject *self, PyObject *args)
{
  PyObject *image;
  int runs;
  const char *backend_name = "auto";
  if (!PyArg_ParseTuple(args, "Oi|s:analyze_times", &image, &runs, &backend_name))
    return NULL;
  if (runs < 1)
    return raise_invalid("analyze_times: runs must be at least 1");
  LhOptions options;
  lh_options_init(&options);
  LhBackend backend;
  if (lh_backend_from_name(backend_name, &backend) < 0 ||
      lh_options_set_percentiles(&options, "1,5,50,95,99") < 0)
    return raise_status(LH_ERROR_INVALID_ARGUMENT);
  double *seconds = PyMem_Malloc((size_t)runs * sizeof *seconds);
  if (!seconds)
    return PyErr_NoMemory();
  ArrayFrame a;
  LhContext *context = NULL;
  if (array_frame_get(&a, image, NULL, 0, 0, false, "image") < 0 ||
      !(context = context_for(backend_for(backend, &a), &a))) {
    array_frame_release(&a); /* none held after a failed get */
    PyMem_Free(seconds);
    return NULL;
  }
  LhStats stats;
  lh_stats_init(&stats);
  int status = LH_OK;
  stream_begin(context, &a);
  PyThreadState *released = PyEval_SaveThread();
  for (int i = 0; i < runs && status >= 0; i++) {
    struct timespec start, end;
    clock_gettime(CLOCK_MONOTONIC, &start);
    status = lh_analyze(context, &a.frame, &options, &stats);
    clock_gettime(CLOCK_MONOTONIC, &end);
    seconds[i] = (double)(end.tv_sec - start.tv_sec) + (double)(end.tv_nsec - start.tv_nsec) / 1e9;
  }
  PyEval_RestoreThread(released);
  stream_end(context, &a);
  array_frame_release(&a);
  lh_stats_clear(&stats);
  PyObject *result = status < 0 ? raise_status(status) : PyList_New(runs);
  for (int i = 0; result && i < runs; i++) {
    PyObject *value = PyFloat_FromDouble(seconds[i]);
    if (!value)
      Py_CLEAR(result);
    else
      PyList_SET_ITEM(result, i, value);
  }
  PyMem_Free(seconds);
  return result;
}

static void temporal_destroy(PyObject *capsule)
{
  TemporalBox *box = PyCapsule_GetPointer(capsule, TEMPORAL_CAPSULE);
  lh_temporal_free(box->temporal);
  pthread_mutex_destroy(&box->lock);
  PyMem_RawFree(box);
}

static PyObject *py_temporal_new(PyObject *self, PyObject *args)
{
  IntArgument window = {"window", 0};
  double cut_threshold;
  if (!PyArg_ParseTuple(args, "O&d", int_argument, &window, &cut_threshold))
    return NULL;
  LhTemporal *temporal;
  int status = lh_temporal_new(window.value, cut_threshold, &temporal);
  if (status < 0)
    return raise_status(status);
  TemporalBox *box = PyMem_RawMalloc(sizeof *box);
  if (!box) {
    lh_temporal_free(temporal);
    return PyErr_NoMemory();
  }
  box->temporal = temporal;
  pthread_mutex_init(&box->lock, NULL);
  PyObject *capsule = PyCapsule_New(box, TEMPORAL_CAPSULE, temporal_destroy);
  if (!capsule) {
    lh_temporal_free(temporal);
    pthread_mutex_destroy(&box->lock);
    PyMem_RawFree(box);
  }
  return capsule;
}

static PyObject *py_temporal_reset(PyObject *self, PyObject *capsule)
{
  TemporalBox *box = PyCapsule_GetPointer(capsule, TEMPORAL_CAPSULE);
  if (!box)
    return NULL;
  /* After a call under way on another thread, without the GIL meanwhile. */
  PyThreadState *released = PyEval_SaveThread();
  pthread_mutex_lock(&box->lock);
  lh_temporal_reset(box->temporal);
  pthread_mutex_unlock(&box->lock);
  PyEval_RestoreThread(released);
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

/* The library's format names, in LhFormat order. */
static PyObject *py_format_names(PyObject *self, PyObject *unused)
{
  PyObject *names = PyTuple_New(LH_FORMAT_COUNT);
  for (int f = 0; names && f < LH_FORMAT_COUNT; f++) {
    PyObject *name = PyUnicode_FromString(lh_format_name((LhFormat)f));
    if (!name) {
      Py_CLEAR(names);
      break;
    }
    PyTuple_SET_ITEM(names, f, name);
  }
  return names;
}

static PyObject *py_version(PyObject *self, PyObject *unused)
{
  return PyUnicode_FromString(lh_version());
}

static PyMethodDef methods[] = {
    {"stats", py_stats, METH_VARARGS,
     "stats(image, matrix, range, percentiles, roi, backend, bit_depth, format, width) -> Stats"},
    {"rewrite", (PyCFunction)(void (*)(void))py_rewrite, METH_VARARGS | METH_KEYWORDS,
     "rewrite(image, out, *, mode, lut, matrix, range, tiles_x, tiles_y, clip_limit, backend, "
     "bit_depth, format, temporal, width, chroma, orientation)"},
    {"lut_from_histogram", (PyCFunction)(void (*)(void))py_lut_from_histogram,
     METH_VARARGS | METH_KEYWORDS, "lut_from_histogram(histogram, *, range) -> bytes"},
    {"stats_file", (PyCFunction)(void (*)(void))py_stats_file, METH_VARARGS | METH_KEYWORDS,
     "stats_file(path, *, matrix, range, percentiles, backend, max_pixels) -> Stats"},
    {"stats_files", (PyCFunction)(void (*)(void))files_stats, METH_VARARGS | METH_KEYWORDS,
     "stats_files(paths, *, jobs, matrix, range, percentiles, backend, max_pixels, decoder, "
     "raise_errors) -> an iterator of Stats, on the batch pipeline"},
    {"from_histogram", (PyCFunction)(void (*)(void))py_from_histogram, METH_VARARGS | METH_KEYWORDS,
     "from_histogram(histogram, *, matrix, range, percentiles) -> DatasetStats"},
    {"overlay", (PyCFunction)(void (*)(void))py_overlay, METH_VARARGS | METH_KEYWORDS,
     "overlay(image, *, percentiles, rect, opacity, scale, markers, clipping, clip_warning, "
     "matrix, range, backend, bit_depth, format, width, orientation)"},
    {"temporal_new", py_temporal_new, METH_VARARGS, "temporal_new(window, cut_threshold)"},
    {"temporal_reset", py_temporal_reset, METH_O, "temporal_reset(capsule)"},
    {"set_errors", py_set_errors, METH_O, "set_errors((Error, by -status ...))"},
    {"device_time", py_device_time, METH_NOARGS, "this thread's CUDA context's GPU time"},
    {"format_names", py_format_names, METH_NOARGS, "the library's pixel format names"},
    {"version", py_version, METH_NOARGS, "the library's version"},
    {"set_result_types", stats_object_set_result_types, METH_VARARGS,
     "set_result_types(Stats, DatasetStats, VideoFrame, VideoSummary): the classes of the "
     "results"},
    {"restore_stats", stats_object_restore, METH_VARARGS,
     "restore_stats(cls, state[, frame]): unpickles"},
    {"analyze_times", py_analyze_times, METH_VARARGS,
     "analyze_times(image, runs, backend='auto') -> [seconds]: the C call alone, timed"},
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
  if (intern_names() < 0)
    return NULL;
  PyObject *m = PyModule_Create(&module);
  if (m && (stats_object_add_type(m) < 0 || files_add_type(m) < 0))
    Py_CLEAR(m);
  return m;
}
