/* sort.cu: LSD radix sort of 16- and 32-bit keys on the GPU, and the exact
 * percentiles of a frame's luma found by sorting its keys.
 *
 * One sort is:
 *   1. a counting kernel (lhk_sort_digit_counts, or lhk_sort_frame_keys, which
 *      also makes the luma keys of a frame) that reads every key once and
 *      counts, for every pass, how many keys hold each r-bit digit value:
 *      these totals are the bucket-major order's row sums of the block x
 *      bucket table, so bucket d of a pass starts after all keys of the
 *      buckets below d;
 *   2. one kernel per r-bit digit (lhk_sort_pass).  Each block loads a tile
 *      of BLOCK x ITEMS keys (thread coarsening: fewer, larger tiles make the
 *      local buckets longer, hence the writes more coalesced, and the table
 *      smaller), sorts the tile by the digit in shared memory (a stable
 *      counting sort: warp-level multi-split ranks plus a scan across warps
 *      and digits), publishes its per-bucket counts in the block x bucket
 *      table, and takes the exclusive scan of that table over the blocks
 *      before it in the same pass (a single-pass chained scan with decoupled
 *      look-back: a block publishes its own counts at once and the running
 *      prefix as soon as it has it, so no grid-wide barrier or extra launch is
 *      needed).  Bucket start + prefix gives where the tile's bucket goes; the
 *      locally sorted tile is then written out bucket by bucket, adjacent
 *      threads to adjacent addresses.
 * Tiles take their index from an atomic counter in launch order, so a block
 * only ever waits for blocks that are already running: the look-back always
 * finishes.
 *
 * The digit width r is a template parameter (4, 6 or 8 are built); the
 * default, LHK_SORT_RADIX_BITS, was chosen by measurement: lumahist-bench on
 * an H200 (132 SMs, 62.9 MB L2; median of 100 runs, inputs rotated past L2),
 * microseconds for r = 4 / 6 / 8 against cub::DeviceRadixSort:
 *   8.3M 16-bit keys (one 4K frame), uniform:   203 / 176 / 146   CUB 125
 *   8.3M 16-bit keys, 8-bit photo luma:         202 / 172 / 136   CUB 102
 *   8M 32-bit keys, uniform:                    424 / 364 / 290   CUB 272
 * Fewer passes win: every pass costs a full read and write of the keys and
 * a launch, and with 8192-key tiles even 256 buckets stay long enough for
 * coalesced writes; 8 also divides 16 and 32, so no pass sorts a partial
 * digit.  Passes whose digit is the same for every key are then skipped
 * (trivial_passes; the photo's high byte), r = 8 against CUB in one run
 * (tests/bench/results/h200-sort-skip-trivial.txt):
 *   8.3M 16-bit keys, uniform:  149.6 us, CUB 127.6 (1.17x slower)
 *   8.3M 16-bit keys, photo:     89.0 us, CUB 101.3 (1.14x faster; 136 before)
 *   8M 32-bit keys, uniform:    310.3 us, CUB 269.3 (1.15x slower; 290 before:
 *                               the plan's barriers and loads in each pass)
 * The plan then took one barrier per pass in every block; now the warps note
 * it beside the pass's own first barrier (note_trivial_passes), same run
 * (tests/bench/results/h200-sort-plan-one-barrier.txt):
 *   8M 32-bit keys, uniform:    300.9 us, CUB 269.2 (1.12x slower)
 *   8.3M 16-bit keys, uniform:  150.7 us, CUB 127.2; photo: 87.4 us, CUB 101.2 */
#include <cuda_runtime.h>

#include <stdint.h>
#include <string.h>

#include "lh-luma.h"
#include "lh-yuv.h"
#include "lhk-common.cuh"

/* Threads per block and keys per thread of a sort pass.  512 x 16 = 8192 keys
 * per tile; two blocks fit on an SM (registers are the limit). */
#define SORT_BLOCK 512
#define SORT_ITEMS 16
#define SORT_TILE (SORT_BLOCK * SORT_ITEMS)

/* Threads per block of the counting kernels, keys each thread counts at a
 * time (a run of equal digits among them costs one shared atomic), and
 * blocks per SM of their grid, which is sized to the GPU, not to the data. */
#define COUNT_BLOCK 256
#define COUNT_RUN 8
#define COUNT_BLOCKS_PER_SM 4

/* A block x bucket table entry: two flag bits over a 30-bit count, written
 * and read as one word so that a count is never seen without its flag. */
#define STATUS_AGGREGATE 0x40000000u /* this tile's own count */
#define STATUS_PREFIX 0x80000000u    /* the count of this tile and all before it */
#define STATUS_VALUE 0x3fffffffu

#define SCRATCH_ALIGN 256

/* ------------------------------------------------------------------------ */
/* Device helpers                                                            */

