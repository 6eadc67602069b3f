/* jpeg.c: JPEG reading and writing through libjpeg-turbo, including the
 * luma-only decode that statistics need, with errors as status + message. */
#include <errno.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

/* jpeglib.h needs FILE and size_t declared before it. */
#include <stdio.h>

#include <jpeglib.h>

/* After jpeglib.h: its jconfig.h says whether arithmetic decoding is built,
 * and jerror.h declares JWRN_ARITH_BAD_CODE only then. */
#include <jerror.h>

#include "lhio-private.h"

/* Rows handed to libjpeg per call: enough for its largest output group. */
#define ROWS_PER_CALL 16

/* libjpeg's error manager, extended with where to jump and what happened. */
typedef struct {
  struct jpeg_error_mgr pub;
  jmp_buf jump;
  FILE *file;
  int status;
  int write_errno; /* of the fwrite or fflush that failed (JERR_FILE_WRITE) */
  char message[JMSG_LENGTH_MAX];
} JpegError;

static int status_of_code(int code, FILE *file)
{
  switch (code) {
  case JERR_FILE_READ:
  case JERR_FILE_WRITE:
    return LH_ERROR_IO;
  case JERR_OUT_OF_MEMORY:
    return LH_ERROR_NO_MEMORY;
  case JERR_BAD_PRECISION:
  case JERR_CONVERSION_NOTIMPL:
  case JERR_SOF_UNSUPPORTED:
    return LH_ERROR_UNSUPPORTED;
  default:
    return file && ferror(file) ? LH_ERROR_IO : LH_ERROR_CORRUPT;
  }
}

static void on_error_exit(j_common_ptr cinfo)
{
  JpegError *error = (JpegError *)cinfo->err;
  /* Before format_message, which may change it: libjpeg's own words for a
   * failed write ("out of disk space?") hide the cause, and the tool stops a
   * run on a full disk by strerror's words (rewrite-batch.c). */
  if (error->pub.msg_code == JERR_FILE_WRITE)
    error->write_errno = errno;
  error->pub.format_message(cinfo, error->message);
  error->status = status_of_code(error->pub.msg_code, error->file);
  longjmp(error->jump, 1);
}

/* libjpeg reports a file cut short, or entropy data that breaks off, as a
 * warning and fills the rest of the image with gray; entropy data that holds
 * a code no table has (corrupt Huffman or arithmetic data) is a warning too,
 * and decodes to garbage.  So is a progressive file whose scans do not follow
 * on from each other (one missing or repeated): without its first DC scan,
 * an image of mean 109 decoded to one of mean 129.  Statistics of such an image
 * would be wrong, so those warnings stop the decode.  Other warnings (stray
 * bytes between markers, odd SOS parameters in a sequential file, both
 * common in files from cameras) are harmless. */
static bool is_fatal_warning(int code)
{
  switch (code) {
  case JWRN_JPEG_EOF:
  case JWRN_HIT_MARKER:
  case JWRN_MUST_RESYNC:
  case JWRN_HUFF_BAD_CODE:
  case JWRN_BOGUS_PROGRESSION:
#if JPEG_LIB_VERSION >= 70 || defined(D_ARITH_CODING_SUPPORTED)
  case JWRN_ARITH_BAD_CODE:
#endif
    return true;
  default:
    return false;
  }
}

/* A fatal warning ends the decode with its message; the others are only
 * counted.  Nothing is printed. */
static void on_emit_message(j_common_ptr cinfo, int level)
{
  JpegError *error = (JpegError *)cinfo->err;
  if (level >= 0)
    return;
  int code = error->pub.msg_code;
  if (is_fatal_warning(code)) {
    if (code == JWRN_JPEG_EOF)
      snprintf(error->message, sizeof error->message, "truncated file");
    else
      error->pub.format_message(cinfo, error->message);
    error->status = error->file && ferror(error->file) ? LH_ERROR_IO : LH_ERROR_CORRUPT;
    longjmp(error->jump, 1);
  }
  error->pub.num_warnings++;
}

