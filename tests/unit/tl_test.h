/* tl_test.h — minimal assertion helpers for the unit-test programs. Each
 * test program returns tl_test_done(): 0 if every check passed, 1 otherwise;
 * a program returns 77 (ctest SKIP_RETURN_CODE) when its data is absent. */
#ifndef TL_TEST_H
#define TL_TEST_H
#include <stdio.h>
#include <string.h>
#include <math.h>

extern int tl_test_failures, tl_test_checks;
#define CHECK(cond) do { tl_test_checks++; if (!(cond)) { tl_test_failures++; \
    fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); } } while (0)
#define CHECK_EQ_I(a, b) do { long long a_ = (long long)(a), b_ = (long long)(b); tl_test_checks++; \
    if (a_ != b_) { tl_test_failures++; fprintf(stderr, "%s:%d: %s == %lld, expected %lld\n", \
    __FILE__, __LINE__, #a, a_, b_); } } while (0)
#define CHECK_EQ_S(a, b) do { const char *a_ = (a), *b_ = (b); tl_test_checks++; \
    if (!a_ || !b_ || strcmp(a_, b_)) { tl_test_failures++; fprintf(stderr, \
    "%s:%d: %s == \"%s\", expected \"%s\"\n", __FILE__, __LINE__, #a, a_ ? a_ : "(null)", \
    b_ ? b_ : "(null)"); } } while (0)
#define CHECK_NEAR(a, b, tol) do { double a_ = (a), b_ = (b); tl_test_checks++; \
    if (!(fabs(a_ - b_) <= (tol))) { tl_test_failures++; fprintf(stderr, \
    "%s:%d: %s == %.17g, expected %.17g\n", __FILE__, __LINE__, #a, a_, b_); } } while (0)

/* Prints "N passed, M failed" and returns the exit status. */
int tl_test_done(const char *name);
/* Path of ../shared/data/<rel> if it exists (else NULL: the test skips). */
const char *tl_test_data(const char *rel);
/* The whole file at path, malloc'd with a NUL after its n bytes; NULL
 * when it cannot be opened. */
char *tl_test_slurp(const char *path, size_t *n);
/* A fresh store in a new folder dir (dirsz bytes) = /tmp/<prefix>XXXXXX,
 * at dir/db; the program exits with status 1 when it cannot be made. */
struct tl_store *tl_test_store_open(const char *prefix, char *dir, size_t dirsz);
/* Closes the store and removes the folder with everything in it. */
void tl_test_store_close(struct tl_store *s, const char *dir);
#endif
