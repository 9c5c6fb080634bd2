/* corpus.c — parallel ingest of many files: worker threads parse (hash,
 * sniff, read, tree) and seal (encode) traces while the calling thread is
 * the single LMDB writer. Memory stays bounded by the traces in flight: a
 * worker does not start a new file while `jobs` + 1 traces are started and
 * not yet committed — one per worker, and one sealed trace the writer is
 * committing (with `jobs` only, a worker that finished would sit idle for
 * the whole commit of the trace before). A trace's memory peaks in its
 * tree build (about a third of its JSON size) and drops to its encoded
 * size once sealed, which is what a trace waiting for the writer holds.
 * Workers start at once: the seal on the workers already keeps the peaks
 * short, and staggering the starts would leave a core idle for half a
 * parse at each end of the run. The writer only commits: freeing a
 * committed trace (and handing its pages back to the OS) is done by the
 * next worker to come for work, so the one thread every trace goes
 * through spends its time on LMDB alone; workers out of files stay until
 * every trace is committed, to free the last ones too. With fewer files
 * in flight than CPUs, each file is parsed in parts on its share of them. */
#include "ingest/ingest.h"
#include "base/profile.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

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
    int inline_run; /* no threads: the caller parses every file first, then commits */
    slot *slots;
    size_t *done_order; /* indexes in completion order */
    size_t ndone;
    size_t *committed;  /* indexes committed, to be freed by a worker */
    size_t ncommitted, nfreeing, nfreed;
    int jobs;
    int file_threads; /* parse threads of each file (tl_ingest_file_threads) */
    pthread_mutex_t mu;
    pthread_cond_t cv;
} pool;

/* The heap a worker may keep between traces: half the per-worker bound
 * on peak RSS (docs/SCALING.md), so that trims stay off while the traces
 * in flight are small against it. */
#define HEAP_PER_WORKER ((uint64_t)64 << 20)

/* Locks p->mu, counting the time it takes in the profile. */
static void lock(pool *p)
{
    double t0 = tl_prof_wait_begin();
    pthread_mutex_lock(&p->mu);
    tl_prof_wait_end(t0, TL_PROF_WAIT_LOCK);
}

/* Frees committed trace i; called with p->mu held, returns with it held. */
static void retire(pool *p, size_t i)
{
    pthread_mutex_unlock(&p->mu);
    tl_prof_span sp;
    tl_prof_begin(&sp, "ingest: free+trim", TL_PROF_PARALLEL);
    tl_ingest_prep_free(&p->slots[i].pp);
    /* Worker threads allocate from their own malloc arenas, which glibc
     * does not shrink by itself: past HEAP_PER_WORKER a worker, hand the
     * freed memory back to the OS so peak memory tracks the traces in
     * flight, not the corpus. Below it the next trace reuses the pages. */
    tl_heap_trim_above((uint64_t)p->jobs * HEAP_PER_WORKER);
    tl_prof_end(&sp);
    lock(p);
    p->nfreed++;
    pthread_cond_broadcast(&p->cv);
}

static void *worker(void *arg)
{
    pool *p = arg;
    tl_prof_thread("worker");
    for (;;) {
        lock(p);
        /* back-pressure: every started trace not yet committed and freed
         * holds its columns in memory, so at most `jobs` + 1 of them exist
         * at once (the extra one is sealed: its encoded form only) */
        double t0 = tl_prof_wait_begin();
        for (;;) {
            int can_start = p->next < p->n && p->next - p->nfreed < (size_t)p->jobs + 1;
            int finished = p->next >= p->n && (p->inline_run || p->nfreeing == p->n);
            if (p->nfreeing < p->ncommitted || can_start || finished) break;
            pthread_cond_wait(&p->cv, &p->mu);
        }
        tl_prof_wait_end(t0, TL_PROF_WAIT_WRITER);
        if (p->nfreeing < p->ncommitted) { /* a committed trace first: its memory gates the next start */
            retire(p, p->committed[p->nfreeing++]);
            pthread_mutex_unlock(&p->mu);
            continue;
        }
        if (p->next >= p->n) { /* and every trace committed and freed, or being freed */
            pthread_mutex_unlock(&p->mu);
            return NULL;
        }
        size_t i = p->next++;
        pthread_mutex_unlock(&p->mu);
        slot *sl = &p->slots[i];
        tl_ingest_opts o = p->opts[i];
        if (p->jobs > 1) o.parse_threads = tl_ingest_file_threads(&o, p->file_threads);
        tl_prof_span sp;
        tl_prof_begin(&sp, "ingest: parse+seal", TL_PROF_PARALLEL);
        sl->rc = tl_ingest_prepare(p->s, p->paths[i], &o, &sl->pp, &sl->err);
        tl_prof_end(&sp);
        lock(p);
        sl->ready = 1;
        p->done_order[p->ndone++] = i;
        pthread_cond_broadcast(&p->cv);
        pthread_mutex_unlock(&p->mu);
    }
}

