/* pytorch.h — the PyTorch performance report computed from a stored
 * Kineto trace: gpu_timeline, ops_summary_by_category, ops_summary,
 * ops_unique_args, unified_perf_summary, the perf-model sheet families,
 * kernel_summary, the short-kernel study, coll_analysis and the optional
 * sheets (spec/pytorch-report.md, the contract; docs/CONFORMANCE.md lists
 * where we knowingly reproduce the reference's quirks).
 *
 * Everything is computed over the trace's stored columns (query/core/trace.h):
 * the host tree, the runtime -> GPU links and the launcher edges were built
 * at ingest, so a report is one pass of grouping and interval arithmetic.
 * The result is a list of tl_tables in the reference's sheet order; report/
 * renders them. Also here: the op categorisation of §6 as data (a registry
 * loaded from data/op_categories.tsv, extendable by files and plugins). */
#ifndef TL_PYTORCH_REPORT_H
#define TL_PYTORCH_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include "query/core/trace.h"
#include "query/core/table.h"

struct tl_pm_arch;
struct tl_plugin_set;

/* ---- op categorisation (§6) --------------------------------------------- */

/* op name -> category registry. Built from the perf-model table's categories
 * (query/perfmodel/perfmodel.h), then the category data file, then extension files and
 * plugins, later entries overriding earlier ones (§6.1). */
typedef struct tl_catreg tl_catreg;

tl_catreg *tl_catreg_new(void);
void tl_catreg_free(tl_catreg *r);
/* A copy (the copy is then changed independently). */
tl_catreg *tl_catreg_copy(const tl_catreg *r);
/* Adds/overrides one entry (both strings copied). */
void tl_catreg_set(tl_catreg *r, const char *op, const char *category);
/* Loads "op<TAB>category" lines ('#' comments and blank lines skipped).
 * Returns 0, TL_EIO when the file cannot be read, TL_EFORMAT on a bad line. */
int tl_catreg_load_tsv(tl_catreg *r, const char *path, tl_err *err);
/* The built-in registry: perf-model categories + <datadir>/op_categories.tsv
 * (the CLI passes $TRACELENS_DATADIR, else its compiled-in default), else
 * the data folder beside the executable. A missing data file is not fatal
 * (*warn gets a message). */
tl_catreg *tl_catreg_builtin(const char *datadir, char *warn, size_t warnsz);
/* Exact-name lookup, or NULL. */
const char *tl_catreg_get(const tl_catreg *r, const char *op);
/* The full rule chain of §6: registry, ^triton / ^record_param_comms, the
 * first-kernel-name fallback (first_kernel may be NULL), else "other". */
const char *tl_op_category(const tl_catreg *r, const char *op, const char *first_kernel);

/* ---- report ------------------------------------------------------------- */

typedef struct tl_pyt_opts {
    int include_unlinked_kernels;     /* --include_unlinked_kernels */
    int has_micro_idle;               /* --micro_idle_thresh_us given */
    double micro_idle_thresh_us;
    int disable_coll_analysis;        /* --disable_coll_analysis */
    int kernel_summary;               /* --enable_kernel_summary */
    int short_kernel_study;           /* --short_kernel_study */
    double short_kernel_threshold_us; /* default 10 */
    int short_kernel_bins;            /* default 100 */
    long topk_short_kernels;          /* <0: all */
    int group_by_num_kernels;
    int include_overlap_info;
    int detect_recompute;
    int include_first_occurrence_time;
    int include_call_stack;
    const struct tl_pm_arch *arch;    /* roofline columns when not NULL */
    const tl_catreg *categories;      /* NULL: built-in registry */
    const struct tl_plugin_set *plugins; /* extra categories/tables; may be NULL */
    int quiet;                        /* no warnings on stderr */
    int timing;                       /* stage times on stderr (TRACELENS_TIMING) */
    int serial;                       /* no worker threads (TRACELENS_REPORT_THREADS=0) */
    int fix_quirks;                   /* correct the reference's QUIRK items instead of
                                         reproducing them (docs/CONFORMANCE.md) */
    int unified_uid_pairs;            /* fill tl_pyt_sheets.uid_pairs (--comparison_json_path);
                                         off by default so the normal report skips the work */
    /* the inference report's launcher sheets (TraceLens_generate_perf_report_pytorch_inference,
     * spec: the reference's get_df_kernel_launchers_summary*_module): ops_summary with
     * total_subtree_kernel_time_count, and with group_by_parent_module the nn.Module call
     * stack of each launcher (call_stack, parent_module columns, parent_module a grouping
     * key of ops_summary, ops_summary_by_category and ops_unique_args) */
    int module_summaries;
    int group_by_parent_module;
    /* unified_perf_summary's call_stack_full from each kernel's own stack (the
     * inference report: common prefix, then the distinct tails) */
    int per_kernel_call_stack;
    /* ops given the step annotation around them (the InferenceAttention
     * models read sq/sk from it): NULL-terminated name prefixes; NULL: the
     * default report's, vllm::unified_attention_with_output only */
    const char *const *annotated_ops;
    const char *const *perf_families; /* NULL: every perf-model family; else the NULL-terminated
                                         families whose sheets are built (events of the others
                                         get no instance: corpus-report pools a few families) */
} tl_pyt_opts;

