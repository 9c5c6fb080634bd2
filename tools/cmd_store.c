/* cmd_store.c — the store's own commands: ingest (files and folders into
 * the store), ls, info and rm. */
#include "tools/cli.h"
#include "ingest/ingest.h"
#include "query/core/trace.h" /* tl_args_get_*: catalog records are JSON */
#include "query/adhoc/adhoc.h"

#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char *INGEST_USAGE =
    "Usage: tracelens ingest [--db DIR] [options] PATH...\n"
    "\n"
    "Parses trace files into the store, one write transaction per trace. PATH may be\n"
    "a file (.json, .json.gz or any gzip file, rocprofv3 *_results.json, JAX\n"
    "*.xplane.pb; the format is recognised by content) or a folder, searched\n"
    "recursively. A file already stored (same content hash) is not parsed again.\n"
    "Prints one line per trace: <id>\\t<events>\\t<path>, where events counts the\n"
    "complete (ph X) events stored; a throughput line goes to stderr, and a\n"
    "progress bar too when stderr is a terminal.\n"
    "\n"
    "Options:\n"
    "  --db DIR               the store directory (see tracelens --help)\n"
    "  -p, --rank-pattern S   rank files: S followed by digits in the file name\n"
    "                         (default rank_; also rank-N, rankN, rank/N forms)\n"
    "  -f, --filter SUBSTR    only paths containing SUBSTR (repeatable: all must match)\n"
    "  --ext json|gz|pb       only files with this extension when walking folders\n"
    "  --label KEY=VALUE      attach a user label to every trace ingested (repeatable)\n"
    "  --dry-run              list what would be ingested and how it is grouped\n"
    "  -j, --jobs N           files parsed in parallel (default: the number of cores);\n"
    "                         one writer commits them, one transaction per trace\n"
    "                         (over 32 MiB stored: ~32 MiB transactions, the trace\n"
    "                         visible with the last; its chunks wait in a spill\n"
    "                         file in $TMPDIR). A single plain .json file of 64 MB\n"
    "                         or more is itself parsed on all cores, in parts of\n"
    "                         at most 64 MiB, a few at a time (bounded memory;\n"
    "                         TRACELENS_PARSE_THREADS=N sets how many cores)\n"
    "  -q, --quiet            no progress bar or throughput line\n"
    "  --mpi                  under mpirun: each process ingests its share of the\n"
    "                         files (contiguous, in walk order) into its own store;\n"
    "                         name it with %r, the MPI rank: --db /local/tl-%r\n"
    "                         (read them together with --db @LIST or --db ... x N)\n"
    "  --max-input-bytes N    refuse a file larger than N bytes decompressed (512M,\n"
    "                         2G, off; also TRACELENS_MAX_INPUT_BYTES; see tracelens\n"
    "                         --help for TRACELENS_MAX_RATIO, the gzip ratio guard)\n"
    "\n"
    "A folder is searched through links to files and folders; a folder reached\n"
    "twice (a link loop) is read once. Names are taken in byte order.\n"
    "\n"
    "Bad input (truncated or corrupt files, not JSON, no traceEvents, wrong types)\n"
    "is reported with the file, byte offset and what was expected; the store is\n"
    "left unchanged for that file and the other files are still ingested (exit 1).\n";

typedef struct ingest_ctx {
    tl_store *s;
    const char *rank_pattern;
    const char *filters[32];
    int nfilters;
    const char *ext;
    char *labels_json;
    int dry_run, quiet, jobs, mpi;
    int failures, count;
    uint64_t bytes, events;
    /* the files to ingest, with their options */
    TL_VEC(char *) paths;
    TL_VEC(tl_ingest_opts) opts;
    TL_VEC(char *) cfgs;
    TL_VEC(uint8_t) walked; /* found by walking a folder (not named) */
    int walking;
} ingest_ctx;

static int has_suffix(const char *s, const char *suf)
{
    size_t n = strlen(s), m = strlen(suf);
    return n >= m && strcmp(s + n - m, suf) == 0;
}