static void on_output_message(j_common_ptr cinfo)
{
}

static void init_error(JpegError *error, FILE *file)
{
  memset(error, 0, sizeof *error);
  jpeg_std_error(&error->pub);
  error->pub.error_exit = on_error_exit;
  error->pub.emit_message = on_emit_message;
  error->pub.output_message = on_output_message;
  error->file = file;
}

/* ------------------------------------------------------------------------ */
/* Reading                                                                   */

/* Refuses a header's size before any pixel memory is allocated. */
static int check_size(const char *path, unsigned width, unsigned height, uint64_t max_pixels)
{
  if (width == 0 || height == 0)
    return lhio_fail(LH_ERROR_CORRUPT, path, "image has no pixels (%ux%u)", width, height);
  if ((uint64_t)width * height > max_pixels)
    return lhio_fail(LH_ERROR_TOO_LARGE, path, "%ux%u is %llu pixels, above the limit of %llu",
                     width, height, (unsigned long long)width * height,
                     (unsigned long long)max_pixels);
  return LH_OK;
}

typedef struct {
  struct jpeg_decompress_struct cinfo;
  JpegError error;
  uint8_t *pixels; /* in memory, not a local, so that it survives longjmp */
  uint8_t *cmyk;   /* CMYK and YCCK: rows as libjpeg gives them, before conversion */
} JpegRead;

/* A row of CMYK as libjpeg-turbo gives it into R'G'B', as Pillow converts
 * it.  libjpeg hands over the samples as they are stored, which in Adobe's
 * files (Photoshop, and every CMYK JPEG libjpeg or Pillow writes) are
 * inverted: c = 255 - C, 0 = full ink.  Pillow always reads CMYK JPEGs with
 * that polarity ("CMYK;I") and converts CMYK to RGB as
 *   R = (255 - K) - MULDIV255(C, 255 - K) = round((255 - C) (255 - K) / 255)
 * which in libjpeg's values is round(c k / 255), never a tie (255 is odd):
 *   R = (c k + 127) / 255, G and B alike from m and y
 * (equal to Pillow 9.4's convert("RGB") on every (c, k): tests/cli). */
static void cmyk_row_to_rgb(const uint8_t *cmyk, unsigned width, uint8_t *rgb)
{
  for (unsigned x = 0; x < width; x++, cmyk += 4, rgb += 3) {
    const unsigned k = cmyk[3];
    rgb[0] = (uint8_t)((cmyk[0] * k + 127) / 255);
    rgb[1] = (uint8_t)((cmyk[1] * k + 127) / 255);
    rgb[2] = (uint8_t)((cmyk[2] * k + 127) / 255);
  }
}

