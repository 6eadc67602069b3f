from typing import (Any, ClassVar, Dict, Iterable, Iterator, List, NoReturn, Optional, Protocol,
                    Sequence, SupportsIndex, Tuple, TypeVar, Union, final, overload,
                    type_check_only)

import numpy as np
import numpy.typing as npt

__version__: str
FORMATS: Tuple[str, ...]

class Error(Exception):
    status: int
    def __init__(self, message: str, status: Optional[int] = None) -> None: ...

class InvalidArgumentError(Error, ValueError): ...
class UnsupportedError(Error): ...
class OutOfMemoryError(Error, MemoryError): ...
class NoDeviceError(Error): ...
class CudaError(Error): ...
class FileIOError(Error, OSError):
    def __init__(self, message: str, status: Optional[int] = None, errno: Optional[int] = None,
                 filename: Optional[str] = None) -> None: ...
class CorruptFileError(Error, ValueError): ...
class TooLargeError(Error, ValueError): ...

class Stats:
    path: Optional[str]
    decoder: Optional[str]
    converted_from: Optional[str]
    width: int
    height: int
    bit_depth: int
    matrix: str
    range: str
    backend: str
    count: int
    mean: float
    stddev: float
    min: int
    max: int
    median: int
    clipped_low: float
    clipped_high: float
    below_legal: float
    above_legal: float
    mean_norm: float
    stddev_norm: float
    min_norm: float
    max_norm: float
    median_norm: float
    percentiles: Dict[float, int]
    percentiles_norm: Dict[float, float]
    histogram: npt.NDArray[np.uint64]
    summary: bool
    # Results come from the module's calls alone: Stats() raises TypeError
    # ("cannot create 'Stats' instances"), and so does a subclass's call.
    # An argument of the bottom type that none may be given (typing.Never,
    # spelled NoReturn for Python 3.9) makes mypy refuse every call.
    def __init__(self, _not_constructible: NoReturn, /) -> None: ...
    def to_dict(self, histogram: bool = True) -> Dict[str, Any]: ...
    # Value equality; mutable, so unhashable.
    def __eq__(self, other: object) -> bool: ...
    __hash__: ClassVar[None]  # type: ignore[assignment]

class VideoFrame(Stats):
    frame: int
    pts: Optional[float]
    duration: Optional[float]
    keyframe: Optional[bool]
    diff: Optional[float]
    cut_distance: Optional[float]
    scene_cut: bool
    black: bool
    frozen: bool
    out_of_legal: float
    flicker: Optional[float]
    signalstats_low: int
    signalstats_high: int
    decode_warning: bool

class VideoSummary(Stats):
    # Read-only: properties over the summary record.
    @property
    def frames(self) -> int: ...
    @property
    def duration(self) -> Optional[float]: ...
    @property
    def start(self) -> Optional[float]: ...
    @property
    def complete(self) -> bool: ...
    @property
    def error(self) -> Optional[str]: ...
    @property
    def frame_stats(self) -> Dict[str, Dict[str, Optional[float]]]: ...
    @property
    def cuts(self) -> List[Optional[float]]: ...
    @property
    def black(self) -> List[Dict[str, Any]]: ...
    @property
    def frozen(self) -> List[Dict[str, Any]]: ...
    @property
    def decode_warnings(self) -> int: ...

def stats(image: Any, *, matrix: str = "bt601", range: str = "full",
          percentiles: Optional[Iterable[float]] = (1, 5, 50, 95, 99),
          roi: Optional[Sequence[SupportsIndex]] = None, backend: str = "auto",
          bit_depth: Optional[SupportsIndex] = None, format: Optional[str] = None,
          width: Optional[SupportsIndex] = None) -> Stats: ...
# What equalize, clahe, apply_lut and overlay return (the package's
# _output_for): out when given; else a NumPy array's copy, of its element
# type; a CUDA array's (__cuda_array_interface__: CuPy's copy(), PyTorch's
# clone()), of its type; and for anything else the extension reads (a
# buffer, a Pillow image) a NumPy array.  An out that is no NumPy or CUDA
# array (a memoryview) is returned too, typed Any (overlay refuses one).
_ScalarT = TypeVar("_ScalarT", bound=np.generic)

@type_check_only
class _CudaArray(Protocol):
    @property
    def __cuda_array_interface__(self) -> Dict[str, Any]: ...

_CudaArrayT = TypeVar("_CudaArrayT", bound=_CudaArray)
_OutArrayT = TypeVar("_OutArrayT", bound=Union[npt.NDArray[Any], _CudaArray])

@overload
def equalize(image: npt.NDArray[_ScalarT], *, out: None = None, matrix: str = "bt601",
             range: str = "full", backend: str = "auto", bit_depth: Optional[SupportsIndex] = None,
             format: Optional[str] = None, temporal: Optional["Temporal"] = None,
             width: Optional[SupportsIndex] = None,
             chroma: str = "keep") -> npt.NDArray[_ScalarT]: ...
