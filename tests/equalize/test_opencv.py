#!/usr/bin/env python3
"""test_opencv.py: lumahist's equalization held against OpenCV's on the same
pixels: cv2.equalizeHist bit for bit, cv2.createCLAHE within 1 code value, on
the photographs of samples/ and on generated frames of awkward sizes.

usage: test_opencv.py EQ_DRIVER SAMPLES_DIR
Exit 77 (skip) when OpenCV for Python is missing."""
import os
import subprocess
import sys
import tempfile

try:
    import cv2
    import numpy as np
except ImportError as e:
    print(f"SKIP: {e} (install python3-opencv)")
    sys.exit(77)

DRIVER, SAMPLES = sys.argv[1], sys.argv[2]
FAILURES = []
TMP = tempfile.mkdtemp(prefix="lh-eq-")


def check(ok, message):
    if not ok:
        FAILURES.append(message)
        print("FAIL", message)


def run(image, fmt, *options):
    """The library's result on image (a numpy array laid out as fmt)."""
    h, w = image.shape[:2]
    src, dst = os.path.join(TMP, "in.raw"), os.path.join(TMP, "out.raw")
    np.ascontiguousarray(image).tofile(src)
    subprocess.run([DRIVER, *options, fmt, str(w), str(h), src, dst], check=True)
    return np.fromfile(dst, dtype=image.dtype).reshape(image.shape)


def samples():
    """(name, 8-bit gray, original) of each photograph; 16-bit ones apart."""
    for name in sorted(os.listdir(SAMPLES)):
        if not name.lower().endswith((".png", ".jpg", ".jpeg")):
            continue
        original = cv2.imread(os.path.join(SAMPLES, name), cv2.IMREAD_UNCHANGED)
        if original is None:
            continue
        yield name, original


def gray8(original):
    if original.dtype != np.uint8:
        return None
    if original.ndim == 2:
        return original
    return cv2.cvtColor(original[:, :, :3], cv2.COLOR_BGR2GRAY)


