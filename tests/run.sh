#!/usr/bin/env bash
# tests/run.sh: installs what is missing, builds lumahist and runs every test;
# then builds it again, CPU only, with AddressSanitizer (LeakSanitizer with
# it) and UndefinedBehaviorSanitizer, and runs the library's, the CLI's and
# the batch tests, bad input and the fuzz corpus replayed there too.
# Tests that need a GPU or GStreamer's CUDA elements report SKIP (exit 77) and
# say why when there is none.  Extra arguments go to `meson test` (of the
# first build; the sanitizer run is then left out unless LUMAHIST_SANITIZE=1;
# LUMAHIST_SANITIZE=0 leaves it out always).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
build=${LUMAHIST_BUILD_DIR:-build}
sanitize_build=${LUMAHIST_SANITIZE_BUILD_DIR:-$build-sanitize}
sanitize=${LUMAHIST_SANITIZE:-$([ $# -eq 0 ] && echo 1 || echo 0)}

build-aux/install-deps.sh
build-aux/setup-build.sh "$build"

status=0
meson test -C "$build" --print-errorlogs --num-processes "$(nproc)" "$@" || status=$?

# The sanitizer run.  Lean: no CUDA, no GStreamer (the element's and the
# video tests take longer under the sanitizers than the rest together, and
# load system plugins; `meson test` in such a build with them runs them
# too), no Python module.  Its options (tests/meson.build) make any finding
# fail the test.  The fuzz targets themselves run in the first build, built
# by clang with the same sanitizers (tests/fuzz/run.sh).
logs=("$build/meson-logs/testlog.json")
sanitize_failed=0
if [ "$sanitize" = 1 ]; then
  if build-aux/setup-build.sh "$sanitize_build" -Dcuda=disabled -Dnvjpeg=disabled \
    -Dgst=disabled -Dvideo=disabled -Dpython=disabled \
    -Db_sanitize=address,undefined -Db_lundef=false; then
    meson test -C "$sanitize_build" --print-errorlogs --num-processes "$(nproc)" \
      --suite unit --suite io --suite equalize --suite cli --suite batch --suite bad-input \
      --suite fuzz-replay --no-suite gpu || status=$?
    logs+=("$sanitize_build/meson-logs/testlog.json")
  else
    echo "tests/run.sh: the sanitizer build failed"
    sanitize_failed=1
    status=1
  fi
fi

# One closing line that any CI reads: N passed, N failed, N skipped (both
# runs; the one before it gives the sanitizer run's share).
python3 - "$sanitize_failed" "${logs[@]}" <<'PY'
import json, sys
def count(path):
    counts = {"passed": 0, "failed": 0, "skipped": 0}
    for line in open(path):
        result = json.loads(line).get("result", "")
        if result in ("OK", "EXPECTEDFAIL"):
            counts["passed"] += 1
        elif result == "SKIP":
            counts["skipped"] += 1
        else:
            counts["failed"] += 1
    return counts
def line(counts):
    return f'{counts["passed"]} passed, {counts["failed"]} failed, {counts["skipped"]} skipped'
total = count(sys.argv[2])
total["failed"] += int(sys.argv[1])
for path in sys.argv[3:]:
    sanitized = count(path)
    print("sanitizer run: " + line(sanitized))
    for key in total:
        total[key] += sanitized[key]
print(line(total))
PY
exit $status
