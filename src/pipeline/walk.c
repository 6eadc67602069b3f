/* walk.c: turns the paths of a command line (or of lumahist.stats_files)
 * into the list of image files to process, descending folders recursively in
 * a stable (sorted) order, hidden entries left out. */
#include <dirent.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include <glib.h>

#include "io/lhio-video.h"
#include "io/lhio.h"
#include "lhp.h"

/* A folder, whatever the path it was reached by. */
typedef struct {
  dev_t dev;
  ino_t ino;
} FolderId;

static guint hash_folder(gconstpointer key)
{
  const FolderId *id = key;
  return (guint)id->ino ^ (guint)(id->ino >> 32) ^ (guint)id->dev;
}

static gboolean same_folder(gconstpointer a, gconstpointer b)
{
  const FolderId *x = a, *y = b;
  return x->dev == y->dev && x->ino == y->ino;
}

/* What a walk is asked for. */
typedef struct {
  bool videos; /* folders give their video files too */
  const LhpReport *report;
  bool leaves_out;           /* a folder below an argument is not descended: */
  FolderId left_out;         /* the rewriting commands' output folder */
  const volatile gint *stop; /* NULL, or set: the walk ends where it is */
  /* Every folder descended so far (FolderId -> the path it was walked by).
   * Links that reach one folder twice would count its images twice in a
   * dataset, and links among siblings (a/x, a/y -> b; b/x, b/y -> c ...) would
   * make the walk exponential in the depth. */
  GHashTable *walked;
  guint walked_again; /* folders passed by as walked already */
} Walk;

static bool stopped(const Walk *walk)
{
  return walk->stop && g_atomic_int_get(walk->stop);
}

