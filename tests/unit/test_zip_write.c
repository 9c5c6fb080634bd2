/* test_zip_write.c — report/zip_write.c and the number text of
 * report/xlsx_ooxml.c: archives read back by an independent reader (libzip,
 * which checks every entry's CRC), with zip64 sizes on request and a zip64
 * directory past 65,535 entries; every double's text reads back to exactly
 * the same double; a sheet large enough to be deflated in segments is the
 * same bytes made one way (streamed, cut between segments) or the other
 * (segments made on threads, joined). */
#include "report/xlsx_ooxml.h"
#include "report/zip_write.h"
#include "query/core/table.h"
#include "tests/unit/tl_test.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zip.h>

static char *read_entry(zip_t *z, const char *name, zip_uint64_t *n)
{
    zip_stat_t st;
    if (zip_stat(z, name, 0, &st) != 0) return NULL;
    zip_file_t *f = zip_fopen(z, name, 0);
    if (!f) return NULL;
    char *out = tl_xcalloc(st.size + 1, 1);
    zip_int64_t got = zip_fread(f, out, st.size);
    char extra;
    /* reading past the end makes libzip check the CRC */
    int crc_ok = zip_fread(f, &extra, 1) == 0;
    zip_fclose(f);
    if (got != (zip_int64_t)st.size || !crc_ok) {
        free(out);
        return NULL;
    }
    *n = st.size;
    return out;
}

static void test_entries(const char *path)
{
    tl_err err = {0};
    tl_zipw *z = NULL;
    CHECK_EQ_I(tl_zipw_open(path, &z, &err), 0);
    /* 3 MB of XML-like text in uneven pieces, one with zip64 sizes, one empty */
    tl_buf big = {0};
    for (int i = 0; big.n < 3u << 20; i++) tl_buf_printf(&big, "<c r=\"A%d\"><v>%d.%03d</v></c>", i, i * 7, i % 1000);
    CHECK_EQ_I(tl_zipw_begin(z, "xl/worksheets/sheet1.xml", 0, &err), 0);
    for (size_t off = 0; off < big.n; off += 100003)
        CHECK_EQ_I(tl_zipw_write(z, big.p + off, big.n - off < 100003 ? big.n - off : 100003, &err), 0);
    CHECK_EQ_I(tl_zipw_end(z, &err), 0);
    CHECK_EQ_I(tl_zipw_begin(z, "big.xml", 1, &err), 0);
    CHECK_EQ_I(tl_zipw_write(z, big.p, big.n, &err), 0);
    CHECK_EQ_I(tl_zipw_end(z, &err), 0);
    CHECK_EQ_I(tl_zipw_begin(z, "empty", 0, &err), 0);
    CHECK_EQ_I(tl_zipw_end(z, &err), 0);
    CHECK_EQ_I(tl_zipw_close(z, &err), 0);

    int e;
    zip_t *r = zip_open(path, ZIP_RDONLY | ZIP_CHECKCONS, &e);
    CHECK(r != NULL);
    if (!r) return;
    CHECK_EQ_I(zip_get_num_entries(r, 0), 3);
    zip_uint64_t n = 0;
    char *s = read_entry(r, "xl/worksheets/sheet1.xml", &n);
    CHECK(s && n == big.n && memcmp(s, big.p, n) == 0);
    free(s);
    s = read_entry(r, "big.xml", &n);
    CHECK(s && n == big.n && memcmp(s, big.p, n) == 0);
    free(s);
    s = read_entry(r, "empty", &n);
    CHECK(s && n == 0);
    free(s);
    zip_stat_t st;
    CHECK(zip_stat(r, "xl/worksheets/sheet1.xml", 0, &st) == 0 && st.comp_size < st.size / 4);
    zip_discard(r);
    tl_buf_free(&big);
}

