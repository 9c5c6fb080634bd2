/* corpus_report.c — the per-configuration workbook of spec formats.md §4.4:
 * per-rank PyTorch reports and column scans on worker threads, pooled into
 * the generator's sheets in its order, then the collective analysis when
 * the configuration has more than one rank. The sheets follow the
 * reference generator's code (branch feat/gen_report_node_replay_bench);
 * docs/CONFORMANCE.md (Multi-rank) lists its rules and our differences.
 * The op-group sheets are built in corpus_perf.c. */
#include "query/multirank/multirank.h"
#include "query/multirank/collective_internal.h"
#include "query/multirank/corpus_internal.h"
#include "query/multirank/partials_internal.h"
#include "query/pytorch/pytorch_internal.h"
#include "query/pytorch/pytorch.h"
#include "query/core/stats.h"
#include "query/core/trace.h"
#include "ingest/schema.h"
#include "base/profile.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

int tl_corpus_workers(int max_workers)
{
    if (max_workers > 0) return max_workers;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    return cpus < 1 ? 1 : cpus > 4 ? 4 : (int)cpus;
}

void tl_corpus_opts_default(tl_corpus_opts *o)
{
    memset(o, 0, sizeof *o);
    o->imbalance = 1;
    o->short_us = 10;
}

void tl_corpus_sheets_free(tl_corpus_sheets *s)
{
    tl_tables_free(s->v, s->n);
    memset(s, 0, sizeof *s);
}

tl_table *tl_corpus_sheet(const tl_corpus_sheets *s, const char *name) { return tl_tables_find(s->v, s->n, name); }

void tl_corpus_stats_free(tl_corpus_stats *s)
{
    if (s->have_coll) tl_coll_summary_free(&s->coll);
    memset(s, 0, sizeof *s);
}

/* ---- small helpers ------------------------------------------------------------ */

typedef TL_VEC(double) dvec;

/* A keyed group of durations (µs) collected from one rank. */
typedef struct dgroup {
    const char *name, *cat;  /* in the rank's arena */
    dvec d;
    /* runtime groups keep only these (summarise), not every duration */
    int64_t cnt;
    double mn, mx, mean;
} dgroup;
typedef TL_VEC(dgroup) dgroups;

typedef struct namecount {
    const char *name;
    int64_t n;
} namecount;

/* ---- one rank ------------------------------------------------------------------------ */

typedef struct rank_out {
    int rank;
    int ok;                  /* the PyTorch report ran */
    char msg[512];           /* why not */
    tl_table *timeline, *ops;
    cp_rows perf[CP_NGROUPS]; /* op-group rows (corpus_perf.c), texts in arena */
    int64_t nk, nk_linked, nshort_linked, nshort_unlinked;
    dgroups unlinked;        /* unlinked GPU events by (name, cat) */
    dgroups cuda;            /* runtime/driver events by (name, cat) */
    TL_VEC(namecount) shortops;
    tl_arena arena;
    /* the rank's collective events for the cross-rank analysis (world > 1) */
    coll_rank coll;
    int coll_rc;
    tl_err coll_err;
    int coll_signaled;       /* counted off in coll_sync */
} rank_out;

/* Ranks whose collective events are not read yet. The cross-rank
 * collective analysis needs every rank's events, which a rank reads early
 * (before its op-group rows), so a worker left without ranks starts it
 * as soon as this reaches 0, beside the ranks still finishing, instead of
 * after all of them (the last ranks' tails left a core idle). */
typedef struct coll_sync {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    size_t pending;
    int claimed;             /* a worker runs (or ran) the analysis */
} coll_sync;

/* ro's collective events are read (or will never be): counts it off once. */
static void rank_coll_ready(rank_out *ro, coll_sync *cs)
{
    if (!cs || ro->coll_signaled) return;
    ro->coll_signaled = 1;
    pthread_mutex_lock(&cs->mu);
    if (--cs->pending == 0) pthread_cond_broadcast(&cs->cv);
    pthread_mutex_unlock(&cs->mu);
}

/* The groups of (name, cat), given as dictionary ids: one id per distinct
 * text, so grouping by the ids is grouping by the texts. A name's first
 * group is found by the name id alone (a name nearly always has one
 * category); other pairs go through a map of 8-byte keys. A rank has
 * ~10^6 runtime calls, so this runs per event. */
typedef struct gindex {
    tl_bmap m;
    int32_t *first; /* per name id: its first group, -1 none */
    TL_VEC(uint32_t) cat; /* per group: its category id */
    size_t nnames;
} gindex;

static void gindex_init(gindex *x, size_t nnames)
{
    memset(x, 0, sizeof *x);
    tl_bmap_init(&x->m, 2 * sizeof(uint32_t), 64);
    x->nnames = nnames;
    x->first = tl_xmalloc((nnames ? nnames : 1) * sizeof *x->first);
    for (size_t i = 0; i < nnames; i++) x->first[i] = -1;
}

static void gindex_free(gindex *x)
{
    tl_bmap_free(&x->m);
    free(x->first);
    tl_vec_free(&x->cat);
}

/* Adds dur to the group of (name, cat). */
static void collect(dgroups *gs, gindex *x, tl_arena *a, const tl_trace *t, uint32_t name, uint32_t cat,
                    double dur)
{
    size_t g;
    int32_t f = name < x->nnames ? x->first[name] : -1;
    if (f >= 0 && x->cat.v[f] == cat) {
        g = (size_t)f;
    } else {
        uint32_t key[2] = {name, cat};
        int isnew;
        size_t *slot = tl_bmap_put(&x->m, key, &isnew);
        if (isnew) {
            *slot = gs->n;
            dgroup d = {.name = tl_arena_strdup(a, tl_trace_str(t, name)), .cat = tl_arena_strdup(a, tl_trace_str(t, cat))};
            tl_vec_push(gs, d);
            tl_vec_push(&x->cat, cat);
            if (name < x->nnames && f < 0) x->first[name] = (int32_t)*slot;
        }
        g = *slot;
    }
    tl_vec_push(&gs->v[g].d, dur);
}

/* A rank's runtime groups reduced to what cuda_events_summary shows (the
 * sheet has per-rank columns only, nothing pooled): a runtime call per
 * kernel, so the durations of a large rank are megabytes held until the
 * workbook is built. Same statistics as computed from the vector later. */
static void summarise(dgroups *gs)
{
    for (size_t i = 0; i < gs->n; i++) {
        dgroup *g = &gs->v[i];
        double mn = g->d.v[0], mx = g->d.v[0];
        for (size_t k = 1; k < g->d.n; k++) {
            if (g->d.v[k] < mn) mn = g->d.v[k];
            if (g->d.v[k] > mx) mx = g->d.v[k];
        }
        g->cnt = (int64_t)g->d.n;
        g->mn = mn, g->mx = mx;
        g->mean = tl_mean_kahan(g->d.v, g->d.n);
        tl_vec_free(&g->d);
    }
}

static void scan_columns(const tl_trace *t, rank_out *ro, double short_us)
{
    int64_t short_ns = (int64_t)llround(short_us * 1000);
    gindex um, cm; /* unlinked and runtime groups by (name, cat) ids */
    gindex_init(&um, t->dict.n);
    gindex_init(&cm, t->dict.n);
    tl_bmap sm; /* short ops by name id */
    tl_bmap_init(&sm, sizeof(uint32_t), 64);
    for (size_t i = 0; i < t->n; i++) {
        int k = t->kind[i];
        if (tl_kind_is_runtime(k)) {
            collect(&ro->cuda, &cm, &ro->arena, t, t->name[i], t->cat[i], tl_trace_dur_us(t, i));
            continue;
        }
        if (!tl_kind_is_gpu(k)) continue;
        ro->nk++;
        int linked = tl_trace_ext_id(t, i) != TL_NONE; /* §4.4: linked = has an External id */
        int shrt = tl_trace_dur(t, i) < short_ns;
        if (linked) {
            ro->nk_linked++;
            ro->nshort_linked += shrt;
        } else {
            ro->nshort_unlinked += shrt;
            collect(&ro->unlinked, &um, &ro->arena, t, t->name[i], t->cat[i], tl_trace_dur_us(t, i));
        }
        /* the reference counts from get_df_kernels: category kernel only */
        if (shrt && k == TL_K_KERNEL && t->parent) {
            int32_t p = t->parent[i];
            int guard = 0;
            while (p >= 0 && t->kind[p] != TL_K_CPU_OP && guard++ < 1 << 20) p = t->parent[p];
            if (p >= 0) {
                uint32_t nm = t->name[p];
                int isnew;
                size_t *slot = tl_bmap_put(&sm, &nm, &isnew);
                if (isnew) {
                    *slot = ro->shortops.n;
                    namecount nc = {tl_arena_strdup(&ro->arena, tl_trace_str(t, nm)), 0};
                    tl_vec_push(&ro->shortops, nc);
                }
                ro->shortops.v[*slot].n++;
            }
        }
    }
    gindex_free(&um), gindex_free(&cm), tl_bmap_free(&sm);
    summarise(&ro->cuda);
}

