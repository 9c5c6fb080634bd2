/* exec.c — the verb engine: plan a query (table, selectors, where,
 * group keys, aggregates, sort, limit), then scan the selected traces one
 * at a time, column-at-a-time: decode the kind column to select the
 * table's rows, narrow them with the where expression, gather the group
 * keys and aggregate inputs, fold into accumulators keyed by text (a pool
 * gives equal strings one id across traces, and a per-trace id->group map
 * turns the hot "sum(dur) by name" into one array lookup per row).
 * Aggregation runs on worker threads, each with its own accumulators,
 * merged at the end; row output stays in trace order on one thread. */
#include "query/adhoc/adhoc_internal.h"
#include "query/core/stats.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- shared state ---------------------------------------------------------- */
typedef struct shared {
    tl_store *s;
    aq_plan *p;
    aq_catalog *cat;
    const uint8_t *keep;
    aq_pool pool;
    pthread_mutex_t pool_mu;
    int threaded;
    size_t next;              /* next trace index to take */
    pthread_mutex_t next_mu;
    const atomic_int *cancel;
    int rc;
    tl_err err;
    tl_table *out;            /* row mode output, built in place */
    int64_t rows_out;
    int blocks;               /* row mode: record each trace's rows (partials) */
    TL_VEC(uint64_t) block_ids, block_rows;
} shared;

static uint32_t pool_intern(shared *sh, const char *s, size_t n)
{
    if (!sh->threaded) return aq_pool_intern(&sh->pool, s, n);
    pthread_mutex_lock(&sh->pool_mu);
    uint32_t id = aq_pool_intern(&sh->pool, s, n);
    pthread_mutex_unlock(&sh->pool_mu);
    return id;
}

/* ---- worker ---------------------------------------------------------------- */
typedef struct xlcache {
    const tl_dict *dict;
    uint32_t *xl;           /* dict id -> pool id (0 = not yet) */
} xlcache;

typedef struct worker {
    shared *sh;
    aq_gstate g;
    aq_tctx x;
    xlcache xl[8];
    int nxl;
} worker;

static uint32_t *xl_for(worker *w, const tl_dict *d)
{
    for (int i = 0; i < w->nxl; i++)
        if (w->xl[i].dict == d) return w->xl[i].xl;
    if (w->nxl == 8) w->nxl = 0; /* never more than a few dictionaries per trace */
    uint32_t *xl = tl_arena_zalloc(&w->x.arena, (d->n ? d->n : 1) * sizeof(uint32_t));
    w->xl[w->nxl].dict = d;
    w->xl[w->nxl].xl = xl;
    w->nxl++;
    return xl;
}

static inline uint32_t sid_code(worker *w, uint32_t *xl, const tl_dict *d, uint32_t s)
{
    if (!s) return 0;
    if (!xl[s]) {
        size_t len;
        const char *t = tl_dict_get(d, s, &len);
        xl[s] = pool_intern(w->sh, t, len);
    }
    return xl[s];
}

static inline uint64_t f64_code(double v)
{
    if (isnan(v)) return 0x7ff8000000000000ULL;
    if (v == 0) v = 0; /* -0.0 and 0.0 group together */
    uint64_t u;
    memcpy(&u, &v, 8);
    return u;
}