__device__ __forceinline__ uint32_t load_relaxed(const uint32_t *p)
{
  uint32_t v;
  asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}

__device__ __forceinline__ void store_relaxed(uint32_t *p, uint32_t v)
{
  asm volatile("st.relaxed.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

/* The lanes of this warp whose digit equals this lane's: one ballot per bit
 * (cheaper on Hopper than __match_any_sync).  Every lane must take part. */
template <int R> __device__ __forceinline__ uint32_t warp_match_digit(uint32_t digit)
{
  uint32_t peers = 0xffffffffu;
#pragma unroll
  for (int b = 0; b < R; b++) {
    uint32_t bit = (digit >> b) & 1u;
    uint32_t vote = __ballot_sync(0xffffffffu, bit);
    peers &= bit ? vote : ~vote;
  }
  return peers;
}

/* Exclusive scan of one value per thread over the block.  s_warp holds
 * BLOCK / 32 words; every thread must call. */
template <int BLOCK>
__device__ __forceinline__ uint64_t block_exclusive_scan(uint64_t value, uint64_t *s_warp)
{
  constexpr int WARPS = BLOCK / 32;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  uint64_t inclusive = value;
#pragma unroll
  for (int o = 1; o < 32; o <<= 1) {
    uint64_t t = __shfl_up_sync(0xffffffffu, inclusive, o);
    if (lane >= o)
      inclusive += t;
  }
  if (lane == 31)
    s_warp[warp] = inclusive;
  __syncthreads();
  if (warp == 0) {
    uint64_t total = lane < WARPS ? s_warp[lane] : 0, running = total;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
      uint64_t t = __shfl_up_sync(0xffffffffu, running, o);
      if (lane >= o)
        running += t;
    }
    if (lane < WARPS)
      s_warp[lane] = running - total;
  }
  __syncthreads();
  uint64_t result = s_warp[warp] + inclusive - value;
  __syncthreads(); /* s_warp may be reused by the caller's next scan */
  return result;
}

/* The digit of a pass covers bits [shift, min(shift + R, end_bit)): the last
 * pass of a range that R does not divide looks at no bit past end_bit. */
template <int R> __host__ __device__ __forceinline__ uint32_t digit_mask(int shift, int end_bit)
{
  const int bits = end_bit - shift < R ? end_bit - shift : R;
  return (1u << bits) - 1;
}

/* Adds a run of keys to the per-pass digit counts in shared memory: one
 * atomic per run of equal digits, so that constant input (a flat frame) does
 * not serialize all lanes on one counter. */
template <typename K, int R>
__device__ __forceinline__ void count_digits(uint32_t *s_counts, const uint32_t *keys, int n_keys,
                                             int begin_bit, int end_bit, int n_passes)
{
  constexpr uint32_t RADIX = 1u << R;
  constexpr int MAX_PASSES = (8 * (int)sizeof(K) + R - 1) / R;
#pragma unroll
  for (int p = 0; p < MAX_PASSES; p++) {
    if (p >= n_passes)
      break;
    const int shift = begin_bit + p * R;
    const uint32_t mask = digit_mask<R>(shift, end_bit);
    uint32_t current = (keys[0] >> shift) & mask, run = 1;
#pragma unroll
    for (int i = 1; i < COUNT_RUN; i++) {
      if (i >= n_keys)
        break;
      uint32_t d = (keys[i] >> shift) & mask;
      if (d == current) {
        run++;
      } else {
        atomicAdd(&s_counts[p * RADIX + current], run);
        current = d;
        run = 1;
      }
    }
    atomicAdd(&s_counts[p * RADIX + current], run);
  }
}

/* Zeroes the look-back table for the passes to come (grid-stride, 16 bytes a
 * store); the header with the totals was cleared by a memset before. */
__device__ __forceinline__ void zero_words(uint4 *words16, size_t n16)
{
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n16;
       i += (size_t)gridDim.x * blockDim.x)
    words16[i] = make_uint4(0, 0, 0, 0);
}

template <int R, int MAX_PASSES>
__device__ __forceinline__ void flush_counts(const uint32_t *s_counts, uint32_t *totals,
                                             int n_passes)
{
  for (int i = threadIdx.x; i < n_passes * (1 << R); i += blockDim.x)
    if (s_counts[i])
      atomicAdd(&totals[i], s_counts[i]);
}

/* ------------------------------------------------------------------------ */
/* Kernels                                                                   */

/* Counts the digits of every pass over an array of keys, and clears the
 * look-back table.  Each thread counts COUNT_RUN consecutive keys at a time. */
