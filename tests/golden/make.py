#!/usr/bin/env python3
"""make.py — regenerates the in-repo golden set: small real traces cut from
the public traces in ../shared/data, and the reference tool's CSVs on them.

usage: /usr/bin/python3 tests/golden/make.py TRACELENS_CHECKOUT [SHARED_DATA [BUILD_DIR]]

TRACELENS_CHECKOUT is a checkout of AMD-AGI/TraceLens at commit 171dd747
(the commit that made the shared reference outputs), e.g.
    git --git-dir=<mirror> archive 171dd747 TraceLens LICENSE | tar x -C /tmp/tl
Needs Debian's python3-pandas, python3-openpyxl and python3-tqdm (pandas 1.5.3,
numpy 1.24).
SHARED_DATA defaults to ../shared/data beside the repository, BUILD_DIR
(where tracegen is) to build/ in it.

Each case below names its source trace (all MIT: TraceLens's own test data,
or HolisticTraceAnalysis's; see LICENSE-TraceLens and LICENSE-HTA here), the
window cut from it and the reference flags. A case's folder holds the cut
trace and reference_csvs/, written by
    python3 -m TraceLens.Reporting.generate_perf_report_pytorch
        --profile_json_path CUT --output_csvs_dir reference_csvs FLAGS
(rocprof: TraceLens.Reporting.generate_perf_report_rocprof).

How a PyTorch trace is cut, so that it stays a valid trace for both tools:
- host events (cpu_op, user_annotation, python_function, cuda_runtime,
  cuda_driver, ...) are kept when they lie wholly inside the window, with
  every event that encloses a kept one on the same thread (its ancestors), so
  each kept event keeps its whole call tree below it and its path to the root;
- device events (kernel, gpu_memcpy, gpu_memset) are kept when their
  correlation id belongs to a kept runtime/driver launch, and the ac2g flow
  pairs of those ids with them;
- gpu_user_annotation ranges are kept when they overlap the kept device span,
  fwdbwd flow pairs when both ends lie in the window;
- metadata events (ph "M") and every top-level key (deviceProperties,
  distributedInfo, ...) are kept as they are; the whole-trace "Trace" span,
  instant events and profiler overhead events are dropped.
The rocprofv3 sample is cut to a run of dispatches (by start time), with the
kernel symbols they use.

The TraceDiff pair (HTA's trace_diff control and test, old Kineto traces
whose only flows are `async_cpu_to_gpu`, which the reference ignores) is cut
the same way (those flows kept like ac2g ones) and then shifted: every ts
less the same whole second, so that the µs values stay small (epoch-scale
timestamps are conformance item 1, not what this case checks). Its folder
holds both cut traces and tracediff_reference/, the reference's TraceDiff
files (Python API: TraceDiff(control tree, test tree),
generate_tracediff_report, print_tracediff_report_files), each gzipped.

The comparison case compares the reference's own workbook of
hta_mi250_minitoy (generate_perf_report_pytorch --output_xlsx_path
--enable_kernel_summary; its perf sheets hold the text "None" for a
missing parameter such as `param: stride_output`) with that case's
reference_csvs folder: compare_perf_reports_pytorch WORKBOOK FOLDER
--names xlsx csv --output_csvs_dir reference_compare. Debian's pandas 1.5.3
recurses forever in the reference's Series.replace({0: pd.NA}) (the pct
denominators); COMPARE_SHIM swaps that one call for the equivalent
Series.mask(s == 0), which gives the same (empty) cells.

OVERLAP_CASES also run the reference's PyTorch report with
--include_overlap_info on those cut traces and keep, in
<case>/reference_kl_overlap/, its per-family _kl_overlap sheets
(GEMM_kl_overlap, Reduce_fwd_kl_overlap, ...; not ops_unique_args_ or
unified_perf_summary_kl_overlap).

collective_hta_filter/reference_collective holds the reference's
collective report on HTA's 2-rank trace_filter pair (public/hta_filter_rank0
and _rank1, read from SHARED_DATA: JSON-integer ts, float dur), linked as
rank_0.json.gz and rank_1.json.gz.

The collective case is not cut from a trace: `tracegen --ranks 4` writes a
4-rank corpus (deterministic: same arguments, same bytes) with process
sub-groups (TP pairs) beside the world group, and reference_collective/
holds the reference's multi-rank collective report CSVs on it
(TraceLens.Reporting.generate_multi_rank_collective_report_pytorch
--trace_pattern DIR/rank_*.json --world_size 4). The corpus itself is not
kept: tests/golden_collective.py writes it again.
"""
import gzip
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REFERENCE_COMMIT = "171dd747"
PYTORCH_FLAGS = ["--enable_kernel_summary", "--short_kernel_study"]
ROCPROF_FLAGS = ["--kernel_details", "--topk_kernels", "50", "--short_kernel_study"]

