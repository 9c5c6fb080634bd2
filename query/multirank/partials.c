/* partials.c — per-rank partial results as bytes (partials_internal.h) and
 * the collective report across processes (multirank.h): a process reads
 * the collective records of its share of the ranks and packs them; one
 * process unpacks every share and runs the same analysis as
 * tl_coll_report, so the sheets are the one-process sheets. */
#include "query/multirank/partials_internal.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* In collective.c: the analysis over ranks already read (consumes them). */
int coll_report_ranks(coll_rank *ranks, size_t world, const tl_coll_opts *o, tl_coll_sheets *out,
                      tl_coll_summary *summary, tl_err *err);

/* ---- one rank's collective records -------------------------------------------- */

static void put_i64s(tl_buf *b, const int64_t *v, size_t n)
{
    for (size_t i = 0; i < n; i++) tl_pack_u64(b, (uint64_t)v[i]);
}

void part_put_coll_rank(tl_buf *b, const coll_rank *cr)
{
    const tl_coll_rankinfo *in = &cr->info;
    int64_t head[] = {in->rank, (int64_t)in->id, (int64_t)in->n_collectives, in->gpu_events, in->total_ns, in->comp_ns,
                      in->comm_ns, in->exposed_comm_ns, in->memcpy_ns, in->exposed_memcpy_ns, in->busy_ns, in->idle_ns,
                      cr->ndevices, (int64_t)cr->n, cr->ts_int, cr->dur_int};
    put_i64s(b, head, sizeof head / sizeof *head);
    for (size_t i = 0; i < cr->n; i++) {
        const coll_ev *e = &cr->ev[i];
        int64_t ints[] = {e->rank, e->row, e->group_size, e->in_nelems, e->out_nelems,
                          e->stream, e->type, e->index_in_group, e->cid_no};
        put_i64s(b, ints, sizeof ints / sizeof *ints);
        tl_pack_f64(b, e->ts), tl_pack_f64(b, e->dur), tl_pack_f64(b, e->in_mb), tl_pack_f64(b, e->out_mb);
        const char *strs[] = {e->pg_name, e->pg_ranks, e->coll_name, e->dtype, e->in_split, e->out_split, e->cid};
        for (size_t k = 0; k < sizeof strs / sizeof *strs; k++) tl_pack_str(b, strs[k]);
    }
}

int part_get_coll_rank(tl_unpack *in, coll_rank *cr)
{
    memset(cr, 0, sizeof *cr);
    tl_arena_init(&cr->arena, 1 << 16);
    int64_t head[16];
    for (size_t i = 0; i < 16; i++) head[i] = (int64_t)tl_unpack_u64(in);
    tl_coll_rankinfo *info = &cr->info;
    info->rank = (int)head[0], info->id = (uint64_t)head[1], info->n_collectives = (size_t)head[2];
    info->gpu_events = head[3], info->total_ns = head[4], info->comp_ns = head[5], info->comm_ns = head[6];
    info->exposed_comm_ns = head[7], info->memcpy_ns = head[8], info->exposed_memcpy_ns = head[9];
    info->busy_ns = head[10], info->idle_ns = head[11];
    cr->ndevices = (int)head[12];
    size_t n = (size_t)head[13];
    cr->ts_int = head[14] != 0, cr->dur_int = head[15] != 0;
    if (in->bad || n > (size_t)(in->end - in->p)) return TL_EFORMAT;
    cr->ev = tl_xcalloc(n ? n : 1, sizeof *cr->ev);
    cr->cap = n;
    for (size_t i = 0; i < n && !in->bad; i++) {
        coll_ev *e = &cr->ev[i];
        int64_t v[9];
        for (size_t k = 0; k < 9; k++) v[k] = (int64_t)tl_unpack_u64(in);
        e->rank = (int)v[0], e->row = (uint32_t)v[1], e->group_size = v[2];
        e->in_nelems = v[3], e->out_nelems = v[4], e->stream = v[5], e->type = (tl_coll_type)v[6];
        e->index_in_group = v[7], e->cid_no = (long)v[8];
        e->ts = tl_unpack_f64(in), e->dur = tl_unpack_f64(in), e->in_mb = tl_unpack_f64(in), e->out_mb = tl_unpack_f64(in);
        const char **strs[] = {&e->pg_name, &e->pg_ranks, &e->coll_name, &e->dtype, &e->in_split, &e->out_split, &e->cid};
        for (size_t k = 0; k < sizeof strs / sizeof *strs; k++) *strs[k] = tl_unpack_str(in, &cr->arena);
        cr->n = i + 1;
    }
    return in->bad ? TL_EFORMAT : TL_OK;
}