template <typename K, int R>
__global__ void __launch_bounds__(COUNT_BLOCK)
    lhk_sort_digit_counts(const K *__restrict__ keys, uint32_t n, int begin_bit, int end_bit,
                          int n_passes, uint32_t *__restrict__ totals, uint4 *status16,
                          size_t n_status16)
{
  constexpr int MAX_PASSES = (8 * (int)sizeof(K) + R - 1) / R;
  __shared__ uint32_t s_counts[MAX_PASSES << R];
  for (int i = threadIdx.x; i < (MAX_PASSES << R); i += COUNT_BLOCK)
    s_counts[i] = 0;
  zero_words(status16, n_status16);
  __syncthreads();

  const uint32_t n_groups = (n + COUNT_RUN - 1) / COUNT_RUN;
  for (uint32_t g = blockIdx.x * COUNT_BLOCK + threadIdx.x; g < n_groups;
       g += gridDim.x * COUNT_BLOCK) {
    uint32_t run[COUNT_RUN];
    const uint32_t first = g * COUNT_RUN;
    const int n_keys = n - first < COUNT_RUN ? (int)(n - first) : COUNT_RUN;
#pragma unroll
    for (int i = 0; i < COUNT_RUN; i++)
      run[i] = i < n_keys ? keys[first + i] : 0;
    count_digits<K, R>(s_counts, run, n_keys, begin_bit, end_bit, n_passes);
  }
  __syncthreads();
  flush_counts<R, MAX_PASSES>(s_counts, totals, n_passes);
}

/* The luma key of pixel x of a row: the definition of lh-luma.h, read as
 * LhkImage describes it (weights permuted to the sample order, Y16 shifted
 * then clamped), so that it equals the histogram kernels' bin and the CPU
 * backend's key.  A local copy: histogram.cu keeps its loads to itself. */
template <int PIXEL>
__device__ __forceinline__ uint32_t luma_key(const LhkImage &image, const uint8_t *row, uint32_t x)
{
  if (PIXEL == LHK_PIXEL_Y8)
    return row[x];
  if (PIXEL == LHK_PIXEL_Y16) {
    /* byte loads: packed 4:2:2 rows may start at odd addresses */
    const uint32_t v = (uint32_t)row[2 * (size_t)x] | (uint32_t)row[2 * (size_t)x + 1] << 8;
    return lhi_word_luma(image.swap ? lhi_swap16(v) : v, ~image.keep & 0xffffu, image.shift,
                         image.max_value);
  }
  if (PIXEL == LHK_PIXEL_V210) {
    /* the word of Y (x mod 6) in its group, read byte by byte (any alignment) */
    const int field = lhi_v210_y_field((int)(x % LHI_V210_GROUP_PIXELS));
    const uint8_t *group = row + (size_t)(x / LHI_V210_GROUP_PIXELS) * LHI_V210_GROUP_BYTES;
    return (lhk_load_word(group + 4 * (field / 3), 0) >> (10 * (field % 3))) & 0x3ffu;
  }
  uint32_t s0, s1, s2;
  if (PIXEL == LHK_PIXEL_RGB10) {
    const uint32_t word = lhk_load_word(row + (size_t)x * 4, image.swap_bytes);
    s0 = lhi_packed10_field(word, 0);
    s1 = lhi_packed10_field(word, 1);
    s2 = lhi_packed10_field(word, 2);
  } else if (PIXEL == LHK_PIXEL_RGB8 || PIXEL == LHK_PIXEL_RGBA8) {
    const uint8_t *px = row + (size_t)x * (PIXEL == LHK_PIXEL_RGB8 ? 3 : 4);
    s0 = px[0];
    s1 = px[1];
    s2 = px[2];
  } else {
    const uint16_t *px = (const uint16_t *)row + (size_t)x * (PIXEL == LHK_PIXEL_RGB16 ? 3 : 4);
    s0 = px[0];
    s1 = px[1];
    s2 = px[2];
  }
  const LhiLumaWeights w = {image.weights[0], image.weights[1], image.weights[2], image.luma_one};
  const uint32_t v = (PIXEL == LHK_PIXEL_RGB8 || PIXEL == LHK_PIXEL_RGBA8)
                         ? lhi_luma(s0, s1, s2, w)
                         : lhi_luma_wide(s0, s1, s2, w);
  return v > image.max_value ? image.max_value : v;
}

/* Makes the 16-bit luma keys of a frame (row-major, pitch removed), counts
 * their digits for every pass and clears the look-back table.  The grid is
 * sized to the GPU; a work item is COUNT_BLOCK x COUNT_RUN pixels of a row,
 * adjacent threads reading adjacent pixels. */
