#!/usr/bin/env python3
"""test_cli.py: checks `lumahist stats` field by field, in every output format,
against an independent computation in numpy.

Usage: test_cli.py LUMAHIST SAMPLES_DIR GROUP
GROUP is one of: formats, options, errors, samples (see GROUPS at the end).

The reference never uses lumahist's code: luma comes from the definitions of
the README (8-bit luma: OpenCV's 15-bit fixed-point weights, Kr and Kg
rounded, Kb the rest, round half up; deeper luma: floor(Kr R + Kg G + Kb B + 1/2) computed exactly
with the decimal coefficients), histograms from np.bincount, percentiles from np.sort by nearest rank,
mean and standard deviation in float64.  Pixels of generated PNGs are the
arrays the test made (PNG files are written by Pillow, and 16-bit colour ones
by a small encoder below, not by libpng).  JPEG pixels depend on the decoder,
so they come from Pillow: its draft mode 'YCbCr' hands over libjpeg's Y
component without colour conversion; the test checks that this equals
`djpeg -grayscale` (a JCS_GRAYSCALE decode, what lumahist does) whenever
djpeg (libjpeg-turbo-progs) is installed.
"""
import csv
import io
import json
import math
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import unicodedata
import zlib
from fractions import Fraction

try:
    import numpy as np
    from PIL import Image
except ImportError as e:  # pragma: no cover
    print(f"SKIP: needs python3-numpy and python3-pil ({e})")
    sys.exit(77)

LUMAHIST = None
FAILURES = []

# The record fields of output.c, in their documented order.
FIELDS = ["path", "width", "height", "bit_depth", "matrix", "range", "backend", "decoder", "count",
          "mean", "stddev", "min", "max", "median", "clipped_low", "clipped_high",
          "below_legal", "above_legal", "mean_norm", "stddev_norm", "min_norm", "max_norm",
          "median_norm", "percentiles", "percentiles_norm", "histogram"]
INT_FIELDS = {"width", "height", "bit_depth", "count", "min", "max", "median"}
STR_FIELDS = {"path", "matrix", "range", "backend", "decoder"}

# (Kr, Kb) of each matrix, as DESIGN.md gives them.
MATRICES = {"bt601": (0.299, 0.114), "bt709": (0.2126, 0.0722), "bt2020": (0.2627, 0.0593)}

PERCENTILES = "0,1,5,12.5,50,95,99,99.9,100"
DEFAULT_PERCENTILES = "1,5,50,95,99"


def fail(message):
    FAILURES.append(message)
    print("FAIL:", message)


def check(condition, message):
    if not condition:
        fail(message)
    return condition


# --------------------------------------------------------------------------
# Running the tool

def run(*args, expect=None):
    # The numbers are checked against this test's own decoding of the files,
    # libjpeg-turbo's pixels for JPEG: stats decodes on the CPU unless a test
    # asks otherwise.  nvJPEG may round its IDCT differently; tests/io's
    # gpu-jpeg-decode measures by how much.
    if args and args[0] == "stats" and "--decoder" not in args:
        args = (args[0], "--decoder", "cpu", *args[1:])
    proc = subprocess.run([LUMAHIST, *args], capture_output=True)
    out = proc.stdout.decode("utf-8")
    err = proc.stderr.decode("utf-8", "replace")
    if expect is not None and proc.returncode != expect:
        fail(f"lumahist {' '.join(args)}: exit status {proc.returncode}, expected {expect}\n"
             f"stderr: {err}")
    return proc.returncode, out, err


def run_jsonl(*args, expect=0):
    rc, out, err = run("stats", "--format", "jsonl", *args, expect=expect)
    records = []
    for line in out.splitlines():
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError as e:
            fail(f"stats {' '.join(args)}: not a JSON line ({e}): {line[:200]}")
    return rc, records, err


# --------------------------------------------------------------------------
# The independent reference

def weights(matrix, one):
    """Kr and Kg rounded, Kb the rest (OpenCV's 15-bit BT.601 weights)."""
    kr_f, kb_f = MATRICES[matrix]
    kr, kg = round(kr_f * one), round((1 - kr_f - kb_f) * one)
    return kr, kg, one - kr - kg


def luma(rgb, matrix, bit_depth=8):
    """8 bits: 15-bit weights (OpenCV's); deeper: the decimal weights in units
    of 10^-4, so that the integer sum is exactly 10^4 Y and the rounding is
    exact."""
    one = 1 << 15 if bit_depth == 8 else 10000
    kr, kg, kb = weights(matrix, one)
    c = rgb.astype(np.int64)
    return (kr * c[..., 0] + kg * c[..., 1] + kb * c[..., 2] + one // 2) // one


def percentile_key(p):
    key = repr(float(p))
    return key[:-2] if key.endswith(".0") else key


def reference(y, bit_depth, range_="full", percentiles=PERCENTILES, matrix="bt601"):
    """Every field of a record from the luma array y (without path and backend)."""
    y = np.asarray(y, dtype=np.int64).ravel()
    n = y.size
    top = (1 << bit_depth) - 1
    if range_ == "limited":
        black, white = 16 << (bit_depth - 8), 235 << (bit_depth - 8)
    else:
        black, white = 0, top
    scale = white - black
    total = int(y.sum())
    mean = total / n  # exact integers, one correctly rounded division
    std = float(np.sqrt(np.mean((y.astype(np.float64) - mean) ** 2)))
    ordered = np.sort(y)

    def nearest_rank(p):
        rank = max(1, math.ceil(Fraction(p) * n / 100))
        return int(ordered[rank - 1])

    ps = [float(p) for p in percentiles.split(",")] if percentiles else []
    hist = np.bincount(y, minlength=1 << bit_depth)
    assert hist.size == 1 << bit_depth
    rec = {
        "bit_depth": bit_depth, "matrix": matrix, "range": range_, "count": n,
        "mean": mean, "stddev": std, "min": int(y.min()), "max": int(y.max()),
        "median": nearest_rank(50),
        "clipped_low": int((y == 0).sum()) / n, "clipped_high": int((y == top).sum()) / n,
        "below_legal": int((y < black).sum()) / n if range_ == "limited" else 0.0,
        "above_legal": int((y > white).sum()) / n if range_ == "limited" else 0.0,
    }
    for f in ("mean", "min", "max", "median"):
        rec[f + "_norm"] = (rec[f] - black) / scale
    rec["stddev_norm"] = std / scale
    rec["percentiles"] = {percentile_key(p): nearest_rank(p) for p in ps}
    rec["percentiles_norm"] = {k: (v - black) / scale for k, v in rec["percentiles"].items()}
    rec["histogram"] = [int(c) for c in hist]
    return rec


def close(a, b, rel):
    return a == b or abs(a - b) <= rel * max(abs(a), abs(b), 1.0)


def compare_record(got, want, what, histogram=True, converted_from=None):
    """got: a parsed jsonl record; want: the reference plus path, width, height.
    converted_from: the key that only a converted (CMYK, YCCK) JPEG's record has."""
    fields = FIELDS if histogram else FIELDS[:-1]
    if converted_from:
        at = fields.index("decoder") + 1
        fields = fields[:at] + ["converted_from"] + fields[at:]
        check(got.get("converted_from") == converted_from,
              f"{what}: converted_from {got.get('converted_from')!r}, expected {converted_from!r}")
    if not check(list(got.keys()) == fields, f"{what}: keys {list(got.keys())}"):
        return
    for f in fields:
        g, w = got[f], want.get(f)
        if f == "converted_from":
            continue
        if f == "backend":
            check(g in ("cpu", "cuda"), f"{what}: backend {g!r}")
            if w is not None:
                check(g == w, f"{what}: backend {g!r}, expected {w!r}")
        elif f == "decoder":
            with open(got["path"], "rb") as image:
                png = image.read(4) == b"\x89PNG"
            wanted = "libpng" if png else "libjpeg-turbo"
            check(g == wanted, f"{what}: decoder {g!r}, expected {wanted!r}")
        elif f in STR_FIELDS:
            check(g == w, f"{what}: {f} {g!r}, expected {w!r}")
        elif f in INT_FIELDS:
            check(type(g) is int and g == w, f"{what}: {f} {g!r}, expected {w!r}")
        elif f in ("mean", "clipped_low", "clipped_high", "below_legal", "above_legal",
                   "min_norm", "max_norm", "median_norm"):
            # Exact: each is one correctly rounded division of exact integers.
            check(isinstance(g, (int, float)) and float(g) == w,
                  f"{what}: {f} {g!r}, expected {w!r}")
        elif f in ("stddev", "stddev_norm", "mean_norm"):
            check(isinstance(g, (int, float)) and close(float(g), w, 1e-9),
                  f"{what}: {f} {g!r}, expected {w!r}")
        elif f == "percentiles":
            check(g == w and list(g.keys()) == list(w.keys()),
                  f"{what}: percentiles {g}, expected {w}")
            check(all(type(v) is int for v in g.values()), f"{what}: percentile not integer")
        elif f == "percentiles_norm":
            check(list(g.keys()) == list(w.keys()) and
                  all(float(g[k]) == w[k] for k in w),
                  f"{what}: percentiles_norm {g}, expected {w}")
        elif f == "histogram":
            if check(isinstance(g, list) and len(g) == len(w),
                     f"{what}: histogram of {len(g) if isinstance(g, list) else g!r} bins, "
                     f"expected {len(w)}"):
                bad = [i for i in range(len(w)) if g[i] != w[i] or type(g[i]) is not int]
                check(not bad, f"{what}: histogram differs at bins {bad[:10]}")


# --------------------------------------------------------------------------
# Images: writing them, and reading the reference luma of any file

def png_chunk(kind, data):
    return (struct.pack(">I", len(data)) + kind + data +
            struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))


