/* fuzz-mp4.c: libFuzzer target for the MP4 and QuickTime box code that
 * reads a user's file and rewrites the file a muxer finished (mp4-boxes.c,
 * mp4-rotation.c, mp4-creation-time.c, mp4-chapters.c,
 * mp4-track-duration.c).  Any bytes, walked in a buffer of exactly their
 * size, give boxes that lie inside their parent, never a read outside it.
 * Written to a file: the moov read is the file's bytes, and written back
 * (as it was, grown or shrunk) moves what follows it or is refused with
 * "<path>: <reason>" where media data follows; a video duration is NAN or
 * positive; the rewrites, which fail only where the system does, return 0
 * and do what each promises and nothing else: the rotation asked in the
 * first video track's matrix where it was the identity (every other byte
 * the same), the movie's creation time in every header whose version
 * holds it, the source's chapter box copied whole into moov/udta with the
 * sizes around it still true (or the file left as it was where it has no
 * room for them); a second run of a rewrite changes nothing; and the
 * files only read are left as they were.  Each rewrite runs on a copy of
 * the input and on small valid files made here (templates), with the
 * input as the source or as the file rewritten; the duration and the
 * rotation also on the input's moov cut after each of its first boxes,
 * whole or emptied, so that each in turn ends the moov read. */
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz-common.h"
#include "fuzz-file.h"
#include "lhio-private.h"

/* Container boxes whose children the walk visits (meta is left out: in an
 * MP4 it is a full box, in QuickTime a plain one). */
static const char *const containers[] = {"moov", "trak", "mdia", "minf", "stbl", "udta",
                                         "edts", "dinf", "mvex", "moof", "traf"};
#define WALK_DEPTH 8
/* lhio_mp4_child is asked for the boxes after each of the first few of a
 * level (each ask walks the rest: quadratic). */
#define CHILD_CHECKS 32
/* The boxes the input's moov is cut after (check_cut), each twice a file
 * written and rewritten. */
#define MAX_CUTS 12

static const uint32_t identity[9] = {0x10000, 0, 0, 0, 0x10000, 0, 0, 0, 0x40000000};

typedef struct {
  uint8_t *data;
  size_t size;
} Bytes;

/* ---- files ---- */

static char input_path[32], copy_path[32], template_path[32];

static void make_files(void)
{
  if (input_path[0])
    return;
  fuzz_memory_file(input_path, sizeof input_path, "input.mp4");
  fuzz_memory_file(copy_path, sizeof copy_path, "copy.mp4");
  fuzz_memory_file(template_path, sizeof template_path, "template.mp4");
}

/* The file's bytes in a buffer of exactly their size (one byte for none). */
static Bytes read_whole(const char *path)
{
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  FUZZ_ASSERT(fd >= 0);
  struct stat st;
  FUZZ_ASSERT(fstat(fd, &st) == 0);
  Bytes bytes = {malloc(st.st_size ? (size_t)st.st_size : 1), (size_t)st.st_size};
  FUZZ_ASSERT(bytes.data != NULL);
  FUZZ_ASSERT(bytes.size == 0 || read(fd, bytes.data, bytes.size) == (ssize_t)bytes.size);
  close(fd);
  return bytes;
}

/* 0, or a known negative status with "<path>: <reason>". */
static void check_status(int status, const char *path)
{
  if (status == LH_OK)
    return;
  FUZZ_ASSERT(status < 0 && strcmp(lh_status_name(status), "unknown") != 0);
  const char *message = lh_last_error();
  const size_t n = strlen(path);
  FUZZ_ASSERT(strncmp(message, path, n) == 0 && strncmp(message + n, ": ", 2) == 0 &&
              message[n + 2] != '\0');
}

/* ---- boxes in memory ---- */

static bool is_container(const uint8_t *type)
{
  for (size_t i = 0; i < sizeof containers / sizeof containers[0]; i++)
    if (memcmp(type, containers[i], 4) == 0)
      return true;
  return false;
}

/* moov's first video track, on a copy of exactly moov's size as
 * lhio_mp4_read_moov gives it. */