template <int PIXEL, int R>
__global__ void __launch_bounds__(COUNT_BLOCK)
    lhk_sort_frame_keys(LhkImage src, uint16_t *__restrict__ keys, int end_bit, int n_passes,
                        uint32_t *__restrict__ totals, uint4 *status16, size_t n_status16)
{
  constexpr int MAX_PASSES = (16 + R - 1) / R;
  constexpr uint32_t CHUNK = COUNT_BLOCK * COUNT_RUN;
  __shared__ uint32_t s_counts[MAX_PASSES << R];
  for (int i = threadIdx.x; i < (MAX_PASSES << R); i += COUNT_BLOCK)
    s_counts[i] = 0;
  zero_words(status16, n_status16);
  __syncthreads();

  const uint32_t chunks_per_row = (src.width + CHUNK - 1) / CHUNK;
  const uint32_t n_items = chunks_per_row * src.height;
  for (uint32_t item = blockIdx.x; item < n_items; item += gridDim.x) {
    const uint32_t y = item / chunks_per_row;
    const uint32_t x0 = (item - y * chunks_per_row) * CHUNK + threadIdx.x;
    const uint8_t *row = (const uint8_t *)src.data + (size_t)y * src.stride;
    uint16_t *out = keys + (size_t)y * src.width;
    uint32_t run[COUNT_RUN];
    int n_keys = 0;
#pragma unroll
    for (int i = 0; i < COUNT_RUN; i++) {
      const uint32_t x = x0 + i * COUNT_BLOCK;
      if (x < src.width) {
        run[i] = luma_key<PIXEL>(src, row, x);
        out[x] = (uint16_t)run[i];
        n_keys = i + 1;
      }
    }
    if (n_keys > 0)
      count_digits<uint16_t, R>(s_counts, run, n_keys, 0, end_bit, n_passes);
  }
  __syncthreads();
  flush_counts<R, MAX_PASSES>(s_counts, totals, n_passes);
}

/* Pass `pass` of n_passes whose digits are all one value for every key (8-bit
 * luma in 16-bit keys: the high byte) would only copy the keys: with
 * skip_trivial, such passes are left out, as CUB leaves them out.  The digit
 * totals of every pass are known before the first pass, so each pass works
 * out the same plan: the non-trivial passes alternate between out and alt so
 * that the last one writes out, and the first reads in.  in and out must then
 * differ; when every pass is trivial the last one copies in to out.
 *
 * A pass is trivial when one of its digits counts every key.  Each warp
 * looks at its share of all the passes' totals and leaves a word of the
 * passes it found trivial; after the block's next barrier the words, ORed,
 * are the plan (trivial_passes): one barrier shared with the pass's own, not
 * one per pass. */
template <int R>
__device__ __forceinline__ void note_trivial_passes(const uint32_t *totals, int n_passes,
                                                    uint32_t n, uint32_t *warp_words)
{
  uint32_t mine = 0;
  for (uint32_t e = threadIdx.x; e < ((uint32_t)n_passes << R); e += SORT_BLOCK)
    if (totals[e] == n)
      mine |= 1u << (e >> R);
  for (int offset = 16; offset > 0; offset >>= 1)
    mine |= __shfl_xor_sync(0xffffffffu, mine, offset);
  if ((threadIdx.x & 31) == 0)
    warp_words[threadIdx.x >> 5] = mine;
}

template <int WARPS> __device__ __forceinline__ uint32_t trivial_passes(const uint32_t *warp_words)
{
  uint32_t trivial = 0;
#pragma unroll
  for (int w = 0; w < WARPS; w++)
    trivial |= warp_words[w];
  return trivial;
}

/* One LSD pass: the keys of in, stably sorted by the digit (key >> shift) &
 * mask (at most R bits) to out.  totals holds every pass's count of each
 * digit over all keys; status is this pass's block x bucket table (zeroed),
 * tile_counter its tile-order counter (zeroed).  With skip_trivial, in, out
 * and alt are the sort's input, output and spare buffer, and the pass picks
 * its own (note_trivial_passes above); without, it reads in and writes out. */
