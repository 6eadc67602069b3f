/* test-ts-end.c: lhio_ts_end_cut() and lhio_ts_file_cut() on transport
 * streams written here packet by packet, as muxers write them (every PES
 * ends with its last packet, padded by an adaptation field), in the four
 * packet sizes: every cut inside a packet is seen, every cut between packets
 * inside a PES of stated length is seen, and whole streams, streams ending
 * between PES packets, junk after the last packet, captures that begin
 * inside a packet and non-TS data are not called cut. */
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
  /* For each byte offset that ends a packet: whether a PES of stated length
   * is open there (a cut there must be seen). */
  bool *inside_sized;
  size_t n_ends;
} Stream;

static void put(Stream *s, const void *bytes, size_t n)
{
  if (s->size + n > s->capacity) {
    s->capacity = (s->size + n) * 2;
    s->data = realloc(s->data, s->capacity);
  }
  memcpy(s->data + s->size, bytes, n);
  s->size += n;
}

/* One packet: the 188 bytes given, wrapped as the kind wants (M2TS's time
 * code before, parity after); notes whether a sized PES stays open. */
static void put_packet(Stream *s, const Kind *kind, const uint8_t *ts, bool sized_open)
{
  uint8_t extra[20];
  if (kind->sync) {
    for (size_t i = 0; i < kind->sync; i++)
      extra[i] = (uint8_t)test_rand(&s->seed);
    put(s, extra, kind->sync);
  }
  put(s, ts, 188);
  size_t parity = kind->size - 188 - kind->sync;
  for (size_t i = 0; i < parity; i++)
    extra[i] = (uint8_t)test_rand(&s->seed);
  put(s, extra, parity);
  s->inside_sized = realloc(s->inside_sized, (s->n_ends + 1) * sizeof *s->inside_sized);
  s->inside_sized[s->n_ends++] = sized_open;
}

/* A PES of payload_bytes on pid, its length stated or 0, split into
 * packets.  PES follow each other whole: one is open at a time. */
static void put_pes(Stream *s, const Kind *kind, unsigned pid, size_t payload_bytes, bool stated)
{
  size_t total = 14 + payload_bytes;
  uint8_t *pes = malloc(total);
  size_t length = stated ? total - 6 : 0;
  const uint8_t header[14] = {
      0, 0, 1, 0xe0, (uint8_t)(length >> 8), (uint8_t)length, 0x80, 0x80, 5, 0x21, 0, 1, 0, 1};
  memcpy(pes, header, sizeof header);
  for (size_t i = 14; i < total; i++)
    pes[i] = (uint8_t)test_rand(&s->seed);
  size_t done = 0;
  while (done < total) {
    uint8_t ts[188];
    size_t left = total - done;
    size_t room = left < 184 ? left : 184;
    ts[0] = 0x47;
    ts[1] = (uint8_t)((done == 0 ? 0x40 : 0) | (pid >> 8));
    ts[2] = (uint8_t)pid;
    uint8_t cc = s->continuity[pid]++ & 0x0f;
    size_t start = 4;
    if (room < 184) {
      /* The last packet padded so that the PES ends with it. */
      size_t field = 183 - room;
      ts[3] = (uint8_t)(0x30 | cc);
      ts[4] = (uint8_t)field;
      if (field) {
        ts[5] = 0;
        memset(ts + 6, 0xff, field - 1);
      }
      start = 5 + field;
    } else {
      ts[3] = (uint8_t)(0x10 | cc);
    }
    memcpy(ts + start, pes + done, room);
    done += room;
    put_packet(s, kind, ts, stated && done < total);
  }
  free(pes);
}

/* A PAT section: a unit start that is not a PES. */
static void put_pat(Stream *s, const Kind *kind)
{
  uint8_t ts[188];
  memset(ts, 0xff, sizeof ts);
  const uint8_t head[] = {0x47, 0x40, 0x00, (uint8_t)(0x10 | (s->continuity[0]++ & 0x0f)),
                          0x00, 0x00, 0xb0, 0x0d,
                          0x00, 0x01, 0xc1, 0x00,
                          0x00, 0x00, 0x01, 0xf0,
                          0x00, 0x2a, 0xb1, 0x04,
                          0xb2};
  memcpy(ts, head, sizeof head);
  put_packet(s, kind, ts, false);
}

