/* test_ingest_many.c — a multi-file ingest (tl_ingest_many) whose files
 * are each parsed in parts on several threads while other files are parsed
 * at the same time stores every event exactly as one file at a time on one
 * thread does; and the parse threads each file gets (its share of the
 * CPUs, lowered by the options). */
#include "tests/unit/tl_test.h"
#include "base/base.h"
#include "ingest/ingest.h"
#include "query/adhoc/adhoc.h"
#include "store/store.h"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#define NFILES 5
#define SPLIT_MIN 8192

static void test_file_threads(void)
{
    tl_ingest_opts o = {.rank = -1};
    CHECK_EQ_I(tl_ingest_file_threads(&o, 2), 2);  /* 8 files on 16 CPUs */
    CHECK_EQ_I(tl_ingest_file_threads(&o, 0), 1);  /* more files than CPUs */
    o.parse_parts = 3;                              /* TRACELENS_PARSE_THREADS lowers it */
    CHECK_EQ_I(tl_ingest_file_threads(&o, 4), 3);
    CHECK_EQ_I(tl_ingest_file_threads(&o, 2), 2);
    o.parse_threads = 1;                            /* an explicit count is used as given */
    CHECK_EQ_I(tl_ingest_file_threads(&o, 4), 1);
    o.parse_threads = 3;
    CHECK_EQ_I(tl_ingest_file_threads(&o, 1), 3);
}

/* A Kineto trace of `ops` cpu_ops, each launching one kernel, whose args
 * hold text that looks like an event boundary (a part's first guess of
 * where an event starts must be checked, not trusted). */
static int write_trace(const char *path, int seed, int ops)
{
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    fputs("{\"traceEvents\":[\n", f);
    for (int i = 0; i < ops; i++) {
        long ts = 1000 + 40L * i;
        fprintf(f,
                "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::op_%d\",\"pid\":10,\"tid\":%d,\"ts\":%ld,"
                "\"dur\":30,\"args\":{\"Input Dims\":[[%d,%d]],\"External id\":%d,"
                "\"note\":\"}, {\\\"ph\\\": \\\"X\\\", \\\"name\\\": \\\"fake\\\"\"}},\n",
                (i * 7 + seed) % 13, 1 + i % 2, ts, seed + i % 5, i % 3 + 1, i + 1);
        fprintf(f,
                "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":10,\"tid\":%d,"
                "\"ts\":%ld,\"dur\":5,\"args\":{\"correlation\":%d,\"External id\":%d}},\n",
                1 + i % 2, ts + 2, i + 1, i + 1);
        fprintf(f,
                "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"kernel_%d\",\"pid\":0,\"tid\":7,\"ts\":%ld,"
                "\"dur\":%d.5,\"args\":{\"correlation\":%d,\"stream\":7,\"device\":%d,\"grid\":[%d,1,1]}}%s\n",
                (i * 3 + seed) % 11, ts + 10, 3 + (i + seed) % 17, i + 1, seed, i % 64 + 1,
                i + 1 < ops ? "," : "");
    }
    fputs("]}\n", f);
    return fclose(f);
}

typedef struct ingested {
    uint64_t ids[NFILES];
    int failed;
} ingested;

static void done(void *ctx, size_t i, int rc, const tl_ingest_prep *pp, const tl_err *err)
{
    ingested *g = ctx;
    (void)pp;
    if (rc) {
        fprintf(stderr, "ingest of file %zu failed: %s\n", i, err->msg);
        g->failed++;
    }
}

/* Every stored event of the store as text, one line per event, traces in
 * id order: what two ingests of the same files must agree on. */
static char *events_text(tl_store *s, size_t *rows)
{
    sqlite3 *db;
    tl_err err = {0};
    if (tl_sql_open(s, NULL, &db, &err)) { fprintf(stderr, "%s\n", err.msg); return NULL; }
    tl_table *t = NULL;
    if (tl_sql_query(db, "SELECT * FROM events ORDER BY trace_id, uid", &t, &err))
        fprintf(stderr, "sql failed: %s\n", err.msg);
    tl_sql_close(db);
    if (!t) return NULL;
    tl_buf b = {0};
    char cell[4096];
    for (size_t r = 0; r < t->nrows; r++) {
        for (size_t c = 0; c < t->ncols; c++)
            tl_buf_printf(&b, "%s%s", c ? "\t" : "", tl_table_cell_text(t, c, r, cell, sizeof cell));
        tl_buf_puts(&b, "\n");
    }
    *rows = t->nrows;
    tl_table_free(t);
    tl_buf_puts(&b, "");
    return b.p;
}

