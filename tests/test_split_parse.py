#!/usr/bin/env python3
"""test_split_parse.py — a plain JSON trace parsed in parts on several
threads (ingest/kineto_split.c) is stored exactly as a serial parse stores
it.

For each trace, one serial ingest (TRACELENS_PARSE_THREADS=1) is compared
with split ingests (TRACELENS_SPLIT_MIN lowered so that even small files
are cut, at several cut points): every column of every event
(`sql "select * from events"`), the catalog counts and metadata, and the
PyTorch report's CSVs must be identical. Traces:
  - a hand-made "hostile" trace whose args hold text and nested objects
    that look like event boundaries ("}, {\"name\": ...") so that cut
    guesses land inside args and must be discarded, plus string pids and
    flow ids, metadata and flows in later parts, a key after traceEvents;
  - the same trace with a syntax error late in the file: the error line
    (file, byte offset, what was expected) and exit status must not change;
  - a tracegen trace;
  - real traces from ../shared/data when present.
  - a "dense" hostile trace whose args are mostly arrays of objects with
    event keys ({"ph": ..., "name": ...}), cut into ~100 small parts with
    2 or 3 in flight (the pipeline reuses its slots), whole and with a
    syntax error late in the file;
The test also requires that parts were really joined, and discarded for
the hostile traces (TRACELENS_TIMING reports it), that the pipeline
ran more parts than it had in flight, so it fails if splitting never
happens, and that parts stopped at their byte cap in the dense trace
(wrong guesses in a row) but never in the others.
usage: test_split_parse.py BUILD_DIR [DATA_DIR]
"""
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

from tlcheck import Checks

BUILD = sys.argv[1]
DATA = sys.argv[2] if len(sys.argv) > 2 else None
TL = os.path.join(BUILD, "tracelens")
TRACEGEN = os.path.join(BUILD, "tracegen")
check = Checks()
joined_total = discarded_total = 0
capped_total = {}  # trace name -> parts that stopped at their byte cap




def run(args, env_extra):
    env = dict(os.environ)
    for k in ("TRACELENS_PARSE_THREADS", "TRACELENS_SPLIT_MIN", "TRACELENS_TIMING"):
        env.pop(k, None)
    env.update(env_extra)
    return subprocess.run(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def hostile_trace(path, corrupt=False, dense=False):
    """Events whose args hold boundary-like text; flows, M events, string
    ids spread over the whole file. dense: most of the text is nested
    objects that look like events, so that most cut guesses are wrong."""
    ev = []
    t = 1000.0
    for i in range(6000):
        pid = "host proc" if i % 7 == 0 else 100
        tid = "main thread" if i % 11 == 0 else 200 + i % 3
        args = {
            "External id": i,
            "Module": [{"name": "a%d" % (i % 5)}, {"name": "b", "ts": 3}],
            "note": '}, {"name": "fake", "ph": "X"}' * (1 + i % 3),
            "Input Dims": [[i % 9, 4], []],
            "Input type": ["float", ""],
        }
        if i % 13 == 0:
            args["Output type"] = "c10::BFloat16"
        if dense:
            args["frames"] = [{"ph": "X", "name": "f%d" % n, "ts": n, "note": "},{\"ph\":"} for n in range(8)]
        ev.append({"ph": "X", "cat": "cpu_op", "name": "aten::op%d" % (i % 17) if i % 19 else "op \u00b5\\\"x\"",
                   "pid": pid, "tid": tid, "ts": round(t, 3), "dur": 5.5, "args": args})
        ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": pid, "tid": tid,
                   "ts": round(t + 1, 3), "dur": 2, "args": {"correlation": i, "External id": i}})
        ev.append({"ph": "s", "id": i if i % 2 else "f%d" % i, "pid": pid, "tid": tid, "ts": round(t + 1, 3),
                   "cat": "ac2g", "name": "ac2g"})
        kname = "ncclDevKernel_AllReduce_Sum_f32_RING_LL" if i % 10 == 0 else "gemm_kernel_%d" % (i % 4)
        ev.append({"ph": "X", "cat": "kernel", "name": kname, "pid": 0, "tid": 7, "ts": round(t + 3, 3),
                   "dur": 1.25, "args": {"correlation": i, "stream": 7, "device": 0, "grid": [1, 2, 1],
                                          "block": [64, 1, 1], "Collective name": "allreduce",
                                          "In msg nelems": 1024, "Group size": 2, "dtype": "Float"}})
        ev.append({"ph": "f", "id": i if i % 2 else "f%d" % i, "pid": 0, "tid": 7, "ts": round(t + 3, 3),
                   "cat": "ac2g", "name": "ac2g", "bp": "e"})
        if i % 500 == 0:
            ev.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid, "args": {"name": "t%d" % i}})
            ev.append({"ph": "i", "name": "mark", "pid": pid, "tid": tid, "ts": t, "s": "t"})
        t += 10
    doc = {"schemaVersion": 1, "traceEvents": ev, "deviceProperties": [{"id": 0, "name": "NVIDIA H100"}]}
    text = json.dumps(doc, indent=1)
    if corrupt:  # a ':' replaced late in the file
        at = text.index('"dur":', int(len(text) * 0.8))
        text = text[:at + 5] + ";" + text[at + 6:]
    with open(path, "w") as f:
        f.write(text)


