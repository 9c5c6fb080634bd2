/* test_adhoc.c — the ad-hoc query engine and the SQL virtual tables over a
 * small store built here from two hand-written Kineto traces (so every
 * expected number is known): selectors, where-expressions, grouping and
 * every aggregate, sort/limit, token-precise errors, threads, interruption,
 * that SQL gives the same answers with push-down and uid lookups, and
 * that a query split over two processes' stores gives one store's answer. */
#include "query/adhoc/adhoc.h"
#include "query/adhoc/adhoc_internal.h"
#include "query/adhoc/adhoc.h"
#include "ingest/ingest.h"
#include "tests/unit/tl_test.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Trace 1: two aten::mm launching gemm_a (10.5 us, 20 us), relu -> relu_k
 * (3 us), conv2d -> conv_k (40 us), an unlinked kernel "orphan" (1 us). */
static const char *T1 =
    "{\"traceEvents\":[\n"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\",\"pid\":10,\"tid\":1,\"ts\":100,\"dur\":50,\"args\":{\"Input Dims\":[[2,3],[3,4]],\"External id\":1}},\n"
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":10,\"tid\":1,\"ts\":110,\"dur\":5,\"args\":{\"correlation\":1}},\n"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\",\"pid\":10,\"tid\":1,\"ts\":200,\"dur\":50,\"args\":{\"Input Dims\":[[4,3],[3,4]],\"External id\":2}},\n"
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":10,\"tid\":1,\"ts\":210,\"dur\":5,\"args\":{\"correlation\":2}},\n"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::relu\",\"pid\":10,\"tid\":1,\"ts\":300,\"dur\":30,\"args\":{\"External id\":3}},\n"
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":10,\"tid\":1,\"ts\":305,\"dur\":5,\"args\":{\"correlation\":3}},\n"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::conv2d\",\"pid\":10,\"tid\":1,\"ts\":400,\"dur\":60,\"args\":{\"External id\":4}},\n"
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":10,\"tid\":1,\"ts\":405,\"dur\":5,\"args\":{\"correlation\":4}},\n"
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"gemm_a\",\"pid\":0,\"tid\":7,\"ts\":150,\"dur\":10.5,\"args\":{\"correlation\":1,\"stream\":7,\"device\":0}},\n"
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"gemm_a\",\"pid\":0,\"tid\":7,\"ts\":250,\"dur\":20,\"args\":{\"correlation\":2,\"stream\":7,\"device\":0}},\n"
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"relu_k\",\"pid\":0,\"tid\":7,\"ts\":340,\"dur\":3,\"args\":{\"correlation\":3,\"stream\":7,\"device\":0}},\n"
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"conv_k\",\"pid\":0,\"tid\":7,\"ts\":470,\"dur\":40,\"args\":{\"correlation\":4,\"stream\":7,\"device\":0}},\n"
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"orphan\",\"pid\":0,\"tid\":8,\"ts\":600,\"dur\":1,\"args\":{\"stream\":8,\"device\":0}}\n"
    "]}\n";

/* Trace 2: one aten::mm -> gemm_a (30 us), one relu -> relu_k (5 us). */
static const char *T2 =
    "{\"traceEvents\":[\n"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\",\"pid\":10,\"tid\":1,\"ts\":100,\"dur\":50,\"args\":{\"Input Dims\":[[2,3],[3,4]]}},\n"
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":10,\"tid\":1,\"ts\":110,\"dur\":5,\"args\":{\"correlation\":1}},\n"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::relu\",\"pid\":10,\"tid\":1,\"ts\":300,\"dur\":30},\n"
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":10,\"tid\":1,\"ts\":305,\"dur\":5,\"args\":{\"correlation\":3}},\n"
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"gemm_a\",\"pid\":0,\"tid\":7,\"ts\":150,\"dur\":30,\"args\":{\"correlation\":1,\"stream\":7,\"device\":1}},\n"
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"relu_k\",\"pid\":0,\"tid\":7,\"ts\":340,\"dur\":5,\"args\":{\"correlation\":3,\"stream\":7,\"device\":1}}\n"
    "]}\n";

static tl_store *S;
static char id1[17], id2[17];

