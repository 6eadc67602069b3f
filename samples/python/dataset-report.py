#!/usr/bin/env python3
"""dataset-report.py FOLDER [--json FILE]: the exposure of a folder of images
with the lumahist Python module: one line per image flagged too dark, too
bright or low in contrast, and the dataset's statistics from the summed
histograms (the record `lumahist stats --dataset` writes).

Images are read with OpenCV (8- and 16-bit PNG, JPEG); statistics are taken
on their luma, BT.601, full range.  Thresholds are the report's defaults
(README: "The report"), on values normalized to [0, 1].
"""
import argparse
import json
import os
import sys

import cv2
import numpy as np

import lumahist

DARK_BELOW, BRIGHT_ABOVE, LOW_CONTRAST_BELOW = 0.25, 0.75, 0.3


def images(folder):
    for top, dirs, files in os.walk(folder):
        dirs.sort()
        for name in sorted(files):
            if name.lower().endswith((".png", ".jpg", ".jpeg")):
                yield os.path.join(top, name)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder")
    parser.add_argument("--json", help="also write the dataset record to this file")
    args = parser.parse_args()

    by_depth = {}
    flagged = 0
    for path in images(args.folder):
        image = cv2.imread(path, cv2.IMREAD_UNCHANGED)
        if image is None:
            print(f"{path}: cannot be read", file=sys.stderr)
            continue
        if image.ndim == 3 and image.shape[2] == 4:
            image = np.ascontiguousarray(image[..., :3])
        s = lumahist.stats(image, format="BGR" if image.ndim == 3 else None)
        by_depth.setdefault(s.bit_depth, []).append(s)
        spread = s.percentiles_norm[95] - s.percentiles_norm[5]
        flags = [name for name, hit in (("too dark", s.median_norm < DARK_BELOW),
                                        ("too bright", s.median_norm > BRIGHT_ABOVE),
                                        ("low contrast", spread < LOW_CONTRAST_BELOW)) if hit]
        if flags:
            flagged += 1
            print(f"{path}: {', '.join(flags)} (median {s.median_norm:.3f}, "
                  f"P95 - P5 {spread:.3f})")
    if not by_depth:
        print(f"{args.folder}: no images", file=sys.stderr)
        return 1
    records = []
    for depth, stats in sorted(by_depth.items()):
        dataset = lumahist.merge(stats)
        records.append(dataset.to_dict())
        print(f"{dataset.images} images of {depth} bits: mean {dataset.mean_norm:.3f}, "
              f"median {dataset.median_norm:.3f}, P5..P95 {dataset.percentiles_norm[5]:.3f}.."
              f"{dataset.percentiles_norm[95]:.3f}, clipped {dataset.clipped_low:.2%} black / "
              f"{dataset.clipped_high:.2%} white")
    print(f"{flagged} flagged")
    if args.json:
        with open(args.json, "w") as f:
            for record in records:
                f.write(json.dumps(record) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
