#!/bin/sh
# launch-test.sh: runs lumahist in a gst-launch-1.0 pipeline, as a user would,
# and checks that it posts one `lumahist` element message per frame.
# Usage: launch-test.sh GST_LAUNCH
set -u
launch=$1
frames=7
out=$(mktemp)
trap 'rm -f "$out"' EXIT

"$launch" -m videotestsrc num-buffers=$frames pattern=smpte \
  ! video/x-raw,format=NV12,width=96,height=64 \
  ! lumahist name=lh percentiles=5,50,95 ! fakesink >"$out" 2>&1
status=$?
if [ $status -ne 0 ]; then
  cat "$out"
  echo "FAIL: gst-launch-1.0 exited with $status"
  exit 1
fi

# gst-launch -m prints each message as "... from element "lh" (element): lumahist, timestamp=...".
count=$(grep -c 'from element "lh" (element): lumahist, timestamp=' "$out")
if [ "$count" -ne $frames ]; then
  cat "$out"
  echo "FAIL: $count lumahist messages for $frames frames"
  exit 1
fi
for field in 'bit-depth=(int)8' 'count=(guint64)6144' 'percentiles=(double)< 5, 50, 95 >' \
  'histogram=(guint64)<'; do
  if ! grep 'lumahist, timestamp=' "$out" | head -n 1 | grep -qF "$field"; then
    grep 'lumahist, timestamp=' "$out" | head -n 1
    echo "FAIL: the first message lacks $field"
    exit 1
  fi
done
echo "ok: $count messages"

# A webcam's format as v4l2src negotiates it, equalized with CLAHE at 720p.
frames=3
"$launch" -m videotestsrc num-buffers=$frames pattern=ball \
  ! video/x-raw,format=YUY2,width=1280,height=720 \
  ! lumahist name=lh mode=clahe ! fakesink >"$out" 2>&1
status=$?
count=$(grep -c 'from element "lh" (element): lumahist, timestamp=' "$out")
if [ $status -ne 0 ] || [ "$count" -ne $frames ] ||
  ! grep 'lumahist, timestamp=' "$out" | head -n 1 | grep -qF 'format=(string)YUY2'; then
  cat "$out"
  echo "FAIL: YUY2 720p CLAHE: status $status, $count messages for $frames frames"
  exit 1
fi
echo "ok: YUY2 1280x720 CLAHE, $count messages"

# A phone's portrait clip (stored on its side, tagged rotate-90) shown by
# videoflip video-direction=auto: with overlay-direction=auto the panel
# stands bottom left in the picture as shown.  Shown 90x160 GRAY8, rows of
# 92 bytes; the panel's shade differs from the flat grey around it.
raw=$(mktemp)
trap 'rm -f "$out" "$raw"' EXIT
"$launch" -q videotestsrc num-buffers=1 pattern=solid-color foreground-color=0xff808080 \
  ! video/x-raw,format=GRAY8,width=160,height=90 \
  ! taginject tags="image-orientation=rotate-90" \
  ! lumahist overlay=true overlay-direction=auto post-messages=false \
  ! videoflip video-direction=auto ! filesink location="$raw" >"$out" 2>&1
status=$?
if grep -qE 'no element "(taginject|videoflip)"' "$out"; then
  # GStreamer without gst-plugins-good's debugutils or videofilter (a GPU
  # host's private GStreamer): the GstHarness test (element) covers the tags.
  echo "skipped: overlay-direction=auto before videoflip: $(grep -o 'no element "[a-z]*"' "$out")"
  exit 0
fi
pixel() { od -An -tu1 -j $(($1 * 92 + $2)) -N1 "$raw" | tr -d ' '; }
size=$(wc -c <"$raw")
if [ $status -ne 0 ] || [ "$size" -ne $((92 * 160)) ]; then
  cat "$out"
  echo "FAIL: turned overlay: status $status, $size bytes for a 90x160 GRAY8 frame"
  exit 1
fi
grey=$(pixel 80 80)
if [ "$(pixel 140 20)" = "$grey" ] || [ "$(pixel 20 20)" != "$grey" ]; then
  echo "FAIL: turned overlay: bottom left $(pixel 140 20), top left $(pixel 20 20), grey $grey:" \
    "the panel is not bottom left as shown"
  exit 1
fi
echo "ok: overlay-direction=auto before videoflip video-direction=auto"
