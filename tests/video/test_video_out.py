#!/usr/bin/env python3
"""test_video_out.py: `lumahist equalize`, `clahe` and `overlay` writing videos.

Usage: test_video_out.py LUMAHIST GROUP
GROUP: equalize, containers, bad, pictures, gpu (see GROUPS at the end).

Clips are made here from numpy frames (YUV4MPEG2 written by this script,
then H.264 by FFmpeg's lossless libx264, with a sine tone in AAC), so every
decoded pixel is known.  Outputs are written with --crf 0 (x264enc's lossless
mode) and decoded by FFmpeg, so the luma of every output frame must equal the
reference equalization computed here from lh_lut_from_histogram's definition
(src/lumahist.h), bit for bit; ffprobe checks the container, codec, size,
frame rate and timestamps; FFmpeg's md5 muxer checks the audio packets.
Without ffmpeg, gst-launch-1.0, the encoders or video support in this
lumahist, the test says why and exits 77.
"""
import glob
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

try:
    import numpy as np
except ImportError as e:  # pragma: no cover
    print(f"SKIP: needs python3-numpy ({e})")
    sys.exit(77)

LUMAHIST = None
FAILURES = []


def fail(message):
    FAILURES.append(message)
    print("FAIL:", message)


def check(condition, message):
    if not condition:
        fail(message)
    return condition


def run(*args, timeout=180, env=None):
    proc = subprocess.run([LUMAHIST, *args], capture_output=True, timeout=timeout, env=env)
    return proc.returncode, proc.stdout.decode(), proc.stderr.decode("utf-8", "replace")


def ffmpeg(*args):
    subprocess.run(["ffmpeg", "-v", "error", "-y", *args], check=True)


def probe(path, *entries):
    out = subprocess.run(["ffprobe", "-v", "error", "-of", "json", *entries, path],
                         check=True, capture_output=True).stdout
    return json.loads(out)


def write_y4m(path, frames, fps="25:1", full_range=False):
    """frames: uint8 Y planes; 4:2:0 chroma with a gradient, so that a change
    of chroma would show; full_range: tagged so, as FFmpeg tags it."""
    h, w = frames[0].shape
    tag = " XCOLORRANGE=FULL" if full_range else ""
    with open(path, "wb") as f:
        f.write(f"YUV4MPEG2 W{w} H{h} F{fps} Ip A1:1 C420jpeg{tag}\n".encode())
        for i, y in enumerate(frames):
            ch, cw = (h + 1) // 2, (w + 1) // 2
            u = (np.arange(cw)[None, :] * 3 + i + np.zeros((ch, 1))).astype(np.uint8)
            v = (np.arange(ch)[:, None] * 5 + 2 * i + np.zeros((1, cw))).astype(np.uint8)
            f.write(b"FRAME\n" + y.tobytes() + u.tobytes() + v.tobytes())


def check_motion_jpeg(tmp, frames, h, w):
    """Motion JPEG with no container (.mjpeg: JPEGs one after the other) had
    no muxer ("no GStreamer muxer writes its container (image/jpeg ...)"):
    jpegenc's frames are written one after the other, as they came, each
    equalized as the frames of a video are."""
    clip = make_clip(tmp, "webcam.mjpeg", frames,
                     ["-c:v", "mjpeg", "-q:v", "2", "-pix_fmt", "yuvj420p", "-f", "mjpeg"],
                     audio=False)
    for command in ("equalize", "clahe", "overlay"):
        out_dir = os.path.join(tmp, "out-motion-jpeg-" + command)
        code, _, err = run(command, "-o", out_dir, clip)
        output = os.path.join(out_dir, "webcam.mjpeg")
        if not check(code == 0 and os.path.exists(output), f"{command} webcam.mjpeg: exit {code}: {err}"):
            continue
        _, video, _ = stream_info(output)
        check(len(video) == 1 and video[0]["codec_name"] == "mjpeg",
              f"{command} webcam.mjpeg: {video}")
        got = [p[0] for p in decoded_planes(output, w, h, "yuvj420p")]
        check(len(got) == len(frames), f"{command} webcam.mjpeg: {len(got)} of {len(frames)} frames")
        if command == "equalize":
            data = open(clip, "rb").read()
            cut = os.path.join(tmp, "cut-webcam.mjpeg")
            open(cut, "wb").write(data[:len(data) - 100])
            cut_dir = os.path.join(tmp, "out-motion-jpeg-cut")
            code, _, err = run(command, "-o", cut_dir, cut)
            check(code == 1 and "the file is truncated: its last frame has no end-of-image "
                  "marker" in err, f"cut webcam.mjpeg: exit {code}: {err}")
            no_leftovers(cut_dir, "cut webcam.mjpeg")
            # Zero padding after the cut longer than the 4 KB once read of
            # the end: it was written as if whole.
            padded = os.path.join(tmp, "cut-padded-webcam.mjpeg")
            open(padded, "wb").write(data[:len(data) - 100] + bytes(20000))
            padded_dir = os.path.join(tmp, "out-motion-jpeg-cut-padded")
            code, _, err = run(command, "-o", padded_dir, padded)
            check(code == 1 and "the file is truncated: its last frame has no end-of-image "
                  "marker" in err, f"cut-padded webcam.mjpeg: exit {code}: {err}")
            no_leftovers(padded_dir, "cut-padded webcam.mjpeg")
            decoded = [p[0] for p in decoded_planes(clip, w, h, "yuvj420p")]
            want = reference_equalized(decoded, 8)
            worst = max(float(np.abs(g.astype(int) - r).mean()) for g, r in zip(got, want))
            check(worst < 2.5, f"webcam.mjpeg: luma off the reference by {worst}")
            check_motion_jpeg_from_standard_input(tmp, clip, got, w, h)
    check_large_motion_jpeg(tmp)


def check_large_motion_jpeg(tmp):
    """Motion JPEG frames larger than a read block (4 KB: any webcam's):
    jpegdec, cutting the stream in frames itself, took the blocks, which
    the rewrite counted as frames, and a whole clip was failed as damaged
    ('11 of its 61 frames could not be decoded', nothing written)."""
    rng = np.random.default_rng(77)
    frames = [rng.integers(0, 256, size=(96, 128), dtype=np.uint8) for _ in range(6)]
    clip = make_clip(tmp, "large.mjpeg", frames,
                     ["-c:v", "mjpeg", "-q:v", "2", "-pix_fmt", "yuvj420p", "-f", "mjpeg"],
                     audio=False)
    check(os.path.getsize(clip) > 6 * 8192, f"large.mjpeg: {os.path.getsize(clip)} bytes")
    for command in ("equalize", "clahe", "overlay"):
        out_dir = os.path.join(tmp, "out-large-motion-jpeg-" + command)
        code, _, err = run(command, "-o", out_dir, clip)
        output = os.path.join(out_dir, "large.mjpeg")
        if check(code == 0 and os.path.exists(output), f"{command} large.mjpeg: exit {code}: {err}"):
            got = decoded_planes(output, 128, 96, "yuvj420p")
            check(len(got) == len(frames), f"{command} large.mjpeg: {len(got)} of 6 frames")


def check_motion_jpeg_from_standard_input(tmp, clip, got, w, h):
    """Motion JPEG on standard input was written back as one image, its
    first frame: OUT/stdin.jpg.  Redirected from a file, it is the video,
    OUT/stdin.mjpeg, each frame as from the named file; on a pipe it is
    refused in one line, and nothing is written."""
    out_dir = os.path.join(tmp, "out-motion-jpeg-stdin")
    with open(clip, "rb") as f:
        proc = subprocess.run([LUMAHIST, "equalize", "-o", out_dir, "-"], stdin=f,
                              capture_output=True, timeout=180)
    written = sorted(os.listdir(out_dir)) if os.path.isdir(out_dir) else []
    if check(proc.returncode == 0 and written == ["stdin.mjpeg"],
             f"- < webcam.mjpeg: exit {proc.returncode}, wrote {written}: {proc.stderr!r}"):
        again = [p[0] for p in decoded_planes(os.path.join(out_dir, "stdin.mjpeg"), w, h,
                                              "yuvj420p")]
        check(len(again) == len(got) and all(np.array_equal(a, b) for a, b in zip(again, got)),
              f"- < webcam.mjpeg: {len(again)} frames, not those of the named file's output")
    piped_dir = os.path.join(tmp, "out-motion-jpeg-pipe")
    proc = subprocess.run([LUMAHIST, "equalize", "-o", piped_dir, "-"],
                          input=open(clip, "rb").read(), capture_output=True, timeout=180)
    err = proc.stderr.decode("utf-8", "replace")
    check(proc.returncode == 1 and len(err.splitlines()) == 1 and "a Motion JPEG video" in err,
          f"webcam.mjpeg on a pipe: exit {proc.returncode}, {err!r}")
    no_leftovers(piped_dir, "webcam.mjpeg on a pipe")


def make_clip(tmp, name, frames, codec_args, audio=True, fps="25:1"):
    """Encodes frames (and a tone) into tmp/name; returns its path."""
    raw = os.path.join(tmp, name + ".y4m")
    write_y4m(raw, frames, fps)
    path = os.path.join(tmp, name)
    seconds = len(frames) / eval(fps.replace(":", "/"))
    inputs = ["-i", raw]
    if audio:
        inputs += ["-f", "lavfi", "-i", f"sine=frequency=440:duration={seconds}"]
    ffmpeg(*inputs, *codec_args, *(["-c:a", "aac", "-b:a", "64k"] if audio else []), path)
    os.unlink(raw)
    return path


def decoded_planes(path, w, h, pix_fmt="yuv420p"):
    """Every frame's Y, U, V as FFmpeg decodes the first video stream (full
    range JPEG's as they are with pix_fmt yuvj420p, not scaled to 16 .. 235)."""
    raw = subprocess.run(["ffmpeg", "-v", "error", "-i", path, "-map", "0:v:0", "-vsync", "passthrough",
                          "-f", "rawvideo",
                          "-pix_fmt", pix_fmt, "-"], check=True, capture_output=True).stdout
    cw, ch = (w + 1) // 2, (h + 1) // 2
    size = w * h + 2 * cw * ch
    data = np.frombuffer(raw, np.uint8)
    out = []
    for k in range(len(data) // size):
        f = data[k * size:(k + 1) * size]
        out.append((f[:w * h].reshape(h, w), f[w * h:].copy()))
    return out


def video_pts(path):
    frames = probe(path, "-select_streams", "v:0", "-show_entries", "frame=pts_time")["frames"]
    return [round(float(f["pts_time"]), 4) for f in frames]


def audio_packets(path):
    """The MD5 of each audio packet's data, in order."""
    out = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "a", "-show_entries",
                          "packet=data_hash", "-show_data_hash", "MD5", "-of", "json", path],
                         check=True, capture_output=True).stdout
    return [p["data_hash"] for p in json.loads(out)["packets"]]


def audio_kept(output, clip):
    """The output's audio packets are the input's, bit for bit, in order:
    all of them, but for the packets an mp4 edit list puts outside the
    presentation (AAC's priming packet before 0, the padding after the end),
    which qtdemux does not give out."""
    got, want = audio_packets(output), audio_packets(clip)
    if not got:
        return False
    for start in range(len(want) - len(got) + 1):
        if want[start:start + len(got)] == got:
            return len(got) >= len(want) - 2
    return False


def stream_info(path):
    info = probe(path, "-show_entries",
                 "format=format_name:stream=codec_type,codec_name,width,height,r_frame_rate")
    video = [s for s in info["streams"] if s["codec_type"] == "video"]
    audio = [s for s in info["streams"] if s["codec_type"] == "audio"]
    return info["format"]["format_name"], video, audio


# --------------------------------------------------------------------------
# The reference: lh_lut_from_histogram (src/lumahist.h) and the temporal window

def lut_of(y, limited=False):
    black, white = (16, 235) if limited else (0, 255)
    h = np.bincount(y.ravel(), minlength=256).astype(np.int64)
    n = int(h.sum())
    nonzero = np.nonzero(h)[0]
    if len(nonzero) <= 1:
        return np.arange(256, dtype=np.int64)
    f = int(nonzero[0])
    s = np.float32(white - black) / np.float32(n - h[f])
    lut = np.full(256, black, np.int64)
    cum = np.cumsum(h)
    for v in range(f + 1, 256):
        lut[v] = black + min(white - black, int(np.rint(np.float32(cum[v] - cum[f]) * s)))
    return lut


def distance(a, b):
    """lh_histogram_distance of two 8-bit images."""
    def folded(y):
        h = np.bincount(y.ravel(), minlength=256).reshape(32, 8).sum(axis=1)
        return (h * (1 << 20)) // h.sum()
    return float(np.abs(folded(a) - folded(b)).sum()) / 2 / (1 << 20)


