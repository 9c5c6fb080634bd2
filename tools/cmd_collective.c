/* cmd_collective.c — `TraceLens_generate_multi_rank_collective_report_pytorch`
 * (the reference tool's command: same flags, messages and outputs, spec
 * formats.md §3) and `tracelens collective`. It resolves the rank files
 * (--trace_dir / --trace_pattern / --trace_glob + --rank_regex) or a stored
 * configuration (--config), ingests files that are not yet stored (in
 * parallel), runs query/collective and writes the sheets, then prints the
 * per-rank imbalance summary. No analysis here. */
#include "tools/cli.h"
#include "ingest/ingest.h"
#include "query/multirank/multirank.h"
#include "report/report.h"

#include <malloc.h>
#include <errno.h>
#include <libgen.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *HELP =
    "usage: TraceLens_generate_multi_rank_collective_report_pytorch\n"
    "           (--trace_dir DIR | --trace_pattern PATTERN | --trace_glob GLOB | --config NAME)\n"
    "           --world_size N [options]\n"
    "       tracelens [--db DIR] collective ...                  (same flags)\n"
    "\n"
    "Multi-rank collective (NCCL/RCCL) analysis of PyTorch profiler traces, one\n"
    "per rank: collectives are matched across ranks by process group and\n"
    "per-group index; per collective the latency (fastest rank's kernel), skew in\n"
    "start and end time, each rank's implicit-sync wait, algorithm and bus\n"
    "bandwidth (allreduce factor 2(n-1)/n; reduce-scatter, all-gather, all-to-all\n"
    "(n-1)/n); all_to_allv volumes, throughput and size imbalance; straggler\n"
    "ranks; node labels. Files are ingested into the trace store first (a no-op\n"
    "for files already stored); a stored configuration can be named instead.\n"
    "\n"
    "Sheets: nccl_summary_implicit_sync, nccl_summary_long, [nccl_summary_all2allv],\n"
    "[nccl_all2allv_heatmap], nccl_long, nccl_implicit_sync, [nccl_all2allv],\n"
    "[straggler_summary], then imbalance_ranks and imbalance_collectives (ours).\n"
    "\n"
    "inputs (exactly one):\n"
    "  --trace_dir DIR          rank i is DIR/rank{i}_trace.json, i = 0..N-1\n"
    "  --trace_pattern P        P with its single '*' replaced by the rank\n"
    "  --trace_glob G           files matching G (** = any folders); the rank comes\n"
    "                           from --rank_regex searched in the file name, else\n"
    "                           in the whole path\n"
    "  --config NAME|DIR        traces already in the store: the configuration name\n"
    "                           recorded at ingest (the rank files' folder name), or\n"
    "                           the folder's path; ranks from the catalog\n"
    "options:\n"
    "  --world_size N           number of ranks (required, except with --config)\n"
    "  --rank_regex R           default 'rank[\\[\\-_/]?(?P<rank>\\d+)' (Python syntax)\n"
    "  --output_xlsx_path PATH  workbook (default: nccl_analysis_report.xlsx in the\n"
    "                           trace folder, unless only --output_csvs_dir is given)\n"
    "  --output_csvs_dir DIR    one <sheet>.csv per sheet\n"
    "  --html PATH              also (or only) one self-contained HTML page: per-rank\n"
    "                           bars and every sheet (ours)\n"
    "  --agg_metrics A [A ...]  aggregations of the summaries (default: mean median\n"
    "                           min max; also std sum count first last)\n"
    "  --gpus_per_node N        for node_id / node_span (default: the number of\n"
    "                           deviceProperties in rank 0's trace)\n"
    "  --all2allv_heatmap       add nccl_all2allv_heatmap (src -> dst MB)\n"
    "  --detailed_analysis      accepted; the detailed form is always produced\n"
    "  --use_multiprocessing    accepted; ranks are read on threads anyway\n"
    "  --max_workers N          threads reading ranks and ingesting files\n"
    "                           (default: CPUs, at most 8)\n"
    "options of tracelens:\n"
    "  --no-imbalance           leave out the imbalance sheets and summary\n"
    "  -q, --quiet              no summary on stdout, no notes\n"
    "  --mpi                    under mpirun: each process takes a contiguous share\n"
    "                           of the ranks, ingests its files into its own store\n"
    "                           (--db /local/tl-%r, %r = MPI rank) and reads their\n"
    "                           collective records; rank 0 gathers the records and\n"
    "                           writes the same sheets. With --config the store (or\n"
    "                           store list) must hold every rank\n"
    "  --db DIR                 trace store (default $TRACELENS_DB, else\n"
    "                           $XDG_DATA_HOME/tracelens)\n"
    "  -h, --help               this text\n"
    "\n"
    "Flags may be abbreviated to a unique prefix, as with the reference tool.\n"
    "exit status: 0 ok; 1 a trace is missing or unreadable, or the ranks disagree\n"
    "on a collective's metadata; 2 bad command line; 3 store error; 4 a trace id\n"
    "not in the store.\n";

