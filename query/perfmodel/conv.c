/* conv.c — convolution models (perf-models.md §5.3): aten::convolution,
 * aten::convolution_backward and the apex ConvBias* ops. One parameter set
 * (input, filter, stride/padding/dilation, transposed) feeds the forward
 * formulas (conv_flops, conv_bytes) and the backward formulas (grad input +
 * grad weight). The
 * reference's quirks are kept: aten::convolution never counts its bias (it
 * has 9 args, the bias test wants 3), convolution_backward reports the
 * bias as the Dims[3] list itself, and the backward bytes add a bias element
 * count to a byte count. ConvBias*_Backward borrows its shapes from the
 * forward op with the same sequence number (tl_pm_ctx cache). */
#include "query/perfmodel/pm_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAXND 3

typedef struct convp {
    size_t nd;
    int64_t x[MAXND + 2], w[MAXND + 2], out[MAXND + 2];
    const tl_pv *xv, *wv;
    int64_t stride[MAXND], pad[MAXND], dil[MAXND], opad[MAXND];
    int transposed;
    int64_t groups;
    int bias;           /* truthiness used by the formulas */
    const tl_pv *biasv; /* the printed value (bool, or [] for convolution_backward) */
    const char *t0, *t1;
    const tl_pv *xs, *ws; /* strides, NULL = None */
} convp;

struct pm_convbias_entry {
    int64_t seq;
    char *dims, *types, *strides, *ci;
};

/* ---- ctx ------------------------------------------------------------------ */

tl_pm_ctx *tl_pm_ctx_new(void)
{
    tl_pm_ctx *c = tl_xcalloc(1, sizeof *c);
    tl_arena_init(&c->arena, 1 << 16);
    return c;
}

void tl_pm_ctx_free(tl_pm_ctx *c)
{
    if (!c) return;
    free(c->cb);
    tl_arena_free(&c->arena);
    free(c);
}

static char *dup_or_null(tl_arena *a, const char *s) { return s ? tl_arena_strdup(a, s) : NULL; }

static void cache_put(tl_pm_ctx *c, const tl_pm_args *a)
{
    if (c->ncb == c->capcb) {
        c->capcb = c->capcb ? c->capcb * 2 : 16;
        c->cb = tl_xrealloc(c->cb, c->capcb * sizeof *c->cb);
    }
    pm_convbias_entry *e = &c->cb[c->ncb++];
    e->seq = a->seq;
    e->dims = dup_or_null(&c->arena, a->input_dims);
    e->types = dup_or_null(&c->arena, a->input_type);
    e->strides = dup_or_null(&c->arena, a->input_strides);
    e->ci = dup_or_null(&c->arena, a->concrete_inputs);
}

static const pm_convbias_entry *cache_get(const tl_pm_ctx *c, int64_t seq)
{
    for (size_t i = c->ncb; i-- > 0;)
        if (c->cb[i].seq == seq) return &c->cb[i];
    return NULL;
}

/* ---- parsing ---------------------------------------------------------------- */

static void shape_into(pm_in *in, const tl_pv *s, int64_t *dst, size_t *n)
{
    size_t len = pm_len(in, s);
    if (len > MAXND + 2) pm_raise(in, "convolution rank too high");
    for (size_t i = 0; i < len; i++) dst[i] = pm_dim(in, s, (long)i);
    *n = len;
}

/* int-list of a CI entry; "" -> dflt; one element -> repeated nd times */
static void conv_list(pm_in *in, const char *s, int64_t *dst, size_t nd, int64_t dflt)
{
    if (!*s) {
        for (size_t i = 0; i < nd; i++) dst[i] = dflt;
        return;
    }
    int64_t v[16];
    size_t n = pm_int_list(in, s, v, 16);
    for (size_t i = 0; i < nd; i++) {
        if (n == 1) dst[i] = v[0];
        else if (i < n) dst[i] = v[i];
        else pm_raise(in, "convolution parameter list too short");
    }
}

