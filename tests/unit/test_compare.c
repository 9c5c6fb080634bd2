/* test_compare.c — report comparison (query/diff/diff.h): the outer merge
 * (sorted keys, null keys matching, duplicates multiplying, int columns
 * turning float), diff/pct columns, the intersect / only-baseline /
 * only-variant split with all-null columns dropped, pandas' unstable
 * descending sort replayed, the group rules and errors; and, with the
 * shared data, the same comparison from CSV folders and from workbooks
 * written and read back by report/ (hidden columns included). */
#include "tests/unit/tl_test.h"
#include "query/diff/diff.h"
#include "report/report.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *cell(const tl_table *t, const char *col, size_t r)
{
    static char buf[8][64];
    static int k;
    long c = tl_table_col(t, col);
    if (c < 0) return "(no column)";
    if (r >= t->nrows) return "(no row)";
    k = (k + 1) % 8;
    return tl_table_cell_text(t, (size_t)c, r, buf[k], sizeof buf[k]);
}

static tl_table *mk(const char *name, const char *const *names, const int64_t *count, const double *t, size_t n)
{
    tl_table *x = tl_table_new(name);
    size_t a = tl_table_add_col(x, "name", TL_STR);
    size_t b = tl_table_add_col(x, "Count", TL_I64);
    size_t c = tl_table_add_col(x, "t", TL_F64);
    size_t d = tl_table_add_col(x, "note", TL_STR);
    for (size_t i = 0; i < n; i++) {
        size_t r = tl_table_add_row(x);
        tl_table_set_str(x, a, r, names[i]);
        if (count[i] >= 0) tl_table_set_i64(x, b, r, count[i]);
        tl_table_set_f64(x, c, r, t[i]);
        tl_table_set_str(x, d, r, NULL);
    }
    return x;
}