static int read_jpeg(JpegRead *state, const char *path, LhioReadMode mode, uint64_t max_pixels,
                     LhioImage *image)
{
  struct jpeg_decompress_struct *cinfo = &state->cinfo;
  if (setjmp(state->error.jump))
    return lhio_fail(state->error.status, path, "%s", state->error.message);

  /* Created here, under the setjmp: creation can fail (no memory) too.  A
   * struct never created is still safe to destroy, as it is zeroed. */
  jpeg_create_decompress(cinfo);
  jpeg_stdio_src(cinfo, state->error.file);
  if (mode == LHIO_READ_FULL)
    lhio_jpeg_save_markers(cinfo);
  jpeg_read_header(cinfo, TRUE);
  unsigned width = cinfo->image_width, height = cinfo->image_height;
  int size_status = check_size(path, width, height, max_pixels);
  if (size_status < 0)
    return size_status;

  image->source_bit_depth = 8;
  /* Cb's and Cr's too: a file may sample them unlike each other (Cb 1x1
   * and Cr 2x1 beside a 2x2 Y), and written back only as the usual layouts
   * its chroma would lose or gain resolution. */
  const int kept_components = cinfo->jpeg_color_space == JCS_YCbCr ? 3 : 1;
  for (int c = 0; c < kept_components && c < cinfo->num_components; c++) {
    image->jpeg_h_samp[c] = cinfo->comp_info[c].h_samp_factor;
    image->jpeg_v_samp[c] = cinfo->comp_info[c].v_samp_factor;
  }
  image->jpeg_progressive = cinfo->progressive_mode != 0;
  image->jpeg_arithmetic = cinfo->arith_code != 0;
  image->jpeg_restart_interval = cinfo->restart_interval;
  if (mode == LHIO_READ_FULL && cinfo->saw_JFIF_marker) {
    image->jfif_density_unit = cinfo->density_unit;
    image->jfif_x_density = cinfo->X_density;
    image->jfif_y_density = cinfo->Y_density;
  }
  LhFormat format;
  switch (cinfo->jpeg_color_space) {
  case JCS_GRAYSCALE:
    cinfo->out_color_space = JCS_GRAYSCALE;
    image->source_channels = 1;
    format = LH_FORMAT_GRAY8;
    break;
  case JCS_YCbCr:
    image->source_channels = 3;
    if (mode == LHIO_READ_LUMA) {
      /* Asking for grayscale output from YCbCr makes libjpeg mark the chroma
       * components as not needed: it entropy-decodes them but skips their
       * inverse DCT, upsampling and the colour conversion, and returns Y. */
      cinfo->out_color_space = JCS_GRAYSCALE;
      image->luma_only = true;
      format = LH_FORMAT_GRAY8;
    } else {
      cinfo->out_color_space = JCS_RGB;
      format = LH_FORMAT_RGB;
    }
    break;
  case JCS_RGB:
    /* An RGB-coded JPEG (Adobe transform 0) has no Y to take: its luma is
     * ours to compute, with the matrix the caller chose. */
    cinfo->out_color_space = JCS_RGB;
    image->source_channels = 3;
    format = LH_FORMAT_RGB;
    break;
  case JCS_CMYK:
  case JCS_YCCK:
    /* No Y to take and no R'G'B' in the file: libjpeg-turbo gives CMYK
     * (YCCK turned into it), converted here as Pillow does; luma is then
     * computed from the R'G'B', and the record says it was converted. */
    cinfo->out_color_space = JCS_CMYK;
    image->source_channels = 3;
    image->converted_from = cinfo->jpeg_color_space == JCS_CMYK ? "CMYK" : "YCCK";
    format = LH_FORMAT_RGB;
    break;
  default:
    return lhio_fail(LH_ERROR_UNSUPPORTED, path, "JPEG of %d components in an unknown colour space",
                     cinfo->num_components);
  }

  if (mode == LHIO_READ_FULL && lhio_jpeg_keep_saved_markers(cinfo, image) < 0)
    return lhio_fail(LH_ERROR_NO_MEMORY, path, "no memory for the file's metadata");
  jpeg_start_decompress(cinfo);
  const bool from_cmyk = cinfo->out_color_space == JCS_CMYK;
  size_t row_bytes = (size_t)width * (from_cmyk ? 3 : cinfo->output_components);
  state->pixels = lhio_pixels_alloc(row_bytes * height);
  if (from_cmyk)
    state->cmyk = malloc((size_t)width * 4 * ROWS_PER_CALL);
  if (!state->pixels || (from_cmyk && !state->cmyk))
    return lhio_fail(LH_ERROR_NO_MEMORY, path, "no memory for %ux%u pixels", width, height);
  while (cinfo->output_scanline < height) {
    JSAMPROW rows[ROWS_PER_CALL];
    unsigned first = cinfo->output_scanline, n = height - first;
    if (n > ROWS_PER_CALL)
      n = ROWS_PER_CALL;
    for (unsigned i = 0; i < n; i++)
      rows[i] = from_cmyk ? state->cmyk + (size_t)i * width * 4
                          : state->pixels + (size_t)(first + i) * row_bytes;
    unsigned got = jpeg_read_scanlines(cinfo, rows, n);
    for (unsigned i = 0; from_cmyk && i < got; i++)
      cmyk_row_to_rgb(rows[i], width, state->pixels + (size_t)(first + i) * row_bytes);
  }
  jpeg_finish_decompress(cinfo);

  image->pixels = state->pixels;
  state->pixels = NULL;
  lhio_set_frame(image, format, (int)width, (int)height, 8, row_bytes);
  return LH_OK;
}

