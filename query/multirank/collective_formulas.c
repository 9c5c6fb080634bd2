/* collective_formulas.c — the collective report's §3 formulas (spec
 * formats.md): collective types, message sizes, bus bandwidth, pandas'
 * rounding, and the synchronisation metrics. Every sheet uses them, so
 * they sit below the sheets and the entry points. */
#include "query/multirank/collective_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

tl_coll_type tl_coll_type_of(const char *n)
{
    if (!n) return TL_COLL_UNKNOWN;
    static const struct {
        const char *name;
        tl_coll_type t;
    } MAP[] = {
        {"allreduce", TL_COLL_ALLREDUCE},
        {"allreduce_coalesced", TL_COLL_ALLREDUCE},
        {"reducescatter", TL_COLL_REDUCESCATTER},
        {"_reduce_scatter_base", TL_COLL_REDUCESCATTER},
        {"reduce_scatter_tensor_coalesced", TL_COLL_REDUCESCATTER},
        {"allgather", TL_COLL_ALLGATHER},
        {"all_gather", TL_COLL_ALLGATHER},
        {"_allgather_base", TL_COLL_ALLGATHER},
        {"all_gather_into_tensor_coalesced", TL_COLL_ALLGATHER},
        {"allgather_into_tensor_coalesced", TL_COLL_ALLGATHER},
        {"all_to_all", TL_COLL_ALLTOALL},
        {"all_to_allv", TL_COLL_ALLTOALLV},
    };
    for (size_t i = 0; i < sizeof MAP / sizeof *MAP; i++)
        if (!strcmp(n, MAP[i].name)) return MAP[i].t;
    return TL_COLL_UNKNOWN;
}

const char *tl_coll_type_name(tl_coll_type t)
{
    switch (t) {
    case TL_COLL_ALLREDUCE: return "allreduce";
    case TL_COLL_REDUCESCATTER: return "reducescatter";
    case TL_COLL_ALLGATHER: return "allgather";
    case TL_COLL_ALLTOALL: return "alltoall";
    case TL_COLL_ALLTOALLV: return "alltoallv";
    default: return "";
    }
}

int tl_coll_type_is_implicit_sync(tl_coll_type t)
{
    return t == TL_COLL_ALLREDUCE || t == TL_COLL_REDUCESCATTER || t == TL_COLL_ALLGATHER ||
           t == TL_COLL_ALLTOALL;
}

int tl_coll_dtype_bytes(const char *d)
{
    if (!d) return 0;
    static const struct {
        const char *name;
        int bytes;
    } MAP[] = {
        {"Float", 4}, {"Int", 4}, {"Long", 8}, {"BFloat16", 2}, {"Bool", 1},
        {"Byte", 1},  {"Double", 8}, {"Half", 2}, {"Short", 2},
    };
    for (size_t i = 0; i < sizeof MAP / sizeof *MAP; i++)
        if (!strcmp(d, MAP[i].name)) return MAP[i].bytes;
    return 0;
}

double tl_coll_busbw_factor(tl_coll_type t, int64_t n)
{
    if (n < 1) return NAN;
    /* integer numerator, one correctly rounded division: what Python's
     * 2 * (n - 1) / n computes */
    switch (t) {
    case TL_COLL_ALLREDUCE: return (double)(2 * (n - 1)) / (double)n;
    case TL_COLL_REDUCESCATTER:
    case TL_COLL_ALLGATHER:
    case TL_COLL_ALLTOALL: return (double)(n - 1) / (double)n;
    default: return NAN;
    }
}

double tl_coll_algo_bw(double msg_mb, double latency_us)
{
    if (isnan(msg_mb) || isnan(latency_us) || latency_us == 0) return NAN;
    return (msg_mb / 1024) / (latency_us / 1e6);
}

double tl_coll_msg_mb(int64_t nelems, int bytes)
{
    if (!bytes || nelems == COLL_NONE) return NAN;
    return (double)nelems * (double)bytes / 1048576.0;
}

double tl_coll_round(double x, int digits)
{
    double p = 1;
    for (int i = 0; i < digits; i++) p *= 10;
    return rint(x * p) / p;
}

void tl_coll_sync_metrics(const double *ts, const double *dur, const int *ranks, size_t n,
                          double *wait_out, tl_coll_sync *m)
{
    m->comm_latency = m->skew_start = m->skew_end = m->avg_wait = NAN;
    m->earliest_rank = m->last_rank = -1;
    if (!n) return;
    double latest = ts[0], lat = dur[0], emin = ts[0] + dur[0], emax = emin;
    for (size_t i = 1; i < n; i++) {
        if (ts[i] > latest) latest = ts[i];
        if (dur[i] < lat) lat = dur[i];
        double e = ts[i] + dur[i];
        if (e < emin) emin = e;
        if (e > emax) emax = e;
    }
    double *w = wait_out ? wait_out : tl_xmalloc(n * sizeof *w);
    double wmax = -INFINITY, wmin = INFINITY;
    for (size_t i = 0; i < n; i++) {
        w[i] = latest - ts[i];
        /* ties: the earliest-arrival rank is the higher rank number, the
         * last arrival the lower (idxmax over ascending ranks, reversed) */
        if (w[i] >= wmax) wmax = w[i], m->earliest_rank = ranks[i];
        if (w[i] < wmin) wmin = w[i], m->last_rank = ranks[i];
    }
    m->comm_latency = lat;
    m->skew_start = wmax;
    m->skew_end = emax - emin;
    m->avg_wait = tl_sum_pairwise(w, n) / (double)n;
    if (!wait_out) free(w);
}
