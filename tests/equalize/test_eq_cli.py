#!/usr/bin/env python3
"""test_eq_cli.py: `lumahist equalize`, `clahe` and `overlay` on the
photographs of samples/: outputs in the same format, bit depth and JPEG
sampling under --out (every component's factors, odd chroma layouts made
by cjpeg included), values against OpenCV and numpy, inputs never
overwritten, LUT files, --global, and the exit statuses.

usage: test_eq_cli.py LUMAHIST SAMPLES_DIR
Exit 77 (skip) when OpenCV, numpy or Pillow for Python is missing."""
import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile

try:
    import cv2
    import numpy as np
    from PIL import Image, JpegImagePlugin, PngImagePlugin
except ImportError as e:
    print(f"SKIP: {e} (install python3-opencv python3-numpy python3-pil)")
    sys.exit(77)

LUMAHIST, SAMPLES = sys.argv[1], sys.argv[2]
FAILURES = []


def check(ok, message):
    if not ok:
        FAILURES.append(message)
        print("FAIL", message)
    return ok


def lumahist(*args):
    r = subprocess.run([LUMAHIST, *args], capture_output=True, text=True)
    return r.returncode, r.stderr


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def read(path):
    return cv2.imread(path, cv2.IMREAD_UNCHANGED)


def equalize_reference(hist, top):
    """equalizeHist's LUT for any depth: float32 scale, ties to even."""
    nz = np.nonzero(hist)[0]
    total = int(hist.sum())
    first = int(nz[0])
    if int(hist[first]) == total:
        return np.arange(len(hist))
    scale = np.float32(top) / np.float32(total - int(hist[first]))
    cum = np.cumsum(hist.astype(np.int64))
    cum = np.where(np.arange(len(hist)) > first, cum - int(hist[first]), 0)
    levels = np.rint(cum.astype(np.float32) * scale)
    return np.minimum(levels, top).astype(np.int64)


def setup(root):
    inputs = os.path.join(root, "in")
    os.makedirs(os.path.join(inputs, "sub"))
    names = sorted(n for n in os.listdir(SAMPLES) if n.lower().endswith((".png", ".jpg")))
    for i, name in enumerate(names):
        target = inputs if i % 2 == 0 else os.path.join(inputs, "sub")
        shutil.copy(os.path.join(SAMPLES, name), target)
    return inputs


def relative_images(folder):
    found = []
    for base, _, files in os.walk(folder):
        for f in files:
            if f.lower().endswith((".png", ".jpg")):
                found.append(os.path.relpath(os.path.join(base, f), folder))
    return sorted(found)


def same_kind(src, dst, name):
    a, b = Image.open(src), Image.open(dst)
    check(a.format == b.format and a.mode == b.mode and a.size == b.size,
          f"{name}: {a.format} {a.mode} {a.size} became {b.format} {b.mode} {b.size}")
    if a.format == "JPEG":
        check(JpegImagePlugin.get_sampling(a) == JpegImagePlugin.get_sampling(b),
              f"{name}: JPEG sampling {JpegImagePlugin.get_sampling(a)} became "
              f"{JpegImagePlugin.get_sampling(b)}")


def test_equalize(root, inputs):
    out = os.path.join(root, "eq")
    before = {n: digest(os.path.join(inputs, n)) for n in relative_images(inputs)}
    code, err = lumahist("equalize", inputs, "--out", out, "--backend", "cpu")
    check(code == 0, f"equalize: exit {code}: {err}")
    check(relative_images(out) == relative_images(inputs), "equalize: outputs mirror the inputs")
    for name in relative_images(inputs):
        same_kind(os.path.join(inputs, name), os.path.join(out, name), name)
        check(digest(os.path.join(inputs, name)) == before[name], f"{name}: input changed")
    for name in relative_images(inputs):
        base = os.path.basename(name)
        src, dst = read(os.path.join(inputs, name)), read(os.path.join(out, name))
        if base == "camera-gray.png":
            check(np.array_equal(dst, cv2.equalizeHist(src)), "camera-gray.png: not equalizeHist")
        if base == "mountain-trail-gray16.png":
            hist = np.bincount(src.ravel(), minlength=65536)
            want = equalize_reference(hist, 65535)[src]
            bad = int(np.count_nonzero(dst != want))
            check(bad == 0, f"16-bit equalization: {bad} pixels off the reference")


def test_clahe(root, inputs):
    out = os.path.join(root, "clahe")
    code, err = lumahist("clahe", inputs, "--out", out, "--tiles", "6x4", "--clip", "3",
                         "--backend", "cpu")
    check(code == 0, f"clahe: exit {code}: {err}")
    for name in relative_images(inputs):
        same_kind(os.path.join(inputs, name), os.path.join(out, name), name)
    src = read(os.path.join(SAMPLES, "camera-gray.png"))
    got = read(os.path.join(out, "camera-gray.png"))
    want = cv2.createCLAHE(clipLimit=3.0, tileGridSize=(6, 4)).apply(src)
    worst = int(np.abs(got.astype(int) - want).max())
    check(worst <= 1, f"clahe camera-gray.png: off OpenCV by {worst}")
    code, err = lumahist("clahe", inputs, "--out", out, "--tiles", "0x4")
    check(code == 2 and "--tiles" in err, f"clahe --tiles 0x4: exit {code}: {err}")


def test_never_overwrites(root, inputs):
    victim = os.path.join(inputs, "camera-gray.png")
    before = digest(victim)
    code, err = lumahist("equalize", victim, "--out", inputs)
    check(code == 1 and "not overwritten" in err, f"--out onto the input: exit {code}: {err}")
    check(digest(victim) == before, "an input was overwritten")
    # a folder into itself: every output would be its input
    code, err = lumahist("overlay", inputs, "--out", inputs)
    check(code == 1, f"overlay into its own folder: exit {code}")
    check(digest(victim) == before, "an input was overwritten by overlay")
    leftovers = [f for f in os.listdir(inputs) if f.startswith(".") or "tmp" in f]
    check(not leftovers, f"temporary files left: {leftovers}")
    code, err = lumahist("equalize", victim)
    check(code == 2 and "--out" in err, f"no --out: exit {code}: {err}")


def test_out_inside_the_folder(root, inputs):
    """--out below the folder walked: a second run (or a link to --out) must
    not take the first run's outputs for inputs, nor nest outputs in it."""
    folder = os.path.join(root, "photos")
    shutil.copytree(inputs, folder)
    names = relative_images(folder)
    out = os.path.join(folder, "equalized")
    os.symlink("equalized", os.path.join(folder, "link-to-out"))
    for run in (1, 2):
        code, err = lumahist("equalize", folder, "--out", out, "--backend", "cpu")
        check(code == 0, f"--out inside the folder, run {run}: exit {code}: {err}")
        check(relative_images(out) == names,
              f"run {run}: outputs {relative_images(out)} are not the inputs' {names}")
    for name in ("camera-gray.png", "sub/cat-chelsea.png"):
        if name in names:
            src = read(os.path.join(folder, name))
            got = read(os.path.join(out, name))
            if src.ndim == 2:
                check(np.array_equal(got, cv2.equalizeHist(src)),
                      f"{name}: the second run did not equalize the input")
    # the folder named itself is walked: its files would all be outputs of themselves
    code, err = lumahist("overlay", out, "--out", out)
    check(code == 1 and "not overwritten" in err, f"overlay of --out into itself: exit {code}: {err}")
    # The user's own subfolder as --out: its images are left out of the walk,
    # and were replaced in silence by the outputs of the same names (exit 0).
    # Refused but where they hold the bytes written now (a run redone, as
    # above), one line each; the other outputs written.
    album = os.path.join(root, "album")
    own = os.path.join(album, "2023")
    os.makedirs(own)
    shutil.copy(os.path.join(folder, "camera-gray.png"), os.path.join(album, "camera-gray.png"))
    shutil.copy(os.path.join(folder, "camera-gray.png"), os.path.join(album, "other.png"))
    mine = os.path.join(own, "camera-gray.png")
    cv2.imwrite(mine, 255 - read(os.path.join(folder, "camera-gray.png")))
    before = digest(mine)
    code, err = lumahist("equalize", album, "--out", own, "--backend", "cpu")
    check(code == 1 and digest(mine) == before and err.count("\n") == 1 and
          f"its output {mine} would replace an image that was there before the run" in err and
          os.path.exists(os.path.join(own, "other.png")),
          f"--out a subfolder holding the user's images: exit {code}, replaced: "
          f"{digest(mine) != before}: {err!r}")


