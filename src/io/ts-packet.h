/* ts-packet.h: the packets of MPEG-TS files as GStreamer's tsdemux reads
 * them, for the files that look into a transport stream themselves
 * (ts-end.c, ts-programs.c). */
#ifndef LHIO_TS_PACKET_H
#define LHIO_TS_PACKET_H

#include <stddef.h>

#define LHIO_TS_SYNC_BYTE 0x47
/* The 188 bytes of a packet proper, behind the prefix of M2TS's. */
#define LHIO_TS_BYTES 188
#define LHIO_TS_HEADER_BYTES 4
#define LHIO_TS_PID_COUNT 0x2000
#define LHIO_TS_NULL_PID 0x1fff
/* Sync bytes in a row, one packet apart, that say "packets of this size
 * start here": 8 bytes of 0x47 at one stride in other data is a chance of
 * 2^-64. */
#define LHIO_TS_RUN_PACKETS 8

typedef struct {
  size_t size; /* bytes from one packet's start to the next */
  size_t sync; /* where the sync byte is in it (after M2TS's 4-byte time code) */
  const char *name;
} LhioTsPacketKind;

/* Plain, M2TS (Blu-ray, AVCHD), and with 16 or 20 bytes of Reed-Solomon
 * parity after each packet (DVB, ATSC captures): the sizes tsdemux reads. */
#define LHIO_TS_PACKET_KINDS 4
extern const LhioTsPacketKind lhio_ts_packet_kinds[LHIO_TS_PACKET_KINDS];

#endif
