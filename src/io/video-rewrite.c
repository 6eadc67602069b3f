/* video-rewrite.c: a video file rewritten frame by frame (equalized, CLAHE,
 * overlay): decoded, changed by the caller, encoded with the input's codec
 * and muxed into the input's container beside its other streams, copied.
 *
 * Why one GStreamer pipeline, built here, and not appsink -> appsrc:
 *
 *   filesrc ! parsebin ─┬─ (first video) queue ! DECODER ! videoconvert !
 *                       │     capsfilter [probe: the change] ! videoconvert !
 *                       │     ENCODER ! [PARSER] ! queue ─┐
 *                       └─ (any other stream) queue ──────┴─ MUXER ! filesink
 *
 * parsebin exposes every elementary stream parsed but not decoded, so audio,
 * subtitles and any other track reach the muxer as the packets they were
 * (remuxed, not re-encoded).  The change is a buffer probe on the decoded
 * stream: timestamps, durations, caps, colorimetry and frame rate go through
 * untouched, which an appsink/appsrc pair would have to carry over by hand.
 * The probe writes into the frame in place when the buffer is writable;
 * when a decoder still holds it (the frames it predicts from), a change that
 * fills its output (equalization) writes a new frame, any other a copy.  The
 * first videoconvert stays in passthrough for every format the library
 * writes (CHANGE_FORMATS); the second one only converts when the encoder
 * takes none of them.  Raw video (YUV4MPEG2) has no decoder and no encoder.
 *
 * The decoder and the encoder are chosen by rank among the installed ones,
 * with a preference list per codec for the encoder (NVENC's first where it is
 * registered, which nvcodec only does where a GPU can encode, then x264enc,
 * x265enc, vp8enc, vp9enc, ..., jpegenc and pngenc, and mpeg2enc for MPEG-1
 * and MPEG-2); any other codec gets the best-ranked encoder that outputs it
 * (avenc_* from gst-libav).  The stream's size and frame rate are checked
 * against what the encoder takes before a frame reaches it.  MJPEG and
 * PNG video come out of parsebin as image/jpeg and image/png, and GStreamer
 * files their decoders and encoders (jpegdec, pngdec, jpegenc, pngenc) as
 * image ones: the first stream of either kind is the video, and elements of
 * both kinds are looked for.  The muxer is the usual one of the container
 * GStreamer's typefinder finds in the input file, else one whose output caps
 * are those.  A stream the muxer does not take is left out
 * and the result says which.  The file is written to a temporary name beside
 * the output and renamed only after the muxer's end of stream, so a failure
 * or a stop leaves nothing. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gst/base/gsttypefindhelper.h>
#include <gst/gst.h>
#include <gst/pbutils/missing-plugins.h>
#include <gst/video/video.h>

#include "lhio-gst.h"
#include "lhio-private.h"
#include "lhio-video.h"

#define DEFAULT_TIMEOUT_S 30.0
/* How long one wait on the bus lasts, between looks at the stop flag. */
#define BUS_SLICE_NS (100 * GST_MSECOND)
/* Bytes of the file's head given to the typefinder (an MPEG-TS file needs
 * several packets). */
#define TYPEFIND_BYTES (64 * 1024)
/* vp8enc/vp9enc in constant-quality mode still cap the rate at their
 * target bitrate (256 kbit/s by default): lifted out of the way. */
#define VPX_RATE_CEILING 200000000

/* The decoded formats the probe changes as they come.  The R'G'B' ones and
 * GRAY16_BE are pngdec's: PNG video goes to the library as pngdec gives it
 * and to pngenc the same, with no trip through YUV to spoil its losslessness
 * (its frames are then equalized as PNG images are, each R'G'B' sample
 * scaled by its luma's gain). */
#define CHANGE_FORMATS                                                                             \
  "{ I420, Y42B, Y444, Y41B, NV12, NV16, NV24, GRAY8, I420_10LE, I420_12LE, I422_10LE, "           \
  "I422_12LE, Y444_10LE, Y444_12LE, Y444_16LE, GRAY16_LE, P010_10LE, RGB, BGR, RGBA, BGRA, "       \
  "RGBx, BGRx, GRAY16_BE }"
/* The JPEG quality of images written back (lhio.h's jpeg_quality 0), which
 * MJPEG video gets at the default CRF. */
#define JPEG_DEFAULT_QUALITY 95
/* mpeg2enc's largest bitrate (kbit/s) and decoder buffer (kB): a buffer
 * that holds fewer than 4 frames at the bitrate makes it end the process. */
#define MPEG2ENC_MAX_KBPS 40000
#define MPEG2ENC_MAX_BUFFER_KB 4000

typedef struct {
  const char *input;
  const char *output; /* as the caller named it (the sink writes a temporary file) */
  bool full_range_stated; /* by the input's MP4 colr box or Y4M header, which qtdemux and y4mdec
                             drop */
  const LhioVideoRewriteOptions *options;
  GstElement *pipeline;
  GstElement *muxer;
  GstElement *sink;
  GstElement *encode_filter;   /* before the encoder: the colorimetry it is to tag */
  GstElement *encoder_element; /* NULL for raw video */
  GstElement *decoder_element; /* NULL for raw video; the pipeline's */
  /* Frames into the decoder that it is to give out, and the segment it was
   * last given (count_decoder_input). */
  uint64_t frames_in;
  GstSegment decoder_segment;
  GstCaps *made;               /* the video's caps into the muxer (its codec) */
  bool avi;                    /* its header states its frame count */
  bool bare_stream;            /* no container: elementary_stream_writer's */
  bool motion_jpeg;            /* a bare Motion JPEG: its end shows a cut */

  GMutex lock; /* the fields below, set by GStreamer's threads */
  bool video_linked;
  char *error;         /* the first failure */
  char *missing;       /* a missing plugin's description */
  GString *left_out;   /* streams the muxer does not take */
  int audio_streams;   /* audio streams the demuxer gave out */
  int streams;         /* streams of any kind it gave out */
  bool alpha_left_out; /* the video's alpha channel (codec-alpha) */
  uint64_t frames;
  uint64_t packets;  /* into the muxer, from every stream */
  int quarter_turns; /* the video's rotation, clockwise (its image-orientation tag) */
  int orientation;   /* the same tag as an Exif orientation, flips included (1: none) */
  char encoder[64];
  char decoder[64];
  double end_time;   /* of the packet into the muxer that ends last, any stream's, seconds */
  double frame_time; /* the duration of the last video frame changed */
  GstPad *video_pad; /* parsebin's, of the video stream: asked for its duration */

  /* The probe's own (one streaming thread). */
  /* Mixed caps for mpeg2enc: whether the first frame came, and the field
   * order it gave (UNKNOWN: not interlaced), hold_field_order's. */
  bool field_order_seen;
  GstVideoFieldOrder field_order;
  /* The sticky events after caps held back with them (segment, tags): given
   * after them, in their order. */
  GQueue held_events;
  bool holding_caps;
  GstCaps *caps;
  GstVideoInfo info;
  LhRange range; /* of the decoded frames */
  LhFormat format;
} Rewrite;

static void fail(Rewrite *r, const char *format, ...) G_GNUC_PRINTF(2, 3);

static void fail(Rewrite *r, const char *format, ...)
{
  va_list args;
  va_start(args, format);
  char *message = g_strdup_vprintf(format, args);
  va_end(args);
  g_mutex_lock(&r->lock);
  if (!r->error) {
    r->error = message;
    message = NULL;
  }
  g_mutex_unlock(&r->lock);
  g_free(message);
  /* Wakes the bus loop. */
  gst_element_post_message(r->pipeline,
                           gst_message_new_application(NULL, gst_structure_new_empty("lh-fail")));
}

/* ------------------------------------------------------------------------ */
/* The change of each frame                                                  */

/* A changed frame on its way to the muxer without a presentation time: the
 * muxer cannot place it (GStreamer 1.22's mpeg4videoparse drops
 * avenc_mpeg4's: matroskamux kept 1 frame of 50 and the run said nothing;
 * mp4mux refused the stream).  avimux writes frames in order and needs none,
 * nor does a bare elementary stream, which has no times to keep
 * (elementary_stream_writer). */
static GstPadProbeReturn check_timestamp(GstPad *pad, GstPadProbeInfo *info, gpointer data)
{
  (void)pad;
  Rewrite *r = data;
  GstBuffer *buffer = GST_PAD_PROBE_INFO_BUFFER(info);
  GstElementFactory *muxer = gst_element_get_factory(r->muxer);
  /* A stream's headers have no time, and need none (theoraenc's three,
   * ahead of the first frame, go into oggmux's first pages). */
  if (GST_BUFFER_PTS_IS_VALID(buffer) || GST_BUFFER_FLAG_IS_SET(buffer, GST_BUFFER_FLAG_HEADER) ||
      r->bare_stream ||
      strcmp(gst_plugin_feature_get_name(GST_PLUGIN_FEATURE(muxer)), "avimux") == 0)
    return GST_PAD_PROBE_OK;
  fail(r,
       "%s's frames reach the muxer without timestamps (GStreamer's encoder and parser "
       "lose them): give another --codec",
       r->encoder);
  return GST_PAD_PROBE_DROP;
}

/* Counts the frames into the decoder: where fewer come out, the stream is
 * damaged (decoders conceal what they cannot decode and go on), as stats
 * says of the same file (video.c). */
static GstPadProbeReturn count_decoder_input(GstPad *pad, GstPadProbeInfo *info, gpointer data)
{
  (void)pad;
  Rewrite *r = data;
  g_mutex_lock(&r->lock);
  if (info->type & GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM) {
    GstEvent *event = GST_PAD_PROBE_INFO_EVENT(info);
    if (GST_EVENT_TYPE(event) == GST_EVENT_SEGMENT)
      gst_event_copy_segment(event, &r->decoder_segment);
  } else if (lhio_gst_decoder_frame_in(GST_PAD_PROBE_INFO_BUFFER(info), &r->decoder_segment)) {
    r->frames_in++;
  }
  g_mutex_unlock(&r->lock);
  return GST_PAD_PROBE_OK;
}

/* The library's view of a mapped frame. */
static void describe(const Rewrite *r, GstVideoFrame *mapped, LhFrame *frame)
{
  memset(frame, 0, sizeof *frame);
  frame->format = r->format;
  frame->memory = LH_MEMORY_HOST;
  frame->width = GST_VIDEO_INFO_WIDTH(&r->info);
  frame->height = GST_VIDEO_INFO_HEIGHT(&r->info);
  frame->bit_depth = GST_VIDEO_FORMAT_INFO_DEPTH(r->info.finfo, 0);
  for (guint p = 0; p < GST_VIDEO_FRAME_N_PLANES(mapped) && p < 3; p++) {
    frame->planes[p] = GST_VIDEO_FRAME_PLANE_DATA(mapped, p);
    frame->strides[p] = (size_t)GST_VIDEO_FRAME_PLANE_STRIDE(mapped, p);
  }
}

/* The end of a packet (its time as the demuxer gives it: an encoder's
 * output is offset) into r->end_time, when it ends later. */
static void note_end(Rewrite *r, GstBuffer *buffer)
{
  GstClockTime at =
      GST_BUFFER_PTS_IS_VALID(buffer) ? GST_BUFFER_PTS(buffer) : GST_BUFFER_DTS(buffer);
  if (!GST_CLOCK_TIME_IS_VALID(at))
    return;
  if (GST_BUFFER_DURATION_IS_VALID(buffer))
    at += GST_BUFFER_DURATION(buffer);
  double end = (double)at / GST_SECOND;
  g_mutex_lock(&r->lock);
  if (end > r->end_time)
    r->end_time = end;
  g_mutex_unlock(&r->lock);
}

