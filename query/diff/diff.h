/* diff.h — the diff family: TraceDiff of two traces (merged call trees,
 * LCA attribution, diff_stats) and the side-by-side comparison of reports. */
#ifndef TL_DIFF_DIFF_H
#define TL_DIFF_DIFF_H

#include <stdint.h>
#include <stdio.h>
#include <stddef.h>

#include "query/core/table.h"
#include "query/core/trace.h"

/* ---- TraceDiff: the morphology-aware diff of two PyTorch traces
 * (spec diff-compare-phases.md Part A, the contract).
 *
 * The two host call-stack trees (built at ingest, query/core/trace.h) are merged
 * level by level into one tree: siblings are aligned by position when that
 * is safe, else by edit distance over normalised names with a same-name
 * disambiguation pass; wrappers with a single GPU child are collapsed and
 * one-sided wrappers are looked through, so that e.g. aten::_convolution
 * meets itself although MIOpen and cuDNN lower it differently. Wherever the
 * trees diverge, the GPU work of each side is attributed to the lowest
 * common ancestor (LCA) still shared, giving diff_stats (one row per GPU
 * event), its unique-args summary, the cpu-op <-> kernel maps and the UID
 * map. Nothing here writes files: the tables and texts go to the caller
 * (tools/cmd_diff.c writes the reference's file set). */

typedef struct tl_diff_opts {
    int python;      /* include python_function events in both trees (the
                        reference's include_pyfunc; default off) */
    int debug;       /* the four TRACELENS_DEBUG columns of diff_stats (A6.2) */
    FILE *log;       /* the reference's "[TraceDiff] ..." messages; NULL = none */
} tl_diff_opts;

typedef struct tl_diff tl_diff;

/* Builds the merged tree and the UID map (A3-A4) and every report table
 * (A6-A8). t1 = baseline ("trace1"), t2 = variant ("trace2"); both must
 * outlive the result. Fails with TL_EFORMAT and "Both trees must have at
 * least one root node in cpu_root_nodes." when either has no cpu root. */
int tl_diff_run(const tl_trace *t1, const tl_trace *t2, const tl_diff_opts *o, tl_diff **out,
                tl_err *err);
void tl_diff_free(tl_diff *d);

/* ---- results --------------------------------------------------------- */
size_t tl_diff_merged_nodes(const tl_diff *d);
size_t tl_diff_roots(const tl_diff *d, size_t *n1, size_t *n2); /* merged; per-side top roots */
/* 1 when the traces were judged identical (A6.6): the tables then hold only
 * trace1 rows and no `source` column. */
int tl_diff_identical(const tl_diff *d);
/* 1 when no GPU event reached diff_stats (A6.5): no tables, no files but the tree. */
int tl_diff_empty(const tl_diff *d);

/* The tables as the reference writes them (owned by d; NULL when empty):
 * diff_stats.csv (A6) and diff_stats_unique_args_summary.csv (A7, after the
 * A8 renaming side effects). */
const tl_table *tl_diff_stats(const tl_diff *d);
const tl_table *tl_diff_summary(const tl_diff *d);

/* get_corresponding_uid (A4.9): the other tree's UID of a node paired during
 * the merge, -1 for a one-sided or never-visited node. tree is 1 or 2. */
int64_t tl_diff_corresponding_uid(const tl_diff *d, int tree, int64_t uid);
/* The whole UID map as a table: tree, uid, name, corresponding_uid (missing
 * = none), in tree then uid order. Caller frees. */
tl_table *tl_diff_uid_map(const tl_diff *d);

/* Per-LCA summary (A10.1). Caller frees. */
tl_table *tl_diff_lca_summary(const tl_diff *d);

/* merged_tree_output.txt (A5): the text is appended to out. */
void tl_diff_tree_text(const tl_diff *d, int prune_non_gpu, tl_buf *out);
/* print_merged_subtree: the merged node whose uid1 (uid1 >= 0 wins) or uid2
 * is the given UID, as a lone last root, appended to out. TL_ENOTFOUND /
 * TL_EUSAGE with the reference's messages. */
int tl_diff_subtree_text(const tl_diff *d, int64_t uid1, int64_t uid2, tl_buf *out, tl_err *err);

/* The cpu-op maps (A8) as the reference writes them (JSON, no trailing
 * newline): which 0 = cpu_op_map.json, 1 = cpu_op_map_trace1.json,
 * 2 = cpu_op_map_trace2.json. NULL when there is nothing to report. The
 * reference's file set (A9) is then: merged_tree_output.txt always;
 * diff_stats.csv, diff_stats_unique_args_summary.csv and the three maps
 * unless tl_diff_empty. */
const char *tl_diff_map_json(const tl_diff *d, int which);

/* ---- inline comparison in the PyTorch report (A10) ---------------------
 * For `--comparison_json_path`: the report's trace is trace1, the
 * comparison trace trace2 (same tree options). The report calls this once
 * its unified_perf_summary table is built:
 *   - *diff_stats_sheet receives the "diff_stats" sheet (A6 incl. `source`;
 *     caller frees; NULL when TraceDiff found no GPU events);
 *   - unified (may be NULL) is enriched in place when it has a
 *     `Kernel Time (µs)_sum` column: seven columns are inserted right after
 *     it (speedup, delta, lca_count_trace2, lca_id, lca_name and the two
 *     LCA totals).
 * uid_row[k] = (gpu_uids[k] -> summary row): every GPU-event UID listed in
 * the pre-summary unified table's kernel_details, paired with the index of
 * the unified_perf_summary row its event was grouped into; n pairs. */
int tl_diff_comparison_sheets(const tl_trace *t1, const tl_trace *t2, const tl_diff_opts *o,
                              tl_table *unified, const int64_t *gpu_uids,
                              const size_t *uid_row, size_t n, tl_table **diff_stats_sheet,
                              tl_err *err);
/* Same, on an already computed diff. */
int tl_diff_enrich_unified(const tl_diff *d, tl_table *unified, const int64_t *gpu_uids,
                           const size_t *uid_row, size_t n, tl_err *err);
/* A copy of diff_stats with `source` (the A10 sheet). Caller frees. */
tl_table *tl_diff_stats_sheet(const tl_diff *d);

/* ---- name rules, exposed for tests ------------------------------------ */
/* norm(name, strip) of A2 into out (NUL-terminated). */
void tl_diff_norm_name(const char *name, int strip, tl_buf *out);


/* ---- side-by-side comparison of two or more performance reports
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
