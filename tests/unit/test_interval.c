/* test_interval.c — query/core/interval: the union, intersection and
 * subtraction conventions (touching intervals merge, half-open lengths, no
 * zero-length pieces) on hand cases, and the sort + union of random sets
 * against a naive point-by-point count. */
#include "tests/unit/tl_test.h"
#include "query/core/interval.h"

#include <stdint.h>
#include <stdlib.h>

static uint64_t rng = 0x9e3779b97f4a7c15ULL;
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static void test_empty(void)
{
    tl_ival a[1] = {{0, 0}};
    tl_fival f[1] = {{0, 0}};
    CHECK_EQ_I(tl_ival_union_len(a, 0), 0);
    CHECK(tl_fival_union_len(f, 0) == 0.0);
    CHECK_EQ_I(tl_ival_union_sorted(a, 0), 0);
    CHECK_EQ_I(tl_ival_len(a, 0), 0);
    CHECK_EQ_I(tl_ival_inter_len(a, 0, a, 0), 0);
    tl_ival out[2];
    CHECK_EQ_I(tl_ival_sub(a, 0, a, 0, out), 0);
    tl_ival b[1] = {{3, 7}};
    CHECK_EQ_I(tl_ival_sub(b, 1, a, 0, out), 1);
    CHECK(out[0].s == 3 && out[0].e == 7);
    CHECK_EQ_I(tl_ival_sub(a, 0, b, 1, out), 0);
}

static void test_nested_touching_overlapping(void)
{
    /* nested [0,10) ⊃ [2,4); touching [10,15); overlapping [14,20); gap;
     * [30,31) */
    tl_ival v[] = {{0, 10}, {2, 4}, {10, 15}, {14, 20}, {30, 31}};
    CHECK_EQ_I(tl_ival_union_len(v, 5), 21);
    size_t m = tl_ival_union_sorted(v, 5);
    CHECK_EQ_I(m, 2);
    CHECK(v[0].s == 0 && v[0].e == 20 && v[1].s == 30 && v[1].e == 31);
    tl_fival f[] = {{0.5, 1.5}, {1.5, 2.0}, {0.75, 1.0}};
    CHECK(tl_fival_union_len(f, 3) == 1.5); /* sorted by the call */
    CHECK(f[0].s == 0.5 && f[1].s == 0.75 && f[2].s == 1.5);
    CHECK_EQ_I(tl_fival_union_sorted(f, 3), 1);
}

static void test_inter_sub(void)
{
    tl_ival a[] = {{0, 10}, {20, 30}}, b[] = {{5, 20}, {25, 26}, {29, 40}};
    CHECK_EQ_I(tl_ival_inter_len(a, 2, b, 3), 5 + 1 + 1);
    tl_ival out[5];
    size_t m = tl_ival_sub(a, 2, b, 3, out);
    CHECK_EQ_I(m, 3);
    CHECK(out[0].s == 0 && out[0].e == 5);
    CHECK(out[1].s == 20 && out[1].e == 25);
    CHECK(out[2].s == 26 && out[2].e == 29);
    /* b covering a exactly: nothing left, no zero-length piece */
    m = tl_ival_sub(a, 1, (tl_ival[]){{0, 10}}, 1, out);
    CHECK_EQ_I(m, 0);
    tl_fival fa[] = {{0, 4}}, fb[] = {{1, 2}}, fo[2];
    CHECK_EQ_I(tl_fival_sub(fa, 1, fb, 1, fo), 2);
    CHECK(tl_fival_len(fo, 2) == 3.0);
    CHECK(tl_fival_inter_len(fa, 1, fb, 1) == 1.0);
}

/* The sort contract: unsorted input is sorted stably by start, ties keep
 * their order (the ends tell them apart here). */
static void test_unsorted_stable(void)
{
    for (size_t n = 2; n < 300; n += 37) {
        tl_ival *v = malloc(n * sizeof *v);
        for (size_t i = 0; i < n; i++) v[i] = (tl_ival){(int64_t)(next() % 7) - 3, (int64_t)i};
        tl_ival_sort(v, n);
        int ok = 1;
        for (size_t i = 1; i < n; i++)
            ok &= v[i - 1].s < v[i].s || (v[i - 1].s == v[i].s && v[i - 1].e < v[i].e);
        CHECK(ok);
        tl_fival *f = malloc(n * sizeof *f);
        for (size_t i = 0; i < n; i++) f[i] = (tl_fival){(double)(next() % 7) - 3.5, (double)i};
        tl_fival_sort(f, n);
        ok = 1;
        for (size_t i = 1; i < n; i++)
            ok &= f[i - 1].s < f[i].s || (f[i - 1].s == f[i].s && f[i - 1].e < f[i].e);
        CHECK(ok);
        free(v);
        free(f);
    }
}

/* Union length and merged lists against marking unit cells of [0, 512). */
static void test_random_union(void)
{
    for (int trial = 0; trial < 500; trial++) {
        size_t n = 1 + next() % 200;
        tl_ival *v = malloc(n * sizeof *v), *w = malloc(n * sizeof *w);
        uint8_t cell[512] = {0};
        for (size_t i = 0; i < n; i++) {
            int64_t s = (int64_t)(next() % 480), d = (int64_t)(next() % 30);
            v[i] = (tl_ival){s, s + d};
            for (int64_t x = s; x < s + d; x++) cell[x] = 1;
        }
        int64_t want = 0;
        for (int x = 0; x < 512; x++) want += cell[x];
        CHECK_EQ_I(tl_ival_union_len(v, n), want);
        size_t m = tl_ival_union_sorted(v, n);
        CHECK_EQ_I(tl_ival_len(v, m), want);
        int disjoint = 1;
        for (size_t i = 1; i < m; i++) disjoint &= v[i - 1].e < v[i].s;
        CHECK(disjoint);
        /* interleaving two sorted halves gives the same union */
        size_t h = n / 2;
        for (size_t i = 0; i < n; i++) w[i] = (tl_ival){(int64_t)(next() % 480), 0};
        for (size_t i = 0; i < n; i++) w[i].e = w[i].s + (int64_t)(next() % 30);
        tl_ival *u = malloc(n * sizeof *u);
        tl_ival_sort(w, h);
        tl_ival_sort(w + h, n - h);
        tl_ival_interleave(w, h, w + h, n - h, u);
        int64_t lu = tl_ival_union_len(u, n);
        CHECK_EQ_I(lu, tl_ival_union_len(w, n));
        free(u);
        free(v);
        free(w);
    }
}

int main(void)
{
    test_empty();
    test_nested_touching_overlapping();
    test_inter_sub();
    test_unsorted_stable();
    test_random_union();
    return tl_test_done("test_interval");
}
