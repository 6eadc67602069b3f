/* histogram.cu: the luma histogram of frames in device memory: privatized
 * sub-histograms, coarsened threads reading 16-byte words, runs of equal bins
 * counted in registers, luma computed from RGB in the same pass. */
#include <stdlib.h>
#include <string.h>

#include <cuda/atomic>

#include "lh-luma.h"
#include "lh-yuv.h"
#include "scan.cuh"

/* --- Tunables --------------------------------------------------------------
 * Shared-memory bytes of one block's sub-histograms (bins x copies x 4): with
 * 256 bins, 32 copies, one per lane, so no two lanes of a warp ever touch the
 * same bank; 4 such blocks of 512 threads fill an SM's 2048 threads. */
#define LHK_SHARED_HISTOGRAM_BYTES 32768
/* Global-memory private copies per histogram above 4096 bins; block b adds to
 * copy b % LHK_GLOBAL_COPIES, so that a hot bin is spread over that many L2
 * addresses. */
#define LHK_GLOBAL_COPIES 8
/* Resident blocks per SM the histogram kernels are compiled for: it caps
 * their registers (65536 / (512 x blocks)). */
#ifndef LHK_HISTOGRAM_MIN_BLOCKS
#define LHK_HISTOGRAM_MIN_BLOCKS 2
#endif
/* Bytes of shared memory a block of a cluster holds of the bins of a
 * histogram of more than 4096 (lhk_cluster_histogram_kernel): 65536 bins
 * take clusters of 2 blocks.  One 4K 16-bit frame, H200 (lumahist-bench
 * --only wide): global copies 109 us (uniform) / 112 (photo), clusters of 2
 * 68 / 71, of 4 103 / 132, of 8 120 / 167, of 16 129 / 182: an add into
 * another SM's shared memory costs about what an L2 atomic does, and every
 * cluster adds its 65536 counters to the histogram at the end, so the
 * fewer blocks a cluster the better, as long as the bins fit. */
#ifndef LHK_CLUSTER_SLICE_BYTES
#define LHK_CLUSTER_SLICE_BYTES 131072
#endif
/* Blocks of the merge of the global copies. */
#define LHK_MERGE_THREADS 256
/* Bytes at the start of the scratch for the fused path's block tickets. */
#define LHK_TICKET_BYTES 256
/* Copies of a fused histogram of more than LHK_BLOCK_THREADS bins (10 and
 * 12 bits), block b committing to copy b % copies: more copies spread a hot
 * bin's 64-bit atomics over more L2 addresses (some 264 blocks commit a 4K
 * frame), fewer cost the finishing block fewer loads (4096 bins are 32 KiB a
 * copy).  2 is a guess between the two, not a measurement: the environment
 * variable LHK_FUSED_WIDE_COPIES=1, 2 or 4 picks another at run time. */
#ifndef LHK_FUSED_WIDE_COPIES
#define LHK_FUSED_WIDE_COPIES 2
#endif
#define LHK_FUSED_WIDE_MAX_COPIES 4
/* 8-bit gray: the kernel of lhk_gray8_variants[] that lhk_histogram and
 * lhk_histogram_finish use, chosen by measurement on an H200 (kernels/NOTES.md). */
#define LHK_GRAY8_DEFAULT 1
/* The same for lhk_histogram_finish, one 4K frame: "unit-flat 1 set x2 2
 * blocks", 8.8 / 9.4 / 8.5 us (uniform / photo / single) against 10.1 / 9.4 /
 * 9.3 for the same with 3 blocks and 10.1 / 10.5 / 9.4 for the default (H200,
 * kernels/NOTES.md); a device that cannot hold it takes the default. */
#define LHK_GRAY8_FUSED_DEFAULT 9
/* Fewer resident blocks per SM than this (GPUs with less shared memory, such
 * as sm_75's 64 KiB a block or sm_86's 100 KiB an SM), and the default gives
 * way to variant 0, the 32 KiB one. */
#define LHK_GRAY8_MIN_RESIDENT 2

/* --- Pixel layouts ---------------------------------------------------------
 * A unit is what one thread reads at a time in the middle of a row: VEC
 * aligned 16-byte words holding PX whole pixels.  UNROLL units are loaded
 * before any is counted, so that each thread has 32 to 96 bytes in flight. */
template <int PIXEL> struct LhkLayout;
template <> struct LhkLayout<LHK_PIXEL_Y8> {
  enum { BPP = 1, VEC = 1, PX = 16, UNROLL = 4 };
};
template <> struct LhkLayout<LHK_PIXEL_Y16> {
  enum { BPP = 2, VEC = 1, PX = 8, UNROLL = 4 };
};
template <> struct LhkLayout<LHK_PIXEL_RGB8> {
  enum { BPP = 3, VEC = 3, PX = 16, UNROLL = 2 };
};
template <> struct LhkLayout<LHK_PIXEL_RGBA8> {
  enum { BPP = 4, VEC = 2, PX = 8, UNROLL = 2 };
};
template <> struct LhkLayout<LHK_PIXEL_RGB16> {
  enum { BPP = 6, VEC = 3, PX = 8, UNROLL = 2 };
};
template <> struct LhkLayout<LHK_PIXEL_RGBA16> {
  enum { BPP = 8, VEC = 2, PX = 4, UNROLL = 2 };
};
template <> struct LhkLayout<LHK_PIXEL_RGB10> {
  enum { BPP = 4, VEC = 1, PX = 4, UNROLL = 4 };
};
/* v210: a unit is one group of 6 pixels (BPP: the group's bytes), counted
 * by lhk_count_v210, not by the pixel walk of lhk_count_image. */
template <> struct LhkLayout<LHK_PIXEL_V210> {
  enum { BPP = 16, VEC = 1, PX = 6, UNROLL = 4 };
};
/* Packed 4:2:2 (YUY2, YVYU, UYVY, VYUY) at 8 bits: LHK_PIXEL_Y16 images
 * whose Y is one byte of each 16-bit word (lhk_packed422_image), counted by
 * the 8-bit kernel (lhk_gray8_kernel): a unit is two 16-byte words, 16
 * pixels, whose 16 Y bytes one PRMT per pair of 32-bit words gathers into
 * the 16-byte unit LhkGray8Counter counts.  Not an LhkPixel of its own:
 * only the histogram launchers tell these images apart. */
enum { LHK_PIXEL_PACKED422 = LHK_PIXEL_COUNT + 1 };
template <> struct LhkLayout<LHK_PIXEL_PACKED422> {
  enum { BPP = 2, VEC = 2, PX = 16, UNROLL = 2 };
};

/* How the kernel privatizes: shared sub-histograms, the same with the last
 * block finishing the frame, or global copies (more than 4096 bins). */
enum { LHK_MODE_SHARED, LHK_MODE_FUSED, LHK_MODE_GLOBAL };

struct LhkHistogramParams {
  LhkImage images[LHK_MAX_IMAGES];
  uint32_t bins;
  lhk_u64 *histograms;
  void *scratch;
  LhkFinish finish; /* LHK_MODE_FUSED */
};

/* The per-image constants of the luma, held in registers. */
struct LhkLuma {
  LhiLumaWeights weights;
  uint32_t shift;
  uint32_t max_value;
  uint32_t mask;      /* Y16: the bits of a word that are Y */
  uint32_t select[2]; /* Y16: the byte permutation of the low and high word of 32 bits */
  uint32_t swap_bytes; /* RGB10: big-endian words (r210) */
  uint32_t y_select;   /* PACKED422: the PRMT selector of the Y bytes of two words (0x6420 for
                          Y in the low byte of each word, 0x7531 in the high) */
};

/* The luma of a packed 10-bit word (LHK_PIXEL_RGB10), in its byte order. */
__device__ __forceinline__ uint32_t lhk_packed10_luma(uint32_t word, const LhkLuma &l)
{
  return lhi_luma_wide(lhi_packed10_field(word, 0), lhi_packed10_field(word, 1),
                       lhi_packed10_field(word, 2), l.weights);
}

/* Sample i of a unit's words, by one byte permutation (PRMT) each. */
__device__ __forceinline__ uint32_t lhk_byte(const uint32_t *w, int i)
{
  return __byte_perm(w[i >> 2], 0, 0x4440 | (i & 3));
}
__device__ __forceinline__ uint32_t lhk_half(const uint32_t *w, int i)
{
  return __byte_perm(w[i >> 1], 0, (i & 1) ? 0x4432 : 0x4410);
}
/* The same in the image's byte order (LhkLuma.select). */
__device__ __forceinline__ uint32_t lhk_word(const uint32_t *w, int i, const uint32_t *select)
{
  return __byte_perm(w[i >> 1], 0, select[i & 1]);
}

/* The luma key of pixel i of a unit, exactly as the CPU backend computes it
 * (lhi_luma with the weights permuted to the sample order; the clamp of
 * lhi_clamp_sample for 16-bit samples). */
template <int PIXEL>
__device__ __forceinline__ uint32_t lhk_unit_key(const uint32_t *w, int i, const LhkLuma &l)
{
  switch (PIXEL) {
  case LHK_PIXEL_Y8:
    return lhk_byte(w, i);
  case LHK_PIXEL_Y16:
    return lhi_word_luma(lhk_word(w, i, l.select), l.mask, l.shift, l.max_value);
  case LHK_PIXEL_RGB8:
    return lhi_luma(lhk_byte(w, 3 * i), lhk_byte(w, 3 * i + 1), lhk_byte(w, 3 * i + 2), l.weights);
  case LHK_PIXEL_RGBA8:
    return lhi_luma(lhk_byte(w, 4 * i), lhk_byte(w, 4 * i + 1), lhk_byte(w, 4 * i + 2), l.weights);
  case LHK_PIXEL_RGB16:
    return min(lhi_luma_wide(lhk_half(w, 3 * i), lhk_half(w, 3 * i + 1), lhk_half(w, 3 * i + 2),
                             l.weights),
               l.max_value);
  case LHK_PIXEL_RGB10:
    return lhk_packed10_luma(lhk_word_order(w[i], l.swap_bytes), l);
  case LHK_PIXEL_V210: /* Y i of the group: 10 bits, the depth's whole range */
    return lhi_v210_get(w, lhi_v210_y_field(i));
  default: /* LHK_PIXEL_RGBA16 */
    return min(lhi_luma_wide(lhk_half(w, 4 * i), lhk_half(w, 4 * i + 1), lhk_half(w, 4 * i + 2),
                             l.weights),
               l.max_value);
  }
}