def jpeg_helpers():
    """tests/io/make-jpeg-variants.py, which knows JPEG segments."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "io",
                        "make-jpeg-variants.py")
    spec = importlib.util.spec_from_file_location("make_jpeg_variants", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_metadata_kept(root):
    """A JPEG's Exif (a phone's orientation among it), ICC profile, IPTC,
    comments and XMP are in what equalize, clahe and overlay write; a
    converted CMYK file's ICC profile (of its inks) is not."""
    jpeg = jpeg_helpers()
    folder = os.path.join(root, "metadata")
    os.makedirs(folder)
    with open(os.path.join(SAMPLES, "sky-high-key.jpg"), "rb") as f:
        photo = f.read()
    with open(os.path.join(folder, "phone.jpg"), "wb") as f:
        f.write(jpeg.with_metadata(photo))
    cmyk = Image.open(os.path.join(SAMPLES, "rocket-pad-dusk.jpg")).convert("CMYK")
    exif = Image.Exif()
    exif[0x0112] = 8
    cmyk.save(os.path.join(folder, "print.jpg"), quality=90, exif=exif.tobytes(),
              icc_profile=b"a CMYK profile, not really")
    for command in ("equalize", "clahe", "overlay"):
        out = os.path.join(root, f"metadata-{command}")
        code, err = lumahist(command, folder, "--out", out)
        check(code == 0, f"{command} of JPEGs with metadata: exit {code}: {err}")
        for name, converted in (("phone.jpg", False), ("print.jpg", True)):
            with open(os.path.join(folder, name), "rb") as f:
                want = jpeg.carried_segments(f.read(), converted)
            path = os.path.join(out, name)
            got = None
            if os.path.exists(path):
                with open(path, "rb") as f:
                    got = jpeg.metadata_segments(f.read())
            check(got == want, f"{command} {name}: metadata segments "
                               f"{[(hex(c), len(b)) for c, b in got or []]}, expected "
                               f"{[(hex(c), len(b)) for c, b in want]}")
        if os.path.exists(os.path.join(out, "phone.jpg")):
            check(Image.open(os.path.join(out, "phone.jpg")).getexif().get(0x0112) == 6,
                  f"{command}: the orientation did not reach Pillow")
    check(any(code == 0xE2 for code, _ in jpeg.metadata_segments(
        open(os.path.join(folder, "print.jpg"), "rb").read())), "the CMYK test file has no ICC")

    # JFIF's pixel density: a 300 x 240 dpi scan came back unitless at 1:1
    # (libjpeg's default), as JFIF's APP0 is the writer's own.
    dense = os.path.join(root, "density")
    os.makedirs(dense)
    Image.open(os.path.join(SAMPLES, "cat-chelsea.png")).convert("RGB").save(
        os.path.join(dense, "scan.jpg"), quality=90, dpi=(300, 240))
    Image.open(os.path.join(SAMPLES, "camera-gray.png")).save(
        os.path.join(dense, "gray.jpg"), quality=90, dpi=(118, 59))
    for command in ("equalize", "clahe", "overlay"):
        out = os.path.join(root, f"density-{command}")
        code, err = lumahist(command, dense, "--out", out)
        check(code == 0, f"{command} of JPEGs with a density: exit {code}: {err}")
        for name in ("scan.jpg", "gray.jpg"):
            want = Image.open(os.path.join(dense, name)).info
            path = os.path.join(out, name)
            got = Image.open(path).info if os.path.exists(path) else {}
            check((got.get("jfif_unit"), got.get("jfif_density")) ==
                  (want["jfif_unit"], want["jfif_density"]),
                  f"{command} {name}: JFIF density {got.get('jfif_unit')} "
                  f"{got.get('jfif_density')}, expected {want['jfif_unit']} {want['jfif_density']}")


def test_png_metadata_kept(root):
    """A PNG's ICC profile, density, text (XMP among it) and Exif are in what
    equalize, clahe and overlay write."""
    folder = os.path.join(root, "png-metadata")
    os.makedirs(folder)
    profile = Image.open(os.path.join(SAMPLES, "rocket-pad-dusk.jpg")).info["icc_profile"]
    exif = Image.Exif()
    exif[0x0112] = 6
    text = PngImagePlugin.PngInfo()
    text.add_text("Title", "a scan")
    text.add_itxt("XML:com.adobe.xmp", "<x:xmpmeta/>")
    Image.open(os.path.join(SAMPLES, "cat-chelsea.png")).save(
        os.path.join(folder, "scan.png"), pnginfo=text, dpi=(300, 300), exif=exif.tobytes(),
        icc_profile=profile)
    want = Image.open(os.path.join(folder, "scan.png")).info
    check(set(want) >= {"Title", "XML:com.adobe.xmp", "dpi", "exif", "icc_profile"},
          f"the PNG test file lacks some metadata: {sorted(want)}")
    for command in ("equalize", "clahe", "overlay"):
        out = os.path.join(root, f"png-metadata-{command}")
        code, err = lumahist(command, folder, "--out", out)
        check(code == 0 and not err, f"{command} of a PNG with metadata: exit {code}: {err}")
        path = os.path.join(out, "scan.png")
        got = Image.open(path).info if os.path.exists(path) else {}
        check(got == want, f"{command}: metadata {sorted(got)}, the input's {sorted(want)}")
    # A text chunk whose CRC is wrong (libpng drops it on reading) is not
    # written back with a good CRC of its own.
    import struct
    import zlib
    with open(os.path.join(folder, "scan.png"), "rb") as f:
        data = f.read()
    body = b"Damaged\0a damaged chunk"
    bad = (struct.pack(">I", len(body)) + b"tEXt" + body +
           struct.pack(">I", zlib.crc32(b"tEXt" + body) ^ 1))
    cut = 8 + 25  # after the signature and IHDR
    with open(os.path.join(folder, "scan.png"), "wb") as f:
        f.write(data[:cut] + bad + data[cut:])
    out = os.path.join(root, "png-metadata-bad-crc")
    code, err = lumahist("equalize", folder, "--out", out)
    path = os.path.join(out, "scan.png")
    written = open(path, "rb").read() if os.path.exists(path) else b""
    check(code == 0 and b"Damaged" not in written and b"XML:com.adobe.xmp" in written,
          f"a chunk with a bad CRC: exit {code}: {err}; carried: {b'Damaged' in written}")


