/* progress.c: how far a batch run is, on stderr: a bar with images/s and the
 * time left on a terminal, plain lines for logs when asked, nothing when quiet. */
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "lht-batch.h"

/* A bar redrawn faster than this only flickers; a log line more often than
 * this only fills the log. */
#define BAR_INTERVAL_US (G_USEC_PER_SEC / 10)
#define LINE_INTERVAL_US (5 * G_USEC_PER_SEC)

typedef enum {
  MODE_NONE,
  MODE_BAR,
  MODE_LINES,
} Mode;

struct LhtProgress {
  Mode mode;
  guint total;
  gint64 start_us;
  gint64 last_draw_us;
  bool bar_shown;
  int last_width; /* characters of the bar now on the line */
  /* Files done outside the pipeline (videos), the pipeline's last counts,
   * and what the file under way says (a video's frame). */
  guint extra_done, extra_failed;
  guint last_done, last_failed;
  char note[64];
  const char *noun; /* what is counted: "images", "videos", "files" */
};

LhtProgress *lht_progress_new(guint total, bool lines_asked, bool quiet)
{
  LhtProgress *p = g_new0(LhtProgress, 1);
  p->total = total;
  p->noun = "images";
  p->start_us = g_get_monotonic_time();
  if (quiet)
    p->mode = MODE_NONE;
  else if (isatty(STDERR_FILENO))
    p->mode = MODE_BAR;
  else
    p->mode = lines_asked ? MODE_LINES : MODE_NONE;
  return p;
}

void lht_progress_counts(LhtProgress *p, const char *noun)
{
  if (p)
    p->noun = noun;
}

static int terminal_columns(void)
{
  struct winsize size;
  if (ioctl(STDERR_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col >= 20)
    return size.ws_col;
  return 80;
}

/* "1:02:03" or "2:03". */
static void format_duration(char *text, size_t size, double seconds)
{
  if (seconds < 0 || seconds > 1e7) {
    snprintf(text, size, "--:--");
    return;
  }
  unsigned long s = (unsigned long)(seconds + 0.5);
  if (s >= 3600)
    snprintf(text, size, "%lu:%02lu:%02lu", s / 3600, s / 60 % 60, s % 60);
  else
    snprintf(text, size, "%lu:%02lu", s / 60, s % 60);
}

/* "123/1000 12% 45.6 images/s ETA 0:19" and how many failed. */
static void format_counts(const LhtProgress *p, guint done, guint failed, gint64 now, char *text,
                          size_t size)
{
  double elapsed = (double)(now - p->start_us) / G_USEC_PER_SEC;
  guint finished = done + failed;
  double rate = elapsed > 0 ? finished / elapsed : 0;
  char eta[32];
  if (finished == 0 || rate <= 0)
    snprintf(eta, sizeof eta, "--:--");
  else
    format_duration(eta, sizeof eta, (p->total - finished) / rate);
  int percent = p->total ? (int)(100.0 * finished / p->total) : 100;
  int n = snprintf(text, size, "%u/%u %d%% %.1f %s/s ETA %s", finished, p->total, percent, rate,
                   p->noun, eta);
  if (failed && n > 0 && (size_t)n < size)
    n += snprintf(text + n, size - (size_t)n, " (%u failed)", failed);
  if (p->note[0] && n > 0 && (size_t)n < size)
    snprintf(text + n, size - (size_t)n, " %s", p->note);
}

static void draw_bar(LhtProgress *p, guint done, guint failed, gint64 now)
{
  char counts[160];
  format_counts(p, done, failed, now, counts, sizeof counts);
  int columns = terminal_columns() - 1;
  int bar = columns - (int)strlen(counts) - 3;
  if (bar > 40)
    bar = 40;
  GString *line = g_string_new("\r");
  if (bar >= 10) {
    guint finished = done + failed;
    int filled = p->total ? (int)((double)bar * finished / p->total) : bar;
    g_string_append_c(line, '[');
    for (int i = 0; i < bar; i++)
      g_string_append_c(line, i < filled ? '#' : '.');
    g_string_append(line, "] ");
  }
  g_string_append(line, counts);
  int width = (int)line->len - 1;
  /* Blanks over what a longer line before left. */
  for (int i = width; i < p->last_width; i++)
    g_string_append_c(line, ' ');
  fputs(line->str, stderr);
  fflush(stderr);
  p->last_width = width;
  p->bar_shown = true;
  g_string_free(line, TRUE);
}

void lht_progress_update(LhtProgress *p, guint done, guint failed)
{
  if (!p || p->mode == MODE_NONE)
    return;
  p->last_done = done;
  p->last_failed = failed;
  done += p->extra_done;
  failed += p->extra_failed;
  gint64 now = g_get_monotonic_time();
  if (p->mode == MODE_BAR) {
    if (now - p->last_draw_us >= BAR_INTERVAL_US) {
      draw_bar(p, done, failed, now);
      p->last_draw_us = now;
    }
  } else if (now - p->start_us >= LINE_INTERVAL_US && now - p->last_draw_us >= LINE_INTERVAL_US) {
    char counts[160];
    format_counts(p, done, failed, now, counts, sizeof counts);
    fprintf(stderr, "lumahist: %s\n", counts);
    fflush(stderr);
    p->last_draw_us = now;
  }
}

void lht_progress_note(LhtProgress *p, const char *note)
{
  if (!p || p->mode == MODE_NONE)
    return;
  g_strlcpy(p->note, note ? note : "", sizeof p->note);
  lht_progress_update(p, p->last_done, p->last_failed);
}

void lht_progress_count(LhtProgress *p, bool failed)
{
  if (!p)
    return;
  if (failed)
    p->extra_failed++;
  else
    p->extra_done++;
  lht_progress_update(p, p->last_done, p->last_failed);
}

void lht_progress_clear(LhtProgress *p)
{
  if (!p || !p->bar_shown)
    return;
  fprintf(stderr, "\r%*s\r", p->last_width, "");
  fflush(stderr);
  p->bar_shown = false;
  p->last_width = 0;
  /* Redrawn at the next update, after the caller's line. */
  p->last_draw_us = 0;
}

void lht_progress_finish(LhtProgress *p, guint done, guint failed, bool interrupted)
{
  if (!p)
    return;
  done += p->extra_done;
  failed += p->extra_failed;
  if (p->mode != MODE_NONE) {
    lht_progress_clear(p);
    double elapsed = (double)(g_get_monotonic_time() - p->start_us) / G_USEC_PER_SEC;
    char took[32];
    format_duration(took, sizeof took, elapsed);
    fprintf(stderr, "lumahist: %s%u/%u %s done", interrupted ? "interrupted: " : "", done, p->total,
            p->noun);
    if (failed)
      fprintf(stderr, ", %u failed", failed);
    fprintf(stderr, " in %s (%.1f %s/s)\n", took, elapsed > 0 ? (done + failed) / elapsed : 0.0,
            p->noun);
    fflush(stderr);
  }
  g_free(p);
}

void lht_progress_free(LhtProgress *p)
{
  lht_progress_clear(p);
  g_free(p);
}
