/* pftrace.c — the Perfetto trace reader (pftrace.h says what it stores).
 * The Trace's packets are read one at a time from the source window (a
 * plain file is mapped and its pages dropped behind the reader, gzip is
 * inflated block by block: the input is never whole in memory) and
 * decoded in place by the wire reader of pftrace_wire.h, for exactly the
 * fields of ingest/proto/pftrace.proto; other fields are skipped. Nothing
 * is allocated per packet: texts are interned once per sequence and iid,
 * and the builder string ids, event kinds and JSON keys made from them are
 * kept beside them. Slices are matched begin/end per track. */
#include "ingest/pftrace.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/ingest.h"
#include "ingest/pftrace_wire.h"
#include "ingest/source.h"

/* Nested debug annotations deeper than this are refused (the args writer
 * recurses once per level). */
#define PF_MAX_DEPTH 64
/* Parent links followed to find a track's process. */
#define PF_MAX_ANCESTORS 64

/* Field numbers of ingest/proto/pftrace.proto. */
enum {
    TP_TIMESTAMP = 8, TP_SEQ_ID = 10, TP_TRACK_EVENT = 11, TP_INTERNED = 12, TP_SEQ_FLAGS = 13,
    TP_CLEARED = 41, TP_TRACK_DESC = 60,
    TD_UUID = 1, TD_NAME = 2, TD_PROCESS = 3, TD_THREAD = 4, TD_PARENT = 5,
    PD_PID = 1, PD_NAME = 6,
    THD_PID = 1, THD_TID = 2, THD_NAME = 5,
    TE_CAT_IIDS = 3, TE_ANNOTS = 4, TE_TYPE = 9, TE_NAME_IID = 10, TE_TRACK = 11, TE_CATS = 22, TE_NAME = 23,
    DA_NAME_IID = 1, DA_BOOL = 2, DA_UINT = 3, DA_INT = 4, DA_DOUBLE = 5, DA_STRING = 6, DA_POINTER = 7,
    DA_LEGACY = 9, DA_NAME = 10, DA_DICT = 11, DA_ARRAY = 12, DA_STRING_IID = 17,
    ID_CATS = 1, ID_NAMES = 2, ID_ANAMES = 3, ID_ASTRS = 29,
};
enum { TYPE_SLICE_BEGIN = 1, TYPE_SLICE_END = 2, TYPE_COUNTER = 4 };

/* ------------------------------------------------------------ sniffing */

int tl_pftrace_sniff(const char *head, size_t n)
{
    const unsigned char *p = (const unsigned char *)head, *end = p + n, *q = p + 1;
    uint64_t len;
    if (n < 3 || p[0] != 0x0a) return 0;
    if (pf_varint(&q, end, &len) || len == 0) return 0;
    const unsigned char *stop = len < (uint64_t)(end - q) ? q + len : end;
    pf_field f;
    int rc;
    while ((rc = pf_next(&q, stop, &f)) == 1) {
        if (f.num == 0) return 0;
        if (f.num >= 8) return 1;
    }
    /* a packet cut by the head: its first field numbered 8 or more may be
     * the one cut (a tag read whole still says so) */
    if (rc < 0 && rc != PF_E_WIRETYPE && q < stop) {
        uint64_t tag;
        const unsigned char *t = q;
        if (!pf_varint(&t, stop, &tag) && (tag >> 3) >= 8 && ((tag & 7) <= 2 || (tag & 7) == 5)) return 1;
    }
    return 0;
}

/* ------------------------------------------------------------ reader state */

enum { IT_CAT = 0, IT_NAME = 1, IT_ANAME = 2, IT_ASTR = 3, IT_TABLES = 4 };

typedef struct intern_key {
    uint32_t seq, gen, table, pad;
    uint64_t iid;
} intern_key;

/* What one interned text is, once looked up: where it is in the pool and
 * what was made of it (filled on first use). */
typedef struct intern_ent {
    uint32_t off, len; /* text in the pool; off 0: not known */
    uint32_t sid;      /* names, categories: the builder's string id, 0 not yet */
    uint32_t key;      /* annotation names: pool offset of `"name":`, 0 not yet */
    uint16_t key_len;
    uint8_t kind;      /* categories: the event kind */
    uint8_t promo;     /* annotation names: the promoted column (promote_code) */
} intern_ent;

/* The entries of small iids of one sequence generation: lookups without
 * hashing. A few sequences are cached at once (rocprofv3 writes one per
 * thread); the rest go through the map. */
#define PF_CACHE_IIDS 1024
#define PF_CACHES 8
typedef struct intern_cache {
    uint32_t seq, gen;
    int valid;
    intern_ent ent[IT_TABLES][PF_CACHE_IIDS];
} intern_cache;

typedef struct track {
    uint64_t parent;
    int64_t pid, tid;
    uint8_t has_parent, kind; /* kind: 0 none, 1 process, 2 thread */
    int32_t top;              /* innermost open slice, -1 none */
} track;

typedef struct slice {
    tl_ev_in ev;  /* times, names, ids and promoted args so far */
    int32_t prev; /* next open slice down the track's stack, or next free */
    tl_buf args;  /* members written so far, without the braces */
} slice;

typedef struct pf_reader {
    tl_build *b;
    const char *path;
    uint64_t off;                  /* file offset of the packet's bytes */
    const unsigned char *pkt;      /* the packet's bytes (error offsets) */
    uint32_t seq, gen;             /* the packet's sequence and its generation */
    intern_cache *cache;           /* the sequence's cache, or NULL */
    intern_cache *caches[PF_CACHES];
    unsigned next_cache;
    tl_bmap interned;              /* intern_key -> index in ents + 1 */
    TL_VEC(intern_ent) ents;
    tl_buf pool;                   /* interned texts, NUL-terminated */
    tl_imap seq_gen;
    tl_imap track_of;              /* uuid -> index in tracks + 1 */
    track *tracks;
    size_t ntracks, cap_tracks;
    slice *slices;
    size_t nslices, cap_slices;
    int32_t free_slice;
    uint32_t uid;
    tl_buf tmp;
} pf_reader;

