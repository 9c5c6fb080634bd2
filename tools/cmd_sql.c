/* cmd_sql.c — `tracelens sql "SELECT ..."`: full SQL over the stored traces
 * through SQLite virtual tables (query/adhoc/adhoc.h). It only parses flags,
 * runs the statements and renders the last result with the same writers
 * as `tracelens query`. Ctrl-C interrupts SQLite (tl_sql_interrupt) and
 * exits 130; the store is only ever read, and the SQL may only read
 * (query/adhoc/sqlvtab.c refuses every statement that would write). */
#include "tools/cli.h"
#include "query/adhoc/adhoc.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* In cmd_query.c. */

static const char *HELP =
    "Usage: tracelens sql [--db DIR] [--format table|csv|jsonl|xlsx] [-o FILE] [--all]\n"
    "                     [--units ns|us|ms|s] \"SQL\"\n"
    "       tracelens sql [options] -f FILE.sql      (or - for standard input)\n"
    "       tracelens sql [--db DIR] --schema [TABLE]  (every table's columns)\n"
    "\n"
    "SQL (SQLite) over every stored trace, answered from the store alone. The\n"
    "tables need no CREATE; several ';'-separated statements may be given and the\n"
    "last result is printed. Over a store list (--db A --db B ..., --db @FILE)\n"
    "the tables hold every shard's traces, so one statement spans them all.\n"
    "\n"
    "Tables (times in nanoseconds; `tracelens query --columns T` describes each):\n"
    "  traces   trace_id, path, format, config, rank, run, ingest_time, ingested,\n"
    "           events, gpu_events, n_kernels, n_cpu_ops, ts_min, ts_max, gpu_span,\n"
    "           metadata (JSON: use json_extract), and label_KEY for each label key\n"
    "  kernels  trace_id, uid, launcher, launcher_name, name, ts, dur, end_ts, device,\n"
    "           stream, correlation, grid, block, parent, linked, pid, tid, args\n"
    "  ops      trace_id, uid, parent, parent_name, name, ts, dur, end_ts, kernel_time,\n"
    "           kernel_count, args, input_dims, input_type, input_strides, ...\n"
    "  events   trace_id, uid, kind, name, cat, ts, dur, pid, tid, ... (every event)\n"
    "  gpu_timeline, ops_summary, ops_summary_by_category, ops_unique_args,\n"
    "  kernel_summary   the PyTorch report sheets per trace (column names in\n"
    "           lower case with _ : time_ms, percent, kernel_duration_us_sum, ...;\n"
    "           the sheets' own headers name the same columns in double quotes:\n"
    "           SELECT \"op category\", \"Kernel duration (µs)_sum\" ...)\n"
    "Row tables also have hidden columns path, format, config, rank, run,\n"
    "ingest_time and label_KEY for filtering. Conditions on trace_id, labels,\n"
    "config, rank, ... select traces before anything is read; =, <, >, LIKE and\n"
    "REGEXP (POSIX extended) on row columns are pushed down too, and\n"
    "uid = ... with trace_id = ... is a direct lookup (joins on launcher/parent).\n"
    "Double quotes name columns only (an unknown \"name\" is an error, not text);\n"
    "text takes single quotes.\n"
    "\n"
    "The SQL only reads (it may come from a dashboard or a shared file): ATTACH,\n"
    "DETACH, VACUUM, PRAGMAs other than the reporting ones (table_info, ...),\n"
    "CREATE, DROP, INSERT, UPDATE, DELETE (temporary tables too) and\n"
    "load_extension are refused: \"sql: only reading is allowed (ATTACH refused)\".\n"
    "\n"
    "Options:\n"
    "  --format F   table (default), csv, jsonl, xlsx (needs -o)\n"
    "  -o FILE      write there instead of standard output; FILE ending in .csv,\n"
    "               .jsonl, .json or .xlsx is written in that format (a --format\n"
    "               of csv, jsonl or xlsx wins). Table text is cut to fit only\n"
    "               on a terminal\n"
    "  --units U    result columns holding ns in ns, us (or µs), ms or s: a time\n"
    "               column (ts, dur, end_ts, kernel_time, ts_min, ts_max,\n"
    "               gpu_ts_min, gpu_ts_max, gpu_span; k.dur too) selected as is\n"
    "               or in sum/total/avg/min/max/median(...), and any column named\n"
    "               *_ns (AS total_ns). Default: ms in the table format, ns as\n"
    "               stored in csv, jsonl and xlsx. A converted header names the\n"
    "               unit: \"dur (ms)\", total_ns -> total_ms\n"
    "  --schema [T] list every table's columns (or table T's): name, type,\n"
    "               hidden (usable by name, not in SELECT *), alias_of (a\n"
    "               sheet's header for that SQL name), description\n"
    "  -f FILE      read the SQL from FILE (- = standard input)\n"
    "  --all        table format: print every row (default: first 50)\n"
    "\n"
    "Examples:\n"
    "  Total kernel time by kernel name across every trace:\n"
    "    tracelens sql \"SELECT name, sum(dur) AS total_ns, count(*) AS n FROM kernels\n"
    "                   GROUP BY name ORDER BY total_ns DESC LIMIT 20\"\n"
    "  The same for one label (only those traces are read):\n"
    "    tracelens sql \"SELECT name, sum(dur) FROM kernels WHERE label_set = 'nightly'\n"
    "                   GROUP BY name ORDER BY 2 DESC LIMIT 20\"\n"
    "  Which kernels got slower across the last 50 nightly runs (least-squares slope\n"
    "  of the per-run mean duration, ns per run):\n"
    "    tracelens sql \"WITH runs AS (SELECT trace_id, row_number() OVER (ORDER BY ingest_time) AS i\n"
    "                     FROM (SELECT * FROM traces WHERE label_set = 'nightly'\n"
    "                           ORDER BY ingest_time DESC LIMIT 50)),\n"
    "          per AS (SELECT k.name, r.i, avg(k.dur) AS d FROM runs r\n"
    "                  JOIN kernels k ON k.trace_id = r.trace_id GROUP BY k.name, r.i)\n"
    "     SELECT name, count(*) AS runs, (count(*)*sum(i*d) - sum(i)*sum(d))\n"
    "            / (count(*)*sum(i*i) - sum(i)*sum(i)) AS slope_ns_per_run\n"
    "     FROM per GROUP BY name HAVING runs > 1 ORDER BY slope_ns_per_run DESC LIMIT 20\"\n"
    "  GEMM time per batch size across a sweep (traces ingested with --label bs=N):\n"
    "    tracelens sql \"SELECT label_bs AS bs, sum(dur) AS gemm_ns FROM kernels\n"
    "                   WHERE name LIKE '%gemm%' OR name LIKE 'Cijk%' GROUP BY bs ORDER BY bs+0\"\n"
    "  Every run where idle time exceeded 20 %:\n"
    "    tracelens sql \"SELECT t.trace_id, t.path, g.percent FROM gpu_timeline g\n"
    "                   JOIN traces t ON t.trace_id = g.trace_id\n"
    "                   WHERE g.type = 'idle_time' AND g.percent > 20\"\n"
    "  The 20 most expensive unique-arg convolutions over all ranks of config X:\n"
    "    tracelens sql \"SELECT name, input_dims, input_type, sum(kernel_time) AS gpu_ns,\n"
    "                   count(*) AS n FROM ops WHERE config = 'X' AND name LIKE '%conv%'\n"
    "                   GROUP BY 1, 2, 3 ORDER BY gpu_ns DESC LIMIT 20\"\n"
    "  Kernel time by launching op and label (a 3-table join):\n"
    "    tracelens sql \"SELECT t.label_set, o.name, sum(k.dur) FROM kernels k\n"
    "                   JOIN ops o ON o.trace_id = k.trace_id AND o.uid = k.launcher\n"
    "                   JOIN traces t ON t.trace_id = k.trace_id GROUP BY 1, 2 ORDER BY 3 DESC\"\n"
    "\n"
    "Exit status: 0 ok; 1 SQLite cannot be loaded; 2 bad SQL (the message points\n"
    "at the token); 3 store error; 130 interrupted.\n";