/* Defined in query/pytorch/ops.c, collective_read.c and collective.c;
 * declared here rather than in pytorch_internal.h / collective_internal.h,
 * which were owned by other work when this was written (move them there). */
int pyt_sheet_ops_summary(pyt_ctx *c, tl_pyt_sheets *out, tl_err *err);
typedef const char *(*coll_args_fn)(void *ctx, uint32_t row, size_t *len);
int coll_read_trace(const tl_trace *t, int rank, coll_args_fn args, void *actx, coll_rank *cr, tl_err *err);
int coll_report_ranks(coll_rank *ranks, size_t world, const tl_coll_opts *o, tl_coll_sheets *out,
                      tl_coll_summary *summary, tl_err *err);

/* The events columns a rank is loaded with: tl_trace_load's without the
 * ones no part of the workbook reads (device, fwd_tid, grid, block,
 * launcher, parent_py: only with --include_call_stack / --detect_recompute,
 * correlation and linked: the collective scan copies them out for the scan
 * alone) and without the flows table (read by unified_perf_summary only),
 * its int64 columns but ts held narrow (TL_TC_NARROW, read through the
 * tl_trace_* accessors): 62 bytes an event where every column wide is
 * ~140. The pointers left out stay NULL; the sheet functions used here
 * never read them. Each column is decoded into a block of its own
 * (TL_TC_OWNED), freed by rank_trace_drop_columns: the reader's arena
 * would keep every column until the reader closes, and the rank's context
 * outlives the columns' last use. Plain malloc: corpus-report runs one arena without trimming
 * between ranks (cmd_corpus_report.c), so the next rank's columns and
 * arrays reuse these blocks instead of faulting fresh pages in (they were
 * mmap'd and unmapped per rank: 8 x 1 GB workbook median 2.36 -> 2.0 s,
 * peak RSS ~20 MiB lower). */
#define RANK_COLS                                                                                          \
    (TL_TC(UID) | TL_TC(TS) | TL_TC(DUR) | TL_TC(NAME) | TL_TC(CAT) | TL_TC(KIND) | TL_TC(PID) | TL_TC(TID) | \
     TL_TC(IDFLAGS) | TL_TC(EXTID) | TL_TC(STREAM) | TL_TC(SEQ) | TL_TC(INDIMS) | TL_TC(INTYPE) |             \
     TL_TC(INSTRIDES) | TL_TC(CONCRETE) | TL_TC(PARENT) | TL_TC_NARROW | TL_TC_OWNED)

typedef struct rank_trace {
    tl_trace *t;
} rank_trace;

static void rank_trace_drop_columns(rank_trace *rt)
{
    if (rt->t) tl_trace_drop_columns(rt->t);
}

static void rank_trace_free(rank_trace *rt)
{
    tl_trace_free(rt->t);
    rt->t = NULL;
}

static int load_rank_trace(tl_reader *r, uint64_t id, rank_trace *rt, tl_err *err)
{
    return tl_trace_load_cols(r, id, RANK_COLS, &rt->t, err);
}

static const char *coll_args(void *ctx, uint32_t row, size_t *len)
{
    return pyt_args(ctx, (int32_t)row, len);
}

/* The branch's NcclAnalyser reads only the kernels whose name contains
 * "nccl" (any case) and that have an External id (nccl_filter_event_fn);
 * the collective reader also takes other communication kernels and those
 * linked by correlation alone. Keeps cr's events that pass. */
static void branch_nccl_filter(const tl_trace *t, coll_rank *cr)
{
    size_t m = 0;
    for (size_t i = 0; i < cr->n; i++) {
        uint32_t row = cr->ev[i].row;
        if (row >= t->n || tl_trace_ext_id(t, row) == TL_NONE || !strcasestr(tl_trace_str(t, t->name[row]), "nccl")) continue;
        cr->ev[m++] = cr->ev[i];
    }
    if (m == cr->n) return;
    cr->n = m;
    coll_rank_prepare(cr); /* index_in_group among the events kept */
}

/* The part of the PyTorch report (pytorch/report.c) the workbook pools:
 * gpu_timeline and ops_summary, computed by the report's own sheet
 * functions over the same context, and the op-group rows (cp_collect)
 * over that context. ops_summary_by_category, ops_unique_args and unified_perf_summary
 * are not built (they were about half of a rank's report time, and the
 * workbook reads none of them). Every sort comparator on this path keeps
 * its state per thread, so ranks run in parallel.
 * With want_coll, the rank's collective events are read here too, before
 * the op-group rows: the report's args pass copies
 * the communication kernels' args out along with the ones it needs, so the
 * args column is decoded once per rank. */
static int rank_pytorch(rank_trace *rt, const tl_pyt_opts *po, const tl_catreg *cat, int coll_no,
                        rank_out *ro, int want_coll, coll_sync *cs, tl_pyt_sheets *out,
                        tl_err *err)
{
    const tl_trace *t = rt->t;
    memset(out, 0, sizeof *out);
    out->total_time_ms = NAN;
    double t0 = tl_now(), t1 = 0, t2 = 0, t3 = 0, t4 = 0;
    pyt_args_job *args = pyt_args_start(t, po);
    pyt_ctx c;
    int rc = pyt_ctx_init(&c, t, po, cat, err);
    c.args_job = args; /* freed with the context, also on failure */
    t1 = tl_now();
    int coll_done = 0;
    if (!rc) rc = pyt_sheet_gpu_timeline(&c, out, err);
    if (!rc && !c.gpu_only) {
        out->total_time_ms = c.total_time_ms;
        rc = pyt_sheet_ops_summary(&c, out, err);
        if (want_coll) {
            pyt_args_join(&c); /* the scan reads columns through the trace's reader */
            ro->coll_rc = coll_read_trace(t, coll_no, coll_args, &c, &ro->coll, &ro->coll_err);
            if (!ro->coll_rc) branch_nccl_filter(t, &ro->coll);
            coll_done = 1;
            rank_coll_ready(ro, cs);
        }
        t2 = tl_now();
        /* the op-group rows: the events with "Input Dims" of the groups' op
         * lists, with their models, kernel lists and busy times */
        if (!rc) cp_collect(&c, &ro->arena, ro->perf);
        t3 = tl_now();
        rank_trace_drop_columns(rt);
        t4 = tl_now();
    }
    if (rc) tl_pyt_sheets_free(out);
    pyt_ctx_free(&c);
    /* no report (no GPU events) or a GPU-only trace: read the collectives alone */
    if (want_coll && !coll_done) {
        ro->coll_rc = coll_read_trace(t, coll_no, NULL, NULL, &ro->coll, &ro->coll_err);
        if (!ro->coll_rc) branch_nccl_filter(t, &ro->coll);
    }
    tl_reader_drop_resident(t->reader);
    if (po->timing)
        fprintf(stderr, "corpus rank %d stages ms: ctx=%.1f timeline+ops+collectives=%.1f op_groups=%.1f "
                        "drop=%.1f free=%.1f\n",
                ro->rank, (t1 - t0) * 1e3, (t2 - t1) * 1e3, (t3 - t2) * 1e3, (t4 - t3) * 1e3, (tl_now() - t4) * 1e3);
    return rc;
}

static void rank_run(tl_store *s, uint64_t id, int coll_rank_no, rank_out *ro, const tl_corpus_opts *o,
                     coll_sync *cs, const tl_catreg *cat, int want_coll)
{
    tl_reader *r = NULL;
    rank_trace rt = {0};
    tl_err err = {0};
    int timing = o->timing;
    double t0 = tl_now();
    if (!tl_reader_open(s, &r, &err)) tl_reader_hold_pages(r, 1); /* dropped once, when it closes */
    if (!r || load_rank_trace(r, id, &rt, &err)) {
        snprintf(ro->msg, sizeof ro->msg, "%s", err.msg);
        if (want_coll) ro->coll_rc = err.code ? err.code : TL_ESTORE, ro->coll_err = err;
        tl_reader_close(r);
        rank_coll_ready(ro, cs);
        return;
    }
    double t1 = tl_now();
    const tl_trace *t = rt.t;
    scan_columns(t, ro, o->short_us);
    if (timing)
        fprintf(stderr, "corpus rank %d: load %.1f ms, scan %.1f ms\n", ro->rank, (t1 - t0) * 1e3,
                (tl_now() - t1) * 1e3);
    tl_pyt_opts po;
    tl_pyt_opts_default(&po);
    /* coll_analysis is not built (the collective analysis runs across
     * ranks), but with more than one rank the args pass copies the
     * communication kernels' args out for it (pyt_args_start) */
    po.disable_coll_analysis = !want_coll;
    po.categories = cat;
    po.quiet = 1;
    po.timing = o->timing;
    static const char *const NO_FAMILIES[] = {NULL}; /* the op groups come from cp_collect */
    po.perf_families = NO_FAMILIES;
    tl_pyt_sheets sh;
    int rc = rank_pytorch(&rt, &po, cat, coll_rank_no, ro, want_coll, cs, &sh, &err);
    if (rc) {
        snprintf(ro->msg, sizeof ro->msg, "%s", err.msg);
    } else {
        ro->ok = 1;
        for (size_t i = 0; i < sh.n; i++) {
            tl_table *x = sh.v[i];
            if (!strcmp(x->name, "gpu_timeline")) ro->timeline = x, sh.v[i] = NULL;
            else if (!strcmp(x->name, "ops_summary")) ro->ops = x, sh.v[i] = NULL;
        }
        tl_pyt_sheets_free(&sh);
    }
    rank_trace_free(&rt);
    tl_reader_close(r);
    rank_coll_ready(ro, cs); /* read at the end of rank_pytorch, or never */
}

