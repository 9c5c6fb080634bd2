/* custom_collectives.c — the reference's CustomCollective extension models
 * (AITER, vLLM and SGLang custom all-reduce / all-gather / reduce-scatter
 * kernels), per GPU, from the op's own tensors; n = prod(input shape), b =
 * bytes per element of its dtype (unknown: the model fails, as the
 * reference's arithmetic on None does):
 *
 *   fused all-reduce + RMSNorm (aiter::fused_allreduce_rmsnorm: input at 2,
 *     weight at 6; the trailing-underscore op: input at 0, weight at 2):
 *     FLOPs = n + (n // C)·(2C + 2) + 2n, bytes = 2nb + Cb + 2nb, C = len(weight);
 *   all-reduce (_C_custom_ar::all_reduce, qr_all_reduce, sgl_kernel's; input
 *     at 1): 0 FLOPs, bytes = 2nb;
 *   aiter::reduce_scatter, aiter::all_gather_reg (input at 1, output at 2):
 *     0 FLOPs, bytes = (n + prod(output))·b;
 *   sglang::reg_all_gather_into_tensor (output at 0, input at 1, dtype of
 *     the output): 0 FLOPs, bytes = (n + prod(output))·b.
 *
 * No Compute Spec (the reference's classes name no precision); no backward. */
#include "query/perfmodel/pm_internal.h"

static int width(pm_in *in, const char *dtype)
{
    int b = pm_bpe(dtype);
    if (!b) pm_raise(in, "unknown element width");
    return b;
}

int pm_custom_collective(pm_in *in, pm_out *out)
{
    if (in->mode == TL_PM_BWD) return PM_NOTIMPL;
    int id = in->id;
    if (id == PM_CC_REG_ALL_GATHER) {
        const tl_pv *os = pm_dims(in, 0), *is = pm_dims(in, 1);
        const char *dt = pm_type(in, 0);
        pm_param(in, out, "out_shape", pm_v_tuple(in, os));
        pm_param(in, out, "op_shape", pm_v_tuple(in, is));
        pm_param(in, out, "dtype_in", pm_v_str(in, dt));
        out->flops = PN_I(0);
        out->has_bytes = 1;
        out->bytes = pn_mul(pn_add(pm_prod(in, is), pm_prod(in, os)), PN_I(width(in, dt)));
        return PM_OK;
    }
    long xi = id == PM_CC_ALLREDUCE_RMSNORM ? 2 : id == PM_CC_ALLREDUCE_RMSNORM_ ? 0 : 1;
    const tl_pv *shape = pm_dims(in, xi);
    const char *dt = pm_type(in, xi);
    const tl_pv *stride = pm_stride(in, xi);
    pnum n = pm_prod(in, shape);
    out->flops = PN_I(0);
    out->has_bytes = 1;
    pm_param(in, out, "op_shape", pm_v_tuple(in, shape));
    if (id == PM_CC_REDUCE_SCATTER) {
        const tl_pv *os = pm_dims(in, 2);
        pm_param(in, out, "out_shape", pm_v_tuple(in, os));
        pm_param(in, out, "dtype_in", pm_v_str(in, dt));
        pm_param(in, out, "stride_input", pm_v_tuple(in, stride));
        out->bytes = pn_mul(pn_add(n, pm_prod(in, os)), PN_I(width(in, dt)));
        return PM_OK;
    }
    pm_param(in, out, "dtype_in", pm_v_str(in, dt));
    pm_param(in, out, "stride_input", pm_v_tuple(in, stride));
    if (id == PM_CC_ALL_REDUCE) {
        out->bytes = pn_mul(pn_mul(PN_I(2), n), PN_I(width(in, dt)));
        return PM_OK;
    }
    pnum C = PN_I(pm_dim(in, pm_dims(in, id == PM_CC_ALLREDUCE_RMSNORM ? 6 : 2), 0));
    pm_param(in, out, "num_channels", pm_v_pn(in, C));
    pnum rows = pn_fdiv(n, C);
    pnum f = pn_add(n, pn_mul(rows, pn_add(pn_mul(PN_I(2), C), PN_I(2))));
    out->flops = pn_add(f, pn_mul(n, PN_I(2)));
    pnum b = PN_I(width(in, dt)), nb = pn_mul(n, b);
    out->bytes = pn_add(pn_add(pn_mul(PN_I(2), nb), pn_mul(C, b)), pn_mul(PN_I(2), nb));
    return PM_OK;
}
