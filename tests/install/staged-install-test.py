#!/usr/bin/env python3
"""staged-install-test.py: installs this build as a distribution's packaging does
(`meson install --destdir STAGE`), then checks that every file lies where a packager
expects it for the build's prefix and nothing else was installed, that no RPATH or
RUNPATH points into the build folder, and that the installed pieces work
from the stage as a packager's own test runs them (LD_LIBRARY_PATH, GST_PLUGIN_PATH,
PYTHONPATH pointing into it): the tool gives the build tree's records, gst-inspect
finds the element, a program builds from the installed header and lumahist.pc, and
the Python module imports, and bash-completion loads the completion.

Usage: staged-install-test.py --build BUILD --source SOURCE --meson MESON
       --version VERSION --prefix P --bindir D --libdir D --includedir D
       --library shared|static|both [--tool LUMAHIST] [--plugin]
       [--python PYTHON --python-dir D [--python-dir-unsearched]]
       [--man PATH] [--bash-completion PATH] [--cc CC...]
(directories absolute, as this build installs to them without the stage).
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

FAILURES = []


def fail(message):
    FAILURES.append(message)
    print(f"FAIL: {message}")


def run(command, env=None, cwd=None):
    """Runs a command and returns (exit status, stdout, stderr) as text."""
    result = subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True,
                            errors="replace")
    return result.returncode, result.stdout, result.stderr


def staged(stage, path):
    """Where an absolute install path lies in the stage."""
    return os.path.join(stage, os.path.relpath(path, "/"))


def with_env(**changes):
    env = dict(os.environ)
    for key, value in changes.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    return env


def installed_paths(stage):
    """Every file and symbolic link under the stage, as its install path, with
    the target of each link (None for a file)."""
    paths = {}
    for root, dirs, files in os.walk(stage):
        for name in files + [d for d in dirs if os.path.islink(os.path.join(root, d))]:
            full = os.path.join(root, name)
            path = "/" + os.path.relpath(full, stage)
            # Newer meson byte-compiles the module's sources as it installs
            # them (python.bytecompile); what it compiles is not ours to list.
            if os.path.basename(root) == "__pycache__" and name.endswith(".pyc"):
                continue
            paths[path] = os.readlink(full) if os.path.islink(full) else None
    return paths


def expected_paths(args, ext_suffix):
    """What this build must install: path -> the target of a link, None for a file."""
    want = {}
    major = args.version.split(".")[0]
    if args.library in ("shared", "both"):
        want[f"{args.libdir}/liblumahist.so.{args.version}"] = None
        want[f"{args.libdir}/liblumahist.so.{major}"] = f"liblumahist.so.{args.version}"
        want[f"{args.libdir}/liblumahist.so"] = f"liblumahist.so.{major}"
    if args.library in ("static", "both"):
        want[f"{args.libdir}/liblumahist.a"] = None
    want[f"{args.includedir}/lumahist.h"] = None
    want[f"{args.includedir}/lumahist-version.h"] = None
    want[f"{args.libdir}/pkgconfig/lumahist.pc"] = None
    if args.tool:
        want[f"{args.bindir}/lumahist"] = None
    if args.plugin:
        want[f"{args.libdir}/gstreamer-1.0/libgstlumahist.so"] = None
        want[f"{args.includedir}/gstlumahistmeta.h"] = None
    if args.python:
        for name in ("__init__.py", "__init__.pyi", "py.typed", "_lumahist" + ext_suffix):
            want[f"{args.python_dir}/lumahist/{name}"] = None
    for path in (args.man, args.bash_completion):
        if path:
            want[path] = None
    return want


def check_file_list(args, stage, ext_suffix):
    have = installed_paths(stage)
    want = expected_paths(args, ext_suffix)
    for path, target in sorted(want.items()):
        if path not in have:
            fail(f"not installed: {path}")
        elif have[path] != target:
            what = f"a link to {have[path]}" if have[path] else "a file"
            fail(f"{path} is {what}, not {'a link to ' + target if target else 'a file'}")
    for path in sorted(set(have) - set(want)):
        fail(f"installed but not expected here: {path}")
    print(f"{len(have)} files installed under {args.prefix}")


def elf_files(stage):
    for root, _, files in os.walk(stage):
        for name in files:
            full = os.path.join(root, name)
            if os.path.islink(full):
                continue
            with open(full, "rb") as f:
                if f.read(4) == b"\x7fELF":
                    yield full


def dynamic_entries(path, tag):
    """The values of one tag (RPATH, RUNPATH, SONAME) of an ELF file's dynamic section."""
    code, out, err = run(["readelf", "-d", path])
    if code != 0:
        fail(f"readelf -d {path}: {err.strip()}")
        return []
    values = []
    for line in out.splitlines():
        if f"({tag})" in line and "[" in line:
            values.append(line[line.index("[") + 1:line.rindex("]")])
    return values


