/* unified.c — the unified_perf_summary sheet of the PyTorch report
 * (spec pytorch-report.md §9.5): one row per unique-args group of the ops
 * that best describe the GPU work — ops with a perf model, sole backward ops
 * of modelled forward ops, leaf kernel launchers — plus synthetic ops for
 * kernels none of those cover, so that the sheet's kernel time accounts for
 * every non-communication kernel. The collection walk, the synthetic-op
 * naming and categorisation (including the reference's kernel_details
 * quirk) follow §9.5.1-§9.5.2; perf metrics come from query/perfmodel/perfmodel.h. */
#include "query/pytorch/pytorch_internal.h"
#include "query/core/stats.h"
#include "query/perfmodel/perfmodel.h"
#include "query/pytorch/plugin.h"

#include <stdlib.h>

/* A row's perf metrics as they print. */
typedef struct umetrics {
    double gflops, data_mb, fpb, tbs, tflops;
    const char *cspec;
    int roof_valid;
    double rtime, rpct;
    const char *rbound;
    const char *params_text; /* plugin models: perf_params */
} umetrics;

/* One collected op. The metrics of a built-in model are not kept: they
 * follow from the (shared) model result and the row's kernel time, and are
 * derived again where the summary reads them (row_metrics); a plugin
 * model's, set for few rows if any, are kept aside (plug). */
typedef struct urow {
    int32_t src;            /* the event (synthetic: its parent) */
    uint32_t ng;
    int64_t uid;
    const char *name, *cat;
    int32_t *g;             /* gpu_events, reference order */
    double dur, ktime;
    struct evalent *params;  /* built-in model result: metrics and perf_params */
    const umetrics *plug;    /* plugin model's metrics, or NULL */
    int8_t has_pm, has_metrics, roof_valid, rec;
} urow;

/* uctx.flag bits: visited by the collection; some cpu_op strictly below
 * has its own model and GPU work; own model (2 bits: 0 not decided, 1 no,
 * 2 yes); sole backward op (2 bits, likewise); covered by a collected
 * event's subtree; a GPU event lies strictly below */
enum {
    UF_VISITED = 1, UF_DESC_PM = 2, UF_OWN_SHIFT = 2, UF_SOLE_SHIFT = 4, UF_COVERED = 64, UF_GPU_BELOW = 128,
};

typedef struct uctx {
    pyt_ctx *c;
    tl_arena a;
    uint8_t *flag;          /* per event: the UF_* bits below */
    tl_imap sole_fwd;       /* sole backward op -> its forward op */
    TL_VEC(int32_t) collected;
    tl_pm_ctx *pm;
    /* cache of forward ops' backward metrics (sole backward ops) */
    tl_imap bwd_cached;     /* forward op -> 0 failed, else 1 + index (absent: not computed) */
    TL_VEC(tl_pm_metrics) bwd_m;
    TL_VEC(struct evalent *) bwd_ents;
    /* model evaluations by (op, mode, arg texts, kernel names): instances
     * with equal args evaluate once */
    tl_bmap evmap;
    TL_VEC(struct evalent *) ev;
} uctx;

typedef struct evalent {
    const void **key;       /* the full key (the map holds its hash) */
    size_t keyn;
    int rc;
    tl_pm_result r;
    const char *params;     /* rendered lazily */
    int params_done;
} evalent;

/* ---- per-event predicates ---------------------------------------------------- */

static const tl_pm_op *pm_op(uctx *u, int32_t row)
{
    return pyt_pm_op(u->c, row);
}

/* The event's model as the walk sees it: the registry's, else the Inductor
 * Triton model when the event's args carry the kernel's metadata. */
static const tl_pm_op *model_op(uctx *u, int32_t row)
{
    const tl_pm_op *op = pm_op(u, row);
    if (op || !tl_pm_triton_name(pyt_name(u->c, row))) return op;
    tl_pm_fields f;
    pyt_pm_fields(u->c, pyt_pm_instance(u->c, row), &f);
    tl_pm_args args = {
        .name = f.name,
        .input_dims = f.input_dims,
        .input_type = f.input_type,
        .concrete_inputs = f.concrete_inputs,
    };
    return tl_pm_resolve(f.name, &args);
}

/* Own perf model: model_op or a plugin model. */
static int own_pm(uctx *u, int32_t row)
{
    uint8_t *f = &u->flag[row];
    if (!((*f >> UF_OWN_SHIFT) & 3)) {
        const char *nm = pyt_name(u->c, row);
        int has = model_op(u, row) != NULL ||
                  (u->c->o->plugins && tl_plugin_perf_model_for(u->c->o->plugins, nm) != NULL);
        *f |= (uint8_t)((has ? 2 : 1) << UF_OWN_SHIFT);
    }
    return ((*f >> UF_OWN_SHIFT) & 3) == 2;
}

/* §9.5.1 step 6: a kernel/memcpy/memset reachable through cuda_runtime or
 * python_function nodes only, at most 10 levels down. */
static int leaf_reach(const pyt_ctx *c, int32_t e, int depth)
{
    if (depth > 10) return 0;
    for (uint32_t q = pyt_child_first(c, e); q < c->end[e]; q = pyt_child_next(c, q)) {
        int32_t ch = c->order[q];
        int kind = c->t->kind[ch];
        if (tl_kind_is_gpu(kind)) return 1;
        if ((kind == TL_K_RUNTIME || kind == TL_K_PYTHON) && leaf_reach(c, ch, depth + 1)) return 1;
    }
    return 0;
}

static int launches_comm(uctx *u, int32_t row)
{
    pyt_ctx *c = u->c;
    for (uint32_t q = c->pos[row] + 1; q < c->end[row]; q++) {
        int32_t x = c->order[q];
        if (c->gclass[x] && pyt_row_is_comm(c, x)) return 1;
    }
    return 0;
}

/* A model result's rates over kernel time t (tl_pm_metrics_rates). */
static void metrics_rates(const pyt_ctx *c, const tl_pm_result *r, double t, tl_pm_metrics *m)
{
    m->r = *r;
    tl_pm_metrics_rates(c->o->arch, t, m);
}

/* tl_pm_metrics_eval with the model evaluation shared between instances
 * that give the model identical inputs (args texts are interned dictionary
 * strings, kernel names too, so pointers identify them). ConvBias models
 * read a cross-instance cache and are never shared. */
