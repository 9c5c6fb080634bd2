/* rocprof_report.c — the rocprofv3 report sheets (see rocprof_report.h and
 * spec/formats.md §1.5-§1.7).
 *
 * Where the reference computes with pandas/numpy, the same floating-point
 * operations are done in the same order so that --reference-units output is
 * bit-identical: means are exact sums divided by counts, std is pandas'
 * Welford recurrence in row order, medians average the two middle values,
 * histograms follow numpy's bin-index arithmetic. Products that feed a sum
 * go through volatile temporaries so that a compiler targeting FMA hardware
 * cannot fuse them (numpy never does). */
#include "query/rocprof/rocprof.h"
#include "query/core/groupby.h"
#include "query/core/interval.h"
#include "query/core/stats.h"
#include "ingest/json.h"
#include "ingest/rocprof.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

void tl_rocprof_opts_default(tl_rocprof_opts *o)
{
    memset(o, 0, sizeof *o);
    o->kernel_summary = 1;
    o->short_threshold = 10;
    o->hist_bins = 100;
}

/* ---- categories (§1.5) -------------------------------------------------- */

/* Python's str.lower() maps two non-ASCII characters onto ASCII letters the
 * rules look for: KELVIN SIGN -> 'k' and LATIN CAPITAL I WITH DOT ABOVE ->
 * 'i' + U+0307. Everything else that lowercases to ASCII is ASCII. */
static size_t py_lower(const char *s, size_t n, char *out)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 'A' && c <= 'Z') {
            out[o++] = (char)(c + 32);
        } else if (c == 0xe2 && i + 2 < n && (unsigned char)s[i + 1] == 0x84 && (unsigned char)s[i + 2] == 0xaa) {
            out[o++] = 'k';
            i += 2;
        } else if (c == 0xc4 && i + 1 < n && (unsigned char)s[i + 1] == 0xb0) {
            out[o++] = 'i';
            out[o++] = (char)0xcc;
            out[o++] = (char)0x87;
            i += 1;
        } else {
            out[o++] = (char)c;
        }
    }
    out[o] = 0;
    return o;
}

static int has(const char *s, size_t n, const char *pat)
{
    return memmem(s, n, pat, strlen(pat)) != NULL;
}

const char *tl_rocprof_category(const char *name, size_t n)
{
    char small[512];
    char *low = n * 3 / 2 + 1 < sizeof small ? small : tl_xmalloc(n * 3 / 2 + 2);
    size_t m = py_lower(name, n, low);
    const char *cat;
    if (has(low, m, "gemm") || has(low, m, "matmul") || has(low, m, "cijk")) cat = "GEMM";
    else if (has(low, m, "elementwise")) cat = "Elementwise";
    else if (has(low, m, "reduce") || has(low, m, "sum")) cat = "Reduction";
    else if (has(low, m, "conv")) cat = "Convolution";
    else if (has(low, m, "norm")) cat = "Normalization"; /* batch_norm, layer_norm contain it */
    else if (has(low, m, "flash") || has(low, m, "attn") || has(low, m, "fmha")) cat = "Attention";
    else if (has(low, m, "copy") || has(low, m, "memcpy")) cat = "Memory";
    /* The reference's case-insensitive regex rccl|nccl|cross_device_reduce:
     * none of r, c, n, l has a non-ASCII case variant, and any match of
     * cross_device_reduce already contains "reduce" (Reduction above). */
    else if (has(low, m, "rccl") || has(low, m, "nccl")) cat = "COMM";
    else cat = "Other";
    if (low != small) free(low);
    return cat;
}

/* ---- helpers ------------------------------------------------------------ */

static double rp_mul(double a, double b)
{
    volatile double p = a * b;
    return p;
}

/* One pass over a kernel's args JSON for the two keys kernel_details needs
 * that are not columns. */
static void args_ids(const char *a, size_t n, int64_t *dispatch, int64_t *thread)
{
    *dispatch = 0;
    *thread = 0;
    if (!a || !n) return;
    tl_err e;
    tl_json j;
    tl_json_init_buf(&j, a, n, "args", &e);
    if (tl_json_expect(&j, '{', "{")) return;
    int first = 1;
    const char *k;
    size_t kn;
    while (tl_json_obj_next(&j, &first, &k, &kn) == 0 && k) {
        int64_t v;
        if (kn == 11 && !memcmp(k, "dispatch_id", 11)) {
            if (tl_json_i64(&j, &v) == 0) *dispatch = v;
            else return;
        } else if (kn == 9 && !memcmp(k, "thread_id", 9)) {
            if (tl_json_i64(&j, &v) == 0) *thread = v;
            else return;
        } else if (tl_json_skip(&j, NULL, NULL)) {
            return;
        }
    }
}

