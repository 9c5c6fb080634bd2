/* store_internal.h — what the files of store/ share and nothing outside
 * store/ sees: the environment and reader structures, the write
 * transaction runner, and the checks of a chunk or catalog value that
 * store.c applies on every read and check.c applies to the whole store. */
#ifndef TL_STORE_INTERNAL_H
#define TL_STORE_INTERNAL_H

#include "store/store.h"

#include <lmdb.h>
#include <setjmp.h>
#include <signal.h>

struct tl_store {
    MDB_env *env;
    MDB_dbi meta, catalog, columns;
    char *dir;
    size_t mapsize;
    int readonly; /* opened MDB_RDONLY: the files are not writable here */
    int held_lock_fd; /* lock.mdb held by tl_store_compact_replace, or -1 */
    /* a store list (tl_store_open_list): the shards, read as one store;
     * env is then NULL and dir names them all */
    tl_store **shards;
    size_t nshards;
};

struct tl_reader {
    tl_store *s;
    MDB_txn *txn;
    tl_arena arena;
    uintptr_t map_lo, map_hi; /* span of the chunk values read (tl_reader_drop_resident) */
    int hold_pages;           /* tl_reader_hold_pages: no drops until released */
    /* over a store list: one reader per shard (reader.c); txn is then NULL */
    tl_reader **parts;
    size_t nparts;
};

/* The reader of one store (store.c): what the public tl_reader_* functions
 * of reader.c call on a single store, or on the shard holding an id. */
int tl_reader_one_open(tl_store *s, tl_reader **out, tl_err *err);
void tl_reader_one_close(tl_reader *r);
void tl_reader_one_drop_resident(tl_reader *r);
void tl_reader_one_hold_pages(tl_reader *r, int on);
int tl_reader_one_has(tl_reader *r, uint64_t id);
int tl_reader_one_catalog(tl_reader *r, uint64_t id, const char **json, tl_err *err);
int tl_reader_one_foreach(tl_reader *r, int (*cb)(void *ctx, uint64_t id, const char *json), void *ctx,
                          tl_err *err);
int tl_reader_one_resolve(tl_reader *r, const char *prefix, uint64_t *id, tl_err *err);
int tl_reader_one_column(tl_reader *r, uint64_t id, const char *table, const char *col, tl_colview *out,
                         tl_err *err);
int tl_reader_one_column_into(tl_reader *r, uint64_t id, const char *table, const char *col, void *dst,
                              size_t width, uint64_t rows, tl_err *err);
int tl_reader_one_column_chunks(tl_reader *r, uint64_t id, const char *table, const char *col,
                                int (*cb)(void *ctx, uint32_t chunk, const tl_colview *v), void *ctx,
                                tl_err *err);
int tl_reader_one_column_scan(tl_reader *r, uint64_t id, const char *table, const char *col,
                              int (*cb)(void *ctx, uint32_t chunk, const tl_colview *v), void *ctx,
                              tl_err *err);
int tl_reader_one_dict(tl_reader *r, uint64_t id, tl_dict *out, tl_err *err);
/* tl_reader_column_of's check of a column read (rc its read's result). */
int tl_reader_check_type(uint64_t id, const char *table, const char *col, tl_ctype type, int rc,
                         const tl_colview *v, tl_err *err);
int tl_reader_one_sizes(tl_reader *r, uint64_t id, char **json_out, tl_err *err);

/* TL_EUNSUPPORTED naming the shards when s is a store list (writes,
 * checks and compaction take one store), else TL_OK. */
int tl_store_refuse_list(const tl_store *s, const char *what, tl_err *err);

/* Whether rc is a TL_E* code (message set) rather than an LMDB one (errno
 * values are positive, LMDB's own codes below -30000). */
static inline int tl_store_own_code(int rc) { return rc < 0 && rc > -1000; }

/* Sets err from an LMDB or errno code rc (TL_ESTORE): "store DIR: what:
 * reason", a full disk named as such (open.c). */
