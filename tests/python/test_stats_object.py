"""The result object of lumahist.stats (python/lumahist/stats-object.c): its
fields read from the library's result behave as the plain attributes they
were (assignable, pickled, copied, freed at once), the percentile lists
reach the library as their text did, and a CUDA array's description is read
once a call."""
import copy
import os
import pickle
import weakref

import numpy as np
import pytest

import lumahist


def photo(height, width, seed, channels=None, dtype=np.uint8):
    rng = np.random.default_rng(seed)
    top = np.iinfo(dtype).max
    y, x = np.mgrid[0:height, 0:width]
    base = (x / max(width - 1, 1) * 0.6 + y / max(height - 1, 1) * 0.4) * top
    shape = (height, width) if channels is None else (height, width, channels)
    if channels is not None:
        base = base[..., None]
    return np.clip(base + rng.normal(0, top / 20, shape), 0, top).astype(dtype)


FIELDS = ("width", "height", "bit_depth", "matrix", "range", "backend", "count", "mean",
          "stddev", "min", "max", "median", "clipped_low", "clipped_high", "below_legal",
          "above_legal", "mean_norm", "stddev_norm", "min_norm", "max_norm", "median_norm",
          "percentiles", "percentiles_norm", "path", "decoder", "converted_from")


def same(a, b):
    assert type(a) is type(b)
    for name in FIELDS:
        assert getattr(a, name) == getattr(b, name), name
    assert np.array_equal(a.histogram, b.histogram) and a.histogram.dtype == np.uint64
    assert a.to_dict() == b.to_dict()


@pytest.mark.parametrize("image", [photo(37, 53, 1), photo(20, 31, 2, 3),
                                   photo(9, 14, 3, dtype=np.uint16)],
                         ids=["gray8", "rgb", "gray16"])
def test_results_pickle_and_copy(image):
    s = lumahist.stats(image, range="limited", percentiles=(0.5, 50, 99.9), roi=(1, 2, 7, 5))
    for other in (pickle.loads(pickle.dumps(s)), copy.copy(s), copy.deepcopy(s)):
        same(s, other)
    # Fields made before pickling, and assigned ones, come back as they were.
    s.histogram, s.percentiles
    s.note = "kept"
    s.mean = -1.0
    back = pickle.loads(pickle.dumps(s, protocol=pickle.HIGHEST_PROTOCOL))
    same(s, back)
    assert back.note == "kept" and back.mean == -1.0 and back.to_dict()["mean"] == -1.0


def test_dataset_and_file_results_pickle(tmp_path):
    images = [photo(16, 24, seed) for seed in range(3)]
    merged = lumahist.merge([lumahist.stats(i) for i in images])
    back = pickle.loads(pickle.dumps(merged))
    same(merged, back)
    assert back.images == 3 and back.width is None and back.backend is None
    cv2 = pytest.importorskip("cv2")
    path = str(tmp_path / "a.png")
    cv2.imwrite(path, images[0])
    (record,) = lumahist.stats_files([path], backend="cpu")
    assert record.path == path and record.decoder is not None
    same(record, pickle.loads(pickle.dumps(record)))


