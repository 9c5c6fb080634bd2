/* lazylib.h — loads an optional shared library the first time a command
 * needs it, instead of at process start.
 *
 * Why: libzip pulls in libcrypto, and with sqlite and expat these
 * libraries cost every tracelens process milliseconds and megabytes of
 * resident memory at start-up (relocations, constructors, fault-around of
 * their code), although only the `sql` and workbook-reading paths call
 * them. Loading them on first use keeps `ingest`, `ls`, CSV and
 * terminal reports free of that cost (docs/ARCHITECTURE.md, "Lazily loaded
 * libraries").
 *
 * A user of a library lists the functions it calls in an X-macro and
 * declares, at file scope, a struct of correctly typed pointers (typed from
 * the library's own header, so a prototype change is a compile error, not
 * a silent ABI break) with the state that binds it:
 *
 *     #define ZIP_FUNCS(X) X(zip_open) X(zip_close)
 *     TL_LAZY_API(ZP, ZIP_FUNCS, "libzip.so.4", "reading xlsx workbooks");
 *     ... if ((rc = tl_lazylib_bind(&ZP_lib, &ZP, err))) return rc;
 *     ... ZP.zip_open(...)
 *
 * The soname comes from the build (CMake reads the library the program was
 * compiled against), so the version loaded is the version compiled for. */
#ifndef TL_LAZYLIB_H
#define TL_LAZYLIB_H

#include <pthread.h>
#include <stddef.h>
#include "base/base.h"

#define TL_LAZY_SLOT(f) __typeof__(f) *f;
#define TL_LAZY_NAME(f) #f,

/* One library's load state. */
typedef struct tl_lazylib {
    const char *soname;        /* e.g. "libzip.so.4" */
    const char *purpose;       /* for the error: "reading xlsx workbooks" */
    const char *const *names;  /* the functions, in slot order */
    size_t n;
    pthread_mutex_t mu;
    int state;                 /* 0 not tried, 1 bound, -1 failed */
    char why[512];             /* the failure, repeated to later callers */
} tl_lazylib;
#define TL_LAZYLIB_INIT(soname, purpose, names, n) \
    { (soname), (purpose), (names), (n), PTHREAD_MUTEX_INITIALIZER, 0, "" }

/* File-scope `static struct { one pointer per function of FUNCS } api;`
 * and `static tl_lazylib api##_lib` that binds it. */
#define TL_LAZY_API(api, FUNCS, soname, purpose)                                              \
    static struct { FUNCS(TL_LAZY_SLOT) } api;                                                \
    static const char *const api##_names[] = { FUNCS(TL_LAZY_NAME) };                         \
    _Static_assert(sizeof api == sizeof api##_names / sizeof *api##_names * sizeof(void *),  \
                   "one function pointer per name");                                         \
    static tl_lazylib api##_lib =                                                             \
        TL_LAZYLIB_INIT(soname, purpose, api##_names, sizeof api##_names / sizeof *api##_names)

/* On first call dlopens lib->soname and resolves lib->names[i] into the
 * i-th function pointer of the struct at slots (which holds exactly those
 * pointers); later calls return at once. Thread-safe. Returns 0, or
 * TL_EUNSUPPORTED with a message naming the library, what needs it and
 * dlerror()'s reason (every later call fails the same way). */
int tl_lazylib_bind(tl_lazylib *lib, void *slots, tl_err *err);

#endif
