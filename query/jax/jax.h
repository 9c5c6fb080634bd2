/* jax.h — the JAX performance report (TraceLens'
 * TraceLens_generate_perf_report_jax; spec formats.md §2.6-§2.11) computed
 * from a stored XPlane trace: per-GPU timelines and their averages, the
 * kernel launchers with their summaries and unique-args table, the XLA
 * fusion sheets and one perf-model sheet per kernel category (conv, GEMM,
 * TE fused attention). HLO operand shapes come from the module records the
 * XPlane reader stored (ingest/xplane.h), so no external tool is involved.
 * Returns tables only; the CLI writes them. */
#ifndef TL_JAX_REPORT_H
#define TL_JAX_REPORT_H

#include <stddef.h>
#include "base/base.h"
#include "query/core/table.h"
#include "query/core/trace.h"

typedef struct tl_jax_opts {
    const char *const *metadata_keywords; /* --kernel_metadata_keyword_filters */
    size_t n_metadata_keywords;
    const char *source;                   /* trace path or id, for messages */
} tl_jax_opts;

/* Builds every sheet in the reference's order. *sheets is malloc'ed; free
 * with tl_jax_sheets_free. Non-fatal notes (missing HLO ops, skipped
 * categories) are appended to warn as lines when warn is not NULL. Fails
 * with a message naming the source when the trace has no GPU events. */
int tl_jax_report(const tl_trace *t, const tl_jax_opts *o, tl_table ***sheets, size_t *nsheets,
                  tl_buf *warn, tl_err *err);
void tl_jax_sheets_free(tl_table **sheets, size_t n);

/* ---- helpers shared with tests ------------------------------------------ */

/* GPU activity classes of the JAX timeline (§2.10). */
enum { TL_JAX_COMP = 0, TL_JAX_COMM = 1, TL_JAX_MEMCPY = 2 };
/* Class of a GPU event by its name: copy/memcpy/memset prefix → memcpy,
 * nccl/rccl/cross_device_reduce → communication, else computation. */
int tl_jax_event_class(const char *name);

/* The eight timeline metrics in µs, in sheet order: computation_time,
 * exposed_comm_time, exposed_memcpy_time, busy_time, idle_time, total_time,
 * total_comm_time, total_memcpy_time. start/end are double µs. Returns -1
 * when n == 0 (the reference's "No GPU events found"). */
int tl_jax_timeline(const double *start, const double *end, const unsigned char *cls, size_t n,
                    double out[8]);
extern const char *const tl_jax_timeline_rows[8];

/* Kernel op category (§2.9) from the kernel name and its hlo_op (may be NULL). */
const char *tl_jax_kernel_category(const char *name, const char *hlo_op);

#endif
