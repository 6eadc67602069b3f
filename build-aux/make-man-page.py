#!/usr/bin/env python3
"""make-man-page.py LUMAHIST OUTPUT: writes the man page lumahist(1) from the
built tool's --help and each command's --help (tool_help.py reads them), so
that the page lists every command and option the tool has, in its words.

Made at build time rather than written by hand: a new option or command reaches
the page with no edit, and help2man, which reads one program's --help, would
need a hand-kept include file for the commands' options.  Only NAME's dash, the
section titles and SEE ALSO are written here.
"""
import re
import sys

import tool_help


def escape(text):
    """Text as roff reads it: backslashes, option names' dashes (\\- is the
    ASCII hyphen-minus, so that a copied --name works), non-ASCII characters
    as \\[uXXXX] (for any groff device), and no control character at the
    start of a line."""
    text = text.replace("\\", "\\e")
    text = re.sub(r"(?<![\w-])--?\w[\w-]*", lambda m: m.group(0).replace("-", "\\-"), text)
    text = re.sub(r"(?<=')-(?=')", "\\-", text)
    text = "".join(c if ord(c) < 128 else f"\\[u{ord(c):04X}]" for c in text)
    if text.startswith((".", "'")):
        text = "\\&" + text
    return text


# Paragraphs of the top level's help that begin so have a section of their own.
SECTIONS = (("Exit status:", "EXIT STATUS"), ("Environment:", "ENVIRONMENT"))


def paragraphs(lines):
    """A text block's paragraphs: its lines joined, with each line that
    starts one of SECTIONS' words (which the helps put under the last
    paragraph) and what follows it in one of its own."""
    parts = [[]]
    for line in lines:
        if line.startswith(tuple(word for word, _ in SECTIONS)) and parts[-1]:
            parts.append([])
        parts[-1].append(line.strip())
    return [" ".join(part) for part in parts if part]


def option_lines(option):
    names = [f"\\fB{escape(n)}\\fR" for n in option.names()]
    head = ", ".join(names)
    if option.arg:
        head += f"=\\fI{escape(option.arg)}\\fR"
    return [".TP", head, escape(option.description)]


def usage_lines(usage):
    """A usage line as SYNOPSIS shows it: the program (and command) bold."""
    out = []
    for line in usage:
        words = line.split(" ")
        command = [w for w in words[:2] if not w.startswith("[")]
        rest = words[len(command):]
        out += [f".B {escape(' '.join(command))}", escape(" ".join(rest)), ".br"]
    return out


def blocks(parsed, sections=None):
    """A help's text and option groups (its command list is COMMANDS's).
    With sections (a dict), the paragraphs that begin with a word of
    SECTIONS go there instead, without it, by their section's title."""
    out = []
    for block in parsed.blocks:
        if block[0] == "text":
            for paragraph in paragraphs(block[1]):
                title = next((title for word, title in SECTIONS if paragraph.startswith(word)),
                             None)
                if title and sections is not None:
                    sections[title] = paragraph.split(":", 1)[1].strip()
                else:
                    out += [".PP", escape(paragraph)]
        elif block[0] == "options":
            out += [".PP", f"\\fI{escape(block[1])}:\\fR", ".RS 4"]
            for option in block[2]:
                out += option_lines(option)
            out += [".RE"]
    return out


def page(tool):
    top = tool.top
    name_line = " ".join(top.text()[0]).rstrip(".")
    out = [
        ".\\\" lumahist.1: made by build-aux/make-man-page.py from the tool's --help; do not edit.",
        f".TH LUMAHIST 1 \"\" \"lumahist {tool.version}\" \"User Commands\"",
        # No hyphenation, no justification: the options stay whole words.
        ".nh",
        ".ad l",
        ".SH NAME",
        f"lumahist \\- {escape(name_line[0].lower() + name_line[1:])}",
        ".SH SYNOPSIS",
    ]
    out += usage_lines(top.usage)
    for _, _, parsed in tool.commands:
        out += usage_lines(parsed.usage)
    sections = {}
    out += [".SH DESCRIPTION"] + blocks(top, sections)
    out += [".SH COMMANDS"]
    for name, summary, _ in tool.commands:
        out += [".TP", f"\\fB{escape(name)}\\fR", escape(summary)]
    for name, summary, parsed in tool.commands:
        out += [f".SS \"lumahist {escape(name)}\"", escape(summary) + "."]
        out += blocks(parsed)
    for _, title in SECTIONS:
        if title in sections:
            out += [f".SH {title}", escape(sections[title])]
    out += [
        ".SH SEE ALSO",
        ".BR gst\\-inspect\\-1.0 (1):",
        "\\fBgst\\-inspect\\-1.0 lumahist\\fR describes the GStreamer element lumahist, which "
        "takes the same measures of video frames in a pipeline.  The library is "
        "\\fIlumahist.h\\fR (\\fBpkg\\-config \\-\\-cflags \\-\\-libs lumahist\\fR), the Python "
        "module \\fBimport lumahist\\fR.  README.md in the source describes the records' "
        "fields, video files and the library.",
    ]
    return "\n".join(out) + "\n"


def main():
    tool, output = sys.argv[1:3]
    text = page(tool_help.Tool(tool))
    with open(output, "w", encoding="ascii") as f:
        f.write(text)


if __name__ == "__main__":
    main()
