/* rocprof.c — the rocprofv3 JSON reader (see rocprof.h, spec/formats.md §1).
 *
 * The document is walked with the streaming scanner, never as a DOM: the
 * big arrays (kernel_symbols, buffer_records.*) are parsed one element per
 * restartable unit, so a gzip window only ever holds one record. Kernel
 * names come from kernel_symbols, which rocprofv3 writes before
 * buffer_records; when a file has them (or the metadata / strings tables)
 * after the records, the records are kept in a compact array and turned into
 * events at the end instead — same result, more memory. */
#include "ingest/rocprof.h"
#include "ingest/ingest.h"
#include "ingest/json.h"
#include "ingest/source.h"

#include <stdlib.h>
#include <string.h>

/* ---- records ----------------------------------------------------------- */

enum { RP_KERNEL = 0, RP_MEMCPY = 1, RP_HIP = 2, RP_HSA = 3 };

/* presence bits of rp_rec fields */
enum {
    H_START = 1u << 0, H_END = 1u << 1, H_THREAD = 1u << 2, H_CORR = 1u << 3,
    H_CORR_INT = 1u << 4, H_CORR_EXT = 1u << 5, H_STREAM = 1u << 6, H_AGENT = 1u << 7,
    H_QUEUE = 1u << 8, H_KID = 1u << 9, H_DID = 1u << 10, H_PRIV = 1u << 11,
    H_GROUP = 1u << 12, H_KIND = 1u << 13, H_OP = 1u << 14, H_BYTES = 1u << 15,
    H_SRC = 1u << 16, H_DST = 1u << 17,
};

typedef struct rp_rec {
    uint8_t type;
    uint32_t has;
    int64_t start, end, thread, corr_int, corr_ext, stream, agent, queue;
    int64_t kernel_id, dispatch_id, priv, group;
    int64_t grid[3], block[3];
    int64_t kind, op, bytes, src, dst;
} rp_rec;

/* A kernel symbol: the chosen display name (arena copy) and its interned id
 * once a dispatch used it. */
typedef struct rp_sym {
    int64_t id;
    const char *name;
    uint32_t len;
    uint32_t sid;
    uint8_t unresolved; /* synthetic "unknown_kernel_<id>" entry */
} rp_sym;

/* strings.buffer_records[kind] = {kind name, operations[]} */
typedef struct rp_kindtab {
    const char **ops;
    uint32_t *oplen;
    uint32_t *opsid; /* interned lazily */
    size_t nops;
} rp_kindtab;

typedef struct rp {
    tl_json *j;
    tl_build *b;
    tl_err *err;
    tl_arena arena;

    TL_VEC(rp_sym) syms;
    tl_imap sym_of; /* kernel_id -> index into syms */

    TL_VEC(rp_kindtab) kinds;
    TL_VEC(rp_rec) pending;

    int seen_meta, seen_syms, seen_strings, seen_buffer_records;
    int seen_type[4]; /* a repeated key is read once (JSON readers keep one) */
    int64_t pid;
    uint32_t cat_kernel, cat_memcpy, cat_hip, cat_hsa;
    uint32_t uid;
    uint64_t n_kernel, n_memcpy, n_api, n_unresolved, n_ops_unresolved;
    int64_t first_unresolved;
    int first_unresolved_none; /* the first one had no kernel_id at all */
    unsigned since_release;

    int64_t last_grid[3], last_block[3];
    uint32_t last_grid_sid, last_block_sid;
    tl_buf args, tmp;
} rp;

#define KEQ(k, kn, lit) ((kn) == sizeof(lit) - 1 && memcmp((k), (lit), sizeof(lit) - 1) == 0)

/* Runs `expr` as a restartable unit: on TL_JNEED the window is refilled
 * keeping the unit's first byte and the unit is parsed again. */
#define UNIT(j, rc, expr)                                                         \
    for (;;) {                                                                    \
        size_t m_ = (j)->pos;                                                     \
        (rc) = (expr);                                                            \
        if ((rc) != TL_JNEED) break;                                              \
        if (((rc) = tl_json_refill((j), m_)) != 0) break;                         \
    }

/* ---- symbol map -------------------------------------------------------- */

static rp_sym *sym_find(rp *R, int64_t id)
{
    size_t *i = tl_imap_get(&R->sym_of, (uint64_t)id);
    return i ? &R->syms.v[*i] : NULL;
}

/* Adds or replaces (a later entry with the same kernel_id wins, as in a
 * Python dict built from the list). */
static rp_sym *sym_put(rp *R, int64_t id, const char *name, size_t len, int unresolved)
{
    int isnew;
    size_t *i = tl_imap_put(&R->sym_of, (uint64_t)id, &isnew);
    if (isnew) {
        rp_sym z = {0};
        *i = R->syms.n;
        tl_vec_push(&R->syms, z);
    }
    rp_sym *y = &R->syms.v[*i];
    y->id = id;
    y->name = tl_arena_strndup(&R->arena, name, len);
    y->len = (uint32_t)len;
    y->sid = 0;
    y->unresolved = (uint8_t)unresolved;
    return y;
}

/* ---- small parse helpers (all may return TL_JNEED) ---------------------- */

