/* rewrite.c: what the subcommands that write images (equalize, clahe,
 * overlay) share: where each output goes, the refusal to overwrite an input,
 * their encoding options, what is said of an image written otherwise
 * than it was read, and the stop of a run whose disk filled up. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <glib.h>
#include <glib/gstdio.h>

#include "io/lhio-video.h"
#include "io/lhio.h"
#include "lht.h"

/* "device:inode", the identity of a file whatever path names it. */
static char *file_id(const char *path)
{
  struct stat info;
  if (stat(path, &info) != 0)
    return NULL;
  return g_strdup_printf("%ju:%ju", (uintmax_t)info.st_dev, (uintmax_t)info.st_ino);
}

/* The part of path below the folder argument it was found in. */
static const char *below_folder(const char *folder, const char *path)
{
  size_t n = strlen(folder);
  while (n > 1 && folder[n - 1] == '/')
    n--;
  if (strncmp(path, folder, n) != 0)
    return NULL;
  const char *rest = path + n;
  while (*rest == '/')
    rest++;
  return *rest ? rest : NULL;
}

const char *lht_out_dir_refusal(const char *out_dir)
{
  if (!out_dir)
    return "--out DIR is required: inputs are never overwritten";
  /* '' (an unset shell variable, say) was only "lumahist: : cannot write the
   * outputs into it: Invalid argument". */
  if (out_dir[0] == '\0')
    return "--out '': an empty path names no folder to write into";
  /* "-" is standard output to `stats -o -`: a folder of that name made
   * here was a surprise. */
  if (strcmp(out_dir, "-") == 0)
    return "--out -: the images are written into a folder, not to standard output "
           "(./- names a folder '-')";
  return NULL;
}

/* Whether the output of path is named by what path holds: standard input,
 * a pipe, a FIFO or a device has no name of its own to give it ("-" would
 * write OUT/stdin), unless it is named as an image or a video. */
static bool named_by_content(const char *path)
{
  if (lhio_is_image_name(path) || lhio_is_video_name(path))
    return false;
  struct stat info;
  return strcmp(path, "/dev/stdin") == 0 || (stat(path, &info) == 0 && !S_ISREG(info.st_mode));
}

static const char *extension_of(LhioFileType type)
{
  return type == LHIO_FILE_JPEG ? ".jpg" : ".png";
}

bool lht_plan_named_by_content(const LhtPlan *plan, guint index)
{
  return g_array_index(plan->named_by_content, gboolean, index);
}

bool lht_plan_any_resumable(const LhtPlan *plan, const guint *plan_indices, guint n)
{
  for (guint k = 0; k < n; k++)
    if (!lht_plan_named_by_content(plan, plan_indices[k]))
      return true;
  return false;
}

char *lht_plan_output(const LhtPlan *plan, guint index, LhioFileType type)
{
  const char *output = g_ptr_array_index(plan->outputs, index);
  if (!lht_plan_named_by_content(plan, index))
    return g_strdup(output);
  return g_strconcat(output, extension_of(type), NULL);
}

bool lht_out_dir_usable(const char *out_dir)
{
  int error = 0;
  if (g_mkdir_with_parents(out_dir, 0777) != 0)
    error = errno;
  else if (lht_folder_writable(out_dir, &error))
    return true;
  lht_error(out_dir, "cannot write the outputs into it: %s; no input was read", g_strerror(error));
  return false;
}

/* Guards (lht_written_guard) every image below folder, as the walk would
 * find them: hidden names passed by, links to folders not followed (an
 * image reached only through one is not the folder's own).  Not videos:
 * their outputs need not be the same bytes twice (matroskamux writes a
 * random segment UID), so a run redone could not replace its own. */
static void guard_images_below(LhtWritten *written, const char *folder, int depth)
{
  GDir *dir = depth < 64 ? g_dir_open(folder, 0, NULL) : NULL;
  if (!dir)
    return;
  const char *name;
  while ((name = g_dir_read_name(dir))) {
    if (name[0] == '.')
      continue;
    char *path = g_build_filename(folder, name, NULL);
    struct stat info;
    if (lstat(path, &info) == 0 && S_ISDIR(info.st_mode))
      guard_images_below(written, path, depth + 1);
    else if (lhio_is_image_name(path))
      lht_written_guard(written, path);
    g_free(path);
  }
  g_dir_close(dir);
}

/* Whether the folder out_dir lies strictly inside the folder arg (both as
 * they are once links are followed). */
static bool folder_inside(const char *out_dir, const char *arg)
{
  char *out = realpath(out_dir, NULL), *top = realpath(arg, NULL);
  size_t n = top ? strlen(top) : 0;
  bool inside = out && top && strncmp(out, top, n) == 0 &&
                (out[n] == '/' || (n == 1 && top[0] == '/' && out[1] != '\0'));
  free(out);
  free(top);
  return inside;
}

