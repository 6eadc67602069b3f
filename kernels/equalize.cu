/* equalize.cu: global equalization on the GPU: the equalizeHist LUT built
 * from the histogram in one block, the LUT applied with 16-byte loads and
 * stores, and the temporal window that smooths LUTs across frames. */
#include "equalize.cuh"
#include "scan.cuh"

/* --- Tunables --------------------------------------------------------------
 * LUTs up to this many bins (and, for colour, their gain tables) are copied
 * into each block's shared memory; larger ones are read through the
 * read-only cache and the gain is computed per pixel. */
#define LHK_LUT_SHARED_MAX_BINS 4096
/* Blocks of the temporal smoothing, each striding over the LUT entries. */
#define LHK_SMOOTH_BLOCKS 256

/* --- The LUT --------------------------------------------------------------- */

struct LhkLutShared {
  lhk_u64 warp_totals[LHK_WARPS];
  lhk_u64 warp_sums[LHK_WARPS];
  uint32_t warp_firsts[LHK_WARPS];
  lhk_u64 total;
  uint32_t first;
  lhk_u64 first_count;
};

/* lhi_build_lut: the first non-empty bin f and the total N, then
 * lut[v] = black for v <= f and black + lhi_lut_level(h[f+1] + .. + h[v])
 * above, walked in tiles of one bin per thread; identity when one bin holds
 * everything (or nothing is counted). */
__global__ void __launch_bounds__(LHK_BLOCK_THREADS)
    lhk_equalize_lut_kernel(lhk_u64 *histogram, uint32_t bins, uint32_t black, uint32_t white,
                            uint16_t *lut)
{
  __shared__ LhkLutShared sh;
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const unsigned all = 0xffffffffu;

  lhk_u64 sum = 0;
  uint32_t first = bins;
  for (uint32_t v = tid; v < bins; v += LHK_BLOCK_THREADS) {
    lhk_u64 h = histogram[v];
    sum += h;
    if (h && v < first)
      first = v;
  }
  for (int offset = 16; offset > 0; offset /= 2) {
    sum += __shfl_down_sync(all, sum, offset);
    first = min(first, __shfl_down_sync(all, first, offset));
  }
  if (lane == 0) {
    sh.warp_sums[warp] = sum;
    sh.warp_firsts[warp] = first;
  }
  __syncthreads();
  if (tid == 0) {
    lhk_u64 total = 0;
    uint32_t f = bins;
    for (int w = 0; w < LHK_WARPS; w++) {
      total += sh.warp_sums[w];
      f = min(f, sh.warp_firsts[w]);
    }
    sh.total = total;
    sh.first = f;
    sh.first_count = f < bins ? histogram[f] : 0;
  }
  __syncthreads();
  const lhk_u64 total = sh.total;
  const uint32_t f = sh.first;
  const bool identity = total == 0 || sh.first_count == total;
  const uint32_t span = white - black;
  const float scale = identity ? 0.0f : lhi_lut_scale(span, total - sh.first_count);

  lhk_u64 carry = 0;
  for (uint32_t base = 0; base < bins; base += LHK_BLOCK_THREADS) {
    const uint32_t v = base + tid;
    lhk_u64 h = 0;
    if (v < bins) {
      h = v > f ? histogram[v] : 0;
      histogram[v] = 0;
    }
    lhk_u64 tile_total;
    lhk_u64 cumulative = carry + lhk_block_inclusive_scan(h, sh.warp_totals, &tile_total);
    if (v < bins) {
      uint32_t level = identity ? v
                       : v <= f ? black
                                : black + lhi_lut_level(cumulative, scale, span);
      lut[v] = (uint16_t)level;
    }
    carry += tile_total;
    __syncthreads();
  }
}

extern "C" cudaError_t lhk_equalize_lut(unsigned long long *histogram, uint32_t bins,
                                        uint32_t black, uint32_t white, uint16_t *lut,
                                        cudaStream_t stream)
{
  if (bins < 256 || bins > LHK_MAX_BINS || white < black || white >= bins)
    return cudaErrorInvalidValue;
  lhk_equalize_lut_kernel<<<1, LHK_BLOCK_THREADS, 0, stream>>>(histogram, bins, black, white, lut);
  LHK_CHECK_LAUNCH(stream);
  return cudaSuccess;
}

/* --- Applying a LUT ---------------------------------------------------------- */

/* New luma and gain of a pixel of luma y, from the shared tables or, for
 * large LUTs, from global memory and one division. */