/* An integer or null (absent). */
static int get_int(tl_json *j, int64_t *v, uint32_t *has, uint32_t bit)
{
    int p = tl_json_peek(j);
    if (p == TL_JWS_NEED) return TL_JNEED;
    if (p == 'n') {
        *has &= ~bit;
        return tl_json_literal(j, "null");
    }
    int rc = tl_json_i64(j, v);
    if (rc == 0) *has |= bit;
    return rc;
}

/* kind / operation: numbers in rocprofv3; anything else counts as absent
 * (the reference only defaults them to "unknown"). */
static int get_code(tl_json *j, int64_t *v, uint32_t *has, uint32_t bit)
{
    int p = tl_json_peek(j);
    if (p == TL_JWS_NEED) return TL_JNEED;
    if (p == '-' || (p >= '0' && p <= '9')) {
        const char *s;
        size_t n;
        size_t at = j->pos;
        int rc = tl_json_number_span(j, &s, &n);
        if (rc) return rc;
        j->pos = at;
        if (!memchr(s, '.', n) && !memchr(s, 'e', n) && !memchr(s, 'E', n) && n < 19)
            return get_int(j, v, has, bit);
        j->pos = at + n;
    } else {
        int rc = tl_json_skip(j, NULL, NULL);
        if (rc) return rc;
    }
    *has &= ~bit;
    return 0;
}

/* {"handle": N}; a bare integer or null is accepted too. */
static int get_handle(tl_json *j, int64_t *v, uint32_t *has, uint32_t bit)
{
    int p = tl_json_peek(j);
    if (p == TL_JWS_NEED) return TL_JNEED;
    if (p != '{') return get_int(j, v, has, bit);
    j->pos++;
    int first = 1, rc;
    const char *k;
    size_t kn;
    while ((rc = tl_json_obj_next(j, &first, &k, &kn)) == 0 && k) {
        if (KEQ(k, kn, "handle")) rc = get_int(j, v, has, bit);
        else rc = tl_json_skip(j, NULL, NULL);
        if (rc) return rc;
    }
    return rc;
}

/* {"x":..,"y":..,"z":..}; a missing component stays as preset (1). */
static int get_xyz(tl_json *j, int64_t v[3])
{
    int p = tl_json_peek(j);
    if (p == TL_JWS_NEED) return TL_JNEED;
    if (p == 'n') return tl_json_literal(j, "null");
    int rc = tl_json_expect(j, '{', "an object {x, y, z}");
    if (rc) return rc;
    int first = 1;
    const char *k;
    size_t kn;
    uint32_t dummy = 0;
    while ((rc = tl_json_obj_next(j, &first, &k, &kn)) == 0 && k) {
        if (kn == 1 && k[0] >= 'x' && k[0] <= 'z') {
            int64_t t = 1;
            rc = get_int(j, &t, &dummy, 1);
            if (rc == 0) v[k[0] - 'x'] = (dummy & 1) ? t : 1;
        } else {
            rc = tl_json_skip(j, NULL, NULL);
        }
        if (rc) return rc;
    }
    return rc;
}

static int get_corr(tl_json *j, rp_rec *r)
{
    int p = tl_json_peek(j);
    if (p == TL_JWS_NEED) return TL_JNEED;
    if (p != '{') return tl_json_skip(j, NULL, NULL);
    j->pos++;
    r->has |= H_CORR;
    int first = 1, rc;
    const char *k;
    size_t kn;
    while ((rc = tl_json_obj_next(j, &first, &k, &kn)) == 0 && k) {
        if (KEQ(k, kn, "internal")) rc = get_int(j, &r->corr_int, &r->has, H_CORR_INT);
        else if (KEQ(k, kn, "external")) rc = get_int(j, &r->corr_ext, &r->has, H_CORR_EXT);
        else rc = tl_json_skip(j, NULL, NULL);
        if (rc) return rc;
    }
    return rc;
}

static int get_dispatch_info(tl_json *j, rp_rec *r)
{
    int p = tl_json_peek(j);
    if (p == TL_JWS_NEED) return TL_JNEED;
    if (p != '{') return tl_json_skip(j, NULL, NULL);
    j->pos++;
    int first = 1, rc;
    const char *k;
    size_t kn;
    while ((rc = tl_json_obj_next(j, &first, &k, &kn)) == 0 && k) {
        if (KEQ(k, kn, "agent_id")) rc = get_handle(j, &r->agent, &r->has, H_AGENT);
        else if (KEQ(k, kn, "queue_id")) rc = get_handle(j, &r->queue, &r->has, H_QUEUE);
        else if (KEQ(k, kn, "kernel_id")) rc = get_int(j, &r->kernel_id, &r->has, H_KID);
        else if (KEQ(k, kn, "dispatch_id")) rc = get_int(j, &r->dispatch_id, &r->has, H_DID);
        else if (KEQ(k, kn, "private_segment_size")) rc = get_int(j, &r->priv, &r->has, H_PRIV);
        else if (KEQ(k, kn, "group_segment_size")) rc = get_int(j, &r->group, &r->has, H_GROUP);
        else if (KEQ(k, kn, "workgroup_size")) rc = get_xyz(j, r->block);
        else if (KEQ(k, kn, "grid_size")) rc = get_xyz(j, r->grid);
        else rc = tl_json_skip(j, NULL, NULL);
        if (rc) return rc;
    }
    return rc;
}