static void check_video_trak(const uint8_t *box, size_t size)
{
  uint8_t *moov = malloc(size);
  FUZZ_ASSERT(moov != NULL);
  memcpy(moov, box, size);
  const size_t first = lhio_be32(moov) == 1 ? 16 : 8;
  size_t trak, trak_end, mdia, mdia_end, hdlr, hdlr_end;
  if (lhio_mp4_video_trak(moov, size, first, &trak, &trak_end, &mdia, &mdia_end)) {
    FUZZ_ASSERT(first + 8 <= trak && trak <= trak_end && trak_end <= size);
    FUZZ_ASSERT(trak + 8 <= mdia && mdia <= mdia_end && mdia_end <= trak_end);
    FUZZ_ASSERT(lhio_mp4_child(moov, mdia, mdia_end, "hdlr", &hdlr, &hdlr_end));
    FUZZ_ASSERT(hdlr_end - hdlr >= 12 && memcmp(moov + hdlr + 8, "vide", 4) == 0);
  }
  free(moov);
}

/* Every box of [from, end) and of its containers' children lies inside
 * its parent, and lhio_mp4_child finds each as the first of its type from
 * where it starts. */
static void walk(const uint8_t *data, size_t from, size_t end, int depth)
{
  const uint8_t *type;
  size_t payload, size, at = from;
  int n = 0;
  for (; lhio_mp4_box_at(data, at, end, &type, &payload, &size); at += size, n++) {
    FUZZ_ASSERT(type == data + at + 4);
    FUZZ_ASSERT(payload == at + 8 || payload == at + 16);
    FUZZ_ASSERT(size >= payload - at && size <= end - at);
    if (n < CHILD_CHECKS) {
      size_t child, child_end;
      FUZZ_ASSERT(lhio_mp4_child(data, at, end, (const char *)type, &child, &child_end));
      FUZZ_ASSERT(child == payload && child_end == at + size);
    }
    if (memcmp(type, "moov", 4) == 0)
      check_video_trak(data + at, size);
    if (depth < WALK_DEPTH && is_container(type))
      walk(data, payload, at + size, depth + 1);
  }
  /* At the end there is no box, nor past it. */
  FUZZ_ASSERT(!lhio_mp4_box_at(data, end, end, &type, &payload, &size));
  FUZZ_ASSERT(!lhio_mp4_box_at(data, end + 1, end, &type, &payload, &size));
}

/* Whether the boxes of [from, end) follow each other to exactly its end;
 * with stated_sizes, none of size 0 (to the end) among them. */
static bool boxes_tile(const uint8_t *data, size_t from, size_t end, bool stated_sizes)
{
  const uint8_t *type;
  size_t payload, size, at = from;
  while (at < end && lhio_mp4_box_at(data, at, end, &type, &payload, &size) &&
         !(stated_sizes && lhio_be32(data + at) == 0))
    at += size;
  return at == end;
}

/* ---- the moov box of a file ---- */

/* Reads path's moov with lhio_mp4_read_moov and checks what it says
 * against the file's bytes: the first moov among the top-level boxes that
 * follow each other from the start (the walk in memory finds it too). */
static int read_moov(const char *path, const Bytes *file, LhioMp4Moov *moov)
{
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  FUZZ_ASSERT(fd >= 0);
  const int status = lhio_mp4_read_moov(fd, path, moov);
  close(fd);
  check_status(status, path);
  if (status < 0) {
    FUZZ_ASSERT(moov->data == NULL);
    return status;
  }
  const uint8_t *type;
  size_t payload, size, at = 0;
  while (lhio_mp4_box_at(file->data, at, file->size, &type, &payload, &size) &&
         memcmp(type, "moov", 4) != 0)
    at += size;
  const bool walked_to_moov = lhio_mp4_box_at(file->data, at, file->size, &type, &payload, &size);
  FUZZ_ASSERT(walked_to_moov == (moov->data != NULL));
  FUZZ_ASSERT(!walked_to_moov || ((size_t)moov->at == at && moov->size == size));
  if (moov->data) {
    FUZZ_ASSERT(moov->size >= 8 && moov->at >= 0 && (uint64_t)moov->at + moov->size <= file->size);
    FUZZ_ASSERT(memcmp(moov->data, file->data + moov->at, moov->size) == 0);
    FUZZ_ASSERT(memcmp(moov->data + 4, "moov", 4) == 0);
    FUZZ_ASSERT(moov->children == (lhio_be32(moov->data) == 1 ? 16u : 8u));
    FUZZ_ASSERT(moov->children <= moov->size);
    FUZZ_ASSERT(moov->tail == file->size - (size_t)moov->at - moov->size);
  }
  return status;
}

