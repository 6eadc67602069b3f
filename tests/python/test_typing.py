"""The module as a type checker and an IDE meet it: __init__.pyi agrees with
what runs (mypy's stubtest), so that mypy neither refuses correct code nor
passes code that fails."""
import os
import subprocess
import sys

import pytest

import lumahist


def mypy_or_skip():
    try:
        import mypy  # noqa: F401
    except ImportError:
        pytest.skip("mypy is not installed (Debian: python3-mypy)")


def test_stubtest_finds_the_stubs_true(tmp_path):
    """Every name, signature, class and attribute of the stubs against the
    module that runs: stubtest reports a stub that lies (an attribute the
    stubs let be assigned that raises AttributeError, a class they let be
    subclassed that cannot be)."""
    mypy_or_skip()
    package = os.path.dirname(os.path.dirname(os.path.abspath(lumahist.__file__)))
    run = subprocess.run([sys.executable, "-m", "mypy.stubtest", "lumahist"], cwd=tmp_path,
                         env=dict(os.environ, PYTHONPATH=package), capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr


def stub_tree():
    import ast
    with open(os.path.join(os.path.dirname(lumahist.__file__), "__init__.pyi")) as f:
        return ast.parse(f.read())


def stub_parameters(function):
    """(name, kind, default) of a stub's def: default as its literal, or
    Ellipsis where the stub leaves it out (`= ...`), or None without one."""
    import ast
    a = function.args
    positional = a.posonlyargs + a.args
    defaults = [None] * (len(positional) - len(a.defaults)) + a.defaults
    kinds = (["POSITIONAL_ONLY"] * len(a.posonlyargs) + ["POSITIONAL_OR_KEYWORD"] * len(a.args))
    listed = list(zip(positional, kinds, defaults))
    listed += [(x, "KEYWORD_ONLY", d) for x, d in zip(a.kwonlyargs, a.kw_defaults)]
    return [(x.arg, kind, None if d is None else ast.literal_eval(d)) for x, kind, d in listed]


def test_the_stubs_write_the_defaults_that_run():
    """help() and the runtime have stats(..., matrix='bt601', ...); the stubs,
    which IDEs show, have the same defaults written out (not `= ...`), and
    the same names, order and keyword-only markers, for every function and
    method, so that neither can change without the other."""
    import ast
    import inspect
    tree = stub_tree()
    stubbed = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            # Each of an overloaded function's signatures (equalize's:
            # by the image and out given) lists the runtime's parameters.
            overloads = stubbed.get(node.name, (None, []))[1]
            stubbed[node.name] = (getattr(lumahist, node.name), overloads + [node])
        elif isinstance(node, ast.ClassDef):
            for member in node.body:
                if (isinstance(member, ast.FunctionDef) and not member.decorator_list
                        and member.name in vars(getattr(lumahist, node.name))
                        and member.name != "__next__"):
                    stubbed[node.name + "." + member.name] = (
                        getattr(getattr(lumahist, node.name), member.name), [member])
    assert {"stats", "stats_files", "Stats.to_dict", "Temporal.__init__",
            "StatsFilesIterator.close"} <= set(stubbed)
    assert len(stubbed["equalize"][1]) > 1
    for name, (runtime, stubs) in stubbed.items():
        # (a C method needs a text signature, "close($self, /)\n--\n\n...")
        actual = [(p.name, p.kind.name, None if p.default is p.empty else p.default)
                  for p in inspect.signature(runtime).parameters.values()
                  if p.name != "self"]
        for stub in stubs:
            parameters = stub_parameters(stub)
            if parameters and parameters[0][0] == "self":
                parameters = parameters[1:]
            assert parameters == actual, (name, stub.lineno)


def test_the_stubs_name_what_the_module_exports():
    import ast
    names = set()
    for node in stub_tree().body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.AnnAssign):
            names.add(node.target.id)
    # (less the stubs' own helpers: _CudaArray, a protocol that types alone)
    names = {n for n in names if not n.startswith("_") or n.startswith("__")}
    assert names == set(lumahist.__all__)
    assert set(lumahist.__all__) == {n for n in dir(lumahist) if not n.startswith("_")} | {
        "__version__"}


def readme_python_blocks():
    readme = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "README.md")
    blocks, block = [], None
    with open(readme) as f:
        for line in f:
            if block is None and line.strip() == "```python":
                block = []
            elif block is not None and line.strip() == "```":
                blocks.append("".join(block))
                block = None
            elif block is not None:
                block.append(line)
    return blocks