/* One buffer record (kernel_dispatch, memory_copy, hip_api, hsa_api). */
static int parse_record(tl_json *j, rp_rec *r)
{
    int p = tl_json_peek(j);
    if (p == TL_JWS_NEED) return TL_JNEED;
    if (p != '{') return tl_json_fail(j, "a record object");
    j->pos++;
    int first = 1, rc;
    const char *k;
    size_t kn;
    while ((rc = tl_json_obj_next(j, &first, &k, &kn)) == 0 && k) {
        switch (kn) {
        case 4:
            if (KEQ(k, kn, "kind")) { rc = get_code(j, &r->kind, &r->has, H_KIND); goto next; }
            break;
        case 5:
            if (KEQ(k, kn, "bytes")) { rc = get_int(j, &r->bytes, &r->has, H_BYTES); goto next; }
            break;
        case 9:
            if (KEQ(k, kn, "operation")) { rc = get_code(j, &r->op, &r->has, H_OP); goto next; }
            if (KEQ(k, kn, "thread_id")) { rc = get_int(j, &r->thread, &r->has, H_THREAD); goto next; }
            if (KEQ(k, kn, "stream_id")) { rc = get_handle(j, &r->stream, &r->has, H_STREAM); goto next; }
            break;
        case 11:
            if (KEQ(k, kn, "dst_agent_id")) { rc = get_handle(j, &r->dst, &r->has, H_DST); goto next; }
            if (KEQ(k, kn, "src_agent_id")) { rc = get_handle(j, &r->src, &r->has, H_SRC); goto next; }
            break;
        case 12:
            if (KEQ(k, kn, "dst_agent_id")) { rc = get_handle(j, &r->dst, &r->has, H_DST); goto next; }
            if (KEQ(k, kn, "src_agent_id")) { rc = get_handle(j, &r->src, &r->has, H_SRC); goto next; }
            break;
        case 13:
            if (KEQ(k, kn, "end_timestamp")) { rc = get_int(j, &r->end, &r->has, H_END); goto next; }
            if (KEQ(k, kn, "dispatch_info")) { rc = get_dispatch_info(j, r); goto next; }
            break;
        case 14:
            if (KEQ(k, kn, "correlation_id")) { rc = get_corr(j, r); goto next; }
            break;
        case 15:
            if (KEQ(k, kn, "start_timestamp")) { rc = get_int(j, &r->start, &r->has, H_START); goto next; }
            break;
        }
        rc = tl_json_skip(j, NULL, NULL);
    next:
        if (rc) return rc;
    }
    return rc;
}

/* ---- event emission ----------------------------------------------------- */

/* The args JSON holds only what has no column (kernel_id, dispatch_id,
 * thread_id, queue_id, segment sizes; for copies kind, operation, bytes and
 * both agents): agent, stream, correlation ids, grid and block are the
 * promoted columns device, stream, correlation/external_id, grid, block.
 * It is written through a cursor into a buffer reserved once per event
 * (at most ~250 bytes): per-byte tl_buf calls showed up in profiles. */
static char *w_i64(char *w, int64_t v)
{
    char tmp[24];
    char *e = tmp + sizeof tmp, *p = e;
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    do {
        *--p = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0) *--p = '-';
    memcpy(w, p, (size_t)(e - p));
    return w + (e - p);
}

/* key is a literal: its length is known at compile time */
#define W_KEY(w, first, key)                                                      \
    do {                                                                          \
        if (!(first)) *(w)++ = ',';                                               \
        (first) = 0;                                                              \
        memcpy((w), "\"" key "\":", sizeof(key) + 2);                             \
        (w) += sizeof(key) + 2;                                                   \
    } while (0)
#define W_KEY_I64(w, first, key, v)                                               \
    do {                                                                          \
        W_KEY(w, first, key);                                                     \
        (w) = w_i64((w), (v));                                                    \
    } while (0)

/* "[x, y, z]": the same text a Kineto trace has for grid/block. */
static uint32_t xyz_sid(rp *R, const int64_t v[3], int64_t last[3], uint32_t *last_sid)
{
    if (*last_sid && last[0] == v[0] && last[1] == v[1] && last[2] == v[2]) return *last_sid;
    char txt[80], *w = txt;
    *w++ = '[';
    w = w_i64(w, v[0]);
    *w++ = ',';
    *w++ = ' ';
    w = w_i64(w, v[1]);
    *w++ = ',';
    *w++ = ' ';
    w = w_i64(w, v[2]);
    *w++ = ']';
    *last_sid = tl_build_str(R->b, txt, (size_t)(w - txt));
    memcpy(last, v, 3 * sizeof *v);
    return *last_sid;
}

static uint32_t kernel_name_sid(rp *R, const rp_rec *r)
{
    if (!(r->has & H_KID)) {
        if (!R->n_unresolved) R->first_unresolved_none = 1;
        R->n_unresolved++;
        return tl_build_str(R->b, "unknown_kernel_None", 19);
    }
    rp_sym *y = sym_find(R, r->kernel_id);
    if (!y) {
        char nm[48];
        int n = snprintf(nm, sizeof nm, "unknown_kernel_%lld", (long long)r->kernel_id);
        y = sym_put(R, r->kernel_id, nm, (size_t)n, 1);
        if (!R->n_unresolved) R->first_unresolved = r->kernel_id;
    }
    if (y->unresolved) R->n_unresolved++;
    if (!y->sid) y->sid = tl_build_str(R->b, y->name, y->len);
    return y->sid;
}