template <typename K, int R>
__global__ void __launch_bounds__(SORT_BLOCK, 2)
    lhk_sort_pass(const K *in, K *out, K *alt, uint32_t n, int shift, uint32_t mask,
                  const uint32_t *__restrict__ totals, int pass, int n_passes, int skip_trivial,
                  uint32_t *status, uint32_t *tile_counter)
{
  const uint32_t *digit_totals = totals + (size_t)pass * (1u << R);
  constexpr uint32_t RADIX = 1u << R;
  constexpr int WARPS = SORT_BLOCK / 32;
  static_assert(RADIX <= SORT_BLOCK, "one thread per digit");
  /* The warps' digit counts are dead once the positions are known, when the
   * tile is scattered into the same memory. */
  __shared__ union {
    uint32_t warp_counts[WARPS][RADIX];
    K keys[SORT_TILE];
  } s;
  __shared__ uint32_t s_offset[RADIX];
  __shared__ uint64_t s_scan[WARPS];
  __shared__ uint32_t s_tile;
  __shared__ uint32_t s_trivial_words[WARPS];

  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  if (tid == 0)
    s_tile = atomicAdd(tile_counter, 1u);
  for (int i = tid; i < WARPS * (int)RADIX; i += SORT_BLOCK)
    (&s.warp_counts[0][0])[i] = 0;
  if (skip_trivial)
    note_trivial_passes<R>(totals, n_passes, n, s_trivial_words);
  __syncthreads();
  const uint32_t tile = s_tile;
  const uint32_t base = tile * SORT_TILE;
  const uint32_t n_valid = n - base < SORT_TILE ? n - base : SORT_TILE;
  if (skip_trivial) {
    const uint32_t trivial = trivial_passes<WARPS>(s_trivial_words);
    const uint32_t all = (1u << n_passes) - 1, from_here = all & ~((1u << pass) - 1);
    if (trivial >> pass & 1) {
      if (trivial == all && pass == n_passes - 1)
        for (uint32_t j = tid; j < n_valid; j += SORT_BLOCK)
          out[base + j] = in[base + j];
      return;
    }
    /* Non-trivial passes before this one, and from this one on. */
    const int before = __popc(~trivial & all & ~from_here), left = __popc(~trivial & from_here);
    K *const dst = ((left - 1) & 1) ? alt : out;
    in = before == 0 ? in : ((left & 1) ? alt : out);
    out = dst;
  }

  /* Warp-striped: warp w holds keys [32 ITEMS w, 32 ITEMS (w + 1)) of the
   * tile, item i of lane l is key 32 i + l of those, so the loads are
   * coalesced and (warp, item, lane) is the input order.  Keys past the end
   * become the largest key, whose digit is the largest any key can have
   * here: they sort to the tile's very end and are never counted or written. */
  const K pad_key = (K) ~(K)0;
  const uint32_t pad_digit = ((uint32_t)pad_key >> shift) & mask;
  K key[SORT_ITEMS];
  uint32_t pos[SORT_ITEMS];
  const uint32_t warp_first = base + (uint32_t)warp * 32 * SORT_ITEMS + lane;
#pragma unroll
  for (int i = 0; i < SORT_ITEMS; i++) {
    const uint32_t idx = warp_first + i * 32;
    key[i] = idx < n ? in[idx] : pad_key;
  }

  /* Rank of each key among the equal digits of its warp that come before
   * it: the earlier items' counts plus the lower lanes of the same item. */
  const uint32_t lanes_below = (1u << lane) - 1;
  uint32_t *my_counts = s.warp_counts[warp];
#pragma unroll
  for (int i = 0; i < SORT_ITEMS; i++) {
    const uint32_t d = ((uint32_t)key[i] >> shift) & mask;
    const uint32_t peers = warp_match_digit<R>(d);
    const uint32_t below = peers & lanes_below;
    const uint32_t before = my_counts[d];
    __syncwarp();
    if (below == 0)
      my_counts[d] = before + __popc(peers);
    __syncwarp();
    pos[i] = before + __popc(below);
  }
  __syncthreads();

  /* Thread d: the exclusive scan of digit d over the warps, and the tile's
   * count of d, which is published at once for the tiles after this one. */
  uint32_t count = 0;
  if (tid < (int)RADIX) {
#pragma unroll
    for (int w = 0; w < WARPS; w++) {
      uint32_t c = s.warp_counts[w][tid];
      s.warp_counts[w][tid] = count;
      count += c;
    }
    if (tid == (int)pad_digit)
      count -= SORT_TILE - n_valid;
    store_relaxed(&status[tile * RADIX + tid],
                  (tile == 0 ? STATUS_PREFIX : STATUS_AGGREGATE) | count);
  }

  /* Where each bucket starts in the tile (low word) and, over all keys, in
   * this pass's output (high word), in one scan over the digits. */
  uint64_t packed = 0;
  if (tid < (int)RADIX)
    packed = ((uint64_t)digit_totals[tid] << 32) | count;
  const uint64_t starts = block_exclusive_scan<SORT_BLOCK>(packed, s_scan);
  const uint32_t local_start = (uint32_t)starts, bucket_start = (uint32_t)(starts >> 32);
  if (tid < (int)RADIX)
    s_offset[tid] = local_start;
  __syncthreads();

#pragma unroll
  for (int i = 0; i < SORT_ITEMS; i++) {
    const uint32_t d = ((uint32_t)key[i] >> shift) & mask;
    pos[i] += s_offset[d] + my_counts[d];
  }
  __syncthreads();
#pragma unroll
  for (int i = 0; i < SORT_ITEMS; i++)
    s.keys[pos[i]] = key[i];

  /* Look-back: the keys of digit d in the tiles before this one.  A tile
   * that has only its own count is added and passed over; the first with a
   * running prefix ends the walk. */
  if (tid < (int)RADIX) {
    uint32_t prefix = 0;
    if (tile > 0) {
      int64_t t = (int64_t)tile - 1;
      for (;;) {
        const uint32_t v = load_relaxed(&status[(uint32_t)t * RADIX + tid]);
        if ((v & (STATUS_AGGREGATE | STATUS_PREFIX)) == 0)
          continue;
        prefix += v & STATUS_VALUE;
        if (v & STATUS_PREFIX)
          break;
        t--;
      }
      store_relaxed(&status[tile * RADIX + tid], STATUS_PREFIX | (prefix + count));
    }
    /* Output index of local position j of bucket d is this plus j. */
    s_offset[tid] = bucket_start + prefix - local_start;
  }
  __syncthreads();

#pragma unroll
  for (int i = 0; i < SORT_ITEMS; i++) {
    const uint32_t j = tid + i * SORT_BLOCK;
    if (j < n_valid) {
      const K k = s.keys[j];
      out[s_offset[((uint32_t)k >> shift) & mask] + j] = k;
    }
  }
}

