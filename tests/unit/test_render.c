/* test_render.c — report/: CSV text and quoting (write -> read round trip),
 * the empty-sheet rules, pandas-like type inference, every reference CSV
 * under ../shared/data read (and re-written byte for byte), xlsx write ->
 * read round trips (sheet-name collisions after the 31-character cut, hidden
 * columns, charts, the CSV fallback for oversized sheets), the reference
 * tool's workbooks checked against their sibling CSVs, and terminal output.
 * With TL_RENDER_XLSX_OUT set, a sample workbook (charts included) is written
 * there for tests/test_xlsx_openpyxl.py. Returns 77 when ../shared/data is
 * absent (after running everything that does not need it). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* nftw, open_memstream, mkdtemp */
#endif
#include "report/report.h"
#include "tests/unit/tl_test.h"

#include <dirent.h>
#include <ftw.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zip.h>

static char tmpdir[64];

static char *tmp_path(const char *name)
{
    static char bufs[8][512];
    static int k;
    char *b = bufs[k++ & 7];
    snprintf(b, 512, "%s/%s", tmpdir, name);
    return b;
}

/* 1 if no temporary file (".tmp<pid>") was left in the test directory. */
static int no_tmp_left(void)
{
    DIR *d = opendir(tmpdir);
    struct dirent *e;
    int ok = 1;
    while (d && (e = readdir(d)))
        if (strstr(e->d_name, ".tmp")) ok = 0;
    if (d) closedir(d);
    return ok;
}

static const char *cell(const tl_table *t, const char *col, size_t row)
{
    static char buf[8][64];
    static int k;
    long c = tl_table_col(t, col);
    if (c < 0 || row >= t->nrows) return "<no such cell>";
    return tl_table_cell_text(t, (size_t)c, row, buf[k++ & 7], 64);
}

static int col_type(const tl_table *t, const char *col)
{
    long c = tl_table_col(t, col);
    return c < 0 ? -1 : (int)t->cols[c].type;
}

/* ---- CSV */
static tl_table *quoting_table(void)
{
    tl_table *t = tl_table_new("quote");
    size_t s = tl_table_add_col(t, "name", TL_STR);
    size_t i = tl_table_add_col(t, "a,b", TL_I64);
    size_t f = tl_table_add_col(t, "Kernel Time (µs)_sum", TL_F64);
    size_t b = tl_table_add_col(t, "say \"x\"", TL_BOOL);
    static const char *names[] = {"plain", "a,b", "say \"hi\"", "line\nbreak", "cr\rend", "((512,), (141, 512))",
                                  "µs café"};
    static const double vals[] = {25.0, 1e-05, NAN, 100.00000000000001, -0.5, 1e16, 2.0};
    for (size_t r = 0; r < 7; r++) {
        tl_table_add_row(t);
        tl_table_set_str(t, s, r, names[r]);
        if (r != 2) tl_table_set_i64(t, i, r, (int64_t)r + 1);
        tl_table_set_f64(t, f, r, vals[r]);
        if (r != 2) tl_table_set_bool(t, b, r, r % 3 == 0);
    }
    return t;
}

static const char quoting_csv[] = "name,\"a,b\",Kernel Time (µs)_sum,\"say \"\"x\"\"\"\n"
                                  "plain,1,25.0,True\n"
                                  "\"a,b\",2,1e-05,False\n"
                                  "\"say \"\"hi\"\"\",,,\n"
                                  "\"line\nbreak\",4,100.00000000000001,True\n"
                                  "\"cr\rend\",5,-0.5,False\n"
                                  "\"((512,), (141, 512))\",6,1e+16,False\n"
                                  "µs café,7,2.0,True\n";

static void test_csv_quoting(void)
{
    tl_err err = {0};
    tl_table *t = quoting_table();
    const char *p = tmp_path("quote.csv");
    CHECK_EQ_I(tl_report_csv_write(t, p, &err), 0);
    size_t n;
    char *got = tl_test_slurp(p, &n);
    CHECK(got && n == strlen(quoting_csv) && memcmp(got, quoting_csv, n) == 0);
    if (got && strcmp(got, quoting_csv)) fprintf(stderr, "got:\n%s\nexpected:\n%s\n", got, quoting_csv);
    free(got);
    CHECK(no_tmp_left());

    tl_table *r = NULL;
    CHECK_EQ_I(tl_report_csv_read(p, 0, &r, &err), 0);
    if (r) {
        CHECK_EQ_S(r->name, "quote");
        CHECK_EQ_I(r->ncols, 4);
        CHECK_EQ_I(r->nrows, 7);
        for (size_t c = 0; c < 4 && c < r->ncols; c++) CHECK_EQ_S(r->cols[c].name, t->cols[c].name);
        for (size_t i = 0; i < 7 && r->nrows == 7; i++) CHECK_EQ_S(cell(r, "name", i), t->cols[0].v.s[i]);
        CHECK_EQ_I(col_type(r, "a,b"), TL_F64); /* ints with an empty cell: float, as pandas */
        CHECK_EQ_S(cell(r, "a,b", 0), "1.0");
        CHECK_EQ_S(cell(r, "a,b", 2), "");
        CHECK_EQ_I(col_type(r, "Kernel Time (µs)_sum"), TL_F64);
        CHECK_EQ_S(cell(r, "Kernel Time (µs)_sum", 3), "100.00000000000001");
        CHECK_EQ_I(col_type(r, "say \"x\""), TL_BOOL);
        CHECK(tl_table_is_missing(r, 3, 2));
        CHECK_EQ_S(cell(r, "say \"x\"", 6), "True");
        /* and back out: the same bytes except the int column now prints as float */
        char *buf;
        size_t bn;
        FILE *m = open_memstream(&buf, &bn);
        CHECK_EQ_I(tl_report_csv_write_fp(r, m, &err), 0);
        fclose(m);
        CHECK(strstr(buf, "plain,1.0,25.0,True\n") != NULL);
        free(buf);
        tl_table_free(r);
    }
    /* raw mode keeps text */
    CHECK_EQ_I(tl_report_csv_read(p, TL_READ_RAW, &r, &err), 0);
    if (r) {
        for (size_t c = 0; c < r->ncols; c++) CHECK_EQ_I(r->cols[c].type, TL_STR);
        CHECK_EQ_S(cell(r, "a,b", 0), "1");
        CHECK(tl_table_is_missing(r, 1, 2));
        tl_table_free(r);
    }
    tl_table_free(t);
}

