"""Runs the Python module's tests under pytest; SKIP (77) with the reason
where pytest or OpenCV is not installed (tests/run.sh installs both)."""
import os
import signal
import sys

try:
    import pytest
except ImportError:
    print("SKIP: pytest is not installed (Debian: python3-pytest)")
    sys.exit(77)
try:
    import cv2  # noqa: F401
except ImportError:
    print("SKIP: OpenCV's Python module is not installed (Debian: python3-opencv)")
    sys.exit(77)

# Ctrl-C as Python's KeyboardInterrupt, and SIGHUP, SIGTERM at their
# defaults, whatever this runner was started with (a job a shell starts in
# the background ignores SIGINT): the tests that send them need them, and
# the tool leaves a stop signal ignored if it starts so.
signal.signal(signal.SIGINT, signal.default_int_handler)
for stop in (signal.SIGTERM, signal.SIGHUP):
    signal.signal(stop, signal.SIG_DFL)

here = os.path.dirname(os.path.abspath(__file__))
sys.exit(pytest.main(["-q", "-p", "no:cacheprovider", here] + sys.argv[1:]))
