/* collective_read.c — reading one rank for the collective report: the
 * collective kernel events of §3.3 with their args (§3.4), and the rank's
 * GPU-timeline figures (spec pytorch-report.md §5.3) for the imbalance view.
 *
 * Only the columns needed are read (kind, name, ts, dur, correlation,
 * external id, linked) and the args blob is parsed for the collective rows
 * alone, chunk by chunk, so a rank costs one scan of a few columns. Each
 * call opens its own reader (an LMDB snapshot) and closes it before
 * returning: everything decoded for the rank is released at once, which is
 * what bounds memory when many large ranks are read on worker threads. */
#include "query/multirank/collective_internal.h"
#include "query/core/interval.h"
#include "query/core/pyval.h"
#include "query/core/trace.h"
#include "ingest/json.h"
#include "ingest/schema.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- GPU classes of §5.1 ---------------------------------------------- */
enum { G_NONE = 0, G_COMP = 1, G_COMM = 2, G_MEMCPY = 3 };

static int full_match_kd(const char *s, const char *stem)
{
    size_t n = strlen(stem);
    if (strncmp(s, stem, n)) return 0;
    return s[n] == 0 || !strcmp(s + n, ".kd");
}

/* ROCm 7.1 legacy copy kernels count as memcpy (§5.1). */
static int is_copy_kernel(const char *s)
{
    static const char *const exact[] = {
        "MEMORY_COPY_HOST_TO_DEVICE", "MEMORY_COPY_DEVICE_TO_HOST", "MEMORY_COPY_DEVICE_TO_DEVICE",
        "__amd_rocclr_copyBuffer", "__amd_rocclr_copyBufferRect", "__amd_rocclr_copyBufferAligned",
        "__amd_rocclr_copyBufferRectAligned",
    };
    for (size_t i = 0; i < sizeof exact / sizeof *exact; i++)
        if (full_match_kd(s, exact[i])) return 1;
    return 0;
}

int tl_coll_is_comm_kernel(const char *name)
{
    return name && tl_is_comm_kernel_name(name, strlen(name)); /* ingest/schema.h */
}

/* ---- interval arithmetic in exact ns ----------------------------------- */
typedef TL_VEC(tl_ival) ivvec;

/* Sorts by start and merges in place; touching intervals merge (§5.2). */
static void iv_merge(ivvec *v)
{
    tl_ival_sort(v->v, v->n);
    v->n = tl_ival_union_sorted(v->v, v->n);
}

/* dst = a and b (each sorted by start) in start order, so that iv_merge of
 * the union finds it sorted. */
static void iv_union_sorted(ivvec *dst, const ivvec *a, const ivvec *b)
{
    dst->n = 0;
    tl_vec_reserve(dst, a->n + b->n);
    tl_ival_interleave(a->v, a->n, b->v, b->n, dst->v);
    dst->n = a->n + b->n;
}

/* ---- args of one collective event ---------------------------------------- */

/* Python str() text of a JSON value: strings verbatim, lists as tuples,
 * null -> NULL. */
static const char *arg_text(tl_arena *a, tl_arena *scratch, const char *v, size_t n, tl_buf *tmp)
{
    if (n == 4 && !memcmp(v, "null", 4)) return NULL;
    if (n >= 2 && v[0] == '"') {
        tl_err e;
        tl_json j;
        tl_json_init_buf(&j, v, n, "args", &e);
        tmp->n = 0;
        if (tl_json_unescape(&j, v + 1, n - 2, tmp)) return tl_arena_strndup(a, v + 1, n - 2);
        return tl_arena_strndup(a, tmp->p ? tmp->p : "", tmp->n);
    }
    char *out = NULL;
    if (tl_pv_reformat(scratch, v, n, TL_PV_TUPLES, &out, NULL) == 0) return tl_arena_strdup(a, out);
    return tl_arena_strndup(a, v, n);
}

/* The texts of a rank's collective args by raw JSON value: a rank repeats
 * the same few process groups, rank lists, names and dtypes on every
 * collective, so each distinct value is converted and stored once (a large
 * rank has ~10^5 collectives; one copy per event and field was most of the
 * memory the workbook held per rank). Keys and parse scratch live in the
 * cache's own arena, freed when the rank is read. */