/* "[x, y, z]" -> three integers (defaults 1). */
static void parse_xyz(const char *s, int64_t v[3])
{
    v[0] = v[1] = v[2] = 1;
    if (!s || *s != '[') return;
    s++;
    for (int i = 0; i < 3 && *s; i++) {
        char *end;
        long long x = strtoll(s, &end, 10);
        if (end == s) return;
        v[i] = x;
        s = end;
        while (*s == ',' || *s == ' ') s++;
    }
}

/* ---- per-name groups ---------------------------------------------------- */

/* One kernel name's aggregates of the durations (ns). Sums, minima and
 * maxima of integer durations are exact in doubles and kept as integers. */
typedef struct group {
    const char *str;
    size_t len;
    int64_t count, sum, min, max;
    double std;           /* pandas group_var (Welford, ddof 1) */
    double median;
    int64_t scount, ssum; /* short kernels */
    const char *cat;
} group;

typedef struct ctx {
    const tl_trace *t;
    const tl_rocprof_opts *o;
    size_t *krows;       /* kernel event rows in file order */
    size_t nk;
    tl_groups by_name;   /* kernels (indices into krows) by name, in name order */
    group *g;            /* per group of by_name */
    size_t ng;
    int64_t total;       /* sum of all kernel durations (ns) */
} ctx;

/* A kernel's name id; ids past the dictionary share one group. */
static int64_t name_key(const ctx *c, size_t k)
{
    uint32_t nm = c->t->name[c->krows[k]], nd = (uint32_t)c->t->dict.n;
    return nm < nd ? nm : nd;
}

static int cmp_str(const char *a, size_t la, const char *b, size_t lb)
{
    int r = memcmp(a, b, la < lb ? la : lb);
    if (r) return r;
    return (la > lb) - (la < lb);
}

/* Kernels k1, k2 by name: Python compares code points = UTF-8 byte order. */
static int cmp_kernel_names(const void *cv, size_t k1, size_t k2)
{
    const ctx *c = cv;
    size_t l1, l2;
    const char *s1 = tl_dict_get(&c->t->dict, c->t->name[c->krows[k1]], &l1);
    const char *s2 = tl_dict_get(&c->t->dict, c->t->name[c->krows[k2]], &l2);
    return cmp_str(s1, l1, s2, l2);
}

static int cmp_group_name(const group *x, const group *y)
{
    return cmp_str(x->str, x->len, y->str, y->len);
}

/* pandas' groupby("name")["dur"].agg(count, sum, mean, median, std, min,
 * max) over the kernels, groups in name order. */
static void build_groups(ctx *c)
{
    const tl_trace *t = c->t;
    int64_t *keys = tl_xmalloc((c->nk + 1) * sizeof *keys);
    double *dur = tl_xmalloc((c->nk + 1) * sizeof *dur);
    c->total = 0;
    for (size_t k = 0; k < c->nk; k++) {
        keys[k] = name_key(c, k);
        dur[k] = (double)t->dur[c->krows[k]];
        c->total += t->dur[c->krows[k]];
    }
    tl_groups *bn = &c->by_name;
    tl_groupby_i64(bn, keys, c->nk);
    tl_groups_sort(bn, cmp_kernel_names, c);
    size_t ng = bn->ngroups;
    double *agg[5];
    for (int i = 0; i < 5; i++) agg[i] = tl_xmalloc((ng + 1) * sizeof *agg[i]);
    tl_groups_sum(bn, dur, agg[0]);
    tl_groups_min(bn, dur, agg[1]);
    tl_groups_max(bn, dur, agg[2]);
    tl_groups_std(bn, dur, 1, agg[3]);
    tl_groups_median(bn, dur, agg[4]);
    c->g = tl_xcalloc(ng + 1, sizeof *c->g);
    c->ng = ng;
    for (size_t i = 0; i < ng; i++) {
        group *g = &c->g[i];
        g->str = tl_dict_get(&t->dict, t->name[c->krows[bn->rows[bn->start[i]]]], &g->len);
        g->cat = tl_rocprof_category(g->str, g->len);
        g->count = (int64_t)(bn->start[i + 1] - bn->start[i]);
        g->sum = (int64_t)agg[0][i];
        g->min = (int64_t)agg[1][i];
        g->max = (int64_t)agg[2][i];
        g->std = agg[3][i];
        g->median = agg[4][i];
    }
    for (int i = 0; i < 5; i++) free(agg[i]);
    free(dur);
    free(keys);
}