enum {
    F_DIR, F_PATTERN, F_GLOB, F_CONFIG, F_WORLD, F_REGEX, F_XLSX, F_CSV, F_AGG, F_GPN, F_HEAT, F_DETAILED,
    F_MP, F_WORKERS, F_NOIMB, F_QUIET, F_DB, F_HELP, F_MPI, F_HTML, F_N
};
static const tl_cli_opt FLAGS[F_N] = {
    [F_DIR] = {"--trace_dir", TL_CLI_VALUE},
    [F_PATTERN] = {"--trace_pattern", TL_CLI_VALUE},
    [F_GLOB] = {"--trace_glob", TL_CLI_VALUE},
    [F_CONFIG] = {"--config", TL_CLI_VALUE},
    [F_WORLD] = {"--world_size", TL_CLI_VALUE},
    [F_REGEX] = {"--rank_regex", TL_CLI_VALUE},
    [F_XLSX] = {"--output_xlsx_path", TL_CLI_VALUE},
    [F_CSV] = {"--output_csvs_dir", TL_CLI_VALUE},
    [F_AGG] = {"--agg_metrics", TL_CLI_VALUES},
    [F_GPN] = {"--gpus_per_node", TL_CLI_VALUE},
    [F_HEAT] = {"--all2allv_heatmap", TL_CLI_FLAG},
    [F_DETAILED] = {"--detailed_analysis", TL_CLI_FLAG},
    [F_MP] = {"--use_multiprocessing", TL_CLI_FLAG},
    [F_WORKERS] = {"--max_workers", TL_CLI_VALUE},
    [F_NOIMB] = {"--no-imbalance", TL_CLI_FLAG},
    [F_QUIET] = {"-q|--quiet", TL_CLI_FLAG},
    [F_DB] = {"--db", TL_CLI_VALUE},
    [F_HELP] = {"-h|--help", TL_CLI_FLAG},
    [F_MPI] = {"--mpi", TL_CLI_FLAG},
    [F_HTML] = {"--html", TL_CLI_VALUE},
};

static int usage_error(const char *prog, const char *fmt, const char *arg)
{
    fprintf(stderr, "usage: %s (--trace_dir DIR | --trace_pattern P | --trace_glob G | --config NAME) "
                    "--world_size N [options] (see --help)\n%s: error: ", prog, prog);
    fprintf(stderr, fmt, arg);
    fputc('\n', stderr);
    return TL_EXIT_USAGE;
}

static int parse_pos_int(const char *s, long *v)
{
    char *end;
    errno = 0;
    long x = strtol(s, &end, 10);
    if (errno || end == s || *end) return -1;
    *v = x;
    return 0;
}

static int is_file(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* ---- Python regex -> POSIX ERE ---------------------------------------------
 * Enough of Python's syntax for rank regexes: \d \D \w \W \s \S, escapes in
 * and out of brackets, (?P<name>...) and (?:...) groups, (?i). *group
 * receives the number of the group named "rank" (else 1). */
static int py_to_ere(const char *py, tl_buf *out, int *group, int *icase, char *why, size_t whysz)
{
    int ngroups = 0;
    *group = -1;
    *icase = 0;
    for (const char *p = py; *p;) {
        if (*p == '\\') {
            char c = p[1];
            if (!c) { snprintf(why, whysz, "trailing backslash"); return -1; }
            const char *cls = tl_pyre_class(c, 0);
            if (cls) {
                tl_buf_puts(out, cls);
            } else if (strchr(".^$*+?()[]{}|\\/-", c)) {
                tl_buf_putc(out, '\\');
                tl_buf_putc(out, c);
            } else {
                tl_buf_putc(out, c);
            }
            p += 2;
        } else if (*p == '[') {
            if (tl_pyre_set(p + 1, out, &p, 0)) {
                snprintf(why, whysz, "unterminated character set");
                return -1;
            }
        } else if (*p == '(') {
            if (p[1] == '?') {
                if (p[2] == 'P' && p[3] == '<') {
                    const char *e = strchr(p + 4, '>');
                    if (!e) { snprintf(why, whysz, "bad named group"); return -1; }
                    ngroups++;
                    if ((size_t)(e - (p + 4)) == 4 && !strncmp(p + 4, "rank", 4)) *group = ngroups;
                    tl_buf_putc(out, '(');
                    p = e + 1;
                } else if (p[2] == ':') {
                    ngroups++; /* POSIX has no non-capturing group: it counts */
                    tl_buf_putc(out, '(');
                    p += 3;
                } else if (p[2] == 'i' && p[3] == ')') {
                    *icase = 1;
                    p += 4;
                } else {
                    snprintf(why, whysz, "unsupported group syntax '%.4s'", p);
                    return -1;
                }
            } else {
                ngroups++;
                tl_buf_putc(out, '(');
                p++;
            }
        } else {
            tl_buf_putc(out, *p++);
        }
    }
    if (*group < 0) *group = ngroups >= 1 ? 1 : 0;
    tl_buf_putc(out, 0);
    return 0;
}

/* ---- glob with ** ------------------------------------------------------------ */

static int has_magic(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] == '*' || s[i] == '?' || s[i] == '[') return 1;
    return 0;
}

