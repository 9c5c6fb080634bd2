/* cmd_query.c — `tracelens query`: the fast verbs over stored traces. It
 * parses flags into a tl_adhoc_query, runs it (query/adhoc/adhoc.h) and renders
 * the answer as an aligned table, CSV, JSON lines or xlsx. Ctrl-C raises a
 * flag the engine checks between traces; readers never write, so the store
 * is untouched and the command exits 130. */
#include "tools/cli.h"
#include "query/adhoc/adhoc.h"
#include "report/report.h"

#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

static const char *HELP =
    "Usage: tracelens query [--db DIR] [--table T] [--trace SEL]... [--where EXPR]\n"
    "                       [--by COLS] [--agg AGGS] [--select COLS] [--sort KEYS]\n"
    "                       [--pivot COL] [--top N] [--units ns|us|ms|s]\n"
    "                       [--format table|csv|jsonl|xlsx] [-o FILE]\n"
    "\n"
    "Ad-hoc questions over every stored trace, answered from the store alone (no\n"
    "trace is re-parsed). Only the columns and traces a query names are read.\n"
    "\n"
    "Tables (--table, default kernels):\n"
    "  kernels        GPU kernels: uid, launcher, launcher_name, name, ts, dur, device, stream, ...\n"
    "  ops            CPU ops: uid, parent, name, ts, dur, kernel_time, input_dims, args, ...\n"
    "  events         every complete event: uid, kind, name, cat, ts, dur, pid, tid, ...\n"
    "  traces         the catalog: one row per trace\n"
    "  gpu_timeline, ops_summary, ops_summary_by_category, ops_unique_args,\n"
    "  kernel_summary PyTorch report sheets, computed per trace from the store\n"
    "Every table also has the per-trace columns trace_id, path, format, config,\n"
    "rank, run, ingest_time, ingested, label.KEY and meta.PATH. Times are stored\n"
    "as integer nanoseconds; the table format shows them in ms, csv/jsonl/xlsx\n"
    "keep integer ns unless --units says otherwise (a converted column's header\n"
    "names its unit: \"dur (ms)\"). `tracelens query --columns TABLE` lists a\n"
    "table's columns.\n"
    "\n"
    "Options:\n"
    "  --trace SEL      which traces (repeatable; all must hold; commas inside one\n"
    "                   SEL are alternatives): ID or id prefix, label:KEY=VALUE\n"
    "                   (globs * ?), label:KEY, config:GLOB, run:GLOB, rank:N or\n"
    "                   rank:A-B, format:NAME, path:SUBSTR, since:WHEN, until:WHEN\n"
    "                   (YYYY-MM-DD[THH:MM] or an age: 30m, 12h, 7d), last:N (the N\n"
    "                   most recently ingested). Default: every stored trace.\n"
    "  --where EXPR     row filter: comparisons = != < <= > >=, regex ~ !~ (~* no\n"
    "                   case), LIKE (% _), CONTAINS, IN (...), IS [NOT] NULL, AND,\n"
    "                   OR, NOT, parentheses. Text in quotes; numbers may carry a\n"
    "                   time unit (10us, 1.5ms, 2s) and become nanoseconds.\n"
    "  --by COLS        group by these columns (comma list)\n"
    "  --agg AGGS       aggregates: count, count(col), sum, mean, min, max, median,\n"
    "                   p90, p99, pNN, std (sample), nunique; \"sum(dur) as total\"\n"
    "                   names a column. Default with --by: count.\n"
    "  --select COLS    columns of row output (no --by/--agg)\n"
    "  --sort KEYS      result columns, -col or \"col desc\" for descending.\n"
    "                   Default for groups: the first aggregate, largest first.\n"
    "  --pivot COL      side by side: one row per group of the --by columns, one\n"
    "                   column per value of COL (trace_id, label.KEY, run, ...)\n"
    "                   holding the aggregate (\"VALUE: AGG\" with several;\n"
    "                   labels as KEY=VALUE); value columns sorted (numbers by\n"
    "                   value), rows in the order of the grouped result's\n"
    "                   --sort; --top counts rows\n"
    "  --top N, --limit N   keep the first N rows after sorting\n"
    "  --units U        time columns (ts, dur, end_ts, kernel_time, and their\n"
    "                   sum/mean/min/max/median/pNN/std) in ns, us (or µs), ms\n"
    "                   or s. Default: ms in the table format, integer ns in\n"
    "                   csv, jsonl and xlsx\n"
    "  --format F       table (default), csv, jsonl or xlsx (xlsx needs -o)\n"
    "  -o, --output F   write to F instead of standard output; F ending in .csv,\n"
    "                   .jsonl, .json or .xlsx is written in that format (a\n"
    "                   --format of csv, jsonl or xlsx wins). Table text is cut\n"
    "                   to fit only on a terminal\n"
    "  --all            table format: print every row (default: first 50)\n"
    "  --columns [T]    list the columns of table T (default: of --table)\n"
    "  --threads N      worker threads for aggregation (default: all cores)\n"
    "  --mpi            under mpirun: each process queries its own stores (--db\n"
    "                   DIR/tl-%r, %r = MPI rank, or its share of the shards of a\n"
    "                   store list: several --db, --db @FILE); the partial\n"
    "                   answers are merged up a tree to rank 0, which prints what\n"
    "                   one process would over all the shards\n"
    "  -q, --quiet      no summary line on standard error\n"
    "Backquotes name columns with spaces or odd characters: `time ms`.\n"
    "Column names also match case-insensitively and with _ for spaces.\n"
    "\n"
    "Examples:\n"
    "  Total kernel time by kernel name over every stored trace, top 20:\n"
    "    tracelens query --table kernels --by name --agg 'sum(dur),count' --top 20\n"
    "  The same for the nightly runs only:\n"
    "    tracelens query --by name --agg 'sum(dur)' --top 20 --trace label:set=nightly\n"
    "  Which kernels got slower across the last 50 nightly runs (mean per run;\n"
    "  compare first and last runs, or see `tracelens sql --help` for a slope):\n"
    "    tracelens query --trace label:set=nightly --trace last:50 \\\n"
    "        --by name,ingest_time --agg 'mean(dur)' --sort name,ingest_time\n"
    "  GEMM time per batch size across a sweep (runs ingested with --label bs=N):\n"
    "    tracelens query --where \"name ~* 'gemm|cijk|matmul'\" --by label.bs \\\n"
    "        --agg 'sum(dur),count' --sort label.bs\n"
    "  Every run where idle time exceeded 20 %:\n"
    "    tracelens query --table gpu_timeline --where \"type = 'idle_time' and percent > 20\" \\\n"
    "        --select trace_id,path,percent\n"
    "  The 20 most expensive unique-arg convolutions over all ranks of config X:\n"
    "    tracelens query --table ops --trace config:X --where \"name ~ 'conv'\" \\\n"
    "        --by name,input_dims,input_type --agg 'sum(kernel_time),count,nunique(rank)' --top 20\n"
    "  Slow kernels of one trace, longest first, as CSV:\n"
    "    tracelens query --trace 0c8a --where 'dur > 1ms' --sort -dur --format csv\n"
    "  Kernel time per name, one column per batch size (runs labelled bs=N), in µs:\n"
    "    tracelens query --by name --agg 'sum(dur)' --pivot label.bs --units us --top 20\n"
    "  The same per trace, as a workbook:\n"
    "    tracelens query --by name --agg 'sum(dur)' --pivot trace_id -o side_by_side.xlsx\n"
    "  The p90/p99 of every kernel across ranks 0-7:\n"
    "    tracelens query --trace rank:0-7 --by name --agg 'p90(dur),p99(dur),max(dur)'\n"
    "\n"
    "Exit status: 0 ok; 2 bad query (the message points at the offending token);\n"
    "3 store error; 4 trace not found; 130 interrupted.\n";