/* Stable descending order of groups by a key (ties keep name order, which
 * is what pandas' sort_values(ascending=False) gives for a single key). */
static const int64_t *g_key;
static int cmp_desc_key(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    if (g_key[x] != g_key[y]) return g_key[x] > g_key[y] ? -1 : 1;
    return (x > y) - (x < y);
}

static size_t *order_desc(const int64_t *key, size_t n)
{
    size_t *perm = tl_xmalloc((n + 1) * sizeof *perm);
    for (size_t i = 0; i < n; i++) perm[i] = i;
    g_key = key;
    qsort(perm, n, sizeof *perm, cmp_desc_key);
    return perm;
}

static double pct(int64_t part, int64_t total)
{
    return total ? rp_mul((double)part / (double)total, 100.0) : 0.0;
}

/* ---- sheets ------------------------------------------------------------- */

static tl_table *sheet_gpu_timeline(const ctx *c, int64_t init, int64_t fini, tl_err *err)
{
    const tl_trace *t = c->t;
    tl_table *tb = tl_table_new("gpu_timeline");
    size_t ct = tl_table_add_col(tb, "type", TL_STR);
    size_t cm = tl_table_add_col(tb, "time ms", TL_F64);
    size_t cp = tl_table_add_col(tb, "percent", TL_F64);
    if (!c->nk) return tb; /* header only, as the reference (it warns) */
    size_t nm = 0;
    for (size_t i = 0; i < t->n; i++) nm += t->kind[i] == TL_K_MEMCPY;
    const char *names[5] = {"total_time", "kernel", "memory", "busy_time", "idle"};
    double ms[5], pc[5];
    if (c->o->reference_units) {
        /* The reference divides every ns endpoint by 1000 first (floats in
         * µs), merges, and prints µs / 1000. */
        tl_fival *kv = tl_xmalloc((c->nk + 1) * sizeof *kv), *mv = tl_xmalloc((nm + 1) * sizeof *mv);
        tl_fival *all = tl_xmalloc((c->nk + nm + 1) * sizeof *all);
        size_t m = 0;
        for (size_t i = 0; i < c->nk; i++) {
            size_t r = c->krows[i];
            kv[i].s = (double)t->ts[r] / 1000;
            kv[i].e = (double)(t->ts[r] + t->dur[r]) / 1000;
        }
        for (size_t i = 0; i < t->n; i++)
            if (t->kind[i] == TL_K_MEMCPY) {
                mv[m].s = (double)t->ts[i] / 1000;
                mv[m].e = (double)(t->ts[i] + t->dur[i]) / 1000;
                m++;
            }
        double T = (double)fini / 1000 - (double)init / 1000;
        double kern = tl_fival_union_len(kv, c->nk), mem = tl_fival_union_len(mv, m);
        tl_fival_interleave(kv, c->nk, mv, m, all);
        double busy = m ? tl_fival_union_len(all, c->nk + m) : kern;
        double idle = T - busy > 0 ? T - busy : 0;
        double us[5] = {T, kern, mem, busy, idle};
        for (int i = 0; i < 5; i++) {
            ms[i] = us[i] / 1000;
            pc[i] = i == 0 ? 100.0 : T != 0 ? rp_mul(us[i] / T, 100.0) : 0.0;
        }
        free(kv);
        free(mv);
        free(all);
    } else {
        /* Exact: integer ns intervals, one rounding per printed value. */
        tl_ival *kv = tl_xmalloc((c->nk + 1) * sizeof *kv), *mv = tl_xmalloc((nm + 1) * sizeof *mv);
        tl_ival *all = tl_xmalloc((c->nk + nm + 1) * sizeof *all);
        size_t m = 0;
        for (size_t i = 0; i < c->nk; i++) {
            size_t r = c->krows[i];
            kv[i].s = t->ts[r];
            kv[i].e = t->ts[r] + t->dur[r];
        }
        for (size_t i = 0; i < t->n; i++)
            if (t->kind[i] == TL_K_MEMCPY) {
                mv[m].s = t->ts[i];
                mv[m].e = t->ts[i] + t->dur[i];
                m++;
            }
        int64_t T = fini - init;
        int64_t kern = tl_ival_union_len(kv, c->nk), mem = tl_ival_union_len(mv, m);
        tl_ival_interleave(kv, c->nk, mv, m, all);
        int64_t busy = m ? tl_ival_union_len(all, c->nk + m) : kern;
        int64_t idle = T - busy > 0 ? T - busy : 0;
        int64_t ns[5] = {T, kern, mem, busy, idle};
        for (int i = 0; i < 5; i++) {
            ms[i] = (double)ns[i] / 1e6;
            pc[i] = i == 0 ? 100.0 : pct(ns[i], T);
        }
        free(kv);
        free(mv);
        free(all);
    }
    tl_table_set_nrows(tb, 5);
    for (int i = 0; i < 5; i++) {
        tl_table_set_str(tb, ct, (size_t)i, names[i]);
        tl_table_set_f64(tb, cm, (size_t)i, ms[i]);
        tl_table_set_f64(tb, cp, (size_t)i, pc[i]);
    }
    (void)err;
    return tb;
}

