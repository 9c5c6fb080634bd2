#!/usr/bin/env python3
"""test_xlsx_report.py — the PyTorch report's Excel workbook, read back with
openpyxl (Debian's python3-openpyxl), an independent reader: the workbook
opens without repair, has the same sheets in the same order as the CSV
output of the same run, each sheet's header and cells agree with the CSV
(numbers stored as numbers, text as text, empty cells empty), the header
row is frozen, sheet names obey Excel's rules, every number equals the
CSV's exactly (both keep all 17 significant digits), and the native charts
(GPU timeline breakdown, time by op category, rooflines) are present as
well-formed DrawingML parts. A chartless workbook
(the collective report of a generated 2-rank corpus) is
checked the same way, and also read by LibreOffice when it is installed.

usage: test_xlsx_report.py BUILD_DIR
Prints "N passed, M failed"; exit 1 on failure, 77 when openpyxl is
missing (the PyTorch report cases need ../shared/data and are skipped
without it).
"""
import csv
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile

from tlcheck import Checks

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.environ.get("TL_SHARED_DATA") or os.path.join(HERE, "..", "..", "shared", "data")

try:
    import openpyxl
except ImportError:
    print("openpyxl is not installed for %s: skipped" % sys.executable)
    sys.exit(77)

check = Checks()
# what a number's text looks like (Python's float() also takes "0_1", "nan")
NUMBER = re.compile(r"^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$")




def close(a, b):
    return a == b or (isinstance(a, float) and isinstance(b, float) and abs(a - b) <= 1e-9 * max(1, abs(a)))


def compare(ws, rows, name, text_cols=(), exact=False):
    """exact: numbers must equal the CSV's to the last bit, not within 1e-9"""
    header = rows[0]
    got = [c.value for c in ws[1]]
    check(got[: len(header)] == header, f"{name}: header {got[:5]}... != CSV {header[:5]}...")
    bad = 0
    for ri, row in enumerate(rows[1:], start=2):
        cells = ws[ri] if ri <= ws.max_row else []
        for ci, text in enumerate(row):
            col = header[ci]
            v = cells[ci].value if ci < len(cells) else None
            if text == "":
                ok = v is None or v == ""
            elif isinstance(v, bool):
                ok = text == str(v)
            elif isinstance(v, (int, float)):
                try:
                    ok = float(text) == float(v) if exact else close(float(text), float(v))
                except ValueError:
                    ok = False
            else:
                # text cells: identical, except numeric-looking text, which
                # must have been written as a number (param columns excepted)
                ok = v == text
                if ok and not col.startswith("param: ") and col not in text_cols and NUMBER.match(text):
                    ok = False
            if not ok:
                bad += 1
                if bad <= 5:
                    print(f"  {name}!{cells[ci].coordinate if ci < len(cells) else ri}: xlsx {v!r}, csv {text!r}")
    check(bad == 0, f"{name}: {bad} cells differ from the CSV")


def run_case(build, trace, flags, tmp):
    base = os.path.join(tmp, os.path.basename(trace).split(".json")[0])
    xlsx = base + ".xlsx"
    csvdir = base + "_csv"
    cmd = [os.path.join(build, "TraceLens_generate_perf_report_pytorch"), "--profile_json_path", trace,
           "--output_xlsx_path", xlsx, "--output_csvs_dir", csvdir] + flags
    p = subprocess.run(cmd, capture_output=True, text=True)
    check(p.returncode == 0, f"{' '.join(cmd)} failed: {p.stderr[-500:]}")
    if p.returncode:
        return
    try:
        wb = openpyxl.load_workbook(xlsx)
    except Exception as e:
        check(False, f"{xlsx} does not open: {e}")
        return
    check(True, "workbook opens")
    # sheet order: the CSV files carry no order, so compare as sets and
    # check the leading sheets' fixed order
    csvs = {f[:-4] for f in os.listdir(csvdir) if f.endswith(".csv")}
    # hidden sheets hold chart data (e.g. roofline lines), not report tables
    visible = [ws for ws in wb.worksheets if ws.sheet_state == "visible"]
    check({ws.title for ws in visible} == csvs, f"sheets {sorted(ws.title for ws in visible)} != CSVs {sorted(csvs)}")
    check(wb.sheetnames[0] == "gpu_timeline", "first sheet is gpu_timeline")
    for ws in visible:
        check(len(ws.title) <= 31 and not any(ch in ws.title for ch in "[]:*?/\\"),
              f"sheet name {ws.title!r} valid for Excel")
        rows = list(csv.reader(open(os.path.join(csvdir, ws.title + ".csv"), newline="", encoding="utf-8")))
        if not rows or rows == [[]]:
            continue
        check(ws.freeze_panes == "A2", f"{ws.title}: header frozen (freeze_panes {ws.freeze_panes})")
        compare(ws, rows, ws.title, exact=True)
    charts = {ws.title: len(ws._charts) for ws in wb.worksheets}
    check(charts.get("gpu_timeline", 0) >= 1, f"gpu_timeline has a chart ({charts.get('gpu_timeline')})")
    if "ops_summary_by_category" in charts:
        check(charts["ops_summary_by_category"] >= 1, "ops_summary_by_category has a chart")
    # the generic checker (numbers as numbers, widths, chart XML)
    gen = os.path.join(HERE, "test_xlsx_openpyxl.py")
    if os.path.exists(gen):
        q = subprocess.run([sys.executable, gen, xlsx], capture_output=True, text=True)
        check(q.returncode == 0, f"test_xlsx_openpyxl.py {xlsx}: {q.stdout[-800:]}")
    check_chart_parts(xlsx, "--detect_recompute" in flags)
    check_number_formats(xlsx)
    if "--detect_recompute" in flags:
        check_with_libreoffice(xlsx, csvdir, tmp)