# (case folder, source under SHARED_DATA, window): a window is
# (anchor, start, end): start and end in µs from the ts of the user_annotation
# named anchor (a ProfilerStep), or of the first event when anchor is None;
# end None means the anchor's end. None keeps the whole trace.
PYTORCH_CASES = [
    # ROCm 6.2 (MI250) training toy, whole: it is already 7 KB
    ("hta_mi250_minitoy", "public/hta_amd_mi250_minitoy/hta_amd_mi250_minitoy.json.gz", None),
    # NVIDIA training step with NCCL, epoch timestamps: the first 30 ms of
    # ProfilerStep#551 (the whole 216 ms step makes 750 KB of reference CSVs)
    ("hta_negq_step551", "public/hta_negq_rank0/hta_negq_rank0.json.gz", ("ProfilerStep#551", 0.0, 30000.0)),
    # B200 vLLM eager decode: 6 ms of the forward, a few layers
    ("b200_eager_window", "public/b200_eager/b200_eager.json.gz", (None, 20000.0, 26000.0)),
]
# rocprofv3 sample (TraceLens tests/rocprof): dispatches 20000-20799 by
# start time, past the start-up copies, with 34 distinct kernels
ROCPROF_CASE = ("rocprof_908_slice", "rocprof/908_results.json.gz", (20000, 20800))
# TraceDiff pair: 60-76 ms into ProfilerStep#1009 of each side (backward;
# the test side's CompiledFunctionBackward makes a cudaGraphLaunch at 67 ms,
# whose kernels are the only ones the reference links; earlier windows give
# it no GPU path shared by both trees, and so no diff_stats rows)
TRACEDIFF_CASE = ("hta_tracediff_window",
                  [("control", "public/hta_tracediff_control/hta_tracediff_control.json.gz"),
                   ("test", "public/hta_tracediff_test/hta_tracediff_test.json.gz")],
                  ("ProfilerStep#1009", 60000.0, 76000.0))
COMPARE_CASE = ("compare_mi250_workbook", "hta_mi250_minitoy")
# in-repo cases whose per-family _kl_overlap sheets are kept (NCCL kernels
# overlap the GEMMs and reductions of hta_negq_step551)
OVERLAP_CASES = ["hta_mi250_minitoy", "hta_negq_step551"]
OVERLAP_NOT_KEPT = {"ops_unique_args_kl_overlap.csv", "unified_perf_summary_kl_overlap.csv"}
COMPARE_SHIM = """
import runpy, sys
import pandas as pd
_replace = pd.Series.replace
def replace(self, to_replace=None, *a, **k):
    if isinstance(to_replace, dict) and list(to_replace) == [0] and to_replace[0] is pd.NA and not a and not k:
        return self.mask(self == 0)
    return _replace(self, to_replace, *a, **k)
pd.Series.replace = replace
sys.argv = ["compare_perf_reports_pytorch"] + sys.argv[1:]
runpy.run_module("TraceLens.Reporting.compare_perf_reports_pytorch", run_name="__main__")
"""
# (case folder, tracegen arguments)
COLLECTIVE_CASE = ("collective_tp4", ["--ranks", "4", "--size", "256K", "--seed", "1"])
TRACEDIFF_SCRIPT = """
import sys
from TraceLens import TreePerfAnalyzer
from TraceLens.TraceDiff import TraceDiff
t1 = TreePerfAnalyzer.from_file(sys.argv[1]).tree
t2 = TreePerfAnalyzer.from_file(sys.argv[2]).tree
td = TraceDiff(t1, t2)
td.generate_tracediff_report()
td.print_tracediff_report_files(sys.argv[3])
"""

