/* profile.c — the stage profile (profile.h): per-thread records of stage
 * and wait times, registered once per thread and kept for the process's
 * life, summed when the report is printed. */
#include "base/profile.h"
#include "base/base.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#define MAX_STAGES 32
#define MAX_THREADS 1024

typedef struct thread_rec {
    const char *role;
    double wall[MAX_STAGES], cpu[MAX_STAGES];
    long calls[MAX_STAGES];
    double wait[3];
} thread_rec;

static atomic_int prof_on;
static double t_start;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static const char *stage_name[MAX_STAGES];
static int stage_serial[MAX_STAGES];
static int nstages;
static thread_rec *threads[MAX_THREADS];
static int nthreads;
static _Thread_local thread_rec *self;

void tl_prof_enable(int on)
{
    if (on && !atomic_load(&prof_on)) t_start = tl_now();
    atomic_store(&prof_on, on != 0);
}

int tl_prof_on(void) { return atomic_load_explicit(&prof_on, memory_order_relaxed); }

static double thread_cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The calling thread's record (registered on first use; NULL past
 * MAX_THREADS threads, whose spans are then not counted). */
static thread_rec *rec(void)
{
    if (self) return self;
    pthread_mutex_lock(&mu);
    if (nthreads < MAX_THREADS) {
        self = tl_xcalloc(1, sizeof *self);
        self->role = nthreads ? "thread" : "main";
        threads[nthreads++] = self;
    }
    pthread_mutex_unlock(&mu);
    return self;
}

void tl_prof_thread(const char *role)
{
    if (!tl_prof_on()) return;
    thread_rec *r = rec();
    if (r) r->role = role;
}

static int stage_index(const char *name, int serial)
{
    pthread_mutex_lock(&mu);
    int k = 0;
    while (k < nstages && stage_name[k] != name && strcmp(stage_name[k], name)) k++;
    if (k == nstages && nstages < MAX_STAGES) {
        stage_name[k] = name;
        stage_serial[k] = serial;
        nstages++;
    }
    pthread_mutex_unlock(&mu);
    return k < MAX_STAGES ? k : -1;
}

void tl_prof_begin(tl_prof_span *s, const char *stage, int serial)
{
    s->stage = -1;
    if (!tl_prof_on()) return;
    s->stage = stage_index(stage, serial);
    s->wall0 = tl_now();
    s->cpu0 = thread_cpu();
}

void tl_prof_end(tl_prof_span *s)
{
    if (s->stage < 0) return;
    thread_rec *r = rec();
    if (!r) return;
    r->wall[s->stage] += tl_now() - s->wall0;
    r->cpu[s->stage] += thread_cpu() - s->cpu0;
    r->calls[s->stage]++;
}

double tl_prof_wait_begin(void) { return tl_prof_on() ? tl_now() : 0; }

void tl_prof_wait_end(double t0, int kind)
{
    if (!tl_prof_on() || kind < 0 || kind > 2) return;
    thread_rec *r = rec();
    if (r) r->wait[kind] += tl_now() - t0;
}

static double process_cpu(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 + (double)ru.ru_stime.tv_sec +
           (double)ru.ru_stime.tv_usec * 1e-6;
}

void tl_prof_report(FILE *fp)
{
    if (!tl_prof_on()) return;
    double wall = tl_now() - t_start, cpu = process_cpu(), serial_wall = 0, serial_cpu = 0;
    /* the calling (main) thread's CPU outside its spans: start-up, the
     * glue between stages, what no span covers; serial in the CPU fraction */
    thread_rec *me = rec();
    double unspanned = thread_cpu();
    pthread_mutex_lock(&mu);
    for (int k = 0; me && k < nstages; k++) unspanned -= me->cpu[k];
    if (unspanned < 0) unspanned = 0;
    fprintf(fp, "profile: %-28s %-8s %7s %9s %9s\n", "stage", "kind", "calls", "wall_s", "cpu_s");
    for (int k = 0; k < nstages; k++) {
        double w = 0, c = 0;
        long n = 0;
        for (int t = 0; t < nthreads; t++) w += threads[t]->wall[k], c += threads[t]->cpu[k], n += threads[t]->calls[k];
        if (stage_serial[k]) serial_wall += w, serial_cpu += c;
        fprintf(fp, "profile: %-28s %-8s %7ld %9.3f %9.3f\n", stage_name[k], stage_serial[k] ? "serial" : "parallel",
                n, w, c);
    }
    fprintf(fp, "profile: %-8s %-10s %9s %9s %11s %13s %14s\n", "thread", "role", "stage_s", "cpu_s", "lock_wait_s",
            "writer_wait_s", "workers_wait_s");
    for (int t = 0; t < nthreads; t++) {
        const thread_rec *r = threads[t];
        double w = 0, c = 0;
        for (int k = 0; k < nstages; k++) w += r->wall[k], c += r->cpu[k];
        fprintf(fp, "profile: %-8d %-10s %9.3f %9.3f %11.3f %13.3f %14.3f\n", t, r->role, w, c, r->wait[0], r->wait[1],
                r->wait[2]);
    }
    pthread_mutex_unlock(&mu);
    double parallel = cpu > serial_cpu ? cpu - serial_cpu : 0;
    double f = serial_wall + parallel > 0 ? serial_wall / (serial_wall + parallel) : 0;
    double fc = cpu > 0 ? (serial_cpu + unspanned) / cpu : 0;
    if (fc > 1) fc = 1;
    fprintf(fp,
            "profile: wall_s=%.3f cpu_s=%.3f cores=%.2f serial_s=%.3f serial_cpu_s=%.3f parallel_cpu_s=%.3f "
            "serial_fraction=%.4f amdahl_max=%.1f main_unspanned_cpu_s=%.3f serial_cpu_fraction=%.4f\n",
            wall, cpu, wall > 0 ? cpu / wall : 0, serial_wall, serial_cpu, parallel, f, f > 0 ? 1 / f : 0, unspanned,
            fc);
}