static void reader_init(pf_reader *r, tl_build *b, const char *path)
{
    memset(r, 0, sizeof *r);
    r->b = b;
    r->path = path;
    tl_bmap_init(&r->interned, sizeof(intern_key), 64);
    tl_imap_init(&r->seq_gen, 8);
    tl_imap_init(&r->track_of, 64);
    r->free_slice = -1;
    tl_buf_putc(&r->pool, '\0'); /* offset 0: absent */
}

static void reader_free(pf_reader *r)
{
    for (int i = 0; i < PF_CACHES; i++) free(r->caches[i]);
    tl_bmap_free(&r->interned);
    free(r->ents.v);
    tl_imap_free(&r->seq_gen);
    tl_imap_free(&r->track_of);
    free(r->tracks);
    for (size_t i = 0; i < r->nslices; i++) tl_buf_free(&r->slices[i].args);
    free(r->slices);
    tl_buf_free(&r->pool);
    tl_buf_free(&r->tmp);
}

/* The error at byte `at` of the packet being read (NULL: the packet's start). */
static int fail_at(pf_reader *r, tl_err *err, const unsigned char *at, const char *what)
{
    uint64_t off = r->off + (at && r->pkt ? (uint64_t)(at - r->pkt) : 0);
    return tl_errf(err, TL_EFORMAT, "%s: byte %" PRIu64 ": %s", r->path, off, what);
}

static int fail(pf_reader *r, tl_err *err, const char *what)
{
    return fail_at(r, err, NULL, what);
}

/* The error of a negative pf_next result in message `msg`. */
static int wire_fail(pf_reader *r, tl_err *err, int rc, const unsigned char *at, const char *msg)
{
    char t[160];
    const char *what = rc == PF_E_VARINT_CUT   ? "truncated varint (the message ends inside it)"
                       : rc == PF_E_VARINT_LONG ? "malformed varint (more than 10 bytes)"
                       : rc == PF_E_LEN_PAST    ? "length-delimited field runs past the end of its message"
                       : rc == PF_E_FIXED_CUT   ? "truncated fixed-size value (the message ends inside it)"
                                                : "unsupported wire type (a group, or type 6 or 7)";
    snprintf(t, sizeof t, "%s, in a %s", what, msg);
    return fail_at(r, err, at, t);
}

/* A known field with the wrong wire type. */
static int type_fail(pf_reader *r, tl_err *err, const pf_field *f, const char *msg, unsigned want)
{
    static const char *const names[] = {"varint", "64-bit", "length-delimited", "group", "group", "32-bit",
                                        "type 6", "type 7"};
    char t[160];
    snprintf(t, sizeof t, "%s field %u: expected wire type %s, found %s", msg, f->num, names[want & 7],
             names[f->wt & 7]);
    return fail_at(r, err, f->at, t);
}

/* The locals of a walk over the message s[0..n): `WALK_INIT(s, n); while
 * ((rc = pf_next(&p, end, &f)) == 1) ...`, then rc checked by walk_done. */
#define WALK_INIT(s, n) const unsigned char *p = (s), *end = (s) + (n); pf_field f = {0}; int rc
static int walk_done(pf_reader *r, tl_err *err, int rc, const unsigned char *p, const char *msg)
{
    return rc < 0 ? wire_fail(r, err, rc, p, msg) : 0;
}

/* ------------------------------------------------------------ interning */

/* Makes the packet's sequence current: its generation and cache. */
static void set_sequence(pf_reader *r, uint32_t seq)
{
    size_t *g = tl_imap_get(&r->seq_gen, seq);
    uint32_t gen = g ? (uint32_t)*g : 0;
    r->seq = seq;
    r->gen = gen;
    if (r->cache && r->cache->seq == seq && r->cache->gen == gen) return;
    for (int i = 0; i < PF_CACHES; i++) {
        intern_cache *c = r->caches[i];
        if (c && c->valid && c->seq == seq && c->gen == gen) {
            r->cache = c;
            return;
        }
    }
    unsigned slot = r->next_cache++ % PF_CACHES;
    if (!r->caches[slot]) r->caches[slot] = tl_xmalloc(sizeof *r->caches[slot]);
    intern_cache *c = r->caches[slot];
    memset(c, 0, sizeof *c);
    c->seq = seq;
    c->gen = gen;
    c->valid = 1;
    r->cache = c;
}

/* The entry of (table, iid) in the current sequence generation, or NULL
 * when it has none. Small iids are served from (and copied into) the
 * sequence's cache; what is made of an entry there stays in the cache. */
static intern_ent *intern_get(pf_reader *r, uint32_t table, uint64_t iid)
{
    intern_ent *c = iid < PF_CACHE_IIDS ? &r->cache->ent[table][iid] : NULL;
    if (c && c->off) return c;
    intern_key k = {r->seq, r->gen, table, 0, iid};
    int isnew;
    size_t *slot = tl_bmap_put(&r->interned, &k, &isnew);
    if (!*slot) return NULL; /* a miss stays as index 0 */
    intern_ent *e = &r->ents.v[*slot - 1];
    if (!c) return e;
    *c = *e;
    return c;
}

static const char *ent_text(const pf_reader *r, const intern_ent *e)
{
    return r->pool.p + e->off;
}

static int intern_put(pf_reader *r, uint32_t table, uint64_t iid, const unsigned char *s, size_t n, tl_err *err)
{
    n = pf_strlen(s, n);
    if (r->pool.n + n + 1 > UINT32_MAX) return fail_at(r, err, s, "interned texts exceed 4 GiB");
    intern_ent fresh = {(uint32_t)r->pool.n, (uint32_t)n, 0, 0, 0, 0, 0};
    tl_buf_append(&r->pool, s, n);
    tl_buf_putc(&r->pool, '\0');
    intern_key k = {r->seq, r->gen, table, 0, iid};
    int isnew;
    size_t *slot = tl_bmap_put(&r->interned, &k, &isnew);
    if (!*slot) {
        tl_vec_push(&r->ents, fresh);
        *slot = r->ents.n;
    } else {
        r->ents.v[*slot - 1] = fresh;
    }
    if (iid < PF_CACHE_IIDS) r->cache->ent[table][iid] = fresh;
    return 0;
}

