"""CUDA arrays (CuPy, PyTorch) through __cuda_array_interface__: the same
numbers as the NumPy arrays they were copied from, results written on the
device, no frame copied over the host link (the context's device-time
counters), and work queued on the producer's stream.  Skipped, with the
reason, without CuPy or PyTorch and a CUDA device."""
import threading

import numpy as np
import pytest

import lumahist


def photo(height, width, seed, channels=None):
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:height, 0:width]
    base = (x / (width - 1) * 0.6 + y / (height - 1) * 0.4) * 255
    shape = (height, width) if channels is None else (height, width, channels)
    if channels is not None:
        base = base[..., None]
    return np.clip(base + rng.normal(0, 12, shape), 0, 255).astype(np.uint8)


def cupy_or_skip():
    cupy = pytest.importorskip("cupy")
    try:
        if cupy.cuda.runtime.getDeviceCount() < 1:
            pytest.skip("no CUDA device")
    except Exception as e:  # no driver
        pytest.skip(f"no CUDA device: {e}")
    return cupy


def torch_or_skip():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch sees no CUDA device")
    return torch


@pytest.mark.parametrize("channels", [None, 3])
def test_cupy_arrays_give_numpys_numbers_without_copies(channels):
    cupy = cupy_or_skip()
    host = photo(2160, 3840, 1, channels)
    device = cupy.asarray(host)
    lumahist.stats(device)  # makes this thread's CUDA context
    before = lumahist.device_time()
    got = lumahist.stats(device)
    after = lumahist.device_time()
    want = lumahist.stats(host, backend="cpu")
    assert got.backend == "cuda"
    assert np.array_equal(got.histogram, want.histogram) and got.percentiles == want.percentiles
    assert after["transfer_bytes"] == before["transfer_bytes"], "the frame crossed the host link"
    out = lumahist.equalize(device)
    assert isinstance(out, cupy.ndarray)
    assert np.array_equal(cupy.asnumpy(out), lumahist.equalize(host, backend="cpu"))


def test_torch_tensors_on_their_stream():
    torch = torch_or_skip()
    host = photo(1080, 1920, 2)
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        tensor = torch.from_numpy(host).cuda()
        got = lumahist.stats(tensor)  # queued after the copy on the same stream
        out = lumahist.clahe(tensor)
    stream.synchronize()
    assert np.array_equal(got.histogram, lumahist.stats(host, backend="cpu").histogram)
    assert isinstance(out, torch.Tensor) and out.is_cuda  # the stubs: the image's type
    assert np.array_equal(out.cpu().numpy(), lumahist.clahe(host, backend="cpu"))


def test_device_array_on_the_cpu_backend_is_refused():
    cupy = cupy_or_skip()
    with pytest.raises(lumahist.UnsupportedError):
        lumahist.stats(cupy.zeros((8, 8), cupy.uint8), backend="cpu")