/* API / memory-copy operation name from strings.buffer_records. */
static uint32_t op_name_sid(rp *R, const rp_rec *r, const char *fallback)
{
    if ((r->has & H_KIND) && (r->has & H_OP) && r->kind >= 0 && (uint64_t)r->kind < R->kinds.n) {
        rp_kindtab *t = &R->kinds.v[r->kind];
        if (r->op >= 0 && (uint64_t)r->op < t->nops) {
            if (!t->opsid[r->op]) t->opsid[r->op] = tl_build_str(R->b, t->ops[r->op], t->oplen[r->op]);
            return t->opsid[r->op];
        }
    }
    R->n_ops_unresolved++;
    char nm[64];
    int n = (r->has & H_OP) ? snprintf(nm, sizeof nm, "%s_%lld", fallback, (long long)r->op)
                            : snprintf(nm, sizeof nm, "%s", fallback);
    return tl_build_str(R->b, nm, (size_t)n);
}

static int emit(rp *R, const rp_rec *r)
{
    tl_ev_in e;
    memset(&e, 0, sizeof e);
    e.uid = R->uid++;
    e.ts = (r->has & H_START) ? r->start : 0;
    if (!(r->has & H_END))
        return tl_errf(R->err, TL_EFORMAT, "%s: a %s record has no end_timestamp", R->j->file,
                       r->type == RP_KERNEL ? "kernel_dispatch" : r->type == RP_MEMCPY ? "memory_copy"
                       : r->type == RP_HIP ? "hip_api" : "hsa_api");
    if (__builtin_sub_overflow(r->end, e.ts, &e.dur))
        return tl_errf(R->err, TL_EFORMAT, "%s: timestamps out of range (start %lld, end %lld)",
                       R->j->file, (long long)e.ts, (long long)r->end);
    e.corr = (r->has & H_CORR_INT) ? r->corr_int : TL_NONE;
    e.ext_id = (r->has & H_CORR_EXT) ? r->corr_ext : TL_NONE;
    e.seq = e.fwd_tid = TL_NONE;
    e.stream = (r->has & H_STREAM) ? r->stream : TL_NONE;
    tl_buf *a = &R->args;
    a->n = 0;
    tl_buf_reserve(a, 1024);
    char *w = a->p;
    int f = 1;
    *w++ = '{';
    switch (r->type) {
    case RP_KERNEL:
        e.name = kernel_name_sid(R, r);
        e.cat = R->cat_kernel;
        e.kind = TL_K_KERNEL;
        e.device = (r->has & H_AGENT) ? r->agent : TL_NONE;
        e.pid = (r->has & H_AGENT) ? r->agent : 0;
        e.tid = (r->has & H_STREAM) ? r->stream : 0;
        e.grid = xyz_sid(R, r->grid, R->last_grid, &R->last_grid_sid);
        e.block = xyz_sid(R, r->block, R->last_block, &R->last_block_sid);
        if (r->has & H_KID) W_KEY_I64(w, f, "kernel_id", r->kernel_id);
        if (r->has & H_DID) W_KEY_I64(w, f, "dispatch_id", r->dispatch_id);
        if (r->has & H_THREAD) W_KEY_I64(w, f, "thread_id", r->thread);
        if (r->has & H_QUEUE) W_KEY_I64(w, f, "queue_id", r->queue);
        if (r->has & H_PRIV) W_KEY_I64(w, f, "private_segment_size", r->priv);
        if (r->has & H_GROUP) W_KEY_I64(w, f, "group_segment_size", r->group);
        R->n_kernel++;
        break;
    case RP_MEMCPY:
        e.name = op_name_sid(R, r, "MEMORY_COPY");
        e.cat = R->cat_memcpy;
        e.kind = TL_K_MEMCPY;
        e.device = (r->has & H_DST) ? r->dst : (r->has & H_SRC) ? r->src : TL_NONE;
        e.pid = e.device == TL_NONE ? 0 : e.device;
        e.tid = (r->has & H_STREAM) ? r->stream : 0;
        if (r->has & H_KIND) W_KEY_I64(w, f, "kind", r->kind);
        if (r->has & H_OP) W_KEY_I64(w, f, "operation", r->op);
        if (r->has & H_BYTES) W_KEY_I64(w, f, "bytes", r->bytes);
        if (r->has & H_SRC) W_KEY_I64(w, f, "src_agent_id", r->src);
        if (r->has & H_DST) W_KEY_I64(w, f, "dst_agent_id", r->dst);
        if (r->has & H_THREAD) W_KEY_I64(w, f, "thread_id", r->thread);
        R->n_memcpy++;
        break;
    default:
        e.name = op_name_sid(R, r, r->type == RP_HIP ? "hip_api" : "hsa_api");
        e.cat = r->type == RP_HIP ? R->cat_hip : R->cat_hsa;
        e.kind = r->type == RP_HIP ? TL_K_RUNTIME : TL_K_DRIVER;
        e.device = TL_NONE;
        e.pid = R->pid;
        e.tid = (r->has & H_THREAD) ? r->thread : 0;
        if (r->has & H_KIND) W_KEY_I64(w, f, "kind", r->kind);
        if (r->has & H_OP) W_KEY_I64(w, f, "operation", r->op);
        R->n_api++;
        break;
    }
    *w++ = '}';
    a->n = (size_t)(w - a->p);
    e.args = a->p;
    e.args_len = a->n;
    tl_build_event(R->b, &e);
    return 0;
}