int tl_store_lmdb_err(tl_err *err, int rc, const char *what, const char *dir);
/* Allocates the blocks up to `bytes` into the data file (past its end,
 * keeping its length) before a write transaction extends it, so that a
 * full disk fails here rather than as a short write inside LMDB (open.c). */
int tl_store_reserve(tl_store *s, size_t bytes, tl_err *err);

/* One chunk value to copy into its reserved place, n bytes into dst:
 * from src (malloc'd, freed once copied), or, when src is NULL, read from
 * the spill file fd at off. */
typedef struct {
    void *dst;
    void *src;
    size_t n;
    int fd;
    uint64_t off;
} tl_dirty_copy;
/* Copies v[0..n) on up to one thread per core while the caller waits
 * (dirty_copy.c); the dsts must stay where they are until it returns.
 * Returns 0, or the errno of the first spill-file read that failed (EIO
 * for a file that ends early); every src is freed either way. */
int tl_store_dirty_copy(tl_dirty_copy *v, size_t n);
/* Reads n bytes at off of fd into dst (pread, retried); 0, or an errno
 * (EIO for a file that ends early). */
int tl_store_read_at(int fd, void *dst, size_t n, uint64_t off);

/* Runs fn inside a write transaction, growing the map and retrying on
 * MDB_MAP_FULL; fn returns 0, an LMDB code or a negative TL_E* code. */
int tl_store_with_write_txn(tl_store *s, int (*fn)(tl_store *, MDB_txn *, void *, tl_err *), void *ctx,
                            tl_err *err);
/* Deletes the catalog record (absent is fine) and every chunk of trace id
 * inside txn; returns 0 or an LMDB code. */
int tl_store_txn_delete_trace(tl_store *s, MDB_txn *txn, uint64_t id);

/* Verifies one column chunk completely: header sizes, checksum, and a
 * decode into scratch memory (offsets of blob chunks, LZ4 and narrowed
 * payload sizes). k is its key, for the message. */
int tl_store_chunk_verify(tl_reader *r, const MDB_val *k, const MDB_val *v, tl_err *err);
/* Verifies a catalog value: NUL-terminated text, and its checksum where it
 * has one (schema 3). */
int tl_store_catalog_verify(const char *dir, uint64_t id, const MDB_val *v, tl_err *err);

/* ---- fault guard (fault_guard.c) ----------------------------------------
 * Installs, once per process, the SIGSEGV/SIGBUS handler that ends a
 * guarded read with an error (tl_store_open calls it). */
void tl_fault_guard_install(void);
/* The calling thread's guard (NULL: none), and setting it; callbacks of
 * the caller run with the guard set to NULL (a fault in their code is a
 * bug of theirs, not damage). */
sigjmp_buf *tl_fault_guard_get(void);
void tl_fault_guard_set(sigjmp_buf *g);
/* The error of the calling thread's last faulted read. */
int tl_fault_error(const char *dir, tl_err *err);

/* Returns expr (an int) evaluated under the guard, or on_fault when a
 * read inside it faulted. For the bodies of read functions; what expr
 * allocates before a fault is not freed (the error path of a damaged
 * store). */
#define STORE_GUARDED(on_fault, expr)                \
    do {                                             \
        sigjmp_buf jb_;                              \
        sigjmp_buf *prev_ = tl_fault_guard_get();    \
        if (sigsetjmp(jb_, 1)) {                     \
            tl_fault_guard_set(prev_);               \
            return (on_fault);                       \
        }                                            \
        tl_fault_guard_set(&jb_);                    \
        int rc_ = (expr);                            \
        tl_fault_guard_set(prev_);                   \
        return rc_;                                  \
    } while (0)

/* Checks dir/data.mdb before LMDB maps it (env_check.c): an LMDB file
 * whose meta pages are sound and whose length covers every page they say
 * is in use. TL_OK also when there is no file yet. */
int tl_store_env_check(const char *dir, tl_err *err);

#endif
