/* thread.c — threads kept for the life of the process. A command that
 * starts a thread per rank, per file or per loop (a rank's two helper
 * threads, a parallel loop's workers, a file's hashing thread) would
 * otherwise create and end hundreds of them: each creation maps a stack
 * and each end gives its pages back, operations on the process's address
 * space that stall the page faults of every other thread and interrupt
 * every core it runs on to flush their TLBs. A finished thread instead
 * waits, idle, for the next function to run; a start with none idle
 * creates one more. So every start runs at once on a thread of its own,
 * as pthread_create does: callers may wait on one another. A child of
 * fork (a Python program using the library) has none of the kept threads:
 * it starts with an empty list. */
#include "base/base.h"

#include <pthread.h>
#include <stdlib.h>

struct tl_thread {
    void *(*fn)(void *);
    void *arg, *ret;
    int done;
    pthread_cond_t cv; /* signalled when done */
};

typedef struct idle_thread {
    pthread_cond_t cv; /* signalled when task is set */
    tl_thread *task;
    struct idle_thread *next;
} idle_thread;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static idle_thread *idle; /* threads waiting for a task */
static pthread_once_t fork_handler = PTHREAD_ONCE_INIT;

/* In the child of a fork: the kept threads stayed in the parent. */
static void forget_threads(void)
{
    idle = NULL;
    pthread_mutex_init(&mu, NULL);
}

static void install_fork_handler(void) { pthread_atfork(NULL, NULL, forget_threads); }

static void *kept_thread(void *arg)
{
    idle_thread *w = arg;
    pthread_setname_np(pthread_self(), TL_THREAD_NAME); /* as top -H and gdb show it */
    pthread_mutex_lock(&mu);
    for (;;) {
        while (!w->task) pthread_cond_wait(&w->cv, &mu);
        tl_thread *t = w->task;
        pthread_mutex_unlock(&mu);
        void *ret = t->fn(t->arg);
        pthread_mutex_lock(&mu);
        t->ret = ret;
        t->done = 1;
        pthread_cond_signal(&t->cv);
        w->task = NULL;
        w->next = idle;
        idle = w;
    }
    return NULL;
}

tl_thread *tl_thread_start(void *(*fn)(void *), void *arg)
{
    tl_thread *t = malloc(sizeof *t);
    if (!t) return NULL;
    *t = (tl_thread){.fn = fn, .arg = arg};
    pthread_cond_init(&t->cv, NULL);
    pthread_once(&fork_handler, install_fork_handler);
    pthread_mutex_lock(&mu);
    idle_thread *w = idle;
    if (w) {
        idle = w->next;
        w->task = t;
        pthread_cond_signal(&w->cv);
        pthread_mutex_unlock(&mu);
        return t;
    }
    pthread_mutex_unlock(&mu);
    w = malloc(sizeof *w);
    pthread_attr_t attr;
    pthread_t th;
    int ok = w && pthread_attr_init(&attr) == 0;
    if (ok) {
        *w = (idle_thread){.task = t};
        pthread_cond_init(&w->cv, NULL);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        ok = pthread_create(&th, &attr, kept_thread, w) == 0;
        pthread_attr_destroy(&attr);
        if (!ok) pthread_cond_destroy(&w->cv);
    }
    if (ok) return t;
    free(w);
    pthread_cond_destroy(&t->cv);
    free(t);
    return NULL;
}

void *tl_thread_join(tl_thread *t)
{
    pthread_mutex_lock(&mu);
    while (!t->done) pthread_cond_wait(&t->cv, &mu);
    pthread_mutex_unlock(&mu);
    void *ret = t->ret;
    pthread_cond_destroy(&t->cv);
    free(t);
    return ret;
}