/* On the decoded stream's caps, before the encoder's side negotiates
 * them: full range of no stated matrix (H.264 yuvj420p), which
 * GStreamer's video info, and so the encoder, takes for limited, is changed
 * as full range (change_frame), and the encoder is told so, with the matrix
 * that info gives, in the decoded format where the encoder takes it.  Set
 * at the first frame, the tag came a frame late: the first frame was
 * encoded as limited, and x264enc, which starts again only on a change of
 * format, went on so (the file was tagged limited), or the videoconvert
 * before it chose another format, and a phone's 4:2:0 clip came out 10-bit
 * 4:4:4 (High 4:4:4 Predictive, which few players decode). */
/* Interlaced MPEG-2 (a DVD's, a DVB recording's) comes out of avdec_mpeg2video
 * as mixed caps, each frame's field order in its flags, which mpeg2enc does
 * not read ("Unknown input interlacing; assuming progressive"): the file
 * was written as progressive frames of interleaved fields, which players
 * show combed.  mpeg2enc, which takes no change of caps once it has them,
 * is given them at the first frame (check_field_order): interleaved in that
 * frame's field order where it is interlaced, as they came where it is not.
 * Until then the caps event is held back (true), and the sticky events
 * after it (tag_full_range); afterwards a mixed one is made interleaved in
 * that order (*fixed, else NULL). */
static bool hold_field_order(Rewrite *r, GstCaps *caps, GstCaps **fixed)
{
  *fixed = NULL;
  const GstStructure *s = gst_caps_get_structure(caps, 0);
  const char *mode = gst_structure_get_string(s, "interlace-mode");
  if (strcmp(r->encoder, "mpeg2enc") != 0 || !mode || strcmp(mode, "mixed") != 0 ||
      gst_structure_has_field(s, "field-order"))
    return false;
  if (!r->field_order_seen)
    return true;
  if (r->field_order != GST_VIDEO_FIELD_ORDER_UNKNOWN) {
    *fixed = gst_caps_copy(caps);
    gst_caps_set_simple(*fixed, "interlace-mode", G_TYPE_STRING, "interleaved", "field-order",
                        G_TYPE_STRING, gst_video_field_order_to_string(r->field_order), NULL);
  }
  return false;
}

/* At the first frame, the caps hold_field_order held back, in the order of
 * that frame's fields where it is interlaced. */
static void check_field_order(Rewrite *r, GstPad *pad, GstBuffer *buffer)
{
  if (!r->holding_caps || r->field_order_seen || !r->caps)
    return;
  r->field_order_seen = true;
  r->holding_caps = false;
  if (GST_BUFFER_FLAG_IS_SET(buffer, GST_VIDEO_BUFFER_FLAG_INTERLACED))
    r->field_order = GST_BUFFER_FLAG_IS_SET(buffer, GST_VIDEO_BUFFER_FLAG_TFF)
                         ? GST_VIDEO_FIELD_ORDER_TOP_FIELD_FIRST
                         : GST_VIDEO_FIELD_ORDER_BOTTOM_FIELD_FIRST;
  /* Through tag_full_range, which makes it interleaved now. */
  gst_pad_push_event(pad, gst_event_new_caps(r->caps));
  GstEvent *held;
  while ((held = g_queue_pop_head(&r->held_events)))
    gst_pad_push_event(pad, held);
}

static GstPadProbeReturn tag_full_range(GstPad *pad, GstPadProbeInfo *info, gpointer data)
{
  (void)pad;
  Rewrite *r = data;
  GstEvent *event = GST_PAD_PROBE_INFO_EVENT(info);
  if (GST_EVENT_TYPE(event) != GST_EVENT_CAPS) {
    if (!r->holding_caps || !GST_EVENT_IS_STICKY(event) || GST_EVENT_TYPE(event) == GST_EVENT_EOS)
      return GST_PAD_PROBE_OK;
    g_queue_push_tail(&r->held_events, gst_event_ref(event));
    return GST_PAD_PROBE_DROP;
  }
  GstCaps *caps;
  gst_event_parse_caps(event, &caps);
  GstCaps *interleaved;
  if (hold_field_order(r, caps, &interleaved)) {
    r->holding_caps = true;
    return GST_PAD_PROBE_DROP;
  }
  if (interleaved) {
    event = gst_event_new_caps(interleaved);
    gst_event_unref(GST_PAD_PROBE_INFO_EVENT(info));
    GST_PAD_PROBE_INFO_DATA(info) = event;
    caps = interleaved; /* held by the new event */
    gst_caps_unref(interleaved);
  }
  GstVideoInfo decoded;
  GstCaps *tagged = NULL;
  if (gst_video_info_from_caps(&decoded, caps) &&
      lhio_caps_range(caps, &decoded) == LH_RANGE_FULL &&
      lhio_colorimetry_range(&decoded) != LH_RANGE_FULL) {
    GstVideoColorimetry stated = decoded.colorimetry;
    stated.range = GST_VIDEO_COLOR_RANGE_0_255;
    char *text = gst_video_colorimetry_to_string(&stated);
    tagged = gst_caps_new_simple("video/x-raw", "colorimetry", G_TYPE_STRING, text, NULL);
    g_free(text);
    GstCaps *same = gst_caps_copy(tagged);
    gst_caps_set_simple(same, "format", G_TYPE_STRING,
                        gst_video_format_to_string(GST_VIDEO_INFO_FORMAT(&decoded)), NULL);
    if (r->encoder_element) {
      GstPad *sink = gst_element_get_static_pad(r->encoder_element, "sink");
      GstCaps *takes = gst_pad_get_pad_template_caps(sink);
      gst_object_unref(sink);
      if (gst_caps_can_intersect(takes, same))
        gst_caps_replace(&tagged, same);
      gst_caps_unref(takes);
    }
    gst_caps_unref(same);
  }
  if (tagged) {
    g_object_set(r->encode_filter, "caps", tagged, NULL);
    gst_caps_unref(tagged);
  }
  return GST_PAD_PROBE_OK;
}

static GstPadProbeReturn change_frame(GstPad *pad, GstPadProbeInfo *info, gpointer data)
{
  Rewrite *r = data;
  GstBuffer *in = GST_PAD_PROBE_INFO_BUFFER(info);
  GstCaps *caps = gst_pad_get_current_caps(pad);
  if (!caps) {
    fail(r, "a decoded frame came without caps");
    return GST_PAD_PROBE_DROP;
  }
  if (!r->caps || !gst_caps_is_equal(caps, r->caps)) {
    gst_caps_replace(&r->caps, caps);
    if (!gst_video_info_from_caps(&r->info, caps) ||
        !lhio_gst_format(GST_VIDEO_INFO_FORMAT(&r->info), &r->format)) {
      char *text = gst_caps_to_string(caps);
      fail(r, "decoded frames the library does not write: %s", text);
      g_free(text);
      gst_caps_unref(caps);
      gst_caps_replace(&r->caps, NULL);
      return GST_PAD_PROBE_DROP;
    }
    r->range = lhio_caps_range(caps, &r->info);
  }
  gst_caps_unref(caps);

  check_field_order(r, pad, in);

  /* In place when no one else holds the buffer.  A decoder keeps a
   * reference on the frames it will predict from: then a change that writes
   * all of its output (equalization: Y through the LUT, chroma copied) reads
   * the decoder's frame and writes a new one, and any other is made on a
   * copy (gst_buffer_make_writable, and mapping for writing copies shared
   * memory). */
  bool apart = r->options->fills_output && !gst_buffer_is_writable(in);
  GstBuffer *buffer = apart ? gst_buffer_new_allocate(NULL, GST_VIDEO_INFO_SIZE(&r->info), NULL)
                            : gst_buffer_make_writable(in);
  if (!apart)
    GST_PAD_PROBE_INFO_DATA(info) = buffer;
  GstVideoFrame source, target;
  if (!buffer || !gst_video_frame_map(&target, &r->info, buffer, GST_MAP_READWRITE)) {
    if (apart && buffer)
      gst_buffer_unref(buffer);
    fail(r, "cannot map a decoded frame for writing");
    return GST_PAD_PROBE_DROP;
  }
  if (apart && !gst_video_frame_map(&source, &r->info, in, GST_MAP_READ)) {
    gst_video_frame_unmap(&target);
    gst_buffer_unref(buffer);
    fail(r, "cannot map a decoded frame");
    return GST_PAD_PROBE_DROP;
  }
  LhFrame frame, out;
  describe(r, &target, &out);
  if (apart)
    describe(r, &source, &frame);
  else
    frame = out;
  g_mutex_lock(&r->lock);
  const int orientation = r->orientation ? r->orientation : 1;
  g_mutex_unlock(&r->lock);
  int status = r->options->change(&frame, &out, lhio_colorimetry_matrix(&r->info), r->range,
                                  orientation, r->options->data);
  gst_video_frame_unmap(&target);
  if (apart) {
    gst_video_frame_unmap(&source);
    if (status >= 0) {
      gst_buffer_copy_into(buffer, in, GST_BUFFER_COPY_FLAGS | GST_BUFFER_COPY_TIMESTAMPS, 0, -1);
      gst_buffer_unref(in);
      GST_PAD_PROBE_INFO_DATA(info) = buffer;
    } else {
      gst_buffer_unref(buffer);
    }
  }
  if (status < 0) {
    fail(r, "frame %" G_GUINT64_FORMAT ": %s", r->frames, lh_last_error());
    return GST_PAD_PROBE_DROP;
  }
  GstBuffer *changed = GST_PAD_PROBE_INFO_BUFFER(info);
  g_mutex_lock(&r->lock);
  r->frames++;
  if (GST_BUFFER_DURATION_IS_VALID(changed))
    r->frame_time = (double)GST_BUFFER_DURATION(changed) / GST_SECOND;
  g_mutex_unlock(&r->lock);
  note_end(r, changed);
  return GST_PAD_PROBE_OK;
}

/* ------------------------------------------------------------------------ */
/* Choosing the elements                                                     */

/* Elements of moving pictures: video ones, and the image ones that GStreamer
 * files MJPEG's and PNG's under (gst_element_factory_list_is_type takes any
 * of the media types it is given). */
#define PICTURE_MEDIA (GST_ELEMENT_FACTORY_TYPE_MEDIA_VIDEO | GST_ELEMENT_FACTORY_TYPE_MEDIA_IMAGE)

/* The best-ranked factory of type whose pads on side take caps: all of them
 * when whole (a decoder for the stream: vp9alphadecodebin takes only VP9
 * with codec-alpha), else some. */
static GstElementFactory *best_factory(GstElementFactoryListType type, GstCaps *caps,
                                       GstPadDirection side, GstRank min_rank, bool whole)
{
  GList *all = gst_element_factory_list_get_elements(type, min_rank);
  GList *fit = gst_element_factory_list_filter(all, caps, side, whole);
  fit = g_list_sort(fit, gst_plugin_feature_rank_compare_func);
  GstElementFactory *best = fit ? gst_object_ref(fit->data) : NULL;
  gst_plugin_feature_list_free(fit);
  gst_plugin_feature_list_free(all);
  return best;
}

/* What names a codec in a stream's caps: the name and the fields that tell
 * codecs of one name apart (MPEG-1/2/4 video are all video/mpeg), without
 * the stream's size, profile, format and the like. */
static GstCaps *codec_caps(GstCaps *caps)
{
  static const char *const identity[] = {"mpegversion", "msmpegversion", "wmvversion",
                                         "divxversion", "variant"};
  const GstStructure *s = gst_caps_get_structure(caps, 0);
  GstStructure *codec = gst_structure_new_empty(gst_structure_get_name(s));
  for (size_t i = 0; i < G_N_ELEMENTS(identity); i++) {
    const GValue *value = gst_structure_get_value(s, identity[i]);
    if (value)
      gst_structure_set_value(codec, identity[i], value);
  }
  return gst_caps_new_full(codec, NULL);
}

