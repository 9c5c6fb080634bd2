/* cli.c — helpers shared by the CLI subcommands (see cli.h). */
#include "tools/cli.h"
#include "ingest/ingest.h"
#include "report/report.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* dir with each %r replaced by the MPI rank, into buf when it has one. */
static const char *with_rank(const char *dir, char *buf, size_t n)
{
    const char *r = strstr(dir, "%r");
    if (!r) return dir;
    tl_buf b = {0};
    for (const char *p = dir; *p;) {
        if (p[0] == '%' && p[1] == 'r') {
            tl_buf_printf(&b, "%d", tl_cli_mpi_rank());
            p += 2;
        } else {
            tl_buf_putc(&b, *p++);
        }
    }
    snprintf(buf, n, "%.*s", (int)b.n, b.p);
    tl_buf_free(&b);
    return buf;
}

const char *tl_cli_store_dir(const char *db, char *buf, size_t n)
{
    if (db && *db) return with_rank(db, buf, n);
    if (tl_env.db) return with_rank(tl_env.db, buf, n);
    if (tl_env.xdg_data_home) {
        snprintf(buf, n, "%s/tracelens", tl_env.xdg_data_home);
        return buf;
    }
    snprintf(buf, n, "%s/.local/share/tracelens", tl_env.home ? tl_env.home : ".");
    return buf;
}

/* The store list the command line names, when it names several stores
 * (--db more than once) or a list file (--db @FILE): 1 and *sh, its shard
 * folders; 0 when it names one store (tl_cli_store_dir's); -1 after
 * printing why the list is bad. */
static int store_list(const char *db, tl_cli_shards *sh)
{
    char buf[4096];
    const char *one[1] = {tl_cli_store_dir(db, buf, sizeof buf)};
    const char *const *names = one;
    size_t n = 1;
    if (tl_cli_flags.ndbs > 1) names = tl_cli_flags.dbs, n = tl_cli_flags.ndbs;
    if (n == 1 && names[0][0] != '@') return 0;
    return tl_cli_shards_of(names, n, sh) ? -1 : 1;
}

/* When the command line names a store list: 1 and *out, the list opened
 * as one store (NULL after printing the error); 0 when it names one store. */
static int open_list(const char *db, tl_store **out)
{
    tl_cli_shards sh;
    int k = store_list(db, &sh);
    if (!k) return 0;
    *out = NULL;
    if (k < 0) return 1;
    tl_err err = {0};
    if (tl_store_open_list((const char *const *)sh.dirs, sh.n, out, &err)) {
        fprintf(stderr, "tracelens: %s\n", err.msg);
        *out = NULL;
    }
    tl_cli_shards_free(&sh);
    return 1;
}

tl_store *tl_cli_store(const char *db)
{
    char buf[4096];
    const char *dir = tl_cli_store_dir(db, buf, sizeof buf);
    tl_store *s;
    tl_err err = {0};
    if (open_list(db, &s)) return s;
    if (tl_store_open(dir, &s, &err)) {
        fprintf(stderr, "tracelens: %s\n", err.msg);
        return NULL;
    }
    return s;
}

tl_store *tl_cli_store_read(const char *db)
{
    char buf[4096];
    const char *dir = tl_cli_store_dir(db, buf, sizeof buf);
    tl_store *s;
    tl_err err = {0};
    if (open_list(db, &s)) return s;
    if (tl_store_open_read(dir, &s, &err)) {
        fprintf(stderr, "tracelens: %s\n", err.msg);
        return NULL;
    }
    return s;
}

