/* collective_imbalance.c — per-rank imbalance at a glance (ours, not in the
 * reference): imbalance_ranks puts each rank's GPU compute time next to the
 * mean of all ranks and next to what it waited in collectives;
 * imbalance_collectives names, per kind of collective, the rank that
 * arrives last (the one the others wait for) and how much waiting that
 * costs. Both come after the reference's sheets so its sheet order is kept. */
#include "query/multirank/collective_internal.h"

#include <stdlib.h>
#include <string.h>

tl_table *coll_sheet_imb_ranks(coll_run *run)
{
    size_t N = run->world, ns = run->nsync;
    tl_table *t = tl_table_new("imbalance_ranks");
    size_t c_rank = coll_col_i64(t, "rank"), c_comp = coll_col_f64(t, "compute_time_ms"),
           c_dev = coll_col_f64(t, "compute_vs_mean_pct"), c_slow = tl_table_add_col(t, "most_compute", TL_BOOL),
           c_busy = coll_col_f64(t, "busy_time_ms"), c_comm = coll_col_f64(t, "total_comm_time_ms"),
           c_xcomm = coll_col_f64(t, "exposed_comm_time_ms"), c_idle = coll_col_f64(t, "idle_time_ms"),
           c_tot = coll_col_f64(t, "total_time_ms"), c_ncoll = coll_col_i64(t, "collective_kernels"),
           c_wait = coll_col_f64(t, "collective_wait_us"), c_last = coll_col_i64(t, "times_arrived_last");
    double mean = 0, maxc = -1;
    for (size_t r = 0; r < N; r++) {
        double c = (double)run->ranks[r].info.comp_ns / 1e6;
        mean += c;
        if (c > maxc) maxc = c;
    }
    mean /= (double)N;
    tl_table_set_nrows(t, N);
    /* each rank's waits summed in collective order, one pass over the
     * collective-major matrix (a rank-major walk strides N doubles per
     * collective: 5 ms of 64 x 64 MB's serial collective analysis) */
    tl_kahan *wait = tl_xcalloc(N ? N : 1, sizeof *wait);
    size_t *m = tl_xcalloc(N ? N : 1, sizeof *m);
    int64_t *last = tl_xcalloc(N ? N : 1, sizeof *last);
    for (size_t i = 0; i < ns; i++) {
        const double *row = run->sync_wait + i * N;
        for (size_t r = 0; r < N; r++) {
            if (isnan(row[r])) continue;
            tl_kahan_add(&wait[r], row[r]);
            m[r]++;
        }
        int lr = run->sync_m[i].last_rank;
        if (lr >= 0 && (size_t)lr < N && !isnan(row[lr])) last[lr]++;
    }
    for (size_t r = 0; r < N; r++) {
        const tl_coll_rankinfo *ri = &run->ranks[r].info;
        double comp = (double)ri->comp_ns / 1e6;
        tl_table_set_i64(t, c_rank, r, (int64_t)r);
        tl_table_set_f64(t, c_comp, r, comp);
        coll_set_f64(t, c_dev, r, mean > 0 ? (comp - mean) / mean * 100 : NAN);
        tl_table_set_bool(t, c_slow, r, comp == maxc);
        tl_table_set_f64(t, c_busy, r, (double)ri->busy_ns / 1e6);
        tl_table_set_f64(t, c_comm, r, (double)ri->comm_ns / 1e6);
        tl_table_set_f64(t, c_xcomm, r, (double)ri->exposed_comm_ns / 1e6);
        tl_table_set_f64(t, c_idle, r, (double)ri->idle_ns / 1e6);
        tl_table_set_f64(t, c_tot, r, (double)ri->total_ns / 1e6);
        tl_table_set_i64(t, c_ncoll, r, (int64_t)ri->n_collectives);
        if (m[r]) {
            tl_table_set_f64(t, c_wait, r, wait[r].sum);
            tl_table_set_i64(t, c_last, r, last[r]);
        }
    }
    free(wait);
    free(m);
    free(last);
    return t;
}

typedef struct igrp {
    const coll_ev *e;          /* first event: the key fields */
    size_t n;                  /* collectives */
    double *late;              /* per rank: Σ (ts - earliest ts) */
    int64_t *seen, *last;      /* per rank: collectives joined / arrived last */
    double skew_sum, skew_max;
    const char *worst_cid;
    int worst_last;
} igrp;

static int same_key(const coll_ev *a, const coll_ev *b)
{
#define SEQ(x, y) ((x) == (y) || ((x) && (y) && !strcmp((x), (y))))
    return SEQ(a->pg_name, b->pg_name) && SEQ(a->coll_name, b->coll_name) && SEQ(a->dtype, b->dtype) &&
           a->in_nelems == b->in_nelems;
#undef SEQ
}