static void test_empty_sheets(void)
{
    tl_err err = {0};
    size_t n;
    tl_table *t = tl_table_new("empty");
    const char *p = tmp_path("empty.csv");
    CHECK_EQ_I(tl_report_csv_write(t, p, &err), 0);
    char *got = tl_test_slurp(p, &n);
    CHECK(got && n == 1 && got[0] == '\n');
    free(got);
    tl_table *r = NULL;
    CHECK_EQ_I(tl_report_csv_read(p, 0, &r, &err), 0);
    if (r) {
        CHECK_EQ_I(r->ncols, 0);
        CHECK_EQ_I(r->nrows, 0);
        tl_table_free(r);
    }
    tl_table_add_col(t, "a", TL_F64);
    tl_table_add_col(t, "b c", TL_STR);
    CHECK_EQ_I(tl_report_csv_write(t, p, &err), 0);
    got = tl_test_slurp(p, &n);
    CHECK_EQ_S(got, "a,b c\n");
    free(got);
    CHECK_EQ_I(tl_report_csv_read(p, 0, &r, &err), 0);
    if (r) {
        CHECK_EQ_I(r->ncols, 2);
        CHECK_EQ_I(r->nrows, 0);
        CHECK_EQ_S(r->cols[1].name, "b c");
        tl_table_free(r);
    }
    /* zero-byte file: a table without columns (spec B1) */
    FILE *f = fopen(p, "w");
    fclose(f);
    CHECK_EQ_I(tl_report_csv_read(p, 0, &r, &err), 0);
    if (r) {
        CHECK_EQ_I(r->ncols, 0);
        tl_table_free(r);
    }
    tl_table_free(t);
}

static void test_csv_dir(void)
{
    tl_err err = {0};
    tl_table *ts[3] = {quoting_table(), tl_table_new("a/b"), tl_table_new("empty")};
    tl_table_add_col(ts[1], "x", TL_I64);
    tl_table_set_i64(ts[1], 0, tl_table_add_row(ts[1]), 42);
    const char *dir = tmp_path("csvs/nested");
    CHECK_EQ_I(tl_report_csv_write_dir(ts, 3, dir, &err), 0);
    CHECK_EQ_I(tl_report_csv_write_dir(ts, 3, dir, &err), 0); /* existing dir, overwrite */
    tl_report_tables l = {0};
    CHECK_EQ_I(tl_report_read(dir, 0, &l, &err), 0);
    CHECK_EQ_I(l.n, 3);
    if (l.n == 3) {
        CHECK_EQ_S(l.v[0]->name, "a_b"); /* sorted by file name */
        CHECK_EQ_S(l.v[1]->name, "empty");
        CHECK_EQ_S(l.v[2]->name, "quote");
        CHECK_EQ_S(cell(l.v[0], "x", 0), "42");
        CHECK_EQ_I(l.v[1]->ncols, 0);
    }
    tl_report_tables_free(&l);
    CHECK_EQ_I(tl_report_read(tmp_path("csvs/nested/quote.csv"), 0, &l, &err), 0);
    CHECK(l.n == 1 && l.v[0]->nrows == 7);
    tl_report_tables_free(&l);
    CHECK(tl_report_read(tmp_path("csvs/none"), 0, &l, &err) == TL_EIO);
    for (int i = 0; i < 3; i++) tl_table_free(ts[i]);
}

static void test_inference(void)
{
    tl_err err = {0};
    static const char csv[] =
        "\xef\xbb\xbfi,f,b,s,na,e,m,dup,dup,,big,x\r\n"
        "1,1.5,True,x,NA,,1,a,b,c,99999999999999999999,1e5\r\n"
        "\r\n"
        "-2,,False,None,nan,,x,\"multi\r\nline\",b,c,1,inf\n"
        "+3,2,TRUE,\"\",#N/A,\"\",2,a,b,c,2,-Infinity\n"
        "\n"
        "4,.5,false,null,<NA>,,3,a,b,c,3,5.\n";
    tl_table *t = NULL;
    CHECK_EQ_I(tl_report_csv_read_mem(csv, sizeof csv - 1, "inf", 0, &t, &err), 0);
    if (!t) return;
    CHECK_EQ_I(t->nrows, 4);
    CHECK_EQ_I(t->ncols, 12);
    CHECK_EQ_I(col_type(t, "i"), TL_I64);
    CHECK_EQ_S(cell(t, "i", 2), "3");
    CHECK_EQ_S(cell(t, "i", 1), "-2");
    CHECK_EQ_I(col_type(t, "f"), TL_F64);
    CHECK_EQ_S(cell(t, "f", 1), "");
    CHECK_EQ_S(cell(t, "f", 2), "2.0");
    CHECK_EQ_S(cell(t, "f", 3), "0.5");
    CHECK_EQ_I(col_type(t, "b"), TL_BOOL);
    CHECK_EQ_S(cell(t, "b", 2), "True");
    CHECK_EQ_S(cell(t, "b", 3), "False");
    CHECK_EQ_I(col_type(t, "s"), TL_STR);
    CHECK_EQ_S(cell(t, "s", 0), "x");
    CHECK_EQ_S(cell(t, "s", 1), "None"); /* text under pandas 1.5 (2.0 made it NA) */
    CHECK(tl_table_is_missing(t, 3, 2));
    CHECK(tl_table_is_missing(t, 3, 3));
    CHECK_EQ_I(col_type(t, "na"), TL_F64); /* all NA: float NaN */
    CHECK_EQ_I(col_type(t, "e"), TL_F64);
    CHECK_EQ_I(col_type(t, "m"), TL_STR);
    CHECK_EQ_S(cell(t, "m", 0), "1"); /* text stays text in a mixed column */
    CHECK_EQ_S(t->cols[7].name, "dup");
    CHECK_EQ_S(t->cols[8].name, "dup.1");
    CHECK_EQ_S(t->cols[9].name, "Unnamed: 9");
    CHECK_EQ_S(cell(t, "dup", 1), "multi\r\nline");
    CHECK_EQ_I(col_type(t, "big"), TL_F64);
    CHECK_EQ_S(cell(t, "big", 0), "1e+20");
    CHECK_EQ_I(col_type(t, "x"), TL_F64);
    CHECK_EQ_S(cell(t, "x", 0), "100000.0");
    CHECK_EQ_S(cell(t, "x", 1), "inf");
    CHECK_EQ_S(cell(t, "x", 2), "-inf");
    CHECK_EQ_S(cell(t, "x", 3), "5.0");
    tl_table_free(t);

    static const char txt[] = "a,b\n0x10,1_000\n1e,--1\n";
    CHECK_EQ_I(tl_report_csv_read_mem(txt, sizeof txt - 1, "t", 0, &t, &err), 0);
    if (t) {
        CHECK_EQ_I(col_type(t, "a"), TL_STR);
        CHECK_EQ_I(col_type(t, "b"), TL_STR);
        tl_table_free(t);
    }
    /* short rows are padded; long rows and open quotes are errors */
    static const char shortrow[] = "a,b,c\n1\n2,3,4";
    CHECK_EQ_I(tl_report_csv_read_mem(shortrow, sizeof shortrow - 1, "t", 0, &t, &err), 0);
    if (t) {
        CHECK_EQ_I(t->nrows, 2);
        CHECK_EQ_I(col_type(t, "b"), TL_F64);
        CHECK_EQ_S(cell(t, "c", 1), "4.0");
        tl_table_free(t);
    }
    static const char longrow[] = "a,b\n1,2\n1,2,3\n";
    CHECK_EQ_I(tl_report_csv_read_mem(longrow, sizeof longrow - 1, "t", 0, &t, &err), TL_EFORMAT);
    CHECK(strstr(err.msg, "line 3") != NULL);
    static const char open[] = "a,b\n1,\"2\n";
    CHECK_EQ_I(tl_report_csv_read_mem(open, sizeof open - 1, "t", 0, &t, &err), TL_EFORMAT);
    CHECK(strstr(err.msg, "unterminated") != NULL);
    CHECK(tl_report_csv_read("/nonexistent/x.csv", 0, &t, &err) == TL_EIO);
}

