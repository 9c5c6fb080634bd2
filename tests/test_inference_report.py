#!/usr/bin/env python3
"""test_inference_report.py — the reference's inference report
(TraceLens_generate_perf_report_pytorch_inference, tracelens report
--inference) and the inference flags of the PyTorch report, on the shared
vLLM/SGLang/xDiT samples. Its conformance with the reference's CSVs is
golden_public.py's; here: the command line (every reference flag accepted,
refusals with exit 2), the inference sheets' shapes, the same CSVs from the
store, one phase labelling for the op-level and kernel-level phase sheets,
and the branch's kernel categories in the report's sheets.

Usage: test_inference_report.py BUILD_DIR   (exit 77 when ../shared/data is absent)
Prints "N passed, M failed" last."""
import csv
import filecmp
import os
import subprocess
import sys
import tempfile

from tlcheck import Checks

HERE = os.path.dirname(os.path.abspath(__file__))
BUILD = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("TL_BUILD", "build")
DATA = os.environ.get("TL_SHARED_DATA", os.path.join(HERE, "..", "..", "shared", "data"))
INF = os.path.join(DATA, "inference")
PUB = os.path.join(DATA, "public")
INF_CMD = os.path.join(BUILD, "TraceLens_generate_perf_report_pytorch_inference")
PYT_CMD = os.path.join(BUILD, "TraceLens_generate_perf_report_pytorch")
TL = os.path.join(BUILD, "tracelens")
FLAGS = ["--enable_pseudo_ops", "--group_by_parent_module", "--group_by_num_kernels", "--disable_coll_analysis",
         "--include_call_stack"]

check = Checks()
ENV = dict(os.environ)


def run(cmd, *args):
    p = subprocess.run([cmd] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV)
    return p.returncode, p.stdout, p.stderr


