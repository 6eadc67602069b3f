/* mkv-track-end.c: where the video track of a Matroska or WebM file says it
 * ends.  The duration matroskademux reports is the segment's, its longest
 * track's: a whole clip whose audio runs on after its video would look cut
 * against it when only the video is decoded (lumahist stats).  FFmpeg and
 * mkvmerge tag each track with its own (a DURATION SimpleTag whose Targets
 * name the track's UID); matroskamux does not, and then whether the segment
 * runs past the file's end is what tells a cut, and the time of the last
 * block before it where that cut falls (after the video's frames, in the
 * audio that runs on, or among them). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lhio-private.h"

#define ID_EBML 0x1A45DFA3u
#define ID_SEGMENT 0x18538067u
#define ID_INFO 0x1549A966u
#define ID_TIMECODE_SCALE 0x2AD7B1u
#define ID_CLUSTER 0x1F43B675u
#define ID_CLUSTER_TIMECODE 0xE7u
#define ID_SIMPLE_BLOCK 0xA3u
#define ID_BLOCK_GROUP 0xA0u
#define ID_BLOCK 0xA1u
#define ID_TRACKS 0x1654AE6Bu
#define ID_TRACK_ENTRY 0xAEu
#define ID_TRACK_TYPE 0x83u
#define ID_TRACK_UID 0x73C5u
#define ID_TAGS 0x1254C367u
#define ID_TAG 0x7373u
#define ID_TARGETS 0x63C0u
#define ID_TAG_TRACK_UID 0x63C5u
#define ID_SIMPLE_TAG 0x67C8u
#define ID_TAG_NAME 0x45A3u
#define ID_TAG_STRING 0x4487u
#define TRACK_TYPE_VIDEO 1
/* Matroska's default: timecodes in milliseconds. */
#define DEFAULT_TIMECODE_SCALE_NS 1000000u
/* Blocks of a cut cluster looked at, at most, for the time it is cut at. */
#define MAX_CLUSTER_BLOCKS 1000000
/* Tracks or Tags elements larger than this are not read. */
#define ELEMENT_LIMIT (16u << 20)

/* The child elements of a master's data, one at a time: false at its end
 * or at what does not parse. */
static bool next_child(const uint8_t *data, size_t size, size_t *at, LhioEbmlHeader *child,
                       const uint8_t **payload)
{
  if (*at >= size || !lhio_ebml_header(data + *at, size - *at, child) ||
      child->size > size - *at - child->length)
    return false;
  *payload = data + *at + child->length;
  *at += child->length + (size_t)child->size;
  return true;
}

static uint64_t unsigned_value(const uint8_t *data, uint64_t size)
{
  uint64_t value = 0;
  for (uint64_t i = 0; i < size && i < 8; i++)
    value = value << 8 | data[i];
  return value;
}

/* The first video track's UID among the Tracks element's data, and whether
 * other tracks are there; false when there is no video track. */
static bool video_track_uid(const uint8_t *tracks, size_t size, uint64_t *uid, bool *others)
{
  bool found = false;
  int count = 0;
  LhioEbmlHeader entry, field;
  const uint8_t *entry_data, *field_data;
  for (size_t at = 0; next_child(tracks, size, &at, &entry, &entry_data);) {
    if (entry.id != ID_TRACK_ENTRY)
      continue;
    count++;
    uint64_t type = 0, this_uid = 0;
    for (size_t in = 0; next_child(entry_data, (size_t)entry.size, &in, &field, &field_data);) {
      if (field.id == ID_TRACK_TYPE)
        type = unsigned_value(field_data, field.size);
      else if (field.id == ID_TRACK_UID)
        this_uid = unsigned_value(field_data, field.size);
    }
    if (!found && type == TRACK_TYPE_VIDEO) {
      found = true;
      *uid = this_uid;
    }
  }
  *others = count > 1;
  return found;
}

/* Reads the digits at *text (at most 18) into *value: false when there is
 * none. */
static bool digits(const char **text, const char *end, uint64_t *value, int *count)
{
  *value = 0;
  *count = 0;
  for (; *text < end && **text >= '0' && **text <= '9' && *count < 18; (*text)++, (*count)++)
    *value = *value * 10 + (uint64_t)(**text - '0');
  return *count > 0;
}

/* A DURATION value, "HH:MM:SS.nnnnnnnnn" (read without strtod, whose
 * decimal point is the locale's), in seconds; NAN when it is not one (or is
 * 0: a muxer that never came back to fill it). */
