#!/usr/bin/env python3
"""golden_pytorch.py — conformance of the PyTorch report against the
reference tool's CSV folders (../shared/data/kineto/**/*_perf_report_csvs).

For every reference folder: run the reference-compatible command
(TraceLens_generate_perf_report_pytorch, a link to tracelens) on the trace
beside it with the options the reference used (--enable_kernel_summary
--short_kernel_study; the resnet recompute folder: --detect_recompute), then
compare sheet by sheet with the reference's own rules (spec
pytorch-report.md §1): rows by position, numeric cells within 1e-6
absolute, other cells parsed as Python literals after removing
np.float64(...) wrappers (lists of dicts compared order-free), empty
reference cells skipped, the reference's ignored columns skipped. Every
reference sheet and column must be produced, except sheets the tool itself
reports as pending ("note: sheet NAME is not available in this build").

usage: golden_pytorch.py BUILD_DIR [-v] [-k SUBSTRING]
Prints per folder the cells compared and mismatches, then "N passed, M failed".
Exit 0 when nothing failed, 77 (skipped) when the shared data is absent.
Python standard library only.
"""
import ast
import csv
import math
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.environ.get("TL_SHARED_DATA") or os.path.join(HERE, "..", "..", "shared", "data")
ALWAYS_IGNORED = {"Non-Data-Mov TFLOPS/s_mean", "Non-Data-Mov Kernel Time (µs)_sum",
                  "Non-Data-Mov Kernel Time (µs)_mean"}
RESNET_IGNORED = {"kernel_details", "kernel_details_summary", "trunc_kernel_details",
                  "kernel_details__summarize_kernel_stats", "perf_params"}
# Cells this implementation knowingly does not produce, reported as pending
# (not compared, not failures): (folder substring, sheet, row-name prefix,
# column predicate, reason). docs/CONFORMANCE.md lists them.
PENDING_CELLS = [
]
NP_WRAP = re.compile(r"np\.(?:float64|float32|int64|int32|bool_)\(([^()]*)\)")
NP_BOOL = re.compile(r"np\.(True_|False_)")

# pandas' default NA strings: such reference cells are NaN and not checked
NA_STRINGS = {"", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND",
              "1.#QNAN", "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null"}

csv.field_size_limit(1 << 30)


def folders():
    root = os.path.join(DATA, "kineto")
    out = []
    for dirpath, dirnames, _ in os.walk(root):
        for d in sorted(dirnames):
            if not d.endswith("_perf_report_csvs"):
                continue
            stem = d[: -len("_perf_report_csvs")]
            flags = ["--enable_kernel_summary", "--short_kernel_study"]
            if stem.endswith("_recompute"):
                stem = stem[: -len("_recompute")]
                flags = ["--detect_recompute"]
            trace = os.path.join(dirpath, stem + ".json.gz")
            if not os.path.exists(trace):
                trace = os.path.join(dirpath, stem + ".json")
            out.append((os.path.join(dirpath, d), trace, flags))
    return sorted(out)


def read_csv(path):
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    if not rows or rows == [[]]:
        return None
    return rows[0], rows[1:]


def as_float(s):
    if s == "":
        return None
    try:
        return float(s)
    except ValueError:
        return None


def numeric_column(cells):
    """pandas would read the column as numbers (or bools)."""
    seen = False
    for c in cells:
        if c in NA_STRINGS:
            continue
        seen = True
        if as_float(c) is None:
            return False
    return seen


def parse_cell(s):
    t = NP_BOOL.sub(lambda m: m.group(1)[:-1], NP_WRAP.sub(r"\1", s))
    try:
        v = ast.literal_eval(t)
    except Exception:
        return s
    return normalise(v)


def normalise(v):
    if isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
        return sorted((normalise(x) for x in v), key=lambda d: str(sorted(d.items(), key=lambda kv: str(kv[0]))))
    if isinstance(v, dict):
        return {k: normalise(x) for k, x in v.items()}
    if isinstance(v, list):
        return [normalise(x) for x in v]
    if isinstance(v, tuple):
        return tuple(normalise(x) for x in v)
    return v


def same_value(a, b):
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if type(a) in (list, tuple) and type(b) == type(a):
        return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return list(a.keys()) == list(b.keys()) and all(same_value(a[k], b[k]) for k in a)
    return a == b