static void build_and_split(void)
{
    const char *n0[] = {"mul", "add", NULL, "mm", "add"};
    int64_t c0[] = {2, 3, 1, 4, 5};
    double t0[] = {10, 0, 7, 20, 5};
    const char *n1[] = {"add", "zero", NULL, "mm"};
    int64_t c1[] = {3, 1, 1, 6};
    double t1[] = {6, 1, 14, 10};
    tl_table *a = mk("s", n0, c0, t0, 5), *b = mk("s", n1, c1, t1, 4);
    const tl_table *tabs[2] = {a, b};
    const char *tags[2] = {"base", "var"}, *keys[1] = {"name"}, *met[2] = {"t", "Count"};
    tl_table *m = NULL;
    tl_err err = {0};
    CHECK(tl_compare_build(tabs, tags, 2, keys, 1, met, 2, "s", &m, &err) == 0);
    if (!m) return;
    /* key order, duplicates multiplied (add x2 on the left, x1 right), null last */
    CHECK_EQ_I(m->nrows, 6);
    CHECK_EQ_S(cell(m, "name", 0), "add");
    CHECK_EQ_S(cell(m, "name", 1), "add");
    CHECK_EQ_S(cell(m, "name", 2), "mm");
    CHECK_EQ_S(cell(m, "name", 3), "mul");
    CHECK_EQ_S(cell(m, "name", 4), "zero");
    CHECK_EQ_S(cell(m, "name", 5), "");
    /* column order: keys, diff/pct (metric-major), base::, var:: */
    CHECK_EQ_S(m->cols[0].name, "name");
    CHECK_EQ_S(m->cols[1].name, "t__var_diff");
    CHECK_EQ_S(m->cols[2].name, "t__var_pct");
    CHECK_EQ_S(m->cols[3].name, "Count__var_diff");
    CHECK_EQ_S(m->cols[5].name, "base::Count");
    CHECK_EQ_S(m->cols[8].name, "var::Count");
    /* values: add(3,t0) vs add(3,t6): pct null with a zero baseline */
    CHECK_EQ_S(cell(m, "t__var_diff", 0), "6.0");
    CHECK_EQ_S(cell(m, "t__var_pct", 0), "");
    CHECK_EQ_S(cell(m, "t__var_pct", 1), "20.0");
    CHECK_EQ_S(cell(m, "t__var_pct", 2), "-50.0");
    CHECK_EQ_S(cell(m, "t__var_diff", 5), "7.0"); /* the null keys matched */
    CHECK_EQ_S(cell(m, "t__var_diff", 3), "");    /* mul: baseline only */
    /* an int column that gains a null prints as float, so does its diff */
    CHECK_EQ_S(cell(m, "base::Count", 0), "3.0");
    CHECK_EQ_S(cell(m, "Count__var_diff", 2), "2.0");

    tl_cmp_sheets out = {0};
    CHECK(tl_compare_split(m, tags, 2, "s", "t", "t", &out, &err) == 0);
    CHECK_EQ_I(out.n, 3);
    if (out.n == 3) {
        tl_table *in = out.v[0], *ob = out.v[1], *ov = out.v[2];
        CHECK_EQ_S(in->name, "s_intersect_var");
        CHECK_EQ_S(ob->name, "s_only_baseline_var");
        CHECK_EQ_S(ov->name, "s_only_variant_var");
        CHECK_EQ_I(in->nrows, 4);
        /* sorted by base::t descending: mm 20, null 7, add 5, add 0 */
        CHECK_EQ_S(cell(in, "base::t", 0), "20.0");
        CHECK_EQ_S(cell(in, "name", 1), "");
        CHECK_EQ_S(cell(in, "base::t", 3), "0.0");
        /* all-null columns dropped (note) */
        CHECK(tl_table_col(in, "base::note") < 0);
        CHECK_EQ_I(ob->nrows, 1);
        CHECK_EQ_S(cell(ob, "name", 0), "mul");
        CHECK(tl_table_col(ob, "var::t") < 0 && tl_table_col(ob, "t__var_diff") < 0);
        CHECK_EQ_I(ov->nrows, 1);
        CHECK(tl_table_col(ov, "base::t") < 0 && tl_table_col(ov, "t__var_pct") < 0);
        CHECK_EQ_S(cell(ov, "var::Count", 0), "1.0");
    }
    tl_cmp_sheets_free(&out);
    /* an empty selection has no columns at all */
    const char *n2[] = {"x"};
    int64_t c2[] = {1};
    double t2[] = {1};
    tl_table *e = mk("s", n2, c2, t2, 1);
    const tl_table *tabs2[2] = {e, e};
    tl_table *m2 = NULL;
    CHECK(tl_compare_build(tabs2, tags, 2, keys, 1, met, 2, "s", &m2, &err) == 0);
    CHECK(tl_compare_split(m2, tags, 2, "s", "t", "t", &out, &err) == 0);
    CHECK(out.n == 3 && out.v[1]->ncols == 0 && out.v[1]->nrows == 0);
    CHECK_EQ_S(cell(m2, "Count__var_diff", 0), "0"); /* ints without nulls stay ints */
    tl_cmp_sheets_free(&out);
    tl_table_free(m2);
    tl_table_free(e);
    /* a missing metric column is an error */
    const char *bad[1] = {"nope"};
    CHECK(tl_compare_build(tabs, tags, 2, keys, 1, bad, 1, "s", &m2, &err) == TL_ENOTFOUND);
    tl_table_free(m);
    tl_table_free(a);
    tl_table_free(b);
}

/* pandas' sort_values(ascending=False) as NumPy 2 runs it on AVX-512
 * (x86-simd-sort's bitonic argsort): the expected order was computed with
 * a lane-by-lane model of that network; note it is not stable. */
