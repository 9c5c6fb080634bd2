/* builder_internal.h — the tl_build struct, shared by builder.c (filling
 * and committing) and tree.c (edges). Readers use builder.h only. */
#ifndef TL_BUILDER_INTERNAL_H
#define TL_BUILDER_INTERNAL_H

#include "ingest/builder.h"

/* A cold column: values buffered for one chunk, then encoded into the
 * pending store write so that memory stays bounded. */
typedef struct cold_col {
    const char *name;
    tl_ctype type;
    unsigned char *buf; /* cold_cap values */
    uint32_t n;
} cold_col;

/* The main builder's stored event columns (TL_T_EVENTS) and flow
 * columns (TL_T_FLOWS), chunked as rows arrive. */
enum { HOT_UID, HOT_TS, HOT_DUR, HOT_NAME, HOT_CAT, HOT_KIND, HOT_PID, HOT_TID, HOT_IDFLAGS, HOT_CORR, HOT_EXTID,
       HOT_N };
enum { FHOT_UID, FHOT_PH, FHOT_CAT, FHOT_NAME, FHOT_ID, FHOT_PID, FHOT_TID, FHOT_IDFLAGS, FHOT_TS, FHOT_N };

/* tl_build.cls: the event's kind (low 4 bits) and what its name is */
#define CLS_KIND 0x0f
#define CLS_LAUNCH 0x10  /* has "launch", any case (§3.3) */
#define CLS_GRAPH 0x20   /* cudaGraphLaunch / hipGraphLaunch */
#define CLS_COMM 0x40    /* a communication kernel name (§5.1) */
#define CLS_EXEC 0x80    /* "execute" */
#define CLS_KNOWN 0x01   /* tl_build.name_cls: classified */

enum { COLD_STREAM, COLD_DEVICE, COLD_SEQ, COLD_FWDTID, COLD_INDIMS, COLD_INTYPE, COLD_INSTRIDES,
       COLD_CONCRETE, COLD_GRID, COLD_BLOCK, COLD_N };

typedef struct blob_acc {
    tl_buf bytes;
    TL_VEC(uint64_t) off; /* off.v[0] == 0; one more than rows */
} blob_acc;

struct tl_build {
    char format[16];
    /* string dictionary: texts in sbytes, looked up through hidx */
    tl_buf sbytes;
    TL_VEC(uint64_t) soff;  /* start offset of string id i; sentinel appended at commit */
    tl_hidx hidx;

    size_t n; /* events */
    /* A shard's event columns, whole (their string ids and uids are mapped
     * by tl_build_append, which adds them to the main builder row by row). */
    TL_VEC(uint32_t) uid;
    TL_VEC(uint32_t) name, cat;
    TL_VEC(uint8_t) kind;
    TL_VEC(int64_t) pid, tid;
    TL_VEC(uint8_t) idflags;
    TL_VEC(int64_t) corr, ext_id;
    TL_VEC(int64_t) ts, dur;

    /* The main builder's stored event and flow columns, a chunk of
     * TL_CHUNK_ROWS rows at a time (builder_rows.c), and what the tree
     * build needs of each row, in compact form: */
    cold_col hot[HOT_N], fhot[FHOT_N]; /* hot[0].n, fhot[0].n: rows in the chunk */
    TL_VEC(uint8_t) cls;      /* kind | CLS_* flags of the name */
    TL_VEC(uint32_t) thr;     /* thread index of (pid, tid, idflags) */
    /* ts and dur, which the host nesting reads (tl_build_tree frees them):
     * a dur outside 0 .. UINT32_MAX - 1 is UINT32_MAX in n_dur and kept
     * in long_dur by row */
    TL_VEC(int64_t) n_ts;
    TL_VEC(uint32_t) n_dur;
    tl_imap long_dur;
    tl_imap thread_ids;       /* thread_key -> thread index */
    size_t nthreads;
    uint64_t last_thread_key; /* the thread tl_build_thread returned last */
    uint32_t last_thread;
    TL_VEC(uint8_t) name_cls; /* per name id: 0 not classified yet, else CLS_KNOWN | CLS_* */
    TL_VEC(uint8_t) cat_ac2g; /* per flow category id: 0 not tested, 1 no, 2 "ac2g" */
    /* the rows with a link value (§3.3): correlation, External id, or
     * both until the first runtime launch call decides which one links */
    int key_mode;             /* 0 undecided, 1 correlation, 2 External id */
    TL_VEC(uint32_t) kc_row, ke_row;
    TL_VEC(int64_t) kc_val, ke_val;
    /* ac2g flows (§3.4): id, thread index, phase */
    TL_VEC(int64_t) a_id;
    TL_VEC(uint32_t) a_thr;
    TL_VEC(uint8_t) a_ph;
    /* catalog figures and the first event whose end time overflows */
    uint64_t kinds[TL_K_COUNT], ngpu;
    int64_t ts_min, ts_max, g_min, g_max;
    size_t bad_row;           /* SIZE_MAX: none */
    int64_t bad_ts, bad_dur;

