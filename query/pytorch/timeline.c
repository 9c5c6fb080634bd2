/* pytorch_timeline.c — GPU interval algebra (spec pytorch-report.md §5) and
 * the gpu_timeline sheet (§9.1). Busy time — the length of the union of
 * [ts, ts+dur] intervals in double µs — is the primitive every direct,
 * subtree and kernel time of the report is made of; with the endpoints
 * computed once as the reference does (§5.4) every length here is exact. */
#include "query/pytorch/pytorch_internal.h"

#include <stdlib.h>

typedef struct ival { double s, e; } ival;
typedef struct ivec { ival *v; size_t n, cap; } ivec;

static void ivec_push(ivec *a, double s, double e)
{
    if (a->n == a->cap) {
        a->cap = a->cap ? a->cap * 2 : 64;
        a->v = tl_xrealloc(a->v, a->cap * sizeof *a->v);
    }
    a->v[a->n].s = s;
    a->v[a->n++].e = e;
}

/* Sorted rows -> merged intervals (touching intervals merge). */
static void merge_rows(const pyt_ctx *c, const int32_t *rows, size_t n, ivec *out)
{
    out->n = 0;
    for (size_t i = 0; i < n; i++) {
        double s = c->ts[rows[i]], e = pyt_te(c, rows[i]);
        if (out->n && s <= out->v[out->n - 1].e) {
            if (e > out->v[out->n - 1].e) out->v[out->n - 1].e = e;
        } else {
            ivec_push(out, s, e);
        }
    }
}

static double ilen(const ivec *a)
{
    double s = 0;
    for (size_t i = 0; i < a->n; i++) s += a->v[i].e - a->v[i].s;
    return s;
}

/* A - B for sorted disjoint lists (half-open; no zero-length pieces). */
static void isub(const ivec *a, const ivec *b, ivec *out)
{
    out->n = 0;
    size_t j = 0;
    for (size_t i = 0; i < a->n; i++) {
        double s = a->v[i].s, e = a->v[i].e;
        while (j < b->n && b->v[j].e <= s) j++;
        size_t k = j;
        while (k < b->n && b->v[k].s < e) {
            if (b->v[k].s > s) ivec_push(out, s, b->v[k].s);
            if (b->v[k].e > s) s = b->v[k].e;
            if (s >= e) break;
            k++;
        }
        if (s < e) ivec_push(out, s, e);
    }
}

static int32_t *sorted_copy(const pyt_ctx *c, const int32_t *rows, size_t n)
{
    int32_t *r = tl_xmalloc((n ? n : 1) * sizeof *r);
    memcpy(r, rows, n * sizeof *r);
    pyt_sort_rows_by_ts(c, r, n);
    return r;
}

double pyt_busy(const pyt_ctx *c, const int32_t *rows, size_t n)
{
    if (!n) return 0;
    if (n == 1) return pyt_te(c, rows[0]) - c->ts[rows[0]];
    int32_t small[64];
    int32_t *r = n <= 64 ? small : sorted_copy(c, rows, n);
    if (n <= 64) {
        memcpy(small, rows, n * sizeof *rows);
        pyt_sort_rows_by_ts(c, small, n);
    }
    double tot = 0, s = c->ts[r[0]], e = pyt_te(c, r[0]);
    for (size_t i = 1; i < n; i++) {
        double s2 = c->ts[r[i]], e2 = pyt_te(c, r[i]);
        if (s2 <= e) {
            if (e2 > e) e = e2;
        } else {
            tot += e - s;
            s = s2;
            e = e2;
        }
    }
    tot += e - s;
    if (r != small) free(r);
    return tot;
}

