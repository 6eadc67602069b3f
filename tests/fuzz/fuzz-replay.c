/* fuzz-replay.c: a main for a libFuzzer target without libFuzzer: runs it once
 * on every file named or found (not recursively) in the folders named, each
 * in a buffer of exactly its size, so that the meson build (a sanitized one
 * above all) replays the seed corpus with its own compiler.  Fails when a
 * path cannot be read or no input was found, so that it cannot pass having
 * replayed nothing; a target's finding aborts. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path)
{
  FILE *file = fopen(path, "rb");
  if (!file) {
    perror(path);
    return -1;
  }
  struct stat st;
  if (fstat(fileno(file), &st) != 0) {
    perror(path);
    fclose(file);
    return -1;
  }
  size_t size = (size_t)st.st_size;
  /* malloc(0) may give NULL: one byte then, of which the target is told none. */
  uint8_t *data = malloc(size ? size : 1);
  if (!data || fread(data, 1, size, file) != size) {
    fprintf(stderr, "%s: cannot read %zu bytes\n", path, size);
    free(data);
    fclose(file);
    return -1;
  }
  fclose(file);
  LLVMFuzzerTestOneInput(data, size);
  free(data);
  return 0;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
  return strcmp((*a)->d_name, (*b)->d_name);
}

static int only_visible(const struct dirent *entry)
{
  return entry->d_name[0] != '.';
}

/* The files of a folder in name order (replays are the same every time);
 * returns how many were replayed, or -1. */
static int replay_folder(const char *folder)
{
  struct dirent **entries;
  int n = scandir(folder, &entries, only_visible, by_name);
  if (n < 0) {
    perror(folder);
    return -1;
  }
  int replayed = 0;
  for (int i = 0; i < n; i++) {
    size_t length = strlen(folder) + strlen(entries[i]->d_name) + 2;
    char *path = malloc(length);
    snprintf(path, length, "%s/%s", folder, entries[i]->d_name);
    struct stat st;
    if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
      if (replay_file(path) < 0)
        replayed = -1;
      else if (replayed >= 0)
        replayed++;
    }
    free(path);
    free(entries[i]);
  }
  free(entries);
  return replayed;
}

int main(int argc, char **argv)
{
  if (argc < 2) {
    fprintf(stderr, "usage: %s FILE|FOLDER...\n", argv[0]);
    return 2;
  }
  int total = 0;
  for (int i = 1; i < argc; i++) {
    struct stat st;
    int replayed;
    if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode))
      replayed = replay_folder(argv[i]);
    else
      replayed = replay_file(argv[i]) < 0 ? -1 : 1;
    if (replayed < 0)
      return 1;
    total += replayed;
  }
  if (total == 0) {
    fprintf(stderr, "no input found in the paths given\n");
    return 1;
  }
  printf("%d inputs replayed\n", total);
  return 0;
}
