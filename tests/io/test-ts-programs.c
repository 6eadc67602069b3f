/* test-ts-programs.c: lhio_ts_programs() and lhio_ts_file_programs() on
 * transport streams written here packet by packet: the programs a PAT
 * lists (program 0, the network's, aside), in the four packet sizes, with
 * a PAT that spans two packets, with the map (PMT) of a later-listed
 * program coming first (the one tsdemux plays), a capture that begins
 * inside a packet, and data that is no transport stream. */
#include "io-test.h"

#include "lhio-video.h"

typedef struct {
  size_t size; /* of a packet */
  size_t sync; /* offset of its sync byte */
} Kind;

static const Kind kinds[] = {{188, 0}, {192, 4}, {204, 0}, {208, 0}};

typedef struct {
  uint8_t *data;
  size_t size, capacity;
  uint64_t seed;
  uint8_t continuity[0x2000];
} Stream;

static void put(Stream *s, const void *bytes, size_t n)
{
  if (n == 0)
    return; /* no time code or parity: memcpy to a stream not yet allocated */
  if (s->size + n > s->capacity) {
    s->capacity = (s->size + n) * 2;
    s->data = realloc(s->data, s->capacity);
  }
  memcpy(s->data + s->size, bytes, n);
  s->size += n;
}

static void put_packet(Stream *s, const Kind *kind, const uint8_t ts[188])
{
  uint8_t extra[20];
  for (size_t i = 0; i < kind->size - 188; i++)
    extra[i] = (uint8_t)test_rand(&s->seed);
  put(s, extra, kind->sync);
  put(s, ts, 188);
  put(s, extra + kind->sync, kind->size - 188 - kind->sync);
}

/* A section (table_id first, its CRC at the end) on pid, after a pointer
 * field of 0, in as many packets as it takes, the last padded with 0xff. */
static void put_section(Stream *s, const Kind *kind, unsigned pid, const uint8_t *section, size_t n)
{
  size_t done = 0;
  bool first = true;
  while (done < n || first) {
    uint8_t ts[188];
    memset(ts, 0xff, sizeof ts);
    ts[0] = 0x47;
    ts[1] = (uint8_t)((first ? 0x40 : 0) | (pid >> 8));
    ts[2] = (uint8_t)pid;
    ts[3] = (uint8_t)(0x10 | (s->continuity[pid]++ & 0x0f));
    size_t at = 4;
    if (first)
      ts[at++] = 0; /* pointer field */
    size_t room = 188 - at, take = n - done < room ? n - done : room;
    memcpy(ts + at, section + done, take);
    done += take;
    first = false;
    put_packet(s, kind, ts);
  }
}

/* A PAT of the programs (number, map PID); number 0 is the network's. */
static void put_pat(Stream *s, const Kind *kind, const int (*programs)[2], int count)
{
  uint8_t section[1024];
  size_t n = 8;
  for (int i = 0; i < count; i++) {
    section[n++] = (uint8_t)(programs[i][0] >> 8);
    section[n++] = (uint8_t)programs[i][0];
    section[n++] = (uint8_t)(0xe0 | (programs[i][1] >> 8));
    section[n++] = (uint8_t)programs[i][1];
  }
  n += 4; /* the CRC, not checked */
  size_t length = n - 3;
  const uint8_t head[8] = {0x00, (uint8_t)(0xb0 | (length >> 8)), (uint8_t)length, 0, 1, 0xc1, 0,
                           0};
  memcpy(section, head, sizeof head);
  test_put_be32(section + n - 4, test_crc32(section, n - 4));
  put_section(s, kind, 0, section, n);
}

/* A PMT of program number on pid, with one H.264 stream (its length the
 * 18 bytes after it: the header's 9, the stream's 5 and the CRC's 4). */
static void put_pmt(Stream *s, const Kind *kind, unsigned pid, int number)
{
  uint8_t section[] = {0x02,
                       0xb0,
                       0x12,
                       (uint8_t)(number >> 8),
                       (uint8_t)number,
                       0xc1,
                       0,
                       0,
                       0xe1,
                       0x00,
                       0xf0,
                       0x00,
                       0x1b,
                       0xe1,
                       0x00,
                       0xf0,
                       0x00,
                       0,
                       0,
                       0,
                       0};
  put_section(s, kind, pid, section, sizeof section);
}

/* Packets of a PES on pid (their bytes do not matter here). */
static void put_payload(Stream *s, const Kind *kind, unsigned pid, int packets)
{
  for (int i = 0; i < packets; i++) {
    uint8_t ts[188];
    for (size_t k = 4; k < 188; k++)
      ts[k] = (uint8_t)test_rand(&s->seed);
    ts[0] = 0x47;
    ts[1] = (uint8_t)((i == 0 ? 0x40 : 0) | (pid >> 8));
    ts[2] = (uint8_t)pid;
    ts[3] = (uint8_t)(0x10 | (s->continuity[pid]++ & 0x0f));
    if (i == 0) {
      ts[4] = 0, ts[5] = 0, ts[6] = 1, ts[7] = 0xe0;
    }
    put_packet(s, kind, ts);
  }
}

