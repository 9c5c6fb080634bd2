/* test_lazylib.c — store/lazylib: binding a library on first use, and the
 * two ways it can fail (library missing, symbol missing) giving a message
 * that names the library and the feature, the same on every later call;
 * and that the program itself does not link the lazily loaded libraries. */
#include "tests/unit/tl_test.h"
#include "base/lazylib.h"

#include <stdlib.h>
#include <string.h>

/* Functions of libc with known behaviour, declared as any user declares them. */
#define LIBC_FUNCS(X) X(strlen) X(abs)
TL_LAZY_API(LC, LIBC_FUNCS, "libc.so.6", "testing");

static void test_bind_ok(void)
{
    tl_err err = {0};
    CHECK_EQ_I(tl_lazylib_bind(&LC_lib, &LC, &err), 0);
    CHECK(LC.strlen && LC.abs);
    if (LC.strlen) CHECK_EQ_I(LC.strlen("four"), 4);
    if (LC.abs) CHECK_EQ_I(LC.abs(-7), 7);
    CHECK_EQ_I(tl_lazylib_bind(&LC_lib, &LC, &err), 0); /* again: no-op */
}

static void test_missing_library(void)
{
    static const char *const names[] = {"strlen"};
    static tl_lazylib lib = TL_LAZYLIB_INIT("libtracelens-no-such-library.so.9", "reading xlsx workbooks", names, 1);
    void *slots[1] = {0};
    for (int pass = 0; pass < 2; pass++) { /* the second call repeats the first failure */
        tl_err err = {0};
        CHECK_EQ_I(tl_lazylib_bind(&lib, slots, &err), TL_EUNSUPPORTED);
        CHECK(strstr(err.msg, "reading xlsx workbooks needs libtracelens-no-such-library.so.9") != NULL);
        CHECK(strstr(err.msg, "install the package") != NULL);
    }
}

static void test_missing_symbol(void)
{
    static const char *const names[] = {"strlen", "tl_no_such_function"};
    static tl_lazylib lib = TL_LAZYLIB_INIT("libc.so.6", "sql", names, 2);
    void *slots[2] = {0};
    tl_err err = {0};
    CHECK_EQ_I(tl_lazylib_bind(&lib, slots, &err), TL_EUNSUPPORTED);
    CHECK(strstr(err.msg, "libc.so.6 has no symbol tl_no_such_function") != NULL);
}

/* The point of the module: tracelens starts without these libraries. */
static void test_program_does_not_link_them(void)
{
    const char *build = getenv("TL_BUILD");
    if (!build) return;
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "ldd '%s/tracelens' 2>/dev/null", build);
    FILE *p = popen(cmd, "r");
    if (!p) return;
    char line[512];
    int libs = 0, lazy = 0;
    while (fgets(line, sizeof line, p)) {
        libs++;
        if (strstr(line, "libsqlite3") || strstr(line, "libzip") ||
            strstr(line, "libexpat") || strstr(line, "libcrypto")) {
            fprintf(stderr, "linked at start: %s", line);
            lazy++;
        }
    }
    pclose(p);
    CHECK(libs > 0);
    CHECK_EQ_I(lazy, 0);
}

int main(void)
{
    test_bind_ok();
    test_missing_library();
    test_missing_symbol();
    test_program_does_not_link_them();
    return tl_test_done("test_lazylib");
}
