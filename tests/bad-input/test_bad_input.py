#!/usr/bin/env python3
"""test_bad_input.py: bad files through the real CLI.

  test_bad_input.py LUMAHIST CORPUS GROUP [--sanitized] [--decoder auto|cpu|gpu]

GROUP is one of:
  stats      a folder of bad files next to good ones: one clear line each,
             exit 1, every good file still processed, no hang (under
             valgrind too when the build is not sanitized and valgrind is there)
  limits     --max-pixels: refused above the limit before any allocation
  special    a FIFO (its writer late, silent or missing), /proc/self/mem and
             unreadable files named on the command line
  rewrite    the same bad folder through equalize/clahe/overlay --out: no output
             and no temporary file for a bad input, inputs never overwritten
             (also with --out the input folder)
  outputs    read-only, full and unusable output folders (said once, before
             any input is read; a full disk stops the run), --report into a
             missing folder (said before the run), stdout on /dev/full (the
             records, --help and --version)
CORPUS is tests/fuzz/corpus (valid tiny PNGs and JPEGs).  --decoder is passed
to every `lumahist stats` run and to equalize, clahe and overlay.  With
--decoder gpu the bad files must be reported exactly as
on the CPU: the tool gives libjpeg-turbo what nvJPEG is not given or fails on,
so the reasons are libjpeg-turbo's; the good JPEGs must say an nvjpeg decoder.
Only the Python standard library is used.  Exit 77 (skip) says why when a
group cannot run (with --decoder gpu: when `lumahist stats --decoder gpu`
does not work on a good JPEG here).
"""
import hashlib
import json
import os
import pty
import re
import shutil
import signal
import stat
import struct
import subprocess
import sys
import tempfile
import threading
import time
import zlib

TIMEOUT = 60
failures = []
DECODER = None  # --decoder for every stats run, or None for the tool's default
# Whether stats decodes JPEGs with nvJPEG in this run (--decoder gpu, or the
# default where nvJPEG and a device are usable).  nvJPEG's hardware decoder
# does not report damaged entropy-coded data (a Huffman code no table has):
# it decodes what it reads, so such a file is left out of the bad set then,
# with a note; the README says so.
NVJPEG_DECODES = False


def stats_argv(tool, *args):
    """A `lumahist stats` command line with the --decoder under test."""
    return [tool, "stats"] + (["--decoder", DECODER] if DECODER else []) + list(args)


def rewrite_argv(tool, command, *args):
    """equalize, clahe or overlay, with the --decoder under test."""
    extra = ["--decoder", DECODER] if DECODER else []
    return [tool, command] + extra + list(args)


def check(condition, message):
    if not condition:
        failures.append(message)
        print("FAIL:", message, file=sys.stderr)
    return condition


def run(argv, timeout=TIMEOUT, **kwargs):
    """Runs argv; a hang is a failure, not a stuck test."""
    try:
        p = subprocess.run(argv, capture_output=True, timeout=timeout, **kwargs)
    except subprocess.TimeoutExpired:
        check(False, f"timed out after {timeout} s: {argv}")
        return 124, "", ""
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


# ---- bad files -----------------------------------------------------------------

def chunk(kind, data):
    body = kind + data
    return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))


def png(width, height, rows=None, depth=8, colour=0, compressed=None):
    """A PNG; rows default to a gradient of gray bytes."""
    if compressed is None:
        if rows is None:
            rows = [bytes((x * 7 + y * 3) % 256 for x in range(width)) for y in range(height)]
        compressed = zlib.compress(b"".join(b"\0" + r for r in rows))
    ihdr = struct.pack(">IIBBBBB", width, height, depth, colour, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", compressed) +
            chunk(b"IEND", b""))


def noise_png(width, height):
    """An RGB PNG of incompressible noise: about 3 bytes a pixel on disk."""
    rows = [os.urandom(3 * width) for _ in range(height)]
    return png(width, height, rows, colour=2)


def marker(data, code, start=2):
    i = data.index(bytes([0xFF, code]), start)
    return i


def entropy_start(jpeg):
    sos = marker(jpeg, 0xDA)
    return sos + 2 + ((jpeg[sos + 2] << 8) | jpeg[sos + 3])


def with_sof_size(jpeg, width, height):
    sof = marker(jpeg, 0xC0)
    b = bytearray(jpeg)
    b[sof + 5:sof + 9] = struct.pack(">HH", height, width)
    return bytes(b)