/* ---- every reference CSV */
static TL_VEC(char *) ref_csvs;

static int collect_csv(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    size_t n = strlen(path);
    if (flag == FTW_F && n > 4 && strcmp(path + n - 4, ".csv") == 0) tl_vec_push(&ref_csvs, tl_xstrdup(path));
    return 0;
}

static int is_pandas_na(const char *s)
{
    static const char *const na[] = {"#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan",
                                     "1.#IND", "1.#QNAN", "<NA>", "N/A", "NA", "NULL", "NaN", "n/a",
                                     "nan", "null"}; /* pandas 1.5 */
    for (size_t i = 0; i < sizeof na / sizeof *na; i++)
        if (!strcmp(s, na[i])) return 1;
    return 0;
}

static void test_reference_csvs(const char *data)
{
    nftw(data, collect_csv, 16, FTW_PHYS);
    CHECK(ref_csvs.n >= 200);
    size_t na_cells = 0;
    for (size_t i = 0; i < ref_csvs.n; i++) {
        const char *p = ref_csvs.v[i];
        tl_err err = {0};
        tl_table *raw = NULL, *t = NULL;
        int rc1 = tl_report_csv_read(p, TL_READ_RAW, &raw, &err);
        if (rc1) fprintf(stderr, "%s\n", err.msg);
        int rc2 = tl_report_csv_read(p, 0, &t, &err);
        if (rc2) fprintf(stderr, "%s\n", err.msg);
        CHECK_EQ_I(rc1, 0);
        CHECK_EQ_I(rc2, 0);
        if (rc1 || rc2) {
            tl_table_free(raw);
            tl_table_free(t);
            continue;
        }
        /* raw text written back is the file, byte for byte */
        size_t n, bn;
        char *orig = tl_test_slurp(p, &n), *buf;
        FILE *m = open_memstream(&buf, &bn);
        tl_report_csv_write_fp(raw, m, &err);
        fclose(m);
        int same = bn == n && memcmp(buf, orig, n) == 0;
        if (!same) fprintf(stderr, "raw round trip differs: %s\n", p);
        CHECK(same);
        free(buf);
        free(orig);
        /* typed cells print as the reference text, except pandas' NA strings */
        CHECK_EQ_I(t->ncols, raw->ncols);
        CHECK_EQ_I(t->nrows, raw->nrows);
        int bad = 0;
        for (size_t c = 0; c < t->ncols && c < raw->ncols && !bad; c++) {
            for (size_t r = 0; r < t->nrows && !bad; r++) {
                char b1[64], b2[64];
                const char *a = tl_table_cell_text(t, c, r, b1, sizeof b1);
                const char *e = tl_table_cell_text(raw, c, r, b2, sizeof b2);
                if (!strcmp(a, e)) continue;
                if (!*a && is_pandas_na(e)) {
                    na_cells++;
                    continue;
                }
                fprintf(stderr, "%s row %zu col '%s': typed '%s' vs text '%s'\n", p, r, t->cols[c].name, a, e);
                bad = 1;
            }
        }
        CHECK(!bad);
        tl_table_free(raw);
        tl_table_free(t);
    }
    CHECK(na_cells > 0); /* "NA"/"nan" cells exist in the references */
    for (size_t i = 0; i < ref_csvs.n; i++) free(ref_csvs.v[i]);
    tl_vec_free(&ref_csvs);

    /* a CSV folder in sorted stem order */
    const char *dir = tl_test_data("kineto/mi210/gpu_only_trace/gpu_only_trace_perf_report_csvs");
    tl_report_tables l = {0};
    tl_err err = {0};
    CHECK(dir && tl_report_read(dir, 0, &l, &err) == 0);
    CHECK_EQ_I(l.n, 4);
    if (l.n == 4) {
        CHECK_EQ_S(l.v[0]->name, "gpu_timeline");
        CHECK_EQ_S(l.v[3]->name, "short_kernels_summary");
        tl_table *g = tl_report_tables_find(&l, "gpu_timeline");
        CHECK(g && !strcmp(cell(g, "time ms", 0), "5.3433701171875"));
        CHECK(g && !strcmp(cell(g, "percent", 4), "10.638556749285605"));
    }
    tl_report_tables_free(&l);
}

/* ---- xlsx */
static char *zip_part(const char *xlsx, const char *part)
{
    int e;
    zip_t *z = zip_open(xlsx, ZIP_RDONLY, &e);
    if (!z) return NULL;
    zip_stat_t st;
    char *out = NULL;
    if (zip_stat(z, part, 0, &st) == 0) {
        zip_file_t *f = zip_fopen(z, part, 0);
        out = tl_xcalloc(st.size + 1, 1);
        if (f) {
            zip_fread(f, out, st.size);
            zip_fclose(f);
        }
    }
    zip_discard(z);
    return out;
}

static tl_table *timeline_table(void)
{
    static const char *types[] = {"computation_time", "exposed_comm_time", "exposed_memcpy_time", "busy_time",
                                  "idle_time",        "total_time",        "total_comm_time",     "total_memcpy_time"};
    static const double ms[] = {5.3433701171875, 0.0, 0.0, 5.3433701171875, 0.6361328125, 5.9795029296875, 0.0, 0.0};
    tl_table *t = tl_table_new("gpu_timeline");
    tl_table_add_col(t, "type", TL_STR);
    tl_table_add_col(t, "time ms", TL_F64);
    tl_table_add_col(t, "percent", TL_F64);
    for (size_t r = 0; r < 8; r++) {
        tl_table_add_row(t);
        tl_table_set_str(t, 0, r, types[r]);
        tl_table_set_f64(t, 1, r, ms[r]);
        tl_table_set_f64(t, 2, r, ms[r] / 5.9795029296875 * 100);
    }
    return t;
}

static tl_table *named_table(const char *name, int seed)
{
    tl_table *t = tl_table_new(name);
    tl_table_add_col(t, "name", TL_STR);
    tl_table_add_col(t, "seed", TL_I64);
    tl_table_add_row(t);
    tl_table_set_str(t, 0, 0, name);
    tl_table_set_i64(t, 1, 0, seed);
    return t;
}

