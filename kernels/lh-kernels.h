/* lh-kernels.h: the plain-C launchers of the CUDA kernels in kernels/, the
 * only door between the library (src/cuda/backend.c) and the device code.
 *
 * Every launcher queues work on the given stream and returns at once with the
 * cudaError_t of its launches (cudaGetLastError after each one); built with
 * LH_DEBUG_SYNC it also synchronizes that stream after each launch, so that a
 * fault is reported by the launch that caused it.  No launcher allocates,
 * synchronizes the device or changes the current device. */
#ifndef LH_KERNELS_H
#define LH_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#include "lh-equalize.h"
#include "lh-overlay.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Frames (or bands of a frame) one launch can take: the descriptors travel
 * as kernel parameters, not through an upload. */
#define LHK_MAX_IMAGES 16
/* Percentile ranks per frame: the median and up to 64 percentiles
 * (LHI_MAX_RANKS in lh-private.h). */
#define LHK_MAX_RANKS 65
/* Histograms up to this many bins are privatized in shared memory; larger
 * ones (9..16-bit) in global memory. */
#define LHK_SHARED_MAX_BINS 4096
#define LHK_MAX_BINS 65536

/* How the pixels of plane 0 are laid out, one kernel variant each. */
typedef enum {
  LHK_PIXEL_Y8,     /* one 8-bit sample: GRAY8, the Y plane of 8-bit planar YUV */
  LHK_PIXEL_Y16,    /* one 16-bit word: GRAY16 (either byte order), the Y plane of 10 to
                       16-bit YUV, and packed 4:2:2 (Y one byte of each word, keep) */
  LHK_PIXEL_RGB8,   /* three 8-bit samples: RGB, BGR */
  LHK_PIXEL_RGBA8,  /* four 8-bit samples, the fourth ignored: RGBA, BGRA, RGBX, BGRX */
  LHK_PIXEL_RGB16,  /* three 16-bit samples */
  LHK_PIXEL_RGBA16, /* four 16-bit samples, the fourth ignored */
  /* R'G'B' 10 and 16 bits */
  LHK_PIXEL_RGB10, /* 10-bit R'G'B' packed in a 32-bit word, sample i at bits 10 i .. 10 i + 9,
                      the top two bits kept; big-endian words where swap_bytes is set */
  LHK_PIXEL_V210,  /* v210: groups of 6 pixels in 16 bytes (lh-yuv.h), a row ceil(width / 6)
                      groups from its first byte; the Y fields rewritten, the Cb, Cr fields, the
                      Y fields past the width and the top two bits of each word kept */
  LHK_PIXEL_COUNT
} LhkPixel;

/* One image (a frame, or a band of rows of one) in device memory. */
typedef struct {
  const void *data;   /* device address of the first pixel of row 0 (any alignment
                         for 8-bit samples, even for 16-bit ones; V210: the first
                         group, any alignment) */
  size_t stride;      /* bytes from one row to the next */
  uint32_t width;     /* pixels; (width + 1) * height < 2^31 (split larger frames) */
  uint32_t height;    /* rows */
  uint32_t slot;      /* which histogram of the launch the pixels count in */
  uint32_t shift;     /* Y16: right shift of each sample (P010: 6), else 0 */
  uint32_t keep;      /* Y16: the bits of a word that are not Y (YUY2: 0xff00), 0 for none */
  uint32_t swap;      /* Y16: non-zero for big-endian words (GRAY16_BE) */
  uint32_t max_value; /* values above are counted in this bin (lhi_clamp_sample) */
  uint32_t weights[3]; /* RGB pixels: the luma weight of samples 0, 1, 2 in the
                          pixel, i.e. LhiLumaWeights permuted to the byte order */
  uint32_t luma_one;   /* RGB pixels: LhiLumaWeights.one, which rule (lh-luma.h) */
  uint32_t swap_bytes; /* RGB10: the words are big-endian (r210) */
} LhkImage;

/* Room for the 8-bit gray histogram kernels histogram.cu compares. */
#define LHK_GRAY8_MAX_VARIANTS 16