typedef struct txt_ent {
    const char *k, *v;
    size_t n;
} txt_ent;
typedef struct txt_cache {
    tl_hidx idx; /* key text -> index in e */
    TL_VEC(txt_ent) e;
    size_t last[16]; /* per field (parse_args' K_*): 1 + the previous event's entry, checked first */
    tl_arena scratch;
} txt_cache;

static void cache_init(txt_cache *c)
{
    memset(c, 0, sizeof *c);
    tl_hidx_init(&c->idx, 32);
    tl_arena_init(&c->scratch, 1 << 14);
}
static void cache_free(txt_cache *c)
{
    tl_hidx_free(&c->idx);
    tl_vec_free(&c->e);
    tl_arena_free(&c->scratch);
    memset(c, 0, sizeof *c);
}

static const char *cached_text(txt_cache *c, int field, tl_arena *a, const char *v, size_t n, tl_buf *tmp)
{
    /* consecutive collectives mostly repeat a field's text (the same group,
     * rank list, dtype): compared with the previous one before hashing */
    if (c->last[field]) {
        const txt_ent *l = &c->e.v[c->last[field] - 1];
        if (l->n == n && !memcmp(l->k, v, n)) return l->v;
    }
    uint64_t h = tl_hash64(v, n, 7);
    size_t i = tl_hidx_home(&c->idx, h);
    for (; c->idx.ids[i]; i = tl_hidx_next(&c->idx, i)) {
        uint32_t id = c->idx.ids[i] - 1;
        const txt_ent *x = &c->e.v[id];
        if (c->idx.hashes[i] == h && x->n == n && !memcmp(x->k, v, n)) {
            c->last[field] = id + 1;
            return x->v;
        }
    }
    txt_ent x;
    x.v = arg_text(a, &c->scratch, v, n, tmp);
    x.k = tl_arena_strndup(&c->scratch, v, n);
    x.n = n;
    tl_hidx_set(&c->idx, i, h, (uint32_t)c->e.n);
    tl_vec_push(&c->e, x);
    c->last[field] = c->e.n;
    return x.v;
}

/* Integer arg: a JSON integer (or an integral float / numeric string). */
static int64_t arg_int(const char *v, size_t n)
{
    if (n >= 2 && v[0] == '"') v++, n -= 2;
    if (n && n <= 18) { /* plain digits (most values): no copy, no strtoll */
        size_t i = v[0] == '-', j = i;
        int64_t x = 0;
        for (; j < n && v[j] >= '0' && v[j] <= '9'; j++) x = x * 10 + (v[j] - '0');
        if (j == n && i < n) return i ? -x : x;
    }
    char tmp[64];
    if (n == 0 || n >= sizeof tmp) return COLL_NONE;
    memcpy(tmp, v, n);
    tmp[n] = 0;
    char *end;
    long long x = strtoll(tmp, &end, 10);
    if (*end == 0 && end != tmp) return x;
    double d = strtod(tmp, &end);
    if (*end == 0 && end != tmp && d == (double)(long long)d) return (long long)d;
    return COLL_NONE;
}

enum { K_PGN, K_PGR, K_CN, K_GS, K_DT, K_IN, K_ON, K_IS, K_OS, K_ST, K_N };
_Static_assert(K_N <= 16, "txt_cache.last holds one entry per field");
#define KEY(s) {s, sizeof s - 1}
static const struct {
    const char *s;
    size_t n;
} KEYS[K_N] = {
    KEY(TL_ARG_PG_NAME),    KEY(TL_ARG_PG_RANKS),  KEY(TL_ARG_COLL_NAME), KEY(TL_ARG_GROUP_SIZE),
    KEY(TL_ARG_DTYPE),      KEY(TL_ARG_IN_NELEMS), KEY(TL_ARG_OUT_NELEMS), KEY(TL_ARG_IN_SPLIT),
    KEY(TL_ARG_OUT_SPLIT),  KEY(TL_ARG_STREAM),
};
#undef KEY

static int8_t keys_by_len[32][2]; /* per length: the (up to two) KEYS of that length, + 1 */
static pthread_once_t keys_once = PTHREAD_ONCE_INIT;
static void keys_by_len_init(void)
{
    for (int f = 0; f < K_N; f++) keys_by_len[KEYS[f].n][keys_by_len[KEYS[f].n][0] ? 1 : 0] = (int8_t)(f + 1);
}

/* KEYS index of a key, or -1: by length first (a kernel's args have ~24
 * members, most of them not wanted) */