@overload
def equalize(image: _CudaArrayT, *, out: None = None, matrix: str = "bt601", range: str = "full",
             backend: str = "auto", bit_depth: Optional[SupportsIndex] = None,
             format: Optional[str] = None, temporal: Optional["Temporal"] = None,
             width: Optional[SupportsIndex] = None, chroma: str = "keep") -> _CudaArrayT: ...
@overload
def equalize(image: Any, *, out: None = None, matrix: str = "bt601", range: str = "full",
             backend: str = "auto", bit_depth: Optional[SupportsIndex] = None,
             format: Optional[str] = None, temporal: Optional["Temporal"] = None,
             width: Optional[SupportsIndex] = None, chroma: str = "keep") -> npt.NDArray[Any]: ...
@overload
def equalize(image: Any, *, out: _OutArrayT, matrix: str = "bt601", range: str = "full",
             backend: str = "auto", bit_depth: Optional[SupportsIndex] = None,
             format: Optional[str] = None, temporal: Optional["Temporal"] = None,
             width: Optional[SupportsIndex] = None, chroma: str = "keep") -> _OutArrayT: ...
@overload
def equalize(image: Any, *, out: Any, matrix: str = "bt601", range: str = "full",
             backend: str = "auto", bit_depth: Optional[SupportsIndex] = None,
             format: Optional[str] = None, temporal: Optional["Temporal"] = None,
             width: Optional[SupportsIndex] = None, chroma: str = "keep") -> Any: ...
@overload
def clahe(image: npt.NDArray[_ScalarT], *, tiles: Sequence[SupportsIndex] = (8, 8),
          clip: float = 40.0, out: None = None, matrix: str = "bt601", range: str = "full",
          backend: str = "auto", bit_depth: Optional[SupportsIndex] = None,
          format: Optional[str] = None, temporal: Optional["Temporal"] = None,
          width: Optional[SupportsIndex] = None, chroma: str = "keep",
          orientation: SupportsIndex = 1) -> npt.NDArray[_ScalarT]: ...
@overload
def clahe(image: _CudaArrayT, *, tiles: Sequence[SupportsIndex] = (8, 8), clip: float = 40.0,
          out: None = None, matrix: str = "bt601", range: str = "full", backend: str = "auto",
          bit_depth: Optional[SupportsIndex] = None, format: Optional[str] = None,
          temporal: Optional["Temporal"] = None, width: Optional[SupportsIndex] = None,
          chroma: str = "keep", orientation: SupportsIndex = 1) -> _CudaArrayT: ...
@overload
def clahe(image: Any, *, tiles: Sequence[SupportsIndex] = (8, 8), clip: float = 40.0,
          out: None = None, matrix: str = "bt601", range: str = "full", backend: str = "auto",
          bit_depth: Optional[SupportsIndex] = None, format: Optional[str] = None,
          temporal: Optional["Temporal"] = None, width: Optional[SupportsIndex] = None,
          chroma: str = "keep", orientation: SupportsIndex = 1) -> npt.NDArray[Any]: ...
@overload
def clahe(image: Any, *, tiles: Sequence[SupportsIndex] = (8, 8), clip: float = 40.0,
          out: _OutArrayT, matrix: str = "bt601", range: str = "full", backend: str = "auto",
          bit_depth: Optional[SupportsIndex] = None, format: Optional[str] = None,
          temporal: Optional["Temporal"] = None, width: Optional[SupportsIndex] = None,
          chroma: str = "keep", orientation: SupportsIndex = 1) -> _OutArrayT: ...
@overload
def clahe(image: Any, *, tiles: Sequence[SupportsIndex] = (8, 8), clip: float = 40.0, out: Any,
          matrix: str = "bt601", range: str = "full", backend: str = "auto",
          bit_depth: Optional[SupportsIndex] = None, format: Optional[str] = None,
          temporal: Optional["Temporal"] = None, width: Optional[SupportsIndex] = None,
          chroma: str = "keep", orientation: SupportsIndex = 1) -> Any: ...
@overload
def apply_lut(image: npt.NDArray[_ScalarT], lut: Any, *, out: None = None, matrix: str = "bt601",
              backend: str = "auto", bit_depth: Optional[SupportsIndex] = None,
              format: Optional[str] = None, width: Optional[SupportsIndex] = None,
              chroma: str = "keep") -> npt.NDArray[_ScalarT]: ...
@overload
def apply_lut(image: _CudaArrayT, lut: Any, *, out: None = None, matrix: str = "bt601",
              backend: str = "auto", bit_depth: Optional[SupportsIndex] = None,
              format: Optional[str] = None, width: Optional[SupportsIndex] = None,
              chroma: str = "keep") -> _CudaArrayT: ...
@overload
def apply_lut(image: Any, lut: Any, *, out: None = None, matrix: str = "bt601",
              backend: str = "auto", bit_depth: Optional[SupportsIndex] = None,
              format: Optional[str] = None, width: Optional[SupportsIndex] = None,
              chroma: str = "keep") -> npt.NDArray[Any]: ...
@overload
def apply_lut(image: Any, lut: Any, *, out: _OutArrayT, matrix: str = "bt601",
              backend: str = "auto", bit_depth: Optional[SupportsIndex] = None,
              format: Optional[str] = None, width: Optional[SupportsIndex] = None,
              chroma: str = "keep") -> _OutArrayT: ...