static double duration_value(const uint8_t *value, uint64_t size)
{
  const char *text = (const char *)value;
  const char *end = memchr(text, '\0', (size_t)size);
  if (!end)
    end = text + size;
  uint64_t hours, minutes, seconds, fraction = 0;
  int count, fraction_digits = 0;
  if (!digits(&text, end, &hours, &count) || text == end || *text++ != ':' ||
      !digits(&text, end, &minutes, &count) || minutes >= 60 || text == end || *text++ != ':' ||
      !digits(&text, end, &seconds, &count) || seconds >= 60)
    return NAN;
  if (text < end && *text == '.') {
    text++;
    if (!digits(&text, end, &fraction, &fraction_digits))
      return NAN;
  }
  if (text != end)
    return NAN;
  const double total = (double)hours * 3600 + (double)minutes * 60 + (double)seconds +
                       (double)fraction / pow(10, fraction_digits);
  return total > 0 ? total : NAN;
}

/* The DURATION tag of the track uid among the Tags element's data; NAN
 * when there is none. */
static double tagged_duration(const uint8_t *tags, size_t size, uint64_t uid)
{
  LhioEbmlHeader tag, child, field;
  const uint8_t *tag_data, *child_data, *field_data;
  for (size_t at = 0; next_child(tags, size, &at, &tag, &tag_data);) {
    if (tag.id != ID_TAG)
      continue;
    bool ours = false;
    double duration = NAN;
    for (size_t in = 0; next_child(tag_data, (size_t)tag.size, &in, &child, &child_data);) {
      if (child.id == ID_TARGETS) {
        for (size_t t = 0; next_child(child_data, (size_t)child.size, &t, &field, &field_data);)
          if (field.id == ID_TAG_TRACK_UID && unsigned_value(field_data, field.size) == uid)
            ours = true;
      } else if (child.id == ID_SIMPLE_TAG) {
        bool named = false;
        const uint8_t *value = NULL;
        uint64_t value_size = 0;
        for (size_t s = 0; next_child(child_data, (size_t)child.size, &s, &field, &field_data);) {
          if (field.id == ID_TAG_NAME)
            named = field.size >= 8 && memcmp(field_data, "DURATION", 8) == 0 &&
                    (field.size == 8 || field_data[8] == '\0');
          else if (field.id == ID_TAG_STRING)
            value = field_data, value_size = field.size;
        }
        if (named && value)
          duration = duration_value(value, value_size);
      }
    }
    if (ours && isfinite(duration))
      return duration;
  }
  return NAN;
}

/* The element of size bytes at offset at, read whole; NULL when it is too
 * large or cannot be read. */
static uint8_t *read_element(int fd, off_t at, size_t size)
{
  if (size > ELEMENT_LIMIT)
    return NULL;
  uint8_t *data = malloc(size ? size : 1);
  if (data && pread(fd, data, size, at) != (ssize_t)size) {
    free(data);
    data = NULL;
  }
  return data;
}

/* The time of the last block whose header is in the file among those of
 * the cluster at offset at (the one the file's end cuts), in seconds; NAN
 * when there is no cluster there or no block in it.  A block's time is its
 * cluster's Timecode plus its own signed 16-bit offset. */
static double last_block_time(int fd, off_t at, off_t file_end, uint64_t timecode_scale)
{
  LhioEbmlHeader header;
  if (!lhio_ebml_header_at(fd, at, file_end, &header) || header.id != ID_CLUSTER)
    return NAN;
  uint64_t cluster_time = 0;
  double last = NAN;
  off_t in = at + (off_t)header.length;
  for (int blocks = 0; blocks < MAX_CLUSTER_BLOCKS &&
                       lhio_ebml_header_at(fd, in, file_end, &header) && header.size != UINT64_MAX;
       blocks++, in += (off_t)(header.length + header.size)) {
    off_t block = in + (off_t)header.length;
    if (header.id == ID_BLOCK_GROUP) {
      /* Its Block, among its BlockDuration and references (matroskamux
       * writes the duration first). */
      const off_t group_end = block + (off_t)header.size;
      const off_t readable_end = group_end < file_end ? group_end : file_end;
      LhioEbmlHeader inner = {0};
      for (int child = 0; child < 8 && lhio_ebml_header_at(fd, block, readable_end, &inner) &&
                          inner.id != ID_BLOCK && inner.size != UINT64_MAX;
           child++)
        block += (off_t)(inner.length + inner.size);
      if (inner.id != ID_BLOCK || block >= file_end)
        continue;
      block += (off_t)inner.length;
    } else if (header.id != ID_SIMPLE_BLOCK && header.id != ID_CLUSTER_TIMECODE) {
      continue;
    }
    uint8_t bytes[10];
    const ssize_t got = pread(fd, bytes, sizeof bytes, block);
    if (header.id == ID_CLUSTER_TIMECODE) {
      if (got >= (ssize_t)header.size)
        cluster_time = unsigned_value(bytes, header.size);
      continue;
    }
    /* The track number (an EBML varint), then the offset. */
    size_t number_length = 1;
    while (got > 0 && number_length <= 8 && !(bytes[0] & (0x100 >> number_length)))
      number_length++;
    if (got <= 0 || number_length > 8 || (size_t)got < number_length + 2)
      break;
    const int16_t offset = (int16_t)(bytes[number_length] << 8 | bytes[number_length + 1]);
    last = ((double)cluster_time + offset) * (double)timecode_scale / 1e9;
  }
  return last;
}

