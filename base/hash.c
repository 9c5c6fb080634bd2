/* hash.c — XXH3 hashing and trace id text */
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

/* ---- hashing and ids */
uint64_t tl_hash64(const void *p, size_t n, uint64_t seed) { return XXH3_64bits_withSeed(p, n, seed); }

void tl_id_format(uint64_t id, char out[17]) { snprintf(out, 17, "%016llx", (unsigned long long)id); }

int tl_id_parse(const char *s, uint64_t *id)
{
    size_t n = strlen(s);
    if (n == 0 || n > 16) return -1;
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        int d;
        if (c >= '0' && c <= '9') d = c - '0';
        else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F') d = c - 'A' + 10;
        else return -1;
        v = v << 4 | (uint64_t)d;
    }
    *id = v;
    return 0;
}
