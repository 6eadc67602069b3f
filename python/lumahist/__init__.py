"""lumahist: luma histograms, statistics, exact percentiles, equalization and
CLAHE of images held as arrays, on NVIDIA GPUs or the CPU, with the numbers
of the lumahist library and command-line tool.

    import numpy as np, lumahist
    s = lumahist.stats(np.asarray(image))        # H x W gray, H x W x 3 RGB, uint8/uint16
    print(s.median, s.percentiles[99], s.histogram.sum())
    out = lumahist.equalize(image)               # a new array; out= to write in place

Arrays are read in place through the buffer protocol (NumPy, anything
bytes-like with a shape), Pillow's images as np.asarray(image) gives them
(modes L, RGB, RGBA, I;16; others raise), and CUDA arrays (CuPy, PyTorch)
through __cuda_array_interface__, on the GPU where they are, on the stream
their producer names, never copied to the host.  Each row's samples must be
packed; rows may be padded (views of a larger array).  OpenCV's arrays are
BGR: pass format="BGR".  The work runs with the GIL released.

Formats.  Without format=, an H x W array is gray (uint8 GRAY8, uint16
GRAY16, big-endian '>u2' GRAY16_BE), H x W x 3 RGB and H x W x 4 RGBA (uint8,
or uint16 RGB16 and RGBA16).  format= names any of FORMATS (the library's
names; GStreamer's for the same layout, such as P010_10LE, RGBA64_LE or r210,
and any case, are taken too), each held as:

  GRAY8, GRAY16, GRAY16_BE      H x W, uint8 / uint16 / '>u2'
  RGB, BGR; RGB16               H x W x 3, uint8; uint16
  RGBA, BGRA, RGBX, BGRX;       H x W x 4, uint8;
  RGBA16, BGRA16                uint16 (GStreamer's RGBA64_LE, BGRA64_LE)
  RGB10A2_LE, BGR10A2_LE, R210  H x W 32-bit words: '<u4' (r210's words are
                                big-endian: '>u4')
  I420 YV12 NV12 NV21 Y42B      the whole buffer, as 2-D rows of the Y plane's
  Y444 NV16 NV24 Y41B (uint8),  width and stride: Y, then chroma, as the
  P010 P012 P016 I420_10LE      library's lh_frame_init lays them out at that
  I420_12LE I422_10LE           stride (not always GStreamer's: lumahist.h; uint16,
  I422_12LE Y444_10LE           little-endian, for the deeper formats).  The
  Y444_12LE Y444_16LE           rows are those the buffer (lh_frame_buffer_size)
                                fills: H + ceil(H/2) for 4:2:0 (OpenCV's
                                H * 3/2 x W for I420 and NV12), 2H for 4:2:2,
                                3H for 4:4:4, H + ceil(H/2) for 4:1:1, for
                                strides that are multiples of 4
  YUY2, YVYU, UYVY, VYUY        H x W x 2 uint8 (OpenCV's YUY2), or H x 2W
  v210                          H x (its row's bytes) uint8: 16 bytes for each
                                group of 6 pixels

width= gives the frame's width in pixels where the array's rows hold more
than the pixels (YUV formats only): a buffer's whole rows with their padding
(a GStreamer, V4L2 or capture-card buffer of stride S as an R x S array), a
v210 row whose last group is partly padding (1280 pixels: 214 groups, 3424
bytes), a packed 4:2:2 row of an odd width (its last pair whole).  Without it
a row holds exactly the pixels.  A slice of a wider buffer works for the
formats whose chroma rows are no longer than the Y rows and have their
stride (NV12, NV21, NV16, P010, P012, P016 of an even width; Y444, Y444_10LE,
Y444_12LE, Y444_16LE); the chroma rows of I420, YV12, Y42B, Y41B, NV24 and
their deeper forms run into the gaps between the slice's rows: pass the whole
rows with width=.
The luma has the format's bit depth (stats' bit_depth: 10, 12 or 16);
bit_depth= sets it only for GRAY16, GRAY16_BE, RGB16, RGBA16 and BGRA16.
Equalization, CLAHE and LUTs rewrite only the Y samples of YUV formats
(chroma bytes stay as they came; the overlay also colours the chroma under
its panel), and keep alpha and the spare bits of packed words.  A shape,
element type, size or stride that does not fit the format raises
InvalidArgumentError, and no array is read or written outside its elements.
"""
import copy as _copy
import operator as _operator
import os as _os
from collections.abc import Mapping as _Mapping

import numpy as _np

from . import _lumahist

__all__ = [
    "Error", "InvalidArgumentError", "UnsupportedError", "OutOfMemoryError", "NoDeviceError",
    "CudaError", "FileIOError", "CorruptFileError", "TooLargeError", "Stats", "DatasetStats",
    "VideoFrame", "VideoSummary", "stats", "equalize", "clahe", "apply_lut",
    "lut_from_histogram", "overlay", "merge", "device_time", "Temporal", "stats_files",
    "StatsFilesIterator",
    "FORMATS", "__version__",
]

__version__ = _lumahist.version()

#: The pixel formats format= names, as the library names them.
FORMATS = _lumahist.format_names()


class Error(Exception):
    """A failure of the lumahist library: .status is its LhStatus (negative).

    The subclasses below name the library's statuses.  A file that
    stats_files cannot read raises FileIOError, also an OSError (status -6,
    LH_ERROR_IO); a PNG, JPEG or video that is not a valid one,
    CorruptFileError, or has more pixels than max_pixels, TooLargeError, both
    also ValueErrors (-7 LH_ERROR_CORRUPT, -8 LH_ERROR_TOO_LARGE); one whose
    bytes are no PNG, JPEG or video (a GIF, a text file), UnsupportedError
    (-2 LH_ERROR_UNSUPPORTED).  Made without a status, an error carries its
    class's (Error itself -1)."""

    _status = -1

    def __init__(self, message, status=None):
        super().__init__(message)
        self.status = type(self)._status if status is None else status


class InvalidArgumentError(Error, ValueError):
    """A bad array (dtype, shape, strides, empty), option or size (LH_ERROR_INVALID_ARGUMENT)."""


