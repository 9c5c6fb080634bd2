/* cmd_diff.c — `tracelens diff BASELINE VARIANT`: TraceDiff of two traces
 * (stored ids or files, ingested on the fly). Parses arguments, loads both
 * traces from the store, runs query/tracediff and writes the reference's
 * file set and/or a terminal summary. No analysis here. */
#include "tools/cli.h"
#include "query/core/trace.h"
#include "query/diff/diff.h"
#include "report/report.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *HELP =
    "Usage: tracelens diff [--db DIR] BASELINE VARIANT [--out DIR] [options]\n"
    "\n"
    "TraceDiff of two PyTorch (Kineto) traces: merges the two call-stack trees\n"
    "(edit-distance alignment of siblings, positional pairing, wrapper collapse)\n"
    "and attributes the GPU work of each side to the lowest common ancestor (LCA)\n"
    "the trees still share. BASELINE (trace1) and VARIANT (trace2) are stored\n"
    "trace ids (or unique prefixes) or trace files, ingested first when needed.\n"
    "\n"
    "Without --out (or with --summary) a summary is printed: the ops (LCA names)\n"
    "whose GPU busy time, summed over their LCA instances, differs most between\n"
    "the traces, with both times, the delta and the ratio.\n"
    "\n"
    "Options:\n"
    "  --out DIR            write the reference's files into DIR:\n"
    "                       merged_tree_output.txt, diff_stats.csv,\n"
    "                       diff_stats_unique_args_summary.csv, cpu_op_map.json,\n"
    "                       cpu_op_map_trace1.json, cpu_op_map_trace2.json, plus\n"
    "                       uid_map.csv (tree, uid, name, corresponding_uid) and\n"
    "                       lca_summary.csv (one row per LCA)\n"
    "  --top N              rows of the terminal summary (default 20; 0 = none)\n"
    "  --summary            print the summary also when --out is given\n"
    "  --prune-non-gpu      leave roots without GPU work out of the merged tree text\n"
    "  --python             include python_function events in both trees\n"
    "  --reference-linking  link GPU events to runtime calls only as the reference\n"
    "                       does: in a trace without ac2g flows (older Kineto writes\n"
    "                       async_cpu_to_gpu flows) only graph launches keep their\n"
    "                       GPU events; the default links the others by correlation\n"
    "                       id. For byte-exact comparisons with the reference\n"
    "  --uid T:UID          print the corresponding UID of node UID of tree T (1|2),\n"
    "                       or -1 (one-sided or never visited)\n"
    "  --subtree T:UID      print the merged subtree holding that node\n"
    "  --debug              the four debug columns of diff_stats (as TRACELENS_DEBUG=1)\n"
    "  -v, --verbose        the reference's [TraceDiff] messages\n"
    "  --db DIR             trace store (default $TRACELENS_DB, else $XDG_DATA_HOME/tracelens)\n"
    "  -h, --help           this text\n"
    "\n"
    "Both traces must be PyTorch (Kineto) traces; a rocprof or JAX (XPlane) trace\n"
    "is refused, naming the file and its format (exit 2).\n"
    "\n"
    "Exit status: 0 ok; 1 a trace could not be read or a file written; 2 bad\n"
    "command line or a trace that is not a PyTorch trace; 3 store error; 4 no\n"
    "such trace.\n";

static int parse_tuid(const char *s, int *tree, int64_t *uid)
{
    char *end;
    long t = strtol(s, &end, 10);
    if ((t != 1 && t != 2) || *end != ':') return -1;
    long long u = strtoll(end + 1, &end, 10);
    if (*end) return -1;
    *tree = (int)t;
    *uid = u;
    return 0;
}

static int write_text(const char *dir, const char *name, const char *text, size_t n, tl_err *err)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *fp = fopen(path, "w");
    if (!fp) return tl_errf(err, TL_EIO, "%s: cannot create: %s", path, strerror(errno));
    int ok = fwrite(text, 1, n, fp) == n;
    if (fclose(fp) != 0) ok = 0;
    return ok ? TL_OK : tl_errf(err, TL_EIO, "%s: write failed", path);
}

static int write_table(const char *dir, const char *name, const tl_table *t, tl_err *err)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return tl_report_csv_write(t, path, err);
}