static atomic_int g_cancel; /* lock-free: safe in a handler, read by scanning threads */
static sqlite3 *g_db;
static void on_sigint(int sig)
{
    (void)sig;
    if (atomic_load(&g_cancel)) _exit(130);
    atomic_store(&g_cancel, 1);
    tl_sql_interrupt(g_db);
}

static char *read_all(FILE *fp)
{
    tl_buf b = {0};
    char tmp[65536];
    size_t n;
    while ((n = fread(tmp, 1, sizeof tmp, fp)) > 0) tl_buf_append(&b, tmp, n);
    tl_buf_putc(&b, 0);
    return b.p;
}

enum { Q_HELP, Q_DB, Q_FORMAT, Q_OUTPUT, Q_FILE, Q_ALL, Q_QUIET, Q_UNITS, Q_SCHEMA };
static const tl_cli_opt OPTS[] = {
    [Q_HELP] = {"-h|--help", TL_CLI_FLAG},
    [Q_DB] = {"--db", TL_CLI_VALUE},
    [Q_FORMAT] = {"--format", TL_CLI_VALUE},
    [Q_OUTPUT] = {"-o|--output", TL_CLI_VALUE},
    [Q_FILE] = {"-f|--file", TL_CLI_VALUE},
    [Q_ALL] = {"--all", TL_CLI_FLAG},
    [Q_QUIET] = {"-q|--quiet", TL_CLI_FLAG},
    [Q_UNITS] = {"--units", TL_CLI_VALUE},
    [Q_SCHEMA] = {"--schema", TL_CLI_OPTIONAL},
};

