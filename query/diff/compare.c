/* compare.c — report comparison (spec diff-compare-phases.md B2-B5): the
 * outer merge with null-matching keys in sorted key order, the diff / pct
 * columns, the intersect / only-baseline / only-variant split, the sheet
 * groups with their column deletions, and the hidden-column rules of the
 * workbook. Cells keep their pandas-like types from reading (report/), so
 * an integer column that gains a null prints as floats, as pandas does. */
#include "query/diff/diff.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void tl_cmp_sheets_free(tl_cmp_sheets *s)
{
    tl_tables_free(s->v, s->n);
    s->v = NULL;
    s->n = s->cap = 0;
}

unsigned tl_compare_group(const char *w)
{
    if (!strcmp(w, "gpu_timeline")) return TL_CMP_GPU_TIMELINE;
    if (!strcmp(w, "ops_summary")) return TL_CMP_OPS_SUMMARY;
    if (!strcmp(w, "kernel_summary")) return TL_CMP_KERNEL_SUMMARY;
    if (!strcmp(w, "ops_all")) return TL_CMP_OPS_ALL;
    if (!strcmp(w, "roofline")) return TL_CMP_ROOFLINE;
    if (!strcmp(w, "all")) return TL_CMP_ALL;
    return 0;
}

/* ---- cells ----------------------------------------------------------------- */

static int missing(const tl_table *t, long c, long r)
{
    return c < 0 || r < 0 || tl_table_is_missing(t, (size_t)c, (size_t)r);
}

static int is_num(tl_type ty) { return ty != TL_STR; }

/* Key order: numbers by value, text by code point, numbers before text,
 * missing last (null keys are equal to each other). */
static int cmp_cell(const tl_table *ta, long ca, long ra, const tl_table *tb, long cb, long rb)
{
    int ma = missing(ta, ca, ra), mb = missing(tb, cb, rb);
    if (ma || mb) return ma - mb;
    tl_type x = ta->cols[ca].type, y = tb->cols[cb].type;
    if (is_num(x) && is_num(y)) {
        if (x == TL_I64 && y == TL_I64) {
            int64_t a = ta->cols[ca].v.i[ra], b = tb->cols[cb].v.i[rb];
            return a < b ? -1 : a > b;
        }
        double a = tl_table_num(ta, (size_t)ca, (size_t)ra), b = tl_table_num(tb, (size_t)cb, (size_t)rb);
        return a < b ? -1 : a > b;
    }
    if (is_num(x) != is_num(y)) return is_num(x) ? -1 : 1;
    return strcmp(ta->cols[ca].v.s[ra], tb->cols[cb].v.s[rb]);
}

/* Copies one cell into dst (types may differ: numbers widen to F64, any
 * value into a STR column as its CSV text). */
static void copy_cell(tl_table *dst, size_t dc, size_t dr, const tl_table *src, long sc, long sr)
{
    if (missing(src, sc, sr)) return; /* new cells start missing */
    const tl_column *s = &src->cols[sc];
    switch (dst->cols[dc].type) {
    case TL_STR: {
        char buf[64];
        tl_table_set_str_ref(dst, dc, dr, NULL);
        if (s->type == TL_STR) tl_table_set_str_ref(dst, dc, dr, s->v.s[sr]);
        else tl_table_set_str(dst, dc, dr, tl_table_cell_text(src, (size_t)sc, (size_t)sr, buf, sizeof buf));
        break;
    }
    case TL_I64:
        if (s->type == TL_I64) tl_table_set_i64(dst, dc, dr, s->v.i[sr]);
        else tl_table_set_i64(dst, dc, dr, (int64_t)tl_table_num(src, (size_t)sc, (size_t)sr));
        break;
    case TL_F64: tl_table_set_f64(dst, dc, dr, tl_table_num(src, (size_t)sc, (size_t)sr)); break;
    case TL_BOOL: tl_table_set_bool(dst, dc, dr, tl_table_num(src, (size_t)sc, (size_t)sr) != 0); break;
    }
}

/* String cells of result tables point into the source tables (which the
 * caller keeps alive until the results are written); tl_table_set_str_ref
 * avoids copying megabytes of kernel-detail text. */

/* ---- B2 ---------------------------------------------------------------------- */

typedef TL_VEC(int32_t) i32vec;

typedef struct mctx {
    const tl_table *const *t;
    size_t n;                 /* tables */
    long *kc;                 /* kc[k * nk + j]: key column j in table k */
    size_t nk;
    const int32_t *idx;       /* merged rows: idx[r * n + k] */
    size_t cur;               /* tables merged so far */
} mctx;

static const mctx *MC;

/* Key cell j of merged row r: from the first table that has the row. */
static void mkey(const mctx *m, size_t r, size_t j, const tl_table **t, long *c, long *row)
{
    for (size_t k = 0; k < m->cur; k++) {
        int32_t i = m->idx[r * m->n + k];
        if (i >= 0) {
            *t = m->t[k];
            *c = m->kc[k * m->nk + j];
            *row = i;
            return;
        }
    }
    *t = m->t[0];
    *c = -1;
    *row = -1;
}

