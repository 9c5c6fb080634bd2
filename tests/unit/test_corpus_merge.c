/* test_corpus_merge.c — the per-configuration workbook reads each rank once
 * for its own sheets and the collective analysis (coll_read_trace, with the
 * collective kernels' args from the PyTorch report's args pass) and runs
 * ranks on parallel workers. Checked here on small hand-written ranks
 * through the store: the workbook's collective sheets equal the standalone
 * collective report's (tl_coll_report, which reads every rank from the
 * store itself), a GPU-only rank (no PyTorch context, so its collectives
 * are read without the report's args) included; and one worker or several
 * give the same workbook, cell for cell. */
#include "ingest/ingest.h"
#include "query/multirank/multirank.h"
#include "query/multirank/multirank.h"
#include "tests/unit/tl_test.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char g_dir[256];
static tl_store *g_store;

static uint64_t ingest_text(const char *text, int rank)
{
    char path[512];
    snprintf(path, sizeof path, "%s/rank_%d.json", g_dir, rank);
    FILE *f = fopen(path, "wb");
    if (!f) return 0;
    fputs(text, f);
    fclose(f);
    tl_ingest_opts o = {.rank = rank, .config = "merge"};
    tl_ingest_result res;
    tl_err err = {0};
    if (tl_ingest_file(g_store, path, &o, &res, &err)) {
        fprintf(stderr, "ingest: %s\n", err.msg);
        return 0;
    }
    return res.id;
}

#define AR(pg, n, nel)                                                                              \
    "\"Collective name\":\"allreduce\",\"Process Group Name\":\"" pg "\",\"Process Group Ranks\":\"" \
    "[0, 1, 2]\",\"Group size\":" #n ",\"dtype\":\"BFloat16\",\"In msg nelems\":" #nel            \
    ",\"Out msg nelems\":" #nel ",\"In split size\":\"[]\",\"Out split size\":\"[]\""

static void ev(tl_buf *b, const char *cat, const char *name, int tid, double ts, double dur, const char *args)
{
    tl_buf_printf(b, "%s{\"ph\":\"X\",\"cat\":\"%s\",\"name\":\"%s\",\"pid\":0,\"tid\":%d,\"ts\":%.3f,\"dur\":%.3f,"
                     "\"args\":{%s}}",
                  b->n > 1 && b->p[b->n - 2] == '[' ? "" : ",\n", cat, name, tid, ts, dur, args ? args : "");
}

/* Rank r: steps of a GEMM launched by aten::mm and an all-reduce launched
 * under record_param_comms (runtime -> kernel by correlation), a short
 * unlinked kernel; rank 2 holds GPU events only. */
static uint64_t make_rank(int r)
{
    tl_buf b = {0};
    char a[512];
    tl_buf_puts(&b, "{\"deviceProperties\":[{\"id\":0},{\"id\":1}],\"traceEvents\":[\n");
    for (int step = 0; step < 3; step++) {
        double t0 = 1000.0 * step, late = 1.5 * r + step;
        int corr = 10 * step + 1;
        if (r != 2) {
            snprintf(a, sizeof a, "\"External id\":%d,\"Input Dims\":[[64, 128], [128, 256]],"
                                  "\"Input type\":[\"float\", \"float\"]", corr);
            ev(&b, "cpu_op", "aten::mm", 1, t0 + 10, 40, a);
            snprintf(a, sizeof a, "\"correlation\":%d,\"External id\":%d", corr, corr);
            ev(&b, "cuda_runtime", "cudaLaunchKernel", 1, t0 + 20, 5, a);
            snprintf(a, sizeof a, "\"External id\":%d", corr + 1);
            ev(&b, "cpu_op", "record_param_comms", 1, t0 + 60, 30, a);
            snprintf(a, sizeof a, "\"correlation\":%d,\"External id\":%d", corr + 1, corr + 1);
            ev(&b, "cuda_runtime", "cudaLaunchKernel", 1, t0 + 70, 5, a);
        }
        snprintf(a, sizeof a, "\"correlation\":%d,\"External id\":%d,\"stream\":7", corr, corr);
        ev(&b, "kernel", "sm90_gemm_bf16", 7, t0 + 100, 50 + r, a);
        snprintf(a, sizeof a, "\"correlation\":%d,\"External id\":%d,\"stream\":9," AR("0", 3, 1048576), corr + 1,
                 corr + 1);
        ev(&b, "kernel", "ncclDevKernel_AllReduce_Sum_bf16", 9, t0 + 200 + late, 40 - late, a);
        ev(&b, "kernel", "vectorized_elementwise_kernel", 7, t0 + 300, 2, "\"stream\":7");
    }
    tl_buf_puts(&b, "\n]}\n");
    uint64_t id = ingest_text(b.p, r);
    tl_buf_free(&b);
    return id;
}

/* The standalone report's node_id / node_span columns, which the
 * workbook's collective sheets leave out as the reference generator's do. */
static int node_col(const char *name) { return !strcmp(name, "node_id") || !strcmp(name, "node_span"); }

/* Two tables equal in columns and every cell's text (with skip_nodes, x's
 * node columns are not counted). */
