#!/usr/bin/env python3
"""test_pseudo_ops.py — the inference report's pseudo ops (--enable_pseudo_ops,
query/inference/pseudo_ops.c) on the shared vLLM graph-capture sample, whose
vllm::moe_forward runs unfused Triton MoE kernels (matmul_ogs).

Checks: with the flag, the unified summary has the reference's
pseudo_op::moe_triton_unfused_up/_down/_finalize_matmul_scatter rows in place
of the "(Synthetic Op)" rows of those kernels, with their kernels and kernel
times and no duration; the launcher sheets (ops_summary, ops_unique_args)
are unchanged by the flag, as in the reference; MoE_unfused_fwd follows
the reference's formulas; the stored pseudo ops carry
the moe_forward's shapes and the MoE args (topk from TopK, gated from the
kernel name); an SGLang trace without MoE gets no pseudo-op trace.

Usage: test_pseudo_ops.py BUILD_DIR   (exit 77 when ../shared/data is absent)
Prints "N passed, M failed" last."""
import csv
import filecmp
import json
import os
import subprocess
import sys
import tempfile

from tlcheck import Checks

HERE = os.path.dirname(os.path.abspath(__file__))
BUILD = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("TL_BUILD", "build")
DATA = os.environ.get("TL_SHARED_DATA", os.path.join(HERE, "..", "..", "shared", "data"))
INF = os.path.join(DATA, "inference")
INF_CMD = os.path.join(BUILD, "TraceLens_generate_perf_report_pytorch_inference")
TL = os.path.join(BUILD, "tracelens")
# the flags of the reference's inference tests, but --enable_pseudo_ops
FLAGS = ["--group_by_parent_module", "--group_by_num_kernels", "--disable_coll_analysis", "--include_call_stack"]
PSEUDO = ("pseudo_op::moe_triton_unfused_up", "pseudo_op::moe_triton_unfused_down",
          "pseudo_op::moe_triton_unfused_finalize_matmul_scatter")

check = Checks()
ENV = dict(os.environ)


def run(cmd, *args):
    p = subprocess.run([cmd] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV)
    return p.returncode, p.stdout, p.stderr


