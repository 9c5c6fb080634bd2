#!/usr/bin/env python3
"""Tests for tools/tracegen (synthetic Kineto traces).

usage: test_tracegen.py PATH/TO/tracegen

Generates small traces into a temporary directory and checks: JSON validity,
determinism, size accuracy, Kineto layout, every event family, ac2g flow
linking, per-stream kernel ordering, host nesting, forward/backward sequence
numbers, and for --ranks: collective alignment across ranks against
truth.json and the planted formulas of docs/TRACEGEN.md.
Python stdlib only. Last line: "N passed, M failed"; exit 1 on any failure.
"""
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from decimal import Decimal

PASSED = 0
FAILED = 0


def check(cond, what):
    global PASSED, FAILED
    if cond:
        PASSED += 1
    else:
        FAILED += 1
        print("FAIL:", what)
    return cond


def run(binary, *args):
    return subprocess.run([binary, "-q", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def raw_bytes(path):
    with open(path, "rb") as f:
        data = f.read()
    return gzip.decompress(data) if path.endswith(".gz") else data


def ns(v):
    """Decimal microseconds (3 decimals) -> integer nanoseconds, exactly."""
    return int(v * 1000)


def load(path):
    text = raw_bytes(path).decode()
    return text, json.loads(text, parse_float=Decimal)


HOST_CATS = {"cpu_op", "user_annotation", "python_function", "cuda_runtime", "cuda_driver"}
GPU_CATS = {"kernel", "gpu_memcpy", "gpu_memset"}
NCCL = re.compile(r"nccl|rccl|cross_device_reduce", re.I)


def check_trace(path, label, rank=None, world=None):
    """Structural checks on one trace file. Returns the parsed document."""
    text, doc = load(path)
    ev = doc.get("traceEvents", [])
    check(len(ev) > 100, f"{label}: has events")
    for key in ("schemaVersion", "deviceProperties", "traceEvents", "traceName", "displayTimeUnit",
                "baseTimeNanoseconds", "record_shapes"):
        check(key in doc, f"{label}: top-level key {key}")
    di = doc.get("distributedInfo", {})
    check(di.get("backend") == "nccl" and "pg_config" in di and "pg_count" in di, f"{label}: distributedInfo")
    if rank is not None:
        check(di.get("rank") == rank and di.get("world_size") == world, f"{label}: distributedInfo rank/world")
        check(di["pg_config"][0]["ranks"] == list(range(world)), f"{label}: default pg ranks")
    # every ts/dur written with exactly three decimals, absolute ts like real traces
    nums = re.findall(r'"(?:ts|dur)": (-?[0-9.eE+]+)', text)
    check(nums and all(re.fullmatch(r"\d+\.\d{3}", n) for n in nums), f"{label}: ts/dur have 3 decimals")
    xs = [e for e in ev if e.get("ph") == "X"]
    check(all(Decimal("1e12") < e["ts"] < Decimal("4e12") for e in xs), f"{label}: ts magnitude ~2.2e12 us")
    check(all(e["dur"] >= 0 for e in xs), f"{label}: non-negative durations")

    cats = Counter(e.get("cat") for e in ev)
    for c in ("cpu_op", "python_function", "user_annotation", "gpu_user_annotation", "cuda_runtime",
              "cuda_driver", "kernel", "gpu_memcpy", "gpu_memset", "ac2g", "cpu_instant_event"):
        check(cats[c] > 0, f"{label}: category {c} present")
    mnames = {e["name"] for e in ev if e.get("ph") == "M"}
    for n in ("process_name", "process_labels", "process_sort_index", "thread_name", "thread_sort_index"):
        check(n in mnames, f"{label}: M event {n}")
    rt_names = {e["name"] for e in ev if e.get("cat") == "cuda_runtime"}
    for n in ("cudaLaunchKernel", "cudaMemcpyAsync", "cudaMemsetAsync", "cudaLaunchKernelExC"):
        check(n in rt_names, f"{label}: runtime {n}")
    ops = [e for e in ev if e.get("cat") == "cpu_op"]
    opnames = {e["name"] for e in ops}
    for n in ("aten::addmm", "aten::mm", "aten::bmm", "aten::linear", "aten::scaled_dot_product_attention",
              "aten::_scaled_dot_product_flash_attention", "aten::conv2d", "aten::convolution",
              "aten::_convolution", "aten::cudnn_convolution", "aten::add", "aten::mul", "aten::gelu",
              "aten::copy_", "aten::layer_norm", "aten::native_layer_norm", "aten::sum", "aten::mean",
              "aten::empty", "record_param_comms", "aten::convolution_backward",
              "aten::_flash_attention_backward", "aten::native_layer_norm_backward"):
        check(n in opnames, f"{label}: op {n}")
    check(any(e["name"].startswith("ProfilerStep#") for e in ev if e.get("cat") == "user_annotation"),
          f"{label}: ProfilerStep user_annotation")
    check(any(e["name"].startswith("ProfilerStep#") for e in ev if e.get("cat") == "gpu_user_annotation"),
          f"{label}: ProfilerStep gpu_user_annotation")
    mem = [e for e in ev if e.get("cat") == "cpu_instant_event"]
    check(all(e["name"] == "[memory]" and e["ph"] == "i" and "Total Allocated" in e["args"] for e in mem),
          f"{label}: [memory] instants")
    for e in ops:
        a = e["args"]
        if "Input Dims" in a and not (len(a["Input Dims"]) == len(a["Input type"]) == len(a["Input Strides"])
                                      == len(a["Concrete Inputs"])):
            check(False, f"{label}: arg lists of {e['name']} have equal length")
            break
    py = [e for e in ev if e.get("cat") == "python_function"]
    check(all("Python id" in e["args"] and "Python parent id" in e["args"] for e in py), f"{label}: python ids")
    check(any("Python module id" in e["args"] for e in py), f"{label}: Python module id present")

    # Kineto's order, not globally sorted by ts
    check(any(b["ts"] < a["ts"] for a, b in zip(xs, xs[1:])), f"{label}: events not globally sorted")

    # ac2g flows: kernel <- f (GPU track) ... s (host, at the launch) <- runtime call
    s_by = {e["id"]: e for e in ev if e.get("cat") == "ac2g" and e["ph"] == "s"}
    f_by = {}
    for e in ev:
        if e.get("cat") == "ac2g" and e["ph"] == "f":
            f_by[(e["id"], e["pid"], e["tid"])] = e
    rt_by = {e["args"]["correlation"]: e for e in ev if e.get("cat") in ("cuda_runtime", "cuda_driver")}
    gpu = [e for e in ev if e.get("cat") in GPU_CATS]
    bad = []
    for k in gpu:
        a = k["args"]
        c = a["correlation"]
        f = f_by.get((c, k["pid"], k["tid"]))
        s = s_by.get(c)
        r = rt_by.get(c)
        if not (f and s and r and f["ts"] == k["ts"] and f.get("bp") == "e" and s["ts"] == r["ts"]
                and (s["pid"], s["tid"]) == (r["pid"], r["tid"]) and k["ts"] > r["ts"]
                and a["stream"] == k["tid"] and a["device"] == k["pid"]
                and a.get("External id") == r["args"].get("External id")):
            bad.append(k["name"][:60])
    check(not bad, f"{label}: every GPU event linked by ac2g to its launch ({len(bad)} bad, e.g. {bad[:2]})")
    kern_keys = ("External id", "queued", "device", "context", "stream", "correlation", "registers per thread",
                 "shared memory", "blocks per SM", "warps per SM", "grid", "block", "est. achieved occupancy %")
    check(all(all(key in k["args"] for key in kern_keys) for k in gpu if k["cat"] == "kernel"),
          f"{label}: kernel args complete")
    check(len({k["tid"] for k in gpu}) >= 3, f"{label}: GPU work on several streams")

    # one stream never runs two things at once
    by_stream = defaultdict(list)
    for k in gpu:
        by_stream[(k["pid"], k["tid"])].append((ns(k["ts"]), ns(k["ts"]) + ns(k["dur"])))
    overlap = 0
    for lst in by_stream.values():
        lst.sort()
        overlap += sum(1 for a, b in zip(lst, lst[1:]) if b[0] < a[1])
    check(overlap == 0, f"{label}: no overlapping GPU events on a stream ({overlap})")
    allk = sorted((ns(k["ts"]), ns(k["ts"]) + ns(k["dur"])) for k in gpu)
    gaps = 0
    end = allk[0][1]
    for s0, e0 in allk[1:]:
        if s0 > end + 1000:
            gaps += 1
        end = max(end, e0)
    check(gaps > 0, f"{label}: GPU idle gaps exist")

    # host events nest properly per thread; launches sit in their cpu_op
    by_thr = defaultdict(list)
    for e in xs:
        if e.get("cat") in HOST_CATS:
            by_thr[(e["pid"], e["tid"])].append(e)
    bleed = 0
    wrong_parent = 0
    for lst in by_thr.values():
        lst.sort(key=lambda e: (ns(e["ts"]), -ns(e["dur"])))
        stack = []
        for e in lst:
            t0, t1 = ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])
            while stack and stack[-1][1] <= t0:
                stack.pop()
            if stack and t1 > stack[-1][1]:
                bleed += 1
            if e["cat"] in ("cuda_runtime", "cuda_driver") and "Launch" in e["name"]:
                ops_above = [x for x in stack if x[2].get("cat") == "cpu_op"]
                if not ops_above or ops_above[-1][2]["args"]["External id"] != e["args"].get("External id"):
                    wrong_parent += 1
            stack.append((t0, t1, e))
    check(bleed == 0, f"{label}: host events well nested ({bleed} partial overlaps)")
    check(wrong_parent == 0, f"{label}: launches inside the cpu_op carrying their External id ({wrong_parent})")

    def encloses(outer, inner):
        return any(o["tid"] == i["tid"] and o["ts"] <= i["ts"] and i["ts"] + i["dur"] <= o["ts"] + o["dur"]
                   for o in ops if o["name"] == outer for i in ops if i["name"] == inner)
    for outer, inner in (("aten::linear", "aten::addmm"), ("aten::scaled_dot_product_attention",
                         "aten::_scaled_dot_product_flash_attention"), ("aten::conv2d", "aten::convolution"),
                         ("aten::convolution", "aten::_convolution"), ("aten::_convolution", "aten::cudnn_convolution"),
                         ("aten::layer_norm", "aten::native_layer_norm"), ("c10d::allreduce_", "record_param_comms")):
        check(encloses(outer, inner), f"{label}: {outer} encloses {inner}")

    # forward/backward: every evaluate_function's sequence number has a forward op on another thread
    seq_fwd = defaultdict(list)
    for e in ops:
        if "Sequence number" in e["args"] and not e["name"].startswith("autograd::engine"):
            seq_fwd[e["args"]["Sequence number"]].append(e)
    evals = [e for e in ops if e["name"].startswith("autograd::engine::evaluate_function: ")
             and "Sequence number" in e["args"]]
    check(len(evals) > 10, f"{label}: backward nodes present")
    unlinked = [e["name"] for e in evals
                if not any(f["tid"] != e["tid"] and f["ts"] < e["ts"] for f in seq_fwd[e["args"]["Sequence number"]])]
    check(not unlinked, f"{label}: backward nodes link to forward ops ({unlinked[:3]})")
    for n in ("AddmmBackward0", "ScaledDotProductFlashAttentionBackward0", "ConvolutionBackward0",
              "NativeLayerNormBackward0", "GeluBackward0", "BmmBackward0", "MulBackward0"):
        check(any(e["name"].endswith(": " + n) for e in evals), f"{label}: evaluate_function: {n}")

    check_reference_tree(doc, label)

    # collectives: record_param_comms args and matching NCCL kernels on their own streams
    rpc = [e for e in ops if e["name"] == "record_param_comms"]
    keys = ("Collective name", "dtype", "In msg nelems", "Out msg nelems", "In split size", "Out split size",
            "Process Group Name", "Process Group Description", "Process Group Ranks", "Group size",
            "Global rank start", "Global rank stride", "Rank")
    check(rpc and all(all(k in e["args"] for k in keys) for e in rpc), f"{label}: record_param_comms args")
    nccl = [k for k in gpu if k["cat"] == "kernel" and NCCL.search(k["name"])]
    check(len(nccl) == len(rpc), f"{label}: one NCCL kernel per record_param_comms ({len(nccl)} vs {len(rpc)})")
    names = {k["args"].get("Collective name") for k in nccl}
    for n in ("allreduce", "broadcast", "_allgather_base", "_reduce_scatter_base", "all_to_allv"):
        check(n in names, f"{label}: collective {n}")
    compute_streams = {k["tid"] for k in gpu if not NCCL.search(k["name"])}
    check(not ({k["tid"] for k in nccl} & compute_streams), f"{label}: NCCL kernels on separate comm streams")
    return doc, text