/* The first chpl box in the first udta of a moov read: where it starts and
 * its size (as mp4-chapters.c finds it). */
static bool find_chpl(const LhioMp4Moov *moov, size_t *chpl_at, size_t *chpl_size)
{
  size_t udta, udta_end, payload;
  const uint8_t *type;
  if (!moov->data ||
      !lhio_mp4_child(moov->data, moov->children, moov->size, "udta", &udta, &udta_end))
    return false;
  for (size_t at = udta; lhio_mp4_box_at(moov->data, at, udta_end, &type, &payload, chpl_size);
       at += *chpl_size)
    if (memcmp(type, "chpl", 4) == 0) {
      *chpl_at = at;
      return true;
    }
  return false;
}

/* The input's chapters as lhio_mp4_keep_chapters takes them: a chpl box of
 * 13 bytes or more (header, version and flags, count). */
static bool chapters_of(const char *path, Bytes *chpl)
{
  Bytes file = read_whole(path);
  LhioMp4Moov moov;
  size_t at, size;
  bool found = read_moov(path, &file, &moov) == LH_OK && find_chpl(&moov, &at, &size) && size >= 13;
  if (found) {
    chpl->data = malloc(size);
    FUZZ_ASSERT(chpl->data != NULL);
    memcpy(chpl->data, moov.data + at, size);
    chpl->size = size;
  }
  lhio_mp4_moov_clear(&moov);
  free(file.data);
  return found;
}

/* A full box of times (mvhd, tkhd, mdhd): its creation time, version 0 in
 * 32 bits, version 1 in 64; false when the box is too short for it. */
static bool creation_time(const uint8_t *data, size_t payload, size_t end, uint64_t *seconds,
                          size_t *field, size_t *width)
{
  if (end - payload < 12 || data[payload] > 1 || (data[payload] == 1 && end - payload < 20))
    return false;
  *field = payload + 4;
  *width = data[payload] == 1 ? 8 : 4;
  *seconds = lhio_be32(data + payload + 4);
  if (*width == 8)
    *seconds = *seconds << 32 | lhio_be32(data + payload + 8);
  return true;
}

/* The movie creation time of the file at path, as the input of
 * lhio_mp4_keep_creation_time; false if it states none. */
static bool movie_creation_time(const char *path, uint64_t *seconds)
{
  Bytes file = read_whole(path);
  LhioMp4Moov moov;
  size_t mvhd, mvhd_end, field, width;
  const bool known =
      read_moov(path, &file, &moov) == LH_OK && moov.data &&
      lhio_mp4_child(moov.data, moov.children, moov.size, "mvhd", &mvhd, &mvhd_end) &&
      creation_time(moov.data, mvhd, mvhd_end, seconds, &field, &width);
  lhio_mp4_moov_clear(&moov);
  free(file.data);
  return known;
}

/* ---- templates: small valid files made here ---- */

typedef struct {
  uint8_t data[1024];
  size_t size;
} Builder;

static void put(Builder *b, const void *bytes, size_t n)
{
  FUZZ_ASSERT(b->size + n <= sizeof b->data);
  memcpy(b->data + b->size, bytes, n);
  b->size += n;
}

static void put32(Builder *b, uint32_t v)
{
  uint8_t bytes[4];
  lhio_put_be32(bytes, v);
  put(b, bytes, 4);
}

