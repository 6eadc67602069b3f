/* gpu-jpeg-absent.c: the GPU JPEG decoder of a build without it (no CUDA, or
 * -Dnvjpeg=disabled): it is never usable, and says why. */
#include <stddef.h>

#include "lhio-gpu.h"

static const char *const absent = "this lumahist was built without nvJPEG (no CUDA compiler "
                                  "found, or -Dnvjpeg=disabled)";

bool lhio_gpu_jpeg_usable(const char **why)
{
  if (why)
    *why = absent;
  return false;
}

int lhio_gpu_jpeg_prepare(void)
{
  return lh_set_error(LH_ERROR_UNSUPPORTED, "%s", absent);
}

void lhio_gpu_jpeg_shutdown(void)
{
}

int lhio_gpu_jpeg_new(void *cuda_stream, LhioGpuJpeg **decoder)
{
  (void)cuda_stream;
  *decoder = NULL;
  return lh_set_error(LH_ERROR_UNSUPPORTED, "%s", absent);
}

void lhio_gpu_jpeg_free(LhioGpuJpeg *decoder)
{
  (void)decoder;
}

int lhio_gpu_jpeg_warm(LhioGpuJpeg *decoder, int batch, bool planar)
{
  (void)decoder;
  (void)batch;
  (void)planar;
  return lh_set_error(LH_ERROR_UNSUPPORTED, "%s", absent);
}

bool lhio_gpu_jpeg_has_hardware(const LhioGpuJpeg *decoder)
{
  (void)decoder;
  return false;
}

int lhio_gpu_jpeg_decode_luma(LhioGpuJpeg *decoder, LhioGpuJpegJob *jobs, int n)
{
  (void)decoder;
  (void)jobs;
  (void)n;
  return lh_set_error(LH_ERROR_UNSUPPORTED, "%s", absent);
}

bool lhio_gpu_jpeg_planar_format(const LhioJpegInfo *info, LhFormat *format, const char **why)
{
  (void)info;
  (void)format;
  if (why)
    *why = absent;
  return false;
}

int lhio_gpu_jpeg_decode_planar(LhioGpuJpeg *decoder, LhioGpuJpegJob *jobs, int n)
{
  (void)decoder;
  (void)jobs;
  (void)n;
  return lh_set_error(LH_ERROR_UNSUPPORTED, "%s", absent);
}

int lhio_gpu_jpeg_encode(LhioGpuJpeg *decoder, const LhFrame *frame, int quality, bool progressive,
                         LhioEncoded *out)
{
  (void)decoder;
  (void)frame;
  (void)quality;
  (void)progressive;
  if (out)
    out->data = NULL;
  return lh_set_error(LH_ERROR_UNSUPPORTED, "%s", absent);
}

double lhio_gpu_jpeg_device_seconds(const LhioGpuJpeg *decoder)
{
  (void)decoder;
  return 0;
}