static int key_of(const char *k, size_t kn)
{
    if (kn >= 32) return -1;
    for (int j = 0; j < 2 && keys_by_len[kn][j]; j++) {
        int f = keys_by_len[kn][j] - 1;
        if (KEYS[f].s[0] == k[0] && !memcmp(KEYS[f].s, k, kn)) return f;
    }
    return -1;
}

static void parse_args(coll_rank *cr, txt_cache *tc, coll_ev *e, const char *args, size_t len, tl_buf *tmp)
{
    const char *val[K_N] = {0};
    size_t vlen[K_N] = {0};
    pthread_once(&keys_once, keys_by_len_init); /* for key_of */
    if (len) {
        tl_err err;
        tl_json j;
        tl_json_init_buf(&j, args, len, "args", &err);
        if (tl_json_expect(&j, '{', "{") == 0) {
            int first = 1;
            const char *k;
            size_t kn;
            while (tl_json_obj_next(&j, &first, &k, &kn) == 0 && k) {
                const char *v;
                size_t vn;
                if (tl_json_skip_validated(&j, &v, &vn)) break; /* validated at ingest */
                int f = key_of(k, kn);
                if (f >= 0) val[f] = v, vlen[f] = vn; /* last wins */
            }
        }
    }
    tl_arena *a = &cr->arena;
#define TXT(f) (val[f] ? cached_text(tc, f, a, val[f], vlen[f], tmp) : NULL)
#define INT(f) (val[f] ? arg_int(val[f], vlen[f]) : COLL_NONE)
    e->pg_name = TXT(K_PGN);
    e->pg_ranks = TXT(K_PGR);
    const char *cn = TXT(K_CN);
    if (cn) e->coll_name = cn; /* else keep the cross_device_reduce fill-in */
    e->dtype = TXT(K_DT);
    e->in_split = TXT(K_IS);
    e->out_split = TXT(K_OS);
    e->group_size = INT(K_GS);
    e->in_nelems = INT(K_IN);
    e->out_nelems = INT(K_ON);
    if (val[K_ST]) e->stream = INT(K_ST);
#undef TXT
#undef INT
}

typedef struct args_pass {
    coll_rank *cr;
    txt_cache *tc;
    uint64_t base;   /* first row of the current chunk */
    size_t next;     /* next event to fill */
    int not_text;    /* a chunk held values other than text (a damaged store) */
    tl_buf tmp;
} args_pass;

static int args_chunk(void *ctx, uint32_t chunk, const tl_colview *v)
{
    (void)chunk;
    args_pass *p = ctx;
    coll_rank *cr = p->cr;
    if (v->type != TL_CT_BLOB) return p->not_text = 1;
    uint64_t end = p->base + v->n;
    while (p->next < cr->n && cr->ev[p->next].row < end) {
        coll_ev *e = &cr->ev[p->next++];
        uint64_t i = e->row - p->base;
        size_t len = (size_t)(v->offsets[i + 1] - v->offsets[i] - 1);
        parse_args(cr, p->tc, e, v->bytes + v->offsets[i], len, &p->tmp);
    }
    p->base = end;
    return p->next >= cr->n; /* stop once every collective has its args */
}

/* ---- catalog ------------------------------------------------------------- */
static int device_count(tl_arena *a, const char *catalog)
{
    tl_pv *root;
    if (tl_pv_parse(a, catalog, strlen(catalog), &root, NULL)) return -1;
    const tl_pv *md = tl_pv_get(root, "metadata");
    const tl_pv *dp = md ? tl_pv_get(md, "deviceProperties") : NULL;
    if (!tl_pv_is_seq(dp)) return -1;
    return (int)tl_pv_len(dp);
}

/* ---- one rank -------------------------------------------------------------- */

/* The decoded chunks of one column, kept as views (valid until the reader
 * closes) instead of being copied into one array: a rank is scanned chunk
 * by chunk, which saves a copy of every column read. */
typedef TL_VEC(tl_colview) viewvec;
static int gather_cb(void *ctx, uint32_t chunk, const tl_colview *v)
{
    (void)chunk;
    tl_vec_push((viewvec *)ctx, *v);
    return 0;
}

enum { C_KIND, C_NAME, C_TS, C_DUR, C_CORR, C_EXT, C_STREAM, C_LINKED, C_N };
static const char *const COLS[C_N] = {TL_C_KIND, TL_C_NAME, TL_C_TS, TL_C_DUR, TL_C_CORR, TL_C_EXTID, TL_C_STREAM,
                                      TL_C_LINKED};