class UnsupportedError(Error):
    """A format or mode this build cannot do (LH_ERROR_UNSUPPORTED): a file
    stats_files reads that is no PNG, JPEG or video ("not a PNG or JPEG file")."""

    _status = -2


class OutOfMemoryError(Error, MemoryError):
    """Host or device memory ran out (LH_ERROR_NO_MEMORY)."""

    _status = -3


class NoDeviceError(Error):
    """backend="cuda" where no CUDA device is usable (LH_ERROR_NO_DEVICE)."""

    _status = -4


class CudaError(Error):
    """A CUDA call failed (LH_ERROR_CUDA)."""

    _status = -5


class FileIOError(Error, OSError):
    """A file could not be read (LH_ERROR_IO): stats_files on a path that does
    not exist, or a file it cannot open or read.  When a system call said
    why, .errno, .strerror and .filename are set as an OSError's (errno.ENOENT
    for a missing file, errno.EACCES for a forbidden one); otherwise (a FIFO
    no writer opened, a read cut short) they are None.  str() is the
    library's message, as for every Error."""

    _status = -6

    def __init__(self, message, status=None, errno=None, filename=None):
        super().__init__(message, status)
        if errno:
            self.errno = errno
            self.strerror = _os.strerror(errno)
        if filename is not None:
            self.filename = filename

    def __str__(self):
        return str(self.args[0]) if self.args else ""

    def __reduce__(self):
        return (type(self), (str(self), self.status, self.errno, self.filename), self.__dict__)


class CorruptFileError(Error, ValueError):
    """A file that is not a valid image or video: cut, damaged, or not what it
    seems (LH_ERROR_CORRUPT)."""

    _status = -7


class TooLargeError(Error, ValueError):
    """More pixels than allowed (LH_ERROR_TOO_LARGE): an image above
    stats_files' max_pixels (by its header, before it is decoded), or a frame
    above the library's limits."""

    _status = -8


# Their names before they were public: a pickled error names its class so.
_IOError, _CorruptError, _TooLargeError = FileIOError, CorruptFileError, TooLargeError

_lumahist.set_errors((Error, InvalidArgumentError, UnsupportedError, OutOfMemoryError,
                      NoDeviceError, CudaError, FileIOError, CorruptFileError, TooLargeError))


def _out_of_range(name, value):
    """The extension's InvalidArgumentError for an integer past what its
    argument can hold (arguments.c), in the same words."""
    try:
        text = repr(value)
    except ValueError:  # an int of more digits than Python writes
        text = ""
    if not text or len(text) > 40:
        text = "a number of more than 40 digits"
    return InvalidArgumentError(f"{name}: {text} is out of range", -1)


def _float(value, name):
    """float(value) (text too: clip="4", as from a command line, is 4, as
    percentiles=["5", "95"] are), or InvalidArgumentError naming the
    argument: for what float() cannot read (clip="abc" was its bare
    ValueError, naming no argument), and for an integer past any float (a
    value out of the argument's range, not float()'s OverflowError)."""
    try:
        return float(value)
    except OverflowError:
        raise _out_of_range(name, value) from None
    except (TypeError, ValueError):
        raise InvalidArgumentError(f"{name}: not a number: {value!r}", -1) from None


def _percentile_key(p):
    """The key of percentile p in records: the shortest %.Ng that reads back as p,
    as the command-line tool writes it (-0 as "0")."""
    p = p + 0.0
    for digits in range(1, 18):
        text = "%.*g" % (digits, p)
        if float(text) == p and ("e" not in text or (p != 0 and p < 1e-4)):
            return text
    return text


_FIELDS = ("bit_depth", "matrix", "range", "backend", "count", "mean", "stddev", "min", "max",
           "median", "clipped_low", "clipped_high", "below_legal", "above_legal", "mean_norm",
           "stddev_norm", "min_norm", "max_norm", "median_norm")


_NO_DEFAULT = object()


class _AssignedField:
    """A field of the results that the package sets, not the library: its
    value lives in the instance's __dict__ (assigned, pickled and copied as
    a plain attribute's), else the class's default.  A descriptor rather
    than a plain class attribute so that help() shows its doc (pydoc shows
    the docs of data descriptors alone), as it does the library's fields."""

    def __init__(self, doc, default=_NO_DEFAULT):
        self.__doc__ = doc
        self._default = default

    def __set_name__(self, owner, name):
        self._name = name

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        try:
            return instance.__dict__[self._name]
        except KeyError:
            if self._default is _NO_DEFAULT:
                raise AttributeError(f"'{type(instance).__name__}' object has no attribute "
                                     f"'{self._name}'") from None
            return self._default

    def __set__(self, instance, value):
        instance.__dict__[self._name] = value

    def __delete__(self, instance):
        try:
            del instance.__dict__[self._name]
        except KeyError:
            raise AttributeError(f"'{type(instance).__name__}' object has no attribute "
                                 f"'{self._name}'") from None


_SUMMARY_DOC = "Whether this is a video's summary record: True on VideoSummary, else False."


