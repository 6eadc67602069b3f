/* format.c: what each pixel format looks like in memory, and the checks and
 * views of frames that every backend relies on. */
#include <limits.h>
#include <stddef.h>

#include "lh-private.h"

static const LhiFormatInfo format_infos[LH_FORMAT_COUNT] = {
    /*                name      planes px smp depth  r   g   b   a  yuv    interleaved */
    [LH_FORMAT_GRAY8] = {"GRAY8", 1, 1, 1, 8, -1, -1, -1, -1, false, false},
    [LH_FORMAT_GRAY16] = {"GRAY16", 1, 2, 2, 16, -1, -1, -1, -1, false, false},
    [LH_FORMAT_RGB] = {"RGB", 1, 3, 1, 8, 0, 1, 2, -1, false, false},
    [LH_FORMAT_BGR] = {"BGR", 1, 3, 1, 8, 2, 1, 0, -1, false, false},
    [LH_FORMAT_RGBA] = {"RGBA", 1, 4, 1, 8, 0, 1, 2, 3, false, false},
    [LH_FORMAT_BGRA] = {"BGRA", 1, 4, 1, 8, 2, 1, 0, 3, false, false},
    [LH_FORMAT_RGBX] = {"RGBX", 1, 4, 1, 8, 0, 1, 2, -1, false, false},
    [LH_FORMAT_BGRX] = {"BGRX", 1, 4, 1, 8, 2, 1, 0, -1, false, false},
    [LH_FORMAT_RGB16] = {"RGB16", 1, 6, 2, 16, 0, 1, 2, -1, false, false},
    [LH_FORMAT_RGBA16] = {"RGBA16", 1, 8, 2, 16, 0, 1, 2, 3, false, false},
    /*                                                     Y offset, shift, big-endian,
     *                                                     chroma, x/y shift, Cb, Cr */
    [LH_FORMAT_I420] = {"I420", 3, 1, 1, 8, -1, -1, -1, -1, true, false, 0, 0, false,
                        LHI_CHROMA_PLANAR, 1, 1, 1, 2},
    [LH_FORMAT_NV12] = {"NV12", 2, 1, 1, 8, -1, -1, -1, -1, true, true, 0, 0, false,
                        LHI_CHROMA_SEMI_PLANAR, 1, 1, 0, 1},
    [LH_FORMAT_P010] = {"P010", 2, 2, 2, 10, -1, -1, -1, -1, true, true, 0, 6, false,
                        LHI_CHROMA_SEMI_PLANAR, 1, 1, 0, 1},
    /* The YUV of cameras, capture cards and decoders.  v210: a "pixel" of
     * plane 0 is a group of 6 (16 bytes), its samples 32-bit words. */
    [LH_FORMAT_YV12] = {"YV12", 3, 1, 1, 8, -1, -1, -1, -1, true, false, 0, 0, false,
                        LHI_CHROMA_PLANAR, 1, 1, 2, 1},
    [LH_FORMAT_NV21] = {"NV21", 2, 1, 1, 8, -1, -1, -1, -1, true, true, 0, 0, false,
                        LHI_CHROMA_SEMI_PLANAR, 1, 1, 1, 0},
    [LH_FORMAT_Y42B] = {"Y42B", 3, 1, 1, 8, -1, -1, -1, -1, true, false, 0, 0, false,
                        LHI_CHROMA_PLANAR, 1, 0, 1, 2},
    [LH_FORMAT_Y444] = {"Y444", 3, 1, 1, 8, -1, -1, -1, -1, true, false, 0, 0, false,
                        LHI_CHROMA_PLANAR, 0, 0, 1, 2},
    [LH_FORMAT_NV16] = {"NV16", 2, 1, 1, 8, -1, -1, -1, -1, true, true, 0, 0, false,
                        LHI_CHROMA_SEMI_PLANAR, 1, 0, 0, 1},
    [LH_FORMAT_NV24] = {"NV24", 2, 1, 1, 8, -1, -1, -1, -1, true, true, 0, 0, false,
                        LHI_CHROMA_SEMI_PLANAR, 0, 0, 0, 1},
    [LH_FORMAT_Y41B] = {"Y41B", 3, 1, 1, 8, -1, -1, -1, -1, true, false, 0, 0, false,
                        LHI_CHROMA_PLANAR, 2, 0, 1, 2},
    [LH_FORMAT_YUY2] = {"YUY2", 1, 2, 1, 8, -1, -1, -1, -1, true, false, 0, 0, false,
                        LHI_CHROMA_PACKED, 1, 0, 1, 3},
    [LH_FORMAT_YVYU] = {"YVYU", 1, 2, 1, 8, -1, -1, -1, -1, true, false, 0, 0, false,
                        LHI_CHROMA_PACKED, 1, 0, 3, 1},
    [LH_FORMAT_UYVY] = {"UYVY", 1, 2, 1, 8, -1, -1, -1, -1, true, false, 1, 0, false,
                        LHI_CHROMA_PACKED, 1, 0, 0, 2},
    [LH_FORMAT_VYUY] = {"VYUY", 1, 2, 1, 8, -1, -1, -1, -1, true, false, 1, 0, false,
                        LHI_CHROMA_PACKED, 1, 0, 2, 0},
    [LH_FORMAT_V210] = {"v210", 1, 16, 4, 10, -1, -1, -1, -1, true, false, 0, 0, false,
                        LHI_CHROMA_V210, 1, 0, 0, 0},
    [LH_FORMAT_GRAY16_BE] = {"GRAY16_BE", 1, 2, 2, 16, -1, -1, -1, -1, false, false, 0, 0, true,
                             LHI_CHROMA_NONE, 0, 0, 0, 0},
    [LH_FORMAT_I420_10LE] = {"I420_10LE", 3, 2, 2, 10, -1, -1, -1, -1, true, false, 0, 0, false,
                             LHI_CHROMA_PLANAR, 1, 1, 1, 2},
    [LH_FORMAT_I420_12LE] = {"I420_12LE", 3, 2, 2, 12, -1, -1, -1, -1, true, false, 0, 0, false,
                             LHI_CHROMA_PLANAR, 1, 1, 1, 2},
    [LH_FORMAT_I422_10LE] = {"I422_10LE", 3, 2, 2, 10, -1, -1, -1, -1, true, false, 0, 0, false,
                             LHI_CHROMA_PLANAR, 1, 0, 1, 2},
    [LH_FORMAT_I422_12LE] = {"I422_12LE", 3, 2, 2, 12, -1, -1, -1, -1, true, false, 0, 0, false,
                             LHI_CHROMA_PLANAR, 1, 0, 1, 2},
    [LH_FORMAT_Y444_10LE] = {"Y444_10LE", 3, 2, 2, 10, -1, -1, -1, -1, true, false, 0, 0, false,
                             LHI_CHROMA_PLANAR, 0, 0, 1, 2},
    [LH_FORMAT_Y444_12LE] = {"Y444_12LE", 3, 2, 2, 12, -1, -1, -1, -1, true, false, 0, 0, false,
                             LHI_CHROMA_PLANAR, 0, 0, 1, 2},
    [LH_FORMAT_Y444_16LE] = {"Y444_16LE", 3, 2, 2, 16, -1, -1, -1, -1, true, false, 0, 0, false,
                             LHI_CHROMA_PLANAR, 0, 0, 1, 2},
    [LH_FORMAT_P012] = {"P012", 2, 2, 2, 12, -1, -1, -1, -1, true, true, 0, 4, false,
                        LHI_CHROMA_SEMI_PLANAR, 1, 1, 0, 1},
    [LH_FORMAT_P016] = {"P016", 2, 2, 2, 16, -1, -1, -1, -1, true, true, 0, 0, false,
                        LHI_CHROMA_SEMI_PLANAR, 1, 1, 0, 1},
    /* R'G'B' 10 and 16 bits.  The packed 10-bit formats have "samples" of 4
     * bytes, their 32-bit word: r, g, b are the fields of it, field i at bits
     * 10 i .. 10 i + 9 (lhi_packed10_field). */
    [LH_FORMAT_RGB10A2_LE] = {"RGB10A2_LE", 1, 4, 4, 10, 0, 1, 2, 3, false, false},
    [LH_FORMAT_BGR10A2_LE] = {"BGR10A2_LE", 1, 4, 4, 10, 2, 1, 0, 3, false, false},
    [LH_FORMAT_R210] = {"R210", 1, 4, 4, 10, 2, 1, 0, -1, false, false, 0, 0, true, LHI_CHROMA_NONE,
                        0, 0, 0, 0},
    [LH_FORMAT_BGRA16] = {"BGRA16", 1, 8, 2, 16, 2, 1, 0, 3, false, false},
};

