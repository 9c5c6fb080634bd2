/* reduce.c — the reduction model (perf-models.md §5.7): one FLOP per input
 * element, bytes = input read + output written. The reference reads the
 * reduced dims only from genuine JSON ints/lists in Concrete Inputs; Kineto
 * writes them as strings, so in practice every non-cumulative reduction
 * reports a single output element. That behaviour is reproduced; the
 * genuine-JSON path is kept for producers that write real values. */
#include "query/perfmodel/pm_internal.h"

#include <string.h>

static const char *reduce_type(const char *name)
{
    if (strstr(name, "mean")) return "mean";
    if (strstr(name, "max")) return "max";
    if (strstr(name, "min")) return "min";
    if (strstr(name, "norm")) return "norm";
    return "sum";
}

/* Output elements when CI[1] is a real JSON int / int list (CODE-only path). */
static int json_dims_output(pm_in *in, const tl_pv *shape, pnum *nout)
{
    const tl_pv *dim = tl_pv_at(in->ci, 1);
    if (!dim || !(dim->kind == TL_PV_INT || tl_pv_is_seq(dim))) return 0;
    const tl_pv *kd = tl_pv_at(in->ci, 2);
    int keepdim = kd && kd->kind == TL_PV_BOOL && kd->u.b;
    size_t r = pm_len(in, shape);
    int reduced[64] = {0};
    if (r > 64) return 0;
    size_t nd = dim->kind == TL_PV_INT ? 1 : tl_pv_len(dim);
    for (size_t i = 0; i < nd; i++) {
        const tl_pv *d = dim->kind == TL_PV_INT ? dim : tl_pv_at(dim, (long)i);
        if (!d || d->kind != TL_PV_INT || d->u.i.big) return 0;
        int64_t k = d->u.i.v;
        if (k < 0) k += (int64_t)r;
        if (k < 0 || k >= (int64_t)r) return 0;
        reduced[k] = 1;
    }
    pnum p = PN_I(1);
    for (size_t i = 0; i < r; i++)
        if (!reduced[i]) p = pn_mul(p, PN_I(pm_dim(in, shape, (long)i)));
    (void)keepdim; /* keepdim keeps size-1 dims: the element count is the same */
    *nout = p;
    return 1;
}

int pm_reduce(pm_in *in, pm_out *out)
{
    const char *name = in->op->name;
    pnum nin = PN_I(0), nout = PN_I(0);
    const char *din = NULL, *dout = NULL;
    int has_type = 0;
    const tl_pv *d0 = tl_pv_at(in->dims, 0);
    if (tl_pv_is_seq(in->dims) && tl_pv_len(in->dims) > 0 && !tl_pv_is_none(d0)) {
        has_type = 1;
        nin = pm_prod(in, d0);
        if (tl_pv_is_seq(in->types) && tl_pv_len(in->types) > 0) din = pm_type(in, 0);
        if (tl_pv_is_seq(in->otypes) && tl_pv_len(in->otypes) > 0) {
            const tl_pv *o = tl_pv_at(in->otypes, 0);
            if (o && o->kind == TL_PV_STR) dout = o->u.s.p;
        }
        if (strstr(name, "cumsum") || strstr(name, "cumprod")) nout = nin;
        else if (!json_dims_output(in, d0, &nout)) nout = PN_I(1);
    }
    pm_param(in, out, "num_input_elems", pm_v_pn(in, nin));
    pm_param(in, out, "num_output_elems", pm_v_pn(in, nout));
    pm_param(in, out, "dtype_in_out", pm_v_tup(in, 2, pm_v_str(in, din), pm_v_str(in, dout)));
    if (has_type) pm_param(in, out, "reduce_type", pm_v_str(in, reduce_type(name)));

    int bi = din && *din ? pm_bpe(din) : 0;
    int bo = dout ? pm_bpe(dout) : bi;
    out->flops = nin;
    out->has_bytes = bi && bo;
    if (out->has_bytes) {
        pnum r = pn_mul(nin, PN_I(bi)), w = pn_mul(nout, PN_I(bo));
        out->bytes = in->mode == TL_PM_FWD ? pn_add(r, w) : pn_add(w, r);
    }
    out->maf = "vector";
    out->cs_dtype = din;
    return PM_OK;
}