static int cmp_left(const void *pa, const void *pb)
{
    size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
    for (size_t j = 0; j < MC->nk; j++) {
        const tl_table *ta, *tb;
        long ca, cb, ra, rb;
        mkey(MC, a, j, &ta, &ca, &ra);
        mkey(MC, b, j, &tb, &cb, &rb);
        int c = cmp_cell(ta, ca, ra, tb, cb, rb);
        if (c) return c;
    }
    return a < b ? -1 : a > b;
}

static const tl_table *RT;
static const long *RKC;
static size_t RNK;

static int cmp_right(const void *pa, const void *pb)
{
    size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
    for (size_t j = 0; j < RNK; j++) {
        int c = cmp_cell(RT, RKC[j], (long)a, RT, RKC[j], (long)b);
        if (c) return c;
    }
    return a < b ? -1 : a > b;
}

static int cmp_lr(const mctx *m, size_t l, const tl_table *rt, const long *rkc, size_t r)
{
    for (size_t j = 0; j < m->nk; j++) {
        const tl_table *ta;
        long ca, ra;
        mkey(m, l, j, &ta, &ca, &ra);
        int c = cmp_cell(ta, ca, ra, rt, rkc[j], (long)r);
        if (c) return c;
    }
    return 0;
}

static int diffpct_tag(const char *name, const char **tag, size_t *taglen)
{
    const char *p = strstr(name, "__");
    if (!p) return 0;
    size_t n = strlen(name);
    const char *end = NULL;
    if (n >= 5 && strcmp(name + n - 5, "_diff") == 0) end = name + n - 5;
    else if (n >= 4 && strcmp(name + n - 4, "_pct") == 0) end = name + n - 4;
    if (!end || end <= p + 2) return 0;
    if (tag) { *tag = p + 2; *taglen = (size_t)(end - (p + 2)); }
    return 1;
}

/* Appends the diff and pct columns of every metric against the first
 * report, metric-major, tag-minor; returns how many it added. */
static size_t add_diff_pct(tl_table *o, const char *const *tags, size_t n, const char *const *metrics,
                           size_t nmetrics, tl_buf *nm)
{
    size_t nrows = o->nrows, ndp = 0;
    for (size_t mi = 0; mi < nmetrics; mi++) {
        nm->n = 0;
        tl_buf_printf(nm, "%s::%s", tags[0], metrics[mi]);
        long bc = tl_table_col(o, nm->p);
        for (size_t k = 1; k < n; k++) {
            nm->n = 0;
            tl_buf_printf(nm, "%s::%s", tags[k], metrics[mi]);
            long vc = tl_table_col(o, nm->p);
            int ints = bc >= 0 && vc >= 0 && o->cols[bc].type == TL_I64 && o->cols[vc].type == TL_I64 &&
                       !o->cols[bc].as_float && !o->cols[vc].as_float;
            nm->n = 0;
            tl_buf_printf(nm, "%s__%s_diff", metrics[mi], tags[k]);
            size_t dc = tl_table_add_col(o, nm->p, ints ? TL_I64 : TL_F64);
            nm->n = 0;
            tl_buf_printf(nm, "%s__%s_pct", metrics[mi], tags[k]);
            size_t pc = tl_table_add_col(o, nm->p, TL_F64);
            ndp += 2;
            for (size_t r = 0; r < nrows; r++) {
                if (ints) {
                    if (missing(o, bc, (long)r) || missing(o, vc, (long)r)) continue;
                    int64_t a = o->cols[bc].v.i[r], b = o->cols[vc].v.i[r];
                    tl_table_set_i64(o, dc, r, b - a);
                    if (a != 0) tl_table_set_f64(o, pc, r, (double)(b - a) / (double)a * 100.0);
                } else {
                    double a = bc >= 0 ? tl_table_num(o, (size_t)bc, r) : NAN;
                    double b = vc >= 0 ? tl_table_num(o, (size_t)vc, r) : NAN;
                    double dv = b - a;
                    tl_table_set_f64(o, dc, r, dv);
                    if (a != 0 && !isnan(a) && !isnan(dv)) tl_table_set_f64(o, pc, r, dv / a * 100.0);
                }
            }
        }
    }
    return ndp;
}

