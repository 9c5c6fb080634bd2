/* store.h — the persistent trace store: one LMDB environment per directory
 * holding a catalog of traces and, per trace, column chunks of its tables
 * and its string dictionary. The store knows nothing of trace formats; it
 * stores typed columns addressed by (trace id, table, column, chunk).
 *
 * Guarantees: one write transaction per trace (a kill at any instant leaves
 * exactly the traces committed before); the map grows by itself on
 * MDB_MAP_FULL; readers see a consistent snapshot and never block writers.
 * Layout and encodings: docs/ARCHITECTURE.md. */
#ifndef TL_STORE_H
#define TL_STORE_H

#include <stdint.h>
#include <stddef.h>
#include "base/base.h"

#define TL_SCHEMA_VERSION 3
#define TL_CHUNK_ROWS 65536u

typedef enum tl_ctype {
    TL_CT_U8 = 1,
    TL_CT_I32 = 2,
    TL_CT_U32 = 3, /* also string ids into the trace dictionary */
    TL_CT_I64 = 4,
    TL_CT_F64 = 5,
    TL_CT_BLOB = 6, /* variable-length byte strings */
} tl_ctype;

size_t tl_ctype_size(tl_ctype t); /* element size; 0 for BLOB */
const char *tl_ctype_name(tl_ctype t);

typedef struct tl_store tl_store;

/* The initial map size of stores opened from now on, bytes (at least
 * 64 KiB; 0: the default, 1 GiB). The CLI sets it from TRACELENS_MAPSIZE;
 * tests use a tiny map to exercise growth. Call before opening stores. */
void tl_store_set_initial_mapsize(size_t bytes);

/* Opens (creating if needed) the store; a store that cannot be created
 * (a full disk: "No space left on device") leaves nothing behind. Fails
 * with TL_EVERSION, naming both versions, when the store was written by another schema version, and with
 * TL_ESTORE when data.mdb is damaged (truncated, meta pages unreadable) or
 * not a tracelens store: it is checked before LMDB maps it. Reads of a
 * store whose B-tree pages are damaged past LMDB's own checks end with
 * TL_ESTORE too: a SIGSEGV or SIGBUS inside a store read is caught (the
 * handler is installed here, once, and passes other faults on). */
int tl_store_open(const char *dir, tl_store **out, tl_err *err);
/* Opens an existing store for a command that only reads: TL_ENOTFOUND,
 * "no store at DIR (ingest creates one)", when dir holds no data.mdb, and
 * nothing is created. A store whose directory or files this process cannot
 * write (permissions, a read-only mount) is opened read-only (MDB_RDONLY;
 * also MDB_NOLOCK when lock.mdb cannot be opened for writing): reads work,
 * writes fail. A writable store is opened as tl_store_open opens it. */
int tl_store_open_read(const char *dir, tl_store **out, tl_err *err);
/* Opens a store list: the n stores at dirs (each as tl_store_open_read
 * opens it), read as one store. Readers see every shard's traces: ids are
 * content hashes, so an id found in several shards is the same trace and
 * is read from the first shard (in list order) holding it. A list only
 * reads: writing, deleting, checking and compacting it are TL_EUNSUPPORTED.
 * n == 1 opens that store itself. */
int tl_store_open_list(const char *const *dirs, size_t n, tl_store **out, tl_err *err);
/* Whether s was opened read-only (a store list always is). */
int tl_store_readonly(const tl_store *s);
void tl_store_close(tl_store *s);
/* The store's directory; for a store list its shards' joined by " + ". */
const char *tl_store_dir(const tl_store *s);

/* ---- writing one trace ------------------------------------------------
 * A writer collects encoded chunks (already LZ4'd where that pays) in
 * memory, past 32 MiB in an unlinked spill file in $TMPDIR; then
 * tl_store_write() puts them and the catalog record in one transaction,
 * or, past 32 MiB, in transactions of ~32 MiB with the catalog record in
 * the last (see write_fn), retrying with a larger map on MDB_MAP_FULL. */
typedef struct tl_wtrace tl_wtrace;
tl_wtrace *tl_wtrace_new(uint64_t id);
void tl_wtrace_free(tl_wtrace *w);
/* Encodes chunks on a background thread from now on (ingest uses the
 * second core this way); tl_store_write waits for it. */
void tl_wtrace_start_worker(tl_wtrace *w);
/* Encodes and appends one chunk of a fixed-width column (rows <= TL_CHUNK_ROWS);
 * chunk numbers are assigned in call order per (table, column). */
void tl_wtrace_put_chunk(tl_wtrace *w, const char *table, const char *col, tl_ctype type,
                         const void *data, uint32_t nrows);
