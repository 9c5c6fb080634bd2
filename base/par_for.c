/* par_for.c — a loop whose iterations run on a few threads: each thread
 * takes the next undone index until none is left, the calling thread
 * among them. */
#include "base/base.h"
#include "base/profile.h"

#include <stdatomic.h>

#define MAX_THREADS 16

typedef struct par_loop {
    void (*fn)(void *ctx, size_t i);
    void *ctx;
    size_t n;
    const char *stage;
    atomic_size_t next;
} par_loop;

static void *par_run(void *arg)
{
    par_loop *l = arg;
    tl_prof_span sp;
    if (l->stage) tl_prof_begin(&sp, l->stage, TL_PROF_PARALLEL);
    for (size_t i; (i = atomic_fetch_add(&l->next, 1)) < l->n;) l->fn(l->ctx, i);
    if (l->stage) tl_prof_end(&sp);
    return NULL;
}

void tl_par_for(size_t n, int threads, const char *stage, void (*fn)(void *ctx, size_t i), void *ctx)
{
    par_loop l = {fn, ctx, n, stage};
    atomic_init(&l.next, 0);
    if (threads < 1) threads = 1;
    if ((size_t)threads > n) threads = n ? (int)n : 1;
    tl_thread *th[MAX_THREADS];
    int started = 0;
    for (int k = 1; k < threads && k < MAX_THREADS; k++)
        if ((th[started] = tl_thread_start(par_run, &l)) != NULL) started++;
    par_run(&l);
    for (int k = 0; k < started; k++) tl_thread_join(th[k]);
}
