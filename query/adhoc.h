/* adhoc.h — ad-hoc questions across many stored traces, answered from the
 * store alone (no source file is read). Two front ends share this module:
 *
 *  - the verb engine (tl_adhoc_run): choose a table, select traces by id,
 *    label, configuration, rank or ingest time, filter rows with a small
 *    where-language, group by any columns (labels and trace id included),
 *    aggregate, sort and limit. It runs column-at-a-time: per trace it
 *    decodes only the columns the query names, narrows a row selection
 *    vector, and folds rows into group accumulators keyed by *text*
 *    (string ids are per trace, so names are compared by their text);
 *  - SQLite virtual tables over the same columns (query/sqlvtab.h).
 *
 * Tables: events, ops (cpu_op rows), kernels (kernel rows), traces (the
 * catalog) and the per-trace PyTorch report sheets gpu_timeline,
 * ops_summary and kernel_summary. Times are int64 nanoseconds. Every table
 * also has the trace-level columns (trace_id, path, format, config, rank,
 * run, ingest_time, label.KEY, meta.PATH). docs/QUERY.md is the user guide.
 *
 * Errors (unknown column, bad regex, type mismatch, ...) come back as
 * TL_EUSAGE with a message naming the offending token and a caret line. */
#ifndef TL_ADHOC_H
#define TL_ADHOC_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include "../store/store.h"
#include "table.h"

typedef struct tl_adhoc_query {
    const char *table;          /* "kernels", "ops", "events", "traces", report sheet */
    const char *const *traces;  /* --trace selectors (AND across entries; see below) */
    size_t ntraces;
    const char *where;          /* row filter expression, or NULL */
    const char *by;             /* comma list of group columns, or NULL */
    const char *agg;            /* comma list of aggregates ("sum(dur),count"), or NULL */
    const char *select;         /* comma list of columns for row output, or NULL */
    const char *sort;           /* comma list, "-col" = descending, or NULL */
    int64_t limit;              /* rows kept after sorting; < 0: all */
    int threads;                /* aggregation workers; 0 = one per core
                                   ($TRACELENS_THREADS overrides) */
    /* Polled between traces (e.g. set by a SIGINT handler); when it turns
     * non-zero the run stops and returns TL_EINTR_ADHOC. May be NULL. */
    const volatile sig_atomic_t *cancel;
} tl_adhoc_query;

/* Returned when *cancel was raised (the store is untouched: readers never write). */
#define TL_EINTR_ADHOC (-100)

/* Trace selectors (one string each; comma-separated alternatives inside one
 * selector are OR-ed, separate selectors are AND-ed):
 *   ID-or-prefix         a trace id (>= 4 hex digits)
 *   label:KEY=VALUE      label KEY equals VALUE (VALUE may use * and ? globs);
 *   label:KEY            label KEY present
 *   config:GLOB  run:GLOB  format:NAME  path:SUBSTRING
 *   rank:N | rank:A-B
 *   since:WHEN  until:WHEN   ingest time; WHEN = YYYY-MM-DD[THH:MM[:SS]] (local
 *                            time) or a relative age such as 30m, 12h, 7d
 *   last:N                   the N most recently ingested of the traces the
 *                            other selectors keep
 */

/* Runs the query; *out is the answer (caller frees with tl_table_free). */
int tl_adhoc_run(tl_store *s, const tl_adhoc_query *q, tl_table **out, tl_err *err);

/* The table names known to the engine, NULL-terminated. */
const char *const *tl_adhoc_tables(void);
/* A table listing the columns of a table: column, type, description. */
int tl_adhoc_describe(const char *table, tl_table **out, tl_err *err);

/* The glob match of selectors: '*' any run of bytes, '?' one byte. */
int tl_adhoc_glob(const char *pat, const char *s);

#endif
