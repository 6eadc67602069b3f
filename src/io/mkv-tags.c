/* mkv-tags.c: a Matroska or WebM file rewritten from another keeps its tag
 * values as they were.  matroskamux (GStreamer 1.22, and later releases the
 * same) writes each tag value through gst_value_serialize(), which quotes a
 * string that holds anything but letters, digits and _-+/:. and escapes
 * the rest: the title My clip came back as "My\ clip", and Café as
 * "Caf\303\251".  A plain matroskademux ! matroskamux remux does the same.
 * Every such value is turned back into its text (gst_value_deserialize(), the
 * inverse of what wrote it; a string that needed no quoting is written as
 * it is, so a value written by matroskamux that starts with a quote is
 * always a quoted one), in the finished file's Tags element; the bytes it
 * no longer fills become an EBML Void element after it, as matroskamux
 * voids what it leaves unused, so that nothing else in the file moves. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gst/gst.h>

#include "lhio-private.h"

#define ID_TAGS 0x1254C367u
#define ID_TAG 0x7373u
#define ID_SIMPLE_TAG 0x67C8u
#define ID_TAG_STRING 0x4487u
#define ID_VOID 0xECu
/* A Tags element larger than this is left as it is. */
#define TAGS_LIMIT (16u << 20)

/* Writes value as a size field of width bytes at out. */
static void put_size(uint8_t *out, int width, uint64_t value)
{
  for (int i = width - 1; i >= 0; i--, value >>= 8)
    out[i] = (uint8_t)value;
  out[0] |= (uint8_t)(0x80u >> (width - 1));
}

/* A TagString's text as it was before matroskamux quoted it (without the
 * NUL bytes that may end a Matroska string, which GStreamer writes); NULL
 * when it was not quoted (or is not a quoted string GStreamer reads back). */
static char *unquoted(const uint8_t *text, size_t length)
{
  while (length > 0 && text[length - 1] == '\0')
    length--;
  if (length < 2 || text[0] != '"' || text[length - 1] != '"')
    return NULL;
  char *quoted = g_strndup((const char *)text, length);
  GValue value = G_VALUE_INIT;
  g_value_init(&value, G_TYPE_STRING);
  char *plain = gst_value_deserialize(&value, quoted) && g_value_get_string(&value)
                    ? g_value_dup_string(&value)
                    : NULL;
  g_value_unset(&value);
  g_free(quoted);
  return plain;
}

/* Copies the elements in [data, data + size) into out (room for size
 * bytes), with the TagStrings of Tag and SimpleTag elements unquoted and
 * the sizes of the masters around them made to fit, each size field kept at
 * its width; returns the bytes written, or SIZE_MAX for what does not parse. */
static size_t copy_unquoted(const uint8_t *data, size_t size, uint8_t *out)
{
  size_t written = 0;
  for (size_t at = 0; at < size;) {
    LhioEbmlHeader header;
    if (!lhio_ebml_header(data + at, size - at, &header) || header.size == UINT64_MAX ||
        header.size > size - at - header.length)
      return SIZE_MAX;
    const uint8_t *payload = data + at + header.length;
    const size_t payload_size = (size_t)header.size;
    uint8_t *out_payload = out + written + header.length;
    size_t out_size = payload_size;
    char *plain = NULL;
    if (header.id == ID_TAG || header.id == ID_SIMPLE_TAG) {
      out_size = copy_unquoted(payload, payload_size, out_payload);
      if (out_size == SIZE_MAX)
        return SIZE_MAX;
    } else if (header.id == ID_TAG_STRING && (plain = unquoted(payload, payload_size))) {
      /* Ended by a NUL, as matroskamux ends its strings. */
      out_size = strlen(plain) + 1;
      memcpy(out_payload, plain, out_size);
      g_free(plain);
    } else {
      memcpy(out_payload, payload, payload_size);
    }
    memcpy(out + written, data + at, header.length);
    put_size(out + written + header.length - header.size_width, header.size_width, out_size);
    written += header.length + out_size;
    at += header.length + payload_size;
  }
  return written;
}

/* The Tags element (header included, size bytes) with its values unquoted,
 * followed by a Void element over the bytes freed; false if nothing
 * changed or it does not parse. */
static bool unquote_tags(const uint8_t *tags, size_t size, uint8_t *out)
{
  LhioEbmlHeader header;
  if (!lhio_ebml_header(tags, size, &header) || header.size != size - header.length)
    return false;
  const size_t payload =
      copy_unquoted(tags + header.length, size - header.length, out + header.length);
  const size_t freed = size - header.length - (payload == SIZE_MAX ? 0 : payload);
  /* A Void element takes 2 bytes at least: its ID and a 1-byte size. */
  if (payload == SIZE_MAX || freed < 2)
    return false;
  memcpy(out, tags, header.length);
  put_size(out + header.length - header.size_width, header.size_width, payload);
  uint8_t *filler = out + header.length + payload;
  const int width = freed - 2 <= 126 ? 1 : 8;
  filler[0] = ID_VOID;
  put_size(filler + 1, width, freed - 1 - width);
  memset(filler + 1 + width, 0, freed - 1 - width);
  return true;
}

typedef struct {
  const char *path;
  int status;
} Unquoting;

/* A child of the segment: its Tags unquoted in place. */
static bool unquote_child(int fd, off_t at, const LhioEbmlHeader *header, void *data)
{
  Unquoting *u = data;
  const size_t size = header->length + (size_t)header->size;
  if (header->id != ID_TAGS || size > TAGS_LIMIT)
    return true;
  uint8_t *tags = malloc(size), *out = malloc(size);
  if (!tags || !out)
    u->status = lhio_fail(LH_ERROR_NO_MEMORY, u->path, "no memory for its tags");
  else if (pread(fd, tags, size, at) != (ssize_t)size)
    u->status = lhio_fail(LH_ERROR_IO, u->path, "%s", errno ? strerror(errno) : "short read");
  else if (unquote_tags(tags, size, out) && pwrite(fd, out, size, at) != (ssize_t)size)
    u->status = lhio_fail_os(errno, u->path);
  free(tags);
  free(out);
  return u->status == LH_OK;
}

int lhio_mkv_unquote_tags(const char *path)
{
  int fd = open(path, O_RDWR | O_CLOEXEC);
  if (fd < 0)
    return lhio_fail_os(errno, path);
  Unquoting u = {path, LH_OK};
  lhio_mkv_segment_children(fd, unquote_child, &u);
  if (close(fd) != 0 && u.status == LH_OK)
    u.status = lhio_fail_os(errno, path);
  return u.status;
}