static void put64(Builder *b, uint64_t v)
{
  put32(b, (uint32_t)(v >> 32));
  put32(b, (uint32_t)v);
}

static void put_zeros(Builder *b, size_t n)
{
  static const uint8_t zeros[32];
  FUZZ_ASSERT(n <= sizeof zeros);
  put(b, zeros, n);
}

static size_t open_box(Builder *b, const char *type)
{
  const size_t at = b->size;
  put32(b, 0);
  put(b, type, 4);
  return at;
}

static void close_box(Builder *b, size_t at)
{
  lhio_put_be32(b->data + at, (uint32_t)(b->size - at));
}

static void put_matrix(Builder *b)
{
  for (int k = 0; k < 9; k++)
    put32(b, identity[k]);
}

/* The output template: what mp4mux writes from a video, media data first,
 * no user data; mvhd and tkhd of version 0, mdhd of version 1.  The
 * offsets of their creation times. */
typedef struct {
  Builder file;
  size_t mvhd_time, tkhd_time, mdhd_time; /* 4, 4 and 8 bytes */
  size_t moov_at;
} Template;

static const Template *output_template(void)
{
  static Template t;
  if (t.file.size)
    return &t;
  Builder *b = &t.file;
  size_t box = open_box(b, "ftyp");
  put(b, "isom\0\0\0\0isommp42", 16);
  close_box(b, box);
  box = open_box(b, "mdat");
  put_zeros(b, 16);
  close_box(b, box);
  t.moov_at = open_box(b, "moov");
  box = open_box(b, "mvhd");
  put32(b, 0);
  t.mvhd_time = b->size;
  put32(b, 100), put32(b, 200), put32(b, 1000), put32(b, 1000);
  put32(b, 0x10000), put32(b, 0x01000000), put_zeros(b, 8);
  put_matrix(b);
  put_zeros(b, 24), put32(b, 2);
  close_box(b, box);
  const size_t trak = open_box(b, "trak");
  box = open_box(b, "tkhd");
  put32(b, 3);
  t.tkhd_time = b->size;
  put32(b, 100), put32(b, 200), put32(b, 1), put32(b, 0), put32(b, 1000);
  put_zeros(b, 16);
  put_matrix(b);
  put32(b, 16 << 16), put32(b, 8 << 16);
  close_box(b, box);
  const size_t mdia = open_box(b, "mdia");
  box = open_box(b, "mdhd");
  put32(b, 1u << 24);
  t.mdhd_time = b->size;
  put64(b, 100), put64(b, 200), put32(b, 25), put64(b, 25), put32(b, 0x55c40000);
  close_box(b, box);
  box = open_box(b, "hdlr");
  put32(b, 0), put32(b, 0);
  put(b, "vide", 4);
  put_zeros(b, 12);
  put(b, "\0", 1);
  close_box(b, box);
  close_box(b, mdia);
  close_box(b, trak);
  close_box(b, t.moov_at);
  return &t;
}

/* The input template: a file with chapters (a Nero chpl box of version 1,
 * as FFmpeg writes it) and a creation time in a version-1 mvhd. */
#define TEMPLATE_SECONDS 3786825600u /* 2024-01-01 */

static const Builder *input_template(void)
{
  static Builder b;
  if (b.size)
    return &b;
  size_t box = open_box(&b, "ftyp");
  put(&b, "qt  \0\0\0\0qt  ", 12);
  close_box(&b, box);
  const size_t moov = open_box(&b, "moov");
  box = open_box(&b, "mvhd");
  put32(&b, 1u << 24);
  put64(&b, TEMPLATE_SECONDS), put64(&b, TEMPLATE_SECONDS), put32(&b, 600), put64(&b, 600);
  put32(&b, 0x10000), put32(&b, 0x01000000), put_zeros(&b, 8);
  put_matrix(&b);
  put_zeros(&b, 24), put32(&b, 2);
  close_box(&b, box);
  const size_t udta = open_box(&b, "udta");
  box = open_box(&b, "chpl");
  put32(&b, 1u << 24), put32(&b, 0);
  put(&b, "\2", 1);
  put64(&b, 0), put(&b, "\5Intro", 6);
  put64(&b, 5000000), put(&b, "\3End", 4);
  close_box(&b, box);
  close_box(&b, udta);
  close_box(&b, moov);
  box = open_box(&b, "mdat");
  put_zeros(&b, 8);
  close_box(&b, box);
  return &b;
}

