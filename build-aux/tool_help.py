"""tool_help.py: the lumahist tool's --help texts read into its commands and their
options, for the man page (make-man-page.py) and the bash completion
(make-bash-completion.py) that the build makes from them, so that neither can say
other than the tool.

A help text is GOption's: blocks parted by blank lines, one "Usage:" block, option
groups (a title ending in ':' and lines "  -x, --name=ARG   description"), the
top level's "Commands:" block ("  name   summary"), and paragraphs of text.  A
block that starts as an option group or the command list but has a line of
neither shape is an error, so that a change of format stops the build rather
than leaving options out.
"""
import re
import subprocess

OPTION_LINE = re.compile(r"^  (?:-(?P<short>\w), )?--(?P<long>[\w-]+)(?:=(?P<arg>\S+))?"
                         r"\s{2,}(?P<description>\S.*)$")
COMMAND_LINE = re.compile(r"^  (?P<name>[a-z][\w-]*)\s{2,}(?P<summary>\S.*)$")


class HelpFormatError(Exception):
    pass


class Option:
    def __init__(self, short, long, arg, description):
        self.short = short  # one letter, or None
        self.long = long  # without the dashes
        self.arg = arg  # the value's placeholder (FILE, auto|cpu|gpu), or None
        self.description = description

    def names(self):
        return ([f"-{self.short}"] if self.short else []) + [f"--{self.long}"]

    def choices(self):
        """The values a placeholder such as auto|cpu|gpu lists, else []."""
        return self.arg.split("|") if self.arg and "|" in self.arg else []


class Help:
    """One --help: usage lines, then blocks in order, each ("text", [lines]),
    ("options", title, [Option]) or ("commands", [(name, summary)])."""

    def __init__(self):
        self.usage = []
        self.blocks = []

    def options(self):
        return [o for b in self.blocks if b[0] == "options" for o in b[2]]

    def commands(self):
        return [c for b in self.blocks if b[0] == "commands" for c in b[1]]

    def text(self):
        """The paragraphs of text, each a list of lines."""
        return [b[1] for b in self.blocks if b[0] == "text"]


def parse(text):
    parsed = Help()
    for block in re.split(r"\n\s*\n", text.strip("\n")):
        lines = block.split("\n")
        if lines[0] == "Usage:":
            parsed.usage = [line.strip() for line in lines[1:]]
        elif lines[0].endswith(":") and len(lines) > 1 and lines[1].startswith("  -"):
            options = []
            for line in lines[1:]:
                match = OPTION_LINE.match(line)
                if not match:
                    raise HelpFormatError(f"not an option line in '{lines[0]}': {line!r}")
                options.append(Option(**match.groupdict()))
            parsed.blocks.append(("options", lines[0][:-1], options))
        elif lines[0] == "Commands:":
            commands = []
            for line in lines[1:]:
                match = COMMAND_LINE.match(line)
                if not match:
                    raise HelpFormatError(f"not a command line: {line!r}")
                commands.append((match["name"], match["summary"]))
            parsed.blocks.append(("commands", commands))
        else:
            parsed.blocks.append(("text", lines))
    if not parsed.usage:
        raise HelpFormatError("no Usage: block")
    return parsed


def run_tool(tool, *args):
    result = subprocess.run([tool, *args], capture_output=True, check=True)
    return result.stdout.decode("utf-8")


class Tool:
    """The tool's version, its top-level help and each command's help, in the
    order of the top level's command list."""

    def __init__(self, path):
        self.version = run_tool(path, "--version").split()[-1]
        self.top = parse(run_tool(path, "--help"))
        self.commands = [(name, summary, parse(run_tool(path, name, "--help")))
                         for name, summary in self.top.commands()]
        if not self.commands:
            raise HelpFormatError("the top-level help lists no command")