def ingest(db, path, env):
    shutil.rmtree(db, ignore_errors=True)
    r = run([TL, "--db", db, "ingest", "-q", path], dict(env, TRACELENS_TIMING="1"))
    m = re.search(r"split into (\d+) parts, (\d+) joined, (\d+) at once, (\d+) stopped at their cap", r.stderr)
    parts, joined, slots, capped = (int(m.group(i)) for i in range(1, 5)) if m else (1, 1, 1, 0)
    err = [l for l in r.stderr.splitlines() if not l.startswith("timing:")]
    return r.returncode, r.stdout.split("\t")[0] if r.returncode == 0 else None, err, parts, joined, slots, capped


def stored(db, tid, outdir):
    """Everything to compare: all event columns, catalog, report CSVs."""
    ev = run([TL, "--db", db, "sql", "--format", "csv", "select * from events order by uid"], {}).stdout
    info = json.loads(run([TL, "--db", db, "info", tid], {}).stdout)["catalog"]
    info.pop("ingest_time_ns", None)
    shutil.rmtree(outdir, ignore_errors=True)
    r = run([TL, "--db", db, "report", tid, "--csv-dir", outdir, "--enable_kernel_summary", "--short_kernel_study"], {})
    csvs = {}
    if r.returncode == 0:
        for f in sorted(os.listdir(outdir)):
            with open(os.path.join(outdir, f), "rb") as fh:
                csvs[f] = fh.read()
    return ev, info, csvs, r.returncode


