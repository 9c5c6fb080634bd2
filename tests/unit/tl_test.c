/* tl_test.c — shared bits of the unit-test programs. */
#include "tl_test.h"
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
