/* kineto_internal.h — the Kineto reader's per-thread state, shared by
 * kineto_doc.c (the document), kineto_split.c (the event array, serially
 * or in parts on several threads) and kineto.c (one event). */
#ifndef TL_KINETO_INTERNAL_H
#define TL_KINETO_INTERNAL_H

#include "ingest/ingest.h"
#include "ingest/json.h"
#include "ingest/source.h"

/* A direct-mapped cache of recently interned short strings (names and
 * categories repeat constantly): a hit costs a cheap hash and a compare
 * instead of the builder's full hash and table probe. Holds copies of the
 * text, since the builder's string storage moves as it grows. */
#define SCACHE_SLOTS 512
#define SCACHE_TEXT 48
typedef struct scache_slot {
    uint32_t id;
    uint8_t len; /* 0: empty (empty strings are not cached) */
    char text[SCACHE_TEXT];
} scache_slot;

/* One parser of (part of) a Kineto document into one builder. */
typedef struct kreader {
    tl_json *j;
    tl_build *b;
    tl_source *src;      /* for page release and the parse-thread count */
    scache_slot *scache;
    tl_buf tmp;          /* unescaped strings */
    tl_buf mini;         /* minified promoted values */
    uint8_t *kind_of;    /* cat string id -> kind+1 (0 = not yet known) */
    size_t kind_cap;
    uint32_t uid;        /* elements of traceEvents parsed so far */
} kreader;

void tl_kreader_init(kreader *k, tl_json *j, tl_build *b, tl_source *src);
void tl_kreader_free(kreader *k);
/* Parses one element of traceEvents at j->pos into the builder. */
int tl_kineto_event(kreader *k);

/* Parses the elements of the event array (j->pos just after its '['),
 * leaving j->pos just after its ']'. A large document that is whole in
 * memory (a mapped plain file) is parsed in parts on several threads
 * (kineto_split.c), with the builder left as the serial parse leaves it. */
int tl_kineto_events(kreader *k);

#endif
