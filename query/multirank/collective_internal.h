/* collective_internal.h — what query/multirank/collective*.c share: the collective
 * events read from each rank (collective_read.c) and the sheet builders
 * (collective_sheets.c, collective_a2a.c). Not a public API. */
#ifndef TL_COLLECTIVE_INTERNAL_H
#define TL_COLLECTIVE_INTERNAL_H

#include <math.h>
#include <pthread.h>
#include "query/multirank/multirank.h"
#include "query/core/stats.h"
#include "base/base.h"

#define COLL_NONE INT64_MIN

/* One collective kernel event of one rank (a row of nccl_long). Text cells
 * are Python str() texts (strings verbatim, JSON lists as tuples) in the
 * run's arena; NULL = missing. */
typedef struct coll_ev {
    int rank;
    uint32_t row;               /* event row in its trace (trace order) */
    double ts, dur;             /* µs, the reference's doubles (tl_trace_ts_us) */
    const char *pg_name, *pg_ranks, *coll_name, *dtype, *in_split, *out_split;
    int64_t group_size, in_nelems, out_nelems, stream; /* COLL_NONE = missing */
    /* derived */
    double in_mb, out_mb;       /* NaN when unknown */
    tl_coll_type type;
    const char *cid;            /* collective_id */
    int64_t index_in_group;
    long cid_no;                /* dense collective number, first-appearance order */
} coll_ev;

typedef struct coll_rank {
    coll_ev *ev;                /* trace order */
    size_t n, cap;
    int ts_int, dur_int;        /* the trace writes JSON-integer ts / dur (tl_catalog_time_text) */
    tl_coll_rankinfo info;
    int ndevices;               /* length of deviceProperties (-1: absent) */
    tl_arena arena;             /* strings of this rank's events */
    /* coll_rank_prepare's per-rank part of the matching */
    int prepared;
    int simple;                 /* no PG name but Unknown_Group, at most one stream */
    int miss_gs, miss_in, miss_on, miss_st; /* some event lacks that field */
} coll_rank;

/* The matching's per-rank part, on the thread that read the rank: each
 * event's type, message sizes and index_in_group (position by (ts, trace
 * order) among the rank's events of its PG, by PG text, a missing name
 * being Unknown_Group), and the rank's flags above. coll_match does it, on
 * threads, for ranks not yet prepared (those unpacked from partials). */
void coll_rank_prepare(coll_rank *cr);

/* Reads rank `rank` (trace id) from the store: collective events and the
 * GPU timeline figures. Thread-safe (own reader). */
int coll_read_rank(tl_store *s, uint64_t id, int rank, coll_rank *out, tl_err *err);
void coll_rank_free(coll_rank *cr);

/* One matched collective (a row of nccl_implicit_sync / nccl_all2allv):
 * events by rank. */
typedef struct coll_group {
    const char *cid;
    coll_ev **ev;               /* participating events, ascending rank */
    size_t n;
} coll_group;

typedef struct coll_run {
    const tl_coll_opts *o;
    size_t world;
    coll_rank *ranks;
    coll_ev **all;              /* nccl_long order: rank by rank, trace order */
    size_t nall;
    int simplified;
    int gpn;                    /* gpus per node, 0 = no node labels */
    coll_group *groups;         /* every collective_id, first-appearance order */
    size_t ngroups;
    const char *const *agg;
    size_t nagg;
    /* implicit-sync rows (filled by coll_sheet_implicit): group index,
     * metrics, and waits (nsync x world, NaN where a rank is absent) */
    size_t nsync;
    size_t *sync_g;
    tl_coll_sync *sync_m;
    double *sync_wait;
    /* pandas: an int column of the long table with a missing cell is float,
     * and every sheet derived from it prints 8.0 instead of 8 */
    int miss_gs, miss_in, miss_on, miss_st;
    /* every rank with collectives writes JSON-integer ts / dur (see
     * collective_ints.c) */
    int ts_int, dur_int;
    tl_arena arena;
} coll_run;

/* ---- collective_sheets.c ---- */
/* Work run beside the calling thread: fn(arg) on a thread of its own when
 * `allow` and one starts, else at once on the caller's. */
typedef struct coll_job {
    tl_thread *th; /* NULL: ran on the caller's thread */
} coll_job;
void coll_job_start(coll_job *j, int allow, void *(*fn)(void *), void *arg);
/* Waits for the job (returns at once when it ran on the caller's thread). */
void coll_job_join(coll_job *j);

int coll_match(coll_run *run, tl_err *err);
/* Strict mode (and not simplified): the reference's "Metadata mismatch"
 * error when a collective's ranks disagree; with_stream: the all_to_allv
 * field set (stream instead of message sizes). */
int coll_check_meta(const coll_run *run, const coll_group *g, int with_stream, tl_err *err);
tl_table *coll_sheet_long(coll_run *run);
/* Implicit-sync rows; also fills the per-row sync metrics used by later sheets. */
int coll_sheet_implicit(coll_run *run, tl_table **out, tl_err *err);
tl_table *coll_sheet_summary_implicit(coll_run *run, const tl_table *sync);
tl_table *coll_sheet_summary_long(coll_run *run);
tl_table *coll_sheet_straggler(coll_run *run);
void coll_add_node_labels(coll_run *run, tl_table *t);
/* ---- collective_a2a.c ---- */
int coll_sheet_a2av(coll_run *run, tl_table **out, tl_err *err);
tl_table *coll_sheet_summary_a2av(coll_run *run, const tl_table *a2a);
tl_table *coll_sheet_heatmap(coll_run *run);
/* ---- collective_ints.c ---- */
/* Turns t's time columns that the reference holds as int64 (given
 * run->ts_int / dur_int) into integer columns; call once t is complete. */
void coll_int_time_columns(const coll_run *run, tl_table *t);
/* ---- collective_imbalance.c ---- */
tl_table *coll_sheet_imb_ranks(coll_run *run);
tl_table *coll_sheet_imb_colls(coll_run *run);

/* ---- shared helpers (collective_sheets.c) ---- */
/* pandas-style aggregations over the non-NaN values of v (v is scratch:
 * reordered for the median). Unknown names return NaN. */
double coll_agg(const char *agg, double *v, size_t n, size_t nrows);
int coll_agg_known(const char *agg);
/* idx[0..n) by key descending, NaN last: as the reference's
 * sort_values(ascending=False) orders rows (ties as NumPy's quicksort
 * leaves them), and a stable sort for our own sheets. */
void coll_sort_desc(size_t *idx, size_t n, const double *key);
void coll_sort_desc_stable(size_t *idx, size_t n, const double *key);
/* Adds a column holding v (NaN = missing). */
size_t coll_col_f64(tl_table *t, const char *name);
size_t coll_col_i64(tl_table *t, const char *name);
size_t coll_col_str(tl_table *t, const char *name);
static inline void coll_set_i64(tl_table *t, size_t c, size_t r, int64_t v)
{
    if (v != COLL_NONE) tl_table_set_i64(t, c, r, v);
}
static inline void coll_set_f64(tl_table *t, size_t c, size_t r, double v)
{
    if (!isnan(v)) tl_table_set_f64(t, c, r, v);
}
static inline void coll_set_str(tl_table *t, size_t c, size_t r, const char *s)
{
    if (s) tl_table_set_str(t, c, r, s);
}

#endif
