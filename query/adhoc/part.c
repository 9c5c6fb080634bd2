/* part.c — partial answers of a query split across processes
 * (tl_adhoc_run_part): what one process found, as bytes, folded two at a
 * time and made into the answer one store would give. A partial is
 *   u64 kind: PART_ERROR, then the code and message of a read error;
 *             PART_GROUPS, then the group state (aq_gstate_pack);
 *             PART_ROWS, then the number of traces, each one's id and row
 *             count in trace (id) order, and the rows as one table. */
#include "query/adhoc/adhoc_internal.h"
#include "query/core/packed.h"

#include <stdlib.h>
#include <string.h>

enum { PART_ERROR = 1, PART_GROUPS = 2, PART_ROWS = 3 };

void aq_part_put_error(tl_buf *b, int code, const char *msg)
{
    tl_pack_u64(b, PART_ERROR);
    tl_pack_u64(b, (uint64_t)(int64_t)code);
    tl_pack_str(b, msg);
}

void aq_part_put_groups(tl_buf *b, const aq_gstate *g, const aq_plan *p, const aq_pool *pool)
{
    tl_pack_u64(b, PART_GROUPS);
    aq_gstate_pack(b, g, p, pool);
}

void aq_part_put_rows(tl_buf *b, const uint64_t *ids, const uint64_t *rows, size_t nblocks, const tl_table *t)
{
    tl_pack_u64(b, PART_ROWS);
    tl_pack_u64(b, nblocks);
    for (size_t i = 0; i < nblocks; i++) {
        tl_pack_u64(b, ids[i]);
        tl_pack_u64(b, rows[i]);
    }
    tl_pack_table(b, t);
}

/* One partial, read. */
typedef struct part {
    int kind;
    int code;            /* PART_ERROR */
    const char *msg;
    aq_gstate g;         /* PART_GROUPS */
    size_t nblocks;      /* PART_ROWS */
    uint64_t *ids, *rows;
    tl_table *t;
} part;

static void part_free(part *x)
{
    if (x->kind == PART_GROUPS) aq_gstate_free(&x->g);
    free(x->ids);
    free(x->rows);
    tl_table_free(x->t);
}

static int malformed(tl_err *err) { return tl_errf(err, TL_EFORMAT, "query --mpi: a malformed partial answer"); }

/* Reads bytes into x; group keys go to pool (and x->msg to a). */
static int part_read(const void *bytes, size_t n, const aq_plan *p, aq_pool *pool, tl_arena *a, part *x,
                     tl_err *err)
{
    memset(x, 0, sizeof *x);
    tl_unpack in = {bytes, (const unsigned char *)bytes + n, 0};
    uint64_t kind = tl_unpack_u64(&in);
    if (kind == PART_ERROR) {
        x->kind = PART_ERROR;
        x->code = (int)(int64_t)tl_unpack_u64(&in);
        x->msg = tl_unpack_str(&in, a);
    } else if (kind == PART_GROUPS && p->group_mode) {
        x->kind = PART_GROUPS;
        aq_gstate_init(&x->g, p);
        aq_gstate_unpack(&in, &x->g, p, pool);
    } else if (kind == PART_ROWS && !p->group_mode) {
        x->kind = PART_ROWS;
        uint64_t nb = tl_unpack_u64(&in);
        if (nb > (uint64_t)(in.end - in.p) / 16) return malformed(err);
        x->nblocks = (size_t)nb;
        x->ids = tl_xmalloc((nb ? nb : 1) * sizeof *x->ids);
        x->rows = tl_xmalloc((nb ? nb : 1) * sizeof *x->rows);
        uint64_t total = 0;
        for (size_t i = 0; i < x->nblocks; i++) {
            x->ids[i] = tl_unpack_u64(&in);
            total += x->rows[i] = tl_unpack_u64(&in);
        }
        x->t = tl_unpack_table(&in);
        if (!in.bad && (!x->t || x->t->nrows != total)) in.bad = 1;
    } else {
        in.bad = 1;
    }
    if (in.bad || in.p != in.end) {
        part_free(x);
        memset(x, 0, sizeof *x);
        return malformed(err);
    }
    return TL_OK;
}

static int same_columns(const tl_table *a, const tl_table *b)
{
    if (a->ncols != b->ncols) return 0;
    for (size_t c = 0; c < a->ncols; c++)
        if (a->cols[c].type != b->cols[c].type || strcmp(a->cols[c].name, b->cols[c].name)) return 0;
    return 1;
}

/* The rows of x and y interleaved by trace id into x (a trace is in one
 * of them); without --sort only the first --top rows are kept. */