static void common_shapes(pm_in *in, convp *p, long ix, long iw)
{
    size_t nx, nw;
    p->xv = pm_dims(in, ix);
    p->wv = pm_dims(in, iw);
    shape_into(in, p->xv, p->x, &nx);
    shape_into(in, p->wv, p->w, &nw);
    if (nx < 3 || nx > MAXND + 2) pm_raise(in, "convolution input rank must be 3..5");
    p->nd = nx - 2;
    if (nw < p->nd + 2) pm_raise(in, "convolution filter rank too low");
    p->t0 = pm_type(in, ix);
    p->t1 = pm_type(in, iw);
    if (strcmp(p->t0, p->t1) != 0) pm_raise(in, "convolution input/weight dtypes differ");
}

static void parse_aten(pm_in *in, convp *p, int bwd)
{
    long o = bwd ? 1 : 0; /* convolution_backward: Dims[0] is grad_output */
    common_shapes(in, p, o, o + 1);
    conv_list(in, pm_ci(in, 3 + o), p->stride, p->nd, 1);
    conv_list(in, pm_ci(in, 4 + o), p->pad, p->nd, 0);
    conv_list(in, pm_ci(in, 5 + o), p->dil, p->nd, 1);
    p->transposed = pm_py_bool(in, pm_ci(in, 6 + o));
    conv_list(in, pm_ci(in, 7 + o), p->opad, p->nd, 0);
    p->groups = pm_py_int(in, pm_ci(in, 8 + o));
    p->xs = pm_v_tuple(in, pm_stride(in, o));
    p->ws = pm_v_tuple(in, pm_stride(in, o + 1));
    if (!bwd) {
        p->bias = pm_ndims(in) == 3; /* never true for the 9-argument aten op */
        p->biasv = pm_v_bool(in, p->bias);
    } else if (pm_ndims(in) <= 3) {
        p->bias = 0;
        p->biasv = pm_v_bool(in, 0);
    } else {
        const tl_pv *b = pm_dims(in, 3);
        if (tl_pv_is_seq(b) && tl_pv_len(b) == 0) {
            p->bias = 0;
            p->biasv = b; /* printed as [] */
        } else if (tl_pv_is_seq(b)) {
            p->bias = 1;
            p->biasv = pm_v_bool(in, 1);
        } else {
            p->bias = tl_pv_truthy(b);
            p->biasv = b;
        }
    }
}

static void parse_convbias(pm_in *in, convp *p)
{
    common_shapes(in, p, 0, 1);
    const char *s = pm_ci_opt(in, 3), *q = pm_ci_opt(in, 4);
    int64_t sv = s && *s ? pm_py_int(in, s) : 1, pv = q && *q ? pm_py_int(in, q) : 0;
    for (size_t i = 0; i < p->nd; i++) {
        p->stride[i] = sv;
        p->pad[i] = pv;
        p->dil[i] = 1;
        p->opad[i] = 0;
    }
    p->transposed = 0;
    p->groups = 1;
    p->bias = 1;
    p->biasv = pm_v_bool(in, 1);
    p->xs = pm_v_tuple(in, pm_stride_opt(in, 0));
    p->ws = pm_v_tuple(in, pm_stride_opt(in, 1));
}

static void out_shape(pm_in *in, convp *p)
{
    p->out[0] = p->x[0];
    p->out[1] = p->transposed ? p->w[1] : p->w[0];
    for (size_t i = 0; i < p->nd; i++) {
        int64_t x = p->x[2 + i], k = p->w[2 + i], s = p->stride[i], pd = p->pad[i], dl = p->dil[i];
        if (p->transposed) {
            pnum o = pn_mul(PN_I(x - 1), PN_I(s));
            o = pn_sub(o, pn_mul(PN_I(2), PN_I(pd)));
            o = pn_add(o, pn_mul(PN_I(dl), PN_I(k - 1)));
            o = pn_add(pn_add(o, PN_I(p->opad[i])), PN_I(1));
            if (o.bad) pm_raise(in, "convolution output overflow");
            p->out[2 + i] = (int64_t)o.i;
        } else {
            if (s == 0) pm_raise(in, "convolution stride 0");
            pnum num = pn_sub(pn_sub(pn_add(PN_I(x), pn_mul(PN_I(2), PN_I(pd))), pn_mul(PN_I(dl), PN_I(k - 1))), PN_I(1));
            double v = pn_d(num) / (double)s + 1.0; /* true division, then int() */
            if (!(fabs(v) < 9.2e18)) pm_raise(in, "convolution output out of range");
            p->out[2 + i] = (int64_t)v;
        }
    }
}

