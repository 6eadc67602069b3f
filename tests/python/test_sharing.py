"""What the module promises beyond one call on one thread: a Temporal shared
by threads, or copied; stats_files in a fork()ed child (multiprocessing's
fork start method, PyTorch's DataLoader workers) and an iterator carried into
one; and closing a stats_files iterator while a video gives no frame.  A
crash or a hang here would take the suite with it: the risky parts run in a
child process, under a time limit."""
import copy
import os
import pickle
import signal
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

import lumahist

cv2 = pytest.importorskip("cv2")

# A hang fails the test after this long instead of blocking the suite.
CHILD_LIMIT_S = 60


# What the scripts of the fork tests call: wait_for(pid, seconds), the
# child's exit status, or None once it ran past seconds (then killed).
WAIT_FOR_CHILD = """
import os, time
def wait_for(pid, seconds):
    deadline = time.monotonic() + seconds
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        if time.monotonic() > deadline:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            return None
        time.sleep(0.05)
"""


def run_python(code, limit=CHILD_LIMIT_S):
    """Runs code in a new interpreter with this one's path, wait_for()
    defined: (exit status, output); -9 where it ran past limit and was
    killed."""
    try:
        proc = subprocess.run([sys.executable, "-c", WAIT_FOR_CHILD + textwrap.dedent(code)],
                              capture_output=True, timeout=limit, check=False)
    except subprocess.TimeoutExpired as expired:
        return -9, (expired.stdout or b"").decode() + (expired.stderr or b"").decode()
    return proc.returncode, proc.stdout.decode() + proc.stderr.decode()


# --------------------------------------------------------------------------
# Temporal

def test_a_temporal_shared_by_threads_with_frames_of_two_sizes():
    """A new frame size frees the window and makes another: without the lock,
    a second thread went on writing to the freed one (SIGSEGV in
    lhi_temporal_host_step), and reset() too."""
    status, output = run_python("""
        import threading
        import numpy as np
        import lumahist
        rng = np.random.default_rng(5)
        big = rng.integers(0, 256, (480, 640), dtype=np.uint8)
        small = rng.integers(0, 256, (240, 320), dtype=np.uint8)
        rgb = rng.integers(0, 256, (120, 160, 3), dtype=np.uint8)
        shared = lumahist.Temporal(window=4)
        failures = []

        def work(image, clahe):
            try:
                for i in range(1500):
                    if clahe:
                        out = lumahist.clahe(image, temporal=shared)
                    else:
                        out = lumahist.equalize(image, temporal=shared)
                    assert out.shape == image.shape
                    if i % 97 == 0:
                        shared.reset()
            except Exception as error:
                failures.append(repr(error))

        threads = [threading.Thread(target=work, args=args)
                   for args in ((big, False), (small, False), (small, True), (rgb, False))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        print("failures", failures)
        raise SystemExit(1 if failures else 0)
    """)
    assert status == 0, output


