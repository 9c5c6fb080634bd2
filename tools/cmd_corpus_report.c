/* cmd_corpus_report.c — `tracelens corpus-report` and the reference-style
 * `TraceLens_generate_multi_config_perf_report` (the generator of branch
 * feat/gen_report_node_replay_bench: flags -b -p -e -f -r -d -o, spec
 * formats.md §4.1–§4.3). It walks the base folder, groups rank files by
 * folder (one configuration each), ingests them into the store in
 * parallel, and writes one workbook per configuration from the store
 * (query/corpus_report). Unlike the reference, an existing workbook is left
 * alone and the other configurations still run. No analysis here. */
#include "tools/cli.h"
#include "ingest/ingest.h"
#include "query/multirank/multirank.h"
#include "report/report.h"

#include <malloc.h>
#include <errno.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef TL_DATADIR
#define TL_DATADIR "data"
#endif

static const char *HELP =
    "usage: TraceLens_generate_multi_config_perf_report -b BASE [-p PREFIX] [-e json|gz]\n"
    "           [-f SUBSTR [SUBSTR ...]] [-d] [-o XLSX] [-r]\n"
    "       tracelens [--db DIR] corpus-report -b BASE ...        (same flags)\n"
    "       tracelens [--db DIR] corpus-report --config NAME|DIR [-o XLSX]\n"
    "\n"
    "One performance workbook per configuration of a multi-rank corpus: every\n"
    "folder under BASE holding rank trace files (PyTorch profiler JSON) is one\n"
    "configuration. The files are ingested into the trace store (in parallel; a\n"
    "no-op for files already stored) and the workbook is computed from the store:\n"
    "  gemm, conv, attn, un_elemwise, bin_elemwise  the ops of the reference's op\n"
    "                       lists (e.g. aten::mm, aten::convolution) with input shapes,\n"
    "                       all ranks' rows grouped by name and parameters: FLOPs,\n"
    "                       bytes, TB/s, TFLOPS/s (also without data-movement\n"
    "                       kernels), kernel statistics, kernel_time_sum_cum_pct\n"
    "  kernel_launchers     launchers of all ranks by name, with per-rank averages\n"
    "  gpu_timelines        time_ms_<rank>, percent_<rank> per rank, avg and std\n"
    "  linked_and_short_kernels, unlinked_short_kernels_summary, short_cpu_op_counts\n"
    "  cuda_events_summary  runtime/driver calls: count|min|max|mean per rank, under\n"
    "                       a two-row header (statistic, rank) as the reference's\n"
    "  grouped_breakdown    seconds per launcher group (Attention, GEMM, ..., the\n"
    "                       reference's launcher lists), Comms, Memcpy, Other, Total\n"
    "  with more than one rank: summary_nccl_implicit_sync_cat, long,\n"
    "  nccl_implicit_sync_cat[_detailed], nccl_all2allv, and (ours) imbalance_ranks,\n"
    "  imbalance_collectives, with a summary of the slowest rank per collective.\n"
    "\n"
    "options (the reference generator's):\n"
    "  -b BASE        folder searched recursively (required unless --config)\n"
    "  -p PREFIX      rank prefix: the rank is the number right after it in the file\n"
    "                 name (default rank_; e.g. rank- or rank)\n"
    "  -e EXT         json (default) or gz: files BASE/**/*.EXT\n"
    "  -f SUBSTR ...  keep files whose path contains every SUBSTR (default rank_0,\n"
    "                 i.e. rank 0 only, as the reference; -f rank_ for all ranks)\n"
    "  -d             dry run: list configurations, files and workbook names\n"
    "  -o XLSX        workbook path (only with a single configuration)\n"
    "  -r             node replay: needs AMD GPUs and the vendor benchmark tools\n"
    "                 (amd-smi, hipblaslt-bench, MIOpenDriver) driven through\n"
    "                 PyTorch; not done by tracelens (a clear message, exit 1)\n"
    "options of tracelens:\n"
    "  --config NAME|DIR  a configuration already in the store (the folder name\n"
    "                 recorded at ingest, or its path) instead of -b\n"
    "  --csv DIR      also write DIR/<configuration>/<sheet>.csv\n"
    "  --html         also one self-contained HTML page beside each workbook (its\n"
    "                 name with .html): charts, per-rank bars and every sheet\n"
    "  -j, --max_workers N  threads for ingest, per-rank reports and the workbook's sheets\n"
    "  -q, --quiet    fewer messages\n"
    "  --mpi          under mpirun: each process ingests a contiguous share of the\n"
    "                 rank files into its own store (--db /local/tl-%r, %r = MPI\n"
    "                 rank) and computes those ranks; rank 0 gathers the per-rank\n"
    "                 results (never events) and writes the same workbook. With\n"
    "                 --config the store (or store list) must hold every rank\n"
    "  --db DIR       trace store (default $TRACELENS_DB, else $XDG_DATA_HOME/tracelens)\n"
    "  -h, --help     this text\n"
    "\n"
    "An existing workbook is not overwritten: that configuration is skipped and the\n"
    "others still run (the reference stops the whole run).\n"
    "exit status: 0 ok (a dry run, and skipped existing workbooks, included);\n"
    "1 a configuration failed or no trace file matched; 2 bad command line\n"
    "(-e other than json/gz, -o with several folders); 3 store error.\n";

