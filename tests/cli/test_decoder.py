#!/usr/bin/env python3
"""test_decoder.py: `--decoder auto|cpu|gpu` of the CLI, and the "decoder"
field and column of `lumahist stats`.

Usage: test_decoder.py LUMAHIST SAMPLES_DIR GROUP [--variants SCRIPT --python PYTHON]

GROUP is one of:
  cpu   runs anywhere: --decoder cpu names libjpeg-turbo and libpng in jsonl
        and CSV, right after the backend; bad values and --decoder gpu with
        --backend cpu are usage errors; --decoder gpu without a device (no
        CUDA_VISIBLE_DEVICES) fails with one line and writes no record;
        --decoder auto without a device decodes on the CPU; the rewriting
        commands take --decoder cpu and auto, and refuse --decoder gpu with
        --backend cpu (exit 2) and without a device (one line, exit 1,
        nothing written).
  gpu   needs a GPU and nvJPEG (else exit 77, saying why): --decoder gpu
        against --decoder cpu on samples/ and on the JPEG variants that
        SCRIPT (tests/io/make-jpeg-variants.py, run by PYTHON, which needs
        OpenCV) writes: the same files in the same order, the same sizes and
        counts, the same error lines for the files both refuse, nvjpeg-*
        for the JPEGs the GPU takes and libjpeg-turbo for those it is not
        given (folder cpu-fallback), mean within 0.5 code values and median
        within 1 of libjpeg-turbo's; --decoder auto over a few JPEGs leaves
        nvJPEG unstarted (the CPU is done first) and says so, and over
        12000 JPEGs shares them between nvJPEG and libjpeg-turbo, each
        record naming its decoder and --timing counting the CPU's.
Only the Python standard library is used here.
"""
import csv
import io
import json
import os
import subprocess
import sys
import tempfile

LUMAHIST = None
FAILURES = []
TIMEOUT = 300

CPU_DECODERS = {"libjpeg-turbo", "libpng"}
GPU_DECODERS = {"nvjpeg-hardware", "nvjpeg-gpu"}
NO_GPU_PREFIX = "lumahist: --decoder gpu: "
CPU_FALLBACK = "cpu-fallback"  # make-jpeg-variants.py's folder of what nvJPEG is not given

# How far nvJPEG's statistics may be from libjpeg-turbo's: the IDCTs round
# differently, by a code value or two at a few pixels.
MEAN_TOLERANCE = 0.5
MEDIAN_TOLERANCE = 1


def fail(message):
    FAILURES.append(message)
    print("FAIL:", message)


def check(condition, message):
    if not condition:
        fail(message)
    return condition