/* ---- the rewrites ---- */

static void check_rotation(const uint8_t *before, size_t size, int quarter_turns)
{
  Bytes after = read_whole(copy_path);
  FUZZ_ASSERT(after.size == size);
  size_t first = size, last = 0;
  for (size_t i = 0; i < size; i++)
    if (after.data[i] != before[i]) {
      first = first < i ? first : i;
      last = i;
    }
  if (first < size) {
    /* The matrix of the first video track's header, found again. */
    LhioMp4Moov moov;
    size_t trak, trak_end, mdia, mdia_end, tkhd, tkhd_end;
    FUZZ_ASSERT(read_moov(copy_path, &after, &moov) == LH_OK && moov.data);
    FUZZ_ASSERT(lhio_mp4_video_trak(moov.data, moov.size, moov.children, &trak, &trak_end, &mdia,
                                    &mdia_end));
    FUZZ_ASSERT(lhio_mp4_child(moov.data, trak, trak_end, "tkhd", &tkhd, &tkhd_end));
    FUZZ_ASSERT(tkhd < tkhd_end);
    const size_t matrix = tkhd + 4 + (moov.data[tkhd] == 1 ? 32 : 20) + 16;
    FUZZ_ASSERT(matrix + 44 <= tkhd_end);
    const size_t p = (size_t)moov.at + matrix;
    lhio_mp4_moov_clear(&moov);
    FUZZ_ASSERT(first >= p && last < p + 36);
    for (int k = 0; k < 9; k++)
      FUZZ_ASSERT(lhio_be32(before + p + 4 * k) == identity[k]);
    const uint32_t width = lhio_be32(before + p + 36), height = lhio_be32(before + p + 40);
    const uint32_t one = 0x10000, minus_one = 0xFFFF0000u;
    /* {a, b, u, c, d, v, x, y, w}: x' = a x + c y + tx, clockwise turns. */
    const uint32_t turned[3][9] = {
        {0, one, 0, minus_one, 0, 0, height, 0, 0x40000000},
        {minus_one, 0, 0, 0, minus_one, 0, width, height, 0x40000000},
        {0, minus_one, 0, one, 0, 0, 0, width, 0x40000000},
    };
    for (int k = 0; k < 9; k++)
      FUZZ_ASSERT(lhio_be32(after.data + p + 4 * k) == turned[quarter_turns - 1][k]);
  }
  free(after.data);
}

/* The creation times the rewrite of copy_path with seconds must have left:
 * every header of the movie, its tracks and their media whose version
 * holds seconds states it, and no other byte changed. */
static void check_creation_times(const uint8_t *before, size_t size, uint64_t seconds)
{
  Bytes after = read_whole(copy_path);
  FUZZ_ASSERT(after.size == size);
  uint8_t *may_change = calloc(size ? size : 1, 1);
  FUZZ_ASSERT(may_change != NULL);
  LhioMp4Moov moov;
  if (read_moov(copy_path, &after, &moov) == LH_OK && moov.data) {
    const uint8_t *data = moov.data;
    size_t stamped[64], n = 0; /* payload, end of each header */
    size_t payload, end, trak, trak_end, mdia, mdia_end;
    if (lhio_mp4_child(data, moov.children, moov.size, "mvhd", &payload, &end))
      stamped[n++] = payload, stamped[n++] = end;
    const uint8_t *type;
    size_t box_size;
    for (size_t at = moov.children;
         n + 4 <= 64 && lhio_mp4_box_at(data, at, moov.size, &type, &trak, &box_size);
         at += box_size) {
      trak_end = at + box_size;
      if (memcmp(type, "trak", 4) != 0)
        continue;
      if (lhio_mp4_child(data, trak, trak_end, "tkhd", &payload, &end))
        stamped[n++] = payload, stamped[n++] = end;
      if (lhio_mp4_child(data, trak, trak_end, "mdia", &mdia, &mdia_end) &&
          lhio_mp4_child(data, mdia, mdia_end, "mdhd", &payload, &end))
        stamped[n++] = payload, stamped[n++] = end;
    }
    for (size_t i = 0; i < n; i += 2) {
      uint64_t stated;
      size_t field, width;
      if (!creation_time(data, stamped[i], stamped[i + 1], &stated, &field, &width))
        continue;
      if (width == 8 || seconds <= UINT32_MAX)
        FUZZ_ASSERT(stated == seconds);
      memset(may_change + moov.at + field, 1, width);
    }
  }
  lhio_mp4_moov_clear(&moov);
  for (size_t i = 0; i < size; i++)
    FUZZ_ASSERT(after.data[i] == before[i] || may_change[i]);
  free(may_change);
  free(after.data);
}

