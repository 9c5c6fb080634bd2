/* adhoc.h — ad-hoc questions over stored traces: `tracelens query` verbs and
 * the SQLite virtual tables of `tracelens sql` (docs/QUERY.md). */
#ifndef TL_ADHOC_ADHOC_H
#define TL_ADHOC_ADHOC_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sqlite3.h>

#include "store/store.h"
#include "query/core/table.h"

/* ---- ad-hoc questions across many stored traces, answered from the
 * store alone (no source file is read). Two front ends share this module:
 *
 *  - the verb engine (tl_adhoc_run): choose a table, select traces by id,
 *    label, configuration, rank or ingest time, filter rows with a small
 *    where-language, group by any columns (labels and trace id included),
 *    aggregate, sort and limit. It runs column-at-a-time: per trace it
 *    decodes only the columns the query names, narrows a row selection
 *    vector, and folds rows into group accumulators keyed by *text*
 *    (string ids are per trace, so names are compared by their text);
 *  - SQLite virtual tables over the same columns (query/adhoc/adhoc.h).
 *
 * Tables: events, ops (cpu_op rows), kernels (kernel rows), traces (the
 * catalog) and the per-trace PyTorch report sheets gpu_timeline,
 * ops_summary and kernel_summary. Times are int64 nanoseconds. Every table
 * also has the trace-level columns (trace_id, path, format, config, rank,
 * run, ingest_time, label.KEY, meta.PATH). docs/QUERY.md is the user guide.
 *
 * Errors (unknown column, bad regex, type mismatch, ...) come back as
 * TL_EUSAGE with a message naming the offending token and a caret line. */

