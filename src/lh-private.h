/* lh-private.h: internals shared by the files of the library (prefix lhi_):
 * error reporting, format facts, the backend interface and the host-side
 * finishing of statistics.  Not installed. */
#ifndef LH_PRIVATE_H
#define LH_PRIVATE_H

#include <stdbool.h>

#include "lh-equalize.h"
#include "lh-luma.h"
#include "lh-overlay.h"
#include "lh-yuv.h"
#include "lumahist.h"

#if defined(__GNUC__)
#define LHI_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define LHI_PRINTF(f, a)
#endif

/* Sets this thread's message and returns status, so that an error path is
 * `return lhi_error(LH_ERROR_..., "...", ...);`. */
int lhi_error(int status, const char *format, ...) LHI_PRINTF(2, 3);

/* Clears this thread's message (successful calls leave it as it was). */
void lhi_clear_error(void);

/* ------------------------------------------------------------------------ */
/* Formats                                                                   */

/* How a YUV format keeps its chroma. */
typedef enum {
  LHI_CHROMA_NONE,        /* gray, R'G'B' */
  LHI_CHROMA_PLANAR,      /* planes 1 and 2 */
  LHI_CHROMA_SEMI_PLANAR, /* pairs in plane 1 */
  LHI_CHROMA_PACKED,      /* 8-bit 4:2:2 pairs of pixels of 4 bytes in plane 0 */
  LHI_CHROMA_V210,        /* v210's 6-pixel groups in plane 0 (lh-v210.h) */
} LhiChroma;

typedef struct {
  const char *name;
  int n_planes;
  int pixel_bytes;   /* bytes per pixel in plane 0 */
  int sample_bytes;  /* 1 or 2; 4: 10-bit R'G'B' packed in a 32-bit word, r, g, b its fields */
  int default_depth; /* luma bit depth when LhFrame.bit_depth is 0 */
  int r, g, b;       /* sample index of each colour in a pixel; -1 if not RGB */
  /* Sample index of a straight (not premultiplied) alpha in a pixel, which
   * the overlay composites over (packed 10-bit: field 3, the word's top two
   * bits); -1 if none, RGBX's fourth byte and r210's top bits among them,
   * which are padding. */
  int a;
  bool is_yuv;
  bool chroma_interleaved; /* NV12, P010 */
  /* Where Y sits and how chroma is laid out, for the YUV formats of
   * cameras and capture cards (zero for the others, and all that a format
   * without chroma needs). */
  int luma_offset; /* bytes from a pixel's start to its Y: UYVY 1 */
  int luma_shift;  /* bits below the significant ones of a sample: P010 6 */
  bool big_endian; /* 16-bit samples: GRAY16_BE */
  LhiChroma chroma;
  int chroma_x_shift; /* chroma subsampled by 2^shift across (4:2:2: 1, 4:1:1: 2) */
  int chroma_y_shift; /* and down (4:2:0: 1) */
  /* PLANAR: the planes of Cb and Cr; SEMI_PLANAR: the sample of each in a
   * pair; PACKED: their bytes in a 4-byte pair of pixels. */
  int cb_index;
  int cr_index;
} LhiFormatInfo;

/* Y of a format's 16-bit sample words (16-bit samples, or packed 4:2:2
 * pairs of bytes) as lhi_word_luma reads it: its mask and shift. */
void lhi_format_luma_word(const LhiFormatInfo *info, uint32_t *mask, uint32_t *shift);

/* The row bytes of width pixels of plane 0 (pairs of packed 4:2:2 pixels
 * and v210's 6-pixel groups whole). */
size_t lhi_format_row_bytes(const LhiFormatInfo *info, int width);

/* Facts of a format, or NULL if the value is not a format. */
const LhiFormatInfo *lhi_format_info(LhFormat format);

/* Packed 10-bit R'G'B': a 32-bit word a pixel, r, g, b its fields (v210,
 * whose samples are 32-bit words too, is YUV). */
static inline bool lhi_format_is_packed10_rgb(const LhiFormatInfo *info)
{
  return info->r >= 0 && info->sample_bytes == 4;
}

/* Packed 10-bit R'G'B' (sample_bytes 4) whose words are big-endian (r210). */
bool lhi_format_big_endian_words(LhFormat format);

/* The 32-bit word of a packed 10-bit pixel at p (any alignment), in its
 * format's byte order, and its store back. */
static inline uint32_t lhi_load_word(const uint8_t *p, bool big_endian)
{
  uint32_t v;
  __builtin_memcpy(&v, p, sizeof v);
  return big_endian ? __builtin_bswap32(v) : v;
}

static inline void lhi_store_word(uint8_t *p, uint32_t v, bool big_endian)
{
  if (big_endian)
    v = __builtin_bswap32(v);
  __builtin_memcpy(p, &v, sizeof v);
}

