/* ingest.h — turning trace files into stored traces. tl_ingest_file sniffs
 * the format by content (gzip or not), runs the matching reader into a
 * tl_build, builds the tree/links, and commits one write transaction.
 * Readers (one per format) share the builder and the JSON scanner. */
#ifndef TL_INGEST_H
#define TL_INGEST_H

#include <stdint.h>
#include "base/base.h"
#include "store/store.h"
#include "ingest/builder.h"
#include "ingest/source.h"

typedef enum { TL_FMT_UNKNOWN = 0, TL_FMT_KINETO, TL_FMT_ROCPROF, TL_FMT_XPLANE, TL_FMT_PFTRACE } tl_format;
const char *tl_format_name(tl_format f);

/* Sniffs the decompressed head of a source. */
tl_format tl_sniff(tl_source *src, tl_err *err);

/* Readers: parse the whole source into b (format and events), or fail with a
 * message naming file, byte offset and what was expected. */
int tl_read_kineto(tl_source *src, const char *path, tl_build *b, tl_err *err);
int tl_read_rocprof(tl_source *src, const char *path, tl_build *b, tl_err *err);
int tl_read_xplane(tl_source *src, const char *path, tl_build *b, tl_err *err);
int tl_read_pftrace(tl_source *src, const char *path, tl_build *b, tl_err *err);

/* Input guards, the defaults of tl_ingest_opts' fields of the same names
 * (used where a field is 0): no size limit; a gzip file may inflate to
 * 1000 times its size, and to any size up to TL_INGEST_RATIO_FLOOR
 * bytes (real traces compress 10-50 times; deflate's maximum is 1032). */
#define TL_INGEST_DEFAULT_MAX_INPUT_BYTES 0
#define TL_INGEST_DEFAULT_MAX_INFLATE_RATIO 1000
#define TL_INGEST_RATIO_FLOOR (1ull << 30)

typedef struct tl_ingest_opts {
    int progress;            /* draw a progress bar on stderr (TTY) */
    int64_t rank;            /* -1: unknown (the reader may find distributedInfo) */
    const char *config, *run, *labels_json;
    int parse_threads;       /* threads parsing one trace (the parts of a
                              * plain file); 0: one per CPU, or in a
                              * corpus ingest of several files at once the
                              * file's share (tl_ingest_file_threads) */
    uint64_t max_input_bytes;   /* refuse input larger than this (decompressed
                                 * bytes); 0: TL_INGEST_DEFAULT_MAX_INPUT_BYTES,
                                 * UINT64_MAX: no limit */
    uint64_t max_inflate_ratio; /* refuse gzip input that inflates past this
                                 * many times its size (and past
                                 * TL_INGEST_RATIO_FLOOR bytes); 0:
                                 * TL_INGEST_DEFAULT_MAX_INFLATE_RATIO,
                                 * UINT64_MAX: no limit */
    int parse_parts;         /* with parse_threads 0: threads parsing one plain
                              * file (TRACELENS_PARSE_THREADS); 0: one per CPU */
    size_t split_min;        /* part size of a parallel parse, bytes
                              * (TRACELENS_SPLIT_MIN); 0: the parser's choice */
    int timing;              /* stage times on stderr (TRACELENS_TIMING) */
} tl_ingest_opts;

typedef struct tl_ingest_result {
    uint64_t id;
    uint64_t events;         /* complete events stored */
    int existed;             /* already in the store: nothing written */
    tl_format format;
    uint64_t in_bytes, json_bytes;
    double seconds;
} tl_ingest_result;

int tl_ingest_file(tl_store *s, const char *path, const tl_ingest_opts *o, tl_ingest_result *res,
                   tl_err *err);

/* The two halves of tl_ingest_file, so that many files can be parsed on
 * worker threads while one thread commits (LMDB has a single writer):
 * prepare hashes, skips a stored trace (res.existed) or parses into
 * build; commit writes the build in one transaction. */
typedef struct tl_ingest_prep {
    char *path;           /* absolute path */
    tl_build *build;      /* NULL when the trace already existed */
    tl_build_info info;
    tl_ingest_result res;
    int timing;           /* the options' timing, for the commit */
} tl_ingest_prep;
int tl_ingest_prepare(tl_store *s, const char *path, const tl_ingest_opts *o, tl_ingest_prep *pp,
                      tl_err *err);
int tl_ingest_commit(tl_store *s, tl_ingest_prep *pp, tl_err *err);
void tl_ingest_prep_free(tl_ingest_prep *pp);

/* The parse threads of one file when several files are parsed at once:
 * its own parse_threads when set, else `share` (the CPUs over the files
 * in flight, at least 1) lowered to its parse_parts when that is set. */
int tl_ingest_file_threads(const tl_ingest_opts *o, int share);

/* Parses many files on `jobs` threads while the calling thread commits
 * them one by one; done() is called on the calling thread for each file in
 * completion order, with rc and err of that file. At most `jobs` traces
 * are started and not yet committed at any time (bounded memory). Each
 * file is parsed on its share of the CPUs (tl_ingest_file_threads). */
typedef void (*tl_ingest_done_fn)(void *ctx, size_t index, int rc, const tl_ingest_prep *pp,
                                  const tl_err *err);
int tl_ingest_many(tl_store *s, const char *const *paths, const tl_ingest_opts *opts, size_t n,
                   int jobs, tl_ingest_done_fn done, void *ctx);

/* Parse only (no store). */
int tl_ingest_parse(const char *path, const tl_ingest_opts *o, tl_build **out, tl_build_info *info,
                    tl_ingest_result *res, tl_err *err);

#endif