/* lhio_mp4_keep_creation_time from source into copy_path, which holds
 * output (size bytes): what it must do, and a second run changes nothing. */
static void keep_creation_time(const char *source, const uint8_t *output, size_t size)
{
  fuzz_write_file(copy_path, output, size);
  uint64_t seconds;
  const bool known = movie_creation_time(source, &seconds);
  FUZZ_ASSERT(lhio_mp4_keep_creation_time(source, copy_path) == LH_OK);
  if (!known) {
    FUZZ_ASSERT(fuzz_file_is(copy_path, output, size));
    return;
  }
  check_creation_times(output, size, seconds);
  Bytes once = read_whole(copy_path);
  FUZZ_ASSERT(lhio_mp4_keep_creation_time(source, copy_path) == LH_OK);
  FUZZ_ASSERT(fuzz_file_is(copy_path, once.data, once.size));
  free(once.data);
}

/* lhio_mp4_keep_chapters from source into copy_path, which holds output
 * (size bytes): where output's moov can take them (no media data after it,
 * no chapters in it, boxes that fill its udta, or itself where it has no
 * udta, each with its size stated), the source's chpl box put whole into its udta with
 * the sizes of moov and udta grown to match; otherwise nothing changed; a
 * second run changes nothing. */
static void keep_chapters(const char *source, const uint8_t *output, size_t size)
{
  fuzz_write_file(copy_path, output, size);
  const Bytes before = {(uint8_t *)output, size};
  LhioMp4Moov old, moov;
  size_t at, chpl_size;
  FUZZ_ASSERT(read_moov(copy_path, &before, &old) == LH_OK);
  size_t udta, udta_end;
  const bool room = old.data && !old.media_after && !find_chpl(&old, &at, &chpl_size) &&
                    (lhio_mp4_child(old.data, old.children, old.size, "udta", &udta, &udta_end)
                         ? boxes_tile(old.data, udta, udta_end, true)
                         : boxes_tile(old.data, old.children, old.size, true));
  Bytes chpl = {NULL, 0};
  const bool has_chapters = chapters_of(source, &chpl);
  FUZZ_ASSERT(lhio_mp4_keep_chapters(source, copy_path) == LH_OK);
  Bytes after = read_whole(copy_path);
  if (!has_chapters || !room) {
    FUZZ_ASSERT(after.size == size && memcmp(after.data, output, size) == 0);
  } else {
    FUZZ_ASSERT(after.size == size + chpl.size || after.size == size + chpl.size + 8);
    const size_t grow = after.size - size;
    /* Before moov and after it, the same bytes. */
    FUZZ_ASSERT(memcmp(after.data, output, (size_t)old.at) == 0);
    const size_t old_end = (size_t)old.at + old.size;
    FUZZ_ASSERT(memcmp(after.data + old_end + grow, output + old_end, size - old_end) == 0);
    FUZZ_ASSERT(read_moov(copy_path, &after, &moov) == LH_OK && moov.data);
    FUZZ_ASSERT(moov.at == old.at && moov.size == old.size + grow);
    FUZZ_ASSERT(find_chpl(&moov, &at, &chpl_size));
    FUZZ_ASSERT(chpl_size == chpl.size && memcmp(moov.data + at, chpl.data, chpl.size) == 0);
    /* The boxes around it still say their sizes. */
    FUZZ_ASSERT(!boxes_tile(output, 0, size, false) ||
                boxes_tile(after.data, 0, after.size, false));
    FUZZ_ASSERT(!boxes_tile(old.data, old.children, old.size, false) ||
                boxes_tile(moov.data, moov.children, moov.size, false));
    FUZZ_ASSERT(lhio_mp4_child(moov.data, moov.children, moov.size, "udta", &udta, &udta_end));
    FUZZ_ASSERT(udta <= at && at + chpl_size <= udta_end);
    lhio_mp4_moov_clear(&moov);
    FUZZ_ASSERT(lhio_mp4_keep_chapters(source, copy_path) == LH_OK);
    FUZZ_ASSERT(fuzz_file_is(copy_path, after.data, after.size));
  }
  lhio_mp4_moov_clear(&old);
  free(after.data);
  free(chpl.data);
}