/* One InternedData entry (EventCategory, EventName, DebugAnnotationName:
 * iid 1, name 2; InternedString: iid 1, str 2). */
static int take_interned_entry(pf_reader *r, uint32_t table, const unsigned char *s, size_t n, tl_err *err)
{
    uint64_t iid = 0;
    const unsigned char *text = NULL;
    size_t tn = 0;
    WALK_INIT(s, n);
    while ((rc = pf_next(&p, end, &f)) == 1) {
        if (f.num == 1) {
            if (f.wt != PF_VARINT) return type_fail(r, err, &f, "interned entry", PF_VARINT);
            iid = f.v;
        } else if (f.num == 2) {
            if (f.wt != PF_LEN) return type_fail(r, err, &f, "interned entry", PF_LEN);
            text = f.s;
            tn = f.n;
        }
    }
    if (rc < 0) return wire_fail(r, err, rc, p, "interned entry");
    return text ? intern_put(r, table, iid, text, tn, err) : 0;
}

static int take_interned(pf_reader *r, const unsigned char *s, size_t n, tl_err *err)
{
    WALK_INIT(s, n);
    while ((rc = pf_next(&p, end, &f)) == 1) {
        int table = f.num == ID_CATS ? IT_CAT : f.num == ID_NAMES ? IT_NAME : f.num == ID_ANAMES ? IT_ANAME
                    : f.num == ID_ASTRS ? IT_ASTR : -1;
        if (table < 0) continue;
        if (f.wt != PF_LEN) return type_fail(r, err, &f, "InternedData", PF_LEN);
        int e = take_interned_entry(r, (uint32_t)table, f.s, f.n, err);
        if (e) return e;
    }
    return walk_done(r, err, rc, p, "InternedData");
}

/* ------------------------------------------------------------ tracks */

static track *track_get(pf_reader *r, uint64_t uuid, int create)
{
    size_t *ix = create ? tl_imap_put(&r->track_of, uuid, NULL) : tl_imap_get(&r->track_of, uuid);
    if (!ix) return NULL;
    if (*ix == 0) { /* new: indexes are stored + 1 */
        if (r->ntracks == r->cap_tracks) {
            r->cap_tracks = r->cap_tracks ? 2 * r->cap_tracks : 16;
            r->tracks = tl_xrealloc(r->tracks, r->cap_tracks * sizeof *r->tracks);
        }
        track *t = &r->tracks[r->ntracks];
        memset(t, 0, sizeof *t);
        t->top = -1;
        *ix = ++r->ntracks;
    }
    return &r->tracks[*ix - 1];
}

static void meta_name(pf_reader *r, const char *what, const unsigned char *name, size_t n, int64_t pid,
                      int64_t tid, int has_tid)
{
    r->tmp.n = 0;
    tl_buf_puts(&r->tmp, "{\"name\":");
    tl_buf_json_str(&r->tmp, (const char *)name, pf_strlen(name, n));
    tl_buf_putc(&r->tmp, '}');
    uint32_t nm = tl_build_str(r->b, what, strlen(what));
    tl_build_meta(r->b, r->uid++, nm, pid, tid, 0, 0, (uint8_t)has_tid, r->tmp.p, r->tmp.n);
}

/* A ProcessDescriptor (is_thread 0) or ThreadDescriptor: pid, tid, name. */
typedef struct pf_desc {
    int present;
    int64_t pid, tid;
    const unsigned char *name;
    size_t name_n;
} pf_desc;

static int read_desc(pf_reader *r, const pf_field *in, int is_thread, pf_desc *d, tl_err *err)
{
    const char *msg = is_thread ? "ThreadDescriptor" : "ProcessDescriptor";
    unsigned name_field = is_thread ? THD_NAME : PD_NAME;
    d->present = 1;
    WALK_INIT(in->s, in->n);
    while ((rc = pf_next(&p, end, &f)) == 1) {
        if (f.num == PD_PID || (is_thread && f.num == THD_TID)) {
            if (f.wt != PF_VARINT) return type_fail(r, err, &f, msg, PF_VARINT);
            *(f.num == PD_PID ? &d->pid : &d->tid) = (int32_t)(uint32_t)f.v;
        } else if (f.num == name_field) {
            if (f.wt != PF_LEN) return type_fail(r, err, &f, msg, PF_LEN);
            d->name = f.s;
            d->name_n = f.n;
        }
    }
    return walk_done(r, err, rc, p, msg);
}

static int take_track(pf_reader *r, const unsigned char *s, size_t n, tl_err *err)
{
    uint64_t uuid = 0, parent = 0;
    int has_uuid = 0, has_parent = 0;
    pf_desc proc = {0}, thr = {0};
    WALK_INIT(s, n);
    while ((rc = pf_next(&p, end, &f)) == 1) {
        int e = 0;
        switch (f.num) {
        case TD_UUID:
        case TD_PARENT:
            if (f.wt != PF_VARINT) return type_fail(r, err, &f, "TrackDescriptor", PF_VARINT);
            if (f.num == TD_UUID) uuid = f.v, has_uuid = 1;
            else parent = f.v, has_parent = 1;
            break;
        case TD_NAME:
        case TD_PROCESS:
        case TD_THREAD:
            if (f.wt != PF_LEN) return type_fail(r, err, &f, "TrackDescriptor", PF_LEN);
            if (f.num == TD_PROCESS) e = read_desc(r, &f, 0, &proc, err);
            if (f.num == TD_THREAD) e = read_desc(r, &f, 1, &thr, err);
            break;
        }
        if (e) return e;
    }
    if (rc < 0) return wire_fail(r, err, rc, p, "TrackDescriptor");
    if (!has_uuid) return 0;
    track *t = track_get(r, uuid, 1);
    if (has_parent) {
        t->parent = parent;
        t->has_parent = 1;
    }
    if (thr.present) {
        t->kind = 2;
        t->pid = thr.pid;
        t->tid = thr.tid;
        if (thr.name) meta_name(r, "thread_name", thr.name, thr.name_n, t->pid, t->tid, 1);
    } else if (proc.present) {
        t->kind = 1;
        t->pid = proc.pid;
        t->tid = 0;
        if (proc.name) meta_name(r, "process_name", proc.name, proc.name_n, t->pid, 0, 0);
    }
    return 0;
}

