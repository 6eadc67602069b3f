/* cuda/place.c: where a CUDA context's work runs, and only there.
 *
 * An LhContext on CUDA works in the CUDA context that was current when it
 * was made (a device's primary context, or a context a host application
 * pushed, as GStreamer's elements do): its stream, buffers and events live
 * there.  A call made while another device, or another context, is current
 * (a thread that moved on with cudaSetDevice, PyTorch's torch.cuda.set_device)
 * used to queue work on the wrong device, with addresses of the other:
 * "invalid resource handle" at best, an illegal address at worst, which ends
 * every CUDA context of the process.  Each call now pushes the context's own
 * CUDA context when another is current, and pops it before returning, so
 * the caller's stays as it was.
 *
 * The driver's context calls are fetched from the runtime
 * (cudaGetDriverEntryPointByVersion), so the library still links the runtime
 * alone, as before. */
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include <cuda.h>
#include <cuda_runtime_api.h>

#include "cuda/backend.h"

typedef CUresult (*CtxGetCurrent)(CUcontext *context);
typedef CUresult (*CtxPushCurrent)(CUcontext context);
typedef CUresult (*CtxPopCurrent)(CUcontext *context);
typedef CUresult (*DeviceGet)(CUdevice *device, int ordinal);
typedef CUresult (*PrimaryCtxRetain)(CUcontext *context, CUdevice device);
typedef CUresult (*PrimaryCtxRelease)(CUdevice device);

static struct {
  CtxGetCurrent get_current;
  CtxPushCurrent push_current;
  CtxPopCurrent pop_current;
  DeviceGet device_get;
  PrimaryCtxRetain primary_retain;
  PrimaryCtxRelease primary_release;
} driver;
static pthread_once_t driver_once = PTHREAD_ONCE_INIT;

static void *entry_point(const char *symbol)
{
  void *function = NULL;
  enum cudaDriverEntryPointQueryResult found;
  /* The CUDA 12.0 forms of these calls, which every driver that runs a
   * CUDA 12 or 13 runtime has. */
  if (cudaGetDriverEntryPointByVersion(symbol, &function, 12000, cudaEnableDefault, &found) !=
          cudaSuccess ||
      found != cudaDriverEntryPointSuccess) {
    (void)cudaGetLastError();
    return NULL;
  }
  return function;
}

static void driver_load(void)
{
  driver.get_current = (CtxGetCurrent)entry_point("cuCtxGetCurrent");
  driver.push_current = (CtxPushCurrent)entry_point("cuCtxPushCurrent");
  driver.pop_current = (CtxPopCurrent)entry_point("cuCtxPopCurrent");
  driver.device_get = (DeviceGet)entry_point("cuDeviceGet");
  driver.primary_retain = (PrimaryCtxRetain)entry_point("cuDevicePrimaryCtxRetain");
  driver.primary_release = (PrimaryCtxRelease)entry_point("cuDevicePrimaryCtxRelease");
  if (!driver.get_current || !driver.push_current || !driver.pop_current || !driver.device_get ||
      !driver.primary_retain || !driver.primary_release)
    driver.get_current = NULL; /* all or nothing */
}

static bool driver_usable(void)
{
  pthread_once(&driver_once, driver_load);
  return driver.get_current != NULL;
}

int lhi_cuda_place_here(LhiCudaPlace *place)
{
  place->context = NULL;
  cudaError_t error = cudaGetDevice(&place->device);
  if (error != cudaSuccess)
    return lhi_cuda_failure(error, "cudaGetDevice", __FILE__, __LINE__);
  if (!driver_usable())
    return lhi_error(LH_ERROR_CUDA, "the CUDA driver's context calls (cuCtxGetCurrent) were not "
                                    "found: the driver is older than the CUDA runtime");
  CUcontext current = NULL;
  if (driver.get_current(&current) != CUDA_SUCCESS || !current)
    return lhi_error(LH_ERROR_CUDA, "no CUDA context is current after the runtime made one");
  place->context = current;
  return LH_OK;
}