/* The luma of a packed 10-bit word whose R', G', B' are fields r, g, b. */
static inline uint32_t lhi_packed10_luma(uint32_t word, const LhiFormatInfo *info, LhiLumaWeights w)
{
  return lhi_luma_wide(lhi_packed10_field(word, info->r), lhi_packed10_field(word, info->g),
                       lhi_packed10_field(word, info->b), w);
}

/* The bit depth of the luma values of a frame (8 for RGB, 10 for P010, ...). */
int lhi_frame_luma_depth(const LhFrame *frame);

/* Checks formats, sizes, pointers and strides; sets the message on failure. */
int lhi_frame_validate(const LhFrame *frame);

/* A view of plane 0 (and, for RGB, the packed pixels) restricted to roi;
 * a zero-sized roi leaves the frame whole. */
int lhi_frame_crop(const LhFrame *frame, const LhRect *roi, LhFrame *cropped);

/* The weights of a matrix for luma of bit_depth bits (lh-luma.h: the 15-bit
 * rule at 8 bits, the exact one above). */
LhiLumaWeights lhi_luma_weights(LhMatrix matrix, int bit_depth);

/* ------------------------------------------------------------------------ */
/* Analysis jobs and backends                                                */

/* Everything the statistics need beyond the histogram, as exact integers so
 * that both backends give the same bits; doubles are made on the host. */
typedef struct {
  uint64_t count;
  /* Σ v h(v) in 128 bits: a histogram summed over many frames (2^48 pixels
   * of 16-bit luma) passes 2^64. */
  unsigned __int128 sum;
  unsigned __int128 sum_squares;
  uint32_t min;
  uint32_t max;
  uint64_t clipped_low;  /* at 0 */
  uint64_t clipped_high; /* at the top code value */
  uint64_t below_legal;  /* limited range only */
  uint64_t above_legal;
} LhiMoments;

/* A 65536-bin histogram's sums by blocks of 256 bins: for block b (bins
 * v = 256 b + j, j = 0 .. 255) the count Σ h(v), Σ h(v) j and Σ h(v) j².
 * The CPU backend keeps them as it adds its counters into the bins, so
 * that the moments and the percentile walk read 256 blocks and a few bins
 * instead of the 65536 bins again (a 16-bit frame's fixed cost: 70 us of
 * a 1080p frame's 0.7 ms).  Exact integers while the histogram holds fewer
 * than LHI_BLOCK_SUMS_MAX_COUNT counts (each j² h below 2^48), so that the
 * moments made from them are the same integers, and the same doubles, as
 * lhi_moments_from_histogram's. */
#define LHI_BLOCK_BINS 256
#define LHI_BLOCKS (65536 / LHI_BLOCK_BINS)
#define LHI_BLOCK_SUMS_MAX_COUNT ((uint64_t)1 << 32)
typedef struct {
  uint64_t count[LHI_BLOCKS];
  uint64_t sum[LHI_BLOCKS];
  uint64_t sum_squares[LHI_BLOCKS];
} LhiBlockSums;

/* Rank slot 0 is the median; slots 1..n are the options' percentiles. */
#define LHI_MAX_RANKS (LH_MAX_PERCENTILES + 1)

/* One frame's work for a backend.  The front (context.c) fills the inputs;
 * the backend fills histogram, moments and values. */
typedef struct {
  /* inputs */
  LhFrame frame; /* already cropped to the region of interest */
  int bit_depth; /* luma depth; the histogram has 2^bit_depth bins */
  LhiLumaWeights weights;
  LhRange range;
  bool use_sort; /* find values by sorting keys rather than by the CDF */
  int n_ranks;
  uint64_t ranks[LHI_MAX_RANKS]; /* 1-based nearest ranks, 1 .. count */
  /* outputs */
  uint64_t *histogram; /* 2^bit_depth bins, host memory, to be filled */
  LhiMoments moments;
  uint32_t values[LHI_MAX_RANKS]; /* the value at each rank */
} LhiJob;

/* ------------------------------------------------------------------------ */
/* Equalization and overlay jobs (equalize.c, clahe.c, temporal.c, overlay.c) */
/* and their CPU implementations (cpu/equalize.c, cpu/clahe.c, cpu/overlay.c) */

typedef enum {
  LHI_EQUALIZE_GLOBAL,
  LHI_EQUALIZE_CLAHE,
  LHI_EQUALIZE_LUT, /* a LUT the caller gave */
} LhiEqualizeKind;

/* One frame to equalize.  in and out are validated, of one format, size and
 * memory; out may be in. */
typedef struct {
  LhiEqualizeKind kind;
  LhFrame in;
  LhFrame out;
  int bit_depth; /* luma depth: LUTs have 2^bit_depth entries */
  LhiLumaWeights weights;
  uint32_t black; /* the output range */
  uint32_t white;
  const uint16_t *lut; /* LUT kind: host memory */
  LhiClaheGrid grid;   /* CLAHE kind */
  LhTemporal *temporal;
  /* LH_CHROMA_SCALE on a format it applies to (lhi_chroma_rule_applies):
   * every chroma sample of out written from in's by lhi_scale_chroma. */
  bool scale_chroma;
} LhiEqualizeJob;

