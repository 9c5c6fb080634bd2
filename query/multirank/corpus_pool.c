/* corpus_pool.c — the pooled op-group sheets of the multi-configuration
 * workbook (cp_group_sheet): every rank's rows of a group, concatenated in
 * rank order, grouped by name and parameters and summarised per group, as
 * the reference's summarize_df_perf_metrics does over the concatenation.
 *
 * The pooling runs on threads in parallel steps around a short merge:
 *   1. per rank: its distinct models (params arrays) and distinct (name,
 *      model) pairs by first appearance, each row's pair, each pair's rows;
 *   2. the merge, on the caller's thread, over models and pairs only (a
 *      few per rank, not rows): the param columns, their types and each
 *      pair's group, in order of first appearance in the concatenation,
 *      and where each rank's rows go in each group's row list;
 *   3. per rank: its rows into their groups' lists, so each list is in
 *      concatenation order (the order the statistics are summed in);
 *   4. per group: the statistics and the kernel summary text;
 * then the table is filled in the groups' sorted order (one row per
 * group). Rows of one pair always share a group, so this is the one-pass
 * grouping of the concatenated rows, byte for byte. */
#include "query/multirank/corpus_internal.h"
#include "query/core/stats.h"
#include "base/profile.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* fewer rows than this are pooled on the caller's thread alone */
#define PARALLEL_MIN_ROWS 4096
#define POOLING "corpus: op-group pooling"

enum { CT_STR, CT_BOOL, CT_I64, CT_F64 };

/* A row's value of key (its first param of that key), or NULL. */
static const cp_param *param_of(const cp_row *r, const char *key)
{
    for (size_t i = 0; i < r->np; i++)
        if (!strcmp(r->p[i].key, key)) return &r->p[i];
    return NULL;
}

/* The column type pandas gives a param column over all rows. */
static int param_type(const cp_row *const *rows, size_t n, const char *key)
{
    int missing = 0, b = 0, in = 0, fl = 0, other = 0;
    for (size_t r = 0; r < n; r++) {
        const cp_param *p = param_of(rows[r], key);
        int k = p ? p->kind : CP_NA;
        missing |= k == CP_NA, b |= k == CP_BOOL, in |= k == CP_INT, fl |= k == CP_FLOAT, other |= k == CP_OTHER;
    }
    if (other || (b && (in || fl))) return CT_STR;
    if (b) return missing ? CT_STR : CT_BOOL;
    if (in || fl) return fl || missing ? CT_F64 : CT_I64;
    return CT_STR;
}

/* Statistics of a group over non-NaN values: pandas' group-by mean (Kahan),
 * sample std (Welford) and sum. */
typedef struct gstat {
    tl_kahan sum;
    tl_welford w;
    size_t n;
} gstat;

static void gstat_add(gstat *s, double x)
{
    if (isnan(x)) return;
    tl_kahan_add(&s->sum, x);
    tl_welford_add(&s->w, x);
    s->n++;
}
static double gstat_mean(const gstat *s) { return s->n ? s->sum.sum / (double)s->n : NAN; }
static double gstat_std(const gstat *s) { return s->n > 1 ? tl_welford_std(&s->w, 1) : NAN; }

/* TreePerfAnalyzer._summarize_kernel_stats(agg_metrics=["mean", "std"]):
 * kernel lists aligned by position against the group's first non-empty
 * list; lists of another length (empty ones too) are left out. */
static void kernel_stats(tl_buf *b, const cp_row *const *rows, size_t n)
{
    const cp_row *tpl = NULL;
    for (size_t r = 0; r < n && !tpl; r++)
        if (rows[r]->nk) tpl = rows[r];
    if (!tpl) {
        tl_buf_puts(b, "[]");
        return;
    }
    double *d = tl_xmalloc(n * sizeof *d);
    char num[40];
    tl_buf_putc(b, '[');
    for (size_t k = 0; k < tpl->nk; k++) {
        size_t m = 0;
        for (size_t r = 0; r < n; r++)
            if (rows[r]->nk == tpl->nk) d[m++] = rows[r]->k[k].dur;
        if (k) tl_buf_puts(b, ", ");
        tl_buf_puts(b, "{'name': ");
        tl_buf_pystr(b, tpl->k[k].name, strlen(tpl->k[k].name));
        if (tpl->k[k].has_stream) tl_buf_printf(b, ", 'stream': %lld", (long long)tpl->k[k].stream);
        else tl_buf_puts(b, ", 'stream': None");
        tl_buf_printf(b, ", 'count': %zu", m);
        tl_fmt_pyfloat(tl_sum_pairwise(d, m), num);
        tl_buf_printf(b, ", 'total_duration_us': %s", num);
        tl_fmt_pyfloat(tl_mean_pairwise(d, m), num);
        tl_buf_printf(b, ", 'mean_duration_us': %s", num);
        tl_fmt_pyfloat(tl_std_pairwise(d, m, 0), num);
        tl_buf_printf(b, ", 'std_dev_duration_us': %s}", num);
    }
    tl_buf_putc(b, ']');
    free(d);
}

