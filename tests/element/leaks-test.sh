#!/bin/sh
# leaks-test.sh: runs a command under GStreamer's leaks tracer and fails if it
# reports any object still alive at gst_deinit() (or if the tracer did not run,
# so that the test cannot pass by checking nothing).
# Usage: leaks-test.sh COMMAND [ARGS...]
set -u
log=$(mktemp)
trap 'rm -f "$log"' EXIT

GST_TRACERS=leaks GST_DEBUG=GST_TRACER:7 GST_DEBUG_NO_COLOR=1 GST_DEBUG_FILE="$log" "$@"
status=$?
if [ $status -eq 77 ]; then
  exit 77
fi
if [ $status -ne 0 ]; then
  tail -n 50 "$log"
  echo "FAIL: '$*' exited with $status"
  exit 1
fi
# The tracer declares the format of its object-alive record when it starts.
if ! grep -q 'new format string: object-alive' "$log"; then
  echo "FAIL: the leaks tracer did not run (no object-alive record declared)"
  exit 1
fi
if grep -E 'object-alive, type-name=\(string\)[^%]|Leaks detected' "$log"; then
  echo "FAIL: leaks reported"
  exit 1
fi
echo "ok: no leaks"