int lhio_jpeg_read(FILE *file, const char *path, LhioReadMode mode, uint64_t max_pixels,
                   LhioImage *image)
{
  JpegRead *state = calloc(1, sizeof *state);
  if (!state)
    return lhio_fail(LH_ERROR_NO_MEMORY, path, "out of memory");
  init_error(&state->error, file);
  state->cinfo.err = &state->error.pub;
  int status = read_jpeg(state, path, mode, max_pixels, image);
  if (status < 0) {
    /* A failed read leaves no allocation behind, metadata kept included. */
    free(image->metadata);
    image->metadata = NULL;
    image->metadata_size = 0;
  }
  jpeg_destroy_decompress(&state->cinfo);
  lhio_pixels_release(state->pixels);
  free(state->cmyk);
  free(state);
  return status;
}

/* ------------------------------------------------------------------------ */
/* Reading the headers alone, to choose a decoder                            */

/* Whether an EOI marker (FF D9) lies between the first scan's data and the
 * end.  Entropy-coded data holds no unstuffed FF D9, so one found there ends
 * the image (or trailing bytes after its end): a file cut short has none.
 * Searched from the end, where it is in every whole file. */
static bool eoi_after(const uint8_t *data, size_t size, size_t scan_start)
{
  for (size_t i = size >= 2 ? size - 2 : 0; size >= 2 && i + 1 > scan_start; i--)
    if (data[i] == 0xFF && data[i + 1] == 0xD9)
      return true;
  return false;
}

/* Why nvJPEG is not given a file, or NULL: what it does not decode, what it
 * would decode differently from the CPU path, and what it might not report
 * as broken. */
static const char *gpu_refusal(const struct jpeg_decompress_struct *cinfo, const LhioJpegInfo *info)
{
  if (info->precision != 8)
    return "12-bit samples";
  if (info->arithmetic)
    return "arithmetic coding";
  switch (cinfo->jpeg_color_space) {
  case JCS_GRAYSCALE:
  case JCS_YCbCr:
    break;
  case JCS_RGB:
    return "RGB-coded (its luma is computed from R'G'B')";
  case JCS_CMYK:
    return "CMYK";
  case JCS_YCCK:
    return "YCCK";
  default:
    return "an unknown colour space";
  }
  if (!info->ends_with_eoi)
    return "no end-of-image marker after the scan data (cut short?)";
  /* One component that claims h x v sampling: its scan is one block per
   * MCU, as the standard has it and libjpeg reads it; nvJPEG's decoders
   * (hardware and hybrid) laid its blocks out as h x v MCUs (measured on an
   * H100: the same histogram, 87 % of the pixels in other places). */
  if (info->components == 1 && (info->h_samp != 1 || info->v_samp != 1))
    return "a gray file whose component claims other than 1x1 sampling";
  /* 4:1:1 and 4:1:0, which the engine refuses, went to the hybrid backend
   * and came back wrong (means off by 18 to 70 code values on an H100). */
  if (info->h_samp > 2 || info->v_samp > 2)
    return "4:1:1 or 4:1:0 chroma sampling";
  return NULL;
}