/* pid/tid of an event on track uuid (pftrace.h). */
static void track_ids(pf_reader *r, track *t, int64_t *pid, int64_t *tid)
{
    *pid = *tid = 0;
    if (t && t->kind == 2) {
        *pid = t->pid;
        *tid = t->tid;
        return;
    }
    for (int hops = 0; t && hops < PF_MAX_ANCESTORS; hops++) {
        if (t->kind) {
            *pid = t->pid;
            return;
        }
        t = t->has_parent ? track_get(r, t->parent, 0) : NULL;
    }
}

/* ------------------------------------------------------------ args */

/* The promoted columns, named as the Kineto reader promotes them (corr_id
 * being rocprofv3's correlation id). */
enum {
    PR_NONE, PR_CORR, PR_STREAM, PR_DEVICE, PR_EXT, PR_FWD, PR_SEQ, PR_GRID, PR_BLOCK, PR_DIMS, PR_TYPE,
    PR_STRIDES, PR_CONCRETE, PR_SEL,
};

static uint8_t promote_code(const char *key)
{
    static const struct { const char *key; uint8_t code; } keys[] = {
        {"corr_id", PR_CORR}, {"correlation", PR_CORR}, {"stream", PR_STREAM}, {"device", PR_DEVICE},
        {"External id", PR_EXT}, {"Fwd thread id", PR_FWD}, {"Sequence number", PR_SEQ}, {"grid", PR_GRID},
        {"block", PR_BLOCK}, {"Input Dims", PR_DIMS}, {"Input type", PR_TYPE}, {"Input Strides", PR_STRIDES},
        {"Concrete Inputs", PR_CONCRETE}, {TL_ARG_OUTPUT_TYPE, PR_SEL},
    };
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (!strcmp(key, keys[i].key)) return keys[i].code;
    return PR_NONE;
}

/* The integer column of promoted column `code`, NULL for text ones. */
static int64_t *promo_int(tl_ev_in *e, uint8_t code)
{
    switch (code) {
    case PR_CORR: return &e->corr;
    case PR_STREAM: return &e->stream;
    case PR_DEVICE: return &e->device;
    case PR_EXT: return &e->ext_id;
    case PR_FWD: return &e->fwd_tid;
    case PR_SEQ: return &e->seq;
    default: return NULL;
    }
}

/* Sets the promoted column `code` of e from a member's value text v, as
 * the Kineto reader reads promoted args: an integer (decimal or 0x-hex,
 * optional '-', bare or in a string) or else none; texts as they are. */
static void promote(pf_reader *r, tl_ev_in *e, uint8_t code, const char *v, size_t n)
{
    int64_t *iv = promo_int(e, code);
    uint32_t *tv = NULL;
    switch (code) {
    case PR_NONE: return;
    case PR_GRID: tv = &e->grid; break;
    case PR_BLOCK: tv = &e->block; break;
    case PR_DIMS: tv = &e->in_dims; break;
    case PR_TYPE: tv = &e->in_type; break;
    case PR_STRIDES: tv = &e->in_strides; break;
    case PR_CONCRETE: tv = &e->concrete; break;
    case PR_SEL: e->args_sel = 1; return;
    }
    if (iv) {
        const char *s = v;
        size_t sn = n;
        if (sn >= 2 && s[0] == '"' && s[sn - 1] == '"') s++, sn -= 2;
        if (!tl_parse_int_text(s, sn, iv)) *iv = TL_NONE;
    }
    if (tv) *tv = tl_build_str(r->b, v, n);
}

/* One DebugAnnotation's fields (the repeated dict_entries and
 * array_values are walked again when written). */
typedef struct pf_annot {
    const unsigned char *bytes;
    size_t n;
    const unsigned char *name, *str, *legacy;
    size_t name_n, str_n, legacy_n;
    uint64_t name_iid, uint_v, ptr, str_iid;
    int64_t int_v;
    double dbl;
    uint8_t has_name_iid, has_bool, bool_v, has_uint, has_int, has_dbl, has_ptr, has_str_iid, ndict, narray;
} pf_annot;

static int read_annot(pf_reader *r, const unsigned char *s, size_t n, pf_annot *a, tl_err *err)
{
    memset(a, 0, sizeof *a);
    a->bytes = s;
    a->n = n;
    WALK_INIT(s, n);
    while ((rc = pf_next(&p, end, &f)) == 1) {
        unsigned want;
        switch (f.num) {
        case DA_NAME_IID: case DA_BOOL: case DA_UINT: case DA_INT: case DA_POINTER: case DA_STRING_IID:
            want = PF_VARINT;
            break;
        case DA_DOUBLE: want = PF_I64; break;
        case DA_STRING: case DA_LEGACY: case DA_NAME: case DA_DICT: case DA_ARRAY: want = PF_LEN; break;
        default: continue;
        }
        if (f.wt != want) return type_fail(r, err, &f, "DebugAnnotation", want);
        switch (f.num) {
        case DA_NAME_IID: a->name_iid = f.v, a->has_name_iid = 1; break;
        case DA_BOOL: a->bool_v = f.v != 0, a->has_bool = 1; break;
        case DA_UINT: a->uint_v = f.v, a->has_uint = 1; break;
        case DA_INT: a->int_v = (int64_t)f.v, a->has_int = 1; break;
        case DA_POINTER: a->ptr = f.v, a->has_ptr = 1; break;
        case DA_STRING_IID: a->str_iid = f.v, a->has_str_iid = 1; break;
        case DA_DOUBLE: memcpy(&a->dbl, &f.v, sizeof a->dbl), a->has_dbl = 1; break;
        case DA_STRING: a->str = f.s, a->str_n = f.n; break;
        case DA_LEGACY: a->legacy = f.s, a->legacy_n = f.n; break;
        case DA_NAME: a->name = f.s, a->name_n = f.n; break;
        case DA_DICT: a->ndict = 1; break;
        case DA_ARRAY: a->narray = 1; break;
        }
    }
    return walk_done(r, err, rc, p, "DebugAnnotation");
}