/* fnmatch-style component -> ERE (no '/'); `**` components -> any folders. */
static void glob_component(tl_buf *re, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c == '*') tl_buf_puts(re, "[^/]*");
        else if (c == '?') tl_buf_puts(re, "[^/]");
        else if (c == '[') {
            size_t j = i + 1;
            if (j < n && (s[j] == '!' || s[j] == '^')) j++;
            if (j < n && s[j] == ']') j++;
            while (j < n && s[j] != ']') j++;
            if (j >= n) { tl_buf_puts(re, "\\["); continue; }
            tl_buf_putc(re, '[');
            size_t k = i + 1;
            if (s[k] == '!' || s[k] == '^') tl_buf_putc(re, '^'), k++;
            for (; k < j; k++) {
                if (s[k] == '\\') tl_buf_puts(re, "\\\\");
                else tl_buf_putc(re, s[k]);
            }
            tl_buf_putc(re, ']');
            i = j;
        } else {
            if (strchr(".^$+(){}|\\", c)) tl_buf_putc(re, '\\');
            tl_buf_putc(re, c);
        }
    }
}

typedef TL_VEC(char *) strvec;

/* The glob's matches: regular files whose path matches the regex. */
typedef struct glob_walk {
    const regex_t *re;
    strvec *out;
} glob_walk;

static void glob_file(void *ctx, const char *path, const char *name)
{
    (void)name;
    glob_walk *g = ctx;
    if (regexec(g->re, path, 0, NULL, 0) == 0) tl_vec_push(g->out, tl_xstrdup(path));
}

static int str_cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Python's glob.glob(G, recursive=True), files only, sorted. */
static int glob_files(const char *g, strvec *out)
{
    /* literal prefix: the folders before the first component with a wildcard */
    const char *p = g, *base_end = g;
    while (*p) {
        const char *slash = strchr(p, '/');
        size_t n = slash ? (size_t)(slash - p) : strlen(p);
        if (has_magic(p, n)) break;
        if (!slash) break;
        base_end = slash + 1;
        p = slash + 1;
    }
    if (!has_magic(g, strlen(g))) { /* no wildcard: the file itself */
        if (is_file(g)) tl_vec_push(out, tl_xstrdup(g));
        return 0;
    }
    size_t L = (size_t)(base_end - g); /* literal prefix, with its trailing '/' */
    char *base = L == 0 ? tl_xstrdup(".") : L == 1 ? tl_xstrdup("/") : tl_xstrndup(g, L - 1);
    tl_buf re = {0};
    tl_buf_putc(&re, '^');
    if (base_end != g) {
        glob_component(&re, g, (size_t)(base_end - g)); /* literal (escaped) */
    } else {
        tl_buf_puts(&re, "\\./");
    }
    for (const char *c = base_end; *c;) {
        const char *slash = strchr(c, '/');
        size_t n = slash ? (size_t)(slash - c) : strlen(c);
        if (n == 2 && c[0] == '*' && c[1] == '*') tl_buf_puts(&re, slash ? "([^/.][^/]*/)*" : ".*");
        else {
            glob_component(&re, c, n);
            if (slash) tl_buf_putc(&re, '/');
        }
        if (!slash) break;
        c = slash + 1;
    }
    tl_buf_putc(&re, '$');
    tl_buf_putc(&re, 0);
    regex_t rx;
    int rc = regcomp(&rx, re.p, REG_EXTENDED | REG_NOSUB);
    tl_buf_free(&re);
    if (rc) { free(base); return -1; }
    size_t before = out->n;
    tl_cli_walk(base, &(tl_cli_walk_fns){glob_file, NULL, &(glob_walk){&rx, out}});
    regfree(&rx);
    /* paths as the pattern spelled them: drop the "./" we walked from */
    if (base_end == g)
        for (size_t i = before; i < out->n; i++) memmove(out->v[i], out->v[i] + 2, strlen(out->v[i] + 2) + 1);
    qsort(out->v + before, out->n - before, sizeof *out->v, str_cmp);
    free(base);
    return 0;
}

