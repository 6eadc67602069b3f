/* gst-y4m-range.c: the range tag GStreamer 1.22's y4menc does not write.
 * FFmpeg tags a YUV4MPEG2 stream of full-range samples XCOLORRANGE=FULL in
 * its header, and reads an untagged one as limited; y4menc writes no such
 * tag, so full-range frames written back (a phone's clip, or a Y4M that
 * said FULL) were read as limited by every other tool.  The header is the
 * start of y4menc's first buffer; the tag goes in before its newline when
 * the frames y4menc takes are full range. */
#include <string.h>

#include "lhio-gst.h"

#define MAGIC "YUV4MPEG2 "
#define TAG " XCOLORRANGE=FULL"
/* y4menc's header is a line far shorter than this. */
#define HEADER_BYTES 1024

static bool takes_full_range(GstPad *src)
{
  GstElement *encoder = gst_pad_get_parent_element(src);
  if (!encoder)
    return false;
  GstPad *sink = gst_element_get_static_pad(encoder, "sink");
  GstCaps *caps = sink ? gst_pad_get_current_caps(sink) : NULL;
  GstVideoInfo info;
  const bool full = caps && gst_video_info_from_caps(&info, caps) &&
                    lhio_caps_range(caps, &info) == LH_RANGE_FULL;
  if (caps)
    gst_caps_unref(caps);
  if (sink)
    gst_object_unref(sink);
  gst_object_unref(encoder);
  return full;
}

static GstPadProbeReturn tag_header(GstPad *pad, GstPadProbeInfo *info, gpointer data)
{
  (void)data;
  GstBuffer *buffer = GST_PAD_PROBE_INFO_BUFFER(info);
  GstMapInfo map;
  if (!gst_buffer_map(buffer, &map, GST_MAP_READ))
    return GST_PAD_PROBE_REMOVE;
  const size_t scan = map.size < HEADER_BYTES ? map.size : HEADER_BYTES;
  const char *text = (const char *)map.data;
  const char *newline = memchr(text, '\n', scan);
  const bool header = map.size >= sizeof MAGIC - 1 && memcmp(text, MAGIC, sizeof MAGIC - 1) == 0;
  const bool tagged = newline && g_strstr_len(text, newline - text, "XCOLORRANGE=") != NULL;
  const size_t line = newline ? (size_t)(newline - text) : 0;
  gst_buffer_unmap(buffer, &map);
  if (!header || !newline || tagged || !takes_full_range(pad))
    return GST_PAD_PROBE_REMOVE;
  GstBuffer *tag = gst_buffer_new_memdup(TAG, sizeof TAG - 1);
  GstBuffer *tagged_buffer = gst_buffer_copy_region(buffer, GST_BUFFER_COPY_ALL, 0, line);
  tagged_buffer = gst_buffer_append(tagged_buffer, tag);
  tagged_buffer =
      gst_buffer_append(tagged_buffer, gst_buffer_copy_region(buffer, GST_BUFFER_COPY_MEMORY, line,
                                                              gst_buffer_get_size(buffer) - line));
  gst_buffer_unref(buffer);
  GST_PAD_PROBE_INFO_DATA(info) = tagged_buffer;
  return GST_PAD_PROBE_REMOVE;
}

void lhio_gst_tag_y4m_range(GstElement *y4menc)
{
  GstPad *src = gst_element_get_static_pad(y4menc, "src");
  if (!src)
    return;
  gst_pad_add_probe(src, GST_PAD_PROBE_TYPE_BUFFER, tag_header, NULL, NULL);
  gst_object_unref(src);
}
