#!/usr/bin/env bash
# tests/gpu-host.sh OUT_DIR [STEP...]: on a GPU host (Ubuntu 24.04, CUDA 13, no
# network), builds lumahist for the local GPU (in $BUILD, default
# /tmp/lumahist-gpu; again only what changed), then runs the steps named, or
# all of them: tests, kernels, frame, formats (formats-bench: each YUV layout
# against NV12 on 4K device frames, as is and with the path before the fused
# wide histograms, LHK_UNFUSED_WIDE=1), equalize, element, batch-stats,
# batch-equalize, batch-jpeg, batch-jpeg-equalize, python (python-bench.py: against OpenCV, and
# what a lumahist.stats call costs beyond the C call on NumPy, CuPy and
# PyTorch arrays), cpu-scaling (the CPU backend's 4K analysis, equalization
# and CLAHE on 1, 2, 4 ... threads and every core).  Logs and CSV files go to OUT_DIR.  All of them take longer
# than one 10-minute device call: split them, e.g. `tests frame` then
# `element batch-stats batch-equalize`.  GStreamer comes from a .gst-debs
# folder beside the checkout when the host has none.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: tests/gpu-host.sh OUT_DIR [STEP...]}
shift
steps=" ${*:-tests kernels frame formats equalize element batch-stats batch-equalize batch-jpeg batch-jpeg-equalize python cpu-scaling} "
mkdir -p "$out"
cd "$top"
if ! command -v gst-launch-1.0 >/dev/null && [ -f .gst-debs/gst-env.sh ]; then
  . .gst-debs/gst-env.sh .gst-debs
fi
build=${BUILD:-/tmp/lumahist-gpu}
arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -n1 | tr -d .)
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,memory.total --format=csv >"$out/gpu.txt"

if [ ! -f "$build/build.ninja" ]; then
  meson setup "$build" -Dcuda=enabled -Dgpu_arch="${arch:-90}" >"$out/build.log" 2>&1 ||
    { tail -40 "$out/build.log"; exit 1; }
fi
ninja -C "$build" >>"$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 1; }

tests_status=0
if [[ $steps == *" tests "* ]]; then
  meson test -C "$build" --print-errorlogs --num-processes 8 >"$out/tests.log" 2>&1
  tests_status=$?
  cp "$build/meson-logs/testlog.txt" "$out/testlog.txt" 2>/dev/null
  grep -E '^(Ok|Fail|Skipped|Timeout|Expected|Unexpected)' "$out/tests.log"
  grep -E ' (FAIL|SKIP|TIMEOUT) ' "$out/tests.log"
fi

bench() { # name seconds command...
  local name=$1 seconds=$2
  shift 2
  [[ $steps == *" $name "* ]] || return 0
  echo "== $name: $*" >>"$out/bench.log"
  timeout "$seconds" "$@" >>"$out/bench.log" 2>&1 || echo "== $name exited $?" >>"$out/bench.log"
}
bench kernels 240 "$build/tests/bench/lumahist-bench" --csv "$out/kernels.csv"
bench frame 120 "$build/tests/bench/lumahist-bench" --only frame --gray8-variants --runs 100
bench formats 120 "$build/tests/bench/formats-bench" --backend cuda --size 3840x2160 --runs 101
bench formats 120 env LHK_UNFUSED_WIDE=1 "$build/tests/bench/formats-bench" --backend cuda \
  --size 3840x2160 --runs 101
bench equalize 120 python3 tests/bench/equalize-bench.py "$build/tests/bench/equalize-bench"
# Seven runs: the generated source's medians swing by a third on a shared host.
bench element 300 bash tests/bench/element-bench.sh -r 7 -n 150 -N 2000 "$build"
# Scaling is a throughput: 2000 files, so that start-up weighs little.
bench batch-stats 240 python3 tests/bench/batch-bench.py --lumahist "$build/src/tool/lumahist" \
  --count 200 --repeat 10 --only stats
bench batch-equalize 240 python3 tests/bench/batch-bench.py --lumahist "$build/src/tool/lumahist" \
  --count 200 --repeat 3 --only equalize
bench batch-jpeg 300 python3 tests/bench/batch-bench.py --lumahist "$build/src/tool/lumahist" \
  --count 200 --repeat 10 --jpeg-only --only stats
# equalize of JPEGs decoded, equalized and encoded on the GPU (--decoder gpu)
# and on the CPU (--decoder cpu), against OpenCV's in N processes.
bench batch-jpeg-equalize 420 python3 tests/bench/batch-bench.py --lumahist "$build/src/tool/lumahist" \
  --count 200 --repeat 3 --jpeg-only --only equalize
bench python 120 env PYTHONPATH="$build/python" python3 tests/bench/python-bench.py
bench cpu-scaling 240 "$build/tests/bench/cpu-threads-bench" --scaling --runs 51
tail -n 40 "$out/bench.log" 2>/dev/null
exit $tests_status