# What README's examples take as given.
README_PRELUDE = """import numpy
import lumahist
yuy2_bytes = bytes(720 * 1280 * 2)
"""


def test_the_readme_examples_type_check(tmp_path):
    """README's Python examples, as written, pass mypy against the stubs: a
    user who copies one into a typed program gets no error."""
    mypy_or_skip()
    blocks = readme_python_blocks()
    assert len(blocks) >= 2
    package = os.path.dirname(os.path.dirname(os.path.abspath(lumahist.__file__)))
    for i, block in enumerate(blocks):
        program = tmp_path / f"readme_{i}.py"
        program.write_text(README_PRELUDE + block)
        run = subprocess.run([sys.executable, "-m", "mypy", "--ignore-missing-imports",
                              "--cache-dir", str(tmp_path / "cache"), str(program)],
                             cwd=tmp_path, env=dict(os.environ, MYPYPATH=package),
                             capture_output=True, text=True)
        assert run.returncode == 0, block + run.stdout + run.stderr


def test_help_names_every_parameter():
    """help(lumahist.stats) and the rest say what each keyword takes: each
    function's docstring names every one of its parameters."""
    import inspect
    import re
    for name in lumahist.__all__:
        function = getattr(lumahist, name)
        if not inspect.isfunction(function):
            continue
        assert function.__doc__, name
        for parameter in inspect.signature(function).parameters:
            assert re.search(r"\b%s\b" % parameter, function.__doc__), (name, parameter)


# Calls the module takes (its tests make them: tiles=[3, 2], NumPy integers
# for tiles and orientation; percentiles from any iterable, a NumPy array's
# too), which the stubs must take too.
ACCEPTED_CALLS = """import numpy as np
import lumahist
image = np.zeros((16, 24), np.uint16)
lumahist.clahe(image, tiles=[3, 2], backend="cpu")
lumahist.clahe(image, tiles=(np.int64(3), np.uint8(2)), backend="cpu")
lumahist.stats(image, roi=[0, 0, 4, 4], bit_depth=np.int64(10), backend="cpu")
lumahist.overlay(image, rect=[0, 0, 12, 8], orientation=np.int64(6), backend="cpu")
lumahist.stats(np.zeros((6, 8), np.uint8), format="NV12", width=np.int32(7), backend="cpu")
lumahist.Temporal(np.int64(3))
s = lumahist.stats(image, percentiles=np.linspace(1, 99, 9), backend="cpu")
lumahist.overlay(image, percentiles=np.array([5, 95]), backend="cpu")
lumahist.merge([s], percentiles=(p for p in (50, 90)))
"""


def test_what_runs_type_checks(tmp_path):
    """Integers as the module reads them (operator.index: NumPy's too) and
    sequences where it takes a list: mypy refused tiles=[3, 2] and
    orientation=np.int64(6), which run."""
    mypy_or_skip()
    program = tmp_path / "accepted.py"
    program.write_text(ACCEPTED_CALLS)
    package = os.path.dirname(os.path.dirname(os.path.abspath(lumahist.__file__)))
    exec(compile(ACCEPTED_CALLS, str(program), "exec"), {})
    run = subprocess.run([sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path / "cache"),
                          str(program)], cwd=tmp_path, env=dict(os.environ, MYPYPATH=package),
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr


def test_the_readme_examples_run(tmp_path, monkeypatch):
    """README's Python examples, as written, on a photo of samples/ and a
    folder of them (clip.mp4, absent here, is a warning and left out)."""
    import shutil
    import warnings
    pytest.importorskip("cv2")
    samples = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "samples")
    shutil.copy(os.path.join(samples, "rocket-pad-dusk.jpg"), tmp_path / "photo.jpg")
    (tmp_path / "shots").mkdir()
    shutil.copy(os.path.join(samples, "fog-pier-gray.jpg"), tmp_path / "shots")
    monkeypatch.chdir(tmp_path)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "clip.mp4", RuntimeWarning)
        for block in readme_python_blocks():
            exec(compile(README_PRELUDE + block, "README.md", "exec"), {})