/* Rank from a path: the regex's rank group in the base name, else in the
 * whole path; -1 if neither matches. */
static long regex_rank(const regex_t *rx, int group, const char *path)
{
    char *dup = tl_xstrdup(path);
    const char *texts[2] = {basename(dup), path};
    long rank = -1;
    regmatch_t m[32];
    for (int k = 0; k < 2 && rank < 0; k++) {
        if (regexec(rx, texts[k], 32, m, 0) != 0) continue;
        int gi = group > 0 && group < 32 ? group : 0;
        if (m[gi].rm_so < 0) continue;
        char num[32];
        size_t n = (size_t)(m[gi].rm_eo - m[gi].rm_so);
        if (n == 0 || n >= sizeof num) continue;
        memcpy(num, texts[k] + m[gi].rm_so, n);
        num[n] = 0;
        char *end;
        long v = strtol(num, &end, 10);
        if (*end == 0) rank = v;
    }
    free(dup);
    return rank;
}

/* ---- ingest ------------------------------------------------------------------- */

typedef struct ing_ctx {
    uint64_t *ids;
    int failures;
    size_t fresh;
} ing_ctx;

static void ing_done(void *ctx, size_t i, int rc, const tl_ingest_prep *pp, const tl_err *err)
{
    ing_ctx *c = ctx;
    if (rc) {
        fprintf(stderr, "tracelens: %s\n", err->msg);
        c->failures++;
        return;
    }
    c->ids[i] = pp->res.id;
    if (!pp->res.existed) c->fresh++;
}

/* Ingests paths[0..n), the ranks first.. first+n-1, their ids into ids[0..n). */
static int ingest_files(tl_store *s, char *const *paths, size_t n, size_t first, int jobs, int quiet, uint64_t *ids)
{
    tl_ingest_opts *o = tl_xcalloc(n, sizeof *o);
    char **cfg = tl_xcalloc(n, sizeof *cfg);
    for (size_t i = 0; i < n; i++) {
        char *dup = tl_xstrdup(paths[i]);
        char *dn = dirname(dup);
        char *real = realpath(dn, NULL);
        cfg[i] = tl_xstrdup(basename(real ? real : dn));
        free(real);
        free(dup);
        tl_cli_ingest_env(&o[i]);
        o[i].rank = (int64_t)(first + i);
        o[i].config = cfg[i];
    }
    ing_ctx c = {.ids = ids};
    double t0 = tl_now();
    tl_ingest_many(s, (const char *const *)paths, o, n, jobs, ing_done, &c);
    if (!quiet && c.fresh)
        fprintf(stderr, "ingested %zu new trace(s) of %zu in %.2f s\n", c.fresh, n, tl_now() - t0);
    for (size_t i = 0; i < n; i++) free(cfg[i]);
    free(cfg);
    free(o);
    return c.failures ? -1 : 0;
}

/* ---- the terminal summary -------------------------------------------------------- */

static tl_table *pick(const tl_table *src, const char *const *cols, size_t ncols, size_t maxrows)
{
    tl_table *t = tl_table_new(src->name);
    size_t nr = src->nrows < maxrows ? src->nrows : maxrows;
    for (size_t k = 0; k < ncols; k++) {
        long c = tl_table_col(src, cols[k]);
        if (c < 0) continue;
        const tl_column *sc = &src->cols[c];
        size_t d = tl_table_add_col(t, sc->name, sc->type);
        tl_table_set_nrows(t, nr);
        t->cols[d].as_float = sc->as_float;
        for (size_t r = 0; r < nr; r++) {
            if (tl_table_is_missing(src, (size_t)c, r)) continue;
            switch (sc->type) {
            case TL_STR: tl_table_set_str(t, d, r, sc->v.s[r]); break;
            case TL_I64: tl_table_set_i64(t, d, r, sc->v.i[r]); break;
            case TL_F64: tl_table_set_f64(t, d, r, sc->v.f[r]); break;
            case TL_BOOL: tl_table_set_bool(t, d, r, sc->v.b[r]); break;
            }
        }
    }
    return t;
}

