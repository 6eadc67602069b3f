"""lumahist: luma histograms, statistics, exact percentiles, equalization and
CLAHE of images held as arrays, on NVIDIA GPUs or the CPU, with the numbers
of the lumahist library and command-line tool.

    import numpy as np, lumahist
    s = lumahist.stats(np.asarray(image))        # H x W gray, H x W x 3 RGB, uint8/uint16
    print(s.median, s.percentiles[99], s.histogram.sum())
    out = lumahist.equalize(image)               # a new array; out= to write in place

Arrays are read in place through the buffer protocol (NumPy, Pillow's
arrays, anything bytes-like with a shape), and CUDA arrays (CuPy, PyTorch)
through __cuda_array_interface__, on the GPU where they are, on the stream
their producer names, never copied to the host.  Each row's samples must be
packed; rows may be padded (views of a larger array).  OpenCV's arrays are
BGR: pass format="BGR".  The work runs with the GIL released.
"""
import os as _os
import warnings as _warnings
from concurrent.futures import ThreadPoolExecutor as _ThreadPoolExecutor

import numpy as _np

from . import _lumahist

__all__ = [
    "Error", "InvalidArgumentError", "UnsupportedError", "OutOfMemoryError", "NoDeviceError",
    "CudaError", "Stats", "DatasetStats", "stats", "equalize", "clahe", "apply_lut",
    "lut_from_histogram", "overlay", "merge", "device_time", "Temporal", "stats_files",
    "__version__",
]

__version__ = _lumahist.version()


class Error(Exception):
    """A failure of the lumahist library: .status is its LhStatus (negative)."""

    def __init__(self, message, status=-1):
        super().__init__(message)
        self.status = status


class InvalidArgumentError(Error, ValueError):
    """A bad array (dtype, shape, strides, empty), option or size (LH_ERROR_INVALID_ARGUMENT)."""


class UnsupportedError(Error):
    """A format or mode this build cannot do (LH_ERROR_UNSUPPORTED)."""


class OutOfMemoryError(Error, MemoryError):
    """Host or device memory ran out (LH_ERROR_NO_MEMORY)."""


class NoDeviceError(Error):
    """backend="cuda" where no CUDA device is usable (LH_ERROR_NO_DEVICE)."""


class CudaError(Error):
    """A CUDA call failed (LH_ERROR_CUDA)."""


class _IOError(Error, OSError):
    pass


class _CorruptError(Error, ValueError):
    pass


class _TooLargeError(Error, ValueError):
    pass


_lumahist.set_errors((Error, InvalidArgumentError, UnsupportedError, OutOfMemoryError,
                      NoDeviceError, CudaError, _IOError, _CorruptError, _TooLargeError))


def _percentile_key(p):
    """The key of percentile p in records: the shortest %.Ng that reads back as p,
    as the command-line tool writes it."""
    for digits in range(1, 18):
        text = "%.*g" % (digits, p)
        if float(text) == p and ("e" not in text or (p != 0 and p < 1e-4)):
            return text
    return text


_FIELDS = ("bit_depth", "matrix", "range", "backend", "count", "mean", "stddev", "min", "max",
           "median", "clipped_low", "clipped_high", "below_legal", "above_legal", "mean_norm",
           "stddev_norm", "min_norm", "max_norm", "median_norm")


class Stats:
    """The statistics of one image, as the tool's records have them.

    Attributes: width, height, bit_depth, matrix, range, backend, count,
    mean, stddev, min, max, median, clipped_low, clipped_high, below_legal,
    above_legal, the *_norm values, percentiles ({p: code value}),
    percentiles_norm ({p: normalized}) and histogram (a NumPy array of
    2^bit_depth uint64 counts).
    """

    def __init__(self, raw, path=None):
        self.path = path
        self.decoder = raw.get("decoder")
        self.converted_from = raw.get("converted_from")  # "CMYK", "YCCK" or None
        self.width, self.height = raw["size"]
        for name in _FIELDS:
            setattr(self, name, raw[name])
        self.percentiles = dict(zip(raw["percentile_p"], raw["percentile_values"]))
        self.percentiles_norm = dict(zip(raw["percentile_p"], raw["percentile_norms"]))
        self.histogram = _np.frombuffer(raw["histogram"], dtype=_np.uint64)

    def to_dict(self, histogram=True):
        """The fields of the tool's jsonl record, in its order: all of them for a
        file (stats_files); without path and decoder for an array."""
        record = {"path": self.path} if self.path is not None else {}
        record["width"], record["height"] = self.width, self.height
        for name in _FIELDS:
            record[name] = getattr(self, name)
            if name == "backend" and self.decoder is not None:
                record["decoder"] = self.decoder
                if self.converted_from is not None:
                    record["converted_from"] = self.converted_from
        record["percentiles"] = {_percentile_key(p): v for p, v in self.percentiles.items()}
        record["percentiles_norm"] = {_percentile_key(p): v
                                      for p, v in self.percentiles_norm.items()}
        if histogram:
            record["histogram"] = [int(c) for c in self.histogram]
        return record

    def __repr__(self):
        return (f"<lumahist.Stats {self.width}x{self.height} {self.bit_depth}-bit "
                f"mean {self.mean:.3f} median {self.median}>")


