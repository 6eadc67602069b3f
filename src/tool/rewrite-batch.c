/* rewrite-batch.c: the batch run of the subcommands that write an image per
 * input (equalize, clahe, overlay): decoding and encoding on the pool of
 * threads, the change itself on the analysis contexts' threads (one per GPU,
 * or one per decoding thread on the CPU), --skip-existing, --shard and
 * progress.  With nvJPEG, JPEGs are decoded, changed and encoded on the GPU
 * and the pool only writes the bytes (pipeline.c).  Each output is written
 * to a temporary file renamed into place (lhio_write, lhio_write_encoded),
 * so an interrupted run leaves whole outputs only, and never over an output
 * of the same run (written.c).  A disk that fills up (or turns read-only)
 * stops the run (LhtWriteStop), the videos after the images too. */
#include <errno.h>
#include <string.h>

#include <glib/gstdio.h>

#include "lht-batch.h"

typedef struct {
  const LhtPlan *plan;
  const guint *plan_index; /* of each path handed to the pipeline */
  const LhtRewriteOptions *options;
  LhtRewriteFunc change;
  LhtWrittenNoteFunc written_note;
  void *data;
  guint skipped; /* inputs whose output exists (--skip-existing) */
  bool say_skipped;
  /* The errno of a write that stops the run (lht_write_stop_error): every
   * later output would fail the same way (atomic; also the pipeline's stop
   * flag). */
  gint out_failed;
} RewriteRun;

/* item->user of an output left unwritten after the stop: emitted neither as
 * written nor as failed, so that it counts as not done once only, as do the
 * items the pipeline hands back cancelled (not begun before a signal or the
 * stop). */
static char not_tried;

/* Once the contexts are open, after what they have to say. */
static bool say_ready(const LhpContexts *contexts, void *data)
{
  RewriteRun *run = data;
  if (run->skipped && run->say_skipped)
    lht_error(NULL, "skipping %u input%s whose output exists", run->skipped,
              run->skipped == 1 ? "" : "s");
  return true;
}

static bool change_step(LhContext *context, LhpItem *item, void *data)
{
  RewriteRun *run = data;
  if (run->change(&item->image, item->path, run->data))
    return true;
  /* The change reported its failure itself. */
  item->status = LH_ERROR_IO;
  return false;
}

/* Adds text (taken) to the item's note: after --verbose's note on the
 * decoder, if any, on one line. */
static void add_note(LhpItem *item, char *text)
{
  char *note = item->note ? g_strdup_printf("%s; %s", item->note, text) : text;
  if (note != text)
    g_free(text);
  g_free(item->note);
  item->note = note;
}

/* Writes the item's image (or nvJPEG's bytes) to output; false after
 * lhp_item_fail. */
static bool write_output(RewriteRun *run, LhpItem *item, const char *output)
{
  char *folder = g_path_get_dirname(output);
  int made = g_mkdir_with_parents(folder, 0777);
  int error = errno;
  g_free(folder);
  if (made != 0) {
    lhp_item_fail(item, LH_ERROR_IO, "cannot make the folder of %s: %s", output, g_strerror(error));
    return false;
  }
  /* Checked again at the last moment: a file may have been linked since. */
  if (lht_plan_holds_input(run->plan, output)) {
    lhp_item_fail(item, LH_ERROR_IO, "its output %s is an input; not overwritten", output);
    return false;
  }
  const char *owner = lht_plan_named_by_content(run->plan, run->plan_index[item->index])
                          ? lht_plan_place_taken(run->plan, output)
                          : NULL;
  if (owner) {
    lhp_item_fail(item, LH_ERROR_IO, "its output %s is also that of %s; skipped", output, owner);
    return false;
  }
  LhtPlacing placing = {.written = run->plan->written, .input = item->path};
  LhioWriteOptions write_options = {.jpeg_quality = run->options->jpeg_quality,
                                    .png_compression = run->options->png_compression,
                                    .place = lht_written_place,
                                    .place_data = &placing};
  int status = item->output.data ? lhio_write_encoded(output, &item->output, &write_options)
                                 : lhio_write(output, &item->image, &write_options);
  lhio_encoded_clear(&item->output);
  if (placing.first || placing.guarded) {
    char *why = lht_placing_refusal(&placing, output);
    lhp_item_fail(item, LH_ERROR_IO, "%s", why);
    g_free(why);
    lht_placing_clear(&placing);
    return false;
  }
  if (status < 0) {
    const char *reason = lht_reason(status, output);
    int stopping = lht_write_stop_error(reason);
    if (stopping)
      g_atomic_int_compare_and_exchange(&run->out_failed, 0, stopping);
    lhp_item_fail(item, status, "writing %s: %s", output, reason);
    return false;
  }
  return true;
}

static bool write_step(LhpItem *item, void *data)
{
  RewriteRun *run = data;
  if (g_atomic_int_get(&run->out_failed)) {
    /* Not tried: the run is stopping, and says why once at its end. */
    item->user = &not_tried;
    g_clear_pointer(&item->note, g_free);
    lhio_encoded_clear(&item->output);
    lhio_image_clear(&item->image);
    return false;
  }
  /* Encoded by nvJPEG already, or to be encoded here as it was read. */
  LhioFileType type = item->output.data ? item->output.type : item->image.type;
  char *output = lht_plan_output(run->plan, run->plan_index[item->index], type);
  bool ok = write_output(run, item, output);
  g_free(output);
  if (!ok)
    return false;
  char *written = lht_written_note(&item->image);
  if (written)
    add_note(item, written);
  /* Here, not after the change: a JPEG nvJPEG fails to encode is changed
   * again on the CPU. */
  written = run->written_note ? run->written_note(&item->image, run->data) : NULL;
  if (written)
    add_note(item, written);
  /* The pixels are not needed while the item waits for its turn. */
  lhio_image_clear(&item->image);
  return true;
}

