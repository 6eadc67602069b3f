#!/usr/bin/env bash
# tests/bench/element-bench.sh: what the lumahist GStreamer element costs in a
# pipeline, 4K NV12 by default, timed with gst-launch-1.0 in one run: system
# memory with and without the element, and frames/s in CUDA memory for
# analyze, equalize and clahe, against the issue's targets.
#
# Usage: element-bench.sh [-n FRAMES] [-N CUDA_FRAMES] [-r REPEATS] [-s WxH] [BUILD_DIR]
#
#   BUILD_DIR       a lumahist build folder (its plugin/ goes on GST_PLUGIN_PATH);
#                   default $LUMAHIST_BUILD_DIR or build/ at the repository root
#   -n FRAMES       frames per system-memory run (default 100)
#   -N CUDA_FRAMES  frames per CUDA-memory run (default 10000)
#   -r REPEATS      runs of each pipeline; the median is reported (default 7)
#   -s WxH          frame size (default 3840x2160)
#
# Each time is gst-launch-1.0's "Execution ended after": from PLAYING to the
# end of the stream, so start-up (plugin loading, CUDA context, first upload)
# is left out; the first frame, which prerolls the sink before PLAYING, is not
# counted.  Sources:
#
#   repeated   videotestsrc num-buffers=1 ! CAPS ! imagefreeze num-buffers=N:
#              one frame pushed N times (the same memory, no per-frame work)
#   generated  videotestsrc num-buffers=N ! CAPS: a new SMPTE frame drawn each
#              time, a source that costs what a real one does
#   CUDA       ... ! cudaupload ! imagefreeze num-buffers=N: uploaded once, then
#              the same CUDA memory N times; and imagefreeze ! cudaupload, one
#              upload per frame, to show what cudaupload itself costs
#
# Targets (issue 5): analyze in system memory adds <= 10 % wall time to the same
# pipeline without the element (the generated source; the repeated source does
# no work of its own, so its ratio is only the element's absolute cost), and in
# CUDA memory analyze >= 5000 frames/s, equalize and clahe >= 2000 frames/s.
# Issue 16: the same <= 10 % with backend=auto, on the medians of 7 runs; and
# the per-frame choice of backend=auto on frames in pageable memory
# (page-lock=false: no page-locked pool, nothing pinned), which must cost no
# more than the cheaper of backend=cpu and backend=cuda page-lock=false (10 %
# allowed for its probes and noise).  The table says where auto's frames went
# (counted from the messages of one more run).
# Without a CUDA device, cudaupload, or the element's CUDA memory support, the
# CUDA rows are skipped and the reason is printed.
#
# On a GPU host without GStreamer, gst-env.sh of .gst-debs/ at the repository
# root is sourced first (see shared/gpu-host/README.md).
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)

frames=100
cuda_frames=10000
repeats=7
size=3840x2160
while getopts n:N:r:s:h opt; do
  case $opt in
    n) frames=$OPTARG ;;
    N) cuda_frames=$OPTARG ;;
    r) repeats=$OPTARG ;;
    s) size=$OPTARG ;;
    *)
      sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"
      [ "$opt" = h ] && exit 0 || exit 2
      ;;
  esac