/* Rank from a path: <pattern><digits>, or rank[-_/]?<digits>. */
static long rank_of(const char *path, const char *pattern)
{
    const char *p = path, *hit = NULL;
    size_t pl = strlen(pattern);
    while ((p = strstr(p, pattern))) {
        if (p[pl] >= '0' && p[pl] <= '9') hit = p + pl;
        p++;
    }
    if (hit) return strtol(hit, NULL, 10);
    for (p = path; (p = strcasestr(p, "rank")); p++) {
        const char *q = p + 4;
        if (*q == '-' || *q == '_' || *q == '/') q++;
        if (*q >= '0' && *q <= '9') hit = q;
    }
    return hit ? strtol(hit, NULL, 10) : -1;
}

/* Queues a file: rank from the name, configuration = its parent folder. */
static void add_file(ingest_ctx *c, const char *path)
{
    for (int i = 0; i < c->nfilters; i++)
        if (!strstr(path, c->filters[i])) return;
    long rank = rank_of(path, c->rank_pattern);
    char *dup = tl_xstrdup(path);
    char *cfg = tl_xstrdup(basename(dirname(dup)));
    free(dup);
    tl_ingest_opts o = {.progress = 0, .rank = rank, .config = rank >= 0 ? cfg : NULL,
                        .labels_json = c->labels_json};
    tl_cli_ingest_env(&o);
    tl_vec_push(&c->paths, tl_xstrdup(path));
    tl_vec_push(&c->opts, o);
    tl_vec_push(&c->cfgs, cfg);
    tl_vec_push(&c->walked, (uint8_t)c->walking);
}

static int wanted_file(ingest_ctx *c, const char *name)
{
    if (c->ext) {
        if (!strcmp(c->ext, "json")) return has_suffix(name, ".json");
        if (!strcmp(c->ext, "gz")) return has_suffix(name, ".gz");
        if (!strcmp(c->ext, "pb")) return has_suffix(name, ".pb");
        return has_suffix(name, c->ext);
    }
    return has_suffix(name, ".json") || has_suffix(name, ".json.gz") || has_suffix(name, ".gz") ||
           has_suffix(name, ".pb");
}

/* A file found by walking a folder: execution_details.json files of
 * graph-capture folders are descriptions, not traces. */
static void walk_file(void *ctx, const char *path, const char *name)
{
    ingest_ctx *c = ctx;
    if (wanted_file(c, name) && strcmp(name, "execution_details.json") != 0) add_file(c, path);
}

static void walk_unreadable(void *ctx, const char *path, int errnum)
{
    ingest_ctx *c = ctx;
    fprintf(stderr, "tracelens: %s: cannot read: %s\n", path, strerror(errnum));
    c->failures++;
}

/* Clears the progress line ("[3/89] ingested" on a terminal) before a
 * result or message line, so that neither is glued to the other. */
static void clear_progress(const ingest_ctx *c)
{
    if (!c->quiet && isatty(2) && c->paths.n > 1) fputs("\r\033[K", stderr);
}

static void ingest_done(void *ctx, size_t i, int rc, const tl_ingest_prep *pp, const tl_err *err)
{
    ingest_ctx *c = ctx;
    clear_progress(c);
    if (rc == TL_ENOTTRACE && c->walked.v[i]) {
        /* A folder may hold other JSON (e.g. tracegen's truth.json). */
        if (!c->quiet) fprintf(stderr, "tracelens: skipped %s (not a trace)\n", c->paths.v[i]);
        c->opts.v[i].rank = -3;
        return;
    }
    if (rc) {
        fprintf(stderr, "tracelens: %s\n", err->msg);
        c->failures++;
        c->opts.v[i].rank = -2; /* failed: for the configuration summary */
        return;
    }
    char hex[17];
    tl_id_format(pp->res.id, hex);
    printf("%s\t%llu\t%s%s\n", hex, (unsigned long long)pp->res.events, c->paths.v[i],
           pp->res.existed ? "\t(already stored)" : "");
    fflush(stdout);
    c->count++;
    if (!pp->res.existed) {
        c->bytes += pp->res.json_bytes;
        c->events += pp->res.events;
    }
    if (!c->quiet && isatty(2) && c->paths.n > 1)
        fprintf(stderr, "\r  [%d/%zu] ingested", c->count + c->failures, c->paths.n);
}