@overload
def apply_lut(image: Any, lut: Any, *, out: Any, matrix: str = "bt601", backend: str = "auto",
              bit_depth: Optional[SupportsIndex] = None, format: Optional[str] = None,
              width: Optional[SupportsIndex] = None, chroma: str = "keep") -> Any: ...
def lut_from_histogram(histogram: Any, *, range: str = "full") -> npt.NDArray[np.uint16]: ...
@overload
def overlay(image: npt.NDArray[_ScalarT], *, out: None = None,
            rect: Optional[Sequence[SupportsIndex]] = None, opacity: float = 0.8,
            scale: str = "log", markers: bool = True, clipping: bool = True,
            clip_warning: float = 0.005, percentiles: Optional[Iterable[float]] = (5, 95),
            matrix: str = "bt601", range: str = "full", backend: str = "auto",
            bit_depth: Optional[SupportsIndex] = None, format: Optional[str] = None,
            width: Optional[SupportsIndex] = None,
            orientation: SupportsIndex = 1) -> npt.NDArray[_ScalarT]: ...
@overload
def overlay(image: _CudaArrayT, *, out: None = None, rect: Optional[Sequence[SupportsIndex]] = None,
            opacity: float = 0.8, scale: str = "log", markers: bool = True, clipping: bool = True,
            clip_warning: float = 0.005, percentiles: Optional[Iterable[float]] = (5, 95),
            matrix: str = "bt601", range: str = "full", backend: str = "auto",
            bit_depth: Optional[SupportsIndex] = None, format: Optional[str] = None,
            width: Optional[SupportsIndex] = None,
            orientation: SupportsIndex = 1) -> _CudaArrayT: ...
@overload
def overlay(image: Any, *, out: None = None, rect: Optional[Sequence[SupportsIndex]] = None,
            opacity: float = 0.8, scale: str = "log", markers: bool = True, clipping: bool = True,
            clip_warning: float = 0.005, percentiles: Optional[Iterable[float]] = (5, 95),
            matrix: str = "bt601", range: str = "full", backend: str = "auto",
            bit_depth: Optional[SupportsIndex] = None, format: Optional[str] = None,
            width: Optional[SupportsIndex] = None,
            orientation: SupportsIndex = 1) -> npt.NDArray[Any]: ...
@overload
def overlay(image: Any, *, out: _OutArrayT, rect: Optional[Sequence[SupportsIndex]] = None,
            opacity: float = 0.8, scale: str = "log", markers: bool = True, clipping: bool = True,
            clip_warning: float = 0.005, percentiles: Optional[Iterable[float]] = (5, 95),
            matrix: str = "bt601", range: str = "full", backend: str = "auto",
            bit_depth: Optional[SupportsIndex] = None, format: Optional[str] = None,
            width: Optional[SupportsIndex] = None,
            orientation: SupportsIndex = 1) -> _OutArrayT: ...

class DatasetStats(Stats):
    images: int
    # Many images: no one size, nor one backend (None, as the tool's dataset
    # record leaves them out).
    width: None  # type: ignore[assignment]
    height: None  # type: ignore[assignment]
    backend: None  # type: ignore[assignment]

def merge(records: Any, *, percentiles: Optional[Iterable[float]] = None) -> DatasetStats: ...
def device_time() -> Optional[Dict[str, float]]: ...

class Temporal:
    # Shared by threads, its calls run one at a time (a lock); copy.copy,
    # copy.deepcopy and pickle raise TypeError.  window and cut_threshold are
    # read-only: fixed when it is made.
    @property
    def window(self) -> int: ...
    @property
    def cut_threshold(self) -> float: ...
    def __init__(self, window: SupportsIndex = 8, cut_threshold: float = 0.4) -> None: ...
    def reset(self) -> None: ...

@final
class StatsFilesIterator(Iterator[Union[Stats, VideoFrame, VideoSummary]]):
    # Made by stats_files alone, as Stats (its call raises TypeError).
    def __init__(self, _not_constructible: NoReturn, /) -> None: ...
    def __next__(self) -> Union[Stats, VideoFrame, VideoSummary]: ...
    def close(self) -> None: ...

def stats_files(paths: Any, *, jobs: Optional[SupportsIndex] = None,
                matrix: Optional[str] = None, range: Optional[str] = None,
                percentiles: Optional[Iterable[float]] = (1, 5, 50, 95, 99),
                backend: str = "auto", max_pixels: Optional[SupportsIndex] = None,
                errors: str = "warn", decoder: str = "auto", every: SupportsIndex = 1,
                fps: Optional[float] = None,
                start: Optional[float] = None, duration: Optional[float] = None,
                cut_threshold: float = 0.4, video_timeout: float = 30.0, video_memory: str = "cuda",
                fifo_wait: float = 30.0,
                program: Optional[SupportsIndex] = None,
                devices: Union[None, SupportsIndex, Iterable[SupportsIndex]] = None
                ) -> StatsFilesIterator: ...