def generated():
    rng = np.random.default_rng(2024)
    yield "uniform 480x640", rng.integers(0, 256, (480, 640), dtype=np.uint8)
    yield "1x1", np.array([[77]], dtype=np.uint8)
    yield "1x999", rng.integers(0, 256, (1, 999), dtype=np.uint8)
    yield "999x1", rng.integers(0, 256, (999, 1), dtype=np.uint8)
    yield "constant", np.full((31, 17), 200, dtype=np.uint8)
    yield "two values", np.where(rng.random((100, 101)) < 0.3, 40, 180).astype(np.uint8)
    gauss = np.clip(rng.normal(128, 12, (257, 333)), 0, 255).astype(np.uint8)
    yield "narrow gaussian", gauss
    # N - h[first] = 510: the scale is 0.5 and levels fall on ties.
    ties = np.array([0] + [1] + [2] * 2 + [3] * 2 + [4] * 505, dtype=np.uint8).reshape(1, -1)
    yield "ties", ties
    yield "4K gradient", (np.add.outer(np.arange(2160) // 9, np.arange(3840) // 16) % 256).astype(
        np.uint8)


def test_equalize_hist():
    cases = [(f"samples/{n}", gray8(o)) for n, o in samples()] + list(generated())
    for name, image in cases:
        if image is None:
            continue
        got = run(image, "GRAY8")
        want = cv2.equalizeHist(image)
        bad = int(np.count_nonzero(got != want))
        check(bad == 0, f"equalizeHist {name}: {bad} pixels differ")
    print(f"equalizeHist: {len(cases)} images compared")


def clahe_compare(name, image, fmt, tiles, clip):
    got = run(image, fmt, "--mode", "clahe", "--tiles", f"{tiles[0]},{tiles[1]}", "--clip",
              repr(clip))
    want = cv2.createCLAHE(clipLimit=clip, tileGridSize=tiles).apply(image)
    diff = np.abs(got.astype(np.int64) - want.astype(np.int64))
    worst = int(diff.max())
    share = float(np.count_nonzero(diff)) / diff.size
    check(worst <= 1, f"CLAHE {name} {image.shape} tiles {tiles} clip {clip}: off by {worst}")
    check(share <= 0.15, f"CLAHE {name} {image.shape} tiles {tiles} clip {clip}: "
          f"{share:.1%} of pixels off by one")
    return share


def test_clahe():
    worst_share, n = 0.0, 0
    grids = [((8, 8), 40.0), ((8, 8), 2.0), ((3, 5), 0.0), ((16, 16), 4.0), ((7, 3), 0.5),
             ((1, 1), 40.0)]
    for name, original in samples():
        image = gray8(original)
        if image is None:
            continue
        h, w = image.shape
        # whole, both sides off the grid, one side off the grid
        for crop in [(h, w), (h - 3, w - 5), (h - 1, w - (w % 8))]:
            part = np.ascontiguousarray(image[:crop[0], :crop[1]])
            for tiles, clip in grids:
                worst_share = max(worst_share, clahe_compare(name, part, "GRAY8", tiles, clip))
                n += 1
    rng = np.random.default_rng(9)
    for shape in [(1, 1), (5, 3), (3, 100), (17, 9), (64, 64), (9, 1), (123, 77)]:
        image = rng.integers(0, 256, shape, dtype=np.uint8)
        for tiles, clip in [((8, 8), 40.0), ((2, 3), 1.0), ((1, 1), 0.0)]:
            worst_share = max(worst_share, clahe_compare("random", image, "GRAY8", tiles, clip))
            n += 1
    for name, original in samples():
        if original.dtype == np.uint16 and original.ndim == 2:
            for tiles, clip in [((8, 8), 40.0), ((4, 4), 0.0), ((5, 3), 3.0)]:
                part = np.ascontiguousarray(original[: original.shape[0] - 1, :])
                worst_share = max(worst_share, clahe_compare(name, part, "GRAY16", tiles, clip))
                n += 1
    print(f"CLAHE: {n} cases within 1 code value; at most {worst_share:.2%} of pixels off by one")


def shown(stored, orientation):
    """The picture a viewer shows of stored pixels with this Exif
    orientation (PIL's ImageOps.exif_transpose)."""
    return {1: lambda a: a, 2: lambda a: a[:, ::-1], 3: lambda a: a[::-1, ::-1],
            4: lambda a: a[::-1, :], 5: lambda a: a.T, 6: lambda a: a.T[:, ::-1],
            7: lambda a: a.T[::-1, ::-1], 8: lambda a: a.T[::-1, :]}[orientation](stored)


def test_clahe_oriented():
    """CLAHE of a frame with an Exif orientation is OpenCV's on the picture
    as shown (its grid across and down that picture, extended on its right
    and bottom), turned back: a non-square grid on sides that no tile count
    divides tells every orientation apart.  It was the stored frame's grid."""
    rng = np.random.default_rng(12)
    cases = [("random 61x97", rng.integers(0, 256, (61, 97), dtype=np.uint8))]
    for name, original in samples():
        image = gray8(original)
        if image is not None:
            cases.append((name, np.ascontiguousarray(image[: image.shape[0] - 3,
                                                           : image.shape[1] - 5])))
            break
    n = 0
    for name, image in cases:
        for orientation in range(1, 9):
            for tiles, clip in [((8, 3), 2.0), ((5, 7), 40.0)]:
                got = run(image, "GRAY8", "--mode", "clahe", "--tiles", f"{tiles[0]},{tiles[1]}",
                          "--clip", repr(clip), "--orientation", str(orientation))
                upright = np.ascontiguousarray(shown(image, orientation))
                want = cv2.createCLAHE(clipLimit=clip, tileGridSize=tiles).apply(upright)
                diff = np.abs(shown(got, orientation).astype(np.int64) - want.astype(np.int64))
                check(int(diff.max()) <= 1 and np.count_nonzero(diff) <= 0.15 * diff.size,
                      f"CLAHE {name} orientation {orientation} tiles {tiles}: off by up to "
                      f"{int(diff.max())} on {np.count_nonzero(diff)} pixels")
                n += 1
    print(f"CLAHE with an orientation: {n} cases within 1 code value of OpenCV's upright")


def test_colour():
    """Colour is equalized on luma: the luma of the result is equalizeHist's
    LUT of the input's luma, give or take the rounding of three samples."""
    for name, original in samples():
        if original.dtype != np.uint8 or original.ndim != 3:
            continue
        bgr = np.ascontiguousarray(original[:, :, :3])
        got = run(bgr, "BGR")
        luma_in = cv2.cvtColor(bgr, cv2.COLOR_BGR2GRAY)
        luma_out = cv2.cvtColor(got, cv2.COLOR_BGR2GRAY).astype(np.int64)
        want = cv2.equalizeHist(luma_in).astype(np.int64)
        free = (got.max(axis=2) < 255) & (luma_in > 0)
        diff = np.abs(luma_out - want)[free]
        check(diff.size > 0 and int(diff.max()) <= 2 and float(np.mean(diff <= 1)) >= 0.99,
              f"colour {name}: luma off by up to {int(diff.max()) if diff.size else -1}")
        print(f"colour {name}: luma within {int(diff.max())} of equalizeHist's "
              f"({float(np.mean(diff == 0)):.1%} exact) where no sample clipped")


def main():
    test_equalize_hist()
    test_clahe()
    test_clahe_oriented()
    test_colour()
    if FAILURES:
        print(f"{len(FAILURES)} failure(s)")
        return 1
    print("OpenCV agrees")
    return 0


if __name__ == "__main__":
    sys.exit(main())
