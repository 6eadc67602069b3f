from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple, Union, final

import numpy as np
import numpy.typing as npt

__version__: str
FORMATS: Tuple[str, ...]

class Error(Exception):
    status: int
    def __init__(self, message: str, status: int = ...) -> None: ...

class InvalidArgumentError(Error, ValueError): ...
class UnsupportedError(Error): ...
class OutOfMemoryError(Error, MemoryError): ...
class NoDeviceError(Error): ...
class CudaError(Error): ...

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
    def to_dict(self, histogram: bool = ...) -> Dict[str, Any]: ...

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

def stats(image: Any, *, matrix: str = ..., range: str = ...,
          percentiles: Optional[Sequence[float]] = ...,
          roi: Optional[Tuple[int, int, int, int]] = ..., backend: str = ...,
          bit_depth: Optional[int] = ..., format: Optional[str] = ...,
          width: Optional[int] = ...) -> Stats: ...
def equalize(image: Any, *, out: Any = ..., matrix: str = ..., range: str = ...,
             backend: str = ..., bit_depth: Optional[int] = ...,
             format: Optional[str] = ..., temporal: Optional["Temporal"] = ...,
             width: Optional[int] = ..., chroma: str = ...) -> Any: ...
def clahe(image: Any, *, tiles: Tuple[int, int] = ..., clip: float = ..., out: Any = ...,
          matrix: str = ..., range: str = ..., backend: str = ...,
          bit_depth: Optional[int] = ..., format: Optional[str] = ...,
          temporal: Optional["Temporal"] = ..., width: Optional[int] = ...,
          chroma: str = ...) -> Any: ...
def apply_lut(image: Any, lut: Any, *, out: Any = ..., matrix: str = ..., backend: str = ...,
              bit_depth: Optional[int] = ..., format: Optional[str] = ...,
              width: Optional[int] = ..., chroma: str = ...) -> Any: ...
def lut_from_histogram(histogram: Any, *, range: str = ...) -> npt.NDArray[np.uint16]: ...
def overlay(image: Any, *, out: Any = ..., rect: Optional[Tuple[int, int, int, int]] = ...,
            opacity: float = ..., scale: str = ..., markers: bool = ..., clipping: bool = ...,
            clip_warning: float = ..., percentiles: Optional[Sequence[float]] = ...,
            matrix: str = ..., range: str = ..., backend: str = ...,
            bit_depth: Optional[int] = ..., format: Optional[str] = ...,
            width: Optional[int] = ..., orientation: int = ...) -> Any: ...

class DatasetStats(Stats):
    images: int
    # Many images: no one size, nor one backend (None, as the tool's dataset
    # record leaves them out).
    width: None  # type: ignore[assignment]
    height: None  # type: ignore[assignment]
    backend: None  # type: ignore[assignment]

def merge(records: Any, *, percentiles: Optional[Sequence[float]] = ...) -> DatasetStats: ...
def device_time() -> Optional[Dict[str, float]]: ...

class Temporal:
    # Shared by threads, its calls run one at a time (a lock); copy.copy,
    # copy.deepcopy and pickle raise TypeError.
    window: int
    cut_threshold: float
    def __init__(self, window: int = ..., cut_threshold: float = ...) -> None: ...
    def reset(self) -> None: ...

@final
class StatsFilesIterator(Iterator[Union[Stats, VideoFrame, VideoSummary]]):
    def __next__(self) -> Union[Stats, VideoFrame, VideoSummary]: ...
    def close(self) -> None: ...

def stats_files(paths: Any, *, jobs: Optional[int] = ..., matrix: Optional[str] = ...,
                range: Optional[str] = ..., percentiles: Optional[Sequence[float]] = ...,
                backend: str = ..., max_pixels: Optional[int] = ..., errors: str = ...,
                decoder: str = ..., every: int = ..., fps: Optional[float] = ...,
                start: float = ..., duration: Optional[float] = ..., cut_threshold: float = ...,
                video_timeout: float = ..., video_memory: str = ...) -> StatsFilesIterator: ...