/* The group's key: name and every param column's value (NA as one value). */
static void group_key(tl_buf *b, const cp_row *r, const char *const *keys, const int *types, size_t nkeys)
{
    b->n = 0;
    tl_buf_puts(b, r->name);
    for (size_t k = 0; k < nkeys; k++) {
        const cp_param *p = param_of(r, keys[k]);
        tl_buf_putc(b, '\x1f');
        if (!p || p->kind == CP_NA) tl_buf_putc(b, '\x01');
        else if (types[k] == CT_F64 || types[k] == CT_I64) tl_buf_printf(b, "%.17g", strtod(p->text, NULL));
        else tl_buf_puts(b, p->text);
    }
    tl_buf_putc(b, 0);
}

typedef struct cgroup {
    TL_VEC(const cp_row *) rows;
    double ksum;
    int64_t uid;
    size_t first; /* order of first appearance */
} cgroup;
typedef TL_VEC(cgroup) cgroups;

static _Thread_local const cgroup *sort_groups; /* for cmp_groups, during the qsort */
static int cmp_groups(const void *x, const void *y)
{
    const cgroup *a = &sort_groups[*(const size_t *)x], *b = &sort_groups[*(const size_t *)y];
    if (a->ksum != b->ksum) return a->ksum > b->ksum ? -1 : 1;
    if (a->uid != b->uid) return a->uid < b->uid ? -1 : 1;
    return a->first < b->first ? -1 : a->first > b->first;
}

static void set_num(tl_table *t, size_t c, size_t r, double v)
{
    if (!isnan(v)) tl_table_set_f64(t, c, r, v);
}

static const char *first_text(const cgroup *g, size_t off)
{
    for (size_t i = 0; i < g->rows.n; i++) {
        const char *s = *(const char *const *)((const char *)g->rows.v[i] + off);
        if (s) return s;
    }
    return NULL;
}

static double first_num(const cgroup *g, size_t off)
{
    for (size_t i = 0; i < g->rows.n; i++) {
        double v = *(const double *)((const char *)g->rows.v[i] + off);
        if (!isnan(v)) return v;
    }
    return NAN;
}

/* ---- pointer pairs to numbers: the models and (name, model) pairs */

typedef struct pair_key {
    const void *a, *b;
} pair_key;

/* The value slot of (a, b) in m (a tl_bmap of pair_key). */
static size_t *pair_slot(tl_bmap *m, const void *a, const void *b, int *isnew)
{
    pair_key k = {a, b};
    return tl_bmap_put(m, &k, isnew);
}

/* ---- the steps */

/* One rank's part of the pool. */
typedef struct rank_pool {
    const cp_rows *rows;
    TL_VEC(const cp_row *) models; /* each model's first row */
    TL_VEC(const cp_row *) pairs;  /* each pair's first row */
    size_t *pair_rows;             /* rows per pair */
    uint32_t *pair_of;             /* each row's pair */
    size_t *group_of;              /* each pair's group (the merge) */
    size_t *at;                    /* per group: where the next of this rank's rows goes in its list */
} rank_pool;

typedef struct pool_ctx {
    rank_pool *rp;
    cgroup *groups;
    struct gsum *sums;
} pool_ctx;

/* step 1 */
static void scan_rank(void *arg, size_t r)
{
    rank_pool *rp = &((pool_ctx *)arg)->rp[r];
    tl_bmap models, pairs;
    tl_bmap_init(&models, sizeof(pair_key), 64);
    tl_bmap_init(&pairs, sizeof(pair_key), 64);
    rp->pair_of = tl_xmalloc((rp->rows->n ? rp->rows->n : 1) * sizeof *rp->pair_of);
    TL_VEC(size_t) counts = {0};
    for (size_t i = 0; i < rp->rows->n; i++) {
        const cp_row *x = &rp->rows->v[i];
        int isnew;
        pair_slot(&models, x->p, NULL, &isnew);
        if (isnew) tl_vec_push(&rp->models, x);
        size_t *pi = pair_slot(&pairs, x->name, x->p, &isnew);
        if (isnew) {
            *pi = rp->pairs.n;
            tl_vec_push(&rp->pairs, x);
            tl_vec_push(&counts, (size_t)0);
        }
        rp->pair_of[i] = (uint32_t)*pi;
        counts.v[*pi]++;
    }
    rp->pair_rows = counts.v;
    tl_bmap_free(&models);
    tl_bmap_free(&pairs);
}