/* past 65,535 entries the end record points to a zip64 directory */
static void test_many_entries(const char *path)
{
    tl_err err = {0};
    tl_zipw *z = NULL;
    CHECK_EQ_I(tl_zipw_open(path, &z, &err), 0);
    enum { N = 66000 };
    char name[32], body[32];
    int ok = 1;
    for (int i = 0; i < N && ok; i++) {
        snprintf(name, sizeof name, "e%d", i);
        int n = snprintf(body, sizeof body, "entry %d", i);
        ok = !tl_zipw_begin(z, name, 0, &err) && !tl_zipw_write(z, body, (size_t)n, &err) && !tl_zipw_end(z, &err);
    }
    CHECK(ok);
    CHECK_EQ_I(tl_zipw_close(z, &err), 0);
    int e;
    zip_t *r = zip_open(path, ZIP_RDONLY | ZIP_CHECKCONS, &e);
    CHECK(r != NULL);
    if (!r) return;
    CHECK_EQ_I(zip_get_num_entries(r, 0), N);
    zip_uint64_t n = 0;
    char *s = read_entry(r, "e65999", &n);
    CHECK(s && n == strlen("entry 65999") && memcmp(s, "entry 65999", n) == 0);
    free(s);
    zip_discard(r);
}

static int same(double a, double b) { return a == b && signbit(a) == signbit(b); }

static void check_text(double v, size_t *bad)
{
    char t[32];
    size_t n = tl_ooxml_fmt_double(t, v);
    t[n] = 0;
    double back = strtod(t, NULL);
    /* -0 is written "0" */
    if (!(same(back, v) || (v == 0 && back == 0))) {
        if (!(*bad)++) fprintf(stderr, "%.17g written as '%s' reads back as %.17g\n", v, t, back);
    }
}

static void test_number_text(void)
{
    size_t bad = 0, n = 0;
    char t[32];
    static const struct {
        double v;
        const char *want;
    } fixed[] = {{0, "0"},          {1, "1"},           {-2, "-2"},        {0.5, "0.5"},
                 {21.065, "21.065"}, {0.1, "0.1"},       {1e-7, "0.0000001"}, {123456789012345.0, "123456789012345"},
                 {2235146660576.805, "2235146660576.805"}, {-0.00927734375, "-0.00927734375"}};
    for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++) {
        size_t k = tl_ooxml_fmt_double(t, fixed[i].v);
        t[k] = 0;
        CHECK_EQ_S(t, fixed[i].want);
    }
    static const double edge[] = {1.0 / 3,  -2.0 / 3, 1e-300, 5e-324, 1e300,  1.7976931348623157e308,
                                  9e15,     9.007199254740993e15, 1e16, 0.1 + 0.2, 1e-7 * 3, 123.456e-9};
    for (size_t i = 0; i < sizeof edge / sizeof *edge; i++, n++) check_text(edge[i], &bad);
    /* random magnitudes, and values on µs/ms grids as reports hold them */
    uint64_t s = 0x9E3779B97F4A7C15ull;
    for (int i = 0; i < 200000; i++, n += 3) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        double u;
        uint64_t bits = s;
        memcpy(&u, &bits, sizeof u);
        if (isfinite(u)) check_text(u, &bad);
        else n--;
        check_text((double)(int64_t)(s >> 11) / 1000.0, &bad);
        check_text(ldexp((double)(s >> 12), -(int)(s % 60)), &bad);
    }
    printf("test_zip_write: %zu numbers written and read back, %zu differ\n", n, bad);
    CHECK_EQ_I(bad, 0);
}

static const char *plain_text(const char *s, tl_buf *b, int *cut)
{
    (void)b, (void)cut;
    return s;
}

static void four_widths(const tl_table *t, double *w)
{
    for (size_t c = 0; c < t->ncols; c++) w[c] = 10 + (double)c;
}

