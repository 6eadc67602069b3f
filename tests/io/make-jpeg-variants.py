#!/usr/bin/env python3
"""make-jpeg-variants.py: writes JPEGs of every kind that the GPU decoder is
to take, and a few that it is not, for the nvJPEG against libjpeg-turbo
comparison (nvjpeg-compare, tests/io/run-nvjpeg-compare.sh) and the CLI's
decoder test (tests/cli/test_decoder.py).

  make-jpeg-variants.py OUT_DIR [--samples DIR] [--corpus DIR] [--seed N]

Each variant goes into its own folder under OUT_DIR, named for it:

  sampling-420, -422, -444, -411, -440
              the photographs of samples/, whole and cropped to sizes that are
              not multiples of the MCU, at each chroma subsampling
  quality     quality 10 to 100 (100: the largest coefficients)
  progressive progressive, at several subsamplings and in gray
  restart     restart markers every 1, 7 and 64 MCUs
  optimized   optimized Huffman tables
  gray        one-component JPEGs of the photographs' luma
  odd-size    1x1 up to 3841x2161, colour and gray, sizes off every block grid
  noise       seeded random noise, colour and gray, up to quality 100
  flat        constant black, white and mid-gray frames (clamping at 0 and 255)
  samples     the JPEGs of samples/, copied
  corpus      the valid JPEGs of tests/fuzz/corpus/jpeg, copied
  metadata    photographs with the segments a camera or an editor writes
              (METADATA: Exif with an orientation, an ICC profile, IPTC, a
              comment, XMP), which lumahist carries into what it writes
  cpu-fallback JPEGs that nvJPEG is not to be given (CMYK, arithmetic-coded,
              RGB-coded, 12-bit, cut short): the tool decodes them with
              libjpeg-turbo

Images are written by OpenCV (cv2.imwrite with IMWRITE_JPEG_*); variants
that the installed OpenCV cannot write (IMWRITE_JPEG_SAMPLING_FACTOR came in
OpenCV 4.7) are skipped with a note.  Every file's header is read back to
check that it is what was asked for, so that a parameter OpenCV ignored is
an error rather than a silently missing variant.  Exits 77 without cv2 or
numpy.
"""
import argparse
import os
import shutil
import sys

try:
    import cv2
    import numpy as np
except ImportError as e:  # pragma: no cover
    print(f"SKIP: needs OpenCV's and numpy's Python modules ({e})")
    sys.exit(77)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

# Luma (h, v) sampling factors of each subsampling, chroma being 1x1.
SAMPLINGS = {"420": (2, 2), "422": (2, 1), "444": (1, 1), "411": (4, 1), "440": (1, 2)}

# The corpus files that are valid JPEGs the GPU decoder is to take, and those
# it is not (the tool gives them to libjpeg-turbo).
CORPUS_GPU = ["411.jpg", "420.jpg", "422.jpg", "444.jpg", "dct-float.jpg", "exif.jpg",
              "gray-pgm.jpg", "gray.jpg", "odd-420.jpg", "optimized-q10.jpg", "progressive.jpg",
              "restart.jpg"]
CORPUS_CPU = ["arithmetic.jpg", "cmyk.jpg", "rgb-coded.jpg"]

SOF_MARKERS = {0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF}


# Metadata segments (marker, body) as a camera or an editor writes them:
# Exif (big-endian TIFF, one entry: orientation 6, a quarter turn), an ICC
# profile's first APP2, IPTC, a comment, XMP, and a phone's MPF index of the
# images stored after the first (little-endian TIFF: two images, the second
# at an offset).  lumahist writes back APP1, the ICC profile, APP13 and COM,
# but not the profile of a CMYK file it converted, nor the MPF index (it
# writes no second image, and the offsets would point into its own data).
METADATA = [
    (0xE1, b"Exif\0\0MM\0*\0\0\0\x08\0\x01\x01\x12\0\x03\0\0\0\x01\0\x06\0\0\0\0\0\0"),
    (0xE2, b"ICC_PROFILE\0\x01\x01not really a profile"),
    (0xED, b"Photoshop 3.0\x008BIM\x04\x04\0\0\0\0\0\0"),
    (0xFE, b"a comment"),
    (0xE1, b"http://ns.adobe.com/xap/1.0/\0<x:xmpmeta/>"),
    (0xE2, b"MPF\0II*\0\x08\0\0\0\x03\0\0\xb0\x07\0\x04\0\0\x000100"
           b"\x01\xb0\x04\0\x01\0\0\0\x02\0\0\0\x02\xb0\x07\0\x20\0\0\0\x32\0\0\0"
           b"\0\0\0\0" + bytes(32)),
]
METADATA_MARKERS = {0xE1, 0xE2, 0xED, 0xFE}