/* Frames larger than this are refused: it keeps every per-frame count and
 * offset computation far from overflow (2^40 pixels is 1 TiB of GRAY8). */
#define LHI_MAX_FRAME_PIXELS ((uint64_t)1 << 40)

const LhiFormatInfo *lhi_format_info(LhFormat format)
{
  if ((unsigned)format >= LH_FORMAT_COUNT)
    return NULL;
  return &format_infos[format];
}

LH_API const char *lh_format_name(LhFormat format)
{
  const LhiFormatInfo *info = lhi_format_info(format);
  return info ? info->name : NULL;
}

/* GStreamer's names that differ from ours by more than case: front ends
 * over GStreamer (and users who read its caps) name formats so. */
static const struct {
  const char *name;
  LhFormat format;
} gstreamer_names[] = {
    {"GRAY16_LE", LH_FORMAT_GRAY16}, {"P010_10LE", LH_FORMAT_P010},
    {"P012_LE", LH_FORMAT_P012},     {"P016_LE", LH_FORMAT_P016},
    {"RGBA64_LE", LH_FORMAT_RGBA16}, {"BGRA64_LE", LH_FORMAT_BGRA16},
};

bool lhi_names_equal(const char *a, const char *b)
{
  for (; *a && *b; a++, b++) {
    char ca = *a >= 'a' && *a <= 'z' ? (char)(*a - 'a' + 'A') : *a;
    char cb = *b >= 'a' && *b <= 'z' ? (char)(*b - 'a' + 'A') : *b;
    if (ca != cb)
      return false;
  }
  return *a == *b;
}