/* One overlay panel to draw.  The panel may reach past the frame; only the
 * part inside is drawn. */
typedef struct {
  LhFrame frame;
  int sample_depth; /* significant bits of a sample (P010: 10, at the top) */
  LhRect panel;     /* in the frame as stored; width, height >= 3 */
  int orientation;  /* how the frame is shown (lhi_overlay_ink_turned), 0 .. 8 */
  /* host, a column for each pixel across the panel as shown, less 2 */
  const uint16_t *bar_heights;
  const uint8_t *column_flags; /* host, LHI_COLUMN_* of each column */
  LhiInk inks[LHI_INK_COUNT];
  /* A gray frame's own alpha plane (lh_overlay_gray_alpha), host memory,
   * samples of the frame's size at full scale; NULL for the others. */
  uint8_t *alpha;
  size_t alpha_stride;
} LhiOverlayJob;

typedef struct LhiBackend LhiBackend;

/* What a temporal state serves; a frame with another key starts it afresh.
 * The output range, the clip limit and, for R'G'B', the luma weights are in
 * it: a mean of LUTs made for two ranges or limits is neither's, and luma of
 * another matrix is another picture. */
typedef struct {
  const LhiBackend *backend;
  const void *place; /* the CUDA context its data is in (a device's); NULL on the host */
  LhiEqualizeKind kind;
  int width;
  int height;
  int bit_depth;
  int tiles_x;
  int tiles_y;
  int orientation; /* CLAHE's grid is the picture's as shown */
  uint32_t black;
  uint32_t white;
  uint32_t clip; /* CLAHE's per-bin limit; 0: none, or global */
  LhiLumaWeights weights;
} LhiTemporalKey;

/* The key of job's frame on backend (its grid's fields zero but for CLAHE). */
LhiTemporalKey lhi_temporal_key(const LhiBackend *backend, const LhiEqualizeJob *job, int width,
                                int height);

/* A backend's window of LUTs, kept where its LUTs are. */
typedef struct {
  void (*free)(void *data);
  void (*reset)(void *data);
  int (*query)(void *data, int *frames, uint64_t *cuts);
} LhiTemporalOps;

struct LhTemporal {
  int window;
  uint32_t cut_threshold; /* a cut when the distance, in 2^-21, is above it */
  LhiTemporalKey key;
  const LhiTemporalOps *ops; /* NULL until a backend has made its data */
  void *data;
};

/* The data a backend made for key, or NULL when there is none yet (any
 * data of another key is dropped first). */
void *lhi_temporal_data(LhTemporal *temporal, const LhiTemporalKey *key);
void lhi_temporal_attach(LhTemporal *temporal, const LhiTemporalKey *key, const LhiTemporalOps *ops,
                         void *data);

/* Host windows (the CPU backend): smooths n_entries LUT entries (every
 * tile's LUT, one after the other) in place, after checking for a cut
 * between cut_histogram (2^bit_depth bins) and the previous frame's. */
int lhi_temporal_host_step(LhTemporal *temporal, const LhiTemporalKey *key,
                           const uint64_t *cut_histogram, int bit_depth, uint16_t *luts,
                           size_t n_entries);

/* ------------------------------------------------------------------------ */
/* Frame difference (difference.c)                                           */

/* What a difference state's data was made for; a frame with another key
 * drops it and starts afresh. */
typedef struct {
  const LhiBackend *backend;
  const void *place; /* the CUDA context its data is in (a device's); NULL on the host */
  LhFormat format;
  int width;
  int height;
  int bit_depth;
} LhiDifferenceKey;

/* A backend's copy of the previous frame's luma, kept where it computes. */
typedef struct {
  void (*free)(void *data);
} LhiDifferenceOps;

struct LhDifference {
  LhiDifferenceKey key;
  bool has_previous;           /* data holds the luma of a frame of this key */
  const LhiDifferenceOps *ops; /* NULL until a backend has made its data */
  void *data;
};

/* One push for a backend: frame validated, not R'G'B', whole (no region). */
typedef struct {
  LhFrame frame;
  int bit_depth; /* of the luma values (lhi_frame_luma_depth) */
  bool compare;  /* the data holds the previous frame's luma: sum the differences */
  /* output */
  uint64_t sum; /* sum |Y - Y_prev| over the frame, when compare */
} LhiDifferenceJob;

/* Bytes of one luma value in a backend's copy: 1 for the formats of 8-bit
 * samples, 2 for the others (16-bit samples, v210's 10-bit fields). */
static inline int lhi_difference_key_bytes(const LhiFormatInfo *info)
{
  return info->sample_bytes == 1 ? 1 : 2;
}