static atomic_int g_cancel; /* lock-free: safe in a handler, read by scanning threads */
static void on_sigint(int sig)
{
    (void)sig;
    if (atomic_load(&g_cancel)) _exit(130); /* a second Ctrl-C: leave at once (readers never write) */
    atomic_store(&g_cancel, 1);
}

static void json_cell(tl_buf *b, const tl_table *t, size_t c, size_t r)
{
    if (tl_table_is_missing(t, c, r)) { tl_buf_puts(b, "null"); return; }
    const tl_column *col = &t->cols[c];
    char num[64];
    switch (col->type) {
    case TL_STR: tl_buf_json_str(b, col->v.s[r], strlen(col->v.s[r])); break;
    case TL_I64: tl_buf_printf(b, "%lld", (long long)col->v.i[r]); break;
    case TL_BOOL: tl_buf_puts(b, col->v.b[r] ? "true" : "false"); break;
    case TL_F64:
        if (!isfinite(col->v.f[r])) tl_buf_puts(b, "null");
        else { tl_fmt_pyfloat(col->v.f[r], num); tl_buf_puts(b, num); }
        break;
    }
}

/* The format an output file's name asks for (.csv, .jsonl/.json, .xlsx),
 * or NULL. */
static const char *format_of_path(const char *path)
{
    static const char *const ext[][2] = {{".csv", "csv"}, {".jsonl", "jsonl"}, {".json", "jsonl"}, {".xlsx", "xlsx"}};
    size_t n = path ? strlen(path) : 0;
    for (size_t k = 0; k < sizeof ext / sizeof *ext; k++) {
        size_t e = strlen(ext[k][0]);
        if (n > e && !strcasecmp(path + n - e, ext[k][0])) return ext[k][1];
    }
    return NULL;
}