void tl_cli_coll_print_summary(FILE *fp, const tl_coll_sheets *sh, const tl_coll_summary *sum)
{
    fprintf(fp, "%zu ranks: %zu collective kernels, %zu matched implicit-sync collectives, %zu all_to_allv%s\n",
            sum->world, sum->n_long, sum->n_sync, sum->n_a2av,
            sum->simplified ? " (no process-group names: matched by order, simplified mode)" : "");
    if (sum->world) {
        double mean = 0, mn = 0, mx = 0;
        size_t rmn = 0, rmx = 0;
        for (size_t r = 0; r < sum->world; r++) {
            double c = (double)sum->ranks[r].comp_ns / 1e6;
            mean += c;
            if (r == 0 || c < mn) mn = c, rmn = r;
            if (r == 0 || c > mx) mx = c, rmx = r;
        }
        mean /= (double)sum->world;
        fprintf(fp, "GPU compute time per rank: mean %.3f ms, min %.3f ms (rank %zu), max %.3f ms (rank %zu), "
                    "spread %.2f%% of the mean\n",
                mean, mn, rmn, mx, rmx, mean > 0 ? (mx - mn) / mean * 100 : 0.0);
    }
    tl_term_opts to = {.max_rows = 12, .max_cell = 32, .precision = 3, .title = 0};
    const tl_table *ic = tl_coll_sheet(sh, "imbalance_collectives");
    if (ic && ic->nrows) {
        static const char *const C[] = {"Process Group Name", "Collective name", "dtype", "In msg nelems", "count",
                                        "slowest_rank", "slowest_rank_mean_late_us", "slowest_rank_pct_last",
                                        "skew in start time_max", "total_skew_us"};
        tl_table *t = pick(ic, C, sizeof C / sizeof *C, 12);
        fprintf(fp, "Slowest rank per collective (arrives last on average; the others wait for it), most waiting first:\n");
        tl_report_term_print(fp, t, &to);
        if (ic->nrows > 12) fprintf(fp, "… %zu more (sheet imbalance_collectives)\n", ic->nrows - 12);
        tl_table_free(t);
    }
    const tl_table *ir = tl_coll_sheet(sh, "imbalance_ranks");
    if (ir && ir->nrows) {
        /* ranks by compute time, most first */
        long cc = tl_table_col(ir, "compute_time_ms");
        size_t n = ir->nrows, *perm = tl_xmalloc(n * sizeof *perm);
        for (size_t i = 0; i < n; i++) perm[i] = i;
        for (size_t i = 1; i < n; i++) { /* insertion sort, stable */
            size_t j = i, x = perm[i];
            while (j > 0 && ir->cols[cc].v.f[perm[j - 1]] < ir->cols[cc].v.f[x]) perm[j] = perm[j - 1], j--;
            perm[j] = x;
        }
        static const char *const C[] = {"rank", "node_id", "compute_time_ms", "compute_vs_mean_pct",
                                        "exposed_comm_time_ms", "idle_time_ms", "collective_wait_us",
                                        "times_arrived_last"};
        tl_table *t = pick(ir, C, sizeof C / sizeof *C, n);
        tl_table_permute(t, perm, n < 8 ? n : 8);
        fprintf(fp, "Ranks by GPU compute time%s:\n", n > 8 ? " (top 8; sheet imbalance_ranks)" : "");
        tl_report_term_print(fp, t, &to);
        tl_table_free(t);
        free(perm);
    }
}

/* ---- the command ------------------------------------------------------------------- */

/* --trace_glob: the files the glob matches, by the rank --rank_regex
 * (regex; NULL: the reference's default) reads from each path; every rank
 * 0..world-1 must have one. 0, or an exit code. */
