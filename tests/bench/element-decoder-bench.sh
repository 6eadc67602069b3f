#!/usr/bin/env bash
# tests/bench/element-decoder-bench.sh: the lumahist element behind a real
# decoder, as a user's pipeline has it: an H.264 file decoded by nvh264dec
# into system memory (video/x-raw), with and without `lumahist`, for each
# backend; and into CUDA memory.  Issue 16's target: backend=cpu analysis
# keeps >= 95 % of the decoder's frame rate.
#
# Usage: element-decoder-bench.sh [-r REPEATS] CLIP [BUILD_DIR]
#
#   CLIP       an H.264 MP4 (the GPU hosts have no encoder: make it where
#              there is one and carry it; see video-gpu-bench.sh)
#   BUILD_DIR  a lumahist build folder (its plugin/ goes on GST_PLUGIN_PATH);
#              default $LUMAHIST_BUILD_DIR or build/
#   -r         runs of each pipeline, in turns; the median is reported (5)
#
# Each time is gst-launch-1.0's "Execution ended after" (PLAYING to EOS):
# start-up is left out, the decoder's work and the element's are in.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
repeats=5
while getopts r:h opt; do
  case $opt in
    r) repeats=$OPTARG ;;
    *)
      sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"
      [ "$opt" = h ] && exit 0 || exit 2
      ;;
  esac
done
shift $((OPTIND - 1))
clip=${1:?usage: element-decoder-bench.sh [-r REPEATS] CLIP [BUILD_DIR]}
build=${2:-${LUMAHIST_BUILD_DIR:-$top/build}}
if ! command -v gst-launch-1.0 >/dev/null && [ -f "$top/.gst-debs/gst-env.sh" ]; then
  # shellcheck disable=SC1091
  . "$top/.gst-debs/gst-env.sh" "$top/.gst-debs"
fi
export GST_PLUGIN_PATH=$(cd "$build/plugin" && pwd)${GST_PLUGIN_PATH:+:$GST_PLUGIN_PATH}
for element in nvh264dec qtdemux h264parse lumahist; do
  gst-inspect-1.0 --exists --atleast-version=0.0.0 "$element" 2>/dev/null || {
    echo "SKIP: GStreamer element $element not found"
    exit 77
  }
done

decode="filesrc location=$clip ! qtdemux ! h264parse ! nvh264dec"
rows=(
  "system memory: decoder alone|$decode ! video/x-raw ! fakesink sync=false"
  "system memory: lumahist backend=cpu|$decode ! video/x-raw ! lumahist backend=cpu ! fakesink sync=false"
  "system memory: lumahist backend=auto|$decode ! video/x-raw ! lumahist ! fakesink sync=false"
  "system memory: lumahist backend=cuda|$decode ! video/x-raw ! lumahist backend=cuda ! fakesink sync=false"
  "system memory: lumahist backend=cpu mode=equalize|$decode ! video/x-raw ! lumahist backend=cpu mode=equalize ! fakesink sync=false"
  "CUDA memory: decoder alone|$decode ! video/x-raw(memory:CUDAMemory) ! fakesink sync=false"
  "CUDA memory: lumahist|$decode ! video/x-raw(memory:CUDAMemory) ! lumahist ! fakesink sync=false"
  "CUDA memory: lumahist mode=equalize|$decode ! video/x-raw(memory:CUDAMemory) ! lumahist mode=equalize ! fakesink sync=false"
)

exec_seconds() {
  local out
  # shellcheck disable=SC2086 # the description is gst-launch-1.0's words
  out=$(gst-launch-1.0 $1 2>&1) || {
    echo "element-decoder-bench: failed: gst-launch-1.0 $1" >&2
    echo "$out" | grep -iE 'error' | head -n 3 >&2
    return 1
  }
  echo "$out" | sed -n 's/^Execution ended after \([0-9]*\):\([0-9]*\):\([0-9.]*\)$/\1 \2 \3/p' |
    awk '{ printf "%.6f\n", $1 * 3600 + $2 * 60 + $3 }'
}

declare -A runs
for ((r = 0; r < repeats; r++)); do
  for row in "${rows[@]}"; do
    t=$(exec_seconds "${row#*|}") || exit 1
    runs[${row%%|*}]+="$t "
  done
done
echo "element behind nvh264dec: $clip, median of $repeats runs in turns (GStreamer $(gst-launch-1.0 --version | sed -n 's/.*version //p' | head -n 1)); $(nproc) CPU cores"
printf '%-50s %10s %8s\n' pipeline seconds "x rate"
base=
for row in "${rows[@]}"; do
  label=${row%%|*}
  median=$(printf '%s\n' ${runs[$label]} | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
  case $label in *"decoder alone") base=$median ;; esac
  printf '%-50s %10.3f %8.3f\n' "$label" "$median" "$(awk -v b="$base" -v t="$median" 'BEGIN { print b / t }')"
  [ "$label" = "system memory: lumahist backend=cpu" ] && cpu_ratio=$(awk -v b="$base" -v t="$median" 'BEGIN { print b / t }')
done
echo "x rate: the frame rate against the decoder alone into the same memory (runs: seconds of each)"
for row in "${rows[@]}"; do echo "  ${row%%|*}: ${runs[${row%%|*}]}"; done
awk -v r="$cpu_ratio" 'BEGIN { printf "target (issue 16): backend=cpu analysis >= 0.95 x the decoder rate: %.3f (%s)\n", r, (r >= 0.95 ? "met" : "NOT met") }'
