/* trace.h — one stored trace opened for analysis: every column of its
 * events table (zero-copy from the LMDB map where the chunk layout allows),
 * its string dictionary, flows, metadata and catalog. Every report starts
 * here; nothing re-parses the source file. */
#ifndef TL_TRACE_H
#define TL_TRACE_H

#include <stdint.h>
#include <stddef.h>
#include "store/store.h"
#include "ingest/schema.h"

/* The events columns a load can read (bit numbers of tl_trace_cols below). */
typedef enum tl_trace_col {
    TL_TCI_UID, TL_TCI_TS, TL_TCI_DUR, TL_TCI_NAME, TL_TCI_CAT, TL_TCI_KIND, TL_TCI_PID, TL_TCI_TID,
    TL_TCI_IDFLAGS, TL_TCI_CORR, TL_TCI_EXTID, TL_TCI_STREAM, TL_TCI_DEVICE, TL_TCI_SEQ, TL_TCI_FWDTID,
    TL_TCI_INDIMS, TL_TCI_INTYPE, TL_TCI_INSTRIDES, TL_TCI_CONCRETE, TL_TCI_GRID, TL_TCI_BLOCK,
    TL_TCI_PARENT, TL_TCI_PARENT_PY, TL_TCI_LAUNCHER, TL_TCI_LINKED,
    TL_TCI_N
} tl_trace_col;

/* An int64 events column in 4 bytes a value (a TL_TC_NARROW load): v[i]
 * is the value itself when it lies in [TL_NARROW_WIDE + 1, INT32_MAX],
 * TL_NARROW_NONE for TL_NONE, and TL_NARROW_WIDE for any other value,
 * which (exc_row[k], exc_val[k]) holds, rows ascending. Read it with
 * tl_narrow_get (or the tl_trace_* accessors below). */
typedef struct tl_narrow_col {
    int32_t *v;
    size_t nexc;
    uint32_t *exc_row;
    int64_t *exc_val;
} tl_narrow_col;
#define TL_NARROW_NONE INT32_MIN
#define TL_NARROW_WIDE (INT32_MIN + 1)

/* A distinct (pid, tid) pair of a TL_TC_NARROW load (the raw int64
 * values; the row's idflags say which are string ids). */
typedef struct tl_trace_thread {
    int64_t pid, tid;
} tl_trace_thread;

typedef struct tl_trace {
    uint64_t id;
    const char *catalog;      /* catalog JSON text */
    const char *format;       /* "kineto", "rocprof", "xplane" (from the catalog) */
    tl_dict dict;

    size_t n;                 /* complete events */
    const uint32_t *uid;
    const int64_t *ts, *dur;  /* ns; their µs doubles: tl_trace_ts_us, tl_trace_dur_us */
    /* per event µs doubles of a loaded ts / dur column when the trace has
     * a sub_ns table (ingest/schema.h: times whose text has digits below
     * the ns), NULL otherwise (tl_ns_us of the ns column is the value) */
    const double *ts_us_sub, *dur_us_sub;
    const uint32_t *name, *cat;
    const uint8_t *kind;
    const int64_t *pid, *tid;
    const uint8_t *idflags;
    const int64_t *corr, *ext_id, *stream, *device, *seq, *fwd_tid;
    const uint32_t *in_dims, *in_type, *in_strides, *concrete, *grid, *block;
    const int32_t *parent, *parent_py, *launcher;
    const uint8_t *linked;
    /* A TL_TC_NARROW load leaves the int64 pointers above NULL (ts
     * excepted) and holds those columns here: dur, corr, ext_id, stream,
     * device, seq and fwd_tid in narrow[TL_TCI_*].v (4 bytes a value),
     * pid and tid as thread[i], an index into threads (nthreads distinct
     * pairs). tl_trace_pid, tl_trace_dur ... read either form. */
    tl_narrow_col narrow[TL_TCI_N];
    const uint32_t *thread;
    const tl_trace_thread *threads;
    size_t nthreads;
    tl_colview args;          /* blob: raw args JSON per event; read it through
                                 tl_trace_args (decoded on first use) */
    int args_loaded;

    size_t nflows;
    const uint32_t *f_uid, *f_cat, *f_name;
    const uint8_t *f_ph, *f_idflags;
    const int64_t *f_id, *f_pid, *f_tid, *f_ts;

    size_t nmeta;
    const uint32_t *m_uid, *m_name;
    const int64_t *m_pid, *m_tid;
    const uint8_t *m_idflags;
    tl_colview m_args;

    void *owned[TL_TCI_N];    /* TL_TC_OWNED: the events columns' blocks */
    tl_reader *reader;        /* keeps the snapshot alive */
    tl_arena arena;
} tl_trace;