static int probe_jpeg(JpegRead *state, const char *path, const LhioEncoded *encoded,
                      uint64_t max_pixels, LhioJpegInfo *info)
{
  struct jpeg_decompress_struct *cinfo = &state->cinfo;
  if (setjmp(state->error.jump))
    return lhio_fail(state->error.status, path, "%s", state->error.message);
  jpeg_create_decompress(cinfo);
  jpeg_mem_src(cinfo, encoded->data, (unsigned long)encoded->size);
  jpeg_read_header(cinfo, TRUE);
  unsigned width = cinfo->image_width, height = cinfo->image_height;
  int size_status = check_size(path, width, height, max_pixels);
  if (size_status < 0)
    return size_status;
  info->width = (int)width;
  info->height = (int)height;
  info->components = cinfo->num_components;
  info->ycbcr = cinfo->jpeg_color_space == JCS_YCbCr || cinfo->jpeg_color_space == JCS_GRAYSCALE;
  info->progressive = cinfo->progressive_mode != 0;
  info->arithmetic = cinfo->arith_code != 0;
  info->precision = cinfo->data_precision;
  info->h_samp = cinfo->comp_info[0].h_samp_factor;
  info->v_samp = cinfo->comp_info[0].v_samp_factor;
  info->restart_interval = cinfo->restart_interval;
  info->chroma_1x1 = true;
  for (int c = 1; c < cinfo->num_components; c++)
    info->chroma_1x1 = info->chroma_1x1 && cinfo->comp_info[c].h_samp_factor == 1 &&
                       cinfo->comp_info[c].v_samp_factor == 1;
  /* The memory source hands libjpeg the whole file at once: what it has
   * not consumed starts with the first scan's data. */
  size_t scan_start = encoded->size - cinfo->src->bytes_in_buffer;
  info->ends_with_eoi = eoi_after(encoded->data, encoded->size, scan_start);
  info->gpu_refusal = gpu_refusal(cinfo, info);
  return LH_OK;
}

int lhio_jpeg_probe(const char *path, const LhioEncoded *encoded, uint64_t max_pixels,
                    LhioJpegInfo *info)
{
  if (!info)
    return lh_set_error(LH_ERROR_INVALID_ARGUMENT, "lhio_jpeg_probe: info is NULL");
  memset(info, 0, sizeof *info);
  if (!encoded || !encoded->data || encoded->type != LHIO_FILE_JPEG)
    return lhio_fail(LH_ERROR_INVALID_ARGUMENT, path, "not JPEG bytes");
  if (max_pixels == 0)
    max_pixels = LHIO_DEFAULT_MAX_PIXELS;
  JpegRead *state = calloc(1, sizeof *state);
  if (!state)
    return lhio_fail(LH_ERROR_NO_MEMORY, path, "out of memory");
  init_error(&state->error, NULL);
  state->cinfo.err = &state->error.pub;
  int status = probe_jpeg(state, path, encoded, max_pixels, info);
  jpeg_destroy_decompress(&state->cinfo);
  free(state);
  return status;
}

/* ------------------------------------------------------------------------ */
/* Writing                                                                   */

static int jpeg_input_space(const char *path, LhFormat format, J_COLOR_SPACE *space,
                            int *components)
{
  switch (format) {
  case LH_FORMAT_GRAY8:
    *space = JCS_GRAYSCALE;
    *components = 1;
    return LH_OK;
  case LH_FORMAT_RGB:
    *space = JCS_RGB;
    *components = 3;
    return LH_OK;
  case LH_FORMAT_BGR:
    *space = JCS_EXT_BGR;
    *components = 3;
    return LH_OK;
  /* JPEG has no alpha: the 4th byte is dropped. */
  case LH_FORMAT_RGBA:
  case LH_FORMAT_RGBX:
    *space = JCS_EXT_RGBX;
    *components = 4;
    return LH_OK;
  case LH_FORMAT_BGRA:
  case LH_FORMAT_BGRX:
    *space = JCS_EXT_BGRX;
    *components = 4;
    return LH_OK;
  default: {
    const char *name = lh_format_name(format);
    return lhio_fail(LH_ERROR_UNSUPPORTED, path, "cannot write %s frames as JPEG (8-bit only)",
                     name ? name : "unknown");
  }
  }
}

