#!/usr/bin/env python3
"""gen-manpage.py — writes tracelens(1) from the program's own --help texts,
so the manual never says anything the program does not.

usage: gen-manpage.py BUILD_DIR OUT.1
Runs BUILD_DIR/tracelens --help, `tracelens CMD --help` for every command it
lists and `NAME --help` for every reference command linked in BUILD_DIR, and
writes them as sections of one roff page.
"""
import os
import re
import subprocess
import sys


def help_text(argv):
    p = subprocess.run(argv + ["--help"], capture_output=True, text=True)
    return (p.stdout or p.stderr).rstrip("\n")


def roff_block(text):
    out = [".nf"]
    for line in text.split("\n"):
        line = line.replace("\\", "\\e")
        if line.startswith((".", "'")):
            line = "\\&" + line
        out.append(line)
    out.append(".fi")
    return "\n".join(out)


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    build, out = sys.argv[1], sys.argv[2]
    exe = os.path.join(build, "tracelens")
    top = help_text([exe])
    commands = []
    section = None
    for line in top.split("\n"):
        if line.startswith("Commands:"):
            section = "cmd"
            continue
        if section == "cmd":
            m = re.match(r"  (\S+)", line)
            if not m:
                section = None if not line.strip() else section
                continue
            commands.append(m.group(1))
    refs = sorted(set(re.findall(r"\b(TraceLens_[A-Za-z_]+)", top)))
    page = [
        '.TH TRACELENS 1 "" "tracelens" "User Commands"',
        ".SH NAME",
        "tracelens \\- GPU profiler traces into a column store; reports, diffs and queries",
        ".SH SYNOPSIS",
        ".B tracelens",
        "[\\-\\-db DIR] COMMAND [ARGS]",
        ".SH DESCRIPTION",
        roff_block(top),
    ]
    for c in commands:
        page += [f".SH COMMAND: {c.upper()}", roff_block(help_text([exe, c]))]
    for r in refs:
        link = os.path.join(build, r)
        if os.path.exists(link):
            page += [f".SH REFERENCE COMMAND: {r}", roff_block(help_text([link]))]
    with open(out, "w") as f:
        f.write("\n".join(page) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
