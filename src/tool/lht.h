/* lht.h: what the files of the lumahist command-line tool share (prefix lht_):
 * the subcommand table, path expansion, record writers and error reporting. */
#ifndef LHT_H
#define LHT_H

#include <stdbool.h>
#include <stdio.h>

#include <glib.h>

#include "io/lhio.h"
#include "lumahist.h"
#include "pipeline/lhp-video.h"

/* Exit statuses: some file failed, or the command line itself was wrong. */
#define LHT_EXIT_OK 0
#define LHT_EXIT_FAILURE 1
#define LHT_EXIT_USAGE 2

/* One subcommand: `lumahist NAME ...` runs run(argc, argv) with argv[0] the
 * subcommand's name, and returns the exit status. */
typedef struct {
  const char *name;
  const char *summary;
  int (*run)(int argc, char **argv);
} LhtCommand;

int lht_stats_main(int argc, char **argv);
int lht_equalize_main(int argc, char **argv); /* equalize and clahe */
int lht_overlay_main(int argc, char **argv);
int lht_merge_main(int argc, char **argv); /* merge.c */

/* Parses the options of context (adding -h/--help), and writes the help
 * itself so that it reads the same in every locale.  Returns -1 to go on, or
 * the exit status: 0 after the help (1 when stdout could not take it), 2
 * after a usage error (reported with a pointer to `command --help`). */
int lht_parse_options(GOptionContext *context, int *argc, char ***argv, const char *command);

/* The options of every command that reads images (luma-options.c). */
typedef struct {
  char *matrix; /* NULL: the default, or a video's own */
  char *range;
  char *backend;
  gint64 max_pixels;
  char *fifo_wait; /* seconds, as given; NULL: lhio's default */
  gboolean verbose;
} LhtLumaArgs;

/* Adds --matrix, --range, --backend, --max-pixels, --fifo-wait and --verbose
 * to the context's main options, stored into args. */
void lht_luma_args_add(GOptionContext *context, LhtLumaArgs *args);
/* Reads what was given into *matrix, *range and *backend (each left as it
 * is when not given) and sets lhio's FIFO wait; NULL, or the usage error's
 * text (to be freed). */
char *lht_luma_args_check(const LhtLumaArgs *args, LhMatrix *matrix, LhRange *range,
                          LhBackend *backend);
void lht_luma_args_clear(LhtLumaArgs *args);

/* A number option given as text (GOption's doubles cannot say whether the
 * option was given at all): true when text is a whole finite number in
 * [low, high], stored in *value. */
bool lht_parse_number(const char *text, double low, double high, double *value);

/* The bytes of the character at text when it is a C1 control (UTF-8 of
 * U+0080 .. U+009F) or a bidirectional control (U+202A .. U+202E, U+2066
 * .. U+2069), which a terminal acts on or reorders the line by; 0 for any
 * other (hidden-controls.c). */
size_t lht_hidden_control_bytes(const char *text);

/* The percentiles stats reports unless told (and merge of no record). */
#define LHT_DEFAULT_PERCENTILES "1,5,50,95,99"

/* "lumahist: PATH: REASON" on stderr, one line; a NULL path leaves it out. */
void lht_error(const char *path, const char *format, ...) G_GNUC_PRINTF(2, 3);
/* A usage error: "lumahist: MESSAGE" as lht_error writes it, then "Try
 * 'COMMAND --help'." (command: "lumahist stats", or "lumahist" itself).
 * Returns LHT_EXIT_USAGE. */
int lht_usage_error(const char *command, const char *format, ...) G_GNUC_PRINTF(2, 3);

/* What equalize, clahe and overlay say (on standard error, the run going on)
 * of an image whose output is not the kind of file it was (rewrite.c): a CMYK
 * or YCCK JPEG, written as an ordinary colour JPEG, or an animated PNG,
 * written as a still one; NULL for any other image; to be freed. */
char *lht_written_note(const LhioImage *image);

/* Writes data to path whole (save-file.c): a regular file (or one a link
 * names) through a temporary file and a rename; a device, a FIFO or the
 * like written through as it is, never replaced by a file. */
bool lht_save_file(const char *path, const char *data, size_t size, GError **error);
/* Whether lht_save_file(path) can be done, checked before a run rather than
 * found at its end: a regular file (or none) whose folder takes a file; a
 * device or a FIFO, written through, passes.  False after saying why. */
bool lht_save_file_possible(const char *path);
/* Why path, given to an option that writes a file, names none, or NULL: ''
 * (an unset shell variable, say), which opening it said only as
 * "lumahist: : No such file or directory".  A usage error, said before
 * anything is read. */
const char *lht_output_path_refusal(const char *path);
/* "-" as a path to write (--report -) is standard output, as it is for
 * --output and among the inputs: *path (g_malloc'ed) becomes /dev/stdout.
 * A file named "-" was written. */
void lht_standard_output_named(char **path);
/* Whether a file can be made in folder (one is made and removed); false with
 * the errno in *error. */
