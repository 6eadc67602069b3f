#!/usr/bin/env bash
# samples/demo.sh: installs what is missing, builds lumahist and runs its main
# job on the bundled photographs, printing the results.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
build=${LUMAHIST_BUILD_DIR:-build}

build-aux/install-deps.sh
build-aux/setup-build.sh "$build" >/dev/null
tool="$build/src/tool/lumahist"

echo "== lumahist $("$tool" --version | head -n1)"
echo
echo "== Statistics of every sample (lumahist stats --format table samples/)"
"$tool" stats --format table samples/
echo
first=$(find samples -maxdepth 1 -name '*.jpg' | sort | head -n1)
echo "== One record as JSON Lines, without the histogram ($first)"
"$tool" stats --no-histogram --percentiles 1,5,50,95,99 "$first"