/* 1 or 2 for MPEG-1 or MPEG-2 video caps, -1 for caps that say "one of
 * the two" (an MPEG-TS stream before its first packet), else 0. */
static int mpeg12_version(GstCaps *caps)
{
  const GstStructure *s = gst_caps_get_structure(caps, 0);
  const GValue *version = gst_structure_get_value(s, "mpegversion");
  if (!gst_structure_has_name(s, "video/mpeg") || !version)
    return 0;
  if (G_VALUE_HOLDS_INT(version)) {
    const int v = g_value_get_int(version);
    return v == 1 || v == 2 ? v : 0;
  }
  GValue one_or_two = G_VALUE_INIT;
  g_value_init(&one_or_two, GST_TYPE_INT_RANGE);
  gst_value_set_int_range(&one_or_two, 1, 2);
  const bool within = gst_value_is_subset(version, &one_or_two);
  g_value_unset(&one_or_two);
  return within ? -1 : 0;
}

/* The encoder for a codec (codec_caps()); NULL if none. */
static GstElement *make_encoder(GstCaps *codec_in, const char *asked, char **why)
{
  const char *codec = gst_structure_get_name(gst_caps_get_structure(codec_in, 0));
  if (asked) {
    GstElementFactory *factory = gst_element_factory_find(asked);
    if (!factory) {
      *why = g_strdup_printf("--codec %s: no such GStreamer element is installed", asked);
      return NULL;
    }
    bool encoder = gst_element_factory_list_is_type(factory, GST_ELEMENT_FACTORY_TYPE_ENCODER);
    gst_object_unref(factory);
    if (!encoder) {
      *why = g_strdup_printf("--codec %s is not an encoder (see gst-inspect-1.0 %s)", asked, asked);
      return NULL;
    }
    return gst_element_factory_make(asked, NULL);
  }
  static const struct {
    const char *codec;
    const char *encoders[4];
  } preferred[] = {
      {"video/x-h264", {"nvh264enc", "x264enc"}},
      {"video/x-h265", {"nvh265enc", "x265enc"}},
      {"video/x-vp8", {"vp8enc"}},
      {"video/x-vp9", {"vp9enc"}},
      {"video/x-av1", {"nvav1enc", "svtav1enc", "av1enc", "rav1enc"}},
      {"image/jpeg", {"jpegenc"}},
      {"image/png", {"pngenc"}},
  };
  /* MPEG-1 and MPEG-2 video: gst-libav 1.22's avenc_mpeg1video and
   * avenc_mpeg2video refuse every frame rate (FFmpeg 5.1 takes the rate
   * from the time base, which gst-libav sets to nanoseconds: "MPEG-1/2
   * does not support 1000000000/1 fps"), and the best-ranked of the two is
   * the MPEG-1 one; mjpegtools' mpeg2enc writes both.  Without it, what
   * is left fails every file with an "Internal data stream error": one
   * line that says what to install instead. */
  if (mpeg12_version(codec_in)) {
    GstElement *encoder = gst_element_factory_make("mpeg2enc", NULL);
    if (!encoder)
      *why = g_strdup("writing MPEG-1/2 video needs GStreamer's mpeg2enc (Debian: "
                      "gstreamer1.0-plugins-bad)");
    return encoder;
  }
  for (size_t i = 0; i < G_N_ELEMENTS(preferred); i++) {
    if (strcmp(preferred[i].codec, codec) != 0)
      continue;
    for (int k = 0; k < 4 && preferred[i].encoders[k]; k++) {
      GstElement *encoder = gst_element_factory_make(preferred[i].encoders[k], NULL);
      if (encoder)
        return encoder;
    }
  }
  GstCaps *caps = gst_caps_ref(codec_in);
  GstElementFactory *factory = best_factory(GST_ELEMENT_FACTORY_TYPE_ENCODER | PICTURE_MEDIA, caps,
                                            GST_PAD_SRC, GST_RANK_NONE, false);
  gst_caps_unref(caps);
  if (!factory) {
    char *text = gst_caps_to_string(codec_in);
    *why = g_strdup_printf("no GStreamer encoder is installed for its video (%s); choose one "
                           "with --codec",
                           text);
    g_free(text);
    return NULL;
  }
  GstElement *encoder = gst_element_factory_create(factory, NULL);
  gst_object_unref(factory);
  return encoder;
}

static bool has_property(GstElement *element, const char *name)
{
  return g_object_class_find_property(G_OBJECT_GET_CLASS(element), name) != NULL;
}

/* jpegenc's quality for a CRF.  jpegenc scales libjpeg's tables by
 * 200 - 2q percent for a quality q of 50 and up, by 5000 / q below
 * (jpeg_set_quality); that scale is made to double every 6 steps of CRF, as
 * x264's quantizer step does, from JPEG_DEFAULT_QUALITY at the default CRF:
 * 12 -> 98, 18 -> 95, 24 -> 90, 30 -> 80, 36 -> 60, 42 -> 31, 51 -> 11.  CRF 0
 * asks for lossless, which baseline JPEG does not have: its best, 100. */
static int jpeg_quality_of_crf(int crf)
{
  if (crf == 0)
    return 100;
  double scale = (200 - 2 * JPEG_DEFAULT_QUALITY) * pow(2.0, (crf - LHIO_VIDEO_DEFAULT_CRF) / 6.0);
  double quality = scale <= 100 ? (200 - scale) / 2 : 5000 / scale;
  return CLAMP((int)lround(quality), 1, 100);
}

/* FFmpeg's qscale (1 best .. 31) for a CRF: doubling every 6 steps of CRF,
 * 18 -> 2. */
static double qscale_of_crf(int crf)
{
  return CLAMP(pow(2.0, (crf - 12) / 6.0), 1.0, 31.0);
}

/* The DNxHR profile of avenc_dnxhd for frames of a raw format, at a CRF:
 * DNxHD proper takes only the bitrates of its profiles for each size and
 * rate (115000 or 185000 kbit/s for 1080p25, ...), which nothing about the
 * input gives, and fails to open on any other, its own default included;
 * DNxHR takes any size at its quality levels.  10-bit 4:2:2 is HQX, 4:4:4
 * is 444; 8-bit 4:2:2 is HQ up to CRF 23 (the default 18), SQ up to 30, LB
 * above.  NULL for a format it does not take. */
static const char *dnxhr_profile(const char *format, int crf)
{
  if (!format)
    return NULL;
  if (strcmp(format, "I422_10LE") == 0)
    return "dnxhr_hqx";
  if (strcmp(format, "Y444_10LE") == 0 || strcmp(format, "GBR_10LE") == 0)
    return "dnxhr_444";
  if (strcmp(format, "Y42B") != 0)
    return NULL;
  return crf <= 23 ? "dnxhr_hq" : crf <= 30 ? "dnxhr_sq" : "dnxhr_lb";
}

/* avenc_dnxhd's sink: once the frames' format is known, and before the
 * encoder opens on it, the DNxHR profile for that format. */
static GstPadProbeReturn choose_dnxhr_profile(GstPad *pad, GstPadProbeInfo *info, gpointer data)
{
  GstEvent *event = GST_PAD_PROBE_INFO_EVENT(info);
  if (GST_EVENT_TYPE(event) != GST_EVENT_CAPS)
    return GST_PAD_PROBE_OK;
  GstCaps *caps;
  gst_event_parse_caps(event, &caps);
  const char *profile = dnxhr_profile(
      gst_structure_get_string(gst_caps_get_structure(caps, 0), "format"), GPOINTER_TO_INT(data));
  GstElement *encoder = gst_pad_get_parent_element(pad);
  if (encoder && profile)
    gst_util_set_object_arg(G_OBJECT(encoder), "profile", profile);
  if (encoder)
    gst_object_unref(encoder);
  return GST_PAD_PROBE_OK;
}

/* Sets the encoder's rate control: a mean bitrate when kbps > 0, else
 * constant quality from crf (x264's scale: 0 lossless, 51 worst).  Each
 * encoder family has its own knobs.  NULL, or why a bitrate cannot be asked
 * of the encoder (jpegenc and pngenc have no rate control at all: one
 * picture at a time). */
static char *set_quality(GstElement *encoder, int crf, int kbps)
{
  GstElementFactory *factory = gst_element_get_factory(encoder);
  const char *name = gst_plugin_feature_get_name(GST_PLUGIN_FEATURE(factory));
  char text[64];
  /* No B-frames and no lookahead frames held back: with them, the last two
   * frames of a variable-rate mp4 went missing after x264enc's B-frames
   * (its speed preset has 3), and vp8enc/vp9enc lost the last frames held in
   * libvpx's lag when the stream ended (9 of 12 came out).  Every frame
   * keeps its timestamp, at some cost in size. */
  if (strcmp(name, "x264enc") == 0) {
    g_object_set(encoder, "bframes", (guint)0, NULL);
    if (kbps > 0) {
      gst_util_set_object_arg(G_OBJECT(encoder), "pass", "cbr");
      g_object_set(encoder, "bitrate", (guint)kbps, NULL);
    } else {
      /* pass=quant quantizer=0 is x264's lossless mode; pass=qual is its CRF. */
      gst_util_set_object_arg(G_OBJECT(encoder), "pass", crf == 0 ? "quant" : "qual");
      g_object_set(encoder, "quantizer", (guint)crf, NULL);
    }
  } else if (strcmp(name, "x265enc") == 0) {
    if (kbps > 0) {
      g_object_set(encoder, "bitrate", (guint)kbps, NULL);
      snprintf(text, sizeof text, "bframes=0");
    } else if (crf == 0) {
      snprintf(text, sizeof text, "lossless=1:bframes=0");
    } else {
      snprintf(text, sizeof text, "crf=%d:bframes=0", crf);
    }
    g_object_set(encoder, "option-string", text, NULL);
  } else if (g_str_has_prefix(name, "vp8enc") || g_str_has_prefix(name, "vp9enc")) {
    g_object_set(encoder, "lag-in-frames", 0, NULL);
    if (kbps > 0) {
      gst_util_set_object_arg(G_OBJECT(encoder), "end-usage", "vbr");
      g_object_set(encoder, "target-bitrate", kbps * 1000, NULL);
    } else {
      /* libvpx's quantizer runs 0 .. 63. */
      gst_util_set_object_arg(G_OBJECT(encoder), "end-usage", "cq");
      g_object_set(encoder, "cq-level", (int)lround(crf * 63.0 / LHIO_VIDEO_MAX_CRF),
                   "min-quantizer", (guint)0, "target-bitrate", VPX_RATE_CEILING, NULL);
    }
  } else if (strcmp(name, "av1enc") == 0) {
    /* libaom through GStreamer 1.22: no cq-level; constant quality is
     * end-usage q between equal quantizers (0 .. 63, 0 lossless), which its
     * defaults (0, 0) made lossless whatever the CRF (a 2 s clip 11 times
     * the input's size); and speed 0, its default, took 72 s for it. */
    g_object_set(encoder, "lag-in-frames", (guint)0, "cpu-used", 6, NULL);
    if (kbps > 0) {
      gst_util_set_object_arg(G_OBJECT(encoder), "end-usage", "vbr");
      g_object_set(encoder, "target-bitrate", (guint)kbps, "min-quantizer", (guint)0,
                   "max-quantizer", (guint)63, NULL);
    } else {
      guint q = (guint)lround(crf * 63.0 / LHIO_VIDEO_MAX_CRF);
      gst_util_set_object_arg(G_OBJECT(encoder), "end-usage", "q");
      g_object_set(encoder, "min-quantizer", q, "max-quantizer", q, NULL);
    }
  } else if (g_str_has_prefix(name, "nvh26") && has_property(encoder, "qp-const")) {
    if (kbps > 0) {
      gst_util_set_object_arg(G_OBJECT(encoder), "rc-mode", "vbr");
      g_object_set(encoder, "bitrate", (guint)kbps, NULL);
    } else {
      gst_util_set_object_arg(G_OBJECT(encoder), "rc-mode", "constqp");
      g_object_set(encoder, "qp-const", crf, NULL);
    }
  } else if (strcmp(name, "avenc_dnxhd") == 0 && kbps <= 0) {
    GstPad *sink = gst_element_get_static_pad(encoder, "sink");
    if (sink) {
      gst_pad_add_probe(sink, GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM, choose_dnxhr_profile,
                        GINT_TO_POINTER(crf), NULL);
      gst_object_unref(sink);
    }
  } else if (g_str_has_prefix(name, "avenc_") && has_property(encoder, "pass")) {
    if (kbps > 0 && has_property(encoder, "bitrate")) {
      gst_util_set_object_arg(G_OBJECT(encoder), "pass", "cbr");
      snprintf(text, sizeof text, "%d", kbps * 1000);
      gst_util_set_object_arg(G_OBJECT(encoder), "bitrate", text);
    } else if (kbps <= 0 && has_property(encoder, "quantizer")) {
      gst_util_set_object_arg(G_OBJECT(encoder), "pass", "quant");
      snprintf(text, sizeof text, "%g", qscale_of_crf(crf));
      gst_util_set_object_arg(G_OBJECT(encoder), "quantizer", text);
    }
  } else if (strcmp(name, "mpeg2enc") == 0) {
    if (kbps > MPEG2ENC_MAX_KBPS)
      return g_strdup_printf("%s writes at most %d kbit/s", name, MPEG2ENC_MAX_KBPS);
    /* Its largest decoder buffer, so that its rate control takes any rate:
     * one holding fewer than 4 frames ends the process. */
    if (kbps > 0)
      g_object_set(encoder, "bitrate", kbps, "bufsize", MPEG2ENC_MAX_BUFFER_KB, NULL);
    else
      g_object_set(encoder, "quantisation", (int)lround(qscale_of_crf(crf)), NULL);
  } else if (strcmp(name, "jpegenc") == 0) {
    if (kbps > 0)
      return g_strdup_printf("%s has no rate control (each frame is a picture of its own); use "
                             "--crf",
                             name);
    /* libjpeg's accurate DCT, as images are written with (its default):
     * jpegenc's own default, ifast, is the coarser of the two at high
     * quality, and lost more at 100 than at 95. */
    gst_util_set_object_arg(G_OBJECT(encoder), "idct-method", "islow");
    g_object_set(encoder, "quality", jpeg_quality_of_crf(crf), NULL);
  } else if (strcmp(name, "pngenc") == 0) {
    /* Lossless whatever the CRF: its compression level (zlib's effort) is
     * left at its default. */
    if (kbps > 0)
      return g_strdup_printf("%s has no rate control (each frame is a picture of its own); use "
                             "--crf",
                             name);
  }
  return NULL;
}