/* step 3 */
static void place_rows(void *arg, size_t r)
{
    pool_ctx *c = arg;
    rank_pool *rp = &c->rp[r];
    for (size_t i = 0; i < rp->rows->n; i++) {
        size_t gi = rp->group_of[rp->pair_of[i]];
        c->groups[gi].rows.v[rp->at[gi]++] = &rp->rows->v[i];
    }
}

/* One group's summary (step 4), in STAT_COLS order. */
typedef struct gsum {
    double first[3], tb[2], tf[2], ntf[2], nkt_sum, kt[2], kt_sum;
    tl_buf kd;
    const char *args[4];
} gsum;

static void sum_group(void *arg, size_t gi)
{
    pool_ctx *c = arg;
    const cgroup *g = &c->groups[gi];
    gsum *o = &c->sums[gi];
    gstat tb = {0}, tf = {0}, ntf = {0}, nkt = {0}, kt = {0};
    tl_kahan ks = {0, 0};
    for (size_t i = 0; i < g->rows.n; i++) {
        const cp_row *x = g->rows.v[i];
        gstat_add(&tb, x->tbs), gstat_add(&tf, x->tflops), gstat_add(&ntf, x->ndm_tflops);
        gstat_add(&nkt, x->ndm_kt), gstat_add(&kt, x->kt);
        tl_kahan_add(&ks, x->kt);
    }
    c->groups[gi].ksum = ks.sum;
    o->first[0] = first_num(g, offsetof(cp_row, gflops));
    o->first[1] = first_num(g, offsetof(cp_row, mb));
    o->first[2] = first_num(g, offsetof(cp_row, fpb));
    o->tb[0] = gstat_mean(&tb), o->tb[1] = gstat_std(&tb);
    o->tf[0] = gstat_mean(&tf), o->tf[1] = gstat_std(&tf);
    o->ntf[0] = gstat_mean(&ntf), o->ntf[1] = gstat_std(&ntf);
    o->nkt_sum = nkt.sum.sum;
    kernel_stats(&o->kd, g->rows.v, g->rows.n);
    static const size_t ARGS[] = {offsetof(cp_row, dims), offsetof(cp_row, types), offsetof(cp_row, strides),
                                  offsetof(cp_row, concrete)};
    for (size_t k = 0; k < 4; k++) o->args[k] = first_text(g, ARGS[k]);
    o->kt[0] = gstat_mean(&kt), o->kt[1] = gstat_std(&kt);
    o->kt_sum = kt.sum.sum;
}

/* The statistic columns of one group's row r. */
static void fill_stats(tl_table *t, size_t col, size_t r, const cgroup *g, const gsum *o)
{
    for (size_t k = 0; k < 3; k++) set_num(t, col++, r, o->first[k]);
    set_num(t, col++, r, o->tb[0]), set_num(t, col++, r, o->tb[1]);
    set_num(t, col++, r, o->tf[0]), set_num(t, col++, r, o->tf[1]);
    set_num(t, col++, r, o->ntf[0]), set_num(t, col++, r, o->ntf[1]);
    tl_table_set_f64(t, col++, r, o->nkt_sum);
    tl_table_set_strn(t, col++, r, o->kd.p, o->kd.n);
    for (size_t k = 0; k < 4; k++, col++)
        if (o->args[k]) tl_table_set_str(t, col, r, o->args[k]);
    set_num(t, col++, r, o->kt[0]), set_num(t, col++, r, o->kt[1]);
    tl_table_set_f64(t, col++, r, o->kt_sum);
    tl_table_set_i64(t, col++, r, (int64_t)g->rows.n);
    tl_table_set_i64(t, col++, r, g->uid);
}

/* The summary columns after the params, in the reference's order. */
static const struct {
    const char *name;
    tl_type type;
} STAT_COLS[] = {
    {"GFLOPS_first", TL_F64}, {"Data Moved (MB)_first", TL_F64}, {"FLOPS/Byte_first", TL_F64},
    {"TB/s_mean", TL_F64}, {"TB/s_std", TL_F64}, {"TFLOPS/s_mean", TL_F64}, {"TFLOPS/s_std", TL_F64},
    {"Non-Data-Mov TFLOPS/s_mean", TL_F64}, {"Non-Data-Mov TFLOPS/s_std", TL_F64},
    {"Non-Data-Mov Kernel Time (µs)_sum", TL_F64}, {"kernel_details__summarize_kernel_stats", TL_STR},
    {"Input Dims_first", TL_STR}, {"Input type_first", TL_STR}, {"Input Strides_first", TL_STR},
    {"Concrete Inputs_first", TL_STR}, {"Kernel Time (µs)_mean", TL_F64}, {"Kernel Time (µs)_std", TL_F64},
    {"Kernel Time (µs)_sum", TL_F64}, {"name_count", TL_I64}, {"UID_first", TL_I64},
};