/* What a launcher needs to know of the device, queried once per context. */
typedef struct {
  int device;
  int sm_count;
  /* resident blocks per multiprocessor of each histogram kernel variant
   * (private to histogram.cu, which fills LHK_N_VARIANTS = 11 of them) */
  int histogram_blocks_per_sm[LHK_PIXEL_COUNT][16];
  /* the 8-bit gray kernel (lhk_gray8_variant_name) of lhk_histogram [0] and
   * lhk_histogram_finish [1]: the measured best, unless the environment
   * variable LHK_GRAY8_VARIANT names another or the caller sets it; and the
   * resident blocks per multiprocessor of each, plain and fused */
  int gray8_variant[2];
  int gray8_blocks_per_sm[LHK_GRAY8_MAX_VARIANTS][2];
  /* histograms of more than LHK_SHARED_MAX_BINS bins on thread-block
   * clusters (sm_90 on): the bytes of shared memory a block holds of the
   * bins (0: no clusters, global copies instead), and per pixel layout the
   * clusters of a 65536-bin launch that are resident at once.  The
   * environment variable LHK_CLUSTER_SLICE_BYTES sets the first (0, or a
   * power of two from 16384 to 131072), for measuring. */
  uint32_t cluster_slice_bytes;
  int cluster_resident[LHK_PIXEL_COUNT];
  /* packed 4:2:2 (LHK_PIXEL_Y16 images whose Y is one byte of each word,
   * 256 bins): resident blocks per multiprocessor of the 8-bit kernel that
   * reads their Y bytes ([0] plain, [1] fused), 0 where the device cannot
   * run it (the generic Y16 kernel then counts them) */
  int packed422_blocks_per_sm[2];
  /* the copies of a fused histogram of more than LHK_BLOCK_THREADS bins
   * (lhk_histogram_finish; 1, 2 or 4: LHK_FUSED_WIDE_COPIES in the
   * environment, for measuring) */
  uint32_t fused_wide_copies;
  /* non-zero: the environment variable LHK_UNFUSED_WIDE=1 asked for the
   * path before the fused wide histograms, for measuring one against the
   * other: frames of more than 256 bins take lhk_histogram and lhk_finish
   * (lhk_histogram_finish_max_bins), packed 4:2:2 the generic Y16 kernel */
  int unfused_wide;
} LhkDevice;

/* Fills *device for the current device. */
cudaError_t lhk_device_init(LhkDevice *device);

/* The 8-bit gray histogram kernels there are to measure against each other
 * (tests/bench/lumahist-bench --gray8-variants): how many, and a short name
 * of each (NULL out of range). */
int lhk_gray8_variant_count(void);
const char *lhk_gray8_variant_name(int variant);

/* ------------------------------------------------------------------------ */
/* Histogram (histogram.cu)                                                  */

/* Bytes of scratch lhk_histogram needs for n_slots histograms of `bins` bins.
 * Scratch must be zeroed once when allocated; every launch leaves it zero. */
size_t lhk_histogram_scratch_bytes(uint32_t bins, int n_slots);

/* Adds the luma histogram of each image to histograms[image.slot * bins ...],
 * 64-bit counts in device memory.  bins is a power of two, 2 .. 65536; every
 * image of one launch has the same pixel layout.  n_images <= LHK_MAX_IMAGES,
 * slots < n_slots <= LHK_MAX_IMAGES. */
cudaError_t lhk_histogram(const LhkDevice *device, LhkPixel pixel, uint32_t bins,
                          const LhkImage *images, int n_images, unsigned long long *histograms,
                          int n_slots, void *scratch, cudaStream_t stream);

/* ------------------------------------------------------------------------ */
/* Per-frame results: statistics (reduce.cu) and percentiles (scan.cu)       */

/* The exact integers of a frame's statistics, as LhiMoments, and its
 * percentile values.  In device memory a result block is this header
 * followed by the 64-bit histogram (lhk_result_bytes). */
typedef struct {
  unsigned long long count;
  unsigned long long sum;
  unsigned long long sum_squares_lo; /* the 128-bit sum of squares, low half */
  unsigned long long sum_squares_hi;
  unsigned long long clipped_low;
  unsigned long long clipped_high;
  unsigned long long below_legal;
  unsigned long long above_legal;
  uint32_t min; /* 0 when count is 0, as lhi_moments_from_histogram */
  uint32_t max;
  uint32_t values[LHK_MAX_RANKS];
  uint32_t reserved;
} LhkResult;