/* Records are emitted as they are parsed once every table they need has
 * been seen; before that (and after, while any are waiting) they queue up,
 * which keeps the events in file order. */
static int ready(const rp *R)
{
    return R->seen_meta && R->seen_syms && R->seen_strings && R->pending.n == 0;
}

/* After the document: like peek_u, but running out of input is the
 * expected outcome here, not a truncation. */
static int peek_end(tl_json *j, int *p)
{
    for (;;) {
        size_t m = j->pos;
        *p = tl_json_peek(j);
        if (*p != TL_JWS_NEED) return 0;
        int rc = tl_json_refill(j, m);
        if (rc) {
            if (j->eof && (*p = tl_json_peek(j)) == -1) return 0;
            return rc;
        }
    }
}

/* The next non-blank byte (-1 at the end of input) as a unit of its own;
 * returns 0 or an error. */
static int peek_u(tl_json *j, int *p)
{
    for (;;) {
        size_t m = j->pos;
        *p = tl_json_peek(j);
        if (*p != TL_JWS_NEED) return 0;
        int rc = tl_json_refill(j, m);
        if (rc) return rc;
    }
}

/* ---- structure walking -------------------------------------------------- */

/* Skips any value; arrays and objects element by element so that a large
 * section never has to fit in one window. */
static int skip_stream(tl_json *j)
{
    int rc, p;
    if ((rc = peek_u(j, &p)) != 0) return rc;
    if (p != '[' && p != '{') {
        UNIT(j, rc, tl_json_skip(j, NULL, NULL));
        return rc;
    }
    j->pos++;
    int first = 1, more = 1;
    unsigned n = 0;
    for (;;) {
        if (p == '[') {
            if ((rc = tl_json_arr_next_stream(j, &first, &more)) != 0) return rc;
            if (!more) return 0;
            UNIT(j, rc, tl_json_skip(j, NULL, NULL));
            if (rc) return rc;
            if (++n % 1024 == 0) tl_json_release(j);
            continue;
        }
        int f0 = first;
        for (;;) {
            size_t m = j->pos;
            first = f0;
            const char *k = NULL;
            size_t kn;
            rc = tl_json_obj_next(j, &first, &k, &kn);
            more = k != NULL;
            if (rc == 0 && more) rc = tl_json_skip(j, NULL, NULL);
            if (rc != TL_JNEED) break;
            if ((rc = tl_json_refill(j, m)) != 0) return rc;
        }
        if (rc) return rc;
        if (!more) return 0;
        if (++n % 1024 == 0) tl_json_release(j);
    }
}

/* Iterates the keys of an object value: calls fn for each key with the
 * scanner positioned at its value (fn consumes the value, streaming). The
 * key is copied out (and unescaped) first because a refill inside fn moves
 * the window. */
typedef int (*key_fn)(rp *R, const char *k, size_t kn);

static int each_key(rp *R, const char *what, key_fn fn)
{
    tl_json *j = R->j;
    int rc;
    UNIT(j, rc, tl_json_expect(j, '{', what));
    if (rc) return rc;
    int first = 1;
    char key[64];
    for (;;) {
        int f0 = first;
        const char *k = NULL;
        size_t kn = 0;
        for (;;) {
            size_t m = j->pos;
            first = f0;
            rc = tl_json_obj_next(j, &first, &k, &kn);
            if (rc != TL_JNEED) break;
            if ((rc = tl_json_refill(j, m)) != 0) return rc;
        }
        if (rc) return rc;
        if (!k) return 0;
        if (memchr(k, '\\', kn)) {
            tl_json_unescape(j, k, kn, &R->tmp);
            k = R->tmp.p;
            kn = R->tmp.n;
        }
        /* every key we look for is shorter than the buffer; a longer one
         * keeps its true length so that it matches nothing */
        size_t n = kn < sizeof key - 1 ? kn : sizeof key - 1;
        memcpy(key, k, n);
        key[n] = 0;
        rc = fn(R, key, kn);
        if (rc) return rc;
    }
}


/* Iterates the elements of an array value (null counts as empty), each as
 * one unit: parse() fills its context from one element without side effects
 * (it may return TL_JNEED and is then called again on the refilled window);
 * commit() applies it. */
typedef int (*elem_fn)(rp *R, void *ctx);

static int each_elem(rp *R, const char *what, elem_fn parse, elem_fn commit, void *ctx)
{
    tl_json *j = R->j;
    int rc, p;
    if ((rc = peek_u(j, &p)) != 0) return rc;
    if (p == 'n') {
        UNIT(j, rc, tl_json_literal(j, "null"));
        return rc;
    }
    if (p != '[') return tl_json_fail(j, what);
    j->pos++;
    int first = 1, more = 1;
    for (;;) {
        /* the separator streams (whitespace is never kept); the element is
         * the restartable unit */
        if ((rc = tl_json_arr_next_stream(j, &first, &more)) != 0) return rc;
        if (!more) return 0;
        UNIT(j, rc, parse(R, ctx));
        if (rc) return rc;
        if ((rc = commit(R, ctx)) != 0) return rc;
        if (++R->since_release >= 1024) {
            R->since_release = 0;
            tl_json_release(j);
        }
    }
}

