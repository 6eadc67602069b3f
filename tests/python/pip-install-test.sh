#!/usr/bin/env bash
# pip-install-test.sh SOURCE_ROOT PYTHON VERSION: the README's install line
# for machines that reach only Debian's archive, as a user runs it: a venv
# made with --system-site-packages from PYTHON, `pip install
# --no-build-isolation` of the source tree (meson-python builds the whole
# project again, CUDA included where nvcc is found), then the module and
# the tool from outside the tree.  Exits 77, saying why, when PYTHON lacks
# venv or meson-python, or patchelf (which meson-python 0.12 calls on the
# installed libraries) is missing: build-aux/install-deps.sh installs them.
set -euo pipefail
src=${1:?usage: pip-install-test.sh SOURCE_ROOT PYTHON VERSION}
python=${2:?}
version=${3:?}

"$python" -c 'import venv, ensurepip' 2>/dev/null || {
  echo "SKIP: $python has no venv/ensurepip (Debian: python3-venv)"
  exit 77
}
"$python" -c 'import mesonpy' 2>/dev/null || {
  echo "SKIP: $python has no meson-python (Debian: python3-mesonpy)"
  exit 77
}
command -v patchelf >/dev/null || {
  echo "SKIP: no patchelf (Debian: patchelf), which meson-python runs on the installed libraries"
  exit 77
}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$python" -m venv --system-site-packages "$work/venv"
if ! "$work/venv/bin/pip" install --no-build-isolation --no-index "$src" >"$work/pip.log" 2>&1; then
  tail -n 40 "$work/pip.log"
  echo "FAIL: pip install --no-build-isolation $src"
  exit 1
fi

cd "$work"
"$work/venv/bin/python" - "$work/venv" "$version" <<'PY'
import os
import sys

import numpy

import lumahist

venv, version = sys.argv[1], sys.argv[2]
where = os.path.realpath(lumahist.__file__)
assert where.startswith(os.path.realpath(venv)), f"lumahist imported from {where}, not the venv"
assert lumahist.__version__ == version, f"version {lumahist.__version__}, meson says {version}"
image = numpy.arange(64 * 48, dtype=numpy.uint32).reshape(48, 64).astype(numpy.uint8)
stats = lumahist.stats(image, backend="cpu")
expected = numpy.bincount(image.ravel(), minlength=256)
assert stats.count == image.size, stats.count
assert list(stats.histogram) == list(expected), "histogram differs from numpy.bincount"
assert stats.min == image.min() and stats.max == image.max()
print(f"lumahist {lumahist.__version__} from {where}: stats of a 64x48 ramp agree with NumPy")
PY
out=$("$work/venv/bin/lumahist" --version)
case $out in
  *"$version"*) echo "the tool in the venv: $out" ;;
  *)
    echo "FAIL: venv/bin/lumahist --version printed '$out', not $version"
    exit 1
    ;;
esac
