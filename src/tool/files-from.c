/* files-from.c: --files-from FILE, the PATHs of a run listed in a file, or
 * on standard input ('-'): a dataset's manifest, or more paths than a
 * command line holds.  xargs, the other way, split one run into several,
 * each with its own --dataset record, and each refused the --output that the
 * first one holds locked.  One path a line (a CR before the newline is
 * dropped), or NUL-separated where the list holds a NUL byte (`find
 * -print0`, for names with newlines in them); empty entries are passed by. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "lht-batch.h"
#include "lht.h"

/* The whole of file: false with errno set. */
static bool read_all(FILE *file, GByteArray *into)
{
  uint8_t chunk[1 << 16];
  size_t n;
  while ((n = fread(chunk, 1, sizeof chunk, file)) > 0)
    g_byte_array_append(into, chunk, (guint)n);
  if (ferror(file)) {
    if (!errno)
      errno = EIO;
    return false;
  }
  return true;
}

/* The list's bytes: false (said) when they cannot be read. */
static bool read_list(const char *name, GByteArray *into)
{
  const bool standard_input = strcmp(name, "-") == 0;
  errno = 0;
  FILE *file = standard_input ? stdin : fopen(name, "rb");
  bool read = file && read_all(file, into);
  int error = errno;
  if (file && !standard_input)
    fclose(file);
  if (!read)
    lht_error(standard_input ? "/dev/stdin" : name,
              "cannot read the list of paths (--files-from): %s", g_strerror(error));
  return read;
}

/* Appends the entries of the list's bytes to paths. */
static void split_list(const GByteArray *list, GPtrArray *paths)
{
  const char *text = (const char *)list->data;
  const size_t size = list->len;
  if (size == 0)
    return; /* and no data to look in */
  const char separator = memchr(text, '\0', size) ? '\0' : '\n';
  size_t start = 0;
  while (start < size) {
    const char *end = memchr(text + start, separator, size - start);
    size_t length = end ? (size_t)(end - (text + start)) : size - start;
    size_t kept = length;
    if (separator == '\n' && kept > 0 && text[start + kept - 1] == '\r')
      kept--;
    if (kept > 0)
      g_ptr_array_add(paths, g_strndup(text + start, kept));
    start += length + 1;
  }
}

bool lht_batch_add_listed_paths(const LhtBatchArgs *args, char ***paths)
{
  if (!args->files_from)
    return true;
  const bool from_standard_input = strcmp(args->files_from, "-") == 0;
  guint given = *paths ? g_strv_length(*paths) : 0;
  for (guint i = 0; from_standard_input && i < given; i++)
    if (strcmp((*paths)[i], "-") == 0) {
      lht_error(NULL, "--files-from -: standard input cannot hold both the list of paths and "
                      "an image ('-')");
      return false;
    }
  GByteArray *list = g_byte_array_new();
  bool read = read_list(args->files_from, list);
  GPtrArray *all = g_ptr_array_new();
  for (guint i = 0; i < given; i++)
    g_ptr_array_add(all, (*paths)[i]);
  if (read)
    split_list(list, all);
  g_byte_array_free(list, TRUE);
  if (read && all->len == given && given == 0) {
    lht_error(from_standard_input ? "/dev/stdin" : args->files_from,
              "no paths in it (--files-from), and no PATH given");
    read = false;
  }
  g_ptr_array_add(all, NULL);
  /* The strings given move into the new vector; their old one goes. */
  g_free(*paths);
  *paths = (char **)g_ptr_array_free(all, FALSE);
  return read;
}