static tl_table *typed_table(void)
{
    tl_table *t = tl_table_new("typed");
    size_t s = tl_table_add_col(t, "Kernel name", TL_STR);
    size_t i = tl_table_add_col(t, "Count", TL_I64);
    size_t f = tl_table_add_col(t, "Kernel Time (µs)_sum", TL_F64);
    size_t b = tl_table_add_col(t, "flag", TL_BOOL);
    size_t h = tl_table_add_col(t, "Kernel Time (µs)_std", TL_F64);
    size_t x = tl_table_add_col(t, "FLOPS/Byte", TL_F64);
    size_t y = tl_table_add_col(t, "TFLOPS/s", TL_F64);
    t->cols[h].hidden = 1;
    static const char *names[] = {"gemm_kernel<float, 128>", "µkernel 日本", "", ("bad\x01" "ctl\xff"), "x,y\n\"z\""};
    for (size_t r = 0; r < 5; r++) {
        tl_table_add_row(t);
        if (r != 2) tl_table_set_str(t, s, r, names[r]);
        if (r != 1) tl_table_set_i64(t, i, r, (int64_t)r * 1000 - 1);
        tl_table_set_f64(t, f, r, r == 3 ? INFINITY : 0.1 * (double)r + 1e-05);
        if (r != 4) tl_table_set_bool(t, b, r, r & 1);
        tl_table_set_f64(t, h, r, (double)r);
        tl_table_set_f64(t, x, r, pow(10, (double)r - 1));
        tl_table_set_f64(t, y, r, 3.0 * pow(10, (double)r * 0.5));
    }
    /* one cell longer than Excel's 32,767 characters */
    tl_table_add_row(t);
    char *big = tl_xmalloc(40001);
    memset(big, 'k', 40000);
    big[40000] = 0;
    tl_table_set_str(t, s, 5, big);
    free(big);
    tl_table_set_f64(t, x, 5, 50);
    tl_table_set_f64(t, y, 5, 90);
    return t;
}

/* Builds the sample workbook (without charts the writer refuses them);
 * returns the number of visible sheets. */
static size_t write_sample(const char *path, int charts, int with_big, tl_report_tables *src)
{
    tl_err err = {0};
    tl_xlsx_opts o = {0};
    o.charts = charts;
    o.max_rows = 8;
    o.quiet = 1;
    tl_xlsx *x = NULL;
    CHECK_EQ_I(tl_report_xlsx_open(path, &o, &x, &err), 0);
    if (!x) return 0;
    tl_vec_push(src, timeline_table());
    tl_vec_push(src, typed_table());
    tl_vec_push(src, named_table("unified_perf_summary_only_baseline_mi300", 1));
    tl_vec_push(src, named_table("unified_perf_summary_only_baseline_h100", 2));
    tl_vec_push(src, named_table("Unified_perf_summary_only_baseline_b200", 3)); /* Excel ignores case */
    tl_vec_push(src, named_table("ops_unique_args_only_baseline_h100", 4));
    tl_vec_push(src, named_table("ops_unique_args_only_baseline_h200", 5));
    tl_vec_push(src, named_table("a/b:c*d?[e]\\f", 6));
    tl_vec_push(src, tl_table_new("no_columns"));
    tl_table *hdr = tl_table_new("header_only");
    tl_table_add_col(hdr, "a", TL_F64);
    tl_table_add_col(hdr, "b", TL_STR);
    tl_vec_push(src, hdr);
    tl_table *big = tl_table_new("big");
    tl_table_add_col(big, "v", TL_I64);
    for (int r = 0; r < 9; r++) tl_table_set_i64(big, 0, tl_table_add_row(big), r);
    if (with_big) tl_vec_push(src, big);
    else tl_table_free(big);
    static const char *want[] = {"gpu_timeline",
                                 "typed",
                                 "unified_perf_summary_only_basel",
                                 "unified_perf_summary_only_bas_2",
                                 "Unified_perf_summary_only_bas_3",
                                 "ops_unique_args_only_baseline_h",
                                 "ops_unique_args_only_baseline_2",
                                 "a_b_c_d__e__f",
                                 "no_columns",
                                 "header_only",
                                 NULL};
    for (size_t i = 0; i < src->n; i++) {
        const char *name = NULL;
        CHECK_EQ_I(tl_report_xlsx_add_table(x, src->v[i], &name, &err), 0);
        if (want[i]) CHECK_EQ_S(name, want[i]);
        else CHECK(name == NULL); /* "big" went to CSV */
    }
    CHECK_EQ_S(tl_report_xlsx_sheet_name(x, "unified_perf_summary_only_baseline_h100"),
               "unified_perf_summary_only_bas_2");
    CHECK(tl_report_xlsx_sheet_name(x, "big") == NULL);

    tl_chart_spec bar = {0};
    if (!charts) {
        bar.sheet = "gpu_timeline";
        CHECK_EQ_I(tl_report_xlsx_add_chart(x, &bar, &err), TL_EUSAGE);
        int rc = tl_report_xlsx_close(x, &err);
        if (rc) fprintf(stderr, "%s\n", err.msg);
        CHECK_EQ_I(rc, 0);
        return 10;
    }
    bar.kind = TL_CHART_BAR;
    bar.sheet = "gpu_timeline";
    bar.label_col = 0;
    bar.value_col = 1;
    bar.nrows = 5;
    bar.title = "GPU timeline";
    bar.x_title = "category";
    bar.y_title = "time (ms)";
    bar.anchor_col = -1;
    CHECK_EQ_I(tl_report_xlsx_add_chart(x, &bar, &err), 0);
    tl_chart_spec pie = bar;
    pie.kind = TL_CHART_PIE;
    pie.anchor_row = 18;
    CHECK_EQ_I(tl_report_xlsx_add_chart(x, &pie, &err), 0);
    double mx[] = {0.01, 100, 10000}, my[] = {0.05, 500, 500};
    double cx[] = {0.01, 1e4}, cy[] = {300, 300};
    tl_xy_series roofs[] = {{"memory roof", mx, my, 2}, {"compute roof", cx, cy, 2}};
    tl_scatter_spec sc = {0};
    sc.sheet = "typed";
    sc.x_col = 5;
    sc.y_col = 6;
    sc.lines = roofs;
    sc.nlines = 2;
    sc.title = "Roofline";
    sc.x_title = "FLOPS/Byte";
    sc.y_title = "TFLOPS/s";
    sc.anchor_col = -1;
    CHECK_EQ_I(tl_report_xlsx_add_scatter(x, &sc, &err), 0);
    /* charts on a sheet that went to CSV are skipped, unknown sheets fail */
    tl_chart_spec none = bar;
    none.sheet = "big";
    CHECK_EQ_I(tl_report_xlsx_add_chart(x, &none, &err), with_big ? 0 : TL_ENOTFOUND);
    none.sheet = "nope";
    CHECK_EQ_I(tl_report_xlsx_add_chart(x, &none, &err), TL_ENOTFOUND);
    none.sheet = "gpu_timeline";
    none.value_col = 9;
    CHECK_EQ_I(tl_report_xlsx_add_chart(x, &none, &err), TL_EUSAGE);
    int rc = tl_report_xlsx_close(x, &err);
    if (rc) fprintf(stderr, "%s\n", err.msg);
    CHECK_EQ_I(rc, 0);
    return 10;
}