def test_animated_png(root):
    """An animated PNG (APNG) is written as a still PNG of its default image,
    equalized as that image alone is, and the tool says so for that file
    only, in both the batch and the --global path; the run goes on, exit 0.
    stats gives that image's record, and says so."""
    folder = os.path.join(root, "apng")
    os.makedirs(folder)
    rng = np.random.default_rng(41)
    frames = [Image.fromarray(rng.integers(0, 256, (40, 60, 3), dtype=np.uint8)) for _ in range(3)]
    frames[0].save(os.path.join(folder, "anim.png"), save_all=True, append_images=frames[1:],
                   duration=100, loop=0)
    frames[0].save(os.path.join(folder, "still.png"))
    check(Image.open(os.path.join(folder, "anim.png")).n_frames == 3, "the APNG has no frames")
    for extra in ((), ("--global",)):
        out = os.path.join(root, "apng-out" + "".join(extra))
        code, err = lumahist("equalize", folder, "--out", out, *extra)
        lines = err.splitlines()
        check(code == 0 and len(lines) == 1 and
              lines[0].startswith(f"lumahist: {os.path.join(folder, 'anim.png')}: an animated PNG "
                                  "of 3 frames: written as a still PNG"),
              f"equalize {extra} of an APNG: exit {code}: {err!r}")
        anim, still = (os.path.join(out, n) for n in ("anim.png", "still.png"))
        if os.path.exists(anim) and os.path.exists(still):
            written = open(anim, "rb").read()
            check(b"acTL" not in written and b"fcTL" not in written and
                  Image.open(anim).n_frames == 1, f"equalize {extra}: the output is still animated")
            if not extra:
                check(np.array_equal(read(anim), read(still)),
                      "the APNG's output is not its default image equalized")
        else:
            check(False, f"equalize {extra}: missing outputs in {sorted(os.listdir(out))}")
    # stats reads the same picture and says so (its record was the first
    # frame's, without a word).
    proc = subprocess.run([LUMAHIST, "stats", "--no-histogram", folder], capture_output=True,
                          text=True)
    records = [json.loads(line) for line in proc.stdout.splitlines()]
    check(proc.returncode == 0 and proc.stderr.splitlines() == [
              f"lumahist: {os.path.join(folder, 'anim.png')}: an animated PNG of 3 frames: its "
              "default image is read (the one viewers without animation show)"],
          f"stats of an APNG: exit {proc.returncode}: {proc.stderr!r}")
    by_name = {os.path.basename(r.pop("path")): r for r in records}
    check(sorted(by_name) == ["anim.png", "still.png"] and
          by_name["anim.png"] == by_name["still.png"],
          f"stats of an APNG: not its default image's record: {sorted(by_name)}")


def test_luts(root, inputs):
    one = os.path.join(inputs, "camera-gray.png")
    lut = os.path.join(root, "camera.lut")
    code, err = lumahist("equalize", one, "--out", os.path.join(root, "a"), "--save-lut", lut)
    check(code == 0, f"--save-lut: exit {code}: {err}")
    with open(lut) as f:
        header = f.readline().split()
        entries = [int(v) for v in f.read().split()]
    check(header == ["lumahist-lut", "1", "bit_depth", "8"] and len(entries) == 256,
          f"LUT file: {header} with {len(entries)} entries")
    src = read(one)
    hist = np.bincount(src.ravel(), minlength=256)
    check(entries == list(equalize_reference(hist, 255)), "saved LUT is not equalizeHist's")
    code, err = lumahist("equalize", one, "--out", os.path.join(root, "b"), "--apply-lut", lut)
    check(code == 0, f"--apply-lut: exit {code}: {err}")
    check(digest(os.path.join(root, "a", "camera-gray.png")) ==
          digest(os.path.join(root, "b", "camera-gray.png")), "--apply-lut of the saved LUT")
    code, err = lumahist("equalize", inputs, "--out", os.path.join(root, "c"), "--save-lut", lut)
    check(code == 2, f"--save-lut of many images without --global: exit {code}")
    code, err = lumahist("equalize", one, "--out", os.path.join(root, "c"), "--save-lut", one)
    check(code == 2 and digest(one) == digest(os.path.join(SAMPLES, "camera-gray.png")),
          f"--save-lut onto an input: exit {code}")
    # Onto its own output: refused (the output silently replaced the LUT).
    out_e = os.path.join(root, "e")
    code, err = lumahist("equalize", one, "--out", out_e, "--save-lut",
                         os.path.join(out_e, ".", "camera-gray.png"))
    check(code == 2 and not os.path.exists(out_e), f"--save-lut onto the output: exit {code} {err}")
    # Into --out when it is still missing (made first), and again with
    # --skip-existing when the image's output exists: the LUT is saved both
    # times (the second run wrote none, the first failed).
    inside = os.path.join(root, "f", "camera.lut")
    code, err = lumahist("equalize", one, "--out", os.path.join(root, "f"), "--save-lut", inside)
    check(code == 0 and os.path.exists(inside), f"--save-lut into a new --out: exit {code} {err}")
    os.unlink(inside)
    code, err = lumahist("equalize", one, "--out", os.path.join(root, "f"), "--skip-existing",
                         "--save-lut", inside)
    check(code == 0 and os.path.exists(inside) and open(inside).read() == open(lut).read(),
          f"--save-lut with --skip-existing: exit {code} {err}")
    # A LUT that cannot be saved is said before any input is read, as a
    # --report that cannot be: the images were written, exit 1.
    blocker = os.path.join(root, "a-file")
    open(blocker, "w").write("not a folder\n")
    # (--out is not made for it, unless the LUT goes into it.)
    out = os.path.join(root, "g")
    for lut_path, made in ((os.path.join(blocker, "x.lut"), None),
                           (os.path.join(out, "sub", "x.lut"), []),
                           (os.path.join(out, "x.lut", "y.lut"), [])):
        for extra in ([], ["--global"]):
            shutil.rmtree(out, ignore_errors=True)
            code, err = lumahist("equalize", *extra, one, "--out", out, "--save-lut", lut_path)
            written = os.listdir(out) if os.path.isdir(out) else None
            check(code == 1 and err.startswith(f"lumahist: {lut_path}: cannot be written in ") and
                  err.count("\n") == 1 and written == made,
                  f"--save-lut {lut_path} {extra}: exit {code}, {err!r}, --out holds {written}")
    bad = os.path.join(root, "bad.lut")
    with open(bad, "w") as f:
        f.write("lumahist-lut 1 bit_depth 8\n1 2 3\n")
    # A LUT that cannot be used leaves the run nothing to do: it is said
    # before --out is made (the folder was made, and left empty).
    code, err = lumahist("equalize", one, "--out", os.path.join(root, "d"), "--apply-lut", bad)
    check(code == 1 and "entry" in err and not os.path.exists(os.path.join(root, "d")),
          f"short LUT: exit {code}: {err}, --out made: {os.path.exists(os.path.join(root, 'd'))}")
    code, err = lumahist("equalize", one, "--out", os.path.join(root, "d"), "--apply-lut",
                         os.path.join(root, "no-such.lut"))
    check(code == 1 and "cannot read the LUT" in err and not os.path.exists(os.path.join(root, "d")),
          f"missing LUT: exit {code}: {err}, --out made: {os.path.exists(os.path.join(root, 'd'))}")
    with open(bad, "w") as f:
        f.write("lumahist-lut 1 bit_depth 8\n" + " ".join(["7"] * 257) + "\n")
    code, err = lumahist("equalize", one, "--out", os.path.join(root, "d"), "--apply-lut", bad)
    check(code == 1 and "more than 256 entries in an 8-bit LUT" in err,
          f"long LUT: exit {code}: {err}")
    # Each entry a whole number on its own: strtol read "254+253" as two
    # (255 items taken as 256 entries) and "1e2" as 1, then blamed the next.
    entries = [str(255 - v) for v in range(256)]
    for at, item, words in ((1, "254+253", None), (5, "1e2", None), (5, "5.5", None),
                            (5, "0x10", None), (5, "+5", None), (5, "-0", None),
                            (5, "99999999999999999999", None), (255, None, "missing")):
        items = entries[:at] + ([item] if item else []) + entries[at + 1:]
        if item == "254+253":
            items = entries[:1] + [item] + entries[3:]
        with open(bad, "w") as f:
            f.write("lumahist-lut 1 bit_depth 8\n" + " ".join(items) + "\n")
        code, err = lumahist("equalize", one, "--out", os.path.join(root, "d"), "--apply-lut", bad)
        said = (f"LUT entry {at} is missing" if words else
                f"LUT entry {at} ('{item}') is not a whole number in 0 .. 255")
        check(code == 1 and said in err and err.count("\n") == 1 and
              not os.path.exists(os.path.join(root, "d")),
              f"LUT with {item!r} at entry {at}: exit {code}: {err!r}")
    # A first line with more after the depth is no LUT (it read as an 8-bit
    # LUT whose entry 0 was bad); a Windows line end is one.
    for header, good in (("lumahist-lut 1 bit_depth 8x", False),
                         ("lumahist-lut 1 bit_depth 8 16", False),
                         ("lumahist-lut 1 bit_depth8", False),
                         ("lumahist-lut 1 bit_depth 8 \r", True)):
        with open(bad, "w") as f:
            f.write(header + "\n" + " ".join(str(v) for v in range(256)) + "\n")
        code, err = lumahist("equalize", one, "--out", os.path.join(root, "d"), "--apply-lut", bad)
        check(code == 0 if good else code == 1 and "not a LUT file (its first line must be" in err,
              f"LUT header {header!r}: exit {code}: {err}")


