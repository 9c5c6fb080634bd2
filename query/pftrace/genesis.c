/* genesis.c — what the Genesis report (generate_perf_report_genesis.py,
 * genesis_analysis.py) adds to the rocprofv3 and pftrace reports: physics
 * kernel categories in place of the ML ones, the rocprof kernel_summary's
 * time columns brought from the reference's ns-labelled-µs to what they
 * say, and the GPU timeline of the steady-state window (the simulation
 * burst after JIT/build, found by the largest gap between dispatches or
 * as the trace's last seconds). */
#include "query/pftrace/pftrace.h"
#include "query/core/interval.h"
#include "query/core/stats.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const GENESIS_RULES[][12] = {
    {"Rigid Body Solver", "_kernel_solve_body", "_kernel_solve_one_iter", "func_solve_body", "func_solve_init",
     "_kernel_linesearch", "_kernel_solve_iter_post_linesearch", "_kernel_update_constraint",
     "_kernel_update_gradient", "_kernel_cg_save", "_kernel_update_search_direction", "kernel_compute_mass_matrix"},
    {"Broadphase Collision", "func_broad_phase"},
    {"Narrowphase Collision", "_func_narrowphase", "_func_prepare_gjk", "_func_reset_narrowphase"},
    {"Contact Management", "func_sort_contacts", "func_update_contact"},
    {"Time Integration", "kernel_step_1", "kernel_step_2", "func_update_qacc"},
    {"Constraints", "add_equality_constraints", "add_inequality_constraints"},
    {"Forward Kinematics", "kernel_forward_kinematics", "kernel_update_verts"},
    {"Geometry / AABB", "kernel_update_geom", "kernel_bit_reduction"},
    {"Memory Ops (ROCm)", "__amd_rocclr_copyBuffer", "__amd_rocclr_fillBuffer", "__amd_rocclr_initHeap"},
    {"Runtime Init", "runtime_initialize", "runtime_get_memory", "runtime_allocate", "fill_ndarray",
     "kernel_init_geom", "kernel_init_vvert", "ext_arr_to_ndarray"},
    {"PyTorch Runtime", "at::native::", "elementwise_kernel"},
};

const char *tl_pf_genesis_category(const char *name)
{
    for (size_t c = 0; c < sizeof GENESIS_RULES / sizeof *GENESIS_RULES; c++)
        for (size_t p = 1; p < 12 && GENESIS_RULES[c][p]; p++)
            if (strstr(name, GENESIS_RULES[c][p])) return GENESIS_RULES[c][0];
    return "Other";
}

/* fix_rocprof_kernel_summary_units: an F64 column divided by 1000. */
static void scale_col(tl_table *t, const char *name)
{
    long c = tl_table_col(t, name);
    if (c < 0 || t->cols[c].type != TL_F64) return;
    for (size_t r = 0; r < t->nrows; r++) t->cols[c].v.f[r] /= 1000.0;
}

/* An I64 column as F64 (pandas' int / 1000.0 is a float column). */
static void to_f64(tl_table *t, const char *name)
{
    long c = tl_table_col(t, name);
    if (c < 0 || t->cols[c].type == TL_F64) return;
    tl_column *col = &t->cols[c];
    double *f = tl_arena_alloc(&t->arena, (t->nrows ? t->nrows : 1) * sizeof *f);
    for (size_t r = 0; r < t->nrows; r++) f[r] = tl_table_num(t, (size_t)c, r);
    col->type = TL_F64;
    col->v.f = f;
    col->valid = NULL;
    col->as_float = 0;
}