/* Histograms of more than LHK_FINISH_CHUNK_BINS bins are finished by many
 * blocks, one per chunk of that many bins, each leaving its chunk's moments
 * in the result block behind the LhkResult (64 bytes a chunk), where one
 * more block gathers them (scan.cu). */
#define LHK_FINISH_CHUNK_BINS 4096
#define LHK_FINISH_MAX_CHUNKS (LHK_MAX_BINS / LHK_FINISH_CHUNK_BINS)
#define LHK_RESULT_PARTIALS_OFFSET ((sizeof(LhkResult) + 63) / 64 * 64)

/* Bytes of a result block: the header (the LhkResult, then the chunks'
 * partial moments), then `bins` 64-bit counts. */
#define LHK_RESULT_HEADER_BYTES                                                                    \
  ((LHK_RESULT_PARTIALS_OFFSET + LHK_FINISH_MAX_CHUNKS * 64 + 255) / 256 * 256)
#define lhk_result_bytes(bins) (LHK_RESULT_HEADER_BYTES + (size_t)(bins) * 8)

/* What finishing one frame needs.  black and white are the legal limits
 * (lhi_range_limits): counts below black and above white are reported; with
 * full range black = 0 and white = bins - 1 make them zero. */
typedef struct {
  unsigned long long *histogram; /* device, `bins` counts: read, then cleared to zero */
  void *result;                  /* device, lhk_result_bytes(bins): written */
  uint32_t bins;
  uint32_t black;
  uint32_t white;
  int n_ranks;
  /* histogram holds this many copies of the `bins` counts, one after the
   * other, which are summed (0 or 1: one; more only as lhk_histogram_finish
   * sets it for its own finishing block: lhk_finish reads one copy of more
   * than LHK_BLOCK_THREADS bins) */
  uint32_t n_copies;
  /* 0: the counts are plain.  Otherwise (set by lhk_histogram_finish) every
   * block of the histogram's launch added to every bin of one copy its count
   * plus 1 << LHK_CONTRIBUTION_SHIFT, with no fence: the copies are read
   * until the blocks counted in each bin add up to this. */
  uint32_t contributors;
  unsigned long long ranks[LHK_MAX_RANKS]; /* 1-based; value = smallest v with cdf(v) >= rank */
} LhkFinish;

/* Where a fused copy's word counts its contributing blocks: above the
 * pixels, which an image holds fewer than 2^31 of. */
#define LHK_CONTRIBUTION_SHIFT 40

/* For each frame, in one block: copies the histogram into its result block,
 * clears it, reduces it to the moments and scans it for the percentile
 * values.  Frames of any sizes in one call; one block per frame. */
cudaError_t lhk_finish(const LhkFinish *frames, int n_frames, cudaStream_t stream);

/* One histogram's moments alone (no values, histogram left as it is), by the
 * single-block reduction: for tests and callers that hold a histogram. */
cudaError_t lhk_moments(const unsigned long long *histogram, uint32_t bins, uint32_t black,
                        uint32_t white, LhkResult *result, cudaStream_t stream);

/* The inclusive cumulative histogram, cdf[v] = sum of histogram[0..v], by one
 * block (for LUTs). */
cudaError_t lhk_cdf(const unsigned long long *histogram, uint32_t bins, unsigned long long *cdf,
                    cudaStream_t stream);

/* ------------------------------------------------------------------------ */
/* The histogram of one image and its finishing in one launch: the last block
 * to commit finishes the frame (fewer launches for the latency of one frame).
 * Only for bins <= LHK_FUSED_MAX_BINS (8 to 12-bit luma).  The counts are
 * gathered in copies in the scratch (lhk_histogram_scratch_bytes(bins, 1)),
 * not in `histogram`, which is left as it is.  Up to LHK_BLOCK_THREADS bins
 * every block adds to every bin (LhkFinish.contributors); above, the blocks
 * add their non-zero bins and take a ticket after a fence (histogram.cu). */