/* The same for a pixel read on its own (row edges). */
template <int PIXEL>
__device__ __forceinline__ uint32_t lhk_pixel_key(const uint8_t *p, const LhkLuma &l)
{
  const uint16_t *q = (const uint16_t *)p;
  switch (PIXEL) {
  case LHK_PIXEL_Y8:
    return p[0];
  case LHK_PIXEL_Y16:
    /* byte loads: packed 4:2:2 rows may start at odd addresses */
    return lhi_word_luma(l.select[0] == 0x4410 ? (uint32_t)p[0] | (uint32_t)p[1] << 8
                                               : (uint32_t)p[1] | (uint32_t)p[0] << 8,
                         l.mask, l.shift, l.max_value);
  case LHK_PIXEL_RGB8:
  case LHK_PIXEL_RGBA8:
    return lhi_luma(p[0], p[1], p[2], l.weights);
  case LHK_PIXEL_RGB10:
    return lhk_packed10_luma(lhk_load_word(p, l.swap_bytes), l);
  case LHK_PIXEL_PACKED422: /* the Y byte of the word: byte 1 where the selector takes odd bytes */
    return p[l.y_select & 1];
  default: /* LHK_PIXEL_RGB16, LHK_PIXEL_RGBA16 */
    return min(lhi_luma_wide(q[0], q[1], q[2], l.weights), l.max_value);
  }
}

/* Counts keys into a private histogram, aggregating runs: a thread keeps its
 * current run (the counter's address and the run's length) in registers and
 * adds to the histogram only when the bin changes, so a flat region (sky, a
 * black frame) costs one atomic per run, not per pixel.  The flush is a
 * predicated PTX reduction on a 32-bit shared address (ptxas still wraps it
 * in a short branch: about nine SASS instructions a pixel with the sample's
 * extraction, measured on sm_90).  In shared memory each lane owns copy (lane % COPIES) of
 * every bin, at bin * COPIES + copy: with 32 copies the lanes of a warp always
 * hit 32 different banks, whatever the values (eight values 32 bins apart
 * included).  Counters are 32-bit: a block counts at most the pixels of one
 * image, and an image has fewer than 2^31 (the launcher's contract), so none
 * can overflow. */
template <int COPIES> struct LhkSharedRuns {
  uint32_t base;     /* shared-window address of this lane's copy of bin 0 */
  uint32_t run_addr; /* of the current run's counter */
  uint32_t run_length;

  __device__ __forceinline__ void init(uint32_t *sub, uint32_t lane)
  {
    base = (uint32_t)__cvta_generic_to_shared(sub) + (lane & (COPIES - 1)) * 4;
    run_addr = base;
    run_length = 0;
  }
  __device__ __forceinline__ void add(uint32_t bin)
  {
    const uint32_t addr = base + bin * (COPIES * 4);
    asm volatile("{\n\t"
                 ".reg .pred changed;\n\t"
                 "setp.ne.u32 changed, %1, %2;\n\t"
                 "@changed red.shared.add.u32 [%2], %0;\n\t"
                 "@changed mov.u32 %0, 0;\n\t"
                 "add.u32 %0, %0, 1;\n\t"
                 "}"
                 : "+r"(run_length)
                 : "r"(addr), "r"(run_addr));
    run_addr = addr;
  }
  __device__ __forceinline__ void finish()
  {
    if (run_length)
      asm volatile("red.shared.add.u32 [%0], %1;" ::"r"(run_addr), "r"(run_length));
  }
};

/* The same into a global-memory copy (more than 4096 bins), as a plain
 * branch: there the atomics in L2 cost more than the branch (and the
 * predicated form of this one made ptxas spill). */
struct LhkGlobalRuns {
  uint32_t *copy;
  uint32_t run_bin;
  uint32_t run_length;

  __device__ __forceinline__ void add(uint32_t bin)
  {
    if (bin != run_bin) {
      atomicAdd(copy + run_bin, run_length);
      run_length = 0;
      run_bin = bin;
    }
    run_length++;
  }
  __device__ __forceinline__ void finish()
  {
    if (run_length)
      atomicAdd(copy + run_bin, run_length);
  }
};

/* 8-bit gray, where the pixel is its bin: the sub-histograms are SETS sets of
 * 32 per-lane copies (warp w adds to set w % SETS, so each counter is shared
 * by 16 / SETS warps of the block, not 16), laid out so that the byte offset
 * of a counter is one byte permutation of the word holding the pixel:
 *   (set / 2) << 16 | bin << 8 | (set % 2) << 7 | lane << 2,
 * i.e. PRMT(word, slot) with the slot's bytes 0 and 2 around the pixel's byte.
 * A pixel then costs that PRMT, the add of the shared window's base and one
 * ATOMS.POPC.INC (sm_90 SASS), with no branch; lanes always hit 32 different
 * banks (the lane is the bank).
 * Runs are aggregated a 16-byte unit at a time (FLAT): a unit whose 16 bytes
 * are equal adds 16 to the thread's run, flushed when a flat unit of another
 * value comes; the data-dependent branch is per unit, not per pixel, which is
 * what made the per-pixel flush of LhkSharedRuns slow on mixed data (its
 * divergent BSSY/BSYNC). */
enum {
  LHK_FLAT_NONE, /* every pixel an atomic */
  LHK_FLAT_UNIT, /* flat units counted in the run */
  LHK_FLAT_WORD  /* and, in other units, a flat word by one atomic of 4 */
};

template <int SETS> struct LhkGray8Layout {
  /* Bytes of shared memory: 64 KiB for each pair of sets. */
  enum { BYTES = (SETS + 1) / 2 * 65536 };
};

template <int SETS, int FLAT> struct LhkGray8Counter {
  char *sub;
  uint32_t slot;   /* (set / 2) << 16 | (set % 2) << 7 | lane << 2 */
  uint32_t run;    /* the byte of the thread's run of flat units, replicated */
  uint32_t length; /* pixels of the run not yet added */

  __device__ __forceinline__ void init(char *shared, uint32_t warp, uint32_t lane)
  {
    const uint32_t set = warp % SETS;
    sub = shared;
    slot = (set >> 1) << 16 | (set & 1) << 7 | lane << 2;
    run = 0;
    length = 0;
  }
  /* This lane's counter of byte i of w. */
  __device__ __forceinline__ uint32_t *counter(uint32_t w, int i) const
  {
    return (uint32_t *)(sub + __byte_perm(w, slot, 0x7604 | i << 4));
  }
  __device__ __forceinline__ void add(uint32_t bin)
  {
    atomicAdd(counter(bin, 0), 1u);
  }
  __device__ __forceinline__ void add_word(uint32_t w)
  {
    if (FLAT == LHK_FLAT_WORD && w == __byte_perm(w, 0, 0)) {
      atomicAdd(counter(w, 0), 4u);
      return;
    }
#pragma unroll
    for (int i = 0; i < 4; i++)
      atomicAdd(counter(w, i), 1u);
  }
  __device__ __forceinline__ void add_unit(const uint4 &u)
  {
    if (FLAT != LHK_FLAT_NONE) {
      const uint32_t r = __byte_perm(u.x, 0, 0);
      if ((u.x == r) & (u.y == r) & (u.z == r) & (u.w == r)) {
        if (r != run) {
          atomicAdd(counter(run, 0), length);
          run = r;
          length = 0;
        }
        length += 16;
        return;
      }
    }
    add_word(u.x);
    add_word(u.y);
    add_word(u.z);
    add_word(u.w);
  }
  __device__ __forceinline__ void finish()
  {
    if (length)
      atomicAdd(counter(run, 0), length);
  }
};

/* Rows may start anywhere (pitched frames, odd strides, regions of interest):
 * for each address modulo 16, the number of leading pixels before the first
 * 16-byte-aligned pixel boundary, or 0xff when there is none (4-byte pixels
 * that are not 4-byte aligned): such rows are read byte by byte. */
template <int PIXEL> __device__ void lhk_fill_head_table(uint8_t *table)
{
  const int bpp = LhkLayout<PIXEL>::BPP;
  if (threadIdx.x < 16) {
    uint8_t head = 0xff;
    for (int k = 15; k >= 0; k--)
      if ((threadIdx.x + k * bpp) % 16 == 0)
        head = (uint8_t)k;
    table[threadIdx.x] = head;
  }
}

/* The words of one unit: 16-byte loads, or byte loads where no pixel
 * boundary of the row is 16-byte aligned. */
template <int PIXEL>
__device__ __forceinline__ void lhk_load_unit(const uint8_t *p, bool aligned, uint4 *words)
{
  typedef LhkLayout<PIXEL> L;
  if (aligned) {
#pragma unroll
    for (int k = 0; k < L::VEC; k++)
      words[k] = __ldg((const uint4 *)p + k);
  } else {
    uint32_t *w = (uint32_t *)words;
#pragma unroll
    for (int k = 0; k < 4 * L::VEC; k++)
      w[k] = (uint32_t)p[4 * k] | (uint32_t)p[4 * k + 1] << 8 | (uint32_t)p[4 * k + 2] << 16 |
             (uint32_t)p[4 * k + 3] << 24;
  }
}