static void unstable_sort(void)
{
    double v[] = {5, 3, 5, 1, 3, 5, 2, 2, 9, 3, 5, 1, 0, 4, 4, 5, 3, 2, 8, 5, NAN, 7, 5, 3, 3, 1, 2, 9, 9, 0, 4, 5, 5};
    size_t expect[] = {8, 27, 28, 18, 21, 0, 5, 2, 19, 22, 31, 32, 10, 15, 13, 14, 30,
                       24, 16, 23, 9, 4, 1, 6, 17, 26, 7, 3, 25, 11, 12, 29, 20};
    size_t n = sizeof v / sizeof *v;
    tl_table *t = tl_table_new("x");
    size_t a = tl_table_add_col(t, "v", TL_F64), b = tl_table_add_col(t, "row", TL_I64);
    for (size_t i = 0; i < n; i++) {
        tl_table_add_row(t);
        tl_table_set_f64(t, a, i, v[i]);
        tl_table_set_i64(t, b, i, (int64_t)i);
    }
    tl_compare_sort_desc(t, "v");
    int same = 1;
    for (size_t i = 0; i < n; i++) same &= t->cols[b].v.i[i] == (int64_t)expect[i];
    CHECK(same);
    tl_table_free(t);
}

static void group_errors(void)
{
    tl_table *g = tl_table_new("gpu_timeline");
    size_t ty = tl_table_add_col(g, "type", TL_STR), tm = tl_table_add_col(g, "time ms", TL_F64);
    tl_table_add_row(g);
    tl_table_set_str(g, ty, 0, "busy_time");
    tl_table_set_f64(g, tm, 0, 2.0);
    tl_table *sheets[1] = {g};
    tl_cmp_report r[2] = {{"a", "A", 1, sheets, 1}, {"a", "B", 1, sheets, 1}};
    tl_cmp_sheets out = {0};
    tl_err err = {0};
    CHECK(tl_compare_reports(r, 2, TL_CMP_GPU_TIMELINE, NULL, &out, &err) == TL_EUSAGE);
    CHECK(strstr(err.msg, "Tags must be unique") != NULL);
    CHECK(tl_compare_reports(r, 1, TL_CMP_ALL, NULL, &out, &err) == TL_EUSAGE);
    CHECK_EQ_S(err.msg, "Need at least two report files");
    r[1].tag = "b";
    CHECK(tl_compare_reports(r, 2, TL_CMP_GPU_TIMELINE, NULL, &out, &err) == 0);
    CHECK(out.n == 1 && !strcmp(out.v[0]->name, "gpu_timeline"));
    CHECK_EQ_S(cell(out.v[0], "time ms__b_diff", 0), "0.0");
    tl_cmp_sheets_free(&out);
    CHECK(tl_compare_reports(r, 2, TL_CMP_OPS_SUMMARY, NULL, &out, &err) == TL_ENOTFOUND);
    CHECK_EQ_S(err.msg, "ops_summary sheet not found in A");
    CHECK(tl_compare_reports(r, 2, TL_CMP_KERNEL_SUMMARY, NULL, &out, &err) == TL_ENOTFOUND);
    CHECK(tl_compare_group("roofline") == TL_CMP_ROOFLINE && tl_compare_group("all") == TL_CMP_ALL &&
          tl_compare_group("nope") == 0);
    tl_cmp_sheets_free(&out);
    tl_table_free(g);
}

static int run_reports(tl_report_tables *a, tl_report_tables *b, tl_cmp_sheets *out)
{
    tl_cmp_report r[2] = {{"h100", "h100", 1, a->v, a->n}, {"mi300", "mi300", 1, b->v, b->n}};
    tl_err err = {0};
    int rc = tl_compare_reports(r, 2, TL_CMP_ALL, NULL, out, &err);
    if (rc) fprintf(stderr, "compare: %s\n", err.msg);
    return rc;
}

