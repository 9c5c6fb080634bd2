/* packed.c — numbers, texts and tables as bytes (packed.h). */
#include "query/core/packed.h"

#include <string.h>

/* ---- numbers and texts ----------------------------------------------------------------- */

void tl_pack_u64(tl_buf *b, uint64_t v) { tl_buf_append(b, &v, sizeof v); }
void tl_pack_f64(tl_buf *b, double v) { tl_buf_append(b, &v, sizeof v); }
void tl_pack_bytes(tl_buf *b, const void *p, size_t n)
{
    if (n) tl_buf_append(b, p, n); /* p may be NULL when n is 0 (an empty vector) */
}

void tl_pack_str(tl_buf *b, const char *s)
{
    if (!s) { tl_pack_u64(b, 0); return; }
    size_t n = strlen(s);
    tl_pack_u64(b, n + 1);
    tl_buf_append(b, s, n);
}

const void *tl_unpack_bytes(tl_unpack *in, size_t n)
{
    if (in->bad || (size_t)(in->end - in->p) < n) {
        in->bad = 1;
        return NULL;
    }
    const void *p = in->p;
    in->p += n;
    return p;
}

uint64_t tl_unpack_u64(tl_unpack *in)
{
    uint64_t v = 0;
    const void *p = tl_unpack_bytes(in, sizeof v);
    if (p) memcpy(&v, p, sizeof v);
    return v;
}

double tl_unpack_f64(tl_unpack *in)
{
    double v = 0;
    const void *p = tl_unpack_bytes(in, sizeof v);
    if (p) memcpy(&v, p, sizeof v);
    return v;
}

const char *tl_unpack_str(tl_unpack *in, tl_arena *a)
{
    uint64_t n = tl_unpack_u64(in);
    if (!n) return NULL;
    const char *p = tl_unpack_bytes(in, (size_t)n - 1);
    return p ? tl_arena_strndup(a, p, (size_t)n - 1) : NULL;
}

/* ---- tables ---------------------------------------------------------------- */

void tl_pack_table(tl_buf *b, const tl_table *t)
{
    tl_pack_u64(b, t != NULL);
    if (!t) return;
    tl_pack_str(b, t->name);
    tl_pack_u64(b, t->nrows);
    tl_pack_u64(b, t->ncols);
    for (size_t c = 0; c < t->ncols; c++) {
        const tl_column *col = &t->cols[c];
        tl_pack_str(b, col->name);
        tl_pack_u64(b, (uint64_t)col->type | (uint64_t)(col->as_float != 0) << 8 | (uint64_t)(col->hidden != 0) << 9 |
                            (uint64_t)(col->valid != NULL) << 10);
        switch (col->type) {
        case TL_STR:
            for (size_t r = 0; r < t->nrows; r++) tl_pack_str(b, col->v.s[r]);
            break;
        case TL_I64: tl_pack_bytes(b, col->v.i, t->nrows * sizeof *col->v.i); break;
        case TL_F64: tl_pack_bytes(b, col->v.f, t->nrows * sizeof *col->v.f); break;
        case TL_BOOL: tl_pack_bytes(b, col->v.b, t->nrows); break;
        }
        if (col->valid) tl_pack_bytes(b, col->valid, t->nrows);
    }
}

/* One column's cells of a table being unpacked. */
static void get_cells(tl_unpack *in, tl_table *t, size_t c, tl_type type, int has_valid)
{
    size_t n = t->nrows;
    if (type == TL_STR) {
        for (size_t r = 0; r < n && !in->bad; r++) {
            uint64_t len = tl_unpack_u64(in);
            const char *s = len ? tl_unpack_bytes(in, (size_t)len - 1) : NULL;
            if (s) tl_table_set_strn(t, c, r, s, (size_t)len - 1);
        }
        return;
    }
    size_t width = type == TL_BOOL ? 1 : 8;
    const unsigned char *v = tl_unpack_bytes(in, n * width);
    const unsigned char *valid = has_valid ? tl_unpack_bytes(in, n) : NULL;
    if (!v || (has_valid && !valid)) return;
    for (size_t r = 0; r < n; r++) {
        if (valid && !valid[r]) continue;
        if (type == TL_I64) {
            int64_t x;
            memcpy(&x, v + r * 8, 8);
            tl_table_set_i64(t, c, r, x);
        } else if (type == TL_F64) {
            double x;
            memcpy(&x, v + r * 8, 8);
            tl_table_set_f64(t, c, r, x);
        } else {
            tl_table_set_bool(t, c, r, v[r]);
        }
    }
}

tl_table *tl_unpack_table(tl_unpack *in)
{
    if (!tl_unpack_u64(in)) return NULL;
    tl_arena a;
    tl_arena_init(&a, 256);
    const char *name = tl_unpack_str(in, &a);
    tl_table *t = tl_table_new(name ? name : "");
    size_t nrows = (size_t)tl_unpack_u64(in), ncols = (size_t)tl_unpack_u64(in);
    if (in->bad || nrows > (size_t)(in->end - in->p) || ncols > (size_t)(in->end - in->p)) in->bad = 1;
    for (size_t c = 0; c < ncols && !in->bad; c++) {
        /* every cell takes a byte at least: a column the bytes left cannot
         * hold is refused before its rows are made */
        if ((size_t)(in->end - in->p) < nrows + 16) { in->bad = 1; break; }
        const char *cname = tl_unpack_str(in, &a);
        uint64_t bits = tl_unpack_u64(in);
        tl_type type = (tl_type)(bits & 0xff);
        if (type > TL_BOOL) { in->bad = 1; break; }
        size_t k = tl_table_add_col(t, cname ? cname : "", type);
        if (c == 0) tl_table_set_nrows(t, nrows);
        t->cols[k].as_float = (bits >> 8) & 1;
        t->cols[k].hidden = (bits >> 9) & 1;
        get_cells(in, t, k, type, (bits >> 10) & 1);
    }
    if (!ncols && !in->bad) tl_table_set_nrows(t, nrows);
    tl_arena_free(&a);
    return t;
}
