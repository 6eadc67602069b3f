#!/usr/bin/env bash
# samples/pipelines/overlay-snapshot.sh: lumahist draws the luma histogram of a
# picture on it (overlay=true), and the result is saved as a PNG snapshot.
#
# Usage: overlay-snapshot.sh [-m sys|cuda] [-p PROP=VALUE]... [BUILD_DIR [INPUT [OUTPUT]]]
#
#   BUILD_DIR  a lumahist build folder (its plugin/ is put on GST_PLUGIN_PATH);
#              default $LUMAHIST_BUILD_DIR or build/ at the repository root
#   INPUT      a picture or a video (anything decodebin reads); the first frame
#              is taken.  Default: samples/fog-lake-low-contrast.jpg
#   OUTPUT     the PNG written; default lumahist-overlay.png in the current folder
#   -m cuda    draw in CUDA memory: ... ! cudaupload ! lumahist ! cudadownload ! ...
#   -p         another lumahist property, e.g. -p overlay-scale=linear,
#              -p overlay-opacity=1, -p mode=equalize, -p overlay=false
#
# The panel goes at the bottom left, a third of the width and a quarter of the
# height (overlay-x, -y, -width, -height move it): bars of the histogram (log
# counts), a green line at the median, amber lines at the percentiles, and
# blue / red bands at the ends when pixels clip.  The pipeline is
#
#   gst-launch-1.0 filesrc location=INPUT ! decodebin ! videoconvert \
#       ! lumahist overlay=true percentiles=5,95 post-messages=false \
#       ! videoconvert ! pngenc snapshot=true ! filesink location=lumahist-overlay.png
#
# For every frame of a video, put jpegenc ! multifilesink location=frame-%05d.jpg
# in place of pngenc and filesink.
set -euo pipefail
# shellcheck source=samples/pipelines/common.sh
. "$(dirname "$0")/common.sh"

memory=sys
props=()
while getopts m:p:h opt; do
  case $opt in
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
input=${2:-$lh_top/samples/fog-lake-low-contrast.jpg}
output=${3:-lumahist-overlay.png}
[ -r "$input" ] || lh_die "cannot read $input"

case $memory in
  sys) upload=() download=() ;;
  cuda)
    lh_require cudaupload cudadownload
    # cudaupload takes the formats lumahist shares with it; NV12 is one.
    upload=('video/x-raw,format=NV12' ! cudaupload ! 'video/x-raw(memory:CUDAMemory)' !)
    download=(! cudadownload)
    ;;
  *) lh_die "-m takes sys or cuda, not $memory" ;;
esac
lh_require filesrc decodebin videoconvert lumahist pngenc filesink

lh_launch -q filesrc location="$input" ! decodebin ! videoconvert ! "${upload[@]}" \
  lumahist overlay=true percentiles=5,95 post-messages=false "${props[@]}" "${download[@]}" \
  ! videoconvert ! pngenc snapshot=true ! filesink location="$output"
[ -s "$output" ] || lh_die "$output was not written"
echo "wrote $output ($(wc -c <"$output") bytes)"
