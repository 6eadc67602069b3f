#!/usr/bin/env python3
"""make-bash-completion.py LUMAHIST OUTPUT: writes lumahist's bash completion from
the built tool's --help and each command's --help (tool_help.py reads them): the
commands, each command's options, the values of an option whose placeholder lists
them (--decoder=auto|cpu|gpu), folders for DIR and files for FILE placeholders and
for the paths.  Made at build time, so that it offers what the tool takes.

The script stands alone: bash-completion's helpers (_init_completion) are not
needed, so that it works sourced by hand as well as loaded on demand from
bash-completion's folder.
"""
import sys

import tool_help

TEMPLATE = r"""# bash completion for lumahist(1): made by build-aux/make-bash-completion.py
# from the tool's --help; do not edit.

# _lumahist_command_options COMMAND: sets options (every option of COMMAND)
# and valued (those that take a value).
_lumahist_command_options()
{
  case $1 in
@OPTION_CASES@
  esac
}

# _lumahist_values COMMAND OPTION: fills COMPREPLY with the values of OPTION
# that start with $cur; nothing for a free value (a number, a list).
_lumahist_values()
{
  case "$1 $2" in
@VALUE_CASES@
  esac
}

# _lumahist_paths -f|-d: fills COMPREPLY with the files (-f) or folders (-d)
# whose names start with $cur, one a line of compgen's, so that a name with
# spaces or glob characters stays one word ($(...) split and expanded it).
_lumahist_paths()
{
  compopt -o filenames 2>/dev/null
  mapfile -t COMPREPLY < <(compgen "$1" -- "$cur")
}

_lumahist()
{
  local cur=${COMP_WORDS[COMP_CWORD]} prev= command= i
  ((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD - 1]}
  COMPREPLY=()
  # The command: the first word after the options before it (none takes a value).
  for ((i = 1; i < COMP_CWORD; i++)); do
    case ${COMP_WORDS[i]} in
      -*) ;;
      *) command=${COMP_WORDS[i]}; break ;;
    esac
  done
  if [[ -z $command ]]; then
    if [[ $cur == -* ]]; then
      COMPREPLY=($(compgen -W '@TOP_OPTIONS@' -- "$cur"))
    else
      COMPREPLY=($(compgen -W '@COMMANDS@' -- "$cur"))
    fi
    return 0
  fi
  local options= valued=
  _lumahist_command_options "$command" || return 0
  # A value: "--opt VALUE", or "--opt=VALUE", which bash splits at '='.
  local option=
  if [[ $cur == = ]]; then
    option=$prev cur=
  elif [[ $prev == = ]] && ((COMP_CWORD > 1)); then
    option=${COMP_WORDS[COMP_CWORD - 2]}
  elif [[ " $valued " == *" $prev "* ]]; then
    option=$prev
  fi
  if [[ -n $option ]]; then
    _lumahist_values "$command" "$option"
    return 0
  fi
  if [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "$options" -- "$cur"))
    return 0
  fi
  # PATHs: files and folders.
  _lumahist_paths -f
}

complete -F _lumahist lumahist
"""


def quote_words(words):
    """Words for a single-quoted compgen -W list (none holds a quote)."""
    for word in words:
        if "'" in word or " " in word:
            raise ValueError(f"cannot complete {word!r}")
    return " ".join(words)


def option_cases(tool):
    lines = []
    for name, _, parsed in tool.commands:
        options = [n for o in parsed.options() for n in o.names()]
        valued = [n for o in parsed.options() if o.arg for n in o.names()]
        lines += [f"    {name})",
                  f"      options='{quote_words(options)}'",
                  f"      valued='{quote_words(valued)}'",
                  "      ;;"]
    lines += ["    *) return 1 ;;"]
    return "\n".join(lines)


def value_case(option):
    """The completion of one option's value, or None for a free value."""
    if option.choices():
        return f"COMPREPLY=($(compgen -W '{quote_words(option.choices())}' -- \"$cur\"))"
    if option.arg == "DIR":
        return "_lumahist_paths -d"
    if option.arg.startswith("FILE"):
        return "_lumahist_paths -f"
    return None


def value_cases(tool):
    lines = []
    for name, _, parsed in tool.commands:
        for option in parsed.options():
            action = value_case(option) if option.arg else None
            if action:
                patterns = "|".join(f"'{name} {n}'" for n in option.names())
                lines.append(f"    {patterns}) {action} ;;")
    return "\n".join(lines)


def script(tool):
    text = TEMPLATE
    text = text.replace("@OPTION_CASES@", option_cases(tool))
    text = text.replace("@VALUE_CASES@", value_cases(tool))
    text = text.replace("@TOP_OPTIONS@",
                        quote_words([n for o in tool.top.options() for n in o.names()]))
    text = text.replace("@COMMANDS@", quote_words([name for name, _, _ in tool.commands]))
    return text


def main():
    tool, output = sys.argv[1:3]
    text = script(tool_help.Tool(tool))
    with open(output, "w", encoding="utf-8") as f:
        f.write(text)


if __name__ == "__main__":
    main()