def _percentile_list(percentiles):
    if percentiles is None:
        return ""
    values = [float(p) for p in percentiles]
    return ",".join(repr(p) for p in values)


def stats(image, *, matrix="bt601", range="full", percentiles=(1, 5, 50, 95, 99), roi=None,
          backend="auto", bit_depth=None, format=None):
    """Histogram, statistics and exact (nearest-rank) percentiles of an image's luma.

    image: H x W (gray), H x W x 3 (RGB; format="BGR" for OpenCV) or H x W x 4,
    uint8 or uint16 (bit_depth: significant bits of 16-bit gray); format="NV12"
    or "I420" for an (H * 3 / 2) x W uint8 array of planes.  roi: (x, y, w, h).
    backend: "auto" (CUDA when usable), "cuda" or "cpu".
    """
    raw = _lumahist.stats(image, matrix=matrix, range=range,
                          percentiles=_percentile_list(percentiles),
                          roi=tuple(roi) if roi is not None else (0, 0, 0, 0), backend=backend,
                          bit_depth=bit_depth or 0, format=format)
    return Stats(raw)


def _output_for(image, out):
    if out is not None:
        return out
    if hasattr(image, "__cuda_array_interface__"):
        # A CUDA array stays on the device: CuPy's copy(), PyTorch's clone().
        return image.clone() if hasattr(image, "clone") else image.copy()
    return _np.array(image, copy=True, order="C")


def device_time():
    """The GPU time of the calling thread's CUDA context so far (lh_context_device_time):
    {"transfer_s", "compute_s", "calls", "transfer_bytes"}, or None without one.
    transfer_bytes stays 0 for arrays already on the device: nothing was copied."""
    return _lumahist.device_time()


def equalize(image, *, out=None, matrix="bt601", range="full", backend="auto", bit_depth=None,
             format=None, temporal=None):
    """Global histogram equalization of the luma (cv2.equalizeHist's LUT, bit-exact
    on 8-bit gray); colour keeps its hue.  Returns out, a new array unless given
    (out=image equalizes in place)."""
    result = _output_for(image, out)
    _lumahist.rewrite(image, result, mode="global", matrix=matrix, range=range, backend=backend,
                      bit_depth=bit_depth or 0, format=format,
                      temporal=temporal._capsule if temporal is not None else None)
    return result


def clahe(image, *, tiles=(8, 8), clip=40.0, out=None, matrix="bt601", range="full",
          backend="auto", bit_depth=None, format=None, temporal=None):
    """Contrast-limited adaptive equalization as cv2.createCLAHE(clip, tiles) (within
    1 of OpenCV at 8 bits).  tiles: (x, y)."""
    result = _output_for(image, out)
    _lumahist.rewrite(image, result, mode="clahe", tiles_x=int(tiles[0]), tiles_y=int(tiles[1]),
                      clip_limit=float(clip), matrix=matrix, range=range, backend=backend,
                      bit_depth=bit_depth or 0, format=format,
                      temporal=temporal._capsule if temporal is not None else None)
    return result


def apply_lut(image, lut, *, out=None, matrix="bt601", backend="auto", bit_depth=None,
              format=None):
    """Maps the luma through lut (2^bit_depth uint16 entries)."""
    result = _output_for(image, out)
    table = _np.ascontiguousarray(lut, dtype=_np.uint16)
    _lumahist.rewrite(image, result, mode="lut", lut=table, matrix=matrix, backend=backend,
                      bit_depth=bit_depth or 0, format=format)
    return result


def lut_from_histogram(histogram, *, range="full"):
    """The global equalization LUT of a histogram of 2^8 .. 2^16 counts (e.g. summed
    over many images), as a uint16 NumPy array."""
    counts = _np.ascontiguousarray(histogram, dtype=_np.uint64)
    return _np.frombuffer(_lumahist.lut_from_histogram(counts.tobytes(), range=range),
                          dtype=_np.uint16).copy()


def overlay(image, *, out=None, rect=None, opacity=0.8, scale="log", markers=True, clipping=True,
            clip_warning=0.005, percentiles=(5, 95), matrix="bt601", range="full",
            backend="auto", bit_depth=None, format=None):
    """The image with its luma histogram drawn on it (the tool's overlay): a panel
    at rect (x, y, w, h; default placement as the tool's), log or linear counts,
    lines at the median and percentiles, clipping bands: the tool's `overlay`
    with the same options gives the same pixels.  Returns out (a new array
    unless given; out=image draws in place)."""
    result = _output_for(image, out)
    if result is not image:
        result[...] = image
    _lumahist.overlay(result, percentiles=_percentile_list(percentiles),
                      rect=tuple(rect) if rect is not None else (0, 0, 0, 0),
                      opacity=float(opacity), scale=scale, markers=bool(markers),
                      clipping=bool(clipping), clip_warning=float(clip_warning), matrix=matrix,
                      range=range, backend=backend, bit_depth=bit_depth or 0, format=format)
    return result


