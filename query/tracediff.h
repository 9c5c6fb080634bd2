/* tracediff.h — TraceDiff: the morphology-aware diff of two PyTorch traces
 * (spec diff-compare-phases.md Part A, the contract).
 *
 * The two host call-stack trees (built at ingest, query/trace.h) are merged
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
#ifndef TL_TRACEDIFF_H
#define TL_TRACEDIFF_H

#include <stdint.h>
#include <stdio.h>
#include "table.h"
#include "trace.h"

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

#endif
