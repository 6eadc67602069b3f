# shellcheck shell=bash
# samples/pipelines/common.sh: what the sample pipelines share, sourced by each:
# finding the lumahist plugin from a build folder, checking for the elements a
# pipeline needs, and printing each gst-launch-1.0 line before running it.

# The repository root, for the default build folder and the photographs.
lh_top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

lh_die() {
  echo "$(basename "$0"): $*" >&2
  exit 1
}

# Prints the comment at the top of the script: what it does, its usage and
# the pipeline.
lh_usage() {
  sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"
}

# Points GST_PLUGIN_PATH at the plugin of a build folder (its plugin/
# subfolder) or at a folder holding libgstlumahist.so itself; without an
# argument, $LUMAHIST_BUILD_DIR or build/ at the repository root.  Falls back
# to an installed plugin, and stops with a hint when there is none.
lh_use_build() {
  local dir=${1:-${LUMAHIST_BUILD_DIR:-$lh_top/build}}
  local plugin_dir=
  if [ -f "$dir/plugin/libgstlumahist.so" ]; then
    plugin_dir=$(cd "$dir/plugin" && pwd)
  elif [ -f "$dir/libgstlumahist.so" ]; then
    plugin_dir=$(cd "$dir" && pwd)
  fi
  command -v gst-launch-1.0 >/dev/null ||
    lh_die "gst-launch-1.0 not found (Debian: apt-get install gstreamer1.0-tools)"
  if [ -n "$plugin_dir" ]; then
    export GST_PLUGIN_PATH=$plugin_dir${GST_PLUGIN_PATH:+:$GST_PLUGIN_PATH}
  elif lh_exists lumahist; then
    echo "# no plugin under $dir: using the installed lumahist element" >&2
  else
    lh_die "no lumahist plugin under $dir (build it: meson setup $dir && ninja -C $dir)"
  fi
}

# True when an element exists.  --exists alone also asks for a version of at
# least GStreamer's own, which the lumahist plugin (0.x) does not have.
lh_exists() {
  gst-inspect-1.0 --exists --atleast-version=0.0.0 "$1" 2>/dev/null
}

# Stops with the missing elements' names unless all of them exist.
lh_require() {
  local missing=
  for element in "$@"; do
    lh_exists "$element" || missing="$missing $element"
  done
  [ -z "$missing" ] || lh_die "GStreamer element(s) not found:$missing"
}

# True when every element named exists.
lh_have() {
  for element in "$@"; do
    lh_exists "$element" || return 1
  done
}

# The command lines go to the script's standard error even when the
# pipeline's own output is sent elsewhere.
exec 3>&2

# Prints a gst-launch-1.0 command line, quoted so that it can be pasted, then runs it.
lh_launch() {
  local word line=gst-launch-1.0
  for word in "$@"; do
    case $word in
      *[\ \(\)\;\"\'\&\|\<\>]*) line="$line '$word'" ;;
      *) line="$line $word" ;;
    esac
  done
  echo "\$ $line" >&3
  gst-launch-1.0 "$@"
}
