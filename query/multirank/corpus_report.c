/* corpus_report.c — the per-configuration workbook of spec formats.md §4.4:
 * per-rank PyTorch reports and column scans on worker threads, pooled into
 * the generator's sheets in its order, then the collective analysis when
 * the configuration has more than one rank. The choices the spec leaves
 * open (op lists of the groups, pooled statistics, column names of the
 * pivots) are listed in docs/CONFORMANCE.md (Multi-rank). */
#include "query/multirank/multirank.h"
#include "query/multirank/collective_internal.h"
#include "query/pytorch/pytorch_internal.h"
#include "query/pytorch/pytorch.h"
#include "query/core/stats.h"
#include "query/core/trace.h"
#include "ingest/schema.h"

#include <malloc.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

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

/* The perf-model sheets pooled into the generator's op groups. */
static const struct {
    const char *group;
    const char *sheets[4];
} OPGROUPS[] = {
    {"gemm", {"GEMM", "GroupedGEMM_fwd", "GroupedGEMM_bwd", NULL}},
    {"conv", {"CONV_fwd", "CONV_bwd", NULL}},
    {"attn", {"SDPA_fwd", "SDPA_bwd", "InferenceAttention_fwd", "InferenceAttention_bwd"}},
    {"un_elemwise", {"UnaryElementwise", NULL}},
    {"bin_elemwise", {"BinaryElementwise", NULL}},
};
#define NGROUPS (sizeof OPGROUPS / sizeof *OPGROUPS)
#define NPERF 12 /* sheets over all groups */

/* The perf-model families whose sheets OPGROUPS pools (a sheet is named
 * FAMILY, FAMILY_fwd or FAMILY_bwd), into out (NULL-terminated, texts in
 * buf): a rank builds only these (a 1 GB tracegen rank has ~78k
 * Normalization and Reduce events of ~200k with a model, which no sheet of
 * the workbook reads). */
static void pooled_families(const char *out[NPERF + 1], char buf[NPERF][32])
{
    size_t n = 0;
    for (size_t g = 0; g < NGROUPS; g++)
        for (int j = 0; j < 4 && OPGROUPS[g].sheets[j]; j++) {
            const char *sh = OPGROUPS[g].sheets[j];
            size_t len = strlen(sh);
            if (len > 4 && (!strcmp(sh + len - 4, "_fwd") || !strcmp(sh + len - 4, "_bwd"))) len -= 4;
            snprintf(buf[n], sizeof buf[n], "%.*s", (int)len, sh);
            size_t k = 0;
            while (k < n && strcmp(out[k], buf[n])) k++;
            if (k == n) out[n] = buf[n], n++;
        }
    out[n] = NULL;
}

static int perf_slot(const char *sheet)
{
    int k = 0;
    for (size_t g = 0; g < NGROUPS; g++)
        for (int j = 0; j < 4 && OPGROUPS[g].sheets[j]; j++, k++)
            if (!strcmp(OPGROUPS[g].sheets[j], sheet)) return k;
    return -1;
}

/* ---- one rank ------------------------------------------------------------------------ */