/* mpeg2enc writes MPEG-1 unless told (format 0, "Generic MPEG-1"): an
 * MPEG-2 input goes out as MPEG-2 ("Generic MPEG-2").  Its level checks are
 * off: mjpegtools ends the process where one fails (a 1080p picture is
 * above MPEG-2's Main Level), and the file is written at the input's size
 * whatever level that takes. */
static void set_mpeg2enc_format(GstElement *encoder, GstCaps *codec)
{
  g_object_set(encoder, "constraints", FALSE, NULL);
  if (mpeg12_version(codec) == 2)
    gst_util_set_object_arg(G_OBJECT(encoder), "format", "3");
  else if (mpeg12_version(codec) == 1)
    gst_util_set_object_arg(G_OBJECT(encoder), "format", "0");
}

/* A frame rate for a message: 25, 30000/1001, or variable (0/1). */
static char *rate_text(const GValue *rate)
{
  if (!GST_VALUE_HOLDS_FRACTION(rate))
    return gst_value_serialize(rate);
  const int n = gst_value_get_fraction_numerator(rate);
  const int d = gst_value_get_fraction_denominator(rate);
  return n == 0   ? g_strdup("variable (0/1)")
         : d == 1 ? g_strdup_printf("%d", n)
                  : g_strdup_printf("%d/%d", n, d);
}

/* The rates of an encoder template's framerate field, for a message. */
static char *rates_text(const GValue *rates)
{
  if (!GST_VALUE_HOLDS_LIST(rates))
    return rate_text(rates);
  GString *text = g_string_new(NULL);
  for (guint i = 0; i < gst_value_list_get_size(rates); i++) {
    char *one = rate_text(gst_value_list_get_value(rates, i));
    g_string_append_printf(text, "%s%s", i ? ", " : "", one);
    g_free(one);
  }
  return g_string_free(text, FALSE);
}

/* A template's width or height field for a message: "16 or more",
 * "16 to 4096", or as GStreamer writes it. */
static char *side_text(const GValue *side)
{
  if (GST_VALUE_HOLDS_INT_RANGE(side)) {
    const int low = gst_value_get_int_range_min(side), high = gst_value_get_int_range_max(side);
    return high == G_MAXINT ? g_strdup_printf("%d or more", low)
                            : g_strdup_printf("%d to %d", low, high);
  }
  return gst_value_serialize(side);
}

/* Whether a template's structures take frames of width x height (those
 * without a width or height field take any); else *why says the sides its
 * first structure takes. */
static bool template_takes_size(GstCaps *templ, int width, int height, char **why)
{
  GValue w = G_VALUE_INIT, h = G_VALUE_INIT;
  g_value_init(&w, G_TYPE_INT);
  g_value_set_int(&w, width);
  g_value_init(&h, G_TYPE_INT);
  g_value_set_int(&h, height);
  bool takes = gst_caps_get_size(templ) == 0;
  for (guint i = 0; i < gst_caps_get_size(templ) && !takes; i++) {
    const GstStructure *s = gst_caps_get_structure(templ, i);
    const GValue *widths = gst_structure_get_value(s, "width");
    const GValue *heights = gst_structure_get_value(s, "height");
    takes = (!widths || gst_value_intersect(NULL, widths, &w)) &&
            (!heights || gst_value_intersect(NULL, heights, &h));
  }
  if (!takes) {
    const GstStructure *s = gst_caps_get_structure(templ, 0);
    char *widths = side_text(gst_structure_get_value(s, "width"));
    char *heights = side_text(gst_structure_get_value(s, "height"));
    *why = strcmp(widths, heights) == 0
               ? g_strdup_printf("its width and height must be %s", widths)
               : g_strdup_printf("its width must be %s and its height %s", widths, heights);
    g_free(widths);
    g_free(heights);
  }
  return takes;
}

/* Whether the muxer's pad for the encoded video takes its size: GStreamer
 * 1.22's mp4mux, qtmux, webmmux and avimux take none under 16 pixels, and
 * an H.264 mp4 8 pixels high failed after decoding with no more than
 * "Internal data stream error. (from queue0)". */
static bool muxer_takes_size(Rewrite *r, int width, int height)
{
  if (!r->made)
    return true;
  GstElementFactory *factory = gst_element_get_factory(r->muxer);
  for (const GList *t = gst_element_factory_get_static_pad_templates(factory); t; t = t->next) {
    GstStaticPadTemplate *templ = t->data;
    if (templ->direction != GST_PAD_SINK)
      continue;
    GstCaps *caps = gst_static_pad_template_get_caps(templ);
    GstCaps *video = gst_caps_intersect(caps, r->made);
    gst_caps_unref(caps);
    char *why = NULL;
    bool takes = gst_caps_is_empty(video) || template_takes_size(video, width, height, &why);
    gst_caps_unref(video);
    if (!takes) {
      fail(r, "%s cannot write %dx%d video (%s)",
           gst_plugin_feature_get_name(GST_PLUGIN_FEATURE(factory)), width, height, why);
      g_free(why);
      return false;
    }
  }
  return true;
}

/* The stream's chroma sampling as its caps state it before decoding:
 * the parsers' chroma-format ("4:2:0", "4:0:0", ...), or raw video's
 * format's; NULL where they do not say. */
static const char *stream_chroma(const GstStructure *s)
{
  const char *chroma = gst_structure_get_string(s, "chroma-format");
  const char *format = gst_structure_get_string(s, "format");
  if (chroma || !format || !gst_structure_has_name(s, "video/x-raw"))
    return chroma;
  const GstVideoFormatInfo *info = gst_video_format_get_info(gst_video_format_from_string(format));
  if (!info || GST_VIDEO_FORMAT_INFO_IS_GRAY(info))
    return info ? "4:0:0" : NULL;
  if (GST_VIDEO_FORMAT_INFO_W_SUB(info, 1) == 0)
    return GST_VIDEO_FORMAT_INFO_H_SUB(info, 1) == 0 ? "4:4:4" : "4:4:0";
  return GST_VIDEO_FORMAT_INFO_H_SUB(info, 1) == 0 ? "4:2:2" : "4:2:0";
}

/* Whether x264 writes width x height in the stream's chroma sampling: it
 * takes odd sides in 4:4:4 only and odd heights in 4:2:2 ("width not
 * divisible by 2"), though x264enc's template takes any size, and a 1x1
 * 4:0:0 H.264 failed after decoding with no more than "Can not initialize
 * x264 encoder.".  A gray (4:0:0) stream reaches it as 4:2:0, and one whose
 * caps do not say is taken for 4:2:0, what decoders mostly give. */
static bool x264_takes_size(Rewrite *r, const GstStructure *s, int width, int height)
{
  const char *chroma = stream_chroma(s);
  const bool full = chroma && strcmp(chroma, "4:4:4") == 0;
  const bool halved_across = !full;
  const bool halved_down = !full && !(chroma && strcmp(chroma, "4:2:2") == 0);
  if ((!halved_across || width % 2 == 0) && (!halved_down || height % 2 == 0))
    return true;
  fail(r,
       "x264enc cannot write %dx%d video in %s (x264 takes an odd width only in 4:4:4, an odd "
       "height in 4:4:4 and 4:2:2): give another --codec",
       width, height, chroma ? chroma : "4:2:0");
  return false;
}

/* Whether the encoder takes the decoded frames' rate and size, looked at
 * before they reach it.  MPEG-1 and MPEG-2 have a short list of frame
 * rates, and their encoders refused the others with no more than
 * "Internal data stream error"; mpeg2enc (mjpegtools) ends the whole
 * process on a picture size it cannot write. */
static bool encoder_takes(Rewrite *r, GstCaps *caps)
{
  const GstStructure *s = gst_caps_get_structure(caps, 0);
  int width = 0, height = 0;
  const bool sized =
      gst_structure_get_int(s, "width", &width) && gst_structure_get_int(s, "height", &height);
  /* The muxer first: no --codec helps there. */
  if (sized && !muxer_takes_size(r, width, height))
    return false;
  GstElement *encoder = r->encoder_element;
  if (!encoder)
    return true;
  const char *name =
      gst_plugin_feature_get_name(GST_PLUGIN_FEATURE(gst_element_get_factory(encoder)));
  if (strcmp(name, "mpeg2enc") == 0 && sized &&
      (width % 2 || height % 2 || width % 4096 == 0 || height % 4096 == 0)) {
    fail(r,
         "%s cannot write %dx%d pictures (its sides must be even and not multiples of 4096): "
         "give another --codec",
         name, width, height);
    return false;
  }
  if (sized) {
    GstPad *sink = gst_element_get_static_pad(encoder, "sink");
    GstCaps *templ = gst_pad_get_pad_template_caps(sink);
    gst_object_unref(sink);
    char *why = NULL;
    bool takes = template_takes_size(templ, width, height, &why);
    gst_caps_unref(templ);
    if (!takes) {
      fail(r, "%s cannot write %dx%d video (%s): give another --codec", name, width, height, why);
      g_free(why);
      return false;
    }
  }
  if (strcmp(name, "x264enc") == 0 && sized && !x264_takes_size(r, s, width, height))
    return false;
  const GValue *rate = gst_structure_get_value(s, "framerate");
  if (!rate)
    return true;
  GstPad *sink = gst_element_get_static_pad(encoder, "sink");
  GstCaps *templ = gst_pad_get_pad_template_caps(sink);
  gst_object_unref(sink);
  bool takes = false;
  const GValue *allowed = NULL;
  for (guint i = 0; i < gst_caps_get_size(templ) && !takes; i++) {
    const GValue *rates = gst_structure_get_value(gst_caps_get_structure(templ, i), "framerate");
    takes = !rates || gst_value_intersect(NULL, rates, rate);
    allowed = rates ? rates : allowed;
  }
  if (!takes) {
    char *have = rate_text(rate), *list = rates_text(allowed);
    fail(r, "its frame rate, %s, is not one %s takes (%s): give another --codec", have, name, list);
    g_free(have);
    g_free(list);
  }
  gst_caps_unref(templ);
  return takes;
}