template <int PIXEL, class Counter>
__device__ __forceinline__ void lhk_count_unit(const uint4 *words, const LhkLuma &luma,
                                               Counter &counter)
{
  const uint32_t *w = (const uint32_t *)words;
#pragma unroll
  for (int i = 0; i < LhkLayout<PIXEL>::PX; i++)
    counter.add(lhk_unit_key<PIXEL>(w, i, luma));
}

/* 8-bit gray: the unit as a whole (its flat test); packed 4:2:2, the Y
 * bytes of its two words gathered into one (byte i of the result is the Y of
 * pixel i: byte perm of words 2k, 2k + 1 by the selector). */
template <int PIXEL, int SETS, int FLAT>
__device__ __forceinline__ void lhk_count_unit(const uint4 *words, const LhkLuma &luma,
                                               LhkGray8Counter<SETS, FLAT> &counter)
{
  if constexpr (PIXEL == LHK_PIXEL_PACKED422) {
    const uint32_t s = luma.y_select;
    counter.add_unit(
        make_uint4(__byte_perm(words[0].x, words[0].y, s), __byte_perm(words[0].z, words[0].w, s),
                   __byte_perm(words[1].x, words[1].y, s), __byte_perm(words[1].z, words[1].w, s)));
  } else {
    counter.add_unit(words[0]);
  }
}

template <int PIXEL, class Counter>
__device__ __forceinline__ void lhk_count_pixels(const uint8_t *row, uint32_t from, uint32_t to,
                                                 const LhkLuma &luma, Counter &counter)
{
  for (uint32_t x = from; x < to; x++)
    counter.add(lhk_pixel_key<PIXEL>(row + (size_t)x * LhkLayout<PIXEL>::BPP, luma));
}

/* v210: every group of the image is a unit, and thread t of the grid takes
 * groups t, t + T, t + 2T, ... of the rows laid end to end ((row, col)
 * stepped without divisions), UNROLL of them loaded before any is counted.
 * Rows start at a group (regions start at a multiple of 6 pixels), so there
 * is no head; a row's last group holds width - 6 (groups - 1) pixels, and
 * only their Y fields are counted.  A row that does not start 16-byte
 * aligned is read byte by byte (head_table has no aligned group boundary
 * for it). */
template <int UNROLL, class Counter>
__device__ __forceinline__ void lhk_count_v210(const LhkImage &image, const uint8_t *head_table,
                                               const LhkLuma &luma, Counter &counter)
{
  const uint8_t *data = (const uint8_t *)image.data;
  const size_t stride = image.stride;
  const uint32_t height = image.height;
  const uint32_t groups_per_row = (image.width + LHI_V210_GROUP_PIXELS - 1) / LHI_V210_GROUP_PIXELS;
  const uint32_t last_pixels = image.width - (groups_per_row - 1) * LHI_V210_GROUP_PIXELS;
  const uint32_t threads = gridDim.x * LHK_BLOCK_THREADS;
  const uint32_t first = blockIdx.x * LHK_BLOCK_THREADS + threadIdx.x;
  const uint32_t row_step = threads / groups_per_row, col_step = threads % groups_per_row;
  uint32_t row = first / groups_per_row, col = first % groups_per_row;
  while (row < height) {
    uint4 words[UNROLL][1];
    uint32_t pixels[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; u++) {
      pixels[u] = 0;
      if (row < height) {
        const uint8_t *row_start = data + row * stride;
        lhk_load_unit<LHK_PIXEL_V210>(row_start + (size_t)col * LHI_V210_GROUP_BYTES,
                                      head_table[(uintptr_t)row_start & 15] == 0, words[u]);
        pixels[u] = col == groups_per_row - 1 ? last_pixels : LHI_V210_GROUP_PIXELS;
      }
      row += row_step;
      col += col_step;
      if (col >= groups_per_row) {
        col -= groups_per_row;
        row++;
      }
    }
#pragma unroll
    for (int u = 0; u < UNROLL; u++) {
      const uint32_t *w = (const uint32_t *)words[u];
#pragma unroll
      for (int i = 0; i < LHI_V210_GROUP_PIXELS; i++)
        if (i < pixels[u])
          counter.add(lhk_unit_key<LHK_PIXEL_V210>(w, i, luma));
    }
  }
}

/* Counts the pixels of one image that this block's threads own.  The pixels
 * are cut into units of PX, read as VEC 16-byte words from an aligned pixel
 * boundary on; thread t of the grid takes units t, t + T, t + 2T, ...
 * (interleaved partitioning: neighbouring threads read neighbouring words),
 * UNROLL of them (the layout's unless given) loaded before any is counted.  Packed images (stride =
 * row) are one long row; in pitched ones each row has width / PX + 1 units, the last being the
 * scalar pixels at both ends of the row, and (row, col) of the next unit is stepped without
 * divisions.  first_round_done: a packed image's first round of the thread's
 * units was counted already (LhkGray8FirstRound). */
template <int PIXEL, int UNROLL = LhkLayout<PIXEL>::UNROLL, class Counter>
__device__ __forceinline__ void lhk_count_image(const LhkImage &image, const uint8_t *head_table,
                                                Counter &counter, bool first_round_done = false)
{
  typedef LhkLayout<PIXEL> L;
  const LhkLuma luma = {{image.weights[0], image.weights[1], image.weights[2], image.luma_one},
                        image.shift,
                        image.max_value,
                        ~image.keep & 0xffffu,
                        {image.swap ? 0x4401u : 0x4410u, image.swap ? 0x4423u : 0x4432u},
                        image.swap_bytes,
                        image.shift ? 0x7531u : 0x6420u};
  const uint8_t *data = (const uint8_t *)image.data;
  const size_t stride = image.stride;
  const uint32_t width = image.width, height = image.height;
  const uint32_t threads = gridDim.x * LHK_BLOCK_THREADS;
  const uint32_t first = blockIdx.x * LHK_BLOCK_THREADS + threadIdx.x;

  if (PIXEL == LHK_PIXEL_V210) {
    lhk_count_v210<UNROLL>(image, head_table, luma, counter);
    return;
  }
  if (height == 1 || stride == (size_t)width * L::BPP) {
    const uint32_t pixels = width * height;
    uint32_t head = head_table[(uintptr_t)data & 15];
    const bool aligned = head != 0xff;
    if (!aligned || head > pixels)
      head = aligned ? pixels : 0;
    const uint32_t n_units = (pixels - head) / L::PX;
    const uint8_t *units = data + (size_t)head * L::BPP;
    for (uint32_t i = first + (first_round_done ? UNROLL * threads : 0); i < n_units;
         i += UNROLL * threads) {
      uint4 words[UNROLL][L::VEC];
#pragma unroll
      for (int u = 0; u < UNROLL; u++)
        if (i + u * threads < n_units)
          lhk_load_unit<PIXEL>(units + (size_t)(i + u * threads) * (L::PX * L::BPP), aligned,
                               words[u]);
#pragma unroll
      for (int u = 0; u < UNROLL; u++)
        if (i + u * threads < n_units)
          lhk_count_unit<PIXEL>(words[u], luma, counter);
    }
    if (first == 0) {
      lhk_count_pixels<PIXEL>(data, 0, head, luma, counter);
      lhk_count_pixels<PIXEL>(data, head + n_units * L::PX, pixels, luma, counter);
    }
    return;
  }

  const uint32_t units_per_row = width / L::PX + 1;
  const uint32_t row_step = threads / units_per_row, col_step = threads % units_per_row;
  uint32_t row = first / units_per_row, col = first % units_per_row;
  while (row < height) {
    uint4 words[UNROLL][L::VEC];
    bool middle[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; u++) {
      middle[u] = false;
      if (row < height) {
        const uint8_t *row_start = data + row * stride;
        uint32_t head = head_table[(uintptr_t)row_start & 15];
        const bool aligned = head != 0xff;
        if (!aligned || head > width)
          head = aligned ? width : 0;
        const uint32_t n_middle = (width - head) / L::PX;
        if (col < n_middle) {
          lhk_load_unit<PIXEL>(row_start + (size_t)(head + col * L::PX) * L::BPP, aligned,
                               words[u]);
          middle[u] = true;
        } else if (col == units_per_row - 1) {
          /* The few pixels of the row's ends, read one by one at once: they
           * hold back the loads of the next units, but keep no registers. */
          lhk_count_pixels<PIXEL>(row_start, 0, head, luma, counter);
          lhk_count_pixels<PIXEL>(row_start, head + n_middle * L::PX, width, luma, counter);
        }
      }
      row += row_step;
      col += col_step;
      if (col >= units_per_row) {
        col -= units_per_row;
        row++;
      }
    }
#pragma unroll
    for (int u = 0; u < UNROLL; u++)
      if (middle[u])
        lhk_count_unit<PIXEL>(words[u], luma, counter);
  }
}

/* 8-bit gray, packed frames: the units of a thread's first round (those
 * lhk_count_image would load first), loaded before the sub-histograms are
 * zeroed, so that the DRAM reads overlap the zeroing and the counting starts
 * on words already in registers (an L2 prefetch in their place left a trip
 * to L2 after the barrier: kernels/NOTES.md).  lhk_count_image then starts
 * at the second round (first_round_done). */