/* ---- the collective report across processes ------------------------------------- */

typedef struct read_pool {
    tl_store *s;
    const uint64_t *ids;
    size_t lo, hi;
    coll_rank *ranks; /* [hi - lo] */
    int *rc;
    tl_err *errs;
} read_pool;

/* Rank lo + i (tl_par_for). */
static void read_one(void *ctx, size_t i)
{
    read_pool *p = ctx;
    p->rc[i] = coll_read_rank(p->s, p->ids[p->lo + i], (int)(p->lo + i), &p->ranks[i], &p->errs[i]);
}

int tl_coll_partials(tl_store *s, const uint64_t *ids, size_t lo, size_t hi, int max_workers, tl_buf *out,
                     tl_err *err)
{
    size_t n = hi > lo ? hi - lo : 0;
    read_pool p = {.s = s, .ids = ids, .lo = lo, .hi = lo + n};
    p.ranks = tl_xcalloc(n ? n : 1, sizeof *p.ranks);
    p.rc = tl_xcalloc(n ? n : 1, sizeof *p.rc);
    p.errs = tl_xcalloc(n ? n : 1, sizeof *p.errs);
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int workers = max_workers > 0 ? max_workers : cpus > 8 ? 8 : cpus > 0 ? (int)cpus : 1;
    tl_par_for(n, workers, NULL, read_one, &p);
    int rc = TL_OK;
    for (size_t i = 0; i < n; i++) {
        if (p.rc[i] && !rc) {
            rc = p.rc[i];
            if (err) *err = p.errs[i];
        }
        if (!rc) {
            tl_pack_u64(out, lo + i);
            part_put_coll_rank(out, &p.ranks[i]);
        }
        coll_rank_free(&p.ranks[i]);
    }
    free(p.ranks), free(p.rc), free(p.errs);
    return rc;
}

int tl_coll_report_partials(const void *parts, size_t len, size_t world, const tl_coll_opts *o,
                            tl_coll_sheets *out, tl_coll_summary *summary, tl_err *err)
{
    memset(out, 0, sizeof *out);
    if (summary) memset(summary, 0, sizeof *summary);
    if (world == 0) return tl_errf(err, TL_EUSAGE, "world_size must be provided");
    coll_rank *ranks = tl_xcalloc(world, sizeof *ranks);
    char *have = tl_xcalloc(world, 1);
    tl_unpack in = {parts, (const unsigned char *)parts + len, 0};
    int rc = TL_OK;
    while (!rc && in.p < in.end) {
        uint64_t pos = tl_unpack_u64(&in);
        if (in.bad || pos >= world || have[pos]) {
            rc = tl_errf(err, TL_EFORMAT, "collective partials: a damaged or repeated rank record");
            break;
        }
        have[pos] = 1;
        if (part_get_coll_rank(&in, &ranks[pos]))
            rc = tl_errf(err, TL_EFORMAT, "collective partials: rank %llu's record is cut short",
                         (unsigned long long)pos);
    }
    for (size_t r = 0; r < world && !rc; r++)
        if (!have[r]) rc = tl_errf(err, TL_EFORMAT, "collective partials: no record of rank %zu", r);
    free(have);
    if (rc) {
        for (size_t r = 0; r < world; r++) coll_rank_free(&ranks[r]);
        free(ranks);
        return rc;
    }
    return coll_report_ranks(ranks, world, o, out, summary, err);
}
