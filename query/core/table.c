/* table.c — the tl_table every analysis returns. Column data arrays are
 * malloc'ed (they grow with the row count and are reordered by permute);
 * names and string cells live in the table's arena so one tl_table_free
 * releases everything. Cell text follows the reference CSV rules (spec
 * pytorch-report.md §11.1) so that csv, xlsx and tests agree on one text. */
#include "query/core/table.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

tl_table *tl_table_new(const char *name)
{
    tl_table *t = tl_xcalloc(1, sizeof *t);
    tl_arena_init(&t->arena, 64 * 1024);
    t->name = tl_arena_strdup(&t->arena, name ? name : "");
    return t;
}

void tl_table_free(tl_table *t)
{
    if (!t) return;
    for (size_t c = 0; c < t->ncols; c++) {
        free(t->cols[c].v.s); /* any union member: one malloc'ed array */
        free(t->cols[c].valid);
    }
    free(t->cols);
    tl_arena_free(&t->arena);
    free(t);
}

void tl_tables_free(tl_table **v, size_t n)
{
    if (!v) return;
    for (size_t i = 0; i < n; i++) tl_table_free(v[i]);
    free(v);
}

tl_table *tl_tables_find(tl_table *const *v, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(v[i]->name, name) == 0) return v[i];
    return NULL;
}

static size_t elem_size(tl_type ty)
{
    switch (ty) {
    case TL_STR: return sizeof(const char *);
    case TL_I64: return sizeof(int64_t);
    case TL_F64: return sizeof(double);
    case TL_BOOL: return sizeof(uint8_t);
    }
    return sizeof(int64_t);
}

/* Marks rows [from, to) of a column missing. A missing I64/BOOL needs a valid
 * array; it is created lazily so that fully-populated columns never pay. */
static void fill_missing(tl_table *t, tl_column *c, size_t from, size_t to)
{
    if (from >= to) return;
    switch (c->type) {
    case TL_STR:
        for (size_t r = from; r < to; r++) c->v.s[r] = NULL;
        break;
    case TL_F64:
        for (size_t r = from; r < to; r++) c->v.f[r] = NAN;
        break;
    case TL_I64:
    case TL_BOOL:
        if (!c->valid) {
            size_t cap = t->cap_rows ? t->cap_rows : 1;
            c->valid = tl_xmalloc(cap);
            memset(c->valid, 1, cap);
        }
        memset(c->valid + from, 0, to - from);
        if (c->type == TL_I64) memset(c->v.i + from, 0, (to - from) * sizeof(int64_t));
        else memset(c->v.b + from, 0, to - from);
        break;
    }
}

static void grow_rows(tl_table *t, size_t need)
{
    if (need <= t->cap_rows) return;
    size_t cap = t->cap_rows ? t->cap_rows : 16;
    while (cap < need) cap = cap <= SIZE_MAX / 2 ? cap * 2 : need; /* no wrap to 0 */
    for (size_t i = 0; i < t->ncols; i++) {
        tl_column *c = &t->cols[i];
        c->v.s = tl_xrealloc(c->v.s, cap * elem_size(c->type));
        if (c->valid) c->valid = tl_xrealloc(c->valid, cap);
    }
    t->cap_rows = cap;
}

size_t tl_table_add_col(tl_table *t, const char *name, tl_type type)
{
    if (t->ncols == t->cap_cols) {
        t->cap_cols = t->cap_cols ? t->cap_cols * 2 : 8;
        t->cols = tl_xrealloc(t->cols, t->cap_cols * sizeof *t->cols);
    }
    tl_column *c = &t->cols[t->ncols];
    memset(c, 0, sizeof *c);
    c->name = tl_arena_strdup(&t->arena, name ? name : "");
    c->type = type;
    c->v.s = tl_xmalloc((t->cap_rows ? t->cap_rows : 1) * elem_size(type));
    fill_missing(t, c, 0, t->nrows);
    return t->ncols++;
}

long tl_table_col(const tl_table *t, const char *name)
{
    for (size_t i = 0; i < t->ncols; i++)
        if (strcmp(t->cols[i].name, name) == 0) return (long)i;
    return -1;
}