/* The video stream's caps once fixed, at its first packet (before it, an
 * MPEG-TS stream says only "MPEG-1 or MPEG-2", and no size or rate), before
 * the decoder has them: mpeg2enc is told which MPEG to write, and a rate or
 * size the encoder does not take is said (a rate it does not take failed
 * the decoder's negotiation, "Internal data stream error"). */
static GstPadProbeReturn check_stream_caps(GstPad *pad, GstPadProbeInfo *info, gpointer data)
{
  (void)pad;
  Rewrite *r = data;
  GstEvent *event = GST_PAD_PROBE_INFO_EVENT(info);
  if (GST_EVENT_TYPE(event) != GST_EVENT_CAPS)
    return GST_PAD_PROBE_OK;
  GstCaps *caps;
  gst_event_parse_caps(event, &caps);
  /* VP8/VP9 with alpha (WebM's AlphaMode): the decoder gives the colour
   * frames, and no encoder or muxer of GStreamer 1.22 writes the alpha
   * back.  Said, not left silently.  (The caps the stream was found with
   * are not fixed yet: vp9parse's offer an alpha every stream.) */
  gboolean alpha = FALSE;
  if (gst_structure_get_boolean(gst_caps_get_structure(caps, 0), "codec-alpha", &alpha) && alpha) {
    g_mutex_lock(&r->lock);
    r->alpha_left_out = true;
    g_mutex_unlock(&r->lock);
  }
  GstElement *encoder = r->encoder_element;
  if (encoder &&
      strcmp(gst_plugin_feature_get_name(GST_PLUGIN_FEATURE(gst_element_get_factory(encoder))),
             "mpeg2enc") == 0)
    set_mpeg2enc_format(encoder, caps);
  return encoder_takes(r, caps) ? GST_PAD_PROBE_OK : GST_PAD_PROBE_DROP;
}

/* A file that is one elementary stream, with no container (a bare .h264,
 * .h265/.hevc or .m2v, Motion JPEG), is written as the encoder's packets one
 * after the other: a capsfilter stands for the muxer, asking H.264 and
 * H.265 in the byte-stream form (start codes, as such files hold them, not
 * the length-prefixed avc form x264enc prefers).  NULL for a container. */
static GstElement *elementary_stream_writer(GstCaps *container)
{
  const GstStructure *s = gst_caps_get_structure(container, 0);
  const char *name = gst_structure_get_name(s);
  gboolean system_stream = TRUE;
  GstCaps *caps = NULL;
  if (strcmp(name, "video/x-h264") == 0 || strcmp(name, "video/x-h265") == 0)
    caps = gst_caps_new_simple(name, "stream-format", G_TYPE_STRING, "byte-stream", "alignment",
                               G_TYPE_STRING, "au", NULL);
  else if (strcmp(name, "image/jpeg") == 0 ||
           (strcmp(name, "video/mpeg") == 0 &&
            gst_structure_get_boolean(s, "systemstream", &system_stream) && !system_stream))
    caps = gst_caps_new_empty_simple(name);
  if (!caps)
    return NULL;
  GstElement *filter = gst_element_factory_make("capsfilter", NULL);
  if (filter)
    g_object_set(filter, "caps", caps, NULL);
  gst_caps_unref(caps);
  return filter;
}

/* The muxer whose output is the container typefinding gives the input:
 * first one whose caps lie within it (mp4mux for ISO mp4 rather than qtmux,
 * which also writes any QuickTime), else one whose caps meet it. */
static GstElement *make_muxer(GstCaps *container)
{
  /* The usual muxer of common containers, where several could write them
   * (atscmux also writes MPEG-TS; qtmux any QuickTime). */
  static const struct {
    const char *caps;
    const char *muxer;
  } usual[] = {
      {"video/quicktime, variant=(string)iso", "mp4mux"},
      {"video/quicktime", "qtmux"},
      {"video/mpegts", "mpegtsmux"},
      {"video/x-matroska", "matroskamux"},
      {"video/webm", "webmmux"},
      {"video/x-msvideo", "avimux"},
      {"video/x-flv", "flvmux"},
      {"application/ogg", "oggmux"},
      {"application/x-yuv4mpeg", "y4menc"}, /* raw video, no encoder before it */
      {"application/x-3gp", "3gppmux"},
      /* MPEG-2 program streams (.vob, .mpg): FFmpeg's muxer through
       * gst-libav.  mpegpsmux (ranked first) writes each packet's time as its
       * running time, so audio that began before the video went negative,
       * and GStreamer's own mpegpsdemux then started the file late (its
       * first frames dropped) and stalled at its end. */
      {"video/mpeg, systemstream=(boolean)true, mpegversion=(int)2", "avmux_vob"},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(usual); i++) {
    GstCaps *caps = gst_caps_from_string(usual[i].caps);
    bool fits = gst_caps_is_subset(container, caps);
    gst_caps_unref(caps);
    if (fits) {
      GstElement *muxer = gst_element_factory_make(usual[i].muxer, NULL);
      if (muxer)
        return muxer;
    }
  }
  GList *all =
      gst_element_factory_list_get_elements(GST_ELEMENT_FACTORY_TYPE_MUXER, GST_RANK_MARGINAL);
  all = g_list_sort(all, gst_plugin_feature_rank_compare_func);
  GstElementFactory *chosen = NULL;
  for (int pass = 0; pass < 2 && !chosen; pass++) {
    for (GList *l = all; l && !chosen; l = l->next) {
      GstElementFactory *factory = l->data;
      for (const GList *t = gst_element_factory_get_static_pad_templates(factory); t; t = t->next) {
        GstStaticPadTemplate *templ = t->data;
        if (templ->direction != GST_PAD_SRC)
          continue;
        GstCaps *caps = gst_static_pad_template_get_caps(templ);
        bool fits = pass == 0 ? gst_caps_is_subset(caps, container)
                              : gst_caps_can_intersect(caps, container);
        gst_caps_unref(caps);
        if (fits) {
          chosen = factory;
          break;
        }
      }
    }
  }
  GstElement *muxer = chosen ? gst_element_factory_create(chosen, NULL) : NULL;
  gst_plugin_feature_list_free(all);
  return muxer;
}

/* ------------------------------------------------------------------------ */
/* Linking the streams parsebin exposes                                      */

static bool add_to_pipeline(Rewrite *r, GstElement **elements, int n)
{
  for (int i = 0; i < n; i++) {
    if (!elements[i])
      continue;
    gst_bin_add(GST_BIN(r->pipeline), elements[i]);
  }
  GstElement *previous = NULL;
  for (int i = 0; i < n; i++) {
    if (!elements[i])
      continue;
    if (previous && !gst_element_link(previous, elements[i]))
      return false;
    previous = elements[i];
  }
  for (int i = 0; i < n; i++)
    if (elements[i])
      gst_element_sync_state_with_parent(elements[i]);
  return true;
}

static GstPadProbeReturn count_packet(GstPad *pad, GstPadProbeInfo *info, gpointer data)
{
  Rewrite *r = data;
  g_mutex_lock(&r->lock);
  r->packets++;
  g_mutex_unlock(&r->lock);
  return GST_PAD_PROBE_OK;
}

/* On a copied stream: every stream's end counts, as a whole file's audio
 * may outlast its video. */
static GstPadProbeReturn note_copied_end(GstPad *pad, GstPadProbeInfo *info, gpointer data)
{
  note_end(data, GST_PAD_PROBE_INFO_BUFFER(info));
  return GST_PAD_PROBE_OK;
}

/* Links src (of caps) to a pad the muxer gives for such a stream, counting
 * the packets that go in (the pipeline is not stuck while they come). */
static bool link_to_muxer(Rewrite *r, GstElement *last, GstCaps *caps)
{
  GstPad *src = gst_element_get_static_pad(last, "src");
  GstPad *sink = gst_element_get_compatible_pad(r->muxer, src, caps);
  bool ok = sink && gst_pad_link(src, sink) == GST_PAD_LINK_OK;
  if (ok)
    gst_pad_add_probe(src, GST_PAD_PROBE_TYPE_BUFFER, count_packet, r, NULL);
  if (sink)
    gst_object_unref(sink);
  gst_object_unref(src);
  return ok;
}

/* A queue in front of the muxer with no limit.  The muxer takes a packet
 * only when every stream has one, and the encoder holds back a second or
 * more of frames (x264's lookahead) while the demuxer goes on with the
 * audio; a bounded queue of audio would fill and block the demuxer before
 * the video could come out.  What waits here is compressed packets. */
static GstElement *muxer_queue(void)
{
  GstElement *queue = gst_element_factory_make("queue", NULL);
  g_object_set(queue, "max-size-buffers", 0u, "max-size-bytes", 0u, "max-size-time", (guint64)0,
               NULL);
  return queue;
}

/* Links queue to the muxer through a parser of the stream's codec, which
 * gives it in the form the muxer takes: parsebin's H.264 and H.265 come in
 * the length-prefixed avc form that matroskamux and mp4mux take, where
 * mpegtsmux takes only start codes, so a second video stream of a
 * transport stream failed the whole file ("not-negotiated").  Without a
 * parser for it, queue goes to the muxer straight.  False where the muxer
 * takes none of its forms: the stream is then left out. */
static bool link_through_parser(Rewrite *r, GstElement *queue, GstCaps *caps)
{
  GstElementFactory *factory =
      best_factory(GST_ELEMENT_FACTORY_TYPE_PARSER, caps, GST_PAD_SINK, GST_RANK_MARGINAL, true);
  GstElement *parser = factory ? gst_element_factory_create(factory, NULL) : NULL;
  if (factory)
    gst_object_unref(factory);
  if (!parser)
    return link_to_muxer(r, queue, caps);
  /* Looked at before the parser joins the pipeline: a muxer's request pad
   * asked for and left unlinked would wait for data for ever. */
  GstPad *src = gst_element_get_static_pad(parser, "src");
  GstCaps *forms = gst_pad_query_caps(src, NULL);
  gst_object_unref(src);
  bool taken = false;
  for (const GList *t = gst_element_get_pad_template_list(r->muxer); t && !taken; t = t->next) {
    GstPadTemplate *templ = t->data;
    GstCaps *takes = gst_pad_template_get_caps(templ);
    taken =
        GST_PAD_TEMPLATE_DIRECTION(templ) == GST_PAD_SINK && gst_caps_can_intersect(takes, forms);
    gst_caps_unref(takes);
  }
  if (!taken) {
    gst_caps_unref(forms);
    gst_object_unref(parser);
    return false;
  }
  GstElement *chain[] = {parser};
  bool ok = add_to_pipeline(r, chain, 1) && gst_element_link(queue, parser) &&
            link_to_muxer(r, parser, forms);
  gst_caps_unref(forms);
  if (!ok)
    fail(r, "cannot link one of its streams");
  return ok;
}

/* A stream the muxer takes goes in as it is; one it does not (SRT
 * subtitles come out of matroskademux as Pango markup, which matroskamux
 * refuses) is left out, and the result says so. */
