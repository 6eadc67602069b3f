/* main.c: the entry of the lumahist command-line tool; it hands the command
 * line to one subcommand from a table and reports errors the same way for all. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <glib.h>

#include "lht.h"
#include "pipeline/lhp.h"

/* Further subcommands (equalize, clahe, overlay, merge) take a row each. */
static const LhtCommand commands[] = {
    {"stats", "Histogram, statistics and percentiles of each image, as JSON Lines, CSV or a table",
     lht_stats_main},
    {"equalize", "Each image with its luma histogram equalized (or one LUT for all)",
     lht_equalize_main},
    {"clahe", "Each image with contrast-limited adaptive equalization of its luma",
     lht_equalize_main},
    {"overlay", "Each image with the graph of its luma histogram drawn on it", lht_overlay_main},
    {"merge", "The dataset's histogram and statistics from the records of several stats runs",
     lht_merge_main},
};

/* Text of a message line, whose file names may hold any byte but '/' and
 * NUL: a control character (a newline, an escape sequence a terminal would
 * act on, C1's and the bidirectional ones of UTF-8 included) is written as
 * \n, \t or \xHH a byte, so that a file gets one line as it is named. */
static void put_line_text(const char *text)
{
  for (const unsigned char *c = (const unsigned char *)text; *c; c++) {
    const size_t hidden = lht_hidden_control_bytes((const char *)c);
    if (hidden) {
      for (size_t i = 0; i < hidden; i++)
        fprintf(stderr, "\\x%02x", c[i]);
      c += hidden - 1;
    } else if (*c == '\n')
      fputs("\\n", stderr);
    else if (*c == '\t')
      fputs("\\t", stderr);
    else if (*c < 0x20 || *c == 0x7f)
      fprintf(stderr, "\\x%02x", *c);
    else
      fputc(*c, stderr);
  }
}

void lht_error(const char *path, const char *format, ...)
{
  va_list args;
  va_start(args, format);
  char *message = g_strdup_vprintf(format, args);
  va_end(args);
  /* Batch runs report from several threads: one whole line at a time. */
  flockfile(stderr);
  fputs("lumahist: ", stderr);
  if (path) {
    /* An empty argument ('') named: "lumahist: : No such file" read as
     * a message with its file left out. */
    put_line_text(path[0] ? path : "''");
    fputs(": ", stderr);
  }
  put_line_text(message);
  fputc('\n', stderr);
  funlockfile(stderr);
  g_free(message);
}

int lht_usage_error(const char *command, const char *format, ...)
{
  va_list args;
  va_start(args, format);
  char *message = g_strdup_vprintf(format, args);
  va_end(args);
  flockfile(stderr);
  lht_error(NULL, "%s", message);
  fprintf(stderr, "Try '%s --help'.\n", command);
  funlockfile(stderr);
  g_free(message);
  return LHT_EXIT_USAGE;
}

const char *lht_reason(int status, const char *path)
{
  return lhp_reason(status, path);
}

/* Writes text (the help, the version) to stdout: a full disk, /dev/full or
 * a closed stdout is a failure (exit 1), as it is for the records. */
static int write_stdout(const char *text, const char *what)
{
  errno = 0;
  fputs(text, stdout);
  int failed = errno; /* of a write fputs made: a later fflush may not say it again */
  if (fflush(stdout) == 0 && !ferror(stdout))
    return LHT_EXIT_OK;
  if (errno)
    failed = errno;
  lht_error("stdout", "cannot write the %s: %s", what, g_strerror(failed ? failed : EIO));
  return LHT_EXIT_FAILURE;
}

static const LhtCommand *find_command(const char *name)
{
  for (size_t i = 0; i < G_N_ELEMENTS(commands); i++)
    if (strcmp(commands[i].name, name) == 0)
      return &commands[i];
  return NULL;
}

int lht_parse_options(GOptionContext *context, int *argc, char ***argv, const char *command)
{
  /* GOption's own --help converts the text to the locale's charset, which in
   * the C locale turns every non-ASCII character into '?'. */
  gboolean help = FALSE;
  GOptionEntry help_entries[] = {
      {"help", 'h', 0, G_OPTION_ARG_NONE, &help, "Show this help and exit", NULL},
      {NULL, 0, 0, 0, NULL, NULL, NULL},
  };
  g_option_context_set_help_enabled(context, FALSE);
  g_option_context_add_main_entries(context, help_entries, NULL);
  GError *error = NULL;
  if (!g_option_context_parse(context, argc, argv, &error)) {
    int status = lht_usage_error(command, "%s", error->message);
    g_error_free(error);
    return status;
  }
  if (help) {
    /* Every group: the video options are in groups of their own. */
    char *text = g_option_context_get_help(context, FALSE, NULL);
    int status = write_stdout(text, "help");
    g_free(text);
    return status;
  }
  return -1;
}

