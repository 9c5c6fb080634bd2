#!/usr/bin/env python3
"""test_split_multistep.py — `tracelens split --capture_folder` on multi-step
traces. No shared trace with a capture folder holds more than one step, so
each one-step trace is repeated STEPS times the way a longer capture looks:
every copy shifted in time by the step's span plus a gap, with fresh
correlation ids, External ids, flow ids and Python ids, so that links stay
inside their copy. Graph launches are tied to a capture by the kernel-name
sequence of their replayed kernels, which each copy keeps. Checks:
  - split cuts STEPS pieces whose GPU compute time (gpu_timeline
    computation_time: kernels linked to a launching op) sums to the whole
    trace's within 0.1 %, and every piece carries a share of it;
  - each piece written with --out reads back with the stored piece's
    kernel count and time and its GPU compute time;
  - the compat TraceLens_split_inference_trace cuts STEPS iterations.

Usage: test_split_multistep.py BUILD_DIR   (exit 77 when ../shared/data is absent)
Prints "N passed, M failed" last."""
import csv
import glob
import gzip
import json
import os
import subprocess
import sys
import tempfile

from tlcheck import Checks

HERE = os.path.dirname(os.path.abspath(__file__))
BUILD = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("TL_BUILD", "build")
DATA = os.environ.get("TL_SHARED_DATA", os.path.join(HERE, "..", "..", "shared", "data"))
BIN = os.path.join(BUILD, "tracelens")
COMPAT = os.path.join(BUILD, "TraceLens_split_inference_trace")
CASES = ["vllm_decode_full", "vllm_prefilldecode_piecewise", "sglang_decode"]
STEPS = 3
GAP_US = 1000.0
ID_STRIDE = 10_000_000  # larger than any id in the shared traces
TOLERANCE = 0.001

check = Checks()


def shifted_ids(args, k):
    """args with every linking id moved into copy k's own range."""
    out = dict(args)
    for key in ("correlation", "External id", "Python id", "Python parent id", "Ev Idx"):
        v = out.get(key)
        if isinstance(v, int) and v >= 0:
            out[key] = v + k * ID_STRIDE
    return out


def multistep(src, dst):
    """Write src's one step repeated STEPS times to dst; return the span."""
    with gzip.open(src, "rt") as f:
        doc = json.load(f)
    events = doc["traceEvents"]
    timed = [e for e in events if "ts" in e and e.get("ph") != "M"]
    start = min(float(e["ts"]) for e in timed)
    end = max(float(e["ts"]) + float(e.get("dur", 0)) for e in timed)
    shift = end - start + GAP_US
    out = [e for e in events if e not in timed]
    for k in range(STEPS):
        for e in timed:
            c = dict(e)
            c["ts"] = float(e["ts"]) + k * shift
            if "args" in c:
                c["args"] = shifted_ids(c["args"], k)
            if c.get("ph") in ("s", "f", "t") and isinstance(c.get("id"), int):
                c["id"] = c["id"] + k * ID_STRIDE
            out.append(c)
    doc["traceEvents"] = out
    with open(dst, "w") as f:
        json.dump(doc, f)


def run(db, *args):
    p = subprocess.run([BIN, "--db", db] + list(args), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    return p.returncode, p.stdout, p.stderr


def compute_ms(db, tid, tmp):
    out = os.path.join(tmp, "csv_" + tid)
    rc, _, err = run(db, "report", tid, "--output_csvs_dir", out)
    if not check(rc == 0, f"report {tid}: rc {rc} {err.strip()[-200:]}"):
        return 0.0
    with open(os.path.join(out, "gpu_timeline.csv"), newline="") as f:
        for r in csv.DictReader(f):
            if r["type"] == "computation_time":
                return float(r["time ms"])
    return 0.0


def kernel_facts(db, tid):
    rc, out, err = run(db, "sql", "--format", "csv",
                       f"select count(*), sum(dur) from kernels where trace_id = '{tid}'")
    check(rc == 0, f"sql: rc {rc} {err.strip()[-200:]}")
    return list(csv.reader(out.splitlines()))[1:]


def check_written(name, db, pieces, outdir, tmp):
    files = sorted(os.listdir(outdir))
    check(len(files) == STEPS, f"{name}: {len(files)} files written for {STEPS} steps")
    for i, (tid, fn) in enumerate(zip([p for p, _ in pieces], files)):
        db2 = os.path.join(tmp, f"{name}.back{i}.db")
        rc, out, err = run(db2, "ingest", os.path.join(outdir, fn))
        if not check(rc == 0, f"{name}: {fn} does not ingest: {err.strip()[-200:]}"):
            continue
        back = out.split("\t")[0]
        want, got = kernel_facts(db, tid), kernel_facts(db2, back)
        check(want == got and want and want[0][0] != "0",
              f"{name}: {fn} reads back with kernels {got} (stored piece {want})")
        check(abs(compute_ms(db2, back, tmp) - compute_ms(db, tid, tmp)) < 1e-9,
              f"{name}: {fn}: GPU compute time differs from the stored piece's")


def check_case(name, trace, cap, tmp):
    path = os.path.join(tmp, name + ".json")
    multistep(trace, path)
    db = os.path.join(tmp, name + ".db")
    outdir = os.path.join(tmp, name + ".out")
    rc, out, err = run(db, "split", path, "--capture_folder", cap, "--out", outdir)
    if not check(rc == 0, f"{name}: split rc {rc} {err.strip()[-200:]}"):
        return
    lines = [l.split("\t") for l in out.splitlines() if l and not l.startswith("#")]
    merged = lines[0][0]
    pieces = [(l[0], l[3]) for l in lines[1:]]
    if not check(len(pieces) == STEPS, f"{name}: {len(pieces)} pieces for {STEPS} steps: {pieces}"):
        return
    whole = compute_ms(db, merged, tmp)
    parts = [compute_ms(db, p, tmp) for p, _ in pieces]
    check(whole > 0 and abs(sum(parts) - whole) <= TOLERANCE * whole,
          f"{name}: pieces' GPU compute time {sum(parts):.3f} ms vs the whole trace's {whole:.3f} ms")
    check(all(abs(p - whole / STEPS) <= TOLERANCE * whole for p in parts),
          f"{name}: pieces' GPU compute times {parts} are not equal thirds of {whole:.3f} ms")
    check_written(name, db, pieces, outdir, tmp)
    compat_out = os.path.join(tmp, name + ".compat")
    p = subprocess.run([COMPAT, path, "-o", compat_out, "--store-single-iteration",
                        "--db", os.path.join(tmp, name + ".compat.db")],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    cut = glob.glob(os.path.join(compat_out, "*_annotation_iteration_*.json*"))
    check(p.returncode == 0 and len(cut) == STEPS,
          f"{name}: compat splitter rc {p.returncode}, {len(cut)} iterations for {STEPS} "
          f"{p.stderr.strip()[-200:]}")


def main():
    if not os.path.isdir(os.path.join(DATA, "inference")):
        print("skipped: no ../shared/data/inference")
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        for name in CASES:
            d = os.path.join(DATA, "inference", name)
            traces = sorted(glob.glob(os.path.join(d, "*.json.gz")))
            cap = os.path.join(d, "capture_traces")
            if check(traces and os.path.isdir(cap), f"{name}: no trace with a capture folder"):
                check_case(name, traces[0], cap, tmp)
    return check.summary()


if __name__ == "__main__":
    sys.exit(main())