def test_results_compare_by_value(tmp_path):
    """lumahist.stats(a) == lumahist.stats(a) was False: results compared
    by identity.  Two results of one class with the same fields and
    histogram are equal, pickled and copied ones too; a field that differs
    (assigned, or another histogram) makes them unequal; they are mutable,
    so unhashable."""
    image = photo(37, 53, 1)
    s, t = (lumahist.stats(image, backend="cpu", percentiles=(1, 50, 99)) for _ in range(2))
    assert s == t and not s != t and s is not t
    for other in (pickle.loads(pickle.dumps(s)), copy.copy(s), copy.deepcopy(s)):
        assert other == s and s == other
    assert s != lumahist.stats(image, backend="cpu", percentiles=(1, 50))
    assert s != lumahist.stats(image, backend="cpu", percentiles=(1, 50, 99), range="limited")
    changed = image.copy()
    changed[0, 0] ^= 1  # the same size, another histogram
    assert s != lumahist.stats(changed, backend="cpu", percentiles=(1, 50, 99))
    t.mean = -1.0
    assert s != t and s != s.to_dict() and s != None  # noqa: E711
    with pytest.raises(TypeError, match="unhashable"):
        hash(s)

    merged = lumahist.merge([s, lumahist.stats(photo(16, 24, 2), backend="cpu")])
    again = lumahist.merge([s, lumahist.stats(photo(16, 24, 2), backend="cpu")])
    assert merged == again == pickle.loads(pickle.dumps(merged)) and merged != s
    again.images = 5
    assert merged != again
    cv2 = pytest.importorskip("cv2")
    path = str(tmp_path / "a.png")
    cv2.imwrite(path, image)
    (record,) = lumahist.stats_files([path], backend="cpu", percentiles=(1, 50, 99))
    (record_again,) = lumahist.stats_files([path], backend="cpu", percentiles=(1, 50, 99))
    assert record == record_again == pickle.loads(pickle.dumps(record))
    # The same numbers from a file and from an array: not the same record.
    assert record != s and record.to_dict(histogram=False) != s.to_dict(histogram=False)


def test_fields_are_attributes():
    s = lumahist.stats(photo(12, 10, 4))
    assert s.histogram is s.histogram and s.percentiles is s.percentiles
    assert not s.histogram.flags.writeable
    assert s.histogram.sum() == s.count == 120 and s.width == 10 and s.height == 12
    s.percentiles[50] = 0  # the same dict at every read, as an attribute
    assert s.percentiles[50] == 0 and s.to_dict()["percentiles"]["50"] == 0
    s.width = None
    s.backend = "elsewhere"
    assert s.width is None and s.to_dict()["backend"] == "elsewhere"
    assert {"mean", "histogram", "to_dict"} <= set(dir(s))
    with pytest.raises(TypeError):
        lumahist.Stats()


def test_results_are_freed_at_once():
    """No reference cycle holds a result: it goes with its last reference,
    histogram read or not, without the garbage collector."""
    s = lumahist.stats(photo(8, 8, 5))
    s.histogram, s.percentiles_norm
    gone = weakref.ref(s)
    del s
    assert gone() is None


def test_no_histogram_is_leaked():
    """The library's histogram (65536 counts, 512 KiB, for 16-bit luma) is
    freed with its result: 300 results would hold 150 MiB."""
    image = photo(4, 4, 6, dtype=np.uint16)

    def resident():
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

    if not os.path.exists("/proc/self/statm"):
        pytest.skip("no /proc/self/statm to read the resident size from")
    for _ in range(20):
        lumahist.stats(image).histogram
    before = resident()
    for _ in range(300):
        lumahist.stats(image).histogram
    assert resident() - before < 32 << 20


@pytest.mark.parametrize("given,floats", [
    (("5", "50"), (5.0, 50.0)),
    (np.array([1, 99.5]), (1.0, 99.5)),
    ((p for p in (2, 98)), (2.0, 98.0)),
    ([-0.0, 100], (-0.0, 100.0)),
    ((1e-5, 3e-300), (1e-5, 3e-300)),
    ((1e-320, 5e-324), (1e-320, 5e-324)),
    ([i * 1.5 for i in range(64)], tuple(i * 1.5 for i in range(64))),
    ((), ()),
    (None, ()),
    # A float32's as it prints: its value widened (99.9000015258789) keyed
    # it, and percentiles[99.9] was a KeyError.
    (np.array([1, 99.9], np.float32), (1.0, 99.9)),
    ([np.float16(50.5), np.float32(0.1), np.float64(99.9)], (50.5, 0.1, 99.9)),
])
def test_percentile_lists(given, floats):
    image = photo(11, 13, 7)
    got = lumahist.stats(image, percentiles=given)
    assert tuple(got.percentiles) == floats
    assert all(np.copysign(1, a) == np.copysign(1, b) for a, b in zip(got.percentiles, floats))
    # The nearest-rank value of each, from the histogram.
    cdf = np.cumsum(got.histogram)
    for p, value in got.percentiles.items():
        rank = max(1, int(np.ceil(p / 100 * got.count)))
        assert value == int(np.searchsorted(cdf, rank)), p