def test_a_shared_temporal_gives_each_frame_what_one_thread_would():
    """Calls one at a time: two threads each smoothing the same constant
    frame through one Temporal give exactly the single-threaded LUT's pixels,
    whichever order they come in."""
    rng = np.random.default_rng(6)
    frame = rng.integers(0, 256, (90, 160), dtype=np.uint8)
    want = lumahist.equalize(frame, temporal=lumahist.Temporal())
    shared = lumahist.Temporal()
    results = []

    def work():
        for _ in range(200):
            results.append(lumahist.equalize(frame, temporal=shared))

    threads = [threading.Thread(target=work) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 400
    assert all(np.array_equal(r, want) for r in results)


@pytest.mark.parametrize("how", ["copy", "deepcopy", "pickle"])
def test_a_temporal_is_not_copied(how):
    """A copy shared the state (copy.copy gave the same capsule): refused,
    saying what to do instead."""
    temporal = lumahist.Temporal(window=3)
    lumahist.equalize(np.eye(16, dtype=np.uint8) * 200, temporal=temporal)
    copier = {"copy": copy.copy, "deepcopy": copy.deepcopy, "pickle": pickle.dumps}[how]
    with pytest.raises(TypeError, match=r"Temporal cannot be copied or pickled.*new "
                                        r"lumahist\.Temporal"):
        copier(temporal)
    temporal.reset()  # still usable
    lumahist.equalize(np.eye(16, dtype=np.uint8), temporal=temporal)


# --------------------------------------------------------------------------
# stats_files and fork()

@pytest.fixture(scope="module")
def images(tmp_path_factory):
    top = tmp_path_factory.mktemp("fork")
    rng = np.random.default_rng(77)
    paths = []
    for i in range(6):
        path = top / f"{i}.png"
        cv2.imwrite(str(path), rng.integers(0, 256, (48 + i, 64), dtype=np.uint8))
        paths.append(str(path))
    return paths


def test_stats_files_in_forked_children_after_the_parent_ran_it(images):
    """The parent's run left GLib's idle pool threads behind (GThreadPool):
    a fork()ed child inherited their count without them, and its run waited
    forever in g_thread_pool_free.  A child forked at once after the run, and
    multiprocessing's fork Pool, as a DataLoader's workers."""
    status, output = run_python(f"""
        import multiprocessing, os, sys, time
        import lumahist
        paths = {images!r}
        want = [r.mean for r in lumahist.stats_files(paths, jobs=2, backend="cpu")]

        def mean_of(path):
            return next(iter(lumahist.stats_files([path], jobs=2, backend="cpu"))).mean

        # os.fork() right after each run, the child running stats_files.
        for attempt in range(4):
            list(lumahist.stats_files(paths, jobs=4, backend="cpu"))
            pid = os.fork()
            if pid == 0:
                got = [r.mean for r in lumahist.stats_files(paths, jobs=2, backend="cpu")]
                os._exit(0 if got == want else 3)
            code = wait_for(pid, 20)
            if code is None:
                print("fork", attempt, ": the child's stats_files hung")
                sys.exit(1)
            if code != 0:
                print("fork", attempt, ": the child's records differ", code)
                sys.exit(1)

        with multiprocessing.get_context("fork").Pool(2) as pool:
            try:
                got = pool.map_async(mean_of, paths * 2).get(timeout=20)
            except multiprocessing.TimeoutError:
                print("the Pool's workers hung")
                pool.terminate()
                sys.exit(1)
        sys.exit(0 if got == want * 2 else 2)
    """)
    assert status == 0, output


def test_a_video_in_a_forked_child_after_the_parent_read_one(images):
    """GStreamer's streaming threads come from GLib's pools too: a child
    forked while the parent's lingered (15 s) waited video_timeout for a
    frame.  A fork within half a second of the parent's video still does
    (GStreamer's task pool keeps its threads that long): the parent waits a
    second."""
    video_or_skip()
    ball = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data",
                        "ball-640x360.mp4")
    status, output = run_python(f"""
        import os, sys, time
        import lumahist
        paths = [{ball!r}] + {images!r}
        want = [r.to_dict(histogram=False) for r in lumahist.stats_files(paths, backend="cpu")]
        if any(str(r.get("decoder", "")).startswith("nv") for r in want):
            sys.exit(5)  # NVDEC decoded it: CUDA, made in the parent, is no use in a child
        time.sleep(1)
        pid = os.fork()
        if pid == 0:
            got = [r.to_dict(histogram=False)
                   for r in lumahist.stats_files(paths, backend="cpu", video_timeout=8)]
            os._exit(0 if got == want else 3)
        code = wait_for(pid, 30)
        if code is None:
            print("the child's run hung")
            sys.exit(1)
        sys.exit(code)
    """)
    if status == 5:
        pytest.skip("the video is decoded by NVDEC here, with CUDA, which a forked child "
                    "cannot use after its parent did: no CPU H.264 decoder to try")
    assert status == 0, output


