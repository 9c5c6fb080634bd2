/* moe_unfused.c — the reference's models of vLLM's unfused Triton MoE
 * GEMMs (moe_triton_unfused_up / _down; category and sheet MoE_unfused), run
 * on the pseudo ops pseudo_op::moe_triton_unfused_up / _down that
 * --enable_pseudo_ops puts over each matmul_ogs kernel
 * (query/inference/pseudo_ops.c). Args: the moe_forward's Input Dims
 * [[M, K], [M, E], ...] and Input type[0] (the input dtype), the pseudo op's
 * "MoE topk" and "MoE GEMM gated"; N = K (the trace has no intermediate
 * size; the reference assumes it); the weight dtype from the first kernel's
 * name (mxfp4/fp4: FP4, fp8/e4m3: FP8, else None).
 *
 *   up:   FLOPs = 2·M·K·N·topk·(2 if gated else 1)
 *         bytes = M·K·b_in + E_active·(2 if gated else 1)·K·N·b_w + M·N·topk·b_in
 *   down: FLOPs = 2·M·N·K·topk
 *         bytes = M·N·topk·b_in + E_active·N·K·b_w + M·K·b_in
 *   E_active = E·(1 − ((E − topk)/E)^M)
 *
 * with the reference's MoE byte widths (an unlisted dtype raises). Compute
 * Spec matrix_<precision of the weight dtype>. No backward. */
#include "query/perfmodel/pm_internal.h"
#include "query/core/trace.h"

#include <math.h>
#include <string.h>

static int has_nocase(const char *s, const char *needle)
{
    size_t k = strlen(needle);
    for (; *s; s++) {
        size_t j = 0;
        while (j < k && s[j] && (s[j] | 0x20) == needle[j]) j++;
        if (j == k) return 1;
    }
    return 0;
}

/* args[key] of the pseudo op: its raw value text (raises when absent). */
static const char *pseudo_arg(pm_in *in, const char *key, size_t *vl)
{
    const char *a = in->args->pseudo_args;
    const char *v = a ? tl_args_get(a, strlen(a), key, vl) : NULL;
    if (!v) pm_raise(in, "MoE args of the pseudo op missing");
    return v;
}

int pm_moe_unfused(pm_in *in, pm_out *out)
{
    if (in->mode == TL_PM_BWD) return PM_NOTIMPL;
    if (pm_ndims(in) < 2) pm_raise(in, "fewer than 2 Input Dims");
    const tl_pv *x = pm_dims(in, 0), *router = pm_dims(in, 1);
    int64_t M = pm_dim(in, x, 0), K = pm_dim(in, x, 1), E = pm_dim(in, router, 1), N = K;
    size_t vl;
    const char *v = pseudo_arg(in, "MoE topk", &vl);
    const tl_pv *tv = pm_literal(in, tl_arena_strndup(in->a, v, vl));
    int64_t topk = pm_int(in, tv);
    v = pseudo_arg(in, "MoE GEMM gated", &vl);
    int gated = vl == 4 && !strncmp(v, "true", 4);
    if (!in->args->nkernels) pm_raise(in, "no kernel details");
    const char *kn = in->args->kernel_names[0] ? in->args->kernel_names[0] : "";
    const char *wdt = has_nocase(kn, "mxfp4") || has_nocase(kn, "fp4")   ? "FP4"
                      : has_nocase(kn, "fp8") || has_nocase(kn, "e4m3") ? "FP8"
                                                                         : NULL;
    if (pm_ntypes(in) < 2) pm_raise(in, "fewer than 2 Input types");
    const char *idt = pm_type(in, 0);
    int up = in->id == PM_MOE_TRITON_UP;
    pm_param(in, out, "num_tokens", pm_v_int(in, M));
    pm_param(in, out, "hidden_dim", pm_v_int(in, K));
    pm_param(in, out, "inter_dim", pm_v_int(in, N));
    pm_param(in, out, "num_experts", pm_v_int(in, E));
    pm_param(in, out, "topk", pm_v_int(in, topk));
    pm_param(in, out, "gated", pm_v_bool(in, gated));
    pm_param(in, out, "input_dtype", pm_v_str(in, idt));
    pm_param(in, out, "weight_dtype", pm_v_str(in, wdt));
    pnum m = PN_I(M), k = PN_I(K), n = PN_I(N), tk = PN_I(topk), g = PN_I(up && gated ? 2 : 1);
    out->flops = pn_mul(pn_mul(pn_mul(pn_mul(pn_mul(PN_I(2), m), k), n), tk), g);
    out->maf = "matrix";
    out->cs_dtype = wdt;
    pnum bi = pm_moe_width(idt, 0), bw = pm_moe_width(wdt, 0);
    if (pn_cmp(bi, PN_I(0)) == 0 || pn_cmp(bw, PN_I(0)) == 0) pm_raise(in, "unknown MoE dtype");
    if (E == 0) pm_raise(in, "no experts");
    double ea = (double)E * (1 - pow((double)(E - topk) / (double)E, (double)M));
    pnum w = pn_mul(pn_mul(pn_mul(pn_mul(PN_F(ea), g), k), n), bw);
    pnum spread = pn_mul(pn_mul(pn_mul(m, n), tk), bi); /* the topk copies of the intermediate */
    pnum dense = pn_mul(pn_mul(m, k), bi);
    out->has_bytes = 1;
    out->bytes = pn_add(pn_add(up ? dense : spread, w), up ? spread : dense);
    return PM_OK;
}