static int merge_rows(part *x, const part *y, const aq_plan *p, tl_err *err)
{
    if (!same_columns(x->t, y->t)) return malformed(err);
    tl_table *t = tl_table_new(x->t->name);
    for (size_t c = 0; c < x->t->ncols; c++) tl_table_add_col(t, x->t->cols[c].name, x->t->cols[c].type);
    size_t cap = x->t->nrows + y->t->nrows;
    if (p->limit >= 0 && p->nsort == 0 && (size_t)p->limit < cap) cap = (size_t)p->limit;
    tl_table_set_nrows(t, cap);
    size_t nb = 0, at = 0, i = 0, j = 0, ri = 0, rj = 0;
    uint64_t *ids = tl_xmalloc((x->nblocks + y->nblocks + 1) * sizeof *ids);
    uint64_t *rows = tl_xmalloc((x->nblocks + y->nblocks + 1) * sizeof *rows);
    while ((i < x->nblocks || j < y->nblocks) && at < cap) {
        int from_x = j == y->nblocks || (i < x->nblocks && x->ids[i] < y->ids[j]);
        const part *s = from_x ? x : y;
        size_t b = from_x ? i++ : j++;
        size_t *r = from_x ? &ri : &rj;
        size_t take = s->rows[b] < cap - at ? (size_t)s->rows[b] : cap - at;
        for (size_t k = 0; k < take; k++)
            for (size_t c = 0; c < t->ncols; c++) tl_table_copy_cell(t, c, at + k, s->t, c, *r + k);
        *r += (size_t)s->rows[b];
        ids[nb] = s->ids[b];
        rows[nb++] = take;
        at += take;
    }
    tl_table_set_nrows(t, at);
    tl_table_free(x->t);
    free(x->ids);
    free(x->rows);
    x->t = t;
    x->ids = ids;
    x->rows = rows;
    x->nblocks = nb;
    return TL_OK;
}

static void part_write(tl_buf *b, const part *x, const aq_plan *p, const aq_pool *pool)
{
    if (x->kind == PART_ERROR) aq_part_put_error(b, x->code, x->msg);
    else if (x->kind == PART_GROUPS) aq_part_put_groups(b, &x->g, p, pool);
    else aq_part_put_rows(b, x->ids, x->rows, x->nblocks, x->t);
}

int tl_adhoc_part_merge(const tl_adhoc_query *q, tl_buf *acc, const void *in, size_t n, tl_err *err)
{
    aq_plan p;
    int rc = aq_plan_build(q, &p, err);
    tl_arena a;
    tl_arena_init(&a, 4096);
    aq_pool pool;
    aq_pool_init(&pool, &a);
    part x, y;
    memset(&x, 0, sizeof x);
    memset(&y, 0, sizeof y);
    if (!rc) rc = part_read(acc->p, acc->n, &p, &pool, &a, &x, err);
    if (!rc) rc = part_read(in, n, &p, &pool, &a, &y, err);
    if (!rc && x.kind != PART_ERROR) {
        if (y.kind == PART_ERROR) {
            part_free(&x);
            x = y; /* the first error wins */
            memset(&y, 0, sizeof y);
        } else if (x.kind == PART_GROUPS) {
            aq_gstate_merge(&x.g, &y.g, &p);
        } else {
            rc = merge_rows(&x, &y, &p, err);
        }
    }
    acc->n = 0;
    if (!rc) part_write(acc, &x, &p, &pool);
    else aq_part_put_error(acc, rc, err->msg); /* the answer would be short: it is an error */
    part_free(&x);
    part_free(&y);
    aq_pool_free(&pool);
    tl_arena_free(&a);
    aq_plan_free(&p);
    return rc;
}

int tl_adhoc_part_finish(const tl_adhoc_query *q, const void *bytes, size_t n, tl_table **out, tl_err *err)
{
    *out = NULL;
    aq_plan p;
    int rc = aq_plan_build(q, &p, err);
    tl_table *t = tl_table_new(p.tab ? p.tab->name : "");
    aq_pool pool;
    aq_pool_init(&pool, &t->arena);
    part x;
    memset(&x, 0, sizeof x);
    if (!rc) rc = part_read(bytes, n, &p, &pool, &t->arena, &x, err);
    if (!rc && x.kind == PART_ERROR) {
        rc = tl_errf(err, x.code ? x.code : TL_EIO, "%s", x.msg ? x.msg : "a process failed");
    } else if (!rc && x.kind == PART_GROUPS) {
        aq_gstate_table(&x.g, &p, &pool, t);
    } else if (!rc) {
        tl_table_free(t);
        t = x.t;
        x.t = NULL;
    }
    if (!rc) rc = aq_sort_and_limit(&p, t, q->sort, err);
    if (!rc) t = aq_finish(&p, q, t);
    part_free(&x);
    aq_pool_free(&pool);
    aq_plan_free(&p);
    if (rc) { tl_table_free(t); return rc; }
    *out = t;
    return TL_OK;
}
