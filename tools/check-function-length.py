#!/usr/bin/env python3
"""check-function-length.py — lists functions longer than the limit (150
lines, from the line of the opening brace's declaration to the closing
brace) in the project's C sources, tests and generated code excepted.
Exits 1 when there is one."""
import os
import re
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
FOLDERS = ["base", "store", "ingest", "query", "report", "tools"]
LIMIT = int(sys.argv[1]) if len(sys.argv) > 1 else 150


def functions(path):
    """(name, first line, last line) of each top-level function body."""
    lines = open(path, encoding="utf-8").read().split("\n")
    depth, start, name, out = 0, None, None, []
    in_comment = False
    for i, raw in enumerate(lines):
        line = raw
        # drop comments and string literals so their braces do not count
        line = re.sub(r'"(\\.|[^"\\])*"', '""', line)
        line = re.sub(r"'(\\.|[^'\\])*'", "''", line)
        if in_comment:
            if "*/" in line:
                line = line.split("*/", 1)[1]
                in_comment = False
            else:
                continue
        line = re.sub(r"/\*.*?\*/", "", line)
        if "/*" in line:
            line = line.split("/*", 1)[0]
            in_comment = True
        line = line.split("//", 1)[0]
        for ch in line:
            if ch == "{":
                if depth == 0:
                    # the declaration: this line or the nearest line above with '('
                    j = i
                    while j > 0 and "(" not in lines[j]:
                        j -= 1
                    m = re.search(r"(\w+)\s*\(", lines[j])
                    name, start = (m.group(1) if m else "?"), j
                    if "=" in line.split("{")[0] or re.search(r"=\s*$", lines[i - 1] if i else ""):
                        start = None  # an initialised array or struct, not a function
                depth += 1
            elif ch == "}":
                depth -= 1
                if depth == 0 and start is not None:
                    out.append((name, start + 1, i + 1))
                    start = None
    return out


bad = 0
for folder in FOLDERS:
    for dirpath, _, names in os.walk(os.path.join(ROOT, folder)):
        for n in sorted(names):
            if not n.endswith(".c") or n.startswith("tracegen"):
                continue
            p = os.path.join(dirpath, n)
            for name, a, b in functions(p):
                if b - a + 1 > LIMIT:
                    bad += 1
                    print(f"{os.path.relpath(p, ROOT)}:{a}: {name} is {b - a + 1} lines")
print(f"check-function-length: {bad} functions over {LIMIT} lines")
sys.exit(1 if bad else 0)
