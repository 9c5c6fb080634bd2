/* branch_sheets.c — what the inference branch
 * (feature/inference-kernel-categorization) changes in the report's own
 * sheets when phase analysis is asked for: ops_summary_by_category with
 * launchers of category "other" regrouped by their kernels' categories, and
 * the `Kernel category` column of kernel_summary. */
#include "query/inference/inference.h"
#include "query/inference/inference_internal.h"

#include <stdlib.h>
#include <string.h>
#include "query/core/stats.h"

/* The branch's map_kernel_to_op_category: a kernel category's op-level
 * family, lower-cased when it has none; into buf (NULL for "Unknown"). */
static const char *op_family(const char *kc, char *buf, size_t n)
{
    if (!kc || !strcmp(kc, "Unknown")) return NULL;
    size_t k = 0;
    for (; kc[k] && k + 1 < n; k++) buf[k] = (char)(kc[k] >= 'A' && kc[k] <= 'Z' ? kc[k] - 'A' + 'a' : kc[k]);
    buf[k] = 0;
    if (strstr(buf, "gemm")) return "GEMM";
    if (strstr(buf, "attention") || strstr(buf, "flash")) return "attention";
    if (strstr(buf, "norm")) return "norm";
    if (strstr(buf, "elementwise")) return "elementwise";
    if (strstr(buf, "reduce") || strstr(buf, "reduction")) return "reduce";
    if (strstr(buf, "memory") || strstr(buf, "memcpy") || strstr(buf, "memset")) return "memory";
    if (strstr(buf, "transpose")) return "transpose";
    if (strstr(buf, "conv") || strstr(buf, "convolution")) return "CONV";
    return buf;
}

/* Launcher j's category: its op category, or for "other" the family of its
 * direct kernels with the largest total duration (the first on ties). */
static const char *regrouped(pyt_ctx *c, size_t j)
{
    if (strcmp(c->l_cat[j], "other")) return c->l_cat[j];
    size_t a = c->l_koff[j], b = c->l_koff[j + 1];
    if (a == b) return c->l_cat[j];
    int32_t *k = tl_xmalloc((b - a) * sizeof *k);
    memcpy(k, c->l_k + a, (b - a) * sizeof *k);
    pyt_sort_rows_by_ts(c, k, b - a);
    const char **fam = tl_xmalloc((b - a) * sizeof *fam);
    double *dur = tl_xcalloc(b - a, sizeof *dur);
    size_t nf = 0;
    char buf[96];
    for (size_t q = 0; q < b - a; q++) {
        const char *f = op_family(tl_kernel_category(pyt_name(c, k[q])), buf, sizeof buf);
        if (!f) continue;
        f = pyt_intern(c, f);
        size_t i = 0;
        while (i < nf && fam[i] != f) i++;
        if (i == nf) fam[nf++] = f;
        dur[i] += pyt_dur(c, k[q]);
    }
    const char *best = c->l_cat[j];
    for (size_t i = 0; i < nf; i++)
        if (i == 0 || dur[i] > dur[0]) {
            best = fam[i];
            dur[0] = dur[i];
        }
    free(k);
    free(fam);
    free(dur);
    return best;
}

typedef struct cgroup {
    const char *cat;
    tl_kahan sum;
    int64_t count;
} cgroup;

static int cmp_cgroup(const void *a, const void *b)
{
    return strcmp(((const cgroup *)a)->cat, ((const cgroup *)b)->cat);
}

tl_table *inf_by_category_regrouped(pyt_ctx *c)
{
    cgroup *g = tl_xcalloc(c->nl ? c->nl : 1, sizeof *g);
    size_t ng = 0;
    for (size_t j = 0; j < c->nl; j++) {
        const char *cat = regrouped(c, j);
        size_t i = 0;
        while (i < ng && strcmp(g[i].cat, cat)) i++;
        if (i == ng) g[ng++].cat = cat;
        tl_kahan_add(&g[i].sum, c->l_direct[j]);
        g[i].count++;
    }
    qsort(g, ng, sizeof *g, cmp_cgroup); /* groupby's key order */
    double *sums = tl_xmalloc((ng ? ng : 1) * sizeof *sums);
    size_t *idx = tl_xmalloc((ng ? ng : 1) * sizeof *idx);
    for (size_t i = 0; i < ng; i++) {
        sums[i] = g[i].sum.sum;
        idx[i] = i;
    }
    pyt_sort_desc(c, idx, ng, sums);
    tl_table *t = tl_table_new("ops_summary_by_category");
    size_t c0 = tl_table_add_col(t, "op category", TL_STR);
    size_t cn = tl_table_add_col(t, "Count", TL_I64);
    size_t cms = tl_table_add_col(t, "total_direct_kernel_time_ms", TL_F64);
    for (size_t i = 0; i < ng; i++) {
        size_t r = tl_table_add_row(t);
        const cgroup *G = &g[idx[i]];
        tl_table_set_str(t, c0, r, G->cat);
        tl_table_set_i64(t, cn, r, G->count);
        tl_table_set_f64(t, cms, r, G->sum.sum / 1000.0);
    }
    pyt_add_percentages(t, cms);
    free(sums);
    free(idx);
    free(g);
    return t;
}

