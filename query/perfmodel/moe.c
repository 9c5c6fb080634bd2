/* moe.c — the reference's fused-MoE extension model of AITER's block-scale
 * fused MoE kernels (aiter::fmoe_fp8_blockscale_g1u1, aiter::fmoe_g1u1;
 * category and sheet MoE_fused). Args: out (M, K) at 0, w1 (E, ·, ·) at 2,
 * w2 (E, K, N) at 3, top-k = int(Concrete Inputs[8]); N is scaled by
 * K // w1[-1] (packed int4 weights), gated when w1[1] == 2N; dtypes: out,
 * input, weight = Input type[0], [1], [2].
 *
 *   FLOPs = 2·M·K·N·topk·(2 if gated else 1) + 2·M·K·N·topk + M·K·(2·topk − 1)
 *   E_active = E·(1 − ((E − topk)/E)^M)        (expected experts hit, float)
 *   bytes = M·K·b_in + E_active·N·K·b_w·(2 if gated) + E_active·N·K·b_w + M·K·b_out
 *
 * with the reference's MoE byte widths (c10 and short names; fp4 0.5;
 * unlisted: input and weight 1, output 2). Compute Spec matrix_<precision
 * of the input>, with the reference's reading of "bf16" as fp8. */
#include "query/perfmodel/pm_internal.h"

#include <math.h>
#include <string.h>

pnum pm_moe_width(const char *dt, int dflt)
{
    static const struct { const char *n; int twice; } t[] = {
        {"Float8_e4m3fn", 2}, {"Float8_e4m3fnuz", 2}, {"Float8_e5m2", 2}, {"Float8_e5m2fnuz", 2}, {"FP8", 2},
        {"FP4", 1}, {"BFloat16", 4}, {"Float16", 4}, {"Half", 4}, {"Float32", 8}, {"Float", 8},
        {"c10::BFloat16", 4}, {"c10::Float8_e4m3fn", 2}, {"c10::Float8_e4m3fnuz", 2},
        {"c10::Float4_e2m1fn_x2", 1}, {"c10::Half", 4}, {"c10::Float", 8},
    };
    for (size_t i = 0; dt && i < sizeof t / sizeof t[0]; i++)
        if (!strcmp(dt, t[i].n)) return t[i].twice == 1 ? PN_F(0.5) : PN_I(t[i].twice / 2);
    return PN_I(dflt);
}

int pm_moe(pm_in *in, pm_out *out)
{
    if (in->mode == TL_PM_BWD) return PM_NOTIMPL;
    const tl_pv *o = pm_dims(in, 0), *w1 = pm_dims(in, 2), *w2 = pm_dims(in, 3);
    int64_t M = pm_dim(in, o, 0);
    if (pm_len(in, w1) != 3 || pm_len(in, w2) != 3) pm_raise(in, "w1 or w2 is not 3-D");
    int64_t E = pm_dim(in, w2, 0), K = pm_dim(in, w2, 1), N = pm_dim(in, w2, 2);
    pnum war = pn_fdiv(PN_I(K), PN_I(pm_dim(in, w1, -1)));
    pnum Np = pn_mul(PN_I(N), war);
    E = pm_dim(in, w1, 0);
    int gated = pn_cmp(PN_I(pm_dim(in, w1, 1)), pn_mul(PN_I(2), Np)) == 0;
    const char *c8 = pm_ci_opt(in, 8);
    if (!c8 || !*c8) pm_raise(in, "top-k (Concrete Inputs[8]) missing");
    int64_t topk = pm_py_int(in, c8);
    const char *t_out = pm_type(in, 0), *t_in = pm_type(in, 1), *t_w = pm_type(in, 2);
    pm_param(in, out, "num_tokens", pm_v_int(in, M));
    pm_param(in, out, "hidden_dim", pm_v_int(in, K));
    pm_param(in, out, "inter_dim", pm_v_pn(in, Np));
    pm_param(in, out, "num_experts", pm_v_int(in, E));
    pm_param(in, out, "topk", pm_v_int(in, topk));
    pm_param(in, out, "gated", pm_v_bool(in, gated));
    pm_param(in, out, "input_dtype", pm_v_str(in, t_in));
    pm_param(in, out, "weight_dtype", pm_v_str(in, t_w));
    pm_param(in, out, "output_dtype", pm_v_str(in, t_out));
    pnum m = PN_I(M), k = PN_I(K), tk = PN_I(topk), mkn = pn_mul(pn_mul(m, k), Np);
    pnum fc1 = pn_mul(pn_mul(pn_mul(PN_I(2), mkn), tk), PN_I(gated ? 2 : 1));
    pnum fc2 = pn_mul(pn_mul(PN_I(2), mkn), tk);
    out->flops = pn_add(pn_add(fc1, fc2), pn_mul(pn_mul(m, k), pn_sub(pn_mul(PN_I(2), tk), PN_I(1))));
    if (E == 0) pm_raise(in, "no experts");
    double ea = (double)E * (1 - pow((double)(E - topk) / (double)E, (double)M));
    pnum bi = pm_moe_width(t_in, 1), bw = pm_moe_width(t_w, 1), bo = pm_moe_width(t_out, 2);
    pnum w = pn_mul(pn_mul(pn_mul(PN_F(ea), Np), k), bw);
    pnum y = pn_add(pn_mul(pn_mul(m, k), bi), pn_mul(w, PN_I(gated ? 2 : 1)));
    out->has_bytes = 1;
    out->bytes = pn_add(pn_add(y, w), pn_mul(pn_mul(m, k), bo));
    out->maf = "matrix";
    if (!strcmp(t_in, "fp8") || !strcmp(t_in, "bf16")) out->cs_prec = "fp8";
    else out->cs_dtype = t_in;
    return PM_OK;
}