class DatasetStats(Stats):
    """The statistics of many images' summed histograms: the tool's dataset record
    (`lumahist stats --dataset`, `lumahist merge`).  images: how many."""

    def __init__(self, raw, images):
        raw = dict(raw, size=(None, None), backend=None)
        super().__init__(raw)
        self.images = images

    def to_dict(self, histogram=True):
        record = {"path": None, "dataset": True, "images": self.images}
        record.update(super().to_dict(histogram))
        for key in ("width", "height", "backend"):
            record.pop(key)
        return record

    def __repr__(self):
        return (f"<lumahist.DatasetStats {self.images} images {self.bit_depth}-bit "
                f"mean {self.mean:.3f} median {self.median}>")


def merge(records, *, percentiles=None):
    """The dataset statistics of many images from their histograms (histograms are
    additive): records are Stats or the tool's jsonl records as dicts, of one
    bit depth, matrix and range.  percentiles: the records' own when not given."""
    total = None
    images = 0
    first = None
    for record in records:
        if isinstance(record, Stats):
            fields = {"bit_depth": record.bit_depth, "matrix": record.matrix,
                      "range": record.range, "percentiles": record.percentiles}
            counts = record.histogram
        else:
            if record.get("dataset"):
                continue
            fields = record
            counts = _np.asarray(record.get("histogram") or [], dtype=_np.uint64)
            if counts.size == 0:
                raise InvalidArgumentError(
                    f"{record.get('path')}: a record without its histogram cannot be merged", -1)
        key = (fields["bit_depth"], fields["matrix"], fields["range"])
        if first is None:
            first = key
            total = _np.zeros(counts.size, dtype=_np.uint64)
            if percentiles is None:
                percentiles = [float(p) for p in fields.get("percentiles", {})]
        elif key != first:
            raise InvalidArgumentError(f"records of {key} and {first} do not add up", -1)
        if counts.size != total.size:
            raise InvalidArgumentError("histograms of different sizes", -1)
        total += counts
        images += 1
    if first is None:
        raise InvalidArgumentError("no records to merge", -1)
    raw = _lumahist.from_histogram(total.tobytes(), matrix=first[1], range=first[2],
                                   percentiles=_percentile_list(percentiles))
    return DatasetStats(raw, images)


class Temporal:
    """Temporal smoothing for video (the element's temporal-window): pass it as
    temporal= to equalize or clahe for each frame of one stream, in order; the
    LUT applied is the mean of the last `window` frames' LUTs, restarted at a
    scene cut (histogram distance above cut_threshold; 1: never)."""

    def __init__(self, window=8, cut_threshold=0.4):
        self._capsule = _lumahist.temporal_new(int(window), float(cut_threshold))
        self.window = window
        self.cut_threshold = cut_threshold

    def reset(self):
        """Forgets every frame: the next one starts a new window."""
        _lumahist.temporal_reset(self._capsule)


_IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg")


def _image_files(paths):
    """The files the tool would read: a file as named, a folder by its .png, .jpg
    and .jpeg files, recursively, entries of each folder in sorted byte order."""
    for path in [paths] if isinstance(paths, (str, bytes, _os.PathLike)) else paths:
        path = _os.fspath(path)
        if not _os.path.isdir(path):
            yield path
            continue
        for top, dirs, files in _os.walk(path):
            dirs.sort(key=_os.fsencode)
            for name in sorted(files, key=_os.fsencode):
                if name.lower().endswith(_IMAGE_SUFFIXES):
                    yield _os.path.join(top, name)


def stats_files(paths, *, jobs=None, matrix="bt601", range="full",
                percentiles=(1, 5, 50, 95, 99), backend="auto", max_pixels=None,
                errors="warn"):
    """Stats of PNG and JPEG files and folders (walked as the tool walks them),
    decoded and analysed on `jobs` threads (default: the cores), in the order of
    the files.  Each Stats has path and decoder, and to_dict() is the tool's
    jsonl record (`lumahist stats --backend cpu --decoder cpu` gives the same).
    A file that cannot be read: a warning and it is left out (errors="warn"),
    or the lumahist.Error raised (errors="raise")."""
    if errors not in ("warn", "raise"):
        raise InvalidArgumentError("errors: warn or raise", -1)
    listed = _percentile_list(percentiles)

    def one(path):
        try:
            return Stats(_lumahist.stats_file(path, matrix=matrix, range=range,
                                              percentiles=listed, backend=backend,
                                              max_pixels=max_pixels or 0), path=path)
        except Error as e:
            if errors == "raise":
                raise
            _warnings.warn(str(e), RuntimeWarning, stacklevel=3)
            return None

    workers = jobs or _os.cpu_count() or 1
    with _ThreadPoolExecutor(max_workers=workers) as pool:
        pending = []
        for path in _image_files(paths):
            pending.append(pool.submit(one, path))
            # A bounded window of files in flight: results come out in order.
            if len(pending) >= 4 * workers:
                result = pending.pop(0).result()
                if result is not None:
                    yield result
        for future in pending:
            result = future.result()
            if result is not None:
                yield result
