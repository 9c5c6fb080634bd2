#!/usr/bin/env python3
"""golden_collective.py — the multi-rank collective report against values
planted by construction (spec formats.md §3; docs/TRACEGEN.md).

tracegen --ranks N writes N rank traces whose collectives line up and a
truth.json with every collective's per-rank kernel ts/dur, sizes, group and
the planted arrival/tail/transfer times. The report is run through the
reference tool's command name (files ingested on the fly), and every value
of nccl_implicit_sync, nccl_long, nccl_summary_implicit_sync,
straggler_summary, nccl_all2allv, the heatmap, node labels and our
imbalance_collectives is recomputed here from truth.json with the same
floating-point operations, then compared exactly. The planted construction
is checked too: latency = transfer + the smallest tail among the last
arrivals, the start skew = the arrival spread, the transfer time = the
planted bandwidth (150 B/ns in a node, 45 across) within the 1 ns ceil.

A second corpus of 16 ranks spans two nodes (gpus_per_node 8); the same
corpus is then reported from the store (--config) and through --trace_glob,
and must give identical files. Last, a two-rank set assembled from a real
trace (the MI300 resnet trace as rank 0 and rank 1: identical ranks, so skew
0 and latency = duration) is checked against the reference's coll_analysis
CSV of that trace; skipped when ../shared/data is absent.

The reference's own output is checked too: tests/golden/collective_tp4
holds the reference's collective report CSVs on the 4-rank corpus that
tracegen writes for its arguments there (tests/golden/make.py; world group
and TP-pair sub-groups); ours on the same corpus must equal every file
byte for byte.

usage: golden_collective.py BUILD_DIR   (prints cells compared and
"N passed, M failed" last; exit 0 when nothing failed)

The multi-configuration generator is checked on two small configurations:
sheet set and order, an existing workbook left alone while the other
configuration is still built, per-rank kernel and runtime counts recomputed
from the JSON files, the gpu_timelines average/std (quirk included), the
launcher averages, the grouped breakdown, the collective sheets, -r and -e.
"""
import csv
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile

BUILD = sys.argv[1] if len(sys.argv) > 1 else "build"
DATA = os.environ.get("TL_SHARED_DATA") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "data")
PASS = FAIL = CELLS = 0
DTYPE_BYTES = {"Float": 4, "Int": 4, "Long": 8, "BFloat16": 2, "Bool": 1, "Byte": 1, "Double": 8, "Half": 2, "Short": 2}
TYPES = {
    "allreduce": "allreduce", "allreduce_coalesced": "allreduce",
    "reducescatter": "reducescatter", "_reduce_scatter_base": "reducescatter",
    "reduce_scatter_tensor_coalesced": "reducescatter",
    "allgather": "allgather", "all_gather": "allgather", "_allgather_base": "allgather",
    "all_gather_into_tensor_coalesced": "allgather", "allgather_into_tensor_coalesced": "allgather",
    "all_to_all": "alltoall", "all_to_allv": "alltoallv",
}


def check(cond, what):
    global PASS, FAIL
    if cond:
        PASS += 1
    else:
        FAIL += 1
        if FAIL <= 40:
            print("FAIL:", what)


def same(got_text, want, what):
    """Exact comparison of a CSV cell with a Python value."""
    global CELLS
    CELLS += 1
    if isinstance(want, float):
        if math.isnan(want):
            ok = got_text == ""
        else:
            try:
                ok = float(got_text) == want
            except ValueError:
                ok = False
    elif isinstance(want, int) and not isinstance(want, bool):
        try:
            ok = float(got_text) == want and "." not in got_text
        except ValueError:
            ok = False
    else:
        ok = got_text == str(want)
    check(ok, "%s: got %r, want %r" % (what, got_text, want))


def pairwise(a):
    n = len(a)
    if n < 8:
        r = -0.0
        for x in a:
            r += x
        return r
    if n <= 128:
        r = list(a[:8])
        i = 8
        while i < n - (n % 8):
            for j in range(8):
                r[j] += a[i + j]
            i += 8
        res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
        for k in range(i, n):
            res += a[k]
        return res
    n2 = n // 2
    n2 -= n2 % 8
    return pairwise(a[:n2]) + pairwise(a[n2:])


def np_mean(a):
    return (0.0 + pairwise(a)) / len(a)


def kahan(a):
    s = c = 0.0
    for x in a:
        y = x - c
        t = s + y
        c = t - s - y
        s = t
    return s