static int metrics_cached(uctx *u, const tl_pm_op *op, const tl_pm_instance *in, tl_pm_mode mode,
                          tl_pm_metrics *m, evalent **entp)
{
    pyt_ctx *c = u->c;
    memset(m, 0, sizeof *m);
    *entp = NULL;
    if (mode == TL_PM_BWD && !in->has_bwd_events) return TL_ENOTFOUND;
    tl_pm_kset ks = tl_pm_kset_of(in, mode);
    tl_pm_fields f;
    pyt_pm_fields(c, in, &f);
    tl_pm_args args;
    tl_pm_args_of(&f, in, &args);
    evalent *e = NULL;
    int shareable = strncmp(op->name, "ConvBias", 8) != 0;
    size_t keyn = 10 + in->nfwd;
    const void **key = NULL;
    if (shareable) {
        key = tl_xcalloc(keyn, sizeof *key);
        key[0] = op;
        key[1] = (const void *)(uintptr_t)(mode + 1);
        key[2] = args.input_dims;
        key[3] = args.input_type;
        key[4] = args.input_strides;
        key[5] = args.concrete_inputs;
        key[6] = args.output_type ? pyt_intern(c, args.output_type) : NULL;
        key[7] = (const void *)(uintptr_t)in->nfwd;
        key[8] = args.name; /* pattern-matched models read the event's name */
        key[9] = args.annotation;
        for (size_t i = 0; i < in->nfwd; i++) key[10 + i] = pyt_name(c, in->k[i]);
        /* variable-length key: hash it into the fixed map key, verify below */
        struct { uint64_t h; size_t n; } hk = {tl_hash64(key, keyn * sizeof *key, 7), keyn};
        int isnew;
        size_t *slot = tl_bmap_put(&u->evmap, &hk, &isnew);
        if (!isnew) {
            e = u->ev.v[*slot];
            if (e->keyn != keyn || memcmp(e->key, key, keyn * sizeof *key)) e = NULL; /* collision */
        } else {
            e = tl_arena_zalloc(&u->a, sizeof *e);
            e->rc = 1; /* not evaluated */
            e->key = tl_arena_alloc(&u->a, keyn * sizeof *key);
            memcpy(e->key, key, keyn * sizeof *key);
            e->keyn = keyn;
            tl_vec_push(&u->ev, e);
            *slot = u->ev.n - 1;
        }
    }
    if (!e || e->rc == 1) {
        const char **names = tl_arena_alloc(&u->a, (in->nfwd ? in->nfwd : 1) * sizeof *names);
        for (size_t i = 0; i < in->nfwd; i++) names[i] = pyt_name(c, in->k[i]);
        args.kernel_names = names;
        args.nkernels = in->nfwd;
        if (!e) e = tl_arena_zalloc(&u->a, sizeof *e);
        tl_err err = {0};
        e->rc = tl_pm_eval(op, &args, mode, u->pm, &u->a, &e->r, &err);
    }
    free(key);
    *entp = e;
    if (e->rc) return e->rc;
    m->kernel_time_is_int = ks.n == 0;
    m->num_kernels = ks.n;
    metrics_rates(c, &e->r, ks.n ? ks.time_us : 0.0, m);
    return 0;
}

/* The forward op's backward metrics (cached per forward op). */
static int fwd_bwd_metrics(uctx *u, int32_t f, const tl_pm_metrics **out, evalent **ent)
{
    pyt_ctx *c = u->c;
    int isnew;
    size_t *slot = tl_imap_put(&u->bwd_cached, (uint64_t)f, &isnew);
    if (isnew) {
        const tl_pm_op *op = pyt_pm_op(c, f);
        if (op) {
            const tl_pm_instance *in = pyt_pm_instance(c, f);
            tl_pm_metrics m;
            evalent *e;
            if (metrics_cached(u, op, in, TL_PM_BWD, &m, &e) == 0) {
                tl_vec_push(&u->bwd_m, m);
                tl_vec_push(&u->bwd_ents, e);
                *slot = u->bwd_m.n;
            }
        }
    }
    if (*slot > 0) {
        *out = &u->bwd_m.v[*slot - 1];
        if (ent) *ent = u->bwd_ents.v[*slot - 1];
        return 1;
    }
    return 0;
}

static size_t count_main(uctx *u, int32_t w, const char *main)
{
    pyt_ctx *c = u->c;
    size_t n = 0;
    for (uint32_t q = pyt_child_first(c, w); q < c->end[w]; q = pyt_child_next(c, q)) {
        int32_t ch = c->order[q];
        if (c->t->kind[ch] != TL_K_CPU_OP) continue;
        if ((u->flag[ch] & UF_GPU_BELOW) && (!main || !strcmp(pyt_name(c, ch), main))) n++;
        n += count_main(u, ch, main);
    }
    return n;
}

/* §9.5.1 "sole backward op" */
static int sole_bwd(uctx *u, int32_t e)
{
    int st = (u->flag[e] >> UF_SOLE_SHIFT) & 3;
    if (st) return st == 2;
    u->flag[e] |= 1 << UF_SOLE_SHIFT;
    pyt_ctx *c = u->c;
    int32_t w = -1, a = c->parent[e];
    for (int i = 0; i < 5 && a >= 0; i++, a = c->parent[a])
        if (pyt_fwd_of(c, a) >= 0) { w = a; break; }
    if (w < 0) return 0;
    int32_t f = pyt_fwd_of(c, w);
    const tl_pm_op *op = pyt_pm_op(c, f);
    if (!op || !op->bwd_category) return 0;
    const char *wn = pyt_name(c, w), *sep = strstr(wn, ": ");
    const char *main = sep ? sep + 2 : NULL;
    if (count_main(u, w, main) != 1) return 0;
    const tl_pm_metrics *m;
    if (!fwd_bwd_metrics(u, f, &m, NULL)) return 0;
    u->flag[e] ^= 3 << UF_SOLE_SHIFT; /* 1 -> 2 */
    *tl_imap_put(&u->sole_fwd, (uint64_t)e, NULL) = (size_t)f;
    return 1;
}

/* ---- collection (§9.5.1) ------------------------------------------------------ */

static void visit(uctx *u, int32_t e)
{
    pyt_ctx *c = u->c;
    if (u->flag[e] & UF_VISITED) return;
    u->flag[e] |= UF_VISITED;
    int kind = c->t->kind[e];
    if (!c->python && kind != TL_K_CPU_OP) return;
    if (!(u->flag[e] & UF_GPU_BELOW) || c->gclass[e]) return;
    if (own_pm(u, e)) { tl_vec_push(&u->collected, e); return; }
    if (sole_bwd(u, e)) {
        if (u->flag[e] & UF_DESC_PM) goto children;
        tl_vec_push(&u->collected, e);
        return;
    }
    if (u->flag[e] & UF_DESC_PM) goto children;
    if (kind == TL_K_CPU_OP && leaf_reach(c, e, 1)) {
        if (!launches_comm(u, e)) tl_vec_push(&u->collected, e);
        return;
    }
children:
    for (uint32_t q = pyt_child_first(c, e); q < c->end[e]; q = pyt_child_next(c, q)) visit(u, c->order[q]);
}

/* ---- rows (§9.5.2, §9.5.3) ------------------------------------------------------ */

/* kernel_details[0] stored on an event by the earlier stages (§6 note):
 * perf-model ops carry their (last computed) perf-sheet kernel set,
 * launchers their direct kernels, others nothing. */
