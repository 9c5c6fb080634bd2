/* triton.c — the perf model of Inductor-generated Triton kernels
 * (triton_poi_*, triton_red_*, triton_per_*), read from the trace alone: the
 * profiler (PyTorch >= 2.4) records a Triton launch as an op whose args hold
 * the kernel's pointer arguments (Input Dims / Input type) and its scalar
 * arguments (Concrete Inputs), the last of which are the element counts:
 *
 *   xnumel, rnumel  pointwise: the last integer scalar, 1;
 *                   reduction (red/per) with two or more: the last two;
 *   fused ops       the kernel name "triton_<kind>_fused_<ops>_<n>" with
 *                   <ops> segmented into ATen operator names (triton_ops.c),
 *                   the longest names winning;
 *   FLOPs           xnumel * rnumel * sum of the ops' FLOPs per element;
 *   bytes           sum over pointer args of prod(shape) * bytes per element
 *                   (c10 dtypes; unknown ones count 0), plus for a pointwise
 *                   kernel one more write of xnumel elements of the first
 *                   pointer's width;
 *   Compute Spec    "vector_<dtype>", dtype the first pointer arg with a
 *                   known width, lower-cased without "c10::" (as written,
 *                   not mapped to fp16/bf16: no roofline peak matches it).
 *
 * An event without those args has no model (tl_pm_resolve returns NULL), so
 * it does not stop the unified summary's walk; the reference's fallback to
 * the inductor cache applies only to such events, which it never models
 * either (docs/CONFORMANCE.md). No backward formulas. */
#include "query/perfmodel/pm_internal.h"

#include <string.h>

typedef struct triton_meta {
    int64_t xnumel, rnumel;
    const char *fused_ops; /* ", ".join("aten.<op>") */
    int64_t fpe;           /* FLOPs per element of the fused ops */
    double bytes;
    const char *dtype;     /* NULL: no pointer of known width */
} triton_meta;

static int starts(const char *s, const char *p) { return strncmp(s, p, strlen(p)) == 0; }

int tl_pm_triton_name(const char *name)
{
    return name && (starts(name, "triton_poi_") || starts(name, "triton_red_") || starts(name, "triton_per_"));
}

/* FLOPs per element of the ATen ops that commonly appear in fused kernels;
 * every other op counts 0 */
