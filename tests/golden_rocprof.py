#!/usr/bin/env python3
"""golden_rocprof.py — conformance of the rocprofv3 report with the values
the reference tool produces on the real sample (spec/formats.md §1.9).

Usage: golden_rocprof.py BUILD_DIR

Runs BUILD_DIR/TraceLens_generate_perf_report_rocprof on
shared/data/rocprof/908_results.json.gz (into a temporary store and CSV
folder) exactly as the reference's command line would, plus
--reference-units, and compares every value listed in §1.9 with the CSV
text, exactly. Then runs the default (correct-units) mode and checks that
the same values appear scaled to the units the labels name: every µs cell
of kernel_summary / kernel_details is the reference's /1000, every ms cell
the reference's /1000, percentages identical, cumulative percentages
running down the printed rows. Prints the number of cells compared and
"N passed, M failed" last; exits 77 (skipped) when the sample is absent.
Python standard library only.
"""
import csv
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.environ.get("TL_SHARED_DATA") or os.path.join(HERE, "..", "..", "shared", "data")
SAMPLE = os.path.join(DATA, "rocprof", "908_results.json.gz")

passed = 0
failed = 0


def check(what, got, want):
    global passed, failed
    if got == want:
        passed += 1
    else:
        failed += 1
        print(f"FAIL {what}: got {got!r}, want {want!r}")


def check_close(what, got, want, rel=1e-12, abs_=0.0):
    global passed, failed
    try:
        g = float(got)
    except (TypeError, ValueError):
        g = None
    if g is not None and abs(g - want) <= max(abs_, rel * abs(want)):
        passed += 1
    else:
        failed += 1
        print(f"FAIL {what}: got {got!r}, want {want!r} (rel {rel}, abs {abs_})")


def read(d, sheet):
    path = os.path.join(d, sheet + ".csv")
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    return rows[0] if rows else [], rows[1:]


def col(header, rows, name, i):
    return rows[i][header.index(name)]


def run(build, db, out, extra):
    exe = os.path.join(build, "TraceLens_generate_perf_report_rocprof")
    cmd = [exe, "--profile_json_path", SAMPLE, "--output_csvs_dir", out, "--kernel_details",
           "--topk_kernels", "20", "--short_kernel_study", "--db", db] + extra
    try:
        p = subprocess.run(cmd, capture_output=True, text=True)
    except OSError as e:
        print(f"FAIL cannot run {exe}: {e}")
        return False
    if p.returncode != 0:
        print(f"FAIL {' '.join(cmd)} exited {p.returncode}\n{p.stderr}")
        return False
    return True


KS_HEADER = ["name", "Count", "Mean Kernel Time (µs)", "Median Kernel Time (µs)", "Std Kernel Time (µs)",
             "Min Kernel Time (µs)", "Max Kernel Time (µs)", "Percentage (%)", "Cumulative Percentage (%)",
             "Total Kernel Time (ms)", "Category"]
CAT_HEADER = ["op category", "Count", "total_direct_kernel_time_ms", "Percentage (%)", "Cumulative Percentage (%)"]
KD_HEADER = ["name", "Kernel duration (µs)", "stream", "dispatch_id", "grid_x", "grid_y", "grid_z", "block_x",
             "block_y", "block_z", "agent_id", "thread_id"]
SHORT_HEADER = ["name", "Short Kernel count", "Short Kernel duration (µs) sum", "Short Kernel duration (µs) mean",
                "Short Kernel duration (µs) percent of total time"]
HIST_HEADER = ["bin_start", "bin_end", "count"]
# §1.9: categories in output order, their counts, and cumulative % to 3 decimals
CATS = [("COMM", "1310", 93.717), ("Elementwise", "21571", 96.047), ("GEMM", "5350", 97.524),
        ("Other", "7813", 99.573), ("Reduction", "2050", 100.0), ("Memory", "3671", 97.898),
        ("Normalization", "1750", 98.149), ("Attention", "400", 0.088)]


