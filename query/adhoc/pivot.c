/* pivot.c — the side-by-side form of a grouped result (`query --pivot`):
 * one row per group of the other --by columns, one column per value of the
 * pivot column (a run, a trace, a label value) holding each aggregate. */
#include "query/adhoc/adhoc_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A cell's text for keys and headers; missing cells read "null". */
static const char *cell(const tl_table *t, size_t c, size_t r, char *buf, size_t n)
{
    return tl_table_is_missing(t, c, r) ? "null" : tl_table_cell_text(t, c, r, buf, n);
}

/* Numbers held as text sort by value (label values such as bs=8, bs=16). */
static int value_cmp(const void *a, const void *b)
{
    const char *x = *(const char *const *)a, *y = *(const char *const *)b;
    char *ex, *ey;
    double dx = strtod(x, &ex), dy = strtod(y, &ey);
    if (ex != x && ey != y && !*ex && !*ey && dx != dy) return dx < dy ? -1 : 1;
    return strcmp(x, y);
}

tl_table *aq_pivot(const tl_table *t, size_t pcol, size_t nagg, const char *prefix, size_t *src)
{
    tl_arena a;
    tl_arena_init(&a, 4096);
    char buf[64];
    /* the pivot values, sorted, each with its column block */
    tl_smap vals;
    tl_smap_init(&vals, 16);
    TL_VEC(const char *) order = {0};
    for (size_t r = 0; r < t->nrows; r++) {
        const char *v = tl_arena_strdup(&a, cell(t, pcol, r, buf, sizeof buf));
        int isnew;
        tl_smap_put(&vals, v, strlen(v), &isnew);
        if (isnew) tl_vec_push(&order, v);
    }
    if (order.n) qsort(order.v, order.n, sizeof *order.v, value_cmp);
    for (size_t k = 0; k < order.n; k++) *tl_smap_get(&vals, order.v[k], strlen(order.v[k])) = k;

    tl_table *out = tl_table_new(t->name);
    for (size_t c = 0; c < pcol; c++) {
        tl_table_add_col(out, t->cols[c].name, t->cols[c].type);
        src[c] = c;
    }
    for (size_t k = 0; k < order.n; k++)
        for (size_t g = 0; g < nagg; g++) {
            const tl_column *ac = &t->cols[pcol + 1 + g];
            char name[512];
            if (nagg == 1) snprintf(name, sizeof name, "%s%s", prefix, order.v[k]);
            else snprintf(name, sizeof name, "%s%s: %s", prefix, order.v[k], ac->name);
            src[tl_table_add_col(out, name, ac->type)] = pcol + 1 + g;
        }
    /* rows: the groups in the order they first appear in t */
    tl_smap rows;
    tl_smap_init(&rows, t->nrows);
    tl_buf key = {0};
    for (size_t r = 0; r < t->nrows; r++) {
        key.n = 0;
        for (size_t c = 0; c < pcol; c++) {
            tl_buf_puts(&key, tl_table_is_missing(t, c, r) ? "\x1e" : tl_table_cell_text(t, c, r, buf, sizeof buf));
            tl_buf_putc(&key, '\x1f');
        }
        tl_buf_putc(&key, 0);
        const char *kt = tl_arena_strdup(&a, key.p);
        int isnew;
        size_t *slot = tl_smap_put(&rows, kt, strlen(kt), &isnew);
        if (isnew) {
            *slot = tl_table_add_row(out);
            for (size_t c = 0; c < pcol; c++) tl_table_copy_cell(out, c, *slot, t, c, r);
        }
        const char *v = cell(t, pcol, r, buf, sizeof buf);
        size_t block = pcol + *tl_smap_get(&vals, v, strlen(v)) * nagg;
        for (size_t g = 0; g < nagg; g++) tl_table_copy_cell(out, block + g, *slot, t, pcol + 1 + g, r);
    }
    tl_buf_free(&key);
    tl_smap_free(&rows);
    tl_smap_free(&vals);
    tl_vec_free(&order);
    tl_arena_free(&a);
    return out;
}