def check_reference_tree(doc, label):
    """The reference tool's tree building (spec pytorch-report.md 4.2-4.4), in
    float arithmetic as TraceLens does it: nothing may be dropped by the bleed
    rule, every GPU event must link to its runtime call, and every compute
    kernel must find a cpu_op launcher."""
    ev = doc["traceEvents"]
    for uid, e in enumerate(ev):
        e["_uid"] = uid
        if "ts" in e and "dur" in e:
            e["_t0"] = float(e["ts"])
            e["_t1"] = float(e["ts"]) + float(e["dur"])
    sel = sorted((e for e in ev if e.get("cat") in ("cpu_op", "cuda_runtime", "cuda_driver")),
                 key=lambda e: e["_t0"])
    stacks = defaultdict(list)
    parent = {}
    dropped = 0
    for e in sel:
        st = stacks[(e["pid"], e["tid"])]
        while st and e["_t0"] >= st[-1]["_t1"]:
            st.pop()
        if st and e["_t1"] > st[-1]["_t1"]:
            if st[-1]["_t1"] - e["_t0"] < 1.0 and len(st) >= 2:
                st.pop()
            else:
                dropped += 1
                continue
        if st:
            parent[e["_uid"]] = st[-1]
        st.append(e)
    check(dropped == 0, f"{label}: reference tree drops no host event ({dropped})")
    fs, fe, by_link = {}, {}, {}
    for e in ev:
        if e.get("cat") == "ac2g":
            (fs if e["ph"] == "s" else fe)[e["id"]] = e
        elif "args" in e and "correlation" in e["args"] and "pid" in e:
            by_link[(e["pid"], e["tid"], e["args"]["correlation"])] = e
    linked = {}
    for r in ev:
        if r.get("cat") not in ("cuda_runtime", "cuda_driver"):
            continue
        c = r["args"]["correlation"]
        if c in fs and c in fe:
            g = by_link.get((fe[c]["pid"], fe[c]["tid"], c))
            if g is not None and g.get("cat") in GPU_CATS:
                linked[g["_uid"]] = r
    gpu = [e for e in ev if e.get("cat") in GPU_CATS]
    check(len(linked) == len(gpu), f"{label}: reference linking finds every GPU event ({len(linked)}/{len(gpu)})")
    no_launcher = 0
    for g in gpu:
        if NCCL.search(g["name"]) or g["_uid"] not in linked:
            continue
        p = parent.get(linked[g["_uid"]]["_uid"])
        while p is not None and (p.get("cat") != "cpu_op" or p["name"] == "execute"):
            p = parent.get(p["_uid"])
        no_launcher += p is None
    check(no_launcher == 0, f"{label}: every compute kernel has a cpu_op launcher ({no_launcher})")


