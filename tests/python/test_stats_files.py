"""lumahist.stats_files on the batch pipeline (src/pipeline/): its records
against `lumahist stats --backend cpu --decoder cpu`, order, failed files,
closing early, and nvJPEG (decoder="gpu") on a GPU host.  Needs
PYTHONPATH=BUILD/python and LUMAHIST=BUILD/src/tool/lumahist.  The GPU test
skips, saying why, without a CUDA device or nvJPEG; LUMAHIST_EXPECT_NVJPEG=1
makes their absence a failure."""
import gc
import json
import os
import subprocess
import threading
import time
import warnings

import numpy as np
import pytest

import lumahist

cv2 = pytest.importorskip("cv2")
LUMAHIST = os.environ.get("LUMAHIST")
SAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "samples")

# As tests/cli/test_decoder.py bounds nvJPEG against libjpeg-turbo (README,
# "Same numbers"): the IDCTs round differently, by a code value at a few pixels.
MEAN_TOLERANCE = 0.5
MEDIAN_TOLERANCE = 1


def tool_records(paths, *extra):
    """The tool's jsonl records, with the CPU backend and decoder unless extra says."""
    assert LUMAHIST, "LUMAHIST is not set"
    out = subprocess.run([LUMAHIST, "stats", "--quiet", "--backend", "cpu", "--decoder", "cpu",
                          *extra, *map(str, paths)], capture_output=True, check=False).stdout
    return [json.loads(line) for line in out.splitlines()]


def dicts(records):
    return [r.to_dict() for r in records]


def noise(rng, height, width, channels=None, dtype=np.uint8):
    """A photo-like image: smooth gradients plus noise, not flat."""
    top = 65535 if dtype == np.uint16 else 255
    y, x = np.mgrid[0:height, 0:width]
    base = (x * 0.6 / max(width, 1) + y * 0.4 / max(height, 1)) * top
    shape = (height, width) if channels is None else (height, width, channels)
    if channels is not None:
        base = base[..., None]
    image = base + rng.normal(0, top * 0.08, shape)
    return np.clip(image, 0, top).astype(dtype)


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """Seeded PNG and JPEG files of odd sizes, a gray JPEG, a 16-bit PNG, a
    constant and a near-constant image, in nested folders."""
    top = tmp_path_factory.mktemp("files")
    rng = np.random.default_rng(1717)
    (top / "b" / "deep").mkdir(parents=True)
    (top / "a").mkdir()
    sizes = [(1, 1), (3, 7), (17, 31), (64, 48), (101, 77), (239, 321), (480, 641), (33, 1)]
    for k, (h, w) in enumerate(sizes):
        sub = ["a", "b", "b/deep"][k % 3]
        cv2.imwrite(str(top / sub / f"rgb-{k:02d}.png"), noise(rng, h, w, 3))
        cv2.imwrite(str(top / sub / f"rgb-{k:02d}.jpg"), noise(rng, h, w, 3),
                    [cv2.IMWRITE_JPEG_QUALITY, int(rng.integers(40, 100))])
    cv2.imwrite(str(top / "gray.jpg"), noise(rng, 123, 457))
    cv2.imwrite(str(top / "gray16.png"), noise(rng, 97, 131, dtype=np.uint16))
    cv2.imwrite(str(top / "constant.png"), np.full((40, 60), 77, np.uint8))
    near = np.full((50, 70, 3), 200, np.uint8)
    near[rng.integers(0, 50, 20), rng.integers(0, 70, 20)] = 201
    cv2.imwrite(str(top / "a" / "near-constant.jpeg"), near)
    (top / "notes.txt").write_text("not an image")
    return top