static int num_close(double a, double b)
{
    if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
    if (isinf(a) || isinf(b)) return a == b;
    return fabs(a - b) <= 1e-12 * (fabs(b) > 1 ? fabs(b) : 1);
}

/* Cell-by-cell: numbers within 1e-12 relative (Excel keeps 15-16 digits),
 * text equal. Returns the number of differing cells (and prints the first). */
static size_t compare_tables(const tl_table *a, const tl_table *b, const char *what)
{
    size_t bad = 0;
    if (a->ncols != b->ncols || a->nrows != b->nrows) {
        fprintf(stderr, "%s: shape %zux%zu vs %zux%zu\n", what, a->nrows, a->ncols, b->nrows, b->ncols);
        return 1;
    }
    for (size_t c = 0; c < a->ncols; c++) {
        if (strcmp(a->cols[c].name, b->cols[c].name)) {
            if (!bad++) fprintf(stderr, "%s: column %zu '%s' vs '%s'\n", what, c, a->cols[c].name, b->cols[c].name);
            continue;
        }
        int an = a->cols[c].type != TL_STR, bn = b->cols[c].type != TL_STR;
        for (size_t r = 0; r < a->nrows; r++) {
            int ok;
            if (an && bn) ok = num_close(tl_table_num(a, c, r), tl_table_num(b, c, r));
            else {
                char b1[64], b2[64];
                ok = !strcmp(tl_table_cell_text(a, c, r, b1, 64), tl_table_cell_text(b, c, r, b2, 64));
            }
            if (!ok && !bad++) {
                char b1[64], b2[64];
                fprintf(stderr, "%s: row %zu col '%s': '%.60s' vs '%.60s'\n", what, r, a->cols[c].name,
                        tl_table_cell_text(a, c, r, b1, 64), tl_table_cell_text(b, c, r, b2, 64));
            }
        }
    }
    return bad;
}

static void test_xlsx_roundtrip(int charts)
{
    tl_err err = {0};
    const char *path = tmp_path(!charts ? "sample_fast.xlsx" : "sample.xlsx");
    tl_report_tables src = {0}, got = {0};
    write_sample(path, charts, 1, &src);
    CHECK(no_tmp_left());
    int rc = tl_report_xlsx_read(path, 0, &got, &err);
    if (rc) fprintf(stderr, "%s\n", err.msg);
    CHECK_EQ_I(rc, 0);
    CHECK_EQ_I(got.n, 10); /* the hidden chart-data sheet is skipped */
    if (got.n == 10) {
        CHECK_EQ_S(got.v[3]->name, "unified_perf_summary_only_bas_2");
        CHECK_EQ_S(cell(got.v[3], "name", 0), "unified_perf_summary_only_baseline_h100");
        CHECK_EQ_S(cell(got.v[4], "name", 0), "Unified_perf_summary_only_baseline_b200");
        CHECK_EQ_S(cell(got.v[6], "seed", 0), "5");
        CHECK_EQ_I(compare_tables(got.v[0], src.v[0], "gpu_timeline"), 0);
        CHECK_EQ_I(got.v[8]->ncols, 0);
        CHECK_EQ_I(got.v[9]->ncols, 2);
        CHECK_EQ_I(got.v[9]->nrows, 0);
        const tl_table *t = got.v[1];
        CHECK_EQ_I(t->nrows, 6);
        CHECK_EQ_S(cell(t, "Kernel name", 0), "gemm_kernel<float, 128>");
        CHECK_EQ_S(cell(t, "Kernel name", 1), "µkernel 日本");
        CHECK_EQ_S(cell(t, "Kernel name", 2), "");
        CHECK_EQ_S(cell(t, "Kernel name", 3), "bad\xef\xbf\xbd" "ctl\xef\xbf\xbd");
        CHECK_EQ_S(cell(t, "Kernel name", 4), "x,y\n\"z\"");
        CHECK_EQ_I(strlen(cell(t, "Kernel name", 5)) >= 63, 1);
        long kc = tl_table_col(t, "Kernel name");
        CHECK(kc >= 0 && strlen(t->cols[kc].v.s[5]) == 32767);
        CHECK_EQ_I(col_type(t, "Count"), TL_F64); /* int with a hole: float, like pandas */
        CHECK_EQ_S(cell(t, "Count", 2), "1999.0");
        CHECK_EQ_S(cell(t, "Kernel Time (µs)_sum", 3), "inf");
        CHECK_EQ_S(cell(t, "Kernel Time (µs)_sum", 1), "0.10001");
        CHECK_EQ_I(col_type(t, "flag"), TL_BOOL);
        CHECK_EQ_S(cell(t, "flag", 1), "True");
        CHECK_EQ_S(cell(t, "flag", 4), "");
        CHECK_EQ_I(col_type(t, "Kernel Time (µs)_std"), TL_F64); /* 0..4 then empty */
    }
    tl_report_tables_free(&got);
    /* hidden sheet on request, and the hidden column in the sheet XML */
    CHECK_EQ_I(tl_report_xlsx_read(path, TL_READ_ALL_SHEETS, &got, &err), 0);
    CHECK_EQ_I(got.n, charts ? 11 : 10);
    CHECK((tl_report_tables_find(&got, "_chart_data") != NULL) == charts);
    tl_report_tables_free(&got);
    char *xml = zip_part(path, "xl/worksheets/sheet2.xml");
    CHECK(xml && strstr(xml, "<col min=\"5\" max=\"5\"") && strstr(xml, "hidden=\"1\""));
    CHECK(xml && strstr(xml, "<pane ySplit=\"1\"") != NULL);
    free(xml);
    if (charts) {
        xml = zip_part(path, "xl/charts/chart3.xml");
        CHECK(xml && strstr(xml, "<c:logBase val=\"10\"/>") != NULL);
        CHECK(xml && strstr(xml, "<c:f>'_chart_data'!$A$2:$A$3</c:f>") != NULL);
        free(xml);
        xml = zip_part(path, "xl/charts/chart2.xml");
        CHECK(xml && strstr(xml, "<c:pieChart>") && strstr(xml, "<c:f>'gpu_timeline'!$B$2:$B$6</c:f>"));
        free(xml);
        /* sheet 1 -> drawing 1 -> its two charts, 480 x 288 pixels from
         * two columns right of the table (default 64-pixel columns) */
        xml = zip_part(path, "xl/worksheets/sheet1.xml");
        CHECK(xml && strstr(xml, "<drawing r:id=\"rId1\"/></worksheet>") != NULL);
        free(xml);
        xml = zip_part(path, "xl/drawings/drawing1.xml");
        CHECK(xml && strstr(xml, "<xdr:to><xdr:col>11</xdr:col><xdr:colOff>304800</xdr:colOff><xdr:row>15</xdr:row>"));
        CHECK(xml && strstr(xml, "r:id=\"rId2\"") != NULL);
        free(xml);
        xml = zip_part(path, "xl/drawings/_rels/drawing1.xml.rels");
        CHECK(xml && strstr(xml, "Target=\"../charts/chart2.xml\"") != NULL);
        free(xml);
    }
    /* the oversized sheet went beside the workbook */
    const char *csv = tmp_path(!charts ? "sample_fast_big.csv" : "sample_big.csv");
    tl_table *b = NULL;
    CHECK_EQ_I(tl_report_csv_read(csv, 0, &b, &err), 0);
    CHECK(b && b->nrows == 9);
    tl_table_free(b);
    tl_report_tables_free(&src);
}