static void rank_free(rank_out *ro)
{
    tl_table_free(ro->timeline);
    tl_table_free(ro->ops);
    for (int k = 0; k < CP_NGROUPS; k++) tl_vec_free(&ro->perf[k]);
    for (size_t i = 0; i < ro->unlinked.n; i++) tl_vec_free(&ro->unlinked.v[i].d);
    for (size_t i = 0; i < ro->cuda.n; i++) tl_vec_free(&ro->cuda.v[i].d);
    tl_vec_free(&ro->unlinked);
    tl_vec_free(&ro->cuda);
    tl_vec_free(&ro->shortops);
    tl_arena_free(&ro->arena);
    coll_rank_free(&ro->coll);
}

typedef struct pool {
    tl_store *s;
    const uint64_t *ids;
    size_t n;
    size_t lo, hi;           /* the ranks this process runs (all n but under MPI) */
    int partial;             /* other processes run the other ranks: no collective analysis here */
    rank_out *ro;
    const tl_corpus_opts *o;
    const tl_catreg *cat;
    int want_coll;
    atomic_size_t next;
    /* the collective analysis (want_coll), run by the first worker out of
     * ranks (collectives_when_read) */
    coll_sync cs;
    int coll_rc;
    tl_err coll_err;
    tl_coll_sheets coll;
    tl_coll_summary *coll_summary;
    double coll_seconds;
    double seconds_ranks; /* wall time of run_ranks */
} pool;

/* The cross-rank collective analysis over every rank's events (which it
 * takes from the ranks). */
static void run_collectives(pool *p)
{
    double t0 = tl_now();
    tl_prof_span sp;
    tl_prof_begin(&sp, "corpus: collective analysis", TL_PROF_SERIAL);
    static const char *const MEAN[] = {"mean"};
    tl_coll_opts co;
    tl_coll_opts_default(&co);
    co.agg = MEAN;
    co.nagg = 1;
    co.strict_metadata = 0; /* the generator's non-strict checks */
    co.imbalance = p->o->imbalance;
    co.max_workers = p->o->max_workers;
    co.quiet = p->o->quiet;
    co.timing = p->o->timing;
    for (size_t i = 0; i < p->n && !p->coll_rc; i++)
        if (p->ro[i].coll_rc) {
            p->coll_rc = p->ro[i].coll_rc;
            p->coll_err = p->ro[i].coll_err;
        }
    if (!p->coll_rc) {
        coll_rank *cr = tl_xcalloc(p->n, sizeof *cr);
        for (size_t i = 0; i < p->n; i++) cr[i] = p->ro[i].coll, memset(&p->ro[i].coll, 0, sizeof p->ro[i].coll);
        p->coll_rc = coll_report_ranks(cr, p->n, &co, &p->coll, p->coll_summary, &p->coll_err); /* consumes cr */
    }
    tl_prof_end(&sp);
    p->coll_seconds = tl_now() - t0;
}

/* Runs the collective analysis once every rank's events are read, unless
 * another worker took it. */
static void collectives_when_read(pool *p)
{
    coll_sync *cs = &p->cs;
    pthread_mutex_lock(&cs->mu);
    int mine = !cs->claimed;
    cs->claimed = 1;
    double t0 = tl_prof_wait_begin();
    while (mine && cs->pending) pthread_cond_wait(&cs->cv, &cs->mu);
    if (mine) tl_prof_wait_end(t0, TL_PROF_WAIT_WORKERS);
    pthread_mutex_unlock(&cs->mu);
    if (mine) run_collectives(p);
}

static void *worker(void *arg)
{
    pool *p = arg;
    for (;;) {
        size_t i = p->lo + atomic_fetch_add(&p->next, 1);
        if (i >= p->hi) break;
        tl_prof_span sp;
        tl_prof_begin(&sp, "corpus: rank report", TL_PROF_PARALLEL);
        rank_run(p->s, p->ids[i], (int)i, &p->ro[i], p->o, p->want_coll ? &p->cs : NULL, p->cat,
                 p->want_coll);
        tl_prof_end(&sp);
        /* no heap trim here: the next rank reuses what this one freed
         * (corpus-report runs all threads on one arena, cmd_corpus_report.c);
         * trimmed, every rank faulted its ~0.3 GB in again */
    }
    if (p->want_coll && !p->partial) collectives_when_read(p);
    return NULL;
}

/* ---- pooled sheets ------------------------------------------------------------------------ */

/* kernel_launchers: ops_summary of every rank pooled by name. */
typedef struct launcher {
    const char *name;
    int64_t count;
    double sum_us;
} launcher;

static tl_table *sheet_launchers(rank_out *ro, size_t n, launcher **out, size_t *nout)
{
    tl_smap m = {0};
    TL_VEC(launcher) L = {0};
    for (size_t r = 0; r < n; r++) {
        const tl_table *x = ro[r].ops;
        if (!x) continue;
        long cn = tl_table_col(x, "name"), cs = tl_table_col(x, "total_direct_kernel_time_sum"),
             cc = tl_table_col(x, "Count");
        if (cn < 0 || cs < 0 || cc < 0) continue;
        for (size_t i = 0; i < x->nrows; i++) {
            const char *name = x->cols[cn].v.s[i];
            if (!name) continue;
            int isnew;
            size_t *slot = tl_smap_put(&m, name, strlen(name), &isnew);
            if (isnew) {
                *slot = L.n;
                launcher l = {name, 0, 0};
                tl_vec_push(&L, l);
            }
            L.v[*slot].count += (int64_t)tl_table_num(x, (size_t)cc, i);
            L.v[*slot].sum_us += tl_table_num(x, (size_t)cs, i);
        }
    }
    tl_smap_free(&m);
    /* ms descending; ties by name */
    for (size_t i = 1; i < L.n; i++) {
        launcher x = L.v[i];
        size_t j = i;
        while (j > 0 && (L.v[j - 1].sum_us < x.sum_us ||
                         (L.v[j - 1].sum_us == x.sum_us && strcmp(L.v[j - 1].name, x.name) > 0)))
            L.v[j] = L.v[j - 1], j--;
        L.v[j] = x;
    }
    tl_table *t = tl_table_new("kernel_launchers");
    size_t c_n = tl_table_add_col(t, "name", TL_STR), c_c = tl_table_add_col(t, "count", TL_I64),
           c_ms = tl_table_add_col(t, "kernel_time_ms", TL_F64), c_p = tl_table_add_col(t, "pct", TL_F64),
           c_cp = tl_table_add_col(t, "cum_pct", TL_F64), c_avg = tl_table_add_col(t, "time_ms_avg", TL_F64),
           c_cavg = tl_table_add_col(t, "count_avg", TL_F64);
    tl_table_set_nrows(t, L.n);
    double tot = 0, cum = 0;
    for (size_t i = 0; i < L.n; i++) tot += L.v[i].sum_us / 1000;
    for (size_t i = 0; i < L.n; i++) {
        double ms = L.v[i].sum_us / 1000;
        tl_table_set_str(t, c_n, i, L.v[i].name);
        tl_table_set_i64(t, c_c, i, L.v[i].count);
        tl_table_set_f64(t, c_ms, i, ms);
        double pct = tot > 0 ? ms / tot * 100 : NAN;
        if (!isnan(pct)) tl_table_set_f64(t, c_p, i, pct), cum += pct, tl_table_set_f64(t, c_cp, i, cum);
        tl_table_set_f64(t, c_avg, i, ms / (double)n);
        tl_table_set_f64(t, c_cavg, i, (double)L.v[i].count / (double)n);
    }
    *out = L.v;
    *nout = L.n;
    return t;
}