def test_global(root):
    folder = os.path.join(root, "grays")
    os.makedirs(folder)
    shutil.copy(os.path.join(SAMPLES, "camera-gray.png"), folder)
    shutil.copy(os.path.join(SAMPLES, "fog-pier-gray.jpg"), folder)
    out, lut = os.path.join(root, "global"), os.path.join(root, "global.lut")
    code, err = lumahist("equalize", "--global", folder, "--out", out, "--save-lut", lut)
    check(code == 0, f"--global: exit {code}: {err}")
    images = [read(os.path.join(folder, n)) for n in ("camera-gray.png", "fog-pier-gray.jpg")]
    hist = sum(np.bincount(i.ravel(), minlength=256) for i in images)
    table = equalize_reference(hist, 255)
    got = read(os.path.join(out, "camera-gray.png"))
    check(np.array_equal(got, table[images[0]]), "--global: camera-gray.png is not the "
          "folder LUT applied")
    with open(lut) as f:
        f.readline()
        check([int(v) for v in f.read().split()] == list(table), "--global: saved LUT")

    # --global --shard: every shard reads every input for the one LUT, but a
    # bad input is said, and fails the run, in its own shard only.
    open(os.path.join(folder, "bad.png"), "wb").write(b"not a PNG at all")
    shutil.copy(os.path.join(SAMPLES, "mountain-trail-gray16.png"), folder)
    said = []
    for i in range(3):
        out = os.path.join(root, f"global-shard{i}")
        code, err = lumahist("equalize", "--global", "--shard", f"{i}/3", folder, "--out", out)
        lines = err.splitlines()
        said += lines
        check(code == (1 if lines else 0), f"--global --shard {i}/3: exit {code}: {err}")
        if os.path.exists(os.path.join(out, "camera-gray.png")):
            check(np.array_equal(read(os.path.join(out, "camera-gray.png")), table[images[0]]),
                  f"--global --shard {i}/3: not the LUT of the folder's good images")
    check(len(said) == 2 and sum("bad.png: " in line for line in said) == 1 and
          sum("16-bit luma; --global needs" in line for line in said) == 1,
          f"--global --shard: each bad input said once over the shards: {said}")


def test_quality(root):
    src = os.path.join(SAMPLES, "rocket-pad-dusk.jpg")
    sizes = []
    for q in ("30", "95"):
        out = os.path.join(root, "q" + q)
        code, err = lumahist("equalize", src, "--out", out, "--quality", q)
        check(code == 0, f"--quality {q}: exit {code}: {err}")
        sizes.append(os.path.getsize(os.path.join(out, "rocket-pad-dusk.jpg")))
    check(sizes[0] < sizes[1], f"--quality 30 gives {sizes[0]} bytes, 95 gives {sizes[1]}")


def jpeg_components(path):
    """Each component's (id, h, v) sampling factors, as the file's SOF has them."""
    return [tuple(layer[:3]) for layer in Image.open(path).layer]


def test_odd_chroma_sampling(root):
    """JPEGs whose Cb and Cr are sampled unlike each other (or finer than Y),
    none of the usual 4:2:0, 4:2:2, 4:4:4 layouts, and gray ones whose
    component is not 1x1: each command writes every component's sampling
    factors back as the input had them, and equalize's luma is the input's
    luma equalized."""
    cjpeg = shutil.which("cjpeg")
    if not cjpeg:
        # tests/run.sh installs it; a host without it (the GPU hosts) says
        # so and runs the rest.
        print("note: odd chroma sampling not checked: no cjpeg (libjpeg-turbo-progs) to make "
              "the inputs")
        return
    folder = os.path.join(root, "odd-sampling")
    os.makedirs(folder)
    photo = read(os.path.join(SAMPLES, "rocket-pad-dusk.jpg"))[:149, :203]
    # Low contrast, so that equalization moves every level a long way.
    dull = (70 + photo.astype(np.float32) * 0.35).astype(np.uint8)
    ppm = os.path.join(root, "odd-sampling.ppm")
    cv2.imwrite(ppm, dull)
    layouts = ["2x2,1x1,2x1", "2x2,2x1,1x2", "1x1,2x2,1x1", "2x1,1x1,2x1"]
    layout_of = {}
    for layout in layouts:
        name = "y-cb-cr-" + layout.replace(",", "-") + ".jpg"
        with open(os.path.join(folder, name), "wb") as f:
            r = subprocess.run([cjpeg, "-sample", layout, "-quality", "95", ppm], stdout=f,
                               stderr=subprocess.PIPE, text=True)
        check(r.returncode == 0, f"cjpeg -sample {layout}: {r.stderr}")
        layout_of[name] = layout
    # A gray file's one component with factors other than 1x1: legal, and
    # changing only the header, but written back as 1x1 before.
    pgm = os.path.join(root, "odd-sampling.pgm")
    cv2.imwrite(pgm, cv2.cvtColor(dull, cv2.COLOR_BGR2GRAY))
    for layout in ("2x2", "1x2"):
        name = "gray-" + layout + ".jpg"
        with open(os.path.join(folder, name), "wb") as f:
            r = subprocess.run([cjpeg, "-grayscale", "-sample", layout, "-quality", "95", pgm],
                               stdout=f, stderr=subprocess.PIPE, text=True)
        check(r.returncode == 0, f"cjpeg -grayscale -sample {layout}: {r.stderr}")
        layout_of[name] = layout
    for command, extra in (("equalize", []), ("clahe", ["--tiles", "4x4"]),
                           ("overlay", ["--rect", "10,20,100,50"])):
        out = os.path.join(root, "odd-sampling-" + command)
        code, err = lumahist(command, folder, "--out", out, "--backend", "cpu", *extra)
        check(code == 0, f"{command} of odd chroma samplings: exit {code}: {err}")
        for name in layout_of:
            src, dst = os.path.join(folder, name), os.path.join(out, name)
            if not os.path.exists(dst):
                check(False, f"{command} {name}: no output")
                continue
            check(jpeg_components(dst) == jpeg_components(src),
                  f"{command} {name}: components (id, h, v) {jpeg_components(src)} became "
                  f"{jpeg_components(dst)}")
            if command != "equalize":
                continue
            luma = read(src)
            if luma.ndim == 3:
                luma = cv2.cvtColor(luma, cv2.COLOR_BGR2GRAY)
            got = cv2.imread(dst, cv2.IMREAD_GRAYSCALE).astype(np.int64)
            want = cv2.equalizeHist(luma).astype(np.int64)
            moved = float(np.abs(got - luma).mean())
            check(moved > 20, f"equalize {name}: luma moved by {moved:.1f} on average only")
            # Where Y is coarser than a chroma component (1x1 beside a 2x2
            # Cb), the encoder averages the equalized luma over each Y
            # sample's 2x2 pixels, and this dull picture's steep LUT makes
            # that average far from the LUT of the average: compared where
            # Y has every pixel.  Re-encoding at quality 95 costs about a
            # code value; equalization moves the dull luma by tens.
            if layout_of[name].startswith("1x1,"):
                continue
            off = float(np.abs(got - want).mean())
            check(off < 2.0, f"equalize {name}: luma off equalizeHist by {off:.2f} on average")