/* Shared with cmd_sql.c: the format a result is written in. The default
 * table format gives way to the one -o FILE's extension names. */
const char *tl_cli_result_format(const char *format, const char *out_path)
{
    return !strcmp(format, "table") && format_of_path(out_path) ? format_of_path(out_path) : format;
}

/* Shared with cmd_sql.c: renders a result in the chosen format (see
 * tl_cli_result_format); table text is cut only on a terminal. */
int tl_cli_write_result(const tl_table *t, const char *format, const char *out_path, int all)
{
    tl_err err = {0};
    format = tl_cli_result_format(format, out_path);
    if (!strcmp(format, "xlsx")) {
        if (!out_path) { fprintf(stderr, "tracelens: --format xlsx needs -o FILE.xlsx\n"); return TL_EXIT_USAGE; }
        tl_table *tt = (tl_table *)t;
        if (tl_report_xlsx_write(out_path, &tt, 1, NULL, &err)) { fprintf(stderr, "tracelens: %s\n", err.msg); return TL_EXIT_FAIL; }
        return TL_EXIT_OK;
    }
    FILE *fp = stdout;
    if (out_path && strcmp(out_path, "-")) {
        fp = fopen(out_path, "w");
        if (!fp) { fprintf(stderr, "tracelens: cannot write %s\n", out_path); return TL_EXIT_FAIL; }
    }
    int rc = 0;
    if (!strcmp(format, "csv")) {
        rc = tl_report_csv_write_fp(t, fp, &err);
    } else if (!strcmp(format, "jsonl") || !strcmp(format, "json")) {
        tl_buf b = {0};
        for (size_t r = 0; r < t->nrows; r++) {
            b.n = 0;
            tl_buf_putc(&b, '{');
            for (size_t c = 0; c < t->ncols; c++) {
                if (c) tl_buf_putc(&b, ',');
                tl_buf_json_str(&b, t->cols[c].name, strlen(t->cols[c].name));
                tl_buf_putc(&b, ':');
                json_cell(&b, t, c, r);
            }
            tl_buf_puts(&b, "}\n");
            fwrite(b.p, 1, b.n, fp);
        }
        tl_buf_free(&b);
    } else {
        tl_term_opts o = {0};
        o.max_rows = all ? SIZE_MAX : 50;
        o.max_cell = !isatty(fileno(fp)) ? SIZE_MAX : all ? 120 : 80;
        rc = tl_report_term_print(fp, t, &o);
    }
    if (fp != stdout) fclose(fp); else fflush(fp);
    if (rc) { fprintf(stderr, "tracelens: %s\n", err.msg[0] ? err.msg : "write failed"); return TL_EXIT_FAIL; }
    return TL_EXIT_OK;
}

enum {
    Q_HELP, Q_DB, Q_TABLE, Q_TRACE, Q_WHERE, Q_BY, Q_AGG, Q_SELECT, Q_SORT, Q_TOP, Q_FORMAT, Q_OUTPUT, Q_THREADS,
    Q_ALL, Q_QUIET, Q_COLUMNS, Q_TABLES, Q_PIVOT, Q_UNITS, Q_MPI
};
static const tl_cli_opt OPTS[] = {
    [Q_HELP] = {"-h|--help", TL_CLI_FLAG},
    [Q_DB] = {"--db", TL_CLI_VALUE},
    [Q_TABLE] = {"-t|--table", TL_CLI_VALUE},
    [Q_TRACE] = {"--trace", TL_CLI_VALUE},
    [Q_WHERE] = {"-w|--where", TL_CLI_VALUE},
    [Q_BY] = {"--by|--group-by", TL_CLI_VALUE},
    [Q_AGG] = {"--agg", TL_CLI_VALUE},
    [Q_SELECT] = {"--select", TL_CLI_VALUE},
    [Q_SORT] = {"--sort", TL_CLI_VALUE},
    [Q_TOP] = {"--top|--limit", TL_CLI_VALUE},
    [Q_FORMAT] = {"-f|--format", TL_CLI_VALUE},
    [Q_OUTPUT] = {"-o|--output", TL_CLI_VALUE},
    [Q_THREADS] = {"--threads", TL_CLI_VALUE},
    [Q_ALL] = {"--all", TL_CLI_FLAG},
    [Q_QUIET] = {"-q|--quiet", TL_CLI_FLAG},
    [Q_COLUMNS] = {"--columns", TL_CLI_OPTIONAL},
    [Q_TABLES] = {"--tables", TL_CLI_FLAG},
    [Q_PIVOT] = {"--pivot", TL_CLI_VALUE},
    [Q_UNITS] = {"--units", TL_CLI_VALUE},
    [Q_MPI] = {"--mpi", TL_CLI_FLAG},
};