int tl_compare_build(const tl_table *const *tables, const char *const *tags, size_t n,
                     const char *const *keys, size_t nkeys, const char *const *metrics, size_t nmetrics,
                     const char *name, tl_table **out, tl_err *err)
{
    *out = NULL;
    if (n < 1) return tl_errf(err, TL_EUSAGE, "nothing to compare");
    long *kc = tl_xmalloc(n * (nkeys ? nkeys : 1) * sizeof *kc);
    for (size_t k = 0; k < n; k++)
        for (size_t j = 0; j < nkeys; j++) {
            kc[k * nkeys + j] = tl_table_col(tables[k], keys[j]);
            if (kc[k * nkeys + j] < 0 && tables[k]->ncols) {
                free(kc);
                return tl_errf(err, TL_ENOTFOUND, "%s (%s): no key column '%s'", name, tags[k], keys[j]);
            }
        }
    for (size_t k = 0; k < n; k++)
        for (size_t j = 0; j < nmetrics; j++)
            if (tl_table_col(tables[k], metrics[j]) < 0) {
                free(kc);
                return tl_errf(err, TL_ENOTFOUND, "%s (%s): no column '%s'", name, tags[k], metrics[j]);
            }

    /* successive full outer joins; rows = index tuples into the tables */
    i32vec idx = {0}, nidx = {0};
    for (size_t r = 0; r < tables[0]->nrows; r++) {
        tl_vec_push(&idx, (int32_t)r);
        for (size_t k = 1; k < n; k++) tl_vec_push(&idx, -1);
    }
    size_t nrows = tables[0]->nrows;
    mctx m = {tables, n, kc, nkeys, NULL, 1};
    for (size_t k = 1; k < n; k++) {
        m.idx = idx.v;
        m.cur = k;
        size_t *lo = tl_xmalloc((nrows ? nrows : 1) * sizeof *lo);
        for (size_t r = 0; r < nrows; r++) lo[r] = r;
        MC = &m;
        qsort(lo, nrows, sizeof *lo, cmp_left);
        const tl_table *T = tables[k];
        size_t nr = T->nrows;
        size_t *ro = tl_xmalloc((nr ? nr : 1) * sizeof *ro);
        for (size_t r = 0; r < nr; r++) ro[r] = r;
        RT = T;
        RKC = kc + k * nkeys;
        RNK = nkeys;
        qsort(ro, nr, sizeof *ro, cmp_right);
        nidx.n = 0;
        size_t i = 0, j = 0, cnt = 0;
#define EMIT(L, R)                                                                      \
    do {                                                                                \
        for (size_t q = 0; q < n; q++)                                                  \
            tl_vec_push(&nidx, (L) == (size_t)-1 ? -1 : (q < k ? idx.v[(L) * n + q] : -1)); \
        if ((R) != (size_t)-1) nidx.v[nidx.n - n + k] = (int32_t)(R);                   \
        cnt++;                                                                          \
    } while (0)
        while (i < nrows || j < nr) {
            int c = i < nrows && j < nr ? cmp_lr(&m, lo[i], T, RKC, ro[j]) : (i < nrows ? -1 : 1);
            if (c < 0) { EMIT(lo[i], (size_t)-1); i++; }
            else if (c > 0) { EMIT((size_t)-1, ro[j]); j++; }
            else {
                size_t i2 = i + 1, j2 = j + 1;
                while (i2 < nrows && cmp_lr(&m, lo[i2], T, RKC, ro[j]) == 0) i2++;
                while (j2 < nr && cmp_lr(&m, lo[i], T, RKC, ro[j2]) == 0) j2++;
                for (size_t a = i; a < i2; a++)
                    for (size_t b = j; b < j2; b++) EMIT(lo[a], ro[b]);
                i = i2;
                j = j2;
            }
        }
#undef EMIT
        free(lo);
        free(ro);
        i32vec tmp = idx;
        idx = nidx;
        nidx = tmp;
        nrows = cnt;
    }
    m.idx = idx.v;
    m.cur = n;

    tl_table *o = tl_table_new(name);
    tl_table_set_nrows(o, nrows);
    /* keys: one column each, typed to hold every table's values */
    for (size_t j = 0; j < nkeys; j++) {
        int any_str = 0, any_f = 0, any_bool = 0, all_bool = 1, any = 0;
        for (size_t k = 0; k < n; k++) {
            long c = kc[k * nkeys + j];
            if (c < 0) continue;
            tl_type ty = tables[k]->cols[c].type;
            any = 1;
            any_str |= ty == TL_STR;
            any_f |= ty == TL_F64;
            any_bool |= ty == TL_BOOL;
            all_bool &= ty == TL_BOOL;
        }
        tl_type ty = !any || any_str ? TL_STR : all_bool ? TL_BOOL : any_f || any_bool ? TL_F64 : TL_I64;
        size_t c = tl_table_add_col(o, keys[j], ty);
        for (size_t r = 0; r < nrows; r++) {
            const tl_table *t;
            long sc, sr;
            mkey(&m, r, j, &t, &sc, &sr);
            copy_cell(o, c, r, t, sc, sr);
        }
    }
    size_t first_other = o->ncols;
    /* prefixed columns of every report (diff/pct are inserted before them) */
    tl_buf nm = {0};
    for (size_t k = 0; k < n; k++) {
        const tl_table *T = tables[k];
        for (size_t c = 0; c < T->ncols; c++) {
            int key = 0;
            for (size_t j = 0; j < nkeys && !key; j++) key = kc[k * nkeys + j] == (long)c;
            if (key) continue;
            nm.n = 0;
            tl_buf_printf(&nm, "%s::%s", tags[k], T->cols[c].name);
            size_t oc = tl_table_add_col(o, nm.p, T->cols[c].type);
            for (size_t r = 0; r < nrows; r++) copy_cell(o, oc, r, T, (long)c, idx.v[r * n + k]);
            if (T->cols[c].type == TL_I64 && (T->cols[c].as_float || tl_table_col_has_missing(o, oc)))
                o->cols[oc].as_float = 1;
        }
    }
    size_t ndp = add_diff_pct(o, tags, n, metrics, nmetrics, &nm);
    /* order: keys, diff/pct, the prefixed columns */
    if (ndp) {
        size_t start = o->ncols - ndp;
        tl_column *tmp = tl_xmalloc(ndp * sizeof *tmp);
        memcpy(tmp, o->cols + start, ndp * sizeof *tmp);
        memmove(o->cols + first_other + ndp, o->cols + first_other, (start - first_other) * sizeof *tmp);
        memcpy(o->cols + first_other, tmp, ndp * sizeof *tmp);
        free(tmp);
    }
    tl_buf_free(&nm);
    tl_vec_free(&idx);
    tl_vec_free(&nidx);
    free(kc);
    *out = o;
    return TL_OK;
}

