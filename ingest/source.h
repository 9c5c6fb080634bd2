/* source.h — where input bytes come from: a memory-mapped plain file, or a
 * gzip stream inflated on a second thread into a ring of blocks, so that
 * decompression and parsing overlap on two cores. Also format detection by
 * content (gzip magic; JSON vs protobuf) and the content hash (trace id). */
#ifndef TL_SOURCE_H
#define TL_SOURCE_H

#include <stdint.h>
#include <stddef.h>
#include "base/base.h"

typedef struct tl_source tl_source;

/* Opens path: gzip (any name) is inflated, anything else mapped. Computes
 * the content hash of the raw file bytes into *id (if id != NULL). */
int tl_source_open(const char *path, tl_source **out, uint64_t *id, tl_err *err);
/* Same, but the hash is computed on a thread beside the parser; read it
 * with tl_source_id (which waits for it). */
int tl_source_open_async(const char *path, tl_source **out, tl_err *err);
uint64_t tl_source_id(tl_source *s);
/* With an async source: once the hash is known, fn(ctx, id) is asked
 * (from the parsing thread) whether that trace is stored already; if it
 * says yes, the window and release calls return TL_EEXIST so the parser
 * stops early. */
typedef int (*tl_source_known_fn)(void *ctx, uint64_t id);
void tl_source_set_known(tl_source *s, tl_source_known_fn fn, void *ctx);
/* A source over bytes in memory (fuzz targets, tests); gzip is inflated
 * as for files. The buffer must outlive the source. */
int tl_source_open_mem(const void *buf, size_t n, const char *name, tl_source **out, tl_err *err);
void tl_source_close(tl_source *s);
/* Whether a file source is still as it was opened (size and modification
 * time; no page of its mapping found missing): 0, or TL_EIO with a message
 * naming the file and the byte where its data ended. Waits for the hashing
 * thread. Memory sources always pass. */
int tl_source_unchanged(tl_source *s, tl_err *err);
int tl_source_is_gzip(const tl_source *s);
uint64_t tl_source_file_size(const tl_source *s);
/* Total decompressed bytes delivered so far. */
uint64_t tl_source_bytes_out(const tl_source *s);
/* The first up to n bytes of the decompressed stream (for sniffing);
 * returns the count. */
size_t tl_source_peek(tl_source *s, const char **p, size_t n, tl_err *err);

/* Window protocol used by the JSON scanner: buf and len describe the bytes
 * from absolute offset `keep` (which the caller still needs) to the end of
 * what is available; returns 0, TL_EFORMAT on corrupt compressed data or
 * an exceeded limit (with message), and sets *eof when nothing more will
 * come. Each call appends at least as many bytes as it keeps, so a unit
 * that runs off the window again and again (one long token) is re-scanned
 * O(log n) times over a doubling window: linear time in all. */
int tl_source_window(tl_source *s, uint64_t keep, const char **buf, size_t *len, uint64_t *base,
                     int *eof, tl_err *err);
/* Hint: bytes before absolute offset `upto` will not be read again.
 * Returns 0, or TL_EEXIST when the parse should stop (see set_known). */
int tl_source_release(tl_source *s, uint64_t upto);

/* Parallel parse of a plain (mapped) input, whose window is the whole
 * file: a part of the document, from byte `start`, is parsed by another
 * thread. Returns the part's slot (>= 1), or -1 when the input cannot be
 * parsed in parts (gzip) or all slots are open. Call before the part's
 * thread starts; close the slot once that thread has ended (its pages up
 * to where it stopped are dropped, and the slot is free for a later part). */
int tl_source_part_open(tl_source *s, uint64_t start);
void tl_source_part_close(tl_source *s, int part);
/* How many threads may parse this input at once: 1 for gzip (the inflater
 * is sequential), else tl_source_set_parts' value, or with 0 (the default)
 * the CPUs this process may run on. */
int tl_source_parts_allowed(const tl_source *s);
void tl_source_set_parts(tl_source *s, int n);
/* The size of a parallel parse's parts in bytes (0: the parser's
 * choice), and whether the parallel parse reports its times on stderr. */
void tl_source_set_split(tl_source *s, size_t min_part, int timing);
size_t tl_source_split_min(const tl_source *s);
int tl_source_timing(const tl_source *s);
/* The part's parser has passed `upto`: drops the pages behind it (as
 * tl_source_release does for the main parser). Called from the part's
 * thread, concurrently with the main parser. */
void tl_source_part_release(tl_source *s, int part, uint64_t upto);

/* Limits on what a source delivers; 0 in a field: no limit. max_bytes
 * bounds the decompressed stream (a plain file's size); a gzip stream is
 * refused once it has inflated to more than max_ratio times the
 * compressed file's size and more than ratio_floor bytes (a gzip bomb).
 * Returns 0, or TL_EFORMAT when a plain file is over max_bytes already. */
typedef struct tl_source_limits {
    uint64_t max_bytes;
    uint64_t max_ratio;
    uint64_t ratio_floor;
} tl_source_limits;
int tl_source_set_limits(tl_source *s, const tl_source_limits *l, tl_err *err);

/* Whole decompressed content in memory (small inputs: protobuf). The
 * returned buffer is owned by the source. */
int tl_source_read_all(tl_source *s, const char **buf, size_t *len, tl_err *err);

/* Progress callback: called from the parsing thread now and then. */
typedef void (*tl_progress_fn)(void *ctx, uint64_t done_bytes, uint64_t total_bytes);
void tl_source_set_progress(tl_source *s, tl_progress_fn fn, void *ctx);

#endif
