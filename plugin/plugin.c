/* plugin.c: registers the lumahist plugin and its one element with GStreamer. */
#include "gstlumahist.h"

static gboolean plugin_init(GstPlugin *plugin)
{
  return GST_ELEMENT_REGISTER(lumahist, plugin);
}

GST_PLUGIN_DEFINE(GST_VERSION_MAJOR, GST_VERSION_MINOR, lumahist,
                  "Luminance histograms, statistics and percentiles of video frames, on NVIDIA "
                  "GPUs (CUDA) or the CPU",
                  plugin_init, VERSION, "MIT/X11", GST_PACKAGE_NAME, GST_PACKAGE_ORIGIN)