def test_jpeg_coding_kept(root):
    """Each command writes a JPEG in its input's coding: progressive (SOF2)
    or baseline, arithmetic (SOF9, SOF10) or Huffman, with its restart
    interval; a progressive file whose components cannot share a scan (more
    than 10 blocks an MCU) included.  They all came back baseline Huffman
    without restart markers."""
    jpeg = jpeg_helpers()
    folder = os.path.join(root, "coding")
    os.makedirs(folder)
    photo = read(os.path.join(SAMPLES, "rocket-pad-dusk.jpg"))[:149, :203]
    gray = cv2.cvtColor(photo, cv2.COLOR_BGR2GRAY)
    cv2.imwrite(os.path.join(folder, "baseline.jpg"), photo)
    cv2.imwrite(os.path.join(folder, "progressive.jpg"), photo,
                [cv2.IMWRITE_JPEG_PROGRESSIVE, 1])
    cv2.imwrite(os.path.join(folder, "progressive-gray.jpg"), gray,
                [cv2.IMWRITE_JPEG_PROGRESSIVE, 1])
    cv2.imwrite(os.path.join(folder, "restart-7.jpg"), photo, [cv2.IMWRITE_JPEG_RST_INTERVAL, 7])
    cv2.imwrite(os.path.join(folder, "progressive-restart-1.jpg"), photo,
                [cv2.IMWRITE_JPEG_PROGRESSIVE, 1, cv2.IMWRITE_JPEG_RST_INTERVAL, 1])
    cjpeg = shutil.which("cjpeg")
    if cjpeg:
        ppm = os.path.join(root, "coding.ppm")
        cv2.imwrite(ppm, photo)
        scans = os.path.join(root, "coding.scans")
        with open(scans, "w") as f:
            f.write("0: 0 0 0 0;\n1: 0 0 0 0;\n2: 0 0 0 0;\n"
                    "0: 1 63 0 0;\n1: 1 63 0 0;\n2: 1 63 0 0;\n")
        for name, args in (("arithmetic.jpg", ["-arithmetic"]),
                           ("progressive-arithmetic.jpg", ["-progressive", "-arithmetic"]),
                           ("progressive-12-blocks.jpg", ["-sample", "2x2,2x2,2x1", "-scans",
                                                          scans])):
            with open(os.path.join(folder, name), "wb") as f:
                r = subprocess.run([cjpeg, *args, ppm], stdout=f, stderr=subprocess.PIPE,
                                   text=True)
            check(r.returncode == 0, f"cjpeg {' '.join(args)}: {r.stderr}")
    else:
        print("note: arithmetic coding not checked: no cjpeg (libjpeg-turbo-progs) to make "
              "the inputs")
    for command in ("equalize", "clahe", "overlay"):
        out = os.path.join(root, "coding-" + command)
        code, err = lumahist(command, folder, "--out", out, "--backend", "cpu")
        check(code == 0, f"{command} of JPEGs of every coding: exit {code}: {err}")
        for name in sorted(os.listdir(folder)):
            src, dst = os.path.join(folder, name), os.path.join(out, name)
            if not os.path.exists(dst):
                check(False, f"{command} {name}: no output")
                continue
            with open(src, "rb") as f:
                want = jpeg.read_header(f.read())
            with open(dst, "rb") as f:
                got = jpeg.read_header(f.read())
            check((got.sof, got.restart_interval) == (want.sof, want.restart_interval),
                  f"{command} {name}: SOF {got.sof:#x}, restart interval "
                  f"{got.restart_interval}; the input's SOF {want.sof:#x}, restart interval "
                  f"{want.restart_interval}")
            check(got.components == want.components,
                  f"{command} {name}: components {got.components}, input {want.components}")
            check(read(dst) is not None, f"{command} {name}: OpenCV cannot read the output")


def png_row_filters(path):
    """The filter byte of each row of a non-interlaced PNG."""
    import struct
    import zlib
    data = open(path, "rb").read()
    at, idat, width, depth, channels = 8, b"", 0, 8, 1
    while at < len(data):
        length, kind = struct.unpack(">I4s", data[at:at + 8])
        body = data[at + 8:at + 8 + length]
        if kind == b"IHDR":
            width, depth, colour = struct.unpack(">I", body[:4])[0], body[8], body[9]
            channels = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}[colour]
        elif kind == b"IDAT":
            idat += body
        at += 12 + length
    raw = zlib.decompress(idat)
    stride = 1 + (width * channels * depth + 7) // 8
    return [raw[k] for k in range(0, len(raw), stride)]


def test_png_compression(root):
    """--png-compression: zlib's level for PNG outputs, libpng choosing each
    row's filter; by default OpenCV's imwrite (level 1, the SUB filter on
    every row, RLE); any level gives the same pixels; anything but 0 .. 9 is
    a usage error."""
    src = os.path.join(SAMPLES, "cat-chelsea.png")
    files = {}
    for level in ("0", "1", "9", None):
        out = os.path.join(root, f"level-{level}")
        extra = ["--png-compression", level] if level else []
        code, err = lumahist("equalize", src, "--out", out, *extra)
        check(code == 0, f"--png-compression {level}: exit {code}: {err}")
        files[level] = os.path.join(out, "cat-chelsea.png")
    sizes = {level: os.path.getsize(path) for level, path in files.items()}
    raw = read(src).size  # bytes of its samples: level 0 stores them as they are
    check(sizes["0"] > raw > sizes["1"] >= sizes["9"], f"PNG sizes by level: {sizes}, raw {raw}")
    default_filters = set(png_row_filters(files[None]))
    check(default_filters == {1}, f"default PNG: row filters {default_filters}, not SUB's 1")
    check(len(set(png_row_filters(files["1"]))) > 1,
          "--png-compression 1: libpng chose one filter for every row of a photograph")
    check(sizes[None] < raw, f"default PNG of {sizes[None]} bytes, raw {raw}")
    for level in ("0", "9"):
        check(np.array_equal(read(files[level]), read(files["1"])),
              f"--png-compression {level} changed the pixels")
    for command in ("clahe", "overlay"):
        out = os.path.join(root, f"{command}-level-0")
        code, err = lumahist(command, src, "--out", out, "--png-compression", "0")
        check(code == 0 and os.path.getsize(os.path.join(out, "cat-chelsea.png")) > raw,
              f"{command} --png-compression 0: exit {code}: {err}")
    for command in ("equalize", "clahe", "overlay"):
        for bad in ("10", "-1", "x", "", "1.5"):
            out = os.path.join(root, "refused")
            code, err = lumahist(command, src, "--out", out, "--png-compression", bad)
            check(code == 2 and err.count("lumahist: ") == 1 and "--png-compression" in err and
                  not os.path.exists(out),
                  f"{command} --png-compression {bad!r}: exit {code}: {err!r}")


