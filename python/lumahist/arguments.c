/* arguments.c: the whole numbers the calls take, converted for
 * PyArg_Parse's "O&": an integer past its C type raises
 * lumahist.InvalidArgumentError naming the argument, as a value out of its
 * range raises, where "i" raised OverflowError. */
#include <limits.h>

#include "module.h"

/* Longer texts of an integer are left out of the message (Python refuses
 * to write one of more than 4300 digits at all). */
#define SHOWN_DIGITS 40

PyObject *raise_out_of_range(const char *name, PyObject *number)
{
  PyObject *text = PyObject_Repr(number);
  if (!text)
    PyErr_Clear();
  PyObject *message =
      text && PyUnicode_GET_LENGTH(text) <= SHOWN_DIGITS
          ? PyUnicode_FromFormat("%s: %U is out of range", name, text)
          : PyUnicode_FromFormat("%s: a number of more than %d digits is out of range", name,
                                 SHOWN_DIGITS);
  Py_XDECREF(text);
  if (!message)
    return NULL;
  raise_message_object(LH_ERROR_INVALID_ARGUMENT, message);
  Py_DECREF(message);
  return NULL;
}

int int_argument(PyObject *object, void *address)
{
  IntArgument *argument = address;
  /* What "i" takes: an int or an object with __index__, not a float. */
  PyObject *number = PyNumber_Index(object);
  if (!number)
    return 0;
  int overflow;
  long value = PyLong_AsLongAndOverflow(number, &overflow);
  if (value == -1 && PyErr_Occurred()) {
    Py_DECREF(number);
    return 0;
  }
  if (overflow || value < INT_MIN || value > INT_MAX) {
    raise_out_of_range(argument->name, number);
    Py_DECREF(number);
    return 0;
  }
  Py_DECREF(number);
  argument->value = (int)value;
  return 1;
}
