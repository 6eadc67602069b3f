/* luma-options.c: the options of every command that reads images (stats,
 * equalize, clahe, overlay): how luma is read from the pixels, where it is
 * worked, how large an image may be, how long a FIFO waits for its writer,
 * and whether the tool says why. */
#include <glib.h>

#include "lht.h"

void lht_luma_args_add(GOptionContext *context, LhtLumaArgs *args)
{
  const GOptionEntry entries[] = {
      {"matrix", 'm', 0, G_OPTION_ARG_STRING, &args->matrix,
       "R'G'B' to luma matrix: bt601 (default; a video's: its stream's), bt709 or bt2020",
       "bt601|bt709|bt2020"},
      {"range", 'r', 0, G_OPTION_ARG_STRING, &args->range,
       "Code value range: full (default; a video's: its stream's) or limited (16-235 for 8 "
       "bits)",
       "full|limited"},
      {"backend", 'b', 0, G_OPTION_ARG_STRING, &args->backend,
       "auto (CUDA if a device is usable, else the CPU; the default), cpu or cuda",
       "auto|cpu|cuda"},
      {"max-pixels", 0, 0, G_OPTION_ARG_INT64, &args->max_pixels,
       "Refuse images with more pixels than N (default 2^28; 0: the default)", "N"},
      {"fifo-wait", 0, 0, G_OPTION_ARG_STRING, &args->fifo_wait,
       "Seconds a FIFO named as input waits for a program to open it for writing "
       "(default 30; 0: no limit, as cat waits)",
       "S"},
      {"verbose", 'v', 0, G_OPTION_ARG_NONE, &args->verbose,
       "Say on stderr which backend is used and why", NULL},
      {NULL, 0, 0, 0, NULL, NULL, NULL},
  };
  /* GOption copies the entries: the array may go, args must stay. */
  g_option_context_add_main_entries(context, entries, NULL);
}

char *lht_luma_args_check(const LhtLumaArgs *args, LhMatrix *matrix, LhRange *range,
                          LhBackend *backend)
{
  if (args->matrix && lh_matrix_from_name(args->matrix, matrix) < 0)
    return g_strdup_printf("--matrix: %s", lh_last_error());
  if (args->range && lh_range_from_name(args->range, range) < 0)
    return g_strdup_printf("--range: %s", lh_last_error());
  if (args->backend && lh_backend_from_name(args->backend, backend) < 0)
    return g_strdup_printf("--backend: %s", lh_last_error());
  if (args->max_pixels < 0)
    return g_strdup("--max-pixels must not be negative (0: the default limit)");
  double fifo_wait = LHIO_DEFAULT_FIFO_WAIT_S;
  if (args->fifo_wait && !lht_parse_number(args->fifo_wait, 0, G_MAXDOUBLE, &fifo_wait))
    return g_strdup_printf("--fifo-wait '%s': expected seconds >= 0 (0: no limit)",
                           args->fifo_wait);
  /* Before any input is read; every read of the run waits as long, unless
   * the run is stopped (Ctrl-C waited out the whole wait). */
  lhio_set_fifo_wait(fifo_wait, lhp_pipeline_stop_flag());
  return NULL;
}

void lht_luma_args_clear(LhtLumaArgs *args)
{
  g_free(args->matrix);
  g_free(args->range);
  g_free(args->backend);
  g_free(args->fifo_wait);
}
