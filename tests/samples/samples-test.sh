#!/usr/bin/env bash
# tests/samples/samples-test.sh: runs one sample quickly against the build, a
# pipeline script of samples/pipelines/ or the appsink-messages program, and
# checks what it printed or wrote.
# Usage: samples-test.sh analyze-file|live-clahe|overlay-snapshot BUILD_DIR [LUMAHIST_CLI]
#        samples-test.sh appsink-messages BUILD_DIR PROGRAM
# Exits 77 (skip) when GStreamer lacks an element the sample needs.
set -uo pipefail
name=$1
build=$2
cli=${3:-}
samples=$(cd "$(dirname "$0")/../../samples" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1

fail() {
  echo "FAIL: $*"
  exit 1
}

# Skips unless GStreamer has every element named.
need() {
  local missing=
  for element in "$@"; do
    gst-inspect-1.0 --exists --atleast-version=0.0.0 "$element" 2>/dev/null ||
      missing="$missing $element"
  done
  if [ -n "$missing" ]; then
    echo "SKIP: GStreamer element(s) not found:$missing"
    exit 77
  fi
}

# Runs a sample script; its output goes to $work/NAME.out and NAME.err.
run() {
  local out=$1
  shift
  local status
  echo "+ $*"
  "$@" >"$out.out" 2>"$out.err"
  status=$?
  if [ $status -ne 0 ]; then
    cat "$out.out" "$out.err"
    fail "$* exited with status $status"
  fi
  cat "$out.err"
}

# A column of analyze-file.sh's table for one frame (the row whose first field is it).
column() {
  awk -v frame="$2" -v col="$3" '$1 == frame { print $col }' "$1"
}

if [ "$name" != appsink-messages ] && ! command -v gst-launch-1.0 >/dev/null; then
  echo "SKIP: gst-launch-1.0 not found"
  exit 77
fi

case $name in
  analyze-file)
    need filesrc decodebin videoconvert videoscale jpegenc imagesequencesrc matroskamux fakesink
    frames=12
    run table "$samples/pipelines/analyze-file.sh" -n $frames "$build"
    rows=$(grep -cE '^ +[0-9]+ ' table.out)
    [ "$rows" -eq $frames ] || fail "$rows rows for $frames frames"
    # Columns: frame time backend size format mean stddev min median max P1, P50, P99.
    [ "$(column table.out 11 4)" = 640x360 ] || fail "frame 11 is not 640x360"
    case $(column table.out 0 3) in cpu | cuda) ;; *) fail "no backend in frame 0" ;; esac
    [ "$(column table.out 3 2)" = 0:00:00.300 ] || fail "frame 3 is not at 0.3 s"
    # Each photograph is held for 5 frames: equal statistics within, not across.
    [ "$(column table.out 0 6)" = "$(column table.out 4 6)" ] || fail "frames 0 and 4 differ"
    [ "$(column table.out 4 6)" != "$(column table.out 5 6)" ] || fail "frames 4 and 5 are equal"
    # The median lies between P1 and P99.
    awk '$1 ~ /^[0-9]+$/ { gsub(",", ""); if (!($11 <= $9 && $9 <= $13)) exit 1 }' table.out ||
      fail "a median outside P1 .. P99"
    run raw "$samples/pipelines/analyze-file.sh" -r -n 3 "$build"
    [ "$(grep -c 'from element "lumahist" (element): lumahist, timestamp=' raw.out)" -eq 3 ] ||
      fail "not 3 raw lumahist messages"
    grep -q 'percentiles=(double)< 1, 50, 99 >' raw.out || fail "no percentiles field"
    ! grep -q 'histogram=' raw.out || fail "a histogram although post-histogram=false"
    echo "ok: $rows frames analysed, 3 raw messages"
    ;;

  analyze-nvdec)
    # An H.264 file decoded by NVDEC into CUDA memory and analysed there, zero
    # copy (tests/data/ball-640x360.mp4: 10 frames of videotestsrc
    # pattern=ball at 10 frames/s, x264).  Skips where nvh264dec is missing:
    # everywhere but a GPU host.
    need filesrc parsebin nvh264dec fakesink
    video=$samples/../tests/data/ball-640x360.mp4
    run table "$samples/pipelines/analyze-file.sh" -m nvdec "$build" "$video"
    rows=$(grep -cE '^ +[0-9]+ ' table.out)
    [ "$rows" -eq 10 ] || fail "$rows rows for 10 frames"
    for f in 0 9; do
      [ "$(column table.out $f 3)" = cuda ] || fail "frame $f not analysed on the GPU"
      [ "$(column table.out $f 4)" = 640x360 ] || fail "frame $f is not 640x360"
      [ "$(column table.out $f 5)" = NV12 ] || fail "frame $f is not NV12"
    done
    # MP4 timestamps may start late (the decoder's delay): 0.1 s apart, rising.
    awk '$1 ~ /^[0-9]+$/ { split($2, t, ":"); s = t[1] * 3600 + t[2] * 60 + t[3]
           if (n++ && (s - last < 0.099 || s - last > 0.101)) exit 1; last = s }' table.out ||
      fail "frames are not 0.1 s apart: $(awk '{ print $2 }' table.out | tr '\n' ' ')"
    awk '$1 ~ /^[0-9]+$/ { gsub(",", ""); if (!($11 <= $9 && $9 <= $13 && $8 <= $6 && $6 <= $10)) exit 1 }' \
      table.out || fail "a median outside P1 .. P99 or a mean outside min .. max"
    echo "ok: $rows frames decoded by nvh264dec and analysed in CUDA memory"
    ;;

  live-clahe)
    need videotestsrc videobalance videoconvert jpegenc matroskamux filesink \
      filesrc decodebin fakesink
    frames=8
    run clahe "$samples/pipelines/live-clahe.sh" -n $frames -e jpeg "$build" clahe.mkv
    run plain "$samples/pipelines/live-clahe.sh" -n $frames -e jpeg -p mode=analyze "$build" \
      plain.mkv
    run clahe-table "$samples/pipelines/analyze-file.sh" "$build" clahe.mkv
    run plain-table "$samples/pipelines/analyze-file.sh" "$build" plain.mkv
    for t in clahe-table plain-table; do
      rows=$(grep -cE '^ +[0-9]+ ' $t.out)
      [ "$rows" -eq $frames ] || fail "$t: $rows frames in the file, not $frames"
    done
    # CLAHE spreads the dim, flat source: at least twice the standard deviation.
    plain_sd=$(column plain-table.out 5 7)
    clahe_sd=$(column clahe-table.out 5 7)
    awk -v p="$plain_sd" -v c="$clahe_sd" 'BEGIN { exit !(c >= 2 * p) }' ||
      fail "stddev $clahe_sd with CLAHE, $plain_sd without"
    echo "ok: $frames frames encoded; stddev $plain_sd -> $clahe_sd with CLAHE"
    ;;

  overlay-snapshot)
    need filesrc decodebin videoconvert pngenc filesink
    photo=$samples/fog-lake-low-contrast.jpg
    run with "$samples/pipelines/overlay-snapshot.sh" "$build" "$photo" with.png
    run without "$samples/pipelines/overlay-snapshot.sh" -p overlay=false "$build" "$photo" \
      without.png
    for png in with.png without.png; do
      # The PNG signature and the IHDR's width and height (big-endian at 16).
      [ "$(od -An -tx1 -N8 $png | tr -d ' \n')" = 89504e470d0a1a0a ] || fail "$png is no PNG"
      [ "$(od -An -tx1 -j16 -N8 $png | tr -d ' \n')" = 0000040000000280 ] ||
        fail "$png is not 1024x640"
    done
    ! cmp -s with.png without.png || fail "overlay=true changed nothing"
    if [ -n "$cli" ] && [ -x "$cli" ]; then
      # The panel sits at the bottom left: the top half is untouched, the
      # panel's place is not (both read back by lumahist's own PNG reader).
      stats() {
        "$cli" stats --no-histogram --format csv --roi "$2" "$1" | tail -n 1 | cut -d, -f2-
      }
      [ "$(stats with.png 0,0,1024,320)" = "$(stats without.png 0,0,1024,320)" ] ||
        fail "the overlay changed the top half"
      [ "$(stats with.png 30,480,300,130)" != "$(stats without.png 30,480,300,130)" ] ||
        fail "no panel at the bottom left"
    fi
    echo "ok: the overlay drawn at the bottom left, nothing else changed"
    ;;

  appsink-messages)
    need videotestsrc appsink
    # Columns: frame time backend mean median P99; a row per frame, then the verdict.
    run default "$cli" --frames 10
    rows=$(grep -cE '^ +[0-9]+ +[0-9]+:' default.out)
    [ "$rows" -eq 10 ] || fail "$rows frames printed, not 10"
    grep -qx '10 frames: messages and metas agree' default.out || fail "no closing line"
    [ "$(awk '$1 == 9 { print $3 }' default.out)" != "" ] || fail "no row for frame 9"
    # Another source, with a 16-bit luma: the median and P99 are 16-bit values.
    run gray16 "$cli" "videotestsrc num-buffers=4 pattern=gradient !" \
      "video/x-raw,format=GRAY16_LE,width=160,height=90"
    grep -qx '4 frames: messages and metas agree' gray16.out || fail "the GRAY16 source"
    awk '$1 == 3 { exit !($6 > 255) }' gray16.out || fail "P99 of the 16-bit gradient not above 255"
    echo "ok: messages and metas of 14 frames agree"
    ;;

  *) fail "unknown sample $name" ;;
esac