static void test_xlsx_misc(void)
{
    tl_err err = {0};
    char out[128];
    tl_report_sheet_name_clean("", out);
    CHECK_EQ_S(out, "Sheet");
    tl_report_sheet_name_clean("'quoted'", out);
    CHECK_EQ_S(out, "_quoted_");
    tl_report_sheet_name_clean("history", out);
    CHECK_EQ_S(out, "History_");
    /* 40 two-byte characters: cut at 31 characters, not bytes */
    char mu[128] = "";
    for (int i = 0; i < 40; i++) strcat(mu, "µ");
    tl_report_sheet_name_clean(mu, out);
    CHECK_EQ_I(strlen(out), 62);
    tl_xlsx *x = NULL;
    CHECK(tl_report_xlsx_open("/nonexistent/dir/x.xlsx", NULL, &x, &err) == TL_EIO);
    /* discard leaves no file */
    const char *p = tmp_path("discard.xlsx");
    CHECK_EQ_I(tl_report_xlsx_open(p, NULL, &x, &err), 0);
    tl_table *t = timeline_table();
    CHECK_EQ_I(tl_report_xlsx_add_table(x, t, NULL, &err), 0);
    tl_report_xlsx_discard(x);
    CHECK(access(p, F_OK) != 0);
    CHECK(no_tmp_left());
    /* the convenience writer, and a workbook whose only table went to CSV */
    p = tmp_path("one.xlsx");
    tl_xlsx_opts o = {0};
    o.max_rows = 3;
    o.quiet = 1;
    CHECK_EQ_I(tl_report_xlsx_write(p, &t, 1, &o, &err), 0);
    tl_report_tables l = {0};
    CHECK_EQ_I(tl_report_read(p, 0, &l, &err), 0);
    CHECK_EQ_I(l.n, 1);
    if (l.n == 1) CHECK_EQ_I(l.v[0]->ncols, 0); /* Excel's required empty sheet */
    tl_report_tables_free(&l);
    CHECK(access(tmp_path("one_gpu_timeline.csv"), F_OK) == 0);
    tl_table_free(t);
    /* garbage is a clean error */
    p = tmp_path("bad.xlsx");
    FILE *f = fopen(p, "w");
    fputs("PK\x03\x04 not really a zip", f);
    fclose(f);
    CHECK(tl_report_read(p, 0, &l, &err) != 0);
    CHECK_EQ_I(l.n, 0);
}

/* A scatter with lines on a workbook whose sheet list is full (16
 * sheets, the list's first capacity): adding the hidden data sheet for the
 * lines moves the list, and the chart still lands on its sheet (ASan:
 * no read of the moved list). */
static void test_xlsx_scatter_full_list(void)
{
    tl_err err = {0};
    tl_xlsx_opts o = {0};
    o.charts = 1;
    o.quiet = 1;
    tl_xlsx *x = NULL;
    const char *p = tmp_path("scatter16.xlsx");
    CHECK_EQ_I(tl_report_xlsx_open(p, &o, &x, &err), 0);
    if (!x) return;
    tl_report_tables src = {0};
    tl_vec_push(&src, typed_table());
    char nm[32];
    for (int i = 1; i < 16; i++) {
        snprintf(nm, sizeof nm, "sheet_%d", i);
        tl_vec_push(&src, named_table(nm, i));
    }
    for (size_t i = 0; i < src.n; i++) CHECK_EQ_I(tl_report_xlsx_add_table(x, src.v[i], NULL, &err), 0);
    double mx[] = {0.01, 100}, my[] = {0.05, 500};
    tl_xy_series roof = {"memory roof", mx, my, 2};
    tl_scatter_spec sc = {0};
    sc.sheet = "typed";
    sc.x_col = 5;
    sc.y_col = 6;
    sc.lines = &roof;
    sc.nlines = 1;
    sc.title = "Roofline";
    sc.anchor_col = -1;
    CHECK_EQ_I(tl_report_xlsx_add_scatter(x, &sc, &err), 0);
    int rc = tl_report_xlsx_close(x, &err);
    if (rc) fprintf(stderr, "%s\n", err.msg);
    CHECK_EQ_I(rc, 0);
    tl_report_tables back = {0};
    CHECK_EQ_I(tl_report_read(p, 0, &back, &err), 0);
    CHECK_EQ_I(back.n, 16); /* the data sheet is hidden */
    tl_report_tables_free(&back);
    tl_report_tables_free(&src);
}

/* A hand-made package exercising what our writer never produces: a
 * renamed workbook part found through _rels/.rels, absolute targets, a
 * prefixed main namespace, rich-text shared strings with phonetic runs,
 * cells without r attributes, formula/error/boolean cells, "5.0" numbers,
 * a hidden sheet and a chartsheet. */
static void add_part(zip_t *z, const char *name, const char *text)
{
    zip_source_t *src = zip_source_buffer(z, text, strlen(text), 0);
    CHECK(src && zip_file_add(z, name, src, ZIP_FL_OVERWRITE) >= 0);
}

