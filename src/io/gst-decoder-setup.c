/* gst-decoder-setup.c: the settings a GStreamer video decoder gets before
 * its first frame, the same whether decodebin3 plugged it (`stats`,
 * video.c) or the rewriting pipeline made it (video-rewrite.c), so that
 * both read a file's frames alike. */
#include <stdbool.h>
#include <string.h>

#include "lhio-gst.h"

void lhio_gst_set_up_decoder(GstElement *decoder)
{
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