def nccl_by_pg(doc):
    """rank-local view: {pg name: [kernel events ordered by ts]}"""
    out = defaultdict(list)
    for e in doc["traceEvents"]:
        if e.get("cat") == "kernel" and NCCL.search(e["name"]):
            out[e["args"]["Process Group Name"]].append(e)
    for v in out.values():
        v.sort(key=lambda e: e["ts"])
    return out


def arrival_ns(pg, k, r, world):
    return 1000 * ((7 * k + 3 * r + 5 * pg) % 11) + (5000 if world > 1 and r == world - 1 else 0)


def tail_ns(pg, k, r):
    return 100 * ((k + 3 * r + pg) % 7)


def xfer_ns(name, full_bytes, n, cross):
    if name == "allreduce":
        num, den = 2 * (n - 1), n
    elif name == "broadcast":
        num, den = (1 if n > 1 else 0), 1
    else:
        num, den = n - 1, n
    bw = 45 if cross else 150
    wire = full_bytes * num // den
    return 6000 + (wire + bw - 1) // bw


def check_ranks(binary, tmp, world=4, size="300K", seed=1):
    d1 = os.path.join(tmp, f"ranks{world}_a")
    d2 = os.path.join(tmp, f"ranks{world}_b")
    dz = os.path.join(tmp, f"ranks{world}_gz")
    for d, extra in ((d1, []), (d2, []), (dz, ["--gzip"])):
        p = run(binary, "--size", size, "--seed", str(seed), "--ranks", str(world), "-o", d, *extra)
        check(p.returncode == 0, f"--ranks {world} into {d} exits 0 ({p.stderr.decode()[-200:]})")
    files = [f"rank_{r}.json" for r in range(world)]
    check(sorted(os.listdir(d1)) == sorted(files + ["truth.json"]), "rank dir holds rank_i.json + truth.json")
    check(sorted(os.listdir(dz)) == sorted([f + ".gz" for f in files] + ["truth.json"]), "gzip rank dir names")
    same = all(raw_bytes(os.path.join(d1, f)) == raw_bytes(os.path.join(d2, f)) for f in files + ["truth.json"])
    check(same, "--ranks output is deterministic")
    check(all(raw_bytes(os.path.join(d1, f)) == raw_bytes(os.path.join(dz, f + ".gz")) for f in files),
          "gzip rank files decompress to the plain ones")
    want = parse_size(size)
    for f in files:
        n = os.path.getsize(os.path.join(d1, f))
        check(abs(n - want) <= 0.05 * want, f"{f}: size {n} within 5% of {want}")
    with open(os.path.join(d1, "truth.json")) as f:
        truth = json.load(f, parse_float=Decimal)
    colls = truth["collectives"]
    check(truth["world_size"] == world and truth["num_collectives"] == len(colls) > 0, "truth.json header")
    check(len({c["step"] for c in colls}) == truth["model"]["steps"] >= 2, "collectives span several steps")
    docs = []
    for r in range(world):
        doc, _ = check_trace(os.path.join(d1, files[r]), f"rank_{r}", rank=r, world=world)
        docs.append(doc)
    # same op sequence on every rank
    seqs = [[e["name"] for e in doc["traceEvents"] if e.get("cat") == "cpu_op"] for doc in docs]
    check(all(s == seqs[0] for s in seqs), "every rank has the same cpu_op sequence")
    rpcs = [[(e["args"]["Collective name"], e["args"]["dtype"], e["args"]["In msg nelems"], e["args"]["Group size"])
             for e in doc["traceEvents"] if e.get("name") == "record_param_comms"] for doc in docs]
    check(all(s == rpcs[0] for s in rpcs), "record_param_comms sequence identical across ranks")
    # truth <-> traces
    by_rank = [nccl_by_pg(doc) for doc in docs]
    expected = defaultdict(int)
    mismatch = []
    formula_bad = []
    bw_bad = []
    gpn = truth["gpus_per_node"]
    for c in colls:
        ranks = c["group_ranks"]
        n = len(ranks)
        cross = ranks[0] // gpn != ranks[-1] // gpn
        k, pg = c["index"], int(c["pg"])
        t0 = ns(c["t0_us"])
        X = xfer_ns(c["name"], c["out_bytes"] if c["name"] == "_allgather_base" else c["bytes"], n, cross)
        amax = max(arrival_ns(pg, k, r, world) for r in ranks)
        if X != ns(c["xfer_us"]) or amax != ns(c["max_arrival_us"]):
            formula_bad.append((c["collective_id"], "xfer/amax"))
        ends = []
        for r in ranks:
            tr = c["ranks"][str(r)]
            expected[(r, c["pg"])] += 1
            ts, dur = ns(tr["ts"]), ns(tr["dur"])
            if ts != t0 + arrival_ns(pg, k, r, world) or ts + dur != t0 + amax + X + tail_ns(pg, k, r):
                formula_bad.append((c["collective_id"], r))
            ends.append(ts + dur)
            lst = by_rank[r].get(c["pg"], [])
            if k >= len(lst):
                mismatch.append((c["collective_id"], r, "missing"))
                continue
            e = lst[k]
            a = e["args"]
            if not (e["ts"] == tr["ts"] and e["dur"] == tr["dur"] and a["Collective name"] == c["name"]
                    and a["dtype"] == c["dtype"] and a["In msg nelems"] == c["in_nelems"]
                    and a["Out msg nelems"] == c["out_nelems"] and a["Group size"] == n
                    and a["Process Group Ranks"] == str(ranks) and e["tid"] == c["stream"]
                    and e["name"] == c["kernel"]):
                mismatch.append((c["collective_id"], r))
        if max(ends) - min(ends) > 600:
            formula_bad.append((c["collective_id"], "end spread"))
        lat = min(ns(c["ranks"][str(r)]["dur"]) for r in ranks)
        full = c["out_bytes"] if c["name"] == "_allgather_base" else c["bytes"]
        if full >= (1 << 20) and n > 1 and not (5 <= full / lat <= 1000):  # bytes/ns == GB/s
            bw_bad.append((c["collective_id"], full / lat))
    check(not mismatch, f"NCCL kernels match truth.json ({len(mismatch)} bad, e.g. {mismatch[:3]})")
    check(not formula_bad, f"planted formulas hold ({formula_bad[:3]})")
    check(not bw_bad, f"collective bandwidths plausible ({bw_bad[:3]})")
    counts_ok = all(len(by_rank[r].get(pg, [])) == cnt for (r, pg), cnt in expected.items())
    counts_ok &= all(len(v) == expected[(r, pg)] for r in range(world) for pg, v in by_rank[r].items())
    check(counts_ok, "every NCCL kernel of every rank is in truth.json")
    tp_pairs = world // 2 if world >= 4 and world % 2 == 0 else 0
    check(len({c["pg"] for c in colls}) == 1 + tp_pairs, "process groups: the world plus TP pairs when even >= 4")
    skews = [max(ns(c["ranks"][str(r)]["ts"]) for r in c["group_ranks"]) -
             min(ns(c["ranks"][str(r)]["ts"]) for r in c["group_ranks"]) for c in colls]
    check(any(s > 0 for s in skews), "collectives have start skew across ranks")