static int32_t stored_first_kernel(uctx *u, int32_t row, const pyt_rowmap *lidx)
{
    pyt_ctx *c = u->c;
    const tl_pm_op *op = pm_op(u, row);
    if (op) {
        int32_t *rows = NULL;
        size_t n = 0, cap = 0;
        pyt_subtree_gpu(c, row, &rows, &n, &cap);
        int32_t best = -1;
        if (!(op->flags & TL_PM_SINGLE) && pyt_bwd_of(c, row) >= 0) {
            /* backward set: subtrees of the backward events below row */
            n = 0;
            int32_t *tmp = NULL;
            size_t tn = 0, tcap = 0;
            for (uint32_t q = c->pos[row]; q < c->end[row]; q++) {
                int32_t b = pyt_bwd_of(c, c->order[q]);
                if (b < 0) continue;
                pyt_subtree_gpu(c, b, &tmp, &tn, &tcap);
                for (size_t i = 0; i < tn; i++)
                    if (best < 0 || pyt_ts(c, tmp[i]) < pyt_ts(c, best) ||
                        (pyt_ts(c, tmp[i]) == pyt_ts(c, best) && tmp[i] < best))
                        best = tmp[i];
            }
            free(tmp);
        } else {
            for (size_t i = 0; i < n; i++)
                if (best < 0 || pyt_ts(c, rows[i]) < pyt_ts(c, best) ||
                    (pyt_ts(c, rows[i]) == pyt_ts(c, best) && rows[i] < best))
                    best = rows[i];
        }
        free(rows);
        return best;
    }
    int32_t j = pyt_link_find(lidx->v, lidx->n, row);
    return j >= 0 ? c->l_first[j] : -1;
}

/* A built-in model's result for row r: what the summary derives the
 * metrics from (row_metrics). */
static void set_metrics(urow *r, const tl_pm_metrics *m, evalent *ent)
{
    r->has_metrics = 1;
    r->ktime = m->kernel_time_us;
    r->roof_valid = (int8_t)m->roof.valid;
    r->params = ent;
}

/* The metrics of a row with has_metrics. */
static void row_metrics(const pyt_ctx *c, const urow *r, umetrics *out)
{
    if (r->plug) {
        *out = *r->plug;
        return;
    }
    tl_pm_metrics m;
    metrics_rates(c, &r->params->r, r->ktime, &m);
    out->gflops = m.r.gflops;
    out->data_mb = m.r.data_moved_mb;
    out->fpb = m.r.flops_per_byte;
    out->tbs = m.tb_s;
    out->tflops = m.tflops_s;
    out->cspec = m.r.compute_spec ? m.r.compute_spec : "";
    out->roof_valid = m.roof.valid;
    out->rtime = m.roof.time_us;
    out->rpct = m.roof.pct;
    out->rbound = m.roof.bound;
    out->params_text = NULL;
}

/* perf_params text of a model result, rendered once per distinct result
 * and only for rows that show it */
static const char *params_text(tl_arena *a, evalent *e)
{
    if (!e || e->rc) return NULL;
    if (!e->params_done) {
        e->params_done = 1;
        if (e->r.nparams) {
            tl_buf b = {0};
            tl_pm_params_repr(&b, &e->r);
            e->params = tl_arena_strndup(a, b.p ? b.p : "", b.n);
            tl_buf_free(&b);
        }
    }
    return e->params;
}

/* Returns 0 to keep the row, -1 to drop it ("not implemented"). */
static int build_row(uctx *u, urow *r, int32_t e, const pyt_rowmap *lidx)
{
    pyt_ctx *c = u->c;
    memset(r, 0, sizeof *r);
    r->src = e;
    r->uid = c->t->uid[e];
    r->name = pyt_name(c, e);
    r->dur = pyt_is_pseudo_op(c, e) ? NAN : pyt_dur(c, e);
    r->rec = (int8_t)(c->recompute ? c->recompute[e] : -1);
    int32_t *g = NULL;
    size_t ng = 0, cap = 0;
    pyt_gpu_events(c, e, &g, &ng, &cap);
    r->g = tl_arena_alloc(&u->a, (ng ? ng : 1) * sizeof *r->g);
    memcpy(r->g, g, ng * sizeof *g);
    r->ng = (uint32_t)ng;
    free(g);
    r->cat = pyt_category(c, e, stored_first_kernel(u, e, lidx));
    r->ktime = NAN;
    if (own_pm(u, e)) {
        r->has_pm = 1;
        const tl_pm_op *op = model_op(u, e);
        const tl_plugin_perf_model *ppm =
            c->o->plugins ? tl_plugin_perf_model_for(c->o->plugins, r->name) : NULL;
        if (ppm) {
            /* a plugin model overrides a built-in one of the same name */
            pyt_plugin_metrics pm;
            if (pyt_plugin_eval(c, ppm, e, &pm) == 0) {
                umetrics *x = tl_arena_zalloc(&u->a, sizeof *x);
                x->gflops = pm.gflops;
                x->data_mb = pm.data_mb;
                x->fpb = pm.fpb;
                x->tbs = pm.tbs;
                x->tflops = pm.tflops;
                x->cspec = pm.cspec;
                x->params_text = pm.params_text;
                r->has_metrics = 1;
                r->ktime = pm.ktime;
                r->plug = x;
                return 0;
            }
        } else if (op) {
            const tl_pm_instance *in = pyt_pm_instance(c, e);
            tl_pm_metrics m;
            evalent *ent;
            int rc = metrics_cached(u, op, in, TL_PM_FWD, &m, &ent);
            if (rc == TL_EUNSUPPORTED) return -1;
            if (rc == 0) {
                set_metrics(r, &m, ent);
                return 0;
            }
        }
    } else if (sole_bwd(u, e)) {
        r->has_pm = 1;
        int32_t f = (int32_t)*tl_imap_get(&u->sole_fwd, (uint64_t)e);
        const tl_pm_op *op = pyt_pm_op(c, f);
        if (op && op->bwd_category) r->cat = op->bwd_category;
        const tl_pm_metrics *m;
        evalent *ent;
        if (fwd_bwd_metrics(u, f, &m, &ent)) {
            set_metrics(r, m, ent);
            return 0;
        }
    }
    r->ktime = pyt_busy(c, r->g, r->ng);
    return 0;
}

/* ---- summary (§9.5.4) -------------------------------------------------------------- */

typedef struct ugrp {
    TL_VEC(uint32_t) m;     /* its rows, in row order */
    double ksum;
    int64_t ex_uid;
    const char *ov_names;       /* _kl_overlap */
    double base_total;
    int64_t base_min_uid;
} ugrp;

