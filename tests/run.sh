#!/usr/bin/env bash
# tests/run.sh: installs what is missing, builds lumahist and runs every test.
# Tests that need a GPU or GStreamer's CUDA elements report SKIP (exit 77) and
# say why when there is none.  Extra arguments go to `meson test`.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
build=${LUMAHIST_BUILD_DIR:-build}

build-aux/install-deps.sh
build-aux/setup-build.sh "$build"

status=0
meson test -C "$build" --print-errorlogs --num-processes "$(nproc)" "$@" || status=$?

# One closing line that any CI reads: N passed, N failed, N skipped.
python3 - "$build/meson-logs/testlog.json" <<'PY'
import json, sys
counts = {"passed": 0, "failed": 0, "skipped": 0}
for line in open(sys.argv[1]):
    result = json.loads(line).get("result", "")
    if result in ("OK", "EXPECTEDFAIL"):
        counts["passed"] += 1
    elif result == "SKIP":
        counts["skipped"] += 1
    else:
        counts["failed"] += 1
print(f'{counts["passed"]} passed, {counts["failed"]} failed, {counts["skipped"]} skipped')
PY
exit $status