def golden_reference(d):
    """Every value of §1.9, exactly as the reference prints it."""
    h, r = read(d, "gpu_timeline")
    check("gpu_timeline header", h, ["type", "time ms", "percent"])
    want = [("total_time", "19207.53247000122", "100.0"),
            ("kernel", "4233.1123342971805", "22.038813891938254"),
            ("memory", "0.0", "0.0"),
            ("busy_time", "4233.1123342971805", "22.038813891938254"),
            ("idle", "14974.42013570404", "77.96118610806174")]
    check("gpu_timeline rows", len(r), 5)
    for i, w in enumerate(want[:len(r)]):
        for j, name in enumerate(("type", "time ms", "percent")):
            check(f"gpu_timeline[{i}].{name}", col(h, r, name, i), w[j])

    h, r = read(d, "kernel_summary")
    check("kernel_summary header", h, KS_HEADER)
    check("kernel_summary rows", len(r), 44)
    for name, want in (("name", "ncclDevKernel_Generic_1"), ("Count", "1310"),
                       ("Total Kernel Time (ms)", "4158756.678"), ("Percentage (%)", "93.62896945325032"),
                       ("Cumulative Percentage (%)", "97.7109114568534"), ("Category", "COMM")):
        check(f"kernel_summary[0].{name}", col(h, r, name, 0), want)
    for name, want in (("name", "vectorized_elementwise_kernel"), ("Count", "16971"),
                       ("Total Kernel Time (ms)", "74340.648")):
        check(f"kernel_summary[1].{name}", col(h, r, name, 1), want)

    h, r = read(d, "kernel_summary_by_category")
    check("kernel_summary_by_category header", h, CAT_HEADER)
    check("kernel_summary_by_category rows", len(r), 8)
    for i, (cat, count, cum) in enumerate(CATS[:len(r)]):
        check(f"by_category[{i}].op category", col(h, r, "op category", i), cat)
        check(f"by_category[{i}].Count", col(h, r, "Count", i), count)
        check(f"by_category[{i}].Cumulative (3 decimals)",
              round(float(col(h, r, "Cumulative Percentage (%)", i)), 3), cum)
    check("by_category[0].total_direct_kernel_time_ms", col(h, r, "total_direct_kernel_time_ms", 0), "4158756.678")

    h, r = read(d, "kernel_details")
    check("kernel_details header", h, KD_HEADER)
    check("kernel_details rows (topk 20)", len(r), 20)
    for name, want in (("name", "ncclDevKernel_Generic_1"), ("Kernel duration (µs)", "733003332"),
                       ("stream", "565"), ("dispatch_id", "2809"), ("grid_x", "26624"), ("grid_y", "1"),
                       ("grid_z", "1"), ("block_x", "256"), ("block_y", "1"), ("block_z", "1"),
                       ("agent_id", "37946"), ("thread_id", "908")):
        check(f"kernel_details[0].{name}", col(h, r, name, 0), want)

    h, r = read(d, "short_kernels_summary")
    check("short_kernels_summary header", h, SHORT_HEADER)
    check("short_kernels_summary rows", len(r), 0)
    h, r = read(d, "short_kernel_histogram")
    check("short_kernel_histogram header", h, HIST_HEADER)
    check("short_kernel_histogram rows", len(r), 0)


