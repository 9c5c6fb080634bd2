/* pm_internal.h — what the perf-model files share and nobody else sees: the
 * model ids of the registry, the parsed-args view a model reads, Python-like
 * numbers, and the accessors that "raise" (longjmp back to tl_pm_eval) the
 * way the reference's Python code raises on a missing key or a short list.
 * Raising instead of threading error codes through every index keeps each
 * model as short as its formula in the spec. */
#ifndef TL_PM_INTERNAL_H
#define TL_PM_INTERNAL_H

#include <setjmp.h>
#include "query/perfmodel/perfmodel.h"

/* Model ids: one per model of perf-models.md §5. */
enum pm_model_id {
    /* GEMM (5.1, 5.11) */
    PM_MM, PM_ADDMM, PM_BMM, PM_BADDBMM, PM_SCALED_MM, PM_TE_GEMM_TS, PM_GEMM_DYNQ,
    PM_TEV2_PSEUDO, PM_HIPBLASLT_FP8, PM_HIPBLASLT_FP4, PM_AITER_A4W4, PM_A8W8_BLOCKSCALE,
    PM_ROCM_UNQUANT, PM_A16W16_ATOMIC, PM_A16W16, PM_A16W16_ASM, PM_AFP4WFP4,
    PM_BATCHED_A16WFP4, PM_SGL_BATCHED_A8W8,
    /* attention (5.2) */
    PM_SDPA_FLASH, PM_SDPA_EFF, PM_SDPA_CUDNN, PM_FLASH_FWD, PM_FLASH_BWD, PM_VARLEN_FWD,
    PM_VARLEN_BWD, PM_AITER_FA_FWD, PM_AITER_FA_BWD, PM_AITER_V3_FWD, PM_AITER_V3_BWD,
    PM_AITER_MHA_FWD, PM_AITER_MHA_BWD, PM_FA3_FWD, PM_EVOFORMER,
    /* convolution (5.3) */
    PM_CONV_FWD, PM_CONV_BWD, PM_CONVBIAS_FWD, PM_CONVBIAS_BWD,
    /* elementwise (5.4, 5.5) */
    PM_UNARY, PM_REPLICATION_PAD, PM_UPSAMPLE_NEAREST, PM_QUANT_FP8, PM_QUANT_MXFP4_DUAL,
    PM_BINARY, PM_LIGER_SILU_MUL,
    /* normalisation (5.6) */
    PM_BATCH_NORM, PM_BATCH_NORM_BWD, PM_LAYER_NORM, PM_LAYER_NORM_BWD, PM_GROUP_NORM,
    PM_GROUP_NORM_BWD, PM_INSTANCE_NORM, PM_INSTANCE_NORM_BWD, PM_RMS_NORM, PM_RMS_NORM_BWD,
    PM_LN_MODULATE, PM_LN_MODULATE_BWD,
    /* reduce (5.7) */
    PM_REDUCE,
    /* other core families (5.8, 5.9) */
    PM_GROUPED_GEMM, PM_GROUPED_GEMM_VK, PM_MOE_COMM, PM_CAUSAL_CONV1D, PM_MAMBA_SSD,
    PM_FUSED_ROPE, PM_CROSS_ENTROPY,
    /* extension models (extension.c) */
    PM_SILU_AND_MUL, PM_GELU_AND_MUL, PM_GELU_TANH_AND_MUL, PM_AITER_RMS_NORM, PM_AITER_RMSNORM,
    PM_AITER_ADD_RMSNORM, PM_SGL_ROTARY, PM_SGL_STORE_CACHE, PM_INF_ATTN, PM_INF_ATTN_DV,
    PM_INF_ATTN_PAGED,
    PM_CC_ALLREDUCE_RMSNORM, PM_CC_ALLREDUCE_RMSNORM_, PM_CC_ALL_REDUCE, PM_CC_REDUCE_SCATTER,
    PM_CC_REG_ALL_GATHER, PM_GROUP_QUANT, PM_TOKEN_GROUP_QUANT_FP8, PM_MHC_POST, PM_MHC_PRE_GEMM,
    PM_MHC_PRE_BIG_FUSE, PM_MHC_FUSED_POST_PRE, PM_TOPK_SOFTPLUS, PM_MIXED_SAMPLE, PM_RMSNORM_DYNQUANT,
    PM_RMSNORM_QUANT, PM_RMSNORM_FP8_GROUP, PM_RMSNORM_ADD_FP8_GROUP, PM_RMSNORM_ADD_PAD, PM_MXFP4_FLATTEN,
    PM_MXFP4_MOE_SORT_STRIDED, PM_MXFP4_SGLANG, PM_MXFP4_MOE_SORT, PM_MXFP4_PER_GROUP, PM_AITER_ROPE_2C,
    PM_MOE_FUSED_BLOCKSCALE, PM_MOE_TRITON_UP, PM_MOE_TRITON_DOWN,
    /* Inductor Triton kernels, matched by name pattern (triton.c) */
    PM_TRITON,
    PM__COUNT
};

