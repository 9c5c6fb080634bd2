/* collective.c — the collective report's entry points: reading the ranks
 * on worker threads, and the order of the sheets (spec formats.md §3.8).
 * The sheets themselves are built in collective_sheets.c, collective_a2a.c
 * and collective_imbalance.c, on the §3 formulas of
 * collective_formulas.c. */
#include "query/multirank/collective_internal.h"
#include "query/core/pyval.h"

#include <libgen.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- options and results ------------------------------------------------- */

void tl_coll_opts_default(tl_coll_opts *o)
{
    memset(o, 0, sizeof *o);
    o->strict_metadata = 1;
    o->imbalance = 1;
}

void tl_coll_sheets_free(tl_coll_sheets *s)
{
    tl_tables_free(s->v, s->n);
    memset(s, 0, sizeof *s);
}

tl_table *tl_coll_sheet(const tl_coll_sheets *s, const char *name) { return tl_tables_find(s->v, s->n, name); }

void tl_coll_summary_free(tl_coll_summary *s)
{
    free(s->ranks);
    memset(s, 0, sizeof *s);
}

static void push(tl_coll_sheets *s, tl_table *t)
{
    if (!t) return;
    tl_vec_push(s, t);
}

/* A sheet of t's name with no columns and no rows; frees t. */
static tl_table *no_columns(tl_table *t)
{
    tl_table *e = tl_table_new(t->name);
    tl_table_free(t);
    return e;
}

/* ---- reading ranks on worker threads -------------------------------------- */

typedef struct pool {
    tl_store *s;
    const uint64_t *ids;
    coll_rank *ranks;
    atomic_int failed;
    int *rc;
    tl_err *errs;
} pool;

/* Rank r (tl_par_for); none more once one has failed. */
static void read_one(void *ctx, size_t r)
{
    pool *p = ctx;
    if (atomic_load(&p->failed)) return;
    p->rc[r] = coll_read_rank(p->s, p->ids[r], (int)r, &p->ranks[r], &p->errs[r]);
    if (p->rc[r]) atomic_store(&p->failed, 1);
}

static int read_ranks(tl_store *s, const uint64_t *ids, size_t world, int workers, coll_rank *ranks,
                      tl_err *err)
{
    pool p = {.s = s, .ids = ids, .ranks = ranks};
    atomic_init(&p.failed, 0);
    p.rc = tl_xcalloc(world, sizeof *p.rc);
    p.errs = tl_xcalloc(world, sizeof *p.errs);
    if (workers <= 0) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        workers = cpus > 0 ? (int)cpus : 1;
        if (workers > 8) workers = 8;
    }
    tl_par_for(world, workers, NULL, read_one, &p); /* the calling thread works too */
    int rc = 0;
    for (size_t r = 0; r < world; r++)
        if (p.rc[r]) {
            rc = p.rc[r];
            if (err) *err = p.errs[r];
            break;
        }
    free(p.rc);
    free(p.errs);
    return rc;
}

/* ---- the report ------------------------------------------------------------ */

/* The analysis over ranks already read (ranks[r] is rank r); consumes
 * them. tl_coll_report reads them from the store first; the
 * per-configuration workbook (corpus_report.c) reads each rank's trace once
 * for its own sheets and this analysis (coll_read_trace). */
int coll_report_ranks(coll_rank *ranks, size_t world, const tl_coll_opts *o, tl_coll_sheets *out,
                      tl_coll_summary *summary, tl_err *err);

