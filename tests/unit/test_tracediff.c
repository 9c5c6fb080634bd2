/* test_tracediff.c — TraceDiff (query/diff/diff.h) on the spec's verified
 * synthetic examples (diff-compare-phases.md A11 E1-E9), written here as
 * tiny Kineto traces, ingested into a temporary store and diffed; plus the
 * name normalisation rules (A2), the A10 report hook, and — when the shared
 * data is present — the UID-map examples of the reference pair (A4.9). */
#include "tests/unit/tl_test.h"
#include "ingest/ingest.h"
#include "query/core/trace.h"
#include "query/diff/diff.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char g_dir[256];
static tl_store *g_store;
static int g_files;

/* ---- a tiny Kineto trace writer -------------------------------------------- */
typedef struct tb {
    tl_buf b;
    int corr;
} tb;

static void tb_ev(tb *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void tb_ev(tb *t, const char *fmt, ...)
{
    char tmp[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    tl_buf_puts(&t->b, t->b.n ? ",\n" : "{\"traceEvents\": [\n");
    tl_buf_puts(&t->b, tmp);
}

/* cpu_op on the host thread (pid 1, tid 1) */
static void cpu(tb *t, const char *name, double ts, double dur)
{
    tb_ev(t, "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"%s\",\"pid\":1,\"tid\":1,\"ts\":%.3f,\"dur\":%.3f,"
             "\"args\":{\"Input Dims\":[[4,8],[]],\"Input type\":[\"float\",\"Scalar\"]}}",
          name, ts, dur);
}

static void pyf(tb *t, const char *name, double ts, double dur)
{
    tb_ev(t, "{\"ph\":\"X\",\"cat\":\"python_function\",\"name\":\"%s\",\"pid\":1,\"tid\":1,\"ts\":%.3f,"
             "\"dur\":%.3f,\"args\":{}}", name, ts, dur);
}

/* a runtime call at ts launching one GPU event (cat kcat) at kts */
static void launch(tb *t, const char *rt, double ts, const char *kcat, const char *kname, double kts, double kdur)
{
    int c = ++t->corr;
    tb_ev(t, "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"%s\",\"pid\":1,\"tid\":1,\"ts\":%.3f,\"dur\":2,"
             "\"args\":{\"correlation\":%d}}", rt, ts, c);
    tb_ev(t, "{\"ph\":\"X\",\"cat\":\"%s\",\"name\":\"%s\",\"pid\":2,\"tid\":7,\"ts\":%.3f,\"dur\":%.3f,"
             "\"args\":{\"correlation\":%d,\"stream\":7}}", kcat, kname, kts, kdur, c);
    tb_ev(t, "{\"ph\":\"s\",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"id\":%d,\"pid\":1,\"tid\":1,\"ts\":%.3f}", c, ts);
    tb_ev(t, "{\"ph\":\"f\",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"id\":%d,\"pid\":2,\"tid\":7,\"ts\":%.3f,\"bp\":\"e\"}",
          c, kts);
}

static void kern(tb *t, const char *k, double ts, double kts, double kdur)
{
    launch(t, "hipLaunchKernel", ts, "kernel", k, kts, kdur);
}

/* Writes, ingests and loads the trace; frees the builder. */
static tl_trace *tb_load(tb *t, tl_reader **rd)
{
    tl_buf_puts(&t->b, "\n]}\n");
    char path[512];
    snprintf(path, sizeof path, "%s/t%d.json", g_dir, g_files++);
    FILE *fp = fopen(path, "w");
    fwrite(t->b.p, 1, t->b.n, fp);
    fclose(fp);
    tl_buf_free(&t->b);
    t->corr = 0;
    tl_err err = {0};
    tl_ingest_opts o = {.rank = -1};
    tl_ingest_result res;
    if (tl_ingest_file(g_store, path, &o, &res, &err)) {
        fprintf(stderr, "ingest: %s\n", err.msg);
        return NULL;
    }
    tl_trace *tr = NULL;
    if (tl_reader_open(g_store, rd, &err) || tl_trace_load(*rd, res.id, &tr, &err)) {
        fprintf(stderr, "load: %s\n", err.msg);
        return NULL;
    }
    return tr;
}

typedef struct pair {
    tl_reader *r[2];
    tl_trace *t[2];
    tl_diff *d;
} pair;

static int run_opts(pair *p, tb *a, tb *b, int python);
static int run(pair *p, tb *a, tb *b) { return run_opts(p, a, b, 0); }
static int run_opts(pair *p, tb *a, tb *b, int python)
{
    memset(p, 0, sizeof *p);
    p->t[0] = tb_load(a, &p->r[0]);
    p->t[1] = tb_load(b, &p->r[1]);
    if (!p->t[0] || !p->t[1]) return -1;
    tl_err err = {0};
    tl_diff_opts o = {.python = python};
    if (tl_diff_run(p->t[0], p->t[1], &o, &p->d, &err)) {
        fprintf(stderr, "diff: %s\n", err.msg);
        return -1;
    }
    return 0;
}

static void done(pair *p)
{
    tl_diff_free(p->d);
    for (int k = 0; k < 2; k++) {
        tl_trace_free(p->t[k]);
        if (p->r[k]) tl_reader_close(p->r[k]);
    }
}

static char *tree_text(const tl_diff *d)
{
    tl_buf b = {0};
    tl_diff_tree_text(d, 0, &b);
    tl_buf_putc(&b, 0);
    return b.p;
}

static const char *cell(const tl_table *t, const char *col, size_t r)
{
    static char buf[8][64];
    static int k;
    long c = tl_table_col(t, col);
    if (c < 0 || r >= t->nrows) return "(none)";
    k = (k + 1) % 8;
    return tl_table_cell_text(t, (size_t)c, r, buf[k], sizeof buf[k]);
}

/* rows as "name/cpu_op/source/lca/id;" */
static char *rows_text(const tl_table *t)
{
    tl_buf b = {0};
    for (size_t r = 0; r < t->nrows; r++)
        tl_buf_printf(&b, "%s/%s/%s/%s/%s;", cell(t, "name", r), cell(t, "cpu_op_name", r), cell(t, "source", r),
                      cell(t, "lowest_common_ancestor_name", r), cell(t, "lowest_common_ancestor_id", r));
    tl_buf_putc(&b, 0);
    return b.p;
}

/* ---- the examples ---------------------------------------------------------- */

static void e1_repeated_names(void)
{
    tb a = {0}, b = {0};
    cpu(&a, "aten::linear", 0, 100);
    cpu(&a, "aten::addmm", 10, 20); kern(&a, "gemmA", 12, 200, 10);
    cpu(&a, "aten::relu", 40, 20); kern(&a, "reluK", 42, 220, 5);
    cpu(&b, "aten::linear", 0, 100);
    cpu(&b, "aten::mm", 10, 15); kern(&b, "gemmB", 12, 200, 8);
    cpu(&b, "aten::add", 30, 15); kern(&b, "addK", 32, 210, 4);
    cpu(&b, "aten::relu", 50, 15); kern(&b, "reluK", 52, 220, 5);
    pair p;
    CHECK(run(&p, &a, &b) == 0);
    if (!p.d) { done(&p); return; }
    char *tree = tree_text(p.d);
    CHECK_EQ_S(tree,
               "\xe2\x94\x94\xe2\x94\x80\xe2\x94\x80 aten::linear\n"
               "    \xe2\x94\x9c\xe2\x94\x80\xe2\x94\x80 aten::relu\n"
               "    \xe2\x94\x82   \xe2\x94\x94\xe2\x94\x80\xe2\x94\x80 hipLaunchKernel\n"
               "    \xe2\x94\x82       \xe2\x94\x94\xe2\x94\x80\xe2\x94\x80 reluK\n"
               "    \xe2\x94\x9c\xe2\x94\x80\xe2\x94\x80 hipLaunchKernel\n"
               "    \xe2\x94\x82   \xe2\x94\x94\xe2\x94\x80\xe2\x94\x80 combined: gemmA | addK\n"
               "    \xe2\x94\x94\xe2\x94\x80\xe2\x94\x80 << trace2: hipLaunchKernel\n"
               "        \xe2\x94\x94\xe2\x94\x80\xe2\x94\x80 << trace2: gemmB\n");
    free(tree);
    char *rows = rows_text(tl_diff_stats(p.d));
    CHECK_EQ_S(rows, "gemmB/aten::mm/trace2/aten::linear/0;reluK/aten::relu/trace1/reluK/3;"
                     "reluK/aten::relu/trace2/reluK/3;gemmA/aten::addmm/trace1/gemmA | addK/7;"
                     "addK/aten::add/trace2/gemmA | addK/7;");
    free(rows);
    /* the summary carries the renaming side effect: addmm / add -> add */
    const tl_table *s = tl_diff_summary(p.d);
    int renamed = 0;
    for (size_t r = 0; s && r < s->nrows; r++)
        if (!strcmp(cell(s, "name", r), "gemmA") || !strcmp(cell(s, "name", r), "addK"))
            renamed += !strcmp(cell(s, "cpu_op_name", r), "add");
    CHECK_EQ_I(renamed, 2);
    CHECK(!tl_diff_identical(p.d));

    /* A10: the report hook enriches unified_perf_summary by gpu uid */
    tl_table *u = tl_table_new("unified_perf_summary");
    size_t cn = tl_table_add_col(u, "name", TL_STR);
    size_t ck = tl_table_add_col(u, "Kernel Time (\xc2\xb5s)_sum", TL_F64);
    tl_table_add_col(u, "operation_count", TL_I64);
    tl_table_add_row(u);
    tl_table_add_row(u);
    tl_table_set_str(u, cn, 0, "aten::addmm");
    tl_table_set_str(u, cn, 1, "aten::relu");
    tl_table_set_f64(u, ck, 0, 10.0);
    tl_table_set_f64(u, ck, 1, 5.0);
    /* gpu uids of gemmA and reluK in trace1 (events in file order) */
    int64_t uids[2] = {-1, -1};
    for (size_t i = 0; i < p.t[0]->n; i++) {
        const char *nm = tl_trace_str(p.t[0], p.t[0]->name[i]);
        if (!strcmp(nm, "gemmA")) uids[0] = p.t[0]->uid[i];
        if (!strcmp(nm, "reluK")) uids[1] = p.t[0]->uid[i];
    }
    size_t rows_of[2] = {0, 1};
    tl_err err = {0};
    CHECK(tl_diff_enrich_unified(p.d, u, uids, rows_of, 2, &err) == 0);
    CHECK_EQ_I(u->ncols, 10);
    CHECK_EQ_S(u->cols[2].name, "speedup (trace2/trace1)");
    CHECK_EQ_S(u->cols[8].name, "lca_total_kernel_time_trace2_us");
    CHECK_EQ_S(u->cols[9].name, "operation_count");
    CHECK_EQ_S(cell(u, "speedup (trace2/trace1)", 0), "0.4");
    CHECK_EQ_S(cell(u, "delta_us (trace2 - trace1)", 0), "-6.0");
    CHECK_EQ_S(cell(u, "lca_id", 0), "7");
    CHECK_EQ_S(cell(u, "lca_name", 0), "gemmA | addK");
    CHECK_EQ_S(cell(u, "lca_count_trace2", 1), "1");
    CHECK_EQ_S(cell(u, "lca_total_kernel_time_trace1_us", 1), "5.0");
    tl_table_free(u);
    tl_table *sheet = tl_diff_stats_sheet(p.d);
    CHECK(sheet && !strcmp(sheet->name, "diff_stats") && tl_table_col(sheet, "source") >= 0);
    tl_table_free(sheet);
    done(&p);
}

static void e2_root_shift_and_e3_identical(void)
{
    tb a = {0}, b = {0};
    cpu(&a, "aten::mm", 0, 10); kern(&a, "kmm", 1, 100, 10);
    cpu(&a, "aten::add", 20, 10); kern(&a, "kadd", 21, 120, 5);
    cpu(&b, "aten::zero_", 0, 10); kern(&b, "kz", 1, 100, 3);
    cpu(&b, "aten::mm", 20, 10); kern(&b, "kmm", 21, 110, 10);
    cpu(&b, "aten::add", 40, 10); kern(&b, "kadd", 41, 130, 5);
    pair p;
    CHECK(run(&p, &a, &b) == 0);
    if (p.d) {
        char *tree = tree_text(p.d);
        CHECK(strstr(tree, "\xe2\x94\x9c\xe2\x94\x80\xe2\x94\x80 combined: aten::mm | aten::zero_\n") == tree);
        CHECK(strstr(tree, "\n\xe2\x94\x9c\xe2\x94\x80\xe2\x94\x80 combined: aten::add | aten::mm\n") != NULL);
        CHECK(strstr(tree, "\n\xe2\x94\x94\xe2\x94\x80\xe2\x94\x80 << trace2: aten::add\n") != NULL);
        free(tree);
        char *rows = rows_text(tl_diff_stats(p.d));
        CHECK_EQ_S(rows, "kmm/aten::mm/trace1/kmm | kz/2.0;kz/aten::zero_/trace2/kmm | kz/2.0;"
                         "kadd/aten::add/trace1/kadd | kmm/5.0;kmm/aten::mm/trace2/kadd | kmm/5.0;"
                         "kadd/aten::add/trace2//;");
        free(rows);
    }
    done(&p);

    /* E3: a trace against itself (the same file twice) */
    tb c = {0}, e = {0};
    cpu(&c, "aten::mm", 0, 10); kern(&c, "kmm", 1, 100, 10);
    cpu(&c, "aten::add", 20, 10); kern(&c, "kadd", 21, 120, 5);
    cpu(&e, "aten::mm", 0, 10); kern(&e, "kmm", 1, 100, 10);
    cpu(&e, "aten::add", 20, 10); kern(&e, "kadd", 21, 120, 5);
    CHECK(run(&p, &c, &e) == 0);
    if (p.d) {
        CHECK(tl_diff_identical(p.d));
        const tl_table *s = tl_diff_stats(p.d);
        CHECK_EQ_I(s->nrows, 2);
        CHECK(tl_table_col(s, "source") < 0);
        CHECK_EQ_S(cell(s, "lowest_common_ancestor_name", 0), "kmm");
        CHECK(tl_table_col(tl_diff_summary(p.d), "source") < 0);
        CHECK_EQ_I(tl_diff_corresponding_uid(p.d, 1, p.t[0]->uid[0]), p.t[1]->uid[0]);
    }
    done(&p);
}

/* E4: python functions on; a single-child python chain above two cpu roots
 * yields two top-level roots sharing their children (A3 rewiring), each
 * printed in full, while diff_stats counts every kernel once. */
static void e4_python_dag(void)
{
    tb a = {0}, b = {0};
    const char *fwd[2] = {"model.py(10): forward", "model.py(12): forward"};
    const char *act[2] = {"/a/b/layers.py(33): act 0x7f01", "/c/d/layers.py(40): act2 0x7f99"};
    const char *gemm[2] = {"gemm1", "gemm2"}, *gelu[2] = {"geluK1", "geluK2"};
    tb *t[2] = {&a, &b};
    for (int k = 0; k < 2; k++) {
        pyf(t[k], "main.py(1): <module>", 0, 1000);
        pyf(t[k], fwd[k], 1, 998);
        pyf(t[k], "nn.Module: Linear_0", 10, 100);
        cpu(t[k], "aten::linear", 20, 80);
        cpu(t[k], "aten::addmm", 30, 60); kern(t[k], gemm[k], 31, 2000, 10 + k);
        pyf(t[k], act[k], 200, 100);
        cpu(t[k], "aten::gelu", 210, 80); kern(t[k], gelu[k], 211, 2100, 4);
    }
    pair p;
    CHECK(run_opts(&p, &a, &b, 1) == 0);
    if (p.d) {
        size_t n1, n2;
        CHECK_EQ_I(tl_diff_roots(p.d, &n1, &n2), 2);
        char *tree = tree_text(p.d);
        CHECK(strstr(tree, "\xe2\x94\x9c\xe2\x94\x80\xe2\x94\x80 combined: model.py(10): forward | model.py(12): forward\n") == tree);
        CHECK(strstr(tree, "\n\xe2\x94\x94\xe2\x94\x80\xe2\x94\x80 main.py(1): <module>\n") != NULL);
        const char *pair_act = "combined: /a/b/layers.py(33): act 0x7f01 | /c/d/layers.py(40): act2 0x7f99\n";
        const char *x = strstr(tree, pair_act);
        CHECK(x && strstr(x + 1, pair_act)); /* the shared subtree, printed twice */
        free(tree);
        const tl_table *s = tl_diff_stats(p.d);
        CHECK_EQ_I(s->nrows, 4);
        CHECK_EQ_S(cell(s, "nn_module_stack", 0), "nn.Module: Linear");
        CHECK_EQ_S(cell(s, "nn_module_parent", 0), "nn.Module: Linear");
        CHECK_EQ_S(cell(s, "nn_module_stack", 2), "root");
        /* the summary strips spaces from nn_module_parent (A7) */
        const tl_table *u = tl_diff_summary(p.d);
        int stripped = 0;
        for (size_t r = 0; r < u->nrows; r++) stripped += !strcmp(cell(u, "nn_module_parent", r), "nn.Module:Linear");
        CHECK_EQ_I(stripped, 2);
    }
    done(&p);
}

static void e5_phase1_collapse(void)
{
    tb a = {0}, b = {0};
    cpu(&a, "aten::block", 0, 100);
    cpu(&a, "aten::wrap", 5, 90);
    cpu(&a, "aten::a", 10, 10); kern(&a, "ka", 11, 200, 4);
    cpu(&a, "aten::b", 30, 10); kern(&a, "kb", 31, 210, 4);
    cpu(&b, "aten::block", 0, 100);
    cpu(&b, "aten::a", 10, 10); kern(&b, "ka", 11, 200, 4);
    cpu(&b, "aten::b", 30, 10); kern(&b, "kb", 31, 210, 4);
    pair p;
    CHECK(run(&p, &a, &b) == 0);
    if (p.d) {
        char *tree = tree_text(p.d);
        CHECK(strstr(tree, "\xe2\x94\x94\xe2\x94\x80\xe2\x94\x80 combined: aten::wrap | aten::block\n") == tree);
        CHECK(strstr(tree, "    \xe2\x94\x9c\xe2\x94\x80\xe2\x94\x80 aten::a\n") != NULL);
        CHECK(strstr(tree, "    \xe2\x94\x94\xe2\x94\x80\xe2\x94\x80 aten::b\n") != NULL);
        free(tree);
        /* the UID map still pairs block with block; wrap was bypassed */
        CHECK_EQ_I(tl_diff_corresponding_uid(p.d, 1, p.t[0]->uid[0]), p.t[1]->uid[0]);
        CHECK_EQ_I(tl_diff_corresponding_uid(p.d, 1, p.t[0]->uid[1]), -1);
        CHECK_EQ_I(tl_diff_corresponding_uid(p.d, 2, 999999), -1);
        /* print_merged_subtree: the merged node of trace1's aten::a */
        tl_buf sb = {0};
        tl_err err = {0};
        CHECK(tl_diff_subtree_text(p.d, p.t[0]->uid[2], -1, &sb, &err) == 0);
        tl_buf_putc(&sb, 0);
        CHECK(sb.p && strncmp(sb.p, "\xe2\x94\x94\xe2\x94\x80\xe2\x94\x80 aten::a\n", 15) == 0);
        CHECK(tl_diff_subtree_text(p.d, -1, -1, &sb, &err) == TL_EUSAGE);
        /* the replaced node (block) is not findable by its UID; wrap is */
        CHECK(tl_diff_subtree_text(p.d, p.t[0]->uid[0], -1, &sb, &err) == TL_ENOTFOUND);
        CHECK_EQ_S(err.msg, "Could not find merged node for the given UID.");
        tl_buf_free(&sb);
    }
    done(&p);
}

static void e7_disambiguation(void)
{
    tb a = {0}, b = {0};
    cpu(&a, "aten::block", 0, 100);
    cpu(&a, "aten::mm", 10, 10); kern(&a, "gemm_big", 11, 200, 30);
    cpu(&a, "aten::mm", 30, 10); kern(&a, "gemm_small", 31, 240, 3);
    cpu(&b, "aten::block", 0, 100);
    cpu(&b, "aten::mm", 10, 10); kern(&b, "gemm_big", 11, 200, 25);
    pair p;
    CHECK(run(&p, &a, &b) == 0);
    if (p.d) {
        char *tree = tree_text(p.d);
        CHECK_EQ_S(tree, "\xe2\x94\x94\xe2\x94\x80\xe2\x94\x80 aten::block\n"
                         "    \xe2\x94\x9c\xe2\x94\x80\xe2\x94\x80 aten::mm\n"
                         "    \xe2\x94\x82   \xe2\x94\x94\xe2\x94\x80\xe2\x94\x80 hipLaunchKernel\n"
                         "    \xe2\x94\x82       \xe2\x94\x94\xe2\x94\x80\xe2\x94\x80 gemm_big\n"
                         "    \xe2\x94\x94\xe2\x94\x80\xe2\x94\x80 >> trace1: aten::mm\n"
                         "        \xe2\x94\x94\xe2\x94\x80\xe2\x94\x80 >> trace1: hipLaunchKernel\n"
                         "            \xe2\x94\x94\xe2\x94\x80\xe2\x94\x80 >> trace1: gemm_small\n");
        free(tree);
        char *rows = rows_text(tl_diff_stats(p.d));
        CHECK_EQ_S(rows, "gemm_small/aten::mm/trace1/aten::block/0;gemm_big/aten::mm/trace1/gemm_big/3;"
                         "gemm_big/aten::mm/trace2/gemm_big/3;");
        free(rows);
    }
    done(&p);
}

static void e8_missing_by_name(void)
{
    tb a = {0}, b = {0};
    cpu(&a, "aten::zero_", 0, 50);
    cpu(&a, "aten::fill_", 5, 40); kern(&a, "fillK", 6, 200, 20);
    cpu(&b, "aten::zero_", 0, 50);
    cpu(&b, "aten::fill_", 5, 40);
    cpu(&b, "aten::mm", 60, 10); kern(&b, "gemm", 61, 100, 5); /* gives trace2 GPU work */
    cpu(&a, "aten::mm", 60, 10); kern(&a, "gemm", 61, 300, 5);
    pair p;
    CHECK(run(&p, &a, &b) == 0);
    if (p.d) {
        char *tree = tree_text(p.d);
        CHECK(strstr(tree, "\xe2\x94\x9c\xe2\x94\x80\xe2\x94\x80 aten::zero_\n"
                           "\xe2\x94\x82   \xe2\x94\x94\xe2\x94\x80\xe2\x94\x80 aten::fill_\n"
                           "\xe2\x94\x82       \xe2\x94\x94\xe2\x94\x80\xe2\x94\x80 >> trace1: hipLaunchKernel\n") == tree);
        free(tree);
        const tl_table *s = tl_diff_stats(p.d);
        CHECK_EQ_S(cell(s, "name", 0), "fillK");
        CHECK_EQ_S(cell(s, "lowest_common_ancestor_name", 0), "aten::fill_");
        CHECK_EQ_S(cell(s, "lowest_common_ancestor_id", 0), "1");
        CHECK_EQ_S(cell(s, "busy_time", 0), "20.0");
    }
    done(&p);
}

static void e9_memset_not_kernel_like(void)
{
    tb a = {0}, b = {0};
    cpu(&a, "aten::zero_", 0, 10); launch(&a, "cudaMemsetAsync", 1, "gpu_memset", "Memset (Device)", 100, 2);
    cpu(&a, "aten::copy_", 20, 10); launch(&a, "cudaMemcpyAsync", 21, "gpu_memcpy", "Memcpy DtoD", 110, 7);
    cpu(&b, "aten::zero_", 0, 10); launch(&b, "cudaMemsetAsync", 1, "gpu_memset", "Memset (Device)", 100, 3);
    cpu(&b, "aten::copy_", 20, 10); launch(&b, "cudaMemcpyAsync", 21, "gpu_memcpy", "Memcpy DtoD", 110, 9);
    pair p;
    CHECK(run(&p, &a, &b) == 0);
    if (p.d) {
        char *rows = rows_text(tl_diff_stats(p.d));
        CHECK_EQ_S(rows, "Memcpy DtoD/aten::copy_/trace1/Memcpy DtoD/5;Memcpy DtoD/aten::copy_/trace2/Memcpy DtoD/5;");
        free(rows);
        CHECK_EQ_S(cell(tl_diff_stats(p.d), "Input Dims", 0), "((4, 8), ())");
        CHECK_EQ_S(cell(tl_diff_stats(p.d), "Input type", 0), "('float', 'Scalar')");
        CHECK_EQ_S(cell(tl_diff_stats(p.d), "Concrete Inputs", 0), "");
    }
    done(&p);
}

static void no_cpu_roots(void)
{
    tb a = {0}, b = {0};
    launch(&a, "hipLaunchKernel", 1, "kernel", "k", 10, 1);
    cpu(&b, "aten::mm", 0, 10);
    tl_reader *r1, *r2;
    tl_trace *t1 = tb_load(&a, &r1), *t2 = tb_load(&b, &r2);
    tl_diff *d = NULL;
    tl_err err = {0};
    CHECK(t1 && t2 && tl_diff_run(t1, t2, NULL, &d, &err) == TL_EFORMAT);
    CHECK(strstr(err.msg, "at least one root node") != NULL);
    /* one root each, no GPU work anywhere: a clean "nothing to report" */
    tb c = {0};
    cpu(&c, "aten::empty", 0, 1);
    tl_reader *r3;
    tl_trace *t3 = tb_load(&c, &r3);
    CHECK(tl_diff_run(t2, t3, NULL, &d, &err) == 0);
    CHECK(d && tl_diff_empty(d) && !tl_diff_stats(d));
    tl_diff_free(d);
    tl_trace_free(t1);
    tl_trace_free(t2);
    tl_trace_free(t3);
    tl_reader_close(r1);
    tl_reader_close(r2);
    tl_reader_close(r3);
}

static void names(void)
{
    tl_buf b = {0};
    tl_diff_norm_name("/a/x.py(1): fwd", 0, &b);
    CHECK_EQ_S(b.p, "/a/x.py: fwd");
    tl_diff_norm_name("/a/x.py(1): fwd", 1, &b);
    CHECK_EQ_S(b.p, "x.py");
    tl_diff_norm_name("nn.Module: Linear_0", 1, &b);
    CHECK_EQ_S(b.p, "nn.Module");
    tl_diff_norm_name("/proj/layer.py(1): matmul : a", 1, &b);
    CHECK_EQ_S(b.p, "/proj/layer.py: matmul ");
    tl_diff_norm_name("act 0x7f01ab and 0x9", 0, &b);
    CHECK_EQ_S(b.p, "act 0xXXXX and 0xXXXX");
    tl_diff_norm_name("hipModuleLaunchKernel", 0, &b);
    CHECK_EQ_S(b.p, "__kernel_launch__");
    tl_diff_norm_name("cuLaunchKernel", 1, &b);
    CHECK_EQ_S(b.p, "__kernel_launch__");
    tl_diff_norm_name("hipLaunchKernel", 0, &b);
    CHECK_EQ_S(b.p, "hipLaunchKernel");
    tl_diff_norm_name("x.py(12)", 0, &b);
    CHECK_EQ_S(b.p, "x.py(12)");
    tl_diff_norm_name("", 1, &b);
    CHECK_EQ_S(b.p, "");
    tl_buf_free(&b);
}

/* A4.9 examples on the reference pair (skipped without shared data). */
static void reference_pair(void)
{
    const char *p1 = tl_test_data("kineto/mi300/facebook_timesformer-base-finetuned-k400__1016002.json.gz");
    char a[4096];
    if (!p1) { printf("reference pair: skipped (no shared data)\n"); return; }
    snprintf(a, sizeof a, "%s", p1);
    const char *p2 = tl_test_data("kineto/h100/facebook_timesformer-base-finetuned-k400__1016002.json.gz");
    if (!p2) return;
    tl_err err = {0};
    tl_ingest_opts o = {.rank = -1};
    tl_ingest_result r1, r2;
    CHECK(tl_ingest_file(g_store, a, &o, &r1, &err) == 0);
    CHECK(tl_ingest_file(g_store, p2, &o, &r2, &err) == 0);
    tl_reader *rd;
    tl_trace *t1 = NULL, *t2 = NULL;
    CHECK(tl_reader_open(g_store, &rd, &err) == 0);
    CHECK(tl_trace_load(rd, r1.id, &t1, &err) == 0 && tl_trace_load(rd, r2.id, &t2, &err) == 0);
    tl_diff *d = NULL;
    CHECK(t1 && t2 && tl_diff_run(t1, t2, NULL, &d, &err) == 0);
    if (d) {
        size_t n1, n2;
        CHECK_EQ_I(tl_diff_roots(d, &n1, &n2), 964);
        CHECK_EQ_I(n1, 964);
        CHECK_EQ_I(tl_diff_merged_nodes(d), 3438);
        CHECK_EQ_I(tl_diff_stats(d)->nrows, 983);
        CHECK_EQ_I(tl_diff_summary(d)->nrows, 981);
        CHECK_EQ_I(tl_diff_corresponding_uid(d, 1, 93), 90);
        CHECK_EQ_I(tl_diff_corresponding_uid(d, 2, 90), 93);
        CHECK_EQ_I(tl_diff_corresponding_uid(d, 2, 15), -1);
        CHECK_EQ_I(tl_diff_corresponding_uid(d, 1, 15), -1);
        tl_table *ls = tl_diff_lca_summary(d);
        CHECK(ls->nrows > 0 && tl_table_col(ls, "cumulative_pct_trace1 (%)") >= 0);
        tl_table_free(ls);
        tl_diff_free(d);
    }
    tl_trace_free(t1);
    tl_trace_free(t2);
    tl_reader_close(rd);
}

int main(void)
{
    snprintf(g_dir, sizeof g_dir, "/tmp/tl_test_tracediff_XXXXXX");
    if (!mkdtemp(g_dir)) { perror("mkdtemp"); return 1; }
    char db[300];
    snprintf(db, sizeof db, "%s/db", g_dir);
    tl_err err = {0};
    if (tl_store_open(db, &g_store, &err)) { fprintf(stderr, "%s\n", err.msg); return 1; }
    names();
    e1_repeated_names();
    e2_root_shift_and_e3_identical();
    e4_python_dag();
    e5_phase1_collapse();
    e7_disambiguation();
    e8_missing_by_name();
    e9_memset_not_kernel_like();
    no_cpu_roots();
    reference_pair();
    tl_store_close(g_store);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", g_dir);
    return tl_test_done("test_tracediff");
}
