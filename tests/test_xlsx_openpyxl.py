#!/usr/bin/env python3
"""test_xlsx_openpyxl.py — checks a workbook written by tracelens with an
independent reader (openpyxl, Debian's python3-openpyxl): every sheet loads,
header cells are strings, numbers are stored as numbers (not as text, which
Excel flags and pandas would have to re-parse), frozen header rows, sheet
names within Excel's rules, and the native charts load: openpyxl's view of
them, and the parts themselves (every drawing, chart and rels part is
well-formed XML, each chart is reached sheet -> drawing -> chart and has a
content-type override).

usage: test_xlsx_openpyxl.py WORKBOOK.xlsx [--text-col NAME]...
(--text-col: a column whose numeric-looking cells are text by design, as in
the reference tool's output, e.g. the collective report's process group names)
Prints "N passed, M failed" last; exit 1 on failure, 77 (skip) when
openpyxl is not importable by this interpreter (pyenv or venv pythons may
lack it: run /usr/bin/python3).
"""
import math
import posixpath
import re
import sys
import zipfile
from xml.dom import minidom

try:
    import openpyxl
except ImportError:
    print("openpyxl is not installed for %s: skipped" % sys.executable)
    print("0 passed, 0 failed")
    sys.exit(77)

NUMBER = re.compile(r"^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$")
# text a number legitimately becomes: pandas' inf_rep
ALLOWED_TEXT = {"inf", "-inf"}

passed = 0
failed = 0


def check(cond, msg):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print("FAIL: " + msg)


def rel_targets(z, rels):
    """Targets (package paths) of a rels part, by relationship type tail."""
    base = posixpath.dirname(posixpath.dirname(rels))
    out = []
    for r in minidom.parseString(z.read(rels)).getElementsByTagName("Relationship"):
        out.append((r.getAttribute("Type").rsplit("/", 1)[-1],
                    posixpath.normpath(posixpath.join(base, r.getAttribute("Target")))))
    return out


def check_chart_parts(path):
    """Returns the number of chart parts after checking them (see above)."""
    with zipfile.ZipFile(path) as z:
        names = set(z.namelist())
        drawn = [n for n in names if n.startswith(("xl/charts/", "xl/drawings/")) or "worksheets/_rels/" in n]
        for n in sorted(drawn):
            try:
                minidom.parseString(z.read(n))
            except Exception as e:
                check(False, "%s is not well-formed XML: %s" % (n, e))
        types = z.read("[Content_Types].xml").decode()
        charts = [n for n in names if re.match(r"xl/charts/chart\d+\.xml$", n)]
        reached = set()
        for rels in (n for n in names if re.match(r"xl/worksheets/_rels/sheet\d+\.xml\.rels$", n)):
            for kind, drawing in rel_targets(z, rels):
                if kind != "drawing":
                    continue
                check(drawing in names, "%s: drawing %s present" % (rels, drawing))
                drels = posixpath.join(posixpath.dirname(drawing), "_rels", posixpath.basename(drawing) + ".rels")
                if drels in names:
                    reached |= {t for k, t in rel_targets(z, drels) if k == "chart"}
        check(reached == set(charts), "charts reached from sheets %s = chart parts %s" % (sorted(reached), sorted(charts)))
        for n in charts + [n for n in names if re.match(r"xl/drawings/drawing\d+\.xml$", n)]:
            check('PartName="/%s"' % n in types, "content type of %s" % n)
    return len(charts)


def main():
    args = sys.argv[1:]
    text_cols = set()
    while len(args) >= 3 and args[-2] == "--text-col":
        text_cols.add(args[-1])
        args = args[:-2]
    if len(args) != 1:
        print(__doc__.strip().splitlines()[-6])
        return 2
    path = args[0]
    try:
        wb = openpyxl.load_workbook(path)  # full mode: charts, column dims, panes
    except Exception as e:  # any failure to load is the finding
        check(False, "%s does not load: %s" % (path, e))
        print("%d passed, %d failed" % (passed, failed))
        return 1
    names = [ws.title for ws in wb.worksheets]
    check(len(names) > 0, "workbook has sheets")
    check(len({n.lower() for n in names}) == len(names), "sheet names unique (case-insensitive): %r" % names)
    charts = 0
    for ws in wb.worksheets:
        check(len(ws.title) <= 31, "sheet name %r within 31 characters" % ws.title)
        check(not set("[]:*?/\\") & set(ws.title), "sheet name %r has no invalid characters" % ws.title)
        charts += len(getattr(ws, "_charts", []))
        try:
            rows = list(ws.iter_rows(values_only=True))
        except Exception as e:
            check(False, "sheet %r loads: %s" % (ws.title, e))
            continue
        check(True, "sheet %r loads" % ws.title)
        if ws.sheet_state != "visible" or not rows:
            continue
        header = rows[0]
        bad = [h for h in header if h is not None and not isinstance(h, str)]
        check(not bad, "sheet %r: header cells are strings (not %r)" % (ws.title, bad[:3]))
        if len(rows) > 1:
            check(ws.freeze_panes == "A2", "sheet %r: header row frozen (%r)" % (ws.title, ws.freeze_panes))
        text_numbers = []
        for r, row in enumerate(rows[1:], start=2):
            for c, v in enumerate(row, start=1):
                if c <= len(header) and header[c - 1] in text_cols:
                    continue
                if isinstance(v, str) and v not in ALLOWED_TEXT and NUMBER.match(v):
                    text_numbers.append("%s%d=%r" % (openpyxl.utils.get_column_letter(c), r, v))
                elif isinstance(v, float) and math.isnan(v):
                    text_numbers.append("%s%d=nan" % (openpyxl.utils.get_column_letter(c), r))
        check(not text_numbers, "sheet %r: numbers stored as numbers (text: %s)" % (ws.title, ", ".join(text_numbers[:5])))
    parts = check_chart_parts(path)
    check(charts <= parts, "openpyxl sees %d charts, the package has %d" % (charts, parts))
    print("%s: %d sheets (%s), %d charts" % (path, len(names), ", ".join(names), parts))
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