def test_an_iterator_carried_into_a_forked_child_raises(images):
    """Nothing in the child feeds it: it gave what the parent had queued,
    then waited forever; now RuntimeError at once, and closing or dropping it
    there returns."""
    status, output = run_python(f"""
        import os, sys, time
        import lumahist
        paths = {images!r}
        iterator = lumahist.stats_files(paths, backend="cpu")
        first = next(iterator)
        pid = os.fork()
        if pid == 0:
            try:
                next(iterator)
                code = 3
            except RuntimeError as error:
                code = 0 if "fork" in str(error) and "stats_files" in str(error) else 4
            except BaseException:
                code = 5
            iterator.close()
            del iterator
            os._exit(code)
        code = wait_for(pid, 20)
        if code is None:
            print("the child waited on the parent's iterator")
            sys.exit(1)
        # The parent's goes on as if nothing happened.
        rest = list(iterator)
        print("child", code, "parent", len(rest))
        sys.exit(code if code else (0 if 1 + len(rest) == len(paths) else 2))
    """)
    assert status == 0, output


# --------------------------------------------------------------------------
# Closing while a video gives no frame

def video_or_skip():
    from test_stats_files_video import video_build_or_skip
    video_build_or_skip()


@pytest.fixture
def silent_video(tmp_path):
    """A pipe named as a video, open for writing and never written: GStreamer
    waits for its first bytes, as it does on a stalled file, until the
    timeout."""
    video_or_skip()
    path = tmp_path / "silent.mkv"
    os.mkfifo(path)
    writer = os.open(path, os.O_RDWR)  # a writer, so that opening it to read does not block
    yield str(path)
    os.close(writer)


def test_close_while_a_video_gives_no_frame_returns_at_once(silent_video):
    """close() joined the run's thread, which waited for the frame until
    video_timeout."""
    for wait in (0.0, 1.0):
        iterator = lumahist.stats_files([silent_video], video_timeout=25)
        time.sleep(wait)
        start = time.monotonic()
        iterator.close()
        assert time.monotonic() - start < 2
        assert list(iterator) == []


def test_close_from_another_thread_ends_a_waiting_loop(silent_video):
    iterator = lumahist.stats_files([silent_video], video_timeout=25)
    got = []
    consumer = threading.Thread(target=lambda: got.extend(iterator))
    consumer.start()
    time.sleep(0.5)
    start = time.monotonic()
    iterator.close()
    consumer.join(10)
    assert not consumer.is_alive() and got == []
    assert time.monotonic() - start < 2


def test_ctrl_c_while_a_video_gives_no_frame(silent_video):
    iterator = lumahist.stats_files([silent_video], video_timeout=25)
    timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT))
    start = time.monotonic()
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        for _ in iterator:
            pass
    timer.join()
    assert time.monotonic() - start < 3


def test_a_silent_video_still_times_out_with_its_reason(silent_video):
    """The stop flag left alone, the wait still ends at video_timeout as
    before."""
    start = time.monotonic()
    with pytest.warns(RuntimeWarning, match="no frame for 1 s"):
        assert list(lumahist.stats_files([silent_video], video_timeout=1)) == []
    assert 0.9 < time.monotonic() - start < 10


def test_a_video_fifo_no_writer_opens_keeps_to_fifo_wait(tmp_path):
    """A FIFO named as a video waits for its writer as long as the run's
    fifo_wait says, not the process's 30 s, and close() ends the wait (GStreamer's
    filesrc blocked in open() for ever, whatever either said)."""
    video_or_skip()
    fifo = tmp_path / "never.mkv"
    os.mkfifo(fifo)
    start = time.monotonic()
    with pytest.raises(lumahist.FileIOError, match="never.mkv: a FIFO no writer opened in 1 s"):
        list(lumahist.stats_files([fifo], errors="raise", fifo_wait=1))
    assert 0.9 < time.monotonic() - start < 10
    iterator = lumahist.stats_files([fifo], fifo_wait=0)
    time.sleep(0.5)
    start = time.monotonic()
    iterator.close()
    assert time.monotonic() - start < 2
    assert list(iterator) == []
