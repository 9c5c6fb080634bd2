/* kineto_internal.h — the Kineto reader's per-thread state, shared by
 * kineto.c (the document and its events) and kineto_split.c (parsing the
 * event array in parts on several threads). */
#ifndef TL_KINETO_INTERNAL_H
#define TL_KINETO_INTERNAL_H

#include "ingest.h"
#include "json.h"
#include "source.h"

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

/* Whether the event array (j->pos just after its '[') is worth parsing
 * in parts: the whole document is in memory (a mapped plain file), it is
 * large, and more than one core is available. */
int tl_kineto_split_wanted(kreader *k);
/* Parses the rest of the event array in parts on several threads, leaving
 * j->pos just after its ']' and the builder as a serial parse would. */
int tl_kineto_split_events(kreader *k);

#endif
