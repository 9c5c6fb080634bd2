#!/usr/bin/env python3
"""test_python.py — the Python module (python/tracelens over
libtracelens.so) against the tracelens program: the same store, the same
sheets, the same SQL results.

Checks, with pandas (when installed) and again with pandas hidden:
- Store.ingest returns the id the program prints for the same file;
- Store.traces() lists it; Store.report() gives every CSV the program's
  `report ID --csv-dir` writes, cell for cell (DataFrame.equals against
  pandas.read_csv of the program's files; without pandas, Table rows
  against the csv module's reading);
- Store.sql() equals `tracelens sql --format csv` read the same way;
- a missing trace raises TraceLensError with exit code 4.

usage: test_python.py SOURCE_DIR BUILD_DIR
"""
import csv
import os
import subprocess
import sys
import tempfile

HIDE_PANDAS = "import sys; sys.modules['pandas'] = None\n"

CHILD = r'''
import csv, os, sys
import tracelens
from tracelens.table import _value
src, build, db, out = sys.argv[1:5]
trace = os.path.join(src, "tests/golden/b200_eager_window/b200_eager_window.json.gz")
try:
    import pandas as pd
except ImportError:
    pd = None
checks = failures = 0
def check(ok, what):
    global checks, failures
    checks += 1
    if not ok:
        failures += 1
        print("FAIL " + what)
store = tracelens.Store(db)
ids = store.ingest(trace)
cli_id = open(os.path.join(out, "id")).read().strip()
check(ids == [cli_id], f"ingest id {ids} vs program {cli_id}")
traces = store.traces()
col = list(traces["trace_id"]) if pd else traces.column("trace_id")
check(col == [cli_id], f"traces() {col}")
sheets = store.report(cli_id, "--enable_kernel_summary", "--short_kernel_study")
cli_dir = os.path.join(out, "csvs")
names = sorted(f[:-4] for f in os.listdir(cli_dir) if f.endswith(".csv"))
check(sorted(sheets) == names, f"sheets {sorted(sheets)} vs {names}")
def program_table(path):
    if pd:
        return pd.DataFrame() if os.path.getsize(path) == 0 else pd.read_csv(path)
    rows = list(csv.reader(open(path, newline="", encoding="utf-8")))
    return rows[:1] + [[_value(c) for c in r] for r in rows[1:]]
cells = 0
for name in names:
    ref = program_table(os.path.join(cli_dir, name + ".csv"))
    got = sheets.get(name)
    if pd:
        check(got is not None and got.equals(ref), f"sheet {name} differs")
        cells += ref.size
    else:
        mine = [got.columns] + got.rows if got is not None and got.columns else []
        check(mine == ref, f"sheet {name} differs")
        cells += sum(len(r) for r in ref[1:])
q = "SELECT name, count(*) AS n, sum(dur) AS ns FROM kernels GROUP BY name ORDER BY ns DESC, name"
got = store.sql(q)
ref = program_table(os.path.join(out, "sql.csv"))
check(got.equals(ref) if pd else [got.columns] + got.rows == ref, "sql result differs")
try:
    store.report("ffffffff")
    check(False, "missing trace: no error")
except tracelens.TraceLensError as e:
    check(e.code == 4, f"missing trace: exit {e.code}")
print(f"{'pandas' if pd else 'no pandas'}: {len(names)} sheets, {cells} cells, {checks - failures} passed, {failures} failed")
sys.exit(1 if failures else 0)
'''


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    src, build = map(os.path.abspath, sys.argv[1:])
    lib = os.path.join(build, "libtracelens.so")
    if not os.path.exists(lib):
        print(f"skipped: no {lib} (a sanitizer or fuzzer build has no shared library)")
        return 77
    exe = os.path.join(build, "tracelens")
    trace = os.path.join(src, "tests/golden/b200_eager_window/b200_eager_window.json.gz")
    failed = passed = 0
    with tempfile.TemporaryDirectory(prefix="tl_python_") as tmp:
        out = os.path.join(tmp, "program")
        os.makedirs(out)
        db = os.path.join(tmp, "db")
        p = subprocess.run([exe, "--db", db, "ingest", "-q", trace], capture_output=True, text=True, check=True)
        with open(os.path.join(out, "id"), "w") as f:
            f.write(p.stdout.split("\t")[0])
        tid = p.stdout.split("\t")[0]
        subprocess.run([exe, "--db", db, "report", tid, "--csv-dir", os.path.join(out, "csvs"),
                        "--enable_kernel_summary", "--short_kernel_study"], capture_output=True, check=True)
        q = "SELECT name, count(*) AS n, sum(dur) AS ns FROM kernels GROUP BY name ORDER BY ns DESC, name"
        subprocess.run([exe, "--db", db, "sql", "--format", "csv", "-o", os.path.join(out, "sql.csv"), q],
                       capture_output=True, check=True)
        env = dict(os.environ, PYTHONPATH=os.path.join(src, "python"), TRACELENS_LIB=lib)
        try:
            import pandas  # noqa: F401
            variants = ["", HIDE_PANDAS]
        except ImportError:
            print("pandas not installed: the DataFrame variant is skipped")
            variants = [HIDE_PANDAS]
        for k, pre in enumerate(variants):
            child_db = os.path.join(tmp, f"pydb{k}")
            r = subprocess.run([sys.executable, "-c", pre + CHILD, src, build, child_db, out],
                               capture_output=True, text=True, env=env)
            sys.stdout.write(r.stdout)
            if r.returncode:
                sys.stdout.write(r.stderr[-3000:])
                failed += 1
            else:
                passed += 1
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