static void write_double(tl_buf *o, double d)
{
    if (d != d) { tl_buf_puts(o, "NaN"); return; }
    if (d > 1.7976931348623157e308) { tl_buf_puts(o, "Infinity"); return; }
    if (d < -1.7976931348623157e308) { tl_buf_puts(o, "-Infinity"); return; }
    char t[40];
    size_t n = tl_fmt_pyfloat(d, t);
    tl_buf_append(o, t, n);
}

/* Decimal text of v (with '-' when neg), two digits at a time. */
static void put_u64(tl_buf *o, uint64_t v, int neg)
{
    static const char pairs[] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
                                "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
                                "8081828384858687888990919293949596979899";
    char t[24];
    size_t i = sizeof t;
    while (v >= 100) {
        unsigned d = (unsigned)(v % 100) * 2;
        v /= 100;
        t[--i] = pairs[d + 1];
        t[--i] = pairs[d];
    }
    if (v >= 10) {
        t[--i] = pairs[v * 2 + 1];
        t[--i] = pairs[v * 2];
    } else {
        t[--i] = (char)('0' + v);
    }
    if (neg) t[--i] = '-';
    tl_buf_reserve(o, sizeof t);
    memcpy(o->p + o->n, t + i, sizeof t - i);
    o->n += sizeof t - i;
}

static int write_members(pf_reader *r, const unsigned char *s, size_t n, unsigned field, tl_buf *o,
                         tl_ev_in *promo, int depth, tl_err *err);
static int write_value(pf_reader *r, const pf_annot *a, tl_buf *o, int depth, tl_err *err);

/* The annotation's dict entries or array values, each written. */
static int write_nested(pf_reader *r, const pf_annot *a, tl_buf *o, int depth, tl_err *err)
{
    if (depth >= PF_MAX_DEPTH) return fail_at(r, err, a->bytes, "debug annotations nested more than 64 levels deep");
    if (a->ndict) {
        tl_buf_putc(o, '{');
        int e = write_members(r, a->bytes, a->n, DA_DICT, o, NULL, depth + 1, err);
        tl_buf_putc(o, '}');
        return e;
    }
    tl_buf_putc(o, '[');
    size_t start = o->n;
    WALK_INIT(a->bytes, a->n);
    while ((rc = pf_next(&p, end, &f)) == 1) {
        if (f.num != DA_ARRAY) continue;
        pf_annot v;
        int e = read_annot(r, f.s, f.n, &v, err);
        if (e) return e;
        if (o->n > start) tl_buf_putc(o, ',');
        if ((e = write_value(r, &v, o, depth + 1, err))) return e;
    }
    tl_buf_putc(o, ']');
    return walk_done(r, err, rc, p, "DebugAnnotation");
}

/* The JSON text of an annotation's value (pftrace.h), the first present
 * of: bool, uint, int, double, string, interned string, pointer, legacy
 * JSON, dict entries, array values; else null. */
static int write_value(pf_reader *r, const pf_annot *a, tl_buf *o, int depth, tl_err *err)
{
    const intern_ent *s;
    if (a->has_bool) tl_buf_puts(o, a->bool_v ? "true" : "false");
    else if (a->has_uint) put_u64(o, a->uint_v, 0);
    else if (a->has_int) put_u64(o, a->int_v < 0 ? 0 - (uint64_t)a->int_v : (uint64_t)a->int_v, a->int_v < 0);
    else if (a->has_dbl) write_double(o, a->dbl);
    else if (a->str) tl_buf_json_str(o, (const char *)a->str, pf_strlen(a->str, a->str_n));
    else if (a->has_str_iid && (s = intern_get(r, IT_ASTR, a->str_iid)))
        tl_buf_json_str(o, ent_text(r, s), s->len);
    else if (a->has_ptr) tl_buf_printf(o, "\"0x%" PRIx64 "\"", a->ptr);
    else if (a->legacy) tl_buf_append(o, a->legacy, pf_strlen(a->legacy, a->legacy_n));
    else if (a->ndict || a->narray) return write_nested(r, a, o, depth, err);
    else tl_buf_puts(o, "null");
    return 0;
}

/* The `"name":` text of an annotation's key into o, and its promoted
 * column; 0 when the annotation has no name (it is left out). */
static int put_key(pf_reader *r, const pf_annot *a, tl_buf *o, uint8_t *promo)
{
    if (a->name) {
        size_t n = pf_strlen(a->name, a->name_n);
        char k[32];
        *promo = PR_NONE;
        if (n < sizeof k) {
            memcpy(k, a->name, n);
            k[n] = '\0';
            *promo = promote_code(k);
        }
        tl_buf_json_str(o, (const char *)a->name, n);
        tl_buf_putc_fast(o, ':');
        return 1;
    }
    intern_ent *e = a->has_name_iid ? intern_get(r, IT_ANAME, a->name_iid) : NULL;
    if (!e) return 0;
    if (!e->key) { /* first use: its JSON key, kept in the pool */
        /* The key is written from the pool's own text, so the pool grows
         * first (at most 6 bytes a byte, quotes and ':') and the text is
         * not moved while it is read. */
        tl_buf_reserve(&r->pool, 6 * (size_t)e->len + 3);
        size_t at = r->pool.n;
        tl_buf_json_str(&r->pool, ent_text(r, e), e->len);
        tl_buf_putc(&r->pool, ':');
        e->key = (uint32_t)at;
        e->key_len = (uint16_t)(r->pool.n - at < UINT16_MAX ? r->pool.n - at : 0);
        e->promo = promote_code(ent_text(r, e));
        if (!e->key_len) { /* too long to keep: written each time */
            e->key = 0;
            r->pool.n = at;
            tl_buf_json_str(o, ent_text(r, e), e->len);
            tl_buf_putc_fast(o, ':');
            *promo = e->promo;
            return 1;
        }
    }
    tl_buf_append(o, r->pool.p + e->key, e->key_len);
    *promo = e->promo;
    return 1;
}