bool lht_parse_number(const char *text, double low, double high, double *value)
{
  char *end;
  double parsed = g_ascii_strtod(text, &end);
  if (end == text || *end != '\0' || !isfinite(parsed) || parsed < low || parsed > high)
    return false;
  *value = parsed;
  return true;
}

static char *commands_description(void)
{
  GString *text = g_string_new("Commands:\n");
  for (size_t i = 0; i < G_N_ELEMENTS(commands); i++)
    g_string_append_printf(text, "  %-10s %s\n", commands[i].name, commands[i].summary);
  g_string_append(text, "\n'lumahist COMMAND --help' describes the options of a command.\n"
                        "Exit status: 0 all files done, 1 some file failed, 2 usage error, "
                        "128 + N stopped by signal N (SIGINT, SIGTERM, SIGHUP).\n"
                        "Environment: CUDA_VISIBLE_DEVICES, the GPUs that CUDA shows (--devices "
                        "numbers them from 0); CUDA_HOME and CUDA_PATH, where libnvjpeg is looked "
                        "for after the loader's path; GStreamer's own (GST_PLUGIN_PATH, GST_DEBUG) "
                        "for video files; LUMAHIST_TRACE=FILE, a line of timings per image of a "
                        "run written to FILE.");
  return g_string_free(text, FALSE);
}

/* Options before the command: only --version (and --help). */
static int run_top_level(int argc, char **argv)
{
  gboolean show_version = FALSE;
  GOptionEntry entries[] = {
      {"version", 'V', 0, G_OPTION_ARG_NONE, &show_version, "Print the version and exit", NULL},
      {NULL, 0, 0, 0, NULL, NULL, NULL},
  };
  GOptionContext *context = g_option_context_new("COMMAND [OPTION…] PATH…");
  g_option_context_set_summary(context, "Luminance histograms, statistics and percentiles of "
                                        "images, on NVIDIA GPUs (CUDA) or the CPU.");
  char *description = commands_description();
  g_option_context_set_description(context, description);
  g_option_context_add_main_entries(context, entries, NULL);
  /* Stop at the first non-option so that `lumahist -V stats` is not read as a command. */
  g_option_context_set_strict_posix(context, TRUE);

  int status = lht_parse_options(context, &argc, &argv, "lumahist");
  if (status >= 0) {
    /* The help was shown or a usage error reported: nothing more to do. */
  } else if (show_version) {
    char *version = g_strdup_printf("lumahist %s\n", lh_version());
    status = write_stdout(version, "version");
    g_free(version);
  } else if (argc > 1) {
    status = lht_usage_error("lumahist", "unknown command '%s'", argv[1]);
  } else {
    char *help = g_option_context_get_help(context, TRUE, NULL);
    fputs(help, stderr);
    g_free(help);
    status = LHT_EXIT_USAGE;
  }
  g_option_context_free(context);
  g_free(description);
  return status;
}

/* Standard input, output or error closed when the tool starts (`2>&-`, the
 * closed descriptors of a daemon's or a cron job's child) is opened on
 * /dev/null the wrong way round, output read-only and input write-only, so
 * that using it still fails as using a closed one does.  Left closed, the
 * first file the run opened took its number: the messages of bad files went
 * into the records file of --output, the records into an input's
 * descriptor, and an output image being written could take either.  False
 * when /dev/null cannot be opened. */
static bool open_closed_standard_fds(void)
{
  for (int fd = STDIN_FILENO; fd <= STDERR_FILENO; fd++) {
    if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
      continue;
    /* Those below it are open: it is the lowest free number. */
    int opened = open("/dev/null", fd == STDIN_FILENO ? O_WRONLY : O_RDONLY);
    if (opened != fd) {
      if (opened >= 0)
        close(opened);
      return false;
    }
  }
  return true;
}

int main(int argc, char **argv)
{
  if (!open_closed_standard_fds()) {
    lht_error(NULL,
              "standard input, output or error is closed, and /dev/null cannot be "
              "opened in its place: %s",
              g_strerror(errno));
    return LHT_EXIT_FAILURE;
  }
  if (argc < 2 || argv[1][0] == '-') {
    g_set_prgname("lumahist");
    return run_top_level(argc, argv);
  }
  const LhtCommand *command = find_command(argv[1]);
  if (!command) {
    return lht_usage_error("lumahist", "unknown command '%s'", argv[1]);
  }
  /* GOption's help shows the program name: make it read "lumahist stats". */
  char *prgname = g_strdup_printf("lumahist %s", command->name);
  g_set_prgname(prgname);
  g_free(prgname);
  /* Caught once for the whole command, so that no stage of it (the walk, the
   * plan of outputs, the gap between the images and the videos) is left
   * where the first SIGINT, SIGTERM or SIGHUP killed the run without its
   * "stopped by" line; the runs inside catch them again, nested. */
  LhpStopSignals old_handlers;
  lhp_stop_signals_catch(&old_handlers);
  int status = command->run(argc - 1, argv + 1);
  lhp_stop_signals_release(&old_handlers);
  return status;
}
