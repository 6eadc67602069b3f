/* module.h: what the files of the extension share: the library's failures
 * raised as the package's lumahist.Error subclasses, the options every call
 * parses, its whole-number arguments (arguments.c), and the stats_files
 * iterator (files.c). */
#ifndef LUMAHIST_MODULE_H
#define LUMAHIST_MODULE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "lumahist.h"

/* The package's error class for status (set_errors), raised with the
 * library's last message, or with message; NULL, to be returned. */
PyObject *raise_status(int status);
PyObject *raise_message(int status, const char *message);
/* The same with a str (a message that names a file as os.fsdecode does). */
PyObject *raise_message_object(int status, PyObject *message);
/* The same for a file's failure: an I/O one from a system call (os_error,
 * its errno; 0 none) also carries errno, strerror and filename (path, in
 * the file system's encoding), as an OSError does. */
PyObject *raise_file_error(int status, PyObject *message, int os_error, const char *path);
PyObject *raise_invalid(const char *message);
/* InvalidArgumentError: "name: number is out of range" (arguments.c). */
PyObject *raise_out_of_range(const char *name, PyObject *number);

/* A C int argument for PyArg_Parse's "O&" (int_argument, &argument): name
 * set beforehand, for the message, and value to its default (left as it
 * is when the argument is not given); an integer past a C int raises
 * InvalidArgumentError, not OverflowError (arguments.c). */
typedef struct {
  const char *name;
  int value;
} IntArgument;
int int_argument(PyObject *object, void *address);

/* matrix=, range= and backend= by name; 0, or -1 with the exception set. */
int parse_common(const char *matrix_name, const char *range_name, const char *backend_name,
                 LhMatrix *matrix, LhRange *range, LhBackend *backend);

/* percentiles= (None: the median alone, or an iterable of numbers) into
 * options; 0, or -1 with the exception set. */
int percentiles_from(PyObject *object, LhOptions *options);

/* The options of a statistics call: *options initialized, then matrix=,
 * range= and percentiles= into it, and backend=; 0, or -1 with the
 * exception set. */
int stats_options_from(const char *matrix_name, const char *range_name, const char *backend_name,
                       PyObject *percentiles, LhOptions *options, LhBackend *backend);

/* stats_files(paths, *, jobs, matrix, range, percentiles, backend,
 * max_pixels, decoder, raise_errors): the iterator (files.c). */
PyObject *files_stats(PyObject *self, PyObject *args, PyObject *kwargs);
/* Readies the iterator's type; 0, or -1 with the exception set. */
int files_add_type(PyObject *module);

#endif
