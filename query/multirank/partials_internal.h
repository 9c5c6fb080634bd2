/* partials_internal.h — per-rank partial results as bytes (partials.c),
 * for the reports split across processes (multirank.h, "across
 * processes"): a writer appending to a tl_buf and a bounds-checked reader,
 * tables and one rank's collective records. Host byte order: the bytes go
 * between processes of one build, never to disk. Not a public API. */
#ifndef TL_PARTIALS_INTERNAL_H
#define TL_PARTIALS_INTERNAL_H

#include "query/multirank/collective_internal.h"
#include "query/core/table.h"

/* A reader over packed bytes; bad is set (and every later read yields
 * zeros and NULL) once a read would pass the end. */
typedef struct part_in {
    const unsigned char *p, *end;
    int bad;
} part_in;

void part_put_u64(tl_buf *b, uint64_t v);
void part_put_f64(tl_buf *b, double v);
/* A text or NULL. */
void part_put_str(tl_buf *b, const char *s);
void part_put_bytes(tl_buf *b, const void *p, size_t n);
/* A table or NULL, with its columns' types, flags and missing cells. */
void part_put_table(tl_buf *b, const tl_table *t);
/* One rank's collective records and figures. */
void part_put_coll_rank(tl_buf *b, const coll_rank *cr);

uint64_t part_get_u64(part_in *in);
double part_get_f64(part_in *in);
/* A text copied into a (NULL when NULL was put). */
const char *part_get_str(part_in *in, tl_arena *a);
/* n bytes in place (NULL when short). */
const void *part_get_bytes(part_in *in, size_t n);
tl_table *part_get_table(part_in *in);
/* Fills cr (its own arena); 0, or TL_EFORMAT when the bytes are short. */
int part_get_coll_rank(part_in *in, coll_rank *cr);

#endif