static int cmp_cstr(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

tl_table *tl_pf_genesis_recategorize(tl_table *ks)
{
    tl_table *out = tl_table_new("kernel_summary_by_category");
    const char *cols[] = {"op category", "Count", "total_direct_kernel_time_ms", "Percentage (%)",
                          "Cumulative Percentage (%)"};
    const tl_type types[] = {TL_STR, TL_I64, TL_F64, TL_F64, TL_F64};
    for (size_t i = 0; i < 5; i++) tl_table_add_col(out, cols[i], types[i]);
    long name = tl_table_col(ks, "name"), count = tl_table_col(ks, "Count");
    if (name < 0 || count < 0 || !ks->nrows) return out;
    const char *ms = "Total Kernel Time (ms)";
    to_f64(ks, ms);
    to_f64(ks, "Mean Kernel Time (µs)");
    scale_col(ks, ms);
    scale_col(ks, "Mean Kernel Time (µs)");
    long cat = tl_table_col(ks, "Category"), msc = tl_table_col(ks, ms);
    if (cat < 0) cat = (long)tl_table_add_col(ks, "Category", TL_STR);
    const char **cats = tl_xmalloc(ks->nrows * sizeof *cats);
    for (size_t r = 0; r < ks->nrows; r++) {
        const char *nm = ks->cols[name].v.s[r];
        cats[r] = tl_pf_genesis_category(nm ? nm : "");
        tl_table_set_str_ref(ks, (size_t)cat, r, cats[r]);
    }
    /* groupby("Category") sorts the groups; percentages accumulate in that
     * order, then the rows are sorted by time (ties keep group order) */
    const char **groups = tl_xmalloc(ks->nrows * sizeof *groups);
    memcpy(groups, cats, ks->nrows * sizeof *groups);
    qsort(groups, ks->nrows, sizeof *groups, cmp_cstr);
    size_t ng = 0;
    for (size_t i = 0; i < ks->nrows; i++)
        if (!ng || strcmp(groups[ng - 1], groups[i])) groups[ng++] = groups[i];
    int64_t *cnt = tl_xcalloc(ng, sizeof *cnt);
    double *tot = tl_xcalloc(ng, sizeof *tot);
    for (size_t g = 0; g < ng; g++) {
        tl_kahan k = {0};
        for (size_t r = 0; r < ks->nrows; r++)
            if (!strcmp(cats[r], groups[g])) {
                cnt[g] += (int64_t)tl_table_num(ks, (size_t)count, r);
                tl_kahan_add(&k, tl_table_num(ks, (size_t)msc, r));
            }
        tot[g] = k.sum;
    }
    double total = tl_sum_pairwise(tot, ng), cum = 0;
    size_t *order = tl_xmalloc(ng * sizeof *order);
    for (size_t g = 0; g < ng; g++) {
        size_t j = g;
        for (; j > 0 && tot[order[j - 1]] < tot[g]; j--) order[j] = order[j - 1];
        order[j] = g;
    }
    double *pct = tl_xcalloc(ng, sizeof *pct), *cpct = tl_xcalloc(ng, sizeof *cpct);
    for (size_t g = 0; g < ng; g++) {
        pct[g] = total > 0 ? tot[g] / total * 100.0 : 0.0;
        cum += pct[g];
        cpct[g] = cum;
    }
    for (size_t i = 0; i < ng; i++) {
        size_t g = order[i], r = tl_table_add_row(out);
        tl_table_set_str(out, 0, r, groups[g]);
        tl_table_set_i64(out, 1, r, cnt[g]);
        tl_table_set_f64(out, 2, r, tot[g]);
        tl_table_set_f64(out, 3, r, pct[g]);
        tl_table_set_f64(out, 4, r, cpct[g]);
    }
    free(cats);
    free(groups);
    free(cnt);
    free(tot);
    free(order);
    free(pct);
    free(cpct);
    return out;
}

/* Busy percentage of the dispatches starting at or after cutoff over their
 * own window (_utilization_from_cutoff); 0 when none does. */
static double utilization(const int64_t *s, const int64_t *e, size_t n, int64_t cutoff, int64_t *ws, int64_t *we,
                          int64_t *busy, size_t *count)
{
    tl_ival *iv = tl_xmalloc((n ? n : 1) * sizeof *iv);
    size_t m = 0;
    *ws = INT64_MAX;
    *we = INT64_MIN;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < cutoff) continue;
        iv[m].s = s[i];
        iv[m++].e = e[i];
        if (s[i] < *ws) *ws = s[i];
        if (e[i] > *we) *we = e[i];
    }
    *count = m;
    *busy = 0;
    if (!m) {
        free(iv);
        return 0.0;
    }
    *busy = tl_ival_union_len(iv, m); /* _merge_intervals, summed */
    free(iv);
    int64_t total = *we - *ws > 1 ? *we - *ws : 1;
    return 100.0 * (double)*busy / (double)total;
}