/* The common annotation, an interned name and an integer (fields 1, then
 * 3 or 4, nothing else), written as a member of o without unpacking it;
 * 0 when the annotation is any other (write_members writes it). */
static int write_int_member(pf_reader *r, const unsigned char *s, size_t n, tl_buf *o, size_t start,
                            tl_ev_in *promo)
{
    const unsigned char *p = s, *end = s + n;
    uint64_t iid, v;
    if (n < 4 || *p++ != (DA_NAME_IID << 3 | PF_VARINT) || pf_varint(&p, end, &iid) || p >= end) return 0;
    unsigned tag = *p++;
    if ((tag != (DA_UINT << 3 | PF_VARINT) && tag != (DA_INT << 3 | PF_VARINT)) || pf_varint(&p, end, &v) ||
        p != end)
        return 0;
    intern_ent *e = intern_get(r, IT_ANAME, iid);
    if (!e || !e->key) return 0; /* unknown name, or its key not made yet */
    tl_buf_reserve(o, e->key_len + 24);
    if (o->n > start || (promo && o->n > 1)) o->p[o->n++] = ',';
    memcpy(o->p + o->n, r->pool.p + e->key, e->key_len);
    o->n += e->key_len;
    size_t v0 = o->n;
    int is_int = tag == (DA_INT << 3 | PF_VARINT), neg = is_int && (int64_t)v < 0;
    put_u64(o, neg ? 0 - v : v, neg);
    if (!promo || e->promo == PR_NONE) return 1;
    int64_t *iv = promo_int(promo, e->promo);
    if (iv) *iv = is_int || v <= (uint64_t)INT64_MAX ? (int64_t)v : TL_NONE; /* as promote() reads its text */
    else promote(r, promo, e->promo, o->p + v0, o->n - v0);
    return 1;
}

/* "name":value members of the annotations in field `field` of message
 * s[0..n) (a TrackEvent's debug_annotations, a DebugAnnotation's
 * dict_entries), comma-separated, appended to o; annotations without a
 * name are left out. promo: the event whose promoted columns top-level
 * members fill; o is then its args so far, '{' and members. */
static int write_members(pf_reader *r, const unsigned char *s, size_t n, unsigned field, tl_buf *o,
                         tl_ev_in *promo, int depth, tl_err *err)
{
    size_t start = o->n;
    WALK_INIT(s, n);
    while ((rc = pf_next(&p, end, &f)) == 1) {
        if (f.num != field) continue;
        if (write_int_member(r, f.s, f.n, o, start, promo)) continue;
        pf_annot a;
        int e = read_annot(r, f.s, f.n, &a, err);
        if (e) return e;
        size_t k0 = o->n;
        if (o->n > start || (promo && o->n > 1)) tl_buf_putc_fast(o, ',');
        uint8_t code;
        if (!put_key(r, &a, o, &code)) {
            o->n = k0;
            continue;
        }
        size_t v0 = o->n;
        if ((e = write_value(r, &a, o, depth, err))) return e;
        if (promo && code != PR_NONE) promote(r, promo, code, o->p + v0, o->n - v0);
    }
    return walk_done(r, err, rc, p, field == TE_ANNOTS ? "TrackEvent" : "DebugAnnotation");
}

/* ------------------------------------------------------------ track events */

/* A TrackEvent's single fields; the repeated ones are walked again. */
typedef struct pf_event {
    const unsigned char *bytes, *name;
    size_t n, name_n;
    uint64_t name_iid, uuid, cat_iid; /* cat_iid: the first category iid */
    int type;
    uint8_t has_name_iid, has_type;
    uint32_t ncats, ncat_iids;
} pf_event;

/* Counts a packed run of category iids (validating it), keeping the first. */
static int packed_iids(pf_reader *r, const pf_field *f, pf_event *ev, tl_err *err)
{
    const unsigned char *q = f->s, *e = f->s + f->n;
    while (q < e) {
        uint64_t v;
        int rc = pf_varint(&q, e, &v);
        if (rc) return wire_fail(r, err, rc, q, "packed TrackEvent.category_iids");
        if (!ev->ncat_iids++) ev->cat_iid = v;
    }
    return 0;
}

static int read_event(pf_reader *r, const unsigned char *s, size_t n, pf_event *ev, tl_err *err)
{
    memset(ev, 0, sizeof *ev);
    ev->bytes = s;
    ev->n = n;
    WALK_INIT(s, n);
    while ((rc = pf_next(&p, end, &f)) == 1) {
        switch (f.num) {
        case TE_CAT_IIDS:
            if (f.wt == PF_LEN) {
                int e = packed_iids(r, &f, ev, err);
                if (e) return e;
                break;
            }
            if (f.wt != PF_VARINT) return type_fail(r, err, &f, "TrackEvent", PF_VARINT);
            if (!ev->ncat_iids++) ev->cat_iid = f.v;
            break;
        case TE_TYPE:
        case TE_NAME_IID:
        case TE_TRACK:
            if (f.wt != PF_VARINT) return type_fail(r, err, &f, "TrackEvent", PF_VARINT);
            if (f.num == TE_TYPE) ev->type = (int32_t)(uint32_t)f.v, ev->has_type = 1;
            else if (f.num == TE_NAME_IID) ev->name_iid = f.v, ev->has_name_iid = 1;
            else ev->uuid = f.v;
            break;
        case TE_ANNOTS:
        case TE_CATS:
        case TE_NAME:
            if (f.wt != PF_LEN) return type_fail(r, err, &f, "TrackEvent", PF_LEN);
            if (f.num == TE_CATS) ev->ncats++;
            if (f.num == TE_NAME) ev->name = f.s, ev->name_n = f.n;
            break;
        }
    }
    return walk_done(r, err, rc, p, "TrackEvent");
}

