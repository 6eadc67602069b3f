"""The Python module against the command-line tool's records and OpenCV, on
NumPy arrays: statistics, equalization, CLAHE, LUTs, views and strides, bad
arrays, threads.  Run by meson (`meson test -C build python`) with
PYTHONPATH=BUILD/python and LUMAHIST=BUILD/src/tool/lumahist."""
import json
import os
import subprocess
import threading

import numpy as np
import pytest

import lumahist

cv2 = pytest.importorskip("cv2")
LUMAHIST = os.environ.get("LUMAHIST")
SAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "samples")


def photo(height, width, seed, channels=None, dtype=np.uint8):
    """A smooth gradient with noise, like a photograph's histogram."""
    rng = np.random.default_rng(seed)
    top = np.iinfo(dtype).max
    y, x = np.mgrid[0:height, 0:width]
    base = (x / max(width - 1, 1) * 0.6 + y / max(height - 1, 1) * 0.4) * top
    shape = (height, width) if channels is None else (height, width, channels)
    noise = rng.normal(0, top * 0.05, shape)
    if channels is not None:
        base = base[..., None]
    return np.clip(base + noise, 0, top).astype(dtype)


def cli_record(path, *extra):
    assert LUMAHIST, "LUMAHIST is not set"
    out = subprocess.run([LUMAHIST, "stats", "--backend", "cpu", "--decoder", "cpu", *extra, path],
                         capture_output=True, check=True).stdout
    return json.loads(out)


def test_pillow_images_are_read_as_their_arrays():
    """A Pillow image (an __array_interface__, no buffer) is read as
    np.asarray(image) is, by stats and the rewriting functions; a mode whose
    pixels are no layout read here (a palette, CMYK, gray and alpha,
    bilevel) is refused rather than read as another layout."""
    Image = pytest.importorskip("PIL.Image")
    rgb = photo(37, 53, 21, channels=3)
    images = {"RGB": Image.fromarray(rgb), "L": Image.fromarray(rgb[..., 1]),
              "RGBA": Image.fromarray(np.dstack([rgb, rgb[..., :1]])),
              "I;16": Image.fromarray(photo(37, 53, 22, dtype=np.uint16))}
    for mode, image in images.items():
        assert image.mode == mode
        array = np.asarray(image)
        assert lumahist.stats(image, backend="cpu").to_dict() == \
            lumahist.stats(array, backend="cpu").to_dict(), mode
        assert np.array_equal(lumahist.equalize(image, backend="cpu"),
                              lumahist.equalize(array, backend="cpu")), mode
        assert np.array_equal(lumahist.overlay(image, backend="cpu"),
                              lumahist.overlay(array, backend="cpu")), mode
    for mode in ("P", "CMYK", "LA", "1"):
        with pytest.raises(lumahist.InvalidArgumentError, match=f"mode '{mode}'"):
            lumahist.stats(images["RGB"].convert(mode))
        with pytest.raises(lumahist.InvalidArgumentError, match=f"mode '{mode}'"):
            lumahist.equalize(images["RGB"].convert(mode))


def test_the_extension_exports_none_of_the_librarys_functions():
    """The module holds a static copy of the library; its lh_* functions stay
    inside it, so that an application that also loads liblumahist.so (or
    another module's copy) gets each its own."""
    import ctypes
    from lumahist import _lumahist
    extension = ctypes.CDLL(_lumahist.__file__)
    assert hasattr(extension, "PyInit__lumahist")
    exported = [name for name in ("lh_version", "lh_context_new", "lh_analyze", "lh_last_error")
                if hasattr(extension, name)]
    assert not exported


@pytest.mark.parametrize("kind", ["gray8", "rgb8", "gray16", "rgba8"])
def test_stats_equal_the_tools_records(tmp_path, kind):
    if kind == "gray8":
        image = photo(97, 131, 1)
    elif kind == "rgb8":
        image = photo(64, 77, 2, channels=3)
    elif kind == "rgba8":
        image = photo(33, 50, 3, channels=4)
    else:
        image = photo(41, 59, 4, dtype=np.uint16)
    path = str(tmp_path / f"{kind}.png")
    # cv2 writes BGR(A): give it the colour channels swapped so the file is RGB(A).
    order = {3: [2, 1, 0], 4: [2, 1, 0, 3]}
    cv2.imwrite(path, image[..., order[image.shape[2]]] if image.ndim == 3 else image)
    want = cli_record(path, "--percentiles", "0,1,12.5,50,99.9,100")
    got = lumahist.stats(image, percentiles=(0, 1, 12.5, 50, 99.9, 100), backend="cpu").to_dict()
    for key in ("path", "decoder"):
        want.pop(key)
    assert list(got) == list(want)
    assert got == want


def test_tiny_and_whole_percentiles_are_taken_as_the_tool_takes_them(tmp_path):
    """A subnormal percentile is a number in [0, 100]: the library's parser
    refused 5e-324 (strtod's ERANGE), and stats() with it.  Each spelling
    gives the tool's key and value."""
    image = photo(23, 31, 5)
    path = str(tmp_path / "gray.png")
    cv2.imwrite(path, image)
    for text, p in (("5e-324", 5e-324), ("1e-300", 1e-300), ("1e2", 100.0),
                    ("100.0000", 100.0)):
        want = cli_record(path, "--percentiles", text)
        got = lumahist.stats(image, percentiles=(p,), backend="cpu").to_dict()
        assert got["percentiles"] == want["percentiles"]
        assert list(want["percentiles"]) == [lumahist._percentile_key(p)]
    assert lumahist.stats(image, percentiles=(5e-324,)).percentiles[5e-324] == image.min()
    # -0 is keyed "0", as the tool's --percentiles -0 (to_dict and the
    # records of stats_files wrote "-0": merged with the tool's records, the
    # dataset record held the key "0" twice); the float key keeps the sign.
    want = cli_record(path, "--percentiles", "-0")["percentiles"]
    assert want == {"0": image.min()}
    assert lumahist.stats(image, percentiles=(-0.0,)).to_dict()["percentiles"] == want
    [record] = lumahist.stats_files(path, percentiles=(-0.0,), errors="raise")
    assert record.to_dict()["percentiles"] == want


