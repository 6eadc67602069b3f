/* mpeg-video-times.c: presentation times for MPEG-1/2 video pictures that
 * their packets left without one.
 *
 * A program stream packs several pictures into one PES packet and states a
 * time only for the first (FFmpeg's `-f vob` and `-f mpeg` do), so
 * mpegvideoparse gives pictures with a decoding time and no presentation
 * time.  With B-pictures the two differ, and the decoder, taking the
 * decoding time for it, gave out frames whose times repeated (1.42, 1.46,
 * 1.46, 1.46 where 1.34, 1.38, 1.42, 1.46 were due): `stats` records
 * repeated times, and the encoder of a write-back lost a frame's time.
 *
 * Each picture header states the picture's place in display order within
 * its group of pictures (temporal_reference).  A picture that has a time
 * gives the time of place 0 (the origin); one that has none is given the
 * origin plus its place times the frame's duration.  A group header starts
 * a new count: its origin is the last one moved on by the pictures of the
 * group before it, until a picture with a time sets it.  A stream that
 * repeats fields (3:2 pulldown) shows its frames for varying lengths: its
 * times are left as they are. */
#include <string.h>

#include "lhio-private.h"

void lhio_mpeg_times_init(LhioMpegTimes *times)
{
  memset(times, 0, sizeof *times);
  times->origin = LHIO_NO_TIME;
  times->last_place = -1;
}

/* What the bytes of one picture's packet say: whether a group header comes
 * before its picture header, its temporal reference (-1: no picture
 * header), and whether its picture coding extension repeats the first
 * field. */
typedef struct {
  bool group;
  int place;
  bool repeats_field;
} PictureHeaders;

static PictureHeaders read_headers(const uint8_t *data, size_t size)
{
  PictureHeaders headers = {false, -1, false};
  for (size_t at = 0; at + 4 <= size; at++) {
    if (data[at] != 0 || data[at + 1] != 0 || data[at + 2] != 1)
      continue;
    const uint8_t code = data[at + 3];
    if (code == 0xb8 && headers.place < 0) {
      headers.group = true;
    } else if (code == 0x00) {
      if (headers.place >= 0)
        break; /* a second picture: this one's headers are all read */
      if (at + 6 > size)
        break;
      headers.place = data[at + 4] << 2 | data[at + 5] >> 6;
    } else if (code == 0xb5 && headers.place >= 0 && at + 8 <= size && data[at + 4] >> 4 == 8) {
      /* Picture coding extension: repeat_first_field is bit 1 of its
       * fifth byte after the start code. */
      headers.repeats_field = (data[at + 7] & 0x02) != 0;
    } else if (code >= 0x01 && code <= 0xaf && headers.place >= 0) {
      break; /* the first slice: the picture's headers all come before it */
    }
  }
  return headers;
}

bool lhio_mpeg_times_fill(LhioMpegTimes *times, const uint8_t *data, size_t size, uint64_t *pts,
                          uint64_t duration)
{
  const PictureHeaders headers = read_headers(data, size);
  if (headers.place < 0 || times->pulldown)
    return false;
  if (headers.repeats_field) {
    times->pulldown = true;
    return false;
  }
  if (duration != LHIO_NO_TIME && duration > 0)
    times->frame = duration;
  if (headers.group) {
    /* The group before this one showed last_place + 1 pictures. */
    if (times->origin != LHIO_NO_TIME && times->frame && times->last_place >= 0)
      times->origin += (uint64_t)(times->last_place + 1) * times->frame;
    else
      times->origin = LHIO_NO_TIME;
    times->last_place = -1;
    times->in_group = true;
  }
  if (headers.place > times->last_place)
    times->last_place = headers.place;
  if (!times->in_group || !times->frame)
    return false;
  const uint64_t offset = (uint64_t)headers.place * times->frame;
  if (*pts != LHIO_NO_TIME) {
    times->origin = *pts >= offset ? *pts - offset : LHIO_NO_TIME;
    return false;
  }
  if (times->origin == LHIO_NO_TIME)
    return false;
  *pts = times->origin + offset;
  return true;
}