/* Configurations with a failed rank file or a gap in the rank numbers. */
static void config_summary(ingest_ctx *c)
{
    for (size_t i = 0; i < c->paths.n; i++) {
        if (!c->opts.v[i].config) continue;
        int first = 1;
        for (size_t k = 0; k < i; k++)
            if (c->opts.v[k].config && !strcmp(c->cfgs.v[k], c->cfgs.v[i])) first = 0;
        if (!first) continue;
        long maxr = -1, have = 0, failed = 0;
        tl_buf fl = {0};
        for (size_t k = i; k < c->paths.n; k++) {
            if (!c->opts.v[k].config || strcmp(c->cfgs.v[k], c->cfgs.v[i]) || c->opts.v[k].rank == -3) continue;
            long r = rank_of(c->paths.v[k], c->rank_pattern);
            if (r > maxr) maxr = r;
            if (c->opts.v[k].rank == -2) { failed++; tl_buf_printf(&fl, " %ld", r); }
            else have++;
        }
        if (failed || have + failed < maxr + 1)
            fprintf(stderr, "tracelens: configuration %s is incomplete: %ld of %ld ranks ingested%s%s\n",
                    c->cfgs.v[i], have, maxr + 1, failed ? "; failed ranks:" : "", failed ? fl.p : "");
        tl_buf_free(&fl);
    }
}

typedef TL_VEC(const char *) strlist;

/* --mpi: keeps this process's contiguous share of the files. */
static void keep_share(ingest_ctx *c)
{
    size_t n = c->paths.n, kept = 0;
    for (size_t i = 0; i < n; i++) {
        if (!tl_cli_mpi_mine(i, n)) {
            free(c->paths.v[i]);
            free(c->cfgs.v[i]);
            continue;
        }
        c->paths.v[kept] = c->paths.v[i], c->opts.v[kept] = c->opts.v[i];
        c->cfgs.v[kept] = c->cfgs.v[i], c->walked.v[kept] = c->walked.v[i];
        kept++;
    }
    c->paths.n = c->opts.n = c->cfgs.n = c->walked.n = kept;
}

enum { I_HELP, I_DB, I_RANK, I_FILTER, I_EXT, I_JOBS, I_LABEL, I_DRY, I_QUIET, I_MPI };
static const tl_cli_opt INGEST_OPTS[] = {
    [I_HELP] = {"-h|--help", TL_CLI_FLAG},
    [I_DB] = {"--db", TL_CLI_VALUE},
    [I_RANK] = {"-p|--rank-pattern", TL_CLI_VALUE},
    [I_FILTER] = {"-f|--filter", TL_CLI_VALUE},
    [I_EXT] = {"--ext", TL_CLI_VALUE},
    [I_JOBS] = {"-j|--jobs", TL_CLI_VALUE},
    [I_LABEL] = {"--label", TL_CLI_VALUE},
    [I_DRY] = {"--dry-run", TL_CLI_FLAG},
    [I_QUIET] = {"-q|--quiet", TL_CLI_FLAG},
    [I_MPI] = {"--mpi", TL_CLI_FLAG},
};

/* Parses ingest's command line into c, paths and the labels' JSON; -1 when
 * --help was printed, else 0 or an exit code. */
static int parse_ingest(ingest_ctx *c, const char **db, int argc, char **argv, strlist *paths, tl_buf *labels)
{
    tl_cli_args p;
    tl_cli_args_init(&p, argc, argv, INGEST_OPTS, sizeof INGEST_OPTS / sizeof *INGEST_OPTS);
    for (int k; (k = tl_cli_next(&p)) != TL_CLI_END;) {
        const char *v = p.val;
        switch (k) {
        case I_HELP: fputs(INGEST_USAGE, stdout); return -1;
        case I_DB: *db = v; break;
        case I_RANK: c->rank_pattern = v; break;
        case I_FILTER: if (c->nfilters < 32) c->filters[c->nfilters++] = v; break;
        case I_EXT: c->ext = v; break;
        case I_JOBS:
            c->jobs = atoi(v);
            if (c->jobs < 1) { fprintf(stderr, "tracelens: --jobs wants a positive number, got '%s'\n", v); return TL_EXIT_USAGE; }
            break;
        case I_LABEL: {
            const char *eq = strchr(v, '=');
            if (!eq || eq == v) { fprintf(stderr, "tracelens: --label wants KEY=VALUE, got '%s'\n", v); return TL_EXIT_USAGE; }
            tl_buf_putc(labels, labels->n ? ',' : '{');
            tl_buf_json_str(labels, v, (size_t)(eq - v));
            tl_buf_putc(labels, ':');
            tl_buf_json_str(labels, eq + 1, strlen(eq + 1));
            break;
        }
        case I_DRY: c->dry_run = 1; break;
        case I_QUIET: c->quiet = 1; break;
        case I_MPI: c->mpi = 1; break;
        case TL_CLI_POSITIONAL: tl_vec_push(paths, p.arg); break;
        case TL_CLI_BAD: fprintf(stderr, "tracelens ingest: %s\n", p.msg); return TL_EXIT_USAGE;
        default: fprintf(stderr, "tracelens ingest: unknown option %s%s (see --help)\n", p.arg, tl_cli_hint(&p)); return TL_EXIT_USAGE;
        }
    }
    return 0;
}

