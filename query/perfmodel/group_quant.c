/* group_quant.c — the reference's GroupQuant extension models, filed on the
 * BinaryElementwise sheet with category GroupQuant:
 *
 *   per_group_quant (aiter::dynamic_per_token_scaled_quant,
 *     dynamic_per_group_scaled_quant, dynamic_per_tensor_quant; args
 *     (out, input, scale)): FLOPs = prod(out) · 2.59375 (the reference's
 *     figure from hardware counters), bytes = Σ prod(shape)·bpe over out,
 *     input and scale (an unknown width fails); params as the binary
 *     elementwise models' with in1 = input, in2 = scale;
 *   vllm::triton_per_token_group_quant_fp8 (x (M, N), group size from
 *     Concrete Inputs[1], default 128): FLOPs = 6·M·N, bytes = M·N·bpe(x)
 *     + M·N (fp8 out) + M·⌈N / group⌉·4 (fp32 scales); unknown bpe(x): bytes
 *     unknown. A 1-D x is (1, N), no x is (1, 1);
 *   mxfp4 quantisers (GroupQuant sheet; the input x at 0 for
 *     sglang_profiler::fused_mxfp4_quant_fused_flatten_mxfp4_quant and
 *     quant_dynamic_mxfp4_quant, 2 for the MoE-sort ones, 1 for
 *     aiter::dynamic_per_group_scaled_quant_fp4): FLOPs = 2n, bytes = n·bpe
 *     + 0.5·n (fp4) + n // 32 (e8m0 scales), unknown bpe: bytes unknown.
 *
 * Compute Spec vector_<precision of the input>; no backward formulas. */
#include "query/perfmodel/pm_internal.h"

#include <ctype.h>
#include <strings.h>

static int per_group_quant(pm_in *in, pm_out *out)
{
    const tl_pv *s1 = pm_dims(in, 1), *s2 = pm_dims(in, 2), *so = pm_dims(in, 0);
    const char *t1 = pm_type(in, 1), *t2 = pm_type(in, 2), *to = pm_type(in, 0);
    const tl_pv *sto = pm_stride(in, 0), *st1 = pm_stride(in, 1), *st2 = pm_stride(in, 2);
    pm_param(in, out, "shape_in1", pm_v_tuple(in, s1));
    pm_param(in, out, "shape_in2", pm_v_tuple(in, s2));
    pm_param(in, out, "shape_out", pm_v_tuple(in, so));
    pm_param(in, out, "dtype_in1_in2_out", pm_v_tup(in, 3, pm_v_str(in, t1), pm_v_str(in, t2), pm_v_str(in, to)));
    pm_param(in, out, "stride_input1", pm_v_tuple(in, st1));
    pm_param(in, out, "stride_input2", pm_v_tuple(in, st2));
    pm_param(in, out, "stride_output", pm_v_tuple(in, sto));
    int bo = pm_bpe(to), b1 = pm_bpe(t1), b2 = pm_bpe(t2);
    if (!bo || !b1 || !b2) pm_raise(in, "unknown element width");
    out->flops = pn_mul(pm_prod(in, so), PN_F(2.59375));
    out->has_bytes = 1;
    pnum b = pn_mul(pm_prod(in, so), PN_I(bo));
    b = pn_add(b, pn_mul(pm_prod(in, s1), PN_I(b1)));
    out->bytes = pn_add(b, pn_mul(pm_prod(in, s2), PN_I(b2)));
    out->maf = "vector";
    out->cs_dtype = t1;
    return PM_OK;
}