typedef struct scan {
    coll_rank *cr;
    const tl_dict *dict;
    uint8_t *ncls;        /* GPU class per name id, 0 = not yet known */
    int use_linked;
    ivvec cls[4];
    tl_sub_ns sub;        /* the µs of times with digits below the ns */
    size_t sub_k;         /* first sub row not below the rows scanned */
} scan;

/* Row `row`'s ts and dur in µs, the reference's doubles (rows come in
 * ascending order). */
static void scan_times_us(scan *sc, uint64_t row, int64_t ts, int64_t dur, double *ts_us, double *dur_us)
{
    const tl_sub_ns *s = &sc->sub;
    while (sc->sub_k < s->n && s->row[sc->sub_k] < row) sc->sub_k++;
    if (sc->sub_k < s->n && s->row[sc->sub_k] == row) {
        *ts_us = s->ts_us[sc->sub_k];
        *dur_us = s->dur_us[sc->sub_k];
    } else {
        *ts_us = tl_ns_us(ts);
        *dur_us = tl_ns_us(dur);
    }
}

/* One run of rows [base, base + n) given as column pointers. */
static void scan_rows(scan *sc, uint64_t base, size_t n, const uint8_t *kind, const uint32_t *name,
                      const int64_t *ts, const int64_t *dur, const int64_t *corr, const int64_t *ext,
                      const int64_t *stream, const uint8_t *linked)
{
    coll_rank *cr = sc->cr;
    const tl_dict *dict = sc->dict;
    for (size_t i = 0; i < n; i++) {
        uint8_t k = kind[i];
        if (!tl_kind_is_gpu(k)) continue;
        uint32_t nid = name[i];
        uint8_t c;
        int xdr = 0;
        if (k == TL_K_MEMCPY) {
            c = G_MEMCPY;
        } else if (k == TL_K_KERNEL) {
            /* per name: the class, and bit 7 when it names a cross_device_reduce */
            uint8_t nc = nid < dict->n ? sc->ncls[nid] : 0;
            if (!nc) {
                const char *nm = tl_dict_get(dict, nid, NULL);
                nc = is_copy_kernel(nm) ? G_MEMCPY : tl_coll_is_comm_kernel(nm) ? G_COMM : G_COMP;
                if (strcasestr(nm, "cross_device_reduce")) nc |= 0x80;
                if (nid < dict->n) sc->ncls[nid] = nc;
            }
            c = nc & 0x7f;
            xdr = (nc & 0x80) != 0;
        } else { /* memset: computation unless it names a comm library */
            c = tl_coll_is_comm_kernel(tl_dict_get(dict, nid, NULL)) ? G_COMM : G_COMP;
        }
        /* §3.3: collective kernels need a correlation or External id */
        if (k == TL_K_KERNEL && c == G_COMM && (corr[i] != TL_NONE || ext[i] != TL_NONE)) {
            if (cr->n == cr->cap) {
                cr->cap = cr->cap ? cr->cap * 2 : 256;
                cr->ev = tl_xrealloc(cr->ev, cr->cap * sizeof *cr->ev);
            }
            coll_ev *e = &cr->ev[cr->n++];
            memset(e, 0, sizeof *e);
            e->rank = cr->info.rank;
            e->row = (uint32_t)(base + i);
            scan_times_us(sc, base + i, ts[i], dur[i], &e->ts, &e->dur);
            e->stream = stream[i] == TL_NONE ? COLL_NONE : stream[i];
            e->group_size = e->in_nelems = e->out_nelems = COLL_NONE;
            /* §3.4: an unnamed cross_device_reduce kernel is an allreduce */
            e->coll_name = xdr ? "allreduce" : NULL;
        }
        if (sc->use_linked && !linked[i]) continue;
        tl_ival x = {ts[i], ts[i] + dur[i]};
        tl_vec_push(&sc->cls[c], x);
        cr->info.gpu_events++;
    }
}

/* Raw args JSON of event row `row` of the trace being read (len set). */
typedef const char *(*coll_args_fn)(void *ctx, uint32_t row, size_t *len);

/* The args_sel table (ingest/schema.h) holds every collective kernel's
 * args: merged with the collectives, both in row order. */
