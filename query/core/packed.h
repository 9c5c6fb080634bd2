/* packed.h — results as bytes for another process of the same build
 * (the reports and queries split across MPI processes): a writer appending
 * to a tl_buf and a bounds-checked reader, for numbers, texts and whole
 * tables. Host byte order: the bytes travel between processes, never to
 * disk. */
#ifndef TL_PACKED_H
#define TL_PACKED_H

#include "query/core/table.h"

/* A reader over packed bytes; bad is set (and every later read yields
 * zeros and NULL) once a read would pass the end. */
typedef struct tl_unpack {
    const unsigned char *p, *end;
    int bad;
} tl_unpack;

void tl_pack_u64(tl_buf *b, uint64_t v);
void tl_pack_f64(tl_buf *b, double v);
/* A text or NULL. */
void tl_pack_str(tl_buf *b, const char *s);
void tl_pack_bytes(tl_buf *b, const void *p, size_t n);
/* A table or NULL, with its columns' types, flags and missing cells. */
void tl_pack_table(tl_buf *b, const tl_table *t);

uint64_t tl_unpack_u64(tl_unpack *in);
double tl_unpack_f64(tl_unpack *in);
/* A text copied into a (NULL when NULL was put). */
const char *tl_unpack_str(tl_unpack *in, tl_arena *a);
/* n bytes in place (NULL when short). */
const void *tl_unpack_bytes(tl_unpack *in, size_t n);
/* The table (NULL when NULL was put or the bytes are short: in->bad). */
tl_table *tl_unpack_table(tl_unpack *in);

#endif
