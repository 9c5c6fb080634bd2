#!/usr/bin/env python3
"""The memory budget of docs/MEMORY.md on a trace of xdit's size: bench/memory
generates a 60 MiB tracegen trace and measures the peak resident set of
`tracelens ingest` and of TraceLens_generate_perf_report_pytorch (ingest and
report in one process); each must stay within 0.5 x the JSON + 16 MiB.
usage: test_memory_bar.py BUILD_DIR"""
import os, subprocess, sys

build = os.path.abspath(sys.argv[1])
root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
env = dict(os.environ, TL_BUILD=build)
out = subprocess.run(["bash", os.path.join(root, "bench", "memory"), "60M"], env=env,
                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
line = [l for l in out.stdout.splitlines() if l.startswith("bench_memory ")]
passed = failed = 0
if out.returncode or not line:
    print("bench/memory failed: rc %d\n%s" % (out.returncode, out.stderr[-2000:]))
    failed += 1
else:
    f = dict(x.split("=", 1) for x in line[0].split()[1:])
    print(line[0])
    bar = float(f["bar_mb"])
    for what in ("ingest", "e2e"):
        mb = float(f[what + "_mb"])
        if mb <= bar:
            passed += 1
        else:
            failed += 1
            print("FAIL: %s peak RSS %.1f MB > 0.5 x %.1f MB of JSON + 16 MiB = %.1f MB"
                  % (what, mb, float(f["json_mb"]), bar))
print("%d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