typedef struct tl_adhoc_query {
    const char *table;          /* "kernels", "ops", "events", "traces", report sheet */
    const char *const *traces;  /* --trace selectors (AND across entries; see below) */
    size_t ntraces;
    const char *where;          /* row filter expression, or NULL */
    const char *by;             /* comma list of group columns, or NULL */
    const char *agg;            /* comma list of aggregates ("sum(dur),count"), or NULL */
    const char *select;         /* comma list of columns for row output, or NULL */
    const char *sort;           /* comma list, "-col" = descending, or NULL */
    int64_t limit;              /* rows kept after sorting (after pivoting
                                   with pivot); < 0: all */
    /* A column to spread into columns (`--pivot`): the grouped result gets
     * one row per group of the --by columns and, per value of this column
     * (sorted; numbers held as text by value), one column per aggregate,
     * named VALUE (one aggregate) or "VALUE: AGG" (label values as
     * KEY=VALUE); a group without a row
     * for a value has a missing cell. Rows keep the order in which their
     * groups first appear in the sorted grouped result. NULL: none. */
    const char *pivot;
    /* Time unit of the result ("ns", "us", "ms", "s"; tl_adhoc_unit): time
     * columns (ts, dur, end_ts, kernel_time, the catalog's *_ns spans, and
     * sum/mean/min/max/median/pNN/std of them) become doubles in it, their
     * headers suffixed " (UNIT)". NULL or "ns": integer ns as stored. */
    const char *units;
    int threads;                /* aggregation workers; 0 = one per core, at most
                                   16 and one per trace */
    int cores;                  /* with threads 0: the cores to count (the CLI's
                                   $TRACELENS_THREADS); 0: the machine's */
    /* Polled between traces (e.g. set by a SIGINT handler); when it turns
     * non-zero the run stops and returns TL_EINTR_ADHOC. May be NULL. */
    const atomic_int *cancel;
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

/* ---- one query over stores held by several processes (query --mpi) ----
 * Each process runs the query over its own stores (tl_adhoc_run_part); the
 * packed partial answers are merged pairwise in any grouping
 * (tl_adhoc_part_merge) and the last one becomes the answer
 * (tl_adhoc_part_finish): the table tl_adhoc_run gives over one store
 * holding every process's traces. A partial holds group keys and
 * distinct values as text (never a store's string ids) and the
 * accumulators, or for row output the rows in trace order; it travels
 * between processes of one build. Float sums may differ in their last
 * digits from one process's, as they do between thread counts. */
typedef struct tl_adhoc_share {
    /* Every process's n bytes at p, concatenated in process order, into
     * *all on every process; 0 or a TL_E* code. */
    int (*allgather)(void *ctx, const void *p, size_t n, tl_buf *all);
    void *ctx;
    int me;     /* this process's place in that order */
    int failed; /* a TL_E* code: this process could not open its stores
                   (it says why itself; the others are told) */
} tl_adhoc_share;

/* This process's partial answer into *part (appended). s may be NULL (a
 * process holding no store). Every process of a run must call it with
 * the same query: it calls share->allgather once, after the query is
 * planned (a bad query fails the same way everywhere, before it). A
 * failure while reading travels in the partial, so the reduction goes
 * on; returns 0 or the error of planning or of the trace selection. */
int tl_adhoc_run_part(tl_store *s, const tl_adhoc_query *q, const tl_adhoc_share *share, tl_buf *part,
                      tl_err *err);
/* Folds the partial at in[0..n) into *acc (both of query q). When in or
 * *acc is malformed, *acc becomes that error (so the answer made from it
 * is the error, not a short answer) and the error is returned. */
int tl_adhoc_part_merge(const tl_adhoc_query *q, tl_buf *acc, const void *in, size_t n, tl_err *err);
/* The answer from the partial of every process; a process's read error
 * comes back here. */
int tl_adhoc_part_finish(const tl_adhoc_query *q, const void *part, size_t n, tl_table **out, tl_err *err);

/* Parses a unit name: ns, us (also µs), ms, s. Sets *unit to the
 * canonical name and *div to nanoseconds per unit; -1 when unknown. */
int tl_adhoc_unit(const char *text, const char **unit, double *div);
/* Turns the columns with is_time[c] set (integer or double ns) into
 * doubles in unit (div ns each); a header ending in _ns gets _UNIT instead,
 * others get " (UNIT)". */
void tl_adhoc_convert_times(tl_table *t, const uint8_t *is_time, const char *unit, double div);
/* Whether an SQL result column of this name holds ns: a time column
 * (ts, dur, end_ts, kernel_time, ts_min, ...), maybe table-qualified
 * (k.dur), alone or in sum/total/avg/min/max/median(...), or a name ending
 * in _ns (AS total_ns). */
int tl_sql_time_name(const char *name);

/* The table names known to the engine, NULL-terminated. */
const char *const *tl_adhoc_tables(void);
/* A table listing the columns of a table: column, type, description. */
int tl_adhoc_describe(const char *table, tl_table **out, tl_err *err);

/* The glob match of selectors: '*' any run of bytes, '?' one byte. */
int tl_adhoc_glob(const char *pat, const char *s);


/* ---- SQL over the trace store: SQLite (Debian's libsqlite3)
 * eponymous virtual tables over the same stored columns and catalog the
 * verb engine reads (query/adhoc/adhoc.h), so `SELECT ... FROM kernels` needs no
 * CREATE statement and no copy of the data.
 *
 * Tables: traces (one row per trace: trace_id, path, format, config, rank,
 * run, ingest_time, counts, metadata JSON, and one label_KEY column per
 * label key in the store), events, ops, kernels (one row per event, times
 * in ns; parent/launcher are uids), and the per-trace PyTorch report sheets
 * gpu_timeline, ops_summary, ops_summary_by_category, ops_unique_args,
 * kernel_summary. Row tables also have hidden trace-level columns (path,
 * format, config, rank, run, ingest_time, label_KEY) usable in WHERE.
 *
 * Push-down (xBestIndex): constraints on trace_id (=, IN) and on any
 * trace-level column select traces from the catalog before any column is
 * read, so a query naming one trace or label never scans the others;
 * =, <, <=, >, >=, LIKE and REGEXP on row columns (name, kind, dur, ...)
 * filter rows per trace (string predicates once per distinct string), and
 * uid = ? with trace_id = ? is a binary-search point lookup (joins on
 * launcher / parent). Columns are decoded only when a query reads them.
 * A regexp(pattern, text) function (POSIX extended) backs REGEXP. */

/* Opens an in-memory SQLite connection with the tables registered over s
 * (s must outlive it). cancel (may be NULL) is polled while scanning; the
 * caller may also call tl_sql_interrupt(*db) from a signal handler.
 * SQLite itself is loaded here on first use (base/lazylib.h); without it
 * this fails with TL_EUNSUPPORTED and a message naming the library. */
int tl_sql_open(tl_store *s, const atomic_int *cancel, sqlite3 **db, tl_err *err);
/* Runs one or more ';'-separated statements; *out is the result of the last
 * statement that returns columns (an empty table if none). Errors name the
 * offending token with a caret line when SQLite reports its position.
 * Returns 0, TL_EUSAGE (bad SQL), TL_EINTR_ADHOC (interrupted) or TL_E*. */
int tl_sql_query(sqlite3 *db, const char *sql, tl_table **out, tl_err *err);
void tl_sql_close(sqlite3 *db);
/* The tables `tracelens sql` declares over s, one row per column: table,
 * column, type (INTEGER, REAL, TEXT), hidden (yes: not in SELECT *, usable
 * by name), alias_of (for a report sheet's own header, the SQL name it
 * stands for) and description. Needs no SQLite. */
int tl_sql_schema(tl_store *s, tl_table **out, tl_err *err);
/* sqlite3_interrupt (async-signal-safe like it); db from tl_sql_open. */
void tl_sql_interrupt(sqlite3 *db);


#endif
