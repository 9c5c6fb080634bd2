/* test_util.c — store/util's shared algorithms against naive versions:
 * the quickselect medians against sorting, the stable radix sort of rows
 * against a stable insertion sort. Random inputs with many ties. */
#include "tests/unit/tl_test.h"
#include "base/base.h"

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

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void test_median(void)
{
    double v[257], s[257];
    for (int trial = 0; trial < 2000; trial++) {
        size_t n = 1 + next() % 257;
        unsigned spread = 1 + (unsigned)(next() % 50); /* few distinct values: ties */
        for (size_t i = 0; i < n; i++) v[i] = s[i] = (double)(next() % spread) * 0.25 - 3;
        qsort(s, n, sizeof *s, cmp_dbl);
        double want = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
        double got = tl_median_f64(v, n);
        tl_test_checks++;
        if (got != want) {
            tl_test_failures++;
            fprintf(stderr, "median of %zu values: %g, expected %g\n", n, got, want);
            return;
        }
    }
    int64_t iv[] = {9, 2, 4, 2}, iv1[] = {5, 1, 3};
    CHECK(tl_median_i64(iv, 4) == 3);
    CHECK(tl_median_i64(iv1, 3) == 3);
    double one = 7;
    CHECK(tl_median_f64(&one, 1) == 7);
    double two[] = {5, 1};
    CHECK(tl_median_f64(two, 2) == 3);
}

static void test_radix(void)
{
    enum { N = 3000 };
    static uint32_t rows[N], want[N];
    static uint64_t keys[N], wkeys[N];
    for (int trial = 0; trial < 20; trial++) {
        size_t n = 1 + next() % N;
        uint64_t mask = trial % 2 ? 0xff : ~0ULL; /* ties, and wide keys */
        for (size_t i = 0; i < n; i++) {
            rows[i] = want[i] = (uint32_t)i;
            keys[i] = wkeys[i] = next() & mask;
        }
        for (size_t i = 1; i < n; i++) { /* stable insertion sort */
            uint32_t r = want[i];
            uint64_t k = wkeys[i];
            size_t j = i;
            while (j > 0 && wkeys[j - 1] > k) {
                want[j] = want[j - 1];
                wkeys[j] = wkeys[j - 1];
                j--;
            }
            want[j] = r;
            wkeys[j] = k;
        }
        tl_radix_sort_rows(rows, keys, n);
        tl_test_checks++;
        if (memcmp(rows, want, n * sizeof *rows)) {
            tl_test_failures++;
            fprintf(stderr, "radix sort of %zu rows differs from a stable sort\n", n);
            return;
        }
    }
}

int main(void)
{
    test_median();
    test_radix();
    return tl_test_done("util");
}
