#!/usr/bin/env python3
"""batch-bench.py: end-to-end throughput of `lumahist stats` and `lumahist
equalize` on a folder of real-size photographs, against a Python OpenCV loop
and ImageMagick, in one run on the same cores.

Usage: batch-bench.py [--lumahist PATH] [--samples DIR] [--count N] [--repeat K]
                      [--jobs N] [--folder DIR] [--magick-count N] [--csv FILE]
                      [--only stats|equalize] [--runs R] [--jpeg-only]

The folder (default: a temporary one, removed at the end) is filled with
--count (default 200) crops of the photographs in samples/, upscaled to
1920x1080, 2560x1440 or 3840x2160: three JPEGs (quality 90, 4:2:0) for every
PNG (RGB, zlib level 1), or, with --jpeg-only, JPEGs alone (the GPU decoder's
case: nvJPEG takes JPEGs, PNGs stay on the CPU).  A --folder that already
holds images is used as it is (--jpeg-only refuses one with PNGs).  --repeat
K (default 1) adds K - 1 hard links to each, so that a long run's throughput
shows without start-up costs (CUDA's initialisation takes about 0.4 s).
Every contender reads the same files after one pass that puts them in the
page cache:

  lumahist stats      --jobs N (all cores) and --jobs 1: decode (luma only for
                      JPEG) + histogram + statistics + percentiles, jsonl out
                      (to a file, read after the clock stops).  Where lumahist
                      has --decoder, --jobs N runs twice: --decoder gpu
                      (nvJPEG; only if one JPEG decoded with it says "nvjpeg..."
                      in its record's "decoder", else a line says why not) and
                      --decoder cpu (libjpeg-turbo, the path before nvJPEG),
                      and --jobs 1 takes --decoder cpu; each row says which
                      decoders its records name, and which --decoder auto
                      picks is printed.  A lumahist without --decoder gets
                      the rows of before: --jobs N and --jobs 1, decoder
                      unnamed.
  OpenCV stats loop   for each file: cv2.imread(IMREAD_GRAYSCALE) + calcHist,
                      in one process (the loop), and in N processes
  torchvision anchor  the batched GPU decode alone, where torch and
                      torchvision import and torch.cuda.is_available() (in a
                      child process, so that this one holds no CUDA context):
                      the folder's JPEGs only (a mixed folder's PNGs are left
                      out, so rates are compared per image) read with
                      torchvision.io.read_file, timed apart and not in the
                      rate, then decode_jpeg(list of 64, mode GRAY,
                      device="cuda") over all of them, torch.cuda.synchronize()
                      before the clock stops, after one batch to warm up
  lumahist equalize   --jobs N and --jobs 1, written under a folder
  OpenCV equalize     imread + YCrCb + equalizeHist on Y + back to BGR +
                      imwrite, one process and N processes
  ImageMagick         `convert IN -equalize OUT` per file (its own threads), on
                      --magick-count files (default 40): it is slow

The all-core runs (lumahist --jobs N, OpenCV in N processes, torchvision) are
timed --runs times (default 3) and their median counts; the one-core runs once.
--only times one command and its own contenders (the other half takes minutes
on a long folder).  It prints images/s, the ratios the targets name (stats >= 2x and equalize >=
1.5x the OpenCV loop, stats on the CPU decoder where there is a choice; >= 10x
scaling with 16 cores, beside OpenCV's own
scaling in independent processes as what the host allows), and, on a GPU, the share
of the wall time the GPU spent on lumahist's work (target < 5 %).  That comes
from lumahist --timing's GPU time line: CUDA events around each call's
kernels and frame copies (lh_context_device_time), summed over the contexts
and divided by the wall time; streams that overlap are counted twice, so it
is an upper bound, but a precise one.  The verdict is on the kernels, the
GPU's work (nvidia-smi's utilization.gpu counts kernels too).  The frames'
copies go over the host link at its rate, whatever the GPU does: their share,
bytes and rate are printed beside it, with the sum of both.  Secondary
figures: nvidia-smi's utilization.gpu (the part of each 100 ms sample in
which any kernel ran, averaged over the run: coarse) and the time the
analysis threads spent inside the library (their memcpys into pinned staging
and their waits included: a loose upper bound).

GPU decoding's ratios: stats with --decoder gpu against OpenCV in N
processes (target >= 3x on --jpeg-only, >= 2x on the mixed folder), against
torchvision's decode alone, images per second each (target >= 1.0x), and
against --decoder cpu.  From --timing's "host CPU time" line, the host CPU
(user + system) per image of both decoder rows, and the GPU row's against the
CPU row's decode time per image (its "decoding X s (summed over threads)"
over its images): target <= 1/4, per JPEG image, so judged on --jpeg-only
(PNGs decode on the CPU in both rows).  --csv has a line per row, the new
ones included.

GPU encoding: where `lumahist equalize` decodes, equalizes and encodes JPEGs
on the GPU (nvJPEG; probed on one JPEG), its all-core row is timed with
--decoder gpu and again with --decoder cpu, --jobs 1 takes --decoder cpu,
and the ratio against OpenCV's equalize in N processes (YCrCb equalizeHist
+ imwrite) is the GPU row's: target >= 2.5x on --jpeg-only.
"""
import argparse
import collections
import concurrent.futures
import multiprocessing
import threading
import os
import re
import shutil
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

