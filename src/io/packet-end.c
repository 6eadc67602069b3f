/* packet-end.c: whether an FLV, IVF, Ogg or MPEG program stream file was cut
 * inside its last packet.  Their demuxers end such a file quietly at the
 * last whole packet, a frame or two short, and the frames' times show that
 * only where more than half a second is gone.  Each packet states its
 * length (an FLV tag, an IVF frame, an Ogg page, an MPEG-PS pack or PES
 * packet), so a walk from the first one finds the packet that runs past the
 * end of the file, or ends with it: then the file is whole, and its frames
 * need not be held against a duration, which is the longest stream's (audio
 * that runs on after the video is no cut).  A walk that meets bytes that
 * are no packet stops there and tells nothing: a trailer some writer
 * appends is no cut. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "lhio-private.h"

/* Bytes of a packet's header that a walk reads at once: an Ogg page's
 * header with the longest segment table. */
#define HEAD_BYTES (27 + 255)

/* A packet as its header states it. */
typedef struct {
  uint64_t length;  /* its bytes, header included (a short header: the header's) */
  uint64_t advance; /* to the next packet: its length and any trailer after it */
  const char *name; /* e.g. "FLV tag" */
} Packet;

typedef enum {
  PACKET_READ,         /* *packet set */
  PACKET_HEADER_SHORT, /* the file ends in the header: *packet's length is the header's */
  PACKET_NONE,         /* the bytes are no packet of the kind */
} PacketRead;

/* Reads the packet whose header's first got bytes are head (got is less
 * than HEAD_BYTES only at the end of the file). */
typedef PacketRead (*ReadPacket)(const uint8_t *head, size_t got, Packet *packet);

