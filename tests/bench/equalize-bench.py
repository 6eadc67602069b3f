#!/usr/bin/env python3
"""equalize-bench.py: lumahist's equalization, CLAHE and overlay on a 4K
8-bit frame in device memory (equalize-bench) against OpenCV's equalizeHist
and CLAHE on all of this host's cores, on the same frame, in one run.

usage: equalize-bench.py PATH/TO/equalize-bench [--runs N]
Prints both tables and the speed-ups, with the issue's targets: equalize
<= 30 us and CLAHE 8x8 <= 100 us on the GPU, each >= 20x OpenCV."""
import os
import subprocess
import sys
import tempfile
import time

try:
    import cv2
    import numpy as np
except ImportError as e:
    print(f"SKIP: {e} (install python3-opencv)")
    sys.exit(77)


def median_us(fn, runs):
    for _ in range(3):
        fn()
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1e6)
    times.sort()
    return times[len(times) // 2]


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    bench, runs = sys.argv[1], 100
    if len(sys.argv) == 4 and sys.argv[2] == "--runs":
        runs = int(sys.argv[3])
    width, height = 3840, 2160
    frame_path = os.path.join(tempfile.mkdtemp(prefix="lh-eq-bench-"), "frame.raw")
    r = subprocess.run([bench, "--runs", str(runs), "--width", str(width), "--height",
                        str(height), "--frame-out", frame_path], capture_output=True, text=True)
    print(r.stdout, end="")
    if r.returncode != 0:
        print(r.stderr, end="", file=sys.stderr)
        return r.returncode
    gpu = {}
    for line in r.stdout.splitlines():
        if line.startswith("#") or line.startswith("case"):
            continue
        parts = line.rsplit(None, 3)
        gpu[parts[0].strip()] = float(parts[1])

    cores = os.cpu_count()
    cv2.setNumThreads(cores)
    cv2.ocl.setUseOpenCL(False)
    gray = np.fromfile(frame_path, dtype=np.uint8).reshape(height, width)
    out = np.empty_like(gray)
    clahe = cv2.createCLAHE(clipLimit=40.0, tileGridSize=(8, 8))
    rgb = np.ascontiguousarray(np.stack([gray, gray, gray], axis=-1))

    def ycrcb_equalize():
        ycc = cv2.cvtColor(rgb, cv2.COLOR_RGB2YCrCb)
        ycc[:, :, 0] = cv2.equalizeHist(ycc[:, :, 0])
        return cv2.cvtColor(ycc, cv2.COLOR_YCrCb2RGB)

    cpu = {
        "equalizeHist": median_us(lambda: cv2.equalizeHist(gray, out), runs),
        "CLAHE 8x8": median_us(lambda: clahe.apply(gray, out), runs),
        "RGB via YCrCb + equalizeHist": median_us(ycrcb_equalize, max(10, runs // 5)),
    }
    print(f"\n# OpenCV {cv2.__version__} on {cores} CPU threads (cv2.getNumThreads() = "
          f"{cv2.getNumThreads()}), same frame, median of {runs} runs")
    for name, us in cpu.items():
        print(f"{name:34s} {us:10.1f}")

    print("\n# lumahist (GPU) against OpenCV (CPU)")
    print(f"{'':34s} {'GPU us':>10s} {'CPU us':>10s} {'speed-up':>10s} {'targets':>24s}")
    rows = [
        ("equalize GRAY8", "equalizeHist", 30.0),
        ("clahe 8x8 GRAY8", "CLAHE 8x8", 100.0),
        ("equalize RGBA", "RGB via YCrCb + equalizeHist", None),
    ]
    ok = True
    for g, c, limit in rows:
        if g not in gpu:
            continue
        ratio = cpu[c] / gpu[g]
        target = ""
        if limit is not None:
            met = gpu[g] <= limit and ratio >= 20.0
            ok = ok and met
            target = f"<= {limit:.0f} us, >= 20x: {'met' if met else 'MISSED'}"
        print(f"{g:34s} {gpu[g]:10.1f} {cpu[c]:10.1f} {ratio:9.1f}x {target:>24s}")
    print("\ntargets " + ("met" if ok else "not all met"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