static int sel_coll(void *ctx, uint32_t row, const char *a, size_t len)
{
    args_pass *p = ctx;
    coll_rank *cr = p->cr;
    while (p->next < cr->n && cr->ev[p->next].row < row) p->next++; /* (not there: no args) */
    if (p->next < cr->n && cr->ev[p->next].row == row) parse_args(cr, p->tc, &cr->ev[p->next++], a, len, &p->tmp);
    return p->next >= cr->n;
}

/* After the scan: the args of the collective events (from `args` when
 * given, else from the args_sel table when the trace has it (sel), else one pass
 * over the args chunks up to the last collective,
 * each chunk decoded into one scratch buffer, so memory holds one chunk of
 * the largest column) and the §5.3 figures from the interval lists. */
static int finish_rank(tl_reader *r, uint64_t id, const char *hex, scan *sc, coll_args_fn args, void *actx,
                       int sel, tl_err *err)
{
    coll_rank *cr = sc->cr;
    txt_cache tc;
    cache_init(&tc);
    if (cr->n && args) {
        tl_buf tmp = {0};
        for (size_t i = 0; i < cr->n; i++) {
            size_t len = 0;
            const char *a = args(actx, cr->ev[i].row, &len);
            parse_args(cr, &tc, &cr->ev[i], a ? a : "", a ? len : 0, &tmp);
        }
        tl_buf_free(&tmp);
    } else if (cr->n) {
        args_pass p = {.cr = cr, .tc = &tc};
        int rc = sel ? tl_args_sel_walk(r, id, sel_coll, &p, err)
                     : tl_reader_column_scan(r, id, TL_T_EVENTS, TL_C_ARGS, args_chunk, &p, err);
        if (!rc && p.not_text)
            rc = tl_errf(err, TL_ESTORE, "column events.args holds values other than text: the store is damaged "
                         "(run `tracelens check`)");
        tl_buf_free(&p.tmp);
        if (rc) {
            cache_free(&tc);
            tl_err_prefix(err, "trace %s (rank %d)", hex, cr->info.rank);
            return rc;
        }
    }
    cache_free(&tc);
    cr->info.n_collectives = cr->n;
    if (cr->n && cr->n < cr->cap) { /* the events stay until every rank is read */
        cr->ev = tl_xrealloc(cr->ev, cr->n * sizeof *cr->ev);
        cr->cap = cr->n;
    }
    coll_rank_prepare(cr); /* here, on the reading thread, not in the serial match */

    /* §5.3 over the linked GPU events */
    for (int c = 1; c <= 3; c++) iv_merge(&sc->cls[c]);
    ivvec cx = {0}, all = {0};
    iv_union_sorted(&cx, &sc->cls[G_COMP], &sc->cls[G_COMM]);
    iv_merge(&cx);
    iv_union_sorted(&all, &cx, &sc->cls[G_MEMCPY]);
    iv_merge(&all);
    tl_coll_rankinfo *ri = &cr->info;
    const ivvec *comp = &sc->cls[G_COMP], *comm = &sc->cls[G_COMM], *mc = &sc->cls[G_MEMCPY];
    ri->comp_ns = tl_ival_len(comp->v, comp->n);
    ri->comm_ns = tl_ival_len(comm->v, comm->n);
    ri->exposed_comm_ns = ri->comm_ns - tl_ival_inter_len(comm->v, comm->n, comp->v, comp->n);
    ri->memcpy_ns = tl_ival_len(mc->v, mc->n);
    ri->exposed_memcpy_ns = ri->memcpy_ns - tl_ival_inter_len(mc->v, mc->n, cx.v, cx.n);
    ri->busy_ns = tl_ival_len(all.v, all.n);
    ri->total_ns = all.n ? all.v[all.n - 1].e - all.v[0].s : 0;
    ri->idle_ns = ri->total_ns - ri->busy_ns;
    tl_vec_free(&cx);
    tl_vec_free(&all);
    return 0;
}

