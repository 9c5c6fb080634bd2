/* kcat.c — the kernel category of a GPU kernel name, as the inference
 * branch's TreePerfAnalyzer.categorize_kernel_by_name writes it
 * (feature/inference-kernel-categorization, spec diff-compare-phases.md C7):
 * a prefix table (the name's first '_'-separated token, else first
 * space-separated token, else its first 20 characters) with GEMM and
 * attention refinements, then an ordered cascade of keyword families, each
 * with its sub-types; "Uncategorized" when nothing matches. */
#include "query/inference/inference.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int has(const char *s, const char *w) { return strstr(s, w) != NULL; }

/* any of the NULL-terminated words in s */
static int any_of(const char *s, const char *const *w)
{
    for (; *w; w++)
        if (strstr(s, *w)) return 1;
    return 0;
}

#define ANY(s, ...) any_of(s, (const char *const[]){__VA_ARGS__, NULL})

/* stage 1: the prefix table, refined; NULL when the prefix is not in it */
static const char *by_prefix(const char *l)
{
    size_t pl = strcspn(l, "_");
    if (!l[pl]) {
        pl = strcspn(l, " ");
        if (!l[pl] && pl > 20) pl = 20;
    }
    static const char *const tab[][2] = {
        {"cijk", "GEMM-CK"}, {"sgemm", "GEMM-Generic"}, {"dgemm", "GEMM-Generic"},
        {"hgemm", "GEMM-Generic"}, {"gemm", "GEMM-Generic"}, {"cutlass", "GEMM-CUTLASS"},
        {"cublas", "GEMM-cuBLAS"}, {"rocblas", "GEMM-ROCm"}, {"hipblas", "GEMM-ROCm"},
        {"fmha", "Attention-Generic"}, {"flash", "Attention-Generic"},
        {"paged", "PagedAttention-Generic"}, {"pagedattention", "PagedAttention-Generic"},
        {"rmsnorm", "Norm-RMS"}, {"layernorm", "Norm-Layer"}, {"batchnorm", "Norm-Batch"},
        {"softmax", "Activation-Softmax"}, {"gelu", "Activation-GELU"},
        {"silu", "Activation-SiLU"}, {"rope", "RoPE-Generic"}, {"rotary", "RoPE-Generic"},
        {"transpose", "Memory-Transpose"}, {"memcpy", "Memory-Copy"}, {"memset", "Memory-Set"},
        {"triton", "Triton-Custom"}};
    const char *res = NULL;
    for (size_t i = 0; i < sizeof tab / sizeof *tab && !res; i++)
        if (strlen(tab[i][0]) == pl && !strncmp(l, tab[i][0], pl)) res = tab[i][1];
    if (!res) return NULL;
    if (!strncmp(res, "GEMM", 4)) {
        if (has(l, "splitk")) return "GEMM-SplitK";
        if (ANY(l, "fp4", "int4", "f4")) return "GEMM-FP4";
        if (ANY(l, "fp8", "int8", "f8")) return "GEMM-FP8";
    }
    int paged = !strncmp(res, "PagedAttention", 14);
    if (paged || !strncmp(res, "Attention", 9)) {
        if (has(l, "fwd") || has(l, "forward")) return paged ? "PagedAttention-Forward" : "Attention-Forward";
        if (has(l, "bwd") || has(l, "backward")) return paged ? "PagedAttention-Backward" : "Attention-Backward";
    }
    return res;
}

/* The frameworks a "ns::name" kernel's namespace may name, with the
 * categories named after them. */
enum { FW_NONE = -1, FW_VLLM, FW_SGLANG, FW_TGI, FW_HF, FW_TRT, FW_ONNX };
static const char *const FW_CACHE[] = {"KVCache-vLLM", "KVCache-SGLang", "KVCache-TGI",
                                       "KVCache-HuggingFace", "KVCache-TensorRT", "KVCache-ONNX"};
static const char *const FW_CUSTOM[] = {"vLLM-Custom", "SGLang-Custom", "TGI-Custom",
                                        "HuggingFace-Custom", "TensorRT-Custom", "ONNX-Custom"};

/* the lower-cased namespace of a "ns::name" kernel into ns; 0 when none */
static int namespace_of(const char *name, const char *l, char *ns, size_t nsz)
{
    const char *sep = strstr(name, "::");
    if (!sep) return 0;
    size_t n = (size_t)(sep - name);
    snprintf(ns, nsz, "%.*s", (int)(n < nsz - 1 ? n : nsz - 1), l);
    return 1;
}

static int framework_of(const char *name, const char *l)
{
    char ns[128];
    if (!namespace_of(name, l, ns, sizeof ns)) return FW_NONE;
    if (has(ns, "vllm")) return FW_VLLM;
    if (has(ns, "sglang") || has(ns, "sgl")) return FW_SGLANG;
    if (has(ns, "tgi") || has(ns, "text_generation")) return FW_TGI;
    if (ANY(ns, "transformers", "hf", "huggingface")) return FW_HF;
    if (has(ns, "tensorrt") || has(ns, "trt")) return FW_TRT;
    if (has(ns, "onnx") || has(ns, "ort")) return FW_ONNX;
    return FW_NONE;
}

