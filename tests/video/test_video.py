#!/usr/bin/env python3
"""test_video.py: `lumahist stats` on video files, run as a user runs it.

Usage: test_video.py LUMAHIST SAMPLES_DIR GROUP
GROUP: frames, signalstats, bad, batch, audio, pictures, avi, gpu (see GROUPS at
the end).

Clips are made here: raw YUV4MPEG2 files written by this script from numpy
arrays (so every pixel is known: the reference is numpy), and H.264 files
made from them by FFmpeg's libx264 or GStreamer's x264enc.  FFmpeg's
signalstats, through ffprobe, is the reference for what FFmpeg reports on the
same decoded frames (README, "Agreement with FFmpeg signalstats").  Without
GStreamer's video support in this lumahist, or without ffmpeg, the test says
why and exits 77.
"""
import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

try:
    import numpy as np
except ImportError as e:  # pragma: no cover
    print(f"SKIP: needs python3-numpy ({e})")
    sys.exit(77)

LUMAHIST = None
SAMPLES = None
FAILURES = []


def fail(message):
    FAILURES.append(message)
    print("FAIL:", message)


def check(condition, message):
    if not condition:
        fail(message)
    return condition


def run(*args, timeout=120, env=None):
    proc = subprocess.run([LUMAHIST, *args], capture_output=True, timeout=timeout, env=env)
    return proc.returncode, proc.stdout.decode("utf-8"), proc.stderr.decode("utf-8", "replace")


def records(text):
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def frames_of(recs, path=None):
    return [r for r in recs if "frame" in r and (path is None or r["path"] == path)]


def summary_of(recs, path=None):
    s = [r for r in recs if r.get("summary") and (path is None or r["path"] == path)]
    return s[0] if s else None


# --------------------------------------------------------------------------
# Clips

def write_y4m(path, frames, fps="25:1", chroma="444", full_range=False):
    """frames: list of uint8 (or uint16 for 10-bit) Y planes; chroma is flat."""
    h, w = frames[0].shape
    ten = frames[0].dtype == np.uint16
    tag = chroma + ("p10" if ten else "")
    color = " XCOLORRANGE=FULL" if full_range else ""
    with open(path, "wb") as f:
        f.write(f"YUV4MPEG2 W{w} H{h} F{fps} Ip A1:1 C{tag}{color}\n".encode())
        for y in frames:
            f.write(b"FRAME\n")
            f.write(y.astype("<u2" if ten else np.uint8).tobytes())
            if chroma == "mono":
                continue
            cw, ch = chroma_size(chroma, w, h)
            mid = 512 if ten else 128
            plane = np.full((ch, cw), mid, dtype="<u2" if ten else np.uint8)
            f.write(plane.tobytes() * 2)