/* Group codes of one key over m rows: strings -> pool id, numbers -> bits. */
static void key_codes(worker *w, const aq_colref *c, const aq_vec *v, size_t m, uint64_t *out)
{
    size_t n = v->konst ? 1 : m;
    int want_text = c->def->type == AQ_STR || c->def->type == AQ_DYN;
    switch (v->vt) {
    case AQ_V_SID: {
        uint32_t *xl = xl_for(w, v->dict);
        for (size_t i = 0; i < n; i++) out[i] = sid_code(w, xl, v->dict, v->s[i]);
        break;
    }
    case AQ_V_TEXT:
        for (size_t i = 0; i < n; i++) out[i] = v->t[i] ? pool_intern(w->sh, v->t[i], strlen(v->t[i])) : 0;
        break;
    case AQ_V_I64:
        if (want_text) {
            char b[32];
            for (size_t i = 0; i < n; i++) {
                if (v->i[i] == INT64_MIN) { out[i] = 0; continue; }
                int l = snprintf(b, sizeof b, "%lld", (long long)v->i[i]);
                out[i] = pool_intern(w->sh, b, (size_t)l);
            }
        } else if (c->def->type == AQ_FLOAT) {
            for (size_t i = 0; i < n; i++) out[i] = f64_code(v->i[i] == INT64_MIN ? NAN : (double)v->i[i]);
        } else {
            for (size_t i = 0; i < n; i++) out[i] = (uint64_t)v->i[i];
        }
        break;
    case AQ_V_F64:
        if (want_text) {
            char b[40];
            for (size_t i = 0; i < n; i++) {
                if (isnan(v->f[i])) { out[i] = 0; continue; }
                tl_fmt_pyfloat(v->f[i], b);
                out[i] = pool_intern(w->sh, b, strlen(b));
            }
        } else {
            for (size_t i = 0; i < n; i++) out[i] = f64_code(v->f[i]);
        }
        break;
    }
    if (v->konst)
        for (size_t i = 1; i < m; i++) out[i] = out[0];
}

static double parse_dyn(const char *s)
{
    if (!s) return NAN;
    char *e;
    double v = strtod(s, &e);
    return e == s || *e ? NAN : v;
}

/* Numeric view of an aggregate input: int64 (INT64_MIN null) or double (NaN null). */
static void as_numbers(const aq_vec *v, size_t m, tl_arena *a, int want_int, int64_t **iv, double **fv)
{
    *iv = NULL;
    *fv = NULL;
    size_t mm = m ? m : 1;
    if (want_int) {
        if (v->vt == AQ_V_I64 && !v->konst) { *iv = v->i; return; }
        int64_t *o = tl_arena_alloc(a, mm * sizeof *o);
        for (size_t i = 0; i < m; i++) {
            size_t k = v->konst ? 0 : i;
            if (v->vt == AQ_V_I64) o[i] = v->i[k];
            else if (v->vt == AQ_V_F64) o[i] = isnan(v->f[k]) ? INT64_MIN : (int64_t)v->f[k];
            else { double d = parse_dyn(aq_vec_text(v, k)); o[i] = isnan(d) ? INT64_MIN : (int64_t)d; }
        }
        *iv = o;
        return;
    }
    if (v->vt == AQ_V_F64 && !v->konst) { *fv = v->f; return; }
    double *o = tl_arena_alloc(a, mm * sizeof *o);
    for (size_t i = 0; i < m; i++) {
        size_t k = v->konst ? 0 : i;
        if (v->vt == AQ_V_F64) o[i] = v->f[k];
        else if (v->vt == AQ_V_I64) o[i] = v->i[k] == INT64_MIN ? NAN : (double)v->i[k];
        else o[i] = parse_dyn(aq_vec_text(v, k));
    }
    *fv = o;
}