static const char *gemm_kind(const char *l)
{
    if (ANY(l, "f4gemm", "fp4", "int4")) return "GEMM-FP4";
    if (ANY(l, "f8gemm", "fp8", "int8")) return "GEMM-FP8";
    if (has(l, "cijk")) return "GEMM-CK";
    if (has(l, "cublas")) return "GEMM-cuBLAS";
    if (has(l, "cutlass")) return "GEMM-CUTLASS";
    if (has(l, "rocblas") || has(l, "hipblas")) return "GEMM-ROCm";
    if (has(l, "nvjet")) return "GEMM-NVJET";
    if (has(l, "mfma")) return "GEMM-MFMA";
    if (has(l, "wmma")) return "GEMM-WMMA";
    if (has(l, "splitk")) return "GEMM-SplitK";
    if (has(l, "tensor_op")) return "GEMM-TensorOp";
    return "GEMM-Generic";
}

static const char *direction(const char *l, const char *fwd, const char *bwd, const char *generic, int prop)
{
    if (has(l, "fwd") || has(l, "forward") || (prop && has(l, "fprop"))) return fwd;
    if (has(l, "bwd") || has(l, "backward") || (prop && has(l, "bprop"))) return bwd;
    return generic;
}

/* stage 2, first half: the compute families */
static const char *compute_family(const char *l)
{
    if (has(l, "paged_attention") || has(l, "pagedattention")) {
        if (has(l, "reduce")) return "PagedAttention-Reduce";
        if (ANY(l, "qkv", "kernel", "prefill", "decode")) return "PagedAttention-Compute";
        return "PagedAttention-Generic";
    }
    if (ANY(l, "chunked_prefill", "continuous_batch", "batch_decode")) return "InferenceBatching";
    if (ANY(l, "gemm", "cijk", "matmul", "cublas", "nvjet", "mfma", "wmma", "tensor_op", "sgemm", "dgemm", "hgemm",
            "bgemm", "i8gemm", "f4gemm", "f8gemm", "cutlass", "rocblas", "hipblas", "matrix_multiply"))
        return gemm_kind(l);
    if (ANY(l, "attention", "fmha", "flash", "attn", "sdpa", "scaled_dot_product"))
        return direction(l, "Attention-Forward", "Attention-Backward", "Attention-Generic", 1);
    if (ANY(l, "conv", "winograd", "im2col", "fillbuffer"))
        return direction(l, "Conv-Forward", "Conv-Backward", "Conv-Generic", 0);
    if (has(l, "fused")) {
        if (ANY(l, "add", "rmsnorm", "layernorm", "norm")) return "Fused-AddNorm";
        if (ANY(l, "qk", "rope", "cache")) return "Fused-QKRoPECache";
        if (ANY(l, "mlp", "ffn")) return "Fused-MLP";
        return "Fused-Generic";
    }
    if (ANY(l, "norm", "rmsnorm", "layernorm", "batchnorm", "instancenorm", "groupnorm")) {
        if (has(l, "rms")) return "Norm-RMS";
        if (has(l, "layer")) return "Norm-Layer";
        if (has(l, "batch")) return "Norm-Batch";
        return "Norm-Generic";
    }
    if (ANY(l, "relu", "gelu", "silu", "swish", "sigmoid", "tanh", "softmax", "act_and_mul", "activation")) {
        if (has(l, "act_and_mul")) return "Activation-Gated";
        if (has(l, "silu") || has(l, "swish")) return "Activation-SiLU";
        if (has(l, "gelu")) return "Activation-GELU";
        if (has(l, "softmax")) return "Activation-Softmax";
        return "Activation-Generic";
    }
    if (ANY(l, "elementwise", "pointwise", "add", "mul", "div", "sub", "fused_add", "scalar")) return "Elementwise";
    if (ANY(l, "reduce", "sum", "mean", "max", "min", "argmax", "argmin", "all_reduce")) return "Reduce";
    return NULL;
}

