/* collective_sheets.c — matching collectives across ranks (§3.4) and the
 * sheets nccl_long, nccl_implicit_sync, nccl_summary_implicit_sync,
 * nccl_summary_long and straggler_summary (§3.4–§3.6), plus the node labels
 * of §3.7. Aggregations follow pandas' groupby algorithms (Kahan sums,
 * Welford variance) so that the numbers match the reference's to the bit
 * where the reference's own order of operations is known. */
#include "query/multirank/collective_internal.h"
#include "query/core/pyval.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- helpers ---------------------------------------------------------------- */

int coll_agg_known(const char *a)
{
    static const char *const K[] = {"mean", "median", "min", "max", "std", "sum", "count", "first", "last"};
    for (size_t i = 0; i < sizeof K / sizeof *K; i++)
        if (!strcmp(a, K[i])) return 1;
    return 0;
}

double coll_agg(const char *agg, double *v, size_t n, size_t nrows)
{
    (void)nrows;
    /* compact the non-NaN values, keeping their order (first/last need it) */
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (!isnan(v[i])) v[m++] = v[i];
    if (!strcmp(agg, "count")) return (double)m;
    if (!strcmp(agg, "sum")) return tl_sum_kahan(v, m);
    if (!m) return NAN;
    if (!strcmp(agg, "first")) return v[0];
    if (!strcmp(agg, "last")) return v[m - 1];
    if (!strcmp(agg, "mean")) return tl_mean_kahan(v, m);
    if (!strcmp(agg, "min") || !strcmp(agg, "max")) {
        double x = v[0];
        int mx = agg[1] == 'a';
        for (size_t i = 1; i < m; i++)
            if (mx ? v[i] > x : v[i] < x) x = v[i];
        return x;
    }
    if (!strcmp(agg, "median")) return tl_median_f64(v, m);
    if (!strcmp(agg, "std")) return tl_std_welford(v, m, 1);
    return NAN;
}

/* Stable merge sort of idx by a comparator. */
typedef int (*idx_cmp)(const void *ctx, size_t a, size_t b);
static void msort(size_t *idx, size_t *tmp, size_t n, idx_cmp cmp, const void *ctx)
{
    if (n < 2) return;
    size_t h = n / 2;
    msort(idx, tmp, h, cmp, ctx);
    msort(idx + h, tmp, n - h, cmp, ctx);
    size_t i = 0, j = h, k = 0;
    while (i < h && j < n) tmp[k++] = cmp(ctx, idx[j], idx[i]) < 0 ? idx[j++] : idx[i++];
    while (i < h) tmp[k++] = idx[i++];
    while (j < n) tmp[k++] = idx[j++];
    memcpy(idx, tmp, n * sizeof *idx);
}
static void sort_idx(size_t *idx, size_t n, idx_cmp cmp, const void *ctx)
{
    size_t *tmp = tl_xmalloc((n ? n : 1) * sizeof *tmp);
    msort(idx, tmp, n, cmp, ctx);
    free(tmp);
}

static int desc_cmp(const void *ctx, size_t a, size_t b)
{
    const double *k = ctx;
    double x = k[a], y = k[b];
    if (isnan(x)) return isnan(y) ? 0 : 1;
    if (isnan(y)) return -1;
    return x > y ? -1 : x < y;
}
void coll_sort_desc(size_t *idx, size_t n, const double *key) { tl_pd_sort_values(idx, n, key, 0); }
void coll_sort_desc_stable(size_t *idx, size_t n, const double *key) { sort_idx(idx, n, desc_cmp, key); }

size_t coll_col_f64(tl_table *t, const char *name) { return tl_table_add_col(t, name, TL_F64); }
size_t coll_col_i64(tl_table *t, const char *name) { return tl_table_add_col(t, name, TL_I64); }
size_t coll_col_str(tl_table *t, const char *name) { return tl_table_add_col(t, name, TL_STR); }

/* Interned text -> its copy in one table's arena: the texts of a run are
 * interned (coll_match), so a table stores each distinct text once and
 * its cells point at that copy. */
typedef struct pcache {
    tl_imap idx;             /* interned pointer -> index in copy */
    TL_VEC(const char *) copy;
} pcache;
static const char *pc_get(pcache *pc, tl_table *t, const char *s)
{
    int isnew;
    size_t *slot = tl_imap_put(&pc->idx, (uintptr_t)s, &isnew);
    if (isnew) {
        *slot = pc->copy.n;
        tl_vec_push(&pc->copy, tl_arena_strdup(&t->arena, s));
    }
    return pc->copy.v[*slot];
}
static void pc_free(pcache *pc)
{
    tl_imap_free(&pc->idx);
    tl_vec_free(&pc->copy);
}
static void set_str_pc(tl_table *t, size_t c, size_t r, const char *s, pcache *pc)
{
    if (s) tl_table_set_str_ref(t, c, r, pc_get(pc, t, s));
}

/* the run's matching keys: (pointer, integer) in a tl_bmap; the pointers
 * are interned texts */
typedef struct pkey {
    const void *p;
    int64_t i;
} pkey;
static size_t *pkey_put(tl_bmap *m, const void *p, int64_t i, int *isnew)
{
    pkey k = {p, i};
    return tl_bmap_put(m, &k, isnew);
}

/* Canonical pointer of a text (NULL stays NULL) across the run. A rank's
 * texts already share one pointer per distinct value (collective_read.c),
 * so the pointer is looked up first and the text hashed once per pointer:
 * 6 texts x 267k events of the 8 x 1 GB corpus, ~40 distinct pointers. */
typedef struct interner {
    tl_smap text; /* text -> index in tab */
    tl_bmap ptr; /* pointer -> index in tab */
    const char **tab;
    size_t ntab;
    const char *hit_k[64], *hit_v[64]; /* recent pointers -> canonical, before the map */
} interner;
static const char *intern_slow(interner *in, const char *s)
{
    int isnew;
    size_t *ps = pkey_put(&in->ptr, s, 0, &isnew);
    if (!isnew) return in->tab[*ps];
    size_t *slot = tl_smap_put(&in->text, s, strlen(s), &isnew);
    if (isnew) {
        in->tab = tl_xrealloc(in->tab, (in->ntab + 1) * sizeof *in->tab);
        in->tab[in->ntab] = s;
        *slot = in->ntab++;
    }
    *ps = *slot;
    return in->tab[*slot];
}

static const char *intern(interner *in, const char *s)
{
    if (!s) return NULL;
    size_t h = ((uintptr_t)s >> 4) & 63;
    if (in->hit_k[h] == s) return in->hit_v[h];
    in->hit_k[h] = s;
    return in->hit_v[h] = intern_slow(in, s);
}
static void interner_free(interner *in)
{
    tl_smap_free(&in->text);
    tl_bmap_free(&in->ptr);
    free(in->tab);
}

static int str_eq(const char *a, const char *b) { return a == b || (a && b && !strcmp(a, b)); }
/* NULL (missing) sorts after every string, as pandas puts NaN keys last */
static int str_cmp(const char *a, const char *b)
{
    if (a == b) return 0; /* interned: equal texts share a pointer */
    if (!a || !b) return a ? -1 : b ? 1 : 0;
    return strcmp(a, b);
}
static int i64_cmp(int64_t a, int64_t b)
{
    if (a == COLL_NONE || b == COLL_NONE) return a != COLL_NONE ? -1 : b != COLL_NONE ? 1 : 0;
    return a < b ? -1 : a > b;
}