static int fold_aggs(worker *w, const uint32_t *rows, size_t m, const uint32_t *gid, tl_err *err)
{
    const aq_plan *p = w->sh->p;
    aq_gstate *g = &w->g;
    for (size_t k = 0; k < p->nagg; k++) {
        const aq_aggdef *ad = &p->agg[k];
        aq_acc *a = &g->acc[k];
        if (ad->star) {
            for (size_t i = 0; i < m; i++) a->cnt[gid[i]]++;
            continue;
        }
        aq_vec v;
        int rc = aq_vec_get(&w->x, &ad->col, rows, m, &v, err);
        if (rc) return rc;
        if (ad->fn == AQ_A_NUNIQUE || (ad->fn == AQ_A_COUNT)) {
            uint64_t *codes = tl_arena_alloc(&w->x.arena, (m ? m : 1) * sizeof *codes);
            int is_null_code0 = v.vt == AQ_V_SID || v.vt == AQ_V_TEXT ||
                                ((v.vt == AQ_V_I64) && (ad->col.def->type == AQ_STR || ad->col.def->type == AQ_DYN));
            key_codes(w, &ad->col, &v, m, codes);
            for (size_t i = 0; i < m; i++) {
                size_t q = v.konst ? 0 : i;
                int isnull = is_null_code0 ? codes[i] == 0
                           : v.vt == AQ_V_I64 ? v.i[q] == INT64_MIN : isnan(v.f[q]);
                if (isnull) continue;
                if (ad->fn == AQ_A_COUNT) a->cnt[gid[i]]++;
                else aq_nunique_add(&a->set, gid[i], codes[i]);
            }
            continue;
        }
        int64_t *iv;
        double *fv;
        as_numbers(&v, m, &w->x.arena, a->isint, &iv, &fv);
        switch (ad->fn) {
        case AQ_A_SUM: case AQ_A_MEAN:
            if (iv) for (size_t i = 0; i < m; i++) { if (iv[i] != INT64_MIN) { a->isum[gid[i]] += iv[i]; a->cnt[gid[i]]++; } }
            else for (size_t i = 0; i < m; i++) { if (!isnan(fv[i])) { a->fsum[gid[i]] += fv[i]; a->cnt[gid[i]]++; } }
            break;
        case AQ_A_MIN: case AQ_A_MAX:
            for (size_t i = 0; i < m; i++) {
                uint32_t q = gid[i];
                if (iv) {
                    if (iv[i] == INT64_MIN) continue;
                    if (iv[i] < a->imin[q]) a->imin[q] = iv[i];
                    if (iv[i] > a->imax[q]) a->imax[q] = iv[i];
                } else {
                    if (isnan(fv[i])) continue;
                    if (fv[i] < a->fmin[q]) a->fmin[q] = fv[i];
                    if (fv[i] > a->fmax[q]) a->fmax[q] = fv[i];
                }
                a->cnt[q]++;
            }
            break;
        case AQ_A_STD:
            for (size_t i = 0; i < m; i++) {
                double x = iv ? (iv[i] == INT64_MIN ? NAN : (double)iv[i]) : fv[i];
                if (isnan(x)) continue;
                uint32_t q = gid[i];
                a->cnt[q]++;
                tl_welford_add(&a->w[q], x);
            }
            break;
        case AQ_A_MEDIAN: case AQ_A_PCT:
            for (size_t i = 0; i < m; i++) {
                double x = iv ? (iv[i] == INT64_MIN ? NAN : (double)iv[i]) : fv[i];
                if (isnan(x)) continue;
                tl_vec_push(&a->vals[gid[i]], x);
                a->cnt[gid[i]]++;
            }
            break;
        default: break;
        }
    }
    return TL_OK;
}

static int group_rows(worker *w, const uint32_t *rows, size_t m, tl_err *err)
{
    const aq_plan *p = w->sh->p;
    aq_gstate *g = &w->g;
    uint32_t *gid = tl_arena_alloc(&w->x.arena, (m ? m : 1) * sizeof *gid);
    if (p->nby == 0) {
        uint64_t none = 0;
        uint32_t g0 = aq_group_of(g, p, &none);
        for (size_t i = 0; i < m; i++) gid[i] = g0;
    } else {
        aq_vec *kv = tl_arena_alloc(&w->x.arena, p->nby * sizeof *kv);
        for (size_t k = 0; k < p->nby; k++) {
            int rc = aq_vec_get(&w->x, &p->by[k], rows, m, &kv[k], err);
            if (rc) return rc;
        }
        if (p->nby == 1 && kv[0].vt == AQ_V_SID && !kv[0].konst) {
            /* hot path: one string key; decide the group once per distinct id */
            const aq_vec *v = &kv[0];
            uint32_t *xl = xl_for(w, v->dict);
            uint32_t *gmap = tl_arena_zalloc(&w->x.arena, (v->dict->n ? v->dict->n : 1) * sizeof *gmap);
            uint32_t gnull = UINT32_MAX;
            for (size_t i = 0; i < m; i++) {
                uint32_t s = v->s[i];
                if (!s) {
                    if (gnull == UINT32_MAX) { uint64_t c0 = 0; gnull = aq_group_of(g, p, &c0); }
                    gid[i] = gnull;
                    continue;
                }
                if (!gmap[s]) {
                    uint64_t c = sid_code(w, xl, v->dict, s);
                    gmap[s] = aq_group_of(g, p, &c) + 1;
                }
                gid[i] = gmap[s] - 1;
            }
        } else {
            uint64_t *codes = tl_arena_alloc(&w->x.arena, (m ? m : 1) * p->nby * sizeof *codes);
            uint64_t *col = tl_arena_alloc(&w->x.arena, (m ? m : 1) * sizeof *col);
            for (size_t k = 0; k < p->nby; k++) {
                key_codes(w, &p->by[k], &kv[k], m, col);
                for (size_t i = 0; i < m; i++) codes[i * p->nby + k] = col[i];
            }
            /* consecutive rows often share a key (trace-level keys always do) */
            uint32_t last = UINT32_MAX;
            for (size_t i = 0; i < m; i++) {
                if (i && last != UINT32_MAX && !memcmp(codes + i * p->nby, codes + (i - 1) * p->nby, p->nby * 8)) {
                    gid[i] = last;
                    continue;
                }
                last = gid[i] = aq_group_of(g, p, codes + i * p->nby);
            }
        }
    }
    return fold_aggs(w, rows, m, gid, err);
}