int tl_coll_report(tl_store *s, const uint64_t *ids, size_t world, const tl_coll_opts *o,
                   tl_coll_sheets *out, tl_coll_summary *summary, tl_err *err)
{
    memset(out, 0, sizeof *out);
    if (summary) memset(summary, 0, sizeof *summary);
    tl_coll_opts def;
    if (!o) tl_coll_opts_default(&def), o = &def;
    if (world == 0) return tl_errf(err, TL_EUSAGE, "world_size must be provided");
    for (size_t i = 0; i < o->nagg; i++)
        if (!coll_agg_known(o->agg[i]))
            return tl_errf(err, TL_EUSAGE,
                           "unknown aggregation '%s' in --agg_metrics (known: mean median min max std sum count first last)",
                           o->agg[i]);
    coll_rank *ranks = tl_xcalloc(world, sizeof *ranks);
    int timing = o->timing;
    double t0 = tl_now();
    int rc = read_ranks(s, ids, world, o->max_workers, ranks, err);
    if (timing) fprintf(stderr, "timing: collective read %zu ranks %.3f s\n", world, tl_now() - t0);
    if (rc) {
        for (size_t r = 0; r < world; r++) coll_rank_free(&ranks[r]);
        free(ranks);
        return rc;
    }
    return coll_report_ranks(ranks, world, o, out, summary, err);
}

/* A sheet's last touches (node labels, integer time columns, int columns
 * with missing cells as floats), on the thread that built it: they read
 * only the run's settings and the sheet. */
static void finish_sheet(coll_run *run, tl_table *t)
{
    if (!t) return;
    coll_add_node_labels(run, t);
    coll_int_time_columns(run, t);
    tl_table_int_na_as_float(t);
}

/* The sheets read off the implicit-sync results (the summary, straggler
 * and imbalance sheets): once nccl_implicit_sync is built they only read
 * the run and that sheet, so each is built on a thread of its own. The
 * calling thread builds the smallest (by rank: a row per rank) and no
 * other, so that the analysis' own thread does the least: a fixed share
 * (with a shared work loop it would take whichever sheets come next). */
typedef struct sync_job {
    coll_run *run;
    const tl_table *sync;
    int which; /* 0 imbalance by rank, 1 summary, 2 straggler, 3 imbalance by collective */
    tl_table *out;
} sync_job;

static void *sync_sheet(void *arg)
{
    sync_job *j = arg;
    coll_run *run = j->run;
    const tl_table *sync = j->sync;
    switch (j->which) {
    case 0: j->out = run->o->imbalance ? coll_sheet_imb_ranks(run) : NULL; break;
    case 1: j->out = coll_sheet_summary_implicit(run, sync); break;
    case 2: j->out = sync->nrows ? coll_sheet_straggler(run) : NULL; break;
    default: j->out = run->o->imbalance && sync->nrows ? coll_sheet_imb_colls(run) : NULL; break;
    }
    finish_sheet(run, j->out);
    return NULL;
}

/* The four sheets into outs[], in sync_job's order; on threads unless
 * max_workers is 1. */
static void sync_sheets(coll_run *run, const tl_table *sync, tl_table *outs[4])
{
    sync_job j[4];
    coll_job th[4];
    for (int i = 0; i < 4; i++) j[i] = (sync_job){.run = run, .sync = sync, .which = i};
    for (int i = 3; i >= 0; i--) /* the others started first: the caller's own last */
        coll_job_start(&th[i], i > 0 && run->o->max_workers != 1, sync_sheet, &j[i]);
    for (int i = 0; i < 4; i++) {
        coll_job_join(&th[i]);
        outs[i] = j[i].out;
    }
}

typedef struct long_job {
    coll_run *run;
    tl_table *lng, *sum_long;
} long_job;

static void *long_sheets(void *arg)
{
    long_job *j = arg;
    j->lng = coll_sheet_long(j->run);
    j->sum_long = coll_sheet_summary_long(j->run);
    finish_sheet(j->run, j->lng);
    finish_sheet(j->run, j->sum_long);
    return NULL;
}

/* all_to_allv, its summary and heatmap: they only read the run after the
 * match, like the long sheets */
typedef struct a2a_job {
    coll_run *run;
    int rc;
    tl_err err;
    tl_table *a2a, *sum_a2a, *heat;
} a2a_job;

