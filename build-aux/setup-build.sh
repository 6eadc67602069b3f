#!/usr/bin/env bash
# setup-build.sh BUILD_DIR [meson options...]: configures (once) and builds
# lumahist, with the CUDA backend when nvcc is there (it is optional).
set -euo pipefail
build=$1
shift
for d in /usr/local/cuda/bin /usr/local/cuda-*/bin; do
  if [ -x "$d/nvcc" ]; then
    PATH="$PATH:$d"
    break
  fi
done
export PATH
if [ ! -f "$build/build.ninja" ]; then
  meson setup "$build" "$@"
fi
ninja -C "$build"