static int glob_rank_files(const char *prog, const char *g, const char *regex, long world, strvec *files)
{
    int rc = TL_EXIT_OK;
    const char *rxs = regex ? regex : "rank[\\[\\-_/]?(?P<rank>\\d+)";
    tl_buf ere = {0};
    int group, icase;
    char why[128] = "";
    regex_t rx;
    int bad = py_to_ere(rxs, &ere, &group, &icase, why, sizeof why);
    if (!bad && regcomp(&rx, ere.p, REG_EXTENDED | (icase ? REG_ICASE : 0))) {
        bad = 1;
        snprintf(why, sizeof why, "not supported by this build's regex engine (POSIX extended)");
    }
    if (bad) {
        tl_buf_free(&ere);
        fprintf(stderr, "%s: error: --rank_regex '%s': %s\n", prog, rxs, why);
        return TL_EXIT_USAGE;
    }
    tl_buf_free(&ere);
    strvec m = {0};
    if (glob_files(g, &m)) {
        regfree(&rx);
        fprintf(stderr, "%s: error: bad --trace_glob '%s'\n", prog, g);
        return TL_EXIT_USAGE;
    }
    if (!m.n) {
        regfree(&rx);
        fprintf(stderr, "No files matched --trace_glob: %s\n", g);
        return TL_EXIT_FAIL;
    }
    char **by_rank = tl_xcalloc((size_t)world, sizeof *by_rank);
    size_t matched = 0;
    for (size_t i = 0; i < m.n; i++) {
        long r = regex_rank(&rx, group, m.v[i]);
        if (r < 0) continue;
        matched++;
        if (r < world && !by_rank[r]) by_rank[r] = m.v[i]; /* first path per rank wins */
    }
    regfree(&rx);
    if (!matched) {
        fprintf(stderr, "--trace_glob matched %zu file(s), but none matched --rank_regex '%s'\n", m.n, rxs);
        rc = TL_EXIT_FAIL;
    } else {
        tl_buf miss = {0};
        int nmiss = 0;
        for (long r = 0; r < world; r++)
            if (!by_rank[r]) tl_buf_printf(&miss, "%s%ld", nmiss++ ? ", " : "", r);
        if (nmiss) {
            fprintf(stderr, "Missing ranks after glob resolution: [%s]. NcclAnalyser requires a complete rank set "
                            "(0..%ld) for correct results.\n", miss.p, world - 1);
            rc = TL_EXIT_FAIL;
        }
        tl_buf_free(&miss);
    }
    if (rc == TL_EXIT_OK)
        for (long r = 0; r < world; r++) tl_vec_push(files, tl_xstrdup(by_rank[r]));
    free(by_rank);
    for (size_t i = 0; i < m.n; i++) free(m.v[i]);
    tl_vec_free(&m);
    return rc;
}

/* The common directory of the resolved files (files->n > 0). */
static char *common_dir(const strvec *files)
{
    char *outdir = tl_xstrdup(files->v[0]);
    char *d = dirname(outdir);
    memmove(outdir, d, strlen(d) + 1);
    for (size_t i = 1; i < files->n; i++) {
        size_t k = 0, cut = 0;
        const char *f = files->v[i];
        for (;; k++) {
            char a = outdir[k], b = f[k];
            if ((a == 0 || a == '/') && (b == 0 || b == '/')) cut = k;
            if (a != b || a == 0) break;
        }
        outdir[cut] = 0;
        if (!cut) strcpy(outdir, f[0] == '/' ? "/" : ".");
    }
    return outdir;
}

/* Where the sheets go: the workbook, the CSV folder, the HTML page. */
typedef struct coll_outputs {
    const char *xlsx, *csv_dir, *html;
} coll_outputs;

/* The sheets into the workbook (out->xlsx, else
 * <outdir>/nccl_analysis_report.xlsx unless only CSVs or a page are asked
 * for), the CSV folder and the page, and the summary; an exit code. */
static int write_report(const tl_coll_sheets *sh, const tl_coll_summary *sum, const coll_outputs *out,
                        const char *outdir, double dt, int quiet, int imbalance)
{
    const char *csv = out->csv_dir;
    char *xlsx = NULL;
    if (out->xlsx) xlsx = tl_xstrdup(out->xlsx);
    else if (!csv && !out->html) {
        size_t n = strlen(outdir) + 40;
        xlsx = tl_xmalloc(n);
        snprintf(xlsx, n, "%s/nccl_analysis_report.xlsx", outdir);
    }
    int rc = xlsx || csv ? tl_cli_write_sheets(sh->v, sh->n, csv, xlsx, 0) : TL_EXIT_OK;
    if (rc == TL_EXIT_OK && out->html) rc = tl_cli_write_html(sh->v, sh->n, out->html, "collective");
    if (rc == TL_EXIT_OK && !quiet) {
        if (xlsx || csv) {
            fprintf(stderr, "collective report (%.3f s from the store):", dt);
            if (xlsx) fprintf(stderr, " %s", xlsx);
            if (csv) fprintf(stderr, "%s%s/", xlsx ? " and " : " ", csv);
            fputc('\n', stderr);
        }
        if (!imbalance) {
            for (size_t i = 0; i < sh->n; i++) printf("  %s: %zu rows\n", sh->v[i]->name, sh->v[i]->nrows);
        } else {
            tl_cli_coll_print_summary(stdout, sh, sum);
        }
    }
    free(xlsx);
    return rc;
}

/* --mpi: this process reads the collective records of its share of the
 * ranks; rank 0 gathers every share and runs the analysis (*writer: this
 * process has the sheets). */
