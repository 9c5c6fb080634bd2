/* profile.h — the stage profile (TL_PROFILE=1 or --profile): wall and CPU
 * time per stage and per thread, time spent waiting on locks and on the
 * store writer, and the serial fraction of the run.
 *
 * A stage is a named span of one thread's work (a file's parse, a rank's
 * report, the writer's commit). Serial stages are those that one thread
 * runs for the whole run and no second core can share (the single LMDB
 * writer with its fsyncs, a reducer, the workbook writing): with
 * unlimited cores the run takes at least their wall time S. The rest of
 * the work is the process's CPU time less the serial stages' own, P
 * (helper threads of a stage, hashing, encoding, deflating, count in P), so
 *     serial fraction = S / (S + P)
 * and Amdahl's bound on the speed-up is 1 / serial fraction. S is wall
 * time: on a busy machine it grows with the wait for a core, so the
 * fraction errs high. The CPU form, serial_cpu_fraction, counts the work
 * alone: the serial stages' CPU time plus the main thread's CPU outside
 * any span (start-up, the glue between stages), over the process's CPU
 * time; fsync and waits for a core do not count there. Spans are
 * per file or per rank, never per event, so a profiled run costs nothing
 * measurable; when the profile is off every call returns at once. */
#ifndef TL_PROFILE_H
#define TL_PROFILE_H

#include <stdio.h>

enum { TL_PROF_PARALLEL = 0, TL_PROF_SERIAL = 1 };
/* What a thread waits for (tl_prof_wait_*). */
enum { TL_PROF_WAIT_LOCK = 0, TL_PROF_WAIT_WRITER = 1, TL_PROF_WAIT_WORKERS = 2 };

void tl_prof_enable(int on);
int tl_prof_on(void);

/* One span of the calling thread: begin, then end adds its wall and
 * thread-CPU time to the stage (name: a string literal). */
typedef struct tl_prof_span {
    int stage;           /* -1: profile off */
    double wall0, cpu0;
} tl_prof_span;
void tl_prof_begin(tl_prof_span *s, const char *stage, int serial);
void tl_prof_end(tl_prof_span *s);

/* A wait of the calling thread (a mutex, a condition variable): the time
 * between begin and end counts as waiting of that kind. */
double tl_prof_wait_begin(void);
void tl_prof_wait_end(double t0, int kind);

/* Names the calling thread in the per-thread table ("writer", "worker"). */
void tl_prof_thread(const char *role);

/* Prints the profile of the run so far on fp: per stage, per thread, and
 * the summary line
 *   profile: wall_s=W cpu_s=C cores=C/W serial_s=S serial_cpu_s=.. parallel_cpu_s=P
 *            serial_fraction=S/(S+P) amdahl_max=(S+P)/S main_unspanned_cpu_s=M
 *            serial_cpu_fraction=(serial_cpu_s+M)/C
 * (machine-readable). Nothing when the profile is off. */
void tl_prof_report(FILE *fp);

#endif
