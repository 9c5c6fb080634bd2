/* norm.c — normalisation models (perf-models.md §5.6): batch/layer/group/
 * instance norm forward and backward through two generic formulas, RMSNorm,
 * and Primus' fused LayerNorm-modulate. The per-op argument layouts differ;
 * the reference's literal readings are kept: "present" means not-null (so a
 * norm called without weight still counts as affine), batch norm's
 * is_training is the truthiness of the text ("False" is true), and group
 * norm backward divides the channels by the group count as a float. */
#include "query/perfmodel/pm_internal.h"

#include <string.h>

typedef struct normp {
    const tl_pv *shape, *stride;
    const char *dtype;
    pnum C;
    int has_bias, is_affine, is_training;
    tl_pv *mask; /* output_mask list, NULL when the op has none */
    int m[3];
    size_t nm;
} normp;

static int not_null(pm_in *in, long i) { return !tl_pv_is_none(pm_dims(in, i)); }

static void mask_from(pm_in *in, normp *p, const char *text)
{
    const tl_pv *l = pm_literal(in, text);
    size_t n = pm_len(in, l);
    p->mask = tl_pv_new_seq(in->a, TL_PV_LIST, n);
    p->nm = n;
    for (size_t i = 0; i < n; i++) {
        int b = tl_pv_truthy(tl_pv_at(l, (long)i));
        p->mask->u.seq.v[i] = pm_v_bool(in, b);
        if (i < 3) p->m[i] = b;
    }
}

static void mask_fixed(pm_in *in, normp *p, int n, int v)
{
    p->mask = tl_pv_new_seq(in->a, TL_PV_LIST, (size_t)n);
    p->nm = (size_t)n;
    for (int i = 0; i < n; i++) {
        p->mask->u.seq.v[i] = pm_v_bool(in, v);
        p->m[i] = v;
    }
}

static int mask_at(pm_in *in, const normp *p, size_t i)
{
    if (i >= p->nm) pm_raise(in, "output_mask too short");
    return p->m[i];
}

static void input_at(pm_in *in, normp *p, long i, int strides_required)
{
    p->shape = pm_dims(in, i);
    p->dtype = pm_type(in, i);
    p->stride = strides_required ? pm_stride(in, i) : pm_stride_opt(in, i);
}

static pnum channels_dim1(pm_in *in, const normp *p) { return PN_I(pm_dim(in, p->shape, 1)); }

static pnum channels_literal(pm_in *in, const char *text) { return pm_prod(in, pm_literal(in, text)); }

static void norm_params(pm_in *in, pm_out *out, const normp *p)
{
    pm_param(in, out, "op_shape", pm_v_tuple(in, p->shape));
    pm_param(in, out, "dtype_in_out", pm_v_tup(in, 2, pm_v_str(in, p->dtype), NULL));
    pm_param(in, out, "stride_input", pm_v_tuple(in, p->stride));
    pm_param(in, out, "stride_output", NULL);
    pm_param(in, out, "num_channels", pm_v_pn(in, p->C));
    pm_param(in, out, "has_bias", pm_v_bool(in, p->has_bias));
    pm_param(in, out, "is_affine", pm_v_bool(in, p->is_affine));
    pm_param(in, out, "is_training", pm_v_bool(in, p->is_training));
    if (p->mask) pm_param(in, out, "output_mask", p->mask);
}

static void generic_fwd(const normp *p, pnum n, int bpe, pm_out *out)
{
    pnum C = p->C;
    pnum f = pn_mul(PN_I(3), C);
    f = pn_add(f, p->is_training ? pn_mul(PN_I(3), n) : PN_I(0));
    f = pn_add(f, pn_mul(PN_I(3), C));
    f = pn_add(f, pn_mul(PN_I(2), n));
    out->flops = f;
    int W = 2 + (p->is_affine ? 1 + (p->has_bias ? 1 : 0) : 0) + (p->is_training ? 2 : 0);
    out->has_bytes = bpe != 0;
    if (bpe) {
        pnum b = pn_add(pn_mul(n, PN_I(bpe)), pn_mul(n, PN_I(bpe)));
        out->bytes = pn_add(b, pn_mul(pn_mul(PN_I(W), C), PN_I(bpe)));
    }
}

