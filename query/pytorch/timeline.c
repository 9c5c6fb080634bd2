/* timeline.c — GPU interval algebra (spec pytorch-report.md §5) and
 * the gpu_timeline sheet (§9.1). Busy time — the length of the union of
 * [ts, ts+dur] intervals in double µs — is the primitive every direct,
 * subtree and kernel time of the report is made of; with the endpoints
 * computed once as the reference does (§5.4) every length here is exact. */
#include "query/pytorch/pytorch_internal.h"

#include "query/core/interval.h"

#include <stdlib.h>

typedef TL_VEC(tl_fival) fivec;

/* The merged intervals of the rows of r (sorted by ts) whose GPU class is
 * cls, or of all of them when cls is 0; nc: how many rows that is (the
 * arrays are sized by it: a trace's GPU events are mostly of one class). */
static void merge_rows(const pyt_ctx *c, const int32_t *r, size_t n, int cls, size_t nc, fivec *out)
{
    out->n = 0;
    tl_vec_reserve(out, nc ? nc : 1);
    for (size_t i = 0; i < n; i++)
        if (!cls || c->gclass[r[i]] == cls) out->v[out->n++] = (tl_fival){pyt_ts(c, r[i]), pyt_te(c, r[i])};
    out->n = tl_fival_union_sorted(out->v, out->n);
}

/* out = a - b */
static void fivec_sub(const fivec *a, const fivec *b, fivec *out)
{
    out->n = 0;
    tl_vec_reserve(out, a->n + b->n);
    out->n = tl_fival_sub(a->v, a->n, b->v, b->n, out->v);
}

int pyt_timeline_metrics(const pyt_ctx *c, const int32_t *rows, size_t n, pyt_metrics *m)
{
    memset(m, 0, sizeof *m);
    if (!n) return -1;
    int32_t *r = tl_xmalloc(n * sizeof *r);
    memcpy(r, rows, n * sizeof *r);
    pyt_sort_rows_by_ts(c, r, n);
    size_t ncls[4] = {0};
    for (size_t i = 0; i < n; i++) ncls[c->gclass[r[i]] & 3]++;
    fivec all = {0}, comp = {0}, comm = {0}, mc = {0}, t1 = {0}, t2 = {0};
    merge_rows(c, r, n, 0, n, &all);
    merge_rows(c, r, n, PYT_G_COMP, ncls[PYT_G_COMP], &comp);
    merge_rows(c, r, n, PYT_G_COMM, ncls[PYT_G_COMM], &comm);
    merge_rows(c, r, n, PYT_G_MEMCPY, ncls[PYT_G_MEMCPY], &mc);

    m->total = all.v[all.n - 1].e - all.v[0].s;
    m->comp = tl_fival_len(comp.v, comp.n);
    m->comm = tl_fival_len(comm.v, comm.n);
    fivec_sub(&comm, &comp, &t1);
    m->exposed_comm = tl_fival_len(t1.v, t1.n);
    m->memcpy = tl_fival_len(mc.v, mc.n);
    fivec_sub(&mc, &comp, &t1);
    fivec_sub(&t1, &comm, &t2);
    m->exposed_memcpy = tl_fival_len(t2.v, t2.n);
    m->busy = tl_fival_len(all.v, all.n);
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
    int32_t *rows = tl_xmalloc((c->ngpu ? c->ngpu : 1) * sizeof *rows); /* GPU rows only */
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
