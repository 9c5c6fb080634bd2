/* ingest.h — turning trace files into stored traces. tl_ingest_file sniffs
 * the format by content (gzip or not), runs the matching reader into a
 * tl_build, builds the tree/links, and commits one write transaction.
 * Readers (one per format) share the builder and the JSON scanner. */
#ifndef TL_INGEST_H
#define TL_INGEST_H

#include <stdint.h>
#include "../store/util.h"
#include "../store/store.h"
#include "builder.h"
#include "source.h"

typedef enum { TL_FMT_UNKNOWN = 0, TL_FMT_KINETO, TL_FMT_ROCPROF, TL_FMT_XPLANE } tl_format;
const char *tl_format_name(tl_format f);

/* Sniffs the decompressed head of a source. */
tl_format tl_sniff(tl_source *src, tl_err *err);

/* Readers: parse the whole source into b (format and events), or fail with a
 * message naming file, byte offset and what was expected. */
int tl_read_kineto(tl_source *src, const char *path, tl_build *b, tl_err *err);
int tl_read_rocprof(tl_source *src, const char *path, tl_build *b, tl_err *err);
int tl_read_xplane(tl_source *src, const char *path, tl_build *b, tl_err *err);

typedef struct tl_ingest_opts {
    int progress;            /* draw a progress bar on stderr (TTY) */
    int64_t rank;            /* -1: unknown (the reader may find distributedInfo) */
    const char *config, *run, *labels_json;
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

/* Parse only (no store): used by the parallel corpus ingest's workers. */
int tl_ingest_parse(const char *path, const tl_ingest_opts *o, tl_build **out, tl_build_info *info,
                    tl_ingest_result *res, tl_err *err);

#endif