static void test_xlsx_handmade(void)
{
    const char *path = tmp_path("hand.xlsx");
    int e;
    zip_t *z = zip_open(path, ZIP_CREATE | ZIP_TRUNCATE, &e);
    CHECK(z != NULL);
    if (!z) return;
    add_part(z, "_rels/.rels",
             "<?xml version=\"1.0\"?><Relationships xmlns=\"http://schemas.openxmlformats.org/package/2006/"
             "relationships\"><Relationship Id=\"rId1\" Type=\"http://schemas.openxmlformats.org/officeDocument/"
             "2006/relationships/officeDocument\" Target=\"xl/wb.xml\"/></Relationships>");
    add_part(z, "xl/wb.xml",
             "<x:workbook xmlns:x=\"http://schemas.openxmlformats.org/spreadsheetml/2006/main\" "
             "xmlns:rel=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships\"><x:sheets>"
             "<x:sheet name=\"Chart\" sheetId=\"3\" rel:id=\"rId9\"/>"
             "<x:sheet name=\"Data &amp; more\" sheetId=\"1\" rel:id=\"rId7\"/>"
             "<x:sheet name=\"Secret\" sheetId=\"2\" state=\"hidden\" rel:id=\"rId10\"/>"
             "</x:sheets></x:workbook>");
    add_part(z, "xl/_rels/wb.xml.rels",
             "<Relationships xmlns=\"http://schemas.openxmlformats.org/package/2006/relationships\">"
             "<Relationship Id=\"rId7\" Type=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships/"
             "worksheet\" Target=\"/xl/worksheets/data.xml\"/>"
             "<Relationship Id=\"rId10\" Type=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships/"
             "worksheet\" Target=\"worksheets/../worksheets/secret.xml\"/>"
             "<Relationship Id=\"rId8\" Type=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships/"
             "sharedStrings\" Target=\"strings.xml\"/>"
             "<Relationship Id=\"rId9\" Type=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships/"
             "chartsheet\" Target=\"chartsheets/sheet1.xml\"/></Relationships>");
    add_part(z, "xl/strings.xml",
             "<sst xmlns=\"http://schemas.openxmlformats.org/spreadsheetml/2006/main\">"
             "<si><t>name</t></si>"
             "<si><r><t>Kernel </t></r><r><rPr><b/></rPr><t xml:space=\"preserve\">Time (µs)</t></r>"
             "<rPh sb=\"0\" eb=\"1\"><t>PHONETIC</t></rPh></si>"
             "<si><t>aten::mm &lt;x&gt;</t></si><si><t>flag</t></si><si><t>err</t></si><si><t>f</t></si>"
             "</sst>");
    add_part(z, "xl/worksheets/data.xml",
             "<worksheet xmlns=\"http://schemas.openxmlformats.org/spreadsheetml/2006/main\"><sheetData>"
             "<row r=\"1\"><c r=\"A1\" t=\"s\"><v>0</v></c><c r=\"B1\" t=\"s\"><v>1</v></c><c t=\"s\"><v>3</v></c>"
             "<c t=\"s\"><v>4</v></c><c t=\"s\"><v>5</v></c></row>"
             "<row><c t=\"s\"><v>2</v></c><c><v>5.0</v></c><c t=\"b\"><v>1</v></c><c t=\"e\"><v>#N/A</v></c>"
             "<c t=\"str\"><f>A1&amp;\"x\"</f><v>namex</v></c></row>"
             "<row r=\"4\"><c r=\"A4\" t=\"inlineStr\"><is><t>inline</t></is></c><c r=\"B4\"><v>1E-05</v></c>"
             "<c r=\"C4\" t=\"b\"><v>0</v></c><c r=\"D4\" t=\"e\"><v>#DIV/0!</v></c></row>"
             "<row r=\"6\"><c r=\"A6\" t=\"inlineStr\"><is><t></t></is></c></row>"
             "</sheetData></worksheet>");
    add_part(z, "xl/worksheets/secret.xml",
             "<worksheet xmlns=\"http://schemas.openxmlformats.org/spreadsheetml/2006/main\"><sheetData>"
             "<row r=\"1\"><c r=\"A1\" t=\"inlineStr\"><is><t>k</t></is></c></row></sheetData></worksheet>");
    CHECK(zip_close(z) == 0);

    tl_err err = {0};
    tl_report_tables l = {0};
    int rc = tl_report_xlsx_read(path, 0, &l, &err);
    if (rc) fprintf(stderr, "%s\n", err.msg);
    CHECK_EQ_I(rc, 0);
    CHECK_EQ_I(l.n, 1);
    if (l.n == 1) {
        const tl_table *t = l.v[0];
        CHECK_EQ_S(t->name, "Data & more");
        CHECK_EQ_I(t->ncols, 5);
        CHECK_EQ_I(t->nrows, 3); /* rows 2..4 (row 3 empty); the empty row 6 is trimmed */
        CHECK_EQ_S(t->cols[1].name, "Kernel Time (µs)");
        CHECK_EQ_S(cell(t, "name", 0), "aten::mm <x>");
        CHECK_EQ_S(cell(t, "name", 1), "");
        CHECK_EQ_S(cell(t, "name", 2), "inline");
        CHECK_EQ_I(col_type(t, "Kernel Time (µs)"), TL_F64);
        CHECK_EQ_S(cell(t, "Kernel Time (µs)", 0), "5.0");
        CHECK_EQ_S(cell(t, "Kernel Time (µs)", 2), "1e-05");
        CHECK_EQ_I(col_type(t, "flag"), TL_BOOL);
        CHECK_EQ_S(cell(t, "flag", 0), "True");
        CHECK_EQ_S(cell(t, "flag", 2), "False");
        CHECK_EQ_I(col_type(t, "err"), TL_STR);
        CHECK_EQ_S(cell(t, "err", 0), ""); /* #N/A is an NA string */
        CHECK_EQ_S(cell(t, "err", 2), "#DIV/0!");
        CHECK_EQ_S(cell(t, "f", 0), "namex");
    }
    tl_report_tables_free(&l);
    CHECK_EQ_I(tl_report_xlsx_read(path, TL_READ_ALL_SHEETS, &l, &err), 0);
    CHECK_EQ_I(l.n, 2);
    if (l.n == 2) CHECK_EQ_S(l.v[1]->name, "Secret");
    tl_report_tables_free(&l);
    /* a workbook part that is not XML: clean error naming the part */
    z = zip_open(path, 0, &e);
    add_part(z, "xl/worksheets/data.xml", "<worksheet><sheetData><row><c></row>");
    zip_close(z);
    CHECK(tl_report_xlsx_read(path, 0, &l, &err) == TL_EFORMAT);
    CHECK(strstr(err.msg, "data.xml") != NULL);
    tl_report_tables_free(&l);
}

