/* reader.c — the public reader (store.h) over one store or a store list.
 * On one store every call is the single-store reader of store.c. On a
 * store list (tl_store_open_list) the reader holds one reader per shard:
 * calls naming a trace go to the first shard (in list order) that holds
 * the id, the catalog walk merges the shards' catalogs in id order with
 * each id once, and an id prefix resolves across all shards. Ids are
 * content hashes, so one id in two shards is the same trace. */
#include "store/store_internal.h"

#include <stdlib.h>
#include <string.h>

int tl_reader_open(tl_store *s, tl_reader **out, tl_err *err)
{
    if (!s->nshards) return tl_reader_one_open(s, out, err);
    tl_reader *r = tl_xcalloc(1, sizeof *r);
    r->s = s;
    r->parts = tl_xcalloc(s->nshards, sizeof *r->parts);
    for (size_t i = 0; i < s->nshards; i++) {
        int rc = tl_reader_one_open(s->shards[i], &r->parts[i], err);
        if (rc) {
            tl_reader_close(r);
            return rc;
        }
        r->nparts = i + 1;
    }
    *out = r;
    return TL_OK;
}

void tl_reader_close(tl_reader *r)
{
    if (!r) return;
    if (!r->parts) {
        tl_reader_one_close(r);
        return;
    }
    for (size_t i = 0; i < r->nparts; i++) tl_reader_one_close(r->parts[i]);
    free(r->parts);
    free(r);
}

void tl_reader_drop_resident(tl_reader *r)
{
    if (!r->parts) {
        tl_reader_one_drop_resident(r);
        return;
    }
    for (size_t i = 0; i < r->nparts; i++) tl_reader_one_drop_resident(r->parts[i]);
}

void tl_reader_hold_pages(tl_reader *r, int on)
{
    if (!r->parts) {
        tl_reader_one_hold_pages(r, on);
        return;
    }
    for (size_t i = 0; i < r->nparts; i++) tl_reader_one_hold_pages(r->parts[i], on);
}

/* The reader of the shard holding id: the first in list order; the first
 * shard when none does (its calls then fail as "no trace ..."). */
static tl_reader *part_of(tl_reader *r, uint64_t id)
{
    if (!r->parts) return r;
    for (size_t i = 0; i < r->nparts; i++)
        if (tl_reader_one_has(r->parts[i], id)) return r->parts[i];
    return r->parts[0];
}

int tl_reader_has(tl_reader *r, uint64_t id) { return tl_reader_one_has(part_of(r, id), id); }

int tl_reader_catalog(tl_reader *r, uint64_t id, const char **json, tl_err *err)
{
    return tl_reader_one_catalog(part_of(r, id), id, json, err);
}

/* One catalog record of a shard, for the merged walk. */
typedef struct listed {
    uint64_t id;
    const char *json;
    size_t part;
} listed;
typedef TL_VEC(listed) listed_vec;

typedef struct collect_ctx {
    listed_vec *v;
    size_t part;
} collect_ctx;

static int collect(void *ctx, uint64_t id, const char *json)
{
    collect_ctx *c = ctx;
    tl_vec_push(c->v, ((listed){id, json, c->part}));
    return 0;
}

/* Id order, then list order: the first shard's record of an id comes first. */
static int by_id_then_part(const void *a, const void *b)
{
    const listed *x = a, *y = b;
    if (x->id != y->id) return x->id < y->id ? -1 : 1;
    return (x->part > y->part) - (x->part < y->part);
}

int tl_reader_foreach(tl_reader *r, int (*cb)(void *ctx, uint64_t id, const char *json), void *ctx,
                      tl_err *err)
{
    if (!r->parts) return tl_reader_one_foreach(r, cb, ctx, err);
    listed_vec v = {0};
    int bad = TL_OK;
    tl_err berr = {0};
    for (size_t i = 0; i < r->nparts; i++) {
        collect_ctx c = {&v, i};
        tl_err e = {0};
        int rc = tl_reader_one_foreach(r->parts[i], collect, &c, &e);
        if (rc == TL_ESTORE && !bad) bad = rc, berr = e; /* damaged records skipped: reported at the end */
        else if (rc && rc != TL_ESTORE) {
            tl_vec_free(&v);
            if (err) *err = e;
            return rc;
        }
    }
    if (v.n) qsort(v.v, v.n, sizeof *v.v, by_id_then_part);
    for (size_t i = 0; i < v.n; i++) {
        if (i && v.v[i].id == v.v[i - 1].id) continue;
        if (cb(ctx, v.v[i].id, v.v[i].json)) break;
    }
    tl_vec_free(&v);
    if (bad && err) *err = berr;
    return bad;
}

int tl_reader_resolve(tl_reader *r, const char *prefix, uint64_t *id, tl_err *err)
{
    if (!r->parts) return tl_reader_one_resolve(r, prefix, id, err);
    int found = 0;
    uint64_t got = 0;
    for (size_t i = 0; i < r->nparts; i++) {
        uint64_t x;
        tl_err e = {0};
        int rc = tl_reader_one_resolve(r->parts[i], prefix, &x, &e);
        if (rc == TL_OK) {
            if (found && x != got)
                return tl_errf(err, TL_ENOTFOUND, "trace id prefix %s is ambiguous (traces in several shards)",
                               prefix);
            found = 1, got = x;
        } else if (!(rc == TL_ENOTFOUND && !strncmp(e.msg, "no trace ", 9))) {
            if (err) *err = e; /* not an id, ambiguous within a shard, or a store error */
            return rc;
        }
    }
    if (!found) return tl_errf(err, TL_ENOTFOUND, "no trace %s in the stores %s", prefix, r->s->dir);
    *id = got;
    return TL_OK;
}

int tl_reader_column(tl_reader *r, uint64_t id, const char *table, const char *col, tl_colview *out,
                     tl_err *err)
{
    return tl_reader_one_column(part_of(r, id), id, table, col, out, err);
}

int tl_reader_column_of(tl_reader *r, uint64_t id, const char *table, const char *col, tl_ctype type,
                        tl_colview *out, tl_err *err)
{
    int rc = tl_reader_one_column(part_of(r, id), id, table, col, out, err);
    return tl_reader_check_type(id, table, col, type, rc, out, err);
}

int tl_reader_column_into(tl_reader *r, uint64_t id, const char *table, const char *col, void *dst, size_t width,
                          uint64_t rows, tl_err *err)
{
    return tl_reader_one_column_into(part_of(r, id), id, table, col, dst, width, rows, err);
}

int tl_reader_column_chunks(tl_reader *r, uint64_t id, const char *table, const char *col,
                            int (*cb)(void *ctx, uint32_t chunk, const tl_colview *v), void *ctx,
                            tl_err *err)
{
    return tl_reader_one_column_chunks(part_of(r, id), id, table, col, cb, ctx, err);
}

int tl_reader_column_scan(tl_reader *r, uint64_t id, const char *table, const char *col,
                          int (*cb)(void *ctx, uint32_t chunk, const tl_colview *v), void *ctx,
                          tl_err *err)
{
    return tl_reader_one_column_scan(part_of(r, id), id, table, col, cb, ctx, err);
}

int tl_reader_dict(tl_reader *r, uint64_t id, tl_dict *out, tl_err *err)
{
    return tl_reader_one_dict(part_of(r, id), id, out, err);
}

int tl_reader_sizes(tl_reader *r, uint64_t id, char **json_out, tl_err *err)
{
    return tl_reader_one_sizes(part_of(r, id), id, json_out, err);
}