/* 100,000 rows x 4 columns: 500,000 cells, two segments and a part */
static tl_table *segmented_table(void)
{
    tl_table *t = tl_table_new("big");
    tl_table_add_col(t, "name", TL_STR);
    tl_table_add_col(t, "n", TL_I64);
    tl_table_add_col(t, "dur (ms)", TL_F64);
    tl_table_add_col(t, "ok", TL_BOOL);
    static const char *names[] = {"aten::mm", "nccl:all_reduce <&>", "aten::add_"};
    tl_table_set_nrows(t, 100000);
    for (size_t r = 0; r < t->nrows; r++) {
        tl_table_set_str_ref(t, 0, r, names[r % 3]);
        tl_table_set_i64(t, 1, r, (int64_t)(r * 7919 % 100003));
        if (r % 11) tl_table_set_f64(t, 2, r, (double)r / 3.0);
        tl_table_set_bool(t, 3, r, r & 1);
    }
    return t;
}

static void test_segmented_sheet(const char *one, const char *threaded)
{
    tl_err err = {0};
    tl_table *t = segmented_table(), *small = tl_table_new("small");
    tl_table_add_col(small, "x", TL_I64);
    tl_table_set_nrows(small, 3);
    for (size_t r = 0; r < 3; r++) tl_table_set_i64(small, 0, r, (int64_t)r);
    double w[4];
    four_widths(t, w);
    tl_ooxml *o = NULL;
    int cut = 0;
    CHECK_EQ_I(tl_ooxml_open(one, 0, &o, &err), 0);
    CHECK_EQ_I(tl_ooxml_add_sheet(o, "big", t, w, plain_text, &cut, &err), 0);
    CHECK_EQ_I(tl_ooxml_add_sheet(o, "small", small, w, plain_text, &cut, &err), 0);
    CHECK_EQ_I(tl_ooxml_close(o, &err), 0);
    tl_ooxml_sheet_in in[2] = {{"big", t, 0}, {"small", small, 0}};
    CHECK_EQ_I(tl_ooxml_open(threaded, 0, &o, &err), 0);
    CHECK_EQ_I(tl_ooxml_add_sheets(o, in, 2, four_widths, plain_text, 3, &err), 0);
    CHECK_EQ_I(tl_ooxml_close(o, &err), 0);
    size_t na = 0, nb = 0;
    char *a = tl_test_slurp(one, &na), *b = tl_test_slurp(threaded, &nb);
    CHECK(a && b && na == nb && memcmp(a, b, na) == 0);
    free(a);
    free(b);
    /* and it reads back whole (libzip checks the CRC of the joined segments) */
    int e;
    zip_t *r = zip_open(threaded, ZIP_RDONLY | ZIP_CHECKCONS, &e);
    CHECK(r != NULL);
    if (r) {
        zip_uint64_t n = 0;
        char *x = read_entry(r, "xl/worksheets/sheet1.xml", &n);
        CHECK(x != NULL);
        size_t rows = 0;
        for (char *p = x; p && (p = strstr(p, "<row ")); p++) rows++;
        CHECK_EQ_I((long)rows, 100001);
        CHECK(x && strstr(x, "<c r=\"C100001\" s=\"2\"><v>33333</v></c>") != NULL);
        CHECK(x && strstr(x, "nccl:all_reduce &lt;&amp;&gt;") != NULL);
        CHECK(x && n > 12 && memcmp(x + n - 12, "</worksheet>", 12) == 0);
        free(x);
        zip_discard(r);
    }
    tl_table_free(t);
    tl_table_free(small);
}

int main(void)
{
    char dir[] = "/tmp/tl_zipw_XXXXXX";
    if (!mkdtemp(dir)) return 1;
    char p1[64], p2[64];
    snprintf(p1, sizeof p1, "%s/a.zip", dir);
    snprintf(p2, sizeof p2, "%s/many.zip", dir);
    test_entries(p1);
    test_many_entries(p2);
    test_number_text();
    char p3[64], p4[64];
    snprintf(p3, sizeof p3, "%s/one.xlsx", dir);
    snprintf(p4, sizeof p4, "%s/threaded.xlsx", dir);
    test_segmented_sheet(p3, p4);
    unlink(p1);
    unlink(p2);
    unlink(p3);
    unlink(p4);
    rmdir(dir);
    return tl_test_done("test_zip_write");
}
