/* video.c: video files decoded by GStreamer into lumahist frames:
 * filesrc ! decodebin3 ! [videoconvert !] appsink (fdsrc ! queue ! decodebin
 * for a pipe or FIFO), the first video stream only, frames pulled one at a
 * time by the caller's thread.
 *
 * decodebin3 picks the decoder by rank, so NVDEC's (nvh264dec, nvh265dec,
 * nvav1dec, ...) where a GPU is usable; their pads offer CUDA memory, and
 * when the caller allows it the appsink takes the frames there, in place
 * (the library reads device pointers).  Other decoders' frames go through a
 * videoconvert that stays in passthrough for every format whose luma the
 * library reads directly (most planar YUV of 8 to 16 bits, gray, packed
 * R'G'B'), so the pixels are the decoder's own, as FFmpeg's are for
 * signalstats; only packed YUV (YUY2, v210, ...) is converted. */
#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gst/app/gstappsink.h>
#include <gst/gst.h>
#include <gst/pbutils/descriptions.h>
#include <gst/pbutils/missing-plugins.h>
#include <gst/video/video.h>

#ifdef HAVE_GST_CUDA
#include <gst/cuda/gstcudaloader.h>
#include <gst/cuda/gstcudamemory.h>
#include <gst/cuda/gstcudautils.h>
#endif

#include "lhio-gst.h"
#include "lhio-private.h"
#include "lhio-video.h"

#define DEFAULT_TIMEOUT_S 30.0
/* How long one wait for a sample lasts, between looks at the bus. */
#define PULL_SLICE_NS (100 * GST_MSECOND)
/* How long a file read to its end with no stream exposed is given before it
 * is taken to hold no frame: with a demuxer's warning, and without one (a
 * file cut before its first whole frame, whose demuxer ends quietly).  A
 * whole file's stream is exposed as soon as its first frame leaves the
 * multiqueue for a decoder, before it is decoded: the wait covers only
 * that hand-over, on a busy machine. */
#define NO_FRAMES_AFTER_WARNING_NS (2 * GST_SECOND)
#define NO_FRAMES_AFTER_DRAIN_NS (5 * GST_SECOND)

/* The system-memory formats whose luma is read without conversion. */
#define SYSTEM_FORMATS                                                                             \
  "{ I420, YV12, Y42B, Y444, Y41B, NV12, NV21, NV16, NV24, GRAY8, I420_10LE, I420_12LE, "          \
  "I422_10LE, I422_12LE, Y444_10LE, Y444_12LE, Y444_16LE, GRAY16_LE, P010_10LE, A420, "            \
  "RGB, BGR, RGBA, BGRA, RGBx, BGRx, RGB10A2_LE, BGR10A2_LE, RGBA64_LE }"
/* What NVDEC decoders give in CUDA memory and the library reads there. */
#define CUDA_FORMATS "{ NV12, P010_10LE }"

/* What went into one decoder, counted on its sink pad. */
typedef struct {
  LhioVideo *video;
  GstElement *decoder; /* held (a ref) */
  GstPad *sink;        /* its sink pad, held, and the probe there */
  gulong probe;
  uint64_t frames_in; /* buffers into it that it is to give out */
  /* The segment it was last given: a frame outside it is decoded and
   * dropped, as the decoder clips its output to it (a fragmented MP4 whose
   * edit shifts its frames past the duration it states), and is not
   * counted as one that failed. */
  GstSegment segment;
  /* Timestamps of the keyframes that entered it (parsers flag them;
   * decoders' output frames do not say), until they come out. */
  GHashTable *keyframes;
  /* An image decoder (jpegdec, pngdec: klass "Codec/Decoder/Image"): each
   * of its frames is a picture of its own, a keyframe, with a timestamp or
   * without (Motion JPEG with no container has none). */
  bool intra_only;
} DecoderInput;

struct LhioVideo {
  char *path;
  LhioVideoOptions options;
  GstElement *pipeline;
  GstElement *decodebin;
  GstElement *sink;
  GstBus *bus;

  GMutex lock; /* the fields below that GStreamer's threads set */
  bool linked;
  int video_streams; /* in the last stream collection; -1 none seen */
  char *first_video; /* the stream id of its first video stream, the one read */
  bool drained;      /* decodebin3 has read its whole input */
  char *decoder;
  char *missing;      /* what a missing plugin for the video or the container leaves
                       * to say: "no GStreamer decoder is installed for its video (...)" */
  bool missing_other; /* a decoder for a stream of another kind (audio, subtitles) is missing */
  /* Every picture decoder plugged (decodebin, for a pipe, decodes every
   * stream), and the one whose frames reach the appsink, once linked. */
  GPtrArray *decoders; /* of DecoderInput */
  DecoderInput *video_decoder;
  bool transport_stream; /* tsdemux reads it: its end is looked at (ts-end.c) */
  bool avi;              /* avidemux reads it: its header is (avi_cut_before) */
  bool full_range_stated; /* by its MP4 colr box or Y4M header, which qtdemux and y4mdec drop */
  bool mp4;              /* qtdemux reads it: its video track's duration is */
  bool matroska;         /* matroskademux reads it: what it says of its video's end is */
  bool y4m;              /* y4mdec reads it: its frames are walked (y4m-end.c) */
  bool motion_jpeg;      /* a regular file of Motion JPEG: its end is looked at */

  uint64_t pulled;   /* samples taken from the appsink, dropped ones too */
  double end_time;   /* of the last frame, seconds */
  double frame_time; /* the last frame's duration */
  bool ended;
  bool warned;
  char *demux_warning; /* the first warning a demuxer posted (matroskademux's on no cluster) */
  bool stuck;          /* a thread of the pipeline may never return */
  char *error;         /* the first failure */
  uint64_t index;

  GstSample *sample;
  GstVideoInfo info;
  GstVideoFrame vframe;
  bool mapped;
  bool cuda;
  /* The GstCudaContext the CUDA frames live in, held (a ref) until close:
   * what the caller made there is freed there, after the last frame. */
  void *cuda_context;
  GstVideoFrame host_frame;
  bool host_mapped;
  uint16_t *host_p010; /* P010's luma shifted down */
  size_t host_p010_size;
};

bool lhio_video_available(const char **why)
{
  (void)why;
  return true;
}

static gpointer init_gstreamer(gpointer data)
{
  (void)data;
  GError *error = NULL;
  if (!gst_init_check(NULL, NULL, &error)) {
    char *message = g_strdup(error ? error->message : "unknown reason");
    g_clear_error(&error);
    return message;
  }
  return NULL;
}

/* GStreamer is started once per process; NULL or why it could not be. */
const char *lhio_gstreamer_started(void)
{
  static GOnce once = G_ONCE_INIT;
  return g_once(&once, init_gstreamer, NULL);
}

/* ------------------------------------------------------------------------ */
/* The pipeline                                                              */

static void set_error(LhioVideo *v, const char *format, ...) G_GNUC_PRINTF(2, 3);

static void set_error(LhioVideo *v, const char *format, ...)
{
  if (v->error)
    return;
  /* Its numbers in the C locale, whatever the program's (a Python program
   * may have set its user's): "2.000 s", not "2,000 s", in an English line. */
  locale_t c_numeric = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
  locale_t previous = c_numeric ? uselocale(c_numeric) : (locale_t)0;
  va_list args;
  va_start(args, format);
  v->error = g_strdup_vprintf(format, args);
  va_end(args);
  if (c_numeric) {
    uselocale(previous);
    freelocale(c_numeric);
  }
}

/* decodebin3 asks for each stream whether to expose it: the video streams
 * only, so that no audio is decoded for nothing.  The first one is read;
 * the others are decoded into a fakesink (pad_added), since decodebin3 1.22
 * stalls a file of two video streams where one is left unselected (its
 * data stays in the multiqueue and the demuxer waits on it, also under a
 * plain `gst-launch-1.0 filesrc ! decodebin3 ! fakesink`). */
static gint select_stream(GstElement *decodebin, GstStreamCollection *collection, GstStream *stream,
                          gpointer data)
{
  LhioVideo *v = data;
  GstStream *first_video = NULL;
  int videos = 0;
  for (guint i = 0; i < gst_stream_collection_get_size(collection); i++) {
    GstStream *s = gst_stream_collection_get_stream(collection, i);
    if (gst_stream_get_stream_type(s) & GST_STREAM_TYPE_VIDEO) {
      if (!first_video)
        first_video = s;
      videos++;
    }
  }
  g_mutex_lock(&v->lock);
  v->video_streams = videos;
  if (first_video) {
    g_free(v->first_video);
    v->first_video = g_strdup(gst_stream_get_stream_id(first_video));
  }
  g_mutex_unlock(&v->lock);
  return gst_stream_get_stream_type(stream) & GST_STREAM_TYPE_VIDEO ? 1 : 0;
}

