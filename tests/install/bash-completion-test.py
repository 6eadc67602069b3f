#!/usr/bin/env python3
"""bash-completion-test.py LUMAHIST COMPLETION SOURCE_ROOT: sources the bash
completion that the build made in a plain bash (no bash-completion package) and
asks it what it offers, as bash does on TAB (COMP_WORDS, COMP_CWORD): the commands
of `lumahist --help` after `lumahist `, each command's options of its --help after
`lumahist COMMAND --`, the values that a placeholder lists (--decoder=auto|cpu|gpu)
after the option and after `--option=`, folders for DIR, files for PATHs, nothing
for a number; a name with a space or a glob character is offered whole.  The help is read here with its own patterns, not the generator's.
"""
import os
import re
import subprocess
import sys
import tempfile

FAILURES = []
# The options that take one of a few words: their placeholders list them, so
# that the completion offers them.
WORD_OPTIONS = {"stats": ["--format", "--matrix", "--range", "--backend", "--percentile-method",
                          "--decoder", "--video-memory"],
                "equalize": ["--matrix", "--range", "--backend", "--decoder"],
                "overlay": ["--scale"],
                "merge": ["--format"]}
OPTION = re.compile(r"^\s+(?:-(\w), )?--([\w-]+)(?:=(\S+))?\s{2,}\S")


def fail(message):
    FAILURES.append(message)
    print(f"FAIL: {message}")


class Completion:
    def __init__(self, script, cwd):
        self.script = script
        self.cwd = cwd
        found = self.bash("complete -p lumahist")
        match = re.search(r"-F (\S+)", found)
        if not match:
            raise SystemExit(f"FAIL: sourcing {script} registers no function for lumahist: "
                             f"{found!r}")
        self.function = match[1]

    def bash(self, commands):
        result = subprocess.run(["bash", "--norc", "--noprofile", "-c",
                                 f'source "$0" || exit 1\n{commands}', self.script],
                                capture_output=True, text=True, cwd=self.cwd)
        if result.returncode != 0 or result.stderr:
            fail(f"bash: status {result.returncode}: {result.stderr.strip()}")
        return result.stdout

    def offers(self, words):
        """What completing the last word of words offers, as bash splits a
        line (COMP_WORDBREAKS has '=', so --opt=v is three words)."""
        quoted = " ".join("'" + w + "'" for w in words)
        out = self.bash(f"COMP_WORDS=({quoted}); COMP_CWORD={len(words) - 1}\n"
                        f"COMP_LINE='{''.join(words)}'; COMP_POINT=${{#COMP_LINE}}\n"
                        f"{self.function}\n"
                        'printf "%s\\n" "${COMPREPLY[@]}"')
        return set(line for line in out.splitlines() if line)


def options_of(help_text):
    """(short, long, placeholder) of each option line of a --help."""
    return [m.groups() for m in map(OPTION.match, help_text.splitlines()) if m]


def expect(what, got, want):
    missing, extra = sorted(set(want) - got), sorted(got - set(want))
    if missing or extra:
        fail(f"{what}: misses {missing}, offers {extra} besides")


def check_odd_names(script):
    """Names bash must not split at spaces nor expand as globs: each one word."""
    with tempfile.TemporaryDirectory() as folder:
        for name in ("my shot.png", "[x].png", "x.png"):
            open(os.path.join(folder, name), "wb").close()
        os.mkdir(os.path.join(folder, "my photos"))
        completion = Completion(script, folder)
        expect("lumahist stats my (a space in names)",
               completion.offers(["lumahist", "stats", "my"]), ["my shot.png", "my photos"])
        expect("lumahist stats [ (a glob in a name)",
               completion.offers(["lumahist", "stats", "["]), ["[x].png"])
        expect("lumahist equalize --out my (a folder with a space)",
               completion.offers(["lumahist", "equalize", "--out", "my"]), ["my photos"])
        expect("lumahist equalize --save-lut my (a file with a space)",
               completion.offers(["lumahist", "equalize", "--save-lut", "my"]),
               ["my shot.png", "my photos"])


def main():
    tool, script, source = map(os.path.abspath, sys.argv[1:4])

    def help_of(*command):
        return subprocess.run([tool, *command, "--help"], capture_output=True, check=True,
                              text=True).stdout

    completion = Completion(script, source)
    top = help_of()
    commands = re.findall(r"^  ([a-z]\w*)\s{2,}\S", top.split("\nCommands:\n", 1)[1], re.M)
    expect("lumahist ", completion.offers(["lumahist", ""]), commands)
    expect("lumahist s", completion.offers(["lumahist", "s"]),
           [c for c in commands if c.startswith("s")])
    top_options = options_of(top)
    expect("lumahist -", completion.offers(["lumahist", "-"]),
           [n for s, l, _ in top_options for n in ([f"-{s}"] if s else []) + [f"--{l}"]])

    checked = 0
    missing = os.path.join(source, "no-such-file")
    for command in commands:
        options = options_of(help_of(command))
        worded = {f"--{l}" for _, l, arg in options if arg and "|" in arg}
        for name in WORD_OPTIONS.get(command, []):
            if name not in worded:
                fail(f"lumahist {command} --help lists no values for {name}")
        expect(f"lumahist {command} --", completion.offers(["lumahist", command, "--"]),
               [f"--{l}" for _, l, _ in options])
        expect(f"lumahist {command} samples --",
               completion.offers(["lumahist", command, "samples", "--"]),
               [f"--{l}" for _, l, _ in options])
        for short, long, arg in options:
            if not arg or "|" not in arg:
                continue
            choices = arg.split("|")
            # Each value offered is one the tool takes: not a usage error (2),
            # whatever else it says of a missing file (1).
            out_dir = ["--out", missing] if any(l == "out" for _, l, _ in options) else []
            for choice in choices:
                taken = subprocess.run([tool, command, *out_dir, f"--{long}={choice}", missing],
                                       capture_output=True, text=True)
                if taken.returncode == 2:
                    fail(f"lumahist {command} --{long}={choice}, as --help lists it: "
                         f"{taken.stderr.strip()}")
            for name in ([f"-{short}"] if short else []) + [f"--{long}"]:
                expect(f"lumahist {command} {name} ",
                       completion.offers(["lumahist", command, "samples", name, ""]), choices)
            expect(f"lumahist {command} --{long}=",
                   completion.offers(["lumahist", command, f"--{long}", "=", ""]), choices)
            expect(f"lumahist {command} --{long}={choices[0][0]}",
                   completion.offers(["lumahist", command, f"--{long}", "=", choices[0][0]]),
                   [c for c in choices if c.startswith(choices[0][0])])
            checked += 1
        for short, long, arg in options:
            if arg == "DIR":
                got = completion.offers(["lumahist", command, f"--{long}", "sa"])
                expect(f"lumahist {command} --{long} sa (folders)", got, ["samples"])
            elif arg == "N":
                got = completion.offers(["lumahist", command, f"--{long}", ""])
                expect(f"lumahist {command} --{long} (a number)", got, [])
        # PATHs: files and folders, from the source root.
        expect(f"lumahist {command} samples/sky", completion.offers(
            ["lumahist", command, "samples/sky"]), ["samples/sky-high-key.jpg"])
    if checked == 0:
        fail("no option of any command lists its values")
    check_odd_names(script)

    if FAILURES:
        print(f"{len(FAILURES)} failures")
        return 1
    print(f"{len(commands)} commands, their options and {checked} options' values completed "
          "as their --help says")
    return 0


if __name__ == "__main__":
    sys.exit(main())
