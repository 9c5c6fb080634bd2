/* test_util.c — base's stable radix sort of rows against a stable
 * insertion sort, on random inputs with many ties. */
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
    test_radix();
    return tl_test_done("util");
}