static int usage(const char *prog, const char *fmt, const char *arg)
{
    fprintf(stderr, "usage: %s -b BASE [-p PREFIX] [-e EXT] [-f F ...] [-r] [-d] [-o XLSX] (see --help)\n%s: error: ",
            prog, prog);
    fprintf(stderr, fmt, arg);
    fputc('\n', stderr);
    return TL_EXIT_USAGE;
}

typedef TL_VEC(char *) strvec;

static int has_suffix(const char *s, const char *suf)
{
    size_t n = strlen(s), m = strlen(suf);
    return n >= m && !strcmp(s + n - m, suf);
}

/* Python's recursive glob of BASE/<any folders>/<name>.EXT: every
 * non-hidden file below the base whose name ends in dotext. */
typedef struct ext_walk {
    const char *dotext;
    strvec *out;
} ext_walk;

static void ext_file(void *ctx, const char *path, const char *name)
{
    ext_walk *e = ctx;
    if (has_suffix(name, e->dotext)) tl_vec_push(e->out, tl_xstrdup(path));
}

static int str_cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The integer right after the prefix in the file name, or -1. */
static long rank_after(const char *path, const char *prefix)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t pl = strlen(prefix);
    for (const char *p = base; (p = strstr(p, prefix)); p++)
        if (p[pl] >= '0' && p[pl] <= '9') return strtol(p + pl, NULL, 10);
    return -1;
}

typedef struct cfgdir {
    char *dir;          /* absolute */
    strvec files;
    long *ranks;
} cfgdir;

typedef struct ing {
    uint64_t *ids;      /* ids[i] is the i-th file ingested */
    int failures;
    size_t fresh;
} ing;

static void ing_done(void *ctx, size_t i, int rc, const tl_ingest_prep *pp, const tl_err *err)
{
    ing *c = ctx;
    if (rc) {
        fprintf(stderr, "tracelens: %s\n", err->msg);
        c->failures++;
        return;
    }
    c->ids[i] = pp->res.id;
    if (!pp->res.existed) c->fresh++;
}

static int workers_default(long w)
{
    if (w > 0) return (int)w;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    return cpus > 0 ? (int)(cpus > 8 ? 8 : cpus) : 1;
}

/* The workbook's sheets: computed here, or with mpi each process computes
 * its ranks [lo, hi) and rank 0 pools every process's (*writer: this
 * process has the sheets to write). */
static int config_sheets(tl_store *s, const uint64_t *ids, const int *ranks, size_t n, size_t lo, size_t hi,
                         int mpi, const tl_corpus_opts *o, tl_corpus_sheets *sh, tl_corpus_stats *st, tl_err *err,
                         int *writer)
{
    *writer = 1;
    if (!mpi) return tl_corpus_report(s, ids, ranks, n, o, sh, st, err);
    tl_buf mine = {0}, all = {0};
    double t0 = tl_now();
    int rc = tl_corpus_partials(s, ids, ranks, n, lo, hi, o, &mine, err);
    tl_cli_mpi_gather(mine.p, mine.n, &all);
    tl_buf_free(&mine);
    double ranks_s = tl_now() - t0; /* every process's ranks, up to the last one's arrival */
    *writer = tl_cli_mpi_rank() == 0;
    if (*writer && !rc) rc = tl_corpus_report_partials(all.p, all.n, n, o, sh, st, err);
    if (*writer && !rc) st->seconds_ranks = ranks_s;
    tl_buf_free(&all);
    return rc;
}