/* ---- Python-like numbers: an int (exact, 128-bit) or a float; "bad" marks
 * a Python exception (overflow, division by zero) and propagates. */
typedef struct pnum {
    int fl, bad;
    __int128 i;
    double f;
} pnum;

static inline pnum PN_I(int64_t v) { pnum r = {0, 0, v, 0}; return r; }
static inline pnum PN_F(double v) { pnum r = {1, 0, 0, v}; return r; }
static inline pnum PN_BAD(void) { pnum r = {0, 1, 0, 0}; return r; }
pnum pn_add(pnum a, pnum b);
pnum pn_sub(pnum a, pnum b);
pnum pn_mul(pnum a, pnum b);
pnum pn_div(pnum a, pnum b);   /* Python / */
pnum pn_fdiv(pnum a, pnum b);  /* Python // */
double pn_d(pnum a);           /* float(a) */
int pn_cmp(pnum a, pnum b);    /* -1, 0, 1 */

/* ---- the model's view of one event ------------------------------------- */
#define PM_MAX_PARAMS 40

typedef struct pm_in {
    const tl_pm_op *op;
    int id;
    tl_pm_mode mode;
    const tl_pv *dims, *types, *strides, *ci, *otypes; /* NULL: key absent */
    const tl_pm_args *args;
    tl_pm_ctx *ctx;
    tl_arena *a;
    jmp_buf *jb;
    const char *why; /* reason of the last raise */
} pm_in;

typedef struct pm_out {
    pnum flops;
    int has_bytes;
    pnum bytes;
    const char *maf;        /* "matrix" / "vector" / NULL (no Compute Spec) */
    const char *cs_dtype;   /* dtype whose precision names the Compute Spec */
    const char *cs_prec;    /* forced precision (fp4 GEMMs), overrides cs_dtype */
    tl_pm_param params[PM_MAX_PARAMS];
    size_t np;
} pm_out;

enum { PM_OK = 0, PM_NOTIMPL = 1 };
typedef int (*pm_fn)(pm_in *in, pm_out *out);

/* Family entry points (each switches on in->id). */
int pm_gemm(pm_in *in, pm_out *out);
int pm_attention(pm_in *in, pm_out *out);
int pm_conv(pm_in *in, pm_out *out);
int pm_elementwise(pm_in *in, pm_out *out);
int pm_norm(pm_in *in, pm_out *out);
int pm_reduce(pm_in *in, pm_out *out);
int pm_other(pm_in *in, pm_out *out);
int pm_extension(pm_in *in, pm_out *out);
int pm_inference_attention(pm_in *in, pm_out *out); /* inference_attention.c */
int pm_custom_collective(pm_in *in, pm_out *out);   /* custom_collectives.c */
int pm_group_quant(pm_in *in, pm_out *out);         /* group_quant.c */
int pm_mhc(pm_in *in, pm_out *out);                 /* mhc.c */
int pm_rmsnorm_ext(pm_in *in, pm_out *out);         /* rmsnorm_ext.c */
int pm_moe(pm_in *in, pm_out *out);                 /* moe.c */
/* Bytes per element as the reference's MoE table (DTYPE_TO_BYTES) has
 * them (fp4 0.5); dflt for an unlisted or NULL dtype (moe.c). */