@pytest.mark.parametrize("given,message", [
    ((101,), 'percentile list "101.0"'),
    ((5, float("nan")), 'percentile list "5.0,nan"'),
    ((float("inf"),), 'percentile list "inf"'),
    ((100.00000000000001,), 'percentile list "100.00000000000001"'),
    ((-1,), 'percentile list "-1.0"'),
    (range(65), "more than 64 percentiles"),
])
def test_refused_percentile_lists_carry_the_librarys_message(given, message):
    with pytest.raises(lumahist.InvalidArgumentError, match=message) as caught:
        lumahist.stats(photo(6, 6, 8), percentiles=given)
    assert caught.value.status == -1


@pytest.mark.parametrize("text", ["59", b"59", bytearray(b"5")])
def test_percentiles_given_as_text_raise(text, tmp_path):
    """percentiles="59" iterated as the characters: percentiles 5 and 9,
    without a word (and "5,95" a ValueError from float(","))."""
    image = photo(6, 6, 8)
    path = str(tmp_path / "a.png")
    import cv2
    cv2.imwrite(path, image)
    for call in (lambda: lumahist.stats(image, percentiles=text),
                 lambda: lumahist.overlay(image, percentiles=text),
                 lambda: lumahist.merge([lumahist.stats(image)], percentiles=text),
                 lambda: list(lumahist.stats_files(path, percentiles=text, errors="raise"))):
        with pytest.raises(lumahist.InvalidArgumentError, match="not text"):
            call()


def test_numbers_that_are_not_raise_naming_the_argument():
    """clip="abc" was float()'s bare ValueError, naming no argument; text
    that reads as a number is one, as for percentiles=("5", "50")."""
    image = photo(6, 6, 8)
    for call, name in ((lambda: lumahist.clahe(image, clip="abc"), "clip"),
                       (lambda: lumahist.clahe(image, clip=None), "clip"),
                       (lambda: lumahist.overlay(image, opacity="half"), "opacity"),
                       (lambda: lumahist.Temporal(cut_threshold=[0.4]), "cut_threshold")):
        with pytest.raises(lumahist.InvalidArgumentError, match=f"^{name}: not a number: "):
            call()
    assert np.array_equal(lumahist.clahe(image, clip="4"), lumahist.clahe(image, clip=4))


def test_percentiles_that_are_not_numbers():
    with pytest.raises(TypeError):
        lumahist.stats(photo(6, 6, 8), percentiles=5)
    with pytest.raises(ValueError):
        lumahist.stats(photo(6, 6, 8), percentiles=("a",))


class CountedCudaArray:
    """A host array described by __cuda_array_interface__, a property that
    counts its reads (PyTorch's is Python code run at each one)."""

    def __init__(self, host, fail=False):
        self.host = host
        self.reads = 0
        self.fail = fail

    @property
    def __cuda_array_interface__(self):
        self.reads += 1
        if self.fail:
            raise RuntimeError("no interface today")
        return {"shape": self.host.shape, "typestr": self.host.dtype.str, "version": 3,
                "data": (self.host.ctypes.data, False), "strides": None}


def test_a_cuda_arrays_description_is_read_once():
    array = CountedCudaArray(photo(8, 8, 9))
    with pytest.raises(lumahist.UnsupportedError, match="device"):
        lumahist.stats(array, backend="cpu")
    assert array.reads == 1
    # A property that raises means no interface, as hasattr() says.
    failing = CountedCudaArray(photo(8, 8, 9), fail=True)
    with pytest.raises(lumahist.InvalidArgumentError, match="not an array"):
        lumahist.stats(failing, backend="cpu")
    assert failing.reads == 1


def test_the_c_call_alone_is_timed():
    image = photo(16, 16, 10)
    seconds = lumahist._lumahist.analyze_times(image, 5, "cpu")
    assert len(seconds) == 5 and all(0 < t < 1 for t in seconds)
    with pytest.raises(lumahist.InvalidArgumentError):
        lumahist._lumahist.analyze_times(np.zeros((4, 4), np.float32), 3, "cpu")
    with pytest.raises(lumahist.InvalidArgumentError):
        lumahist._lumahist.analyze_times(image, 0, "cpu")
