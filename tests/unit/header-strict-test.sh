#!/bin/sh
# header-strict-test.sh: lumahist.h, included by an application built with
# the strictest flags a C or C++ project uses, compiles without a warning:
# C89 and C99, C++98 and C++17, each with -pedantic-errors -Wall -Wextra
# -Werror (and -Wundef, which a header's #if on an undefined name trips), by
# every compiler named.  A C++ object must call the library's functions by
# their C names (the header's extern "C"), which nm shows.
# Usage: header-strict-test.sh SOURCE_ROOT BUILD_ROOT SOURCE c|c++ COMPILER [c|c++ COMPILER]...
set -u
top=$1 build=$2 source=$3
shift 3
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
failed=0
case " $* " in
  *" c++ "*) ;;
  *) echo "(no C++ compiler named, g++ and clang++ not found: the C++ standards are not checked)" ;;
esac
while [ $# -ge 2 ]; do
  language=$1 compiler=$2
  shift 2
  if [ "$language" = c ]; then
    standards="c89 c99"
    extra=-Wstrict-prototypes
  else
    standards="c++98 c++17"
    extra=
  fi
  for standard in $standards; do
    flags="-std=$standard -pedantic-errors -Wall -Wextra -Werror -Wundef${extra:+ $extra}"
    object=$out/header-$standard.o
    # shellcheck disable=SC2086 # the flags are words
    if "$compiler" -x "$language" $flags -I"$top/src" -I"$build/src" -c "$source" -o "$object"; then
      echo "ok: $compiler $flags"
    else
      echo "FAIL: lumahist.h does not compile with $compiler $flags"
      failed=1
      continue
    fi
    if [ "$language" = c++ ]; then
      if ! command -v nm >/dev/null 2>&1; then
        echo "  (nm not found: the C++ object's symbol names are not checked)"
      elif ! nm -u "$object" | grep -qx ' *U lh_analyze'; then
        echo "FAIL: $compiler -std=$standard calls lh_analyze by another name than its C one:"
        nm -u "$object" | grep lh_analyze
        failed=1
      fi
    fi
  done
done
exit $failed