/* ---- formulas ------------------------------------------------------------------ */

static pnum prod_from(const int64_t *s, size_t n, size_t from)
{
    pnum p = PN_I(1);
    for (size_t i = from; i < n; i++) p = pn_mul(p, PN_I(s[i]));
    return p;
}

/* d = s with the first two dims (batch, channels) swapped. */
static void swap_first_two(const int64_t *s, int64_t *d, size_t n)
{
    memcpy(d, s, n * sizeof *s);
    d[0] = s[1];
    d[1] = s[0];
}

/* One shape of the formulas: its dims and rank (each shape may have its own). */
typedef struct shape {
    const int64_t *d;
    size_t n;
} shape;

static shape shape_of(const int64_t *d, size_t n) { return (shape){d, n}; }

/* FLOPs of §5.3: two per output element (per input element when
 * transposed) and filter element past the filter's first dim, plus one bias
 * add per output element. */
static pnum conv_flops(shape x, shape w, shape out, int bias, int transposed)
{
    pnum per_out = transposed ? prod_from(x.d, x.n, 0) : prod_from(out.d, out.n, 0);
    pnum f = pn_mul(pn_mul(per_out, PN_I(2)), prod_from(w.d, w.n, 1));
    return pn_add(f, bias ? prod_from(out.d, out.n, 0) : PN_I(0));
}

/* Bytes of §5.3: input, filter and output read or written once, plus one
 * bias value per output channel, each bpe bytes. */
static pnum conv_bytes(shape x, shape w, shape out, int bias, int bpe)
{
    pnum s = pn_add(prod_from(x.d, x.n, 0), prod_from(w.d, w.n, 0));
    s = pn_add(s, bias && out.n > 1 ? PN_I(out.d[1]) : PN_I(0));
    s = pn_add(s, prod_from(out.d, out.n, 0));
    return pn_mul(s, PN_I(bpe));
}

/* Forward: conv_flops / conv_bytes. Backward: grad input (the transposed
 * direction) plus grad weight (input and grad output with batch and channel
 * swapped), plus the bias gradient. */
static void conv_numbers(const convp *p, int bwd, pm_out *out)
{
    size_t n = p->nd + 2;
    int e = pm_bpe(p->t0);
    shape x = shape_of(p->x, n), w = shape_of(p->w, n), o = shape_of(p->out, n);
    if (!bwd) {
        out->flops = conv_flops(x, w, o, p->bias, p->transposed);
        out->has_bytes = e != 0;
        if (e) out->bytes = conv_bytes(x, w, o, p->bias, e);
        return;
    }
    int64_t tx[MAXND + 2], tw[MAXND + 2], to[MAXND + 2];
    swap_first_two(p->x, tx, n);
    swap_first_two(p->w, tw, n);
    swap_first_two(p->out, to, n);
    shape sx = shape_of(tx, n), sw = shape_of(tw, n), so = shape_of(to, n);
    pnum f = conv_flops(o, w, x, 0, !p->transposed);
    f = pn_add(f, p->transposed ? conv_flops(so, sx, sw, 0, 0) : conv_flops(sx, so, sw, 0, 0));
    f = pn_add(f, p->bias ? prod_from(p->out, n, 0) : PN_I(0));
    out->flops = f;
    out->has_bytes = e != 0;
    if (e) {
        pnum b = pn_add(conv_bytes(o, w, x, 0, e), conv_bytes(o, x, w, 0, e));
        /* the reference adds an element count to a byte count here */
        b = pn_add(b, p->bias ? pn_add(prod_from(p->out, n, 0), PN_I(p->out[1])) : PN_I(0));
        out->bytes = b;
    }
}