static tl_table *sheet_kernel_summary(const ctx *c)
{
    int ref = c->o->reference_units;
    tl_table *tb = tl_table_new("kernel_summary");
    if (!c->ng) {
        /* The reference's empty frame has this (different) column order. */
        static const char *cols[] = {"name", "Count", "Mean Kernel Time (µs)", "Median Kernel Time (µs)",
                                     "Std Kernel Time (µs)", "Min Kernel Time (µs)", "Max Kernel Time (µs)",
                                     "Total Kernel Time (ms)", "Percentage (%)", "Cumulative Percentage (%)",
                                     "Category"};
        for (size_t i = 0; i < sizeof cols / sizeof *cols; i++)
            tl_table_add_col(tb, cols[i], i == 0 || i == 10 ? TL_STR : i == 1 ? TL_I64 : TL_F64);
        return tb;
    }
    size_t cn = tl_table_add_col(tb, "name", TL_STR);
    size_t cc = tl_table_add_col(tb, "Count", TL_I64);
    size_t cmean = tl_table_add_col(tb, "Mean Kernel Time (µs)", TL_F64);
    size_t cmed = tl_table_add_col(tb, "Median Kernel Time (µs)", TL_F64);
    size_t cstd = tl_table_add_col(tb, "Std Kernel Time (µs)", TL_F64);
    size_t cmin = tl_table_add_col(tb, "Min Kernel Time (µs)", ref ? TL_I64 : TL_F64);
    size_t cmax = tl_table_add_col(tb, "Max Kernel Time (µs)", ref ? TL_I64 : TL_F64);
    size_t cpct = tl_table_add_col(tb, "Percentage (%)", TL_F64);
    size_t ccum = tl_table_add_col(tb, "Cumulative Percentage (%)", TL_F64);
    size_t ctot = tl_table_add_col(tb, "Total Kernel Time (ms)", TL_F64);
    size_t ccat = tl_table_add_col(tb, "Category", TL_STR);

    int64_t *sums = tl_xmalloc((c->ng + 1) * sizeof *sums);
    double *pcts = tl_xmalloc((c->ng + 1) * sizeof *pcts), *cums = tl_xmalloc((c->ng + 1) * sizeof *cums);
    for (size_t i = 0; i < c->ng; i++) {
        sums[i] = c->g[i].sum;
        pcts[i] = pct(c->g[i].sum, c->total);
    }
    size_t *perm = order_desc(sums, c->ng);
    double run = 0;
    if (ref) { /* running sum in name order, before the sort */
        for (size_t i = 0; i < c->ng; i++) cums[i] = run += pcts[i];
    } else {
        for (size_t i = 0; i < c->ng; i++) cums[perm[i]] = run += pcts[perm[i]];
    }
    tl_table_set_nrows(tb, c->ng);
    for (size_t row = 0; row < c->ng; row++) {
        const group *g = &c->g[perm[row]];
        double mean = (double)g->sum / (double)g->count;
        double sd = g->std;
        tl_table_set_strn(tb, cn, row, g->str, g->len);
        tl_table_set_i64(tb, cc, row, g->count);
        if (ref) {
            tl_table_set_f64(tb, cmean, row, mean);
            tl_table_set_f64(tb, cmed, row, g->median);
            tl_table_set_f64(tb, cstd, row, sd);
            tl_table_set_i64(tb, cmin, row, g->min);
            tl_table_set_i64(tb, cmax, row, g->max);
            tl_table_set_f64(tb, ctot, row, (double)g->sum / 1000);
        } else {
            tl_table_set_f64(tb, cmean, row, mean / 1000);
            tl_table_set_f64(tb, cmed, row, g->median / 1000);
            tl_table_set_f64(tb, cstd, row, sd / 1000);
            tl_table_set_f64(tb, cmin, row, (double)g->min / 1000);
            tl_table_set_f64(tb, cmax, row, (double)g->max / 1000);
            tl_table_set_f64(tb, ctot, row, (double)g->sum / 1e6);
        }
        tl_table_set_f64(tb, cpct, row, pcts[perm[row]]);
        tl_table_set_f64(tb, ccum, row, cums[perm[row]]);
        tl_table_set_str(tb, ccat, row, g->cat);
    }
    free(perm);
    free(sums);
    free(pcts);
    free(cums);
    return tb;
}