/* per thread: the corpus workbook runs reports of several ranks at once */
static _Thread_local ugrp *g_sort;
static int cmp_ugrp(const void *a, const void *b)
{
    const ugrp *x = &g_sort[*(const size_t *)a], *y = &g_sort[*(const size_t *)b];
    if (x->ksum > y->ksum) return -1;
    if (x->ksum < y->ksum) return 1;
    if (x->ex_uid != y->ex_uid) return x->ex_uid < y->ex_uid ? -1 : 1;
    return *(const size_t *)a < *(const size_t *)b ? -1 : 1;
}

static void stat_cols(tl_table *t, const char *base, const char *const *which, size_t n, size_t *cols)
{
    char nm[128];
    for (size_t i = 0; i < n; i++) {
        snprintf(nm, sizeof nm, "%s_%s", base, which[i]);
        cols[i] = tl_table_add_col(t, nm, TL_F64);
    }
}

static double stat_pick(const pyt_stats *s, const char *w)
{
    if (!strcmp(w, "mean")) return s->mean;
    if (!strcmp(w, "median")) return s->median;
    if (!strcmp(w, "std")) return s->std;
    if (!strcmp(w, "min")) return s->min;
    if (!strcmp(w, "max")) return s->max;
    return s->sum;
}

static int cmp_ugrp_kl(const void *a, const void *b)
{
    const ugrp *x = &g_sort[*(const size_t *)a], *y = &g_sort[*(const size_t *)b];
    if (x->base_total != y->base_total) return x->base_total > y->base_total ? -1 : 1;
    if (x->base_min_uid != y->base_min_uid) return x->base_min_uid < y->base_min_uid ? -1 : 1;
    if (x->ov_names != y->ov_names) {
        if (!x->ov_names || !y->ov_names) return x->ov_names ? -1 : 1;
        int r = strcmp(x->ov_names, y->ov_names);
        if (r) return r;
    }
    if (x->ksum != y->ksum) return x->ksum > y->ksum ? -1 : 1;
    if (x->ex_uid != y->ex_uid) return x->ex_uid < y->ex_uid ? -1 : 1;
    return *(const size_t *)a < *(const size_t *)b ? -1 : 1;
}

/* The columns of unified_perf_summary(_kl_overlap), by what they hold. */
typedef struct ucols {
    size_t cn, ccat, cpn, cpl, ctn, cd, cty, cst, cci, cex, ccount, ctot, cmean, cstd;
    long cov, crec, cgf, cdm, cfb, ccs, crb, cep, cstk;
    size_t ctb1[2], ctf1[2], ck1[3], cdur[3], ctb2[3], ctf2[3], ck2[3], crt, crp[5];
    size_t cks, ctr, cos, cot, cop[5], cpp, chp;
} ucols;

static const char *const MS[] = {"mean", "std"};
static const char *const REST[] = {"median", "min", "max"};
static const char *const ALL5[] = {"mean", "median", "std", "min", "max"};
static const char *const KMS[] = {"mean", "std", "sum"};

/* Adds the sheet's columns (metrics ones when any row has metrics, the
 * roofline ones when any has a roofline) and says where they are. */
static void add_columns(tl_table *tab, const pyt_ctx *c, int ovf, int any_metrics, int any_roof, ucols *K)
{
    memset(K, 0, sizeof *K);
    K->cn = tl_table_add_col(tab, "name", TL_STR);
    K->cov = ovf ? (long)tl_table_add_col(tab, "overlapping_kernel_names", TL_STR) : -1;
    K->ccat = tl_table_add_col(tab, "op category", TL_STR);
    K->cpn = tl_table_add_col(tab, "process_name", TL_STR);
    K->cpl = tl_table_add_col(tab, "process_label", TL_STR);
    K->ctn = tl_table_add_col(tab, "thread_name", TL_STR);
    K->cd = tl_table_add_col(tab, "Input Dims", TL_STR);
    K->cty = tl_table_add_col(tab, "Input type", TL_STR);
    K->cst = tl_table_add_col(tab, "Input Strides", TL_STR);
    K->cci = tl_table_add_col(tab, "Concrete Inputs", TL_STR);
    K->crec = c->recompute ? (long)tl_table_add_col(tab, "is_recompute", TL_BOOL) : -1;
    K->cex = tl_table_add_col(tab, "ex_UID", TL_I64);
    K->ccount = tl_table_add_col(tab, "operation_count", TL_I64);
    K->ctot = tl_table_add_col(tab, "total_duration_us", TL_F64);
    K->cmean = tl_table_add_col(tab, "mean_duration_us", TL_F64);
    K->cstd = tl_table_add_col(tab, "std_duration_us", TL_F64);
    K->cgf = K->cdm = K->cfb = K->ccs = K->crb = -1;
    if (any_metrics) {
        K->cgf = (long)tl_table_add_col(tab, "GFLOPS", TL_F64);
        K->cdm = (long)tl_table_add_col(tab, "Data Moved (MB)", TL_F64);
        K->cfb = (long)tl_table_add_col(tab, "FLOPS/Byte", TL_F64);
        K->ccs = (long)tl_table_add_col(tab, "Compute Spec", TL_STR);
        if (any_roof) K->crb = (long)tl_table_add_col(tab, "Roofline Bound", TL_STR);
        stat_cols(tab, "TB/s", MS, 2, K->ctb1);
        stat_cols(tab, "TFLOPS/s", MS, 2, K->ctf1);
    }
    stat_cols(tab, "Kernel Time (µs)", KMS, 3, K->ck1);
    stat_cols(tab, "duration_us", REST, 3, K->cdur);
    if (any_metrics) {
        stat_cols(tab, "TB/s", REST, 3, K->ctb2);
        stat_cols(tab, "TFLOPS/s", REST, 3, K->ctf2);
        if (any_roof) {
            K->crt = tl_table_add_col(tab, "Roofline Time (µs)_first", TL_F64);
            stat_cols(tab, "Pct Roofline", ALL5, 5, K->crp);
        }
    }
    stat_cols(tab, "Kernel Time (µs)", REST, 3, K->ck2);
    K->cks = tl_table_add_col(tab, "kernel_details_summary", TL_STR);
    K->ctr = tl_table_add_col(tab, "trunc_kernel_details", TL_STR);
    if (ovf) {
        K->cos = tl_table_add_col(tab, "overlapping_kernels_details_summary", TL_STR);
        K->cot = tl_table_add_col(tab, "trunc_overlapping_kernels_details", TL_STR);
        stat_cols(tab, "overlap_pct", ALL5, 5, K->cop);
    }
    K->cpp = tl_table_add_col(tab, "perf_params", TL_STR);
    K->chp = tl_table_add_col(tab, "has_perf_model", TL_BOOL);
    K->cep = K->cstk = -1;
    if (c->o->include_call_stack) {
        K->cep = (long)tl_table_add_col(tab, "entry_point", TL_STR);
        K->cstk = (long)tl_table_add_col(tab, "call_stack_full", TL_STR);
    }
}

/* For tl_pyt_sheets.uid_pairs: in pre-summary row order, each
 * kernel-list entry's UID and the output row of its group. */