    cold_col cold[COLD_N];
    uint32_t cold_cap;    /* TL_CHUNK_ROWS, or growing in a shard */
    /* A shard (tl_build_new_shard) keeps its cold columns and args_sel
     * rows in memory, since they hold its own string ids and row numbers,
     * which tl_build_append maps; only its args chunks are encoded early. */
    int shard;
    blob_acc args;        /* current args chunk */
    uint64_t args_rows;   /* rows sealed so far */

    /* the args_sel table (tl_build_select_args) */
    int sel_on;
    TL_VEC(uint8_t) name_comm; /* per name id: 0 not tested, 1 no, 2 comm kernel name */
    TL_VEC(uint32_t) sel_row;  /* current chunk */
    blob_acc sel_args;
    tl_buf sel_tmp;            /* one row's filtered args (TL_ARGS_SEL_KEYS) */

    /* the sub_ns table (schema.h): rows ascending and their µs doubles */
    TL_VEC(uint32_t) sub_row;
    TL_VEC(double) sub_ts, sub_dur;

    /* edges (tree.c) */
    int32_t *parent, *parent_py, *launcher;
    TL_VEC(int32_t) pin_row, pin_parent, pin_parent_py; /* tl_build_pin_parent */
    uint8_t *linked;

    /* flows (a shard's, whole; the main builder's go to fhot) */
    size_t nflows;
    TL_VEC(uint32_t) f_uid, f_cat, f_name;
    TL_VEC(uint8_t) f_ph, f_idflags;
    TL_VEC(int64_t) f_id, f_pid, f_tid, f_ts;

    /* metadata events */
    size_t nmeta;
    TL_VEC(uint32_t) m_uid, m_name;
    TL_VEC(int64_t) m_pid, m_tid;
    TL_VEC(uint8_t) m_idflags;
    blob_acc m_args;

    uint64_t n_other, n_instant;
    uint8_t time_text;     /* tl_build_time_text: 1 reported, 2 a ts float, 4 a dur float */
    tl_buf toplevel;       /* ,"key":value pairs */
    tl_wtrace *w;          /* encoded chunks pending commit */
    int sealed;            /* rows encoded into w and freed (tl_build_seal) */
    TL_VEC(char *) extra_names;
};

/* builder_rows.c: the main builder's rows. */
void tl_build_rows_init(tl_build *b);
void tl_build_rows_free(tl_build *b);
/* Adds one event row (string ids and uid already the main builder's). */
void tl_build_add_row(tl_build *b, uint32_t uid, int64_t ts, int64_t dur, uint32_t name, uint32_t cat, uint8_t kind,
                      int64_t pid, int64_t tid, uint8_t idflags, int64_t corr, int64_t ext_id);
void tl_build_add_flow(tl_build *b, uint32_t uid, uint8_t ph, uint32_t cat, uint32_t name, int64_t id, int64_t pid,
                       int64_t tid, uint8_t idflags, int64_t ts);
/* Encodes the last, partly filled event and flow chunks. */
void tl_build_rows_seal(tl_build *b);
/* Frees n_ts, n_dur and long_dur. */
void tl_build_times_free(tl_build *b);
/* Row e's duration in ns. */
static inline int64_t tl_build_dur(const tl_build *b, uint32_t e)
{
    uint32_t d = b->n_dur.v[e];
    return d != UINT32_MAX ? (int64_t)d : (int64_t)*tl_imap_get(&b->long_dur, e);
}
/* The thread index of (pid, tid, idflags), a new one when not seen. */
uint32_t tl_build_thread(tl_build *b, int64_t pid, int64_t tid, uint8_t idflags);

/* Encodes the partly filled cold, args and args_sel chunks. */
void tl_build_flush_chunks(tl_build *b);
/* Appends a value to a blob accumulator. */
void tl_blob_add(blob_acc *a, const char *s, size_t n);
/* Adds args_sel row `row` (flushing full chunks unless a shard). */
void tl_build_sel_add(tl_build *b, uint32_t row, const char *args, size_t n);

#endif