def reference_equalized(frames, window, cut_threshold=0.4, limited=False):
    out, luts = [], []
    for i, y in enumerate(frames):
        if i and distance(y, frames[i - 1]) > cut_threshold:
            luts = []
        luts = (luts + [lut_of(y, limited)])[-window:]
        n = len(luts)
        mean = (np.sum(luts, axis=0) + n // 2) // n
        out.append(mean[y].astype(np.uint8))
    return out


# --------------------------------------------------------------------------
# Groups

def drifting_frames(rng, n, h, w):
    """Frames whose histogram drifts (no cut): temporal smoothing shows."""
    base = rng.integers(0, 60, size=(h, w))
    return [np.clip(base + 40 + 6 * i + rng.integers(0, 20, size=(h, w)), 0, 255).astype(np.uint8)
            for i in range(n)]


def group_equalize(tmp):
    rng = np.random.default_rng(1505)
    h, w = 48, 70
    frames = drifting_frames(rng, 10, h, w)
    # A cut at frame 10 (much brighter content), then near-constant frames.
    frames += [rng.integers(180, 250, size=(h, w)).astype(np.uint8) for _ in range(4)]
    frames += [np.full((h, w), 90, np.uint8) for _ in range(2)]
    clip = make_clip(tmp, "clip.mp4", frames,
                     ["-c:v", "libx264", "-qp", "0", "-bf", "0", "-pix_fmt", "yuv420p"])
    got_in = decoded_planes(clip, w, h)
    if not check(len(got_in) == len(frames) and all(
            np.array_equal(a[0], b) for a, b in zip(got_in, frames)),
            "the lossless input clip does not decode to its frames"):
        return

    fmt_in, video_in, audio_in = stream_info(clip)
    for window, name in ((1, "off"), (8, "default")):
        out_dir = os.path.join(tmp, "out-" + name)
        args = ["equalize", "--crf", "0", "--range", "full", "-o", out_dir, clip]
        if window == 1:
            args[1:1] = ["--temporal-window", "1"]
        code, _, err = run(*args)
        output = os.path.join(out_dir, "clip.mp4")
        if not check(code == 0 and os.path.exists(output), f"equalize ({name}): exit {code}: {err}"):
            continue
        check(os.listdir(out_dir) == ["clip.mp4"], f"{name}: leftovers {os.listdir(out_dir)}")
        fmt, video, audio = stream_info(output)
        check(fmt == fmt_in, f"{name}: container {fmt} != {fmt_in}")
        check(len(video) == 1 and video[0]["codec_name"] == "h264", f"{name}: video {video}")
        check((video[0]["width"], video[0]["height"]) == (w, h), f"{name}: size {video}")
        check(video[0]["r_frame_rate"] == video_in[0]["r_frame_rate"],
              f"{name}: frame rate {video[0]['r_frame_rate']} != {video_in[0]['r_frame_rate']}")
        check(video_pts(output) == video_pts(clip),
              f"{name}: pts {video_pts(output)} != {video_pts(clip)}")
        check(len(audio) == 1 and audio_kept(output, clip), f"{name}: the audio packets changed")
        got = decoded_planes(output, w, h)
        want = reference_equalized(frames, window)
        check(len(got) == len(frames), f"{name}: {len(got)} frames, {len(frames)} in")
        for i, ((y, chroma), ref) in enumerate(zip(got, want)):
            if not check(np.array_equal(y, ref),
                         f"{name}: frame {i}: luma differs from the reference in "
                         f"{int((y != ref).sum())} pixels (max {int(np.abs(y.astype(int) - ref).max())})"):
                break
            check(np.array_equal(chroma, got_in[i][1]), f"{name}: frame {i}: chroma changed")
        if window == 8:
            # Temporal smoothing changes the drifting frames (else the test is void).
            plain = reference_equalized(frames, 1)
            check(any(not np.array_equal(a, b) for a, b in zip(want[:10], plain[:10])),
                  "the clip does not tell temporal smoothing from none")

    # Raw video (YUV4MPEG2) is written raw: the frames exactly, no codec.
    raw_clip = os.path.join(tmp, "raw.y4m")
    write_y4m(raw_clip, frames)
    out_dir = os.path.join(tmp, "out-raw")
    code, _, err = run("equalize", "--range", "full", "-o", out_dir, raw_clip)
    output = os.path.join(out_dir, "raw.y4m")
    if check(code == 0 and os.path.exists(output), f"raw.y4m: exit {code}: {err}"):
        with open(output, "rb") as f:
            check(f.read(10) == b"YUV4MPEG2 ", "raw.y4m: not written as YUV4MPEG2")
        got = decoded_planes(output, w, h)
        want = reference_equalized(frames, 8)
        check(len(got) == len(want) and all(np.array_equal(g[0], r) for g, r in zip(got, want)),
              "raw.y4m: the luma differs from the reference")
        check(all(np.array_equal(g[1], i[1]) for g, i in zip(got, decoded_planes(raw_clip, w, h))),
              "raw.y4m: the chroma changed")

    # An overlay --rect that misses the frame draws nothing: the video is
    # written as it was, and that is said once (it was not said at all).
    out_dir = os.path.join(tmp, "out-raw-overlay-off")
    code, _, err = run("overlay", "--rect", f"{w},0,10,10", "-o", out_dir, raw_clip)
    output = os.path.join(out_dir, "raw.y4m")
    if check(code == 0 and os.path.exists(output), f"overlay --rect off the frame: exit {code}: "
                                                    f"{err}"):
        said = [line for line in err.splitlines() if "written without the histogram panel" in line]
        check(len(said) == 1 and raw_clip in said[0],
              f"overlay --rect off the frame: said {said!r}, expected one line naming {raw_clip}")
        check(all(np.array_equal(g[0], i[0]) for g, i in zip(decoded_planes(output, w, h),
                                                             decoded_planes(raw_clip, w, h))),
              "overlay --rect off the frame: the frames changed")

    # CLAHE frame by frame equals `lumahist clahe` on each frame's Y as a
    # gray PNG (the same library call on the same plane): PNGs in and out by
    # FFmpeg, lossless both ways.
    png_dir, png_out = os.path.join(tmp, "png"), os.path.join(tmp, "png-clahe")
    os.makedirs(png_dir)
    for i, y in enumerate(frames):
        subprocess.run(["ffmpeg", "-v", "error", "-f", "rawvideo", "-pix_fmt", "gray", "-s",
                        f"{w}x{h}", "-i", "-", os.path.join(png_dir, f"{i:03d}.png")],
                       input=y.tobytes(), check=True)
    code, _, err = run("clahe", "--tiles", "3x2", "-o", png_out, png_dir)
    check(code == 0, f"clahe on PNGs: exit {code}: {err}")
    want = []
    for i in range(len(frames)):
        raw = subprocess.run(["ffmpeg", "-v", "error", "-i", os.path.join(png_out, f"{i:03d}.png"),
                              "-f", "rawvideo", "-pix_fmt", "gray", "-"],
                             check=True, capture_output=True).stdout
        want.append(np.frombuffer(raw, np.uint8).reshape(h, w))
    out_dir = os.path.join(tmp, "out-clahe-exact")
    code, _, err = run("clahe", "--tiles", "3x2", "--temporal-window", "1", "--crf", "0",
                       "--range", "full", "-o", out_dir, clip)
    if check(code == 0, f"clahe --temporal-window 1: exit {code}: {err}"):
        got = decoded_planes(os.path.join(out_dir, "clip.mp4"), w, h)
        check(len(got) == len(want), f"clahe: {len(got)} frames")
        bad = [i for i, (g, r) in enumerate(zip(got, want)) if not np.array_equal(g[0], r)]
        check(not bad, f"clahe: frames {bad} differ from `lumahist clahe` on their PNGs")
        check(any(not np.array_equal(r, f) for r, f in zip(want, frames)), "clahe changed nothing")

    # CLAHE (temporal) and overlay write a whole video too.
    for command in ("clahe", "overlay"):
        out_dir = os.path.join(tmp, "out-" + command)
        code, _, err = run(command, "--crf", "0", "-o", out_dir, clip)
        output = os.path.join(out_dir, "clip.mp4")
        if check(code == 0 and os.path.exists(output), f"{command}: exit {code}: {err}"):
            got = decoded_planes(output, w, h)
            check(len(got) == len(frames), f"{command}: {len(got)} frames")
            check(any(not np.array_equal(g[0], f) for g, f in zip(got, frames)),
                  f"{command}: the frames came out unchanged")
            check(audio_kept(output, clip), f"{command}: the audio packets changed")

    # A folder of an image and a video: both written, the video as a video.
    folder = os.path.join(tmp, "mixed")
    os.makedirs(os.path.join(folder, "sub"))
    shutil.copy(clip, os.path.join(folder, "sub", "v.mp4"))
    subprocess.run(["gst-launch-1.0", "-q", "videotestsrc", "num-buffers=1", "!",
                    "video/x-raw,width=32,height=24", "!", "pngenc", "!", "filesink",
                    f"location={os.path.join(folder, 'a.png')}"], check=True)
    out_dir = os.path.join(tmp, "out-mixed")
    code, _, err = run("equalize", "-o", out_dir, folder)
    check(code == 0, f"folder: exit {code}: {err}")
    check(os.path.exists(os.path.join(out_dir, "a.png")), "folder: a.png not written")
    v = os.path.join(out_dir, "sub", "v.mp4")
    check(os.path.exists(v) and len(video_pts(v)) == len(frames), "folder: sub/v.mp4 not written")
    # --skip-existing leaves it; --global refuses videos.
    code, _, err = run("equalize", "--skip-existing", "-v", "-o", out_dir, folder)
    check(code == 0 and "skipping 1 input whose" in err and "skipping 1 video whose" in err,
          f"--skip-existing: {code}: {err}")
    code, _, err = run("equalize", "--global", "-o", os.path.join(tmp, "g"), clip)
    check(code == 1 and "--global" in err and len(err.strip().splitlines()) == 1,
          f"--global on a video: {code}: {err}")


def check_from_standard_input(tmp, clip, name, fmt):
    """A video redirected to standard input (- < clip) is written as
    OUT/stdin with its container's extension, not as OUT/stdin."""
    out_dir = os.path.join(tmp, "stdin-" + name)
    with open(clip, "rb") as f:
        proc = subprocess.run([LUMAHIST, "equalize", "--out", out_dir, "-"], stdin=f,
                              capture_output=True, timeout=180)
    written = sorted(os.listdir(out_dir)) if os.path.isdir(out_dir) else []
    want = "stdin" + os.path.splitext(name)[1]
    if check(proc.returncode == 0 and written == [want],
             f"- < {name}: exit {proc.returncode}, wrote {written}, not [{want!r}]: "
             f"{proc.stderr.decode('utf-8', 'replace')}"):
        got_fmt = stream_info(os.path.join(out_dir, want))[0]
        check(got_fmt == fmt, f"- < {name}: container {got_fmt} != {fmt}")


def group_containers(tmp):
    rng = np.random.default_rng(77)
    h, w = 36, 52
    frames = drifting_frames(rng, 12, h, w)
    cases = [
        ("h265.mkv", ["-c:v", "libx265", "-x265-params", "log-level=none", "-pix_fmt", "yuv420p"],
         "hevc", "matroska,webm"),
        ("vp9.webm", ["-c:v", "libvpx-vp9", "-pix_fmt", "yuv420p", "-c:a", "libopus"], "vp9",
         "matroska,webm"),
        ("mpeg4.avi", ["-c:v", "mpeg4", "-q:v", "2"], "mpeg4", "avi"),
        # theoraenc's three headers have no time: the frames' check refused
        # them, and with them every Ogg/Theora file.
        ("theora.ogv", ["-c:v", "libtheora", "-q:v", "8", "-c:a", "libvorbis"], "theora", "ogg"),
        ("h264.ts", ["-c:v", "libx264", "-bf", "0", "-pix_fmt", "yuv420p"], "h264", "mpegts"),
        ("mpeg2.ts", ["-c:v", "mpeg2video", "-q:v", "2"], "mpeg2video", "mpegts"),
        ("h264.3gp", ["-c:v", "libx264", "-bf", "0", "-pix_fmt", "yuv420p"], "h264",
         "mov,mp4,m4a,3gp,3g2,mj2"),
        # Bare elementary streams, no container (they had no muxer): the
        # encoder's packets one after the other, H.264 and H.265 with start
        # codes.  Their first bytes tell them on standard input too.
        ("h264.h264", ["-c:v", "libx264", "-bf", "0", "-pix_fmt", "yuv420p", "-f", "h264"],
         "h264", "h264"),
        ("h265.hevc", ["-c:v", "libx265", "-x265-params", "log-level=none", "-pix_fmt", "yuv420p",
                       "-f", "hevc"], "hevc", "hevc"),
        ("mpeg2.m2v", ["-c:v", "mpeg2video", "-q:v", "2", "-f", "mpeg2video"], "mpeg2video",
         "mpegvideo"),
    ]
    for name, codec_args, codec, fmt in cases:
        elementary = name.endswith((".h264", ".hevc", ".m2v"))
        audio = not name.endswith((".webm", ".ogv")) and not elementary
        try:
            if name.endswith((".webm", ".ogv")):
                raw = os.path.join(tmp, name + ".y4m")
                write_y4m(raw, frames)
                ffmpeg("-i", raw, "-f", "lavfi", "-i", "sine=duration=0.48", *codec_args,
                       os.path.join(tmp, name))
                clip = os.path.join(tmp, name)
                audio = True
            else:
                clip = make_clip(tmp, name, frames, codec_args, audio=audio)
        except subprocess.CalledProcessError as e:
            print(f"note: cannot make {name} here ({e}); left out")
            continue
        out_dir = os.path.join(tmp, "out-" + name)
        code, _, err = run("equalize", "-v", "-o", out_dir, clip)
        output = os.path.join(out_dir, name)
        if not check(code == 0 and os.path.exists(output), f"{name}: exit {code}: {err}"):
            continue
        got_fmt, video, audio_streams = stream_info(output)
        check(got_fmt == fmt, f"{name}: container {got_fmt} != {fmt}")
        check_from_standard_input(tmp, clip, name, fmt)
        check(len(video) == 1 and video[0]["codec_name"] == codec, f"{name}: video {video}")
        check((video[0]["width"], video[0]["height"]) == (w, h), f"{name}: size")
        # A bare stream holds no times: its frames are counted below.
        pts_out, pts_in = (np.array([]), np.array([])) if elementary else (
            np.array(video_pts(output)), np.array(video_pts(clip)))
        if not elementary and check(len(pts_out) == len(pts_in) == len(frames),
                 f"{name}: {len(pts_out)} frames out, {len(pts_in)} in"):
            if name.endswith(".ts"):
                # MPEG-TS times have no origin (FFmpeg starts at 1.4 s,
                # mpegtsmux at 3600 s): the times between frames are kept.
                pts_out, pts_in = pts_out - pts_out[0], pts_in - pts_in[0]
            if name.endswith(".mkv"):
                # README: matroskamux writes the first frame at 0 when the
                # input's B-frames left it without a DTS (here 23 ms, FFmpeg's
                # AAC delay); the others keep theirs.
                check(abs(pts_out[0] - pts_in[0]) <= 0.04, f"{name}: first pts {pts_out[0]}")
                pts_out, pts_in = pts_out[1:], pts_in[1:]
            if not name.endswith(".avi"):  # AVI has frame numbers, not times
                check(np.allclose(pts_out, pts_in, atol=0.002),
                      f"{name}: pts {pts_out} != {pts_in}")
        if audio:
            check(len(audio_streams) == 1 and audio_kept(output, clip),
                  f"{name}: the audio packets changed")
        # Lossy here: the luma must be the equalization of the decoded input
        # frames, within the encoder's loss (the clip drifts by 6 code values a
        # frame: a frame off by one, or no equalization, is far beyond).
        got = decoded_planes(output, w, h)
        # Untagged clips: GStreamer reads them as limited range, and the
        # equalization spans 16 .. 235.
        want = reference_equalized([p[0] for p in decoded_planes(clip, w, h)], 8, limited=True)
        worst = max(float(np.abs(g[0].astype(int) - r).mean()) for g, r in zip(got, want))
        def error(reference):
            """Mean absolute luma error, and mean error of the frame means."""
            pixels = max(float(np.abs(g[0].astype(int) - r).mean()) for g, r in zip(got, reference))
            means = max(abs(float(g[0].mean()) - float(r.mean())) for g, r in zip(got, reference))
            return pixels, means
        decoded = [p[0] for p in decoded_planes(clip, w, h)]
        right = error(want)
        wrong_window = error(reference_equalized(decoded, 1, limited=True))
        wrong_range = error(reference_equalized(decoded, 8, limited=False))
        print(f"{name}: luma error (pixels, means) {right}; with no temporal window "
              f"{wrong_window}; full range {wrong_range}")
        check(len(got) == len(want) and right[0] < 5.0 and right[1] < 1.0,
              f"{name}: luma off the reference by {right} (pixels, means)")
        check(right[0] < wrong_window[0] and right[1] < wrong_range[1],
              f"{name}: a wrong reference fits as well as the right one")
        print(f"{name}: {err.strip()}")

    check_rotation_kept(tmp)
    check_movie_facts_kept(tmp)
    check_mpeg12(tmp, rng)
    check_encoder_quirks(tmp, rng)
    check_dnxhd(tmp)
    check_interlaced_mpeg2(tmp)
    check_full_range_kept(tmp, rng)
    check_alpha_said(tmp)
    check_second_video_copied(tmp)
    check_timecode_said(tmp)
    check_attachments_said(tmp)

    # Subtitles: mov_text in mp4 copied packet for packet (but for the empty
    # one FFmpeg puts at 0 before the first cue); SRT in Matroska, which
    # matroskamux does not take as matroskademux gives it, left out with a line.
    srt = os.path.join(tmp, "cues.srt")
    with open(srt, "w") as f:
        f.write("1\n00:00:00,100 --> 00:00:00,300\nHello\n\n"
                "2\n00:00:00,320 --> 00:00:00,440\nWorld\n")
    base = make_clip(tmp, "base.mp4", frames, ["-c:v", "libx264", "-pix_fmt", "yuv420p"])
    for name, codec in (("subs.mp4", "mov_text"), ("subs.mkv", "srt")):
        clip = os.path.join(tmp, name)
        ffmpeg("-i", base, "-i", srt, "-map", "0", "-map", "1", "-c", "copy", "-c:s", codec, clip)
        out_dir = os.path.join(tmp, "out-" + name)
        code, _, err = run("equalize", "-o", out_dir, clip)
        output = os.path.join(out_dir, name)
        if not check(code == 0 and os.path.exists(output), f"{name}: exit {code}: {err}"):
            continue
        def cues(path):
            out = subprocess.run(
                ["ffprobe", "-v", "error", "-select_streams", "s", "-show_entries",
                 "packet=pts_time,size,data_hash", "-show_data_hash", "MD5", "-of", "json", path],
                check=True, capture_output=True).stdout
            return [(p["pts_time"], p["data_hash"]) for p in json.loads(out)["packets"]
                    if int(p["size"]) > 2]
        if codec == "mov_text":
            check(len(cues(clip)) == 2 and cues(output) == cues(clip),
                  f"{name}: subtitles {cues(output)} != {cues(clip)}")
            check(err == "", f"{name}: {err!r}")
        else:
            check(err.count("\n") == 1 and "written without its stream text/x-raw" in err,
                  f"{name}: {err!r}")
            check(audio_kept(output, clip), f"{name}: the audio packets changed")

    # A transport stream whose map lists AAC as private data (FFmpeg's
    # Blu-ray-style m2ts: type 0x06, no descriptor), which tsdemux never gives
    # out: the file was written without it in silence.  Said; one whose
    # streams all come out says nothing.
    for name, extra, said in (("bluray.m2ts", ["-mpegts_m2ts_mode", "1"], True),
                              ("plain.m2ts", ["-f", "mpegts"], False)):
        clip = make_clip(tmp, name, frames[:2] * 25, ["-c:v", "libx264", *extra], audio=said)
        out_dir = os.path.join(tmp, "out-" + name)
        code, _, err = run("equalize", "-o", out_dir, clip)
        want = ("written without its stream that GStreamer's tsdemux did not give out (1 of the "
                "2 streams its program's map lists)")
        check(code == 0 and (want in err) == said and (err.count("\n") == 1) == said,
              f"{name}: exit {code}: {err!r}")

    # A sound track shorter than a fifth of the file, which GStreamer's
    # qtdemux skips ("assuming preview image"): the file was written without
    # its audio in silence.  Said, as a stream left out is.
    short_audio = make_clip(tmp, "short-audio.mp4", frames[:2] * 10,
                            ["-c:v", "libx264"], audio=False)
    with_short = os.path.join(tmp, "short-sound.mp4")
    ffmpeg("-i", short_audio, "-f", "lavfi", "-i", "sine=duration=0.1", "-map", "0:v",
           "-map", "1:a", "-c:v", "copy", "-c:a", "aac", with_short)
    if check(len(stream_info(with_short)[1]) == 1 and len(stream_info(with_short)[2]) == 1,
             f"short-sound.mp4: {stream_info(with_short)}"):
        out_dir = os.path.join(tmp, "out-short-sound")
        code, _, err = run("equalize", "-o", out_dir, with_short)
        check(code == 0 and err.count("\n") == 1 and
              "written without its stream of audio that GStreamer's qtdemux skips as shorter "
              "than a fifth of the file (1 of its 1 sound tracks)" in err,
              f"short-sound.mp4: exit {code}: {err!r}")

    # 10-bit H.265 stays 10-bit, equalized over the 10-bit limited range
    # (64 .. 940): a narrow input comes out spanning it.
    raw = os.path.join(tmp, "ten.y4m")
    write_y4m(raw, [(f // 4 + 100) for f in frames])  # 100 .. 163 of 255
    ten = os.path.join(tmp, "ten.mkv")
    try:
        ffmpeg("-i", raw, "-c:v", "libx265", "-x265-params", "log-level=none:lossless=1",
               "-pix_fmt", "yuv420p10le", ten)
    except subprocess.CalledProcessError as e:
        print(f"note: no 10-bit libx265 here ({e}); left out")
        ten = None
    if ten:
        out_dir = os.path.join(tmp, "out-ten")
        code, _, err = run("equalize", "--crf", "0", "-o", out_dir, ten)
        output = os.path.join(out_dir, "ten.mkv")
        if check(code == 0, f"ten.mkv: exit {code}: {err}"):
            info = probe(output, "-show_entries", "stream=pix_fmt")["streams"][0]
            check(info["pix_fmt"] == "yuv420p10le", f"ten.mkv: {info}")
            # yuv420p10le, not gray10le: swscale would stretch limited to full.
            raw_out = subprocess.run(["ffmpeg", "-v", "error", "-i", output, "-f", "rawvideo",
                                      "-pix_fmt", "yuv420p10le", "-"],
                                     check=True, capture_output=True).stdout
            size = w * h + 2 * ((w + 1) // 2) * ((h + 1) // 2)
            planes = np.frombuffer(raw_out, "<u2").reshape(-1, size)
            y = planes[:, :w * h].reshape(-1, h, w)
            check(len(y) == len(frames), f"ten.mkv: {len(y)} frames")
            check(y[0].min() == 64 and y[0].max() == 940,
                  f"ten.mkv: the first frame spans {y[0].min()} .. {y[0].max()}, not 64 .. 940")
            # Each input level kept apart (a monotone map over 876 codes), and
            # not on 8-bit steps.
            levels = len(np.unique(frames[0] // 4))
            check(len(np.unique(y[0])) == levels and np.any(y[0] % 4 != 0),
                  f"ten.mkv: {len(np.unique(y[0]))} levels (input {levels}), or on 8-bit steps")

    # Variable frame rate: each frame keeps its own time.
    raw = os.path.join(tmp, "vfr.y4m")
    write_y4m(raw, frames)
    vfr = os.path.join(tmp, "vfr.mp4")
    ffmpeg("-i", raw, "-vf", "setpts='N*N*0.01/TB'", "-fps_mode", "vfr", "-c:v", "libx264",
           "-bf", "0", "-pix_fmt", "yuv420p", vfr)
    out_dir = os.path.join(tmp, "out-vfr")
    code, _, err = run("equalize", "-o", out_dir, vfr)
    if check(code == 0, f"vfr.mp4: exit {code}: {err}"):
        pts_in, pts_out = video_pts(vfr), video_pts(os.path.join(out_dir, "vfr.mp4"))
        check(len(set(np.round(np.diff(pts_in), 3))) >= 4, f"vfr.mp4 is not VFR: {pts_in}")
        check(pts_out == pts_in, f"vfr.mp4: pts {pts_out} != {pts_in}")

    # --codec overrides; an unknown one is a usage-like failure of that file.
    clip = make_clip(tmp, "c.mp4", frames, ["-c:v", "libx264", "-pix_fmt", "yuv420p"], audio=False)
    out_dir = os.path.join(tmp, "out-codec")
    code, _, err = run("equalize", "--codec", "x265enc", "-o", out_dir, clip)
    if check(code == 0, f"--codec x265enc: exit {code}: {err}"):
        _, video, _ = stream_info(os.path.join(out_dir, "c.mp4"))
        check(video[0]["codec_name"] == "hevc", f"--codec x265enc gave {video}")
    code, _, err = run("equalize", "--codec", "nosuchenc", "-o", os.path.join(tmp, "x"), clip)
    check(code == 1 and "nosuchenc" in err and not os.path.exists(os.path.join(tmp, "x", "c.mp4")),
          f"--codec nosuchenc: {code}: {err}")
    code, _, err = run("equalize", "--crf", "52", "-o", out_dir, clip)
    check(code == 2 and "--crf" in err, f"--crf 52: {code}: {err}")
    code, _, err = run("equalize", "--crf", "20", "--bitrate", "500", "-o", out_dir, clip)
    check(code == 2 and "--bitrate" in err, f"--crf with --bitrate: {code}: {err}")

    # --bitrate: x264enc's mean rate lands near the one asked for.
    rich = make_clip(tmp, "rich.mp4", drifting_frames(rng, 50, 180, 320),
                     ["-c:v", "libx264", "-qp", "0", "-pix_fmt", "yuv420p"], audio=False)
    for kbps in (150, 1500):
        out_dir = os.path.join(tmp, f"out-rate{kbps}")
        code, _, err = run("equalize", "--bitrate", str(kbps), "-o", out_dir, rich)
        if check(code == 0, f"--bitrate {kbps}: exit {code}: {err}"):
            rate = int(probe(os.path.join(out_dir, "rich.mp4"), "-show_entries",
                             "stream=bit_rate")["streams"][0]["bit_rate"]) / 1000
            check(0.7 * kbps < rate < 1.3 * kbps, f"--bitrate {kbps}: {rate:.0f} kbit/s")


def rotation_of(path):
    """The display rotation ffprobe reads from the video track, or None."""
    streams = probe(path, "-select_streams", "v", "-show_entries",
                    "stream_side_data=rotation")["streams"]
    for data in streams[0].get("side_data_list", []) if streams else []:
        if "rotation" in data:
            return int(data["rotation"])
    return None


def rotated(clip, degrees, path):
    """A copy of clip whose track header says to turn it (a phone's portrait
    clip): -display_rotation (FFmpeg 6 and later), else the rotate tag."""
    newer = subprocess.run(["ffmpeg", "-v", "error", "-y", "-display_rotation", str(degrees),
                            "-i", clip, "-c", "copy", path], capture_output=True)
    if newer.returncode != 0:
        ffmpeg("-i", clip, "-c", "copy", "-metadata:s:v:0", f"rotate={degrees}", path)
    return path


def check_rotation_kept(tmp):
    """A video's rotation (a phone's portrait clip) is in the file written
    back, MP4, QuickTime and 3GP, for each quarter turn; GStreamer 1.22's
    mp4mux, qtmux and 3gppmux write none (mp4-rotation.c puts it in), and a
    clip with none stays without."""
    rng = np.random.default_rng(5)
    frames = drifting_frames(rng, 6, 36, 52)
    base = make_clip(tmp, "upright.mp4", frames, ["-c:v", "libx264", "-pix_fmt", "yuv420p"],
                     audio=False)
    clips = [base]
    for degrees in (90, 180, 270):
        for container in ("mp4", "mov", "3gp"):
            path = rotated(base, degrees, os.path.join(tmp, f"turned-{degrees}.{container}"))
            if rotation_of(path) is None:
                print(f"note: this FFmpeg wrote no rotation into {path}; left out")
                continue
            clips.append(path)
    out_dir = os.path.join(tmp, "out-rotation")
    code, _, err = run("equalize", "-o", out_dir, *clips)
    check(code == 0, f"rotated clips: exit {code}: {err}")
    for clip in clips:
        output = os.path.join(out_dir, os.path.basename(clip))
        if check(os.path.exists(output), f"{clip}: no output"):
            check(rotation_of(output) == rotation_of(clip),
                  f"{os.path.basename(clip)}: rotation {rotation_of(output)} written, the "
                  f"input's {rotation_of(clip)}")
    print(f"rotation kept in {len(clips) - 1} turned clips")
    flat = [np.full((96, 160), 128, np.uint8) for _ in range(3)]
    upright = make_clip(tmp, "flat-upright.mp4", flat,
                        ["-c:v", "libx264", "-pix_fmt", "yuv420p"], audio=False)
    turned = [upright] + [path for path in (
        rotated(upright, degrees, os.path.join(tmp, f"flat-{degrees}.mp4"))
        for degrees in (90, 180, 270)) if rotation_of(path) is not None]
    check_overlay_upright(tmp, turned, 96, 160)


def movie_facts(path):
    """What ffprobe reads of a file's creation time, title, comment and
    chapters: the container's creation_time, each stream's, and each
    chapter's start, end and title."""
    info = probe(path, "-show_entries",
                 "format_tags:stream_tags=creation_time:chapter=start_time,"
                 "end_time:chapter_tags=title")
    tags = {k.lower(): v for k, v in info.get("format", {}).get("tags", {}).items()}
    return {"creation_time": tags.get("creation_time"),
            "title": tags.get("title"), "comment": tags.get("comment", tags.get("comments")),
            "streams": [s.get("tags", {}).get("creation_time") for s in info["streams"]],
            "chapters": [(round(float(c["start_time"]), 3), round(float(c["end_time"]), 3),
                          c.get("tags", {}).get("title")) for c in info.get("chapters", [])]}


def check_movie_facts_kept(tmp):
    """A clip's creation time, chapters, title and comment are in the file
    written back: GStreamer 1.22's qtmux and mp4mux stamp the time of the run
    into the movie, track and media headers and write no chapters
    (mp4-creation-time.c and mp4-chapters.c put the input's in); matroskamux
    is given the input's DateUTC (its creation-time) and writes chapters
    itself, but writes tag values quoted and escaped as GStreamer serializes
    them ("Caf\\303\\251\\ at..."; mkv-tags.c turns them back).  A
    QuickTime file without a creation time stays without."""
    rng = np.random.default_rng(11)
    frames = drifting_frames(rng, 12, 36, 52)
    meta = os.path.join(tmp, "chapters.ffmeta")
    with open(meta, "w") as f:
        f.write(";FFMETADATA1\n"
                "[CHAPTER]\nTIMEBASE=1/1000\nSTART=0\nEND=200\ntitle=Opening shot\n"
                "[CHAPTER]\nTIMEBASE=1/1000\nSTART=200\nEND=480\ntitle=The rest\n")
    base = make_clip(tmp, "facts-base.mp4", frames, ["-c:v", "libx264", "-pix_fmt", "yuv420p"])
    when = "2019-05-04T03:02:01.000000Z"
    title, comment = 'Café at the "old" pier', "two  spaces, a\\backslash"
    clips = []
    for name in ("facts.mp4", "facts.mov", "facts.mkv"):
        clip = os.path.join(tmp, name)
        ffmpeg("-i", base, "-i", meta, "-map", "0", "-map_metadata", "1", "-map_chapters", "1",
               "-c", "copy", "-metadata", "creation_time=" + when, "-metadata", "title=" + title,
               "-metadata", "comment=" + comment, clip)
        clips.append(clip)
    undated = os.path.join(tmp, "undated.mov")
    ffmpeg("-i", base, "-map", "0", "-c", "copy", undated)
    clips.append(undated)
    out_dir = os.path.join(tmp, "out-facts")
    code, _, err = run("equalize", "-o", out_dir, *clips)
    check(code == 0, f"clips with chapters and a creation time: exit {code}: {err}")
    for clip in clips:
        name = os.path.basename(clip)
        output = os.path.join(out_dir, name)
        if not check(os.path.exists(output), f"{name}: no output"):
            continue
        want, got = movie_facts(clip), movie_facts(output)
        if name != "undated.mov":
            check(want["creation_time"] == when and len(want["chapters"]) == 2 and
                  want["title"] == title and want["comment"] == comment,
                  f"{name}: FFmpeg made {want}")
            check(got["title"] == title and got["comment"] == comment,
                  f"{name}: title {got['title']!r} and comment {got['comment']!r}, the input's "
                  f"{title!r} and {comment!r}")
        check(got["creation_time"] == want["creation_time"],
              f"{name}: creation time {got['creation_time']}, the input's "
              f"{want['creation_time']}")
        if not name.endswith(".mkv"):
            check(all(t == want["creation_time"] for t in got["streams"]),
                  f"{name}: the streams' creation times {got['streams']}, the input's "
                  f"{want['creation_time']}")
        check(got["chapters"] == want["chapters"],
              f"{name}: chapters {got['chapters']}, the input's {want['chapters']}")
        check(frames_in(output) == len(frames) and audio_kept(output, clip),
              f"{name}: frames or audio lost with the chapters put in")


def check_mpeg12(tmp, rng):
    """MPEG-1 and MPEG-2 video are written back as they came, by mpeg2enc:
    gst-libav 1.22's avenc_mpeg1video and avenc_mpeg2video refuse every frame
    rate ("Internal data stream error"), and MPEG-2 went to the MPEG-1 one.
    A frame rate MPEG-1/2 has not, or a picture size mpeg2enc cannot write
    (mjpegtools would end the process), is one clear line for that file, and
    the run goes on."""
    if subprocess.run(["gst-inspect-1.0", "mpeg2enc"], capture_output=True).returncode != 0:
        print("note: no mpeg2enc (gstreamer1.0-plugins-bad) here: MPEG-1/2 not checked")
        return
    h, w = 36, 52
    frames = drifting_frames(rng, 12, h, w)
    clips = [make_clip(tmp, name, frames, ["-c:v", codec, "-q:v", "2"], audio=False)
             for name, codec in (("mpeg1.mpg", "mpeg1video"), ("mpeg2.mpg", "mpeg2video"))]
    out_dir = os.path.join(tmp, "out-mpeg12")
    code, _, err = run("equalize", "-o", out_dir, *clips)
    check(code == 0, f"MPEG-1/2 program streams: exit {code}: {err}")
    for clip in clips:
        name = os.path.basename(clip)
        output = os.path.join(out_dir, name)
        if not check(os.path.exists(output), f"{name}: no output"):
            continue
        _, video_in, _ = stream_info(clip)
        _, video_out, _ = stream_info(output)
        check([(v["codec_name"], v["width"], v["height"]) for v in video_out] ==
              [(v["codec_name"], v["width"], v["height"]) for v in video_in],
              f"{name}: video {video_out}, the input's {video_in}")
        check(frames_in(output) == len(frames), f"{name}: {frames_in(output)} frames")
        got = [p[0] for p in decoded_planes(output, w, h)]
        want = reference_equalized([p[0] for p in decoded_planes(clip, w, h)], 8, limited=True)
        worst = max(float(np.abs(g.astype(int) - r).mean()) for g, r in zip(got, want))
        check(len(got) == len(want) and worst < 5.0,
              f"{name}: luma off the reference by {worst:.2f} a pixel")
    good = clips[1]
    slow = make_clip(tmp, "slow.ts", frames, ["-c:v", "libx264", "-pix_fmt", "yuv420p", "-r", "15"],
                     audio=False, fps="15:1")
    odd = make_clip(tmp, "odd.ts", [f[:, :-1] for f in frames],
                    ["-c:v", "libx264", "-pix_fmt", "yuv444p"], audio=False)
    out_dir = os.path.join(tmp, "out-mpeg2enc")
    code, _, err = run("equalize", "--codec", "mpeg2enc", "-o", out_dir, slow, odd, good)
    check(code == 1 and "slow.ts: its frame rate, 15, is not one mpeg2enc takes (24000/1001, 24, "
          "25, 30000/1001, 30, 50, 60000/1001)" in err and
          "odd.ts: mpeg2enc cannot write 51x36 pictures" in err,
          f"--codec mpeg2enc of a 15 fps and a 51x36 clip: exit {code}: {err}")
    written = sorted(os.listdir(out_dir)) if os.path.isdir(out_dir) else []
    # mjpegtools ended the process on the odd clip: mpeg2.mpg was never
    # done, and the odd clip's hidden temporary file stayed.
    check(written == ["mpeg2.mpg"], f"--codec mpeg2enc: the folder holds {written}")
    check_mpeg12_without_mpeg2enc(tmp, clips, slow)
    check_program_stream_read_back(tmp)


def check_second_video_copied(tmp):
    """A file of two video streams is written with the first equalized and
    the second copied, packet for packet.  parsebin gives that second H.264
    stream in the avc form, which mpegtsmux does not take: an MPEG-TS of two
    video streams failed whole ("avdec_h264 decodes its video to a pixel
    format that GStreamer has no format for")."""
    source = os.path.join(tmp, "two-videos.mkv")
    ffmpeg("-f", "lavfi", "-i", "testsrc2=size=160x120:rate=25:duration=2",
           "-f", "lavfi", "-i", "mandelbrot=size=96x64:rate=25", "-f", "lavfi", "-i",
           "sine=duration=2", "-map", "0", "-map", "1", "-map", "2", "-t", "2",
           "-c:v", "libx264", "-pix_fmt", "yuv420p", "-c:a", "aac", source)
    clips = [source]
    for container in ("mp4", "ts"):
        clips.append(os.path.join(tmp, f"two-videos.{container}"))
        ffmpeg("-i", source, "-map", "0", "-c", "copy", clips[-1])
    out_dir = os.path.join(tmp, "out-two-videos")
    code, _, err = run("equalize", "-o", out_dir, *clips)
    check(code == 0 and err == "", f"files of two video streams: exit {code}: {err}")

    def frame_sums(path, stream):
        lines = subprocess.run(["ffmpeg", "-v", "error", "-i", path, "-map", f"0:v:{stream}",
                                "-f", "framemd5", "-"], capture_output=True, text=True).stdout
        return [line.split(",")[-1].strip() for line in lines.splitlines()
                if line and not line.startswith("#")]

    for clip in clips:
        name = os.path.basename(clip)
        output = os.path.join(out_dir, name)
        if not check(os.path.exists(output), f"{name} of two video streams: no output"):
            continue
        _, video, audio = stream_info(output)
        sizes = [(v["width"], v["height"]) for v in video]
        check(sizes == [(160, 120), (96, 64)] and len(audio) == 1,
              f"{name}: written with video streams {sizes}, {len(audio)} audio streams")
        second = frame_sums(clip, 1)
        check(len(second) == 50 and frame_sums(output, 1) == second,
              f"{name}: its second video stream not copied frame for frame "
              f"({len(frame_sums(output, 1))} frames, {len(second)} in the input)")
        check(frame_sums(output, 0) != frame_sums(clip, 0),
              f"{name}: its first video stream was not equalized")


def check_timecode_said(tmp):
    """A QuickTime or MP4 file with a timecode track (tmcd, as cameras and
    editors write it) was written without it, and nothing said so:
    GStreamer 1.22's qtdemux exposes no such track.  One line says it; a
    file without one gets none."""
    clips = []
    for name, timecode in (("timecode.mov", ["-timecode", "01:00:00:00"]),
                           ("timecode.mp4", ["-timecode", "10:20:30:12"]), ("plain.mov", [])):
        clips.append(os.path.join(tmp, name))
        ffmpeg("-f", "lavfi", "-i", "testsrc2=size=96x64:rate=25:duration=1", "-c:v", "libx264",
               "-pix_fmt", "yuv420p", *timecode, clips[-1])
        tracks = probe(clips[-1], "-show_entries", "stream=codec_tag_string")["streams"]
        check(("tmcd" in [t["codec_tag_string"] for t in tracks]) == bool(timecode),
              f"{name}: FFmpeg wrote tracks {tracks}")
    out_dir = os.path.join(tmp, "out-timecode")
    code, _, err = run("equalize", "-o", out_dir, *clips)
    said = [line for line in err.splitlines() if line]
    want = [f"lumahist: {clip}: written without its timecode track (tmcd): GStreamer 1.22's "
            "qtdemux gives none to copy" for clip in clips[:2]]
    check(code == 0 and said == want and
          all(os.path.exists(os.path.join(out_dir, os.path.basename(c))) for c in clips),
          f"files with a timecode track: exit {code}, {said}")


def check_attachments_said(tmp):
    """A Matroska file's attached files (the fonts its ASS subtitles are
    drawn with, a cover) were dropped without a word: GStreamer 1.22's
    matroskamux writes none.  One line says how many; its tags, still
    unquoted in the file written, show the walk over the segment's
    children that both use."""
    fonts = sorted(glob.glob("/usr/share/fonts/truetype/*/*.ttf"))[:2]
    if len(fonts) < 2:
        print("note: fewer than two fonts under /usr/share/fonts/truetype: attachments not "
              "checked")
        return
    attached = os.path.join(tmp, "attached.mkv")
    ffmpeg("-f", "lavfi", "-i", "testsrc2=size=96x64:rate=25:duration=1", "-c:v", "libx264",
           "-pix_fmt", "yuv420p", "-attach", fonts[0], "-attach", fonts[1],
           "-metadata:s:t", "mimetype=application/x-truetype-font", "-metadata", "title=My clip",
           attached)
    plain = os.path.join(tmp, "unattached.mkv")
    ffmpeg("-i", attached, "-map", "0:v", "-c", "copy", plain)
    kinds = [s["codec_type"] for s in probe(attached, "-show_entries",
                                            "stream=codec_type")["streams"]]
    check(kinds.count("attachment") == 2, f"attached.mkv: FFmpeg wrote streams {kinds}")
    out_dir = os.path.join(tmp, "out-attached")
    code, _, err = run("equalize", "-o", out_dir, attached, plain)
    said = [line for line in err.splitlines() if line]
    check(code == 0 and said == [f"lumahist: {attached}: written without its 2 attached files "
                                 "(fonts, covers): GStreamer 1.22's matroskamux writes none"],
          f"a Matroska file with 2 attachments: exit {code}, {said}")
    tags = probe(os.path.join(out_dir, "attached.mkv"), "-show_entries",
                 "format_tags")["format"].get("tags", {})
    title = {key.lower(): value for key, value in tags.items()}.get("title")
    check(title == "My clip", f"attached.mkv written back: its title {title!r}")


def check_alpha_said(tmp):
    """A WebM whose VP9 carries an alpha channel (motion graphics, as
    FFmpeg writes yuva420p) was written back opaque with no word: no
    GStreamer 1.22 encoder or muxer writes VP8/VP9 alpha.  The frames are
    written, and one line says the alpha is not."""
    missing = [e for e in ("vp9dec", "vp9enc", "webmmux")
               if subprocess.run(["gst-inspect-1.0", e], capture_output=True).returncode != 0]
    if missing:
        print(f"note: no {', '.join(missing)} here: VP9 alpha not checked")
        return
    clip = os.path.join(tmp, "alpha.webm")
    try:
        ffmpeg("-f", "lavfi", "-i", "testsrc2=size=64x48:rate=25:duration=1,format=yuva420p",
               "-c:v", "libvpx-vp9", "-pix_fmt", "yuva420p", clip)
    except subprocess.CalledProcessError as e:
        print(f"note: cannot make alpha.webm here ({e}); not checked")
        return
    out_dir = os.path.join(tmp, "out-alpha")
    code, _, err = run("equalize", "-o", out_dir, clip)
    output = os.path.join(out_dir, "alpha.webm")
    check(code == 0 and err == f"lumahist: {clip}: written without its alpha channel (GStreamer "
          "1.22 writes no VP8 or VP9 alpha): its frames are opaque\n" and
          os.path.exists(output) and frames_in(output) == 25,
          f"alpha.webm: exit {code}, {err!r}")
    opaque = os.path.join(tmp, "opaque.webm")
    ffmpeg("-f", "lavfi", "-i", "testsrc2=size=64x48:rate=25:duration=1", "-c:v", "libvpx-vp9",
           "-pix_fmt", "yuv420p", opaque)
    code, _, err = run("equalize", "-o", os.path.join(tmp, "out-opaque"), opaque)
    check(code == 0 and err == "", f"opaque.webm: exit {code}, {err!r}")


def check_program_stream_read_back(tmp):
    """An MPEG-2 program stream (a DVD's .vob) whose audio begins before its
    video, as FFmpeg and DVDs write them, was written by mpegpsmux with the
    audio's first times below zero: `lumahist stats` of the output dropped
    its first half second of frames and then waited 30 s for a last frame
    ("the decoding pipeline is stuck").  The output reads back whole, by
    this tool and by FFmpeg, at the input's times, its MP2 or AC-3 audio
    kept (mpegpsmux took no AC-3).  With B-pictures, whose packets FFmpeg
    packs several to a time, the decoder repeated times and the encoder
    lost one: "mpeg2enc's frames reach the muxer without timestamps", for
    MPEG-1 (.mpg) as for MPEG-2."""
    if subprocess.run(["gst-inspect-1.0", "avmux_vob"], capture_output=True).returncode != 0:
        print("note: no avmux_vob (gstreamer1.0-libav) here: MPEG-2 program streams written "
              "by mpegpsmux, not checked")
        return
    source = ["-f", "lavfi", "-i", "testsrc2=size=352x288:rate=25:duration=3", "-f", "lavfi",
              "-i", "sine=sample_rate=48000:duration=3"]
    clips = []
    for name, video, audio, container in (("mp2.vob", "mpeg2video", "mp2", "vob"),
                                          ("ac3.vob", "mpeg2video", "ac3", "vob"),
                                          ("mpeg1.mpg", "mpeg1video", "mp2", "mpeg")):
        clips.append(os.path.join(tmp, name))
        # FFmpeg's default quality: small pictures, several to a packet.
        ffmpeg(*source, "-c:v", video, "-bf", "2", "-c:a", audio, "-f", container, clips[-1])
    out_dir = os.path.join(tmp, "out-vob")
    code, _, err = run("equalize", "-o", out_dir, *clips)
    check(code == 0 and err == "", f"program streams with audio: exit {code}: {err}")

    def start_times(path):
        streams = probe(path, "-show_entries", "stream=codec_type,codec_name,start_time")["streams"]
        return sorted((s["codec_type"], s["codec_name"], round(float(s["start_time"]), 3))
                      for s in streams)

    for clip in clips:
        name = os.path.basename(clip)
        output = os.path.join(out_dir, name)
        if not check(os.path.exists(output), f"{name}: no output"):
            continue
        want = start_times(clip)
        check(want[0][0] == "audio" and want[0][2] < want[1][2],
              f"{name}: FFmpeg's audio does not begin before its video: {want}")
        check(start_times(output) == want,
              f"{name}: streams and their start times {start_times(output)}, the input's {want}")
        start = time.monotonic()
        code, out, err = run("stats", "--no-histogram", output)
        took = time.monotonic() - start
        summary = [r for r in map(json.loads, out.splitlines()) if r.get("summary")]
        check(code == 0 and err == "" and took < 20 and summary and summary[0]["complete"] and
              summary[0]["frames"] == 75 and frames_in(output) == 75,
              f"{name} written back, read by stats: exit {code} in {took:.1f} s, "
              f"{summary and (summary[0]['complete'], summary[0]['frames'])}, "
              f"FFmpeg {frames_in(output)} frames: {err}")


def without_plugin(tmp, element):
    """An environment whose GStreamer has every plugin of the system's but
    the one of element: its plugin folder, the file of that plugin left
    out, as a folder of links (GST_PLUGIN_SYSTEM_PATH_1_0, no
    GST_PLUGIN_PATH), with a registry of its own (GST_REGISTRY_1_0), so the
    user's is not rewritten.  None, saying why, where the file is not known."""
    info = subprocess.run(["gst-inspect-1.0", element], capture_output=True, text=True).stdout
    files = [line.split(None, 1)[1].strip() for line in info.splitlines()
             if line.strip().startswith("Filename") and len(line.split(None, 1)) == 2]
    if not files or not os.path.isfile(files[0]):
        print(f"note: the plugin file of {element} is not known: not checked without it")
        return None
    plugins, left_out = os.path.split(files[0])
    folder = os.path.join(tmp, f"plugins-without-{element}")
    os.makedirs(folder)
    for name in os.listdir(plugins):
        if name != left_out:
            os.symlink(os.path.join(plugins, name), os.path.join(folder, name))
    env = {k: v for k, v in os.environ.items()
           if k not in ("GST_PLUGIN_PATH", "GST_PLUGIN_PATH_1_0", "GST_PLUGIN_SYSTEM_PATH",
                        "GST_REGISTRY")}
    env.update(GST_PLUGIN_SYSTEM_PATH_1_0=folder,
               GST_REGISTRY_1_0=os.path.join(tmp, f"registry-without-{element}.bin"))
    return env


def check_mpeg12_without_mpeg2enc(tmp, clips, other):
    """Without mpeg2enc, an MPEG-1/2 video is one line that says what to
    install (it went to gst-libav's avenc_mpeg*video, which failed every
    frame rate with "Internal data stream error"), and the other files are
    written."""
    env = without_plugin(tmp, "mpeg2enc")
    if env is None:
        return
    hidden = subprocess.run(["gst-inspect-1.0", "mpeg2enc"], capture_output=True, env=env)
    if not check(hidden.returncode != 0, "mpeg2enc is still found with its plugin left out"):
        return
    out_dir = os.path.join(tmp, "out-no-mpeg2enc")
    code, _, err = run("equalize", "-o", out_dir, *clips, other, env=env)
    lines = err.strip().splitlines()
    need = "writing MPEG-1/2 video needs GStreamer's mpeg2enc (Debian: gstreamer1.0-plugins-bad)"
    check(code == 1 and len(lines) == len(clips) and
          all(os.path.basename(c) in line and need in line for c, line in zip(clips, lines)),
          f"MPEG-1/2 without mpeg2enc: exit {code}: {err!r}")
    written = sorted(os.listdir(out_dir)) if os.path.isdir(out_dir) else []
    check(written == [os.path.basename(other)],
          f"without mpeg2enc: the folder holds {written}, not {os.path.basename(other)} alone")


def frames_in(path):
    """How many video frames FFmpeg decodes from path."""
    out = subprocess.run(["ffmpeg", "-v", "error", "-i", path, "-map", "0:v:0", "-f", "framemd5",
                          "-"], capture_output=True, text=True).stdout
    return sum(1 for line in out.splitlines() if line and not line.startswith("#"))


def check_encoder_quirks(tmp, rng):
    """What GStreamer 1.22's encoders do wrong is said, not written: MPEG-4
    part 2 in Matroska lost its timestamps between avenc_mpeg4 and
    mpeg4videoparse, and matroskamux kept 1 frame of 12 with exit 0.  AV1
    (av1enc) ignored --crf: lossless, whatever was asked."""
    frames = drifting_frames(rng, 12, 48, 64)
    try:
        clip = make_clip(tmp, "mpeg4.mkv", frames, ["-c:v", "mpeg4", "-q:v", "2"], audio=False)
    except subprocess.CalledProcessError:
        clip = None
    if clip:
        out_dir = os.path.join(tmp, "out-mpeg4-mkv")
        code, _, err = run("equalize", "-o", out_dir, clip)
        output = os.path.join(out_dir, "mpeg4.mkv")
        check(code == 1 and "without timestamps" in err and not os.path.exists(output),
              f"mpeg4.mkv: exit {code}, {err!r}, written {os.path.exists(output) and frames_in(output)}"
              " frames")
        code, _, err = run("equalize", "--codec", "x264enc", "-o", out_dir, clip)
        check(code == 0 and os.path.exists(output) and frames_in(output) == len(frames),
              f"mpeg4.mkv --codec x264enc: exit {code}, {err!r}")
    have_av1 = subprocess.run(["gst-inspect-1.0", "av1enc"], capture_output=True).returncode == 0
    try:
        av1 = make_clip(tmp, "av1.mkv", frames, ["-c:v", "libaom-av1", "-cpu-used", "8"],
                        audio=False) if have_av1 else None
    except subprocess.CalledProcessError:
        av1 = None
    if not av1:
        print("note: no av1enc or no FFmpeg AV1 encoder here: AV1's --crf not checked")
        return
    sizes = {}
    for crf in ("10", "45"):
        out_dir = os.path.join(tmp, f"out-av1-{crf}")
        code, _, err = run("equalize", "--crf", crf, "-o", out_dir, av1, timeout=300)
        output = os.path.join(out_dir, "av1.mkv")
        ok = check(code == 0 and os.path.exists(output), f"av1 --crf {crf}: exit {code}, {err!r}")
        sizes[crf] = os.path.getsize(output) if ok else None
        check(not ok or frames_in(output) == len(frames), f"av1 --crf {crf}: frames lost")
    check(None not in sizes.values() and sizes["45"] < sizes["10"] * 0.7,
          f"av1: --crf 10 gives {sizes['10']} bytes, 45 gives {sizes['45']}")


def check_interlaced_mpeg2(tmp):
    """Interlaced MPEG-2 (a DVD's, a DVB recording's), top or bottom field
    first, is written back interlaced in its own field order: avdec_mpeg2video
    gives mixed caps, each frame's order in its flags, which mpeg2enc does not
    read, and the fields were written as progressive frames ("field_order":
    "progressive"), which players show combed."""
    if subprocess.run(["gst-inspect-1.0", "mpeg2enc"], capture_output=True).returncode != 0:
        print("note: no mpeg2enc here (gstreamer1.0-plugins-bad): interlaced MPEG-2 not checked")
        return
    for top, order in (("1", "tt"), ("0", "bb")):
        name = f"interlaced-{order}.ts"
        clip = os.path.join(tmp, name)
        ffmpeg("-f", "lavfi", "-i", "testsrc2=size=720x576:duration=0.4:rate=25", "-c:v",
               "mpeg2video", "-flags", "+ildct+ilme", "-top", top, "-f", "mpegts", clip)
        out_dir = os.path.join(tmp, "out-interlaced")
        code, _, err = run("equalize", "-o", out_dir, clip)
        output = os.path.join(out_dir, name)
        stream = probe(output, "-select_streams", "v", "-show_entries",
                       "stream=field_order")["streams"] if os.path.exists(output) else []
        frames = probe(output, "-select_streams", "v", "-show_entries",
                       "frame=interlaced_frame,top_field_first")["frames"] if stream else []
        check(code == 0 and err == "" and stream and stream[0].get("field_order") == order and
              len(frames) == 10 and
              all(f["interlaced_frame"] == 1 and f["top_field_first"] == int(top)
                  for f in frames),
              f"equalize {name}: exit {code}, {err!r}, {stream}, "
              f"{[(f['interlaced_frame'], f['top_field_first']) for f in frames]}")


def check_dnxhd(tmp):
    """DNxHD in MXF, as post-production hands it over: avenc_dnxhd opens only
    at the bitrates of DNxHD's profiles, and its default (200 kbit/s) is
    none, so the write-back failed with "Internal data stream error. (from
    mxfdemux0)".  Without --bitrate the frames are written as DNxHR (any
    size; HQ for 8-bit 4:2:2 at the default CRF, LB at 40, HQX for 10-bit);
    with a --bitrate of a DNxHD profile, as DNxHD."""
    have = subprocess.run(["gst-inspect-1.0", "avenc_dnxhd"], capture_output=True).returncode == 0
    if not have:
        print("note: no avenc_dnxhd here (gstreamer1.0-libav): DNxHD not checked")
        return
    clips = {}
    for name, pix_fmt, rate in (("dnxhd.mxf", "yuv422p", "36M"),
                                ("dnxhd-10bit.mxf", "yuv422p10le", "185M")):
        clips[name] = os.path.join(tmp, name)
        ffmpeg("-f", "lavfi", "-i", "testsrc2=size=1920x1080:duration=0.24:rate=25", "-c:v",
               "dnxhd", "-b:v", rate, "-pix_fmt", pix_fmt, clips[name])
    for name, options, profile in (("dnxhd.mxf", [], "DNXHR HQ"),
                                   ("dnxhd.mxf", ["--crf", "40"], "DNXHR LB"),
                                   ("dnxhd.mxf", ["--bitrate", "36000"], "DNXHD"),
                                   ("dnxhd-10bit.mxf", [], "DNXHR HQX")):
        out_dir = os.path.join(tmp, "out-dnxhd-" + "-".join(options).strip("-"))
        code, _, err = run("equalize", *options, "-o", out_dir, clips[name], timeout=300)
        output = os.path.join(out_dir, name)
        written = os.path.exists(output)
        streams = probe(output, "-show_entries", "stream=codec_name,profile")["streams"] \
            if written else []
        check(code == 0 and streams and streams[0]["codec_name"] == "dnxhd" and
              streams[0].get("profile") == profile and frames_in(output) == 6,
              f"equalize {' '.join(options)} {name}: exit {code}, {err!r}, {streams}")
    # A bitrate of no DNxHD profile: the encoder does not open, and says so
    # (it was "Internal data stream error. (from mxfdemux0)").
    out_dir = os.path.join(tmp, "out-dnxhd-50000")
    code, _, err = run("equalize", "--bitrate", "50000", "-o", out_dir, clips["dnxhd.mxf"])
    check(code == 1 and err.count("\n") == 1 and
          "GStreamer's avenc_dnxhd did not open on its frames (Y42B, 1920x1080 at 25/1 fps)" in err
          and not os.path.exists(os.path.join(out_dir, "dnxhd.mxf")),
          f"equalize --bitrate 50000 dnxhd.mxf: exit {code}, {err!r}")


def check_full_range_kept(tmp, rng):
    """A full-range H.264 stream, as phones and webcams write: equalized
    over 0..255, as stats reads it, and tagged full range.  Stating no
    matrix (yuvj420p alone), it was taken for limited: 16..235, tagged so.
    Stating matrix, primaries and transfer in the MP4's colr box (an Android
    phone's clip), qtdemux dropped the box's full-range flag: the same."""
    frames = drifting_frames(rng, 8, 48, 64)
    described = ["-colorspace", "bt470bg", "-color_primaries", "bt470bg", "-color_trc",
                 "smpte170m"]
    for name, extra in (("full.mp4", []), ("full-described.mp4", described)):
        check_full_range_clip(tmp, frames, name, extra)
    check_full_range_y4m(tmp, frames)


def check_full_range_y4m(tmp, frames):
    """A YUV4MPEG2 file tagged XCOLORRANGE=FULL (FFmpeg's tag of yuvj420p):
    GStreamer's y4mdec does not read the tag, so stats read it as limited
    and equalize squeezed it into 16..235; and y4menc writes no tag, so the
    full-range output read as limited in FFmpeg.  The same frames untagged
    stay limited."""
    for name, full in (("tagged-full.y4m", True), ("untagged.y4m", False)):
        clip = os.path.join(tmp, name)
        write_y4m(clip, frames, full_range=full)
        want_range = "full" if full else "limited"
        _, out, _ = run("stats", "--no-histogram", clip)
        ranges = {json.loads(line).get("range") for line in out.splitlines() if line.strip()}
        check(ranges == {want_range}, f"{name}: stats reads range {ranges}")
        out_dir = os.path.join(tmp, "out-" + name)
        code, _, err = run("equalize", "-o", out_dir, clip)
        output = os.path.join(out_dir, name)
        if not check(code == 0 and os.path.exists(output), f"{name}: exit {code}: {err}"):
            continue
        with open(output, "rb") as f:
            header = f.readline().decode()
        tagged = probe(output, "-select_streams", "v", "-show_entries",
                       "stream=color_range")["streams"][0].get("color_range")
        check((tagged == "pc") == full and ("XCOLORRANGE=FULL" in header) == full,
              f"{name}: written tagged {tagged!r} ({header.strip()!r})")
        got = [y for y, _ in decoded_planes(output, 64, 48, "yuvj420p" if full else "yuv420p")]
        want = reference_equalized(frames, 8, limited=not full)
        check(len(got) == len(want) and all(np.array_equal(a, b) for a, b in zip(got, want)),
              f"{name}: luma differs from the {want_range}-range equalization in "
              f"{sum(not np.array_equal(a, b) for a, b in zip(got, want))} of {len(want)} "
              f"frames ({len(got)} written)")


def check_full_range_clip(tmp, frames, name, extra):
    clip = make_clip(tmp, name, frames, ["-c:v", "libx264", "-pix_fmt", "yuvj420p", *extra],
                     audio=False)
    _, out, _ = run("stats", "--no-histogram", clip)
    ranges = {json.loads(line).get("range") for line in out.splitlines() if line.strip()}
    check(ranges == {"full"}, f"{name}: stats reads range {ranges}")
    out_dir = os.path.join(tmp, "out-" + name)
    code, _, err = run("equalize", "--crf", "0", "-o", out_dir, clip)
    output = os.path.join(out_dir, name)
    if not check(code == 0 and os.path.exists(output), f"{name}: exit {code}: {err}"):
        return
    tagged = probe(output, "-select_streams", "v", "-show_entries",
                   "stream=color_range")["streams"][0].get("color_range")
    raw = subprocess.run(["ffmpeg", "-v", "error", "-i", output, "-vf", "extractplanes=y", "-f",
                          "rawvideo", "-pix_fmt", "gray", "-"], capture_output=True).stdout
    luma = np.frombuffer(raw, np.uint8)
    check(tagged == "pc" and luma.size and luma.min() <= 4 and luma.max() >= 251,
          f"{name}: written tagged {tagged!r}, luma {luma.min() if luma.size else None}.."
          f"{luma.max() if luma.size else None}")
    # In the input's 8-bit 4:2:0, every frame's luma the full-range
    # equalization: the tag came at the first frame, and x264enc was given
    # 10-bit 4:4:4 (High 4:4:4 Predictive, which few players decode; --crf 0,
    # x264's lossless mode, is that profile whatever the format).
    pix_fmt = probe(output, "-select_streams", "v", "-show_entries",
                    "stream=pix_fmt")["streams"][0].get("pix_fmt")
    check(pix_fmt == "yuvj420p", f"{name} (yuvj420p) written as {pix_fmt}")
    decoded = [y for y, _ in decoded_planes(clip, 64, 48, "yuvj420p")]
    got = [y for y, _ in decoded_planes(output, 64, 48, "yuvj420p")]
    want = reference_equalized(decoded, 8)
    check(len(got) == len(want) and all(np.array_equal(a, b) for a, b in zip(got, want)),
          f"{name}: luma differs from the full-range equalization in "
          f"{sum(not np.array_equal(a, b) for a, b in zip(got, want))} of {len(want)} frames "
          f"({len(got)} written)")


def shown_gray_frame(path, w, h):
    """The first frame of path as a player shows it (FFmpeg turns it by the
    track's rotation): gray, (h, w) as shown."""
    raw = subprocess.run(["ffmpeg", "-v", "error", "-i", path, "-map", "0:v:0", "-frames:v", "1",
                          "-f", "rawvideo", "-pix_fmt", "gray", "-"],
                         check=True, capture_output=True).stdout
    return np.frombuffer(raw, np.uint8)[:w * h].reshape(h, w).astype(int)


def check_overlay_upright(tmp, clips, h, w):
    """overlay on a phone's turned clip draws the panel bottom-left and
    upright as a player shows the clip (it was drawn in the stored frame:
    on its side once turned)."""
    out_dir = os.path.join(tmp, "out-rotation-overlay")
    code, _, err = run("overlay", "-o", out_dir, *clips)
    check(code == 0, f"overlay of rotated clips: exit {code}: {err}")
    for clip in clips:
        output = os.path.join(out_dir, os.path.basename(clip))
        if not check(os.path.exists(output), f"overlay {clip}: no output"):
            continue
        turned = rotation_of(clip) is not None and abs(rotation_of(clip)) % 180 == 90
        sw, sh = (h, w) if turned else (w, h)
        drawn = np.abs(shown_gray_frame(output, sw, sh) - shown_gray_frame(clip, sw, sh)) > 24
        rows, cols = np.nonzero(drawn)
        inside = np.mean((rows >= sh // 2) & (cols < 3 * sw // 4)) if rows.size else 0
        check(rows.size > 0.05 * sw * sh and inside > 0.99,
              f"overlay {os.path.basename(clip)} (rotation {rotation_of(clip)}): "
              f"{rows.size} pixels drawn, {inside:.0%} of them bottom-left as shown")


def rgb_frames_of(path, w, h):
    """Every frame of path's first video stream as R'G'B' (h, w, 3), as
    FFmpeg decodes it."""
    raw = subprocess.run(["ffmpeg", "-v", "error", "-i", path, "-map", "0:v:0", "-vsync",
                          "passthrough", "-f", "rawvideo", "-pix_fmt", "rgb24", "-"],
                         check=True, capture_output=True).stdout
    data = np.frombuffer(raw, np.uint8)
    return [f.reshape(h, w, 3) for f in data.reshape(-1, h * w * 3)]


def group_pictures(tmp):
    """MJPEG (AVI, QuickTime) and PNG (QuickTime) video: parsebin gives them
    as image/jpeg and image/png, decoded by jpegdec and pngdec and encoded
    again by jpegenc (its quality from --crf) and pngenc (lossless)."""
    for element in ("jpegdec", "jpegenc", "pngdec", "pngenc", "avimux", "qtmux"):
        if subprocess.run(["gst-inspect-1.0", element], capture_output=True).returncode != 0:
            print(f"SKIP: GStreamer's {element} is not installed (gstreamer1.0-plugins-good)")
            return 77
    rng = np.random.default_rng(2024)
    h, w = 48, 64
    frames = drifting_frames(rng, 12, h, w)

    # MJPEG, full range as JPEG is: the luma equals the equalization of the
    # decoded input within jpegenc's loss at quality 95.
    for name, audio in (("mjpeg.avi", False), ("mjpeg.mov", True)):
        clip = make_clip(tmp, name, frames, ["-c:v", "mjpeg", "-q:v", "2", "-pix_fmt", "yuvj420p"],
                         audio=audio)
        out_dir = os.path.join(tmp, "out-" + name)
        code, _, err = run("equalize", "-v", "-o", out_dir, clip)
        output = os.path.join(out_dir, name)
        if not check(code == 0 and os.path.exists(output), f"{name}: exit {code}: {err}"):
            continue
        check("jpegdec -> jpegenc" in err, f"{name}: not jpegdec -> jpegenc: {err}")
        fmt_in, _, _ = stream_info(clip)
        fmt, video, audio_streams = stream_info(output)
        check(fmt == fmt_in, f"{name}: container {fmt} != {fmt_in}")
        check(len(video) == 1 and video[0]["codec_name"] == "mjpeg", f"{name}: video {video}")
        check((video[0]["width"], video[0]["height"]) == (w, h), f"{name}: size")
        check(video[0]["r_frame_rate"] == "25/1", f"{name}: frame rate {video[0]['r_frame_rate']}")
        pts_out, pts_in = video_pts(output), video_pts(clip)
        check(len(pts_out) == len(frames) and (name.endswith(".avi") or pts_out == pts_in),
              f"{name}: pts {pts_out} != {pts_in}")
        if audio:
            check(len(audio_streams) == 1 and audio_kept(output, clip),
                  f"{name}: the audio packets changed")
        decoded = [p[0] for p in decoded_planes(clip, w, h, "yuvj420p")]
        got = [p[0] for p in decoded_planes(output, w, h, "yuvj420p")]

        def error(reference):
            """Mean absolute luma error, and mean error of the frame means."""
            pixels = max(float(np.abs(g.astype(int) - r).mean()) for g, r in zip(got, reference))
            means = max(abs(float(g.mean()) - float(r.mean())) for g, r in zip(got, reference))
            return pixels, means
        right = error(reference_equalized(decoded, 8))
        wrong_range = error(reference_equalized(decoded, 8, limited=True))
        print(f"{name}: luma error (pixels, means) {right}; limited range {wrong_range}")
        check(len(got) == len(frames) and right[0] < 2.5 and right[1] < 0.5,
              f"{name}: luma off the reference by {right} (pixels, means)")
        check(right[1] < wrong_range[1], f"{name}: a wrong reference fits as well as the right one")

    check_motion_jpeg(tmp, frames, h, w)

    clip = os.path.join(tmp, "mjpeg.mov")
    # --crf 0 is jpegenc's quality 100; with libjpeg's accurate DCT both ways
    # the luma is within rounding of the reference (jpegdec's and jpegenc's
    # default fast DCT were 1.7 code values off).
    out_dir = os.path.join(tmp, "out-crf0")
    code, _, err = run("equalize", "--crf", "0", "-o", out_dir, clip)
    if check(code == 0, f"--crf 0: exit {code}: {err}"):
        got = [p[0] for p in decoded_planes(os.path.join(out_dir, "mjpeg.mov"), w, h, "yuvj420p")]
        want = reference_equalized([p[0] for p in decoded_planes(clip, w, h, "yuvj420p")], 8)
        worst = max(float(np.abs(g.astype(int) - r).mean()) for g, r in zip(got, want))
        check(len(got) == len(want) and worst < 0.5, f"--crf 0: luma off the reference by {worst}")
    # --crf maps to jpegenc's quality (README): 42 is quality 31, coarser.
    out_dir = os.path.join(tmp, "out-crf42")
    code, _, err = run("equalize", "--crf", "42", "-o", out_dir, clip)
    if check(code == 0, f"--crf 42: exit {code}: {err}"):
        coarse = os.path.getsize(os.path.join(out_dir, "mjpeg.mov"))
        fine = os.path.getsize(os.path.join(tmp, "out-mjpeg.mov", "mjpeg.mov"))
        check(coarse < fine * 0.8, f"--crf 42: {coarse} bytes, the default {fine}")
    # No rate control in jpegenc: --bitrate is refused, and nothing is left.
    out_dir = os.path.join(tmp, "out-bitrate")
    code, _, err = run("equalize", "--bitrate", "500", "-o", out_dir, clip)
    check(code == 1 and "jpegenc has no rate control" in err, f"--bitrate: exit {code}: {err}")
    no_leftovers(out_dir, "--bitrate")
    # --codec still picks another encoder.
    out_dir = os.path.join(tmp, "out-x264")
    code, _, err = run("equalize", "--codec", "x264enc", "-o", out_dir, clip)
    if check(code == 0, f"--codec x264enc: exit {code}: {err}"):
        _, video, _ = stream_info(os.path.join(out_dir, "mjpeg.mov"))
        check(video and video[0]["codec_name"] == "h264", f"--codec x264enc: video {video}")
    # CLAHE and overlay write MJPEG too.
    for command in ("clahe", "overlay"):
        out_dir = os.path.join(tmp, "out-" + command)
        code, _, err = run(command, "-o", out_dir, os.path.join(tmp, "mjpeg.avi"))
        output = os.path.join(out_dir, "mjpeg.avi")
        if check(code == 0 and os.path.exists(output), f"{command}: exit {code}: {err}"):
            check(len(video_pts(output)) == len(frames), f"{command}: frames")
            check(stream_info(output)[1][0]["codec_name"] == "mjpeg", f"{command}: not MJPEG")

    # PNG video of colour frames: written by pngenc from pngdec's R'G'B' as it
    # came, so each frame equals `lumahist equalize` of that frame as a PNG
    # image, bit for bit (same matrix, each frame on its own).
    colour = [np.stack([y, np.clip(y.astype(int) + 30, 0, 255).astype(np.uint8),
                        (255 - y) // 2], axis=2) for y in frames]
    clip = os.path.join(tmp, "png.mov")
    subprocess.run(["ffmpeg", "-v", "error", "-f", "rawvideo", "-pix_fmt", "rgb24", "-s",
                    f"{w}x{h}", "-r", "25", "-i", "-", "-c:v", "png", clip],
                   input=b"".join(f.tobytes() for f in colour), check=True)
    png_dir, png_out = os.path.join(tmp, "png-frames"), os.path.join(tmp, "png-frames-eq")
    os.makedirs(png_dir)
    ffmpeg("-i", clip, os.path.join(png_dir, "%03d.png"))
    code, _, err = run("equalize", "--matrix", "bt709", "-o", png_out, png_dir)
    check(code == 0, f"equalize on the PNG frames: exit {code}: {err}")
    want = [rgb_frames_of(path, w, h)[0] for path in sorted(glob.glob(os.path.join(png_out, "*")))]
    out_dir = os.path.join(tmp, "out-png")
    code, _, err = run("equalize", "-v", "--temporal-window", "1", "--matrix", "bt709", "-o",
                       out_dir, clip)
    output = os.path.join(out_dir, "png.mov")
    if check(code == 0 and os.path.exists(output), f"png.mov: exit {code}: {err}"):
        check("pngdec -> pngenc" in err, f"png.mov: not pngdec -> pngenc: {err}")
        _, video, _ = stream_info(output)
        check(video and video[0]["codec_name"] == "png", f"png.mov: video {video}")
        check(video_pts(output) == video_pts(clip), "png.mov: the timestamps changed")
        got = rgb_frames_of(output, w, h)
        check(len(got) == len(want) == len(frames), f"png.mov: {len(got)} frames, {len(want)} in")
        bad = [i for i, (g, r) in enumerate(zip(got, want)) if not np.array_equal(g, r)]
        check(not bad, f"png.mov: frames {bad} differ from `lumahist equalize` on their PNGs")
        check(not any(np.array_equal(g, c) for g, c in zip(got, colour)),
              "png.mov: frames came out unchanged")


def no_leftovers(out_dir, what):
    left = [p for p in glob.glob(os.path.join(out_dir, "**", "*"), recursive=True)
            + glob.glob(os.path.join(out_dir, "**", ".*"), recursive=True) if os.path.isfile(p)]
    return check(not left, f"{what}: files left behind: {left}")


def group_bad(tmp):
    rng = np.random.default_rng(3)
    h, w = 40, 56
    frames = drifting_frames(rng, 20, h, w)
    clip = make_clip(tmp, "good.mp4", frames, ["-c:v", "libx264", "-pix_fmt", "yuv420p"])
    data = open(clip, "rb").read()
    bad = os.path.join(tmp, "bad")
    os.makedirs(bad)
    with open(os.path.join(bad, "truncated.mp4"), "wb") as f:
        f.write(data[:len(data) // 2])
    # A transport stream states no duration: cut, it would end quietly.
    whole_ts = os.path.join(tmp, "whole.ts")
    ffmpeg("-i", clip, "-c", "copy", "-f", "mpegts", whole_ts)
    data_ts = open(whole_ts, "rb").read()
    with open(os.path.join(bad, "truncated.ts"), "wb") as f:
        f.write(data_ts[:len(data_ts) * 3 // 5 // 188 * 188 + 94])
    # Cut Matroska ends quietly too: it was written short, with exit 0,
    # where stats said "the file is truncated".
    # (3 s: a cut is told from the duration beyond half a second.)
    three_s = make_clip(tmp, "three-s.mp4", drifting_frames(rng, 75, h, w),
                        ["-c:v", "libx264", "-pix_fmt", "yuv420p"])
    whole_mkv = os.path.join(tmp, "whole.mkv")
    ffmpeg("-i", three_s, "-c", "copy", whole_mkv)
    data_mkv = open(whole_mkv, "rb").read()
    with open(os.path.join(bad, "truncated.mkv"), "wb") as f:
        f.write(data_mkv[:len(data_mkv) // 2])
    with open(os.path.join(bad, "text.mkv"), "wb") as f:
        f.write(b"this is not a video at all\n" * 50)
    ffmpeg("-f", "lavfi", "-i", "sine=duration=0.5", "-c:a", "aac",
           os.path.join(bad, "audio-only.mp4"))
    # YUV4MPEG2 files: cut inside a frame (the last, or the first), in a
    # colour space y4mdec fails on, a header alone, and one of 4x4 frames,
    # whose last frames y4mdec drops.  They were written short with exit 0,
    # or said y4mdec's "Failed to parse YUV4MPEG frame", GStreamer's
    # "general stream error" or "no video frame decoded"; now as stats says.
    y4m_words = {}
    whole_y4m = os.path.join(tmp, "whole.y4m")
    write_y4m(whole_y4m, frames[:5])
    data_y4m = open(whole_y4m, "rb").read()
    header = data_y4m.index(b"\n") + 1
    frame = len(b"FRAME\n") + w * h * 3 // 2
    for name, size, words in (
            ("cut-last-frame.y4m", len(data_y4m) - frame // 2,
             f"the file is truncated: it ends {frame - frame // 2} bytes into a {frame}-byte "
             "YUV4MPEG2 frame"),
            ("cut-first-frame.y4m", header + frame // 3, "the first (no frame to decode)"),
            ("header-only.y4m", header, "no frame: the YUV4MPEG2 file ends after its header")):
        with open(os.path.join(bad, name), "wb") as f:
            f.write(data_y4m[:size])
        y4m_words[name] = words
    ffmpeg("-f", "lavfi", "-i", f"testsrc2=size={w}x{h}:duration=0.2", "-strict", "-1",
           "-pix_fmt", "yuv420p10le", os.path.join(bad, "ten-bit.y4m"))
    y4m_words["ten-bit.y4m"] = "YUV4MPEG2 colour space C420p10"
    write_y4m(os.path.join(bad, "tiny.y4m"), [np.full((4, 4), 100 + i, np.uint8)
                                              for i in range(10)])
    y4m_words["tiny.y4m"] = "GStreamer's y4mdec decoded"
    for name in sorted(os.listdir(bad)):
        out_dir = os.path.join(tmp, "out-" + name)
        code, _, err = run("equalize", "--video-timeout", "20", "-o", out_dir,
                           os.path.join(bad, name))
        lines = err.strip().splitlines()
        check(code == 1 and len(lines) == 1 and name in lines[0],
              f"{name}: exit {code}, stderr {err!r}")
        if name == "audio-only.mp4":
            check("no video stream" in err, f"{name}: {err!r}")
        if name in ("truncated.ts", "truncated.mkv"):
            check("the file is truncated" in err, f"{name}: {err!r}")
        if name in y4m_words:
            check(y4m_words[name] in err, f"{name}: {err!r} lacks {y4m_words[name]!r}")
        no_leftovers(out_dir, name)

    # Damage inside a whole file (2000 random bytes a third of the way in,
    # in its media data): the decoder conceals a frame and goes on.  stats
    # said "the stream is damaged" and exit 1; equalize wrote the frames left
    # with exit 0, and clahe and overlay alike.
    damaged_source = os.path.join(tmp, "damaged-source.mp4")
    ffmpeg("-f", "lavfi", "-i", "testsrc2=s=320x240:r=15:d=2", "-f", "lavfi", "-i", "sine=d=2",
           "-c:v", "libx264", "-c:a", "aac", damaged_source)
    damaged_data = bytearray(open(damaged_source, "rb").read())
    third = len(damaged_data) // 3
    damaged_data[third:third + 2000] = np.random.default_rng(1).integers(
        0, 256, 2000, dtype=np.uint8).tobytes()
    damaged = os.path.join(tmp, "damaged.mp4")
    with open(damaged, "wb") as f:
        f.write(damaged_data)
    code, _, err = run("stats", damaged)
    said = re.search(r"the stream is damaged: \d+ of its \d+ frames could not be decoded", err)
    check(code == 1 and said, f"stats damaged.mp4: exit {code}, {err!r}")
    for command in ("equalize", "clahe", "overlay"):
        out_dir = os.path.join(tmp, f"out-damaged-{command}")
        code, _, err = run(command, "-o", out_dir, damaged)
        check(code == 1 and said and err == f"lumahist: {damaged}: {said.group(0)}\n",
              f"{command} damaged.mp4: exit {code}, {err!r}")
        no_leftovers(out_dir, f"{command} damaged.mp4")

    # A whole file whose audio outlasts its video is no cut one.
    long_audio = os.path.join(tmp, "long-audio.mkv")
    ffmpeg("-i", clip, "-f", "lavfi", "-i", "sine=duration=3", "-map", "0:v", "-map", "1:a",
           "-c:v", "copy", "-c:a", "flac", long_audio)
    out_dir = os.path.join(tmp, "out-long-audio")
    code, _, err = run("equalize", "-o", out_dir, long_audio)
    check(code == 0 and err == "" and os.path.exists(os.path.join(out_dir, "long-audio.mkv")),
          f"long-audio.mkv (audio 3 s, video {len(frames) / 25} s): exit {code}, {err!r}")

    # No decoder for its codec (avdec_h264 ranked out of GStreamer's choice).
    env = dict(os.environ, GST_PLUGIN_FEATURE_RANK="avdec_h264:NONE,openh264dec:NONE")
    out_dir = os.path.join(tmp, "out-nodec")
    code, _, err = run("equalize", "-o", out_dir, clip, env=env)
    check(code == 1 and err.count("\n") == 1 and "no GStreamer decoder is installed" in err,
          f"no decoder: exit {code}, stderr {err!r}")
    no_leftovers(out_dir, "no decoder")

    # An output that is a folder: one line naming the input and the output,
    # as for images (it named the output alone, "OUT/good.mp4: Is a
    # directory"); the folder is left as it was.
    out_dir = os.path.join(tmp, "out-folder-there")
    os.makedirs(os.path.join(out_dir, "good.mp4", "kept"))
    code, _, err = run("equalize", "-o", out_dir, clip)
    check(code == 1 and err == f"lumahist: {clip}: writing {out_dir}/good.mp4: Is a directory\n" and
          os.listdir(out_dir) == ["good.mp4"] and
          os.listdir(os.path.join(out_dir, "good.mp4")) == ["kept"],
          f"an output that is a folder: exit {code}, {err!r}, {os.listdir(out_dir)}")

    # A FIFO named as a video is refused in one line: the file is read
    # twice (its head, then the pipeline), which a FIFO's writer does not
    # do.  With no writer the first open blocked for good, past Ctrl-C and
    # --video-timeout.
    fifo = os.path.join(tmp, "fifo.mkv")
    os.mkfifo(fifo)
    out_dir = os.path.join(tmp, "out-fifo")
    proc = subprocess.Popen([LUMAHIST, "equalize", "--video-timeout", "2", "-o", out_dir, fifo],
                            stderr=subprocess.PIPE)
    try:
        _, err = proc.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        _, err = proc.communicate()
        err = b"(still waiting after 20 s) " + err
    err = err.decode("utf-8", "replace")
    check(proc.returncode == 1 and err.count("\n") == 1 and
          "a video on a FIFO: videos are written back from files" in err,
          f"equalize of a FIFO named fifo.mkv: exit {proc.returncode}, {err!r}")
    no_leftovers(out_dir, "fifo.mkv")

    # A size the input's muxer or the encoder does not take is one line that
    # names the limit, said before a frame is decoded: an H.264 mp4 8 pixels
    # high failed with "Internal data stream error. (from queue0)"
    # (GStreamer 1.22's mp4mux takes no side under 16), and x265enc on one
    # with "cannot put x265enc's video into matroskamux".  Matroska takes it.
    flat = [np.full((8, 64), 60 + 4 * k, np.uint8) for k in range(5)]
    short_mp4 = make_clip(tmp, "short.mp4", flat, ["-c:v", "libx264", "-pix_fmt", "yuv420p"],
                          audio=False)
    short_mkv = make_clip(tmp, "short.mkv", flat, ["-c:v", "libx264", "-pix_fmt", "yuv420p"],
                          audio=False)
    for path, extra, says in (
            (short_mp4, [], "mp4mux cannot write 64x8 video (its width and height must be 16 "
                            "or more)"),
            (short_mkv, ["--codec", "x265enc"], "x265enc cannot write 64x8 video (its width and "
                                                "height must be 16 or more): give another --codec")):
        out_dir = os.path.join(tmp, "out-small-" + os.path.basename(path))
        code, _, err = run("equalize", *extra, "-o", out_dir, path)
        check(code == 1 and err.count("\n") == 1 and says in err,
              f"{os.path.basename(path)} 64x8 {extra}: exit {code}, {err!r}")
        no_leftovers(out_dir, f"{os.path.basename(path)} 64x8")
    out_dir = os.path.join(tmp, "out-small-mkv")
    code, _, err = run("equalize", "-o", out_dir, short_mkv)
    check(code == 0 and err == "" and
          frames_in(os.path.join(out_dir, "short.mkv")) == len(flat),
          f"short.mkv 64x8: exit {code}, {err!r}")

    # x264 writes odd sides in 4:4:4 only, though x264enc's template takes
    # any size: an odd-sized gray (4:0:0) H.264 failed after decoding with
    # "Can not initialize x264 encoder. (from x264enc0)".  Now one line
    # before a frame is decoded; a 4:4:4 one of that size is still written.
    odd = [np.full((5, 5), 60 + 4 * k, np.uint8) for k in range(5)]
    for pix_fmt, says in (("gray", "x264enc cannot write 5x5 video in 4:0:0 (x264 takes an odd "
                                   "width only in 4:4:4"),
                          ("yuv444p", None)):
        path = make_clip(tmp, f"odd-{pix_fmt}.mkv", odd,
                         ["-c:v", "libx264", "-pix_fmt", pix_fmt], audio=False)
        out_dir = os.path.join(tmp, "out-odd-" + pix_fmt)
        code, _, err = run("equalize", "-o", out_dir, path)
        if says:
            check(code == 1 and err.count("\n") == 1 and says in err and
                  "give another --codec" in err, f"5x5 {pix_fmt}: exit {code}, {err!r}")
            no_leftovers(out_dir, f"5x5 {pix_fmt}")
        else:
            check(code == 0 and err == "" and
                  frames_in(os.path.join(out_dir, os.path.basename(path))) == len(odd),
                  f"5x5 {pix_fmt}: exit {code}, {err!r}")

    # --shard i/n splits the videos of a folder between runs, as images.
    shard_dir = os.path.join(tmp, "shards")
    os.makedirs(shard_dir)
    for k in range(4):
        shutil.copy(clip, os.path.join(shard_dir, f"v{k}.mp4"))
    written = []
    for i in range(2):
        out_dir = os.path.join(tmp, f"out-shard{i}")
        code, _, err = run("equalize", "--shard", f"{i}/2", "-o", out_dir, shard_dir)
        check(code == 0, f"--shard {i}/2: exit {code}: {err}")
        written.append(set(os.listdir(out_dir)) if os.path.isdir(out_dir) else set())
    check(not (written[0] & written[1]) and written[0] | written[1] ==
          {f"v{k}.mp4" for k in range(4)}, f"--shard: {written}")

    # A bad file among good ones: the good ones are written, exit 1.
    shutil.copy(clip, os.path.join(bad, "z-good.mp4"))
    out_dir = os.path.join(tmp, "out-mixed")
    code, _, err = run("equalize", "-o", out_dir, bad)
    check(code == 1 and os.path.exists(os.path.join(out_dir, "z-good.mp4")),
          f"bad folder: exit {code}, {os.listdir(out_dir) if os.path.isdir(out_dir) else None}")

    # Ctrl-C in the middle: exit 130, no output, no temporary file; SIGHUP
    # (a closed terminal) as SIGTERM: 129, and no temporary file either.
    big = make_clip(tmp, "big.mp4", drifting_frames(rng, 150, 480, 640),
                    ["-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p"])
    for sig, name in ((signal.SIGINT, "SIGINT"), (signal.SIGHUP, "SIGHUP")):
        out_dir = os.path.join(tmp, f"out-{name}")
        proc = subprocess.Popen([LUMAHIST, "equalize", "--crf", "0", "-o", out_dir, big],
                                stderr=subprocess.PIPE)
        time.sleep(1.0)
        if proc.poll() is None:
            proc.send_signal(sig)
            _, err = proc.communicate(timeout=60)
            check(proc.returncode == 128 + sig and f"stopped by {name}".encode() in err,
                  f"{name}: exit {proc.returncode}: {err!r}")
            no_leftovers(out_dir, name)
        else:
            print(f"note: big.mp4 was done within a second; {name} not tried")
    # Their --help (and the man page made from it) names that exit status.
    for command in ("equalize", "clahe", "overlay"):
        code, out, _ = run(command, "--help")
        check(code == 0 and "128 + N stopped by signal N" in " ".join(out.split()),
              f"lumahist {command} --help names no exit status for a signal: {out[-200:]!r}")


def gst_raw(path, out):
    """The frames of path's video as I420 bytes, decoded by GStreamer (any
    decoder: NVDEC's on a GPU host)."""
    subprocess.run(["gst-launch-1.0", "-q", "filesrc", f"location={path}", "!", "decodebin", "!",
                    "videoconvert", "!", "video/x-raw,format=I420", "!", "filesink",
                    f"location={out}"], check=True, capture_output=True)
    with open(out, "rb") as f:
        return f.read()


def group_gpu(tmp):
    """--backend cuda against --backend cpu on the same video: the frames
    given to the encoder are the same bit for bit (the backends agree), so
    x264's (deterministic) outputs decode to the same bytes.  Needs only
    GStreamer (x264enc, a decoder); SKIP (77) without a usable CUDA device."""
    for element in ("x264enc", "mp4mux", "parsebin", "decodebin"):
        if subprocess.run(["gst-inspect-1.0", element], capture_output=True).returncode != 0:
            print(f"SKIP: GStreamer's {element} is not installed")
            return 77
    clip = os.path.join(tmp, "gpu.mp4")
    subprocess.run(["gst-launch-1.0", "-q", "videotestsrc", "pattern=ball", "num-buffers=40", "!",
                    "video/x-raw,width=642,height=362,format=I420,framerate=25/1", "!",
                    "x264enc", "bframes=0", "!", "h264parse", "!", "mp4mux", "!", "filesink",
                    f"location={clip}"], check=True, capture_output=True)
    raw_in = gst_raw(clip, os.path.join(tmp, "in.raw"))
    for command in ("equalize", "clahe", "overlay"):
        outputs = {}
        for backend in ("cpu", "cuda"):
            out_dir = os.path.join(tmp, f"{command}-{backend}")
            code, _, err = run(command, "--backend", backend, "-v", "-o", out_dir, clip)
            if backend == "cuda" and code != 0 and "CUDA" in err and (
                    "device" in err or "without CUDA" in err):
                print("SKIP: no usable CUDA backend:", err.strip().splitlines()[0])
                return 77
            if not check(code == 0, f"{command} --backend {backend}: exit {code}: {err}"):
                break
            print(err.strip())
            outputs[backend] = gst_raw(os.path.join(out_dir, "gpu.mp4"),
                                       os.path.join(tmp, f"{command}-{backend}.raw"))
        if len(outputs) == 2:
            check(len(outputs["cpu"]) == len(raw_in), f"{command}: {len(outputs['cpu'])} bytes "
                  f"of frames, {len(raw_in)} in")
            check(outputs["cpu"] != raw_in, f"{command}: nothing changed")
            check(outputs["cuda"] == outputs["cpu"],
                  f"{command}: the CUDA backend's video differs from the CPU backend's")
    return 0


GROUPS = {"equalize": group_equalize, "containers": group_containers, "bad": group_bad,
          "pictures": group_pictures, "gpu": group_gpu}


def main():
    # The tool leaves a stop signal ignored if it starts so (nohup, a job a
    # shell starts in the background): the ones these tests send must reach
    # it whatever this runner was started with.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    for stop in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(stop, signal.SIG_DFL)
    global LUMAHIST
    if len(sys.argv) != 3 or sys.argv[2] not in GROUPS:
        print(__doc__)
        return 2
    LUMAHIST = sys.argv[1]
    group = sys.argv[2]
    # The GPU host has GStreamer but no FFmpeg: the gpu group needs only the former.
    tools = ("gst-launch-1.0", "gst-inspect-1.0") + (() if group == "gpu" else ("ffmpeg", "ffprobe"))
    for tool in tools:
        if not shutil.which(tool):
            print(f"SKIP: {tool} is not installed (build-aux/install-deps.sh installs it)")
            return 77
    for element in ("x264enc", "mp4mux", "parsebin", "avdec_h264") if group != "gpu" else ():
        if subprocess.run(["gst-inspect-1.0", element], capture_output=True).returncode != 0:
            print(f"SKIP: GStreamer's {element} is not installed")
            return 77
    with tempfile.TemporaryDirectory(prefix="lumahist-video-out-") as tmp:
        probe_clip = os.path.join(tmp, "probe.y4m")
        write_y4m(probe_clip, [np.zeros((8, 8), np.uint8)])
        code, _, err = run("stats", probe_clip)
        if code != 0 and "without GStreamer" in err:
            print("SKIP: this lumahist was built without GStreamer:", err.strip())
            return 77
        if GROUPS[group](tmp) == 77:
            return 77
    if FAILURES:
        print(f"{len(FAILURES)} failure(s)")
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
