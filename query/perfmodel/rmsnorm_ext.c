/* rmsnorm_ext.c — the reference's RMSNorm extension models (AITER and vLLM
 * fused RMSNorm kernels, sheet RMSNorm_fwd). All are the core RMSNorm
 * (affine, no bias, not training; C = len(weight), n = prod(x), rows = n/C
 * as a float):  FLOPs = rows·(2C + 2) + 2n, plus what each kernel fuses;
 * b = bpe(x) (an unknown width fails, as the reference's arithmetic on None
 * does), M = n // C, groups = ⌈C / group⌉:
 *
 *   op (x, weight index)                          extra FLOPs  bytes
 *   aiter::rms_norm, rmsnorm2d_fwd_ck (0, 1)      —           2nb + Cb
 *   aiter::rmsnorm (1, 2)                         —           2nb + Cb
 *   aiter::add_rmsnorm, rmsnorm2d_fwd_with_add_ck (1, 4)
 *                                                 n           4nb + Cb
 *   aiter::rmsnorm2d_fwd_with_dynamicquant_ck (1, 3)
 *                                                 2n          nb + Cb + n + 4M
 *   aiter::rmsnorm_quant (1, 3; group = int(Concrete Inputs[5]), C when
 *     unreadable or <= 0)                         2n          nb + Cb + n + 4M·groups
 *   vllm::rocm_aiter_rmsnorm_fp8_group_quant (0, 1; group = Concrete Inputs[3])
 *                                                 2n          nb + Cb + n + 4M·groups
 *   vllm::rocm_aiter_rmsnorm_with_add_fp8_group_quant (0, 2; group at [4])
 *                                                 3n          3nb + Cb + n + 4M·groups
 *   vllm::rocm_aiter_triton_add_rmsnorm_pad, aiter::fused_add_rmsnorm_pad_
 *     (0, 1; output padded to a multiple p = Concrete Inputs[4] of C)
 *                                                 n           2nb + Cb + M·⌈C/p⌉p·b + M·C·b
 *
 * Compute Spec vector_<precision of x>; no backward formulas. */
#include "query/perfmodel/pm_internal.h"

typedef struct rms_layout {
    int id;
    long x, w;     /* argument positions */
    int extra;     /* extra FLOPs per element */
    long group_at; /* Concrete Inputs index of the group size / pad, -1 none */
} rms_layout;

static const rms_layout LAYOUTS[] = {
    {PM_AITER_RMS_NORM, 0, 1, 0, -1},
    {PM_AITER_RMSNORM, 1, 2, 0, -1},
    {PM_AITER_ADD_RMSNORM, 1, 4, 1, -1},
    {PM_RMSNORM_DYNQUANT, 1, 3, 2, -1},
    {PM_RMSNORM_QUANT, 1, 3, 2, 5},
    {PM_RMSNORM_FP8_GROUP, 0, 1, 2, 3},
    {PM_RMSNORM_ADD_FP8_GROUP, 0, 2, 3, 4},
    {PM_RMSNORM_ADD_PAD, 0, 1, 1, 4},
};

static pnum ceil_div(pnum a, pnum b) { return pn_fdiv(pn_sub(pn_add(a, b), PN_I(1)), b); }

int pm_rmsnorm_ext(pm_in *in, pm_out *out)
{
    if (in->mode == TL_PM_BWD) return PM_NOTIMPL;
    const rms_layout *L = NULL;
    for (size_t i = 0; i < sizeof LAYOUTS / sizeof LAYOUTS[0]; i++)
        if (LAYOUTS[i].id == in->id) L = &LAYOUTS[i];
    if (!L) pm_raise(in, "unknown RMSNorm layout");
    int64_t g = 0;
    if (L->group_at >= 0 && in->id == PM_RMSNORM_QUANT) {
        const char *t = pm_ci_opt(in, L->group_at);
        if (!t || pm_py_int_text(t, &g) != 0) g = 0;
    } else if (L->group_at >= 0) {
        g = pm_py_int(in, pm_ci(in, L->group_at));
    }
    const tl_pv *shape = pm_dims(in, L->x);
    const char *dtype = pm_type(in, L->x);
    const tl_pv *stride = pm_stride(in, L->x);
    pnum C = PN_I(pm_dim(in, pm_dims(in, L->w), 0));
    pm_param(in, out, "op_shape", pm_v_tuple(in, shape));
    pm_param(in, out, "dtype_in_out", pm_v_tup(in, 2, pm_v_str(in, dtype), NULL));
    pm_param(in, out, "stride_input", pm_v_tuple(in, stride));
    pm_param(in, out, "stride_output", NULL);
    pm_param(in, out, "num_channels", pm_v_pn(in, C));
    pm_param(in, out, "has_bias", pm_v_bool(in, 0));
    pm_param(in, out, "is_affine", pm_v_bool(in, 1));
    pm_param(in, out, "is_training", pm_v_bool(in, 0));
    pnum n = pm_prod(in, shape);
    pnum f = pn_add(pn_mul(pn_div(n, C), pn_add(pn_mul(PN_I(2), C), PN_I(2))), pn_mul(n, PN_I(2)));
    out->flops = pn_add(f, pn_mul(n, PN_I(L->extra)));
    int bi = pm_bpe(dtype);
    if (!bi) pm_raise(in, "unknown element width");
    pnum b = PN_I(bi), nb = pn_mul(n, b), cb = pn_mul(C, b), M = pn_fdiv(n, C);
    pnum y;
    switch (in->id) {
    case PM_AITER_RMS_NORM:
    case PM_AITER_RMSNORM:
        y = pn_add(pn_mul(PN_I(2), nb), cb);
        break;
    case PM_AITER_ADD_RMSNORM:
        y = pn_add(pn_mul(PN_I(4), nb), cb);
        break;
    case PM_RMSNORM_DYNQUANT:
        y = pn_add(pn_add(nb, cb), pn_add(n, pn_mul(M, PN_I(4))));
        break;
    case PM_RMSNORM_ADD_PAD: {
        pnum nout = g > 0 ? pn_mul(ceil_div(C, PN_I(g)), PN_I(g)) : C;
        y = pn_add(pn_add(pn_mul(PN_I(2), nb), cb), pn_add(pn_mul(pn_mul(M, nout), b), pn_mul(pn_mul(M, C), b)));
        break;
    }
    default: { /* the fp8 group quantisers */
        pnum gs = (in->id == PM_RMSNORM_QUANT && g <= 0) ? C : PN_I(g);
        pnum groups = ceil_div(C, gs);
        pnum x = pn_mul(nb, PN_I(in->id == PM_RMSNORM_ADD_FP8_GROUP ? 3 : 1));
        y = pn_add(pn_add(x, cb), pn_add(n, pn_mul(pn_mul(M, groups), PN_I(4))));
        break;
    }
    }
    out->has_bytes = 1;
    out->bytes = y;
    out->maf = "vector";
    out->cs_dtype = dtype;
    return PM_OK;
}