def parse_size(s):
    mul = {"K": 1024, "M": 1 << 20, "G": 1 << 30}
    return int(float(s[:-1]) * mul[s[-1]]) if s[-1] in mul else int(s)


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        sys.exit(2)
    binary = os.path.abspath(sys.argv[1])
    tmp = tempfile.mkdtemp(prefix="tracegen_test_")
    try:
        p = subprocess.run([binary, "--help"], stdout=subprocess.PIPE)
        check(p.returncode == 0 and b"--ranks" in p.stdout and b"arrival" in p.stdout, "--help documents options")
        check(run(binary, "--size", "abc", "-o", os.path.join(tmp, "x.json")).returncode == 2, "bad --size rejected")
        check(run(binary, "--size", "100K").returncode == 2, "missing -o rejected")

        paths = {}
        for seed in (1, 2):
            for gz in (False, True):
                for copy in ("a", "b"):
                    name = f"s{seed}_{copy}.json" + (".gz" if gz else "")
                    path = os.path.join(tmp, name)
                    p = run(binary, "--size", "400K", "--seed", str(seed), "-o", path, *(["--gzip"] if gz else []))
                    check(p.returncode == 0, f"generate {name}")
                    paths[(seed, gz, copy)] = path
        for seed in (1, 2):
            a = raw_bytes(paths[(seed, False, "a")])
            check(a == raw_bytes(paths[(seed, False, "b")]), f"seed {seed}: plain output deterministic")
            with open(paths[(seed, True, "a")], "rb") as f1, open(paths[(seed, True, "b")], "rb") as f2:
                check(f1.read() == f2.read(), f"seed {seed}: gzip bytes deterministic")
            check(raw_bytes(paths[(seed, True, "a")]) == a, f"seed {seed}: gzip decompresses to the plain output")
        check(raw_bytes(paths[(1, False, "a")]) != raw_bytes(paths[(2, False, "a")]), "seeds differ")
        for seed in (1, 2):
            check_trace(paths[(seed, False, "a")], f"seed{seed}")

        for size in ("64K", "200K", "1M", "3M"):
            path = os.path.join(tmp, f"size_{size}.json")
            p = run(binary, "--size", size, "--seed", "3", "-o", path)
            n = os.path.getsize(path) if p.returncode == 0 else -1
            want = parse_size(size)
            check(abs(n - want) <= 0.05 * want, f"--size {size}: got {n} bytes, within 5%")
            if p.returncode == 0:
                try:
                    json.loads(raw_bytes(path))
                    check(True, f"--size {size} parses")
                except ValueError as e:
                    check(False, f"--size {size} parses ({e})")
        path = os.path.join(tmp, "lvl.json.gz")
        p = run(binary, "--size", "300K", "--gzip", "--gzip-level", "6", "-o", path)
        check(p.returncode == 0 and len(raw_bytes(path)) > 0.95 * 300 * 1024, "--gzip-level 6")

        check_ranks(binary, tmp, world=4, size="600K", seed=1)
        check_ranks(binary, tmp, world=2, size="400K", seed=5)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{PASSED} passed, {FAILED} failed")
    sys.exit(1 if FAILED else 0)


if __name__ == "__main__":
    main()