/* Appends one chunk of a blob column: nrows values given by offsets[nrows+1]
 * (relative to bytes) and bytes. */
void tl_wtrace_put_blob_chunk(tl_wtrace *w, const char *table, const char *col,
                              const uint64_t *offsets, const char *bytes, uint32_t nrows);
/* Splits a whole fixed-width column into chunks, encoded from data in
 * place: data must stay unchanged until tl_wtrace_set_id, tl_store_write or
 * tl_wtrace_free (which wait for the encoder). */
void tl_wtrace_put_column(tl_wtrace *w, const char *table, const char *col, tl_ctype type,
                          const void *data, uint64_t nrows);
/* Moves every chunk of src after w's chunks of the same (table, column),
 * renumbered, leaving src empty (parallel parse: a later part of the
 * document encoded on its own). Waits for src's encoder. */
void tl_wtrace_append(tl_wtrace *w, tl_wtrace *src);
/* Sets the trace id (it may be known only after parsing). */
void tl_wtrace_set_id(tl_wtrace *w, uint64_t id);
/* Sets the catalog record (a JSON object text); "tables" is added by the store. */
void tl_wtrace_set_catalog(tl_wtrace *w, const char *json);
size_t tl_wtrace_bytes(const tl_wtrace *w);   /* encoded payload size so far */

/* Commits. Returns TL_EEXIST (and writes nothing) if the id is present. */
int tl_store_write(tl_store *s, tl_wtrace *w, tl_err *err);
/* Deletes a trace and all its chunks in one transaction. */
int tl_store_delete(tl_store *s, uint64_t id, tl_err *err);

/* Rewrites one trace's catalog record (labels set after ingest) in one
 * write transaction, leaving its columns alone: edit receives the current
 * record text (checksum verified) and returns the new text, malloc'd, or
 * NULL with err set (nothing is written). TL_ENOTFOUND when the id is not
 * stored; TL_EUNSUPPORTED on a store list. */
typedef char *(*tl_catalog_edit_fn)(void *ctx, const char *json, tl_err *err);
int tl_store_edit_catalog(tl_store *s, uint64_t id, tl_catalog_edit_fn edit, void *ctx, tl_err *err);

/* ---- checking -----------------------------------------------------------
 * Every read verifies what it decodes: chunk headers against the value's
 * size, the XXH3 checksum of chunks and catalog records (stores written
 * since schema 3), blob offsets, LZ4 and narrowed payload sizes. Damage is
 * TL_ESTORE with a message naming the trace, column and chunk. */

/* What tl_store_check found about one trace (id 0: a record whose key
 * names no trace). */
typedef struct tl_check_finding {
    uint64_t id;
    int ok;               /* nothing wrong found */
    uint64_t chunks;      /* column chunks walked */
    uint64_t bad_chunks;  /* of those, chunks that failed a check */
    const char *problem;  /* the first problem found, one line; NULL when ok */
    int removed;          /* repair deleted the trace (catalog record and chunks) */
} tl_check_finding;
typedef void (*tl_check_report_fn)(void *ctx, const tl_check_finding *f);

/* Walks the catalog and every chunk of every trace: checksums, headers,
 * full decodes, chunk numbering, and that each catalog record parses as a
 * JSON object. report (if not NULL) is called once per trace, in id order,
 * after the walk (and the repair). With repair, the damaged traces are
 * deleted whole in one write transaction. Returns TL_OK when the store is
 * sound or every damaged trace was removed; TL_ESTORE when damage remains
 * or the walk itself failed on a damaged B-tree (err says which). */
int tl_store_check(tl_store *s, int repair, tl_check_report_fn report, void *ctx, tl_err *err);
/* Writes a compacted copy of the store (free pages dropped, pages in key
 * order) to dest_dir/data.mdb; TL_EEXIST when dest_dir holds a store. */
int tl_store_compact(tl_store *s, const char *dest_dir, tl_err *err);
/* Compacts the store in place: with the writer lock held and no other
 * process using the store (TL_EEXIST otherwise, nothing changed), the
 * compacted copy is written next to data.mdb and renamed over it. Other
 * processes that open the store meanwhile wait, and then fail once ("not
 * an LMDB file") rather than use the old lock state; the next open works.
 * *before and *after get data.mdb's sizes. Afterwards s can only be
 * closed. */
int tl_store_compact_replace(tl_store *s, uint64_t *before, uint64_t *after, tl_err *err);

/* ---- reading -----------------------------------------------------------
 * A reader is a read-only snapshot (an LMDB read transaction). Pointers it
 * returns stay valid until tl_reader_close. */
