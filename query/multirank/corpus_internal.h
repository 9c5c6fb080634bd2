/* corpus_internal.h — what corpus_report.c shares with corpus_perf.c and
 * corpus_pool.c (the op-group perf sheets of the multi-configuration
 * workbook: the rows, and their pooling across ranks). Not a public API. */
#ifndef TL_CORPUS_INTERNAL_H
#define TL_CORPUS_INTERNAL_H

#include "query/pytorch/pytorch_internal.h"

/* One GPU activity of an op, as the reference's kernel_details entry. */
typedef struct cp_kernel {
    const char *name;
    double dur;          /* µs */
    int has_stream;
    int64_t stream;
} cp_kernel;

/* One "param: <key>" value: kind CP_NA (None, NaN), CP_BOOL, CP_INT,
 * CP_FLOAT or CP_OTHER; text is Python str() of the value (NULL for NA). */
enum { CP_NA, CP_BOOL, CP_INT, CP_FLOAT, CP_OTHER };
typedef struct cp_param {
    const char *key;     /* the model's static literal */
    int kind;
    const char *text;
} cp_param;

/* One op event's row of the reference's build_df_perf_metrics (forward
 * mode, non-data-movement columns, kernel details and args). */
typedef struct cp_row {
    const char *name;
    int64_t uid;
    cp_param *p;
    size_t np;
    double gflops, mb, fpb;        /* mb, fpb NaN when bytes are unknown */
    double kt, tflops, tbs;        /* Kernel Time (µs), TFLOPS/s, TB/s */
    double ndm_kt, ndm_tflops;     /* the same without data-movement kernels */
    cp_kernel *k;
    size_t nk;
    const char *dims, *types, *strides, *concrete; /* Python repr; NULL absent */
} cp_row;

typedef TL_VEC(cp_row) cp_rows;

/* The op groups in sheet order: gemm, conv, attn, un_elemwise, bin_elemwise. */
#define CP_NGROUPS 5
const char *cp_group_name(size_t g);

/* Appends every event of c's trace that has "Input Dims" and whose name is
 * in a group's op list to out[group], in trace order; texts are copied into
 * a (they outlive the trace). */
void cp_collect(pyt_ctx *c, tl_arena *a, cp_rows out[CP_NGROUPS]);

/* Group g's sheet over the ranks' rows (ranks[i][g], rank order), as the
 * reference's summarize_df_perf_metrics(agg_metrics=["mean", "std"]) of the
 * concatenated rows plus kernel_time_sum_cum_pct; NULL when no rank has a
 * row. Pooled on up to `threads` threads (corpus_pool.c). */
tl_table *cp_group_sheet(size_t g, cp_rows *const *ranks, size_t n, int threads);

#endif