/* The shared Qwen reports: CSV folders vs the same sheets through xlsx. */
static void shared_reports(void)
{
    const char *p = tl_test_data("compare/h100_perf_report_csvs");
    if (!p) { printf("shared reports: skipped (no shared data)\n"); return; }
    char h[4096], m[4096];
    snprintf(h, sizeof h, "%s", p);
    snprintf(m, sizeof m, "%s", tl_test_data("compare/mi300_perf_report_csvs"));
    tl_report_tables A = {0}, B = {0}, XA = {0}, XB = {0};
    tl_err err = {0};
    CHECK(tl_report_read(h, 0, &A, &err) == 0 && tl_report_read(m, 0, &B, &err) == 0);
    tl_cmp_sheets c1 = {0}, c2 = {0};
    CHECK(run_reports(&A, &B, &c1) == 0);
    CHECK_EQ_I(c1.n, 21);
    /* hidden columns: per-op sheets hide _std etc.; gpu_timeline nothing */
    for (size_t i = 0; i < c1.n; i++) {
        tl_table *t = c1.v[i];
        if (!strcmp(t->name, "unified_perf_summary_intersect_mi300")) {
            long c = tl_table_col(t, "h100::Kernel Time (\xc2\xb5s)_std");
            CHECK(c >= 0 && t->cols[c].hidden);
            c = tl_table_col(t, "h100::ex_UID");
            CHECK(c >= 0 && t->cols[c].hidden);
            CHECK(!t->cols[0].hidden);
        }
        if (!strcmp(t->name, "GEMM_intersect_mi300")) {
            /* plain suffix tests: "UID" does not hide UID_first */
            long c = tl_table_col(t, "h100::UID_first");
            CHECK(c >= 0 && !t->cols[c].hidden);
            c = tl_table_col(t, "mi300::TB/s_std");
            CHECK(c >= 0 && t->cols[c].hidden);
            c = tl_table_col(t, "h100::Input Dims_first");
            CHECK(c >= 0 && t->cols[c].hidden);
            c = tl_table_col(t, "mi300::param: transpose"); /* not in every report: not a key */
            CHECK(c >= 0);
        }
        if (!strcmp(t->name, "kernel_summary")) CHECK_EQ_I(t->nrows, 85);
    }
    /* the same reports written as workbooks and read back */
    char dir[] = "/tmp/tl_test_compare_XXXXXX";
    if (!mkdtemp(dir)) { CHECK(0); return; }
    char xa[4200], xb[4200];
    snprintf(xa, sizeof xa, "%s/h100.xlsx", dir);
    snprintf(xb, sizeof xb, "%s/mi300.xlsx", dir);
    tl_xlsx_opts o = {.quiet = 1};
    CHECK(tl_report_xlsx_write(xa, A.v, A.n, &o, &err) == 0);
    CHECK(tl_report_xlsx_write(xb, B.v, B.n, &o, &err) == 0);
    CHECK(tl_report_xlsx_read(xa, 0, &XA, &err) == 0 && tl_report_xlsx_read(xb, 0, &XB, &err) == 0);
    CHECK(run_reports(&XA, &XB, &c2) == 0);
    CHECK_EQ_I(c2.n, c1.n);
    size_t diffs = 0, cells = 0;
    for (size_t i = 0; i < c1.n && i < c2.n; i++) {
        tl_table *x = c1.v[i], *y = c2.v[i];
        if (strcmp(x->name, y->name) || x->nrows != y->nrows || x->ncols != y->ncols) { diffs++; continue; }
        char b1[64], b2[64];
        for (size_t c = 0; c < x->ncols; c++)
            for (size_t r = 0; r < x->nrows; r++) {
                cells++;
                const char *s1 = tl_table_cell_text(x, c, r, b1, sizeof b1);
                const char *s2 = tl_table_cell_text(y, c, r, b2, sizeof b2);
                if (strcmp(s1, s2)) {
                    double d1 = strtod(s1, NULL), d2 = strtod(s2, NULL);
                    if (!(fabs(d1 - d2) < 1e-9)) diffs++;
                }
            }
    }
    CHECK(cells > 5000);
    CHECK_EQ_I(diffs, 0);
    tl_cmp_sheets_free(&c1);
    tl_cmp_sheets_free(&c2);
    tl_report_tables_free(&A);
    tl_report_tables_free(&B);
    tl_report_tables_free(&XA);
    tl_report_tables_free(&XB);
    unlink(xa);
    unlink(xb);
    rmdir(dir);
}

int main(void)
{
    build_and_split();
    unstable_sort();
    group_errors();
    shared_reports();
    return tl_test_done("test_compare");
}
