/* cuda-backend.h: what the CUDA backend's state offers the other host files
 * of that backend (cuda-equalize.c), and what they offer it back. */
#ifndef LH_CUDA_BACKEND_H
#define LH_CUDA_BACKEND_H

#include <cuda_runtime_api.h>

#include "lh-private.h"

/* The stream the backend's work goes on now (its own or the caller's). */
cudaStream_t lhi_cuda_stream(void *state);

/* A pointer in the state that cuda-equalize.c owns: NULL at first, given to
 * lhi_cuda_equalize_free when the backend closes. */
void **lhi_cuda_equalize_slot(void *state);

/* cuda-equalize.c: equalization and overlays, and the release of their
 * buffers. */
int lhi_cuda_equalize(void *state, LhiEqualizeJob *job);
int lhi_cuda_overlay(void *state, const LhiOverlayJob *job);
void lhi_cuda_equalize_free(void *data);

#endif /* LH_CUDA_BACKEND_H */
