/* kernels.c — the kernel-level sheets of the PyTorch report (spec
 * pytorch-report.md §4.5, §9.7, §9.8): kernel_summary and the short-kernel
 * study (short_kernel_histogram, short_kernels_summary). Both start from the
 * "kernel view": every event of category `kernel` (linked or not) with its
 * launching runtime call and the nearest cpu_op above it. Durations here
 * are the raw trace `dur`, not interval lengths, as in the reference. */
#include "query/pytorch/pytorch_internal.h"
#include "query/core/groupby.h"
#include "query/core/stats.h"

#include <stdlib.h>

typedef struct kview {
    size_t n;
    int32_t *row;
    int32_t *launcher;  /* runtime call (K.parent), -1 */
    int32_t *cpu;       /* nearest cpu_op above the launcher, -1 */
    int has_cpu;        /* some kernel has a parent cpu_op */
} kview;

static void kview_build(pyt_ctx *c, kview *v)
{
    size_t n = 0;
    for (size_t i = 0; i < c->n; i++)
        if (c->t->kind[i] == TL_K_KERNEL) n++;
    v->n = n;
    v->row = tl_xmalloc((n ? n : 1) * sizeof *v->row);
    v->launcher = tl_xmalloc((n ? n : 1) * sizeof *v->launcher);
    v->cpu = tl_xmalloc((n ? n : 1) * sizeof *v->cpu);
    v->has_cpu = 0;
    size_t k = 0;
    for (size_t i = 0; i < c->n; i++) {
        if (c->t->kind[i] != TL_K_KERNEL) continue;
        int32_t l = c->parent[i], p = -1;
        if (l >= 0)
            for (int32_t a = c->parent[l]; a >= 0; a = c->parent[a])
                if (c->t->kind[a] == TL_K_CPU_OP && !pyt_is_pseudo_op(c, a)) { p = a; break; }
        v->row[k] = (int32_t)i;
        v->launcher[k] = l;
        v->cpu[k] = p;
        if (p >= 0) v->has_cpu = 1;
        k++;
    }
}

static void kview_free(kview *v)
{
    free(v->row);
    free(v->launcher);
    free(v->cpu);
}

/* §6 category of a parent cpu_op: a launcher is categorised with its own
 * first direct kernel (its kernel_details), any other op by name only. */
static const char *cpu_category(pyt_ctx *c, int32_t cpu, int32_t *lidx_of)
{
    int32_t j = lidx_of[cpu];
    return pyt_category(c, cpu, j >= 0 ? c->l_first[j] : -1);
}

static int32_t *launcher_index(pyt_ctx *c)
{
    int32_t *x = tl_xmalloc((c->n ? c->n : 1) * sizeof *x);
    for (size_t i = 0; i < c->n; i++) x[i] = -1;
    for (size_t j = 0; j < c->nl; j++) x[c->l_row[j]] = (int32_t)j;
    return x;
}

/* ---- kernel_summary (§9.7) ------------------------------------------------ */

/* A kernel's group key: interned/dictionary pointers (NULL when missing)
 * and the stream; a record of bytes with no padding. */
typedef struct kskey {
    const char *cat, *cpu, *kname;
    int64_t has_stream, stream;
} kskey;

static int cmp_opt_str(const char *a, const char *b)
{
    if (!a || !b) return (!a) - (!b); /* missing last */
    return strcmp(a, b);
}

/* Kernels by key, as pandas' groupby(sort=True) over the key columns. */
static int cmp_kskey_rows(const void *ctx, size_t x, size_t y)
{
    const kskey *a = (const kskey *)ctx + x, *b = (const kskey *)ctx + y;
    int r;
    if ((r = cmp_opt_str(a->cat, b->cat))) return r;
    if ((r = cmp_opt_str(a->cpu, b->cpu))) return r;
    if ((r = cmp_opt_str(a->kname, b->kname))) return r;
    if (a->has_stream != b->has_stream) return (int)(b->has_stream - a->has_stream);
    if (a->stream != b->stream) return a->stream < b->stream ? -1 : 1;
    return 0;
}

static int contains_ci(const char *s, const char *lit)
{
    size_t m = strlen(lit);
    for (; *s; s++)
        if (!strncasecmp(s, lit, m)) return 1;
    return 0;
}

