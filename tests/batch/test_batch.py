#!/usr/bin/env python3
"""test_batch.py: checks the batch machinery of the lumahist tool: the threaded
pipeline (order, failures, bounded memory), progress output, --shard and
`merge` (under GNU parallel too), resuming interrupted runs, --devices and the
HTML report (rendered in headless Chromium), of images and of videos, and
the names of the files equalize, clahe and overlay write.

Usage: test_batch.py LUMAHIST SAMPLES_DIR GROUP
GROUP is one of the names in GROUPS at the end.

Test images are crops and resizes of the photographs in SAMPLES_DIR, written
by Pillow.  Expected values never come from lumahist: histograms come from
numpy on the decoded pixels (Pillow; for colour JPEGs its draft 'YCbCr' mode,
libjpeg's own Y component, as tests/cli/test_cli.py does), the walk order from
Python, and the dataset statistics from the summed numpy histograms.
"""
import base64
import html
import html.parser
import io
import json
import math
import os
import pty
import re
import resource
import select
import shlex
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time

try:
    import numpy as np
    from PIL import Image
except ImportError as e:  # pragma: no cover
    print(f"SKIP: needs python3-numpy and python3-pil ({e})")
    sys.exit(77)

LUMAHIST = None
SAMPLES = None
FAILURES = []
IMAGE_EXTENSIONS = (".png", ".jpg", ".jpeg")


def fail(message):
    FAILURES.append(message)
    print("FAIL:", message)


def check(condition, message):
    if not condition:
        fail(message)
    return condition


def run(*args, **kwargs):
    # Records are checked against Pillow's decoding (libjpeg-turbo's pixels)
    # and against the CPU backend's: stats decodes JPEGs on the CPU here.
    # nvJPEG's pixels are measured in tests/io (gpu-jpeg-decode), its batch
    # runs in tests/cli (test_decoder.py).
    if args and args[0] == "stats" and "--decoder" not in args:
        args = (args[0], "--decoder", "cpu", *args[1:])
    return subprocess.run([LUMAHIST, *args], capture_output=True, **kwargs)


def text(data):
    return data.decode("utf-8", "replace")


def skip(reason):
    print(f"SKIP: {reason}")
    sys.exit(77)


# --------------------------------------------------------------------------
# Test images, made from the photographs

def photographs():
    photos = []
    for name in sorted(os.listdir(SAMPLES)):
        if name.lower().endswith(IMAGE_EXTENSIONS):
            with Image.open(os.path.join(SAMPLES, name)) as img:
                if img.mode in ("I;16", "I"):
                    img = Image.fromarray((np.asarray(img) >> 8).astype(np.uint8))
                photos.append(img.convert("RGB"))
    return photos


KINDS = ["jpeg-colour", "png-gray", "png-rgb", "jpeg-gray", "png-gray16"]


def equalized(a):
    """Tones spread evenly over [0, 1], by rank: an image no threshold flags."""
    ranks = np.argsort(np.argsort(a.ravel(), kind="stable"), kind="stable")
    return (ranks / max(1, a.size - 1)).reshape(a.shape)


def make_image(path, photo, size, kind, rng, tone=None):
    """A crop of photo resized to size, saved as kind; tone maps [0,1] -> [0,1]."""
    w, h = photo.size
    cw, ch = int(w * rng.uniform(0.5, 1.0)), int(h * rng.uniform(0.5, 1.0))
    x, y = int(rng.integers(0, w - cw + 1)), int(rng.integers(0, h - ch + 1))
    img = photo.crop((x, y, x + cw, y + ch)).resize(size, Image.BILINEAR)
    if tone is not None:
        a = np.asarray(img).astype(np.float64) / 255
        img = Image.fromarray(np.clip(np.rint(tone(a) * 255), 0, 255).astype(np.uint8))
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if kind == "jpeg-colour":
        img.save(path, "JPEG", quality=90)
    elif kind == "jpeg-gray":
        img.convert("L").save(path, "JPEG", quality=90)
    elif kind == "png-gray":
        img.convert("L").save(path, "PNG", compress_level=1)
    elif kind == "png-rgb":
        img.save(path, "PNG", compress_level=1)
    elif kind == "png-gray16":
        g = np.asarray(img.convert("L")).astype(np.uint32) * 257
        g = g + rng.integers(0, 257, size=g.shape)  # low bits that carry something
        Image.fromarray(np.minimum(g, 65535).astype(np.uint16)).save(path, "PNG")
    else:
        raise ValueError(kind)


def make_folder(folder, n, seed=1, size=(160, 120), nested=True):
    """n images of every kind in turn, some in subfolders; returns their paths."""
    rng = np.random.default_rng(seed)
    photos = photographs()
    paths = []
    for i in range(n):
        kind = KINDS[i % len(KINDS)]
        ext = ".jpg" if kind.startswith("jpeg") else ".png"
        sub = ["", "a", "a/b", "c"][i % 4] if nested else ""
        path = os.path.join(folder, sub, f"img{i:03d}{ext}")
        make_image(path, photos[i % len(photos)], size, kind, rng)
        paths.append(path)
    return paths


def walk_order(folder):
    """The files lumahist finds in folder: recursive, each folder's entries
    sorted by their bytes, image extensions only."""
    out = []
    for name in sorted(os.listdir(os.fsencode(folder))):
        path = os.path.join(os.fsencode(folder), name)
        if os.path.isdir(path):
            out += walk_order(os.fsdecode(path))
        elif os.fsdecode(name).lower().endswith(IMAGE_EXTENSIONS):
            out.append(os.fsdecode(path))
    return out


RGB_WEIGHTS = (9798, 19235, 32768 - 9798 - 19235)  # BT.601 Kr, Kg, Kb in 15-bit fixed point


def reference_histogram(path):
    """The luma histogram of a file, from Pillow and numpy."""
    with Image.open(path) as img:
        if img.format == "JPEG":
            if img.mode != "L":
                img.draft("YCbCr", img.size)
                y = np.asarray(img)[..., 0]
            else:
                y = np.asarray(img)
            return np.bincount(y.ravel(), minlength=256), 8
        if img.mode in ("I;16", "I;16B", "I"):
            return np.bincount(np.asarray(img).astype(np.int64).ravel(), minlength=65536), 16
        if img.mode == "L":
            return np.bincount(np.asarray(img).ravel(), minlength=256), 8
        c = np.asarray(img.convert("RGB")).astype(np.int64)
        kr, kg, kb = RGB_WEIGHTS
        y = (kr * c[..., 0] + kg * c[..., 1] + kb * c[..., 2] + (1 << 14)) >> 15
        return np.bincount(y.ravel(), minlength=256), 8


def records(out):
    result = []
    for line in text(out).splitlines():
        try:
            result.append(json.loads(line))
        except json.JSONDecodeError as e:
            fail(f"not a JSON line ({e}): {line[:120]}")
    return result