/* Appends rows to the row-mode output table. */
static int emit_rows(worker *w, const uint32_t *rows, size_t m, tl_err *err)
{
    shared *sh = w->sh;
    const aq_plan *p = sh->p;
    tl_table *t = sh->out;
    if (p->limit >= 0 && p->nsort == 0 && sh->rows_out + (int64_t)m > p->limit) m = (size_t)(p->limit - sh->rows_out);
    if (!m) return TL_OK;
    size_t base = t->nrows;
    tl_table_set_nrows(t, base + m);
    for (size_t c = 0; c < p->nsel; c++) {
        aq_vec v;
        int rc = aq_vec_get(&w->x, &p->sel[c], rows, m, &v, err);
        if (rc) return rc;
        const tl_column *col = &t->cols[c];
        if (col->type == TL_STR) {
            uint32_t *xl = v.vt == AQ_V_SID ? xl_for(w, v.dict) : NULL;
            char b[40];
            for (size_t i = 0; i < m; i++) {
                size_t k = v.konst ? 0 : i;
                const char *s = NULL;
                if (v.vt == AQ_V_SID) {
                    uint32_t id = sid_code(w, xl, v.dict, v.s[k]);
                    s = id ? sh->pool.text[id] : NULL;
                } else if (v.vt == AQ_V_TEXT) {
                    s = v.t[k] ? sh->pool.text[pool_intern(sh, v.t[k], strlen(v.t[k]))] : NULL;
                } else if (v.vt == AQ_V_I64) {
                    if (v.i[k] != INT64_MIN) { snprintf(b, sizeof b, "%lld", (long long)v.i[k]); s = sh->pool.text[pool_intern(sh, b, strlen(b))]; }
                } else if (!isnan(v.f[k])) {
                    tl_fmt_pyfloat(v.f[k], b);
                    s = sh->pool.text[pool_intern(sh, b, strlen(b))];
                }
                if (s) tl_table_set_str_ref(t, c, base + i, s);
            }
        } else if (col->type == TL_I64) {
            for (size_t i = 0; i < m; i++) {
                size_t k = v.konst ? 0 : i;
                int64_t x = v.vt == AQ_V_I64 ? v.i[k] : v.vt == AQ_V_F64 ? (isnan(v.f[k]) ? INT64_MIN : (int64_t)v.f[k]) : INT64_MIN;
                if (x != INT64_MIN) tl_table_set_i64(t, c, base + i, x);
            }
        } else {
            for (size_t i = 0; i < m; i++) {
                size_t k = v.konst ? 0 : i;
                double x = v.vt == AQ_V_F64 ? v.f[k] : v.vt == AQ_V_I64 ? (v.i[k] == INT64_MIN ? NAN : (double)v.i[k]) : parse_dyn(aq_vec_text(&v, k));
                tl_table_set_f64(t, c, base + i, x);
            }
        }
    }
    sh->rows_out += (int64_t)m;
    return TL_OK;
}