static int compare_names(const void *a, const void *b)
{
  /* strcmp orders by unsigned bytes: the same order in every locale. */
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool walk_folder(Walk *walk, const char *folder, const struct stat *info, GArray *ancestors,
                        GPtrArray *paths)
{
  for (guint i = 0; i < ancestors->len; i++) {
    const FolderId *id = &g_array_index(ancestors, FolderId, i);
    if (id->dev == info->st_dev && id->ino == info->st_ino) {
      /* Its files are found once already: worth a word, not a failure. */
      lhp_say(walk->report, folder, "a link to a folder that contains it; not descended again");
      return true;
    }
  }
  FolderId self = {info->st_dev, info->st_ino};
  const char *walked_as = g_hash_table_lookup(walk->walked, &self);
  if (walked_as) {
    lhp_say(walk->report, folder,
            "the same folder as %s, whose files are taken already; "
            "not descended again",
            walked_as);
    walk->walked_again++;
    return true;
  }
  g_hash_table_insert(walk->walked, g_memdup2(&self, sizeof self), g_strdup(folder));

  DIR *dir = opendir(folder);
  if (!dir) {
    lhp_say_os_error(walk->report, folder, errno);
    return false;
  }
  GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
  struct dirent *entry_name;
  errno = 0;
  while ((entry_name = readdir(dir))) {
    /* Hidden files and folders are not the folder's pictures: macOS's "._"
     * files beside each one copied from a Mac (not images, each a failure),
     * thumbnail caches (.thumbnails), .git, the temporary files of a run
     * writing here.  A shell's glob leaves them out likewise. */
    if (entry_name->d_name[0] != '.')
      g_ptr_array_add(names, g_strdup(entry_name->d_name));
    errno = 0;
  }
  if (errno != 0) {
    lhp_say_os_error(walk->report, folder, errno);
    closedir(dir);
    g_ptr_array_free(names, TRUE);
    return false;
  }
  closedir(dir);
  g_ptr_array_sort(names, compare_names);

  g_array_append_val(ancestors, self);
  bool ok = true;
  for (guint i = 0; i < names->len; i++) {
    if (stopped(walk)) {
      ok = false;
      break;
    }
    char *path = g_build_filename(folder, g_ptr_array_index(names, i), NULL);
    struct stat entry;
    if (stat(path, &entry) != 0) {
      /* A dangling link is reported only if it would have been picked up. */
      if (lhio_is_image_name(path) || (walk->videos && lhio_is_video_name(path)) ||
          errno != ENOENT) {
        lhp_say_os_error(walk->report, path, errno);
        ok = false;
      }
    } else if (S_ISDIR(entry.st_mode)) {
      if (!(walk->leaves_out && walk->left_out.dev == entry.st_dev &&
            walk->left_out.ino == entry.st_ino))
        ok = walk_folder(walk, path, &entry, ancestors, paths) && ok;
    } else if (S_ISREG(entry.st_mode) &&
               (lhio_is_image_name(path) || (walk->videos && lhio_is_video_name(path)))) {
      g_ptr_array_add(paths, path);
      path = NULL;
    }
    g_free(path);
  }
  g_array_set_size(ancestors, ancestors->len - 1);
  g_ptr_array_free(names, TRUE);
  return ok;
}

/* A name that is not there, said with why when it is a URL: "No such file
 * or directory" alone left a user who gave one wondering. */
static void say_not_found(const LhpReport *report, const char *arg, int error)
{
  char *scheme = error == ENOENT ? g_uri_parse_scheme(arg) : NULL;
  const char *colon = strchr(arg, ':');
  bool url = scheme && colon && strncmp(colon, "://", 3) == 0;
  char *path = url && strcmp(scheme, "file") == 0 ? g_filename_from_uri(arg, NULL, NULL) : NULL;
  char *because = NULL;
  if (path)
    because = g_strdup_printf("a file: URL; its path is %s", path);
  else if (url)
    because = g_strdup("a URL: files and standard input are read, not URLs; fetch it first, "
                       "as curl -s URL | lumahist stats - does for an image");
  lhp_say_os_error_because(report, arg, error, because);
  g_free(because);
  g_free(path);
  g_free(scheme);
}

bool lhp_walk(char *const *args, int n_args, bool videos, const char *leave_out,
              const volatile gint *stop, const LhpReport *report, GPtrArray *paths)
{
  Walk walk = {.videos = videos,
               .report = report,
               .stop = stop,
               .walked = g_hash_table_new_full(hash_folder, same_folder, g_free, g_free)};
  struct stat left_out;
  if (leave_out && stat(leave_out, &left_out) == 0 && S_ISDIR(left_out.st_mode)) {
    walk.leaves_out = true;
    walk.left_out = (FolderId){left_out.st_dev, left_out.st_ino};
  }
  bool ok = true;
  GArray *ancestors = g_array_new(FALSE, FALSE, sizeof(FolderId));
  for (int i = 0; i < n_args && !stopped(&walk); i++) {
    struct stat info;
    if (strcmp(args[i], "-") == 0) {
      /* The usual name of standard input, as `lumahist merge` reads it. */
      g_ptr_array_add(paths, g_strdup("/dev/stdin"));
    } else if (stat(args[i], &info) != 0) {
      say_not_found(report, args[i], errno);
      ok = false;
    } else if (S_ISDIR(info.st_mode)) {
      guint before = paths->len, walked_again = walk.walked_again;
      const bool walked = walk_folder(&walk, args[i], &info, ancestors, paths);
      ok = walked && ok;
      /* Not a failure, but a run that does nothing says why (not one
       * stopped before it found any).  A folder whose files were taken
       * already (named twice, or below one named before) has said so: its
       * files are not missing; nor has one where an entry could not be
       * looked at (its line says why, and there may be files behind it). */
      if (paths->len == before && walked && !stopped(&walk) && walk.walked_again == walked_again)
        lhp_say(report, args[i], "no PNG, JPEG%s files in it", videos ? " or video" : "");
    } else {
      /* A file named on the command line is always tried, whatever its name. */
      g_ptr_array_add(paths, g_strdup(args[i]));
    }
  }
  g_array_free(ancestors, TRUE);
  g_hash_table_destroy(walk.walked);
  return ok && !stopped(&walk);
}

void lhp_drop_repeated_paths(GPtrArray *paths, const LhpReport *report)
{
  /* Keyed by the absolute path with "." and ".." taken out and "//" made
   * one, as merge keys records ("./a.png", "a.png" and "/data/a.png" are
   * one file: read twice, --dataset counted them twice where merge of the
   * same records counted once); the first spelling is kept.  "-" is
   * standard input, not a file of that name. */
  GHashTable *seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  gsize n = 0;
  char **found = (char **)g_ptr_array_steal(paths, &n);
  for (gsize i = 0; i < n; i++) {
    char *key = strcmp(found[i], "-") == 0 ? g_strdup(found[i])
                                           : g_canonicalize_filename(found[i], NULL);
    if (g_hash_table_add(seen, key)) {
      g_ptr_array_add(paths, found[i]);
    } else {
      lhp_say(report, found[i], "named more than once: read once");
      g_free(found[i]);
    }
  }
  g_free(found);
  g_hash_table_destroy(seen);
}