static tl_table *q(const char *table, const char *sel, const char *where, const char *by, const char *agg,
                   const char *sort, int64_t limit, int threads)
{
    tl_adhoc_query a;
    memset(&a, 0, sizeof a);
    a.table = table;
    const char *sels[1] = {sel};
    a.traces = sels;
    a.ntraces = sel ? 1 : 0;
    a.where = where;
    a.by = by;
    a.agg = agg;
    a.sort = sort;
    a.limit = limit;
    a.threads = threads;
    tl_table *t = NULL;
    tl_err err = {0};
    int rc = tl_adhoc_run(S, &a, &t, &err);
    if (rc) fprintf(stderr, "query failed: %s\n", err.msg);
    return t;
}

static int qerr(const char *where, const char *by, const char *agg, const char *sort, tl_err *err)
{
    tl_adhoc_query a;
    memset(&a, 0, sizeof a);
    a.table = "kernels";
    a.where = where;
    a.by = by;
    a.agg = agg;
    a.sort = sort;
    a.limit = -1;
    tl_table *t = NULL;
    memset(err, 0, sizeof *err);
    int rc = tl_adhoc_run(S, &a, &t, err);
    tl_table_free(t);
    return rc;
}

static const char *cell(const tl_table *t, size_t r, const char *col)
{
    static char buf[8][128];
    static int k;
    long c = tl_table_col(t, col);
    if (c < 0 || r >= t->nrows) return "(none)";
    k = (k + 1) % 8;
    return tl_table_cell_text(t, (size_t)c, r, buf[k], sizeof buf[k]);
}

static tl_table *sql(const char *text)
{
    sqlite3 *db;
    tl_err err = {0};
    if (tl_sql_open(S, NULL, &db, &err)) { fprintf(stderr, "%s\n", err.msg); return NULL; }
    tl_table *t = NULL;
    if (tl_sql_query(db, text, &t, &err)) fprintf(stderr, "sql failed: %s\n", err.msg);
    tl_sql_close(db);
    return t;
}

static int ingest(const char *dir, const char *name, const char *text, const char *labels, char hex[17])
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *fp = fopen(path, "w");
    if (!fp) return -1;
    fputs(text, fp);
    fclose(fp);
    tl_ingest_opts o = {.rank = -1, .labels_json = labels};
    tl_ingest_result res;
    tl_err err = {0};
    if (tl_ingest_file(S, path, &o, &res, &err)) { fprintf(stderr, "%s\n", err.msg); return -1; }
    tl_id_format(res.id, hex);
    return 0;
}