#define LHK_FUSED_MAX_BINS 4096
cudaError_t lhk_histogram_finish(const LhkDevice *device, LhkPixel pixel, const LhkImage *image,
                                 const LhkFinish *finish, void *scratch, cudaStream_t stream);

/* The most bins this device's callers should give lhk_histogram_finish:
 * LHK_FUSED_MAX_BINS, or 256 where LhkDevice.unfused_wide is set. */
uint32_t lhk_histogram_finish_max_bins(const LhkDevice *device);

/* ------------------------------------------------------------------------ */
/* Radix sort (sort.cu)                                                      */

/* Bits of a sort digit (2^r buckets per pass) when 0 is asked for, and the
 * width lhk_sort_percentiles uses; chosen by measurement (tests/bench). */
#define LHK_SORT_RADIX_BITS 8
/* Keys one sort can take (its block x bucket table holds 30-bit counts). */
#define LHK_SORT_MAX_KEYS 0x3fffffffu

/* Bytes of scratch lhk_sort_percentiles needs for a frame of n_keys pixels
 * (any bit depth).  Scratch needs no initialisation. */
size_t lhk_sort_scratch_bytes(uint64_t n_keys);

/* The exact percentile values of one image by sorting its luma keys: the
 * keys (the same luma as lhk_histogram's bins, bit_depth bits, the histogram
 * having 2^bit_depth bins) are made in one pass, sorted by an LSD radix sort,
 * and d_values[i] = sorted[ranks[i] - 1] for 1-based ranks in 1 .. pixels
 * (d_values may point into a result block, LhkResult.values).  image.slot is
 * ignored.  cudaErrorInvalidValue for bad arguments, scratch smaller than
 * lhk_sort_scratch_bytes, or more than LHK_SORT_MAX_KEYS pixels. */
cudaError_t lhk_sort_percentiles(const LhkDevice *device, LhkPixel pixel, const LhkImage *image,
                                 int bit_depth, const unsigned long long *ranks, int n_ranks,
                                 uint32_t *d_values, void *d_scratch, size_t scratch_bytes,
                                 cudaStream_t stream);

/* Bytes of scratch a sort of n keys of key_bytes (2 or 4) needs with
 * radix_bits-bit digits (4, 6, 8, or 0 for LHK_SORT_RADIX_BITS); 0 for a
 * width not built. */
size_t lhk_radix_sort_scratch_bytes(uint64_t n, int key_bytes, int radix_bits);

/* Sorts n keys of d_in (left as they are) by their bits [begin_bit, end_bit)
 * into d_out, stably, ascending; d_in and d_out must not overlap.  For tests
 * and the benchmark (what cub::DeviceRadixSort::SortKeys does). */
cudaError_t lhk_radix_sort_u16(const LhkDevice *device, const uint16_t *d_in, uint16_t *d_out,
                               uint64_t n, int begin_bit, int end_bit, int radix_bits,
                               void *d_scratch, size_t scratch_bytes, cudaStream_t stream);
cudaError_t lhk_radix_sort_u32(const LhkDevice *device, const uint32_t *d_in, uint32_t *d_out,
                               uint64_t n, int begin_bit, int end_bit, int radix_bits,
                               void *d_scratch, size_t scratch_bytes, cudaStream_t stream);

/* ------------------------------------------------------------------------ */
/* Equalization, CLAHE and temporal smoothing (equalize.cu, clahe.cu)        */

/* The luma plane (plane 0) of a frame to rewrite: read from in, written to
 * out (which may be in).  Samples of 4-sample pixels other than the first
 * three are copied. */
typedef struct {
  const void *in;
  void *out;
  size_t in_stride;
  size_t out_stride;
  uint32_t width;
  uint32_t height;
  uint32_t shift;      /* Y16: right shift of each sample (P010: 6), put back on writing */
  uint32_t keep;       /* Y16: the bits of a word that are not Y, kept on writing (LhkImage) */
  uint32_t swap;       /* Y16: big-endian words */
  uint32_t max_value;  /* 2^bit_depth - 1: luma clamped to it, colour samples too */
  uint32_t weights[3]; /* R'G'B' pixels: as LhkImage.weights */
  uint32_t luma_one;   /* R'G'B' pixels: as LhkImage.luma_one */
  uint32_t swap_bytes; /* RGB10: as LhkImage.swap_bytes */
} LhkPlane;