/* The table's param cells of row r from the group's first row. */
static void fill_params(tl_table *t, size_t r, const cp_row *x, const char *const *keys, const int *types,
                        size_t nkeys)
{
    for (size_t k = 0; k < nkeys; k++) {
        const cp_param *p = param_of(x, keys[k]);
        if (!p || p->kind == CP_NA) continue;
        if (types[k] == CT_I64) tl_table_set_i64(t, 1 + k, r, strtoll(p->text, NULL, 10));
        else if (types[k] == CT_F64) tl_table_set_f64(t, 1 + k, r, strtod(p->text, NULL));
        else if (types[k] == CT_BOOL) tl_table_set_bool(t, 1 + k, r, !strcmp(p->text, "True"));
        else tl_table_set_str(t, 1 + k, r, p->text);
    }
}


/* The param columns (first appearance) and their types, from the models
 * in order of first appearance in the concatenation. */
typedef struct pool_keys {
    TL_VEC(const char *) keys;
    int *types;
} pool_keys;

static void merge_keys(const rank_pool *rp, size_t n, pool_keys *pk)
{
    tl_bmap seen;
    tl_bmap_init(&seen, sizeof(pair_key), 64);
    TL_VEC(const cp_row *) reps = {0};
    for (size_t r = 0; r < n; r++)
        for (size_t i = 0; i < rp[r].models.n; i++) {
            const cp_row *x = rp[r].models.v[i];
            int isnew;
            pair_slot(&seen, x->p, NULL, &isnew);
            if (!isnew) continue;
            tl_vec_push(&reps, x);
            for (size_t p = 0; p < x->np; p++) {
                size_t k = 0;
                while (k < pk->keys.n && strcmp(pk->keys.v[k], x->p[p].key)) k++;
                if (k == pk->keys.n) tl_vec_push(&pk->keys, x->p[p].key);
            }
        }
    pk->types = tl_xmalloc((pk->keys.n ? pk->keys.n : 1) * sizeof *pk->types);
    for (size_t k = 0; k < pk->keys.n; k++) pk->types[k] = param_type(reps.v, reps.n, pk->keys.v[k]);
    tl_vec_free(&reps);
    tl_bmap_free(&seen);
}

/* Each pair's group (groups numbered by first appearance; rows of pairs
 * with the same name text and param values share one), then each rank's
 * place in each group's row list. */
static void merge_groups(rank_pool *rp, size_t n, const pool_keys *pk, cgroups *G)
{
    tl_smap m = {0};
    tl_buf key = {0};
    for (size_t r = 0; r < n; r++) {
        rp[r].group_of = tl_xmalloc((rp[r].pairs.n ? rp[r].pairs.n : 1) * sizeof *rp[r].group_of);
        for (size_t j = 0; j < rp[r].pairs.n; j++) {
            const cp_row *x = rp[r].pairs.v[j];
            group_key(&key, x, pk->keys.v, pk->types, pk->keys.n);
            size_t *slot = tl_smap_get(&m, key.p, strlen(key.p)), gi;
            if (slot) {
                gi = *slot;
            } else {
                int isnew;
                gi = G->n;
                *tl_smap_put(&m, tl_xstrdup(key.p), strlen(key.p), &isnew) = gi;
                cgroup z = {.uid = x->uid, .first = gi};
                tl_vec_push(G, z);
            }
            rp[r].group_of[j] = gi;
        }
    }
    for (size_t i = 0; i < m.cap; i++) free((void *)m.keys[i]);
    tl_smap_free(&m);
    tl_buf_free(&key);
    /* rows per rank and group, then each rank's offset in each list */
    size_t *total = tl_xcalloc(G->n ? G->n : 1, sizeof *total);
    for (size_t r = 0; r < n; r++) {
        rp[r].at = tl_xcalloc(G->n ? G->n : 1, sizeof *rp[r].at);
        for (size_t j = 0; j < rp[r].pairs.n; j++) rp[r].at[rp[r].group_of[j]] += rp[r].pair_rows[j];
        for (size_t gi = 0; gi < G->n; gi++) {
            size_t c = rp[r].at[gi];
            rp[r].at[gi] = total[gi];
            total[gi] += c;
        }
    }
    for (size_t gi = 0; gi < G->n; gi++) {
        tl_vec_reserve(&G->v[gi].rows, total[gi] ? total[gi] : 1);
        G->v[gi].rows.n = total[gi];
    }
    free(total);
}