static const char *CATS[] = {"Attention", "COMM", "Convolution", "Elementwise", "GEMM",
                             "Memory", "Normalization", "Other", "Reduction"}; /* ascending */
#define NCATS (sizeof CATS / sizeof *CATS)

/* The reference's category percentages, in both modes: each category's
 * duration sum as a float (ns / 1000.0, its "ms" column), divided by the
 * pandas (pairwise) sum of those floats, then times 100. Dividing by the
 * exact integer total instead changes last digits (a final cumulative
 * 100.0 where the reference prints 100.00000000000001). */
static void category_pcts(const int64_t *sum_ns, size_t n, double *pcts)
{
    double ms[NCATS];
    for (size_t i = 0; i < n; i++) ms[i] = (double)sum_ns[i] / 1000.0;
    double total = tl_sum_pairwise(ms, n);
    for (size_t i = 0; i < n; i++) pcts[i] = total > 0 ? rp_mul(ms[i] / total, 100.0) : 0.0;
}

static tl_table *sheet_by_category(const ctx *c)
{
    int ref = c->o->reference_units;
    tl_table *tb = tl_table_new("kernel_summary_by_category");
    size_t cn = tl_table_add_col(tb, "op category", TL_STR);
    size_t cc = tl_table_add_col(tb, "Count", TL_I64);
    size_t ct = tl_table_add_col(tb, "total_direct_kernel_time_ms", TL_F64);
    size_t cp = tl_table_add_col(tb, "Percentage (%)", TL_F64);
    size_t ccum = tl_table_add_col(tb, "Cumulative Percentage (%)", TL_F64);
    int64_t cnt[NCATS] = {0}, sum[NCATS] = {0};
    for (size_t i = 0; i < c->ng; i++) {
        size_t k = 0;
        while (k < NCATS && strcmp(CATS[k], c->g[i].cat)) k++;
        cnt[k] += c->g[i].count;
        sum[k] += c->g[i].sum;
    }
    /* present categories, ascending */
    int64_t keys[NCATS];
    size_t idx[NCATS], n = 0;
    for (size_t k = 0; k < NCATS; k++)
        if (cnt[k]) {
            idx[n] = k;
            keys[n] = sum[k];
            n++;
        }
    size_t *perm = order_desc(keys, n);
    double pcts[NCATS], cums[NCATS], run = 0;
    category_pcts(keys, n, pcts);
    if (ref) {
        for (size_t i = 0; i < n; i++) cums[i] = run += pcts[i];
    } else {
        for (size_t i = 0; i < n; i++) cums[perm[i]] = run += pcts[perm[i]];
    }
    tl_table_set_nrows(tb, n);
    for (size_t row = 0; row < n; row++) {
        size_t i = perm[row], k = idx[i];
        tl_table_set_str(tb, cn, row, CATS[k]);
        tl_table_set_i64(tb, cc, row, cnt[k]);
        tl_table_set_f64(tb, ct, row, ref ? (double)sum[k] / 1000 : (double)sum[k] / 1e6);
        tl_table_set_f64(tb, cp, row, pcts[i]);
        tl_table_set_f64(tb, ccum, row, cums[i]);
    }
    free(perm);
    return tb;
}