/* ---- B3 ------------------------------------------------------------------------ */

/* pandas' sort_values(ascending=False) on one column is nargsort: drop the
 * NaNs, reverse, argsort(kind="quicksort"), reverse, append the NaNs. NumPy 2
 * on AVX-512 machines sorts with x86-simd-sort, whose argsort of <= 256
 * doubles is a bitonic network over 8-lane vectors. It is not stable, and
 * the reference outputs depend on where it leaves equal keys (e.g. the rows
 * a many-to-many merge duplicates), so we replay the network lane by lane.
 * Larger inputs go through its quicksort partitioning, which we do not
 * replay: they get a stable sort (ties keep merged order). */

static const int P_N1[8] = {3, 2, 1, 0, 7, 6, 5, 4};   /* reverse each half */
static const int P_N2[8] = {7, 6, 5, 4, 3, 2, 1, 0};   /* reverse */
static const int P_N3[8] = {2, 3, 0, 1, 6, 7, 4, 5};   /* swap pairs at distance 2 */
static const int P_N4[8] = {4, 5, 6, 7, 0, 1, 2, 3};   /* swap halves */
static const int P_SH[8] = {1, 0, 3, 2, 5, 4, 7, 6};   /* swap neighbours */

typedef struct vreg {
    double k[8];
    int64_t i[8];
} vreg;

/* cmp_merge(v, permuted v, mask): lanes with a mask bit take the max; an
 * index follows its key, and on equal keys a lane keeps its own index. */
static void v_step(vreg *v, const int *p, unsigned mask)
{
    vreg o;
    for (int l = 0; l < 8; l++) {
        double a = v->k[l], b = v->k[p[l]];
        double mn = b < a ? b : a, mx = b > a ? b : a;
        double t = (mask >> l) & 1 ? mx : mn;
        o.k[l] = t;
        o.i[l] = t == a ? v->i[l] : v->i[p[l]];
    }
    *v = o;
}

static void v_sort(vreg *v)
{
    v_step(v, P_SH, 0xAA);
    v_step(v, P_N1, 0xCC);
    v_step(v, P_SH, 0xAA);
    v_step(v, P_N2, 0xF0);
    v_step(v, P_N3, 0xCC);
    v_step(v, P_SH, 0xAA);
}

static void v_merge(vreg *v)
{
    v_step(v, P_N4, 0xF0);
    v_step(v, P_N3, 0xCC);
    v_step(v, P_SH, 0xAA);
}

static void v_rev(vreg *v)
{
    vreg o;
    for (int l = 0; l < 8; l++) {
        o.k[l] = v->k[P_N2[l]];
        o.i[l] = v->i[P_N2[l]];
    }
    *v = o;
}

static void v_coex(vreg *a, vreg *b)
{
    for (int l = 0; l < 8; l++) {
        double x = a->k[l], y = b->k[l];
        double mn = x < y ? x : y, mx = x > y ? x : y;
        int keep = mn == x;
        int64_t ia = a->i[l], ib = b->i[l];
        a->k[l] = mn;
        b->k[l] = mx;
        a->i[l] = keep ? ia : ib;
        b->i[l] = keep ? ib : ia;
    }
}

static void v_merge_n(vreg *v, int n)
{
    for (int i = 0; i < n / 2; i++) {
        vreg *b = &v[n - i - 1];
        v_rev(b);
        v_coex(&v[i], b);
        v_rev(b);
    }
    for (int num = n / 2; num >= 2; num /= 2)
        for (int j = 0; j < n; j += num)
            for (int i = 0; i < num / 2; i++) v_coex(&v[i + j], &v[i + j + num / 2]);
    for (int i = 0; i < n; i++) v_merge(&v[i]);
}

