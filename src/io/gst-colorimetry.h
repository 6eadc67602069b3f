/* gst-colorimetry.h: the matrix and range of a GStreamer stream's
 * colorimetry, as the element and the tool's video sources read them (a
 * stated range wins even when the matrix is not known), and the turn of its
 * image-orientation tag. */
#ifndef LHIO_GST_COLORIMETRY_H
#define LHIO_GST_COLORIMETRY_H

#include <stdbool.h>

#include <gst/video/video.h>

#include "lumahist.h"

/* The library's format of a GStreamer one (every format the element takes);
 * false for the others. */
bool lhio_gst_format(GstVideoFormat video, LhFormat *format);
LhMatrix lhio_colorimetry_matrix(const GstVideoInfo *info);
LhRange lhio_colorimetry_range(const GstVideoInfo *info);
/* The range caps state, whatever gst_video_info_from_caps() made of them
 * into info (it takes a YUV stream of no stated matrix for limited range);
 * lhio_colorimetry_range(info) where they state none. */
LhRange lhio_caps_range(const GstCaps *caps, const GstVideoInfo *info);
/* The Exif orientation (1-8, flips included) of a GStreamer one: the
 * image-orientation tag's "rotate-90" (GST_VIDEO_ORIENTATION_90R) is Exif's
 * 6, "flip-rotate-0" its 2; 1 for the identity, auto and custom. */
int lhio_gst_exif_orientation(GstVideoOrientationMethod method);

#endif /* LHIO_GST_COLORIMETRY_H */