/* kernel_summary's rows in the branch's order: groupby's key order over
 * (Kernel category, Parent op category, Parent cpu_op, Kernel name, Kernel
 * stream), missing keys last, then pandas' descending sort of the sums. */
typedef struct ksort {
    const tl_table *t;
    const char *const *cat;
    long col[4];
} ksort;
static _Thread_local const ksort *g_ks;

static int cmp_cell(const tl_table *t, long c, size_t a, size_t b)
{
    if (c < 0) return 0;
    int ma = tl_table_is_missing(t, (size_t)c, a), mb = tl_table_is_missing(t, (size_t)c, b);
    if (ma || mb) return ma - mb;
    if (t->cols[c].type == TL_STR) return strcmp(t->cols[c].v.s[a], t->cols[c].v.s[b]);
    double x = tl_table_num(t, (size_t)c, a), y = tl_table_num(t, (size_t)c, b);
    return x < y ? -1 : x > y;
}

static int cmp_krow(const void *pa, const void *pb)
{
    size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
    int r = strcmp(g_ks->cat[a], g_ks->cat[b]);
    for (int k = 0; !r && k < 4; k++) r = cmp_cell(g_ks->t, g_ks->col[k], a, b);
    return r ? r : (a > b) - (a < b);
}

static size_t *branch_order(const tl_table *t, const char *const *cat, int stable)
{
    size_t n = t->nrows;
    size_t *idx = tl_xmalloc((n ? n : 1) * sizeof *idx);
    for (size_t r = 0; r < n; r++) idx[r] = r;
    static const char *const keys[4] = {"Parent op category", "Parent cpu_op", "Kernel name", "Kernel stream"};
    ksort ks = {t, cat, {0}};
    for (int k = 0; k < 4; k++) ks.col[k] = tl_table_col(t, keys[k]);
    g_ks = &ks;
    qsort(idx, n, sizeof *idx, cmp_krow);
    long sc = tl_table_col(t, "Kernel duration (µs)_sum");
    if (sc < 0) return idx;
    double *sums = tl_xmalloc((n ? n : 1) * sizeof *sums);
    for (size_t r = 0; r < n; r++) sums[r] = tl_table_num(t, (size_t)sc, r);
    if (stable) pyt_sort_idx_f64(idx, n, sums, 1);
    else pyt_sort_desc_np(idx, n, sums);
    free(sums);
    return idx;
}

/* A copy of t's rows in order ord with a text column inserted first. */
static tl_table *with_first_column(const tl_table *t, const char *name, const char *const *vals, const size_t *ord)
{
    tl_table *o = tl_table_new(t->name);
    size_t c0 = tl_table_add_col(o, name, TL_STR);
    for (size_t c = 0; c < t->ncols; c++) tl_table_add_col(o, t->cols[c].name, t->cols[c].type);
    tl_table_set_nrows(o, t->nrows);
    for (size_t r = 0; r < t->nrows; r++) tl_table_set_str(o, c0, r, vals[ord[r]]);
    for (size_t c = 0; c < t->ncols; c++) {
        o->cols[c + 1].as_float = t->cols[c].as_float;
        for (size_t r = 0; r < t->nrows; r++) {
            size_t q = ord[r];
            if (tl_table_is_missing(t, c, q)) continue;
            switch (t->cols[c].type) {
            case TL_STR: tl_table_set_str(o, c + 1, r, t->cols[c].v.s[q]); break;
            case TL_I64: tl_table_set_i64(o, c + 1, r, t->cols[c].v.i[q]); break;
            case TL_F64: tl_table_set_f64(o, c + 1, r, t->cols[c].v.f[q]); break;
            case TL_BOOL: tl_table_set_bool(o, c + 1, r, t->cols[c].v.b[q]); break;
            }
        }
    }
    return o;
}

void tl_inference_kernel_categories(tl_pyt_sheets *s, int fix_quirks)
{
    for (size_t i = 0; i < s->n; i++) {
        tl_table *t = s->v[i];
        long kn = tl_table_col(t, "Kernel name");
        if (strcmp(t->name, "kernel_summary") || kn < 0 || tl_table_col(t, "Kernel category") >= 0) continue;
        const char **v = tl_xmalloc((t->nrows ? t->nrows : 1) * sizeof *v);
        for (size_t r = 0; r < t->nrows; r++)
            v[r] = tl_kernel_category(tl_table_is_missing(t, (size_t)kn, r) ? NULL : t->cols[kn].v.s[r]);
        size_t *ord = branch_order(t, v, fix_quirks);
        s->v[i] = with_first_column(t, "Kernel category", v, ord);
        free(ord);
        free(v);
        tl_table_free(t);
    }
}