static tl_table *sheet_timelines(rank_out *ro, size_t n, double *comm_avg_ms, double *memcpy_avg_ms)
{
    const tl_table *ref = NULL;
    for (size_t r = 0; r < n && !ref; r++) ref = ro[r].timeline;
    tl_table *t = tl_table_new("gpu_timelines");
    size_t c_type = tl_table_add_col(t, "type", TL_STR);
    *comm_avg_ms = *memcpy_avg_ms = NAN;
    if (!ref) return t;
    long rt = tl_table_col(ref, "type");
    tl_table_set_nrows(t, ref->nrows);
    for (size_t i = 0; i < ref->nrows; i++) tl_table_set_str(t, c_type, i, ref->cols[rt].v.s[i]);
    char name[64];
    size_t *ct = tl_xmalloc(n * sizeof *ct);
    for (size_t r = 0; r < n; r++) {
        snprintf(name, sizeof name, "time_ms_%d", ro[r].rank);
        ct[r] = tl_table_add_col(t, name, TL_F64);
        snprintf(name, sizeof name, "percent_%d", ro[r].rank);
        size_t cp = tl_table_add_col(t, name, TL_F64);
        const tl_table *x = ro[r].timeline;
        if (!x) continue;
        long xt = tl_table_col(x, "type"), xm = tl_table_col(x, "time ms"), xp = tl_table_col(x, "percent");
        for (size_t i = 0; i < t->nrows; i++)
            for (size_t j = 0; j < x->nrows; j++)
                if (x->cols[xt].v.s[j] && !strcmp(x->cols[xt].v.s[j], t->cols[c_type].v.s[i])) {
                    tl_table_set_f64(t, ct[r], i, tl_table_num(x, (size_t)xm, j));
                    tl_table_set_f64(t, cp, i, tl_table_num(x, (size_t)xp, j));
                    break;
                }
    }
    size_t c_avg = tl_table_add_col(t, "time_ms_avg", TL_F64), c_std = tl_table_add_col(t, "time_ms_std", TL_F64);
    double *v = tl_xmalloc((n + 1) * sizeof *v);
    for (size_t i = 0; i < t->nrows; i++) {
        size_t m = 0;
        for (size_t r = 0; r < n; r++) {
            double x = t->cols[ct[r]].v.f[i];
            if (!isnan(x)) v[m++] = x;
        }
        if (!m) continue;
        double avg = tl_mean_pairwise(v, m);
        tl_table_set_f64(t, c_avg, i, avg);
        /* QUIRK (§4.4): the std runs over the rank columns and the avg column */
        v[m++] = avg;
        tl_table_set_f64(t, c_std, i, tl_std_pairwise(v, m, 1));
        const char *ty = t->cols[c_type].v.s[i];
        if (ty && !strcmp(ty, "total_comm_time")) *comm_avg_ms = avg;
        if (ty && !strcmp(ty, "total_memcpy_time")) *memcpy_avg_ms = avg;
    }
    free(v);
    free(ct);
    return t;
}

static tl_table *sheet_linked(rank_out *ro, size_t n)
{
    tl_table *t = tl_table_new("linked_and_short_kernels");
    size_t c0 = tl_table_add_col(t, "rank", TL_I64), c1 = tl_table_add_col(t, "num_kernel_events", TL_I64),
           c2 = tl_table_add_col(t, "num_kernel_events_linked", TL_I64),
           c3 = tl_table_add_col(t, "num_kernel_events_unlinked", TL_I64),
           c4 = tl_table_add_col(t, "num_short_kernel_events_linked", TL_I64),
           c5 = tl_table_add_col(t, "num_short_kernel_events_unlinked", TL_I64);
    tl_table_set_nrows(t, n);
    for (size_t r = 0; r < n; r++) {
        tl_table_set_i64(t, c0, r, ro[r].rank);
        tl_table_set_i64(t, c1, r, ro[r].nk);
        tl_table_set_i64(t, c2, r, ro[r].nk_linked);
        tl_table_set_i64(t, c3, r, ro[r].nk - ro[r].nk_linked);
        tl_table_set_i64(t, c4, r, ro[r].nshort_linked);
        tl_table_set_i64(t, c5, r, ro[r].nshort_unlinked);
    }
    return t;
}

static int nc_cmp(const char *an, const char *ac, const char *bn, const char *bc)
{
    int c = strcmp(an, bn);
    return c ? c : strcmp(ac, bc);
}

static tl_table *sheet_unlinked(rank_out *ro, size_t n)
{
    /* every rank's unlinked events pooled by (name, cat), rank order */
    tl_smap m = {0};
    TL_VEC(dgroup) G = {0};
    tl_buf key = {0};
    for (size_t r = 0; r < n; r++)
        for (size_t i = 0; i < ro[r].unlinked.n; i++) {
            const dgroup *g = &ro[r].unlinked.v[i];
            key.n = 0;
            tl_buf_printf(&key, "%s\x1f%s", g->name, g->cat);
            tl_buf_putc(&key, 0);
            size_t *slot = tl_smap_get(&m, key.p, strlen(key.p));
            if (!slot) {
                int isnew;
                slot = tl_smap_put(&m, tl_xstrdup(key.p), strlen(key.p), &isnew);
                *slot = G.n;
                dgroup ng = {g->name, g->cat, {0}};
                tl_vec_push(&G, ng);
            }
            dvec *d = &G.v[*slot].d;
            for (size_t k = 0; k < g->d.n; k++) tl_vec_push(d, g->d.v[k]);
        }
    tl_buf_free(&key);
    if (!G.n) {
        for (size_t i = 0; i < m.cap; i++) free((void *)m.keys[i]);
        tl_smap_free(&m);
        return NULL;
    }
    /* groupby's ascending (name, cat), then sort_values(count, descending):
     * pandas' unstable sort */
    size_t *idx = tl_xmalloc(G.n * sizeof *idx);
    for (size_t i = 0; i < G.n; i++) idx[i] = i;
    for (size_t i = 1; i < G.n; i++)
        for (size_t j = i; j > 0 && nc_cmp(G.v[idx[j - 1]].name, G.v[idx[j - 1]].cat, G.v[idx[j]].name, G.v[idx[j]].cat) > 0; j--) {
            size_t a = idx[j]; idx[j] = idx[j - 1]; idx[j - 1] = a;
        }
    double *cnt = tl_xmalloc(G.n * sizeof *cnt);
    for (size_t i = 0; i < G.n; i++) cnt[i] = (double)G.v[i].d.n;
    pyt_sort_desc_np(idx, G.n, cnt);
    free(cnt);
    tl_table *t = tl_table_new("unlinked_short_kernels_summary");
    size_t c0 = tl_table_add_col(t, "name", TL_STR), c1 = tl_table_add_col(t, "cat", TL_STR),
           c2 = tl_table_add_col(t, "count", TL_I64), c3 = tl_table_add_col(t, "min_dur", TL_F64),
           c4 = tl_table_add_col(t, "max_dur", TL_F64), c5 = tl_table_add_col(t, "mean_dur", TL_F64);
    tl_table_set_nrows(t, G.n);
    for (size_t i = 0; i < G.n; i++) {
        const dgroup *g = &G.v[idx[i]];
        double mn = g->d.v[0], mx = g->d.v[0];
        for (size_t k = 1; k < g->d.n; k++) {
            if (g->d.v[k] < mn) mn = g->d.v[k];
            if (g->d.v[k] > mx) mx = g->d.v[k];
        }
        tl_table_set_str(t, c0, i, g->name);
        tl_table_set_str(t, c1, i, g->cat);
        tl_table_set_i64(t, c2, i, (int64_t)g->d.n);
        tl_table_set_f64(t, c3, i, mn);
        tl_table_set_f64(t, c4, i, mx);
        tl_table_set_f64(t, c5, i, tl_mean_kahan(g->d.v, g->d.n));
    }
    free(idx);
    for (size_t i = 0; i < G.n; i++) tl_vec_free(&G.v[i].d);
    tl_vec_free(&G);
    for (size_t i = 0; i < m.cap; i++) free((void *)m.keys[i]);
    tl_smap_free(&m);
    return t;
}

/* pandas' sort_values(ascending=False) of counts (NumPy's introsort) */
static void sort_counts(namecount *v, size_t n)
{
    size_t *idx = tl_xmalloc((n ? n : 1) * sizeof *idx);
    double *key = tl_xmalloc((n ? n : 1) * sizeof *key);
    namecount *tmp = tl_xmalloc((n ? n : 1) * sizeof *tmp);
    for (size_t i = 0; i < n; i++) idx[i] = i, key[i] = (double)v[i].n, tmp[i] = v[i];
    pyt_sort_desc_np(idx, n, key);
    for (size_t i = 0; i < n; i++) v[i] = tmp[idx[i]];
    free(idx), free(key), free(tmp);
}

/* short_cpu_op_counts: each rank's value_counts() of the parent cpu_op of
 * its short kernels (count descending), summed into one dict in the order
 * the names come, sorted again by count, plus Total; the index column has
 * no name. */
static tl_table *sheet_short_ops(rank_out *ro, size_t n)
{
    tl_smap m = {0};
    TL_VEC(namecount) C = {0};
    int64_t total = 0;
    for (size_t r = 0; r < n; r++) {
        sort_counts(ro[r].shortops.v, ro[r].shortops.n);
        for (size_t i = 0; i < ro[r].shortops.n; i++) {
            const namecount *x = &ro[r].shortops.v[i];
            int isnew;
            size_t *slot = tl_smap_put(&m, x->name, strlen(x->name), &isnew);
            if (isnew) {
                *slot = C.n;
                namecount z = {x->name, 0};
                tl_vec_push(&C, z);
            }
            C.v[*slot].n += x->n;
            total += x->n;
        }
    }
    tl_smap_free(&m);
    if (!C.n) return NULL;
    sort_counts(C.v, C.n);
    tl_table *t = tl_table_new("short_cpu_op_counts");
    size_t c0 = tl_table_add_col(t, "", TL_STR), c1 = tl_table_add_col(t, "count", TL_I64);
    tl_table_set_nrows(t, C.n + 1);
    for (size_t i = 0; i < C.n; i++) {
        tl_table_set_str(t, c0, i, C.v[i].name);
        tl_table_set_i64(t, c1, i, C.v[i].n);
    }
    tl_table_set_str(t, c0, C.n, "Total");
    tl_table_set_i64(t, c1, C.n, total);
    tl_vec_free(&C);
    return t;
}