/* Category text of an event (its categories, then its interned
 * categories, joined by ","), 0 when it has none; *kind from it. */
static uint32_t event_cat(pf_reader *r, const pf_event *ev, uint8_t *kind)
{
    *kind = TL_K_OTHER;
    if (!ev->ncats && ev->ncat_iids == 1) { /* the common case: one interned category */
        intern_ent *c = intern_get(r, IT_CAT, ev->cat_iid);
        if (!c) return 0;
        if (!c->sid) {
            c->sid = tl_build_str(r->b, ent_text(r, c), c->len);
            c->kind = (uint8_t)tl_kind_from_cat(ent_text(r, c), c->len);
        }
        *kind = c->kind;
        return c->sid;
    }
    tl_buf *t = &r->tmp;
    t->n = 0;
    size_t parts = 0;
    WALK_INIT(ev->bytes, ev->n);
    while ((rc = pf_next(&p, end, &f)) == 1) /* validated by read_event */
        if (f.num == TE_CATS) {
            if (parts++) tl_buf_putc(t, ',');
            tl_buf_append(t, f.s, pf_strlen(f.s, f.n));
        }
    p = ev->bytes;
    while ((rc = pf_next(&p, end, &f)) == 1) {
        if (f.num != TE_CAT_IIDS) continue;
        const unsigned char *q = f.wt == PF_LEN ? f.s : NULL, *qe = q ? f.s + f.n : NULL;
        uint64_t iid = f.v;
        while (!q || q < qe) {
            if (q && pf_varint(&q, qe, &iid)) break;
            const intern_ent *c = intern_get(r, IT_CAT, iid);
            if (c) {
                if (parts++) tl_buf_putc(t, ',');
                tl_buf_append(t, ent_text(r, c), c->len);
            }
            if (!q) break;
        }
    }
    if (!parts) return 0;
    uint32_t id = tl_build_str(r->b, t->p ? t->p : "", t->n);
    *kind = (uint8_t)tl_kind_from_cat(t->p ? t->p : "", t->n);
    return id;
}

static uint32_t event_name(pf_reader *r, const pf_event *ev)
{
    if (ev->name) return tl_build_str(r->b, (const char *)ev->name, pf_strlen(ev->name, ev->name_n));
    intern_ent *c = ev->has_name_iid ? intern_get(r, IT_NAME, ev->name_iid) : NULL;
    if (!c) return 1; /* no name: "" as for JSON */
    if (!c->sid) c->sid = tl_build_str(r->b, ent_text(r, c), c->len);
    return c->sid;
}

static int32_t slice_new(pf_reader *r)
{
    if (r->free_slice >= 0) {
        int32_t s = r->free_slice;
        r->free_slice = r->slices[s].prev;
        return s;
    }
    if (r->nslices == r->cap_slices) {
        r->cap_slices = r->cap_slices ? 2 * r->cap_slices : 64;
        r->slices = tl_xrealloc(r->slices, r->cap_slices * sizeof *r->slices);
    }
    memset(&r->slices[r->nslices], 0, sizeof *r->slices);
    return (int32_t)r->nslices++;
}

static int slice_begin(pf_reader *r, int64_t ts, const pf_event *ev, tl_err *err)
{
    int32_t si = slice_new(r);
    track *t = track_get(r, ev->uuid, 1);
    slice *s = &r->slices[si];
    tl_ev_in *e = &s->ev;
    memset(e, 0, sizeof *e);
    e->corr = e->ext_id = e->stream = e->device = e->seq = e->fwd_tid = TL_NONE;
    e->ts = ts;
    track_ids(r, t, &e->pid, &e->tid);
    e->name = event_name(r, ev);
    e->cat = event_cat(r, ev, &e->kind);
    s->args.n = 0;
    tl_buf_putc(&s->args, '{');
    s->prev = t->top;
    t->top = si;
    return write_members(r, ev->bytes, ev->n, TE_ANNOTS, &s->args, e, 0, err);
}

/* Closes the innermost open slice of the event's track (an end without
 * an open slice is ignored) and hands it to the builder. */
static int slice_end(pf_reader *r, int64_t ts, const pf_event *ev, tl_err *err)
{
    track *t = track_get(r, ev->uuid, 0);
    if (!t || t->top < 0) return 0;
    int32_t si = t->top;
    slice *s = &r->slices[si];
    t->top = s->prev;
    int rc = write_members(r, ev->bytes, ev->n, TE_ANNOTS, &s->args, &s->ev, 0, err);
    if (rc) return rc;
    if (ts < s->ev.ts) return fail(r, err, "slice ends before it begins (SLICE_END timestamp < SLICE_BEGIN's)");
    s->ev.dur = ts - s->ev.ts;
    if (s->args.n > 1) { /* members after the '{' */
        tl_buf_putc_fast(&s->args, '}');
        s->ev.args = s->args.p;
        s->ev.args_len = s->args.n;
    }
    s->ev.uid = r->uid++;
    tl_build_event(r->b, &s->ev);
    s->prev = r->free_slice;
    r->free_slice = si;
    return 0;
}

/* ------------------------------------------------------------ packets */

/* A TracePacket's fields (the last of each that occurs). */
typedef struct pf_packet {
    uint64_t ts;
    uint32_t seq;
    uint8_t has_ts, cleared;
    pf_field te, interned, track; /* num 0: absent */
} pf_packet;