def median(a):
    b = sorted(a)
    n = len(b)
    return b[n // 2] if n % 2 else (b[n // 2 - 1] + b[n // 2]) / 2


def rnd1(x):
    return round(x * 10) / 10  # numpy/pandas round(1): rint(x*10)/10


def factor(kind, n):
    if kind == "allreduce":
        return 2 * (n - 1) / n
    if kind in ("reducescatter", "allgather", "alltoall"):
        return (n - 1) / n
    return float("nan")


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def run(args, expect_fail=False, **kw):
    p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)
    if p.returncode != 0 and not expect_fail:
        print("command failed (%d): %s\n%s%s" % (p.returncode, " ".join(args), p.stdout[-2000:], p.stderr[-2000:]))
    return p


def check_corpus(tmp, name, ranks, size, gpn_expected):
    exe = os.path.join(BUILD, "TraceLens_generate_multi_rank_collective_report_pytorch")
    corpus = os.path.join(tmp, name)
    p = run([os.path.join(BUILD, "tracegen"), "--ranks", str(ranks), "--size", size, "-q", "-o", corpus])
    check(p.returncode == 0, "tracegen %s" % name)
    truth = json.load(open(os.path.join(corpus, "truth.json")))
    db = os.path.join(tmp, "db")
    out = os.path.join(tmp, name + "_csv")
    p = run([exe, "--db", db, "--trace_pattern", os.path.join(corpus, "rank_*.json"), "--world_size", str(ranks),
             "--output_csvs_dir", out, "--all2allv_heatmap", "-q"])
    check(p.returncode == 0, "collective report %s" % name)
    if p.returncode:
        return
    N = truth["world_size"]
    gpn = truth["gpus_per_node"]
    check(gpn == gpn_expected, "gpus_per_node")
    coll = {c["collective_id"]: c for c in truth["collectives"]}

    # ---- nccl_long: every (collective, rank) kernel with its ts/dur
    lng = read_csv(os.path.join(out, "nccl_long.csv"))
    want_rows = sum(len(c["ranks"]) for c in truth["collectives"])
    check(len(lng) == want_rows, "nccl_long rows %d == %d" % (len(lng), want_rows))
    for row in lng:
        c = coll.get(row["collective_id"])
        if c is None:
            check(False, "unknown collective_id %s" % row["collective_id"])
            continue
        rk = c["ranks"].get(row["rank"])
        if rk is None:
            check(False, "rank %s not in %s" % (row["rank"], c["collective_id"]))
            continue
        w = "nccl_long %s rank %s" % (row["collective_id"], row["rank"])
        same(row["ts"], float("%.3f" % rk["ts"]), w + " ts")
        same(row["dur"], float("%.3f" % rk["dur"]), w + " dur")
        same(row["index_in_group"], c["index"], w + " index")
        same(row["Collective name"], c["name"], w + " name")
        same(row["Group size"], c["group_size"], w + " group size")
        same(row["In msg nelems"], c["in_nelems"], w + " in nelems")
        same(row["In msg size (MB)"], c["in_nelems"] * c["dtype_size"] / 1048576, w + " in MB")
        same(row["node_id"], int(row["rank"]) // gpn, w + " node_id")
        nodes = {r // gpn for r in c["group_ranks"]}
        same(row["node_span"], "intra_node" if len(nodes) == 1 else "inter_node", w + " node_span")

    # ---- nccl_implicit_sync: per collective, recomputed from truth
    sync = read_csv(os.path.join(out, "nccl_implicit_sync.csv"))
    want_ids = [c["collective_id"] for c in truth["collectives"] if TYPES.get(c["name"]) in
                ("allreduce", "reducescatter", "allgather", "alltoall")]
    check(sorted(r["collective_id"] for r in sync) == sorted(want_ids), "implicit-sync collective set")
    exp = {}
    for row in sync:
        c = coll[row["collective_id"]]
        ranks = sorted(int(r) for r in c["ranks"])
        ts = [float("%.3f" % c["ranks"][str(r)]["ts"]) for r in ranks]
        dur = [float("%.3f" % c["ranks"][str(r)]["dur"]) for r in ranks]
        latest = max(ts)
        waits = [latest - t for t in ts]
        ends = [t + d for t, d in zip(ts, dur)]
        lat = min(dur)
        kind = TYPES[c["name"]]
        b = c["dtype_size"]
        full = (c["out_nelems"] if kind == "allgather" else c["in_nelems"]) * b / 1048576
        algo = (full / 1024) / (lat / 1e6)
        bus = algo * factor(kind, c["group_size"])
        wmax = max(waits)
        earliest = max(r for r, w in zip(ranks, waits) if w == wmax)
        wmin = min(waits)
        last = min(r for r, w in zip(ranks, waits) if w == wmin)
        e = dict(lat=lat, skew=wmax, skew_end=max(ends) - min(ends), avg=np_mean(waits), algo=algo, bus=bus,
                 earliest=earliest, last=last, waits=dict(zip(ranks, waits)), ts=dict(zip(ranks, ts)), c=c,
                 kind=kind, full=full)
        exp[row["collective_id"]] = e
        w = "implicit %s" % row["collective_id"]
        same(row["comm_latency"], lat, w + " comm_latency")
        same(row["skew in start time"], wmax, w + " skew start")
        same(row["skew in end time"], e["skew_end"], w + " skew end")
        same(row["avg_wait_time"], e["avg"], w + " avg_wait_time")
        same(row["earliest arrival rank"], earliest, w + " earliest arrival rank")
        same(row["Full msg size (MB)"], full, w + " full MB")
        same(row["algo bw (GB/s)"], algo, w + " algo bw")
        same(row["bus bw (GB/s)"], bus, w + " bus bw")
        for r in range(N):
            if r in e["waits"]:
                same(row["rank_%d_wait_time" % r], e["waits"][r], w + " rank %d wait" % r)
                same(row["rank_%d_ts" % r], e["ts"][r], w + " rank %d ts" % r)
            else:
                same(row["rank_%d_ts" % r], float("nan"), w + " rank %d absent" % r)
        # the planted construction
        tails = [c["ranks"][str(r)]["tail_us"] for r in ranks if c["ranks"][str(r)]["arrival_us"] == c["max_arrival_us"]]
        check(abs(lat - (c["xfer_us"] + min(tails))) < 1e-6, w + " latency = xfer + min tail of the last arrivals")
        arr = [c["ranks"][str(r)]["arrival_us"] for r in ranks]
        check(abs(wmax - (max(arr) - min(arr))) < 1e-3, w + " skew = planted arrival spread")
        nodes = {r // gpn for r in c["group_ranks"]}
        bw = 150 if len(nodes) == 1 else 45
        fb = (c["out_bytes"] if kind == "allgather" else c["bytes"]) * factor(kind, c["group_size"])
        xfer_ns = round(lat * 1000) - 6000 - round(min(tails) * 1000)
        check(fb / bw <= xfer_ns + 1e-6 and xfer_ns < fb / bw + 1 + 1e-6,
              w + " transfer time = planted bandwidth %d B/ns (%s)" % (bw, xfer_ns))

    # ---- nccl_summary_implicit_sync
    groups = {}
    for cid in [r["collective_id"] for r in sync]:
        c = coll[cid]
        groups.setdefault((c["name"], c["dtype"], c["in_nelems"]), []).append(exp[cid])
    summ = read_csv(os.path.join(out, "nccl_summary_implicit_sync.csv"))
    check(len(summ) == len(groups), "summary groups %d == %d" % (len(summ), len(groups)))
    totals = []
    for row in summ:
        key = (row["Collective name"], row["dtype"], int(row["In msg nelems"]))
        g = groups.get(key)
        if not g:
            check(False, "summary key %s" % (key,))
            continue
        w = "summary %s" % (key,)
        lats = [e["lat"] for e in g]
        same(row["count"], len(g), w + " count")
        same(row["comm_latency_mean"], kahan(lats) / len(lats), w + " latency mean")
        same(row["comm_latency_median"], median(lats), w + " latency median")
        same(row["comm_latency_min"], min(lats), w + " latency min")
        same(row["comm_latency_max"], max(lats), w + " latency max")
        buses = [e["bus"] for e in g]
        same(row["bus bw (GB/s)_mean"], kahan(buses) / len(buses), w + " bus bw mean")
        same(row["bus bw (GB/s)_max"], max(buses), w + " bus bw max")
        skews = [e["skew"] for e in g]
        same(row["skew in start time_max"], max(skews), w + " skew max")
        # the reference's lambda x: x.sum() / 1000 is Series.sum: pairwise
        same(row["Total comm latency (ms)"], pairwise(lats) / 1000, w + " total")
        same(row["Group size"], g[0]["c"]["group_size"], w + " group size")
        totals.append(pairwise(lats) / 1000)
    check(totals == sorted(totals, reverse=True), "summary sorted by total descending")

    # ---- straggler_summary
    strag = read_csv(os.path.join(out, "straggler_summary.csv"))
    order = []
    for row in strag:
        r = int(row["rank"])
        ws = [exp[cid]["waits"][r] for cid in [x["collective_id"] for x in sync] if r in exp[cid]["waits"]]
        durs = [float("%.3f" % c["ranks"][str(r)]["dur"]) for c in truth["collectives"] if str(r) in c["ranks"]]
        w = "straggler rank %d" % r
        same(row["total_wait_time_us"], rnd1(kahan(ws)), w + " total wait")
        same(row["mean_wait_time_us"], rnd1(kahan(ws) / len(ws)), w + " mean wait")
        # every implicit-sync collective counts, the rank's own or not
        same(row["num_collectives"], len(sync), w + " collectives")
        last = sum(1 for e in exp.values() if e["last"] == r)
        same(row["pct_arrived_last"], round(100.0 * last / len(sync), 1), w + " pct last")
        same(row["times_arrived_last"], sum(1 for e in exp.values() if e["last"] == r), w + " last")
        same(row["times_arrived_first"], sum(1 for e in exp.values() if e["earliest"] == r), w + " first")
        same(row["total_nccl_dur_us"], rnd1(kahan(durs)), w + " nccl dur")
        order.append(float(row["total_wait_time_us"]))
    check(len(strag) == N and order == sorted(order), "straggler rows, ascending total wait")
    # planted: the last rank arrives 5 us later than its formula in every
    # collective, so it waits least of all and is named first
    check(strag and strag[0]["rank"] == str(N - 1), "planted straggler rank %d first (got %s)" % (N - 1, strag and strag[0]["rank"]))

    # ---- all_to_allv
    a2a = read_csv(os.path.join(out, "nccl_all2allv.csv"))
    want_a2a = [c for c in truth["collectives"] if c["name"] == "all_to_allv"]
    check(len(a2a) == len(want_a2a), "all_to_allv rows")
    heat = {}
    for row in a2a:
        c = coll[row["collective_id"]]
        ranks = sorted(int(r) for r in c["ranks"])
        ts = [float("%.3f" % c["ranks"][str(r)]["ts"]) for r in ranks]
        dur = [float("%.3f" % c["ranks"][str(r)]["dur"]) for r in ranks]
        mb = c["in_nelems"] * c["dtype_size"] / 1048576
        tot = kahan([mb] * len(ranks))
        wall = max(t + d for t, d in zip(ts, dur)) - min(ts)
        w = "all2allv %s" % row["collective_id"]
        same(row["total data communicated (MB)"], tot, w + " total MB")
        same(row["wall_time (us)"], wall, w + " wall")
        same(row["throughput (GB/s)"], (tot / 1024) / (wall / 1e6), w + " throughput")
        same(row["max_rank_dur (us)"], max(dur), w + " max dur")
        same(row["skew in start time"], max(ts) - min(ts), w + " start skew")
        for r in ranks:
            split = [int(x) for x in c["ranks"][str(r)]["in_split_size"].strip("[]").split(",")]
            same(row["rank_%d_In split size" % r], c["ranks"][str(r)]["in_split_size"], w + " split %d" % r)
            for j, v in enumerate(split):
                dst = c["group_ranks"][j]
                heat.setdefault((r, dst), []).append(v * c["dtype_size"] / 1048576)
    hm = read_csv(os.path.join(out, "nccl_all2allv_heatmap.csv"))
    check(len(hm) == len(heat), "heatmap cells")
    for row in hm:
        v = heat.get((int(row["src_rank"]), int(row["dst_rank"])), [])
        w = "heatmap %s->%s" % (row["src_rank"], row["dst_rank"])
        same(row["total_sent_MB"], sum(v), w + " total")  # multiples of 2^-19: exact in any order
        same(row["count"], len(v), w + " count")

    # ---- imbalance_collectives: the slowest rank per kind of collective
    imb = read_csv(os.path.join(out, "imbalance_collectives.csv"))
    kinds = {}
    for cid in [r["collective_id"] for r in sync]:
        c = coll[cid]
        kinds.setdefault((c["pg"], c["name"], c["dtype"], c["in_nelems"]), []).append(exp[cid])
    check(len(imb) == len(kinds), "imbalance_collectives rows")
    for row in imb:
        key = (row["Process Group Name"], row["Collective name"], row["dtype"], int(row["In msg nelems"]))
        g = kinds.get(key, [])
        late = {}
        for e in g:
            for r, wt in e["waits"].items():
                late.setdefault(r, []).append(e["skew"] - wt)
        mean_late = {r: sum(v) / len(v) for r, v in late.items()}
        best = max(mean_late.values()) if mean_late else None
        slow = min(r for r, v in mean_late.items() if v == best) if mean_late else None
        same(row["slowest_rank"], slow, "imbalance %s slowest rank" % (key,))
        same(row["count"], len(g), "imbalance %s count" % (key,))
    return out, corpus, db


def compare_dirs(a, b, what):
    fa = sorted(os.listdir(a))
    check(fa == sorted(os.listdir(b)), what + ": same sheets")
    for f in fa:
        if os.path.exists(os.path.join(b, f)):
            check(open(os.path.join(a, f)).read() == open(os.path.join(b, f)).read(), what + ": %s identical" % f)


def check_real(tmp):
    src = os.path.join(DATA, "kineto", "mi300", "resnet_act_checkpoint.json.gz")
    ref = os.path.join(DATA, "kineto", "mi300", "resnet_act_checkpoint_recompute_perf_report_csvs", "coll_analysis.csv")
    if not (os.path.exists(src) and os.path.exists(ref)):
        print("real two-rank set: skipped (no ../shared/data)")
        return
    d = os.path.join(tmp, "resnet2")
    os.makedirs(d)
    for r in range(2):
        shutil.copy(src, os.path.join(d, "rank_%d.json.gz" % r))
    out = os.path.join(tmp, "resnet2_csv")
    exe = os.path.join(BUILD, "TraceLens_generate_multi_rank_collective_report_pytorch")
    p = run([exe, "--db", os.path.join(tmp, "db"), "--trace_glob", d + "/**/*.json.gz", "--world_size", "2",
             "--output_csvs_dir", out, "-q"])
    check(p.returncode == 0, "real two-rank report")
    if p.returncode:
        return
    want = read_csv(ref)
    got = read_csv(os.path.join(out, "nccl_summary_long.csv"))
    check(len(got) == 2 * len(want), "summary_long rows: both ranks")
    for rank in (0, 1):
        rows = [g for g in got if g["rank"] == str(rank)]
        for g, w in zip(rows, want):
            for k, v in w.items():
                same(g[k], v if k != "rank" else str(rank), "real summary_long rank %d %s" % (rank, k))
            same(g["node_span"], "intra_node", "real node_span")
    sync = read_csv(os.path.join(out, "nccl_implicit_sync.csv"))
    check(len(sync) == 6, "real: 6 allreduces matched across the two ranks")
    for row in sync:
        same(row["skew in start time"], 0.0, "real skew")
        same(row["comm_latency"], float(row["rank_0_dur"]), "real latency = duration")
        same(row["earliest arrival rank"], 1, "real earliest arrival (tie -> higher rank)")
        n = 8
        algo = (float(row["Full msg size (MB)"]) / 1024) / (float(row["comm_latency"]) / 1e6)
        same(row["bus bw (GB/s)"], algo * (2 * (n - 1) / n), "real bus bw = algo x 2(n-1)/n")
    lng = read_csv(os.path.join(out, "nccl_long.csv"))
    check(len(lng) == 34, "real: 17 collective kernels per rank")
    check(sum(1 for r in lng if r["Process Group Name"] == "Unknown_Group") == 10, "real: unnamed kernels in Unknown_Group")


def check_corpus_report(tmp, db):
    """The multi-configuration generator over two tracegen configurations:
    names, the skip-existing rule, and values recomputed from the rank files."""
    exe = os.path.join(BUILD, "TraceLens_generate_multi_config_perf_report")
    base = os.path.join(tmp, "multi")
    for name, ranks, seed in (("cfgA", 3, 1), ("cfgB", 2, 5)):
        p = run([os.path.join(BUILD, "tracegen"), "--ranks", str(ranks), "--size", "512K", "--seed", str(seed), "-q",
                 "-o", os.path.join(base, name)])
        check(p.returncode == 0, "tracegen " + name)
    # cfgB's workbook exists already: skipped, cfgA still built (the reference stops the whole run)
    wb_b = os.path.join(base, "cfgB", "cfgB_rank__performance_report.xlsx")
    open(wb_b, "w").write("keep me")
    csv_root = os.path.join(tmp, "multi_csv")
    p = run([exe, "--db", db, "-b", base, "-f", "rank_", "--csv", csv_root])
    check(p.returncode == 0, "corpus-report exit status")
    check("Excel file already exists: (%s)" % wb_b in p.stdout, "existing workbook reported")
    check(open(wb_b).read() == "keep me", "existing workbook not overwritten")
    wb_a = os.path.join(base, "cfgA", "cfgA_rank__performance_report.xlsx")
    check(os.path.exists(wb_a), "cfgA workbook written after cfgB was skipped")
    out = os.path.join(csv_root, "cfgA")
    want = ["gemm", "conv", "attn", "un_elemwise", "bin_elemwise", "kernel_launchers", "gpu_timelines",
            "linked_and_short_kernels", "short_cpu_op_counts", "cuda_events_summary", "grouped_breakdown",
            "summary_nccl_implicit_sync_cat", "long", "nccl_implicit_sync_cat", "nccl_implicit_sync_cat_detailed",
            "nccl_all2allv", "imbalance_ranks", "imbalance_collectives"]
    have = sorted(f[:-4] for f in os.listdir(out)) if os.path.isdir(out) else []
    check(have == sorted(want), "corpus sheets: %s" % have)
    if not os.path.isdir(out):
        return
    try:
        import zipfile, re
        names = re.findall(r'<sheet name="([^"]+)"', zipfile.ZipFile(wb_a).read("xl/workbook.xml").decode())
        check(names == want, "workbook sheet order (spec 4.4): %s" % names)
    except Exception as e:  # noqa: BLE001
        check(False, "workbook unreadable: %s" % e)
    world = 3
    # per-rank counts straight from the JSON files
    for row in read_csv(os.path.join(out, "linked_and_short_kernels.csv")):
        r = int(row["rank"])
        ev = json.load(open(os.path.join(base, "cfgA", "rank_%d.json" % r)))["traceEvents"]
        gpu = [e for e in ev if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
        linked = [e for e in gpu if e.get("args", {}).get("External id") is not None]
        unl = [e for e in gpu if e.get("args", {}).get("External id") is None]
        w = "linked_and_short rank %d" % r
        same(row["num_kernel_events"], len(gpu), w + " kernels")
        same(row["num_kernel_events_linked"], len(linked), w + " linked")
        same(row["num_kernel_events_unlinked"], len(unl), w + " unlinked")
        same(row["num_short_kernel_events_linked"], sum(1 for e in linked if e["dur"] < 10), w + " short linked")
        same(row["num_short_kernel_events_unlinked"], sum(1 for e in unl if e["dur"] < 10), w + " short unlinked")
        cuda = {}
        for e in ev:
            if e.get("ph") == "X" and e.get("cat") in ("cuda_runtime", "cuda_driver"):
                cuda.setdefault((e["name"], e["cat"]), []).append(e["dur"])
        # the pivot's two-row header (statistic, rank) and index-name row, as the reference writes it
        rows = list(csv.reader(open(os.path.join(out, "cuda_events_summary.csv"))))
        stat = [h or "" for h in rows[0]]
        for i in range(1, len(stat)):
            stat[i] = stat[i] or stat[i - 1]
        col = {(stat[i], int(float(rows[1][i]))): i for i in range(2, len(stat))}
        for crow in rows[3:]:
            name = crow[0]
            d = cuda.get((name, crow[1]), [])
            same(crow[col[("count", r)]], len(d), "cuda %s rank %d count" % (name, r))
            if d:
                same(crow[col[("max_dur", r)]], max(d), "cuda %s rank %d max" % (name, r))
                same(crow[col[("mean_dur", r)]], kahan(d) / len(d), "cuda %s rank %d mean" % (name, r))
    tl = read_csv(os.path.join(out, "gpu_timelines.csv"))
    check([r["type"] for r in tl] == ["computation_time", "exposed_comm_time", "exposed_memcpy_time", "busy_time",
                                     "idle_time", "total_time", "total_comm_time", "total_memcpy_time"], "timeline rows")
    avg = {}
    for row in tl:
        v = [float(row["time_ms_%d" % r]) for r in range(world)]
        a = (0.0 + pairwise(v)) / len(v)
        same(row["time_ms_avg"], a, "gpu_timelines %s avg" % row["type"])
        v2 = v + [a]
        mu = (0.0 + pairwise(v2)) / len(v2)
        same(row["time_ms_std"], math.sqrt(sum((x - mu) ** 2 for x in v2) / (len(v2) - 1)),
             "gpu_timelines %s std (over ranks and avg: quirk)" % row["type"])
        avg[row["type"]] = a
    kl = read_csv(os.path.join(out, "kernel_launchers.csv"))
    tot = 0.0
    for row in kl:
        same(row["time_ms_avg"], float(row["kernel_time_ms"]) / world, "launcher %s avg" % row["name"])
        same(row["count_avg"], int(row["count"]) / world, "launcher %s count avg" % row["name"])
        tot += float(row["time_ms_avg"])
    gb = {r["Group"]: float(r["Time (s)"]) for r in read_csv(os.path.join(out, "grouped_breakdown.csv"))}
    same(str(gb.get("Comms")), avg["total_comm_time"] / 1000, "breakdown Comms = total_comm_time avg / 1000")
    same(str(gb.get("Memcpy")), avg["total_memcpy_time"] / 1000, "breakdown Memcpy")
    parts = [v for k, v in gb.items() if k not in ("Total", "Comms", "Memcpy")]
    check(abs(sum(parts) - tot / 1000) < 1e-9, "breakdown groups + Other = all launchers")
    check(abs(gb["Total"] - sum(v for k, v in gb.items() if k != "Total")) < 1e-12, "breakdown Total")
    # the collective sheets are the collective report's (non-strict, agg mean)
    det = read_csv(os.path.join(out, "nccl_implicit_sync_cat_detailed.csv"))
    cat = read_csv(os.path.join(out, "nccl_implicit_sync_cat.csv"))
    check(len(det) == len(cat) and all(not k.startswith("rank_") for k in cat[0]), "implicit_sync_cat drops rank columns")
    truth = json.load(open(os.path.join(base, "cfgA", "truth.json")))
    coll = {c["collective_id"]: c for c in truth["collectives"]}
    for row in det:
        c = coll[row["collective_id"]]
        same(row["comm_latency"], min(float("%.3f" % x["dur"]) for x in c["ranks"].values()),
             "corpus latency %s" % row["collective_id"])
    summ = read_csv(os.path.join(out, "summary_nccl_implicit_sync_cat.csv"))
    check(summ and "comm_latency_mean" in summ[0] and "comm_latency_median" not in summ[0], "summary agg is mean only")
    # -r and -e
    p = run([exe, "-b", base, "-r"], expect_fail=True)
    check(p.returncode == 1 and "needs GPUs" in p.stderr, "-r: clear message")
    p = run([exe, "-b", base, "-e", "txt"], expect_fail=True)
    check(p.returncode != 0 and "Invalid extension txt, json and gz are supported" in p.stdout, "-e check")


def same_files(name, ref, out):
    """Every reference CSV of ref against out/, byte for byte."""
    for f in sorted(os.listdir(ref)):
        want = open(os.path.join(ref, f), "rb").read()
        path = os.path.join(out, f)
        got = open(path, "rb").read() if os.path.exists(path) else None
        if got != want and got is not None:
            gl, wl = got.decode().splitlines(), want.decode().splitlines()
            diff = next((i for i, (a, b) in enumerate(zip(gl, wl)) if a != b), min(len(gl), len(wl)))
            print("  %s line %d:\n    ours: %s\n    ref:  %s" % (f, diff + 1, (gl + [""])[diff][:200],
                                                             (wl + [""])[diff][:200]))
        check(got == want, "%s: %s equals the reference's" % (name, f))


def check_reference(tmp):
    """Our report against the reference's CSVs, byte for byte: on the
    corpus tracegen writes for tests/golden/collective_tp4, and on HTA's
    trace_filter pair (tests/golden/collective_hta_filter; JSON-integer
    ts, so nccl_long prints integers; skipped without ../shared/data)."""
    golden = os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden")
    sys.path.insert(0, golden)
    import make
    exe = os.path.join(BUILD, "TraceLens_generate_multi_rank_collective_report_pytorch")
    name, args = make.COLLECTIVE_CASE
    corpus = os.path.join(tmp, name)
    p = run([os.path.join(BUILD, "tracegen")] + args + ["-q", "-o", corpus])
    check(p.returncode == 0, "tracegen " + name)
    out = os.path.join(tmp, name + "_csv")
    p = run([exe, "--db", os.path.join(tmp, "db"), "--trace_pattern", os.path.join(corpus, "rank_*.json"),
             "--world_size", "4", "--output_csvs_dir", out, "-q"])
    check(p.returncode == 0, "collective report " + name)
    same_files(name, os.path.join(golden, name, "reference_collective"), out)
    ranks = [os.path.join(DATA, "public", "hta_filter_rank%d" % r, "hta_filter_rank%d.json.gz" % r) for r in (0, 1)]
    if not all(os.path.isfile(x) for x in ranks):
        print("collective_hta_filter: skipped (no %s)" % ranks[0])
        return
    links = os.path.join(tmp, "hta_filter")
    os.makedirs(links)
    for r, x in enumerate(ranks):
        os.symlink(x, os.path.join(links, "rank_%d.json.gz" % r))
    out = os.path.join(tmp, "hta_filter_csv")
    p = run([exe, "--db", os.path.join(tmp, "db"), "--trace_pattern", os.path.join(links, "rank_*.json.gz"),
             "--world_size", "2", "--output_csvs_dir", out, "-q"])
    check(p.returncode == 0, "collective report hta_filter")
    same_files("collective_hta_filter", os.path.join(golden, "collective_hta_filter", "reference_collective"), out)


def main():
    tmp = tempfile.mkdtemp(prefix="tl_golden_coll_")
    try:
        check_reference(tmp)
        out4, corpus4, db = check_corpus(tmp, "cfg4", 4, "1M", 8) or (None, None, None)
        if out4:
            # --trace_dir: rank{i}_trace.json names, same results
            exe = os.path.join(BUILD, "TraceLens_generate_multi_rank_collective_report_pytorch")
            d = os.path.join(tmp, "dirmode")
            os.makedirs(d)
            for r in range(4):
                os.symlink(os.path.join(corpus4, "rank_%d.json" % r), os.path.join(d, "rank%d_trace.json" % r))
            o = os.path.join(tmp, "dirmode_csv")
            p = run([exe, "--db", db, "--trace_dir", d, "--world_size", "4", "--output_csvs_dir", o,
                     "--all2allv_heatmap", "-q"])
            check(p.returncode == 0, "--trace_dir report")
            if p.returncode == 0:
                compare_dirs(out4, o, "--trace_dir vs --trace_pattern")
            p = run([exe, "--db", db, "--trace_dir", d, "--world_size", "5", "-q"], expect_fail=True)
            check(p.returncode == 1 and "Expected trace file not found: %s/rank4_trace.json" % d in p.stderr,
                  "missing file error")
            # default output: nccl_analysis_report.xlsx in the trace folder
            p = run([exe, "--db", db, "--trace_dir", d, "--world_size", "4", "-q"])
            check(p.returncode == 0 and os.path.exists(os.path.join(d, "nccl_analysis_report.xlsx")),
                  "default workbook in the trace folder")
        out16, corpus16, db = check_corpus(tmp, "cfg16", 16, "256K", 8) or (None, None, None)
        if out16:
            exe = os.path.join(BUILD, "TraceLens_generate_multi_rank_collective_report_pytorch")
            # the same corpus from the store, and through --trace_glob
            o2 = os.path.join(tmp, "cfg16_config")
            p = run([exe, "--db", db, "--config", "cfg16", "--output_csvs_dir", o2, "--all2allv_heatmap", "-q"])
            check(p.returncode == 0, "--config report")
            if p.returncode == 0:
                compare_dirs(out16, o2, "--config vs files")
            o3 = os.path.join(tmp, "cfg16_glob")
            p = run([exe, "--db", db, "--trace_glob", corpus16 + "/**/rank_*.json", "--world_size", "16",
                     "--output_csvs_dir", o3, "--all2allv_heatmap", "-q"])
            check(p.returncode == 0, "--trace_glob report")
            if p.returncode == 0:
                compare_dirs(out16, o3, "--trace_glob vs --trace_pattern")
            # reference error texts
            p = run([exe, "--db", db, "--trace_glob", corpus16 + "/*.json", "--world_size", "17", "-q"], expect_fail=True)
            check(p.returncode != 0 and "Missing ranks after glob resolution: [16]" in p.stderr, "missing-rank error")
            p = run([exe, "--db", db, "--trace_pattern", corpus16 + "/rank_.json", "--world_size", "2"], expect_fail=True)
            check(p.returncode != 0 and "exactly one '*'" in p.stderr, "pattern error")
            p = run([exe, "--db", db, "--world_size", "2"], expect_fail=True)
            check(p.returncode != 0 and "Provide exactly one of trace_dir, trace_pattern, or trace_glob" in p.stderr,
                  "mode error")
        check_real(tmp)
        check_corpus_report(tmp, os.path.join(tmp, "db"))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d cells compared" % CELLS)
    print("%d passed, %d failed" % (PASS, FAIL))
    return 1 if FAIL else 0


if __name__ == "__main__":
    sys.exit(main())