static void fill_uid_pairs(const ugrp *g, const size_t *ord, size_t ng, const urow *rows, size_t nr,
                           const tl_trace *t, tl_pyt_sheets *pairs)
{
    size_t *out_row = tl_xmalloc((nr ? nr : 1) * sizeof *out_row), np = 0;
    for (size_t oi = 0; oi < ng; oi++)
        for (size_t q = 0; q < g[ord[oi]].m.n; q++) out_row[g[ord[oi]].m.v[q]] = oi;
    for (size_t i = 0; i < nr; i++) np += rows[i].ng;
    pairs->uid_pair_uid = tl_xmalloc((np ? np : 1) * sizeof *pairs->uid_pair_uid);
    pairs->uid_pair_row = tl_xmalloc((np ? np : 1) * sizeof *pairs->uid_pair_row);
    pairs->npairs = np;
    np = 0;
    for (size_t i = 0; i < nr; i++)
        for (size_t k = 0; k < rows[i].ng; k++, np++) {
            pairs->uid_pair_uid[np] = t->uid[rows[i].g[k]];
            pairs->uid_pair_row[np] = out_row[i];
        }
    free(out_row);
}

/* Each group's total and smallest UID over its base group (the key
 * without the overlap names: base[i] for group i), which the kl_overlap
 * sheet orders by. */
static void base_totals(ugrp *g, size_t ng, const size_t *base, size_t nbase)
{
    double *bt = tl_xcalloc(nbase ? nbase : 1, sizeof *bt);
    int64_t *bu = tl_xmalloc((nbase ? nbase : 1) * sizeof *bu);
    for (size_t b = 0; b < nbase; b++) bu[b] = INT64_MAX;
    for (size_t i = 0; i < ng; i++) {
        bt[base[i]] += g[i].ksum;
        if (g[i].ex_uid < bu[base[i]]) bu[base[i]] = g[i].ex_uid;
    }
    for (size_t i = 0; i < ng; i++) { g[i].base_total = bt[base[i]]; g[i].base_min_uid = bu[base[i]]; }
    free(bt);
    free(bu);
}

/* The group's first non-missing GFLOPS, data moved, FLOPS/Byte, compute
 * spec and (any_roof) roofline time and bound. */
static void set_first_metrics(const pyt_ctx *c, tl_table *tab, size_t r, const urow *rows, const ugrp *G,
                              const ucols *K, int any_roof)
{
    size_t n = G->m.n;
    double gf = NAN, dm = NAN, fb = NAN, rt = NAN;
    const char *cs = NULL, *rb = NULL;
    for (size_t q = 0; q < n; q++) {
        const urow *x = &rows[G->m.v[q]];
        if (!x->has_metrics) continue;
        umetrics m;
        row_metrics(c, x, &m);
        if (isnan(gf)) gf = m.gflops;
        if (isnan(dm)) dm = m.data_mb;
        if (isnan(fb)) fb = m.fpb;
        if (!cs) cs = m.cspec;
        if (m.roof_valid) {
            if (isnan(rt)) rt = m.rtime;
            if (!rb) rb = m.rbound;
        }
    }
    tl_table_set_f64(tab, (size_t)K->cgf, r, gf);
    tl_table_set_f64(tab, (size_t)K->cdm, r, dm);
    tl_table_set_f64(tab, (size_t)K->cfb, r, fb);
    if (cs) tl_table_set_str(tab, (size_t)K->ccs, r, cs);
    if (any_roof) {
        if (rb) tl_table_set_str(tab, (size_t)K->crb, r, rb);
        tl_table_set_f64(tab, K->crt, r, rt);
    }
}

/* The overlap cells of a kl_overlap row: the names, the summary and the
 * statistics of the overlap percentage of the group's members. */
static void set_overlap_cells(tl_table *tab, size_t r, const ugrp *G, const pyt_ovf *ovf, const pyt_ovf **ol,
                              double *tmp, const ucols *K)
{
    size_t n = G->m.n;
    if (G->ov_names) tl_table_set_str(tab, (size_t)K->cov, r, G->ov_names);
    for (size_t q = 0; q < n; q++) ol[q] = &ovf[G->m.v[q]];
    const char *os, *ot;
    pyt_overlap_summary(ol, n, &tab->arena, &os, &ot);
    tl_table_set_str_ref(tab, K->cos, r, os);
    if (ot) tl_table_set_str_ref(tab, K->cot, r, ot);
    pyt_stats so;
    for (size_t q = 0; q < n; q++) tmp[q] = ovf[G->m.v[q]].pct;
    pyt_stats_of(tmp, n, &so);
    if (!isnan(so.mean) && isnan(so.std)) so.std = 0.0;
    for (int i = 0; i < 5; i++) tl_table_set_f64(tab, K->cop[i], r, pyt_round2(stat_pick(&so, ALL5[i])));
}

/* call_stack_full and entry_point from each kernel's own stack
 * (query/pytorch/kstack.c); a synthetic row's kernels carry no stack. */
static void set_kernel_stacks(pyt_ctx *c, const urow *rows, const ugrp *G, tl_table *tab, size_t r,
                              const ucols *K, tl_arena *a)
{
    size_t n = G->m.n;
    const int32_t **lists = tl_xmalloc((n ? n : 1) * sizeof *lists);
    size_t *lens = tl_xmalloc((n ? n : 1) * sizeof *lens);
    for (size_t q = 0; q < n; q++) {
        lists[q] = rows[G->m.v[q]].g;
        lens[q] = rows[G->m.v[q]].ng;
    }
    const urow *R0 = &rows[G->m.v[0]];
    const char *stack, *entry;
    pyt_kernel_call_stack(c, lists, lens, n, R0->name, !strstr(R0->name, " (Synthetic Op)"), a, &stack, &entry);
    tl_table_set_str(tab, (size_t)K->cep, r, entry);
    tl_table_set_str(tab, (size_t)K->cstk, r, stack);
    free(lists);
    free(lens);
}

/* The kernel details of a group's kernel lists (kl: room for them). */
static void group_kdetails(pyt_ctx *c, const urow *rows, const ugrp *G, pyt_klist *kl, tl_arena *arena,
                           const char **ks, const char **kt)
{
    for (size_t q = 0; q < G->m.n; q++) {
        kl[q].rows = rows[G->m.v[q]].g;
        kl[q].n = rows[G->m.v[q]].ng;
    }
    pyt_kdetails(c, kl, G->m.n, arena, ks, kt);
}

/* A group's statistics of duration, kernel time, TB/s and TFLOPS/s (NaN
 * for rows without metrics) and percent of roofline (NaN without one);
 * tmp: room for the group's values. */
