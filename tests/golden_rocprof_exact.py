#!/usr/bin/env python3
"""golden_rocprof_exact.py — `--reference-units` gives the reference's
rocprofv3 CSVs byte for byte (conformance item 10: the help promises the
reference's exact numbers, e.g. a cumulative percentage of 100.0, not
100.00000000000001).

1. The in-repo slice (tests/golden/rocprof_908_slice, 800 dispatches): every
   CSV of reference_csvs/ equals ours, byte for byte, with the flags it was
   made with (tests/golden/make.py) plus --reference-units.
2. The whole sample ../shared/data/rocprof/908_results.json.gz (43,915
   dispatches; skipped without it): for each flag set of
   tests/golden/rocprof_908_full/manifest.json, the SHA-256 of every CSV
   ours writes equals the reference's, and ours writes no other CSV.

usage: golden_rocprof_exact.py BUILD_DIR   (prints "N passed, M failed";
exit 0 when nothing failed)
"""
import hashlib
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
GOLDEN = os.path.join(HERE, "golden")
DATA = os.environ.get("TL_SHARED_DATA") or os.path.join(HERE, "..", "..", "shared", "data")
sys.path.insert(0, GOLDEN)
import make  # noqa: E402  (the slice's flags)

PASS = FAIL = 0


def check(cond, what):
    global PASS, FAIL
    if cond:
        PASS += 1
    else:
        FAIL += 1
        print("FAIL:", what)


def run(build, trace, out, flags, db):
    p = subprocess.run([os.path.join(build, "TraceLens_generate_perf_report_rocprof"), "--profile_json_path", trace,
                        "--output_csvs_dir", out, "--reference-units", "--db", db] + flags,
                       capture_output=True, text=True)
    check(p.returncode == 0, "rocprof report %s %s (%s)" % (os.path.basename(trace), flags, p.stderr[-300:]))


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    build = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory(prefix="tl_rocprof_exact_") as tmp:
        db = os.path.join(tmp, "db")
        name = make.ROCPROF_CASE[0]
        ref = os.path.join(GOLDEN, name, "reference_csvs")
        out = os.path.join(tmp, name)
        run(build, os.path.join(GOLDEN, name, name + ".json.gz"), out, make.ROCPROF_FLAGS, db)
        for f in sorted(os.listdir(ref)):
            ours = os.path.join(out, f)
            check(os.path.exists(ours) and digest(ours) == digest(os.path.join(ref, f)),
                  "%s: %s byte for byte" % (name, f))
        sample = os.path.join(DATA, "rocprof", "908_results.json.gz")
        if not os.path.isfile(sample):
            print("908_results: skipped (no %s)" % sample)
        else:
            with open(os.path.join(GOLDEN, "rocprof_908_full", "manifest.json")) as f:
                manifest = json.load(f)
            for setname, entry in sorted(manifest.items()):
                out = os.path.join(tmp, "full_" + setname)
                run(build, sample, out, entry["flags"], db)
                written = sorted(os.listdir(out)) if os.path.isdir(out) else []
                check(written == sorted(entry["sheets"]), "908_results %s: CSVs %s, reference %s"
                      % (setname, written, sorted(entry["sheets"])))
                for f, want in sorted(entry["sheets"].items()):
                    path = os.path.join(out, f)
                    check(os.path.exists(path) and digest(path) == want,
                          "908_results %s: %s byte for byte" % (setname, f))
    print("%d passed, %d failed" % (PASS, FAIL))
    return 1 if FAIL else 0


if __name__ == "__main__":
    sys.exit(main())
