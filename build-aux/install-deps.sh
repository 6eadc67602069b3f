#!/usr/bin/env bash
# install-deps.sh: installs the Debian/Ubuntu packages lumahist builds and tests
# with, asking apt only for those that are missing (Debian 12, Ubuntu 24.04).
set -euo pipefail

packages=(
  gcc g++ meson ninja-build pkg-config
  libpng-dev libjpeg-dev libglib2.0-dev zlib1g-dev
  # the PNG fast path (src/io/png-fast.c); without it libpng reads every PNG
  libdeflate-dev
  libgstreamer1.0-dev libgstreamer-plugins-base1.0-dev
  gstreamer1.0-tools gstreamer1.0-plugins-base gstreamer1.0-plugins-good
  # video files in the tool: decoders (libav: H.264, HEVC, FFV1...), x264enc,
  # y4mdec, the CUDA library's headers; ffmpeg/ffprobe as the tests' reference
  # (and its libx265, libvpx, libopus make their clips); video out: x265enc,
  # mpegtsmux (bad), vp8enc/vp9enc, y4menc, matroskamux, avimux (good),
  # avenc_* (libav)
  gstreamer1.0-libav gstreamer1.0-plugins-ugly gstreamer1.0-plugins-bad
  libgstreamer-plugins-bad1.0-dev ffmpeg
  python3 python3-numpy python3-pil libjpeg-turbo-progs python3-dev python3-pytest
  python3-opencv
  # the README's pip install line, tested as written: a venv, meson-python
  # (and patchelf, which it runs on the installed libraries)
  python3-venv python3-mesonpy patchelf
  clang libclang-rt-dev valgrind util-linux
  parallel
)
# The report test renders the page in headless Chromium.  Debian packages it;
# Ubuntu's "chromium" only installs a snap, which containers cannot run, so
# there the test reports SKIP with the reason instead.
if grep -qs '^ID=debian' /etc/os-release; then
  packages+=(chromium)
fi

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  case "$status" in
    *"install ok installed"*) ;;
    *) missing+=("$p") ;;
  esac
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "install-deps: installing ${missing[*]}"
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install-deps: need root or sudo for apt-get" >&2; exit 1; }
  sudo=sudo
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