def metadata_segments(data):
    """The APP1, APP2, APP13 and COM segments before a JPEG's first scan, as
    (marker, body) in file order."""
    found = []
    i = 2
    while i + 4 <= len(data) and data[i] == 0xFF:
        code = data[i + 1]
        if code == 0xFF:
            i += 1
            continue
        if code == 0xDA:
            break
        length = (data[i + 2] << 8) | data[i + 3]
        if code in METADATA_MARKERS:
            found.append((code, data[i + 4:i + 2 + length]))
        i += 2 + length
    return found


def carried_segments(data, converted=False):
    """Those of metadata_segments that lumahist carries into what it writes
    from the file: all but the APP2 segments other than the ICC profile, and
    a converted CMYK file's ICC profile."""
    return [(code, body) for code, body in metadata_segments(data)
            if code != 0xE2 or (body.startswith(b"ICC_PROFILE\0") and not converted)]


def exif_orientation(data):
    """The Exif orientation (tag 0x0112 of the first directory) of a JPEG's
    APP1 Exif segment; 1 when it has none."""
    for code, body in metadata_segments(data):
        if code != 0xE1 or not body.startswith(b"Exif\0\0"):
            continue
        tiff = body[6:]
        order = "big" if tiff[:2] == b"MM" else "little"
        u16 = lambda at: int.from_bytes(tiff[at:at + 2], order)  # noqa: E731
        directory = int.from_bytes(tiff[4:8], order)
        for i in range(u16(directory)):
            entry = directory + 2 + 12 * i
            if u16(entry) == 0x0112 and u16(entry + 2) == 3:
                return u16(entry + 8)
    return 1


def with_metadata(data, segments=METADATA):
    """The JPEG data with segments put after its SOI and its JFIF APP0."""
    cut = 2
    if data[2:4] == b"\xff\xe0":
        cut = 4 + ((data[4] << 8) | data[5])
    added = b"".join(bytes((0xFF, code, (len(body) + 2) >> 8, (len(body) + 2) & 0xFF)) + body
                     for code, body in segments)
    return data[:cut] + added + data[cut:]


# --------------------------------------------------------------------------
# Reading a header back

class Header:
    def __init__(self):
        self.sof = None          # the SOF marker's code (0xC0 baseline, 0xC2 progressive)
        self.precision = None
        self.width = self.height = None
        self.components = []     # (id, h, v)
        self.restart_interval = 0


def read_header(data):
    """The frame header and restart interval of a JPEG, from its markers up
    to the first scan."""
    if data[:2] != b"\xff\xd8":
        raise ValueError("no SOI marker")
    h = Header()
    i = 2
    while i + 4 <= len(data):
        if data[i] != 0xFF:
            raise ValueError(f"no marker at byte {i}")
        code = data[i + 1]
        if code == 0xFF:
            i += 1
            continue
        if 0xD0 <= code <= 0xD8 or code == 0x01:
            i += 2
            continue
        length = (data[i + 2] << 8) | data[i + 3]
        body = data[i + 4:i + 2 + length]
        if code in SOF_MARKERS:
            h.sof = code
            h.precision = body[0]
            h.height = (body[1] << 8) | body[2]
            h.width = (body[3] << 8) | body[4]
            h.components = [(body[6 + 3 * k], body[7 + 3 * k] >> 4, body[7 + 3 * k] & 15)
                            for k in range(body[5])]
        elif code == 0xDD:
            h.restart_interval = (body[0] << 8) | body[1]
        elif code == 0xDA:
            break
        i += 2 + length
    if h.sof is None:
        raise ValueError("no frame header before the first scan")
    return h