/* A backend finds its data in difference->data (made for the key of the
 * job's frame), or NULL there: it makes the data and gives it with this. */
void lhi_difference_attach(LhDifference *difference, const LhiDifferenceOps *ops, void *data);

/* The 32-bin profile of a frame's histogram (lh_histogram_distance). */
void lhi_cut_profile(const uint64_t *histogram, int bit_depth, uint32_t *profile);
/* sum |a - b| of two profiles, in units of 2^-21 of distance. */
uint32_t lhi_cut_distance(const uint32_t *a, const uint32_t *b);

/* The global LUT of a histogram into 2^bit_depth entries (lh_lut_from_histogram). */
void lhi_build_lut(const uint64_t *histogram, int bit_depth, uint32_t black, uint32_t white,
                   uint16_t *lut);

/* The CLAHE grid of a frame size and options; fails for sides CLAHE cannot take. */
int lhi_clahe_grid(int width, int height, int bit_depth, int tiles_x, int tiles_y,
                   double clip_limit, uint32_t black, uint32_t white, LhiClaheGrid *grid);

/* The CLAHE tile LUT of a tile histogram (clipped and redistributed in place),
 * 2^bit_depth entries. */
void lhi_clahe_tile_lut(uint32_t *histogram, int bit_depth, const LhiClaheGrid *grid,
                        uint16_t *lut);

/* ------------------------------------------------------------------------ */
/* The CPU backend's threads (cpu/worker-pool.c)                              */

#define LHI_MAX_THREADS 256

/* The cores this process may run on (1 .. LHI_MAX_THREADS). */
int lhi_cpu_count(void);

typedef struct LhiPool LhiPool;

/* A pool of threads, the caller's included (threads - 1 workers, started on
 * first use). */
int lhi_pool_new(int threads, LhiPool **pool);
void lhi_pool_free(LhiPool *pool);
int lhi_pool_threads(const LhiPool *pool);
void lhi_pool_set_threads(LhiPool *pool, int threads);
/* Runs task(part, arg) for every part in [0, n_parts) on the pool's threads
 * and the calling one; returns once all are done.  A NULL pool, or one of
 * one thread, runs them in order on the caller.  Parts must not depend on
 * each other's order. */
void lhi_pool_run(LhiPool *pool, int n_parts, void (*task)(int part, void *arg), void *arg);
/* The same, with the slot of the thread that runs each part, in [0,
 * n_slots): parts may keep per-thread state (a histogram to add to) while
 * there are many more parts than threads.  Threads beyond n_slots take no
 * part of the call. */
void lhi_pool_run_slots(LhiPool *pool, int n_parts, int n_slots,
                        void (*task)(int part, int slot, void *arg), void *arg);

/* The CPU backend's state: its pool. */
typedef struct {
  LhiPool *pool;
} LhiCpuState;

/* Row parts of a frame for the pool: a few a thread (or fewer, for a small
 * frame), so that threads that come late to a call leave their share to
 * the others; one for a pool of one thread.  Part p of n is rows
 * [lhi_band_start(p, n), lhi_band_start(p + 1, n)). */
int lhi_part_count(const LhiPool *pool, int width, int height);
/* The slots a call of n_parts parts may use, for the per-thread buffers of
 * lhi_pool_run_slots: the pool's threads, or one for a single part. */
int lhi_slot_count(const LhiPool *pool, int n_parts);
int lhi_band_start(int band, int bands, int height);

/* The 8-bit luma of a row of width pixels of 3 or 4 bytes, with w[i] the
 * weight of byte i of a pixel (cpu/luma-rows.c: vectorized). */
void lhi_luma_row3_u8(const uint8_t *px, int width, const uint32_t *w, uint8_t *luma);
void lhi_luma_row4_u8(const uint8_t *px, int width, const uint32_t *w, uint8_t *luma);
void lhi_luma_row_u8(const uint8_t *px, int width, int pixel_bytes, const uint32_t *w,
                     uint8_t *luma);
/* The weight of each byte of an 8-bit R'G'B' format's pixel (w[4]; 0 for
 * alpha or padding; all 0 for any other format). */
void lhi_byte_weights(LhFormat format, LhiLumaWeights weights, uint32_t *w);

/* 8-bit rows counted into 64-bit bins through eight interleaved 32-bit
 * sub-histograms, so that runs of one value (a flat sky) do not wait on
 * their own increments; added in before a counter could overflow.  Each
 * copy is LHI_COUNT8_STRIDE counters from the next, so that no two copies'
 * counters of one value are a multiple of 4 KiB apart (which the CPU takes
 * for the same address: each increment would wait on the other's).  Begin,
 * count rows, end (which adds the counts into histogram). */
#define LHI_COUNT8_COPIES 8
#define LHI_COUNT8_STRIDE (256 + 16)
typedef struct {
  uint32_t sub[LHI_COUNT8_COPIES][LHI_COUNT8_STRIDE];
  uint64_t *histogram;
  int64_t pending;
} LhiCount8;