/* decodebin3's "about-to-finish": every input has reached its end, so no
 * later stream collection can bring a video stream.  An audio-only file is
 * told by this, not by the error or the end it usually causes: its streams
 * are deselected (select_stream), so they leave the multiqueue by pads that
 * are never exposed, and the demuxer learns so ("not-linked", an error on
 * the bus) only from a push after the multiqueue's thread tried one.  A
 * short file is often read to its end before that: the demuxer ends
 * quietly, decodebin3 drops the end on the unexposed pad, and the bus says
 * nothing more: no error, no EOS, no frame, until the timeout. */
static void input_drained(GstElement *decodebin, gpointer data)
{
  (void)decodebin;
  LhioVideo *v = data;
  g_mutex_lock(&v->lock);
  v->drained = true;
  g_mutex_unlock(&v->lock);
}

/* A decoder of pictures, by its klass: "Codec/Decoder/Video" (avdec_h264,
 * nvh264dec, ...), and "Codec/Decoder/Image" (jpegdec, pngdec), which
 * decode MJPEG and PNG video streams, frame by frame.  Which stream it
 * decodes is told by where its frames go (find_video_decoder). */
static bool is_decoder_of(GstElement *element, const char *media)
{
  GstElementFactory *factory = gst_element_get_factory(element);
  const char *klass =
      factory ? gst_element_factory_get_metadata(factory, GST_ELEMENT_METADATA_KLASS) : NULL;
  return klass && strstr(klass, "Decoder") && strstr(klass, media);
}

static bool is_picture_decoder(GstElement *element)
{
  return is_decoder_of(element, "Video") || is_decoder_of(element, "Image");
}

static GstPadProbeReturn count_decoder_input(GstPad *pad, GstPadProbeInfo *info, gpointer data)
{
  (void)pad;
  DecoderInput *input = data;
  LhioVideo *v = input->video;
  if (info->type & GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM) {
    GstEvent *event = GST_PAD_PROBE_INFO_EVENT(info);
    if (GST_EVENT_TYPE(event) == GST_EVENT_SEGMENT) {
      g_mutex_lock(&v->lock);
      gst_event_copy_segment(event, &input->segment);
      g_mutex_unlock(&v->lock);
    }
    return GST_PAD_PROBE_OK;
  }
  GstBuffer *buffer = GST_PAD_PROBE_INFO_BUFFER(info);
  g_mutex_lock(&v->lock);
  if (buffer && !lhio_gst_decoder_frame_in(buffer, &input->segment)) {
    g_mutex_unlock(&v->lock);
    return GST_PAD_PROBE_OK;
  }
  input->frames_in++;
  /* Another stream's keyframes would never be taken out. */
  bool ours = !v->video_decoder || v->video_decoder == input;
  if (ours && !input->intra_only && buffer && GST_BUFFER_PTS_IS_VALID(buffer) &&
      !GST_BUFFER_FLAG_IS_SET(buffer, GST_BUFFER_FLAG_DELTA_UNIT)) {
    gint64 *pts = g_new(gint64, 1);
    *pts = (gint64)GST_BUFFER_PTS(buffer);
    g_hash_table_add(input->keyframes, pts);
  }
  g_mutex_unlock(&v->lock);
  return GST_PAD_PROBE_OK;
}

static void free_decoder_input(gpointer data)
{
  DecoderInput *input = data;
  /* A stuck pipeline outlives the LhioVideo (lhio_video_close). */
  gst_pad_remove_probe(input->sink, input->probe);
  gst_object_unref(input->sink);
  gst_object_unref(input->decoder);
  g_hash_table_destroy(input->keyframes);
  g_free(input);
}

static bool is_made_by(GstElement *element, const char *factory_name)
{
  GstElementFactory *factory = gst_element_get_factory(element);
  return factory && strcmp(GST_OBJECT_NAME(factory), factory_name) == 0;
}

/* Each picture decoder decodebin3 plugs gets a probe on its input; the
 * demuxers of transport streams, AVI, MP4, Matroska and YUV4MPEG2 are
 * noted. */
static void element_added(GstBin *bin, GstBin *sub_bin, GstElement *element, gpointer data)
{
  LhioVideo *v = data;
  if (is_made_by(element, "tsdemux") || is_made_by(element, "avidemux") ||
      is_made_by(element, "qtdemux") || is_made_by(element, "matroskademux") ||
      is_made_by(element, "y4mdec")) {
    /* The program asked for, before tsdemux takes the first whose map
     * comes. */
    if (is_made_by(element, "tsdemux") && v->options.program > 0)
      g_object_set(element, "program-number", v->options.program, NULL);
    /* The full-range flag qtdemux drops, read before its decoder is plugged
     * (a pipe's file is none to read: lhio_mp4_states_full_range says no),
     * and the XCOLORRANGE tag y4mdec does not read, put on its frames as
     * they are linked (pad_added). */
    const bool full_range =
        (is_made_by(element, "qtdemux") && lhio_mp4_states_full_range(v->path)) ||
        (is_made_by(element, "y4mdec") && lhio_y4m_states_full_range(v->path));
    g_mutex_lock(&v->lock);
    if (is_made_by(element, "tsdemux"))
      v->transport_stream = true;
    else if (is_made_by(element, "avidemux"))
      v->avi = true;
    else if (is_made_by(element, "qtdemux"))
      v->mp4 = true;
    else if (is_made_by(element, "matroskademux"))
      v->matroska = true;
    else
      v->y4m = true;
    v->full_range_stated = full_range;
    g_mutex_unlock(&v->lock);
    return;
  }
  if (!is_picture_decoder(element))
    return;
  g_mutex_lock(&v->lock);
  const bool full_range = v->full_range_stated;
  g_mutex_unlock(&v->lock);
  lhio_gst_set_up_decoder(element, full_range);
  GstPad *pad = gst_element_get_static_pad(element, "sink");
  if (!pad)
    return;
  DecoderInput *input = g_new0(DecoderInput, 1);
  input->video = v;
  input->decoder = gst_object_ref(element);
  input->keyframes = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
  input->intra_only = is_decoder_of(element, "Image");
  gst_segment_init(&input->segment, GST_FORMAT_UNDEFINED);
  input->sink = pad;
  input->probe =
      gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_BUFFER | GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM,
                        count_decoder_input, input, NULL);
  g_mutex_lock(&v->lock);
  g_ptr_array_add(v->decoders, input);
  g_mutex_unlock(&v->lock);
}

static DecoderInput *decoder_input_of(LhioVideo *v, GstElement *element)
{
  for (guint i = 0; element && i < v->decoders->len; i++) {
    DecoderInput *input = g_ptr_array_index(v->decoders, i);
    if (input->decoder == element)
      return input;
  }
  return NULL;
}

/* The decoder whose frames leave decodebin by pad, found upstream through
 * ghost pads and the elements between (a queue, a capsfilter); NULL when
 * the stream is not decoded (raw video).  The outermost decoder is found
 * first, so a decoding bin (vp9alphadecodebin) is counted, not the
 * decoders inside it. */
static DecoderInput *find_video_decoder(LhioVideo *v, GstPad *pad)
{
  DecoderInput *found = NULL;
  GstPad *at = gst_object_ref(pad);
  for (int steps = 0; at && !found && steps < 32; steps++) {
    GstElement *element = gst_pad_get_parent_element(at);
    g_mutex_lock(&v->lock);
    found = decoder_input_of(v, element);
    g_mutex_unlock(&v->lock);
    if (element)
      gst_object_unref(element);
    GstPad *next = NULL;
    if (found) {
      /* done */
    } else if (GST_IS_GHOST_PAD(at)) {
      next = gst_ghost_pad_get_target(GST_GHOST_PAD(at));
    } else if (GST_PAD_IS_SRC(at)) {
      /* The sink pad this source pad's data come from, then its peer. */
      GstIterator *it = gst_pad_iterate_internal_links(at);
      GValue item = G_VALUE_INIT;
      if (it && gst_iterator_next(it, &item) == GST_ITERATOR_OK) {
        next = gst_pad_get_peer(g_value_get_object(&item));
        g_value_unset(&item);
      }
      if (it)
        gst_iterator_free(it);
    }
    gst_object_unref(at);
    at = next;
  }
  if (at)
    gst_object_unref(at);
  return found;
}

