/* share.c — one trace selection over the stores of several processes
 * (query --mpi): each process selects among its own traces, the
 * processes exchange what only all of them together can decide (whether
 * an id selector matched exactly one trace, which copy of a trace held
 * twice counts, which traces are the last N ingested, which label keys
 * exist), and each keeps its share of the answer. */
#include "query/adhoc/adhoc_internal.h"
#include "query/core/packed.h"

#include <stdlib.h>
#include <string.h>

void aq_select_global_free(aq_select_global *g)
{
    for (size_t i = 0; i < g->ids.n; i++) {
        free(g->ids.v[i].sel);
        free(g->ids.v[i].val);
        tl_vec_free(&g->ids.v[i].hits);
    }
    tl_vec_free(&g->ids);
}

typedef struct kept {
    uint64_t id;
    int64_t ingest_ns;
    uint64_t proc;
} kept;

static int by_id_then_proc(const void *a, const void *b)
{
    const kept *x = a, *y = b;
    if (x->id != y->id) return x->id < y->id ? -1 : 1;
    return (x->proc > y->proc) - (x->proc < y->proc);
}

/* last:N's order (aq_select_traces): latest first, ties in catalog (id) order. */
static int by_time_desc(const void *a, const void *b)
{
    const kept *x = a, *y = b;
    if (x->ingest_ns != y->ingest_ns) return x->ingest_ns > y->ingest_ns ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* This process's part of the exchange. */
static void pack_selection(tl_buf *b, int failed, const aq_catalog *c, const uint8_t *keep,
                           const aq_select_global *g)
{
    tl_pack_u64(b, (uint64_t)(int64_t)failed);
    tl_pack_u64(b, g->ids.n);
    for (size_t a = 0; a < g->ids.n; a++) {
        tl_pack_u64(b, g->ids.v[a].hits.n);
        for (size_t j = 0; j < g->ids.v[a].hits.n; j++) tl_pack_u64(b, g->ids.v[a].hits.v[j]);
    }
    tl_pack_u64(b, c->label_keys.n);
    for (size_t k = 0; k < c->label_keys.n; k++) tl_pack_str(b, c->label_keys.v[k]);
    size_t n = 0;
    for (size_t i = 0; i < c->v.n; i++) n += keep[i] != 0;
    tl_pack_u64(b, n);
    for (size_t i = 0; i < c->v.n; i++)
        if (keep[i]) {
            tl_pack_u64(b, c->v.v[i].id);
            tl_pack_u64(b, (uint64_t)c->v.v[i].ingest_ns);
        }
}

typedef struct gathered {
    TL_VEC(uint64_t) *hits; /* per id selector, every process's matches */
    TL_VEC(char *) keys;    /* label keys (texts in arena) */
    TL_VEC(kept) kept;
    int failed_proc;        /* the first process that could not read, or -1 */
    int failed_code;
} gathered;

/* Reads every process's part; 0 or -1 when the bytes are malformed. */
static int unpack_selections(const tl_buf *all, size_t nids, gathered *gt, tl_arena *a)
{
    tl_unpack in = {(const unsigned char *)all->p, (const unsigned char *)all->p + all->n, 0};
    gt->failed_proc = -1;
    for (uint64_t proc = 0; in.p < in.end && !in.bad; proc++) {
        int64_t failed = (int64_t)tl_unpack_u64(&in);
        if (failed && gt->failed_proc < 0) gt->failed_proc = (int)proc, gt->failed_code = (int)failed;
        if (tl_unpack_u64(&in) != nids) return -1;
        for (size_t k = 0; k < nids && !in.bad; k++) {
            uint64_t m = tl_unpack_u64(&in);
            for (uint64_t j = 0; j < m && !in.bad; j++) tl_vec_push(&gt->hits[k], tl_unpack_u64(&in));
        }
        uint64_t nkeys = tl_unpack_u64(&in);
        for (uint64_t k = 0; k < nkeys && !in.bad; k++) {
            const char *s = tl_unpack_str(&in, a);
            if (s) tl_vec_push(&gt->keys, (char *)s);
        }
        uint64_t n = tl_unpack_u64(&in);
        for (uint64_t i = 0; i < n && !in.bad; i++) {
            kept k = {tl_unpack_u64(&in), 0, proc};
            k.ingest_ns = (int64_t)tl_unpack_u64(&in);
            tl_vec_push(&gt->kept, k);
        }
    }
    return in.bad ? -1 : 0;
}

/* The id selectors judged over every process's matches, with one store's
 * messages. */
static int check_ids(const aq_select_global *g, gathered *gt, tl_err *err)
{
    for (size_t k = 0; k < g->ids.n; k++) {
        uint64_t *v = gt->hits[k].v;
        size_t n = gt->hits[k].n, distinct = 0;
        if (n) qsort(v, n, sizeof *v, cmp_u64);
        for (size_t i = 0; i < n; i++) distinct += !i || v[i] != v[i - 1];
        if (!distinct)
            return tl_errf(err, TL_ENOTFOUND, "--trace %s: no trace %s in the store", g->ids.v[k].sel, g->ids.v[k].val);
        if (distinct > 1)
            return tl_errf(err, TL_EUSAGE, "--trace %s: id prefix %s is ambiguous (%zu traces)", g->ids.v[k].sel,
                           g->ids.v[k].val, distinct);
    }
    return TL_OK;
}

/* The label keys of every process, sorted and unique, as the catalog's. */
static void take_label_keys(aq_catalog *c, gathered *gt)
{
    if (gt->keys.n) qsort(gt->keys.v, gt->keys.n, sizeof *gt->keys.v, cmp_str);
    c->label_keys.n = 0;
    for (size_t i = 0; i < gt->keys.n; i++)
        if (!i || strcmp(gt->keys.v[i], gt->keys.v[i - 1]))
            tl_vec_push(&c->label_keys, tl_arena_strdup(&c->arena, gt->keys.v[i]));
}

/* keep[i]: whether trace i is in the selection and this process's copy. */
static void keep_mine(const aq_catalog *c, uint8_t *keep, gathered *gt, int64_t last, int me)
{
    kept *v = gt->kept.v;
    size_t n = gt->kept.n, m = 0;
    if (n) qsort(v, n, sizeof *v, by_id_then_proc);
    for (size_t i = 0; i < n; i++)
        if (!i || v[i].id != v[i - 1].id) v[m++] = v[i]; /* the lowest process's copy */
    if (last >= 0 && (size_t)last < m) {
        qsort(v, m, sizeof *v, by_time_desc);
        m = (size_t)last;
    }
    size_t mine = 0;
    for (size_t i = 0; i < m; i++)
        if (v[i].proc == (uint64_t)me) v[mine++] = v[i];
    if (mine) qsort(v, mine, sizeof *v, by_id_then_proc);
    for (size_t i = 0; i < c->v.n; i++) {
        if (!keep[i]) continue;
        kept key = {c->v.v[i].id, 0, (uint64_t)me};
        keep[i] = mine && bsearch(&key, v, mine, sizeof *v, by_id_then_proc) != NULL;
    }
}

int aq_share_selection(const tl_adhoc_share *share, int failed, aq_catalog *c, uint8_t *keep,
                       const aq_select_global *g, tl_err *err)
{
    tl_buf mine = {0}, all = {0};
    pack_selection(&mine, failed, c, keep, g);
    int rc = share->allgather(share->ctx, mine.p, mine.n, &all);
    tl_buf_free(&mine);
    if (rc) {
        tl_buf_free(&all);
        if (failed) return failed;
        return tl_errf(err, rc, "query --mpi: the processes could not exchange their trace selections");
    }
    gathered gt;
    memset(&gt, 0, sizeof gt);
    gt.hits = tl_xcalloc(g->ids.n ? g->ids.n : 1, sizeof *gt.hits);
    tl_arena a;
    tl_arena_init(&a, 4096);
    if (unpack_selections(&all, g->ids.n, &gt, &a))
        rc = tl_errf(err, TL_EFORMAT, "query --mpi: a process sent a malformed trace selection");
    else if (failed)
        rc = failed; /* err holds this process's own error */
    else if (gt.failed_proc >= 0)
        rc = tl_errf(err, gt.failed_code, "query --mpi: process %d could not read its stores", gt.failed_proc);
    else if (!(rc = check_ids(g, &gt, err))) {
        take_label_keys(c, &gt);
        keep_mine(c, keep, &gt, g->last, share->me);
    }
    for (size_t k = 0; k < g->ids.n; k++) tl_vec_free(&gt.hits[k]);
    free(gt.hits);
    tl_vec_free(&gt.keys);
    tl_vec_free(&gt.kept);
    tl_arena_free(&a);
    tl_buf_free(&all);
    return rc;
}