def check_number_formats(xlsx):
    """Times show 3 decimals and percentages 2 (the cells keep every digit:
    check_workbook compares the values); other numbers stay General."""
    wb = openpyxl.load_workbook(xlsx)
    ws = wb["gpu_timeline"]
    header = [c.value for c in ws[1]]
    fmt = {h: ws.cell(row=2, column=k + 1).number_format for k, h in enumerate(header)}
    check(fmt.get("time ms") == "#,##0.000", f"gpu_timeline 'time ms' shows {fmt.get('time ms')!r}")
    check(fmt.get("percent") == "0.00", f"gpu_timeline 'percent' shows {fmt.get('percent')!r}")
    if "ops_summary" in wb.sheetnames and wb["ops_summary"].max_row > 1:
        ws = wb["ops_summary"]
        header = [c.value for c in ws[1]]
        k = header.index("Percentage (%)") + 1
        check(ws.cell(row=2, column=k).number_format == "0.00", "ops_summary 'Percentage (%)' format")
        k = header.index("Count") + 1
        check(ws.cell(row=2, column=k).number_format == "General", "ops_summary 'Count' stays General")


def check_chart_parts(xlsx, roofline):
    """The PyTorch workbook's chart parts by content: a pie and a bar on
    gpu_timeline, and a log-log scatter per roofline sheet."""
    with zipfile.ZipFile(xlsx) as z:
        charts = [z.read(n).decode() for n in z.namelist() if n.startswith("xl/charts/chart")]
        rels1 = z.read("xl/worksheets/_rels/sheet1.xml.rels").decode()
        drawing1 = z.read("xl/drawings/drawing1.xml").decode()
    check(any("<c:pieChart>" in c for c in charts), "a pie chart (GPU time breakdown)")
    # the pie shows idle time too: the busy rows and the idle_time row
    # (the sixth row of gpu_timeline) as one series
    pies = [c for c in charts if "<c:pieChart>" in c]
    check(any("('gpu_timeline'!$B$2:$B$4,'gpu_timeline'!$B$6)" in c for c in pies),
          "the pie's values include the idle_time row")
    # explicit colours: the workbook has no theme, and LibreOffice draws a
    # series or slice without its own fill as nothing
    check(any(c.count("<c:dPt>") == 4 and c.count("<a:solidFill>") == 4 for c in pies),
          "each of the pie's four slices has its colour")
    for c in charts:
        for ser in c.split("<c:ser>")[1:]:
            if "<c:barChart>" in c or "<c:pieChart>" in c:
                check("<a:solidFill>" in ser.split("</c:ser>")[0], "a bar or pie series without a fill")
            elif "<c:marker><c:symbol val=\"circle\"" in ser:
                check("<a:solidFill>" in ser.split("</c:marker>")[0], "scatter markers without a fill")
    check(sum("<c:barDir val=\"bar\"/>" in c for c in charts) >= 1, "a bar chart")
    check("../drawings/drawing1.xml" in rels1 and drawing1.count("<xdr:twoCellAnchor>") == 2,
          "gpu_timeline shows its two charts")
    if roofline:
        check(any("<c:scatterChart>" in c and c.count("<c:logBase val=\"10\"/>") == 2 for c in charts),
              "a log-log roofline scatter")
        check(any("'_chart_data'!$A$2:$A$3" in c for c in charts), "roofs plotted from the hidden sheet")


def check_workbook(xlsx, csvdir, what, text_cols=()):
    """Every sheet of xlsx against its CSV, and the generic checks; text_cols
    hold numeric-looking text by design (as the reference tool writes them)."""
    try:
        wb = openpyxl.load_workbook(xlsx)
    except Exception as e:
        check(False, f"{xlsx} does not open: {e}")
        return
    check(True, f"{what}: workbook opens")
    csvs = {f[:-4] for f in os.listdir(csvdir) if f.endswith(".csv")}
    check({ws.title for ws in wb.worksheets} == csvs, f"{what}: sheets {wb.sheetnames} != CSVs {sorted(csvs)}")
    for ws in wb.worksheets:
        rows = list(csv.reader(open(os.path.join(csvdir, ws.title + ".csv"), newline="", encoding="utf-8")))
        if rows and rows != [[]]:
            compare(ws, rows, f"{what}!{ws.title}", text_cols)
    extra = [a for c in text_cols for a in ("--text-col", c)]
    q = subprocess.run([sys.executable, os.path.join(HERE, "test_xlsx_openpyxl.py"), xlsx] + extra,
                       capture_output=True, text=True)
    check(q.returncode == 0, f"test_xlsx_openpyxl.py {xlsx}: {q.stdout[-800:]}")