/* The reference's file set (spec A9) plus uid_map.csv and lca_summary.csv. */
static int write_files(const tl_diff *d, const char *dir, int prune, tl_err *err)
{
    int rc = tl_mkdir_p(dir, err);
    if (rc) return rc;
    tl_buf b = {0};
    tl_diff_tree_text(d, prune, &b);
    rc = write_text(dir, "merged_tree_output.txt", b.p ? b.p : "", b.n, err);
    tl_buf_free(&b);
    if (rc || tl_diff_empty(d)) return rc;
    static const char *maps[3] = {"cpu_op_map.json", "cpu_op_map_trace1.json", "cpu_op_map_trace2.json"};
    if ((rc = write_table(dir, "diff_stats.csv", tl_diff_stats(d), err))) return rc;
    if ((rc = write_table(dir, "diff_stats_unique_args_summary.csv", tl_diff_summary(d), err))) return rc;
    for (int k = 0; k < 3 && !rc; k++) {
        const char *j = tl_diff_map_json(d, k);
        rc = write_text(dir, maps[k], j, strlen(j), err);
    }
    tl_table *t = tl_diff_uid_map(d);
    if (!rc) rc = write_table(dir, "uid_map.csv", t, err);
    tl_table_free(t);
    t = tl_diff_lca_summary(d);
    if (!rc) rc = write_table(dir, "lca_summary.csv", t, err);
    tl_table_free(t);
    return rc;
}

/* The ops (LCA names) whose GPU busy time differs most: per name the sum
 * over its LCA instances of each side's busy time. */
static void print_summary(const tl_diff *d, long top)
{
    tl_table *s = tl_diff_lca_summary(d);
    size_t n = s->nrows;
    long c1 = tl_table_col(s, "kernel_time_trace1_us"), c2 = tl_table_col(s, "kernel_time_trace2_us");
    long cn = tl_table_col(s, "lowest_common_ancestor_name");
    typedef struct { const char *name; double t1, t2; int64_t count; } agg;
    TL_VEC(agg) g = {0};
    double T1 = 0, T2 = 0;
    for (size_t i = 0; i < n; i++) {
        const char *nm = s->cols[cn].v.s[i] ? s->cols[cn].v.s[i] : "";
        double a = s->cols[c1].v.f[i], b = s->cols[c2].v.f[i];
        T1 += a;
        T2 += b;
        size_t k;
        for (k = 0; k < g.n; k++)
            if (strcmp(g.v[k].name, nm) == 0) break;
        if (k == g.n) {
            agg z = {nm, 0, 0, 0};
            tl_vec_push(&g, z);
        }
        g.v[k].t1 += a;
        g.v[k].t2 += b;
        g.v[k].count++;
    }
    /* stable insertion sort by |delta| desc: a few hundred names at most */
    for (size_t i = 1; i < g.n; i++) {
        agg x = g.v[i];
        size_t j = i;
        while (j > 0 && fabs(g.v[j - 1].t2 - g.v[j - 1].t1) < fabs(x.t2 - x.t1)) { g.v[j] = g.v[j - 1]; j--; }
        g.v[j] = x;
    }
    size_t m = (size_t)top > g.n ? g.n : (size_t)top;
    tl_table *o = tl_table_new("ops with the largest GPU busy-time difference (trace2 - trace1)");
    size_t a = tl_table_add_col(o, "op (lowest common ancestor)", TL_STR);
    size_t b = tl_table_add_col(o, "count", TL_I64);
    size_t f = tl_table_add_col(o, "trace1 \xc2\xb5s", TL_F64);
    size_t h = tl_table_add_col(o, "trace2 \xc2\xb5s", TL_F64);
    size_t k = tl_table_add_col(o, "delta \xc2\xb5s", TL_F64);
    size_t q = tl_table_add_col(o, "trace2/trace1", TL_F64);
    for (size_t i = 0; i < m; i++) {
        size_t r = tl_table_add_row(o);
        tl_table_set_str(o, a, r, g.v[i].name);
        tl_table_set_i64(o, b, r, g.v[i].count);
        tl_table_set_f64(o, f, r, g.v[i].t1);
        tl_table_set_f64(o, h, r, g.v[i].t2);
        tl_table_set_f64(o, k, r, g.v[i].t2 - g.v[i].t1);
        if (g.v[i].t1 > 0) tl_table_set_f64(o, q, r, g.v[i].t2 / g.v[i].t1);
    }
    if (m) {
        tl_term_opts to = {.max_rows = SIZE_MAX, .max_cell = 60, .title = 1};
        tl_report_term_print(stdout, o, &to);
    }
    printf("%zu LCAs (%zu distinct); GPU busy time under them: trace1 %.3f \xc2\xb5s, trace2 %.3f \xc2\xb5s, "
           "delta %+.3f \xc2\xb5s\n", n, g.n, T1, T2, T2 - T1);
    tl_table_free(o);
    tl_vec_free(&g);
    tl_table_free(s);
}