/* ---- buffer_records ----------------------------------------------------- */

typedef struct rec_ctx {
    uint8_t type;
    rp_rec r;
} rec_ctx;

static int rec_parse(rp *R, void *p)
{
    rec_ctx *c = p;
    memset(&c->r, 0, sizeof c->r);
    c->r.type = c->type;
    for (int i = 0; i < 3; i++) c->r.grid[i] = c->r.block[i] = 1;
    return parse_record(R->j, &c->r);
}

static int rec_commit(rp *R, void *p)
{
    rec_ctx *c = p;
    if (ready(R)) return emit(R, &c->r);
    tl_vec_push(&R->pending, c->r);
    return 0;
}

static int buffer_records_key(rp *R, const char *k, size_t kn)
{
    rec_ctx c = {0};
    if (KEQ(k, kn, "kernel_dispatch")) c.type = RP_KERNEL;
    else if (KEQ(k, kn, "memory_copy")) c.type = RP_MEMCPY;
    else if (KEQ(k, kn, "hip_api")) c.type = RP_HIP;
    else if (KEQ(k, kn, "hsa_api")) c.type = RP_HSA;
    else return skip_stream(R->j);
    if (R->seen_type[c.type]++) return skip_stream(R->j);
    char what[80];
    snprintf(what, sizeof what, "an array for buffer_records.%s", k);
    return each_elem(R, what, rec_parse, rec_commit, &c);
}

/* ---- kernel_symbols ----------------------------------------------------- */

typedef struct sym_ctx {
    int64_t id;
    uint32_t has;
    const char *s[3]; /* truncated, formatted, kernel_name */
    size_t n[3];
    int present[3];
} sym_ctx;

static int sym_parse(rp *R, void *p)
{
    sym_ctx *c = p;
    memset(c, 0, sizeof *c);
    tl_json *j = R->j;
    int pk = tl_json_peek(j);
    if (pk == TL_JWS_NEED) return TL_JNEED;
    if (pk != '{') return tl_json_fail(j, "a kernel_symbols entry (object)");
    j->pos++;
    int first = 1, rc;
    const char *k;
    size_t kn;
    while ((rc = tl_json_obj_next(j, &first, &k, &kn)) == 0 && k) {
        int which = -1;
        if (KEQ(k, kn, "kernel_id")) {
            rc = get_int(j, &c->id, &c->has, 1);
            if (rc) return rc;
            continue;
        }
        if (KEQ(k, kn, "truncated_kernel_name")) which = 0;
        else if (KEQ(k, kn, "formatted_kernel_name")) which = 1;
        else if (KEQ(k, kn, "kernel_name")) which = 2;
        if (which >= 0 && tl_json_peek(j) == '"') {
            rc = tl_json_string(j, &c->s[which], &c->n[which], NULL);
            c->present[which] = 1;
        } else {
            rc = tl_json_skip(j, NULL, NULL);
        }
        if (rc) return rc;
    }
    return rc;
}

static int sym_commit(rp *R, void *p)
{
    sym_ctx *c = p;
    if (!(c->has & 1)) return 0; /* cannot be looked up */
    /* first non-empty of truncated / formatted, else kernel_name if present */
    int w = c->n[0] ? 0 : c->n[1] ? 1 : c->present[2] ? 2 : -1;
    if (w < 0) return 0; /* dispatches fall back to unknown_kernel_<id> */
    const char *s = c->s[w];
    size_t n = c->n[w];
    if (memchr(s, '\\', n)) {
        tl_json_unescape(R->j, s, n, &R->tmp);
        s = R->tmp.p;
        n = R->tmp.n;
    }
    sym_put(R, c->id, s, n, 0);
    return 0;
}

/* ---- strings.buffer_records (kind -> operation names) ------------------- */

typedef struct kind_ctx {
    TL_VEC(const char *) s;
    TL_VEC(size_t) n;
} kind_ctx;

static int kind_parse(rp *R, void *p)
{
    kind_ctx *c = p;
    c->s.n = c->n.n = 0;
    tl_json *j = R->j;
    int pk = tl_json_peek(j);
    if (pk == TL_JWS_NEED) return TL_JNEED;
    if (pk != '{') return tl_json_skip(j, NULL, NULL);
    j->pos++;
    int first = 1, rc;
    const char *k;
    size_t kn;
    while ((rc = tl_json_obj_next(j, &first, &k, &kn)) == 0 && k) {
        if (KEQ(k, kn, "operations") && tl_json_peek(j) == '[') {
            j->pos++;
            int f = 1, more;
            while ((rc = tl_json_arr_next(j, &f, &more)) == 0 && more) {
                const char *s = NULL;
                size_t n = 0;
                if (tl_json_peek(j) == '"') rc = tl_json_string(j, &s, &n, NULL);
                else rc = tl_json_skip(j, NULL, NULL);
                if (rc) return rc;
                tl_vec_push(&c->s, s);
                tl_vec_push(&c->n, n);
            }
        } else {
            rc = tl_json_skip(j, NULL, NULL);
        }
        if (rc) return rc;
    }
    return rc;
}