void lhi_count8_begin(LhiCount8 *count, uint64_t *histogram);
void lhi_count8_row(LhiCount8 *count, const uint8_t *row, int width);
/* The luma of a row of 8-bit R'G'B' pixels (lhi_luma_row_u8's, with w[i]
 * the weight of byte i) counted, made 256 pixels at a time into a buffer
 * that stays in the L1 cache: no row of luma to allocate. */
void lhi_count8_rgb_row(LhiCount8 *count, const uint8_t *px, int width, int pixel_bytes,
                        const uint32_t *w);
/* Which vector code the row loops may use, for tests of each path on one
 * machine: LHI_SIMD_BEST (the CPU's best, the default), or at most SSE4.1,
 * or none.  Returns the previous setting.  Not thread-safe: tests only. */
typedef enum { LHI_SIMD_NONE, LHI_SIMD_SSE41, LHI_SIMD_BEST } LhiSimd;
LhiSimd lhi_rows_set_simd(LhiSimd simd);
/* Keys of 10 to 16 bits counted into 64-bit bins through counters narrow
 * enough to stay in or near the L1 cache.  Up to 12 bits: four interleaved
 * copies of 16-bit counters (as LhiCount8), added in before one could
 * wrap; begin (-1: no memory), count rows, end (which adds the counts into
 * histogram).  16-bit keys: one 8-bit counter a key (LhiNarrow, a thread's
 * own), which writes down a carry of 256 as it wraps; begin_narrow, count
 * rows, end, and the caller adds every band's counters and carries into
 * the bins (lhi_count16_add_narrow, blocks first .. end - 1 of 256 bins, a
 * range a thread, the bins written whole: they need not be zeroed first),
 * which keeps the blocks' sums (LhiBlockSums) as it goes. */
typedef struct {
  uint8_t *counters; /* 65536, zeroed by the caller */
  uint16_t *carries; /* room for a key every 256 the band counts (its keys / 256 + 1) */
  size_t n_carries;  /* 0 before counting */
} LhiNarrow;

typedef struct {
  uint16_t *sub;   /* up to 12 bits: 4 copies of bins counters, stride apart */
  uint8_t *narrow; /* 16 bits: bins counters */
  LhiNarrow *narrow_band;
  uint16_t *carry; /* 16 bits: the next slot of narrow_band's carries */
  size_t bins, stride;
  uint64_t *histogram;
  int64_t pending; /* the most keys a copy took since the last flush */
} LhiCount16;

int lhi_count16_begin(LhiCount16 *count, uint64_t *histogram, int bit_depth);
void lhi_count16_begin_narrow(LhiCount16 *count, LhiNarrow *band);
void lhi_count16_row(LhiCount16 *count, const uint16_t *keys, int width);
/* 16-bit keys that are a row's little-endian 16-bit words whole: counted
 * with no row of keys made first. */
void lhi_count16_words_row(LhiCount16 *count, const uint8_t *row, int width);
/* The keys of a row of 16-bit words (lhi_y16_keys_row's) and of a v210
 * row (lhi_v210_keys_row's) counted as they are made, a few at a time: no
 * row of keys (cpu/luma-rows.c: vectorized where it can be). */
void lhi_count16_y16_row(LhiCount16 *count, const uint8_t *row, int width, int shift, uint32_t max,
                         bool big_endian);
void lhi_count16_v210_row(LhiCount16 *count, const uint8_t *row, int width);
void lhi_count16_end(LhiCount16 *count);
void lhi_count16_add_narrow(uint64_t *histogram, const LhiNarrow *bands, int n_bands,
                            int first_block, int end_block, LhiBlockSums *blocks);

/* The luma keys of a row of 16-bit words (shifted down, clamped to max,
 * either byte order: lhi_word_luma with a full mask) and of a v210 row
 * (cpu/luma-rows.c: vectorized where it can be). */
void lhi_y16_keys_row(const uint8_t *row, int width, int shift, uint32_t max, bool big_endian,
                      uint16_t *keys);
void lhi_v210_keys_row(const uint8_t *row, int width, uint16_t *keys);
/* The luma keys of a row of packed 10-bit R'G'B' words (big-endian words
 * swapped first), fw the weights of fields 0, 1, 2 (the format's R, G, B
 * weights put in field order): lhi_luma_wide of the fields. */
void lhi_packed10_keys_row(const uint8_t *row, int width, bool big_endian, LhiLumaWeights fw,
                           uint16_t *keys);
/* Those keys counted as they are made, a few at a time: no row of keys
 * (vectorized where it can be). */
void lhi_count16_packed10_row(LhiCount16 *count, const uint8_t *row, int width, bool big_endian,
                              LhiLumaWeights fw);
