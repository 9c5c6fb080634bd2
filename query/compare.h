/* compare.h — side-by-side comparison of two or more performance reports
 * (spec diff-compare-phases.md Part B, the reference's
 * TraceLens_compare_perf_reports_pytorch).
 *
 * Input: the sheets of each report as tl_tables (read from a workbook or a
 * CSV folder by report/, or computed from a stored trace by
 * query/pytorch_report); the first report is the baseline. For each sheet
 * group the reports are outer-joined on the group's key columns (null keys
 * match null keys, rows in ascending key order), every non-key column is
 * prefixed with its report's tag (`h100::Count`), and per metric and
 * variant tag `<metric>__<tag>_diff` and `<metric>__<tag>_pct` are added.
 * The per-op groups are then split into intersect / only_baseline /
 * only_variant sheets. Results are tl_tables with the xlsx-hidden columns
 * flagged; writing them is the caller's business. Text cells of the results
 * point into the input tables (kernel-detail cells are large): keep the
 * inputs alive until the results are freed. */
#ifndef TL_COMPARE_H
#define TL_COMPARE_H

#include <stddef.h>
#include <stdio.h>
#include "table.h"

/* Sheet groups (--sheets). */
enum {
    TL_CMP_GPU_TIMELINE = 1,
    TL_CMP_OPS_SUMMARY = 2,
    TL_CMP_KERNEL_SUMMARY = 4,
    TL_CMP_OPS_ALL = 8,
    TL_CMP_ROOFLINE = 16,
    TL_CMP_ALL = 31,
};
/* Group bit of a --sheets word ("all" included), or 0 when unknown. */
unsigned tl_compare_group(const char *word);

typedef struct tl_cmp_report {
    const char *tag;            /* column prefix, unique among reports */
    const char *path;           /* for messages ("<path> has no 'x.csv'") */
    int is_dir;                 /* a CSV folder (message wording only) */
    tl_table *const *sheets;    /* the report's sheets, by table name */
    size_t nsheets;
} tl_cmp_report;

/* Result list; works with the tl_vec_* macros. */
typedef struct tl_cmp_sheets {
    tl_table **v;
    size_t n, cap;
} tl_cmp_sheets;
void tl_cmp_sheets_free(tl_cmp_sheets *s);

/* Runs the selected groups over n >= 2 reports; appends the result sheets
 * in the reference's order (gpu_timeline, ops_summary, kernel_summary, the
 * ops_all group, the roofline group). Table names are the full sheet names
 * (e.g. unified_perf_summary_only_baseline_mi300); columns to hide in a
 * workbook have tl_column.hidden set. log (may be NULL) receives the
 * reference's notes (skipped roofline sheets). Errors name the report and
 * sheet ("ops_summary sheet not found in <path>", missing metric column,
 * duplicate tags). */
int tl_compare_reports(const tl_cmp_report *reports, size_t n, unsigned groups, FILE *log,
                       tl_cmp_sheets *out, tl_err *err);

/* ---- the two building blocks (B2, B3), exposed for tests -------------- */

/* B2: prefix, successive outer merge on keys, diff/pct columns. tables[k]
 * belongs to tags[k] (k = 0 baseline). The result is named `name`. */
int tl_compare_build(const tl_table *const *tables, const char *const *tags, size_t n,
                     const char *const *keys, size_t nkeys, const char *const *metrics,
                     size_t nmetrics, const char *name, tl_table **out, tl_err *err);

/* B3: from a merged table, for each variant tag, the sheets
 * <base>_intersect_<t>, <base>_only_baseline_<t>, <base>_only_variant_<t>
 * (appended to out). check = the metric deciding presence, sort = the
 * column (unprefixed) sorted descending. */
int tl_compare_split(const tl_table *merged, const char *const *tags, size_t n, const char *base,
                     const char *check, const char *sort, tl_cmp_sheets *out, tl_err *err);

/* Stable descending sort of t's rows by a numeric column, missing last. */
void tl_compare_sort_desc(tl_table *t, const char *col);

#endif
