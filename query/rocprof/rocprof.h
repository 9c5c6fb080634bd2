/* rocprof.h — the rocprofv3 performance report (spec/formats.md §1):
 * gpu_timeline, kernel_summary, kernel_summary_by_category, kernel_details,
 * short_kernels_summary and short_kernel_histogram, computed from a stored
 * rocprof trace (ingest/rocprof.h says what the reader stores).
 *
 * Two modes. By default every column holds what its label says: "(µs)"
 * columns are microseconds, "(ms)" milliseconds, the short-kernel threshold
 * is in µs, and "Cumulative Percentage (%)" runs down the rows as printed.
 * With reference_units the numbers are the reference tool's exactly: it
 * leaves nanoseconds in the µs columns (and µs in the ms ones), compares the
 * threshold with nanoseconds, and accumulates percentages in name / category
 * order before sorting (§1.4, §1.7). docs/CONFORMANCE.md lists both. */
#ifndef TL_ROCPROF_REPORT_H
#define TL_ROCPROF_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include "query/core/trace.h"
#include "query/core/table.h"

typedef struct tl_rocprof_opts {
    int reference_units;     /* reproduce the reference's unit and ordering quirks */
    int kernel_summary;      /* kernel_summary + kernel_summary_by_category (default on) */
    int kernel_details;      /* kernel_details (default off) */
    int short_kernel_study;  /* short_kernels_summary + short_kernel_histogram */
    double short_threshold;  /* µs (default mode) / ns (reference_units); default 10 */
    long hist_bins;          /* default 100; must be >= 1 */
    int has_topk;            /* keep the first topk rows of kernel_details */
    long long topk;          /* pandas head(): negative drops the last -topk rows */
} tl_rocprof_opts;

void tl_rocprof_opts_default(tl_rocprof_opts *o);

#define TL_ROCPROF_MAX_SHEETS 6

typedef struct tl_rocprof_result {
    tl_table *sheets[TL_ROCPROF_MAX_SHEETS]; /* in the reference's order */
    size_t nsheets;
    uint64_t n_kernels, n_memcpy, n_api;   /* what the trace holds */
    uint64_t n_short;                      /* kernels under the threshold */
    int64_t pid;                           /* metadata.pid (0 if absent) */
    char hostname[256];                    /* metadata.node.hostname or "unknown" */
    char *warnings;                        /* reader warnings (malloc'ed) or NULL */
} tl_rocprof_result;

/* Computes the enabled sheets. Fails (TL_EUSAGE / TL_EFORMAT) on bad options
 * or a trace that is not a rocprof trace. */
int tl_rocprof_report(const tl_trace *t, const tl_rocprof_opts *o, tl_rocprof_result *res, tl_err *err);
void tl_rocprof_result_free(tl_rocprof_result *res);

/* Kernel category of §1.5 ("GEMM", "Elementwise", ..., "COMM", "Other"). */
const char *tl_rocprof_category(const char *name, size_t n);

#endif