def rows(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def report(tmp, name, case, trace, *flags):
    d = os.path.join(INF, case)
    out = os.path.join(tmp, name)
    args = ["--profile_json_path", os.path.join(d, trace), "--output_csvs_dir", out]
    cap = os.path.join(d, "capture_traces")
    if os.path.isdir(cap):
        args += ["--capture_folder", cap]
    rc, _, err = run(INF_CMD, *args, *FLAGS, *flags)
    check(rc == 0, f"{name}: rc {rc} {err[-300:]}")
    return out if rc == 0 else None


def unified_rows(tmp):
    plain = report(tmp, "plain", "vllm_decode_full", "graph_execution.json.gz")
    pseudo = report(tmp, "pseudo", "vllm_decode_full", "graph_execution.json.gz", "--enable_pseudo_ops")
    if not plain or not pseudo:
        return
    for sheet in ("ops_summary.csv", "ops_unique_args.csv", "gpu_timeline.csv"):
        check(filecmp.cmp(os.path.join(plain, sheet), os.path.join(pseudo, sheet), shallow=False),
              f"{sheet} is the same with and without --enable_pseudo_ops")
    before = {r["name"]: r for r in rows(os.path.join(plain, "unified_perf_summary.csv"))}
    after = {r["name"]: r for r in rows(os.path.join(pseudo, "unified_perf_summary.csv"))}
    synth = {n: r for n, r in before.items() if n.startswith("vllm::moe_forward->") and
             ("matmul_ogs" in n or "matmul_scatter" in n)}
    check(len(synth) == 3, f"without the flag: the MoE kernels as synthetic ops: {sorted(synth)}")
    check(all(p in after for p in PSEUDO) and not any(n in after for n in synth),
          f"with the flag: the pseudo ops replace them: {sorted(n for n in after if 'moe' in n)}")
    if not all(p in after for p in PSEUDO):
        return
    up, down = after[PSEUDO[0]], after[PSEUDO[1]]
    check("_swiglu" in up["kernel_details_summary"] and "_swiglu" not in down["kernel_details_summary"],
          "up is the first (gated) matmul_ogs kernel, down the second")
    for p in PSEUDO:
        r = after[p]
        check(r["operation_count"] == "24" and float(r["total_duration_us"]) == 0.0 and r["mean_duration_us"] == "",
              f"{p}: 24 calls and no duration, as the reference's pseudo ops have none "
              f"({r['operation_count']}, {r['total_duration_us']!r}, {r['mean_duration_us']!r})")
        check(r["Input Dims"] == "((32, 3072), (32, 32), (), ())", f"{p}: the moe_forward's shapes {r['Input Dims']}")
    ksum = sum(float(after[p]["Kernel Time (µs)_sum"]) for p in PSEUDO)
    ssum = sum(float(r["Kernel Time (µs)_sum"]) for r in synth.values())
    check(abs(ksum - ssum) < 1e-6, f"the pseudo ops hold the synthetic ops' kernel time ({ksum} vs {ssum})")


def moe_model(tmp):
    """MoE_unfused_fwd: the reference's moe_triton_unfused_up/_down formulas on the sheet's own params."""
    path = os.path.join(tmp, "pseudo", "MoE_unfused_fwd.csv")
    if not check(os.path.exists(path), "MoE_unfused_fwd sheet written"):
        return
    got = {r["name"]: r for r in rows(path)}
    check(sorted(got) == sorted(PSEUDO[:2]), f"its rows: the up and down pseudo ops {sorted(got)}")
    for name, r in got.items():
        m, k, e, topk = (int(r["param: " + p]) for p in ("num_tokens", "hidden_dim", "num_experts", "topk"))
        n = int(r["param: inter_dim"])
        gated = r["param: gated"] == "True"
        up = name.endswith("_up")
        g = 2 if up and gated else 1
        flops = 2 * m * k * n * topk * g
        e_active = e * (1 - ((e - topk) / e) ** m)
        b_in, b_w = 2, 0.5  # c10::BFloat16, FP4
        weight = e_active * g * k * n * b_w
        moved = (m * k * b_in + weight + m * n * topk * b_in) if up else (m * n * topk * b_in + weight + m * k * b_in)
        check(r["param: weight_dtype"] == "FP4" and r["Compute Spec"] == "matrix_fp4" and gated == up,
              f"{name}: FP4 weights from the mxfp4 kernel, gated only up ({r['param: weight_dtype']}, "
              f"{r['Compute Spec']}, {gated})")
        check(abs(float(r["GFLOPS_first"]) - flops / 1e9) < 1e-9, f"{name}: GFLOPS {r['GFLOPS_first']} vs {flops / 1e9}")
        check(abs(float(r["Data Moved (MB)_first"]) - moved / 2**20) < 1e-6,
              f"{name}: Data Moved {r['Data Moved (MB)_first']} vs {moved / 2**20}")


def stored_args(tmp):
    rc, out, err = run(TL, "sql", "--format", "csv",
                       "SELECT o.name, o.args, o.parent_name FROM ops o JOIN traces t USING (trace_id) "
                       "WHERE t.path LIKE '%#pseudo-ops' AND o.name LIKE 'pseudo_op::%' ORDER BY o.uid")
    if not check(rc == 0, f"sql rc {rc} {err[-300:]}"):
        return
    got = list(csv.DictReader(out.splitlines()))
    check(len(got) == 72, f"72 pseudo ops stored (3 per moe_forward call), got {len(got)}")
    if not got:
        return
    first = {r["name"]: json.loads(r["args"]) for r in got[:3]}
    up = first.get(PSEUDO[0], {})
    check(up.get("MoE topk") == 4 and up.get("MoE GEMM gated") is True and up.get("MoE GEMM index") == 0
          and up.get("Pseudo op") is True and up.get("Input Dims") == [[32, 3072], [32, 32], [], []],
          f"up's args {up}")
    fin = first.get(PSEUDO[2], {})
    check(fin.get("MoE GEMM type") == "finalize_matmul_scatter" and "MoE topk" not in fin, f"finalize's args {fin}")
    check(all(r["parent_name"] == "vllm::moe_forward" for r in got), "every pseudo op sits under its moe_forward")


def sglang_untouched(tmp):
    out = report(tmp, "sglang", "sglang_prefilldecode", "sglang_Qwen3-8B_prefilldecode.json.gz",
                 "--enable_pseudo_ops")
    if not out:
        return
    rc, ls, _ = run(TL, "ls")
    check(rc == 0 and "#sglang-names" in ls and "sglang_Qwen3-8B_prefilldecode.json.gz#sglang-names#pseudo-ops"
          not in ls, "an SGLang trace without MoE gets its renamed trace and no pseudo-op trace")


def main():
    if not os.path.isdir(INF):
        print("0 passed, 0 failed (skipped: no shared data)")
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        ENV["TRACELENS_DB"] = os.path.join(tmp, "db")
        unified_rows(tmp)
        moe_model(tmp)
        stored_args(tmp)
        sglang_untouched(tmp)
    return check.summary()


if __name__ == "__main__":
    sys.exit(main())