/* sql --schema [TABLE]: the columns of every table (or of one). */
static int print_schema(const char *db, const char *only, const char *format, const char *out_path)
{
    tl_store *s = tl_cli_store_read(db);
    if (!s) return TL_EXIT_STORE;
    tl_err err = {0};
    tl_table *t;
    if (tl_sql_schema(s, &t, &err)) {
        fprintf(stderr, "tracelens sql: %s\n", err.msg);
        tl_store_close(s);
        return TL_EXIT_STORE;
    }
    tl_store_close(s);
    if (only) {
        size_t m = 0;
        for (size_t r = 0; r < t->nrows; r++)
            if (!strcmp(t->cols[0].v.s[r], only)) {
                for (size_t c = 0; c < t->ncols; c++) t->cols[c].v.s[m] = t->cols[c].v.s[r];
                m++;
            }
        if (!m) {
            fprintf(stderr, "tracelens sql: --schema: no table '%s' (see tracelens sql --schema)\n", only);
            tl_table_free(t);
            return TL_EXIT_USAGE;
        }
        t->nrows = m;
    }
    int rc = tl_cli_write_result(t, format, out_path, 1);
    tl_table_free(t);
    return rc;
}

/* The result's ns columns in the unit asked for (units checked by the
 * caller; default: ms in the table format). */
static void convert_units(tl_table *t, const char *units, const char *format, const char *out_path)
{
    if (!units && strcmp(tl_cli_result_format(format, out_path), "table")) return;
    const char *unit;
    double div;
    if (tl_adhoc_unit(units ? units : "ms", &unit, &div) || div == 1) return;
    uint8_t *is_time = tl_xcalloc(t->ncols ? t->ncols : 1, 1);
    for (size_t c = 0; c < t->ncols; c++) is_time[c] = (uint8_t)tl_sql_time_name(t->cols[c].name);
    tl_adhoc_convert_times(t, is_time, unit, div);
    free(is_time);
}