static uint32_t le32(const uint8_t *p)
{
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* A header of header bytes, of which got were there. */
static PacketRead header_of(size_t got, uint64_t header, const char *name, Packet *packet)
{
  packet->length = header;
  packet->name = name;
  return got < header ? PACKET_HEADER_SHORT : PACKET_READ;
}

/* FLV: after the file header (its size stated) and a 4-byte previous tag
 * size, tags of an 11-byte header (type, 24-bit data size, time, stream
 * id), the data and the previous tag size again.  A tag cut in its trailing
 * size alone has lost no media and is no cut. */
static PacketRead read_flv_tag(const uint8_t *head, size_t got, Packet *packet)
{
  const unsigned type = got ? head[0] & 0x1f : 0;
  if (type != 8 && type != 9 && type != 18)
    return PACKET_NONE; /* audio, video and script tags only */
  if (header_of(got, 11, "FLV tag header", packet) == PACKET_HEADER_SHORT)
    return PACKET_HEADER_SHORT;
  packet->length = 11 + ((uint64_t)head[1] << 16 | (uint64_t)head[2] << 8 | head[3]);
  packet->advance = packet->length + 4;
  packet->name = "FLV tag";
  return PACKET_READ;
}

/* IVF: after the file header (its size stated), frames of a 12-byte header
 * (32-bit little-endian size, 64-bit time) and the data. */
static PacketRead read_ivf_frame(const uint8_t *head, size_t got, Packet *packet)
{
  if (header_of(got, 12, "IVF frame header", packet) == PACKET_HEADER_SHORT)
    return PACKET_HEADER_SHORT;
  packet->length = packet->advance = 12 + (uint64_t)le32(head);
  packet->name = "IVF frame";
  return PACKET_READ;
}

/* Ogg: pages of a 27-byte header ("OggS", the count of segments last), the
 * segment table and the segments. */
static PacketRead read_ogg_page(const uint8_t *head, size_t got, Packet *packet)
{
  if (got < 4 || memcmp(head, "OggS", 4) != 0)
    return PACKET_NONE;
  if (got < 27)
    return header_of(got, 27, "Ogg page header", packet);
  if (header_of(got, 27 + (uint64_t)head[26], "Ogg page header", packet) == PACKET_HEADER_SHORT)
    return PACKET_HEADER_SHORT;
  for (int s = 0; s < head[26]; s++)
    packet->length += head[27 + s];
  packet->advance = packet->length;
  packet->name = "Ogg page";
  return PACKET_READ;
}

/* MPEG program stream: start codes 00 00 01 and an id; a pack header of 12
 * bytes (MPEG-1) or 14 and its stuffing (MPEG-2), the end code, and every
 * other packet (system header, PES) 6 bytes and the length it states. */
static PacketRead read_program_stream_packet(const uint8_t *head, size_t got, Packet *packet)
{
  if (got < 4 || head[0] != 0 || head[1] != 0 || head[2] != 1 || head[3] < 0xb9)
    return PACKET_NONE;
  if (head[3] == 0xb9) {
    packet->length = packet->advance = 4; /* the end code */
    packet->name = "MPEG-PS end code";
    return PACKET_READ;
  }
  if (head[3] == 0xba) {
    const char *name = "MPEG-PS pack header";
    if (got < 5)
      return header_of(got, 12, name, packet);
    if ((head[4] & 0xf0) == 0x20) { /* MPEG-1 */
      packet->advance = 12;
      return header_of(got, 12, name, packet);
    }
    if ((head[4] & 0xc0) != 0x40)
      return PACKET_NONE;
    if (got < 14)
      return header_of(got, 14, name, packet);
    packet->length = packet->advance = 14 + (head[13] & 7);
    packet->name = name;
    return PACKET_READ;
  }
  if (header_of(got, 6, "MPEG-PS packet", packet) == PACKET_HEADER_SHORT)
    return PACKET_HEADER_SHORT;
  packet->length = packet->advance = 6 + ((uint64_t)head[4] << 8 | head[5]);
  return PACKET_READ;
}

/* Walks the packets of the open file of end bytes from offset first: where
 * the walk ends, and for a cut the reason. */
static LhioFileEnd walk(int fd, off_t end, off_t first, ReadPacket read_packet, char *why,
                        size_t why_size)
{
  uint8_t head[HEAD_BYTES];
  for (off_t at = first; at < end;) {
    const size_t want = end - at < HEAD_BYTES ? (size_t)(end - at) : HEAD_BYTES;
    const ssize_t got = pread(fd, head, want, at);
    Packet packet = {0};
    const PacketRead read = read_packet(head, got > 0 ? (size_t)got : 0, &packet);
    if (read == PACKET_NONE)
      return LHIO_FILE_END_UNKNOWN;
    if (packet.length > (uint64_t)(end - at)) {
      snprintf(why, why_size, "it ends %lld bytes into its %llu-byte %s", (long long)(end - at),
               (unsigned long long)packet.length, packet.name);
      return LHIO_FILE_END_CUT;
    }
    if (read == PACKET_HEADER_SHORT)
      return LHIO_FILE_END_UNKNOWN; /* a short read of bytes that are there */
    at += (off_t)packet.advance;
  }
  return LHIO_FILE_END_WHOLE;
}

LhioFileEnd lhio_packet_file_end(const char *path, char *why, size_t why_size)
{
  char unused[1];
  if (!why_size) {
    why = unused;
    why_size = sizeof unused;
  }
  why[0] = '\0';
  off_t end;
  int fd = lhio_open_regular(path, &end);
  if (fd < 0)
    return LHIO_FILE_END_UNKNOWN; /* a pipe is read once, by the demuxer */
  uint8_t head[32];
  const ssize_t got = pread(fd, head, sizeof head, 0);
  LhioFileEnd result = LHIO_FILE_END_UNKNOWN;
  if (got >= 9 && memcmp(head, "FLV", 3) == 0)
    result = walk(fd, end, (off_t)lhio_be32(head + 5) + 4, read_flv_tag, why, why_size);
  else if (got == sizeof head && memcmp(head, "DKIF", 4) == 0 && (head[6] | head[7] << 8) >= 32)
    result = walk(fd, end, head[6] | head[7] << 8, read_ivf_frame, why, why_size);
  else if (got >= 4 && memcmp(head, "OggS", 4) == 0)
    result = walk(fd, end, 0, read_ogg_page, why, why_size);
  else if (got >= 4 && memcmp(head, "\0\0\1\xba", 4) == 0)
    result = walk(fd, end, 0, read_program_stream_packet, why, why_size);
  close(fd);
  return result;
}