try:
    import cv2
except ImportError:
    cv2 = None

SIZES = [(1920, 1080), (2560, 1440), (3840, 2160)]

# torchvision's anchor decodes this many JPEGs per decode_jpeg call: a list
# is one batched nvJPEG decode.
TORCH_BATCH = 64

# OpenCV's own threads, started by the loops in this process, would be forked
# in the middle of their work and deadlock the children: pools are spawned.
SPAWN = multiprocessing.get_context("spawn")


def find_lumahist(top):
    for build in ("build", "builddir", "_build"):
        path = os.path.join(top, build, "src", "tool", "lumahist")
        if os.access(path, os.X_OK):
            return path
    return shutil.which("lumahist")


# --------------------------------------------------------------------------
# The folder of images

def make_one(job):
    index, photo_path, out_dir, seed, jpeg_only = job
    rng = np.random.default_rng(seed + index)
    with Image.open(photo_path) as img:
        if img.mode in ("I;16", "I"):
            img = Image.fromarray((np.asarray(img) >> 8).astype(np.uint8))
        photo = img.convert("RGB")
    w, h = photo.size
    size = SIZES[index % len(SIZES)]
    # A crop with the target's aspect ratio, then upscaled (Lanczos).
    aspect = size[0] / size[1]
    cw = int(min(w, h * aspect) * rng.uniform(0.6, 1.0))
    ch = int(cw / aspect)
    x, y = int(rng.integers(0, w - cw + 1)), int(rng.integers(0, h - ch + 1))
    img = photo.crop((x, y, x + cw, y + ch)).resize(size, Image.LANCZOS)
    if index % 4 == 3 and not jpeg_only:
        path = os.path.join(out_dir, f"img{index:04d}.png")
        img.save(path, "PNG", compress_level=1)
    else:
        path = os.path.join(out_dir, f"img{index:04d}.jpg")
        # 4:2:0 is Pillow's default at this quality; said, so that the GPU
        # decoder's figures stay on the subsampling they were measured on.
        img.save(path, "JPEG", quality=90, subsampling="4:2:0")
    return path


def make_folder(samples, folder, count, jobs, jpeg_only=False):
    photos = sorted(os.path.join(samples, f) for f in os.listdir(samples)
                    if f.lower().endswith((".jpg", ".jpeg", ".png")))
    jobs_list = [(i, photos[i % len(photos)], folder, 2024, jpeg_only) for i in range(count)]
    with multiprocessing.Pool(jobs) as pool:
        return sorted(pool.map(make_one, jobs_list))


def warm(paths):
    total = 0
    for p in paths:
        with open(p, "rb") as f:
            total += len(f.read())
    return total


# --------------------------------------------------------------------------
# Contenders

def timed(function):
    start = time.perf_counter()
    result = function()
    return time.perf_counter() - start, result