def check_elf(args, stage):
    if not shutil.which("readelf"):
        fail("readelf not found (binutils), so RPATHs and the soname were not checked")
        return
    # The build folder's, which meson leaves out of what it installs.  Not the
    # source tree's: a libdeflate unpacked there with dpkg -x (.gst-debs/ on
    # the GPU hosts) is reached through an RPATH that the build asks for.
    build = os.path.realpath(args.build)
    for path in elf_files(stage):
        for tag in ("RPATH", "RUNPATH"):
            for value in dynamic_entries(path, tag):
                for entry in value.split(":"):
                    real = os.path.realpath(entry) if entry.startswith("/") else entry
                    if real == build or real.startswith(build + "/"):
                        fail(f"{path}: {tag} {entry} points into the build folder")
    if args.library in ("shared", "both"):
        library = staged(stage, f"{args.libdir}/liblumahist.so.{args.version}")
        if os.path.isfile(library):
            soname = dynamic_entries(library, "SONAME")
            major = args.version.split(".")[0]
            if soname != [f"liblumahist.so.{major}"]:
                fail(f"liblumahist's SONAME is {soname}, not liblumahist.so.{major}")


def check_pkg_config(args, stage, work, lib_env):
    """A program built from the installed header and lumahist.pc alone, as an
    application's build does: the .pc is relocatable, so in the stage it
    names the stage's header and library with no prefix given (it named
    the build's prefix, which pkg-config --define-prefix guessed wrong)."""
    if not shutil.which("pkg-config"):
        print("pkg-config not found: the installed lumahist.pc is not tried")
        return
    env = with_env(PKG_CONFIG_PATH=staged(stage, f"{args.libdir}/pkgconfig"),
                   PKG_CONFIG_LIBDIR=None)
    code, version, err = run(["pkg-config", "--modversion", "lumahist"], env=env)
    if code != 0 or version.strip() != args.version:
        fail(f"pkg-config --modversion lumahist: {version.strip() or err.strip()}")
        return
    if not args.cc:
        return
    code, flags, err = run(["pkg-config", "--cflags", "--libs", "lumahist"], env=env)
    if code != 0:
        fail(f"pkg-config --cflags --libs lumahist: {err.strip()}")
        return
    include = os.path.normpath(staged(stage, args.includedir))
    if include not in {os.path.normpath(f[2:]) for f in flags.split() if f.startswith("-I")}:
        fail(f"the staged lumahist.pc does not name the stage's header folder {include}: "
             f"{flags.strip()}")
        return
    program = os.path.join(work, "embed")
    source = os.path.join(args.source, "tests", "unit", "embed-link.c")
    sanitize = [f"-fsanitize={args.sanitize}"] if args.sanitize != "none" else []
    command = args.cc + ["-std=c99", source] + flags.split() + sanitize + ["-o", program]
    code, out, err = run(command)
    if code != 0:
        fail(f"a program does not build from the installed header and .pc: {' '.join(command)}\n"
             f"{err}")
        return
    code, out, err = run([program], env=lib_env)
    if code != 0:
        fail(f"the program built against the installed library failed: {out}{err}")
    else:
        print(f"built against the installed lumahist.pc: {out.strip()}")