def test_help_describes_every_class_and_method():
    """Each public class, method and property has a docstring of its own
    (DatasetStats.to_dict showed Stats', "without path and decoder for an
    array", where the dataset record has path None)."""
    import inspect
    for name in lumahist.__all__:
        cls = getattr(lumahist, name)
        if not isinstance(cls, type):
            continue
        assert cls.__doc__, name
        for member, value in vars(cls).items():
            if not member.startswith("_") and (inspect.isroutine(value)
                                               or isinstance(value, property)):
                assert value.__doc__, name + "." + member


def result_of(kind, tmp_path):
    """A result of each class the module's calls return, with every field
    its kind has (an image file's path and decoder; a video's frame and
    summary, skipped where this lumahist reads no videos)."""
    import warnings
    import numpy as np
    image = np.arange(48 * 64, dtype=np.uint32).reshape(48, 64).astype(np.uint8)
    if kind == "Stats":
        return lumahist.stats(image, backend="cpu")
    if kind == "Stats of a file":
        path = tmp_path / "gray.png"
        assert pytest.importorskip("cv2").imwrite(str(path), image)
        return next(iter(lumahist.stats_files([str(path)], backend="cpu", errors="raise")))
    if kind == "DatasetStats":
        return lumahist.merge([lumahist.stats(image, backend="cpu")])
    # A raw YUV4MPEG2 clip: GStreamer reads it without a decoder.
    path = tmp_path / "clip.y4m"
    with open(path, "wb") as f:
        f.write(b"YUV4MPEG2 W64 H48 F25:1 Ip A1:1 C444\n")
        for i in range(3):
            f.write(b"FRAME\n" + (image + i).tobytes() + bytes([128]) * (2 * image.size))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        records = list(lumahist.stats_files([str(path)], backend="cpu"))
    wanted = [r for r in records if type(r).__name__ == kind]
    if not wanted:
        pytest.skip("this lumahist reads no videos (built without GStreamer)")
    return wanted[0]


@pytest.mark.parametrize("kind", ["Stats", "Stats of a file", "DatasetStats", "VideoFrame",
                                  "VideoSummary"])
def test_help_describes_every_field(kind, tmp_path):
    """help(lumahist.Stats) (pydoc) says what each field of a result is: each
    key of its to_dict() record and each public attribute of its class has
    a docstring of its own (not its type's, as a plain class attribute or
    an undocumented descriptor has), and pydoc's text of the class shows
    it.  A key that is no attribute (the dataset record's "dataset": True)
    is named by to_dict's own doc instead."""
    import inspect
    import pydoc
    result = result_of(kind, tmp_path)
    cls = type(result)
    text = pydoc.render_doc(cls, renderer=pydoc.plaintext)
    names = set(result.to_dict())
    names |= {n for n in dir(cls) if not n.startswith("_")
              and not inspect.isroutine(inspect.getattr_static(cls, n))}
    assert {"mean", "histogram", "percentiles", "summary"} <= names
    for name in sorted(names):
        if not hasattr(result, name):
            assert name in cls.to_dict.__doc__, (kind, name)
            continue
        descriptor = inspect.getattr_static(cls, name, None)
        doc = inspect.getdoc(descriptor) if descriptor is not None else None
        assert doc and doc != inspect.getdoc(type(descriptor)), (kind, name)
        for line in doc.splitlines():
            assert line.strip() in text, (kind, name, line)


# Each of these raises TypeError ("cannot create 'Stats' instances"): results
# come from the module's calls alone.
UNCONSTRUCTIBLE_CALLS = [
    "lumahist.Stats()", "lumahist.DatasetStats()", "lumahist.VideoFrame()",
    "lumahist.VideoSummary()", "lumahist.StatsFilesIterator()",
    "lumahist.Stats(lumahist.stats(memoryview(b'\\0').cast('B', (1, 1))))"]


def test_results_cannot_be_constructed_and_mypy_says_so(tmp_path):
    """The result types raise TypeError when called, and mypy refuses those
    calls (the stubs let lumahist.Stats() be written), while the same
    program's uses of the types pass."""
    mypy_or_skip()
    for call in UNCONSTRUCTIBLE_CALLS:
        with pytest.raises(TypeError):
            eval(call, {"lumahist": lumahist})
    program = tmp_path / "construct.py"
    uses = ["import lumahist", "def mean(s: lumahist.Stats) -> float:",
            "    return s.mean if isinstance(s, lumahist.Stats) else 0.0"]
    program.write_text("\n".join(uses + UNCONSTRUCTIBLE_CALLS) + "\n")
    package = os.path.dirname(os.path.dirname(os.path.abspath(lumahist.__file__)))
    run = subprocess.run([sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path / "cache"),
                          str(program)], cwd=tmp_path, env=dict(os.environ, MYPYPATH=package),
                         capture_output=True, text=True)
    refused = {int(line.split(":")[1]) for line in run.stdout.splitlines()
               if line.startswith(program.name + ":") and ": error:" in line}
    assert refused == set(range(len(uses) + 1, len(uses) + len(UNCONSTRUCTIBLE_CALLS) + 1)), (
        run.stdout + run.stderr)