void tl_table_set_nrows(tl_table *t, size_t n)
{
    if (n > t->nrows) {
        grow_rows(t, n);
        for (size_t i = 0; i < t->ncols; i++) fill_missing(t, &t->cols[i], t->nrows, n);
    }
    t->nrows = n;
}

void tl_table_set_nrows_uncleared(tl_table *t, size_t n)
{
    if (n <= t->nrows) {
        t->nrows = n;
        return;
    }
    grow_rows(t, n);
    /* the validity bytes that tl_table_clear_rows writes exist before any
     * thread clears its range; the rows already there stay valid */
    for (size_t i = 0; i < t->ncols; i++) {
        tl_column *c = &t->cols[i];
        if ((c->type == TL_I64 || c->type == TL_BOOL) && !c->valid) {
            c->valid = tl_xmalloc(t->cap_rows);
            memset(c->valid, 1, t->nrows);
        }
    }
    t->nrows = n;
}

void tl_table_clear_rows(tl_table *t, size_t col, size_t from, size_t to)
{
    fill_missing(t, &t->cols[col], from, to);
}

size_t tl_table_add_row(tl_table *t)
{
    tl_table_set_nrows(t, t->nrows + 1);
    return t->nrows - 1;
}

static void mark_valid(tl_column *c, size_t row)
{
    if (c->valid) c->valid[row] = 1;
}

void tl_table_set_str(tl_table *t, size_t col, size_t row, const char *s)
{
    t->cols[col].v.s[row] = s ? tl_arena_strdup(&t->arena, s) : NULL;
}

void tl_table_set_strn(tl_table *t, size_t col, size_t row, const char *s, size_t n)
{
    t->cols[col].v.s[row] = s ? tl_arena_strndup(&t->arena, s, n) : NULL;
}

void tl_table_set_str_ref(tl_table *t, size_t col, size_t row, const char *s)
{
    t->cols[col].v.s[row] = s;
}

void tl_table_set_i64(tl_table *t, size_t col, size_t row, int64_t v)
{
    tl_column *c = &t->cols[col];
    c->v.i[row] = v;
    mark_valid(c, row);
}

void tl_table_set_f64(tl_table *t, size_t col, size_t row, double v)
{
    t->cols[col].v.f[row] = v;
}

void tl_table_set_bool(tl_table *t, size_t col, size_t row, int v)
{
    tl_column *c = &t->cols[col];
    c->v.b[row] = v ? 1 : 0;
    mark_valid(c, row);
}

void tl_table_set_missing(tl_table *t, size_t col, size_t row)
{
    fill_missing(t, &t->cols[col], row, row + 1);
}

int tl_table_is_missing(const tl_table *t, size_t col, size_t row)
{
    const tl_column *c = &t->cols[col];
    switch (c->type) {
    case TL_STR: return c->v.s[row] == NULL;
    case TL_F64: return isnan(c->v.f[row]);
    case TL_I64:
    case TL_BOOL: return c->valid && !c->valid[row];
    }
    return 1;
}

void tl_table_copy_cell(tl_table *dst, size_t dc, size_t dr, const tl_table *src, size_t sc, size_t sr)
{
    if (tl_table_is_missing(src, sc, sr)) return;
    const tl_column *col = &src->cols[sc];
    switch (col->type) {
    case TL_STR: tl_table_set_str(dst, dc, dr, col->v.s[sr]); break;
    case TL_I64: tl_table_set_i64(dst, dc, dr, col->v.i[sr]); break;
    case TL_F64: tl_table_set_f64(dst, dc, dr, col->v.f[sr]); break;
    case TL_BOOL: tl_table_set_bool(dst, dc, dr, col->v.b[sr]); break;
    }
}

double tl_table_num(const tl_table *t, size_t col, size_t row)
{
    const tl_column *c = &t->cols[col];
    if (tl_table_is_missing(t, col, row)) return NAN;
    switch (c->type) {
    case TL_I64: return (double)c->v.i[row];
    case TL_F64: return c->v.f[row];
    case TL_BOOL: return c->v.b[row];
    case TL_STR: break;
    }
    return NAN;
}