/* ---- matching (§3.4) ------------------------------------------------------------ */

static int ev_ts_cmp(const void *a, const void *b)
{
    const coll_ev *x = *(const coll_ev *const *)a, *y = *(const coll_ev *const *)b;
    /* by the µs doubles the reference ranks (pandas rank method "first"):
     * epoch times a few ns apart tie and keep trace order */
    if (x->ts != y->ts) return x->ts < y->ts ? -1 : 1;
    return x->row < y->row ? -1 : x->row > y->row;
}

/* A PG name's text for the matching: a missing name is Unknown_Group. */
static const char *pg_text(const char *pg) { return pg ? pg : "Unknown_Group"; }

/* index_in_group of a rank's events: each PG's events are bucketed in
 * trace order, where they mostly are in ts order already, and sorted only
 * when not. PGs are told apart by text; a rank's texts share one pointer
 * per distinct value (collective_read.c), so the few distinct pointers are
 * numbered first and each event looks its pointer up in a small table. */
static void rank_index_in_group(coll_rank *cr)
{
    TL_VEC(const char *) ptr = {0};  /* distinct pointers seen */
    TL_VEC(size_t) pg_of = {0};      /* their PG numbers */
    size_t npg = 0, last = SIZE_MAX;
    size_t *pg = tl_xmalloc((cr->n ? cr->n : 1) * sizeof *pg);
    for (size_t i = 0; i < cr->n; i++) {
        const char *p = cr->ev[i].pg_name;
        if (last == SIZE_MAX || ptr.v[last] != p) {
            last = 0;
            while (last < ptr.n && ptr.v[last] != p) last++;
            if (last == ptr.n) {
                size_t k = 0;
                while (k < ptr.n && strcmp(pg_text(ptr.v[k]), pg_text(p))) k++;
                tl_vec_push(&ptr, p);
                tl_vec_push(&pg_of, k < ptr.n - 1 ? pg_of.v[k] : npg++);
            }
        }
        pg[i] = pg_of.v[last];
    }
    coll_ev **tmp = tl_xmalloc((cr->n ? cr->n : 1) * sizeof *tmp);
    size_t *start = tl_xcalloc(npg + 1, sizeof *start), *fill = tl_xmalloc((npg + 1) * sizeof *fill);
    for (size_t i = 0; i < cr->n; i++) start[pg[i] + 1]++;
    for (size_t b = 0; b < npg; b++) start[b + 1] += start[b];
    memcpy(fill, start, (npg + 1) * sizeof *fill);
    for (size_t i = 0; i < cr->n; i++) tmp[fill[pg[i]]++] = &cr->ev[i];
    for (size_t b = 0; b < npg; b++) {
        coll_ev **v = tmp + start[b];
        size_t n = start[b + 1] - start[b];
        for (size_t i = 1; i < n; i++)
            if (ev_ts_cmp(&v[i - 1], &v[i]) > 0) {
                qsort(v, n, sizeof *v, ev_ts_cmp);
                break;
            }
        for (size_t i = 0; i < n; i++) v[i]->index_in_group = (int64_t)i;
    }
    free(start);
    free(fill);
    free(tmp);
    free(pg);
    tl_vec_free(&ptr);
    tl_vec_free(&pg_of);
}

void coll_rank_prepare(coll_rank *cr)
{
    cr->simple = 1;
    cr->miss_gs = cr->miss_in = cr->miss_on = cr->miss_st = 0;
    int64_t s0 = COLL_NONE;
    /* type and element size looked up again only when the (per-rank
     * interned) text differs from the previous event's */
    const char *name_k = NULL, *dtype_k = NULL;
    tl_coll_type type = tl_coll_type_of(NULL);
    int bytes = tl_coll_dtype_bytes(NULL), first = 1;
    for (size_t i = 0; i < cr->n; i++) {
        coll_ev *e = &cr->ev[i];
        if (e->pg_name && strcmp(e->pg_name, "Unknown_Group")) cr->simple = 0;
        if (e->stream != COLL_NONE) {
            if (s0 == COLL_NONE) s0 = e->stream;
            else if (e->stream != s0) cr->simple = 0;
        }
        cr->miss_gs |= e->group_size == COLL_NONE;
        cr->miss_in |= e->in_nelems == COLL_NONE;
        cr->miss_on |= e->out_nelems == COLL_NONE;
        cr->miss_st |= e->stream == COLL_NONE;
        if (first || e->coll_name != name_k) name_k = e->coll_name, type = tl_coll_type_of(name_k);
        if (first || e->dtype != dtype_k) dtype_k = e->dtype, bytes = tl_coll_dtype_bytes(dtype_k);
        first = 0;
        e->type = type;
        if (bytes && e->in_nelems != COLL_NONE) {
            e->in_mb = tl_coll_msg_mb(e->in_nelems, bytes);
            e->out_mb = tl_coll_msg_mb(e->out_nelems, bytes);
        } else {
            e->in_mb = e->out_mb = NAN;
        }
    }
    rank_index_in_group(cr);
    cr->prepared = 1;
}

/* Group numbers by (interned PG, index_in_group): per distinct PG an
 * array over index_in_group, SIZE_MAX where no group is numbered yet. */
typedef struct pg_groups {
    struct pg_slots {
        const char *pg;
        size_t *slot, n;
    } *v;
    size_t n;
} pg_groups;

/* The slot of (pg, k); *hit is the PG looked up last (consecutive events
 * mostly share it). */
static size_t *pg_group_slot(pg_groups *m, const char *pg, size_t k, size_t *hit)
{
    size_t p = *hit;
    if (p >= m->n || m->v[p].pg != pg) {
        for (p = 0; p < m->n && m->v[p].pg != pg; p++) {}
        if (p == m->n) {
            m->v = tl_xrealloc(m->v, (m->n + 1) * sizeof *m->v);
            m->v[m->n++] = (struct pg_slots){pg, NULL, 0};
        }
        *hit = p;
    }
    struct pg_slots *s = &m->v[p];
    if (k >= s->n) {
        size_t nn = s->n ? s->n : 64;
        while (nn <= k) nn *= 2;
        s->slot = tl_xrealloc(s->slot, nn * sizeof *s->slot);
        for (size_t i = s->n; i < nn; i++) s->slot[i] = SIZE_MAX;
        s->n = nn;
    }
    return &s->slot[k];
}

/* A group's collective_id: "<pg>_<k>", or "<k>" with pg NULL, as
 * printf's "%s_%lld" spells it (a corpus numbers a group per collective
 * of every process group: tens of thousands, where printf's cost shows). */
