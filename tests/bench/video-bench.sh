#!/usr/bin/env bash
# video-bench.sh LUMAHIST [RUNS] [FRAMES]: `lumahist stats` on a 1080p H.264
# file against `ffmpeg -vf signalstats -f null -`, which decodes the same
# frames with the same libavcodec decoder and computes the same per-frame
# luma figures (and more); the median wall time of RUNS runs each, taken in
# turns, and the ratio.  Needs ffmpeg (build-aux/install-deps.sh).
set -euo pipefail
lumahist=$1
runs=${2:-7}
frames=${3:-300}
command -v ffmpeg >/dev/null || { echo "SKIP: needs ffmpeg"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
clip=$tmp/clip-1080p.mp4
ffmpeg -v error -f lavfi -i "testsrc2=size=1920x1080:rate=30" -frames:v "$frames" \
  -c:v libx264 -preset veryfast -g 60 -pix_fmt yuv420p "$clip"

seconds() { # the wall time of a command, in seconds
  local start end
  start=$(date +%s.%N)
  "$@" >/dev/null 2>&1
  end=$(date +%s.%N)
  echo "$end - $start" | bc -l
}
median() { sort -g | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }

ours=() theirs=()
for ((i = 0; i < runs; i++)); do
  ours+=("$(seconds "$lumahist" stats --no-histogram -o /dev/null "$clip")")
  theirs+=("$(seconds ffmpeg -v error -i "$clip" -vf signalstats -f null -)")
done
m_ours=$(printf '%s\n' "${ours[@]}" | median)
m_theirs=$(printf '%s\n' "${theirs[@]}" | median)
printf 'clip: 1920x1080 H.264, %d frames; %d runs each, median; %d cores\n' "$frames" "$runs" "$(nproc)"
printf 'lumahist stats:                %.3f s  (%.1f frames/s)\n' "$m_ours" "$(echo "$frames / $m_ours" | bc -l)"
printf 'ffmpeg -vf signalstats:        %.3f s  (%.1f frames/s)\n' "$m_theirs" "$(echo "$frames / $m_theirs" | bc -l)"
printf 'ratio (ffmpeg / lumahist):     %.2f x\n' "$(echo "$m_theirs / $m_ours" | bc -l)"