pnum pm_moe_width(const char *dt, int dflt);
int pm_moe_unfused(pm_in *in, pm_out *out);         /* moe_unfused.c */
int pm_triton(pm_in *in, pm_out *out);

/* Inductor kernels (triton_ops.c): 1 when name is an ATen operator name of
 * the segmentation table. */
int pm_triton_known_op(const char *name);

/* ConvBias cache (conv.c): forward shapes by sequence number. */
typedef struct pm_convbias_entry pm_convbias_entry;
struct tl_pm_ctx {
    pm_convbias_entry *cb;
    size_t ncb, capcb;
    tl_arena arena;
};

/* ---- raising accessors (common.c) -------------------------------------- */
_Noreturn void pm_raise(pm_in *in, const char *why);
/* Dims[i] (raises when Input Dims is absent or i out of range). */
const tl_pv *pm_dims(pm_in *in, long i);
size_t pm_ndims(pm_in *in); /* len(Dims); raises when absent */
/* An int element: shape[i] (raises unless shape is a list and shape[i] an int). */
int64_t pm_dim(pm_in *in, const tl_pv *shape, long i);
int64_t pm_int(pm_in *in, const tl_pv *v);
/* prod(shape) over int elements; [] -> 1. */
pnum pm_prod(pm_in *in, const tl_pv *shape);
/* len(shape) (raises unless a list/tuple). */
size_t pm_len(pm_in *in, const tl_pv *shape);
/* Types[i] as a string. */
const char *pm_type(pm_in *in, long i);
size_t pm_ntypes(pm_in *in);
/* Strides[i]; _opt returns NULL (None) when the key is absent. */
const tl_pv *pm_stride(pm_in *in, long i);
const tl_pv *pm_stride_opt(pm_in *in, long i);
/* Concrete Inputs[i]; _opt returns NULL when absent / out of range. */
const char *pm_ci(pm_in *in, long i);
const char *pm_ci_opt(pm_in *in, long i);

/* ---- text conversions of perf-models.md §1.3 ---------------------------- */
int pm_py_bool(pm_in *in, const char *s);       /* raises on "" / other text */
int pm_lower_true(const char *s);               /* NULL/"" -> false */
int pm_truthy_string(const char *s);            /* non-empty */
int pm_parse_bool(const tl_pv *v);              /* parse_bool on a value */
int pm_parse_bool_text(const char *s);          /* parse_bool on a string (NULL -> false) */
double pm_py_float(pm_in *in, const char *s);   /* raises */
double pm_optional_float(const char *s);
int64_t pm_py_int(pm_in *in, const char *s);    /* Python int(text); raises */
int pm_py_int_text(const char *s, int64_t *out); /* the same; -1 instead of raising */
/* int-list "[a, b]" into vals (at most max); returns the count; raises. */
size_t pm_int_list(pm_in *in, const char *s, int64_t *vals, size_t max);
/* ast.literal_eval of text (raises when it is not a literal). */
const tl_pv *pm_literal(pm_in *in, const char *s);

/* ---- dtypes ------------------------------------------------------------- */
int pm_bpe(const char *dtype);            /* 0 = unknown */
const char *pm_prec(const char *dtype);   /* NULL = none */

/* ---- param and value builders ------------------------------------------- */
void pm_param(pm_in *in, pm_out *out, const char *key, const tl_pv *val);
tl_pv *pm_v_int(pm_in *in, int64_t v);
tl_pv *pm_v_pn(pm_in *in, pnum v); /* int or float value of a pnum */
tl_pv *pm_v_float(pm_in *in, double v);
tl_pv *pm_v_bool(pm_in *in, int b);
tl_pv *pm_v_str(pm_in *in, const char *s); /* NULL -> None */
tl_pv *pm_v_tuple(pm_in *in, const tl_pv *v); /* tuple(v); None stays None */
tl_pv *pm_v_tup(pm_in *in, size_t n, ...);   /* tuple of n tl_pv* (NULL = None) */
tl_pv *pm_v_ints(pm_in *in, tl_pv_kind kind, const int64_t *v, size_t n);

/* Position of a key in out->params, or -1. */
long pm_find_param(const pm_out *out, const char *key);

#endif