int tl_ingest_file_threads(const tl_ingest_opts *o, int share)
{
    if (o->parse_threads > 0) return o->parse_threads;
    int t = o->parse_parts > 0 && o->parse_parts < share ? o->parse_parts : share;
    return t < 1 ? 1 : t;
}

int tl_ingest_many(tl_store *s, const char *const *paths, const tl_ingest_opts *opts, size_t n,
                   int jobs, tl_ingest_done_fn done, void *ctx)
{
    if (jobs < 1) jobs = 1;
    if ((size_t)jobs > n) jobs = (int)(n ? n : 1);
    pool p = {.s = s, .paths = paths, .opts = opts, .n = n, .jobs = jobs};
    p.file_threads = tl_cpus_allowed() / jobs; /* 8 files on 16 CPUs: 2 threads each */
    p.slots = tl_xcalloc(n ? n : 1, sizeof *p.slots);
    p.done_order = tl_xcalloc(n ? n : 1, sizeof *p.done_order);
    p.committed = tl_xcalloc(n ? n : 1, sizeof *p.committed);
    pthread_mutex_init(&p.mu, NULL);
    pthread_cond_init(&p.cv, NULL);
    tl_thread **th = tl_xcalloc((size_t)jobs, sizeof *th);
    int started = 0;
    for (int k = 0; k < jobs; k++)
        if ((th[started] = tl_thread_start(worker, &p)) != NULL) started++;
    if (!started) { /* no threads: parse everything inline first (the
                     * back-pressure would wait for commits that this
                     * thread has yet to make) */
        p.jobs = (int)(n ? n : 1);
        p.inline_run = 1;
        worker(&p);
    }
    int failures = 0;
    tl_prof_thread("writer");
    for (size_t c = 0; c < n; c++) {
        lock(&p);
        double t0 = tl_prof_wait_begin();
        while (p.ndone <= c) pthread_cond_wait(&p.cv, &p.mu);
        tl_prof_wait_end(t0, TL_PROF_WAIT_WORKERS);
        size_t i = p.done_order[c];
        pthread_mutex_unlock(&p.mu);
        slot *sl = &p.slots[i];
        tl_prof_span sp;
        tl_prof_begin(&sp, "ingest: commit (writer)", TL_PROF_SERIAL);
        if (sl->rc == 0) sl->rc = tl_ingest_commit(s, &sl->pp, &sl->err);
        if (sl->rc) failures++;
        done(ctx, i, sl->rc, &sl->pp, &sl->err);
        tl_prof_end(&sp);
        lock(&p);
        p.committed[p.ncommitted++] = i;
        pthread_cond_broadcast(&p.cv);
        pthread_mutex_unlock(&p.mu);
    }
    for (int k = 0; k < started; k++) tl_thread_join(th[k]);
    /* without threads, every trace is still to be freed */
    lock(&p);
    while (p.nfreeing < p.ncommitted) retire(&p, p.committed[p.nfreeing++]);
    pthread_mutex_unlock(&p.mu);
    free(th);

    free(p.slots);
    free(p.done_order);
    free(p.committed);
    pthread_mutex_destroy(&p.mu);
    pthread_cond_destroy(&p.cv);
    return failures ? TL_EIO : TL_OK;
}