static void group_stats(const pyt_ctx *c, const urow *rows, const ugrp *G, double *tmp, pyt_stats *sd,
                        pyt_stats *sk, pyt_stats *stb, pyt_stats *stf, pyt_stats *srp)
{
    size_t n = G->m.n;
    for (size_t q = 0; q < n; q++) tmp[q] = rows[G->m.v[q]].dur;
    pyt_stats_of(tmp, n, sd);
    for (size_t q = 0; q < n; q++) tmp[q] = rows[G->m.v[q]].ktime;
    pyt_stats_of(tmp, n, sk);
    /* TB/s, TFLOPS/s and percent of roofline: tmp holds the three lists
     * side by side (n each) */
    double *tf = tmp + n, *rp = tmp + 2 * n;
    for (size_t q = 0; q < n; q++) {
        const urow *x = &rows[G->m.v[q]];
        tmp[q] = tf[q] = rp[q] = NAN;
        if (!x->has_metrics) continue;
        umetrics m;
        row_metrics(c, x, &m);
        tmp[q] = m.tbs;
        tf[q] = m.tflops;
        if (m.roof_valid) rp[q] = m.rpct;
    }
    pyt_stats_of(tmp, n, stb);
    pyt_stats_of(tf, n, stf);
    pyt_stats_of(rp, n, srp);
}

/* A row's grouping key: name, category, process name and label, thread
 * name, Input Dims, Input type, Input Strides, Concrete Inputs (all
 * interned or dictionary texts: pointers identify them), is_recompute
 * and (overlap sheet) the overlapping kernel names. Worked out again for a
 * group's first row where the sheet prints it, rather than kept per row. */
typedef struct ukey {
    const char *p[9];
    int64_t rec;
    const char *ov;
} ukey;

static void row_key(pyt_ctx *c, const urow *r, ukey *key)
{
    const tl_trace *t = c->t;
    int32_t s = r->src;
    memset(key, 0, sizeof *key);
    /* names: dictionary strings are unique per text; synthetic names are
     * interned when made */
    key->p[0] = r->name;
    key->p[1] = r->cat;
    pyt_meta_names(c, s, &key->p[2], &key->p[3], &key->p[4]);
    key->p[5] = pyt_arg_tuple(c, t->in_dims[s]);
    key->p[6] = pyt_arg_tuple(c, t->in_type[s]);
    key->p[7] = pyt_arg_tuple(c, t->in_strides[s]);
    key->p[8] = pyt_arg_tuple(c, t->concrete[s]);
    key->rec = r->rec;
}

/* unified_perf_summary (ovf NULL) or unified_perf_summary_kl_overlap of
 * rows. pairs: NULL, or the report's output receiving the (GPU UID,
 * summary row) pairs of --comparison_json_path. */
static tl_table *summarise(uctx *u, urow *rows, size_t nr, const pyt_ovf *ovf, tl_pyt_sheets *pairs)
{
    pyt_ctx *c = u->c;
    const tl_trace *t = c->t;
    ukey key;
    /* m groups by the whole key; bm, with overlaps only, by the key without
     * the overlap names (base[group]: its bm group), for the totals the
     * overlap sheet orders by */
    tl_bmap m, bm = {0};
    tl_bmap_init(&m, sizeof key, 64); /* grows with the groups, which are few next to the rows */
    size_t *base = NULL, nbase = 0;
    if (ovf) {
        tl_bmap_init(&bm, sizeof key, 64);
        base = tl_xmalloc((nr ? nr : 1) * sizeof *base);
    }
    ugrp *g = tl_xcalloc(nr ? nr : 1, sizeof *g);
    size_t ng = 0;
    int any_metrics = 0, any_roof = 0;
    for (size_t i = 0; i < nr; i++) {
        row_key(c, &rows[i], &key);
        int isnew;
        size_t bgroup = 0;
        if (ovf) {
            size_t *bslot = tl_bmap_put(&bm, &key, &isnew); /* the key without overlap names */
            if (isnew) *bslot = nbase++;
            bgroup = *bslot;
            key.ov = ovf[i].names;
        }
        size_t *slot = tl_bmap_put(&m, &key, &isnew);
        if (isnew) {
            *slot = ng;
            g[ng].ex_uid = rows[i].uid;
            g[ng].ov_names = key.ov;
            if (ovf) base[ng] = bgroup;
            ng++;
        }
        tl_vec_push(&g[*slot].m, (uint32_t)i);
        if (rows[i].has_metrics) any_metrics = 1;
        if (rows[i].roof_valid) any_roof = 1;
    }
    tl_bmap_free(&m);
    tl_bmap_free(&bm);
    double *tmp = tl_big_alloc((nr ? 3 * nr : 1) * sizeof *tmp); /* group_stats: three lists */
    size_t *ord = tl_xmalloc((ng ? ng : 1) * sizeof *ord);
    for (size_t i = 0; i < ng; i++) {
        for (size_t q = 0; q < g[i].m.n; q++) tmp[q] = rows[g[i].m.v[q]].ktime;
        g[i].ksum = tl_sum_kahan(tmp, g[i].m.n);
        ord[i] = i;
    }
    g_sort = g;
    if (ovf) {
        base_totals(g, ng, base, nbase);
        qsort(ord, ng, sizeof *ord, cmp_ugrp_kl);
    } else {
        qsort(ord, ng, sizeof *ord, cmp_ugrp);
    }
    free(base);
    if (pairs) fill_uid_pairs(g, ord, ng, rows, nr, t, pairs);

    tl_table *tab = tl_table_new(ovf ? "unified_perf_summary_kl_overlap" : "unified_perf_summary");
    ucols K;
    add_columns(tab, c, ovf != NULL, any_metrics, any_roof, &K);
    const pyt_ovf **ol = ovf ? tl_xmalloc((nr ? nr : 1) * sizeof *ol) : NULL;

    pyt_klist *kl = tl_big_alloc((nr ? nr : 1) * sizeof *kl);
    for (size_t oi = 0; oi < ng; oi++) {
        ugrp *G = &g[ord[oi]];
        size_t f = G->m.v[0], r = tl_table_add_row(tab), n = G->m.n;
        const urow *R0 = &rows[f];
        row_key(c, R0, &key);
        tl_table_set_str(tab, K.cn, r, R0->name);
        tl_table_set_str(tab, K.ccat, r, R0->cat);
        tl_table_set_str(tab, K.cpn, r, key.p[2]);
        tl_table_set_str(tab, K.cpl, r, key.p[3]);
        tl_table_set_str(tab, K.ctn, r, key.p[4]);
        const size_t argcol[4] = {K.cd, K.cty, K.cst, K.cci};
        for (int i = 0; i < 4; i++)
            if (key.p[5 + i]) tl_table_set_str(tab, argcol[i], r, key.p[5 + i]);
        if (K.crec >= 0) tl_table_set_bool(tab, (size_t)K.crec, r, R0->rec);
        tl_table_set_i64(tab, K.cex, r, G->ex_uid);
        tl_table_set_i64(tab, K.ccount, r, (int64_t)n);
        pyt_stats sd, sk, stb, stf, srp;
        group_stats(c, rows, G, tmp, &sd, &sk, &stb, &stf, &srp);
        tl_table_set_f64(tab, K.ctot, r, sd.sum);
        tl_table_set_f64(tab, K.cmean, r, sd.mean);
        tl_table_set_f64(tab, K.cstd, r, sd.std);
        for (int i = 0; i < 3; i++) tl_table_set_f64(tab, K.cdur[i], r, stat_pick(&sd, REST[i]));
        for (int i = 0; i < 3; i++) tl_table_set_f64(tab, K.ck1[i], r, stat_pick(&sk, KMS[i]));
        for (int i = 0; i < 3; i++) tl_table_set_f64(tab, K.ck2[i], r, stat_pick(&sk, REST[i]));
        if (any_metrics) {
            set_first_metrics(c, tab, r, rows, G, &K, any_roof);
            for (int i = 0; i < 2; i++) tl_table_set_f64(tab, K.ctb1[i], r, stat_pick(&stb, MS[i]));
            for (int i = 0; i < 2; i++) tl_table_set_f64(tab, K.ctf1[i], r, stat_pick(&stf, MS[i]));
            for (int i = 0; i < 3; i++) tl_table_set_f64(tab, K.ctb2[i], r, stat_pick(&stb, REST[i]));
            for (int i = 0; i < 3; i++) tl_table_set_f64(tab, K.ctf2[i], r, stat_pick(&stf, REST[i]));
            if (any_roof)
                for (int i = 0; i < 5; i++) tl_table_set_f64(tab, K.crp[i], r, stat_pick(&srp, ALL5[i]));
        }
        const char *ks, *kt;
        group_kdetails(c, rows, G, kl, &tab->arena, &ks, &kt);
        if (ks) tl_table_set_str_ref(tab, K.cks, r, ks);
        if (kt) tl_table_set_str_ref(tab, K.ctr, r, kt);
        const char *pp = NULL;
        for (size_t q = 0; q < n && !pp; q++)
            pp = rows[G->m.v[q]].plug ? rows[G->m.v[q]].plug->params_text : params_text(&u->a, rows[G->m.v[q]].params);
        if (pp) tl_table_set_str(tab, K.cpp, r, pp);
        tl_table_set_bool(tab, K.chp, r, R0->has_pm);
        if (ovf) set_overlap_cells(tab, r, G, ovf, ol, tmp, &K);
        if (K.cep >= 0 && c->o->per_kernel_call_stack) {
            set_kernel_stacks(c, rows, G, tab, r, &K, &u->a);
        } else if (K.cep >= 0) {
            /* the first instance's: an op's stack is the same at every call
             * site that shares its arguments in practice */
            tl_table_set_str(tab, (size_t)K.cep, r, pyt_entry_point(c, R0->src));
            tl_table_set_str(tab, (size_t)K.cstk, r, pyt_call_stack(c, R0->g, R0->ng, &u->a));
        }
    }
    free(ol);
    pyt_add_percentages(tab, K.ck1[2]);
    tl_big_free(kl);
    tl_big_free(tmp);
    free(ord);
    for (size_t i = 0; i < ng; i++) tl_vec_free(&g[i].m);
    free(g);
    return tab;
}