template <bool SHARED>
__device__ __forceinline__ void lhk_lookup(uint32_t y, const uint16_t *lut,
                                           const uint16_t *shared_lut, const uint32_t *shared_gain,
                                           bool colour, uint32_t *y_new, uint32_t *gain)
{
  if (SHARED) {
    *y_new = shared_lut[y];
    *gain = colour ? shared_gain[y] : 0;
  } else {
    *y_new = __ldg(lut + y);
    *gain = colour && y ? lhi_gain(y, *y_new) : 0;
  }
}

template <int PIXEL, bool SHARED>
__global__ void __launch_bounds__(LHK_REWRITE_THREADS)
    lhk_apply_lut_kernel(LhkPlane p, const uint16_t *lut, uint32_t bins)
{
  typedef LhkRewrite<PIXEL> R;
  const bool colour = lhk_is_colour<PIXEL>();
  extern __shared__ uint32_t shared_words[];
  uint32_t *shared_gain = shared_words;
  uint16_t *shared_lut = (uint16_t *)(shared_words + (colour ? bins : 0));
  if (SHARED) {
    for (uint32_t v = threadIdx.x; v < bins; v += blockDim.x) {
      uint32_t level = __ldg(lut + v);
      shared_lut[v] = (uint16_t)level;
      if (colour)
        shared_gain[v] = v ? lhi_gain(v, level) : 0;
    }
    __syncthreads();
  }

  const LhkRowSplit split = lhk_row_split<PIXEL>(p);
  const uint32_t slot = blockIdx.x * blockDim.x + threadIdx.x;
  if (slot >= split.slots)
    return;
  uint32_t row, end;
  lhk_block_rows(p.height, &row, &end);
  for (; row < end; row++) {
    const uint8_t *in = (const uint8_t *)p.in + row * p.in_stride;
    uint8_t *out = (uint8_t *)p.out + row * p.out_stride;
    uint32_t y_new, gain;
    if (slot < split.units) {
      LhkUnit<PIXEL> unit;
      unit.load(in + (size_t)slot * R::UNIT_BYTES);
#pragma unroll
      for (int i = 0; i < R::PX; i++) {
        uint8_t *px = unit.bytes + i * R::SAMPLES * R::SAMPLE_BYTES;
        uint32_t y = lhk_luma_of<PIXEL>(px, p);
        lhk_lookup<SHARED>(y, lut, shared_lut, shared_gain, colour, &y_new, &gain);
        lhk_write_pixel<PIXEL>(px, px, y, y_new, gain, p);
      }
      unit.store(out + (size_t)slot * R::UNIT_BYTES);
    } else {
      size_t offset =
          ((size_t)split.units * R::PX + (slot - split.units)) * R::SAMPLES * R::SAMPLE_BYTES;
      uint32_t y = lhk_luma_of<PIXEL>(in + offset, p);
      lhk_lookup<SHARED>(y, lut, shared_lut, shared_gain, colour, &y_new, &gain);
      lhk_write_pixel<PIXEL>(in + offset, out + offset, y, y_new, gain, p);
    }
  }
}

/* v210: one thread per group of a row (lhk_row_split), the Y fields of its
 * pixels looked up, the group stored whole. */
template <bool SHARED>
__global__ void __launch_bounds__(LHK_REWRITE_THREADS)
    lhk_apply_lut_v210_kernel(LhkPlane p, const uint16_t *lut, uint32_t bins)
{
  extern __shared__ uint32_t shared_words[];
  uint16_t *shared_lut = (uint16_t *)shared_words;
  if (SHARED) {
    for (uint32_t v = threadIdx.x; v < bins; v += blockDim.x)
      shared_lut[v] = __ldg(lut + v);
    __syncthreads();
  }

  const LhkRowSplit split = lhk_row_split<LHK_PIXEL_V210>(p);
  const uint32_t slot = blockIdx.x * blockDim.x + threadIdx.x;
  if (slot >= split.slots)
    return;
  const bool aligned = lhk_v210_aligned(p);
  const uint32_t pixels = lhk_v210_pixels(p.width, slot);
  const size_t at = (size_t)slot * LHI_V210_GROUP_BYTES;
  uint32_t row, end;
  lhk_block_rows(p.height, &row, &end);
  for (; row < end; row++) {
    LhkV210Group group;
    group.load((const uint8_t *)p.in + row * p.in_stride + at, aligned);
#pragma unroll
    for (int k = 0; k < LHI_V210_GROUP_PIXELS; k++) {
      if (k < pixels) {
        const uint32_t y = group.y(k);
        group.set_y(k, SHARED ? shared_lut[y] : __ldg(lut + y));
      }
    }
    group.store((uint8_t *)p.out + row * p.out_stride + at, aligned);
  }
}