/* lhio_mp4_write_moov on a copy: the moov written back as it was leaves
 * the file as it was; one grown or shrunk (by its first 8 bytes, or by 8
 * more) moves what follows, or is refused where media data follows. */
static void check_write_moov(const uint8_t *data, size_t size, const LhioMp4Moov *moov)
{
  for (int kind = 0; kind < 3; kind++) {
    fuzz_write_file(copy_path, data, size);
    size_t new_size = kind == 0 ? moov->size : kind == 1 ? moov->size + 8 : 8;
    uint8_t *written = calloc(new_size, 1);
    FUZZ_ASSERT(written != NULL);
    memcpy(written, moov->data, new_size < moov->size ? new_size : moov->size);
    int fd = open(copy_path, O_RDWR | O_CLOEXEC);
    FUZZ_ASSERT(fd >= 0);
    const int status = lhio_mp4_write_moov(fd, copy_path, moov, written, new_size);
    FUZZ_ASSERT(close(fd) == 0);
    check_status(status, copy_path);
    if (status < 0) {
      FUZZ_ASSERT(new_size != moov->size && moov->media_after);
      FUZZ_ASSERT(fuzz_file_is(copy_path, data, size));
    } else {
      FUZZ_ASSERT(new_size == moov->size || !moov->media_after);
      Bytes after = read_whole(copy_path);
      const size_t at = (size_t)moov->at;
      FUZZ_ASSERT(after.size == size - moov->size + new_size);
      FUZZ_ASSERT(memcmp(after.data, data, at) == 0);
      FUZZ_ASSERT(memcmp(after.data + at, written, new_size) == 0);
      FUZZ_ASSERT(memcmp(after.data + at + new_size, data + at + moov->size, moov->tail) == 0);
      free(after.data);
    }
    free(written);
  }
}

/* The input's moov cut right after one of its boxes, or after that box's
 * header with the box made empty, the sizes of the boxes around it cut to
 * match, as a file of its own: each box of moov, of its tracks and of
 * their media then ends moov, whole and empty, so that a read of a byte
 * past it (a header's version taken from an empty box) is a read past
 * the moov read, which ASan sees.  Its duration read and its rotation
 * written as the input's are. */
typedef struct {
  const uint8_t *moov;
  int quarter_turns;
  int left; /* boxes still to cut after */
} Cuts;

