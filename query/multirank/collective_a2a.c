/* collective_a2a.c — the all_to_allv sheets of §3.6: nccl_all2allv (one row
 * per matched all_to_allv with per-rank sizes and skews), its summary by
 * (process group, dtype), and the src -> dst volume heatmap (long form).
 * Column names and order are the reference's (NcclAnalyser
 * build_df_nccl_all2allv / build_df_summary_nccl_all2allv). */
#include "query/multirank/collective_internal.h"
#include "query/core/pyval.h"

#include <stdlib.h>
#include <string.h>

int coll_sheet_a2av(coll_run *run, tl_table **out, tl_err *err)
{
    *out = NULL;
    size_t N = run->world;
    TL_VEC(size_t) gs = {0};
    for (size_t g = 0; g < run->ngroups; g++) {
        const coll_group *G = &run->groups[g];
        if (G->ev[0]->type != TL_COLL_ALLTOALLV) continue;
        int rc = coll_check_meta(run, G, 1, err);
        if (rc) { tl_vec_free(&gs); return rc; }
        tl_vec_push(&gs, g);
    }
    if (!gs.n) return 0;
    tl_table *t = tl_table_new("nccl_all2allv");
    size_t c_cid = coll_col_str(t, "collective_id"), c_pgn = coll_col_str(t, "Process Group Name"),
           c_pgr = coll_col_str(t, "Process Group Ranks"), c_cn = coll_col_str(t, "Collective name"),
           c_gs = coll_col_i64(t, "Group size"), c_dt = coll_col_str(t, "dtype"),
           c_st = coll_col_i64(t, "stream"), c_tmb = coll_col_f64(t, "total data communicated (MB)"),
           c_tnel = coll_col_i64(t, "total nelems communicated"), c_wall = coll_col_f64(t, "wall_time (us)"),
           c_maxd = coll_col_f64(t, "max_rank_dur (us)"), c_mind = coll_col_f64(t, "min_rank_dur (us)"),
           c_avgd = coll_col_f64(t, "avg_rank_dur (us)"), c_thr = coll_col_f64(t, "throughput (GB/s)"),
           c_maxt = coll_col_f64(t, "max_rank_throughput (GB/s)"),
           c_mint = coll_col_f64(t, "min_rank_throughput (GB/s)"), c_imb = coll_col_f64(t, "size_imbalance"),
           c_sks = coll_col_f64(t, "skew in start time"), c_ske = coll_col_f64(t, "skew in end time");
    /* Per-rank columns, as the reference's DataFrame of row dicts orders
     * them: by first appearance over the rows (collectives in match order,
     * members by rank), a rank's eight data columns then, after those of
     * every rank new in that row, its two skews. c8[r], c2[r]: the first
     * column of each block, 0 = the rank is in no all_to_allv. */
    enum { PR_TS, PR_DUR, PR_INN, PR_OUTN, PR_INMB, PR_OUTMB, PR_INS, PR_OUTS, PR_N };
    static const char *const PRN[PR_N] = {"ts", "dur", "In msg nelems", "Out msg nelems", "In msg size (MB)",
                                          "Out msg size (MB)", "In split size", "Out split size"};
    size_t *c8 = tl_xcalloc(N, sizeof *c8), *c2 = tl_xcalloc(N, sizeof *c2);
    size_t *memb = tl_xcalloc(N, sizeof *memb); /* rows each rank is in */
    char name[128];
    for (size_t i = 0; i < gs.n; i++) {
        const coll_group *G = &run->groups[gs.v[i]];
        uint8_t *in = tl_xcalloc(N, 1);
        for (size_t k = 0; k < G->n; k++) in[G->ev[k]->rank] = 1;
        for (size_t r = 0; r < N; r++) {
            memb[r] += in[r];
            if (!in[r] || c8[r]) continue;
            c8[r] = t->ncols;
            for (int k = 0; k < PR_N; k++) {
                snprintf(name, sizeof name, "rank_%zu_%s", r, PRN[k]);
                if (k == PR_INN || k == PR_OUTN) coll_col_i64(t, name);
                else if (k == PR_INS || k == PR_OUTS) coll_col_str(t, name);
                else coll_col_f64(t, name);
            }
            in[r] = 2; /* new in this row: its skews follow the data blocks */
        }
        for (size_t r = 0; r < N; r++) {
            if (in[r] != 2) continue;
            c2[r] = t->ncols;
            snprintf(name, sizeof name, "rank_%zu_skew in start time", r);
            coll_col_f64(t, name);
            snprintf(name, sizeof name, "rank_%zu_skew in end time", r);
            coll_col_f64(t, name);
        }
        free(in);
    }
    /* an int column with a missing cell is a float column in pandas */
    for (size_t r = 0; r < N; r++)
        if (c8[r] && memb[r] < gs.n) t->cols[c8[r] + PR_INN].as_float = t->cols[c8[r] + PR_OUTN].as_float = 1;
    free(memb);
    tl_table_set_nrows(t, gs.n);
    t->cols[c_gs].as_float = run->miss_gs;
    t->cols[c_st].as_float = run->miss_st;
    double *tot = tl_xmalloc(gs.n * sizeof *tot);
    double *mb = tl_xmalloc(N * sizeof *mb), *dur = tl_xmalloc(N * sizeof *dur);
    for (size_t i = 0; i < gs.n; i++) {
        const coll_group *G = &run->groups[gs.v[i]];
        const coll_ev *e0 = G->ev[0];
        coll_set_str(t, c_cid, i, G->cid);
        coll_set_str(t, c_pgn, i, e0->pg_name);
        coll_set_str(t, c_pgr, i, e0->pg_ranks);
        coll_set_str(t, c_cn, i, e0->coll_name);
        coll_set_i64(t, c_gs, i, e0->group_size);
        coll_set_str(t, c_dt, i, e0->dtype);
        coll_set_i64(t, c_st, i, e0->stream);
        double smin = INFINITY, emax = -INFINITY;
        int64_t nel = 0;
        int any_nel = 0;
        for (size_t k = 0; k < G->n; k++) {
            const coll_ev *e = G->ev[k];
            if (e->ts < smin) smin = e->ts;
            if (e->ts + e->dur > emax) emax = e->ts + e->dur;
            mb[k] = e->in_mb;
            dur[k] = e->dur;
            if (e->in_nelems != COLL_NONE) nel += e->in_nelems, any_nel = 1;
        }
        double total = tl_sum_kahan(mb, G->n), wall = emax - smin;
        tot[i] = total;
        tl_table_set_f64(t, c_tmb, i, total);
        if (any_nel) tl_table_set_i64(t, c_tnel, i, nel);
        tl_table_set_f64(t, c_wall, i, wall);
        double dmax = dur[0], dmin = dur[0];
        double tmax = NAN, tmin = NAN, mbmax = NAN;
        for (size_t k = 0; k < G->n; k++) {
            if (dur[k] > dmax) dmax = dur[k];
            if (dur[k] < dmin) dmin = dur[k];
            if (!isnan(mb[k]) && (isnan(mbmax) || mb[k] > mbmax)) mbmax = mb[k];
            if (mb[k] > 0 && dur[k] > 0) {
                double th = (mb[k] / 1024) / (dur[k] / 1e6);
                if (isnan(tmax) || th > tmax) tmax = th;
                if (isnan(tmin) || th < tmin) tmin = th;
            }
        }
        tl_table_set_f64(t, c_maxd, i, dmax);
        tl_table_set_f64(t, c_mind, i, dmin);
        tl_table_set_f64(t, c_avgd, i, tl_mean_pairwise(dur, G->n));
        coll_set_f64(t, c_thr, i, wall > 0 ? (total / 1024) / (wall / 1e6) : NAN);
        coll_set_f64(t, c_maxt, i, tmax);
        coll_set_f64(t, c_mint, i, tmin);
        size_t nmb = 0;
        for (size_t k = 0; k < G->n; k++)
            if (!isnan(mb[k])) mb[nmb++] = mb[k];
        double mbmean = tl_mean_pairwise(mb, nmb);
        coll_set_f64(t, c_imb, i, mbmean > 0 ? mbmax / mbmean : NAN);
        double sks = 0, ske = 0;
        for (size_t k = 0; k < G->n; k++) {
            const coll_ev *e = G->ev[k];
            size_t c = c8[e->rank];
            double ss = e->ts - smin, es = emax - (e->ts + e->dur);
            if (ss > sks) sks = ss;
            if (es > ske) ske = es;
            tl_table_set_f64(t, c + PR_TS, i, e->ts);
            tl_table_set_f64(t, c + PR_DUR, i, e->dur);
            coll_set_i64(t, c + PR_INN, i, e->in_nelems);
            coll_set_f64(t, c + PR_INMB, i, e->in_mb);
            coll_set_i64(t, c + PR_OUTN, i, e->out_nelems);
            coll_set_f64(t, c + PR_OUTMB, i, e->out_mb);
            coll_set_str(t, c + PR_INS, i, e->in_split);
            coll_set_str(t, c + PR_OUTS, i, e->out_split);
            tl_table_set_f64(t, c2[e->rank], i, ss);
            tl_table_set_f64(t, c2[e->rank] + 1, i, es);
        }
        tl_table_set_f64(t, c_sks, i, sks);
        tl_table_set_f64(t, c_ske, i, ske);
    }
    size_t *perm = tl_xmalloc(gs.n * sizeof *perm);
    for (size_t i = 0; i < gs.n; i++) perm[i] = i;
    coll_sort_desc(perm, gs.n, tot);
    tl_table_permute(t, perm, gs.n);
    free(perm), free(tot), free(mb), free(dur), free(c8), free(c2);
    tl_vec_free(&gs);
    *out = t;
    return 0;
}