static void *a2a_sheets(void *arg)
{
    a2a_job *j = arg;
    j->rc = coll_sheet_a2av(j->run, &j->a2a, &j->err);
    if (j->rc || !j->a2a) return NULL;
    j->sum_a2a = coll_sheet_summary_a2av(j->run, j->a2a);
    if (j->run->o->all2allv_heatmap) j->heat = coll_sheet_heatmap(j->run);
    finish_sheet(j->run, j->a2a);
    finish_sheet(j->run, j->sum_a2a);
    finish_sheet(j->run, j->heat);
    return NULL;
}

int coll_report_ranks(coll_rank *ranks, size_t world, const tl_coll_opts *o, tl_coll_sheets *out,
                      tl_coll_summary *summary, tl_err *err)
{
    memset(out, 0, sizeof *out);
    if (summary) memset(summary, 0, sizeof *summary);
    tl_coll_opts def;
    if (!o) tl_coll_opts_default(&def), o = &def;
    static const char *const DEF_AGG[] = {"mean", "median", "min", "max"};
    int rc = 0;
    for (size_t i = 0; i < o->nagg && !rc; i++)
        if (!coll_agg_known(o->agg[i]))
            rc = tl_errf(err, TL_EUSAGE,
                         "unknown aggregation '%s' in --agg_metrics (known: mean median min max std sum count first last)",
                         o->agg[i]);

    coll_run run = {.o = o, .world = world};
    run.agg = o->nagg ? o->agg : DEF_AGG;
    run.nagg = o->nagg ? o->nagg : 4;
    tl_arena_init(&run.arena, 1 << 16);
    run.ranks = ranks;
    int timing = o->timing;
    double t0 = tl_now();
    if (rc || world == 0) {
        if (!rc) rc = tl_errf(err, TL_EUSAGE, "world_size must be provided");
        goto done;
    }

    /* §3.7: gpus per node from the flag, else rank 0's deviceProperties */
    if (o->gpus_per_node > 0) run.gpn = o->gpus_per_node;
    else if (run.ranks[0].ndevices > 0) run.gpn = run.ranks[0].ndevices;
    else if (!o->quiet)
        fprintf(stderr, "note: rank 0's trace has no deviceProperties; no node_id/node_span "
                        "columns (give --gpus_per_node)\n");

    if ((rc = coll_match(&run, err))) goto done;
    run.ts_int = run.dur_int = 1;
    for (size_t k = 0; k < world; k++)
        if (run.ranks[k].n) run.ts_int &= run.ranks[k].ts_int, run.dur_int &= run.ranks[k].dur_int;

    /* nccl_long and its summary, and the all_to_allv sheets, on threads
     * of their own beside the implicit-sync sheets: after the match they
     * only read the run, and the implicit sheet writes only its sync_*
     * arrays, which neither reads (8 x 1 GB corpus: 0.34 -> 0.31 s with
     * the long sheets on a thread) */
    long_job lj = {&run, NULL, NULL};
    a2a_job aj = {.run = &run};
    coll_job lth, ath;
    coll_job_start(&lth, o->max_workers != 1, long_sheets, &lj);
    coll_job_start(&ath, o->max_workers != 1, a2a_sheets, &aj);
    tl_table *sync = NULL, *after[4] = {0};
    rc = coll_sheet_implicit(&run, &sync, err);
    if (!rc) sync_sheets(&run, sync, after);
    if (!rc) finish_sheet(&run, sync); /* once the sheets read off it are built */
    tl_table *imb_r = after[0], *sum_sync = after[1], *strag = after[2], *imb_c = after[3];
    coll_job_join(&lth);
    coll_job_join(&ath);
    tl_table *lng = lj.lng, *sum_long = lj.sum_long, *a2a = aj.a2a, *sum_a2a = aj.sum_a2a, *heat = aj.heat;
    if (!rc && aj.rc) {
        rc = aj.rc;
        if (err) *err = aj.err;
    }
    if (rc) {
        tl_table *made[] = {lng, sum_long, sync, sum_sync, a2a, sum_a2a, heat, strag, imb_r, imb_c};
        for (size_t i = 0; i < sizeof made / sizeof *made; i++) tl_table_free(made[i]);
        goto done;
    }

    /* The reference's sheets from an empty pandas DataFrame() have no
     * columns (their CSV is "\n"): nccl_implicit_sync and its summary with no
     * implicit-sync collective, nccl_long and nccl_summary_long with no
     * collective at all. (Their finishing touches, done already, change
     * nothing in a sheet without rows.) */
    if (!sync->nrows) {
        sync = no_columns(sync);
        sum_sync = no_columns(sum_sync);
    }
    if (!run.nall) {
        lng = no_columns(lng);
        sum_long = no_columns(sum_long);
    }
    /* §3.8 order, then ours */
    tl_table *order[] = {sum_sync, sum_long, sum_a2a, heat, lng, sync, a2a, strag, imb_r, imb_c};
    for (size_t i = 0; i < sizeof order / sizeof *order; i++)
        if (order[i]) push(out, order[i]);
    if (timing) fprintf(stderr, "timing: collective match + sheets %.3f s\n", tl_now() - t0);
    if (summary) {
        summary->world = world;
        summary->simplified = run.simplified;
        summary->gpus_per_node = run.gpn;
        summary->n_long = run.nall;
        summary->n_sync = sync->nrows;
        summary->n_a2av = a2a ? a2a->nrows : 0;
        summary->ranks = tl_xcalloc(world, sizeof *summary->ranks);
        for (size_t r = 0; r < world; r++) summary->ranks[r] = run.ranks[r].info;
    }
done:
    for (size_t r = 0; r < world; r++) coll_rank_free(&run.ranks[r]);
    free(run.ranks);
    free(run.all);
    for (size_t g = 0; g < run.ngroups; g++) free(run.groups[g].ev);
    free(run.groups);
    free(run.sync_g);
    free(run.sync_m);
    free(run.sync_wait);
    tl_arena_free(&run.arena);
    return rc;
}

