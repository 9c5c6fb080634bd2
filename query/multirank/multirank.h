/* multirank.h — the multi-rank family: collective analysis across the ranks
 * of one job and the per-configuration corpus workbook. */
#ifndef TL_MULTIRANK_MULTIRANK_H
#define TL_MULTIRANK_MULTIRANK_H

#include <stddef.h>
#include <stdint.h>

#include "store/store.h"
#include "query/core/table.h"

/* ---- multi-rank collective (NCCL/RCCL) analysis over stored
 * traces, one per rank: the reference tool's
 * TraceLens_generate_multi_rank_collective_report_pytorch (spec formats.md
 * §3, the contract) plus a per-rank imbalance view of our own.
 *
 * Collectives are matched across ranks by process group and per-group
 * index (collective_id); per collective we derive latency, start/end skew,
 * implicit-sync wait per rank, algorithm and bus bandwidth, and for
 * all_to_allv the data volume, throughput and size imbalance. Inputs are
 * stored traces (ids in rank order): the report reads only the columns it
 * needs plus the args of the collective kernels, rank by rank on worker
 * threads, so a corpus of many large traces is never in memory at once.
 *
 * The §3 formulas are exposed as small pure functions so that the unit
 * tests check them without a store. */

/* ---- §3 formulas ------------------------------------------------------- */

/* Collective types of §3.5 (name -> type). */
typedef enum tl_coll_type {
    TL_COLL_UNKNOWN = 0,     /* broadcast, unnamed, anything else */
    TL_COLL_ALLREDUCE,
    TL_COLL_REDUCESCATTER,
    TL_COLL_ALLGATHER,
    TL_COLL_ALLTOALL,
    TL_COLL_ALLTOALLV,
} tl_coll_type;

tl_coll_type tl_coll_type_of(const char *collective_name); /* NULL -> UNKNOWN */
const char *tl_coll_type_name(tl_coll_type t);             /* "allreduce", ... "" */
/* allreduce, reducescatter, allgather, alltoall take part in implicit sync. */
int tl_coll_type_is_implicit_sync(tl_coll_type t);
/* Bytes per element by PyTorch dtype name (Float 4, BFloat16 2, ...); 0 if unknown. */
int tl_coll_dtype_bytes(const char *dtype);
/* Kernel name is a communication kernel: nccl / rccl / cross_device_reduce
 * anywhere, case-insensitive (a regex search of literals in the reference). */
int tl_coll_is_comm_kernel(const char *name);
/* Bus-bandwidth factor for group size n: allreduce 2(n-1)/n; reducescatter,
 * allgather, alltoall (n-1)/n; NaN for other types or n < 1. */
double tl_coll_busbw_factor(tl_coll_type t, int64_t n);
/* (msg_mb / 1024) / (latency_us / 1e6) GB/s; NaN when latency is 0 or
 * either input is NaN. */
double tl_coll_algo_bw(double msg_mb, double latency_us);
/* nelems * bytes / 1024^2 (NaN when bytes_per_elem is 0). */
double tl_coll_msg_mb(int64_t nelems, int bytes_per_elem);

/* Implicit-sync metrics of one collective seen on n ranks (§3.5): ts/dur in
 * µs per participating rank, ranks[] their rank numbers (ascending). */
typedef struct tl_coll_sync {
    double comm_latency;   /* min dur */
    double skew_start;     /* max wait = latest start - earliest start */
    double skew_end;       /* latest end - earliest end */
    double avg_wait;       /* mean wait (numpy's summation order) */
    int earliest_rank;     /* rank with the largest wait; ties -> higher rank */
    int last_rank;         /* rank with the smallest wait; ties -> lower rank */
} tl_coll_sync;
/* wait_out (may be NULL) receives each rank's wait = latest start - ts. */
void tl_coll_sync_metrics(const double *ts, const double *dur, const int *ranks, size_t n,
                          double *wait_out, tl_coll_sync *m);
/* Rounds like pandas' Series.round(d): rint(x * 10^d) / 10^d. */
double tl_coll_round(double x, int digits);

/* ---- the report -------------------------------------------------------- */

typedef struct tl_coll_opts {
    const char *const *agg;  /* --agg_metrics: mean median min max std sum count first last */
    size_t nagg;             /* 0: mean median min max */
    int gpus_per_node;       /* 0: length of rank 0's deviceProperties */
    int all2allv_heatmap;    /* nccl_all2allv_heatmap sheet */
    int strict_metadata;     /* 1: ranks disagreeing on a collective's metadata
                                abort with the reference's ValueError text;
                                0: first rank's values win (the multi-config
                                generator's non-strict mode) */
    int imbalance;           /* add imbalance_ranks / imbalance_collectives */
    int max_workers;         /* threads reading ranks; <= 0: min(ranks, cpus, 8) */
    int quiet;               /* no notes on stderr */
    int timing;              /* stage times on stderr (TRACELENS_TIMING) */
} tl_coll_opts;

void tl_coll_opts_default(tl_coll_opts *o);

/* Output sheets in the reference's order (§3.8), then ours. */
typedef struct tl_coll_sheets {
    tl_table **v;
    size_t n, cap;
} tl_coll_sheets;
void tl_coll_sheets_free(tl_coll_sheets *s);
tl_table *tl_coll_sheet(const tl_coll_sheets *s, const char *name);

