/* stats-object.h: the object that lumahist.stats, stats_files and
 * from_histogram return: the LhStats the library filled, with the record's
 * fields read from it as attributes, each Python object made when it is
 * read (the histogram's NumPy array and the percentile dicts once, then
 * kept); a video frame's record has its frame fields (LhpFrameFields) too.
 * The package's Stats, DatasetStats, VideoFrame and VideoSummary subclass
 * it, adding to_dict and repr; a call makes an instance of the subclass
 * that the package registers (set_result_types), with no Python code run. */
#ifndef LUMAHIST_STATS_OBJECT_H
#define LUMAHIST_STATS_OBJECT_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdbool.h>

#include "lumahist.h"
#include "pipeline/lhp-video.h"

#if PY_VERSION_HEX < 0x030A0000 /* pyproject.toml allows 3.9 */
static inline PyObject *Py_NewRef(PyObject *object)
{
  Py_INCREF(object);
  return object;
}
#endif

/* What a result is the record of, and so its class. */
typedef enum {
  STATS_IMAGE,         /* an array or an image file: Stats */
  STATS_DATASET,       /* many images' summed histograms: DatasetStats */
  STATS_VIDEO_FRAME,   /* a frame of a video file: VideoFrame */
  STATS_VIDEO_SUMMARY, /* a video file's summary: VideoSummary */
} StatsKind;

typedef struct {
  PyObject_HEAD LhStats stats; /* owns its histogram */
  int width, height;           /* of the frame analysed */
  LhBackend backend;           /* that analysed it */
  bool dataset;                /* a sum of many images' histograms: no size, no backend */
  bool video_frame;            /* frame holds its frame fields */
  LhpFrameFields frame;        /* its decoder unused: the decoder object says it */
  PyObject *path;              /* None, or the file's path as given */
  PyObject *decoder;           /* None, or the decoder that read the file */
  PyObject *converted_from;    /* None, or the colour space the file's pixels came in */
  PyObject *histogram;         /* made when first read (NULL till then) */
  PyObject *percentiles;       /* likewise */
  PyObject *percentiles_norm;  /* likewise */
  PyObject *dict;              /* the instance's __dict__: assigned values (NULL: none yet) */
} StatsObject;

/* Readies the base type and adds it to module as StatsBase: 0, or -1 with
 * the exception set. */
int stats_object_add_type(PyObject *module);

/* A new, empty instance of the class registered for kind, for the library
 * to fill: stats initialised, path, decoder and converted_from None.  NULL
 * with the exception set. */
StatsObject *stats_object_new(StatsKind kind);

/* The module's functions that belong to the type: set_result_types(Stats,
 * DatasetStats, VideoFrame, VideoSummary), which also gives VideoFrame the
 * frame fields, and restore_stats(cls, state[, frame]), which unpickles. */
PyObject *stats_object_set_result_types(PyObject *self, PyObject *args);
PyObject *stats_object_restore(PyObject *self, PyObject *args);

#endif
