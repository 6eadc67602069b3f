#!/usr/bin/env python3
"""test_gpu_encode.py: equalize, clahe and overlay of JPEGs decoded, changed
and encoded on the GPU (nvJPEG), against the CPU path (libjpeg-turbo).

Usage: test_gpu_encode.py LUMAHIST SAMPLES_DIR MAKE_JPEG_VARIANTS

Run by a Python with OpenCV and numpy (else exit 77, saying why) on a host
where `--decoder gpu` can run (else exit 77 with the tool's reason).  It
writes tests/io/make-jpeg-variants.py's JPEGs (4:2:0, 4:2:2, 4:4:4, 4:4:0,
4:1:1, gray, progressive, restart markers, odd sizes from 1x1, noise, flat,
and files nvJPEG is not given) and, for each command, runs
`--decoder gpu --verbose --timing` and `--decoder cpu` over them, and checks:

- the same exit status and the same outputs, each a JPEG that OpenCV
  decodes, of the input's size, component count and coding (progressive
  or not), and for YCbCr inputs the input's luma sampling factors (so its
  chroma subsampling), and its metadata (Exif, ICC profile, IPTC,
  comments, XMP; not a CMYK file's profile);
- every JPEG was either encoded by nvJPEG (counted by --timing's "GPU
  encoding" line) or named by --verbose with the reason it was done on the
  CPU: the two add up to the JPEGs, and nvJPEG encoded some; those of
  cpu-fallback/ are named; a named one's output is the file --decoder cpu
  writes, byte for byte;
- --quality reaches nvJPEG: the luma quantization table of a --quality 30
  output is coarser than that of a --quality 95 one;
- the luma of each GPU output is close to a reference and to the CPU
  path's, and the chroma of each colour output to the CPU path's (bounds
  below; each file's figures and the worst are printed).
"""
import importlib.util
import os
import re
import subprocess
import sys
import tempfile

try:
    import cv2
    import numpy as np
except ImportError as e:
    print(f"SKIP: needs OpenCV's and numpy's Python modules ({e})")
    sys.exit(77)

LUMAHIST = None
TIMEOUT = 600
FAILURES = []
NO_GPU_PREFIX = "lumahist: --decoder gpu: "
CPU_FALLBACK = "cpu-fallback"

# Bounds on the luma (Y, 0..255) of the outputs decoded by OpenCV
# (IMREAD_GRAYSCALE: libjpeg's Y, no colour conversion), per file.
#
# Against a reference computed from the input's decoded Y (equalize:
# cv2.equalizeHist, whose LUT lumahist's is on 8-bit luma; clahe:
# createCLAHE(40, 8x8), which lumahist's is within 1 of; overlay: the input
# itself outside the histogram panel): what separates them is nvJPEG's
# decoder (the same luma as libjpeg-turbo on the engines, within 1 code
# value on the hybrid decoder), a LUT step where such a difference crosses
# it, and the JPEG encoding's loss at the quality asked for (95).  The
# reference re-encoded by libjpeg-turbo at quality 95 is up to 1.63 mean,
# 5 at the 99th percentile, from itself (odd-size/7x5-gray.jpg; measured
# over make-jpeg-variants.py's files with OpenCV 4.6).
REFERENCE_MEAN = 2.0   # mean |dY|
# 99th percentile of |dY|: CLAHE (clip 40) amplifies the hybrid decoder's
# one-code differences of progressive files in flat, dark tiles (9 and 11 on
# two such files, an H200, 2026-11-26).
REFERENCE_P99 = {"equalize": 7, "clahe": 12, "overlay": 7}
# Against the CPU path's output.  Gray files take the same way on both (Y
# changed, then encoded): two encodings' loss apart.
CPU_MEAN_GRAY = 2.5
CPU_P99_GRAY = 8
# Colour files take one colour rule on both paths (lumahist.h): the CPU path
# decodes them to R'G'B' and scales each pixel's R'G'B' by new/old luma; the
# GPU path rewrites Y and scales Cb - 128, Cr - 128 by the same gain
# (LH_CHROMA_SCALE, over each chroma sample's footprint), which is that rule
# in Y'CbCr, except that the CPU path clips R'G'B' at 255 where the
# equalization brightens saturated colours, and encodes the clipped R'G'B'
# again: that lowers its luma there, while the GPU path's Y stays the
# equalized one.  Measured distance of the CPU path's luma from the Y-only
# reference (OpenCV 4.6's variants, no 4:2:2 or 4:4:4 among them): equalize
# up to 8.1 mean (21 % of a 143-pixel file over 16), clahe up to 27.6 (54 %),
# overlay outside the panel 1.6.  The luma bounds below add the GPU's own 2
# to those: a guard against a change that moves the GPU path further.
CPU_MEAN_COLOUR = {"equalize": 10.0, "clahe": 30.0, "overlay": 3.5}
# The chroma (Cr, Cb of OpenCV's YCrCb of the decoded outputs, mean |dC|
# over both; overlay outside its panel) against the CPU path's.  Measured
# without a GPU by emulating the GPU path on the CPU (OpenCV's decoded Y,
# its chroma averaged over each footprint, lumahist's equalization and
# LH_CHROMA_SCALE, encoded by libjpeg-turbo at quality 95) over
# make-jpeg-variants.py's 64 colour files that nvJPEG takes: equalize up to
# 2.7, clahe up to 7.4 (small corpus files that CLAHE saturates: the clip),
# overlay 1.6.  Keeping Cb and Cr instead (the rule the GPU path had before)
# gave up to 15.7 and 35.2, and 33 and 17 files over these bounds.
# Noise files (noise/*.jpg) are where two encoders' chroma differs most:
# 4.6 to 5.6 for equalize and for overlay (outside the panel, where nothing
# changed), an H200, 2026-11-26; photographs stay under 3.
CPU_CHROMA_MEAN = {"equalize": 6.5, "clahe": 12.0, "overlay": 6.5}