template <int UNROLL> struct LhkGray8FirstRound {
  uint4 words[UNROLL];
  uint32_t n_units; /* 0: a pitched frame, read by lhk_count_image alone */

  __device__ __forceinline__ void load(const LhkImage &image)
  {
    n_units = 0;
    if (image.height != 1 && image.stride != image.width)
      return;
    /* As lhk_count_image: every 8-bit sample is a pixel boundary, the head
     * is the bytes up to the first 16-byte-aligned one. */
    const uint32_t pixels = image.width * image.height;
    const uint32_t head = min((16u - ((uint32_t)(uintptr_t)image.data & 15u)) & 15u, pixels);
    const uint4 *units = (const uint4 *)((const uint8_t *)image.data + head);
    const uint32_t threads = gridDim.x * LHK_BLOCK_THREADS;
    const uint32_t first = blockIdx.x * LHK_BLOCK_THREADS + threadIdx.x;
    n_units = (pixels - head) / 16;
#pragma unroll
    for (int u = 0; u < UNROLL; u++)
      if (first + u * threads < n_units)
        words[u] = __ldg(units + first + u * threads);
  }
  template <class Counter> __device__ __forceinline__ void count(Counter &counter) const
  {
    const uint32_t threads = gridDim.x * LHK_BLOCK_THREADS;
    const uint32_t first = blockIdx.x * LHK_BLOCK_THREADS + threadIdx.x;
#pragma unroll
    for (int u = 0; u < UNROLL; u++)
      if (first + u * threads < n_units)
        counter.add_unit(words[u]);
  }
  __device__ __forceinline__ bool packed() const
  {
    return n_units > 0;
  }
};

#ifdef LHK_PHASE_TIMES
/* lumahist-bench's copy of the phase times (lhk-common.cuh). */
extern "C" cudaError_t lhk_phase_times_read(unsigned long long *out)
{
  return cudaMemcpyFromSymbol(out, lhk_phase_times, sizeof lhk_phase_times);
}
#endif

/* The fused path's commit of one bin of a block, empty or not: its count,
 * and 1 above LHK_CONTRIBUTION_SHIFT for the block itself, so that the
 * finishing block can tell when every block's atomics have landed
 * (lhk_finish_one_tile). */
__device__ __forceinline__ void lhk_fused_commit(lhk_u64 *bin, uint32_t sum)
{
  atomicAdd(bin, (lhk_u64)sum | 1ull << LHK_CONTRIBUTION_SHIFT);
}

/* The fused path's end, after a block's commit: the last block to take a
 * ticket finishes the frame (the pattern of CUDA's threadFenceReduction
 * sample).
 * Up to LHK_BLOCK_THREADS bins (WIDE_ITEMS 0) nothing but that choice hangs
 * on the ticket: every block committed every bin with its contribution mark
 * (lhk_fused_commit), and the finishing block reads the copies until every
 * block is in every bin, so no block waits for its atomics to land (a fence,
 * the release of the ticket) before it takes the ticket, nor the finishing
 * block for an acquire (0.15 to 0.3 us less on a 4K frame than one thread's
 * release and acquire, kernels/NOTES.md).
 * Wider histograms (WIDE_ITEMS = bins / LHK_BLOCK_THREADS) have the blocks
 * commit their non-zero bins only (every bin of every block would be up to
 * 4096 atomics a block, and the finishing block's polling of them 4x the
 * reads): there the fence: each thread's atomics are performed at device
 * scope before its block's ticket is taken (release), and the block that
 * takes the last ticket acquires them all before it reads. */
template <int WIDE_ITEMS>
__device__ __forceinline__ void lhk_finish_if_last(const LhkHistogramParams &p, void *shared,
                                                   bool &is_last_block)
{
  unsigned int *tickets = (unsigned int *)p.scratch;
  if (WIDE_ITEMS)
    __threadfence();
  __syncthreads();
  LHK_STAMP(3);
  if (threadIdx.x == 0) {
    cuda::atomic_ref<unsigned int, cuda::thread_scope_device> ticket(*tickets);
    const unsigned int taken = WIDE_ITEMS ? ticket.fetch_add(1u, cuda::memory_order_acq_rel)
                                          : ticket.fetch_add(1u, cuda::memory_order_relaxed);
    is_last_block = taken == gridDim.x - 1;
  }
  __syncthreads();
  LHK_STAMP(4);
  if (is_last_block) {
    if constexpr (WIDE_ITEMS > 0)
      lhk_finish_wide_tile<WIDE_ITEMS>(p.finish, *(LhkWideFinishShared *)shared);
    else
      lhk_finish_one_tile(p.finish, *(LhkFinishShared *)shared);
    LHK_PHASE_END(5);
    /* Every block took its ticket: the next launch starts from 0. */
    if (threadIdx.x == 0)
      *tickets = 0;
  }
}

/* The fused kernels' WIDE_ITEMS of lhk_finish_if_last: the shared mode with
 * COPIES copies holds 8192 / COPIES bins (shared_copies), bins /
 * LHK_BLOCK_THREADS a thread when they are more than the block's threads. */
template <int COPIES> struct LhkFusedWide {
  enum {
    BINS = LHK_SHARED_HISTOGRAM_BYTES / 4 / COPIES,
    ITEMS = BINS > LHK_BLOCK_THREADS ? BINS / LHK_BLOCK_THREADS : 0
  };
};

/* One launch: blockIdx.y is the image.  Shared modes: zero the block's
 * sub-histograms, count, then commit with one 64-bit global atomic per
 * non-zero bin (the copies summed first).  Global mode: count straight into
 * the image's global copy; lhk_merge_kernel folds the copies in. */
template <int PIXEL, int COPIES, int MODE>
__global__ void __launch_bounds__(LHK_BLOCK_THREADS, LHK_HISTOGRAM_MIN_BLOCKS)
    lhk_histogram_kernel(const __grid_constant__ LhkHistogramParams p)
{
  extern __shared__ uint4 dynamic_shared[];
  __shared__ uint8_t head_table[16];
  __shared__ bool is_last_block;
  uint32_t *sub = (uint32_t *)dynamic_shared;
  const LhkImage &image = p.images[blockIdx.y];
  const uint32_t bins = p.bins, lane = threadIdx.x & 31;

  lhk_fill_head_table<PIXEL>(head_table);
  if (MODE != LHK_MODE_GLOBAL) {
    uint4 *sub4 = (uint4 *)sub;
    for (uint32_t i = threadIdx.x; i < bins * COPIES / 4; i += LHK_BLOCK_THREADS)
      sub4[i] = make_uint4(0, 0, 0, 0);
  }
  __syncthreads();

  if (MODE == LHK_MODE_GLOBAL) {
    uint32_t *copy =
        (uint32_t *)((char *)p.scratch + LHK_TICKET_BYTES) +
        ((size_t)image.slot * LHK_GLOBAL_COPIES + blockIdx.x % LHK_GLOBAL_COPIES) * bins;
    LhkGlobalRuns counter = {copy, 0, 0};
    lhk_count_image<PIXEL>(image, head_table, counter);
    counter.finish();
    return;
  }

  LhkSharedRuns<COPIES> counter;
  counter.init(sub, lane);
  lhk_count_image<PIXEL>(image, head_table, counter);
  counter.finish();
  __syncthreads();

  /* The fused mode: up to LHK_BLOCK_THREADS bins every bin is committed
   * with the block's mark, wider histograms only their non-zero bins
   * (lhk_finish_if_last); block b adds to copy b % n_copies. */
  constexpr int wide_items = LhkFusedWide<COPIES>::ITEMS;
  lhk_u64 *histogram = p.histograms + (size_t)image.slot * bins;
  if (MODE == LHK_MODE_FUSED)
    histogram += (blockIdx.x % p.finish.n_copies) * bins;
  for (uint32_t bin = threadIdx.x; bin < bins; bin += LHK_BLOCK_THREADS) {
    /* Start each lane at a different copy: the lanes read 32 banks at once. */
    uint32_t sum = 0;
#pragma unroll
    for (int c = 0; c < COPIES; c++)
      sum += sub[bin * COPIES + ((c + lane) & (COPIES - 1))];
    if (MODE == LHK_MODE_FUSED && wide_items == 0)
      lhk_fused_commit(histogram + bin, sum);
    else if (sum)
      atomicAdd(histogram + bin, (lhk_u64)sum);
  }

  if constexpr (MODE == LHK_MODE_FUSED)
    lhk_finish_if_last<wide_items>(p, dynamic_shared, is_last_block);
}

/* The 8-bit gray kernel (LhkGray8Counter): zero the sets, count, then commit
 * with one 64-bit global atomic per non-zero bin: each thread first sums the
 * 32 lane copies of one (set, bin) (lanes starting at different copies, so at
 * different banks) and leaves the sum in that row, where the thread of the
 * bin adds up the sets. */
