/* hidden-controls.c: the characters beyond ASCII that a terminal acts on or
 * that reorder what it shows, in a file's name.  C0 controls and DEL are
 * caught byte by byte where names are written; these are UTF-8 sequences of
 * two or three bytes: the C1 controls (U+0080 .. U+009F: U+009B is a
 * terminal's CSI, which starts an escape sequence as ESC [ does, and U+0085
 * a line end to some) and the bidirectional embeddings, overrides and
 * isolates (U+202A .. U+202E, U+2066 .. U+2069), which turn the rest of a
 * line around on a terminal that honours them ("bidi\u202Egnp.exe.png"
 * shows as ending in .exe.png). */
#include "lht.h"

size_t lht_hidden_control_bytes(const char *text)
{
  const unsigned char *c = (const unsigned char *)text;
  if (c[0] == 0xc2 && c[1] >= 0x80 && c[1] <= 0x9f)
    return 2;
  if (c[0] == 0xe2 && c[1] == 0x80 && c[2] >= 0xaa && c[2] <= 0xae)
    return 3;
  if (c[0] == 0xe2 && c[1] == 0x81 && c[2] >= 0xa6 && c[2] <= 0xa9)
    return 3;
  return 0;
}
