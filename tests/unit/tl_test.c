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