static int read_packet(pf_reader *r, const unsigned char *s, size_t n, pf_packet *pk, tl_err *err)
{
    uint64_t flags = 0;
    int cleared = 0;
    memset(pk, 0, sizeof *pk);
    WALK_INIT(s, n);
    while ((rc = pf_next(&p, end, &f)) == 1) {
        switch (f.num) {
        case TP_TIMESTAMP:
        case TP_SEQ_ID:
        case TP_SEQ_FLAGS:
        case TP_CLEARED:
            if (f.wt != PF_VARINT) return type_fail(r, err, &f, "TracePacket", PF_VARINT);
            if (f.num == TP_TIMESTAMP) pk->ts = f.v, pk->has_ts = 1;
            else if (f.num == TP_SEQ_ID) pk->seq = (uint32_t)f.v;
            else if (f.num == TP_SEQ_FLAGS) flags = f.v;
            else cleared = f.v != 0;
            break;
        case TP_TRACK_EVENT:
        case TP_INTERNED:
        case TP_TRACK_DESC:
            if (f.wt != PF_LEN) return type_fail(r, err, &f, "TracePacket", PF_LEN);
            *(f.num == TP_TRACK_EVENT ? &pk->te : f.num == TP_INTERNED ? &pk->interned : &pk->track) = f;
            break;
        }
    }
    pk->cleared = (uint8_t)((flags & 1) || cleared); /* SEQ_INCREMENTAL_STATE_CLEARED */
    return walk_done(r, err, rc, p, "TracePacket");
}

static int take_event(pf_reader *r, const pf_packet *pk, tl_err *err)
{
    pf_event ev;
    int rc = read_event(r, pk->te.s, pk->te.n, &ev, err);
    if (rc) return rc;
    int type = ev.has_type ? ev.type : 0;
    if (type != TYPE_SLICE_BEGIN && type != TYPE_SLICE_END) {
        tl_build_other(r->b, r->uid++, type == TYPE_COUNTER ? 'C' : 'i');
        return 0;
    }
    if (!pk->has_ts) return fail(r, err, "track event without a timestamp (TracePacket.timestamp)");
    if (pk->ts > (uint64_t)INT64_MAX) return fail(r, err, "timestamp out of range (over 2^63 - 1 ns)");
    if (type == TYPE_SLICE_END) return slice_end(r, (int64_t)pk->ts, &ev, err);
    return slice_begin(r, (int64_t)pk->ts, &ev, err);
}

/* One TracePacket's bytes. */
static int take_packet(pf_reader *r, const unsigned char *p, size_t n, tl_err *err)
{
    pf_packet pk;
    int rc = read_packet(r, p, n, &pk, err);
    if (rc) return rc;
    if (pk.cleared) {
        size_t *g = tl_imap_put(&r->seq_gen, pk.seq, NULL);
        ++*g; /* interned data of earlier generations is no longer found */
    }
    set_sequence(r, pk.seq);
    if (pk.interned.num && (rc = take_interned(r, pk.interned.s, pk.interned.n, err))) return rc;
    if (pk.track.num && (rc = take_track(r, pk.track.s, pk.track.n, err))) return rc;
    return pk.te.num ? take_event(r, &pk, err) : 0;
}

/* Reads the next packet header at window offset *pos: 0 and the packet's
 * span, 1 when the window ends first, or TL_EFORMAT. */
static int packet_span(pf_reader *r, const unsigned char *w, size_t len, size_t *pos, size_t *plen,
                       tl_err *err)
{
    const unsigned char *q = w + *pos, *end = w + len;
    uint64_t tag, n;
    int st = pf_varint(&q, end, &tag);
    if (st == PF_E_VARINT_CUT) return 1;
    if (st) return fail(r, err, "malformed varint (more than 10 bytes; expected a Trace field tag)");
    if (tag != 0x0a) {
        char msg[128];
        snprintf(msg, sizeof msg, "expected a TracePacket (Trace field 1, length-delimited), found field %" PRIu64
                 " wire type %u", tag >> 3, (unsigned)(tag & 7));
        return fail(r, err, msg);
    }
    st = pf_varint(&q, end, &n);
    if (st == PF_E_VARINT_CUT) return 1;
    if (st) return fail(r, err, "malformed varint (more than 10 bytes; expected a TracePacket length)");
    if (n > (uint64_t)(end - q)) return 1;
    *pos = (size_t)(q - w);
    *plen = (size_t)n;
    return 0;
}

static int read_packets(pf_reader *r, tl_source *src, tl_err *err)
{
    const char *buf;
    size_t len;
    uint64_t base;
    int eof = 0, rc;
    uint64_t off = 0, released = 0;
    for (;;) {
        if ((rc = tl_source_window(src, off, &buf, &len, &base, &eof, err))) return rc;
        const unsigned char *w = (const unsigned char *)buf;
        size_t pos = (size_t)(off - base), plen = 0;
        while (pos < len) {
            r->off = base + pos;
            r->pkt = w + pos;
            rc = packet_span(r, w, len, &pos, &plen, err);
            if (rc < 0) return rc;
            if (rc == 1) break;
            if ((rc = take_packet(r, w + pos, plen, err))) return rc;
            pos += plen;
            off = base + pos;
            if (off - released >= (1u << 20)) {
                if ((rc = tl_source_release(src, off))) return rc;
                released = off;
            }
        }
        if ((rc = tl_source_release(src, off))) return rc;
        if (eof && pos == len) return 0;
        if (eof) {
            r->off = off;
            r->pkt = NULL;
            return fail(r, err, "truncated TracePacket (the file ends inside it)");
        }
    }
}

static int parse_source(tl_source *src, const char *path, tl_build *b, tl_err *err)
{
    pf_reader r;
    reader_init(&r, b, path);
    tl_build_set_format(b, "kineto"); /* the tree rules of its traceEvents JSON form */
    tl_build_select_args(b);
    int rc = read_packets(&r, src, err);
    reader_free(&r);
    return rc;
}

int tl_read_pftrace(tl_source *src, const char *path, tl_build *b, tl_err *err)
{
    return parse_source(src, path, b, err);
}

int tl_pftrace_parse_buf(const void *buf, size_t len, const char *path, tl_build *b, tl_err *err)
{
    tl_source *src;
    int rc = tl_source_open_mem(buf, len, path, &src, err);
    if (rc) return rc;
    rc = parse_source(src, path, b, err);
    tl_source_close(src);
    return rc;
}
