/* activity_summary.c — the NSYS-style tables of the hip_activity report:
 * kernel_summary (by name and launch configuration, or by name) and
 * hip_summary (HIP API calls by name, stream and/or operation), as
 * pftrace_hip_activity_analysis.py builds them: buckets in first-seen
 * order, rows by total time descending (ties in bucket order, as pandas'
 * descending sort_values keeps them), pretty columns first. */
#include "query/pftrace/pf_internal.h"

#include <stdlib.h>
#include <string.h>

const char *pf_human_ns(tl_arena *a, double ns)
{
    if (ns >= 1e6) return tl_arena_printf(a, "%.3f ms", ns / 1e6);
    if (ns >= 1e3) return tl_arena_printf(a, "%.3f μs", ns / 1e3);
    return tl_arena_printf(a, "%lld ns", (long long)ns);
}

/* A bucket: its key event (first seen), its durations. */
typedef struct bucket {
    const pf_act_ev *first;
    const char *name;
    int64_t *durs;
    size_t n, cap;
    pf_stats st;
} bucket;

typedef struct buckets {
    tl_bmap index; /* key tuple -> bucket + 1 */
    bucket *v;
    size_t n, cap;
} buckets;

typedef struct bkey {
    const char *name; /* interned in the arena by text (same text, same pointer) */
    int64_t f[7];
} bkey;

static void bucket_add(buckets *b, const bkey *k, const pf_act_ev *e, const char *name)
{
    int isnew;
    size_t *slot = tl_bmap_put(&b->index, k, &isnew);
    if (isnew) {
        if (b->n == b->cap) b->v = tl_xrealloc(b->v, (b->cap = b->cap * 2 + 16) * sizeof *b->v);
        memset(&b->v[b->n], 0, sizeof *b->v);
        b->v[b->n].first = e;
        b->v[b->n].name = name;
        *slot = ++b->n;
    }
    bucket *x = &b->v[*slot - 1];
    if (x->n == x->cap) x->durs = tl_xrealloc(x->durs, (x->cap = x->cap * 2 + 8) * sizeof *x->durs);
    x->durs[x->n++] = e->dur_ns;
}

/* Bucket order for the rows: total descending, ties in first-seen order. */
static int cmp_total(const void *x, const void *y)
{
    const bucket *a = *(const bucket *const *)x, *b = *(const bucket *const *)y;
    if (a->st.sum != b->st.sum) return a->st.sum > b->st.sum ? -1 : 1;
    return a < b ? -1 : a > b;
}

/* The buckets' statistics, the buckets in row order, and (total_all not
 * NULL) the sum of every bucket's time. */
static bucket **sorted_buckets(buckets *b, int64_t *total_all)
{
    bucket **order = tl_xmalloc((b->n ? b->n : 1) * sizeof *order);
    int64_t total = 0;
    for (size_t i = 0; i < b->n; i++) {
        pf_stats_of(b->v[i].durs, b->v[i].n, &b->v[i].st);
        total += b->v[i].st.sum;
        order[i] = &b->v[i];
    }
    if (total_all) *total_all = total;
    qsort(order, b->n, sizeof *order, cmp_total);
    return order;
}

static void buckets_free(buckets *b)
{
    for (size_t i = 0; i < b->n; i++) free(b->v[i].durs);
    free(b->v);
    tl_bmap_free(&b->index);
}

/* The pretty and raw (ns) statistics cells of one bucket's row; Time %
 * is of baseline. */