template <int SETS, int FLAT, int UNROLL, int MIN_BLOCKS, int MODE, int PIXEL = LHK_PIXEL_Y8>
__global__ void __launch_bounds__(LHK_BLOCK_THREADS, MIN_BLOCKS)
    lhk_gray8_kernel(const __grid_constant__ LhkHistogramParams p)
{
  extern __shared__ uint4 dynamic_shared[];
  __shared__ uint8_t head_table[16];
  __shared__ bool is_last_block;
  char *sub = (char *)dynamic_shared;
  const LhkImage &image = p.images[blockIdx.y];
  const uint32_t lane = threadIdx.x & 31;

  LHK_STAMP(0);
  LhkGray8FirstRound<UNROLL> first_round;
  if (PIXEL == LHK_PIXEL_Y8)
    first_round.load(image);
  else
    first_round.n_units = 0; /* packed 4:2:2: every unit by lhk_count_image */
  lhk_fill_head_table<PIXEL>(head_table);
  /* One set uses the first half of each 256-byte row (lane << 2 below 128). */
  const uint32_t zeroed = SETS == 1 ? 65536 / 32 : LhkGray8Layout<SETS>::BYTES / 16;
  for (uint32_t i = threadIdx.x; i < zeroed; i += LHK_BLOCK_THREADS)
    dynamic_shared[SETS == 1 ? (i / 8) * 16 + i % 8 : i] = make_uint4(0, 0, 0, 0);
  __syncthreads();
  LHK_STAMP(1);

  LhkGray8Counter<SETS, FLAT> counter;
  counter.init(sub, threadIdx.x / 32, lane);
  first_round.count(counter);
  lhk_count_image<PIXEL, UNROLL>(image, head_table, counter, first_round.packed());
  counter.finish();
  __syncthreads();
  LHK_STAMP(2);

  lhk_u64 *histogram = p.histograms + (size_t)image.slot * 256;
  if (MODE == LHK_MODE_FUSED)
    histogram += (blockIdx.x % LHK_FUSED_COPIES) * 256;
  for (uint32_t r = threadIdx.x; r < SETS * 256; r += LHK_BLOCK_THREADS) {
    const uint32_t set = r / 256, bin = r % 256;
    uint32_t *row = (uint32_t *)(sub + ((set >> 1) << 16) + bin * 256 + (set & 1) * 128);
    uint32_t sum = 0;
#pragma unroll
    for (int c = 0; c < 32; c++)
      sum += row[(c + lane) & 31];
    if (SETS == 1) {
      if (MODE == LHK_MODE_FUSED)
        lhk_fused_commit(histogram + bin, sum);
      else if (sum)
        atomicAdd(histogram + bin, (lhk_u64)sum);
    } else {
      row[bin & 31] = sum; /* bank bin % 32 for the reads below */
    }
  }
  LHK_STAMP(7);
  if (SETS > 1) {
    __syncthreads();
    for (uint32_t bin = threadIdx.x; bin < 256; bin += LHK_BLOCK_THREADS) {
      uint32_t sum = 0;
#pragma unroll
      for (int set = 0; set < SETS; set++)
        sum +=
            *(uint32_t *)(sub + ((set >> 1) << 16) + bin * 256 + (set & 1) * 128 + (bin & 31) * 4);
      if (MODE == LHK_MODE_FUSED)
        lhk_fused_commit(histogram + bin, sum);
      else if (sum)
        atomicAdd(histogram + bin, (lhk_u64)sum);
    }
  }

  if (MODE == LHK_MODE_FUSED)
    lhk_finish_if_last<0>(p, dynamic_shared, is_last_block);
}

/* Adds the global copies of each histogram into it and clears them. */
__global__ void __launch_bounds__(LHK_MERGE_THREADS)
    lhk_merge_kernel(uint32_t *copies, uint32_t bins, lhk_u64 *histograms)
{
  const uint32_t bin = blockIdx.x * LHK_MERGE_THREADS + threadIdx.x, slot = blockIdx.y;
  if (bin >= bins)
    return;
  uint32_t *copy = copies + (size_t)slot * LHK_GLOBAL_COPIES * bins + bin;
  lhk_u64 sum = 0;
#pragma unroll
  for (int c = 0; c < LHK_GLOBAL_COPIES; c++) {
    sum += copy[(size_t)c * bins];
    copy[(size_t)c * bins] = 0;
  }
  histograms[(size_t)slot * bins + bin] += sum;
}

/* More than 4096 bins on sm_90: the bins split across the shared memory of a
 * thread-block cluster.  65536 32-bit counters (256 KiB) fit no block, and
 * global copies make every pixel an atomic in L2 (a 4K 16-bit frame took
 * 0.29 ms against 0.025 for NV12 on an H100, nearly all of it those atomics).
 * Block r of a cluster of n holds bins [r * bins / n, (r + 1) * bins / n),
 * and a thread adds a run into whichever block of its cluster holds the bin:
 * MAPA turns the offset into that block's shared-window address, RED adds
 * there (distributed shared memory, over the SM-to-SM network).  Runs of
 * equal bins are aggregated in registers, as in LhkGlobalRuns. */
struct LhkClusterRuns {
  uint32_t base;       /* shared-window address of this block's slice */
  uint32_t slice_log2; /* bins per block, log2 */
  uint32_t run_bin;
  uint32_t run_length;

  __device__ __forceinline__ void flush()
  {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    const uint32_t local = base + ((run_bin & ((1u << slice_log2) - 1)) << 2);
    uint32_t remote;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;"
                 : "=r"(remote)
                 : "r"(local), "r"(run_bin >> slice_log2));
    asm volatile("red.shared::cluster.add.u32 [%0], %1;" ::"r"(remote), "r"(run_length)
                 : "memory");
#endif
  }
  __device__ __forceinline__ void add(uint32_t bin)
  {
    if (bin != run_bin) {
      if (run_length)
        flush();
      run_length = 0;
      run_bin = bin;
    }
    run_length++;
  }
  __device__ __forceinline__ void finish()
  {
    if (run_length)
      flush();
  }
};

/* One launch, clusters of blocks along x (blockIdx.y is the image, as in
 * lhk_histogram_kernel): zero this block's slice, wait for the whole
 * cluster (no block may add into a slice not yet zeroed), count, wait again
 * (every add landed, and no block leaves while others add into it), then
 * commit the slice's non-zero counters with one 64-bit global atomic each.
 * Built for every architecture, a body only where clusters exist. */
template <int PIXEL>
__global__ void __launch_bounds__(LHK_BLOCK_THREADS, LHK_HISTOGRAM_MIN_BLOCKS)
    lhk_cluster_histogram_kernel(const __grid_constant__ LhkHistogramParams p)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  extern __shared__ uint4 dynamic_shared[];
  __shared__ uint8_t head_table[16];
  const LhkImage &image = p.images[blockIdx.y];
  uint32_t rank, n_ranks;
  asm("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
  asm("mov.u32 %0, %%cluster_nctarank;" : "=r"(n_ranks));
  const uint32_t slice = p.bins / n_ranks;

  lhk_fill_head_table<PIXEL>(head_table);
  for (uint32_t i = threadIdx.x; i < slice / 4; i += LHK_BLOCK_THREADS)
    dynamic_shared[i] = make_uint4(0, 0, 0, 0);
  asm volatile("barrier.cluster.arrive.release.aligned;\n\t"
               "barrier.cluster.wait.acquire.aligned;" ::
                   : "memory");

  LhkClusterRuns counter = {(uint32_t)__cvta_generic_to_shared(dynamic_shared),
                            31u - (uint32_t)__clz(slice), 0, 0};
  lhk_count_image<PIXEL>(image, head_table, counter);
  counter.finish();
  asm volatile("barrier.cluster.arrive.release.aligned;\n\t"
               "barrier.cluster.wait.acquire.aligned;" ::
                   : "memory");

  const uint32_t *sub = (const uint32_t *)dynamic_shared;
  lhk_u64 *histogram = p.histograms + (size_t)image.slot * p.bins + (size_t)rank * slice;
  for (uint32_t bin = threadIdx.x; bin < slice; bin += LHK_BLOCK_THREADS) {
    const uint32_t count = sub[bin];
    if (count)
      atomicAdd(histogram + bin, (lhk_u64)count);
  }
#endif
}

/* --- Launch ---------------------------------------------------------------- */

/* Kernel variants: index 0..4 the shared modes with 32 >> index copies,
 * 5..9 the fused ones likewise, 10 the global mode. */
#define LHK_VARIANT_GLOBAL 10
#define LHK_N_VARIANTS 11
static_assert(LHK_N_VARIANTS <= sizeof(((LhkDevice *)0)->histogram_blocks_per_sm[0]) / sizeof(int),
              "LhkDevice has no room for the occupancy of every variant");

typedef void (*LhkHistogramKernel)(const LhkHistogramParams);

template <int PIXEL, int MODE> static LhkHistogramKernel kernel_for_copies(int copies)
{
  switch (copies) {
  case 32:
    return lhk_histogram_kernel<PIXEL, 32, MODE>;
  case 16:
    return lhk_histogram_kernel<PIXEL, 16, MODE>;
  case 8:
    return lhk_histogram_kernel<PIXEL, 8, MODE>;
  case 4:
    return lhk_histogram_kernel<PIXEL, 4, MODE>;
  default:
    return lhk_histogram_kernel<PIXEL, 2, MODE>;
  }
}

/* 8-bit samples give 8-bit luma, so their kernels exist for 256 bins (32
 * copies) only; 16-bit samples take any depth from 8 to 16 bits, fused up to
 * LHK_FUSED_MAX_BINS (the latency case of 10- and 12-bit frames). */
template <int PIXEL> static LhkHistogramKernel kernel_variant(int variant)
{
  constexpr bool wide = PIXEL == LHK_PIXEL_Y16 || PIXEL == LHK_PIXEL_RGB16 ||
                        PIXEL == LHK_PIXEL_RGBA16 || PIXEL == LHK_PIXEL_RGB10 ||
                        PIXEL == LHK_PIXEL_V210;
  const int copies = 32 >> (variant % 5);
  if constexpr (wide) {
    if (variant == LHK_VARIANT_GLOBAL)
      return lhk_histogram_kernel<PIXEL, 1, LHK_MODE_GLOBAL>;
    if (variant < 5)
      return kernel_for_copies<PIXEL, LHK_MODE_SHARED>(copies);
    return kernel_for_copies<PIXEL, LHK_MODE_FUSED>(copies);
  } else {
    if (variant == LHK_VARIANT_GLOBAL || copies != 32)
      return NULL;
    return variant < 5 ? lhk_histogram_kernel<PIXEL, 32, LHK_MODE_SHARED>
                       : lhk_histogram_kernel<PIXEL, 32, LHK_MODE_FUSED>;
  }
}