/* The luma keys of a row of 16-bit R'G'B' pixels (6 or 8 bytes, samples
 * little-endian), w[i] the weight of sample i (0, 1, 2), rule the luma's
 * rule (its weights' sum, lhi_luma_wide), clamped to max. */
void lhi_rgb16_keys_row(const uint8_t *row, int width, int pixel_bytes, const uint32_t *w,
                        LhiLumaWeights rule, uint32_t max, uint16_t *keys);
/* Those keys counted as they are made, a few at a time (vectorized where
 * it can be): no row of keys. */
void lhi_count16_rgb16_row(LhiCount16 *count, const uint8_t *row, int width, int pixel_bytes,
                           const uint32_t *w, LhiLumaWeights rule, uint32_t max);

/* sum |keys[x] - previous[x]| over a row of width keys, previous then
 * overwritten by keys (cpu/luma-rows.c: vectorized).  The two must not
 * overlap. */
uint64_t lhi_difference_row_u8(const uint8_t *keys, uint8_t *previous, int width);
uint64_t lhi_difference_row_u16(const uint16_t *keys, uint16_t *previous, int width);

/* width samples of every other byte from row on (the Y of packed 4:2:2). */
void lhi_count8_row_step2(LhiCount8 *count, const uint8_t *row, int width);
void lhi_count8_end(LhiCount8 *count);

/* CPU implementations of the backend operations below. */
int lhi_cpu_equalize(void *state, LhiEqualizeJob *job);
int lhi_cpu_difference(void *state, LhDifference *difference, LhiDifferenceJob *job);
int lhi_cpu_clahe(LhiCpuState *state, LhiEqualizeJob *job);
int lhi_cpu_overlay(void *state, const LhiOverlayJob *job);

/* Host helpers of the CPU equalization (cpu/equalize.c) that cpu/clahe.c
 * shares: the luma of row y of in, and row y of out from old and new luma.
 * gains: NULL, or for 8-bit R'G'B' where every luma v becomes the same new
 * value, the colour gain of each v (lhi_gain), looked up instead of divided
 * for each pixel. */
void lhi_cpu_luma_row(const LhiEqualizeJob *job, int y, uint16_t *luma);
void lhi_cpu_write_row(const LhiEqualizeJob *job, int y, const uint16_t *luma,
                       const uint16_t *new_luma, const uint32_t *gains);
void lhi_cpu_copy_chroma(LhiPool *pool, const LhiEqualizeJob *job);

/* LH_CHROMA_SCALE: whether it rewrites the chroma of a format (8-bit planar
 * and semi-planar YUV); *supported is false for the other YUV formats. */
bool lhi_chroma_rule_applies(LhFormat format, bool *supported);

/* Where a chroma sample of an 8-bit planar or semi-planar frame lies: Cb
 * (which 0) or Cr (1) of chroma row cy starts at plane_row + offset and the
 * next sample is step bytes on. */
void lhi_chroma_sample_layout(const LhFrame *frame, int which, int *plane, size_t *offset,
                              size_t *step);

/* cpu/chroma.c: out's chroma from in's by LH_CHROMA_SCALE's rule, with the
 * footprints' old luma from old_luma (width x height 16-bit values) or, when
 * NULL, from in's Y plane; their new luma lut[old] or, when lut is NULL,
 * out's Y plane.  So global equalization runs it before Y is rewritten (in
 * place too) and CLAHE after. */
int lhi_cpu_scale_chroma(LhiPool *pool, const LhiEqualizeJob *job, const uint16_t *old_luma,
                         const uint16_t *lut);

/* Bytes of a chroma row and chroma rows of a 4:2:0 format (GStreamer's
 * rounding up); checks a frame's chroma planes against them. */
void lhi_chroma_shape(const LhFrame *frame, size_t *row_bytes, int *rows);
int lhi_check_chroma(const LhFrame *frame, const char *which);

/* Whether two names are the same in any ASCII case, as every *_from_name()
 * reads its name: strcasecmp follows the locale, and in a Turkish one
 * "i420" would not be "I420". */
bool lhi_names_equal(const char *a, const char *b);

