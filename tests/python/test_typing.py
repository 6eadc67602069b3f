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