/* The command line of corpus-report. */
typedef struct corpus_args {
    const char *prog, *base, *prefix, *ext, *out, *db, *config, *csvdir;
    TL_VEC(const char *) filters; /* -f: every one must be in a path */
    int dry, replay, quiet, mpi, html; /* html: a page beside each workbook */
    long workers;
} corpus_args;

/* xlsx with its .xlsx replaced by .html (appended when it has none). */
static char *html_path(const char *xlsx)
{
    size_t n = strlen(xlsx);
    if (n >= 5 && strcmp(xlsx + n - 5, ".xlsx") == 0) n -= 5;
    char *p = tl_xmalloc(n + 6);
    memcpy(p, xlsx, n);
    memcpy(p + n, ".html", 6);
    return p;
}

/* malloc arenas for -j workers (0: the default). Up to 2 workers share one
 * arena: each arena keeps its own high-water mark, which on 2 cores cost
 * more peak memory than it saved time. From 3 on, one per worker: with 16
 * workers and their report threads on one arena, its lock was contended
 * (docs/SCALING.md). With several arenas the heap is not trimmed after the
 * ranks (tl_corpus_opts.keep_heap): the sheets reuse the freed memory, and
 * the trim of every arena would be serial work. */
static int malloc_arenas(long workers)
{
    int w = tl_corpus_workers((int)workers);
    return w <= 2 ? 1 : w;
}

/* Builds and writes one configuration's workbook (and with --html its
 * page) from stored ids (with --mpi, this process's share is [lo, hi)). */
static int one_config(tl_store *s, const uint64_t *ids, const int *ranks, size_t n, size_t lo, size_t hi,
                      const char *xlsx, const char *csv, const corpus_args *a)
{
    int mpi = a->mpi, quiet = a->quiet;
    tl_corpus_opts o;
    tl_corpus_opts_default(&o);
    o.max_workers = (int)a->workers;
    o.keep_heap = malloc_arenas(a->workers) > 1;
    o.quiet = quiet;
    o.datadir = tl_env.datadir ? tl_env.datadir : TL_DATADIR;
    o.timing = tl_env.timing;
    tl_corpus_sheets sh;
    tl_corpus_stats st;
    tl_err err = {0};
    double t0 = tl_now();
    int writer;
    if (config_sheets(s, ids, ranks, n, lo, hi, mpi, &o, &sh, &st, &err, &writer)) {
        fprintf(stderr, "tracelens: %s\n", err.msg);
        return tl_cli_exit_for(err.code, TL_EXIT_FAIL);
    }
    if (!writer) return TL_EXIT_OK;
    double dt = tl_now() - t0;
    /* the writing profiles its own serial and parallel stages (report/xlsx.c) */
    int rc = tl_cli_write_sheets(sh.v, sh.n, csv, xlsx, (int)a->workers);
    if (rc == TL_EXIT_OK) {
        printf("Wrote %s%s%s%s (%zu sheets; %.3f s from the store: ranks %.3f s, collectives %.3f s)\n", xlsx,
               csv ? " and " : "", csv ? csv : "", csv ? "/" : "", sh.n, dt,
               st.seconds_ranks, st.seconds_collective);
        if (!quiet) {
            for (size_t i = 0; i < sh.n; i++) printf("  %-34s %zu rows\n", sh.v[i]->name, sh.v[i]->nrows);
            if (st.have_coll) {
                tl_coll_sheets view = {0};
                for (size_t i = 0; i < sh.n; i++) tl_vec_push(&view, sh.v[i]);
                tl_cli_coll_print_summary(stdout, &view, &st.coll);
                free(view.v);
            }
        }
    }
    if (rc == TL_EXIT_OK && a->html) {
        char *page = html_path(xlsx);
        rc = tl_cli_write_html(sh.v, sh.n, page, xlsx);
        free(page);
    }
    tl_corpus_sheets_free(&sh);
    tl_corpus_stats_free(&st);
    return rc;
}

