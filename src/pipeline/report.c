/* report.c: how the pipeline says things: through the caller's LhpReport
 * (the tool prints "lumahist: PATH: message", the Python module turns them
 * into warnings or exceptions), never on its own. */
#include <stdarg.h>
#include <string.h>

#include "lhp.h"

void lhp_say(const LhpReport *report, const char *path, const char *format, ...)
{
  if (!report || !report->say)
    return;
  va_list args;
  va_start(args, format);
  char *message = g_strdup_vprintf(format, args);
  va_end(args);
  report->say(path, message, report->data);
  g_free(message);
}

static _Thread_local int said_os_error;

void lhp_say_os_error(const LhpReport *report, const char *path, int error)
{
  lhp_say_os_error_because(report, path, error, NULL);
}

void lhp_say_os_error_because(const LhpReport *report, const char *path, int error,
                              const char *because)
{
  said_os_error = error;
  if (because)
    lhp_say(report, path, "%s (%s)", g_strerror(error), because);
  else
    lhp_say(report, path, "%s", g_strerror(error));
  said_os_error = 0;
}

int lhp_said_os_error(void)
{
  return said_os_error;
}

const char *lhp_reason(int status, const char *path)
{
  const char *message = lh_last_error();
  if (!message || !*message)
    return lh_status_name(status);
  /* Readers may name the file in their message; the line names it already. */
  size_t n = path ? strlen(path) : 0;
  if (n && strncmp(message, path, n) == 0 && message[n] == ':' && message[n + 1] == ' ')
    return message + n + 2;
  return message;
}