/* Top-level AND conjuncts that depend only on the trace decide it up front. */
static int trace_passes(const aq_expr *e, const aq_trace *t, tl_arena *a)
{
    if (!e) return 1;
    if (e->trace_level) return aq_expr_eval_trace(t, e, a);
    if (e->t == AQ_E_AND) return trace_passes(e->a, t, a) && trace_passes(e->b, t, a);
    return 1;
}

static int process_trace(worker *w, const aq_trace *t, tl_err *err)
{
    shared *sh = w->sh;
    const aq_plan *p = sh->p;
    const aq_tabdef *tab = p->tab;
    if (tab->kind == AQ_TAB_ROWS && tab->kind_filter >= 0) {
        int64_t total = 0;
        for (int k = 0; k < TL_K_COUNT; k++) total += t->kinds[k];
        if (total > 0 && t->kinds[tab->kind_filter] == 0) return TL_OK;
    }
    int rc = aq_tctx_begin(&w->x, sh->s, t, err);
    if (rc) return rc;
    w->nxl = 0;
    uint32_t *rows = NULL;
    size_t m = 0;
    if (tab->kind == AQ_TAB_ROWS) {
        rc = aq_tctx_rows(&w->x, tab, &rows, &m, err);
        if (rc == TL_ENOTFOUND) { rc = 0; m = 0; } /* a trace without events */
    } else if (tab->kind == AQ_TAB_TRACES) {
        rows = tl_arena_zalloc(&w->x.arena, sizeof *rows);
        m = 1;
    } else {
        rc = aq_tctx_report(&w->x, tab, err);
        if (!rc && w->x.report) {
            m = w->x.report->nrows;
            rows = tl_arena_alloc(&w->x.arena, (m ? m : 1) * sizeof *rows);
            for (size_t i = 0; i < m; i++) rows[i] = (uint32_t)i;
        }
    }
    if (!rc && m && p->where) {
        uint8_t *mask = tl_arena_alloc(&w->x.arena, m);
        rc = aq_expr_eval(&w->x, p->where, rows, m, mask, err);
        if (!rc) {
            size_t k = 0;
            for (size_t i = 0; i < m; i++)
                if (mask[i]) rows[k++] = rows[i];
            m = k;
        }
    }
    int64_t before = sh->rows_out;
    if (!rc && m) rc = p->group_mode ? group_rows(w, rows, m, err) : emit_rows(w, rows, m, err);
    if (!rc && sh->blocks && sh->rows_out > before) {
        tl_vec_push(&sh->block_ids, t->id);
        tl_vec_push(&sh->block_rows, (uint64_t)(sh->rows_out - before));
    }
    if (rc) {
        char pre[64];
        snprintf(pre, sizeof pre, "trace %s", t->hex);
        if (rc != TL_EUSAGE) tl_err_prefix(err, "%s", pre);
    }
    aq_tctx_end(&w->x);
    return rc;
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    shared *sh = w->sh;
    tl_err err = {0};
    for (;;) {
        pthread_mutex_lock(&sh->next_mu);
        size_t i = sh->next;
        while (i < sh->cat->v.n && !sh->keep[i]) i++;
        sh->next = i + 1;
        int stop = sh->rc != 0 || (sh->cancel && atomic_load_explicit(sh->cancel, memory_order_relaxed));
        pthread_mutex_unlock(&sh->next_mu);
        if (stop || i >= sh->cat->v.n) break;
        int rc = process_trace(w, &sh->cat->v.v[i], &err);
        if (rc) {
            pthread_mutex_lock(&sh->next_mu);
            if (!sh->rc) { sh->rc = rc; sh->err = err; }
            pthread_mutex_unlock(&sh->next_mu);
            break;
        }
    }
    return NULL;
}

static int auto_threads(size_t ntraces, int cores)
{
    long c = cores ? cores : sysconf(_SC_NPROCESSORS_ONLN);
    if (c < 1) c = 1;
    if (c > 16) c = 16;
    if ((size_t)c > ntraces) c = (long)(ntraces ? ntraces : 1);
    return (int)c;
}