static void test_group(void)
{
    tl_table *t = q("kernels", NULL, NULL, "name", "sum(dur),count,mean(dur),min(dur),max(dur)", "name", -1, 1);
    CHECK(t != NULL);
    if (!t) return;
    CHECK_EQ_I(t->nrows, 4);
    CHECK_EQ_S(cell(t, 0, "name"), "conv_k");
    CHECK_EQ_S(cell(t, 1, "name"), "gemm_a");
    CHECK_EQ_S(cell(t, 1, "sum(dur)"), "60500");
    CHECK_EQ_S(cell(t, 1, "count"), "3");
    CHECK_NEAR(tl_table_num(t, 3, 1), 60500.0 / 3, 1e-9);
    CHECK_EQ_S(cell(t, 1, "min(dur)"), "10500");
    CHECK_EQ_S(cell(t, 1, "max(dur)"), "30000");
    CHECK_EQ_S(cell(t, 3, "name"), "relu_k");
    CHECK_EQ_S(cell(t, 3, "sum(dur)"), "8000");
    tl_table_free(t);

    /* default order: first aggregate, largest first; --top */
    t = q("kernels", NULL, NULL, "name", "sum(dur)", NULL, 2, 0);
    CHECK_EQ_I(t->nrows, 2);
    CHECK_EQ_S(cell(t, 0, "name"), "gemm_a");
    CHECK_EQ_S(cell(t, 1, "name"), "conv_k");
    tl_table_free(t);

    /* median / percentiles (linear), std (sample), nunique */
    t = q("kernels", NULL, "name = 'gemm_a'", "name", "median(dur),p90(dur),std(dur),nunique(trace_id),nunique(device)", NULL, -1, 1);
    CHECK_EQ_I(t->nrows, 1);
    CHECK_NEAR(tl_table_num(t, 1, 0), 20000, 1e-9);
    CHECK_NEAR(tl_table_num(t, 2, 0), 20000 + 0.8 * 10000, 1e-9);
    /* values 10500, 20000, 30000: mean 20166.67, sample std */
    CHECK_NEAR(tl_table_num(t, 3, 0), 9751.06831754005, 1e-6);
    CHECK_EQ_S(cell(t, 0, "nunique(trace_id)"), "2");
    CHECK_EQ_S(cell(t, 0, "nunique(device)"), "2");
    tl_table_free(t);

    /* group by a label and by trace id; no --by: one row */
    t = q("kernels", NULL, NULL, "label.set", "sum(dur)", "label.set", -1, 1);
    CHECK_EQ_I(t->nrows, 2);
    CHECK_EQ_S(cell(t, 0, "label.set"), "a");
    CHECK_EQ_S(cell(t, 0, "sum(dur)"), "74500");
    CHECK_EQ_S(cell(t, 1, "sum(dur)"), "35000");
    tl_table_free(t);
    t = q("kernels", NULL, NULL, NULL, "count,sum(dur)", NULL, -1, 1);
    CHECK_EQ_I(t->nrows, 1);
    CHECK_EQ_S(cell(t, 0, "count"), "7");
    CHECK_EQ_S(cell(t, 0, "sum(dur)"), "109500");
    tl_table_free(t);
    t = q("kernels", NULL, "name = 'nothing'", NULL, "count,sum(dur)", NULL, -1, 1);
    CHECK_EQ_S(cell(t, 0, "count"), "0");
    CHECK_EQ_S(cell(t, 0, "sum(dur)"), "");
    tl_table_free(t);

    /* several keys, threads give the same answer */
    tl_table *a = q("kernels", NULL, NULL, "trace_id,name,stream", "sum(dur),p50(dur),std(dur),nunique(uid)", NULL, -1, 1);
    tl_table *b = q("kernels", NULL, NULL, "trace_id,name,stream", "sum(dur),p50(dur),std(dur),nunique(uid)", NULL, -1, 2);
    CHECK(a && b && a->nrows == b->nrows && a->nrows == 6);
    for (size_t r = 0; a && b && r < a->nrows; r++)
        for (size_t c = 0; c < a->ncols; c++) {
            char x[64], y[64];
            CHECK_EQ_S(tl_table_cell_text(a, c, r, x, sizeof x), tl_table_cell_text(b, c, r, y, sizeof y));
        }
    tl_table_free(a);
    tl_table_free(b);
}

static void test_ops_and_rows(void)
{
    tl_table *t = q("ops", NULL, NULL, "name", "sum(kernel_time),sum(kernel_count),count", "name", -1, 1);
    CHECK_EQ_I(t->nrows, 3);
    CHECK_EQ_S(cell(t, 1, "name"), "aten::mm");
    CHECK_EQ_S(cell(t, 1, "sum(kernel_time)"), "60500");
    CHECK_EQ_S(cell(t, 1, "sum(kernel_count)"), "3");
    tl_table_free(t);
    /* unique args */
    t = q("ops", NULL, "name = 'aten::mm'", "input_dims", "count", "input_dims", -1, 1);
    CHECK_EQ_I(t->nrows, 2);
    CHECK_EQ_S(cell(t, 0, "input_dims"), "[[2,3],[3,4]]");
    CHECK_EQ_S(cell(t, 0, "count"), "2");
    tl_table_free(t);
    /* row output, sorted, launcher name, args key */
    t = q("kernels", id1, "dur >= 10us", NULL, NULL, "-dur", -1, 1);
    CHECK_EQ_I(t->nrows, 3);
    CHECK_EQ_S(cell(t, 0, "name"), "conv_k");
    CHECK_EQ_S(cell(t, 0, "launcher_name"), "aten::conv2d");
    CHECK_EQ_S(cell(t, 2, "dur"), "10500");
    tl_table_free(t);
    t = q("kernels", id1, "args.correlation in (1, 2)", NULL, NULL, "uid", -1, 1);
    CHECK_EQ_I(t->nrows, 2);
    tl_table_free(t);
    t = q("events", id1, "kind = 'cuda_runtime'", "kind", "count", NULL, -1, 1);
    CHECK_EQ_S(cell(t, 0, "count"), "4");
    tl_table_free(t);
    t = q("kernels", NULL, "launcher is null", NULL, NULL, NULL, -1, 1);
    CHECK_EQ_I(t->nrows, 1);
    CHECK_EQ_S(cell(t, 0, "name"), "orphan");
    tl_table_free(t);
    /* boolean logic, regex, like, contains, not in */
    t = q("kernels", NULL, "(name ~ '^gemm' or name like 'CONV%') and not dur < 20us", NULL, "count", NULL, -1, 1);
    CHECK_EQ_S(cell(t, 0, "count"), "3");
    tl_table_free(t);
    t = q("kernels", NULL, "name contains 'elu' or name not in ('gemm_a', 'relu_k', 'conv_k')", NULL, "count", NULL, -1, 1);
    CHECK_EQ_S(cell(t, 0, "count"), "3");
    tl_table_free(t);
    /* limit without sort stops early and keeps trace order */
    t = q("kernels", NULL, NULL, NULL, NULL, NULL, 2, 1);
    CHECK_EQ_I(t->nrows, 2);
    tl_table_free(t);
    /* the catalog table */
    t = q("traces", NULL, NULL, NULL, NULL, "trace_id", -1, 1);
    CHECK_EQ_I(t->nrows, 2);
    tl_table_free(t);
    t = q("traces", NULL, "label.set = 'b'", NULL, "sum(n_kernels)", NULL, -1, 1);
    CHECK_EQ_S(cell(t, 0, "sum(n_kernels)"), "2");
    tl_table_free(t);
}

