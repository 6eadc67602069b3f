#!/usr/bin/env bash
# video-bench.sh LUMAHIST [RUNS] [FRAMES]: `lumahist stats` on a 1080p H.264
# file against `ffmpeg -vf signalstats -f null -`, which decodes the same
# frames with the same libavcodec decoder and computes the same per-frame
# luma figures (and more); the median wall time of RUNS runs each, taken in
# turns, and the ratio.
# Then `lumahist equalize` of the first EQ_FRAMES frames (default 90) against
# the same decode + encode without lumahist: gst-launch-1.0 with the elements
# lumahist picks (parsebin, avdec_h264, videoconvert, x264enc pass=qual
# quantizer=18 bframes=0, h264parse, mp4mux), the median of RUNS runs each in turns, and
# the time lumahist adds, in percent (target: at most 10 %).
# Needs ffmpeg and GStreamer's x264enc (build-aux/install-deps.sh).
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

# --------------------------------------------------------------------------
# equalize of a video against the same decode + encode without it
eq_frames=${EQ_FRAMES:-90}
eq_clip=$tmp/eq-1080p.mp4
ffmpeg -v error -i "$clip" -frames:v "$eq_frames" -c copy "$eq_clip"
gst-inspect-1.0 x264enc >/dev/null 2>&1 || { echo "equalize: SKIP: no x264enc"; exit 0; }
transcode() {
  gst-launch-1.0 -q filesrc location="$eq_clip" ! parsebin ! avdec_h264 ! videoconvert ! \
    x264enc pass=qual quantizer=18 bframes=0 ! h264parse ! mp4mux ! filesink location="$tmp/gst.mp4"
}
equalize() {
  rm -f "$tmp/out/eq-1080p.mp4"
  "$lumahist" equalize -o "$tmp/out" "$eq_clip"
}
equalize # and check that it works before timing it
encoder=$("$lumahist" equalize -v -o "$tmp/out-v" "$eq_clip" 2>&1 | sed -n 's/.*frames: \(.*\)$/\1/p')
ours=() theirs=()
for ((i = 0; i < runs; i++)); do
  ours+=("$(seconds equalize)")
  theirs+=("$(seconds transcode)")
done
m_ours=$(printf '%s\n' "${ours[@]}" | median)
m_theirs=$(printf '%s\n' "${theirs[@]}" | median)
printf 'equalize: 1920x1080 H.264, %d frames (%s); %d runs each, median\n' "$eq_frames" \
  "$encoder" "$runs"
printf 'lumahist equalize:             %.3f s  (%.1f frames/s)\n' "$m_ours" \
  "$(echo "$eq_frames / $m_ours" | bc -l)"
printf 'gst-launch decode + encode:    %.3f s  (%.1f frames/s)\n' "$m_theirs" \
  "$(echo "$eq_frames / $m_theirs" | bc -l)"
printf 'added by lumahist:             %+.1f %%\n' "$(echo "($m_ours / $m_theirs - 1) * 100" | bc -l)"