def sampling_name(header):
    """'420', '444', ... for a colour JPEG whose chroma is 1x1; None otherwise."""
    if len(header.components) != 3 or any(c[1:] != (1, 1) for c in header.components[1:]):
        return None
    for name, factors in SAMPLINGS.items():
        if header.components[0][1:] == factors:
            return name
    return None


# --------------------------------------------------------------------------
# Writing

class Writer:
    def __init__(self, out):
        self.out = out
        self.written = {}   # variant -> count
        self.skipped = {}   # what the installed OpenCV cannot write -> why
        self.errors = []

    def sampling_params(self, sampling):
        """imwrite parameters for a subsampling, [] for OpenCV's default
        (4:2:0), or None when this OpenCV cannot ask for it."""
        constant = f"IMWRITE_JPEG_SAMPLING_FACTOR_{sampling}"
        if hasattr(cv2, "IMWRITE_JPEG_SAMPLING_FACTOR") and hasattr(cv2, constant):
            return [cv2.IMWRITE_JPEG_SAMPLING_FACTOR, getattr(cv2, constant)]
        if sampling == "420":
            return []  # libjpeg's default, which OpenCV before 4.7 always uses
        self.skipped[f"sampling {sampling}"] = (
            f"OpenCV {cv2.__version__} has no cv2.{constant}")
        return None

    def encode(self, what, image, quality=90, sampling="420", progressive=False, restart=0,
               optimize=False):
        """image (BGR or 2-D gray, uint8) as JPEG bytes, its header checked
        against what was asked; None when skipped or failed."""
        params = [cv2.IMWRITE_JPEG_QUALITY, quality]
        colour = image.ndim == 3
        if colour:
            extra = self.sampling_params(sampling)
            if extra is None:
                return None
            params += extra
        if progressive:
            params += [cv2.IMWRITE_JPEG_PROGRESSIVE, 1]
        if restart:
            params += [cv2.IMWRITE_JPEG_RST_INTERVAL, restart]
        if optimize:
            params += [cv2.IMWRITE_JPEG_OPTIMIZE, 1]
        ok, encoded = cv2.imencode(".jpg", np.ascontiguousarray(image), params)
        if not ok:
            self.errors.append(f"{what}: cv2.imencode failed")
            return None
        data = encoded.tobytes()
        header = read_header(data)
        height, width = image.shape[:2]
        problems = []
        if (header.width, header.height) != (width, height):
            problems.append(f"size {header.width}x{header.height}, expected {width}x{height}")
        if len(header.components) != (3 if colour else 1):
            problems.append(f"{len(header.components)} components")
        if colour and sampling_name(header) != sampling:
            problems.append(f"sampling {header.components}, expected {sampling}")
        if (header.sof == 0xC2) != progressive:
            problems.append(f"SOF {header.sof:#x} (progressive asked: {progressive})")
        if restart and header.restart_interval != restart:
            problems.append(f"restart interval {header.restart_interval}, expected {restart}")
        if problems:
            self.errors.append(f"{what}: " + "; ".join(problems))
        return data

    def write(self, variant, name, image, *args, **kwargs):
        """Writes image as OUT/variant/name.jpg (see encode); returns the
        path, or None when skipped."""
        path = os.path.join(self.out, variant, name + ".jpg")
        data = self.encode(path, image, *args, **kwargs)
        if data is None:
            return None
        return self.copy(variant, None, name + ".jpg", data)

    def copy(self, variant, source, name=None, data=None):
        """Copies the file source, or writes data, as OUT/variant/name."""
        folder = os.path.join(self.out, variant)
        os.makedirs(folder, exist_ok=True)
        path = os.path.join(folder, name or os.path.basename(source))
        if data is None:
            shutil.copyfile(source, path)
        else:
            with open(path, "wb") as f:
                f.write(data)
        self.written[variant] = self.written.get(variant, 0) + 1
        return path


# --------------------------------------------------------------------------
# Sources

def load_photos(samples):
    """{stem: BGR uint8 image} of the photographs in samples/ (16-bit and gray
    ones converted by OpenCV to 8-bit BGR)."""
    photos = {}
    if not os.path.isdir(samples):
        return photos
    for name in sorted(os.listdir(samples)):
        stem, ext = os.path.splitext(name)
        if ext.lower() not in (".jpg", ".jpeg", ".png"):
            continue
        image = cv2.imread(os.path.join(samples, name), cv2.IMREAD_COLOR)
        if image is not None:
            photos[stem] = image
    return photos