/* The equalizeHist LUT (lhi_build_lut) of a 64-bit histogram, in one block;
 * the histogram is cleared behind. */
cudaError_t lhk_equalize_lut(unsigned long long *histogram, uint32_t bins, uint32_t black,
                             uint32_t white, uint16_t *lut, cudaStream_t stream);

/* out = lut[luma(in)] with the colour rule of lumahist.h, 16-byte loads
 * and stores where the rows allow. */
cudaError_t lhk_apply_lut(LhkPixel pixel, const LhkPlane *plane, const uint16_t *lut,
                          uint32_t bins, cudaStream_t stream);

/* Bytes of a temporal window of `window` LUT sets of `entries` entries; the
 * first LHK_TEMPORAL_HEADER_BYTES are its header, which the host may copy
 * and read with lhk_temporal_header_counts. */
#define LHK_TEMPORAL_HEADER_BYTES 256
size_t lhk_temporal_bytes(int window, size_t entries);
void lhk_temporal_header_counts(const void *header_copy, int *frames, unsigned long long *cuts);

/* One frame of temporal smoothing (lh_temporal_new's definition): decide
 * reads the frame's cut histogram (64-bit, bins) and declares a cut when its
 * distance in 2^-21 to the previous frame's is above threshold (clearing the
 * histogram if clear is set); smooth then puts the LUTs in the window and
 * replaces them by the window's rounded mean.  temporal: lhk_temporal_bytes
 * of device memory, zeroed to start or restart. */
cudaError_t lhk_temporal_decide(void *temporal, unsigned long long *cut_histogram, uint32_t bins,
                                int clear, int window, uint32_t threshold, cudaStream_t stream);
cudaError_t lhk_temporal_smooth(void *temporal, uint16_t *luts, size_t entries,
                                cudaStream_t stream);

/* The tile histograms (32-bit, tiles_y x tiles_x x bins, zero before) of
 * the frame extended by reflection, privatized per tile. */
cudaError_t lhk_clahe_histograms(const LhkDevice *device, LhkPixel pixel, const LhkPlane *plane,
                                 const LhiClaheGrid *grid, uint32_t bins,
                                 uint32_t *tile_histograms, cudaStream_t stream);

/* Each tile's LUT (lhi_clahe_tile_lut), one block per tile; the tile
 * histograms are cleared behind.  cut_histogram (64-bit, bins) gets the sum
 * of the tile histograms before clipping added, unless NULL. */
cudaError_t lhk_clahe_luts(const LhiClaheGrid *grid, uint32_t bins, uint32_t *tile_histograms,
                           uint16_t *luts, unsigned long long *cut_histogram,
                           cudaStream_t stream);

/* Each pixel from the bilinear mix of its four nearest tile LUTs. */
cudaError_t lhk_clahe_apply(LhkPixel pixel, const LhkPlane *plane, const LhiClaheGrid *grid,
                            uint32_t bins, const uint16_t *luts, cudaStream_t stream);

/* LH_CHROMA_SCALE (chroma.cu) on an 8-bit planar or semi-planar YUV frame:
 * the Y plane still holds the old luma; Cb (0) and Cr (1) are read from in
 * and written to out (which may be in), each row's samples step bytes apart
 * from the pointer given for row 0. */
typedef struct {
  const void *luma;
  size_t luma_stride;
  uint32_t width; /* of the luma */
  uint32_t height;
  const void *in[2];
  void *out[2];
  size_t in_stride[2];
  size_t out_stride[2];
  uint32_t step;    /* 1 planar, 2 semi-planar */
  uint32_t x_shift; /* chroma subsampling: 0 .. 2 across, 0 .. 1 down */
  uint32_t y_shift;
} LhkChroma;