static tl_table *sheet_cuda(rank_out *ro, size_t n)
{
    /* rows: (name, cat) ascending over all ranks */
    tl_smap m = {0};
    TL_VEC(dgroup) keys = {0};
    tl_buf key = {0};
    for (size_t r = 0; r < n; r++)
        for (size_t i = 0; i < ro[r].cuda.n; i++) {
            const dgroup *g = &ro[r].cuda.v[i];
            key.n = 0;
            tl_buf_printf(&key, "%s\x1f%s", g->name, g->cat);
            tl_buf_putc(&key, 0);
            if (tl_smap_get(&m, key.p, strlen(key.p))) continue;
            int isnew;
            size_t *slot = tl_smap_put(&m, tl_xstrdup(key.p), strlen(key.p), &isnew);
            *slot = keys.n;
            dgroup z = {g->name, g->cat, {0}};
            tl_vec_push(&keys, z);
        }
    if (!keys.n) {
        tl_buf_free(&key);
        tl_smap_free(&m);
        return NULL;
    }
    size_t *idx = tl_xmalloc(keys.n * sizeof *idx);
    for (size_t i = 0; i < keys.n; i++) idx[i] = i;
    for (size_t i = 1; i < keys.n; i++)
        for (size_t j = i; j > 0 && nc_cmp(keys.v[idx[j - 1]].name, keys.v[idx[j - 1]].cat, keys.v[idx[j]].name, keys.v[idx[j]].cat) > 0; j--) {
            size_t a = idx[j]; idx[j] = idx[j - 1]; idx[j - 1] = a;
        }
    size_t *row_of = tl_xmalloc(keys.n * sizeof *row_of);
    for (size_t i = 0; i < keys.n; i++) row_of[idx[i]] = i;
    /* the pivot as pandas writes it with its index: a header row of the
     * statistics (each over its rank columns), a row of the rank numbers
     * after the column level's name, a row of the index names, the data */
    tl_table *t = tl_table_new("cuda_events_summary");
    size_t c0 = tl_table_add_col(t, "", TL_STR), c1 = tl_table_add_col(t, "", TL_STR);
    static const char *const ST[] = {"count", "min_dur", "max_dur", "mean_dur"};
    size_t cst[4];
    for (int st = 0; st < 4; st++) {
        cst[st] = t->ncols;
        for (size_t r = 0; r < n; r++) tl_table_add_col(t, r ? "" : ST[st], st == 0 ? TL_I64 : TL_F64);
    }
    enum { HEAD = 2 };
    tl_table_set_nrows(t, keys.n + HEAD);
    tl_table_set_str(t, c1, 0, "rank");
    for (int st = 0; st < 4; st++)
        for (size_t r = 0; r < n; r++) {
            if (st == 0) tl_table_set_i64(t, cst[st] + r, 0, ro[r].rank);
            else tl_table_set_f64(t, cst[st] + r, 0, ro[r].rank);
        }
    tl_table_set_str(t, c0, 1, "name");
    tl_table_set_str(t, c1, 1, "cat");
    for (size_t i = 0; i < keys.n; i++) {
        tl_table_set_str(t, c0, HEAD + i, keys.v[idx[i]].name);
        tl_table_set_str(t, c1, HEAD + i, keys.v[idx[i]].cat);
    }
    for (size_t r = 0; r < n; r++)
        for (size_t i = 0; i < ro[r].cuda.n; i++) {
            const dgroup *g = &ro[r].cuda.v[i];
            key.n = 0;
            tl_buf_printf(&key, "%s\x1f%s", g->name, g->cat);
            tl_buf_putc(&key, 0);
            size_t row = HEAD + row_of[*tl_smap_get(&m, key.p, strlen(key.p))];
            tl_table_set_i64(t, cst[0] + r, row, g->cnt);
            tl_table_set_f64(t, cst[1] + r, row, g->mn);
            tl_table_set_f64(t, cst[2] + r, row, g->mx);
            tl_table_set_f64(t, cst[3] + r, row, g->mean);
        }
    tl_buf_free(&key);
    free(idx), free(row_of);
    tl_vec_free(&keys);
    for (size_t i = 0; i < m.cap; i++) free((void *)m.keys[i]);
    tl_smap_free(&m);
    return t;
}

/* ---- grouped_breakdown ------------------------------------------------------------------ */

/* perf_report_configs.py's grouped_breakdown_mapping: the launchers of
 * each group (gemm_perf_ops, conv/norm/... launchers, the branch's unary and
 * binary elementwise ops); Triton is every name starting with "triton_". */
static const char *const BD_ATTN[] = {"aten::_cudnn_attention_forward", "aten::_efficient_attention_forward",
                                      "flash_attn::_flash_attn_forward", "flash_attn::_flash_attn_varlen_forward",
                                      "xFuserRingFlashAttnFunc", "FlashAttnFunc", "FlashAttnVarlenFunc",
                                      "flash_attn_3::fwd", "aiter::wrapper_mha_varlen_fwd",
                                      "aiter::wrapper_fmha_v3_varlen_fwd", "aiter::wrapper_fmha_v3_fwd",
                                      "_vllm_fa3_C::fwd", "vllm::unified_attention_with_output",
                                      "vllm::flash_attn_varlen_func", "aiter::paged_attention_v1", NULL};
static const char *const BD_GEMM[] = {"aten::mm", "aten::_scaled_mm", "aten::addmm", "aten::bmm", "aten::baddbmm",
                                      "trtllm::cublas_scaled_mm", "bitsandbytes::int8_linear_matmul",
                                      "_Linear_yfwd_mm", "_LayerNormLinear_yfwd_mm", "tex_ts::te_gemm_ts",
                                      "vllm::gemm_with_dynamic_quant", NULL};
static const char *const BD_CONV[] = {"aten::miopen_convolution", "aten::cudnn_convolution", NULL};
static const char *const BD_NORM[] = {"aten::native_group_norm", "aten::native_layer_norm", "_C::rms_norm",
                                      "_C::fused_add_rms_norm", NULL};
static const char *const BD_UPSAMPLE[] = {"aten::upsample_nearest3d", "aten::upsample_nearest2d",
                                          "aten::upsample_bicubic2d", "aten::_upsample_nearest_exact2d", NULL};
static const char *const BD_PAD[] = {"aten::replication_pad3d", NULL};
static const char *const BD_ELEMWISE[] = {"aten::copy", "aten::copy_", "aten::clamp_min", "aten::clamp_min_",
                                          "aten::clamp_max", "aten::clamp_max_", "aten::sigmoid", "aten::div",
                                          "aten::div_", "aten::mul", "aten::mul_", "aten::add", "aten::add_",
                                          "aten::sigmoid_backward", "aten::threshold_backward", NULL};
static const char *const BD_CONCAT[] = {"aten::cat", NULL};
static const char *const BD_MOE[] = {"vllm::moe_forward", NULL};
static const struct {
    const char *group;
    const char *const *names; /* NULL: the triton_ prefix */
} BREAKDOWN[] = {
    {"Attention", BD_ATTN}, {"GEMM", BD_GEMM}, {"Conv", BD_CONV}, {"Norm", BD_NORM},
    {"UpSample", BD_UPSAMPLE}, {"Pad", BD_PAD}, {"Elemwise", BD_ELEMWISE}, {"Concat", BD_CONCAT},
    {"MoE", BD_MOE}, {"Triton", NULL},
};
enum { NBREAKDOWN = sizeof BREAKDOWN / sizeof *BREAKDOWN };

static int in_breakdown_group(size_t g, const char *name)
{
    if (!BREAKDOWN[g].names) return !strncmp(name, "triton_", 7);
    for (const char *const *x = BREAKDOWN[g].names; *x; x++)
        if (!strcmp(*x, name)) return 1;
    return 0;
}

const char *tl_corpus_group_of(const char *name)
{
    for (size_t g = 0; name && g < NBREAKDOWN; g++)
        if (in_breakdown_group(g, name)) return BREAKDOWN[g].group;
    return NULL;
}

/* build_grouped_breakdown: each group's Σ time_ms_avg of its launchers
 * (NumPy's pairwise sum, in the kernel_launchers order) / 1000, then
 * Comms, Memcpy (the gpu_timelines averages / 1000), Other (the launchers
 * of no group) and Total (the plain sum of the rows above). */