/* Where a store at dir would be created: made gets the first missing
 * directory on the path ("" when dir exists), *is_new whether data.mdb is
 * missing. */
static void store_missing(const char *dir, char *made, size_t n, int *is_new)
{
    struct stat st;
    char data[4096];
    snprintf(data, sizeof data, "%s/data.mdb", dir);
    *is_new = stat(data, &st) != 0;
    made[0] = 0;
    if (stat(dir, &st) == 0) return;
    snprintf(made, n, "%s", dir);
    for (char *slash; (slash = strrchr(made, '/')) && slash != made;) {
        *slash = 0;
        if (stat(made, &st) == 0) { *slash = '/'; return; }
    }
}

static int count_trace(void *ctx, uint64_t id, const char *json)
{
    (void)id, (void)json;
    ++*(size_t *)ctx;
    return 1;
}

/* Closes s; when this ingest created it and it holds no trace (every file
 * failed), removes its files and the directories created for it, so that a
 * failed first ingest leaves nothing behind. */
static void close_store_after_ingest(tl_store *s, int is_new, const char *made)
{
    size_t traces = 0;
    tl_reader *r = NULL;
    tl_err err = {0};
    if (is_new && tl_reader_open(s, &r, &err) == 0) {
        if (tl_reader_foreach(r, count_trace, &traces, &err)) traces = 1;
        tl_reader_close(r);
    } else traces = 1;
    char dir[4096], path[4096 + 16];
    snprintf(dir, sizeof dir, "%s", tl_store_dir(s));
    tl_store_close(s);
    if (traces) return;
    snprintf(path, sizeof path, "%s/data.mdb", dir);
    unlink(path);
    snprintf(path, sizeof path, "%s/lock.mdb", dir);
    unlink(path);
    for (size_t stop = strlen(made); made[0] && strlen(dir) >= stop && rmdir(dir) == 0;) {
        char *slash = strrchr(dir, '/');
        if (!slash) break;
        *slash = 0;
    }
}