static tl_table *sheet_kernel_details(const ctx *c)
{
    const tl_trace *t = c->t;
    int ref = c->o->reference_units;
    tl_table *tb = tl_table_new("kernel_details");
    if (!c->nk) return tb; /* no columns, as the reference's empty frame */
    /* duration descending as the reference's sort_values(ascending=False):
     * NumPy's unstable introsort, so tied durations come in its order
     * (ns durations are exact in doubles) */
    double *dur = tl_xmalloc(c->nk * sizeof *dur);
    size_t *perm = tl_xmalloc(c->nk * sizeof *perm);
    for (size_t i = 0; i < c->nk; i++) {
        dur[i] = (double)t->dur[c->krows[i]];
        perm[i] = i;
    }
    tl_pd_sort_values(perm, c->nk, dur, 0);
    size_t n = c->nk;
    if (c->o->has_topk) { /* pandas head(k) */
        long long k = c->o->topk;
        if (k >= 0) n = (size_t)k < n ? (size_t)k : n;
        else n = (size_t)(-k) < n ? n - (size_t)(-k) : 0;
    }
    static const char *cols[] = {"name", "Kernel duration (µs)", "stream", "dispatch_id", "grid_x", "grid_y",
                                 "grid_z", "block_x", "block_y", "block_z", "agent_id", "thread_id"};
    size_t ci[12];
    for (int i = 0; i < 12; i++)
        ci[i] = tl_table_add_col(tb, cols[i], i == 0 ? TL_STR : (i == 1 && !ref) ? TL_F64 : TL_I64);
    tl_table_set_nrows(tb, n);
    for (size_t row = 0; row < n; row++) {
        size_t r = c->krows[perm[row]];
        size_t len;
        const char *nm = tl_dict_get(&t->dict, t->name[r], &len);
        tl_table_set_strn(tb, ci[0], row, nm, len);
        if (ref) tl_table_set_i64(tb, ci[1], row, t->dur[r]);
        else tl_table_set_f64(tb, ci[1], row, (double)t->dur[r] / 1000);
        tl_table_set_i64(tb, ci[2], row, t->stream[r] == TL_NONE ? 0 : t->stream[r]);
        int64_t did, thr, g[3], b[3];
        size_t alen;
        const char *a = tl_trace_args(t, r, &alen);
        args_ids(a, alen, &did, &thr);
        parse_xyz(t->grid[r] ? tl_trace_str(t, t->grid[r]) : NULL, g);
        parse_xyz(t->block[r] ? tl_trace_str(t, t->block[r]) : NULL, b);
        tl_table_set_i64(tb, ci[3], row, did);
        for (int k = 0; k < 3; k++) {
            tl_table_set_i64(tb, ci[4 + k], row, g[k]);
            tl_table_set_i64(tb, ci[7 + k], row, b[k]);
        }
        tl_table_set_i64(tb, ci[10], row, t->device[r] == TL_NONE ? 0 : t->device[r]);
        tl_table_set_i64(tb, ci[11], row, thr);
    }
    free(dur);
    free(perm);
    return tb;
}

/* short_kernels_summary: sum descending, ties by name (then count, mean,
 * percent, which a unique name already decides). */
static const group *g_groups;
static int cmp_short(const void *a, const void *b)
{
    const group *x = &g_groups[*(const size_t *)a], *y = &g_groups[*(const size_t *)b];
    if (x->ssum != y->ssum) return x->ssum > y->ssum ? -1 : 1;
    return cmp_group_name(x, y);
}

static int is_short(const ctx *c, int64_t dur_ns)
{
    if (c->o->reference_units) return (double)dur_ns < c->o->short_threshold;
    return (double)dur_ns < rp_mul(c->o->short_threshold, 1000.0);
}

