/* dirty_copy.c — the copies of a write transaction's chunk values into the
 * places LMDB reserved for them (MDB_RESERVE: the transaction's dirty
 * overflow pages), done on a few threads of their own while the writer
 * waits. The copy is the first touch of those freshly allocated pages
 * (their page faults) and the memcpy, or the pread of a value from the
 * ingest's spill file: work the single writer otherwise does alone. Each
 * source buffer is freed by the thread that copied it. */
#include "store/store_internal.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_COPY_THREADS 8
#define BYTES_PER_THREAD ((size_t)4 << 20) /* below this a thread costs more than it saves */

typedef struct {
    tl_dirty_copy *v;
    size_t n;
    atomic_size_t next;
    atomic_int err; /* first failed read's errno, 0 none */
} copy_work;

int tl_store_read_at(int fd, void *dst, size_t n, uint64_t off)
{
    unsigned char *p = dst;
    while (n) {
        ssize_t k = pread(fd, p, n, (off_t)off);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return k < 0 ? errno : EIO;
        p += k, n -= (size_t)k, off += (uint64_t)k;
    }
    return 0;
}

static void *copy_thread(void *arg)
{
    copy_work *cw = arg;
    for (size_t i; (i = atomic_fetch_add(&cw->next, 1)) < cw->n;) {
        tl_dirty_copy *c = &cw->v[i];
        if (c->src) {
            memcpy(c->dst, c->src, c->n);
            free(c->src);
            c->src = NULL;
            continue;
        }
        int e = tl_store_read_at(c->fd, c->dst, c->n, c->off);
        int none = 0;
        if (e) atomic_compare_exchange_strong(&cw->err, &none, e);
    }
    return NULL;
}

int tl_store_dirty_copy(tl_dirty_copy *v, size_t n)
{
    size_t bytes = 0;
    for (size_t i = 0; i < n; i++) bytes += v[i].n;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    size_t want = bytes / BYTES_PER_THREAD + 1;
    if (cpus > 0 && want > (size_t)cpus) want = (size_t)cpus;
    if (want > MAX_COPY_THREADS) want = MAX_COPY_THREADS;
    copy_work cw = {v, n, 0, 0};
    tl_thread *thr[MAX_COPY_THREADS];
    size_t started = 0;
    while (started < want && (thr[started] = tl_thread_start(copy_thread, &cw)) != NULL) started++;
    if (!started) copy_thread(&cw); /* no thread could start: the writer copies */
    for (size_t t = 0; t < started; t++) tl_thread_join(thr[t]);
    return atomic_load(&cw.err);
}