# What equalize, clahe, apply_lut and overlay return, as the stubs type it:
# a NumPy array of the image's element type, a CUDA array of the image's
# type, a NumPy array for another buffer, out itself when given (Any for an
# out that is no array of either kind).
RETURN_TYPES = """from typing import Any, Dict
import numpy as np
import numpy.typing as npt
from typing_extensions import assert_type
import lumahist


class DeviceArray:  # as CuPy's and PyTorch's arrays are typed
    __cuda_array_interface__: Dict[str, Any]


def check(gray: npt.NDArray[np.uint8], deep: npt.NDArray[np.uint16], device: DeviceArray,
          buffer: memoryview, lut: npt.NDArray[np.uint16]) -> None:
"""
for _call in ("lumahist.equalize({})", "lumahist.clahe({})", "lumahist.overlay({})",
              "lumahist.apply_lut({}, lut)"):
    for _arguments, _type in (("gray", "npt.NDArray[np.uint8]"), ("deep", "npt.NDArray[np.uint16]"),
                              ("device", "DeviceArray"), ("buffer", "npt.NDArray[Any]"),
                              ("gray, out=deep", "npt.NDArray[np.uint16]"),
                              ("device, out=device", "DeviceArray"),
                              ("buffer, out=buffer", "Any")):
        _image, _, _out = _arguments.partition(", ")
        _written = _call.format(_image)
        if _out:
            _written = _written[:-1] + ", " + _out + ")"
        # overlay's out must be an array (its check reads shape and dtype).
        _refused = "overlay" in _call and _out == "out=buffer"
        RETURN_TYPES += (f"    {_written}  # type: ignore[call-overload]\n" if _refused
                         else f"    assert_type({_written}, {_type})\n")


def test_rewrites_return_what_the_stubs_say(tmp_path):
    """The stubs type the rewrites' results (they said Any): mypy checks each
    case's type (and refuses overlay's out= of no array, which raises), and
    the calls on host arrays return those types here."""
    import numpy as np
    mypy_or_skip()
    program = tmp_path / "returns.py"
    program.write_text(RETURN_TYPES)
    package = os.path.dirname(os.path.dirname(os.path.abspath(lumahist.__file__)))
    run = subprocess.run([sys.executable, "-m", "mypy", "--warn-unused-ignores", "--cache-dir",
                          str(tmp_path / "cache"), str(program)], cwd=tmp_path,
                         env=dict(os.environ, MYPYPATH=package), capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    gray = np.arange(64 * 48, dtype=np.uint32).reshape(48, 64).astype(np.uint8)
    deep = gray.astype(np.uint16) << 2
    buffer = memoryview(gray.tobytes()).cast("B", gray.shape)
    identity = np.arange(256, dtype=np.uint16)
    rewrites = [lumahist.equalize, lumahist.clahe, lumahist.overlay,
                lambda image, **kw: lumahist.apply_lut(image, identity, **kw)]
    for rewrite in rewrites:
        for image, dtype in ((gray, np.uint8), (deep, np.uint16), (buffer, np.uint8)):
            bit_depth = 10 if image is deep else None
            if rewrite is rewrites[3] and image is deep:
                continue  # its LUT has 2^10 entries
            got = rewrite(image, bit_depth=bit_depth, backend="cpu")
            assert type(got) is np.ndarray and got.dtype == dtype
        out = np.empty_like(gray)
        assert rewrite(gray, out=out, backend="cpu") is out
        writable = memoryview(bytearray(gray.tobytes())).cast("B", gray.shape)
        if rewrite is lumahist.overlay:
            with pytest.raises(lumahist.InvalidArgumentError):
                rewrite(buffer, out=writable, backend="cpu")
        else:
            assert rewrite(buffer, out=writable, backend="cpu") is writable