int tl_table_col_has_missing(const tl_table *t, size_t col)
{
    const tl_column *c = &t->cols[col];
    switch (c->type) {
    case TL_I64:
    case TL_BOOL: return c->valid && memchr(c->valid, 0, t->nrows) != NULL;
    case TL_STR:
        for (size_t r = 0; r < t->nrows; r++)
            if (!c->v.s[r]) return 1;
        return 0;
    case TL_F64:
        for (size_t r = 0; r < t->nrows; r++)
            if (isnan(c->v.f[r])) return 1;
        return 0;
    }
    return 0;
}

void tl_table_int_na_as_float(tl_table *t)
{
    for (size_t c = 0; c < t->ncols; c++)
        if (t->cols[c].type == TL_I64 && tl_table_col_has_missing(t, c)) t->cols[c].as_float = 1;
}

void tl_table_f64_to_i64(tl_table *t, size_t col)
{
    tl_column *c = &t->cols[col];
    if (c->type != TL_F64) return;
    int missing = 0;
    for (size_t r = 0; r < t->nrows; r++) missing |= isnan(c->v.f[r]);
    if (missing) {
        c->valid = tl_xmalloc(t->cap_rows ? t->cap_rows : 1);
        for (size_t r = 0; r < t->nrows; r++) c->valid[r] = !isnan(c->v.f[r]);
    }
    /* in place: both element types are 8 bytes (the malloc'ed array takes
     * the int64 values through memcpy) */
    for (size_t r = 0; r < t->nrows; r++) {
        double f = c->v.f[r];
        int64_t i = isnan(f) ? 0 : llround(f);
        memcpy((char *)c->v.f + r * sizeof f, &i, sizeof i);
    }
    c->type = TL_I64;
}

/* Copies src into buf (truncating to bufsz) and returns buf. */
static const char *put(char *buf, size_t bufsz, const char *src, size_t n)
{
    if (!bufsz) return "";
    if (n >= bufsz) n = bufsz - 1;
    memcpy(buf, src, n);
    buf[n] = 0;
    return buf;
}

const char *tl_table_cell_text(const tl_table *t, size_t col, size_t row, char *buf, size_t bufsz)
{
    const tl_column *c = &t->cols[col];
    if (tl_table_is_missing(t, col, row)) return "";
    char tmp[48];
    size_t n;
    switch (c->type) {
    case TL_STR:
        return c->v.s[row];
    case TL_F64:
        n = tl_fmt_pyfloat(c->v.f[row], tmp);
        return put(buf, bufsz, tmp, n);
    case TL_I64:
        /* as_float: pandas turns an int column with NaN into float64, so the
         * producer flags such columns and they print as "8.0". */
        if (c->as_float) n = tl_fmt_pyfloat((double)c->v.i[row], tmp);
        else n = (size_t)snprintf(tmp, sizeof tmp, "%lld", (long long)c->v.i[row]);
        return put(buf, bufsz, tmp, n);
    case TL_BOOL:
        return c->v.b[row] ? "True" : "False";
    }
    return "";
}

void tl_table_permute(tl_table *t, const size_t *perm, size_t n)
{
    size_t cap = n > t->cap_rows ? n : t->cap_rows;
    if (!cap) cap = 1;
    for (size_t i = 0; i < t->ncols; i++) {
        tl_column *c = &t->cols[i];
        size_t es = elem_size(c->type);
        unsigned char *src = (unsigned char *)c->v.s, *dst = tl_xmalloc(cap * es);
        for (size_t r = 0; r < n; r++) memcpy(dst + r * es, src + perm[r] * es, es);
        free(src);
        c->v.s = (const char **)(void *)dst;
        if (c->valid) {
            uint8_t *v = tl_xmalloc(cap);
            for (size_t r = 0; r < n; r++) v[r] = c->valid[perm[r]];
            free(c->valid);
            c->valid = v;
        }
    }
    t->cap_rows = cap;
    t->nrows = n;
}
