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

typedef struct aq_plan {
    const aq_tabdef *tab;
    aq_expr *where;
    aq_colref *by;
    size_t nby;
    aq_aggdef *agg;
    size_t nagg;
    aq_colref *sel;
    size_t nsel;
    aq_sortkey *sort;
    size_t nsort;
    int group_mode;
    int pivot;          /* the last by column is --pivot's */
    int64_t limit;
    tl_arena arena;
} aq_plan;

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
    const volatile sig_atomic_t *cancel;
    int rc;
    tl_err err;
    tl_table *out;            /* row mode output, built in place */
    int64_t rows_out;
} shared;

static uint32_t pool_intern(shared *sh, const char *s, size_t n)
{
    if (!sh->threaded) return aq_pool_intern(&sh->pool, s, n);
    pthread_mutex_lock(&sh->pool_mu);
    uint32_t id = aq_pool_intern(&sh->pool, s, n);
    pthread_mutex_unlock(&sh->pool_mu);
    return id;
}

/* ---- group accumulators ----------------------------------------------------- */
/* A nunique accumulator's distinct (group, code) pairs: keys of a tl_bmap. */
typedef struct gcode {
    uint64_t c;
    uint32_t g, pad; /* pad zeroed: the key is hashed as bytes */
} gcode;

static void nunique_add(tl_bmap *s, uint32_t g, uint64_t c)
{
    if (!s->cap) tl_bmap_init(s, sizeof(gcode), 512);
    gcode k = {c, g, 0};
    int isnew;
    tl_bmap_put(s, &k, &isnew);
}

typedef struct acc {
    int isint;               /* numeric input is int64 */
    int64_t *cnt;
    int64_t *isum;
    double *fsum;
    int64_t *imin, *imax;
    double *fmin, *fmax;
    tl_welford *w;           /* std */
    TL_VEC(double) * vals;   /* median / percentiles */
    tl_bmap set;             /* nunique */
} acc;

typedef struct gstate {
    size_t nkeys, nagg;
    uint64_t *keys;          /* ng * nkeys codes */
    size_t ng, cap;
    tl_hidx idx;             /* key codes -> group id */
    acc *acc;
} gstate;

static void gstate_init(gstate *g, const aq_plan *p)
{
    memset(g, 0, sizeof *g);
    g->nkeys = p->nby;
    g->nagg = p->nagg;
    g->acc = tl_xcalloc(p->nagg ? p->nagg : 1, sizeof *g->acc);
    for (size_t k = 0; k < p->nagg; k++)
        g->acc[k].isint = p->agg[k].star || p->agg[k].col.def->type == AQ_INT;
    tl_hidx_init(&g->idx, 512);
}

static void gstate_free(gstate *g)
{
    for (size_t k = 0; k < g->nagg; k++) {
        acc *a = &g->acc[k];
        free(a->cnt); free(a->isum); free(a->fsum); free(a->imin); free(a->imax);
        free(a->fmin); free(a->fmax); free(a->w);
        if (a->vals) {
            for (size_t i = 0; i < g->ng; i++) tl_vec_free(&a->vals[i]);
            free(a->vals);
        }
        tl_bmap_free(&a->set);
    }
    free(g->acc);
    free(g->keys);
    tl_hidx_free(&g->idx);
}

static void acc_grow(gstate *g, const aq_plan *p, size_t ncap)
{
    size_t old = g->cap;
    g->keys = tl_xrealloc(g->keys, ncap * (g->nkeys ? g->nkeys : 1) * sizeof(uint64_t));
    for (size_t k = 0; k < g->nagg; k++) {
        acc *a = &g->acc[k];
        aq_afn fn = p->agg[k].fn;
#define GROW(arr, T, init)                                                   \
        do {                                                                 \
            a->arr = tl_xrealloc(a->arr, ncap * sizeof(T));                  \
            for (size_t i = old; i < ncap; i++) a->arr[i] = (init);          \
        } while (0)
        GROW(cnt, int64_t, 0);
        if (fn == AQ_A_SUM || fn == AQ_A_MEAN) {
            if (a->isint) GROW(isum, int64_t, 0); else GROW(fsum, double, 0.0);
        }
        if (fn == AQ_A_MIN || fn == AQ_A_MAX) {
            if (a->isint) { GROW(imin, int64_t, INT64_MAX); GROW(imax, int64_t, INT64_MIN); }
            else { GROW(fmin, double, INFINITY); GROW(fmax, double, -INFINITY); }
        }
        if (fn == AQ_A_STD) GROW(w, tl_welford, ((tl_welford){0, 0, 0}));
        if (fn == AQ_A_MEDIAN || fn == AQ_A_PCT) {
            a->vals = tl_xrealloc(a->vals, ncap * sizeof(*a->vals));
            memset(a->vals + old, 0, (ncap - old) * sizeof(*a->vals));
        }
#undef GROW
    }
    g->cap = ncap;
}

