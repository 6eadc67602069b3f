#!/bin/sh
# inspect-test.sh: `gst-inspect-1.0 lumahist` lists every format the element
# takes on both pads, as a user reads them.
# Usage: inspect-test.sh GST_INSPECT
set -u
inspect=$1
out=$(mktemp)
trap 'rm -f "$out"' EXIT
if ! "$inspect" lumahist >"$out" 2>&1; then
  cat "$out"
  echo "FAIL: gst-inspect-1.0 lumahist failed"
  exit 1
fi
missing=
for format in GRAY8 GRAY16_LE GRAY16_BE RGB BGR RGBA BGRA RGBx BGRx RGBA64_LE I420 YV12 NV12 \
  NV21 Y42B Y444 NV16 NV24 Y41B YUY2 YVYU UYVY VYUY v210 I420_10LE I420_12LE I422_10LE \
  I422_12LE Y444_10LE Y444_12LE Y444_16LE P010_10LE P012_LE P016_LE; do
  # the sink and the src template, system memory: each lists the format once
  n=$(sed -n '/^Pad Templates:/,/^Element has no clocking/p' "$out" |
    grep -E "^ +format: .*\(string\)$format[,} ]" | wc -l)
  if [ "$n" -lt 2 ]; then
    missing="$missing $format"
  fi
done
if [ -n "$missing" ]; then
  sed -n '/^Pad Templates:/,/^Element has no clocking/p' "$out"
  echo "FAIL: not listed on both pads:$missing"
  exit 1
fi
echo "ok: every format listed"
