/* sort.c — radix sort of rows by 64-bit keys */
#include "base/base.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <xxhash.h>

void tl_radix_sort_rows(uint32_t *rows, uint64_t *k, size_t n)
{
    if (n < 2) return;
    uint64_t mn = UINT64_MAX, mx = 0;
    for (size_t i = 0; i < n; i++) {
        if (k[i] < mn) mn = k[i];
        if (k[i] > mx) mx = k[i];
    }
    uint64_t range = mx - mn;
    if (!range) return; /* all keys equal: stable order is the order */
    /* Digits of at most 12 bits, as few passes as the key range needs:
     * timestamps span 30-36 bits, three passes rather than four of 11
     * bits. All histograms come from one read of the keys. */
    int bits = 64 - __builtin_clzll(range);
    int passes = (bits + 11) / 12, width = (bits + passes - 1) / passes;
    uint64_t mask = ((uint64_t)1 << width) - 1;
    size_t *count = tl_xcalloc((size_t)passes << width, sizeof *count);
    for (size_t i = 0; i < n; i++) {
        uint64_t v = k[i] -= mn;
        for (int p = 0; p < passes; p++) count[((size_t)p << width) + ((v >> (p * width)) & mask)]++;
    }
    uint64_t *k2 = tl_xmalloc(n * sizeof *k2), *own = k2;
    uint32_t *r2 = tl_xmalloc(n * sizeof *r2);
    for (int p = 0; p < passes; p++) {
        size_t *c = count + ((size_t)p << width), sum = 0;
        for (size_t d = 0; d <= mask; d++) { size_t x = c[d]; c[d] = sum; sum += x; }
        int shift = p * width;
        for (size_t i = 0; i < n; i++) {
            size_t q = c[(k[i] >> shift) & mask]++;
            r2[q] = rows[i];
            k2[q] = k[i];
        }
        memcpy(rows, r2, n * sizeof *rows);
        uint64_t *t = k; k = k2; k2 = t;
    }
    free(count);
    free(own);
    free(r2);
}