/* The group key of every kernel of the view. */
static kskey *kernel_keys(pyt_ctx *c, const kview *v)
{
    int32_t *lidx = launcher_index(c);
    kskey *keys = tl_xcalloc(v->n, sizeof *keys);
    for (size_t k = 0; k < v->n; k++) {
        int32_t r = v->row[k], l = v->launcher[k], p = v->cpu[k];
        const char *cat = NULL, *cpu = NULL;
        if (p >= 0) {
            cpu = pyt_name(c, p);
            cat = cpu_category(c, p, lidx);
        }
        if (l >= 0) {
            const char *ln = pyt_name(c, l);
            if (!cpu && v->has_cpu) cpu = ln;
            if (!cat) cat = (contains_ci(ln, "cudagraph") || contains_ci(ln, "graphlaunch")) ? "graph"
                            : ln[0] ? "runtime" : NULL;
            cat = pyt_intern(c, cat);
        }
        int64_t st;
        int hs = pyt_stream(c, r, &st);
        keys[k].cat = cat;
        keys[k].cpu = cpu;
        keys[k].kname = pyt_name(c, r);
        keys[k].has_stream = hs;
        keys[k].stream = hs ? st : 0;
    }
    free(lidx);
    return keys;
}

int pyt_sheet_kernel_summary(pyt_ctx *c, tl_pyt_sheets *out, tl_err *err)
{
    (void)err;
    kview v;
    kview_build(c, &v);
    if (!v.n) { kview_free(&v); return 0; }
    kskey *keys = kernel_keys(c, &v);
    double *dur = tl_xmalloc(v.n * sizeof *dur);
    double total_raw = 0;
    for (size_t k = 0; k < v.n; k++) {
        dur[k] = pyt_dur(c, v.row[k]);
        total_raw += dur[k];
    }
    tl_groups g;
    tl_groupby_fixed(&g, keys, sizeof *keys, v.n);
    tl_groups_sort(&g, cmp_kskey_rows, keys);
    size_t ng = g.ngroups;
    double *sums = tl_xmalloc(ng * sizeof *sums), *mins = tl_xmalloc(ng * sizeof *mins);
    double *maxs = tl_xmalloc(ng * sizeof *maxs);
    tl_groups_sum(&g, dur, sums);
    tl_groups_min(&g, dur, mins);
    tl_groups_max(&g, dur, maxs);
    size_t *idx = tl_xmalloc(ng * sizeof *idx);
    for (size_t i = 0; i < ng; i++) idx[i] = i;
    pyt_sort_desc(c, idx, ng, sums);

    tl_table *t = tl_table_new("kernel_summary");
    size_t ccat = tl_table_add_col(t, "Parent op category", TL_STR);
    long ccpu = v.has_cpu ? (long)tl_table_add_col(t, "Parent cpu_op", TL_STR) : -1;
    size_t ckn = tl_table_add_col(t, "Kernel name", TL_STR);
    size_t cst = tl_table_add_col(t, "Kernel stream", TL_I64);
    size_t csum = tl_table_add_col(t, "Kernel duration (µs)_sum", TL_F64);
    size_t ccnt = tl_table_add_col(t, "Kernel duration (µs)_count", TL_I64);
    size_t cmean = tl_table_add_col(t, "Kernel duration (µs)_mean", TL_F64);
    size_t cmin = tl_table_add_col(t, "Kernel duration (µs)_min", TL_F64);
    size_t cmax = tl_table_add_col(t, "Kernel duration (µs)_max", TL_F64);
    size_t cpk = tl_table_add_col(t, "Percent of kernels time (%)", TL_F64);
    size_t cpt = tl_table_add_col(t, "Percent of total time (%)", TL_F64);
    double total_us = c->total_time_ms * 1000.0;
    for (size_t i = 0; i < ng; i++) {
        size_t G = idx[i];
        const kskey *K = &keys[g.rows[g.start[G]]];
        double sum = sums[G];
        int64_t count = (int64_t)(g.start[G + 1] - g.start[G]);
        size_t r = tl_table_add_row(t);
        if (K->cat) tl_table_set_str(t, ccat, r, K->cat);
        if (ccpu >= 0 && K->cpu) tl_table_set_str(t, (size_t)ccpu, r, K->cpu);
        tl_table_set_str(t, ckn, r, K->kname);
        if (K->has_stream) tl_table_set_i64(t, cst, r, K->stream);
        tl_table_set_f64(t, csum, r, sum);
        tl_table_set_i64(t, ccnt, r, count);
        tl_table_set_f64(t, cmean, r, sum / (double)count);
        tl_table_set_f64(t, cmin, r, mins[G]);
        tl_table_set_f64(t, cmax, r, maxs[G]);
        tl_table_set_f64(t, cpk, r, total_raw != 0 ? sum / total_raw * 100.0 : NAN);
        tl_table_set_f64(t, cpt, r, sum / total_us * 100.0);
    }
    tl_table_int_na_as_float(t);
    free(idx);
    free(maxs);
    free(mins);
    free(sums);
    tl_groups_free(&g);
    free(dur);
    free(keys);
    kview_free(&v);
    pyt_sheets_push(out, t);
    return 0;
}

