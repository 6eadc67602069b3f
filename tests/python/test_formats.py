"""Every pixel format of the library through the Python module.  Frames are
built here in NumPy, byte by byte, from lumahist.h's and GStreamer's
descriptions of the layouts (not from the module), around a seeded random
luma plane and random chroma and padding: the statistics must be those of
the luma plane given as GRAY8 or GRAY16 (for YUV, luma is the Y plane; for
R'G'B', the module's 16-bit R'G'B' and the exact luma of DESIGN.md), also
with padded strides and odd sizes; equalize, CLAHE and LUTs must change the
luma samples alone, every other byte as it came; a wrong shape, element type
or size must raise lumahist.InvalidArgumentError, and no array, however
wrong, may make the module write outside it."""
import json
import os
import subprocess

import numpy as np
import pytest

import lumahist

cv2 = pytest.importorskip("cv2")
LUMAHIST = os.environ.get("LUMAHIST")


def on(backend, function, *args, **kwargs):
    """function(..., backend=backend), skipped where the CUDA backend has no device."""
    try:
        return function(*args, backend=backend, **kwargs)
    except lumahist.NoDeviceError:
        pytest.skip("no CUDA device is usable")


def luma_plane(height, width, depth, seed):
    """A photograph-like plane of `depth`-bit values (a gradient with noise),
    using the whole range so that clipping and the top code are exercised."""
    rng = np.random.default_rng(seed)
    top = (1 << depth) - 1
    y, x = np.mgrid[0:height, 0:width]
    base = (x / max(width - 1, 1) * 0.7 + y / max(height - 1, 1) * 0.45 - 0.05) * top
    return np.clip(np.rint(base + rng.normal(0, top * 0.06, (height, width))), 0,
                   top).astype(np.uint16)


def gray_reference(y, depth, backend, **options):
    """The statistics of the luma plane as a gray frame: the reference."""
    if depth == 8:
        return on(backend, lumahist.stats, y.astype(np.uint8), **options)
    return on(backend, lumahist.stats, y.astype(np.uint16),
              bit_depth=depth if depth < 16 else None, **options)


def gray_rewritten(y, depth, operation, backend, lut=None):
    """The luma plane equalized (or through a CLAHE or a LUT) as a gray frame."""
    image = y.astype(np.uint8 if depth == 8 else np.uint16)
    bits = {"bit_depth": depth} if 8 < depth < 16 else {}
    if operation == "equalize":
        return on(backend, lumahist.equalize, image, **bits)
    if operation == "clahe":
        return on(backend, lumahist.clahe, image, tiles=(3, 2), clip=3.0, **bits)
    return on(backend, lumahist.apply_lut, image, lut, **bits)


def rewrite(image, operation, backend, lut=None, **frame):
    if operation == "equalize":
        return on(backend, lumahist.equalize, image, **frame)
    if operation == "clahe":
        return on(backend, lumahist.clahe, image, tiles=(3, 2), clip=3.0, **frame)
    return on(backend, lumahist.apply_lut, image, lut, **frame)


def assert_same_stats(got, want, y, depth):
    """got (the format's) is want (the gray luma's), record for record, and
    both are the histogram of y counted here."""
    assert got.to_dict() == want.to_dict()
    assert got.bit_depth == depth and got.histogram.size == 1 << depth
    assert np.array_equal(got.histogram, np.bincount(y.ravel(), minlength=1 << depth))
    assert (got.width, got.height) == (y.shape[1], y.shape[0])


def random_lut(depth, seed):
    return np.random.default_rng(seed).integers(0, 1 << depth, 1 << depth, dtype=np.uint16)


OPERATIONS = ["equalize", "clahe", "lut"]
BACKENDS = ["cpu", "cuda"]

# ---------------------------------------------------------------------------
# Planar and semi-planar YUV: the whole buffer as rows of the Y plane.

# name: (bytes a sample, chroma subsampling across, down, semi-planar,
#        depth, bits below the value in a sample)
PLANES = {
    "I420": (1, 2, 2, False, 8, 0), "YV12": (1, 2, 2, False, 8, 0),
    "NV12": (1, 2, 2, True, 8, 0), "NV21": (1, 2, 2, True, 8, 0),
    "Y42B": (1, 2, 1, False, 8, 0), "NV16": (1, 2, 1, True, 8, 0),
    "Y444": (1, 1, 1, False, 8, 0), "NV24": (1, 1, 1, True, 8, 0),
    "Y41B": (1, 4, 1, False, 8, 0),
    "I420_10LE": (2, 2, 2, False, 10, 0), "I420_12LE": (2, 2, 2, False, 12, 0),
    "I422_10LE": (2, 2, 1, False, 10, 0), "I422_12LE": (2, 2, 1, False, 12, 0),
    "Y444_10LE": (2, 1, 1, False, 10, 0), "Y444_12LE": (2, 1, 1, False, 12, 0),
    "Y444_16LE": (2, 1, 1, False, 16, 0),
    "P010": (2, 2, 2, True, 10, 6), "P012": (2, 2, 2, True, 12, 4), "P016": (2, 2, 2, True, 16, 0),
}


