/* sys.c — clocks, memory probes, the CPUs at hand and directory creation */
#include "base/base.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <xxhash.h>

/* ---- misc */
double tl_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* set once before any worker thread starts */
static int mem_marks_on;

void tl_mem_marks(int on) { mem_marks_on = on; }

void tl_mem_mark(const char *stage)
{
    if (!mem_marks_on) return;
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return;
    char line[256];
    long hwm = 0, rss = 0, anon = 0, file = 0;
    while (fgets(line, sizeof line, f)) {
        sscanf(line, "VmHWM: %ld", &hwm);
        sscanf(line, "VmRSS: %ld", &rss);
        sscanf(line, "RssAnon: %ld", &anon);
        sscanf(line, "RssFile: %ld", &file);
    }
    fclose(f);
    unsigned long trims = tl_big_trims();
    char extra[48] = "";
    if (trims) snprintf(extra, sizeof extra, " trims=%lu", trims);
    fprintf(stderr, "mem: %-14s hwm=%.1f rss=%.1f anon=%.1f file=%.1f%s\n", stage,
            hwm / 1024.0, rss / 1024.0, anon / 1024.0, file / 1024.0, extra);
}

int64_t tl_wall_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int tl_cpus_allowed(void)
{
    cpu_set_t set;
    int n = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
    return n < 1 ? 1 : n;
}

long tl_peak_rss_kb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

int tl_mkdir_p(const char *path, tl_err *err)
{
    char tmp[4096];
    size_t n = strlen(path);
    if (n >= sizeof tmp) return tl_errf(err, TL_EIO, "%s: path too long", path);
    memcpy(tmp, path, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (tmp[i] == '/' || tmp[i] == 0) {
            char c = tmp[i];
            tmp[i] = 0;
            if (mkdir(tmp, 0777) != 0 && errno != EEXIST)
                return tl_errf(err, TL_EIO, "%s: cannot create directory: %s", tmp, strerror(errno));
            tmp[i] = c;
        }
    }
    return TL_OK;
}