static tl_table *sheet_breakdown(const launcher *L, size_t nl, size_t world, double comm_ms, double memcpy_ms,
                                 int quiet)
{
    double *avg = tl_xmalloc((nl ? nl : 1) * sizeof *avg), *sel = tl_xmalloc((nl ? nl : 1) * sizeof *sel);
    uint8_t *assigned = tl_xcalloc(nl ? nl : 1, 1);
    for (size_t i = 0; i < nl; i++) avg[i] = L[i].sum_us / 1000 / (double)world;
    tl_table *t = tl_table_new("grouped_breakdown");
    size_t c0 = tl_table_add_col(t, "Group", TL_STR), c1 = tl_table_add_col(t, "Time (s)", TL_F64);
    double total = 0;
    for (size_t g = 0; g < NBREAKDOWN; g++) {
        size_t m = 0;
        for (size_t i = 0; i < nl; i++)
            if (in_breakdown_group(g, L[i].name)) sel[m++] = avg[i], assigned[i] = 1;
        double v = tl_sum_pairwise(sel, m) / 1000;
        size_t r = tl_table_add_row(t);
        tl_table_set_str(t, c0, r, BREAKDOWN[g].group);
        tl_table_set_f64(t, c1, r, v);
        total += v;
    }
    tl_buf others = {0};
    size_t m = 0;
    for (size_t i = 0; i < nl; i++)
        if (!assigned[i]) {
            tl_buf_printf(&others, "%s'%s'", m ? ", " : "", L[i].name);
            sel[m++] = avg[i];
        }
    if (m && !quiet)
        fprintf(stderr, "UserWarning: %zu kernel launchers were assigned to the \"Other\" group: [%s] Check the "
                        "grouped_breakdown_mapping to ensure all relevant kernel launchers are appropriately grouped.\n",
                m, others.p);
    tl_buf_free(&others);
    const char *tail[] = {"Comms", "Memcpy", "Other"};
    double tv[] = {isnan(comm_ms) ? 0 : comm_ms / 1000, isnan(memcpy_ms) ? 0 : memcpy_ms / 1000,
                   tl_sum_pairwise(sel, m) / 1000};
    for (int j = 0; j < 3; j++) {
        size_t r = tl_table_add_row(t);
        tl_table_set_str(t, c0, r, tail[j]);
        tl_table_set_f64(t, c1, r, tv[j]);
        total += tv[j];
    }
    size_t r = tl_table_add_row(t);
    tl_table_set_str(t, c0, r, "Total");
    tl_table_set_f64(t, c1, r, total);
    free(avg), free(sel), free(assigned);
    return t;
}

/* Copy of a collective sheet as the branch's NcclAnalyser writes it: without
 * the node_id / node_span columns of the current collective report, and
 * with rank_cols 0 also without the per-rank columns (rank_<r>_*). */
static tl_table *branch_columns(const tl_table *src, const char *name, int rank_cols)
{
    tl_table *t = tl_table_new(name);
    tl_table_set_nrows(t, 0);
    for (size_t c = 0; c < src->ncols; c++) {
        const char *cn = src->cols[c].name;
        if ((!rank_cols && !strncmp(cn, "rank_", 5)) || !strcmp(cn, "node_id") || !strcmp(cn, "node_span")) continue;
        size_t d = tl_table_add_col(t, cn, src->cols[c].type);
        t->cols[d].as_float = src->cols[c].as_float;
        tl_table_set_nrows(t, src->nrows);
        for (size_t r = 0; r < src->nrows; r++) tl_table_copy_cell(t, d, r, src, c, r);
    }
    return t;
}

/* nccl_all2allv as the branch's build_df_nccl_all2allv(detailed=False)
 * writes it: the collective's metadata, total data and nelems, start and end
 * skew, sorted by total data communicated descending (pandas' unstable
 * sort_values). */
static tl_table *branch_all2allv(const tl_table *src)
{
    static const char *const COLS[] = {"collective_id", "Process Group Name", "Process Group Ranks",
                                       "Collective name", "Group size", "dtype", "stream",
                                       "total data communicated (MB)", "total nelems communicated",
                                       "skew in start time", "skew in end time"};
    size_t n = src->nrows;
    size_t *idx = tl_xmalloc((n ? n : 1) * sizeof *idx);
    double *key = tl_xmalloc((n ? n : 1) * sizeof *key);
    long kc = tl_table_col(src, "total data communicated (MB)");
    for (size_t r = 0; r < n; r++) idx[r] = r, key[r] = kc >= 0 ? tl_table_num(src, (size_t)kc, r) : NAN;
    pyt_sort_desc_np(idx, n, key);
    tl_table *t = tl_table_new("nccl_all2allv");
    tl_table_set_nrows(t, 0);
    for (size_t k = 0; k < sizeof COLS / sizeof *COLS; k++) {
        long c = tl_table_col(src, COLS[k]);
        if (c < 0) continue;
        size_t d = tl_table_add_col(t, COLS[k], src->cols[c].type);
        t->cols[d].as_float = src->cols[c].as_float;
        tl_table_set_nrows(t, n);
        for (size_t r = 0; r < n; r++) tl_table_copy_cell(t, d, r, src, (size_t)c, idx[r]);
    }
    free(idx), free(key);
    return t;
}

/* One of the collective sheets in the branch's form, made on a thread of
 * its own (name NULL: nccl_all2allv). */
typedef struct branch_job {
    const tl_table *src;
    const char *name;
    int rank_cols;
    tl_table *out;
} branch_job;

static void branch_sheet(void *ctx, size_t i)
{
    branch_job *j = &((branch_job *)ctx)[i];
    j->out = j->name ? branch_columns(j->src, j->name, j->rank_cols) : branch_all2allv(j->src);
}

/* ---- the report ----------------------------------------------------------------------------- */

/* Runs ranks [p->lo, p->hi) on worker threads (p->ro and the options
 * set); with all n ranks, the collective analysis beside the last ones. */
static void run_ranks(pool *p)
{
    double t0 = tl_now();
    atomic_init(&p->next, 0);
    int workers = tl_corpus_workers(p->o->max_workers);
    if ((size_t)workers > p->hi - p->lo) workers = (int)(p->hi - p->lo);
    if (workers < 1) workers = 1;
    pthread_mutex_init(&p->cs.mu, NULL);
    pthread_cond_init(&p->cs.cv, NULL);
    p->cs.pending = p->hi - p->lo;
    tl_thread **th = tl_xcalloc((size_t)workers, sizeof *th);
    int started = 0;
    for (int i = 0; i + 1 < workers; i++) {
        if (!(th[i] = tl_thread_start(worker, p))) break;
        started++;
    }
    worker(p);
    for (int i = 0; i < started; i++) tl_thread_join(th[i]);
    free(th);
    if (!p->o->keep_heap) tl_heap_trim(); /* the ranks' memory, before the pooled sheets and the writing */
    pthread_mutex_destroy(&p->cs.mu);
    pthread_cond_destroy(&p->cs.cv);
    p->seconds_ranks = tl_now() - t0;
}

static rank_out *ranks_new(const int *ranks, size_t n)
{
    rank_out *ro = tl_xcalloc(n, sizeof *ro);
    for (size_t i = 0; i < n; i++) {
        ro[i].rank = ranks ? ranks[i] : (int)i;
        tl_arena_init(&ro[i].arena, 1 << 14);
    }
    return ro;
}

/* The workbook's sheets from every rank's results (p->ro[0..p->n)) and
 * the collective analysis in p; frees the ranks. */
static int pooled_sheets(pool *p, tl_corpus_sheets *out, tl_corpus_stats *stats, tl_err *err)
{
    tl_prof_span sp;
    tl_prof_begin(&sp, "corpus: pooled sheets", TL_PROF_SERIAL);
    rank_out *ro = p->ro;
    size_t n = p->n;
    const tl_corpus_opts *o = p->o;
    for (size_t i = 0; i < n; i++)
        if (!ro[i].ok) {
            stats->failed_ranks++;
            if (!o->quiet) fprintf(stderr, "rank %d: no PyTorch report: %s\n", ro[i].rank, ro[i].msg);
        }

    /* 1. op groups, pooled on threads of their own (serial parts profiled there) */
    tl_prof_end(&sp);
    cp_rows **rows = tl_xmalloc(n * sizeof *rows);
    for (size_t i = 0; i < n; i++) rows[i] = ro[i].perf;
    int threads = o->max_workers;
    if (threads <= 0) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        threads = cpus < 1 ? 1 : cpus > 8 ? 8 : (int)cpus;
    }
    for (size_t g = 0; g < CP_NGROUPS; g++) {
        tl_table *t = cp_group_sheet(g, rows, n, threads);
        if (t) tl_vec_push(out, t);
        else if (!o->quiet)
            fprintf(stderr, "No events to summarize performance metrics from group %s\n", cp_group_name(g));
    }
    free(rows);
    tl_prof_begin(&sp, "corpus: pooled sheets", TL_PROF_SERIAL);
    /* 2. kernel launchers */
    launcher *L = NULL;
    size_t nl = 0;
    tl_vec_push(out, sheet_launchers(ro, n, &L, &nl));
    /* 3. gpu timelines */
    double comm_ms, memcpy_ms;
    tl_vec_push(out, sheet_timelines(ro, n, &comm_ms, &memcpy_ms));
    /* 4-7 */
    tl_vec_push(out, sheet_linked(ro, n));
    tl_table *x;
    if ((x = sheet_unlinked(ro, n))) tl_vec_push(out, x);
    if ((x = sheet_short_ops(ro, n))) tl_vec_push(out, x);
    if ((x = sheet_cuda(ro, n))) tl_vec_push(out, x);
    /* 8 */
    tl_vec_push(out, sheet_breakdown(L, nl, n, comm_ms, memcpy_ms, o->quiet));
    free(L);

    int rc = 0;
    /* 9. collectives across ranks (computed beside the last ranks) */
    if (n > 1) {
        stats->seconds_collective = p->coll_seconds;
        tl_coll_sheets cs = p->coll;
        rc = p->coll_rc;
        if (rc && err) *err = p->coll_err;
        if (!rc) {
            stats->have_coll = 1;
            tl_table *sum = tl_coll_sheet(&cs, "nccl_summary_implicit_sync"), *lng = tl_coll_sheet(&cs, "nccl_long"),
                     *sync = tl_coll_sheet(&cs, "nccl_implicit_sync"), *a2a = tl_coll_sheet(&cs, "nccl_all2allv"),
                     *ir = tl_coll_sheet(&cs, "imbalance_ranks"), *ic = tl_coll_sheet(&cs, "imbalance_collectives");
            branch_job jobs[] = {{sum, "summary_nccl_implicit_sync_cat", 1, NULL}, {lng, "long", 1, NULL},
                                 {sync, "nccl_implicit_sync_cat", 0, NULL},
                                 {sync, "nccl_implicit_sync_cat_detailed", 1, NULL}, {a2a, NULL, 0, NULL}};
            size_t nj = sizeof jobs / sizeof *jobs - (a2a ? 0 : 1);
            tl_prof_end(&sp);
            tl_par_for(nj, threads, "corpus: branch sheets", branch_sheet, jobs);
            tl_prof_begin(&sp, "corpus: pooled sheets", TL_PROF_SERIAL);
            for (size_t k = 0; k < nj; k++) tl_vec_push(out, jobs[k].out);
            if (ir) tl_vec_push(out, ir);
            if (ic) tl_vec_push(out, ic);
            /* the imbalance sheets moved into out; the rest were copied */
            for (size_t i = 0; i < cs.n; i++)
                if (cs.v[i] != ir && cs.v[i] != ic) tl_table_free(cs.v[i]);
            free(cs.v);
        }
    }
    for (size_t i = 0; i < n; i++) rank_free(&ro[i]);
    free(ro);
    if (rc) tl_corpus_sheets_free(out);
    tl_prof_end(&sp);
    return rc;
}

