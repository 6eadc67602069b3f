#!/usr/bin/env bash
# tests/gpu-host.sh OUT_DIR: on a GPU host (Ubuntu 24.04, CUDA 13, no network),
# builds lumahist for the local GPU, runs the whole test suite and every
# benchmark, and leaves the logs and CSV files in OUT_DIR.  GStreamer comes
# from a .gst-debs folder beside the checkout when the host has none.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: tests/gpu-host.sh OUT_DIR}
mkdir -p "$out"
cd "$top"
if ! command -v gst-launch-1.0 >/dev/null && [ -f .gst-debs/gst-env.sh ]; then
  . .gst-debs/gst-env.sh .gst-debs
fi
build=${BUILD:-/tmp/lumahist-gpu}
arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -n1 | tr -d .)
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,memory.total --format=csv >"$out/gpu.txt"

{ meson setup "$build" -Dcuda=enabled -Dgpu_arch="${arch:-90}" && ninja -C "$build"; } \
  >"$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 1; }

meson test -C "$build" --print-errorlogs --num-processes 8 >"$out/tests.log" 2>&1
tests_status=$?
cp "$build/meson-logs/testlog.txt" "$out/testlog.txt" 2>/dev/null
grep -E '^(Ok|Fail|Skipped|Timeout|Expected|Unexpected)' "$out/tests.log"
grep -E ' (FAIL|SKIP|TIMEOUT) ' "$out/tests.log"

bench() { # name command...
  local name=$1
  shift
  echo "== $name: $*" >>"$out/bench.log"
  timeout 240 "$@" >>"$out/bench.log" 2>&1 || echo "== $name exited $?" >>"$out/bench.log"
}
bench kernels "$build/tests/bench/lumahist-bench" --csv "$out/kernels.csv"
bench equalize python3 tests/bench/equalize-bench.py "$build/tests/bench/equalize-bench"
bench element bash tests/bench/element-bench.sh "$build"
bench batch python3 tests/bench/batch-bench.py --lumahist "$build/src/tool/lumahist"
exit $tests_status
