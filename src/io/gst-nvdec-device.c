/* gst-nvdec-device.c: NVDEC decoders of one CUDA device chosen first.
 *
 * GStreamer's nvcodec registers one decoder element per device and codec:
 * nvh264dec for the first device that decodes H.264, nvh264device1dec for
 * device 1, and so on, the first ranked above the others.  decodebin3 plugs
 * the best-ranked one and has no hook to choose among them, so a run told to
 * work on device 1 (--devices 1) would decode on device 0 and analyse the
 * frames there.  Ranking the wanted device's decoders just above those of
 * every other device makes decodebin3, and the rewriting pipeline's choice
 * by rank, take them.  The registry is the process's, so the ranks are too:
 * the last device asked for wins. */
#include <stdlib.h>
#include <string.h>

#include <gst/gst.h>

#include "lhio-gst.h"
#include "lhio-video.h"

/* One nvcodec decoder: its factory, the codec (the name without its
 * "deviceN"), the device it decodes on and the rank it was registered with. */
typedef struct {
  GstElementFactory *factory;
  char *codec;
  int device;
  guint rank;
} NvDecoder;

static GArray *decoders; /* of NvDecoder, found once */
static int ranked_for = -1; /* the device whose decoders are first now */
static GMutex ranks_lock;

/* The CUDA device an nvcodec element works on (its read-only
 * "cuda-device-id"), or -1 for any other element. */
static int device_of(GstElementFactory *factory)
{
  const char *plugin = gst_plugin_feature_get_plugin_name(GST_PLUGIN_FEATURE(factory));
  if (!plugin || strcmp(plugin, "nvcodec") != 0)
    return -1;
  GstElement *element = gst_element_factory_create(factory, NULL);
  if (!element)
    return -1;
  int device = -1;
  GParamSpec *spec = g_object_class_find_property(G_OBJECT_GET_CLASS(element), "cuda-device-id");
  if (spec && G_PARAM_SPEC_VALUE_TYPE(spec) == G_TYPE_UINT) {
    guint id = 0;
    g_object_get(element, "cuda-device-id", &id, NULL);
    device = (int)id;
  }
  gst_object_unref(gst_object_ref_sink(element));
  return device;
}

/* "nvh264device1dec" -> "nvh264dec": what decoders of one codec share. */
static char *codec_of(const char *name)
{
  char *codec = g_strdup(name);
  char *device = strstr(codec, "device");
  if (device) {
    char *digits = device + strlen("device");
    char *end = digits;
    while (*end >= '0' && *end <= '9')
      end++;
    if (end > digits)
      memmove(device, end, strlen(end) + 1);
  }
  return codec;
}

static void find_decoders(void)
{
  decoders = g_array_new(FALSE, FALSE, sizeof(NvDecoder));
  GList *all = gst_element_factory_list_get_elements(GST_ELEMENT_FACTORY_TYPE_DECODER,
                                                     GST_RANK_NONE);
  for (GList *l = all; l; l = l->next) {
    GstElementFactory *factory = l->data;
    int device = device_of(factory);
    if (device < 0)
      continue;
    NvDecoder d = {gst_object_ref(factory),
                   codec_of(gst_plugin_feature_get_name(GST_PLUGIN_FEATURE(factory))), device,
                   gst_plugin_feature_get_rank(GST_PLUGIN_FEATURE(factory))};
    g_array_append_val(decoders, d);
  }
  gst_plugin_feature_list_free(all);
}

void lhio_video_prefer_cuda_device(int device)
{
  if (lhio_gstreamer_started())
    return;
  if (device < 0)
    device = -1;
  g_mutex_lock(&ranks_lock);
  /* Each video of a run asks again; -1 after a device (a Python call
   * without devices= after one with) puts the ranks back as registered. */
  if (device == ranked_for) {
    g_mutex_unlock(&ranks_lock);
    return;
  }
  ranked_for = device;
  if (!decoders)
    find_decoders();
  for (guint i = 0; i < decoders->len; i++) {
    NvDecoder *d = &g_array_index(decoders, NvDecoder, i);
    /* Each back to its own rank, then the wanted device's (none for -1)
     * above the best of its codec's. */
    guint rank = d->rank;
    if (d->device == device)
      for (guint j = 0; j < decoders->len; j++) {
        const NvDecoder *other = &g_array_index(decoders, NvDecoder, j);
        if (other->device != device && strcmp(other->codec, d->codec) == 0 &&
            other->rank >= rank)
          rank = other->rank + 1;
      }
    gst_plugin_feature_set_rank(GST_PLUGIN_FEATURE(d->factory), rank);
  }
  g_mutex_unlock(&ranks_lock);
}