LH_API int lh_format_from_name(const char *name, LhFormat *format)
{
  if (!name || !format)
    return lhi_error(LH_ERROR_INVALID_ARGUMENT, "format name or result is NULL");
  for (int f = 0; f < LH_FORMAT_COUNT; f++)
    if (lhi_names_equal(format_infos[f].name, name)) {
      *format = (LhFormat)f;
      return LH_OK;
    }
  for (size_t i = 0; i < sizeof gstreamer_names / sizeof gstreamer_names[0]; i++)
    if (lhi_names_equal(gstreamer_names[i].name, name)) {
      *format = gstreamer_names[i].format;
      return LH_OK;
    }
  return lhi_error(LH_ERROR_INVALID_ARGUMENT, "unknown pixel format \"%s\"", name);
}

LH_API int lh_format_bit_depth(LhFormat format)
{
  const LhiFormatInfo *info = lhi_format_info(format);
  return info ? info->default_depth : 0;
}

LH_API int lh_format_alignment(LhFormat format)
{
  const LhiFormatInfo *info = lhi_format_info(format);
  return info ? info->sample_bytes : 0;
}

/* Formats whose samples may carry fewer significant bits than they hold. */
static bool format_has_variable_depth(LhFormat format)
{
  return format == LH_FORMAT_GRAY16 || format == LH_FORMAT_RGB16 || format == LH_FORMAT_RGBA16 ||
         format == LH_FORMAT_GRAY16_BE || format == LH_FORMAT_BGRA16;
}