def compare_sheet(name, ref, ours, ignored, problems, pending=()):
    rh, rrows = ref
    oh, orows = ours
    cells = 0
    bad = 0
    # a repeated column name (the empty short_kernels_summary's two-row
    # header) pairs its k-th occurrence in ours with its k-th in the reference
    oidx, opos, seen = {}, {}, {}
    for i, c in enumerate(oh):
        opos.setdefault(c, []).append(i)
        oidx.setdefault(c, i)
    pending_count = PENDING_COUNT
    if len(rrows) != len(orows):
        problems.append(f"{name}: {len(orows)} rows, reference has {len(rrows)}")
        bad += 1
    for ci, col in enumerate(rh):
        if col in ignored:
            continue
        if col not in oidx:
            problems.append(f"{name}: column '{col}' missing")
            bad += 1
            continue
        k = seen[col] = seen.get(col, -1) + 1
        oc = opos[col][k] if k < len(opos[col]) else oidx[col]
        rcol = [r[ci] if ci < len(r) else "" for r in rrows]
        numeric = numeric_column(rcol)
        name_col = rh.index("name") if "name" in rh else None
        skip_pred = [(pref, pred) for pref, pred, _ in pending if pred(col)]
        for ri, rv in enumerate(rcol):
            if rv in NA_STRINGS:
                continue
            if skip_pred and name_col is not None and any(
                    rrows[ri][name_col].startswith(pref) for pref, _ in skip_pred):
                pending_count[0] += 1
                continue
            cells += 1
            ov = orows[ri][oc] if ri < len(orows) and oc < len(orows[ri]) else None
            if ov in NA_STRINGS:
                ov = None
            ok = False
            if ov is not None:
                if numeric:
                    a, b = as_float(rv), as_float(ov)
                    if rv in ("True", "False"):
                        ok = rv == ov
                    else:
                        ok = b is not None and (abs(a - b) < 1e-6 or (math.isinf(a) and a == b))
                else:
                    ok = same_value(parse_cell(rv), parse_cell(ov))
            if not ok:
                bad += 1
                problems.append(f"{name}[{ri}] '{col}': reference {rv[:200]!r}, ours {(ov or '')[:200]!r}")
    return cells, bad


PENDING_COUNT = [0]


def run_folder(build, ref_dir, trace, flags, tmp, verbose, command="TraceLens_generate_perf_report_pytorch"):
    out = os.path.join(tmp, os.path.basename(ref_dir))
    cmd = [os.path.join(build, command), "--profile_json_path", trace,
           "--output_csvs_dir", out] + flags
    t0 = time.time()
    p = subprocess.run(cmd, capture_output=True, text=True)
    dt = time.time() - t0
    if p.returncode != 0:
        return 0, 1, [f"command failed ({p.returncode}): {' '.join(cmd)}\n{p.stderr[-2000:]}"], [], dt
    pending = re.findall(r"note: sheet (\S+) is not available", p.stderr)
    ignored = set(ALWAYS_IGNORED)
    if "--detect_recompute" in flags:
        ignored |= RESNET_IGNORED
    cells = bad = 0
    problems = []
    pend = []
    for f in sorted(os.listdir(ref_dir)):
        if not f.endswith(".csv"):
            continue
        sheet = f[:-4]
        ref = read_csv(os.path.join(ref_dir, f))
        if ref is None:
            continue
        op = os.path.join(out, f)
        if not os.path.exists(op):
            if sheet in pending:
                pend.append(sheet)
                continue
            problems.append(f"{sheet}: sheet missing")
            bad += 1
            continue
        ours = read_csv(op)
        if ours is None:
            problems.append(f"{sheet}: our file is empty")
            bad += 1
            continue
        pend_here = [(pref, pred, why) for fs, sh, pref, pred, why in PENDING_CELLS
                     if fs in ref_dir and sh == sheet]
        PENDING_COUNT[0] = 0
        c, b = compare_sheet(sheet, ref, ours, ignored, problems, pend_here)
        if PENDING_COUNT[0]:
            pend.append(f"{PENDING_COUNT[0]} cells of {sheet} ({pend_here[0][2]})")
        cells += c
        bad += b
    return cells, bad, problems, pend, dt


def parse_args(argv, doc):
    """BUILD_DIR [-v] [-k SUBSTRING] -> (build, verbose, filter), or None
    after printing doc when the build folder is missing."""
    args = list(argv)
    verbose = "-v" in args
    args = [a for a in args if a != "-v"]
    filt = None
    if "-k" in args:
        i = args.index("-k")
        filt = args[i + 1]
        del args[i:i + 2]
    if not args:
        print(doc)
        return None
    return os.path.abspath(args[0]), verbose, filt


def main():
    parsed = parse_args(sys.argv[1:], __doc__)
    if not parsed:
        return 2
    build, verbose, filt = parsed
    if not os.path.isdir(os.path.join(DATA, "kineto")):
        print(f"skipped: no reference data at {DATA}")
        return 77
    passed = failed = 0
    with tempfile.TemporaryDirectory(prefix="tl_golden_") as tmp:
        env_db = os.path.join(tmp, "db")
        os.environ["TRACELENS_DB"] = os.environ.get("TL_GOLDEN_DB", env_db)
        for ref_dir, trace, flags in folders():
            rel = os.path.relpath(ref_dir, DATA)
            if filt and filt not in rel:
                continue
            cells, bad, problems, pend, dt = run_folder(build, ref_dir, trace, flags, tmp, verbose)
            status = "ok" if bad == 0 else "FAIL"
            line = f"{status:4} {rel}: {cells} cells compared, {bad} mismatches ({dt:.2f} s)"
            if pend:
                line += f"; pending: {', '.join(pend)}"
            print(line)
            for p in problems[: (1000 if verbose else 8)]:
                print("     " + p)
            if len(problems) > 8 and not verbose:
                print(f"     ... {len(problems) - 8} more (-v shows all)")
            if bad == 0:
                passed += 1
            else:
                failed += 1
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