static void same_table(const tl_table *x, const tl_table *y, const char *what, int skip_nodes)
{
    CHECK(x && y);
    if (!x || !y) return;
    tl_test_checks++;
    size_t xc[256], nx = 0;
    for (size_t c = 0; c < x->ncols && nx < 256; c++)
        if (!skip_nodes || !node_col(x->cols[c].name)) xc[nx++] = c;
    int ok = nx == y->ncols && x->nrows == y->nrows;
    char bx[512], by[512];
    for (size_t k = 0; ok && k < nx; k++) {
        size_t c = xc[k];
        if (strcmp(x->cols[c].name, y->cols[k].name)) ok = 0;
        for (size_t r = 0; ok && r < x->nrows; r++) {
            const char *tx = tl_table_cell_text(x, c, r, bx, sizeof bx);
            const char *ty = tl_table_cell_text(y, k, r, by, sizeof by);
            if (tl_table_is_missing(x, c, r) != tl_table_is_missing(y, k, r) || strcmp(tx, ty)) {
                fprintf(stderr, "%s: column %s row %zu: '%s' vs '%s'\n", what, x->cols[c].name, r, tx, ty);
                ok = 0;
            }
        }
    }
    if (!ok) {
        tl_test_failures++;
        fprintf(stderr, "%s: tables %s / %s differ (%zux%zu vs %zux%zu)\n", what, x->name, y->name, x->nrows,
                x->ncols, y->nrows, y->ncols);
    }
}

static int corpus(const uint64_t *ids, size_t n, int workers, tl_corpus_sheets *out)
{
    tl_corpus_opts o;
    tl_corpus_opts_default(&o);
    o.max_workers = workers;
    o.quiet = 1;
    tl_corpus_stats st;
    tl_err err = {0};
    int rc = tl_corpus_report(g_store, ids, NULL, n, &o, out, &st, &err);
    if (rc) fprintf(stderr, "corpus report: %s\n", err.msg);
    else tl_corpus_stats_free(&st);
    return rc;
}

static void test_merge(void)
{
    uint64_t ids[3];
    for (int r = 0; r < 3; r++) ids[r] = make_rank(r);
    CHECK(ids[0] && ids[1] && ids[2]);
    if (!ids[0] || !ids[1] || !ids[2]) return;

    tl_corpus_sheets one, many;
    CHECK_EQ_I(corpus(ids, 3, 1, &one), 0);
    CHECK_EQ_I(corpus(ids, 3, 3, &many), 0);
    CHECK_EQ_I(one.n, many.n);
    for (size_t i = 0; i < one.n && i < many.n; i++) same_table(one.v[i], many.v[i], "1 vs 3 workers", 0);

    /* the collective sheets as the standalone report builds them, with the
     * workbook's options */
    static const char *const MEAN[] = {"mean"};
    tl_coll_opts co;
    tl_coll_opts_default(&co);
    co.agg = MEAN;
    co.nagg = 1;
    co.strict_metadata = 0;
    co.quiet = 1;
    tl_coll_sheets cs;
    tl_coll_summary sum;
    tl_err err = {0};
    int rc = tl_coll_report(g_store, ids, 3, &co, &cs, &sum, &err);
    CHECK_EQ_I(rc, 0);
    if (!rc) {
        static const char *const PAIRS[][2] = {
            {"nccl_summary_implicit_sync", "summary_nccl_implicit_sync_cat"},
            {"nccl_long", "long"},
            {"nccl_implicit_sync", "nccl_implicit_sync_cat_detailed"},
            {"imbalance_ranks", "imbalance_ranks"},
            {"imbalance_collectives", "imbalance_collectives"},
        };
        for (size_t i = 0; i < sizeof PAIRS / sizeof *PAIRS; i++)
            same_table(tl_coll_sheet(&cs, PAIRS[i][0]), tl_corpus_sheet(&many, PAIRS[i][1]), PAIRS[i][1],
                       strncmp(PAIRS[i][1], "imbalance_", 10) != 0); /* the imbalance sheets are ours */
        const tl_table *lng = tl_coll_sheet(&cs, "nccl_long");
        CHECK(lng && lng->nrows == 9); /* 3 all-reduces on each of 3 ranks, args read on all */
        long c = lng ? tl_table_col(lng, "In msg nelems") : -1;
        CHECK(c >= 0);
        if (c >= 0 && lng->nrows == 9) {
            char buf[64];
            CHECK_EQ_S(tl_table_cell_text(lng, (size_t)c, 8, buf, sizeof buf), "1048576"); /* the GPU-only rank */
        }
        CHECK_EQ_I(sum.n_sync, 3);
        tl_coll_sheets_free(&cs);
        tl_coll_summary_free(&sum);
    } else {
        fprintf(stderr, "%s\n", err.msg);
    }
    /* the PyTorch side of ranks 0 and 1 made it in */
    const tl_table *kl = tl_corpus_sheet(&many, "kernel_launchers");
    CHECK(kl && kl->nrows >= 1);
    if (kl && kl->nrows) CHECK_EQ_S(kl->cols[tl_table_col(kl, "name")].v.s[0], "aten::mm");
    tl_corpus_sheets_free(&one);
    tl_corpus_sheets_free(&many);
}

int main(void)
{
    g_store = tl_test_store_open("tl_corpus_", g_dir, sizeof g_dir);
    test_merge();
    tl_test_store_close(g_store, g_dir);
    return tl_test_done("test_corpus_merge");
}
