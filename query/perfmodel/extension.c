/* extension.c — the reference's extension (pseudo-op) models built here,
 * from its PerfModel/extensions (the rest are TL_PM_PENDING registry lines):
 *
 *   gated activations  aiter/_C/sgl_kernel silu_and_mul, aiter gelu_and_mul,
 *                      gelu_tanh_and_mul; args (out, input): FLOPs = k ·
 *                      prod(out) with k = 5, 8, 10; bytes = 2·n·bpe(input)
 *                      + n·bpe(out); UnaryElementwise params with the input
 *                      at index 1 and the output at 0;
 *   AITER/vLLM RMSNorm variants  rmsnorm_ext.c;
 *   aiter::rope_cached_positions_2c_fwd_impl  below;
 *   sgl_kernel::rotary_embedding  (positions, q, k, _, cos_sin_cache, _):
 *                      3 FLOPs and 2·bpe(q) bytes per rotated element;
 *   sglang::store_cache  (k, v, k_cache, v_cache, ...): 0 FLOPs,
 *                      4·prod(k)·bpe(k) bytes;
 *   InferenceAttention  inference_attention.c; custom collectives
 *                      custom_collectives.c; group quantisation group_quant.c;
 *                      mHC and topk_softplus mhc.c; fused MoE moe.c;
 *   aiter::mixed_sample_outer_exponential  below.
 *
 * Unknown element widths follow the reference: the gated activations fail
 * (its arithmetic on None raises), RoPE and store_cache count 2 bytes. No
 * backward formulas. */
#include "query/perfmodel/pm_internal.h"

#include <string.h>

static int gated_activation(pm_in *in, pm_out *out)
{
    const tl_pv *shape = pm_dims(in, 0);
    const char *din = pm_type(in, 1), *dout = pm_type(in, 0);
    const tl_pv *sin = pm_stride(in, 1), *sout = pm_stride(in, 0);
    pm_param(in, out, "op_shape", pm_v_tuple(in, shape));
    pm_param(in, out, "dtype_in_out", pm_v_tup(in, 2, pm_v_str(in, din), pm_v_str(in, dout)));
    pm_param(in, out, "stride_input", pm_v_tuple(in, sin));
    pm_param(in, out, "stride_output", pm_v_tuple(in, sout));
    pnum n = pm_prod(in, shape);
    int k = in->id == PM_SILU_AND_MUL ? 5 : in->id == PM_GELU_AND_MUL ? 8 : 10;
    int bi = pm_bpe(din), bo = pm_bpe(dout);
    if (!bi || !bo) pm_raise(in, "unknown element width");
    out->flops = pn_mul(PN_I(k), n);
    out->has_bytes = 1;
    out->bytes = pn_add(pn_mul(pn_mul(PN_I(2), n), PN_I(bi)), pn_mul(n, PN_I(bo)));
    out->maf = "vector";
    out->cs_dtype = din;
    return PM_OK;
}

static int sgl_rotary(pm_in *in, pm_out *out)
{
    const tl_pv *q = pm_dims(in, 1), *k = pm_dims(in, 2);
    int64_t head = pm_dim(in, q, -1);
    const char *c3 = pm_ci_opt(in, 3);
    if (c3 && c3[strspn(c3, " \t\n\r\f\v")]) { /* str(x).strip() non-empty, then int(x) */
        int64_t v;
        if (pm_py_int_text(c3, &v) != 0) pm_raise(in, "head_size is not an integer");
        head = v;
    }
    pnum rot = PN_I(head);
    if (pm_ndims(in) > 4 && pm_len(in, pm_dims(in, 4)) > 1) rot = PN_I(pm_dim(in, pm_dims(in, 4), 1));
    pnum hq = pn_fdiv(PN_I(pm_dim(in, q, 1)), PN_I(head)), hk = pn_fdiv(PN_I(pm_dim(in, k, 1)), PN_I(head));
    pnum n = pn_mul(pn_mul(PN_I(pm_dim(in, q, 0)), pn_add(hq, hk)), rot);
    pm_param(in, out, "num_elements", pm_v_pn(in, n));
    const char *qt = pm_type(in, 1);
    int b = pm_bpe(qt);
    out->flops = pn_mul(PN_I(3), n);
    out->has_bytes = 1;
    out->bytes = pn_mul(pn_mul(PN_I(2), n), PN_I(b ? b : 2));
    out->maf = "vector";
    out->cs_dtype = qt;
    return PM_OK;
}

/* aiter::rope_cached_positions_2c_fwd_impl (x at 2, y at 3): n = prod(x) +
 * prod(y); 3 FLOPs and 2·bpe bytes per element (bpe of Input type[0], 2
 * when unknown) */
static int aiter_rope_2c(pm_in *in, pm_out *out)
{
    const tl_pv *x = pm_dims(in, 2), *y = pm_dims(in, 3);
    pnum n = pn_add(pm_prod(in, x), pm_prod(in, y));
    pm_param(in, out, "x_shape", pm_v_tuple(in, x));
    pm_param(in, out, "y_shape", pm_v_tuple(in, y));
    pm_param(in, out, "num_elements", pm_v_pn(in, n));
    const char *t0 = tl_pv_len(in->types) ? pm_type(in, 0) : NULL;
    int b = pm_bpe(t0 ? t0 : "c10::BFloat16");
    out->flops = pn_mul(PN_I(3), n);
    out->has_bytes = 1;
    out->bytes = pn_mul(pn_mul(PN_I(2), n), PN_I(b ? b : 2));
    out->maf = "vector";
    out->cs_dtype = t0;
    return PM_OK;
}

