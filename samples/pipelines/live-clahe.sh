#!/usr/bin/env bash
# samples/pipelines/live-clahe.sh: a live source, contrast-limited adaptive
# equalization (CLAHE) by lumahist, smoothed over 8 frames, encoded to a file.
#
# Usage: live-clahe.sh [-n FRAMES] [-e auto|x264|vp8|jpeg] [-m sys|cuda] [-p PROP=VALUE]...
#                      [BUILD_DIR [OUTPUT]]
#
#   BUILD_DIR  a lumahist build folder (its plugin/ is put on GST_PLUGIN_PATH);
#              default $LUMAHIST_BUILD_DIR or build/ at the repository root
#   OUTPUT     the file written; default lumahist-clahe.mp4, .webm or .mkv
#              in the current folder, after the encoder
#   -n FRAMES  frames to record, at 30 frames/s in real time (default 90: 3 s)
#   -e         the encoder: x264enc ! mp4mux, vp8enc ! webmmux, or Motion-JPEG
#              (jpegenc ! matroskamux, which every GStreamer has); auto takes
#              the first of these that is installed
#   -m cuda    equalize in CUDA memory: ... ! cudaupload ! lumahist ! cudadownload ! ...
#   -p         another lumahist property, e.g. -p clip-limit=2 -p overlay=true,
#              or -p mode=analyze for the same video without equalization
#
# The source is videotestsrc is-live=true: a moving zone plate that
# videobalance makes dim and flat (luma 3 to 69 of 255), a low-contrast scene
# that CLAHE opens up.  A camera goes in its place the same way, e.g.
# v4l2src ! videoconvert.  The pipeline is
#
#   gst-launch-1.0 -e videotestsrc is-live=true pattern=zone-plate kx2=20 ky2=20 kt=1 \
#       ! video/x-raw,format=I420,width=640,height=360,framerate=30/1 \
#       ! videobalance contrast=0.3 brightness=-0.05 \
#       ! lumahist mode=clahe clip-limit=4 temporal-window=8 post-messages=false \
#       ! videoconvert ! x264enc ! mp4mux ! filesink location=lumahist-clahe.mp4
set -euo pipefail
# shellcheck source=samples/pipelines/common.sh
. "$(dirname "$0")/common.sh"

frames=90
encoder=auto
memory=sys
props=()
while getopts n:e:m:p:h opt; do
  case $opt in
    n) frames=$OPTARG ;;
    e) encoder=$OPTARG ;;
    m) memory=$OPTARG ;;
    p) props+=("$OPTARG") ;;
    *)
      lh_usage
      [ "$opt" = h ] && exit 0 || exit 2
      ;;
  esac
done
shift $((OPTIND - 1))
lh_use_build "${1:-}"
output=${2:-}

if [ "$encoder" = auto ]; then
  if lh_have x264enc mp4mux; then
    encoder=x264
  elif lh_have vp8enc webmmux; then
    encoder=vp8
  else
    encoder=jpeg
  fi
fi
case $encoder in
  x264) encode=(x264enc speed-preset=veryfast ! mp4mux) ext=mp4 ;;
  vp8) encode=(vp8enc deadline=1 ! webmmux) ext=webm ;;
  jpeg) encode=(jpegenc quality=90 ! matroskamux) ext=mkv ;;
  *) lh_die "-e takes auto, x264, vp8 or jpeg, not $encoder" ;;
esac
output=${output:-lumahist-clahe.$ext}

case $memory in
  sys) upload=() download=() ;;
  cuda)
    lh_require cudaupload cudadownload
    upload=(cudaupload ! 'video/x-raw(memory:CUDAMemory)' !)
    download=(! cudadownload)
    ;;
  *) lh_die "-m takes sys or cuda, not $memory" ;;
esac
lh_require videotestsrc videobalance lumahist videoconvert filesink "${encode[0]}" "${encode[-1]}"

# -e: an end-of-stream on Ctrl-C, so that the muxer finishes the file.
lh_launch -e -q videotestsrc is-live=true num-buffers="$frames" pattern=zone-plate kx2=20 ky2=20 \
  kt=1 ! video/x-raw,format=I420,width=640,height=360,framerate=30/1 \
  ! videobalance contrast=0.3 brightness=-0.05 \
  ! "${upload[@]}" lumahist mode=clahe clip-limit=4 temporal-window=8 post-messages=false \
  "${props[@]}" "${download[@]}" ! videoconvert ! "${encode[@]}" ! filesink location="$output"
[ -s "$output" ] || lh_die "$output was not written"
echo "wrote $output ($(wc -c <"$output") bytes, $frames frames, $encoder)"