/* Defaults of the reference CLI (spec §12). */
void tl_pyt_opts_default(tl_pyt_opts *o);

/* Produced sheets, in production order (§9). */
typedef struct tl_pyt_sheets {
    tl_table **v;
    size_t n, cap;
    /* Sheets this build cannot produce yet (e.g. perf-model sheets when the
     * perf-model module is missing), by name; informational. */
    const char **pending;
    size_t npending;
    double total_time_ms;             /* gpu_timeline total_time, ms (NaN if none) */
    /* With opts.unified_uid_pairs: for every pre-summary unified row and
     * every GPU event in its kernel list, the event's UID and the index of
     * the unified_perf_summary row the row was grouped into (the pairs
     * tl_diff_comparison_sheets() takes, spec diff-compare-phases.md A10). */
    int64_t *uid_pair_uid;
    size_t *uid_pair_row;
    size_t npairs;
} tl_pyt_sheets;

/* Computes the report. On failure (e.g. no GPU events: the reference aborts
 * with "No GPU events found in the trace") returns a TL_E* code with err set
 * and leaves out empty. */
int tl_pytorch_report(const tl_trace *t, const tl_pyt_opts *o, tl_pyt_sheets *out, tl_err *err);
void tl_pyt_sheets_free(tl_pyt_sheets *s);
/* Sheet by name, or NULL. */
tl_table *tl_pyt_sheet(const tl_pyt_sheets *s, const char *name);

/* ---- report composition (compose.c) --------------------------------------- */

/* The shipped roofline platform for the GPU named in the trace's
 * deviceProperties (gpu gets that name), or NULL. */
const char *tl_pyt_auto_platform(const tl_trace *t, char *gpu, size_t n);
/* Appends ops_without_perf_model: unified_perf_summary rows without a perf
 * model, by name, with count and kernel time, largest time first (nothing
 * when there are none). */
void tl_pyt_add_ops_without_perf_model(tl_pyt_sheets *s);
/* Moves the inference phase sheets ph into s in the reference's order (C6):
 * prefill/decode op summaries after unified_perf_summary, kernel summaries
 * after kernel_summary, the rest at the end. ph is left empty. */
void tl_pyt_insert_phase_sheets(tl_pyt_sheets *s, tl_pyt_sheets *ph);

/* A perf sheet's log-log roofline: FLOPS/Byte against achieved TFLOPS/s
 * (columns x_col, y_col; the sheet is sorted by kernel time, so the first
 * rows are the top ops), the memory roof (bandwidth x intensity) up to the
 * ridge and the compute roof of the sheet's dominant Compute Spec after it. */
typedef struct tl_pyt_roofline {
    size_t x_col, y_col;
    const char *spec; /* the Compute Spec (points into the sheet) */
    double mem_x[2], mem_y[2], compute_x[2], compute_y[2];
} tl_pyt_roofline;
/* 0 and r filled, or -1 when the sheet or arch has no roofline. */
int tl_pyt_roofline_of(const tl_table *t, const struct tl_pm_arch *arch, tl_pyt_roofline *r);
/* Whether a sheet of this name gets a roofline chart (GEMM, SDPA_*, CONV_*). */
int tl_pyt_has_roofline(const char *sheet);

#endif
