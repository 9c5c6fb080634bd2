#!/usr/bin/env python3
"""make.py — regenerates the pftrace golden set: the reference's own test
inputs of its Perfetto-trace reports (TraceLens tests/test_pftrace_*.py and
tests/fixtures/reporting.py at commit 171dd747) written as traceEvents JSON,
and the reference's CSVs on each of them for a set of flag combinations.

usage: /usr/bin/python3 tests/golden/pftrace/make.py TRACELENS_CHECKOUT

TRACELENS_CHECKOUT holds TraceLens/ and tests/ of commit 171dd747, e.g.
    git --git-dir=<mirror> archive 171dd747 TraceLens tests | tar x -C /tmp/tl
(the functions that build the event lists are taken from the test modules
by name and run on their own, so pytest need not be installed). Needs Debian's python3-pandas (1.5.3) and python3-numpy.

Inputs (inputs/<name>.json) are written compactly
(json.dumps(separators=(",", ":"), ensure_ascii=False)), the form a
.pftrace of the same events is stored as (pftrace_encode.py). Events that
the reference's tests leave without "ts"/"dur" get "ts": 0, "dur": 0:
tracelens requires both on a complete event, and none of these reports
reads them for such events (memory copies). Genesis cases (genesis/<case>/
capture/) are capture folders of the CSV texts of tests/test_genesis.py; the
reference's workbook is read back with pandas into expected/<case>/<sheet>.csv,
and the input a case names is given to the reference as the traceEvents
JSON of the capture's kernel_results.pftrace (which the test writes). cases.json lists every case:
input, command, flags; expected/<case>/ holds the reference's CSVs,
written by the reference's generate_* function with output_csvs_dir (what
its command line does)."""
import ast
import json
import os
import shutil
import sys
import tempfile
import types

HERE = os.path.dirname(os.path.abspath(__file__))

API = "TraceLens_generate_perf_report_pftrace_hip_api"
ACT = "TraceLens_generate_perf_report_pftrace_hip_activity"
MEM = "TraceLens_generate_perf_report_pftrace_memory_copy"
GEN = "TraceLens_generate_perf_report_genesis"

# command-line flags per case; each input runs every list of its commands
API_FLAGS = [[], ["--include_nonlaunch_apis", "--allow_multi_kernel_per_api"], ["--exclude_kernel_regex", ""]]
MEM_FLAGS = [[]]
ACT_FLAGS = [
    [],
    ["--min_event_ns", "0"],
    ["--min_event_ns", "1000", "--kernel_summary_include_rccl", "--hip_summary_group", "name+op"],
    ["--merge_kernels", "--kernel_summary_include_rccl", "--kernel_summary_baseline", "compute",
     "--hip_summary_group", "name+stream+op", "--min_event_ns", "0"],
    ["--kernel_summary_group", "name", "--hip_summary_group", "name+stream", "--top_xla", "1",
     "--min_event_ns", "0"],
    ["--no_kernel_summary", "--no_hip_summary", "--top_xla", "-1", "--min_tid", "2", "--max_tid", "100"],
]


def event_lists(path, names):
    """The named functions of a test module, run on their own (their
    module's imports need pytest and more; the event lists need nothing)."""
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read())
    ns = {}
    defs = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name in names]
    exec(compile(ast.Module(body=defs, type_ignores=[]), path, "exec"), ns)
    return ns


def load_inputs(checkout):
    t = os.path.join(checkout, "tests")
    api = event_lists(os.path.join(t, "test_pftrace_hip_api_perf_report.py"), {"_make_minimal_pftrace_events"})
    mem = event_lists(os.path.join(t, "test_pftrace_memory_copy_report.py"), {"_make_memory_copy_events"})
    act = event_lists(os.path.join(t, "test_pftrace_hip_activity_report.py"), {"_minimal_trace_events_with_agent"})
    fx = event_lists(os.path.join(t, "fixtures", "reporting.py"),
                     {"_minimal_pftrace_events", "_rich_pftrace_events", "_full_pftrace_events"})
    return {
        "hip_api_minimal": api["_make_minimal_pftrace_events"](),
        "memory_copy_events": mem["_make_memory_copy_events"](),
        "activity_agent": act["_minimal_trace_events_with_agent"](),
        "fixture_minimal": fx["_minimal_pftrace_events"](),
        "fixture_rich": fx["_rich_pftrace_events"](),
        "fixture_full": fx["_full_pftrace_events"](),
    }


def run_reference(command, trace, flags, out_dir):
    from TraceLens.Reporting import generate_perf_report_pftrace_hip_api as m_api
    from TraceLens.Reporting import generate_perf_report_pftrace_hip_activity as m_act
    from TraceLens.Reporting import generate_perf_report_pftrace_memory_copy as m_mem

    module = {API: m_api, ACT: m_act, MEM: m_mem}[command]
    argv = sys.argv
    sys.argv = [command, "--trace_path", trace, "--output_csvs_dir", out_dir] + flags
    try:
        module.main()
    finally:
        sys.argv = argv