/* ---- a stored configuration ------------------------------------------------- */

typedef struct cfg_scan {
    const char *config;
    int by_dir;             /* config names a directory */
    TL_VEC(uint64_t) id;
    TL_VEC(int64_t) rank;
    TL_VEC(int64_t) when;
    TL_VEC(char *) path;
    tl_arena a;
} cfg_scan;

static int cfg_cb(void *ctx, uint64_t id, const char *json)
{
    cfg_scan *c = ctx;
    tl_arena_free(&c->a);
    tl_arena_init(&c->a, 1 << 14);
    tl_pv *root;
    if (tl_pv_parse(&c->a, json, strlen(json), &root, NULL)) return 0;
    const tl_pv *cfg = tl_pv_get(root, "config"), *path = tl_pv_get(root, "path");
    const tl_pv *rank = tl_pv_get(root, "rank"), *when = tl_pv_get(root, "ingest_time_ns");
    if (!path || path->kind != TL_PV_STR || !rank || rank->kind != TL_PV_INT) return 0;
    int match;
    if (c->by_dir) {
        char *dup = tl_xstrdup(path->u.s.p);
        match = !strcmp(dirname(dup), c->config);
        free(dup);
    } else {
        match = cfg && cfg->kind == TL_PV_STR && !strcmp(cfg->u.s.p, c->config);
    }
    if (!match || rank->u.i.v < 0) return 0;
    tl_vec_push(&c->id, id);
    tl_vec_push(&c->rank, rank->u.i.v);
    tl_vec_push(&c->when, when && when->kind == TL_PV_INT ? when->u.i.v : 0);
    tl_vec_push(&c->path, tl_xstrdup(path->u.s.p));
    return 0;
}