static void link_copied(Rewrite *r, GstPad *pad, GstCaps *caps)
{
  if (g_str_has_prefix(gst_structure_get_name(gst_caps_get_structure(caps, 0)), "audio/")) {
    g_mutex_lock(&r->lock);
    r->audio_streams++;
    g_mutex_unlock(&r->lock);
  }
  GstElement *queue = muxer_queue();
  GstElement *chain[] = {queue};
  add_to_pipeline(r, chain, 1);
  GstPad *sink = gst_element_get_static_pad(queue, "sink");
  bool linked = gst_pad_link(pad, sink) == GST_PAD_LINK_OK;
  gst_object_unref(sink);
  /* A video stream after the first goes through a parser of its own:
   * parsebin gives H.264 and H.265 in the avc form before it is linked,
   * even where the muxer takes start codes only. */
  bool video = g_str_has_prefix(gst_structure_get_name(gst_caps_get_structure(caps, 0)), "video/");
  if (linked && ((video && link_through_parser(r, queue, caps)) ||
                 (!video && link_to_muxer(r, queue, caps)))) {
    gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_BUFFER, note_copied_end, r, NULL);
    return;
  }
  GstElement *drop = gst_element_factory_make("fakesink", NULL);
  g_object_set(drop, "sync", FALSE, "async", FALSE, NULL);
  GstElement *end[] = {drop};
  add_to_pipeline(r, end, 1);
  if (!linked || !gst_element_link(queue, drop)) {
    fail(r, "cannot link one of its streams");
    return;
  }
  char *text = gst_caps_to_string(caps);
  GstElementFactory *factory = gst_element_get_factory(r->muxer);
  g_mutex_lock(&r->lock);
  if (!r->left_out)
    r->left_out = g_string_new(NULL);
  g_string_append_printf(r->left_out, "%s%s (%s does not take it)", r->left_out->len ? "; " : "",
                         text, gst_plugin_feature_get_name(GST_PLUGIN_FEATURE(factory)));
  g_mutex_unlock(&r->lock);
  g_free(text);
}

static void link_video(Rewrite *r, GstPad *pad, GstCaps *caps)
{
  GstCaps *codec = codec_caps(caps);
  GstElement *decoder = NULL, *frame_parser = NULL;
  if (!gst_structure_has_name(gst_caps_get_structure(caps, 0), "video/x-raw")) {
    /* A decoder that takes the stream whole; caps not yet fixed (MPEG-TS
     * before its first packet) are met by one that takes some of them. */
    GstElementFactoryListType type = GST_ELEMENT_FACTORY_TYPE_DECODER | PICTURE_MEDIA;
    GstElementFactory *factory = best_factory(type, caps, GST_PAD_SINK, GST_RANK_MARGINAL, true);
    if (!factory && !gst_caps_is_fixed(caps))
      factory = best_factory(type, caps, GST_PAD_SINK, GST_RANK_MARGINAL, false);
    if (!factory) {
      char *unknown = lhio_gst_unknown_codec(caps);
      char *text = gst_caps_to_string(caps);
      if (unknown)
        fail(r, "%s", unknown);
      else
        fail(r, "no GStreamer decoder is installed for its video (%s)", text);
      g_free(unknown);
      g_free(text);
      gst_caps_unref(codec);
      return;
    }
    decoder = gst_element_factory_create(factory, NULL);
    lhio_gst_set_up_decoder(decoder, r->full_range_stated);
    gst_object_unref(factory);
    /* A bare Motion JPEG comes as one image/jpeg stream that jpegdec cuts
     * in frames itself: count_decoder_input counted the file's read blocks
     * as frames (61 for 50 frames of 320x240), and a whole file was failed
     * as damaged.  jpegparse cuts it first, as for stats (video.c). */
    if (r->motion_jpeg && !(frame_parser = gst_element_factory_make("jpegparse", NULL))) {
      fail(r, "Motion JPEG: GStreamer lacks jpegparse (gstreamer1.0-plugins-bad)");
      gst_object_unref(decoder);
      gst_caps_unref(codec);
      return;
    }
  }
  /* Raw video (YUV4MPEG2) is written raw, unless --codec asks otherwise. */
  bool raw = decoder == NULL && !r->options->codec;
  GstElement *encoder = NULL, *parser = NULL;
  const char *encoder_name = "raw";
  GstCaps *made = NULL;
  if (raw) {
    made = gst_caps_new_empty_simple("video/x-raw");
  } else {
    char *why = NULL;
    encoder = make_encoder(codec, r->options->codec, &why);
    if (!encoder) {
      fail(r, "%s", why);
      g_free(why);
      if (decoder)
        gst_object_unref(decoder);
      if (frame_parser)
        gst_object_unref(frame_parser);
      gst_caps_unref(codec);
      return;
    }
    GstElementFactory *encoder_factory = gst_element_get_factory(encoder);
    encoder_name = gst_plugin_feature_get_name(GST_PLUGIN_FEATURE(encoder_factory));
    if (strcmp(encoder_name, "mpeg2enc") == 0)
      set_mpeg2enc_format(encoder, codec);
    char *refusal = set_quality(encoder, r->options->crf, r->options->bitrate_kbps);
    if (refusal) {
      fail(r, "--bitrate: %s", refusal);
      g_free(refusal);
      gst_object_unref(encoder);
      if (decoder)
        gst_object_unref(decoder);
      if (frame_parser)
        gst_object_unref(frame_parser);
      gst_caps_unref(codec);
      return;
    }
    /* What the encoder makes, for its parser and the muxer's pad: the
     * input's codec, or with --codec the encoder's own. */
    for (const GList *t = gst_element_factory_get_static_pad_templates(encoder_factory); t;
         t = t->next) {
      GstStaticPadTemplate *templ = t->data;
      if (templ->direction == GST_PAD_SRC) {
        GstCaps *c = gst_static_pad_template_get_caps(templ);
        if (gst_caps_can_intersect(c, codec)) {
          made = gst_caps_ref(codec);
        } else {
          GstCaps *first = gst_caps_copy_nth(c, 0);
          made = codec_caps(first);
          gst_caps_unref(first);
        }
        gst_caps_unref(c);
        break;
      }
    }
    /* An image encoder (jpegenc, pngenc) gives whole pictures, one a buffer,
     * with nothing for a parser to add; and GStreamer 1.22's pngparse takes
     * their durations away, so qtmux wrote the last frame with none, which
     * readers leave out (11 of 12 frames came back). */
    bool pictures =
        made && g_str_has_prefix(gst_structure_get_name(gst_caps_get_structure(made, 0)), "image/");
    GstElementFactory *parser_factory = made && !pictures
                                            ? best_factory(GST_ELEMENT_FACTORY_TYPE_PARSER, made,
                                                           GST_PAD_SINK, GST_RANK_MARGINAL, false)
                                            : NULL;
    parser = parser_factory ? gst_element_factory_create(parser_factory, NULL) : NULL;
    if (parser_factory)
      gst_object_unref(parser_factory);
  }
  gst_caps_unref(codec);

  g_mutex_lock(&r->lock);
  g_strlcpy(r->encoder, encoder_name, sizeof r->encoder);
  r->decoder_element = decoder;
  if (decoder)
    g_strlcpy(r->decoder,
              gst_plugin_feature_get_name(GST_PLUGIN_FEATURE(gst_element_get_factory(decoder))),
              sizeof r->decoder);
  g_mutex_unlock(&r->lock);
  GstPad *decoder_sink = decoder ? gst_element_get_static_pad(decoder, "sink") : NULL;
  if (decoder_sink) {
    gst_pad_add_probe(decoder_sink, GST_PAD_PROBE_TYPE_BUFFER | GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM,
                      count_decoder_input, r, NULL);
    gst_object_unref(decoder_sink);
  }

  GstElement *queue_in = gst_element_factory_make("queue", NULL);
  GstElement *convert_in = gst_element_factory_make("videoconvert", NULL);
  GstElement *filter = gst_element_factory_make("capsfilter", NULL);
  GstElement *convert_out = gst_element_factory_make("videoconvert", NULL);
  r->encode_filter = gst_element_factory_make("capsfilter", NULL);
  GstElement *queue_out = muxer_queue();
  GstCaps *change_caps = gst_caps_from_string("video/x-raw, format=(string)" CHANGE_FORMATS);
  g_object_set(filter, "caps", change_caps, NULL);
  gst_caps_unref(change_caps);
  GstElement *chain[] = {queue_in,    frame_parser,     decoder, convert_in, filter,
                         convert_out, r->encode_filter, encoder, parser,     queue_out};
  bool ok = add_to_pipeline(r, chain, G_N_ELEMENTS(chain));
  r->encoder_element = encoder;
  gst_caps_replace(&r->made, made);
  gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM, check_stream_caps, r, NULL);
  GstPad *filter_src = gst_element_get_static_pad(filter, "src");
  gst_pad_add_probe(filter_src, GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM, tag_full_range, r, NULL);
  gst_pad_add_probe(filter_src, GST_PAD_PROBE_TYPE_BUFFER, change_frame, r, NULL);
  gst_object_unref(filter_src);
  GstPad *to_muxer = gst_element_get_static_pad(queue_out, "sink");
  gst_pad_add_probe(to_muxer, GST_PAD_PROBE_TYPE_BUFFER, check_timestamp, r, NULL);
  gst_object_unref(to_muxer);
  /* A size the encoder does not take fails the link below, as the queue
   * asks it for its caps: said first (and a rate too, where caps are
   * already fixed). */
  ok = ok && (!gst_caps_is_fixed(caps) || encoder_takes(r, caps));
  GstPad *sink = gst_element_get_static_pad(queue_in, "sink");
  /* Raw frames came from y4mdec, which does not read their range. */
  if (!decoder && r->full_range_stated)
    lhio_gst_make_range_full(sink);
  ok = ok && gst_pad_link(pad, sink) == GST_PAD_LINK_OK;
  gst_object_unref(sink);
  ok = ok && made && link_to_muxer(r, queue_out, made);
  if (!ok) {
    GstElementFactory *factory = gst_element_get_factory(r->muxer);
    fail(r, "cannot put %s's video into %s", encoder_name,
         gst_plugin_feature_get_name(GST_PLUGIN_FEATURE(factory)));
  }
  if (made)
    gst_caps_unref(made);
}

/* The video's rotation from a tag list (qtdemux gives its track header's
 * matrix as the image-orientation tag), kept for mp4-rotation.c and for
 * what is drawn on the frames. */
static void note_orientation(Rewrite *r, const GstTagList *tags)
{
  GstVideoOrientationMethod method;
  if (!gst_video_orientation_from_tag((GstTagList *)tags, &method))
    return;
  int turns = method == GST_VIDEO_ORIENTATION_90R   ? 1
              : method == GST_VIDEO_ORIENTATION_180 ? 2
              : method == GST_VIDEO_ORIENTATION_90L ? 3
                                                    : 0;
  g_mutex_lock(&r->lock);
  r->quarter_turns = turns;
  r->orientation = lhio_gst_exif_orientation(method);
  g_mutex_unlock(&r->lock);
}

/* The container's creation time (matroskademux gives DateUTC as the
 * datetime tag) for muxers that write one and take it (matroskamux and
 * webmmux: creation-time; unset, they write the time of the run).  Set
 * before the muxer writes its header: tags come before the first frame. */
static void note_creation_time(Rewrite *r, const GstTagList *tags)
{
  GstDateTime *when = NULL;
  if (gst_tag_list_get_scope(tags) != GST_TAG_SCOPE_GLOBAL ||
      !has_property(r->muxer, "creation-time") ||
      !gst_tag_list_get_date_time(tags, GST_TAG_DATE_TIME, &when))
    return;
  GDateTime *utc = gst_date_time_has_second(when) ? gst_date_time_to_g_date_time(when) : NULL;
  if (utc)
    g_object_set(r->muxer, "creation-time", utc, NULL);
  if (utc)
    g_date_time_unref(utc);
  gst_date_time_unref(when);
}