static int node_replay_message(void)
{
    static const char *const DEPS[] = {"amd-smi", "hipblaslt-bench", "MIOpenDriver"};
    int missing = 0;
    const char *path = tl_env.path;
    for (size_t i = 0; i < sizeof DEPS / sizeof *DEPS; i++) {
        int found = 0;
        if (path) {
            char *dup = tl_xstrdup(path), *save = NULL;
            for (char *d = strtok_r(dup, ":", &save); d && !found; d = strtok_r(NULL, ":", &save)) {
                char p[4096];
                snprintf(p, sizeof p, "%s/%s", d, DEPS[i]);
                found = access(p, X_OK) == 0;
            }
            free(dup);
        }
        if (!found) printf("Dependency not found: %s\n", DEPS[i]), missing++;
    }
    if (missing) printf("Node replay dependencies not met, terminating...\n");
    fflush(stdout);
    fprintf(stderr,
            "tracelens: node replay (-r) re-runs each GEMM/convolution on AMD GPUs through PyTorch and the vendor\n"
            "benchmark tools (amd-smi, hipblaslt-bench, MIOpenDriver): it needs GPUs and those tools, and tracelens\n"
            "does not do it. Run the reference generator on a ROCm machine for the *_node_replay sheets, or drop -r.\n");
    return TL_EXIT_FAIL;
}

enum { C_HELP, C_BASE, C_PREFIX, C_EXT, C_OUT, C_FILTER, C_DRY, C_REPLAY, C_QUIET, C_WORKERS, C_DB, C_CONFIG, C_CSV,
       C_MPI, C_HTML };
static const tl_cli_opt OPTS[] = {
    [C_HELP] = {"-h|--help", TL_CLI_FLAG},
    [C_BASE] = {"-b", TL_CLI_VALUE},
    [C_PREFIX] = {"-p", TL_CLI_VALUE},
    [C_EXT] = {"-e", TL_CLI_VALUE},
    [C_OUT] = {"-o", TL_CLI_VALUE},
    [C_FILTER] = {"-f", TL_CLI_VALUES},
    [C_DRY] = {"-d", TL_CLI_FLAG},
    [C_REPLAY] = {"-r", TL_CLI_FLAG},
    [C_QUIET] = {"-q|--quiet", TL_CLI_FLAG},
    [C_WORKERS] = {"-j|--max_workers", TL_CLI_VALUE},
    [C_DB] = {"--db", TL_CLI_VALUE},
    [C_CONFIG] = {"--config", TL_CLI_VALUE},
    [C_CSV] = {"--csv", TL_CLI_VALUE},
    [C_MPI] = {"--mpi", TL_CLI_FLAG},
    [C_HTML] = {"--html", TL_CLI_FLAG},
};


/* --config: the workbook of a configuration already in the store. */
static int report_stored_config(const corpus_args *a)
{
    int rc = TL_EXIT_OK;
    tl_store *s = tl_cli_store_read(a->db);
    if (!s) return TL_EXIT_STORE;
    uint64_t *ids;
    size_t n;
    char *dir = NULL;
    tl_err err = {0};
    if (tl_coll_config_ids(s, a->config, 0, a->quiet, &ids, &n, &dir, &err)) {
        fprintf(stderr, "tracelens: %s\n", err.msg);
        tl_store_close(s);
        free(dir);
        return err.code == TL_ENOTFOUND ? TL_EXIT_NOTFOUND : TL_EXIT_FAIL;
    }
    char *xlsx;
    if (a->out) xlsx = tl_xstrdup(a->out);
    else {
        const char *cn = strrchr(a->config, '/') ? strrchr(a->config, '/') + 1 : a->config;
        struct stat st;
        const char *d = dir && stat(dir, &st) == 0 && S_ISDIR(st.st_mode) ? dir : ".";
        size_t len = strlen(d) + strlen(cn) + 40;
        xlsx = tl_xmalloc(len);
        snprintf(xlsx, len, "%s/%s_performance_report.xlsx", d, cn);
    }
    struct stat st;
    if (tl_cli_mpi_any(stat(xlsx, &st) == 0)) {
        printf("Excel file already exists: (%s)\n", xlsx);
        printf("Not overwritten: remove it or give another -o.\n");
    } else if (a->dry) {
        printf("Configuration %s: %zu rank(s) in the store -> %s\n", a->config, n, xlsx);
        printf("==================== End of dry run ====================\n");
    } else {
        char *csv = NULL;
        if (a->csvdir) {
            const char *cn = strrchr(a->config, '/') ? strrchr(a->config, '/') + 1 : a->config;
            size_t len = strlen(a->csvdir) + strlen(cn) + 2;
            csv = tl_xmalloc(len);
            snprintf(csv, len, "%s/%s", a->csvdir, cn);
        }
        size_t lo = (size_t)tl_cli_mpi_rank() * n / (size_t)tl_cli_mpi_size();
        size_t hi = (size_t)(tl_cli_mpi_rank() + 1) * n / (size_t)tl_cli_mpi_size();
        rc = one_config(s, ids, NULL, n, lo, hi, xlsx, csv, a);
        free(csv);
    }
    free(xlsx), free(ids), free(dir);
    tl_store_close(s);
    return rc;
}