bool lht_folder_writable(const char *folder, int *error);
/* Whether path is one of files (paths), through any link: a regular file
 * that exists and is the same file as one of them (save-file.c). */
bool lht_is_one_of(const char *path, const GPtrArray *files);
/* Where a file written at path lands, its last component kept as it is
 * (a link there is replaced by a rename, not followed) (save-file.c): its
 * folder made canonical as far as it exists, the links among the folders
 * followed (OUT/a/x.png is OUT/b/x.png where OUT/a is a link to OUT/b), and
 * its name.  folders (NULL: none) caches the folders' places: outputs share
 * their folders. */
char *lht_place_of(const char *path, GHashTable *folders);
/* Where a file written at path lands, as an absolute name with no link in
 * it (save-file.c): the links to it followed even where they point to
 * nothing yet (realpath gives up on those), then lht_place_of. */
char *lht_landing_path(const char *path);
/* Whether path is where standard output goes (/dev/stdout, or the file or
 * pipe it is redirected to) (save-file.c): a page written there replaced a
 * file's records, or followed them down a pipe.  A terminal or /dev/null
 * takes both without losing either. */
bool lht_is_standard_output(const char *path);

/* The message of the library's last error without a leading "PATH: ", which
 * lht_error() already writes; the status name when there is no message. */
const char *lht_reason(int status, const char *path);

/* ------------------------------------------------------------------------ */
/* Path expansion (walk.c)                                                   */

/* Appends to paths (newly allocated strings) the files named by args, as
 * lhp_walk (src/pipeline/walk.c) finds them, its messages on stderr
 * (lht_error), leaving out the folder leave_out (NULL: none) below them;
 * false if a path could not be read, or a caught signal
 * (lhp_stop_signals_catch) ended the walk. */
bool lht_walk(char *const *args, int n_args, const char *leave_out, GPtrArray *paths);
/* After a command's walk: 0, or, when a caught signal stopped it, the exit
 * status 128 + N, the "stopped by" line said. */
int lht_stopped_before_start(void);
/* Whether folders give their video files (lhio_is_video_name) as well, for
 * the commands that read videos; off unless set. */
void lht_walk_include_videos(bool include);

/* ------------------------------------------------------------------------ */
/* Record writers (output.c)                                                 */

typedef enum {
  LHT_FORMAT_JSONL,
  LHT_FORMAT_CSV,
  LHT_FORMAT_TABLE,
} LhtFormat;

/* "jsonl", "csv", "table" -> *format; false for anything else. */
bool lht_format_from_name(const char *name, LhtFormat *format);

/* One image's result, or one video frame's. */
typedef struct {
  const char *path;
  int width; /* of the image, not of the region of interest */
  int height;
  LhBackend backend;
  LhioDecoder decoder;
  const char *converted_from; /* "CMYK", "YCCK", or NULL: not converted */
  const LhStats *stats;
  const LhpFrameFields *video; /* NULL for an image */
} LhtRecord;

typedef struct LhtWriter LhtWriter;

/* A writer of records to out.  The percentiles of every record are those of
 * options, in that order.  paths, when given, are every path that may be
 * written, so that the table can size its path column before the first row. */
LhtWriter *lht_writer_new(FILE *out, LhtFormat format, const LhOptions *options,
                          bool with_histogram, const GPtrArray *paths);
void lht_writer_record(LhtWriter *writer, const LhtRecord *record);
/* As lht_writer_new, with the columns of video frames in CSV when with_video. */
LhtWriter *lht_writer_new_video(FILE *out, LhtFormat format, const LhOptions *options,
                                bool with_histogram, const GPtrArray *paths, bool with_video);
/* Flushes and frees; false if writing to out failed at any point. */
bool lht_writer_finish(LhtWriter *writer);

/* ------------------------------------------------------------------------ */
/* Commands that write images: equalize, clahe, overlay (rewrite.c)          */

/* The files a run has put in place (written.c).  Thread-safe. */
typedef struct LhtWritten LhtWritten;
LhtWritten *lht_written_new(void);
void lht_written_free(LhtWritten *written);

/* One output to put in place: LhioWriteOptions.place_data (and
 * LhioVideoRewriteOptions') for lht_written_place. */
typedef struct {
  LhtWritten *written;
  const char *input; /* whose output it is, as messages name it */
  char *first;       /* when refused: the input the file was written for, */
  char *first_path;  /* and the name it was written under (lht_placing_clear) */
  bool guarded;      /* when refused: an image there before the run (lht_written_guard) */
} LhtPlacing;

/* Guards the regular file at path (an image in --out, where --out lies in
 * a folder searched and is left out of the walk): lht_written_place refuses
 * to replace it but with the same bytes. */
void lht_written_guard(LhtWritten *written, const char *path);

/* An LhioPlaceFunc (data: an LhtPlacing): refuses, with placing->first
 * set, to put temp in place at path when path is a file this run has put in
 * place already (under another name, or the same), and with
 * placing->guarded set when path is a guarded file of other bytes; else
 * renames temp to path and remembers the file. */
