#!/usr/bin/env bash
# tests/fuzz/run.sh: builds the libFuzzer targets with clang (ASan + UBSan,
# independently of the meson build's compiler) and runs one of them.
#
#   tests/fuzz/run.sh [--build DIR] [--time SECONDS] [--short] TARGET [LIBFUZZER ARGS...]
#
# TARGET is png, jpeg, analyze, ts-end, file-end, mp4, mkv, y4m or video-kind.
# --short is the test suite's run: a fixed seed, 15 seconds (or --time), a
# throw-away corpus beside the seeds.  Without it the run lasts --time
# seconds (default 600) and keeps what it finds in
# DIR/corpus-TARGET.  Crashes are written to DIR/artifacts/.  Exits 77 (skip)
# with the reason when clang or its libFuzzer runtime is missing.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
build=${TMPDIR:-/tmp}/lumahist-fuzz
seconds=""
short=false
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --time) seconds=$2; shift 2 ;;
    --short) short=true; shift ;;
    -*) echo "run.sh: unknown option $1" >&2; exit 2 ;;
    *) break ;;
  esac
done
[ $# -ge 1 ] || { echo "usage: run.sh [--build DIR] [--time S] [--short] png|jpeg|analyze|ts-end|file-end|mp4|mkv|y4m|video-kind [ARGS...]" >&2; exit 2; }
target=$1
shift
case "$target" in
  png | jpeg | analyze | ts-end | file-end | mp4 | mkv | y4m | video-kind) ;;
  *) echo "run.sh: unknown target '$target' (png, jpeg, analyze, ts-end, file-end, mp4, mkv, y4m or video-kind)" >&2; exit 2 ;;
esac
[ -n "$seconds" ] || { $short && seconds=15 || seconds=600; }

clang=""
for c in "${FUZZ_CC:-}" clang clang-19 clang-18 clang-17 clang-16 clang-15 clang-14; do
  if [ -n "$c" ] && command -v "$c" >/dev/null; then
    clang=$c
    break
  fi
done
if [ -z "$clang" ]; then
  echo "SKIP: clang not found (build-aux/install-deps.sh installs it)"
  exit 77
fi

sanitize="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
# $build/include: lumahist-version.h, which meson makes (below).
cflags="-std=gnu11 -g -O1 $sanitize -D_GNU_SOURCE -I$top/src -I$build/include -I$top/src/io"
# zlib: png-metadata.c checks the CRCs of the chunks it carries.
cflags="$cflags $(pkg-config --cflags libpng libjpeg zlib 2>/dev/null || true)"
libs="$(pkg-config --libs libpng libjpeg zlib 2>/dev/null || echo -lpng -ljpeg -lz) -lm -lpthread"
# The PNG fast path (png-fast.c) is fuzzed with the rest when libdeflate is there.
png_fast=false
if pkg-config --exists libdeflate 2>/dev/null; then
  png_fast=true
  cflags="$cflags -DLHIO_HAVE_LIBDEFLATE $(pkg-config --cflags libdeflate)"
  libs="$libs $(pkg-config --libs libdeflate)"
fi

mkdir -p "$build/obj" "$build/artifacts"
# Test runs of several targets start at once: one builds, the others wait.
exec 9>"$build/.lock"
flock 9

probe=$build/probe
if [ ! -x "$probe" ]; then
  printf '#include <stdint.h>\n#include <stddef.h>\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { return 0; }\n' >"$probe.c"
  if ! "$clang" -fsanitize=fuzzer,address,undefined "$probe.c" -o "$probe" 2>"$probe.log"; then
    echo "SKIP: $clang cannot link libFuzzer with ASan/UBSan (apt-get install libclang-rt-14-dev):"
    sed 's/^/  /' "$probe.log" | head -5
    exit 77
  fi
fi

# The library and lhio, compiled for coverage but without libFuzzer's main.
# The CUDA backend is left out: the CPU backend is the one fuzzed here.
sources=()
for f in "$top"/src/*.c "$top"/src/cpu/*.c "$top"/src/io/*.c; do
  case "$(basename "$f")" in
    cuda*|gpu-jpeg.c|nvjpeg-api.c) ;; # CUDA; gpu-jpeg-absent.c stands in
    video.c|video-rewrite.c|gst-*.c|mkv-tags.c) ;; # GStreamer; video-absent.c stands in
    png-fast.c) if $png_fast; then sources+=("$f"); fi ;; # libdeflate
    *) sources+=("$f") ;;
  esac
done
stamp=$build/obj/stamp
stale=false
if [ ! -f "$stamp" ]; then
  stale=true
else
  for f in "${sources[@]}" "$top"/src/*.h "$top"/src/io/*.h "$top/src/lumahist-version.h.in" \
    "$top/meson.build" "$0"; do
    [ "$f" -nt "$stamp" ] && stale=true && break
  done
fi
if $stale; then
  rm -f "$build"/obj/*.o "$stamp"
  # lumahist-version.h, as src/meson.build makes it from meson.build's version.
  version=$(sed -n "s/^ *version: *'\([^']*\)'.*/\1/p" "$top/meson.build" | head -1)
  IFS=. read -r major minor micro <<<"$version"
  mkdir -p "$build/include"
  sed -e "s/@LH_VERSION_MAJOR@/$major/" -e "s/@LH_VERSION_MINOR@/$minor/" \
    -e "s/@LH_VERSION_MICRO@/$micro/" "$top/src/lumahist-version.h.in" \
    >"$build/include/lumahist-version.h"
  for f in "${sources[@]}"; do
    obj=$build/obj/$(basename "$(dirname "$f")")-$(basename "$f" .c).o
    "$clang" $cflags -fsanitize=fuzzer-no-link -DLH_BUILDING_LIBRARY -c "$f" -o "$obj" &
  done
  wait
  for f in "${sources[@]}"; do
    [ -f "$build/obj/$(basename "$(dirname "$f")")-$(basename "$f" .c).o" ] ||
      { echo "run.sh: compiling $f failed" >&2; exit 1; }
  done
  touch "$stamp"
fi
exe=$build/fuzz-$target
if [ ! -x "$exe" ] || [ "$stamp" -nt "$exe" ] || [ "$here/fuzz-$target.c" -nt "$exe" ] ||
  [ "$here/fuzz-common.h" -nt "$exe" ] || [ "$here/fuzz-file.h" -nt "$exe" ]; then
  "$clang" $cflags -fsanitize=fuzzer "$here/fuzz-$target.c" "$build"/obj/*.o $libs -o "$exe"
fi
flock -u 9

seeds=$here/corpus/$target
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# libFuzzer's own exit status for a crash or a timeout is 77, which meson
# reports as a skip: a finding must fail the test.
common=(-timeout=10 -rss_limit_mb=2048 -max_total_time="$seconds" -print_final_stats=1
        -error_exitcode=1 -timeout_exitcode=1 -artifact_prefix="$build/artifacts/$target-")
if $short; then
  work=$(mktemp -d "$build/short-$target.XXXXXX")
  trap 'rm -rf "$work"' EXIT
  echo "fuzz-$target: $seconds s, seed 1, seeds from $seeds"
  "$exe" -seed=1 "${common[@]}" "$@" "$work" "$seeds"
else
  mkdir -p "$build/corpus-$target"
  echo "fuzz-$target: $seconds s, corpus $build/corpus-$target, seeds from $seeds"
  "$exe" "${common[@]}" "$@" "$build/corpus-$target" "$seeds"
fi