/* Ingests one configuration's rank files (c, ranks ascending) and writes
 * its workbook xlsx; 0 or an exit code. */
static int ingest_and_report(tl_store *s, const cfgdir *c, const char *xlsx, const corpus_args *a)
{
    int rc = TL_EXIT_OK;
    size_t n = c->files.n;
    uint64_t *ids = tl_xcalloc(n, sizeof *ids);
    int *rk = tl_xcalloc(n, sizeof *rk);
    tl_ingest_opts *io = tl_xcalloc(n, sizeof *io);
    char *dup = tl_xstrdup(c->dir);
    char *cfgname = tl_xstrdup(basename(dup));
    free(dup);
    for (size_t i = 0; i < n; i++) {
        rk[i] = (int)c->ranks[i];
        tl_cli_ingest_env(&io[i]);
        io[i].rank = c->ranks[i];
        io[i].config = cfgname;
    }
    /* with --mpi this process ingests and computes its share [lo, hi) */
    size_t lo = (size_t)tl_cli_mpi_rank() * n / (size_t)tl_cli_mpi_size();
    size_t hi = (size_t)(tl_cli_mpi_rank() + 1) * n / (size_t)tl_cli_mpi_size();
    ing g = {.ids = ids + lo};
    double t0 = tl_now();
    tl_ingest_many(s, (const char *const *)c->files.v + lo, io + lo, hi - lo, workers_default(a->workers), ing_done,
                   &g);
    if (tl_cli_mpi_any(g.failures) && !g.failures) g.failures = -1; /* another process's files failed */
    if (!a->quiet) {
        double dt = tl_now() - t0;
        printf("Ingested %zu trace(s) (%zu new) in %.2f s\n", hi - lo, g.fresh, dt);
    }
    if (g.failures < 0) {
        rc = TL_EXIT_FAIL;
    } else if (g.failures) {
        fprintf(stderr, "tracelens: %d file(s) of %s could not be ingested; configuration skipped\n",
                g.failures, c->dir);
        rc = TL_EXIT_FAIL;
    } else {
        char *csv = NULL;
        if (a->csvdir) {
            size_t len = strlen(a->csvdir) + strlen(cfgname) + 2;
            csv = tl_xmalloc(len);
            snprintf(csv, len, "%s/%s", a->csvdir, cfgname);
        }
        int r1 = one_config(s, ids, rk, n, lo, hi, xlsx, csv, a);
        free(csv);
        rc = r1;
    }
    free(cfgname), free(io), free(rk), free(ids);
    return rc;
}

/* Parses the command line into a; -1 when --help was printed, else 0 or
 * an exit code. */
static int parse_corpus(int argc, char **argv, corpus_args *a)
{
    int have_f = 0;
    tl_cli_args p;
    tl_cli_args_init(&p, argc, argv, OPTS, sizeof OPTS / sizeof *OPTS);
    for (int k; (k = tl_cli_next(&p)) != TL_CLI_END;) {
        const char *v = p.val;
        switch (k) {
        case C_HELP: fputs(HELP, stdout); return -1;
        case C_BASE: a->base = v; break;
        case C_PREFIX: a->prefix = v; break;
        case C_EXT: a->ext = v; break;
        case C_OUT: a->out = v; break;
        case C_FILTER:
            if (!tl_cli_nvalues(&p)) {
                return usage(a->prog, "argument %s: expected at least one argument", p.arg);
            }
            have_f = 1;
            a->filters.n = 0;
            for (size_t q = 0; q < tl_cli_nvalues(&p); q++) tl_vec_push(&a->filters, tl_cli_value(&p, q));
            break;
        case C_DRY: a->dry = 1; break;
        case C_REPLAY: a->replay = 1; break;
        case C_QUIET: a->quiet = 1; break;
        case C_WORKERS: {
            char *end;
            a->workers = strtol(v, &end, 10);
            if (*end || a->workers < 1) return usage(a->prog, "argument -j: invalid positive int value: '%s'", v);
            break;
        }
        case C_DB: a->db = v; break;
        case C_CONFIG: a->config = v; break;
        case C_CSV: a->csvdir = v; break;
        case C_MPI: a->mpi = 1; break;
        case C_HTML: a->html = 1; break;
        case TL_CLI_BAD: return usage(a->prog, "%s", p.msg);
        default: return usage(a->prog, "unrecognized arguments: %s", p.arg);
        }
    }
    if (!have_f) tl_vec_push(&a->filters, "rank_0");
    return 0;
}

