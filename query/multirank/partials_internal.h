/* partials_internal.h — one rank's collective records as bytes
 * (partials.c), for the reports split across processes (multirank.h,
 * "across processes"); numbers, texts and tables are packed with
 * query/core/packed.h. Not a public API. */
#ifndef TL_PARTIALS_INTERNAL_H
#define TL_PARTIALS_INTERNAL_H

#include "query/multirank/collective_internal.h"
#include "query/core/packed.h"

/* One rank's collective records and figures. */
void part_put_coll_rank(tl_buf *b, const coll_rank *cr);
/* Fills cr (its own arena); 0, or TL_EFORMAT when the bytes are short. */
int part_get_coll_rank(tl_unpack *in, coll_rank *cr);

#endif
