/* written.c: the files a run of equalize, clahe or overlay has written,
 * known by their identity (device and inode), so that an output about to be
 * put in place over one of them is refused: two inputs whose outputs are one
 * file replaced each other without a word.  Their names cannot tell: A.png
 * and a.png are one file on a case-insensitive file system (macOS, a Windows
 * share, ext4 with casefold), OUT/sub/x.png is OUT/x.png where OUT/sub is a
 * link to OUT, and OUT/stdin.png is the output of `-` and of a file
 * stdin.png.  The check and the rename are one step under a lock, so two
 * threads writing such outputs at once cannot both pass it. */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include <glib.h>

#include "lht.h"

struct LhtWritten {
  GMutex lock;
  GHashTable *files; /* "dev:ino" of each file put in place -> its Output */
};

typedef struct {
  char *input;
  char *path; /* as it was put in place */
} Output;

static void output_free(void *data)
{
  Output *output = data;
  g_free(output->input);
  g_free(output->path);
  g_free(output);
}

LhtWritten *lht_written_new(void)
{
  LhtWritten *written = g_new0(LhtWritten, 1);
  g_mutex_init(&written->lock);
  written->files = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, output_free);
  return written;
}

void lht_written_free(LhtWritten *written)
{
  if (!written)
    return;
  g_hash_table_destroy(written->files);
  g_mutex_clear(&written->lock);
  g_free(written);
}

/* The identity of what the last component of path names (a link itself, not
 * what it points to: rename replaces the link), or NULL when nothing is
 * there. */
static char *file_key(const char *path)
{
  struct stat info;
  if (lstat(path, &info) != 0)
    return NULL;
  return g_strdup_printf("%ju:%ju", (uintmax_t)info.st_dev, (uintmax_t)info.st_ino);
}

int lht_written_place(const char *temp, const char *path, void *data)
{
  LhtPlacing *placing = data;
  LhtWritten *written = placing->written;
  int status = LH_OK;
  g_mutex_lock(&written->lock);
  char *key = file_key(path);
  const Output *first = key ? g_hash_table_lookup(written->files, key) : NULL;
  g_free(key);
  if (first) {
    placing->first = g_strdup(first->input);
    placing->first_path = g_strdup(first->path);
    status =
        lh_set_error(LH_ERROR_IO, "%s: the file written for %s in this run", path, first->input);
  } else if (rename(temp, path) != 0) {
    /* strerror, as lhio says it: rewrite-batch.c finds a full disk in it. */
    status = lh_set_error(LH_ERROR_IO, "%s: %s", path, strerror(errno));
  } else if ((key = file_key(path))) {
    Output *output = g_new(Output, 1);
    output->input = g_strdup(placing->input);
    output->path = g_strdup(path);
    g_hash_table_insert(written->files, key, output);
  }
  g_mutex_unlock(&written->lock);
  return status;
}

char *lht_placing_refusal(const LhtPlacing *placing, const char *output)
{
  if (strcmp(placing->first_path, output) == 0)
    return g_strdup_printf("its output %s is also that of %s, written before it; not replaced",
                           output, placing->first);
  return g_strdup_printf("its output %s is %s, written for %s in this run (one file under two "
                         "names: a case-insensitive file system, or a link); not replaced",
                         output, placing->first_path, placing->first);
}

void lht_placing_clear(LhtPlacing *placing)
{
  g_clear_pointer(&placing->first, g_free);
  g_clear_pointer(&placing->first_path, g_free);
}
