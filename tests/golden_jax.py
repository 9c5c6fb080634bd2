#!/usr/bin/env python3
"""golden_jax.py — conformance of the JAX report against the reference CSVs.

Runs the built TraceLens_generate_perf_report_jax on the legacy JAX conv
sample (../shared/data/jax/jax_conv_minimal_legacy) into a temporary CSV
folder and compares it with jax_conv_minimal_perf_report_csvs by the rules of
spec pytorch-report.md §1: every reference sheet, the reference's columns
that the output has, rows by position, floats to 1e-6 absolute, other cells
parsed as Python literals (np.float64(...) wrappers stripped, lists of dicts
sorted). It then checks the exact values quoted in spec formats.md §2 (the
reference CSVs print 16 significant digits, so those use 1e-12 relative).
Prints the number of cells compared and "N passed, M failed" last; exits 77
(skipped) when the shared data is absent.

Usage: golden_jax.py [BUILD_DIR]   (default: $TL_BUILD, else ./build)
"""
import ast
import csv
import math
import os
import re
import subprocess
import sys
import tempfile

from tlcheck import Checks

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)

check = Checks()




def parse_cell(text):
    t = re.sub(r"np\.(float64|int64)\(([^()]*)\)", r"\2", text)
    try:
        v = ast.literal_eval(t)
    except (ValueError, SyntaxError):
        return text
    return norm(v)


def norm(v):
    if isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
        return sorted((norm_dict(x) for x in v), key=lambda d: repr(sorted(d.items())))
    if isinstance(v, (list, tuple)):
        return type(v)(norm(x) for x in v)
    if isinstance(v, dict):
        return norm_dict(v)
    return v


def norm_dict(d):
    return {k: norm(x) for k, x in d.items()}


def is_float(s):
    try:
        float(s)
        return True
    except ValueError:
        return False


def cells_equal(ref, out):
    if ref == "":
        return True  # reference NaN/empty: not checked
    if is_float(ref) and is_float(out):
        a, b = float(ref), float(out)
        if math.isnan(a):
            return True
        return abs(a - b) < 1e-6
    pr, po = parse_cell(ref), parse_cell(out)
    return values_close(pr, po)