static int cmp_dbl_idx(const void *pa, const void *pb, void *ctx)
{
    const double *v = ctx;
    size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
    if (v[a] != v[b]) return v[a] < v[b] ? -1 : 1;
    return a < b ? -1 : a > b;
}

/* np.argsort(v, kind="quicksort") of n NaN-free doubles into out. */
static void np_argsort(const double *v, size_t n, size_t *out)
{
    for (size_t i = 0; i < n; i++) out[i] = i;
    if (n < 2) return;
    if (n > 256) {
        qsort_r(out, n, sizeof *out, cmp_dbl_idx, (void *)v);
        return;
    }
    int nv = 32;
    while (nv > 1 && (int)n * 2 <= nv * 8) nv /= 2;
    vreg regs[32];
    for (int r = 0; r < nv; r++) {
        for (int l = 0; l < 8; l++) {
            size_t p = (size_t)r * 8 + (size_t)l;
            regs[r].k[l] = p < n ? v[p] : INFINITY;
            regs[r].i[l] = p < n ? (int64_t)p : INT64_MAX;
        }
        v_sort(&regs[r]);
    }
    for (int per = 2; per <= nv; per *= 2)
        for (int g = 0; g < nv / per; g++) v_merge_n(&regs[g * per], per);
    for (size_t p = 0; p < n; p++) out[p] = (size_t)regs[p / 8].i[p % 8];
}

/* Rows (indices into t) reordered as pandas' descending sort would. */
static void nargsort_desc(const tl_table *t, size_t col, size_t *rows, size_t n)
{
    size_t nn = 0, k = 0;
    size_t *keep = tl_xmalloc((n ? n : 1) * sizeof *keep), *nan = tl_xmalloc((n ? n : 1) * sizeof *nan);
    size_t nnan = 0;
    for (size_t i = 0; i < n; i++) {
        if (tl_table_is_missing(t, col, rows[i]) || isnan(tl_table_num(t, col, rows[i]))) nan[nnan++] = rows[i];
        else keep[nn++] = rows[i];
    }
    double *v = tl_xmalloc((nn ? nn : 1) * sizeof *v);
    size_t *ord = tl_xmalloc((nn ? nn : 1) * sizeof *ord);
    for (size_t i = 0; i < nn; i++) v[i] = tl_table_num(t, col, keep[nn - 1 - i]);
    np_argsort(v, nn, ord);
    for (size_t i = nn; i-- > 0;) rows[k++] = keep[nn - 1 - ord[i]];
    for (size_t i = 0; i < nnan; i++) rows[k++] = nan[i];
    free(keep);
    free(nan);
    free(v);
    free(ord);
}

void tl_compare_sort_desc(tl_table *t, const char *col)
{
    long c = tl_table_col(t, col);
    if (c < 0 || t->nrows < 2) return;
    size_t *p = tl_xmalloc(t->nrows * sizeof *p);
    for (size_t i = 0; i < t->nrows; i++) p[i] = i;
    nargsort_desc(t, (size_t)c, p, t->nrows);
    tl_table_permute(t, p, t->nrows);
    free(p);
}

/* A new table with rows `rows` of src and the listed columns, dropping
 * columns that are entirely missing there. */
static tl_table *select_rows(const tl_table *src, const char *name, const size_t *rows, size_t nr,
                             const uint8_t *keepcol)
{
    tl_table *t = tl_table_new(name);
    tl_table_set_nrows(t, nr);
    for (size_t c = 0; c < src->ncols; c++) {
        if (!keepcol[c]) continue;
        int any = 0;
        for (size_t r = 0; r < nr && !any; r++) any = !tl_table_is_missing(src, c, rows[r]);
        if (!any) continue;
        size_t oc = tl_table_add_col(t, src->cols[c].name, src->cols[c].type);
        t->cols[oc].as_float = src->cols[c].as_float;
        t->cols[oc].hidden = src->cols[c].hidden;
        for (size_t r = 0; r < nr; r++) copy_cell(t, oc, r, src, (long)c, (long)rows[r]);
    }
    return t;
}

