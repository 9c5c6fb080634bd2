/* corpus_report.h — one workbook for one configuration of a multi-rank
 * corpus: the reference's multi-configuration generator
 * (`TraceLens_generate_multi_config_perf_report`, branch
 * feat/gen_report_node_replay_bench; spec formats.md §4.4, the contract).
 *
 * Every rank's stored trace is loaded once (the columns the workbook reads)
 * and goes through the sheets of the single-trace PyTorch report it pools
 * (gpu_timeline, ops_summary, the perf-model families; query/pytorch_report.h),
 * a scan of its columns and, when there is more than one rank, the reading
 * of its collective events; the per-rank results are then pooled: op-group
 * perf sheets across ranks, kernel launchers with per-rank averages,
 * gpu_timelines with one column pair per rank, linked and short kernels per
 * rank, the cuda runtime pivot, a grouped time breakdown, and the
 * collective analysis (query/collective.h) with the per-rank imbalance
 * sheets. Ranks are processed on worker threads, one trace per worker; only
 * the pooled results stay in memory, and one rank at a time goes through
 * the perf-model stage (a rank's memory peak). */
#ifndef TL_CORPUS_REPORT_H
#define TL_CORPUS_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include "../store/store.h"
#include "collective.h"
#include "table.h"

typedef struct tl_corpus_opts {
    int max_workers;   /* threads over ranks; <= 0: min(ranks, CPUs, 4) */
    int quiet;         /* no diagnostics on stderr */
    int imbalance;     /* imbalance_ranks / imbalance_collectives (world > 1) */
    double short_us;   /* "short" kernel threshold, µs (default 10) */
    const char *datadir; /* folder of op_categories.tsv (the CLI's TL_DATADIR);
                            NULL: $TRACELENS_DATADIR, else perf-model categories only */
} tl_corpus_opts;
void tl_corpus_opts_default(tl_corpus_opts *o);

typedef struct tl_corpus_sheets {
    tl_table **v;
    size_t n, cap;
} tl_corpus_sheets;
void tl_corpus_sheets_free(tl_corpus_sheets *s);
tl_table *tl_corpus_sheet(const tl_corpus_sheets *s, const char *name);

/* Figures of a run, for the CLI's summary. */
typedef struct tl_corpus_stats {
    double seconds_ranks;      /* per-rank reports (wall) */
    double seconds_collective; /* collective analysis (wall) */
    size_t failed_ranks;       /* ranks whose PyTorch report failed (no GPU events) */
    tl_coll_summary coll;      /* world > 1 */
    int have_coll;
} tl_corpus_stats;
void tl_corpus_stats_free(tl_corpus_stats *s);

/* ids[i] is the trace of the i-th file of the configuration (rank order),
 * ranks[i] its rank number as named in the file (may be NULL: 0..n-1).
 * The sheets come out in the order of §4.4. Returns 0 or a TL_E* code. */
int tl_corpus_report(tl_store *s, const uint64_t *ids, const int *ranks, size_t n,
                     const tl_corpus_opts *o, tl_corpus_sheets *out, tl_corpus_stats *stats,
                     tl_err *err);

/* The grouped_breakdown group of a kernel launcher (by name and the
 * Categories text of ops_summary, e.g. "['GEMM']"), or NULL (Other).
 * Exposed for the unit tests. */
const char *tl_corpus_group_of(const char *name, const char *categories);

#endif