int coll_read_rank(tl_store *s, uint64_t id, int rank, coll_rank *cr, tl_err *err)
{
    memset(cr, 0, sizeof *cr);
    tl_arena_init(&cr->arena, 1 << 16);
    cr->info.rank = rank;
    cr->info.id = id;
    cr->ndevices = -1;
    tl_reader *r;
    int rc = tl_reader_open(s, &r, err);
    if (rc) return rc;
    tl_reader_hold_pages(r, 1); /* ranks are read on many threads: one drop a rank, at the close */
    char hex[17];
    tl_id_format(id, hex);
    const char *catalog;
    viewvec v[C_N] = {{0}};
    scan sc = {.cr = cr};
    if ((rc = tl_reader_catalog(r, id, &catalog, err))) goto out;
    tl_catalog_time_text(catalog, &cr->ts_int, &cr->dur_int);
    {
        tl_arena tmp;
        tl_arena_init(&tmp, 1 << 14);
        cr->ndevices = device_count(&tmp, catalog);
        tl_arena_free(&tmp);
    }
    int64_t nev = 0;
    tl_args_get_i64(catalog, strlen(catalog), "events", &nev);
    if (nev <= 0) goto out; /* an empty trace has no collectives */
    tl_dict dict;
    if ((rc = tl_reader_dict(r, id, &dict, err))) goto out;
    tl_trace_bounds bounds = {(uint64_t)nev, dict.n};
    for (int c = 0; c < C_N; c++) {
        rc = tl_trace_column_chunks(r, id, COLS[c], &bounds, gather_cb, &v[c], err);
        if (rc == TL_ENOTFOUND && c == C_LINKED) { rc = 0; continue; }
        if (rc) {
            tl_err_prefix(err, "trace %s (rank %d)", hex, rank);
            goto out;
        }
    }
    int have_linked = v[C_LINKED].n > 0;
    /* every column is chunked alike (the writer splits all columns at the
     * same rows); anything else is a corrupt store */
    for (int c = 1; c < C_N; c++) {
        if (c == C_LINKED && !have_linked) continue;
        int same = v[c].n == v[C_KIND].n;
        for (size_t k = 0; same && k < v[c].n; k++) same = v[c].v[k].n == v[C_KIND].v[k].n;
        if (!same) {
            rc = tl_errf(err, TL_ESTORE, "trace %s (rank %d): column %s is not chunked like %s", hex, rank, COLS[c],
                         COLS[C_KIND]);
            goto out;
        }
    }
    /* a trace with no linked GPU event at all (GPU-only, or no runtime
     * events) gets its timeline from every GPU event instead of none */
    if (have_linked) {
        for (size_t k = 0; k < v[C_KIND].n && !sc.use_linked; k++) {
            const uint8_t *kind = v[C_KIND].v[k].data, *lk = v[C_LINKED].v[k].data;
            for (size_t i = 0; i < v[C_KIND].v[k].n; i++)
                if (lk[i] && tl_kind_is_gpu(kind[i])) { sc.use_linked = 1; break; }
        }
    }
    if ((rc = tl_sub_ns_read(r, id, (uint64_t)nev, &sc.sub, err))) {
        tl_err_prefix(err, "trace %s (rank %d)", hex, rank);
        goto out;
    }
    sc.dict = &dict;
    sc.ncls = tl_xcalloc(dict.n ? dict.n : 1, 1);
    uint64_t base = 0;
    for (size_t k = 0; k < v[C_KIND].n; k++) {
        size_t n = (size_t)v[C_KIND].v[k].n;
#define D(c) v[c].v[k].data
        scan_rows(&sc, base, n, D(C_KIND), D(C_NAME), D(C_TS), D(C_DUR), D(C_CORR), D(C_EXT), D(C_STREAM),
                  sc.use_linked ? D(C_LINKED) : NULL);
#undef D
        base += n;
    }
    free(sc.ncls);
    rc = finish_rank(r, id, hex, &sc, NULL, NULL, tl_catalog_has_args_sel(catalog), err);
out:
    for (int c = 0; c < 4; c++) tl_vec_free(&sc.cls[c]);
    for (int c = 0; c < C_N; c++) tl_vec_free(&v[c]);
    tl_reader_close(r);
    return rc;
}

void coll_rank_free(coll_rank *cr)
{
    free(cr->ev);
    tl_arena_free(&cr->arena);
    memset(cr, 0, sizeof *cr);
}

/* ---- one rank from an already loaded trace ------------------------------- */

/* A fixed-width column copied out for the columns a caller's trace did
 * not load (freed by the caller). */
static int copy_column(const tl_trace *t, const char *col, size_t width, void **out, tl_err *err)
{
    void *dst = tl_xmalloc((t->n ? t->n : 1) * width);
    int rc = tl_reader_column_into(t->reader, t->id, TL_T_EVENTS, col, dst, width, t->n, err);
    if (rc) { free(dst); dst = NULL; }
    *out = dst;
    return rc;
}