int tl_corpus_report(tl_store *s, const uint64_t *ids, const int *ranks, size_t n, const tl_corpus_opts *o,
                     tl_corpus_sheets *out, tl_corpus_stats *stats, tl_err *err)
{
    memset(out, 0, sizeof *out);
    tl_corpus_stats local;
    if (!stats) stats = &local;
    memset(stats, 0, sizeof *stats);
    tl_corpus_opts def;
    if (!o) tl_corpus_opts_default(&def), o = &def;
    if (!n) return tl_errf(err, TL_EUSAGE, "no traces in the configuration");
    char warn[512] = "";
    tl_catreg *cat = tl_catreg_builtin(o->datadir, warn, sizeof warn);
    if (warn[0] && !o->quiet) fprintf(stderr, "tracelens: %s\n", warn);
    pool p = {.s = s, .ids = ids, .n = n, .lo = 0, .hi = n, .ro = ranks_new(ranks, n), .o = o, .cat = cat,
              .want_coll = n > 1, .coll_summary = &stats->coll};
    run_ranks(&p);
    stats->seconds_ranks = p.seconds_ranks;
    int rc = pooled_sheets(&p, out, stats, err);
    tl_catreg_free(cat);
    return rc;
}

/* ---- across processes (MPI) --------------------------------------------------------------- */

static void put_groups(tl_buf *b, const dgroups *gs)
{
    tl_pack_u64(b, gs->n);
    for (size_t i = 0; i < gs->n; i++) {
        const dgroup *g = &gs->v[i];
        tl_pack_str(b, g->name), tl_pack_str(b, g->cat);
        tl_pack_u64(b, g->d.n);
        tl_pack_bytes(b, g->d.v, g->d.n * sizeof *g->d.v);
        tl_pack_u64(b, (uint64_t)g->cnt);
        tl_pack_f64(b, g->mn), tl_pack_f64(b, g->mx), tl_pack_f64(b, g->mean);
    }
}

static void get_groups(tl_unpack *in, dgroups *gs, tl_arena *a)
{
    size_t n = (size_t)tl_unpack_u64(in);
    for (size_t i = 0; i < n && !in->bad; i++) {
        dgroup g = {.name = tl_unpack_str(in, a), .cat = tl_unpack_str(in, a)};
        size_t nd = (size_t)tl_unpack_u64(in);
        const double *d = tl_unpack_bytes(in, nd * sizeof *d);
        if (d && nd) {
            tl_vec_reserve(&g.d, nd);
            memcpy(g.d.v, d, nd * sizeof *d);
            g.d.n = nd;
        }
        g.cnt = (int64_t)tl_unpack_u64(in);
        g.mn = tl_unpack_f64(in), g.mx = tl_unpack_f64(in), g.mean = tl_unpack_f64(in);
        tl_vec_push(gs, g);
    }
}

/* The texts of a rank's op-group rows, each once: rows repeat the same op
 * names, parameters, shapes and kernel names, so they travel as numbers
 * into this table (0: NULL). */
typedef struct strtab {
    tl_smap m;
    TL_VEC(const char *) v;
} strtab;

static uint64_t str_id(strtab *t, const char *s)
{
    if (!s) return 0;
    int isnew;
    size_t *slot = tl_smap_put(&t->m, s, strlen(s), &isnew);
    if (isnew) {
        *slot = t->v.n;
        tl_vec_push(&t->v, s);
    }
    return *slot + 1;
}

static void put_perf_rows(tl_buf *b, const cp_rows *rows)
{
    strtab t;
    tl_smap_init(&t.m, 256);
    memset(&t.v, 0, sizeof t.v);
    tl_buf r = {0};
    tl_pack_u64(&r, rows->n);
    for (size_t i = 0; i < rows->n; i++) {
        const cp_row *x = &rows->v[i];
        tl_pack_u64(&r, str_id(&t, x->name));
        tl_pack_u64(&r, (uint64_t)x->uid);
        tl_pack_u64(&r, x->np);
        for (size_t q = 0; q < x->np; q++) {
            tl_pack_u64(&r, str_id(&t, x->p[q].key) | (uint64_t)x->p[q].kind << 56);
            tl_pack_u64(&r, str_id(&t, x->p[q].text));
        }
        double nums[] = {x->gflops, x->mb, x->fpb, x->kt, x->tflops, x->tbs, x->ndm_kt, x->ndm_tflops};
        tl_pack_bytes(&r, nums, sizeof nums);
        tl_pack_u64(&r, x->nk);
        for (size_t q = 0; q < x->nk; q++) {
            tl_pack_u64(&r, str_id(&t, x->k[q].name) | (uint64_t)(x->k[q].has_stream != 0) << 63);
            tl_pack_f64(&r, x->k[q].dur);
            tl_pack_u64(&r, (uint64_t)x->k[q].stream);
        }
        const char *strs[] = {x->dims, x->types, x->strides, x->concrete};
        for (size_t q = 0; q < 4; q++) tl_pack_u64(&r, str_id(&t, strs[q]));
    }
    tl_pack_u64(b, t.v.n);
    for (size_t k = 0; k < t.v.n; k++) tl_pack_str(b, t.v.v[k]);
    tl_pack_bytes(b, r.p, r.n);
    tl_buf_free(&r);
    tl_vec_free(&t.v);
    tl_smap_free(&t.m);
}

/* A text of the table by its number (NULL for 0 or a bad number). */
static const char *str_of(tl_unpack *in, const char *const *tab, size_t n, uint64_t id)
{
    if (id > n) in->bad = 1;
    return id && id <= n ? tab[id - 1] : NULL;
}

/* The parameter lists of a rank's unpacked rows, each distinct list
 * once: in the report that made them, rows of one model share one list,
 * and the pooling (corpus_pool.c) tells models apart by that pointer;
 * unpacked one per row, every row would be a model of its own and the
 * merge would compare them all by text. Keyed by the packed bytes' hash
 * and length, compared in full. */
typedef struct param_lists {
    tl_bmap m; /* {hash, len} -> 1 + first list of that key */
    TL_VEC(struct plist { const unsigned char *bytes; size_t len; cp_param *p; size_t next; }) v;
} param_lists;

static cp_param *shared_params(param_lists *pl, const unsigned char *bytes, size_t len, cp_param *fresh)
{
    uint64_t key[2] = {tl_hash64(bytes, len, 0), len};
    int isnew;
    size_t *head = tl_bmap_put(&pl->m, key, &isnew);
    for (size_t i = *head; i; i = pl->v.v[i - 1].next)
        if (!memcmp(pl->v.v[i - 1].bytes, bytes, len)) return pl->v.v[i - 1].p;
    struct plist e = {bytes, len, fresh, *head};
    tl_vec_push(&pl->v, e);
    *head = pl->v.n;
    return fresh;
}