/* How many files the timing lines on stderr (in `log`) say were split. */
static int files_split(const char *log)
{
    size_t n;
    char *text = tl_test_slurp(log, &n);
    int k = 0;
    for (const char *p = text; p && (p = strstr(p, "timing: split into ")); p++) k++;
    free(text);
    return k;
}

/* The files ingested into a fresh store with `jobs` files at once and
 * `threads` parse threads each; returns the events' text, and in *split
 * how many files were parsed in parts. */
static char *ingest_all(char **paths, int jobs, int threads, size_t *rows, int *split)
{
    char dir[64], log[96];
    tl_store *s = tl_test_store_open("tl_many_", dir, sizeof dir);
    tl_ingest_opts o[NFILES];
    for (int i = 0; i < NFILES; i++)
        o[i] = (tl_ingest_opts){.rank = i, .parse_threads = threads, .split_min = SPLIT_MIN, .timing = 1};
    ingested g = {{0}, 0};
    /* the parallel parse's timing lines go to a file, to be counted */
    snprintf(log, sizeof log, "%s/timing.txt", dir);
    fflush(stderr);
    int saved = dup(2), fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    dup2(fd, 2);
    close(fd);
    int rc = tl_ingest_many(s, (const char *const *)paths, o, NFILES, jobs, done, &g);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    *split = files_split(log);
    CHECK_EQ_I(rc, 0);
    CHECK_EQ_I(g.failed, 0);
    char *text = events_text(s, rows);
    tl_test_store_close(s, dir);
    return text;
}

static void test_parallel_files_in_parts(void)
{
    char dir[] = "/tmp/tl_many_in_XXXXXX";
    if (!mkdtemp(dir)) { CHECK(0); return; }
    char *paths[NFILES];
    for (int i = 0; i < NFILES; i++) {
        char p[128];
        snprintf(p, sizeof p, "%s/rank_%d.json", dir, i);
        paths[i] = tl_xstrdup(p);
        /* 60-130 KB: 8-16 parts of SPLIT_MIN each */
        CHECK_EQ_I(write_trace(paths[i], i + 1, 150 + 40 * i), 0);
    }
    size_t rows0 = 0, rows1 = 0, rows2 = 0;
    int split0, split1, split2;
    char *serial = ingest_all(paths, 1, 1, &rows0, &split0);
    char *parts = ingest_all(paths, 3, 3, &rows1, &split1); /* 3 files at once, 3 parse threads each */
    char *fewer = ingest_all(paths, NFILES, 2, &rows2, &split2);
    CHECK(serial && parts && fewer);
    CHECK_EQ_I(split0, 0);
    CHECK_EQ_I(split1, NFILES);
    CHECK_EQ_I(split2, NFILES);
    size_t want = 0;
    for (int i = 0; i < NFILES; i++) want += 3 * (size_t)(150 + 40 * i);
    CHECK_EQ_I(rows0, want);
    CHECK_EQ_I(rows1, rows0);
    CHECK_EQ_I(rows2, rows0);
    if (serial && parts) CHECK(strcmp(serial, parts) == 0);
    if (serial && fewer) CHECK(strcmp(serial, fewer) == 0);
    printf("  %zu events of %d files compared cell by cell, 2 parallel ingests against the serial one\n", rows0,
           NFILES);
    free(serial);
    free(parts);
    free(fewer);
    for (int i = 0; i < NFILES; i++) {
        unlink(paths[i]);
        free(paths[i]);
    }
    rmdir(dir);
}

int main(void)
{
    test_file_threads();
    test_parallel_files_in_parts();
    return tl_test_done("test_ingest_many");
}