class Stats(_lumahist.StatsBase):
    """The statistics of one image, as the tool's records have them.

    Attributes: width, height, bit_depth, matrix, range, backend, count,
    mean, stddev, min, max, median, clipped_low, clipped_high, below_legal,
    above_legal, the *_norm values, percentiles ({p: code value}),
    percentiles_norm ({p: normalized}) and histogram (a NumPy array of
    2^bit_depth uint64 counts); path, decoder and converted_from for a file
    (stats_files), None for an array.  Each is read from the library's
    result when first asked for (the histogram and the percentiles once,
    then kept), so that a call makes no Python objects it is not asked for.
    summary is False (True on a video's summary record, VideoSummary).
    Results compare by value: == is True for two of one class with the same
    fields and histogram (a result and its pickled copy); they are mutable,
    so not hashable.
    """

    summary = _AssignedField(_SUMMARY_DOC, False)

    def to_dict(self, histogram=True):
        """The fields of the tool's jsonl record, in its order: all of them for a
        file (stats_files); without path and decoder for an array."""
        path = self.path
        record = {"path": path} if path is not None else {}
        record["width"], record["height"] = self.width, self.height
        decoder = self.decoder
        for name in _FIELDS:
            record[name] = getattr(self, name)
            if name == "backend" and decoder is not None:
                record["decoder"] = decoder
                if self.converted_from is not None:
                    record["converted_from"] = self.converted_from
        record["percentiles"] = {_percentile_key(p): v for p, v in self.percentiles.items()}
        record["percentiles_norm"] = {_percentile_key(p): v
                                      for p, v in self.percentiles_norm.items()}
        if histogram:
            counts = self.histogram
            record["histogram"] = (counts.tolist() if isinstance(counts, _np.ndarray)
                                   else [int(c) for c in counts])
        return record

    def __eq__(self, other):
        """Value equality: results of one class with the same record (to_dict():
        the same fields, assigned ones included) and the same histogram, as a
        result and its pickled copy are; not to other classes' objects."""
        if type(other) is not type(self):
            return NotImplemented
        return other is self or (self.to_dict(histogram=False) == other.to_dict(histogram=False)
                                 and _np.array_equal(self.histogram, other.histogram))

    # Its fields can be assigned: a hash would change with them.
    __hash__ = None

    def __repr__(self):
        return (f"<lumahist.Stats {self.width}x{self.height} {self.bit_depth}-bit "
                f"mean {self.mean:.3f} median {self.median}>")


_NO_ROI = (0, 0, 0, 0)
_stats = _lumahist.stats


# Pillow's modes whose pixels are one of the layouts read here, as NumPy
# holds them: 8-bit gray, RGB and RGBA, 16-bit gray (little- or big-endian).
_PILLOW_MODES = ("L", "RGB", "RGBA", "I;16", "I;16L", "I;16B")


def _aligned(array):
    """array, or an aligned copy of a NumPy array whose 16-bit samples lie at
    odd addresses (numpy.frombuffer or numpy.memmap at an odd offset, as a
    YUV4MPEG2 file's frames lie): the library reads samples aligned only."""
    if isinstance(array, _np.ndarray) and not array.flags.aligned:
        return _np.require(array, requirements="A")
    return array


def _written_back(work, result):
    """result, with work (its aligned copy, _aligned) written into it."""
    if work is not result:
        result[...] = work
    return result


def _readable(image):
    """image as the extension reads it: a Pillow image, which describes its
    pixels by __array_interface__ but has no buffer, as a NumPy array of them
    (its other modes refused: a palette's indices, CMYK's inks or gray and
    alpha would be read as some other layout); a NumPy array of samples at
    odd addresses as an aligned copy; anything else as it is."""
    if isinstance(image, _np.ndarray):
        return _aligned(image)
    if not hasattr(image, "__array_interface__"):
        return image
    try:
        memoryview(image)
        return image
    except TypeError:
        pass
    mode = getattr(image, "mode", None)
    if isinstance(mode, str) and mode not in _PILLOW_MODES:
        raise InvalidArgumentError(
            f"a Pillow image of mode {mode!r}: convert it to 'L', 'RGB', 'RGBA' or 'I;16' "
            "first (image.convert('RGB'))", -1)
    return _np.asarray(image)


def stats(image, *, matrix="bt601", range="full", percentiles=(1, 5, 50, 95, 99), roi=None,
          backend="auto", bit_depth=None, format=None, width=None):
    """Histogram, statistics and exact (nearest-rank) percentiles of an image's luma.

    image: H x W (gray), H x W x 3 (RGB; format="BGR" for OpenCV) or H x W x 4,
    uint8 or uint16 (bit_depth: significant bits of 16-bit gray or R'G'B', 8 ..
    16; a luma above 2^bit_depth - 1 counts as 2^bit_depth - 1, the library's
    rule: in the top bin, so in clipped_high and max);
    format= any of FORMATS, held as the module's docstring says: e.g. "NV12"
    or "I420" for an (H * 3 / 2) x W uint8 array of planes, "YUY2" for
    H x W x 2 uint8, "P010" for (H * 3 / 2) x W uint16.  width: the frame's
    width where the rows of a YUV array hold more (padding, v210's groups).
    roi: (x, y, w, h).  backend: "auto" (CUDA when usable; a NumPy array,
    in pageable memory, then goes to the CPU or the GPU, whichever has cost
    less so far), "cuda" or "cpu"; the result's backend says where it went.
    matrix: the R'G'B' to luma weights, "bt601", "bt709" or "bt2020" (YUV's
    luma is its Y); range: "full" or "limited" (16..235 at 8 bits, scaled
    to the depth), how code values are read: the *_norm values and
    below_legal and above_legal follow it.  percentiles: the p (0 .. 100)
    of the percentiles and percentiles_norm dicts (a NumPy float32 or
    float16 as it prints: np.float32(99.9) is the key 99.9).
    """
    # Positional, in the extension's order: no keywords to match there.
    return _stats(_readable(image), matrix, range, percentiles, _NO_ROI if roi is None else _roi(roi),
                  backend, bit_depth or 0, format, width or 0)


def _roi(roi):
    """roi as the library takes it, or InvalidArgumentError: the library
    reads a zero width or height as no ROI, which roi=None alone means."""
    try:
        x, y, w, h = (_operator.index(v) for v in roi)
    except (TypeError, ValueError):
        raise InvalidArgumentError(f"roi {roi!r}: (x, y, w, h), four integers", -1) from None
    if min(x, y) < 0 or min(w, h) < 1 or max(x + w, y + h) > 2**31 - 1:
        raise InvalidArgumentError(
            f"roi {roi!r}: x, y >= 0 and w, h >= 1, within 2^31 - 1 pixels", -1)
    return (x, y, w, h)


def _rect(rect):
    """overlay's panel as the library takes it, or InvalidArgumentError: the
    library reads a zero width or height as its default panel, which
    rect=None alone means (the tool refuses such a --rect)."""
    try:
        x, y, w, h = (_operator.index(v) for v in rect)
    except (TypeError, ValueError):
        raise InvalidArgumentError(f"rect {rect!r}: (x, y, w, h), four integers", -1) from None
    if not (3 <= min(w, h) and max(w, h) <= 65536 and -2**31 <= min(x, y) < 2**31
            and max(x, y) < 2**31):
        raise InvalidArgumentError(
            f"rect {rect!r}: w, h in 3 .. 65536 and x, y within a C int", -1)
    return (x, y, w, h)