int lht_written_place(const char *temp, const char *path, void *data);
/* What is said of the input of a refused placing of output (g_free it). */
char *lht_placing_refusal(const LhtPlacing *placing, const char *output);
void lht_placing_clear(LhtPlacing *placing);

/* Each input and the output it is written to: OUT_DIR/NAME for a file
 * named on the command line, OUT_DIR/RELATIVE/PATH for a file found in a
 * folder named on it.  An image read from standard input, a pipe or a FIFO
 * not named as an image ("-", /dev/fd/63) is named by its content as well:
 * OUT_DIR/stdin.png or OUT_DIR/stdin.jpg (lht_plan_output). */
typedef struct {
  GPtrArray *inputs;
  GPtrArray *outputs;       /* without that extension */
  GArray *named_by_content; /* gboolean for each output */
  GHashTable *input_ids;    /* "dev:ino" of every input -> its path */
  /* Where each output not named by its content lands (its folders' links
   * followed) -> its input. */
  GHashTable *places;
  LhtWritten *written; /* the outputs put in place so far */
} LhtPlan;

/* Expands args (as lht_walk) into *plan, out_dir left out of the folders
 * below them.  An input whose output would be an input file, or the output
 * of an earlier input, is reported and left out; returns false if anything
 * was. */
bool lht_plan_outputs(char *const *args, int n_args, const char *out_dir, LhtPlan *plan);
/* The file output `index` is written to, for an image of that type. */
char *lht_plan_output(const LhtPlan *plan, guint index, LhioFileType type);
/* Whether output `index` takes the extension of its image's type. */
bool lht_plan_named_by_content(const LhtPlan *plan, guint index);
/* Whether one of the n inputs plan_indices names is a file a new run reads
 * again, which --skip-existing can leave out: not standard input or a pipe,
 * whose images are gone once read (and never skipped). */
bool lht_plan_any_resumable(const LhtPlan *plan, const guint *plan_indices, guint n);
/* The input whose planned output (one not named by its content) lands
 * where output would, or NULL: an output named by its content, known only
 * once its image is read, yields to it, whichever comes first. */
const char *lht_plan_place_taken(const LhtPlan *plan, const char *output);
/* Whether path names (through any link) one of the plan's inputs. */
bool lht_plan_holds_input(const LhtPlan *plan, const char *path);
/* Whether path names one of the plan's outputs (by name, or through any link
 * to one that exists). */
bool lht_plan_holds_output(const LhtPlan *plan, const char *path);
void lht_plan_clear(LhtPlan *plan);
/* Why --out cannot be out_dir (missing, empty, or "-"), or NULL. */
const char *lht_out_dir_refusal(const char *out_dir);
/* Whether the outputs can go into out_dir: made if missing, and a file made
 * and removed in it, so that an --out that is a file, read-only or not ours
 * is one line (said here) before any input is read, not one per input after
 * each (rewrite.c). */
bool lht_out_dir_usable(const char *out_dir);

/* A write that fails because the disk or quota is full or the file system
 * turned read-only: every later output would fail too, so the run stops,
 * its images and its videos alike, and says so once, at its end. */
typedef struct {
  int error;      /* that write's errno; 0: no such failure */
  guint written;  /* outputs written by the run, images and videos */
  guint not_done; /* inputs left unwritten after it */
} LhtWriteStop;

/* The errno in an output's write failure (reason: lhio's, with strerror's
 * words) when it is one that stops the run: ENOSPC, EDQUOT or EROFS; else 0
 * (rewrite.c). */
int lht_write_stop_error(const char *reason);
/* "OUT_DIR: stopped: No space left on device; N outputs written, M inputs
 * not done (run again with --skip-existing ...)", when a write stopped the
 * run before some input. */
void lht_write_stop_say(const LhtWriteStop *stop, const char *out_dir);

typedef struct {
  int jpeg_quality;    /* 0: lhio's default */
  int png_compression; /* as LhioWriteOptions: 0 is lhio's default */
  uint64_t max_pixels;
} LhtRewriteOptions;

/* --quality and --png-compression, the options of every command that writes
 * images, as given. */
typedef struct {
  gint quality; /* LHT_QUALITY_NOT_GIVEN unless given */
  char *png_compression;
} LhtEncodeArgs;

#define LHT_QUALITY_NOT_GIVEN G_MININT

/* Adds them to context's main options. */
void lht_encode_options_add(GOptionContext *context, LhtEncodeArgs *args);
/* Sets options->jpeg_quality and ->png_compression from args; for a bad value,
 * false and the usage message in *why (g_free it). */
bool lht_encode_options_parse(const LhtEncodeArgs *args, LhtRewriteOptions *options, char **why);

/* Changes an image in place; reports its own failure (lht_error) and
 * returns false then. */
typedef bool (*LhtRewriteFunc)(LhioImage *image, const char *path, void *data);

/* What to say of an image once written, changed (a change that could not be
 * made as asked, the file written all the same): a line (g_malloc'd), or
 * NULL. */
typedef char *(*LhtWrittenNoteFunc)(const LhioImage *image, void *data);

#endif /* LHT_H */