enum { D_HELP, D_DB, D_OUT, D_TOP, D_UID, D_SUBTREE, D_PRUNE, D_PYTHON, D_REFLINK, D_DEBUG, D_SUMMARY, D_VERBOSE };
static const tl_cli_opt OPTS[] = {
    [D_HELP] = {"-h|--help", TL_CLI_FLAG},
    [D_DB] = {"--db", TL_CLI_VALUE},
    [D_OUT] = {"--out", TL_CLI_VALUE},
    [D_TOP] = {"--top", TL_CLI_VALUE},
    [D_UID] = {"--uid", TL_CLI_VALUE},
    [D_SUBTREE] = {"--subtree", TL_CLI_VALUE},
    [D_PRUNE] = {"--prune-non-gpu", TL_CLI_FLAG},
    [D_PYTHON] = {"--python", TL_CLI_FLAG},
    [D_REFLINK] = {"--reference-linking", TL_CLI_FLAG},
    [D_DEBUG] = {"--debug", TL_CLI_FLAG},
    [D_SUMMARY] = {"--summary", TL_CLI_FLAG},
    [D_VERBOSE] = {"-v|--verbose", TL_CLI_FLAG},
};

/* Loads the trace named by arg through r: a PyTorch (Kineto) trace, with
 * the reference's linking when asked; 0 or an exit code. */
static int load_side(tl_store *s, const char *arg, int reflink, tl_reader **r, tl_trace **t)
{
    uint64_t id;
    tl_err err = {0};
    int code = tl_cli_open_trace(s, arg, r, &id);
    if (code) return code;
    if (tl_trace_load(*r, id, t, &err)) {
        fprintf(stderr, "tracelens diff: %s: %s\n", arg, err.msg);
        return tl_cli_exit_for(err.code, TL_EXIT_FAIL);
    }
    const char *fmt = (*t)->format;
    if (strcmp(fmt, "kineto") != 0) {
        int jax = strcmp(fmt, "xplane") == 0, roc = strcmp(fmt, "rocprof") == 0;
        fprintf(stderr, "tracelens diff: %s is a %s trace; TraceDiff compares PyTorch (Kineto) traces only%s\n", arg,
                jax ? "JAX (XPlane)" : roc ? "rocprofv3" : fmt,
                jax ? " (its report: tracelens report / TraceLens_generate_perf_report_jax)"
                : roc ? " (its report: tracelens report / TraceLens_generate_perf_report_rocprof)" : "");
        return TL_EXIT_USAGE;
    }
    size_t dropped;
    if (reflink && tl_trace_reference_links(*t, &dropped, &err)) {
        fprintf(stderr, "tracelens diff: %s: %s\n", arg, err.msg);
        return TL_EXIT_FAIL;
    }
    return TL_EXIT_OK;
}