static tl_table *sheet_short_summary(ctx *c, uint64_t *nshort)
{
    int ref = c->o->reference_units;
    const tl_trace *t = c->t;
    tl_table *tb = tl_table_new("short_kernels_summary");
    size_t cn = tl_table_add_col(tb, "name", TL_STR);
    size_t cc = tl_table_add_col(tb, "Short Kernel count", TL_I64);
    size_t cs = tl_table_add_col(tb, "Short Kernel duration (µs) sum", ref ? TL_I64 : TL_F64);
    size_t cm = tl_table_add_col(tb, "Short Kernel duration (µs) mean", TL_F64);
    size_t cp = tl_table_add_col(tb, "Short Kernel duration (µs) percent of total time", TL_F64);
    /* the short kernels' durations, NaN for the others: their per-name
     * count and sum */
    double *dur = tl_xmalloc((c->nk + 1) * sizeof *dur);
    *nshort = 0;
    for (size_t i = 0; i < c->nk; i++) {
        int64_t d = t->dur[c->krows[i]];
        int short_one = is_short(c, d);
        dur[i] = short_one ? (double)d : NAN;
        *nshort += (uint64_t)short_one;
    }
    int64_t *cnt = tl_xmalloc((c->ng + 1) * sizeof *cnt);
    double *sum = tl_xmalloc((c->ng + 1) * sizeof *sum);
    tl_groups_count(&c->by_name, dur, cnt);
    tl_groups_sum(&c->by_name, dur, sum);
    for (size_t i = 0; i < c->ng; i++) {
        c->g[i].scount = cnt[i];
        c->g[i].ssum = (int64_t)sum[i];
    }
    free(sum);
    free(cnt);
    free(dur);
    size_t *perm = tl_xmalloc((c->ng + 1) * sizeof *perm), n = 0;
    for (size_t i = 0; i < c->ng; i++)
        if (c->g[i].scount) perm[n++] = i;
    g_groups = c->g;
    qsort(perm, n, sizeof *perm, cmp_short);
    tl_table_set_nrows(tb, n);
    for (size_t row = 0; row < n; row++) {
        const group *g = &c->g[perm[row]];
        double mean = (double)g->ssum / (double)g->scount;
        tl_table_set_strn(tb, cn, row, g->str, g->len);
        tl_table_set_i64(tb, cc, row, g->scount);
        if (ref) {
            tl_table_set_i64(tb, cs, row, g->ssum);
            tl_table_set_f64(tb, cm, row, mean);
        } else {
            tl_table_set_f64(tb, cs, row, (double)g->ssum / 1000);
            tl_table_set_f64(tb, cm, row, mean / 1000);
        }
        tl_table_set_f64(tb, cp, row, pct(g->ssum, c->total));
    }
    free(perm);
    return tb;
}

/* numpy.histogram(values, bins) with equal-width bins over [min, max]. */
static tl_table *sheet_histogram(const ctx *c)
{
    const tl_trace *t = c->t;
    int ref = c->o->reference_units;
    tl_table *tb = tl_table_new("short_kernel_histogram");
    size_t cs = tl_table_add_col(tb, "bin_start", TL_F64);
    size_t ce = tl_table_add_col(tb, "bin_end", TL_F64);
    size_t cc = tl_table_add_col(tb, "count", TL_I64);
    TL_VEC(double) v = {0};
    for (size_t i = 0; i < c->nk; i++) {
        int64_t d = t->dur[c->krows[i]];
        if (is_short(c, d)) tl_vec_push(&v, ref ? (double)d : (double)d / 1000);
    }
    if (!v.n) return tb;
    double lo = v.v[0], hi = v.v[0];
    for (size_t i = 1; i < v.n; i++) {
        if (v.v[i] < lo) lo = v.v[i];
        if (v.v[i] > hi) hi = v.v[i];
    }
    if (lo == hi) {
        lo -= 0.5;
        hi += 0.5;
    }
    size_t nb = (size_t)c->o->hist_bins;
    double *edges = tl_xmalloc((nb + 1) * sizeof *edges);
    double step = (hi - lo) / (double)nb; /* np.linspace: i * step + start, last = stop */
    for (size_t i = 0; i < nb; i++) {
        volatile double p = (double)i * step;
        edges[i] = p + lo;
    }
    edges[nb] = hi;
    int64_t *cnt = tl_xcalloc(nb, sizeof *cnt);
    double denom = hi - lo;
    for (size_t i = 0; i < v.n; i++) {
        double a = v.v[i];
        volatile double q = (a - lo) / denom;
        double f = q * (double)nb;
        size_t k = (size_t)f;
        if (k == nb) k--;
        if (k > 0 && a < edges[k]) k--;
        else if (a >= edges[k + 1] && k != nb - 1) k++;
        cnt[k]++;
    }
    tl_table_set_nrows(tb, nb);
    for (size_t i = 0; i < nb; i++) {
        tl_table_set_f64(tb, cs, i, edges[i]);
        tl_table_set_f64(tb, ce, i, edges[i + 1]);
        tl_table_set_i64(tb, cc, i, cnt[i]);
    }
    free(cnt);
    free(edges);
    tl_vec_free(&v);
    return tb;
}