static LhkHistogramKernel histogram_kernel(LhkPixel pixel, int variant)
{
  switch (pixel) {
  case LHK_PIXEL_Y8:
    return kernel_variant<LHK_PIXEL_Y8>(variant);
  case LHK_PIXEL_Y16:
    return kernel_variant<LHK_PIXEL_Y16>(variant);
  case LHK_PIXEL_RGB8:
    return kernel_variant<LHK_PIXEL_RGB8>(variant);
  case LHK_PIXEL_RGBA8:
    return kernel_variant<LHK_PIXEL_RGBA8>(variant);
  case LHK_PIXEL_RGB16:
    return kernel_variant<LHK_PIXEL_RGB16>(variant);
  case LHK_PIXEL_RGBA16:
    return kernel_variant<LHK_PIXEL_RGBA16>(variant);
  case LHK_PIXEL_RGB10:
    return kernel_variant<LHK_PIXEL_RGB10>(variant);
  case LHK_PIXEL_V210:
    return kernel_variant<LHK_PIXEL_V210>(variant);
  default:
    return NULL;
  }
}

/* 8-bit gray kernels, plain and fused, for measuring them against each other
 * (lumahist-bench --gray8-variants; LHK_GRAY8_VARIANT=i in the environment
 * of any program); entry 0 is the generic runs kernel above. */
struct LhkGray8Variant {
  const char *name;
  LhkHistogramKernel kernels[2]; /* LHK_MODE_SHARED, LHK_MODE_FUSED */
  size_t shared_bytes[2];
};

#define LHK_GRAY8_KERNELS(SETS, FLAT, UNROLL, MIN_BLOCKS)                                          \
  {lhk_gray8_kernel<SETS, FLAT, UNROLL, MIN_BLOCKS, LHK_MODE_SHARED>,                              \
   lhk_gray8_kernel<SETS, FLAT, UNROLL, MIN_BLOCKS, LHK_MODE_FUSED>},                              \
  {                                                                                                \
    LhkGray8Layout<SETS>::BYTES, LhkGray8Layout<SETS>::BYTES                                       \
  }

static const LhkGray8Variant lhk_gray8_variants[] = {
    {"runs per pixel 32 copies",
     {lhk_histogram_kernel<LHK_PIXEL_Y8, 32, LHK_MODE_SHARED>,
      lhk_histogram_kernel<LHK_PIXEL_Y8, 32, LHK_MODE_FUSED>},
     {LHK_SHARED_HISTOGRAM_BYTES, LHK_SHARED_HISTOGRAM_BYTES > sizeof(LhkFinishShared)
                                      ? LHK_SHARED_HISTOGRAM_BYTES
                                      : sizeof(LhkFinishShared)}},
    {"unit-flat 2 sets x4 2 blocks", LHK_GRAY8_KERNELS(2, LHK_FLAT_UNIT, 4, 2)},
    {"unit-flat 2 sets x4 3 blocks", LHK_GRAY8_KERNELS(2, LHK_FLAT_UNIT, 4, 3)},
    {"unit-flat 4 sets x4 1 block", LHK_GRAY8_KERNELS(4, LHK_FLAT_UNIT, 4, 1)},
    {"no flat test 2 sets x4 2 blocks", LHK_GRAY8_KERNELS(2, LHK_FLAT_NONE, 4, 2)},
    {"word-flat 2 sets x4 2 blocks", LHK_GRAY8_KERNELS(2, LHK_FLAT_WORD, 4, 2)},
    /* Fewer units in flight a round: on a 4K frame each thread has only some
     * 64 bytes, and with x4 they all arrive before any is counted. */
    {"unit-flat 2 sets x2 2 blocks", LHK_GRAY8_KERNELS(2, LHK_FLAT_UNIT, 2, 2)},
    {"unit-flat 2 sets x1 2 blocks", LHK_GRAY8_KERNELS(2, LHK_FLAT_UNIT, 1, 2)},
    {"unit-flat 1 set x2 3 blocks", LHK_GRAY8_KERNELS(1, LHK_FLAT_UNIT, 2, 3)},
    {"unit-flat 1 set x2 2 blocks", LHK_GRAY8_KERNELS(1, LHK_FLAT_UNIT, 2, 2)},
    {"unit-flat 1 set x4 2 blocks", LHK_GRAY8_KERNELS(1, LHK_FLAT_UNIT, 4, 2)},
};
#define LHK_GRAY8_N_VARIANTS (int)(sizeof lhk_gray8_variants / sizeof lhk_gray8_variants[0])
static_assert(sizeof lhk_gray8_variants / sizeof lhk_gray8_variants[0] <= LHK_GRAY8_MAX_VARIANTS,
              "LhkDevice has no room for the occupancy of every 8-bit variant");

extern "C" int lhk_gray8_variant_count(void)
{
  return LHK_GRAY8_N_VARIANTS;
}

extern "C" const char *lhk_gray8_variant_name(int variant)
{
  return variant >= 0 && variant < LHK_GRAY8_N_VARIANTS ? lhk_gray8_variants[variant].name : NULL;
}

/* Sub-histogram copies for a bin count: 8192 counters per block in all. */
static int shared_copies(uint32_t bins)
{
  uint32_t copies = LHK_SHARED_HISTOGRAM_BYTES / 4 / bins;
  return copies > 32 ? 32 : (int)copies;
}

static int variant_log2(int copies)
{
  int i = 0;
  while ((32 >> i) > copies)
    i++;
  return i;
}

/* The sub-histograms, and for a fused variant what its finishing block
 * needs of the same memory afterwards (lhk_finish_if_last). */
static size_t dynamic_shared_bytes(int variant)
{
  if (variant == LHK_VARIANT_GLOBAL)
    return 0;
  size_t bytes = LHK_SHARED_HISTOGRAM_BYTES;
  if (variant >= 5) {
    const int copies = 32 >> (variant - 5);
    const size_t finish = LHK_SHARED_HISTOGRAM_BYTES / 4 / copies > LHK_BLOCK_THREADS
                              ? sizeof(LhkWideFinishShared)
                              : sizeof(LhkFinishShared);
    bytes = finish > bytes ? finish : bytes;
  }
  return bytes;
}

/* Packed 4:2:2 by the 8-bit kernel (LHK_PIXEL_PACKED422): plain [0] with
 * the sets of lhk_histogram's default 8-bit kernel, fused [1] with those of
 * lhk_histogram_finish's, both loading 2 units (64 bytes) a round: a unit
 * is twice an 8-bit one, and 4 of them took more registers than the 64 that
 * 2 blocks of 512 threads leave. */
static const LhkHistogramKernel lhk_packed422_kernels[2] = {
    lhk_gray8_kernel<2, LHK_FLAT_UNIT, 2, 2, LHK_MODE_SHARED, LHK_PIXEL_PACKED422>,
    lhk_gray8_kernel<1, LHK_FLAT_UNIT, 2, 2, LHK_MODE_FUSED, LHK_PIXEL_PACKED422>};
static const size_t lhk_packed422_shared_bytes[2] = {LhkGray8Layout<2>::BYTES,
                                                     LhkGray8Layout<1>::BYTES};

/* Whether an LHK_PIXEL_Y16 image is packed 4:2:2 at 8 bits, as
 * lhi_cuda_luma_word describes YUY2 (Y the low byte of each word) and UYVY
 * (the high byte): exactly what LHK_PIXEL_PACKED422 reads, with no clamp
 * (every byte is below 256 bins). */
static bool lhk_packed422_image(const LhkImage *image, uint32_t bins)
{
  return bins == 256 && !image->swap && image->max_value >= 255 &&
         ((image->shift == 0 && image->keep == 0xff00u) ||
          (image->shift == 8 && image->keep == 0x00ffu));
}

/* Whether a launch of these images takes the packed 4:2:2 kernel of a mode
 * (0 plain, 1 fused). */
static bool use_packed422(const LhkDevice *device, LhkPixel pixel, uint32_t bins,
                          const LhkImage *images, int n_images, int mode)
{
  if (pixel != LHK_PIXEL_Y16 || device->unfused_wide || device->packed422_blocks_per_sm[mode] < 1)
    return false;
  for (int i = 0; i < n_images; i++)
    if (!lhk_packed422_image(&images[i], bins))
      return false;
  return true;
}

/* The cluster kernel of a pixel layout. */
static LhkHistogramKernel cluster_kernel(LhkPixel pixel)
{
  switch (pixel) {
  case LHK_PIXEL_Y8:
    return lhk_cluster_histogram_kernel<LHK_PIXEL_Y8>;
  case LHK_PIXEL_Y16:
    return lhk_cluster_histogram_kernel<LHK_PIXEL_Y16>;
  case LHK_PIXEL_RGB8:
    return lhk_cluster_histogram_kernel<LHK_PIXEL_RGB8>;
  case LHK_PIXEL_RGBA8:
    return lhk_cluster_histogram_kernel<LHK_PIXEL_RGBA8>;
  case LHK_PIXEL_RGB16:
    return lhk_cluster_histogram_kernel<LHK_PIXEL_RGB16>;
  case LHK_PIXEL_RGBA16:
    return lhk_cluster_histogram_kernel<LHK_PIXEL_RGBA16>;
  case LHK_PIXEL_RGB10:
    return lhk_cluster_histogram_kernel<LHK_PIXEL_RGB10>;
  case LHK_PIXEL_V210:
    return lhk_cluster_histogram_kernel<LHK_PIXEL_V210>;
  default:
    return NULL;
  }
}

/* Blocks of a cluster for a histogram of `bins` bins. */
static unsigned cluster_blocks(const LhkDevice *device, uint32_t bins)
{
  const uint32_t per_block = device->cluster_slice_bytes / 4;
  return bins > per_block ? bins / per_block : 1;
}

/* Whether the device runs clusters, at which slice size, and how many of the
 * widest fit at once per layout.  A device without clusters (before sm_90),
 * or one that cannot hold them, keeps the global copies. */
