/* pftrace.h — the reports of rocprofv3's Perfetto output (TraceLens'
 * generate_perf_report_pftrace_hip_api, _pftrace_hip_activity and
 * _pftrace_memory_copy), computed from a stored trace read natively from
 * a .pftrace (ingest/pftrace.h) or from its traceEvents JSON form (Kineto
 * reader). Each report works on the stored complete events as the
 * reference works on the JSON's event dicts: name, cat, pid, tid, ts/dur
 * (the reference's µs, truncated as Python's int() does) and the args
 * object, read with Python's semantics (int() of numbers and numeric
 * strings, truthiness, first-seen order). Metadata events (ph M) and
 * instants are not stored as events and take no part. */
#ifndef TL_PFTRACE_REPORT_H
#define TL_PFTRACE_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include "query/core/table.h"
#include "query/core/trace.h"

/* ---- api_kernel_summary (HIP API <-> kernel by correlation id) */
typedef struct tl_pf_hip_api_opts {
    const char *exclude_kernel_regex; /* Python syntax; NULL or "": none */
    int allow_multi_kernel_per_api;
    int include_nonlaunch_apis;
} tl_pf_hip_api_opts;
/* The default exclusion of the reference (redzone checker kernels). */
#define TL_PF_DEFAULT_EXCLUDE "(?:^|\\W)redzone_checker_kernel(?:\\W|$)"
int tl_pf_hip_api_report(const tl_trace *t, const tl_pf_hip_api_opts *o, tl_table **out, tl_err *err);

/* ---- memory_copy_by_copy_bytes */
int tl_pf_memory_copy_report(const tl_trace *t, tl_table **out, tl_err *err);

/* ---- category_summary, xla_top, kernel_summary, hip_summary */
typedef struct tl_pf_activity_opts {
    int merge_kernels;            /* strip digits from kernel names */
    int64_t min_tid, max_tid;     /* default -10^9 .. 10^9 */
    int64_t min_event_ns;         /* default 5000 */
    int kernel_summary;           /* default on */
    int kernel_summary_include_rccl;
    int baseline_compute;         /* --kernel_summary_baseline compute (default total) */
    int group_by_name;            /* --kernel_summary_group name (default config) */
    int hip_summary;              /* default on */
    const char *hip_summary_group; /* name, name+stream, name+op, name+stream+op */
    long long top_xla;            /* default 30 */
    long long kernel_summary_top, hip_summary_top; /* Markdown only; default 200 */
} tl_pf_activity_opts;
void tl_pf_activity_opts_default(tl_pf_activity_opts *o);

#define TL_PF_ACTIVITY_MAX_SHEETS 4
typedef struct tl_pf_activity_result {
    tl_table *sheets[TL_PF_ACTIVITY_MAX_SHEETS]; /* in the reference's order */
    size_t nsheets;
    char *agents;     /* agent names, ", "-joined (malloc'ed) */
} tl_pf_activity_result;
int tl_pf_activity_report(const tl_trace *t, const tl_pf_activity_opts *o, tl_pf_activity_result *res,
                          tl_err *err);
void tl_pf_activity_result_free(tl_pf_activity_result *res);

/* ---- the Genesis report's supplements (generate_perf_report_genesis) */
/* Physics kernel category of a kernel name ("Rigid Body Solver", ...,
 * "Other"): the first category one of whose patterns the name holds. */
const char *tl_pf_genesis_category(const char *name);
/* The rocprof report's kernel_summary (reference units) as the Genesis
 * report shows it: "Total Kernel Time (ms)" and "Mean Kernel Time (µs)"
 * divided by 1000, "Category" the physics category. Returns the matching
 * kernel_summary_by_category (columns only when ks is empty). */
tl_table *tl_pf_genesis_recategorize(tl_table *ks);
/* The steady-state window of dispatches [starts[i], ends[i]) ns: the
 * dispatches after the largest gap (when at least gap_ns) or those of the
 * last fallback_ns, whichever keeps the GPU busier, as the gpu_timeline
 * sheet (type, time ms, percent) and what the summary prints. */
typedef struct tl_pf_steady {
    char method[64];
    int64_t cutoff_ns, dispatches;
    double window_ms, gpu_util_pct;
} tl_pf_steady;
int tl_pf_genesis_steady_state(const int64_t *starts, const int64_t *ends, size_t n, int64_t gap_ns,
                               int64_t fallback_ns, tl_table **timeline, tl_pf_steady *meta, tl_err *err);

#endif