def make_bad_set(top, corpus):
    """Writes good and bad files under top; returns (good paths, {bad path: reason words})."""
    os.makedirs(os.path.join(top, "sub", "deeper"))
    good_jpeg = open(os.path.join(corpus, "jpeg", "420.jpg"), "rb").read()
    good = {
        "a-good.png": png(13, 7),
        "sub/b-good.jpg": good_jpeg,
        "sub/deeper/c-good16.png": open(os.path.join(corpus, "png", "gray16.png"), "rb").read(),
        "d-progressive.jpg": open(os.path.join(corpus, "jpeg", "progressive.jpg"), "rb").read(),
    }
    whole = png(13, 7)
    idat = whole.index(b"IDAT")
    idat_end = idat + 4 + struct.unpack(">I", whole[idat - 4:idat])[0]
    crc = bytearray(whole)
    crc[idat_end] ^= 0xFF  # the CRC itself: the data inflates fine
    flipped = bytearray(whole)
    flipped[idat + 6] ^= 0x40  # a deflate byte: zlib sees it before the CRC check
    ihdr_crc = bytearray(whole)
    ihdr_crc[29] ^= 0xFF
    # A valid CRC over deflate data that is not deflate data.
    bad_zlib = png(13, 7, compressed=b"\x78\x9c" + b"\xff" * 40)
    start = entropy_start(good_jpeg)
    # A run of 1 bits longer than any Huffman code (0xFF is stuffed as FF 00).
    huffman = good_jpeg[:start + 6] + b"\xff\x00" * 4 + good_jpeg[start + 14:]
    dht = marker(good_jpeg, 0xC4)
    # A progressive file without its first scan (the DC coefficients): the
    # scans after it do not follow on, which libjpeg only warns about, and the
    # image decoded to another mean (129 for 109).  Its entropy-coded data
    # holds no marker, so the scan ends at the next segment (a table or a scan).
    progressive = open(os.path.join(corpus, "jpeg", "progressive.jpg"), "rb").read()
    first_scan = marker(progressive, 0xDA)
    after_first_scan = min(i for i in (progressive.find(b"\xff\xc4", first_scan + 2),
                                       progressive.find(b"\xff\xda", first_scan + 2)) if i >= 0)
    no_dc_scan = progressive[:first_scan] + progressive[after_first_scan:]
    bad_table = bytearray(good_jpeg)
    bad_table[dht + 5:dht + 21] = b"\xff" * 16  # code counts summing far above 256
    bad = {
        "e-empty.png": (b"", ["empty"]),
        "sub/f-empty.jpg": (b"", ["empty"]),
        "g-magic-only.png": (whole[:5], ["truncated"]),
        "h-truncated.png": (whole[:len(whole) // 2], ["truncated"]),
        "i-no-iend.png": (whole[:-12], ["truncated"]),
        "j-truncated.jpg": (good_jpeg[:start + 40], ["truncated"]),
        "k-crc.png": (bytes(crc), ["crc"]),
        "k-idat-data.png": (bytes(flipped), ["invalid", "crc", "incorrect"]),
        "l-ihdr-crc.png": (bytes(ihdr_crc), ["crc"]),
        "m-bad-deflate.png": (bad_zlib, ["invalid", "incorrect", "crc"]),
        "n-huffman.jpg": (huffman, ["huffman"]) if not NVJPEG_DECODES else None,
        "o-huffman-table.jpg": (bytes(bad_table), ["huffman"]),
        "o-no-dc-scan.jpg": (no_dc_scan, ["progression"]) if not NVJPEG_DECODES else None,
        # Other images are named in the line: pictures saved from the web as
        # .jpg are often WebP or AVIF, and phones save HEIC.
        "p-wrong-magic.png": (b"GIF89a\x01\x00\x01\x00\x00\x00\x00;",
                              ["not a png or jpeg file but a gif image"]),
        "p-webp.jpg": (b"RIFF\x1a\x00\x00\x00WEBPVP8L\x0d\x00\x00\x00\x2f" + bytes(13),
                       ["not a png or jpeg file but a webp image"]),
        "p-heic.jpg": (b"\x00\x00\x00\x18ftypheic\x00\x00\x00\x00mif1heic" + bytes(40),
                       ["not a png or jpeg file but a heif image (heic)"]),
        "sub/p-avif.png": (b"\x00\x00\x00\x1cftypavif\x00\x00\x00\x00avifmif1miaf" + bytes(40),
                           ["not a png or jpeg file but an avif image"]),
        "p-tiff.jpg": (b"II*\x00\x08\x00\x00\x00" + bytes(60),
                       ["not a png or jpeg file but a tiff image"]),
        "p-bmp.jpg": (b"BM\x46\x00\x00\x00\x00\x00\x00\x00\x36\x00\x00\x00\x28" + bytes(55),
                      ["not a png or jpeg file but a bmp image"]),
        "q-text.jpg": (b"this is not an image\n" * 8, ["not a png or jpeg"]),
        "r-jpeg-no-marker.jpg": (b"\xff\xd8\x00\x00" + good_jpeg[4:], ["not a png or jpeg"]),
        "s-huge.png": (png(100000, 100000, compressed=zlib.compress(b"\0" * 64)),
                       ["above the limit", "100000x100000"]),
        "sub/t-huge.jpg": (with_sof_size(good_jpeg, 60000, 60000), ["above the limit"]),
        "u-zero.png": (png(0, 0, compressed=zlib.compress(b"")), ["zero", "no pixels", "ihdr"]),
        "v-zero-height.jpg": (with_sof_size(good_jpeg, 24, 0), ["empty", "no pixels"]),
    }
    if NVJPEG_DECODES:
        print("note: n-huffman.jpg (damaged entropy-coded data) is not checked: nvJPEG's "
              "hardware decoder does not report it")
        print("note: o-no-dc-scan.jpg (a progressive file missing a scan) is not checked: "
              "nvJPEG's decoders were never tried on it")
    bad = {name: value for name, value in bad.items() if value is not None}
    for name, data in good.items():
        with open(os.path.join(top, name), "wb") as f:
            f.write(data)
    for name, (data, _) in bad.items():
        with open(os.path.join(top, name), "wb") as f:
            f.write(data)
    reasons = {os.path.join(top, name): words for name, (_, words) in bad.items()}

    # Files the walk finds but cannot read.
    os.symlink("x-nowhere.png", os.path.join(top, "x-dangling.png"))
    reasons[os.path.join(top, "x-dangling.png")] = ["no such file"]
    os.symlink("y-loop.png", os.path.join(top, "y-loop.png"))
    reasons[os.path.join(top, "y-loop.png")] = ["too many levels of symbolic links"]
    if os.path.exists("/proc/self/mem"):
        # Every process's own memory reads as EIO at offset 0: an unreadable
        # file for root too.
        os.symlink("/proc/self/mem", os.path.join(top, "z-eio.png"))
        reasons[os.path.join(top, "z-eio.png")] = ["input/output error"]
    if os.geteuid() != 0:
        path = os.path.join(top, "sub", "z-no-permission.png")
        with open(path, "wb") as f:
            f.write(whole)
        os.chmod(path, 0)
        reasons[path] = ["permission denied"]
    else:
        print("note: running as root, chmod 000 does not stop reading; "
              "/proc/self/mem stands for the unreadable file")
    # A folder named like an image is walked as a folder; a loop back up the
    # tree is reported once and not followed, which is not a failure.
    os.makedirs(os.path.join(top, "folder.png"))
    os.symlink("..", os.path.join(top, "sub", "deeper", "up"))
    return sorted(os.path.join(top, g) for g in good), reasons


def error_lines(err):
    return [line for line in err.splitlines() if line]


def check_one_line_each(err, reasons, what, allowed_extra=()):
    """Each bad path has exactly one line naming it, with one of its reason words;
    nothing else is said but the allowed notes."""
    lines = error_lines(err)
    claimed = set()
    for path, words in reasons.items():
        prefix = f"lumahist: {path}: "
        mine = [i for i, line in enumerate(lines) if line.startswith(prefix)]
        if not check(len(mine) == 1, f"{what}: {len(mine)} lines for {path}: {lines}"):
            continue
        claimed.update(mine)
        reason = lines[mine[0]][len(prefix):].lower()
        check(any(w in reason for w in words),
              f"{what}: {path}: reason {reason!r} does not say any of {words}")
    extra = [line for i, line in enumerate(lines) if i not in claimed and
             not any(a in line for a in allowed_extra)]
    check(not extra, f"{what}: unexpected lines: {extra}")


def valgrind_argv(sanitized):
    if sanitized or not shutil.which("valgrind"):
        return None
    return ["valgrind", "-q", "--error-exitcode=99", "--leak-check=full",
            "--errors-for-leak-kinds=definite", "--show-leak-kinds=definite"]


def gpu_decoder_usable(tool, corpus):
    """None when `lumahist stats --decoder gpu` reads a good JPEG here; else
    why not, where the tool says so as documented (one line, `lumahist:
    --decoder gpu: WHY`, exit 1).  Anything else is a failure.  A run that
    works but does not say an nvjpeg decoder is a failure too."""
    jpeg = os.path.join(corpus, "jpeg", "420.jpg")
    rc, out, err = run([tool, "stats", "--decoder", "gpu", "--no-histogram", jpeg])
    if rc == 0:
        check_gpu_decoders(out, [jpeg], "--decoder gpu on a good JPEG")
        return None
    prefix = "lumahist: --decoder gpu: "
    check(rc == 1 and out == "" and err.startswith(prefix) and err.count("\n") == 1,
          f"--decoder gpu where it cannot run: exit {rc}, stdout {out!r}, stderr {err!r}")
    return err[len(prefix):].strip() if err.startswith(prefix) else err.strip()


def check_gpu_decoders(out, good, what):
    """With --decoder gpu: each good JPEG's jsonl record says an nvjpeg
    decoder, each PNG's libpng."""
    decoders = {}
    for line in out.splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            check(False, f"{what}: not a JSON line: {line[:200]!r}")
            continue
        decoders[record.get("path")] = record.get("decoder")
    for path in good:
        if path.lower().endswith((".jpg", ".jpeg")):
            check(str(decoders.get(path)).startswith("nvjpeg-"),
                  f"{what}: {path} decoded by {decoders.get(path)!r}, not nvJPEG")
        else:
            check(decoders.get(path) == "libpng",
                  f"{what}: {path} decoded by {decoders.get(path)!r}, not libpng")


# ---- groups ----------------------------------------------------------------------

def group_stats(tool, corpus, tmp, sanitized):
    top = os.path.join(tmp, "set")
    good, reasons = make_bad_set(top, corpus)
    loop_note = f"lumahist: {top}/sub/deeper/up: "
    for fmt in ("jsonl", "csv"):
        rc, out, err = run(stats_argv(tool, "--no-histogram", "--format", fmt, top))
        check(rc == 1, f"stats {fmt}: exit {rc}")
        check_one_line_each(err, reasons, f"stats {fmt}", allowed_extra=[loop_note])
        check(err.count(loop_note) == 1, f"stats {fmt}: the folder loop said {err.count(loop_note)} times")
        for path in good:
            check(f'"{path}"' in out or f"{path}," in out, f"stats {fmt}: no record for {path}")
        records = [line for line in out.splitlines() if line.strip()]
        want = len(good) + (1 if fmt == "csv" else 0)
        check(len(records) == want, f"stats {fmt}: {len(records)} output lines, expected {want}")
        for path in reasons:
            check(path not in out, f"stats {fmt}: a record for the bad file {path}")
        if fmt == "jsonl" and DECODER == "gpu":
            check_gpu_decoders(out, good, f"stats {fmt}")

    # Each bad file alone, named on the command line: the same line, exit 1.
    for path, words in reasons.items():
        rc, out, err = run(stats_argv(tool, path, good[0]))
        check(rc == 1 and out.count("\n") == 1, f"stats {path} alone: exit {rc}, out {out!r}")
        check_one_line_each(err, {path: words}, f"stats {os.path.basename(path)}")

    argv = valgrind_argv(sanitized)
    if argv and DECODER == "gpu":
        print("note: valgrind skipped with --decoder gpu (the CUDA driver under valgrind)")
    elif argv:
        rc, out, err = run(argv + stats_argv(tool, "--no-histogram", top), timeout=600)
        check(rc == 1, f"stats under valgrind: exit {rc} (99: a memory error or leak):\n{err}")
        print("valgrind: the bad folder is clean")
    else:
        print("note: valgrind skipped (sanitized build or no valgrind); "
              "the sanitizer build runs this test for memory errors")


def group_limits(tool, corpus, tmp, sanitized):
    path = os.path.join(tmp, "small.png")
    with open(path, "wb") as f:
        f.write(png(13, 7))
    rc, out, err = run(stats_argv(tool, "--max-pixels", "91", path))
    check(rc == 0 and out.count("\n") == 1, f"13x7 at --max-pixels 91: exit {rc} {err!r}")
    rc, out, err = run(stats_argv(tool, "--max-pixels", "90", path))
    check(rc == 1 and out == "" and err.startswith(f"lumahist: {path}: ") and
          "above the limit of 90" in err, f"13x7 at --max-pixels 90: exit {rc} {err!r}")

    # The default limit is 2^28 pixels (README): 16384 x 16384 passes the
    # check, one row more does not.
    over = os.path.join(tmp, "over.png")
    with open(over, "wb") as f:
        f.write(png(16384, 16385, compressed=zlib.compress(b"\0" * 64)))
    rc, out, err = run(stats_argv(tool, over))
    check(rc == 1 and "above the limit of 268435456" in err, f"16384x16385: {err!r}")

    # Refused before allocating: under an address-space limit far below what
    # the declared pixels would take, the refusal still says "limit", not
    # "memory".  (Not under ASan, whose shadow memory needs terabytes of
    # address space.)  On the CPU backend and one thread: the CUDA driver's
    # reservations, or glibc's 64 MiB malloc arena a thread on a 16-core
    # host, leave no room under the limit for a thread to start.
    if sanitized:
        print("note: address-space limit check skipped in a sanitized build")
        return
    if DECODER == "gpu":
        print("note: address-space limit check skipped with --decoder gpu (it needs the CPU "
              "backend, which --decoder gpu cannot go with)")
        return
    import resource

    def small_address_space():
        resource.setrlimit(resource.RLIMIT_AS, (512 << 20, 512 << 20))

    huge = os.path.join(tmp, "huge.png")
    with open(huge, "wb") as f:
        f.write(png(100000, 100000, compressed=zlib.compress(b"\0" * 64)))
    # As many bytes of image data as 1e10 pixels could inflate from (deflate
    # gives at most 1032 bytes a byte), so that the file is not refused for
    # its size before its pixels are allocated.
    huge_data = os.path.join(tmp, "huge-data.png")
    with open(huge_data, "wb") as f:
        f.write(png(100000, 100000, compressed=b"\0" * (10**10 // 1032 + 1)))
    rc, out, err = run(stats_argv(tool, "--backend", "cpu", "--jobs", "1", "--max-pixels",
                                  str(1 << 40), huge_data), preexec_fn=small_address_space)
    check(rc == 1 and ("memory" in err.lower()), f"1e10 pixels allowed by the limit, 512 MiB: {err!r}")
    # A few bytes of image data cannot hold them: refused as damaged (or
    # truncated, without its IEND) before anything is allocated for them.
    # 2^28 16-bit RGBA pixels in one row, within the default limit, had
    # libpng allocate and clear a 2 GiB row first.
    wide = os.path.join(tmp, "wide.png")
    with open(wide, "wb") as f:
        f.write(png(1 << 28, 1, depth=16, colour=6, compressed=zlib.compress(b"\0" * 64)))
    wide_cut = os.path.join(tmp, "wide-cut.png")
    with open(wide_cut, "wb") as f:
        f.write(png(1 << 28, 1, depth=16, colour=6, compressed=zlib.compress(b"\0" * 64))[:-12])
    for path, words, max_pixels in ((huge, "too short for 100000x100000 pixels", 1 << 40),
                                    (wide, "too short for 268435456x1 pixels", 0),
                                    (wide_cut, "truncated file", 0)):
        rc, out, err = run(stats_argv(tool, "--backend", "cpu", "--jobs", "1", "--max-pixels",
                                      str(max_pixels), path), preexec_fn=small_address_space)
        check(rc == 1 and words in err and "memory" not in err.lower(),
              f"{os.path.basename(path)}: a few bytes of image data, 512 MiB: {err!r}")
    rc, out, err = run(stats_argv(tool, "--backend", "cpu", "--jobs", "1", huge),
                       preexec_fn=small_address_space)
    check(rc == 1 and "above the limit" in err and "memory" not in err.lower(),
          f"1e10 pixels at the default limit under 512 MiB: {err!r}")


def timed_run(argv, **kwargs):
    start = time.monotonic()
    rc, out, err = run(argv, **kwargs)
    return rc, out, err, time.monotonic() - start


def check_fifo_writers(tool, tmp, good):
    """A FIFO named as input waits for its writer as `cat FIFO` does (it read
    as empty when the writer came a moment after the run started), and one
    that no writer opens is given up after --fifo-wait, the run going on."""
    with open(good, "rb") as f:
        image = f.read()

    def fifo_with_writer(name, opens_after, writes_after=None):
        """A new FIFO; a thread opens it after opens_after s, then writes the
        image writes_after s later (None: closes it without writing)."""
        path = os.path.join(tmp, name)
        os.mkfifo(path)

        def write():
            time.sleep(opens_after)
            with open(path, "wb") as w:
                if writes_after is not None:
                    time.sleep(writes_after)
                    w.write(image)
        threading.Thread(target=write, daemon=True).start()
        return path

    # The writer opens it a second after the run started.
    fifo = fifo_with_writer("late.png", 1.0, 0.0)
    rc, out, err, _ = timed_run(stats_argv(tool, "--no-histogram", fifo, good))
    check(rc == 0 and out.count('"width":13,') == 2 and not err,
          f"a FIFO whose writer opens it after 1 s: exit {rc}, {out!r}, {err!r}")
    # The same through equalize (its images are read on the batch pipeline).
    fifo = fifo_with_writer("late-equalize.png", 1.0, 0.0)
    out_dir = os.path.join(tmp, "fifo-equalized")
    rc, out, err, _ = timed_run(rewrite_argv(tool, "equalize", "--out", out_dir, fifo))
    check(rc == 0 and not err and os.path.isfile(os.path.join(out_dir, "late-equalize.png")),
          f"equalize of a FIFO whose writer opens it after 1 s: exit {rc}, {err!r}, "
          f"{sorted(os.listdir(out_dir)) if os.path.isdir(out_dir) else None}")
    # A writer that has it open is waited for past --fifo-wait, as on a pipe.
    fifo = fifo_with_writer("slow.png", 0.2, 2.0)
    rc, out, err, _ = timed_run(stats_argv(tool, "--fifo-wait", "1", "--no-histogram", fifo))
    check(rc == 0 and '"width":13,' in out and not err,
          f"a FIFO whose writer writes 2 s after opening it, --fifo-wait 1: exit {rc}, {err!r}")
    # One that opens it and closes it without writing: empty, at once.
    fifo = fifo_with_writer("closed.png", 0.5)
    rc, out, err, took = timed_run(stats_argv(tool, fifo, good))
    check(rc == 1 and out.count("\n") == 1 and took < 10,
          f"a FIFO whose writer writes nothing: exit {rc} after {took:.1f} s, {out!r}")
    check_one_line_each(err, {fifo: ["empty"]}, "FIFO written nothing")
    # One that no writer opens must not block the run forever.
    fifo = os.path.join(tmp, "fifo.png")
    os.mkfifo(fifo)
    rc, out, err, took = timed_run(stats_argv(tool, "--fifo-wait", "1", fifo, good), timeout=30)
    check(rc == 1 and out.count("\n") == 1 and 1 <= took < 10,
          f"a FIFO without a writer, --fifo-wait 1: exit {rc} after {took:.1f} s, {out!r}")
    check_one_line_each(err, {fifo: ["no writer opened in 1 s"]}, "FIFO without a writer")
    # Ctrl-C while it waits ends the run at once, not after the wait.
    proc = subprocess.Popen(stats_argv(tool, fifo, good), stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    time.sleep(1)
    proc.send_signal(signal.SIGINT)
    start = time.monotonic()
    try:
        _, err = proc.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        _, err = proc.communicate()
    took = time.monotonic() - start
    check(proc.returncode == 130 and took < 5 and b"stopped" in err,
          f"SIGINT while a FIFO waits for its writer: exit {proc.returncode} after {took:.1f} s, "
          f"{err!r}")
    check_stopped_mid_stream(tool, tmp, image)
    check_ignored_stop_signals(tool, image)
    # A pipe whose writer left before the run is empty at once: it gets no
    # later writer, unlike a FIFO.
    read_end, write_end = os.pipe()
    os.close(write_end)
    rc, out, err, took = timed_run(stats_argv(tool, "-"), stdin=read_end)
    os.close(read_end)
    check(rc == 1 and not out and took < 10,
          f"a pipe without its writer: exit {rc} after {took:.1f} s, {out!r}")
    check_one_line_each(err, {"/dev/stdin": ["empty"]}, "pipe without its writer")


def check_ignored_stop_signals(tool, image):
    """A run started with SIGHUP and SIGINT ignored (nohup, a job a shell
    starts in the background) is not stopped by them: it reads its pipe to
    the end and gives the record.  SIGTERM, not ignored, still stops it."""
    def ignoring():
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_IGN)

    half = len(image) // 2
    for signals, ignored in (((signal.SIGHUP, signal.SIGINT), True), ((signal.SIGTERM,), False)):
        names = "+".join(s.name for s in signals)
        read_end, write_end = os.pipe()
        os.write(write_end, image[:half])
        proc = subprocess.Popen(stats_argv(tool, "--no-histogram", "-"), stdin=read_end,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                preexec_fn=ignoring)
        os.close(read_end)
        time.sleep(1)
        for sig in signals:
            proc.send_signal(sig)
        time.sleep(1)
        running = proc.poll() is None
        if ignored and running:
            os.write(write_end, image[half:])
        os.close(write_end)
        try:
            out, err = proc.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
        records = out.count(b"\n")
        if ignored:
            check(running and proc.returncode == 0 and records == 1 and not err,
                  f"{names} ignored at the start, then sent: running {running}, "
                  f"exit {proc.returncode}, {records} records, {err!r}")
        else:
            check(not running and proc.returncode == 143 and not records and
                  b"stopped by SIGTERM" in err,
                  f"{names} with SIGHUP and SIGINT ignored: running {running}, "
                  f"exit {proc.returncode}, {err!r}")


def check_stopped_mid_stream(tool, tmp, image):
    """Ctrl-C while a pipe's or a FIFO's writer holds it open, half an image
    written, ends the run at once (a read() blocked in the kernel restarts
    after the signal's handler: the run waited for the writer's end); and
    standard input that is a terminal is refused, not waited on."""
    def stopped_while_read(argv, what, stdin=None, writer=None):
        proc = subprocess.Popen(argv, stdin=stdin, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE)
        if writer:
            writer()
        time.sleep(1)
        proc.send_signal(signal.SIGINT)
        start = time.monotonic()
        try:
            _, err = proc.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            _, err = proc.communicate()
        took = time.monotonic() - start
        check(proc.returncode == 130 and took < 5 and b"stopped by SIGINT" in err and
              b"stopped before the end of it came" in err,
              f"SIGINT while {what}: exit {proc.returncode} after {took:.1f} s, {err!r}")

    half = image[:len(image) // 2]
    out_dir = os.path.join(tmp, "stopped-equalized")
    for argv in (stats_argv(tool, "-"), rewrite_argv(tool, "equalize", "--out", out_dir, "-")):
        read_end, write_end = os.pipe()
        os.write(write_end, half)
        stopped_while_read(argv, f"{argv[1]} reads a pipe held open", stdin=read_end)
        os.close(read_end)
        os.close(write_end)
    check(not os.path.exists(out_dir) or not os.listdir(out_dir),
          f"equalize stopped while reading a pipe wrote {os.listdir(out_dir)}")
    fifo = os.path.join(tmp, "held-open.png")
    os.mkfifo(fifo)
    held = []

    def open_and_write_half():
        # Opened to write (it waits for the reader's open), half written.
        held.append(os.open(fifo, os.O_WRONLY))
        os.write(held[0], half)
    stopped_while_read(stats_argv(tool, fifo), "a FIFO held open is read",
                       writer=open_and_write_half)
    for fd in held:
        os.close(fd)
    # A terminal on standard input: `lumahist stats -` typed at a prompt.
    controller, terminal = pty.openpty()
    rc, out, err, took = timed_run(stats_argv(tool, "-"), stdin=terminal)
    os.close(terminal)
    os.close(controller)
    check(rc == 1 and not out and took < 10,
          f"a terminal on standard input: exit {rc} after {took:.1f} s, {out!r}")
    check_one_line_each(err, {"/dev/stdin": ["a terminal: images are not typed in"]},
                        "terminal on standard input")


def check_image_sequences_on_a_pipe(tool, tmp, png_bytes, jpeg_bytes):
    """PNG frames one after another on a pipe (`ffmpeg -f image2pipe -c:v png
    -`) are refused in one line, as Motion JPEG is: read as one image, they
    gave the first frame's record with exit 0.  A stream of either that never
    ends is refused once its second image starts, not read until memory runs
    out."""
    rc, out, err = run(stats_argv(tool, "--no-histogram", "-"), input=png_bytes * 3)
    check(rc == 1 and not out, f"three PNGs on a pipe: exit {rc}, {out!r}")
    check_one_line_each(err, {"/dev/stdin": ["png images one after another"]},
                        "three PNGs on a pipe")
    out_dir = os.path.join(tmp, "png-sequence-out")
    rc, out, err = run(rewrite_argv(tool, "equalize", "--out", out_dir, "-"),
                       input=png_bytes * 3)
    check(rc == 1 and (not os.path.exists(out_dir) or not os.listdir(out_dir)),
          f"equalize of three PNGs on a pipe: exit {rc}, {err!r}")
    # One PNG with bytes after it that are no PNG is still one image.
    rc, out, err = run(stats_argv(tool, "--no-histogram", "-"), input=png_bytes + b"\0" * 100)
    check(rc == 0 and out.count("\n") == 1 and not err,
          f"a PNG and zeros on a pipe: exit {rc}, {err!r}")
    for name, frame, reason in (("PNG", png_bytes, "png images one after another"),
                                ("JPEG", jpeg_bytes, "a motion jpeg video")):
        proc = subprocess.Popen(stats_argv(tool, "-"), stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)

        def write_for_ever(pipe=proc.stdin, frame=frame):
            try:
                while True:
                    pipe.write(frame)
            except (BrokenPipeError, ValueError, OSError):
                pass
        writer = threading.Thread(target=write_for_ever, daemon=True)
        start = time.monotonic()
        writer.start()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        took = time.monotonic() - start
        out, err = proc.stdout.read(), proc.stderr.read().decode("utf-8", "replace")
        proc.stdout.close()
        proc.stderr.close()
        check(proc.returncode == 1 and not out and took < 20,
              f"{name} frames on a pipe that never ends: exit {proc.returncode} after "
              f"{took:.1f} s, {err!r}")
        check_one_line_each(err, {"/dev/stdin": [reason]}, f"endless {name} stream")
        writer.join(timeout=10)


def check_closed_standard_fds(tool, tmp, good):
    """Standard error or output closed when the run starts (2>&-, a daemon's
    child) takes none of the run's files' numbers: the first file opened got
    it, and a bad file's message went into the records file of --output."""
    with open(good, "rb") as f:
        data = f.read()
    cut = os.path.join(tmp, "cut-in-half.png")
    with open(cut, "wb") as f:
        f.write(data[:len(data) // 2])
    records = os.path.join(tmp, "stderr-closed.jsonl")
    rc, _, _ = run(stats_argv(tool, "--no-histogram", "--output", records, cut, good),
                   preexec_fn=lambda: os.close(2))
    with open(records, "rb") as f:
        lines = f.read().splitlines()
    check(rc == 1 and len(lines) == 1 and lines[0].startswith(b'{"path":"' + good.encode()),
          f"standard error closed, --output FILE: exit {rc}, FILE holds {lines!r}")
    rc, out, err = run(stats_argv(tool, "--no-histogram", cut, good),
                       preexec_fn=lambda: os.close(1))
    want = [f"lumahist: {cut}: truncated file",
            "lumahist: stdout: cannot write the records: Bad file descriptor"]
    check(rc == 1 and err.splitlines() == want,
          f"standard output closed: exit {rc}, {err!r}")


def group_special(tool, corpus, tmp, sanitized):
    good = os.path.join(tmp, "good.png")
    with open(good, "wb") as f:
        f.write(png(13, 7))
    check_fifo_writers(tool, tmp, good)
    check_closed_standard_fds(tool, tmp, good)
    # Standard input is read in full (lumahist stats /dev/stdin), redirected
    # from a file or a pipe, which cannot seek back after its first bytes.
    with open(good, "rb") as f:
        rc, out, err = run(stats_argv(tool, "--no-histogram", "/dev/stdin"), stdin=f)
    check(rc == 0 and '"width":13' in out, f"a PNG on standard input: exit {rc}, {out!r} {err!r}")
    jpeg = os.path.join(corpus, "jpeg", "420.jpg")
    with open(jpeg, "rb") as f:
        jpeg_bytes = f.read()
    for name, data, width in (("PNG", png(13, 7), 13), ("JPEG", jpeg_bytes, 24)):
        rc, out, err = run(stats_argv(tool, "--no-histogram", "/dev/stdin"), input=data)
        check(rc == 0 and f'"width":{width},' in out and not err,
              f"a {name} on a pipe: exit {rc}, {out!r} {err!r}")
    rc, out, err = run(stats_argv(tool, "--no-histogram", "-"), input=jpeg_bytes)
    check(rc == 0 and '"path":"/dev/stdin","width":24,' in out and not err,
          f"'-' for standard input: exit {rc}, {out!r} {err!r}")
    check_image_sequences_on_a_pipe(tool, tmp, png(13, 7), jpeg_bytes)
    # A video on a pipe is said to be one (it was "not a PNG or JPEG file").
    y4m = b"YUV4MPEG2 W4 H2 F25:1 C444\nFRAME\n" + bytes(24)
    for data, reason in ((jpeg_bytes[:40], "truncated"), (b"GIF89a", "not a png or jpeg"),
                         (b"", "empty"), (y4m, "a video: videos are read from files")):
        rc, out, err = run(stats_argv(tool, "/dev/stdin"), input=data)
        check(rc == 1 and not out, f"{data[:8]!r} on a pipe: exit {rc}, {out!r}")
        check_one_line_each(err, {"/dev/stdin": [reason]}, f"{reason} on a pipe")
    # A URL is not fetched: "No such file or directory" said nothing of why;
    # a file: URL gives its path.  The other files are read.
    url, file_url = "https://example.com/photo.jpg", "file://" + good.replace(" ", "%20")
    rc, out, err = run(stats_argv(tool, url, file_url, good))
    check(rc == 1 and out.count("\n") == 1, f"URLs named: exit {rc}, {out!r}")
    check_one_line_each(err, {url: ["no such file or directory (a url: files and standard "
                                    "input are read, not urls"],
                              file_url: [f"no such file or directory (a file: url; its path "
                                         f"is {good.lower()})"]}, "URLs named")
    # A folder whose one entry cannot be looked at (a link to itself) has
    # that entry's line, not also "no PNG, JPEG or video files in it": there
    # may be files behind it.
    looped = os.path.join(tmp, "only-a-loop")
    os.makedirs(looped)
    os.symlink("loop", os.path.join(looped, "loop"))
    rc, out, err = run(stats_argv(tool, looped))
    check(rc == 1 and not out, f"a folder of a looping link: exit {rc}, {out!r}")
    check_one_line_each(err, {os.path.join(looped, "loop"): ["too many levels of symbolic links"]},
                        "a folder of a looping link")
    # A FIFO in a folder is not a file to read: the walk passes it by.
    folder = os.path.join(tmp, "with-fifo")
    os.makedirs(folder)
    os.mkfifo(os.path.join(folder, "pipe.png"))
    shutil.copy(good, folder)
    rc, out, err = run(stats_argv(tool, folder), timeout=30)
    check(rc == 0 and out.count("\n") == 1 and err == "", f"a FIFO in a folder: {rc} {err!r}")

    if os.path.exists("/proc/self/mem"):
        rc, out, err = run(stats_argv(tool, "/proc/self/mem", good))
        check(rc == 1 and out.count("\n") == 1, f"/proc/self/mem: exit {rc}")
        check_one_line_each(err, {"/proc/self/mem": ["input/output error"]}, "/proc/self/mem")
    rc, out, err = run(stats_argv(tool, "/dev/zero", good))
    check(rc == 1 and out.count("\n") == 1, f"/dev/zero: exit {rc}")
    check_one_line_each(err, {"/dev/zero": ["not a png or jpeg"]}, "/dev/zero")

    unreadable = os.path.join(tmp, "folder-unreadable")
    os.makedirs(unreadable)
    shutil.copy(good, unreadable)
    os.chmod(unreadable, 0)
    if os.geteuid() == 0:
        print("note: running as root: a folder of mode 000 is readable; not tested")
    else:
        rc, out, err = run(stats_argv(tool, unreadable, good))
        check(rc == 1 and out.count("\n") == 1, f"unreadable folder: exit {rc}")
        check_one_line_each(err, {unreadable: ["permission denied"]}, "unreadable folder")
    os.chmod(unreadable, 0o755)


def rewrite_commands(tool):
    """The subcommands that write images and exist in this build."""
    commands = []
    for name in ("equalize", "clahe", "overlay"):
        rc, out, err = run([tool, name, "--help"])
        if rc == 0 and "--out" in out:
            commands.append(name)
    return commands


def digest_tree(top):
    """{relative path: sha256} of every file (links as their target text)."""
    result = {}
    for folder, dirs, files in os.walk(top):
        for name in files + [d for d in dirs if os.path.islink(os.path.join(folder, d))]:
            path = os.path.join(folder, name)
            rel = os.path.relpath(path, top)
            if os.path.islink(path):
                result[rel] = "link:" + os.readlink(path)
            else:
                st = os.stat(path)
                if not stat.S_ISREG(st.st_mode) or not os.access(path, os.R_OK):
                    result[rel] = f"mode:{st.st_mode:o}"
                else:
                    with open(path, "rb") as f:
                        result[rel] = hashlib.sha256(f.read()).hexdigest()
    return result


def leftovers(top):
    """Temporary files left behind by a writer."""
    found = []
    for folder, _, files in os.walk(top):
        found += [os.path.join(folder, f) for f in files if f.endswith(".tmp")]
    return found


def group_rewrite(tool, corpus, tmp, sanitized):
    commands = rewrite_commands(tool)
    if not commands:
        print("SKIP: no equalize, clahe or overlay subcommand with --out in this build")
        return 77
    top = os.path.join(tmp, "set")
    good, reasons = make_bad_set(top, corpus)
    before = digest_tree(top)
    loop_note = f"lumahist: {top}/sub/deeper/up: "
    for command in commands:
        out_dir = os.path.join(tmp, "out-" + command)
        rc, out, err = run(rewrite_argv(tool, command, "--out", out_dir, top))
        check(rc == 1, f"{command}: exit {rc}")
        check_one_line_each(err, reasons, command, allowed_extra=[loop_note])
        made = sorted(os.path.join(folder, f) for folder, _, files in os.walk(out_dir)
                      for f in files)
        want = sorted(os.path.join(out_dir, os.path.relpath(g, top)) for g in good)
        # 16-bit PNGs are written back too; all good inputs have an output, no bad one has.
        check(made == want, f"{command}: outputs {made}, expected {want}")
        check(not leftovers(out_dir), f"{command}: temporary files left: {leftovers(out_dir)}")

        # --out the input folder: nothing may be overwritten.
        rc, out, err = run(rewrite_argv(tool, command, "--out", top, top))
        check(rc == 1, f"{command} --out the input folder: exit {rc}")
        for path in good:
            check(f"lumahist: {path}: " in err, f"{command} --out input: nothing said of {path}")
        check(digest_tree(top) == before, f"{command} --out the input folder changed its files")
        check(not leftovers(top), f"{command}: temporary files left in the input folder")
        # A single file whose output is itself.
        rc, out, err = run(rewrite_argv(tool, command, "--out", os.path.dirname(good[0]),
                                        good[0]))
        check(rc == 1 and err.startswith(f"lumahist: {good[0]}: ") and err.count("\n") == 1,
              f"{command} onto itself: exit {rc} {err!r}")
        check(digest_tree(top) == before, f"{command} onto itself changed the input")
    return 0


def in_tiny_mount(shell_command, options):
    """Runs shell_command with $MNT a fresh tmpfs mounted with options, in a
    private mount namespace (an unprivileged user namespace if need be).
    Returns (rc, out, err), or None when no such mount can be made here."""
    script = ('set -e; MNT=$(mktemp -d); export MNT; mount -t tmpfs -o "%s" tmpfs "$MNT"; '
              'set +e; %s' % (options, shell_command))
    unshare = shutil.which("unshare")
    if not unshare:
        return None
    for argv in ([unshare, "--mount", "--map-root-user", "sh", "-c", script],
                 [unshare, "--mount", "sh", "-c", script]):
        probe = subprocess.run(argv[:-1] + ['mount -t tmpfs -o size=16k tmpfs "$(mktemp -d)"'],
                               capture_output=True)
        if probe.returncode == 0:
            return run(argv)
    return None


def never_onto_an_input(tool, tmp):
    """stats -o and --report naming one of the inputs (or its standard output
    redirected onto one), and merge --report naming its records file: a
    usage error (exit 2), the input unchanged (the records or the page
    replaced the image, exit 0)."""
    folder = os.path.join(tmp, "onto")
    os.makedirs(folder)
    image = os.path.join(folder, "a.png")
    with open(image, "wb") as f:
        f.write(png(13, 7))
    os.symlink(os.path.join("onto", "a.png"), os.path.join(tmp, "link-to-a.png"))
    before = digest_tree(folder)
    for argv in (stats_argv(tool, "--quiet", "-o", image, folder),
                 stats_argv(tool, "--quiet", "--report", image, folder),
                 stats_argv(tool, "--quiet", "--report", os.path.join(tmp, "link-to-a.png"),
                            folder)):
        rc, out, err = run(argv)
        check(rc == 2 and "never overwritten" in err and digest_tree(folder) == before,
              f"{argv[2:]}: exit {rc} {err!r}")
    # Standard output redirected onto an input (stats photos >> photos/a.png).
    with open(image, "ab") as redirected:
        p = subprocess.run(stats_argv(tool, "--quiet", folder), stdout=redirected,
                           stderr=subprocess.PIPE, timeout=TIMEOUT)
    check(p.returncode == 2 and b"standard output is one of the inputs" in p.stderr and
          digest_tree(folder) == before, f"stats >> an input: exit {p.returncode} {p.stderr!r}")
    records = os.path.join(tmp, "onto.jsonl")
    rc, out, err = run(stats_argv(tool, "--quiet", "-o", records, folder))
    with open(records, "rb") as f:
        kept = f.read()
    rc, out, err = run([tool, "merge", "--report", records, records])
    with open(records, "rb") as f:
        check(rc == 2 and f.read() == kept, f"merge --report onto its records: exit {rc} {err!r}")
    rc, out, err = run([tool, "merge", "--report", os.path.join(tmp, "m.html"),
                        "--dark-below", "3", records])
    check(rc == 2 and "[0, 1]" in err, f"merge --dark-below 3: exit {rc} {err!r}")
    print("stats -o, --report, >> and merge --report onto an input: refused, nothing changed")


def records_on_a_full_disk(tool, tmp):
    """stats -o FILE on a disk that fills up: exit 1, one line, and FILE ends
    with a whole record (the part of the one that did not fit was left)."""
    many = os.path.join(tmp, "many")
    os.makedirs(many)
    for k in range(60):  # about 2.4 KB a record: 140 KB, more than the 64 KiB mount
        with open(os.path.join(many, f"{k:02d}.png"), "wb") as f:
            f.write(png(13 + k, 7))
    argv = " ".join(stats_argv(tool, "--quiet", "-o", '"$MNT/records.jsonl"', many))
    result = in_tiny_mount(f'{argv}; echo "rc=$?"; wc -c < "$MNT/records.jsonl"; '
                           f'tail -c 1 "$MNT/records.jsonl" | od -An -c', "size=64k")
    if result is None:
        print("note: cannot mount a tmpfs here: records on a full disk not tested")
        return
    _, out, err = result
    lines = out.split("\n")
    check(lines[0] == "rc=1" and err.count("\n") == 1 and "no space left" in err.lower(),
          f"stats -o on a full disk: {out!r} {err!r}")
    check(int(lines[1]) > 0 and lines[2].strip() == "\\n",
          f"stats -o on a full disk: the file ends inside a record ({lines[1:3]})")
    print("stats -o on a full disk: exit 1, one line, the file ends with a whole record")


def files_written_whole(tool, corpus, tmp):
    """--report and --save-lut into what is not a regular file: a FIFO gets
    the file through it, a link to /dev/full stays a link (the write fails,
    exit 1), a link to a regular file replaces that file and stays a link.
    Each was replaced by a regular file before (with exit 0 for /dev/full)."""
    where = os.path.join(tmp, "whole")
    os.makedirs(where)
    image = os.path.join(corpus, "png")
    full_link = os.path.join(where, "full")
    os.symlink("/dev/full", full_link)
    target = os.path.join(where, "target.txt")
    with open(target, "w") as f:
        f.write("old")
    file_link = os.path.join(where, "link.txt")
    os.symlink("target.txt", file_link)
    fifo = os.path.join(where, "fifo")
    os.mkfifo(fifo)
    runs = [("--report", stats_argv(tool, "--quiet", "--report", "{}", image), "<!DOCTYPE html>")]
    if "equalize" in rewrite_commands(tool):
        runs.append(("--save-lut", rewrite_argv(tool, "equalize", "--quiet", "--save-lut", "{}",
                                                "--out", os.path.join(where, "eq"),
                                                os.path.join(image, "gray8.png")),
                     "lumahist-lut"))
    for option, argv, opening in runs:
        def at(path):
            return [path if a == "{}" else a for a in argv]
        rc, _, err = run(at(full_link))
        check(rc == 1 and "no space left on device" in err.lower() and os.path.islink(full_link),
              f"{option} to a link to /dev/full: exit {rc}, {err!r}, "
              f"still a link: {os.path.islink(full_link)}")
        read = []
        reader = threading.Thread(target=lambda: read.append(open(fifo).read()), daemon=True)
        reader.start()
        rc, _, err = run(at(fifo))
        reader.join(TIMEOUT)
        check(rc == 0 and read and read[0].startswith(opening) and
              stat.S_ISFIFO(os.lstat(fifo).st_mode),
              f"{option} to a FIFO: exit {rc}, {err!r}, read {len(read[0]) if read else None} "
              f"bytes, still a FIFO: {stat.S_ISFIFO(os.lstat(fifo).st_mode)}")
        rc, _, err = run(at(file_link))
        with open(target) as f:
            check(rc == 0 and os.path.islink(file_link) and f.read().startswith(opening),
                  f"{option} to a link to a file: exit {rc}, {err!r}, "
                  f"still a link: {os.path.islink(file_link)}")
        print(f"{option}: through a FIFO, a link to /dev/full and a link to a file, none replaced")


def unusable_outputs(tool, commands, inputs, tmp):
    """--out a regular file or below one, for every command that writes
    images: one line naming it, exit 1, no input read (one line per input
    after each was decoded and processed, before)."""
    blocker = os.path.join(tmp, "a-file")
    with open(blocker, "w") as f:
        f.write("not a folder")
    # A video alone (YUV4MPEG2: no encoder needed to make it), which the
    # image batch never sees: written after it, each with its own line.
    video = os.path.join(tmp, "clip.y4m")
    with open(video, "wb") as f:
        f.write(b"YUV4MPEG2 W16 H8 F25:1 Ip A1:1 C420jpeg\n" +
                b"".join(b"FRAME\n" + bytes([k * 9] * 192) for k in range(3)))
    runs = [(command, [inputs]) for command in commands]
    # --global reads every image for its histogram before any is written.
    runs += [("equalize", ["--global", inputs]), ("equalize", [video]), ("overlay", [video])]
    for command, rest in runs:
        for out_dir in (blocker, os.path.join(blocker, "sub")):
            rc, _, err = run(rewrite_argv(tool, command, "--quiet", "--out", out_dir, *rest))
            check(rc == 1 and error_lines(err) == [error_lines(err)[0]] and
                  err.startswith(f"lumahist: {out_dir}: cannot write the outputs into it: ") and
                  "not a directory" in err.lower(),
                  f"{command} {rest[:-1]} --out {out_dir}: exit {rc}, {err!r}")
    with open(blocker) as f:
        check(f.read() == "not a folder", "an --out that is a file was changed")
    print("equalize, clahe, overlay --out a file: one line, exit 1")


def report_folder_missing(tool, corpus, tmp):
    """stats --report into a folder that is not there: said before the run
    (no record written, exit 1), naming the path given; merge --report too
    (it read every shard and wrote the dataset record first)."""
    page = os.path.join(tmp, "no-such-folder", "x.html")
    rc, out, err = run(stats_argv(tool, "--quiet", "--report", page, os.path.join(corpus, "png")))
    check(rc == 1 and out == "" and error_lines(err) == [error_lines(err)[0]] and
          err.startswith(f"lumahist: {page}: ") and "no such file or directory" in err.lower() and
          "x.html." not in err,
          f"stats --report into a missing folder: exit {rc}, {len(out)} bytes of records, {err!r}")
    records = os.path.join(tmp, "for-merge.jsonl")
    rc, out, err = run(stats_argv(tool, "--quiet", "-o", records, os.path.join(corpus, "png")))
    rc, out, err = run([tool, "merge", "--report", page, records])
    check(rc == 1 and out == "" and error_lines(err) == [error_lines(err)[0]] and
          err.startswith(f"lumahist: {page}: ") and "x.html." not in err,
          f"merge --report into a missing folder: exit {rc}, {len(out)} bytes of dataset "
          f"record, {err!r}")
    print("--report into a missing folder: said at start-up, naming the path given")


def help_on_a_full_stdout(tool):
    """--help and --version whose stdout fails: exit 1 and a line, as the
    records (exit 0 and nothing said, before)."""
    for argv in (["--help"], ["--version"], ["stats", "--help"], ["merge", "--help"]) + \
            tuple([c, "--help"] for c in rewrite_commands(tool)):
        with open("/dev/full", "w") as full:
            p = subprocess.run([tool] + argv, stdout=full, stderr=subprocess.PIPE,
                               timeout=TIMEOUT)
        err = p.stderr.decode()
        check(p.returncode == 1 and "no space left on device" in err.lower() and
              err.count("\n") == 1, f"{argv} > /dev/full: exit {p.returncode} {err!r}")
    p = subprocess.run(["sh", "-c", 'exec "$0" --version >&-', tool], stderr=subprocess.PIPE,
                       timeout=TIMEOUT)
    check(p.returncode == 1 and b"cannot write the version" in p.stderr,
          f"--version with stdout closed: exit {p.returncode} {p.stderr!r}")
    print("--help and --version > /dev/full, --version >&-: one line, exit 1")


def rewrite_into_a_full_disk(tool, command, *inputs):
    """command --jobs 1 of inputs with --out on a tmpfs that a filler has
    taken every page of, so that each output's write fails: (its "rc=N"
    line, the files left under --out, its error lines).  Called where a
    tmpfs can be mounted."""
    argv = " ".join("'" + a + "'" for a in rewrite_argv(tool, command, "--jobs", "1", *inputs))
    _, out, err = in_tiny_mount(f'cat /dev/zero > "$MNT/filler" 2>/dev/null; '
                                f'{argv} --out "$MNT/out"; echo "rc=$?"; '
                                f'find "$MNT/out" -type f', "size=16k")
    status, _, listing = out.partition("\n")
    return status, listing, error_lines(err)


def jpegs_on_a_full_disk(tool, corpus, command):
    """JPEG outputs on a disk already full: the first failure says "No space
    left on device" and stops the run, as for PNGs (libjpeg's own "Output
    file write error --- out of disk space?" was said for every input, and
    the run went on).  Called where a tmpfs can be mounted."""
    names = sorted(os.path.join(corpus, "jpeg", n) for n in ("420.jpg", "422.jpg", "444.jpg",
                                                              "gray.jpg", "progressive.jpg"))
    status, listing, lines = rewrite_into_a_full_disk(tool, command, *names)
    check(status == "rc=1" and listing.split() == [] and len(lines) == 2 and
          "no space left on device" in lines[0].lower() and
          re.search(r"out: stopped: No space left on device; 0 outputs written, 4 inputs not "
                    r"done", lines[1]) is not None,
          f"{command} of JPEGs into a full disk: {status}, files {listing.split()}, {lines}")
    print(f"{command} of JPEGs into a full disk: one line, the run stopped, no file left")


def video_on_a_full_disk(tool, tmp, command):
    """A video written back into a full disk: one line naming the input and
    the output with strerror's words, as for images (GStreamer's "No space
    left on the resource. (from filesink0)" named neither), no file left."""
    video = os.path.join(tmp, "full-disk.y4m")
    with open(video, "wb") as f:  # 10 frames of 4.6 KB: more than the 16 KiB mount
        f.write(b"YUV4MPEG2 W64 H48 F25:1 Ip A1:1 C420jpeg\n" +
                b"".join(b"FRAME\n" + bytes([k * 20] * 4608) for k in range(10)))
    argv = " ".join("'" + a + "'" for a in rewrite_argv(tool, command, video))
    result = in_tiny_mount(f'{argv} --out "$MNT/out"; echo "rc=$?"; find "$MNT/out" -type f; '
                           f'echo "out=$MNT/out"', "size=16k")
    _, out, err = result
    lines = out.split()
    out_dir = lines[-1][len("out="):]
    check(lines[0] == "rc=1" and lines[1:-1] == [] and
          error_lines(err) == [f"lumahist: {video}: writing {out_dir}/full-disk.y4m: "
                                   "No space left on device"],
          f"{command} of a video into a full disk: {lines}, {err!r}")
    print(f"{command} of a video into a full disk: one line naming input and output, no file left")


def reads_videos(tool, tmp):
    """Whether this lumahist reads videos (a build without GStreamer says
    so for each)."""
    probe = os.path.join(tmp, "probe-video.y4m")
    y4m_video(probe, frames=1)
    proc = subprocess.run([tool, "stats", "--no-histogram", probe], capture_output=True)
    return b"built without GStreamer" not in proc.stderr


def muxer_missing_for_y4m(tool, tmp, command):
    """The line of a GStreamer with no YUV4MPEG2 muxer (y4menc, of
    gst-plugins-good: the GPU hosts' private GStreamer lacks it), which
    writes no .y4m video back; None where one is written."""
    probe = os.path.join(tmp, "probe-video.y4m")
    y4m_video(probe, frames=1)
    out_dir = os.path.join(tmp, "probe-video-out")
    proc = subprocess.run(rewrite_argv(tool, command, "--out", out_dir, probe),
                          capture_output=True)
    shutil.rmtree(out_dir, ignore_errors=True)
    err = proc.stderr.decode("utf-8", "replace")
    return err.strip() if "no GStreamer muxer writes its container" in err else None


def y4m_video(path, frames=10):
    """A 64x48 YUV4MPEG2 video of 4.6 KB frames, written whole by hand."""
    with open(path, "wb") as f:
        f.write(b"YUV4MPEG2 W64 H48 F25:1 Ip A1:1 C420jpeg\n" +
                b"".join(b"FRAME\n" + bytes([k * 20] * 4608) for k in range(frames)))


def videos_stopped_by_a_full_disk(tool, tmp, command):
    """A full disk stops the videos too: after the images of a folder (each
    video was tried after the "stopped" line, each with its own line, and the
    count of those not done left them out), and in a folder of videos alone
    (which never stopped).  One line for the write that failed, one for the
    stop, whose counts take in every input."""
    mixed = os.path.join(tmp, f"stop-mixed-{command}")
    videos = os.path.join(tmp, f"stop-videos-{command}")
    for folder, n_images, n_videos in ((mixed, 3, 2), (videos, 0, 3)):
        os.makedirs(folder)
        for k in range(n_images):
            with open(os.path.join(folder, f"a{k}.png"), "wb") as f:
                f.write(png(13, 7 + k))
        for k in range(n_videos):
            y4m_video(os.path.join(folder, f"v{k}.y4m"))
        status, listing, lines = rewrite_into_a_full_disk(tool, command, folder)
        # Which image's write fails first depends on the contexts' turns;
        # its line is said even behind an image not begun.
        first = r"a\d\.png" if n_images else r"v0\.y4m"
        failed = [line for line in lines[:-1]
                  if re.match(f"lumahist: {re.escape(folder)}/{first}: writing .*: "
                              "No space left on device$", line)]
        total = n_images + n_videos
        check(status == "rc=1" and listing.split() == [] and
              len(lines) == len(failed) + 1 and len(failed) == 1 and
              re.search(r"out: stopped: No space left on device; 0 outputs written, "
                        f"{total - len(failed)} inputs? not done", lines[-1]) is not None,
              f"{command} of {n_images} images and {n_videos} videos into a full disk: "
              f"{status}, files {listing.split()}, {lines}")
    print(f"{command} of images and videos, and of videos alone, into a full disk: "
          "one line, the run stopped, the videos counted")


def each_input_counted_once(tool, tmp, command):
    """Images larger than a full disk, on two threads: each input is written,
    said failed, or counted among those not done, once (an output left
    unwritten after the stop was counted again when the pipeline dropped it,
    behind an earlier input not begun: "8 inputs not done" of 8, beside two
    that failed).  Each larger than the one before: the last ones, decoded
    first, are those dropped."""
    folder = os.path.join(tmp, "each-once")
    os.makedirs(folder)
    for k in range(8):
        with open(os.path.join(folder, f"{k}.png"), "wb") as f:
            f.write(noise_png(160 + 40 * k, 160))  # 77 KB or more: over the 64 KiB mount
    argv = " ".join("'" + a + "'" for a in rewrite_argv(tool, command, "--jobs", "2", folder))
    for _ in range(5):  # how many are dropped depends on the threads' timing
        result = in_tiny_mount(f'{argv} --out "$MNT/out"; echo "rc=$?"', "size=64k")
        _, out, err = result
        lines = error_lines(err)
        failed = [line for line in lines if line.startswith(f"lumahist: {folder}/")]
        stop = re.search(r"out: stopped: No space left on device; (\d+) outputs? written, "
                         r"(\d+) inputs? not done", err)
        check(out.strip() == "rc=1" and stop is not None and len(lines) == len(failed) + 1 and
              int(stop.group(1)) + len(failed) + int(stop.group(2)) == 8,
              f"{command} of 8 images into a full disk: {out.strip()}, {lines}")
    print(f"{command} of 8 images into a full disk on 2 threads: each input counted once")


def failure_said_past_an_input_not_begun(tool, tmp, command):
    """A full disk whose first failed write is a later input's, with an
    earlier one not begun: that write's line is said, and the input counted
    as failed, not among those not done (the pipeline dropped every result
    behind the input the stop left undone: no line, "3 inputs not done" of
    3, exit status 0).  One thread, which takes the last inputs largest file first: c (an
    incompressible 1 MB), then b (smaller on disk, but 16 MP to decode, long
    after c is changed), then c's write, which fails and stops the run
    before a is begun."""
    folder = os.path.join(tmp, f"not-begun-{command}")
    os.makedirs(folder)
    with open(os.path.join(folder, "a.png"), "wb") as f:
        f.write(png(13, 7))
    with open(os.path.join(folder, "b.png"), "wb") as f:
        f.write(png(4000, 4000, [bytes(4000)] * 4000))
    with open(os.path.join(folder, "c.png"), "wb") as f:
        f.write(png(1000, 1000, [os.urandom(1000) for _ in range(1000)]))
    status, listing, lines = rewrite_into_a_full_disk(tool, command, folder)
    failed = [line for line in lines[:-1]
              if re.match(f"lumahist: {re.escape(folder)}/[abc]\\.png: writing .*: "
                          "No space left on device$", line)]
    check(status == "rc=1" and listing.split() == [] and len(lines) == 2 and
          len(failed) == 1 and
          re.search(r"out: stopped: No space left on device; 0 outputs written, 2 inputs not "
                    r"done", lines[-1]) is not None,
          f"{command} into a full disk, the first write failing past an input not begun: "
          f"{status}, files {listing.split()}, {lines}")
    print(f"{command} into a full disk, the first write failing past an input not begun: "
          "its line said, the input not counted as not done")


def group_outputs(tool, corpus, tmp, sanitized):
    # Records to a full device: a clear error and exit 1.
    with open("/dev/full", "w") as full:
        p = subprocess.run(stats_argv(tool, os.path.join(corpus, "png")), stdout=full,
                           stderr=subprocess.PIPE, timeout=TIMEOUT)
    err = p.stderr.decode()
    check(p.returncode == 1 and "no space left on device" in err.lower() and
          err.count("\n") == 1, f"stats > /dev/full: exit {p.returncode} {err!r}")
    print("stats > /dev/full: one line, exit 1")
    help_on_a_full_stdout(tool)
    files_written_whole(tool, corpus, tmp)
    records_on_a_full_disk(tool, tmp)
    never_onto_an_input(tool, tmp)
    report_folder_missing(tool, corpus, tmp)

    commands = rewrite_commands(tool)
    if not commands:
        print("SKIP: no equalize, clahe or overlay subcommand with --out in this build")
        return 77
    inputs = os.path.join(tmp, "in")
    os.makedirs(inputs)
    small = os.path.join(inputs, "a-small.png")
    with open(small, "wb") as f:
        f.write(png(13, 7))
    big = os.path.join(inputs, "b-noise.png")
    with open(big, "wb") as f:
        f.write(noise_png(160, 160))  # ~77 KB raw: larger than the 64 KiB tmpfs
    # Small ones after the big one: they would fit again once its partial
    # file is gone, but a disk that filled up stops the run.
    after = []
    for k in range(4):
        after.append(os.path.join(inputs, f"c-small{k}.png"))
        with open(after[-1], "wb") as f:
            f.write(png(13, 7 + k))
    before = digest_tree(inputs)
    command = commands[0]
    tested = False
    unusable_outputs(tool, commands, inputs, tmp)

    if os.geteuid() != 0:
        ro = os.path.join(tmp, "read-only")
        os.makedirs(ro)
        os.chmod(ro, 0o555)
        rc, out, err = run(rewrite_argv(tool, command, "--out", ro, small, big))
        check(rc == 1 and os.listdir(ro) == [], f"read-only folder: exit {rc}, {os.listdir(ro)}")
        check_one_line_each(err, {ro: ["permission denied"]}, "read-only folder")
        os.chmod(ro, 0o755)
        print(f"{command} into a folder of mode 555: refused once, nothing written")
        tested = True

    def quote(s):
        return "'" + s.replace("'", "'\\''") + "'"

    def in_mount(out_dir, options):
        """(exit status, files made, stderr) of the command writing into a tmpfs."""
        argv = " ".join(quote(a) for a in rewrite_argv(tool, command, "--jobs", "1"))
        names = " ".join(quote(a) for a in [small, big] + after)
        result = in_tiny_mount(f"{argv} --out {out_dir} {names}; echo \"rc=$?\"; "
                               f"find \"$MNT\" -type f", options)
        if result is None:
            return None
        _, out, err = result
        status, _, listing = out.partition("\n")
        return status, sorted(os.path.basename(f) for f in listing.split()), err

    result = in_mount('"$MNT"', "ro,size=64k")
    if result is None:
        print("note: cannot mount a tmpfs here (no user namespaces, not root): "
              "read-only and full mounts not tested")
    else:
        status, files, err = result
        check(status == "rc=1" and files == [], f"read-only mount: {status}, files {files}")
        # One line for the folder, before any input is read (one per input
        # after all were decoded, before).
        lines = error_lines(err)
        check(len(lines) == 1 and "read-only file system" in lines[0].lower() and
              "cannot write the outputs into it" in lines[0],
              f"read-only mount: {lines}")
        status, files, err = in_mount('"$MNT/out"', "size=64k")
        check(status == "rc=1", f"full folder: {status}")
        # The small files whose writes began before the big one's failed
        # are written whole (which, besides the first, depends on how the
        # contexts interleave: one job, but two GPU or CPU contexts); the
        # big one leaves no partial file, and the stop counts what was
        # written, so nothing was written after it.
        stop = re.search(r"out: stopped: No space left on device; (\d+) outputs? written, "
                         r"(\d+) inputs? not done", err)
        smalls = {os.path.basename(p) for p in [small] + after}
        check("a-small.png" in files and set(files) <= smalls and stop is not None and
              int(stop.group(1)) == len(files) and int(stop.group(2)) == 5 - len(files),
              f"full folder: files {files}, {err!r} (a partial file, or the run went on after "
              f"the disk filled up?)")
        check_one_line_each(err, {big: ["no space left on device"]}, "full folder",
                            allowed_extra=["out: stopped: No space left on device; "])
        print(f"{command} into read-only and full (64 KiB) tmpfs mounts: refused, no partial "
              "file, the run stopped at the full disk")
        jpegs_on_a_full_disk(tool, corpus, command)
        each_input_counted_once(tool, tmp, command)
        failure_said_past_an_input_not_begun(tool, tmp, command)
        no_muxer = reads_videos(tool, tmp) and muxer_missing_for_y4m(tool, tmp, command)
        if no_muxer:
            print(f"NOTE: this GStreamer writes no .y4m video ({no_muxer!r}): videos on a "
                  "full disk not checked")
        elif reads_videos(tool, tmp):
            video_on_a_full_disk(tool, tmp, command)
            for each in commands:
                videos_stopped_by_a_full_disk(tool, tmp, each)
        else:
            print("NOTE: this lumahist was built without GStreamer (the sanitizer build is): "
                  "videos on a full disk not checked")
        tested = True
    check(digest_tree(inputs) == before, "the inputs changed")
    return 0 if tested else 77


def main():
    # The tool leaves a stop signal ignored if it starts so (nohup, a job a
    # shell starts in the background): the ones these tests send must reach
    # it whatever this runner was started with.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    for stop in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(stop, signal.SIG_DFL)
    if len(sys.argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    global DECODER, NVJPEG_DECODES
    tool, corpus, group = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2]), sys.argv[3]
    extra = sys.argv[4:]
    sanitized = "--sanitized" in extra
    if "--decoder" in extra:
        i = extra.index("--decoder")
        if i + 1 >= len(extra) or extra[i + 1] not in ("auto", "cpu", "gpu"):
            print("--decoder takes auto, cpu or gpu", file=sys.stderr)
            return 2
        DECODER = extra[i + 1]
        if DECODER == "gpu":
            why = gpu_decoder_usable(tool, corpus)
            if failures:
                return 1
            if why is not None:
                print(f"SKIP: lumahist stats --decoder gpu cannot run here: {why}")
                return 77
    if DECODER == "gpu":
        NVJPEG_DECODES = True
    elif DECODER != "cpu":
        # The default decodes on the GPU where it can: find out as a user would.
        NVJPEG_DECODES = gpu_decoder_usable(tool, corpus) is None
        failures.clear()
    groups = {"stats": group_stats, "limits": group_limits, "special": group_special,
              "rewrite": group_rewrite, "outputs": group_outputs}
    with tempfile.TemporaryDirectory(prefix="lumahist-bad-") as tmp:
        status = groups[group](tool, corpus, tmp, sanitized) or 0
        # Leave nothing unremovable behind.
        for folder, dirs, _ in os.walk(tmp):
            for d in dirs:
                p = os.path.join(folder, d)
                if not os.path.islink(p):
                    os.chmod(p, 0o755)
    if failures:
        print(f"{len(failures)} failure(s)", file=sys.stderr)
        return 1
    return status


if __name__ == "__main__":
    sys.exit(main())