static const char *cid_text(tl_arena *a, const char *pg, int64_t k)
{
    char digits[24];
    size_t nd = 0, pglen = pg ? strlen(pg) : 0;
    uint64_t u = k < 0 ? 0 - (uint64_t)k : (uint64_t)k;
    do {
        digits[nd++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    char *s = tl_arena_alloc(a, (pg ? pglen + 1 : 0) + (k < 0) + nd + 1), *p = s;
    if (pg) {
        memcpy(p, pg, pglen);
        p += pglen;
        *p++ = '_';
    }
    if (k < 0) *p++ = '-';
    while (nd) *p++ = digits[--nd];
    *p = 0;
    return s;
}

static void pg_groups_free(pg_groups *m)
{
    for (size_t i = 0; i < m->n; i++) free(m->v[i].slot);
    free(m->v);
}

static void prepare_rank(void *ctx, size_t r)
{
    coll_rank *cr = &((coll_rank *)ctx)[r];
    if (!cr->prepared) coll_rank_prepare(cr);
}

/* Prepares the ranks that are not (those unpacked from partials), on
 * threads as the one-process report does on its reading threads. */
static void prepare_ranks(coll_run *run)
{
    size_t todo = 0;
    for (size_t r = 0; r < run->world; r++) todo += !run->ranks[r].prepared;
    if (!todo) return;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int threads = run->o->max_workers > 0 ? run->o->max_workers : cpus > 0 ? (int)cpus : 1;
    tl_par_for(run->world, threads, NULL, prepare_rank, run->ranks);
}

int coll_match(coll_run *run, tl_err *err)
{
    (void)err;
    prepare_ranks(run);
    size_t total = 0;
    for (size_t r = 0; r < run->world; r++) total += run->ranks[r].n;
    run->all = tl_xmalloc((total ? total : 1) * sizeof *run->all);
    run->nall = 0;
    for (size_t r = 0; r < run->world; r++)
        for (size_t i = 0; i < run->ranks[r].n; i++) run->all[run->nall++] = &run->ranks[r].ev[i];

    /* simplified mode: no process-group names at all and one stream per
     * rank; the per-rank parts come from coll_rank_prepare */
    int simplified = 1;
    for (size_t r = 0; r < run->world; r++) {
        coll_rank *cr = &run->ranks[r];
        simplified &= cr->simple;
        run->miss_gs |= cr->miss_gs;
        run->miss_in |= cr->miss_in;
        run->miss_on |= cr->miss_on;
        run->miss_st |= cr->miss_st;
    }
    run->simplified = simplified;
    interner im = {0};
    tl_bmap_init(&im.ptr, sizeof(pkey), 64);
    const char *unknown = intern(&im, "Unknown_Group");
    for (size_t i = 0; i < run->nall; i++) {
        coll_ev *e = run->all[i];
        e->pg_name = simplified ? "all" : e->pg_name ? intern(&im, e->pg_name) : unknown;
        e->pg_ranks = intern(&im, e->pg_ranks);
        e->coll_name = intern(&im, e->coll_name);
        e->dtype = intern(&im, e->dtype);
        e->in_split = intern(&im, e->in_split);
        e->out_split = intern(&im, e->out_split);
    }
    interner_free(&im);
    /* groups in first-appearance order of the long table, keyed by
     * (interned PG name, index_in_group): the collective_id "<pg>_<k>" is
     * spelled once per group ("<k>" in simplified mode, where every PG is
     * "all"). A PG's index_in_group values are dense from 0, so each of the
     * few distinct PGs maps them to group numbers through an array. */
    pg_groups pgs = {0};
    size_t cap = 0, hit = 0;
    for (size_t i = 0; i < run->nall; i++) {
        coll_ev *e = run->all[i];
        size_t *slot = pg_group_slot(&pgs, e->pg_name, (size_t)e->index_in_group, &hit);
        if (*slot == SIZE_MAX) {
            if (run->ngroups == cap) {
                cap = cap ? cap * 2 : 64;
                run->groups = tl_xrealloc(run->groups, cap * sizeof *run->groups);
            }
            *slot = run->ngroups;
            coll_group *g = &run->groups[run->ngroups++];
            g->cid = cid_text(&run->arena, simplified ? NULL : e->pg_name, e->index_in_group);
            g->ev = NULL;
            g->n = 0;
        }
        e->cid_no = (long)*slot;
        e->cid = run->groups[*slot].cid;
        run->groups[*slot].n++;
    }
    pg_groups_free(&pgs);
    /* members in long-table order (ranks ascend: the table is rank by rank) */
    for (size_t g = 0; g < run->ngroups; g++) {
        run->groups[g].ev = tl_xmalloc(run->groups[g].n * sizeof *run->groups[g].ev);
        run->groups[g].n = 0;
    }
    for (size_t i = 0; i < run->nall; i++) {
        coll_group *g = &run->groups[run->all[i]->cid_no];
        g->ev[g->n++] = run->all[i];
    }
    return 0;
}

/* ---- node labels (§3.7) ------------------------------------------------------------ */

static const char *node_span(tl_arena *a, const char *ranks, int gpn)
{
    if (!ranks) return "unknown";
    tl_pv *v;
    if (tl_pv_parse(a, ranks, strlen(ranks), &v, NULL) || !tl_pv_is_seq(v) || !tl_pv_len(v)) return "unknown";
    int64_t node = -1;
    for (size_t i = 0; i < tl_pv_len(v); i++) {
        const tl_pv *x = tl_pv_at(v, (long)i);
        if (!x || x->kind != TL_PV_INT || x->u.i.big) return "unknown";
        int64_t n = x->u.i.v / gpn;
        if (node >= 0 && n != node) return "inter_node";
        node = n;
    }
    return "intra_node";
}

/* node_id (from rank) and node_span (from Process Group Ranks) when the GPUs
 * per node are known; a sheet with no rows is left as it is, as the
 * reference's add_node_span_columns returns an empty frame unchanged. */
void coll_add_node_labels(coll_run *run, tl_table *t)
{
    if (run->gpn <= 0 || t->nrows == 0) return;
    long rc = tl_table_col(t, "rank"), pc = tl_table_col(t, "Process Group Ranks");
    if (rc >= 0 && t->cols[rc].type == TL_I64) {
        size_t c = coll_col_i64(t, "node_id");
        for (size_t r = 0; r < t->nrows; r++)
            if (!tl_table_is_missing(t, (size_t)rc, r)) tl_table_set_i64(t, c, r, t->cols[rc].v.i[r] / run->gpn);
    }
    if (pc >= 0 && t->cols[pc].type == TL_STR) {
        size_t c = coll_col_str(t, "node_span");
        tl_arena a;
        tl_arena_init(&a, 1 << 12);
        tl_smap memo = {0};
        const char **vals = NULL;
        size_t nvals = 0;
        for (size_t r = 0; r < t->nrows; r++) {
            const char *s = t->cols[pc].v.s[r];
            const char *span;
            if (!s) {
                span = "unknown";
            } else {
                int isnew;
                size_t *slot = tl_smap_put(&memo, s, strlen(s), &isnew);
                if (isnew) {
                    vals = tl_xrealloc(vals, (nvals + 1) * sizeof *vals);
                    vals[nvals] = node_span(&a, s, run->gpn);
                    *slot = nvals++;
                }
                span = vals[*slot];
            }
            tl_table_set_str_ref(t, c, r, span); /* static strings */
        }
        free(vals);
        tl_smap_free(&memo);
        tl_arena_free(&a);
    }
}

/* ---- nccl_long ---------------------------------------------------------------------- */

tl_table *coll_sheet_long(coll_run *run)
{
    tl_table *t = tl_table_new("nccl_long");
    size_t c_cid = coll_col_str(t, "collective_id"), c_idx = coll_col_i64(t, "index_in_group"),
           c_rank = coll_col_i64(t, "rank"), c_pgn = coll_col_str(t, "Process Group Name"),
           c_pgr = coll_col_str(t, "Process Group Ranks"), c_cn = coll_col_str(t, "Collective name"),
           c_gs = coll_col_i64(t, "Group size"), c_dt = coll_col_str(t, "dtype"),
           c_in = coll_col_i64(t, "In msg nelems"), c_inmb = coll_col_f64(t, "In msg size (MB)"),
           c_on = coll_col_i64(t, "Out msg nelems"), c_onmb = coll_col_f64(t, "Out msg size (MB)"),
           c_is = coll_col_str(t, "In split size"), c_os = coll_col_str(t, "Out split size"),
           c_st = coll_col_i64(t, "stream");
    size_t c_ts = coll_col_f64(t, "ts"), c_dur = coll_col_f64(t, "dur");
    tl_table_set_nrows(t, run->nall);
    pcache pc = {0};
    for (size_t r = 0; r < run->nall; r++) {
        const coll_ev *e = run->all[r];
        set_str_pc(t, c_cid, r, e->cid, &pc);
        tl_table_set_i64(t, c_idx, r, e->index_in_group);
        tl_table_set_i64(t, c_rank, r, e->rank);
        set_str_pc(t, c_pgn, r, e->pg_name, &pc);
        set_str_pc(t, c_pgr, r, e->pg_ranks, &pc);
        set_str_pc(t, c_cn, r, e->coll_name, &pc);
        coll_set_i64(t, c_gs, r, e->group_size);
        set_str_pc(t, c_dt, r, e->dtype, &pc);
        coll_set_i64(t, c_in, r, e->in_nelems);
        coll_set_f64(t, c_inmb, r, e->in_mb);
        coll_set_i64(t, c_on, r, e->out_nelems);
        coll_set_f64(t, c_onmb, r, e->out_mb);
        set_str_pc(t, c_is, r, e->in_split, &pc);
        set_str_pc(t, c_os, r, e->out_split, &pc);
        coll_set_i64(t, c_st, r, e->stream);
        tl_table_set_f64(t, c_ts, r, e->ts);
        tl_table_set_f64(t, c_dur, r, e->dur);
    }
    pc_free(&pc);
    return t;
}

/* ---- nccl_implicit_sync (§3.5) -------------------------------------------------------- */

/* Python-ish list of the distinct values, for the mismatch message. */
static void mismatch_values(tl_buf *b, const coll_group *g, int field)
{
    tl_buf_putc(b, '[');
    for (size_t i = 0; i < g->n; i++) {
        const coll_ev *e = g->ev[i];
        char num[48];
        const char *s = NULL;
        int is_str = 0;
        switch (field) {
        case 0: s = e->pg_name, is_str = 1; break;
        case 1: s = e->pg_ranks, is_str = 1; break;
        case 2: s = e->coll_name, is_str = 1; break;
        case 3: s = e->dtype, is_str = 1; break;
        case 4: case 5: case 6: case 9: {
            int64_t v = field == 4 ? e->group_size : field == 5 ? e->in_nelems : field == 6 ? e->out_nelems : e->stream;
            if (v == COLL_NONE) s = NULL;
            else snprintf(num, sizeof num, "%lld", (long long)v), s = num;
            break;
        }
        case 7: case 8: {
            double v = field == 7 ? e->in_mb : e->out_mb;
            tl_fmt_pyfloat(v, num);
            s = num;
            break;
        }
        }
        if (i) tl_buf_puts(b, ", ");
        if (!s) tl_buf_puts(b, is_str ? "None" : "nan");
        else if (is_str) tl_buf_pystr(b, s, strlen(s));
        else tl_buf_puts(b, s);
    }
    tl_buf_putc(b, ']');
}

static const char *const META_NAMES[] = {
    "Process Group Name", "Process Group Ranks", "Collective name", "dtype", "Group size",
    "In msg nelems", "Out msg nelems", "In msg size (MB)", "Out msg size (MB)", "stream",
};

static int same_f64(double a, double b) { return (isnan(a) && isnan(b)) || a == b; }

/* 0 when the group's events agree on the metadata fields (stream too when
 * with_stream); else the index of the first field that differs. */
static int meta_mismatch(const coll_group *g, int with_stream)
{
    const coll_ev *a = g->ev[0];
    for (size_t i = 1; i < g->n; i++) {
        const coll_ev *b = g->ev[i];
        if (!str_eq(a->pg_name, b->pg_name)) return 1 + 0;
        if (!str_eq(a->pg_ranks, b->pg_ranks)) return 1 + 1;
        if (!str_eq(a->coll_name, b->coll_name)) return 1 + 2;
        if (!str_eq(a->dtype, b->dtype)) return 1 + 3;
        if (a->group_size != b->group_size) return 1 + 4;
        if (!with_stream) {
            if (a->in_nelems != b->in_nelems) return 1 + 5;
            if (a->out_nelems != b->out_nelems) return 1 + 6;
            if (!same_f64(a->in_mb, b->in_mb)) return 1 + 7;
            if (!same_f64(a->out_mb, b->out_mb)) return 1 + 8;
        } else if (a->stream != b->stream) {
            return 1 + 9;
        }
    }
    return 0;
}

int coll_check_meta(const coll_run *run, const coll_group *g, int with_stream, tl_err *err)
{
    if (!run->o->strict_metadata || run->simplified) return 0;
    int f = meta_mismatch(g, with_stream);
    if (!f) return 0;
    tl_buf b = {0};
    mismatch_values(&b, g, f - 1);
    int rc = tl_errf(err, TL_EFORMAT, "Metadata mismatch in '%s' for collective %s: %s", META_NAMES[f - 1],
                     g->cid, b.p);
    tl_buf_free(&b);
    return rc;
}

static double full_mb(const coll_ev *e)
{
    return e->type == TL_COLL_ALLGATHER ? e->out_mb : e->in_mb;
}

/* nccl_implicit_sync's rows [0, ns) in nparts ranges: their number cells
 * (first marked missing), sync metrics and sync_wait entries (each row's
 * own cells and entries only, so ranges run on threads at once; the text
 * cells are the caller's meanwhile). */
typedef struct implicit_part {
    coll_run *run;
    tl_table *t;
    size_t c_gs, c_in, c_on, c_inmb, c_onmb, c_full, c_lat, c_sks, c_ear, c_avg, c_ske, c_abw, c_bbw;
    size_t c_rank0, c_wait0;
    size_t ns, nparts;
} implicit_part;

/* Range k of the rows (tl_par_for). */
static void implicit_rows(void *ctx, size_t k)
{
    const implicit_part *p = ctx;
    coll_run *run = p->run;
    tl_table *t = p->t;
    size_t N = run->world, cap = 0;
    double *ts = NULL, *dur = NULL, *wait = NULL;
    int *rk = NULL;
    size_t lo = p->ns * k / p->nparts, hi = p->ns * (k + 1) / p->nparts;
    for (size_t c = 0; c < t->ncols; c++)
        if (t->cols[c].type != TL_STR) tl_table_clear_rows(t, c, lo, hi);
    for (size_t i = lo * N; i < hi * N; i++) run->sync_wait[i] = NAN;
    for (size_t i = lo; i < hi; i++) {
        const coll_group *G = &run->groups[run->sync_g[i]];
        if (G->n > cap) {
            cap = G->n;
            ts = tl_xrealloc(ts, cap * sizeof *ts);
            dur = tl_xrealloc(dur, cap * sizeof *dur);
            wait = tl_xrealloc(wait, cap * sizeof *wait);
            rk = tl_xrealloc(rk, cap * sizeof *rk);
        }
        for (size_t k = 0; k < G->n; k++) ts[k] = G->ev[k]->ts, dur[k] = G->ev[k]->dur, rk[k] = G->ev[k]->rank;
        tl_coll_sync *m = &run->sync_m[i];
        tl_coll_sync_metrics(ts, dur, rk, G->n, wait, m);
        const coll_ev *e = G->ev[0]; /* metadata agree (or the first rank's win) */
        coll_set_i64(t, p->c_gs, i, e->group_size);
        coll_set_i64(t, p->c_in, i, e->in_nelems);
        coll_set_i64(t, p->c_on, i, e->out_nelems);
        coll_set_f64(t, p->c_inmb, i, e->in_mb);
        coll_set_f64(t, p->c_onmb, i, e->out_mb);
        double full = full_mb(e);
        coll_set_f64(t, p->c_full, i, full);
        coll_set_f64(t, p->c_lat, i, m->comm_latency);
        coll_set_f64(t, p->c_sks, i, m->skew_start);
        tl_table_set_i64(t, p->c_ear, i, m->earliest_rank);
        coll_set_f64(t, p->c_avg, i, m->avg_wait);
        coll_set_f64(t, p->c_ske, i, m->skew_end);
        double abw = NAN, bbw = NAN;
        if (e->group_size != COLL_NONE && !isnan(full)) {
            abw = tl_coll_algo_bw(full, m->comm_latency);
            bbw = abw * tl_coll_busbw_factor(e->type, e->group_size);
        }
        coll_set_f64(t, p->c_abw, i, abw);
        coll_set_f64(t, p->c_bbw, i, bbw);
        for (size_t k = 0; k < G->n; k++) {
            size_t r = (size_t)rk[k];
            tl_table_set_f64(t, p->c_rank0 + 2 * r, i, ts[k]);
            tl_table_set_f64(t, p->c_rank0 + 2 * r + 1, i, dur[k]);
            tl_table_set_f64(t, p->c_wait0 + r, i, wait[k]);
            run->sync_wait[i * N + r] = wait[k];
        }
    }
    free(ts), free(dur), free(wait), free(rk);
}

/* Every range, on up to nparts threads (a thread beside the caller's). */
static void *implicit_all_rows(void *arg)
{
    implicit_part *p = arg;
    tl_par_for(p->nparts, (int)p->nparts, NULL, implicit_rows, p);
    return NULL;
}

#define IMPLICIT_ROWS_PER_THREAD 2048 /* below this a thread costs more than it saves */

int coll_sheet_implicit(coll_run *run, tl_table **out, tl_err *err)
{
    *out = NULL;
    size_t N = run->world;
    /* which groups take part */
    run->sync_g = tl_xmalloc((run->ngroups ? run->ngroups : 1) * sizeof *run->sync_g);
    run->nsync = 0;
    for (size_t g = 0; g < run->ngroups; g++) {
        const coll_group *G = &run->groups[g];
        tl_coll_type ty = G->ev[0]->type;
        int keep = tl_coll_type_is_implicit_sync(ty) || (run->simplified && ty == TL_COLL_UNKNOWN);
        if (!keep) continue;
        int rc = coll_check_meta(run, G, 0, err);
        if (rc) return rc;
        run->sync_g[run->nsync++] = g;
    }
    size_t ns = run->nsync;
    run->sync_m = tl_xcalloc(ns ? ns : 1, sizeof *run->sync_m);
    size_t nw = ns * N;
    run->sync_wait = tl_xmalloc((nw ? nw : 1) * sizeof *run->sync_wait);

    tl_table *t = tl_table_new("nccl_implicit_sync");
    size_t c_cid = coll_col_str(t, "collective_id"), c_pgn = coll_col_str(t, "Process Group Name"),
           c_pgr = coll_col_str(t, "Process Group Ranks"), c_cn = coll_col_str(t, "Collective name"),
           c_gs = coll_col_i64(t, "Group size"), c_dt = coll_col_str(t, "dtype"),
           c_in = coll_col_i64(t, "In msg nelems"), c_on = coll_col_i64(t, "Out msg nelems"),
           c_inmb = coll_col_f64(t, "In msg size (MB)"), c_onmb = coll_col_f64(t, "Out msg size (MB)"),
           c_full = coll_col_f64(t, "Full msg size (MB)"), c_lat = coll_col_f64(t, "comm_latency"),
           c_sks = coll_col_f64(t, "skew in start time"), c_ear = coll_col_i64(t, "earliest arrival rank"),
           c_avg = coll_col_f64(t, "avg_wait_time"), c_ske = coll_col_f64(t, "skew in end time"),
           c_abw = coll_col_f64(t, "algo bw (GB/s)"), c_bbw = coll_col_f64(t, "bus bw (GB/s)");
    size_t c_rank0 = t->ncols;
    char name[64];
    for (size_t r = 0; r < N; r++) {
        snprintf(name, sizeof name, "rank_%zu_ts", r);
        coll_col_f64(t, name);
        snprintf(name, sizeof name, "rank_%zu_dur", r);
        coll_col_f64(t, name);
    }
    size_t c_wait0 = t->ncols;
    for (size_t r = 0; r < N; r++) {
        snprintf(name, sizeof name, "rank_%zu_wait_time", r);
        coll_col_f64(t, name);
    }
    tl_table_set_nrows_uncleared(t, ns);
    t->cols[c_gs].as_float = run->miss_gs;
    t->cols[c_in].as_float = run->miss_in;
    t->cols[c_on].as_float = run->miss_on;
    /* the number cells and metrics by row ranges on threads, while this
     * thread sets the text cells (the table's arena is this thread's) */
    implicit_part part = {.run = run, .t = t, .c_gs = c_gs, .c_in = c_in, .c_on = c_on, .c_inmb = c_inmb,
                          .c_onmb = c_onmb, .c_full = c_full, .c_lat = c_lat, .c_sks = c_sks, .c_ear = c_ear,
                          .c_avg = c_avg, .c_ske = c_ske, .c_abw = c_abw, .c_bbw = c_bbw, .c_rank0 = c_rank0,
                          .c_wait0 = c_wait0, .ns = ns};
    long cpus = run->o->max_workers == 1 ? 1 : sysconf(_SC_NPROCESSORS_ONLN);
    part.nparts = ns / IMPLICIT_ROWS_PER_THREAD + 1;
    if (cpus > 0 && part.nparts > (size_t)cpus) part.nparts = (size_t)cpus;
    coll_job rows;
    coll_job_start(&rows, cpus > 1, implicit_all_rows, &part);
    for (size_t c = 0; c < t->ncols; c++) /* a missing text is a cell left unset */
        if (t->cols[c].type == TL_STR) tl_table_clear_rows(t, c, 0, ns);
    pcache pc = {0};
    for (size_t i = 0; i < ns; i++) {
        const coll_group *G = &run->groups[run->sync_g[i]];
        const coll_ev *e = G->ev[0]; /* metadata agree (or the first rank's win) */
        tl_table_set_str(t, c_cid, i, G->cid); /* a group's own: no text to share */
        set_str_pc(t, c_pgn, i, e->pg_name, &pc);
        set_str_pc(t, c_pgr, i, e->pg_ranks, &pc);
        set_str_pc(t, c_cn, i, e->coll_name, &pc);
        set_str_pc(t, c_dt, i, e->dtype, &pc);
    }
    pc_free(&pc);
    coll_job_join(&rows);
    *out = t;
    return 0;
}

/* ---- nccl_summary_implicit_sync (§3.6) ------------------------------------------------- */

typedef struct skey {
    const char *cn, *dt;   /* "Unknown" for missing */
    int64_t nel;           /* COLL_NONE -> "Unknown" */
} skey;

static int skey_cmp(const skey *a, const skey *b)
{
    int c = strcmp(a->cn, b->cn);
    if (c) return c;
    if ((c = strcmp(a->dt, b->dt))) return c;
    return i64_cmp(a->nel, b->nel); /* numbers before "Unknown" */
}

static int skey_idx_cmp(const void *ctx, size_t a, size_t b)
{
    const skey *k = ctx;
    return skey_cmp(&k[a], &k[b]);
}

static void set_as_float(tl_table *t, size_t c) { t->cols[c].as_float = 1; }

/* Groups rows 0..n by key order; returns group id per row (dense, in
 * ascending key order) and the number of groups. */
static size_t group_rows(size_t n, idx_cmp cmp, const void *ctx, size_t *gid, size_t **first_out)
{
    size_t *idx = tl_xmalloc((n ? n : 1) * sizeof *idx);
    for (size_t i = 0; i < n; i++) idx[i] = i;
    sort_idx(idx, n, cmp, ctx);
    size_t ng = 0;
    size_t *first = tl_xmalloc((n ? n : 1) * sizeof *first);
    for (size_t i = 0; i < n; i++) {
        if (i == 0 || cmp(ctx, idx[i - 1], idx[i]) != 0) first[ng++] = idx[i];
        gid[idx[i]] = ng - 1;
    }
    free(idx);
    *first_out = first;
    return ng;
}

/* group_rows for keys whose texts are interned (coll_match: equal texts
 * share a pointer), given a hash of a row's key consistent with cmp == 0:
 * rows are grouped through a hash table and only the groups' first rows
 * sorted, into the same numbering (key order) and first rows. nccl_long's
 * summary groups 267k rows of the 8 x 1 GB corpus into a few dozen; the
 * merge sort of every row was ~70 ms. */
typedef struct rep_ctx {
    idx_cmp cmp;
    const void *ctx;
    const size_t *rep;
} rep_ctx;
static int rep_cmp(const void *c, size_t a, size_t b)
{
    const rep_ctx *r = c;
    return r->cmp(r->ctx, r->rep[a], r->rep[b]);
}
static size_t group_rows_hashed(size_t n, idx_cmp cmp, uint64_t (*hash)(const void *ctx, size_t i), const void *ctx,
                                size_t *gid, size_t **first_out)
{
    tl_hidx idx; /* row hash -> group */
    tl_hidx_init(&idx, 64);
    size_t *rep = tl_xmalloc((n ? n : 1) * sizeof *rep), np = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t h = hash(ctx, i);
        size_t q = tl_hidx_home(&idx, h);
        while (idx.ids[q] && !(idx.hashes[q] == h && cmp(ctx, rep[idx.ids[q] - 1], i) == 0)) q = tl_hidx_next(&idx, q);
        if (idx.ids[q]) {
            gid[i] = idx.ids[q] - 1;
        } else { /* rows ascend: the group's first row */
            gid[i] = np;
            rep[np] = i;
            tl_hidx_set(&idx, q, h, (uint32_t)np++);
        }
    }
    tl_hidx_free(&idx);
    size_t *ord = tl_xmalloc((np ? np : 1) * sizeof *ord), *num = tl_xmalloc((np ? np : 1) * sizeof *num);
    for (size_t g = 0; g < np; g++) ord[g] = g;
    rep_ctx rc = {cmp, ctx, rep};
    sort_idx(ord, np, rep_cmp, &rc);
    size_t *first = tl_xmalloc((np ? np : 1) * sizeof *first);
    for (size_t k = 0; k < np; k++) num[ord[k]] = k, first[k] = rep[ord[k]];
    for (size_t i = 0; i < n; i++) gid[i] = num[gid[i]];
    free(ord);
    free(num);
    free(rep);
    *first_out = first;
    return np;
}

/* Members of each group in row order: off[ng+1], mem[n]. */
static void group_members(size_t n, size_t ng, const size_t *gid, size_t **off_out, size_t **mem_out)
{
    size_t *off = tl_xcalloc(ng + 1, sizeof *off), *mem = tl_xmalloc((n ? n : 1) * sizeof *mem);
    for (size_t i = 0; i < n; i++) off[gid[i] + 1]++;
    for (size_t g = 0; g < ng; g++) off[g + 1] += off[g];
    size_t *pos = tl_xmalloc((ng ? ng : 1) * sizeof *pos);
    memcpy(pos, off, ng * sizeof *pos);
    for (size_t i = 0; i < n; i++) mem[pos[gid[i]]++] = i;
    free(pos);
    *off_out = off;
    *mem_out = mem;
}

tl_table *coll_sheet_summary_implicit(coll_run *run, const tl_table *sync)
{
    size_t n = sync->nrows;
    skey *keys = tl_xmalloc((n ? n : 1) * sizeof *keys);
    for (size_t i = 0; i < n; i++) {
        const coll_ev *e = run->groups[run->sync_g[i]].ev[0];
        keys[i].cn = e->coll_name ? e->coll_name : "Unknown";
        keys[i].dt = e->dtype ? e->dtype : "Unknown";
        keys[i].nel = e->in_nelems;
    }
    size_t *gid = tl_xmalloc((n ? n : 1) * sizeof *gid), *first, *off, *mem;
    size_t ng = group_rows(n, skey_idx_cmp, keys, gid, &first);
    group_members(n, ng, gid, &off, &mem);

    static const char *const METRICS[] = {"comm_latency", "skew in start time", "skew in end time",
                                          "algo bw (GB/s)", "bus bw (GB/s)"};
    long mcol[5];
    int use[5];
    for (int k = 0; k < 5; k++) {
        mcol[k] = tl_table_col(sync, METRICS[k]);
        use[k] = 1;
        if (k >= 3) { /* bandwidths only when not all NaN */
            use[k] = 0;
            for (size_t i = 0; i < n; i++)
                if (!isnan(sync->cols[mcol[k]].v.f[i])) { use[k] = 1; break; }
        }
    }
    int any_unknown_nel = 0;
    for (size_t i = 0; i < n; i++)
        if (keys[i].nel == COLL_NONE) any_unknown_nel = 1;

    tl_table *t = tl_table_new("nccl_summary_implicit_sync");
    size_t c_cn = coll_col_str(t, "Collective name"), c_dt = coll_col_str(t, "dtype");
    size_t c_nel = any_unknown_nel ? coll_col_str(t, "In msg nelems") : coll_col_i64(t, "In msg nelems");
    size_t c_pgn = coll_col_str(t, "Process Group Name"), c_gs = coll_col_i64(t, "Group size"),
           c_full = coll_col_f64(t, "Full msg size (MB)");
    if (run->miss_gs) set_as_float(t, c_gs);
    if (run->miss_in && !any_unknown_nel) set_as_float(t, c_nel);
    size_t c_m0 = t->ncols;
    char name[128];
    for (int k = 0; k < 5; k++) {
        if (!use[k]) continue;
        for (size_t a = 0; a < run->nagg; a++) {
            snprintf(name, sizeof name, "%s_%s", METRICS[k], run->agg[a]);
            if (!strcmp(run->agg[a], "count")) coll_col_i64(t, name);
            else coll_col_f64(t, name);
        }
    }
    size_t c_cnt = coll_col_i64(t, "count"), c_tot = coll_col_f64(t, "Total comm latency (ms)");
    tl_table_set_nrows(t, ng);
    double *scratch = tl_xmalloc((n ? n : 1) * sizeof *scratch);
    double *total = tl_xmalloc((ng ? ng : 1) * sizeof *total);
    long c_full_src = tl_table_col(sync, "Full msg size (MB)"), c_pgn_src = tl_table_col(sync, "Process Group Name"),
         c_gs_src = tl_table_col(sync, "Group size");
    for (size_t g = 0; g < ng; g++) {
        const skey *k = &keys[first[g]];
        tl_table_set_str(t, c_cn, g, k->cn);
        tl_table_set_str(t, c_dt, g, k->dt);
        if (any_unknown_nel) {
            char b[48];
            if (k->nel == COLL_NONE) tl_table_set_str(t, c_nel, g, "Unknown");
            else if (run->miss_in) tl_fmt_pyfloat((double)k->nel, b), tl_table_set_str(t, c_nel, g, b);
            else snprintf(b, sizeof b, "%lld", (long long)k->nel), tl_table_set_str(t, c_nel, g, b);
        } else {
            tl_table_set_i64(t, c_nel, g, k->nel);
        }
        size_t m0 = off[g], m1 = off[g + 1];
        /* firsts: the first non-missing value in row order */
        for (size_t j = m0; j < m1; j++)
            if (sync->cols[c_pgn_src].v.s[mem[j]]) { tl_table_set_str(t, c_pgn, g, sync->cols[c_pgn_src].v.s[mem[j]]); break; }
        for (size_t j = m0; j < m1; j++)
            if (!tl_table_is_missing(sync, (size_t)c_gs_src, mem[j])) { tl_table_set_i64(t, c_gs, g, sync->cols[c_gs_src].v.i[mem[j]]); break; }
        for (size_t j = m0; j < m1; j++)
            if (!isnan(sync->cols[c_full_src].v.f[mem[j]])) { tl_table_set_f64(t, c_full, g, sync->cols[c_full_src].v.f[mem[j]]); break; }
        size_t c = c_m0;
        for (int kk = 0; kk < 5; kk++) {
            if (!use[kk]) continue;
            for (size_t a = 0; a < run->nagg; a++, c++) {
                for (size_t j = m0; j < m1; j++) scratch[j - m0] = sync->cols[mcol[kk]].v.f[mem[j]];
                double v = coll_agg(run->agg[a], scratch, m1 - m0, m1 - m0);
                if (t->cols[c].type == TL_I64) tl_table_set_i64(t, c, g, (int64_t)v);
                else coll_set_f64(t, c, g, v);
            }
        }
        tl_table_set_i64(t, c_cnt, g, (int64_t)(m1 - m0));
        for (size_t j = m0; j < m1; j++) scratch[j - m0] = sync->cols[mcol[0]].v.f[mem[j]];
        /* the reference's `lambda x: x.sum() / 1000`: Series.sum, NumPy's
         * pairwise sum (not the cython groupby's Kahan sum) */
        total[g] = tl_sum_pairwise_skipna(scratch, m1 - m0) / 1000;
        tl_table_set_f64(t, c_tot, g, total[g]);
    }
    size_t *perm = tl_xmalloc((ng ? ng : 1) * sizeof *perm);
    for (size_t g = 0; g < ng; g++) perm[g] = g;
    coll_sort_desc(perm, ng, total);
    tl_table_permute(t, perm, ng);
    free(perm), free(total), free(scratch), free(keys), free(gid), free(first), free(off), free(mem);
    return t;
}

/* ---- nccl_summary_long (§3.6) --------------------------------------------------------- */

static int long_key_cmp(const void *ctx, size_t a, size_t b)
{
    coll_ev *const *all = ctx;
    const coll_ev *x = all[a], *y = all[b];
    int c;
    if (x->rank != y->rank) return x->rank < y->rank ? -1 : 1;
    if ((c = str_cmp(x->pg_name, y->pg_name))) return c;
    if ((c = str_cmp(x->pg_ranks, y->pg_ranks))) return c;
    if ((c = str_cmp(x->coll_name, y->coll_name))) return c;
    if ((c = i64_cmp(x->group_size, y->group_size))) return c;
    if ((c = str_cmp(x->dtype, y->dtype))) return c;
    if ((c = i64_cmp(x->in_nelems, y->in_nelems))) return c;
    if ((c = i64_cmp(x->out_nelems, y->out_nelems))) return c;
    if ((c = str_cmp(x->in_split, y->in_split))) return c;
    if ((c = str_cmp(x->out_split, y->out_split))) return c;
    return i64_cmp(x->stream, y->stream);
}

static uint64_t long_key_hash(const void *ctx, size_t i)
{
    const coll_ev *e = ((coll_ev *const *)ctx)[i];
    const uint64_t k[] = {(uint64_t)e->rank,        (uintptr_t)e->pg_name,     (uintptr_t)e->pg_ranks,
                          (uintptr_t)e->coll_name,  (uint64_t)e->group_size,   (uintptr_t)e->dtype,
                          (uint64_t)e->in_nelems,   (uint64_t)e->out_nelems,   (uintptr_t)e->in_split,
                          (uintptr_t)e->out_split,  (uint64_t)e->stream};
    uint64_t h = 0;
    for (size_t q = 0; q < sizeof k / sizeof *k; q++) h = tl_mix64(h ^ k[q]);
    return h;
}

tl_table *coll_sheet_summary_long(coll_run *run)
{
    /* rows with any missing key drop out */
    coll_ev **rows = tl_xmalloc((run->nall ? run->nall : 1) * sizeof *rows);
    size_t n = 0;
    for (size_t i = 0; i < run->nall; i++) {
        coll_ev *e = run->all[i];
        if (!e->pg_name || !e->pg_ranks || !e->coll_name || e->group_size == COLL_NONE || !e->dtype ||
            e->in_nelems == COLL_NONE || e->out_nelems == COLL_NONE || !e->in_split || !e->out_split ||
            e->stream == COLL_NONE)
            continue;
        rows[n++] = e;
    }
    size_t *gid = tl_xmalloc((n ? n : 1) * sizeof *gid), *first, *off, *mem;
    size_t ng = group_rows_hashed(n, long_key_cmp, long_key_hash, rows, gid, &first);
    group_members(n, ng, gid, &off, &mem);
    tl_table *t = tl_table_new("nccl_summary_long");
    size_t c_rank = coll_col_i64(t, "rank"), c_pgn = coll_col_str(t, "Process Group Name"),
           c_pgr = coll_col_str(t, "Process Group Ranks"), c_cn = coll_col_str(t, "Collective name"),
           c_gs = coll_col_i64(t, "Group size"), c_dt = coll_col_str(t, "dtype"),
           c_in = coll_col_i64(t, "In msg nelems"), c_on = coll_col_i64(t, "Out msg nelems"),
           c_is = coll_col_str(t, "In split size"), c_os = coll_col_str(t, "Out split size"),
           c_st = coll_col_i64(t, "stream"), c_inmb = coll_col_f64(t, "In msg size (MB)_first"),
           c_onmb = coll_col_f64(t, "Out msg size (MB)_first"), c_sum = coll_col_f64(t, "dur_sum"),
           c_mean = coll_col_f64(t, "dur_mean"), c_std = coll_col_f64(t, "dur_std"),
           c_min = coll_col_f64(t, "dur_min"), c_max = coll_col_f64(t, "dur_max"),
           c_cnt = coll_col_i64(t, "operation_count");
    /* pandas: an int column with a missing cell anywhere is float before grouping */
    if (run->miss_gs) set_as_float(t, c_gs);
    if (run->miss_in) set_as_float(t, c_in);
    if (run->miss_on) set_as_float(t, c_on);
    if (run->miss_st) set_as_float(t, c_st);
    tl_table_set_nrows(t, ng);
    double *scratch = tl_xmalloc((n ? n : 1) * sizeof *scratch), *sums = tl_xmalloc((ng ? ng : 1) * sizeof *sums);
    for (size_t g = 0; g < ng; g++) {
        const coll_ev *e = rows[first[g]];
        tl_table_set_i64(t, c_rank, g, e->rank);
        tl_table_set_str(t, c_pgn, g, e->pg_name);
        tl_table_set_str(t, c_pgr, g, e->pg_ranks);
        tl_table_set_str(t, c_cn, g, e->coll_name);
        tl_table_set_i64(t, c_gs, g, e->group_size);
        tl_table_set_str(t, c_dt, g, e->dtype);
        tl_table_set_i64(t, c_in, g, e->in_nelems);
        tl_table_set_i64(t, c_on, g, e->out_nelems);
        tl_table_set_str(t, c_is, g, e->in_split);
        tl_table_set_str(t, c_os, g, e->out_split);
        tl_table_set_i64(t, c_st, g, e->stream);
        size_t m0 = off[g], m1 = off[g + 1], m = m1 - m0;
        for (size_t j = m0; j < m1; j++) scratch[j - m0] = rows[mem[j]]->in_mb;
        coll_set_f64(t, c_inmb, g, coll_agg("first", scratch, m, m));
        for (size_t j = m0; j < m1; j++) scratch[j - m0] = rows[mem[j]]->out_mb;
        coll_set_f64(t, c_onmb, g, coll_agg("first", scratch, m, m));
#define DUR_AGG(col, a)                                                              \
    do {                                                                             \
        for (size_t j = m0; j < m1; j++) scratch[j - m0] = rows[mem[j]]->dur;       \
        double v_ = coll_agg(a, scratch, m, m);                                      \
        coll_set_f64(t, col, g, v_);                                                 \
        if (col == c_sum) sums[g] = v_;                                              \
    } while (0)
        DUR_AGG(c_sum, "sum");
        DUR_AGG(c_mean, "mean");
        DUR_AGG(c_std, "std");
        DUR_AGG(c_min, "min");
        DUR_AGG(c_max, "max");
#undef DUR_AGG
        tl_table_set_i64(t, c_cnt, g, (int64_t)m);
    }
    size_t *perm = tl_xmalloc((ng ? ng : 1) * sizeof *perm);
    for (size_t g = 0; g < ng; g++) perm[g] = g;
    coll_sort_desc(perm, ng, sums);
    tl_table_permute(t, perm, ng);
    free(perm), free(scratch), free(sums), free(rows), free(gid), free(first), free(off), free(mem);
    return t;
}

/* ---- straggler_summary (§3.6) ---------------------------------------------------------- */

tl_table *coll_sheet_straggler(coll_run *run)
{
    size_t N = run->world, ns = run->nsync;
    tl_table *t = tl_table_new("straggler_summary");
    size_t c_rank = coll_col_i64(t, "rank"), c_tw = coll_col_f64(t, "total_wait_time_us"),
           c_mw = coll_col_f64(t, "mean_wait_time_us"), c_last = coll_col_i64(t, "times_arrived_last"),
           c_first = coll_col_i64(t, "times_arrived_first"), c_pct = coll_col_f64(t, "pct_arrived_last"),
           c_num = coll_col_i64(t, "num_collectives"), c_dur = coll_col_f64(t, "total_nccl_dur_us");
    double *w = tl_xmalloc((ns ? ns : 1) * sizeof *w);
    double *tw = tl_xmalloc(N * sizeof *tw);
    size_t nrows = 0;
    for (size_t r = 0; r < N; r++) {
        size_t m = 0;
        int64_t last = 0, first = 0;
        for (size_t i = 0; i < ns; i++) {
            double x = run->sync_wait[i * N + r];
            if (isnan(x)) continue;
            w[m++] = x;
            if (run->sync_m[i].last_rank == (int)r) last++;
            if (run->sync_m[i].earliest_rank == (int)r) first++;
        }
        if (!m) continue;
        size_t row = tl_table_add_row(t);
        double total = tl_sum_kahan(w, m);
        tw[row] = tl_coll_round(total, 1);
        tl_table_set_i64(t, c_rank, row, (int64_t)r);
        tl_table_set_f64(t, c_tw, row, tw[row]);
        tl_table_set_f64(t, c_mw, row, tl_coll_round(total / (double)m, 1));
        tl_table_set_i64(t, c_last, row, last);
        tl_table_set_i64(t, c_first, row, first);
        /* over every implicit-sync collective, the rank's own or not (the
         * reference's num_collectives is the sheet's row count) */
        tl_table_set_f64(t, c_pct, row, tl_coll_round(100.0 * (double)last / (double)ns, 1));
        tl_table_set_i64(t, c_num, row, (int64_t)ns);
        const coll_rank *cr = &run->ranks[r];
        double *d = tl_xmalloc((cr->n ? cr->n : 1) * sizeof *d);
        for (size_t i = 0; i < cr->n; i++) d[i] = cr->ev[i].dur;
        tl_table_set_f64(t, c_dur, row, tl_coll_round(tl_sum_kahan(d, cr->n), 1));
        free(d);
        nrows++;
    }
    /* total wait ascending: the straggler (who waits least) first */
    size_t *perm = tl_xmalloc((nrows ? nrows : 1) * sizeof *perm);
    for (size_t i = 0; i < nrows; i++) perm[i] = i;
    tl_pd_sort_values(perm, nrows, tw, 1);
    tl_table_permute(t, perm, nrows);
    free(perm), free(w), free(tw);
    return t;
}
