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

    /* hot event columns */
    size_t n;
    TL_VEC(uint32_t) uid;
    TL_VEC(int64_t) ts, dur;
    TL_VEC(uint32_t) name, cat;
    TL_VEC(uint8_t) kind;
    TL_VEC(int64_t) pid, tid;
    TL_VEC(uint8_t) idflags;
    TL_VEC(int64_t) corr, ext_id;

    cold_col cold[COLD_N];
    uint32_t cold_cap;    /* TL_CHUNK_ROWS, or growing in a shard */
    /* A shard (tl_build_new_shard) keeps its cold columns and args_sel
     * rows in memory, since they hold its own string ids and row numbers,
     * which tl_build_append maps; only its args chunks are encoded early. */
    int shard;
    int threads;          /* tl_build_set_threads */
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
    uint8_t *linked;

    /* flows */
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

/* Encodes the partly filled cold, args and args_sel chunks. */
void tl_build_flush_chunks(tl_build *b);
/* Appends a value to a blob accumulator. */
void tl_blob_add(blob_acc *a, const char *s, size_t n);
/* Adds args_sel row `row` (flushing full chunks unless a shard). */
void tl_build_sel_add(tl_build *b, uint32_t row, const char *args, size_t n);

#endif