static bool count_done(LhpItem *item, void *data)
{
  return item->user != &not_tried;
}

/* The output's path below out_dir: the input's path below the folder named,
 * or its name, the same on every machine (what --shard hashes). */
static const char *output_shard_key(const char *out_dir, const char *output)
{
  size_t n = strlen(out_dir);
  while (n > 0 && out_dir[n - 1] == '/')
    n--;
  if (strncmp(output, out_dir, n) == 0 && output[n] == '/')
    return output + n + 1;
  return output;
}

bool lht_shard_takes_output(const LhtBatchArgs *args, const char *out_dir, const char *output)
{
  return !args->shard_count ||
         lht_shard_of(output_shard_key(out_dir, output), args->shard_count) == args->shard_index;
}

int lht_batch_rewrite(LhtBatchArgs *args, const LhtPlan *plan, const char *out_dir,
                      const bool *leave_out, const LhtRewriteOptions *options,
                      LhtRewriteFunc change, LhtWrittenNoteFunc written_note, void *data,
                      LhBackend backend, bool verbose, LhtWriteStop *write_stop)
{
  /* --decoder gpu (lht_batch_backend_refuses took it): no quiet fall back to
   * the CPU backend. */
  if (args->decoder == LHP_DECODER_GPU)
    backend = LH_BACKEND_CUDA;
  int jobs = lht_batch_jobs(args);
  GPtrArray *inputs = g_ptr_array_new();
  guint *plan_index = g_new(guint, plan->inputs->len + 1);
  guint skipped = 0;
  for (guint i = 0; i < plan->inputs->len; i++) {
    const char *output = g_ptr_array_index(plan->outputs, i);
    if (leave_out && leave_out[i])
      continue;
    if (!lht_shard_takes_output(args, out_dir, output))
      continue;
    /* An image from a pipe is read again: what it holds is not known. */
    if (args->skip_existing && !lht_plan_named_by_content(plan, i) && lht_output_exists(output)) {
      skipped++;
      continue;
    }
    plan_index[inputs->len] = i;
    g_ptr_array_add(inputs, g_ptr_array_index(plan->inputs, i));
  }
  RewriteRun run = {
      .plan = plan,
      .plan_index = plan_index,
      .options = options,
      .change = change,
      .written_note = written_note,
      .data = data,
      .skipped = skipped,
      .say_skipped = (verbose || args->progress) && !args->quiet,
  };
  LhtProgress *progress = lht_progress_new(inputs->len, args->progress, args->quiet);
  LhpPipelineSpec spec = {
      .contexts = {backend, args->device_ids, jobs, args->streams, verbose,
                   args->decoder == LHP_DECODER_GPU ? "--decoder gpu" : NULL},
      .jobs = jobs,
      .read_mode = LHIO_READ_FULL,
      .decoder = args->decoder,
      /* JPEGs: decoded, changed and encoded on the GPU at --quality (the
       * CPU's default, 95, when not given). */
      .gpu_jpeg_quality = options->jpeg_quality ? options->jpeg_quality : 95,
      .verbose = verbose,
      .max_pixels = options->max_pixels,
      .device_step = change_step,
      .finish_step = write_step,
      .ready = say_ready,
      .emit = count_done,
      /* Outputs written after an input the stop left undone are counted. */
      .emit_past_gaps = true,
      .data = &run,
      .report = lht_progress_report(progress),
      .catch_signals = true,
      .stop = &run.out_failed,
      .process_ends_after = true,
  };
  LhpContexts contexts;
  LhpPipelineResult result;
  lhp_pipeline_run(&spec, &contexts, inputs, &result);
  int status = result.failed ? LHT_EXIT_FAILURE : LHT_EXIT_OK;
  if (result.not_started) {
    lht_progress_free(progress);
    status = LHT_EXIT_FAILURE;
  } else {
    lht_progress_finish(progress, result.done, result.failed, result.signal != 0);
    if (args->timing)
      lhp_pipeline_print_timing(&result, &contexts);
    write_stop->written += result.done;
    if (result.signal) {
      lht_error(NULL, "stopped by %s: %u output%s written%s", lhp_signal_name(result.signal),
                result.done, result.done == 1 ? "" : "s",
                lht_plan_any_resumable(plan, plan_index, inputs->len)
                    ? "; run again with --skip-existing to go on"
                    : "");
      status = 128 + result.signal;
    } else if (g_atomic_int_get(&run.out_failed)) {
      /* After a disk that failed: those it stopped, and those it left
       * unwritten; said once the videos are counted too. */
      write_stop->error = g_atomic_int_get(&run.out_failed);
      write_stop->not_done += inputs->len - result.done - result.failed;
      /* A run a full disk stopped failed, whatever its failures count. */
      status = LHT_EXIT_FAILURE;
    }
  }
  g_free(result.per_context);
  g_ptr_array_free(inputs, TRUE);
  g_free(plan_index);
  lhp_contexts_close(&contexts);
  return status;
}