int coll_read_trace(const tl_trace *t, int rank, coll_args_fn args, void *actx, coll_rank *cr, tl_err *err);

/* scan_rows over a loaded trace: its int64 columns in place when they are
 * wide, else (a TL_TC_NARROW load) widened a block of rows at a time, so
 * the wide columns never exist whole. */
static void scan_trace_rows(scan *sc, const tl_trace *t, const int64_t *corr, const uint8_t *linked)
{
    if (t->dur && t->ext_id && t->stream) {
        scan_rows(sc, 0, t->n, t->kind, t->name, t->ts, t->dur, corr, t->ext_id, t->stream, linked);
        return;
    }
    enum { BLOCK = 4096 };
    int64_t *dur = tl_xmalloc(3 * BLOCK * sizeof *dur), *ext = dur + BLOCK, *stream = ext + BLOCK;
    for (size_t lo = 0; lo < t->n; lo += BLOCK) {
        size_t n = t->n - lo < BLOCK ? t->n - lo : BLOCK;
        for (size_t i = 0; i < n; i++) {
            dur[i] = tl_trace_dur(t, lo + i);
            ext[i] = tl_trace_ext_id(t, lo + i);
            stream[i] = tl_trace_stream(t, lo + i);
        }
        scan_rows(sc, lo, n, t->kind + lo, t->name + lo, t->ts + lo, dur, corr + lo, ext, stream,
                  linked ? linked + lo : NULL);
    }
    free(dur);
}

/* coll_read_rank over a trace the caller has loaded (the per-configuration
 * workbook reads each rank once for both analyses): the columns the trace
 * holds are used in place; correlation and linked, when the trace did not
 * load them, are copied out for the scan and freed; the collective events'
 * args come from `args` when given (the PyTorch report's args pass already
 * copied them out), else from a pass over the args column. Same events and
 * figures as coll_read_rank. */
int coll_read_trace(const tl_trace *t, int rank, coll_args_fn args, void *actx, coll_rank *cr, tl_err *err)
{
    memset(cr, 0, sizeof *cr);
    tl_arena_init(&cr->arena, 1 << 16);
    cr->info.rank = rank;
    cr->info.id = t->id;
    cr->ndevices = -1;
    tl_catalog_time_text(t->catalog, &cr->ts_int, &cr->dur_int);
    char hex[17];
    tl_id_format(t->id, hex);
    {
        tl_arena tmp;
        tl_arena_init(&tmp, 1 << 14);
        cr->ndevices = device_count(&tmp, t->catalog);
        tl_arena_free(&tmp);
    }
    if (!t->n) return 0; /* an empty trace has no collectives */
    int rc = 0;
    const int64_t *corr = t->corr;
    const uint8_t *linked = t->linked;
    void *own_corr = NULL, *own_linked = NULL;
    scan sc = {.cr = cr};
    if (!corr) {
        if ((rc = copy_column(t, TL_C_CORR, sizeof *corr, &own_corr, err))) {
            tl_err_prefix(err, "trace %s (rank %d)", hex, rank);
            goto out;
        }
        corr = own_corr;
    }
    if (!linked) {
        rc = copy_column(t, TL_C_LINKED, 1, &own_linked, err);
        if (rc == TL_ENOTFOUND) rc = 0;
        else if (rc) {
            tl_err_prefix(err, "trace %s (rank %d)", hex, rank);
            goto out;
        }
        linked = own_linked;
    }
    if (linked)
        for (size_t i = 0; i < t->n; i++)
            if (linked[i] && tl_kind_is_gpu(t->kind[i])) { sc.use_linked = 1; break; }
    if ((rc = tl_sub_ns_read(t->reader, t->id, t->n, &sc.sub, err))) {
        tl_err_prefix(err, "trace %s (rank %d)", hex, rank);
        goto out;
    }
    sc.dict = &t->dict;
    sc.ncls = tl_xcalloc(t->dict.n ? t->dict.n : 1, 1);
    scan_trace_rows(&sc, t, corr, sc.use_linked ? linked : NULL);
    free(sc.ncls);
    free(own_corr), own_corr = NULL;
    free(own_linked), own_linked = NULL;
    rc = finish_rank(t->reader, t->id, hex, &sc, args, actx, tl_catalog_has_args_sel(t->catalog), err);
out:
    free(own_corr);
    free(own_linked);
    for (int c = 0; c < 4; c++) tl_vec_free(&sc.cls[c]);
    return rc;
}