/* The traces of the query: the catalog of s (none when s is NULL), the
 * --trace selection (over every process's stores with share) and the
 * trace-level conjuncts of --where. *r is NULL without a store. */
static int select_traces(tl_store *s, const tl_adhoc_query *q, const aq_plan *p, const tl_adhoc_share *share,
                         tl_reader **r, aq_catalog *cat, uint8_t **keep, size_t *nsel, tl_err *err)
{
    *r = NULL;
    memset(cat, 0, sizeof *cat);
    tl_arena_init(&cat->arena, 1024);
    int rc = share && share->failed ? tl_errf(err, share->failed, "cannot open the stores") : 0;
    if (!rc && s) rc = tl_reader_open(s, r, err);
    if (!rc && s) {
        aq_catalog_free(cat);
        rc = aq_catalog_load(*r, cat, err);
    }
    if (rc && !share) return rc;
    int failed = rc;
    if (failed) {
        /* still select over no traces: the exchange needs this process */
        aq_catalog_free(cat);
        memset(cat, 0, sizeof *cat);
        tl_arena_init(&cat->arena, 1024);
    }
    *keep = tl_xmalloc(cat->v.n ? cat->v.n : 1);
    aq_select_global g;
    memset(&g, 0, sizeof g);
    tl_err serr = {0};
    rc = aq_select_traces(*r, cat, q->traces, q->ntraces, *keep, share ? &g : NULL, &serr);
    if (rc) *err = serr; /* a bad selector: the same on every process, before any exchange */
    else if (share) rc = aq_share_selection(share, failed, cat, *keep, &g, err);
    aq_select_global_free(&g);
    *nsel = 0;
    if (!rc)
        for (size_t i = 0; i < cat->v.n; i++) {
            if ((*keep)[i] && p->where && !trace_passes(p->where, &cat->v.v[i], &cat->arena)) (*keep)[i] = 0;
            *nsel += (*keep)[i];
        }
    return rc;
}

/* The catalog listing shows every label key by default. */
static void add_label_columns(aq_plan *p, const tl_adhoc_query *q, const aq_catalog *cat)
{
    if (p->group_mode || p->tab->kind != AQ_TAB_TRACES || (q->select && *q->select) || !cat->label_keys.n) return;
    aq_colref *ns = tl_arena_alloc(&p->arena, (p->nsel + cat->label_keys.n) * sizeof *ns);
    memcpy(ns, p->sel, p->nsel * sizeof *ns);
    for (size_t k = 0; k < cat->label_keys.n; k++) {
        char nm[300];
        snprintf(nm, sizeof nm, "label.%s", cat->label_keys.v[k]);
        if (aq_resolve_col(p->tab, nm, &ns[p->nsel], &p->arena, NULL, 0) == 0) p->nsel++;
    }
    p->sel = ns;
}

/* Scans the selected traces on the workers: groups end in *g (merged),
 * rows in sh->out. */
static int scan(shared *sh, const tl_adhoc_query *q, size_t nsel, aq_gstate *g, tl_err *err)
{
    aq_plan *p = sh->p;
    int nth = q->threads > 0 ? q->threads : auto_threads(nsel, q->cores);
    if (!p->group_mode) nth = 1; /* rows come out in trace order */
    /* the report code was not written for concurrent use: one worker */
    if (p->tab->kind == AQ_TAB_REPORT) nth = 1;
    worker *ws = tl_xcalloc((size_t)nth, sizeof *ws);
    for (int i = 0; i < nth; i++) {
        ws[i].sh = sh;
        if (p->group_mode) aq_gstate_init(&ws[i].g, p);
    }
    if (p->group_mode && !p->nby) { uint64_t z = 0; aq_group_of(&ws[0].g, p, &z); }
    sh->threaded = nth > 1;
    if (nth == 1) {
        worker_main(&ws[0]);
    } else {
        tl_thread **th = tl_xmalloc((size_t)nth * sizeof *th);
        for (int i = 0; i < nth; i++)
            if (!(th[i] = tl_thread_start(worker_main, &ws[i]))) worker_main(&ws[i]);
        for (int i = 0; i < nth; i++)
            if (th[i]) tl_thread_join(th[i]);
        free(th);
    }
    int rc = sh->rc;
    if (rc) *err = sh->err;
    else if (q->cancel && atomic_load(q->cancel)) rc = tl_errf(err, TL_EINTR_ADHOC, "interrupted");
    if (p->group_mode) {
        for (int i = 1; i < nth && !rc; i++) aq_gstate_merge(&ws[0].g, &ws[i].g, p);
        for (int i = 1; i < nth; i++) aq_gstate_free(&ws[i].g);
        *g = ws[0].g;
    }
    free(ws);
    return rc;
}