static bool caps_offer_cuda(GstCaps *caps)
{
  for (guint i = 0; caps && i < gst_caps_get_size(caps); i++) {
    GstCapsFeatures *features = gst_caps_get_features(caps, i);
    if (features && gst_caps_features_contains(features, "memory:CUDAMemory"))
      return true;
  }
  return false;
}

static void drain_into_fakesink(LhioVideo *v, GstPad *pad)
{
  GstElement *sink = gst_element_factory_make("fakesink", NULL);
  if (!sink)
    return;
  g_object_set(sink, "sync", FALSE, "async", FALSE, NULL);
  gst_bin_add(GST_BIN(v->pipeline), sink);
  gst_element_sync_state_with_parent(sink);
  GstPad *sink_pad = gst_element_get_static_pad(sink, "sink");
  gst_pad_link(pad, sink_pad);
  gst_object_unref(sink_pad);
}

static void pad_added(GstElement *decodebin, GstPad *pad, gpointer data)
{
  LhioVideo *v = data;
  GstCaps *caps = gst_pad_query_caps(pad, NULL);
  const GstStructure *s = caps && gst_caps_get_size(caps) ? gst_caps_get_structure(caps, 0) : NULL;
  bool is_video = s && g_str_has_prefix(gst_structure_get_name(s), "video/");
  bool cuda = v->options.allow_cuda && caps_offer_cuda(caps);
  if (caps)
    gst_caps_unref(caps);

  /* decodebin3 tells the pad's stream: a video stream after the first
   * is decoded for nothing (select_stream), into a fakesink. */
  char *stream_id = gst_pad_get_stream_id(pad);
  g_mutex_lock(&v->lock);
  bool other_video = is_video && stream_id && v->first_video && strcmp(stream_id, v->first_video);
  bool take = is_video && !other_video && !v->linked;
  if (take)
    v->linked = true;
  g_mutex_unlock(&v->lock);
  g_free(stream_id);
  if (other_video)
    drain_into_fakesink(v, pad);
  if (!take)
    return;
  DecoderInput *decoder = find_video_decoder(v, pad);
  g_mutex_lock(&v->lock);
  v->video_decoder = decoder;
  g_mutex_unlock(&v->lock);

  /* CUDA memory goes straight to the appsink: videoconvert would download it. */
  GstElement *target = v->sink;
  if (!cuda) {
    GstElement *convert = gst_element_factory_make("videoconvert", NULL);
    if (convert) {
      /* Its default Bayer dither put half the samples of 10-bit R'G'B'
       * (GBR_10LE into RGB10A2_LE) one code off: measured frames are
       * converted exactly or not at all. */
      gst_util_set_object_arg(G_OBJECT(convert), "dither", "none");
      gst_bin_add(GST_BIN(v->pipeline), convert);
      gst_element_link(convert, v->sink);
      gst_element_sync_state_with_parent(convert);
      target = convert;
    }
  }
  GstPad *sink_pad = gst_element_get_static_pad(target, "sink");
  /* y4mdec, the decoder of raw frames, does not read their range. */
  g_mutex_lock(&v->lock);
  const bool raw_full_range = v->y4m && v->full_range_stated;
  g_mutex_unlock(&v->lock);
  if (raw_full_range)
    lhio_gst_make_range_full(sink_pad);
  if (gst_pad_link(pad, sink_pad) != GST_PAD_LINK_OK)
    GST_ELEMENT_ERROR(decodebin, CORE, NEGOTIATION, ("cannot link the decoded video"), (NULL));
  gst_object_unref(sink_pad);
}

static GstCaps *sink_caps(bool cuda)
{
  GString *text = g_string_new(NULL);
#ifdef HAVE_GST_CUDA
  if (cuda)
    g_string_append(text, "video/x-raw(memory:CUDAMemory), format=(string)" CUDA_FORMATS "; ");
#else
  (void)cuda;
#endif
  g_string_append(text, "video/x-raw, format=(string)" SYSTEM_FORMATS);
  GstCaps *caps = gst_caps_from_string(text->str);
  g_string_free(text, TRUE);
  return caps;
}

/* A missing plugin, from its message: kept to be told when it is for the
 * video or the container (or unknown), only noted when it is a decoder for
 * a stream of another kind, which the video does not need: an audio
 * decoder's name in "no GStreamer decoder is installed for its video"
 * would send the user after the wrong plugin. */
static void note_missing_plugin(LhioVideo *v, GstMessage *m)
{
  const GstStructure *s = gst_message_get_structure(m);
  GstCaps *caps = NULL;
  GstPbUtilsCapsDescriptionFlags flags = 0;
  /* A codec GStreamer does not know is described as "video/x-unknown
   * decoder": its container's name for it says more. */
  char *reason = NULL;
  if (g_strcmp0(gst_structure_get_string(s, "type"), "decoder") == 0 &&
      gst_structure_get(s, "detail", GST_TYPE_CAPS, &caps, NULL) && caps) {
    flags = gst_pb_utils_get_caps_description_flags(caps);
    reason = lhio_gst_unknown_codec(caps);
    gst_caps_unref(caps);
  }
  const GstPbUtilsCapsDescriptionFlags video = GST_PBUTILS_CAPS_DESCRIPTION_FLAG_CONTAINER |
                                               GST_PBUTILS_CAPS_DESCRIPTION_FLAG_VIDEO |
                                               GST_PBUTILS_CAPS_DESCRIPTION_FLAG_IMAGE;
  bool other_stream = flags != 0 && !(flags & video);
  if (!reason) {
    char *description = gst_missing_plugin_message_get_description(m);
    reason = g_strdup_printf("no GStreamer decoder is installed for its video (%s)", description);
    g_free(description);
  }
  g_mutex_lock(&v->lock);
  if (other_stream)
    v->missing_other = true;
  else if (!v->missing)
    v->missing = g_steal_pointer(&reason);
  g_mutex_unlock(&v->lock);
  g_free(reason);
}

/* Reads what the bus holds: errors, warnings, missing decoders, the end. */
static bool is_demuxer(GstObject *source)
{
  if (!GST_IS_ELEMENT(source))
    return false;
  GstElementFactory *factory = gst_element_get_factory(GST_ELEMENT(source));
  const char *klass =
      factory ? gst_element_factory_get_metadata(factory, GST_ELEMENT_METADATA_KLASS) : NULL;
  return klass && strstr(klass, "Demuxer");
}

static void drain_bus(LhioVideo *v)
{
  GstMessage *m;
  while ((m = gst_bus_pop(v->bus))) {
    switch (GST_MESSAGE_TYPE(m)) {
    case GST_MESSAGE_ERROR: {
      GError *error = NULL;
      char *debug = NULL;
      gst_message_parse_error(m, &error, &debug);
      g_mutex_lock(&v->lock);
      char *missing = g_strdup(v->missing);
      char *unnegotiated = NULL;
      for (guint i = 0; !unnegotiated && i < v->decoders->len; i++)
        unnegotiated = lhio_gst_unnegotiated_decoder(
            ((DecoderInput *)g_ptr_array_index(v->decoders, i))->decoder, debug);
      g_mutex_unlock(&v->lock);
      if (missing)
        set_error(v, "%s", missing);
      else if (unnegotiated)
        set_error(v, "%s", unnegotiated);
      else if (error && error->domain == GST_STREAM_ERROR &&
               (error->code == GST_STREAM_ERROR_DEMUX || error->code == GST_STREAM_ERROR_DECODE))
        set_error(v, "damaged or truncated file (%s)", error->message);
      else if (error && error->domain == GST_STREAM_ERROR &&
               (error->code == GST_STREAM_ERROR_TYPE_NOT_FOUND ||
                error->code == GST_STREAM_ERROR_WRONG_TYPE))
        set_error(v, "not a video file that GStreamer can read (%s)", error->message);
      else
        set_error(v, "%s", error ? error->message : "unknown GStreamer error");
      g_free(missing);
      g_free(unnegotiated);
      g_free(debug);
      g_clear_error(&error);
      break;
    }
    case GST_MESSAGE_WARNING:
      v->warned = true;
      if (!v->demux_warning && is_demuxer(GST_MESSAGE_SRC(m))) {
        GError *warning = NULL;
        gst_message_parse_warning(m, &warning, NULL);
        v->demux_warning = g_strdup(warning ? warning->message : "a demuxer's warning");
        g_clear_error(&warning);
      }
      break;
    case GST_MESSAGE_EOS:
      v->ended = true;
      break;
    case GST_MESSAGE_ELEMENT:
      if (gst_is_missing_plugin_message(m))
        note_missing_plugin(v, m);
      break;
    default:
      break;
    }
    gst_message_unref(m);
  }
}