def write_png16(path, pixels):
    """A 16-bit PNG (gray if 2-D, RGB if 3 channels) without libpng or Pillow."""
    pixels = np.asarray(pixels, dtype=">u2")
    height, width = pixels.shape[:2]
    colour = 2 if pixels.ndim == 3 else 0
    raw = b"".join(b"\x00" + pixels[r].tobytes() for r in range(height))
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n")
        f.write(png_chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 16, colour, 0, 0, 0)))
        f.write(png_chunk(b"IDAT", zlib.compress(raw)))
        f.write(png_chunk(b"IEND", b""))


def read_png16_colour(path):
    """Decodes a non-interlaced 16-bit colour PNG (which Pillow reduces to 8 bits)."""
    data = open(path, "rb").read()
    pos, idat, ihdr = 8, b"", None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    width, height, depth, colour, _, _, interlace = ihdr
    if depth != 16 or colour not in (2, 6) or interlace:
        return None
    channels = 3 if colour == 2 else 4
    bpp, stride = 2 * channels, 2 * channels * width
    raw = zlib.decompress(idat)
    rows, prev = [], bytearray(stride)
    for r in range(height):
        kind, line = raw[r * (stride + 1)], bytearray(raw[r * (stride + 1) + 1:(r + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if kind == 1:
                line[i] = (line[i] + a) & 255
            elif kind == 2:
                line[i] = (line[i] + b) & 255
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    arr = np.frombuffer(b"".join(rows), dtype=">u2").reshape(height, width, channels)
    return arr[..., :3].astype(np.int64)


def djpeg_gray(path):
    djpeg = shutil.which("djpeg")
    if not djpeg:
        return None
    out = subprocess.run([djpeg, "-grayscale", "-pnm", path], capture_output=True).stdout
    return np.asarray(Image.open(io.BytesIO(out)))


def decoded_luma(path, matrix="bt601"):
    """(luma array, bit depth) of an image file by an independent decode, or
    None when it is a kind lumahist must refuse (CMYK JPEG)."""
    with Image.open(path) as img:
        if img.format == "JPEG":
            if img.mode == "L":
                return np.asarray(img).astype(np.int64), 8
            if img.mode != "RGB":
                return None
            img.draft("YCbCr", img.size)
            check(img.mode == "YCbCr", f"{path}: Pillow draft gave mode {img.mode}")
            y = np.asarray(img)[..., 0].astype(np.int64)
            gray = djpeg_gray(path)
            if gray is not None:
                check(gray.shape == y.shape and (gray == y).all(),
                      f"{path}: Pillow's draft Y differs from djpeg -grayscale")
            return y, 8
        if img.format != "PNG":
            return None
        mode = img.mode
        if mode in ("I;16", "I;16B", "I"):
            return np.asarray(img).astype(np.int64), 16
        if mode in ("RGB", "RGBA"):
            deep = read_png16_colour(path)
            if deep is not None:
                return luma(deep, matrix, 16), 16
        if mode == "P":
            img = img.convert("RGBA")
        elif mode == "1":
            img = img.convert("L")
        elif mode == "LA":
            img = img.getchannel("L")
        arr = np.asarray(img).astype(np.int64)
        if arr.ndim == 2:
            return arr, 8
        return luma(arr[..., :3], matrix), 8


# --------------------------------------------------------------------------
# The generated set

class Sample:
    def __init__(self, path, pixels, bit_depth, kind):
        self.path = path        # as lumahist will print it
        self.pixels = pixels    # what the file holds: gray 2-D, or RGB(A) 3-D
        self.bit_depth = bit_depth
        self.kind = kind        # "gray", "rgb" or "jpeg" (pixels unused)

    def luma(self, matrix="bt601"):
        if self.kind == "jpeg":
            return decoded_luma(self.path)[0]
        if self.pixels.ndim == 2:
            return self.pixels.astype(np.int64)
        return luma(self.pixels[..., :3], matrix, self.bit_depth)

    @property
    def size(self):
        with Image.open(self.path) as img:
            return img.size


def smooth_photo(rng, height, width):
    """Gradients plus noise: something like a photograph, for JPEG."""
    yy, xx = np.mgrid[0:height, 0:width]
    base = np.stack([xx * 255 / width, yy * 255 / height, (xx + yy) * 127 / (width + height)], -1)
    return np.clip(base + rng.normal(0, 20, base.shape), 0, 255).astype(np.uint8)


def make_set(root):
    """Writes the generated images under root/set; returns {path: Sample}."""
    rng = np.random.default_rng(20240601)
    top = os.path.join(root, "set")
    os.makedirs(os.path.join(top, "a", "deeper"))
    samples = {}

    def add(rel, pixels, bit_depth, kind, save):
        path = os.path.join(top, rel)
        save(path)
        samples[path] = Sample(path, pixels, bit_depth, kind)

    rgb = rng.integers(0, 256, (23, 37, 3), dtype=np.uint8)
    add("B.png", rgb, 8, "rgb", lambda p: Image.fromarray(rgb).save(p))
    gray = rng.integers(0, 256, (10, 10), dtype=np.uint8)  # 100 pixels: exact percentile ranks
    add("a/gray.png", gray, 8, "gray", lambda p: Image.fromarray(gray).save(p))
    const = np.zeros((5, 8), dtype=np.uint8)
    add("a/deeper/const.png", const, 8, "gray", lambda p: Image.fromarray(const).save(p))
    with open(os.path.join(top, "a", "notes.txt"), "w") as f:
        f.write("not an image, and not picked up from a folder\n")
    two = np.where(rng.random((5, 20)) < 0.3, 0, 255).astype(np.uint8)
    add("a.png", two, 8, "gray", lambda p: Image.fromarray(two).save(p))
    photo = smooth_photo(rng, 47, 61)
    add("colour.JPG", None, 8, "jpeg",
        lambda p: Image.fromarray(photo).save(p, "JPEG", quality=80, subsampling=2))
    add("progressive.jpeg", None, 8, "jpeg",
        lambda p: Image.fromarray(photo[:, :50]).save(p, "JPEG", quality=90, subsampling=1,
                                                    progressive=True))
    add("gray.jpg", None, 8, "jpeg",
        lambda p: Image.fromarray(photo[..., 1]).save(p, "JPEG", quality=75))
    rgba = rng.integers(0, 256, (13, 17, 4), dtype=np.uint8)
    add("rgba.png", rgba, 8, "rgb", lambda p: Image.fromarray(rgba, "RGBA").save(p))
    palette = rng.integers(0, 256, (16, 3), dtype=np.uint8)
    index = rng.integers(0, 16, (9, 14), dtype=np.uint8)

    def save_palette(p):
        img = Image.fromarray(index, "P")
        img.putpalette(palette.ravel().tolist())
        img.save(p)
    add("palette.png", palette[index], 8, "rgb", save_palette)
    la = rng.integers(0, 256, (7, 11, 2), dtype=np.uint8)
    add("la.png", la[..., 0], 8, "gray", lambda p: Image.fromarray(la, "LA").save(p))
    bits = rng.random((6, 9)) < 0.5
    add("one-bit.png", np.where(bits, 255, 0).astype(np.uint8), 8, "gray",
        lambda p: Image.fromarray(bits).save(p))
    odd_name = rgb[:7, :9].copy()
    add('a b,c "q".png', odd_name, 8, "rgb", lambda p: Image.fromarray(odd_name).save(p))
    add("\u00fc.png", gray[:4], 8, "gray", lambda p: Image.fromarray(gray[:4]).save(p))
    deep = rng.integers(0, 65536, (13, 19), dtype=np.int64)
    deep[0, 0], deep[0, 1], deep[1, 0] = 0, 65535, 4096
    add("deep16.png", deep, 16, "gray", lambda p: write_png16(p, deep))
    deep_rgb = rng.integers(0, 65536, (11, 17, 3), dtype=np.int64)
    add("rgb16.png", deep_rgb, 16, "rgb", lambda p: write_png16(p, deep_rgb))
    upper = rng.integers(0, 256, (3, 5), dtype=np.uint8)
    add("Z.PNG", upper, 8, "gray", lambda p: Image.fromarray(upper).save(p))
    return top, samples


def walk_order(top):
    """The image files under top as lumahist must list them: each folder's
    entries in sorted byte order, folders descended where they sort."""
    found = []
    for name in sorted(os.listdir(os.fsencode(top))):
        path = os.path.join(top, os.fsdecode(name))
        if name.startswith(b"."):
            continue  # hidden: left out of folders
        if os.path.isdir(path):
            found += walk_order(path)
        elif os.path.isfile(path) and re.search(r"\.(png|jpe?g)$", path, re.IGNORECASE):
            found.append(path)
    return found


def expected(sample, matrix="bt601", range_="full", percentiles=DEFAULT_PERCENTILES, roi=None):
    y = sample.luma(matrix)
    if roi:
        x0, y0, w, h = roi
        y = y[y0:y0 + h, x0:x0 + w]
    rec = reference(y, sample.bit_depth, range_, percentiles, matrix)
    rec["path"] = sample.path
    rec["width"], rec["height"] = sample.size
    return rec


# --------------------------------------------------------------------------
# Groups of checks

def check_formats(tmp):
    """jsonl, csv and table on the generated set, every field."""
    top, samples = make_set(tmp)
    order = walk_order(top)
    # Byte order: capitals first, a folder where its name sorts ("a" < "a b" < "a.png").
    designed = ["B.png", "Z.PNG", "a/deeper/const.png", "a/gray.png", 'a b,c "q".png', "a.png"]
    check(order[:6] == [os.path.join(top, n) for n in designed],
          f"the test's own walk order is not as designed: {order[:6]}")
    check(set(order) == set(samples), "the test's walk misses files")

    # The decoding route used for samples/ agrees with the arrays the files were made of.
    for path, sample in samples.items():
        if sample.kind != "jpeg":
            y, depth = decoded_luma(path)
            check(depth == sample.bit_depth and np.array_equal(y, sample.luma()),
                  f"the test's own decoding of {path} differs from what it wrote")

    _, records, err = run_jsonl("--backend", "cpu", "--percentiles", PERCENTILES, top)
    check(err == "", f"stderr not empty on success: {err!r}")
    check([r.get("path") for r in records] == order,
          f"records not in sorted recursive order: {[r.get('path') for r in records]}")
    for rec in records:
        if rec.get("path") in samples:
            want = expected(samples[rec["path"]], percentiles=PERCENTILES)
            want["backend"] = "cpu"
            compare_record(rec, want, f"jsonl {rec['path']}")
    check(any(r["bit_depth"] == 16 and len(r["histogram"]) == 65536 for r in records),
          "no 16-bit record with 65536 bins")

    # Files named on the command line come in the order given.
    named = [os.path.join(top, "a.png"), os.path.join(top, "B.png")]
    _, recs, _ = run_jsonl("--backend", "cpu", *named)
    check([r["path"] for r in recs] == named, "named files not in command-line order")

    # auto: the same numbers, silent (no note without --verbose).
    _, auto_records, err = run_jsonl("--percentiles", PERCENTILES, top)
    check(err == "", f"--backend auto printed on stderr without --verbose: {err!r}")
    check(len(auto_records) == len(records) and
          all({**a, "backend": "cpu"} == r for a, r in zip(auto_records, records)),
          "--backend auto gives other numbers than cpu")
    _, _, err = run("stats", "--verbose", "--no-histogram", named[0], expect=0)
    check(err.startswith("lumahist: using the ") and err.count("\n") == 1,
          f"--verbose does not say which backend: {err!r}")

    # JSON is UTF-8: a byte of a name that is not is written as Python's
    # surrogateescape writes it (\udce9 for 0xe9), so the record keeps the
    # name (it was U+FFFD, and two such names were one): os.fsencode gives
    # it back, merge counts both, --skip-existing does the one not done.
    odd = os.path.join(tmp, "names")
    os.makedirs(odd)
    for name in (b"caf\xe9.png", b"caf\xe8.png"):
        shutil.copy(os.path.join(top, "Z.PNG"), os.fsdecode(os.path.join(os.fsencode(odd), name)))
    _, recs, _ = run_jsonl(odd)
    check([os.fsencode(r["path"]) for r in recs] ==
          [os.path.join(os.fsencode(odd), n) for n in (b"caf\xe8.png", b"caf\xe9.png")],
          f"non-UTF-8 names in jsonl: {[r['path'] for r in recs]}")
    kept = os.path.join(tmp, "names.jsonl")
    with open(kept, "w") as f:
        f.write(json.dumps(recs[0]) + "\n")
    merged = subprocess.run([LUMAHIST, "merge", kept, "-"], input=json.dumps(recs[1]).encode(),
                            capture_output=True)
    check(merged.returncode == 0 and json.loads(merged.stdout)["images"] == 2,
          f"merge of two non-UTF-8 names: {merged.stdout[:80]!r} {merged.stderr!r}")
    rc, _, err = run("stats", "--quiet", "-o", kept, "--skip-existing", odd, expect=0)
    with open(kept) as f:
        check([json.loads(line)["path"] for line in f] == [r["path"] for r in recs],
              f"--skip-existing over non-UTF-8 names: {err}")

    # csv: a header, then one row per image agreeing with jsonl.
    _, out, _ = run("stats", "--format", "csv", "--backend", "cpu", "--percentiles", PERCENTILES,
                    top, expect=0)
    rows = list(csv.reader(io.StringIO(out, newline="")))
    keys = [percentile_key(p) for p in PERCENTILES.split(",")]
    at = FIELDS.index("decoder") + 1
    header = (FIELDS[:at] + ["converted_from"] + FIELDS[at:-3] + [f"p{k}" for k in keys] +
              [f"p{k}_norm" for k in keys] + ["histogram"])
    check(rows and rows[0] == header, f"csv header {rows[0] if rows else None}")
    check(len(rows) - 1 == len(records), f"csv has {len(rows) - 1} rows, jsonl {len(records)}")
    for row, rec in zip(rows[1:], records):
        what = f"csv {rec['path']}"
        if not check(len(row) == len(header), f"{what}: {len(row)} columns"):
            continue
        cell = dict(zip(header, row))
        check(cell["converted_from"] == rec.get("converted_from", ""),
              f"{what}: converted_from {cell['converted_from']!r}")
        for f in FIELDS[:-3]:
            if f in STR_FIELDS:
                check(cell[f] == rec[f], f"{what}: {f} {cell[f]!r} != {rec[f]!r}")
            elif f in INT_FIELDS:
                check(cell[f].isdigit() and int(cell[f]) == rec[f], f"{what}: {f} {cell[f]!r}")
            else:
                check(float(cell[f]) == rec[f], f"{what}: {f} {cell[f]!r} != {rec[f]!r}")
        for k in keys:
            check(int(cell[f"p{k}"]) == rec["percentiles"][k], f"{what}: p{k}")
            check(float(cell[f"p{k}_norm"]) == rec["percentiles_norm"][k], f"{what}: p{k}_norm")
        check([int(c) for c in cell["histogram"].split(" ")] == rec["histogram"],
              f"{what}: histogram column")

    # table: a header and one aligned row per image with its numbers.
    _, out, _ = run("stats", "--format", "table", "--backend", "cpu", "--percentiles", "5,50,95",
                    top, expect=0)
    lines = out.splitlines()
    check(lines and lines[0].split()[:7] == ["path", "size", "mean", "std", "min", "median",
                                             "max"] and lines[0].split()[7:] == ["p5", "p50", "p95"],
          f"table header {lines[:1]}")
    check(len(lines) == len(records) + 1, f"table has {len(lines)} lines")
    widths = {len(line.rstrip()) for line in lines if line.isascii()}
    check(len(widths) == 1, f"table rows are not aligned: widths {widths}")
    for line, rec in zip(lines[1:], records):
        what = f"table {rec['path']}"
        if not check(line.startswith(rec["path"]), f"{what}: row {line!r}"):
            continue
        cells = line[len(rec["path"]):].split()
        want = [f"{rec['width']}x{rec['height']}", f"{rec['mean']:.2f}", f"{rec['stddev']:.2f}",
                str(rec["min"]), str(rec["median"]), str(rec["max"])]
        want += [str(rec["percentiles"][k]) for k in ("5", "50", "95")]
        check(cells == want, f"{what}: cells {cells}, expected {want}")

    # Names of wide (CJK), combining and non-UTF-8 characters: the columns
    # still line up in a terminal (wide characters take two), and a byte
    # that is not UTF-8 is shown as the records write it (it was written raw).
    names = os.path.join(tmp, "table-names")
    os.makedirs(names)
    size = f"{records[0]['width']}x{records[0]['height']}"
    for name in (b"plain.png", "名前.png".encode(), "e\u0301.png".encode(), b"\xff.png"):
        shutil.copy(records[0]["path"], os.path.join(names.encode(), name))
    proc = subprocess.run([LUMAHIST, "stats", "--format", "table", "--backend", "cpu",
                           "--decoder", "cpu", names], capture_output=True)
    rows = proc.stdout.decode("utf-8", "strict").splitlines()

    def columns(text):
        return sum(2 if unicodedata.east_asian_width(c) in "WF" else
                   0 if unicodedata.combining(c) else 1 for c in text)

    # Where each row's size column ends, in terminal columns.
    ends = {columns(row[:row.index(size) + len(size)]) for row in rows[1:] if size in row}
    check(proc.returncode == 0 and len(rows) == 5 and "\ufffd.png" in rows[-1] and
          len(ends) == 1, f"table of unusual names: {rows}")


def check_hidden(tmp, jpeg):
    """Hidden files and folders are left out of a folder (a Mac's ._ files,
    which are no images, failed every folder copied from a Mac; a thumbnail
    cache's pictures counted among the folder's); named, they are read.  A
    folder with nothing to read says so, exit 0."""
    top = os.path.join(tmp, "from-a-mac")
    os.makedirs(os.path.join(top, ".thumbnails"))
    os.makedirs(os.path.join(top, "sub"))
    shutil.copy(jpeg, os.path.join(top, "IMG.JPG"))
    with open(os.path.join(top, "._IMG.JPG"), "wb") as f:
        f.write(b"\0\5\26\7\0\2\0\0Mac OS X        " + bytes(64))
    shutil.copy(jpeg, os.path.join(top, ".thumbnails", "IMG.jpg"))
    shutil.copy(jpeg, os.path.join(top, "sub", ".hidden.jpg"))
    rc, recs, err = run_jsonl("--backend", "cpu", top)
    check(rc == 0 and not err and [r["path"] for r in recs] == [os.path.join(top, "IMG.JPG")],
          f"a folder with hidden entries: exit {rc}, {[r['path'] for r in recs]}, {err!r}")
    hidden = os.path.join(top, "sub", ".hidden.jpg")
    rc, recs, err = run_jsonl("--backend", "cpu", hidden)
    check(rc == 0 and len(recs) == 1 and recs[0]["path"] == hidden,
          f"a hidden file named: exit {rc}, {len(recs)} records, {err!r}")
    # -o - is standard output, not a file named "-".
    proc = subprocess.run([os.path.abspath(LUMAHIST), "stats", "--backend", "cpu", "-o", "-", jpeg],
                          cwd=tmp, capture_output=True)
    check(proc.returncode == 0 and proc.stdout.count(b"\n") == 1 and
          not os.path.exists(os.path.join(tmp, "-")),
          f"-o -: exit {proc.returncode}, {proc.stdout[:80]!r}, a file '-': "
          f"{os.path.exists(os.path.join(tmp, '-'))}")
    empty = os.path.join(tmp, "nothing-here")
    os.makedirs(empty)
    with open(os.path.join(empty, "notes.txt"), "w") as f:
        f.write("no pictures\n")
    rc, recs, err = run_jsonl("--backend", "cpu", empty)
    check(rc == 0 and not recs and err == f"lumahist: {empty}: no PNG, JPEG or video files in it\n",
          f"a folder with no images: exit {rc}, {len(recs)} records, {err!r}")


def check_extensions(tmp, jpeg, png):
    """A folder's JPEGs named .jpe or .jfif (Windows names a JPEG saved from
    a browser .jfif) are read as .jpg and .jpeg are, in any case: they were
    passed by; equalize writes each back under its own name, as a JPEG."""
    top = os.path.join(tmp, "extensions")
    os.makedirs(top)
    names = ["A.JPG", "b.jpe", "c.JFIF", "d.jfif", "e.Jpeg", "f.png"]
    for name in names:
        shutil.copy(png if name.endswith(".png") else jpeg, os.path.join(top, name))
    for other in ("g.tif", "h.jpgx", "i.jfi"):
        shutil.copy(jpeg, os.path.join(top, other))
    rc, recs, err = run_jsonl("--backend", "cpu", top)
    check(rc == 0 and not err and [os.path.basename(r["path"]) for r in recs] == names,
          f"a folder of JPEG extensions: exit {rc}, {[r['path'] for r in recs]}, {err!r}")
    out = os.path.join(tmp, "extensions-out")
    proc = subprocess.run([LUMAHIST, "equalize", "--backend", "cpu", "--out", out, top],
                          capture_output=True)
    written = sorted(os.listdir(out)) if os.path.isdir(out) else []
    heads = [open(os.path.join(out, n), "rb").read(4) for n in written]
    check(proc.returncode == 0 and written == sorted(names) and
          all(h[:3] == (b"\x89PN" if n.endswith(".png") else b"\xff\xd8\xff")
              for n, h in zip(written, heads)),
          f"equalize of a folder of JPEG extensions: exit {proc.returncode}, {written}, "
          f"{proc.stderr!r}")


def check_options(tmp):
    """--matrix, --range, --roi, --no-histogram, --percentile-method, --max-pixels, --backend."""
    top, samples = make_set(tmp)
    rgb = os.path.join(top, "B.png")
    rgb16 = os.path.join(top, "rgb16.png")
    deep = os.path.join(top, "deep16.png")
    jpeg = os.path.join(top, "colour.JPG")
    check_hidden(tmp, jpeg)
    check_extensions(tmp, jpeg, rgb)

    for matrix in MATRICES:
        for path in (rgb, rgb16, jpeg):
            _, recs, _ = run_jsonl("--backend", "cpu", "--matrix", matrix, path)
            if check(len(recs) == 1, f"--matrix {matrix} {path}: {len(recs)} records"):
                compare_record(recs[0], expected(samples[path], matrix=matrix),
                               f"--matrix {matrix} {path}")
    _, a, _ = run_jsonl("--backend", "cpu", "--no-histogram", "--matrix", "bt601", rgb)
    _, b, _ = run_jsonl("--backend", "cpu", "--no-histogram", "--matrix", "bt709", rgb)
    check(a and b and a[0]["mean"] != b[0]["mean"], "--matrix has no effect on an RGB PNG")

    _, recs, _ = run_jsonl("--backend", "cpu", "--range", "limited", top)
    for rec in recs:
        compare_record(rec, expected(samples[rec["path"]], range_="limited"),
                       f"--range limited {rec['path']}")
    check(any(r["below_legal"] > 0 for r in recs) and any(r["above_legal"] > 0 for r in recs),
          "--range limited: no image below or above the legal range")
    check(any(r["bit_depth"] == 16 and r["range"] == "limited" for r in recs),
          "--range limited: no 16-bit record")

    for path, roi in ((rgb, (3, 2, 10, 7)), (deep, (0, 0, 19, 1)), (deep, (18, 12, 1, 1)),
                      (jpeg, (5, 9, 40, 30))):
        arg = ",".join(map(str, roi))
        _, recs, _ = run_jsonl("--backend", "cpu", "--roi", arg, path)
        if check(len(recs) == 1, f"--roi {arg} {path}: {len(recs)} records"):
            compare_record(recs[0], expected(samples[path], roi=roi), f"--roi {arg} {path}")
    # A region outside an image fails that image only.
    small = os.path.join(top, "Z.PNG")
    rc, recs, err = run_jsonl("--backend", "cpu", "--roi", "10,10,20,10", rgb, small, expect=1)
    check([r["path"] for r in recs] == [rgb] and err.count("\n") == 1 and
          err.startswith(f"lumahist: {small}: "), f"--roi outside an image: {err!r}")

    _, recs, _ = run_jsonl("--backend", "cpu", "--no-histogram", top)
    check(recs and all("histogram" not in r for r in recs), "--no-histogram left a histogram")
    for rec in recs:
        compare_record(rec, expected(samples[rec["path"]]), f"--no-histogram {rec['path']}",
                       histogram=False)
    _, out, _ = run("stats", "--format", "csv", "--no-histogram", rgb, expect=0)
    check(out.splitlines()[0].split(",")[-1] == "p99_norm", "csv --no-histogram header")

    ps = "0,0.5,1,10,25,33.3,50,66.7,75,90,99,100"
    _, hist, _ = run_jsonl("--backend", "cpu", "--percentile-method", "hist", "-p", ps, top)
    _, sort, _ = run_jsonl("--backend", "cpu", "--percentile-method", "sort", "-p", ps, top)
    check(hist == sort and len(hist) == len(samples), "--percentile-method hist and sort differ")
    for rec in hist:
        compare_record(rec, expected(samples[rec["path"]], percentiles=ps),
                       f"--percentiles {ps} {rec['path']}")
    _, recs, _ = run_jsonl("--backend", "cpu", "--no-histogram", "-p", "50,1,50", rgb)
    check(recs and list(recs[0]["percentiles"]) == ["50", "1"], "repeated percentile kept")
    _, recs, _ = run_jsonl("--backend", "cpu", "--no-histogram", "-p", "", rgb)
    check(recs and recs[0]["percentiles"] == {}, "empty --percentiles")

    # No more decoding threads than files: one image with --jobs 100000 is
    # one thread, not a refusal of the system's (it was, and exit 1).
    rc, recs, err = run_jsonl("--backend", "cpu", "--no-histogram", "--jobs", "100000", rgb)
    check(len(recs) == 1 and not err, f"--jobs 100000, one image: {len(recs)} records, {err!r}")

    # --max-pixels: B.png has 851 pixels, Z.PNG 15.
    rc, recs, err = run_jsonl("--max-pixels", "100", rgb, small, expect=1)
    check([r["path"] for r in recs] == [small] and err.startswith(f"lumahist: {rgb}: ") and
          err.count("\n") == 1, f"--max-pixels: {err!r}")

    rc, recs, err = run_jsonl("--backend", "cuda", "--no-histogram", rgb, expect=None)
    if rc == 0:
        check(recs and recs[0]["backend"] == "cuda", "--backend cuda did not use CUDA")
        compare_record(recs[0], expected(samples[rgb]), "--backend cuda", histogram=False)
    else:
        check(rc == 1 and not recs and err.count("\n") == 1 and err.startswith("lumahist: "),
              f"--backend cuda without a device: status {rc}, stderr {err!r}")
    _, recs, _ = run_jsonl("--backend", "cpu", "--no-histogram", rgb)
    check(recs and recs[0]["backend"] == "cpu", "--backend cpu")


def check_errors(tmp):
    """Bad files, missing paths, usage errors, --help and --version."""
    top = os.path.join(tmp, "bad")
    os.makedirs(os.path.join(top, "sub"))
    rng = np.random.default_rng(7)
    good = rng.integers(0, 256, (8, 8), dtype=np.uint8)
    Image.fromarray(good).save(os.path.join(top, "1-good.png"))
    Image.fromarray(good).save(os.path.join(top, "sub", "4-good.jpg"), quality=90)
    whole = open(os.path.join(top, "1-good.png"), "rb").read()
    broken = os.path.join(top, "2-truncated.png")
    open(broken, "wb").write(whole[:len(whole) // 2])
    garbage = os.path.join(top, "3-garbage.jpg")
    open(garbage, "wb").write(b"this is not a JPEG file at all\n" * 10)
    empty = os.path.join(top, "sub", "5-empty.jpeg")
    open(empty, "wb").close()
    bad = [broken, garbage, empty]

    rc, recs, err = run_jsonl("--no-histogram", top, expect=1)
    check([r["path"] for r in recs] == [os.path.join(top, "1-good.png"),
                                        os.path.join(top, "sub", "4-good.jpg")],
          f"good files next to bad ones: {[r['path'] for r in recs]}")
    lines = err.splitlines()
    check(len(lines) == len(bad), f"expected {len(bad)} error lines, got {lines}")
    for path in bad:
        mine = [line for line in lines if line.startswith(f"lumahist: {path}: ")]
        check(len(mine) == 1 and len(mine[0]) > len(f"lumahist: {path}: ") and
              path not in mine[0][len(f"lumahist: {path}: "):],
              f"no single error line for {path}, with a reason not naming it again: {lines}")

    missing = os.path.join(tmp, "does-not-exist.png")
    rc, recs, err = run_jsonl("--no-histogram", missing, os.path.join(top, "1-good.png"),
                              expect=1)
    check(len(recs) == 1 and err == f"lumahist: {missing}: No such file or directory\n",
          f"missing path: {err!r}")
    # A link back up the tree: said once, not descended, not a failure.
    looped = os.path.join(tmp, "looped")
    os.makedirs(os.path.join(looped, "in"))
    Image.fromarray(good).save(os.path.join(looped, "in", "x.png"))
    os.symlink("..", os.path.join(looped, "in", "up"))
    rc, recs, err = run_jsonl("--no-histogram", looped, expect=0)
    check([r["path"] for r in recs] == [os.path.join(looped, "in", "x.png")] and
          err.count("\n") == 1 and err.startswith(f"lumahist: {looped}/in/up: "),
          f"a folder loop: {[r['path'] for r in recs]} {err!r}")
    # Links that reach one folder twice (an album and a "favourites" link to
    # it): its images once, the second name said, not a failure.  A chain of
    # folders each holding two links to the next is walked once a folder, not
    # 2^depth times.
    twice = os.path.join(tmp, "twice")
    os.makedirs(os.path.join(twice, "album"))
    Image.fromarray(good).save(os.path.join(twice, "album", "x.png"))
    os.symlink("album", os.path.join(twice, "favourites"))
    rc, recs, err = run_jsonl("--no-histogram", twice, expect=0)
    check([r["path"] for r in recs] == [os.path.join(twice, "album", "x.png")] and
          err == f"lumahist: {twice}/favourites: the same folder as {twice}/album, whose "
          "files are taken already; not descended again\n",
          f"one folder by two names: {[r['path'] for r in recs]} {err!r}")
    # A folder named twice, or after a folder that holds it: its files are
    # taken once and said taken already, not said missing ("no PNG, JPEG or
    # video files in it" came after).
    album = os.path.join(twice, "album")
    for args in ((album, album), (twice, album)):
        rc, recs, err = run_jsonl("--no-histogram", *args, expect=0)
        check([r["path"] for r in recs] == [os.path.join(album, "x.png")] and
              "no PNG" not in err and err.endswith(f"lumahist: {album}: the same folder as "
                                                   f"{album}, whose files are taken already; "
                                                   "not descended again\n"),
              f"a folder named again: {[r['path'] for r in recs]} {err!r}")
    chain = os.path.join(tmp, "chain")
    depth = 40
    for level in range(depth):
        os.makedirs(os.path.join(chain, f"l{level}"))
        if level + 1 < depth:
            for name in ("a", "b"):
                os.symlink(f"../l{level + 1}", os.path.join(chain, f"l{level}", name))
    Image.fromarray(good).save(os.path.join(chain, f"l{depth - 1}", "x.png"))
    try:
        proc = subprocess.run([LUMAHIST, "stats", "--format", "jsonl", "--no-histogram",
                               os.path.join(chain, "l0")], capture_output=True, timeout=30)
        records = proc.stdout.count(b"\n")
        check(proc.returncode == 0 and records == 1,
              f"a chain of sibling links: exit {proc.returncode}, {records} records")
    except subprocess.TimeoutExpired:
        fail(f"a chain of {depth} folders each with two links to the next: not done in 30 s")

    # A name with a newline, a tab or a terminal's escape sequence: still one
    # line a file, and nothing the terminal would act on (as \n, \t, \x1b).
    odd = os.path.join(tmp, "odd-names")
    os.makedirs(odd)
    # So are UTF-8's C1 controls (U+009B is a terminal's CSI) and its
    # bidirectional overrides (U+202E turned the rest of the line around):
    # they were written as they are.
    names = {"new\nline.png": "new\\nline.png", "tab\there.jpg": "tab\\there.jpg",
             "\x1b[2Jred.png": "\\x1b[2Jred.png", "csi\u009b31mX.png": "csi\\xc2\\x9b31mX.png",
             "bidi\u202egnp.exe.png": "bidi\\xe2\\x80\\xaegnp.exe.png"}
    for name in names:
        open(os.path.join(odd, name), "wb").write(b"not an image")
    rc, recs, err = run_jsonl(odd, expect=1)
    lines = err.splitlines()
    check(sorted(lines) == sorted(f"lumahist: {odd}/{shown}: not a PNG or JPEG file"
                                  for shown in names.values()),
          f"names with control characters: {err!r}")
    # In the table, each as one '?', as C0 controls are.
    shown = os.path.join(tmp, "odd-shown")
    os.makedirs(shown)
    for name in ("bidi\u202egnp.exe.png", "nel\u0085Y.png", "csi\u009b31mX.png"):
        shutil.copy(os.path.join(top, "1-good.png"), os.path.join(shown, name))
    rc, out, err = run("stats", "--format", "table", shown, expect=0)
    check(all(f"{shown}/{name}" in out for name in ("bidi?gnp.exe.png", "nel?Y.png",
                                                     "csi?31mX.png")) and
          not any(c in out for c in "\u202e\u0085\u009b"),
          f"names with C1 or bidirectional controls in the table: {out!r}")

    # A file named explicitly is tried whatever its name.
    named = os.path.join(top, "sub", "image.data")
    shutil.copy(os.path.join(top, "1-good.png"), named)
    rc, recs, err = run_jsonl("--no-histogram", named, expect=0)
    check(len(recs) == 1 and recs[0]["path"] == named, "a named file with another extension")
    for fmt in ("csv", "table"):
        rc, out, err = run("stats", "--format", fmt, top, expect=1)
        check(err.count("\n") == len(bad) and out.count("\n") == 3,
              f"--format {fmt} with bad files: {out!r} {err!r}")

    for args in (["stats", "--format", "xml", top], ["stats", "--percentiles", "1,200", top],
                 ["stats", "--percentiles", "1,,5", top], ["stats", "--matrix", "bt2021", top],
                 ["stats", "--range", "tv", top], ["stats", "--backend", "gpu", top],
                 ["stats", "--percentile-method", "quick", top], ["stats", "--roi", "1,2,3", top],
                 ["stats", "--roi", "0,0,0,5", top], ["stats", "--max-pixels", "-1", top],
                 ["stats", "--no-such-option", top], ["stats"], ["frobnicate", top], [],
                 ["--no-such-option"]):
        rc, out, err = run(*args, expect=2)
        check(out == "" and err.strip() != "", f"usage error {args}: {out!r} {err!r}")
    # Values outside an option's range are usage errors, not its default
    # (--clip -1 gave --clip 40's output, --quality 0 quality 95).
    out_dir = os.path.join(tmp, "never")
    for args in (["clahe", "--clip", "-1"], ["clahe", "--clip", "nan"], ["clahe", "--clip", "inf"],
                 ["clahe", "--clip", "4x"], ["overlay", "--opacity", "-0.1"],
                 ["overlay", "--opacity", "nan"], ["overlay", "--clip-warning", "-1"],
                 ["overlay", "--clip-warning", "2"], ["equalize", "--quality", "0"],
                 ["equalize", "--quality", "-1"], ["equalize", "--crf", "-1"],
                 ["stats", "--dark-below", "2"],
                 ["stats", "--bright-above", "-0.5"], ["stats", "--low-contrast-below", "nan"]):
        command = args[0]
        extra = [] if command == "stats" else ["--out", out_dir]
        rc, out, err = run(*args, *extra, os.path.join(top, "1-good.png"), expect=2)
        check(out == "" and err.count("\n") == 2 and args[1] in err,
              f"usage error {args}: {out!r} {err!r}")
    check(not os.path.exists(out_dir), "a usage error wrote images")
    # A value with a newline or a terminal's escape sequence (a pasted
    # variable) is written escaped, as lumahist writes names: the usage
    # error stays two lines, and nothing in it acts on the terminal.
    png = os.path.join(top, "1-good.png")
    for args in (["stats", "--format", "x\x1b[2J\ny"], ["merge", "--format", "x\x1b[2J\ny"],
                 ["equalize", "--out", out_dir, "--matrix", "x\x1b[2J\ny"],
                 ["clahe", "--out", out_dir, "--clip", "x\x1b[2J\ny"],
                 ["overlay", "--out", out_dir, "--scale", "x\x1b[2J\ny"],
                 ["stats", "--shard", "x\x1b[2J\ny"], ["x\x1b[2J\ny"]):
        rc, out, err = run(*args, png, expect=2)
        check(out == "" and err.count("\n") == 2 and "x\\x1b[2J\\ny" in err and "\x1b" not in err,
              f"usage error with control characters {args[:2]}: {out!r} {err!r}")
    # An empty output path ('' from an unset shell variable) was only
    # "lumahist: : No such file or directory" (exit 1, images written before a
    # --save-lut ''): a usage error naming the option.
    good_png = os.path.join(top, "1-good.png")
    records = os.path.join(tmp, "good.jsonl")
    run("stats", "-o", records, good_png, expect=0)
    for option, args in (("--output", ["stats", "-o", "", good_png]),
                         ("--output", ["stats", "--output=", good_png]),
                         ("--report", ["stats", "--report", "", good_png]),
                         ("--report", ["merge", "--report", "", records]),
                         ("--out", ["equalize", "--out", "", good_png]),
                         ("--out", ["clahe", "--out", "", good_png]),
                         ("--out", ["overlay", "--out", "", good_png]),
                         ("--save-lut", ["equalize", "--out", out_dir, "--save-lut", "", good_png])):
        rc, out, err = run(*args, expect=2)
        check(out == "" and err.count("\n") == 2 and
              err.startswith(f"lumahist: {option} '': an empty path names no "),
              f"empty path {args}: {out!r} {err!r}")
    check(not os.path.exists(out_dir), "an empty output path wrote images")
    # An empty input path read "lumahist: : No such file or directory", the
    # file seemingly left out of the line; the other files are still done.
    for args in (["stats", "", good_png], ["merge", "", records],
                 ["equalize", "--out", out_dir, "", good_png]):
        rc, out, err = run(*args, expect=1)
        check(err.startswith("lumahist: '': No such file or directory\n") and
              (args[0] == "merge" or os.path.basename(good_png) in out + str(
                  os.listdir(out_dir) if os.path.isdir(out_dir) else [])),
              f"empty input path {args}: {out!r} {err!r}")
    shutil.rmtree(out_dir, ignore_errors=True)
    # --output and --report naming one file (so, or through a link, to a
    # file or to a folder, before the file is there too): the page replaced
    # the records, exit 0.
    both = os.path.join(tmp, "both.out")
    os.symlink("both.out", os.path.join(tmp, "both-link"))
    os.symlink("both-link", os.path.join(tmp, "both-link-link"))
    os.symlink(".", os.path.join(tmp, "here"))
    for output, report in ((both, both), (both, os.path.join(tmp, ".", "both.out")),
                           (both, os.path.join(tmp, "both-link")),
                           (os.path.join(tmp, "both-link"), both),
                           (os.path.join(tmp, "both-link-link"), both),
                           (both, os.path.join(tmp, "here", "both.out"))):
        for existing in (False, True):
            if existing:
                open(both, "w").write("kept\n")
            rc, out, err = run("stats", "-o", output, "--report", report,
                               os.path.join(top, "1-good.png"), expect=2)
            kept = open(both).read() if os.path.exists(both) else None
            check("--report" in err and kept == ("kept\n" if existing else None),
                  f"-o {output} and --report {report} one file: {kept!r} {err!r}")
            if os.path.exists(both):
                os.unlink(both)
    for args in (["clahe", "--clip", "0"], ["clahe", "--clip", "2.5"],
                 ["overlay", "--opacity", "0"], ["equalize", "--quality", "1"]):
        rc, out, err = run(*args, "--quiet", "--out", out_dir, os.path.join(top, "1-good.png"),
                           expect=0)

    for args in (["--help"], ["-h"], ["stats", "--help"], ["stats", "-h"]):
        rc, out, err = run(*args, expect=0)
        check("Usage:" in out and "lumahist" in out and err == "", f"{args}: {out!r}")
    rc, out, _ = run("--help", expect=0)
    check("stats" in out, "top-level --help does not list stats")
    rc, out, _ = run("stats", "--help", expect=0)
    for option in ("--format", "--percentiles", "--matrix", "--range", "--backend", "--roi",
                   "--percentile-method", "--no-histogram", "--max-pixels"):
        check(option in out, f"stats --help does not describe {option}")
    # Every option a command takes is in its --help, the video options (a
    # group of their own, where the build reads video) too: GOption's main
    # group alone was written.
    for command, options in (("stats", ("--every", "--fps", "--video-timeout", "--video-memory")),
                             ("equalize", ("--codec", "--crf", "--bitrate", "--temporal-window"))):
        for option in options:
            taken = subprocess.run([LUMAHIST, command, option + "=1", "--help"],
                                   capture_output=True).returncode == 0
            rc, out, _ = run(command, "--help", expect=0)
            check(not taken or option in out, f"{command} takes {option}; its --help does not say so")
    # An option whose 0 the tool takes for its default says so in its --help
    # line (the usage errors did, the help did not).
    for option, zero in (("--max-pixels", "0: the default"), ("--jobs", "0: one per core")):
        run("stats", option, "0", "--quiet", os.path.join(top, "1-good.png"), expect=0)
        rc, out, _ = run("stats", "--help", expect=0)
        line = next((l for l in out.splitlines() if option + "=" in l), "")
        check(zero in line, f"stats --help: {option} takes 0 ({zero}), its line does not say so: {line!r}")
    rc, out, err = run("--version", expect=0)
    check(re.fullmatch(r"lumahist \d+\.\d+\.\d+\n", out) is not None, f"--version: {out!r}")


def check_samples(tmp, samples_dir):
    """The real photographs in samples/, against an independent decode."""
    files = walk_order(samples_dir) if os.path.isdir(samples_dir) else []
    if not files:
        print(f"note: no images in {samples_dir}; checking a generated photograph instead")
        samples_dir = os.path.join(tmp, "photos")
        os.makedirs(samples_dir)
        rng = np.random.default_rng(3)
        Image.fromarray(smooth_photo(rng, 480, 640)).save(os.path.join(samples_dir, "p.jpg"))
        Image.fromarray(smooth_photo(rng, 300, 400)).save(os.path.join(samples_dir, "p.png"))
        files = walk_order(samples_dir)
    for range_ in ("full", "limited"):
        rc, recs, err = run_jsonl("--backend", "cpu", "--range", range_, samples_dir)
        refused = []
        for path in files:
            decoded = decoded_luma(path)
            if decoded is None:
                refused.append(path)
                continue
            mine = [r for r in recs if r.get("path") == path]
            if not check(len(mine) == 1, f"{path}: {len(mine)} records"):
                continue
            y, depth = decoded
            want = reference(y, depth, range_, DEFAULT_PERCENTILES)
            want["path"] = path
            want["height"], want["width"] = y.shape
            compare_record(mine[0], want, f"samples {range_} {path}")
        check([r["path"] for r in recs] == [f for f in files if f not in refused],
              "samples: records not in sorted order")
        check(rc == (1 if refused else 0), f"samples: exit status {rc}, stderr {err!r}")
    print(f"checked {len(files)} images in {samples_dir}")


# --------------------------------------------------------------------------
# CMYK and YCCK JPEGs

def adobe_transform(path):
    """The transform byte of a JPEG's Adobe (APP14) marker, or None."""
    data = open(path, "rb").read()
    at = data.find(b"\xff\xee")
    while at >= 0:
        if data[at + 4:at + 9] == b"Adobe":
            return data[at + 15]
        at = data.find(b"\xff\xee", at + 2)
    return None


def write_ycck(path, cmyk, quality=92):
    """A YCCK JPEG of the H x W x 4 samples, by libjpeg-turbo's TurboJPEG API
    (tjCompress2 writes a CMYK source as YCCK, with the Adobe marker); False
    when libturbojpeg cannot be loaded."""
    import ctypes
    import ctypes.util
    name = ctypes.util.find_library("turbojpeg") or "libturbojpeg.so.0"
    try:
        tj = ctypes.CDLL(name)
    except OSError:
        return False
    tj.tjInitCompress.restype = ctypes.c_void_p
    tj.tjCompress2.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_int,
                               ctypes.c_int, ctypes.c_int, ctypes.POINTER(ctypes.c_void_p),
                               ctypes.POINTER(ctypes.c_ulong), ctypes.c_int, ctypes.c_int,
                               ctypes.c_int]
    tj.tjFree.argtypes = [ctypes.c_void_p]
    tj.tjDestroy.argtypes = [ctypes.c_void_p]
    TJPF_CMYK, TJSAMP_420 = 11, 2
    h, w, _ = cmyk.shape
    handle = tj.tjInitCompress()
    out, size = ctypes.c_void_p(), ctypes.c_ulong(0)
    src = np.ascontiguousarray(cmyk, dtype=np.uint8).tobytes()
    rc = tj.tjCompress2(handle, src, w, w * 4, h, TJPF_CMYK, ctypes.byref(out),
                        ctypes.byref(size), TJSAMP_420, quality, 0)
    if rc == 0:
        open(path, "wb").write(ctypes.string_at(out, size.value))
        tj.tjFree(out)
    tj.tjDestroy(handle)
    check(rc == 0, f"tjCompress2 failed for {path}")
    return rc == 0


def pillow_rgb(path):
    """Pillow's R'G'B' of an image file (CMYK JPEGs: its CMYK;I read and convert)."""
    with Image.open(path) as img:
        return np.asarray(img.convert("RGB"))


def check_cmyk(tmp):
    """CMYK and YCCK JPEGs: luma from the R'G'B' Pillow converts them to, the
    record saying so; equalize writes a colour JPEG of that R'G'B'."""
    # Pillow 9.4's CMYK -> RGB, on every (C, K): the rule src/io/jpeg.c uses
    # on libjpeg's Adobe-inverted samples c = 255 - C, k = 255 - K.
    c, k = np.meshgrid(np.arange(256), np.arange(256), indexing="ij")
    grid = np.zeros((256, 256, 4), np.uint8)
    grid[..., 0], grid[..., 1], grid[..., 2], grid[..., 3] = c, 255 - c, c // 2, k
    got = np.asarray(Image.fromarray(grid, "CMYK").convert("RGB")).astype(np.int64)
    ink, black = grid[..., :3].astype(np.int64), grid[..., 3:].astype(np.int64)
    check(np.array_equal(got, ((255 - ink) * (255 - black) + 127) // 255),
          "Pillow's CMYK -> RGB is not round((255 - C)(255 - K) / 255)")

    top = os.path.join(tmp, "cmyk")
    os.makedirs(top)
    rng = np.random.default_rng(18)
    files = {}
    # A photograph, separated by Pillow (its naive RGB -> CMYK, K = 0), and
    # random inks with black, odd sizes.
    photo_cmyk = os.path.join(top, "photo-cmyk.jpg")
    with Image.open(os.path.join(SAMPLES_DIR, "cat-chelsea.png")) as img:
        img.convert("RGB").convert("CMYK").save(photo_cmyk, "JPEG", quality=90)
    files[photo_cmyk] = "CMYK"
    y, x = np.mgrid[0:37, 0:53]
    smooth = np.stack([(x * 4 + y) % 256, (y * 6) % 256, (x * y) % 256, (x + y * 3) % 200], -1)
    inks = np.clip(smooth + rng.integers(-20, 21, smooth.shape), 0, 255).astype(np.uint8)
    noisy_cmyk = os.path.join(top, "inks-cmyk.jpg")
    Image.fromarray(inks, "CMYK").save(noisy_cmyk, "JPEG", quality=95)
    files[noisy_cmyk] = "CMYK"
    ycck = os.path.join(top, "inks-ycck.jpg")
    if write_ycck(ycck, inks):
        files[ycck] = "YCCK"
        photo_ycck = os.path.join(top, "photo-ycck.jpg")
        with Image.open(photo_cmyk) as img:
            write_ycck(photo_ycck, np.asarray(img))
        files[photo_ycck] = "YCCK"
    else:
        print("note: libturbojpeg (libjpeg-turbo-progs) cannot be loaded: no YCCK file checked")

    for path, space in files.items():
        # What each file is: Pillow (and libjpeg) write the Adobe marker,
        # transform 0 for CMYK and 2 for YCCK, and inverted samples.
        check(adobe_transform(path) == (0 if space == "CMYK" else 2),
              f"{path}: Adobe transform {adobe_transform(path)}")
        with Image.open(path) as img:
            check(img.mode == "CMYK", f"{path}: Pillow reads mode {img.mode}")
        y = luma(pillow_rgb(path), "bt601")
        for matrix in ("bt601", "bt709"):
            _, recs, _ = run_jsonl("--backend", "cpu", "--matrix", matrix,
                                   "--percentiles", PERCENTILES, path)
            if check(len(recs) == 1, f"{path}: {len(recs)} records"):
                want = reference(luma(pillow_rgb(path), matrix), 8, "full", PERCENTILES, matrix)
                want.update(path=path, width=y.shape[1], height=y.shape[0], matrix=matrix)
                compare_record(recs[0], want, f"{space} {path} {matrix}", converted_from=space)
    # A white (no ink) file is white: the polarity is Adobe's.
    blank = os.path.join(top, "blank.jpg")
    Image.fromarray(np.zeros((8, 8, 4), np.uint8), "CMYK").save(blank, "JPEG")
    _, recs, _ = run_jsonl("--backend", "cpu", "--no-histogram", blank)
    check(len(recs) == 1 and recs[0]["min"] == 255 and recs[0]["converted_from"] == "CMYK",
          f"a CMYK file with no ink: {recs}")
    # CSV says it too; PNG and YCbCr JPEG records do not.
    _, out, _ = run("stats", "--format", "csv", "--no-histogram", noisy_cmyk, expect=0)
    rows = list(csv.reader(io.StringIO(out, newline="")))
    check(len(rows) == 2 and dict(zip(rows[0], rows[1])).get("converted_from") == "CMYK",
          f"csv of a CMYK JPEG: {rows}")

    # equalize, clahe, overlay: a YCbCr JPEG of the converted R'G'B', with a
    # note on standard error; the run succeeds.
    for command in ("equalize", "clahe", "overlay"):
        out_dir = os.path.join(tmp, f"out-{command}")
        rc, _, err = run(command, "--out", out_dir, noisy_cmyk, expect=0)
        written = os.path.join(out_dir, os.path.basename(noisy_cmyk))
        check(err.count("\n") == 1 and err.startswith(f"lumahist: {noisy_cmyk}: a CMYK JPEG"),
              f"{command}: the note on a CMYK JPEG: {err!r}")
        if check(os.path.exists(written), f"{command}: no output {written}"):
            with Image.open(written) as img:
                check(img.mode == "RGB" and img.size == (53, 37) and
                      adobe_transform(written) is None,
                      f"{command}: output mode {img.mode} {img.size}")
    # Equalized: the luma of the output spreads wider than the input's.
    before = luma(pillow_rgb(noisy_cmyk), "bt601")
    after = luma(pillow_rgb(os.path.join(tmp, "out-equalize", "inks-cmyk.jpg")), "bt601")
    check(after.std() > before.std(), f"equalize: luma std {before.std()} -> {after.std()}")


SAMPLES_DIR = None
GROUPS = {"formats": check_formats, "options": check_options, "errors": check_errors,
          "samples": check_samples, "cmyk": check_cmyk}


def main():
    global LUMAHIST
    if len(sys.argv) != 4 or sys.argv[3] not in GROUPS:
        print(__doc__)
        return 2
    global SAMPLES_DIR
    LUMAHIST, samples_dir, group = sys.argv[1], sys.argv[2], sys.argv[3]
    SAMPLES_DIR = samples_dir
    with tempfile.TemporaryDirectory(prefix="lumahist-cli-") as tmp:
        if group == "samples":
            check_samples(tmp, samples_dir)
        else:
            GROUPS[group](tmp)
    if FAILURES:
        print(f"{len(FAILURES)} check(s) failed")
        return 1
    print(f"{group}: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