/* Chroma scaled before Y goes through lut (256 entries): new luma lut[old]. */
cudaError_t lhk_scale_chroma_lut(const LhkChroma *chroma, const uint16_t *lut, cudaStream_t stream);
/* Chroma scaled before lhk_clahe_apply (bins 256) with the same tile LUTs. */
cudaError_t lhk_scale_chroma_clahe(const LhkChroma *chroma, const LhiClaheGrid *grid,
                                   const uint16_t *luts, cudaStream_t stream);

/* ------------------------------------------------------------------------ */
/* Frame difference (difference.cu)                                          */

/* How a frame's luma values (keys, as the histogram counts them) are read. */
typedef enum {
  LHK_KEYS_Y8,   /* one byte every `step` bytes from `offset` on: 8-bit Y planes, packed 4:2:2 */
  LHK_KEYS_Y16,  /* 16-bit words: shifted down by `shift`, clamped to max_value; big-endian
                    words where swap is set */
  LHK_KEYS_V210, /* the Y fields of v210's 6-pixel groups */
} LhkKeys;

/* One frame against the previous one.  previous holds width x height keys,
 * rows width apart: bytes for LHK_KEYS_Y8, 16-bit words for the others. */
typedef struct {
  const void *data; /* device address of row 0 of plane 0 (Y16: even; V210: 4-byte aligned) */
  size_t stride;    /* bytes from one row to the next (the same alignment) */
  uint32_t width;
  uint32_t height;
  LhkKeys keys;
  uint32_t step;      /* Y8: bytes from one Y to the next (1, or 2 for packed 4:2:2) */
  uint32_t offset;    /* Y8: bytes from a row's start to its first Y (UYVY: 1) */
  uint32_t shift;     /* Y16: P010 6 */
  uint32_t swap;      /* Y16: GRAY16_BE */
  uint32_t max_value; /* Y16: 2^bit_depth - 1 */
  void *previous;     /* device; the frame's keys are written there */
  int compare;        /* 0: previous holds nothing yet, only write it */
} LhkDifference;

/* *sum (device) = sum |key - previous key| over the frame when compare is
 * set (0 otherwise), every previous key then replaced by the frame's, in one
 * pass. */
cudaError_t lhk_difference(const LhkDifference *difference, int sm_count, unsigned long long *sum,
                           cudaStream_t stream);

/* ------------------------------------------------------------------------ */
/* Histogram overlay (overlay.cu)                                            */

typedef struct {
  void *planes[3];
  size_t strides[3];
  LhkPixel pixel;     /* of plane 0 (V210: Y and chroma fields, lhk_overlay_v210_kernel) */
  uint32_t shift;     /* P010: 6 */
  uint32_t top;       /* 2^(significant bits) - 1: a sample above is blended as this */
  int rgb_index[3];   /* sample of R', G', B' in a pixel; -1: luma only */
  int alpha_index;    /* sample (RGB10: field) of a straight alpha in a pixel; -1: none */
  /* 0: none; 1: planar (Cb in plane cb_index, Cr in cr_index: I420, YV12,
   * ...); 2: pairs in plane 1 (Cb sample cb_index: NV12, NV21, P010, ...);
   * 3: packed 4:2:2 (bytes cb_index, cr_index of each 4-byte pair in plane 0) */
  int chroma;
  int chroma_x_shift; /* chroma subsampled by 2^shift across and down */
  int chroma_y_shift;
  int cb_index;
  int cr_index;
  int luma_offset;  /* bytes from a pixel's start to its Y (UYVY: 1) */
  int big_endian;   /* GRAY16_BE */
  uint32_t swap_bytes; /* RGB10: as LhkImage.swap_bytes */
  int frame_width;
  int frame_height;
  int panel_x; /* in the frame as stored; may lie partly outside it */
  int panel_y;
  int panel_width;
  int panel_height;
  int orientation; /* how the frame is shown (lhi_overlay_ink_turned) */
  /* device, a column for each pixel across the panel as shown, less 2 */
  const uint16_t *bar_heights;
  const uint8_t *column_flags;
  LhiInk inks[LHI_INK_COUNT];
} LhkOverlay;

/* Blends the panel into the frame (lhi_overlay_ink, lhi_blend; lhi_blend_over
 * where a pixel has alpha). */
cudaError_t lhk_overlay(const LhkOverlay *overlay, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif /* LH_KERNELS_H */
