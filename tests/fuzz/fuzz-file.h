/* fuzz-file.h: the fuzz input as a file, for the targets whose code under
 * test takes a path, checked to be left as it was.  Where the code keys on
 * the name (an extension), the file is in a folder of this process's own
 * (made at the first call, removed with what is in it at the exit); where
 * it does not, it is a file in memory, which goes with the process even
 * when a crash skips the exit. */
#ifndef FUZZ_FILE_H
#define FUZZ_FILE_H

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz-common.h"

#define FUZZ_MAX_FILES 8

static char fuzz_folder[256];
static char fuzz_files[FUZZ_MAX_FILES][320];

static inline void fuzz_remove_files(void)
{
  for (int i = 0; i < FUZZ_MAX_FILES && fuzz_files[i][0]; i++)
    unlink(fuzz_files[i]);
  rmdir(fuzz_folder);
}

/* The bytes written over the file at path, which is then cut to their
 * size: truncating it to nothing first would make ext4 write it to the
 * disk at every close (auto_da_alloc), tens of milliseconds a run. */
static inline void fuzz_write_file(const char *path, const uint8_t *data, size_t size)
{
  int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  FUZZ_ASSERT(fd >= 0);
  FUZZ_ASSERT(size == 0 || pwrite(fd, data, size, 0) == (ssize_t)size);
  FUZZ_ASSERT(ftruncate(fd, (off_t)size) == 0);
  FUZZ_ASSERT(close(fd) == 0);
}

/* A new empty file in memory (memfd; the name is for /proc's listings
 * alone), as the /proc/self/fd path the code under test opens as it would
 * any other, written to path (room for 32 bytes). */
static inline void fuzz_memory_file(char *path, size_t path_size, const char *name)
{
  const int fd = memfd_create(name, MFD_CLOEXEC);
  FUZZ_ASSERT(fd >= 0);
  FUZZ_ASSERT((size_t)snprintf(path, path_size, "/proc/self/fd/%d", fd) < path_size);
}

/* The input written to the file name (no slash) in the folder: its path,
 * the same for the same name at every call. */
static inline const char *fuzz_input_file(const char *name, const uint8_t *data, size_t size)
{
  if (!fuzz_folder[0]) {
    const char *tmp = getenv("TMPDIR");
    snprintf(fuzz_folder, sizeof fuzz_folder, "%s/lumahist-fuzz-XXXXXX",
             tmp && tmp[0] ? tmp : "/tmp");
    FUZZ_ASSERT(mkdtemp(fuzz_folder) != NULL);
    atexit(fuzz_remove_files);
  }
  char path[sizeof fuzz_files[0]];
  FUZZ_ASSERT((size_t)snprintf(path, sizeof path, "%s/%s", fuzz_folder, name) < sizeof path);
  int slot = 0;
  while (slot < FUZZ_MAX_FILES && fuzz_files[slot][0] && strcmp(fuzz_files[slot], path) != 0)
    slot++;
  FUZZ_ASSERT(slot < FUZZ_MAX_FILES);
  strcpy(fuzz_files[slot], path);
  fuzz_write_file(path, data, size);
  return fuzz_files[slot];
}

/* Whether the file at path holds the bytes, no more and no less. */
static inline bool fuzz_file_is(const char *path, const uint8_t *data, size_t size)
{
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  FUZZ_ASSERT(fd >= 0);
  uint8_t *back = malloc(size + 1);
  FUZZ_ASSERT(back != NULL);
  const bool same =
      pread(fd, back, size + 1, 0) == (ssize_t)size && (size == 0 || memcmp(back, data, size) == 0);
  free(back);
  close(fd);
  return same;
}

/* The file at path holds the input still, no more and no less. */
static inline void fuzz_check_unchanged(const char *path, const uint8_t *data, size_t size)
{
  FUZZ_ASSERT(fuzz_file_is(path, data, size));
}

/* An exact-size copy of the bytes (one zero byte for none, of which none
 * is given): ASan catches a read past its end. */
static inline uint8_t *fuzz_copy(const uint8_t *data, size_t size)
{
  uint8_t *copy = malloc(size ? size : 1);
  FUZZ_ASSERT(copy != NULL);
  if (size)
    memcpy(copy, data, size);
  else
    copy[0] = 0;
  return copy;
}

#endif /* FUZZ_FILE_H */