/* ---- short kernels (§9.8) ---------------------------------------------------------- */

typedef struct skgroup {
    const char *cpu, *dims, *strides, *conc, *kname;
    tl_kahan dur; /* the group sum, as pandas computes it */
    int64_t count;
    double mean, pct;
} skgroup;

/* per thread: the corpus workbook runs reports of several ranks at once */
static _Thread_local skgroup *sk_sort_base;
static int cmp_skgroup(const void *x, const void *y)
{
    const skgroup *a = &sk_sort_base[*(const size_t *)x], *b = &sk_sort_base[*(const size_t *)y];
    if (a->dur.sum != b->dur.sum) return a->dur.sum > b->dur.sum ? -1 : 1;
    if (a->count != b->count) return a->count < b->count ? -1 : 1;
    if (a->mean != b->mean) return a->mean < b->mean ? -1 : 1;
    if (a->pct != b->pct) return a->pct < b->pct ? -1 : 1;
    return *(const size_t *)x < *(const size_t *)y ? -1 : 1;
}

/* short_kernels_summary from the ng groups of the ns short kernels, the
 * first keep of them in order ord, as the reference's pandas frame writes
 * it (index=False) in each case:
 * - no short kernels: an empty DataFrame(), no columns (the CSV is "\n");
 * - short kernels but no group (groupby drops every row with a missing key):
 *   the aggregate's two-level columns, ("Kernel duration (µs)", sum / count /
 *   mean), which the CSV writes as two header lines: here the three columns
 *   and one text row holding the second level;
 * - else the flat columns, with the first keep groups as rows. */
static tl_table *short_summary_table(const skgroup *g, const size_t *ord, size_t ns, size_t ng, size_t keep,
                                     int gpu_only)
{
    tl_table *s = tl_table_new("short_kernels_summary");
    if (ns == 0) return s;
    if (ng == 0) {
        static const char *const level2[] = {"sum", "count", "mean"};
        size_t r = tl_table_add_row(s);
        for (size_t i = 0; i < 3; i++)
            tl_table_set_str(s, tl_table_add_col(s, "Kernel duration (µs)", TL_STR), r, level2[i]);
        return s;
    }
    long ccpu = -1, cd = -1, cs = -1, cc = -1;
    if (!gpu_only) {
        ccpu = (long)tl_table_add_col(s, "Parent cpu_op", TL_STR);
        cd = (long)tl_table_add_col(s, "Input dims", TL_STR);
        cs = (long)tl_table_add_col(s, "Input strides", TL_STR);
        cc = (long)tl_table_add_col(s, "Concrete Inputs", TL_STR);
    }
    size_t ckn = tl_table_add_col(s, "Kernel name", TL_STR);
    size_t csum = tl_table_add_col(s, "Short Kernel duration (µs) sum", TL_F64);
    size_t ccnt = tl_table_add_col(s, "Short Kernel count", TL_I64);
    size_t cmean = tl_table_add_col(s, "Short Kernel duration (µs) mean", TL_F64);
    size_t cpct = tl_table_add_col(s, "Short Kernel duration (µs) percent of total time", TL_F64);
    for (size_t i = 0; i < keep; i++) {
        const skgroup *G = &g[ord[i]];
        size_t r = tl_table_add_row(s);
        if (!gpu_only) {
            tl_table_set_str(s, (size_t)ccpu, r, G->cpu);
            tl_table_set_str(s, (size_t)cd, r, G->dims);
            tl_table_set_str(s, (size_t)cs, r, G->strides);
            tl_table_set_str(s, (size_t)cc, r, G->conc);
        }
        tl_table_set_str(s, ckn, r, G->kname);
        tl_table_set_f64(s, csum, r, G->dur.sum);
        tl_table_set_i64(s, ccnt, r, G->count);
        tl_table_set_f64(s, cmean, r, G->mean);
        tl_table_set_f64(s, cpct, r, G->pct);
    }
    return s;
}