static void check_cut(const Cuts *cuts, const size_t *outer, int n_outer, size_t end)
{
  uint8_t *cut = malloc(end);
  FUZZ_ASSERT(cut != NULL);
  memcpy(cut, cuts->moov, end);
  for (int i = 0; i < n_outer; i++) {
    const size_t at = outer[i];
    const uint32_t field = lhio_be32(cut + at);
    if (field == 1) {
      lhio_put_be32(cut + at + 8, 0);
      lhio_put_be32(cut + at + 12, (uint32_t)(end - at));
    } else if (field != 0) { /* 0: to the end, which it still is */
      lhio_put_be32(cut + at, (uint32_t)(end - at));
    }
  }
  fuzz_write_file(copy_path, cut, end);
  const double duration = lhio_mp4_video_duration(copy_path);
  FUZZ_ASSERT(isnan(duration) || (isfinite(duration) && duration > 0));
  (void)lhio_mp4_states_full_range(copy_path); /* reads the sample entry of the cut moov */
  FUZZ_ASSERT(lhio_mp4_set_rotation(copy_path, cuts->quarter_turns) == LH_OK);
  check_rotation(cut, end, cuts->quarter_turns);
  free(cut);
}

static void cut_after_each(Cuts *cuts, size_t *outer, int n_outer, size_t from, size_t end)
{
  const uint8_t *type;
  size_t payload, size;
  for (size_t at = from;
       cuts->left > 0 && lhio_mp4_box_at(cuts->moov, at, end, &type, &payload, &size); at += size) {
    cuts->left--;
    check_cut(cuts, outer, n_outer, at + size);
    outer[n_outer] = at; /* the box itself, emptied */
    check_cut(cuts, outer, n_outer + 1, payload);
    if (n_outer < 3 && (memcmp(type, "trak", 4) == 0 || memcmp(type, "mdia", 4) == 0 ||
                        memcmp(type, "udta", 4) == 0)) {
      outer[n_outer] = at;
      cut_after_each(cuts, outer, n_outer + 1, payload, at + size);
    }
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  make_files();

  /* The boxes in memory, in a copy of exactly the input's size. */
  uint8_t *copy = fuzz_copy(data, size);
  walk(copy, 0, size, 0);

  /* What only reads the input leaves it as it was. */
  fuzz_write_file(input_path, data, size);
  const Bytes input = {copy, size};
  const double duration = lhio_mp4_video_duration(input_path);
  FUZZ_ASSERT(isnan(duration) || (isfinite(duration) && duration > 0));
  (void)lhio_mp4_states_full_range(input_path);
  LhioMp4Moov moov;
  if (read_moov(input_path, &input, &moov) == LH_OK && moov.data)
    check_write_moov(data, size, &moov);
  FUZZ_ASSERT(fuzz_file_is(input_path, data, size));

  /* The rotation, asked of a copy of the input (a turn chosen by its size). */
  const int quarter_turns = 1 + (int)(size % 3);
  fuzz_write_file(copy_path, data, size);
  FUZZ_ASSERT(lhio_mp4_set_rotation(copy_path, 0) == LH_OK);
  FUZZ_ASSERT(lhio_mp4_set_rotation(copy_path, 4) == LH_OK);
  FUZZ_ASSERT(fuzz_file_is(copy_path, data, size));
  FUZZ_ASSERT(lhio_mp4_set_rotation(copy_path, quarter_turns) == LH_OK);
  check_rotation(data, size, quarter_turns);

  /* Creation time and chapters: the input's into a copy of itself (its
   * chapters are there already), into the output template, and the input
   * template's into the input. */
  const Template *output = output_template();
  const Builder *source = input_template();
  keep_creation_time(input_path, data, size);
  keep_creation_time(input_path, output->file.data, output->file.size);
  keep_chapters(input_path, data, size);
  FUZZ_ASSERT(fuzz_file_is(copy_path, data, size));
  keep_chapters(input_path, output->file.data, output->file.size);
  fuzz_write_file(template_path, source->data, source->size);
  keep_creation_time(template_path, data, size);
  keep_chapters(template_path, data, size);

  if (moov.data) {
    Cuts cuts = {moov.data, quarter_turns, MAX_CUTS};
    size_t outer[4] = {0};
    cut_after_each(&cuts, outer, 1, moov.children, moov.size);
  }
  lhio_mp4_moov_clear(&moov);
  FUZZ_ASSERT(fuzz_file_is(input_path, data, size));
  FUZZ_ASSERT(fuzz_file_is(template_path, source->data, source->size));

  free(copy);
  return 0;
}
