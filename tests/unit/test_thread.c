/* test_thread.c — tl_thread_start / tl_thread_join (base/thread.c):
 * values come back through the join; finished threads are reused rather
 * than made again; every start runs at once, so threads may wait on one
 * another (and start threads of their own) without a deadlock; a child
 * of fork starts its own; and tl_par_for, which runs on them, calls every
 * index once. */
#include "tests/unit/tl_test.h"
#include "base/base.h"

#include <dirent.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/wait.h>
#include <unistd.h>

/* Kept threads of this process now (named TL_THREAD_NAME in
 * /proc/self/task; a sanitizer's own threads are not counted). */
static int os_threads(void)
{
    DIR *d = opendir("/proc/self/task");
    if (!d) return -1;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.') continue;
        char path[300], name[32] = "";
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
        FILE *f = fopen(path, "r");
        if (f && fgets(name, sizeof name, f)) n += strncmp(name, TL_THREAD_NAME "\n", sizeof TL_THREAD_NAME) == 0;
        if (f) fclose(f);
    }
    closedir(d);
    return n;
}

static void *twice(void *arg) { return (void *)((intptr_t)arg * 2); }

/* A barrier: each thread waits until all n have arrived, which never
 * happens unless every started thread runs at the same time. */
typedef struct ring {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int arrived, n;
} ring;

static void *arrive_and_wait(void *arg)
{
    ring *r = arg;
    pthread_mutex_lock(&r->mu);
    r->arrived++;
    pthread_cond_broadcast(&r->cv);
    while (r->arrived < r->n) pthread_cond_wait(&r->cv, &r->mu);
    pthread_mutex_unlock(&r->mu);
    return NULL;
}

static void test_values_and_reuse(void)
{
    int before = os_threads();
    for (intptr_t i = 0; i < 200; i++) {
        tl_thread *t = tl_thread_start(twice, (void *)i);
        CHECK(t != NULL);
        if (t) CHECK_EQ_I((intptr_t)tl_thread_join(t), 2 * i);
    }
    /* one start at a time: one kept thread did all 200 */
    CHECK_EQ_I(os_threads(), before + 1);
    /* 8 that wait for one another: 8 threads at once, 7 of them new */
    for (int round = 0; round < 3; round++) {
        ring r = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 8};
        tl_thread *t[8];
        for (int i = 0; i < 8; i++) t[i] = tl_thread_start(arrive_and_wait, &r);
        for (int i = 7; i >= 0; i--)
            if (t[i]) tl_thread_join(t[i]);
        CHECK_EQ_I(r.arrived, 8);
        CHECK_EQ_I(os_threads(), before + 8); /* later rounds reuse the same 8 */
    }
    for (intptr_t i = 0; i < 8; i++) {
        tl_thread *t = tl_thread_start(twice, (void *)(i + 100));
        if (t) CHECK_EQ_I((intptr_t)tl_thread_join(t), 2 * (i + 100));
    }
}

/* starts two threads that wait for each other, from inside a thread */
static void *nested(void *arg)
{
    ring *r = arg;
    tl_thread *a = tl_thread_start(arrive_and_wait, r), *b = tl_thread_start(arrive_and_wait, r);
    arrive_and_wait(r);
    if (a) tl_thread_join(a);
    if (b) tl_thread_join(b);
    return (void *)1;
}

static void test_all_run_at_once(void)
{
    ring r = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 24};
    tl_thread *t[8];
    for (int i = 0; i < 8; i++) t[i] = tl_thread_start(nested, &r);
    for (int i = 0; i < 8; i++) {
        CHECK(t[i] != NULL);
        if (t[i]) CHECK_EQ_I((intptr_t)tl_thread_join(t[i]), 1);
    }
    CHECK_EQ_I(r.arrived, 24);
}

static atomic_int seen[1000];

static void mark(void *ctx, size_t i)
{
    (void)ctx;
    atomic_fetch_add(&seen[i], 1);
}

static void test_par_for(void)
{
    for (int round = 0; round < 20; round++) tl_par_for(1000, 1 + round % 5, NULL, mark, NULL);
    int once = 1;
    for (int i = 0; i < 1000; i++) once &= atomic_load(&seen[i]) == 20;
    CHECK(once);
}

/* A child of fork has no kept threads: its starts make new ones (with the
 * parent's idle list, it would hand work to threads that are not there
 * and wait for ever). */
static void test_fork(void)
{
    tl_thread *t = tl_thread_start(twice, (void *)1);
    if (t) tl_thread_join(t); /* the parent has an idle kept thread now */
    pid_t pid = fork();
    if (pid == 0) {
        alarm(10); /* a hang ends the child with SIGALRM */
        tl_thread *c = tl_thread_start(twice, (void *)21);
        _exit(c && (intptr_t)tl_thread_join(c) == 42 ? 0 : 1);
    }
    int st = 0;
    CHECK(pid > 0 && waitpid(pid, &st, 0) == pid);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

int main(void)
{
    test_values_and_reuse();
    test_all_run_at_once();
    test_par_for();
    test_fork();
    return tl_test_done("test_thread");
}