/* A null packet, which carries nothing. */
static void put_null(Stream *s, const Kind *kind)
{
  uint8_t ts[188];
  memset(ts, 0xff, sizeof ts);
  ts[0] = 0x47;
  ts[1] = 0x1f;
  ts[2] = 0xff;
  ts[3] = 0x10;
  put_packet(s, kind, ts, false);
}

/* Video on 0x100 (its length stated or not) and audio on 0x101 (stated), a
 * PAT now and then, until at least bytes. */
static void make_stream(Stream *s, const Kind *kind, bool video_stated, size_t bytes)
{
  memset(s, 0, sizeof *s);
  s->seed = 42;
  for (int i = 0; s->size < bytes; i++) {
    if (i % 8 == 0)
      put_pat(s, kind);
    put_pes(s, kind, 0x100, 400 + test_rand(&s->seed) % 6000, video_stated);
    if (i % 5 == 2)
      put_null(s, kind);
    put_pes(s, kind, 0x101, 150 + test_rand(&s->seed) % 700, true);
  }
}

static void stream_free(Stream *s)
{
  free(s->data);
  free(s->inside_sized);
}

static int cut_at(const Stream *s, size_t from, size_t n, char *why, size_t why_size)
{
  why[0] = '\0';
  return lhio_ts_end_cut(s->data + from, n - from, why, why_size);
}

static void test_cuts(const Kind *kind, bool video_stated)
{
  Stream s;
  make_stream(&s, kind, video_stated, 200 * 1000);
  char why[200];
  CHECK(cut_at(&s, 0, s.size, why, sizeof why) == 0, "%zu-byte packets: a whole stream is cut: %s",
        kind->size, why);
  /* Inside each of the last packets: every byte. */
  size_t packets = s.size / kind->size;
  for (size_t k = packets - 3; k < packets; k++)
    for (size_t b = 1; b < kind->size; b++) {
      size_t n = k * kind->size + b;
      int cut = cut_at(&s, 0, n, why, sizeof why);
      CHECK(cut == 1 && strstr(why, "bytes into a"),
            "%zu-byte packets: cut %zu bytes into packet %zu: %d %s", kind->size, b, k, cut, why);
    }
  char expected[80];
  snprintf(expected, sizeof expected, "it ends 75 bytes into a %zu-byte %s packet", kind->size,
           kind->size == 192 ? "M2TS" : "MPEG-TS");
  cut_at(&s, 0, (packets - 5) * kind->size + 75, why, sizeof why);
  CHECK(strcmp(why, expected) == 0, "message \"%s\", expected \"%s\"", why, expected);
  /* Between packets: seen where a PES of stated length is open. */
  int seen = 0, unseen = 0;
  for (size_t k = packets - 400; k < packets; k++) {
    size_t n = (k + 1) * kind->size;
    int cut = cut_at(&s, 0, n, why, sizeof why);
    bool open = s.inside_sized[k];
    CHECK(cut == (open ? 1 : 0), "%zu-byte packets%s: cut after packet %zu: %d (%s), PES open %d",
          kind->size, video_stated ? "" : ", video of unstated length", k, cut, why, open);
    if (open)
      CHECK(strstr(why, "the last PES packet of its stream 0x010") != NULL, "%s", why);
    seen += open;
    unseen += !open;
  }
  CHECK(seen > 20 && unseen > 10, "cases: %d inside a sized PES, %d not", seen, unseen);
  /* A capture that begins inside a packet: its end says the same. */
  CHECK(cut_at(&s, 77, s.size, why, sizeof why) == 0, "a capture from byte 77: %s", why);
  CHECK(cut_at(&s, 77, s.size - 100, why, sizeof why) == 1, "the same, cut: %s", why);
  stream_free(&s);
}