@pytest.mark.parametrize("name", ["cat-chelsea.png", "rocket-pad-dusk.jpg"])
def test_stats_of_bgr_is_the_fixed_point_luma(name):
    image = cv2.imread(os.path.join(SAMPLES, name))
    s = lumahist.stats(image, format="BGR", backend="cpu")
    wide = image.astype(np.int64)
    luma = (9798 * wide[..., 2] + 19235 * wide[..., 1] + 3735 * wide[..., 0] + 16384) >> 15
    assert np.array_equal(s.histogram, np.bincount(luma.ravel(), minlength=256))
    assert s.count == luma.size and s.median == int(np.sort(luma, axis=None)[(luma.size + 1) // 2 - 1])
    # OpenCV's cvtColor takes the same 15-bit weights: its gray is ours.
    gray = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    assert np.array_equal(gray, luma)


def test_rgb_luma_is_opencvs_gray_on_every_8bit_triplet():
    """BT.601 luma of every one of the 2^24 8-bit R'G'B' triplets equals
    cv2.cvtColor(RGB2GRAY)'s (the 14-bit weights before differed on 0.26 %
    of them), odd widths included (OpenCV's scalar tail)."""
    values = np.arange(1 << 24, dtype=np.uint32)
    cube = np.stack([values >> 16, (values >> 8) & 255, values & 255], axis=-1).astype(np.uint8)
    for width in (4096, 4093):
        image = cube[: (cube.shape[0] // width) * width].reshape(-1, width, 3)
        gray = cv2.cvtColor(image, cv2.COLOR_RGB2GRAY)
        s = lumahist.stats(image, backend="cpu")
        assert np.array_equal(s.histogram, np.bincount(gray.ravel(), minlength=256)), width


MATRIX_COEFFICIENTS = {"bt601": (0.299, 0.114), "bt709": (0.2126, 0.0722),
                       "bt2020": (0.2627, 0.0593)}


def sixteen_bit_photographs():
    """16-bit R'G'B' photographs: the samples' photographs upsampled (bicubic,
    in float) and spread over 16 bits with a little noise, as a raw
    converter's output looks; and a smooth gradient with noise."""
    rng = np.random.default_rng(16)
    images = []
    for name in ("cat-chelsea.png", "rocket-pad-dusk.jpg", "sky-high-key.jpg"):
        bgr = cv2.imread(os.path.join(SAMPLES, name))[..., ::-1].astype(np.float32)
        big = cv2.resize(bgr, None, fx=1.5, fy=1.5, interpolation=cv2.INTER_CUBIC)
        deep = big * 257.0 + rng.normal(0, 40, big.shape)
        images.append(np.clip(np.rint(deep), 0, 65535).astype(np.uint16))
    images.append(photo(401, 613, 17, channels=3, dtype=np.uint16))
    return images


@pytest.mark.parametrize("backend", ["cpu", "cuda"])
def test_sixteen_bit_rgb_luma_is_correctly_rounded(backend):
    """Every pixel's luma is floor(Kr R + Kg G + Kb B + 1/2): the exact value
    (integers in units of 10^-4), which float64 gives everywhere but at exact
    ties k + 1/2 (there its own rounding decides); the histograms equal the
    exact one.  The 14-bit weights used before put many pixels one code off,
    so this fails on them."""
    for image in sixteen_bit_photographs():
        c = image.astype(np.int64)
        for matrix, (kr_f, kb_f) in MATRIX_COEFFICIENTS.items():
            kr, kb = round(kr_f * 10000), round(kb_f * 10000)
            num = kr * c[..., 0] + (10000 - kr - kb) * c[..., 1] + kb * c[..., 2]
            exact = (num + 5000) // 10000
            as_float = np.floor(kr_f * c[..., 0] + (1 - kr_f - kb_f) * c[..., 1] + kb_f * c[..., 2]
                                + 0.5).astype(np.int64)
            ties = num % 10000 == 5000
            assert np.array_equal(as_float[~ties], exact[~ties]), matrix
            k14r, k14b = round(kr_f * 16384), round(kb_f * 16384)
            old = (k14r * c[..., 0] + (16384 - k14r - k14b) * c[..., 1] + k14b * c[..., 2]
                   + 8192) >> 14
            assert (old != exact).mean() > 0.01, "the check could not tell the old rule apart"
            try:
                s = lumahist.stats(image, matrix=matrix, backend=backend)
            except lumahist.NoDeviceError:
                pytest.skip("no CUDA device is usable")
            assert s.bit_depth == 16
            assert np.array_equal(s.histogram, np.bincount(exact.ravel(), minlength=65536)), matrix
            assert s.median == int(np.sort(exact, axis=None)[(exact.size + 1) // 2 - 1])


@pytest.mark.parametrize("seed", range(4))
def test_equalize_is_opencvs_equalizehist(seed):
    image = photo(120 + seed, 200 - seed, seed)
    if seed == 3:
        image = np.full((17, 9), 77, np.uint8)  # one value: OpenCV leaves it
    out = lumahist.equalize(image, backend="cpu")
    assert out is not image and np.array_equal(out, cv2.equalizeHist(image))
    # In place, through out=.
    copy = image.copy()
    assert lumahist.equalize(copy, out=copy) is copy and np.array_equal(copy, out)


def test_clahe_within_one_of_opencv():
    image = cv2.imread(os.path.join(SAMPLES, "camera-gray.png"), cv2.IMREAD_GRAYSCALE)
    for tiles, clip in (((8, 8), 40.0), ((5, 3), 2.0)):
        ours = lumahist.clahe(image, tiles=tiles, clip=clip, backend="cpu").astype(int)
        theirs = cv2.createCLAHE(clip, tiles).apply(image).astype(int)
        assert np.abs(ours - theirs).max() <= 1


@pytest.mark.parametrize("orientation", range(1, 9))
def test_clahe_orientation_is_opencvs_on_the_upright_image(orientation):
    """orientation: the grid is the image's as shown (OpenCV on the image
    turned upright, turned back), on sides no tile count divides."""
    image = cv2.imread(os.path.join(SAMPLES, "camera-gray.png"), cv2.IMREAD_GRAYSCALE)[:251, :199]
    shown = {1: lambda a: a, 2: lambda a: a[:, ::-1], 3: lambda a: a[::-1, ::-1],
             4: lambda a: a[::-1, :], 5: lambda a: a.T, 6: lambda a: a.T[:, ::-1],
             7: lambda a: a.T[::-1, ::-1], 8: lambda a: a.T[::-1, :]}[orientation]
    stored = np.ascontiguousarray(image)
    ours = lumahist.clahe(stored, tiles=(8, 3), clip=2.0, backend="cpu", orientation=orientation)
    theirs = cv2.createCLAHE(2.0, (8, 3)).apply(np.ascontiguousarray(shown(stored)))
    assert np.abs(shown(ours).astype(int) - theirs.astype(int)).max() <= 1
    with pytest.raises(lumahist.InvalidArgumentError):
        lumahist.clahe(stored, orientation=9)


def test_clahe_clip_past_an_int_is_no_limit():
    """README: a clip limit of 2^31 counts or more (where OpenCV's int
    conversion overflows) is no limit, not OpenCV's clip at 1 count."""
    image = photo(48, 64, 4)
    area = (64 // 8) * (48 // 8)
    ours = lumahist.clahe(image, clip=2**31 * 256 / area, backend="cpu")
    assert np.array_equal(ours, lumahist.clahe(image, clip=0, backend="cpu"))
    below = lumahist.clahe(image, clip=(2**31 - 1) * 256 / area / 2, backend="cpu")
    assert np.array_equal(below, ours)


@pytest.mark.parametrize("tiles", [(1.5, 2), (8, 8, 8), (8,), 8, "88", None, (2**40, 2)],
                         ids=["fraction", "three", "one", "int", "text", "none", "huge"])
def test_clahe_tiles_must_be_two_integers(tiles):
    """tiles=(1.5, 2) ran a 1x2 grid and "88" an 8x8 one without a word."""
    image = photo(16, 16, 1)
    with pytest.raises(lumahist.InvalidArgumentError, match="tiles|grid"):
        lumahist.clahe(image, tiles=tiles, backend="cpu")
    assert np.array_equal(lumahist.clahe(image, tiles=(np.int64(3), np.uint8(2)), backend="cpu"),
                          lumahist.clahe(image, tiles=[3, 2], backend="cpu"))


def scaled_chroma(c, old_sum, new_sum):
    """lumahist.h's LH_CHROMA_SCALE for chroma samples c whose footprints' luma
    sums go from old_sum to new_sum, in plain integer NumPy."""
    c = c.astype(np.int64)
    safe = np.maximum(old_sum, 1)
    gain = ((new_sum << 16) + safe // 2) // safe
    m = (np.abs(c - 128) * gain + 32768) >> 16
    v = np.where(c >= 128, np.minimum(255, 128 + m), np.maximum(0, 128 - m))
    return np.where(old_sum == 0, 128, v)


def footprint_sums(y, fx, fy):
    h, w = y.shape
    padded = np.zeros((-(-h // fy) * fy, -(-w // fx) * fx), np.int64)
    padded[:h, :w] = y
    return padded.reshape(padded.shape[0] // fy, fy, padded.shape[1] // fx, fx).sum(axis=(1, 3))


@pytest.mark.parametrize("fmt,mode", [("Y444", "global"), ("NV12", "global"), ("NV12", "clahe"),
                                      ("NV12", "lut")])
def test_chroma_scale_is_the_colour_rule_in_ycbcr(fmt, mode):
    rng = np.random.default_rng(15)
    w, h = 24, 13  # an odd height: NV12's last chroma row covers one luma row
    rows = 3 * h if fmt == "Y444" else h + (h + 1) // 2
    frame = rng.integers(0, 256, (rows, w), dtype=np.uint8)
    frame[:h][::5, ::3] = 0
    frame[:2, :4] = 0  # wholly black footprints
    lut = (255 - np.arange(256)).astype(np.uint16)

    def run(**kw):
        if mode == "lut":
            return lumahist.apply_lut(frame, lut, format=fmt, backend="cpu", **kw)
        if mode == "clahe":
            return lumahist.clahe(frame, tiles=(3, 2), format=fmt, backend="cpu", **kw)
        return lumahist.equalize(frame, format=fmt, backend="cpu", **kw)

    kept, scaled = run(), run(chroma="scale")
    assert np.array_equal(kept[h:], frame[h:])
    assert np.array_equal(scaled[:h], kept[:h])
    fx = fy = 1 if fmt == "Y444" else 2
    old_sum = footprint_sums(frame[:h], fx, fy)
    new_sum = footprint_sums(scaled[:h], fx, fy)
    if fmt == "Y444":
        planes = [(frame[h * k:h * (k + 1)], scaled[h * k:h * (k + 1)]) for k in (1, 2)]
    else:
        planes = [(frame[h:, k::2], scaled[h:, k::2]) for k in (0, 1)]
    for before, after in planes:
        assert np.array_equal(after, scaled_chroma(before, old_sum, new_sum))
    assert np.all(scaled[h:h + 1, 0:2] == 128)
    with pytest.raises(lumahist.InvalidArgumentError):
        run(chroma="hue")


def test_apply_lut_of_the_histogram_is_equalize():
    image = photo(80, 90, 9)
    s = lumahist.stats(image, backend="cpu")
    lut = lumahist.lut_from_histogram(s.histogram)
    assert lut.dtype == np.uint16 and lut.shape == (256,)
    assert np.array_equal(lumahist.apply_lut(image, lut), lumahist.equalize(image))


@pytest.mark.parametrize("lut", [
    np.arange(256, dtype=np.int64) + 65536,  # would wrap to 0 .. 255 and pass
    np.arange(256, dtype=np.int64) - 1,      # -1 would wrap to 65535
    np.arange(256) + 0.5,                    # would be cut to 0 .. 255
    np.full(256, np.nan),
], ids=["above-uint16", "negative", "fractional", "nan"])
def test_apply_lut_refuses_entries_that_are_not_uint16(lut):
    """A LUT of another type is taken only where its entries are uint16
    values: converting would give other entries, which the library cannot
    see (a wrapped entry may even be a valid one)."""
    with pytest.raises(lumahist.InvalidArgumentError, match="lut: entry"):
        lumahist.apply_lut(photo(8, 8, 1), lut, backend="cpu")
    image = photo(8, 8, 2)
    assert np.array_equal(lumahist.apply_lut(image, (255 - np.arange(256)).astype(np.float32)),
                          255 - image)


@pytest.mark.parametrize("histogram", [
    np.full(256, -1, np.int64),      # would wrap to 2^64 - 1 a bin
    np.full(256, 1 / 256),           # a normalized histogram would be cut to 0
], ids=["negative", "fractional"])
def test_lut_from_histogram_refuses_counts_that_are_not_counts(histogram):
    with pytest.raises(lumahist.InvalidArgumentError, match="histogram: count"):
        lumahist.lut_from_histogram(histogram)
    counts = lumahist.stats(photo(40, 50, 3), backend="cpu").histogram
    assert np.array_equal(lumahist.lut_from_histogram(counts.astype(np.float32)),
                          lumahist.lut_from_histogram(counts))


def test_views_and_strides():
    big = photo(300, 400, 5)
    rows = big[::3]  # every third row: a larger row stride
    assert np.array_equal(lumahist.stats(rows).histogram,
                          lumahist.stats(np.ascontiguousarray(rows)).histogram)
    window = big[17:200, 33:301]  # padded rows, an odd start
    assert np.array_equal(lumahist.stats(window).histogram,
                          lumahist.stats(window.copy()).histogram)
    assert np.array_equal(lumahist.equalize(window), cv2.equalizeHist(window.copy()))


def at_odd_address(array):
    """A copy of array whose samples lie at odd addresses, as numpy.frombuffer
    or numpy.memmap at an odd offset gives them (a YUV4MPEG2 file's frames)."""
    raw = bytearray(array.nbytes + 1)
    odd = np.ndarray(array.shape, array.dtype, buffer=raw, offset=1)
    odd[...] = array
    assert not odd.flags.aligned
    return odd


@pytest.mark.parametrize("shape, kwargs", [((37, 53), {}), ((21, 19, 3), {}),
                                           ((30, 24), {"format": "P010"})])
def test_samples_at_odd_addresses_are_read_as_an_aligned_copy(shape, kwargs):
    """16-bit samples at odd addresses: the library refuses them, so the
    module copies such an array (and an out= such array is written through
    an aligned copy): the results are the aligned array's.  They raised
    InvalidArgumentError ("multiples of 2")."""
    image = (photo(shape[0], shape[1], 9, dtype=np.uint16) >> 4).astype(np.uint16)
    if len(shape) == 3:
        image = np.stack([image, image[::-1], image[:, ::-1]], axis=2)
    odd = at_odd_address(image)
    # The same record, wherever backend="auto" sends each call.
    got, want = (lumahist.stats(a, **kwargs).to_dict() for a in (odd, image))
    got.pop("backend"), want.pop("backend")
    assert got == want
    lut = np.arange(65536, dtype=np.uint16) // 2
    for call in (lambda a, **k: lumahist.equalize(a, **k, **kwargs),
                 lambda a, **k: lumahist.clahe(a, **k, **kwargs),
                 lambda a, **k: lumahist.apply_lut(a, lut[:1 << (10 if kwargs else 16)], **k,
                                                   **kwargs),
                 lambda a, **k: lumahist.overlay(a, **k, **kwargs)):
        want = call(image)
        assert np.array_equal(call(odd), want)
        out = at_odd_address(np.zeros_like(image))
        assert call(odd, out=out) is out and np.array_equal(out, want)
        in_place = at_odd_address(image)
        call(in_place, out=in_place)
        assert np.array_equal(in_place, want)
    assert np.array_equal(odd, image)


def test_region_of_interest():
    image = photo(50, 60, 6)
    s = lumahist.stats(image, roi=(5, 7, 20, 11))
    assert s.count == 220
    assert np.array_equal(s.histogram, lumahist.stats(image[7:18, 5:25].copy()).histogram)


def test_sixteen_bit_depth_and_nv12():
    ten = (photo(30, 40, 7, dtype=np.uint16) >> 6).astype(np.uint16)
    s = lumahist.stats(ten, bit_depth=10)
    assert s.bit_depth == 10 and s.histogram.size == 1024 and s.max <= 1023
    y = photo(32, 48, 8)
    nv12 = np.concatenate([y, np.full((16, 48), 128, np.uint8)])
    s = lumahist.stats(nv12, format="NV12")
    assert (s.width, s.height) == (48, 32)
    assert np.array_equal(s.histogram, lumahist.stats(y).histogram)


@pytest.mark.parametrize("bad", [
    np.zeros((4, 4), np.float32),
    np.zeros((4, 4), np.int16),
    np.zeros(16, np.uint8),
    np.zeros((0, 4), np.uint8),
    np.zeros((4, 4, 2), np.uint8),
    np.zeros((8, 8), np.uint8)[:, ::2],
    np.zeros((8, 8), np.uint8)[::-1],
    "not an array",
])
def test_bad_arrays_raise(bad):
    with pytest.raises(lumahist.InvalidArgumentError) as caught:
        lumahist.stats(bad)
    assert caught.value.status == -1 and str(caught.value)


@pytest.mark.parametrize("rows, words", [
    (np.zeros((8, 8), np.uint8)[::-1], r"the rows go upwards in memory \(a flipped view"),
    (np.zeros((8, 8, 3), np.uint8)[::-1], r"the rows go upwards in memory \(a flipped view"),
    (np.broadcast_to(np.zeros((1, 8), np.uint8), (8, 8)), "the rows overlap in memory"),
])
def test_rows_of_packed_samples_in_a_bad_order_are_said_to_be_so(rows, words):
    """A flipped view (image[::-1]) has each row's samples packed, yet was
    refused as "the samples of a row are not packed": the message says what
    is wrong with its rows, for the image and for out= alike."""
    with pytest.raises(lumahist.InvalidArgumentError, match=words):
        lumahist.stats(rows)
    # (as_strided makes a view that overlaps itself and can be written)
    out = (np.zeros(rows.shape, np.uint8)[::-1] if rows.strides[0] < 0 else
           np.lib.stride_tricks.as_strided(np.zeros(rows.shape, np.uint8), strides=rows.strides))
    with pytest.raises(lumahist.InvalidArgumentError, match="^out: " + words):
        lumahist.equalize(np.zeros(rows.shape, np.uint8), out=out)


def test_bad_options_and_outputs_raise():
    image = photo(10, 10, 1)
    with pytest.raises(lumahist.InvalidArgumentError):
        lumahist.stats(image, matrix="bt999")
    with pytest.raises(lumahist.InvalidArgumentError):
        lumahist.stats(image, percentiles=(101,))
    with pytest.raises(lumahist.InvalidArgumentError):
        lumahist.stats(image, format="YUY9")
    frozen = image.copy()
    frozen.flags.writeable = False
    with pytest.raises(lumahist.InvalidArgumentError):
        lumahist.equalize(image, out=frozen)
    with pytest.raises(lumahist.Error):
        lumahist.equalize(image, out=np.zeros((10, 11), np.uint8))
    with pytest.raises(lumahist.InvalidArgumentError):
        lumahist.apply_lut(image, np.zeros(10, np.uint16))


@pytest.mark.parametrize("function", ["equalize", "clahe", "overlay"])
@pytest.mark.parametrize("out", ["read-only", "wider", "shorter", "uint16", "float32", "a list"])
def test_an_out_that_cannot_take_the_image_raises(function, out):
    """Every rewriting function holds out= to the image's shape and element
    type, writable: overlay, which copies the image into out first, used to
    convert a uint16 out silently and let NumPy's own errors through."""
    image = photo(10, 12, 1, channels=3)
    outs = {"read-only": np.zeros_like(image), "wider": np.zeros((10, 13, 3), np.uint8),
            "shorter": np.zeros((9, 12, 3), np.uint8), "uint16": np.zeros(image.shape, np.uint16),
            "float32": np.zeros(image.shape, np.float32), "a list": [[0] * 12] * 10}
    target = outs[out]
    if out == "read-only":
        target.flags.writeable = False
    before = np.array(target, copy=True)
    with pytest.raises(lumahist.InvalidArgumentError) as caught:
        getattr(lumahist, function)(image, out=target)
    assert caught.value.status == -1 and "out" in str(caught.value)
    assert np.array_equal(np.asarray(target), before), "out was written before the refusal"


@pytest.mark.parametrize("function", ["equalize", "apply_lut", "clahe"])
@pytest.mark.parametrize("shift", [(5, 0), (-3, 0), (0, 4), (0, 0)])
def test_an_out_overlapping_the_image(function, shift):
    """An out that shares memory with the image without being it reads the
    image as it was (as NumPy does): rows already written were read again."""
    base = photo(48, 52, 4)
    rows, cols = shift
    image_at = (slice(max(0, -rows), 40 + max(0, -rows)), slice(max(0, -cols), 44 + max(0, -cols)))
    out_at = (slice(max(0, rows), 40 + max(0, rows)), slice(max(0, cols), 44 + max(0, cols)))
    arguments = (np.arange(255, -1, -1, dtype=np.uint16),) if function == "apply_lut" else ()
    want = getattr(lumahist, function)(base[image_at].copy(), *arguments, backend="cpu")
    work = base.copy()
    getattr(lumahist, function)(work[image_at], *arguments, out=work[out_at], backend="cpu")
    assert np.array_equal(work[out_at], want)


def test_buffers_without_strides():
    """ctypes arrays give the buffer protocol no strides (C order): they
    were read through a NULL pointer."""
    ctypes = pytest.importorskip("ctypes")
    for element, dtype in ((ctypes.c_uint8, np.uint8), (ctypes.c_uint16, np.uint16)):
        image = photo(7, 9, 5, dtype=dtype)
        buffer = ((element * 9) * 7)()
        np.frombuffer(buffer, dtype=dtype).reshape(7, 9)[:] = image
        assert np.array_equal(lumahist.stats(buffer).histogram, lumahist.stats(image).histogram)
        out = ((element * 9) * 7)()
        lumahist.equalize(buffer, out=out)
        assert np.array_equal(np.frombuffer(out, dtype=dtype).reshape(7, 9),
                              lumahist.equalize(image))


@pytest.mark.parametrize("roi", [(8, 8, 0, 8), (5, 5, 3, 0), (0, 0, 0, 0), (-1, 0, 2, 2),
                                 (0, 0, 2**40, 4), (1, 2, 3), "abcd", (1.5, 0, 2, 2)])
def test_a_roi_of_no_pixels_or_not_four_integers_raises(roi):
    """A zero width or height gave the whole frame's statistics (the
    library's no-ROI), where the tool refuses --roi 8,8,0,8."""
    with pytest.raises(lumahist.InvalidArgumentError, match="roi"):
        lumahist.stats(photo(16, 16, 2), roi=roi)


def test_temporal_must_be_a_temporal():
    for function in (lumahist.equalize, lumahist.clahe):
        with pytest.raises(lumahist.InvalidArgumentError, match="Temporal"):
            function(photo(16, 16, 2), temporal=object())


def test_no_device_is_an_exception():
    try:
        lumahist.stats(photo(8, 8, 1), backend="cuda")
    except lumahist.NoDeviceError as e:
        assert e.status == -4
    # With a device the call simply works.


def test_threads_give_the_same_numbers():
    images = [photo(400, 500, seed) for seed in range(8)]
    want = [lumahist.stats(i).histogram for i in images]
    got = [None] * len(images)

    def work(k):
        got[k] = lumahist.stats(images[k]).histogram

    threads = [threading.Thread(target=work, args=(k,)) for k in range(len(images))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(np.array_equal(a, b) for a, b in zip(got, want))


def test_a_threads_contexts_end_with_it():
    """Each thread gets its own contexts, freed when it ends: 1000 short
    threads (a pool's, a DataLoader's) kept 6.5 MB of CPU contexts before."""
    if not os.path.exists("/proc/self/statm"):
        pytest.skip("no /proc/self/statm to read the resident size from")
    image = photo(16, 16, 1)

    def resident():
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

    def one():
        thread = threading.Thread(target=lambda: lumahist.stats(image, backend="cpu"))
        thread.start()
        thread.join()

    for _ in range(50):
        one()
    before = resident()
    for _ in range(1000):
        one()
    assert resident() - before < 3 << 20


@pytest.mark.parametrize("channels", [None, 3])
def test_overlay_is_the_tools(tmp_path, channels):
    image = photo(240, 320, 11, channels=channels)
    path = str(tmp_path / "in.png")
    cv2.imwrite(path, image[..., ::-1] if channels else image)
    subprocess.run([LUMAHIST, "overlay", "--quiet", "--backend", "cpu", "--out",
                    str(tmp_path / "out"), path], check=True, capture_output=True)
    tools = cv2.imread(str(tmp_path / "out" / "in.png"), cv2.IMREAD_UNCHANGED)
    if channels:
        tools = tools[..., ::-1]
    ours = lumahist.overlay(image, backend="cpu")
    assert not np.array_equal(ours, image), "nothing was drawn"
    assert np.array_equal(ours, tools)


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16])
def test_overlay_is_composited_over_alpha(tmp_path, dtype):
    """RGBA: the panel goes over the image with straight alpha, so it shows
    where the image is transparent (it was blended into the colours only:
    on alpha 0 it was invisible); on opaque pixels the colours are RGB's.
    The tool draws the same on the PNG."""
    top = np.iinfo(dtype).max
    image = photo(120, 160, 5, channels=4, dtype=dtype)
    image[..., 3] = 0
    image[:, 30:50, 3] = top // 2
    image[:, 50:, 3] = top
    ours = lumahist.overlay(image, backend="cpu")
    panel = np.any(ours != image, axis=-1)
    assert panel.any(), "nothing was drawn"
    transparent_part = ours[:, :30, 3][panel[:, :30]]
    assert transparent_part.size and np.all(transparent_part > 0), \
        "the panel is transparent where the image is"
    rgb = lumahist.overlay(np.ascontiguousarray(image[..., :3]), backend="cpu")
    assert np.array_equal(ours[:, 50:, :3], rgb[:, 50:])
    assert np.all(ours[:, 50:, 3] == top)
    path = str(tmp_path / "in.png")
    cv2.imwrite(path, image[..., [2, 1, 0, 3]])
    subprocess.run([LUMAHIST, "overlay", "--quiet", "--backend", "cpu", "--out",
                    str(tmp_path / "out"), path], check=True, capture_output=True)
    tools = cv2.imread(str(tmp_path / "out" / "in.png"), cv2.IMREAD_UNCHANGED)
    assert np.array_equal(ours, tools[..., [2, 1, 0, 3]])


@pytest.mark.parametrize("orientation", [3, 6, 8])
def test_overlay_orientation_is_the_tools(tmp_path, orientation):
    """A PNG with an Exif orientation: the tool draws the panel upright as
    shown; orientation= gives the same pixels, and the panel turned back
    is the upright image's."""
    from PIL import Image
    image = photo(120, 190, 12)
    exif = Image.Exif()
    exif[0x0112] = orientation
    path = str(tmp_path / "in.png")
    Image.fromarray(image).save(path, exif=exif.tobytes())
    subprocess.run([LUMAHIST, "overlay", "--quiet", "--backend", "cpu", "--out",
                    str(tmp_path / "out"), path], check=True, capture_output=True)
    tools = cv2.imread(str(tmp_path / "out" / "in.png"), cv2.IMREAD_UNCHANGED)
    ours = lumahist.overlay(image, backend="cpu", orientation=orientation)
    assert np.array_equal(ours, tools)
    # as shown: 6 is a quarter turn clockwise (np.rot90 turns the other way)
    turns = {3: 2, 6: -1, 8: 1}[orientation]
    assert np.array_equal(np.rot90(ours, turns),
                          lumahist.overlay(np.ascontiguousarray(np.rot90(image, turns)),
                                           backend="cpu"))
    with pytest.raises(lumahist.Error):
        lumahist.overlay(image, orientation=9)


@pytest.mark.parametrize("rect", [(0, 0, 0, 0), (10, 10, 0, 40), (5, 5, 40, 2), (0, 0, 20),
                                  (0, 0, 2**40, 20)])
def test_an_overlay_rect_without_room_for_a_panel_is_refused(rect):
    """A rect with a zero side drew the default panel, bottom-left, where
    the tool refuses such a --rect (as roi= of a zero side is refused, not
    read as the whole frame); three numbers or one past a C int raised a
    TypeError or OverflowError of the C call's."""
    with pytest.raises(lumahist.InvalidArgumentError, match=r"^rect \("):
        lumahist.overlay(photo(40, 60, 3), rect=rect)


@pytest.mark.parametrize("fraction", [-0.5, float("nan")])
def test_an_overlay_clip_warning_that_is_no_fraction_is_said_to_be(fraction):
    """clip_warning=nan was refused as "overlay clip warning nan is negative"."""
    with pytest.raises(lumahist.InvalidArgumentError,
                       match=f"^overlay clip warning {fraction:g} is not a fraction of the "
                       r"pixels \(0 or more\)$"):
        lumahist.overlay(photo(40, 60, 3), clip_warning=fraction)


@pytest.mark.parametrize("fraction", [1.0000001, 2, 50, float("inf")])
def test_an_overlay_clip_warning_above_one_is_refused_as_the_tool_refuses_it(fraction):
    """clip_warning=2 (a percentage meant as a fraction) was taken, and no
    band could ever light, where `lumahist overlay --clip-warning 2` and the
    element's clip-warning refuse any value above 1."""
    shown = repr(float(fraction)).removesuffix(".0")
    with pytest.raises(lumahist.InvalidArgumentError,
                       match=f"^overlay clip warning {shown} is not a fraction of the pixels "
                       r"\(1 or less, as the tool's --clip-warning\)$"):
        lumahist.overlay(photo(40, 60, 3), clip_warning=fraction)
    lumahist.overlay(photo(40, 60, 3), clip_warning=1)


@pytest.mark.parametrize("clip", [-1, -0.5, -float("inf")])
def test_a_negative_clahe_clip_is_refused_as_the_tool_refuses_it(clip):
    """clahe(clip=-1) was taken as no clipping, where `lumahist clahe --clip
    -1` and the element's clip-limit refuse a negative clip limit."""
    with pytest.raises(lumahist.InvalidArgumentError,
                       match=f"^CLAHE clip limit {float(clip)!r} is negative: 0 or more "
                       r"\(0: no clipping\), as the tool's --clip$"):
        lumahist.clahe(photo(40, 60, 3), clip=clip)
    assert np.array_equal(lumahist.clahe(photo(40, 60, 3), clip=0),
                          lumahist.clahe(photo(40, 60, 3), clip=0.0))


@pytest.mark.parametrize("orientation", [6.9, "6"])
def test_an_overlay_orientation_is_an_integer(orientation):
    """int() read orientation=6.9 as 6 (and "6" as 6), where rect= and
    width= refuse what is not an integer."""
    with pytest.raises(TypeError):
        lumahist.overlay(photo(40, 60, 3), orientation=orientation)
    image = photo(40, 60, 3)
    assert np.array_equal(lumahist.overlay(image, orientation=np.int64(6)),
                          lumahist.overlay(image, orientation=6))


def test_merge_names_a_record_without_histogram_by_its_path():
    """The message began "None: " for a record of an array (no path)."""
    record = lumahist.stats(photo(8, 8, 1)).to_dict(histogram=False)
    with pytest.raises(lumahist.InvalidArgumentError,
                       match="^A record without its histogram cannot be merged$"):
        lumahist.merge([record])
    with pytest.raises(lumahist.InvalidArgumentError,
                       match="^a.png: a record without its histogram"):
        lumahist.merge([dict(record, path="a.png")])


@pytest.mark.parametrize("records, words", [
    ([None], "^records: Stats objects or the tool's records as dicts, not NoneType$"),
    (["a.jsonl"], "not str$"),
    ([{"path": "a.png", "histogram": [1] * 256}],
     "^a.png: a record without its bit_depth cannot be merged$"),
    ([{"bit_depth": 8, "matrix": "bt601", "histogram": [1] * 256}],
     "^A record without its range cannot be merged$"),
    ([{"bit_depth": 8, "matrix": "bt601", "range": "full", "histogram": [-1] * 256}],
     "^histogram: count 0 is -1, not a count"),
    ([{"path": "a.png", "bit_depth": 10, "matrix": "bt601", "range": "full",
       "histogram": [1] * 256}],
     r"^a.png: a record's histogram does not have 2\^bit_depth counts \(256 counts, "
     r"bit_depth 10\)$"),
    ([{"bit_depth": 2**70, "matrix": "bt601", "range": "full", "histogram": [1] * 256}],
     r"^A record's histogram does not have 2\^bit_depth counts \(256 counts, "
     r"bit_depth 1180591620717411303424\)$"),
    ([{"bit_depth": "8", "matrix": "bt601", "range": "full", "histogram": [1] * 256}],
     r"^A record's histogram does not have 2\^bit_depth counts \(256 counts, "
     r"bit_depth '8'\)$"),
])
def test_merge_refuses_what_is_no_record_in_its_own_words(records, words):
    """An item that is no record raised AttributeError ('NoneType' object
    has no attribute 'get'), a record without its bit depth KeyError, and
    negative counts wrapped into "counts sum past 2^64 - 1": every failure
    is an InvalidArgumentError that says what is wrong."""
    with pytest.raises(lumahist.InvalidArgumentError, match=words):
        lumahist.merge(records)


def test_merge_is_the_tools_dataset_record(tmp_path):
    folder = tmp_path / "set"
    folder.mkdir()
    images = [photo(60 + 7 * k, 80 - 5 * k, 20 + k) for k in range(5)]
    for k, image in enumerate(images):
        cv2.imwrite(str(folder / f"{k}.png"), image)
    out = subprocess.run([LUMAHIST, "stats", "--quiet", "--backend", "cpu", "--dataset",
                          "--percentiles", "1,50,99", str(folder)],
                         capture_output=True, check=True).stdout
    lines = [json.loads(line) for line in out.splitlines()]
    records, dataset = lines[:-1], lines[-1]
    assert dataset["dataset"] is True and dataset["images"] == 5
    from_records = lumahist.merge(records)
    assert from_records.to_dict() == dataset
    # The same images named another way count once, as in `lumahist merge`.
    respelled = [dict(r, path=os.path.join(os.path.dirname(r["path"]), ".", "x", "..",
                                           os.path.basename(r["path"]))) for r in records]
    assert lumahist.merge(records + respelled).to_dict() == dataset
    from_arrays = lumahist.merge([lumahist.stats(i, percentiles=(1, 50, 99)) for i in images])
    assert from_arrays.to_dict() == dataset
    with pytest.raises(lumahist.InvalidArgumentError):
        lumahist.merge([])
    with pytest.raises(lumahist.InvalidArgumentError):
        lumahist.merge([lumahist.stats(images[0]), lumahist.stats(images[1], range="limited")])


@pytest.mark.parametrize("lists", [("1,50", "50,99.5"), ("50,1", "50,1"), ("50,1", "1,50"),
                                   ("1,50,99", "50"), ("", "5,1"), ("5,1", "")])
def test_merge_of_records_with_other_percentiles_lists_them_as_the_tool(tmp_path, lists):
    """Records of runs with other --percentiles: `lumahist merge` lists every
    percentile any of them holds, in increasing order (where they agree, the
    first's order); merge gave the first record's alone, 99.5 dropped."""
    lines = []
    for k, listed in enumerate(lists):
        path = tmp_path / f"{k}.png"
        cv2.imwrite(str(path), photo(40 + 9 * k, 60, 60 + k))
        lines += subprocess.run([LUMAHIST, "stats", "--quiet", "--backend", "cpu",
                                 "--percentiles", listed, str(path)],
                                capture_output=True, check=True).stdout.splitlines()
    for order in (lines, lines[::-1]):
        want = json.loads(subprocess.run([LUMAHIST, "merge", "-"], input=b"\n".join(order),
                                         capture_output=True, check=True).stdout)
        records = [json.loads(line) for line in order]
        assert lumahist.merge(records).to_dict() == want
        stats = [lumahist.stats(cv2.imread(r["path"], cv2.IMREAD_UNCHANGED),
                                percentiles=[float(p) for p in r["percentiles"]])
                 for r in records]
        assert lumahist.merge(stats).to_dict()["percentiles"] == want["percentiles"]


def test_merge_sums_earlier_merges_as_the_tool_does(tmp_path):
    """Dataset records alone (the merges of two machines' shards) were
    skipped: "no records to merge".  They are summed as the images they
    count, the record of every image merged at once; among image records (a
    `stats --dataset` file) they are still skipped, not counted twice."""
    folder = tmp_path / "set"
    folder.mkdir()
    for k in range(6):
        cv2.imwrite(str(folder / f"{k}.png"), photo(50 + 3 * k, 70 - 2 * k, 25 + k))
    out = subprocess.run([LUMAHIST, "stats", "--quiet", "--backend", "cpu", "--dataset",
                          "--percentiles", "1,50,99", str(folder)],
                         capture_output=True, check=True).stdout
    lines = [json.loads(line) for line in out.splitlines()]
    records, dataset = lines[:-1], lines[-1]
    halves = [lumahist.merge(records[:2]), lumahist.merge(records[2:])]
    assert lumahist.merge(halves).to_dict() == dataset
    assert lumahist.merge([h.to_dict() for h in halves]).to_dict() == dataset
    # `stats --dataset`'s own record, after the image records it sums, is
    # skipped; an earlier merge's among image records would lose the images
    # it counts (the first two's, then summed twice): refused, as the tool
    # refuses such a file.  It gave 6 images, 2 of them counted twice.
    assert lumahist.merge(lines).to_dict() == dataset
    assert lumahist.merge(records[:2] + [halves[0].to_dict()]).to_dict() == halves[0].to_dict()
    for joined in (records + [halves[0].to_dict()], [halves[0].to_dict()] + records[2:],
                   records[2:] + [halves[0].to_dict()]):
        with pytest.raises(lumahist.InvalidArgumentError, match="does not sum"):
            lumahist.merge(joined)
    empty = dict(dataset, images=0, count=0, histogram=[0] * 256)
    assert lumahist.merge(iter([empty] + [h.to_dict() for h in halves])).to_dict() == dataset
    with pytest.raises(lumahist.InvalidArgumentError, match="without its images"):
        lumahist.merge([{k: v for k, v in dataset.items() if k != "images"}])
    with pytest.raises(lumahist.InvalidArgumentError, match="do not add up"):
        lumahist.merge([halves[0].to_dict(), dict(halves[1].to_dict(), range="limited")])


def test_stats_files_are_the_tools_records(tmp_path):
    folder = tmp_path / "photos"
    (folder / "sub").mkdir(parents=True)
    for k, name in enumerate(["b.png", "a.jpg", "sub/c.png", "sub/d.jpeg"]):
        image = photo(50 + k, 70 + 3 * k, 30 + k, channels=3 if k % 2 else None)
        cv2.imwrite(str(folder / name), image)
    (folder / "notes.txt").write_text("not an image")
    (folder / "broken.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 20)
    # A CMYK JPEG: both records say it was converted.
    Image = pytest.importorskip("PIL.Image")
    Image.fromarray(photo(21, 35, 36, channels=4), "CMYK").save(folder / "sub" / "e.jpg")
    out = subprocess.run([LUMAHIST, "stats", "--quiet", "--backend", "cpu", "--decoder", "cpu",
                          str(folder)], capture_output=True).stdout
    want = [json.loads(line) for line in out.splitlines()]
    with pytest.warns(RuntimeWarning, match="broken.png"):
        got = [s.to_dict() for s in lumahist.stats_files(folder, jobs=3, backend="cpu")]
    assert [r["path"] for r in got] == [r["path"] for r in want]
    assert got == want
    assert [r.get("converted_from") for r in got].count("CMYK") == 1
    with pytest.raises(lumahist.Error):
        list(lumahist.stats_files([str(folder / "broken.png")], errors="raise"))


def test_temporal_smooths_equalized_video():
    frames = [photo(48, 64, 40 + k) for k in range(6)]
    temporal = lumahist.Temporal(window=4, cut_threshold=1.0)
    smoothed = [lumahist.equalize(f, temporal=temporal, backend="cpu") for f in frames]
    alone = [lumahist.equalize(f, backend="cpu") for f in frames]
    assert np.array_equal(smoothed[0], alone[0])  # a window of one frame
    assert any(not np.array_equal(s, a) for s, a in zip(smoothed[1:], alone[1:]))
    temporal.reset()
    assert np.array_equal(lumahist.equalize(frames[3], temporal=temporal, backend="cpu"),
                          alone[3])
    with pytest.raises(lumahist.InvalidArgumentError):
        lumahist.Temporal(window=0)


@pytest.mark.parametrize("window", [2.5, "8"])
def test_a_temporal_window_is_an_integer(window):
    """int() took a window of 2.5 as 2 frames (and "8" as 8) while .window
    said 2.5; a window is a whole number of frames, as the element's."""
    with pytest.raises(TypeError):
        lumahist.Temporal(window=window)
    temporal = lumahist.Temporal(np.int64(3), 1)
    assert (temporal.window, temporal.cut_threshold) == (3, 1.0)
    assert type(temporal.window) is int and type(temporal.cut_threshold) is float


def test_a_temporal_window_cannot_be_changed_after_it_is_made():
    """T.window = 1 was taken and read back as 1 while the frames went on
    being smoothed over the 8 the Temporal was made with (and cut_threshold
    took 7, out of its range): both are read-only, fixed when it is made."""
    temporal = lumahist.Temporal(window=8)
    with pytest.raises(AttributeError):
        temporal.window = 1
    with pytest.raises(AttributeError):
        temporal.cut_threshold = 7
    assert (temporal.window, temporal.cut_threshold) == (8, 0.4)


_HUGE = 2**70
_GRAY = np.zeros((16, 16), np.uint8)
_GRAY16 = np.zeros((16, 16), np.uint16)


@pytest.mark.parametrize("name, call", [
    ("bit_depth", lambda: lumahist.stats(_GRAY16, bit_depth=_HUGE)),
    ("bit_depth", lambda: lumahist.stats(_GRAY16, bit_depth=-_HUGE)),
    ("width", lambda: lumahist.stats(_GRAY, width=_HUGE)),
    ("percentiles", lambda: lumahist.stats(_GRAY, percentiles=(10**400,))),
    ("bit_depth", lambda: lumahist.equalize(_GRAY16, bit_depth=_HUGE)),
    ("width", lambda: lumahist.clahe(_GRAY, width=_HUGE)),
    ("clip", lambda: lumahist.clahe(_GRAY, clip=10**400)),
    ("bit_depth", lambda: lumahist.apply_lut(_GRAY16, np.zeros(1024, np.uint16),
                                             bit_depth=_HUGE)),
    ("orientation", lambda: lumahist.overlay(_GRAY, orientation=_HUGE)),
    ("bit_depth", lambda: lumahist.overlay(_GRAY16, bit_depth=_HUGE)),
    ("opacity", lambda: lumahist.overlay(_GRAY, opacity=10**400)),
    ("clip_warning", lambda: lumahist.overlay(_GRAY, clip_warning=10**400)),
    ("percentiles", lambda: lumahist.overlay(_GRAY, percentiles=(10**400,))),
    ("percentiles", lambda: lumahist.merge([lumahist.stats(_GRAY)], percentiles=(10**400,))),
    ("window", lambda: lumahist.Temporal(_HUGE)),
    ("cut_threshold", lambda: lumahist.Temporal(8, 10**400)),
    ("jobs", lambda: lumahist.stats_files([SAMPLES], jobs=2**64)),
    ("every", lambda: lumahist.stats_files([SAMPLES], every=2**64)),
    ("max_pixels", lambda: lumahist.stats_files([SAMPLES], max_pixels=2**64)),
    ("max_pixels", lambda: lumahist.stats_files([SAMPLES], max_pixels=2**63)),
    ("fps", lambda: lumahist.stats_files([SAMPLES], fps=10**400)),
    ("start", lambda: lumahist.stats_files([SAMPLES], start=10**400)),
    ("duration", lambda: lumahist.stats_files([SAMPLES], duration=10**400)),
    ("cut_threshold", lambda: lumahist.stats_files([SAMPLES], cut_threshold=10**400)),
    ("video_timeout", lambda: lumahist.stats_files([SAMPLES], video_timeout=10**400)),
    ("fifo_wait", lambda: lumahist.stats_files([SAMPLES], fifo_wait=10**400)),
    ("percentiles", lambda: lumahist.stats_files([SAMPLES], percentiles=(10**400,))),
])
def test_an_integer_past_its_argument_is_out_of_range_not_an_overflow(name, call):
    """bit_depth=2**70, jobs=2**64, orientation=2**70, a percentile of
    10**400, ... raised OverflowError from the C conversion (or float()),
    where any other value out of range raises InvalidArgumentError; and
    max_pixels=2**64 wrapped to 0, the default limit."""
    with pytest.raises(lumahist.InvalidArgumentError,
                       match=f"^{name}: (-?[0-9]+|a number of more than 40 digits) is out of "
                       "range$"):
        call()


def test_an_integer_of_more_digits_than_python_writes_is_out_of_range_too():
    """Such an integer has no text (repr raises ValueError past 4300 digits):
    the message says so rather than failing to be made."""
    with pytest.raises(lumahist.InvalidArgumentError,
                       match="^bit_depth: a number of more than 40 digits is out of range$"):
        lumahist.stats(_GRAY16, bit_depth=10**5000)
    with pytest.raises(lumahist.InvalidArgumentError,
                       match="^cut_threshold: a number of more than 40 digits is out of range$"):
        lumahist.Temporal(8, 10**5000)


@pytest.mark.parametrize("channels, fmt", [(None, None), (None, "GRAY16_BE"), (3, None)])
def test_samples_above_bit_depth_count_as_its_top_code_value(channels, fmt):
    """README: a luma above 2^bit_depth - 1 (a uint16 array of 4000s with
    bit_depth=10) is taken as 2^bit_depth - 1, the library's rule (it counts
    in the top bin): it shows as clipped_high and max, and the rewrites give
    what they give for that code value."""
    image = photo(40, 60, 31, channels=channels, dtype=np.uint16) >> 5  # 0 .. 2047
    if fmt == "GRAY16_BE":
        image = image.astype(">u2")
    s = lumahist.stats(image, bit_depth=10, format=fmt, backend="cpu")
    luma_in_range = lumahist.stats((image >> 1).astype(image.dtype), bit_depth=10, format=fmt,
                                   backend="cpu")
    assert s.max == 1023 and s.histogram.size == 1024 and int(s.histogram.sum()) == 40 * 60
    assert s.clipped_high == int(s.histogram[1023]) / (40 * 60) > 0.2
    assert luma_in_range.clipped_high < s.clipped_high
    if channels is None:
        clamped = np.minimum(image, 1023).astype(image.dtype)
        assert s.to_dict() == lumahist.stats(clamped, bit_depth=10, format=fmt,
                                             backend="cpu").to_dict()
        for rewrite in (lumahist.equalize, lumahist.clahe):
            assert np.array_equal(rewrite(image, bit_depth=10, format=fmt, backend="cpu"),
                                  rewrite(clamped, bit_depth=10, format=fmt, backend="cpu"))
        lut = np.arange(1024, dtype=np.uint16)[::-1].copy()
        assert np.array_equal(lumahist.apply_lut(image, lut, bit_depth=10, format=fmt),
                              lumahist.apply_lut(clamped, lut, bit_depth=10, format=fmt))
