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

typedef struct tl_trace {
    uint64_t id;
    const char *catalog;      /* catalog JSON text */
    const char *format;       /* "kineto", "rocprof", "xplane" (from the catalog) */
    tl_dict dict;

    size_t n;                 /* complete events */
    const uint32_t *uid;
    const int64_t *ts, *dur;  /* ns */
    const uint32_t *name, *cat;
    const uint8_t *kind;
    const int64_t *pid, *tid;
    const uint8_t *idflags;
    const int64_t *corr, *ext_id, *stream, *device, *seq, *fwd_tid;
    const uint32_t *in_dims, *in_type, *in_strides, *concrete, *grid, *block;
    const int32_t *parent, *parent_py, *launcher;
    const uint8_t *linked;
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

    tl_reader *reader;        /* keeps the snapshot alive */
    tl_arena arena;
} tl_trace;

/* Loads the trace `id` through reader r (which must outlive the trace). */
int tl_trace_load(tl_reader *r, uint64_t id, tl_trace **out, tl_err *err);
/* Which columns tl_trace_load_cols decodes. Decoded columns are about half
 * of a report's memory, so a caller that knows what it reads leaves the
 * rest out. */
typedef enum {
    TL_TRACE_ALL,     /* every column (tl_trace_load) */
    TL_TRACE_PYTORCH, /* what the PyTorch report reads: the flows table and
                         device, fwd_tid, grid, block and linked stay NULL,
                         nflows 0 (its tree was built at ingest) */
} tl_trace_cols;
int tl_trace_load_cols(tl_reader *r, uint64_t id, tl_trace_cols cols, tl_trace **out, tl_err *err);
/* Only the catalog (and format), the dictionary, the event count and the
 * metadata table: for callers that load the event columns they need in
 * their own way (the corpus workbook). The event and flow columns stay
 * NULL, nflows 0. */
int tl_trace_load_head(tl_reader *r, uint64_t id, tl_trace **out, tl_err *err);
void tl_trace_free(tl_trace *t);

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
