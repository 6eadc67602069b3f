#!/usr/bin/env bash
# tests/bench/static-ffmpeg.sh DEST: builds a small ffmpeg and ffprobe from
# Debian 12's own FFmpeg source (apt-get source ffmpeg, Debian's patches
# applied), linked statically against FFmpeg's libraries, into DEST/bin.
#
# Why: the GPU hosts have no ffmpeg, and Debian's with its ~200 shared
# libraries does not fit what travels to them, yet issue 15 and 16's targets
# compare lumahist with `ffmpeg -vf signalstats` on the same machine.  The
# build keeps what those comparisons run (H.264/HEVC decoding with its x86
# assembly and threads, mov/mkv/ts demuxing, signalstats, testsrc2, movie,
# -f null) and drops the rest; it is about 10 MB and needs only glibc 2.35.
# On a 1080p clip it gives the same signalstats values, byte for byte, as
# Debian's ffmpeg, in the same time (REPORT in DEST).
#
# Needs deb-src lines for bookworm in apt's sources, nasm and dpkg-dev.
set -euo pipefail
dest=$(mkdir -p "${1:?usage: static-ffmpeg.sh DEST}" && cd "$1" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
apt-get source -q ffmpeg >/dev/null
cd ffmpeg-*/
./configure --extra-version="$(dpkg-parsechangelog -S Version | sed 's/^[0-9]*://; s/^[^-]*-//')-min" \
  --toolchain=hardened --arch=amd64 --disable-everything --disable-doc --disable-debug \
  --enable-static --disable-shared --disable-autodetect --enable-pthreads --enable-x86asm \
  --enable-avdevice --enable-avfilter --enable-swscale --enable-swresample --disable-ffplay \
  --enable-ffmpeg --enable-ffprobe --enable-protocol=file,pipe \
  --enable-demuxer=mov,matroska,mpegts,rawvideo,h264,hevc,yuv4mpegpipe \
  --enable-decoder=h264,hevc,rawvideo,aac,mp3float,pcm_s16le --enable-parser=h264,hevc,aac,mpegaudio \
  --enable-filter=signalstats,null,format,scale,testsrc2,movie,amovie,metadata,showinfo,aformat,anull,anullsrc,aresample,trim,atrim,setpts \
  --enable-indev=lavfi --enable-muxer=null,rawvideo --enable-encoder=wrapped_avframe,rawvideo,pcm_s16le \
  >configure.log
make -j"$(nproc)" >make.log 2>&1
mkdir -p "$dest/bin"
install -s ffmpeg ffprobe "$dest/bin/"
"$dest/bin/ffmpeg" -version | head -1