bool lht_plan_outputs(char *const *args, int n_args, const char *out_dir, LhtPlan *plan)
{
  plan->inputs = g_ptr_array_new_with_free_func(g_free);
  plan->outputs = g_ptr_array_new_with_free_func(g_free);
  plan->named_by_content = g_array_new(FALSE, FALSE, sizeof(gboolean));
  plan->written = lht_written_new();
  plan->input_ids = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
  plan->places = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  bool ok = true;

  /* An --out inside a folder searched is left out of the walk, so that a
   * run redone does not take the outputs for inputs; the images already
   * there are the user's unless they hold an earlier run's very bytes
   * (--out photos/2023 photos replaced photos/2023/a.png with the output
   * of photos/a.png, in silence). */
  bool guarded = false;
  for (int i = 0; i < n_args && !guarded; i++)
    if (g_file_test(args[i], G_FILE_TEST_IS_DIR) && folder_inside(out_dir, args[i])) {
      guard_images_below(plan->written, out_dir, 0);
      guarded = true;
    }

  GPtrArray *found = g_ptr_array_new_with_free_func(g_free);
  GPtrArray *wanted = g_ptr_array_new_with_free_func(g_free);
  for (int i = 0; i < n_args; i++) {
    GPtrArray *paths = g_ptr_array_new_with_free_func(g_free);
    ok = lht_walk(&args[i], 1, out_dir, paths) && ok;
    bool folder = g_file_test(args[i], G_FILE_TEST_IS_DIR);
    for (guint k = 0; k < paths->len; k++) {
      const char *path = g_ptr_array_index(paths, k);
      const char *relative = folder ? below_folder(args[i], path) : NULL;
      char *base = relative ? NULL : g_path_get_basename(path);
      g_ptr_array_add(found, g_strdup(path));
      g_ptr_array_add(wanted, g_build_filename(out_dir, relative ? relative : base, NULL));
      g_free(base);
      char *id = file_id(path);
      if (id && !g_hash_table_contains(plan->input_ids, id))
        g_hash_table_insert(plan->input_ids, id, g_strdup(path));
      else
        g_free(id);
    }
    g_ptr_array_free(paths, TRUE);
  }

  /* An output named by its content is OUTPUT.png or OUTPUT.jpg, never
   * OUTPUT: it is known apart from the others (an extensionless file
   * 'stdin' beside '-' goes to OUT/stdin, '-' to OUT/stdin.png).  Which of
   * the two it is, the image tells: the write step refuses it where it is
   * an input or an output written before (rewrite-batch.c). */
  GHashTable *taken_by_content = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  GHashTable *folders = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
  for (guint k = 0; k < found->len; k++) {
    const char *input = g_ptr_array_index(found, k);
    const char *output = g_ptr_array_index(wanted, k);
    gboolean by_content = named_by_content(input);
    GHashTable *places = by_content ? taken_by_content : plan->places;
    char *id = by_content ? NULL : file_id(output);
    const char *victim = id ? g_hash_table_lookup(plan->input_ids, id) : NULL;
    char *place = lht_place_of(output, folders);
    const char *first = g_hash_table_lookup(places, place);
    if (victim) {
      lht_error(input, "its output %s is the input %s; not overwritten, skipped", output, victim);
      ok = false;
    } else if (first) {
      lht_error(input, "its output %s%s is also that of %s; skipped", output,
                by_content ? ".png or .jpg" : "", first);
      ok = false;
    } else {
      g_ptr_array_add(plan->inputs, g_strdup(input));
      /* The plan's own copy of the name, which lives as long as it. */
      g_hash_table_insert(places, g_steal_pointer(&place),
                          g_ptr_array_index(plan->inputs, plan->inputs->len - 1));
      g_ptr_array_add(plan->outputs, g_strdup(output));
      g_array_append_val(plan->named_by_content, by_content);
    }
    g_free(place);
    g_free(id);
  }
  g_hash_table_destroy(taken_by_content);
  g_hash_table_destroy(folders);
  g_ptr_array_free(found, TRUE);
  g_ptr_array_free(wanted, TRUE);
  return ok;
}

bool lht_plan_holds_input(const LhtPlan *plan, const char *path)
{
  char *id = file_id(path);
  bool held = id && g_hash_table_contains(plan->input_ids, id);
  g_free(id);
  return held;
}

const char *lht_plan_place_taken(const LhtPlan *plan, const char *output)
{
  char *place = lht_place_of(output, NULL);
  const char *input = g_hash_table_lookup(plan->places, place);
  g_free(place);
  return input;
}