static int coll_mpi(tl_store *s, const uint64_t *ids, size_t world, const tl_coll_opts *o, tl_coll_sheets *sh,
                    tl_coll_summary *sum, tl_err *err, int *writer)
{
    size_t lo = (size_t)tl_cli_mpi_rank() * world / (size_t)tl_cli_mpi_size();
    size_t hi = (size_t)(tl_cli_mpi_rank() + 1) * world / (size_t)tl_cli_mpi_size();
    tl_buf mine = {0}, all = {0};
    int rc = tl_coll_partials(s, ids, lo, hi, o->max_workers, &mine, err);
    int failed = tl_cli_mpi_any(rc != 0);
    if (!failed) tl_cli_mpi_gather(mine.p, mine.n, &all);
    tl_buf_free(&mine);
    *writer = tl_cli_mpi_rank() == 0;
    if (failed && !rc) rc = tl_errf(err, TL_ESTORE, "another process could not read its ranks");
    if (*writer && !rc) rc = tl_coll_report_partials(all.p, all.n, world, o, sh, sum, err);
    tl_buf_free(&all);
    if (!*writer) memset(sh, 0, sizeof *sh), memset(sum, 0, sizeof *sum);
    return rc;
}

/* The numbers and the one trace source the flags give; 0 or an exit code. */
static int check_flags(const char *prog, const char *const *val, const int *set, long *world, long *gpn,
                       long *workers)
{
    if (set[F_WORLD] && (parse_pos_int(val[F_WORLD], world) || *world < 1))
        return usage_error(prog, "argument --world_size: invalid positive int value: '%s'", val[F_WORLD]);
    if (set[F_GPN] && (parse_pos_int(val[F_GPN], gpn) || *gpn <= 0))
        return usage_error(prog, "gpus_per_node must be > 0 (got '%s')", val[F_GPN]);
    if (set[F_WORKERS] && (parse_pos_int(val[F_WORKERS], workers) || *workers < 1))
        return usage_error(prog, "argument --max_workers: invalid positive int value: '%s'", val[F_WORKERS]);
    int modes = !!val[F_DIR] + !!val[F_PATTERN] + !!val[F_GLOB] + !!val[F_CONFIG];
    if (modes != 1) {
        if (val[F_CONFIG] && modes > 1)
            return usage_error(prog, "%s", "--config replaces --trace_dir / --trace_pattern / --trace_glob: give one");
        fprintf(stderr, "%s: error: Provide exactly one of trace_dir, trace_pattern, or trace_glob\n", prog);
        return TL_EXIT_USAGE;
    }
    if (!val[F_CONFIG] && !*world) {
        fprintf(stderr, "%s: error: world_size must be provided\n", prog);
        return TL_EXIT_USAGE;
    }
    return 0;
}

