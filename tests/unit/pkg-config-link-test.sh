#!/bin/sh
# pkg-config-link-test.sh: an application built as the README says, with the
# C compiler and `pkg-config --cflags --libs lumahist` alone (and with
# --static too for a static library), against this build's uninstalled
# lumahist.pc, must compile, link and run.  SKIP (77) without pkg-config.
# Usage: pkg-config-link-test.sh BUILD_ROOT SOURCE shared|static SANITIZE CC...
set -u
build=$1 source=$2 kind=$3 sanitize=$4
shift 4
if ! command -v pkg-config >/dev/null 2>&1; then
  echo "SKIP: pkg-config not found"
  exit 77
fi
export PKG_CONFIG_PATH="$build/meson-uninstalled"
# A sanitized library needs its runtime in the program too.
extra=
[ "$sanitize" != none ] && extra="-fsanitize=$sanitize"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# The README's flags; a static library also with --static.
for static in "" $([ "$kind" = static ] && echo --static); do
  if ! cflags=$(pkg-config --cflags lumahist) || ! libs=$(pkg-config --libs ${static:+"$static"} lumahist); then
    echo "FAIL: pkg-config knows no lumahist in $PKG_CONFIG_PATH"
    exit 1
  fi
  echo "$* -std=c99 $cflags $source $libs $extra"
  # shellcheck disable=SC2086 # the flags are words, as pkg-config gives them
  if ! "$@" -std=c99 -Wall -Wextra -pedantic -Werror $cflags "$source" $libs $extra -o "$out/embed"
  then
    echo "FAIL: a program does not build with pkg-config --libs $static lumahist's flags"
    exit 1
  fi
  LD_LIBRARY_PATH="$build/src${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$out/embed" || exit 1
done