def check_tool(args, stage, lib_env):
    tool = staged(stage, f"{args.bindir}/lumahist")
    code, out, err = run([tool, "--version"], env=lib_env)
    if code != 0 or args.version not in out:
        fail(f"the installed lumahist --version: status {code}: {out}{err}")
        return
    samples = os.path.join(args.source, "samples")
    command = ["stats", "--quiet", "--no-histogram", "--backend", "cpu", "--decoder", "cpu",
               samples]
    code, installed_out, err = run([tool] + command, env=lib_env)
    if code != 0:
        fail(f"the installed lumahist stats on samples/: status {code}: {err}")
        return
    code, built_out, err = run([args.tool] + command)
    records = installed_out.count("\n")
    if code != 0 or installed_out != built_out or records < 8:
        fail(f"the installed tool's {records} records of samples/ differ from the build's")
    else:
        print(f"the installed tool: {out.strip()}, the build's {records} records of samples/")


def check_plugin(args, stage, work, lib_env):
    plugin_dir = f"{args.libdir}/gstreamer-1.0"
    if shutil.which("pkg-config"):
        code, gst_prefix, _ = run(["pkg-config", "--variable=prefix", "gstreamer-1.0"])
        code2, gst_plugins, _ = run(["pkg-config", "--variable=pluginsdir", "gstreamer-1.0"])
        # Installed where GStreamer itself lives, the element must be in its plugin
        # folder, which gst-inspect-1.0 reads without GST_PLUGIN_PATH.
        if code == 0 and code2 == 0 and gst_prefix.strip() == args.prefix:
            if os.path.realpath(gst_plugins.strip()) != os.path.realpath(plugin_dir):
                fail(f"the element is installed to {plugin_dir}, not GStreamer's "
                     f"{gst_plugins.strip()}")
    inspect = shutil.which("gst-inspect-1.0")
    if not inspect:
        print("gst-inspect-1.0 not found (gstreamer1.0-tools): the installed element is not tried")
        return
    env = dict(lib_env)
    env.update(GST_PLUGIN_SYSTEM_PATH=staged(stage, plugin_dir),
               GST_REGISTRY=os.path.join(work, "registry.bin"))
    env.pop("GST_PLUGIN_PATH", None)
    code, out, err = run([inspect, "lumahist"], env=env)
    where = staged(stage, f"{plugin_dir}/libgstlumahist.so")
    if code != 0 or where not in out:
        fail(f"gst-inspect-1.0 lumahist with the staged plugin folder alone: status {code}\n"
             f"{out[-2000:]}{err[-2000:]}")
    else:
        print(f"gst-inspect-1.0 finds the element in {os.path.dirname(where)}")


def check_bash_completion(args, stage):
    """bash-completion's loader finds the completion by the command's name in
    the folder it was installed to, given as one of XDG_DATA_DIRS (as
    /usr/local/share is by default, and /usr/share is bash-completion's own)."""
    loader = "/usr/share/bash-completion/bash_completion"
    folder = os.path.dirname(args.bash_completion)
    if not folder.endswith("/bash-completion/completions") or \
            not folder.startswith(args.prefix.rstrip("/") + "/"):
        fail(f"the completion is installed to {folder}, not a .../bash-completion/completions "
             f"under {args.prefix} that bash-completion reads")
        return
    if not os.path.isfile(loader) or not shutil.which("bash"):
        print(f"{loader} not found (Debian: bash-completion): its loader is not tried")
        return
    data_dir = staged(stage, os.path.dirname(os.path.dirname(folder)))
    env = with_env(XDG_DATA_DIRS=data_dir, BASH_COMPLETION_USER_DIR=os.path.join(stage, "none"))
    code, out, err = run(["bash", "--norc", "--noprofile", "-c",
                          f"source {loader}; __load_completion lumahist && complete -p lumahist"],
                         env=env)
    if code != 0 or "-F" not in out:
        fail(f"bash-completion does not load the completion from {data_dir}: {out}{err}")
    else:
        print(f"bash-completion loads it: {out.strip()}")


