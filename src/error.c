/* error.c: the thread-local message of the last failed call, and status names. */
#include <stdarg.h>
#include <stdio.h>

#include "lh-private.h"

static _Thread_local char last_error[512];

static int set_error_v(int status, const char *format, va_list args)
{
  vsnprintf(last_error, sizeof last_error, format, args);
  return status;
}

int lhi_error(int status, const char *format, ...)
{
  va_list args;
  va_start(args, format);
  set_error_v(status, format, args);
  va_end(args);
  return status;
}

LH_API int lh_set_error(int status, const char *format, ...)
{
  va_list args;
  va_start(args, format);
  set_error_v(status, format, args);
  va_end(args);
  return status;
}

void lhi_clear_error(void)
{
  last_error[0] = '\0';
}

LH_API const char *lh_last_error(void)
{
  return last_error;
}

LH_API const char *lh_status_name(int status)
{
  switch (status) {
  case LH_OK:
    return "ok";
  case LH_ERROR_INVALID_ARGUMENT:
    return "invalid-argument";
  case LH_ERROR_UNSUPPORTED:
    return "unsupported";
  case LH_ERROR_NO_MEMORY:
    return "no-memory";
  case LH_ERROR_NO_DEVICE:
    return "no-device";
  case LH_ERROR_CUDA:
    return "cuda";
  case LH_ERROR_IO:
    return "io";
  case LH_ERROR_CORRUPT:
    return "corrupt";
  case LH_ERROR_TOO_LARGE:
    return "too-large";
  default:
    return "unknown";
  }
}

/* The version string from the header's numbers, so that the two agree. */
#define STRINGIFY_TOKEN(token) #token
#define STRINGIFY(macro) STRINGIFY_TOKEN(macro)
#define VERSION_STRING                                                                             \
  STRINGIFY(LH_VERSION_MAJOR) "." STRINGIFY(LH_VERSION_MINOR) "." STRINGIFY(LH_VERSION_MICRO)

LH_API const char *lh_version(void)
{
  return VERSION_STRING;
}