HOST_DROP_CATS = {"Trace", "overhead"}
DEVICE_CATS = {"kernel", "gpu_memcpy", "gpu_memset"}


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return json.load(f)


def save(doc, path):
    """Deterministic gzip (no name, mtime 0) so a rerun gives the same bytes."""
    raw = json.dumps(doc, separators=(",", ":")).encode("utf-8")
    with open(path, "wb") as f, gzip.GzipFile(filename="", mode="wb", fileobj=f, mtime=0) as g:
        g.write(raw)


def resolve_window(events, window):
    xs = [e for e in events if e.get("ph") == "X" and e.get("cat") not in HOST_DROP_CATS]
    if window is None:
        return None
    anchor, start, end = window
    if anchor is None:
        t0 = min(e["ts"] for e in xs)
        return t0 + start, t0 + end
    step = next(e for e in xs if e.get("name") == anchor and e.get("cat") == "user_annotation")
    return step["ts"] + start, step["ts"] + (step["dur"] if end is None else end)


def keep_host(events, lo, hi):
    """Ids of host X events inside [lo, hi] and of their ancestors."""
    threads = {}
    for i, e in enumerate(events):
        if e.get("ph") == "X" and e.get("cat") not in DEVICE_CATS | HOST_DROP_CATS | {"gpu_user_annotation"}:
            threads.setdefault((e.get("pid"), e.get("tid")), []).append(i)
    kept = set()
    for idx in threads.values():
        idx.sort(key=lambda i: (events[i]["ts"], -events[i].get("dur", 0)))
        stack = []
        for i in idx:
            e = events[i]
            end = e["ts"] + e.get("dur", 0)
            while stack and events[stack[-1]]["ts"] + events[stack[-1]].get("dur", 0) < end:
                stack.pop()
            if lo <= e["ts"] and end <= hi:
                kept.add(i)
                kept.update(stack)
            stack.append(i)
    return kept


def cut_pytorch(doc, window):
    events = doc["traceEvents"]
    span = resolve_window(events, window)
    if span is None:
        return doc
    lo, hi = span
    kept = keep_host(events, lo, hi)
    corr = {events[i]["args"]["correlation"] for i in kept
            if "correlation" in events[i].get("args", {}) and events[i].get("cat") in ("cuda_runtime", "cuda_driver")}
    for i, e in enumerate(events):
        if e.get("cat") in DEVICE_CATS and e.get("args", {}).get("correlation") in corr:
            kept.add(i)
    dev = [events[i] for i in kept if events[i].get("cat") in DEVICE_CATS]
    dlo = min((e["ts"] for e in dev), default=lo)
    dhi = max((e["ts"] + e.get("dur", 0) for e in dev), default=hi)
    fwdbwd = {}
    for i, e in enumerate(events):
        if e.get("cat") == "fwdbwd" and e.get("ph") in ("s", "f"):
            fwdbwd.setdefault(e.get("id"), []).append(i)
    for i, e in enumerate(events):
        ph, cat = e.get("ph"), e.get("cat")
        if ph == "M":
            kept.add(i)
        elif cat == "gpu_user_annotation" and e["ts"] < dhi and e["ts"] + e.get("dur", 0) > dlo:
            kept.add(i)
        elif cat in ("ac2g", "async_cpu_to_gpu") and ph in ("s", "f") and e.get("id") in corr:
            kept.add(i)
        elif cat == "fwdbwd" and all(lo <= events[j]["ts"] <= hi for j in fwdbwd[e.get("id")]):
            kept.add(i)
    out = {k: v for k, v in doc.items() if k != "traceEvents"}
    out["traceEvents"] = [events[i] for i in sorted(kept)]
    return out