static void test_selectors(void)
{
    tl_table *t = q("kernels", "label:set=b", NULL, NULL, "count", NULL, -1, 1);
    CHECK_EQ_S(cell(t, 0, "count"), "2");
    tl_table_free(t);
    t = q("kernels", "label:set=a,b", NULL, NULL, "count", NULL, -1, 1);
    CHECK_EQ_S(cell(t, 0, "count"), "7");
    tl_table_free(t);
    t = q("kernels", "last:1", NULL, NULL, "count", NULL, -1, 1);
    CHECK_EQ_S(cell(t, 0, "count"), "2"); /* trace 2 was ingested last */
    tl_table_free(t);
    char pre[8];
    snprintf(pre, sizeof pre, "%.6s", id1);
    t = q("kernels", pre, NULL, NULL, "count", NULL, -1, 1);
    CHECK_EQ_S(cell(t, 0, "count"), "5");
    tl_table_free(t);
    t = q("kernels", "since:2999-01-01", NULL, NULL, "count", NULL, -1, 1);
    CHECK_EQ_S(cell(t, 0, "count"), "0");
    tl_table_free(t);
    t = q("kernels", "label:set=*", NULL, NULL, "count", NULL, -1, 1);
    CHECK_EQ_S(cell(t, 0, "count"), "7");
    tl_table_free(t);
    tl_adhoc_query a;
    memset(&a, 0, sizeof a);
    const char *bad[1] = {"colour:red"};
    a.traces = bad;
    a.ntraces = 1;
    a.limit = -1;
    tl_err err = {0};
    t = NULL;
    CHECK_EQ_I(tl_adhoc_run(S, &a, &t, &err), TL_EUSAGE);
    CHECK(strstr(err.msg, "colour") != NULL);
    CHECK(tl_adhoc_glob("a*c?", "abbbcd"));
    CHECK(!tl_adhoc_glob("a*c", "abbbcd"));
    CHECK(aq_like("%GEMM%", "xx_gemm_yy"));
    CHECK(aq_like("g_mm", "gemm"));
    CHECK(!aq_like("g_m", "gemm"));
}