int lhio_jpeg_check(const char *path, const LhioImage *image)
{
  const LhFrame *frame = &image->frame;
  J_COLOR_SPACE space;
  int components;
  if (frame->memory != LH_MEMORY_HOST)
    return lhio_fail(LH_ERROR_INVALID_ARGUMENT, path, "the frame is not in host memory");
  if (frame->width <= 0 || frame->height <= 0 || !frame->planes[0])
    return lhio_fail(LH_ERROR_INVALID_ARGUMENT, path, "the frame has no pixels (%dx%d)",
                     frame->width, frame->height);
  if (frame->width > JPEG_MAX_DIMENSION || frame->height > JPEG_MAX_DIMENSION)
    return lhio_fail(LH_ERROR_TOO_LARGE, path, "%dx%d is above JPEG's limit of %ld a side",
                     frame->width, frame->height, (long)JPEG_MAX_DIMENSION);
  int status = jpeg_input_space(path, frame->format, &space, &components);
  if (status < 0)
    return status;
  if (frame->bit_depth != 0 && frame->bit_depth != 8)
    return lhio_fail(LH_ERROR_INVALID_ARGUMENT, path, "bit depth %d does not fit %s",
                     frame->bit_depth, lh_format_name(frame->format));
  if (frame->strides[0] != 0 && frame->strides[0] < lhio_packed_row_bytes(frame))
    return lhio_fail(LH_ERROR_INVALID_ARGUMENT, path, "stride %zu is less than a row",
                     frame->strides[0]);
  return LH_OK;
}

static bool valid_sampling(int factor)
{
  return factor >= 1 && factor <= MAX_SAMP_FACTOR;
}

/* Gives a colour output the source's sampling factors, Y's and, where
 * known, Cb's and Cr's (else 1x1: full-size chroma blocks), so that a
 * decoded and re-encoded photo keeps its subsampling (2x2 Y for 4:2:0,
 * 2x1 for 4:2:2, 1x1 for 4:4:4, and any other layout its decoder took);
 * and a gray output its component's, which change only the header (a
 * component alone in its scan is coded block by block whatever they are),
 * as README promises every component's factors. */
static void keep_sampling(struct jpeg_compress_struct *cinfo, const LhioImage *image)
{
  if ((cinfo->jpeg_color_space != JCS_YCbCr && cinfo->jpeg_color_space != JCS_GRAYSCALE) ||
      !valid_sampling(image->jpeg_h_samp[0]) || !valid_sampling(image->jpeg_v_samp[0]))
    return;
  int blocks_in_mcu = 0;
  for (int c = 0; c < cinfo->num_components; c++) {
    int h = image->jpeg_h_samp[c], v = image->jpeg_v_samp[c];
    bool known = valid_sampling(h) && valid_sampling(v);
    cinfo->comp_info[c].h_samp_factor = known ? h : 1;
    cinfo->comp_info[c].v_samp_factor = known ? v : 1;
    blocks_in_mcu += cinfo->comp_info[c].h_samp_factor * cinfo->comp_info[c].v_samp_factor;
  }
  /* One interleaved scan holds at most C_MAX_BLOCKS_IN_MCU blocks an MCU:
   * finer sampling (a 3x3 Y and two chroma components, which a file of one
   * component a scan can have) goes out the same way; progressive, each
   * component's DC, then its AC (keep_coding), as interleaved DC scans are
   * held to that limit too. */
  static const jpeg_scan_info one_component_a_scan[3] = {
      {1, {0}, 0, 63, 0, 0}, {1, {1}, 0, 63, 0, 0}, {1, {2}, 0, 63, 0, 0}};
  static const jpeg_scan_info one_component_a_scan_progressive[6] = {
      {1, {0}, 0, 0, 0, 0},  {1, {1}, 0, 0, 0, 0},  {1, {2}, 0, 0, 0, 0},
      {1, {0}, 1, 63, 0, 0}, {1, {1}, 1, 63, 0, 0}, {1, {2}, 1, 63, 0, 0}};
  if (cinfo->num_components > 1 && blocks_in_mcu > C_MAX_BLOCKS_IN_MCU) {
    bool progressive = image->type == LHIO_FILE_JPEG && image->jpeg_progressive;
    cinfo->scan_info = progressive ? one_component_a_scan_progressive : one_component_a_scan;
    cinfo->num_scans = cinfo->num_components * (progressive ? 2 : 1);
  }
}