static uint32_t group_of(gstate *g, const aq_plan *p, const uint64_t *codes)
{
    uint64_t h = 0x12345;
    for (size_t k = 0; k < g->nkeys; k++) h = tl_mix64(h ^ (codes[k] + 0x9E3779B97F4A7C15ULL * (k + 1)));
    size_t i = tl_hidx_home(&g->idx, h);
    for (; g->idx.ids[i]; i = tl_hidx_next(&g->idx, i)) {
        uint32_t gi = g->idx.ids[i] - 1;
        if (g->idx.hashes[i] == h && !memcmp(g->keys + gi * g->nkeys, codes, g->nkeys * sizeof(uint64_t)))
            return gi;
    }
    if (g->ng == g->cap) acc_grow(g, p, g->cap ? g->cap * 2 : 256);
    uint32_t gi = (uint32_t)g->ng++;
    if (g->nkeys) memcpy(g->keys + gi * g->nkeys, codes, g->nkeys * sizeof(uint64_t));
    tl_hidx_set(&g->idx, i, h, gi);
    return gi;
}

/* ---- worker ---------------------------------------------------------------- */
typedef struct xlcache {
    const tl_dict *dict;
    uint32_t *xl;           /* dict id -> pool id (0 = not yet) */
} xlcache;

typedef struct worker {
    shared *sh;
    gstate g;
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
        for (size_t i = 0; i < n; i++) out[i] = f64_code(v->f[i]);
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
    gstate *g = &w->g;
    for (size_t k = 0; k < p->nagg; k++) {
        const aq_aggdef *ad = &p->agg[k];
        acc *a = &g->acc[k];
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
                else nunique_add(&a->set, gid[i], codes[i]);
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
    gstate *g = &w->g;
    uint32_t *gid = tl_arena_alloc(&w->x.arena, (m ? m : 1) * sizeof *gid);
    if (p->nby == 0) {
        uint64_t none = 0;
        uint32_t g0 = group_of(g, p, &none);
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
                    if (gnull == UINT32_MAX) { uint64_t c0 = 0; gnull = group_of(g, p, &c0); }
                    gid[i] = gnull;
                    continue;
                }
                if (!gmap[s]) {
                    uint64_t c = sid_code(w, xl, v->dict, s);
                    gmap[s] = group_of(g, p, &c) + 1;
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
                last = gid[i] = group_of(g, p, codes + i * p->nby);
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
    if (!rc && m) rc = p->group_mode ? group_rows(w, rows, m, err) : emit_rows(w, rows, m, err);
    if (rc) {
        char pre[64];
        snprintf(pre, sizeof pre, "trace %s", t->hex);
        if (rc != TL_EUSAGE) tl_err_prefix(err, "%s", pre);
    }
    aq_tctx_end(&w->x);
    return rc;
}

/* ---- merging worker accumulators ------------------------------------------- */
static void merge_into(gstate *dst, const gstate *src, const aq_plan *p)
{
    for (size_t q = 0; q < src->ng; q++) {
        uint32_t d = group_of(dst, p, src->keys + q * src->nkeys);
        for (size_t k = 0; k < p->nagg; k++) {
            acc *a = &dst->acc[k];
            const acc *b = &src->acc[k];
            aq_afn fn = p->agg[k].fn;
            int64_t n1 = b->cnt[q];
            if (fn == AQ_A_STD) tl_welford_merge(&a->w[d], &b->w[q]);
            a->cnt[d] += n1;
            if (fn == AQ_A_SUM || fn == AQ_A_MEAN) {
                if (a->isint) a->isum[d] += b->isum[q]; else a->fsum[d] += b->fsum[q];
            }
            if (fn == AQ_A_MIN || fn == AQ_A_MAX) {
                if (a->isint) {
                    if (b->imin[q] < a->imin[d]) a->imin[d] = b->imin[q];
                    if (b->imax[q] > a->imax[d]) a->imax[d] = b->imax[q];
                } else {
                    if (b->fmin[q] < a->fmin[d]) a->fmin[d] = b->fmin[q];
                    if (b->fmax[q] > a->fmax[d]) a->fmax[d] = b->fmax[q];
                }
            }
            if (fn == AQ_A_MEDIAN || fn == AQ_A_PCT)
                for (size_t i = 0; i < b->vals[q].n; i++) tl_vec_push(&a->vals[d], b->vals[q].v[i]);
        }
    }
    /* nunique sets: remap group ids */
    for (size_t k = 0; k < p->nagg; k++) {
        if (p->agg[k].fn != AQ_A_NUNIQUE) continue;
        const tl_bmap *s = &src->acc[k].set;
        for (size_t i = 0; i < s->cap; i++) {
            if (!s->used[i]) continue;
            const gcode *x = (const gcode *)(s->keys + i * s->keylen);
            uint32_t d = group_of(dst, p, src->keys + (size_t)x->g * src->nkeys);
            nunique_add(&dst->acc[k].set, d, x->c);
        }
    }
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
        int stop = sh->rc != 0 || (sh->cancel && *sh->cancel);
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

/* ---- output ---------------------------------------------------------------- */
static tl_type out_type_of(const aq_colref *c)
{
    switch (c->def->type) {
    case AQ_INT: return TL_I64;
    case AQ_FLOAT: return TL_F64;
    default: return TL_STR;
    }
}

static void build_group_table(shared *sh, gstate *g, tl_table *t)
{
    const aq_plan *p = sh->p;
    size_t nk = p->nby;
    for (size_t k = 0; k < nk; k++) tl_table_add_col(t, p->by[k].display, out_type_of(&p->by[k]));
    for (size_t k = 0; k < p->nagg; k++) {
        const aq_aggdef *ad = &p->agg[k];
        tl_type ty = TL_F64;
        if (ad->fn == AQ_A_COUNT || ad->fn == AQ_A_NUNIQUE) ty = TL_I64;
        else if ((ad->fn == AQ_A_SUM || ad->fn == AQ_A_MIN || ad->fn == AQ_A_MAX) && g->acc[k].isint) ty = TL_I64;
        tl_table_add_col(t, ad->name, ty);
    }
    tl_table_set_nrows(t, g->ng);
    for (size_t q = 0; q < g->ng; q++) {
        for (size_t k = 0; k < nk; k++) {
            uint64_t c = g->keys[q * nk + k];
            switch (t->cols[k].type) {
            case TL_STR: if (c) tl_table_set_str_ref(t, k, q, sh->pool.text[c]); break;
            case TL_I64: if ((int64_t)c != INT64_MIN) tl_table_set_i64(t, k, q, (int64_t)c); break;
            default: { double d; memcpy(&d, &c, 8); tl_table_set_f64(t, k, q, d); break; }
            }
        }
        for (size_t k = 0; k < p->nagg; k++) {
            const acc *a = &g->acc[k];
            size_t col = nk + k;
            int64_t n = a->cnt[q];
            switch (p->agg[k].fn) {
            case AQ_A_COUNT: tl_table_set_i64(t, col, q, n); break;
            case AQ_A_SUM:
                if (n) { if (a->isint) tl_table_set_i64(t, col, q, a->isum[q]); else tl_table_set_f64(t, col, q, a->fsum[q]); }
                break;
            case AQ_A_MEAN:
                if (n) tl_table_set_f64(t, col, q, a->isint ? (double)a->isum[q] / (double)n : a->fsum[q] / (double)n);
                break;
            case AQ_A_MIN: case AQ_A_MAX: {
                int mx = p->agg[k].fn == AQ_A_MAX;
                if (!n) break;
                if (a->isint) tl_table_set_i64(t, col, q, mx ? a->imax[q] : a->imin[q]);
                else tl_table_set_f64(t, col, q, mx ? a->fmax[q] : a->fmin[q]);
                break;
            }
            case AQ_A_STD:
                if (n > 1) tl_table_set_f64(t, col, q, tl_welford_std(&a->w[q], 1));
                break;
            case AQ_A_MEDIAN: case AQ_A_PCT:
                if (a->vals[q].n) tl_table_set_f64(t, col, q, tl_quantile_linear(a->vals[q].v, a->vals[q].n, p->agg[k].q));
                break;
            case AQ_A_NUNIQUE: break;
            }
        }
    }
    for (size_t k = 0; k < p->nagg; k++) {
        if (p->agg[k].fn != AQ_A_NUNIQUE) continue;
        for (size_t q = 0; q < g->ng; q++) tl_table_set_i64(t, nk + k, q, 0);
        const tl_bmap *s = &g->acc[k].set;
        for (size_t i = 0; i < s->cap; i++)
            if (s->used[i]) t->cols[nk + k].v.i[((const gcode *)(s->keys + i * s->keylen))->g]++;
    }
}

typedef struct sortspec {
    const tl_table *t;
    size_t *cols;
    int *desc;
    size_t n;
} sortspec;

static int cell_cmp(const tl_table *t, size_t c, size_t a, size_t b)
{
    int ma = tl_table_is_missing(t, c, a), mb = tl_table_is_missing(t, c, b);
    if (ma || mb) return ma - mb; /* missing sorts last either way */
    const tl_column *col = &t->cols[c];
    switch (col->type) {
    case TL_STR: {
        /* numbers held as text (labels such as bs=16) sort by value */
        const char *x = col->v.s[a], *y = col->v.s[b];
        char *ex, *ey;
        double dx = strtod(x, &ex), dy = strtod(y, &ey);
        if (ex != x && ey != y && !*ex && !*ey && dx != dy) return dx < dy ? -1 : 1;
        return strcmp(x, y);
    }
    case TL_I64: return col->v.i[a] < col->v.i[b] ? -1 : col->v.i[a] > col->v.i[b];
    case TL_F64: return col->v.f[a] < col->v.f[b] ? -1 : col->v.f[a] > col->v.f[b];
    case TL_BOOL: return (int)col->v.b[a] - (int)col->v.b[b];
    }
    return 0;
}

static int row_cmp(const void *x, const void *y, void *ctx)
{
    const sortspec *s = ctx;
    size_t a = *(const size_t *)x, b = *(const size_t *)y;
    for (size_t k = 0; k < s->n; k++) {
        int ma = tl_table_is_missing(s->t, s->cols[k], a), mb = tl_table_is_missing(s->t, s->cols[k], b);
        int c;
        if (ma || mb) c = ma - mb;
        else {
            c = cell_cmp(s->t, s->cols[k], a, b);
            if (s->desc[k]) c = -c;
        }
        if (c) return c;
    }
    return a < b ? -1 : a > b;
}

static long find_out_col(const tl_table *t, const char *name)
{
    long c = tl_table_col(t, name);
    if (c >= 0) return c;
    for (size_t i = 0; i < t->ncols; i++)
        if (!strcasecmp(t->cols[i].name, name)) return (long)i;
    char a[256], b[256];
    aq_norm_name(name, a, sizeof a);
    for (size_t i = 0; i < t->ncols; i++) {
        aq_norm_name(t->cols[i].name, b, sizeof b);
        if (!strcmp(a, b)) return (long)i;
    }
    return -1;
}

static int sort_and_limit(aq_plan *p, tl_table *t, const char *sort_text, tl_err *err)
{
    sortspec s = {t, tl_xmalloc((p->nsort + t->ncols + 1) * sizeof(size_t)), tl_xmalloc((p->nsort + t->ncols + 1) * sizeof(int)), 0};
    for (size_t k = 0; k < p->nsort; k++) {
        long c = find_out_col(t, p->sort[k].name);
        if (c < 0) {
            char cols[600];
            size_t n = 0;
            cols[0] = 0;
            for (size_t i = 0; i < t->ncols && n + 80 < sizeof cols; i++)
                n += (size_t)snprintf(cols + n, sizeof cols - n, "%s%s", i ? ", " : "", t->cols[i].name);
            free(s.cols); free(s.desc);
            return aq_errtok(err, "--sort", sort_text, p->sort[k].pos, p->sort[k].len,
                             "'%s' is not a result column (result columns: %s)", p->sort[k].name, cols);
        }
        s.cols[s.n] = (size_t)c;
        s.desc[s.n++] = p->sort[k].desc;
    }
    if (p->group_mode) {
        if (!p->nsort && p->nagg) {
            /* default: biggest first by the first aggregate */
            s.cols[s.n] = p->nby;
            s.desc[s.n++] = 1;
        }
        for (size_t k = 0; k < p->nby; k++) {
            s.cols[s.n] = k;
            s.desc[s.n++] = 0;
        }
    }
    size_t n = t->nrows;
    size_t keep = p->limit >= 0 && (size_t)p->limit < n ? (size_t)p->limit : n;
    if (s.n || keep < n) {
        size_t *perm = tl_xmalloc((n ? n : 1) * sizeof *perm);
        for (size_t i = 0; i < n; i++) perm[i] = i;
        if (s.n) qsort_r(perm, n, sizeof *perm, row_cmp, &s);
        tl_table_permute(t, perm, keep);
        free(perm);
    }
    free(s.cols);
    free(s.desc);
    return TL_OK;
}

/* ---- planning ---------------------------------------------------------------- */
static int plan_build(const tl_adhoc_query *q, aq_plan *p, tl_err *err)
{
    memset(p, 0, sizeof *p);
    tl_arena_init(&p->arena, 16 * 1024);
    const char *tname = q->table && *q->table ? q->table : "kernels";
    p->tab = aq_table_find(tname);
    if (!p->tab) {
        char list[400];
        size_t n = 0;
        list[0] = 0;
        for (size_t i = 0; aq_table_at(i); i++)
            n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", i ? ", " : "", aq_table_at(i)->name);
        return tl_errf(err, TL_EUSAGE, "--table: unknown table '%s' (tables: %s)", tname, list);
    }
    p->limit = q->limit;
    aq_parse_ctx pc = {p->tab, NULL, NULL, &p->arena};
    int rc;
    if (q->where && *q->where) {
        pc.what = "--where";
        pc.text = q->where;
        if ((rc = aq_parse_where(&pc, &p->where, err))) return rc;
    }
    if (q->by && *q->by) {
        pc.what = "--by";
        pc.text = q->by;
        if ((rc = aq_parse_cols(&pc, &p->by, &p->nby, err))) return rc;
    }
    if (q->pivot && *q->pivot) {
        aq_colref *pv;
        size_t npv;
        pc.what = "--pivot";
        pc.text = q->pivot;
        if ((rc = aq_parse_cols(&pc, &pv, &npv, err))) return rc;
        if (npv != 1) return tl_errf(err, TL_EUSAGE, "--pivot takes one column, got '%s'", q->pivot);
        aq_colref *nb = tl_arena_alloc(&p->arena, (p->nby + 1) * sizeof *nb);
        if (p->nby) memcpy(nb, p->by, p->nby * sizeof *nb);
        nb[p->nby++] = pv[0];
        p->by = nb;
        p->pivot = 1;
        p->limit = -1; /* the limit counts pivoted rows */
    }
    if (q->agg && *q->agg) {
        pc.what = "--agg";
        pc.text = q->agg;
        if ((rc = aq_parse_aggs(&pc, &p->agg, &p->nagg, err))) return rc;
    }
    p->group_mode = p->nby || p->nagg;
    if (p->group_mode && !p->nagg) {
        pc.what = "--agg";
        pc.text = "count";
        if ((rc = aq_parse_aggs(&pc, &p->agg, &p->nagg, err))) return rc;
    }
    if (q->select && *q->select && p->group_mode)
        return tl_errf(err, TL_EUSAGE, "--select lists row columns; with --by/--agg the result columns are the group keys and aggregates");
    if (!p->group_mode) {
        pc.what = "--select";
        pc.text = q->select && *q->select ? q->select : p->tab->default_select;
        if ((rc = aq_parse_cols(&pc, &p->sel, &p->nsel, err))) return rc;
    }
    if (q->sort && *q->sort) {
        pc.what = "--sort";
        pc.text = q->sort;
        if ((rc = aq_parse_sort(&pc, &p->sort, &p->nsort, err))) return rc;
        if (!p->group_mode) {
            /* row mode: a sort column not selected is added to the output */
            for (size_t k = 0; k < p->nsort; k++) {
                int found = 0;
                char a1[256], b1[256];
                aq_norm_name(p->sort[k].name, a1, sizeof a1);
                for (size_t c = 0; c < p->nsel && !found; c++) {
                    aq_norm_name(p->sel[c].display, b1, sizeof b1);
                    found = !strcmp(a1, b1);
                }
                if (found) continue;
                aq_colref cr;
                char hint[600];
                if (aq_resolve_col(p->tab, p->sort[k].name, &cr, &p->arena, hint, sizeof hint))
                    return aq_errtok(err, "--sort", q->sort, p->sort[k].pos, p->sort[k].len, "unknown column '%s' in table %s%s",
                                     p->sort[k].name, p->tab->name, hint);
                aq_colref *ns = tl_arena_alloc(&p->arena, (p->nsel + 1) * sizeof *ns);
                memcpy(ns, p->sel, p->nsel * sizeof *ns);
                ns[p->nsel++] = cr;
                p->sel = ns;
            }
        }
    }
    return TL_OK;
}

static void plan_free(aq_plan *p)
{
    aq_expr_free(p->where);
    tl_arena_free(&p->arena);
}

static int auto_threads(size_t ntraces, int cores)
{
    long c = cores ? cores : sysconf(_SC_NPROCESSORS_ONLN);
    if (c < 1) c = 1;
    if (c > 16) c = 16;
    if ((size_t)c > ntraces) c = (long)(ntraces ? ntraces : 1);
    return (int)c;
}

/* The sorted result's last steps: the pivot (and then the limit on its
 * rows) and the time unit. Returns the table to hand out (t or its
 * pivoted replacement). */
static tl_table *finish(const aq_plan *p, const tl_adhoc_query *q, tl_table *t)
{
    size_t nout = p->group_mode ? p->nby + p->nagg : p->nsel;
    size_t *src = tl_xmalloc((t->ncols + t->ncols * t->nrows + 1) * sizeof *src);
    for (size_t c = 0; c < t->ncols; c++) src[c] = c;
    if (p->pivot) {
        /* label values are named with their key: "bs=8" */
        const aq_colref *pv = &p->by[p->nby - 1];
        char prefix[300] = "";
        if (pv->def->src == AQ_S_LABEL) snprintf(prefix, sizeof prefix, "%s=", pv->arg);
        tl_table *pt = aq_pivot(t, p->nby - 1, p->nagg, prefix, src);
        tl_table_free(t);
        t = pt;
        if (q->limit >= 0 && (size_t)q->limit < t->nrows) t->nrows = (size_t)q->limit;
    }
    const char *unit;
    double div;
    if (q->units && !tl_adhoc_unit(q->units, &unit, &div) && div != 1) {
        uint8_t *is_time = tl_xcalloc(t->ncols ? t->ncols : 1, 1);
        for (size_t c = 0; c < t->ncols; c++) {
            size_t k = src[c];
            if (k >= nout) continue; /* columns of the catalog listing */
            if (!p->group_mode) is_time[c] = (uint8_t)aq_colref_is_time(&p->sel[k]);
            else if (k < p->nby) is_time[c] = (uint8_t)aq_colref_is_time(&p->by[k]);
            else {
                const aq_aggdef *ad = &p->agg[k - p->nby];
                is_time[c] = ad->fn != AQ_A_COUNT && ad->fn != AQ_A_NUNIQUE && !ad->star && aq_colref_is_time(&ad->col);
            }
        }
        tl_adhoc_convert_times(t, is_time, unit, div);
        free(is_time);
    }
    free(src);
    return t;
}

int tl_adhoc_run(tl_store *s, const tl_adhoc_query *q, tl_table **out, tl_err *err)
{
    *out = NULL;
    aq_plan p;
    int rc = plan_build(q, &p, err);
    if (rc) { plan_free(&p); return rc; }
    tl_reader *r;
    if ((rc = tl_reader_open(s, &r, err))) { plan_free(&p); return rc; }
    aq_catalog cat;
    if ((rc = aq_catalog_load(r, &cat, err))) { tl_reader_close(r); plan_free(&p); return rc; }
    uint8_t *keep = tl_xmalloc(cat.v.n ? cat.v.n : 1);
    rc = aq_select_traces(r, &cat, q->traces, q->ntraces, keep, err);
    size_t nsel = 0;
    if (!rc)
        for (size_t i = 0; i < cat.v.n; i++) {
            if (keep[i] && p.where && !trace_passes(p.where, &cat.v.v[i], &cat.arena)) keep[i] = 0;
            nsel += keep[i];
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
    aq_pool_init(&sh.pool, &t->arena);
    pthread_mutex_init(&sh.pool_mu, NULL);
    pthread_mutex_init(&sh.next_mu, NULL);
    if (!rc) {
        int nth = q->threads > 0 ? q->threads : auto_threads(nsel, q->cores);
        if (!p.group_mode) nth = 1; /* rows come out in trace order */
        /* the report code was not written for concurrent use: one worker */
        if (p.tab->kind == AQ_TAB_REPORT) nth = 1;
        if (!p.group_mode && p.tab->kind == AQ_TAB_TRACES && !(q->select && *q->select) && cat.label_keys.n) {
            /* the catalog listing shows every label key by default */
            aq_colref *ns = tl_arena_alloc(&p.arena, (p.nsel + cat.label_keys.n) * sizeof *ns);
            memcpy(ns, p.sel, p.nsel * sizeof *ns);
            for (size_t k = 0; k < cat.label_keys.n; k++) {
                char nm[300];
                snprintf(nm, sizeof nm, "label.%s", cat.label_keys.v[k]);
                if (aq_resolve_col(p.tab, nm, &ns[p.nsel], &p.arena, NULL, 0) == 0) p.nsel++;
            }
            p.sel = ns;
        }
        if (!p.group_mode)
            for (size_t c = 0; c < p.nsel; c++) tl_table_add_col(t, p.sel[c].display, out_type_of(&p.sel[c]));
        worker *ws = tl_xcalloc((size_t)nth, sizeof *ws);
        for (int i = 0; i < nth; i++) {
            ws[i].sh = &sh;
            if (p.group_mode) gstate_init(&ws[i].g, &p);
        }
        if (p.group_mode && !p.nby) { uint64_t z = 0; group_of(&ws[0].g, &p, &z); }
        sh.threaded = nth > 1;
        if (nth == 1) {
            worker_main(&ws[0]);
        } else {
            pthread_t *th = tl_xmalloc((size_t)nth * sizeof *th);
            for (int i = 0; i < nth; i++) pthread_create(&th[i], NULL, worker_main, &ws[i]);
            for (int i = 0; i < nth; i++) pthread_join(th[i], NULL);
            free(th);
        }
        rc = sh.rc;
        if (rc) *err = sh.err;
        else if (q->cancel && *q->cancel) rc = tl_errf(err, TL_EINTR_ADHOC, "interrupted");
        if (!rc && p.group_mode) {
            for (int i = 1; i < nth; i++) merge_into(&ws[0].g, &ws[i].g, &p);
            build_group_table(&sh, &ws[0].g, t);
        }
        if (p.group_mode)
            for (int i = 0; i < nth; i++) gstate_free(&ws[i].g);
        free(ws);
    }
    if (!rc) rc = sort_and_limit(&p, t, q->sort, err);
    if (!rc) t = finish(&p, q, t);
    aq_pool_free(&sh.pool);
    pthread_mutex_destroy(&sh.pool_mu);
    pthread_mutex_destroy(&sh.next_mu);
    free(keep);
    aq_catalog_free(&cat);
    tl_reader_close(r);
    plan_free(&p);
    if (rc) { tl_table_free(t); return rc; }
    *out = t;
    return TL_OK;
}