static void test_errors(void)
{
    tl_err err;
    CHECK_EQ_I(qerr("nmae ~ 'gemm'", NULL, NULL, NULL, &err), TL_EUSAGE);
    CHECK(strstr(err.msg, "unknown column 'nmae'") && strstr(err.msg, "did you mean 'name'"));
    CHECK(strstr(err.msg, "\n  nmae ~ 'gemm'\n  ^^^^") != NULL);
    CHECK_EQ_I(qerr("name ~ '[ab'", NULL, NULL, NULL, &err), TL_EUSAGE);
    CHECK(strstr(err.msg, "bad regex '[ab'") && strstr(err.msg, "\n         ^^^^^"));
    CHECK_EQ_I(qerr("dur > 'long'", NULL, NULL, NULL, &err), TL_EUSAGE);
    CHECK(strstr(err.msg, "type mismatch") && strstr(err.msg, "\n        ^^^^^^"));
    CHECK_EQ_I(qerr("name > 5", NULL, NULL, NULL, &err), TL_EUSAGE);
    CHECK(strstr(err.msg, "type mismatch"));
    CHECK_EQ_I(qerr("dur ~ 'x'", NULL, NULL, NULL, &err), TL_EUSAGE);
    CHECK(strstr(err.msg, "needs a text column") && strstr(err.msg, "\n      ^"));
    CHECK_EQ_I(qerr("(dur > 5", NULL, NULL, NULL, &err), TL_EUSAGE);
    CHECK(strstr(err.msg, "never closed"));
    CHECK_EQ_I(qerr("dur > 5 dur", NULL, NULL, NULL, &err), TL_EUSAGE);
    CHECK(strstr(err.msg, "expected AND, OR"));
    CHECK_EQ_I(qerr("dur > 5xs", NULL, NULL, NULL, &err), TL_EUSAGE);
    CHECK(strstr(err.msg, "'5xs' is not a number"));
    CHECK_EQ_I(qerr(NULL, "name,bogus", NULL, NULL, &err), TL_EUSAGE);
    CHECK(strstr(err.msg, "--by") && strstr(err.msg, "'bogus'") && strstr(err.msg, "\n       ^^^^^"));
    CHECK_EQ_I(qerr(NULL, "name", "sum(name)", NULL, &err), TL_EUSAGE);
    CHECK(strstr(err.msg, "type mismatch") && strstr(err.msg, "sum()"));
    CHECK_EQ_I(qerr(NULL, "name", "total_time(dur)", NULL, &err), TL_EUSAGE);
    CHECK(strstr(err.msg, "unknown aggregate 'total_time'"));
    CHECK_EQ_I(qerr(NULL, "name", "sum(dur)", "-durr", &err), TL_EUSAGE);
    CHECK(strstr(err.msg, "'durr' is not a result column"));
}

static void test_cancel(void)
{
    atomic_int flag = 1;
    tl_adhoc_query a;
    memset(&a, 0, sizeof a);
    a.by = "name";
    a.limit = -1;
    a.cancel = &flag;
    tl_table *t = NULL;
    tl_err err = {0};
    CHECK_EQ_I(tl_adhoc_run(S, &a, &t, &err), TL_EINTR_ADHOC);
    CHECK(t == NULL);
}

static void test_sql(void)
{
    tl_table *t = sql("SELECT name, sum(dur) AS s, count(*) AS n FROM kernels GROUP BY name ORDER BY name");
    CHECK(t && t->nrows == 4);
    if (t) {
        CHECK_EQ_S(cell(t, 1, "name"), "gemm_a");
        CHECK_EQ_S(cell(t, 1, "s"), "60500");
        CHECK_EQ_S(cell(t, 1, "n"), "3");
    }
    tl_table_free(t);
    t = sql("SELECT count(*) AS n FROM kernels WHERE label_set = 'b'");
    CHECK_EQ_S(cell(t, 0, "n"), "2");
    tl_table_free(t);
    t = sql("SELECT count(*) AS n, sum(dur) AS s FROM kernels WHERE name REGEXP '^(gemm|conv)' AND dur >= 20000");
    CHECK_EQ_S(cell(t, 0, "n"), "3");
    CHECK_EQ_S(cell(t, 0, "s"), "90000");
    tl_table_free(t);
    /* join on launcher: a uid lookup */
    t = sql("SELECT o.name AS op, sum(k.dur) AS s FROM kernels k JOIN ops o ON o.trace_id = k.trace_id "
            "AND o.uid = k.launcher GROUP BY o.name ORDER BY s DESC");
    CHECK(t && t->nrows == 3);
    CHECK_EQ_S(cell(t, 0, "op"), "aten::mm");
    CHECK_EQ_S(cell(t, 0, "s"), "60500");
    tl_table_free(t);
    char buf[512];
    snprintf(buf, sizeof buf, "SELECT count(*) AS n FROM events WHERE trace_id IN ('%s') AND kind = 'kernel'", id2);
    t = sql(buf);
    CHECK_EQ_S(cell(t, 0, "n"), "2");
    tl_table_free(t);
    t = sql("SELECT t.label_set AS s, sum(k.kernel_time) AS kt FROM traces t JOIN ops k ON k.trace_id = t.trace_id GROUP BY 1 ORDER BY 1");
    CHECK(t && t->nrows == 2);
    CHECK_EQ_S(cell(t, 0, "kt"), "73500");
    tl_table_free(t);
    t = sql("SELECT launcher_name, count(*) AS n FROM kernels WHERE launcher IS NOT NULL GROUP BY 1 ORDER BY 1");
    CHECK(t && t->nrows == 3);
    tl_table_free(t);
    /* errors name the token */
    sqlite3 *db;
    tl_err err = {0};
    CHECK_EQ_I(tl_sql_open(S, NULL, &db, &err), 0);
    t = NULL;
    CHECK_EQ_I(tl_sql_query(db, "SELECT nmae FROM kernels", &t, &err), TL_EUSAGE);
    CHECK(strstr(err.msg, "no such column: nmae") && strstr(err.msg, "\n         ^^^^"));
    CHECK_EQ_I(tl_sql_query(db, "SELECT count(*) FROM kernels WHERE name REGEXP '[ab'", &t, &err), TL_EUSAGE);
    CHECK(strstr(err.msg, "bad regex"));
    tl_sql_close(db);
    /* the verb and SQL agree */
    tl_table *a = q("kernels", NULL, NULL, "trace_id,name", "sum(dur),count", "trace_id,name", -1, 0);
    tl_table *b = sql("SELECT trace_id, name, sum(dur), count(*) FROM kernels GROUP BY 1, 2 ORDER BY 1, 2");
    CHECK(a && b && a->nrows == b->nrows);
    for (size_t r = 0; a && b && r < a->nrows && r < b->nrows; r++)
        for (size_t c = 0; c < 4; c++) {
            char x[64], y[64];
            CHECK_EQ_S(tl_table_cell_text(a, c, r, x, sizeof x), tl_table_cell_text(b, c, r, y, sizeof y));
        }
    tl_table_free(a);
    tl_table_free(b);
}