/* ---- driver -------------------------------------------------------------------------- */

static int64_t max_uid(const tl_trace *t)
{
    /* UIDs count every traceEvents element: the catalog's counts say how
     * many (flows included, which the report does not load); a trace the
     * inference report derives (graph-capture merge, pseudo ops) states
     * the reference's count as its "uid_end" label */
    int64_t tot = 0, v;
    size_t cl = strlen(t->catalog);
    const char *ue = strstr(t->catalog, "\"uid_end\":\"");
    static const char *const keys[] = {"events", "flows", "meta_events", "instant_events", "other_events"};
    if (ue)
        tot = strtoll(ue + 11, NULL, 10);
    else
        for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
            if (tl_args_get_i64(t->catalog, cl, keys[i], &v) == 0) tot += v;
    int64_t mx = -1;
    for (size_t i = 0; i < t->n; i++) if (t->uid[i] > mx) mx = t->uid[i];
    for (size_t i = 0; i < t->nflows && !ue; i++) if (t->f_uid[i] > mx) mx = t->f_uid[i];
    for (size_t i = 0; i < t->nmeta && !ue; i++) if (t->m_uid[i] > mx) mx = t->m_uid[i];
    return tot - 1 > mx ? tot - 1 : mx;
}

/* Synthetic ops (§9.5.2) after rows[0..nr): the GPU events no collected
 * event covers, orphans per runtime parent first, then kernels with a
 * cpu_op ancestor, each in UID order. Returns the new row count. */
static size_t add_synthetic_rows(uctx *u, urow *rows, size_t nr, const pyt_rowmap *lidx)
{
    pyt_ctx *c = u->c;
    size_t n = c->n;
    int64_t next_uid = max_uid(c->t) + 1;
    TL_VEC(int32_t) orphan_parents = {0};
    TL_VEC(int32_t) with_cpu = {0}; /* (kernel, its cpu_op ancestor) pairs */
    TL_VEC(int32_t) orphans = {0};  /* kernels with a parent but no cpu_op ancestor */
    tl_imap pidx;                   /* orphan parent -> index in orphan_parents */
    tl_imap_init(&pidx, 64);
    for (size_t i = 0; i < n; i++) {
        if (!c->gclass[i] || (u->flag[i] & UF_COVERED) || pyt_row_is_comm(c, (int32_t)i)) continue;
        int32_t a = c->parent[i], cpu = -1;
        for (int32_t x = a; x >= 0; x = c->parent[x])
            if (c->t->kind[x] == TL_K_CPU_OP) { cpu = x; break; }
        if (cpu >= 0) {
            tl_vec_push(&with_cpu, (int32_t)i);
            tl_vec_push(&with_cpu, cpu);
        } else if (a >= 0) {
            int isnew;
            size_t *j = tl_imap_put(&pidx, (uint64_t)a, &isnew);
            if (isnew) {
                *j = orphan_parents.n;
                tl_vec_push(&orphan_parents, a);
            }
            tl_vec_push(&orphans, (int32_t)i);
        }
    }
    /* orphans grouped by runtime parent (first-seen order), stable */
    size_t nop = orphan_parents.n, norph = orphans.n;
    size_t *goff = tl_xcalloc(nop + 1, sizeof *goff);
    for (size_t k = 0; k < norph; k++) goff[*tl_imap_get(&pidx, (uint64_t)c->parent[orphans.v[k]]) + 1]++;
    for (size_t j = 0; j < nop; j++) goff[j + 1] += goff[j];
    int32_t *orph = tl_xmalloc((norph ? norph : 1) * sizeof *orph);
    for (size_t k = 0; k < norph; k++)
        orph[goff[*tl_imap_get(&pidx, (uint64_t)c->parent[orphans.v[k]])]++] = orphans.v[k];
    free(goff);
    tl_imap_free(&pidx);
    tl_vec_free(&orphans);
    tl_buf nb = {0};
    for (size_t j = 0; j < norph + with_cpu.n / 2; j++) {
        int32_t gk = j < norph ? orph[j] : with_cpu.v[2 * (j - norph)];
        int32_t p = j < norph ? c->parent[gk] : with_cpu.v[2 * (j - norph) + 1];
        urow *r = &rows[nr++];
        memset(r, 0, sizeof *r);
        r->src = p;
        r->uid = next_uid++;
        nb.n = 0;
        tl_buf_puts(&nb, pyt_name(c, p));
        tl_buf_puts(&nb, "->");
        tl_buf_puts(&nb, pyt_name(c, gk));
        tl_buf_puts(&nb, " (Synthetic Op)");
        tl_buf_putc(&nb, 0);
        r->name = pyt_intern(c, nb.p);
        /* QUIRK (§9.5.2): the fallback reads the parent's stale kernel list;
         * --fix_quirks uses the synthetic op's own kernel */
        int32_t fk = c->o->fix_quirks ? gk : stored_first_kernel(u, p, lidx);
        r->cat = pyt_category_name(c, r->name, fk >= 0 ? pyt_name(c, fk) : NULL);
        r->g = tl_arena_alloc(&u->a, sizeof *r->g);
        r->g[0] = gk;
        r->ng = 1;
        r->dur = pyt_dur(c, p);
        r->rec = (int8_t)(c->recompute ? c->recompute[p] : -1);
        r->ktime = pyt_busy(c, r->g, 1);
    }
    free(orph);
    tl_buf_free(&nb);
    tl_vec_free(&orphan_parents);
    tl_vec_free(&with_cpu);
    return nr;
}

