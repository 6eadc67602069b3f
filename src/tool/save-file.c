/* save-file.c: a file the tool writes whole at the end of a run (the HTML
 * report, a saved LUT), written where the user pointed.
 *
 * A regular file is replaced through a temporary file and a rename, so that a
 * reader never sees half of it.  Not every path is a regular file: --report
 * /dev/stdout, a FIFO a viewer reads, /dev/full in a test.  Renaming over
 * those would replace the device node or the link with a file (and, run as
 * root, /dev/stdout itself), so they are written through instead; a link to
 * a regular file replaces the file it points to and keeps the link.  What
 * the tool writes is never one of its inputs (lht_is_one_of).  Messages name
 * the path the user gave, never the temporary file. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "lht.h"

static bool set_errno_error(GError **error, int code)
{
  g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(code), "%s", g_strerror(code));
  return false;
}

bool lht_folder_writable(const char *folder, int *error)
{
  char *probe = g_build_filename(folder, ".lumahist-probe-XXXXXX", NULL);
  int fd = g_mkstemp_full(probe, O_RDWR | O_CLOEXEC, 0600);
  *error = errno;
  if (fd >= 0) {
    close(fd);
    g_unlink(probe);
  }
  g_free(probe);
  return fd >= 0;
}

const char *lht_output_path_refusal(const char *path)
{
  return path && path[0] == '\0' ? "an empty path names no file to write" : NULL;
}

void lht_standard_output_named(char **path)
{
  if (*path && strcmp(*path, "-") == 0) {
    g_free(*path);
    *path = g_strdup("/dev/stdout");
  }
}

bool lht_save_file_possible(const char *path)
{
  struct stat target;
  if (stat(path, &target) == 0) {
    if (S_ISDIR(target.st_mode)) {
      lht_error(path, "is a folder");
      return false;
    }
    if (!S_ISREG(target.st_mode))
      return true; /* written through */
  }
  char *resolved = realpath(path, NULL);
  char *folder = g_path_get_dirname(resolved ? resolved : path);
  int error;
  bool ok = lht_folder_writable(folder, &error);
  if (!ok)
    lht_error(path, "cannot be written in %s: %s", folder, g_strerror(error));
  g_free(folder);
  free(resolved);
  return ok;
}

/* Writes all of data to fd; 0 or the errno of the failure. */
static int write_all(int fd, const char *data, size_t size)
{
  size_t done = 0;
  while (done < size) {
    ssize_t n = write(fd, data + done, size - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return n < 0 ? errno : ENOSPC;
    done += (size_t)n;
  }
  return 0;
}

static bool write_through(const char *path, const char *data, size_t size, GError **error)
{
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0)
    return set_errno_error(error, errno);
  int failed = write_all(fd, data, size);
  if (failed) {
    close(fd);
    return set_errno_error(error, failed);
  }
  if (close(fd) < 0 && errno != EINTR)
    return set_errno_error(error, errno);
  return true;
}

/* A regular file (or none yet): written to a hidden file beside it, synced
 * when it replaces one (as g_file_set_contents's CONSISTENT), and renamed
 * over it.  The hidden file's name holds as much of the name as NAME_MAX
 * leaves room for (cut at a UTF-8 character).  A file replaced keeps its
 * permissions (mode; a private report was made 0644 by the umask), as
 * --output's file does, being written in place. */
static bool replace_file(const char *path, const char *data, size_t size, bool replacing,
                         mode_t mode, GError **error)
{
  char *folder = g_path_get_dirname(path);
  char *name = g_path_get_basename(path);
  /* The two dots and mkstemp's six characters. */
  size_t name_len = lhio_name_prefix(name, NAME_MAX - 8);
  char *temp = g_strdup_printf("%s/.%.*s.XXXXXX", folder, (int)name_len, name);
  g_free(folder);
  g_free(name);
  int failed = 0;
  int fd = g_mkstemp_full(temp, O_WRONLY | O_CLOEXEC, 0666);
  if (fd < 0) {
    failed = errno;
  } else {
    if (replacing && fchmod(fd, mode) != 0)
      failed = errno;
    if (!failed)
      failed = write_all(fd, data, size);
    if (!failed && replacing && fsync(fd) != 0 && errno != EINVAL)
      failed = errno;
    if (close(fd) != 0 && !failed && errno != EINTR)
      failed = errno;
    if (!failed && rename(temp, path) != 0)
      failed = errno;
    if (failed)
      g_unlink(temp);
  }
  g_free(temp);
  return failed ? set_errno_error(error, failed) : true;
}

bool lht_save_file(const char *path, const char *data, size_t size, GError **error)
{
  struct stat target;
  bool exists = stat(path, &target) == 0;
  if (exists) {
    if (S_ISDIR(target.st_mode)) {
      g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_ISDIR, "is a folder");
      return false;
    }
    if (!S_ISREG(target.st_mode))
      return write_through(path, data, size, error);
  }
  /* A link (or a chain of them) to a regular file: that file is replaced. */
  char *resolved = realpath(path, NULL);
  bool ok = replace_file(resolved ? resolved : path, data, size, exists,
                         exists ? target.st_mode & 07777 : 0, error);
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

/* folder (absolute) made canonical as far as it exists, the links among
 * its folders followed, and the rest of it, not there yet, as it is. */
static char *folder_place(const char *folder)
{
  char *real = realpath(folder, NULL);
  if (real) {
    char *place = g_strdup(real);
    free(real);
    return place;
  }
  char *parent = g_path_get_dirname(folder);
  if (strcmp(parent, folder) == 0) {
    g_free(parent);
    return g_strdup(folder);
  }
  char *name = g_path_get_basename(folder);
  char *parent_place = folder_place(parent);
  char *place = g_build_filename(parent_place, name, NULL);
  g_free(parent_place);
  g_free(name);
  g_free(parent);
  return place;
}

char *lht_place_of(const char *path, GHashTable *folders)
{
  char *absolute = g_canonicalize_filename(path, NULL);
  char *folder = g_path_get_dirname(absolute);
  /* Paths share their folders (a plan's outputs): each resolved once. */
  const char *known = folders ? g_hash_table_lookup(folders, folder) : NULL;
  char *resolved = known ? NULL : folder_place(folder);
  char *base = g_path_get_basename(absolute);
  char *place = g_build_filename(known ? known : resolved, base, NULL);
  if (resolved && folders)
    g_hash_table_insert(folders, g_steal_pointer(&folder), g_steal_pointer(&resolved));
  g_free(resolved);
  g_free(folder);
  g_free(base);
  g_free(absolute);
  return place;
}

char *lht_landing_path(const char *path)
{
  /* A link to nothing yet lands where it points: followed by hand, since
   * realpath() gives up on it (a chain of them too, up to the kernel's own
   * limit of 40). */
  char *at = g_strdup(path);
  for (int hops = 0; hops < 40; hops++) {
    char *target = g_file_read_link(at, NULL);
    if (!target)
      break;
    if (!g_path_is_absolute(target)) {
      char *folder = g_path_get_dirname(at);
      char *joined = g_build_filename(folder, target, NULL);
      g_free(folder);
      g_free(target);
      target = joined;
    }
    g_free(at);
    at = target;
  }
  char *landing = lht_place_of(at, NULL);
  g_free(at);
  return landing;
}

bool lht_is_standard_output(const char *path)
{
  struct stat target, standard_output;
  return stat(path, &target) == 0 && fstat(STDOUT_FILENO, &standard_output) == 0 &&
         !S_ISCHR(target.st_mode) && target.st_dev == standard_output.st_dev &&
         target.st_ino == standard_output.st_ino;
}