@pytest.fixture(scope="module")
def with_bad(tmp_path_factory):
    """Good files with a broken PNG in the middle of them (by sorted name)."""
    top = tmp_path_factory.mktemp("bad")
    rng = np.random.default_rng(99)
    for k in range(6):
        cv2.imwrite(str(top / f"{2 * k}.png"), noise(rng, 20 + k, 30 + 2 * k, 3))
    (top / "5-broken.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 40)
    return top


@pytest.mark.parametrize("jobs", [1, 4])
def test_records_are_the_tools(folder, jobs):
    want = tool_records([folder])
    assert len(want) == 20
    got = dicts(lumahist.stats_files(folder, jobs=jobs, backend="cpu", decoder="cpu"))
    assert [r["path"] for r in got] == [r["path"] for r in want]
    assert got == want
    decoders = {r["decoder"] for r in got}
    assert decoders == {"libpng", "libjpeg-turbo"}
    assert any(r["bit_depth"] == 16 for r in got)


def test_samples_and_several_paths_in_their_order(folder):
    paths = [SAMPLES, folder / "gray.jpg", folder / "a"]
    want = tool_records(paths)
    got = dicts(lumahist.stats_files(paths, jobs=3, backend="cpu", decoder="cpu"))
    assert len(got) == len(want) > 8
    assert got == want


def test_a_path_named_twice_is_read_once_with_a_warning_as_the_tool_does(folder):
    """A file named twice, or named and found in a folder named too: one
    record, and the tool's note as a RuntimeWarning."""
    one = folder / "gray.jpg"
    paths = [one, folder, one]
    want = tool_records(paths)
    with pytest.warns(RuntimeWarning) as caught:
        got = dicts(lumahist.stats_files(paths, jobs=2, backend="cpu", decoder="cpu"))
    assert got == want
    assert sorted(r["path"] for r in got) == sorted(r["path"] for r in tool_records([folder]))
    assert [str(w.message) for w in caught] == [f"{one}: named more than once: read once"] * 2
    # Spelled otherwise ("./", "..", "//"): the same file, read once too.
    spellings = [str(one), f"{folder}/./gray.jpg", f"{folder}/../{folder.name}/gray.jpg",
                 f"{folder}//gray.jpg"]
    with pytest.warns(RuntimeWarning) as caught:
        got = dicts(lumahist.stats_files(spellings, backend="cpu", decoder="cpu"))
    assert [r["path"] for r in got] == [str(one)]
    assert [str(w.message) for w in caught] == [
        f"{p}: named more than once: read once" for p in spellings[1:]]


def test_options_as_the_tools(folder):
    want = tool_records([folder / "b"], "--matrix", "bt709", "--range", "limited",
                        "--percentiles", "0.5,10,99.9")
    got = dicts(lumahist.stats_files(folder / "b", backend="cpu", decoder="cpu",
                                     matrix="bt709", range="limited",
                                     percentiles=(0.5, 10, 99.9)))
    assert got == want
    assert list(got[0]["percentiles"]) == ["0.5", "10", "99.9"]
    # float32 percentiles as they print, as lumahist.stats reads them.
    narrow = dicts(lumahist.stats_files(folder / "b", backend="cpu", decoder="cpu",
                                        matrix="bt709", range="limited",
                                        percentiles=np.array([0.5, 10, 99.9], np.float32)))
    assert narrow == want


def test_default_decoder_gives_the_cpu_decoders_records_here(folder):
    """decoder="auto" (the default) and backend="auto": where nvJPEG or a
    device is missing, the same records as the CPU decoder's; on a GPU host
    the JPEGs may be decoded there (the GPU test checks those)."""
    cpu = dicts(lumahist.stats_files(folder, decoder="cpu"))
    auto = dicts(lumahist.stats_files(folder))
    assert [r["path"] for r in auto] == [r["path"] for r in cpu]
    for a, c in zip(auto, cpu):
        if a["decoder"] == c["decoder"]:
            assert {k: v for k, v in a.items() if k != "backend"} == \
                   {k: v for k, v in c.items() if k != "backend"}
        else:
            assert a["decoder"] in ("nvjpeg-hardware", "nvjpeg-gpu")


def test_a_bad_file_warns_and_the_others_come(with_bad):
    want = tool_records([with_bad])
    assert len(want) == 6
    with pytest.warns(RuntimeWarning) as caught:
        got = dicts(lumahist.stats_files(with_bad, jobs=2, backend="cpu", decoder="cpu"))
    assert got == want
    messages = [str(w.message) for w in caught]
    assert len(messages) == 1
    assert messages[0].startswith(str(with_bad / "5-broken.png") + ": ")
    assert len(messages[0]) > len(str(with_bad / "5-broken.png")) + 2  # says why


def test_an_animated_png_warns_that_its_default_image_is_read(tmp_path):
    """The tool's note on an APNG, as a RuntimeWarning; the record is its
    default image's, as the tool's is."""
    Image = pytest.importorskip("PIL.Image")
    rng = np.random.default_rng(43)
    frames = [Image.fromarray(noise(rng, 30, 20, 3)) for _ in range(4)]
    frames[0].save(tmp_path / "anim.png", save_all=True, append_images=frames[1:], duration=40)
    with pytest.warns(RuntimeWarning) as caught:
        got = dicts(lumahist.stats_files(tmp_path / "anim.png", backend="cpu"))
    assert got == tool_records([tmp_path / "anim.png"])
    assert [str(w.message) for w in caught] == [
        f"{tmp_path / 'anim.png'}: an animated PNG of 4 frames: its default image is read (the "
        "one viewers without animation show)"]


def test_a_bad_file_raises_after_the_ones_before_it(with_bad):
    want = tool_records([with_bad])
    got = []
    with pytest.raises(lumahist.Error, match="5-broken.png") as raised:
        for record in lumahist.stats_files(with_bad, jobs=4, backend="cpu", errors="raise"):
            got.append(record.to_dict())
    assert raised.value.status < 0
    # 0, 10, 2, 4 sort before "5-broken"; 6 and 8 after.
    assert [os.path.basename(r["path"]) for r in got] == ["0.png", "10.png", "2.png", "4.png"]
    assert got == want[:4]


def test_missing_paths(folder, tmp_path):
    missing = tmp_path / "missing.png"
    with pytest.warns(RuntimeWarning, match="missing.png"):
        got = dicts(lumahist.stats_files([missing, folder / "gray.jpg"], backend="cpu"))
    assert [r["path"] for r in got] == [str(folder / "gray.jpg")]
    with pytest.raises(OSError):
        list(lumahist.stats_files([missing], errors="raise"))


def test_a_file_that_fails_raises_the_documented_error(folder, tmp_path):
    """lumahist.Error's docstring and README: a file that cannot be read is a
    FileIOError, an Error and an OSError (-6); a broken one a
    CorruptFileError, one above max_pixels a TooLargeError, each an Error
    and a ValueError (-7, -8): each caught by its public name, which is
    also the private name it had (a pickled error names its class)."""
    import pickle
    broken = tmp_path / "broken.jpg"
    broken.write_bytes((folder / "gray.jpg").read_bytes()[:300])
    for path, options, public, old, also, status in (
            (tmp_path / "missing.png", {}, "FileIOError", "_IOError", OSError, -6),
            (broken, {}, "CorruptFileError", "_CorruptError", ValueError, -7),
            (folder / "gray.jpg", {"max_pixels": 4}, "TooLargeError", "_TooLargeError",
             ValueError, -8)):
        cls = getattr(lumahist, public)
        assert public in lumahist.__all__ and getattr(lumahist, old) is cls
        with pytest.raises(cls) as raised:
            list(lumahist.stats_files([path], errors="raise", **options))
        error = raised.value
        assert isinstance(error, lumahist.Error) and isinstance(error, also), path
        assert error.status == status, path
        assert type(pickle.loads(pickle.dumps(error))) is cls


def test_errors_made_without_a_status_carry_their_class():
    """CorruptFileError("m").status was -1 (InvalidArgumentError's), and so for
    every class but FileIOError: a user's or a test's own error should read
    as the library's of that class does, through pickling too."""
    import pickle
    for name, status in (("Error", -1), ("InvalidArgumentError", -1), ("UnsupportedError", -2),
                         ("OutOfMemoryError", -3), ("NoDeviceError", -4), ("CudaError", -5),
                         ("FileIOError", -6), ("CorruptFileError", -7), ("TooLargeError", -8)):
        error = getattr(lumahist, name)("m")
        assert error.status == status, name
        assert pickle.loads(pickle.dumps(error)).status == status, name
        assert getattr(lumahist, name)("m", -3).status == -3, name


def test_a_file_of_another_format_raises_unsupported_as_readme_says(folder, tmp_path):
    """README: a file whose bytes are no PNG, JPEG or video (a text file, a
    GIF), named explicitly, is an UnsupportedError (-2) with the tool's
    words, not a CorruptFileError, which is for a PNG, JPEG or video that is
    not a valid one (README said CorruptFileError for any file that "is not
    a valid image or video", which the library never raised for these)."""
    gif = tmp_path / "a.gif"
    gif.write_bytes(b"GIF89a" + bytes(64))
    text = tmp_path / "notes.png"
    text.write_text("not an image\n")
    for path in ("/etc/passwd", gif, text):
        with pytest.raises(lumahist.Error) as raised:
            list(lumahist.stats_files([path], errors="raise", backend="cpu"))
        error = raised.value
        assert type(error) is lumahist.UnsupportedError and error.status == -2, (path, error)
        # The GIF named as one, as the tool's line names it.
        kind = " but a GIF image" if path == gif else ""
        assert str(error) == f"{path}: not a PNG or JPEG file{kind}"
    empty = tmp_path / "empty.png"
    empty.write_bytes(b"")
    with pytest.raises(lumahist.CorruptFileError):
        list(lumahist.stats_files([empty], errors="raise", backend="cpu"))
    readme = open(os.path.join(os.path.dirname(__file__), "..", "..", "README.md")).read()
    assert "is an\n`UnsupportedError` (-2)" in readme


def test_a_file_the_system_refuses_carries_errno_and_filename(tmp_path):
    """A FileIOError from a system call's failure carries errno, strerror
    and filename as an OSError does, whether the walk found it (a missing
    path) or the decoding thread (a read that fails, /proc/self/mem), and
    keeps them through pickle; str() stays the library's message.  One
    without a system call's reason (a FIFO that no writer opened) has
    errno None."""
    import errno
    import pickle
    missing = tmp_path / "missing.png"
    for path, number in ((missing, errno.ENOENT), ("/proc/self/mem", errno.EIO)):
        with pytest.raises(lumahist.FileIOError) as raised:
            list(lumahist.stats_files([path], errors="raise", backend="cpu", decoder="cpu"))
        error = raised.value
        assert (error.errno, error.strerror, error.filename) == (number, os.strerror(number),
                                                                 str(path))
        assert str(error) == f"{path}: {os.strerror(number)}" and error.status == -6
        back = pickle.loads(pickle.dumps(error))
        assert (type(back), str(back), back.errno, back.filename, back.status) == (
            lumahist.FileIOError, str(error), number, str(path), -6)
    fifo = tmp_path / "never.png"
    os.mkfifo(fifo)
    with pytest.raises(lumahist.FileIOError) as raised:
        list(lumahist.stats_files([fifo], errors="raise", fifo_wait=0.2))
    assert raised.value.errno is None and "no writer opened" in str(raised.value)


def test_names_that_are_not_utf8_are_the_tools(tmp_path):
    """A name's bytes that are not UTF-8: the record's path is the name as
    os.fsdecode gives it (surrogateescape), in to_dict() and in the tool's
    jsonl alike (the tool wrote U+FFFD), and two such names stay two."""
    top = os.fsencode(tmp_path)
    image = noise(np.random.default_rng(5), 9, 11)
    for name in (b"caf\xe9.png", b"caf\xe8.png"):
        # (cv2.imwrite crashes on such a name.)
        with open(os.path.join(top, name), "wb") as f:
            f.write(cv2.imencode(".png", image)[1].tobytes())
    got = dicts(lumahist.stats_files(tmp_path, backend="cpu", decoder="cpu"))
    assert got == tool_records([tmp_path])
    assert [os.fsencode(r["path"]) for r in got] == [os.path.join(top, b"caf\xe8.png"),
                                                     os.path.join(top, b"caf\xe9.png")]
    assert lumahist.merge(got).images == 2


def test_a_failing_file_whose_name_is_not_utf8_warns_or_raises_with_its_name(tmp_path):
    """Its warning or error names it as its record would (os.fsdecode): the
    message used to be decoded as UTF-8, and UnicodeDecodeError ended the
    run at it, warnings or not."""
    top = os.fsencode(tmp_path)
    with open(os.path.join(top, b"bad\xe9.png"), "wb") as f:
        f.write(b"not an image at all")
    cv2.imwrite(str(tmp_path / "good.png"), noise(np.random.default_rng(6), 9, 11))
    missing = os.path.join(top, b"gone\xe9.png")
    want = tool_records([tmp_path])
    assert len(want) == 1
    with pytest.warns(RuntimeWarning) as caught:
        got = dicts(lumahist.stats_files([missing, tmp_path], backend="cpu", decoder="cpu"))
    assert got == want
    messages = [str(w.message) for w in caught]
    assert len(messages) == 2
    assert messages[0].startswith(os.fsdecode(missing) + ": ")
    assert messages[1].startswith(os.fsdecode(os.path.join(top, b"bad\xe9.png")) + ": ")
    for paths in ([missing], [tmp_path]):
        with pytest.raises(lumahist.Error) as raised:
            list(lumahist.stats_files(paths, backend="cpu", errors="raise"))
        assert os.fsdecode(top) in str(raised.value)


def test_bad_arguments(folder):
    with pytest.raises(lumahist.InvalidArgumentError):
        lumahist.stats_files(folder, errors="ignore")
    with pytest.raises(lumahist.InvalidArgumentError):
        lumahist.stats_files(folder, decoder="nvdec")
    with pytest.raises(lumahist.InvalidArgumentError):
        lumahist.stats_files(folder, decoder="gpu", backend="cpu")
    with pytest.raises(lumahist.InvalidArgumentError):
        lumahist.stats_files(folder, matrix="bt999")
    with pytest.raises(lumahist.InvalidArgumentError):
        lumahist.stats_files(folder, jobs=-1)
    with pytest.raises(lumahist.InvalidArgumentError, match="max_pixels"):
        lumahist.stats_files(folder, max_pixels=-1)
    with pytest.raises(TypeError, match="'str' object cannot be interpreted as an integer"):
        lumahist.stats_files(folder, max_pixels="5")


def test_max_pixels_takes_a_numpy_integer_as_jobs_does(folder):
    """max_pixels=np.prod(shape) raised TypeError "argument 7 must be int,
    not numpy.int64" (jobs= and every= take NumPy integers)."""
    path = folder / "gray.jpg"
    limit = np.prod(np.array([123, 457], dtype=np.int64))
    assert [r.to_dict() for r in lumahist.stats_files(path, max_pixels=limit, jobs=np.int64(1),
                                                      backend="cpu", decoder="cpu")] == \
        tool_records([path], "--max-pixels", str(int(limit)))
    with pytest.raises(lumahist.TooLargeError):
        list(lumahist.stats_files(path, max_pixels=limit - 1, errors="raise"))
    assert list(lumahist.stats_files([])) == []
    assert isinstance(lumahist.stats_files([]), lumahist.StatsFilesIterator)


def thread_name(task):
    """A thread's name, or "" for one that ended after /proc listed it."""
    try:
        with open(f"/proc/self/task/{task}/comm") as f:
            return f.read()
    except FileNotFoundError:
        return ""


def analysis_threads():
    return sum(1 for t in os.listdir("/proc/self/task")
               if thread_name(t).startswith("lumahist-"))


def test_breaking_out_stops_the_run_and_another_runs(folder):
    want = tool_records([folder])
    before = analysis_threads()
    for _ in range(3):
        for k, record in enumerate(lumahist.stats_files(folder, jobs=4, backend="cpu",
                                                        decoder="cpu")):
            assert record.to_dict() == want[k]
            if k == 2:
                break
        gc.collect()
    iterator = lumahist.stats_files(folder, jobs=2, backend="cpu", decoder="cpu")
    assert next(iterator).to_dict() == want[0]
    iterator.close()
    assert list(iterator) == []
    iterator = lumahist.stats_files(folder, jobs=2, backend="cpu", decoder="cpu")
    del iterator  # never read: stopped and joined
    # Nothing left running, and a whole run still gives every record.
    assert analysis_threads() == before
    assert dicts(lumahist.stats_files(folder, jobs=4, backend="cpu", decoder="cpu")) == want


def test_closing_during_a_long_walk_returns_at_once(tmp_path):
    """close() (and so break, Ctrl-C, dropping it) while the folders are still
    being walked waited for the whole walk: minutes on a large tree or a
    slow share.  Here 20 folders each with two links to the next make a
    walk of 2^20 folders, a dozen seconds; it ends when the iterator does."""
    depth = 20
    for k in range(depth + 1):
        (tmp_path / f"d{k}").mkdir()
    for k in range(depth):
        for name in ("a", "b"):
            (tmp_path / f"d{k}" / name).symlink_to(tmp_path / f"d{k + 1}")
    before = analysis_threads()
    iterator = lumahist.stats_files(tmp_path / "d0", backend="cpu")
    time.sleep(0.2)
    start = time.monotonic()
    iterator.close()
    assert time.monotonic() - start < 2
    assert list(iterator) == []
    assert analysis_threads() == before


def test_closing_from_several_threads_at_once(folder):
    """close() from four threads together: one joins the run's thread (each
    joined it before, the same GThread freed again)."""
    before = analysis_threads()
    for _ in range(20):
        iterator = lumahist.stats_files(folder, jobs=1, backend="cpu", decoder="cpu")
        next(iterator)
        barrier = threading.Barrier(4)

        def close():
            barrier.wait()
            iterator.close()

        threads = [threading.Thread(target=close) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert list(iterator) == []
    assert analysis_threads() == before


def test_runs_at_the_same_time(folder, with_bad):
    """Two runs read in turn (zip) and a third on another thread: each its
    own records (the pixel buffers of overlapping runs go back to their own
    pools)."""
    want_a, want_b = tool_records([folder]), tool_records([folder / "b"])
    got_thread = []

    def other():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for _ in range(3):
                got_thread.append(dicts(lumahist.stats_files(with_bad, backend="cpu")))

    thread = threading.Thread(target=other)
    thread.start()
    pairs = list(zip(lumahist.stats_files(folder, jobs=2, backend="cpu", decoder="cpu"),
                     lumahist.stats_files(folder / "b", jobs=3, backend="cpu", decoder="cpu")))
    thread.join()
    assert [a.to_dict() for a, _ in pairs] == want_a[:len(want_b)]
    assert [b.to_dict() for _, b in pairs] == want_b
    assert all(g == tool_records([with_bad]) for g in got_thread)


def test_keyboard_interrupt_while_waiting(tmp_path):
    """A Ctrl-C while the iterator waits (a large PNG decoding) raises
    KeyboardInterrupt in the loop, and the run stops."""
    rng = np.random.default_rng(5)
    for k in range(4):
        cv2.imwrite(str(tmp_path / f"{k}.png"), noise(rng, 2000, 3000, 3),
                    [cv2.IMWRITE_PNG_COMPRESSION, 9])
    import _thread
    timer = threading.Timer(0.05, _thread.interrupt_main)
    start = time.monotonic()
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        for _ in lumahist.stats_files(tmp_path, jobs=1, backend="cpu"):
            time.sleep(1)
    timer.join()
    assert time.monotonic() - start < 20
    assert len(dicts(lumahist.stats_files(tmp_path, jobs=2, backend="cpu"))) == 4


# --------------------------------------------------------------------------
# A named FIFO waits for its writer (fifo_wait, the tool's --fifo-wait)

def write_later(path, data, delay):
    """Opens the FIFO for writing after delay seconds and writes data: a
    program that comes a moment after the read began."""
    def write():
        time.sleep(delay)
        with open(path, "wb") as fifo:
            fifo.write(data)
    thread = threading.Thread(target=write, daemon=True)
    thread.start()
    return thread


def test_a_fifo_no_writer_opens_fails_after_fifo_wait(folder, tmp_path):
    """The FileIOError of a file that cannot be read, after fifo_wait and not
    the default 30 s; with errors="warn" the files after it still come."""
    fifo = tmp_path / "never.png"
    os.mkfifo(fifo)
    start = time.monotonic()
    with pytest.raises(lumahist.FileIOError, match="a FIFO no writer opened in 1 s") as raised:
        list(lumahist.stats_files([fifo], errors="raise", fifo_wait=1))
    took = time.monotonic() - start
    assert 0.9 < took < 10, took
    assert str(fifo) in str(raised.value) and raised.value.status == -6
    with pytest.warns(RuntimeWarning, match="never.png: a FIFO no writer opened in 0.5 s"):
        got = dicts(lumahist.stats_files([fifo, folder / "gray.jpg"], fifo_wait=0.5,
                                         backend="cpu", decoder="cpu"))
    assert got == tool_records([folder / "gray.jpg"])


def test_a_fifo_whose_writer_comes_late_is_read(folder, tmp_path):
    """A writer 1.5 s late, within fifo_wait (and with no limit at all): the
    image's record, the one the file itself gives."""
    image = folder / "gray.jpg"
    want = dicts(lumahist.stats_files([image], backend="cpu", decoder="cpu"))
    for wait in (5, 0):
        fifo = tmp_path / f"late-{wait}.jpg"
        os.mkfifo(fifo)
        writer = write_later(fifo, image.read_bytes(), 1.5)
        got = dicts(lumahist.stats_files([fifo], errors="raise", fifo_wait=wait,
                                         backend="cpu", decoder="cpu"))
        writer.join(10)
        assert [{**r, "path": None} for r in got] == [{**r, "path": None} for r in want]
        assert got[0]["path"] == str(fifo)


def test_close_while_a_fifo_waits_returns_at_once(tmp_path):
    """close(), or the last reference dropped, ends the wait for a writer:
    it joined the run's thread, which waited the whole fifo_wait (no limit:
    for ever)."""
    fifo = tmp_path / "waiting.png"
    os.mkfifo(fifo)
    before = analysis_threads()
    for wait in (25, 0):
        iterator = lumahist.stats_files([fifo], fifo_wait=wait, backend="cpu")
        time.sleep(0.5)
        start = time.monotonic()
        iterator.close()
        assert time.monotonic() - start < 2
        assert list(iterator) == []
        iterator = lumahist.stats_files([fifo], fifo_wait=wait, backend="cpu")
        time.sleep(0.5)
        start = time.monotonic()
        del iterator
        gc.collect()
        assert time.monotonic() - start < 2
    assert analysis_threads() == before


def test_bad_fifo_wait(folder):
    for bad in (-1, float("nan"), float("inf")):
        with pytest.raises(lumahist.InvalidArgumentError, match="fifo_wait"):
            lumahist.stats_files(folder, fifo_wait=bad)


def nvjpeg_or_skip(folder):
    """Skips, saying why, where decoder="gpu" cannot run; with
    LUMAHIST_EXPECT_NVJPEG=1 that is a failure."""
    try:
        iterator = lumahist.stats_files(folder / "gray.jpg", decoder="gpu")
        next(iterator)
        iterator.close()
    except (lumahist.UnsupportedError, lumahist.NoDeviceError) as e:
        if os.environ.get("LUMAHIST_EXPECT_NVJPEG") == "1":
            pytest.fail(f"LUMAHIST_EXPECT_NVJPEG=1, but decoder=\"gpu\": {e}")
        pytest.skip(f"decoder=\"gpu\" cannot run here: {e}")


def test_gpu_decoder_against_the_cpus(folder):
    nvjpeg_or_skip(folder)
    paths = [folder, SAMPLES]
    cpu = dicts(lumahist.stats_files(paths, backend="cpu", decoder="cpu"))
    for decoder in ("gpu", "auto"):
        gpu = dicts(lumahist.stats_files(paths, decoder=decoder, jobs=4))
        assert [r["path"] for r in gpu] == [r["path"] for r in cpu]
        on_gpu = 0
        for g, c in zip(gpu, cpu):
            path = c["path"]
            # auto analyses what the CPU decodes while nvJPEG starts on the CPU
            assert g["backend"] == "cuda" or (decoder == "auto" and g["backend"] == "cpu"), path
            for field in ("width", "height", "count", "bit_depth"):
                assert g[field] == c[field], (path, field)
            if path.lower().endswith(".png"):
                assert g["decoder"] == "libpng", path
                assert {k: v for k, v in g.items() if k != "backend"} == \
                       {k: v for k, v in c.items() if k != "backend"}, path
                continue
            assert g["decoder"] in ("nvjpeg-hardware", "nvjpeg-gpu", "libjpeg-turbo"), path
            on_gpu += g["decoder"] != "libjpeg-turbo"
            assert abs(g["mean"] - c["mean"]) <= MEAN_TOLERANCE, (path, g["mean"], c["mean"])
            assert abs(g["median"] - c["median"]) <= MEDIAN_TOLERANCE, path
        if decoder == "gpu":
            # The generated JPEGs (baseline, 4:2:0 or gray) are all nvJPEG's.
            ours = [g for g in gpu if g["path"].startswith(str(folder))
                    and not g["path"].lower().endswith(".png")]
            assert len(ours) == 10
            assert all(g["decoder"] in ("nvjpeg-hardware", "nvjpeg-gpu") for g in ours), \
                [(g["path"], g["decoder"]) for g in ours]
            assert on_gpu >= 10


def test_devices_are_the_tools_and_checked_as_it_checks_them(folder):
    """devices= is the tool's --devices, with its checks and words."""
    for bad, words in (([], "no device named"), ([-1], "'-1' is not a device number"),
                       ([0, 0], "device 0 is named twice")):
        with pytest.raises(lumahist.InvalidArgumentError, match=words):
            lumahist.stats_files(folder, devices=bad)
    for bad in (["0"], 1.5):
        with pytest.raises(TypeError):
            lumahist.stats_files(folder, devices=bad)
    with pytest.raises(lumahist.InvalidArgumentError, match="CUDA backend"):
        lumahist.stats_files(folder, devices=[0], backend="cpu")


def cuda_devices():
    """How many CUDA devices the module can use (0 without CUDA or a GPU)."""
    try:
        iterator = lumahist.stats_files(SAMPLES, devices=[0])
        next(iterator)
        iterator.close()
    except lumahist.NoDeviceError:
        return 0
    count = 1
    while count < 64:
        try:
            iterator = lumahist.stats_files(SAMPLES, devices=[count])
            next(iterator)
            iterator.close()
        except lumahist.NoDeviceError:
            break
        count += 1
    return count


def test_devices_spread_the_work_and_give_the_cpus_numbers(folder):
    count = cuda_devices()
    if count == 0:
        with pytest.raises(lumahist.NoDeviceError, match="devices=: "):
            list(lumahist.stats_files(folder, devices=[0]))
        return
    with pytest.raises(lumahist.NoDeviceError,
                       match=f"devices=: there is no CUDA device {count} \\({count} found\\)"):
        list(lumahist.stats_files(folder, devices=[count]))
    cpu = dicts(lumahist.stats_files([folder, SAMPLES], backend="cpu", decoder="cpu"))
    for devices in ([0], list(range(min(count, 2))), count - 1):
        got = dicts(lumahist.stats_files([folder, SAMPLES], devices=devices, decoder="cpu"))
        assert all(r.pop("backend") == "cuda" for r in got), devices
        assert got == [{k: v for k, v in r.items() if k != "backend"} for r in cpu], devices


def test_a_video_goes_to_the_device_named():
    """devices=N: the video is decoded by NVDEC of device N (GStreamer's
    nvcodec names its element nvh264deviceNdec for devices past the first)
    and analysed there; it went to device 0 whatever devices= said."""
    count = cuda_devices()
    if count == 0:
        pytest.skip("no usable CUDA device")
    clip = os.path.join(SAMPLES, "..", "tests", "data", "ball-640x360.mp4")
    cpu = [r for r in dicts(lumahist.stats_files(clip, backend="cpu")) if "frame" in r]
    if not cpu:
        pytest.skip("this lumahist reads no video (built without GStreamer)")
    for device in sorted({0, count - 1}):
        got = [r for r in dicts(lumahist.stats_files(clip, devices=device)) if "frame" in r]
        decoders = {r["decoder"] for r in got}
        if not any(d.startswith("nvh264") for d in decoders):
            pytest.skip(f"H.264 is not decoded by NVDEC here ({decoders})")
        assert decoders == {"nvh264dec" if device == 0 else f"nvh264device{device}dec"}, device
        assert all(r["backend"] == "cuda" for r in got), device

        def numbers(records):
            return [{k: v for k, v in r.items() if k not in ("backend", "decoder")}
                    for r in records]
        assert numbers(got) == numbers(cpu), device
    # A call without devices= after one on the last device decodes on
    # nvcodec's own choice, the first device, again: the last device's
    # decoders stayed ranked first for the rest of the process.
    again = {r["decoder"] for r in dicts(lumahist.stats_files(clip, backend="cuda")) if "frame" in r}
    assert again == {"nvh264dec"}, again
