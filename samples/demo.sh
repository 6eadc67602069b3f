#!/usr/bin/env bash
# samples/demo.sh: installs what is missing, builds lumahist and runs its main
# job on the bundled photographs: statistics, an equalized image, a CLAHE
# image, an overlay, and a gst-launch-1.0 pipeline, printing the results.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
build=${LUMAHIST_BUILD_DIR:-build}
out=${LUMAHIST_DEMO_OUT:-demo-out}

build-aux/install-deps.sh
build-aux/setup-build.sh "$build" >/dev/null
tool="$build/src/tool/lumahist"
mkdir -p "$out"

echo "== $("$tool" --version | head -n1)"
echo
echo "== Statistics of every sample: lumahist stats --format table samples/"
"$tool" stats --quiet --format table samples/
echo
echo "== One record as JSON Lines, without the histogram"
"$tool" stats --quiet --no-histogram samples/sky-high-key.jpg
echo
echo "== Equalized and CLAHE images of the low-contrast photographs, in $out/"
"$tool" equalize --quiet --out "$out/equalized" samples/fog-lake-low-contrast.jpg \
  samples/wood-flat-low-contrast.jpg
"$tool" clahe --quiet --out "$out/clahe" samples/fog-lake-low-contrast.jpg
"$tool" stats --quiet --format table --no-histogram samples/fog-lake-low-contrast.jpg \
  "$out/equalized" "$out/clahe"
echo
echo "== The histogram drawn on a photograph: $out/overlay/"
"$tool" overlay --quiet --out "$out/overlay" samples/sky-high-key.jpg
ls -l "$out/overlay"
echo
if [ -f "$build/plugin/libgstlumahist.so" ] && command -v gst-launch-1.0 >/dev/null; then
  echo "== The GStreamer element on 5 test frames (one lumahist message per frame):"
  pipeline="videotestsrc num-buffers=5 pattern=smpte ! video/x-raw,format=NV12,width=640,height=360 ! lumahist percentiles=5,95 post-histogram=false ! fakesink"
  echo "gst-launch-1.0 -m $pipeline"
  GST_PLUGIN_PATH="$build/plugin" GST_REGISTRY="$build/demo-registry.bin" \
    gst-launch-1.0 -m $pipeline 2>&1 | grep -o 'lumahist, .*' |
    sed -E 's/.*timestamp=\(guint64\)([0-9]+).*backend=\(string\)([a-z]+).* mean=\(double\)([0-9.]{1,7}).* median=\(uint\)([0-9]+).*percentile-values=\(uint\)< ([0-9]+), ([0-9]+) >.*/  t=\1 ns  backend=\2  mean=\3  median=\4  p5=\5  p95=\6/' 
else
  echo "== (GStreamer element not built: skipping the gst-launch-1.0 pipeline)"
fi