static void note_tags_event(Rewrite *r, GstEvent *event)
{
  if (GST_EVENT_TYPE(event) != GST_EVENT_TAG)
    return;
  GstTagList *tags;
  gst_event_parse_tag(event, &tags);
  note_orientation(r, tags);
  note_creation_time(r, tags);
}

static GstPadProbeReturn tags_probe(GstPad *pad, GstPadProbeInfo *info, gpointer data)
{
  note_tags_event(data, GST_PAD_PROBE_INFO_EVENT(info));
  return GST_PAD_PROBE_OK;
}

static gboolean tags_sticky(GstPad *pad, GstEvent **event, gpointer data)
{
  note_tags_event(data, *event);
  return TRUE;
}

static void stream_found(GstElement *parsebin, GstPad *pad, gpointer data)
{
  Rewrite *r = data;
  GstCaps *caps = gst_pad_get_current_caps(pad);
  if (!caps)
    caps = gst_pad_query_caps(pad, NULL);
  const char *name = gst_structure_get_name(gst_caps_get_structure(caps, 0));
  g_mutex_lock(&r->lock);
  r->streams++;
  /* MJPEG and PNG video are image/jpeg and image/png streams. */
  bool pictures = g_str_has_prefix(name, "video/") || g_str_has_prefix(name, "image/");
  bool video = pictures && !r->video_linked;
  if (video) {
    r->video_linked = true;
    r->video_pad = gst_object_ref(pad);
  }
  g_mutex_unlock(&r->lock);
  if (video) {
    /* Its tags: those the pad holds already, and any that come later. */
    gst_pad_sticky_events_foreach(pad, tags_sticky, r);
    gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM, tags_probe, r, NULL);
    link_video(r, pad, caps);
  } else {
    link_copied(r, pad, caps);
  }
  gst_caps_unref(caps);
}

/* The program asked for, set on tsdemux before it takes the first whose
 * map comes. */
static void demuxer_added(GstBin *bin, GstBin *sub_bin, GstElement *element, gpointer data)
{
  Rewrite *r = data;
  GstElementFactory *factory = gst_element_get_factory(element);
  if (r->options->program > 0 && factory &&
      strcmp(gst_plugin_feature_get_name(GST_PLUGIN_FEATURE(factory)), "tsdemux") == 0)
    g_object_set(element, "program-number", r->options->program, NULL);
}

static void streams_complete(GstElement *parsebin, gpointer data)
{
  Rewrite *r = data;
  g_mutex_lock(&r->lock);
  bool video = r->video_linked;
  g_mutex_unlock(&r->lock);
  if (!video)
    fail(r, "no video stream in it");
}

/* ------------------------------------------------------------------------ */

/* What typefinding says the file is; NULL with the message set. */
static GstCaps *container_of(const char *input, int *status)
{
  /* The file is read twice (its head here, then the pipeline), and its
   * boxes again after (rotation, chapters): a FIFO's writer would be gone
   * for the second read, and opening one with no writer blocks where
   * neither Ctrl-C nor --video-timeout reaches. */
  struct stat st;
  if (stat(input, &st) == 0 && S_ISFIFO(st.st_mode)) {
    *status = lhio_fail(LH_ERROR_UNSUPPORTED, input,
                        "a video on a FIFO: videos are written back from files, not from a "
                        "pipe or FIFO");
    return NULL;
  }
  FILE *file = fopen(input, "rb");
  if (!file) {
    *status = lhio_fail_os(errno, input);
    return NULL;
  }
  guint8 *head = g_malloc(TYPEFIND_BYTES);
  size_t n = fread(head, 1, TYPEFIND_BYTES, file);
  fclose(file);
  GstCaps *caps = n ? gst_type_find_helper_for_data(NULL, head, n, NULL) : NULL;
  g_free(head);
  if (!caps)
    *status = lhio_fail(LH_ERROR_UNSUPPORTED, input, "GStreamer does not recognize its container");
  return caps;
}

/* At the end of the stream: a cut file ends as if it were whole, so the
 * end of its last packet, whichever stream's (audio may outlast the video
 * in a whole file), is held against the file's duration, as lhio_video
 * holds its last frame's for stats: NULL, or why the file is cut. */
static char *ends_short(Rewrite *r)
{
  g_mutex_lock(&r->lock);
  GstPad *pad = r->video_pad ? gst_object_ref(r->video_pad) : NULL;
  double end_time = r->end_time, frame_time = r->frame_time;
  g_mutex_unlock(&r->lock);
  if (!pad)
    return NULL;
  gint64 duration = -1;
  bool known = gst_pad_query_duration(pad, GST_FORMAT_TIME, &duration) && duration > 0;
  gst_object_unref(pad);
  char why[160];
  if (r->motion_jpeg && lhio_motion_jpeg_cut(r->input, why, sizeof why))
    return g_strdup(why);
  if (lhio_video_ends_short(r->input, r->avi, known ? (double)duration / GST_SECOND : NAN,
                            "streams", end_time, frame_time, why, sizeof why))
    return g_strdup(why);
  return NULL;
}

/* Where streaming stopped as not-negotiated after the decoder gave frames
 * but before the encoder gave any: the encoder did not open on them (a
 * libav encoder refusing their size, rate or format says why only in its
 * debug log), which the bus put as "Internal data stream error. (from
 * queue0)".  NULL otherwise. */
static char *unopened_encoder(Rewrite *r, const char *debug)
{
  if (!r->encoder_element || !debug || !strstr(debug, "not-negotiated"))
    return NULL;
  GstPad *in = gst_element_get_static_pad(r->encoder_element, "sink");
  GstPad *out = gst_element_get_static_pad(r->encoder_element, "src");
  /* The frames' caps as offered to it: refused, they are not its own. */
  GstPad *offered = in ? gst_pad_get_peer(in) : NULL;
  GstCaps *frames = offered ? gst_pad_get_current_caps(offered) : NULL;
  char *why = NULL;
  if (frames && out && !gst_pad_has_current_caps(out)) {
    GstVideoInfo info;
    char what[160] = "";
    if (gst_video_info_from_caps(&info, frames)) {
      const char *format = gst_video_format_to_string(GST_VIDEO_INFO_FORMAT(&info));
      snprintf(what, sizeof what, " (%s, %dx%d at %d/%d fps)", format, GST_VIDEO_INFO_WIDTH(&info),
               GST_VIDEO_INFO_HEIGHT(&info), GST_VIDEO_INFO_FPS_N(&info),
               GST_VIDEO_INFO_FPS_D(&info));
    }
    why = g_strdup_printf("GStreamer's %s did not open on its frames%s with the settings asked: "
                          "give another --codec, --crf or --bitrate",
                          r->encoder, what);
  }
  if (frames)
    gst_caps_unref(frames);
  if (offered)
    gst_object_unref(offered);
  if (in)
    gst_object_unref(in);
  if (out)
    gst_object_unref(out);
  return why;
}

/* filesink's failure to write the temporary file, said as the image
 * commands say theirs: "writing OUTPUT: No space left on device".  Its own
 * words were "No space left on the resource. (from filesink1)", or named the
 * temporary file; its debug text ends with strerror's. */
static char *sink_failure(const Rewrite *r, const GError *gerror, const char *debug)
{
  const char *why = gerror ? gerror->message : "unknown error";
  if (gerror && g_error_matches(gerror, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_NO_SPACE_LEFT))
    why = g_strerror(ENOSPC);
  else if (debug && strrchr(debug, '\n'))
    why = strrchr(debug, '\n') + 1;
  else if (debug && *debug)
    why = debug;
  return g_strdup_printf("writing %s: %s", r->output, why);
}

