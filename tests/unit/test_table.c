/* test_table.c — tl_table: the CSV cell text of every type (spec
 * pytorch-report.md §11.1/§11.2), missing cells, growth and permute. */
#include "query/core/table.h"
#include "query/core/packed.h"
#include "tests/unit/tl_test.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char *txt(const tl_table *t, size_t c, size_t r)
{
    static char buf[64];
    return tl_table_cell_text(t, c, r, buf, sizeof buf);
}

static void test_floats(void)
{
    static const struct {
        double v;
        const char *s;
    } cases[] = {
        {25.0, "25.0"},
        {1e-05, "1e-05"},
        {100.00000000000001, "100.00000000000001"},
        {0.174130859375, "0.174130859375"},
        {5.4399999999999994e-05, "5.4399999999999994e-05"},
        {0.0001, "0.0001"},
        {1234567890123456.0, "1234567890123456.0"},
        {1e16, "1e+16"},
        {28.4139404296875, "28.4139404296875"},
        {-2.1615554199218785, "-2.1615554199218785"},
        {291.67900000000003, "291.67900000000003"},
        {-0.0, "-0.0"},
        {0.0, "0.0"},
        {INFINITY, "inf"},
        {-INFINITY, "-inf"},
        {1.5e300, "1.5e+300"},
        {2.0, "2.0"},
    };
    tl_table *t = tl_table_new("floats");
    size_t c = tl_table_add_col(t, "x", TL_F64);
    size_t n = sizeof cases / sizeof *cases;
    for (size_t i = 0; i < n; i++) tl_table_set_f64(t, c, tl_table_add_row(t), cases[i].v);
    for (size_t i = 0; i < n; i++) CHECK_EQ_S(txt(t, c, i), cases[i].s);
    /* NaN is the missing float: empty text */
    size_t r = tl_table_add_row(t);
    CHECK(tl_table_is_missing(t, c, r));
    CHECK_EQ_S(txt(t, c, r), "");
    tl_table_set_f64(t, c, r, 1.0);
    CHECK(!tl_table_is_missing(t, c, r));
    tl_table_set_f64(t, c, r, NAN);
    CHECK(tl_table_is_missing(t, c, r));
    CHECK(isnan(tl_table_num(t, c, r)));
    /* a tiny buffer truncates instead of overflowing */
    char small[4];
    CHECK_EQ_S(tl_table_cell_text(t, c, 2, small, sizeof small), "100");
    tl_table_free(t);
}

/* tl_fmt_pyfloat (base/pyrepr.c) against Python's repr: the exact-integer
 * path for [1e-6, 1e15), the printf path outside it, powers of two whose
 * nearest 16-digit decimal falls in the narrow gap below them (Python then
 * prints the next one up), subnormals and the extremes. Then random values:
 * the text reads back as the value. */
static void test_pyfloat(void)
{
    static const struct {
        double v;
        const char *s;
    } cases[] = {
        {0x1.0000000000000p-24, "5.960464477539063e-08"},
        {0x1.0000000000000p-44, "5.684341886080802e-14"},
        {0x1.0000000000000p-19, "1.9073486328125e-06"},
        {0x1.0000000000000p+49, "562949953421312.0"},
        {0x0.0000000000001p-1022, "5e-324"},
        {0x1.0000000000000p-1022, "2.2250738585072014e-308"},
        {0x1.0000000000000p+1023, "8.98846567431158e+307"},
        {0x1.10721cac08312p+10, "1089.783"},
        {0x1.5555555555555p-2, "0.3333333333333333"},
        {0x1.1172015d867c4p+3, "8.545166666666667"},
        {0x1.c6bf526340000p+49, "1000000000000000.0"},
        {0x1.c12218377de66p+46, "123456789012345.6"},
        {0x1.0000000000000p+53, "9007199254740992.0"},
        {0x1.3333333333334p-2, "0.30000000000000004"},
        {0x1.fffffffffffffp+1023, "1.7976931348623157e+308"},
        {0x1.0c6f7a0b5ed8dp-20, "1e-06"},
        {0x1.0000000000001p+0, "1.0000000000000002"},
        {0x1.fffffffffffffp-1, "0.9999999999999999"},
        {0x1.52d02c7e14af6p+76, "1e+23"},
        {0x1.5666666666666p+1, "2.675"},
        {0x1.a8310bc7a31bfp-27, "1.23456e-08"},
        {0x1.0000000000000p-52, "2.220446049250313e-16"},
        {0x1.34a0000000000p+10, "1234.5"},
        {0x1.0624dd2f1a9fcp-10, "0.001"},
    };
    char out[40];
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        tl_fmt_pyfloat(cases[i].v, out);
        CHECK_EQ_S(out, cases[i].s);
    }
    uint64_t x = 88172645463325252ull;
    int bad = 0;
    for (int i = 0; i < 200000; i++) {
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        double v = ldexp((double)(x >> 11), (int)(x % 90) - 73); /* ~[1e-22, 1e13] */
        if (i & 1) v = (double)(x % 100000000) / 1000.0;         /* durations */
        tl_fmt_pyfloat(v, out);
        if (strtod(out, NULL) != v) bad++;
    }
    CHECK_EQ_I(bad, 0);
}