static cudaError_t cluster_init(LhkDevice *device)
{
  device->cluster_slice_bytes = 0;
  memset(device->cluster_resident, 0, sizeof device->cluster_resident);
  int major = 0, cluster_launch = 0;
  LHK_RETURN_IF_ERROR(
      cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device->device));
  LHK_RETURN_IF_ERROR(
      cudaDeviceGetAttribute(&cluster_launch, cudaDevAttrClusterLaunch, device->device));
  if (major < 9 || !cluster_launch)
    return cudaSuccess;
  uint32_t slice = LHK_CLUSTER_SLICE_BYTES;
  const char *forced = getenv("LHK_CLUSTER_SLICE_BYTES");
  if (forced && *forced) {
    const long v = atol(forced);
    if (v == 0 || (v >= 16384 && v <= 131072 && (v & (v - 1)) == 0))
      slice = (uint32_t)v;
  }
  if (slice == 0)
    return cudaSuccess;
  device->cluster_slice_bytes = slice;
  const unsigned widest = cluster_blocks(device, LHK_MAX_BINS);
  bool any = false;
  for (int pixel = 0; pixel < LHK_PIXEL_COUNT; pixel++) {
    LhkHistogramKernel kernel = cluster_kernel((LhkPixel)pixel);
    if (!kernel)
      continue;
    cudaError_t error =
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)slice);
    if (error == cudaSuccess && widest > 8)
      error = cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
    int clusters = 0;
    if (error == cudaSuccess) {
      cudaLaunchConfig_t config = {};
      cudaLaunchAttribute attribute;
      attribute.id = cudaLaunchAttributeClusterDimension;
      attribute.val.clusterDim.x = widest;
      attribute.val.clusterDim.y = 1;
      attribute.val.clusterDim.z = 1;
      config.gridDim = dim3(widest * device->sm_count, 1, 1);
      config.blockDim = dim3(LHK_BLOCK_THREADS, 1, 1);
      config.dynamicSmemBytes = slice;
      config.attrs = &attribute;
      config.numAttrs = 1;
      error = cudaOccupancyMaxActiveClusters(&clusters, kernel, &config);
    }
    if (error != cudaSuccess) {
      (void)cudaGetLastError();
      clusters = 0;
    }
    device->cluster_resident[pixel] = clusters;
    any = any || clusters > 0;
  }
  if (!any)
    device->cluster_slice_bytes = 0;
  return cudaSuccess;
}

extern "C" cudaError_t lhk_device_init(LhkDevice *device)
{
  LHK_RETURN_IF_ERROR(cudaGetDevice(&device->device));
  LHK_RETURN_IF_ERROR(
      cudaDeviceGetAttribute(&device->sm_count, cudaDevAttrMultiProcessorCount, device->device));
  for (int pixel = 0; pixel < LHK_PIXEL_COUNT; pixel++) {
    for (int variant = 0; variant < LHK_N_VARIANTS; variant++) {
      LhkHistogramKernel kernel = histogram_kernel((LhkPixel)pixel, variant);
      int blocks = 0;
      if (kernel)
        LHK_RETURN_IF_ERROR(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
            &blocks, kernel, LHK_BLOCK_THREADS, dynamic_shared_bytes(variant)));
      device->histogram_blocks_per_sm[pixel][variant] = blocks > 0 ? blocks : 1;
    }
  }
  for (int v = 0; v < LHK_GRAY8_N_VARIANTS; v++) {
    for (int mode = 0; mode < 2; mode++) {
      const LhkGray8Variant &g = lhk_gray8_variants[v];
      /* Above 48 KiB only when asked for; no L1 wanted beside it (the frame
       * is read once).  A device without the shared memory refuses the
       * first: the variant is left unusable (0 blocks) and the error read
       * back, so that it does not surface at a later launch. */
      int blocks = 0;
      cudaError_t error = cudaFuncSetAttribute(
          g.kernels[mode], cudaFuncAttributeMaxDynamicSharedMemorySize, (int)g.shared_bytes[mode]);
      if (error == cudaSuccess)
        error =
            cudaFuncSetAttribute(g.kernels[mode], cudaFuncAttributePreferredSharedMemoryCarveout,
                                 cudaSharedmemCarveoutMaxShared);
      if (error == cudaSuccess)
        error = cudaOccupancyMaxActiveBlocksPerMultiprocessor(
            &blocks, g.kernels[mode], LHK_BLOCK_THREADS, g.shared_bytes[mode]);
      if (error != cudaSuccess) {
        (void)cudaGetLastError();
        blocks = 0;
      }
      device->gray8_blocks_per_sm[v][mode] = v == 0 && blocks < 1 ? 1 : blocks;
    }
  }
  for (int mode = 0; mode < 2; mode++) {
    const int preferred[2] = {mode == 1 ? LHK_GRAY8_FUSED_DEFAULT : LHK_GRAY8_DEFAULT,
                              LHK_GRAY8_DEFAULT};
    device->gray8_variant[mode] = 0;
    for (int i = 1; i >= 0; i--)
      if (device->gray8_blocks_per_sm[preferred[i]][mode] >= LHK_GRAY8_MIN_RESIDENT)
        device->gray8_variant[mode] = preferred[i];
  }
  for (int mode = 0; mode < 2; mode++) {
    /* As the 8-bit kernels: a device that cannot hold one, or holds fewer
     * blocks of it than the 8-bit default wants, leaves packed 4:2:2 to the
     * generic Y16 kernel. */
    const LhkHistogramKernel kernel = lhk_packed422_kernels[mode];
    const int bytes = (int)lhk_packed422_shared_bytes[mode];
    int blocks = 0;
    cudaError_t error =
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
    if (error == cudaSuccess)
      error = cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                                   cudaSharedmemCarveoutMaxShared);
    if (error == cudaSuccess)
      error = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, LHK_BLOCK_THREADS,
                                                            (size_t)bytes);
    if (error != cudaSuccess) {
      (void)cudaGetLastError();
      blocks = 0;
    }
    device->packed422_blocks_per_sm[mode] = blocks >= LHK_GRAY8_MIN_RESIDENT ? blocks : 0;
  }
  /* For measuring (kernels/NOTES.md): the path before the fused wide
   * histograms, and the copies of the fused ones. */
  const char *unfused = getenv("LHK_UNFUSED_WIDE");
  device->unfused_wide = unfused && *unfused && strcmp(unfused, "0") != 0;
  device->fused_wide_copies = LHK_FUSED_WIDE_COPIES;
  const char *wide_copies = getenv("LHK_FUSED_WIDE_COPIES");
  if (wide_copies && *wide_copies) {
    const int c = atoi(wide_copies);
    if (c == 1 || c == 2 || c == 4)
      device->fused_wide_copies = (uint32_t)c;
  }
  LHK_RETURN_IF_ERROR(cluster_init(device));
  const char *forced = getenv("LHK_GRAY8_VARIANT");
  if (forced && *forced) {
    const int v = atoi(forced);
    if (v >= 0 && v < LHK_GRAY8_N_VARIANTS)
      device->gray8_variant[0] = device->gray8_variant[1] = v;
  }
  return cudaSuccess;
}

/* After the tickets, one room serves the global mode's copies and the fused
 * path's (never in the same launch; each leaves it zero). */
extern "C" size_t lhk_histogram_scratch_bytes(uint32_t bins, int n_slots)
{
  const int fused_copies =
      LHK_FUSED_COPIES > LHK_FUSED_WIDE_MAX_COPIES ? LHK_FUSED_COPIES : LHK_FUSED_WIDE_MAX_COPIES;
  size_t copies = (size_t)fused_copies * LHK_FUSED_MAX_BINS * sizeof(lhk_u64);
  if (bins > LHK_SHARED_MAX_BINS) {
    const size_t global = (size_t)n_slots * LHK_GLOBAL_COPIES * bins * sizeof(uint32_t);
    copies = global > copies ? global : copies;
  }
  return LHK_TICKET_BYTES + copies;
}

static bool valid_bins(uint32_t bins)
{
  return bins >= 256 && bins <= LHK_MAX_BINS && (bins & (bins - 1)) == 0;
}

static bool valid_image(const LhkImage *image, int n_slots)
{
  return image->data && image->slot < (uint32_t)n_slots && image->width > 0 && image->height > 0 &&
         (uint64_t)(image->width + 1ull) * image->height < (1ull << 31);
}

/* The blocks per image: what stays resident on the device, shared among the
 * images, and no more than the largest image has units for. */
static unsigned grid_width(const LhkDevice *device, int blocks_per_sm, const LhkImage *images,
                           int n_images, uint32_t pixels_per_unit)
{
  uint64_t most_units = 0;
  for (int i = 0; i < n_images; i++) {
    uint64_t units = (uint64_t)(images[i].width / pixels_per_unit + 1) * images[i].height;
    if (units > most_units)
      most_units = units;
  }
  uint64_t needed = (most_units + LHK_BLOCK_THREADS - 1) / LHK_BLOCK_THREADS;
  uint64_t resident = (uint64_t)device->sm_count * blocks_per_sm;
  uint64_t blocks = resident / (uint64_t)n_images;
  if (blocks > needed)
    blocks = needed;
  return blocks > 0 ? (unsigned)blocks : 1;
}

static uint32_t pixels_per_unit(LhkPixel pixel)
{
  switch (pixel) {
  case LHK_PIXEL_Y8:
    return LhkLayout<LHK_PIXEL_Y8>::PX;
  case LHK_PIXEL_Y16:
    return LhkLayout<LHK_PIXEL_Y16>::PX;
  case LHK_PIXEL_RGB8:
    return LhkLayout<LHK_PIXEL_RGB8>::PX;
  case LHK_PIXEL_RGBA8:
    return LhkLayout<LHK_PIXEL_RGBA8>::PX;
  case LHK_PIXEL_RGB16:
    return LhkLayout<LHK_PIXEL_RGB16>::PX;
  case LHK_PIXEL_RGB10:
    return LhkLayout<LHK_PIXEL_RGB10>::PX;
  case LHK_PIXEL_V210:
    return LhkLayout<LHK_PIXEL_V210>::PX;
  default:
    return LhkLayout<LHK_PIXEL_RGBA16>::PX;
  }
}