int tl_cmd_ingest(int argc, char **argv)
{
    const char *db = NULL;
    ingest_ctx c = {.rank_pattern = "rank_"};
    long nproc = sysconf(_SC_NPROCESSORS_ONLN);
    c.jobs = nproc > 0 ? (int)nproc : 1;
    strlist paths = {0};
    tl_buf labels = {0};
    int rc = parse_ingest(&c, &db, argc, argv, &paths, &labels);
    if (rc) {
        tl_vec_free(&paths);
        tl_buf_free(&labels);
        return rc < 0 ? TL_EXIT_OK : rc;
    }
    if (!paths.n) { fputs(INGEST_USAGE, stderr); return TL_EXIT_USAGE; }
    if (c.mpi && (rc = tl_cli_mpi_start("ingest", 0))) {
        tl_vec_free(&paths);
        tl_buf_free(&labels);
        return rc;
    }
    if (labels.n) { tl_buf_putc(&labels, '}'); c.labels_json = labels.p; }
    for (size_t i = 0; i < paths.n; i++) {
        struct stat st;
        if (stat(paths.v[i], &st) != 0) {
            fprintf(stderr, "tracelens: %s: no such file or folder\n", paths.v[i]);
            c.failures++;
        } else if (S_ISDIR(st.st_mode)) {
            c.walking = 1;
            tl_cli_walk(paths.v[i], &(tl_cli_walk_fns){walk_file, walk_unreadable, &c});
            c.walking = 0;
        } else {
            add_file(&c, paths.v[i]);
        }
    }
    int none = !c.paths.n && !c.failures;
    if (c.mpi) keep_share(&c);
    if (none) {
        fprintf(stderr, "tracelens: no trace files found in %s%s\n", paths.v[0], paths.n > 1 ? " and the others" : "");
        c.failures++;
    } else if (c.dry_run) {
        for (size_t i = 0; i < c.paths.n; i++)
            printf("%s\tconfig=%s\trank=%lld\n", c.paths.v[i], c.opts.v[i].config ? c.opts.v[i].config : "-",
                   (long long)c.opts.v[i].rank);
    } else if (c.paths.n) {
        char dirbuf[4096], made[4096];
        int is_new;
        store_missing(tl_cli_store_dir(db, dirbuf, sizeof dirbuf), made, sizeof made, &is_new);
        c.s = tl_cli_store(db);
        if (!c.s) return tl_cli_mpi_finish(TL_EXIT_STORE);
        if (c.paths.n == 1) c.opts.v[0].progress = !c.quiet;
        double t0 = tl_now();
        tl_ingest_many(c.s, (const char *const *)c.paths.v, c.opts.v, c.paths.n, c.jobs, ingest_done, &c);
        double dt = tl_now() - t0;
        if (!c.quiet && isatty(2) && c.paths.n > 1) fprintf(stderr, "\n");
        if (!c.quiet && c.bytes)
            fprintf(stderr, "tracelens: ingested %d trace(s), %llu events, %.1f MB of JSON in %.2f s (%.0f MB/s)\n",
                    c.count, (unsigned long long)c.events, (double)c.bytes / 1e6, dt, (double)c.bytes / 1e6 / dt);
        if (!c.mpi) config_summary(&c); /* a process sees only its share of a configuration */
        close_store_after_ingest(c.s, is_new, made);
    }
    for (size_t i = 0; i < c.paths.n; i++) { free(c.paths.v[i]); free(c.cfgs.v[i]); }
    tl_vec_free(&c.paths);
    tl_vec_free(&c.opts);
    tl_vec_free(&c.cfgs);
    tl_vec_free(&c.walked);
    tl_buf_free(&labels);
    tl_vec_free(&paths);
    return tl_cli_mpi_finish(c.failures ? TL_EXIT_FAIL : TL_EXIT_OK);
}

/* ---- ls / info / rm ---- */
static const char *jget_str(const char *json, const char *key, char *buf, size_t n)
{
    tl_buf b = {0};
    if (tl_args_get_str(json, strlen(json), key, &b) != 0 || !b.p) { tl_buf_free(&b); snprintf(buf, n, "-"); return buf; }
    snprintf(buf, n, "%s", b.p);
    tl_buf_free(&b);
    return buf;
}

static int64_t jget_i64(const char *json, const char *key, int64_t dflt)
{
    int64_t v;
    return tl_args_get_i64(json, strlen(json), key, &v) == 0 ? v : dflt;
}

/* What ls prints after its fixed columns: every label, and/or one column
 * per --label KEY. */
typedef struct ls_opts {
    const char *unit; /* of the GPU span column */
    double div;       /* ns per unit */
    int labels;
    strlist keys;
    tl_buf text;
} ls_opts;

static int ls_cb(void *ctx, uint64_t id, const char *json)
{
    ls_opts *o = ctx;
    char hex[17], fmt[32], path[4096], when[32];
    tl_id_format(id, hex);
    int64_t rank = jget_i64(json, "rank", -1);
    int64_t g0 = jget_i64(json, "gpu_ts_min_ns", 0), g1 = jget_i64(json, "gpu_ts_max_ns", 0);
    time_t t = (time_t)(jget_i64(json, "ingest_time_ns", 0) / 1000000000);
    struct tm tmv;
    localtime_r(&t, &tmv);
    strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &tmv);
    char rk[24];
    if (rank >= 0) snprintf(rk, sizeof rk, "%lld", (long long)rank); else snprintf(rk, sizeof rk, "-");
    char span[48];
    if (o->div == 1) snprintf(span, sizeof span, "%lld ns", (long long)(g1 - g0));
    else snprintf(span, sizeof span, "%.3f %s", (double)(g1 - g0) / o->div, o->unit);
    printf("%s\t%s\t%s\t%lld\t%s\t%s\t%s", hex, jget_str(json, "format", fmt, sizeof fmt), rk,
           (long long)jget_i64(json, "events", 0), span, jget_str(json, "path", path, sizeof path), when);
    if (o->labels) {
        tl_cli_catalog_labels(json, NULL, &o->text);
        printf("\t%s", o->text.n ? o->text.p : "-");
    }
    for (size_t k = 0; k < o->keys.n; k++) {
        tl_cli_catalog_labels(json, o->keys.v[k], &o->text);
        printf("\t%s", o->text.n ? o->text.p : "-");
    }
    putchar('\n');
    return 0;
}

