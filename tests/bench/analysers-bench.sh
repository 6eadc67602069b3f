#!/usr/bin/env bash
# tests/bench/analysers-bench.sh: what analysing one 4K I420 frame (8-bit 4:2:0; videoanalyse takes no NV12) costs on
# the CPU, lumahist's element (backend=cpu, every core) against GStreamer's
# videoanalyse and FFmpeg's signalstats, as users run them, on the same
# machine in one run.  Issue 16's targets: >= 3x videoanalyse, >= 10x
# signalstats, per frame.
#
# Usage: analysers-bench.sh [-n FRAMES] [-r REPEATS] [-s WxH] [BUILD_DIR]
#
# GStreamer: one frame pushed FRAMES times by imagefreeze (the source costs
# nothing), with and without each element; the per-frame cost is the
# difference of gst-launch-1.0's "Execution ended after" over the frames.
# FFmpeg: its testsrc2 source converted to yuv420p, with and without
# signalstats (slice threads on every core, FFmpeg's default); the
# difference of wall times over the frames.  Medians of REPEATS runs.
# A missing element or ffmpeg leaves its row out and says so.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
frames=200
repeats=5
size=3840x2160
while getopts n:r:s:h opt; do
  case $opt in
    n) frames=$OPTARG ;;
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
if ! command -v gst-launch-1.0 >/dev/null && [ -f "$top/.gst-debs/gst-env.sh" ]; then
  # shellcheck disable=SC1091
  . "$top/.gst-debs/gst-env.sh" "$top/.gst-debs"
fi
plugin_dir=$(cd "$build/plugin" && pwd)
export GST_PLUGIN_PATH=$plugin_dir${GST_PLUGIN_PATH:+:$GST_PLUGIN_PATH}
exists() { gst-inspect-1.0 --exists --atleast-version=0.0.0 "$1" 2>/dev/null; }
exists lumahist || {
  echo "analysers-bench: no lumahist element under $plugin_dir" >&2
  exit 1
}

median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
gst_seconds() {
  local out
  # shellcheck disable=SC2086 # the description is gst-launch-1.0's words
  out=$(gst-launch-1.0 $1 2>&1) || {
    echo "analysers-bench: failed: gst-launch-1.0 $1" >&2
    return 1
  }
  echo "$out" | sed -n 's/^Execution ended after \([0-9]*\):\([0-9]*\):\([0-9.]*\)$/\1 \2 \3/p' |
    awk '{ printf "%.6f\n", $1 * 3600 + $2 * 60 + $3 }'
}
wall_seconds() {
  local start end
  start=$(date +%s.%N)
  "$@" >/dev/null 2>&1 || return 1
  end=$(date +%s.%N)
  awk -v a="$start" -v b="$end" 'BEGIN { printf "%.6f\n", b - a }'
}

source="videotestsrc num-buffers=1 pattern=smpte ! video/x-raw,format=I420,width=${size%x*},height=${size#*x},framerate=30/1 ! imagefreeze num-buffers=$frames"
declare -A rows
names=(baseline lumahist)
rows[baseline]="$source ! fakesink sync=false"
rows[lumahist]="$source ! lumahist backend=cpu ! fakesink sync=false"
if exists videoanalyse; then
  names+=(videoanalyse)
  rows[videoanalyse]="$source ! videoanalyse ! fakesink sync=false"
else
  echo "(no videoanalyse here: gst-plugins-bad's videosignal plugin is missing)"
fi
declare -A runs
for ((r = 0; r < repeats; r++)); do
  for name in "${names[@]}"; do
    runs[$name]+="$(gst_seconds "${rows[$name]}") "
  done
done
declare -A per_frame
base=$(printf '%s\n' ${runs[baseline]} | median)
echo "4K analysis on the CPU, $(nproc) cores, $frames frames, median of $repeats runs"
for name in "${names[@]}"; do
  t=$(printf '%s\n' ${runs[$name]} | median)
  per_frame[$name]=$(awk -v t="$t" -v b="$base" -v n="$frames" 'BEGIN { printf "%.4f", (t - b) * 1000 / n }')
  printf '  %-34s %8.3f s   %8s ms a frame   (runs: %s)\n' "gst: $name" "$t" "${per_frame[$name]}" "${runs[$name]}"
done

if command -v ffmpeg >/dev/null; then
  ff() { ffmpeg -v error -nostdin -f lavfi -i "testsrc2=size=$size:rate=30" -frames:v "$frames" -vf "$1" -f null -; }
  ff_runs_base= ff_runs_stats=
  for ((r = 0; r < repeats; r++)); do
    ff_runs_base+="$(wall_seconds ff format=yuv420p) "
    ff_runs_stats+="$(wall_seconds ff format=yuv420p,signalstats) "
  done
  fb=$(printf '%s\n' $ff_runs_base | median)
  fs=$(printf '%s\n' $ff_runs_stats | median)
  per_frame[signalstats]=$(awk -v t="$fs" -v b="$fb" -v n="$frames" 'BEGIN { printf "%.4f", (t - b) * 1000 / n }')
  printf '  %-34s %8.3f s   %8s ms a frame   (runs: %s; without signalstats: %s)\n' "ffmpeg: signalstats" "$fs" "${per_frame[signalstats]}" "$ff_runs_stats" "$ff_runs_base"
else
  echo "(no ffmpeg here: the signalstats row is left out)"
fi

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0) ? a / b : 0 }'; }
if [ -n "${per_frame[videoanalyse]:-}" ]; then
  x=$(ratio "${per_frame[videoanalyse]}" "${per_frame[lumahist]}")
  echo "target (issue 16): lumahist >= 3x videoanalyse per frame: ${x}x ($(awk -v x="$x" 'BEGIN { print (x >= 3) ? "met" : "NOT met" }'))"
fi
if [ -n "${per_frame[signalstats]:-}" ]; then
  x=$(ratio "${per_frame[signalstats]}" "${per_frame[lumahist]}")
  echo "target (issue 16): lumahist >= 10x signalstats per frame: ${x}x ($(awk -v x="$x" 'BEGIN { print (x >= 10) ? "met" : "NOT met" }'))"
fi
