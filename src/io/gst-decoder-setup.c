/* gst-decoder-setup.c: the settings a GStreamer video decoder gets before
 * its first frame, the same whether decodebin3 plugged it (`stats`,
 * video.c) or the rewriting pipeline made it (video-rewrite.c), so that
 * both read a file's frames alike: among them, MPEG-1/2 pictures' missing
 * presentation times filled in on the decoder's input. */
#include <stdbool.h>
#include <string.h>

#include "lhio-gst.h"
#include "lhio-private.h"

/* The times of one decoder's input, while its caps are MPEG-1/2 video. */
typedef struct {
  bool mpeg;
  LhioMpegTimes times;
} DecoderTimes;

/* Gives MPEG-1/2 pictures that reach the decoder without a presentation
 * time the one their place in display order says (mpeg-video-times.c);
 * counting starts again at new caps and after a flush (a seek). */
static GstPadProbeReturn fill_mpeg_times(GstPad *pad, GstPadProbeInfo *info, gpointer data)
{
  (void)pad;
  DecoderTimes *input = data;
  if (info->type & GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM) {
    GstEvent *event = GST_PAD_PROBE_INFO_EVENT(info);
    if (GST_EVENT_TYPE(event) == GST_EVENT_CAPS) {
      GstCaps *caps;
      gst_event_parse_caps(event, &caps);
      const GstStructure *s = gst_caps_get_structure(caps, 0);
      int version = 0;
      input->mpeg = gst_structure_has_name(s, "video/mpeg") &&
                    gst_structure_get_int(s, "mpegversion", &version) &&
                    (version == 1 || version == 2);
      lhio_mpeg_times_init(&input->times);
    } else if (GST_EVENT_TYPE(event) == GST_EVENT_FLUSH_STOP) {
      lhio_mpeg_times_init(&input->times);
    }
    return GST_PAD_PROBE_OK;
  }
  GstBuffer *buffer = GST_PAD_PROBE_INFO_BUFFER(info);
  GstMapInfo map;
  if (!input->mpeg || !buffer || !gst_buffer_map(buffer, &map, GST_MAP_READ))
    return GST_PAD_PROBE_OK;
  uint64_t pts = GST_BUFFER_PTS_IS_VALID(buffer) ? GST_BUFFER_PTS(buffer) : LHIO_NO_TIME;
  const uint64_t duration =
      GST_BUFFER_DURATION_IS_VALID(buffer) ? GST_BUFFER_DURATION(buffer) : LHIO_NO_TIME;
  const bool filled = lhio_mpeg_times_fill(&input->times, map.data, map.size, &pts, duration);
  gst_buffer_unmap(buffer, &map);
  if (filled) {
    buffer = gst_buffer_make_writable(buffer);
    GST_BUFFER_PTS(buffer) = pts;
    GST_PAD_PROBE_INFO_DATA(info) = buffer;
  }
  return GST_PAD_PROBE_OK;
}

/* The input caps' colorimetry with its range made full: the decoders take
 * the range of their input caps where these state one, before the
 * stream's own (the H.264 VUI's flag, which says full too). */
static GstPadProbeReturn make_full_range(GstPad *pad, GstPadProbeInfo *info, gpointer data)
{
  (void)pad;
  (void)data;
  GstEvent *event = GST_PAD_PROBE_INFO_EVENT(info);
  if (GST_EVENT_TYPE(event) != GST_EVENT_CAPS)
    return GST_PAD_PROBE_OK;
  GstCaps *caps;
  gst_event_parse_caps(event, &caps);
  const char *text = caps && gst_caps_get_size(caps) > 0
                         ? gst_structure_get_string(gst_caps_get_structure(caps, 0), "colorimetry")
                         : NULL;
  GstVideoColorimetry stated;
  if (!text || !gst_video_colorimetry_from_string(&stated, text) ||
      stated.range == GST_VIDEO_COLOR_RANGE_0_255)
    return GST_PAD_PROBE_OK;
  stated.range = GST_VIDEO_COLOR_RANGE_0_255;
  char *full = gst_video_colorimetry_to_string(&stated);
  GstCaps *fixed = gst_caps_copy(caps);
  gst_caps_set_simple(fixed, "colorimetry", G_TYPE_STRING, full, NULL);
  g_free(full);
  gst_event_unref(event);
  GST_PAD_PROBE_INFO_DATA(info) = gst_event_new_caps(fixed);
  gst_caps_unref(fixed);
  return GST_PAD_PROBE_OK;
}