/* Per-rank figures measured while reading (also the imbalance sheet). */
typedef struct tl_coll_rankinfo {
    int rank;
    uint64_t id;
    size_t n_collectives;        /* collective kernel events kept (§3.3) */
    int64_t gpu_events;          /* linked GPU events in the timeline */
    /* §5.3 metrics over the rank's linked GPU events, ns (0 when none) */
    int64_t total_ns, comp_ns, comm_ns, exposed_comm_ns, memcpy_ns, exposed_memcpy_ns,
        busy_ns, idle_ns;
} tl_coll_rankinfo;

typedef struct tl_coll_summary {
    size_t world;
    int simplified;              /* §3.4 simplified matching mode was used */
    int gpus_per_node;           /* 0: unknown, no node labels */
    size_t n_long, n_sync, n_a2av;
    tl_coll_rankinfo *ranks;     /* world entries */
} tl_coll_summary;
void tl_coll_summary_free(tl_coll_summary *s);

/* Runs the analysis over ids[0..world) (ids[r] is rank r's trace; the same
 * id may appear twice). summary may be NULL. Returns 0, or a TL_E* code with
 * err set (a strict metadata mismatch is TL_EFORMAT with the reference's
 * message). */
int tl_coll_report(tl_store *s, const uint64_t *ids, size_t world, const tl_coll_opts *o,
                   tl_coll_sheets *out, tl_coll_summary *summary, tl_err *err);

/* Rank -> trace id of a stored configuration (catalog "config" field equal
 * to config; "rank" gives the position). *world = max rank + 1 unless
 * world_hint > 0. Several traces for one rank: the latest ingest wins (a
 * note on stderr unless quiet). Missing ranks are an error naming them.
 * *ids is malloc'd. dir_out (may be NULL) receives the common directory of
 * the stored source paths (malloc'd). */
int tl_coll_config_ids(tl_store *s, const char *config, size_t world_hint, int quiet,
                       uint64_t **ids, size_t *world, char **dir_out, tl_err *err);


/* ---- one workbook for one configuration of a multi-rank
 * corpus: the reference's multi-configuration generator
 * (`TraceLens_generate_multi_config_perf_report`, branch
 * feat/gen_report_node_replay_bench; spec formats.md §4.4, the contract).
 *
 * Every rank's stored trace is loaded once (the columns the workbook reads)
 * and goes through the sheets of the single-trace PyTorch report it pools
 * (gpu_timeline, ops_summary; query/pytorch/pytorch.h), the rows of the
 * op groups' events, a scan of its columns and, when there is more than one
 * rank, the reading of its collective events; the per-rank results are then
 * pooled: op-group perf sheets over the rows of all ranks, kernel launchers
 * with per-rank averages, gpu_timelines with one column pair per rank,
 * linked and short kernels per rank, the cuda runtime pivot, a grouped time
 * breakdown, and the collective analysis (query/multirank/multirank.h) with
 * the per-rank imbalance sheets. Ranks are processed on worker threads, one
 * trace per worker; only the per-rank results stay in memory. */

typedef struct tl_corpus_opts {
    int max_workers;   /* threads over ranks; <= 0: min(ranks, CPUs, 4) */
    int quiet;         /* no diagnostics on stderr */
    int imbalance;     /* imbalance_ranks / imbalance_collectives (world > 1) */
    double short_us;   /* "short" kernel threshold, µs (default 10) */
    const char *datadir; /* folder of op_categories.tsv ($TRACELENS_DATADIR, else the
                            CLI's TL_DATADIR); NULL: perf-model categories only */
    int timing;        /* stage times on stderr (TRACELENS_TIMING) */
    int keep_heap;     /* no heap trim after the ranks: the process has one malloc
                          arena per worker, whose freed memory the sheets reuse,
                          and trimming them all would be serial work */
} tl_corpus_opts;
void tl_corpus_opts_default(tl_corpus_opts *o);
/* The threads over ranks for max_workers (<= 0: min(CPUs, 4)), before the
 * ranks' count bounds them. */
int tl_corpus_workers(int max_workers);

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

/* The first grouped_breakdown group whose launcher list (the reference's
 * perf_report_configs.py) holds name, or NULL (Other). Exposed for the
 * unit tests. */
const char *tl_corpus_group_of(const char *name);

/* ---- across processes (MPI) -------------------------------------------
 * Both reports split over processes that each hold some ranks' traces
 * (positions lo..hi-1 of the configuration, ids[lo..hi) in s): a process
 * packs its ranks' partial results into out (compact: per-rank sheets,
 * groups and collective records, never events); one process takes every
 * process's bytes, concatenated in any order, and builds the sheets the
 * one-process call builds from all n ranks, byte for byte. The bytes are
 * for processes of one build (host byte order, not a file format). */
int tl_coll_partials(tl_store *s, const uint64_t *ids, size_t lo, size_t hi, int max_workers, tl_buf *out,
                     tl_err *err);
int tl_coll_report_partials(const void *parts, size_t len, size_t world, const tl_coll_opts *o,
                            tl_coll_sheets *out, tl_coll_summary *summary, tl_err *err);
int tl_corpus_partials(tl_store *s, const uint64_t *ids, const int *ranks, size_t n, size_t lo, size_t hi,
                       const tl_corpus_opts *o, tl_buf *out, tl_err *err);
int tl_corpus_report_partials(const void *parts, size_t len, size_t n, const tl_corpus_opts *o,
                              tl_corpus_sheets *out, tl_corpus_stats *stats, tl_err *err);

#endif