/* ---- one query over two processes' stores (tl_adhoc_run_part) ----------- */
/* Two threads stand in for two processes; their all-gather meets here. */
typedef struct meet {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    tl_buf bytes[2];
    int arrived;
} meet;
static meet M = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, {{0}}, 0};

static int meet_allgather(void *ctx, const void *p, size_t n, tl_buf *all)
{
    int me = *(int *)ctx;
    pthread_mutex_lock(&M.mu);
    M.bytes[me].n = 0;
    tl_buf_append(&M.bytes[me], p, n);
    if (++M.arrived == 2) pthread_cond_broadcast(&M.cv);
    while (M.arrived < 2) pthread_cond_wait(&M.cv, &M.mu);
    for (int i = 0; i < 2; i++) tl_buf_append(all, M.bytes[i].p, M.bytes[i].n);
    pthread_mutex_unlock(&M.mu);
    return 0;
}

typedef struct proc {
    int me, failed;
    tl_store *s;
    const tl_adhoc_query *q;
    tl_buf part;
    int rc;
    tl_err err;
} proc;

static void *proc_main(void *arg)
{
    proc *x = arg;
    tl_adhoc_share share = {meet_allgather, &x->me, x->me, x->failed};
    x->rc = tl_adhoc_run_part(x->s, x->q, &share, &x->part, &x->err);
    return NULL;
}

/* The query over stores a and b in two "processes": the finished answer,
 * or NULL with *rc the error. */
static tl_table *over_two(tl_store *a, tl_store *b, const tl_adhoc_query *q, int fail_b, int *rc)
{
    proc x[2] = {{0, 0, a, q, {0}, 0, {0}}, {1, fail_b, b, q, {0}, 0, {0}}};
    M.arrived = 0;
    pthread_t th[2];
    for (int i = 0; i < 2; i++) pthread_create(&th[i], NULL, proc_main, &x[i]);
    for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
    tl_table *t = NULL;
    tl_err err = {0};
    *rc = x[0].rc ? x[0].rc : x[1].rc;
    CHECK_EQ_I(x[0].rc, x[1].rc); /* every process ends a failed selection alike */
    if (!*rc) *rc = tl_adhoc_part_merge(q, &x[0].part, x[1].part.p, x[1].part.n, &err);
    if (!*rc) *rc = tl_adhoc_part_finish(q, x[0].part.p, x[0].part.n, &t, &err);
    for (int i = 0; i < 2; i++) tl_buf_free(&x[i].part);
    return t;
}