int tl_cmd_collective(int argc, char **argv)
{
    /* Each rank's columns are decoded into fresh memory and freed when the
     * rank is done; keeping freed memory in the process (instead of glibc
     * returning it and the next rank faulting it in again, page by page,
     * under the kernel's mm lock) roughly halves the time to read a rank. */
    mallopt(M_MMAP_THRESHOLD, 64 << 20);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
    const char *prog = argc > 0 ? argv[0] : "TraceLens_generate_multi_rank_collective_report_pytorch";
    const char *val[F_N] = {0};
    int set[F_N] = {0};
    TL_VEC(const char *) aggs = {0};
    int rc = TL_EXIT_OK;
    tl_cli_args p;
    tl_cli_args_init(&p, argc, argv, FLAGS, F_N);
    for (int f; (f = tl_cli_next(&p)) != TL_CLI_END;) {
        if (f == TL_CLI_BAD) { tl_vec_free(&aggs); return usage_error(prog, "%s", p.msg); }
        if (f < 0) { tl_vec_free(&aggs); return usage_error(prog, "unrecognized arguments: %s", p.arg); }
        if (f == F_HELP) { fputs(HELP, stdout); tl_vec_free(&aggs); return 0; }
        set[f] = 1;
        val[f] = p.val;
        if (f == F_AGG) {
            aggs.n = 0;
            for (size_t k = 0; k < tl_cli_nvalues(&p); k++) tl_vec_push(&aggs, tl_cli_value(&p, k));
            if (!aggs.n) {
                tl_vec_free(&aggs);
                return usage_error(prog, "argument %s: expected at least one argument", p.name);
            }
        }
    }
    int quiet = set[F_QUIET];
    long world = 0, gpn = 0, workers = 0;
    if ((rc = check_flags(prog, val, set, &world, &gpn, &workers))) {
        tl_vec_free(&aggs);
        return rc;
    }

    /* resolve the rank files */
    strvec files = {0};
    char *outdir = NULL;
    if (val[F_DIR]) {
        for (long r = 0; r < world; r++) {
            size_t n = strlen(val[F_DIR]) + 48;
            char *p = tl_xmalloc(n);
            snprintf(p, n, "%s/rank%ld_trace.json", val[F_DIR], r);
            tl_vec_push(&files, p);
        }
        outdir = tl_xstrdup(val[F_DIR]);
    } else if (val[F_PATTERN]) {
        const char *star = strchr(val[F_PATTERN], '*');
        if (!star || strchr(star + 1, '*')) {
            fprintf(stderr, "%s: error: trace_pattern must contain exactly one '*' character as a placeholder for rank id\n",
                    prog);
            rc = TL_EXIT_USAGE;
            goto out;
        }
        for (long r = 0; r < world; r++) {
            size_t n = strlen(val[F_PATTERN]) + 32;
            char *p = tl_xmalloc(n);
            snprintf(p, n, "%.*s%ld%s", (int)(star - val[F_PATTERN]), val[F_PATTERN], r, star + 1);
            tl_vec_push(&files, p);
        }
    } else if (val[F_GLOB]) {
        rc = glob_rank_files(prog, val[F_GLOB], val[F_REGEX], world, &files);
        if (rc) goto out;
    }
    for (size_t i = 0; i < files.n; i++)
        if (!is_file(files.v[i])) {
            fprintf(stderr, "Expected trace file not found: %s\n", files.v[i]);
            rc = TL_EXIT_FAIL;
            goto out;
        }
    if (files.n && !outdir) outdir = common_dir(&files);

    if (set[F_MPI] && (rc = tl_cli_mpi_start("collective", 1))) goto out;
    /* --config reads stored ranks: it never creates a store */
    tl_store *s = val[F_CONFIG] ? tl_cli_store_read(val[F_DB]) : tl_cli_store(val[F_DB]);
    if (!s) { rc = TL_EXIT_STORE; goto out; }
    uint64_t *ids = NULL;
    size_t nranks = 0;
    tl_err err = {0};
    if (val[F_CONFIG]) {
        char *dir = NULL;
        if (tl_coll_config_ids(s, val[F_CONFIG], (size_t)world, quiet, &ids, &nranks, &dir, &err)) {
            fprintf(stderr, "%s: %s\n", prog, err.msg);
            rc = err.code == TL_ENOTFOUND ? TL_EXIT_NOTFOUND : TL_EXIT_FAIL;
            tl_store_close(s);
            goto out;
        }
        struct stat st;
        outdir = dir && stat(dir, &st) == 0 && S_ISDIR(st.st_mode) ? dir : (free(dir), tl_xstrdup("."));
    } else {
        nranks = files.n;
        ids = tl_xcalloc(nranks, sizeof *ids);
        size_t lo = set[F_MPI] ? (size_t)tl_cli_mpi_rank() * nranks / (size_t)tl_cli_mpi_size() : 0;
        size_t hi = set[F_MPI] ? (size_t)(tl_cli_mpi_rank() + 1) * nranks / (size_t)tl_cli_mpi_size() : nranks;
        if (tl_cli_mpi_any(ingest_files(s, files.v + lo, hi - lo, lo, workers > 0 ? (int)workers : 2, quiet, ids + lo))) {
            free(ids);
            tl_store_close(s);
            rc = TL_EXIT_FAIL;
            goto out;
        }
    }

    tl_coll_opts o;
    tl_coll_opts_default(&o);
    o.agg = aggs.v;
    o.nagg = aggs.n;
    o.gpus_per_node = (int)gpn;
    o.all2allv_heatmap = set[F_HEAT];
    o.imbalance = !set[F_NOIMB];
    o.max_workers = (int)workers;
    o.quiet = quiet;
    o.timing = tl_env.timing;
    tl_coll_sheets sh;
    tl_coll_summary sum;
    double t0 = tl_now();
    int writer = 1;
    if (set[F_MPI] ? coll_mpi(s, ids, nranks, &o, &sh, &sum, &err, &writer)
                   : tl_coll_report(s, ids, nranks, &o, &sh, &sum, &err)) {
        fprintf(stderr, "%s: %s\n", err.code == TL_EFORMAT ? "ValueError" : prog, err.msg);
        rc = err.code == TL_EUSAGE ? TL_EXIT_USAGE : tl_cli_exit_for(err.code, TL_EXIT_FAIL);
        free(ids);
        tl_store_close(s);
        goto out;
    }
    double dt = tl_now() - t0;
    free(ids);
    tl_store_close(s);
    if (!writer) goto out;

    coll_outputs outs = {val[F_XLSX], val[F_CSV], val[F_HTML]};
    rc = write_report(&sh, &sum, &outs, outdir, dt, quiet, o.imbalance);
    tl_coll_sheets_free(&sh);
    tl_coll_summary_free(&sum);
out:
    for (size_t i = 0; i < files.n; i++) free(files.v[i]);
    tl_vec_free(&files);
    tl_vec_free(&aggs);
    free(outdir);
    return tl_cli_mpi_finish(rc);
}
