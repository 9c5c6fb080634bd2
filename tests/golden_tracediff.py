#!/usr/bin/env python3
"""golden_tracediff.py — TraceDiff conformance, byte for byte:

1. `tracelens diff` of the mi300 (baseline) and h100 timesformer traces
   reproduces every file of the reference folder ../shared/data/tracediff
   (skipped without the shared data);
2. in-repo: `tracelens diff --reference-linking` of the HTA trace_diff pair
   cut in tests/golden/hta_tracediff_window (old Kineto, async_cpu_to_gpu
   flows only) reproduces the reference's files there (gzipped); without the
   flag the correlation-id links give GPU work to trace1, which the
   reference finds none of (its cpu_op_map_trace1.json is {});
3. `tracelens diff` refuses a rocprof trace (in-repo) and a JAX XPlane trace
   (shared data) with exit 2, naming the file and its format.

Usage: golden_tracediff.py [--build DIR] [--data DIR]
  --build  build directory holding `tracelens` (default $TL_BUILD, else build)
  --data   shared data folder (default $TL_SHARED_DATA, else ../shared/data
           beside the repository)
Prints the files compared and `N passed, M failed`; exit 0 all passed,
1 a mismatch. Python 3 standard library only."""
import argparse
import gzip
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
TRACE = "facebook_timesformer-base-finetuned-k400__1016002.json.gz"


def first_difference(a, b):
    la, lb = a.split(b"\n"), b.split(b"\n")
    for i, (x, y) in enumerate(zip(la, lb)):
        if x != y:
            return "line %d:\n  ours: %r\n  ref:  %r" % (i + 1, x[:300], y[:300])
    return "line count: ours %d, reference %d" % (len(la), len(lb))


def read_ref(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        return f.read()


def run_diff(exe, tmp, t1, t2, out, flags=()):
    """Runs tracelens diff; the completed process."""
    cmd = [exe, "--db", os.path.join(tmp, "db"), "diff", t1, t2, "--out", out] + list(flags)
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def compare_folder(label, ref_dir, out):
    """Every reference file (NAME or NAME.gz) against out/NAME: (passed, failed)."""
    passed = failed = 0
    names = sorted(os.listdir(ref_dir))
    for entry in names:
        name = entry[:-3] if entry.endswith(".gz") else entry
        ref = read_ref(os.path.join(ref_dir, entry))
        path = os.path.join(out, name)
        if not os.path.exists(path):
            print("FAIL %s/%s: not written" % (label, name))
            failed += 1
            continue
        with open(path, "rb") as f:
            ours = f.read()
        if ours == ref:
            print("ok   %s/%s (%d bytes)" % (label, name, len(ref)))
            passed += 1
        else:
            print("FAIL %s/%s: %s" % (label, name, first_difference(ours, ref)))
            failed += 1
    print("%s: files compared: %d" % (label, len(names)))
    return passed, failed


def timesformer(exe, tmp, data):
    ref_dir = os.path.join(data, "tracediff")
    t1 = os.path.join(data, "kineto", "mi300", TRACE)
    t2 = os.path.join(data, "kineto", "h100", TRACE)
    if not (os.path.isdir(ref_dir) and os.path.isfile(t1) and os.path.isfile(t2)):
        print("timesformer: skipped (no shared data at %s)" % data)
        return 0, 0
    out = os.path.join(tmp, "timesformer")
    r = run_diff(exe, tmp, t1, t2, out)
    if r.returncode != 0:
        print("FAIL timesformer: exit %d:\n%s" % (r.returncode, r.stderr.decode(errors="replace")))
        return 0, 1
    return compare_folder("timesformer", ref_dir, out)


def hta_window(exe, tmp):
    case = os.path.join(HERE, "golden", "hta_tracediff_window")
    t1, t2 = os.path.join(case, "control.json.gz"), os.path.join(case, "test.json.gz")
    out = os.path.join(tmp, "hta_reflink")
    r = run_diff(exe, tmp, t1, t2, out, ["--reference-linking"])
    if r.returncode != 0:
        print("FAIL hta_window: exit %d:\n%s" % (r.returncode, r.stderr.decode(errors="replace")))
        return 0, 1
    passed, failed = compare_folder("hta_window --reference-linking", os.path.join(case, "tracediff_reference"), out)
    # the default links by correlation id: trace1 then has GPU work
    out = os.path.join(tmp, "hta_default")
    r = run_diff(exe, tmp, t1, t2, out)
    with open(os.path.join(out, "cpu_op_map_trace1.json"), "rb") if r.returncode == 0 else open(os.devnull, "rb") as f:
        map1 = f.read()
    if r.returncode == 0 and len(map1) > 2:
        print("ok   hta_window default: correlation-id links give trace1 %d bytes of cpu_op_map" % len(map1))
        passed += 1
    else:
        print("FAIL hta_window default: exit %d, cpu_op_map_trace1.json %r" % (r.returncode, map1[:40]))
        failed += 1
    return passed, failed


def refusals(exe, tmp, data):
    """tracelens diff of a non-PyTorch trace: exit 2 naming the file and format."""
    kineto = os.path.join(HERE, "golden", "hta_tracediff_window", "test.json.gz")
    cases = [(os.path.join(HERE, "golden", "rocprof_908_slice", "rocprof_908_slice.json.gz"), "rocprofv3"),
             (os.path.join(data, "jax", "te_fused_attn.xplane.pb"), "JAX (XPlane)")]
    passed = failed = 0
    for path, fmt in cases:
        if not os.path.isfile(path):
            print("refuse %s: skipped (%s absent)" % (fmt, path))
            continue
        for pair in ((path, kineto), (kineto, path)):
            r = run_diff(exe, tmp, pair[0], pair[1], os.path.join(tmp, "refused"))
            err = r.stderr.decode(errors="replace")
            if r.returncode == 2 and path in err and ("is a %s trace" % fmt) in err:
                print("ok   refuse %s (%s side): %s" % (fmt, "baseline" if pair[0] == path else "variant", err.strip()))
                passed += 1
            else:
                print("FAIL refuse %s: exit %d, stderr %r" % (fmt, r.returncode, err))
                failed += 1
    return passed, failed


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.environ.get("TL_BUILD", os.path.join(ROOT, "build")))
    ap.add_argument("--data", default=os.environ.get("TL_SHARED_DATA", os.path.join(ROOT, "..", "shared", "data")))
    args = ap.parse_args()
    exe = os.path.join(args.build, "tracelens")
    if not os.access(exe, os.X_OK):
        print("golden_tracediff: %s not built" % exe)
        return 1
    passed = failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for p, f in (timesformer(exe, tmp, args.data), hta_window(exe, tmp), refusals(exe, tmp, args.data)):
            passed += p
            failed += f
    print("%d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