static int cmp_start(const void *a, const void *b)
{
    const int64_t *x = a, *y = b;
    return (x[0] > y[0]) - (x[0] < y[0]);
}

int tl_pf_genesis_steady_state(const int64_t *starts, const int64_t *ends, size_t n, int64_t gap_ns,
                               int64_t fallback_ns, tl_table **timeline, tl_pf_steady *meta, tl_err *err)
{
    *timeline = NULL;
    memset(meta, 0, sizeof *meta);
    if (!n) return tl_errf(err, TL_EFORMAT, "the kernel trace has no dispatches");
    /* detect_steady_state_cutoff_ns: dispatches by start, the largest gap
     * between one's end and the next one's start */
    int64_t (*se)[2] = tl_xmalloc(n * sizeof *se);
    int64_t max_end = INT64_MIN;
    for (size_t i = 0; i < n; i++) {
        se[i][0] = starts[i];
        se[i][1] = ends[i];
        if (ends[i] > max_end) max_end = ends[i];
    }
    qsort(se, n, sizeof *se, cmp_start);
    char gap_method[64], last_method[64];
    snprintf(last_method, sizeof last_method, "last_%.1fs", (double)fallback_ns / 1e9);
    int64_t cutoff_gap;
    if (n < 2) {
        cutoff_gap = se[0][0];
        snprintf(gap_method, sizeof gap_method, "single_dispatch");
    } else {
        size_t best = 0;
        for (size_t i = 1; i + 1 < n; i++)
            if (se[i + 1][0] - se[i][1] > se[best + 1][0] - se[best][1]) best = i;
        int64_t gap = se[best + 1][0] - se[best][1];
        if (gap >= gap_ns) {
            cutoff_gap = se[best + 1][0];
            snprintf(gap_method, sizeof gap_method, "after_max_gap_%.1fms", (double)gap / 1e6);
        } else {
            cutoff_gap = se[n - 1][1] - fallback_ns;
            snprintf(gap_method, sizeof gap_method, "%s", last_method);
        }
    }
    free(se);
    const char *methods[2] = {gap_method, last_method};
    int64_t cutoffs[2] = {cutoff_gap, max_end - fallback_ns};
    double best_pct = -1.0;
    size_t pick = 0;
    int64_t ws, we, busy;
    size_t cnt;
    for (size_t k = 0; k < 2; k++) {
        double pct = utilization(starts, ends, n, cutoffs[k], &ws, &we, &busy, &cnt);
        if (pct > best_pct) best_pct = pct, pick = k;
    }
    utilization(starts, ends, n, cutoffs[pick], &ws, &we, &busy, &cnt);
    if (!cnt) return tl_errf(err, TL_EFORMAT, "no dispatch starts after the steady-state cutoff");
    int64_t total = we - ws > 1 ? we - ws : 1, idle = total - busy > 0 ? total - busy : 0;
    tl_table *t = tl_table_new("gpu_timeline");
    tl_table_add_col(t, "type", TL_STR);
    tl_table_add_col(t, "time ms", TL_F64);
    tl_table_add_col(t, "percent", TL_F64);
    const char *types[] = {"total_time", "kernel", "memory", "busy_time", "idle"};
    double ms[] = {(double)total / 1e6, (double)busy / 1e6, 0.0, (double)busy / 1e6, (double)idle / 1e6};
    double pc[] = {100.0, 100.0 * (double)busy / (double)total, 0.0, 100.0 * (double)busy / (double)total,
                   100.0 * (double)idle / (double)total};
    for (size_t i = 0; i < 5; i++) {
        size_t r = tl_table_add_row(t);
        tl_table_set_str(t, 0, r, types[i]);
        tl_table_set_f64(t, 1, r, ms[i]);
        tl_table_set_f64(t, 2, r, pc[i]);
    }
    snprintf(meta->method, sizeof meta->method, "%s", methods[pick]);
    meta->cutoff_ns = cutoffs[pick];
    meta->window_ms = (double)(we - ws) / 1e6;
    meta->dispatches = (int64_t)cnt;
    meta->gpu_util_pct = best_pct;
    *timeline = t;
    return 0;
}
