/* nvjpeg-api.c: finds libnvjpeg at run time and looks up the entry points
 * that nvjpeg-api.h declares, once per process. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "nvjpeg-api.h"

/* The CUDA 13 library first, then older sonames whose ABI for these calls is
 * the same, then the unversioned development link. */
static const char *const library_names[] = {
    "libnvjpeg.so.13",
    "libnvjpeg.so.12",
    "libnvjpeg.so.11",
    "libnvjpeg.so",
};

static LhnjApi api;
static const LhnjApi *loaded;
static const char *load_failure;
static pthread_once_t load_once = PTHREAD_ONCE_INIT;

/* Looks name up in library into *slot; false when it is missing. */
static int look_up(void *library, const char *name, void *slot)
{
  void *symbol = dlsym(library, name);
  if (!symbol)
    return 0;
  /* POSIX lets dlsym's object pointer stand for a function: stored through
   * a void ** to the slot, with no cast that ISO C warns about. */
  *(void **)slot = symbol;
  return 1;
}

/* Where the CUDA toolkit puts its libraries when the loader's path does
 * not name them: $CUDA_HOME, $CUDA_PATH, then the usual link. */
static void *open_in_toolkit(const char *name)
{
  const char *roots[] = {getenv("CUDA_HOME"), getenv("CUDA_PATH"), "/usr/local/cuda"};
  void *library = NULL;
  for (size_t i = 0; !library && i < sizeof roots / sizeof roots[0]; i++) {
    char path[4096];
    if (roots[i] && *roots[i] &&
        snprintf(path, sizeof path, "%s/lib64/%s", roots[i], name) < (int)sizeof path)
      library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  }
  return library;
}

static void load(void)
{
  void *library = NULL;
  size_t n_names = sizeof library_names / sizeof library_names[0];
  for (size_t i = 0; !library && i < n_names; i++)
    library = dlopen(library_names[i], RTLD_NOW | RTLD_LOCAL);
  for (size_t i = 0; !library && i < n_names; i++)
    library = open_in_toolkit(library_names[i]);
  if (!library) {
    load_failure = "libnvjpeg (CUDA's nvJPEG library) was not found on the loader's path "
                   "nor under $CUDA_HOME, $CUDA_PATH or /usr/local/cuda; install the CUDA "
                   "toolkit's libnvjpeg or add its folder to LD_LIBRARY_PATH";
    return;
  }
  int ok = look_up(library, "nvjpegCreateEx", &api.CreateEx) &&
           look_up(library, "nvjpegDestroy", &api.Destroy) &&
           look_up(library, "nvjpegJpegStateCreate", &api.JpegStateCreate) &&
           look_up(library, "nvjpegJpegStateDestroy", &api.JpegStateDestroy) &&
           look_up(library, "nvjpegDecode", &api.Decode) &&
           look_up(library, "nvjpegDecodeBatchedInitialize", &api.DecodeBatchedInitialize) &&
           look_up(library, "nvjpegDecodeBatched", &api.DecodeBatched) &&
           look_up(library, "nvjpegDecodeBatchedSupported", &api.DecodeBatchedSupported) &&
           look_up(library, "nvjpegJpegStreamCreate", &api.JpegStreamCreate) &&
           look_up(library, "nvjpegJpegStreamDestroy", &api.JpegStreamDestroy) &&
           look_up(library, "nvjpegJpegStreamParseHeader", &api.JpegStreamParseHeader) &&
           look_up(library, "nvjpegEncoderStateCreate", &api.EncoderStateCreate) &&
           look_up(library, "nvjpegEncoderStateDestroy", &api.EncoderStateDestroy) &&
           look_up(library, "nvjpegEncoderParamsCreate", &api.EncoderParamsCreate) &&
           look_up(library, "nvjpegEncoderParamsDestroy", &api.EncoderParamsDestroy) &&
           look_up(library, "nvjpegEncoderParamsSetQuality", &api.EncoderParamsSetQuality) &&
           look_up(library, "nvjpegEncoderParamsSetOptimizedHuffman",
                   &api.EncoderParamsSetOptimizedHuffman) &&
           look_up(library, "nvjpegEncoderParamsSetSamplingFactors",
                   &api.EncoderParamsSetSamplingFactors) &&
           look_up(library, "nvjpegEncoderParamsSetEncoding", &api.EncoderParamsSetEncoding) &&
           look_up(library, "nvjpegEncodeYUV", &api.EncodeYUV) &&
           look_up(library, "nvjpegEncodeRetrieveBitstream", &api.EncodeRetrieveBitstream);
  if (!ok) {
    /* Kept loaded: unloading a CUDA library can run its destructors against
     * a context in use. */
    load_failure = "libnvjpeg lacks entry points lumahist needs (older than CUDA 11?)";
    return;
  }
  loaded = &api;
}

const LhnjApi *lhnj_api(const char **why)
{
  pthread_once(&load_once, load);
  if (!loaded && why)
    *why = load_failure;
  return loaded;
}

const char *lhnj_status_name(int status)
{
  switch (status) {
  case LHNJ_STATUS_SUCCESS:
    return "success";
  case LHNJ_STATUS_NOT_INITIALIZED:
    return "not initialized";
  case LHNJ_STATUS_INVALID_PARAMETER:
    return "invalid parameter";
  case LHNJ_STATUS_BAD_JPEG:
    return "bad JPEG";
  case LHNJ_STATUS_JPEG_NOT_SUPPORTED:
    return "JPEG not supported";
  case LHNJ_STATUS_ALLOCATOR_FAILURE:
    return "out of memory";
  case LHNJ_STATUS_EXECUTION_FAILED:
    return "execution failed";
  case LHNJ_STATUS_ARCH_MISMATCH:
    return "not supported on this GPU";
  case LHNJ_STATUS_INTERNAL_ERROR:
    return "internal error";
  case LHNJ_STATUS_IMPLEMENTATION_NOT_SUPPORTED:
    return "not implemented for this backend";
  case LHNJ_STATUS_INCOMPLETE_BITSTREAM:
    return "incomplete bitstream";
  default:
    return "unknown nvJPEG status";
  }
}