/* (Process Group Name, dtype) groups in ascending key order. */
typedef struct pdkey {
    const char *pg, *dt;
} pdkey;
static int pd_cmp(const pdkey *a, const pdkey *b)
{
    const char *x = a->pg ? a->pg : "\xff", *y = b->pg ? b->pg : "\xff";
    int c = strcmp(x, y);
    if (c) return c;
    x = a->dt ? a->dt : "\xff", y = b->dt ? b->dt : "\xff";
    return strcmp(x, y);
}

tl_table *coll_sheet_summary_a2av(coll_run *run, const tl_table *a)
{
    size_t n = a->nrows;
    long c_pgn = tl_table_col(a, "Process Group Name"), c_dt = tl_table_col(a, "dtype"),
         c_pgr = tl_table_col(a, "Process Group Ranks"), c_gs = tl_table_col(a, "Group size"),
         c_cn = tl_table_col(a, "Collective name");
    /* groups: keys sorted, members in row order */
    pdkey *keys = tl_xmalloc(n * sizeof *keys);
    for (size_t i = 0; i < n; i++) keys[i].pg = a->cols[c_pgn].v.s[i], keys[i].dt = a->cols[c_dt].v.s[i];
    size_t *gid = tl_xmalloc(n * sizeof *gid);
    pdkey *uk = tl_xmalloc(n * sizeof *uk);
    size_t ng = 0;
    for (size_t i = 0; i < n; i++) {
        size_t g;
        for (g = 0; g < ng; g++)
            if (!pd_cmp(&uk[g], &keys[i])) break;
        if (g == ng) uk[ng++] = keys[i];
        gid[i] = g;
    }
    /* ascending key order of the unique keys (few groups: insertion sort) */
    size_t *ord = tl_xmalloc((ng ? ng : 1) * sizeof *ord);
    for (size_t g = 0; g < ng; g++) {
        size_t j = g;
        while (j > 0 && pd_cmp(&uk[ord[j - 1]], &uk[g]) > 0) ord[j] = ord[j - 1], j--;
        ord[j] = g;
    }
    tl_table *t = tl_table_new("nccl_summary_all2allv");
    size_t o_pgn = coll_col_str(t, "Process Group Name"), o_dt = coll_col_str(t, "dtype");
    static const char *const M1[] = {"total data communicated (MB)", "wall_time (us)", "throughput (GB/s)"};
    static const char *const M2[] = {"size_imbalance", "max_rank_dur (us)", "skew in start time",
                                     "skew in end time"};
    char name[160];
    /* the agg metrics of each of M1, wall time's sum ("Total wall_time
     * (us)") right after its own (the reference's agg dict order) */
    size_t o_m1[3], o_wsum = 0;
    for (int k = 0; k < 3; k++) {
        o_m1[k] = t->ncols;
        for (size_t ag = 0; ag < run->nagg; ag++) {
            snprintf(name, sizeof name, "%s_%s", M1[k], run->agg[ag]);
            if (!strcmp(run->agg[ag], "count")) coll_col_i64(t, name);
            else coll_col_f64(t, name);
        }
        if (k == 1) o_wsum = coll_col_f64(t, "Total wall_time (us)");
    }
    size_t o_m2 = t->ncols;
    for (int k = 0; k < 4; k++) {
        snprintf(name, sizeof name, "%s_mean", M2[k]);
        coll_col_f64(t, name);
        snprintf(name, sizeof name, "%s_max", M2[k]);
        coll_col_f64(t, name);
    }
    size_t o_cnt = coll_col_i64(t, "count"), o_pgr = coll_col_str(t, "Process Group Ranks"),
           o_cn = coll_col_str(t, "Collective name"), o_gs = coll_col_i64(t, "Group size"),
           o_tot = coll_col_f64(t, "Total wall_time (ms)");
    tl_table_set_nrows(t, ng);
    double *sc = tl_xmalloc((n ? n : 1) * sizeof *sc), *tot = tl_xmalloc((ng ? ng : 1) * sizeof *tot);
    for (size_t row = 0; row < ng; row++) {
        size_t g = ord[row];
        coll_set_str(t, o_pgn, row, uk[g].pg);
        coll_set_str(t, o_dt, row, uk[g].dt);
#define FILL(colname)                                                                   \
    do {                                                                                \
        const double *src_ = a->cols[tl_table_col(a, colname)].v.f;                     \
        m = 0;                                                                          \
        for (size_t i = 0; i < n; i++)                                                  \
            if (gid[i] == g) sc[m++] = src_[i];                                         \
    } while (0)
        size_t m, c;
        for (int k = 0; k < 3; k++) {
            c = o_m1[k];
            for (size_t ag = 0; ag < run->nagg; ag++, c++) {
                FILL(M1[k]);
                double v = coll_agg(run->agg[ag], sc, m, m);
                if (t->cols[c].type == TL_I64) tl_table_set_i64(t, c, row, (int64_t)v);
                else coll_set_f64(t, c, row, v);
            }
        }
        FILL("wall_time (us)");
        double wsum = coll_agg("sum", sc, m, m);
        tl_table_set_f64(t, o_wsum, row, wsum);
        c = o_m2;
        for (int k = 0; k < 4; k++) {
            FILL(M2[k]);
            coll_set_f64(t, c++, row, coll_agg("mean", sc, m, m));
            FILL(M2[k]);
            coll_set_f64(t, c++, row, coll_agg("max", sc, m, m));
        }
#undef FILL
        size_t cnt = 0;
        int have_pgr = 0, have_cn = 0, have_gs = 0;
        for (size_t i = 0; i < n; i++) {
            if (gid[i] != g) continue;
            cnt++;
            if (!have_pgr && a->cols[c_pgr].v.s[i]) tl_table_set_str(t, o_pgr, row, a->cols[c_pgr].v.s[i]), have_pgr = 1;
            if (!have_cn && a->cols[c_cn].v.s[i]) tl_table_set_str(t, o_cn, row, a->cols[c_cn].v.s[i]), have_cn = 1;
            if (!have_gs && !tl_table_is_missing(a, (size_t)c_gs, i))
                tl_table_set_i64(t, o_gs, row, a->cols[c_gs].v.i[i]), have_gs = 1;
        }
        tl_table_set_i64(t, o_cnt, row, (int64_t)cnt);
        tot[row] = wsum / 1000;
        tl_table_set_f64(t, o_tot, row, tot[row]);
    }
    size_t *perm = tl_xmalloc((ng ? ng : 1) * sizeof *perm);
    for (size_t g = 0; g < ng; g++) perm[g] = g;
    coll_sort_desc(perm, ng, tot);
    tl_table_permute(t, perm, ng);
    free(perm), free(tot), free(sc), free(ord), free(uk), free(gid), free(keys);
    return t;
}