/* The 8-bit gray kernel a device uses, plain (mode 0) or fused (1): the one
 * asked for where the device can run it, else variant 0. */
static int gray8_variant(const LhkDevice *device, int mode)
{
  const int v = device->gray8_variant[mode];
  return v > 0 && v < LHK_GRAY8_N_VARIANTS && device->gray8_blocks_per_sm[v][mode] > 0 ? v : 0;
}

/* A histogram kernel with what its launch needs. */
struct LhkLaunch {
  LhkHistogramKernel kernel;
  size_t shared_bytes;
  int blocks_per_sm;
};

/* The kernel of a pixel layout for a variant of histogram_kernel(), or for
 * 8-bit gray the device's gray8 variant in the same mode (0 plain, 1 fused);
 * false when the layout has no such variant (8-bit gray: other than 256
 * bins). */
static bool choose_kernel(const LhkDevice *device, LhkPixel pixel, int variant, int gray8_mode,
                          LhkLaunch *launch)
{
  const LhkHistogramKernel kernel = histogram_kernel(pixel, variant);
  if (!kernel)
    return false;
  if (pixel == LHK_PIXEL_Y8) {
    const int v = gray8_variant(device, gray8_mode);
    launch->kernel = lhk_gray8_variants[v].kernels[gray8_mode];
    launch->shared_bytes = lhk_gray8_variants[v].shared_bytes[gray8_mode];
    launch->blocks_per_sm = device->gray8_blocks_per_sm[v][gray8_mode];
  } else {
    launch->kernel = kernel;
    launch->shared_bytes = dynamic_shared_bytes(variant);
    launch->blocks_per_sm = device->histogram_blocks_per_sm[pixel][variant];
  }
  return launch->kernel != NULL;
}

/* Queues the cluster kernel (lhk_cluster_histogram_kernel): as many
 * clusters as stay resident, shared among the images, no more than the
 * largest image has units for. */
static cudaError_t launch_clusters(const LhkDevice *device, LhkPixel pixel,
                                   const LhkHistogramParams &p, const LhkImage *images,
                                   int n_images, cudaStream_t stream)
{
  const unsigned size = cluster_blocks(device, p.bins);
  /* Narrower histograms take smaller clusters of the same blocks. */
  const uint64_t resident_blocks =
      (uint64_t)device->cluster_resident[pixel] * cluster_blocks(device, LHK_MAX_BINS);
  uint64_t most_units = 0;
  for (int i = 0; i < n_images; i++) {
    uint64_t units = (uint64_t)(images[i].width / pixels_per_unit(pixel) + 1) * images[i].height;
    most_units = units > most_units ? units : most_units;
  }
  uint64_t blocks = resident_blocks / (uint64_t)n_images;
  const uint64_t needed = (most_units + LHK_BLOCK_THREADS - 1) / LHK_BLOCK_THREADS;
  if (blocks > needed)
    blocks = needed;
  blocks = blocks / size * size;
  if (blocks < size)
    blocks = size;

  cudaLaunchConfig_t config = {};
  cudaLaunchAttribute attribute;
  attribute.id = cudaLaunchAttributeClusterDimension;
  attribute.val.clusterDim.x = size;
  attribute.val.clusterDim.y = 1;
  attribute.val.clusterDim.z = 1;
  config.gridDim = dim3((unsigned)blocks, (unsigned)n_images, 1);
  config.blockDim = dim3(LHK_BLOCK_THREADS, 1, 1);
  config.dynamicSmemBytes = (size_t)p.bins * 4 / size;
  config.stream = stream;
  config.attrs = &attribute;
  config.numAttrs = 1;
  LHK_RETURN_IF_ERROR(cudaLaunchKernelEx(&config, cluster_kernel(pixel), p));
  LHK_CHECK_LAUNCH(stream);
  return cudaSuccess;
}

extern "C" cudaError_t lhk_histogram(const LhkDevice *device, LhkPixel pixel, uint32_t bins,
                                     const LhkImage *images, int n_images,
                                     unsigned long long *histograms, int n_slots, void *scratch,
                                     cudaStream_t stream)
{
  if (!device || (unsigned)pixel >= LHK_PIXEL_COUNT || !valid_bins(bins) || !images ||
      n_images < 1 || n_images > LHK_MAX_IMAGES || n_slots < 1 || n_slots > LHK_MAX_IMAGES ||
      !histograms || !scratch)
    return cudaErrorInvalidValue;
  LhkHistogramParams p;
  memset(&p, 0, sizeof p);
  for (int i = 0; i < n_images; i++) {
    if (!valid_image(&images[i], n_slots))
      return cudaErrorInvalidValue;
    p.images[i] = images[i];
  }
  p.bins = bins;
  p.histograms = histograms;
  p.scratch = scratch;

  if (use_packed422(device, pixel, bins, images, n_images, 0)) {
    dim3 grid(grid_width(device, device->packed422_blocks_per_sm[0], images, n_images,
                         LhkLayout<LHK_PIXEL_PACKED422>::PX),
              n_images);
    lhk_packed422_kernels[0]<<<grid, LHK_BLOCK_THREADS, lhk_packed422_shared_bytes[0], stream>>>(p);
    LHK_CHECK_LAUNCH(stream);
    return cudaSuccess;
  }
  const bool global = bins > LHK_SHARED_MAX_BINS;
  if (global && device->cluster_slice_bytes > 0 && device->cluster_resident[pixel] > 0)
    return launch_clusters(device, pixel, p, images, n_images, stream);
  const int variant = global ? LHK_VARIANT_GLOBAL : variant_log2(shared_copies(bins));
  LhkLaunch launch;
  if (!choose_kernel(device, pixel, variant, 0, &launch))
    return cudaErrorInvalidValue;
  dim3 grid(grid_width(device, launch.blocks_per_sm, images, n_images, pixels_per_unit(pixel)),
            n_images);
  launch.kernel<<<grid, LHK_BLOCK_THREADS, launch.shared_bytes, stream>>>(p);
  LHK_CHECK_LAUNCH(stream);
  if (global) {
    dim3 merge_grid((bins + LHK_MERGE_THREADS - 1) / LHK_MERGE_THREADS, n_slots);
    lhk_merge_kernel<<<merge_grid, LHK_MERGE_THREADS, 0, stream>>>(
        (uint32_t *)((char *)scratch + LHK_TICKET_BYTES), bins, histograms);
    LHK_CHECK_LAUNCH(stream);
  }
  return cudaSuccess;
}

extern "C" cudaError_t lhk_histogram_finish(const LhkDevice *device, LhkPixel pixel,
                                            const LhkImage *image, const LhkFinish *finish,
                                            void *scratch, cudaStream_t stream)
{
  if (!device || (unsigned)pixel >= LHK_PIXEL_COUNT || !image || !finish || !scratch ||
      !valid_bins(finish->bins) || finish->bins > LHK_FUSED_MAX_BINS || !finish->histogram ||
      !finish->result || finish->n_ranks < 0 || finish->n_ranks > LHK_MAX_RANKS ||
      !valid_image(image, 1))
    return cudaErrorInvalidValue;
  LhkHistogramParams p;
  memset(&p, 0, sizeof p);
  p.images[0] = *image;
  p.bins = finish->bins;
  p.histograms = (lhk_u64 *)((char *)scratch + LHK_TICKET_BYTES);
  p.scratch = scratch;
  p.finish = *finish;
  p.finish.histogram = p.histograms;
  /* Up to LHK_BLOCK_THREADS bins every block marks every bin of its copy
   * (contributors, set below); wider ones are committed before a fence and
   * finished by lhk_finish_wide_tile (lhk_finish_if_last), the kernel's
   * variant (8192 / bins copies) holding exactly these bins. */
  const bool wide = finish->bins > LHK_BLOCK_THREADS;
  uint32_t copies = LHK_FUSED_COPIES;
  if (wide) {
    copies = device->fused_wide_copies;
    if (copies < 1 || copies > LHK_FUSED_WIDE_MAX_COPIES)
      copies = LHK_FUSED_WIDE_COPIES;
  }
  p.finish.n_copies = copies;

  LhkLaunch launch;
  uint32_t unit_pixels;
  if (use_packed422(device, pixel, finish->bins, image, 1, 1)) {
    launch.kernel = lhk_packed422_kernels[1];
    launch.shared_bytes = lhk_packed422_shared_bytes[1];
    launch.blocks_per_sm = device->packed422_blocks_per_sm[1];
    unit_pixels = LhkLayout<LHK_PIXEL_PACKED422>::PX;
  } else {
    const int variant = 5 + variant_log2(shared_copies(finish->bins));
    if (!choose_kernel(device, pixel, variant, 1, &launch))
      return cudaErrorInvalidValue;
    unit_pixels = pixels_per_unit(pixel);
  }
  dim3 grid(grid_width(device, launch.blocks_per_sm, image, 1, unit_pixels), 1);
  p.finish.contributors = wide ? 0 : grid.x;
  launch.kernel<<<grid, LHK_BLOCK_THREADS, launch.shared_bytes, stream>>>(p);
  LHK_CHECK_LAUNCH(stream);
  return cudaSuccess;
}

extern "C" uint32_t lhk_histogram_finish_max_bins(const LhkDevice *device)
{
  return device->unfused_wide ? 256 : LHK_FUSED_MAX_BINS;
}
