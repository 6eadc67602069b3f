"""lumahist.stats_files on video files: the frames' records and each video's
summary, against `lumahist stats` on the same paths and options (the tool's
jsonl records, json.loads) and against numpy on raw clips whose every pixel
is known; the video options and their checks; cut, damaged and unreadable
videos; NVDEC's CUDA frames on a GPU host.  Clips are made here: YUV4MPEG2
written from numpy arrays, H.264 and FFV1 by FFmpeg, a cut Matroska file
from GStreamer's x264enc.  Without ffmpeg, gst-launch-1.0 or GStreamer in
this build the tests that need them skip, saying why; the GPU test skips
without a CUDA device or NVDEC (LUMAHIST_EXPECT_NVDEC=1 makes that a
failure)."""
import contextlib
import gc
import json
import locale
import math
import os
import pickle
import shutil
import subprocess
import warnings

import numpy as np
import pytest

import lumahist
from test_stats_files import LUMAHIST, analysis_threads, noise, tool_records

cv2 = pytest.importorskip("cv2")
REPO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
BALL = os.path.join(REPO, "tests", "data", "ball-640x360.mp4")  # H.264, in the repository


def tool_run(*args):
    """The tool's exit status, records and standard error."""
    proc = subprocess.run([LUMAHIST, "stats", "--quiet", *map(str, args)], capture_output=True,
                          check=False)
    return (proc.returncode, [json.loads(line) for line in proc.stdout.splitlines()],
            proc.stderr.decode("utf-8", "replace"))


def video_build_or_skip():
    """Skips where this lumahist has no GStreamer (the test that checks what
    such a build says runs there instead)."""
    if not video_build():
        pytest.skip("this lumahist was built without GStreamer")


_video_build = []


def video_build():
    if not _video_build:
        probe = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"lumahist-probe-{os.getpid()}.y4m")
        write_y4m(probe, [np.zeros((2, 2), np.uint8)])
        _, _, err = tool_run(probe)
        os.unlink(probe)
        _video_build.append("built without GStreamer" not in err)
    return _video_build[0]


def write_y4m(path, frames, fps="25:1"):
    """frames: uint8 Y planes of one size; 4:4:4 with flat chroma."""
    h, w = frames[0].shape
    with open(path, "wb") as f:
        f.write(f"YUV4MPEG2 W{w} H{h} F{fps} Ip A1:1 C444\n".encode())
        for y in frames:
            f.write(b"FRAME\n" + y.astype(np.uint8).tobytes() + bytes([128]) * (2 * w * h))


