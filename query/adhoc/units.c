/* units.c — time columns of results in the unit asked for (`--units`):
 * stored times are integer nanoseconds; a converted column becomes a
 * double in the unit and its header names it ("dur (ms)"). */
#include "query/adhoc/adhoc.h"
#include "query/adhoc/adhoc_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

int tl_adhoc_unit(const char *text, const char **unit, double *div)
{
    static const struct { const char *in, *name; double div; } U[] = {
        {"ns", "ns", 1}, {"us", "us", 1e3}, {"\xc2\xb5s", "us", 1e3}, {"\xce\xbcs", "us", 1e3},
        {"ms", "ms", 1e6}, {"s", "s", 1e9},
    };
    for (size_t k = 0; k < sizeof U / sizeof *U; k++)
        if (text && !strcasecmp(text, U[k].in)) {
            *unit = U[k].name;
            *div = U[k].div;
            return 0;
        }
    return -1;
}

/* The stored and derived columns that hold nanoseconds. */
static int ns_name(const char *s, size_t n)
{
    static const char *const NS[] = {"ts", "dur", "end_ts", "kernel_time", "ts_min", "ts_max", "gpu_ts_min",
                                     "gpu_ts_max", "gpu_span"};
    for (size_t k = 0; k < sizeof NS / sizeof *NS; k++)
        if (strlen(NS[k]) == n && !strncasecmp(s, NS[k], n)) return 1;
    return n > 3 && !strncasecmp(s + n - 3, "_ns", 3);
}

int aq_colref_is_time(const aq_colref *c)
{
    switch (c->def->src) {
    case AQ_S_I64: return !strcmp(c->def->store, TL_C_TS) || !strcmp(c->def->store, TL_C_DUR);
    case AQ_S_END: case AQ_S_KTIME: case AQ_S_GPU_SPAN: return 1;
    case AQ_S_CATNUM: return ns_name(c->def->store, strlen(c->def->store));
    default: return 0;
    }
}

int tl_sql_time_name(const char *name)
{
    static const char *const FN[] = {"sum(", "total(", "avg(", "min(", "max(", "median("};
    size_t n = strlen(name);
    for (size_t k = 0; k < sizeof FN / sizeof *FN; k++) {
        size_t f = strlen(FN[k]);
        if (n > f + 1 && !strncasecmp(name, FN[k], f) && name[n - 1] == ')') {
            name += f;
            n -= f + 1;
            break;
        }
    }
    const char *dot = memchr(name, '.', n); /* k.dur */
    if (dot) { n -= (size_t)(dot + 1 - name); name = dot + 1; }
    return ns_name(name, n);
}

void tl_adhoc_convert_times(tl_table *t, const uint8_t *is_time, const char *unit, double div)
{
    for (size_t c = 0; c < t->ncols; c++) {
        tl_column *col = &t->cols[c];
        if (!is_time[c] || (col->type != TL_I64 && col->type != TL_F64)) continue;
        char name[512];
        size_t n = strlen(col->name);
        if (n > 3 && !strcasecmp(col->name + n - 3, "_ns"))
            snprintf(name, sizeof name, "%.*s_%s", (int)(n - 3), col->name, unit);
        else
            snprintf(name, sizeof name, "%s (%s)", col->name, unit);
        if (col->type == TL_I64) {
            /* in place: int64 and double cells have one size; a missing
             * double is NaN */
            for (size_t r = 0; r < t->nrows; r++) {
                double d = tl_table_is_missing(t, c, r) ? NAN : (double)col->v.i[r] / div;
                memcpy(&col->v.f[r], &d, sizeof d);
            }
            col->type = TL_F64;
            col->as_float = 0;
        } else {
            for (size_t r = 0; r < t->nrows; r++) col->v.f[r] /= div;
        }
        col->name = tl_arena_strdup(&t->arena, name);
    }
}