def synthetic_photo(rng, height, width):
    """Gradients, edges and noise, standing in for photographs where samples/
    is missing."""
    yy, xx = np.mgrid[0:height, 0:width].astype(np.float64)
    base = np.stack([128 + 100 * np.sin(xx / 37.0) * np.cos(yy / 23.0),
                     255 * xx / max(width - 1, 1),
                     np.where((xx // 64 + yy // 64) % 2 == 0, 40.0, 215.0)], -1)
    return np.clip(base + rng.normal(0, 12, base.shape), 0, 255).astype(np.uint8)


def colourfulness(image):
    """How far the image is from gray: the spread of its B-G and R-G."""
    b, g, r = (image[..., k].astype(np.int32) for k in range(3))
    return float(np.std(b - g) + np.std(r - g))


def gray_of(image):
    return cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)


def resized(image, width, height):
    """image scaled to width x height: area averaging down, cubic up."""
    shrink = width * height < image.shape[0] * image.shape[1]
    return cv2.resize(image, (width, height),
                      interpolation=cv2.INTER_AREA if shrink else cv2.INTER_CUBIC)


def odd_crop(image):
    """A crop that starts off the block grid and whose sides are not
    multiples of 8 or 16."""
    h, w = image.shape[:2]
    return image[3:3 + max(1, ((h - 3) // 16) * 16 - 5), 5:5 + max(1, ((w - 5) // 16) * 16 - 3)]


def truncated(data):
    """The JPEG cut in the middle of its first scan's entropy-coded data."""
    sos = data.index(b"\xff\xda")
    start = sos + 2 + ((data[sos + 2] << 8) | data[sos + 3])
    return data[:start + (len(data) - start) // 2]


def as_12_bit(data):
    """The frame header rewritten to say 12 bits per sample (as an extended
    sequential SOF1), which nvJPEG is not to be given."""
    b = bytearray(data)
    sof = b.index(b"\xff\xc0")
    b[sof + 1] = 0xC1
    b[sof + 4] = 12
    return bytes(b)


# --------------------------------------------------------------------------

def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", help="folder to write into (made if missing)")
    parser.add_argument("--samples", default=os.path.join(ROOT, "samples"))
    parser.add_argument("--corpus", default=os.path.join(ROOT, "tests", "fuzz", "corpus", "jpeg"))
    parser.add_argument("--seed", type=int, default=20250611)
    args = parser.parse_args()

    rng = np.random.default_rng(args.seed)
    w = Writer(args.out)
    os.makedirs(args.out, exist_ok=True)
    photos = load_photos(args.samples)
    if not photos:
        print(f"note: no photographs in {args.samples}; using synthetic ones")
        photos = {f"synthetic{k}": synthetic_photo(rng, 480 + 37 * k, 640 + 53 * k)
                  for k in range(3)}
    print(f"OpenCV {cv2.__version__}, {len(photos)} photographs from {args.samples}")

    for stem, photo in photos.items():
        crop = odd_crop(photo)
        for sampling in SAMPLINGS:
            w.write(f"sampling-{sampling}", f"{stem}", photo, 90, sampling)
            w.write(f"sampling-{sampling}", f"{stem}-crop{crop.shape[1]}x{crop.shape[0]}",
                    crop, 85, sampling)
        w.write("gray", f"{stem}", gray_of(photo), 90)
        w.write("gray", f"{stem}-crop", gray_of(crop), 75)

    # The most colourful photograph stands for all in the variants made of one.
    first_stem = max(photos, key=lambda k: colourfulness(photos[k]))
    first = photos[first_stem]
    for quality in (10, 50, 75, 95, 100):
        w.write("quality", f"{first_stem}-q{quality}", first, quality)
        w.write("quality", f"{first_stem}-q{quality}-444", first, quality, "444")
        w.write("quality", f"{first_stem}-q{quality}-gray", gray_of(first), quality)

    for stem, photo in list(photos.items())[:3]:
        for sampling in ("420", "422", "444"):
            w.write("progressive", f"{stem}-{sampling}", photo, 90, sampling, progressive=True)
        w.write("progressive", f"{stem}-gray", gray_of(photo), 90, progressive=True)
        w.write("progressive", f"{stem}-crop-420", odd_crop(photo), 80, progressive=True)

    for restart in (1, 7, 64):
        w.write("restart", f"{first_stem}-rst{restart}", first, 90, restart=restart)
        w.write("restart", f"{first_stem}-rst{restart}-422", first, 90, "422", restart=restart)
        w.write("restart", f"{first_stem}-rst{restart}-gray", gray_of(first), 90,
                restart=restart)
    w.write("restart", f"{first_stem}-rst5-progressive", first, 90, progressive=True, restart=5)

    for stem, photo in list(photos.items())[:2]:
        w.write("optimized", f"{stem}", photo, 90, optimize=True)
        w.write("optimized", f"{stem}-gray", gray_of(photo), 90, optimize=True)

    # Sizes of one pixel, one row or column, and just past a 2^n or a 4K frame.
    for width, height in ((1, 1), (2, 2), (7, 5), (17, 9), (15, 1), (1, 33), (257, 3),
                          (1023, 767), (1025, 769), (3841, 2161)):
        photo = resized(first, width, height)
        w.write("odd-size", f"{width}x{height}", photo, 90)
        w.write("odd-size", f"{width}x{height}-gray", gray_of(photo), 90)
        if width * height < 1 << 20:
            for sampling in ("422", "444", "411", "440"):
                w.write("odd-size", f"{width}x{height}-{sampling}", photo, 90, sampling)

    for width, height, quality in ((640, 480, 75), (640, 480, 95), (333, 77, 100),
                                   (1023, 767, 90)):
        noise = rng.integers(0, 256, (height, width, 3), dtype=np.uint8)
        w.write("noise", f"{width}x{height}-q{quality}", noise, quality)
        w.write("noise", f"{width}x{height}-q{quality}-444", noise, quality, "444")
        w.write("noise", f"{width}x{height}-q{quality}-gray", noise[..., 1], quality)
    # Noise over a few levels only, near black and white: clamping in the IDCT.
    extremes = rng.choice(np.array([0, 1, 2, 253, 254, 255], dtype=np.uint8), (240, 320))
    w.write("noise", "extremes-q100-gray", extremes, 100)
    w.write("noise", "extremes-q95", np.stack([extremes] * 3, -1), 95)

    for level in (0, 128, 255):
        w.write("flat", f"level{level}", np.full((64, 96, 3), level, np.uint8), 90)
        w.write("flat", f"level{level}-gray", np.full((37, 29), level, np.uint8), 90)

    if os.path.isdir(args.samples):
        for name in sorted(os.listdir(args.samples)):
            if name.lower().endswith((".jpg", ".jpeg")):
                w.copy("samples", os.path.join(args.samples, name))
    for stem, photo in list(photos.items())[:2]:
        for sampling in ("420", "444"):
            data = w.encode(f"metadata {stem}", photo, 90, sampling)
            if data:
                w.copy("metadata", None, f"{stem}-{sampling}.jpg", with_metadata(data))
        data = w.encode(f"metadata {stem} gray", gray_of(photo), 90)
        if data:
            w.copy("metadata", None, f"{stem}-gray.jpg", with_metadata(data))

    if os.path.isdir(args.corpus):
        for name in CORPUS_GPU:
            if os.path.isfile(os.path.join(args.corpus, name)):
                w.copy("corpus", os.path.join(args.corpus, name))
        for name in CORPUS_CPU:
            if os.path.isfile(os.path.join(args.corpus, name)):
                w.copy("cpu-fallback", os.path.join(args.corpus, name))
    else:
        print(f"note: no corpus at {args.corpus}: no CMYK, arithmetic or RGB-coded JPEG")
    data = w.encode("cpu-fallback source", first, 90)
    if data:
        w.copy("cpu-fallback", None, "truncated.jpg", truncated(data))
        w.copy("cpu-fallback", None, "precision-12.jpg", as_12_bit(data))

    for variant in sorted(w.written):
        print(f"{variant}: {w.written[variant]} files")
    for what, why in sorted(w.skipped.items()):
        print(f"note: skipped {what}: {why}")
    for error in w.errors:
        print(f"error: {error}", file=sys.stderr)
    return 1 if w.errors else 0


if __name__ == "__main__":
    sys.exit(main())