typedef struct rank_out {
    int rank;
    int ok;                  /* the PyTorch report ran */
    char msg[512];           /* why not */
    tl_table *timeline, *ops;
    tl_table *perf[NPERF];
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
 * (before its perf-model stage), so a worker left without ranks starts it
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
        int linked = t->ext_id[i] != TL_NONE; /* §4.4: linked = has an External id */
        int shrt = t->dur[i] < short_ns;
        if (linked) {
            ro->nk_linked++;
            ro->nshort_linked += shrt;
        } else {
            ro->nshort_unlinked += shrt;
            collect(&ro->unlinked, &um, &ro->arena, t, t->name[i], t->cat[i], tl_trace_dur_us(t, i));
        }
        if (shrt && t->parent) {
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

/* The part of the PyTorch report (pytorch/report.c) the workbook pools:
 * gpu_timeline, ops_summary and the perf-model family sheets, computed by
 * the report's own sheet functions over the same context, in the same
 * order. ops_summary_by_category, ops_unique_args and unified_perf_summary
 * are not built (they were about half of a rank's report time, and the
 * workbook reads none of them). Every sort comparator on this path keeps
 * its state per thread, so ranks run in parallel. */
/* The events columns a rank is loaded with: tl_trace_load's without the
 * ones no part of the workbook reads (device, fwd_tid, grid, block,
 * launcher, parent_py: only with --include_call_stack / --detect_recompute,
 * correlation and linked: the collective scan copies them out for the scan
 * alone) and without the flows table (read by unified_perf_summary only):
 * ~200 instead of ~310 MB for a 1 GB rank. The pointers left out stay
 * NULL; the sheet functions used here never read them. Each column is
 * decoded into a block of its own (TL_TC_OWNED), freed by
 * rank_trace_drop_columns: the reader's arena would keep every column
 * until the reader closes, and the perf-model stage outlives the columns'
 * last use. Plain malloc: corpus-report runs one arena without trimming
 * between ranks (cmd_corpus_report.c), so the next rank's columns and
 * arrays reuse these blocks instead of faulting fresh pages in (they were
 * mmap'd and unmapped per rank: 8 x 1 GB workbook median 2.36 -> 2.0 s,
 * peak RSS ~20 MiB lower). */
#define RANK_COLS                                                                                          \
    (TL_TC(UID) | TL_TC(TS) | TL_TC(DUR) | TL_TC(NAME) | TL_TC(CAT) | TL_TC(KIND) | TL_TC(PID) | TL_TC(TID) | \
     TL_TC(IDFLAGS) | TL_TC(EXTID) | TL_TC(STREAM) | TL_TC(SEQ) | TL_TC(INDIMS) | TL_TC(INTYPE) |             \
     TL_TC(INSTRIDES) | TL_TC(CONCRETE) | TL_TC(PARENT) | TL_TC_OWNED)

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

/* The part of the PyTorch report (pytorch/report.c) the workbook pools:
 * gpu_timeline, ops_summary and the perf-model family sheets, computed by
 * the report's own sheet functions over the same context, in the same
 * order. ops_summary_by_category, ops_unique_args and unified_perf_summary
 * are not built (they were about half of a rank's report time, and the
 * workbook reads none of them). Every sort comparator on this path keeps
 * its state per thread, so ranks run in parallel.
 * With want_coll, the rank's collective events are read here too, before
 * the perf-model stage: the report's args pass copies
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
    c.pm_uncached = 1; /* no unified_perf_summary here */
    t1 = tl_now();
    int coll_done = 0;
    if (!rc) rc = pyt_sheet_gpu_timeline(&c, out, err);
    if (!rc && !c.gpu_only) {
        out->total_time_ms = c.total_time_ms;
        rc = pyt_sheet_ops_summary(&c, out, err);
        if (want_coll) {
            pyt_args_join(&c); /* the scan reads columns through the trace's reader */
            ro->coll_rc = coll_read_trace(t, coll_no, coll_args, &c, &ro->coll, &ro->coll_err);
            coll_done = 1;
            rank_coll_ready(ro, cs);
        }
        t2 = tl_now();
        /* The perf-model stage. Workers once went through it one at a time
         * (a counting gate) to keep their memory peaks apart; since a rank
         * builds only the pooled families (pooled_families) the stage adds
         * little, and the gate only made a worker wait while the other
         * waited for its family sheets: 8 x 1 GB, -j 2, without it the
         * analysis took ~0.1 s less at the same peak RSS (760-820 MiB). */
        pyt_perf_job *pj = pyt_perf_start(&c);
        t3 = tl_now();
        /* the family sheets are built from the instances alone (their
         * strings live in the context and the dictionary): the events
         * columns, about half of what the rank holds, go now rather than
         * after the wait */
        rank_trace_drop_columns(rt);
        if (!rc) rc = pyt_perf_finish(&c, pj, out, err);
        else pyt_perf_finish(&c, pj, NULL, NULL);
        t4 = tl_now();
    }
    if (rc) tl_pyt_sheets_free(out);
    pyt_ctx_free(&c);
    /* no report (no GPU events) or a GPU-only trace: read the collectives alone */
    if (want_coll && !coll_done)
        ro->coll_rc = coll_read_trace(t, coll_no, NULL, NULL, &ro->coll, &ro->coll_err);
    tl_reader_drop_resident(t->reader);
    if (po->timing)
        fprintf(stderr, "corpus rank %d stages ms: ctx=%.1f timeline+ops+collectives=%.1f perf_start=%.1f "
                        "perf_wait=%.1f free=%.1f\n",
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
    if (tl_reader_open(s, &r, &err) || load_rank_trace(r, id, &rt, &err)) {
        snprintf(ro->msg, sizeof ro->msg, "%s", err.msg);
        if (want_coll) ro->coll_rc = err.code ? err.code : TL_ESTORE, ro->coll_err = err;
        if (r) tl_reader_close(r);
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
    const char *fams[NPERF + 1];
    char fambuf[NPERF][32];
    pooled_families(fams, fambuf);
    po.perf_families = fams;
    tl_pyt_sheets sh;
    int rc = rank_pytorch(&rt, &po, cat, coll_rank_no, ro, want_coll, cs, &sh, &err);
    if (rc) {
        snprintf(ro->msg, sizeof ro->msg, "%s", err.msg);
    } else {
        ro->ok = 1;
        for (size_t i = 0; i < sh.n; i++) {
            tl_table *x = sh.v[i];
            int k;
            if (!strcmp(x->name, "gpu_timeline")) ro->timeline = x, sh.v[i] = NULL;
            else if (!strcmp(x->name, "ops_summary")) ro->ops = x, sh.v[i] = NULL;
            else if ((k = perf_slot(x->name)) >= 0) ro->perf[k] = x, sh.v[i] = NULL;
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
    for (int k = 0; k < NPERF; k++) tl_table_free(ro->perf[k]);
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
} pool;

/* The cross-rank collective analysis over every rank's events (which it
 * takes from the ranks). */
static void run_collectives(pool *p)
{
    double t0 = tl_now();
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
    while (mine && cs->pending) pthread_cond_wait(&cs->cv, &cs->mu);
    pthread_mutex_unlock(&cs->mu);
    if (mine) run_collectives(p);
}

static void *worker(void *arg)
{
    pool *p = arg;
    for (;;) {
        size_t i = atomic_fetch_add(&p->next, 1);
        if (i >= p->n) break;
        rank_run(p->s, p->ids[i], (int)i, &p->ro[i], p->o, p->want_coll ? &p->cs : NULL, p->cat,
                 p->want_coll);
        /* no malloc_trim here: the next rank reuses what this one freed
         * (corpus-report runs all threads on one arena, cmd_corpus_report.c);
         * trimmed, every rank faulted its ~0.3 GB in again */
    }
    if (p->want_coll) collectives_when_read(p);
    return NULL;
}

/* ---- pooled sheets ------------------------------------------------------------------------ */

static int ends_with(const char *s, const char *suf)
{
    size_t n = strlen(s), m = strlen(suf);
    return n >= m && !strcmp(s + n - m, suf);
}

static void set_cell_from(tl_table *dst, size_t dc, size_t dr, const tl_table *src, size_t sc, size_t sr)
{
    if (tl_table_is_missing(src, sc, sr)) return;
    const tl_column *c = &src->cols[sc];
    switch (c->type) {
    case TL_STR: tl_table_set_str(dst, dc, dr, c->v.s[sr]); break;
    case TL_I64: tl_table_set_i64(dst, dc, dr, c->v.i[sr]); break;
    case TL_F64: tl_table_set_f64(dst, dc, dr, c->v.f[sr]); break;
    case TL_BOOL: tl_table_set_bool(dst, dc, dr, c->v.b[sr]); break;
    }
}

/* A pooled statistic column: "<base>_<stat>". */
enum { ST_NONE, ST_MEAN, ST_MEDIAN, ST_STD, ST_MIN, ST_MAX, ST_SUM };
static int stat_of(const char *col, char *base, size_t bsz)
{
    static const struct { const char *suf; int st; } S[] = {
        {"_mean", ST_MEAN}, {"_median", ST_MEDIAN}, {"_std", ST_STD}, {"_min", ST_MIN}, {"_max", ST_MAX}, {"_sum", ST_SUM},
    };
    static const char *const BASES[] = {"TB/s", "TFLOPS/s", "Kernel Time (µs)", "Pct Roofline"};
    for (size_t i = 0; i < sizeof S / sizeof *S; i++) {
        if (!ends_with(col, S[i].suf)) continue;
        size_t n = strlen(col) - strlen(S[i].suf);
        for (size_t b = 0; b < sizeof BASES / sizeof *BASES; b++)
            if (strlen(BASES[b]) == n && !strncmp(col, BASES[b], n)) {
                snprintf(base, bsz, "%s", BASES[b]);
                return S[i].st;
            }
    }
    return ST_NONE;
}

/* One input row of a pooled group. */
typedef struct prow {
    const tl_table *t;
    size_t r;
} prow;

static double cellnum(const tl_table *t, const char *col, size_t r)
{
    long c = tl_table_col(t, col);
    return c < 0 ? NAN : tl_table_num(t, (size_t)c, r);
}

/* Pools per-rank summary rows of one group: sums, counts and extremes are
 * exact; means weight by count; std combines the per-rank variances
 * (parallel-variance formula); the median is the count-weighted median of
 * the per-rank medians (exact when one rank holds the group). */
static double pool_stat(int st, const char *base, const prow *rows, size_t n)
{
    char col[160];
    static const char *const SN[] = {"", "mean", "median", "std", "min", "max", "sum"};
    if (n == 1) { /* one rank holds the group: its own value, bit for bit */
        snprintf(col, sizeof col, "%s_%s", base, SN[st]);
        return cellnum(rows[0].t, col, rows[0].r);
    }
    double tot = 0, sum = 0, best = NAN;
    size_t nr = 0;
    for (size_t i = 0; i < n; i++) {
        double cnt = cellnum(rows[i].t, "name_count", rows[i].r);
        if (isnan(cnt) || cnt <= 0) cnt = 1;
        switch (st) {
        case ST_SUM:
        case ST_MEAN:
            snprintf(col, sizeof col, "%s_sum", base);
            if (tl_table_col(rows[i].t, col) >= 0) {
                double v = cellnum(rows[i].t, col, rows[i].r);
                if (!isnan(v)) sum += v, tot += cnt, nr++;
            } else {
                snprintf(col, sizeof col, "%s_mean", base);
                double v = cellnum(rows[i].t, col, rows[i].r);
                if (!isnan(v)) sum += v * cnt, tot += cnt, nr++;
            }
            break;
        case ST_MIN:
        case ST_MAX: {
            snprintf(col, sizeof col, "%s_%s", base, st == ST_MIN ? "min" : "max");
            double v = cellnum(rows[i].t, col, rows[i].r);
            if (!isnan(v) && (isnan(best) || (st == ST_MIN ? v < best : v > best))) best = v;
            break;
        }
        default: break;
        }
    }
    if (st == ST_SUM) return nr ? sum : NAN;
    if (st == ST_MEAN) return tot > 0 ? sum / tot : NAN;
    if (st == ST_MIN || st == ST_MAX) return best;
    if (st == ST_STD) {
        double M = pool_stat(ST_MEAN, base, rows, n), ss = 0, N = 0;
        if (isnan(M)) return NAN;
        for (size_t i = 0; i < n; i++) {
            double cnt = cellnum(rows[i].t, "name_count", rows[i].r);
            if (isnan(cnt) || cnt <= 0) cnt = 1;
            snprintf(col, sizeof col, "%s_mean", base);
            double m = cellnum(rows[i].t, col, rows[i].r);
            snprintf(col, sizeof col, "%s_std", base);
            double s = cellnum(rows[i].t, col, rows[i].r);
            if (isnan(m)) continue;
            if (isnan(s)) s = 0;
            ss += (cnt - 1) * s * s + cnt * (m - M) * (m - M);
            N += cnt;
        }
        return N > 1 ? sqrt(ss / (N - 1)) : NAN;
    }
    if (st == ST_MEDIAN) {
        snprintf(col, sizeof col, "%s_median", base);
        /* count-weighted median of the medians */
        double *v = tl_xmalloc(n * sizeof *v), *w = tl_xmalloc(n * sizeof *w);
        size_t m = 0;
        double W = 0;
        for (size_t i = 0; i < n; i++) {
            double x = cellnum(rows[i].t, col, rows[i].r);
            if (isnan(x)) continue;
            double cnt = cellnum(rows[i].t, "name_count", rows[i].r);
            v[m] = x, w[m] = isnan(cnt) || cnt <= 0 ? 1 : cnt, W += w[m], m++;
        }
        for (size_t i = 1; i < m; i++) /* insertion sort by value */
            for (size_t j = i; j > 0 && v[j - 1] > v[j]; j--) {
                double a = v[j]; v[j] = v[j - 1]; v[j - 1] = a;
                a = w[j]; w[j] = w[j - 1]; w[j - 1] = a;
            }
        double acc = 0, res = NAN;
        for (size_t i = 0; i < m; i++) {
            acc += w[i];
            if (acc * 2 >= W) { res = v[i]; break; }
        }
        free(v), free(w);
        return res;
    }
    return NAN;
}

static void stable_sort_desc(size_t *idx, size_t n, const double *key)
{
    for (size_t i = 1; i < n; i++) {
        size_t x = idx[i], j = i;
        double kx = isnan(key[x]) ? -INFINITY : key[x];
        while (j > 0 && (isnan(key[idx[j - 1]]) ? -INFINITY : key[idx[j - 1]]) < kx) idx[j] = idx[j - 1], j--;
        idx[j] = x;
    }
}

static tl_table *pool_group(size_t g, rank_out *ro, size_t n)
{
    /* inputs: (sheet, rank) tables in sheet order, then rank order */
    TL_VEC(const tl_table *) in = {0};
    TL_VEC(const char *) insheet = {0};
    int base = 0;
    for (size_t k = 0; k < g; k++)
        for (int j = 0; j < 4 && OPGROUPS[k].sheets[j]; j++) base++;
    for (int j = 0; j < 4 && OPGROUPS[g].sheets[j]; j++)
        for (size_t r = 0; r < n; r++)
            if (ro[r].perf[base + j] && ro[r].perf[base + j]->nrows) {
                tl_vec_push(&in, ro[r].perf[base + j]);
                tl_vec_push(&insheet, OPGROUPS[g].sheets[j]);
            }
    if (!in.n) {
        tl_vec_free(&in);
        tl_vec_free(&insheet);
        return NULL;
    }
    tl_table *t = tl_table_new(OPGROUPS[g].group);
    size_t c_sheet = tl_table_add_col(t, "perf_sheet", TL_STR);
    /* union of the columns, first appearance order */
    for (size_t i = 0; i < in.n; i++)
        for (size_t c = 0; c < in.v[i]->ncols; c++)
            if (tl_table_col(t, in.v[i]->cols[c].name) < 0) {
                size_t d = tl_table_add_col(t, in.v[i]->cols[c].name, in.v[i]->cols[c].type);
                t->cols[d].as_float = in.v[i]->cols[c].as_float;
            }
    /* groups: sheet + name + parameter texts */
    tl_smap m = {0};
    TL_VEC(char *) keys = {0};
    TL_VEC(prow) rows = {0};
    TL_VEC(size_t) gid = {0};
    size_t ng = 0;
    tl_buf key = {0};
    char buf[512];
    for (size_t i = 0; i < in.n; i++) {
        const tl_table *x = in.v[i];
        for (size_t r = 0; r < x->nrows; r++) {
            key.n = 0;
            tl_buf_puts(&key, insheet.v[i]);
            for (size_t c = 0; c < x->ncols; c++) {
                const char *cn = x->cols[c].name;
                if (strcmp(cn, "name") && strncmp(cn, "param: ", 7)) continue;
                tl_buf_putc(&key, '\x1f');
                tl_buf_puts(&key, cn);
                tl_buf_putc(&key, '=');
                tl_buf_puts(&key, tl_table_cell_text(x, c, r, buf, sizeof buf));
            }
            tl_buf_putc(&key, 0);
            char *k = tl_xstrdup(key.p);
            int isnew;
            size_t *slot = tl_smap_put(&m, k, strlen(k), &isnew);
            if (isnew) { *slot = ng++; tl_vec_push(&keys, k); }
            else free(k);
            prow pr = {x, r};
            tl_vec_push(&rows, pr);
            tl_vec_push(&gid, *slot);
        }
    }
    tl_table_set_nrows(t, ng);
    prow *grp = tl_xmalloc(rows.n * sizeof *grp);
    double *ksum = tl_xcalloc(ng, sizeof *ksum);
    char sbase[64];
    for (size_t gi = 0; gi < ng; gi++) {
        size_t m_ = 0;
        const char *sheet = NULL;
        for (size_t i = 0; i < rows.n; i++)
            if (gid.v[i] == gi) grp[m_++] = rows.v[i];
        for (size_t i = 0; i < in.n && !sheet; i++)
            if (in.v[i] == grp[0].t) sheet = insheet.v[i];
        tl_table_set_str(t, c_sheet, gi, sheet);
        for (size_t c = 1; c < t->ncols; c++) {
            const char *cn = t->cols[c].name;
            int st = stat_of(cn, sbase, sizeof sbase);
            if (!strcmp(cn, "name_count")) {
                int64_t tot = 0;
                for (size_t i = 0; i < m_; i++) tot += (int64_t)cellnum(grp[i].t, cn, grp[i].r);
                tl_table_set_i64(t, c, gi, tot);
            } else if (st != ST_NONE && t->cols[c].type == TL_F64) {
                double v = pool_stat(st, sbase, grp, m_);
                if (!isnan(v)) tl_table_set_f64(t, c, gi, v);
                if (st == ST_SUM && !strcmp(sbase, "Kernel Time (µs)")) ksum[gi] = v;
            } else {
                for (size_t i = 0; i < m_; i++) { /* first non-missing, rank order */
                    long sc = tl_table_col(grp[i].t, cn);
                    if (sc >= 0 && !tl_table_is_missing(grp[i].t, (size_t)sc, grp[i].r)) {
                        set_cell_from(t, c, gi, grp[i].t, (size_t)sc, grp[i].r);
                        break;
                    }
                }
            }
        }
    }
    /* Kernel Time (µs)_sum descending; kernel_time_sum_cum_pct is a fraction */
    size_t *perm = tl_xmalloc(ng * sizeof *perm);
    for (size_t i = 0; i < ng; i++) perm[i] = i;
    stable_sort_desc(perm, ng, ksum);
    tl_table_permute(t, perm, ng);
    size_t c_cum = tl_table_add_col(t, "kernel_time_sum_cum_pct", TL_F64);
    double total = 0, run = 0;
    for (size_t i = 0; i < ng; i++) total += isnan(ksum[i]) ? 0 : ksum[i];
    for (size_t i = 0; i < ng; i++) {
        run += isnan(ksum[perm[i]]) ? 0 : ksum[perm[i]];
        if (total > 0) tl_table_set_f64(t, c_cum, i, run / total);
    }
    free(perm), free(ksum), free(grp);
    for (size_t i = 0; i < keys.n; i++) free(keys.v[i]);
    tl_vec_free(&keys);
    tl_vec_free(&rows);
    tl_vec_free(&gid);
    tl_vec_free(&in);
    tl_vec_free(&insheet);
    tl_buf_free(&key);
    tl_smap_free(&m);
    return t;
}

/* kernel_launchers: ops_summary of every rank pooled by name. */
typedef struct launcher {
    const char *name, *cats;
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
             cc = tl_table_col(x, "Count"), ck = tl_table_col(x, "Categories");
        if (cn < 0 || cs < 0 || cc < 0) continue;
        for (size_t i = 0; i < x->nrows; i++) {
            const char *name = x->cols[cn].v.s[i];
            if (!name) continue;
            int isnew;
            size_t *slot = tl_smap_put(&m, name, strlen(name), &isnew);
            if (isnew) {
                *slot = L.n;
                launcher l = {name, ck >= 0 ? x->cols[ck].v.s[i] : NULL, 0, 0};
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
    /* ascending (name, cat), then count descending (stable) */
    size_t *idx = tl_xmalloc(G.n * sizeof *idx);
    for (size_t i = 0; i < G.n; i++) idx[i] = i;
    for (size_t i = 1; i < G.n; i++)
        for (size_t j = i; j > 0 && nc_cmp(G.v[idx[j - 1]].name, G.v[idx[j - 1]].cat, G.v[idx[j]].name, G.v[idx[j]].cat) > 0; j--) {
            size_t a = idx[j]; idx[j] = idx[j - 1]; idx[j - 1] = a;
        }
    for (size_t i = 1; i < G.n; i++)
        for (size_t j = i; j > 0 && G.v[idx[j - 1]].d.n < G.v[idx[j]].d.n; j--) {
            size_t a = idx[j]; idx[j] = idx[j - 1]; idx[j - 1] = a;
        }
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

static tl_table *sheet_short_ops(rank_out *ro, size_t n)
{
    tl_smap m = {0};
    TL_VEC(namecount) C = {0};
    int64_t total = 0;
    for (size_t r = 0; r < n; r++)
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
    tl_smap_free(&m);
    if (!C.n) return NULL;
    for (size_t i = 1; i < C.n; i++) { /* count desc, name asc */
        namecount x = C.v[i];
        size_t j = i;
        while (j > 0 && (C.v[j - 1].n < x.n || (C.v[j - 1].n == x.n && strcmp(C.v[j - 1].name, x.name) > 0)))
            C.v[j] = C.v[j - 1], j--;
        C.v[j] = x;
    }
    tl_table *t = tl_table_new("short_cpu_op_counts");
    size_t c0 = tl_table_add_col(t, "cpu_op", TL_STR), c1 = tl_table_add_col(t, "count", TL_I64);
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
    tl_table *t = tl_table_new("cuda_events_summary");
    size_t c0 = tl_table_add_col(t, "name", TL_STR), c1 = tl_table_add_col(t, "cat", TL_STR);
    static const char *const ST[] = {"count", "min_dur", "max_dur", "mean_dur"};
    size_t cst[4];
    char nm[64];
    for (int s = 0; s < 4; s++) {
        cst[s] = t->ncols;
        for (size_t r = 0; r < n; r++) {
            snprintf(nm, sizeof nm, "%s_%d", ST[s], ro[r].rank);
            tl_table_add_col(t, nm, s == 0 ? TL_I64 : TL_F64);
        }
    }
    tl_table_set_nrows(t, keys.n);
    for (size_t i = 0; i < keys.n; i++) {
        tl_table_set_str(t, c0, i, keys.v[idx[i]].name);
        tl_table_set_str(t, c1, i, keys.v[idx[i]].cat);
    }
    for (size_t r = 0; r < n; r++)
        for (size_t i = 0; i < ro[r].cuda.n; i++) {
            const dgroup *g = &ro[r].cuda.v[i];
            key.n = 0;
            tl_buf_printf(&key, "%s\x1f%s", g->name, g->cat);
            tl_buf_putc(&key, 0);
            size_t row = row_of[*tl_smap_get(&m, key.p, strlen(key.p))];
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

static int has_cat(const char *cats, const char *c)
{
    if (!cats) return 0;
    char q[96];
    snprintf(q, sizeof q, "'%s'", c);
    return strstr(cats, q) != NULL;
}
static int has_cat_prefix(const char *cats, const char *prefix)
{
    if (!cats) return 0;
    char q[96];
    snprintf(q, sizeof q, "'%s", prefix);
    return strstr(cats, q) != NULL;
}

/* Our op lists (the reference's live in perf_report_configs.py, which the
 * spec does not give): category first, then name patterns; first match wins. */
const char *tl_corpus_group_of(const char *name, const char *cats)
{
    if (!name) return NULL;
    if (!strncmp(name, "triton_", 7)) return "Triton";
    if (has_cat_prefix(cats, "SDPA") || has_cat_prefix(cats, "InferenceAttention") || strcasestr(name, "attention") ||
        strcasestr(name, "attn") || strcasestr(name, "fmha") || strcasestr(name, "::mha_"))
        return "Attention";
    if (has_cat(cats, "GEMM") || has_cat_prefix(cats, "GroupedGEMM") || !strcmp(name, "aten::linear") ||
        !strcmp(name, "aten::matmul") || strcasestr(name, "gemm"))
        return "GEMM";
    if (has_cat_prefix(cats, "CONV") || strcasestr(name, "conv")) return "Conv";
    if (has_cat_prefix(cats, "NORM") || has_cat_prefix(cats, "RMSNorm") || strcasestr(name, "norm")) return "Norm";
    if (strcasestr(name, "upsample") || strcasestr(name, "interpolate")) return "UpSample";
    if (strcasestr(name, "pad")) return "Pad";
    if (!strcmp(name, "aten::cat") || !strcmp(name, "aten::concat") || !strcmp(name, "aten::concatenate") ||
        !strcmp(name, "aten::stack") || strcasestr(name, "concat"))
        return "Concat";
    if (has_cat_prefix(cats, "MoE") || strcasestr(name, "moe") || strcasestr(name, "topk")) return "MoE";
    if (has_cat(cats, "elementwise") || has_cat(cats, "multi_tensor_apply")) return "Elemwise";
    return NULL;
}

static tl_table *sheet_breakdown(const launcher *L, size_t nl, size_t world, double comm_ms, double memcpy_ms,
                                 int quiet)
{
    static const char *const G[] = {"Attention", "GEMM", "Conv", "Norm", "UpSample", "Pad",
                                     "Elemwise", "Concat", "MoE", "Triton"};
    enum { NG = sizeof G / sizeof *G };
    double val[NG] = {0}, other = 0;
    tl_buf others = {0};
    size_t nother = 0;
    for (size_t i = 0; i < nl; i++) {
        double avg_s = L[i].sum_us / 1000 / (double)world / 1000;
        const char *g = tl_corpus_group_of(L[i].name, L[i].cats);
        int k = -1;
        for (int j = 0; g && j < NG; j++)
            if (!strcmp(G[j], g)) k = j;
        if (k >= 0) {
            val[k] += avg_s;
        } else {
            other += avg_s;
            if (nother++ < 20) tl_buf_printf(&others, "%s%s", nother > 1 ? ", " : "", L[i].name);
        }
    }
    if (nother && !quiet)
        fprintf(stderr, "grouped_breakdown: %zu kernel launcher(s) in no group, counted as Other: %s%s\n", nother,
                others.p, nother > 20 ? ", ..." : "");
    tl_buf_free(&others);
    tl_table *t = tl_table_new("grouped_breakdown");
    size_t c0 = tl_table_add_col(t, "group", TL_STR), c1 = tl_table_add_col(t, "Time (s)", TL_F64);
    double total = 0;
    for (int j = 0; j < NG; j++) {
        size_t r = tl_table_add_row(t);
        tl_table_set_str(t, c0, r, G[j]);
        tl_table_set_f64(t, c1, r, val[j]);
        total += val[j];
    }
    const char *tail[] = {"Comms", "Memcpy", "Other"};
    double tv[] = {isnan(comm_ms) ? 0 : comm_ms / 1000, isnan(memcpy_ms) ? 0 : memcpy_ms / 1000, other};
    for (int j = 0; j < 3; j++) {
        size_t r = tl_table_add_row(t);
        tl_table_set_str(t, c0, r, tail[j]);
        tl_table_set_f64(t, c1, r, tv[j]);
        total += tv[j];
    }
    size_t r = tl_table_add_row(t);
    tl_table_set_str(t, c0, r, "Total");
    tl_table_set_f64(t, c1, r, total);
    return t;
}

/* Copy of a table without the per-rank columns (rank_<r>_*). */
static tl_table *without_rank_cols(const tl_table *src, const char *name)
{
    tl_table *t = tl_table_new(name);
    tl_table_set_nrows(t, 0);
    for (size_t c = 0; c < src->ncols; c++) {
        const char *cn = src->cols[c].name;
        if (!strncmp(cn, "rank_", 5)) continue;
        size_t d = tl_table_add_col(t, cn, src->cols[c].type);
        t->cols[d].as_float = src->cols[c].as_float;
        tl_table_set_nrows(t, src->nrows);
        for (size_t r = 0; r < src->nrows; r++) set_cell_from(t, d, r, src, c, r);
    }
    return t;
}

static void set_name(tl_table *t, const char *name) { t->name = tl_arena_strdup(&t->arena, name); }

/* ---- the report ----------------------------------------------------------------------------- */

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

    rank_out *ro = tl_xcalloc(n, sizeof *ro);
    for (size_t i = 0; i < n; i++) {
        ro[i].rank = ranks ? ranks[i] : (int)i;
        tl_arena_init(&ro[i].arena, 1 << 14);
    }
    double t0 = tl_now();
    pool p = {.s = s, .ids = ids, .n = n, .ro = ro, .o = o, .cat = cat, .want_coll = n > 1};

    atomic_init(&p.next, 0);
    int workers = o->max_workers;
    if (workers <= 0) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        workers = cpus > 0 ? (int)cpus : 1;
        if (workers > 4) workers = 4;
    }
    if ((size_t)workers > n) workers = (int)n;
    pthread_mutex_init(&p.cs.mu, NULL);
    pthread_cond_init(&p.cs.cv, NULL);
    p.cs.pending = n;
    p.coll_summary = &stats->coll;
    pthread_t *th = tl_xcalloc((size_t)workers, sizeof *th);
    int started = 0;
    for (int i = 0; i + 1 < workers; i++) {
        if (pthread_create(&th[i], NULL, worker, &p)) break;
        started++;
    }
    worker(&p);
    for (int i = 0; i < started; i++) pthread_join(th[i], NULL);
    free(th);
    malloc_trim(0); /* the ranks' memory, before the pooled sheets and the writing */
    pthread_mutex_destroy(&p.cs.mu);
    pthread_cond_destroy(&p.cs.cv);
    stats->seconds_ranks = tl_now() - t0;
    for (size_t i = 0; i < n; i++)
        if (!ro[i].ok) {
            stats->failed_ranks++;
            if (!o->quiet) fprintf(stderr, "rank %d: no PyTorch report: %s\n", ro[i].rank, ro[i].msg);
        }

    /* 1. op groups */
    for (size_t g = 0; g < NGROUPS; g++) {
        tl_table *t = pool_group(g, ro, n);
        if (t) tl_vec_push(out, t);
        else if (!o->quiet) {
            fprintf(stderr, "no %s ops with a perf model in any rank (sheets", OPGROUPS[g].group);
            for (int j = 0; j < 4 && OPGROUPS[g].sheets[j]; j++) fprintf(stderr, " %s", OPGROUPS[g].sheets[j]);
            fprintf(stderr, "): sheet %s skipped\n", OPGROUPS[g].group);
        }
    }
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
        stats->seconds_collective = p.coll_seconds;
        tl_coll_sheets cs = p.coll;
        rc = p.coll_rc;
        if (rc && err) *err = p.coll_err;
        if (!rc) {
            stats->have_coll = 1;
            tl_table *sum = tl_coll_sheet(&cs, "nccl_summary_implicit_sync"), *lng = tl_coll_sheet(&cs, "nccl_long"),
                     *sync = tl_coll_sheet(&cs, "nccl_implicit_sync"), *a2a = tl_coll_sheet(&cs, "nccl_all2allv"),
                     *ir = tl_coll_sheet(&cs, "imbalance_ranks"), *ic = tl_coll_sheet(&cs, "imbalance_collectives");
            set_name(sum, "summary_nccl_implicit_sync_cat");
            set_name(lng, "long");
            tl_vec_push(out, sum);
            tl_vec_push(out, lng);
            tl_vec_push(out, without_rank_cols(sync, "nccl_implicit_sync_cat"));
            set_name(sync, "nccl_implicit_sync_cat_detailed");
            tl_vec_push(out, sync);
            if (a2a) tl_vec_push(out, a2a);
            if (ir) tl_vec_push(out, ir);
            if (ic) tl_vec_push(out, ic);
            /* the tables moved into out; free the rest */
            for (size_t i = 0; i < cs.n; i++) {
                tl_table *y = cs.v[i];
                if (y != sum && y != lng && y != sync && y != a2a && y != ir && y != ic) tl_table_free(y);
            }
            free(cs.v);
        }
    }
    for (size_t i = 0; i < n; i++) rank_free(&ro[i]);
    free(ro);
    tl_catreg_free(cat);
    if (rc) tl_corpus_sheets_free(out);
    return rc;
}