def rows(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def header(path):
    with open(path, newline="", encoding="utf-8") as f:
        return next(csv.reader(f))


def command_line(tmp):
    rc, out, _ = run(INF_CMD, "--help")
    check(rc == 0 and "--group_by_parent_module" in out and "--comparison_capture_folder" in out,
          "inference --help lists the reference's flags")
    trace = os.path.join(PUB, "xdit_sd35", "xdit_sd35.json.gz")
    rc, _, err = run(INF_CMD, "--profile_json_path", trace, "--output_csvs_dir", os.path.join(tmp, "x"),
                     "--comparison_capture_folder", tmp)
    check(rc == 2 and "requires --comparison_json_path" in err,
          f"--comparison_capture_folder alone is refused (rc {rc})")
    rc, _, err = run(PYT_CMD, "--profile_json_path", trace, "--output_csvs_dir", os.path.join(tmp, "x"),
                     "--group_by_parent_module")
    check(rc == 2, f"--group_by_parent_module belongs to the inference report (rc {rc})")
    rc, _, err = run(PYT_CMD, "--profile_json_path", trace, "--output_csvs_dir", os.path.join(tmp, "x"),
                     "--inference_phase_analysis", "--phase_detection_method", "bogus")
    check(rc == 2 and "invalid choice" in err, f"an unknown detection method is refused (rc {rc})")
    rc, _, err = run(PYT_CMD, "--profile_json_path", trace, "--output_csvs_dir", os.path.join(tmp, "x"),
                     "--inference_phase_analysis", "--generate_plots", "--plot_format", "svg", "--plot_dpi", "72")
    check(rc == 0 and "not drawn" in err, f"plot flags accepted with a note (rc {rc})")
    rc, _, _ = run(PYT_CMD, "--profile_json_path", trace, "--output_csvs_dir", os.path.join(tmp, "x"),
                   "--inference_phase_analysis", "--disable_plots")
    check(rc == 0, "--disable_plots accepted")
    rc, _, err = run(PYT_CMD, "--profile_json_path", trace, "--output_csvs_dir", os.path.join(tmp, "x"),
                     "--capture_folder", os.path.join(INF, "sglang_decode", "capture_traces"))
    check(rc == 0 and "no graph launch" in err, f"a capture folder that changes nothing is reported (rc {rc})")


def inference_sheets(tmp):
    d = os.path.join(INF, "vllm_prefilldecode_piecewise")
    trace = os.path.join(d, "graph_execution.json.gz")
    cap = os.path.join(d, "capture_traces")
    out = os.path.join(tmp, "inf")
    rc, _, err = run(INF_CMD, "--profile_json_path", trace, "--output_csvs_dir", out, "--capture_folder", cap, *FLAGS)
    if not check(rc == 0, f"inference report rc {rc}: {err[-300:]}"):
        return
    check("pseudo ops are built for" in err, "--enable_pseudo_ops says what is not produced")
    names = sorted(f[:-4] for f in os.listdir(out))
    check(not any(n.endswith("_bwd") for n in names) and "Normalization" not in names,
          f"perf sheets named as the inference report names them: {names}")
    h = header(os.path.join(out, "ops_summary.csv"))
    check(h[:6] == ["name", "parent_module", "total_direct_kernel_time_sum", "total_subtree_kernel_time_sum",
                    "total_subtree_kernel_time_count", "total_direct_kernel_time_ms"]
          and "call_stack_first" in h and "total_subtree_kernel_time_ms" not in h, f"ops_summary columns {h}")
    h = header(os.path.join(out, "ops_summary_by_category.csv"))
    check(h[:4] == ["op category", "parent_module", "Count", "call_stack_first"],
          f"ops_summary_by_category columns {h}")
    ua = rows(os.path.join(out, "ops_unique_args.csv"))
    check(ua and all(r["parent_module"] == "NA" or r["parent_module"].startswith("nn.Module:") for r in ua)
          and all(r["call_stack"].startswith("['") for r in ua), "ops_unique_args parent_module and call_stack")
    up = rows(os.path.join(out, "unified_perf_summary.csv"))
    check(up and all(r["call_stack_full"].startswith("[") or r["call_stack_full"] == "Not found" for r in up)
          and "entry_point" in up[0], "unified_perf_summary call stacks")
    check(not os.path.exists(os.path.join(out, "coll_analysis.csv")), "no collective analysis")
    # the same report from the store
    out2 = os.path.join(tmp, "inf2")
    rc, _, err = run(TL, "report", trace, "--inference", "--csv-dir", out2, "--capture_folder", cap, *FLAGS)
    if check(rc == 0, f"tracelens report --inference rc {rc}: {err[-300:]}"):
        same = sorted(os.listdir(out)) == sorted(os.listdir(out2)) and all(
            filecmp.cmp(os.path.join(out, f), os.path.join(out2, f), shallow=False) for f in os.listdir(out))
        check(same, "tracelens report --inference writes the command's CSVs")


def rows_or_none(path):
    return rows(path) if os.path.exists(path) else []


def phases(tmp):
    d = os.path.join(INF, "vllm_prefilldecode_piecewise")
    trace = os.path.join(d, "graph_execution.json.gz")
    cap = os.path.join(d, "capture_traces")
    for method, thr in (("union", "10"), ("gemm_params", "2000"), ("kernel_names", "10")):
        out = os.path.join(tmp, "ph_" + method)
        rc, _, err = run(PYT_CMD, "--profile_json_path", trace, "--output_csvs_dir", out, "--capture_folder", cap,
                         "--inference_phase_analysis", "--enable_kernel_summary", "--no_phase_annotations",
                         "--phase_detection_method", method, "--decode_threshold", thr)
        if not check(rc == 0, f"phases {method}: rc {rc} {err[-300:]}"):
            continue
        for ph in ("prefill", "decode"):
            # per op: the kernel level's time within the op level's (which
            # also counts the op's memcpy/memset), and no op on one side only
            ops, ker = {}, {}
            for r in rows_or_none(os.path.join(out, f"ops_summary_{ph}.csv")):
                ops[r["name"]] = ops.get(r["name"], 0) + float(r["total_direct_kernel_time_ms"])
            for r in rows_or_none(os.path.join(out, f"kernel_summary_{ph}.csv")):
                op = r["Parent cpu_op"]
                ker[op] = ker.get(op, 0) + float(r["Kernel duration (µs)_sum"]) / 1000
            bad = [op for op in ker if op not in ops or ker[op] > ops[op] * (1 + 1e-6) + 1e-5]
            check(not bad and sum(ker.values()) >= 0.95 * sum(ops.values()),
                  f"{method} {ph}: op level {sum(ops.values()):.3f} ms, kernel level {sum(ker.values()):.3f} ms, "
                  f"ops apart: {bad[:5]}")
        ks = header(os.path.join(out, "kernel_summary.csv"))
        check(ks[0] == "Kernel category", f"kernel_summary's first column with phases: {ks[:2]}")
        cats = [r["op category"] for r in rows(os.path.join(out, "ops_summary_by_category.csv"))]
        check("other" not in cats, f"the branch regroups 'other' launchers: {cats}")


def sglang_names(tmp):
    """--enable_pseudo_ops renames sglang_profiler::<op>_<digits> to sglang_profiler::<op>."""
    import re
    trace = os.path.join(INF, "sglang_prefilldecode", "sglang_Qwen3-8B_prefilldecode.json.gz")
    suffixed = re.compile(r"^sglang_profiler::.+_\d+$")
    for flags, want in (([], True), (["--enable_pseudo_ops"], False)):
        out = os.path.join(tmp, "sg%d" % len(flags))
        rc, _, err = run(INF_CMD, "--profile_json_path", trace, "--output_csvs_dir", out, *flags)
        if not check(rc == 0, f"sglang {flags}: rc {rc} {err[-300:]}"):
            continue
        names = [r["name"] for r in rows(os.path.join(out, "ops_summary.csv"))]
        has = any(suffixed.match(n) for n in names)
        check(has == want, f"sglang {flags}: suffixed profiler names {'expected' if want else 'left'}: "
              f"{[n for n in names if n.startswith('sglang_profiler::')][:4]}")


BRANCH = os.path.join(HERE, "golden", "inference_branch")
BRANCH_TRACES = {"sglang_prefilldecode": "sglang_Qwen3-8B_prefilldecode.json.gz",
                 "sglang_decode": "sglang_Qwen3-8B_decode.json.gz",
                 "vllm_prefilldecode_piecewise": "graph_execution.json.gz"}


def branch_phase_sheets(tmp):
    """The phase sheets and kernel_summary against the branch's own (tests/golden/inference_branch)."""
    sys.path.insert(0, HERE)
    import golden_pytorch
    for case, trace in sorted(BRANCH_TRACES.items()):
        out = os.path.join(tmp, "br_" + case)
        rc, _, err = run(PYT_CMD, "--profile_json_path", os.path.join(INF, case, trace), "--output_csvs_dir", out,
                         "--inference_phase_analysis", "--no_phase_annotations", "--enable_kernel_summary")
        if not check(rc == 0, f"{case}: rc {rc} {err[-300:]}"):
            continue
        for sheet in ("ops_summary_prefill", "ops_summary_decode", "kernel_summary"):
            ref = golden_pytorch.read_csv(os.path.join(BRANCH, case, sheet + ".csv"))
            ours = golden_pytorch.read_csv(os.path.join(out, sheet + ".csv"))
            problems = []
            # op categories follow main's registry, which names more ops than the branch's
            ignored = {"Parent op category"}
            cells, bad = golden_pytorch.compare_sheet(sheet, ref, ours, ignored, problems, [])
            check(ours is not None and cells > 0 and bad == 0, f"{case} {sheet}: {bad} of {cells} cells differ "
                  f"from the branch: {problems[:3]}")


def main():
    if not os.path.isdir(INF) or not os.path.isdir(PUB):
        print("0 passed, 0 failed (skipped: no shared data)")
        return 77
    if not os.path.exists(INF_CMD):
        print(f"FAIL: {INF_CMD} missing\n0 passed, 1 failed")
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        ENV["TRACELENS_DB"] = os.path.join(tmp, "db")
        command_line(tmp)
        inference_sheets(tmp)
        phases(tmp)
        branch_phase_sheets(tmp)
        sglang_names(tmp)
    return check.summary()


if __name__ == "__main__":
    sys.exit(main())