/* The exit code of a query error. */
static int exit_of(int rc)
{
    return rc == TL_EUSAGE ? TL_EXIT_USAGE : rc == TL_ENOTFOUND ? TL_EXIT_NOTFOUND : tl_cli_exit_for(rc, TL_EXIT_FAIL);
}

static int allgather(void *ctx, const void *p, size_t n, tl_buf *all)
{
    (void)ctx;
    return tl_cli_mpi_allgather(p, n, all) ? TL_EIO : TL_OK;
}

static int merge_part(void *ctx, tl_buf *acc, const void *in, size_t n)
{
    tl_err err = {0};
    int rc = tl_adhoc_part_merge(ctx, acc, in, n, &err);
    if (rc) fprintf(stderr, "tracelens query: process %d: %s\n", tl_cli_mpi_rank(), err.msg);
    return rc;
}

/* query --mpi: this process's stores queried, the partials folded to
 * rank 0, which writes the answer. */
static int run_mpi(tl_adhoc_query *q, const char *db, const char *format, const char *out_path, int all, int quiet)
{
    int rc = tl_cli_mpi_start("query", 1);
    if (rc) return rc;
    q->cancel = NULL; /* every process must reach the exchange and the merges */
    tl_store *s = NULL;
    int open_rc = tl_cli_store_share(db, &s);
    tl_adhoc_share share = {allgather, NULL, tl_cli_mpi_rank(), open_rc ? TL_ESTORE : 0};
    tl_err err = {0};
    tl_buf part = {0};
    double t0 = tl_now();
    int qrc = tl_adhoc_run_part(s, q, &share, &part, &err);
    int code = TL_EXIT_OK;
    if (qrc) {
        /* the same on every process: rank 0 says it (a process that could
         * not open its stores said so itself) */
        if (tl_cli_mpi_rank() == 0 && !open_rc) fprintf(stderr, "tracelens query: %s\n", err.msg);
        code = open_rc ? open_rc : exit_of(qrc);
    } else if (tl_cli_mpi_reduce(&part, merge_part, q)) {
        code = TL_EXIT_FAIL;
    } else if (tl_cli_mpi_rank() == 0) {
        tl_table *t = NULL;
        int frc = tl_adhoc_part_finish(q, part.p, part.n, &t, &err);
        if (frc) {
            fprintf(stderr, "tracelens query: %s\n", err.msg);
            code = exit_of(frc);
        } else {
            code = tl_cli_write_result(t, format, out_path, all || q->limit >= 0);
            if (!quiet && isatty(2))
                fprintf(stderr, "(%zu row%s in %.3f s on %d processes)\n", t->nrows, t->nrows == 1 ? "" : "s",
                        tl_now() - t0, tl_cli_mpi_size());
        }
        tl_table_free(t);
    }
    tl_buf_free(&part);
    if (s) tl_store_close(s);
    return tl_cli_mpi_finish(code);
}

