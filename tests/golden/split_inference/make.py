#!/usr/bin/env python3
"""make.py — regenerates the golden set of TraceLens_split_inference_trace:
small synthetic multi-step serving traces (traces/, made here) and what the
reference's splitter writes for each case (expected.json).

usage: /usr/bin/python3 tests/golden/split_inference/make.py TRACELENS_CHECKOUT [SHARED_DATA]

TRACELENS_CHECKOUT is a checkout of AMD-AGI/TraceLens at commit 171dd747:
    git --git-dir=<mirror> archive 171dd747 TraceLens | tar x -C /tmp/tl
SHARED_DATA (default ../shared/data beside the repository) holds the public
inference traces; cases on them are recorded too (the test skips them when
the data is absent). Needs Debian's python3 with pandas and tqdm.

For each case the reference runs as
    python3 -m TraceLens.TraceUtils.split_inference_trace_annotation TRACE -o OUT FLAGS
and expected.json records, with OUT written as {OUT}: its stdout lines
(tqdm's progress bars go to stderr), the files it wrote, execution_details.json,
and per piece the event count, the GPU event count and the summed kernel
duration (us) read back from the piece.

The synthetic traces are built so that every path of the splitter is taken:
ramp-up, two steady-state regions with a dip between them, ramp-down;
prefill-only, mixed and decode-only steps (vLLM detailed and native names,
SGLang native and detailed names with MIXED steps, ATOM native and detailed
names); batch-marking ops
(vllm::unified_attention_with_output, sgl_kernel::sgl_per_token_group_quant_8bit)
with distinct sizes (CPython's set order decides which step gets which);
kernels launched inside a step but running after it; events of another
thread inside a step (not taken); float timestamps; and a loop without step
annotations (the reference's generic fallback over the call tree).
"""
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))


def step_names(kind, n):
    """(name, batch tokens) per step: requests ramp up to 32, hold with a dip
    in the middle, ramp down; every 4th step of a steady stretch carries a
    prefill."""
    out = []
    for i in range(n):
        if i < 8:
            req = 4 * (i + 1)
        elif i > n - 8:
            req = max(1, 4 * (n - i))
        elif n // 2 - 2 <= i <= n // 2 + 1:
            req = 12
        else:
            req = 32 - (i % 3)
        ctx = 2 if (i % 4 == 1 and 8 <= i <= n - 8) else (req if i < 3 else 0)
        gen = req - ctx
        tok = ctx * 512 + gen
        if kind == "vllm":
            name = (f"execute_{tok}_context_{ctx}(sq{ctx * 512}sk{ctx * 600}sqsq{ctx * 9}sqsk{ctx * 11})"
                    f"_generation_{gen}(sq{gen}sk{gen * 700}sqsq{gen}sqsk{gen * 700})")
        elif kind == "vllm_native":
            name = f"execute_context_{ctx}({ctx * 512})_generation_{gen}({gen})"
        elif kind == "sglang":
            name = f"step[EXTEND bs={ctx} toks={ctx * 512}]" if ctx else f"step[DECODE bs={gen}]"
        elif kind == "sglang_detailed":
            c = f"c_sq={ctx * 512} c_sqsq={ctx * 9} c_sqsk={ctx * 11} c_sk={ctx * 600}"
            g = f"g_sq={gen * 2} g_sqsq={gen * 4} g_sqsk={gen * 700} g_sk={gen * 700}"  # MTP: g_sq > bs
            name = (f"step[MIXED bs={req} c={ctx} g={gen} {c} {g}]" if ctx and gen
                    else f"step[EXTEND bs={ctx} toks={ctx * 512} {c}]" if ctx else f"step[DECODE bs={gen} {g}]")
        elif kind == "atom_detailed":
            name = (f"prefill[bs={ctx} tok={ctx * 512} ctx=[512, 512]...+1 sqsq={ctx * 9} sqsk={ctx * 11} "
                    f"sk={ctx * 600}]" if ctx
                    else f"decode[bs={gen}/{gen + 3} tok={gen * 3} d={gen} spec=2 sqsq={gen} sqsk={gen * 7} "
                    f"sk={gen * 700} tbo=1]")
        else:  # atom
            name = (f"prefill[bs={ctx} tok={ctx * 512} ctx=[512, 512]]" if ctx
                    else f"decode[bs={gen}/{gen + 3} tok={gen} d={gen}]")
        out.append((name, tok + i))  # distinct batch sizes
    return out