static int64_t flops_per_elem(const char *op)
{
    static const struct { const char *op; int f; } t[] = {
        {"add", 1}, {"sub", 1}, {"mul", 1}, {"div", 1}, {"pow", 2}, {"sqrt", 2}, {"rsqrt", 2},
        {"exp", 4}, {"log", 4}, {"sigmoid", 4}, {"tanh", 4}, {"relu", 1}, {"silu", 4}, {"gelu", 8},
        {"mean", 1}, {"sum", 1}, {"var", 2}, {"abs", 1}, {"neg", 1}, {"reciprocal", 2}, {"ne", 1},
        {"eq", 1}, {"lt", 1}, {"gt", 1},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (!strcmp(t[i].op, op)) return t[i].f;
    return 0;
}

/* The fused ops of "triton_{poi,red,per}_fused_<ops>_<digits>": <ops> split
 * at '_' into tokens, segmented into known operator names so that every
 * token is covered; walking back from the end, the longest name ending at
 * each point is taken. No segmentation (or another name form): no ops. */
static void fused_ops(tl_arena *a, const char *name, triton_meta *m)
{
    m->fused_ops = "";
    m->fpe = 0;
    if (!(starts(name, "triton_poi_fused_") || starts(name, "triton_red_fused_") ||
          starts(name, "triton_per_fused_")))
        return;
    const char *x = name + strlen("triton_poi_fused_");
    const char *us = strrchr(x, '_');
    if (!us || us == x || !us[1]) return;
    for (const char *p = us + 1; *p; p++)
        if (*p < '0' || *p > '9') return;
    size_t xn = (size_t)(us - x), nt = 1;
    for (size_t i = 0; i < xn; i++) nt += x[i] == '_';
    size_t *st = tl_arena_alloc(a, (nt + 1) * sizeof *st); /* token starts; st[nt] = xn + 1 */
    st[0] = 0;
    for (size_t i = 0, k = 1; i < xn; i++)
        if (x[i] == '_') st[k++] = i + 1;
    st[nt] = xn + 1;
    uint8_t *reach = tl_arena_zalloc(a, nt + 1);
    size_t *back = tl_arena_alloc(a, (nt + 1) * sizeof *back);
    char *cand = tl_arena_alloc(a, xn + 1);
    reach[0] = 1;
    for (size_t i = 1; i <= nt; i++) {
        for (size_t j = 0; j < i; j++) { /* smallest j first: the longest name */
            if (!reach[j]) continue;
            size_t len = st[i] - 1 - st[j];
            memcpy(cand, x + st[j], len);
            cand[len] = 0;
            if (pm_triton_known_op(cand)) {
                reach[i] = 1;
                back[i] = j;
                break;
            }
        }
    }
    if (!reach[nt]) return;
    size_t nops = 0, *ends = tl_arena_alloc(a, (nt + 1) * sizeof *ends);
    for (size_t pos = nt; pos > 0; pos = back[pos]) ends[nops++] = pos;
    tl_buf b = {0};
    for (size_t k = nops; k-- > 0;) {
        size_t i = ends[k], j = back[i], len = st[i] - 1 - st[j];
        memcpy(cand, x + st[j], len);
        cand[len] = 0;
        if (k + 1 < nops) tl_buf_puts(&b, ", ");
        tl_buf_puts(&b, "aten.");
        tl_buf_puts(&b, cand);
        m->fpe += flops_per_elem(cand);
    }
    m->fused_ops = tl_arena_strndup(a, b.p ? b.p : "", b.n);
    tl_buf_free(&b);
}

static int c10_bytes(const char *dt)
{
    static const struct { const char *t; int b; } t[] = {
        {"c10::BFloat16", 2}, {"c10::Half", 2}, {"c10::Float", 4}, {"c10::Double", 8},
        {"c10::Byte", 1}, {"c10::Char", 1}, {"c10::Int", 4}, {"c10::Long", 8},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (!strcmp(t[i].t, dt)) return t[i].b;
    return 0;
}

/* An integer scalar of Concrete Inputs as Python's int() reads it; 0 when
 * it is not one (skipped). */
static int scalar_int(const tl_pv *v, int64_t *out)
{
    if (!v) return 0;
    if (v->kind == TL_PV_STR) return v->u.s.n && pm_py_int_text(v->u.s.p, out) == 0;
    if (v->kind == TL_PV_INT && !v->u.i.big) { *out = v->u.i.v; return 1; }
    if (v->kind == TL_PV_BOOL) { *out = v->u.b; return 1; }
    if (v->kind == TL_PV_FLOAT && v->u.f > -9.2e18 && v->u.f < 9.2e18) { *out = (int64_t)v->u.f; return 1; }
    return 0;
}

/* prod(shape) of a list of ints; -1 when shape is not one (the reference
 * fails on it) */
static int shape_prod(const tl_pv *s, __int128 *out)
{
    if (!tl_pv_is_seq(s)) return -1;
    __int128 p = 1;
    for (size_t i = 0; i < s->u.seq.n; i++) {
        const tl_pv *d = s->u.seq.v[i];
        if (!d || d->kind != TL_PV_INT || d->u.i.big) return -1;
        p *= d->u.i.v;
    }
    *out = p;
    return 0;
}

/* The model's inputs from the parsed args; -1 when the args lack them. */
static int triton_meta_of(tl_arena *a, const char *name, const tl_pv *dims, const tl_pv *types,
                          const tl_pv *ci, triton_meta *m)
{
    memset(m, 0, sizeof *m);
    if (!tl_pv_truthy(ci) || !tl_pv_truthy(dims) || !tl_pv_truthy(types)) return -1;
    if (!tl_pv_is_seq(ci) || !tl_pv_is_seq(dims) || !tl_pv_is_seq(types)) return -1;
    int reduction = starts(name, "triton_red_") || starts(name, "triton_per_");
    int pointwise = starts(name, "triton_poi_");
    int64_t last = 0, prev = 0, v;
    size_t ns = 0;
    for (size_t i = 0; i < ci->u.seq.n; i++)
        if (scalar_int(ci->u.seq.v[i], &v)) { prev = last; last = v; ns++; }
    if (reduction && ns >= 2) { m->xnumel = prev; m->rnumel = last; }
    else if (ns) { m->xnumel = last; m->rnumel = 1; }
    else return -1;
    size_t n = dims->u.seq.n < types->u.seq.n ? dims->u.seq.n : types->u.seq.n;
    __int128 total = 0;
    int first_bpe = -1;
    for (size_t i = 0; i < n; i++) {
        const tl_pv *d = dims->u.seq.v[i], *t = types->u.seq.v[i];
        const char *dt = t && t->kind == TL_PV_STR ? t->u.s.p : NULL;
        if ((dt && !strcmp(dt, "Scalar")) || !tl_pv_truthy(d)) continue;
        int bpe = dt ? c10_bytes(dt) : 0;
        __int128 p;
        if (shape_prod(d, &p) != 0) return -1;
        total += p * bpe;
        if (first_bpe < 0) first_bpe = bpe;
        if (!m->dtype && bpe > 0) {
            const char *tail = strrchr(dt, ':');
            char *low = tl_arena_strdup(a, tail ? tail + 1 : dt);
            for (char *q = low; *q; q++)
                if (*q >= 'A' && *q <= 'Z') *q = (char)(*q - 'A' + 'a');
            m->dtype = low;
        }
    }
    m->bytes = (double)total;
    if (pointwise && first_bpe >= 0) m->bytes += (double)((__int128)first_bpe * m->xnumel);
    fused_ops(a, name, m);
    return 0;
}

static int parse_args(tl_arena *a, const tl_pm_args *in, const tl_pv **dims, const tl_pv **types,
                      const tl_pv **ci)
{
    tl_err err = {0};
    tl_pv *v[3] = {NULL, NULL, NULL};
    const char *txt[3] = {in->input_dims, in->input_type, in->concrete_inputs};
    for (int i = 0; i < 3; i++)
        if (txt[i] && tl_pv_parse(a, txt[i], strlen(txt[i]), &v[i], &err) != 0) return -1;
    *dims = v[0];
    *types = v[1];
    *ci = v[2];
    return 0;
}

static const tl_pm_op triton_op = {"triton_compiled", NULL, "triton", NULL, "triton_compiled", PM_TRITON, 0};

const tl_pm_op *tl_pm_resolve(const char *name, const tl_pm_args *args)
{
    const tl_pm_op *op = tl_pm_find(name);
    if (op || !tl_pm_triton_name(name) || !args) return op;
    tl_arena a;
    tl_arena_init(&a, 1 << 12);
    const tl_pv *dims, *types, *ci;
    triton_meta m;
    int ok = parse_args(&a, args, &dims, &types, &ci) == 0 && triton_meta_of(&a, name, dims, types, ci, &m) == 0;
    tl_arena_free(&a);
    return ok ? &triton_op : NULL;
}

int pm_triton(pm_in *in, pm_out *out)
{
    if (in->mode == TL_PM_BWD) return PM_NOTIMPL;
    const char *name = in->args->name ? in->args->name : "";
    triton_meta m;
    if (triton_meta_of(in->a, name, in->dims, in->types, in->ci, &m) != 0)
        pm_raise(in, "no Inductor kernel metadata in the trace args");
    __int128 fl = (__int128)m.fpe * m.xnumel * m.rnumel;
    out->flops = (pnum){0, 0, fl, 0};
    out->has_bytes = 1;
    out->bytes = PN_F(m.bytes);
    out->maf = "vector";
    out->cs_prec = m.dtype;
    pm_param(in, out, "fused_ops", pm_v_str(in, m.fused_ops));
    pm_param(in, out, "xnumel", pm_v_int(in, m.xnumel));
    pm_param(in, out, "rnumel", pm_v_int(in, m.rnumel));
    return PM_OK;
}