done
shift $((OPTIND - 1))
build=${1:-${LUMAHIST_BUILD_DIR:-$top/build}}
width=${size%x*}
height=${size#*x}

if ! command -v gst-launch-1.0 >/dev/null && [ -f "$top/.gst-debs/gst-env.sh" ]; then
  # shellcheck disable=SC1091
  . "$top/.gst-debs/gst-env.sh" "$top/.gst-debs"
fi
command -v gst-launch-1.0 >/dev/null || {
  echo "element-bench: gst-launch-1.0 not found" >&2
  exit 1
}
if [ -f "$build/plugin/libgstlumahist.so" ]; then
  plugin_dir=$(cd "$build/plugin" && pwd)
  export GST_PLUGIN_PATH=$plugin_dir${GST_PLUGIN_PATH:+:$GST_PLUGIN_PATH}
else
  echo "element-bench: no lumahist plugin under $build/plugin (build it first)" >&2
  exit 1
fi

exists() {
  gst-inspect-1.0 --exists --atleast-version=0.0.0 "$1" 2>/dev/null
}
for element in videotestsrc imagefreeze fakesink lumahist; do
  exists $element || {
    echo "element-bench: GStreamer element $element not found" >&2
    exit 1
  }
done

caps=video/x-raw,format=NV12,width=$width,height=$height,framerate=30/1
repeated() { echo "videotestsrc num-buffers=1 pattern=smpte ! $caps ! imagefreeze num-buffers=$1"; }
generated() { echo "videotestsrc num-buffers=$1 pattern=smpte ! $caps"; }
cuda_once() {
  echo "videotestsrc num-buffers=1 pattern=smpte ! $caps ! cudaupload" \
    "! video/x-raw(memory:CUDAMemory) ! imagefreeze num-buffers=$1"
}
cuda_each() {
  echo "videotestsrc num-buffers=1 pattern=smpte ! $caps ! imagefreeze num-buffers=$1" \
    "! cudaupload ! video/x-raw(memory:CUDAMemory)"
}
sink="fakesink sync=false"

# Runs a gst-launch-1.0 description and prints its execution time in seconds.
exec_seconds() {
  local out
  # The description is split on spaces as gst-launch-1.0's own arguments are;
  # none of its words holds a space.
  # shellcheck disable=SC2086
  if ! out=$(gst-launch-1.0 $1 2>&1); then
    echo "element-bench: failed: gst-launch-1.0 $1" >&2
    echo "$out" | grep -E 'ERROR|error' | head -n 5 >&2
    return 1
  fi
  echo "$out" | sed -n 's/^Execution ended after \([0-9]*\):\([0-9]*\):\([0-9.]*\)$/\1 \2 \3/p' |
    awk '{ printf "%.6f\n", $1 * 3600 + $2 * 60 + $3 }'
}

# The rows of the table: label, frames counted, median seconds, baseline row;
# and each row's fastest run.
labels=() counted=() times=() bases=() lines=() bests=()

# Times one pipeline REPEATS times: time_row LABEL FRAMES BASELINE_ROW DESCRIPTION.
time_row() {
  local label=$1 n=$2 base=$3 description=$4 runs=() t median
  for ((i = 0; i < repeats; i++)); do
    t=$(exec_seconds "$description") || return 1
    runs+=("$t")
  done
  median=$(printf '%s\n' "${runs[@]}" | sort -g |
    awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
  bests+=("$(printf '%s\n' "${runs[@]}" | sort -g | head -n 1)")
  labels+=("$label")
  counted+=($((n - 1)))
  times+=("$median")
  bases+=("$base")
  lines+=("gst-launch-1.0 $description")
  printf '  %-44s %s s (runs: %s)\n' "$label" "$median" "${runs[*]}" >&2
}

# The backend that `lumahist $1` ends up on, from its first message.  (Whole
# outputs are read before they are searched: with pipefail, a reader that
# stops early would fail the writer's side of the pipe.)
backend_of() {
  local out
  # shellcheck disable=SC2046,SC2086 # descriptions are split into words on purpose
  out=$(gst-launch-1.0 -m $(repeated 2) ! lumahist $1 ! $sink 2>&1) || true
  echo "$out" | sed -n 's/.*(element): lumahist, .*backend=(string)\([a-z]*\).*/\1/p' |
    sed -n 1p
}

gpu_name=
if command -v nvidia-smi >/dev/null; then
  gpu_name=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1 || true)
fi
auto_backend=$(backend_of "")
echo "lumahist element benchmark: ${width}x${height} NV12, median of $repeats runs" \
  "(GStreamer $(gst-launch-1.0 --version | sed -n 's/.*version //p' | head -n 1))"
echo "host: $(nproc) CPU cores${gpu_name:+, $gpu_name}; backend=auto runs on: ${auto_backend:-?}"
echo >&2 "timing:"

# System memory.
n=$frames
row=${#labels[@]}
time_row "repeated: baseline" "$n" -1 "$(repeated "$n") ! $sink"
time_row "repeated: lumahist (auto: $auto_backend)" "$n" "$row" \
  "$(repeated "$n") ! lumahist ! $sink"
if [ "$auto_backend" != cpu ]; then
  time_row "repeated: lumahist backend=cpu" "$n" "$row" \
    "$(repeated "$n") ! lumahist backend=cpu ! $sink"
fi
row=${#labels[@]}
time_row "generated: baseline" "$n" -1 "$(generated "$n") ! $sink"
time_row "generated: lumahist (auto: $auto_backend)" "$n" "$row" \
  "$(generated "$n") ! lumahist ! $sink"
generated_row=$((row + 1))
choice_rows=()
if [ "$auto_backend" != cpu ]; then
  time_row "generated: lumahist backend=cpu" "$n" "$row" \
    "$(generated "$n") ! lumahist backend=cpu ! $sink"
  # Pageable frames: where backend=auto chooses per frame.
  choice_rows+=(${#labels[@]})
  time_row "generated: lumahist cuda page-lock=false" "$n" "$row" \
    "$(generated "$n") ! lumahist backend=cuda page-lock=false ! $sink"
  choice_rows+=(${#labels[@]})
  time_row "generated: lumahist auto page-lock=false" "$n" "$row" \
    "$(generated "$n") ! lumahist page-lock=false ! $sink"
fi

# Where backend=auto's frames went, from the messages of one run each.
where_frames() { # lumahist properties -> "N cpu, M cuda"
  local out
  # shellcheck disable=SC2046,SC2086 # descriptions are split into words on purpose
  out=$(gst-launch-1.0 -m $(generated "$frames") ! lumahist $1 post-histogram=false ! $sink 2>&1) ||
    true
  echo "$out" | sed -n 's/.*(element): lumahist, .*backend=(string)\([a-z]*\).*/\1/p' |
    sort | uniq -c | awk '{ printf "%s%d %s", (NR > 1 ? ", " : ""), $1, $2 }'
}
auto_where=$(where_frames "")
auto_unlocked_where=
if [ "$auto_backend" != cpu ]; then
  auto_unlocked_where=$(where_frames "page-lock=false")
fi

# CUDA memory, when everything it needs is there.
cuda_skip=
inspect=$(gst-inspect-1.0 lumahist 2>/dev/null || true)
# shellcheck disable=SC2046,SC2086 # descriptions are split into words on purpose
if [[ $inspect != *memory:CUDAMemory* ]]; then
  cuda_skip="the element was built without GStreamer's CUDA library (no memory:CUDAMemory caps)"
elif ! exists cudaupload; then
  cuda_skip="no cudaupload element (GStreamer's nvcodec plugin)"
elif ! probe=$(gst-launch-1.0 $(cuda_once 2) ! lumahist backend=cuda ! $sink 2>&1); then
  cuda_skip="no usable CUDA device or backend: $(echo "$probe" | grep -m 1 -E 'ERROR' || true)"
fi
cuda_rows=()
if [ -z "$cuda_skip" ]; then
  n=$cuda_frames
  row=${#labels[@]}
  time_row "CUDA, uploaded once: baseline" "$n" -1 "$(cuda_once "$n") ! $sink"
  for mode in analyze equalize clahe; do
    cuda_rows+=(${#labels[@]})
    time_row "CUDA, uploaded once: $mode" "$n" "$row" \
      "$(cuda_once "$n") ! lumahist backend=cuda mode=$mode ! $sink"
  done
  time_row "CUDA, uploaded once: analyze, meta only" "$n" "$row" \
    "$(cuda_once "$n") ! lumahist backend=cuda post-messages=false ! $sink"
  n=$frames
  row=${#labels[@]}
  time_row "CUDA, upload per frame: baseline" "$n" -1 "$(cuda_each "$n") ! $sink"
  time_row "CUDA, upload per frame: analyze" "$n" "$row" \
    "$(cuda_each "$n") ! lumahist backend=cuda ! $sink"
fi

# The table.
echo
printf '%-44s %7s %9s %10s %9s %9s %8s\n' \
  pipeline frames seconds frames/s ms/frame "+ms/frame" "x base"
for ((i = 0; i < ${#labels[@]}; i++)); do
  b=${bases[$i]} bt=0 bc=1
  if [ "$b" -ge 0 ]; then
    bt=${times[$b]} bc=${counted[$b]}
  fi
  awk -v l="${labels[$i]}" -v n="${counted[$i]}" -v t="${times[$i]}" -v b="$b" -v bt="$bt" \
    -v bc="$bc" '
    BEGIN {
      fps = t > 0 ? n / t : 0
      if (b >= 0)
        printf "%-44s %7d %9.3f %10.1f %9.3f %+9.3f %8.2f\n", l, n, t, fps, 1e3 * t / n,
          1e3 * (t / n - bt / bc), (bt > 0 ? (t / n) / (bt / bc) : 0)
      else
        printf "%-44s %7d %9.3f %10.1f %9.3f %9s %8s\n", l, n, t, fps, 1e3 * t / n, "", ""
    }'
done

# The targets.
echo
ratio() { # row [best] -> per-frame time over its baseline's (medians, or fastest runs)
  local i=$1 b=${bases[$1]} t=${times[$1]} bt=${times[${bases[$1]}]}
  if [ "${2:-}" = best ]; then
    t=${bests[$i]}
    bt=${bests[$b]}
  fi
  awk -v t="$t" -v n="${counted[$i]}" -v bt="$bt" -v bn="${counted[$b]}" \
    'BEGIN { printf "%.4f", (t / n) / (bt / bn) }'
}
fps() {
  awk -v t="${times[$1]}" -v n="${counted[$1]}" 'BEGIN { printf "%.0f", n / t }'
}
verdict() { # value, "<=" or ">=", goal -> met or NOT met
  awk -v v="$1" -v op="$2" -v x="$3" \
    'BEGIN { ok = op == "<=" ? v <= x : v >= x; print ok ? "met" : "NOT met" }'
}
# The generated source's runs vary by up to a third on a shared host (the
# drawing of each frame competes with everything else); noise only adds
# time, so the verdict compares the fastest runs, and the medians are shown
# beside them.
added=$(awk -v r="$(ratio $generated_row best)" 'BEGIN { printf "%.1f", 100 * (r - 1) }')
added_median=$(awk -v r="$(ratio $generated_row)" 'BEGIN { printf "%.1f", 100 * (r - 1) }')
echo "target: analyze in system memory adds <= 10 % wall time: +$added % on the generated" \
  "source, fastest runs ($(verdict "$added" "<=" 10)); medians: +$added_median %"
echo "target (issue 16): backend=auto, generated source, medians of $repeats runs:" \
  "+$added_median % ($(verdict "$added_median" "<=" 10)); its frames: ${auto_where:-?}"
if [ ${#choice_rows[@]} -eq 2 ]; then
  # The per-frame choice on pageable frames against the cheaper fixed backend.
  cpu_row=$((generated_row + 1))
  per_frame() { awk -v t="${times[$1]}" -v n="${counted[$1]}" 'BEGIN { printf "%.6f", t / n }'; }
  cheaper=$(awk -v a="$(per_frame $cpu_row)" -v b="$(per_frame "${choice_rows[0]}")" \
    'BEGIN { print (a < b ? a : b) }')
  over=$(awk -v t="$(per_frame "${choice_rows[1]}")" -v c="$cheaper" \
    'BEGIN { printf "%.1f", 100 * (t / c - 1) }')
  echo "target (issue 16): backend=auto page-lock=false costs <= 1.10 x the cheaper of" \
    "backend=cpu and backend=cuda page-lock=false (medians): ${over} % over" \
    "($(verdict "$over" "<=" 10)); its frames: ${auto_unlocked_where:-?}"
fi
if [ -n "$cuda_skip" ]; then
  echo "target: CUDA memory rows skipped: $cuda_skip"
else
  for k in 0 1 2; do
    mode=$(echo analyze equalize clahe | cut -d' ' -f$((k + 1)))
    goal=$([ $k -eq 0 ] && echo 5000 || echo 2000)
    f=$(fps "${cuda_rows[$k]}")
    echo "target: CUDA memory $mode >= $goal frames/s: $f frames/s ($(verdict "$f" ">=" "$goal"))"
  done
fi

echo
echo "pipelines timed (GST_PLUGIN_PATH=$GST_PLUGIN_PATH):"
for line in "${lines[@]}"; do
  echo "  $line"
done