int pyt_sheets_short_kernels(pyt_ctx *c, tl_pyt_sheets *out, tl_err *err)
{
    (void)err;
    kview v;
    kview_build(c, &v);
    double thr = c->o->short_kernel_threshold_us;
    size_t ns = 0;
    size_t *sk = tl_xmalloc((v.n ? v.n : 1) * sizeof *sk);
    for (size_t k = 0; k < v.n; k++)
        if (pyt_dur(c, v.row[k]) < thr) sk[ns++] = k;

    /* histogram: numpy.histogram with B equal bins over [min, max] */
    tl_table *h = tl_table_new("short_kernel_histogram");
    size_t cbs = tl_table_add_col(h, "bin_start", TL_F64);
    size_t cbe = tl_table_add_col(h, "bin_end", TL_F64);
    size_t cbc = tl_table_add_col(h, "count", TL_I64);
    int B = c->o->short_kernel_bins > 0 ? c->o->short_kernel_bins : 1;
    if (ns) {
        double lo = INFINITY, hi = -INFINITY;
        for (size_t i = 0; i < ns; i++) {
            double d = pyt_dur(c, v.row[sk[i]]);
            if (d < lo) lo = d;
            if (d > hi) hi = d;
        }
        if (lo == hi) { lo -= 0.5; hi += 0.5; }
        double *edge = tl_xmalloc(((size_t)B + 1) * sizeof *edge);
        double step = (hi - lo) / (double)B;
        for (int i = 0; i <= B; i++) edge[i] = (double)i * step + lo;
        edge[B] = hi;
        int64_t *cnt = tl_xcalloc((size_t)B, sizeof *cnt);
        double norm = (double)B / (hi - lo);
        for (size_t i = 0; i < ns; i++) {
            double d = pyt_dur(c, v.row[sk[i]]);
            /* clamped before the cast: a non-finite duration (a damaged
             * store) makes x NaN or infinite, which no long holds */
            double x = (d - lo) * norm;
            long b = x >= B ? B - 1 : x > 0 ? (long)x : 0;
            if (d < edge[b] && b > 0) b--;
            else if (b < B - 1 && d >= edge[b + 1]) b++;
            cnt[b]++;
        }
        for (int i = 0; i < B; i++) {
            size_t r = tl_table_add_row(h);
            tl_table_set_f64(h, cbs, r, edge[i]);
            tl_table_set_f64(h, cbe, r, edge[i + 1]);
            tl_table_set_i64(h, cbc, r, cnt[i]);
        }
        free(edge);
        free(cnt);
    }
    pyt_sheets_push(out, h);

    /* summary: group by (cpu_op, dims, strides, concrete, kernel name),
     * first appearance; rows with any missing key are dropped */
    int gpu_only = c->gpu_only;
    struct { const char *cpu, *dims, *str, *conc, *kn; } key;
    tl_bmap m;
    tl_bmap_init(&m, sizeof key, 256);
    skgroup *g = tl_xcalloc(ns ? ns : 1, sizeof *g);
    size_t ng = 0;
    for (size_t i = 0; i < ns; i++) {
        size_t k = sk[i];
        int32_t r = v.row[k], p = v.cpu[k];
        const char *cpu = NULL, *dims = NULL, *str = NULL, *conc = NULL;
        if (!gpu_only) {
            if (p < 0) continue;
            cpu = pyt_name(c, p);
            dims = pyt_arg_tuple(c, c->t->in_dims[p]);
            str = pyt_arg_tuple(c, c->t->in_strides[p]);
            conc = pyt_arg_tuple(c, c->t->concrete[p]);
            if (!dims || !str || !conc) continue;
        }
        const char *kn = pyt_name(c, r);
        memset(&key, 0, sizeof key);
        key.cpu = cpu;
        key.dims = dims;
        key.str = str;
        key.conc = conc;
        key.kn = kn;
        int isnew;
        size_t *slot = tl_bmap_put(&m, &key, &isnew);
        if (isnew) {
            *slot = ng;
            g[ng].cpu = cpu;
            g[ng].dims = dims;
            g[ng].strides = str;
            g[ng].conc = conc;
            g[ng].kname = kn;
            ng++;
        }
        skgroup *G = &g[*slot];
        double d = pyt_dur(c, r);
        tl_kahan_add(&G->dur, d);
        G->count++;
    }
    tl_bmap_free(&m);
    double total_us = c->total_time_ms * 1000.0;
    size_t *ord = tl_xmalloc((ng ? ng : 1) * sizeof *ord);
    for (size_t i = 0; i < ng; i++) {
        g[i].mean = g[i].dur.sum / (double)g[i].count;
        g[i].pct = g[i].dur.sum / total_us * 100.0;
        ord[i] = i;
    }
    sk_sort_base = g;
    qsort(ord, ng, sizeof *ord, cmp_skgroup);
    size_t keep = ng;
    if (c->o->topk_short_kernels >= 0 && (size_t)c->o->topk_short_kernels < keep)
        keep = (size_t)c->o->topk_short_kernels;
    pyt_sheets_push(out, short_summary_table(g, ord, ns, ng, keep, gpu_only));
    free(ord);
    free(g);
    free(sk);
    kview_free(&v);
    return 0;
}
