#!/usr/bin/env python3
"""man-page-test.py LUMAHIST MAN_PAGE: the man page that the build made renders
without a groff warning, and says what the tool's --help says: each command of
`lumahist --help` has its section, and every option of the top level's and each
command's --help is in its part of the page, with its value's placeholder and its
description.  The help is read here with its own patterns, not the generator's.
SKIP (77) without groff (Debian: groff-base).
"""
import re
import shutil
import subprocess
import sys

FAILURES = []
OPTION = re.compile(r"^\s+((?:-\w, )?--[\w-]+(?:=\S+)?)\s{2,}(\S.*)$")


def fail(message):
    FAILURES.append(message)
    print(f"FAIL: {message}")


def normalized(text):
    """Text as compared: groff's typographic quotes and dashes as ASCII, one
    space for any run of white space."""
    for typeset, plain in (("\u2018", "`"), ("\u2019", "'"), ("\u2010", "-"), ("\u2212", "-")):
        text = text.replace(typeset, plain)
    return " ".join(text.split())


def help_of(tool, *command):
    return subprocess.run([tool, *command, "--help"], capture_output=True, check=True,
                          text=True).stdout


def main():
    tool, page = sys.argv[1:3]
    groff = shutil.which("groff")
    if not groff:
        print("SKIP: groff is not installed (Debian: groff-base)")
        return 77
    lint = subprocess.run([groff, "-man", "-Tutf8", "-ww", "-z", page], capture_output=True,
                          text=True)
    if lint.returncode != 0 or lint.stderr:
        fail(f"groff warns on {page}: {lint.stderr}")
    # Wide lines and no bold or underline, so that an option's line is whole.
    rendered = subprocess.run([groff, "-man", "-Tutf8", "-P-cbou", "-rLL=300n", page],
                              capture_output=True, check=True, text=True).stdout

    top = help_of(tool)
    commands = re.findall(r"^  ([a-z]\w*)\s{2,}\S", top.split("\nCommands:\n", 1)[1], re.M)
    if not commands:
        fail("lumahist --help lists no command")
    # The page's parts: the top level's before the first command's section.
    parts = re.split(r"^ {3}lumahist (\w+)$", rendered, flags=re.M)
    sections = {"": parts[0]}
    sections.update(zip(parts[1::2], parts[2::2]))
    version = subprocess.run([tool, "--version"], capture_output=True, check=True,
                             text=True).stdout.strip()
    if version not in rendered:
        fail(f"the page does not say '{version}'")

    # The top level's exit status and environment have sections of their own,
    # as man pages have them, with every variable the help names.
    for word, title in (("Exit status:", "EXIT STATUS"), ("Environment:", "ENVIRONMENT")):
        said = re.search(rf"^{word}(.*?)(?=^\S|\Z)", top, re.M | re.S)
        section = re.search(rf"^{title}\n(.*?)(?=^\S|\Z)", rendered, re.M | re.S)
        if not said or not section:
            fail(f"'{word}' in lumahist --help: {bool(said)}; section {title}: {bool(section)}")
        elif normalized(said.group(1)) != normalized(section.group(1)):
            fail(f"section {title} says {normalized(section.group(1))!r}, the help "
                 f"{normalized(said.group(1))!r}")
    for variable in ("CUDA_VISIBLE_DEVICES", "CUDA_HOME", "LUMAHIST_TRACE"):
        if variable not in top:
            fail(f"lumahist --help does not name {variable}")

    checked = 0
    for command in [""] + commands:
        if command not in sections:
            fail(f"the page has no section 'lumahist {command}'")
            continue
        section = normalized(sections[command])
        for line in help_of(tool, *([command] if command else [])).splitlines():
            match = OPTION.match(line)
            if not match:
                continue
            names, description = match.groups()
            entry = normalized(f"{names} {description}")
            checked += 1
            if entry not in section:
                fail(f"'lumahist {command}' --help's option is not in its part of the page: "
                     f"{entry}")
    if checked < 20:
        fail(f"only {checked} options found in the helps")
    if FAILURES:
        print(f"{len(FAILURES)} failures")
        return 1
    print(f"{checked} options of {len(commands)} commands and the top level, all in the page")
    return 0


if __name__ == "__main__":
    sys.exit(main())
