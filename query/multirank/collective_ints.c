/* collective_ints.c — which time columns of the collective sheets print as
 * integers. The reference keeps a trace's JSON-integer ts and dur as Python
 * ints: its long table's ts (dur) column is int64 when every collective
 * kernel of every rank has an integer ts (dur), as pandas infers one type
 * from all rows. What it derives by subtraction, min, max and sums stays
 * int64 (skews, waits, comm_latency, wall times, groupby sum/min/max/first/
 * last); means, medians, std and divisions are float64; and a column with a
 * missing cell is float64 (pandas' int+NaN rule, applied afterwards by
 * tl_table_int_na_as_float: a sub-group's collective has no cell for the
 * ranks outside it). The sheets compute in doubles; this turns the columns
 * that the reference holds as int64 into integer columns at the end. */
#include "query/multirank/collective_internal.h"

#include <math.h>
#include <string.h>

enum { NEED_TS = 1, NEED_DUR = 2, PER_RANK = 4, AGGREGATED = 8, EVERY_RANK = 16 };

typedef struct int_rule {
    const char *sheet, *col;
    int flags;
} int_rule;

static const int_rule RULES[] = {
    {"nccl_long", "ts", NEED_TS},
    {"nccl_long", "dur", NEED_DUR},
    {"nccl_summary_long", "dur", NEED_DUR | AGGREGATED},
    {"nccl_implicit_sync", "comm_latency", NEED_DUR},
    {"nccl_implicit_sync", "skew in start time", NEED_TS},
    {"nccl_implicit_sync", "skew in end time", NEED_TS | NEED_DUR},
    {"nccl_implicit_sync", "ts", NEED_TS | PER_RANK},
    {"nccl_implicit_sync", "dur", NEED_DUR | PER_RANK},
    {"nccl_implicit_sync", "wait_time", NEED_TS | PER_RANK},
    {"nccl_summary_implicit_sync", "comm_latency", NEED_DUR | AGGREGATED},
    {"nccl_summary_implicit_sync", "skew in start time", NEED_TS | AGGREGATED},
    {"nccl_summary_implicit_sync", "skew in end time", NEED_TS | NEED_DUR | AGGREGATED},
    {"nccl_all2allv", "wall_time (us)", NEED_TS | NEED_DUR},
    {"nccl_all2allv", "max_rank_dur (us)", NEED_DUR},
    {"nccl_all2allv", "min_rank_dur (us)", NEED_DUR},
    {"nccl_all2allv", "skew in start time", NEED_TS},
    {"nccl_all2allv", "skew in end time", NEED_TS | NEED_DUR},
    {"nccl_all2allv", "ts", NEED_TS | PER_RANK},
    {"nccl_all2allv", "dur", NEED_DUR | PER_RANK},
    {"nccl_all2allv", "skew in start time", NEED_TS | PER_RANK},
    {"nccl_all2allv", "skew in end time", NEED_TS | NEED_DUR | PER_RANK},
    {"nccl_summary_all2allv", "wall_time (us)", NEED_TS | NEED_DUR | AGGREGATED},
    {"nccl_summary_all2allv", "Total wall_time (us)", NEED_TS | NEED_DUR},
    {"nccl_summary_all2allv", "max_rank_dur (us)", NEED_DUR | AGGREGATED},
    {"nccl_summary_all2allv", "skew in start time", NEED_TS | AGGREGATED},
    {"nccl_summary_all2allv", "skew in end time", NEED_TS | NEED_DUR | AGGREGATED},
    {"straggler_summary", "total_nccl_dur_us", NEED_DUR},
    /* round(sum of a rank's waits, 1): int64 only when every rank's wait
     * column is (no rank misses an implicit-sync collective) */
    {"straggler_summary", "total_wait_time_us", NEED_TS | EVERY_RANK},
};

/* pandas aggregations that keep an int64 column int64 */
static int int_agg(const char *a)
{
    return !strcmp(a, "sum") || !strcmp(a, "min") || !strcmp(a, "max") || !strcmp(a, "first") ||
           !strcmp(a, "last");
}

/* 1 if column name `name` is what rule r names */
static int rule_matches(const int_rule *r, const char *name)
{
    size_t n = strlen(r->col);
    if (r->flags & PER_RANK) { /* rank_<digits>_<col> */
        if (strncmp(name, "rank_", 5)) return 0;
        const char *p = name + 5;
        if (*p < '0' || *p > '9') return 0;
        while (*p >= '0' && *p <= '9') p++;
        return *p == '_' && !strcmp(p + 1, r->col);
    }
    if (r->flags & AGGREGATED) /* <col>_<agg> */
        return !strncmp(name, r->col, n) && name[n] == '_' && int_agg(name + n + 1);
    return !strcmp(name, r->col);
}

/* 1 when every rank with an implicit-sync collective has a wait in each */
static int every_rank_in_every_sync(const coll_run *run)
{
    for (size_t r = 0; r < run->world; r++) {
        size_t have = 0;
        for (size_t i = 0; i < run->nsync; i++) have += !isnan(run->sync_wait[i * run->world + r]);
        if (have && have != run->nsync) return 0;
    }
    return 1;
}

void coll_int_time_columns(const coll_run *run, tl_table *t)
{
    int have = (run->ts_int ? NEED_TS : 0) | (run->dur_int ? NEED_DUR : 0);
    if (!have) return;
    int every = -1; /* computed on first need */
    for (size_t c = 0; c < t->ncols; c++) {
        if (t->cols[c].type != TL_F64) continue;
        for (size_t k = 0; k < sizeof RULES / sizeof *RULES; k++) {
            const int_rule *r = &RULES[k];
            int need = r->flags & (NEED_TS | NEED_DUR);
            if (strcmp(t->name, r->sheet) || (need & have) != need || !rule_matches(r, t->cols[c].name)) continue;
            if (r->flags & EVERY_RANK) {
                if (every < 0) every = every_rank_in_every_sync(run);
                if (!every) continue;
            }
            tl_table_f64_to_i64(t, c);
            break;
        }
    }
}