/* stage 2, second half: data movement, communication and inference families */
static const char *data_family(const char *l, int fw)
{
    if (ANY(l, "copy", "memcpy", "memset", "transpose", "permute", "reshape", "cast", "convert", "fill_buffer",
            "matrix_transpose", "data_transfer")) {
        if (ANY(l, "transpose", "permute", "matrix_transpose")) return "Memory-Transpose";
        if (ANY(l, "copy", "memcpy", "data_transfer")) return "Memory-Copy";
        if (has(l, "memset") || has(l, "fill_buffer")) return "Memory-Set";
        if (ANY(l, "reshape", "cast", "convert")) return "Memory-Reshape";
        return "Memory-Generic";
    }
    if (ANY(l, "nccl", "rccl", "msccl", "allreduce", "allgather", "reducescatter", "broadcast", "send", "recv",
            "barrier", "alltoall")) {
        static const char *const kinds[][2] = {
            {"allreduce", "Comm-AllReduce"}, {"allgather", "Comm-AllGather"}, {"reducescatter", "Comm-ReduceScatter"},
            {"alltoall", "Comm-AllToAll"}, {"send", "Comm-Send"}, {"recv", "Comm-Recv"},
            {"broadcast", "Comm-Broadcast"}, {"barrier", "Comm-Barrier"}};
        for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++)
            if (has(l, kinds[i][0])) return kinds[i][1];
        return "Comm-Generic";
    }
    if (ANY(l, "quant", "dequant", "fp8", "int8", "int4", "fp4", "scale", "per_group", "per_channel", "quantize",
            "dequantize", "qkv_quant", "weight_quant")) {
        if (has(l, "per_group") || has(l, "per_channel")) return "Quant-PerGroup";
        if (has(l, "dynamic")) return "Quant-Dynamic";
        if (has(l, "dequant")) return "Dequant";
        if (has(l, "weight")) return "Quant-Weight";
        if (has(l, "activation") || has(l, "act")) return "Quant-Activation";
        return "Quant-Generic";
    }
    if (has(l, "rope") || has(l, "rotary")) {
        if (has(l, "cached")) return "RoPE-Cached";
        if (has(l, "gqa") || has(l, "grouped")) return "RoPE-GQA";
        return "RoPE-Generic";
    }
    if (ANY(l, "cache", "reshape_and_cache", "kv_cache", "key_value_cache") && !has(l, "paged")) {
        if (has(l, "reshape")) return "KVCache-Reshape";
        if (has(l, "append") || has(l, "update")) return "KVCache-Update";
        if (has(l, "compress") || has(l, "prune")) return "KVCache-Compression";
        return fw != FW_NONE ? FW_CACHE[fw] : "KVCache-Generic";
    }
    if (ANY(l, "embedding", "lookup", "gather", "scatter", "index")) {
        if (has(l, "gather")) return "Indexing-Gather";
        if (has(l, "scatter")) return "Indexing-Scatter";
        return "Indexing-Generic";
    }
    if (ANY(l, "sample", "topk", "topp", "beam", "argmax", "argmin", "sampling", "select", "choice", "greedy",
            "nucleus")) {
        if (has(l, "topk") || has(l, "top_k")) return "Sampling-TopK";
        if (ANY(l, "topp", "top_p", "nucleus")) return "Sampling-TopP";
        if (ANY(l, "argmax", "argmin", "greedy")) return "Sampling-ArgMax";
        if (has(l, "beam")) return "Sampling-Beam";
        return "Sampling-Generic";
    }
    return NULL;
}

/* stage 2, last: inference-specific names, custom kernels, namespaces */
static const char *custom_family(const char *name, const char *l, int fw)
{
    if (ANY(l, "speculative", "draft", "verify_tokens")) return "SpeculativeDecoding";
    if (ANY(l, "radix", "prefix_cache", "tree_attention")) return "PrefixCaching";
    if (ANY(l, "logits", "token_gen", "next_token")) return "TokenGeneration";
    if (has(l, "triton")) return "Triton-Custom";
    if (has(l, "flashinfer") || has(l, "flash_infer")) return "FlashInfer";
    if (!strncmp(name, "_fwd_kernel", 11)) return "Kernel-Forward";
    if (!strncmp(name, "_bwd_kernel", 11)) return "Kernel-Backward";
    if (fw != FW_NONE) return FW_CUSTOM[fw];
    char ns[128];
    if (namespace_of(name, l, ns, sizeof ns)) {
        if (ANY(ns, "hf", "huggingface", "transformers")) return "HuggingFace-Custom";
        if (has(ns, "tensorrt") || has(ns, "trt")) return "TensorRT-Custom";
        if (has(ns, "onnx") || has(ns, "ort")) return "ONNX-Custom";
        if (has(ns, "deepspeed") || has(ns, "ds")) return "DeepSpeed-Custom";
        if (has(ns, "megatron") || has(ns, "mcore")) return "Megatron-Custom";
        if (has(ns, "fairscale") || has(ns, "fair")) return "FairScale-Custom";
    }
    return "Uncategorized";
}

const char *tl_kernel_category(const char *kn)
{
    if (!kn) return "Unknown";
    size_t n = strlen(kn);
    char *l = tl_xmalloc(n + 1);
    for (size_t i = 0; i <= n; i++) l[i] = (char)tolower((unsigned char)kn[i]);
    int fw = framework_of(kn, l);
    const char *res = by_prefix(l);
    if (!res) res = compute_family(l);
    if (!res) res = data_family(l, fw);
    if (!res) res = custom_family(kn, l, fw);
    free(l);
    return res;
}