def values_close(a, b):
    if isinstance(a, float) or isinstance(b, float):
        try:
            return abs(float(a) - float(b)) < 1e-6
        except (TypeError, ValueError):
            return False
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(values_close(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(values_close(a[k], b[k]) for k in a)
    return a == b


def read_csv(path):
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    if not rows:
        return [], []
    return rows[0], rows[1:]


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("TL_BUILD", os.path.join(REPO, "build"))
    data = os.environ.get("TL_SHARED_DATA", os.path.join(REPO, "..", "shared", "data"))
    jax = os.path.join(data, "jax")
    trace = os.path.join(jax, "jax_conv_minimal_legacy", "chi-mi300x-013.ord.vultr.cpe.ice.amd.com.xplane.pb")
    refdir = os.path.join(jax, "jax_conv_minimal_perf_report_csvs")
    if not os.path.exists(trace) or not os.path.isdir(refdir):
        print("golden_jax: shared data not found; skipped")
        return 77
    exe = os.path.join(build, "TraceLens_generate_perf_report_jax")
    if not os.path.exists(exe):
        print("golden_jax: %s not built" % exe)
        return 1

    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "csv")
        env = dict(os.environ, TRACELENS_DB=os.path.join(tmp, "db"))
        r = subprocess.run([exe, "--profile_path", trace, "--output_csvs_dir", out], env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        check(r.returncode == 0, "report exit status %d: %s" % (r.returncode, r.stderr.strip()))
        if r.returncode != 0:
            print("%d passed, %d failed" % (check.passed, check.failed))
            return 1

        # --- reference CSVs, column by column
        ncells = 0
        for fn in sorted(os.listdir(refdir)):
            if not fn.endswith(".csv"):
                continue
            rh, rrows = read_csv(os.path.join(refdir, fn))
            if not rh:
                continue
            op = os.path.join(out, fn)
            check(os.path.exists(op), "sheet %s written" % fn)
            if not os.path.exists(op):
                continue
            oh, orows = read_csv(op)
            check(len(orows) == len(rrows), "%s: %d rows, reference %d" % (fn, len(orows), len(rrows)))
            for c, name in enumerate(rh):
                if name not in oh:
                    check(False, "%s: column %r missing" % (fn, name))
                    continue
                oc = oh.index(name)
                bad = []
                for i, rrow in enumerate(rrows):
                    if i >= len(orows):
                        break
                    ncells += 1
                    if not cells_equal(rrow[c], orows[i][oc]):
                        bad.append((i, rrow[c][:120], orows[i][oc][:120]))
                check(not bad, "%s: column %r: %d cells differ, first %r" % (fn, name, len(bad), bad[:1]))
        print("cells compared: %d" % ncells)

        # --- exact values quoted in spec formats.md §2
        def sheet(name):
            h, rows = read_csv(os.path.join(out, name + ".csv"))
            return [dict(zip(h, r)) for r in rows]

        def close(a, b, rel=1e-12):
            return abs(float(a) - b) <= rel * max(1.0, abs(b))

        tl = sheet("gpu_timeline")
        check([r["gpu_pid"] for r in tl[::8]] == ["8", "1"], "gpu_timeline: pid 8 block first, then pid 1")
        by = {(r["gpu_pid"], r["type"]): r for r in tl}
        check(close(by[("8", "busy_time")]["time ms"], 3.586492999999318), "pid 8 busy 3.586492999999318 ms")
        check(close(by[("8", "total_time")]["time ms"], 15.76130099999998), "pid 8 total 15.76130099999998 ms")
        check(abs(float(by[("8", "busy_time")]["percent"]) - 22.755) < 5e-4, "pid 8 busy 22.755 %")
        check(close(by[("1", "busy_time")]["time ms"], 0.889027999999933), "pid 1 busy 0.889027999999933 ms")
        check(close(by[("1", "total_time")]["time ms"], 27.86772800000012), "pid 1 total 27.86772800000012 ms")
        check(abs(float(by[("1", "exposed_memcpy_time")]["percent"]) - 3.19) < 5e-3, "pid 1 exposed memcpy 3.19 %")
        check(float(by[("1", "computation_time")]["time ms"]) == 0.0, "pid 1 memcpy only")
        av = {r["type"]: float(r["time ms"]) for r in sheet("gpu_events_averages")}
        for k, v in [("busy_time", 2.237760499999625), ("total_time", 21.81451450000005),
                     ("computation_time", 1.793246499999659), ("idle_time", 19.57675400000042),
                     ("total_memcpy_time", 0.4445139999999665)]:
            check(close(av[k], v), "averages %s %r" % (k, v))
        kl = sheet("kernel_launchers")
        check(len(kl) == 25, "25 kernel launchers")
        check(kl and kl[0]["UID"] == "53", "first kernel UID 53")
        check(kl and close(kl[0]["GPU_kernel_launch_latency"], 20.94200000003912), "launch latency 20.942 µs")
        check(sum(r["op category"] == "Conv" for r in kl) == 10, "10 Conv kernels")
        check(sum(r["op category"] == "Uncategorized Events/XLA" for r in kl) == 15, "15 XLA kernels")
        ua = sheet("kernel_launchers_unique_args")
        check(ua and ua[0]["ex_UID"] == "57", "unique args row 1 ex_UID 57")
        check(ua and close(ua[0]["total_direct_kernel_time_std"], 47.76283836310402), "unique args std")
        check(ua and "42.72038135129414" in ua[0]["kernel_details_summary"], "summary population std")
        xp = sheet("df_xla_perf")
        check(len(xp) == 15 and xp[0]["total_input_bytes"] == "655360", "df_xla_perf 15 rows, 655360 bytes")
        oc = sheet("op_conv")
        check(len(oc) == 2, "op_conv two rows")
        check(oc and close(oc[0]["GFLOPS_first"], 2.28810752), "conv GFLOPS 2.28810752")
        check(oc and close(oc[0]["Data Moved (MB)_first"], 551.6211013793945), "conv Data Moved")
        check(oc and close(oc[0]["FLOPS/Byte_first"], 3.955812004913109), "conv FLOPS/Byte")

    print("%d passed, %d failed" % (check.passed, check.failed))
    return 1 if check.failed else 0


if __name__ == "__main__":
    sys.exit(main())
