/* gstlumahistpins.h: page-locking the system memory that upstream hands the
 * element again and again (a buffer pool's, a repeated frame's), so that the
 * CUDA backend copies frames from it without a staging copy
 * (lh_host_register).  Not installed. */
#ifndef GST_LUMAHIST_PINS_H
#define GST_LUMAHIST_PINS_H

#include <gst/gst.h>
#include <lumahist.h>

G_BEGIN_DECLS

/* Makes the library context's CUDA context current on this thread (FALSE:
 * it could not), and undoes that. */
typedef gboolean (*GstLumahistPinsEnter)(gpointer element);
typedef void (*GstLumahistPinsLeave)(gpointer element);

typedef struct _GstLumahistPins GstLumahistPins;

GstLumahistPins *gst_lumahist_pins_new(GstLumahistPinsEnter enter, GstLumahistPinsLeave leave,
                                       gpointer element);
/* Unpins everything first (gst_lumahist_pins_clear). */
void gst_lumahist_pins_free(GstLumahistPins *pins);

/* Notes the system memories of buffer, and pins those seen before (memory
 * used once is not worth a registration).  Called with lh's CUDA context
 * current; lh is remembered for the unpinning, which happens when a memory is
 * freed or at gst_lumahist_pins_clear(). */
void gst_lumahist_pins_add(GstLumahistPins *pins, LhContext *lh, GstBuffer *buffer);

/* Unpins every memory, before the library context goes. */
void gst_lumahist_pins_clear(GstLumahistPins *pins);

G_END_DECLS

#endif /* GST_LUMAHIST_PINS_H */