static void same_table(const tl_table *a, const tl_table *b, const char *what)
{
    CHECK(a && b);
    if (!a || !b) return;
    if (a->nrows != b->nrows || a->ncols != b->ncols) {
        fprintf(stderr, "%s: %zux%zu against %zux%zu\n", what, a->nrows, a->ncols, b->nrows, b->ncols);
        CHECK(0);
        return;
    }
    for (size_t c = 0; c < a->ncols; c++) CHECK_EQ_S(a->cols[c].name, b->cols[c].name);
    for (size_t r = 0; r < a->nrows; r++)
        for (size_t c = 0; c < a->ncols; c++) {
            char x[128], y[128];
            CHECK_EQ_S(tl_table_cell_text(a, c, r, x, sizeof x), tl_table_cell_text(b, c, r, y, sizeof y));
        }
}

static void test_parts(const char *dir)
{
    /* process 0 holds trace 1; process 1 trace 2 and a second copy of
     * trace 1: together the traces of S */
    char db0[600], db1[600], h[17];
    snprintf(db0, sizeof db0, "%s/p0", dir);
    snprintf(db1, sizeof db1, "%s/p1", dir);
    tl_store *keep = S, *p0, *p1;
    tl_err err = {0};
    if (tl_store_open(db0, &p0, &err) || tl_store_open(db1, &p1, &err)) { CHECK(0); return; }
    S = p0;
    CHECK(ingest(dir, "t1.json", T1, "{\"set\":\"a\"}", h) == 0);
    S = p1;
    CHECK(ingest(dir, "t2.json", T2, "{\"set\":\"b\",\"bs\":\"32\"}", h) == 0);
    CHECK(ingest(dir, "t1.json", T1, "{\"set\":\"a\"}", h) == 0);
    S = keep;

    static const struct { const char *table, *sel, *where, *by, *agg, *select, *sort, *pivot; int64_t limit; } Q[] = {
        {"kernels", NULL, NULL, "name", "sum(dur),count,mean(dur),min(dur),max(dur),median(dur),p90(dur),std(dur),nunique(trace_id),nunique(device)", NULL, NULL, NULL, -1},
        {"kernels", NULL, NULL, "trace_id,stream", "count,sum(dur)", NULL, "trace_id,stream", NULL, -1},
        {"kernels", NULL, "name = 'nothing'", NULL, "count,sum(dur)", NULL, NULL, NULL, -1},
        {"kernels", NULL, NULL, NULL, NULL, "name,dur,trace_id", NULL, NULL, -1},
        {"kernels", NULL, NULL, NULL, NULL, "name,dur,trace_id", NULL, NULL, 6},
        {"kernels", NULL, NULL, NULL, NULL, "name,dur", "-dur", NULL, 3},
        {"ops", "label:set=b", NULL, "name", "sum(kernel_time),count", NULL, NULL, NULL, -1},
        {"traces", NULL, NULL, NULL, NULL, "trace_id,path,rank,events,label.set,label.bs", NULL, NULL, -1},
        {"kernels", "last:1", NULL, "trace_id", "count", NULL, NULL, NULL, -1},
        {"kernels", NULL, NULL, "name", "sum(dur)", NULL, NULL, "label.set", -1},
        {"kernel_summary", NULL, NULL, NULL, NULL, NULL, NULL, NULL, -1},
    };
    for (size_t i = 0; i < sizeof Q / sizeof *Q; i++) {
        tl_adhoc_query a;
        memset(&a, 0, sizeof a);
        const char *sels[1] = {Q[i].sel};
        a.table = Q[i].table, a.traces = sels, a.ntraces = Q[i].sel != NULL, a.where = Q[i].where;
        a.by = Q[i].by, a.agg = Q[i].agg, a.select = Q[i].select, a.sort = Q[i].sort, a.pivot = Q[i].pivot;
        a.limit = Q[i].limit, a.threads = 1;
        tl_table *one = NULL;
        CHECK(tl_adhoc_run(S, &a, &one, &err) == 0);
        int rc;
        tl_table *two = over_two(p0, p1, &a, 0, &rc);
        CHECK_EQ_I(rc, 0);
        char what[40];
        snprintf(what, sizeof what, "query %zu", i);
        same_table(one, two, what);
        tl_table_free(one);
        tl_table_free(two);
    }

    /* the catalog listing's label columns: the union of both processes'
     * (its ingest times are each store's own) */
    tl_adhoc_query lq;
    memset(&lq, 0, sizeof lq);
    lq.table = "traces", lq.limit = -1;
    tl_table *l1 = NULL, *l2;
    int lrc;
    CHECK(tl_adhoc_run(S, &lq, &l1, &err) == 0);
    l2 = over_two(p0, p1, &lq, 0, &lrc);
    CHECK(l1 && l2 && l1->ncols == l2->ncols && l1->nrows == l2->nrows);
    for (size_t c = 0; l1 && l2 && c < l1->ncols && c < l2->ncols; c++) CHECK_EQ_S(l1->cols[c].name, l2->cols[c].name);
    tl_table_free(l1);
    tl_table_free(l2);

    /* an id found in one process's store only; one found in none */
    tl_adhoc_query a;
    memset(&a, 0, sizeof a);
    const char *sel[1] = {id2};
    a.traces = sel, a.ntraces = 1, a.agg = "count", a.limit = -1;
    int rc;
    tl_table *t = over_two(p0, p1, &a, 0, &rc);
    CHECK(t && t->nrows == 1 && !strcmp(cell(t, 0, "count"), "2"));
    tl_table_free(t);
    sel[0] = "ffff";
    CHECK(over_two(p0, p1, &a, 0, &rc) == NULL && rc == TL_ENOTFOUND);
    /* a process that could not open its store fails the query everywhere */
    a.ntraces = 0;
    CHECK(over_two(p0, p1, &a, TL_ESTORE, &rc) == NULL && rc == TL_ESTORE);
    /* a process without a store adds nothing */
    tl_table *one = NULL;
    CHECK(tl_adhoc_run(p0, &a, &one, &err) == 0);
    t = over_two(p0, NULL, &a, 0, &rc);
    same_table(one, t, "one store and none");
    tl_table_free(one);
    tl_table_free(t);
    tl_store_close(p0);
    tl_store_close(p1);
    for (int i = 0; i < 2; i++) tl_buf_free(&M.bytes[i]);
}

