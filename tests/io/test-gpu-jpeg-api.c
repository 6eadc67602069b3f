/* test-gpu-jpeg-api.c: what of the GPU JPEG path runs without a GPU: which
 * planar frame format a JPEG's headers give it (and the refusals, with their
 * reasons), that nvJPEG's absence is said and not a crash (libnvjpeg looked
 * for at run time: found on GPU hosts, with every entry point, the
 * encoder's included; missing here), and lhio_write_encoded (a temporary
 * file renamed into place, nothing left on failure). */
#include "io-test.h"
#include "lhio-gpu.h"

/* The headers of a JPEG as lhio_jpeg_probe fills them. */
static LhioJpegInfo info_of(int components, int h, int v, bool chroma_1x1)
{
  LhioJpegInfo info;
  memset(&info, 0, sizeof info);
  info.width = 37;
  info.height = 23;
  info.components = components;
  info.ycbcr = true;
  info.precision = 8;
  info.h_samp = h;
  info.v_samp = v;
  info.chroma_1x1 = chroma_1x1;
  info.ends_with_eoi = true;
  return info;
}

static void test_planar_format(bool built_with_nvjpeg)
{
  struct {
    int components, h, v;
    bool chroma_1x1;
    LhFormat format; /* LH_FORMAT_COUNT: refused */
    const char *reason_has;
  } cases[] = {
      {1, 1, 1, true, LH_FORMAT_GRAY8, NULL},
      {3, 2, 2, true, LH_FORMAT_I420, NULL},
      {3, 2, 1, true, LH_FORMAT_Y42B, NULL},
      {3, 1, 1, true, LH_FORMAT_Y444, NULL},
      {3, 1, 2, true, LH_FORMAT_COUNT, "4:2:0, 4:2:2 and 4:4:4"},     /* 4:4:0 */
      {3, 2, 2, false, LH_FORMAT_COUNT, "chroma components sampled"}, /* odd chroma factors */
      {4, 1, 1, true, LH_FORMAT_COUNT, "components"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    LhioJpegInfo info = info_of(cases[i].components, cases[i].h, cases[i].v, cases[i].chroma_1x1);
    LhFormat format = LH_FORMAT_COUNT;
    const char *why = NULL;
    bool taken = lhio_gpu_jpeg_planar_format(&info, &format, &why);
    if (!built_with_nvjpeg) {
      CHECK(!taken && why && strstr(why, "without nvJPEG"),
            "case %zu: a build without nvJPEG takes it (%s)", i, why ? why : "no reason");
      continue;
    }
    bool want = cases[i].format != LH_FORMAT_COUNT;
    CHECK(taken == want, "case %zu (%d components, %dx%d): %s, expected %s", i, cases[i].components,
          cases[i].h, cases[i].v, taken ? "taken" : why, want ? "taken" : "refused");
    if (taken && want)
      CHECK(format == cases[i].format, "case %zu: format %s, expected %s", i,
            lh_format_name(format), lh_format_name(cases[i].format));
    if (!taken && !want)
      CHECK(why && strstr(why, cases[i].reason_has), "case %zu: reason '%s' lacks '%s'", i,
            why ? why : "(none)", cases[i].reason_has);
  }
  /* What the decoder refuses (gpu_refusal) the planar path refuses too, with
   * the same words. */
  LhioJpegInfo cmyk = info_of(3, 2, 2, true);
  cmyk.gpu_refusal = "CMYK";
  LhFormat format;
  const char *why = NULL;
  CHECK(!lhio_gpu_jpeg_planar_format(&cmyk, &format, &why) && why &&
            (!built_with_nvjpeg || strcmp(why, "CMYK") == 0),
        "a file the decoder refuses: %s", why ? why : "taken");
}

/* lhnj_api is internal to lhio; lhio_gpu_jpeg_usable answers from it. */
static void test_library_lookup(bool built_with_nvjpeg)
{
  const char *why = NULL;
  bool usable = lhio_gpu_jpeg_usable(&why);
  const char *expect = getenv("LUMAHIST_EXPECT_NVJPEG"); /* "0", "1" or unset */
  if (usable) {
    CHECK(built_with_nvjpeg, "usable in a build without nvJPEG");
    printf("libnvjpeg found with every entry point lhio looks up (the encoder's too)\n");
  } else {
    CHECK(why && *why, "not usable, and no reason given");
    if (built_with_nvjpeg)
      CHECK(why && strstr(why, "libnvjpeg"), "the reason does not name libnvjpeg: %s", why);
    printf("nvJPEG not usable here: %s\n", why ? why : "");
    /* Asking again answers the same, from the one load. */
    const char *again = NULL;
    CHECK(!lhio_gpu_jpeg_usable(&again) && again == why, "a second answer differs");
    /* Starting a decoder says why too, and makes none. */
    LhioGpuJpeg *decoder = (LhioGpuJpeg *)&decoder;
    CHECK(lhio_gpu_jpeg_new(NULL, &decoder) == LH_ERROR_UNSUPPORTED && decoder == NULL,
          "lhio_gpu_jpeg_new without nvJPEG: %s", lh_last_error());
    CHECK(strstr(lh_last_error(), why) != NULL, "lhio_gpu_jpeg_new's message '%s' lacks '%s'",
          lh_last_error(), why);
    CHECK(lhio_gpu_jpeg_prepare() == LH_ERROR_UNSUPPORTED, "lhio_gpu_jpeg_prepare: %s",
          lh_last_error());
  }
  if (expect)
    CHECK(usable == (strcmp(expect, "1") == 0), "LUMAHIST_EXPECT_NVJPEG=%s, usable %d", expect,
          usable);
}

static void test_write_encoded(void)
{
  char *dir = test_make_dir();
  const char *path = test_path(dir, "out.jpg");
  uint8_t bytes[300];
  uint64_t seed = 14;
  for (size_t i = 0; i < sizeof bytes; i++)
    bytes[i] = (uint8_t)test_rand(&seed);
  LhioEncoded encoded = {.type = LHIO_FILE_JPEG, .data = bytes, .size = sizeof bytes};
  CHECK_STATUS(lhio_write_encoded(path, &encoded, NULL), LH_OK, "lhio_write_encoded");
  size_t size = 0;
  uint8_t *back = test_read_file(path, &size);
  CHECK(back && size == sizeof bytes && memcmp(back, bytes, size) == 0,
        "the file holds other bytes (%zu)", size);
  free(back);
  /* Over an existing file: replaced whole. */
  encoded.size = 7;
  CHECK_STATUS(lhio_write_encoded(path, &encoded, NULL), LH_OK, "lhio_write_encoded again");
  back = test_read_file(path, &size);
  CHECK(back && size == 7 && memcmp(back, bytes, 7) == 0, "not replaced (%zu bytes)", size);
  free(back);
  CHECK(test_count_entries(dir) == 1, "%d entries: a temporary file was left",
        test_count_entries(dir));
  /* Nothing to write, or nowhere to write it: refused, nothing left. */
  LhioEncoded empty = {.type = LHIO_FILE_JPEG};
  CHECK(lhio_write_encoded(test_path(dir, "empty.jpg"), &empty, NULL) == LH_ERROR_INVALID_ARGUMENT,
        "empty bytes accepted");
  CHECK(lhio_write_encoded(test_path(dir, "missing/x.jpg"), &encoded, NULL) == LH_ERROR_IO,
        "a missing folder: %s", lh_last_error());
  CHECK(test_count_entries(dir) == 1, "%d entries after refusals", test_count_entries(dir));
  test_remove_dir(dir);
}

int main(int argc, char **argv)
{
  bool built_with_nvjpeg = argc > 1 && strcmp(argv[1], "--built-with-nvjpeg") == 0;
  test_planar_format(built_with_nvjpeg);
  test_library_lookup(built_with_nvjpeg);
  test_write_encoded();
  return test_result("test-gpu-jpeg-api");
}
