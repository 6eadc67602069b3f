/* pipeline-report.c: the tool's face of src/pipeline/: what the pipeline,
 * its contexts and its walk have to say, as "lumahist: PATH: message" lines on
 * stderr, and a run's progress on the bar (progress.c). */
#include "lht-batch.h"

static void say_line(const char *path, const char *message, void *data)
{
  /* Only a file's message comes from the thread that draws the bar. */
  if (path)
    lht_progress_clear(data);
  lht_error(path, "%s", message);
}

static void update(guint done, guint failed, void *data)
{
  lht_progress_update(data, done, failed);
}

LhpReport lht_progress_report(LhtProgress *progress)
{
  return (LhpReport){.say = say_line, .progress = update, .data = progress};
}

LhContext *lht_context_open(LhBackend wanted, const GArray *device_ids, bool verbose)
{
  LhpReport report = lht_progress_report(NULL);
  return lhp_context_open(wanted, lhp_first_device(device_ids), verbose, &report);
}

/* Whether lht_walk gives video files too. */
static bool walk_videos;

void lht_walk_include_videos(bool include)
{
  walk_videos = include;
}

/* The walk reads the flag as a gint. */
G_STATIC_ASSERT(sizeof(sig_atomic_t) == sizeof(gint));

bool lht_walk(char *const *args, int n_args, const char *leave_out, GPtrArray *paths)
{
  LhpReport report = lht_progress_report(NULL);
  /* A signal the command catches ends a long walk where it is. */
  const volatile gint *stop = (const volatile gint *)lhp_pipeline_stop_flag();
  return lhp_walk(args, n_args, walk_videos, leave_out, stop, &report, paths);
}

int lht_stopped_before_start(void)
{
  int signal_number = *lhp_pipeline_stop_flag();
  if (!signal_number)
    return 0;
  lht_error(NULL, "stopped by %s before the run started: nothing written",
            lhp_signal_name(signal_number));
  return 128 + signal_number;
}