def _temporal_capsule(temporal):
    if temporal is None:
        return None
    if not isinstance(temporal, Temporal):
        raise InvalidArgumentError(
            f"temporal: a lumahist.Temporal expected, not {type(temporal).__name__}", -1)
    return temporal._capsule


def _output_for(image, out):
    if out is not None:
        return out
    if hasattr(image, "__cuda_array_interface__"):
        # A CUDA array's result stays on its device: PyTorch's clone() keeps
        # it there; CuPy's copy() goes to the current device, unless made with
        # the array's current (cupy.cuda.Device is a context manager).
        if hasattr(image, "clone"):
            return image.clone()
        device = getattr(image, "device", None)
        if hasattr(device, "__enter__"):
            with device:
                return image.copy()
        return image.copy()
    return _np.array(image, copy=True, order="C")


def device_time():
    """The GPU time of the calling thread's CUDA context on the current device so far
    (lh_context_device_time):
    {"transfer_s", "compute_s", "calls", "transfer_bytes"}, or None without one.
    transfer_bytes stays 0 for arrays already on the device: nothing was copied."""
    return _lumahist.device_time()


def equalize(image, *, out=None, matrix="bt601", range="full", backend="auto", bit_depth=None,
             format=None, temporal=None, width=None, chroma="keep"):
    """Global histogram equalization of the luma (cv2.equalizeHist's LUT, bit-exact
    on 8-bit gray); colour keeps its hue, YUV its chroma bytes (chroma="scale":
    8-bit planar and semi-planar YUV get the colour rule in Y'CbCr, Cb and Cr
    scaled about 128 with their luma, lumahist.h's LH_CHROMA_SCALE).  Returns
    out, a new array unless given (out=image equalizes in place); image,
    format, width, bit_depth, matrix and backend as for stats; range:
    "limited" keeps the result in 16..235 (scaled to the depth).  temporal: a
    Temporal, for the frames of one video in order."""
    image = _readable(image)
    result = _output_for(image, out)
    work = _aligned(result)
    _lumahist.rewrite(image, work, mode="global", matrix=matrix, range=range, backend=backend,
                      bit_depth=bit_depth or 0, format=format,
                      temporal=_temporal_capsule(temporal),
                      width=width or 0, chroma=chroma)
    return _written_back(work, result)


def clahe(image, *, tiles=(8, 8), clip=40.0, out=None, matrix="bt601", range="full",
          backend="auto", bit_depth=None, format=None, temporal=None, width=None,
          chroma="keep", orientation=1):
    """Contrast-limited adaptive equalization as cv2.createCLAHE(clip, tiles) (within
    1 of OpenCV at 8 bits).  tiles: (x, y); clip: 0 or more (0: no clipping).  Only
    luma changes, as for equalize (chroma as there); image, out, format, width,
    bit_depth, matrix, range, backend and temporal as there.  orientation: how the
    image is shown, as an Exif orientation (1 as stored, 6 turned a quarter
    clockwise, ...; the tool takes a file's own): the grid is the image's as
    shown, tiles (x, y) across and down it, as createCLAHE on the image turned
    upright, turned back."""
    tiles_x, tiles_y = _tiles(tiles)
    clip_limit = _float(clip, "clip")
    if clip_limit < 0:
        # The library reads it as 0; the tool's --clip and the element's
        # clip-limit refuse it.
        raise InvalidArgumentError(
            f"CLAHE clip limit {clip_limit!r} is negative: 0 or more (0: no clipping), as the "
            "tool's --clip", -1)
    image = _readable(image)
    result = _output_for(image, out)
    work = _aligned(result)
    _lumahist.rewrite(image, work, mode="clahe", tiles_x=tiles_x, tiles_y=tiles_y,
                      clip_limit=clip_limit, matrix=matrix, range=range, backend=backend,
                      bit_depth=bit_depth or 0, format=format,
                      temporal=_temporal_capsule(temporal),
                      width=width or 0, chroma=chroma, orientation=orientation)
    return _written_back(work, result)


def _exactly_as(values, dtype, name, item, expected):
    """values as a contiguous array of dtype, or InvalidArgumentError where
    the conversion would change one of them: a negative, fractional or too
    large value would wrap or be cut into another, which the library could
    not tell from one meant."""
    given = _np.asarray(values)
    try:
        with _np.errstate(invalid="ignore"):
            converted = _np.ascontiguousarray(given, dtype=dtype)
    except (OverflowError, TypeError, ValueError) as error:
        raise InvalidArgumentError(f"{name}: {error}", -1) from None
    if given.dtype != converted.dtype:
        changed = _np.flatnonzero(converted.ravel() != given.ravel())
        if changed.size:
            i = int(changed[0])
            value = given.ravel()[i:i + 1].tolist()[0]
            raise InvalidArgumentError(f"{name}: {item} {i} is {value!r}, not {expected}", -1)
    return converted


def _tiles(tiles):
    """clahe's (x, y) grid, or InvalidArgumentError: int() would take 1.5 as 1
    and the text "88" as (8, 8)."""
    try:
        x, y = (_operator.index(v) for v in tiles)
    except (TypeError, ValueError):
        raise InvalidArgumentError(f"tiles {tiles!r}: (x, y), two integers", -1) from None
    if not (-2**31 <= min(x, y) and max(x, y) < 2**31):
        # The library's words for a grid past LH_CLAHE_MAX_TILES, which a C int cannot carry.
        raise InvalidArgumentError(f"CLAHE grid {x}x{y}: each side must be in 1 .. 64", -1)
    return x, y