static cudaError_t apply_lut_v210(const LhkPlane &p, const uint16_t *lut, uint32_t bins,
                                  cudaStream_t stream)
{
  dim3 grid;
  lhk_rewrite_grid<LHK_PIXEL_V210>(p, &grid);
  if (bins <= LHK_LUT_SHARED_MAX_BINS)
    lhk_apply_lut_v210_kernel<true>
        <<<grid, LHK_REWRITE_THREADS, bins * sizeof(uint16_t), stream>>>(p, lut, bins);
  else
    lhk_apply_lut_v210_kernel<false><<<grid, LHK_REWRITE_THREADS, 0, stream>>>(p, lut, bins);
  LHK_CHECK_LAUNCH(stream);
  return cudaSuccess;
}

template <int PIXEL>
static cudaError_t apply_lut(const LhkPlane &p, const uint16_t *lut, uint32_t bins,
                             cudaStream_t stream)
{
  dim3 grid;
  lhk_rewrite_grid<PIXEL>(p, &grid);
  if (bins <= LHK_LUT_SHARED_MAX_BINS) {
    const bool colour = lhk_is_colour<PIXEL>();
    size_t shared = bins * sizeof(uint16_t) + (colour ? bins * sizeof(uint32_t) : 0);
    lhk_apply_lut_kernel<PIXEL, true><<<grid, LHK_REWRITE_THREADS, shared, stream>>>(p, lut, bins);
  } else {
    lhk_apply_lut_kernel<PIXEL, false><<<grid, LHK_REWRITE_THREADS, 0, stream>>>(p, lut, bins);
  }
  LHK_CHECK_LAUNCH(stream);
  return cudaSuccess;
}

extern "C" cudaError_t lhk_apply_lut(LhkPixel pixel, const LhkPlane *plane, const uint16_t *lut,
                                     uint32_t bins, cudaStream_t stream)
{
  if (plane->width == 0 || plane->height == 0)
    return cudaSuccess;
  switch (pixel) {
  case LHK_PIXEL_Y8:
    return apply_lut<LHK_PIXEL_Y8>(*plane, lut, bins, stream);
  case LHK_PIXEL_Y16:
    return apply_lut<LHK_PIXEL_Y16>(*plane, lut, bins, stream);
  case LHK_PIXEL_RGB8:
    return apply_lut<LHK_PIXEL_RGB8>(*plane, lut, bins, stream);
  case LHK_PIXEL_RGBA8:
    return apply_lut<LHK_PIXEL_RGBA8>(*plane, lut, bins, stream);
  case LHK_PIXEL_RGB16:
    return apply_lut<LHK_PIXEL_RGB16>(*plane, lut, bins, stream);
  case LHK_PIXEL_RGBA16:
    return apply_lut<LHK_PIXEL_RGBA16>(*plane, lut, bins, stream);
  case LHK_PIXEL_RGB10:
    return apply_lut<LHK_PIXEL_RGB10>(*plane, lut, bins, stream);
  case LHK_PIXEL_V210:
    return apply_lut_v210(*plane, lut, bins, stream);
  default:
    return cudaErrorInvalidValue;
  }
}

/* --- Temporal smoothing -------------------------------------------------------
 * Device memory of a window: this header, the running sums (32-bit per
 * entry) and the ring of the window's LUTs (window x entries). */

struct LhkTemporalHeader {
  uint32_t profile[LHI_CUT_BINS]; /* of the last frame */
  uint32_t has_profile;
  uint32_t frames;   /* in the window, this frame included */
  uint32_t head;     /* the slot of the next frame */
  uint32_t slot;     /* this frame's */
  uint32_t reset;    /* the sums start afresh with this frame */
  uint32_t subtract; /* the window was full: the slot's LUTs leave it */
  lhk_u64 cuts;
};
static_assert(sizeof(LhkTemporalHeader) <= LHK_TEMPORAL_HEADER_BYTES, "header too large");

static size_t sums_bytes(size_t entries)
{
  return (entries * sizeof(uint32_t) + 255) / 256 * 256;
}

extern "C" size_t lhk_temporal_bytes(int window, size_t entries)
{
  return LHK_TEMPORAL_HEADER_BYTES + sums_bytes(entries) +
         (size_t)window * entries * sizeof(uint16_t);
}

/* One block: each warp sums the bins of two of the 32 coarse bins, then
 * thread 0 compares the profile with the last frame's (lhi_cut_distance)
 * and moves the window (lhi_temporal_host_step). */
