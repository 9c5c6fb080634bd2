#!/usr/bin/env python3
"""Ingests every trace under ../shared/data/kineto and ../shared/data/inference
and checks the stored event counts per category, per process and per thread
(and the flow / metadata counts) against counts computed here, independently,
with Python's json module. Usage: test_ingest_counts.py BUILD_DIR DATA_DIR"""
import gzip, json, os, subprocess, sys, tempfile

build, data = sys.argv[1], sys.argv[2]
if not os.path.isdir(data):
    print("shared data absent: skipped")
    sys.exit(77)
tl = os.path.join(build, "tracelens")
dump = os.path.join(build, "tests", "tl_dumpcounts")
passed = failed = 0

def key(v):
    return ("s" + v) if isinstance(v, str) else "i%d" % v

def expected(path):
    op = gzip.open if open(path, "rb").read(2) == b"\x1f\x8b" else open
    with op(path, "rt", encoding="utf-8") as f:
        doc = json.load(f)
    c = {"events": 0, "flows": 0, "meta": 0, "by_cat": {}, "by_pid": {}, "by_pid_tid": {}}
    for e in doc["traceEvents"]:
        ph = e.get("ph")
        if ph == "X":
            c["events"] += 1
            cat = e.get("cat", "<none>")
            p = key(e.get("pid", 0)); pt = p + "|" + key(e.get("tid", 0))
            for k, v in (("by_cat", cat), ("by_pid", p), ("by_pid_tid", pt)):
                c[k][v] = c[k].get(v, 0) + 1
        elif ph in ("s", "f", "t"):
            c["flows"] += 1
        elif ph == "M":
            c["meta"] += 1
    return c

traces = []
for sub in ("kineto", "inference"):
    for root, _, files in os.walk(os.path.join(data, sub)):
        for f in sorted(files):
            if f.endswith(".json.gz") or (f.endswith(".json") and f != "execution_details.json"):
                traces.append(os.path.join(root, f))
with tempfile.TemporaryDirectory() as db:
    for path in sorted(traces):
        out = subprocess.run([tl, "--db", db, "ingest", "-q", path], capture_output=True, text=True)
        if out.returncode != 0:
            failed += 1
            print("FAIL ingest", path, out.stderr.strip())
            continue
        tid = out.stdout.split("\t")[0]
        got = json.loads(subprocess.run([dump, db, tid], capture_output=True, text=True, check=True).stdout)
        want = expected(path)
        ok = True
        for k in want:
            if got[k] != want[k]:
                ok = False
                print("FAIL", os.path.basename(path), k, "stored", got[k] if not isinstance(got[k], dict) else
                      {x: got[k].get(x) for x in set(got[k]) ^ set(want[k]) or got[k] if got[k].get(x) != want[k].get(x)},
                      "expected", want[k] if not isinstance(want[k], dict) else
                      {x: want[k].get(x) for x in set(got[k]) | set(want[k]) if got[k].get(x) != want[k].get(x)})
        if ok:
            passed += 1
            print("ok  %-70s events=%d cats=%d threads=%d" % (os.path.relpath(path, data), want["events"],
                  len(want["by_cat"]), len(want["by_pid_tid"])))
        else:
            failed += 1
print("%d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
