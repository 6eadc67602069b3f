/* written.c: the files a run of equalize, clahe or overlay has written,
 * known by their identity (device and inode), so that an output about to be
 * put in place over one of them is refused: two inputs whose outputs are one
 * file replaced each other without a word.  Their names cannot tell: A.png
 * and a.png are one file on a case-insensitive file system (macOS, a Windows
 * share, ext4 with casefold), OUT/sub/x.png is OUT/x.png where OUT/sub is a
 * link to OUT, and OUT/stdin.png is the output of `-` and of a file
 * stdin.png.  The check and the rename are one step under a lock, so two
 * threads writing such outputs at once cannot both pass it.  Also refused:
 * replacing an image that lay in --out before the run where --out is a
 * folder inside one searched (the walk leaves it out, so that a run redone
 * does not take the outputs for inputs): the user's own images there
 * (--out photos/2023 photos) were replaced in silence.  One that holds the
 * very bytes written now is an earlier run's output, and is replaced. */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include <glib.h>

#include "lht.h"

struct LhtWritten {
  GMutex lock;
  GHashTable *files; /* "dev:ino" of each file put in place -> its Output */
  /* "dev:ino" of the images that lay in --out before the run where --out
   * is inside a folder searched (lht_written_guard) */
  GHashTable *guarded;
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
  written->guarded = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  return written;
}

void lht_written_free(LhtWritten *written)
{
  if (!written)
    return;
  g_hash_table_destroy(written->files);
  g_hash_table_destroy(written->guarded);
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

/* Whether the files at a and b hold the same bytes. */
static bool same_bytes(const char *a, const char *b)
{
  struct stat sa, sb;
  if (stat(a, &sa) != 0 || stat(b, &sb) != 0 || sa.st_size != sb.st_size)
    return false;
  char *da = NULL, *db = NULL;
  gsize na = 0, nb = 0;
  bool same = g_file_get_contents(a, &da, &na, NULL) && g_file_get_contents(b, &db, &nb, NULL) &&
              na == nb && memcmp(da, db, na) == 0;
  g_free(da);
  g_free(db);
  return same;
}

void lht_written_guard(LhtWritten *written, const char *path)
{
  struct stat info;
  if (lstat(path, &info) != 0 || !S_ISREG(info.st_mode))
    return;
  g_mutex_lock(&written->lock);
  g_hash_table_add(written->guarded, file_key(path));
  g_mutex_unlock(&written->lock);
}

int lht_written_place(const char *temp, const char *path, void *data)
{
  LhtPlacing *placing = data;
  LhtWritten *written = placing->written;
  int status = LH_OK;
  g_mutex_lock(&written->lock);
  char *key = file_key(path);
  const Output *first = key ? g_hash_table_lookup(written->files, key) : NULL;
  const bool guarded = key && g_hash_table_contains(written->guarded, key);
  g_free(key);
  if (first) {
    placing->first = g_strdup(first->input);
    placing->first_path = g_strdup(first->path);
    status =
        lh_set_error(LH_ERROR_IO, "%s: the file written for %s in this run", path, first->input);
  } else if (guarded && !same_bytes(temp, path)) {
    /* An image of the folder searched, which the walk left out as --out:
     * an earlier run's output of this input holds the bytes written now
     * (a run redone), anything else is the user's. */
    placing->guarded = true;
    status = lh_set_error(LH_ERROR_IO, "%s: an image in the folder searched", path);
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
  if (placing->guarded)
    return g_strdup_printf("its output %s would replace an image that was there before the run, "
                           "in --out, which lies inside a folder searched and is not searched "
                           "itself; not replaced (an earlier run's output of other bytes: remove "
                           "it, or give an --out outside the folders searched)",
                           output);
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