/* tl_adhoc_run (part NULL) or tl_adhoc_run_part. */
static int run(tl_store *s, const tl_adhoc_query *q, const tl_adhoc_share *share, tl_buf *part, tl_table **out,
               tl_err *err)
{
    aq_plan p;
    int rc = aq_plan_build(q, &p, err);
    if (rc) { aq_plan_free(&p); return rc; }
    tl_reader *r;
    aq_catalog cat;
    uint8_t *keep = NULL;
    size_t nsel = 0;
    rc = select_traces(s, q, &p, share, &r, &cat, &keep, &nsel, err);
    if (rc) { /* no selection (under share: on every process alike) */
        free(keep);
        aq_catalog_free(&cat);
        if (r) tl_reader_close(r);
        aq_plan_free(&p);
        return rc;
    }
    tl_table *t = tl_table_new(p.tab->name);
    shared sh;
    memset(&sh, 0, sizeof sh);
    sh.s = s;
    sh.p = &p;
    sh.cat = &cat;
    sh.keep = keep;
    sh.cancel = q->cancel;
    sh.out = t;
    sh.blocks = part != NULL;
    aq_pool_init(&sh.pool, &t->arena);
    pthread_mutex_init(&sh.pool_mu, NULL);
    pthread_mutex_init(&sh.next_mu, NULL);
    aq_gstate g;
    memset(&g, 0, sizeof g);
    if (!rc) {
        add_label_columns(&p, q, &cat);
        if (!p.group_mode)
            for (size_t c = 0; c < p.nsel; c++) tl_table_add_col(t, p.sel[c].display, aq_out_type(&p.sel[c]));
        rc = scan(&sh, q, nsel, &g, err);
    }
    if (part) {
        /* a read error travels to the process that finishes the answer */
        if (rc) aq_part_put_error(part, rc, err->msg);
        else if (p.group_mode) aq_part_put_groups(part, &g, &p, &sh.pool);
        else aq_part_put_rows(part, sh.block_ids.v, sh.block_rows.v, sh.block_ids.n, t);
        rc = TL_OK;
    } else if (!rc) {
        if (p.group_mode) aq_gstate_table(&g, &p, &sh.pool, t);
        rc = aq_sort_and_limit(&p, t, q->sort, err);
        if (!rc) t = aq_finish(&p, q, t);
    }
    if (p.group_mode) aq_gstate_free(&g);
    tl_vec_free(&sh.block_ids);
    tl_vec_free(&sh.block_rows);
    aq_pool_free(&sh.pool);
    pthread_mutex_destroy(&sh.pool_mu);
    pthread_mutex_destroy(&sh.next_mu);
    free(keep);
    aq_catalog_free(&cat);
    if (r) tl_reader_close(r);
    aq_plan_free(&p);
    if (rc || part) { tl_table_free(t); return rc; }
    *out = t;
    return TL_OK;
}

int tl_adhoc_run(tl_store *s, const tl_adhoc_query *q, tl_table **out, tl_err *err)
{
    *out = NULL;
    return run(s, q, NULL, NULL, out, err);
}

int tl_adhoc_run_part(tl_store *s, const tl_adhoc_query *q, const tl_adhoc_share *share, tl_buf *part,
                      tl_err *err)
{
    return run(s, q, share, part, NULL, err);
}