static int alone_allgather(void *ctx, const void *p, size_t n, tl_buf *all)
{
    (void)ctx;
    tl_buf_append(all, p, n);
    return 0;
}

/* A cut or damaged partial is refused, never read past its end. */
static void test_part_bytes(void)
{
    static const char *const aggs[] = {"count,median(dur),nunique(name),std(dur),min(dur)", NULL};
    for (int rows = 0; rows < 2; rows++) {
        tl_adhoc_query a;
        memset(&a, 0, sizeof a);
        a.limit = -1;
        if (!rows) a.by = "trace_id,stream", a.agg = aggs[0];
        tl_adhoc_share share = {alone_allgather, NULL, 0, 0};
        tl_buf part = {0};
        tl_err err = {0};
        CHECK(tl_adhoc_run_part(S, &a, &share, &part, &err) == 0);
        tl_table *t = NULL;
        CHECK(tl_adhoc_part_finish(&a, part.p, part.n, &t, &err) == 0 && t && t->nrows > 0);
        tl_table_free(t);
        int refused = 0;
        for (size_t n = 0; n < part.n; n++) {
            t = NULL;
            refused += tl_adhoc_part_finish(&a, part.p, n, &t, &err) != 0 && !t;
            tl_table_free(t);
        }
        CHECK_EQ_I(refused, part.n);
        /* a cut partial merged in makes the whole answer an error */
        tl_buf whole = {0};
        tl_buf_append(&whole, part.p, part.n);
        CHECK(tl_adhoc_part_merge(&a, &whole, part.p, part.n / 2, &err) != 0);
        t = NULL;
        CHECK(tl_adhoc_part_finish(&a, whole.p, whole.n, &t, &err) != 0 && !t);
        tl_buf_free(&whole);
        tl_buf_free(&part);
    }
}

int main(void)
{
    char dir[] = "/tmp/tl_test_adhoc_XXXXXX";
    if (!mkdtemp(dir)) return 1;
    char db[600];
    snprintf(db, sizeof db, "%s/db", dir);
    tl_err err = {0};
    if (tl_store_open(db, &S, &err)) { fprintf(stderr, "%s\n", err.msg); return 1; }
    if (ingest(dir, "t1.json", T1, "{\"set\":\"a\"}", id1) || ingest(dir, "t2.json", T2, "{\"set\":\"b\",\"bs\":\"32\"}", id2))
        return 1;
    test_group();
    test_ops_and_rows();
    test_selectors();
    test_errors();
    test_cancel();
    test_sql();
    test_parts(dir);
    test_part_bytes();
    tl_store_close(S);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd)) { /* best effort */ }
    return tl_test_done("test_adhoc");
}
