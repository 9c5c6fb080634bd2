/* util.c — small shared pieces of the PyTorch report: statistics
 * computed the way pandas' group-by computes them (Kahan sums, Welford
 * sample std), stable index sorts, percentage columns, a string hash map
 * for group keys, and the sheet list. Matching pandas' algorithms (not just
 * the math) keeps the last digits equal to the reference's. */
#include "query/pytorch/pytorch_internal.h"
#include "query/core/stats.h"

#include <stdlib.h>

void pyt_stats_of(double *v, size_t n, pyt_stats *s)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (!isnan(v[i])) v[m++] = v[i];
    s->n = m;
    s->sum = tl_sum_kahan(v, m);
    if (!m) {
        s->mean = s->median = s->std = s->min = s->max = NAN;
        return;
    }
    s->mean = s->sum / (double)m;
    s->std = tl_std_welford(v, m, 1); /* row order, before the median reorders v */
    s->min = s->max = v[0];
    for (size_t i = 1; i < m; i++) {
        if (v[i] < s->min) s->min = v[i];
        if (v[i] > s->max) s->max = v[i];
    }
    s->median = tl_median_f64(v, m);
}

/* ---- stable sorts --------------------------------------------------------- */

typedef struct { double k; size_t i; } kd;

static int cmp_kd_asc(const void *a, const void *b)
{
    const kd *x = a, *y = b;
    if (x->k < y->k) return -1;
    if (x->k > y->k) return 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

static int cmp_kd_desc(const void *a, const void *b)
{
    const kd *x = a, *y = b;
    if (x->k > y->k) return -1;
    if (x->k < y->k) return 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

void pyt_sort_idx_f64(size_t *idx, size_t n, const double *key, int desc)
{
    kd *a = tl_xmalloc((n ? n : 1) * sizeof *a);
    for (size_t i = 0; i < n; i++) {
        a[i].k = key[idx[i]];
        if (isnan(a[i].k)) a[i].k = desc ? -INFINITY : INFINITY; /* NaN last */
        a[i].i = i;
    }
    qsort(a, n, sizeof *a, desc ? cmp_kd_desc : cmp_kd_asc);
    size_t *tmp = tl_xmalloc((n ? n : 1) * sizeof *tmp);
    for (size_t i = 0; i < n; i++) tmp[i] = idx[a[i].i];
    memcpy(idx, tmp, n * sizeof *idx);
    free(tmp);
    free(a);
}

/* ---- sheets ------------------------------------------------------------- */

void pyt_sheets_push(tl_pyt_sheets *s, tl_table *t)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 16;
        s->v = tl_xrealloc(s->v, s->cap * sizeof *s->v);
    }
    s->v[s->n++] = t;
}

void pyt_sheets_pending(tl_pyt_sheets *s, const char *name)
{
    s->pending = tl_xrealloc((void *)s->pending, (s->npending + 1) * sizeof *s->pending);
    s->pending[s->npending++] = tl_xstrdup(name);
}

void tl_pyt_sheets_free(tl_pyt_sheets *s)
{
    if (!s) return;
    tl_tables_free(s->v, s->n);
    for (size_t i = 0; i < s->npending; i++) free((void *)s->pending[i]);
    free((void *)s->pending);
    free(s->uid_pair_uid);
    free(s->uid_pair_row);
    memset(s, 0, sizeof *s);
}

tl_table *tl_pyt_sheet(const tl_pyt_sheets *s, const char *name) { return tl_tables_find(s->v, s->n, name); }

void pyt_add_percentages(tl_table *t, size_t vcol)
{
    size_t pc = tl_table_add_col(t, "Percentage (%)", TL_F64);
    size_t cc = tl_table_add_col(t, "Cumulative Percentage (%)", TL_F64);
    double *v = tl_xmalloc((t->nrows ? t->nrows : 1) * sizeof *v);
    for (size_t r = 0; r < t->nrows; r++) v[r] = tl_table_num(t, vcol, r);
    double tot = tl_sum_pairwise_skipna(v, t->nrows); /* pandas Series.sum() */
    double cum = 0;
    for (size_t r = 0; r < t->nrows; r++) {
        double p = v[r] / tot * 100.0;
        tl_table_set_f64(t, pc, r, p);
        if (!isnan(p)) cum += p;
        tl_table_set_f64(t, cc, r, isnan(p) ? NAN : cum);
    }
    free(v);
}

void pyt_sort_desc_np(size_t *idx, size_t n, const double *key) { tl_pd_sort_values(idx, n, key, 0); }

/* ---- interning: equal texts -> one pointer, so group keys can hold
 * pointers instead of texts ------------------------------------------------ */

const char *pyt_intern(pyt_ctx *c, const char *s)
{
    if (!s) return NULL;
    if (!c->intern_init) {
        tl_smap_init(&c->intern, 1024);
        c->intern_init = 1;
    }
    size_t len = strlen(s);
    size_t *v = tl_smap_get(&c->intern, s, len);
    if (v) return c->intern_str[*v];
    char *copy = tl_arena_strndup(&c->arena, s, len);
    int isnew;
    v = tl_smap_put(&c->intern, copy, len, &isnew);
    if (c->nintern == c->capintern) {
        c->capintern = c->capintern ? c->capintern * 2 : 256;
        c->intern_str = tl_xrealloc(c->intern_str, c->capintern * sizeof *c->intern_str);
    }
    c->intern_str[c->nintern] = copy;
    *v = c->nintern++;
    return copy;
}

void pyt_sort_desc(const pyt_ctx *c, size_t *idx, size_t n, const double *key)
{
    /* --fix_quirks: ties keep the ascending-key order (stable) */
    if (c->o->fix_quirks) pyt_sort_idx_f64(idx, n, key, 1);
    else pyt_sort_desc_np(idx, n, key);
}
