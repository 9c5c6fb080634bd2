/* compose.c — what the PyTorch report is made of beyond tl_pytorch_report's
 * sheets: the roofline table picked from the trace's GPU, the
 * ops_without_perf_model sheet, the phase sheets' places in the sheet list
 * (spec C6) and the roofline charts' geometry. The CLI calls these and
 * only parses, loads and writes. */
#include "query/pytorch/pytorch.h"
#include "query/perfmodel/perfmodel.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *tl_pyt_auto_platform(const tl_trace *t, char *gpu, size_t n)
{
    size_t ml, dl;
    const char *meta = tl_args_get(t->catalog, strlen(t->catalog), "metadata", &ml);
    const char *dp = meta ? tl_args_get(meta, ml, "deviceProperties", &dl) : NULL;
    const char *nm = dp ? memmem(dp, dl, "\"name\"", 6) : NULL;
    if (!nm) return NULL;
    const char *q1 = memchr(nm + 6, '"', (size_t)(dp + dl - nm - 6));
    const char *q2 = q1 ? memchr(q1 + 1, '"', (size_t)(dp + dl - q1 - 1)) : NULL;
    if (!q2) return NULL;
    snprintf(gpu, n, "%.*s", (int)(q2 - q1 - 1), q1 + 1);
    return tl_pm_arch_platform_for_gpu(gpu);
}

static void push(tl_pyt_sheets *s, tl_table *t)
{
    tl_vec_reserve(s, 1);
    s->v[s->n++] = t;
}

void tl_pyt_add_ops_without_perf_model(tl_pyt_sheets *s)
{
    const tl_table *u = tl_pyt_sheet(s, "unified_perf_summary");
    long hc = u ? tl_table_col(u, "has_perf_model") : -1, nc = u ? tl_table_col(u, "name") : -1;
    long cc = u ? tl_table_col(u, "operation_count") : -1, kc = u ? tl_table_col(u, "Kernel Time (µs)_sum") : -1;
    if (hc < 0 || nc < 0 || cc < 0 || kc < 0) return;
    tl_table *nm = tl_table_new("ops_without_perf_model");
    size_t a = tl_table_add_col(nm, "name", TL_STR), b = tl_table_add_col(nm, "operation_count", TL_I64);
    size_t k = tl_table_add_col(nm, "Kernel Time (µs)_sum", TL_F64);
    for (size_t r = 0; r < u->nrows; r++) {
        if (tl_table_is_missing(u, (size_t)hc, r) || u->cols[hc].v.b[r]) continue;
        const char *name = u->cols[nc].v.s[r];
        size_t row = nm->nrows;
        for (size_t q = 0; q < nm->nrows; q++)
            if (!strcmp(nm->cols[a].v.s[q], name)) { row = q; break; }
        if (row == nm->nrows) {
            tl_table_add_row(nm);
            tl_table_set_str(nm, a, row, name);
            tl_table_set_i64(nm, b, row, 0);
            tl_table_set_f64(nm, k, row, 0);
        }
        nm->cols[b].v.i[row] += (int64_t)tl_table_num(u, (size_t)cc, r);
        double kt = tl_table_num(u, (size_t)kc, r);
        if (kt == kt) nm->cols[k].v.f[row] += kt;
    }
    /* largest kernel time first */
    size_t *perm = tl_xmalloc((nm->nrows + 1) * sizeof *perm);
    for (size_t q = 0; q < nm->nrows; q++) perm[q] = q;
    for (size_t q = 1; q < nm->nrows; q++)
        for (size_t w = q; w > 0 && nm->cols[k].v.f[perm[w]] > nm->cols[k].v.f[perm[w - 1]]; w--) {
            size_t tmp = perm[w]; perm[w] = perm[w - 1]; perm[w - 1] = tmp;
        }
    tl_table_permute(nm, perm, nm->nrows);
    free(perm);
    if (nm->nrows) push(s, nm);
    else tl_table_free(nm);
}

void tl_pyt_insert_phase_sheets(tl_pyt_sheets *s, tl_pyt_sheets *ph)
{
    /* insertion points (-1: absent, append at the end) */
    long ops_at = -1, ker_at = -1;
    for (size_t q = 0; q < s->n; q++) {
        if (!strcmp(s->v[q]->name, "unified_perf_summary")) ops_at = (long)q + 1;
        if (!strcmp(s->v[q]->name, "kernel_summary")) ker_at = (long)q + 1;
    }
    for (size_t k = 0; k < ph->n; k++) {
        tl_table *pt = ph->v[k];
        long pos = -1;
        if (!strncmp(pt->name, "ops_summary_", 12)) pos = ops_at;
        else if (!strncmp(pt->name, "kernel_summary_", 15)) pos = ker_at;
        if (pos < 0) pos = (long)s->n;
        /* later sheets move one place down */
        if (ops_at >= pos) ops_at++;
        if (ker_at >= pos) ker_at++;
        tl_vec_reserve(s, 1);
        memmove(s->v + pos + 1, s->v + pos, (s->n - (size_t)pos) * sizeof *s->v);
        s->v[pos] = pt;
        s->n++;
    }
    ph->n = 0;
}

int tl_pyt_roofline_of(const tl_table *t, const struct tl_pm_arch *arch, tl_pyt_roofline *r)
{
    memset(r, 0, sizeof *r);
    long xc = tl_table_col(t, "FLOPS/Byte_first"), yc = tl_table_col(t, "TFLOPS/s_mean");
    long sc = tl_table_col(t, "Compute Spec");
    if (xc < 0 || yc < 0 || !t->nrows || !arch->has_mem_bw) return -1;
    double peak = 0;
    const char *spec = sc >= 0 && !tl_table_is_missing(t, (size_t)sc, 0) ? t->cols[sc].v.s[0] : NULL;
    if (!spec || tl_pm_arch_peak(arch, spec, &peak) != 0 || !(peak > 0)) return -1;
    double xmin = 1e300, xmax = 0;
    for (size_t row = 0; row < t->nrows; row++) {
        double v = tl_table_num(t, (size_t)xc, row);
        if (v > 0 && v < xmin) xmin = v;
        if (v > xmax) xmax = v;
    }
    if (!(xmax > 0)) return -1;
    double tbps = arch->mem_bw_gbps / 1000.0, ridge = peak / tbps;
    xmin = (xmin < ridge ? xmin : ridge) / 4;
    xmax = (xmax > ridge ? xmax : ridge) * 4;
    r->x_col = (size_t)xc;
    r->y_col = (size_t)yc;
    r->spec = spec;
    r->mem_x[0] = xmin; r->mem_y[0] = xmin * tbps; r->mem_x[1] = ridge; r->mem_y[1] = peak;
    r->compute_x[0] = ridge; r->compute_y[0] = peak; r->compute_x[1] = xmax; r->compute_y[1] = peak;
    return 0;
}

int tl_pyt_has_roofline(const char *sheet)
{
    return !strcmp(sheet, "GEMM") || !strncmp(sheet, "SDPA_", 5) || !strncmp(sheet, "CONV_", 5);
}