static void test_not_cut(void)
{
  char why[200];
  Stream s;
  make_stream(&s, &kinds[0], true, 100 * 1000);
  /* Junk after the last packet (zeros, 0xff) is not a packet begun. */
  size_t whole = s.size;
  uint8_t junk[300];
  memset(junk, 0, sizeof junk);
  put(&s, junk, sizeof junk);
  CHECK(cut_at(&s, 0, s.size, why, sizeof why) == 0, "zeros after the packets: %s", why);
  memset(junk, 0xff, sizeof junk);
  s.size = whole;
  put(&s, junk, 57);
  CHECK(cut_at(&s, 0, s.size, why, sizeof why) == 0, "0xff after the packets: %s", why);
  /* Bytes lost in the middle: the end is read in step again. */
  s.size = whole;
  size_t middle = (whole / 2 / 188) * 188 + 60;
  memmove(s.data + middle, s.data + middle + 13, whole - middle - 13);
  s.size = whole - 13;
  CHECK(cut_at(&s, 0, s.size, why, sizeof why) == 0, "13 bytes lost in the middle: %s", why);
  CHECK(cut_at(&s, 0, s.size - 13 - 188 * 3, why, sizeof why) == 1,
        "13 bytes lost in the middle and cut: %s", why);
  /* A packet whose sync byte is damaged, inside the last PES: whose payload
   * it held is unknown, so the PES's count says nothing. */
  s.size = whole;
  put_pes(&s, &kinds[0], 0x100, 3000, true);
  s.data[whole + 2 * 188] = 0x46;
  CHECK(cut_at(&s, 0, s.size, why, sizeof why) == 0, "a damaged sync byte: %s", why);
  stream_free(&s);
  /* Too short to tell, and data that is not TS. */
  make_stream(&s, &kinds[0], true, 188 * 8);
  CHECK(cut_at(&s, 0, 188 * 6 + 20, why, sizeof why) == 0, "6 packets and a piece: %s", why);
  stream_free(&s);
  uint64_t seed = 7;
  uint8_t *noise = malloc(1 << 20);
  for (size_t i = 0; i < 1 << 20; i++)
    noise[i] = (uint8_t)test_rand(&seed);
  CHECK(lhio_ts_end_cut(noise, 1 << 20, why, sizeof why) == 0, "noise: %s", why);
  CHECK(lhio_ts_end_cut(noise, 0, why, sizeof why) == 0, "nothing: %s", why);
  free(noise);
}

/* On files longer than the end read: the same answers. */
static void test_files(const char *dir)
{
  char why[200];
  Stream s;
  make_stream(&s, &kinds[0], true, 3 * LHIO_TS_END_BYTES);
  const char *path = test_path(dir, "long.ts");
  test_write_file(path, s.data, s.size);
  CHECK(lhio_ts_file_cut(path, why, sizeof why) == 0, "a whole file: %s", why);
  test_write_file(path, s.data, s.size - 1000);
  CHECK(lhio_ts_file_cut(path, why, sizeof why) == 1 && strstr(why, "bytes into a 188-byte"),
        "a file cut inside a packet: %s", why);
  size_t k = s.n_ends - 1;
  while (!s.inside_sized[k])
    k--;
  test_write_file(path, s.data, (k + 1) * 188);
  CHECK(lhio_ts_file_cut(path, why, sizeof why) == 1 && strstr(why, "PES"),
        "a file cut between packets inside a PES: %s", why);
  CHECK(lhio_ts_file_cut(test_path(dir, "missing.ts"), why, sizeof why) == 0, "a missing file");
  CHECK(lhio_ts_file_cut(dir, why, sizeof why) == 0, "a folder");
  stream_free(&s);
}

int main(void)
{
  char *dir = test_make_dir();
  for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
    test_cuts(&kinds[i], true);
    test_cuts(&kinds[i], false);
  }
  test_not_cut();
  test_files(dir);
  test_remove_dir(dir);
  return test_result("test-ts-end");
}
