#!/usr/bin/env python3
"""test_split_pieces.py — the pieces of `tracelens split` on every shared
trace with a capture folder:
  - they keep graph-replay attribution: their GPU compute time (gpu_timeline
    computation_time, which counts only kernels linked to a launching op)
    sums to the merged trace's within 0.1 %;
  - written out with --out, each is valid JSON that our own report reads
    back with the stored piece's kernel time, kernel count and kernel UIDs
    (fresh: the positions in the written file);
and xDiT traces (`execute_diffusion_<bs>_<HxW>`) split into the one
diffusion step the reference's splitter cuts, with its GPU event count.

Usage: test_split_pieces.py BUILD_DIR   (exit 77 when ../shared/data is absent)
Prints "N passed, M failed" last."""
import csv
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
TOLERANCE = 0.001

check = Checks()


def run(db, *args):
    p = subprocess.run([BIN, "--db", db] + list(args), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    return p.returncode, p.stdout, p.stderr


def compute_ms(db, tid, tmp):
    out = os.path.join(tmp, tid)
    rc, _, err = run(db, "report", tid, "--output_csvs_dir", out)
    if not check(rc == 0, f"report {tid}: rc {rc} {err.strip()[-200:]}"):
        return 0.0
    with open(os.path.join(out, "gpu_timeline.csv"), newline="") as f:
        for r in csv.DictReader(f):
            if r["type"] == "computation_time":
                return float(r["time ms"])
    return 0.0


def sql(db, query):
    rc, out, err = run(db, "sql", "--format", "csv", query)
    check(rc == 0, f"sql {query}: rc {rc} {err.strip()[-200:]}")
    return list(csv.reader(out.splitlines()))[1:]


def kernel_facts(db, tid):
    return sql(db, "select count(*), sum(dur), sum(linked), min(uid), max(uid), sum(uid) "
                   f"from kernels where trace_id = '{tid}'")


def check_written(name, db, pieces, outdir, tmp):
    files = sorted(os.listdir(outdir))
    check(len(files) == len(pieces), f"{name}: {len(files)} files for {len(pieces)} pieces")
    for tid, first in pieces:
        fn = next((f for f in files if f.endswith(f"_step{first}.json")), None)
        if not check(fn, f"{name}: no file for step {first} in {files}"):
            continue
        path = os.path.join(outdir, fn)
        try:
            with open(path) as f:
                n = len(json.load(f)["traceEvents"])
        except (ValueError, KeyError) as e:
            check(False, f"{name}: {fn} is not Kineto JSON: {e}")
            continue
        db2 = os.path.join(tmp, name + ".back.db")
        rc, out, err = run(db2, "ingest", path)
        if not check(rc == 0, f"{name}: {fn} does not ingest: {err.strip()[-200:]}"):
            continue
        back = out.split("\t")[0]
        want, got = kernel_facts(db, tid), kernel_facts(db2, back)
        check(want == got and want and want[0][0] != "0",
              f"{name}: {fn} reads back with kernels {got} (stored piece {want})")
        uids = sql(db2, f"select max(uid) from events where trace_id = '{back}'")
        check(uids and int(uids[0][0]) < n, f"{name}: {fn}: UIDs beyond its {n} events")
        check(abs(compute_ms(db2, back, tmp) - compute_ms(db, tid, tmp)) < 1e-9,
              f"{name}: {fn}: GPU compute time differs from the stored piece's")


def capture_cases():
    roots = [os.path.join(DATA, "inference", d) for d in sorted(os.listdir(os.path.join(DATA, "inference")))]
    roots.append(os.path.join(DATA, "public", "xdit_flux_aiter_sage"))
    for d in roots:
        cap = os.path.join(d, "capture_traces")
        traces = [f for f in sorted(os.listdir(d)) if f.endswith(".json.gz")] if os.path.isdir(d) else []
        if os.path.isdir(cap) and traces:
            yield os.path.basename(d), os.path.join(d, traces[0]), cap


# GPU events of the one step the reference's splitter
# (TraceUtils/split_inference_trace_annotation.py --store-single-iteration,
# main 171dd747) cuts from each xDiT trace: num_gpu_events of its
# execution_details.json.
XDIT_REFERENCE_GPU_EVENTS = {"xdit_sd35": 8066, "xdit_flux_aiter_sage": 7866}


def check_diffusion(tmp):
    for name, want in XDIT_REFERENCE_GPU_EVENTS.items():
        trace = os.path.join(DATA, "public", name, name + ".json.gz")
        if not os.path.exists(trace):
            continue
        db = os.path.join(tmp, name + ".diffusion.db")
        rc, out, err = run(db, "split", trace)
        lines = [l.split("\t") for l in out.splitlines() if l and not l.startswith("#")]
        if not check(rc == 0 and len(lines) == 1 and lines[0][1] == "diffusion",
                     f"{name}: split rc {rc}, pieces {lines} {err.strip()[-200:]}"):
            continue
        got = sql(db, f"select gpu_events, label_bs from traces where trace_id = '{lines[0][0]}'")
        check(got == [[str(want), "1"]], f"{name}: diffusion piece {got}, the reference's {want} GPU events, bs 1")


def main():
    if not os.path.isdir(os.path.join(DATA, "inference")):
        print("skipped: no ../shared/data/inference")
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        for name, trace, cap in capture_cases():
            db = os.path.join(tmp, name + ".db")
            outdir = os.path.join(tmp, name + ".out")
            rc, out, err = run(db, "split", trace, "--capture_folder", cap, "--out", outdir)
            if not check(rc == 0, f"{name}: split rc {rc} {err.strip()[-200:]}"):
                continue
            lines = [l.split("\t") for l in out.splitlines() if l and not l.startswith("#")]
            merged = lines[0][0]
            pieces = [(l[0], int(l[3].split()[1].split("-")[0])) for l in lines[1:]]
            check(pieces, f"{name}: no pieces")
            whole = compute_ms(db, merged, tmp)
            parts = sum(compute_ms(db, p, tmp) for p, _ in pieces)
            check(whole > 0 and abs(parts - whole) <= TOLERANCE * whole,
                  f"{name}: pieces' GPU compute time {parts:.3f} ms vs the merged trace's {whole:.3f} ms")
            check_written(name, db, pieces, outdir, tmp)
        check_diffusion(tmp)
    return check.summary()


if __name__ == "__main__":
    sys.exit(main())