tl_table *coll_sheet_imb_colls(coll_run *run)
{
    size_t N = run->world, ns = run->nsync;
    TL_VEC(igrp) gs = {0};
    for (size_t i = 0; i < ns; i++) {
        const coll_group *G = &run->groups[run->sync_g[i]];
        const tl_coll_sync *m = &run->sync_m[i];
        size_t g;
        for (g = 0; g < gs.n; g++)
            if (same_key(gs.v[g].e, G->ev[0])) break;
        if (g == gs.n) {
            igrp ng = {.e = G->ev[0], .skew_max = -1};
            ng.late = tl_xcalloc(N, sizeof *ng.late);
            ng.seen = tl_xcalloc(N, sizeof *ng.seen);
            ng.last = tl_xcalloc(N, sizeof *ng.last);
            tl_vec_push(&gs, ng);
        }
        igrp *x = &gs.v[g];
        x->n++;
        x->skew_sum += m->skew_start;
        if (m->skew_start > x->skew_max) x->skew_max = m->skew_start, x->worst_cid = G->cid, x->worst_last = m->last_rank;
        for (size_t k = 0; k < G->n; k++) {
            int r = G->ev[k]->rank;
            x->late[r] += m->skew_start - run->sync_wait[i * N + (size_t)r];
            x->seen[r]++;
        }
        if (m->last_rank >= 0) x->last[m->last_rank]++;
    }
    tl_table *t = tl_table_new("imbalance_collectives");
    size_t c_pgn = coll_col_str(t, "Process Group Name"), c_cn = coll_col_str(t, "Collective name"),
           c_dt = coll_col_str(t, "dtype"), c_nel = coll_col_i64(t, "In msg nelems"),
           c_cnt = coll_col_i64(t, "count"), c_slow = coll_col_i64(t, "slowest_rank"),
           c_late = coll_col_f64(t, "slowest_rank_mean_late_us"), c_tl = coll_col_i64(t, "slowest_rank_times_last"),
           c_pct = coll_col_f64(t, "slowest_rank_pct_last"), c_smean = coll_col_f64(t, "skew in start time_mean"),
           c_smax = coll_col_f64(t, "skew in start time_max"), c_ssum = coll_col_f64(t, "total_skew_us"),
           c_wc = coll_col_str(t, "worst_collective_id"), c_wl = coll_col_i64(t, "worst_last_rank");
    tl_table_set_nrows(t, gs.n);
    double *key = tl_xmalloc((gs.n ? gs.n : 1) * sizeof *key);
    for (size_t g = 0; g < gs.n; g++) {
        igrp *x = &gs.v[g];
        int slow = -1;
        double best = -INFINITY;
        for (size_t r = 0; r < N; r++) {
            if (!x->seen[r]) continue;
            double ml = x->late[r] / (double)x->seen[r];
            if (ml > best) best = ml, slow = (int)r; /* ties: lower rank */
        }
        coll_set_str(t, c_pgn, g, x->e->pg_name);
        coll_set_str(t, c_cn, g, x->e->coll_name);
        coll_set_str(t, c_dt, g, x->e->dtype);
        coll_set_i64(t, c_nel, g, x->e->in_nelems);
        tl_table_set_i64(t, c_cnt, g, (int64_t)x->n);
        if (slow >= 0) {
            tl_table_set_i64(t, c_slow, g, slow);
            tl_table_set_f64(t, c_late, g, best);
            tl_table_set_i64(t, c_tl, g, x->last[slow]);
            tl_table_set_f64(t, c_pct, g, (double)x->last[slow] / (double)x->seen[slow] * 100);
        }
        tl_table_set_f64(t, c_smean, g, x->skew_sum / (double)x->n);
        tl_table_set_f64(t, c_smax, g, x->skew_max);
        tl_table_set_f64(t, c_ssum, g, x->skew_sum);
        coll_set_str(t, c_wc, g, x->worst_cid);
        tl_table_set_i64(t, c_wl, g, x->worst_last);
        key[g] = x->skew_sum;
        free(x->late), free(x->seen), free(x->last);
    }
    /* the most waiting first */
    size_t *perm = tl_xmalloc((gs.n ? gs.n : 1) * sizeof *perm);
    for (size_t g = 0; g < gs.n; g++) perm[g] = g;
    coll_sort_desc_stable(perm, gs.n, key);
    tl_table_permute(t, perm, gs.n);
    free(perm), free(key);
    tl_vec_free(&gs);
    return t;
}
