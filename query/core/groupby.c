/* groupby.c — grouping by hashed keys into a CSR layout, and the per-group
 * aggregates (see groupby.h). */
#include "query/core/groupby.h"
#include "query/core/stats.h"
#include "base/base.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The CSR layout from group_of and ngroups: sizes counted, then rows
 * placed in row order. */
static void build_members(tl_groups *g)
{
    g->start = tl_xcalloc(g->ngroups + 1, sizeof *g->start);
    for (size_t i = 0; i < g->nrows; i++) g->start[g->group_of[i] + 1]++;
    for (size_t k = 0; k < g->ngroups; k++) g->start[k + 1] += g->start[k];
    size_t *fill = tl_xmalloc((g->ngroups + 1) * sizeof *fill);
    memcpy(fill, g->start, g->ngroups * sizeof *fill);
    g->rows = tl_xmalloc((g->nrows + 1) * sizeof *g->rows);
    for (size_t i = 0; i < g->nrows; i++) g->rows[fill[g->group_of[i]]++] = (uint32_t)i;
    free(fill);
}

static void groups_begin(tl_groups *g, size_t n)
{
    memset(g, 0, sizeof *g);
    g->nrows = n;
    g->group_of = tl_xmalloc((n + 1) * sizeof *g->group_of);
}

void tl_groupby_bytes(tl_groups *g, const char *const *keys, const size_t *lens, size_t n)
{
    groups_begin(g, n);
    /* the first row of each group, whose key the probe compares with */
    uint32_t *first = tl_xmalloc((n + 1) * sizeof *first);
    tl_hidx x;
    tl_hidx_init(&x, n < 64 ? 64 : n);
    for (size_t r = 0; r < n; r++) {
        uint64_t h = tl_hash64(keys[r], lens[r], 0);
        size_t i = tl_hidx_home(&x, h);
        uint32_t id = UINT32_MAX;
        for (; x.ids[i]; i = tl_hidx_next(&x, i)) {
            uint32_t f = first[x.ids[i] - 1];
            if (x.hashes[i] == h && lens[f] == lens[r] && !memcmp(keys[f], keys[r], lens[r])) {
                id = x.ids[i] - 1;
                break;
            }
        }
        if (id == UINT32_MAX) {
            id = (uint32_t)g->ngroups++;
            first[id] = (uint32_t)r;
            tl_hidx_set(&x, i, h, id);
        }
        g->group_of[r] = id;
    }
    tl_hidx_free(&x);
    free(first);
    build_members(g);
}

void tl_groupby_i64(tl_groups *g, const int64_t *keys, size_t n)
{
    groups_begin(g, n);
    tl_imap m;
    tl_imap_init(&m, n < 64 ? 64 : n);
    for (size_t r = 0; r < n; r++) {
        int isnew;
        size_t *id = tl_imap_put(&m, (uint64_t)keys[r], &isnew);
        if (isnew) *id = g->ngroups++;
        g->group_of[r] = (uint32_t)*id;
    }
    tl_imap_free(&m);
    build_members(g);
}

void tl_groupby_fixed(tl_groups *g, const void *keys, size_t keylen, size_t n)
{
    groups_begin(g, n);
    tl_bmap m;
    tl_bmap_init(&m, keylen, n < 64 ? 64 : n);
    for (size_t r = 0; r < n; r++) {
        int isnew;
        size_t *id = tl_bmap_put(&m, (const char *)keys + r * keylen, &isnew);
        if (isnew) *id = g->ngroups++;
        g->group_of[r] = (uint32_t)*id;
    }
    tl_bmap_free(&m);
    build_members(g);
}

void tl_groups_free(tl_groups *g)
{
    free(g->group_of);
    free(g->start);
    free(g->rows);
    memset(g, 0, sizeof *g);
}

/* ---- key order ---------------------------------------------------------- */

typedef struct sort_ctx {
    const tl_groups *g;
    tl_row_cmp cmp;
    const void *ctx;
} sort_ctx;

/* Group ids by the key of their first rows; equal keys by id, which is
 * first-occurrence order. */
static int cmp_group_ids(const void *a, const void *b, void *arg)
{
    const sort_ctx *s = arg;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    int c = s->cmp(s->ctx, s->g->rows[s->g->start[x]], s->g->rows[s->g->start[y]]);
    if (c) return c;
    return (x > y) - (x < y);
}