static void release_frame(LhioVideo *v)
{
  if (v->host_mapped)
    gst_video_frame_unmap(&v->host_frame);
  v->host_mapped = false;
  if (v->mapped)
    gst_video_frame_unmap(&v->vframe);
  v->mapped = false;
  if (v->sample)
    gst_sample_unref(v->sample);
  v->sample = NULL;
  v->cuda = false;
}

static void close_pipe_fd(gpointer fd_plus_one)
{
  close(GPOINTER_TO_INT(fd_plus_one) - 1);
}

/* A blocking open() of a named FIFO on a thread of its own: it returns once
 * a program has the FIFO open for writing, and reads nothing, so the
 * demuxer gets every byte.  Freed by whichever of the two lets go last. */
typedef struct {
  char *path;
  gint refs;
  GMutex lock;
  GCond opened;
  bool done;
  bool abandoned; /* the opener gave up and left: the thread closes its fd */
  int fd;
  int error;
} FifoOpen;

static void fifo_open_unref(FifoOpen *o)
{
  if (!g_atomic_int_dec_and_test(&o->refs))
    return;
  g_mutex_clear(&o->lock);
  g_cond_clear(&o->opened);
  g_free(o->path);
  g_free(o);
}

static gpointer open_fifo_blocking(gpointer data)
{
  FifoOpen *o = data;
  int fd = open(o->path, O_RDONLY | O_CLOEXEC);
  int error = errno;
  g_mutex_lock(&o->lock);
  if (o->abandoned && fd >= 0)
    close(fd);
  o->fd = fd;
  o->error = error;
  o->done = true;
  g_cond_signal(&o->opened);
  g_mutex_unlock(&o->lock);
  fifo_open_unref(o);
  return NULL;
}

/* Whether a writer has had the FIFO that keeper reads open: bytes wait in
 * it, or its writers have all gone (POLLHUP, which Linux reports only
 * after one came). */
static bool fifo_writer_has_been(int keeper)
{
  struct pollfd p = {.fd = keeper, .events = POLLIN};
  return poll(&p, 1, 0) > 0 && (p.revents & (POLLIN | POLLHUP));
}

/* Waits, as an image's read does (lhio_read), until a program opens the
 * named FIFO path for writing, or the FIFO wait's time passes, or its stop
 * is set; *fd is then the FIFO open to read, nothing read from it.  keeper
 * holds the FIFO open to read without blocking meanwhile: a reader all
 * along, so that a writer's open does not block and, when the wait gives
 * up, an open to write ends the thread's open.  A writer quick enough to
 * write all it had and close before the thread's open is told by keeper,
 * which holds its bytes: *fd is keeper then. */
static int wait_for_fifo_writer(const char *path, const LhioFifoWait *wait, int keeper, int *fd)
{
  FifoOpen *o = g_new0(FifoOpen, 1);
  o->path = g_strdup(path);
  o->refs = 2;
  o->fd = -1;
  g_mutex_init(&o->lock);
  g_cond_init(&o->opened);
  GThread *thread = g_thread_try_new("lumahist-fifo-open", open_fifo_blocking, o, NULL);
  if (!thread) {
    o->refs = 1;
    fifo_open_unref(o);
    return lhio_fail(LH_ERROR_NO_MEMORY, path, "no thread to wait for the FIFO's writer");
  }
  bool timed_out = false, stopped = false, came_and_went = false;
  gint64 start = g_get_monotonic_time();
  gint64 limit = (gint64)(wait->seconds * G_USEC_PER_SEC);
  g_mutex_lock(&o->lock);
  while (!o->done && !timed_out && !stopped && !came_and_went) {
    gint64 now = g_get_monotonic_time();
    if (limit > 0 && now - start >= limit)
      timed_out = true;
    else if (wait->stop && *wait->stop)
      stopped = true;
    else if (fifo_writer_has_been(keeper))
      came_and_went = true;
    else
      g_cond_wait_until(&o->opened, &o->lock,
                        now +
                            MIN(G_USEC_PER_SEC / 10, limit > 0 ? start + limit - now : G_MAXINT64));
  }
  g_mutex_unlock(&o->lock);
  if (timed_out || stopped || came_and_went) {
    int waker = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (waker >= 0) {
      g_thread_join(thread);
      close(waker);
      if (o->fd >= 0)
        close(o->fd);
    } else {
      /* Not to be opened for writing (its mode): the thread stays until a
       * writer comes, and closes what it opened then. */
      g_mutex_lock(&o->lock);
      o->abandoned = true;
      if (o->done && o->fd >= 0)
        close(o->fd);
      g_mutex_unlock(&o->lock);
      g_thread_unref(thread);
    }
    fifo_open_unref(o);
    if (came_and_went) {
      *fd = keeper;
      return LH_OK;
    }
    if (stopped)
      return lhio_fail(LH_ERROR_IO, path, "a FIFO no writer opened before the run was stopped");
    return lhio_fail(LH_ERROR_IO, path, "a FIFO no writer opened in %g s", wait->seconds);
  }
  g_thread_join(thread);
  *fd = o->fd;
  int error = o->error;
  fifo_open_unref(o);
  return *fd >= 0 ? LH_OK : lhio_fail_os(error, path);
}

/* Opens the pipe or FIFO path to read for fdsrc, which reads it from its
 * first byte: a named FIFO waits for its writer (wait_for_fifo_writer; the
 * options' FIFO wait, else lhio_set_fifo_wait's); an anonymous pipe (a
 * shell's |, /dev/stdin) had its writer from its start. */
static int open_pipe(const char *path, const LhioFifoWait *wait, int *fd)
{
  *fd = -1;
  int keeper = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (keeper < 0)
    return lhio_fail_os(errno, path);
  if (lhio_is_named_fifo(keeper)) {
    int status = wait_for_fifo_writer(path, lhio_fifo_wait_or_process(wait), keeper, fd);
    if (*fd != keeper) {
      close(keeper);
      return status;
    }
  }
  int flags = fcntl(keeper, F_GETFL);
  if (flags < 0 || fcntl(keeper, F_SETFL, flags & ~O_NONBLOCK) != 0) {
    int error = errno;
    close(keeper);
    *fd = -1;
    return lhio_fail_os(error, path);
  }
  *fd = keeper;
  return LH_OK;
}