__global__ void __launch_bounds__(LHK_BLOCK_THREADS)
    lhk_temporal_decide_kernel(LhkTemporalHeader *header, lhk_u64 *histogram, uint32_t bins,
                               int clear, uint32_t window, uint32_t threshold)
{
  __shared__ lhk_u64 coarse[LHI_CUT_BINS];
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const uint32_t width = bins >> LHI_CUT_LOG2_BINS;
  for (int k = warp; k < LHI_CUT_BINS; k += LHK_WARPS) {
    lhk_u64 sum = 0;
    for (uint32_t v = k * width + lane; v < (k + 1) * width; v += 32)
      sum += histogram[v];
    for (int offset = 16; offset > 0; offset /= 2)
      sum += __shfl_down_sync(0xffffffffu, sum, offset);
    if (lane == 0)
      coarse[k] = sum;
  }
  __syncthreads();
  if (clear)
    for (uint32_t v = tid; v < bins; v += LHK_BLOCK_THREADS)
      histogram[v] = 0;
  if (tid != 0)
    return;
  lhk_u64 total = 0;
  for (int k = 0; k < LHI_CUT_BINS; k++)
    total += coarse[k];
  uint32_t distance = 0;
  for (int k = 0; k < LHI_CUT_BINS; k++) {
    uint32_t share = lhi_cut_share(coarse[k], total);
    uint32_t last = header->profile[k];
    distance += share > last ? share - last : last - share;
    header->profile[k] = share;
  }
  bool cut = header->has_profile && distance > threshold;
  if (cut)
    header->cuts++;
  header->has_profile = 1;
  uint32_t before = cut || header->frames == 0 ? 0 : header->frames;
  header->reset = before == 0;
  header->subtract = before == window;
  header->slot = header->head;
  header->head = (header->head + 1) % window;
  header->frames = before == window ? window : before + 1;
}

extern "C" cudaError_t lhk_temporal_decide(void *temporal, unsigned long long *cut_histogram,
                                           uint32_t bins, int clear, int window, uint32_t threshold,
                                           cudaStream_t stream)
{
  if (bins < 256 || bins > LHK_MAX_BINS || (bins & (bins - 1)) != 0 || window < 1)
    return cudaErrorInvalidValue;
  lhk_temporal_decide_kernel<<<1, LHK_BLOCK_THREADS, 0, stream>>>(
      (LhkTemporalHeader *)temporal, cut_histogram, bins, clear, (uint32_t)window, threshold);
  LHK_CHECK_LAUNCH(stream);
  return cudaSuccess;
}

__global__ void lhk_temporal_smooth_kernel(const LhkTemporalHeader *header, uint32_t *sums,
                                           uint16_t *ring, uint16_t *luts, size_t entries)
{
  const uint32_t slot = header->slot, n = header->frames;
  const bool reset = header->reset, subtract = header->subtract;
  uint16_t *old_luts = ring + (size_t)slot * entries;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < entries;
       i += (size_t)gridDim.x * blockDim.x) {
    uint32_t sum = reset ? 0 : sums[i];
    if (subtract)
      sum -= old_luts[i];
    uint32_t level = luts[i];
    sum += level;
    old_luts[i] = (uint16_t)level;
    sums[i] = sum;
    luts[i] = (uint16_t)((sum + n / 2) / n);
  }
}

extern "C" cudaError_t lhk_temporal_smooth(void *temporal, uint16_t *luts, size_t entries,
                                           cudaStream_t stream)
{
  if (entries == 0)
    return cudaSuccess;
  uint8_t *base = (uint8_t *)temporal;
  uint32_t *sums = (uint32_t *)(base + LHK_TEMPORAL_HEADER_BYTES);
  uint16_t *ring = (uint16_t *)(base + LHK_TEMPORAL_HEADER_BYTES + sums_bytes(entries));
  size_t blocks = (entries + 255) / 256;
  unsigned grid = blocks < LHK_SMOOTH_BLOCKS ? (unsigned)blocks : LHK_SMOOTH_BLOCKS;
  lhk_temporal_smooth_kernel<<<grid, 256, 0, stream>>>((const LhkTemporalHeader *)temporal, sums,
                                                       ring, luts, entries);
  LHK_CHECK_LAUNCH(stream);
  return cudaSuccess;
}

extern "C" void lhk_temporal_header_counts(const void *header_copy, int *frames,
                                           unsigned long long *cuts)
{
  const LhkTemporalHeader *h = (const LhkTemporalHeader *)header_copy;
  *frames = (int)h->frames;
  *cuts = h->cuts;
}
