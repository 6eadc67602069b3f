#!/usr/bin/env bash
# samples/pipelines/analyze-file.sh: a video file decoded, analysed by lumahist
# and its `lumahist` element messages printed, one line per frame.
#
# Usage: analyze-file.sh [-n FRAMES] [-m sys|cuda|nvdec] [-r] [BUILD_DIR [VIDEO]]
#
#   BUILD_DIR  a lumahist build folder (its plugin/ is put on GST_PLUGIN_PATH);
#              default $LUMAHIST_BUILD_DIR or build/ at the repository root
#   VIDEO      the file to analyse; without one, a small Motion-JPEG video (.mkv,
#              640x360, 10 frames/s) is made first from the photographs in
#              samples/, each held for 5 frames, FRAMES frames in all (default 35)
#   -m sys     (default) decoded in system memory: decodebin ! videoconvert ! lumahist
#   -m cuda    uploaded to the GPU first: ... ! 'video/x-raw,format=NV12' ! cudaupload !
#              lumahist, which then reads the frames in place in CUDA memory
#   -m nvdec   an H.264 VIDEO decoded by NVDEC straight into CUDA memory:
#              parsebin ! nvh264dec ! lumahist (zero copy; VIDEO is required)
#   -r         print the messages as gst-launch-1.0 -m prints them, not the table
#
# The pipeline it runs (system memory) is
#
#   gst-launch-1.0 -m filesrc location=VIDEO ! decodebin ! videoconvert ! \
#       lumahist percentiles=1,50,99 post-histogram=false ! fakesink
#
# and on a GPU host, for an H.264 file, the zero-copy form is
#
#   gst-launch-1.0 -m filesrc location=movie.mp4 ! parsebin ! nvh264dec ! \
#       lumahist percentiles=1,50,99 post-histogram=false ! fakesink
#
# (with the histogram too, drop post-histogram=false: 256 counts per message).
set -euo pipefail
# shellcheck source=samples/pipelines/common.sh
. "$(dirname "$0")/common.sh"

frames=35
memory=sys
raw=0
while getopts n:m:rh opt; do
  case $opt in
    n) frames=$OPTARG ;;
    m) memory=$OPTARG ;;
    r) raw=1 ;;
    *)
      lh_usage
      [ "$opt" = h ] && exit 0 || exit 2
      ;;
  esac
done
shift $((OPTIND - 1))
lh_use_build "${1:-}"
video=${2:-}

work=$(mktemp -d "${TMPDIR:-/tmp}/lumahist-analyze.XXXXXX")
trap 'rm -rf "$work"' EXIT

if [ -z "$video" ]; then
  [ "$memory" != nvdec ] || lh_die "-m nvdec needs an H.264 VIDEO"
  lh_require filesrc decodebin videoconvert videoscale jpegenc imagesequencesrc matroskamux
  # Each photograph (PNG or JPEG) is brought to one size and format, as JPEG;
  # frame f of the video is then still number f / 5 (in a loop), through a
  # link named photo-f.jpg that imagesequencesrc reads.  A photograph that
  # GStreamer cannot decode is left out: Debian 12's jpegdec fails on
  # fog-pier-gray.jpg, a one-component JPEG with 2x2 sampling factors.
  stills=()
  for photo in "$lh_top"/samples/*.jpg "$lh_top"/samples/*.png; do
    still=$work/still-${#stills[@]}.jpg
    gst-launch-1.0 -q filesrc location="$photo" ! decodebin ! videoconvert ! videoscale \
      ! video/x-raw,format=I420,width=640,height=360,pixel-aspect-ratio=1/1 \
      ! jpegenc quality=90 ! filesink location="$still" >/dev/null 2>&1 || true
    if [ -s "$still" ]; then
      stills+=("$still")
    else
      echo "# left out $(basename "$photo"): GStreamer could not decode it" >&2
    fi
  done
  [ ${#stills[@]} -gt 0 ] || lh_die "no photograph in $lh_top/samples could be decoded"
  for ((f = 0; f < frames; f++)); do
    ln -s "${stills[$((f / 5 % ${#stills[@]}))]}" "$work/photo-$f.jpg"
  done
  video=$work/photos.mkv
  echo "# making $video: $frames frames from ${#stills[@]} photographs in samples/" >&2
  lh_launch -q imagesequencesrc location="$work/photo-%d.jpg" start-index=0 \
    stop-index=$((frames - 1)) framerate=10/1 ! matroskamux ! filesink location="$video" >/dev/null
fi
[ -r "$video" ] || lh_die "cannot read $video"

case $memory in
  sys)
    lh_require decodebin videoconvert lumahist
    decode=(decodebin ! videoconvert)
    ;;
  cuda)
    lh_require decodebin videoconvert cudaupload lumahist
    decode=(decodebin ! videoconvert ! 'video/x-raw,format=NV12' ! cudaupload
      ! 'video/x-raw(memory:CUDAMemory)')
    ;;
  nvdec)
    lh_require parsebin nvh264dec lumahist
    decode=(parsebin ! nvh264dec ! 'video/x-raw(memory:CUDAMemory)')
    ;;
  *) lh_die "-m takes sys, cuda or nvdec, not $memory" ;;
esac

log=$work/messages.txt
status=0
lh_launch -m filesrc location="$video" ! "${decode[@]}" \
  ! lumahist name=lumahist percentiles=1,50,99 post-histogram=false ! fakesink >"$log" 2>&1 ||
  status=$?
if [ $status -ne 0 ]; then
  cat "$log" >&2
  lh_die "the pipeline failed (exit status $status)"
fi
grep -E '^(WARNING|ERROR)' "$log" >&2 || true

if [ $raw -eq 1 ]; then
  grep -F '(element): lumahist,' "$log"
  exit 0
fi
# One line per message: the fields are "name=(type)value" and the arrays
# "name=(type)< a, b, c >".
awk '
  function field(name,   rest) {
    if (!match($0, "[ ,]" name "=\\([a-z0-9]+\\)")) return "?"
    rest = substr($0, RSTART + RLENGTH)
    if (substr(rest, 1, 1) == "<") { sub(/ >.*/, "", rest); sub(/^< /, "", rest); return rest }
    sub(/[,;].*/, "", rest)
    return rest
  }
  function clock(ns,   s) {
    if (ns == "18446744073709551615") return "none"
    s = ns / 1e9
    return sprintf("%d:%02d:%06.3f", s / 3600, (s % 3600) / 60, s - 60 * int(s / 60))
  }
  /\(element\): lumahist,/ {
    if (!header++)
      printf "%5s  %-12s %-7s %9s  %-6s %8s %8s %5s %6s %5s  %s\n", "frame", "time", "backend",
        "size", "format", "mean", "stddev", "min", "median", "max", "P1, P50, P99"
    printf "%5s  %-12s %-7s %9s  %-6s %8.2f %8.2f %5s %6s %5s  %s\n", field("frame"),
      clock(field("timestamp")), field("backend"), field("width") "x" field("height"),
      field("format"), field("mean"), field("stddev"), field("min"), field("median"),
      field("max"), field("percentile-values")
  }
  END { if (!header) { print "no lumahist messages" > "/dev/stderr"; exit 1 } }
' "$log"