static void generic_bwd(pm_in *in, const normp *p, pnum n, int bpe, pm_out *out)
{
    pnum C = p->C;
    int m0 = mask_at(in, p, 0), tr = p->is_training;
    pnum e = pn_div(n, C);
    pnum fpc = pn_add(PN_I(tr ? 0 : 3), pn_mul(PN_I(4), e));
    fpc = pn_add(fpc, m0 ? (tr ? pn_mul(PN_I(5), e) : PN_I(0)) : pn_mul(PN_I(2), e));
    out->flops = pn_mul(C, fpc);
    out->has_bytes = bpe != 0;
    if (bpe) {
        pnum B = PN_I(bpe);
        pnum b = pn_mul(n, B);
        b = pn_add(b, pn_mul(pn_mul(n, B), PN_I((m0 && tr) ? 2 : 1)));
        b = pn_add(b, tr ? pn_mul(C, B) : PN_I(0));
        pnum aff = PN_I(0);
        if (p->is_affine)
            aff = pn_add(pn_mul(C, B), tr ? pn_mul(pn_mul(C, B), PN_I(p->has_bias ? 2 : 1)) : PN_I(0));
        out->bytes = pn_add(b, aff);
    }
}

/* fused_ln_modulate (forward and backward) on a (T, B, H) input: its own
 * FLOPs (12 or 15 per element) and bytes, scale/shift of B·H elements and
 * fp32 statistics of T·B rows. */
static int ln_modulate(pm_in *in, pm_out *out)
{
    normp p;
    memset(&p, 0, sizeof p);
    input_at(in, &p, 0, 0);
    if (pm_len(in, p.shape) < 3) pm_raise(in, "fused_ln_modulate needs (T, B, H)");
    pnum T = PN_I(pm_dim(in, p.shape, 0)), Bt = PN_I(pm_dim(in, p.shape, 1)), Hd = PN_I(pm_dim(in, p.shape, 2));
    p.C = Hd;
    p.has_bias = p.is_affine = p.is_training = 1;
    int b = pm_bpe(p.dtype);
    pnum n = pm_prod(in, p.shape), width = PN_I(b);
    if (in->id == PM_LN_MODULATE_BWD) mask_fixed(in, &p, 3, 1);
    norm_params(in, out, &p);
    out->has_bytes = b != 0;
    if (in->id == PM_LN_MODULATE) {
        out->flops = pn_mul(PN_I(12), n);
        pnum y = pn_mul(pn_mul(PN_I(2), n), width);
        y = pn_add(y, pn_mul(pn_mul(pn_mul(PN_I(2), Bt), Hd), width));
        y = pn_add(y, pn_mul(pn_mul(pn_mul(PN_I(2), T), Bt), PN_I(4)));
        out->bytes = y;
    } else {
        out->flops = pn_mul(PN_I(15), n);
        pnum y = pn_mul(pn_mul(PN_I(2), n), width);
        y = pn_add(y, pn_mul(pn_mul(pn_mul(PN_I(2), Bt), T), PN_I(4)));
        y = pn_add(y, pn_mul(n, width));
        y = pn_add(y, pn_mul(pn_mul(pn_mul(PN_I(2), Bt), Hd), width));
        y = pn_add(y, pn_mul(pn_mul(Bt, Hd), width));
        out->bytes = y;
    }
    out->maf = "vector";
    out->cs_dtype = p.dtype;
    return PM_OK;
}