def golden_default(d, ref):
    """The same values in the units the labels name (default mode)."""
    h, r = read(d, "gpu_timeline")
    # exact integer-ns arithmetic: within the reference's 1e-6 tolerance of
    # its float values, and exact decimal values of the ns counts
    for i, (typ, ms, pct, exact) in enumerate((("total_time", 19207.53247000122, 100.0, "19207.53247"),
                                               ("kernel", 4233.1123342971805, 22.038813891938254, "4233.112334"),
                                               ("memory", 0.0, 0.0, "0.0"),
                                               ("busy_time", 4233.1123342971805, 22.038813891938254, "4233.112334"),
                                               ("idle", 14974.42013570404, 77.96118610806174, "14974.420136"))):
        check(f"default gpu_timeline[{i}].type", col(h, r, "type", i), typ)
        check_close(f"default gpu_timeline[{i}].time ms", col(h, r, "time ms", i), ms, rel=0, abs_=1e-6)
        check(f"default gpu_timeline[{i}].time ms (exact ns)", col(h, r, "time ms", i), exact)
        check_close(f"default gpu_timeline[{i}].percent", col(h, r, "percent", i), pct, rel=0, abs_=1e-6)

    h, r = read(d, "kernel_summary")
    rh, rr = read(ref, "kernel_summary")
    check("default kernel_summary header", h, KS_HEADER)
    check("default kernel_summary rows", len(r), len(rr))
    check("default kernel_summary[0].Total Kernel Time (ms)", col(h, r, "Total Kernel Time (ms)", 0), "4158.756678")
    check("default kernel_summary[1].Total Kernel Time (ms)", col(h, r, "Total Kernel Time (ms)", 1), "74.340648")
    run_sum = 0.0
    for i in range(min(len(r), len(rr))):
        check(f"default kernel_summary[{i}].name", col(h, r, "name", i), col(rh, rr, "name", i))
        for name in ("Count", "Percentage (%)", "Category"):
            check(f"default kernel_summary[{i}].{name}", col(h, r, name, i), col(rh, rr, name, i))
        for name in ("Mean Kernel Time (µs)", "Median Kernel Time (µs)", "Std Kernel Time (µs)",
                     "Min Kernel Time (µs)", "Max Kernel Time (µs)", "Total Kernel Time (ms)"):
            rv = col(rh, rr, name, i)
            if rv == "":
                check(f"default kernel_summary[{i}].{name} (missing)", col(h, r, name, i), "")
            else:
                check_close(f"default kernel_summary[{i}].{name}", col(h, r, name, i), float(rv) / 1000)
        run_sum += float(col(h, r, "Percentage (%)", i))
        check_close(f"default kernel_summary[{i}].Cumulative (in row order)",
                    col(h, r, "Cumulative Percentage (%)", i), run_sum)

    h, r = read(d, "kernel_summary_by_category")
    rh, rr = read(ref, "kernel_summary_by_category")
    check("default by_category header", h, CAT_HEADER)
    check("default by_category rows", len(r), 8)
    check("default by_category[0].total_direct_kernel_time_ms", col(h, r, "total_direct_kernel_time_ms", 0),
          "4158.756678")
    run_sum = 0.0
    for i in range(min(len(r), len(rr))):
        for name in ("op category", "Count", "Percentage (%)"):
            check(f"default by_category[{i}].{name}", col(h, r, name, i), col(rh, rr, name, i))
        check_close(f"default by_category[{i}].total_direct_kernel_time_ms",
                    col(h, r, "total_direct_kernel_time_ms", i), float(col(rh, rr, "total_direct_kernel_time_ms", i)) / 1000)
        run_sum += float(col(h, r, "Percentage (%)", i))
        check_close(f"default by_category[{i}].Cumulative (in row order)",
                    col(h, r, "Cumulative Percentage (%)", i), run_sum)

    h, r = read(d, "kernel_details")
    rh, rr = read(ref, "kernel_details")
    check("default kernel_details header", h, KD_HEADER)
    check("default kernel_details rows", len(r), 20)
    check("default kernel_details[0].Kernel duration (µs)", col(h, r, "Kernel duration (µs)", 0), "733003.332")
    for i in range(min(len(r), len(rr))):
        for name in KD_HEADER:
            if name == "Kernel duration (µs)":
                check_close(f"default kernel_details[{i}].{name}", col(h, r, name, i), float(col(rh, rr, name, i)) / 1000)
            else:
                check(f"default kernel_details[{i}].{name}", col(h, r, name, i), col(rh, rr, name, i))


def golden_default_short(d):
    """A 0.01 µs threshold is the reference's '10' (ns): empty sheets again."""
    h, r = read(d, "short_kernels_summary")
    check("default short_kernels_summary (0.01 µs) header", h, SHORT_HEADER)
    check("default short_kernels_summary (0.01 µs) rows", len(r), 0)
    h, r = read(d, "short_kernel_histogram")
    check("default short_kernel_histogram (0.01 µs) rows", len(r), 0)


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    build = os.path.abspath(sys.argv[1])
    if not os.path.exists(SAMPLE):
        print(f"golden_rocprof: {SAMPLE} absent; skipped")
        return 77
    with tempfile.TemporaryDirectory(prefix="tl_golden_rocprof_") as tmp:
        db = os.path.join(tmp, "db")
        ref, dflt, short = (os.path.join(tmp, n) for n in ("ref", "default", "short"))
        if run(build, db, ref, ["--reference-units"]):
            golden_reference(ref)
            if run(build, db, dflt, []):
                golden_default(dflt, ref)
            if run(build, db, short, ["--short_kernel_threshold_us", "0.01"]):
                golden_default_short(short)
        else:
            global failed
            failed += 1
    print(f"golden_rocprof: {passed + failed} cells compared")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
