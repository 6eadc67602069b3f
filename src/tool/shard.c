/* shard.c: `--shard i/n`, which splits the files of a run into n disjoint
 * parts so that n processes (a Slurm job array, a Kubernetes indexed job, GNU
 * parallel) each take one, by a stable hash of each file's relative path.
 *
 * Why a hash and not "every n-th file of the sorted list": a file's shard then
 * depends on its own relative path alone, not on which other files exist, so
 * a folder that grows between a run and its resumption (--skip-existing)
 * keeps every file already done in the shard that did it, and machines that
 * mount the data in different places agree.  The cost is a statistical
 * balance (shards differ by about the square root of their size) instead of
 * an exact one, which does not matter at the sizes where sharding pays. */
#include <errno.h>
#include <string.h>

#include "lht-batch.h"

bool lht_shard_parse(const char *text, guint *index, guint *count)
{
  char *end;
  if (!g_ascii_isdigit(text[0]))
    return false;
  errno = 0;
  guint64 i = g_ascii_strtoull(text, &end, 10);
  if (errno != 0 || *end != '/' || !g_ascii_isdigit(end[1]))
    return false;
  guint64 n = g_ascii_strtoull(end + 1, &end, 10);
  if (errno != 0 || *end != '\0' || n < 1 || n > G_MAXUINT || i >= n)
    return false;
  *index = (guint)i;
  *count = (guint)n;
  return true;
}

/* FNV-1a over the bytes, then MurmurHash3's 64-bit finalizer so that the
 * low bits (what "mod n" keeps) depend on every byte. */
static guint64 path_hash(const char *path)
{
  guint64 h = 0xcbf29ce484222325ull;
  for (const unsigned char *c = (const unsigned char *)path; *c; c++) {
    h ^= *c;
    h *= 0x100000001b3ull;
  }
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  h ^= h >> 33;
  return h;
}

guint lht_shard_of(const char *relative_path, guint count)
{
  return (guint)(path_hash(relative_path) % count);
}
