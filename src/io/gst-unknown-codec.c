/* gst-unknown-codec.c: what to say of a video stream GStreamer's demuxer
 * could not name, from the container's own name for its codec that the
 * demuxer puts in the caps, the same for `stats` (video.c) and the
 * write-back (video-rewrite.c). */
#include <stdbool.h>
#include <string.h>

#include "lhio-gst.h"

/* A container's codec name in the message: printable ASCII, others '?'
 * (a fourcc is any four bytes of the file). */
static void append_printable(GString *text, const char *name, size_t length)
{
  for (size_t i = 0; i < length && name[i]; i++)
    g_string_append_c(text, name[i] >= 0x20 && name[i] < 0x7f ? name[i] : '?');
}

/* The caps' fourcc field, a string (matroskademux's) or a number
 * (avidemux's), after before; false when there is none. */
static bool append_fourcc(GString *text, const char *before, const GstStructure *s)
{
  guint32 fourcc;
  const char *string = gst_structure_get_string(s, "fourcc");
  if (string) {
    g_string_append_printf(text, "%sfourcc ", before);
    append_printable(text, string, strlen(string));
    return true;
  }
  if (gst_structure_get_uint(s, "fourcc", &fourcc) ||
      gst_structure_get_int(s, "fourcc", (gint *)&fourcc)) {
    const char bytes[4] = {(char)(fourcc & 0xff), (char)((fourcc >> 8) & 0xff),
                           (char)((fourcc >> 16) & 0xff), (char)(fourcc >> 24)};
    g_string_append_printf(text, "%sfourcc ", before);
    append_printable(text, bytes, sizeof bytes);
    return true;
  }
  return false;
}

char *lhio_gst_unknown_codec(const GstCaps *caps)
{
  if (!caps || gst_caps_get_size(caps) == 0)
    return NULL;
  const GstStructure *s = gst_caps_get_structure(caps, 0);
  const char *name = gst_structure_get_name(s);
  static const char qt_prefix[] = "video/x-gst-fourcc-";
  GString *what = g_string_new(NULL);
  const char *kind = "a codec it does not know";
  if (strcmp(name, "video/x-unknown") == 0 && gst_structure_has_field(s, "codec-id")) {
    /* matroskademux's, with the track's CodecID (and V_MS/VFW/FOURCC's fourcc) */
    const char *codec_id = gst_structure_get_string(s, "codec-id");
    /* Raw video whose ColourSpace matroskademux has no format for (NV12) */
    if (g_strcmp0(codec_id, "V_UNCOMPRESSED") == 0)
      kind = "raw video in a pixel format its Matroska demuxer does not read";
    g_string_append(what, "Matroska codec ID ");
    append_printable(what, codec_id ? codec_id : "?", codec_id ? strlen(codec_id) : 1);
    append_fourcc(what, ", ", s);
  } else if (strcmp(name, "video/x-avi-unknown") == 0) {
    g_string_append(what, "AVI");
    if (!append_fourcc(what, " ", s))
      g_string_append(what, " codec");
  } else if (strncmp(name, qt_prefix, strlen(qt_prefix)) == 0) {
    g_string_append(what, "QuickTime fourcc ");
    append_printable(what, name + strlen(qt_prefix), 4);
  } else {
    g_string_free(what, TRUE);
    return NULL;
  }
  guint major, minor, micro, nano;
  gst_version(&major, &minor, &micro, &nano);
  char *line = g_strdup_printf("GStreamer %u.%u has no decoder for its video: %s (%s)", major,
                               minor, kind, what->str);
  g_string_free(what, TRUE);
  return line;
}