/* tl_buf_pystr (base/pyrepr.c): Python's repr of a str. */
static void test_pystr(void)
{
    static const struct {
        const char *in, *out;
    } cases[] = {
        {"abc", "'abc'"},
        {"a'b", "\"a'b\""},
        {"a\"b", "'a\"b'"},
        {"a'b\"c", "'a\\'b\"c'"},
        {"x\\y", "'x\\\\y'"},
        {"l1\nl2\tt\r", "'l1\\nl2\\tt\\r'"},
        {"\x01\x7f", "'\\x01\\x7f'"},
        {"caf\xc3\xa9", "'caf\xc3\xa9'"},
        {"a\xc2\x85" "b", "'a\\x85b'"},
        {"", "''"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        tl_buf b = {0};
        tl_buf_pystr(&b, cases[i].in, strlen(cases[i].in));
        tl_buf_putc(&b, 0);
        CHECK_EQ_S(b.p, cases[i].out);
        tl_buf_free(&b);
    }
}

static void test_ints_bools_strings(void)
{
    tl_table *t = tl_table_new("mixed");
    size_t ci = tl_table_add_col(t, "Count", TL_I64);
    size_t cf = tl_table_add_col(t, "h100::Count", TL_I64);
    size_t cb = tl_table_add_col(t, "flag", TL_BOOL);
    size_t cs = tl_table_add_col(t, "name", TL_STR);
    CHECK_EQ_I(tl_table_col(t, "flag"), 2);
    CHECK_EQ_I(tl_table_col(t, "nope"), -1);
    for (int i = 0; i < 3; i++) tl_table_add_row(t);
    CHECK_EQ_I(t->nrows, 3);
    /* every new cell starts missing */
    for (size_t c = 0; c < 4; c++)
        for (size_t r = 0; r < 3; r++) CHECK(tl_table_is_missing(t, c, r));
    tl_table_set_i64(t, ci, 0, 8);
    tl_table_set_i64(t, ci, 1, -12345678901234LL);
    tl_table_set_i64(t, ci, 2, INT64_MAX);
    CHECK_EQ_S(txt(t, ci, 0), "8");
    CHECK_EQ_S(txt(t, ci, 1), "-12345678901234");
    CHECK_EQ_S(txt(t, ci, 2), "9223372036854775807");
    CHECK(!tl_table_col_has_missing(t, ci));
    CHECK_NEAR(tl_table_num(t, ci, 0), 8.0, 0);

    tl_table_set_i64(t, cf, 0, 220);
    tl_table_set_i64(t, cf, 2, 7);
    CHECK(tl_table_col_has_missing(t, cf));
    CHECK_EQ_S(txt(t, cf, 0), "220"); /* as_float is the producer's call */
    tl_table_int_na_as_float(t);
    CHECK(t->cols[cf].as_float);
    CHECK(!t->cols[ci].as_float);
    CHECK_EQ_S(txt(t, cf, 0), "220.0");
    CHECK_EQ_S(txt(t, cf, 1), "");
    CHECK_EQ_S(txt(t, cf, 2), "7.0");
    t->cols[ci].as_float = 1;
    CHECK_EQ_S(txt(t, ci, 0), "8.0");
    CHECK_EQ_S(txt(t, ci, 2), "9.223372036854776e+18");
    t->cols[ci].as_float = 0;

    /* a double column of whole numbers becomes an integer column */
    size_t cd = tl_table_add_col(t, "d", TL_F64);
    tl_table_set_f64(t, cd, 0, 1682725898094377.0);
    tl_table_set_f64(t, cd, 2, -3.0);
    tl_table_f64_to_i64(t, cd);
    CHECK(t->cols[cd].type == TL_I64);
    CHECK_EQ_S(txt(t, cd, 0), "1682725898094377");
    CHECK(tl_table_is_missing(t, cd, 1));
    CHECK_EQ_S(txt(t, cd, 2), "-3");
    tl_table_int_na_as_float(t);
    CHECK_EQ_S(txt(t, cd, 0), "1682725898094377.0");

    tl_table_set_bool(t, cb, 0, 1);
    tl_table_set_bool(t, cb, 1, 0);
    CHECK_EQ_S(txt(t, cb, 0), "True");
    CHECK_EQ_S(txt(t, cb, 1), "False");
    CHECK_EQ_S(txt(t, cb, 2), "");
    CHECK_NEAR(tl_table_num(t, cb, 0), 1.0, 0);
    CHECK(isnan(tl_table_num(t, cb, 2)));

    char src[] = "((512,), (141, 512))";
    tl_table_set_str(t, cs, 0, src);
    src[0] = 'X'; /* the table keeps its own copy */
    CHECK_EQ_S(txt(t, cs, 0), "((512,), (141, 512))");
    tl_table_set_strn(t, cs, 1, "µs_sum_extra", 5);
    CHECK_EQ_S(txt(t, cs, 1), "µs_s");
    CHECK_EQ_S(txt(t, cs, 2), "");
    CHECK(isnan(tl_table_num(t, cs, 0)));
    tl_table_set_missing(t, cs, 0);
    CHECK(tl_table_is_missing(t, cs, 0));
    tl_table_set_missing(t, ci, 0);
    CHECK(tl_table_is_missing(t, ci, 0));
    CHECK_EQ_S(txt(t, ci, 0), "");
    tl_table_free(t);
}

/* Columns added after rows exist, growth past the first capacity, and
 * set_nrows growing/shrinking. */
static void test_growth(void)
{
    tl_table *t = tl_table_new(NULL);
    CHECK_EQ_S(t->name, "");
    size_t a = tl_table_add_col(t, "a", TL_I64);
    for (int i = 0; i < 1000; i++) tl_table_set_i64(t, a, tl_table_add_row(t), i);
    size_t b = tl_table_add_col(t, "b", TL_F64);
    size_t c = tl_table_add_col(t, "c", TL_BOOL);
    CHECK(tl_table_is_missing(t, b, 999));
    CHECK(tl_table_is_missing(t, c, 0));
    CHECK(t->cols[a].valid == NULL || !tl_table_col_has_missing(t, a));
    tl_table_set_nrows(t, 5000);
    CHECK_EQ_I(t->nrows, 5000);
    CHECK(tl_table_is_missing(t, a, 4999));
    CHECK(!tl_table_is_missing(t, a, 999));
    CHECK_EQ_S(txt(t, a, 999), "999");
    tl_table_set_nrows(t, 10);
    CHECK_EQ_I(t->nrows, 10);
    CHECK_EQ_S(txt(t, a, 9), "9");
    tl_table_free(t);
    tl_table_free(NULL);
}

static void test_permute(void)
{
    tl_table *t = tl_table_new("p");
    size_t s = tl_table_add_col(t, "s", TL_STR);
    size_t i = tl_table_add_col(t, "i", TL_I64);
    size_t f = tl_table_add_col(t, "f", TL_F64);
    size_t b = tl_table_add_col(t, "b", TL_BOOL);
    const char *names[] = {"zero", "one", "two", "three"};
    for (size_t r = 0; r < 4; r++) {
        tl_table_add_row(t);
        tl_table_set_str(t, s, r, names[r]);
        if (r != 1) tl_table_set_i64(t, i, r, (int64_t)r * 10);
        tl_table_set_f64(t, f, r, r == 2 ? NAN : (double)r + 0.5);
        tl_table_set_bool(t, b, r, (int)(r & 1));
    }
    size_t perm[] = {3, 1, 0, 2};
    tl_table_permute(t, perm, 4);
    CHECK_EQ_S(txt(t, s, 0), "three");
    CHECK_EQ_S(txt(t, s, 1), "one");
    CHECK_EQ_S(txt(t, s, 3), "two");
    CHECK_EQ_S(txt(t, i, 0), "30");
    CHECK(tl_table_is_missing(t, i, 1));
    CHECK_EQ_S(txt(t, i, 2), "0");
    CHECK_EQ_S(txt(t, f, 0), "3.5");
    CHECK(tl_table_is_missing(t, f, 3));
    CHECK_EQ_S(txt(t, b, 1), "True");
    CHECK_EQ_S(txt(t, b, 2), "False");
    /* a gather: keep and repeat rows */
    size_t pick[] = {1, 1, 0, 3, 2, 0};
    tl_table_permute(t, pick, 6);
    CHECK_EQ_I(t->nrows, 6);
    CHECK_EQ_S(txt(t, s, 0), "one");
    CHECK_EQ_S(txt(t, s, 1), "one");
    CHECK_EQ_S(txt(t, s, 2), "three");
    CHECK_EQ_S(txt(t, s, 5), "three");
    CHECK(tl_table_is_missing(t, i, 0));
    CHECK_EQ_S(txt(t, i, 3), "20");
    CHECK_EQ_S(txt(t, i, 2), "30");
    /* rows can still be appended after a permute */
    size_t r = tl_table_add_row(t);
    CHECK(tl_table_is_missing(t, s, r) && tl_table_is_missing(t, i, r) && tl_table_is_missing(t, b, r));
    size_t none[1];
    tl_table_permute(t, none, 0);
    CHECK_EQ_I(t->nrows, 0);
    tl_table_free(t);
}

/* Tables as bytes: a round trip, and counts the bytes cannot hold are
 * refused without making the rows (a row count of 2^62 once looped for
 * ever growing a table of no columns). */
static void test_packed(void)
{
    tl_table *t = tl_table_new("sheet");
    tl_table_add_col(t, "name", TL_STR);
    tl_table_add_col(t, "n", TL_I64);
    tl_table_set_nrows(t, 3);
    tl_table_set_str(t, 0, 0, "a");
    tl_table_set_i64(t, 1, 2, -7);
    tl_buf b = {0};
    tl_pack_table(&b, t);
    tl_unpack in = {(const unsigned char *)b.p, (const unsigned char *)b.p + b.n, 0};
    tl_table *u = tl_unpack_table(&in);
    CHECK(u && !in.bad && in.p == in.end && u->nrows == 3 && u->ncols == 2);
    CHECK(u && !strcmp(u->cols[0].v.s[0], "a") && tl_table_is_missing(u, 0, 1) && u->cols[1].v.i[2] == -7 &&
          tl_table_is_missing(u, 1, 0));
    tl_table_free(u);
    for (size_t cut = 0; cut < b.n; cut++) {
        tl_unpack c = {(const unsigned char *)b.p, (const unsigned char *)b.p + cut, 0};
        tl_table_free(tl_unpack_table(&c));
        CHECK(c.bad);
    }
    for (uint64_t ncols = 0; ncols < 2; ncols++) {
        b.n = 0;
        tl_pack_u64(&b, 1);
        tl_pack_str(&b, "x");
        tl_pack_u64(&b, (uint64_t)1 << 62);
        tl_pack_u64(&b, ncols);
        tl_unpack h = {(const unsigned char *)b.p, (const unsigned char *)b.p + b.n, 0};
        tl_table *v = tl_unpack_table(&h);
        CHECK(h.bad && (!v || v->nrows == 0));
        tl_table_free(v);
    }
    tl_buf_free(&b);
    tl_table_free(t);
}

int main(void)
{
    test_packed();
    test_floats();
    test_pyfloat();
    test_pystr();
    test_ints_bools_strings();
    test_growth();
    test_permute();
    return tl_test_done("test_table");
}