def frame_of(name, height, width, seed):
    """A random host frame of format name, as the module holds it (see
    test_formats.py for the layouts checked byte by byte on the CPU)."""
    rng = np.random.default_rng(seed)
    if name == "NV12":
        return rng.integers(0, 256, (height * 3 // 2, width), dtype=np.uint8)
    if name == "P010":
        return (rng.integers(0, 1024, (height * 3 // 2, width)) << 6).astype(np.uint16)
    if name == "I420_10LE":
        return rng.integers(0, 1024, (height * 3 // 2, width)).astype(np.uint16)
    if name == "Y444_12LE":
        return rng.integers(0, 4096, (3 * height, width)).astype(np.uint16)
    if name == "YUY2":
        return rng.integers(0, 256, (height, width, 2), dtype=np.uint8)
    if name == "RGB10A2_LE":
        return rng.integers(0, 1 << 32, (height, width), dtype=np.uint32)
    if name == "v210":  # rows of whole groups: 16 bytes for each 6 pixels
        return rng.integers(0, 256, (height, -(-width // 6) * 16), dtype=np.uint8)
    return rng.integers(0, 1 << 16, (height, width, 4), dtype=np.uint16)  # BGRA16


@pytest.mark.parametrize("name", ["NV12", "P010", "I420_10LE", "Y444_12LE", "YUY2", "RGB10A2_LE",
                                  "BGRA16", "v210"])
def test_cupy_arrays_of_every_layout_give_numpys_numbers(name):
    cupy = cupy_or_skip()
    host = frame_of(name, 270, 480, 4)
    device = cupy.asarray(host)
    got = lumahist.stats(device, format=name)
    want = lumahist.stats(host, format=name, backend="cpu")
    assert got.backend == "cuda" and got.bit_depth == want.bit_depth
    assert np.array_equal(got.histogram, want.histogram) and got.percentiles == want.percentiles
    out = lumahist.equalize(device, format=name)
    assert np.array_equal(cupy.asnumpy(out), lumahist.equalize(host, format=name, backend="cpu"))


@pytest.mark.parametrize("width", [479, 476, 475])
def test_cupy_v210_with_a_partial_last_group(width):
    cupy = cupy_or_skip()
    host = frame_of("v210", 61, width, 6)
    device = cupy.asarray(host)
    got = lumahist.stats(device, format="v210", width=width)
    want = lumahist.stats(host, format="v210", width=width, backend="cpu")
    assert got.backend == "cuda" and got.count == 61 * width
    assert np.array_equal(got.histogram, want.histogram) and got.percentiles == want.percentiles
    for rewrite in (lumahist.equalize, lumahist.clahe):
        out = rewrite(device, format="v210", width=width)
        assert np.array_equal(cupy.asnumpy(out), rewrite(host, format="v210", width=width,
                                                         backend="cpu"))


def test_cupy_slices_whose_chroma_lies_outside_are_refused():
    cupy = cupy_or_skip()
    device = cupy.asarray(frame_of("NV12", 64, 96, 5))
    with pytest.raises(lumahist.InvalidArgumentError, match="whole rows with width="):
        lumahist.stats(device[:, :80], format="I420")
    assert lumahist.stats(device[:, :80], format="NV12").width == 80


def test_cupy_out_overlapping_the_image_is_refused():
    """On the device an out that overlaps the image without being it is
    refused (a host array is read from a copy); out=image works in place."""
    cupy = cupy_or_skip()
    host = photo(48, 52, 6)
    device = cupy.asarray(host)
    with pytest.raises(lumahist.InvalidArgumentError, match="overlaps"):
        lumahist.equalize(device[0:40], out=device[5:45])
    assert np.array_equal(cupy.asnumpy(device), host), "written before the refusal"
    lumahist.equalize(device, out=device)
    assert np.array_equal(cupy.asnumpy(device), lumahist.equalize(host, backend="cpu"))


def test_cupy_results_and_the_timed_c_call_copy_no_frame():
    """A device array's result is the NumPy one field for field, and the C
    call alone that python-bench.py compares it with (analyze_times) runs on
    the same context without a copy of the frame either."""
    cupy = cupy_or_skip()
    host = photo(540, 960, 7, 3)
    device = cupy.asarray(host)
    got = lumahist.stats(device, percentiles=(0.5, 50, 99.5))
    want = lumahist.stats(host, percentiles=(0.5, 50, 99.5), backend="cpu")
    assert got.backend == "cuda"
    got_record, want_record = got.to_dict(), want.to_dict()
    got_record.pop("backend"), want_record.pop("backend")
    assert got_record == want_record
    before = lumahist.device_time()
    seconds = lumahist._lumahist.analyze_times(device, 5)
    after = lumahist.device_time()
    assert len(seconds) == 5 and all(0 < t < 1 for t in seconds)
    assert after["calls"] == before["calls"] + 5
    assert after["transfer_bytes"] == before["transfer_bytes"], "the frame crossed the host link"


def test_a_threads_cuda_context_ends_with_it():
    """A thread's CUDA context (its device copy of host frames: 8 MB for a
    4K gray frame, and as much pinned) is freed when the thread ends."""
    cupy = cupy_or_skip()
    image = photo(2160, 3840, 8)

    def one():
        thread = threading.Thread(target=lambda: lumahist.stats(image, backend="cuda"))
        thread.start()
        thread.join()

    one()
    # The device's free memory is every process's: a GPU test running beside
    # this one (meson runs them in parallel) can take hundreds of MB for a
    # while.  Kept contexts would take 24 x 8 MB in every round, so the
    # smallest of three rounds' growth must stay small.
    growth = []
    for _ in range(3):
        free_before, _ = cupy.cuda.runtime.memGetInfo()
        for _ in range(24):
            one()
        free_after, _ = cupy.cuda.runtime.memGetInfo()
        growth.append(free_before - free_after)
        if growth[-1] < 64 << 20:
            break
    assert min(growth) < 64 << 20, f"the threads' contexts stayed on the device: {growth} bytes"


def two_devices_or_skip(module):
    count = (module.cuda.runtime.getDeviceCount() if module.__name__ == "cupy"
             else module.cuda.device_count())
    if count < 2:
        pytest.skip(f"needs two CUDA devices ({count} found)")


@pytest.mark.parametrize("current", [0, 1])
def test_cupy_arrays_on_either_device_whichever_is_current(current):
    """An array in device 1's memory is read by a context made there, with
    device 0 current too; before, it was read on device 0's context (an
    illegal address that ended CUDA in the process), and a context made on
    device 1 then failed for device 0's arrays."""
    cupy = cupy_or_skip()
    two_devices_or_skip(cupy)
    host = photo(1081, 1921, 9, 3)
    want = lumahist.stats(host, backend="cpu")
    want_equalized = lumahist.equalize(host, backend="cpu")
    arrays = []
    for device in (1, 0):
        with cupy.cuda.Device(device):
            arrays.append((device, cupy.asarray(host)))
    with cupy.cuda.Device(current):
        for device, array in arrays:
            got = lumahist.stats(array)
            assert got.backend == "cuda"
            assert np.array_equal(got.histogram, want.histogram), f"device {device}"
            assert got.percentiles == want.percentiles
            out = lumahist.equalize(array)
            assert out.device.id == device
            assert np.array_equal(cupy.asnumpy(out), want_equalized), f"device {device}"
            assert cupy.cuda.runtime.getDevice() == current
    cupy.cuda.runtime.deviceSynchronize()


def test_torch_set_device_sends_host_arrays_there_and_tensors_stay_on_theirs():
    torch = torch_or_skip()
    two_devices_or_skip(torch)
    host = photo(720, 1280, 10)
    want = lumahist.stats(host, backend="cpu")
    before = torch.cuda.current_device()
    try:
        torch.cuda.set_device(1)
        calls = (lumahist.device_time() or {}).get("calls", 0)
        got = lumahist.stats(host, backend="cuda")
        assert np.array_equal(got.histogram, want.histogram)
        assert lumahist.device_time()["calls"] == calls + 1, "not on device 1's context"
        on0 = torch.from_numpy(host).to("cuda:0")
        assert np.array_equal(lumahist.stats(on0).histogram, want.histogram)
        out = lumahist.equalize(on0)
        assert out.device == on0.device
        assert np.array_equal(out.cpu().numpy(), lumahist.equalize(host, backend="cpu"))
        assert torch.cuda.current_device() == 1
    finally:
        torch.cuda.set_device(before)


def test_threads_one_per_device():
    torch = torch_or_skip()
    two_devices_or_skip(torch)
    host = photo(1080, 1920, 11, 3)
    want = lumahist.stats(host, backend="cpu")
    results = {}

    def work(device):
        torch.cuda.set_device(device)
        tensor = torch.from_numpy(host).cuda()
        try:
            results[device] = all(np.array_equal(lumahist.stats(tensor).histogram, want.histogram)
                                  for _ in range(20))
        except Exception as e:  # reported below
            results[device] = repr(e)

    threads = [threading.Thread(target=work, args=(d,)) for d in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == {0: True, 1: True}