int tl_cli_store_share(const char *db, tl_store **out)
{
    *out = NULL;
    tl_err err = {0};
    tl_cli_shards sh;
    int k = store_list(db, &sh);
    if (k < 0) return TL_EXIT_USAGE;
    int rc = TL_OK;
    if (!k) {
        /* one store: each process's own with %r, else rank 0's alone */
        const char *named = db && *db ? db : tl_env.db;
        char buf[4096];
        if ((named && strstr(named, "%r")) || tl_cli_mpi_rank() == 0)
            rc = tl_store_open_read(tl_cli_store_dir(db, buf, sizeof buf), out, &err);
    } else {
        TL_VEC(const char *) mine = {0};
        for (size_t i = 0; i < sh.n; i++)
            if (tl_cli_mpi_mine(i, sh.n)) tl_vec_push(&mine, sh.dirs[i]);
        if (mine.n == 1) rc = tl_store_open_read(mine.v[0], out, &err);
        else if (mine.n > 1) rc = tl_store_open_list(mine.v, mine.n, out, &err);
        tl_vec_free(&mine);
        tl_cli_shards_free(&sh);
    }
    if (rc) {
        fprintf(stderr, "tracelens: process %d: %s\n", tl_cli_mpi_rank(), err.msg);
        *out = NULL;
        return TL_EXIT_STORE;
    }
    return TL_EXIT_OK;
}

tl_store *tl_cli_store_for(const char *db, const char *const *args, size_t n)
{
    struct stat st;
    for (size_t i = 0; i < n; i++)
        if (args[i] && stat(args[i], &st) == 0 && S_ISREG(st.st_mode)) return tl_cli_store(db);
    return tl_cli_store_read(db);
}

int tl_cli_open_trace(tl_store *s, const char *arg, tl_reader **r, uint64_t *id)
{
    tl_err err = {0};
    struct stat st;
    *r = NULL;
    if (stat(arg, &st) == 0 && S_ISREG(st.st_mode)) {
        tl_ingest_opts o = {.progress = 1, .rank = -1};
        tl_cli_ingest_env(&o);
        tl_ingest_result res;
        if (tl_ingest_file(s, arg, &o, &res, &err)) {
            fprintf(stderr, "tracelens: %s\n", err.msg);
            return TL_EXIT_FAIL;
        }
        *id = res.id;
    } else if (strchr(arg, '/') || strchr(arg, '.')) {
        /* a path, not an id: say so rather than "not a trace id" */
        fprintf(stderr, "tracelens: %s: no such file\n", arg);
        return TL_EXIT_NOTFOUND;
    } else {
        tl_reader *rr;
        if (tl_reader_open(s, &rr, &err)) {
            fprintf(stderr, "tracelens: %s\n", err.msg);
            return TL_EXIT_STORE;
        }
        int rc = tl_reader_resolve(rr, arg, id, &err);
        tl_reader_close(rr);
        if (rc) {
            fprintf(stderr, "tracelens: %s (and no such file)\n", err.msg);
            return TL_EXIT_NOTFOUND;
        }
    }
    if (tl_reader_open(s, r, &err)) {
        fprintf(stderr, "tracelens: %s\n", err.msg);
        return TL_EXIT_STORE;
    }
    return TL_EXIT_OK;
}

int tl_cli_write_sheets(tl_table **tables, size_t n, const char *csv_dir, const char *xlsx_path, int threads)
{
    tl_err err = {0};
    if (csv_dir && tl_report_csv_write_dir(tables, n, csv_dir, &err)) {
        fprintf(stderr, "tracelens: %s\n", err.msg);
        return TL_EXIT_FAIL;
    }
    if (xlsx_path) {
        tl_xlsx *x;
        tl_xlsx_opts xo = {.charts = 1, .threads = threads};
        if (tl_report_xlsx_open(xlsx_path, &xo, &x, &err)) {
            fprintf(stderr, "tracelens: %s\n", err.msg);
            return TL_EXIT_FAIL;
        }
        if (tl_report_xlsx_add_tables(x, tables, n, &err)) {
            fprintf(stderr, "tracelens: %s\n", err.msg);
            tl_report_xlsx_discard(x);
            return TL_EXIT_FAIL;
        }
        if (tl_report_xlsx_add_overview(x, tables, n, &err)) {
            fprintf(stderr, "tracelens: %s\n", err.msg);
            tl_report_xlsx_discard(x);
            return TL_EXIT_FAIL;
        }
        if (tl_report_xlsx_close(x, &err)) {
            fprintf(stderr, "tracelens: %s\n", err.msg);
            return TL_EXIT_FAIL;
        }
    }
    return TL_EXIT_OK;
}

int tl_cli_exit_for(int code, int fallback)
{
    return code == TL_ESTORE || code == TL_EVERSION ? TL_EXIT_STORE : fallback;
}
