#!/usr/bin/env python3
"""Where a batch run's time went, from its LUMAHIST_TRACE file.

    LUMAHIST_TRACE=run.trace lumahist stats --quiet FOLDER > /dev/null
    python3 tests/bench/trace-timeline.py run.trace [--step 0.1]

Prints, for each step of the run's wall time: how many decoding threads were
busy (decoding time in the step over its length), the images in hand
(dispatched, not yet handed back), those decoded and waiting for a context,
the images handed back, and what was decoded in the step by each decoder.
Then nvJPEG's batches: when each was taken by a context, its size, and when
its images were handed back (a batch that takes long while the decoding
threads are busy is waiting on the host, not on the engines).  The trace's
lines are "index decoder backend" and six moments in seconds from the run's
start (pipeline.c, trace_task): dispatched, decoding, decoded, taken, done,
emitted; -1 for one not reached.
"""
import argparse
import collections
import itertools


def load(path):
    rows = []
    with open(path) as f:
        for line in f:
            fields = line.split()
            rows.append((fields[1], fields[2], [float(x) for x in fields[3:9]]))
    return rows


def timeline(rows, step):
    end = max(m[5] for _, _, m in rows)
    print(f"{len(rows)} images, last record at {end:.3f} s")
    print(" kinds:", dict(collections.Counter(f"{d}/{b}" for d, b, _ in rows)))
    print("      t  decoding  in hand  waiting  handed back  decoded by")
    t = 0.0
    while t < end:
        mid = t + step / 2
        busy = sum(max(0.0, min(m[2], t + step) - max(m[1], t)) for _, _, m in rows if m[1] >= 0)
        in_hand = sum(1 for _, _, m in rows if m[0] <= mid < m[4])
        waiting = sum(1 for _, _, m in rows if m[3] >= 0 and m[2] <= mid < m[3])
        back = sum(1 for _, _, m in rows if t <= m[4] < t + step)
        decoded = collections.Counter(d for d, _, m in rows if t <= m[2] < t + step)
        print(f"  {t:5.2f}  {busy / step:8.1f}  {in_hand:7d}  {waiting:7d}  {back:11d}  "
              f"{dict(decoded)}")
        t += step


def batches(rows):
    gpu = sorted((m[3], m[4]) for d, _, m in rows if d.startswith("nvjpeg") and m[3] >= 0)
    if not gpu:
        return
    print("nvJPEG batches (taken at, images, handed back from .. to):")
    for taken, group in itertools.groupby(gpu, key=lambda x: round(x[0], 3)):
        done = [x[1] for x in group]
        print(f"  {taken:6.3f}  {len(done):3d}  {min(done):6.3f} .. {max(done):6.3f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("trace")
    parser.add_argument("--step", type=float, default=0.1, help="seconds a row (0.1)")
    args = parser.parse_args()
    rows = load(args.trace)
    timeline(rows, args.step)
    batches(rows)


if __name__ == "__main__":
    main()