static int kind_commit(rp *R, void *p)
{
    kind_ctx *c = p;
    rp_kindtab t = {0};
    t.nops = c->s.n;
    t.ops = tl_arena_alloc(&R->arena, (t.nops + 1) * sizeof *t.ops);
    t.oplen = tl_arena_alloc(&R->arena, (t.nops + 1) * sizeof *t.oplen);
    t.opsid = tl_arena_zalloc(&R->arena, (t.nops + 1) * sizeof *t.opsid);
    for (size_t i = 0; i < t.nops; i++) {
        const char *s = c->s.v[i] ? c->s.v[i] : "";
        size_t n = c->n.v[i];
        if (memchr(s, '\\', n)) {
            tl_json_unescape(R->j, s, n, &R->tmp);
            s = R->tmp.p;
            n = R->tmp.n;
        }
        t.ops[i] = tl_arena_strndup(&R->arena, s, n);
        t.oplen[i] = (uint32_t)n;
    }
    tl_vec_push(&R->kinds, t);
    return 0;
}

static int strings_key(rp *R, const char *k, size_t kn)
{
    if (!KEQ(k, kn, "buffer_records")) return skip_stream(R->j);
    kind_ctx c;
    memset(&c, 0, sizeof c);
    R->kinds.n = 0; /* a repeated key replaces, as in Python */
    int rc = each_elem(R, "an array for strings.buffer_records", kind_parse, kind_commit, &c);
    tl_vec_free(&c.s);
    tl_vec_free(&c.n);
    return rc;
}

/* ---- rocprofiler-sdk-tool[0] -------------------------------------------- */

/* A small value kept whole: parsed as one unit, copied out. */
static int take_raw(rp *R, char **out, size_t *outn)
{
    const char *s;
    size_t n;
    int rc;
    UNIT(R->j, rc, tl_json_skip(R->j, &s, &n));
    if (rc) return rc;
    *out = tl_xstrndup(s, n);
    *outn = n;
    return 0;
}

static void parse_metadata(rp *R, const char *s, size_t n)
{
    tl_json j;
    tl_err e;
    tl_json_init_buf(&j, s, n, R->j->file, &e);
    if (tl_json_expect(&j, '{', "{")) return;
    int first = 1, rc;
    const char *k;
    size_t kn;
    uint32_t has = 0;
    while ((rc = tl_json_obj_next(&j, &first, &k, &kn)) == 0 && k) {
        if (KEQ(k, kn, "pid")) rc = get_int(&j, &R->pid, &has, 1);
        else rc = tl_json_skip(&j, NULL, NULL);
        if (rc) return;
    }
    if (!(has & 1)) R->pid = 0;
}

static int tool_key(rp *R, const char *k, size_t kn)
{
    int rc;
    if (KEQ(k, kn, "metadata") || KEQ(k, kn, "agents")) {
        char *raw;
        size_t n;
        if ((rc = take_raw(R, &raw, &n)) != 0) return rc;
        int meta = k[0] == 'm';
        tl_build_extra(R->b, meta ? TL_ROCPROF_X_METADATA : TL_ROCPROF_X_AGENTS, raw, n);
        if (meta) {
            parse_metadata(R, raw, n);
            R->seen_meta = 1;
        }
        free(raw);
        return 0;
    }
    if (KEQ(k, kn, "strings")) {
        int p;
        if ((rc = peek_u(R->j, &p)) != 0) return rc;
        rc = p == '{' ? each_key(R, "{", strings_key) : skip_stream(R->j);
        R->seen_strings = 1;
        return rc;
    }
    if (KEQ(k, kn, "kernel_symbols")) {
        sym_ctx c;
        rc = each_elem(R, "an array for kernel_symbols", sym_parse, sym_commit, &c);
        R->seen_syms = 1;
        return rc;
    }
    if (KEQ(k, kn, "buffer_records")) {
        if (R->seen_buffer_records) return skip_stream(R->j);
        R->seen_buffer_records = 1;
        int p;
        if ((rc = peek_u(R->j, &p)) != 0) return rc;
        if (p != '{')
            return tl_json_fail(R->j, "an object for buffer_records");
        return each_key(R, "{", buffer_records_key);
    }
    return skip_stream(R->j);
}

static int tool_array(rp *R)
{
    tl_json *j = R->j;
    int rc, p;
    if ((rc = peek_u(j, &p)) != 0) return rc;
    if (p != '[')
        return tl_json_fail_at(j, j->pos, "Not a valid rocprofv3 file: 'rocprofiler-sdk-tool' is not an array");
    j->pos++;
    int first = 1, more;
    UNIT(j, rc, (first = 1, tl_json_arr_next(j, &first, &more)));
    if (rc) return rc;
    if (!more)
        return tl_json_fail_at(j, j->pos, "Not a valid rocprofv3 file: 'rocprofiler-sdk-tool' is an empty array");
    if ((rc = peek_u(j, &p)) != 0) return rc;
    if (p != '{')
        return tl_json_fail_at(j, j->pos, "Not a valid rocprofv3 file: 'rocprofiler-sdk-tool'[0] is not an object");
    if ((rc = each_key(R, "{", tool_key)) != 0) return rc;
    if (!R->seen_buffer_records)
        return tl_json_fail_at(j, j->pos, "Not a valid rocprofv3 file: 'rocprofiler-sdk-tool'[0] has no 'buffer_records'");
    /* Only element 0 is used (as the reference does); the rest is skipped. */
    for (;;) {
        int f0 = first;
        for (;;) {
            size_t m = j->pos;
            first = f0;
            rc = tl_json_arr_next(j, &first, &more);
            if (rc == 0 && more) rc = tl_json_skip(j, NULL, NULL);
            if (rc != TL_JNEED) break;
            if ((rc = tl_json_refill(j, m)) != 0) return rc;
        }
        if (rc || !more) return rc;
    }
}

