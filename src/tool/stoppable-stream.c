/* stoppable-stream.c: a pipe or FIFO read through stdio that a caught
 * Ctrl-C ends while its writer holds it open and writes nothing. */
#define _GNU_SOURCE /* fopencookie */
#include <errno.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lht-batch.h"

/* How often a read with no bytes to take looks at the stop flag. */
#define LOOK_MS 100

static ssize_t read_stoppable(void *cookie, char *into, size_t size)
{
  const int fd = (int)(intptr_t)cookie;
  const volatile sig_atomic_t *stop = lhp_pipeline_stop_flag();
  for (;;) {
    if (*stop) {
      errno = EINTR;
      return -1;
    }
    struct pollfd look = {.fd = fd, .events = POLLIN};
    const int ready = poll(&look, 1, LOOK_MS);
    if (ready < 0 && errno != EINTR)
      return -1;
    if (ready <= 0)
      continue;
    const ssize_t n = read(fd, into, size);
    if (n >= 0 || (errno != EINTR && errno != EAGAIN))
      return n;
  }
}

FILE *lht_stoppable_stream(FILE *in)
{
  struct stat info;
  if (fstat(fileno(in), &info) != 0 || !(S_ISFIFO(info.st_mode) || S_ISSOCK(info.st_mode)))
    return NULL;
  /* stdio's buffer stays whole: the cookie is called only when it is
   * empty, so lines are still read a block at a time. */
  const cookie_io_functions_t functions = {.read = read_stoppable};
  return fopencookie((void *)(intptr_t)fileno(in), "r", functions);
}
