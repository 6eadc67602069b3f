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
  # mpegtsmux and mpeg2enc (bad), vp8enc/vp9enc, y4menc, matroskamux, avimux (good),
  # avenc_* (libav)
  gstreamer1.0-libav gstreamer1.0-plugins-ugly gstreamer1.0-plugins-bad
  libgstreamer-plugins-bad1.0-dev ffmpeg
  python3 python3-numpy python3-pil libjpeg-turbo-progs python3-dev python3-pytest
  python3-opencv
  # the stubs checked against the module (tests/python/test_typing.py)
  python3-mypy
  # the README's pip install line, tested as written: a venv, meson-python
  # (and patchelf, which it runs on the installed libraries)
  python3-venv python3-mesonpy patchelf
  clang libclang-rt-dev valgrind util-linux
  parallel
  # the locale tests (a program that set a decimal-comma or a Turkish locale)
  locales
  # the man page test renders it (groff); the bash completion is installed to
  # bash-completion's folder (its pkg-config), whose loader the install test runs
  groff-base bash-completion
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
# The locales the tests set (de_DE: a decimal comma; tr_TR: "I" is not
# "i" in lower case), made where missing.
locales_missing=()
for l in de_DE tr_TR; do
  locale -a 2>/dev/null | grep -qix "$l.utf-\?8" || locales_missing+=("$l")
done
[ ${#missing[@]} -eq 0 ] && [ ${#locales_missing[@]} -eq 0 ] && exit 0

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install-deps: need root or sudo for apt-get" >&2; exit 1; }
  sudo=sudo
fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
for l in "${locales_missing[@]}"; do
  echo "install-deps: making the $l.UTF-8 locale"
  $sudo localedef -i "$l" -f UTF-8 "$l.UTF-8"
done