def nearest_rank(histogram, p):
    """P(p) by nearest rank from a histogram (DESIGN.md)."""
    n = int(sum(histogram))
    cumulative = np.cumsum(histogram)
    if p == 0:
        return int(np.nonzero(histogram)[0][0])
    rank = -(-int(round(p * 1e6)) * n // 100_000_000)  # ceil(p/100 * n), p to six decimals
    return int(np.searchsorted(cumulative, max(rank, 1)))


# --------------------------------------------------------------------------
# Groups

def check_files_from(tmp, folder, expected, bad):
    """--files-from FILE: the listed paths after the PATHs given, in the
    list's order, as if they were given; lines (CRLF too) or NUL-separated;
    one --dataset record for the whole list; an unreadable or empty list,
    and standard input as both the list and an image, refused (exit 2)."""
    good = [p for p in expected if p not in bad]
    first, listed = good[0], list(reversed(good[1:])) + sorted(bad)
    as_given = run("stats", "--no-histogram", "--dataset", first, *listed)
    lines_list = os.path.join(tmp, "list.txt")
    with open(lines_list, "w", newline="") as f:
        f.write("\r\n".join(listed[:3]) + "\r\n\n" + "\n".join(listed[3:]) + "\n")
    for how, source, stdin in (("lines", lines_list, None),
                               ("NUL-separated on stdin", "-", "\0".join(listed).encode())):
        proc = run("stats", "--no-histogram", "--dataset", "--files-from", source, first,
                   input=stdin)
        check(proc.returncode == 1 and proc.stdout == as_given.stdout and
              sorted(text(proc.stderr).splitlines()) == sorted(text(as_given.stderr).splitlines()),
              f"--files-from, {how}: exit {proc.returncode}, "
              f"{len(records(proc.stdout))} records against {len(records(as_given.stdout))}, "
              f"{text(proc.stderr)!r}")
    out_dir = os.path.join(tmp, "files-from-equalized")
    proc = run("equalize", "--files-from", lines_list, "--out", out_dir)
    made = sorted(os.listdir(out_dir)) if os.path.isdir(out_dir) else []
    check(proc.returncode == 1 and
          made == sorted(os.path.basename(p) for p in listed if p not in bad),
          f"equalize --files-from: exit {proc.returncode}, {made}")
    empty = os.path.join(tmp, "empty-list.txt")
    open(empty, "w").close()
    for argv, said in ((["--files-from", os.path.join(tmp, "no-such-list")],
                        "cannot read the list of paths (--files-from): No such file or directory"),
                       (["--files-from", empty], "no paths in it (--files-from), and no PATH given"),
                       (["--files-from", "-", "-"],
                        "standard input cannot hold both the list of paths and an image")):
        proc = run("stats", *argv, input=b"")
        check(proc.returncode == 2 and not proc.stdout and said in text(proc.stderr),
              f"stats {argv}: exit {proc.returncode}, {text(proc.stderr)!r}")
    print("--files-from: the listed paths as if given, lines or NUL-separated; bad lists refused")


def check_paths_named_twice(tmp, folder, expected, bad):
    """A file named twice, or named and found in a folder named too, is read
    once with one line, as a folder reached twice is: --dataset counted it
    twice, where merge of the same records counts it once."""
    good = [p for p in expected if p not in bad]

    def images(out):
        # One dataset record for each bit depth, matrix and range.
        return sum(r["images"] for r in records(out) if r.get("dataset"))

    alone = run("stats", "--no-histogram", "--dataset", folder)
    # The same file spelled otherwise: through "." or "..", or "//" (each
    # was read again, and counted twice by --dataset, once by merge).
    parent, name = os.path.split(good[3])
    dotted = os.path.join(folder, ".", os.path.relpath(good[3], folder))
    up = os.path.join(parent, "..", os.path.basename(parent), name)
    doubled = parent + "//" + name
    for args, again in (([folder, good[3]], [good[3]]), ([good[3], folder], [good[3]]),
                        ([good[0], good[0], folder], [good[0], good[0]]),
                        ([folder, dotted], [dotted]), ([good[3], up, folder], [up, good[3]]),
                        ([folder, doubled], [doubled])):
        proc = run("stats", "--dataset", *args)
        said = [line for line in text(proc.stderr).splitlines()
                if line.endswith(": named more than once: read once")]
        paths = [r["path"] for r in records(proc.stdout) if not r.get("dataset")]
        merged = subprocess.run([LUMAHIST, "merge", "-"], input=proc.stdout, capture_output=True)
        check(proc.returncode == 1 and
              said == [f"lumahist: {p}: named more than once: read once" for p in again] and
              sorted(paths) == sorted(good) and images(proc.stdout) == len(good) and
              images(merged.stdout) == len(good) and images(alone.stdout) == len(good),
              f"stats --dataset {args[:2]}: exit {proc.returncode}, {said}, {len(paths)} records "
              f"of {len(good)}, dataset {images(proc.stdout)}, merged {images(merged.stdout)}")


def group_pipeline(tmp):
    folder = os.path.join(tmp, "images")
    make_folder(folder, 30)
    # Files that fail, among the others: a truncated JPEG, text named .png.
    with open(os.path.join(SAMPLES, "sky-high-key.jpg"), "rb") as f:
        data = f.read()
    with open(os.path.join(folder, "a", "img000b-truncated.jpg"), "wb") as f:
        f.write(data[:2000])
    with open(os.path.join(folder, "c", "not-an-image.png"), "w") as f:
        f.write("hello\n")
    expected = walk_order(folder)
    bad = {p for p in expected if "truncated" in p or "not-an-image" in p}

    outputs = {}
    for jobs in (1, 2, 3, 8):
        proc = run("stats", "--jobs", str(jobs), folder)
        check(proc.returncode == 1, f"--jobs {jobs}: exit status {proc.returncode}, expected 1")
        err = text(proc.stderr).splitlines()
        for p in bad:
            check(sum(line.startswith(f"lumahist: {p}: ") for line in err) == 1,
                  f"--jobs {jobs}: {p} not reported once: {err}")
        outputs[jobs] = proc.stdout
        got = [r["path"] for r in records(proc.stdout)]
        check(got == [p for p in expected if p not in bad],
              f"--jobs {jobs}: records not in input order: {got[:5]}...")
    for jobs in (2, 3, 8):
        check(outputs[jobs] == outputs[1], f"--jobs {jobs} output differs from --jobs 1")
    check_files_from(tmp, folder, expected, bad)
    check_paths_named_twice(tmp, folder, expected, bad)

    # --timing: where the time went.  The contexts open while the first images
    # decode, within the wall time; the decoding is summed over threads.
    proc = run("stats", "--quiet", "--timing", "--jobs", "2", folder)
    err = text(proc.stderr)
    total = re.search(r"timing: (\d+) images? in ([\d.]+) s wall \([\d.]+ images/s\); "
                      r"decoding ([\d.]+) s, finishing ([\d.]+) s", err)
    opened = re.search(r"timing: (\d+) (cpu|cuda) contexts? opened in ([\d.]+) s", err)
    analysis = re.search(r"timing: analysis on (cpu|cuda): ([\d.]+) s over (\d+) contexts? = "
                         r"([\d.]+) % of wall", err)
    if check(total and opened and analysis, f"--timing: {err!r}"):
        wall = float(total[2])
        check(int(total[1]) == len(expected) and float(total[3]) > 0 and float(total[4]) == 0,
              f"--timing: images, decoding or finishing wrong: {err!r}")
        check(float(opened[3]) <= wall and opened[1] == analysis[3] and opened[2] == analysis[1],
              f"--timing: the contexts' line disagrees: {err!r}")
        check(0 < float(analysis[2]) and float(analysis[4]) <= 100,
              f"--timing: the analysis line: {err!r}")
        # The GPU's own time (CUDA events), on the CUDA backend only: one
        # lh_analyze_batch call per batch of images, and copies and kernels
        # that took some time and no more than the analysis threads spent;
        # the copies moved at least the good images' luma (JPEG) or RGB.
        gpu = re.search(r"timing: GPU time \(CUDA events\): kernels ([\d.]+) s = ([\d.]+) % of wall, "
                        r"frame copies ([\d.]+) s = ([\d.]+) % \(([\d.]+) GB at ([\d.]+) GB/s\), "
                        r"in (\d+) calls?, summed over (\d+) contexts?", err)
        if analysis[1] == "cuda":
            if check(gpu, f"--timing: no GPU time line on the CUDA backend: {err!r}"):
                kernels, copies, calls = float(gpu[1]), float(gpu[3]), int(gpu[7])
                gigabytes, rate = float(gpu[5]), float(gpu[6])
                images = len(expected) - len(bad)
                check(copies > 0 and kernels > 0 and 0 < calls <= images and
                      copies + kernels <= float(analysis[2]) + 0.0005 and  # %.3f rounding
                      gpu[8] == analysis[3],
                      f"--timing: the GPU time line: {err!r}")
                check(abs(float(gpu[2]) - 100 * kernels / wall) < 0.01 and
                      abs(float(gpu[4]) - 100 * copies / wall) < 0.01,
                      f"--timing: the GPU time line's shares: {err!r}")
                # Printed to 3 decimals of a GB and 1 of a GB/s.
                slack = (0.0005 / gigabytes + 0.001) * rate + 0.05 if gigabytes > 0 else 0
                check(gigabytes > 0 and abs(rate - gigabytes / copies) <= slack,
                      f"--timing: the GPU time line's bytes and rate: {err!r}")
            # The pixels were decoded into page-locked buffers (pinned-pool.c).
            pinned = re.search(r"timing: pixels decoded into ([\d.]+) MB of page-locked memory, "
                               r"locked in [\d.]+ s; decoding threads waited ([\d.]+) s for room "
                               r"in it; (\d+) images \(([\d.]+) MB\) past it", err)
            check(pinned and float(pinned[1]) > 0 and float(pinned[2]) <= float(total[3]) and
                  int(pinned[3]) <= len(expected),
                  f"--timing: no page-locked memory on the CUDA backend: {err!r}")
        else:
            check(not gpu and "GPU time" not in err and "page-locked" not in err,
                  f"--timing: a GPU time line on the {analysis[1]}: {err!r}")

    # LUMAHIST_TRACE: a line an image (failed ones too), in input order, with
    # its decoder and backend as its record says, and the moments of its way
    # in the order they happen (taken by a context: -1 when the decoding
    # thread analysed it).
    trace_path = os.path.join(tmp, "trace.txt")
    proc = run("stats", "--jobs", "3", folder, env={**os.environ, "LUMAHIST_TRACE": trace_path})
    with open(trace_path) as f:
        lines = [line.split() for line in f]
    by_path = {r["path"]: r for r in records(proc.stdout)}
    check([int(line[0]) for line in lines] == list(range(len(expected))),
          f"LUMAHIST_TRACE: indices {[line[0] for line in lines][:8]}...")
    for line, path in zip(lines, expected):
        moments = [float(x) for x in line[3:]]
        if not check(len(moments) == 6, f"LUMAHIST_TRACE: {line}"):
            break
        dispatched, decoding, decoded, taken, done, emitted = moments
        check(0 <= dispatched <= decoding <= decoded <= done <= emitted and
              (taken == -1 or decoded <= taken <= done),
              f"LUMAHIST_TRACE: {path}: moments out of order: {line}")
        if path in by_path:
            check(line[1] == by_path[path]["decoder"] and line[2] == by_path[path]["backend"],
                  f"LUMAHIST_TRACE: {path}: {line[1:3]} against its record's "
                  f"{by_path[path]['decoder']}, {by_path[path]['backend']}")
    proc = run("stats", "--quiet", folder,
               env={**os.environ, "LUMAHIST_TRACE": os.path.join(tmp, "no", "such", "dir")})
    check(proc.returncode == 1 and b"cannot write the trace (LUMAHIST_TRACE)" in proc.stderr and
          len(records(proc.stdout)) == len(expected) - len(bad),
          f"LUMAHIST_TRACE in a missing folder: {text(proc.stderr)!r}")

    for r in records(outputs[1]):
        hist, depth = reference_histogram(r["path"])
        check(r["bit_depth"] == depth and r["histogram"] == hist.tolist(),
              f"{r['path']}: histogram differs from numpy's")

    # A region that the photographs hold and the small images do not: those
    # fail, one line each, and the others go on.
    proc = run("stats", "--jobs", "2", "--roi", "0,0,200,130", SAMPLES, folder + "/c")
    err = text(proc.stderr).splitlines()
    small = [p for p in walk_order(folder + "/c") if p not in bad]
    check(proc.returncode == 1, f"--roi: exit status {proc.returncode}")
    for p in small:
        check(sum(line.startswith(f"lumahist: {p}: ") for line in err) == 1,
              f"--roi: {p} not reported once")
    got = records(proc.stdout)
    check([r["path"] for r in got] == walk_order(SAMPLES), "--roi: the photographs' records")
    for r in got:
        check(r["count"] == 200 * 130, f"--roi: count {r['count']}")

    # A run of many times the holding bound (2 images a thread): with
    # --backend auto and --decoder auto, what is decoded before the contexts
    # are open is analysed on the CPU meanwhile (pipeline.c, early_cpu), with
    # the same records as the CPU backend gives.  PNGs only: libpng decodes
    # them whichever backend analyses.
    many = os.path.join(tmp, "many")
    make_folder(many, 150, seed=5, nested=False)
    for name in os.listdir(many):
        if name.endswith(".jpg"):
            os.remove(os.path.join(many, name))
    options = ("--jobs", "2", "--decoder", "auto", "--percentiles", "1,37.5,99", many)
    auto = records(run("stats", *options).stdout)
    cpu = records(run("stats", "--backend", "cpu", *options).stdout)
    backends = [r.pop("backend") for r in auto]
    print(f"{len(auto)} PNGs, --backend auto: {backends.count('cpu')} analysed on the CPU")
    for r in cpu:
        r.pop("backend")
    check(len(auto) == 90 and auto == cpu, "--backend auto's records differ from the CPU's")

    # Memory stays bounded: 40 decoded 1600x1200 RGB images would take 230 MB,
    # and a run of 40 takes no more than a run of 10, whose images in flight
    # (two a decoding thread, a batch a context) and page-locked buffers on
    # the CUDA backend it already has.
    big = os.path.join(tmp, "big")
    os.makedirs(big)
    rng = np.random.default_rng(7)
    photos = photographs()
    first = os.path.join(big, "big000.png")
    make_image(first, photos[0], (1600, 1200), "png-rgb", rng)
    for i in range(1, 40):
        os.link(first, os.path.join(big, f"big{i:03d}.png"))
    few = os.path.join(tmp, "big-few")
    os.makedirs(few)
    for i in range(10):
        os.link(first, os.path.join(few, f"big{i:03d}.png"))
    wrapper = ("import resource, subprocess, sys\n"
               "subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, check=True)\n"
               "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n")
    # The CPU decoder's bound (2 x jobs + 16 a context): the GPU decoder
    # holds up to 64 JPEGs' bytes a context, more than these 40 images.
    ten = subprocess.run([sys.executable, "-c", wrapper, LUMAHIST, "stats", "--decoder", "cpu",
                          "--jobs", "2", few], capture_output=True)
    many = subprocess.run([sys.executable, "-c", wrapper, LUMAHIST, "stats", "--decoder", "cpu",
                           "--jobs", "2", big], capture_output=True)
    if check(ten.returncode == 0 and many.returncode == 0, f"big images: {text(many.stderr)}"):
        ten_kb, many_kb = int(ten.stdout), int(many.stdout)
        print(f"peak memory: 10 images {ten_kb // 1024} MB, 40 images {many_kb // 1024} MB")
        check(many_kb - ten_kb < 40 * 1024,
              f"40 images took {(many_kb - ten_kb) // 1024} MB more than 10: not bounded")


def run_on_terminal(args, stdout_too=False):
    """Runs lumahist with stderr (and stdout, if stdout_too) on a pseudo-terminal;
    returns (status, stdout, terminal)."""
    if args and args[0] == "stats" and "--decoder" not in args:
        args = [args[0], "--decoder", "cpu", *args[1:]]  # as run() does
    master, slave = pty.openpty()
    # stdout to a file: records of 16-bit images would fill a pipe.
    stdout = tempfile.TemporaryFile()
    proc = subprocess.Popen([LUMAHIST, *args], stdout=slave if stdout_too else stdout,
                            stderr=slave)
    os.close(slave)
    seen = b""
    while True:
        ready, _, _ = select.select([master], [], [], 0.1)
        if ready:
            try:
                chunk = os.read(master, 65536)
            except OSError:
                chunk = b""
            if not chunk:
                break
            seen += chunk
        elif proc.poll() is not None:
            break
    proc.wait()
    os.close(master)
    stdout.seek(0)
    out = stdout.read()
    return proc.returncode, out, text(seen)


def group_progress(tmp):
    folder = os.path.join(tmp, "images")
    make_folder(folder, 12)
    proc = run("stats", folder)
    check(proc.returncode == 0 and proc.stderr == b"",
          f"not a terminal, no --progress: stderr should be empty: {text(proc.stderr)!r}")
    proc = run("stats", "--progress", folder)
    err = text(proc.stderr)
    check(proc.returncode == 0 and "lumahist: 12/12 images done" in err and "images/s" in err,
          f"--progress: no final line: {err!r}")
    check("\r" not in err, "--progress off a terminal: lines, not a bar")
    proc = run("stats", "--progress", "--quiet", folder)
    check(proc.stderr == b"", f"--quiet: stderr should be empty: {text(proc.stderr)!r}")
    plain = run("stats", folder).stdout
    # Videos are counted as videos, a mix as files (all were "images").
    clip = os.path.join(tmp, "clip.y4m")
    with open(clip, "wb") as f:
        f.write(y4m_header() + b"".join(y4m_frames(3)))
    image = min(os.path.join(d, name) for d, _, names in os.walk(folder) for name in names
                if name.endswith((".png", ".jpg")))
    if b"without GStreamer" in run("stats", clip).stderr:
        print("this lumahist reads no video: the counts of videos not checked")
    else:
        for args, said in ((["stats", clip], "1/1 videos done"),
                           (["stats", clip, image], "2/2 files done"),
                           (["equalize", "--out", os.path.join(tmp, "eq-mix"), clip, image],
                            "1/1 images done")):
            proc = run(args[0], "--progress", *args[1:])
            err = text(proc.stderr)
            check(proc.returncode == 0 and said in err and said.split()[1] + "/s" in err,
                  f"--progress {args}: {err!r}")
        check("1/1 videos done" in err, f"--progress equalize of a video: {err!r}")
        # --timing of videos: their own line ("0 images in 0.001 s wall"
        # was all it said of a run of videos).
        for args, images in (([clip], False), ([clip, image], True)):
            err = text(run("stats", "--timing", *args).stderr)
            check(re.search(r"timing: 1 video, 3 frames in [\d.]+ s", err) and
                  ("1 image in" in err) == images, f"stats --timing {args}: {err!r}")
        # The images' line leaves out the videos run between them: one image
        # beside a clip took the clip's time ("1 images in 3.953 s wall").
        long_clip = os.path.join(tmp, "long.y4m")
        with open(long_clip, "wb") as f:
            f.write(y4m_header() + b"".join(y4m_frames(120)))
        err = text(run("stats", "--timing", long_clip, image).stderr)
        wall = re.search(r"timing: 1 image in ([\d.]+) s wall", err)
        video = re.search(r"timing: 1 video, 120 frames in ([\d.]+) s", err)
        check(wall and video and float(wall.group(1)) < float(video.group(1)),
              f"stats --timing of an image after a video: {err!r}")

    status, out, seen = run_on_terminal(["stats", "--jobs", "2", folder])
    check(status == 0 and out == plain, "on a terminal: records differ")
    check("\r" in seen and "images/s" in seen and "ETA" in seen and "[" in seen,
          f"on a terminal: no bar: {seen!r}")
    check("12/12 images done" in seen, f"on a terminal: no final line: {seen!r}")
    status, out, seen = run_on_terminal(["stats", "--quiet", folder])
    check(status == 0 and seen == "", f"--quiet on a terminal: {seen!r}")
    # Records on the terminal the bar is drawn on: each shows as a line of its
    # own, the bar cleared before it (a record went on after the bar's text).
    status, _, seen = run_on_terminal(["stats", "--jobs", "1", "--no-histogram", folder],
                                      stdout_too=True)
    shown = [line.split("\r")[-1] for line in seen.replace("\r\n", "\n").split("\n")]
    records = [line for line in shown if "{" in line]
    check(status == 0 and len(records) == 12 and all(line.startswith("{") for line in records),
          f"records on a terminal mixed with the bar: {seen!r}")
    # An error line is not mixed into the bar: it starts a line of its own.
    with open(os.path.join(folder, "broken.png"), "w") as f:
        f.write("not a png")
    status, out, seen = run_on_terminal(["stats", folder])
    lines = [line.split("\r")[-1] for line in seen.replace("\r\n", "\n").split("\n")]
    check(status == 1 and any(line.startswith("lumahist: " + folder + "/broken.png: ")
                              for line in lines), f"error line on a terminal: {seen!r}")


def group_shard(tmp):
    folder = os.path.join(tmp, "images")
    make_folder(folder, 40)
    full = run("stats", folder)
    check(full.returncode == 0, f"full run: {text(full.stderr)}")
    full_lines = text(full.stdout).splitlines()

    for n in (1, 3, 4, 7):
        seen = []
        for i in range(n):
            proc = run("stats", "--shard", f"{i}/{n}", folder)
            check(proc.returncode == 0, f"--shard {i}/{n}: {text(proc.stderr)}")
            lines = text(proc.stdout).splitlines()
            positions = [full_lines.index(line) for line in lines if line in full_lines]
            check(len(positions) == len(lines), f"--shard {i}/{n}: records not of the full run")
            check(positions == sorted(positions), f"--shard {i}/{n}: not in input order")
            seen += lines
        check(sorted(seen) == sorted(full_lines), f"{n} shards do not cover each file once")

    # A file's shard depends on its path below the folder named, not on the
    # other files nor on how the folder is named.
    def shard_paths(base, count=4):
        found = {}
        for i in range(count):
            out = run("stats", "--no-histogram", "--shard", f"{i}/{count}", base).stdout
            for r in records(out):
                found[os.path.relpath(r["path"], base)] = i
        return found
    before = shard_paths(folder)
    link = os.path.join(tmp, "elsewhere")
    os.symlink(folder, link)
    check(shard_paths(link + "/") == before, "shards change with the folder's name")
    make_image(os.path.join(folder, "a", "new.png"), photographs()[0], (64, 48), "png-gray",
               np.random.default_rng(3))
    after = shard_paths(folder)
    check(all(after[k] == v for k, v in before.items()), "shards change when a file is added")
    os.unlink(os.path.join(folder, "a", "new.png"))

    # Files named one by one fall in the shards of their names, as in a folder;
    # equalize takes the same files in a shard as stats.
    top = [p for p in walk_order(folder) if os.path.dirname(p) == folder]
    for i in range(3):
        by_name = [r["path"] for r in records(run("stats", "--no-histogram", "--shard", f"{i}/3",
                                                  *top).stdout)]
        in_folder = [r["path"] for r in records(run("stats", "--no-histogram", "--shard",
                                                    f"{i}/3", folder).stdout)]
        check(by_name == [p for p in in_folder if p in top], f"shard {i}/3: files named apart")
        out = os.path.join(tmp, f"eq-shard-{i}")
        proc = run("equalize", "--quiet", "--shard", f"{i}/3", "--out", out, folder)
        made = sorted(os.path.relpath(p, out) for p in walk_order(out)) if os.path.isdir(out) \
            else []
        check(proc.returncode == 0 and made == sorted(os.path.relpath(p, folder)
                                                      for p in in_folder),
              f"equalize --shard {i}/3 took other files than stats")

    for bad in ("4/4", "-1/4", "1/0", "x", "1/", "/4", "1/4/2"):
        proc = run("stats", "--shard", bad, folder)
        check(proc.returncode == 2 and b"--shard" in proc.stderr, f"--shard {bad}: accepted")

    # merge == one run with --dataset, byte for byte, and both == numpy.
    single = run("stats", "--dataset", "-p", "0,1,5,50,95,99,99.9,100", folder)
    dataset_lines = [line for line in text(single.stdout).splitlines() if '"dataset":true' in line]
    shard_files = []
    for i in range(3):
        path = os.path.join(tmp, f"shard{i}.jsonl")
        with open(path, "wb") as f:
            f.write(run("stats", "--shard", f"{i}/3", "-p", "0,1,5,50,95,99,99.9,100",
                        folder).stdout)
        shard_files.append(path)
    merged = run("merge", *shard_files)
    check(merged.returncode == 0, f"merge: {text(merged.stderr)}")
    check(text(merged.stdout).splitlines() == dataset_lines,
          "merge of 3 shards differs from the single run's dataset records")
    check_dataset(records(merged.stdout), walk_order(folder))

    # Inputs in another order, one twice, and a file with its dataset record.
    again = run("merge", shard_files[2], single_file(tmp, single.stdout), shard_files[0])
    check(text(again.stdout).splitlines() == dataset_lines,
          "merge with repeats and dataset records differs")
    check(b"counted once" in again.stderr, "merge: repeats not mentioned")
    # Shards run with other --percentiles: every percentile any record holds,
    # in increasing order, whatever the files' order (the first record's
    # list was taken, so the record depended on it).
    other_list = os.path.join(tmp, "shard1-other-percentiles.jsonl")
    with open(other_list, "wb") as f:
        f.write(run("stats", "--shard", "1/3", "-p", "99.9,25", folder).stdout)
    union = ["0", "1", "5", "25", "50", "95", "99", "99.9", "100"]
    for order in ((shard_files[0], other_list, shard_files[2]),
                  (other_list, shard_files[2], shard_files[0])):
        proc = run("merge", *order)
        dataset = records(proc.stdout)[0] if proc.returncode == 0 else {}
        check(list(dataset.get("percentiles", {})) == union and
              dataset.get("histogram") == records(merged.stdout)[0]["histogram"],
              f"merge of shards with other percentiles, in the order "
              f"{[os.path.basename(f) for f in order]}: {proc.returncode} "
              f"{list(dataset.get('percentiles', {}))}")
    # Older records wrote P0 as "-0": the same percentile as "0", not another
    # (the dataset record held the key "0" twice).
    minus_zero = os.path.join(tmp, "shard1-minus-zero.jsonl")
    with open(minus_zero, "wb") as f:
        data = open(shard_files[1], "rb").read()
        f.write(data.replace(b'"percentiles":{"0":', b'"percentiles":{"-0":')
                .replace(b'"percentiles_norm":{"0":', b'"percentiles_norm":{"-0":'))
    check(b'{"-0":' in open(minus_zero, "rb").read(), "no -0 key made")
    for order in ((shard_files[0], minus_zero, shard_files[2]),
                  (minus_zero, shard_files[0], shard_files[2])):
        proc = run("merge", *order)
        check(proc.returncode == 0 and text(proc.stdout).splitlines() == dataset_lines,
              f"merge of records with the key -0: exit {proc.returncode}, "
              f"{text(proc.stdout)[:400]!r}")
    # A shard run with another --matrix: its first ten records say so, then
    # one line counts them all (it printed a line for every record).
    other_matrix = os.path.join(tmp, "shard1-bt709.jsonl")
    with open(other_matrix, "wb") as f:
        for _ in range(3):  # 3 x its records, past the ten said one by one
            f.write(run("stats", "--shard", "1/3", "--matrix", "bt709", "-p",
                        "0,1,5,50,95,99,99.9,100", folder).stdout)
    refused = len(records(open(other_matrix, "rb").read()))
    proc = run("merge", shard_files[0], other_matrix, shard_files[2])
    lines = text(proc.stderr).splitlines()
    check(proc.returncode == 1 and refused > 10 and len(lines) == 11 and
          all("histograms of different luma cannot be summed" in line for line in lines[:10]) and
          lines[10] == f"lumahist: {refused} records of another matrix or range in all, not "
          "summed (the first 10 said above)",
          f"merge of a shard of another matrix: exit {proc.returncode}, {len(lines)} lines, "
          f"{lines[-1:]}")
    # Earlier merges' outputs (machines that merged their own shards): summed
    # as the images they count, the bytes of one merge of every shard (they
    # were refused, and before that skipped into a dataset of 0 images).
    merged_file = single_file(tmp, merged.stdout)
    part01 = single_file(tmp, run("merge", shard_files[0], shard_files[1]).stdout)
    part2 = single_file(tmp, run("merge", shard_files[2]).stdout)
    for inputs in ((part01, part2), (part2, part01)):
        proc = run("merge", *inputs)
        check(proc.returncode == 0 and text(proc.stdout).splitlines() == dataset_lines and
              proc.stderr == b"",
              f"merge of earlier merges: exit {proc.returncode}, {text(proc.stderr)!r}")
    # `stats --dataset` files of each shard: their dataset records sum the
    # images before them and are skipped, not counted twice.
    with_dataset = [single_file(tmp, run("stats", "--dataset", "--shard", f"{i}/3", "-p",
                                         "0,1,5,50,95,99,99.9,100", folder).stdout)
                    for i in range(3)]
    proc = run("merge", *with_dataset)
    check(proc.returncode == 0 and text(proc.stdout).splitlines() == dataset_lines,
          f"merge of stats --dataset files: exit {proc.returncode}, {text(proc.stderr)!r}")
    # A shard with no image (more shards than files): its dataset record,
    # merged alone or with another such, lists the percentiles its run
    # asked for, with zeros, as stats --dataset of it does (it listed none).
    empty = os.path.join(tmp, "empty-shard")
    os.makedirs(empty, exist_ok=True)
    empty_shards = [single_file(tmp, run("stats", "--dataset", "-p", "25,75", empty).stdout)
                    for _ in range(2)]
    stated = json.loads(text(open(empty_shards[0], "rb").read()).splitlines()[-1])
    for inputs in (empty_shards[:1], empty_shards):
        proc = run("merge", *inputs)
        merged_empty = json.loads(text(proc.stdout)) if proc.stdout else {}
        check(proc.returncode == 0 and merged_empty.get("images") == 0 and
              merged_empty.get("percentiles") == stated["percentiles"] == {"25": 0, "75": 0} and
              merged_empty.get("percentiles_norm") == stated["percentiles_norm"],
              f"merge of {len(inputs)} empty shard(s): exit {proc.returncode}, percentiles "
              f"{merged_empty.get('percentiles')}, stats --dataset wrote {stated['percentiles']}")
    # Records files with no record at all (stats of an empty folder, without
    # --dataset): merge writes what stats --dataset of it writes, byte for
    # byte; it listed no percentile.
    nothing = single_file(tmp, run("stats", empty).stdout)
    proc = run("merge", nothing)
    want = run("stats", "--dataset", empty).stdout
    check(proc.returncode == 0 and proc.stdout == want and os.path.getsize(nothing) == 0,
          f"merge of an empty records file: exit {proc.returncode}, {text(proc.stdout)[:300]!r}, "
          f"stats --dataset: {text(want)[:300]!r}")
    # One file named twice counts once, as an image met twice does; a copy
    # of it is summed again but said.
    proc = run("merge", merged_file, merged_file)
    check(proc.returncode == 0 and text(proc.stdout).splitlines() == dataset_lines and
          text(proc.stderr) == f"lumahist: {merged_file}: the same file as {merged_file}, named "
          "before: its dataset records counted once\n",
          f"merge of one merge twice: exit {proc.returncode}, {text(proc.stderr)!r}")
    copy = single_file(tmp, open(part2, "rb").read())
    proc = run("merge", part01, part2, copy)
    check(proc.returncode == 0 and f"{copy}:1: the same dataset record as {part2}:1".encode()
          in proc.stderr, f"merge of a merge and its copy: {text(proc.stderr)!r}")
    # Image records and dataset records together: an image in both would
    # count twice, unseen (a dataset record names none): refused.
    proc = run("merge", part01, shard_files[2])
    check(proc.returncode == 1 and proc.stdout == b"" and
          text(proc.stderr).startswith(f"lumahist: {shard_files[2]} holds image records and "
                                       f"{part01} dataset records") and
          "no dataset record written" in text(proc.stderr),
          f"merge of image and dataset records: exit {proc.returncode}, "
          f"{text(proc.stdout)[:60]!r}, {text(proc.stderr)!r}")
    # The same in one file (cat m1.jsonl s2.jsonl > x.jsonl), the merge's
    # record before or after the image records: refused too.  It was taken
    # for `stats --dataset`'s and skipped, its images lost, exit 0.
    part01_data = open(part01, "rb").read()
    shard2_data = open(shard_files[2], "rb").read()
    for joined, line in ((part01_data + shard2_data, 1),
                         (shard2_data + part01_data, len(records(shard2_data)) + 1)):
        path = single_file(tmp, joined)
        proc = run("merge", path)
        check(proc.returncode == 1 and proc.stdout == b"" and
              text(proc.stderr).startswith(f"lumahist: {path}:{line}: a dataset record that is "
                                           "not the sum of the image records before it") and
              len(proc.stderr.splitlines()) == 1,
              f"merge of a merge joined to image records: exit {proc.returncode}, "
              f"{text(proc.stdout)[:60]!r}, {text(proc.stderr)!r}")
    # Another matrix is refused as for image records; a page cannot be drawn
    # from sums.
    part2_709 = single_file(tmp, run("merge", single_file(tmp, run(
        "stats", "--shard", "2/3", "--matrix", "bt709", "-p", "0,1,5,50,95,99,99.9,100",
        folder).stdout)).stdout)
    proc = run("merge", part01, part2_709)
    check(proc.returncode == 1 and f"{part2_709}:1: written with --matrix bt709 --range full, "
          "the first record with bt601 full".encode() in proc.stderr,
          f"merge of merges of other matrices: exit {proc.returncode}, {text(proc.stderr)!r}")
    page = os.path.join(tmp, "from-datasets.html")
    proc = run("merge", "--report", page, part01, part2)
    check(proc.returncode == 1 and not os.path.exists(page) and
          text(proc.stdout).splitlines() == dataset_lines and
          b"hold no image to draw" in proc.stderr,
          f"merge --report of dataset records: exit {proc.returncode}, {text(proc.stderr)!r}")
    table = run("merge", "--format", "table", *shard_files)
    check(table.returncode == 0 and text(table.stdout).startswith("dataset ("),
          f"merge --format table: {text(table.stdout)!r}")

    # The same images named another way (a run on ./photos or by an absolute
    # path): counted once, as --skip-existing takes them for done.
    respelled = os.path.join(tmp, "respelled.jsonl")
    with open(shard_files[0]) as f, open(respelled, "w") as out:
        for line in f:
            record = json.loads(line)
            if record.get("path"):
                head, tail = os.path.split(record["path"])
                record["path"] = os.path.join(head, ".", "x", "..", tail)
            out.write(json.dumps(record) + "\n")
    proc = run("merge", shard_files[0], respelled, shard_files[1], shard_files[2])
    check(proc.returncode == 0 and text(proc.stdout).splitlines() == dataset_lines and
          b"counted once" in proc.stderr,
          f"merge of records naming the same images another way: {proc.returncode} "
          f"{text(proc.stderr)!r}")

    # A shard saved again by an editor that starts files with a byte-order
    # mark (invisible there) merges as it was.
    bom = os.path.join(tmp, "bom.jsonl")
    with open(bom, "wb") as f:
        f.write(b"\xef\xbb\xbf" + open(shard_files[0], "rb").read())
    proc = run("merge", bom, shard_files[1], shard_files[2])
    check(proc.returncode == 0 and text(proc.stdout).splitlines() == dataset_lines,
          f"merge of a shard with a byte-order mark: {proc.returncode} {text(proc.stderr)!r}")

    broken = os.path.join(tmp, "broken.jsonl")
    with open(broken, "w") as f:
        f.write(open(shard_files[0]).readline())
        f.write('{"path": "x", "bit_depth": 8, "histogram": [1,2\n')
    proc = run("merge", broken)
    check(proc.returncode == 1 and f"{broken}:2:".encode() in proc.stderr,
          f"merge of a broken line: {proc.returncode} {text(proc.stderr)!r}")
    # Cut inside its last line (a copy not finished): said so, not only
    # where the JSON stops making sense ("expected ']' at column 1160").
    cut = os.path.join(tmp, "cut.jsonl")
    with open(cut, "w") as f:
        f.write(open(shard_files[0]).read()[:-300])
    proc = run("merge", cut)
    check(proc.returncode == 1 and b": an incomplete last line, cut short (" in proc.stderr,
          f"merge of a file cut in its last line: {proc.returncode} {text(proc.stderr)!r}")
    # A matrix or range the tool never writes (a hand-edited record): refused,
    # where it was summed as the run's own, unseen.
    for field, value, said in (("matrix", "bt999", b"an unknown matrix"),
                               ("range", "weird", b"an unknown range")):
        edited = os.path.join(tmp, f"edited-{field}.jsonl")
        with open(edited, "w") as f:
            f.write(re.sub(f'"{field}":"[a-z0-9]*"', f'"{field}":"{value}"',
                           open(shard_files[0]).read(), count=1))
        proc = run("merge", edited)
        check(proc.returncode == 1 and said in proc.stderr,
              f"merge of a record of {field} {value}: {proc.returncode} {text(proc.stderr)!r}")
    proc = run("merge", os.path.join(tmp, "missing.jsonl"))
    check(proc.returncode == 1, "merge of a missing file succeeded")
    check(proc.stdout.strip() == b"", f"merge of a missing file wrote {proc.stdout[:80]!r}")
    # An image given for records: one line for the file, not one per line
    # of it, and no dataset record of no image.
    proc = run("merge", os.path.join(SAMPLES, "cat-chelsea.png"))
    check(proc.returncode == 1 and proc.stdout.strip() == b"" and
          len(proc.stderr.splitlines()) <= 12 and b"not lumahist records" in proc.stderr,
          f"merge of an image: exit {proc.returncode}, {len(proc.stderr.splitlines())} lines "
          f"on stderr, {proc.stdout[:80]!r} on stdout")
    # The tool's own CSV: one line saying merge reads jsonl, not ten.
    proc = run("merge", single_file(tmp, run("stats", "--format", "csv", folder).stdout))
    check(proc.returncode == 1 and proc.stdout.strip() == b"" and
          len(proc.stderr.splitlines()) == 2 and b"CSV records" in proc.stderr,
          f"merge of CSV records: exit {proc.returncode}, {text(proc.stderr)!r}")
    no_hist = run("stats", "--no-histogram", folder + "/a").stdout
    proc = run("merge", single_file(tmp, no_hist))
    check(proc.returncode == 1 and b"without a histogram" in proc.stderr,
          "merge of records without histograms succeeded")


def single_file(tmp, data):
    path = tempfile.mktemp(dir=tmp, suffix=".jsonl")
    with open(path, "wb") as f:
        f.write(data)
    return path


def check_dataset(dataset_records, paths):
    """Dataset records against numpy: histograms summed per bit depth."""
    sums = {}
    images = {}
    for p in paths:
        hist, depth = reference_histogram(p)
        sums[depth] = sums.get(depth, 0) + hist.astype(np.int64)
        images[depth] = images.get(depth, 0) + 1
    check(sorted(r["bit_depth"] for r in dataset_records) == sorted(sums),
          "dataset records: bit depths differ")
    for r in dataset_records:
        depth = r["bit_depth"]
        if depth not in sums:
            continue
        hist = sums[depth]
        n = int(hist.sum())
        values = np.arange(hist.size, dtype=np.float64)
        mean = float((hist * values).sum()) / n
        std = float(np.sqrt((hist * (values - mean) ** 2).sum() / n))
        check(r["path"] is None and r["dataset"] is True and r["images"] == images[depth],
              f"dataset {depth}: header {r['path']}, {r['images']} images")
        check(r["histogram"] == hist.tolist(), f"dataset {depth}: histogram differs from numpy")
        check(r["count"] == n, f"dataset {depth}: count {r['count']} != {n}")
        check(abs(r["mean"] - mean) <= 1e-9 * max(1, mean), f"dataset {depth}: mean")
        check(abs(r["stddev"] - std) <= 1e-6 * max(1, std), f"dataset {depth}: stddev")
        check(r["median"] == nearest_rank(hist, 50), f"dataset {depth}: median")
        for key, value in r["percentiles"].items():
            check(value == nearest_rank(hist, float(key)), f"dataset {depth}: P{key}")


def group_parallel(tmp):
    parallel = shutil.which("parallel")
    if not parallel:
        skip("GNU parallel is not installed (Debian package 'parallel')")
    folder = os.path.join(tmp, "images")
    make_folder(folder, 40, seed=5)
    out = os.path.join(tmp, "out")
    os.makedirs(out)
    command = (f"{shlex.quote(LUMAHIST)} stats --quiet --shard {{}}/4 {shlex.quote(folder)}"
               f" > {shlex.quote(out)}/shard-{{}}.jsonl")
    env = dict(os.environ, HOME=tmp, TMPDIR=tmp)
    proc = subprocess.run([parallel, "--will-cite", "--halt", "now,fail=1", "-j", "4", command,
                           ":::", "0", "1", "2", "3"], capture_output=True, env=env)
    check(proc.returncode == 0, f"parallel: {proc.returncode} {text(proc.stderr)}")
    files = sorted(os.path.join(out, f) for f in os.listdir(out))
    check(len(files) == 4, f"parallel made {files}")
    merged = run("merge", *files)
    single = run("stats", "--dataset", folder)
    want = [line for line in text(single.stdout).splitlines() if '"dataset":true' in line]
    check(merged.returncode == 0 and text(merged.stdout).splitlines() == want,
          "4 shards under GNU parallel, merged, differ from one run")
    check_dataset(records(merged.stdout), walk_order(folder))
    lines = sum(len(open(f).read().splitlines()) for f in files)
    check(lines == len(walk_order(folder)), f"4 shards hold {lines} records")


def wait_for_lines(path, n, proc, timeout=20):
    end = time.time() + timeout
    while time.time() < end and proc.poll() is None:
        try:
            with open(path, "rb") as f:
                if f.read().count(b"\n") >= n:
                    return True
        except FileNotFoundError:
            pass
        time.sleep(0.01)
    return False


def big_folder(tmp, name, n, size, kinds):
    """n copies (hard links) of a few large images: slow enough to interrupt."""
    folder = os.path.join(tmp, name)
    os.makedirs(folder)
    rng = np.random.default_rng(11)
    photos = photographs()
    firsts = []
    for k, kind in enumerate(kinds):
        path = os.path.join(folder, f"x{k:03d}" + (".jpg" if kind.startswith("jpeg") else ".png"))
        make_image(path, photos[k], size, kind, rng)
        firsts.append(path)
    for i in range(len(kinds), n):
        first = firsts[i % len(kinds)]
        os.link(first, os.path.join(folder, f"x{i:03d}" + os.path.splitext(first)[1]))
    return folder


def check_resume(tmp, folder, sig, extra, full_bytes, label):
    out = os.path.join(tmp, f"out-{label}.jsonl")
    proc = subprocess.Popen([LUMAHIST, "stats", "--decoder", "cpu", "--jobs", "1", "--output",
                             out, *extra, folder],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    started = wait_for_lines(out, 3, proc)
    proc.send_signal(sig)
    stdout, stderr = proc.communicate(timeout=60)
    if not check(started, f"{label}: the run ended before it could be interrupted"):
        return
    with open(out, "rb") as f:
        data = f.read()
    if sig == signal.SIGKILL:
        check(proc.returncode == -signal.SIGKILL, f"{label}: status {proc.returncode}")
    else:
        check(proc.returncode == 128 + sig,
              f"{label}: exit status {proc.returncode}, expected {128 + sig}")
        check(data.endswith(b"\n"), f"{label}: the last record is not whole")
        check(b"--skip-existing" in stderr, f"{label}: no hint to resume: {text(stderr)!r}")
        check(f"stopped by {label}".encode() in stderr,
              f"{label}: the signal is not named: {text(stderr)!r}")
        check(full_bytes.startswith(data), f"{label}: the records kept are not the run's first")
        check(b'"dataset":true' not in data, f"{label}: a dataset record after an interruption")
    check(len(data) < len(full_bytes), f"{label}: the run was not cut short")
    stray = [f for f in os.listdir(tmp) if f.endswith(".tmp") or f.startswith(".")]
    check(not stray, f"{label}: stray files {stray}")
    resumed = run("stats", "--jobs", "2", "--output", out, "--skip-existing", *extra, folder)
    check(resumed.returncode == 0, f"{label}: resuming: {text(resumed.stderr)}")
    with open(out, "rb") as f:
        check(f.read() == full_bytes, f"{label}: the resumed file differs from one full run")


def wait_for_open_input(proc, folder, timeout=20):
    """Whether proc came to hold a file of folder open (Linux's /proc)."""
    end = time.time() + timeout
    fds = f"/proc/{proc.pid}/fd"
    while time.time() < end and proc.poll() is None:
        try:
            for fd in os.listdir(fds):
                if os.readlink(os.path.join(fds, fd)).startswith(folder + os.sep):
                    return True
        except OSError:
            pass  # a descriptor closed meanwhile
        time.sleep(0.002)
    return False


def interrupt_global_pass(tmp):
    """equalize --global reads every input for its LUT before the batch: a
    SIGINT then stops the run as anywhere else, exit 130 with its line and
    nothing written (the signal's default action killed it without a word:
    the handlers were installed by the batch only)."""
    if not os.path.isdir("/proc/self/fd"):
        print("note: no /proc here: --global's first pass not interrupted")
        return
    folder = big_folder(tmp, "global-in", 120, (2048, 1536), ["png-rgb", "jpeg-colour"])
    out = os.path.join(tmp, "eq-global")
    proc = subprocess.Popen([LUMAHIST, "equalize", "--global", "--decoder", "cpu", "--out", out,
                             folder], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    reading = wait_for_open_input(proc, folder)
    written = os.listdir(out) if os.path.isdir(out) else []
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=60)
    if not check(reading and not written, "equalize --global: its first pass ended before it "
                 f"could be interrupted ({len(written)} outputs)"):
        return
    check(proc.returncode == 130 and b"stopped by SIGINT" in stderr and
          text(stderr).count("\n") == 1,
          f"equalize --global SIGINT in its first pass: status {proc.returncode} "
          f"{text(stderr)!r}")
    left = os.listdir(out) if os.path.isdir(out) else []
    check(left == [], f"equalize --global SIGINT in its first pass: wrote {left}")


def interrupt_walk(tmp):
    """A signal while the folders are walked (the plan of outputs built) stops
    every command with its one line and exit status, nothing written (the
    handlers were installed by the batch only: the signal killed the run
    without a word).  The walk says a line for each of thousands of dangling
    links named *.png; stderr is a pipe read one line, then the signal is
    sent: the walk cannot end before the pipe is read again."""
    tree = os.path.join(tmp, "walk-tree")
    os.makedirs(os.path.join(tree, "a"))
    for i in range(3000):
        os.symlink("/nonexistent", os.path.join(tree, "a", f"link{i:04d}.png"))
    photo = photographs()[0]
    make_image(os.path.join(tree, "b.png"), photo, (64, 48), "png-rgb", np.random.default_rng(3))
    records_file = os.path.join(tmp, "walk-out.jsonl")
    with open(records_file, "wb") as f:
        f.write(b"old records\n")
    out_dir = os.path.join(tmp, "walk-out")
    for sig, args in ((signal.SIGINT, ["stats", tree]),
                      (signal.SIGTERM, ["stats", "--output", records_file, tree]),
                      (signal.SIGHUP, ["equalize", "--out", out_dir, tree]),
                      (signal.SIGINT, ["clahe", "--out", out_dir, tree]),
                      (signal.SIGINT, ["overlay", "--out", out_dir, tree])):
        label = f"{args[0]} {signal.Signals(sig).name} in the walk"
        proc = subprocess.Popen([LUMAHIST, *args], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)
        first = proc.stderr.readline()
        proc.send_signal(sig)
        stdout, stderr = proc.communicate(timeout=60)
        lines = text(first + stderr).splitlines()
        said = f"lumahist: stopped by {signal.Signals(sig).name} before the run started: " \
            "nothing written"
        check(proc.returncode == 128 + sig and lines[-1:] == [said] and
              sum("stopped" in line for line in lines) == 1,
              f"{label}: status {proc.returncode}, last lines {lines[-2:]!r}")
        check(stdout == b"", f"{label}: wrote {stdout[:100]!r}")
        with open(records_file, "rb") as f:
            check(f.read() == b"old records\n", f"{label}: the --output file was changed")
        check(not os.path.exists(out_dir), f"{label}: the output folder was made")


def interrupt_merge(tmp, records_bytes):
    """merge stopped while it reads a FIFO of records: its line, exit 130,
    no dataset record or page of the part read (the signal killed it
    without a word).  The FIFO's writer opens only once merge has opened it
    to read: the signal comes while it reads."""
    fifo = os.path.join(tmp, "merge-in.fifo")
    os.mkfifo(fifo)
    page = os.path.join(tmp, "merge-stopped.html")
    proc = subprocess.Popen([LUMAHIST, "merge", "--report", page, fifo],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    with open(fifo, "wb") as feed:
        proc.send_signal(signal.SIGINT)
        try:
            feed.write(records_bytes)
        except BrokenPipeError:
            pass
    stdout, stderr = proc.communicate(timeout=60)
    said = b"lumahist: stopped by SIGINT while reading the records: nothing written\n"
    check(proc.returncode == 130 and stderr == said and stdout == b"",
          f"merge SIGINT: status {proc.returncode}, {text(stderr)!r}, {len(stdout)} bytes out")
    check(not os.path.exists(page) and
          not [f for f in os.listdir(tmp) if f.startswith(".merge-stopped")],
          "merge SIGINT: its page was written")
    # Its writer holds it open, half the records written, and writes no
    # more: a read() blocked in the kernel restarts after the handler, and
    # merge waited for the writer's end.
    held = os.path.join(tmp, "merge-held.fifo")
    os.mkfifo(held)
    proc = subprocess.Popen([LUMAHIST, "merge", held], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    with open(held, "wb") as feed:
        feed.write(records_bytes[:len(records_bytes) // 2])
        feed.flush()
        time.sleep(1)
        proc.send_signal(signal.SIGINT)
        start = time.monotonic()
        try:
            stdout, stderr = proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            stdout, stderr = proc.communicate()
        took = time.monotonic() - start
    check(proc.returncode == 130 and took < 5 and stderr == said and stdout == b"",
          f"merge SIGINT while the FIFO's writer holds it open: status {proc.returncode} "
          f"after {took:.1f} s, {text(stderr)!r}, {len(stdout)} bytes out")


def group_resume(tmp):
    folder = big_folder(tmp, "big", 30, (640, 480), ["png-rgb", "jpeg-colour", "png-gray16"])
    full = run("stats", "--jobs", "2", folder)
    full_dataset = run("stats", "--jobs", "2", "--dataset", folder)
    check(full.returncode == 0 and full_dataset.returncode == 0, "full runs failed")
    interrupt_merge(tmp, full.stdout)
    check_resume(tmp, folder, signal.SIGINT, [], full.stdout, "SIGINT")
    check_resume(tmp, folder, signal.SIGTERM, ["--dataset"], full_dataset.stdout, "SIGTERM")
    # A closed terminal or a dropped ssh session: as SIGTERM, not a death
    # that leaves the run's files as they were at that instant.
    check_resume(tmp, folder, signal.SIGHUP, [], full.stdout, "SIGHUP")
    check_resume(tmp, folder, signal.SIGKILL, [], full.stdout, "SIGKILL")

    # An incomplete last line (power cut) is dropped, a dataset record redone.
    out = os.path.join(tmp, "partial.jsonl")
    lines = full_dataset.stdout.splitlines(keepends=True)
    with open(out, "wb") as f:
        f.write(b"".join(lines[:5]) + lines[5][:40])
    proc = run("stats", "--output", out, "--skip-existing", "--dataset", folder)
    check(proc.returncode == 0 and b"incomplete last line" in proc.stderr,
          f"partial line: {proc.returncode} {text(proc.stderr)!r}")
    with open(out, "rb") as f:
        check(f.read() == full_dataset.stdout, "partial line: the file differs from a full run")
    proc = run("stats", "--output", out, "--skip-existing", "--dataset", folder)
    with open(out, "rb") as f:
        check(proc.returncode == 0 and f.read() == full_dataset.stdout,
              "a finished file resumed again changed")
    # A file that holds records twice (two runs' outputs joined): the dataset
    # record counts each image once, as merge of the same records does (it
    # counted them twice).
    image_lines = [line for line in lines if b'"dataset"' not in line]
    with open(out, "wb") as f:
        f.write(b"".join(image_lines[:4] + image_lines[:4]))
    proc = run("stats", "--output", out, "--skip-existing", "--dataset", folder)
    with open(out, "rb") as f:
        joined = f.read().splitlines(keepends=True)
    datasets = [line for line in joined if b'"dataset"' in line]
    want = [line for line in lines if b'"dataset"' in line]
    check(proc.returncode == 0 and datasets == want and
          b"4 records of an image already read (the same path) counted once" in proc.stderr,
          f"records twice: {proc.returncode} {text(proc.stderr)!r}, dataset records "
          f"{[json.loads(d)['images'] for d in datasets]} against "
          f"{[json.loads(d)['images'] for d in want]}")
    # What --verbose says it left out, counted in words that agree.
    for done in (1, 2):
        with open(out, "wb") as f:
            f.write(b"".join(full.stdout.splitlines(keepends=True)[:done]))
        proc = run("stats", "--verbose", "--output", out, "--skip-existing", folder)
        s = "s" if done > 1 else ""
        said = [f"{done} record{s} already there".encode(),
                f"skipping {done} file{s} already done".encode()]
        check(proc.returncode == 0 and all(line in proc.stderr for line in said),
              f"{done} done: {text(proc.stderr)[-300:]!r}")
    # The folder named otherwise (./big, its absolute path, big/x/..): the
    # same files, not new ones appended (which merge then counted twice).
    relative = os.path.relpath(folder, tmp)
    for spelling in ("./" + relative, os.path.abspath(folder),
                     os.path.join(relative, "x", "..")):
        os.makedirs(os.path.join(folder, "x"), exist_ok=True)
        with open(out, "wb") as f:
            f.write(full_dataset.stdout)
        proc = run("stats", "--output", out, "--skip-existing", "--dataset", spelling, cwd=tmp)
        with open(out, "rb") as f:
            check(proc.returncode == 0 and f.read() == full_dataset.stdout,
                  f"a finished file resumed as {spelling}: {proc.returncode} "
                  f"{text(proc.stderr)!r}")
        os.rmdir(os.path.join(folder, "x"))

    # A file made with other options is not continued, and is left as it was.
    with open(out, "rb") as f:
        before = f.read()
    for extra in (["-p", "50"], ["--range", "limited"], ["--no-histogram"],
                  ["--roi", "0,0,640,479"]):
        proc = run("stats", "--output", out, "--skip-existing", *extra, folder)
        check(proc.returncode == 1 and b"cannot be continued" in proc.stderr,
              f"resume with {extra}: {proc.returncode} {text(proc.stderr)!r}")
    # Both lists said: the same percentiles in another order are other
    # columns in CSV, and were only "other --percentiles".
    proc = run("stats", "--output", out, "--skip-existing", "-p", "99,95,50,5,1", folder)
    check(proc.returncode == 1 and b"its records have --percentiles '1,5,50,95,99', this run "
          b"'99,95,50,5,1'" in proc.stderr,
          f"resume with the percentiles in another order: {text(proc.stderr)!r}")
    with open(out, "rb") as f:
        check(f.read() == before, "a refused resume changed the file")
    # A CSV output resumed (--skip-existing reads back jsonl only) gets one
    # line saying so, not one per record; text of no record, ten at most.
    csv_out = os.path.join(tmp, "resume.csv")
    run("stats", "--format", "csv", "--output", csv_out, folder)
    junk = os.path.join(tmp, "resume-junk.jsonl")
    with open(junk, "w") as f:
        f.write("not a record\n" * 40)
    for name, most, needle in ((csv_out, 2, b"CSV records"), (junk, 12, b"not lumahist records")):
        with open(name, "rb") as f:
            before = f.read()
        proc = run("stats", "--output", name, "--skip-existing", folder)
        lines = proc.stderr.splitlines()
        check(proc.returncode == 1 and len(lines) <= most and needle in proc.stderr and
              b"cannot be continued" in proc.stderr,
              f"resume of {name}: exit {proc.returncode}, {len(lines)} lines: "
              f"{text(proc.stderr)[:300]!r}")
        with open(name, "rb") as f:
            check(f.read() == before, f"a refused resume changed {name}")
    # Records of a --roi are continued with that --roi only (the count of
    # each record shows it).
    roi_out = os.path.join(tmp, "roi.jsonl")
    roi_full = run("stats", "--roi", "10,20,30,40", folder)
    with open(roi_out, "wb") as f:
        f.write(b"".join(roi_full.stdout.splitlines(keepends=True)[:4]))
    proc = run("stats", "--output", roi_out, "--skip-existing", folder)
    check(proc.returncode == 1 and b"another --roi" in proc.stderr,
          f"resume of --roi records without it: {proc.returncode} {text(proc.stderr)!r}")
    proc = run("stats", "--output", roi_out, "--skip-existing", "--roi", "10,20,30,40", folder)
    with open(roi_out, "rb") as f:
        check(proc.returncode == 0 and f.read() == roi_full.stdout,
              f"resume with the same --roi: {proc.returncode} {text(proc.stderr)!r}")
    proc = run("stats", "--skip-existing", folder)
    check(proc.returncode == 2, "--skip-existing without --output accepted")
    proc = run("stats", "--skip-existing", "-o", out, "-f", "csv", folder)
    check(proc.returncode == 2, "--skip-existing with csv accepted")
    # A FIFO holds no records to keep: refused, where it waited forever.
    fifo = os.path.join(tmp, "resume.fifo")
    os.mkfifo(fifo)
    for target in (fifo, "/dev/null"):
        try:
            proc = run("stats", "--skip-existing", "-o", target, folder, timeout=30)
            check(proc.returncode == 2 and b"FIFO or a device" in proc.stderr,
                  f"--skip-existing -o {target}: {proc.returncode} {text(proc.stderr)!r}")
        except subprocess.TimeoutExpired:
            fail(f"--skip-existing -o {target}: still running after 30 s")

    # equalize: interrupted, no partial or temporary file; resumed, the same
    # files as one run; an existing output is left alone.  On the CPU's
    # decoder and encoder: nvJPEG's path writes the 40 files before the
    # signal can come, and the interruption is what is tested here.
    eq_in = big_folder(tmp, "eq-in", 40, (1024, 768), ["jpeg-colour", "jpeg-gray"])
    whole = os.path.join(tmp, "eq-whole")
    proc = run("equalize", "--quiet", "--decoder", "cpu", "--out", whole, eq_in)
    check(proc.returncode == 0, f"equalize: {text(proc.stderr)}")
    cut = os.path.join(tmp, "eq-cut")
    proc = subprocess.Popen([LUMAHIST, "equalize", "--decoder", "cpu", "--jobs", "1", "--out", cut,
                             eq_in],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    end = time.time() + 20
    while time.time() < end and proc.poll() is None and \
            len([f for f in os.listdir(cut) if f.endswith(".jpg")] if os.path.isdir(cut) else []) < 3:
        time.sleep(0.01)
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=60)
    check(proc.returncode == 130, f"equalize SIGINT: status {proc.returncode} {text(stderr)!r}")
    check(b"stopped by SIGINT" in stderr, f"equalize SIGINT: the signal is not named: {text(stderr)!r}")
    names = sorted(os.listdir(cut))
    check(0 < len(names) < 40, f"equalize SIGINT: {len(names)} outputs")
    for name in names:
        check(name.endswith(".jpg") and not name.startswith("."), f"equalize: stray {name}")
        with open(os.path.join(cut, name), "rb") as a, open(os.path.join(whole, name), "rb") as b:
            check(a.read() == b.read(), f"equalize SIGINT: {name} is not whole")
    # SIGHUP: the same, with exit status 129.
    hup = os.path.join(tmp, "eq-hup")
    proc = subprocess.Popen([LUMAHIST, "equalize", "--decoder", "cpu", "--jobs", "1", "--out", hup,
                             eq_in],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    end = time.time() + 20
    while time.time() < end and proc.poll() is None and \
            len([f for f in os.listdir(hup) if f.endswith(".jpg")] if os.path.isdir(hup) else []) < 3:
        time.sleep(0.01)
    proc.send_signal(signal.SIGHUP)
    _, stderr = proc.communicate(timeout=60)
    check(proc.returncode == 129 and b"stopped by SIGHUP" in stderr,
          f"equalize SIGHUP: status {proc.returncode} {text(stderr)!r}")
    hup_names = sorted(os.listdir(hup)) if os.path.isdir(hup) else []
    check(0 < len(hup_names) < 40 and
          all(n.endswith(".jpg") and not n.startswith(".") for n in hup_names),
          f"equalize SIGHUP: outputs {hup_names}")
    interrupt_global_pass(tmp)
    interrupt_walk(tmp)
    keep = os.path.join(cut, names[0])
    with open(keep, "wb") as f:
        f.write(b"mine")
    proc = run("equalize", "--decoder", "cpu", "--skip-existing", "--out", cut, eq_in)
    check(proc.returncode == 0, f"equalize --skip-existing: {text(proc.stderr)}")
    with open(keep, "rb") as f:
        check(f.read() == b"mine", "equalize --skip-existing overwrote an output")
    for name in sorted(os.listdir(whole)):
        if os.path.join(cut, name) != keep:
            with open(os.path.join(cut, name), "rb") as a, \
                    open(os.path.join(whole, name), "rb") as b:
                check(a.read() == b.read(), f"equalize resumed: {name} differs")


def usable_devices():
    """How many CUDA devices lumahist can use (0 without CUDA or a GPU)."""
    probe = os.path.join(SAMPLES, "camera-gray.png")
    count = 0
    for n in range(1, 9):
        proc = run("stats", "--quiet", "--devices", ",".join(str(i) for i in range(n)), probe)
        if proc.returncode != 0:
            break
        count = n
    return count


def group_devices(tmp):
    folder = os.path.join(tmp, "images")
    make_folder(folder, 64, seed=9, size=(320, 240))
    for bad in ("0,x", "0,0", "", "-1", "0,,1"):
        proc = run("stats", "--devices", bad, folder)
        check(proc.returncode == 2 and b"--devices" in proc.stderr,
              f"--devices {bad!r}: status {proc.returncode}")
    proc = run("stats", "--backend", "cpu", "--devices", "0", folder)
    check(proc.returncode == 2, "--devices with --backend cpu accepted")

    count = usable_devices()
    if count == 0:
        proc = run("stats", "--devices", "0,1", folder)
        check(proc.returncode == 1 and b"no CUDA device is usable" in proc.stderr and
              proc.stdout == b"", f"--devices without a GPU: {proc.returncode} "
              f"{text(proc.stderr)!r}")
        # The contexts open while decoding starts, but a run that cannot open
        # them writes nothing: no CSV header, and --output is left as it was,
        # even its incomplete last line that --skip-existing would drop.
        kept = run("stats", "--backend", "cpu", folder).stdout.splitlines(True)[:3]
        kept = b"".join(kept) + b'{"path":"cut sh'
        output = os.path.join(tmp, "kept.jsonl")
        for extra in (["--format", "csv"], ["--output", output],
                      ["--output", output, "--skip-existing"]):
            with open(output, "wb") as f:
                f.write(kept)
            proc = run("stats", "--devices", "0,1", *extra, folder)
            with open(output, "rb") as f:
                check(proc.returncode == 1 and proc.stdout == b"" and f.read() == kept and
                      text(proc.stderr).count("\n") == 1,
                      f"--devices without a GPU, {extra}: status {proc.returncode}, "
                      f"{text(proc.stderr)!r}")
        print("no CUDA device is usable here: checked the message; the rest needs a GPU")
        return

    cpu = records(run("stats", "--backend", "cpu", folder).stdout)
    for r in cpu:
        r.pop("backend")
    for devices in (["0"], ["0", "1"] if count >= 2 else None):
        if devices is None:
            print("one CUDA device: --devices 0,1 not checked")
            continue
        proc = run("stats", "--jobs", "4", "--timing", "--devices", ",".join(devices), folder)
        check(proc.returncode == 0, f"--devices {devices}: {text(proc.stderr)}")
        got = records(proc.stdout)
        check(all(r.pop("backend") == "cuda" for r in got), f"--devices {devices}: not cuda")
        check(got == cpu, f"--devices {devices}: records differ from the CPU's")
        err = text(proc.stderr)
        print(err)
        for d in devices:
            line = [x for x in err.splitlines() if f"timing: device {d}:" in x]
            check(line and int(line[0].split(":")[-1].split()[0]) > 0,
                  f"--devices {devices}: device {d} did no work: {err!r}")
        out = os.path.join(tmp, f"eq-{len(devices)}")
        # Decoded and encoded by libjpeg-turbo both times (JPEGs that nvJPEG
        # decodes and encodes are checked in tests/cli, test_encoder_gpu.py),
        # so the bytes must match.
        proc = run("equalize", "--quiet", "--decoder", "cpu", "--devices", ",".join(devices),
                   "--out", out, folder)
        ref = os.path.join(tmp, f"eq-cpu-{len(devices)}")
        cpu_proc = run("equalize", "--quiet", "--backend", "cpu", "--out", ref, folder)
        check(proc.returncode == 0 and cpu_proc.returncode == 0,
              f"equalize --devices {devices}: {text(proc.stderr)}")
        for p in walk_order(ref):
            q = os.path.join(out, os.path.relpath(p, ref))
            with open(p, "rb") as a, open(q, "rb") as b:
                check(a.read() == b.read(), f"equalize --devices {devices}: {q} differs")


def find_chromium():
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    return None


def chromium(browser, tmp, *args):
    profile = tempfile.mkdtemp(dir=tmp, prefix="chromium-profile-")
    return subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu",
                           "--disable-quic", "--no-first-run", "--disable-background-networking",
                           "--disable-component-update", "--disable-sync",
                           f"--user-data-dir={profile}", *args],
                          capture_output=True, timeout=120,
                          env=dict(os.environ, HOME=tmp))


def report_band_extremes(tmp):
    """Past 600 images a column of the band chart spans a run of images: its
    light band reaches their lowest P1 (it averaged them: with every other
    image clipped at black, P1 0, no column went below 0.225)."""
    folder = os.path.join(tmp, "alternate")
    os.makedirs(folder)
    for name, low in (("clipped.png", 0), ("clean.png", 115)):
        a = np.full((10, 10), 128, np.uint8)
        a[0, :5] = low
        Image.fromarray(a).save(os.path.join(folder, name))
    proc = run("stats", folder)
    two = {json.loads(line)["path"].rsplit("/", 1)[1]: json.loads(line)
           for line in text(proc.stdout).split("\n") if line}
    records = os.path.join(tmp, "alternate.jsonl")
    with open(records, "w") as f:
        for i in range(1200):
            record = dict(two["clipped.png" if i % 2 == 0 else "clean.png"], path=f"i{i:04d}.png")
            f.write(json.dumps(record) + "\n")
    page = os.path.join(tmp, "alternate.html")
    proc = run("merge", "--report", page, records)
    html = open(page, encoding="utf-8").read() if os.path.exists(page) else ""
    chart = html[html.find('id="band-chart"'):]
    light = re.search(r'<path fill="#c9d7ef" d="([^"]*)"', chart)
    points = [tuple(map(float, p.split())) for p in re.split("[MLZ]", light.group(1))
              if p.strip()] if light else []
    low_edge = [y for _, y in points[len(points) // 2:]]  # drawn back from the right
    check(proc.returncode == 0 and low_edge and max(low_edge) == 260.0,
          f"1200 images, every other one clipped at black: the light band's lowest point "
          f"{1 - max(low_edge) / 260 if low_edge else None}, not 0")


def group_report(tmp):
    folder = os.path.join(tmp, "images")
    rng = np.random.default_rng(21)
    photos = photographs()
    tones = {
        "dark.jpg": lambda a: a * 0.18,
        "bright.png": lambda a: 0.82 + a * 0.18,
        "flat.jpg": lambda a: 0.4 + a * 0.15,
    }
    for i, (name, tone) in enumerate(tones.items()):
        kind = "jpeg-colour" if name.endswith(".jpg") else "png-rgb"
        make_image(os.path.join(folder, name), photos[i], (240, 160), kind, rng, tone)
    for i in range(9):
        make_image(os.path.join(folder, "plain", f"p{i}.png"), photos[i % len(photos)],
                   (200, 150), KINDS[i % len(KINDS)], rng, equalized)
    report = os.path.join(tmp, "report.html")
    jsonl = os.path.join(tmp, "all.jsonl")
    proc = run("stats", "--report", report, "--output", jsonl, folder)
    check(proc.returncode == 0, f"--report: {text(proc.stderr)}")
    html = open(report, encoding="utf-8").read()
    for needle in ("http://", "https://", "<link", "src=", "url(", "@import"):
        check(needle not in html, f"the report refers to something outside it: {needle}")
    check("Content-Security-Policy" in html and "default-src 'none'" in html,
          "the report does not forbid fetching")

    report_band_extremes(tmp)
    # Names with markup and control characters: the page's data (a script)
    # holds each name exactly, and no character HTML counts as a parse error
    # in its input (a C1 control was written raw).
    odd = os.path.join(tmp, "odd-names")
    os.makedirs(odd)
    odd_names = sorted(["c1\u0080\u009f.png", "c0\u0001\u001b\u007f.png", "x<\"'&>.png",
                        "ls\u2028.png"])
    for name in odd_names:
        shutil.copy(os.path.join(folder, "bright.png"), os.path.join(odd, name))
    odd_report = os.path.join(tmp, "odd.html")
    proc = run("stats", "--quiet", "--report", odd_report, odd)
    odd_html = open(odd_report, encoding="utf-8").read() if proc.returncode == 0 else ""
    data = odd_html.split("const DATA=[\n", 1)[-1].split("\n];", 1)[0]
    shown = [json.loads(line.rstrip(","))[1] for line in data.splitlines()]
    raw = sorted({f"U+{ord(c):04X}" for c in odd_html
                  if (ord(c) < 0x20 and c not in "\t\n") or 0x7f <= ord(c) <= 0x9f})
    check(proc.returncode == 0 and shown == [os.path.join(odd, n) for n in odd_names] and
          not raw, f"names with control characters: exit {proc.returncode}, data {shown}, "
          f"raw in the page: {raw}")
    one = os.path.join(tmp, "one.html")
    run("stats", "--report", one, os.path.join(folder, "dark.jpg"))
    check("<title>lumahist report: 1 image</title>" in open(one, encoding="utf-8").read(),
          "a report of one image does not say '1 image'")
    # A run whose every file fails writes no page, so an earlier one stays,
    # and a page replaced keeps its permissions: a 0-image page replaced it,
    # made 0644 by the umask.
    os.chmod(one, 0o600)
    before = open(one, "rb").read()
    proc = run("stats", "--quiet", "--roi", "1000,1000,5,5", "--report", one,
               os.path.join(folder, "dark.jpg"))
    check(proc.returncode == 1 and open(one, "rb").read() == before and
          f"lumahist: {one}: not written: no file was analysed" in text(proc.stderr),
          f"--report of a run whose files all failed: exit {proc.returncode}, "
          f"{text(proc.stderr)!r}, page replaced: {open(one, 'rb').read() != before}")
    proc = run("stats", "--quiet", "--report", one, os.path.join(folder, "bright.png"))
    check(proc.returncode == 0 and open(one, "rb").read() != before and
          stat.S_IMODE(os.stat(one).st_mode) == 0o600,
          f"--report replacing a 0600 page: exit {proc.returncode}, mode "
          f"{oct(stat.S_IMODE(os.stat(one).st_mode))}")

    # merge draws the same page from the records.
    merged = os.path.join(tmp, "merged.html")
    proc = run("merge", "--report", merged, jsonl)
    check(proc.returncode == 0 and open(merged, "rb").read() == open(report, "rb").read(),
          "merge --report differs from stats --report")
    # --report /dev/stdout while the records go to standard output: the page
    # replaced a redirected file's records (and followed them down a pipe),
    # exit 0.  Refused as --report naming the --output file is.
    dark = os.path.join(folder, "dark.jpg")
    taken = os.path.join(tmp, "taken.jsonl")
    with open(taken, "wb") as out:
        proc = subprocess.run([LUMAHIST, "stats", "--quiet", "--decoder", "cpu", "--report",
                               "/dev/stdout", dark], stdout=out, stderr=subprocess.PIPE)
    check(proc.returncode == 2 and os.path.getsize(taken) == 0 and
          "--report /dev/stdout is standard output" in text(proc.stderr),
          f"--report /dev/stdout with the records on it: exit {proc.returncode}, "
          f"{os.path.getsize(taken)} bytes, {text(proc.stderr)!r}")
    proc = subprocess.run(f"{shlex.quote(LUMAHIST)} stats --quiet --decoder cpu --report "
                          f"/dev/stdout {shlex.quote(dark)} | cat", shell=True,
                          capture_output=True)
    check(b"<html" not in proc.stdout and b"--report /dev/stdout" in proc.stderr,
          f"--report /dev/stdout with the records on a pipe: {proc.stdout[:80]!r}")
    # With the records in a file of their own, the page may go there.
    with open(taken, "wb") as out:
        proc = subprocess.run([LUMAHIST, "stats", "--quiet", "--decoder", "cpu", "--report",
                               "/dev/stdout", "-o", os.path.join(tmp, "own.jsonl"), dark],
                              stdout=out, stderr=subprocess.PIPE)
    check(proc.returncode == 0 and open(taken, "rb").read().startswith(b"<!DOCTYPE html>"),
          f"--report /dev/stdout with -o FILE: exit {proc.returncode}, {text(proc.stderr)!r}")
    # merge writes its dataset record to standard output always: the page
    # replaced it in a redirected file (exit 0), or followed it down a pipe.
    with open(taken, "wb") as out:
        proc = subprocess.run([LUMAHIST, "merge", "--report", "/dev/stdout", jsonl], stdout=out,
                              stderr=subprocess.PIPE)
    check(proc.returncode == 2 and os.path.getsize(taken) == 0 and
          "--report /dev/stdout is standard output" in text(proc.stderr),
          f"merge --report /dev/stdout with the record on it: exit {proc.returncode}, "
          f"{os.path.getsize(taken)} bytes, {text(proc.stderr)!r}")
    proc = subprocess.run(f"{shlex.quote(LUMAHIST)} merge --report /dev/stdout "
                          f"{shlex.quote(jsonl)} | cat", shell=True, capture_output=True)
    check(b"<html" not in proc.stdout and b"--report /dev/stdout" in proc.stderr,
          f"merge --report /dev/stdout with the record on a pipe: {proc.stdout[:80]!r}")
    # "-" is standard output there too: it wrote a file named "-".
    dash = os.path.join(tmp, "-")
    with open(taken, "wb") as out:
        proc = subprocess.run([LUMAHIST, "stats", "--quiet", "--decoder", "cpu", "--report", "-",
                               dark], stdout=out, stderr=subprocess.PIPE, cwd=tmp)
    check(proc.returncode == 2 and os.path.getsize(taken) == 0 and not os.path.exists(dash),
          f"--report - with the records on standard output: exit {proc.returncode}, "
          f"{os.path.exists(dash)}, {text(proc.stderr)!r}")
    with open(taken, "wb") as out:
        proc = subprocess.run([LUMAHIST, "stats", "--quiet", "--decoder", "cpu", "--report", "-",
                               "-o", os.path.join(tmp, "own.jsonl"), dark], stdout=out,
                              stderr=subprocess.PIPE, cwd=tmp)
    check(proc.returncode == 0 and open(taken, "rb").read().startswith(b"<!DOCTYPE html>") and
          not os.path.exists(dash), f"--report - with -o FILE: exit {proc.returncode}, "
          f"{os.path.exists(dash)}, {text(proc.stderr)!r}")
    with open(taken, "wb") as out:
        proc = subprocess.run([LUMAHIST, "merge", "--report", "-", jsonl], stdout=out,
                              stderr=subprocess.PIPE, cwd=tmp)
    check(proc.returncode == 2 and os.path.getsize(taken) == 0 and not os.path.exists(dash),
          f"merge --report - with the record on standard output: exit {proc.returncode}")
    # Every record refused (no histogram): no dataset record, and no page of
    # no image either (a 0-image page was written).
    bare = os.path.join(tmp, "bare.jsonl")
    with open(bare, "wb") as out:
        subprocess.run([LUMAHIST, "stats", "--quiet", "--no-histogram", dark], stdout=out)
    page = os.path.join(tmp, "bare.html")
    proc = run("merge", "--report", page, bare)
    check(proc.returncode == 1 and proc.stdout == b"" and not os.path.exists(page) and
          f"{page}: not written: no record was read" in text(proc.stderr),
          f"merge --report of refused records: exit {proc.returncode}, page "
          f"{os.path.exists(page)}, {text(proc.stderr)!r}")
    # /dev/null takes both without losing either.
    proc = subprocess.run([LUMAHIST, "merge", "--report", "/dev/null", jsonl],
                          capture_output=True)
    check(proc.returncode == 0 and proc.stdout.startswith(b'{"path":null,"dataset":true'),
          f"merge --report /dev/null: exit {proc.returncode}, {text(proc.stderr)!r}")
    # Standard output redirected onto a records file merge reads: its
    # dataset record was appended to the records (>>), or written over
    # their start (1<>, leaving a file merge itself then refused), exit 0.
    kept = open(jsonl, "rb").read()
    link = os.path.join(tmp, "records-link.jsonl")
    os.symlink(jsonl, link)
    quoted = shlex.quote(jsonl)
    for command in (f"merge {quoted} >> {quoted}", f"merge {quoted} 1<> {quoted}",
                    f"merge - < {quoted} >> {quoted}", f"merge {shlex.quote(link)} >> {quoted}"):
        proc = subprocess.run(f"{shlex.quote(LUMAHIST)} {command}", shell=True,
                              capture_output=True)
        check(proc.returncode == 2 and open(jsonl, "rb").read() == kept and
              "standard output is one of the records files" in text(proc.stderr),
              f"{command}: exit {proc.returncode}, {text(proc.stderr)!r}")
    strict = os.path.join(tmp, "strict.html")
    run("stats", "--report", strict, "--dark-below", "0", "--bright-above", "1",
        "--low-contrast-below", "0", folder)

    # The low-contrast flag is for P95 - P5 below the threshold, from the
    # code values: 65 - 14 = 51 codes is 0.2 exactly, and 65/255 - 14/255
    # is less (it was flagged at --low-contrast-below 0.2).
    edge = os.path.join(tmp, "edge")
    os.makedirs(edge)
    Image.fromarray(np.array([14] * 50 + [65] * 50, np.uint8).reshape(10, 10)).save(
        os.path.join(edge, "span.png"))
    for threshold, flagged in (("0.2", False), ("0.2001", True)):
        page = os.path.join(tmp, f"edge-{threshold}.html")
        proc = run("stats", "--quiet", "--report", page, "--low-contrast-below", threshold, edge)
        data = open(page, encoding="utf-8").read().split("const DATA=[", 1)[-1]
        row = json.loads(data.split("\n", 2)[1].rstrip(","))
        check(proc.returncode == 0 and bool(row[-2] & 4) == flagged,
              f"P95 - P5 = 0.2 at --low-contrast-below {threshold}: flags {row[-2]} ({row})")

    browser = find_chromium()
    if not browser:
        skip("the report was checked as text; rendering needs Chromium (Debian 'chromium')")
    dom = chromium(browser, tmp, "--dump-dom", "file://" + report)
    check(dom.returncode == 0, f"chromium --dump-dom: {text(dom.stderr)[-500:]}")
    page = text(dom.stdout)
    body = page.split("<tbody>", 1)[-1].split("</tbody>", 1)[0]
    rows = body.split("<tr")[1:]
    check(len(rows) == 12, f"the table has {len(rows)} rows, not 12")
    flags = {}
    for row in rows:
        name = next((n for n in list(tones) + [f"p{i}.png" for i in range(9)] if n in row), None)
        flags[name] = ("too dark" in row, "too bright" in row, "low contrast" in row)
    check(flags.get("dark.jpg", (0,))[0], f"dark.jpg not flagged too dark: {flags}")
    check(flags.get("bright.png", (0, 0))[1], f"bright.png not flagged too bright: {flags}")
    check(flags.get("flat.jpg", (0, 0, 0))[2], f"flat.jpg not flagged low contrast: {flags}")
    plain = [v for k, v in flags.items() if k and k.startswith("p")]
    check(len(plain) == 9 and not any(any(v) for v in plain), f"plain images flagged: {flags}")
    strict_page = text(chromium(browser, tmp, "--dump-dom", "file://" + strict).stdout)
    strict_body = strict_page.split("<tbody>", 1)[-1].split("</tbody>", 1)[0]
    check(strict_body.count("<tr") == 12 and "badge" not in strict_body,
          "thresholds 0 / 1 / 0 still flag images")

    shot = os.path.join(tmp, "report.png")
    proc = chromium(browser, tmp, "--window-size=1280,1400", f"--screenshot={shot}",
                    "file://" + report)
    if not check(proc.returncode == 0 and os.path.exists(shot),
                 f"chromium --screenshot: {text(proc.stderr)[-500:]}"):
        return
    pixels = np.asarray(Image.open(shot).convert("RGB")).reshape(-1, 3)
    colours, counts = np.unique(pixels, axis=0, return_counts=True)
    background = counts.max() / len(pixels)
    bar = np.all(pixels == (0x2f, 0x4f, 0x86), axis=1).mean()
    print(f"screenshot: {len(colours)} colours, background {background:.1%}, "
          f"histogram bars {bar:.1%}")
    check(len(colours) > 50, f"the screenshot looks blank: {len(colours)} colours")
    check(background < 0.9, f"the screenshot is {background:.0%} one colour")
    check(bar > 0.01, "no histogram bars in the screenshot")
    keep = os.environ.get("LUMAHIST_KEEP_SCREENSHOT")
    if keep:
        shutil.copy(shot, keep)


# --------------------------------------------------------------------------
# The report of videos

class ReportPage(html.parser.HTMLParser):
    """The parts of a rendered report the video checks read: the rows of the
    video summary table, and per video section its cut markers, black spans
    (with their titles), thumbnails (src, caption), notes and the points of
    its median line."""

    def __init__(self):
        super().__init__()
        self.rows, self.sections = [], []
        self._stack = []      # open tags, with attributes
        self._cell = None     # text of the table cell being read
        self._text = None     # where character data goes: a list
        self._row = None

    def _inside(self, tag, **attrs):
        return any(t == tag and all(a.get(k) == v for k, v in attrs.items())
                   for t, a in self._stack)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag not in ("img", "path", "line", "rect", "br", "input", "meta"):
            self._stack.append((tag, a))
        classes = (a.get("class") or "").split()
        if self._inside("table", id="video-summary") and tag == "tr" and \
                self._inside("tbody"):
            self._row = []
        elif self._row is not None and tag == "td":
            self._cell = []
        elif tag == "section" and "video" in classes:
            self.sections.append({"path": a.get("data-path"), "cuts": 0, "black": [],
                                  "thumbs": [], "captions": [], "notes": [], "median": None,
                                  "incomplete": None})
        elif self.sections and self._inside("section"):
            sec = self.sections[-1]
            if tag == "g" and "cut" in classes:
                sec["cuts"] += 1
            elif tag == "rect" and "span-black" in classes:
                sec["black"].append([])
                self._text = sec["black"][-1]
            elif tag == "img":
                sec["thumbs"].append(a.get("src", ""))
            elif tag == "figcaption":
                sec["captions"].append([])
                self._text = sec["captions"][-1]
            elif tag == "p" and "incomplete" in classes:
                sec["incomplete"] = []
                self._text = sec["incomplete"]
            elif tag == "p" and "note" in classes:
                sec["notes"].append([])
                self._text = sec["notes"][-1]
            elif tag == "path" and "median" in classes:
                sec["median"] = a.get("d", "")
            elif tag == "path" and "diff" in classes:
                sec["diff"] = a.get("d", "")

    def handle_endtag(self, tag):
        if self._stack and self._stack[-1][0] == tag:
            self._stack.pop()
        if tag == "td" and self._cell is not None:
            self._row.append("".join(self._cell).strip())
            self._cell = None
        elif tag == "tr" and self._row is not None:
            self.rows.append(self._row)
            self._row = None
        elif tag in ("rect", "figcaption", "p"):
            self._text = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)
        if self._text is not None:
            self._text.append(data)


def make_clip(path, parts, size="160x90", rate=25,
              codec=("-c:v", "libx264", "-pix_fmt", "yuv420p")):
    """A clip by ffmpeg (H.264 by default): lavfi sources of (source, seconds)
    one after the other, so that each join is a scene cut."""
    args, chains = [], []
    for i, (source, seconds) in enumerate(parts):
        joint = ":" if "=" in source else "="
        args += ["-f", "lavfi", "-i", f"{source}{joint}size={size}:rate={rate}"]
        chains.append(f"[{i}]trim=duration={seconds},setpts=PTS-STARTPTS[v{i}]")
    joined = "".join(f"[v{i}]" for i in range(len(parts)))
    graph = ";".join(chains) + f";{joined}concat=n={len(parts)}[out]"
    subprocess.run(["ffmpeg", "-v", "error", "-y", *args, "-filter_complex", graph,
                    "-map", "[out]", *codec, path],
                   check=True)


def near(shown, value, decimals):
    """Whether a cell's text is value as the page rounds it."""
    try:
        return abs(float(shown) - value) <= 0.5 * 10 ** -decimals + 1e-9
    except ValueError:
        return False


def video_sections(page_text):
    """The video sections of a page's HTML by path, with the thumbnails (and
    their note) or the note that says there are none taken out, and the rows
    of its video table by path: what `stats` and `merge` must draw alike."""
    sections = {}
    for path, body in re.findall(r'<section class="video" id="video-\d+" data-path="([^"]*)">'
                                 r"(.*?)</section>", page_text, re.S):
        body = re.sub(r'<div class="thumbs">.*?</div>\n<p class="note">Luma \(Y\).*?</p>\n',
                      "", body, flags=re.S)
        body = re.sub(r'<p class="note no-thumbs">.*?</p>\n', "", body, flags=re.S)
        sections[html.unescape(path)] = body
    table = re.search(r'<table id="video-summary">.*?</table>', page_text, re.S)
    rows = {html.unescape(path): cells for path, cells in
            re.findall(r'<tr><td class="text"><a href="#video-\d+">(.*?)</a></td>(.*?)</tr>',
                       table.group(0) if table else "", re.S)}
    return sections, rows


def merge_report_of_shards(tmp, folder):
    """`merge --report` over the records of `stats --shard i/3` runs: the same
    video sections and table as `stats --report` of the folder (the order of
    the sections aside: merge draws them in the order of its records), no
    thumbnails and a note saying why.  Returns the two pages for the
    rendered checks."""
    clips = os.path.join(tmp, "clips")
    os.makedirs(clips)
    # The clips alone: merge sums records of one --range, and the images
    # are full-range where the clips are limited.
    for name in ("a-cuts.mp4", "b-long.mp4", "e-10bit.mkv"):
        shutil.copy(os.path.join(folder, name), clips)
    live = os.path.join(tmp, "clips.html")
    proc = run("stats", "--report", live, clips)
    check(proc.returncode == 0, f"stats --report on the clips: {text(proc.stderr)}")
    shards = []
    for i in range(3):
        shards.append(os.path.join(tmp, f"shard-{i}.jsonl"))
        proc = run("stats", "--quiet", "--shard", f"{i}/3", "--output", shards[-1], clips)
        check(proc.returncode == 0, f"stats --shard {i}/3: {text(proc.stderr)}")
    held = [{r["path"] for r in map(json.loads, open(s)) if r.get("summary")} for s in shards]
    check(sum(map(bool, held)) >= 2, f"the shards' videos {held}: all in one shard")
    merged = os.path.join(tmp, "merged.html")
    proc = run("merge", "--report", merged, *shards)
    check(proc.returncode == 0, f"merge --report: exit {proc.returncode}: {text(proc.stderr)}")
    live_text = open(live, encoding="utf-8").read()
    merged_text = open(merged, encoding="utf-8").read()
    live_sections, live_rows = video_sections(live_text)
    merged_sections, merged_rows = video_sections(merged_text)
    check(len(live_sections) == 3 and len(live_rows) == 3,
          f"stats --report: {len(live_sections)} sections, {len(live_rows)} rows, not 3")
    check(sorted(merged_sections) == sorted(live_sections),
          f"merge --report's sections {sorted(merged_sections)}, stats' {sorted(live_sections)}")
    for path, body in live_sections.items():
        check(merged_sections.get(path) == body,
              f"{path}: merge --report draws it otherwise than stats --report")
    check(merged_rows == live_rows, f"the video table: merge {merged_rows}, stats {live_rows}")
    check("<img" not in merged_text and merged_text.count('class="note no-thumbs"') == 3,
          "merge --report: thumbnails shown, or their absence not said in each section")
    check("<img" in live_text, "stats --report has no thumbnails")

    # A shard given twice draws its videos once.
    busiest = max(range(len(shards)), key=lambda i: len(held[i]))
    twice = os.path.join(tmp, "twice.html")
    proc = run("merge", "--report", twice, shards[busiest], *shards)
    sections, _ = video_sections(open(twice, encoding="utf-8").read())
    check(list(sorted(sections)) == sorted(live_sections) and
          "counted once" in text(proc.stderr),
          f"a shard given twice: sections {sorted(sections)}, {text(proc.stderr)!r}")
    # An interrupted shard (its last summary not written): that video's
    # frames are not drawn; the others are.
    lines = open(shards[busiest], encoding="utf-8").read().splitlines(keepends=True)
    last = json.loads(lines[-1])
    check(last.get("summary"), "a shard does not end with a summary record")
    interrupted = os.path.join(tmp, "interrupted.jsonl")
    open(interrupted, "w", encoding="utf-8").write("".join(lines[:-1]))
    part = os.path.join(tmp, "part.html")
    run("merge", "--report", part, interrupted,
        *[s for i, s in enumerate(shards) if i != busiest])
    sections, rows = video_sections(open(part, encoding="utf-8").read())
    check(sorted(sections) == sorted(set(live_sections) - {last["path"]}) and
          all(sections[p] == live_sections[p] for p in sections),
          f"an interrupted shard: sections {sorted(sections)} (without {last['path']})")
    return live, merged


def ffmpeg_makes_clips():
    """An ffmpeg with libx264 and the lavfi sources make_clip draws from (a
    minimal build carried to a GPU host for the benches has neither)."""
    if not shutil.which("ffmpeg"):
        return False
    listed = subprocess.run(["ffmpeg", "-hide_banner", "-encoders"], capture_output=True,
                            text=True).stdout
    listed += subprocess.run(["ffmpeg", "-hide_banner", "-filters"], capture_output=True,
                             text=True).stdout
    return all(f" {name} " in listed for name in ("libx264", "color", "mandelbrot", "testsrc2"))


def group_report_video(tmp):
    if not ffmpeg_makes_clips():
        skip("needs an ffmpeg with libx264 to make the clips (build-aux/install-deps.sh)")
    folder = os.path.join(tmp, "mixed")
    os.makedirs(folder)
    # A scene, a second of black, another scene: two cuts and a black span.
    make_clip(os.path.join(folder, "a-cuts.mp4"),
              [("testsrc2", 2), ("color=c=black", 1), ("mandelbrot", 1.5)])
    # 2400 frames: decimated to 2000 points per series.
    make_clip(os.path.join(folder, "b-long.mp4"),
              [("testsrc", 12), ("smptebars", 12)], size="48x32", rate=100)
    # 10-bit: its thumbnails are shifted down to 8 bits.
    make_clip(os.path.join(folder, "e-10bit.mkv"),
              [("testsrc2", 1.2), ("color=c=black", 0.8)], size="90x64",
              codec=("-c:v", "ffv1", "-pix_fmt", "yuv420p10le"))
    rng = np.random.default_rng(5)
    photos = photographs()
    make_image(os.path.join(folder, "c.png"), photos[0], (120, 90), "png-rgb", rng)
    make_image(os.path.join(folder, "d.jpg"), photos[1], (120, 90), "jpeg-colour", rng)

    probe = run("stats", os.path.join(folder, "a-cuts.mp4"))
    if "built without GStreamer" in text(probe.stderr):
        skip("this lumahist was built without GStreamer")
    plain = run("stats", folder)
    check(plain.returncode == 0, f"stats on the videos: {text(plain.stderr)}")
    recs = [json.loads(line) for line in text(plain.stdout).splitlines()]
    summaries = {r["path"]: r for r in recs if r.get("summary")}
    check(len(summaries) == 3, f"{len(summaries)} summary records, not 3")
    frame_means = {(r["path"], round(r["pts"], 2)): r["mean"] / 2 ** (r["bit_depth"] - 8)
                   for r in recs if "frame" in r and not r.get("summary")}

    report = os.path.join(tmp, "videos.html")
    jsonl = os.path.join(tmp, "videos.jsonl")
    proc = run("stats", "--report", report, "--output", jsonl, folder)
    check(proc.returncode == 0, f"--report on videos: {text(proc.stderr)}")
    check(open(jsonl, "rb").read() == plain.stdout, "--report changed the records")
    html_text = open(report, encoding="utf-8").read()
    for needle in ("http://", "https://", "<link", "url(", "@import"):
        check(needle not in html_text, f"the report refers to something outside it: {needle}")
    sources = re.findall(r'src="([^"]{0,40})', html_text)
    check(sources and all(s.startswith("data:image/png;base64,") for s in sources),
          f"the report embeds something else than PNG data: {set(s[:22] for s in sources)}")
    check("default-src 'none'" in html_text and "img-src data:" in html_text,
          "the report does not forbid fetching")
    size = os.path.getsize(report)
    print(f"report of 3 videos ({sum(s['frames'] for s in summaries.values())} frames) "
          f"and 2 images: {size} bytes")
    check(size < 1_500_000, f"the report is {size} bytes")
    live_clips, merged_clips = merge_report_of_shards(tmp, folder)

    # Control characters in a video's name: written as character references,
    # &#x80; was read as Windows-1252's "€" (another name shown) and &#x1; is
    # a parse error; they are shown as U+FFFD, as a byte that is not UTF-8 is.
    odd = os.path.join(tmp, "odd-names")
    os.makedirs(odd)
    odd_name = "c1\u0080c0\u0001<&>.mp4"
    shutil.copy(os.path.join(folder, "a-cuts.mp4"), os.path.join(odd, odd_name))
    odd_report = os.path.join(tmp, "odd.html")
    proc = run("stats", "--quiet", "--report", odd_report, odd)
    odd_html = open(odd_report, encoding="utf-8").read() if proc.returncode == 0 else ""
    shown = [html.unescape(h) for h in re.findall(r"<h2>([^<]*)</h2>", odd_html)]
    check(proc.returncode == 0 and "&#x" not in odd_html and
          os.path.join(odd, "c1\ufffdc0\ufffd<&>.mp4") in shown,
          f"a video named {odd_name!r}: exit {proc.returncode}, headings {shown}")

    browser = find_chromium()
    if not browser:
        skip("the video report was checked as text; rendering needs Chromium (Debian 'chromium')")
    dom = chromium(browser, tmp, "--dump-dom", "file://" + report)
    check(dom.returncode == 0, f"chromium --dump-dom: {text(dom.stderr)[-500:]}")
    page = ReportPage()
    page.feed(text(dom.stdout))

    # The summary table: the values of the summary records.
    check(len(page.rows) == 3, f"the video table has {len(page.rows)} rows, not 3")
    for row in page.rows:
        if not check(len(row) == 10, f"a video row has {len(row)} cells: {row}"):
            continue
        path = os.path.join(folder, row[0])
        rec = summaries.get(path)
        if not check(rec is not None, f"{row[0]} in the table has no summary record"):
            continue
        mean = rec["frame_stats"]["mean"]
        seconds = {k: sum(s["end"] - s["start"] for s in rec[k]) for k in ("black", "frozen")}
        expected = [(row[1], rec["frames"], 0), (row[2], rec["duration"], 3),
                    (row[3], mean["min"], 3), (row[4], mean["mean"], 3),
                    (row[5], mean["max"], 3), (row[6], len(rec["cuts"]), 0),
                    (row[7], seconds["black"], 3), (row[8], seconds["frozen"], 3),
                    (row[9], rec["frame_stats"]["flicker"]["max"], 3)]
        for k, (shown, value, decimals) in enumerate(expected):
            check(near(shown, value, decimals),
                  f"{row[0]}: column {k + 1} shows {shown}, its record says {value}")

    # One section per video, in order, with its cuts, black spans and thumbnails.
    check([os.path.basename(s["path"] or "") for s in page.sections] ==
          ["a-cuts.mp4", "b-long.mp4", "e-10bit.mkv"],
          f"sections: {[s['path'] for s in page.sections]}")
    cut_clip = summaries.get(os.path.join(folder, "a-cuts.mp4"), {})
    check(len(cut_clip.get("cuts", [])) == 2, f"a-cuts.mp4: cuts {cut_clip.get('cuts')}, not 2")
    check(len(cut_clip.get("black", [])) == 1, f"a-cuts.mp4: black {cut_clip.get('black')}")
    for sec in page.sections:
        rec = summaries.get(os.path.join(folder, os.path.basename(sec["path"] or "")))
        if not rec:
            continue
        name = os.path.basename(sec["path"])
        check(sec["cuts"] == len(rec["cuts"]),
              f"{name}: {sec['cuts']} cut markers, {len(rec['cuts'])} cuts")
        titles = ["".join(t) for t in sec["black"]]
        want = [f"black {s['start']:.3f}\u2013{s['end']:.3f} s ({s['frames']} frame"
                f"{'' if s['frames'] == 1 else 's'})" for s in rec["black"]]
        check(titles == want, f"{name}: black spans drawn {titles}, recorded {want}")
        # Thumbnails: 8, in time order, PNGs that decode; those in the black
        # span black (Y 16), the others not.
        check(len(sec["thumbs"]) == 8, f"{name}: {len(sec['thumbs'])} thumbnails, not 8")
        times = [float("".join(c).split()[0]) for c in sec["captions"]]
        check(times == sorted(times) and len(times) == len(sec["thumbs"]),
              f"{name}: thumbnail times {times}")
        check(times and times[0] <= rec["start"] + 0.05 and
              times[-1] >= rec["start"] + rec["duration"] * 0.8,
              f"{name}: thumbnails {times} do not span {rec['start']} + {rec['duration']} s")
        # Evenly spaced from the first frame to the last, each within 1/64 of
        # the length (chosen at the end from 32 to 64 held: a rounded index
        # into 8 to 15 gave gaps of one and two steps).
        pts = [r["pts"] for r in recs if os.path.basename(r["path"]) == name and
               "frame" in r and not r.get("summary")]
        last = max(pts) if pts else None
        if last is not None and len(times) == 8:
            targets = [times[0] + (last - times[0]) * i / 7 for i in range(8)]
            off = max(abs(t - w) for t, w in zip(times, targets))
            check(off <= (last - times[0]) / 64 + 1e-6,
                  f"{name}: thumbnails at {times}, not near {[round(w, 2) for w in targets]}")
        for src, t in zip(sec["thumbs"], times):
            try:
                img = Image.open(io.BytesIO(base64.b64decode(src.split(",", 1)[1])))
                img.load()
            except Exception as e:  # noqa: BLE001 - any failure to decode is the finding
                fail(f"{name}: the thumbnail at {t} s does not decode: {e}")
                continue
            check(img.format == "PNG" and img.mode == "L" and img.width <= 128 and
                  img.height <= 96 and img.width > 0,
                  f"{name}: thumbnail {img.format} {img.mode} {img.size}")
            in_black = any(s["start"] <= t < s["end"] for s in rec["black"])
            level = np.asarray(img, dtype=np.float64).mean()
            # Box-averaged luma: the frame's mean, give or take the uneven boxes.
            frame_mean = frame_means.get((rec["path"], t))
            check(frame_mean is not None and abs(level - frame_mean) < 3,
                  f"{name}: thumbnail at {t} s has mean {level:.2f}, its frame {frame_mean}")
            check(in_black == (level < 24),
                  f"{name}: thumbnail at {t} s has mean {level:.1f} (in a black span: {in_black})")
        if rec["black"]:
            # Evenly spaced over 113 frames, one falls in the 25 black ones.
            check(any(s["start"] <= t < s["end"] for t in times for s in rec["black"]),
                  f"{name}: no thumbnail in the black span: {times}")
        # The differences as drawn: each point the largest of its run of
        # frames (runs of one below 2000 frames), 140 units high, the top at
        # ceil(1.1 x the largest); the first frame has none.
        diffs = [r["diff"] for r in recs if r.get("path") == rec["path"] and
                 "frame" in r and not r.get("summary")]
        n, m = len(diffs), min(len(diffs), 2000)
        top = math.ceil(max(d for d in diffs if d is not None) * 1.1)
        want = []
        for c in range(m):
            run_ = [d for d in diffs[c * n // m:(c + 1) * n // m] if d is not None]
            if run_:
                want.append(140 * (1 - max(run_) / top))
        ys = [float(y) for y in re.findall(r"[ML][-0-9.]+ ([-0-9.]+)", sec.get("diff") or "")]
        check(len(ys) == len(want) and all(abs(a - b) <= 0.051 for a, b in zip(ys, want)),
              f"{name}: {len(ys)} differences drawn, not the {len(want)} largest of their runs")
        # Every frame a point, or LHT_VIDEO_REPORT_MAX_POINTS and a note.
        points = len(re.findall(r"[ML]", sec["median"] or ""))
        decimated = any("drawn as" in "".join(n) for n in sec["notes"])
        if rec["frames"] > 2000:
            check(points == 2000 and decimated,
                  f"{name}: {rec['frames']} frames drawn as {points} points, note {decimated}")
        else:
            check(points == rec["frames"] and not decimated,
                  f"{name}: {rec['frames']} frames drawn as {points} points")

    check(all(sec["incomplete"] is None for sec in page.sections),
          "a complete video is marked incomplete")

    # A video cut in half: exit 1, its section says why, with the frames before.
    whole = os.path.join(tmp, "whole.mkv")
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-i", os.path.join(folder, "a-cuts.mp4"),
                    "-c", "copy", whole], check=True)
    data = open(whole, "rb").read()
    cut = os.path.join(tmp, "cut", "half.mkv")
    os.makedirs(os.path.dirname(cut))
    open(cut, "wb").write(data[:len(data) // 2])
    cut_report = os.path.join(tmp, "cut.html")
    proc = run("stats", "--report", cut_report, cut)
    rec = next((r for r in map(json.loads, text(proc.stdout).splitlines()) if r.get("summary")),
               None)
    if check(proc.returncode == 1 and rec and not rec["complete"] and os.path.exists(cut_report),
             f"a cut video: exit {proc.returncode}, summary {rec and rec.get('error')}, "
             f"report written {os.path.exists(cut_report)}"):
        cut_page = ReportPage()
        cut_page.feed(text(chromium(browser, tmp, "--dump-dom", "file://" + cut_report).stdout))
        said = cut_page.sections and "".join(cut_page.sections[0]["incomplete"] or [])
        check(said == "Incomplete: " + rec["error"], f"a cut video's section says {said!r}")
        check(len(cut_page.rows) == 1 and cut_page.rows[0][1] == str(rec["frames"]),
              f"a cut video's row: {cut_page.rows}")
        # merge --report of its records says the same.
        cut_records = os.path.join(tmp, "cut.jsonl")
        open(cut_records, "wb").write(proc.stdout)
        merged_cut = os.path.join(tmp, "cut-merged.html")
        run("merge", "--report", merged_cut, cut_records)
        merged_page = ReportPage()
        merged_page.feed(text(chromium(browser, tmp, "--dump-dom",
                                       "file://" + merged_cut).stdout))
        said = merged_page.sections and "".join(merged_page.sections[0]["incomplete"] or [])
        check(said == "Incomplete: " + rec["error"],
              f"a cut video's section, drawn by merge, says {said!r}")

    # merge --report's page of the shards, rendered: the table and each
    # section's cuts, spans, bands and differences as stats --report's, no
    # thumbnails and a note saying why.
    rendered = {}
    for name, page_file in (("stats", live_clips), ("merge", merged_clips)):
        rendered[name] = ReportPage()
        rendered[name].feed(text(chromium(browser, tmp, "--dump-dom",
                                          "file://" + page_file).stdout))
    check(sorted(rendered["merge"].rows) == sorted(rendered["stats"].rows) and
          len(rendered["stats"].rows) == 3,
          f"rendered video tables: merge {rendered['merge'].rows}, "
          f"stats {rendered['stats'].rows}")
    by_path = {name: {sec["path"]: sec for sec in page.sections}
               for name, page in rendered.items()}
    check(sorted(by_path["merge"]) == sorted(by_path["stats"]) and len(by_path["stats"]) == 3,
          f"rendered sections: merge {sorted(by_path['merge'])}, stats {sorted(by_path['stats'])}")
    for path, sec in by_path["stats"].items():
        other = by_path["merge"].get(path)
        if not check(other is not None, f"{path}: no section drawn by merge"):
            continue
        for key in ("cuts", "black", "median", "diff", "incomplete"):
            check(other.get(key) == sec.get(key),
                  f"{path}: merge draws its {key} otherwise than stats")
        check(sec["thumbs"] and not other["thumbs"] and
              any("No thumbnails" in "".join(n) for n in other["notes"]),
              f"{path}: merge's section shows {len(other['thumbs'])} thumbnails, notes "
              f"{['' .join(n)[:40] for n in other['notes']]}")

    # The images keep their table (videos are rows of it as well, by their
    # summed histograms).
    body = text(dom.stdout).split('id="images"', 1)[-1].split("<tbody>", 1)[-1]
    body = body.split("</tbody>", 1)[0]
    check(body.count("<tr") == 5, f"the image table has {body.count('<tr')} rows, not 5")
    shot = os.path.join(tmp, "videos.png")
    proc = chromium(browser, tmp, "--window-size=1280,1600", f"--screenshot={shot}",
                    "file://" + report)
    if check(proc.returncode == 0 and os.path.exists(shot), "chromium --screenshot (videos)"):
        pixels = np.asarray(Image.open(shot).convert("RGB")).reshape(-1, 3)
        band = np.all(pixels == (0x7f, 0x9f, 0xd6), axis=1).mean()
        print(f"screenshot: P10-P90 bands {band:.1%} of the pixels")
        check(band > 0.01, "no luma bands in the screenshot")
        keep = os.environ.get("LUMAHIST_KEEP_SCREENSHOT")
        if keep:
            shutil.copy(shot, keep.replace(".png", "-video.png"))


# --------------------------------------------------------------------------
# One writer a records file

LOCKED = b"another lumahist run is writing it"


def group_writers(tmp):
    """A second `stats -o FILE` while a first writes FILE is refused before
    any work (one line naming FILE, exit 1), with --skip-existing too, and
    the first's records come out whole and right.  Before the lock, the
    second emptied the file under the first (or, with --skip-existing, both
    redid every file) and both exited 0 with their records mixed."""
    folder = big_folder(tmp, "big", 60, (1024, 768), ["png-rgb", "jpeg-colour", "png-gray16"])
    full = run("stats", "--jobs", "2", folder)
    check(full.returncode == 0, f"full run: {text(full.stderr)}")
    for extra in ([], ["--skip-existing"], ["--skip-existing", "--dataset"]):
        out = os.path.join(tmp, f"shared{len(extra)}.jsonl")
        # The first run's last input is a FIFO no one writes until the second
        # has run: the first still holds FILE then, however fast it read the
        # folder (on a loaded machine it had ended, and the second, finding
        # FILE free, ran: exit 0).
        hold = os.path.join(tmp, f"hold{len(extra)}.fifo")
        os.mkfifo(hold)
        first = subprocess.Popen([LUMAHIST, "stats", "--decoder", "cpu", "--jobs", "1",
                                  "--fifo-wait", "0", "--output", out, folder, hold],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        started = wait_for_lines(out, 3, first) and first.poll() is None
        second = run("stats", "--jobs", "1", "--output", out, *extra, folder, timeout=60)
        # Then the FIFO is opened and closed with nothing in it: an empty file.
        end = time.time() + 60
        while first.poll() is None and time.time() < end:
            try:
                os.close(os.open(hold, os.O_WRONLY | os.O_NONBLOCK))
                break
            except OSError:
                time.sleep(0.01)
        _, first_err = first.communicate(timeout=120)
        label = "a second run" + (" with " + " ".join(extra) if extra else "")
        if not check(started, f"{label}: the first run ended before the second began"):
            continue
        err_lines = text(second.stderr).splitlines()
        check(second.returncode == 1 and len(err_lines) == 1 and LOCKED in second.stderr and
              out.encode() in second.stderr,
              f"{label}: exit {second.returncode}, {text(second.stderr)!r}")
        with open(out, "rb") as f:
            data = f.read()
        check(first.returncode == 1 and data == full.stdout and
              text(first_err) == f"lumahist: {hold}: empty file\n",
              f"{label}: the first run (exit {first.returncode}, {text(first_err)!r}) wrote "
              f"{len(data.splitlines())} lines, not those of a run alone")

    # Four shards started together into one file: one writes it, the others
    # are refused (or find it done and write theirs in turn); every line is
    # a whole record of a run that exited 0.
    tiny = os.path.join(tmp, "tiny")
    os.makedirs(tiny)
    rng = np.random.default_rng(5)
    for i in range(400):
        Image.fromarray(rng.integers(0, 256, (8, 8), dtype=np.uint8)).save(
            os.path.join(tiny, f"{i:04d}.png"), compress_level=1)
    out = os.path.join(tmp, "four.jsonl")
    procs = [subprocess.Popen([LUMAHIST, "stats", "--quiet", "--decoder", "cpu", "--jobs", "1",
                               "--shard", f"{i}/4", "-o", out, tiny],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE) for i in range(4)]
    results = [(p.wait(timeout=120), p.stderr.read()) for p in procs]
    for p in procs:
        p.stdout.close()
        p.stderr.close()
    for i, (status, err) in enumerate(results):
        check(status == 0 or (status == 1 and LOCKED in err),
              f"shard {i}/4: exit {status} {text(err)!r}")
    with open(out, "rb") as f:
        lines = f.read().splitlines()
    shards = {}
    for i in range(4):
        shards[i] = run("stats", "--quiet", "--shard", f"{i}/4", tiny).stdout.splitlines()
    owners = [i for i, (status, _) in enumerate(results) if status == 0]
    check(any(lines == shards[i] for i in owners),
          f"four shards into one file: {len(lines)} lines, not those of one of shards {owners}")

    # --output a FIFO, or /dev/stdout a pipe, whose reader leaves early (head):
    # the run ends as `stats | head` does.  It was opened for reading and
    # writing, its own reader, and waited forever once the pipe was full.
    fifo = os.path.join(tmp, "records.fifo")
    os.mkfifo(fifo)
    for target in (fifo, "/dev/stdout"):
        proc = subprocess.Popen([LUMAHIST, "stats", "--quiet", "--decoder", "cpu", "-o", target,
                                 tiny], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        reader = open(fifo, "rb") if target == fifo else proc.stdout
        first = reader.read(100)
        reader.close()
        try:
            status = proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            status = proc.wait()
            fail(f"-o {target} read by a reader that left: still running after 30 s")
        proc.stderr.close()
        if target == fifo:
            proc.stdout.close()
        check(first.startswith(b'{"path":') and status in (-signal.SIGPIPE, 1),
              f"-o {target} read by a reader that left: exit {status}, read {first[:20]!r}")
    print(f"writers: second runs against a first; four shards into one file, {owners} exit 0")


# --------------------------------------------------------------------------
# A video stopped by a signal

def y4m_frames(n, w=64, h=48, seed=1):
    """n frames of a 4:2:0 YUV4MPEG2 clip, each with its FRAME header."""
    rng = np.random.default_rng(seed)
    return [b"FRAME\n" + rng.integers(0, 256, (h, w), dtype=np.uint8).tobytes() +
            bytes([128]) * (w * h // 2) for _ in range(n)]


def y4m_header(w=64, h=48):
    return f"YUV4MPEG2 W{w} H{h} F25:1 Ip A1:1 C420\n".encode()


def interrupt_video(tmp, names, video, sig, label):
    """Runs stats -o over names (cwd tmp) with video a FIFO fed frame by
    frame, sends sig once the video's frames are coming, and checks what the
    run says and leaves, then that --skip-existing finishes it as one run."""
    frames = y4m_frames(40)
    whole = os.path.join(tmp, "whole")
    os.makedirs(whole, exist_ok=True)
    # The reference: the same files, the video a regular file.
    for name in names:
        if name != video:
            shutil.copy(os.path.join(tmp, name), os.path.join(whole, name))
    with open(os.path.join(whole, video), "wb") as f:
        f.write(y4m_header() + b"".join(frames))
    full = run("stats", "--jobs", "1", *names, cwd=whole)
    if not check(full.returncode == 0, f"{label}: full run: {text(full.stderr)}"):
        return
    images_before = names.index(video)
    fifo = os.path.join(tmp, video)
    if os.path.exists(fifo):
        os.remove(fifo)
    os.mkfifo(fifo)
    out = os.path.join(tmp, f"video-{label}.jsonl")
    proc = subprocess.Popen([LUMAHIST, "stats", "--decoder", "cpu", "--jobs", "1", "-o", out,
                             *names],
                            cwd=tmp, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    feed = open(fifo, "wb")
    try:
        feed.write(y4m_header() + b"".join(frames[:10]))
        feed.flush()
        # A decoder may hold a frame or two back: 5 of the 10 are enough.
        coming = wait_for_lines(out, images_before + 5, proc)
        proc.send_signal(sig)
        time.sleep(0.3)
        # One more frame ends the wait for it; the run stops after it.
        for frame in frames[10:]:
            feed.write(frame)
            feed.flush()
    except BrokenPipeError:
        pass
    finally:
        try:
            feed.close()
        except BrokenPipeError:
            pass
    _, stderr = proc.communicate(timeout=60)
    if not check(coming, f"{label}: the video's frames did not come: {text(stderr)!r}"):
        return
    check(proc.returncode == 128 + sig, f"{label}: exit {proc.returncode}: {text(stderr)!r}")
    # The files whose records are complete: the images before the video.
    said = f"stopped by {label}: the records of {images_before} files written to {out}"
    check(said.encode() in stderr, f"{label}: said {text(stderr)!r}, not {said!r}")
    with open(out, "rb") as f:
        got = records(f.read())
    paths = [r.get("path") for r in got]
    tail = paths[images_before:]
    check(paths[:images_before] == names[:images_before] and tail and
          all(p == video for p in tail) and not any(r.get("summary") for r in got),
          f"{label}: the records are of {paths}: the images before the video, then the "
          f"video's frames without their summary, expected")
    # Resumed: the video (now whole) and what follows it, as one run writes them.
    os.remove(fifo)
    shutil.copy(os.path.join(whole, video), fifo)
    resumed = run("stats", "--jobs", "1", "-o", out, "--skip-existing", *names, cwd=tmp)
    with open(out, "rb") as f:
        check(resumed.returncode == 0 and f.read() == full.stdout,
              f"{label}: resumed ({resumed.returncode}, {text(resumed.stderr)!r}), the file "
              f"is not that of one run")


def group_interrupt_video(tmp):
    probe = os.path.join(tmp, "probe.y4m")
    with open(probe, "wb") as f:
        f.write(y4m_header() + b"".join(y4m_frames(2)))
    proc = run("stats", "--quiet", probe)
    if proc.returncode != 0 or b'"summary":true' not in proc.stdout:
        skip(f"stats cannot read a YUV4MPEG2 clip here (GStreamer's y4mdec): "
             f"{text(proc.stderr)!r}")
    rng = np.random.default_rng(9)
    names = []
    for name in ("a0.png", "a1.png", "a2.png", "c0.png", "c1.png", "c2.png", "c3.png"):
        Image.fromarray(rng.integers(0, 256, (40, 60), dtype=np.uint8)).save(
            os.path.join(tmp, name))
        names.append(name)
    # Between images: stopped inside the pipeline's emit; nothing after it
    # may be written (its frames would stay inside the file, not at its end
    # where --skip-existing drops them), and the images queued after it are
    # not counted.
    interrupt_video(tmp, names[:3] + ["b.y4m"] + names[3:], "b.y4m", signal.SIGINT, "SIGINT")
    # After the last image: the signals are caught again for it; SIGHUP as
    # SIGTERM.
    interrupt_video(tmp, names[:3] + ["z.y4m"], "z.y4m", signal.SIGHUP, "SIGHUP")


def image_kind(path):
    with open(path, "rb") as f:
        head = f.read(8)
    return "png" if head == b"\x89PNG\r\n\x1a\n" else "jpeg" if head[:2] == b"\xff\xd8" else None


def outputs_from_pipes(tmp):
    """An image that comes through standard input or a pipe is written under
    its name plus the extension of what it held: OUT/stdin.png, OUT/stdin.jpg
    (it was OUT/stdin, which no viewer opens), OUT/63.jpg for /dev/fd/63."""
    png = os.path.join(SAMPLES, "camera-gray.png")
    jpeg = os.path.join(SAMPLES, "fog-pier-gray.jpg")
    for command in ("equalize", "clahe", "overlay"):
        for source, kind, name in ((png, "png", "stdin.png"), (jpeg, "jpeg", "stdin.jpg")):
            out = os.path.join(tmp, f"{command}-{kind}-pipe")
            with open(source, "rb") as f:
                proc = run(command, "--out", out, "-", input=f.read())
            made = sorted(os.listdir(out)) if os.path.isdir(out) else None
            check(proc.returncode == 0 and made == [name] and
                  image_kind(os.path.join(out, name)) == kind,
                  f"{command} of a {kind} on a pipe: exit {proc.returncode}, wrote {made}, "
                  f"{text(proc.stderr)!r}")
        # Standard input redirected from a file: named alike.
        out = os.path.join(tmp, f"{command}-redirected")
        with open(jpeg, "rb") as f:
            proc = run(command, "--out", out, "-", stdin=f)
        made = sorted(os.listdir(out)) if os.path.isdir(out) else None
        check(proc.returncode == 0 and made == ["stdin.jpg"],
              f"{command} - < a JPEG: exit {proc.returncode}, wrote {made}")
    # A pipe named otherwise (bash's <(...)): its name and the extension.
    out = os.path.join(tmp, "process-substitution")
    proc = subprocess.run(["bash", "-c", 'exec "$0" equalize --out "$1" <(cat "$2")', LUMAHIST,
                           out, png], capture_output=True)
    made = os.listdir(out) if os.path.isdir(out) else []
    check(proc.returncode == 0 and len(made) == 1 and re.fullmatch(r"\d+\.png", made[0]),
          f"equalize <(cat a.png): exit {proc.returncode}, wrote {made}, {text(proc.stderr)!r}")
    # --skip-existing does not skip what a pipe brings: it may be another image.
    out = os.path.join(tmp, "equalize-png-pipe")
    first = os.path.join(out, "stdin.png")
    before = os.path.getmtime(first) if os.path.exists(first) else None
    with open(jpeg, "rb") as f:
        proc = run("equalize", "--skip-existing", "--out", out, "-", input=f.read())
    check(proc.returncode == 0 and sorted(os.listdir(out)) == ["stdin.jpg", "stdin.png"] and
          os.path.getmtime(first) == before,
          f"equalize --skip-existing of a JPEG on a pipe: exit {proc.returncode}, "
          f"{sorted(os.listdir(out))}")
    # A run stopped while it reads standard input: a new run cannot read that
    # image again, so --skip-existing is suggested only when a file was named
    # too (the line's end was the same for both).
    for inputs, hint in ((["-"], False), ([png, "-"], True)):
        label = f"equalize {' '.join(os.path.basename(i) for i in inputs)} stopped"
        proc = subprocess.Popen([LUMAHIST, "equalize", "--verbose", "--out",
                                 os.path.join(tmp, "stopped-on-stdin"), *inputs],
                                stdin=subprocess.PIPE, stderr=subprocess.PIPE)
        proc.stdin.write(file_bytes(png)[:1000])
        proc.stdin.flush()
        first = proc.stderr.readline()  # the backend it uses: the run has begun
        proc.send_signal(signal.SIGINT)
        stderr = first + proc.stderr.read()
        proc.wait(timeout=60)
        proc.stdin.close()
        last = text(stderr).splitlines()[-1:]
        check(proc.returncode == 130 and last and last[0].startswith("lumahist: stopped by SIGINT")
              and ("--skip-existing" in last[0]) == hint,
              f"{label}: exit {proc.returncode}, last line {last!r}")
    # A file named 'stdin' (no extension) goes to OUT/stdin, '-' to
    # OUT/stdin.png or .jpg: no clash, and both are written (the planning
    # took '-' for OUT/stdin and refused the second).  An input OUT/stdin is
    # not the output of '-' either: only itself is refused.
    folder = os.path.join(tmp, "named-stdin")
    os.makedirs(folder)
    named = os.path.join(folder, "stdin")
    shutil.copy(png, named)
    for command in ("equalize", "clahe", "overlay"):
        out = os.path.join(tmp, f"{command}-named-stdin")
        with open(jpeg, "rb") as f:
            proc = run(command, "--out", out, named, "-", input=f.read())
        made = sorted(os.listdir(out)) if os.path.isdir(out) else []
        check(proc.returncode == 0 and made == ["stdin", "stdin.jpg"] and
              image_kind(os.path.join(out, "stdin")) == "png" and
              image_kind(os.path.join(out, "stdin.jpg")) == "jpeg",
              f"{command} of a file 'stdin' and '-': exit {proc.returncode}, wrote {made}, "
              f"{text(proc.stderr)!r}")
    inside = os.path.join(folder, "stdin")
    with open(jpeg, "rb") as f:
        proc = run("equalize", "--out", folder, inside, "-", input=f.read())
    check(proc.returncode == 1 and
          text(proc.stderr) == f"lumahist: {inside}: its output {inside} is the input {inside}; "
                               f"not overwritten, skipped\n" and
          file_bytes(inside) == file_bytes(png) and
          sorted(os.listdir(folder)) == ["stdin", "stdin.jpg"],
          f"equalize --out DIR DIR/stdin -: exit {proc.returncode}, "
          f"{sorted(os.listdir(folder))}, {text(proc.stderr)!r}")
    # --out - is refused: images go into a folder ("-" is stdout to stats -o).
    proc = run("equalize", "--out", "-", png, cwd=tmp)
    check(proc.returncode == 2 and b"--out -" in proc.stderr and
          not os.path.exists(os.path.join(tmp, "-")),
          f"equalize --out -: exit {proc.returncode}, {text(proc.stderr)!r}, a folder '-': "
          f"{os.path.exists(os.path.join(tmp, '-'))}")
    # --global and --save-lut read each input twice: a pipe is refused (its
    # second read found it empty), a file on standard input is not.
    for option in (["--global"], ["--save-lut", os.path.join(tmp, "pipe.lut")]):
        out = os.path.join(tmp, "one-lut-" + option[0].strip("-"))
        extra = [png] if option == ["--global"] else []
        with open(jpeg, "rb") as f:
            proc = run("equalize", *option, "--out", out, "-", *extra, input=f.read())
        made = sorted(os.listdir(out)) if os.path.isdir(out) else []
        check(proc.returncode == 1 and
              text(proc.stderr).startswith("lumahist: /dev/stdin: a pipe or FIFO is read once") and
              made == [os.path.basename(p) for p in extra],
              f"equalize {option[0]} of a pipe: exit {proc.returncode}, wrote {made}, "
              f"{text(proc.stderr)!r}")
        with open(jpeg, "rb") as f:
            proc = run("equalize", *option, "--out", out + "-file", "-", *extra, stdin=f)
        check(proc.returncode == 0 and "stdin.jpg" in os.listdir(out + "-file"),
              f"equalize {option[0]} - < a JPEG: exit {proc.returncode}, {text(proc.stderr)!r}")
    for command in ("equalize", "clahe", "overlay"):
        proc = run(command, "--help")
        check(b"DIR/stdin.png" in proc.stdout, f"{command} --help does not say where '-' goes")


def file_bytes(path):
    with open(path, "rb") as f:
        return f.read()


def leftover_temporaries(folder):
    return [os.path.join(d, f) for d, _, files in os.walk(folder) for f in files
            if f.startswith(".")]


def one_file_two_names(tmp):
    """Two inputs whose outputs are one file under two names: the later
    input in the walk's order is refused with one line (exit 1), whatever
    --jobs is and whichever is done first; the first output is kept whole
    and the other inputs are written.  An output named by its content (-)
    yields to the file named so.  A case-insensitive file system (A.png,
    a.png), where only the file system knows and the second put in place is
    refused, cannot be mounted here (no casefold in the kernel, no vfat;
    fuse2fs ignores casefold)."""
    rng = np.random.default_rng(7)
    photos = photographs()
    top = os.path.join(tmp, "clash-in")
    n = 12
    for i in range(n):
        for folder in ("", "sub"):
            make_image(os.path.join(top, folder, f"{i:02d}.png"), photos[i % len(photos)],
                       (96, 64), "png-rgb", rng)
    make_image(os.path.join(top, "zz-alone.png"), photos[0], (96, 64), "png-gray", rng)
    # What each input gives alone, to know which one an output is.
    alone = {}
    for i in range(n):
        for folder in ("", "sub"):
            name = os.path.join(folder, f"{i:02d}.png")
            out = os.path.join(tmp, "clash-alone", folder or "top")
            proc = run("equalize", "--out", out, os.path.join(top, name))
            check(proc.returncode == 0, f"equalize {name}: {text(proc.stderr)}")
            alone[name] = file_bytes(os.path.join(out, f"{i:02d}.png"))
    for jobs in ("1", "4"):
        out = os.path.join(tmp, f"clash-out-{jobs}")
        os.makedirs(out)
        os.symlink(".", os.path.join(out, "sub"))  # OUT/sub/NAME is OUT/NAME
        proc = run("equalize", "--jobs", jobs, "--out", out, top)
        lines = text(proc.stderr).splitlines()
        # Refused before any input is read, so not as the threads finish
        # (the second put in place was: at --jobs 4, and on a GPU host even
        # at --jobs 1, either input's output was kept from run to run).
        expected = sorted(f"lumahist: {top}/sub/{i:02d}.png: its output {out}/sub/{i:02d}.png "
                          f"is also that of {top}/{i:02d}.png; skipped" for i in range(n))
        check(proc.returncode == 1 and sorted(lines) == expected,
              f"--jobs {jobs}, a folder link under --out: exit {proc.returncode}, "
              f"{len(lines)} lines: {lines[:3]}")
        for i in range(n):
            name = f"{i:02d}.png"
            check(file_bytes(os.path.join(out, name)) == alone[name],
                  f"--jobs {jobs}: {name} is not the output of the first input, {top}/{name}")
        check(os.path.isfile(os.path.join(out, "zz-alone.png")),
              f"--jobs {jobs}: the input with no clash was not written")
        check(not leftover_temporaries(out), f"--jobs {jobs}: {leftover_temporaries(out)} left")
    # Videos are put in place the same way, after the images.
    videos = os.path.join(tmp, "clash-videos")
    for folder, seed in (("", 1), ("sub", 2)):
        os.makedirs(os.path.join(videos, folder), exist_ok=True)
        with open(os.path.join(videos, folder, "clip.y4m"), "wb") as f:
            f.write(y4m_header() + b"".join(y4m_frames(3, seed=seed)))
    probe = run("equalize", "--out", os.path.join(tmp, "clash-video-probe"),
                os.path.join(videos, "clip.y4m"))
    if probe.returncode != 0:
        print(f"note: no video clash checked: equalize of a y4m clip fails here "
              f"({text(probe.stderr).strip()})")
    else:
        out = os.path.join(tmp, "clash-video-out")
        os.makedirs(out)
        os.symlink(".", os.path.join(out, "sub"))
        proc = run("equalize", "--out", out, videos)
        check(proc.returncode == 1 and
              text(proc.stderr).startswith(f"lumahist: {videos}/sub/clip.y4m: its output ") and
              text(proc.stderr).count("\n") == 1 and
              file_bytes(os.path.join(out, "clip.y4m")) ==
              file_bytes(os.path.join(tmp, "clash-video-probe", "clip.y4m")),
              f"two videos, one output: exit {proc.returncode}, {text(proc.stderr)!r}")
    # Standard input beside a file named as its output (stdin.png), before
    # or after it: the file's output is kept, whichever is read first.
    named = os.path.join(tmp, "stdin.png")
    shutil.copy(os.path.join(top, "00.png"), named)
    for jobs, order in (("1", (named, "-")), ("1", ("-", named)), ("4", ("-", named))):
        out = os.path.join(tmp, "clash-stdin")
        shutil.rmtree(out, ignore_errors=True)
        proc = run("equalize", "--jobs", jobs, "--out", out, *order, os.path.join(top, "01.png"),
                   input=file_bytes(os.path.join(top, "sub", "00.png")))
        check(proc.returncode == 1 and
              text(proc.stderr) == f"lumahist: /dev/stdin: its output {out}/stdin.png is also "
                                    f"that of {named}; skipped\n" and
              file_bytes(os.path.join(out, "stdin.png")) == alone["00.png"] and
              os.path.isfile(os.path.join(out, "01.png")),
              f"stdin.png and - ({order}, --jobs {jobs}): exit {proc.returncode}, "
              f"{text(proc.stderr)!r}")
    # "-" twice: its output is named for what it holds.
    out = os.path.join(tmp, "clash-stdin-twice")
    proc = run("equalize", "--out", out, "-", "-", input=file_bytes(os.path.join(top, "00.png")))
    check(proc.returncode == 1 and
          text(proc.stderr) == f"lumahist: /dev/stdin: its output {out}/stdin.png or .jpg is "
                               f"also that of /dev/stdin; skipped\n",
          f"- twice: exit {proc.returncode}, {text(proc.stderr)!r}")
    # One name twice, and two folders' files in one --out: refused before
    # any input is read, as they were.
    other = os.path.join(tmp, "clash-other")
    shutil.copytree(os.path.join(top, "sub"), other)
    for args, clashes, what in (
            ([os.path.join(top, "00.png"), os.path.join(top, ".", "00.png")], 1,
             "one file named twice"),
            ([os.path.join(top, "sub"), other], n, "two folders into one --out")):
        out = os.path.join(tmp, "clash-planned-" + what.replace(" ", "-"))
        proc = run("equalize", "--out", out, *args)
        check(proc.returncode == 1 and text(proc.stderr).count("is also that of") == clashes,
              f"{what}: exit {proc.returncode}, {text(proc.stderr)[:300]!r}")


def group_outputs(tmp):
    outputs_from_pipes(tmp)
    one_file_two_names(tmp)


GROUPS = {
    "pipeline": group_pipeline,
    "progress": group_progress,
    "shard": group_shard,
    "parallel": group_parallel,
    "resume": group_resume,
    "devices": group_devices,
    "report": group_report,
    "report-video": group_report_video,
    "writers": group_writers,
    "interrupt-video": group_interrupt_video,
    "outputs": group_outputs,
}


def main():
    # The tool leaves a stop signal ignored if it starts so (nohup, a job a
    # shell starts in the background): the ones these tests send must reach
    # it whatever this runner was started with.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    for stop in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(stop, signal.SIG_DFL)
    global LUMAHIST, SAMPLES
    if len(sys.argv) != 4 or sys.argv[3] not in GROUPS:
        print(__doc__)
        sys.exit(2)
    LUMAHIST, SAMPLES, group = os.path.abspath(sys.argv[1]), sys.argv[2], sys.argv[3]
    tmp = tempfile.mkdtemp(prefix=f"lumahist-batch-{group}-")
    try:
        GROUPS[group](tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if FAILURES:
        print(f"{len(FAILURES)} check(s) failed")
        sys.exit(1)
    print("all checks passed")


if __name__ == "__main__":
    main()