struct LhiBackend {
  const char *name;
  LhBackend kind;
  /* Makes the backend's state; on a missing device returns
   * LH_ERROR_NO_DEVICE with the reason as the message. */
  int (*open)(void **state);
  void (*close)(void *state);
  int (*set_stream)(void *state, void *cuda_stream);
  /* Around each call on the state (lhi_context_enter and the context's
   * other calls): the CUDA backend makes the CUDA context it opened in
   * current for the call when another is (pushed), and pops it after, so
   * the caller's stays as it was.  NULL: nothing to do. */
  int (*enter)(void *state, bool *pushed);
  void (*leave)(void *state, bool pushed);
  /* The device the state works on and, in *cuda_context, the CUDA context
   * (a CUcontext) there; NULL, or -1 and NULL: none, the host's CPU. */
  int (*device)(void *state, const void **cuda_context);
  /* lh_context_set_threads; NULL: the backend has no host threads to set. */
  int (*set_threads)(void *state, int threads);
  /* lh_host_register and lh_host_unregister (bytes 0); NULL: nothing to do. */
  int (*host_register)(void *state, void *memory, size_t bytes);
  /* lh_host_alloc; NULL: LH_ERROR_UNSUPPORTED.  Freed by lh_host_free. */
  int (*host_alloc)(void *state, size_t bytes, void **memory);
  /* Does the frame belong on this backend whatever the CPU would cost (its
   * device memory, host memory page-locked for it)?  NULL: no frame does. */
  bool (*claims_frame)(void *state, const LhFrame *frame);
  /* Is sorting faster than the histogram's CDF for a job of this size? */
  bool (*prefer_sort)(void *state, uint64_t pixels, int bit_depth);
  int (*analyze)(void *state, LhiJob *jobs, size_t n_jobs);
  /* Equalization and overlays of one frame (frames in the backend's memory,
   * or host frames it stages); NULL: LH_ERROR_UNSUPPORTED. */
  int (*equalize)(void *state, LhiEqualizeJob *job);
  int (*overlay)(void *state, const LhiOverlayJob *job);
  /* lh_context_device_time; NULL: LH_ERROR_UNSUPPORTED (no device to time). */
  int (*device_time)(void *state, LhDeviceTime *time);
  /* lh_difference_push: job->frame's luma kept in difference's data, and
   * compared first when job->compare; NULL: LH_ERROR_UNSUPPORTED. */
  int (*difference)(void *state, LhDifference *difference, LhiDifferenceJob *job);
};

extern const LhiBackend lhi_cpu_backend;
#ifdef LH_HAVE_CUDA
extern const LhiBackend lhi_cuda_backend;
/* lh_host_free of what the CUDA backend's host_alloc gave. */
void lhi_cuda_host_free(void *memory);
/* Pushes device's primary context on the calling thread's stack of CUDA
 * contexts; lhi_cuda_on_device_end pops it, leaving the caller's current
 * context and device as they were (cuda/place.c). */
int lhi_cuda_on_device(int device);
void lhi_cuda_on_device_end(int device);
/* The device whose memory pointer is in (cudaMalloc, cudaMallocAsync,
 * CUDA's virtual memory), or -1 for any other memory (host memory,
 * page-locked or not, and managed memory, which every device reads). */
int lhi_cuda_memory_device(const void *pointer);
/* The calling thread's current device, or -1 without a usable one. */
int lhi_cuda_current_device(void);
#endif

/* ------------------------------------------------------------------------ */
/* The per-frame choice of an AUTO context on CUDA (dispatch.c)              */

/* The two ways a host frame can go. */
typedef enum {
  LHI_PATH_CPU, /* the CPU backend's pool */
  LHI_PATH_GPU, /* copied to the device, the kernels there */
  LHI_PATH_COUNT,
} LhiPath;

/* The calls whose costs are measured apart: each does different work. */
typedef enum {
  LHI_OP_ANALYZE,
  LHI_OP_EQUALIZE,
  LHI_OP_CLAHE,
  LHI_OP_LUT,
  LHI_OP_OVERLAY,
  LHI_OP_DIFFERENCE,
} LhiOperation;

/* What a cost is the cost of: a call on frames of one format and size. */
typedef struct {
  LhiOperation op;
  LhFormat format;
  int width;
  int height;
} LhiCostKey;

/* Tunables of the choice, counted in calls of one key.  The first calls of
 * a path are not timed: they load kernels, grow buffers, start threads. */
#define LHI_CHOOSER_KEYS 16     /* keys remembered; the least recently used goes */
#define LHI_WARMUP_CALLS 1      /* first calls of a path, not timed */
#define LHI_PROBE_CALLS 3       /* timed calls of each path before the first choice */
#define LHI_REPROBE_FIRST 16    /* calls until the other path is timed again; doubled */
#define LHI_REPROBE_LAST 1024   /* each time it confirms the choice, up to this */
#define LHI_SWITCH_MARGIN 0.1   /* the other path must be this much cheaper to switch */
#define LHI_CHOSEN_WEIGHT 0.125 /* of a new time in the chosen path's average */
#define LHI_PROBED_WEIGHT 0.5   /* in the other path's, timed seldom */
#define LHI_OUTLIER_RATIO 2.0   /* a time counts at most as this many averages */

typedef struct {
  LhiCostKey key;
  uint64_t last_use;
  double cost[LHI_PATH_COUNT];    /* seconds a frame: the fastest probe, then
                                     exponentially weighted */
  uint32_t calls[LHI_PATH_COUNT]; /* timed on each path, warm-up included */
  bool decided;
  LhiPath chosen;
  uint32_t since_probe;    /* calls on the chosen path since the other was timed */
  uint32_t probe_interval; /* calls between two probes of the other path */
} LhiCostEntry;