# Genesis cases: a capture folder made of the reference's test CSVs
# (tests/test_genesis.py) plus, where named, a kernel_results.pftrace of an
# input above; flags of the reference's command line.
GENESIS_CASES = [
    ("genesis_basic", "fixture_full", []),
    ("genesis_api_details", None, ["--include-api", "--kernel-details", "--steady-state-gap-ms", "100"]),
    ("genesis_fallback", "fixture_rich", ["--no-short-kernel-study", "--steady-state-fallback-s", "200000"]),
]
GENESIS_CSVS = {
    "kernel_kernel_trace.csv": "KERNEL_TRACE_CSV",
    "kernel_hip_api_trace.csv": "HIP_API_TRACE_CSV",
    "kernel_hsa_api_trace.csv": "HSA_API_TRACE_CSV",
    "kernel_agent_info.csv": "AGENT_INFO_CSV",
}


def genesis_capture(checkout, dest):
    """capture/kernel_trace/ with the test's CSV texts."""
    path = os.path.join(checkout, "tests", "test_genesis.py")
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read())
    texts = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            texts[node.targets[0].id] = ast.literal_eval(node.value)
    kdir = os.path.join(dest, "kernel_trace")
    os.makedirs(kdir)
    for name, var in GENESIS_CSVS.items():
        with open(os.path.join(kdir, name), "w", encoding="utf-8") as f:
            f.write(texts[var])


def run_genesis(checkout, case, pf_input, flags, tmp):
    """The reference on the capture; its workbook's sheets as CSVs. The
    .pftrace's traceEvents JSON is put where the reference keeps its
    traceconv output (.work/pftrace_events.json), so no traceconv runs."""
    import pandas as pd
    from TraceLens.Reporting import generate_perf_report_genesis as m_gen

    cap = os.path.join(HERE, "genesis", case, "capture")
    genesis_capture(checkout, cap)
    out = os.path.join(tmp, case)
    fake = os.path.join(tmp, "traceconv")  # ensure_traceconv would download one otherwise
    open(fake, "w").close()
    argv = [GEN, "--capture-dir", cap, "--output-dir", out, "--traceconv", fake] + flags
    if pf_input:
        open(os.path.join(cap, "kernel_trace", "kernel_results.pftrace"), "wb").close()
        os.makedirs(os.path.join(out, ".work"))
        shutil.copy(os.path.join(HERE, "inputs", pf_input + ".json"), os.path.join(out, ".work", "pftrace_events.json"))
    saved = sys.argv
    sys.argv = argv
    try:
        m_gen.main()
    finally:
        sys.argv = saved
    if pf_input:
        os.remove(os.path.join(cap, "kernel_trace", "kernel_results.pftrace"))
    exp = os.path.join(HERE, "expected", case)
    os.makedirs(exp)
    for sheet, df in pd.read_excel(os.path.join(out, "genesis_perf_report.xlsx"), sheet_name=None).items():
        df.to_csv(os.path.join(exp, sheet + ".csv"), index=False)
    return {"case": case, "input": pf_input + ".json" if pf_input else None, "command": GEN, "flags": flags,
            "capture": os.path.relpath(cap, HERE)}


def main():
    checkout = os.path.abspath(sys.argv[1])
    sys.path.insert(0, checkout)
    inputs = load_inputs(checkout)
    for d in ("inputs", "expected", "genesis"):
        shutil.rmtree(os.path.join(HERE, d), ignore_errors=True)
        os.makedirs(os.path.join(HERE, d))
    cases = []
    for name, events in inputs.items():
        for e in events:
            if e.get("ph") == "X":
                e.setdefault("ts", 0)
                e.setdefault("dur", 0)
        path = os.path.join(HERE, "inputs", name + ".json")
        with open(path, "w", encoding="utf-8") as f:
            f.write(json.dumps({"traceEvents": events}, separators=(",", ":"), ensure_ascii=False))
        for command, flag_sets in ((API, API_FLAGS), (MEM, MEM_FLAGS), (ACT, ACT_FLAGS)):
            for k, flags in enumerate(flag_sets):
                case = f"{name}.{command.rsplit('_pftrace_', 1)[1]}.{k}"
                out = os.path.join(HERE, "expected", case)
                run_reference(command, path, flags, out)
                cases.append({"case": case, "input": name + ".json", "command": command, "flags": flags})
    with tempfile.TemporaryDirectory() as tmp:
        for case, pf_input, flags in GENESIS_CASES:
            cases.append(run_genesis(checkout, case, pf_input, flags, tmp))
    with open(os.path.join(HERE, "cases.json"), "w") as f:
        json.dump(cases, f, indent=1)
        f.write("\n")
    print(f"{len(cases)} cases")


if __name__ == "__main__":
    main()
