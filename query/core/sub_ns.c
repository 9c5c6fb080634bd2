/* sub_ns.c — the sub_ns table (ingest/schema.h): the µs doubles of the
 * events whose ts or dur text has digits below the ns, which the ns
 * columns round off. Read and checked here; tl_trace_load_cols spreads
 * them over per-event arrays (tl_trace_ts_us), chunk scans walk them in
 * row order. */
#include "query/core/trace.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

static int damaged(tl_err *err, uint64_t id, const char *col, const char *what)
{
    char hex[17];
    tl_id_format(id, hex);
    return tl_errf(err, TL_ESTORE, "trace %s: column %s.%s %s (run `tracelens check`)", hex, TL_T_SUB_NS, col, what);
}

/* One column of the table, of type, n rows (the row column's count;
 * SIZE_MAX: the row column itself). */
static int view(tl_reader *r, uint64_t id, const char *col, tl_ctype type, size_t *n, const void **data,
                tl_err *err)
{
    tl_colview v;
    int rc = tl_reader_column_of(r, id, TL_T_SUB_NS, col, type, &v, err);
    if (rc == TL_ENOTFOUND && *n != SIZE_MAX) return damaged(err, id, col, "is missing");
    if (rc) return rc;
    if (*n == SIZE_MAX) *n = (size_t)v.n;
    else if (v.n != *n) return damaged(err, id, col, "has another row count than its row column");
    *data = v.data;
    return TL_OK;
}

int tl_sub_ns_read(tl_reader *r, uint64_t id, uint64_t nevents, tl_sub_ns *out, tl_err *err)
{
    memset(out, 0, sizeof *out);
    size_t n = SIZE_MAX;
    const void *row, *ts, *dur;
    int rc = view(r, id, TL_C_ROW, TL_CT_U32, &n, &row, err);
    if (rc == TL_ENOTFOUND) return TL_OK; /* no time with digits below the ns */
    if (rc || (rc = view(r, id, TL_C_TS_US, TL_CT_F64, &n, &ts, err)) ||
        (rc = view(r, id, TL_C_DUR_US, TL_CT_F64, &n, &dur, err)))
        return rc;
    const uint32_t *rw = row;
    for (size_t i = 0; i < n; i++) {
        if (rw[i] >= nevents || (i && rw[i] <= rw[i - 1])) {
            char what[96];
            snprintf(what, sizeof what, "row %zu holds %u, not an events row above the last", i, rw[i]);
            return damaged(err, id, TL_C_ROW, what);
        }
    }
    out->n = n;
    out->row = rw;
    out->ts_us = ts;
    out->dur_us = dur;
    return TL_OK;
}
