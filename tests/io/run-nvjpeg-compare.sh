#!/bin/sh
# run-nvjpeg-compare.sh: the gpu-jpeg-decode test: nvjpeg-compare over the
# JPEG variants that make-jpeg-variants.py writes into a temporary folder,
# removed afterwards.  Skips (77) before making anything when no CUDA device
# or no nvJPEG is usable, or when PYTHON lacks OpenCV or numpy.
#
#   run-nvjpeg-compare.sh NVJPEG_COMPARE PYTHON MAKE_VARIANTS SAMPLES CORPUS [OPTIONS...]
#
# OPTIONS go to nvjpeg-compare (--max-diff N, --batch N,N..., --verbose).
set -u
if [ $# -lt 5 ]; then
  echo "usage: $0 NVJPEG_COMPARE PYTHON MAKE_VARIANTS SAMPLES CORPUS [OPTIONS...]" >&2
  exit 2
fi
compare=$1 python=$2 make_variants=$3 samples=$4 corpus=$5
shift 5

"$compare" --check || exit $?
if ! "$python" -c 'import cv2, numpy' 2>/dev/null; then
  echo "SKIP: $python cannot import cv2 and numpy, which make the JPEG variants"
  exit 77
fi

dir=$(mktemp -d "${TMPDIR:-/tmp}/lumahist-nvjpeg-XXXXXX") || exit 99
trap 'rm -rf "$dir"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

"$python" "$make_variants" --samples "$samples" --corpus "$corpus" "$dir"
status=$?
if [ $status -ne 0 ]; then
  echo "make-jpeg-variants.py exited with $status"
  [ $status -eq 77 ] && exit 77
  exit 1
fi
"$compare" --expect-routes "$@" "$dir"
