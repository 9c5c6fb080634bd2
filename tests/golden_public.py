#!/usr/bin/env python3
"""golden_public.py — conformance on the public traces in
../shared/data/public (TraceLens and HolisticTraceAnalysis test traces, see
its README), against the reference's own CSVs beside each trace.

For every <case>/reference_csvs: TraceLens_generate_perf_report_pytorch
--enable_kernel_summary --short_kernel_study on <case>/<case>.json.gz,
compared sheet by sheet with golden_pytorch.py's implementation of the
reference's rules (pandas NA cells skipped, floats abs 1e-6, rows by
position). For every <case>/reference_csvs_inference, and every
../shared/data/inference/<case>/perf_csvs (the reference's own inference test
cases): the inference command with the flags of the reference's tests (see
the data README), with --capture_folder where the case has capture traces;
and those cases once more without it (nocapture/<case>), against the
reference's CSVs in tests/golden/inference_nocapture.

A case listed in KNOWN_DIFFERENCES prints its mismatch count with the
reason and does not fail the run; every other case must match exactly. A
known case that now matches is reported so that its entry gets removed.

usage: golden_public.py BUILD_DIR [-v] [-k SUBSTRING]
Exit 0 when nothing unexpected failed, 77 (skipped) when the data is absent.
"""
import os
import sys
import tarfile
import tempfile

import golden_pytorch

PUBLIC = os.path.join(golden_pytorch.DATA, "public")
PYTORCH_FLAGS = ["--enable_kernel_summary", "--short_kernel_study"]
INFERENCE_FLAGS = ["--enable_pseudo_ops", "--group_by_parent_module", "--group_by_num_kernels",
                   "--disable_coll_analysis", "--include_call_stack"]
INFERENCE_COMMAND = "TraceLens_generate_perf_report_pytorch_inference"

# (case/reference folder) -> reason; docs/CONFORMANCE.md states each.
KNOWN_DIFFERENCES = {}

# Extra flags per case: HTA's old trace has only async_cpu_to_gpu flows,
# which the reference ignores; --reference_linking links as it does.
CASE_FLAGS = {
    "hta_tracediff_test/reference_csvs": ["--reference_linking"],
}
INFERENCE = os.path.join(golden_pytorch.DATA, "inference")
# the reference's inference CSVs of the traces with a capture folder, made
# without it (tests/golden/inference_nocapture/make.py)
NOCAPTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden", "inference_nocapture",
                         "reference_csvs.tar.xz")


def cases():
    out = []
    if not os.path.isdir(PUBLIC):
        return out
    for case in sorted(os.listdir(PUBLIC)):
        d = os.path.join(PUBLIC, case)
        trace = os.path.join(d, case + ".json.gz")
        if not os.path.isfile(trace):
            continue
        for ref in ("reference_csvs", "reference_csvs_inference"):
            if os.path.isdir(os.path.join(d, ref)):
                out.append((case, ref, trace))
    # the reference's own inference test cases (its tests/traces/inference):
    # perf_csvs made with the same flags, beside the trace and its captures
    for case in sorted(os.listdir(INFERENCE)) if os.path.isdir(INFERENCE) else []:
        d = os.path.join(INFERENCE, case)
        traces = sorted(f for f in os.listdir(d) if f.endswith(".json.gz"))
        if traces and os.path.isdir(os.path.join(d, "perf_csvs")):
            out.append(("inference/" + case, "perf_csvs", os.path.join(d, traces[0])))
    return out


def nocapture_cases(tmp):
    """The inference traces that come with a capture folder, reported
    without it: (case, ref, trace) with the reference's CSVs unpacked from
    tests/golden/inference_nocapture into tmp."""
    if not os.path.exists(NOCAPTURE):
        return []
    dest = os.path.join(tmp, "nocapture_reference")
    with tarfile.open(NOCAPTURE) as t:
        t.extractall(dest)
    out = []
    for case in sorted(os.listdir(dest)):
        trace = os.path.join(PUBLIC, case, case + ".json.gz")
        if not os.path.isfile(trace):
            d = os.path.join(INFERENCE, case)
            found = sorted(f for f in os.listdir(d) if f.endswith(".json.gz")) if os.path.isdir(d) else []
            if not found:
                continue
            trace = os.path.join(d, found[0])
        out.append(("nocapture/" + case, os.path.join(dest, case), trace))
    return out


def run_inference(build, case, ref_dir, trace, tmp, capture=True):
    exe = os.path.join(build, INFERENCE_COMMAND)
    if not os.path.exists(exe):
        return None
    flags = list(INFERENCE_FLAGS)
    capture = capture and os.path.join(os.path.dirname(trace), "capture_traces")
    if capture and os.path.isdir(capture):
        flags += ["--capture_folder", capture]
    return golden_pytorch.run_folder(build, ref_dir, trace, flags, tmp, False, command=INFERENCE_COMMAND)


def main():
    parsed = golden_pytorch.parse_args(sys.argv[1:], __doc__)
    if not parsed:
        return 2
    build, verbose, filt = parsed
    todo = cases()
    if not todo:
        print(f"skipped: no public reference data at {PUBLIC}")
        return 77
    passed = failed = known = total_cells = 0
    with tempfile.TemporaryDirectory(prefix="tl_public_") as tmp:
        os.environ["TRACELENS_DB"] = os.path.join(tmp, "db")
        for case, ref, trace in todo + nocapture_cases(tmp):
            nocap = case.startswith("nocapture/")
            key = case if nocap else f"{case}/{ref}"
            if filt and filt not in key:
                continue
            ref_dir = ref if nocap else os.path.join(os.path.dirname(os.path.dirname(trace))
                                                     if case.startswith("inference/") else PUBLIC,
                                                     os.path.basename(case), ref)
            out_tmp = os.path.join(tmp, case.replace("/", "_"))
            os.makedirs(out_tmp, exist_ok=True)
            if ref == "reference_csvs":
                flags = PYTORCH_FLAGS + CASE_FLAGS.get(key, [])
                res = golden_pytorch.run_folder(build, ref_dir, trace, flags, out_tmp, verbose)
            else:
                res = run_inference(build, case, ref_dir, trace, out_tmp, capture=not nocap)
                if res is None:
                    print(f"pending {key}: no {INFERENCE_COMMAND} in this build")
                    continue
            cells, bad, problems, pend, dt = res
            total_cells += cells
            reason = KNOWN_DIFFERENCES.get(key)
            if bad == 0:
                status = "ok"
                passed += 1
            elif reason:
                status = "known"
                known += 1
            else:
                status = "FAIL"
                failed += 1
            line = f"{status:5} {key}: {cells} cells compared, {bad} mismatches ({dt:.2f} s)"
            if pend:
                line += f"; pending: {', '.join(pend)}"
            if reason:
                line += f" [{'listed as known, now matches: remove the entry' if bad == 0 else reason}]"
            print(line)
            if status == "FAIL" or verbose:
                for p in problems[: (1000 if verbose else 8)]:
                    print("      " + p)
                if len(problems) > 8 and not verbose:
                    print(f"      ... {len(problems) - 8} more (-v shows all)")
    print(f"{total_cells} cells compared; {passed} passed, {known} known differences, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