typedef struct tl_reader tl_reader;
int tl_reader_open(tl_store *s, tl_reader **out, tl_err *err);
void tl_reader_close(tl_reader *r);

/* Drops the store's pages from this process's resident set (the map is
 * read-only and shared: pages read later fault back in from the page
 * cache). For callers that decoded what they need into memory: the
 * compressed chunks, and the pages the kernel mapped around them
 * (fault-around), would otherwise stay resident for the reader's life. */
void tl_reader_drop_resident(tl_reader *r);
/* While held (on != 0) the reader keeps the store's pages it reads mapped:
 * no drop after each decoded chunk nor in tl_reader_drop_resident. Each
 * drop is a TLB shootdown on every CPU running one of the process's
 * threads, so a process reading traces on many threads holds its readers
 * and drops once a trace. Releasing (on == 0), or closing the reader,
 * drops the span read since at once. A reader starts released; hold and
 * release from one thread while no other uses the reader. */
void tl_reader_hold_pages(tl_reader *r, int on);
int tl_reader_has(tl_reader *r, uint64_t id);
/* Catalog JSON text (NUL-terminated, owned by the reader); NULL on error. */
int tl_reader_catalog(tl_reader *r, uint64_t id, const char **json, tl_err *err);
/* Iterates all traces in id order (over a store list: merged, each id
 * once); cb returns non-zero to stop. A record
 * that fails its check is skipped, and the walk then returns TL_ESTORE
 * naming the first such trace. */
int tl_reader_foreach(tl_reader *r, int (*cb)(void *ctx, uint64_t id, const char *json), void *ctx,
                      tl_err *err);
/* Resolves an id prefix (>= 4 hex digits) to a unique id. */
int tl_reader_resolve(tl_reader *r, const char *prefix, uint64_t *id, tl_err *err);

/* A whole column, contiguous. For a single raw, aligned chunk this points
 * into the map (zero copy); otherwise chunks are decoded into reader memory. */
typedef struct tl_colview {
    tl_ctype type;
    uint64_t n;
    const void *data;           /* fixed-width: n elements */
    const uint64_t *offsets;    /* blob: n+1 offsets into bytes */
    const char *bytes;
} tl_colview;
int tl_reader_column(tl_reader *r, uint64_t id, const char *table, const char *col,
                     tl_colview *out, tl_err *err);
/* tl_reader_column of a column that must hold `type` values (TL_CT_BLOB:
 * text): TL_ESTORE naming the trace, table, column and both types when it
 * holds another (a damaged store), so that no caller reads a fixed-width
 * column as text or the other way round. */
int tl_reader_column_of(tl_reader *r, uint64_t id, const char *table, const char *col, tl_ctype type,
                        tl_colview *out, tl_err *err);
/* A fixed-width column decoded straight into caller memory: dst holds
 * `rows` values of `width` bytes (the column's type size). TL_ENOTFOUND
 * when the trace has no such column, TL_ESTORE when its row count or
 * width differ. For columns that must outlive the reader's arena or be
 * freed on their own. */
int tl_reader_column_into(tl_reader *r, uint64_t id, const char *table, const char *col, void *dst, size_t width,
                          uint64_t rows, tl_err *err);
/* Column chunk by chunk (for scans over many traces without copying). */
int tl_reader_column_chunks(tl_reader *r, uint64_t id, const char *table, const char *col,
                            int (*cb)(void *ctx, uint32_t chunk, const tl_colview *v), void *ctx,
                            tl_err *err);
/* The same walk for one pass over a large column (e.g. args): each chunk is
 * decoded into one scratch buffer reused for the next, so memory holds one
 * chunk, not the column. Views are valid only until the callback returns. */
int tl_reader_column_scan(tl_reader *r, uint64_t id, const char *table, const char *col,
                          int (*cb)(void *ctx, uint32_t chunk, const tl_colview *v), void *ctx,
                          tl_err *err);
/* Bytes stored for a trace, per table (for `info`); returns a JSON object text. */
int tl_reader_sizes(tl_reader *r, uint64_t id, char **json_out, tl_err *err);

/* String dictionary of a trace (blob column "dict"/"str"): id -> text. */
typedef struct tl_dict {
    uint64_t n;
    const uint64_t *offsets;
    const char *bytes;
} tl_dict;
int tl_reader_dict(tl_reader *r, uint64_t id, tl_dict *out, tl_err *err);
static inline const char *tl_dict_get(const tl_dict *d, uint32_t id, size_t *len)
{
    if (id >= d->n) { if (len) *len = 0; return ""; }
    if (len) *len = (size_t)(d->offsets[id + 1] - d->offsets[id] - 1);
    return d->bytes + d->offsets[id];
}

#endif