int tl_compare_split(const tl_table *m, const char *const *tags, size_t n, const char *base,
                     const char *check, const char *sort, tl_cmp_sheets *out, tl_err *err)
{
    tl_buf nm = {0};
    size_t N = m->nrows;
    size_t *rows = tl_xmalloc((N ? N : 1) * sizeof *rows);
    uint8_t *keep = tl_xmalloc(m->ncols ? m->ncols : 1);
    nm.n = 0;
    tl_buf_printf(&nm, "%s::%s", tags[0], check);
    long bd = tl_table_col(m, nm.p);
    if (bd < 0) {
        tl_buf_free(&nm);
        free(rows);
        free(keep);
        return tl_errf(err, TL_ENOTFOUND, "%s: no column '%s'", base, nm.p);
    }
    for (size_t k = 1; k < n; k++) {
        nm.n = 0;
        tl_buf_printf(&nm, "%s::%s", tags[k], check);
        long vd = tl_table_col(m, nm.p);
        for (int kind = 0; kind < 3; kind++) {
            /* 0 intersect {T0, t}; 1 only_baseline {T0}; 2 only_variant {t} */
            size_t nr = 0;
            for (size_t r = 0; r < N; r++) {
                int hb = !tl_table_is_missing(m, (size_t)bd, r), hv = vd >= 0 && !tl_table_is_missing(m, (size_t)vd, r);
                if ((kind == 0 && hb && hv) || (kind == 1 && hb && !hv) || (kind == 2 && !hb && hv)) rows[nr++] = r;
            }
            for (size_t c = 0; c < m->ncols; c++) {
                const char *cn = m->cols[c].name, *tg;
                size_t tl;
                const char *pre = strstr(cn, "::");
                int ok;
                if (diffpct_tag(cn, &tg, &tl)) {
                    /* a diff/pct column belongs to the tag it names */
                    int isb = tl == strlen(tags[0]) && memcmp(tg, tags[0], tl) == 0;
                    int isv = tl == strlen(tags[k]) && memcmp(tg, tags[k], tl) == 0;
                    ok = (kind == 0 && (isb || isv)) || (kind == 1 && isb) || (kind == 2 && isv);
                } else if (pre) {
                    size_t pl = (size_t)(pre - cn);
                    int isb = pl == strlen(tags[0]) && memcmp(cn, tags[0], pl) == 0;
                    int isv = pl == strlen(tags[k]) && memcmp(cn, tags[k], pl) == 0;
                    ok = (kind == 0 && (isb || isv)) || (kind == 1 && isb) || (kind == 2 && isv);
                } else ok = 1;
                keep[c] = (uint8_t)ok;
            }
            nm.n = 0;
            tl_buf_printf(&nm, "%s_%s_%s", base, kind == 0 ? "intersect" : kind == 1 ? "only_baseline" : "only_variant",
                          tags[k]);
            /* sort first (on the full table), then select */
            char scol[512];
            snprintf(scol, sizeof scol, "%s::%s", kind == 2 ? tags[k] : tags[0], sort);
            long sc = tl_table_col(m, scol);
            if (sc >= 0 && nr > 1) nargsort_desc(m, (size_t)sc, rows, nr);
            tl_table *t = select_rows(m, nm.p, rows, nr, keep);
            tl_vec_push(out, t);
        }
    }
    tl_buf_free(&nm);
    free(rows);
    free(keep);
    return TL_OK;
}

/* ---- B4 groups --------------------------------------------------------------------- */

static tl_table *find_sheet(const tl_cmp_report *r, const char *name)
{
    for (size_t i = 0; i < r->nsheets; i++)
        if (strcmp(r->sheets[i]->name, name) == 0) return r->sheets[i];
    return NULL;
}

static int need_sheet(const tl_cmp_report *r, const char *name, tl_table **out, tl_err *err)
{
    *out = find_sheet(r, name);
    if (*out) return TL_OK;
    if (r->is_dir) return tl_errf(err, TL_ENOTFOUND, "%s has no '%s.csv'", r->path, name);
    return tl_errf(err, TL_ENOTFOUND, "%s has no sheet '%s'", r->path, name);
}

/* A shallow copy of t without the named columns (cells shared, never freed
 * twice: the copy owns its column arrays). */
static tl_table *without(const tl_table *t, const char *const *drop, size_t nd)
{
    tl_table *o = tl_table_new(t->name);
    tl_table_set_nrows(o, t->nrows);
    for (size_t c = 0; c < t->ncols; c++) {
        int skip = 0;
        for (size_t k = 0; k < nd && !skip; k++) skip = strcmp(t->cols[c].name, drop[k]) == 0;
        if (skip) continue;
        size_t oc = tl_table_add_col(o, t->cols[c].name, t->cols[c].type);
        o->cols[oc].as_float = t->cols[c].as_float;
        for (size_t r = 0; r < t->nrows; r++) copy_cell(o, oc, r, t, (long)c, (long)r);
    }
    return o;
}

static int ends_with(const char *s, const char *suf)
{
    size_t n = strlen(s), m = strlen(suf);
    return n >= m && strcmp(s + n - m, suf) == 0;
}

static void hide(tl_table *t, const char *const *suffixes, size_t ns)
{
    for (size_t c = 0; c < t->ncols; c++)
        for (size_t k = 0; k < ns; k++)
            if (ends_with(t->cols[c].name, suffixes[k])) t->cols[c].hidden = 1;
}