def apply_lut(image, lut, *, out=None, matrix="bt601", backend="auto", bit_depth=None,
              format=None, width=None, chroma="keep"):
    """Maps the luma through lut: 2^bit_depth uint16 entries, each at most
    2^bit_depth - 1 (a larger one raises InvalidArgumentError), bit_depth the
    luma's (the format's own: 1024 entries for P010 or v210); chroma as for
    equalize.  A lut of another type must hold uint16 values (a negative,
    fractional or larger entry raises InvalidArgumentError).  image, out,
    format, width, bit_depth, matrix and backend as for equalize."""
    image = _readable(image)
    result = _output_for(image, out)
    table = _exactly_as(lut, _np.uint16, "lut", "entry", "a uint16 value (0 .. 65535)")
    work = _aligned(result)
    _lumahist.rewrite(image, work, mode="lut", lut=table, matrix=matrix, backend=backend,
                      bit_depth=bit_depth or 0, format=format, width=width or 0, chroma=chroma)
    return _written_back(work, result)


def lut_from_histogram(histogram, *, range="full"):
    """The global equalization LUT of a histogram of 2^8 .. 2^16 counts (e.g. summed
    over many images), as a uint16 NumPy array.  Counts of another type must be
    whole and not negative (a normalized histogram raises InvalidArgumentError).
    range: "limited" maps into 16..235 (scaled to the depth), as equalize's."""
    counts = _exactly_as(histogram, _np.uint64, "histogram", "count",
                         "a count (an integer in 0 .. 2^64 - 1)")
    return _np.frombuffer(_lumahist.lut_from_histogram(counts.tobytes(), range=range),
                          dtype=_np.uint16).copy()


def _check_overlay_out(image, out):
    """overlay's out=, before the image is copied into it: an array of the
    image's shape and element type that can be written, as the C calls hold
    equalize's and clahe's out= to (a copy would convert other types)."""
    if not hasattr(image, "dtype"):
        image = _np.asarray(image)
    shape, dtype = getattr(out, "shape", None), getattr(out, "dtype", None)
    if shape is None or dtype is None:
        raise InvalidArgumentError("out: not an array (a NumPy, CuPy or PyTorch array)", -1)
    if tuple(shape) != tuple(image.shape) or dtype != image.dtype:
        raise InvalidArgumentError(
            f"out: {tuple(shape)} {dtype} and the image's {tuple(image.shape)} {image.dtype} "
            "differ in shape or element type", -1)
    flags = getattr(out, "flags", None)
    if flags is not None and getattr(flags, "writeable", True) is False:
        raise InvalidArgumentError("out: a read-only array", -1)


def overlay(image, *, out=None, rect=None, opacity=0.8, scale="log", markers=True, clipping=True,
            clip_warning=0.005, percentiles=(5, 95), matrix="bt601", range="full",
            backend="auto", bit_depth=None, format=None, width=None, orientation=1):
    """The image with its luma histogram drawn on it (the tool's overlay): a panel
    at rect (x, y, w, h; default placement as the tool's), log or linear counts,
    lines at the median and percentiles, clipping bands: the tool's `overlay`
    with the same options gives the same pixels; YUV frames get it at their own
    chroma subsampling.  orientation: how the image is shown, as an Exif
    orientation (1 as stored, 6 turned a quarter clockwise, ...; the tool takes
    a file's own): the panel and rect are placed in the image as shown and drawn
    to read upright there.  opacity: the panel's alpha, 0 .. 1; scale: "log"
    or "linear"; markers: the median's and percentiles' lines; clipping: the
    bands at black and white (and the limited-range shading), lit where at
    least clip_warning (a fraction, 0 .. 1) of the pixels are there; image, format, width,
    bit_depth, matrix, range and backend as for stats.  Returns out (a new
    array unless given; out=image draws in place)."""
    image = _readable(image)
    result = _output_for(image, out)
    if result is not image:
        if out is not None:
            _check_overlay_out(image, out)
        result[...] = image
    work = _aligned(result)
    _lumahist.overlay(work, percentiles=percentiles,
                      rect=_rect(rect) if rect is not None else (0, 0, 0, 0),
                      opacity=_float(opacity, "opacity"), scale=scale, markers=bool(markers),
                      clipping=bool(clipping), clip_warning=_float(clip_warning, "clip_warning"),
                      matrix=matrix,
                      range=range, backend=backend, bit_depth=bit_depth or 0, format=format,
                      width=width or 0, orientation=orientation)
    return _written_back(work, result)


class DatasetStats(Stats):
    """The statistics of many images' summed histograms: the tool's dataset record
    (`lumahist stats --dataset`, `lumahist merge`).  images: how many; width,
    height and backend are None."""

    images = _AssignedField("How many images were summed, a video counting as one (its "
                            "summary's histogram); a path met twice counts once.")

    def to_dict(self, histogram=True):
        """The tool's dataset record, its fields in its order: path None,
        dataset True and images, and no width, height or backend."""
        record = {"path": None, "dataset": True, "images": self.images}
        record.update(super().to_dict(histogram))
        for key in ("width", "height", "backend"):
            record.pop(key)
        return record

    def __repr__(self):
        return (f"<lumahist.DatasetStats {self.images} images {self.bit_depth}-bit "
                f"mean {self.mean:.3f} median {self.median}>")


_FRAME_FIELDS_FIRST = ("frame", "pts", "duration", "keyframe")
_FRAME_FIELDS_LAST = ("diff", "cut_distance", "scene_cut", "black", "frozen", "out_of_legal",
                      "flicker", "signalstats_low", "signalstats_high", "decode_warning")


class VideoFrame(Stats):
    """The statistics of one frame of a video file (stats_files), as the tool's
    frame record has them: the fields of Stats (decoder: the GStreamer
    element), and frame (its index among the decoded frames from start on),
    pts and duration (seconds; None unknown), keyframe (None unknown), diff
    (mean absolute luma difference to the previous record's frame, code
    values; None for the first), cut_distance (histogram distance to it; None
    for the first), scene_cut, black, frozen, out_of_legal (fraction outside
    16..235 scaled to the depth), flicker (std of the means over the last
    second), signalstats_low and signalstats_high (FFmpeg signalstats' YLOW
    and YHIGH) and decode_warning, as README's "Video files" defines them."""

    def to_dict(self, histogram=True):
        """The tool's jsonl record of the frame, its fields in its order."""
        image = super().to_dict(histogram)
        record = {"path": image.pop("path")}
        for name in _FRAME_FIELDS_FIRST:
            record[name] = getattr(self, name)
        counts = image.pop("histogram", None)
        record.update(image)
        for name in _FRAME_FIELDS_LAST:
            record[name] = getattr(self, name)
        if counts is not None:
            record["histogram"] = counts
        return record

    def __repr__(self):
        return (f"<lumahist.VideoFrame {self.path} frame {self.frame} pts {self.pts} "
                f"mean {self.mean:.3f} median {self.median}>")