int pyt_timeline_metrics(const pyt_ctx *c, const int32_t *rows, size_t n, pyt_metrics *m)
{
    memset(m, 0, sizeof *m);
    if (!n) return -1;
    int32_t *r = sorted_copy(c, rows, n);
    int32_t *part = tl_xmalloc(n * sizeof *part);
    ivec all = {0}, comp = {0}, comm = {0}, mc = {0}, t1 = {0}, t2 = {0};
    merge_rows(c, r, n, &all);
    size_t k;
    k = 0;
    for (size_t i = 0; i < n; i++) if (c->gclass[r[i]] == PYT_G_COMP) part[k++] = r[i];
    merge_rows(c, part, k, &comp);
    k = 0;
    for (size_t i = 0; i < n; i++) if (c->gclass[r[i]] == PYT_G_COMM) part[k++] = r[i];
    merge_rows(c, part, k, &comm);
    k = 0;
    for (size_t i = 0; i < n; i++) if (c->gclass[r[i]] == PYT_G_MEMCPY) part[k++] = r[i];
    merge_rows(c, part, k, &mc);

    m->total = all.v[all.n - 1].e - all.v[0].s;
    m->comp = ilen(&comp);
    m->comm = ilen(&comm);
    isub(&comm, &comp, &t1);
    m->exposed_comm = ilen(&t1);
    m->memcpy = ilen(&mc);
    isub(&mc, &comp, &t1);
    isub(&t1, &comm, &t2);
    m->exposed_memcpy = ilen(&t2);
    m->busy = ilen(&all);
    m->idle = m->total - m->busy;
    if (c->o->has_micro_idle) {
        double T = c->o->micro_idle_thresh_us;
        for (size_t i = 1; i < all.n; i++) {
            double g = all.v[i].s - all.v[i - 1].e;
            if (g <= 0) continue;
            if (g < T) m->micro_idle += g;
            else m->macro_idle += g;
        }
    }
    free(all.v); free(comp.v); free(comm.v); free(mc.v); free(t1.v); free(t2.v);
    free(part);
    free(r);
    return 0;
}

static void add_rows(tl_table *t, const pyt_metrics *m, int micro, int rc, int is_rec)
{
    struct { const char *name; double v; } rows[10];
    size_t nr = 0;
    rows[nr].name = "computation_time"; rows[nr++].v = m->comp;
    rows[nr].name = "exposed_comm_time"; rows[nr++].v = m->exposed_comm;
    rows[nr].name = "exposed_memcpy_time"; rows[nr++].v = m->exposed_memcpy;
    rows[nr].name = "busy_time"; rows[nr++].v = m->busy;
    if (micro) {
        rows[nr].name = "micro_idle_time"; rows[nr++].v = m->micro_idle;
        rows[nr].name = "macro_idle_time"; rows[nr++].v = m->macro_idle;
    } else {
        rows[nr].name = "idle_time"; rows[nr++].v = m->idle;
    }
    rows[nr].name = "total_time"; rows[nr++].v = m->total;
    rows[nr].name = "total_comm_time"; rows[nr++].v = m->comm;
    rows[nr].name = "total_memcpy_time"; rows[nr++].v = m->memcpy;
    for (size_t i = 0; i < nr; i++) {
        size_t r = tl_table_add_row(t);
        tl_table_set_str(t, 0, r, rows[i].name);
        tl_table_set_f64(t, 1, r, rows[i].v / 1000.0);
        tl_table_set_f64(t, 2, r, rows[i].v / m->total * 100.0);
        if (rc >= 0) tl_table_set_bool(t, (size_t)rc, r, is_rec);
    }
}

int pyt_sheet_gpu_timeline(pyt_ctx *c, tl_pyt_sheets *out, tl_err *err)
{
    size_t n = c->n, k = 0;
    int32_t *rows = tl_xmalloc((n ? n : 1) * sizeof *rows);
    for (size_t i = 0; i < n; i++)
        if (c->gclass[i] && (c->o->include_unlinked_kernels || c->parent[i] >= 0)) rows[k++] = (int32_t)i;
    if (!k) {
        free(rows);
        return tl_errf(err, TL_ENOTFOUND, "No GPU events found in the trace");
    }
    tl_table *t = tl_table_new("gpu_timeline");
    tl_table_add_col(t, "type", TL_STR);
    tl_table_add_col(t, "time ms", TL_F64);
    tl_table_add_col(t, "percent", TL_F64);
    int micro = c->o->has_micro_idle;
    pyt_metrics m;
    if (c->recompute) {
        size_t rc = tl_table_add_col(t, "is_recompute", TL_BOOL);
        int32_t *sub = tl_xmalloc(k * sizeof *sub);
        int first = 1;
        for (int want = 0; want <= 1; want++) {
            size_t ns = 0;
            for (size_t i = 0; i < k; i++)
                if (c->recompute[rows[i]] == want) sub[ns++] = rows[i];
            if (!ns) continue;
            pyt_timeline_metrics(c, sub, ns, &m);
            if (first) c->total_time_ms = m.total / 1000.0;
            first = 0;
            add_rows(t, &m, micro, (int)rc, want);
        }
        free(sub);
    } else {
        pyt_timeline_metrics(c, rows, k, &m);
        c->total_time_ms = m.total / 1000.0;
        add_rows(t, &m, micro, -1, 0);
    }
    free(rows);
    pyt_sheets_push(out, t);
    return TL_OK;
}