static void stat_cells(tl_table *t, size_t r, const bucket *x, int64_t baseline, tl_arena *a)
{
    double frac = baseline > 0 ? (double)x->st.sum / (double)baseline : 0.0;
    double pct = frac * 100.0;
    tl_table_set_str(t, (size_t)tl_table_col(t, "Time"), r, tl_arena_printf(a, "%.1f%%", pct));
    tl_table_set_str(t, (size_t)tl_table_col(t, "Total Time"), r, pf_human_ns(a, (double)x->st.sum));
    tl_table_set_i64(t, (size_t)tl_table_col(t, "Instances"), r, (int64_t)x->n);
    const char *pretty[] = {"Avg", "Med", "Min", "Max", "StdDev"};
    double vals[] = {x->st.avg, x->st.med, (double)x->st.min, (double)x->st.max, x->st.std};
    for (size_t i = 0; i < 5; i++) tl_table_set_str(t, (size_t)tl_table_col(t, pretty[i]), r, pf_human_ns(a, vals[i]));
    tl_table_set_f64(t, (size_t)tl_table_col(t, "Time %"), r, pct);
    tl_table_set_i64(t, (size_t)tl_table_col(t, "Total Time (ns)"), r, x->st.sum);
    tl_table_set_f64(t, (size_t)tl_table_col(t, "Avg (ns)"), r, x->st.avg);
    tl_table_set_f64(t, (size_t)tl_table_col(t, "Med (ns)"), r, x->st.med);
    tl_table_set_i64(t, (size_t)tl_table_col(t, "Min (ns)"), r, x->st.min);
    tl_table_set_i64(t, (size_t)tl_table_col(t, "Max (ns)"), r, x->st.max);
    tl_table_set_f64(t, (size_t)tl_table_col(t, "StdDev (ns)"), r, x->st.std);
}

/* Columns: the pretty ones, then mid[] (type per entry), then the raw ones,
 * then tail[] (I64). */
static tl_table *summary_table(const char *name, const char *const *mid, const tl_type *mid_t, size_t nmid,
                               const char *const *tail, size_t ntail)
{
    tl_table *t = tl_table_new(name);
    const char *head[] = {"Time", "Total Time", "Instances", "Avg", "Med", "Min", "Max", "StdDev"};
    for (size_t i = 0; i < 8; i++) tl_table_add_col(t, head[i], i == 2 ? TL_I64 : TL_STR);
    for (size_t i = 0; i < nmid; i++) tl_table_add_col(t, mid[i], mid_t[i]);
    const char *raw[] = {"Time %", "Total Time (ns)", "Avg (ns)", "Med (ns)", "Min (ns)", "Max (ns)", "StdDev (ns)"};
    const tl_type raw_t[] = {TL_F64, TL_I64, TL_F64, TL_F64, TL_I64, TL_I64, TL_F64};
    for (size_t i = 0; i < 7; i++) tl_table_add_col(t, raw[i], raw_t[i]);
    for (size_t i = 0; i < ntail; i++) tl_table_add_col(t, tail[i], TL_I64);
    return t;
}

