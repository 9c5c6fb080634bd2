/* test_bigmem.c — large blocks under a resident-set budget (base/bigmem.c):
 * without a budget they are heap blocks; with one they are mappings of
 * deleted scratch files, zeroed when asked, and their data survives the
 * trimmer dropping their pages from the resident set; tl_big_free frees
 * heap pointers too, and a small block stays on the heap;
 * tl_big_favour_trimmer raises the other threads' nice value once; the
 * resident-set probe and the heap trim past a bound. */
#include "tests/unit/tl_test.h"
#include "base/base.h"

#include <errno.h>
#include <stdint.h>
#include <sys/resource.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define MB ((size_t)1 << 20)

/* Whether p lies in a mapping of a deleted tracelens scratch file. */
static int is_scratch(const void *p)
{
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f) return -1;
    char line[4352];
    int found = 0;
    while (!found && fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx", &lo, &hi) != 2) continue;
        found = (uintptr_t)p >= lo && (uintptr_t)p < hi && strstr(line, "tracelens-big.") &&
                strstr(line, "(deleted)");
    }
    fclose(f);
    return found;
}

static long resident_kb(void)
{
    uint64_t rss = 0, file = 0;
    if (!tl_resident(-1, &rss, &file)) return 0;
    return (long)(rss / 1024);
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static void test_off(void)
{
    char *p = tl_big_alloc(4 * MB);
    CHECK(p != NULL);
    CHECK_EQ_I(is_scratch(p), 0);
    memset(p, 1, 4 * MB);
    tl_big_free(p);
    uint32_t *z = tl_big_calloc(MB, sizeof *z);
    int zero = 1;
    for (size_t i = 0; i < MB; i++) zero &= z[i] == 0;
    CHECK(zero);
    tl_big_free(z);
    tl_big_free(NULL);
}

/* With a budget of 32 MiB, 96 MiB written through three blocks: the
 * trimmer keeps dropping their pages, and every value reads back. */
static void test_budget(void)
{
    errno = 0;
    int nice0 = getpriority(PRIO_PROCESS, 0);
    tl_big_budget((uint64_t)32 * MB);
    tl_big_favour_trimmer();
    tl_big_favour_trimmer(); /* once only */
    CHECK_EQ_I(getpriority(PRIO_PROCESS, 0), nice0 + 5 > 19 ? 19 : nice0 + 5);
    char *small = tl_big_alloc(MB / 2);
    CHECK_EQ_I(is_scratch(small), 0);
    tl_big_free(small); /* a heap block */
    uint64_t *b[3];
    size_t n = 32 * MB / sizeof(uint64_t);
    for (int k = 0; k < 3; k++) {
        b[k] = k == 2 ? tl_big_calloc(n, sizeof *b[k]) : tl_big_alloc(n * sizeof *b[k]);
        CHECK_EQ_I(is_scratch(b[k]), 1);
    }
    int zero = 1;
    for (size_t i = 0; i < n; i++) zero &= b[2][i] == 0;
    CHECK(zero);
    unsigned long before = tl_big_trims();
    long base = resident_kb(), peak = base;
    for (int k = 0; k < 3; k++)
        for (size_t i = 0; i < n; i++) {
            b[k][i] = (uint64_t)k << 40 | i;
            if (i % (1 << 16) == 0) {
                sleep_ms(1); /* the trimmer's turn */
                long r = resident_kb();
                if (r > peak) peak = r;
            }
        }
    for (int w = 0; w < 200 && tl_big_trims() == before; w++) sleep_ms(5);
    CHECK(tl_big_trims() > before);
    CHECK(peak - base < 80 * 1024); /* not all of the 96 MiB at once */
    int same = 1;
    for (int k = 0; k < 3; k++)
        for (size_t i = 0; i < n; i++) same &= b[k][i] == ((uint64_t)k << 40 | i);
    CHECK(same);
    for (int k = 0; k < 3; k++) {
        tl_big_free(b[k]);
        CHECK_EQ_I(is_scratch(b[k]), 0); /* unmapped */
    }
    tl_big_budget(0);
    char *p = tl_big_alloc(4 * MB);
    CHECK_EQ_I(is_scratch(p), 0);
    tl_big_free(p);
}

/* tl_resident's figures, and tl_heap_trim_above trimming only past its
 * bound of anonymous memory. */
static void test_heap_trim_above(void)
{
    uint64_t rss = 0, file = 0;
    CHECK(tl_resident(-1, &rss, &file));
    CHECK(rss > 0);
    CHECK(file <= rss);
    CHECK_EQ_I(tl_heap_trim_above(UINT64_MAX), 0);
    CHECK_EQ_I(tl_heap_trim_above(0), 1);
}

int main(void)
{
    test_heap_trim_above();
    test_off();
    test_budget();
    return tl_test_done("test_bigmem");
}
