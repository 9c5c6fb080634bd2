/* lazylib.c — first-use dlopen/dlsym of optional libraries (lazylib.h). */
#include "base/lazylib.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

int tl_lazylib_bind(tl_lazylib *lib, void *slots, tl_err *err)
{
    pthread_mutex_lock(&lib->mu);
    if (lib->state == 0) {
        lib->state = -1;
        /* RTLD_LOCAL: its symbols serve only these slots. Never dlclosed:
         * the pointers stay valid for the life of the process. */
        void *h = dlopen(lib->soname, RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            snprintf(lib->why, sizeof lib->why, "%s", dlerror());
        } else {
            size_t i, n = lib->n;
            for (i = 0; i < n; i++) {
                void *sym = dlsym(h, lib->names[i]);
                if (!sym) break;
                /* slot i of a struct of function pointers: copied in as
                 * bytes, the way POSIX has dlsym results stored in one */
                memcpy((char *)slots + i * sizeof sym, &sym, sizeof sym);
            }
            if (i < n) snprintf(lib->why, sizeof lib->why, "%s has no symbol %s", lib->soname, lib->names[i]);
            else lib->state = 1;
        }
    }
    int ok = lib->state == 1;
    pthread_mutex_unlock(&lib->mu);
    if (ok) return 0;
    return tl_errf(err, TL_EUNSUPPORTED, "%s needs %s, which could not be loaded: %s "
                   "(install the package that provides it)", lib->purpose, lib->soname, lib->why);
}
