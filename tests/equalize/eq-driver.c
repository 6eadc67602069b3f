/* eq-driver.c: equalizes one raw frame file with the library, so that the
 * Python tests can hold the results against OpenCV on the same pixels.
 *
 *   eq-driver [--backend B] [--mode global|clahe|lut] [--tiles X,Y] [--clip C]
 *             [--orientation O] [--matrix M] [--range R] [--depth D] [--lut FILE]
 *             [--histogram FILE]
 *             FORMAT WIDTH HEIGHT IN OUT
 *
 * IN and OUT hold the frame tightly packed as lh_frame_init lays it out (YUV:
 * the chroma planes follow).  --mode lut reads a LUT of 2^depth
 * little-endian 16-bit entries from --lut; --histogram writes the 64-bit
 * luma histogram of IN (from lh_analyze) and --lut with another mode writes
 * lh_lut_from_histogram's LUT of it. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lumahist.h"

static LhFormat format_from_name(const char *name)
{
  for (int f = 0; f < LH_FORMAT_COUNT; f++)
    if (strcmp(lh_format_name((LhFormat)f), name) == 0)
      return (LhFormat)f;
  fprintf(stderr, "eq-driver: unknown format %s\n", name);
  exit(2);
}

static void *read_file(const char *path, size_t size)
{
  FILE *f = fopen(path, "rb");
  void *data = malloc(size ? size : 1);
  if (!f || !data || fread(data, 1, size, f) != size) {
    fprintf(stderr, "eq-driver: cannot read %zu bytes from %s\n", size, path);
    exit(1);
  }
  fclose(f);
  return data;
}

static void write_file(const char *path, const void *data, size_t size)
{
  FILE *f = fopen(path, "wb");
  if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0) {
    fprintf(stderr, "eq-driver: cannot write %s\n", path);
    exit(1);
  }
}

static void check(int status, const char *what)
{
  if (status < 0) {
    fprintf(stderr, "eq-driver: %s: %s (%s)\n", what, lh_last_error(), lh_status_name(status));
    exit(1);
  }
}

int main(int argc, char **argv)
{
  LhBackend backend = LH_BACKEND_CPU;
  LhEqualizeOptions options;
  lh_equalize_options_init(&options);
  const char *mode = "global", *lut_path = NULL, *histogram_path = NULL;
  int depth = 0;
  static const struct option long_options[] = {
      {"backend", required_argument, NULL, 'b'},
      {"mode", required_argument, NULL, 'm'},
      {"tiles", required_argument, NULL, 't'},
      {"clip", required_argument, NULL, 'c'},
      {"matrix", required_argument, NULL, 'x'},
      {"range", required_argument, NULL, 'r'},
      {"depth", required_argument, NULL, 'd'},
      {"lut", required_argument, NULL, 'l'},
      {"histogram", required_argument, NULL, 'h'},
      {"orientation", required_argument, NULL, 'o'},
      {NULL, 0, NULL, 0},
  };
  int opt;
  while ((opt = getopt_long(argc, argv, "", long_options, NULL)) != -1) {
    switch (opt) {
    case 'b':
      check(lh_backend_from_name(optarg, &backend), "--backend");
      break;
    case 'm':
      mode = optarg;
      break;
    case 't':
      if (sscanf(optarg, "%d,%d", &options.tiles_x, &options.tiles_y) != 2)
        return 2;
      break;
    case 'c':
      options.clip_limit = atof(optarg);
      break;
    case 'o':
      options.orientation = atoi(optarg);
      break;
    case 'x':
      check(lh_matrix_from_name(optarg, &options.matrix), "--matrix");
      break;
    case 'r':
      check(lh_range_from_name(optarg, &options.range), "--range");
      break;
    case 'd':
      depth = atoi(optarg);
      break;
    case 'l':
      lut_path = optarg;
      break;
    case 'h':
      histogram_path = optarg;
      break;
    default:
      return 2;
    }
  }
  if (argc - optind != 5) {
    fprintf(stderr, "usage: eq-driver [options] FORMAT WIDTH HEIGHT IN OUT\n");
    return 2;
  }
  LhFormat format = format_from_name(argv[optind]);
  int width = atoi(argv[optind + 1]), height = atoi(argv[optind + 2]);
  size_t size = lh_frame_buffer_size(format, width, height, 0);
  uint8_t *pixels = read_file(argv[optind + 3], size);

  LhContext *context;
  check(lh_context_new(backend, &context), "context");
  LhFrame frame;
  check(lh_frame_init(&frame, format, LH_MEMORY_HOST, width, height, pixels, 0), "frame");
  frame.bit_depth = depth;
  int luma_depth =
      depth                      ? depth
      : format == LH_FORMAT_P010 ? 10
      : (format == LH_FORMAT_GRAY16 || format == LH_FORMAT_RGB16 || format == LH_FORMAT_RGBA16) ? 16
                                                                                                : 8;
  size_t n_bins = (size_t)1 << luma_depth;

  if (histogram_path || (lut_path && strcmp(mode, "lut") != 0)) {
    LhOptions analysis;
    lh_options_init(&analysis);
    analysis.matrix = options.matrix;
    LhStats stats;
    lh_stats_init(&stats);
    check(lh_analyze(context, &frame, &analysis, &stats), "analyze");
    if (histogram_path)
      write_file(histogram_path, stats.histogram, n_bins * sizeof *stats.histogram);
    if (lut_path) {
      uint16_t *lut = malloc(n_bins * sizeof *lut);
      check(lh_lut_from_histogram(stats.histogram, luma_depth, options.range, lut), "LUT");
      write_file(lut_path, lut, n_bins * sizeof *lut);
      free(lut);
    }
    lh_stats_clear(&stats);
  }

  if (strcmp(mode, "lut") == 0) {
    uint16_t *lut = read_file(lut_path, n_bins * sizeof *lut);
    check(lh_apply_lut(context, &frame, &frame, lut, options.matrix), "apply LUT");
    free(lut);
  } else {
    options.mode = strcmp(mode, "clahe") == 0 ? LH_EQUALIZE_CLAHE : LH_EQUALIZE_GLOBAL;
    check(lh_equalize(context, &frame, &frame, &options), "equalize");
  }
  write_file(argv[optind + 4], pixels, size);
  lh_context_free(context);
  free(pixels);
  return 0;
}