int tl_cmd_sql(int argc, char **argv)
{
    const char *db = NULL, *format = "table", *out_path = NULL, *file = NULL, *v, *units = NULL, *schema = NULL;
    int all = 0, quiet = 0, want_schema = 0;
    tl_buf sql = {0};
    tl_cli_args p;
    tl_cli_args_init(&p, argc, argv, OPTS, sizeof OPTS / sizeof *OPTS);
    for (int k; (k = tl_cli_next(&p)) != TL_CLI_END;) {
        v = p.val;
        if (k == Q_HELP) { fputs(HELP, stdout); tl_buf_free(&sql); return 0; }
        else if (k == Q_DB) db = v;
        else if (k == Q_FORMAT) format = v;
        else if (k == Q_OUTPUT) out_path = v;
        else if (k == Q_FILE) file = v;
        else if (k == Q_ALL) all = 1;
        else if (k == Q_QUIET) quiet = 1;
        else if (k == Q_UNITS) units = v;
        else if (k == Q_SCHEMA) want_schema = 1, schema = v;
        else if (k == TL_CLI_BAD) {
            fprintf(stderr, "tracelens sql: %s\n", p.msg);
            tl_buf_free(&sql);
            return TL_EXIT_USAGE;
        } else if (k == TL_CLI_UNKNOWN && p.arg[1] != ' ') {
            fprintf(stderr, "tracelens sql: unknown option '%s'%s (see tracelens sql --help)\n", p.arg, tl_cli_hint(&p));
            tl_buf_free(&sql);
            return TL_EXIT_USAGE;
        } else {
            if (sql.n) tl_buf_putc(&sql, ' ');
            tl_buf_puts(&sql, p.arg);
        }
    }
    if (file) {
        FILE *fp = strcmp(file, "-") ? fopen(file, "r") : stdin;
        if (!fp) { fprintf(stderr, "tracelens sql: cannot read %s\n", file); tl_buf_free(&sql); return TL_EXIT_USAGE; }
        char *text = read_all(fp);
        if (fp != stdin) fclose(fp);
        if (sql.n) tl_buf_putc(&sql, ' ');
        tl_buf_puts(&sql, text);
        free(text);
    }
    {
        const char *unit;
        double div;
        if (units && tl_adhoc_unit(units, &unit, &div)) {
            fprintf(stderr, "tracelens sql: --units wants ns, us (µs), ms or s, got '%s'\n", units);
            tl_buf_free(&sql);
            return TL_EXIT_USAGE;
        }
    }
    if (want_schema) { tl_buf_free(&sql); return print_schema(db, schema, format, out_path); }
    if (!sql.n) { fputs(HELP, stderr); return TL_EXIT_USAGE; }
    if (strcmp(format, "table") && strcmp(format, "csv") && strcmp(format, "jsonl") && strcmp(format, "json") &&
        strcmp(format, "xlsx")) {
        fprintf(stderr, "tracelens sql: --format wants table, csv, jsonl or xlsx, got '%s'\n", format);
        tl_buf_free(&sql);
        return TL_EXIT_USAGE;
    }
    tl_store *s = tl_cli_store_read(db);
    if (!s) { tl_buf_free(&sql); return TL_EXIT_STORE; }
    tl_err err = {0};
    sqlite3 *h;
    if (tl_sql_open(s, &g_cancel, &h, &err)) {
        fprintf(stderr, "tracelens sql: %s\n", err.msg);
        tl_store_close(s);
        tl_buf_free(&sql);
        return err.code == TL_EUNSUPPORTED ? TL_EXIT_FAIL : TL_EXIT_STORE; /* SQLite missing, or the store */
    }
    g_db = h;
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old);
    double t0 = tl_now();
    tl_table *t = NULL;
    int rc = tl_sql_query(h, sql.p, &t, &err);
    double dt = tl_now() - t0;
    sigaction(SIGINT, &old, NULL);
    g_db = NULL;
    int code = TL_EXIT_OK;
    if (rc == TL_EINTR_ADHOC || atomic_load(&g_cancel)) {
        fprintf(stderr, "tracelens sql: interrupted (the store is unchanged)\n");
        code = 130;
    } else if (rc) {
        fprintf(stderr, "tracelens %s\n", err.msg);
        code = TL_EXIT_USAGE;
    } else {
        convert_units(t, units, format, out_path);
        code = tl_cli_write_result(t, format, out_path, all);
        if (!quiet && isatty(2)) fprintf(stderr, "(%zu row%s in %.3f s)\n", t->nrows, t->nrows == 1 ? "" : "s", dt);
    }
    tl_table_free(t);
    tl_sql_close(h);
    tl_store_close(s);
    tl_buf_free(&sql);
    return code;
}