int lhio_video_open(const char *path, const LhioVideoOptions *options, LhioVideo **out)
{
  *out = NULL;
  const char *why = lhio_gstreamer_started();
  if (why)
    return lhio_fail(LH_ERROR_UNSUPPORTED, path, "GStreamer cannot start: %s", why);
  LhioVideo *v = g_new0(LhioVideo, 1);
  g_mutex_init(&v->lock);
  v->path = g_strdup(path);
  if (options)
    v->options = *options;
  if (!(v->options.timeout_s > 0))
    v->options.timeout_s = DEFAULT_TIMEOUT_S;
  v->video_streams = -1;
  v->decoders = g_ptr_array_new_with_free_func(free_decoder_input);
#ifdef HAVE_GST_CUDA
  if (v->options.allow_cuda && !gst_cuda_load_library())
    v->options.allow_cuda = false;
#else
  v->options.allow_cuda = false;
#endif

  struct stat info;
  bool got_info = stat(path, &info) == 0;
  bool regular = got_info && S_ISREG(info.st_mode);
  /* y4mdec's own failure on such a file reads as damage; the header says
   * what is wrong before the pipeline starts (a pipe's is read once, by
   * y4mdec). */
  char y4m_why[160];
  const int y4m_status = regular ? lhio_y4m_unreadable(path, y4m_why, sizeof y4m_why) : 0;
  if (y4m_status < 0) {
    lhio_video_close(v);
    return lhio_fail(y4m_status, path, "%s", y4m_why);
  }
  char container_why[200];
  const int container_status =
      regular ? lhio_video_unreadable_container(path, container_why, sizeof container_why) : 0;
  if (container_status < 0) {
    lhio_video_close(v);
    return lhio_fail(container_status, path, "%s", container_why);
  }
  const int program_status =
      regular && v->options.program > 0 ? lhio_ts_program_check(path, v->options.program) : LH_OK;
  if (program_status < 0) {
    lhio_video_close(v);
    return program_status;
  }
  /* A pipe or FIFO is opened here and given to fdsrc.  filesrc's open()
   * of a FIFO blocks until a writer comes, inside the state change, where
   * neither the FIFO wait's limit nor a stop could end it.  And decodebin's
   * type finding would start filesrc twice (to pull: it opens the FIFO,
   * finds it cannot, closes it; then to push: it opens it again), leaving a
   * writer that came between the two opens with no reader (SIGPIPE). */
  int pipe_fd = -1;
  if (got_info && S_ISFIFO(info.st_mode)) {
    int status = open_pipe(path, v->options.fifo_wait, &pipe_fd);
    if (status < 0) {
      lhio_video_close(v);
      return status;
    }
  }
  v->pipeline = gst_pipeline_new(NULL);
  if (pipe_fd >= 0) /* closed with the pipeline, once its source has stopped */
    g_object_set_data_full(G_OBJECT(v->pipeline), "lumahist-pipe-fd", GINT_TO_POINTER(pipe_fd + 1),
                           close_pipe_fd);
  GstElement *source = gst_element_factory_make(pipe_fd >= 0 ? "fdsrc" : "filesrc", NULL);
  /* decodebin3 of GStreamer 1.22 stops at once on a source that cannot be
   * read ahead (a pipe: "not-linked" from its type finding); decodebin,
   * which exposes every stream, reads those. */
  v->decodebin = gst_element_factory_make(regular ? "decodebin3" : "decodebin", NULL);
  v->sink = gst_element_factory_make("appsink", NULL);
  if (!source || !v->decodebin || !v->sink) {
    if (source)
      gst_object_unref(source);
    if (v->decodebin)
      gst_object_unref(v->decodebin);
    if (v->sink)
      gst_object_unref(v->sink);
    v->decodebin = v->sink = NULL;
    lhio_video_close(v);
    return lhio_fail(LH_ERROR_UNSUPPORTED, path,
                     "GStreamer lacks %s, decodebin3 or appsink "
                     "(gstreamer1.0-plugins-base)",
                     pipe_fd >= 0 ? "fdsrc" : "filesrc");
  }
  if (pipe_fd >= 0)
    g_object_set(source, "fd", pipe_fd, NULL);
  else
    g_object_set(source, "location", path, NULL);
  /* Motion JPEG comes to decodebin as one image/jpeg stream that jpegdec
   * cuts in frames itself: its input probe counted the file's read blocks
   * as frames, so a whole file looked damaged.  jpegparse cuts it first. */
  GstElement *frame_parser = NULL;
  if (lhio_is_motion_jpeg(path) && !(frame_parser = gst_element_factory_make("jpegparse", NULL))) {
    gst_object_unref(source);
    gst_object_unref(v->decodebin);
    gst_object_unref(v->sink);
    v->decodebin = v->sink = NULL;
    lhio_video_close(v);
    return lhio_fail(LH_ERROR_UNSUPPORTED, path,
                     "Motion JPEG: GStreamer lacks jpegparse (gstreamer1.0-plugins-bad)");
  }
  v->motion_jpeg = regular && frame_parser;
  GstCaps *caps = sink_caps(v->options.allow_cuda);
  /* A few frames ahead keep the decoder busy while the caller analyses. */
  g_object_set(v->sink, "caps", caps, "sync", FALSE, "max-buffers", 4, "drop", FALSE, NULL);
  gst_caps_unref(caps);
  gst_bin_add_many(GST_BIN(v->pipeline), source, v->decodebin, v->sink, NULL);
  /* What is not a regular file goes through a queue: decodebin's type
   * finding then takes it pushed, and the source starts once. */
  GstElement *pipe_queue = regular ? NULL : gst_element_factory_make("queue", NULL);
  GstElement *last = source;
  if (pipe_queue) {
    gst_bin_add(GST_BIN(v->pipeline), pipe_queue);
    gst_element_link(last, pipe_queue);
    last = pipe_queue;
  }
  if (frame_parser) {
    gst_bin_add(GST_BIN(v->pipeline), frame_parser);
    gst_element_link(last, frame_parser);
    last = frame_parser;
  }
  gst_element_link(last, v->decodebin);
  if (regular) {
    g_signal_connect(v->decodebin, "select-stream", G_CALLBACK(select_stream), v);
    g_signal_connect(v->decodebin, "about-to-finish", G_CALLBACK(input_drained), v);
  }
  g_signal_connect(v->decodebin, "pad-added", G_CALLBACK(pad_added), v);
  g_signal_connect(v->decodebin, "deep-element-added", G_CALLBACK(element_added), v);
  v->bus = gst_element_get_bus(v->pipeline);

  if (gst_element_set_state(v->pipeline, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE) {
    drain_bus(v);
    int status = lhio_fail(LH_ERROR_IO, path, "%s", v->error ? v->error : "cannot be opened");
    lhio_video_close(v);
    return status;
  }
  *out = v;
  return LH_OK;
}

/* A decoded frame's luma as the library reads it. */
static int describe_frame(LhioVideo *v, LhioVideoFrame *f)
{
  const GstVideoFormatInfo *finfo = v->info.finfo;
  GstVideoFormat format = GST_VIDEO_INFO_FORMAT(&v->info);
  LhFrame *frame = &f->frame;
  memset(frame, 0, sizeof *frame);
  frame->memory = v->cuda ? LH_MEMORY_CUDA : LH_MEMORY_HOST;
  frame->width = GST_VIDEO_INFO_WIDTH(&v->info);
  frame->height = GST_VIDEO_INFO_HEIGHT(&v->info);
  frame->planes[0] = GST_VIDEO_FRAME_PLANE_DATA(&v->vframe, 0);
  frame->strides[0] = (size_t)GST_VIDEO_FRAME_PLANE_STRIDE(&v->vframe, 0);
  int depth = GST_VIDEO_FORMAT_INFO_DEPTH(finfo, 0);
  static const struct {
    GstVideoFormat gst;
    LhFormat lh;
  } packed[] = {
      {GST_VIDEO_FORMAT_RGB, LH_FORMAT_RGB},          {GST_VIDEO_FORMAT_BGR, LH_FORMAT_BGR},
      {GST_VIDEO_FORMAT_RGBA, LH_FORMAT_RGBA},        {GST_VIDEO_FORMAT_BGRA, LH_FORMAT_BGRA},
      {GST_VIDEO_FORMAT_RGBx, LH_FORMAT_RGBX},        {GST_VIDEO_FORMAT_BGRx, LH_FORMAT_BGRX},
      {GST_VIDEO_FORMAT_RGBA64_LE, LH_FORMAT_RGBA16},
  };
  static const struct {
    GstVideoFormat gst;
    LhFormat lh;
  } packed10[] = {
      {GST_VIDEO_FORMAT_RGB10A2_LE, LH_FORMAT_RGB10A2_LE},
      {GST_VIDEO_FORMAT_BGR10A2_LE, LH_FORMAT_BGR10A2_LE},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(packed); i++)
    if (packed[i].gst == format) {
      frame->format = packed[i].lh;
      return LH_OK;
    }
  /* Planar 10-bit R'G'B' (avdec_ffv1's GBR_10LE) comes packed so, where
   * videoconvert would otherwise widen it to RGBA64_LE: 16-bit luma. */
  for (size_t i = 0; i < G_N_ELEMENTS(packed10); i++)
    if (packed10[i].gst == format) {
      frame->format = packed10[i].lh;
      return LH_OK;
    }
  if (!GST_VIDEO_FORMAT_INFO_IS_YUV(finfo) && !GST_VIDEO_FORMAT_INFO_IS_GRAY(finfo))
    return lhio_fail(LH_ERROR_UNSUPPORTED, v->path, "frames in %s are not read",
                     gst_video_format_to_string(format));
  if (format == GST_VIDEO_FORMAT_P010_10LE) {
    frame->format = LH_FORMAT_P010;
    frame->bit_depth = 10;
    return LH_OK;
  }
  if (GST_VIDEO_FORMAT_INFO_PSTRIDE(finfo, 0) == 1 && depth == 8) {
    frame->format = LH_FORMAT_GRAY8;
    return LH_OK;
  }
  if (GST_VIDEO_FORMAT_INFO_PSTRIDE(finfo, 0) == 2 && GST_VIDEO_FORMAT_INFO_SHIFT(finfo, 0) == 0 &&
      GST_VIDEO_FORMAT_INFO_IS_LE(finfo)) {
    frame->format = LH_FORMAT_GRAY16;
    frame->bit_depth = depth;
    return LH_OK;
  }
  return lhio_fail(LH_ERROR_UNSUPPORTED, v->path, "frames in %s are not read",
                   gst_video_format_to_string(format));
}

static void note_decoder(LhioVideo *v)
{
  g_mutex_lock(&v->lock);
  bool known = v->decoder != NULL;
  g_mutex_unlock(&v->lock);
  if (known)
    return;
  g_mutex_lock(&v->lock);
  GstElementFactory *factory =
      v->video_decoder ? gst_element_get_factory(v->video_decoder->decoder) : NULL;
  v->decoder = g_strdup(factory ? GST_OBJECT_NAME(factory) : "");
  g_mutex_unlock(&v->lock);
}

static int fail_now(LhioVideo *v, int status)
{
  return lhio_fail(status, v->path, "%s", v->error);
}

/* An AVI file is a RIFF chunk ("AVI "), followed by more ("AVIX") in an
 * OpenDML file of over 1 GiB; muxers write their sizes when they finish. */
#define AVI_HEAD_BYTES (1 << 20)
#define AVI_MAX_RIFFS 4096

static bool read_at(FILE *file, long offset, void *buffer, size_t size)
{
  return fseek(file, offset, SEEK_SET) == 0 && fread(buffer, 1, size, file) == size;
}

/* The end of the first video stream as the header of an AVI file states it
 * (its strh's dwLength frames of dwScale/dwRate seconds, the frame_period),
 * in seconds, when the file is shorter than its RIFF chunks say; else NAN.  avidemux cannot
 * be asked: when the index at the end is cut off it scans the chunks there
 * are and takes their duration for the stream's, so that the frames before
 * a cut come out as if the file were whole.  Both are asked for, a cut and
 * the stated length, so that a writer's wrong sizes or counts alone do not
 * make a whole file cut. */
static double avi_cut_before(const char *path, double *frame_period)
{
  off_t file_size;
  int fd = lhio_open_regular(path, &file_size);
  FILE *file = fd >= 0 ? fdopen(fd, "rb") : NULL;
  if (!file) {
    if (fd >= 0)
      close(fd);
    return NAN; /* a pipe is read once, by the demuxer */
  }
  double stated_end = NAN;
  bool cut = false;
  uint8_t header[12];
  if (!read_at(file, 0, header, sizeof header) || memcmp(header, "RIFF", 4) != 0 ||
      memcmp(header + 8, "AVI ", 4) != 0) {
    fclose(file);
    return NAN;
  }
  uint64_t offset = 0;
  for (int i = 0; i < AVI_MAX_RIFFS && offset + sizeof header <= (uint64_t)file_size; i++) {
    if (!read_at(file, (long)offset, header, sizeof header) || memcmp(header, "RIFF", 4) != 0)
      break; /* bytes after the last one: junk, not a cut */
    uint32_t size = GST_READ_UINT32_LE(header + 4);
    /* A writer that never came back to its sizes leaves them 0 (or all
     * ones): nothing is stated. */
    if (size == 0 || size == UINT32_MAX)
      break;
    uint64_t end = offset + 8 + size;
    if (end > (uint64_t)file_size) {
      cut = true;
      break;
    }
    offset = end + (size & 1);
  }
  if (!cut) {
    fclose(file);
    return NAN;
  }
  /* The header list (hdrl) holds a stream list (strl) for each stream,
   * its strh first. */
  size_t head_size = (size_t)MIN((uint64_t)file_size, AVI_HEAD_BYTES);
  uint8_t *head = g_malloc(head_size);
  if (read_at(file, 0, head, head_size)) {
    size_t at = 12;
    size_t hdrl_end = 0;
    while (at + 12 <= head_size) {
      uint32_t size = GST_READ_UINT32_LE(head + at + 4);
      bool list = memcmp(head + at, "LIST", 4) == 0;
      if (list && memcmp(head + at + 8, "hdrl", 4) == 0) {
        hdrl_end = (size_t)MIN((uint64_t)at + 8 + size, head_size);
        at += 12;
        break;
      }
      if (list && memcmp(head + at + 8, "movi", 4) == 0)
        break;
      at += 8 + (size_t)size + (size & 1);
    }
    while (at + 8 <= hdrl_end && isnan(stated_end)) {
      uint32_t size = GST_READ_UINT32_LE(head + at + 4);
      if (memcmp(head + at, "LIST", 4) == 0 && memcmp(head + at + 8, "strl", 4) == 0) {
        /* The list's chunks are entered: its strh is next. */
        at += 12;
        continue;
      }
      if (memcmp(head + at, "strh", 4) == 0 && size >= 36 && at + 8 + 36 <= hdrl_end &&
          memcmp(head + at + 8, "vids", 4) == 0) {
        const uint8_t *strh = head + at + 8;
        uint32_t scale = GST_READ_UINT32_LE(strh + 20), rate = GST_READ_UINT32_LE(strh + 24);
        uint32_t length = GST_READ_UINT32_LE(strh + 32);
        if (scale > 0 && rate > 0 && length > 0) {
          *frame_period = (double)scale / rate;
          stated_end = length * *frame_period;
        }
        break;
      }
      at += 8 + (size_t)size + (size & 1);
    }
  }
  g_free(head);
  fclose(file);
  return stated_end;
}

/* At the end of the stream: whether it was whole.  Decoders hide damage
 * (they conceal it and go on), and demuxers end a cut file quietly, so the
 * frames are counted: those that entered the decoder against those that
 * came out, and the last frame's end against the stream's duration (an
 * AVI's as its header states it, when the file is cut: avi_cut_before).  A
 * transport stream states no duration: its last bytes are read instead
 * (ts-end.c), first, as a cut is also what leaves its last frame
 * undecodable; a YUV4MPEG2 file states none either, and its frames are
 * walked (y4m-end.c). */
static int check_complete(LhioVideo *v)
{
  g_mutex_lock(&v->lock);
  uint64_t frames_in = v->video_decoder ? v->video_decoder->frames_in : 0;
  bool counted = v->video_decoder != NULL;
  bool transport_stream = v->transport_stream;
  bool avi = v->avi;
  bool mp4 = v->mp4;
  bool matroska = v->matroska;
  bool y4m = v->y4m;
  g_mutex_unlock(&v->lock);
  char why[192];
  if (transport_stream && lhio_ts_file_cut(v->path, why, sizeof why)) {
    set_error(v, "the file is truncated: %s", why);
    return fail_now(v, LH_ERROR_CORRUPT);
  }
  /* Said last: where the frames' times show the cut, they say how much of
   * the video is left. */
  char packet_cut[192];
  const LhioFileEnd packet_end = lhio_packet_file_end(v->path, packet_cut, sizeof packet_cut);
  const bool cut_in_packet = packet_end == LHIO_FILE_END_CUT ||
                             (mp4 && lhio_mp4_file_cut(v->path, packet_cut, sizeof packet_cut));
  if (v->motion_jpeg && lhio_motion_jpeg_cut(v->path, why, sizeof why)) {
    set_error(v, "%s", why);
    return fail_now(v, LH_ERROR_CORRUPT);
  }
  const int y4m_status = y4m ? lhio_y4m_end(v->path, v->pulled, why, sizeof why) : 0;
  if (y4m_status < 0) {
    set_error(v, "%s", why);
    return fail_now(v, y4m_status);
  }
  if (counted && frames_in > v->pulled && !cut_in_packet) {
    set_error(v,
              "the stream is damaged: %" G_GUINT64_FORMAT " of its %" G_GUINT64_FORMAT
              " frames could not be decoded",
              frames_in - v->pulled, frames_in);
    return fail_now(v, LH_ERROR_CORRUPT);
  }
  gint64 duration = -1;
  GstPad *pad = gst_element_get_static_pad(v->sink, "sink");
  bool known = pad && gst_pad_peer_query_duration(pad, GST_FORMAT_TIME, &duration) && duration > 0;
  if (pad)
    gst_object_unref(pad);
  /* An MP4's or a Matroska file's duration is its longest track's; the
   * frames are held against the video track's own, for a clip whose audio
   * runs on after its video.  A Matroska file that states none (one
   * matroskamux wrote) is held against its duration only when its segment
   * is cut: with other tracks beside the video, the duration says nothing
   * of the video's end (and a streamed file's is its last cluster's). */
  double expected = known ? (double)duration / GST_SECOND : NAN;
  double video_track = mp4 ? lhio_mp4_video_duration(v->path) : NAN;
  LhioMkvVideoEnd mkv;
  bool mkv_untagged_cut = false;
  if (matroska && lhio_mkv_video_end(v->path, &mkv)) {
    video_track = mkv.video_end;
    if (!(video_track > 0) && mkv.other_tracks && !mkv.cut)
      expected = NAN;
    mkv_untagged_cut = !(video_track > 0) && mkv.other_tracks && mkv.cut;
  }
  if (video_track > 0 && video_track < expected)
    expected = video_track;
  /* Its packets tell whether it ends whole and where it is cut: the
   * duration, the longest stream's, would take audio that runs on after
   * the video for a cut, and a cut in that audio for the video's. */
  if (packet_end != LHIO_FILE_END_UNKNOWN)
    expected = NAN;
  if (lhio_video_ends_short(v->path, avi, expected, "frames", v->end_time, v->frame_time, why,
                            sizeof why)) {
    /* Cut in a cluster that starts after the last frame's end: what is
     * lost is the other tracks' (the audio running on), and "its frames end
     * at 4.000 s of 6.502 s" would say the video's were.  Still cut: the
     * file states no end of its video to tell that none of it followed. */
    if (mkv_untagged_cut && mkv.cut_at > v->end_time + MAX(0.5, 3 * v->frame_time)) {
      /* In the C locale, as lhio_video_ends_short writes its times. */
      char cut_text[G_ASCII_DTOSTR_BUF_SIZE], expected_text[G_ASCII_DTOSTR_BUF_SIZE],
          end_text[G_ASCII_DTOSTR_BUF_SIZE];
      g_ascii_formatd(cut_text, sizeof cut_text, "%.3f", mkv.cut_at);
      g_ascii_formatd(expected_text, sizeof expected_text, "%.3f", expected);
      g_ascii_formatd(end_text, sizeof end_text, "%.3f", v->end_time);
      set_error(v,
                "the file is truncated: it is cut at %s s of %s s, in its other tracks, after "
                "its video's frames end at %s s",
                cut_text, expected_text, end_text);
    } else
      set_error(v, "%s", why);
    return fail_now(v, LH_ERROR_CORRUPT);
  }
  if (cut_in_packet) {
    set_error(v, "the file is truncated: %s", packet_cut);
    return fail_now(v, LH_ERROR_CORRUPT);
  }
  return 0;
}

bool lhio_video_ends_short(const char *path, bool avi, double duration, const char *what,
                           double end_time, double frame_time, char *why, size_t why_size)
{
  double expected = duration > 0 ? duration : NAN;
  double slack = MAX(0.5, 3 * frame_time);
  double frame_period = 0;
  double avi_end = avi ? avi_cut_before(path, &frame_period) : NAN;
  if (isfinite(avi_end) && !(expected >= avi_end)) {
    /* The header counts the frames: those there are end where it says
     * (a cut in the index after them leaves them all), one less where the
     * last chunk was an empty one (a dropped frame). */
    expected = avi_end;
    slack = 1.5 * frame_period;
  }
  if (!(isfinite(expected) && end_time > 0 && end_time < expected - slack))
    return false;
  /* In the C locale, as set_error writes: "2.000 s" in an English line. */
  char end_text[G_ASCII_DTOSTR_BUF_SIZE], expected_text[G_ASCII_DTOSTR_BUF_SIZE];
  g_ascii_formatd(end_text, sizeof end_text, "%.3f", end_time);
  g_ascii_formatd(expected_text, sizeof expected_text, "%.3f", expected);
  snprintf(why, why_size, "the file is truncated: its %s end at %s s of %s s", what, end_text,
           expected_text);
  return true;
}

/* When the file's streams tell why no frame came, that becomes the error
 * (replacing what the pipeline said, "not-linked" and the like): no
 * installed decoder for its video, or no video stream.  The missing decoder
 * is asked first: parsebin leaves a stream that no installed decoder takes
 * out of its stream collection, so a video with audio beside it leaves a
 * collection of audio alone, as an audio-only file does.  A missing decoder
 * for audio alone, with no collection at all, is an audio-only file too. */
static bool take_no_video_reason(LhioVideo *v)
{
  char *reason = NULL;
  g_mutex_lock(&v->lock);
  if (v->missing)
    reason = g_strdup(v->missing);
  else if (!v->linked && (v->video_streams == 0 || (v->video_streams < 0 && v->missing_other)))
    reason = g_strdup("no video stream");
  g_mutex_unlock(&v->lock);
  if (!reason)
    return false;
  g_free(v->error);
  v->error = reason;
  return true;
}

int lhio_video_next(LhioVideo *v, LhioVideoFrame *f)
{
  release_frame(v);
  if (v->error)
    return fail_now(v, LH_ERROR_CORRUPT);
  gint64 waited = 0;
  const gint64 limit = (gint64)(v->options.timeout_s * GST_SECOND);
  for (;;) {
    if (v->options.stop && *v->options.stop) {
      /* After a slice without a frame, a thread of the pipeline may be
       * blocked (a read from a pipe): lhio_video_close() does not wait. */
      if (waited > 0)
        v->stuck = true;
      return LHIO_VIDEO_STOPPED;
    }
    GstSample *sample = gst_app_sink_try_pull_sample(GST_APP_SINK(v->sink), PULL_SLICE_NS);
    drain_bus(v);
    if (v->error) {
      if (sample)
        gst_sample_unref(sample);
      take_no_video_reason(v);
      return fail_now(v, LH_ERROR_CORRUPT);
    }
    if (!sample) {
      if (gst_app_sink_is_eos(GST_APP_SINK(v->sink)) || v->ended) {
        g_mutex_lock(&v->lock);
        bool linked = v->linked;
        g_mutex_unlock(&v->lock);
        /* Frames that all came before --start are no failure here: the
         * caller, who has no frame, says so (and a cut file is still found
         * cut, below). */
        if (!linked || v->pulled == 0) {
          if (!take_no_video_reason(v))
            set_error(v, linked ? "no frame could be decoded" : "no video stream");
          return fail_now(v, LH_ERROR_CORRUPT);
        }
        return check_complete(v);
      }
      /* Read to its end with no video stream in it: nothing will come
       * (input_drained says why the bus may stay silent).  The bus is read
       * again first: a missing decoder's message, posted before the input
       * drained, may have come since the last look. */
      g_mutex_lock(&v->lock);
      bool drained_without_video = v->drained && v->video_streams <= 0 && !v->linked;
      g_mutex_unlock(&v->lock);
      if (drained_without_video) {
        drain_bus(v);
        if (take_no_video_reason(v))
          return fail_now(v, LH_ERROR_CORRUPT);
        if (v->error)
          continue;
      }
      /* Read to its end and after a while still no stream exposed: the
       * demuxer found no frame to give, and decodebin3 drops the ends of
       * its streams on pads it never exposed (GStreamer 1.22), so the sink
       * would wait for ever.  matroskademux on a file of headers alone
       * warns; a Matroska, WebM, MP4 or AVI file cut inside its first frame
       * ends quietly.  AVI and MP4 demuxers say most such files are broken
       * by an error at once.  The wait lets a short file's stream come out. */
      g_mutex_lock(&v->lock);
      bool drained_without_frames = v->drained && !v->linked;
      g_mutex_unlock(&v->lock);
      if (drained_without_frames && v->pulled == 0 &&
          waited >= (v->demux_warning ? NO_FRAMES_AFTER_WARNING_NS : NO_FRAMES_AFTER_DRAIN_NS)) {
        /* A stream no decoder takes is no damage: a short file of a codec
         * GStreamer does not know ends so too, its stream still counted. */
        if (take_no_video_reason(v))
          return fail_now(v, LH_ERROR_CORRUPT);
        if (v->demux_warning)
          set_error(v, "damaged or truncated file (%s)", v->demux_warning);
        else
          set_error(v, "damaged or truncated file: it ends before its video's first frame");
        return fail_now(v, LH_ERROR_CORRUPT);
      }
      waited += PULL_SLICE_NS;
      if (waited >= limit) {
        set_error(v, "no frame for %g s: the decoding pipeline is stuck", v->options.timeout_s);
        v->stuck = true;
        return fail_now(v, LH_ERROR_IO);
      }
      continue;
    }
    waited = 0;
    v->pulled++;
    GstBuffer *buffer = gst_sample_get_buffer(sample);
    GstClockTime pts = GST_BUFFER_PTS(buffer);
    if (v->options.start_s > 0 && GST_CLOCK_TIME_IS_VALID(pts) &&
        (double)pts / GST_SECOND < v->options.start_s - 1e-9) {
      /* Before the start: decoded and dropped.  A seek would be faster on a
       * long file, but some demuxers (y4mdec in 1.22) lose their way after
       * one, and a frame's statistics must not depend on the container. */
      /* Its end still counts for check_complete: a cut file stays cut. */
      GstClockTime length = GST_BUFFER_DURATION(buffer);
      if (!GST_CLOCK_TIME_IS_VALID(length))
        length = 0;
      v->end_time = (double)(pts + length) / GST_SECOND;
      v->frame_time = (double)length / GST_SECOND;
      gst_sample_unref(sample);
      continue;
    }
    v->sample = sample;
    break;
  }

  GstBuffer *buffer = gst_sample_get_buffer(v->sample);
  GstCaps *caps = gst_sample_get_caps(v->sample);
  if (!caps || !gst_video_info_from_caps(&v->info, caps)) {
    set_error(v, "a decoded frame without video caps");
    return fail_now(v, LH_ERROR_CORRUPT);
  }
  note_decoder(v);
  GstMapFlags flags = GST_MAP_READ;
#ifdef HAVE_GST_CUDA
  GstMemory *memory = gst_buffer_peek_memory(buffer, 0);
  if (v->options.allow_cuda && gst_buffer_n_memory(buffer) == 1 && gst_is_cuda_memory(memory)) {
    flags |= GST_MAP_CUDA;
    v->cuda = true;
    GstCudaContext *context = GST_CUDA_MEMORY_CAST(memory)->context;
    if (context != v->cuda_context) {
      if (v->cuda_context)
        gst_object_unref(v->cuda_context);
      v->cuda_context = gst_object_ref(context);
    }
  }
#endif
  if (!gst_video_frame_map(&v->vframe, &v->info, buffer, flags)) {
    set_error(v, "a decoded frame cannot be mapped");
    return fail_now(v, LH_ERROR_IO);
  }
  v->mapped = true;
  int status = describe_frame(v, f);
  if (status < 0) {
    set_error(v, "%s", lh_last_error());
    return status;
  }
  GstClockTime duration = GST_BUFFER_DURATION(buffer);
  f->index = v->index++;
  f->pts = GST_CLOCK_TIME_IS_VALID(GST_BUFFER_PTS(buffer))
               ? (double)GST_BUFFER_PTS(buffer) / GST_SECOND
               : NAN;
  f->duration = GST_CLOCK_TIME_IS_VALID(duration) ? (double)duration / GST_SECOND : NAN;
  /* Decoded frames do not say whether they were keyframes: the decoder's
   * input did (parsers flag the others as delta units), and an image
   * decoder's are all keyframes.  Without a decoder (or a timestamp) nobody
   * said. */
  f->keyframe = -1;
  g_mutex_lock(&v->lock);
  if (v->video_decoder && v->video_decoder->intra_only) {
    f->keyframe = 1;
  } else if (v->video_decoder && GST_BUFFER_PTS_IS_VALID(buffer)) {
    gint64 key = (gint64)GST_BUFFER_PTS(buffer);
    f->keyframe = g_hash_table_remove(v->video_decoder->keyframes, &key) ? 1 : 0;
  }
  g_mutex_unlock(&v->lock);
  f->warned = v->warned || GST_BUFFER_FLAG_IS_SET(buffer, GST_BUFFER_FLAG_CORRUPTED);
  v->warned = false;
  if (isfinite(f->pts)) {
    v->end_time = isfinite(f->duration) ? f->pts + f->duration : f->pts;
    v->frame_time = isfinite(f->duration) ? f->duration : 0;
  }
  f->matrix = lhio_colorimetry_matrix(&v->info);
  f->range = lhio_caps_range(caps, &v->info);
  f->format = gst_video_format_to_string(GST_VIDEO_INFO_FORMAT(&v->info));
  return 1;
}

int lhio_video_host_luma(LhioVideo *v, const uint8_t **plane, size_t *stride, int *sample_bytes)
{
  if (!v->sample)
    return lhio_fail(LH_ERROR_INVALID_ARGUMENT, v->path, "no current frame");
  GstVideoFrame *vf = &v->vframe;
  if (v->cuda) {
    if (!v->host_mapped) {
      if (!gst_video_frame_map(&v->host_frame, &v->info, gst_sample_get_buffer(v->sample),
                               GST_MAP_READ))
        return lhio_fail(LH_ERROR_IO, v->path, "a CUDA frame cannot be read on the host");
      v->host_mapped = true;
    }
    vf = &v->host_frame;
  }
  const GstVideoFormatInfo *finfo = v->info.finfo;
  *plane = GST_VIDEO_FRAME_PLANE_DATA(vf, 0);
  *stride = (size_t)GST_VIDEO_FRAME_PLANE_STRIDE(vf, 0);
  *sample_bytes =
      GST_VIDEO_FORMAT_INFO_PSTRIDE(finfo, 0) >= 2 &&
              (GST_VIDEO_FORMAT_INFO_IS_YUV(finfo) || GST_VIDEO_FORMAT_INFO_IS_GRAY(finfo))
          ? 2
          : 1;
  if (!GST_VIDEO_FORMAT_INFO_IS_YUV(finfo) && !GST_VIDEO_FORMAT_INFO_IS_GRAY(finfo))
    return lhio_fail(LH_ERROR_UNSUPPORTED, v->path, "R'G'B' frames have no luma plane");
  if (GST_VIDEO_FORMAT_INFO_SHIFT(finfo, 0) > 0) {
    /* P010: the 10 bits at the top of each sample, brought down. */
    int width = GST_VIDEO_INFO_WIDTH(&v->info), height = GST_VIDEO_INFO_HEIGHT(&v->info);
    size_t need = (size_t)width * (size_t)height;
    if (need > v->host_p010_size) {
      g_free(v->host_p010);
      v->host_p010 = g_new(uint16_t, need);
      v->host_p010_size = need;
    }
    int shift = GST_VIDEO_FORMAT_INFO_SHIFT(finfo, 0);
    for (int y = 0; y < height; y++) {
      const uint16_t *row = (const uint16_t *)(const void *)(*plane + (size_t)y * *stride);
      for (int x = 0; x < width; x++)
        v->host_p010[(size_t)y * (size_t)width + (size_t)x] = (uint16_t)(row[x] >> shift);
    }
    *plane = (const uint8_t *)v->host_p010;
    *stride = (size_t)width * 2;
  }
  return LH_OK;
}

int lhio_video_cuda_enter(LhioVideo *v)
{
#ifdef HAVE_GST_CUDA
  if (v->cuda_context && !gst_cuda_context_push(v->cuda_context))
    return lhio_fail(LH_ERROR_CUDA, v->path, "cannot make the decoder's CUDA context current");
#else
  (void)v;
#endif
  return LH_OK;
}

void lhio_video_cuda_leave(LhioVideo *v)
{
#ifdef HAVE_GST_CUDA
  if (v->cuda_context)
    gst_cuda_context_pop(NULL);
#else
  (void)v;
#endif
}

const char *lhio_video_decoder(const LhioVideo *v)
{
  return v->decoder ? v->decoder : "";
}

double lhio_video_duration(LhioVideo *v)
{
  gint64 duration = -1;
  if (v->pipeline && gst_element_query_duration(v->pipeline, GST_FORMAT_TIME, &duration) &&
      duration >= 0)
    return (double)duration / GST_SECOND;
  return NAN;
}

bool lhio_video_transport_stream(LhioVideo *v)
{
  g_mutex_lock(&v->lock);
  bool transport_stream = v->transport_stream;
  g_mutex_unlock(&v->lock);
  return transport_stream;
}

static gpointer stop_pipeline(gpointer pipeline)
{
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(pipeline);
  return NULL;
}

void lhio_video_close(LhioVideo *v)
{
  if (!v)
    return;
  release_frame(v);
  if (v->pipeline && v->stuck) {
    /* Stopping waits for the streaming threads, and a stuck one (a read
     * from a pipe that never writes) may never come back: the caller goes
     * on, and the pipeline is stopped when it can be, or ends with the
     * process.  It no longer refers to v. */
    g_signal_handlers_disconnect_by_data(v->decodebin, v);
    GThread *thread = g_thread_try_new("lumahist-video-stop", stop_pipeline, v->pipeline, NULL);
    if (thread)
      g_thread_unref(thread);
    v->pipeline = NULL;
  }
  if (v->pipeline) {
    gst_element_set_state(v->pipeline, GST_STATE_NULL);
    gst_object_unref(v->pipeline);
  }
  if (v->bus)
    gst_object_unref(v->bus);
#ifdef HAVE_GST_CUDA
  if (v->cuda_context)
    gst_object_unref(v->cuda_context);
#endif
  g_free(v->host_p010);
  if (v->decoders)
    g_ptr_array_unref(v->decoders);
  g_free(v->decoder);
  g_free(v->first_video);
  g_free(v->missing);
  g_free(v->demux_warning);
  g_free(v->error);
  g_free(v->path);
  g_mutex_clear(&v->lock);
  g_free(v);
}