int tl_cmd_query(int argc, char **argv)
{
    tl_adhoc_query q;
    memset(&q, 0, sizeof q);
    q.cores = tl_env.query_cores;
    q.limit = -1;
    const char *db = NULL, *format = "table", *out_path = NULL, *v;
    const char *columns = NULL;
    int want_columns = 0, all = 0, quiet = 0, mpi = 0;
    TL_VEC(const char *) sels = {0};
    tl_cli_args p;
    tl_cli_args_init(&p, argc, argv, OPTS, sizeof OPTS / sizeof *OPTS);
    for (int k; (k = tl_cli_next(&p)) != TL_CLI_END;) {
        v = p.val;
        if (k == Q_HELP) { fputs(HELP, stdout); tl_vec_free(&sels); return 0; }
        else if (k == Q_DB) db = v;
        else if (k == Q_TABLE) q.table = v;
        else if (k == Q_TRACE) tl_vec_push(&sels, v);
        else if (k == Q_WHERE) q.where = v;
        else if (k == Q_BY) q.by = v;
        else if (k == Q_AGG) q.agg = v;
        else if (k == Q_SELECT) q.select = v;
        else if (k == Q_SORT) q.sort = v;
        else if (k == Q_TOP) {
            char *e;
            long long n = strtoll(v, &e, 10);
            if (*e || n < 0) { fprintf(stderr, "tracelens query: --top wants a count, got '%s'\n", v); tl_vec_free(&sels); return TL_EXIT_USAGE; }
            q.limit = n;
        } else if (k == Q_FORMAT) format = v;
        else if (k == Q_OUTPUT) out_path = v;
        else if (k == Q_PIVOT) q.pivot = v;
        else if (k == Q_UNITS) q.units = v;
        else if (k == Q_THREADS) q.threads = atoi(v);
        else if (k == Q_ALL) all = 1;
        else if (k == Q_QUIET) quiet = 1;
        else if (k == Q_MPI) mpi = 1;
        else if (k == Q_COLUMNS) {
            want_columns = 1;
            columns = v;
        } else if (k == Q_TABLES) {
            for (const char *const *t = tl_adhoc_tables(); *t; t++) puts(*t);
            tl_vec_free(&sels);
            return 0;
        } else if (k == TL_CLI_BAD) {
            fprintf(stderr, "tracelens query: %s\n", p.msg);
            tl_vec_free(&sels);
            return TL_EXIT_USAGE;
        } else {
            fprintf(stderr, "tracelens query: unknown argument '%s'%s (see tracelens query --help)\n", p.arg, tl_cli_hint(&p));
            tl_vec_free(&sels);
            return TL_EXIT_USAGE;
        }
    }
    if (strcmp(format, "table") && strcmp(format, "csv") && strcmp(format, "jsonl") && strcmp(format, "json") &&
        strcmp(format, "xlsx")) {
        fprintf(stderr, "tracelens query: --format wants table, csv, jsonl or xlsx, got '%s'\n", format);
        tl_vec_free(&sels);
        return TL_EXIT_USAGE;
    }
    const char *unit;
    double div;
    if (q.units && tl_adhoc_unit(q.units, &unit, &div)) {
        fprintf(stderr, "tracelens query: --units wants ns, us (µs), ms or s, got '%s'\n", q.units);
        tl_vec_free(&sels);
        return TL_EXIT_USAGE;
    }
    if (!q.units && !strcmp(tl_cli_result_format(format, out_path), "table")) q.units = "ms";
    tl_err err = {0};
    if (want_columns) {
        tl_table *t;
        if (tl_adhoc_describe(columns ? columns : q.table ? q.table : "kernels", &t, &err)) {
            fprintf(stderr, "tracelens query: %s\n", err.msg);
            tl_vec_free(&sels);
            return TL_EXIT_USAGE;
        }
        int rc = tl_cli_write_result(t, format, out_path, 1);
        tl_table_free(t);
        tl_vec_free(&sels);
        return rc;
    }
    q.traces = sels.v;
    q.ntraces = sels.n;
    q.cancel = &g_cancel;
    if (mpi) {
        int rc = run_mpi(&q, db, format, out_path, all, quiet);
        tl_vec_free(&sels);
        return rc;
    }
    tl_store *s = tl_cli_store_read(db);
    if (!s) { tl_vec_free(&sels); return TL_EXIT_STORE; }
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old);
    double t0 = tl_now();
    tl_table *t = NULL;
    int rc = tl_adhoc_run(s, &q, &t, &err);
    double dt = tl_now() - t0;
    sigaction(SIGINT, &old, NULL);
    int code = TL_EXIT_OK;
    if (rc == TL_EINTR_ADHOC || atomic_load(&g_cancel)) {
        fprintf(stderr, "tracelens query: interrupted (the store is unchanged)\n");
        code = 130;
    } else if (rc) {
        fprintf(stderr, "tracelens query: %s\n", err.msg);
        code = exit_of(rc);
    } else {
        code = tl_cli_write_result(t, format, out_path, all || q.limit >= 0);
        if (!quiet && isatty(2))
            fprintf(stderr, "(%zu row%s in %.3f s)\n", t->nrows, t->nrows == 1 ? "" : "s", dt);
    }
    tl_table_free(t);
    tl_store_close(s);
    tl_vec_free(&sels);
    return code;
}