bool lhio_mkv_video_end(const char *path, LhioMkvVideoEnd *end)
{
  end->video_end = NAN;
  end->other_tracks = false;
  end->cut = false;
  end->cut_at = NAN;
  off_t file_end;
  int fd = lhio_open_regular(path, &file_end);
  if (fd < 0)
    return false; /* a pipe is read once, by the demuxer */
  LhioEbmlHeader header;
  off_t at = 0;
  bool found = false;
  uint8_t *tags = NULL;
  size_t tags_size = 0;
  uint64_t uid = 0;
  uint64_t timecode_scale = DEFAULT_TIMECODE_SCALE_NS;
  off_t last_cluster = -1;
  if (lhio_ebml_header_at(fd, at, file_end, &header) && header.id == ID_EBML &&
      header.size != UINT64_MAX)
    at += (off_t)(header.length + header.size);
  if (lhio_ebml_header_at(fd, at, file_end, &header) && header.id == ID_SEGMENT) {
    /* A muxer that streamed it (to a pipe, or matroskamux streamable)
     * left its size unknown: nothing is stated. */
    end->cut = header.size != UINT64_MAX && header.size > (uint64_t)(file_end - at) - header.length;
    const off_t segment_end = header.size == UINT64_MAX || end->cut
                                  ? file_end
                                  : at + (off_t)(header.length + header.size);
    /* The segment's children, a header at a time (clusters are skipped):
     * the tracks come first, the tags before the clusters (FFmpeg) or
     * after them (mkvmerge), and a cluster of unknown size ends the walk. */
    for (at += (off_t)header.length;
         lhio_ebml_header_at(fd, at, segment_end, &header) && header.size != UINT64_MAX &&
         header.size <= (uint64_t)(segment_end - at) - header.length;
         at += (off_t)(header.length + header.size)) {
      const off_t data_at = at + (off_t)header.length;
      if (header.id == ID_TRACKS && !found) {
        uint8_t *tracks = read_element(fd, data_at, (size_t)header.size);
        found = tracks && video_track_uid(tracks, (size_t)header.size, &uid, &end->other_tracks);
        free(tracks);
      } else if (header.id == ID_TAGS && !tags) {
        tags = read_element(fd, data_at, (size_t)header.size);
        tags_size = (size_t)header.size;
      } else if (header.id == ID_INFO) {
        uint8_t *info_data = read_element(fd, data_at, (size_t)header.size);
        LhioEbmlHeader field;
        const uint8_t *field_data;
        for (size_t in = 0;
             info_data && next_child(info_data, (size_t)header.size, &in, &field, &field_data);)
          if (field.id == ID_TIMECODE_SCALE && unsigned_value(field_data, field.size) > 0)
            timecode_scale = unsigned_value(field_data, field.size);
        free(info_data);
      } else if (header.id == ID_CLUSTER) {
        last_cluster = at;
      }
    }
    /* The walk ends at the element the file's end cuts: the cluster the
     * cut falls in, or the last whole one when it falls between two. */
    if (end->cut) {
      end->cut_at = last_block_time(fd, at, file_end, timecode_scale);
      if (isnan(end->cut_at) && last_cluster >= 0)
        end->cut_at = last_block_time(fd, last_cluster, file_end, timecode_scale);
    }
  }
  if (found && tags)
    end->video_end = tagged_duration(tags, tags_size, uid);
  free(tags);
  close(fd);
  return found;
}
