#!/usr/bin/env python3
"""python-bench.py: lumahist.stats on a 4K RGB NumPy array against what a
user writes today, cv2.cvtColor(RGB2GRAY) + cv2.calcHist, in one run on the
same machine (median of --runs calls after a warm-up; OpenCV on its own
threads, lumahist's CPU backend on every core), with the issue's target
(>= 2x).  Where CuPy and a GPU are, also lumahist.stats on the same frame
as a CuPy array.  Run with PYTHONPATH=BUILD/python."""
import argparse
import statistics
import time

import cv2
import numpy as np

import lumahist


def median_ms(function, runs):
    function()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        function()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=31)
    args = parser.parse_args()
    rng = np.random.default_rng(1)
    y, x = np.mgrid[0:2160, 0:3840]
    base = ((x / 3839 * 0.6 + y / 2159 * 0.4) * 230)[..., None]
    frame = np.clip(base + rng.normal(0, 12, (2160, 3840, 3)), 0, 255).astype(np.uint8)

    def opencv():
        gray = cv2.cvtColor(frame, cv2.COLOR_RGB2GRAY)
        return cv2.calcHist([gray], [0], None, [256], [0, 256])

    # The same work: our luma is BT.601 in 14-bit fixed point, rounded half up.
    wide = frame.astype(np.int64)
    exact = (4899 * wide[..., 0] + 9617 * wide[..., 1] + 1868 * wide[..., 2] + 8192) >> 14
    ours = lumahist.stats(frame, backend="cpu")
    assert np.array_equal(ours.histogram, np.bincount(exact.ravel(), minlength=256)), "wrong luma"
    differ = int((cv2.cvtColor(frame, cv2.COLOR_RGB2GRAY) != exact).sum())
    cv_ms = median_ms(opencv, args.runs)
    cpu_ms = median_ms(lambda: lumahist.stats(frame, backend="cpu"), args.runs)
    print(f"4K RGB uint8, median of {args.runs}; OpenCV {cv2.__version__} on "
          f"{cv2.getNumThreads()} threads")
    print(f"  cv2.cvtColor + cv2.calcHist        {cv_ms:8.3f} ms  (its gray differs from the "
          f"fixed-point BT.601 luma on {differ} of {exact.size} pixels)")
    print(f"  lumahist.stats, CPU backend         {cpu_ms:8.3f} ms  ({cv_ms / cpu_ms:.2f}x; "
          f"target >= 2.0x: {'met' if cv_ms / cpu_ms >= 2 else 'NOT met'})")
    try:
        import cupy
        device = cupy.asarray(frame)
        gpu_ms = median_ms(lambda: lumahist.stats(device), args.runs)
        print(f"  lumahist.stats, CuPy array on the GPU {gpu_ms:6.3f} ms  ({cv_ms / gpu_ms:.2f}x)")
    except Exception as e:  # no CuPy or no device
        print(f"  (no CuPy row: {type(e).__name__}: {e})")


if __name__ == "__main__":
    main()
