#!/usr/bin/env python3
"""pftrace_gen.py — a synthetic rocprofv3 capture of a given size, written
both as a Perfetto trace (.pftrace) and as the traceEvents JSON that
`traceconv json` gives for it (compact, one event per line), for
bench/pftrace and tests/test_pftrace_bench.py.

The events model a host launching kernels: per step a hipLaunchKernel
HIP API slice on one of four host threads and its kernel_dispatch slice on
one of two GPU queues (joined by corr_id), every eighth step also a
hipMemcpyAsync and its memory_copy slice. Names, categories and annotation
names are interned on one packet sequence (tests/golden/pftrace/
pftrace_encode.py writes the packets). Deterministic for a given size.

usage: pftrace_gen.py SIZE OUT.pftrace OUT.json
SIZE: bytes of the .pftrace, with an optional K/M/G suffix (powers of 1024);
writing stops at the first step that reaches it."""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "golden", "pftrace"))
import pftrace_encode  # noqa: E402

KERNELS = [
    "Cijk_Ailk_Bljk_HHS_BH_MT128x128x64_MI32x32x8x1_SN_1LDSB1_APM1_AF0EM1_AF1EM1_AMAS3_ASE_ASGT_ASLT_ASAE01",
    "void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl<at::native::CUDAFunctor_add<float>>>",
    "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<c10::Half>, at::detail::Array<char*, 1>>",
    "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
    "FmhaFwd_kernel_func_v3_bf16_causal",
    "void ck::kernel_gemm_xdl_cshuffle_v3<ck::GridwiseGemm_xdl_cshuffle_v3<256, 128, 128, 64>>",
    "triton_poi_fused_add_mul_native_layer_norm_0",
    "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::MeanOps<float, float>>>",
]
COPIES = [("MEMORY_COPY_HOST_TO_DEVICE", 0, 2), ("MEMORY_COPY_DEVICE_TO_HOST", 2, 0),
          ("MEMORY_COPY_DEVICE_TO_DEVICE", 2, 3)]


def parse_size(text):
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:].upper(), 1)
    return int(text[:-1] if mult > 1 else text) * mult


def us(ns):
    """The JSON time text (us) of a whole number of ns."""
    return "%d.%03d" % divmod(ns, 1000)


def steps():
    """The generated events with ns times, each with the annotations
    rocprofv3 writes for its kind (those the reference's pftrace reports
    read: begin/end/delta ns, corr_id, agents, queue, stream and kernel
    resources)."""
    t, corr, step = 1_000_000_000, 0, 0
    while True:
        step += 1
        host = 1000 + step % 4
        corr += 1
        k = KERNELS[(step * 7) % len(KERNELS)]
        d = 2_000 + (step * 37) % 3_000
        yield ("hipLaunchKernel", "hip_api", 100, host, t, d,
               {"begin_ns": t, "end_ns": t + d, "delta_ns": d, "corr_id": corr, "tid": host, "operation": 7,
                "stream_ID": step % 2})
        kt, kd = t + d + 1_500, 5_000 + (step * 7919) % 200_000
        yield (k, "kernel_dispatch", 0, 1 + step % 2, kt, kd,
               {"begin_ns": kt, "end_ns": kt + kd, "delta_ns": kd, "agent": "gpu_0", "corr_id": corr,
                "queue": step % 2, "stream_ID": step % 2, "kernel_id": 1 + (step * 7) % len(KERNELS),
                "kernel_name": k, "grid_size": 64 << (step % 6), "workgroup_size": 256, "VGPR_Count": 128,
                "Accum_VGPR_Count": 0, "SGPR_Count": 96, "LDS_Block_Size": 16384, "Scratch_Size": 0})
        t += d + 700
        if step % 8 == 0:
            corr += 1
            name, src, dst = COPIES[(step // 8) % len(COPIES)]
            nbytes = 4096 << (step % 10)
            yield ("hipMemcpyAsync", "hip_api", 100, host, t, 4_000,
                   {"begin_ns": t, "end_ns": t + 4_000, "delta_ns": 4_000, "corr_id": corr, "tid": host,
                    "operation": 3, "stream_ID": 0})
            ct, cd = t + 1_000, 2_000 + nbytes // 20
            yield (name, "memory_copy", 0, 3, ct, cd,
                   {"begin_ns": ct, "end_ns": ct + cd, "delta_ns": cd, "corr_id": corr, "copy_bytes": nbytes,
                    "operation": 1 + (step // 8) % 3, "src_agent": src, "dst_agent": dst, "stream_ID": 0})
            t += 4_700


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: pftrace_gen.py SIZE OUT.pftrace OUT.json")
    limit = parse_size(sys.argv[1])
    enc = pftrace_encode.Encoder()
    written = 0
    with open(sys.argv[2], "wb") as pf, open(sys.argv[3], "w", encoding="utf-8") as js:
        js.write('{"traceEvents":[\n')
        sep = ""
        for name, cat, pid, tid, ts, dur, args in steps():
            ev = {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "args": args}
            b = enc.event_ns(ev, ts, dur)
            pf.write(b)
            written += len(b)
            js.write('%s{"ph":"X","cat":"%s","name":"%s","pid":%d,"tid":%d,"ts":%s,"dur":%s,"args":%s}'
                     % (sep, cat, name, pid, tid, us(ts), us(dur), json.dumps(args, separators=(",", ":"))))
            sep = ",\n"
            if written >= limit:
                break
        js.write("\n]}\n")


if __name__ == "__main__":
    main()