def chroma_layout(name, width, height, stride):
    """(offset, bytes, chroma row) of each row of each chroma plane, in bytes
    from the buffer's start, as lh_frame_init lays them out (written out
    below), and the buffer's size (lh_frame_buffer_size: the last chroma
    row's whole stride included)."""
    sample, across, down, semi, _, _ = PLANES[name]
    chroma_row = -(-width // across) * sample * (2 if semi else 1)
    chroma_rows = -(-height // down)
    if semi:
        chroma_stride = stride if across == 2 else -(-stride // across) * 2
    else:
        chroma_stride = -(-stride // across)
    chroma_stride = max(chroma_stride, chroma_row)
    planes = 1 if semi else 2
    return ([(stride * height + (p * chroma_rows + r) * chroma_stride, chroma_row, r)
             for p in range(planes) for r in range(chroma_rows)],
            stride * height + planes * chroma_rows * chroma_stride)


def planes_buffer(name, y, stride, seed):
    """The buffer of a frame with Y plane y, its rows `stride` bytes apart,
    and random chroma and padding, as lh_frame_init lays it out: the chroma
    planes after Y, each row ceil(width / subsampling) samples (pairs when
    semi-planar), the stride the Y stride over the subsampling across (the Y
    stride itself for 4:2:x pairs, twice it for 4:4:4 pairs), never below the
    row.  Returns it as `rows x stride` bytes, the rows it fills, with masks
    of its Y bytes and its chroma bytes."""
    sample, _, _, _, _, shift = PLANES[name]
    height, width = y.shape
    chroma, size = chroma_layout(name, width, height, stride)
    rows = -(-size // stride)
    rng = np.random.default_rng(seed)
    buffer = rng.integers(0, 256, rows * stride, dtype=np.uint8)
    luma_mask = np.zeros(rows * stride, bool)
    chroma_mask = np.zeros(rows * stride, bool)
    if sample == 1:
        luma_bytes = y.astype(np.uint8)
    else:
        luma_bytes = (y.astype("<u2") << shift).view(np.uint8).reshape(height, width * 2)
    for r in range(height):
        buffer[r * stride:r * stride + width * sample] = luma_bytes[r]
        luma_mask[r * stride:r * stride + width * sample] = True
    for at, row_bytes, _ in chroma:
        chroma_mask[at:at + row_bytes] = True
    shape = (rows, stride)
    return buffer.reshape(shape), luma_mask.reshape(shape), chroma_mask.reshape(shape)


def as_samples(name, byte_rows):
    """Rows of bytes as the array the format is held in (uint16 rows for the
    deeper formats)."""
    return byte_rows if PLANES[name][0] == 1 else byte_rows.view("<u2")


def luma_of_planes(name, byte_rows, height, width):
    sample, _, _, _, _, shift = PLANES[name]
    rows = byte_rows[:height, :width * sample]
    if sample == 1:
        return rows.astype(np.uint16)
    return np.ascontiguousarray(rows).view("<u2") >> shift


# (width, height, extra bytes a row beyond the pixels): the even sizes of
# OpenCV's convention with tight rows, odd sizes, and padded rows.
# Padded strides stay multiples of 4 bytes, as GStreamer's are, so that the
# half-stride chroma rows of the 16-bit planar formats stay aligned.
PLANE_SIZES = [(48, 32, 0), (37, 23, 0), (37, 23, 30), (64, 9, 64)]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("size", PLANE_SIZES, ids=lambda s: "%dx%d+%d" % s)
@pytest.mark.parametrize("name", sorted(PLANES))
def test_planes_stats_are_the_y_planes(name, size, backend):
    width, height, pad = size
    sample, _, down, _, depth, _ = PLANES[name]
    y = luma_plane(height, width, depth, seed=len(name) + width)
    buffer, _, _ = planes_buffer(name, y, width * sample + pad, seed=height)
    image = as_samples(name, buffer)
    frame = {"format": name, "width": width if pad else None}
    got = on(backend, lumahist.stats, image, percentiles=(0, 1, 12.5, 50, 99.9, 100), **frame)
    want = gray_reference(y, depth, backend, percentiles=(0, 1, 12.5, 50, 99.9, 100))
    assert_same_stats(got, want, y, depth)
    if (width, height, pad) == (48, 32, 0):
        # OpenCV's convention: 4:2:0 in H * 3/2 rows, 4:2:2 in 2H, 4:4:4 in 3H.
        across = PLANES[name][1]
        assert image.shape[0] == {(2, 2): height * 3 // 2, (2, 1): 2 * height,
                                  (1, 1): 3 * height, (4, 1): height * 3 // 2}[(across, down)]
        assert image.shape[1] == width


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("operation", OPERATIONS)
@pytest.mark.parametrize("name", sorted(PLANES))
def test_planes_rewrite_only_y(name, operation, backend):
    width, height, pad = 37, 23, 30
    sample, _, _, _, depth, _ = PLANES[name]
    y = luma_plane(height, width, depth, seed=7 * len(name))
    buffer, luma_mask, chroma_mask = planes_buffer(name, y, width * sample + pad, seed=3)
    image = as_samples(name, buffer)
    lut = random_lut(depth, seed=5)
    before = image.copy()
    out = rewrite(image, operation, backend, lut=lut, format=name, width=width)
    assert np.array_equal(image, before), "the input was written"
    out_bytes = out.view(np.uint8).reshape(buffer.shape)
    want = gray_rewritten(y, depth, operation, backend, lut=lut)
    assert np.array_equal(luma_of_planes(name, out_bytes, height, width), want)
    if PLANES[name][5]:
        words = np.ascontiguousarray(out_bytes[:height, :width * 2]).view("<u2")
        assert not (words & ((1 << PLANES[name][5]) - 1)).any(), "bits below the value set"
    # Every other byte (chroma, padding) as it came.
    assert np.array_equal(out_bytes[~luma_mask], buffer[~luma_mask])
    assert chroma_mask.sum() > 0 and not (chroma_mask & luma_mask).any()
    # In place, through out=, the same bytes.
    in_place = image.copy()
    rewrite(in_place, operation, backend, lut=lut, format=name, width=width, out=in_place)
    assert np.array_equal(in_place, out)


@pytest.mark.parametrize("name", sorted(PLANES))
def test_planes_overlay_draws_y_as_on_gray_and_chroma_under_the_panel(name):
    width, height, pad = 83, 61, 30
    sample, across, down, semi, depth, _ = PLANES[name]
    y = luma_plane(height, width, depth, seed=13)
    stride = width * sample + pad
    buffer, luma_mask, chroma_mask = planes_buffer(name, y, stride, seed=14)
    rect = (9, 11, 51, 35)
    out = lumahist.overlay(as_samples(name, buffer), format=name, width=width, rect=rect,
                           backend="cpu")
    out_bytes = out.view(np.uint8).reshape(buffer.shape)
    gray = y.astype(np.uint8 if depth == 8 else np.uint16)
    want = lumahist.overlay(gray, rect=rect, bit_depth=depth if 8 < depth < 16 else None,
                            backend="cpu")
    assert np.array_equal(luma_of_planes(name, out_bytes, height, width), want)
    assert not np.array_equal(want, gray), "nothing was drawn"
    # Chroma changes only at the samples of pixels under the panel.
    x, top, w, h = rect
    under = np.zeros(buffer.size, bool)
    unit = sample * (2 if semi else 1)
    for at, _, r in chroma_layout(name, width, height, stride)[0]:
        if top // down <= r < -(-(top + h) // down):
            under[at + x // across * unit:at + -(-(x + w) // across) * unit] = True
    changed = (out_bytes != buffer).ravel()
    assert changed[chroma_mask.ravel() & under].any(), "the panel has no colour"
    assert not changed[~luma_mask.ravel() & ~under].any(), "changed outside the panel"


# Slices of a wider buffer: the formats whose chroma rows have the Y plane's
# stride and no more bytes than its rows (semi-planar 4:2:x, planar 4:4:4)
# lie inside the slice; the others' chroma rows lie between its rows.
SLICEABLE = {"NV12", "NV21", "NV16", "P010", "P012", "P016", "Y444", "Y444_10LE", "Y444_12LE",
             "Y444_16LE"}


@pytest.mark.parametrize("name", sorted(PLANES))
def test_planes_in_a_slice_of_a_wider_buffer(name):
    width, height = 36, 22
    sample, _, _, _, depth, _ = PLANES[name]
    stride = width * sample + 40
    y = luma_plane(height, width, depth, seed=11)
    buffer, luma_mask, _ = planes_buffer(name, y, stride, seed=12)
    view = as_samples(name, buffer)[:, :width]
    assert view.strides[0] == stride and not view.flags.c_contiguous
    if name not in SLICEABLE:
        with pytest.raises(lumahist.InvalidArgumentError, match="whole rows with width="):
            lumahist.stats(view, format=name, backend="cpu")
        return
    got = lumahist.stats(view, format=name, backend="cpu")
    assert_same_stats(got, gray_reference(y, depth, "cpu"), y, depth)
    # Equalized in place: the padding between the slice's rows is not written.
    original = buffer.copy()
    lumahist.equalize(view, out=view, format=name, backend="cpu")
    assert np.array_equal(buffer[~luma_mask], original[~luma_mask])
    want = gray_rewritten(y, depth, "equalize", "cpu")
    assert np.array_equal(luma_of_planes(name, buffer, height, width), want)


@pytest.mark.parametrize("name", sorted(n for n in PLANES if PLANES[n][4] == 8) + ["P016",
                                                                                   "Y444_16LE"])
def test_planes_stats_are_the_tools_on_the_y_plane(tmp_path, name):
    """Against the command-line tool: the record of the Y plane as a PNG."""
    assert LUMAHIST, "LUMAHIST is not set"
    width, height = 41, 27
    sample, _, _, _, depth, _ = PLANES[name]
    y = luma_plane(height, width, depth, seed=21)
    path = str(tmp_path / "y.png")
    cv2.imwrite(path, y.astype(np.uint8 if depth == 8 else np.uint16))
    out = subprocess.run([LUMAHIST, "stats", "--backend", "cpu", "--decoder", "cpu",
                          "--percentiles", "1,50,99", path], capture_output=True, check=True)
    want = json.loads(out.stdout)
    for key in ("path", "decoder"):
        want.pop(key)
    buffer, _, _ = planes_buffer(name, y, width * sample, seed=22)
    got = lumahist.stats(as_samples(name, buffer), format=name, percentiles=(1, 50, 99),
                         backend="cpu")
    assert got.to_dict() == want


# ---------------------------------------------------------------------------
# Packed 4:2:2: H x W x 2 (OpenCV's YUY2), or H x 2W bytes.

# name: the byte of Y in each pixel's two, and the chroma byte order in a pair
PACKED = {"YUY2": (0, "UV"), "YVYU": (0, "VU"), "UYVY": (1, "UV"), "VYUY": (1, "VU")}


def packed_frame(name, y, seed, pairs_width=None):
    """An H x W x 2 frame of Y plane y (W rounded up to whole pairs, the
    last pixel's Y random when W is odd) with random chroma."""
    height, width = y.shape
    columns = pairs_width or width + width % 2
    rng = np.random.default_rng(seed)
    frame = rng.integers(0, 256, (height, columns, 2), dtype=np.uint8)
    frame[:, :width, PACKED[name][0]] = y
    return frame


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("form", ["h-w-2", "h-2w", "slice", "odd-width"])
@pytest.mark.parametrize("name", sorted(PACKED))
def test_packed_stats_are_the_y_plane(name, form, backend):
    width, height = (33, 17) if form == "odd-width" else (32, 17)
    y = luma_plane(height, width, 8, seed=31)
    frame = packed_frame(name, y, seed=32)
    options = {"format": name}
    if form == "h-2w":
        frame = frame.reshape(height, 2 * width)
    elif form == "slice":
        wider = packed_frame(name, np.pad(y, ((0, 0), (0, 9))), seed=33, pairs_width=width + 10)
        frame = wider[:, :width]
        assert not frame.flags.c_contiguous
    elif form == "odd-width":
        options["width"] = width
    got = on(backend, lumahist.stats, frame, **options)
    assert_same_stats(got, gray_reference(y, 8, backend), y, 8)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("operation", OPERATIONS)
@pytest.mark.parametrize("name", sorted(PACKED))
def test_packed_rewrite_only_y(name, operation, backend):
    width, height = 33, 19
    y = luma_plane(height, width, 8, seed=41)
    frame = packed_frame(name, y, seed=42)
    lut = random_lut(8, seed=43)
    out = rewrite(frame, operation, backend, lut=lut, format=name, width=width)
    at = PACKED[name][0]
    assert np.array_equal(out[:, :width, at], gray_rewritten(y, 8, operation, backend, lut=lut))
    assert np.array_equal(out[..., 1 - at], frame[..., 1 - at]), "chroma changed"
    assert np.array_equal(out[:, width:, at], frame[:, width:, at]), "the padding Y changed"


@pytest.mark.parametrize("name", sorted(PACKED))
def test_packed_overlay_draws_y_as_on_gray_and_chroma_under_the_panel(name):
    width, height = 81, 47
    y = luma_plane(height, width, 8, seed=44)
    frame = packed_frame(name, y, seed=45)
    rect = (7, 5, 40, 30)
    out = lumahist.overlay(frame, format=name, width=width, rect=rect, backend="cpu")
    at = PACKED[name][0]
    assert np.array_equal(out[:, :width, at], lumahist.overlay(y.astype(np.uint8), rect=rect,
                                                               backend="cpu"))
    x, top, w, h = rect
    under = np.zeros(frame.shape[:2], bool)
    under[top:top + h, x // 2 * 2:-(-(x + w) // 2) * 2] = True  # whole pairs
    changed = out[..., 1 - at] != frame[..., 1 - at]
    assert changed[under].any() and not changed[~under].any()


# ---------------------------------------------------------------------------
# v210: rows of bytes, 16 for each group of 6 pixels.

# The 12 fields of a group: Cb0 Y0 Cr0 | Y1 Cb1 Y2 | Cr1 Y3 Cb2 | Y4 Cr2 Y5.
V210_Y_FIELDS = [1, 3, 5, 7, 9, 11]


def v210_frame(y, seed, row_bytes=None):
    """The rows of a frame of Y plane y (10-bit), with random chroma, random
    top bits in each word and random fields past the width; and a mask of
    the Y fields within the width, per field."""
    height, width = y.shape
    groups = -(-width // 6)
    rng = np.random.default_rng(seed)
    fields = rng.integers(0, 1024, (height, groups, 12), dtype=np.uint32)
    is_luma = np.zeros((height, groups, 12), bool)
    padded = np.zeros((height, groups * 6), np.uint32)
    padded[:, :width] = y
    for k, field in enumerate(V210_Y_FIELDS):
        inside = np.arange(groups) * 6 + k < width
        fields[:, inside, field] = padded[:, k::6][:, inside]
        is_luma[:, inside, field] = True
    words = (fields[..., 0::3] | fields[..., 1::3] << 10 | fields[..., 2::3] << 20
             | rng.integers(0, 4, (height, groups, 4), dtype=np.uint32) << 30)
    data = words.astype("<u4").view(np.uint8).reshape(height, groups * 16)
    if row_bytes:
        wide = rng.integers(0, 256, (height, row_bytes), dtype=np.uint8)
        wide[:, :groups * 16] = data
        data = wide
    return data, is_luma


def v210_fields(data, width):
    height = data.shape[0]
    groups = -(-width // 6)
    words = np.ascontiguousarray(data[:, :groups * 16]).view("<u4").reshape(height, groups, 4)
    fields = np.stack([(words >> s) & 0x3ff for s in (0, 10, 20)], axis=-1).reshape(height, groups,
                                                                                    12)
    return fields, words >> 30


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", ["whole-groups", "width", "stride-128", "slice"])
def test_v210_stats_are_the_y_plane(case, backend):
    width, height = (36, 11) if case == "whole-groups" else (37, 11)
    y = luma_plane(height, width, 10, seed=51)
    options = {"format": "v210"}
    if case == "stride-128":
        # A capture card's rows: 128-byte aligned, a whole buffer as H x 128.
        data, _ = v210_frame(y, seed=52, row_bytes=128)
        options["width"] = width
    elif case == "slice":
        wide, _ = v210_frame(y, seed=53, row_bytes=128)
        data = wide[:, :112]
        options["width"] = width
    else:
        data, _ = v210_frame(y, seed=54)
        if case == "width":
            options["width"] = width
    got = on(backend, lumahist.stats, data, **options)
    assert_same_stats(got, gray_reference(y, 10, backend), y, 10)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("operation", OPERATIONS)
def test_v210_rewrites_only_y_fields(operation, backend):
    width, height = 37, 13
    y = luma_plane(height, width, 10, seed=61)
    data, is_luma = v210_frame(y, seed=62, row_bytes=128)
    lut = random_lut(10, seed=63)
    out = rewrite(data, operation, backend, lut=lut, format="v210", width=width)
    before, top_before = v210_fields(data, width)
    after, top_after = v210_fields(out, width)
    assert np.array_equal(after[~is_luma], before[~is_luma]), "chroma or padding fields changed"
    assert np.array_equal(top_after, top_before), "the words' top bits changed"
    assert np.array_equal(out[:, 112:], data[:, 112:]), "the row padding changed"
    new_luma = np.zeros((height, 42), np.uint32)
    for k, field in enumerate(V210_Y_FIELDS):
        new_luma[:, k::6] = after[:, :, field]
    assert np.array_equal(new_luma[:, :width], gray_rewritten(y, 10, operation, backend, lut=lut))


def test_v210_regions_start_at_a_group():
    data, _ = v210_frame(luma_plane(4, 24, 10, seed=1), seed=2)
    assert lumahist.stats(data, format="v210", roi=(6, 1, 12, 2), backend="cpu").count == 24
    with pytest.raises(lumahist.InvalidArgumentError, match="multiple of 6"):
        lumahist.stats(data, format="v210", roi=(3, 1, 12, 2), backend="cpu")


# ---------------------------------------------------------------------------
# Big-endian 16-bit gray.

@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("depth", [16, 12])
def test_gray16_be_is_gray16(depth, backend):
    y = luma_plane(29, 43, depth, seed=71)
    big = y.astype(">u2")
    bits = {"bit_depth": depth} if depth < 16 else {}
    inferred = on(backend, lumahist.stats, big, **bits)
    named = on(backend, lumahist.stats, big, format="GRAY16_BE", **bits)
    want = on(backend, lumahist.stats, y.astype("<u2"), **bits)
    assert_same_stats(inferred, want, y, depth)
    assert named.to_dict() == want.to_dict()
    # A padded view and the equalized values, still big-endian.
    wide = np.zeros((29, 50), ">u2")
    wide[:, :43] = y
    assert on(backend, lumahist.stats, wide[:, :43], **bits).to_dict() == want.to_dict()
    out = on(backend, lumahist.equalize, big, **bits)
    assert out.dtype == np.dtype(">u2")
    assert np.array_equal(out, on(backend, lumahist.equalize, y.astype("<u2"), **bits))


# ---------------------------------------------------------------------------
# R'G'B' of 10 bits in 32-bit words, and of 16 bits with alpha.

# name: (the bit of R, of B, big-endian words); G is at bit 10, two bits at 30
PACKED10 = {"RGB10A2_LE": (0, 20, False), "BGR10A2_LE": (20, 0, False), "R210": (20, 0, True)}


def packed10_frame(name, rgb, top):
    r_bit, b_bit, big = PACKED10[name]
    c = rgb.astype(np.uint32)
    words = c[..., 0] << r_bit | c[..., 1] << 10 | c[..., 2] << b_bit | top.astype(np.uint32) << 30
    return words.astype(">u4" if big else "<u4")


def unpack10(name, words):
    r_bit, b_bit, _ = PACKED10[name]
    w = words.astype(np.uint32)
    return np.stack([(w >> r_bit) & 1023, (w >> 10) & 1023, (w >> b_bit) & 1023], axis=-1), w >> 30


def exact_luma(rgb, kr=0.299, kb=0.114):
    """DESIGN.md's luma above 8 bits: the matrix's decimal weights in units of
    10^-4, the sum divided exactly, rounded half up."""
    c = rgb.astype(np.int64)
    kr, kb = round(kr * 10000), round(kb * 10000)
    return (kr * c[..., 0] + (10000 - kr - kb) * c[..., 1] + kb * c[..., 2] + 5000) // 10000


def colour_photo(height, width, depth, seed):
    rng = np.random.default_rng(seed)
    planes = [luma_plane(height, width, depth, seed + k) for k in range(3)]
    rgb = np.stack(planes, axis=-1)
    return rgb, rng.integers(0, 4, (height, width), dtype=np.uint8)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(PACKED10))
def test_packed10_rgb_is_ten_bit_rgb(name, backend):
    rgb, top = colour_photo(31, 45, 10, seed=81)
    words = packed10_frame(name, rgb, top)
    for matrix, (kr, kb) in {"bt601": (0.299, 0.114), "bt709": (0.2126, 0.0722)}.items():
        got = on(backend, lumahist.stats, words, format=name, matrix=matrix)
        want = on(backend, lumahist.stats, rgb.astype(np.uint16), bit_depth=10, matrix=matrix)
        assert_same_stats(got, want, exact_luma(rgb, kr, kb), 10)
    # A padded view.
    wide = np.zeros((31, 52), words.dtype)
    wide[:, :45] = words
    assert (on(backend, lumahist.stats, wide[:, :45], format=name).to_dict()
            == on(backend, lumahist.stats, words, format=name).to_dict())


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("operation", OPERATIONS)
@pytest.mark.parametrize("name", sorted(PACKED10))
def test_packed10_rgb_rewrites_as_ten_bit_rgb(name, operation, backend):
    rgb, top = colour_photo(23, 35, 10, seed=91)
    words = packed10_frame(name, rgb, top)
    lut = random_lut(10, seed=92)
    out = rewrite(words, operation, backend, lut=lut, format=name)
    assert out.dtype == words.dtype
    got_rgb, got_top = unpack10(name, out)
    want = rewrite(rgb.astype(np.uint16), operation, backend, lut=lut, bit_depth=10)
    assert np.array_equal(got_rgb, want)
    assert np.array_equal(got_top, top), "the top two bits changed"


@pytest.mark.parametrize("backend", BACKENDS)
def test_sixteen_bit_rgba_and_bgra(backend):
    rgb, _ = colour_photo(27, 39, 16, seed=101)
    alpha = np.random.default_rng(102).integers(0, 65536, (27, 39), dtype=np.uint16)
    rgba = np.concatenate([rgb, alpha[..., None]], axis=-1).astype(np.uint16)
    bgra = rgba[..., [2, 1, 0, 3]].copy()
    want = on(backend, lumahist.stats, rgba)
    assert_same_stats(want, want, exact_luma(rgb), 16)
    for image, names in ((rgba, ("RGBA16", "RGBA64_LE", "rgba64_le")),
                         (bgra, ("BGRA16", "BGRA64_LE"))):
        for name in names:
            assert on(backend, lumahist.stats, image, format=name).to_dict() == want.to_dict()
    out = on(backend, lumahist.equalize, bgra, format="BGRA16")
    assert np.array_equal(out[..., [2, 1, 0, 3]], on(backend, lumahist.equalize, rgba))
    assert np.array_equal(out[..., 3], alpha), "alpha changed"
    ten = (rgba >> 6).astype(np.uint16)
    assert (on(backend, lumahist.stats, np.ascontiguousarray(ten[..., [2, 1, 0, 3]]),
               format="BGRA64_LE", bit_depth=10).to_dict()
            == on(backend, lumahist.stats, ten, bit_depth=10).to_dict())


# ---------------------------------------------------------------------------
# Names, depths and every format covered.

def test_every_format_has_a_name_and_a_test_here():
    covered = set(PLANES) | set(PACKED) | set(PACKED10) | {"v210", "GRAY16_BE", "BGRA16"}
    earlier = {"GRAY8", "GRAY16", "RGB", "BGR", "RGBA", "BGRA", "RGBX", "BGRX", "RGB16", "RGBA16"}
    assert set(lumahist.FORMATS) == covered | earlier
    assert len(lumahist.FORMATS) == len(set(lumahist.FORMATS))


@pytest.mark.parametrize("alias,name", [
    ("P010_10LE", "P010"), ("p012_le", "P012"), ("P016_LE", "P016"), ("nv12", "NV12"),
    ("V210", "v210"), ("r210", "R210"), ("GRAY16_LE", "GRAY16"), ("RGBx", "RGBX"),
])
def test_gstreamers_names_and_any_case(alias, name):
    if name in PLANES:
        sample, _, _, _, depth, _ = PLANES[name]
        buffer, _, _ = planes_buffer(name, luma_plane(8, 12, depth, 1), 12 * sample, seed=2)
        image = as_samples(name, buffer)
    elif name == "v210":
        image, _ = v210_frame(luma_plane(4, 12, 10, 1), seed=2)
    elif name == "R210":
        image = packed10_frame(name, *colour_photo(4, 5, 10, seed=3))
    elif name == "GRAY16":
        image = luma_plane(4, 5, 16, 4)
    else:
        image = np.random.default_rng(5).integers(0, 256, (4, 5, 4), dtype=np.uint8)
    assert (lumahist.stats(image, format=alias, backend="cpu").to_dict()
            == lumahist.stats(image, format=name, backend="cpu").to_dict())


@pytest.mark.parametrize("name", ["YUY9", "NV1", "RGB565", "", "I420 "])
def test_unknown_names_raise(name):
    with pytest.raises(lumahist.InvalidArgumentError, match="unknown format"):
        lumahist.stats(np.zeros((6, 4), np.uint8), format=name)


def test_bit_depth_is_the_formats():
    """bit_depth= sets the depth of the formats whose samples may hold fewer
    bits; of a 10-bit format it must be left out (or be 10)."""
    buffer, _, _ = planes_buffer("I420_10LE", luma_plane(6, 8, 10, 1), 16, seed=2)
    image = as_samples("I420_10LE", buffer)
    assert lumahist.stats(image, format="I420_10LE", backend="cpu").bit_depth == 10
    assert lumahist.stats(image, format="I420_10LE", bit_depth=10, backend="cpu").bit_depth == 10
    with pytest.raises(lumahist.InvalidArgumentError, match="bit depth 12"):
        lumahist.stats(image, format="I420_10LE", bit_depth=12, backend="cpu")


# ---------------------------------------------------------------------------
# Wrong arrays raise; nothing outside an array is ever written.

NV12 = np.zeros((48, 32), np.uint8)
# (what, array, options): each must raise InvalidArgumentError.
WRONG = [
    ("NV12 of 4 rows (no height fills them)", np.zeros((4, 8), np.uint8), {"format": "NV12"}),
    ("I420 of 7 rows", np.zeros((7, 8), np.uint8), {"format": "I420"}),
    ("NV12 in uint16", NV12.astype(np.uint16), {"format": "NV12"}),
    ("P010 in uint8", NV12, {"format": "P010"}),
    ("P010 big-endian", NV12.astype(">u2"), {"format": "P010"}),
    ("NV12 in 3 dimensions", NV12[..., None].repeat(2, axis=2), {"format": "NV12"}),
    ("NV12 wider than width=", NV12, {"format": "NV12", "width": 33}),
    ("I420 in a slice", np.zeros((48, 40), np.uint8)[:, :32], {"format": "I420"}),
    ("YUY2 of 3 channels", np.zeros((4, 8, 3), np.uint8), {"format": "YUY2"}),
    ("YUY2 of an odd width without width=", np.zeros((4, 7, 2), np.uint8), {"format": "YUY2"}),
    ("YUY2 rows of an odd byte count", np.zeros((4, 15), np.uint8), {"format": "YUY2"}),
    ("YUY2 of 2 bytes a row", np.zeros((4, 2), np.uint8), {"format": "YUY2"}),
    ("UYVY in uint16", np.zeros((4, 8, 2), np.uint16), {"format": "UYVY"}),
    ("YUY2 wider than its rows", np.zeros((4, 8, 2), np.uint8), {"format": "YUY2", "width": 9}),
    ("v210 of 20 bytes a row", np.zeros((4, 20), np.uint8), {"format": "v210"}),
    ("v210 of 8 bytes a row", np.zeros((4, 8), np.uint8), {"format": "v210"}),
    ("v210 wider than its rows", np.zeros((4, 32), np.uint8), {"format": "v210", "width": 13}),
    ("v210 in uint32 words", np.zeros((4, 8), np.uint32), {"format": "v210"}),
    ("RGB10A2_LE in uint16", np.zeros((4, 4), np.uint16), {"format": "RGB10A2_LE"}),
    ("RGB10A2_LE as H x W x 4 bytes", np.zeros((4, 4, 4), np.uint8), {"format": "RGB10A2_LE"}),
    ("RGB10A2_LE big-endian", np.zeros((4, 4), ">u4"), {"format": "RGB10A2_LE"}),
    ("R210 little-endian", np.zeros((4, 4), "<u4"), {"format": "R210"}),
    ("uint32 without a format", np.zeros((4, 4), np.uint32), {}),
    ("GRAY16_BE little-endian", np.zeros((4, 4), "<u2"), {"format": "GRAY16_BE"}),
    ("GRAY16 big-endian", np.zeros((4, 4), ">u2"), {"format": "GRAY16"}),
    ("big-endian RGB", np.zeros((4, 4, 3), ">u2"), {}),
    ("RGBA16 of 3 channels", np.zeros((4, 4, 3), np.uint16), {"format": "RGBA16"}),
    ("BGRA16 in uint8", np.zeros((4, 4, 4), np.uint8), {"format": "BGRA16"}),
    ("gray with another width=", np.zeros((4, 4), np.uint8), {"width": 3}),
    ("a negative width=", NV12, {"format": "NV12", "width": -2}),
    ("uint64", np.zeros((4, 4), np.uint64), {"format": "GRAY16"}),
    ("int32 words", np.zeros((4, 4), np.int32), {"format": "R210"}),
]


@pytest.mark.parametrize("what,image,options", WRONG, ids=[w[0] for w in WRONG])
def test_wrong_arrays_raise(what, image, options):
    for call in (lumahist.stats, lumahist.equalize):
        with pytest.raises(lumahist.InvalidArgumentError) as caught:
            call(image, backend="cpu", **options)
        assert caught.value.status == -1 and str(caught.value)


def test_a_short_lut_is_refused():
    """A LUT shorter than 2^depth of the format's luma: the library would
    read past it."""
    buffer, _, _ = planes_buffer("I420_12LE", luma_plane(6, 8, 12, 1), 16, seed=2)
    image = as_samples("I420_12LE", buffer)
    for entries in (256, 1024, 8192):
        with pytest.raises(lumahist.InvalidArgumentError, match="2\\^bit_depth"):
            lumahist.apply_lut(image, np.zeros(entries, np.uint16), format="I420_12LE",
                               backend="cpu")
    data, _ = v210_frame(luma_plane(2, 6, 10, 1), seed=2)
    with pytest.raises(lumahist.InvalidArgumentError):
        lumahist.apply_lut(data, np.zeros(256, np.uint16), format="v210", backend="cpu")


def test_out_must_be_the_same_frame():
    buffer, _, _ = planes_buffer("NV12", luma_plane(8, 12, 8, 1), 12, seed=2)
    with pytest.raises(lumahist.Error):
        lumahist.equalize(buffer, format="NV12", out=np.zeros((15, 12), np.uint8),
                          backend="cpu")
    frozen = buffer.copy()
    frozen.flags.writeable = False
    with pytest.raises(lumahist.InvalidArgumentError):
        lumahist.equalize(buffer, format="NV12", out=frozen, backend="cpu")


def shapes_to_try(seed):
    """Small arrays of every shape, element type and stride the module could
    be handed, many of them wrong for the format."""
    rng = np.random.default_rng(seed)
    dtypes = [np.uint8, "<u2", ">u2", "<u4", ">u4"]
    for _ in range(40):
        ndim = int(rng.integers(2, 4))
        shape = [int(rng.integers(1, 20)), int(rng.integers(1, 40))]
        if ndim == 3:
            shape.append(int(rng.choice([1, 2, 3, 4])))
        yield (tuple(shape), dtypes[int(rng.integers(0, len(dtypes)))],
               int(rng.integers(0, 9)), [None, None, 1, 5, 13, 30][int(rng.integers(0, 6))])


@pytest.mark.parametrize("name", sorted(lumahist.FORMATS))
def test_no_array_is_written_outside(name):
    """Each array is a view inside a larger buffer of a known pattern: after
    an in-place equalize and overlay (which write) every byte of the buffer
    outside the view's elements must still be the pattern, whatever the
    call raised.  Arrays the module accepts are read whole (stats)."""
    for shape, dtype, pad, width in shapes_to_try(lumahist.FORMATS.index(name)):
        dtype = np.dtype(dtype)
        wide_shape = (shape[0] + 2, shape[1] + pad) + shape[2:]
        size = int(np.prod(wide_shape)) * dtype.itemsize
        parent = np.frombuffer(b"\xa5" * size, dtype=dtype).reshape(wide_shape).copy()
        pattern = parent.copy()
        view = parent[1:1 + shape[0], :shape[1]]
        inside = np.zeros(wide_shape, bool)
        inside[1:1 + shape[0], :shape[1]] = True
        options = {"format": name, "width": width, "backend": "cpu"}
        for call in (lumahist.stats, lambda v, **o: lumahist.equalize(v, out=v, **o),
                     lambda v, **o: lumahist.overlay(v, out=v, **o)):
            try:
                call(view, **options)
            except lumahist.Error:
                pass
            assert np.array_equal(parent[~inside], pattern[~inside]), (
                f"{name}: a {shape} {dtype} view padded by {pad}, width={width}: "
                "written outside")


class DescribedAsCuda:
    """A host array described by __cuda_array_interface__ alone: the module
    builds its frame as it does for CuPy's and PyTorch's, and the CPU
    backend then refuses device memory (UnsupportedError), so a CUDA array's
    checks are tested here without a GPU."""

    def __init__(self, host):
        self.host = host
        self.__cuda_array_interface__ = {
            "shape": host.shape, "typestr": host.dtype.str, "version": 3,
            "data": (host.ctypes.data, False),
            "strides": None if host.flags.c_contiguous else host.strides}


@pytest.mark.parametrize("what,image,options", WRONG, ids=[w[0] for w in WRONG])
def test_wrong_cuda_arrays_raise(what, image, options):
    with pytest.raises(lumahist.InvalidArgumentError):
        lumahist.stats(DescribedAsCuda(image), backend="cpu", **options)


@pytest.mark.parametrize("name", sorted(lumahist.FORMATS))
def test_cuda_arrays_of_every_format_reach_the_library(name):
    if name in PLANES:
        sample, _, _, _, depth, _ = PLANES[name]
        buffer, _, _ = planes_buffer(name, luma_plane(9, 14, depth, 1), 14 * sample + 18, seed=2)
        image = as_samples(name, buffer)
        options = {"width": 14}
    elif name in PACKED:
        image, options = packed_frame(name, luma_plane(5, 7, 8, 1), seed=2), {"width": 7}
    elif name == "v210":
        image, options = v210_frame(luma_plane(3, 13, 10, 1), seed=2, row_bytes=64)[0], {
            "width": 13}
    elif name in PACKED10:
        image, options = packed10_frame(name, *colour_photo(4, 5, 10, seed=3)), {}
    else:
        channels = {"GRAY8": 0, "GRAY16": 0, "GRAY16_BE": 0, "RGB": 3, "BGR": 3, "RGB16": 3}
        dtype = (">u2" if name == "GRAY16_BE" else np.uint16 if "16" in name else np.uint8)
        shape = (4, 5) + ((channels.get(name, 4),) if channels.get(name, 4) else ())
        image, options = np.zeros(shape, dtype), {}
    with pytest.raises(lumahist.UnsupportedError, match="device"):
        lumahist.stats(DescribedAsCuda(image), format=name, backend="cpu", **options)
    if name in PLANES and name not in SLICEABLE:
        with pytest.raises(lumahist.InvalidArgumentError, match="whole rows"):
            lumahist.stats(DescribedAsCuda(image[:, :14]), format=name, backend="cpu")


def test_the_stubs_name_every_argument():
    """__init__.pyi's functions take the arguments the module's do (width=
    and format= included), so that type checkers see the API that runs."""
    import ast
    import inspect
    stubs = os.path.join(os.path.dirname(lumahist.__file__), "__init__.pyi")
    with open(stubs) as f:
        tree = ast.parse(f.read())
    functions = [node for node in tree.body if isinstance(node, ast.FunctionDef)]
    assert {"stats", "equalize", "clahe", "apply_lut", "overlay"} <= {f.name for f in functions}
    for function in functions:
        a = function.args
        stubbed = [x.arg for x in a.posonlyargs + a.args + a.kwonlyargs]
        actual = list(inspect.signature(getattr(lumahist, function.name)).parameters)
        assert stubbed == actual, function.name
    assert "FORMATS" in {t.target.id for t in tree.body if isinstance(t, ast.AnnAssign)}