void lhi_format_luma_word(const LhiFormatInfo *info, uint32_t *mask, uint32_t *shift)
{
  if (info->chroma == LHI_CHROMA_PACKED) {
    *shift = 8 * (uint32_t)info->luma_offset;
    *mask = 0xffu << *shift;
  } else {
    *shift = (uint32_t)info->luma_shift;
    *mask = 0xffffu;
  }
}

size_t lhi_format_row_bytes(const LhiFormatInfo *info, int width)
{
  if (info->chroma == LHI_CHROMA_PACKED)
    return ((size_t)width + 1) / 2 * 4;
  if (info->chroma == LHI_CHROMA_V210)
    return ((size_t)width + 5) / 6 * 16;
  return (size_t)width * (size_t)info->pixel_bytes;
}

int lhi_frame_luma_depth(const LhFrame *frame)
{
  const LhiFormatInfo *info = lhi_format_info(frame->format);
  if (frame->bit_depth == 0 || !format_has_variable_depth(frame->format))
    return info->default_depth;
  return frame->bit_depth;
}

int lhi_frame_validate(const LhFrame *frame)
{
  if (!frame)
    return lhi_error(LH_ERROR_INVALID_ARGUMENT, "frame is NULL");
  const LhiFormatInfo *info = lhi_format_info(frame->format);
  if (!info)
    return lhi_error(LH_ERROR_INVALID_ARGUMENT, "unknown pixel format %d", (int)frame->format);
  if (frame->memory != LH_MEMORY_HOST && frame->memory != LH_MEMORY_CUDA)
    return lhi_error(LH_ERROR_INVALID_ARGUMENT, "unknown memory kind %d", (int)frame->memory);
  if (frame->width <= 0 || frame->height <= 0)
    return lhi_error(LH_ERROR_INVALID_ARGUMENT, "frame size %dx%d: both sides must be at least 1",
                     frame->width, frame->height);
  if ((uint64_t)frame->width * (uint64_t)frame->height > LHI_MAX_FRAME_PIXELS)
    return lhi_error(LH_ERROR_TOO_LARGE, "frame size %dx%d is above the library's limit",
                     frame->width, frame->height);
  if (frame->bit_depth != 0) {
    bool ok = format_has_variable_depth(frame->format)
                  ? frame->bit_depth >= 8 && frame->bit_depth <= 16
                  : frame->bit_depth == info->default_depth;
    if (!ok)
      return lhi_error(LH_ERROR_INVALID_ARGUMENT, "bit depth %d is not valid for %s",
                       frame->bit_depth, info->name);
  }
  if (!frame->planes[0])
    return lhi_error(LH_ERROR_INVALID_ARGUMENT, "%s frame has no plane 0", info->name);
  size_t row_bytes = lhi_format_row_bytes(info, frame->width);
  if (frame->strides[0] < row_bytes)
    return lhi_error(LH_ERROR_INVALID_ARGUMENT,
                     "%s frame of width %d: stride %zu is smaller than a row (%zu bytes)",
                     info->name, frame->width, frame->strides[0], row_bytes);
  /* Row addresses are planes[0] + y * stride: a stride so large that the
   * last row lies beyond the address space would wrap around to memory that
   * is not the frame's. */
  size_t extent;
  if (__builtin_mul_overflow(frame->strides[0], (size_t)frame->height - 1, &extent) ||
      __builtin_add_overflow(extent, row_bytes, &extent) || extent > PTRDIFF_MAX)
    return lhi_error(LH_ERROR_INVALID_ARGUMENT,
                     "%s frame: %d rows of stride %zu do not fit in the address space", info->name,
                     frame->height, frame->strides[0]);
  const size_t align = (size_t)info->sample_bytes;
  if (align > 1 && (((uintptr_t)frame->planes[0] % align) != 0 || frame->strides[0] % align != 0))
    return lhi_error(LH_ERROR_INVALID_ARGUMENT,
                     "%s frame: %d-bit samples need a plane address and stride that are "
                     "multiples of %zu",
                     info->name, 8 * info->sample_bytes, align);
  return LH_OK;
}