def chroma_size(chroma, w, h):
    """The width and height of each chroma plane of a YUV4MPEG2 C tag."""
    return {"444": (w, h), "422": ((w + 1) // 2, h), "420": ((w + 1) // 2, (h + 1) // 2),
            "411": ((w + 3) // 4, h)}[chroma]


def ffmpeg(*args):
    subprocess.run(["ffmpeg", "-v", "error", "-y", *args], check=True)


def gst_launch(*args):
    subprocess.run(["gst-launch-1.0", "-q", *args], check=True, capture_output=True)


def random_frames(rng, n, h, w, low=0, high=256, dtype=np.uint8):
    return [rng.integers(low, high, size=(h, w)).astype(dtype) for _ in range(n)]


def signalstats(path):
    """ffprobe's signalstats of every frame: a list of dicts of floats."""
    movie = path.replace("\\", "\\\\").replace(":", "\\:").replace("'", "\\'")
    out = subprocess.run(
        ["ffprobe", "-v", "error", "-f", "lavfi", f"movie='{movie}',signalstats",
         "-show_entries", "frame=pts_time:frame_tags", "-of", "json"],
        check=True, capture_output=True).stdout
    result = []
    for frame in json.loads(out)["frames"]:
        tags = {k.rsplit(".", 1)[1]: v for k, v in frame.get("tags", {}).items()}
        result.append(tags)
    return result


# --------------------------------------------------------------------------
# Reference statistics of a Y plane (DESIGN.md's definitions)

def nearest_rank(sorted_values, p):
    n = len(sorted_values)
    if p == 0:
        return int(sorted_values[0])
    rank = math.ceil(p / 100 * n)
    return int(sorted_values[max(rank, 1) - 1])


def cut_in_half(whole, cut):
    """Writes the first half of the file whole to cut, and returns cut."""
    with open(whole, "rb") as f:
        data = f.read()
    with open(cut, "wb") as f:
        f.write(data[:len(data) // 2])
    return cut


def check_frame_stats(rec, y, where):
    values = np.sort(y.ravel())
    ok = check(rec["min"] == int(values[0]) and rec["max"] == int(values[-1]),
               f"{where}: min/max {rec['min']}/{rec['max']} != {values[0]}/{values[-1]}")
    ok &= check(abs(rec["mean"] - float(values.mean())) < 1e-9 * max(1, values.mean()),
                f"{where}: mean {rec['mean']} != {values.mean()}")
    for key, value in rec["percentiles"].items():
        want = nearest_rank(values, float(key))
        ok &= check(value == want, f"{where}: P{key} {value} != {want}")
    return ok


# --------------------------------------------------------------------------
# Groups

def check_trimmed_by_edit_list(tmp):
    """An MP4 cut with `ffmpeg -ss 1.3 -c copy` keeps the frames from the
    keyframe before 1.3 s and an edit list that starts the picture at 1.3 s:
    the decoder drops the frames before it, as a player does.  They were
    counted as frames that failed: "the stream is damaged: 32 of its 100
    frames could not be decoded", exit 1, on a whole file."""
    source = os.path.join(tmp, "trim-source.mp4")
    ffmpeg("-f", "lavfi", "-i", "testsrc2=size=160x120:duration=4:rate=25", "-c:v", "libx264",
           "-g", "50", source)
    trimmed = os.path.join(tmp, "trimmed.mp4")
    ffmpeg("-ss", "1.3", "-i", source, "-c", "copy", trimmed)
    code, out, err = run("stats", "--no-histogram", trimmed)
    recs = records(out)
    s = summary_of(recs, trimmed)
    check(code == 0 and err == "" and s and s["complete"] and 60 <= s["frames"] <= 70 and
          s["frames"] == len(frames_of(recs, trimmed)) and s["start"] >= 1.2,
          f"trimmed by an edit list: exit {code}, {err!r}, {s}")


# Files made by check_cut_near_end whose last bytes are video.
VIDEO_LAST = ("faststart.mp4", "ffmpeg-fragmented.mp4", "vp8.ivf")


def check_cut_near_end(tmp):
    """Files cut in their last frame, which their demuxers end quietly a
    frame short, inside the 0.5 s the frames' times are allowed: stats and
    equalize called them whole (exit 0).  The packet that runs past the end
    says so exactly: an MP4's mdat or moof box (sample tables first:
    faststart, fragmented), an FLV tag, an IVF frame, an Ogg page, an
    MPEG-PS packet.  Whole, each is whole: a fragmented file of GStreamer's
    mp4mux, whose edit shifts its last two frames past the duration it
    states, was "damaged: 2 of its 60 frames could not be decoded" (the
    decoder drops them, as a player does), and an FLV or Ogg file whose
    audio runs a second past its video was "truncated: its frames end at
    3.080 s of 4.080 s" (the duration is the longest stream's)."""
    video = ["-f", "lavfi", "-i", "testsrc2=size=160x120:duration=3:rate=25"]
    audio = ["-f", "lavfi", "-i", "sine=duration=4"]
    made = {}  # name: (path, what the cut is said to end in, equalize it)

    def make(name, args, packet, write_back=True):
        made[name] = (os.path.join(tmp, name), packet, write_back)
        ffmpeg(*args, made[name][0])
    make("faststart.mp4", [*video, "-c:v", "libx264", "-movflags", "+faststart"], "mdat box")
    make("ffmpeg-fragmented.mp4", [*video, "-c:v", "libx264", "-movflags",
                                   "frag_keyframe+empty_moov", "-g", "10"], "(mdat|moof) box")
    made["mp4mux-fragmented.mp4"] = (os.path.join(tmp, "mp4mux-fragmented.mp4"),
                                     "(mdat|moof) box", True)
    gst_launch("videotestsrc", "num-buffers=60", "!",
               "video/x-raw,format=I420,width=160,height=120,framerate=30/1", "!", "x264enc",
               "key-int-max=10", "!", "h264parse", "!", "mp4mux", "fragment-duration=500", "!",
               "filesink", f"location={made['mp4mux-fragmented.mp4'][0]}")
    make("audio-longer.flv", [*video, *audio, "-c:v", "libx264", "-c:a", "aac"], "FLV tag")
    make("vp8.ivf", [*video, "-c:v", "libvpx", "-b:v", "300k"], "IVF frame")
    # GStreamer's theoraenc loses the timestamps (the write-back says so).
    make("audio-longer.ogv", [*video, *audio, "-c:v", "libtheora", "-c:a", "libvorbis"],
         "Ogg page", write_back=False)
    make("mpeg2.mpg", [*video, *audio, "-c:v", "mpeg2video", "-c:a", "mp2"], "MPEG-PS packet")
    out_dir = os.path.join(tmp, "cut-near-end-out")
    os.makedirs(out_dir)
    for name, (whole, packet, write_back) in made.items():
        code, out, err = run("stats", "--no-histogram", whole)
        s = summary_of(records(out), whole)
        whole_frames = s["frames"] if s else 0
        check(code == 0 and err == "" and s and s["complete"] and whole_frames >= 50,
              f"{name}, whole: exit {code}, {err!r}, {s}")
        with open(whole, "rb") as f:
            data = f.read()
        cut = os.path.join(tmp, "cut-" + name)
        with open(cut, "wb") as f:
            f.write(data[:len(data) - 700])
        code, out, err = run("stats", "--no-histogram", cut)
        s = summary_of(records(out), cut)
        said = re.search(r"the file is truncated: it ends (\d+) bytes into its (\d+)-byte " +
                         packet, err)
        # Where the last 700 bytes hold the audio that runs on, or frames
        # that the stated duration leaves out (mp4mux), no frame is lost.
        short = s and (0 < s["frames"] < whole_frames if name in VIDEO_LAST else
                       0 < s["frames"] <= whole_frames)
        check(code == 1 and said and int(said.group(1)) < int(said.group(2)) and
              len(err.strip().splitlines()) == 1 and s and not s["complete"] and short,
              f"{name} less its last 700 bytes: exit {code}, {err!r}, {s}")
        if not write_back:
            continue
        code, _, err = run("equalize", "--out", out_dir, cut)
        check(code == 1 and "the file is truncated: it ends" in err and
              not os.path.exists(os.path.join(out_dir, os.path.basename(cut))),
              f"equalize {name} less its last 700 bytes: exit {code}, {err!r}")
        code, _, err = run("equalize", "--out", out_dir, whole)
        check(code == 0 and os.path.exists(os.path.join(out_dir, name)),
              f"equalize {name}, whole: exit {code}, {err!r}")


def group_frames(tmp):
    rng = np.random.default_rng(15)
    # Odd size, random pixels, a cut at frame 6, black frames 9-11, frozen 12-14.
    h, w = 37, 53
    frames = random_frames(rng, 6, h, w, 40, 90)
    frames += random_frames(rng, 3, h, w, 150, 250)
    frames += [np.full((h, w), 16, np.uint8)] * 3
    still = rng.integers(60, 200, size=(h, w)).astype(np.uint8)
    frames += [still] * 3
    clip = os.path.join(tmp, "known.y4m")
    write_y4m(clip, frames)
    code, out, err = run("stats", "-p", "0,1,10,50,90,99,100", clip)
    check(code == 0, f"known.y4m: exit {code}: {err}")
    recs = records(out)
    fr = frames_of(recs)
    check(len(fr) == len(frames), f"known.y4m: {len(fr)} frame records, {len(frames)} frames")
    for i, (rec, y) in enumerate(zip(fr, frames)):
        check(rec["frame"] == i, f"frame index {rec['frame']} != {i}")
        check(abs(rec["pts"] - i / 25) < 1e-6, f"frame {i}: pts {rec['pts']} != {i / 25}")
        check(abs(rec["duration"] - 0.04) < 1e-6, f"frame {i}: duration {rec['duration']}")
        check(rec["bit_depth"] == 8 and len(rec["histogram"]) == 256, f"frame {i}: 8-bit")
        check(rec["range"] == "limited", f"frame {i}: y4m without a range is limited")
        check_frame_stats(rec, y, f"known.y4m frame {i}")
        want_diff = None if i == 0 else float(
            np.abs(y.astype(int) - frames[i - 1].astype(int)).mean())
        check(want_diff is None and rec["diff"] is None or
              want_diff is not None and abs(rec["diff"] - want_diff) < 1e-9,
              f"frame {i}: diff {rec['diff']} != {want_diff}")
        outside = float(((y < 16) | (y > 235)).mean())
        check(abs(rec["out_of_legal"] - outside) < 1e-12, f"frame {i}: out_of_legal")
        check(rec["scene_cut"] == (i in (6, 9, 12)), f"frame {i}: scene_cut {rec['scene_cut']}")
        check(rec["black"] == (9 <= i <= 11), f"frame {i}: black {rec['black']}")
        check(rec["frozen"] == (i in (10, 11, 13, 14)), f"frame {i}: frozen {rec['frozen']}")
    s = summary_of(recs)
    if check(s is not None, "known.y4m: no summary record"):
        check(s["frames"] == len(frames) and s["complete"], "summary: frames, complete")
        check(abs(s["duration"] - len(frames) / 25) < 1e-6, f"summary duration {s['duration']}")
        check([round(t, 6) for t in s["cuts"]] == [0.24, 0.36, 0.48], f"cuts {s['cuts']}")
        check([(b["first_frame"], b["frames"]) for b in s["black"]] == [(9, 3)],
              f"black spans {s['black']}")
        check([(b["first_frame"], b["frames"]) for b in s["frozen"]] == [(10, 2), (13, 2)],
              f"frozen spans {s['frozen']}")
        total = np.concatenate([f.ravel() for f in frames])
        check(s["histogram"] == np.bincount(total, minlength=256).tolist(), "summary histogram")
        check(s["frame_stats"]["max"]["max"] == int(total.max()), "summary max of max")
        means = [float(f.mean()) for f in frames]
        check(abs(s["frame_stats"]["mean"]["mean"] - np.mean(means)) < 1e-9, "mean of means")

    # The table: a row a frame, told apart by its number after the path.
    code, out, err = run("stats", "--format", "table", clip)
    rows = out.splitlines()[1:]
    check(code == 0 and [r.split()[1] if len(r.split()) > 1 else None for r in rows] ==
          [f"#{i}" for i in range(len(frames))],
          f"--format table: rows {[r[:30] for r in rows[:3]]}")

    # flicker: the standard deviation of the means of the frames whose pts
    # lie in (pts - 1 s, pts]: at 25 frames/s the last 25 (a frame exactly a
    # second older stayed in at some pts, by the subtraction's rounding).
    longer = [np.full((8, 16), 40 + (k * 37) % 150, np.uint8) for k in range(60)]
    long_clip = os.path.join(tmp, "flicker.y4m")
    write_y4m(long_clip, longer)
    code, out, err = run("stats", "--no-histogram", long_clip)
    fr = frames_of(records(out))
    check(code == 0 and len(fr) == len(longer), f"flicker.y4m: exit {code}: {err}")
    means = [float(f.mean()) for f in longer]
    wrong = [i for i, rec in enumerate(fr)
             if abs(rec["flicker"] - float(np.std(means[max(0, i - 24):i + 1]))) > 1e-9]
    check(not wrong, f"flicker.y4m: flicker not over the last second at frames {wrong}")

    # --roi: the statistics and the diff are of the rectangle's pixels (the
    # diff was the whole frame's), and so is what is frozen.
    code, out, err = run("stats", "--no-histogram", "--roi", "3,5,7,9", clip)
    fr = frames_of(records(out))
    check(code == 0 and len(fr) == len(frames), f"--roi: exit {code}: {err}")
    for i, rec in enumerate(fr):
        part = frames[i][5:14, 3:10].astype(int)
        check(rec["count"] == 63 and abs(rec["mean"] - part.mean()) < 1e-9, f"--roi frame {i}")
        want_diff = None if i == 0 else float(
            np.abs(part - frames[i - 1][5:14, 3:10].astype(int)).mean())
        check(want_diff is None and rec["diff"] is None or
              want_diff is not None and abs(rec["diff"] - want_diff) < 1e-9,
              f"--roi frame {i}: diff {rec['diff']} != {want_diff}")

    # Sampling and cutting.
    code, out, _ = run("stats", "--no-histogram", "--every", "4", clip)
    check([r["frame"] for r in frames_of(records(out))] == [0, 4, 8, 12],
          "--every 4 keeps frames 0, 4, 8, 12")
    code, out, _ = run("stats", "--no-histogram", "--fps", "10", clip)
    picked = [r["frame"] for r in frames_of(records(out))]
    check(picked == [0, 3, 5, 8, 10, 13], f"--fps 10 of 25: frames {picked}")
    code, out, _ = run("stats", "--no-histogram", "--start", "0.2", "--duration", "0.2", clip)
    picked = [round(r["pts"], 6) for r in frames_of(records(out))]
    check(picked == [0.2, 0.24, 0.28, 0.32, 0.36], f"--start 0.2 --duration 0.2: pts {picked}")
    # A time with no frame in it is said as such: past the end it was "no
    # frame could be decoded" (a whole file taken for a damaged one), and
    # between two frames nothing at all, not even a summary, with exit 0.
    code, out, err = run("stats", "--start", "5", clip)
    check(code == 1 and out == "" and
          "no frame at or after 5 s, the start asked: the video lasts 0.600 s" in err,
          f"--start past the end: exit {code}, {err.strip()!r}")
    code, out, err = run("stats", "--start", "0.21", "--duration", "0.02", clip)
    check(code == 1 and out == "" and
          "no frame in the time asked, [0.21 s, 0.23 s): the next is at 0.240 s" in err,
          f"--start 0.21 --duration 0.02: exit {code}, {err.strip()!r}")
    # Without --start, --duration counts from the first frame, wherever its
    # pts is: it counted from 0, and a clip starting at 1 s gave no frame.
    offset = os.path.join(tmp, "offset.mkv")
    ffmpeg("-i", clip, "-c:v", "ffv1", "-output_ts_offset", "1", offset)
    code, out, err = run("stats", "--no-histogram", "--duration", "0.2", offset)
    picked = [round(r["pts"], 6) for r in frames_of(records(out))]
    check(code == 0 and picked == [1.0, 1.04, 1.08, 1.12, 1.16],
          f"--duration 0.2 from a first frame at 1 s: exit {code}, pts {picked}, {err.strip()!r}")
    code, out, err = run("stats", "--start", "0", "--duration", "0.2", offset)
    check(code == 1 and out == "" and
          "no frame in the time asked, [0 s, 0.2 s): the next is at 1.000 s" in err,
          f"--start 0 --duration 0.2 from a first frame at 1 s: exit {code}, {err.strip()!r}")
    code, _, err = run("stats", "--every", "0", clip)
    check(code == 2 and "--every" in err, "--every 0 is a usage error")

    # Full range from the stream's colorimetry; --range overrides it.
    full = os.path.join(tmp, "full.mkv")
    ffmpeg("-f", "lavfi", "-i", "testsrc2=size=64x48", "-frames:v", "3", "-c:v", "libx264",
           "-pix_fmt", "yuvj420p", full)
    _, out, _ = run("stats", "--no-histogram", full)
    check(frames_of(records(out))[0]["range"] == "full", "a full-range H.264 stream is full")
    _, out, _ = run("stats", "--no-histogram", "--range", "limited", full)
    check(frames_of(records(out))[0]["range"] == "limited", "--range overrides the stream")

    # 10 bits: raw, then H.264 High 10 through x264enc.
    frames10 = random_frames(rng, 4, 24, 32, 64, 941, np.uint16)
    raw10 = os.path.join(tmp, "ten.y4m")
    write_y4m(raw10, frames10, chroma="420")
    # GStreamer 1.22's y4mdec reads 8 bits only: lossless FFV1 carries them.
    clip10 = os.path.join(tmp, "ten-ffv1.mkv")
    ffmpeg("-i", raw10, "-c:v", "ffv1", clip10)
    _, out, err = run("stats", clip10)
    fr = frames_of(records(out))
    check(len(fr) == 4, f"ten.y4m: {len(fr)} frames: {err}")
    for i, (rec, y) in enumerate(zip(fr, frames10)):
        check(rec["bit_depth"] == 10 and len(rec["histogram"]) == 1024, f"10-bit frame {i}")
        check_frame_stats(rec, y, f"ten.y4m frame {i}")
    # 10-bit R'G'B' (FFV1 gbrp10le, which avdec_ffv1 gives as GBR_10LE):
    # 10-bit luma, where videoconvert's RGBA64 made it 16-bit.
    rgb10 = [rng.integers(0, 1024, size=(3, 24, 32)).astype("<u2") for _ in range(3)]
    rgb10_raw = os.path.join(tmp, "rgb10.gbrp")
    with open(rgb10_raw, "wb") as f:
        for r, g, b in rgb10:
            f.write(g.tobytes() + b.tobytes() + r.tobytes())
    rgb10_clip = os.path.join(tmp, "rgb10-ffv1.mkv")
    ffmpeg("-f", "rawvideo", "-pix_fmt", "gbrp10le", "-s", "32x24", "-r", "25", "-i", rgb10_raw,
           "-c:v", "ffv1", rgb10_clip)
    _, out, err = run("stats", rgb10_clip)
    fr = frames_of(records(out))
    check(len(fr) == 3, f"rgb10-ffv1.mkv: {len(fr)} frames: {err}")
    weights = {"bt601": (2990, 5870, 1140), "bt709": (2126, 7152, 722),
               "bt2020": (2627, 6780, 593)}
    for i, (rec, (r, g, b)) in enumerate(zip(fr, rgb10)):
        kr, kg, kb = weights[rec["matrix"]]
        r, g, b = (c.astype(np.int64) for c in (r, g, b))
        y = (kr * r + kg * g + kb * b + 5000) // 10000
        check(rec["bit_depth"] == 10 and len(rec["histogram"]) == 1024,
              f"rgb10-ffv1.mkv frame {i}: bit_depth {rec['bit_depth']}, "
              f"{len(rec['histogram'])} bins")
        check_frame_stats(rec, y, f"rgb10-ffv1.mkv frame {i}")
    h264_10 = os.path.join(tmp, "ten.mkv")
    gst_launch("videotestsrc", "num-buffers=12", "pattern=smpte",
               "!", "video/x-raw,format=I420_10LE,width=96,height=64,framerate=30/1",
               "!", "x264enc", "key-int-max=5", "!", "h264parse", "!", "matroskamux",
               "!", "filesink", f"location={h264_10}")
    _, out, err = run("stats", "--no-histogram", h264_10)
    fr = frames_of(records(out))
    check(len(fr) == 12 and all(r["bit_depth"] == 10 for r in fr), f"ten.mkv: 12 frames at 10 bits")
    check([r["keyframe"] for r in fr] == [i % 5 == 0 for i in range(12)],
          f"ten.mkv keyframes {[r['keyframe'] for r in fr]}")
    check(all(abs(r["pts"] - i / 30) < 1e-3 for i, r in enumerate(fr)), "ten.mkv pts at 30 fps")

    # Variable frame rate: the timestamps are the file's.
    vfr = os.path.join(tmp, "vfr.mkv")
    ffmpeg("-f", "lavfi", "-i", "testsrc=size=64x48:rate=25", "-frames:v", "12",
           "-vf", "setpts='if(lt(N,6),N*0.04,0.24+(N-6)*0.1)/TB'", "-fps_mode", "vfr",
           "-c:v", "libx264", "-pix_fmt", "yuv420p", vfr)
    _, out, err = run("stats", "--no-histogram", vfr)
    pts = [round(r["pts"], 3) for r in frames_of(records(out))]
    probed = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v", "-show_entries",
                             "frame=pts_time", "-of", "csv=p=0", vfr],
                            check=True, capture_output=True).stdout.decode().split()
    want = [round(float(t.strip(",")), 3) for t in probed]
    steps = {round(b - a, 3) for a, b in zip(pts, pts[1:])}
    check(pts == want and len(steps) > 1, f"vfr.mkv pts {pts} != ffprobe's {want}")
    check_program_stream_times(tmp)
    check_two_video_streams(tmp)
    check_transport_stream_programs(tmp)


def check_two_video_streams(tmp):
    """A file of two video streams: decodebin3 1.22 stalls on some when one
    is left unselected (a Matroska file of two H.264 streams at one rate, no
    audio: a plain gst-launch-1.0 filesrc ! decodebin3 ! fakesink stalls
    too), so stats gave 20 frames, then "no frame for 30 s: the decoding
    pipeline is stuck".  Its first video stream is read, whole and at once,
    frame for frame as the file of that stream alone, in every container."""
    missing = ffmpeg_encoders_missing("libx264", "aac")
    if missing:
        print(f"SKIP: two video streams: this ffmpeg lacks the encoders {', '.join(missing)}")
        return
    source = os.path.join(tmp, "two-videos.mkv")
    ffmpeg("-f", "lavfi", "-i", "testsrc=size=160x120:rate=25:duration=2",
           "-f", "lavfi", "-i", "color=c=red:size=320x240:rate=25:duration=2",
           "-map", "0", "-map", "1", "-c:v", "libx264", source)
    alone = os.path.join(tmp, "first-video-alone.mkv")
    ffmpeg("-i", source, "-map", "0:v:0", "-c", "copy", alone)
    _, out, _ = run("stats", "--no-histogram", alone)
    want = [(r["width"], r["mean"], r["median"]) for r in frames_of(records(out))]
    check(len(want) == 50, f"the first video stream alone: {len(want)} frames, 50 expected")
    with_audio = os.path.join(tmp, "two-videos-audio.mkv")
    ffmpeg("-i", source, "-f", "lavfi", "-i", "sine=duration=2", "-map", "0", "-map", "1",
           "-c:v", "copy", "-c:a", "aac", with_audio)
    paths = [source, with_audio]
    for container in ("mp4", "ts"):
        paths.append(os.path.join(tmp, f"two-videos.{container}"))
        ffmpeg("-i", source, "-map", "0", "-c", "copy", paths[-1])
    for path in paths:
        start = time.monotonic()
        code, out, err = run("stats", "--no-histogram", path)
        took = time.monotonic() - start
        recs = records(out)
        s = summary_of(recs)
        got = [(r["width"], r["mean"], r["median"]) for r in frames_of(recs)]
        check(code == 0 and not err and s and s["complete"] and took < 20 and got == want,
              f"two video streams in {os.path.basename(path)}: exit {code} after {took:.1f} s, "
              f"{err!r}, {len(got)} frames, the first stream's {len(want)} "
              f"{'alike' if got == want else 'unlike'}")


def multi_program_ts(path):
    """An MPEG-TS of three programs, numbered 7, 3 and 9, each of one video
    stream of its own size: 96, 160 and 320 pixels wide."""
    ffmpeg("-f", "lavfi", "-i", "testsrc=size=160x120:rate=25:duration=1",
           "-f", "lavfi", "-i", "testsrc=size=320x240:rate=25:duration=1",
           "-f", "lavfi", "-i", "testsrc=size=96x64:rate=25:duration=1",
           "-map", "0", "-map", "1", "-map", "2", "-c:v", "libx264", "-pix_fmt", "yuv420p",
           "-program", "program_num=7:st=2", "-program", "program_num=3:st=0",
           "-program", "program_num=9:st=1", path)


def check_transport_stream_programs(tmp):
    """A broadcast capture of a whole multiplex holds several programs, and
    GStreamer's tsdemux reads one: the others were left out without a word,
    and none but the first could be read.  A line names them and the one
    read; --program N reads (and writes) another; a program the file has
    not fails that file, naming those it has."""
    if ffmpeg_encoders_missing("libx264"):
        print("SKIP: MPEG-TS programs: this ffmpeg lacks libx264")
        return
    path = os.path.join(tmp, "multiplex.ts")
    multi_program_ts(path)
    code, out, err = run("stats", "--no-histogram", path)
    s = summary_of(records(out))
    check(code == 0 and s and s["complete"] and s["frames"] == 25 and s["width"] == 96 and
          err == f"lumahist: {path}: an MPEG-TS of 3 programs (7, 3, 9): program 7 is read, "
                 "the first whose map comes (GStreamer's tsdemux reads one program; --program "
                 "N, program=N in Python, reads another)\n",
          f"a multiplex of 3 programs: exit {code}, {s and (s['frames'], s['width'])}, {err!r}")
    single = os.path.join(tmp, "one-program.ts")
    ffmpeg("-i", path, "-map", "0:p:3", "-c", "copy", single)
    code, out, err = run("stats", "--no-histogram", single)
    s = summary_of(records(out))
    check(code == 0 and err == "" and s and s["width"] == 160,
          f"one program of it: exit {code}, {err!r}, {s and s['width']}")
    # --program: each program's frames, those of the program alone.
    for program, width in ((3, 160), (9, 320), (7, 96)):
        code, out, err = run("stats", "--no-histogram", "--program", str(program), path)
        got = [(r["width"], r["mean"]) for r in frames_of(records(out))]
        alone = os.path.join(tmp, f"program-{program}.ts")
        ffmpeg("-i", path, "-map", f"0:p:{program}", "-c", "copy", alone)
        _, out, _ = run("stats", "--no-histogram", alone)
        want = [(r["width"], r["mean"]) for r in frames_of(records(out))]
        check(code == 0 and err == "" and len(got) == 25 and got == want and
              got[0][0] == width,
              f"--program {program}: exit {code}, {err!r}, {len(got)} frames "
              f"{'like' if got == want else 'unlike'} the program's alone")
    # Another container has no programs: --program leaves it be.
    other = os.path.join(tmp, "program-3.mkv")
    ffmpeg("-i", path, "-map", "0:p:3", "-c", "copy", other)
    code, out, err = run("stats", "--no-histogram", "--program", "5", path, other)
    check(code == 1 and summary_of(records(out), other) and not frames_of(records(out), path) and
          err == f"lumahist: {path}: no program 5 in it: it has 3 programs (7, 3, 9)\n",
          f"--program 5 of programs 7, 3, 9: exit {code}, {err!r}")
    code, _, err = run("stats", "--program", "0", path)
    check(code == 2 and "--program must be a program number, 1 .. 65535" in err,
          f"--program 0: exit {code}, {err!r}")
    # Written back, it holds the program read; the line says so.
    out_dir = os.path.join(tmp, "multiplex-out")

    def widths(output):
        probed = subprocess.run(["ffprobe", "-v", "error", "-show_entries", "stream=width",
                                 "-of", "json", output], capture_output=True, text=True).stdout
        return [stream["width"] for stream in json.loads(probed or "{}").get("streams", [])]

    code, _, err = run("equalize", "--out", out_dir, path)
    output = os.path.join(out_dir, "multiplex.ts")
    check(code == 0 and widths(output) == [96] and
          err == f"lumahist: {path}: written with program 7 alone of its 3 programs (7, 3, 9): "
                 "GStreamer's tsdemux reads one program (--program N writes another)\n",
          f"equalize of a multiplex of 3 programs: exit {code}, widths {widths(output)}, "
          f"{err!r}")
    out_dir = os.path.join(tmp, "multiplex-program-9")
    code, _, err = run("equalize", "--program", "9", "--out", out_dir, path)
    output = os.path.join(out_dir, "multiplex.ts")
    check(code == 0 and err == "" and widths(output) == [320],
          f"equalize --program 9: exit {code}, widths {widths(output)}, {err!r}")
    out_dir = os.path.join(tmp, "multiplex-program-4")
    code, _, err = run("equalize", "--program", "4", "--out", out_dir, path)
    check(code == 1 and not os.listdir(out_dir) and
          err == f"lumahist: {path}: no program 4 in it: it has 3 programs (7, 3, 9)\n",
          f"equalize --program 4: exit {code}, {err!r}, wrote {os.listdir(out_dir)}")


def compare_signalstats(path, expect_p10_equal=True):
    """Every frame: our fields against FFmpeg's, as the README states them."""
    code, out, err = run("stats", "--no-histogram", "-p", "10,90", path)
    ours = frames_of(records(out))
    theirs = signalstats(path)
    if not check(code == 0 and len(ours) == len(theirs) and ours,
                 f"{path}: {len(ours)} frames here, {len(theirs)} by ffprobe ({err.strip()})"):
        return
    name = os.path.basename(path)
    for i, (a, b) in enumerate(zip(ours, theirs)):
        where = f"{name} frame {i}"
        check(a["min"] == int(b["YMIN"]), f"{where}: min {a['min']} != YMIN {b['YMIN']}")
        check(a["max"] == int(b["YMAX"]), f"{where}: max {a['max']} != YMAX {b['YMAX']}")
        check("%g" % a["mean"] == b["YAVG"], f"{where}: mean {a['mean']:g} != YAVG {b['YAVG']}")
        check(a["signalstats_low"] == int(b["YLOW"]), f"{where}: signalstats_low != YLOW")
        check(a["signalstats_high"] == int(b["YHIGH"]), f"{where}: signalstats_high != YHIGH")
        n = a["count"]
        same_rank = math.ceil(n * 10 / 100) == round(n * 10 / 100)
        if same_rank:
            check(a["percentiles"]["10"] == int(b["YLOW"]), f"{where}: P10 != YLOW")
        if math.ceil(n * 90 / 100) == round(n * 90 / 100):
            check(a["percentiles"]["90"] == int(b["YHIGH"]), f"{where}: P90 != YHIGH")
        if i == 0:
            check(a["diff"] is None and float(b["YDIF"]) == 0, f"{where}: first frame's diff")
        else:
            check("%g" % a["diff"] == b["YDIF"], f"{where}: diff {a['diff']:g} != YDIF {b['YDIF']}")
    return ours


def group_signalstats(tmp):
    rng = np.random.default_rng(3)
    # Raw clips: 13 x 7 = 91 pixels, where FFmpeg's 10 % rank lrint(9.1) = 9 is
    # not the nearest rank ceil(9.1) = 10: P10 and YLOW differ there, and
    # signalstats_low is YLOW.
    odd = os.path.join(tmp, "odd.y4m")
    write_y4m(odd, random_frames(rng, 5, 7, 13))
    ours = compare_signalstats(odd)
    if ours:
        differ = sum(r["percentiles"]["10"] != r["signalstats_low"] for r in ours)
        print(f"odd.y4m: P10 differs from YLOW on {differ} of {len(ours)} frames")
    even = os.path.join(tmp, "even.y4m")
    write_y4m(even, random_frames(rng, 6, 48, 64, 10, 245), chroma="420")
    compare_signalstats(even)
    # H.264 from FFmpeg and from GStreamer: both decoders are libavcodec's.
    x264 = os.path.join(tmp, "x264.mp4")
    ffmpeg("-f", "lavfi", "-i", "testsrc2=size=320x180:rate=25", "-frames:v", "40",
           "-c:v", "libx264", "-g", "12", "-pix_fmt", "yuv420p", x264)
    compare_signalstats(x264)
    gst = os.path.join(tmp, "gst.mkv")
    gst_launch("videotestsrc", "num-buffers=30", "pattern=ball", "!",
               "video/x-raw,format=I420,width=176,height=144,framerate=25/1", "!",
               "x264enc", "!", "h264parse", "!", "matroskamux", "!", "filesink",
               f"location={gst}")
    compare_signalstats(gst)
    ten = os.path.join(tmp, "ten.mkv")
    ffmpeg("-f", "lavfi", "-i", "testsrc2=size=128x96:rate=25", "-frames:v", "10",
           "-c:v", "libx264", "-pix_fmt", "yuv420p10le", ten)
    ours = compare_signalstats(ten)
    check(ours and ours[0]["bit_depth"] == 10, "yuv420p10le H.264 reports bit_depth 10")
    # Theora in Ogg: its three header packets enter theoradec as buffers,
    # and were counted as 3 frames that "could not be decoded".
    if not ffmpeg_encoders_missing("libtheora") and not gst_elements_missing("theoradec"):
        theora = os.path.join(tmp, "theora.ogv")
        ffmpeg("-f", "lavfi", "-i", "testsrc2=size=96x64:rate=25", "-frames:v", "10",
               "-c:v", "libtheora", theora)
        compare_signalstats(theora)
        summary_says(theora, frames=10)
    # The photographs of samples/ turned into a clip (and into H.264).
    photos = sorted(f for f in os.listdir(SAMPLES) if f.endswith(".jpg"))
    listing = os.path.join(tmp, "photos.txt")
    with open(listing, "w") as f:
        for p in photos:
            f.write(f"file '{os.path.abspath(os.path.join(SAMPLES, p))}'\nduration 0.04\n")
    photos_clip = os.path.join(tmp, "photos.mkv")
    ffmpeg("-f", "concat", "-safe", "0", "-i", listing, "-vf",
           "scale=640:360:force_original_aspect_ratio=decrease,pad=640:360:(ow-iw)/2:(oh-ih)/2",
           "-fps_mode", "passthrough", "-c:v", "libx264", "-pix_fmt", "yuv420p", photos_clip)
    ours = compare_signalstats(photos_clip)
    check(ours and len(ours) == len(photos), f"photos.mkv: one frame per photograph")


def ts_packets(data, size):
    """(offset, pid, unit start) of each packet of a transport stream with
    packets of size bytes (188, or 192 with M2TS's time code first)."""
    sync = size - 188
    result = []
    for at in range(0, len(data) - size + 1, size):
        p = data[at + sync:at + sync + 188]
        assert p[0] == 0x47, f"no sync byte at {at}"
        result.append((at, ((p[1] & 0x1F) << 8) | p[2], bool(p[1] & 0x40)))
    return result


def transport_streams(tmp, good):
    """MPEG-TS and M2TS files written by FFmpeg and by GStreamer's mpegtsmux,
    whole and cut (README: a cut inside a packet, or between packets inside a
    PES whose header states its length, as mpegtsmux's do).  The whole ones
    must read as complete here; the cut ones are returned as cases that must
    say "truncated"."""
    made = {
        "ffmpeg.ts": ["-c", "copy", "-f", "mpegts"],
        "ffmpeg.m2ts": ["-c", "copy", "-f", "mpegts", "-mpegts_m2ts_mode", "1"],
    }
    for name, args in made.items():
        ffmpeg("-i", good, *args, os.path.join(tmp, name))
    with_audio = os.path.join(tmp, "ffmpeg-audio.ts")
    ffmpeg("-i", good, "-f", "lavfi", "-i", "sine=duration=4", "-map", "0:v", "-map", "1:a",
           "-c:v", "copy", "-c:a", "aac", "-shortest", with_audio)
    gst = os.path.join(tmp, "mpegtsmux.ts")
    gst_launch("videotestsrc", "num-buffers=100", "pattern=smpte", "!",
               "video/x-raw,format=I420,width=160,height=120,framerate=25/1", "!",
               "x264enc", "key-int-max=10", "!", "h264parse", "!", "mpegtsmux", "!",
               "filesink", f"location={gst}")
    whole = [os.path.join(tmp, n) for n in made] + [with_audio, gst]
    for path in whole:
        code, out, err = run("stats", "--no-histogram", path)
        s = summary_of(records(out))
        check(code == 0 and err == "" and s and s["complete"] and s["frames"] == 100,
              f"{os.path.basename(path)} (whole): exit {code}, {err!r}, "
              f"summary {s and (s['complete'], s['frames'])}")
    cases = {}
    for path in whole:
        data = open(path, "rb").read()
        size = 192 if path.endswith(".m2ts") else 188
        check(len(data) % size == 0, f"{path}: {len(data)} bytes, not whole packets")
        # Three fifths of the file and half a packet.
        stem, ext = os.path.splitext(os.path.basename(path))
        cut = os.path.join(tmp, f"{stem}-cut{ext}")
        open(cut, "wb").write(data[:len(data) * 3 // 5 // size * size + size // 2])
        cases[cut] = "truncated"
    # mpegtsmux states each PES's length: a cut between two packets, before
    # a packet that goes on with a video PES, is seen too.
    data = open(gst, "rb").read()
    packets = ts_packets(data, 188)
    # The video's packets are most of them (the others: PAT and PMT).
    video = max(set(pid for _, pid, _ in packets), key=[pid for _, pid, _ in packets].count)
    at = next(offset for offset, pid, start in packets[len(packets) * 3 // 5:]
              if pid == video and not start)
    between = os.path.join(tmp, "mpegtsmux-between.ts")
    open(between, "wb").write(data[:at])
    cases[between] = "truncated"
    return cases


def group_bad(tmp):
    good = os.path.join(tmp, "good.mkv")
    gst_launch("videotestsrc", "num-buffers=100", "pattern=smpte", "!",
               "video/x-raw,format=I420,width=160,height=120,framerate=25/1", "!",
               "x264enc", "key-int-max=10", "!", "h264parse", "!", "matroskamux", "!",
               "filesink", f"location={good}")
    data = open(good, "rb").read()
    cases = {}
    truncated = os.path.join(tmp, "truncated.mkv")
    open(truncated, "wb").write(data[:len(data) // 2])
    cases[truncated] = "truncated"
    corrupt = os.path.join(tmp, "corrupt.mp4")
    ffmpeg("-i", good, "-c", "copy", os.path.join(tmp, "good.mp4"))
    d = bytearray(open(os.path.join(tmp, "good.mp4"), "rb").read())
    for i in range(3000, len(d) - 4000, 97):
        d[i] ^= 0xFF
    open(corrupt, "wb").write(d)
    cases[corrupt] = "damaged"
    audio = os.path.join(tmp, "audio-only.mkv")
    ffmpeg("-f", "lavfi", "-i", "sine=duration=1", "-c:a", "libvorbis", audio)
    cases[audio] = "no video stream"
    junk = os.path.join(tmp, "junk.mp4")
    open(junk, "wb").write(b"this is not a video at all" * 10)
    cases[junk] = "not a video file"
    cases.update(transport_streams(tmp, good))
    cases.update(cut_y4m_files(tmp))
    cases.update(unreadable_y4m_files(tmp))
    cases.update(cut_in_first_frame_files(tmp))
    # Files of headers alone, no frame (a recorder stopped at once): the
    # Matroska ones waited for the stall timeout (30 s) and said "stuck".
    for ext in ("mkv", "webm", "mp4", "avi"):
        empty = os.path.join(tmp, f"no-frames.{ext}")
        codec = ["-c:v", "libvpx"] if ext == "webm" else ["-c:v", "mpeg4"]
        ffmpeg("-f", "lavfi", "-i", "testsrc2=size=64x48", "-frames:v", "0", *codec, empty)
        cases[empty] = "damaged or truncated file ("
    for path, words in cases.items():
        out_file = os.path.join(tmp, "out.jsonl")
        code, out, err = run("stats", "--no-histogram", "-o", out_file, path)
        lines = [l for l in err.splitlines() if l.startswith("lumahist:")]
        name = os.path.basename(path)
        check(code == 1, f"{name}: exit {code}, expected 1")
        check(len(lines) == 1 and words in lines[0], f"{name}: message {lines!r} lacks {words!r}")
        recs = records(open(out_file).read())
        if words in ("truncated", "damaged"):
            s = summary_of(recs)
            check(s and not s["complete"] and words in s["error"] and
                  s["frames"] == len(frames_of(recs)) > 0,
                  f"{name}: frames before the damage kept, summary marked")
        else:
            check(recs == [], f"{name}: no records")
    check_cut_near_end(tmp)
    check_trimmed_by_edit_list(tmp)
    # GStreamer 1.22's y4mdec drops a file's last 60-72 bytes of frames: of
    # 10 frames of 4x4, 8 came out, exit 0 and "complete"; of 1x1 the
    # duration check said "truncated".  The file's own frame count says so.
    for h, w in ((4, 4), (1, 1)):
        tiny = os.path.join(tmp, f"tiny-{w}x{h}.y4m")
        write_y4m(tiny, random_frames(np.random.default_rng(7), 10, h, w))
        code, out, err = run("stats", "--no-histogram", tiny)
        recs = records(out)
        s = summary_of(recs)
        said = re.search(r"GStreamer's y4mdec decoded (\d+) of the file's 10 frames", err)
        check(code == 1 and said and len(err.strip().splitlines()) == 1 and s and
              not s["complete"] and len(frames_of(recs)) == int(said.group(1)) < 10,
              f"{w}x{h} y4m of 10 frames: exit {code}, {err!r}, {len(frames_of(recs))} frames")
    # FFV1 of a pixel format GStreamer has no name for (with alpha, 16 bits):
    # gst-libav 1.22's decoder crashed the process (SIGSEGV) and the rest of
    # the run with it.  Now one line, and the other video of the folder read
    # and written.
    exotic = os.path.join(tmp, "exotic")
    os.makedirs(exotic)
    for pix_fmt in ("yuva444p", "yuv420p16le"):
        ffmpeg("-f", "lavfi", "-i", "testsrc2=size=64x48:rate=10", "-frames:v", "5",
               "-pix_fmt", pix_fmt, "-c:v", "ffv1", os.path.join(exotic, f"a-{pix_fmt}.mkv"))
    shutil.copy(good, os.path.join(exotic, "b-good.mkv"))
    for command in ("stats", "equalize"):
        out_dir = os.path.join(tmp, "exotic-out")
        args = ("--out", out_dir) if command == "equalize" else ("--no-histogram",)
        code, out, err = run(command, *args, exotic)
        lines = err.splitlines()
        check(code == 1 and len(lines) == 2 and
              all(l.endswith(": GStreamer's avdec_ffv1 decodes its video to a pixel format that "
                             "GStreamer has no format for (its output could not be negotiated)")
                  for l in lines),
              f"{command} of FFV1 in formats GStreamer lacks: exit {code}, {err!r}")
        if command == "stats":
            s = summary_of(records(out), os.path.join(exotic, "b-good.mkv"))
            check(s and s["complete"] and s["frames"] == 100, "the good video beside them")
        else:
            check(sorted(os.listdir(out_dir)) == ["b-good.mkv"],
                  f"equalize beside FFV1 it cannot read: {sorted(os.listdir(out_dir))}")
    # No decoder for the stream: H.264's decoder ranked out of use.
    env = dict(os.environ, GST_PLUGIN_FEATURE_RANK="avdec_h264:NONE,nvh264dec:NONE,"
               "nvh264sldec:NONE,vah264dec:NONE,openh264dec:NONE")
    code, _, err = run("stats", good, env=env)
    check(code == 1 and "no GStreamer decoder" in err and len(err.strip().splitlines()) == 1,
          f"no decoder: exit {code}, {err!r}")
    # The same video with audio beside it: parsebin leaves the stream that no
    # decoder takes out of its stream collection, which holds the audio
    # alone, as an audio-only file's does; the message still names the codec.
    no_audio_decoder = dict(os.environ,
                            GST_PLUGIN_FEATURE_RANK="vorbisdec:NONE,avdec_vorbis:NONE")
    for ext, audio_codec in ((".mov", "pcm_s16le"), (".mkv", "libvorbis")):
        both = os.path.join(tmp, f"with-audio{ext}")
        ffmpeg("-i", good, "-f", "lavfi", "-i", "sine=duration=4", "-map", "0:v", "-map", "1:a",
               "-c:v", "copy", "-c:a", audio_codec, "-shortest", both)
        code, out, err = run("stats", "--no-histogram", both, env=env)
        want = f"lumahist: {both}: no GStreamer decoder is installed for its video (H.264 ("
        check(code == 1 and err.startswith(want) and err.rstrip().endswith(" decoder)") and
              len(err.strip().splitlines()) == 1 and records(out) == [],
              f"no decoder, with audio ({ext}): exit {code}, {err!r}")
        if audio_codec == "libvorbis":
            # The audio's decoder missing instead: the video is read whole.
            code, out, err = run("stats", "--no-histogram", both, env=no_audio_decoder)
            s = summary_of(records(out))
            check(code == 0 and err == "" and s and s["complete"] and s["frames"] == 100,
                  f"no audio decoder, with video: exit {code}, {err!r}")
    # An audio-only file whose decoder is missing has no video stream: the
    # audio decoder is not named as the video's.
    aac = os.path.join(tmp, "audio-only.mp4")
    ffmpeg("-f", "lavfi", "-i", "sine=duration=1", "-c:a", "aac", aac)
    no_aac_decoder = dict(os.environ, GST_PLUGIN_FEATURE_RANK="avdec_aac:NONE,"
                          "avdec_aac_fixed:NONE,faad:NONE,fdkaacdec:NONE")
    for path, no_decoder in ((audio, no_audio_decoder), (aac, no_aac_decoder)):
        code, _, err = run("stats", "--no-histogram", path, env=no_decoder)
        check(code == 1 and err == f"lumahist: {path}: no video stream\n",
              f"{os.path.basename(path)}, no audio decoder: exit {code}, {err!r}")
    # A stuck source (a pipe that stops writing) is given up after the timeout.
    fifo = os.path.join(tmp, "stuck.mkv")
    os.mkfifo(fifo)
    y4m = os.path.join(tmp, "raw.y4m")
    # Enough bytes for GStreamer's type finding, which reads ahead; FFV1, a
    # codec without delay, so that every frame is out before the stall.
    write_y4m(y4m, random_frames(np.random.default_rng(1), 10, 64, 64))
    raw = os.path.join(tmp, "raw.mkv")
    ffmpeg("-i", y4m, "-c:v", "ffv1", raw)
    # The shell opens the pipe (which waits for its reader) and holds it open.
    writer = subprocess.Popen(["sh", "-c", f"(cat '{raw}'; sleep 30) > '{fifo}'"],
                              start_new_session=True)
    start = time.monotonic()
    try:
        code, out, err = run("stats", "--no-histogram", "--video-timeout", "2", fifo, timeout=60)
    finally:
        os.killpg(writer.pid, signal.SIGKILL)
        writer.wait()
    took = time.monotonic() - start
    check(code == 1 and "stuck" in err and took < 20, f"stuck pipe: exit {code} after {took:.1f} s: {err}")
    recs = records(out)
    kept = frames_of(recs)
    # The demuxer holds the last block until the next one begins.
    check(len(kept) >= 8 and summary_of(recs) and not summary_of(recs)["complete"],
          f"stuck pipe: the frames before are kept ({len(kept)} of 10), the summary marked")
    check_video_fifo_waits(tmp, raw)
    check_container_kinds(tmp)
    check_unknown_codecs(tmp)


def check_container_kinds(tmp):
    """NUT and DV files were taken for images ("not a PNG or JPEG file"),
    named or in a folder, and a folder's .f4v, .3g2, .dif and .m2v files were
    not found.  GStreamer 1.22 reads DV (dvdemux) and those; its only NUT
    demuxer (gst-libav's avdemux_nut) hangs after a raw stream's last frame
    and fails on H.264, so a NUT file is refused with one line saying so."""
    missing = ffmpeg_encoders_missing("dvvideo", "rawvideo", "libx264", "mpeg2video")
    if missing:
        print(f"SKIP: container kinds: this ffmpeg lacks the encoders {', '.join(missing)}")
        return
    folder = os.path.join(tmp, "kinds")
    os.makedirs(folder)
    src = ["-f", "lavfi", "-i", "testsrc2=size=64x48:rate=25", "-frames:v", "5"]
    ffmpeg("-f", "lavfi", "-i", "testsrc2=size=720x576:rate=25", "-frames:v", "3",
           "-c:v", "dvvideo", "-pix_fmt", "yuv420p", os.path.join(folder, "a.dv"))
    shutil.copy(os.path.join(folder, "a.dv"), os.path.join(folder, "b.dif"))
    ffmpeg(*src, "-c:v", "libx264", "-f", "f4v", os.path.join(folder, "c.f4v"))
    ffmpeg(*src, "-c:v", "libx264", "-f", "3g2", os.path.join(folder, "d.3g2"))
    ffmpeg(*src, "-c:v", "mpeg2video", "-f", "mpeg2video", os.path.join(folder, "e.m2v"))
    nut = os.path.join(tmp, "raw.nut")
    ffmpeg(*src, "-c:v", "rawvideo", nut)
    # The names of other tools' and devices' files: DivX's AVI, program
    # streams (JVC camcorders' .tod, DVD-VR's .vro), elementary MPEG video,
    # set-top boxes' MPEG-TS, stereoscopic Matroska, RealMedia.
    ffmpeg(*src, "-c:v", "mpeg4", "-vtag", "XVID", "-f", "avi", os.path.join(folder, "f.divx"))
    ffmpeg(*src, "-c:v", "mpeg2video", "-f", "vob", os.path.join(folder, "g.m2p"))
    for name in ("h.mpe", "i.tod", "j.vro"):
        shutil.copy(os.path.join(folder, "g.m2p"), os.path.join(folder, name))
    ffmpeg(*src, "-c:v", "mpeg1video", "-f", "mpeg1video", os.path.join(folder, "k.m1v"))
    shutil.copy(os.path.join(folder, "k.m1v"), os.path.join(folder, "l.mpv"))
    ffmpeg(*src, "-c:v", "libx264", "-f", "mpegts", os.path.join(folder, "m.trp"))
    ffmpeg(*src, "-c:v", "libx264", "-f", "matroska", os.path.join(folder, "n.mk3d"))
    frames = {"a.dv": 3, "b.dif": 3, "c.f4v": 5, "d.3g2": 5, "e.m2v": 5, "f.divx": 5, "g.m2p": 5,
              "h.mpe": 5, "i.tod": 5, "j.vro": 5, "k.m1v": 5, "l.mpv": 5, "m.trp": 5, "n.mk3d": 5}
    real_media = not ffmpeg_encoders_missing("rv10") and not gst_elements_missing("rmdemux")
    if real_media:
        ffmpeg(*src, "-c:v", "rv10", "-f", "rm", os.path.join(folder, "o.rm"))
        shutil.copy(os.path.join(folder, "o.rm"), os.path.join(folder, "p.rmvb"))
        frames.update({"o.rm": 5, "p.rmvb": 5})
    else:
        print("note: no rv10 encoder in this ffmpeg or no rmdemux here: RealMedia not checked")
    code, out, err = run("stats", "--no-histogram", folder)
    recs = records(out)
    for name, n in frames.items():
        s = summary_of(recs, os.path.join(folder, name))
        check(s and s["complete"] and s["frames"] == n,
              f"{name} in a folder: summary {s and (s['complete'], s['frames'])}, {n} frames "
              f"expected (exit {code}, {err!r})")
    check(code == 0, f"folder of DV, F4V, 3G2, M2V, ...: exit {code}, {err!r}")
    if real_media:
        # Named, RealMedia is told by its bytes (".RMF"), whatever its name.
        named = os.path.join(tmp, "real.bin")
        shutil.copy(os.path.join(folder, "o.rm"), named)
        code, out, err = run("stats", "--no-histogram", named)
        s = summary_of(records(out))
        check(code == 0 and s and s["complete"] and s["frames"] == 5,
              f"RealMedia named real.bin: exit {code}, {err!r}")
    # Named, a DV file is told by its bytes, whatever its name; so are bare
    # H.264 and MPEG-2 streams (a start code, then a sequence header), on
    # standard input too, where they were "not a PNG or JPEG file".
    tape = os.path.join(tmp, "tape.bin")
    shutil.copy(os.path.join(folder, "a.dv"), tape)
    code, out, err = run("stats", "--no-histogram", tape)
    s = summary_of(records(out))
    check(code == 0 and s and s["complete"] and s["frames"] == 3,
          f"DV named tape.bin: exit {code}, {err!r}")
    bare = {"h264.bin": ["-c:v", "libx264", "-f", "h264"],
            "mpeg2.bin": ["-c:v", "mpeg2video", "-f", "mpeg2video"]}
    for name, args in bare.items():
        path = os.path.join(tmp, name)
        ffmpeg(*src, *args, path)
        code, out, err = run("stats", "--no-histogram", path)
        s = summary_of(records(out))
        check(code == 0 and s and s["complete"] and s["frames"] == 5,
              f"bare stream {name}: exit {code}, {err!r}")
        with open(path, "rb") as stream:
            proc = subprocess.run([LUMAHIST, "stats", "--no-histogram", "-"], stdin=stream,
                                  capture_output=True, text=True, timeout=120)
        s = summary_of(records(proc.stdout))
        check(proc.returncode == 0 and s and s["complete"] and s["frames"] == 5,
              f"bare stream {name} on standard input: exit {proc.returncode}, {proc.stderr!r}")
    want = (f"lumahist: {nut}: a NUT file: GStreamer 1.22 has no working demuxer for NUT "
            f"(gst-libav's avdemux_nut never ends a raw video stream and fails on H.264); "
            f"convert it to another container\n")
    start = time.monotonic()
    code, out, err = run("stats", "--no-histogram", nut)
    took = time.monotonic() - start
    check(code == 1 and err == want and out == "" and took < 10,
          f"NUT file: exit {code} after {took:.1f} s, {err!r}")
    out_dir = os.path.join(tmp, "kinds-out")
    code, out, err = run("equalize", "--out", out_dir, nut)
    check(code == 1 and err == want and not os.listdir(out_dir),
          f"equalize of a NUT file: exit {code}, {err!r}, wrote {os.listdir(out_dir)}")


def check_unknown_codecs(tmp):
    """A stream its demuxer could not name was "no GStreamer decoder is
    installed for its video (video/x-avi-unknown decoder)", which names
    nothing to install: the container's name for the codec is said, and
    that GStreamer has no decoder for it, by stats and the write-back."""
    missing = ffmpeg_encoders_missing("rawvideo", "utvideo")
    if missing:
        print(f"SKIP: unknown codecs: this ffmpeg lacks the encoders {', '.join(missing)}")
        return
    major_minor = subprocess.run(["gst-launch-1.0", "--version"], capture_output=True,
                                 text=True).stdout.split()[2].rsplit(".", 1)[0]
    no_decoder = f"GStreamer {major_minor} has no decoder for its video: "
    codec = "a codec it does not know"
    cases = {
        "nv12.mkv": (["-pix_fmt", "nv12", "-c:v", "rawvideo"],
                     "raw video in a pixel format its Matroska demuxer does not read "
                     "(Matroska codec ID V_UNCOMPRESSED)"),
        "ut.avi": (["-c:v", "utvideo"], f"{codec} (AVI fourcc ULY0)"),
        "ut.mkv": (["-c:v", "utvideo"], f"{codec} (Matroska codec ID V_MS/VFW/FOURCC, fourcc ULY0)"),
        "ut.mov": (["-c:v", "utvideo"], f"{codec} (QuickTime fourcc ULY0)"),
    }
    out_dir = os.path.join(tmp, "unknown-out")
    # Of 3 frames, stats said "damaged or truncated file: it ends before its
    # video's first frame": the file was read to its end before the wait for
    # a first frame gave up, and the stream no decoder takes was not asked.
    for frames in (25, 3):
        src = ["-f", "lavfi", "-i", "testsrc2=size=64x48:rate=25", "-frames:v", str(frames)]
        for name, (args, what) in cases.items():
            path = os.path.join(tmp, f"{frames}-{name}")
            ffmpeg(*src, "-pix_fmt", "yuv420p", *args, path)
            want = f"lumahist: {path}: {no_decoder}{what}\n"
            for command in ("stats", "equalize"):
                extra = ("--out", out_dir) if command == "equalize" else ("--no-histogram",)
                code, out, err = run(command, *extra, path)
                check(code == 1 and err == want and records(out) == [],
                      f"{command} {name} of {frames} frames: exit {code}, {err!r}, "
                      f"expected {want!r}")
    check(not os.path.exists(out_dir) or not os.listdir(out_dir), "unknown codecs: nothing written")


def cut_y4m_files(tmp):
    """YUV4MPEG2 files cut inside a frame's planes and inside a frame's
    header: y4mdec drops the short last frame quietly and the file states no
    duration, so the frames are walked from the header's frame size
    (src/io/y4m-end.c), in each chroma y4mdec reads (4:2:2 and 4:4:4 at an
    odd size, so that a rounding of the chroma planes' size shows).  The
    whole file, and one with junk after its last frame, are complete; the
    cut ones are returned as cases that must say "truncated" (those cut in
    their first frame, which leave no frame, at once and with no record)."""
    cases = {}
    for chroma, h, w, prefix in (("420", 30, 40, ""), ("422", 31, 41, "422-"),
                                 ("444", 31, 41, "444-")):
        whole = os.path.join(tmp, prefix + "whole.y4m")
        write_y4m(whole, random_frames(np.random.default_rng(5), 10, h, w), chroma=chroma)
        data = open(whole, "rb").read()
        header = data.index(b"\n") + 1
        cw, ch = chroma_size(chroma, w, h)
        frame = len(b"FRAME\n") + w * h + 2 * cw * ch
        check(len(data) == header + 10 * frame, f"{prefix}whole.y4m: {len(data)} bytes")
        junk = os.path.join(tmp, prefix + "junk-after.y4m")
        open(junk, "wb").write(data + b"not a frame\n")
        for path in (whole, junk):
            summary_says(path, frames=10)
        for name, size in (("cut-planes.y4m", len(data) - frame // 2),
                           ("cut-frame-header.y4m", header + 4 * frame + 3),
                           ("cut-one-byte.y4m", len(data) - 1)):
            cut = os.path.join(tmp, prefix + name)
            open(cut, "wb").write(data[:size])
            cases[cut] = "truncated"
        # Cut inside the first frame: y4mdec never stated its caps, and the
        # run waited for a frame until --video-timeout, then said "stuck".
        for name, size in (("cut-first-planes.y4m", header + frame // 2),
                           ("cut-first-header.y4m", header + 3)):
            cut = os.path.join(tmp, prefix + name)
            open(cut, "wb").write(data[:size])
            cases[cut] = "the file is truncated: it ends %d bytes into a %d-byte YUV4MPEG2 " \
                "frame, the first (no frame to decode)" % (size - header, frame)
    return cases


def cut_in_first_frame_files(tmp):
    """Files cut in the middle of their first video packet (where ffprobe
    puts it), as cases that must say "damaged or truncated file" with no
    record: their demuxers end quietly, decodebin3 never exposes the stream,
    and the run waited for a frame until --video-timeout (30 s), then said
    "stuck"; the transport stream's decoder said "No valid frames decoded
    before end of stream", no word of damage."""
    cases = {}
    for ext, codec in (("mkv", "libx264"), ("webm", "libvpx"), ("mp4", "libx264"),
                       ("avi", "libx264"), ("ts", "libx264")):
        whole = os.path.join(tmp, f"first-frame-whole.{ext}")
        flags = ["-movflags", "+faststart"] if ext == "mp4" else []
        ffmpeg("-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25", "-frames:v", "10",
               "-c:v", codec, "-pix_fmt", "yuv420p", *flags, whole)
        probed = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v",
                                 "-show_entries", "packet=pos,size", "-of", "json", whole],
                                capture_output=True, text=True, check=True)
        first = json.loads(probed.stdout)["packets"][0]
        pos, size = int(first["pos"]), int(first["size"])
        # A transport stream's packet is 188 bytes: two of the first frame's
        # (half its frame leaves the decoder a frame to conceal).
        end = pos + 2 * 188 if ext == "ts" else pos + size // 2
        cut = os.path.join(tmp, f"cut-in-first-frame.{ext}")
        with open(whole, "rb") as f:
            open(cut, "wb").write(f.read()[:end])
        cases[cut] = "damaged or truncated file"
    return cases


def unreadable_y4m_files(tmp):
    """YUV4MPEG2 files that GStreamer 1.22's y4mdec cannot read, as cases
    whose one line says why rather than y4mdec's "Failed to parse YUV4MPEG
    header" (or "frame"), which reads as damage: colour spaces it does not
    read (it reads 8-bit 4:2:0, 4:2:2 and 4:4:4 only) and a header alone."""
    cases = {}
    for pix_fmt, tag in (("gray", "Cmono"), ("yuv411p", "C411"), ("yuv420p10le", "C420p10"),
                         ("yuv422p10le", "C422p10"), ("yuva444p", "C444alpha")):
        path = os.path.join(tmp, f"{pix_fmt}.y4m")
        ffmpeg("-f", "lavfi", "-i", "testsrc2=size=64x48:duration=0.2", "-strict", "-1",
               "-pix_fmt", pix_fmt, path)
        cases[path] = f"colour space {tag}: GStreamer's y4mdec reads only 8-bit 4:2:0, 4:2:2"
    header_only = os.path.join(tmp, "header-only.y4m")
    write_y4m(header_only, random_frames(np.random.default_rng(6), 1, 8, 8))
    with open(header_only, "rb") as f:
        header = f.readline()
    with open(header_only, "wb") as f:
        f.write(header)
    cases[header_only] = "no frame: the YUV4MPEG2 file ends after its header"
    return cases


def write_once_read(fifo, data):
    """Writes data (less than a pipe holds) into fifo as soon as a reader has
    it open, and closes it at once."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        except OSError:  # ENXIO: no reader yet
            time.sleep(0.0005)
            continue
        os.write(fd, data)
        os.close(fd)
        return


def check_video_fifo_waits(tmp, video):
    """A FIFO named as a video waits for its writer as an image's does: a
    late writer is read, one that never comes is given up after --fifo-wait
    and the run goes on, and Ctrl-C ends the wait (GStreamer's filesrc
    blocked in open() for ever, deaf to both).  A writer that opens it and
    writes nothing is a stalled video (--video-timeout), as before."""
    good = os.path.join(tmp, "good.y4m")
    write_y4m(good, random_frames(np.random.default_rng(2), 3, 16, 16))
    late = os.path.join(tmp, "late.mkv")
    os.mkfifo(late)
    writer = subprocess.Popen(["sh", "-c", f"sleep 1; cat '{video}' > '{late}'"])
    try:
        code, out, err = run("stats", "--no-histogram", late, timeout=60)
    finally:
        writer.kill()
        writer.wait()
    s = summary_of(records(out), late)
    check(code == 0 and err == "" and s and s["complete"] and s["frames"] == 10,
          f"a video FIFO whose writer comes after 1 s: exit {code}, {err!r}, {s}")
    silent = os.path.join(tmp, "silent.mkv")
    os.mkfifo(silent)
    start = time.monotonic()
    code, out, err = run("stats", "--no-histogram", "--fifo-wait", "1", silent, good, timeout=60)
    took = time.monotonic() - start
    check(code == 1 and err == f"lumahist: {silent}: a FIFO no writer opened in 1 s\n"
          and summary_of(records(out), good) and 1 <= took < 15,
          f"a video FIFO without a writer, --fifo-wait 1: exit {code} after {took:.1f} s, "
          f"{err!r}")
    # A writer quick enough to write all it has and close before lumahist's
    # open of the FIFO returned left it waiting for a writer that had gone
    # ("no writer opened in 30 s", the bytes in the FIFO unread); and the
    # checks of a YUV4MPEG2's, a transport stream's and an AVI's end opened
    # the FIFO again once it was read, and waited for ever.
    # (10 frames: avidemux, reading a pipe, fails on an AVI of 3.)
    for name, made in (("quick.y4m", None), ("quick.ts", ["-c:v", "mpeg4", "-f", "mpegts"]),
                       ("quick.avi", ["-c:v", "mpeg4"])):
        clip = good if made is None else os.path.join(tmp, "clip-" + name)
        if made is not None:
            ffmpeg("-f", "lavfi", "-i", "testsrc2=size=64x48:rate=25", "-frames:v", "10",
                   "-pix_fmt", "yuv420p", *made, clip)
        with open(clip, "rb") as f:
            data = f.read()
        fifo = os.path.join(tmp, name)
        os.mkfifo(fifo)
        writer = threading.Thread(target=write_once_read, args=(fifo, data))
        writer.start()
        try:
            code, out, err = run("stats", "--no-histogram", "--fifo-wait", "10", fifo, timeout=40)
        except subprocess.TimeoutExpired:
            code, out, err = None, "", "timed out"
        writer.join()
        s = summary_of(records(out), fifo)
        check(code == 0 and err == "" and s and s["complete"] and
              s["frames"] == (3 if made is None else 10),
              f"{name}, a FIFO written whole at once: exit {code}, {err!r}, {s}")
    proc = subprocess.Popen([LUMAHIST, "stats", silent], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    time.sleep(1)
    proc.send_signal(signal.SIGINT)
    start = time.monotonic()
    try:
        _, err = proc.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        _, err = proc.communicate()
    took = time.monotonic() - start
    check(proc.returncode == 130 and took < 5,
          f"SIGINT while a video FIFO waits: exit {proc.returncode} after {took:.1f} s, {err!r}")


def ffmpeg_encoders_missing(*names):
    """The names of FFmpeg's encoders among names that this ffmpeg lacks."""
    listed = subprocess.run(["ffmpeg", "-hide_banner", "-encoders"], capture_output=True,
                            text=True).stdout.split()
    return [name for name in names if name not in listed]


def gst_elements_missing(*names):
    return [name for name in names
            if subprocess.run(["gst-inspect-1.0", "--exists", name]).returncode != 0]


def summary_says(path, words=None, frames=None):
    """Checks the run on path: whole (words None) or failed saying words,
    with frames decoded; returns the summary."""
    code, out, err = run("stats", "--no-histogram", path)
    recs = records(out)
    s = summary_of(recs)
    name = os.path.basename(path)
    if words is None:
        check(code == 0 and err == "" and s and s["complete"],
              f"{name} (whole): exit {code}, {err!r}, complete {s and s['complete']}")
    else:
        check(code == 1 and words in err and s and not s["complete"] and words in s["error"],
              f"{name}: exit {code}, {err!r}, summary {s and (s['complete'], s.get('error'))}")
    if s and frames is not None:
        check(s["frames"] == frames == len(frames_of(recs)),
              f"{name}: {s['frames']} frames, {frames} expected")
    return s


def group_pictures(tmp):
    """Video streams of pictures (MJPEG, PNG) are decoded by GStreamer's image
    decoders (jpegdec, pngdec: klass "Codec/Decoder/Image"): they are named
    in the records and counted like video decoders, so frames they drop are
    told as damage.  Only the decoder of the stream read is counted:
    decodebin, which reads a pipe, decodes every video stream."""
    missing = ffmpeg_encoders_missing("mjpeg", "png")
    if missing:
        print(f"SKIP: this ffmpeg lacks the encoders {', '.join(missing)}")
        sys.exit(77)
    source = ["-f", "lavfi", "-i", "testsrc2=size=64x48:rate=10:d=1"]
    mjpeg_avi = os.path.join(tmp, "mjpeg.avi")
    ffmpeg(*source, "-c:v", "mjpeg", mjpeg_avi)
    clips = [mjpeg_avi]
    for name, codec in (("mjpeg.mov", "mjpeg"), ("png.mov", "png")):
        clips.append(os.path.join(tmp, name))
        ffmpeg(*source, "-c:v", codec, clips[-1])
    for path in clips:
        code, out, err = run("stats", "--no-histogram", path)
        recs = records(out)
        s = summary_of(recs)
        decoders = {r["decoder"] for r in frames_of(recs)}
        name = os.path.basename(path)
        check(code == 0 and s and s["complete"] and s["frames"] == 10,
              f"{name}: exit {code}, {err!r}")
        check(len(decoders) == 1 and "" not in decoders and s and s["decoder"] in decoders,
              f"{name}: decoders {decoders}, summary's {s and s['decoder']!r}")
        check(all(r["keyframe"] is True for r in frames_of(recs)),
              f"{name}: every picture is a keyframe")
    # An MJPEG frame is a JPEG: its record is that JPEG's as an image
    # (libjpeg's accurate IDCT), where jpegdec's default IDCT, ifast, put
    # about a third of the pixels 1 to 3 code values off.
    stills = os.path.join(tmp, "mjpeg-frame-%02d.jpg")
    ffmpeg("-i", mjpeg_avi, "-c:v", "copy", "-f", "image2", stills)
    code, out, err = run("stats", "--no-histogram", mjpeg_avi)
    for rec in frames_of(records(out)):
        code, still_out, err = run("stats", "--no-histogram", stills % (rec["frame"] + 1))
        still = records(still_out)[0]
        keys = ("mean", "stddev", "min", "max", "median", "percentiles")
        check(all(rec[k] == still[k] for k in keys),
              f"mjpeg.avi frame {rec['frame']}: {[rec[k] for k in keys]} where the frame "
              f"as a JPEG image gives {[still[k] for k in keys]}")
    check_motion_jpeg(tmp, mjpeg_avi)
    # Four frames' entropy-coded data overwritten: the decoder drops them.
    data = bytearray(open(mjpeg_avi, "rb").read())
    scans = [i for i in range(len(data) - 1) if data[i:i + 2] == b"\xff\xda"]
    for start in scans[2:6]:
        for k in range(start + 40, min(start + 400, len(data)), 3):
            data[k] = 0xFF if k % 2 else 0
    damaged = os.path.join(tmp, "mjpeg-damaged.avi")
    open(damaged, "wb").write(data)
    s = summary_says(damaged, "the stream is damaged: 4 of its 10 frames", frames=6)
    check(s and s["decoder"] != "", f"{os.path.basename(damaged)}: decoder named")
    # Two MJPEG streams through a pipe: decodebin decodes both, one is read.
    two = os.path.join(tmp, "two-streams.mkv")
    ffmpeg(*source, "-f", "lavfi", "-i", "testsrc=size=64x48:rate=10:d=1", "-map", "0",
           "-map", "1", "-c:v", "mjpeg", two)
    fifo = os.path.join(tmp, "two-streams-pipe.mkv")
    os.mkfifo(fifo)
    writer = subprocess.Popen(["sh", "-c", f"cat '{two}' > '{fifo}'"])
    try:
        summary_says(fifo, frames=10)
    finally:
        writer.kill()
        writer.wait()


def check_motion_jpeg(tmp, mjpeg_avi):
    """Motion JPEG with no container (.mjpeg, .mjpg: JPEGs one after the
    other, as webcams and `ffmpeg -f mjpeg` write them) was read as one JPEG
    image, its first frame, and a folder's were not found.  It is a video:
    every frame, each the record of that frame as a JPEG image, in a folder
    too.  jpegdec cut the stream in frames itself, so its input counted the
    file's read blocks: whole files were said to be damaged."""
    folder = os.path.join(tmp, "motion-jpeg")
    os.makedirs(folder)
    raw = os.path.join(folder, "clip.mjpeg")
    ffmpeg("-i", mjpeg_avi, "-c:v", "copy", "-f", "mjpeg", raw)
    shutil.copy(raw, os.path.join(folder, "same.MJPG"))
    stills = os.path.join(tmp, "motion-jpeg-%02d.jpg")
    ffmpeg("-i", raw, "-c:v", "copy", "-f", "image2", stills)
    code, out, err = run("stats", "--no-histogram", raw)
    recs = records(out)
    s = summary_of(recs)
    check(code == 0 and err == "" and s and s["complete"] and s["frames"] == 10,
          f"clip.mjpeg: exit {code}, {err!r}, summary {s}")
    # No timestamps after the first frame, but every picture is a keyframe.
    check(all(r["keyframe"] is True for r in frames_of(recs)),
          f"clip.mjpeg: keyframes {[r['keyframe'] for r in frames_of(recs)]}")
    keys = ("mean", "stddev", "min", "max", "median", "percentiles")
    for rec in frames_of(recs):
        _, still_out, _ = run("stats", "--no-histogram", stills % (rec["frame"] + 1))
        still = records(still_out)[0]
        check(all(rec[k] == still[k] for k in keys),
              f"clip.mjpeg frame {rec['frame']}: {[rec[k] for k in keys]} where the frame "
              f"as a JPEG image gives {[still[k] for k in keys]}")
    code, out, err = run("stats", "--no-histogram", folder)
    for name in ("clip.mjpeg", "same.MJPG"):
        s = summary_of(records(out), os.path.join(folder, name))
        check(s and s["complete"] and s["frames"] == 10,
              f"{name} in a folder: {s and (s['complete'], s['frames'])} (exit {code}, {err!r})")
    # Its frames have no times after the first: --start, --duration and
    # --fps let all of them through, as if not asked (exit 0).  They are
    # refused for it in one line; the other file of the run is done, and
    # --every still picks frames by count.
    for option in (("--start", "0.1"), ("--duration", "0.1"), ("--fps", "10")):
        code, out, err = run("stats", "--no-histogram", *option, raw, mjpeg_avi)
        said = [line for line in err.splitlines() if line]
        check(code == 1 and not frames_of(records(out), raw) and
              summary_of(records(out), mjpeg_avi) and len(said) == 1 and
              said[0].startswith(f"lumahist: {raw}: Motion JPEG with no container has no "
                                 "frame times"),
              f"clip.mjpeg {' '.join(option)}: exit {code}, "
              f"{len(frames_of(records(out), raw))} of its frames, {err!r}")
    code, out, err = run("stats", "--no-histogram", "--every", "3", raw)
    check(code == 0 and [r["frame"] for r in frames_of(records(out))] == [0, 3, 6, 9],
          f"clip.mjpeg --every 3: exit {code}, frames "
          f"{[r['frame'] for r in frames_of(records(out))]}, {err!r}")
    # Cut inside its fourth frame: jpegparse drops that frame and the stream
    # ends quietly; the file's end shows it (zero padding after a whole
    # file's last frame is not a cut).
    data = open(raw, "rb").read()
    starts = [i for i in range(len(data) - 1) if data[i:i + 2] == b"\xff\xd8"]
    cut = os.path.join(tmp, "cut.mjpeg")
    open(cut, "wb").write(data[:(starts[3] + starts[4]) // 2])
    summary_says(cut, "the file is truncated: its last frame has no end-of-image marker",
                 frames=3)
    padded = os.path.join(tmp, "padded.mjpeg")
    open(padded, "wb").write(data + bytes(300))
    summary_says(padded, frames=10)
    # More zeros than the 4 KB once read of the end (a recorder that sets
    # the file's size first): the cut was taken for a whole end.
    for name, body in (("cut-long-padding.mjpeg", data[:(starts[3] + starts[4]) // 2]),
                       ("long-padding.mjpeg", data)):
        path = os.path.join(tmp, name)
        open(path, "wb").write(body + bytes(20000))
        if name.startswith("cut"):
            summary_says(path, "the file is truncated: its last frame has no end-of-image "
                         "marker", frames=3)
        else:
            summary_says(path, frames=10)
    check_motion_jpeg_on_standard_input(tmp, raw, stills)
    # A JPEG image named .jpg that has more frames after it stays an image.
    named_jpg = os.path.join(tmp, "frames.jpg")
    shutil.copy(raw, named_jpg)
    code, out, err = run("stats", "--no-histogram", named_jpg)
    check(code == 0 and len(records(out)) == 1 and "frame" not in records(out)[0],
          f"frames.jpg: exit {code}, {err!r}, {len(records(out))} records")


def check_program_stream_times(tmp):
    """A program stream packs several pictures to a packet and times the
    first only: with B-pictures the decoder took the decoding time for the
    others, and frames' `pts` repeated (1.42, 1.46, 1.46, 1.46 where 1.34,
    1.38, 1.42, 1.46 were due).  Each frame has its own time, one frame
    after the one before, as FFmpeg's best effort gives them."""
    for name, video, container in (("bframes.vob", "mpeg2video", "vob"),
                                   ("bframes.mpg", "mpeg1video", "mpeg")):
        path = os.path.join(tmp, name)
        ffmpeg("-f", "lavfi", "-i", "testsrc2=size=352x288:rate=25:duration=3", "-c:v", video,
               "-bf", "2", "-g", "12", "-f", container, path)
        # FFmpeg's frames lack a pts too where their packets did: its best
        # effort fills them in.
        want = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v", "-show_entries",
                               "frame=best_effort_timestamp_time", "-of", "csv=p=0", path],
                              capture_output=True, text=True, check=True).stdout.split()
        want = [t.strip(",") for t in want]
        code, out, err = run("stats", "--no-histogram", path)
        got = [r["pts"] for r in frames_of(records(out))]
        # FFmpeg times no last frame of an MPEG-1 stream ("N/A").
        check(code == 0 and len(got) == 75 == len(want) and
              all(b - a > 0.039 for a, b in zip(got, got[1:])) and
              all(t == "N/A" or round(float(t), 3) == round(g, 3) for g, t in zip(got, want)),
              f"{name}: exit {code}, {len(got)} frames, times {got[17:26]} where FFmpeg gives "
              f"{want[17:26]} ({err!r})")


def check_motion_jpeg_on_standard_input(tmp, raw, stills):
    """Standard input has no name to tell Motion JPEG by, so a stream there
    was read as one JPEG image, its first frame, with exit 0.  Redirected
    from a file it is the video it is; on a pipe, which its demuxer could
    not read again from the start, it is refused as other videos there are.
    A JPEG with bytes after it that are not a second frame is one image:
    another JPEG that the first one's MPF index lists (a phone's depth or
    gain map), a phone's Motion Photo video."""
    def stats_stdin(data=None, path=None):
        if path:
            with open(path, "rb") as f:
                proc = subprocess.run([LUMAHIST, "stats", "--no-histogram", "-"], stdin=f,
                                      capture_output=True, timeout=120)
        else:
            proc = subprocess.run([LUMAHIST, "stats", "--no-histogram", "-"], input=data,
                                  capture_output=True, timeout=120)
        return proc.returncode, records(proc.stdout.decode()), proc.stderr.decode("utf-8", "replace")

    code, recs, err = stats_stdin(path=raw)
    s = summary_of(recs)
    check(code == 0 and err == "" and s and s["complete"] and s["frames"] == 10,
          f"- < clip.mjpeg: exit {code}, {err!r}, summary {s}")
    data = open(raw, "rb").read()
    code, recs, err = stats_stdin(data)
    check(code == 1 and recs == [] and err == "lumahist: /dev/stdin: a Motion JPEG video (JPEG "
          "frames one after another): videos are read from files, not from a pipe or standard "
          "input; save it as a .mjpeg file\n", f"clip.mjpeg on a pipe: exit {code}, {err!r}")
    still = open(stills % 1, "rb").read()
    _, want, _ = run("stats", "--no-histogram", stills % 1)
    mpf = b"\xff\xe2\x00\x0aMPF\x00II*\x00"  # APP2: "MPF", the start of its index
    motion_photo = b"\x00\x00\x00\x18ftypmp42" + bytes(16)
    ones = {"one JPEG": still, "one JPEG and zero padding": still + bytes(100),
            "a JPEG whose MPF index lists the JPEG after it": still[:2] + mpf + still[2:] + still,
            "a JPEG and a Motion Photo's video": still + motion_photo}
    for what, body in ones.items():
        code, recs, err = stats_stdin(body)
        keys = ("width", "mean", "median", "percentiles")
        check(code == 0 and len(recs) == 1 and "frame" not in recs[0] and
              all(recs[0][k] == records(want)[0][k] for k in keys),
              f"{what} on a pipe: exit {code}, {err!r}, {len(recs)} records")


def group_avi(tmp):
    """A cut AVI: avidemux scans the chunks there are when the index at the
    end is cut off, and takes their duration for the stream's, so the header's
    frame count is read (src/io/video.c, avi_cut_before).  Whole files, and
    ones cut only in their index, are complete: FFmpeg's (MPEG-4 with
    B-frames, variable frame rate, H.264 with audio), avimux's, and one
    written to a pipe, whose header states no sizes."""
    missing = ffmpeg_encoders_missing("mpeg4", "libx264", "pcm_s16le")
    missing += gst_elements_missing("x264enc", "jpegenc", "avimux")
    if missing:
        print(f"SKIP: no encoder or muxer {', '.join(missing)} (build-aux/install-deps.sh)")
        sys.exit(77)
    source = ["-f", "lavfi", "-i", "testsrc2=size=64x48:rate=25:d=4"]
    made = {
        "mpeg4-bframes.avi": ["-c:v", "mpeg4", "-bf", "2"],
        # Half a second without frames after frame 40: empty chunks fill it.
        "mpeg4-vfr.avi": ["-vf", "setpts='N/25/TB+if(gt(N,40),0.5/TB,0)'", "-fps_mode", "vfr",
                          "-c:v", "mpeg4", "-bf", "2"],
        "h264-audio.avi": ["-f", "lavfi", "-i", "sine=d=4", "-c:v", "libx264", "-c:a",
                           "pcm_s16le", "-shortest"],
    }
    paths = []
    for name, args in made.items():
        paths.append(os.path.join(tmp, name))
        ffmpeg(*source, *args, paths[-1])
    for name, encoder in (("avimux-h264.avi", ["x264enc", "key-int-max=10"]),
                          ("avimux-mjpeg.avi", ["jpegenc"])):
        paths.append(os.path.join(tmp, name))
        gst_launch("videotestsrc", "num-buffers=100", "!",
                   "video/x-raw,width=64,height=48,framerate=25/1", "!", *encoder, "!",
                   "avimux", "!", "filesink", f"location={paths[-1]}")
    piped = os.path.join(tmp, "ffmpeg-pipe.avi")
    with open(piped, "wb") as out:
        subprocess.run(["ffmpeg", "-v", "error", *source, "-c:v", "mpeg4", "-f", "avi", "pipe:1"],
                       stdout=out, check=True)
    for path in paths + [piped]:
        summary_says(path, frames=100)
    for path in paths:
        data = open(path, "rb").read()
        stem = os.path.splitext(path)[0]
        # Cut in its index (idx1, at the end), after every frame: all there.
        in_index = stem + "-cut-in-index.avi"
        open(in_index, "wb").write(data[:data.rindex(b"idx1") + 20])
        summary_says(in_index, frames=100)
        for fraction in (0.5, 0.8):
            cut = f"{stem}-cut-{fraction}.avi"
            open(cut, "wb").write(data[:int(len(data) * fraction)])
            s = summary_says(cut, "the file is truncated")
            stated = "of 4.480 s" if "vfr" in path else "of 4.000 s"
            check(s and stated in s.get("error", "") and 0 < s["frames"] < 100,
                  f"{os.path.basename(cut)}: {s and (s['frames'], s.get('error'))}")


def group_batch(tmp):
    folder = os.path.join(tmp, "mixed")
    os.makedirs(os.path.join(folder, "sub"))
    shutil.copy(os.path.join(SAMPLES, "camera-gray.png"), os.path.join(folder, "a.png"))
    rng = np.random.default_rng(7)
    write_y4m(os.path.join(folder, "b.y4m"), random_frames(rng, 7, 20, 30))
    shutil.copy(os.path.join(SAMPLES, "sky-high-key.jpg"), os.path.join(folder, "c.jpg"))
    write_y4m(os.path.join(folder, "sub", "d.y4m"), random_frames(rng, 5, 10, 12))
    # A video whose name says nothing: found by its content when named.
    write_y4m(os.path.join(tmp, "noname.dat"), random_frames(rng, 2, 8, 8))
    code, out, err = run("stats", "--decoder", "cpu", folder, os.path.join(tmp, "noname.dat"))
    check(code == 0, f"mixed folder: exit {code}: {err}")
    recs = records(out)
    order = []
    for r in recs:
        if not order or order[-1] != os.path.basename(r["path"]):
            order.append(os.path.basename(r["path"]))
    check(order == ["a.png", "b.y4m", "c.jpg", "d.y4m", "noname.dat"], f"record order {order}")
    check(len(frames_of(recs)) == 14 and len([r for r in recs if r.get("summary")]) == 3,
          "mixed folder: 14 frame records and 3 summaries")
    # CSV: the video columns, the same count on every line.
    code, out, _ = run("stats", "-f", "csv", "--no-histogram", folder)
    rows = out.splitlines()
    check("frame" in rows[0].split(",") and len({r.count(",") for r in rows}) == 1,
          "csv: video columns and a constant column count")
    # Shards cover every file once.
    seen = []
    for i in range(3):
        _, out, _ = run("stats", "--no-histogram", "--shard", f"{i}/3", folder)
        seen += sorted({r["path"] for r in records(out)})
    check(sorted(seen) == sorted({r["path"] for r in recs if r["path"].startswith(folder)}),
          f"shards: {seen}")
    # --skip-existing after an interrupted run: the half-written video is done again.
    full = os.path.join(tmp, "full.jsonl")
    run("stats", "-o", full, folder)
    whole = open(full).read()
    lines = whole.splitlines(keepends=True)
    part = os.path.join(tmp, "part.jsonl")
    cut = 1 + 3  # a.png and three frames of b.y4m
    open(part, "w").write("".join(lines[:cut]) + lines[cut][:20])
    code, _, err = run("stats", "--skip-existing", "-o", part, folder)
    check(code == 0 and open(part).read() == whole, f"--skip-existing: exit {code} {err}")
    # merge sums a video by its summary, not its frames again.
    code, out, err = run("merge", full)
    total = [r for r in records(out) if r.get("dataset")]
    check(code in (0, 1) and total, f"merge: {err}")
    # --dataset sums as merge does: in the luma of the first record summed (a
    # video's is its stream's), refusing records of another luma in the same
    # words, exit 1; the options' range alone labelled it, and summed the rest.
    for named in (["b.y4m"], ["a.png", "b.y4m"],
                  ["--range", "full", "a.png", "b.y4m"]):
        argv = [n if n.startswith("-") or n in ("full", "limited") else os.path.join(folder, n)
                for n in named]
        code, out, err = run("stats", "--dataset", *argv)
        lines = out.splitlines()
        kept = os.path.join(tmp, "kept.jsonl")
        with open(kept, "w") as f:
            f.write("".join(line + "\n" for line in lines[:-1]))
        merge_code, merged, merge_err = run("merge", kept)
        refused = "histograms of different luma cannot be summed"
        check(lines and merged.splitlines() == lines[-1:] and code == merge_code and
              (refused in err) == (refused in merge_err),
              f"--dataset {named}: exit {code} {err!r}, merge exit {merge_code} {merge_err!r}, "
              f"dataset {lines[-1][:120] if lines else None} against {merged[:120]}")
    check(code == 0 and '"range":"full"' in lines[-1], f"--dataset --range full: {err}")


def group_gpu(tmp):
    """NVDEC: frames in CUDA memory, analysed in place, give the numbers of
    the same frames analysed on the CPU from system memory."""
    clip = os.path.join(os.path.dirname(SAMPLES), "tests", "data", "ball-640x360.mp4")
    if subprocess.run(["gst-inspect-1.0", "nvh264dec"], capture_output=True).returncode != 0:
        print("SKIP: no nvh264dec (GStreamer's nvcodec with a usable NVIDIA GPU)")
        sys.exit(77)
    # The CUDA backend itself, on an image: without it there is nothing to check.
    image = os.path.join(SAMPLES, "fog-lake-low-contrast.jpg")
    code, _, err = run("stats", "--backend", "cuda", "--decoder", "cpu", image)
    if code != 0:
        print(f"SKIP: the CUDA backend is not usable here: {err.strip()}")
        sys.exit(77)
    code, cpu_out, err = run("stats", "--backend", "cpu", clip)
    check(code == 0, f"--backend cpu: exit {code}: {err}")
    on_cpu = frames_of(records(cpu_out))
    # NVDEC's frames copied to system memory (--video-memory system), then in
    # place in CUDA memory (--video-memory cuda, and the default).
    for memory, said in (("system", "in system memory"), ("cuda", "in CUDA memory"),
                         (None, "in CUDA memory")):
        memory_args = ["--video-memory", memory] if memory else []
        code, cuda_out, err = run("stats", "--backend", "cuda", "--verbose", *memory_args, clip)
        if not check(code == 0, f"--video-memory {memory}: exit {code}: {err}"):
            continue
        check(said in err, f"--video-memory {memory}: NVDEC's frames not {said}: {err}")
        on_gpu = frames_of(records(cuda_out))
        check(len(on_gpu) == len(on_cpu) > 0,
              f"--video-memory {memory}: {len(on_gpu)} frames on the GPU, {len(on_cpu)} on the CPU")
        check(all(r["decoder"] == "nvh264dec" and r["backend"] == "cuda" for r in on_gpu),
              f"--video-memory {memory}: decoder {on_gpu[0]['decoder'] if on_gpu else None}")
        for a, b in zip(on_gpu, on_cpu):
            for key in a:
                if key not in ("backend", "decoder"):
                    check(a[key] == b[key], f"--video-memory {memory}: frame {a['frame']}: {key} "
                          "differs between CUDA and CPU")
    check_gpu_devices(clip, on_cpu)


def cuda_devices():
    """How many CUDA devices GStreamer's nvcodec decodes H.264 on: it
    registers nvh264dec for the first, nvh264deviceNdec for the others."""
    listed = subprocess.run(["gst-inspect-1.0", "nvcodec"], capture_output=True, text=True).stdout
    return 1 + len(set(re.findall(r"nvh264device(\d+)dec", listed)))


def check_gpu_devices(clip, on_cpu):
    """--devices N: NVDEC of device N decodes the video (nvcodec's element of
    that device, which decodebin3 ranked below device 0's) and the frames are
    analysed on that device, in CUDA memory and from system memory; both
    used to go to device 0 whatever --devices said."""
    count = cuda_devices()
    for device in sorted({0, count - 1}):
        decoder = "nvh264dec" if device == 0 else f"nvh264device{device}dec"
        for memory in ("cuda", "system"):
            label = f"--devices {device} --video-memory {memory}"
            code, out, err = run("stats", "--verbose", "--devices", str(device), "--video-memory",
                                 memory, clip)
            if not check(code == 0, f"{label}: exit {code}: {err}"):
                continue
            check(f"analysed on cuda (device {device})" in err,
                  f"{label}: not analysed on device {device}: {err!r}")
            got = frames_of(records(out))
            check(len(got) == len(on_cpu) and all(r["decoder"] == decoder for r in got),
                  f"{label}: decoders {sorted({r['decoder'] for r in got})}, {len(got)} frames")
            check([{k: v for k, v in r.items() if k not in ("backend", "decoder")} for r in got] ==
                  [{k: v for k, v in r.items() if k not in ("backend", "decoder")}
                   for r in on_cpu], f"{label}: records differ from the CPU's")
    if count < 2:
        print("one CUDA device: --devices with a video checked on device 0 only")


def group_audio_only(tmp):
    """Files with no video stream, many in one run after a video: each one is
    told "no video stream" at once, none waits out --video-timeout.  Short
    audio-only files are the hard case: the demuxer can read one to its end
    before decodebin3 reports that its deselected audio goes nowhere, and then
    GStreamer's bus says nothing more (src/io/video.c, input_drained); before
    that was handled, most 0.2 s Matroska files here waited the whole timeout."""
    y4m = os.path.join(tmp, "clip.y4m")
    frames = random_frames(np.random.default_rng(11), 6, 48, 64)
    write_y4m(y4m, frames)
    video = os.path.join(tmp, "clip.mkv")
    ffmpeg("-i", y4m, "-c:v", "ffv1", video)
    kinds = {
        "vorbis-short.mkv": ["sine=duration=0.2", "-c:a", "libvorbis"],
        "vorbis.mkv": ["sine=duration=1", "-c:a", "libvorbis"],
        "aac-short.mp4": ["sine=duration=0.2", "-c:a", "aac"],
        "pcm-short.mkv": ["sine=duration=0.2", "-c:a", "pcm_s16le"],
    }
    audio = []
    for name, (source, *codec) in kinds.items():
        made = os.path.join(tmp, name)
        ffmpeg("-f", "lavfi", "-i", source, *codec, made)
        for i in range(6):
            copy = os.path.join(tmp, f"{i:02d}-{name}")
            shutil.copy(made, copy)
            audio.append(copy)
    audio.sort()
    timeout_s = 2
    start = time.monotonic()
    code, out, err = run("stats", "--no-histogram", "--video-timeout", str(timeout_s),
                         video, *audio, timeout=120)
    took = time.monotonic() - start
    lines = [l for l in err.splitlines() if l.startswith("lumahist:")]
    want = [f"lumahist: {path}: no video stream" for path in audio]
    check(code == 1, f"audio-only files: exit {code}, expected 1")
    wrong = [l for l in lines if l not in want]
    check(not wrong and sorted(lines) == sorted(want),
          f"audio-only files: {len(wrong)} of {len(audio)} messages are not \"no video "
          f"stream\": {wrong[:3]}")
    # A stuck file costs timeout_s; every audio-only file answering at once
    # leaves the run far below one timeout per file.
    check(took < len(audio) * timeout_s / 4,
          f"audio-only files: the run took {took:.1f} s for {len(audio)} files")
    recs = records(out)
    check(len(frames_of(recs, video)) == len(frames) and summary_of(recs, video) and
          summary_of(recs, video)["complete"] and {r["path"] for r in recs} == {video},
          "audio-only files: the video before them gives its frames and summary, they give none")
    check_audio_outlasting_video(tmp)


def check_audio_outlasting_video(tmp):
    """An MP4 whose audio runs 2 s past its video is whole: the frames are
    held against the video track's duration, not the container's (the
    longest track's), which called it truncated; cut in half, it still is."""
    whole = os.path.join(tmp, "long-audio.mp4")
    ffmpeg("-f", "lavfi", "-i", "testsrc2=size=160x120:duration=4:rate=25", "-f", "lavfi",
           "-i", "sine=duration=6", "-c:v", "libx264", "-c:a", "aac", "-movflags", "+faststart",
           whole)
    code, out, err = run("stats", "--no-histogram", whole)
    s = summary_of(records(out), whole)
    check(code == 0 and err == "" and s and s["complete"] and s["frames"] == 100,
          f"audio 2 s past the video: exit {code}, {err!r}, {s}")
    cut = cut_in_half(whole, os.path.join(tmp, "long-audio-cut.mp4"))
    code, out, err = run("stats", "--no-histogram", cut)
    s = summary_of(records(out), cut)
    check(code == 1 and "the file is truncated" in err and "of 4.000 s" in err and s
          and not s["complete"], f"the same cut in half: exit {code}, {err!r}")
    check_matroska_audio_outlasting_video(tmp)


def check_matroska_audio_outlasting_video(tmp):
    """Matroska and WebM files whose audio runs on past their video are
    whole too: FFmpeg tags each track with its DURATION, which the frames are
    held against; matroskamux states none, and its file, with audio beside
    the video, is held against its duration only where its segment is cut
    (a streamed one states no size: never).  Each cut in half is truncated."""
    sources = ["-f", "lavfi", "-i", "testsrc2=size=160x120:duration=4:rate=25", "-f", "lavfi",
               "-i", "sine=duration=6"]
    made = []
    for name, codecs in (("long-audio.mkv", ["-c:v", "libx264", "-c:a", "libvorbis"]),
                         ("long-audio.webm", ["-c:v", "libvpx", "-b:v", "200k", "-c:a",
                                              "libvorbis"])):
        made.append(os.path.join(tmp, name))
        ffmpeg(*sources, *codecs, made[-1])
    for name, options in (("long-audio-matroskamux.mkv", []),
                          ("long-audio-streamed.mkv", ["streamable=true"])):
        made.append(os.path.join(tmp, name))
        gst_launch("matroskamux", *options, "name=mux", "!", "filesink", f"location={made[-1]}",
                   "videotestsrc", "num-buffers=100", "!",
                   "video/x-raw,width=160,height=120,framerate=25/1", "!", "x264enc", "!",
                   "h264parse", "!", "mux.", "audiotestsrc", "num-buffers=280", "!",
                   "audioconvert", "!", "vorbisenc", "!", "mux.")
    for whole in made:
        name = os.path.basename(whole)
        code, out, err = run("stats", "--no-histogram", whole)
        s = summary_of(records(out), whole)
        check(code == 0 and err == "" and s and s["complete"] and s["frames"] == 100,
              f"{name}, audio 2 s past the video: exit {code}, {err!r}, {s}")
        if "streamed" in name:
            continue
        cut = cut_in_half(whole, os.path.join(tmp, "cut-" + name))
        code, out, err = run("stats", "--no-histogram", cut)
        s = summary_of(records(out), cut)
        check(code == 1 and "the file is truncated" in err and s and not s["complete"] and
              0 < s["frames"] < 100, f"{name} cut in half: exit {code}, {err!r}")
        if "matroskamux" not in name:
            continue
        # Cut in the audio after the video's last frame (its last 300 bytes,
        # the cues and tags after them): still cut, as matroskamux states no
        # end of the video, but the message no longer says the video's
        # frames are short of 6.502 s.
        with open(whole, "rb") as f:
            data = f.read()
        with open(cut, "wb") as f:
            f.write(data[:len(data) - 300])
        code, out, err = run("stats", "--no-histogram", cut)
        s = summary_of(records(out), cut)
        check(code == 1 and "the file is truncated: it is cut at 6." in err and
              "in its other tracks, after its video's frames end at 4.000 s" in err and s and
              not s["complete"] and s["frames"] == 100,
              f"{name} cut after its video's frames: exit {code}, {err!r}")


GROUPS = {
    "gpu": group_gpu,
    "frames": group_frames,
    "signalstats": group_signalstats,
    "bad": group_bad,
    "batch": group_batch,
    "audio": group_audio_only,
    "pictures": group_pictures,
    "avi": group_avi,
}


def main():
    # The tool leaves a stop signal ignored if it starts so (nohup, a job a
    # shell starts in the background): the ones these tests send must reach
    # it whatever this runner was started with.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    for stop in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(stop, signal.SIG_DFL)
    global LUMAHIST, SAMPLES
    LUMAHIST, SAMPLES, group = sys.argv[1], sys.argv[2], sys.argv[3]
    if not shutil.which("gst-launch-1.0") or (group != "gpu" and not shutil.which("ffmpeg")):
        print("SKIP: needs gst-launch-1.0 and ffmpeg (build-aux/install-deps.sh)")
        return 77
    probe = tempfile.NamedTemporaryFile(suffix=".y4m", delete=False)
    probe.close()
    write_y4m(probe.name, [np.zeros((2, 2), np.uint8)])
    _, _, err = run("stats", probe.name)
    os.unlink(probe.name)
    if "built without GStreamer" in err:
        print("SKIP: this lumahist was built without GStreamer")
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        GROUPS[group](tmp)
    if FAILURES:
        print(f"{len(FAILURES)} failures")
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