/* ---- entry -------------------------------------------------------------- */

static int64_t meta_i64(const char *m, size_t n, const char *key)
{
    int64_t v = 0;
    if (m && tl_args_get_i64(m, n, key, &v) != 0) v = 0;
    return v;
}

int tl_rocprof_report(const tl_trace *t, const tl_rocprof_opts *o, tl_rocprof_result *res, tl_err *err)
{
    memset(res, 0, sizeof *res);
    if (!t->format || strcmp(t->format, "rocprof") != 0)
        return tl_errf(err, TL_EFORMAT, "Not a valid rocprofv3 file: trace %016llx is a %s trace",
                       (unsigned long long)t->id, t->format ? t->format : "unknown");
    if (o->short_kernel_study && o->hist_bins < 1)
        return tl_errf(err, TL_EUSAGE, "`bins` must be positive, when an integer (got %ld)", o->hist_bins);
    if (o->short_kernel_study && !(o->short_threshold == o->short_threshold))
        return tl_errf(err, TL_EUSAGE, "the short-kernel threshold is not a number");

    ctx c;
    memset(&c, 0, sizeof c);
    c.t = t;
    c.o = o;
    c.krows = tl_xmalloc((t->n + 1) * sizeof *c.krows);
    for (size_t i = 0; i < t->n; i++) {
        if (t->kind[i] == TL_K_KERNEL) c.krows[c.nk++] = i;
        else if (t->kind[i] == TL_K_MEMCPY) res->n_memcpy++;
        else if (t->kind[i] == TL_K_RUNTIME || t->kind[i] == TL_K_DRIVER) res->n_api++;
    }
    res->n_kernels = c.nk;

    size_t mlen = 0;
    const char *meta = tl_trace_extra(t, TL_ROCPROF_X_METADATA, &mlen);
    int64_t init = meta_i64(meta, mlen, "init_time"), fini = meta_i64(meta, mlen, "fini_time");
    res->pid = meta_i64(meta, mlen, "pid");
    snprintf(res->hostname, sizeof res->hostname, "unknown");
    size_t nlen;
    const char *node = meta ? tl_args_get(meta, mlen, "node", &nlen) : NULL;
    if (node) {
        tl_buf hb = {0};
        if (tl_args_get_str(node, nlen, "hostname", &hb) == 0 && hb.p)
            snprintf(res->hostname, sizeof res->hostname, "%s", hb.p);
        tl_buf_free(&hb);
    }
    size_t wlen;
    const char *w = tl_trace_extra(t, TL_ROCPROF_X_WARNINGS, &wlen);
    if (w && wlen) res->warnings = tl_xstrndup(w, wlen);

    build_groups(&c);
    res->sheets[res->nsheets++] = sheet_gpu_timeline(&c, init, fini, err);
    if (o->kernel_summary) {
        res->sheets[res->nsheets++] = sheet_kernel_summary(&c);
        res->sheets[res->nsheets++] = sheet_by_category(&c);
    }
    if (o->kernel_details) res->sheets[res->nsheets++] = sheet_kernel_details(&c);
    if (o->short_kernel_study) {
        res->sheets[res->nsheets++] = sheet_short_summary(&c, &res->n_short);
        res->sheets[res->nsheets++] = sheet_histogram(&c);
    }
    free(c.krows);
    tl_groups_free(&c.by_name);
    free(c.g);
    return 0;
}

void tl_rocprof_result_free(tl_rocprof_result *res)
{
    for (size_t i = 0; i < res->nsheets; i++) tl_table_free(res->sheets[i]);
    free(res->warnings);
    memset(res, 0, sizeof *res);
}