static const char *OPS_HIDE[] = {"kernel_names", "median", "std", "min", "max", "ex_UID"};
static const char *ROOF_HIDE[] = {"kernel_names_first", "UID", "median", "std", "min", "max", "Input type_first",
                                  "Input Dims_first", "Input Strides_first", "Concrete Inputs_first"};

/* Merges one sheet of every report after per-report column deletions. */
static int build_group(const tl_cmp_report *R, size_t n, tl_table *const *src, const char *const *drop_all,
                       size_t nda, const char *const *drop_var, size_t ndv, const char *const *keys, size_t nk,
                       const char *const *metrics, size_t nm, const char *name, tl_table **out, tl_err *err)
{
    tl_table **tabs = tl_xcalloc(n, sizeof *tabs);
    const char **tags = tl_xcalloc(n, sizeof *tags);
    const char *drop[64];
    for (size_t k = 0; k < n; k++) {
        size_t nd = 0;
        for (size_t i = 0; i < nda && nd < 64; i++) drop[nd++] = drop_all[i];
        if (k)
            for (size_t i = 0; i < ndv && nd < 64; i++) drop[nd++] = drop_var[i];
        tabs[k] = without(src[k], drop, nd);
        tags[k] = R[k].tag;
    }
    int rc = tl_compare_build((const tl_table *const *)tabs, tags, n, keys, nk, metrics, nm, name, out, err);
    for (size_t k = 0; k < n; k++) tl_table_free(tabs[k]);
    free(tabs);
    free(tags);
    return rc;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

int tl_compare_reports(const tl_cmp_report *R, size_t n, unsigned groups, FILE *log, tl_cmp_sheets *out,
                       tl_err *err)
{
    if (n < 2) return tl_errf(err, TL_EUSAGE, "Need at least two report files");
    for (size_t a = 0; a < n; a++)
        for (size_t b = a + 1; b < n; b++)
            if (strcmp(R[a].tag, R[b].tag) == 0)
                return tl_errf(err, TL_EUSAGE, "Tags must be unique \xe2\x80\x93 use --names to disambiguate.");
    const char **tags = tl_xcalloc(n, sizeof *tags);
    tl_table **src = tl_xcalloc(n, sizeof *src);
    for (size_t k = 0; k < n; k++) tags[k] = R[k].tag;
    int rc = TL_OK;
    tl_table *t = NULL;

    if (groups & TL_CMP_GPU_TIMELINE) {
        for (size_t k = 0; k < n && !rc; k++) rc = need_sheet(&R[k], "gpu_timeline", &src[k], err);
        static const char *keys[] = {"type"}, *met[] = {"time ms"};
        if (!rc) rc = build_group(R, n, src, NULL, 0, NULL, 0, keys, 1, met, 1, "gpu_timeline", &t, err);
        if (!rc) tl_vec_push(out, t);
    }
    if (!rc && (groups & TL_CMP_OPS_SUMMARY)) {
        if (!find_sheet(&R[0], "ops_summary"))
            rc = tl_errf(err, TL_ENOTFOUND, "ops_summary sheet not found in %s", R[0].path);
        for (size_t k = 0; k < n && !rc; k++) rc = need_sheet(&R[k], "ops_summary", &src[k], err);
        static const char *keys[] = {"name"}, *met[] = {"total_direct_kernel_time_ms", "Count"};
        static const char *da[] = {"total_direct_kernel_time_sum"}, *dv[] = {"Cumulative Percentage (%)"};
        if (!rc) rc = build_group(R, n, src, da, 1, dv, 1, keys, 1, met, 2, "ops_summary", &t, err);
        if (!rc) {
            char sc[512];
            snprintf(sc, sizeof sc, "%s::total_direct_kernel_time_ms", tags[0]);
            tl_compare_sort_desc(t, sc);
            tl_vec_push(out, t);
        }
    }
    if (!rc && (groups & TL_CMP_KERNEL_SUMMARY)) {
        if (!find_sheet(&R[0], "kernel_summary"))
            rc = tl_errf(err, TL_ENOTFOUND, "kernel_summary sheet not found in %s", R[0].path);
        for (size_t k = 0; k < n && !rc; k++) rc = need_sheet(&R[k], "kernel_summary", &src[k], err);
        if (!rc) {
            int legacy = tl_table_col(src[0], "Kernel name") < 0;
            static const char *keys[] = {"Kernel name"}, *lkeys[] = {"name"};
            static const char *met[] = {"Kernel duration (\xc2\xb5s)_sum", "Kernel duration (\xc2\xb5s)_mean",
                                        "Kernel duration (\xc2\xb5s)_count"};
            static const char *lmet[] = {"Total Kernel Time (ms)", "Mean Kernel Time (\xc2\xb5s)", "Count"};
            static const char *da[] = {"Kernel duration (\xc2\xb5s)_min", "Kernel duration (\xc2\xb5s)_max",
                                       "Parent op category"};
            static const char *lda[] = {"Total Kernel Time (\xc2\xb5s)", "Median Kernel Time (\xc2\xb5s)",
                                        "Std Kernel Time (\xc2\xb5s)", "Min Kernel Time (\xc2\xb5s)",
                                        "Max Kernel Time (\xc2\xb5s)", "Category"};
            static const char *dv[] = {"Cumulative Percentage (%)"};
            if (legacy) rc = build_group(R, n, src, lda, 6, dv, 1, lkeys, 1, lmet, 3, "kernel_summary", &t, err);
            else rc = build_group(R, n, src, da, 3, dv, 1, keys, 1, met, 3, "kernel_summary", &t, err);
            if (!rc) {
                char sc[512];
                snprintf(sc, sizeof sc, "%s::%s", tags[0], legacy ? lmet[0] : met[0]);
                tl_compare_sort_desc(t, sc);
                tl_vec_push(out, t);
            }
        }
    }
    if (!rc && (groups & TL_CMP_OPS_ALL)) {
        static const char *sheets[] = {"ops_all", "ops_unique_args", "unified_perf_summary"};
        static const char *keys[] = {"name", "Input type", "Input Dims", "Input Strides", "Concrete Inputs"};
        static const char *met_ops[] = {"total_direct_kernel_time_sum", "total_direct_kernel_time_mean",
                                        "operation_count"};
        static const char *met_u[] = {"Kernel Time (\xc2\xb5s)_sum", "Kernel Time (\xc2\xb5s)_mean", "operation_count"};
        for (size_t s = 0; s < 3 && !rc; s++) {
            if (!find_sheet(&R[0], sheets[s])) continue;
            for (size_t k = 0; k < n && !rc; k++) rc = need_sheet(&R[k], sheets[s], &src[k], err);
            if (rc) break;
            const char **met = s == 2 ? met_u : met_ops;
            rc = build_group(R, n, src, NULL, 0, NULL, 0, keys, 5, met, 3, sheets[s], &t, err);
            if (rc) break;
            size_t first = out->n;
            rc = tl_compare_split(t, tags, n, sheets[s], met[0], met[0], out, err);
            tl_table_free(t);
            for (size_t i = first; i < out->n; i++) hide(out->v[i], OPS_HIDE, 6);
        }
    }
    if (!rc && (groups & TL_CMP_ROOFLINE)) {
        static const char *sheets[] = {"GEMM", "SDPA_fwd", "SDPA_bwd", "CONV_fwd", "CONV_bwd", "UnaryElementwise",
                                       "BinaryElementwise"};
        static const char *bases[] = {"GEMM", "SDPA_fwd", "SDPA_bwd", "CONV_fwd", "CONV_bwd", "un_eltwise",
                                      "bin_eltwise"};
        static const char *met[] = {"Kernel Time (\xc2\xb5s)_sum", "Kernel Time (\xc2\xb5s)_mean", "name_count",
                                    "TFLOPS/s_mean", "TB/s_mean"};
        static const char *dv[] = {"GFLOPS_first", "Data Moved (MB)_first", "FLOPS/Byte_first", "Input type_first",
                                   "Input Dims_first", "Input Strides_first", "Concrete Inputs_first"};
        for (size_t s = 0; s < 7 && !rc; s++) {
            if (!find_sheet(&R[0], sheets[s])) continue;
            for (size_t k = 0; k < n && !rc; k++) rc = need_sheet(&R[k], sheets[s], &src[k], err);
            if (rc) break;
            int empty = 0;
            for (size_t k = 0; k < n; k++) empty |= src[k]->nrows == 0 || src[k]->ncols == 0;
            if (empty) {
                if (log) fprintf(log, "Skipping roofline sheet '%s' because one of the reports is empty.\n", bases[s]);
                continue;
            }
            /* keys: name + the param: columns every report has, sorted */
            TL_VEC(const char *) keys = {0};
            tl_vec_push(&keys, "name");
            size_t firstp = keys.n;
            for (size_t c = 0; c < src[0]->ncols; c++) {
                const char *cn = src[0]->cols[c].name;
                if (strncmp(cn, "param:", 6) != 0) continue;
                int all = 1;
                for (size_t k = 1; k < n && all; k++) all = tl_table_col(src[k], cn) >= 0;
                if (all) tl_vec_push(&keys, cn);
            }
            qsort(keys.v + firstp, keys.n - firstp, sizeof *keys.v, cmp_str);
            rc = build_group(R, n, src, NULL, 0, dv, 7, keys.v, keys.n, met, 5, bases[s], &t, err);
            tl_vec_free(&keys);
            if (rc) break;
            size_t first = out->n;
            rc = tl_compare_split(t, tags, n, bases[s], met[0], met[0], out, err);
            tl_table_free(t);
            for (size_t i = first; i < out->n; i++) hide(out->v[i], ROOF_HIDE, 10);
        }
    }
    free(tags);
    free(src);
    return rc;
}
