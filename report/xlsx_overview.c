/* xlsx_overview.c — the native charts of workbooks whose command draws
 * none of its own (rocprofv3 and its Perfetto form, JAX, collective,
 * corpus, compare): chosen by sheet name and column names, so any report
 * with such a sheet gets them. Each chart sits beside the table it plots. */
#include "report/report.h"

#include <string.h>

/* A bar (or column) chart of one column against a label column, when the
 * sheet has both; max rows from the top (the sheets come sorted). */
typedef struct bar_rule {
    const char *sheet, *label, *value, *title, *unit;
    tl_chart_kind kind;
    size_t max_rows;
} bar_rule;

static const bar_rule BARS[] = {
    {"gpu_timeline", "type", "time ms", "GPU timeline (ms)", "ms", TL_CHART_BAR, 8},
    {"kernel_summary_by_category", "op category", "total_direct_kernel_time_ms", "GPU kernel time by category (ms)",
     "ms", TL_CHART_BAR, 30},
    {"kernel_launchers_summary_by_category", "op category", "total_direct_kernel_time_ms",
     "GPU kernel time by category (ms)", "ms", TL_CHART_BAR, 30},
    {"kernel_summary", "name", "Total Kernel Time (ms)", "Top kernels by total time (ms)", "ms", TL_CHART_BAR, 20},
    {"xla_summary", "name", "total_direct_kernel_time_ms", "Top XLA ops by kernel time (ms)", "ms", TL_CHART_BAR, 20},
    {"imbalance_ranks", "rank", "compute_time_ms", "Compute time per rank (ms)", "ms", TL_CHART_COLUMN, 256},
    {"straggler_summary", "rank", "total_wait_time_us", "Collective wait per rank (µs)", "µs", TL_CHART_COLUMN, 256},
    {"nccl_summary_implicit_sync", "Collective name", "comm_latency_mean", "Mean latency per collective (µs)", "µs",
     TL_CHART_BAR, 30},
    /* the rocprofv3 Perfetto (pftrace) reports */
    {"category_summary", "Category", "Total runtime (ms)", "GPU time by kernel category (ms)", "ms", TL_CHART_BAR,
     30},
    {"kernel_summary", "Name", "Time %", "Top kernels: share of GPU kernel time (%)", "%", TL_CHART_BAR, 20},
    {"hip_summary", "Name", "Time %", "Top HIP API calls: share of API time (%)", "%", TL_CHART_BAR, 20},
    {"api_kernel_summary", "API Name", "Count", "Kernel launches per HIP API call site", "calls", TL_CHART_BAR, 20},
    {"memory_copy_by_copy_bytes", "copy_bytes", "count", "Memory copies by size (bytes)", "copies", TL_CHART_BAR,
     30},
};
#define NBARS (sizeof BARS / sizeof *BARS)

static long row_named(const tl_table *t, const char *name)
{
    if (!t->ncols || t->cols[0].type != TL_STR) return -1;
    for (size_t r = 0; r < t->nrows; r++)
        if (!tl_table_is_missing(t, 0, r) && !strcmp(t->cols[0].v.s[r], name)) return (long)r;
    return -1;
}

/* gpu_timeline in the PyTorch/JAX layout (computation, exposed comm,
 * exposed memcpy first, idle_time later): a pie of the four. */
static int timeline_pie(tl_xlsx *x, const tl_table *t, tl_err *err)
{
    long v = tl_table_col(t, "time ms"), idle = row_named(t, "idle_time");
    if (v < 0 || idle < 3 || row_named(t, "computation_time") != 0 || row_named(t, "exposed_memcpy_time") != 2)
        return 0;
    tl_chart_spec c = {0};
    c.kind = TL_CHART_PIE;
    c.sheet = t->name;
    c.value_col = (size_t)v;
    c.nrows = 3;
    c.also_row = (size_t)idle + 1;
    c.title = "GPU time: computation, exposed comm, exposed memcpy and idle";
    c.anchor_row = 1;
    c.anchor_col = -1;
    return tl_report_xlsx_add_chart(x, &c, err);
}

/* Side-by-side sheets of a compare workbook: one series per report, from
 * the columns named "<tag>::<what>". */
typedef struct side_rule {
    const char *sheet, *label, *what, *title, *unit;
    size_t max_rows;
} side_rule;

static const side_rule SIDES[] = {
    {"gpu_timeline", "type", "::time ms", "GPU timeline per report (ms)", "ms", 8},
    {"ops_summary", "name", "::total_direct_kernel_time_ms", "Top ops per report: GPU kernel time (ms)", "ms", 20},
};
#define NSIDES (sizeof SIDES / sizeof *SIDES)

static int side_by_side(tl_xlsx *x, const tl_table *t, const side_rule *r, tl_err *err)
{
    long lc = tl_table_col(t, r->label);
    size_t cols[8], nc = 0, nw = strlen(r->what);
    for (size_t c = 0; c < t->ncols && nc < 8; c++) {
        size_t len = strlen(t->cols[c].name);
        if (len > nw && !strcmp(t->cols[c].name + len - nw, r->what)) cols[nc++] = c;
    }
    if (lc < 0 || nc < 2) return 0;
    tl_chart_spec c = {0};
    c.kind = TL_CHART_BAR;
    c.sheet = t->name;
    c.label_col = (size_t)lc;
    c.value_col = cols[0];
    c.more_values = cols + 1;
    c.nmore = nc - 1;
    c.nrows = t->nrows < r->max_rows ? t->nrows : r->max_rows;
    c.title = r->title;
    c.x_title = r->unit;
    c.anchor_row = 1;
    c.anchor_col = -1;
    if (c.nrows * nc > 12) c.y_scale = (double)(c.nrows * nc) / 12.0;
    return tl_report_xlsx_add_chart(x, &c, err);
}

int tl_report_xlsx_add_overview(tl_xlsx *x, tl_table *const *tables, size_t n, tl_err *err)
{
    for (size_t i = 0; i < n; i++) {
        const tl_table *t = tables[i];
        if (!t->nrows) continue;
        for (size_t k = 0; k < NSIDES; k++) {
            if (strcmp(t->name, SIDES[k].sheet)) continue;
            int rc = side_by_side(x, t, &SIDES[k], err);
            if (rc) return rc;
        }
        int row = 1;
        if (!strcmp(t->name, "gpu_timeline")) {
            int rc = timeline_pie(x, t, err);
            if (rc) return rc;
            if (row_named(t, "idle_time") >= 3) row = 18;
        }
        for (size_t k = 0; k < NBARS; k++) {
            const bar_rule *b = &BARS[k];
            if (strcmp(t->name, b->sheet)) continue;
            long lc = tl_table_col(t, b->label), vc = tl_table_col(t, b->value);
            if (lc < 0 || vc < 0) continue;
            tl_chart_spec c = {0};
            c.kind = b->kind;
            c.sheet = t->name;
            c.label_col = (size_t)lc;
            c.value_col = (size_t)vc;
            c.nrows = t->nrows < b->max_rows ? t->nrows : b->max_rows;
            c.title = b->title;
            if (b->kind == TL_CHART_BAR) c.x_title = b->unit;
            else c.y_title = b->unit;
            c.anchor_row = row;
            c.anchor_col = -1;
            if (b->kind == TL_CHART_BAR && c.nrows > 12) c.y_scale = (double)c.nrows / 12.0;
            if (b->kind == TL_CHART_COLUMN && c.nrows > 16) c.x_scale = (double)c.nrows / 16.0;
            int rc = tl_report_xlsx_add_chart(x, &c, err);
            if (rc) return rc;
        }
    }
    return 0;
}