def compare(name, path, tmp, configs, expect_split=True, expect_pipeline=False):
    """Returns how many parts were discarded."""
    global joined_total, discarded_total
    discarded = 0
    size = os.path.getsize(path)
    rc0, id0, err0, _, _, _, _ = ingest(os.path.join(tmp, "db0"), path, {"TRACELENS_PARSE_THREADS": "1"})
    base = stored(os.path.join(tmp, "db0"), id0, os.path.join(tmp, "csv0")) if rc0 == 0 else None
    for threads, frac in configs:
        env = {"TRACELENS_PARSE_THREADS": str(threads), "TRACELENS_SPLIT_MIN": str(max(4096, int(size * frac)))}
        rc, tid, err, parts, joined, slots, capped = ingest(os.path.join(tmp, "db1"), path, env)
        capped_total[name] = capped_total.get(name, 0) + capped
        joined_total += joined - 1
        discarded_total += parts - joined
        discarded += parts - joined
        what = "%s (%d threads, split min %s): " % (name, threads, env["TRACELENS_SPLIT_MIN"])
        if expect_split:
            check(parts > 1, what + "the file was not split")
        if expect_pipeline:
            check(slots == threads and parts > 10 * slots, what + "%d parts, %d at once: no pipeline" % (parts, slots))
        check(rc == rc0, what + "exit status %d, serial %d" % (rc, rc0))
        check(err == err0, what + "messages differ:\n  %s\n  %s" % (err, err0))
        if rc0 != 0 or rc != 0:
            print("%s%d parts, %d joined, %d capped; the same error: %s" % (what, parts, joined, capped,
                                                                          err[0] if err else "?"))
            continue
        check(tid == id0, what + "trace id differs")
        got = stored(os.path.join(tmp, "db1"), tid, os.path.join(tmp, "csv1"))
        check(got[0] == base[0], what + "event rows differ")
        check(got[1] == base[1], what + "catalog differs")
        check(got[3] == base[3] == 0, what + "report failed")
        check(sorted(got[2]) == sorted(base[2]), what + "report files differ")
        for f in base[2]:
            check(got[2].get(f) == base[2][f], what + "report file %s differs" % f)
        print("%s%d parts, %d joined, %d capped; %d event-table bytes, %d report files identical" %
              (what, parts, joined, capped, len(base[0]), len(base[2])))
    return discarded


def main():
    tmp = tempfile.mkdtemp(prefix="tl_split_")
    try:
        cfgs = [(4, 0.2), (2, 0.3), (3, 0.13), (8, 0.05)]
        h = os.path.join(tmp, "hostile.json")
        hostile_trace(h)
        compare("hostile", h, tmp, cfgs)
        hb = os.path.join(tmp, "hostile_bad.json")
        hostile_trace(hb, corrupt=True)
        compare("hostile, corrupt", hb, tmp, cfgs[:2])
        check(discarded_total > 0, "no cut guess was discarded: the hostile trace no longer exercises that path")
        many = [(2, 0.01), (3, 0.007)]
        d = os.path.join(tmp, "dense.json")
        hostile_trace(d, dense=True)
        dense_discarded = compare("dense", d, tmp, many, expect_pipeline=True)
        check(dense_discarded > 0, "no cut guess was discarded in the dense hostile trace")
        db = os.path.join(tmp, "dense_bad.json")
        hostile_trace(db, corrupt=True, dense=True)
        compare("dense, corrupt", db, tmp, many, expect_pipeline=True)
        g = os.path.join(tmp, "tracegen.json")
        subprocess.run([TRACEGEN, "--size", "6M", "--seed", "5", "-q", "-o", g], check=True)
        compare("tracegen", g, tmp, cfgs)
        if DATA and os.path.isdir(os.path.join(DATA, "kineto")):
            for rel in ("mi300/resnet_act_checkpoint.json.gz", "mi300/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz",
                        "h100/facebook_timesformer-base-finetuned-k400__1016002.json.gz",
                        "torch_compile_triton/trace.json.gz"):
                src = os.path.join(DATA, "kineto", rel)
                if not os.path.exists(src):
                    continue
                dst = os.path.join(tmp, os.path.basename(rel)[:-3])
                with gzip.open(src, "rb") as fi, open(dst, "wb") as fo:
                    shutil.copyfileobj(fi, fo)
                compare(os.path.basename(dst), dst, tmp, cfgs[:2], expect_split=os.path.getsize(dst) > 100000)
        else:
            print("shared data absent: real traces skipped")
        check(joined_total > 0, "no part was ever joined")
        # a part stops at twice the part size past its start: wrong guesses
        # in a row (the dense traces) reach it, regular cuts never do
        check(capped_total.get("dense", 0) > 0, "no part of the dense trace stopped at its cap")
        for name in ("hostile", "tracegen"):
            check(capped_total.get(name, 0) == 0, "a part of the %s trace stopped at its cap" % name)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("split parse: %d checks passed, %d failed; %d parts joined, %d discarded" %
          (check.passed, check.failed, joined_total, discarded_total))
    return 1 if check.failed else 0


sys.exit(main())