int lhi_frame_crop(const LhFrame *frame, const LhRect *roi, LhFrame *cropped)
{
  *cropped = *frame;
  if (!roi || roi->width == 0 || roi->height == 0)
    return LH_OK;
  if (roi->x < 0 || roi->y < 0 || roi->width < 0 || roi->height < 0 ||
      roi->x > frame->width - roi->width || roi->y > frame->height - roi->height)
    return lhi_error(LH_ERROR_INVALID_ARGUMENT,
                     "region %d,%d %dx%d does not lie inside the %dx%d frame", roi->x, roi->y,
                     roi->width, roi->height, frame->width, frame->height);
  const LhiFormatInfo *info = lhi_format_info(frame->format);
  /* v210 packs 6 pixels in a group: a region starts at a group. */
  if (info->chroma == LHI_CHROMA_V210 && roi->x % 6 != 0)
    return lhi_error(LH_ERROR_INVALID_ARGUMENT,
                     "region at x = %d of a v210 frame: it must start at a multiple of 6 pixels",
                     roi->x);
  const size_t x_bytes = info->chroma == LHI_CHROMA_V210
                             ? (size_t)(roi->x / 6) * 16
                             : (size_t)roi->x * (size_t)info->pixel_bytes;
  cropped->planes[0] = (uint8_t *)frame->planes[0] + (size_t)roi->y * frame->strides[0] + x_bytes;
  /* Analysis reads only plane 0; chroma of a region is not a plane view. */
  cropped->planes[1] = cropped->planes[2] = NULL;
  cropped->width = roi->width;
  cropped->height = roi->height;
  return LH_OK;
}

/* Chroma planes: sizes rounded up, as GStreamer does.  A chroma row holds
 * ceil(width / 2^x_shift) samples (pairs for the semi-planar formats), its
 * stride the luma stride scaled as the row is: for an odd width and a tight
 * luma stride that can be less than the row, which then is the stride. */
static void chroma_layout(const LhiFormatInfo *info, int width, int height, size_t stride,
                          size_t *chroma_stride, size_t *chroma_rows)
{
  const size_t sub_x = (size_t)1 << info->chroma_x_shift, sub_y = (size_t)1 << info->chroma_y_shift;
  const bool pairs = info->chroma == LHI_CHROMA_SEMI_PLANAR;
  size_t row = ((size_t)width + sub_x - 1) / sub_x * (size_t)info->sample_bytes * (pairs ? 2 : 1);
  *chroma_rows = ((size_t)height + sub_y - 1) / sub_y;
  *chroma_stride = (stride + sub_x - 1) / sub_x * (pairs ? 2 : 1);
  if (pairs && sub_x == 2)
    *chroma_stride = stride; /* NV12's rule for odd strides */
  if (*chroma_stride < row)
    *chroma_stride = row;
}

LH_API int lh_format_plane_size(LhFormat format, int plane, int width, int height,
                                size_t *row_bytes, int *rows)
{
  if (!row_bytes || !rows)
    return lhi_error(LH_ERROR_INVALID_ARGUMENT, "plane size: row_bytes or rows is NULL");
  const LhiFormatInfo *info = lhi_format_info(format);
  if (!info)
    return lhi_error(LH_ERROR_INVALID_ARGUMENT, "unknown pixel format %d", (int)format);
  if (plane < 0 || plane > 2 || width <= 0 || height <= 0)
    return lhi_error(LH_ERROR_INVALID_ARGUMENT, "plane %d of a %dx%d %s frame", plane, width,
                     height, info->name);
  *row_bytes = 0;
  *rows = 0;
  if (plane == 0) {
    *row_bytes = lhi_format_row_bytes(info, width);
    *rows = height;
  } else if (plane < info->n_planes) {
    /* The shape that equalization's chroma copy and the overlay use. */
    const LhFrame frame = {.format = format, .width = width, .height = height};
    lhi_chroma_shape(&frame, row_bytes, rows);
  }
  return LH_OK;
}