def cut_rocprof(doc, dispatches):
    tool = doc["rocprofiler-sdk-tool"][0]
    buf = tool["buffer_records"]
    first, last = dispatches
    buf["kernel_dispatch"] = sorted(buf["kernel_dispatch"], key=lambda r: r["start_timestamp"])[first:last]
    used = {r["dispatch_info"]["kernel_id"] for r in buf["kernel_dispatch"]}
    tool["kernel_symbols"] = [s for s in tool["kernel_symbols"] if s["kernel_id"] in used]
    return doc


def reference(checkout, module, trace, out, flags):
    if os.path.isdir(out):
        shutil.rmtree(out)
    env = dict(os.environ, PYTHONPATH=checkout)
    cmd = ["/usr/bin/python3", "-m", "TraceLens.Reporting." + module, "--profile_json_path", trace,
           "--output_csvs_dir", out] + flags
    print("+", " ".join(cmd[2:]), flush=True)
    subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL)


def shift_seconds(doc):
    """Every ts less the whole seconds of the smallest one (integers stay
    integers, so the shifted text is exact)."""
    events = doc["traceEvents"]
    t0 = min(e["ts"] for e in events if "ts" in e)
    base = int(t0 // 1000000) * 1000000
    for e in events:
        if "ts" in e:
            e["ts"] -= base
    return doc


def make_tracediff(checkout, data):
    name, sides, window = TRACEDIFF_CASE
    d = os.path.join(HERE, name)
    os.makedirs(d, exist_ok=True)
    paths = []
    for side, src in sides:
        trace = os.path.join(d, side + ".json.gz")
        doc = shift_seconds(cut_pytorch(load(os.path.join(data, src)), window))
        save(doc, trace)
        print(f"{name}/{side}: {len(doc['traceEvents'])} events, {os.path.getsize(trace)} bytes")
        paths.append(trace)
    out = os.path.join(d, "tracediff_reference")
    if os.path.isdir(out):
        shutil.rmtree(out)
    env = dict(os.environ, PYTHONPATH=checkout)
    subprocess.run(["/usr/bin/python3", "-c", TRACEDIFF_SCRIPT] + paths + [out], env=env, check=True,
                   stdout=subprocess.DEVNULL)
    for f in sorted(os.listdir(out)):
        path = os.path.join(out, f)
        with open(path, "rb") as src, open(path + ".gz", "wb") as dst, \
                gzip.GzipFile(filename="", mode="wb", fileobj=dst, mtime=0) as g:
            g.write(src.read())
        os.remove(path)


def make_compare(checkout):
    name, src_case = COMPARE_CASE
    d = os.path.join(HERE, name)
    os.makedirs(d, exist_ok=True)
    src = os.path.join(HERE, src_case)
    workbook = os.path.join(d, "reference_report.xlsx")
    env = dict(os.environ, PYTHONPATH=checkout)
    subprocess.run(["/usr/bin/python3", "-m", "TraceLens.Reporting.generate_perf_report_pytorch", "--profile_json_path",
                    os.path.join(src, src_case + ".json.gz"), "--output_xlsx_path", workbook,
                    "--enable_kernel_summary"], env=env, check=True, stdout=subprocess.DEVNULL)
    out = os.path.join(d, "reference_compare")
    if os.path.isdir(out):
        shutil.rmtree(out)
    subprocess.run(["/usr/bin/python3", "-c", COMPARE_SHIM, workbook, os.path.join(src, "reference_csvs"),
                    "--names", "xlsx", "csv", "-o", os.path.join(d, "comparison.tmp.xlsx"),
                    "--output_csvs_dir", out], env=env, check=True, stdout=subprocess.DEVNULL)
    os.remove(os.path.join(d, "comparison.tmp.xlsx"))


def make_overlap(checkout):
    for case in OVERLAP_CASES:
        d = os.path.join(HERE, case)
        tmp = os.path.join(d, "overlap.tmp")
        reference(checkout, "generate_perf_report_pytorch", os.path.join(d, case + ".json.gz"), tmp,
                  ["--include_overlap_info"])
        out = os.path.join(d, "reference_kl_overlap")
        if os.path.isdir(out):
            shutil.rmtree(out)
        os.makedirs(out)
        for f in sorted(os.listdir(tmp)):
            if f.endswith("_kl_overlap.csv") and f not in OVERLAP_NOT_KEPT:
                shutil.copy(os.path.join(tmp, f), os.path.join(out, f))
        shutil.rmtree(tmp)


def make_collective_hta(checkout, data):
    d = os.path.join(HERE, "collective_hta_filter")
    out = os.path.join(d, "reference_collective")
    if os.path.isdir(out):
        shutil.rmtree(out)
    links = os.path.join(d, "ranks.tmp")
    os.makedirs(links, exist_ok=True)
    for r in (0, 1):
        os.symlink(os.path.join(os.path.abspath(data), "public", "hta_filter_rank%d" % r, "hta_filter_rank%d.json.gz" % r),
                   os.path.join(links, "rank_%d.json.gz" % r))
    env = dict(os.environ, PYTHONPATH=checkout)
    subprocess.run(["/usr/bin/python3", "-m", "TraceLens.Reporting.generate_multi_rank_collective_report_pytorch",
                    "--trace_pattern", os.path.join(links, "rank_*.json.gz"), "--world_size", "2",
                    "--output_csvs_dir", out], env=env, check=True, stdout=subprocess.DEVNULL)
    shutil.rmtree(links)


def make_collective(checkout, build):
    name, args = COLLECTIVE_CASE
    d = os.path.join(HERE, name)
    out = os.path.join(d, "reference_collective")
    if os.path.isdir(out):
        shutil.rmtree(out)
    os.makedirs(d, exist_ok=True)
    corpus = os.path.join(d, "corpus.tmp")
    subprocess.run([os.path.join(build, "tracegen")] + args + ["-q", "-o", corpus], check=True)
    env = dict(os.environ, PYTHONPATH=checkout)
    cmd = ["/usr/bin/python3", "-m", "TraceLens.Reporting.generate_multi_rank_collective_report_pytorch",
           "--trace_pattern", os.path.join(corpus, "rank_*.json"), "--world_size", "4", "--output_csvs_dir", out]
    print("+", " ".join(cmd[2:]), flush=True)
    subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL)
    shutil.rmtree(corpus)


