"""CUDA arrays (CuPy, PyTorch) through __cuda_array_interface__: the same
numbers as the NumPy arrays they were copied from, results written on the
device, no frame copied over the host link (the context's device-time
counters), and work queued on the producer's stream.  Skipped, with the
reason, without CuPy or PyTorch and a CUDA device."""
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
    assert np.array_equal(out.cpu().numpy(), lumahist.clahe(host, backend="cpu"))


def test_device_array_on_the_cpu_backend_is_refused():
    cupy = cupy_or_skip()
    with pytest.raises(lumahist.UnsupportedError):
        lumahist.stats(cupy.zeros((8, 8), cupy.uint8), backend="cpu")