def make_trace(kind, n):
    ev = [{"ph": "M", "name": "process_name", "pid": 7, "ts": 0, "args": {"name": "python"}}]
    corr = 5000
    t = 1_000_000.125
    batch_op = ("sgl_kernel::sgl_per_token_group_quant_8bit" if kind == "sglang"
                else "vllm::unified_attention_with_output")
    for i, (name, tok) in enumerate(step_names(kind, n)):
        dur = 900.5 + (i % 5) * 13.25
        ev.append({"ph": "X", "cat": "user_annotation", "name": name, "pid": 7, "tid": 10, "ts": t,
                   "dur": dur, "args": {"External id": 10 * i}})
        ev.append({"ph": "X", "cat": "python_function", "name": "model_runner.py(100): execute_model",
                   "pid": 7, "tid": 10, "ts": t + 1.5, "dur": dur - 3, "args": {}})
        ev.append({"ph": "X", "cat": "cpu_op", "name": batch_op, "pid": 7, "tid": 10, "ts": t + 3.25,
                   "dur": 40.0, "args": {"External id": 10 * i + 1, "Input Dims": [[tok, 8, 128], [tok, 8, 128]]}})
        ev.append({"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 7, "tid": 11, "ts": t + 5,
                   "dur": 20.0, "args": {"External id": 10 * i + 2}})  # another thread: not in the piece
        for k in range(3 + i % 2):
            c = corr
            corr += 1
            lts = t + 50 + 200 * k
            ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 7, "tid": 10,
                       "ts": lts, "dur": 6.375, "args": {"correlation": c, "External id": 10 * i + 1}})
            kts = lts + 300.0 + 37.5 * k  # may run past the step's end
            ev.append({"ph": "X", "cat": "kernel", "name": f"gemm_kernel_{k}", "pid": 0, "tid": 7,
                       "ts": kts, "dur": 120.125 + 3 * k,
                       "args": {"correlation": c, "External id": 10 * i + 1, "device": 0, "stream": 7}})
            ev.append({"ph": "s", "id": c, "pid": 7, "tid": 10, "ts": lts, "cat": "ac2g", "name": "ac2g"})
            ev.append({"ph": "f", "id": c, "pid": 0, "tid": 7, "ts": kts, "cat": "ac2g", "name": "ac2g",
                       "bp": "e"})
        t += dur + (40.0 if i % 7 else 400.0)
    return {"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "GPU"}], "traceEvents": ev}


def make_generic_trace(n):
    """A diffusion-like loop without step annotations: a pipeline call with a
    setup call, n repetitions of (transformer forward, scheduler step) and a
    decode, each launching kernels: the reference's generic fallback."""
    ev = []
    state = {"corr": 9000}

    def x(cat, name, ts, dur, args=None):
        ev.append({"ph": "X", "cat": cat, "name": name, "pid": 7, "tid": 10, "ts": ts, "dur": dur,
                   "args": args or {}})

    def launch(ts, kname):
        c = state["corr"]
        state["corr"] += 1
        x("cuda_runtime", "hipLaunchKernel", ts, 5.0, {"correlation": c})
        ev.append({"ph": "X", "cat": "kernel", "name": kname, "pid": 0, "tid": 7, "ts": ts + 30, "dur": 12.5,
                   "args": {"correlation": c, "stream": 7, "device": 0}})
        ev.append({"ph": "s", "id": c, "pid": 7, "tid": 10, "ts": ts, "cat": "ac2g", "name": "ac2g"})
        ev.append({"ph": "f", "id": c, "pid": 0, "tid": 7, "ts": ts + 30, "cat": "ac2g", "name": "ac2g",
                   "bp": "e"})

    t = 5000.25
    x("python_function", "pipeline.py(10): __call__", t, 1000.0 + 4000 * n + 1000)
    x("python_function", "pipeline.py(20): encode_prompt", t + 10, 500.0)
    x("cpu_op", "aten::embedding", t + 20, 100.0)
    launch(t + 30, "embed_kernel")
    ts = t + 1000
    for _ in range(n):
        x("python_function", "transformer.py(50): forward", ts, 3000.0)
        x("cpu_op", "aten::mm", ts + 10, 200.0)
        launch(ts + 20, "gemm")
        x("cpu_op", "aten::add", ts + 300, 100.0)
        launch(ts + 310, "add_kernel")
        x("python_function", "scheduler.py(70): step", ts + 3100, 400.0)
        x("cpu_op", "aten::mul", ts + 3110, 100.0)
        launch(ts + 3120, "mul_kernel")
        ts += 4000
    x("python_function", "vae.py(90): decode", ts, 800.0)
    x("cpu_op", "aten::conv2d", ts + 10, 300.0)
    launch(ts + 20, "conv_kernel")
    return {"schemaVersion": 1, "traceEvents": ev}


SYNTHETIC = {
    "vllm_detailed_48": ("vllm", 48),
    "vllm_native_12": ("vllm_native", 12),
    "sglang_native_40": ("sglang", 40),
    "atom_24": ("atom", 24),
    "generic_loop_9": ("generic", 9),
    "sglang_detailed_36": ("sglang_detailed", 36),
    "atom_detailed_30": ("atom_detailed", 30),
}

# (case, trace, flags); a trace starting with "shared:" is under SHARED_DATA.
CASES = [
    ("vllm48_single", "vllm_detailed_48", ["--store-single-iteration", "-i", "5:9"]),
    ("vllm48_steady", "vllm_detailed_48", ["--find-steady-state", "--num-steps", "8"]),
    ("vllm48_steady_default", "vllm_detailed_48", ["--find-steady-state"]),
    ("vllm48_steady_conc", "vllm_detailed_48",
     ["--find-steady-state", "--num-steps", "4", "--CONC", "30", "--OSL", "20", "--R", "0.5"]),
    ("vllm48_divide", "vllm_detailed_48", ["--divide-phases", "--num-steps", "12"]),
    ("vllm48_range_steady", "vllm_detailed_48", ["--iterations", "10:30", "--find-steady-state",
                                                 "--num-steps", "6"]),
    ("vllm48_range_divide", "vllm_detailed_48", ["-i", "12:20", "--divide-phases"]),
    ("vllm48_nothing", "vllm_detailed_48", []),
    ("native12_steady", "vllm_native_12", ["--find-steady-state", "--num-steps", "8"]),
    ("native12_single", "vllm_native_12", ["--store-single-iteration", "-i", "3"]),
    ("sglang40_steady", "sglang_native_40", ["--find-steady-state", "--num-steps", "8"]),
    ("sglang40_divide", "sglang_native_40", ["--divide-phases"]),
    ("atom24_steady", "atom_24", ["--find-steady-state", "--num-steps", "6", "--CONC", "32"]),
    ("atom24_single", "atom_24", ["--store-single-iteration", "--iterations", "20:99"]),
    ("generic9_single", "generic_loop_9", ["--store-single-iteration"]),
    ("sglangdet36_steady", "sglang_detailed_36", ["--find-steady-state", "--num-steps", "6"]),
    ("sglangdet36_divide", "sglang_detailed_36", ["--divide-phases", "-i", "4:30"]),
    ("atomdet30_steady", "atom_detailed_30", ["--find-steady-state", "--num-steps", "10", "--CONC", "28",
                                             "--OSL", "64", "--R", "1.5"]),
    ("atomdet30_single", "atom_detailed_30", ["--store-single-iteration", "--iterations=-3:-1"]),
    ("generic9_steady", "generic_loop_9", ["--find-steady-state", "--num-steps", "4"]),
    ("sglang_decode_steady", "shared:inference/sglang_decode/sglang_Qwen3-8B_decode.json.gz",
     ["--find-steady-state"]),
    ("sglang_prefilldecode_single", "shared:inference/sglang_prefilldecode/sglang_Qwen3-8B_prefilldecode.json.gz",
     ["--store-single-iteration"]),
    ("vllm_decode_full_divide", "shared:inference/vllm_decode_full/graph_execution.json.gz", ["--divide-phases"]),
    ("vllm_piecewise_steady", "shared:inference/vllm_prefilldecode_piecewise/graph_execution.json.gz",
     ["--find-steady-state"]),
    ("xdit_sd35_single", "shared:public/xdit_sd35/xdit_sd35.json.gz", ["--store-single-iteration"]),
    ("xdit_flux_steady", "shared:public/xdit_flux_aiter_sage/xdit_flux_aiter_sage.json.gz",
     ["--find-steady-state"]),
]


def trace_path(name, shared):
    if name.startswith("shared:"):
        return os.path.join(shared, name[len("shared:"):])
    return os.path.join(HERE, "traces", name + ".json.gz")


def piece_summary(path):
    with gzip.open(path, "rt") as f:
        ev = json.load(f)["traceEvents"]
    kern = [e for e in ev if e.get("cat") == "kernel"]
    gpu = [e for e in ev if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset", "gpu_user_annotation")]
    return {"events": len(ev), "gpu_events": len(gpu), "kernel_us": round(sum(e["dur"] for e in kern), 6)}


def run_case(ref, path, flags):
    out = tempfile.mkdtemp(prefix="split_ref_")
    try:
        p = subprocess.run([sys.executable, "-m", "TraceLens.TraceUtils.split_inference_trace_annotation",
                            path, "-o", out] + flags, env=dict(os.environ, PYTHONPATH=ref),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, check=True)
        files = sorted(os.path.relpath(os.path.join(d, f), out) for d, _, fs in os.walk(out) for f in fs)
        details = None
        if "execution_details.json" in files:
            with open(os.path.join(out, "execution_details.json")) as f:
                details = json.load(f)
            for d in details:
                d["output_path"] = d["output_path"].replace(out, "{OUT}")
        pieces = {f: piece_summary(os.path.join(out, f)) for f in files if f.endswith(".json.gz")}
        return {"stdout": p.stdout.replace(out, "{OUT}").replace(path, "{TRACE}").splitlines(),
                "files": files, "details": details, "pieces": pieces}
    finally:
        shutil.rmtree(out)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    ref = os.path.abspath(sys.argv[1])
    shared = sys.argv[2] if len(sys.argv) > 2 else os.path.join(REPO, "..", "shared", "data")
    os.makedirs(os.path.join(HERE, "traces"), exist_ok=True)
    for name, (kind, n) in SYNTHETIC.items():
        with gzip.GzipFile(trace_path(name, shared), "wb", mtime=0) as f:
            trace = make_generic_trace(n) if kind == "generic" else make_trace(kind, n)
            f.write(json.dumps(trace).encode())
    expected = {}
    for case, trace, flags in CASES:
        path = trace_path(trace, shared)
        if not os.path.exists(path):
            print(f"{case}: {path} absent, not recorded")
            continue
        expected[case] = {"trace": trace, "flags": flags, **run_case(ref, path, flags)}
        print(f"{case}: {len(expected[case]['pieces'])} pieces")
    with open(os.path.join(HERE, "expected.json"), "w") as f:  # one case a line
        f.write("{\n" + ",\n".join(f"{json.dumps(k)}: {json.dumps(expected[k], sort_keys=True)}"
                                   for k in sorted(expected)) + "\n}\n")


if __name__ == "__main__":
    main()