/* info and rm take the store and trace ids */
enum { S_HELP, S_DB };
static const tl_cli_opt STORE_OPTS[] = {
    [S_HELP] = {"-h|--help", TL_CLI_FLAG},
    [S_DB] = {"--db", TL_CLI_VALUE},
};

static const char *LS_HELP_TEXT =
    "Usage: tracelens ls [--db DIR] [--labels] [--label KEY]... [--units U]\n\nOne line per stored trace, tab-separated: id, format, rank (- when\n"
    "unknown), complete events, GPU time span, source path, ingest time.\n\n"
    "Options:\n"
    "  --units U     the GPU span in ns, us (or µs), ms (default) or s\n"
    "  --labels      one more column: every label, KEY=VALUE,KEY=VALUE (- when none)\n"
    "  --label KEY   one more column per KEY: that label's value (- when unset);\n"
    "                repeatable, after the --labels column\n"
    "Labels are set by `ingest --label` and `tracelens label`.";
static const char *RM_HELP =
    "Usage: tracelens rm [--db DIR] ID...\n\nRemoves traces (id or unique prefix of at least 4 hex digits) from the\n"
    "store, each in one transaction.";
static const char *INFO_HELP =
    "Usage: tracelens info [--db DIR] ID\n\nPrints the catalog record of a trace (JSON: source, format, rank, counts,\n"
    "time span, labels, top-level trace metadata) and the stored size per column.";

/* Parses info/rm (help: their text); -1 when --help was printed, else 0
 * or an exit code. */
static int parse_store_cmd(int argc, char **argv, const char *help, const char **db, strlist *ids)
{
    tl_cli_args p;
    tl_cli_args_init(&p, argc, argv, STORE_OPTS, sizeof STORE_OPTS / sizeof *STORE_OPTS);
    for (int k; (k = tl_cli_next(&p)) != TL_CLI_END;) {
        if (k == S_HELP) { puts(help); return -1; }
        if (k == S_DB) *db = p.val;
        else if (k == TL_CLI_POSITIONAL) tl_vec_push(ids, p.arg);
        else if (k == TL_CLI_BAD) { fprintf(stderr, "tracelens: %s\n", p.msg); return TL_EXIT_USAGE; }
        else { fprintf(stderr, "tracelens: unknown option %s%s\n", p.arg, tl_cli_hint(&p)); return TL_EXIT_USAGE; }
    }
    return 0;
}

enum { LS_HELP, LS_DB, LS_LABELS, LS_LABEL, LS_UNITS };
static const tl_cli_opt LS_OPTS[] = {
    [LS_HELP] = {"-h|--help", TL_CLI_FLAG},
    [LS_DB] = {"--db", TL_CLI_VALUE},
    [LS_LABELS] = {"--labels", TL_CLI_FLAG},
    [LS_LABEL] = {"--label", TL_CLI_VALUE},
    [LS_UNITS] = {"--units", TL_CLI_VALUE},
};