static void get_perf_rows(tl_unpack *in, cp_rows *rows, tl_arena *a)
{
    size_t ns = (size_t)tl_unpack_u64(in);
    if (ns > (size_t)(in->end - in->p)) { in->bad = 1; return; }
    const char **tab = tl_arena_alloc(a, (ns ? ns : 1) * sizeof *tab);
    for (size_t k = 0; k < ns; k++) tab[k] = tl_unpack_str(in, a);
    size_t n = (size_t)tl_unpack_u64(in);
    param_lists pl = {0};
    tl_bmap_init(&pl.m, 2 * sizeof(uint64_t), 64);
    for (size_t i = 0; i < n && !in->bad; i++) {
        cp_row r = {.name = str_of(in, tab, ns, tl_unpack_u64(in))};
        r.uid = (int64_t)tl_unpack_u64(in);
        r.np = (size_t)tl_unpack_u64(in);
        if (r.np > (size_t)(in->end - in->p)) { in->bad = 1; break; }
        r.p = tl_arena_alloc(a, (r.np ? r.np : 1) * sizeof *r.p);
        const unsigned char *pb = in->p;
        for (size_t q = 0; q < r.np; q++) {
            uint64_t kk = tl_unpack_u64(in);
            r.p[q].key = str_of(in, tab, ns, kk & ((1ull << 56) - 1));
            r.p[q].kind = (int)(kk >> 56);
            r.p[q].text = str_of(in, tab, ns, tl_unpack_u64(in));
        }
        if (!in->bad) r.p = shared_params(&pl, pb, (size_t)(in->p - pb), r.p);
        double nums[8] = {0};
        const void *pn = tl_unpack_bytes(in, sizeof nums);
        if (pn) memcpy(nums, pn, sizeof nums);
        r.gflops = nums[0], r.mb = nums[1], r.fpb = nums[2], r.kt = nums[3];
        r.tflops = nums[4], r.tbs = nums[5], r.ndm_kt = nums[6], r.ndm_tflops = nums[7];
        r.nk = (size_t)tl_unpack_u64(in);
        if (r.nk > (size_t)(in->end - in->p)) { in->bad = 1; break; }
        r.k = tl_arena_alloc(a, (r.nk ? r.nk : 1) * sizeof *r.k);
        for (size_t q = 0; q < r.nk; q++) {
            uint64_t kn = tl_unpack_u64(in);
            r.k[q].name = str_of(in, tab, ns, kn & ~(1ull << 63));
            r.k[q].has_stream = (int)(kn >> 63);
            r.k[q].dur = tl_unpack_f64(in);
            r.k[q].stream = (int64_t)tl_unpack_u64(in);
        }
        const char **strs[] = {&r.dims, &r.types, &r.strides, &r.concrete};
        for (size_t q = 0; q < 4; q++) *strs[q] = str_of(in, tab, ns, tl_unpack_u64(in));
        tl_vec_push(rows, r);
    }
    tl_bmap_free(&pl.m);
    tl_vec_free(&pl.v);
}

/* One rank's results: its sheets, groups, counts and collective records. */
static void put_rank(tl_buf *b, const rank_out *ro, int with_coll)
{
    tl_pack_u64(b, (uint64_t)(int64_t)ro->rank);
    tl_pack_u64(b, (uint64_t)ro->ok);
    tl_pack_str(b, ro->msg);
    tl_pack_table(b, ro->timeline);
    tl_pack_table(b, ro->ops);
    for (int k = 0; k < CP_NGROUPS; k++) put_perf_rows(b, &ro->perf[k]);
    int64_t counts[] = {ro->nk, ro->nk_linked, ro->nshort_linked, ro->nshort_unlinked};
    for (size_t k = 0; k < 4; k++) tl_pack_u64(b, (uint64_t)counts[k]);
    put_groups(b, &ro->unlinked);
    put_groups(b, &ro->cuda);
    tl_pack_u64(b, ro->shortops.n);
    for (size_t i = 0; i < ro->shortops.n; i++) {
        tl_pack_str(b, ro->shortops.v[i].name);
        tl_pack_u64(b, (uint64_t)ro->shortops.v[i].n);
    }
    tl_pack_u64(b, (uint64_t)(int64_t)ro->coll_rc);
    tl_pack_u64(b, (uint64_t)(int64_t)ro->coll_err.code);
    tl_pack_str(b, ro->coll_err.msg);
    if (with_coll && !ro->coll_rc) part_put_coll_rank(b, &ro->coll);
}

static int get_rank(tl_unpack *in, rank_out *ro, int with_coll)
{
    ro->rank = (int)(int64_t)tl_unpack_u64(in);
    ro->ok = (int)tl_unpack_u64(in);
    const char *msg = tl_unpack_str(in, &ro->arena);
    snprintf(ro->msg, sizeof ro->msg, "%s", msg ? msg : "");
    ro->timeline = tl_unpack_table(in);
    ro->ops = tl_unpack_table(in);
    for (int k = 0; k < CP_NGROUPS; k++) get_perf_rows(in, &ro->perf[k], &ro->arena);
    ro->nk = (int64_t)tl_unpack_u64(in), ro->nk_linked = (int64_t)tl_unpack_u64(in);
    ro->nshort_linked = (int64_t)tl_unpack_u64(in), ro->nshort_unlinked = (int64_t)tl_unpack_u64(in);
    get_groups(in, &ro->unlinked, &ro->arena);
    get_groups(in, &ro->cuda, &ro->arena);
    size_t ns = (size_t)tl_unpack_u64(in);
    for (size_t i = 0; i < ns && !in->bad; i++) {
        namecount nc = {.name = tl_unpack_str(in, &ro->arena)};
        nc.n = (int64_t)tl_unpack_u64(in);
        tl_vec_push(&ro->shortops, nc);
    }
    ro->coll_rc = (int)(int64_t)tl_unpack_u64(in);
    ro->coll_err.code = (int)(int64_t)tl_unpack_u64(in);
    msg = tl_unpack_str(in, &ro->arena);
    snprintf(ro->coll_err.msg, sizeof ro->coll_err.msg, "%s", msg ? msg : "");
    if (with_coll && !ro->coll_rc && part_get_coll_rank(in, &ro->coll)) return TL_EFORMAT;
    return in->bad ? TL_EFORMAT : TL_OK;
}

int tl_corpus_partials(tl_store *s, const uint64_t *ids, const int *ranks, size_t n, size_t lo, size_t hi,
                       const tl_corpus_opts *o, tl_buf *out, tl_err *err)
{
    tl_corpus_opts def;
    if (!o) tl_corpus_opts_default(&def), o = &def;
    if (hi > n) hi = n;
    if (lo >= hi) return TL_OK;
    char warn[512] = "";
    tl_catreg *cat = tl_catreg_builtin(o->datadir, warn, sizeof warn);
    if (warn[0] && !o->quiet && lo == 0) fprintf(stderr, "tracelens: %s\n", warn);
    pool p = {.s = s, .ids = ids, .n = n, .lo = lo, .hi = hi, .partial = 1, .ro = ranks_new(ranks, n), .o = o,
              .cat = cat, .want_coll = n > 1};
    run_ranks(&p);
    for (size_t i = lo; i < hi; i++) {
        tl_pack_u64(out, i);
        put_rank(out, &p.ro[i], p.want_coll);
    }
    for (size_t i = 0; i < n; i++) rank_free(&p.ro[i]);
    free(p.ro);
    tl_catreg_free(cat);
    (void)err; /* a rank's failure travels in its record, as in the one-process report */
    return TL_OK;
}

int tl_corpus_report_partials(const void *parts, size_t len, size_t n, const tl_corpus_opts *o,
                              tl_corpus_sheets *out, tl_corpus_stats *stats, tl_err *err)
{
    memset(out, 0, sizeof *out);
    tl_corpus_stats local;
    if (!stats) stats = &local;
    memset(stats, 0, sizeof *stats);
    tl_corpus_opts def;
    if (!o) tl_corpus_opts_default(&def), o = &def;
    if (!n) return tl_errf(err, TL_EUSAGE, "no traces in the configuration");
    pool p = {.n = n, .lo = 0, .hi = n, .ro = ranks_new(NULL, n), .o = o, .want_coll = n > 1,
              .coll_summary = &stats->coll};
    char *have = tl_xcalloc(n, 1);
    tl_unpack in = {parts, (const unsigned char *)parts + len, 0};
    int rc = TL_OK;
    while (!rc && in.p < in.end) {
        uint64_t pos = tl_unpack_u64(&in);
        if (in.bad || pos >= n || have[pos]) {
            rc = tl_errf(err, TL_EFORMAT, "corpus partials: a damaged or repeated rank record");
            break;
        }
        have[pos] = 1;
        if (get_rank(&in, &p.ro[pos], p.want_coll))
            rc = tl_errf(err, TL_EFORMAT, "corpus partials: rank record %llu is cut short", (unsigned long long)pos);
    }
    for (size_t i = 0; i < n && !rc; i++)
        if (!have[i]) rc = tl_errf(err, TL_EFORMAT, "corpus partials: no record of rank position %zu", i);
    free(have);
    if (rc) {
        for (size_t i = 0; i < n; i++) rank_free(&p.ro[i]);
        free(p.ro);
        return rc;
    }
    if (p.want_coll) run_collectives(&p);
    return pooled_sheets(&p, out, stats, err);
}