/* src -> dst volumes from each rank's "In split size" (element j: elements
 * sent to the j-th rank of the group), long form. */
tl_table *coll_sheet_heatmap(coll_run *run)
{
    size_t N = run->world;
    if (N > 1024) return NULL;
    double *tot = tl_xcalloc(N * N, sizeof *tot);
    int64_t *cnt = tl_xcalloc(N * N, sizeof *cnt);
    tl_arena a;
    tl_arena_init(&a, 1 << 14);
    for (size_t g = 0; g < run->ngroups; g++) {
        const coll_group *G = &run->groups[g];
        if (G->ev[0]->type != TL_COLL_ALLTOALLV) continue;
        tl_pv *pr = NULL;
        if (G->ev[0]->pg_ranks) tl_pv_parse(&a, G->ev[0]->pg_ranks, strlen(G->ev[0]->pg_ranks), &pr, NULL);
        for (size_t k = 0; k < G->n; k++) {
            const coll_ev *e = G->ev[k];
            int b = tl_coll_dtype_bytes(e->dtype);
            tl_pv *sp;
            if (!b || !e->in_split || tl_pv_parse(&a, e->in_split, strlen(e->in_split), &sp, NULL) ||
                !tl_pv_is_seq(sp))
                continue;
            size_t ns = tl_pv_len(sp);
            for (size_t j = 0; j < ns; j++) {
                const tl_pv *x = tl_pv_at(sp, (long)j);
                double v;
                if (tl_pv_num(x, &v)) continue;
                int64_t dst = (int64_t)j;
                if (tl_pv_is_seq(pr) && tl_pv_len(pr) == ns) {
                    double d;
                    if (tl_pv_num(tl_pv_at(pr, (long)j), &d) == 0) dst = (int64_t)d;
                }
                if (dst < 0 || (size_t)dst >= N) continue;
                size_t cell = (size_t)e->rank * N + (size_t)dst;
                tot[cell] += v * b / 1048576.0;
                cnt[cell]++;
            }
        }
    }
    tl_arena_free(&a);
    tl_table *t = tl_table_new("nccl_all2allv_heatmap");
    size_t c_s = coll_col_i64(t, "src_rank"), c_d = coll_col_i64(t, "dst_rank"),
           c_t = coll_col_f64(t, "total_sent_MB"), c_a = coll_col_f64(t, "avg_sent_MB"),
           c_c = coll_col_i64(t, "count");
    for (size_t s = 0; s < N; s++)
        for (size_t d = 0; d < N; d++) {
            size_t cell = s * N + d;
            if (!cnt[cell]) continue;
            size_t row = tl_table_add_row(t);
            tl_table_set_i64(t, c_s, row, (int64_t)s);
            tl_table_set_i64(t, c_d, row, (int64_t)d);
            tl_table_set_f64(t, c_t, row, tot[cell]);
            tl_table_set_f64(t, c_a, row, tot[cell] / (double)cnt[cell]);
            tl_table_set_i64(t, c_c, row, cnt[cell]);
        }
    free(tot), free(cnt);
    return t;
}