static void rank_pools_free(rank_pool *rp, size_t n)
{
    for (size_t r = 0; r < n; r++) {
        tl_vec_free(&rp[r].models);
        tl_vec_free(&rp[r].pairs);
        free(rp[r].pair_rows), free(rp[r].pair_of), free(rp[r].group_of), free(rp[r].at);
    }
    free(rp);
}

/* The sheet: name, params, statistics, in the groups' sorted order. */
static tl_table *group_table(size_t g, const cgroups *G, const gsum *sums, const pool_keys *pk)
{
    size_t *perm = tl_xmalloc((G->n ? G->n : 1) * sizeof *perm);
    for (size_t i = 0; i < G->n; i++) perm[i] = i;
    sort_groups = G->v;
    qsort(perm, G->n, sizeof *perm, cmp_groups);
    tl_table *t = tl_table_new(cp_group_name(g));
    tl_table_add_col(t, "name", TL_STR);
    static const tl_type CT[] = {[CT_STR] = TL_STR, [CT_BOOL] = TL_BOOL, [CT_I64] = TL_I64, [CT_F64] = TL_F64};
    char cn[160];
    for (size_t k = 0; k < pk->keys.n; k++) {
        snprintf(cn, sizeof cn, "param: %s", pk->keys.v[k]);
        tl_table_add_col(t, cn, CT[pk->types[k]]);
    }
    size_t c0 = t->ncols;
    for (size_t k = 0; k < sizeof STAT_COLS / sizeof *STAT_COLS; k++)
        tl_table_add_col(t, STAT_COLS[k].name, STAT_COLS[k].type);
    size_t c_cum = tl_table_add_col(t, "kernel_time_sum_cum_pct", TL_F64);
    tl_table_set_nrows(t, G->n);
    double *ks = tl_xmalloc((G->n ? G->n : 1) * sizeof *ks);
    for (size_t r = 0; r < G->n; r++) {
        const cgroup *x = &G->v[perm[r]];
        tl_table_set_str(t, 0, r, x->rows.v[0]->name);
        fill_params(t, r, x->rows.v[0], pk->keys.v, pk->types, pk->keys.n);
        fill_stats(t, c0, r, x, &sums[perm[r]]);
        ks[r] = x->ksum;
    }
    /* Series.cumsum() / Series.sum() (NumPy's pairwise sum) */
    double total = tl_sum_pairwise(ks, G->n), run = 0;
    for (size_t r = 0; r < G->n; r++) {
        run += ks[r];
        set_num(t, c_cum, r, run / total);
    }
    free(ks);
    free(perm);
    return t;
}

tl_table *cp_group_sheet(size_t g, cp_rows *const *ranks, size_t n, int threads)
{
    size_t nrows = 0;
    rank_pool *rp = tl_xcalloc(n ? n : 1, sizeof *rp);
    for (size_t r = 0; r < n; r++) rp[r].rows = &ranks[r][g], nrows += ranks[r][g].n;
    if (!nrows) {
        rank_pools_free(rp, n);
        return NULL;
    }
    if (nrows < PARALLEL_MIN_ROWS || threads < 1) threads = 1;
    cgroups G = {0};
    pool_ctx c = {.rp = rp};
    tl_par_for(n, threads, POOLING, scan_rank, &c);
    tl_prof_span sp;
    tl_prof_begin(&sp, "corpus: op-group merge", TL_PROF_SERIAL);
    pool_keys pk = {0};
    merge_keys(rp, n, &pk);
    merge_groups(rp, n, &pk, &G);
    tl_prof_end(&sp);
    c.groups = G.v;
    c.sums = tl_xcalloc(G.n ? G.n : 1, sizeof *c.sums);
    tl_par_for(n, threads, POOLING, place_rows, &c);
    tl_par_for(G.n, threads, POOLING, sum_group, &c);
    tl_prof_begin(&sp, "corpus: op-group merge", TL_PROF_SERIAL);
    tl_table *t = group_table(g, &G, c.sums, &pk);
    for (size_t i = 0; i < G.n; i++) {
        tl_vec_free(&G.v[i].rows);
        tl_buf_free(&c.sums[i].kd);
    }
    free(c.sums);
    tl_vec_free(&G);
    free(pk.types);
    tl_vec_free(&pk.keys);
    rank_pools_free(rp, n);
    tl_prof_end(&sp);
    return t;
}