bool lht_plan_holds_output(const LhtPlan *plan, const char *path)
{
  /* Outputs may not exist yet: compared by name, made absolute and without
   * "." and ".."; then, for one that exists, by identity (a link to it). */
  char *name = g_canonicalize_filename(path, NULL);
  GPtrArray *outputs = g_ptr_array_new_with_free_func(g_free);
  static const LhioFileType types[] = {LHIO_FILE_PNG, LHIO_FILE_JPEG};
  for (guint i = 0; i < plan->outputs->len; i++)
    for (size_t t = 0; t < (lht_plan_named_by_content(plan, i) ? G_N_ELEMENTS(types) : 1); t++)
      g_ptr_array_add(outputs, lht_plan_output(plan, i, types[t]));
  bool held = false;
  for (guint i = 0; !held && i < outputs->len; i++) {
    char *output_name = g_canonicalize_filename(g_ptr_array_index(outputs, i), NULL);
    held = strcmp(name, output_name) == 0;
    g_free(output_name);
  }
  g_free(name);
  held = held || lht_is_one_of(path, outputs);
  g_ptr_array_free(outputs, TRUE);
  return held;
}

void lht_plan_clear(LhtPlan *plan)
{
  if (plan->inputs)
    g_ptr_array_free(plan->inputs, TRUE);
  if (plan->outputs)
    g_ptr_array_free(plan->outputs, TRUE);
  if (plan->named_by_content)
    g_array_free(plan->named_by_content, TRUE);
  lht_written_free(plan->written);
  if (plan->input_ids)
    g_hash_table_destroy(plan->input_ids);
  if (plan->places)
    g_hash_table_destroy(plan->places);
  memset(plan, 0, sizeof *plan);
}

void lht_encode_options_add(GOptionContext *context, LhtEncodeArgs *args)
{
  args->quality = LHT_QUALITY_NOT_GIVEN;
  GOptionEntry entries[] = {
      {"quality", 'q', 0, G_OPTION_ARG_INT, &args->quality, "JPEG quality 1..100 (default 95)",
       "N"},
      {"png-compression", 0, 0, G_OPTION_ARG_STRING, &args->png_compression,
       "PNG compression, zlib's level 0 (none) .. 9 (smallest, slowest); default: as "
       "OpenCV's imwrite (level 1, SUB filter, RLE)",
       "N"},
      {NULL, 0, 0, 0, NULL, NULL, NULL},
  };
  /* GLib copies the entries. */
  g_option_context_add_main_entries(context, entries, NULL);
}

bool lht_encode_options_parse(const LhtEncodeArgs *args, LhtRewriteOptions *options, char **why)
{
  options->jpeg_quality = 0; /* lhio's default */
  if (args->quality != LHT_QUALITY_NOT_GIVEN) {
    if (args->quality < 1 || args->quality > 100) {
      *why = g_strdup_printf("--quality %d is not in 1 .. 100", args->quality);
      return false;
    }
    options->jpeg_quality = args->quality;
  }
  options->png_compression = 0; /* lhio's default */
  if (args->png_compression) {
    guint64 level;
    if (!g_ascii_string_to_unsigned(args->png_compression, 10, 0, 9, &level, NULL)) {
      *why = g_strdup_printf("--png-compression '%s' is not a zlib level 0 .. 9",
                             args->png_compression);
      return false;
    }
    options->png_compression = level == 0 ? LHIO_PNG_UNCOMPRESSED : (int)level;
  }
  return true;
}

int lht_write_stop_error(const char *reason)
{
  static const int stopping[] = {ENOSPC, EDQUOT, EROFS};
  for (size_t i = 0; i < G_N_ELEMENTS(stopping); i++)
    if (strstr(reason, strerror(stopping[i])))
      return stopping[i];
  return 0;
}

void lht_write_stop_say(const LhtWriteStop *stop, const char *out_dir)
{
  if (stop->error && stop->not_done > 0)
    lht_error(out_dir,
              "stopped: %s; %u output%s written, %u input%s not done (run again with "
              "--skip-existing once it can take them)",
              g_strerror(stop->error), stop->written, stop->written == 1 ? "" : "s", stop->not_done,
              stop->not_done == 1 ? "" : "s");
}

char *lht_written_note(const LhioImage *image)
{
  if (image->converted_from)
    return g_strdup_printf("a %s JPEG: written as a YCbCr JPEG of its R'G'B' (converted as "
                           "Pillow does); CMYK is not written back",
                           image->converted_from);
  if (image->png_frames > 1)
    return g_strdup_printf("an animated PNG of %u frames: written as a still PNG of its default "
                           "image (the one viewers without animation show)",
                           image->png_frames);
  return NULL;
}
