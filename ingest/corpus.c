/* corpus.c — parallel ingest of many files: worker threads parse (hash,
 * sniff, read, tree) while the calling thread is the single LMDB writer.
 * Memory stays bounded by the traces in flight: a worker does not start a
 * new file while `jobs` traces are started and not yet committed. Starts
 * are also spaced by the estimated parse time over `jobs`, so that the
 * traces in flight are at different stages: a trace's memory grows while
 * it is parsed and peaks at its end (tree, last chunks, commit), and
 * traces started together reach that peak together. */
#include "ingest.h"

#include <malloc.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

typedef struct slot {
    int rc;
    tl_err err;
    tl_ingest_prep pp;
    int ready;
} slot;

typedef struct pool {
    tl_store *s;
    const char *const *paths;
    const tl_ingest_opts *opts;
    size_t n, next;
    slot *slots;
    size_t *done_order; /* indexes in completion order */
    size_t ndone, ncommitted;
    int jobs;
    /* start spacing: source bytes and seconds of the parses done so far
     * (the rate), the time the next start is allowed */
    double parsed_bytes, parsed_s, next_start;
    pthread_mutex_t mu;
    pthread_cond_t cv;
} pool;

/* Parse rate assumed until one file is parsed (source bytes per second
 * and thread; a 1 GB Kineto file parses at ~400 MB/s here). Too low only
 * delays the first starts; too high only staggers them less. */
#define GUESS_RATE 300e6

static double file_bytes(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) ? (double)st.st_size : 0;
}

/* Waits on the pool's condition until `until` (tl_now seconds). */
static void wait_until(pool *p, double until)
{
    double dt = until - tl_now();
    if (dt <= 0) return;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    double ns = (double)ts.tv_nsec + dt * 1e9;
    ts.tv_sec += (time_t)(ns / 1e9);
    ts.tv_nsec = (long)(ns - (double)(time_t)(ns / 1e9) * 1e9);
    pthread_cond_timedwait(&p->cv, &p->mu, &ts);
}

static void *worker(void *arg)
{
    pool *p = arg;
    for (;;) {
        pthread_mutex_lock(&p->mu);
        /* back-pressure: every started but uncommitted trace holds its
         * columns in memory, so at most `jobs` of them exist at once */
        for (;;) {
            if (p->next >= p->n) break;
            if (p->next - p->ncommitted >= (size_t)p->jobs) {
                pthread_cond_wait(&p->cv, &p->mu);
                continue;
            }
            /* spacing: while other traces are in flight, the next one
             * starts a parse time / jobs after the previous start */
            if (p->next > p->ncommitted && tl_now() < p->next_start) {
                wait_until(p, p->next_start);
                continue;
            }
            break;
        }
        if (p->next >= p->n) {
            pthread_mutex_unlock(&p->mu);
            return NULL;
        }
        size_t i = p->next++;
        double rate = p->parsed_s > 0 ? p->parsed_bytes / p->parsed_s : GUESS_RATE;
        double bytes = file_bytes(p->paths[i]), t0 = tl_now();
        p->next_start = t0 + bytes / rate / p->jobs;
        pthread_mutex_unlock(&p->mu);
        slot *sl = &p->slots[i];
        sl->rc = tl_ingest_prepare(p->s, p->paths[i], &p->opts[i], &sl->pp, &sl->err);
        pthread_mutex_lock(&p->mu);
        if (sl->rc == 0 && sl->pp.build && bytes > 0) { /* parsed (not already stored) */
            p->parsed_bytes += bytes;
            p->parsed_s += tl_now() - t0;
        }
        sl->ready = 1;
        p->done_order[p->ndone++] = i;
        pthread_cond_broadcast(&p->cv);
        pthread_mutex_unlock(&p->mu);
    }
}

int tl_ingest_many(tl_store *s, const char *const *paths, const tl_ingest_opts *opts, size_t n,
                   int jobs, tl_ingest_done_fn done, void *ctx)
{
    if (jobs < 1) jobs = 1;
    if ((size_t)jobs > n) jobs = (int)(n ? n : 1);
    pool p = {.s = s, .paths = paths, .opts = opts, .n = n, .jobs = jobs};
    p.slots = tl_xcalloc(n ? n : 1, sizeof *p.slots);
    p.done_order = tl_xcalloc(n ? n : 1, sizeof *p.done_order);
    pthread_mutex_init(&p.mu, NULL);
    pthread_cond_init(&p.cv, NULL);
    pthread_t *th = tl_xcalloc((size_t)jobs, sizeof *th);
    int started = 0;
    for (int k = 0; k < jobs; k++)
        if (pthread_create(&th[k], NULL, worker, &p) == 0) started++;
    if (!started) worker(&p); /* no threads: do it inline */
    int failures = 0;
    for (size_t c = 0; c < n; c++) {
        pthread_mutex_lock(&p.mu);
        while (p.ndone <= c) pthread_cond_wait(&p.cv, &p.mu);
        size_t i = p.done_order[c];
        pthread_mutex_unlock(&p.mu);
        slot *sl = &p.slots[i];
        if (sl->rc == 0) sl->rc = tl_ingest_commit(s, &sl->pp, &sl->err);
        if (sl->rc) failures++;
        done(ctx, i, sl->rc, &sl->pp, &sl->err);
        tl_ingest_prep_free(&sl->pp);
        /* Worker threads allocate from their own malloc arenas, which glibc
         * does not shrink by itself: hand the freed trace back to the OS so
         * peak memory tracks the traces in flight, not the corpus. */
        malloc_trim(0);
        pthread_mutex_lock(&p.mu);
        p.ncommitted++;
        pthread_cond_broadcast(&p.cv);
        pthread_mutex_unlock(&p.mu);
    }
    for (int k = 0; k < started; k++) pthread_join(th[k], NULL);
    free(th);
    free(p.slots);
    free(p.done_order);
    pthread_mutex_destroy(&p.mu);
    pthread_cond_destroy(&p.cv);
    return failures ? TL_EIO : TL_OK;
}