static int store_cache(pm_in *in, pm_out *out)
{
    const tl_pv *k = pm_dims(in, 0);
    const char *dt = pm_type(in, 0);
    pnum n = pm_prod(in, k);
    pm_param(in, out, "op_shape", pm_v_tuple(in, k));
    pm_param(in, out, "nelems", pm_v_pn(in, n));
    pm_param(in, out, "dtype", pm_v_str(in, dt));
    int b = pm_bpe(dt);
    out->flops = PN_I(0);
    out->has_bytes = 1;
    out->bytes = pn_mul(pn_mul(PN_I(4), n), PN_I(b ? b : 2));
    out->maf = "vector";
    out->cs_dtype = dt;
    return PM_OK;
}

/* aiter::mixed_sample_outer_exponential (logits (T, V) at 1, noise at 2):
 * 2·T·V FLOPs; T·V·(bpe(logits) + bpe(noise)) + 4·T bytes (unknown width:
 * unknown bytes); logits c10::bfloat16 and noise float when not listed */
static int mixed_sample(pm_in *in, pm_out *out)
{
    const tl_pv *ls = pm_dims(in, 1);
    size_t r = pm_len(in, ls);
    int64_t T = r >= 1 ? pm_dim(in, ls, 0) : 1, V = r >= 2 ? pm_dim(in, ls, 1) : 1;
    size_t nt = pm_ntypes(in);
    const char *dl = nt > 1 ? pm_type(in, 1) : "c10::bfloat16", *dn = nt > 2 ? pm_type(in, 2) : "float";
    pm_param(in, out, "T", pm_v_int(in, T));
    pm_param(in, out, "V", pm_v_int(in, V));
    pm_param(in, out, "dtype_logits", pm_v_str(in, dl));
    pm_param(in, out, "dtype_noise", pm_v_str(in, dn));
    pnum tv = pn_mul(PN_I(T), PN_I(V));
    int bl = pm_bpe(dl), bn = pm_bpe(dn);
    out->flops = pn_mul(PN_I(2), tv);
    out->has_bytes = bl && bn;
    if (out->has_bytes) out->bytes = pn_add(pn_mul(tv, PN_I(bl + bn)), pn_mul(PN_I(T), PN_I(4)));
    out->maf = "vector";
    out->cs_dtype = dl;
    return PM_OK;
}

int pm_extension(pm_in *in, pm_out *out)
{
    if (in->mode == TL_PM_BWD) return PM_NOTIMPL;
    switch (in->id) {
    case PM_SILU_AND_MUL:
    case PM_GELU_AND_MUL:
    case PM_GELU_TANH_AND_MUL:
        return gated_activation(in, out);
    case PM_AITER_RMS_NORM:
    case PM_AITER_RMSNORM:
    case PM_AITER_ADD_RMSNORM:
    case PM_RMSNORM_DYNQUANT:
    case PM_RMSNORM_QUANT:
    case PM_RMSNORM_FP8_GROUP:
    case PM_RMSNORM_ADD_FP8_GROUP:
    case PM_RMSNORM_ADD_PAD:
        return pm_rmsnorm_ext(in, out);
    case PM_SGL_ROTARY:
        return sgl_rotary(in, out);
    case PM_AITER_ROPE_2C:
        return aiter_rope_2c(in, out);
    case PM_SGL_STORE_CACHE:
        return store_cache(in, out);
    case PM_INF_ATTN:
    case PM_INF_ATTN_DV:
    case PM_INF_ATTN_PAGED:
        return pm_inference_attention(in, out);
    case PM_CC_ALLREDUCE_RMSNORM:
    case PM_CC_ALLREDUCE_RMSNORM_:
    case PM_CC_ALL_REDUCE:
    case PM_CC_REDUCE_SCATTER:
    case PM_CC_REG_ALL_GATHER:
        return pm_custom_collective(in, out);
    case PM_GROUP_QUANT:
    case PM_TOKEN_GROUP_QUANT_FP8:
    case PM_MXFP4_FLATTEN:
    case PM_MXFP4_MOE_SORT_STRIDED:
    case PM_MXFP4_SGLANG:
    case PM_MXFP4_MOE_SORT:
    case PM_MXFP4_PER_GROUP:
        return pm_group_quant(in, out);
    case PM_MHC_POST:
    case PM_MHC_PRE_GEMM:
    case PM_MHC_PRE_BIG_FUSE:
    case PM_MHC_FUSED_POST_PRE:
    case PM_TOPK_SOFTPLUS:
        return pm_mhc(in, out);
    case PM_MIXED_SAMPLE:
        return mixed_sample(in, out);
    case PM_MOE_FUSED_BLOCKSCALE:
        return pm_moe(in, out);
    case PM_MOE_TRITON_UP:
    case PM_MOE_TRITON_DOWN:
        return pm_moe_unfused(in, out);
    default:
        pm_raise(in, "unknown extension model");
    }
}
