/* sqlvtab.h — SQL over the trace store: SQLite (Debian's libsqlite3)
 * eponymous virtual tables over the same stored columns and catalog the
 * verb engine reads (query/adhoc.h), so `SELECT ... FROM kernels` needs no
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
#ifndef TL_SQLVTAB_H
#define TL_SQLVTAB_H

#include <signal.h>
#include <sqlite3.h>
#include "../store/store.h"
#include "table.h"

/* Opens an in-memory SQLite connection with the tables registered over s
 * (s must outlive it). cancel (may be NULL) is polled while scanning; the
 * caller may also call tl_sql_interrupt(*db) from a signal handler.
 * SQLite itself is loaded here on first use (store/lazylib.h); without it
 * this fails with TL_EUNSUPPORTED and a message naming the library. */
int tl_sql_open(tl_store *s, const volatile sig_atomic_t *cancel, sqlite3 **db, tl_err *err);
/* Runs one or more ';'-separated statements; *out is the result of the last
 * statement that returns columns (an empty table if none). Errors name the
 * offending token with a caret line when SQLite reports its position.
 * Returns 0, TL_EUSAGE (bad SQL), TL_EINTR_ADHOC (interrupted) or TL_E*. */
int tl_sql_query(sqlite3 *db, const char *sql, tl_table **out, tl_err *err);
void tl_sql_close(sqlite3 *db);
/* sqlite3_interrupt (async-signal-safe like it); db from tl_sql_open. */
void tl_sql_interrupt(sqlite3 *db);

#endif