int lhi_cuda_place_enter(const LhiCudaPlace *place, bool *pushed)
{
  *pushed = false;
  CUcontext current = NULL;
  if (driver.get_current(&current) != CUDA_SUCCESS)
    return lhi_error(LH_ERROR_CUDA, "cuCtxGetCurrent failed");
  if (current == place->context)
    return LH_OK;
  if (driver.push_current(place->context) != CUDA_SUCCESS)
    return lhi_error(LH_ERROR_CUDA, "cannot make the context's CUDA context (device %d) current",
                     place->device);
  *pushed = true;
  return LH_OK;
}

void lhi_cuda_place_leave(bool pushed)
{
  CUcontext popped;
  if (pushed)
    driver.pop_current(&popped);
}

int lhi_cuda_on_device(int device)
{
  int count = 0;
  cudaError_t error = cudaGetDeviceCount(&count);
  if (error != cudaSuccess) {
    (void)cudaGetLastError();
    return lhi_error(LH_ERROR_NO_DEVICE, "no usable CUDA device: %s", cudaGetErrorString(error));
  }
  if (device < 0 || device >= count)
    return lhi_error(LH_ERROR_NO_DEVICE, "there is no CUDA device %d (%d found)", device, count);
  if (!driver_usable())
    return lhi_error(LH_ERROR_CUDA, "the CUDA driver's context calls (cuCtxGetCurrent) were not "
                                    "found: the driver is older than the CUDA runtime");
  /* The device's primary context pushed on the caller's stack, not
   * cudaSetDevice: that would also have moved the runtime's current device
   * of a thread that had no context current (a Python thread whose first
   * CUDA call is ours, on a cuda:1 tensor), which the pop would not undo. */
  error = cudaInitDevice(device, 0, 0); /* the runtime's, then: it holds it until exit */
  if (error != cudaSuccess)
    return lhi_cuda_failure(error, "cudaInitDevice", __FILE__, __LINE__);
  CUdevice handle;
  CUcontext primary = NULL;
  if (driver.device_get(&handle, device) != CUDA_SUCCESS ||
      driver.primary_retain(&primary, handle) != CUDA_SUCCESS)
    return lhi_error(LH_ERROR_CUDA, "cannot start CUDA device %d's primary context", device);
  if (driver.push_current(primary) != CUDA_SUCCESS) {
    driver.primary_release(handle);
    return lhi_error(LH_ERROR_CUDA, "cannot make CUDA device %d's primary context current", device);
  }
  return LH_OK;
}

void lhi_cuda_on_device_end(int device)
{
  /* cudaInitDevice made the primary context the runtime's, which keeps
   * it until cudaDeviceReset: it outlives this retain. */
  CUcontext popped;
  CUdevice handle;
  driver.pop_current(&popped);
  if (driver.device_get(&handle, device) == CUDA_SUCCESS)
    driver.primary_release(handle);
}

int lhi_cuda_current_device(void)
{
  int count = 0;
  int device = -1;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0 ||
      cudaGetDevice(&device) != cudaSuccess) {
    (void)cudaGetLastError();
    return -1;
  }
  return device;
}

int lhi_cuda_memory_device(const void *pointer)
{
  struct cudaPointerAttributes attributes;
  if (!pointer)
    return -1;
  if (cudaPointerGetAttributes(&attributes, pointer) != cudaSuccess) {
    (void)cudaGetLastError(); /* not the runtime's memory: no error worth keeping */
    return -1;
  }
  return attributes.type == cudaMemoryTypeDevice ? attributes.device : -1;
}

int lhi_cuda_frame_check(const LhiCudaPlace *place, const LhFrame *frame, const char *what)
{
  if (frame->memory != LH_MEMORY_CUDA)
    return LH_OK;
  for (int p = 0; p < lhi_format_info(frame->format)->n_planes; p++) {
    int device = lhi_cuda_memory_device(frame->planes[p]);
    /* Memory of another device would be read through addresses that mean
     * nothing here: an illegal address, and a process whose CUDA is gone. */
    if (device >= 0 && device != place->device)
      return lhi_error(LH_ERROR_INVALID_ARGUMENT,
                       "%s is in the memory of CUDA device %d, and this context works on device "
                       "%d: use a context made on device %d (lh_context_new_on_device)",
                       what, device, place->device, device);
  }
  return LH_OK;
}