/* The values at the requested 1-based ranks of the sorted keys. */
struct RankList {
  int n;
  unsigned long long rank[LHK_MAX_RANKS];
};

__global__ void lhk_sort_read_ranks(const uint16_t *__restrict__ sorted, RankList ranks,
                                    uint32_t *__restrict__ values)
{
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < ranks.n)
    values[i] = sorted[ranks.rank[i] - 1];
}

/* ------------------------------------------------------------------------ */
/* Host side                                                                 */

static size_t align_up(size_t v)
{
  return (v + SCRATCH_ALIGN - 1) & ~(size_t)(SCRATCH_ALIGN - 1);
}

/* How a sort lays out its scratch memory. */
typedef struct {
  int passes;
  uint32_t n_tiles;
  size_t header_bytes;  /* at 0: passes x 2^r digit totals, then passes tile counters */
  size_t status_offset; /* passes x n_tiles x 2^r look-back entries */
  size_t status_bytes;
  size_t keys_offset[2]; /* key buffers for the passes between */
  size_t total_bytes;
} SortPlan;

static void plan_sort(uint64_t n, int key_bytes, int radix_bits, int bits, int n_key_buffers,
                      SortPlan *plan)
{
  memset(plan, 0, sizeof *plan);
  plan->passes = bits <= 0 ? 0 : (bits + radix_bits - 1) / radix_bits;
  plan->n_tiles = (uint32_t)((n + SORT_TILE - 1) / SORT_TILE);
  const size_t radix = (size_t)1 << radix_bits;
  plan->header_bytes = (size_t)plan->passes * (radix + 1) * sizeof(uint32_t);
  plan->status_offset = align_up(plan->header_bytes);
  plan->status_bytes = align_up((size_t)plan->passes * plan->n_tiles * radix * sizeof(uint32_t));
  size_t offset = plan->status_offset + plan->status_bytes;
  for (int i = 0; i < n_key_buffers; i++) {
    plan->keys_offset[i] = offset;
    offset += align_up((size_t)n * (size_t)key_bytes);
  }
  plan->total_bytes = offset;
}

static bool valid_radix_bits(int *radix_bits)
{
  if (*radix_bits == 0)
    *radix_bits = LHK_SORT_RADIX_BITS;
  return *radix_bits == 4 || *radix_bits == 6 || *radix_bits == 8;
}

static unsigned counting_grid(const LhkDevice *device, uint64_t work_items)
{
  uint64_t blocks = (uint64_t)device->sm_count * COUNT_BLOCKS_PER_SM;
  if (work_items < blocks)
    blocks = work_items;
  return blocks ? (unsigned)blocks : 1u;
}

/* The passes of a plan: keys go from in through the other buffer to out,
 * the two alternating so that the last pass writes out. */
template <typename K, int R>
static cudaError_t run_passes(const SortPlan *plan, const K *in, K *out, K *alt, uint32_t n,
                              int begin_bit, int end_bit, int skip_trivial, uint8_t *scratch,
                              cudaStream_t stream)
{
  constexpr uint32_t RADIX = 1u << R;
  uint32_t *totals = (uint32_t *)scratch;
  uint32_t *counters = totals + (size_t)plan->passes * RADIX;
  uint32_t *status = (uint32_t *)(scratch + plan->status_offset);
  const K *src = in;
  for (int p = 0; p < plan->passes; p++) {
    K *dst = ((plan->passes - 1 - p) & 1) ? alt : out;
    const int shift = begin_bit + p * R;
    lhk_sort_pass<K, R><<<plan->n_tiles, SORT_BLOCK, 0, stream>>>(
        skip_trivial ? in : src, skip_trivial ? out : dst, alt, n, shift,
        digit_mask<R>(shift, end_bit), totals, p, plan->passes, skip_trivial,
        status + (size_t)p * plan->n_tiles * RADIX, counters + p);
    LHK_CHECK_LAUNCH(stream);
    src = dst;
  }
  return cudaSuccess;
}