int tl_cmd_ls(int argc, char **argv)
{
    const char *db = NULL;
    ls_opts o = {.unit = "ms", .div = 1e6};
    tl_cli_args p;
    tl_cli_args_init(&p, argc, argv, LS_OPTS, sizeof LS_OPTS / sizeof *LS_OPTS);
    for (int k; (k = tl_cli_next(&p)) != TL_CLI_END;) {
        int bad = 0;
        if (k == LS_HELP) { puts(LS_HELP_TEXT); tl_vec_free(&o.keys); return TL_EXIT_OK; }
        if (k == LS_DB) db = p.val;
        else if (k == LS_LABELS) o.labels = 1;
        else if (k == LS_LABEL) tl_vec_push(&o.keys, p.val);
        else if (k == LS_UNITS) {
            bad = tl_adhoc_unit(p.val, &o.unit, &o.div) != 0;
            if (bad) fprintf(stderr, "tracelens ls: --units wants ns, us (µs), ms or s, got '%s'\n", p.val);
        }
        else if (k == TL_CLI_BAD) { fprintf(stderr, "tracelens: %s\n", p.msg); bad = 1; }
        else { fprintf(stderr, "tracelens ls: unknown argument %s%s\n", p.arg, tl_cli_hint(&p)); bad = 1; }
        if (bad) { tl_vec_free(&o.keys); return TL_EXIT_USAGE; }
    }
    tl_store *s = tl_cli_store_read(db);
    if (!s) { tl_vec_free(&o.keys); return TL_EXIT_STORE; }
    tl_reader *r;
    tl_err err = {0};
    int rc = tl_reader_open(s, &r, &err);
    if (!rc) {
        /* a damaged record is skipped and the walk goes on; it ends with the error */
        rc = tl_reader_foreach(r, ls_cb, &o, &err);
        tl_reader_close(r);
    }
    if (rc) fprintf(stderr, "tracelens: %s\n", err.msg);
    tl_store_close(s);
    tl_vec_free(&o.keys);
    tl_buf_free(&o.text);
    return rc ? TL_EXIT_STORE : TL_EXIT_OK;
}

/* info of one trace: its catalog record and column sizes; a record or
 * chunk that fails its check is the store's damage (exit 3). Returns the
 * exit code so far, or TL_EXIT_STORE. */
static int print_info(tl_reader *r, uint64_t id, int code)
{
    const char *cat;
    char *sizes = NULL;
    tl_err err = {0};
    if (tl_reader_catalog(r, id, &cat, &err) || tl_reader_sizes(r, id, &sizes, &err)) {
        fprintf(stderr, "tracelens: %s\n", err.msg);
        free(sizes);
        return TL_EXIT_STORE;
    }
    printf("{\"catalog\":%s,\n \"columns\":%s}\n", cat, sizes ? sizes : "{}");
    free(sizes);
    return code;
}

static int info_rm(int argc, char **argv, int rm)
{
    const char *db = NULL;
    strlist ids = {0};
    int rc = parse_store_cmd(argc, argv, rm ? RM_HELP : INFO_HELP, &db, &ids);
    if (rc) {
        tl_vec_free(&ids);
        return rc < 0 ? TL_EXIT_OK : rc;
    }
    if (!ids.n) { fprintf(stderr, "tracelens %s: which trace? (an id from `tracelens ls`)\n", rm ? "rm" : "info"); return TL_EXIT_USAGE; }
    tl_store *s = tl_cli_store_read(db);
    if (!s) {
        tl_vec_free(&ids);
        return TL_EXIT_STORE;
    }
    int code = 0;
    for (size_t k = 0; k < ids.n; k++) {
        tl_reader *r;
        tl_err err = {0};
        if (tl_reader_open(s, &r, &err)) { fprintf(stderr, "tracelens: %s\n", err.msg); code = TL_EXIT_STORE; break; }
        uint64_t id;
        if (tl_reader_resolve(r, ids.v[k], &id, &err)) {
            fprintf(stderr, "tracelens: %s\n", err.msg);
            tl_reader_close(r);
            code = TL_EXIT_NOTFOUND;
            continue;
        }
        if (rm) {
            tl_reader_close(r);
            if (tl_store_delete(s, id, &err)) { fprintf(stderr, "tracelens: %s\n", err.msg); code = TL_EXIT_FAIL; }
            else { char hex[17]; tl_id_format(id, hex); printf("removed %s\n", hex); }
        } else {
            code = print_info(r, id, code);
            tl_reader_close(r);
        }
    }
    tl_vec_free(&ids);
    tl_store_close(s);
    return code;
}


int tl_cmd_info(int argc, char **argv) { return info_rm(argc, argv, 0); }

int tl_cmd_rm(int argc, char **argv) { return info_rm(argc, argv, 1); }