def fail(message):
    FAILURES.append(message)
    print("FAIL:", message)


def check(condition, message):
    if not condition:
        fail(message)
    return condition


def run(*args):
    try:
        p = subprocess.run([LUMAHIST, *args], capture_output=True, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        fail(f"lumahist {' '.join(args)}: timed out after {TIMEOUT} s")
        return 124, "", ""
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def load_variants_module(path):
    spec = importlib.util.spec_from_file_location("make_jpeg_variants", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def files_under(top):
    found = []
    for folder, _, names in os.walk(top):
        found += [os.path.relpath(os.path.join(folder, n), top) for n in names
                  if n.lower().endswith((".jpg", ".jpeg", ".png"))]
    return sorted(found)


def is_jpeg(path):
    return path.lower().endswith((".jpg", ".jpeg"))


def luma_table_sum(data):
    """The sum of the first quantization table (luma's, table 0) of a JPEG."""
    i = 2
    while i + 4 <= len(data) and data[i] == 0xFF:
        code = data[i + 1]
        length = (data[i + 2] << 8) | data[i + 3]
        if code == 0xDB:
            body = data[i + 4:i + 2 + length]
            k = 0
            while k < len(body):
                precision, table = body[k] >> 4, body[k] & 15
                size = 128 if precision else 64
                values = body[k + 1:k + 1 + size]
                if table == 0:
                    if precision:
                        return sum((values[2 * j] << 8) | values[2 * j + 1] for j in range(64))
                    return sum(values)
                k += 1 + size
        if code == 0xDA:
            break
        i += 2 + length
    return None


# The pixels as stored, as lumahist works on them: OpenCV would otherwise
# turn an image by its Exif orientation (the metadata variant's is 6), and
# CLAHE's tiles and the overlay's panel with it.
STORED = cv2.IMREAD_IGNORE_ORIENTATION


def luma(path):
    return cv2.imread(path, cv2.IMREAD_GRAYSCALE | STORED)


def chroma(path):
    """Cr and Cb (0..255, full-range BT.601 as JPEG's) of a colour JPEG as
    OpenCV decodes it."""
    image = cv2.imread(path, cv2.IMREAD_COLOR | STORED)
    return None if image is None else cv2.cvtColor(image, cv2.COLOR_BGR2YCrCb)[..., 1:]


def differences(a, b):
    d = np.abs(a.astype(np.int16) - b.astype(np.int16))
    return float(d.mean()), float(np.percentile(d, 99)), int(d.max()), float((d > 16).mean())


def overlay_mask(shape, orientation):
    """True outside the overlay's default panel (as src/overlay.c places it:
    bottom-left, a third of the width and a quarter of the height, at least
    64x32, 2 % in from the sides, in the image as a viewer turns it by its
    Exif orientation) with a margin of 16 pixels, the largest MCU, around it:
    the encoding spreads the panel's edges that far.  shape: as stored."""
    shown = shape[::-1] if orientation >= 5 else shape
    mask = upright_overlay_mask(shown)
    # the stored pixels under each shown one (the inverse of the viewer's turn)
    return {2: np.fliplr, 3: lambda m: np.rot90(m, 2), 4: np.flipud, 5: np.transpose,
            6: lambda m: np.rot90(m, 1), 7: lambda m: np.rot90(m.T, 2),
            8: lambda m: np.rot90(m, -1)}.get(orientation, lambda m: m)(mask)


def upright_overlay_mask(shape):
    height, width = shape
    margin_x, margin_y = (width * 2 + 50) // 100, (height * 2 + 50) // 100
    w, h = width // 3, height // 4
    if w < 64:
        w = min(width, 64)
    if h < 32:
        h = min(height, 32)
    margin_x = min(margin_x, width - w)
    margin_y = min(margin_y, height - h)
    x, y = margin_x, height - margin_y - h
    mask = np.ones(shape, dtype=bool)
    mask[max(y - 16, 0):min(y + h + 16, height), max(x - 16, 0):min(x + w + 16, width)] = False
    return mask


def shown(stored, orientation):
    """The picture a viewer shows of stored pixels with this Exif orientation."""
    return {1: lambda a: a, 2: lambda a: a[:, ::-1], 3: lambda a: a[::-1, ::-1],
            4: lambda a: a[::-1, :], 5: lambda a: a.T, 6: lambda a: a.T[:, ::-1],
            7: lambda a: a.T[::-1, ::-1], 8: lambda a: a.T[::-1, :]}[orientation](stored)


def reference(command, source_y, orientation):
    if command == "equalize":
        return cv2.equalizeHist(source_y)
    if command == "clahe":
        # On the picture as shown (its grid is that picture's), turned back:
        # 6 and 8 undo each other, the others themselves.
        upright = np.ascontiguousarray(shown(source_y, orientation))
        done = cv2.createCLAHE(clipLimit=40.0, tileGridSize=(8, 8)).apply(upright)
        return np.ascontiguousarray(shown(done, {6: 8, 8: 6}.get(orientation, orientation)))
    return source_y


def gpu_usable(jpeg, tmp):
    rc, out, err = run("equalize", "--decoder", "gpu", "--out", os.path.join(tmp, "probe"), jpeg)
    if rc == 0:
        return None
    check(rc == 1 and err.startswith(NO_GPU_PREFIX) and err.count("\n") == 1,
          f"equalize --decoder gpu where it cannot run: exit {rc}, stderr {err!r}")
    return err[len(NO_GPU_PREFIX):].strip()


def check_command(command, variants, tmp, jpeg):
    gpu_out = os.path.join(tmp, f"{command}-gpu")
    cpu_out = os.path.join(tmp, f"{command}-cpu")
    rc_gpu, _, err_gpu = run(command, "--decoder", "gpu", "--verbose", "--timing", "--out",
                             gpu_out, variants)
    rc_cpu, _, err_cpu = run(command, "--decoder", "cpu", "--out", cpu_out, variants)
    check(rc_gpu == rc_cpu, f"{command}: exit {rc_gpu} with --decoder gpu, {rc_cpu} with cpu: "
                            f"{err_gpu[-2000:]!r}")
    inputs = files_under(variants)
    made_gpu, made_cpu = files_under(gpu_out), files_under(cpu_out)
    check(made_gpu == made_cpu, f"{command}: outputs differ between gpu and cpu: "
                                f"{sorted(set(made_gpu) ^ set(made_cpu))[:10]}")
    # The JPEGs written (those both runs refuse are not counted).
    jpegs = [f for f in inputs if is_jpeg(f) and os.path.exists(os.path.join(gpu_out, f))]

    # Every JPEG: encoded by nvJPEG, or named with why not.
    m = re.search(r"GPU encoding \(nvJPEG\): (\d+) JPEGs", err_gpu)
    encoded = int(m.group(1)) if m else 0
    noted = {f for f in jpegs
             if re.search(re.escape(os.path.join(variants, f)) + r": [^\n]*not nvJPEG", err_gpu)}
    check(encoded > 0, f"{command}: no JPEG encoded by nvJPEG: {err_gpu[-2000:]!r}")
    check(encoded + len(noted) == len(jpegs),
          f"{command}: {encoded} JPEGs encoded by nvJPEG and {len(noted)} named as done on the "
          f"CPU, of {len(jpegs)}")
    for f in jpegs:
        if f.startswith(CPU_FALLBACK + os.sep):
            check(f in noted, f"{command} --verbose: nothing said of why {f} was not done on "
                              f"the GPU")

    worst = {"reference": (0, ""), "cpu": (0, ""), "chroma": (0, "")}
    for f in jpegs:
        source, out_gpu, out_cpu = (os.path.join(variants, f), os.path.join(gpu_out, f),
                                    os.path.join(cpu_out, f))
        if not (os.path.exists(out_gpu) and os.path.exists(out_cpu)):
            continue
        with open(source, "rb") as s, open(out_gpu, "rb") as g:
            data_in, data_out = s.read(), g.read()
        h_in, h_out = jpeg.read_header(data_in), jpeg.read_header(data_out)
        check((h_out.width, h_out.height) == (h_in.width, h_in.height),
              f"{command} {f}: {h_out.width}x{h_out.height}, input {h_in.width}x{h_in.height}")
        # The file's metadata, whichever encoder wrote it (not a CMYK file's profile).
        want = jpeg.carried_segments(data_in, converted=len(h_in.components) == 4)
        got = jpeg.metadata_segments(data_out)
        check(got == want, f"{command} {f}: metadata segments {[(hex(c), len(b)) for c, b in got]}"
                           f", the input's {[(hex(c), len(b)) for c, b in want]}")
        # Progressive in, progressive out, whichever encoder wrote it.
        check((h_out.sof == 0xC2) == (h_in.sof == 0xC2),
              f"{command} {f}: SOF {h_out.sof:#x}, the input's {h_in.sof:#x}")
        if f in noted:
            # Decoded, changed and encoded on the CPU in both runs: the same file.
            with open(out_gpu, "rb") as g, open(out_cpu, "rb") as c:
                check(g.read() == c.read(),
                      f"{command} {f}: done on the CPU with --decoder gpu, yet not the file "
                      f"--decoder cpu wrote")
            continue
        check(len(h_out.components) == len(h_in.components),
              f"{command} {f}: {len(h_out.components)} components, input "
              f"{len(h_in.components)}")
        if len(h_in.components) == 3:
            check(h_out.components[0][1:] == h_in.components[0][1:],
                  f"{command} {f}: luma sampling {h_out.components[0][1:]}, input "
                  f"{h_in.components[0][1:]}")
        y_in, y_gpu, y_cpu = luma(source), luma(out_gpu), luma(out_cpu)
        if not check(y_gpu is not None and y_gpu.shape == y_in.shape,
                     f"{command} {f}: OpenCV cannot read the GPU output back"):
            continue
        ref = reference(command, y_in, jpeg.exif_orientation(data_in))
        mask = (overlay_mask(y_in.shape, jpeg.exif_orientation(data_in)) if command == "overlay"
                else np.ones(y_in.shape, bool))
        if not mask.any():
            continue
        mean, p99, top, _ = differences(y_gpu[mask], ref[mask])
        print(f"{command} {f}: against the reference: mean {mean:.3f}, p99 {p99:.0f}, "
              f"max {top}")
        check(mean <= REFERENCE_MEAN and p99 <= REFERENCE_P99[command],
              f"{command} {f}: GPU output against the reference: mean |dY| {mean:.3f} "
              f"(bound {REFERENCE_MEAN}), p99 {p99:.0f} (bound {REFERENCE_P99[command]})")
        worst["reference"] = max(worst["reference"], (mean, f))
        mean, p99, top, over16 = differences(y_gpu[mask], y_cpu[mask])
        print(f"{command} {f}: against the CPU path: mean {mean:.3f}, p99 {p99:.0f}, "
              f"max {top}, {100 * over16:.2f} % over 16")
        if len(h_in.components) == 1:
            check(mean <= CPU_MEAN_GRAY and p99 <= CPU_P99_GRAY,
                  f"{command} {f} (gray): GPU against CPU output: mean |dY| {mean:.3f} (bound "
                  f"{CPU_MEAN_GRAY}), p99 {p99:.0f} (bound {CPU_P99_GRAY})")
        else:
            check(mean <= CPU_MEAN_COLOUR[command],
                  f"{command} {f} (colour): GPU against CPU output: mean |dY| {mean:.3f} "
                  f"(bound {CPU_MEAN_COLOUR[command]})")
            c_gpu, c_cpu = chroma(out_gpu), chroma(out_cpu)
            if check(c_gpu is not None and c_cpu is not None and c_gpu.shape == c_cpu.shape,
                     f"{command} {f}: OpenCV cannot read the outputs back in colour"):
                d = np.abs(c_gpu.astype(np.int16) - c_cpu.astype(np.int16))[mask]
                c_mean, c_p99 = float(d.mean()), float(np.percentile(d, 99))
                print(f"{command} {f}: chroma against the CPU path: mean {c_mean:.3f}, "
                      f"p99 {c_p99:.0f}")
                check(c_mean <= CPU_CHROMA_MEAN[command],
                      f"{command} {f} (colour): GPU against CPU output: mean |dCb, dCr| "
                      f"{c_mean:.3f} (bound {CPU_CHROMA_MEAN[command]})")
                worst["chroma"] = max(worst["chroma"], (c_mean, f))
        worst["cpu"] = max(worst["cpu"], (mean, f))
    print(f"{command}: {encoded} of {len(jpegs)} JPEGs encoded by nvJPEG; largest mean |dY| "
          f"against the reference {worst['reference'][0]:.3f} ({worst['reference'][1]}), "
          f"against the CPU path {worst['cpu'][0]:.3f} ({worst['cpu'][1]}); largest mean "
          f"|dCb, dCr| against the CPU path {worst['chroma'][0]:.3f} ({worst['chroma'][1]})")


def check_quality(jpeg, tmp):
    sums = {}
    for quality in (30, 95):
        out = os.path.join(tmp, f"quality-{quality}")
        rc, _, err = run("equalize", "--decoder", "gpu", "--verbose", "--quality", str(quality),
                         "--out", out, jpeg)
        path = os.path.join(out, os.path.basename(jpeg))
        if not check(rc == 0 and os.path.exists(path) and "not nvJPEG" not in err,
                     f"equalize --quality {quality} --decoder gpu {jpeg}: exit {rc} {err!r}"):
            return
        with open(path, "rb") as f:
            sums[quality] = luma_table_sum(f.read())
    check(None not in sums.values() and sums[30] > sums[95],
          f"--quality does not reach nvJPEG: luma table sums {sums}")


def main():
    global LUMAHIST
    if len(sys.argv) != 4:
        print(__doc__)
        return 2
    LUMAHIST, samples, script = (os.path.abspath(a) for a in sys.argv[1:])
    variants_module = load_variants_module(script)
    with tempfile.TemporaryDirectory(prefix="lumahist-gpu-encode-") as tmp:
        jpegs = [os.path.join(samples, f) for f in sorted(os.listdir(samples)) if is_jpeg(f)]
        if not jpegs:
            print(f"SKIP: no JPEG in {samples}")
            return 77
        why = gpu_usable(jpegs[0], tmp)
        if FAILURES:
            return 1
        if why is not None:
            print(f"SKIP: --decoder gpu cannot run here: {why}")
            return 77
        variants = os.path.join(tmp, "variants")
        p = subprocess.run([sys.executable, script, "--samples", samples, variants],
                           capture_output=True, text=True, timeout=TIMEOUT)
        if p.returncode == 77:
            print(f"SKIP: the variants cannot be made here: {p.stdout.strip()}")
            return 77
        if not check(p.returncode == 0, f"make-jpeg-variants.py: exit {p.returncode}: "
                                        f"{p.stderr}"):
            return 1
        for command in ("equalize", "clahe", "overlay"):
            check_command(command, variants, tmp, variants_module)
        check_quality(jpegs[0], tmp)
    if FAILURES:
        print(f"{len(FAILURES)} check(s) failed")
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