def run_collective(build, tmp):
    """A chartless workbook:
    the collective report of a generated 2-rank corpus, against its CSVs."""
    corpus = os.path.join(tmp, "corpus")
    g = subprocess.run([os.path.join(build, "tracegen"), "--size", "3M", "--ranks", "2", "-o", corpus],
                       capture_output=True, text=True)
    check(g.returncode == 0, f"tracegen: {g.stderr[-300:]}")
    xlsx, csvdir = os.path.join(tmp, "coll.xlsx"), os.path.join(tmp, "coll_csv")
    cmd = [os.path.join(build, "tracelens"), "collective", "--trace_pattern",
           os.path.join(corpus, "rank_*.json"), "--world_size", "2",
           "--output_xlsx_path", xlsx, "--output_csvs_dir", csvdir]
    p = subprocess.run(cmd, capture_output=True, text=True)
    check(p.returncode == 0, f"{' '.join(cmd)} failed: {p.stderr[-500:]}")
    if p.returncode == 0:
        # process group names ("0") are strings in the reference's report
        check_workbook(xlsx, csvdir, "collective", ("Process Group Name",))
        check_with_libreoffice(xlsx, csvdir, tmp)


def check_with_libreoffice(xlsx, csvdir, tmp):
    """A second independent reader when installed (not in CI: Debian's
    libreoffice-calc-nogui): every sheet exported back to CSV equals ours,
    numbers within 1e-9 relative (it prints 15 digits), booleans as TRUE/FALSE."""
    soffice = shutil.which("soffice")
    if not soffice:
        print("LibreOffice not installed: its check skipped")
        return
    out = os.path.join(tmp, "lo")
    # CSV filter: comma, quote, UTF-8, first line, ..., all sheets (-1)
    p = subprocess.run([soffice, "--headless", "--convert-to",
                        'csv:Text - txt - csv (StarCalc):44,34,76,1,,0,false,true,false,false,false,-1',
                        "--outdir", out, xlsx], capture_output=True, text=True, timeout=300)
    check(p.returncode == 0, f"LibreOffice opens {xlsx}: {p.stderr[-300:]}")
    stem = os.path.splitext(os.path.basename(xlsx))[0]
    bad = cells = 0
    for f in sorted(os.listdir(csvdir)):
        ours = list(csv.reader(open(os.path.join(csvdir, f), newline="", encoding="utf-8")))
        path = os.path.join(out, f"{stem}-{f}")
        if not os.path.exists(path):
            check(False, f"LibreOffice: no sheet {f[:-4]}")
            continue
        theirs = list(csv.reader(open(path, newline="", encoding="utf-8")))
        check(len(ours) == len(theirs), f"LibreOffice: {f[:-4]} has {len(theirs)} rows, ours {len(ours)}")
        for a, b in zip(ours, theirs):
            b = b + [""] * (len(a) - len(b))
            for x, y in zip(a, b):
                cells += 1
                if x == y or {x, y} in ({"True", "TRUE"}, {"False", "FALSE"}):
                    continue
                try:
                    if abs(float(x) - float(y)) <= 1e-9 * max(1.0, abs(float(x))):
                        continue
                except ValueError:
                    pass
                bad += 1
                if bad <= 5:
                    print(f"  LibreOffice {f[:-4]}: {y!r}, ours {x!r}")
    print(f"LibreOffice read {cells} cells back")
    check(bad == 0, f"LibreOffice: {bad} cells differ from the CSVs")


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    build = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory(prefix="tl_xlsx_") as tmp:
        os.environ["TRACELENS_DB"] = os.path.join(tmp, "db")
        print("# collective report of a generated corpus (no charts)")
        run_collective(build, tmp)
    cases = [("kineto/mi300/gaunernst_bert-small-uncased__1016001.json.gz",
              ["--enable_kernel_summary", "--short_kernel_study"]),
             ("kineto/mi300/resnet_act_checkpoint.json.gz", ["--detect_recompute"]),
             ("kineto/mi210/gpu_only_trace/gpu_only_trace.json.gz", ["--enable_kernel_summary"])]
    cases = [(os.path.join(DATA, t), f) for t, f in cases if os.path.exists(os.path.join(DATA, t))]
    if not cases:
        print(f"{check.passed} passed, {check.failed} failed; PyTorch report cases skipped: no shared data")
        return 0 if check.failed == 0 else 1
    with tempfile.TemporaryDirectory(prefix="tl_xlsx_") as tmp:
        os.environ["TRACELENS_DB"] = os.path.join(tmp, "db")
        for trace, flags in cases:
            print(f"# {os.path.basename(trace)} {' '.join(flags)}")
            run_case(build, trace, flags, tmp)
    print(f"{check.passed} passed, {check.failed} failed")
    return 0 if check.failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