template <typename K, int R>
static cudaError_t radix_sort(const LhkDevice *device, const K *in, K *out, uint32_t n,
                              int begin_bit, int end_bit, const SortPlan *plan, uint8_t *scratch,
                              cudaStream_t stream)
{
  const unsigned grid = counting_grid(device, (n + COUNT_RUN - 1) / COUNT_RUN / COUNT_BLOCK + 1);
  LHK_RETURN_IF_ERROR(cudaMemsetAsync(scratch, 0, plan->header_bytes, stream));
  lhk_sort_digit_counts<K, R><<<grid, COUNT_BLOCK, 0, stream>>>(
      in, n, begin_bit, end_bit, plan->passes, (uint32_t *)scratch,
      (uint4 *)(scratch + plan->status_offset), plan->status_bytes / sizeof(uint4));
  LHK_CHECK_LAUNCH(stream);
  return run_passes<K, R>(plan, in, out, (K *)(scratch + plan->keys_offset[0]), n, begin_bit,
                          end_bit, 1, scratch, stream);
}

template <typename K>
static cudaError_t radix_sort_any(const LhkDevice *device, const K *d_in, K *d_out, uint64_t n,
                                  int begin_bit, int end_bit, int radix_bits, void *d_scratch,
                                  size_t scratch_bytes, cudaStream_t stream)
{
  const int key_bits = 8 * (int)sizeof(K);
  if (!device || !valid_radix_bits(&radix_bits) || begin_bit < 0 || end_bit > key_bits ||
      begin_bit > end_bit || n > LHK_SORT_MAX_KEYS)
    return cudaErrorInvalidValue;
  if (n == 0)
    return cudaSuccess;
  if (!d_in || !d_out || d_in == d_out)
    return cudaErrorInvalidValue;
  SortPlan plan;
  plan_sort(n, sizeof(K), radix_bits, end_bit - begin_bit, 1, &plan);
  if (plan.passes == 0)
    return cudaMemcpyAsync(d_out, d_in, n * sizeof(K), cudaMemcpyDeviceToDevice, stream);
  if (!d_scratch || scratch_bytes < plan.total_bytes)
    return cudaErrorInvalidValue;
  uint8_t *scratch = (uint8_t *)d_scratch;
  switch (radix_bits) {
  case 4:
    return radix_sort<K, 4>(device, d_in, d_out, (uint32_t)n, begin_bit, end_bit, &plan, scratch,
                            stream);
  case 6:
    return radix_sort<K, 6>(device, d_in, d_out, (uint32_t)n, begin_bit, end_bit, &plan, scratch,
                            stream);
  default:
    return radix_sort<K, 8>(device, d_in, d_out, (uint32_t)n, begin_bit, end_bit, &plan, scratch,
                            stream);
  }
}

size_t lhk_radix_sort_scratch_bytes(uint64_t n, int key_bytes, int radix_bits)
{
  if (!valid_radix_bits(&radix_bits) || (key_bytes != 2 && key_bytes != 4))
    return 0;
  SortPlan plan;
  plan_sort(n, key_bytes, radix_bits, 8 * key_bytes, 1, &plan);
  return plan.total_bytes;
}

cudaError_t lhk_radix_sort_u16(const LhkDevice *device, const uint16_t *d_in, uint16_t *d_out,
                               uint64_t n, int begin_bit, int end_bit, int radix_bits,
                               void *d_scratch, size_t scratch_bytes, cudaStream_t stream)
{
  return radix_sort_any<uint16_t>(device, d_in, d_out, n, begin_bit, end_bit, radix_bits, d_scratch,
                                  scratch_bytes, stream);
}

cudaError_t lhk_radix_sort_u32(const LhkDevice *device, const uint32_t *d_in, uint32_t *d_out,
                               uint64_t n, int begin_bit, int end_bit, int radix_bits,
                               void *d_scratch, size_t scratch_bytes, cudaStream_t stream)
{
  return radix_sort_any<uint32_t>(device, d_in, d_out, n, begin_bit, end_bit, radix_bits, d_scratch,
                                  scratch_bytes, stream);
}

/* ------------------------------------------------------------------------ */
/* Percentiles by sorting a frame's luma keys                                */

static void plan_percentiles(uint64_t n, int bit_depth, SortPlan *plan)
{
  plan_sort(n, sizeof(uint16_t), LHK_SORT_RADIX_BITS, bit_depth, 2, plan);
}

size_t lhk_sort_scratch_bytes(uint64_t n_keys)
{
  SortPlan plan;
  plan_percentiles(n_keys, 16, &plan);
  return plan.total_bytes;
}

template <int PIXEL, int R>
static cudaError_t launch_frame_keys(const LhkDevice *device, const LhkImage *image, int bit_depth,
                                     const SortPlan *plan, uint8_t *scratch, cudaStream_t stream)
{
  const uint32_t chunk = COUNT_BLOCK * COUNT_RUN;
  const unsigned grid =
      counting_grid(device, (uint64_t)((image->width + chunk - 1) / chunk) * image->height);
  lhk_sort_frame_keys<PIXEL, R><<<grid, COUNT_BLOCK, 0, stream>>>(
      *image, (uint16_t *)(scratch + plan->keys_offset[0]), bit_depth, plan->passes,
      (uint32_t *)scratch, (uint4 *)(scratch + plan->status_offset),
      plan->status_bytes / sizeof(uint4));
  LHK_CHECK_LAUNCH(stream);
  return cudaSuccess;
}

