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

/* A copy of t with a text column inserted first. */
static tl_table *with_first_column(const tl_table *t, const char *name, const char *const *vals)
{
    tl_table *o = tl_table_new(t->name);
    size_t c0 = tl_table_add_col(o, name, TL_STR);
    for (size_t c = 0; c < t->ncols; c++) tl_table_add_col(o, t->cols[c].name, t->cols[c].type);
    tl_table_set_nrows(o, t->nrows);
    for (size_t r = 0; r < t->nrows; r++) tl_table_set_str(o, c0, r, vals[r]);
    for (size_t c = 0; c < t->ncols; c++) {
        o->cols[c + 1].as_float = t->cols[c].as_float;
        for (size_t r = 0; r < t->nrows; r++) {
            if (tl_table_is_missing(t, c, r)) continue;
            switch (t->cols[c].type) {
            case TL_STR: tl_table_set_str(o, c + 1, r, t->cols[c].v.s[r]); break;
            case TL_I64: tl_table_set_i64(o, c + 1, r, t->cols[c].v.i[r]); break;
            case TL_F64: tl_table_set_f64(o, c + 1, r, t->cols[c].v.f[r]); break;
            case TL_BOOL: tl_table_set_bool(o, c + 1, r, t->cols[c].v.b[r]); break;
            }
        }
    }
    return o;
}

void tl_inference_kernel_categories(tl_pyt_sheets *s)
{
    for (size_t i = 0; i < s->n; i++) {
        tl_table *t = s->v[i];
        long kn = tl_table_col(t, "Kernel name");
        if (strcmp(t->name, "kernel_summary") || kn < 0 || tl_table_col(t, "Kernel category") >= 0) continue;
        const char **v = tl_xmalloc((t->nrows ? t->nrows : 1) * sizeof *v);
        for (size_t r = 0; r < t->nrows; r++)
            v[r] = tl_kernel_category(tl_table_is_missing(t, (size_t)kn, r) ? NULL : t->cols[kn].v.s[r]);
        s->v[i] = with_first_column(t, "Kernel category", v);
        free(v);
        tl_table_free(t);
    }
}
