/* video-absent.c: the video source of a build without GStreamer (not found,
 * or -Dvideo=disabled): videos are still told from images, and opening one
 * says why it cannot be read. */
#include <string.h>

#include "lhio-private.h"
#include "lhio-video.h"

static const char *const absent = "this lumahist was built without GStreamer (install "
                                  "libgstreamer-plugins-base1.0-dev and rebuild, or it was "
                                  "configured with -Dvideo=disabled): video files cannot be read";

bool lhio_video_available(const char **why)
{
  if (why)
    *why = absent;
  return false;
}

void lhio_video_prefer_cuda_device(int device)
{
  (void)device;
}

int lhio_video_open(const char *path, const LhioVideoOptions *options, LhioVideo **video)
{
  (void)options;
  *video = NULL;
  return lhio_fail(LH_ERROR_UNSUPPORTED, path, "%s", absent);
}

int lhio_video_next(LhioVideo *video, LhioVideoFrame *frame)
{
  (void)video;
  (void)frame;
  return lh_set_error(LH_ERROR_UNSUPPORTED, "%s", absent);
}

int lhio_video_host_luma(LhioVideo *video, const uint8_t **plane, size_t *stride, int *sample_bytes)
{
  (void)video;
  (void)plane;
  (void)stride;
  (void)sample_bytes;
  return lh_set_error(LH_ERROR_UNSUPPORTED, "%s", absent);
}

int lhio_video_cuda_enter(LhioVideo *video)
{
  (void)video;
  return LH_OK;
}

void lhio_video_cuda_leave(LhioVideo *video)
{
  (void)video;
}

const char *lhio_video_decoder(const LhioVideo *video)
{
  (void)video;
  return "";
}

double lhio_video_duration(LhioVideo *video)
{
  (void)video;
  return 0.0 / 0.0;
}

bool lhio_video_transport_stream(LhioVideo *video)
{
  (void)video;
  return false;
}

void lhio_video_close(LhioVideo *video)
{
  (void)video;
}

int lhio_video_rewrite(const char *input, const char *output,
                       const LhioVideoRewriteOptions *options, LhioVideoRewriteResult *result)
{
  (void)output;
  (void)options;
  if (result)
    memset(result, 0, sizeof *result);
  return lhio_fail(LH_ERROR_UNSUPPORTED, input, "%s", absent);
}