template <int R>
static cudaError_t sort_frame(const LhkDevice *device, LhkPixel pixel, const LhkImage *image,
                              int bit_depth, const SortPlan *plan, uint8_t *scratch,
                              uint16_t **sorted, cudaStream_t stream)
{
  LHK_RETURN_IF_ERROR(cudaMemsetAsync(scratch, 0, plan->header_bytes, stream));
  cudaError_t error;
  switch (pixel) {
  case LHK_PIXEL_Y8:
    error = launch_frame_keys<LHK_PIXEL_Y8, R>(device, image, bit_depth, plan, scratch, stream);
    break;
  case LHK_PIXEL_Y16:
    error = launch_frame_keys<LHK_PIXEL_Y16, R>(device, image, bit_depth, plan, scratch, stream);
    break;
  case LHK_PIXEL_RGB8:
    error = launch_frame_keys<LHK_PIXEL_RGB8, R>(device, image, bit_depth, plan, scratch, stream);
    break;
  case LHK_PIXEL_RGBA8:
    error = launch_frame_keys<LHK_PIXEL_RGBA8, R>(device, image, bit_depth, plan, scratch, stream);
    break;
  case LHK_PIXEL_RGB16:
    error = launch_frame_keys<LHK_PIXEL_RGB16, R>(device, image, bit_depth, plan, scratch, stream);
    break;
  case LHK_PIXEL_RGBA16:
    error = launch_frame_keys<LHK_PIXEL_RGBA16, R>(device, image, bit_depth, plan, scratch, stream);
    break;
  case LHK_PIXEL_RGB10:
    error = launch_frame_keys<LHK_PIXEL_RGB10, R>(device, image, bit_depth, plan, scratch, stream);
    break;
  case LHK_PIXEL_V210:
    error = launch_frame_keys<LHK_PIXEL_V210, R>(device, image, bit_depth, plan, scratch, stream);
    break;
  default:
    return cudaErrorInvalidValue;
  }
  if (error != cudaSuccess)
    return error;
  /* The keys sit in buffer 0 and the passes alternate 0 -> 1 -> 0 ...: an
   * odd number of passes ends in buffer 1. */
  uint16_t *keys = (uint16_t *)(scratch + plan->keys_offset[0]);
  uint16_t *alt = (uint16_t *)(scratch + plan->keys_offset[1]);
  uint16_t *out = (plan->passes & 1) ? alt : keys;
  uint16_t *other = (plan->passes & 1) ? keys : alt;
  *sorted = out;
  /* The passes are as many as the depth's bits need (one for 8 bits), and
   * keys may be out: no pass is skipped. */
  return run_passes<uint16_t, R>(plan, keys, out, other, image->width * image->height, 0, bit_depth,
                                 0, scratch, stream);
}

cudaError_t lhk_sort_percentiles(const LhkDevice *device, LhkPixel pixel, const LhkImage *image,
                                 int bit_depth, const unsigned long long *ranks, int n_ranks,
                                 uint32_t *d_values, void *d_scratch, size_t scratch_bytes,
                                 cudaStream_t stream)
{
  if (!device || !image || !image->data || (n_ranks > 0 && (!ranks || !d_values)) || n_ranks < 0 ||
      n_ranks > LHK_MAX_RANKS || bit_depth < 1 || bit_depth > 16)
    return cudaErrorInvalidValue;
  const uint64_t n = (uint64_t)image->width * image->height;
  if (n == 0 || n > LHK_SORT_MAX_KEYS)
    return cudaErrorInvalidValue;
  RankList list;
  list.n = n_ranks;
  for (int i = 0; i < n_ranks; i++) {
    if (ranks[i] < 1 || ranks[i] > n)
      return cudaErrorInvalidValue;
    list.rank[i] = ranks[i];
  }
  SortPlan plan;
  plan_percentiles(n, bit_depth, &plan);
  if (!d_scratch || scratch_bytes < plan.total_bytes)
    return cudaErrorInvalidValue;
  uint16_t *sorted = NULL;
  LHK_RETURN_IF_ERROR(sort_frame<LHK_SORT_RADIX_BITS>(device, pixel, image, bit_depth, &plan,
                                                      (uint8_t *)d_scratch, &sorted, stream));
  if (n_ranks > 0) {
    lhk_sort_read_ranks<<<1, 128, 0, stream>>>(sorted, list, d_values);
    LHK_CHECK_LAUNCH(stream);
  }
  return cudaSuccess;
}