void tl_groups_sort(tl_groups *g, tl_row_cmp cmp, const void *ctx)
{
    size_t ng = g->ngroups;
    uint32_t *order = tl_xmalloc((ng + 1) * sizeof *order);
    for (size_t k = 0; k < ng; k++) order[k] = (uint32_t)k;
    sort_ctx s = {g, cmp, ctx};
    qsort_r(order, ng, sizeof *order, cmp_group_ids, &s);
    uint32_t *rank = tl_xmalloc((ng + 1) * sizeof *rank);
    for (size_t k = 0; k < ng; k++) rank[order[k]] = (uint32_t)k;
    size_t *start = tl_xmalloc((ng + 1) * sizeof *start);
    uint32_t *rows = tl_xmalloc((g->nrows + 1) * sizeof *rows);
    start[0] = 0;
    for (size_t k = 0; k < ng; k++) {
        size_t a = g->start[order[k]], b = g->start[order[k] + 1];
        memcpy(rows + start[k], g->rows + a, (b - a) * sizeof *rows);
        start[k + 1] = start[k] + (b - a);
    }
    for (size_t i = 0; i < g->nrows; i++) g->group_of[i] = rank[g->group_of[i]];
    free(g->start);
    free(g->rows);
    g->start = start;
    g->rows = rows;
    free(rank);
    free(order);
}

typedef struct bytes_keys {
    const char *const *keys;
    const size_t *lens;
} bytes_keys;

static int cmp_bytes_rows(const void *ctx, size_t a, size_t b)
{
    const bytes_keys *k = ctx;
    size_t la = k->lens[a], lb = k->lens[b];
    int c = memcmp(k->keys[a], k->keys[b], la < lb ? la : lb);
    if (c) return c;
    return (la > lb) - (la < lb);
}

void tl_groups_sort_bytes(tl_groups *g, const char *const *keys, const size_t *lens)
{
    bytes_keys k = {keys, lens};
    tl_groups_sort(g, cmp_bytes_rows, &k);
}

static int cmp_i64_rows(const void *ctx, size_t a, size_t b)
{
    const int64_t *k = ctx;
    return (k[a] > k[b]) - (k[a] < k[b]);
}

void tl_groups_sort_i64(tl_groups *g, const int64_t *keys)
{
    tl_groups_sort(g, cmp_i64_rows, keys);
}

/* ---- aggregates --------------------------------------------------------- */

/* The largest group's size: the scratch a per-group gather needs. */
static size_t largest(const tl_groups *g)
{
    size_t m = 0;
    for (size_t k = 0; k < g->ngroups; k++)
        if (g->start[k + 1] - g->start[k] > m) m = g->start[k + 1] - g->start[k];
    return m;
}

/* Group k's non-NaN values of col, in row order, into buf; their number. */
static size_t gather(const tl_groups *g, const double *col, size_t k, double *buf)
{
    size_t m = 0;
    for (size_t j = g->start[k]; j < g->start[k + 1]; j++) {
        double x = col[g->rows[j]];
        if (x == x) buf[m++] = x;
    }
    return m;
}

void tl_groups_count(const tl_groups *g, const double *col, int64_t *out)
{
    for (size_t k = 0; k < g->ngroups; k++) {
        int64_t c = 0;
        for (size_t j = g->start[k]; j < g->start[k + 1]; j++) c += col[g->rows[j]] == col[g->rows[j]];
        out[k] = c;
    }
}

/* One body for the aggregates that read a group's non-NaN values as an
 * array: EXPR computes out[k] from buf[0..m). */
#define TL_GROUPS_GATHERED(NAME, EXPR)                                         \
    void NAME(const tl_groups *g, const double *col, double *out)              \
    {                                                                          \
        double *buf = tl_xmalloc((largest(g) + 1) * sizeof *buf);              \
        for (size_t k = 0; k < g->ngroups; k++) {                              \
            size_t m = gather(g, col, k, buf);                                 \
            out[k] = (EXPR);                                                   \
        }                                                                      \
        free(buf);                                                             \
    }
TL_GROUPS_GATHERED(tl_groups_sum, tl_sum_kahan(buf, m))
TL_GROUPS_GATHERED(tl_groups_mean, tl_mean_kahan(buf, m))
TL_GROUPS_GATHERED(tl_groups_median, tl_median_f64(buf, m))
TL_GROUPS_GATHERED(tl_groups_first, m ? buf[0] : NAN)
#undef TL_GROUPS_GATHERED

void tl_groups_std(const tl_groups *g, const double *col, int ddof, double *out)
{
    for (size_t k = 0; k < g->ngroups; k++) {
        tl_welford w = {0, 0, 0};
        for (size_t j = g->start[k]; j < g->start[k + 1]; j++) tl_welford_add(&w, col[g->rows[j]]);
        out[k] = tl_welford_std(&w, ddof);
    }
}

void tl_groups_min(const tl_groups *g, const double *col, double *out)
{
    for (size_t k = 0; k < g->ngroups; k++) {
        double v = NAN;
        for (size_t j = g->start[k]; j < g->start[k + 1]; j++) {
            double x = col[g->rows[j]];
            if (x == x && !(x >= v)) v = x;
        }
        out[k] = v;
    }
}

void tl_groups_max(const tl_groups *g, const double *col, double *out)
{
    for (size_t k = 0; k < g->ngroups; k++) {
        double v = NAN;
        for (size_t j = g->start[k]; j < g->start[k + 1]; j++) {
            double x = col[g->rows[j]];
            if (x == x && !(x <= v)) v = x;
        }
        out[k] = v;
    }
}
