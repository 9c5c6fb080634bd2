/* elementwise.c — unary and binary elementwise models (perf-models.md §5.4,
 * §5.5): one FLOP per output element, bytes = inputs read + output written.
 * Quirks kept: aten::copy_(dst, src) reports the destination dtype as the
 * input and the source dtype as the output; a Python scalar operand is one
 * 4-byte element ("Scalar"); the output width of a binary op is the wider
 * input only when both operands are tensors. */
#include "query/perfmodel/pm_internal.h"

#include <string.h>

static int dims_nonempty(pm_in *in, long i)
{
    const tl_pv *d = tl_pv_at(in->dims, i);
    return (long)pm_ndims(in) > i && tl_pv_is_seq(d) && tl_pv_len(d) > 0;
}

static pnum bytes2(pnum n1, int b1, pnum n2, int b2)
{
    return pn_add(pn_mul(n1, PN_I(b1)), pn_mul(n2, PN_I(b2)));
}

static void unary_params(pm_in *in, pm_out *out, const tl_pv *shape, const char *din, const char *dout,
                         const tl_pv *sin, const tl_pv *sout)
{
    pm_param(in, out, "op_shape", pm_v_tuple(in, shape));
    pm_param(in, out, "dtype_in_out", pm_v_tup(in, 2, pm_v_str(in, din), pm_v_str(in, dout)));
    pm_param(in, out, "stride_input", pm_v_tuple(in, sin));
    pm_param(in, out, "stride_output", pm_v_tuple(in, sout));
}

static int unary(pm_in *in, pm_out *out)
{
    const tl_pv *shape = pm_dims(in, 0);
    const char *din = pm_type(in, 0), *dout = NULL;
    const tl_pv *sin = NULL, *sout = NULL;
    int id = in->id;
    if (id == PM_UNARY) {
        sin = pm_stride(in, 0);
        if (pm_ndims(in) > 1 && dims_nonempty(in, 1)) {
            dout = pm_type(in, 1);
            sout = pm_stride(in, 1);
        }
    } else {
        sin = pm_stride_opt(in, 0);
        dout = id == PM_QUANT_FP8 ? "c10::Float8_e4m3fnuz" : "c10::Float4_e2m1fn_x2";
    }
    unary_params(in, out, shape, din, dout, sin, sout);
    pnum n = pm_prod(in, shape);
    int bi = pm_bpe(din), bo = dout ? pm_bpe(dout) : bi;
    out->flops = n;
    if (id == PM_QUANT_MXFP4_DUAL) {
        if (pm_len(in, shape) != 2) pm_raise(in, "mxfp4 quantize needs a 2-D input");
        pnum M = PN_I(pm_dim(in, shape, 0)), N = PN_I(pm_dim(in, shape, 1));
        pnum mn = pn_mul(M, N);
        out->flops = mn;
        out->has_bytes = bi != 0;
        if (bi) {
            pnum b = pn_mul(mn, PN_I(bi));
            b = pn_add(b, pn_mul(PN_I(2), pn_fdiv(pn_add(mn, PN_I(1)), PN_I(2))));
            b = pn_add(b, pn_mul(M, pn_fdiv(pn_add(N, PN_I(31)), PN_I(32))));
            b = pn_add(b, pn_mul(N, pn_fdiv(pn_add(M, PN_I(31)), PN_I(32))));
            out->bytes = b;
        }
    } else {
        out->has_bytes = bi && bo;
        if (out->has_bytes) out->bytes = bytes2(n, bi, n, bo);
    }
    out->maf = "vector";
    out->cs_dtype = din;
    return PM_OK;
}

