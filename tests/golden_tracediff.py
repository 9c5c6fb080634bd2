#!/usr/bin/env python3
"""golden_tracediff.py — TraceDiff conformance: `tracelens diff` of the mi300
(baseline) and h100 timesformer traces must reproduce every file of the
reference output folder ../shared/data/tracediff byte for byte.

Usage: golden_tracediff.py [--build DIR] [--data DIR]
  --build  build directory holding `tracelens` (default $TL_BUILD, else build)
  --data   shared data folder (default $TL_SHARED_DATA, else ../shared/data
           beside the repository)
Prints the files compared and `N passed, M failed`; exit 0 all passed,
1 a mismatch, 77 skipped (data absent). Python 3 standard library only."""
import argparse
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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.environ.get("TL_BUILD", os.path.join(ROOT, "build")))
    ap.add_argument("--data", default=os.environ.get("TL_SHARED_DATA", os.path.join(ROOT, "..", "shared", "data")))
    args = ap.parse_args()
    ref_dir = os.path.join(args.data, "tracediff")
    t1 = os.path.join(args.data, "kineto", "mi300", TRACE)
    t2 = os.path.join(args.data, "kineto", "h100", TRACE)
    if not (os.path.isdir(ref_dir) and os.path.isfile(t1) and os.path.isfile(t2)):
        print("golden_tracediff: skipped (no shared data at %s)" % args.data)
        return 77
    exe = os.path.join(args.build, "tracelens")
    if not os.access(exe, os.X_OK):
        print("golden_tracediff: %s not built" % exe)
        return 1
    passed = failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out")
        cmd = [exe, "--db", os.path.join(tmp, "db"), "diff", t1, t2, "--out", out]
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if r.returncode != 0:
            print("golden_tracediff: %s failed (%d):\n%s" % (" ".join(cmd), r.returncode, r.stderr.decode(errors="replace")))
            return 1
        names = sorted(os.listdir(ref_dir))
        for name in names:
            with open(os.path.join(ref_dir, name), "rb") as f:
                ref = f.read()
            path = os.path.join(out, name)
            if not os.path.exists(path):
                print("FAIL %s: not written" % name)
                failed += 1
                continue
            with open(path, "rb") as f:
                ours = f.read()
            if ours == ref:
                print("ok   %s (%d bytes)" % (name, len(ref)))
                passed += 1
            else:
                print("FAIL %s: %s" % (name, first_difference(ours, ref)))
                failed += 1
        print("files compared: %d" % len(names))
    print("%d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