static int top_key(rp *R, const char *k, size_t kn)
{
    if (KEQ(k, kn, "rocprofiler-sdk-tool")) {
        if (R->seen_buffer_records) return skip_stream(R->j); /* duplicate key */
        return tool_array(R);
    }
    return skip_stream(R->j);
}

static int parse_doc(rp *R)
{
    tl_json *j = R->j;
    int p, rc;
    if ((rc = peek_u(j, &p)) != 0) return rc;
    if (p != '{')
        return tl_json_fail(j, "a JSON object (Not a valid rocprofv3 file)");
    if ((rc = each_key(R, "{", top_key)) != 0) return rc;
    if ((rc = peek_end(j, &p)) != 0) return rc;
    if (p != -1) return tl_json_fail(j, "end of input after the top-level object");
    if (!R->seen_buffer_records)
        return tl_errf(R->err, TL_EFORMAT, "%s: Not a valid rocprofv3 file: missing 'rocprofiler-sdk-tool' key",
                       j->file);
    /* Records that came before the tables they need. */
    for (size_t i = 0; i < R->pending.n; i++)
        if ((rc = emit(R, &R->pending.v[i])) != 0) return rc;
    return 0;
}

static void rp_init(rp *R, tl_json *j, tl_build *b, tl_err *err)
{
    memset(R, 0, sizeof *R);
    R->j = j;
    R->b = b;
    R->err = err;
    tl_arena_init(&R->arena, 1 << 16);
    R->cat_kernel = tl_build_str(b, "kernel", 6);
    R->cat_memcpy = tl_build_str(b, "gpu_memcpy", 10);
    R->cat_hip = tl_build_str(b, "hip_api", 7);
    R->cat_hsa = tl_build_str(b, "hsa_api", 7);
}

static void rp_free(rp *R)
{
    tl_vec_free(&R->syms);
    tl_vec_free(&R->kinds);
    tl_vec_free(&R->pending);
    tl_imap_free(&R->sym_of);
    tl_buf_free(&R->args);
    tl_buf_free(&R->tmp);
    tl_arena_free(&R->arena);
}

static int run(tl_json *j, tl_build *b, tl_err *err)
{
    rp R;
    rp_init(&R, j, b, err);
    tl_build_set_format(b, "rocprof");
    int rc = parse_doc(&R);
    if (rc == 0 && (R.n_unresolved || R.n_ops_unresolved)) {
        tl_buf w = {0};
        if (R.n_unresolved) {
            char first[32];
            if (R.first_unresolved_none) snprintf(first, sizeof first, "none");
            else snprintf(first, sizeof first, "%lld", (long long)R.first_unresolved);
            tl_buf_printf(&w, "%llu kernel dispatches name kernel ids absent from kernel_symbols "
                          "(first: %s); they are reported as unknown_kernel_<id>\n",
                          (unsigned long long)R.n_unresolved, first);
        }
        if (R.n_ops_unresolved)
            tl_buf_printf(&w, "%llu memory copy / API records have a kind or operation absent from "
                          "strings.buffer_records; they are named by number\n",
                          (unsigned long long)R.n_ops_unresolved);
        tl_build_extra(b, TL_ROCPROF_X_WARNINGS, w.p, w.n);
        tl_buf_free(&w);
    }
    rp_free(&R);
    return rc;
}

int tl_read_rocprof(tl_source *src, const char *path, tl_build *b, tl_err *err)
{
    tl_json j;
    int rc = tl_json_init_src(&j, src, path, err);
    if (rc) return rc;
    return run(&j, b, err);
}

int tl_rocprof_parse_buf(const char *buf, size_t len, const char *path, tl_build *b, tl_err *err)
{
    tl_json j;
    tl_json_init_buf(&j, buf, len, path, err);
    return run(&j, b, err);
}

int tl_rocprof_sniff(const char *head, size_t n)
{
    static const char key[] = "\"rocprofiler-sdk-tool\"";
    size_t i = 0;
    if (n >= 3 && (unsigned char)head[0] == 0xef && (unsigned char)head[1] == 0xbb &&
        (unsigned char)head[2] == 0xbf)
        i = 3;
    while (i < n && (head[i] == ' ' || head[i] == '\n' || head[i] == '\r' || head[i] == '\t')) i++;
    if (i >= n || head[i] != '{') return 0;
    const char *p = memmem(head + i, n - i, key, sizeof key - 1);
    if (!p) return 0;
    /* must be a key: followed by optional whitespace and ':' */
    const char *e = p + sizeof key - 1, *end = head + n;
    while (e < end && (*e == ' ' || *e == '\n' || *e == '\r' || *e == '\t')) e++;
    return e >= end || *e == ':';
}