/* -o, else <dir>/<basename(dir)>_<f1>_<f2>..._performance_report.xlsx. */
static char *workbook_path(const cfgdir *c, const corpus_args *a)
{
    if (a->out) return tl_xstrdup(a->out);
    tl_buf b = {0};
    char *dup = tl_xstrdup(c->dir);
    tl_buf_printf(&b, "%s/%s", c->dir, basename(dup));
    free(dup);
    for (size_t f = 0; f < a->filters.n; f++) tl_buf_printf(&b, "_%s", a->filters.v[f]);
    tl_buf_puts(&b, "_performance_report.xlsx");
    char *xlsx = tl_xstrndup(b.p, b.n);
    tl_buf_free(&b);
    return xlsx;
}

/* The reference's listing of one configuration. */
static void print_listing(const cfgdir *c, const char *xlsx, const corpus_args *a)
{
    printf("==================== Creating performance report ====================\n");
    printf("Parent directory: %s\n", c->dir);
    printf("Excel file: %s\n", strrchr(xlsx, '/') ? strrchr(xlsx, '/') + 1 : xlsx);
    printf("Filters: ");
    for (size_t f = 0; f < a->filters.n; f++) printf("%s%s", f ? ", " : "", a->filters.v[f]);
    printf("\nRank pattern: %s\nTraces:\n", a->prefix);
    for (size_t i = 0; i < c->files.n; i++)
        printf("%s\n", strrchr(c->files.v[i], '/') ? strrchr(c->files.v[i], '/') + 1 : c->files.v[i]);
    fflush(stdout);
}