/* The columns a load reads: one bit per events column, TL_TC(UID) ...,
 * plus TL_TC_FLOWS (the flows table) and TL_TC_OWNED (the events columns
 * are decoded into blocks the trace owns, which tl_trace_drop_columns
 * frees before the trace itself, for callers that release a trace's
 * memory in stages; otherwise they live in the reader's memory, or in the
 * map itself, until the reader closes). Decoded columns are about half of
 * a report's memory, so a caller that knows what it reads leaves the rest
 * out; the pointers of columns left out stay NULL. Each column's table,
 * name, type, missing value and check are defined once, in trace.c.
 * TL_TC_NARROW holds the int64 columns but ts in 4 bytes a value (pid and
 * tid: one index into a table of distinct pairs), decoded chunk by chunk
 * so the wide column never exists: 32 bytes an event less for the
 * PyTorch report's columns; their pointers stay NULL and the tl_trace_*
 * accessors below read them. */
typedef uint64_t tl_trace_cols;
#define TL_TC(c) ((tl_trace_cols)1 << TL_TCI_##c)
#define TL_TC_EVENTS (((tl_trace_cols)1 << TL_TCI_N) - 1)
#define TL_TC_NARROW ((tl_trace_cols)1 << 61)
#define TL_TC_FLOWS ((tl_trace_cols)1 << 62)
#define TL_TC_OWNED ((tl_trace_cols)1 << 63)
/* every column and the flows table (tl_trace_load) */
#define TL_TRACE_ALL (TL_TC_EVENTS | TL_TC_FLOWS)
/* what the PyTorch report reads: not the flows table, device, fwd_tid,
 * grid, block, linked (its tree was built at ingest), launcher (it finds
 * launchers on its tree) nor parent_py, the tree with python functions,
 * which only --include_call_stack and --detect_recompute read: add
 * TL_TC(PARENT_PY) for them (4 bytes an event each column left out);
 * its int64 columns narrow (TL_TC_NARROW), read through the accessors */
#define TL_TRACE_PYTORCH                                                                               \
    (TL_TC_NARROW | (TL_TC_EVENTS & ~(TL_TC(DEVICE) | TL_TC(FWDTID) | TL_TC(GRID) | TL_TC(BLOCK) |     \
                                      TL_TC(LINKED) | TL_TC(LAUNCHER) | TL_TC(PARENT_PY))))

/* Loads the trace `id` through reader r (which must outlive the trace):
 * the catalog, dictionary and metadata table, the events columns in cols
 * (parent, parent_py, launcher and linked may be absent from a store: their
 * pointers stay NULL then) and, with TL_TC_FLOWS, the flows table. Every
 * stored index is range-checked here, once: string ids below the
 * dictionary size, kinds known, uids ascending, tree edges -1 or a row,
 * row counts equal to the catalog's. A failed check is TL_ESTORE naming
 * the trace, table and column. */
int tl_trace_load_cols(tl_reader *r, uint64_t id, tl_trace_cols cols, tl_trace **out, tl_err *err);
/* tl_trace_load_cols(r, id, TL_TRACE_ALL, ...). */
int tl_trace_load(tl_reader *r, uint64_t id, tl_trace **out, tl_err *err);
/* Frees the events columns of a TL_TC_OWNED load and sets their pointers
 * to NULL; the catalog, dictionary and metadata stay. */
void tl_trace_drop_columns(tl_trace *t);

/* What a chunk-wise column walk checks its values against: the events
 * table's row count (the catalog's "events") and the dictionary size. */
typedef struct tl_trace_bounds {
    uint64_t rows;
    uint64_t dict_n;
} tl_trace_bounds;
/* One events column chunk by chunk (tl_reader_column_chunks: views valid
 * until the reader closes), for scans that keep no whole column: each
 * chunk gets the checks tl_trace_load_cols makes of the column (its type;
 * values that need another column, pid and tid string ids, are not
 * checked), and the chunks' rows must add up to b->rows. A column the
 * loader does not define is walked unchecked, except for its row count. */
int tl_trace_column_chunks(tl_reader *r, uint64_t id, const char *col, const tl_trace_bounds *b,
                           int (*cb)(void *ctx, uint32_t chunk, const tl_colview *v), void *ctx, tl_err *err);
void tl_trace_free(tl_trace *t);

/* The reference's runtime -> GPU linking (trace_links.c): in a trace with
 * no ac2g start flow, where ingest linked GPU events to runtime calls by
 * correlation id, those links (graph launches excepted) are removed from
 * the loaded edge columns (parent, parent_py, launcher, linked), as the
 * reference finds none. Traces with ac2g flows are left as they are. The
 * trace must be loaded with TL_TC_FLOWS (else TL_EUSAGE). *dropped: the
 * links removed. */
int tl_trace_reference_links(tl_trace *t, size_t *dropped, tl_err *err);

/* How the source wrote its complete events' times (trace_text.c, from the
 * catalog's "ts_text" / "dur_text", ingest/builder.h): returns 1 with
 * *ts_int / *dur_int set (1: every one a JSON integer, which the reference
 * keeps as a Python int), 0 when not recorded (a store written before, or
 * a format without JSON text times); both are 0 then. */
int tl_trace_time_text(const tl_trace *t, int *ts_int, int *dur_int);
/* The same from a catalog record's text. */
int tl_catalog_time_text(const char *catalog, int *ts_int, int *dur_int);