typedef struct {
  LhiCostEntry entries[LHI_CHOOSER_KEYS];
  int n_entries;
  uint64_t uses;
  uint64_t switches; /* changes of a decided choice */
} LhiChooser;

/* The path for the next call of key: each path in turn until both are
 * timed, then the cheaper, and now and then the other, to follow drift. */
LhiPath lhi_chooser_pick(LhiChooser *chooser, const LhiCostKey *key);
/* The decided path of key, without probing; fallback when there is none. */
LhiPath lhi_chooser_best(LhiChooser *chooser, const LhiCostKey *key, LhiPath fallback);
/* A call of key took seconds a frame on path. */
void lhi_chooser_record(LhiChooser *chooser, const LhiCostKey *key, LhiPath path, double seconds);

struct LhContext {
  const LhiBackend *backend; /* takes device frames and page-locked memory */
  void *state;
  /* AUTO on CUDA: the CPU backend beside it, for host frames in pageable
   * memory, and the costs that choose between the two; NULL otherwise. */
  void *cpu_state;
  LhiChooser chooser;
  LhBackend last_backend; /* lh_context_last_backend */
  char note[256];
  int busy;    /* a call on frames is under way (atomic): lhi_context_enter */
  bool pushed; /* that call made the backend's CUDA context current */
};

/* A context serves one call on frames at a time: a second thread's call
 * while one runs (on the same context) is refused with
 * LH_ERROR_INVALID_ARGUMENT, where it used to crash the worker pool or the
 * backend's state.  LH_OK for a NULL context, which the call then refuses.
 * Each LH_OK is followed by lhi_context_leave(). */
int lhi_context_enter(LhContext *context);
void lhi_context_leave(LhContext *context);

/* Where one call on frames runs. */
typedef struct {
  const LhiBackend *backend;
  void *state;
  bool timed; /* chosen by cost: its time goes into the chooser */
  LhiPath path;
  LhiCostKey key;
  uint64_t start_ns;
} LhiRoute;

/* The backend for a call of op on n frames (validated): the context's own,
 * unless the context is AUTO on CUDA and no frame is one the CUDA backend
 * claims; then the cheaper.  A call with a state that lives on one backend
 * (a temporal window, a previous frame) gives stateful and that backend,
 * stay, or NULL while the state is empty: it keeps to stay, and an empty
 * state starts on the decided path without probing, so that a stream's
 * results never depend on where its frames went.  The clock starts. */
void lhi_route_begin(LhContext *context, LhiOperation op, const LhFrame *frames, size_t n,
                     bool stateful, const LhiBackend *stay, LhiRoute *route);
/* The call is over: its time is recorded if it succeeded, and its backend
 * reported as the context's last. */
void lhi_route_end(LhContext *context, const LhiRoute *route, int status, size_t n);

/* ------------------------------------------------------------------------ */
/* Host-side statistics, used by every backend and by lh_stats_from_histogram */

/* 1-based nearest rank of percentile p among count values: max(1, ceil(p/100 N)). */
uint64_t lhi_percentile_rank(double p, uint64_t count);

/* Moments of a histogram, by a plain loop (the CPU backend's reduction). */
void lhi_moments_from_histogram(const uint64_t *histogram, int bit_depth, LhRange range,
                                LhiMoments *moments);

/* The values at sorted 1-based ranks, by a walk of the cumulative histogram. */
void lhi_values_from_histogram(const uint64_t *histogram, int bit_depth, const uint64_t *ranks,
                               int n_ranks, uint32_t *values);

/* The same two of a 65536-bin histogram and its blocks' sums (LhiBlockSums):
 * the same moments and values, from the blocks and the bins of the few
 * blocks where min, max, a legal limit or a rank falls. */
void lhi_moments_from_blocks(const uint64_t *histogram, const LhiBlockSums *blocks, LhRange range,
                             LhiMoments *moments);
void lhi_values_from_blocks(const uint64_t *histogram, const LhiBlockSums *blocks,
                            const uint64_t *ranks, int n_ranks, uint32_t *values);

/* Legal black and white code values of a range at a bit depth. */
void lhi_range_limits(int bit_depth, LhRange range, uint32_t *black, uint32_t *white);

/* Fills the caller's LhStats from a finished job (histogram already there). */
int lhi_stats_finish(LhStats *stats, int bit_depth, LhMatrix matrix, LhRange range,
                     const LhOptions *options, const LhiMoments *moments, const uint32_t *values);

/* Slot 0 the median, then each of the options' percentiles; returns how many. */
int lhi_fill_ranks(const LhOptions *options, uint64_t count, uint64_t *ranks);

/* Checks matrix, range, method and percentiles. */
int lhi_options_validate(const LhOptions *options);

/* Makes sure stats->histogram holds 2^bit_depth bins. */
int lhi_stats_reserve(LhStats *stats, int bit_depth);

#endif /* LH_PRIVATE_H */