int tl_cmd_corpus_report(int argc, char **argv)
{
    tl_cli_hugepages_reexec(); /* hundreds of MB of per-rank arrays: see cli_hugepages.c */
    /* Each rank's columns and arrays are allocated fresh and freed when the
     * rank is done. Freed memory stays in the process (no automatic trim;
     * with one arena tl_corpus_report trims once, after the ranks), so the
     * next rank reuses it instead of faulting it in again under the
     * kernel's mm lock. The arenas: see malloc_arenas. */
    mallopt(M_MMAP_THRESHOLD, 64 << 20);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
    corpus_args a = {.prog = argc > 0 ? argv[0] : "corpus-report", .prefix = "rank_", .ext = "json"};
    int rc = parse_corpus(argc, argv, &a);
    if (rc) {
        tl_vec_free(&a.filters);
        return rc < 0 ? TL_EXIT_OK : rc;
    }
    mallopt(M_ARENA_MAX, malloc_arenas(a.workers));
    if (a.replay) { tl_vec_free(&a.filters); return node_replay_message(); }
    if (strcmp(a.ext, "json") && strcmp(a.ext, "gz")) {
        printf("==================== Invalid extension %s, json and gz are supported ====================\n", a.ext);
        tl_vec_free(&a.filters);
        return TL_EXIT_USAGE;
    }
    if (!a.base && !a.config) { tl_vec_free(&a.filters); return usage(a.prog, "the following arguments are required: %s", "-b"); }
    if (a.base && a.config) { tl_vec_free(&a.filters); return usage(a.prog, "%s", "give -b BASE or --config NAME, not both"); }

    if (a.mpi && (rc = tl_cli_mpi_start("corpus-report", 1))) { tl_vec_free(&a.filters); return rc; }
    if (a.config) {
        rc = report_stored_config(&a);
        tl_vec_free(&a.filters);
        return tl_cli_mpi_finish(rc);
    }

    /* §4.2: walk, filter, group by parent folder */
    strvec files = {0};
    char dotext[16];
    snprintf(dotext, sizeof dotext, ".%s", a.ext);
    tl_cli_walk(a.base, &(tl_cli_walk_fns){ext_file, NULL, &(ext_walk){dotext, &files}});
    qsort(files.v, files.n, sizeof *files.v, str_cmp);
    size_t kept = 0;
    for (size_t i = 0; i < files.n; i++) {
        int ok = 1;
        for (size_t f = 0; f < a.filters.n && ok; f++) ok = strstr(files.v[i], a.filters.v[f]) != NULL;
        if (ok) files.v[kept++] = files.v[i];
        else free(files.v[i]);
    }
    files.n = kept;
    if (!files.n) {
        printf("==================== No %s files found, check filters and filepaths ====================\n", a.ext);
        tl_vec_free(&files);
        tl_vec_free(&a.filters);
        return tl_cli_mpi_finish(TL_EXIT_FAIL);
    }
    TL_VEC(cfgdir) dirs = {0};
    for (size_t i = 0; i < files.n; i++) {
        char *dup = tl_xstrdup(files.v[i]);
        char *real = realpath(dirname(dup), NULL);
        free(dup);
        if (!real) real = tl_xstrdup(".");
        size_t k;
        for (k = 0; k < dirs.n; k++)
            if (!strcmp(dirs.v[k].dir, real)) break;
        if (k == dirs.n) {
            cfgdir c = {.dir = real};
            tl_vec_push(&dirs, c);
        } else {
            free(real);
        }
        tl_vec_push(&dirs.v[k].files, files.v[i]);
    }
    if (a.out && dirs.n > 1) {
        printf("Multiple parent directories with traces found, give a more specific base path for the report with "
               "custom Excel path.\n");
        for (size_t k = 0; k < dirs.n; k++) printf("  %s\n", dirs.v[k].dir);
        rc = TL_EXIT_USAGE;
        goto done;
    }
    tl_store *s = NULL;
    for (size_t k = 0; k < dirs.n; k++) {
        cfgdir *c = &dirs.v[k];
        /* files by rank number */
        c->ranks = tl_xcalloc(c->files.n, sizeof *c->ranks);
        int bad = 0;
        for (size_t i = 0; i < c->files.n; i++) {
            c->ranks[i] = rank_after(c->files.v[i], a.prefix);
            if (c->ranks[i] < 0) {
                fprintf(stderr, "tracelens: %s: no rank number after '%s' in the file name (see -p); "
                                "configuration skipped\n", c->files.v[i], a.prefix);
                bad = 1;
            }
        }
        if (bad) { rc = TL_EXIT_FAIL; continue; }
        for (size_t i = 1; i < c->files.n; i++) { /* stable insertion sort by rank */
            long r = c->ranks[i];
            char *f = c->files.v[i];
            size_t j = i;
            while (j > 0 && c->ranks[j - 1] > r) c->ranks[j] = c->ranks[j - 1], c->files.v[j] = c->files.v[j - 1], j--;
            c->ranks[j] = r, c->files.v[j] = f;
        }
        char *xlsx = workbook_path(c, &a);
        print_listing(c, xlsx, &a);
        struct stat st;
        if (a.dry) {
            printf("==================== End of dry run ====================\n");
        } else if (tl_cli_mpi_any(stat(xlsx, &st) == 0)) {
            /* the reference stops the whole run here; we skip this one */
            printf("Excel file already exists: (%s)\n", xlsx);
            printf("Skipping this configuration; the others continue.\n");
        } else {
            if (!s && !(s = tl_cli_store(a.db))) { free(xlsx); rc = TL_EXIT_STORE; goto done; }
            int r1 = ingest_and_report(s, c, xlsx, &a);
            if (r1) rc = r1;
        }
        free(xlsx);
        fflush(stdout);
    }
    if (s) tl_store_close(s);
done:
    for (size_t k = 0; k < dirs.n; k++) {
        free(dirs.v[k].dir);
        free(dirs.v[k].ranks);
        tl_vec_free(&dirs.v[k].files); /* the strings belong to files */
    }
    tl_vec_free(&dirs);
    for (size_t i = 0; i < files.n; i++) free(files.v[i]);
    tl_vec_free(&files);
    tl_vec_free(&a.filters);
    return tl_cli_mpi_finish(rc);
}