def _summary_field(name, doc):
    return property(lambda self: self._record.get(name), doc=doc)


class VideoSummary(Stats):
    """The summary of a video file (stats_files), after its frames' records: the
    tool's summary record.  As Stats, the statistics of all its analysed
    frames' pixels together (histogram: their summed histogram; width,
    height, bit_depth, matrix, range of the first frame; backend where the
    last was analysed; decoder the GStreamer element), and the summary's own
    fields (README, "Video files")."""

    summary = _AssignedField(_SUMMARY_DOC, True)
    frames = _summary_field("frames", "Frames analysed.")
    duration = _summary_field("duration", "Seconds from the first frame's pts to the last one's end.")
    start = _summary_field("start", "The first analysed frame's pts, seconds.")
    complete = _summary_field("complete", "Whether the file was read to its end.")
    error = _summary_field("error", "Why the file ended early; None when complete.")
    frame_stats = _summary_field(
        "frame_stats", "{statistic: {'min', 'max', 'mean'}} over the frames of mean, stddev, "
        "min, max, median, clipped_low, clipped_high, out_of_legal, diff, cut_distance, "
        "flicker and each percentile ('p50', ...).")
    cuts = _summary_field("cuts", "The pts of each scene cut.")
    black = _summary_field("black", "Spans of black frames: [{'start', 'end', 'first_frame', "
                           "'frames'}].")
    frozen = _summary_field("frozen", "Spans of frozen frames, as black's.")
    decode_warnings = _summary_field("decode_warnings", "Frames the decoder warned of.")

    def to_dict(self, histogram=True):
        """The tool's jsonl summary record, its fields in its order."""
        # A copy down to its lists and dicts (cuts, spans, frame_stats): a
        # caller that edits the record it was given does not edit the result.
        record = _copy.deepcopy(self._record)
        record["path"] = self.path
        if histogram:
            record["histogram"] = self.histogram.tolist()
        return record

    def __repr__(self):
        state = "complete" if self.complete else "incomplete"
        return (f"<lumahist.VideoSummary {self.path} {self.frames} frames, {state}, "
                f"mean {self.mean:.3f} median {self.median}>")


_lumahist.set_result_types(Stats, DatasetStats, VideoFrame, VideoSummary)


def _is_dataset(record):
    return isinstance(record, DatasetStats) or (isinstance(record, _Mapping) and
                                                 bool(record.get("dataset")))


def _record_sum(record):
    """(bit depth, images, histogram) of a record as merge sums it; None
    for what it skips (a video frame) or cannot read (merge says why)."""
    if isinstance(record, Stats):
        if isinstance(record, VideoFrame):
            return None
        images = record.images if isinstance(record, DatasetStats) else 1
        return record.bit_depth, images, _np.asarray(record.histogram, dtype=_np.uint64)
    if isinstance(record, _Mapping) and "frame" not in record:
        try:
            counts = _np.asarray(record.get("histogram") or [], dtype=_np.uint64)
        except (OverflowError, TypeError, ValueError):
            return None
        images = record.get("images") if _is_dataset(record) else 1
        return record.get("bit_depth"), images, counts
    return None


def _check_datasets_sum_their_images(records):
    """Among image records, a dataset record is skipped only as `stats
    --dataset` writes one: the sum of the image records of its depth since
    the last dataset records, which are summed themselves.  Any other (an
    earlier merge's, joined to image records) would lose the images it
    counts: refused, as `lumahist merge` refuses such a file."""
    sums = {}
    after_datasets = False
    for record in records:
        summed = _record_sum(record)
        if not _is_dataset(record):
            if after_datasets:
                sums, after_datasets = {}, False
            if summed is not None and summed[2].size:
                depth, _, counts = summed
                images, total = sums.get(depth, (0, None))
                sums[depth] = (images + 1, counts.copy() if total is None or
                               total.size != counts.size else total + counts)
            continue
        after_datasets = True
        if summed is None:
            continue
        depth, images, counts = summed
        if images == 0 and not counts.any():
            continue  # the sum of no image (an empty shard's) sums nothing
        want_images, want = sums.get(depth, (0, None))
        if want_images != images or want is None or not _np.array_equal(want, counts):
            raise InvalidArgumentError(
                f"a dataset record of {images} images among image records that it does not "
                "sum (an earlier merge's?): its images would be lost; merge the image records "
                "first, then the dataset records with that", -1)