static int token_group_quant_fp8(pm_in *in, pm_out *out)
{
    const tl_pv *x = in->dims && tl_pv_len(in->dims) > 0 ? pm_dims(in, 0) : NULL;
    size_t r = x ? pm_len(in, x) : 0;
    int64_t M = 1, N = 1;
    if (r >= 2) { M = pm_dim(in, x, 0); N = pm_dim(in, x, 1); }
    else if (r == 1) N = pm_dim(in, x, 0);
    int64_t group = 128, v;
    const char *raw = tl_pv_len(in->ci) > 1 ? pm_ci_opt(in, 1) : NULL;
    if (raw) {
        while (isspace((unsigned char)*raw)) raw++;
        if (*raw && strcasecmp(raw, "none") != 0 && pm_py_int_text(raw, &v) == 0) group = v;
    }
    pnum groups = pn_fdiv(pn_sub(pn_add(PN_I(N), PN_I(group)), PN_I(1)), PN_I(group));
    if (groups.bad) pm_raise(in, "group size 0");
    if (pn_cmp(groups, PN_I(1)) < 0) groups = PN_I(1);
    const char *dx = tl_pv_len(in->types) > 0 ? pm_type(in, 0) : "";
    tl_pv *shape = pm_v_tuple(in, x ? x : tl_pv_new_seq(in->a, TL_PV_TUPLE, 0));
    pm_param(in, out, "M", pm_v_int(in, M));
    pm_param(in, out, "N", pm_v_int(in, N));
    pm_param(in, out, "group_size", pm_v_int(in, group));
    pm_param(in, out, "num_groups", pm_v_pn(in, groups));
    pm_param(in, out, "shape_x", shape);
    pm_param(in, out, "dtype_x", pm_v_str(in, dx));
    pm_param(in, out, "shape_in1", shape);
    pm_param(in, out, "shape_in2", tl_pv_new_seq(in->a, TL_PV_TUPLE, 0));
    pm_param(in, out, "shape_out", shape);
    pm_param(in, out, "dtype_in1_in2_out", pm_v_tup(in, 3, pm_v_str(in, dx), NULL, pm_v_str(in, "c10::float8_e4m3fn")));
    pm_param(in, out, "stride_input1", NULL);
    pm_param(in, out, "stride_input2", NULL);
    pm_param(in, out, "stride_output", NULL);
    pnum mn = pn_mul(PN_I(M), PN_I(N));
    out->flops = pn_mul(PN_I(6), mn);
    int b = pm_bpe(dx);
    out->has_bytes = b != 0;
    if (b) out->bytes = pn_add(pn_add(pn_mul(mn, PN_I(b)), mn), pn_mul(pn_mul(PN_I(M), groups), PN_I(4)));
    out->maf = "vector";
    out->cs_dtype = *dx ? dx : NULL;
    return PM_OK;
}

static int mxfp4_quant(pm_in *in, pm_out *out)
{
    int id = in->id;
    long xi = id == PM_MXFP4_FLATTEN || id == PM_MXFP4_SGLANG ? 0 : id == PM_MXFP4_PER_GROUP ? 1 : 2;
    int strides = id == PM_MXFP4_FLATTEN || id == PM_MXFP4_MOE_SORT_STRIDED;
    const tl_pv *shape = pm_dims(in, xi);
    const char *dt = pm_type(in, xi);
    const tl_pv *st = strides ? pm_stride(in, xi) : NULL;
    pm_param(in, out, "op_shape", pm_v_tuple(in, shape));
    pm_param(in, out, "dtype_in_out", pm_v_tup(in, 2, pm_v_str(in, dt), pm_v_str(in, dt)));
    pm_param(in, out, "stride_input", pm_v_tuple(in, st));
    pm_param(in, out, "stride_output", NULL);
    pnum n = pm_prod(in, shape);
    out->flops = pn_mul(PN_I(2), n);
    int b = pm_bpe(dt);
    out->has_bytes = b != 0;
    if (b) out->bytes = pn_add(pn_add(pn_mul(n, PN_I(b)), pn_mul(n, PN_F(0.5))), pn_fdiv(n, PN_I(32)));
    out->maf = "vector";
    out->cs_dtype = dt;
    return PM_OK;
}

int pm_group_quant(pm_in *in, pm_out *out)
{
    if (in->mode == TL_PM_BWD) return PM_NOTIMPL;
    if (in->id == PM_GROUP_QUANT) return per_group_quant(in, out);
    if (in->id == PM_TOKEN_GROUP_QUANT_FP8) return token_group_quant_fp8(in, out);
    return mxfp4_quant(in, out);
}