static void check_programs(const LhioTsPrograms *got, const int *want, int count, int first,
                           const char *what)
{
  bool same = got->count == count && got->first_mapped == first;
  for (int i = 0; same && i < count; i++)
    same = got->numbers[i] == want[i];
  CHECK(same, "%s: %d programs, first mapped %d; %d expected, first %d", what, got->count,
        got->first_mapped, count, first);
  /* put_pmt's maps list one stream (the rewrite's count of what tsdemux
   * gave out is held against it). */
  CHECK(got->first_mapped_streams == (first < 0 ? -1 : 1), "%s: the first map lists %d streams",
        what, got->first_mapped_streams);
}

static void test_kind(const Kind *kind, const char *dir)
{
  /* Three programs and the network's; the map of 9, listed last, comes
   * first after the table, as in a multiplex whose maps come round in
   * another order than its table lists them. */
  static const int listed[][2] = {{0, 0x10}, {7, 0x1000}, {3, 0x1001}, {9, 0x1002}};
  static const int numbers[] = {7, 3, 9};
  Stream s = {.seed = 7};
  put_payload(&s, kind, 0x100, 3); /* before the table: no map is known */
  put_pmt(&s, kind, 0x1001, 3);    /* a map before the table counts for nothing */
  put_pat(&s, kind, listed, 4);
  put_payload(&s, kind, 0x100, 5);
  put_pmt(&s, kind, 0x1002, 9);
  put_pmt(&s, kind, 0x1000, 7);
  put_pmt(&s, kind, 0x1001, 3);
  put_payload(&s, kind, 0x101, 20);
  LhioTsPrograms got;
  char what[80];
  snprintf(what, sizeof what, "%zu-byte packets", kind->size);
  lhio_ts_programs(s.data, s.size, &got);
  check_programs(&got, numbers, 3, 9, what);
  /* A capture that begins inside a packet. */
  for (size_t skip = 1; skip < kind->size; skip += 37) {
    lhio_ts_programs(s.data + skip, s.size - skip, &got);
    snprintf(what, sizeof what, "%zu-byte packets, %zu bytes in", kind->size, skip);
    /* Its first packets are lost, and the early map with them. */
    check_programs(&got, numbers, 3, 9, what);
  }
  /* Cut inside the table: none whole. */
  size_t table_end = kind->size * 5;
  lhio_ts_programs(s.data, table_end - 10, &got);
  snprintf(what, sizeof what, "%zu-byte packets, cut in the table", kind->size);
  CHECK(got.count == 0 && got.first_mapped == -1, "%s: %d programs", what, got.count);
  /* Cut before any map after the table: the programs, none mapped. */
  lhio_ts_programs(s.data, kind->size * 10, &got);
  snprintf(what, sizeof what, "%zu-byte packets, no map after the table", kind->size);
  check_programs(&got, numbers, 3, -1, what);
  /* The same through a file. */
  char name[64];
  snprintf(name, sizeof name, "programs-%zu.ts", kind->size);
  const char *path = test_path(dir, name);
  test_write_file(path, s.data, s.size);
  CHECK(lhio_ts_file_programs(path, &got) == 0, "%s: not read", path);
  check_programs(&got, numbers, 3, 9, path);
  free(s.data);
}

/* A table of 60 programs spans two packets; one of 1 program is one. */
static void test_sizes(void)
{
  int listed[60][2], numbers[60];
  for (int i = 0; i < 60; i++) {
    listed[i][0] = numbers[i] = 100 + i;
    listed[i][1] = 0x1000 + i;
  }
  Stream s = {.seed = 3};
  put_pat(&s, &kinds[0], (const int(*)[2])listed, 60);
  put_pmt(&s, &kinds[0], 0x1000 + 42, 142);
  put_payload(&s, &kinds[0], 0x100, 10);
  LhioTsPrograms got;
  lhio_ts_programs(s.data, s.size, &got);
  check_programs(&got, numbers, 60, 142, "a table of 60 programs over two packets");
  free(s.data);
  Stream one = {.seed = 5};
  static const int single[][2] = {{1, 0x1000}};
  put_pat(&one, &kinds[1], single, 1);
  put_pmt(&one, &kinds[1], 0x1000, 1);
  put_payload(&one, &kinds[1], 0x100, 10);
  lhio_ts_programs(one.data, one.size, &got);
  check_programs(&got, (const int[]){1}, 1, 1, "one program, M2TS");
  free(one.data);
}

/* No transport stream: no programs, and no read outside the bytes. */
static void test_not_ts(const char *dir)
{
  uint64_t seed = 11;
  for (size_t n = 0; n < 5000; n += 97) {
    uint8_t *data = malloc(n ? n : 1);
    for (size_t i = 0; i < n; i++)
      data[i] = (uint8_t)(i % 188 == 0 ? 0x47 : test_rand(&seed));
    LhioTsPrograms got;
    lhio_ts_programs(data, n, &got);
    CHECK(got.count == 0 && got.first_mapped == -1, "%zu bytes of noise: %d programs", n,
          got.count);
    free(data);
  }
  LhioTsPrograms got;
  lhio_ts_programs(NULL, 0, &got);
  CHECK(got.count == 0, "NULL: %d programs", got.count);
  CHECK(lhio_ts_file_programs(test_path(dir, "missing.ts"), &got) == -1 && got.count == 0,
        "a missing file: read");
}

int main(void)
{
  char *dir = test_make_dir();
  for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
    test_kind(&kinds[i], dir);
  test_sizes();
  test_not_ts(dir);
  test_remove_dir(dir);
  return test_result("test-ts-programs");
}