def merge(records, *, percentiles=None):
    """The dataset statistics of many images from their histograms (histograms are
    additive): records are Stats or the tool's jsonl records as dicts, of one
    bit depth, matrix and range.  percentiles: the records' own when not given
    (where they differ, every one any of them holds, in increasing order).
    As `lumahist merge`: video frames are skipped (a video's summary holds
    its frames' counts), a path met again (however spelled: ./a.png is a.png)
    is counted once, and dataset records (DatasetStats, earlier merges) are
    summed as the images they count when they are all the records, and
    skipped among image records where they sum the image records of their
    depth before them (`stats --dataset`'s); another dataset record among
    image records (an earlier merge's) raises InvalidArgumentError, as the
    tool refuses such a file."""
    records = list(records)
    datasets = [_is_dataset(r) for r in records]
    only_datasets = bool(records) and all(datasets)
    # The check reads every histogram: only where there is a dataset record
    # among the image records for it to check.
    if not only_datasets and any(datasets):
        _check_datasets_sum_their_images(records)
    total = None
    images = 0
    first = None
    seen = set()
    # The percentiles of the records summed, as `lumahist merge` lists them:
    # the first's, in its order; where records differ, every one any of
    # them holds, in increasing order (not only the first record's).
    keys = []
    keys_differ = False
    for record in records:
        weight = 1
        if _is_dataset(record):
            if not only_datasets:
                continue
            weight = record.images if isinstance(record, Stats) else record.get("images")
            try:
                weight = _operator.index(weight)
            except TypeError:
                weight = -1
            if weight < 0:
                raise InvalidArgumentError(
                    "A dataset record without its images (a count of images) cannot be merged",
                    -1)
            if weight == 0:
                continue  # the sum of no image (an empty shard's) sums nothing
        if isinstance(record, Stats):
            if isinstance(record, VideoFrame):
                continue
            fields = {"bit_depth": record.bit_depth, "matrix": record.matrix,
                      "range": record.range}
            listed = record.percentiles
            counts = record.histogram
            path = getattr(record, "path", None)
        elif isinstance(record, _Mapping):
            if "frame" in record:
                continue
            fields = record
            listed = record.get("percentiles") or {}
            path = record.get("path")
            named = f"{path}: a" if path is not None else "A"
            # As the other checks of the module: a count that is negative or
            # fractional would wrap into another, and a record without its
            # depth, matrix or range raised KeyError.
            counts = _exactly_as(record.get("histogram") or [], _np.uint64, "histogram", "count",
                                 "a count (an integer in 0 .. 2^64 - 1)").ravel()
            if counts.size == 0:
                raise InvalidArgumentError(
                    f"{named} record without its histogram cannot be merged", -1)
            for name in ("bit_depth", "matrix", "range"):
                if name not in record:
                    raise InvalidArgumentError(
                        f"{named} record without its {name} cannot be merged", -1)
            # As `lumahist merge` refuses it: 256 counts said to be 10-bit
            # were summed as 8-bit ones, and the dataset said 8 bits.
            try:
                depth = _operator.index(record["bit_depth"])
            except TypeError:
                depth = None
            if depth is None or not 8 <= depth <= 16 or counts.size != 1 << depth:
                raise InvalidArgumentError(
                    f"{named} record's histogram does not have 2^bit_depth counts "
                    f"({counts.size} counts, bit_depth {record['bit_depth']!r})", -1)
        else:
            raise InvalidArgumentError(
                "records: Stats objects or the tool's records as dicts, not "
                f"{type(record).__name__}", -1)
        key = (fields["bit_depth"], fields["matrix"], fields["range"])
        if first is None:
            first = key
            total = _np.zeros(counts.size, dtype=_np.uint64)
        elif key != first:
            raise InvalidArgumentError(f"records of {key} and {first} do not add up", -1)
        if counts.size != total.size:
            raise InvalidArgumentError("histograms of different sizes", -1)
        if path is not None:
            # Named as the tool matches them: ./photos/a.png is photos/a.png.
            path = _os.path.abspath(path)
            if path in seen:
                continue
            seen.add(path)
        listed = [float(p) for p in listed]
        if listed != keys:
            first_list = not keys and not keys_differ
            if not first_list and len(listed) != len(keys):
                keys_differ = True
            for p in listed:
                if p not in keys:
                    keys_differ = keys_differ or not first_list
                    keys.append(p)
        total += counts
        images += weight
    if first is None:
        raise InvalidArgumentError("no records to merge", -1)
    if percentiles is None:
        percentiles = sorted(keys) if keys_differ else keys
    result = _lumahist.from_histogram(total.tobytes(), matrix=first[1], range=first[2],
                                      percentiles=percentiles)
    result.images = images
    return result


class Temporal:
    """Temporal smoothing for video (the element's temporal-window): pass it as
    temporal= to equalize or clahe for each frame of one stream, in order; the
    LUT applied is the mean of the last `window` frames' LUTs, restarted at a
    scene cut (histogram distance above cut_threshold; 1: never) and by a
    frame of another size, depth, mode, grid, clip_limit, range or (R'G'B')
    matrix, whose LUTs no mean with the earlier ones would make sense of.

    Threads may share one: the calls that use it, and reset(), take turns (a
    lock), so its state is never corrupted; it smooths the frames in the
    order the calls come, so one stream's frames still belong to one thread,
    in order.  It cannot be copied or pickled (copy.copy, copy.deepcopy,
    pickle, passing it to a multiprocessing worker raise TypeError): its
    window is one stream's, and a copy would either share it or silently
    start over; make a new Temporal(window, cut_threshold) for another stream
    or process."""

    def __init__(self, window=8, cut_threshold=0.4):
        # index(), not int(): int() took a window of 2.5 as 2 and "8" as 8.
        window, cut_threshold = _operator.index(window), _float(cut_threshold, "cut_threshold")
        self._capsule = _lumahist.temporal_new(window, cut_threshold)
        self._window = window
        self._cut_threshold = cut_threshold

    # Read-only: the window and threshold are the capsule's, fixed when it was
    # made; an assignable attribute took T.window = 1 and went on smoothing
    # over the 8 frames it was made with.
    @property
    def window(self):
        """How many frames' LUTs are averaged (fixed: make a new Temporal for another)."""
        return self._window

    @property
    def cut_threshold(self):
        """The histogram distance above which a frame restarts the window (fixed)."""
        return self._cut_threshold

    def reset(self):
        """Forgets every frame: the next one starts a new window."""
        _lumahist.temporal_reset(self._capsule)

    def __reduce_ex__(self, protocol):
        # copy.copy, copy.deepcopy and pickle all come here.
        raise TypeError("a lumahist.Temporal cannot be copied or pickled: it holds one stream's "
                        "window of frames; make a new lumahist.Temporal(window, cut_threshold) "
                        "for another stream or process")


StatsFilesIterator = _lumahist.StatsFilesIterator