def test_overlay(root, inputs):
    out = os.path.join(root, "overlay")
    code, err = lumahist("overlay", inputs, "--out", out, "--rect", "10,20,100,50",
                         "--scale", "linear")
    check(code == 0, f"overlay: exit {code}: {err}")
    for name in relative_images(inputs):
        same_kind(os.path.join(inputs, name), os.path.join(out, name), name)
    name = next(n for n in relative_images(inputs) if n.endswith("cat-chelsea.png"))
    src = read(os.path.join(inputs, name))
    got = read(os.path.join(out, name))
    inside = np.zeros(src.shape[:2], bool)
    inside[20:70, 10:110] = True
    changed = np.any(src != got, axis=-1) if src.ndim == 3 else src != got
    check(not np.any(changed & ~inside), "overlay changed pixels outside its panel")
    check(np.mean(changed[inside]) > 0.9, "overlay left its panel as it was")
    code, err = lumahist("overlay", inputs, "--out", out, "--opacity", "2")
    check(code == 2, f"overlay --opacity 2: exit {code}")


def default_panel(h, w):
    """Where the default panel lies: 2 % margins, w / 3 x h / 4."""
    panel = np.zeros((h, w), bool)
    panel[h - 6 - h // 4:h - 6, 8:8 + w // 3] = True
    return panel


def banded_alpha(h, w, dtype, top):
    """An alpha plane whose columns under the default panel are transparent,
    half and opaque in turn, opaque beyond it."""
    alpha = np.zeros((h, w), dtype)
    alpha[:, w // 8:w // 4] = top // 2
    alpha[:, w // 4:] = top
    return alpha


def check_panel_composited(name, src, got, panel, top):
    """The overlay of name (BGRA as OpenCV reads it, alpha of top at full)
    shows the panel wherever it is drawn, keeps opaque pixels opaque, and
    changes nothing outside it."""
    check(np.all(got[..., 3][panel] > 0),
          f"overlay {name}: the panel is transparent where the image is "
          f"(alpha {int(got[..., 3][panel].min())} in the panel)")
    check(np.all(got[..., 3][panel & (src[..., 3] == top)] == top),
          f"overlay {name}: the panel made opaque pixels transparent")
    check(np.array_equal(got[~panel], src[~panel]),
          f"overlay {name}: pixels outside the panel changed")


def test_overlay_alpha(root):
    """On an RGBA PNG the panel is composited over the image (straight
    alpha), so it shows where the image is transparent: it was blended into
    the colours only, the alpha kept, and a product photograph on a
    transparent background got an invisible panel.  Opaque pixels get the
    colours an RGB image gets; outside the panel nothing changes."""
    folder = os.path.join(root, "overlay-alpha")
    os.makedirs(folder)
    rng = np.random.default_rng(11)
    h, w = 300, 400
    panel = default_panel(h, w)
    for depth, dtype in ((8, np.uint8), (16, np.uint16)):
        top = (1 << depth) - 1
        colour = rng.integers(0, top + 1, (h, w, 3)).astype(dtype)
        alpha = banded_alpha(h, w, dtype, top)
        cv2.imwrite(os.path.join(folder, f"rgba{depth}.png"), np.dstack([colour, alpha]))
        cv2.imwrite(os.path.join(folder, f"rgb{depth}.png"), colour)
        opaque = np.dstack([colour, np.full((h, w), top, dtype)])
        cv2.imwrite(os.path.join(folder, f"opaque{depth}.png"), opaque)
    out = os.path.join(root, "overlay-alpha-out")
    code, err = lumahist("overlay", folder, "--out", out)
    check(code == 0, f"overlay of RGBA PNGs: exit {code}: {err}")
    for depth in (8, 16):
        top = (1 << depth) - 1
        src = read(os.path.join(folder, f"rgba{depth}.png"))
        got = read(os.path.join(out, f"rgba{depth}.png"))
        if not check(got is not None and got.shape == (h, w, 4),
                     f"overlay rgba{depth}.png: not written as RGBA"):
            continue
        check_panel_composited(f"rgba{depth}.png", src, got, panel, top)
        rgb = read(os.path.join(out, f"rgb{depth}.png"))
        opaque = read(os.path.join(out, f"opaque{depth}.png"))
        check(np.array_equal(opaque[..., :3], rgb) and np.all(opaque[..., 3] == top),
              f"overlay opaque{depth}.png: colours differ from the RGB image's")
        keep = src[..., 3] == top
        check(np.array_equal(got[..., :3][keep], rgb[keep]),
              f"overlay rgba{depth}.png: opaque pixels differ from the RGB image's")


def write_png_rows(path, rows, width, height, depth, colour_type):
    """A PNG of the filtered rows given (each with its filter byte), written
    here for the kinds that Pillow and OpenCV do not write."""
    import struct
    import zlib

    def chunk(kind, data):
        return (struct.pack(">I", len(data)) + kind + data +
                struct.pack(">I", zlib.crc32(kind + data)))
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" +
                chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, depth, colour_type, 0, 0,
                                           0)) +
                chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


def write_gray_alpha_png(path, gray, alpha):
    """A gray+alpha PNG (colour type 4) of 8 or 16 bits: OpenCV writes none."""
    depth = 8 * gray.dtype.itemsize
    height, width = gray.shape
    pairs = np.dstack([gray, alpha]).astype(">u2" if depth == 16 else np.uint8)
    rows = b"".join(b"\0" + pairs[y].tobytes() for y in range(height))
    write_png_rows(path, rows, width, height, depth, 4)


def test_overlay_gray_alpha(root):
    """On a gray+alpha PNG the panel was drawn into the gray samples alone,
    its alpha kept: invisible where the image is transparent (an icon's
    corners).  It is composited over the image as on RGBA: shown wherever
    it is drawn, opaque pixels as on the gray image without alpha, nothing
    outside the panel changed."""
    folder = os.path.join(root, "overlay-gray-alpha")
    os.makedirs(folder)
    rng = np.random.default_rng(12)
    h, w = 300, 400
    panel = default_panel(h, w)
    for depth, dtype in ((8, np.uint8), (16, np.uint16)):
        top = (1 << depth) - 1
        gray = rng.integers(0, top + 1, (h, w)).astype(dtype)
        alpha = banded_alpha(h, w, dtype, top)
        write_gray_alpha_png(os.path.join(folder, f"ga{depth}.png"), gray, alpha)
        cv2.imwrite(os.path.join(folder, f"gray{depth}.png"), gray)
    out = os.path.join(root, "overlay-gray-alpha-out")
    code, err = lumahist("overlay", folder, "--out", out)
    check(code == 0, f"overlay of gray+alpha PNGs: exit {code}: {err}")
    for depth in (8, 16):
        top = (1 << depth) - 1
        name = f"ga{depth}.png"
        with open(os.path.join(out, name), "rb") as f:
            colour_type = f.read(26)[25]
        check(colour_type == 4, f"overlay {name}: written as PNG colour type {colour_type}")
        src = read(os.path.join(folder, name))  # OpenCV gives gray+alpha as BGRA
        got = read(os.path.join(out, name))
        if not check(got is not None and got.shape == (h, w, 4), f"overlay {name}: not read"):
            continue
        check_panel_composited(name, src, got, panel, top)
        plain = read(os.path.join(out, f"gray{depth}.png"))
        keep = src[..., 3] == top
        check(np.array_equal(got[..., 0][keep], plain[keep]),
              f"overlay {name}: opaque pixels differ from the gray image's")
        # Where the image is transparent the panel shows as it is drawn:
        # the same gray whatever lay under it.
        clear = panel & (src[..., 3] == 0)
        check(len(np.unique(got[..., 0][clear])) < len(np.unique(src[..., 0][clear])) // 4,
              f"overlay {name}: the panel over transparency follows the pixels under it")


def test_overlay_nothing_drawn(root):
    """An image too small for a panel (under 3 pixels wide or high), or one
    that --rect misses, is written as it was, with one line on standard
    error saying so, exit status 0; overlay drew nothing there silently."""
    folder = os.path.join(root, "overlay-small")
    os.makedirs(folder)
    rng = np.random.default_rng(7)
    cv2.imwrite(os.path.join(folder, "narrow.png"), rng.integers(0, 256, (100, 2), np.uint8))
    cv2.imwrite(os.path.join(folder, "flat.png"), rng.integers(0, 256, (1, 50, 3), np.uint8))
    cv2.imwrite(os.path.join(folder, "narrow.jpg"), rng.integers(0, 256, (64, 2, 3), np.uint8))
    cv2.imwrite(os.path.join(folder, "large.png"), rng.integers(0, 256, (40, 60, 3), np.uint8))
    small = ("narrow.png", "flat.png", "narrow.jpg")
    for extra, missed in (([], small), (["--rect", "60,0,10,10"], small + ("large.png",))):
        out = os.path.join(root, "overlay-small-out" + ("-rect" if extra else ""))
        code, err = lumahist("overlay", folder, "--out", out, "--backend", "cpu", *extra)
        check(code == 0, f"overlay {extra} of small images: exit {code}: {err}")
        for name in sorted(os.listdir(folder)):
            src, dst = os.path.join(folder, name), os.path.join(out, name)
            said = [line for line in err.splitlines()
                    if line.startswith(f"lumahist: {src}: ") and "without the histogram panel"
                    in line]
            check(len(said) == (name in missed),
                  f"overlay {extra} {name}: said {said!r} (nothing drawn: {name in missed})")
            if not check(os.path.exists(dst), f"overlay {extra} {name}: no output"):
                continue
            if name in missed and name.endswith(".png"):
                check(np.array_equal(read(src), read(dst)),
                      f"overlay {extra} {name}: nothing drawn, yet the pixels changed")
        line = (f"{os.path.join(folder, 'narrow.png')}: --rect 60,0,10,10 is outside its 2x100 "
                "pixels" if extra else
                f"{os.path.join(folder, 'narrow.png')}: 2x100 pixels: written without the "
                "histogram panel, which needs 3x3 at least")
        check(line in err, f"overlay {extra}: no line {line!r} in {err!r}")


def write_low_bit_png(path, levels, depth):
    """A gray PNG of depth 1, 2 or 4 bits (which Pillow and OpenCV do not
    write) holding levels, an array of values 0 .. 2^depth - 1."""
    height, width = levels.shape
    per_byte = 8 // depth
    rows = b""
    for row in levels:
        packed = bytearray((width + per_byte - 1) // per_byte)
        for x, v in enumerate(row):
            packed[x // per_byte] |= int(v) << (8 - depth * (x % per_byte + 1))
        rows += b"\0" + bytes(packed)
    write_png_rows(path, rows, width, height, depth, 0)


def png_bit_depth(path):
    with open(path, "rb") as f:
        return f.read(25)[24]


def test_low_bit_png(root):
    """A 1, 2 or 4-bit gray PNG comes back at its depth while its values are
    still its levels, else at 8 bits: equalized levels fall between the
    4-bit ones, and rounded back to them two became one; an overlay on a
    bilevel scan was rounded away."""
    folder = os.path.join(root, "low-bit")
    os.makedirs(folder)
    rng = np.random.default_rng(18)
    four = np.minimum(rng.poisson(4, (48, 61)), 15)
    write_low_bit_png(os.path.join(folder, "four.png"), four, 4)
    one = (rng.random((40, 333)) < 0.9).astype(np.uint8)
    write_low_bit_png(os.path.join(folder, "one.png"), one, 1)
    check(np.array_equal(read(os.path.join(folder, "four.png")), (four * 17).astype(np.uint8)),
          "the 4-bit test file does not read back")
    out = os.path.join(root, "low-bit-eq")
    code, err = lumahist("equalize", folder, "--out", out)
    check(code == 0, f"equalize of low-bit PNGs: exit {code}: {err}")
    got = os.path.join(out, "four.png")
    if os.path.exists(got):
        want = cv2.equalizeHist((four * 17).astype(np.uint8))
        check(png_bit_depth(got) == 8 and np.array_equal(read(got), want),
              f"4-bit equalized: depth {png_bit_depth(got)}, "
              f"{int(np.count_nonzero(read(got) != want))} pixels off equalizeHist")
    got = os.path.join(out, "one.png")
    if os.path.exists(got):
        # two levels equalize to 0 and 255, still the 1-bit ones
        check(png_bit_depth(got) == 1 and np.array_equal(read(got), one * 255),
              f"1-bit equalized: depth {png_bit_depth(got)}")
    out = os.path.join(root, "low-bit-overlay")
    code, err = lumahist("overlay", os.path.join(folder, "one.png"), "--out", out)
    got = os.path.join(out, "one.png")
    check(code == 0 and os.path.exists(got), f"overlay of a 1-bit PNG: exit {code}: {err}")
    if os.path.exists(got):
        changed = np.count_nonzero(read(got) != one * 255)
        check(png_bit_depth(got) == 8 and changed > 1000,
              f"1-bit overlay: depth {png_bit_depth(got)}, {changed} pixels drawn")


def write_turned(folder, upright, **jpeg_options):
    """upright stored as each Exif orientation would have it, with that
    orientation, as o1.png .. o8.png and o1.jpg .. o8.jpg."""
    turn = {2: Image.FLIP_LEFT_RIGHT, 3: Image.ROTATE_180, 4: Image.FLIP_TOP_BOTTOM,
            5: Image.TRANSPOSE, 6: Image.ROTATE_90, 7: Image.TRANSVERSE, 8: Image.ROTATE_270}
    for o in range(1, 9):
        exif = Image.Exif()
        exif[0x0112] = o
        stored = upright.transpose(turn[o]) if o in turn else upright
        stored.save(os.path.join(folder, f"o{o}.png"), exif=exif.tobytes())
        stored.save(os.path.join(folder, f"o{o}.jpg"), exif=exif.tobytes(), quality=95,
                    **jpeg_options)


def test_overlay_orientation(root):
    """A photograph stored turned, with an Exif orientation, gets the panel
    that the upright photograph gets, where a viewer shows it: bottom-left,
    bars upright (it was drawn in the stored pixels, so upside down or on
    its side once turned).  PNG, so that pixels compare exactly; a JPEG's
    panel is looked for in its corner."""
    folder = os.path.join(root, "turned")
    os.makedirs(folder)
    upright = Image.open(os.path.join(SAMPLES, "cat-chelsea.png")).convert("RGB")
    upright = upright.crop((0, 0, 301, 200))  # odd, and not square
    write_turned(folder, upright)
    out = os.path.join(root, "turned-out")
    code, err = lumahist("overlay", folder, "--out", out, "--backend", "cpu")
    check(code == 0, f"overlay of turned photographs: exit {code}: {err}")
    from PIL import ImageOps
    want = np.asarray(Image.open(os.path.join(out, "o1.png")))
    before = np.asarray(upright)
    for o in range(1, 9):
        path = os.path.join(out, f"o{o}.png")
        if not os.path.exists(path):
            continue
        got = np.asarray(ImageOps.exif_transpose(Image.open(path)))
        check(got.shape == want.shape and np.array_equal(got, want),
              f"orientation {o}: the panel as shown differs from the upright photograph's in "
              f"{int(np.count_nonzero(np.any(got != want, axis=-1))) if got.shape == want.shape else got.shape} pixels")
        jpeg_in = ImageOps.exif_transpose(Image.open(os.path.join(folder, f"o{o}.jpg")))
        jpeg_out = ImageOps.exif_transpose(Image.open(os.path.join(out, f"o{o}.jpg")))
        drawn = np.abs(np.asarray(jpeg_out.convert("L"), int) -
                       np.asarray(jpeg_in.convert("L"), int)) > 24
        rows, cols = np.nonzero(drawn)
        check(rows.size > 0 and rows.min() > before.shape[0] // 2 and
              cols.max() < before.shape[1] // 2,
              f"orientation {o}: the JPEG's panel is not bottom-left as shown "
              f"(rows {rows.min() if rows.size else None}.., cols ..{cols.max() if cols.size else None})")


def test_clahe_orientation(root):
    """A photograph stored turned, with an Exif orientation, gets CLAHE on
    the grid of the picture as a viewer shows it (as OpenCV's imread turns
    it before createCLAHE): the same picture as the upright photograph's,
    bit for bit in PNG, within JPEG's noise in JPEG.  It got the grid of
    the stored pixels: a 8x3 grid ran down a photograph shown on its side.
    The default backend and decoder: nvJPEG and CUDA on a GPU host."""
    folder = os.path.join(root, "clahe-turned")
    os.makedirs(folder)
    upright = Image.open(os.path.join(SAMPLES, "fog-lake-low-contrast.jpg")).convert("RGB")
    upright = upright.crop((0, 0, 301, 203))  # odd, not square, no tile count divides
    write_turned(folder, upright, subsampling=0)
    out = os.path.join(root, "clahe-turned-out")
    code, err = lumahist("clahe", folder, "--out", out, "--tiles", "8x3", "--clip", "3")
    check(code == 0, f"clahe of turned photographs: exit {code}: {err}")
    from PIL import ImageOps
    want = np.asarray(Image.open(os.path.join(out, "o1.png")))
    want_jpeg = np.asarray(Image.open(os.path.join(out, "o1.jpg")).convert("L"), int)
    for o in range(2, 9):
        path = os.path.join(out, f"o{o}.png")
        if not os.path.exists(path):
            check(False, f"clahe orientation {o}: no output")
            continue
        got = np.asarray(ImageOps.exif_transpose(Image.open(path)))
        check(got.shape == want.shape and np.array_equal(got, want),
              f"clahe orientation {o}: the picture as shown differs from the upright "
              f"photograph's in "
              f"{int(np.count_nonzero(np.any(got != want, axis=-1))) if got.shape == want.shape else got.shape} pixels")
        jpeg = np.asarray(ImageOps.exif_transpose(
            Image.open(os.path.join(out, f"o{o}.jpg"))).convert("L"), int)
        mean = float(np.abs(jpeg - want_jpeg).mean()) if jpeg.shape == want_jpeg.shape else 255
        check(mean < 1.5, f"clahe orientation {o}: the JPEG as shown is {mean:.2f} off the "
              f"upright one's on average")


def test_bad_file(root):
    folder = os.path.join(root, "mixed")
    os.makedirs(folder)
    shutil.copy(os.path.join(SAMPLES, "camera-gray.png"), folder)
    with open(os.path.join(folder, "broken.png"), "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\nnot really")
    out = os.path.join(root, "mixed-out")
    code, err = lumahist("equalize", folder, "--out", out)
    check(code == 1 and "broken.png" in err, f"a broken file: exit {code}: {err}")
    check(os.path.exists(os.path.join(out, "camera-gray.png")), "the good file after a bad one")


def test_long_names(root):
    """Names as long as the file system takes (255 bytes: a long title in
    CJK is 85 characters): each output is written under its name, through a
    temporary file whose name had the whole name in it and was too long."""
    folder = os.path.join(root, "long")
    os.makedirs(folder)
    longest = os.pathconf(folder, "PC_NAME_MAX")
    names = ["x" * (longest - 4) + ".png", "写" * ((longest - 4) // 3) + ".jpg",
             "y" * 200 + ".jpg"]
    for name in names:
        source = "camera-gray.png" if name.endswith(".png") else "fog-pier-gray.jpg"
        shutil.copy(os.path.join(SAMPLES, source), os.path.join(folder, name))
    for command in ("equalize", "overlay"):
        out = os.path.join(root, "long-" + command)
        code, err = lumahist(command, folder, "--out", out, "--backend", "cpu")
        check(code == 0, f"{command} of names of {longest} bytes: exit {code}: {err}")
        check(sorted(os.listdir(out)) == sorted(names),
              f"{command} of long names: {[n[:8] for n in os.listdir(out)]} written")
    got = read(os.path.join(root, "long-equalize", names[0]))
    check(got is not None and np.array_equal(got, cv2.equalizeHist(
        read(os.path.join(SAMPLES, "camera-gray.png")))), "a long-named PNG: not equalizeHist")
    # --save-lut (and --report) replace their file through a temporary one too.
    lut = os.path.join(root, "l" * (longest - 4) + ".lut")
    code, err = lumahist("equalize", os.path.join(folder, names[0]), "--out",
                         os.path.join(root, "long-lut"), "--save-lut", lut)
    check(code == 0 and os.path.exists(lut), f"--save-lut to a name of {longest} bytes: "
          f"exit {code}: {err}")


def main():
    root = tempfile.mkdtemp(prefix="lh-eq-cli-")
    try:
        inputs = setup(root)
        test_equalize(root, inputs)
        test_clahe(root, inputs)
        test_never_overwrites(root, inputs)
        test_out_inside_the_folder(root, inputs)
        test_metadata_kept(root)
        test_png_metadata_kept(root)
        test_low_bit_png(root)
        test_animated_png(root)
        test_luts(root, inputs)
        test_global(root)
        test_quality(root)
        test_odd_chroma_sampling(root)
        test_jpeg_coding_kept(root)
        test_png_compression(root)
        test_overlay(root, inputs)
        test_overlay_alpha(root)
        test_overlay_gray_alpha(root)
        test_overlay_nothing_drawn(root)
        test_overlay_orientation(root)
        test_clahe_orientation(root)
        test_bad_file(root)
        test_long_names(root)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    if FAILURES:
        print(f"{len(FAILURES)} failure(s)")
        return 1
    print("equalize, clahe and overlay commands pass")
    return 0


if __name__ == "__main__":
    sys.exit(main())
