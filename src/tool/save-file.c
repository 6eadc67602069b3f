/* save-file.c: a file the tool writes whole at the end of a run (the HTML
 * report, a saved LUT), written where the user pointed.
 *
 * A regular file is replaced through a temporary file and a rename, so that a
 * reader never sees half of it.  Not every path is a regular file: --report
 * /dev/stdout, a FIFO a viewer reads, /dev/full in a test.  Renaming over
 * those would replace the device node or the link with a file (and, run as
 * root, /dev/stdout itself), so they are written through instead; a link to
 * a regular file replaces the file it points to and keeps the link.  What
 * the tool writes is never one of its inputs (lht_is_one_of). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lht.h"

static bool write_through(const char *path, const char *data, size_t size, GError **error)
{
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) {
    int saved = errno;
    g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(saved), "%s", g_strerror(saved));
    return false;
  }
  size_t done = 0;
  while (done < size) {
    ssize_t n = write(fd, data + done, size - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      int saved = n < 0 ? errno : ENOSPC;
      g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(saved), "%s", g_strerror(saved));
      close(fd);
      return false;
    }
    done += (size_t)n;
  }
  if (close(fd) < 0 && errno != EINTR) {
    int saved = errno;
    g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(saved), "%s", g_strerror(saved));
    return false;
  }
  return true;
}

bool lht_save_file(const char *path, const char *data, size_t size, GError **error)
{
  struct stat target;
  if (stat(path, &target) == 0) {
    if (S_ISDIR(target.st_mode)) {
      g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_ISDIR, "is a folder");
      return false;
    }
    if (!S_ISREG(target.st_mode))
      return write_through(path, data, size, error);
  }
  /* A link (or a chain of them) to a regular file: that file is replaced. */
  char *resolved = realpath(path, NULL);
  bool ok = g_file_set_contents_full(resolved ? resolved : path, data, (gssize)size,
                                     G_FILE_SET_CONTENTS_CONSISTENT, 0666, error);
  free(resolved);
  return ok;
}

bool lht_is_one_of(const char *path, const GPtrArray *files)
{
  /* Only a regular file that exists can be one of them (a file not there
   * yet is no input; /dev/stdout is written through, not replaced). */
  struct stat target;
  if (stat(path, &target) != 0 || !S_ISREG(target.st_mode))
    return false;
  for (guint i = 0; i < files->len; i++) {
    struct stat file;
    if (stat(g_ptr_array_index(files, i), &file) == 0 && file.st_dev == target.st_dev &&
        file.st_ino == target.st_ino)
      return true;
  }
  return false;
}