int pm_norm(pm_in *in, pm_out *out)
{
    if (in->mode == TL_PM_BWD) return PM_NOTIMPL; /* single-table sheet */
    normp p;
    memset(&p, 0, sizeof p);
    const char *name = in->op->name;
    int bwd = 0, rms = 0;
    switch (in->id) {
    case PM_BATCH_NORM:
        input_at(in, &p, 0, 1);
        p.C = channels_dim1(in, &p);
        p.has_bias = 1;
        p.is_affine = not_null(in, 2);
        p.is_training = pm_truthy_string(pm_ci(in, 5));
        break;
    case PM_BATCH_NORM_BWD:
        bwd = 1;
        p.has_bias = 1;
        if (!strcmp(name, "aten::cudnn_batch_norm_backward") || !strcmp(name, "aten::miopen_batch_norm_backward")) {
            input_at(in, &p, 0, 1);
            p.C = channels_dim1(in, &p);
            p.is_affine = not_null(in, 2);
            p.is_training = 0;
            mask_fixed(in, &p, 1, 1);
        } else {
            input_at(in, &p, 1, 1);
            p.C = channels_dim1(in, &p);
            p.is_affine = not_null(in, 2);
            p.is_training = pm_truthy_string(pm_ci(in, 7));
            mask_fixed(in, &p, 1, not_null(in, 0));
        }
        break;
    case PM_LAYER_NORM:
        input_at(in, &p, 0, 1);
        p.C = channels_literal(in, pm_ci(in, 1));
        p.has_bias = not_null(in, 3);
        p.is_affine = not_null(in, 2);
        p.is_training = 1;
        break;
    case PM_LAYER_NORM_BWD:
        bwd = 1;
        input_at(in, &p, 1, 1);
        p.C = channels_literal(in, pm_ci(in, 2));
        mask_from(in, &p, pm_ci(in, 7));
        p.has_bias = mask_at(in, &p, 2);
        p.is_affine = mask_at(in, &p, 1);
        p.is_training = 1;
        break;
    case PM_GROUP_NORM:
        input_at(in, &p, 0, 1);
        p.C = channels_dim1(in, &p); /* the group count is not used */
        p.has_bias = 1;
        p.is_affine = not_null(in, 2);
        p.is_training = 1;
        break;
    case PM_GROUP_NORM_BWD:
        bwd = 1;
        input_at(in, &p, 1, 1);
        p.C = pn_div(channels_dim1(in, &p), PN_I(pm_py_int(in, pm_ci(in, 8))));
        if (p.C.bad) pm_raise(in, "group count 0");
        p.has_bias = 1;
        p.is_affine = not_null(in, 5);
        p.is_training = 1;
        mask_from(in, &p, pm_ci(in, 9));
        break;
    case PM_INSTANCE_NORM:
        input_at(in, &p, 0, 1);
        p.C = channels_dim1(in, &p);
        p.has_bias = 1;
        p.is_affine = not_null(in, 2);
        p.is_training = pm_truthy_string(pm_ci(in, 5));
        break;
    case PM_INSTANCE_NORM_BWD:
        pm_raise(in, "instance norm backward is not modelled by the reference (always fails)");
    case PM_RMS_NORM:
        rms = 1;
        input_at(in, &p, 0, 1);
        p.C = channels_literal(in, pm_ci(in, 1));
        p.is_affine = not_null(in, 2);
        break;
    case PM_RMS_NORM_BWD:
        rms = 1;
        bwd = 1;
        input_at(in, &p, 1, 1);
        p.C = channels_literal(in, pm_ci(in, 2));
        p.is_affine = not_null(in, 4);
        mask_from(in, &p, pm_ci(in, 5));
        break;
    case PM_LN_MODULATE:
    case PM_LN_MODULATE_BWD:
        return ln_modulate(in, out);
    default:
        pm_raise(in, "unknown normalisation model");
    }

    norm_params(in, out, &p);
    pnum n = pm_prod(in, p.shape);
    int bpe = pm_bpe(p.dtype);
    if (rms && !bwd) {
        pnum rows = pn_div(n, p.C);
        pnum f = pn_mul(rows, pn_add(pn_mul(PN_I(2), p.C), PN_I(2)));
        out->flops = pn_add(f, pn_mul(n, PN_I(p.is_affine ? 2 : 1)));
        out->has_bytes = bpe != 0;
        if (bpe) {
            pnum b = pn_add(pn_mul(n, PN_I(bpe)), pn_mul(n, PN_I(bpe)));
            out->bytes = pn_add(b, p.is_affine ? pn_mul(p.C, PN_I(bpe)) : PN_I(0));
        }
    } else if (rms) {
        int m0 = mask_at(in, &p, 0), m1 = mask_at(in, &p, 1);
        pnum f = pn_add(p.is_affine ? n : PN_I(0), n);
        f = pn_add(f, m0 ? pn_mul(PN_I(6), n) : PN_I(0));
        pnum t = PN_I(0);
        if (m1 && p.is_affine) {
            pnum rows = pn_div(n, p.C);
            t = pn_add(n, pn_cmp(rows, PN_I(1)) > 0 ? n : PN_I(0));
            if (rows.bad) pm_raise(in, "zero channels");
        }
        out->flops = pn_add(f, t);
        out->has_bytes = bpe != 0;
        if (bpe) {
            pnum b = pn_add(pn_mul(n, PN_I(bpe)), pn_mul(pn_mul(PN_I(2), n), PN_I(bpe)));
            out->bytes = pn_add(b, p.is_affine ? pn_mul(pn_mul(PN_I(2), p.C), PN_I(bpe)) : PN_I(0));
        }
    } else if (bwd) {
        generic_bwd(in, &p, n, bpe, out);
    } else {
        generic_fwd(&p, n, bpe, out);
    }
    out->maf = "vector";
    out->cs_dtype = p.dtype;
    return PM_OK;
}