tl_table *pf_kernel_summary(const pf_act_ev *const *evs, size_t n, int64_t baseline, int by_name, int merge,
                            tl_arena *a)
{
    if (!n) return tl_table_new("kernel_summary"); /* pd.DataFrame() of no rows: no columns */
    buckets b;
    memset(&b, 0, sizeof b);
    tl_bmap_init(&b.index, sizeof(bkey), 64);
    tl_smap names;
    tl_smap_init(&names, 64);
    for (size_t i = 0; i < n; i++) {
        const pf_act_ev *e = evs[i];
        const char *nm = merge ? pf_strip_digits(a, e->name) : e->name;
        int isnew;
        size_t *ix = tl_smap_put(&names, nm, strlen(nm), &isnew);
        if (isnew) *ix = (size_t)(uintptr_t)nm;
        bkey k;
        memset(&k, 0, sizeof k);
        k.name = (const char *)(uintptr_t)*ix;
        if (!by_name) {
            int64_t f[7] = {e->grid, e->block, e->vgpr, e->accum_vgpr, e->sgpr, e->lds, e->scratch};
            memcpy(k.f, f, sizeof f);
        }
        bucket_add(&b, &k, e, k.name);
    }
    bucket **order = sorted_buckets(&b, NULL);
    static const char *const cfg_mid[] = {"GridXYZ", "BlockXYZ", "VGPR", "AccumVGPR", "SGPR", "LDS", "Scratch", "Name"};
    static const tl_type cfg_t[] = {TL_STR, TL_STR, TL_I64, TL_I64, TL_I64, TL_I64, TL_I64, TL_STR};
    static const char *const cfg_tail[] = {"GridX", "GridY", "GridZ", "BlockX", "BlockY", "BlockZ"};
    static const char *const name_mid[] = {"Name"};
    static const tl_type name_t[] = {TL_STR};
    tl_table *t = by_name ? summary_table("kernel_summary", name_mid, name_t, 1, NULL, 0)
                          : summary_table("kernel_summary", cfg_mid, cfg_t, 8, cfg_tail, 6);
    for (size_t i = 0; i < b.n; i++) {
        const bucket *x = order[i];
        size_t r = tl_table_add_row(t);
        stat_cells(t, r, x, baseline, a);
        tl_table_set_str(t, (size_t)tl_table_col(t, "Name"), r, x->name);
        if (by_name) continue;
        const pf_act_ev *e = x->first;
        tl_table_set_str(t, 8, r, tl_arena_printf(a, "%7lld %4d %4d", (long long)e->grid, 1, 1));
        tl_table_set_str(t, 9, r, tl_arena_printf(a, "%7lld %4d %4d", (long long)e->block, 1, 1));
        int64_t cfg[] = {e->vgpr, e->accum_vgpr, e->sgpr, e->lds, e->scratch};
        for (size_t c = 0; c < 5; c++) tl_table_set_i64(t, 10 + c, r, cfg[c]);
        int64_t tail[] = {e->grid, 1, 1, e->block, 1, 1};
        for (size_t c = 0; c < 6; c++) tl_table_set_i64(t, (size_t)tl_table_col(t, cfg_tail[c]), r, tail[c]);
    }
    free(order);
    tl_smap_free(&names);
    buckets_free(&b);
    return t;
}

tl_table *pf_hip_summary(const pf_act_list *hip, const char *group, tl_arena *a)
{
    if (!hip->n) return tl_table_new("hip_summary");
    int by_stream = !strcmp(group, "name+stream") || !strcmp(group, "name+stream+op");
    int by_op = !strcmp(group, "name+op") || !strcmp(group, "name+stream+op");
    buckets b;
    memset(&b, 0, sizeof b);
    tl_bmap_init(&b.index, sizeof(bkey), 64);
    tl_smap names;
    tl_smap_init(&names, 64);
    for (size_t i = 0; i < hip->n; i++) {
        const pf_act_ev *e = &hip->v[i];
        int isnew;
        size_t *ix = tl_smap_put(&names, e->name, strlen(e->name), &isnew);
        if (isnew) *ix = (size_t)(uintptr_t)e->name;
        bkey k;
        memset(&k, 0, sizeof k);
        k.name = (const char *)(uintptr_t)*ix;
        k.f[0] = by_stream ? e->stream : 0;
        k.f[1] = by_op ? e->op : 0;
        bucket_add(&b, &k, e, k.name);
    }
    int64_t baseline;
    bucket **order = sorted_buckets(&b, &baseline);
    const char *mid[3];
    tl_type mid_t[3];
    size_t nmid = 0;
    if (by_stream) mid[nmid] = "Stream", mid_t[nmid++] = TL_I64;
    if (by_op) mid[nmid] = "Op", mid_t[nmid++] = TL_I64;
    mid[nmid] = "Name", mid_t[nmid++] = TL_STR;
    tl_table *t = summary_table("hip_summary", mid, mid_t, nmid, NULL, 0);
    for (size_t i = 0; i < b.n; i++) {
        const bucket *x = order[i];
        size_t r = tl_table_add_row(t);
        stat_cells(t, r, x, baseline, a);
        tl_table_set_str(t, (size_t)tl_table_col(t, "Name"), r, x->name);
        if (by_stream) tl_table_set_i64(t, (size_t)tl_table_col(t, "Stream"), r, x->first->stream);
        if (by_op) tl_table_set_i64(t, (size_t)tl_table_col(t, "Op"), r, x->first->op);
    }
    free(order);
    tl_smap_free(&names);
    buckets_free(&b);
    return t;
}