void tl_pm_conv_counts(const int64_t *x, size_t nx, const int64_t *w, size_t nw, const int64_t *out, size_t nout,
                       int bias, int bpe, tl_pm_counts *c)
{
    shape sx = shape_of(x, nx), sw = shape_of(w, nw), so = shape_of(out, nout);
    c->flops = pn_d(conv_flops(sx, sw, so, bias, 0));
    c->has_bytes = bpe != 0;
    c->bytes = bpe ? pn_d(conv_bytes(sx, sw, so, bias, bpe)) : 0;
}

static tl_pv *ints_tuple(pm_in *in, const int64_t *v, size_t n) { return pm_v_ints(in, TL_PV_TUPLE, v, n); }

static void conv_params(pm_in *in, pm_out *out, const convp *p)
{
    static const char *nds[] = {"", "conv1d", "conv2d", "conv3d"};
    pm_param(in, out, "convNd", pm_v_str(in, nds[p->nd]));
    pm_param(in, out, "input_shape", pm_v_tuple(in, p->xv));
    pm_param(in, out, "filter_shape", pm_v_tuple(in, p->wv));
    pm_param(in, out, "dtype_input_weight", pm_v_tup(in, 2, pm_v_str(in, p->t0), pm_v_str(in, p->t1)));
    pm_param(in, out, "input_stride", p->xs);
    pm_param(in, out, "weight_stride", p->ws);
    pm_param(in, out, "bias", p->biasv);
    pm_param(in, out, "stride", ints_tuple(in, p->stride, p->nd));
    pm_param(in, out, "padding", ints_tuple(in, p->pad, p->nd));
    pm_param(in, out, "dilation", ints_tuple(in, p->dil, p->nd));
    pm_param(in, out, "transposed_conv", pm_v_bool(in, p->transposed));
    pm_param(in, out, "output_padding", ints_tuple(in, p->opad, p->nd));
    pm_param(in, out, "groups", pm_v_int(in, p->groups));
}

static const tl_pv *parse_text(pm_in *in, const char *s)
{
    if (!s) return NULL;
    tl_pv *v;
    tl_err e;
    if (tl_pv_parse(in->a, s, strlen(s), &v, &e) != 0) pm_raise(in, "cached ConvBias args unreadable");
    return v;
}

int pm_conv(pm_in *in, pm_out *out)
{
    convp p;
    memset(&p, 0, sizeof p);
    int bwd_formulas;
    switch (in->id) {
    case PM_CONV_FWD:
        parse_aten(in, &p, 0);
        bwd_formulas = in->mode == TL_PM_BWD;
        break;
    case PM_CONV_BWD:
        if (in->mode == TL_PM_BWD) return PM_NOTIMPL;
        parse_aten(in, &p, 1);
        bwd_formulas = 1;
        break;
    case PM_CONVBIAS_FWD:
        parse_convbias(in, &p);
        if (in->ctx && in->args->has_seq) cache_put(in->ctx, in->args);
        bwd_formulas = in->mode == TL_PM_BWD;
        break;
    case PM_CONVBIAS_BWD: {
        if (in->mode == TL_PM_BWD) return PM_NOTIMPL;
        const pm_convbias_entry *e = in->ctx && in->args->has_seq ? cache_get(in->ctx, in->args->seq) : NULL;
        if (!e) pm_raise(in, "no forward ConvBias with this sequence number");
        in->dims = parse_text(in, e->dims);
        in->types = parse_text(in, e->types);
        in->strides = parse_text(in, e->strides);
        in->ci = parse_text(in, e->ci);
        parse_convbias(in, &p);
        bwd_formulas = 1;
        break;
    }
    default:
        pm_raise(in, "unknown convolution model");
    }
    out_shape(in, &p);
    conv_params(in, out, &p);
    conv_numbers(&p, bwd_formulas, out);
    out->maf = "matrix";
    out->cs_dtype = p.t0;
    return PM_OK;
}