void lhio_gst_make_range_full(GstPad *pad)
{
  gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM, make_full_range, NULL, NULL);
}

void lhio_gst_set_up_decoder(GstElement *decoder, bool full_range)
{
  GstPad *sink = gst_element_get_static_pad(decoder, "sink");
  if (sink) {
    gst_pad_add_probe(sink, GST_PAD_PROBE_TYPE_BUFFER | GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM,
                      fill_mpeg_times, g_new0(DecoderTimes, 1), g_free);
    if (full_range)
      lhio_gst_make_range_full(sink);
    gst_object_unref(sink);
  }

  GstElementFactory *factory = gst_element_get_factory(decoder);
  if (!factory)
    return;
  const char *name = GST_OBJECT_NAME(factory);
  GObjectClass *klass = G_OBJECT_GET_CLASS(decoder);
  /* jpegdec's default IDCT (ifast) is libjpeg's coarse one: its frames
   * were a code value or two off FFmpeg's (and libjpeg-turbo's islow of the
   * tool's own JPEG reading), which equalization's stretch multiplies. */
  if (strcmp(name, "jpegdec") == 0 && g_object_class_find_property(klass, "idct-method"))
    gst_util_set_object_arg(G_OBJECT(decoder), "idct-method", "islow");
  /* gst-libav 1.22's FFV1 decoder, rendering into GStreamer's buffers,
   * dereferences a null output state when the file's pixel format has no
   * GStreamer format (yuva444p, yuv420p16le): the process crashed, and
   * every other file of the run with it.  Decoding into its own buffers it
   * fails negotiation instead: one file's error.  FFV1 frames are lossless
   * intra pictures: the copy is small beside their decoding. */
  if (strcmp(name, "avdec_ffv1") == 0 && g_object_class_find_property(klass, "direct-rendering"))
    g_object_set(decoder, "direct-rendering", FALSE, NULL);
}

/* Whether the decoder gives out a frame of buffer's time: what
 * GstVideoDecoder's clipping to the segment keeps (a frame without a
 * duration is taken as an instant; one without a time is kept). */
static bool inside_segment(const GstSegment *segment, GstBuffer *buffer)
{
  if (segment->format != GST_FORMAT_TIME || !GST_BUFFER_PTS_IS_VALID(buffer))
    return true;
  const GstClockTime start = GST_BUFFER_PTS(buffer);
  GstClockTime stop = start;
  if (GST_BUFFER_DURATION_IS_VALID(buffer))
    stop = start + GST_BUFFER_DURATION(buffer);
  else if (segment->rate < 0)
    stop = GST_CLOCK_TIME_NONE;
  return gst_segment_clip(segment, GST_FORMAT_TIME, start, stop, NULL, NULL);
}

bool lhio_gst_decoder_frame_in(GstBuffer *buffer, const GstSegment *segment)
{
  /* A header with no time at all sets the decoder up and is no frame
   * (Theora's three in Ogg); h264parse's keyframes carrying SPS and PPS
   * are headers too, but with a time. */
  if (GST_BUFFER_FLAG_IS_SET(buffer, GST_BUFFER_FLAG_HEADER) && !GST_BUFFER_PTS_IS_VALID(buffer) &&
      !GST_BUFFER_DTS_IS_VALID(buffer) && !GST_BUFFER_DURATION_IS_VALID(buffer))
    return false;
  return inside_segment(segment, buffer);
}

char *lhio_gst_unnegotiated_decoder(GstElement *decoder, const char *debug)
{
  /* GStreamer names the flow return in the debug text of the element that
   * stopped streaming ("reason not-negotiated (-4)"): the demuxer or queue
   * upstream, not the decoder, which posts nothing of its own. */
  if (!decoder || !debug || !strstr(debug, "not-negotiated"))
    return NULL;
  GstPad *src = gst_element_get_static_pad(decoder, "src");
  bool unset = src && !gst_pad_has_current_caps(src);
  if (src)
    gst_object_unref(src);
  if (!unset)
    return NULL;
  GstElementFactory *factory = gst_element_get_factory(decoder);
  return g_strdup_printf("GStreamer's %s decodes its video to a pixel format that GStreamer has "
                         "no format for (its output could not be negotiated)",
                         factory ? GST_OBJECT_NAME(factory) : GST_OBJECT_NAME(decoder));
}