LH_API size_t lh_frame_buffer_size(LhFormat format, int width, int height, size_t stride)
{
  const LhiFormatInfo *info = lhi_format_info(format);
  if (!info || width <= 0 || height <= 0)
    return 0;
  if (stride == 0)
    stride = lhi_format_row_bytes(info, width);
  /* A stride below a row is no frame lh_frame_init() makes. */
  if (stride < lhi_format_row_bytes(info, width))
    return 0;
  /* 0 also when the size does not fit in a size_t: a wrapped size would
   * have the caller allocate less than the frame covers. */
  size_t size, chroma;
  if (__builtin_mul_overflow(stride, (size_t)height, &size))
    return 0;
  if (info->n_planes > 1) {
    size_t chroma_stride, chroma_rows;
    chroma_layout(info, width, height, stride, &chroma_stride, &chroma_rows);
    if (__builtin_mul_overflow(chroma_stride, chroma_rows * (size_t)(info->n_planes - 1),
                               &chroma) ||
        __builtin_add_overflow(size, chroma, &size))
      return 0;
  }
  return size;
}

LH_API int lh_frame_init(LhFrame *frame, LhFormat format, LhMemory memory, int width, int height,
                         void *data, size_t stride)
{
  if (!frame)
    return lhi_error(LH_ERROR_INVALID_ARGUMENT, "frame is NULL");
  const LhiFormatInfo *info = lhi_format_info(format);
  if (!info)
    return lhi_error(LH_ERROR_INVALID_ARGUMENT, "unknown pixel format %d", (int)format);
  *frame = (LhFrame){.format = format, .memory = memory, .width = width, .height = height};
  if (stride == 0 && width > 0)
    stride = lhi_format_row_bytes(info, width);
  frame->planes[0] = data;
  frame->strides[0] = stride;
  /* Chroma planes only where the whole buffer has a size: none past the
   * address space, none for a size that lhi_frame_validate() refuses. */
  if (info->n_planes > 1 && data && lh_frame_buffer_size(format, width, height, stride) != 0) {
    size_t chroma_stride, chroma_rows;
    chroma_layout(info, width, height, stride, &chroma_stride, &chroma_rows);
    uint8_t *next = (uint8_t *)data + stride * (size_t)height;
    for (int p = 1; p < info->n_planes; p++) {
      frame->planes[p] = next;
      frame->strides[p] = chroma_stride;
      next += chroma_stride * chroma_rows;
    }
  }
  return lhi_frame_validate(frame);
}

bool lhi_format_big_endian_words(LhFormat format)
{
  return format == LH_FORMAT_R210;
}

LhiLumaWeights lhi_luma_weights(LhMatrix matrix, int bit_depth)
{
  if (bit_depth > 8) {
    uint32_t kr = LHI_BT601_KR_EXACT, kb = LHI_BT601_KB_EXACT;
    if (matrix == LH_MATRIX_BT709) {
      kr = LHI_BT709_KR_EXACT;
      kb = LHI_BT709_KB_EXACT;
    } else if (matrix == LH_MATRIX_BT2020) {
      kr = LHI_BT2020_KR_EXACT;
      kb = LHI_BT2020_KB_EXACT;
    }
    return (LhiLumaWeights){
        .kr = kr, .kg = LHI_LUMA_EXACT_ONE - kr - kb, .kb = kb, .one = LHI_LUMA_EXACT_ONE};
  }
  uint32_t kr = LHI_BT601_KR, kg = LHI_BT601_KG;
  if (matrix == LH_MATRIX_BT709) {
    kr = LHI_BT709_KR;
    kg = LHI_BT709_KG;
  } else if (matrix == LH_MATRIX_BT2020) {
    kr = LHI_BT2020_KR;
    kg = LHI_BT2020_KG;
  }
  return (LhiLumaWeights){.kr = kr, .kg = kg, .kb = LHI_LUMA_ONE - kr - kg, .one = LHI_LUMA_ONE};
}