def run(*args, env=None):
    """(exit status, stdout, stderr) of lumahist with args; env is added to
    the environment."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    try:
        p = subprocess.run([LUMAHIST, *args], capture_output=True, env=full_env, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        fail(f"lumahist {' '.join(args)}: timed out after {TIMEOUT} s")
        return 124, "", ""
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def jsonl(out, what):
    records = []
    for line in out.splitlines():
        try:
            records.append(json.loads(line))
        except ValueError as e:
            fail(f"{what}: not a JSON line ({e}): {line[:200]}")
    return records


def image_files(top):
    """The image files under top in lumahist's order: each folder's entries
    in byte order, a folder descended where its name sorts."""
    found = []
    for name in sorted(os.listdir(os.fsencode(top))):
        path = os.path.join(top, os.fsdecode(name))
        if os.path.isdir(path):
            found += image_files(path)
        elif os.path.isfile(path) and path.lower().endswith((".png", ".jpg", ".jpeg")):
            found.append(path)
    return found


def is_jpeg(path):
    return path.lower().endswith((".jpg", ".jpeg"))


def cpu_decoder_for(path):
    return "libjpeg-turbo" if is_jpeg(path) else "libpng"


def check_decoder_after_backend(record, what):
    keys = list(record)
    if check("decoder" in keys and "backend" in keys, f"{what}: keys {keys}"):
        check(keys.index("decoder") == keys.index("backend") + 1,
              f"{what}: decoder is not right after backend: {keys}")


def no_device_env():
    return {"CUDA_VISIBLE_DEVICES": ""}


# --------------------------------------------------------------------------
# cpu: what runs without a GPU

def group_cpu(samples, tmp, args):
    files = image_files(samples)
    if not check(files and any(is_jpeg(f) for f in files) and
                 any(not is_jpeg(f) for f in files),
                 f"{samples} holds no JPEG and PNG to test with"):
        return

    # jsonl: the decoder of each file, right after the backend.
    rc, out, err = run("stats", "--decoder", "cpu", "--no-histogram", samples)
    check(rc == 0 and err == "", f"stats --decoder cpu: exit {rc}, {err!r}")
    records = jsonl(out, "stats --decoder cpu")
    check([r.get("path") for r in records] == files,
          f"stats --decoder cpu: records for {[r.get('path') for r in records]}")
    for r in records:
        check_decoder_after_backend(r, f"jsonl {r.get('path')}")
        check(r.get("decoder") == cpu_decoder_for(r["path"]),
              f"--decoder cpu: {r['path']} says decoder {r.get('decoder')!r}")

    # CSV: a decoder column right after backend, the same values.
    rc, out, err = run("stats", "--decoder", "cpu", "--format", "csv", "--no-histogram", samples)
    rows = list(csv.reader(io.StringIO(out, newline="")))
    if check(rc == 0 and rows, f"stats --format csv --decoder cpu: exit {rc}, {err!r}"):
        header = rows[0]
        if check("decoder" in header and "backend" in header and
                 header.index("decoder") == header.index("backend") + 1,
                 f"csv header: no decoder column right after backend: {header}"):
            column = header.index("decoder")
            path_column = header.index("path")
            check(len(rows) - 1 == len(files), f"csv: {len(rows) - 1} rows for {len(files)} files")
            for row in rows[1:]:
                check(len(row) == len(header) and row[column] == cpu_decoder_for(row[path_column]),
                      f"csv: row {row[:10]}")

    # Usage errors: exit 2, nothing on stdout, a message on stderr.
    jpeg = next(f for f in files if is_jpeg(f))
    for bad in (["--decoder", "bogus"], ["--decoder", ""], ["--decoder", "GPU"],
                ["--decoder", "gpu", "--backend", "cpu"],
                ["--backend", "cpu", "--decoder", "gpu"]):
        rc, out, err = run("stats", *bad, jpeg)
        check(rc == 2 and out == "" and err.strip() != "",
              f"stats {' '.join(bad)}: exit {rc}, stdout {out!r}, stderr {err!r}")
        if bad[1] == "bogus":
            check("decoder" in err, f"--decoder bogus: the message does not name --decoder: "
                  f"{err!r}")
    rc, out, err = run("stats", jpeg, "--decoder")
    check(rc == 2 and out == "", f"stats --decoder without a value: exit {rc}")

    # --decoder gpu where no device is visible: one line, exit 1, no record,
    # no CSV header, no --output file.
    for fmt in ("jsonl", "csv"):
        rc, out, err = run("stats", "--decoder", "gpu", "--format", fmt, samples,
                           env=no_device_env())
        lines = err.splitlines()
        check(rc == 1 and out == "" and len(lines) == 1 and lines[0].startswith(NO_GPU_PREFIX) and
              len(lines[0]) > len(NO_GPU_PREFIX),
              f"--decoder gpu without a device ({fmt}): exit {rc}, stdout {out[:200]!r}, "
              f"stderr {err!r}")
    output = os.path.join(tmp, "records.jsonl")
    rc, out, err = run("stats", "--decoder", "gpu", "--output", output, samples,
                       env=no_device_env())
    check(rc == 1 and (not os.path.exists(output) or os.path.getsize(output) == 0),
          f"--decoder gpu --output without a device: exit {rc}, output written")
    print(f"--decoder gpu without a device: {err.strip()}")

    # --decoder auto (and no --decoder at all) without a device: the CPU
    # decoders, the same records as --decoder cpu (whose backend may have
    # been CUDA, with the same numbers).
    def but_backend(rs):
        return [{k: v for k, v in r.items() if k != "backend"} for r in rs]

    for extra in (["--decoder", "auto"], []):
        rc, out, err = run("stats", *extra, "--no-histogram", samples, env=no_device_env())
        got = jsonl(out, f"stats {extra} without a device")
        check(rc == 0 and err == "", f"stats {extra} without a device: exit {rc}, {err!r}")
        check(got and all(r.get("backend") == "cpu" for r in got),
              f"stats {extra} without a device: backends {[r.get('backend') for r in got]}")
        check(but_backend(got) == but_backend(records),
              f"stats {extra} without a device: records differ from --decoder cpu's")

    # The rewriting commands take --decoder cpu (and auto) and write every image.
    for command in ("equalize", "clahe", "overlay"):
        rc, out, err = run(command, "--help")
        if rc != 0:
            print(f"note: no {command} command in this build")
            continue
        check("--decoder" in out, f"{command} --help does not describe --decoder")
        for decoder in ("cpu", "auto"):
            dest = os.path.join(tmp, f"{command}-{decoder}")
            rc, out, err = run(command, "--decoder", decoder, "--out", dest, samples,
                               env=no_device_env() if decoder == "auto" else None)
            made = image_files(dest) if os.path.isdir(dest) else []
            check(rc == 0 and len(made) == len(files),
                  f"{command} --decoder {decoder}: exit {rc}, {len(made)} of {len(files)} "
                  f"images written, {err!r}")
        rc, out, err = run(command, "--decoder", "bogus", "--out", os.path.join(tmp, "x"),
                           samples)
        check(rc == 2 and out == "", f"{command} --decoder bogus: exit {rc}")
        # --decoder gpu: with --backend cpu a usage error; without a device
        # one line saying why, exit 1, nothing written.
        dest = os.path.join(tmp, f"{command}-gpu")
        rc, out, err = run(command, "--decoder", "gpu", "--backend", "cpu", "--out", dest, samples)
        check(rc == 2 and "--backend cpu" in err and not os.path.exists(dest),
              f"{command} --decoder gpu --backend cpu: exit {rc}, {err!r}")
        rc, out, err = run(command, "--decoder", "gpu", "--out", dest, samples,
                           env=no_device_env())
        lines = err.splitlines()
        made = image_files(dest) if os.path.isdir(dest) else []
        check(rc == 1 and len(lines) == 1 and lines[0].startswith(NO_GPU_PREFIX) and not made,
              f"{command} --decoder gpu without a device: exit {rc}, {len(made)} written, "
              f"{err!r}")
    rc, out, err = run("stats", "--help")
    check("--decoder" in out, "stats --help does not describe --decoder")


# --------------------------------------------------------------------------
# gpu: nvJPEG against libjpeg-turbo through the CLI

def gpu_usable(jpeg):
    """None when --decoder gpu decodes a JPEG here; else why not (the tool's
    documented one line).  Anything else is a failure."""
    rc, out, err = run("stats", "--decoder", "gpu", "--no-histogram", jpeg)
    if rc == 0:
        return None
    check(rc == 1 and out == "" and err.startswith(NO_GPU_PREFIX) and err.count("\n") == 1,
          f"--decoder gpu where it cannot run: exit {rc}, stdout {out!r}, stderr {err!r}")
    return err[len(NO_GPU_PREFIX):].strip() if err.startswith(NO_GPU_PREFIX) else err.strip()


def compare_decoders(top, what):
    """--decoder gpu against --decoder cpu over a folder; returns how many
    files nvJPEG decoded."""
    runs = {}
    noted = {}  # --verbose's reasons for the JPEGs the CPU decoded after all
    for decoder in ("cpu", "gpu"):
        rc, out, err = run("stats", "--decoder", decoder, "--no-histogram", "--verbose", top)
        lines = []
        for line in err.splitlines():
            if line.startswith("lumahist: using the "):
                continue
            if decoder == "gpu" and "decoded by libjpeg-turbo, not nvJPEG: " in line:
                path, _, reason = line[len("lumahist: "):].partition(": decoded by")
                noted[path] = reason
                continue
            lines.append(line)
        runs[decoder] = rc, jsonl(out, f"{what} --decoder {decoder}"), sorted(lines)
    (rc_cpu, cpu, err_cpu), (rc_gpu, gpu, err_gpu) = runs["cpu"], runs["gpu"]
    check(rc_cpu == rc_gpu, f"{what}: exit {rc_cpu} with --decoder cpu, {rc_gpu} with gpu")
    check(err_cpu == err_gpu, f"{what}: error lines differ:\ncpu: {err_cpu}\ngpu: {err_gpu}")
    cpu_paths, gpu_paths = [r.get("path") for r in cpu], [r.get("path") for r in gpu]
    if not check(cpu_paths == gpu_paths, f"{what}: records for other files or in another "
                 f"order: {sorted(set(cpu_paths) ^ set(gpu_paths))}"):
        return 0
    on_gpu, worst_mean, worst_median = 0, 0.0, 0
    counts = {}
    for c, g in zip(cpu, gpu):
        path = c["path"]
        check_decoder_after_backend(g, f"{what} {path}")
        for field in ("width", "height", "count", "bit_depth"):
            check(c[field] == g[field], f"{what}: {path}: {field} {g[field]} on the GPU decoder, "
                  f"{c[field]} on the CPU's")
        check(c.get("decoder") == cpu_decoder_for(path),
              f"{what}: {path}: --decoder cpu says {c.get('decoder')!r}")
        decoder = g.get("decoder")
        counts[decoder] = counts.get(decoder, 0) + 1
        if not is_jpeg(path):
            check(decoder == "libpng", f"{what}: {path}: a PNG said decoder {decoder!r}")
        elif os.path.basename(os.path.dirname(path)) == CPU_FALLBACK:
            check(decoder == "libjpeg-turbo",
                  f"{what}: {path}: nvJPEG is not to be given it, but it says {decoder!r}")
        elif decoder == "libjpeg-turbo" and path in noted:
            # nvJPEG refused it at decode time (progressive with restart
            # intervals on the hybrid backend, say): the CPU decoded it, and
            # --verbose said why.
            print(f"note: {what}: {path}: nvJPEG gave it back: {noted[path]}")
        else:
            check(decoder in GPU_DECODERS, f"{what}: {path}: decoder {decoder!r}, not nvJPEG")
        if decoder in GPU_DECODERS:
            on_gpu += 1
        mean_diff = abs(g["mean"] - c["mean"])
        median_diff = abs(g["median"] - c["median"])
        worst_mean, worst_median = max(worst_mean, mean_diff), max(worst_median, median_diff)
        check(mean_diff <= MEAN_TOLERANCE,
              f"{what}: {path}: mean {g['mean']} ({decoder}) against {c['mean']} (libjpeg-turbo)")
        check(median_diff <= MEDIAN_TOLERANCE,
              f"{what}: {path}: median {g['median']} ({decoder}) against {c['median']}")
        if decoder not in GPU_DECODERS:
            # The same decoder on both runs: the same numbers.  Only where
            # the frame was analysed may differ: backend=auto sends each
            # frame in pageable memory to the side it measured cheaper.
            differ = sorted(k for k in set(c) | set(g)
                            if k not in ("decoder", "backend") and c.get(k) != g.get(k))
            check(not differ,
                  f"{what}: {path}: decoded by {decoder} both times, yet the records differ in "
                  + ", ".join(f"{k} ({c.get(k)!r} against {g.get(k)!r})" for k in differ))
    print(f"{what}: {len(cpu)} records, decoders {counts}; largest differences from "
          f"libjpeg-turbo: mean {worst_mean:.4f}, median {worst_median}")
    return on_gpu


def auto_shares(jpegs, tmp):
    """--decoder auto on a folder of many JPEGs: the CPU decodes some beside
    nvJPEG (all while nvJPEG starts); every record says which, the CPU's are
    libjpeg-turbo's numbers exactly, nvJPEG's within the bound, and --timing
    counts the CPU's.  The samples are small: 16 cores decode several
    thousand of them while nvJPEG starts, so the folder holds many more."""
    # fog-pier-gray.jpg always goes to the CPU (gray with 2x2 sampling).
    takes = [j for j in jpegs if os.path.basename(j) != "fog-pier-gray.jpg"]
    folder = os.path.join(tmp, "auto-shares")
    os.makedirs(folder, exist_ok=True)
    copies = 12000
    for i in range(copies):
        source = takes[i % len(takes)]
        target = os.path.join(folder, f"{i:05d}-{os.path.basename(source)}")
        if not os.path.exists(target):
            os.link(source, target)
    cpu_runs = {}
    for source in takes:
        rc, out, err = run("stats", "--decoder", "cpu", "--no-histogram", source)
        cpu_runs[os.path.basename(source)] = jsonl(out, f"--decoder cpu {source}")[0]
    rc, out, err = run("stats", "--decoder", "auto", "--no-histogram", "--timing", folder)
    got = jsonl(out, "--decoder auto on a folder")
    if not check(rc == 0 and len(got) == copies, f"--decoder auto on {copies} JPEGs: exit {rc}, "
                 f"{len(got)} records: {err[-2000:]}"):
        return
    counts = {}
    for record in got:
        name = os.path.basename(record["path"]).split("-", 1)[1]
        reference = cpu_runs[name]
        decoder = record.get("decoder")
        counts[decoder] = counts.get(decoder, 0) + 1
        if decoder == "libjpeg-turbo":
            # Those decoded while nvJPEG started were analysed on the CPU
            # (backend "cpu"): the same numbers.
            check({**record, "path": reference["path"], "backend": reference["backend"]} ==
                  reference and record["backend"] in ("cpu", "cuda"),
                  f"--decoder auto: {record['path']}: decoded by libjpeg-turbo, yet not the "
                  f"numbers of --decoder cpu")
        else:
            check(decoder in GPU_DECODERS, f"--decoder auto: {record['path']}: decoder {decoder!r}")
            check(abs(record["mean"] - reference["mean"]) <= MEAN_TOLERANCE,
                  f"--decoder auto: {record['path']}: mean {record['mean']} against "
                  f"{reference['mean']}")
    shared = None
    for line in err.splitlines():
        if "JPEGs decoded on the CPU beside it" in line:
            shared = int(line.rsplit(";", 1)[1].split()[0])
    check(shared == counts.get("libjpeg-turbo", 0),
          f"--decoder auto: --timing says {shared} JPEGs decoded on the CPU beside nvJPEG, the "
          f"records {counts}")
    check(any(d in GPU_DECODERS for d in counts), f"--decoder auto: nothing on nvJPEG: {counts}")
    check(counts.get("libjpeg-turbo", 0) > 0, f"--decoder auto: nothing on the CPU: {counts}")
    on_cpu = sum(r.get("backend") == "cpu" for r in got)
    check(on_cpu > 0, "--decoder auto: no image analysed on the CPU while nvJPEG started")
    print(f"--decoder auto on {copies} JPEGs: decoders {counts}, {on_cpu} analysed on the CPU "
          f"while nvJPEG started")


def group_gpu(samples, tmp, args):
    jpegs = [f for f in image_files(samples) if is_jpeg(f)]
    if not jpegs:
        print(f"SKIP: no JPEG in {samples}")
        return 77
    why = gpu_usable(jpegs[0])
    if FAILURES:
        return 1
    if why is not None:
        print(f"SKIP: --decoder gpu cannot run here: {why}")
        return 77

    on_gpu = compare_decoders(samples, "samples")
    # fog-pier-gray.jpg is gray with 2x2 sampling claimed, which the tool
    # keeps from nvJPEG (it misplaces such blocks): every other one goes.
    check(on_gpu >= len(jpegs) - 1,
          f"samples: {on_gpu} of {len(jpegs)} JPEGs decoded by nvJPEG")

    # auto on one JPEG, or a few: the CPU decodes them in less time than
    # nvJPEG takes to start (most of a second), so nvJPEG is not started
    # (--timing has no GPU decoding line), and --verbose says why.
    for files in (jpegs[:1], jpegs):
        rc, out, err = run("stats", "--decoder", "auto", "--verbose", "--timing",
                           "--no-histogram", *files)
        got = jsonl(out, "--decoder auto")
        check(rc == 0 and len(got) == len(files) and
              all(r.get("decoder") == "libjpeg-turbo" for r in got) and
              "less time than nvJPEG takes to start" in err and "GPU decoding (nvJPEG)" not in err,
              f"--decoder auto on {len(files)} JPEG(s): {[r.get('decoder') for r in got]}: "
              f"{err[-1000:]}")
    auto_shares(jpegs, tmp)
    # The CSV column on the GPU decoder.
    rc, out, err = run("stats", "--decoder", "gpu", "--format", "csv", "--no-histogram", jpegs[0])
    rows = list(csv.reader(io.StringIO(out, newline="")))
    check(rc == 0 and len(rows) == 2 and "decoder" in rows[0] and
          rows[1][rows[0].index("decoder")] in GPU_DECODERS, f"csv --decoder gpu: {rows}")

    if not (args.get("variants") and args.get("python")):
        print("note: no --variants SCRIPT --python PYTHON: the generated variants not checked")
        return 0
    variants = os.path.join(tmp, "variants")
    p = subprocess.run([args["python"], args["variants"], "--samples", samples, variants],
                       capture_output=True, text=True, timeout=TIMEOUT)
    print(p.stdout, end="")
    if p.returncode == 77:
        print(f"note: the variants cannot be made here ({p.stdout.strip()}); samples only")
        return 0
    if not check(p.returncode == 0, f"make-jpeg-variants.py: exit {p.returncode}: {p.stderr}"):
        return 1
    on_gpu = compare_decoders(variants, "variants")
    check(on_gpu > 0, "variants: nothing decoded by nvJPEG")

    # --verbose says why each file kept from nvJPEG went to libjpeg-turbo.
    fallback = os.path.join(variants, CPU_FALLBACK)
    if os.path.isdir(fallback):
        rc, out, err = run("stats", "--decoder", "gpu", "--verbose", "--no-histogram", fallback)
        for r in jsonl(out, "--verbose cpu-fallback"):
            check(r["path"] in err,
                  f"--verbose: nothing said of why {r['path']} was not decoded by nvJPEG: {err!r}")
    return 0


GROUPS = {"cpu": group_cpu, "gpu": group_gpu}


def main():
    global LUMAHIST
    argv = sys.argv[1:]
    args = {}
    for option in ("--variants", "--python"):
        if option in argv:
            i = argv.index(option)
            if i + 1 >= len(argv):
                print(__doc__)
                return 2
            args[option[2:]] = argv[i + 1]
            del argv[i:i + 2]
    if len(argv) != 3 or argv[2] not in GROUPS:
        print(__doc__)
        return 2
    LUMAHIST, samples, group = os.path.abspath(argv[0]), os.path.abspath(argv[1]), argv[2]
    with tempfile.TemporaryDirectory(prefix="lumahist-decoder-") as tmp:
        status = GROUPS[group](samples, tmp, args) or 0
    if FAILURES:
        print(f"{len(FAILURES)} check(s) failed")
        return 1
    if status == 0:
        print(f"{group}: all checks passed")
    return status


if __name__ == "__main__":
    sys.exit(main())