def write_y4m_10(path, frames):
    """10-bit 4:2:0 frames (uint16 Y planes)."""
    h, w = frames[0].shape
    with open(path, "wb") as f:
        f.write(f"YUV4MPEG2 W{w} H{h} F25:1 Ip A1:1 C420p10\n".encode())
        chroma = np.full(((h + 1) // 2, (w + 1) // 2), 512, "<u2").tobytes()
        for y in frames:
            f.write(b"FRAME\n" + y.astype("<u2").tobytes() + chroma * 2)


def ffmpeg(*args):
    subprocess.run(["ffmpeg", "-v", "error", "-y", *map(str, args)], check=True)


def known_frames():
    """15 frames of 37 x 53: a cut at 6, black 9-11, frozen 12-14 (tests/video's)."""
    rng = np.random.default_rng(15)
    h, w = 37, 53
    frames = [rng.integers(40, 90, (h, w)).astype(np.uint8) for _ in range(6)]
    frames += [rng.integers(150, 250, (h, w)).astype(np.uint8) for _ in range(3)]
    frames += [np.full((h, w), 16, np.uint8)] * 3
    frames += [rng.integers(60, 200, (h, w)).astype(np.uint8)] * 3
    return frames


@pytest.fixture(scope="module")
def clips(tmp_path_factory):
    """known.y4m (raw, every pixel known), clip.mp4 (H.264 by libx264, 30
    frames with B-frames), ten.mkv (10-bit FFV1, lossless), cut.mkv (x264enc's
    Matroska cut in half), audio.mkv (no video stream), audio-short.mkv (0.2 s
    of audio, no video stream), junk.mp4 (not a video)."""
    video_build_or_skip()
    for tool in ("ffmpeg", "gst-launch-1.0"):
        if not shutil.which(tool):
            pytest.skip(f"needs {tool} (build-aux/install-deps.sh)")
    top = tmp_path_factory.mktemp("clips")
    made = {"frames": known_frames()}
    made["known"] = top / "known.y4m"
    write_y4m(made["known"], made["frames"])
    made["mp4"] = top / "clip.mp4"
    ffmpeg("-f", "lavfi", "-i", "testsrc2=size=96x64:rate=25", "-frames:v", "30", "-c:v",
           "libx264", "-g", "10", "-pix_fmt", "yuv420p", made["mp4"])
    rng = np.random.default_rng(10)
    made["frames10"] = [rng.integers(64, 941, (24, 32)).astype(np.uint16) for _ in range(4)]
    raw10 = top / "ten.y4m"
    write_y4m_10(raw10, made["frames10"])
    made["ten"] = top / "ten.mkv"
    ffmpeg("-i", raw10, "-c:v", "ffv1", made["ten"])
    os.unlink(raw10)
    good = top / "good.mkv"
    subprocess.run(["gst-launch-1.0", "-q", "videotestsrc", "num-buffers=100", "pattern=smpte",
                    "!", "video/x-raw,format=I420,width=160,height=120,framerate=25/1", "!",
                    "x264enc", "key-int-max=10", "!", "h264parse", "!", "matroskamux", "!",
                    "filesink", f"location={good}"], check=True, capture_output=True)
    data = good.read_bytes()
    made["cut"] = top / "cut.mkv"
    made["cut"].write_bytes(data[:len(data) // 2])
    os.unlink(good)
    made["audio"] = top / "audio.mkv"
    ffmpeg("-f", "lavfi", "-i", "sine=duration=1", "-c:a", "libvorbis", made["audio"])
    made["audio-short"] = top / "audio-short.mkv"
    ffmpeg("-f", "lavfi", "-i", "sine=duration=0.2", "-c:a", "libvorbis", made["audio-short"])
    made["junk"] = top / "junk.mp4"
    made["junk"].write_bytes(b"this is not a video at all" * 10)
    return made


@pytest.fixture(scope="module")
def mixed(clips, tmp_path_factory):
    """A folder of images and videos, nested, and a video named by its content
    alone (noname.dat)."""
    top = tmp_path_factory.mktemp("mixed")
    (top / "sub").mkdir()
    rng = np.random.default_rng(8)
    cv2.imwrite(str(top / "a.png"), noise(rng, 31, 45, 3))
    shutil.copy(clips["known"], top / "b.y4m")
    cv2.imwrite(str(top / "c.jpg"), noise(rng, 40, 61, 3))
    shutil.copy(clips["mp4"], top / "sub" / "d.mp4")
    cv2.imwrite(str(top / "sub" / "e.png"), noise(rng, 17, 9))
    shutil.copy(clips["ten"], top / "sub" / "f.mkv")
    shutil.copy(clips["known"], top.parent / "noname.dat")
    return top


def dicts(records):
    return [r.to_dict() for r in records]


def files_of(records):
    """The files in the order their records come, each once."""
    order = []
    for r in records:
        if not order or order[-1] != r["path"]:
            order.append(r["path"])
    return order


# --------------------------------------------------------------------------
# Records as the tool's

@pytest.mark.parametrize("jobs", [1, 3])
def test_mixed_folder_records_are_the_tools(mixed, jobs):
    noname = mixed.parent / "noname.dat"
    want = tool_records([mixed, noname])
    records = list(lumahist.stats_files([mixed, noname], jobs=jobs, backend="cpu",
                                        decoder="cpu"))
    got = dicts(records)
    assert [os.path.relpath(p, mixed) for p in files_of(got)] == [
        "a.png", "b.y4m", "c.jpg", "sub/d.mp4", "sub/e.png", "sub/f.mkv",
        os.path.join("..", "noname.dat")]
    assert got == want
    # The records' keys in the tool's order too (json.dumps would write them so).
    assert [list(g) for g in got] == [list(w) for w in want]
    kinds = [type(r).__name__ for r in records]
    assert kinds.count("VideoSummary") == 4 and kinds.count("Stats") == 3
    assert kinds.count("VideoFrame") == 15 + 30 + 4 + 15
    assert all(isinstance(r, lumahist.Stats) for r in records)
    assert [r.summary for r in records] == [k == "VideoSummary" for k in kinds]
    # A summary follows its frames, each of its file.
    for k, r in enumerate(records):
        if r.summary:
            assert isinstance(records[k - 1], lumahist.VideoFrame) and records[k - 1].path == r.path


def test_merge_of_images_and_videos_is_the_tools(mixed):
    """merge sums a video's summary, not its frames too, and a path given
    twice once, as `lumahist merge` does over the same records."""
    eight_bit = [mixed / name for name in ("a.png", "b.y4m", "c.jpg", "sub/d.mp4", "sub/e.png")]
    records = list(lumahist.stats_files(eight_bit, backend="cpu", decoder="cpu", range="full"))
    lines = "".join(json.dumps(r.to_dict()) + "\n" for r in records)
    merged = subprocess.run([LUMAHIST, "merge", "-"], input=(lines + lines).encode(),
                            capture_output=True, check=True).stdout
    want = json.loads(merged)
    assert want["images"] == 5
    assert lumahist.merge(records).to_dict() == want
    assert lumahist.merge(records + records).to_dict() == want
    assert lumahist.merge([r.to_dict() for r in records] * 2).to_dict() == want


def test_frames_and_summary_from_known_pixels(clips):
    """The raw clip's records against numpy, not only against the tool."""
    frames = clips["frames"]
    records = list(lumahist.stats_files(clips["known"], backend="cpu",
                                        percentiles=(0, 10, 50, 90, 100)))
    assert len(records) == len(frames) + 1
    summary = records[-1]
    for i, (r, y) in enumerate(zip(records, frames)):
        assert isinstance(r, lumahist.VideoFrame)
        assert (r.frame, r.width, r.height, r.bit_depth) == (i, 53, 37, 8)
        assert r.range == "limited" and r.decoder == "" and r.backend == "cpu"  # raw: no decoder
        assert math.isclose(r.pts, i / 25, abs_tol=1e-6)
        assert math.isclose(r.duration, 0.04, abs_tol=1e-6)
        values = np.sort(y.ravel())
        assert (r.min, r.max) == (int(values[0]), int(values[-1]))
        assert math.isclose(r.mean, float(values.mean()), rel_tol=1e-12)
        assert r.percentiles[50.0] == int(values[math.ceil(0.5 * values.size) - 1])
        assert r.histogram.tolist() == np.bincount(values, minlength=256).tolist()
        if i == 0:
            assert r.diff is None and r.cut_distance is None
        else:
            want = float(np.abs(y.astype(int) - frames[i - 1].astype(int)).mean())
            assert math.isclose(r.diff, want, rel_tol=1e-12, abs_tol=1e-12)
            assert 0 <= r.cut_distance <= 1
        assert math.isclose(r.out_of_legal, float(((y < 16) | (y > 235)).mean()), abs_tol=1e-12)
        assert r.scene_cut == (i in (6, 9, 12)), i
        assert r.black == (9 <= i <= 11), i
        assert r.frozen == (i in (10, 11, 13, 14)), i
        assert r.signalstats_low <= r.signalstats_high
        assert r.decode_warning is False and r.summary is False
        assert isinstance(r.keyframe, bool) or r.keyframe is None
    assert isinstance(summary, lumahist.VideoSummary) and summary.summary is True
    assert summary.frames == len(frames) and summary.complete and summary.error is None
    assert math.isclose(summary.duration, len(frames) / 25, abs_tol=1e-6)
    assert summary.start == records[0].pts
    assert [round(t, 6) for t in summary.cuts] == [0.24, 0.36, 0.48]
    assert [(s["first_frame"], s["frames"]) for s in summary.black] == [(9, 3)]
    assert [(s["first_frame"], s["frames"]) for s in summary.frozen] == [(10, 2), (13, 2)]
    total = np.concatenate([f.ravel() for f in frames])
    assert summary.histogram.tolist() == np.bincount(total, minlength=256).tolist()
    assert summary.count == total.size and summary.max == int(total.max())
    assert math.isclose(summary.mean, float(total.mean()), rel_tol=1e-12)
    means = [float(f.mean()) for f in frames]
    assert math.isclose(summary.frame_stats["mean"]["mean"], float(np.mean(means)), rel_tol=1e-12)
    assert summary.frame_stats["mean"]["max"] == max(r.mean for r in records[:-1])
    assert set(summary.frame_stats) >= {"diff", "flicker", "p0", "p50", "p100"}
    assert summary.decode_warnings == 0
    # And the tool's, field for field (percentile keys "0" ... "100").
    want = tool_records([clips["known"]], "-p", "0,10,50,90,100")
    assert dicts(records) == want
    assert summary.to_dict(histogram=False) == {k: v for k, v in want[-1].items()
                                                if k != "histogram"}
    assert "histogram" not in records[3].to_dict(histogram=False)


def test_h264_and_ten_bit_clips_as_the_tools(clips):
    for clip, depth in ((clips["mp4"], 8), (clips["ten"], 10)):
        records = list(lumahist.stats_files(clip, backend="cpu"))
        assert dicts(records) == tool_records([clip])
        frames = [r for r in records if not r.summary]
        assert frames and all(r.bit_depth == depth and r.histogram.size == 1 << depth
                              for r in frames)
    # The lossless 10-bit frames are the numpy ones.
    records = list(lumahist.stats_files(clips["ten"], backend="cpu"))
    for r, y in zip(records, clips["frames10"]):
        assert (r.min, r.max) == (int(y.min()), int(y.max()))
        assert r.histogram.tolist() == np.bincount(y.ravel(), minlength=1024).tolist()
    # H.264 with keyframes every 10 frames: the decoder's input flagged so.
    frames = [r for r in lumahist.stats_files(clips["mp4"], backend="cpu") if not r.summary]
    assert len(frames) == 30
    keyframes = [r.frame for r in frames if r.keyframe]
    assert {0, 10, 20} <= set(keyframes) and len(keyframes) < 30, keyframes


OPTION_CASES = [
    # (keywords, the tool's options, frames kept of known.y4m or None)
    ({"every": 4}, ["--every", "4"], [0, 4, 8, 12]),
    ({"fps": 10}, ["--fps", "10"], [0, 3, 5, 8, 10, 13]),
    ({"start": 0.2, "duration": 0.2}, ["--start", "0.2", "--duration", "0.2"], [0, 1, 2, 3, 4]),
    ({"every": 2, "start": 0.1}, ["--every", "2", "--start", "0.1"], [0, 2, 4, 6, 8, 10]),
    ({"cut_threshold": 1.0}, ["--cut-threshold", "1"], list(range(15))),
    ({"cut_threshold": 0.0}, ["--cut-threshold", "0"], list(range(15))),
    ({"video_timeout": 5, "video_memory": "system"},
     ["--video-timeout", "5", "--video-memory", "system"], list(range(15))),
]


@pytest.mark.parametrize("keywords,options,kept", OPTION_CASES)
def test_video_options_as_the_tools(clips, keywords, options, kept):
    for clip in (clips["known"], clips["mp4"]):
        got = dicts(lumahist.stats_files(clip, backend="cpu", **keywords))
        assert got == tool_records([clip], *options), (clip, keywords)
        if clip == clips["known"]:
            # --start counts frames from the start: frame 0 is the first kept.
            assert [r["frame"] for r in got if "frame" in r] == kept
    got = [r for r in lumahist.stats_files(clips["known"], backend="cpu", **keywords)
           if not r.summary]
    # The first frame at or after start (a frame every 0.04 s).
    assert keywords.get("start", 0) - 1e-9 <= got[0].pts < keywords.get("start", 0) + 0.04
    if "duration" in keywords:
        assert got[-1].pts < keywords["start"] + keywords["duration"]
    threshold = keywords.get("cut_threshold", 0.4)
    assert [r.scene_cut for r in got] == [r.cut_distance is not None and r.cut_distance > threshold
                                          for r in got]
    assert any(r.scene_cut for r in got) == (threshold < 1)  # a distance is at most 1


def test_duration_without_start_counts_from_the_first_frame(clips):
    # clip.mp4 has B-frames: GStreamer, which applies no edit list, starts
    # its pts at 0.08.  duration counted from 0 kept 3 frames of 0.2 s.
    clip = clips["mp4"]
    got = dicts(lumahist.stats_files(clip, backend="cpu", duration=0.2))
    assert got == tool_records([clip], "--duration", "0.2")
    pts = [r["pts"] for r in got if "frame" in r]
    assert pts[0] > 0
    assert [round(t - pts[0], 6) for t in pts] == [0, 0.04, 0.08, 0.12, 0.16]
    # A start asked is where the time asked begins, as before.
    got = dicts(lumahist.stats_files(clip, backend="cpu", start=0, duration=0.2))
    assert got == tool_records([clip], "--start", "0", "--duration", "0.2")
    assert all(r["pts"] < 0.2 for r in got if "frame" in r)


def test_matrix_and_range_given_or_from_the_stream(clips):
    clip = clips["mp4"]
    stream = [r for r in lumahist.stats_files(clip, backend="cpu") if not r.summary]
    assert {r.range for r in stream} == {"limited"}  # libx264's yuv420p
    given = list(lumahist.stats_files(clip, backend="cpu", range="full", matrix="bt709"))
    assert {r.range for r in given} == {"full"}
    assert dicts(given) == tool_records([clip], "--range", "full", "--matrix", "bt709")


# --------------------------------------------------------------------------
# The program's locale: a Python program that calls
# locale.setlocale(locale.LC_ALL, "") runs the pipeline in the user's.

@contextlib.contextmanager
def user_locale(category, names, wanted, why):
    """Runs the block with category set to the first of names that this host
    has and that wanted(localeconv) accepts, then puts the old one back;
    skips where none is (tests/run.sh does not generate locales)."""
    old = locale.setlocale(category)
    for name in names:
        try:
            locale.setlocale(category, name)
        except locale.Error:
            continue
        if wanted(locale.localeconv()):
            break
        locale.setlocale(category, old)
    else:
        pytest.skip(f"no locale {why} on this host: needs one of {', '.join(names)} "
                    "(Debian: the locales package, then localedef or locale-gen)")
    try:
        yield
    finally:
        locale.setlocale(category, old)


def test_a_decimal_comma_locale_gives_the_tools_summary(clips):
    # The summary record is written in C and read back by json.loads: written
    # with the locale's decimal comma, it was not JSON ("mean":12,5).  A cut
    # file's error said "its frames end at 2,000 s of 4,000 s", in English.
    clip = clips["known"]
    want = tool_records([clip], "--percentiles", "1,12.5,99.5")
    want_cut = tool_records([clips["cut"]])
    assert "2.000 s" in want_cut[-1]["error"]
    with user_locale(locale.LC_NUMERIC, ["de_DE.UTF-8", "fr_FR.UTF-8", "de_DE", "fr_FR"],
                     lambda conv: conv["decimal_point"] == ",", "with a decimal comma"):
        got = dicts(lumahist.stats_files(clip, backend="cpu", percentiles=(1, 12.5, 99.5)))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            got_cut = dicts(lumahist.stats_files(clips["cut"], backend="cpu"))
        # A start past the end is said with its numbers in the C locale too.
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always")
            dicts(lumahist.stats_files(clip, backend="cpu", start=100.5))
    assert got == want
    assert got_cut == want_cut
    assert any("no frame at or after 100.5 s" in str(w.message) for w in said), \
        [str(w.message) for w in said]


def test_a_turkish_locale_finds_the_same_videos_in_a_folder(clips, tmp_path):
    # Extensions were compared with strcasecmp, which in a Turkish LC_CTYPE
    # does not take "I" for "i": CLIP.AVI and TAPE.IVF were left out.
    for name in ("CLIP.AVI", "TAPE.IVF", "clip.avi", "Movie.Mkv"):
        shutil.copy(clips["known"], tmp_path / name)
    want = files_of(tool_records([tmp_path]))
    assert len(want) == 4, want
    with user_locale(locale.LC_CTYPE, ["tr_TR.UTF-8", "tr_TR.ISO-8859-9", "tr_TR"],
                     lambda conv: True, "for Turkish"):
        got = files_of(dicts(lumahist.stats_files(tmp_path, backend="cpu")))
    assert got == want


# --------------------------------------------------------------------------
# Videos that fail

def test_a_cut_video_gives_its_frames_its_summary_then_the_error(clips, tmp_path):
    shutil.copy(clips["cut"], tmp_path / "a-cut.mkv")
    cv2.imwrite(str(tmp_path / "b.png"), noise(np.random.default_rng(3), 21, 34))
    code, want, err = tool_run("--backend", "cpu", "--decoder", "cpu", tmp_path)
    assert code == 1 and "truncated" in err
    with pytest.warns(RuntimeWarning) as caught:
        records = list(lumahist.stats_files(tmp_path, backend="cpu", decoder="cpu"))
    got = dicts(records)
    assert got == want
    summary = records[-2]
    assert summary.summary and not summary.complete and "truncated" in summary.error
    assert summary.frames == len(records) - 2 > 0
    assert records[-1].path == str(tmp_path / "b.png")  # the next file still came
    messages = [str(w.message) for w in caught]
    assert len(messages) == 1
    cut = str(tmp_path / "a-cut.mkv")
    # The tool's line, "lumahist: PATH: reason (the N frames decoded are kept)".
    assert f"lumahist: {messages[0]}" in err.splitlines()
    assert messages[0].startswith(cut + ": ") and "truncated" in messages[0]
    assert f"(the {summary.frames} frames decoded are kept)" in messages[0]
    # errors="raise": the frames and the summary, then the error in b.png's place.
    seen = []
    with pytest.raises(lumahist.Error, match="truncated") as raised:
        for r in lumahist.stats_files(tmp_path, backend="cpu", errors="raise"):
            seen.append(r.to_dict())
    assert raised.value.status < 0 and cut in str(raised.value)
    assert seen == want[:-1]


def test_videos_that_cannot_be_read(clips, tmp_path):
    """Files named as videos that give no frame: one without a video stream,
    one that GStreamer cannot read.  The tool's lines, no records, and the
    next file."""
    shutil.copy(clips["audio"], tmp_path / "audio.mkv")
    shutil.copy(clips["junk"], tmp_path / "junk.mp4")
    cv2.imwrite(str(tmp_path / "z.png"), noise(np.random.default_rng(4), 12, 19))
    code, want, err = tool_run("--backend", "cpu", "--decoder", "cpu", tmp_path)
    with pytest.warns(RuntimeWarning) as caught:
        got = dicts(lumahist.stats_files(tmp_path, backend="cpu"))
    assert got == want
    assert [os.path.basename(r["path"]) for r in got] == ["z.png"]
    messages = sorted(str(w.message) for w in caught)
    assert len(messages) == 2 and code == 1
    assert messages[0].startswith(str(tmp_path / "audio.mkv") + ": no video stream"), messages
    assert messages[1].startswith(str(tmp_path / "junk.mp4") + ": not a video file"), messages
    for message in messages:
        assert f"lumahist: {message}" in err.splitlines()
    with pytest.raises(lumahist.Error, match="audio.mkv: no video stream"):
        list(lumahist.stats_files(tmp_path, backend="cpu", errors="raise"))


def test_audio_only_files_after_a_video_each_say_no_video_stream(clips, tmp_path):
    """Many short audio-only files after a video, in one process: each one
    warns "no video stream" at once.  decodebin3 often reads such a file to
    its end before the not-linked error that used to tell it, and then its bus
    stays silent: most of these waited the whole video_timeout before
    src/io/video.c listened for the end of its input (input_drained)."""
    shutil.copy(clips["known"], tmp_path / "a.y4m")
    names = [f"b{i:02d}.mkv" for i in range(12)]
    for name in names:
        shutil.copy(clips["audio-short"], tmp_path / name)
    with pytest.warns(RuntimeWarning) as caught:
        got = dicts(lumahist.stats_files(tmp_path, backend="cpu", video_timeout=2))
    assert [r["frame"] for r in got if "frame" in r] == list(range(len(clips["frames"])))
    assert {os.path.basename(r["path"]) for r in got} == {"a.y4m"}
    messages = sorted(str(w.message) for w in caught)
    want = [str(tmp_path / name) + ": no video stream" for name in names]
    assert [m[:len(w)] for m, w in zip(messages, want)] == want, messages


# --------------------------------------------------------------------------
# Options refused, as the tool refuses them

BAD_OPTIONS = [
    ({"every": 0}, ["--every", "0"]),
    ({"every": -3}, ["--every", "-3"]),
    ({"fps": -1}, ["--fps", "-1"]),
    ({"fps": float("nan")}, ["--fps", "nan"]),
    ({"start": -0.5}, ["--start", "-0.5"]),
    ({"start": float("inf")}, ["--start", "inf"]),
    ({"duration": -1}, ["--duration", "-1"]),
    # 0 read as "not given" (all frames, to the end), though the rules say
    # more than 0.
    ({"fps": 0}, ["--fps", "0"]),
    ({"duration": 0}, ["--duration", "0"]),
    ({"video_timeout": 0}, ["--video-timeout", "0"]),
    ({"cut_threshold": 1.5}, ["--cut-threshold", "1.5"]),
    ({"cut_threshold": -0.1}, ["--cut-threshold", "-0.1"]),
    ({"video_memory": "gpu"}, ["--video-memory", "gpu"]),
    ({"program": 0}, ["--program", "0"]),
    ({"program": 65536}, ["--program", "65536"]),
    ({"program": -7}, ["--program", "-7"]),
]


@pytest.mark.parametrize("keywords,options", BAD_OPTIONS)
def test_bad_video_options_raise_with_the_tools_words(keywords, options):
    code, _, err = tool_run(*options, os.devnull)
    assert code == 2
    line = err.splitlines()[0]
    assert line.startswith("lumahist: --")
    # "--cut-threshold must be in [0, 1]" is "cut_threshold must be in [0, 1]" here.
    option, rule = line[len("lumahist: --"):].split(" ", 1)
    with pytest.raises(lumahist.InvalidArgumentError) as raised:
        lumahist.stats_files(os.devnull, **keywords)
    assert str(raised.value) == f"{option.replace('-', '_')} {rule}"
    assert isinstance(raised.value, ValueError)


def test_a_program_of_a_multiplex_as_the_tools(clips, tmp_path):
    """An MPEG-TS of three programs (7, 3, 9): program= reads the one asked
    for, as --program does; without it, the one tsdemux takes and a warning
    that names them; a program it has not, a warning and no records."""
    path = tmp_path / "multiplex.ts"
    ffmpeg("-f", "lavfi", "-i", "testsrc2=size=96x64:rate=25", "-f", "lavfi", "-i",
           "testsrc2=size=64x48:rate=25", "-map", "0", "-map", "1", "-frames:v", "10",
           "-c:v", "libx264", "-pix_fmt", "yuv420p", "-program", "program_num=7:st=0",
           "-program", "program_num=3:st=1", path)
    for program, width in ((3, 64), (7, 96)):
        got = dicts(lumahist.stats_files(path, backend="cpu", program=program))
        assert got == tool_records([path], "--program", str(program))
        assert {r["width"] for r in got} == {width}
    with pytest.warns(RuntimeWarning, match=r"an MPEG-TS of 2 programs \(7, 3\): program 7 is "
                      r"read.*program=N in Python"):
        got = dicts(lumahist.stats_files(path, backend="cpu"))
    assert got[-1]["width"] == 96
    with pytest.warns(RuntimeWarning, match=r"no program 5 in it: it has 2 programs \(7, 3\)"):
        assert list(lumahist.stats_files(path, backend="cpu", program=5)) == []
    with pytest.raises(TypeError):
        lumahist.stats_files(path, program="3")


def test_option_types():
    with pytest.raises(TypeError):
        lumahist.stats_files(os.devnull, every="4")
    with pytest.raises(TypeError):
        lumahist.stats_files(os.devnull, video_memory=1)


# --------------------------------------------------------------------------
# The objects

def test_records_pickle_and_read_as_documented(clips):
    records = list(lumahist.stats_files(clips["known"], backend="cpu"))
    for r in (records[0], records[7], records[-1]):
        back = pickle.loads(pickle.dumps(r))
        assert type(back) is type(r)
        assert back.to_dict() == r.to_dict()
        assert repr(back) == repr(r)
        assert back == r  # by value, not identity
    assert records[7] != records[8] and records[-1] != records[-2]
    frame = records[7]
    assert repr(frame).startswith("<lumahist.VideoFrame ")
    assert repr(records[-1]).startswith("<lumahist.VideoSummary ")
    # A frame's fields are a frame's alone.
    image = lumahist.stats(np.zeros((4, 4), np.uint8))
    with pytest.raises(AttributeError):
        image.frame
    with pytest.raises(AttributeError):
        lumahist.VideoFrame.diff.__get__(image)
    # Assigned values read back, as for Stats.
    frame.diff = 1.5
    assert frame.diff == 1.5 and frame.to_dict()["diff"] == 1.5


def test_editing_a_summarys_record_leaves_the_summary_as_it_was(clips):
    """to_dict() gave the summary's own lists and dicts (cuts, black, frozen,
    frame_stats): a caller that edited the record it was given (a cut added,
    a statistic rounded for a report) edited the result, its attributes, its
    later records and its equality."""
    summary = list(lumahist.stats_files(clips["known"], backend="cpu"))[-1]
    want = json.loads(json.dumps(summary.to_dict()))
    kept = pickle.loads(pickle.dumps(summary))
    record = summary.to_dict()
    record["cuts"].append(99.0)
    record["black"].append({"start": 0})
    record["frozen"].clear()
    record["frame_stats"]["mean"]["min"] = -1
    record["frame_stats"].pop("max")
    assert summary.to_dict() == want
    assert summary.cuts == want["cuts"] and summary.frame_stats == want["frame_stats"]
    assert summary == kept


def test_closing_in_the_middle_of_a_video(mixed):
    want = tool_records([mixed])
    before = analysis_threads()
    for stop_at in (2, 5, 9):  # a.png, then frames of b.y4m
        for k, record in enumerate(lumahist.stats_files(mixed, backend="cpu", decoder="cpu")):
            assert record.to_dict() == want[k]
            if k == stop_at:
                break
        gc.collect()
    iterator = lumahist.stats_files(mixed, backend="cpu")
    next(iterator)
    iterator.close()
    assert list(iterator) == []
    assert analysis_threads() == before
    assert dicts(lumahist.stats_files(mixed, backend="cpu", decoder="cpu")) == want


def test_a_build_without_gstreamer_says_so_per_video(tmp_path):
    """Runs in a build without GStreamer (elsewhere the other tests run)."""
    if video_build():
        pytest.skip("this lumahist reads videos (GStreamer found): the other tests check them")
    write_y4m(tmp_path / "a.y4m", [np.zeros((4, 4), np.uint8)])
    write_y4m(tmp_path / "b.y4m", [np.zeros((4, 4), np.uint8)])
    with pytest.warns(RuntimeWarning) as caught:
        assert list(lumahist.stats_files(tmp_path, backend="cpu")) == []
    messages = [str(w.message) for w in caught]
    assert len(messages) == 2 and all("built without GStreamer" in m for m in messages)


# --------------------------------------------------------------------------
# NVDEC (a GPU host)

def nvdec_or_skip():
    """Skips, saying why, without the CUDA backend or NVDEC's H.264 decoder;
    LUMAHIST_EXPECT_NVDEC=1 makes their absence a failure."""
    why = None
    if not video_build():
        why = "this lumahist was built without GStreamer"
    elif not shutil.which("gst-inspect-1.0") or subprocess.run(
            ["gst-inspect-1.0", "nvh264dec"], capture_output=True).returncode != 0:
        why = "no nvh264dec (GStreamer's nvcodec with a usable NVIDIA GPU)"
    else:
        try:
            lumahist.stats(np.zeros((8, 8), np.uint8), backend="cuda")
        except lumahist.Error as e:
            why = f"the CUDA backend is not usable here: {e}"
    if why:
        if os.environ.get("LUMAHIST_EXPECT_NVDEC") == "1":
            pytest.fail(f"LUMAHIST_EXPECT_NVDEC=1, but {why}")
        pytest.skip(why)


@pytest.mark.parametrize("memory", ["cuda", "system"])
def test_nvdec_frames_against_the_cpus(memory):
    """NVDEC's frames, analysed in place in CUDA memory (video_memory="cuda")
    or copied to the host by the decoder, give the numbers of the same clip
    decoded and analysed on the CPU, and the tool's records."""
    nvdec_or_skip()
    on_cpu = list(lumahist.stats_files(BALL, backend="cpu"))
    on_gpu = list(lumahist.stats_files(BALL, backend="cuda", video_memory=memory))
    assert len(on_gpu) == len(on_cpu) > 2
    for g, c in zip(on_gpu, on_cpu):
        assert g.decoder == "nvh264dec" and g.backend == "cuda", (g.decoder, g.backend)
        gd, cd = g.to_dict(), c.to_dict()
        assert {k: v for k, v in gd.items() if k not in ("backend", "decoder")} == \
               {k: v for k, v in cd.items() if k not in ("backend", "decoder")}
    assert on_gpu[-1].summary and on_gpu[-1].complete
    want = tool_records([BALL], "--backend", "cuda", "--video-memory", memory)
    assert dicts(on_gpu) == want