/* Runs the pipeline to its end; 0 or the status with the message set. */
static int run(Rewrite *r, LhioVideoRewriteResult *result)
{
  const char *input = r->input;
  double timeout_s = r->options->timeout_s > 0 ? r->options->timeout_s : DEFAULT_TIMEOUT_S;
  GstBus *bus = gst_element_get_bus(r->pipeline);
  int status = LH_OK;
  char *error = NULL;
  if (gst_element_set_state(r->pipeline, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE)
    error = g_strdup("the pipeline would not start");
  gint64 last_change = g_get_monotonic_time();
  uint64_t last_frames = 0;
  while (!error) {
    GstMessage *m = gst_bus_timed_pop(bus, BUS_SLICE_NS);
    if (r->options->stop && *r->options->stop) {
      result->stopped = true;
      status = lh_set_error(LH_ERROR_IO, "%s: stopped", input);
      if (m)
        gst_message_unref(m);
      break;
    }
    g_mutex_lock(&r->lock);
    if (r->error)
      error = g_strdup(r->error);
    /* Packets into the muxer count too: an encoder draining its lookahead
     * at the end (x265 on 4K: seconds a frame) takes no new frame. */
    uint64_t frames = r->frames + r->packets;
    g_mutex_unlock(&r->lock);
    if (error) {
      if (m)
        gst_message_unref(m);
      break;
    }
    gint64 now = g_get_monotonic_time();
    if (frames != last_frames) {
      last_frames = frames;
      last_change = now;
    }
    if (!m) {
      if (now - last_change > (gint64)(timeout_s * G_USEC_PER_SEC))
        error = g_strdup_printf("no frame for %g s: the pipeline is stuck", timeout_s);
      continue;
    }
    bool done = false;
    switch (GST_MESSAGE_TYPE(m)) {
    case GST_MESSAGE_EOS:
      done = true;
      error = ends_short(r);
      break;
    case GST_MESSAGE_ERROR: {
      GError *gerror = NULL;
      char *debug = NULL;
      gst_message_parse_error(m, &gerror, &debug);
      g_mutex_lock(&r->lock);
      if (r->missing)
        error = g_strdup_printf("no GStreamer plugin is installed for it (%s)", r->missing);
      else
        error = lhio_gst_unnegotiated_decoder(r->decoder_element, debug);
      if (!error)
        error = unopened_encoder(r, debug);
      g_mutex_unlock(&r->lock);
      if (!error && GST_MESSAGE_SRC(m) == GST_OBJECT(r->sink))
        error = sink_failure(r, gerror, debug);
      if (!error)
        error = g_strdup_printf("%s (from %s)", gerror ? gerror->message : "unknown error",
                                GST_OBJECT_NAME(GST_MESSAGE_SRC(m)));
      g_clear_error(&gerror);
      g_free(debug);
      break;
    }
    case GST_MESSAGE_ELEMENT:
      if (gst_is_missing_plugin_message(m)) {
        char *description = gst_missing_plugin_message_get_description(m);
        g_mutex_lock(&r->lock);
        if (!r->missing)
          r->missing = g_strdup(description);
        g_mutex_unlock(&r->lock);
        g_free(description);
      }
      break;
    default:
      break;
    }
    gst_message_unref(m);
    if (done)
      break;
  }
  gst_element_set_state(r->pipeline, GST_STATE_NULL);
  gst_object_unref(bus);
  if (error) {
    status = lh_set_error(LH_ERROR_CORRUPT, "%s: %s", input, error);
    g_free(error);
  } else if (status == LH_OK && !r->video_linked && r->missing) {
    /* parsebin leaves out a stream no installed decoder takes. */
    status =
        lh_set_error(LH_ERROR_UNSUPPORTED,
                     "%s: no GStreamer decoder is installed for its video (%s)", input, r->missing);
  } else if (status == LH_OK && !r->video_linked) {
    status = lh_set_error(LH_ERROR_UNSUPPORTED, "%s: no video stream in it", input);
  } else if (status == LH_OK && r->frames == 0) {
    status = lh_set_error(LH_ERROR_CORRUPT, "%s: no video frame decoded", input);
  }
  return status;
}

/* A failure of the output file (its temporary file made, changed after the
 * muxer or put in place), whose message begins with named (the output, or
 * the temporary file), said of the input as the image commands say it:
 * "INPUT: writing OUTPUT: why", never naming the temporary file.  Another
 * failure's message is left as it is. */
static int output_failure(int status, const char *input, const char *named, const char *output)
{
  const char *message = lh_last_error();
  size_t n = strlen(named);
  if (!message || strncmp(message, named, n) != 0 || message[n] != ':' || message[n + 1] != ' ')
    return status;
  char *kept = g_strdup(message + n + 2);
  status = lhio_fail(status, input, "writing %s: %s", output, kept);
  g_free(kept);
  return status;
}

int lhio_video_rewrite(const char *input, const char *output,
                       const LhioVideoRewriteOptions *options, LhioVideoRewriteResult *result)
{
  LhioVideoRewriteResult ignored;
  if (!result)
    result = &ignored;
  memset(result, 0, sizeof *result);
  if (!input || !output || !options || !options->change)
    return lh_set_error(LH_ERROR_INVALID_ARGUMENT, "lhio_video_rewrite: an argument is NULL");
  const char *why = lhio_gstreamer_started();
  if (why)
    return lhio_fail(LH_ERROR_UNSUPPORTED, input, "GStreamer could not start: %s", why);
  LhioVideoRewriteOptions settled = *options;
  if (settled.crf < 0)
    settled.crf = LHIO_VIDEO_DEFAULT_CRF;
  if (settled.crf > LHIO_VIDEO_MAX_CRF)
    return lhio_fail(LH_ERROR_INVALID_ARGUMENT, input, "quality %d is not in 0 .. %d", settled.crf,
                     LHIO_VIDEO_MAX_CRF);

  /* A YUV4MPEG2 file y4mdec would fail on, or wait on for a frame, says
   * why before a pipeline starts, as for stats (y4m-end.c). */
  char y4m_why[160];
  int status = lhio_y4m_unreadable(input, y4m_why, sizeof y4m_why);
  if (status < 0)
    return lhio_fail(status, input, "%s", y4m_why);
  char container_why[200];
  status = lhio_video_unreadable_container(input, container_why, sizeof container_why);
  if (status < 0)
    return lhio_fail(status, input, "%s", container_why);
  if (settled.program > 0 && (status = lhio_ts_program_check(input, settled.program)) < 0)
    return status;
  GstCaps *container = container_of(input, &status);
  if (!container)
    return status;
  GstElement *muxer = elementary_stream_writer(container);
  const bool bare_stream = muxer != NULL;
  if (!muxer)
    muxer = make_muxer(container);
  if (!muxer) {
    char *text = gst_caps_to_string(container);
    gst_caps_unref(container);
    status = lhio_fail(LH_ERROR_UNSUPPORTED, input, "no GStreamer muxer writes its container (%s)",
                       text);
    g_free(text);
    return status;
  }
  /* A transport stream states no duration, and a cut one ends quietly:
   * its last bytes say whether it was whole (ts-end.c). */
  bool transport_stream =
      gst_structure_has_name(gst_caps_get_structure(container, 0), "video/mpegts");
  bool avi = gst_structure_has_name(gst_caps_get_structure(container, 0), "video/x-msvideo");
  bool motion_jpeg = gst_structure_has_name(gst_caps_get_structure(container, 0), "image/jpeg");
  /* qtdemux ends one cut inside its media at the last whole sample, as
   * quietly (mp4-end.c). */
  const GstStructure *kind = gst_caps_get_structure(container, 0);
  bool iso_media = gst_structure_has_name(kind, "video/quicktime") ||
                   gst_structure_has_name(kind, "application/x-3gp");
  gst_caps_unref(container);

  GstElementFactory *muxer_factory = gst_element_get_factory(muxer);
  char muxer_name[64]; /* the factory's, kept past the pipeline */
  g_strlcpy(muxer_name, gst_plugin_feature_get_name(GST_PLUGIN_FEATURE(muxer_factory)),
            sizeof muxer_name);
  g_strlcpy(result->muxer, bare_stream ? "no container (a bare stream)" : muxer_name,
            sizeof result->muxer);
  if (strcmp(muxer_name, "y4menc") == 0)
    lhio_gst_tag_y4m_range(muxer);
  char *temp = NULL;
  FILE *file = NULL;
  status = lhio_create_temp(output, &temp, &file);
  if (status < 0) {
    gst_object_unref(muxer);
    return output_failure(status, input, output, output);
  }
  fclose(file);

  Rewrite r = {.input = input,
               .output = output,
               .options = &settled,
               .muxer = muxer,
               .avi = avi,
               .bare_stream = bare_stream,
               .motion_jpeg = motion_jpeg,
               .full_range_stated = (iso_media && lhio_mp4_states_full_range(input)) ||
                                    lhio_y4m_states_full_range(input)};
  g_mutex_init(&r.lock);
  r.pipeline = gst_pipeline_new("lumahist-rewrite");
  GstElement *source = gst_element_factory_make("filesrc", NULL);
  GstElement *parsebin = gst_element_factory_make("parsebin", NULL);
  GstElement *sink = gst_element_factory_make("filesink", NULL);
  r.sink = sink;
  if (!source || !parsebin || !sink) {
    status = lhio_fail(LH_ERROR_UNSUPPORTED, input,
                       "GStreamer's filesrc, parsebin or filesink is missing");
    if (source)
      gst_object_unref(source);
    if (parsebin)
      gst_object_unref(parsebin);
    if (sink)
      gst_object_unref(sink);
    gst_object_unref(muxer);
  } else {
    g_object_set(source, "location", input, NULL);
    g_object_set(sink, "location", temp, "async", FALSE, NULL);
    gst_bin_add_many(GST_BIN(r.pipeline), source, parsebin, muxer, sink, NULL);
    if (!gst_element_link(source, parsebin) || !gst_element_link(muxer, sink)) {
      status = lhio_fail(LH_ERROR_UNSUPPORTED, input, "cannot link the pipeline");
    } else {
      g_signal_connect(parsebin, "pad-added", G_CALLBACK(stream_found), &r);
      g_signal_connect(parsebin, "deep-element-added", G_CALLBACK(demuxer_added), &r);
      g_signal_connect(parsebin, "no-more-pads", G_CALLBACK(streams_complete), &r);
      status = run(&r, result);
    }
  }
  /* GStreamer 1.22's mp4mux and qtmux write no rotation, stamp the file
   * with the run's time and write no chapters: the input's are put in. */
  const bool quicktime = strcmp(muxer_name, "mp4mux") == 0 || strcmp(muxer_name, "qtmux") == 0 ||
                         strcmp(muxer_name, "3gppmux") == 0;
  if (status == LH_OK && quicktime && r.quarter_turns)
    status = lhio_mp4_set_rotation(temp, r.quarter_turns);
  if (status == LH_OK && quicktime)
    status = lhio_mp4_keep_creation_time(input, temp);
  if (status == LH_OK && quicktime)
    status = lhio_mp4_keep_chapters(input, temp);
  const bool timecode_left_out = status == LH_OK && quicktime &&
                                 lhio_mp4_tracks_of(input, "tmcd") > 0 &&
                                 lhio_mp4_tracks_of(temp, "tmcd") == 0;
  /* Streams of the program's map that tsdemux never gave out (the AAC
   * FFmpeg writes as private data in a Blu-ray-style map, type 0x06 with no
   * descriptor): said likewise.  --program plays another program than the
   * first mapped, whose map is counted. */
  LhioTsPrograms programs = {.first_mapped_streams = -1};
  if (status == LH_OK && transport_stream && settled.program <= 0)
    lhio_ts_file_programs(input, &programs);
  if (programs.first_mapped_streams > r.streams) {
    if (!r.left_out)
      r.left_out = g_string_new(NULL);
    g_string_append_printf(r.left_out,
                           "%sthat GStreamer's tsdemux did not give out (%d of the %d streams its "
                           "program's map lists)",
                           r.left_out->len ? "; " : "", programs.first_mapped_streams - r.streams,
                           programs.first_mapped_streams);
  }
  /* Sound tracks qtdemux never gave out: said as a stream left out is. */
  const int sound_tracks = status == LH_OK && iso_media ? lhio_mp4_tracks_of(input, "soun") : 0;
  if (sound_tracks > r.audio_streams) {
    if (!r.left_out)
      r.left_out = g_string_new(NULL);
    const int missing = sound_tracks - r.audio_streams;
    g_string_append_printf(r.left_out,
                           "%sof audio that GStreamer's qtdemux skips as shorter than a fifth of "
                           "the file (%d of its %d sound tracks)",
                           r.left_out->len ? "; " : "", missing, sound_tracks);
  }
  const bool matroska =
      strcmp(muxer_name, "matroskamux") == 0 || strcmp(muxer_name, "webmmux") == 0;
  const int attachments_left_out = status == LH_OK && matroska && lhio_mkv_attachments(temp) == 0
                                       ? lhio_mkv_attachments(input)
                                       : 0;
  /* matroskamux writes tag values as GStreamer serializes them. */
  if (status == LH_OK && matroska)
    status = lhio_mkv_unquote_tags(temp);
  if (status < 0)
    status = output_failure(status, input, temp, output);
  g_strlcpy(result->encoder, r.encoder, sizeof result->encoder);
  g_strlcpy(result->decoder, r.decoder, sizeof result->decoder);
  result->frames = r.frames;
  const uint64_t frames_in = r.frames_in;
  result->left_out = r.left_out ? g_string_free(r.left_out, FALSE) : NULL;
  result->alpha_left_out = r.alpha_left_out;
  result->timecode_left_out = timecode_left_out;
  result->attachments_left_out = attachments_left_out;
  gst_object_unref(r.pipeline);
  if (r.video_pad)
    gst_object_unref(r.video_pad);
  gst_caps_replace(&r.caps, NULL);
  gst_caps_replace(&r.made, NULL);
  g_free(r.error);
  g_free(r.missing);
  g_mutex_clear(&r.lock);
  g_queue_clear_full(&r.held_events, (GDestroyNotify)gst_event_unref);

  /* A transport stream, an MP4, FLV, IVF, Ogg, MPEG-PS or YUV4MPEG2 file
   * cut inside a packet, its media or a frame ends quietly; y4mdec also
   * drops a file's last 60 to 72 bytes of frames (the last frames of a
   * video of 6x6 pixels or less) as quietly. */
  char cut[192];
  int end_status;
  if (status == LH_OK && transport_stream && lhio_ts_file_cut(input, cut, sizeof cut))
    status = lhio_fail(LH_ERROR_CORRUPT, input, "the file is truncated: %s", cut);
  if (status == LH_OK && ((iso_media && lhio_mp4_file_cut(input, cut, sizeof cut)) ||
                          lhio_packet_file_end(input, cut, sizeof cut) == LHIO_FILE_END_CUT))
    status = lhio_fail(LH_ERROR_CORRUPT, input, "the file is truncated: %s", cut);
  if (status == LH_OK && (end_status = lhio_y4m_end(input, result->frames, cut, sizeof cut)) < 0)
    status = lhio_fail(end_status, input, "%s", cut);
  /* Damage inside the file, which no cut explains: stats fails it alike. */
  if (status == LH_OK && frames_in > result->frames)
    status = lhio_fail(LH_ERROR_CORRUPT, input,
                       "the stream is damaged: %" G_GUINT64_FORMAT " of its %" G_GUINT64_FORMAT
                       " frames could not be decoded",
                       frames_in - result->frames, frames_in);
  if (status == LH_OK) {
    status = lhio_place_temp(temp, output, options->place, options->place_data);
    if (status < 0)
      status = output_failure(status, input, output, output);
  } else {
    unlink(temp);
  }
  free(temp);
  return status;
}