int pyt_sheet_unified(pyt_ctx *c, tl_pyt_sheets *out, tl_err *err)
{
    (void)err;
    size_t n = c->n, nz = n ? n : 1;
    if (!c->ngpu) return 0;
    uctx u;
    memset(&u, 0, sizeof u);
    u.c = c;
    tl_arena_init(&u.a, 1 << 16);
    u.flag = tl_big_calloc(nz, 1);
    struct { uint64_t h; size_t n; } hk0;
    tl_bmap_init(&u.evmap, sizeof hk0, 256);
    u.pm = tl_pm_ctx_new();
    for (size_t q = n; q-- > 0;) { /* children before parents */
        int32_t x = c->order[q], p = c->parent[x];
        if (p >= 0 && ((u.flag[x] & UF_GPU_BELOW) || c->gclass[x])) u.flag[p] |= UF_GPU_BELOW;
    }
    /* desc_pm: some cpu_op strictly below has its own model and GPU work */
    for (size_t q = n; q-- > 0;) {
        int32_t x = c->order[q], p = c->parent[x];
        if (p < 0) continue;
        if ((u.flag[x] & UF_DESC_PM) || (c->t->kind[x] == TL_K_CPU_OP && (u.flag[x] & UF_GPU_BELOW) && own_pm(&u, x)))
            u.flag[p] |= UF_DESC_PM;
    }
    /* start points: parentless python functions with GPU work (UID order),
     * then the cpu roots in processing (stable ts) order */
    int32_t *roots = tl_big_alloc(nz * sizeof *roots);
    size_t nroots = 0;
    if (c->python)
        for (size_t i = 0; i < n; i++)
            if (c->t->kind[i] == TL_K_PYTHON && c->parent[i] < 0 && (u.flag[i] & UF_GPU_BELOW)) visit(&u, (int32_t)i);
    for (size_t i = 0; i < n; i++) {
        if (c->t->kind[i] != TL_K_CPU_OP) continue;
        int root = 1;
        for (int32_t a = c->parent[i]; a >= 0; a = c->parent[a])
            if (c->t->kind[a] != TL_K_PYTHON) { root = 0; break; }
            else if (!c->python) { root = 0; break; }
        if (root) roots[nroots++] = (int32_t)i;
    }
    pyt_sort_rows_by_ts(c, roots, nroots);
    for (size_t i = 0; i < nroots; i++) visit(&u, roots[i]);
    tl_big_free(roots);

    /* launcher row -> launcher index */
    pyt_rowmap lidx = {tl_xmalloc((c->nl ? c->nl : 1) * sizeof *lidx.v), c->nl};
    for (size_t j = 0; j < c->nl; j++) {
        lidx.v[j][0] = c->l_row[j];
        lidx.v[j][1] = (int32_t)j;
    }
    pyt_link_sort(lidx.v, lidx.n);

    /* rows of the collected events */
    urow *rows = tl_big_alloc((u.collected.n + c->ngpu + 1) * sizeof *rows);
    size_t nr = 0;
    for (size_t i = 0; i < u.collected.n; i++) {
        int32_t e = u.collected.v[i];
        /* coverage counts every collected event, even a dropped row */
        int32_t *g = NULL;
        size_t ng = 0, cap = 0;
        pyt_subtree_gpu(c, e, &g, &ng, &cap);
        for (size_t k = 0; k < ng; k++) u.flag[g[k]] |= UF_COVERED;
        free(g);
        if (build_row(&u, &rows[nr], e, &lidx) == 0) nr++;
    }
    nr = add_synthetic_rows(&u, rows, nr, &lidx);
    /* the per-event marks are done with: free them before the summaries
     * allocate theirs (the report's peak is here) */
    free(lidx.v);
    tl_big_free(u.flag);
    tl_imap_free(&u.sole_fwd);
    tl_imap_free(&u.bwd_cached);

    if (nr) pyt_sheets_push(out, summarise(&u, rows, nr, NULL, c->o->unified_uid_pairs ? out : NULL));
    if (nr && c->o->include_overlap_info) {
        if (!c->overlap) c->overlap = pyt_overlap_build(c);
        pyt_ovf *ovf = tl_big_calloc(nr, sizeof *ovf);
        int32_t *tmp = NULL;
        size_t cap = 0;
        for (size_t i = 0; i < nr; i++) {
            if (rows[i].ng > cap) { cap = rows[i].ng; tmp = tl_xrealloc(tmp, cap * sizeof *tmp); }
            memcpy(tmp, rows[i].g, rows[i].ng * sizeof *tmp);
            pyt_sort_rows_by_ts(c, tmp, rows[i].ng);
            pyt_overlap_fields(c, c->overlap, tmp, rows[i].ng, &c->arena, &ovf[i]);
        }
        free(tmp);
        pyt_sheets_push(out, summarise(&u, rows, nr, ovf, NULL));
        tl_big_free(ovf);
    }
    tl_big_free(rows);
    tl_pm_ctx_free(u.pm);
    tl_vec_free(&u.bwd_m); tl_vec_free(&u.bwd_ents); tl_vec_free(&u.ev); tl_bmap_free(&u.evmap);
    tl_vec_free(&u.collected);
    tl_arena_free(&u.a);
    return 0;
}