/* Gives a JPEG output its input's coding: progressive or sequential,
 * arithmetic (where this libjpeg-turbo can write it) or Huffman, and the
 * restart interval.  After keep_sampling, whose scans it keeps. */
static void keep_coding(struct jpeg_compress_struct *cinfo, const LhioImage *image)
{
  if (image->type != LHIO_FILE_JPEG)
    return;
  cinfo->restart_interval = image->jpeg_restart_interval;
#ifdef C_ARITH_CODING_SUPPORTED
  cinfo->arith_code = image->jpeg_arithmetic;
#endif
  if (image->jpeg_progressive && !cinfo->scan_info)
    jpeg_simple_progression(cinfo);
}

typedef struct {
  struct jpeg_compress_struct cinfo;
  JpegError error;
} JpegWrite;

static int write_jpeg(JpegWrite *state, const char *path, const LhioImage *image, int quality)
{
  struct jpeg_compress_struct *cinfo = &state->cinfo;
  const LhFrame *frame = &image->frame;
  J_COLOR_SPACE space;
  int components;
  int status = jpeg_input_space(path, frame->format, &space, &components);
  if (status < 0)
    return status;
  size_t stride = frame->strides[0] ? frame->strides[0] : lhio_packed_row_bytes(frame);
  if (setjmp(state->error.jump)) {
    if (state->error.write_errno)
      return lhio_fail_os(state->error.write_errno, path);
    return lhio_fail(state->error.status, path, "%s", state->error.message);
  }

  jpeg_create_compress(cinfo);
  jpeg_stdio_dest(cinfo, state->error.file);
  cinfo->image_width = (JDIMENSION)frame->width;
  cinfo->image_height = (JDIMENSION)frame->height;
  cinfo->input_components = components;
  cinfo->in_color_space = space;
  jpeg_set_defaults(cinfo);
  jpeg_set_quality(cinfo, quality, TRUE);
  keep_sampling(cinfo, image);
  keep_coding(cinfo, image);
  if (image->type == LHIO_FILE_JPEG && image->jfif_x_density > 0 && image->jfif_y_density > 0) {
    cinfo->density_unit = (UINT8)image->jfif_density_unit;
    cinfo->X_density = (UINT16)image->jfif_x_density;
    cinfo->Y_density = (UINT16)image->jfif_y_density;
  }
  jpeg_start_compress(cinfo, TRUE);
  lhio_jpeg_write_metadata(cinfo, image);
  const uint8_t *pixels = frame->planes[0];
  while (cinfo->next_scanline < cinfo->image_height) {
    JSAMPROW rows[ROWS_PER_CALL];
    unsigned n = cinfo->image_height - cinfo->next_scanline;
    if (n > ROWS_PER_CALL)
      n = ROWS_PER_CALL;
    /* libjpeg takes non-const rows but only reads them. */
    for (unsigned i = 0; i < n; i++)
      rows[i] = (JSAMPROW)(pixels + (size_t)(cinfo->next_scanline + i) * stride);
    jpeg_write_scanlines(cinfo, rows, n);
  }
  jpeg_finish_compress(cinfo);
  return LH_OK;
}

int lhio_jpeg_write(FILE *file, const char *path, const LhioImage *image,
                    const LhioWriteOptions *options)
{
  int quality = options->jpeg_quality ? options->jpeg_quality : 95;
  JpegWrite *state = calloc(1, sizeof *state);
  if (!state)
    return lhio_fail(LH_ERROR_NO_MEMORY, path, "out of memory");
  init_error(&state->error, file);
  state->cinfo.err = &state->error.pub;
  int status = write_jpeg(state, path, image, quality);
  jpeg_destroy_compress(&state->cinfo);
  free(state);
  return status;
}