def stats_files(paths, *, jobs=None, matrix=None, range=None,
                percentiles=(1, 5, 50, 95, 99), backend="auto", max_pixels=None,
                errors="warn", decoder="auto", every=1, fps=None, start=None, duration=None,
                cut_threshold=0.4, video_timeout=30.0, video_memory="cuda", fifo_wait=30.0,
                program=None, devices=None):
    """Stats of image and video files and folders, on the command-line tool's
    batch pipeline: folders walked as `lumahist stats` walks them
    (recursively, each folder's entries in sorted byte order, hidden ones
    left out; its .png, .jpg, .jpeg, .jpe and .jfif files and its video files), images
    decoded on `jobs` threads (None or 0: one per core) and analysed in batches, on a GPU when backend
    allows it, with JPEGs decoded there by nvJPEG where it can be loaded
    (decoder="auto" or "gpu"; "cpu": libjpeg-turbo); devices: the GPUs to
    spread the images over, as the tool's --devices (a list of device
    numbers, or an int; None: device 0, which CUDA_VISIBLE_DEVICES picks,
    whatever device the calling thread has current).  Returns an iterator of
    records in the order of the files, the tool's: a Stats for each image,
    and for each video (a file whose content or name says so, decoded by
    GStreamer, NVDEC's frames read in place on the GPU unless
    video_memory="system") a VideoFrame for each analysed frame, then its
    VideoSummary.  `lumahist stats` on the same paths with the same options
    gives the same records: each to_dict() is the tool's jsonl record
    (--backend cpu --decoder cpu gives the numbers that backend="cpu",
    decoder="cpu" gives).  matrix and range: the tool's --matrix and
    --range (default bt601 and full; a video's come from its stream unless
    given); percentiles: as for stats; max_pixels: the tool's --max-pixels,
    an image of more pixels (by its header) is refused before it is decoded
    (None or 0: 2^28); fifo_wait: the tool's --fifo-wait, how many seconds
    a named FIFO (an image's or a video's) waits for a program to open it
    for writing before it fails (FileIOError, "a FIFO no writer opened in S
    s"; 0: no limit).  Videos: every (one decoded frame in N), fps (at
    most F frames a second of stream time; None: all), start and duration (seconds of stream
    time; start None: from the first frame, which duration then counts from; duration None:
    to the end), cut_threshold (the histogram distance
    of a scene cut), video_timeout (seconds without a frame before a file is
    given up), program (the program of an MPEG-TS to read, 1 .. 65535; None:
    the one GStreamer's tsdemux takes, the first whose map comes, a warning
    naming the others), as the tool's --every, --fps, --start, --duration,
    --cut-threshold, --video-timeout, --video-memory and --program, with its
    checks (a bad value raises InvalidArgumentError; a program an MPEG-TS
    has not fails that file, naming those it has).  A file that cannot be read: a
    RuntimeWarning saying its path and why, and it is left out
    (errors="warn"), or the lumahist.Error raised in its place, the records
    before it having come (errors="raise"; a path that does not exist is
    found by the walk, before any file is read, and raises first); a video that fails part way (cut,
    damaged, stuck) first gives the records of the frames decoded before the
    damage and its summary, complete False with the error.  decoder="gpu"
    where nvJPEG cannot be used raises UnsupportedError.  The run goes on in
    threads of its own, a few dozen records ahead of the loop at most;
    closing the iterator (close(), garbage collection; break or an exception
    such as KeyboardInterrupt in a loop that holds it alone) stops it: one
    kept in a variable runs on after break until closed; within a tenth of a
    second while a video gives no frame or a FIFO waits for its writer.  It runs in a fork()ed child
    (multiprocessing's fork start method, DataLoader workers; a video there
    stalls until video_timeout if the parent read one in the last half
    second); an iterator made before the fork raises RuntimeError there."""
    if errors not in ("warn", "raise"):
        raise InvalidArgumentError("errors: warn or raise", -1)
    if max_pixels is not None:
        # index(), as jobs= and every= take theirs: a NumPy integer (a
        # product of shapes) was refused as "argument 7 must be int", and
        # text raised a comparison's TypeError.
        max_pixels = _operator.index(max_pixels)
    if max_pixels is not None and max_pixels < 0:
        raise InvalidArgumentError(f"max_pixels {max_pixels}: must not be negative", -1)
    if max_pixels is not None and max_pixels >= 2**63:
        # The tool's --max-pixels stops there (and the C call's unsigned 64
        # bits took 2^64 as 0, the default limit).
        raise _out_of_range("max_pixels", max_pixels)
    if isinstance(paths, (str, bytes, _os.PathLike)):
        paths = [paths]
    if devices is not None:
        # Device numbers as the tool's --devices takes them ("0,1"), checked
        # there with its words; index() refuses text and floats.
        listed_devices = [devices] if not hasattr(devices, "__iter__") else list(devices)
        devices = ",".join(str(_operator.index(d)) for d in listed_devices)
    listed = percentiles
    if percentiles is not None and not isinstance(percentiles, (str, bytes, bytearray)):
        # (text: refused by the extension, as stats')
        # (a float32's as it prints: _lumahist.stats reads them so)
        listed = [_float(str(p) if getattr(getattr(p, "dtype", None), "kind", "") == "f" and
                         p.dtype.itemsize < 8 else p, "percentiles") for p in percentiles]
    return _lumahist.stats_files([_os.fspath(p) for p in paths], jobs=jobs or 0, matrix=matrix,
                                 range=range, percentiles=listed, backend=backend,
                                 max_pixels=max_pixels or 0, decoder=decoder,
                                 raise_errors=errors == "raise", every=every,
                                 # 0 is "not given" there: given, it is refused, as the tool
                                 # refuses --fps 0 and --duration 0.
                                 fps=0.0 if fps is None else _float(fps, "fps") or -1.0,
                                 start=None if start is None else _float(start, "start"),
                                 duration=(0.0 if duration is None
                                           else _float(duration, "duration") or -1.0),
                                 cut_threshold=_float(cut_threshold, "cut_threshold"),
                                 video_timeout=_float(video_timeout, "video_timeout"),
                                 video_memory=video_memory, fifo_wait=_float(fifo_wait, "fifo_wait"),
                                 # 0 is no program (the network's): given, it is refused.
                                 program=0 if program is None else _operator.index(program) or -1,
                                 devices=devices)