def main():
    if len(sys.argv) not in (2, 3, 4):
        print(__doc__)
        return 2
    checkout = os.path.abspath(sys.argv[1])
    data = sys.argv[2] if len(sys.argv) >= 3 else os.path.join(HERE, "..", "..", "..", "shared", "data")
    build = sys.argv[3] if len(sys.argv) == 4 else os.path.join(HERE, "..", "..", "build")
    for name, src, window in PYTORCH_CASES:
        d = os.path.join(HERE, name)
        os.makedirs(d, exist_ok=True)
        trace = os.path.join(d, name + ".json.gz")
        doc = cut_pytorch(load(os.path.join(data, src)), window)
        save(doc, trace)
        print(f"{name}: {len(doc['traceEvents'])} events, {os.path.getsize(trace)} bytes")
        reference(checkout, "generate_perf_report_pytorch", trace, os.path.join(d, "reference_csvs"),
                  PYTORCH_FLAGS)
    name, src, dispatches = ROCPROF_CASE
    d = os.path.join(HERE, name)
    os.makedirs(d, exist_ok=True)
    trace = os.path.join(d, name + ".json.gz")
    save(cut_rocprof(load(os.path.join(data, src)), dispatches), trace)
    print(f"{name}: dispatches {dispatches}, {os.path.getsize(trace)} bytes")
    reference(checkout, "generate_perf_report_rocprof", trace, os.path.join(d, "reference_csvs"), ROCPROF_FLAGS)
    make_tracediff(checkout, data)
    make_collective(checkout, build)
    make_collective_hta(checkout, data)
    make_compare(checkout)
    make_overlap(checkout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