static int resize(pm_in *in, pm_out *out)
{
    const tl_pv *inshape = pm_dims(in, 0);
    size_t r = pm_len(in, inshape);
    const char *din = pm_type(in, 0);
    const tl_pv *sin = pm_stride(in, 0);
    tl_pv *outshape;
    tl_pv *padding = NULL;
    if (in->id == PM_REPLICATION_PAD) {
        int64_t pad[32];
        size_t np = pm_int_list(in, pm_ci(in, 1), pad, 32);
        if (np % 2) pm_raise(in, "odd padding list");
        int64_t o[64];
        if (r > 64) pm_raise(in, "rank too high");
        for (size_t i = 0; i < r; i++) o[i] = pm_dim(in, inshape, (long)i);
        for (size_t j = 0; j < np / 2; j++) {
            if (j >= r) pm_raise(in, "padding longer than the rank");
            o[r - 1 - j] += pad[2 * j] + pad[2 * j + 1];
        }
        outshape = pm_v_ints(in, TL_PV_TUPLE, o, r);
        padding = pm_v_ints(in, TL_PV_LIST, pad, np);
    } else {
        const tl_pv *sizes = pm_literal(in, pm_ci(in, 1));
        size_t ns = pm_len(in, sizes);
        outshape = tl_pv_new_seq(in->a, TL_PV_TUPLE, 2 + ns);
        outshape->u.seq.v[0] = pm_v_int(in, pm_dim(in, inshape, 0));
        outshape->u.seq.v[1] = pm_v_int(in, pm_dim(in, inshape, 1));
        for (size_t i = 0; i < ns; i++) outshape->u.seq.v[2 + i] = pm_v_int(in, pm_dim(in, sizes, (long)i));
    }
    pm_param(in, out, "input_shape", pm_v_tuple(in, inshape));
    pm_param(in, out, "output_shape", outshape);
    if (padding) pm_param(in, out, "padding", padding);
    unary_params(in, out, outshape, din, din, sin, NULL);
    pnum nin = pm_prod(in, inshape), nout = pm_prod(in, outshape);
    int b = pm_bpe(din);
    out->flops = nout;
    out->has_bytes = b != 0;
    if (b) out->bytes = bytes2(nin, b, nout, b);
    out->maf = "vector";
    out->cs_dtype = din;
    return PM_OK;
}

static int binary(pm_in *in, pm_out *out)
{
    const tl_pv *s1 = pm_dims(in, 0), *s2 = pm_dims(in, 1);
    const char *t1 = pm_type(in, 0), *t2 = pm_type(in, 1), *tout = NULL;
    const tl_pv *st1, *st2, *sto = NULL;
    if (in->id == PM_BINARY) {
        st1 = pm_stride(in, 0);
        st2 = pm_stride(in, 1);
        if (pm_ndims(in) > 2 && dims_nonempty(in, 2)) {
            tout = pm_type(in, 2);
            sto = pm_stride(in, 2);
        }
    } else {
        st1 = pm_stride_opt(in, 0);
        st2 = pm_stride_opt(in, 1);
    }
    size_t n1 = pm_len(in, s1), n2 = pm_len(in, s2), nb = n1 > n2 ? n1 : n2;
    pnum nout = PN_I(1);
    for (size_t i = 0; i < nb; i++) { /* right-aligned broadcast */
        int64_t a = i < n1 ? pm_dim(in, s1, (long)(n1 - 1 - i)) : 1;
        int64_t b = i < n2 ? pm_dim(in, s2, (long)(n2 - 1 - i)) : 1;
        if (a != b && a != 1 && b != 1) pm_raise(in, "shapes do not broadcast");
        nout = pn_mul(nout, PN_I(a > b ? a : b));
    }
    pnum c1 = pm_prod(in, s1), c2 = pm_prod(in, s2);
    int b1 = pm_bpe(t1), b2 = pm_bpe(t2), bo;
    if (tout) bo = pm_bpe(tout);
    else if (b1 && b2) bo = (n1 > 0 && n2 > 0) ? (b1 > b2 ? b1 : b2) : b1;
    else bo = 0;
    pm_param(in, out, "shape_in1", pm_v_tuple(in, s1));
    pm_param(in, out, "shape_in2", pm_v_tuple(in, s2));
    pm_param(in, out, "dtype_in1_in2_out",
             pm_v_tup(in, 3, pm_v_str(in, t1), pm_v_str(in, t2), pm_v_str(in, tout)));
    pm_param(in, out, "stride_input1", pm_v_tuple(in, st1));
    pm_param(in, out, "stride_input2", pm_v_tuple(in, st2));
    pm_param(in, out, "stride_output", pm_v_tuple(in, sto));
    out->flops = nout;
    out->has_bytes = b1 && b2 && bo;
    if (out->has_bytes) out->bytes = pn_add(bytes2(c1, b1, c2, b2), pn_mul(nout, PN_I(bo)));
    out->maf = "vector";
    out->cs_dtype = t1;
    return PM_OK;
}

int pm_elementwise(pm_in *in, pm_out *out)
{
    if (in->mode == TL_PM_BWD) return PM_NOTIMPL;
    switch (in->id) {
    case PM_UNARY:
    case PM_QUANT_FP8:
    case PM_QUANT_MXFP4_DUAL:
        return unary(in, out);
    case PM_REPLICATION_PAD:
    case PM_UPSAMPLE_NEAREST:
        return resize(in, out);
    case PM_BINARY:
    case PM_LIGER_SILU_MUL:
        return binary(in, out);
    default:
        pm_raise(in, "unknown elementwise model");
    }
}
