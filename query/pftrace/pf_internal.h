/* pf_internal.h — what the pftrace reports share: the stored complete
 * events as the reference's event dicts (pf_events.c), Python's int() and
 * str() of args values, and Python regexes (pf_regex.c). */
#ifndef TL_PF_INTERNAL_H
#define TL_PF_INTERNAL_H

#include <regex.h>
#include <stddef.h>
#include <stdint.h>
#include "query/core/pyval.h"
#include "query/core/table.h"
#include "query/core/trace.h"

typedef struct pf_ev {
    const char *name, *cat; /* "" when absent */
    int64_t pid, tid;
    int64_t ts_us, dur_us;  /* the JSON's µs as Python's int() truncates them */
    const tl_pv *args;      /* the args dict, or NULL ({} in the reference) */
} pf_ev;

typedef struct pf_events {
    pf_ev *v;
    size_t n;
    tl_arena arena;
} pf_events;

/* Reads every complete event of t (args parsed). TL_EFORMAT when an args
 * text does not parse or a pid/tid is a string that int() refuses. */
int pf_events_load(const tl_trace *t, pf_events *out, tl_err *err);
void pf_events_free(pf_events *e);

/* args[key]: the value (NULL for None) and *present whether the key is
 * there (the last one of duplicates, as json.loads keeps). */
const tl_pv *pf_arg(const pf_ev *e, const char *key, int *present);
/* Python int(v): 0 and *out, or -1 where int() raises (None, text that is
 * not an integer, containers, nan/inf, out of int64). */
int pf_py_int(const tl_pv *v, int64_t *out);
/* Python str(v) into the arena. */
const char *pf_py_str(tl_arena *a, const tl_pv *v);
/* Python's str.lower() of ASCII letters (other bytes as they are), into
 * the arena. */
const char *pf_lower(tl_arena *a, const char *s);
/* re.sub(r"\d+", "", s) for ASCII digits, into the arena. */
const char *pf_strip_digits(tl_arena *a, const char *s);

/* A Python regex (the subset rank and kernel regexes use: \d \D \w \W \s
 * \S, escapes, classes, (?:...) groups) compiled as POSIX ERE; 0, or
 * TL_EUSAGE naming what is not supported. re.search semantics. */
int pf_regex_compile(const char *py, regex_t *re, tl_err *err);

/* Sample statistics of int64 values (sorted in place): mean, median (the
 * middle, or the mean of the two middles), min, max and the population
 * standard deviation, as Python's statistics.pstdev / numpy's std(ddof=0). */
typedef struct pf_stats {
    double avg, med, std;
    int64_t min, max, sum;
    size_t n;
} pf_stats;
void pf_stats_of(int64_t *v, size_t n, pf_stats *s);

/* ---- the hip_activity report (activity.c, activity_summary.c) */

/* A GPU event (a kernel, copy or collective on an agent) or a HIP API call. */
typedef struct pf_act_ev {
    const char *name;
    int64_t ts_ns, dur_ns;
    int64_t grid, block, vgpr, accum_vgpr, sgpr, lds, scratch; /* _nz(): 0 when absent */
    int64_t stream, op;                                         /* HIP calls: 0 when absent */
    size_t seq;                                                 /* event order: ties of the sort */
} pf_act_ev;

typedef struct pf_act_list {
    pf_act_ev *v;
    size_t n, cap;
} pf_act_list;

/* The kernel summary over evs[0..n) (kernel_summary sheet), by launch
 * configuration or by name; baseline: the ns that Time % divides by. */
tl_table *pf_kernel_summary(const pf_act_ev *const *evs, size_t n, int64_t baseline, int by_name, int merge,
                            tl_arena *a);
/* The HIP API summary (hip_summary sheet); group as the flag says. */
tl_table *pf_hip_summary(const pf_act_list *hip, const char *group, tl_arena *a);
/* human_time_ns(): "1.500 ms", "2.000 μs", "12 ns". */
const char *pf_human_ns(tl_arena *a, double ns);

#endif