/* The value of row i of a narrow column: the exception lookup (a binary
 * search over exc_row) out of line. */
int64_t tl_narrow_wide(const tl_narrow_col *c, size_t i);
static inline int64_t tl_narrow_get(const tl_narrow_col *c, size_t i)
{
    int32_t v = c->v[i];
    if (v > TL_NARROW_WIDE) return v;
    return v == TL_NARROW_NONE ? TL_NONE : tl_narrow_wide(c, i);
}

/* Row i's value of an int64 events column, from whichever form the load
 * holds (the wide pointer, or the narrow form of a TL_TC_NARROW load). */
#define TL_TRACE_I64(fn, field, col)                                                                   \
    static inline int64_t fn(const tl_trace *t, size_t i)                                              \
    {                                                                                                  \
        return t->field ? t->field[i] : tl_narrow_get(&t->narrow[TL_TCI_##col], i);                    \
    }
TL_TRACE_I64(tl_trace_dur, dur, DUR)
TL_TRACE_I64(tl_trace_corr, corr, CORR)
TL_TRACE_I64(tl_trace_ext_id, ext_id, EXTID)
TL_TRACE_I64(tl_trace_stream, stream, STREAM)
TL_TRACE_I64(tl_trace_seq, seq, SEQ)
#undef TL_TRACE_I64
static inline int64_t tl_trace_pid(const tl_trace *t, size_t i)
{
    return t->pid ? t->pid[i] : t->threads[t->thread[i]].pid;
}
static inline int64_t tl_trace_tid(const tl_trace *t, size_t i)
{
    return t->tid ? t->tid[i] : t->threads[t->thread[i]].tid;
}

/* Event i's ts and dur in µs as the reference reads them: the double
 * nearest the trace's decimal text, at any magnitude and any number of
 * decimals (needs the ts / dur column loaded). */
static inline double tl_trace_ts_us(const tl_trace *t, size_t i)
{
    return t->ts_us_sub ? t->ts_us_sub[i] : tl_ns_us(t->ts[i]);
}
static inline double tl_trace_dur_us(const tl_trace *t, size_t i)
{
    return t->dur_us_sub ? t->dur_us_sub[i] : tl_ns_us(tl_trace_dur(t, i));
}

/* tl_trace_ts_us of every event into out (t->n values). */
void tl_trace_ts_us_fill(const tl_trace *t, double *out);

/* A trace's sub_ns table (ingest/schema.h), as views valid until the
 * reader closes: n rows (0 when the trace has none), ascending events
 * rows below nevents, with their ts and dur µs. */
typedef struct tl_sub_ns {
    size_t n;
    const uint32_t *row;
    const double *ts_us, *dur_us;
} tl_sub_ns;
/* Reads and checks it (TL_ESTORE naming the trace and column when a row
 * is out of order or range, or the columns' lengths differ). */
int tl_sub_ns_read(tl_reader *r, uint64_t id, uint64_t nevents, tl_sub_ns *out, tl_err *err);

static inline const char *tl_trace_str(const tl_trace *t, uint32_t sid) { return tl_dict_get(&t->dict, sid, NULL); }
/* Raw args JSON of event row i ("" when the event had none). */
const char *tl_trace_args(const tl_trace *t, size_t i, size_t *len);

/* The args_sel table (ingest/schema.h): does the trace have it (its
 * catalog record says so; TRACELENS_ARGS_PASS=full answers no, to check
 * the two paths agree), and a walk over it in row order: fn gets each
 * selected event row and its args text (valid during the call) and
 * returns nonzero to stop. */
int tl_catalog_has_args_sel(const char *catalog);
/* on = 0: tl_catalog_has_args_sel says no for every trace, so the full
 * args pass runs (the CLI does for TRACELENS_ARGS_PASS=full); call before
 * any report starts. */
void tl_args_sel_use(int on);
int tl_args_sel_walk(tl_reader *r, uint64_t id,
                     int (*fn)(void *ctx, uint32_t row, const char *args, size_t len), void *ctx,
                     tl_err *err);
/* Extra blob stored by a reader with tl_build_extra (NULL if absent). */
const char *tl_trace_extra(const tl_trace *t, const char *name, size_t *len);
/* pid/tid as text (numbers in decimal, strings verbatim) into buf. */
const char *tl_trace_pid_text(const tl_trace *t, size_t i, char *buf, size_t n);
const char *tl_trace_tid_text(const tl_trace *t, size_t i, char *buf, size_t n);

/* Looks up one key of an args JSON object and returns its raw value span
 * (NULL when absent). For strings the span includes the quotes. */
const char *tl_args_get(const char *args, size_t len, const char *key, size_t *vlen);
/* Same, decoding a JSON string value (escapes decoded) or number text into out. */
int tl_args_get_str(const char *args, size_t len, const char *key, tl_buf *out);
int tl_args_get_i64(const char *args, size_t len, const char *key, int64_t *v);
int tl_args_get_f64(const char *args, size_t len, const char *key, double *v);

#endif