def check_python(args, stage, lib_env):
    python_dir = staged(stage, args.python_dir)
    env = dict(lib_env, PYTHONPATH=python_dir)
    script = ("import sys, numpy, lumahist\n"
              "image = numpy.arange(256, dtype=numpy.uint8).reshape(16, 16)\n"
              "stats = lumahist.stats(image, backend='cpu')\n"
              "assert list(stats.histogram) == [1] * 256, 'histogram of a ramp'\n"
              "print(lumahist.__file__, lumahist.__version__)\n")
    code, out, err = run([args.python, "-c", script], env=env, cwd=stage)
    if code != 0 or not out.startswith(python_dir) or args.version not in out:
        fail(f"the installed module does not import from {python_dir}: {out}{err}")
    else:
        print(f"the installed module imports: {out.strip()}")
    # Installed to where this Python imports from, with no PYTHONPATH, once
    # the stage is unpacked into its place: its path, and the site folders that
    # it searches once they exist.
    script = ("import site, sys\n"
              "user = [site.getusersitepackages()] if site.ENABLE_USER_SITE else []\n"
              "print('\\n'.join(sys.path + site.getsitepackages() + user))\n")
    code, out, err = run([args.python, "-c", script], env=with_env(PYTHONPATH=None), cwd="/")
    search = {os.path.realpath(p) for p in out.splitlines() if p}
    if args.python_dir_unsearched:
        print(f"{args.python} searches no folder under {args.prefix} (meson warned)")
    elif os.path.realpath(args.python_dir) not in search:
        fail(f"the module is installed to {args.python_dir}, which {args.python} does not "
             f"search: {sorted(search)}")


def main():
    parser = argparse.ArgumentParser()
    for name in ("build", "source", "meson", "version", "prefix", "bindir", "libdir",
                 "includedir", "library", "tool", "python", "python-dir", "man",
                 "bash-completion"):
        parser.add_argument("--" + name)
    parser.add_argument("--sanitize", default="none")
    parser.add_argument("--plugin", action="store_true")
    parser.add_argument("--python-dir-unsearched", action="store_true")
    parser.add_argument("--cc", nargs=argparse.REMAINDER, default=[])
    args = parser.parse_args()
    for name in ("prefix", "bindir", "libdir", "includedir", "python_dir", "man",
                 "bash_completion"):
        if getattr(args, name):
            setattr(args, name, os.path.normpath(getattr(args, name)))

    ext_suffix = ""
    if args.python:
        code, out, err = run([args.python, "-c",
                              "import sysconfig; print(sysconfig.get_config_var('EXT_SUFFIX'))"])
        ext_suffix = out.strip()

    if not args.meson:
        print("SKIP: no meson on PATH to install with")
        return 77
    with tempfile.TemporaryDirectory() as work:
        stage = os.path.join(work, "stage")
        code, out, err = run([args.meson, "install", "-C", args.build, "--no-rebuild",
                              "--destdir", stage])
        if code != 0:
            print(out, err)
            print(f"FAIL: meson install --destdir {stage}")
            return 1
        # The staged library, not the build folder's, which `meson test` puts
        # on LD_LIBRARY_PATH (the rest stays: GStreamer unpacked by hand, say).
        build = os.path.realpath(args.build)
        kept = [d for d in os.environ.get("LD_LIBRARY_PATH", "").split(":")
                if d and not (os.path.realpath(d) + "/").startswith(build + "/")]
        lib_env = with_env(LD_LIBRARY_PATH=":".join([staged(stage, args.libdir)] + kept))

        check_file_list(args, stage, ext_suffix)
        check_elf(args, stage)
        check_pkg_config(args, stage, work, lib_env)
        if args.tool:
            check_tool(args, stage, lib_env)
        if args.plugin:
            check_plugin(args, stage, work, lib_env)
        if args.python:
            check_python(args, stage, lib_env)
        if args.bash_completion:
            check_bash_completion(args, stage)

    if FAILURES:
        print(f"{len(FAILURES)} failures")
        return 1
    print("OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