static void test_reference_xlsx(void)
{
    tl_err err = {0};
    const char *xp = tl_test_data("kineto/mi210/gpu_only_trace/gpu_only_trace_perf_report.xlsx");
    tl_report_tables x = {0}, c = {0};
    CHECK(xp && tl_report_xlsx_read(xp, 0, &x, &err) == 0);
    const char *cp = tl_test_data("kineto/mi210/gpu_only_trace/gpu_only_trace_perf_report_csvs");
    CHECK(cp && tl_report_csv_read_dir(cp, 0, &c, &err) == 0);
    CHECK_EQ_I(x.n, 4);
    static const char *order[] = {"gpu_timeline", "kernel_summary", "short_kernel_histogram", "short_kernels_summary"};
    for (size_t i = 0; i < x.n && i < 4; i++) {
        CHECK_EQ_S(x.v[i]->name, order[i]);
        tl_table *ref = tl_report_tables_find(&c, x.v[i]->name);
        CHECK(ref != NULL);
        if (ref && i == 3 && x.v[i]->nrows == ref->nrows && ref->nrows > 23) {
            /* the reference's workbook and CSV were sorted separately and
             * two tied kernels (3.679 µs each) came out swapped */
            CHECK_EQ_S(cell(x.v[i], "Kernel name", 22), cell(ref, "Kernel name", 23));
            size_t *perm = tl_xmalloc(ref->nrows * sizeof *perm);
            for (size_t r = 0; r < ref->nrows; r++) perm[r] = r == 22 ? 23 : r == 23 ? 22 : r;
            tl_table_permute(x.v[i], perm, ref->nrows);
            free(perm);
        }
        if (ref) CHECK_EQ_I(compare_tables(x.v[i], ref, x.v[i]->name), 0);
    }
    tl_report_tables_free(&x);
    tl_report_tables_free(&c);

    xp = tl_test_data("inference/vllm_decode_full/graph_execution_perf_report.xlsx");
    CHECK(xp && tl_report_read(xp, 0, &x, &err) == 0);
    static const char *vorder[] = {"gpu_timeline", "ops_summary_by_category", "ops_summary", "ops_unique_args",
                                   "unified_perf_callstacks", "unified_perf_summary", "GEMM", "UnaryElementwise"};
    CHECK_EQ_I(x.n, 8);
    for (size_t i = 0; i < x.n && i < 8; i++) CHECK_EQ_S(x.v[i]->name, vorder[i]);
    /* this workbook and perf_csvs/ come from different runs; gpu_timeline agrees */
    tl_table *ref = NULL;
    cp = tl_test_data("inference/vllm_decode_full/perf_csvs/gpu_timeline.csv");
    CHECK(cp && tl_report_csv_read(cp, 0, &ref, &err) == 0);
    tl_table *g = tl_report_tables_find(&x, "gpu_timeline");
    CHECK(g && ref && compare_tables(g, ref, "vllm gpu_timeline") == 0);
    tl_table_free(ref);
    tl_table *ua = tl_report_tables_find(&x, "ops_unique_args");
    CHECK(ua != NULL);
    if (ua) {
        CHECK_EQ_S(cell(ua, "name", 0), "hipGraphLaunch");
        CHECK_EQ_I(col_type(ua, "num_kernels"), TL_I64);
        CHECK_EQ_S(cell(ua, "num_kernels", 0), "421");
        CHECK_EQ_S(cell(ua, "total_direct_kernel_time_mean", 0), "10388.4716796875");
        CHECK_EQ_S(cell(ua, "Input Dims", 0), "");
    }
    tl_table *gm = tl_report_tables_find(&x, "GEMM");
    CHECK(gm != NULL);
    if (gm) {
        /* numbers stored as text cells become numbers, "nan" text becomes NaN */
        CHECK_EQ_I(col_type(gm, "param: M"), TL_I64);
        CHECK_EQ_S(cell(gm, "param: N", 0), "201088");
        CHECK_EQ_S(cell(gm, "param: stride_A", 0), "");
        CHECK_EQ_S(cell(gm, "param: stride_A", 1), "(2880, 1)");
        CHECK_EQ_I(col_type(gm, "param: bias"), TL_BOOL);
        CHECK_EQ_S(cell(gm, "Kernel Time (µs)_sum", 0), "276.677734375");
        CHECK_EQ_S(cell(gm, "TB/s_std", 0), "");
        CHECK_EQ_S(cell(gm, "Input Dims_first", 1), "[[32, 2880], [2880, 201088]]");
    }
    tl_report_tables_free(&x);
}

/* ---- terminal */
static void test_term(void)
{
    tl_table *t = tl_table_new("ops");
    tl_table_add_col(t, "name", TL_STR);
    tl_table_add_col(t, "Kernel Time (µs)", TL_F64);
    tl_table_add_col(t, "n", TL_I64);
    tl_table_add_col(t, "ok", TL_BOOL);
    static const char *names[] = {"aten::mm", "µop", "a very long kernel name that goes on and on forever", "日本"};
    static const double v[] = {1234.5678, 0.5, 1e-07, NAN};
    for (size_t r = 0; r < 60; r++) {
        tl_table_add_row(t);
        tl_table_set_str(t, 0, r, names[r % 4]);
        tl_table_set_f64(t, 1, r, v[r % 4]);
        tl_table_set_i64(t, 2, r, (int64_t)r);
        tl_table_set_bool(t, 3, r, r & 1);
    }
    char *buf;
    size_t n;
    FILE *m = open_memstream(&buf, &n);
    tl_term_opts o = {0};
    o.max_rows = 4;
    o.max_cell = 20;
    o.title = 1;
    CHECK_EQ_I(tl_report_term_print(m, t, &o), 0);
    fclose(m);
    static const char want[] = "ops (60 rows × 4 columns)\n"
                               "name                  Kernel Time (µs)  n  ok\n"
                               "--------------------  ----------------  -  -----\n"
                               "aten::mm                      1234.568  0  False\n"
                               "µop                              0.500  1  True\n"
                               "a very long kernel …         1.000e-07  2  False\n"
                               "日本                                    3  True\n"
                               "… 56 more rows\n";
    CHECK_EQ_S(buf, want);
    free(buf);
    CHECK_EQ_I(tl_report_text_width("µs", strlen("µs")), 2);
    CHECK_EQ_I(tl_report_text_width("日本", strlen("日本")), 4);
    CHECK_EQ_I(tl_report_text_width("e\xcc\x81", 3), 1); /* e + combining acute */
    tl_table_free(t);
}

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
    return remove(p);
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/tl_render_XXXXXX");
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    test_csv_quoting();
    test_empty_sheets();
    test_inference();
    test_csv_dir();
    test_xlsx_roundtrip(0);
    test_xlsx_roundtrip(1);
    test_xlsx_misc();
    test_xlsx_scatter_full_list();
    test_xlsx_handmade();
    test_term();
    const char *out = getenv("TL_RENDER_XLSX_OUT");
    if (out && *out) {
        tl_report_tables src = {0};
        write_sample(out, 1, 0, &src);
        tl_report_tables_free(&src);
        printf("sample workbook: %s\n", out);
    }
    const char *data = tl_test_data("");
    int skipped = 0;
    if (data) {
        test_reference_csvs(data);
        test_reference_xlsx();
    } else {
        printf("test_render: ../shared/data absent: reference checks skipped\n");
        skipped = 1;
    }
    nftw(tmpdir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
    int rc = tl_test_done("test_render");
    return rc == 0 && skipped ? 77 : rc;
}
