#!/bin/sh
# pkg-config-link-test.sh: an application built as the README says, with the
# C compiler and `pkg-config --cflags --libs lumahist` alone (and with
# --static too for a static library), against this build's uninstalled
# lumahist.pc, must compile, link and run.  With --installed MESON, against
# the lumahist.pc and headers that `meson install` puts in a temporary
# DESTDIR instead, so that a header the installation leaves out fails.  With
# --nvcc, CC is nvcc, which a CUDA application builds and links with: the
# source is compiled as CUDA C++, and linked with the flags of both --libs and
# --static --libs whatever the library, so that a flag nvcc refuses fails.
# SKIP (77) without pkg-config.
# Usage: pkg-config-link-test.sh [--installed MESON] [--nvcc] BUILD_ROOT SOURCE shared|static SANITIZE CC...
set -u
meson=
nvcc=false
while :; do
  case "$1" in
    --installed) meson=$2; shift 2 ;;
    --nvcc) nvcc=true; shift ;;
    *) break ;;
  esac
done
build=$1 source=$2 kind=$3 sanitize=$4
shift 4
if ! command -v pkg-config >/dev/null 2>&1; then
  echo "SKIP: pkg-config not found"
  exit 77
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
export PKG_CONFIG_PATH="$build/meson-uninstalled"
libdir="$build/src"
if [ -n "$meson" ]; then
  # The library, its headers and lumahist.pc (and the rest of the runtime).
  if ! "$meson" install -C "$build" --no-rebuild --destdir "$out/dest" --tags devel,runtime \
    >"$out/install.log" 2>&1; then
    echo "FAIL: meson install into a DESTDIR:"
    cat "$out/install.log"
    exit 1
  fi
  pc=$(find "$out/dest" -name lumahist.pc | head -n 1)
  if [ -z "$pc" ]; then
    echo "FAIL: meson install put no lumahist.pc in its DESTDIR"
    exit 1
  fi
  PKG_CONFIG_PATH=$(dirname "$pc")
  # The .pc is relocatable (its prefix from where it lies): under DESTDIR
  # it names the files there, with no prefix given.
  libdir=$(pkg-config --variable=libdir lumahist)
  case "$libdir" in
    "$out/dest"/*) ;;
    *) echo "FAIL: the installed lumahist.pc's libdir is $libdir, not under its DESTDIR"; exit 1 ;;
  esac
fi
# A sanitized library needs its runtime in the program too.
extra=
[ "$sanitize" != none ] && extra="-fsanitize=$sanitize"
# The README's flags; a static library also with --static.
static_flags=$([ "$kind" = static ] && echo --static)
language_flags="-std=c99 -Wall -Wextra -pedantic -Werror"
if $nvcc; then
  static_flags=--static
  # Compiled as CUDA by its name: "-x cu" would also take the libraries that
  # follow it (static archives, libcudart_static.a) for CUDA source.
  language_flags=
  cp "$source" "$out/embed.cu"
  source=$out/embed.cu
  # nvcc gives the host compiler its options by -Xcompiler, and splits its
  # value at commas: -fsanitize=address,undefined goes as one per sanitizer.
  extra=
  if [ "$sanitize" != none ]; then
    for one in $(echo "$sanitize" | tr , ' '); do
      extra="$extra -Xcompiler=-fsanitize=$one"
    done
  fi
fi
# shellcheck disable=SC2086 # an empty option is no word
if ! cflags=$(pkg-config --cflags lumahist); then
  echo "FAIL: pkg-config knows no lumahist in $PKG_CONFIG_PATH"
  exit 1
fi
for static in "" $static_flags; do
  # shellcheck disable=SC2086 # an empty option is no word
  if ! libs=$(pkg-config --libs ${static:+"$static"} lumahist); then
    echo "FAIL: pkg-config knows no lumahist in $PKG_CONFIG_PATH"
    exit 1
  fi
  # One CUDA runtime: the shared and the static one together would give a
  # static link two copies of its state.
  case " $libs " in
    *" -lcudart "*)
      case " $libs " in
        *" -lcudart_static "*)
          echo "FAIL: pkg-config --libs $static lumahist names two CUDA runtimes: $libs"
          exit 1 ;;
      esac ;;
  esac
  echo "$* $language_flags $cflags $source $libs $extra"
  # shellcheck disable=SC2086 # the flags are words, as pkg-config gives them
  if ! "$@" $language_flags $cflags "$source" $libs $extra -o "$out/embed"; then
    echo "FAIL: a program does not build with pkg-config --cflags and --libs $static lumahist's flags"
    exit 1
  fi
  LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$out/embed" || exit 1
done