/* Deepest directory containing every path (component-wise). */
static char *common_dir(char *const *paths, size_t n)
{
    char *common = NULL;
    for (size_t i = 0; i < n; i++) {
        char *dup = tl_xstrdup(paths[i]);
        char *d = dirname(dup);
        if (!common) {
            common = tl_xstrdup(d);
        } else {
            size_t k = 0, cut = 0;
            for (;; k++) {
                char a = common[k], b = d[k];
                int end_a = a == 0 || a == '/', end_b = b == 0 || b == '/';
                if (end_a && end_b) cut = k; /* both at a component boundary */
                if (a != b || a == 0) break;
            }
            common[cut] = 0;
            if (cut == 0) strcpy(common, paths[i][0] == '/' ? "/" : ".");
        }
        free(dup);
    }
    return common;
}

int tl_coll_config_ids(tl_store *s, const char *config, size_t world_hint, int quiet,
                       uint64_t **ids_out, size_t *world_out, char **dir_out, tl_err *err)
{
    *ids_out = NULL;
    *world_out = 0;
    if (dir_out) *dir_out = NULL;
    cfg_scan c = {.config = config};
    char *real = NULL;
    if (strchr(config, '/')) {
        real = realpath(config, NULL);
        c.config = real ? real : config;
        c.by_dir = 1;
    }
    tl_arena_init(&c.a, 1 << 14);
    tl_reader *r;
    int rc = tl_reader_open(s, &r, err);
    if (rc) goto out;
    rc = tl_reader_foreach(r, cfg_cb, &c, err);
    tl_reader_close(r);
    if (rc) goto out;
    if (!c.id.n) {
        rc = tl_errf(err, TL_ENOTFOUND,
                     "no stored traces of configuration '%s' with a rank (ingest the folder of rank files first; "
                     "`tracelens ls` lists what is stored)", config);
        goto out;
    }
    int64_t maxr = -1;
    for (size_t i = 0; i < c.id.n; i++)
        if (c.rank.v[i] > maxr) maxr = c.rank.v[i];
    size_t world = world_hint ? world_hint : (size_t)maxr + 1;
    uint64_t *ids = tl_xcalloc(world, sizeof *ids);
    int64_t *when = tl_xcalloc(world, sizeof *when);
    char *have = tl_xcalloc(world, 1);
    for (size_t i = 0; i < c.id.n; i++) {
        int64_t rk = c.rank.v[i];
        if ((size_t)rk >= world) continue;
        if (have[rk] && ids[rk] != c.id.v[i]) {
            if (!quiet)
                fprintf(stderr, "note: configuration '%s' has several traces for rank %lld; using the latest ingested\n",
                        config, (long long)rk);
            if (c.when.v[i] < when[rk]) continue;
        }
        have[rk] = 1, ids[rk] = c.id.v[i], when[rk] = c.when.v[i];
    }
    tl_buf miss = {0};
    size_t nmiss = 0;
    for (size_t k = 0; k < world; k++)
        if (!have[k]) tl_buf_printf(&miss, "%s%zu", nmiss++ ? ", " : "", k);
    if (nmiss) {
        rc = tl_errf(err, TL_ENOTFOUND,
                     "Missing ranks in configuration '%s': [%s]. NcclAnalyser requires a complete rank set (0..%zu)",
                     config, miss.p, world - 1);
        tl_buf_free(&miss);
        free(ids), free(when), free(have);
        goto out;
    }
    tl_buf_free(&miss);
    if (dir_out) *dir_out = common_dir(c.path.v, c.path.n);
    free(when), free(have);
    *ids_out = ids;
    *world_out = world;
out:
    for (size_t i = 0; i < c.path.n; i++) free(c.path.v[i]);
    tl_vec_free(&c.id);
    tl_vec_free(&c.rank);
    tl_vec_free(&c.when);
    tl_vec_free(&c.path);
    tl_arena_free(&c.a);
    free(real);
    return rc;
}
