/* tl_test.c — shared bits of the unit-test programs. */
#include "tests/unit/tl_test.h"
#include "store/store.h"
#include <ftw.h>
#include <stdlib.h>
#include <sys/stat.h>

int tl_test_failures, tl_test_checks;

int tl_test_done(const char *name)
{
    printf("%s: %d passed, %d failed\n", name, tl_test_checks - tl_test_failures,
           tl_test_failures);
    return tl_test_failures ? 1 : 0;
}

const char *tl_test_data(const char *rel)
{
    static char path[4096];
    const char *base = getenv("TL_SHARED_DATA");
    if (!base) base = "../shared/data";
    snprintf(path, sizeof path, "%s/%s", base, rel);
    struct stat st;
    return stat(path, &st) == 0 ? path : NULL;
}

char *tl_test_slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 16, len = 0, got;
    char *b = malloc(cap + 1);
    while (b && (got = fread(b + len, 1, cap - len, f)) > 0) {
        len += got;
        if (len == cap) {
            char *nb = realloc(b, 2 * cap + 1);
            if (!nb) free(b);
            b = nb, cap *= 2;
        }
    }
    fclose(f);
    if (!b) return NULL;
    b[len] = 0;
    *n = len;
    return b;
}

struct tl_store *tl_test_store_open(const char *prefix, char *dir, size_t dirsz)
{
    snprintf(dir, dirsz, "/tmp/%sXXXXXX", prefix);
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        exit(1);
    }
    char db[4200];
    snprintf(db, sizeof db, "%s/db", dir);
    tl_err err = {0};
    tl_store *s;
    if (tl_store_open(db, &s, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        exit(1);
    }
    return s;
}

static int rm_cb(const char *p, const struct stat *sb, int flag, struct FTW *f)
{
    (void)sb, (void)flag, (void)f;
    return remove(p);
}

void tl_test_store_close(struct tl_store *s, const char *dir)
{
    tl_store_close(s);
    nftw(dir, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
}