def timed_median(runs, function):
    """function timed runs times: the median run's seconds and result, and a
    note of the spread.  The all-core runs are a few seconds each, and move
    by a tenth from one to the next on a shared host."""
    results = sorted((timed(function) for _ in range(runs)), key=lambda r: r[0])
    seconds, result = results[len(results) // 2]
    note = f"(median of {runs}: {results[0][0]:.2f} to {results[-1][0]:.2f} s)" if runs > 1 else ""
    return seconds, result, note


def run_lumahist(args, records=None):
    """args run; its stderr.  The records (stdout) go to the file records, or
    nowhere."""
    if records:
        with open(records, "wb") as out:
            proc = subprocess.run(args, stdout=out, stderr=subprocess.PIPE)
    else:
        proc = subprocess.run(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if proc.returncode != 0:
        sys.exit(f"batch-bench: {' '.join(args)} failed ({proc.returncode}):\n"
                 f"{proc.stderr.decode(errors='replace')}")
    return proc.stderr.decode(errors="replace")


def cv_stats_one(path):
    gray = cv2.imread(path, cv2.IMREAD_GRAYSCALE)
    hist = cv2.calcHist([gray], [0], None, [256], [0, 256])
    return float(np.ravel(hist)[128])


def cv_equalize_one(job):
    path, out_dir = job
    bgr = cv2.imread(path, cv2.IMREAD_COLOR)
    ycrcb = cv2.cvtColor(bgr, cv2.COLOR_BGR2YCrCb)
    ycrcb[:, :, 0] = cv2.equalizeHist(ycrcb[:, :, 0])
    out = cv2.cvtColor(ycrcb, cv2.COLOR_YCrCb2BGR)
    cv2.imwrite(os.path.join(out_dir, os.path.basename(path)), out)
    return 0


def cv_init():
    # One thread per process: the processes are the parallelism.
    cv2.setNumThreads(1)


def find_magick():
    for name in ("magick", "/usr/bin/convert", "convert"):
        path = shutil.which(name) if "/" not in name else (name if os.access(name, os.X_OK)
                                                           else None)
        if path:
            return path
    return None


class GpuSampler:
    """nvidia-smi's utilization.gpu every 100 ms while a command runs."""

    def __init__(self):
        self.proc = None
        self.samples = []

    def __enter__(self):
        smi = shutil.which("nvidia-smi")
        if smi:
            self.proc = subprocess.Popen([smi, "--query-gpu=utilization.gpu",
                                          "--format=csv,noheader,nounits", "-lms", "100"],
                                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                         text=True)
            self.reader = threading.Thread(target=self._read, daemon=True)
            self.reader.start()
            time.sleep(0.3)  # its first sample
            self.samples.clear()
        return self

    def _read(self):
        for line in self.proc.stdout:
            values = [float(v) for v in line.split(",") if v.strip()]
            if values:
                self.samples.append(sum(values) / len(values))

    def __exit__(self, *exc):
        if self.proc:
            self.proc.terminate()
            self.proc.wait()

    def mean(self):
        return sum(self.samples) / len(self.samples) if self.samples else None


def gpu_share(timing):
    """From --timing: the backend, the analysis threads' share of the wall time
    per context, and the GPU time from CUDA events as a dict (kernels and
    copies: % of wall; GB copied and GB/s), or None when the line is missing:
    the CPU backend, or a lumahist without it."""
    match = re.search(r"analysis on (\w+): ([\d.]+) s over (\d+) contexts? = ([\d.]+) %", timing)
    if not match:
        return None, None, None
    events = re.search(r"GPU time \(CUDA events\): kernels [\d.]+ s = ([\d.]+) % of wall, "
                       r"frame copies [\d.]+ s = ([\d.]+) % \(([\d.]+) GB at ([\d.]+) GB/s\)",
                       timing)
    if events:
        events = dict(kernels=float(events.group(1)), copies=float(events.group(2)),
                      gigabytes=float(events.group(3)), rate=float(events.group(4)))
    return match.group(1), float(match.group(4)), events


DECODER = re.compile(r'"decoder":"([^"]*)"')


def has_decoder_option(lumahist):
    """Whether this lumahist's stats takes --decoder (GPU JPEG decoding came
    with it): an older one refuses the option as a usage error."""
    proc = subprocess.run([lumahist, "stats", "--help"], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT)
    return "--decoder" in proc.stdout.decode(errors="replace")


def probe_decoder(lumahist, jpeg, decoder):
    """The decoder lumahist's record names for one JPEG with --decoder
    decoder, and None; or None and why there is none."""
    args = [lumahist, "stats", "--quiet", "--no-histogram", "--jobs", "1", "--decoder", decoder,
            jpeg]
    proc = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if proc.returncode != 0:
        lines = [l for l in proc.stderr.decode(errors="replace").splitlines() if l.strip()]
        return None, (f"--decoder {decoder} on one JPEG failed ({proc.returncode})"
                      + (f": {lines[0]}" if lines else ""))
    match = DECODER.search(proc.stdout.decode(errors="replace"))
    if not match:
        return None, f"--decoder {decoder}: the record names no decoder"
    return match.group(1), None


def decoder_counts(records):
    """The decoders the records in the file records name, with their counts, as
    text: "nvjpeg-hardware 150, libpng 50"."""
    counts = collections.Counter()
    with open(records, encoding="utf-8", errors="replace") as f:
        for line in f:
            if line.strip():
                match = DECODER.search(line)
                counts[match.group(1) if match else "not named"] += 1
    if list(counts) == ["not named"]:
        return "not named in the records"
    return ", ".join(f"{name} {count}" for name, count in counts.most_common()) or "no records"


def decode_timing(timing):
    """From --timing, as a dict: images and decoding (the decode threads'
    seconds, summed over them) from the images line; gpu, a dict of the GPU
    decoding line's figures, or None when no GPU decoding ran (or this
    lumahist lacks the line); host, the host CPU time line's, or None."""
    result = dict(images=None, decoding=None, gpu=None, host=None)
    match = re.search(r"timing: (\d+) images? in [\d.]+ s wall .*?; decoding ([\d.]+) s", timing)
    if match:
        result.update(images=int(match.group(1)), decoding=float(match.group(2)))
    match = re.search(r"GPU decoding \(nvJPEG\): (\d+) images \((\d+) on the hardware decoder, "
                      r"(\d+) on the GPU hybrid decoder, (\d+) fell back to the CPU\) in "
                      r"([\d.]+) s over (\d+) contexts?", timing)
    if match:
        result["gpu"] = dict(zip(("images", "hardware", "hybrid", "fallback"),
                                 map(int, match.group(1, 2, 3, 4))),
                             seconds=float(match.group(5)), contexts=int(match.group(6)))
        shared = re.search(r"(\d+) JPEGs decoded on the CPU beside it", timing)
        if shared:
            result["gpu"]["shared"] = int(shared.group(1))
    match = re.search(r"host CPU time: ([\d.]+) s user \+ ([\d.]+) s system = ([\d.]+) ms "
                      r"per image", timing)
    if match:
        result["host"] = dict(user=float(match.group(1)), system=float(match.group(2)),
                              ms_per_image=float(match.group(3)))
    return result


def torch_decode(job):
    """torchvision's batched GPU decode of the JPEGs in paths, timed runs times
    (in a child process: this one holds no CUDA context while the other
    contenders run).  The median's seconds, the spread's note, the read_file
    pass's seconds and what ran; or, as a string, why it cannot run."""
    paths, runs = job
    try:
        import torch
        import torchvision
        from torchvision.io import ImageReadMode, decode_jpeg, read_file
    except Exception as e:  # no torch, or one that does not import here
        return f"torch and torchvision do not import: {e}"
    if not torch.cuda.is_available():
        return f"torch {torch.__version__}: torch.cuda.is_available() is False"
    # The bytes first, outside the decode's clock; the repeats are hard links
    # to the same bytes, read once (a long folder's bytes would not fit).
    start = time.perf_counter()
    read, data = {}, []
    for p in paths:
        st = os.stat(p)
        key = (st.st_dev, st.st_ino)
        if key not in read:
            read[key] = read_file(p)
        data.append(read[key])
    read_s = time.perf_counter() - start
    batches = [data[i:i + TORCH_BATCH] for i in range(0, len(data), TORCH_BATCH)]

    def decode_all():
        for batch in batches:
            decode_jpeg(batch, mode=ImageReadMode.GRAY, device="cuda")
        # The decodes are queued on the device: the clock stops when they end.
        torch.cuda.synchronize()
    try:
        # A batch to warm up: the CUDA context, nvJPEG's handles and buffers.
        decode_jpeg(batches[0], mode=ImageReadMode.GRAY, device="cuda")
        torch.cuda.synchronize()
    except Exception as e:  # an older torchvision takes no list, or no device
        first = (str(e).strip().splitlines() or [type(e).__name__])[0]
        return (f"torchvision {torchvision.__version__}: decode_jpeg(list, device='cuda') "
                f"failed: {first}")
    seconds, _, note = timed_median(runs, decode_all)
    what = (f"torch {torch.__version__}, torchvision {torchvision.__version__}, "
            f"{torch.cuda.get_device_name()}")
    return seconds, note, read_s, what


def torch_anchor(paths, runs):
    """torch_decode in a spawned child: its answer, or why there is none."""
    if not paths:
        return "no JPEG in the folder"
    try:
        with concurrent.futures.ProcessPoolExecutor(1, mp_context=SPAWN) as pool:
            return pool.submit(torch_decode, (paths, runs)).result()
    except concurrent.futures.BrokenExecutor:
        return "its process died (see above)"


def host_link_rate():
    """The host-to-device rate of the link, GB/s: the best of 10 copies of 256
    MB from pinned memory, timed with CUDA events (CuPy); None without CuPy or
    a GPU.  Run last: the bench's own process then holds no CUDA context while
    the contenders run."""
    try:
        import ctypes
        import cupy
        size = 256 << 20
        host = cupy.cuda.alloc_pinned_memory(size)
        device = cupy.cuda.alloc(size)
        start, end = cupy.cuda.Event(), cupy.cuda.Event()
        best = 0.0
        for _ in range(10):
            start.record()
            device.copy_from_host_async(ctypes.c_void_p(host.ptr), size)
            end.record()
            end.synchronize()
            best = max(best, size / (cupy.cuda.get_elapsed_time(start, end) / 1e3) / 1e9)
        return best
    except Exception:  # no CuPy, no device: the figure is only context
        return None


# --------------------------------------------------------------------------

def main():
    top = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lumahist", default=None)
    parser.add_argument("--samples", default=os.path.join(top, "samples"))
    parser.add_argument("--count", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=os.cpu_count())
    parser.add_argument("--folder", help="use (or fill, when empty) this folder of images")
    parser.add_argument("--magick-count", type=int, default=40)
    parser.add_argument("--csv", help="also write the figures to this CSV file")
    parser.add_argument("--only", choices=["stats", "equalize"],
                        help="time only this command and its OpenCV loops")
    parser.add_argument("--runs", type=int, default=3,
                        help="runs of each all-core contender, whose median counts (default 3)")
    parser.add_argument("--no-single", action="store_true",
                        help="leave out the one-thread rows (lumahist --jobs 1, the OpenCV "
                             "loops): all-core rows only")
    parser.add_argument("--jpeg-only", action="store_true",
                        help="fill the folder with JPEGs only (default: 3 JPEGs to 1 PNG)")
    args = parser.parse_args()
    lumahist = args.lumahist or find_lumahist(top)
    if not lumahist:
        sys.exit("batch-bench: no lumahist; build it or give --lumahist PATH")
    lumahist = os.path.abspath(lumahist)
    jobs = args.jobs

    scratch = tempfile.mkdtemp(prefix="lumahist-batch-bench-")
    try:
        folder = args.folder or os.path.join(scratch, "images")
        os.makedirs(folder, exist_ok=True)
        # Every image below the folder, as lumahist walks it: a folder given
        # with subfolders is timed whole by every contender.
        paths = sorted(os.path.join(top_, f) for top_, _, files in os.walk(folder)
                       for f in files if f.lower().endswith((".jpg", ".jpeg", ".png")))
        if args.jpeg_only and any(p.lower().endswith(".png") for p in paths):
            sys.exit(f"batch-bench: --jpeg-only, but {folder} holds PNGs: give an empty folder "
                     f"or one of JPEGs")
        if not paths:
            t, paths = timed(lambda: make_folder(args.samples, folder, args.count, jobs,
                                                 args.jpeg_only))
            print(f"made {len(paths)} images in {t:.1f} s")
            for k in range(1, args.repeat):
                for p in list(paths[:args.count]):
                    copy = os.path.join(folder, f"r{k}-" + os.path.basename(p))
                    os.link(p, copy)
                    paths.append(copy)
            paths.sort()
        n = len(paths)
        size = warm(paths)
        jpegs = sum(p.endswith(".jpg") for p in paths)
        print(f"{n} images ({jpegs} JPEG, {n - jpegs} PNG; 1920x1080 to 3840x2160), "
              f"{size / 1e6:.0f} MB, in {folder}")
        print(f"{jobs} cores used (os.cpu_count() = {os.cpu_count()}); lumahist {lumahist}")
        rows = []

        def row(name, seconds, count=n, note=""):
            rate = count / seconds if seconds > 0 else float("inf")
            rows.append((name, count, seconds, rate, note))
            print(f"  {name:<40} {count:5d} images {seconds:8.2f} s {rate:8.1f} images/s  {note}")
            return rate

        stats_n = stats_1 = cv_loop = cv_pool = backend = share = stats_util = decode = None
        eq_n = eq_1 = cv_eq_loop = cv_eq_pool = eq_backend = eq_share = eq_util = None
        if args.only != "equalize":
            stats_n, stats_1, cv_loop, cv_pool, backend, share, stats_util, decode = time_stats(
                lumahist, folder, paths, jobs, row, args.runs, scratch, not args.no_single)
        if args.only != "stats":
            eq_n, eq_1, cv_eq_loop, cv_eq_pool, eq_backend, eq_share, eq_util = time_equalize(
                lumahist, folder, paths, jobs, row, scratch, args.magick_count, args.runs,
                not args.no_single)
        print_ratios(jobs, stats_n, stats_1, cv_loop, cv_pool, backend, share, stats_util,
                     eq_n, eq_1, cv_eq_loop, cv_eq_pool, eq_backend, eq_share, eq_util, decode)
        if "cuda" in (backend, eq_backend):
            link = host_link_rate()
            print(f"  host link, pinned host to device (CuPy, best of 10 x 256 MB): "
                  + (f"{link:.1f} GB/s" if link else "not measured (no CuPy)"))
        if args.csv:
            with open(args.csv, "w") as f:
                f.write("contender,images,seconds,images_per_s,note\n")
                for name, count, seconds, rate, note in rows:
                    f.write(f"\"{name}\",{count},{seconds:.4f},{rate:.3f},\"{note}\"\n")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def time_stats(lumahist, folder, paths, jobs, row, runs, scratch, single=True):
    """lumahist stats on all cores (median of runs; with --decoder gpu and cpu
    where it has the option) and on one, the OpenCV loops and torchvision's
    decode.  The figures the ratios take; decode holds the GPU decoding's."""
    print("stats (histogram + statistics + percentiles of every image):")
    jpeg_paths = [p for p in paths if p.endswith(".jpg")]
    # The records go to a file, not /dev/null: the decoder each names is
    # counted from it once the clock has stopped (the last run's records).
    records = os.path.join(scratch, "records.jsonl")
    decoder_option = has_decoder_option(lumahist)
    gpu_decode = False
    if not decoder_option:
        print("  lumahist stats has no --decoder (no GPU decoding yet): the rows of before, "
              "decoder auto")
    elif not jpeg_paths:
        print("  --decoder gpu row left out: no JPEG in the folder")
    else:
        decoder, why = probe_decoder(lumahist, jpeg_paths[0], "gpu")
        gpu_decode = bool(decoder and decoder.startswith("nvjpeg"))
        if not gpu_decode:
            print(f"  --decoder gpu row left out: "
                  f"{why or f'its record of one JPEG names {decoder}, not nvjpeg-*'}")
        decoder, why = probe_decoder(lumahist, jpeg_paths[0], "auto")
        print(f"  --decoder auto (the default) decodes one JPEG alone here with {decoder}" if decoder
              else f"  --decoder auto: {why}")

    def all_cores(decoder):
        args = [lumahist, "stats", "--quiet", "--timing", "--jobs", str(jobs)]
        name = f"lumahist stats --jobs {jobs}"
        if decoder:
            args += ["--decoder", decoder]
            name += f" --decoder {decoder}"
        with GpuSampler() as sampler:
            t, timing, note = timed_median(runs, lambda: run_lumahist(args + [folder], records))
        rate = row(name, t, note=f"{note} decoders: {decoder_counts(records)}".strip())
        print("    " + timing.strip().replace("\n", "\n    "))
        return rate, timing, sampler.mean()

    stats_gpu = gpu_timing = gpu_util = stats_auto = auto_timing = None
    if gpu_decode:
        stats_gpu, gpu_timing, gpu_util = all_cores("gpu")
        # The default: nvJPEG and libjpeg-turbo side by side.
        stats_auto, auto_timing, _ = all_cores("auto")
    # The CPU decoder's row is the path of before nvJPEG: the targets that
    # came before it (the OpenCV loop, scaling, the GPU's share) stay on it.
    stats_n, timing, stats_util = all_cores("cpu" if decoder_option else None)
    backend, share, events = gpu_share(timing)
    stats_1 = cv_loop = cv_pool = None
    if single:
        one = ["--jobs", "1"] + (["--decoder", "cpu"] if decoder_option else [])
        t, _ = timed(lambda: run_lumahist([lumahist, "stats", "--quiet"] + one + [folder], records))
        stats_1 = row("lumahist stats " + " ".join(one), t,
                      note=f"decoders: {decoder_counts(records)}")
    if cv2 and single:
        t, _ = timed(lambda: [cv_stats_one(p) for p in paths])
        cv_loop = row("OpenCV loop (imread gray+calcHist)", t)
    if cv2:
        with SPAWN.Pool(jobs, initializer=cv_init) as pool:
            t, _, note = timed_median(runs, lambda: pool.map(cv_stats_one, paths, chunksize=4))
        cv_pool = row(f"OpenCV, {jobs} processes", t, note=note)
    else:
        print("  OpenCV: not installed (python3-opencv); skipped")
    anchor = torch_anchor(jpeg_paths, runs)
    stats_torch = None
    if isinstance(anchor, str):
        print(f"  torchvision anchor left out: {anchor}")
    else:
        t, note, read_s, what = anchor
        stats_torch = row(f"torchvision decode_jpeg cuda, x{TORCH_BATCH}", t, len(jpeg_paths),
                          note=f"decode only; {what}; read_file before it, not timed in: "
                               f"{read_s:.2f} s {note}".strip())
        if len(jpeg_paths) < len(paths):
            print(f"    (the folder's {len(jpeg_paths)} JPEGs only, its PNGs left out: "
                  f"compared in images per second)")
    decode = dict(jpeg_only=len(jpeg_paths) == len(paths), gpu=stats_gpu, cpu=stats_n,
                  auto=stats_auto, auto_timing=auto_timing,
                  cv_pool=cv_pool, torch=stats_torch, gpu_timing=gpu_timing, cpu_timing=timing,
                  gpu_util=gpu_util, decoder_option=decoder_option)
    return stats_n, stats_1, cv_loop, cv_pool, backend, (share, events), stats_util, decode


def equalize_gpu_usable(lumahist, paths, scratch):
    """None when this lumahist's equalize decodes, changes and encodes a JPEG
    on the GPU (nvJPEG) here; else why not."""
    proc = subprocess.run([lumahist, "equalize", "--help"], capture_output=True)
    if "encoded again" not in proc.stdout.decode(errors="replace"):
        return "this lumahist's equalize has no GPU path (--decoder gpu)"
    jpegs = [p for p in paths if p.lower().endswith((".jpg", ".jpeg"))]
    if not jpegs:
        return "no JPEG in the folder"
    probe = os.path.join(scratch, "eq-probe")
    proc = subprocess.run([lumahist, "equalize", "--quiet", "--timing", "--decoder", "gpu",
                           "--out", probe, jpegs[0]], capture_output=True)
    shutil.rmtree(probe, ignore_errors=True)
    err = proc.stderr.decode(errors="replace")
    if proc.returncode != 0:
        return err.strip().splitlines()[-1] if err.strip() else f"exit {proc.returncode}"
    if not re.search(r"GPU encoding \(nvJPEG\): 1 JPEGs", err):
        return "--decoder gpu did not encode the JPEG with nvJPEG"
    return None


def time_equalize_one_thread(lumahist, folder, jobs, row, eq_out, why_not_gpu, eq_last):
    """lumahist equalize on one thread (the CPU decoder where there is a
    choice); its rate, or None where the scaling is printed instead."""
    t, _ = timed(lambda: run_lumahist([lumahist, "equalize", "--quiet", "--jobs", "1"] +
                                      (["--decoder", "cpu"] if not why_not_gpu else []) +
                                      ["--out", eq_out, folder]))
    eq_1 = row("lumahist equalize --jobs 1" + (" --decoder cpu" if not why_not_gpu else ""), t)
    if not why_not_gpu:
        # Scaling on the CPU path alone; the ratios' scaling row would mix
        # the GPU's all-core rate with the CPU's one-core one.
        print(f"  equalize --decoder cpu scaling, --jobs {jobs} / --jobs 1: {eq_last / eq_1:.2f}x")
        eq_1 = None
    shutil.rmtree(eq_out)
    return eq_1


def time_equalize(lumahist, folder, paths, jobs, row, scratch, magick_count, runs, single=True):
    """lumahist equalize on all cores (median of runs) and on one, the OpenCV
    loops and ImageMagick.  Where equalize decodes, changes and encodes JPEGs
    on the GPU, the all-core run is made with --decoder gpu and again with
    --decoder cpu (libjpeg-turbo, the path before), and the GPU row is the
    one the ratios take."""
    print("equalize (each image equalized on luma and written):")
    eq_out = os.path.join(scratch, "eq")
    why_not_gpu = equalize_gpu_usable(lumahist, paths, scratch)
    if why_not_gpu:
        print(f"  equalize --decoder gpu: not run: {why_not_gpu}")
    decoders = ["gpu", "cpu"] if not why_not_gpu else [None]

    def equalize_all(decoder):
        shutil.rmtree(eq_out, ignore_errors=True)
        return run_lumahist([lumahist, "equalize", "--quiet", "--timing", "--jobs", str(jobs)] +
                            (["--decoder", decoder] if decoder else []) + ["--out", eq_out, folder])
    eq_n = eq_util = None
    for decoder in decoders:
        with GpuSampler() as sampler:
            t, timing, note = timed_median(runs, lambda: equalize_all(decoder))
        named = f" --decoder {decoder}" if decoder else ""
        rate = row(f"lumahist equalize{named} --jobs {jobs}", t, note=note)
        print("    " + timing.strip().replace("\n", "\n    "))
        if eq_n is None:  # the first: --decoder gpu where it runs
            eq_n, eq_timing, eq_util = rate, timing, sampler.mean()
        eq_last = rate
        shutil.rmtree(eq_out)
    eq_backend, eq_share, eq_events = gpu_share(eq_timing)
    eq_1 = None
    if single:
        eq_1 = time_equalize_one_thread(lumahist, folder, jobs, row, eq_out, why_not_gpu, eq_last)
    cv_eq_loop = cv_eq_pool = None
    if cv2:
        cv_out = os.path.join(scratch, "cv")
        os.makedirs(cv_out)
        if single:
            t, _ = timed(lambda: [cv_equalize_one((p, cv_out)) for p in paths])
            cv_eq_loop = row("OpenCV loop (YCrCb equalizeHist)", t)
        with SPAWN.Pool(jobs, initializer=cv_init) as pool:
            t, _, note = timed_median(runs, lambda: pool.map(
                cv_equalize_one, [(p, cv_out) for p in paths], chunksize=2))
        cv_eq_pool = row(f"OpenCV equalize, {jobs} processes", t, note=note)
        shutil.rmtree(cv_out)
    magick = find_magick()
    if magick and magick_count > 0:
        im_out = os.path.join(scratch, "im")
        os.makedirs(im_out)
        subset = paths[:magick_count]
        t, _ = timed(lambda: [subprocess.run([magick, p, "-equalize",
                                              os.path.join(im_out, os.path.basename(p))],
                                             check=True) for p in subset])
        row("ImageMagick convert -equalize", t, len(subset), "(per channel, own threads)")
        shutil.rmtree(im_out)
    else:
        print("  ImageMagick: not installed (imagemagick); skipped")
    return eq_n, eq_1, cv_eq_loop, cv_eq_pool, eq_backend, (eq_share, eq_events), eq_util


def print_ratios(jobs, stats_n, stats_1, cv_loop, cv_pool, backend, share, stats_util,
                 eq_n, eq_1, cv_eq_loop, cv_eq_pool, eq_backend, eq_share, eq_util, decode):
    print("ratios:")

    def ratio(name, a, b, target=None):
        if a and b:
            verdict = "" if target is None else (" (target >= %.1fx: %s)" % (
                target, "met" if a / b >= target else "NOT met"))
            print(f"  {name:<52} {a / b:6.2f}x{verdict}")
    cpu = " (cpu decoder)" if decode and decode["decoder_option"] else ""
    ratio(f"lumahist stats{cpu} / OpenCV loop", stats_n, cv_loop, 2.0)
    ratio(f"lumahist stats{cpu} / OpenCV in processes", stats_n, cv_pool)
    ratio("lumahist equalize / OpenCV loop", eq_n, cv_eq_loop, 1.5)
    # Issue 14's target for equalize decoded, changed and encoded on the GPU,
    # on the JPEG-only folder (--jpeg-only).
    ratio("lumahist equalize / OpenCV in processes", eq_n, cv_eq_pool, 2.5)
    ratio(f"stats{cpu} scaling, --jobs {jobs} / --jobs 1", stats_n, stats_1,
          10.0 if jobs >= 16 else None)
    ratio(f"equalize scaling, --jobs {jobs} / --jobs 1", eq_n, eq_1,
          10.0 if jobs >= 16 else None)
    # What the host gives work that shares nothing: OpenCV in independent
    # processes against its loop in one.  Cores that share caches, memory
    # and a power budget (or hyperthreads) keep it below the core count.
    ratio(f"host reference: OpenCV stats, {jobs} processes / 1", cv_pool, cv_loop)
    ratio(f"host reference: OpenCV equalize, {jobs} processes / 1", cv_eq_pool, cv_eq_loop)
    # share and eq_share: (the analysis threads' share per context, the GPU
    # time's share from CUDA events).
    for name, b, shares, util in (("stats", backend, share, stats_util),
                                  ("equalize", eq_backend, eq_share, eq_util)):
        if not b:
            continue
        threads, events = shares
        if b != "cuda":
            print(f"  {name}: analysis on the {b} (no GPU): {threads:.2f} % of wall per context")
            continue
        if events is not None:
            verdict = "met" if events["kernels"] < 5.0 else "NOT met"
            print(f"  {name}: GPU time, kernels (CUDA events) {events['kernels']:.2f} % of wall "
                  f"(target < 5 %: {verdict})")
            print(f"  {name}: frame copies over the host link {events['copies']:.2f} % of wall "
                  f"({events['gigabytes']:.1f} GB at {events['rate']:.1f} GB/s); kernels and "
                  f"copies together {events['kernels'] + events['copies']:.2f} %")
        else:
            print(f"  {name}: GPU time (CUDA events): not reported by this lumahist "
                  f"(target < 5 %: unknown)")
        busy = f"{util:.1f} %" if util is not None else "unknown (no nvidia-smi)"
        print(f"  {name}: secondary: GPU busy (nvidia-smi) {busy} of wall; analysis threads "
              f"inside the library {threads:.1f} % of wall per stream")
    if decode:
        print_decode_ratios(ratio, jobs, decode)


def print_decode_ratios(ratio, jobs, decode):
    """GPU decoding's ratios: the --decoder gpu row against OpenCV in
    processes, torchvision's decode and the --decoder cpu row, and the host
    CPU time per image of both rows."""
    gpu, cpu = decode_timing(decode["gpu_timing"] or ""), decode_timing(decode["cpu_timing"] or "")
    if decode["gpu"]:
        folder = "JPEGs" if decode["jpeg_only"] else "mixed"
        ratio(f"stats --decoder gpu / OpenCV {jobs} processes, {folder}", decode["gpu"],
              decode["cv_pool"], 3.0 if decode["jpeg_only"] else 2.0)
        # Per image: on the mixed folder torchvision decoded its JPEGs alone.
        ratio("stats --decoder gpu / torchvision decode, per image", decode["gpu"],
              decode["torch"], 1.0)
        ratio("stats --decoder gpu / --decoder cpu", decode["gpu"], decode["cpu"])
        if decode["auto"]:
            target = 3.0 if decode["jpeg_only"] else 2.0
            ratio(f"stats --decoder auto / OpenCV {jobs} processes, {folder}", decode["auto"],
                  decode["cv_pool"], target)
            ratio("stats --decoder auto / torchvision decode, per image", decode["auto"],
                  decode["torch"], 1.0)
            ratio("stats --decoder auto / --decoder gpu", decode["auto"], decode["gpu"])
            shared = decode_timing(decode["auto_timing"] or "")["gpu"]
            if shared:
                print(f"  --decoder auto: nvJPEG decoded {shared['images']} images, the CPU "
                      f"{shared.get('shared', '?')} beside it")
        if gpu["gpu"]:
            g = gpu["gpu"]
            print(f"  --decoder gpu: nvJPEG decoded {g['images']} images ({g['hardware']} "
                  f"hardware, {g['hybrid']} hybrid, {g['fallback']} fell back to the CPU) in "
                  f"{g['seconds']:.2f} s over {g['contexts']} contexts")
        else:
            print("  --decoder gpu: its --timing has no GPU decoding line: GPU decoding did not "
                  "run")
        if decode["gpu_util"] is not None:
            print(f"  --decoder gpu: GPU busy (nvidia-smi) {decode['gpu_util']:.1f} % of wall")
    else:
        print("  GPU decoding: no --decoder gpu row, so none of its ratios")
        name = "stats --decoder cpu" if decode["decoder_option"] else "lumahist stats"
        ratio(f"{name} / torchvision decode, per image", decode["cpu"], decode["torch"])
    # A lumahist without --decoder may still print the host CPU time line.
    if not (decode["decoder_option"] or cpu["host"]):
        return
    cpu_name = "--decoder cpu" if decode["decoder_option"] else f"stats --jobs {jobs}"
    host = [f"{name} {t['host']['ms_per_image']:.2f} ms"
            for name, t in (("--decoder gpu", gpu), (cpu_name, cpu)) if t["host"]]
    print("  host CPU (user + system) per image: "
          + (", ".join(host) if host else "not in this lumahist's --timing"))
    if cpu["decoding"] is None or not cpu["images"]:
        print(f"  {cpu_name}: no decoding time in its --timing")
        return
    decode_ms = cpu["decoding"] * 1e3 / cpu["images"]
    print(f"  {cpu_name}: decode threads {decode_ms:.2f} ms per image ({cpu['decoding']:.2f} s "
          f"summed over threads / {cpu['images']} images)")
    if not (gpu["host"] and decode_ms > 0):
        return
    share = gpu["host"]["ms_per_image"] / decode_ms
    # The target is per JPEG image: a mixed folder's PNGs decode on the CPU
    # in both rows, so only a JPEG-only folder judges it.
    verdict = (("met" if share <= 0.25 else "NOT met") if decode["jpeg_only"]
               else "judged with --jpeg-only: this folder's PNGs decode on the CPU")
    print(f"  {'gpu host CPU / cpu decode threads, per image':<52} {share:6.2f}x "
          f"(target <= 0.25x: {verdict})")
    if cpu["host"] and gpu["host"]["ms_per_image"] > 0:
        ratio("host CPU per image, --decoder cpu / --decoder gpu", cpu["host"]["ms_per_image"],
              gpu["host"]["ms_per_image"])


if __name__ == "__main__":
    main()