int tl_cmd_diff(int argc, char **argv)
{
    const char *db = NULL, *out = NULL, *pos[2] = {0}, *v;
    int npos = 0, prune = 0, python = 0, reflink = 0, debug = tl_env.debug, verbose = 0, want_summary = 0, uid_tree = 0,
        sub_tree = 0;
    int64_t uid_q = -1, sub_uid = -1;
    long top = 20;
    tl_cli_args p;
    tl_cli_args_init(&p, argc, argv, OPTS, sizeof OPTS / sizeof *OPTS);
    for (int k; (k = tl_cli_next(&p)) != TL_CLI_END;) {
        v = p.val;
        if (k == D_HELP) { fputs(HELP, stdout); return 0; }
        else if (k == D_DB) db = v;
        else if (k == D_OUT) out = v;
        else if (k == D_TOP) {
            char *end;
            top = strtol(v, &end, 10);
            if (*end || top < 0) { fprintf(stderr, "tracelens diff: --top needs a count\n"); return TL_EXIT_USAGE; }
        } else if (k == D_UID) {
            if (parse_tuid(v, &uid_tree, &uid_q)) { fprintf(stderr, "tracelens diff: --uid wants T:UID with T 1 or 2\n"); return TL_EXIT_USAGE; }
        } else if (k == D_SUBTREE) {
            if (parse_tuid(v, &sub_tree, &sub_uid)) { fprintf(stderr, "tracelens diff: --subtree wants T:UID with T 1 or 2\n"); return TL_EXIT_USAGE; }
        } else if (k == D_PRUNE) prune = 1;
        else if (k == D_PYTHON) python = 1;
        else if (k == D_REFLINK) reflink = 1;
        else if (k == D_DEBUG) debug = 1;
        else if (k == D_SUMMARY) want_summary = 1;
        else if (k == D_VERBOSE) verbose = 1;
        else if (k == TL_CLI_BAD) { fprintf(stderr, "tracelens diff: %s\n", p.msg); return TL_EXIT_USAGE; }
        else if (k == TL_CLI_UNKNOWN) {
            fprintf(stderr, "tracelens diff: unknown option %s%s (see --help)\n", p.arg, tl_cli_hint(&p));
            return TL_EXIT_USAGE;
        } else if (npos < 2) pos[npos++] = p.arg;
        else { fprintf(stderr, "tracelens diff: one BASELINE and one VARIANT, got more\n"); return TL_EXIT_USAGE; }
    }
    if (npos != 2) { fprintf(stderr, "tracelens diff: needs BASELINE and VARIANT (see --help)\n"); return TL_EXIT_USAGE; }

    tl_store *s = tl_cli_store_for(db, pos, 2);
    if (!s) return TL_EXIT_STORE;
    tl_reader *r[2] = {0};
    tl_trace *t[2] = {0};
    tl_diff *d = NULL;
    tl_err err = {0};
    int code = TL_EXIT_OK;
    for (int k = 0; k < 2 && !code; k++) code = load_side(s, pos[k], reflink, &r[k], &t[k]);
    if (!code) {
        tl_diff_opts o = {.python = python, .debug = debug, .log = verbose ? stdout : NULL};
        if (tl_diff_run(t[0], t[1], &o, &d, &err)) {
            fprintf(stderr, "tracelens diff: %s\n", err.msg);
            code = TL_EXIT_FAIL;
        }
    }
    if (!code) {
        if (tl_diff_empty(d)) printf("[TraceDiff] No GPU events found in either trace\n");
        else if (tl_diff_identical(d)) printf("[TraceDiff] Identical traces detected\n");
        if (out) {
            if (write_files(d, out, prune, &err)) {
                fprintf(stderr, "tracelens diff: %s\n", err.msg);
                code = TL_EXIT_FAIL;
            } else {
                const tl_table *ds = tl_diff_stats(d);
                size_t n1, n2, nr = tl_diff_roots(d, &n1, &n2);
                printf("TraceDiff written to %s: %zu merged nodes (%zu roots; %zu / %zu per trace), %zu diff rows\n",
                       out, tl_diff_merged_nodes(d), nr, n1, n2, ds ? ds->nrows : 0);
            }
        }
        if (uid_tree) printf("%lld\n", (long long)tl_diff_corresponding_uid(d, uid_tree, uid_q));
        if (sub_tree) {
            tl_buf b = {0};
            if (tl_diff_subtree_text(d, sub_tree == 1 ? sub_uid : -1, sub_tree == 2 ? sub_uid : -1, &b, &err)) {
                fprintf(stderr, "tracelens diff: %s\n", err.msg);
                code = TL_EXIT_FAIL;
            } else fwrite(b.p, 1, b.n, stdout);
            tl_buf_free(&b);
        }
        if (!code && (!out || want_summary) && !uid_tree && !sub_tree && top > 0 && !tl_diff_empty(d))
            print_summary(d, top);
    }
    tl_diff_free(d);
    for (int k = 0; k < 2; k++) {
        tl_trace_free(t[k]);
        if (r[k]) tl_reader_close(r[k]);
    }
    tl_store_close(s);
    return code;
}
