/* pftrace.c — the Perfetto trace reader (pftrace.h says what it stores).
 * The Trace's packets are read one at a time from the source window (the
 * input is never whole in memory), each checked for nesting depth and
 * unpacked by protobuf-c; slices are matched begin/end per track. */
#include "ingest/pftrace.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/ingest.h"
#include "ingest/source.h"
#include "pftrace.pb-c.h"

/* Nested debug annotations deeper than this are refused: protobuf-c and
 * the args writer recurse once per level. */
#define PF_MAX_DEPTH 64
/* Parent links followed to find a track's process. */
#define PF_MAX_ANCESTORS 64

/* ------------------------------------------------------------ wire level */

/* Reads a varint at p[*pos..n); 0 ok, 1 cut off by n, -1 malformed. */
static int rd_varint(const unsigned char *p, size_t n, size_t *pos, uint64_t *v)
{
    uint64_t acc = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
        if (*pos >= n) return 1;
        unsigned char c = p[(*pos)++];
        acc |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80)) {
            *v = acc;
            return 0;
        }
    }
    return -1;
}

/* Skips one field's value of wire type wt; 0 ok, nonzero malformed or cut. */
static int skip_value(const unsigned char *p, size_t n, size_t *pos, unsigned wt)
{
    uint64_t v;
    switch (wt) {
    case 0: return rd_varint(p, n, pos, &v) != 0;
    case 1: if (n - *pos < 8) return 1; *pos += 8; return 0;
    case 5: if (n - *pos < 4) return 1; *pos += 4; return 0;
    case 2:
        if (rd_varint(p, n, pos, &v) || v > n - *pos) return 1;
        *pos += (size_t)v;
        return 0;
    default: return 1;
    }
}

int tl_pftrace_sniff(const char *head, size_t n)
{
    const unsigned char *p = (const unsigned char *)head;
    size_t pos = 1;
    uint64_t len, tag;
    if (n < 3 || p[0] != 0x0a) return 0;
    if (rd_varint(p, n, &pos, &len) || len == 0) return 0;
    size_t end = len < n - pos ? pos + (size_t)len : n;
    while (pos < end) {
        if (rd_varint(p, end, &pos, &tag)) return 0;
        unsigned field = (unsigned)(tag >> 3), wt = (unsigned)(tag & 7);
        if (field == 0 || (wt != 0 && wt != 1 && wt != 2 && wt != 5)) return 0;
        if (field >= 8) return 1;
        if (skip_value(p, end, &pos, wt)) return 0;
    }
    return 0;
}

/* Depth of nested DebugAnnotation dict_entries (11) / array_values (12) in
 * the annotation bytes p[0..n): 0 when within limit, else nonzero. Other
 * length-delimited fields are strings or bytes and are not entered. */
static int annot_too_deep(const unsigned char *p, size_t n, int depth)
{
    if (depth > PF_MAX_DEPTH) return 1;
    size_t pos = 0;
    uint64_t tag, len;
    while (pos < n) {
        if (rd_varint(p, n, &pos, &tag)) return 0; /* malformed: protobuf-c says so */
        unsigned field = (unsigned)(tag >> 3), wt = (unsigned)(tag & 7);
        if (wt == 2 && (field == 11 || field == 12)) {
            if (rd_varint(p, n, &pos, &len) || len > n - pos) return 0;
            if (annot_too_deep(p + pos, (size_t)len, depth + 1)) return 1;
            pos += (size_t)len;
        } else if (skip_value(p, n, &pos, wt)) {
            return 0;
        }
    }
    return 0;
}

/* Walks `field` (length-delimited) of the message p[0..n) and calls fn on
 * each occurrence's bytes; returns the first nonzero fn result. */
static int each_field(const unsigned char *p, size_t n, unsigned want, int depth,
                      int (*fn)(const unsigned char *, size_t, int))
{
    size_t pos = 0;
    uint64_t tag, len;
    while (pos < n) {
        if (rd_varint(p, n, &pos, &tag)) return 0;
        unsigned field = (unsigned)(tag >> 3), wt = (unsigned)(tag & 7);
        if (wt == 2 && field == want) {
            if (rd_varint(p, n, &pos, &len) || len > n - pos) return 0;
            int rc = fn(p + pos, (size_t)len, depth);
            if (rc) return rc;
            pos += (size_t)len;
        } else if (skip_value(p, n, &pos, wt)) {
            return 0;
        }
    }
    return 0;
}

static int event_too_deep(const unsigned char *p, size_t n, int depth)
{
    return each_field(p, n, 4, depth, annot_too_deep); /* TrackEvent.debug_annotations */
}

/* A packet's TrackEvent (field 11) nests its annotations too deeply. */
static int packet_too_deep(const unsigned char *p, size_t n)
{
    return each_field(p, n, 11, 0, event_too_deep);
}

/* ------------------------------------------------------------ reader state */

enum { IT_CAT = 1, IT_NAME = 2, IT_ANAME = 3, IT_ASTR = 4 };

typedef struct intern_key {
    uint32_t seq, gen, table, pad;
    uint64_t iid;
} intern_key;

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

/* protobuf-c's allocations for one packet: bumped from one block, all
 * dropped at once when the packet is done (no per-object malloc/free, no
 * walk of the message to free it). A packet that outgrows the block
 * takes extra blocks, and the block is regrown to cover them. */
typedef struct pkt_arena {
    char *base;
    size_t cap, used, overflow;
    void **extra;
    size_t nextra, capextra;
} pkt_arena;

static void *pkt_alloc(void *data, size_t size)
{
    pkt_arena *a = data;
    size = (size + 15) & ~(size_t)15;
    if (size <= a->cap - a->used) {
        void *p = a->base + a->used;
        a->used += size;
        return p;
    }
    if (a->nextra == a->capextra) a->extra = tl_xrealloc(a->extra, (a->capextra = a->capextra * 2 + 8) * sizeof *a->extra);
    a->overflow += size;
    return a->extra[a->nextra++] = tl_xmalloc(size);
}

static void pkt_free(void *data, void *p)
{
    (void)data;
    (void)p; /* the whole arena is reset after the packet */
}

static void pkt_reset(pkt_arena *a)
{
    for (size_t i = 0; i < a->nextra; i++) free(a->extra[i]);
    a->nextra = 0;
    if (a->overflow) {
        size_t want = 2 * (a->cap + a->overflow);
        free(a->base);
        a->base = tl_xmalloc(want);
        a->cap = want;
    }
    a->used = a->overflow = 0;
}

/* Interned texts of one sequence by small iid (pool offsets, 0 unknown):
 * the lookups of every annotation name without hashing. */
#define PF_CACHE_IIDS 1024
typedef struct intern_cache {
    uint32_t seq, gen;
    int valid;
    size_t off[5][PF_CACHE_IIDS];
} intern_cache;

typedef struct pf_reader {
    tl_build *b;
    intern_cache *cache;
    pkt_arena pkt;
    ProtobufCAllocator alloc;
    const char *path;
    uint64_t off; /* byte offset of the packet being read */
    tl_bmap interned;
    tl_buf pool;  /* interned texts, NUL-terminated; values of `interned` are offsets */
    tl_imap seq_gen;
    tl_imap track_of; /* uuid -> index in tracks */
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
    r->cache = tl_xcalloc(1, sizeof *r->cache);
    r->pkt.cap = 1 << 16;
    r->pkt.base = tl_xmalloc(r->pkt.cap);
    r->alloc = (ProtobufCAllocator){pkt_alloc, pkt_free, &r->pkt};
    tl_buf_putc(&r->pool, '\0'); /* offset 0: absent */
}

static void reader_free(pf_reader *r)
{
    free(r->cache);
    pkt_reset(&r->pkt);
    free(r->pkt.base);
    free(r->pkt.extra);
    tl_bmap_free(&r->interned);
    tl_imap_free(&r->seq_gen);
    tl_imap_free(&r->track_of);
    free(r->tracks);
    for (size_t i = 0; i < r->nslices; i++) tl_buf_free(&r->slices[i].args);
    free(r->slices);
    tl_buf_free(&r->pool);
    tl_buf_free(&r->tmp);
}

static int fail(pf_reader *r, tl_err *err, const char *what)
{
    return tl_errf(err, TL_EFORMAT, "%s: byte %" PRIu64 ": %s", r->path, r->off, what);
}

/* ------------------------------------------------------------ interning */

static uint32_t seq_generation(pf_reader *r, uint32_t seq)
{
    size_t *g = tl_imap_get(&r->seq_gen, seq);
    return g ? (uint32_t)*g : 0;
}

static void intern_put(pf_reader *r, uint32_t seq, uint32_t table, uint64_t iid, const char *s, size_t n)
{
    intern_key k = {seq, seq_generation(r, seq), table, 0, iid};
    int isnew;
    size_t *slot = tl_bmap_put(&r->interned, &k, &isnew);
    *slot = r->pool.n;
    if (iid < PF_CACHE_IIDS && r->cache->valid && r->cache->seq == seq && r->cache->gen == k.gen)
        r->cache->off[table][iid] = r->pool.n;
    tl_buf_append(&r->pool, s, n);
    tl_buf_putc(&r->pool, '\0');
}

/* Interned text, or NULL when the sequence has no such iid. */
static const char *intern_get(pf_reader *r, uint32_t seq, uint32_t table, uint64_t iid)
{
    uint32_t gen = seq_generation(r, seq);
    intern_cache *c = r->cache;
    if (!c->valid || c->seq != seq || c->gen != gen) {
        memset(c, 0, sizeof *c);
        c->seq = seq;
        c->gen = gen;
        c->valid = 1;
    }
    if (iid < PF_CACHE_IIDS && c->off[table][iid]) return r->pool.p + c->off[table][iid];
    intern_key k = {seq, gen, table, 0, iid};
    int isnew;
    size_t *slot = tl_bmap_put(&r->interned, &k, &isnew);
    if (isnew || !*slot) return NULL; /* a miss is left as the absent offset 0 */
    if (iid < PF_CACHE_IIDS) c->off[table][iid] = *slot;
    return r->pool.p + *slot;
}

static void take_interned(pf_reader *r, uint32_t seq, const Tlpf__InternedData *d)
{
    for (size_t i = 0; i < d->n_event_categories; i++) {
        const Tlpf__EventCategory *c = d->event_categories[i];
        if (c->name) intern_put(r, seq, IT_CAT, c->iid, c->name, strlen(c->name));
    }
    for (size_t i = 0; i < d->n_event_names; i++) {
        const Tlpf__EventName *c = d->event_names[i];
        if (c->name) intern_put(r, seq, IT_NAME, c->iid, c->name, strlen(c->name));
    }
    for (size_t i = 0; i < d->n_debug_annotation_names; i++) {
        const Tlpf__DebugAnnotationName *c = d->debug_annotation_names[i];
        if (c->name) intern_put(r, seq, IT_ANAME, c->iid, c->name, strlen(c->name));
    }
    for (size_t i = 0; i < d->n_debug_annotation_string_values; i++) {
        const Tlpf__InternedString *c = d->debug_annotation_string_values[i];
        if (c->has_str) intern_put(r, seq, IT_ASTR, c->iid, (const char *)c->str.data, c->str.len);
    }
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

static void meta_name(pf_reader *r, const char *what, const char *name, int64_t pid, int64_t tid, int has_tid)
{
    tl_buf_free(&r->tmp);
    tl_buf_puts(&r->tmp, "{\"name\":");
    tl_buf_json_str(&r->tmp, name, strlen(name));
    tl_buf_putc(&r->tmp, '}');
    uint32_t nm = tl_build_str(r->b, what, strlen(what));
    tl_build_meta(r->b, r->uid++, nm, pid, tid, 0, 0, (uint8_t)has_tid, r->tmp.p, r->tmp.n);
}

static void take_track(pf_reader *r, const Tlpf__TrackDescriptor *d)
{
    if (!d->has_uuid) return;
    track *t = track_get(r, d->uuid, 1);
    if (d->has_parent_uuid) {
        t->parent = d->parent_uuid;
        t->has_parent = 1;
    }
    if (d->thread) {
        t->kind = 2;
        t->pid = d->thread->pid;
        t->tid = d->thread->tid;
        if (d->thread->thread_name) meta_name(r, "thread_name", d->thread->thread_name, t->pid, t->tid, 1);
    } else if (d->process) {
        t->kind = 1;
        t->pid = d->process->pid;
        t->tid = 0;
        if (d->process->process_name) meta_name(r, "process_name", d->process->process_name, t->pid, 0, 0);
    }
}

/* pid/tid of an event on track uuid (pftrace.h). */
static void track_ids(pf_reader *r, uint64_t uuid, int64_t *pid, int64_t *tid)
{
    *pid = *tid = 0;
    track *t = track_get(r, uuid, 0);
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

/* The integer a promoted value's text spells, as the Kineto reader reads
 * promoted args: decimal or 0x-hex with an optional '-', an integer JSON
 * number or a string holding one; 0 when it is anything else. */
static int int_text(const char *s, size_t n, int64_t *v)
{
    if (n >= 2 && s[0] == '"' && s[n - 1] == '"') {
        s++;
        n -= 2;
    }
    return tl_parse_int_text(s, n, v);
}

/* The promoted columns of one args member, named as the Kineto reader
 * promotes them (corr_id being rocprofv3's correlation id). */
static void promote(pf_reader *r, tl_ev_in *e, const char *key, const char *v, size_t n)
{
    int64_t *iv = NULL;
    uint32_t *tv = NULL;
    if (!strchr("cdsEFSgbIO", key[0])) return; /* no promoted key starts otherwise */
    if (!strcmp(key, "corr_id") || !strcmp(key, "correlation")) iv = &e->corr;
    else if (!strcmp(key, "stream")) iv = &e->stream;
    else if (!strcmp(key, "device")) iv = &e->device;
    else if (!strcmp(key, "External id")) iv = &e->ext_id;
    else if (!strcmp(key, "Fwd thread id")) iv = &e->fwd_tid;
    else if (!strcmp(key, "Sequence number")) iv = &e->seq;
    else if (!strcmp(key, "grid")) tv = &e->grid;
    else if (!strcmp(key, "block")) tv = &e->block;
    else if (!strcmp(key, "Input Dims")) tv = &e->in_dims;
    else if (!strcmp(key, "Input type")) tv = &e->in_type;
    else if (!strcmp(key, "Input Strides")) tv = &e->in_strides;
    else if (!strcmp(key, "Concrete Inputs")) tv = &e->concrete;
    else if (!strcmp(key, TL_ARG_OUTPUT_TYPE)) e->args_sel = 1;
    if (iv && !int_text(v, n, iv)) *iv = TL_NONE;
    if (tv) *tv = tl_build_str(r->b, v, n);
}

static const char *annot_name(pf_reader *r, uint32_t seq, const Tlpf__DebugAnnotation *a)
{
    if (a->name) return a->name;
    return a->has_name_iid ? intern_get(r, seq, IT_ANAME, a->name_iid) : NULL;
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

static void write_members(pf_reader *r, uint32_t seq, Tlpf__DebugAnnotation **a, size_t n, tl_buf *o,
                          tl_ev_in *promo);

/* Decimal text of v (with '-' when neg). */
static void put_u64(tl_buf *o, uint64_t v, int neg)
{
    char t[24];
    size_t i = sizeof t;
    do t[--i] = (char)('0' + v % 10); while (v /= 10);
    if (neg) t[--i] = '-';
    tl_buf_append(o, t + i, sizeof t - i);
}

/* The JSON text of an annotation's value (pftrace.h). */
static void write_value(pf_reader *r, uint32_t seq, const Tlpf__DebugAnnotation *a, tl_buf *o)
{
    const char *s;
    if (a->has_bool_value) tl_buf_puts(o, a->bool_value ? "true" : "false");
    else if (a->has_uint_value) put_u64(o, a->uint_value, 0);
    else if (a->has_int_value) put_u64(o, a->int_value < 0 ? 0 - (uint64_t)a->int_value : (uint64_t)a->int_value,
                                       a->int_value < 0);
    else if (a->has_double_value) write_double(o, a->double_value);
    else if (a->string_value) tl_buf_json_str(o, a->string_value, strlen(a->string_value));
    else if (a->has_string_value_iid && (s = intern_get(r, seq, IT_ASTR, a->string_value_iid)))
        tl_buf_json_str(o, s, strlen(s));
    else if (a->has_pointer_value) tl_buf_printf(o, "\"0x%" PRIx64 "\"", a->pointer_value);
    else if (a->legacy_json_value) tl_buf_puts(o, a->legacy_json_value);
    else if (a->n_dict_entries) {
        tl_buf_putc(o, '{');
        write_members(r, seq, a->dict_entries, a->n_dict_entries, o, NULL);
        tl_buf_putc(o, '}');
    } else if (a->n_array_values) {
        tl_buf_putc(o, '[');
        for (size_t i = 0; i < a->n_array_values; i++) {
            if (i) tl_buf_putc(o, ',');
            write_value(r, seq, a->array_values[i], o);
        }
        tl_buf_putc(o, ']');
    } else {
        tl_buf_puts(o, "null");
    }
}

/* "name":value members, comma-separated, appended to o (after a comma
 * when o already holds members); annotations without a name are left out.
 * promo: the event whose promoted columns top-level members fill. */
static void write_members(pf_reader *r, uint32_t seq, Tlpf__DebugAnnotation **a, size_t n, tl_buf *o,
                          tl_ev_in *promo)
{
    size_t start = o->n;
    for (size_t i = 0; i < n; i++) {
        const char *key = annot_name(r, seq, a[i]);
        if (!key) continue;
        if (o->n > start || (promo && o->n)) tl_buf_putc(o, ',');
        tl_buf_json_str(o, key, strlen(key));
        tl_buf_putc(o, ':');
        size_t v0 = o->n;
        write_value(r, seq, a[i], o);
        if (promo) promote(r, promo, key, o->p + v0, o->n - v0);
    }
}

/* ------------------------------------------------------------ slices */

/* Category text of an event (several joined by ","), 0 when it has none. */
static uint32_t event_cat(pf_reader *r, uint32_t seq, const Tlpf__TrackEvent *te)
{
    tl_buf *t = &r->tmp;
    t->n = 0;
    size_t parts = 0;
    for (size_t i = 0; i < te->n_categories; i++, parts++) {
        if (parts) tl_buf_putc(t, ',');
        tl_buf_puts(t, te->categories[i]);
    }
    for (size_t i = 0; i < te->n_category_iids; i++) {
        const char *s = intern_get(r, seq, IT_CAT, te->category_iids[i]);
        if (!s) continue;
        if (parts++) tl_buf_putc(t, ',');
        tl_buf_puts(t, s);
    }
    if (!parts) return 0;
    return tl_build_str(r->b, t->p ? t->p : "", t->n);
}

static uint32_t event_name(pf_reader *r, uint32_t seq, const Tlpf__TrackEvent *te)
{
    const char *s = te->name ? te->name : te->has_name_iid ? intern_get(r, seq, IT_NAME, te->name_iid) : NULL;
    return s ? tl_build_str(r->b, s, strlen(s)) : 1; /* no name: "" as for JSON */
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

static void slice_begin(pf_reader *r, uint32_t seq, int64_t ts, const Tlpf__TrackEvent *te, uint64_t uuid)
{
    int32_t si = slice_new(r);
    track *t = track_get(r, uuid, 1);
    slice *s = &r->slices[si];
    tl_ev_in *e = &s->ev;
    memset(e, 0, sizeof *e);
    e->corr = e->ext_id = e->stream = e->device = e->seq = e->fwd_tid = TL_NONE;
    e->ts = ts;
    track_ids(r, uuid, &e->pid, &e->tid);
    e->name = event_name(r, seq, te);
    e->cat = event_cat(r, seq, te);
    size_t cn = 0;
    const char *ct = e->cat ? tl_build_strget(r->b, e->cat, &cn) : NULL;
    e->kind = ct ? (uint8_t)tl_kind_from_cat(ct, cn) : TL_K_OTHER;
    s->args.n = 0;
    s->prev = t->top;
    t->top = si;
    write_members(r, seq, te->debug_annotations, te->n_debug_annotations, &s->args, e);
}

/* Closes the innermost open slice of track uuid (an end without an open
 * slice is ignored) and hands it to the builder. */
static int slice_end(pf_reader *r, uint32_t seq, int64_t ts, const Tlpf__TrackEvent *te, uint64_t uuid,
                     tl_err *err)
{
    track *t = track_get(r, uuid, 0);
    if (!t || t->top < 0) return 0;
    int32_t si = t->top;
    slice *s = &r->slices[si];
    t->top = s->prev;
    write_members(r, seq, te->debug_annotations, te->n_debug_annotations, &s->args, &s->ev);
    if (ts < s->ev.ts) return fail(r, err, "slice ends before it begins (SLICE_END timestamp < SLICE_BEGIN's)");
    s->ev.dur = ts - s->ev.ts;
    r->tmp.n = 0;
    if (s->args.n) {
        tl_buf_putc(&r->tmp, '{');
        tl_buf_append(&r->tmp, s->args.p, s->args.n);
        tl_buf_putc(&r->tmp, '}');
        s->ev.args = r->tmp.p;
        s->ev.args_len = r->tmp.n;
    }
    s->ev.uid = r->uid++;
    tl_build_event(r->b, &s->ev);
    s->prev = r->free_slice;
    r->free_slice = si;
    return 0;
}

/* ------------------------------------------------------------ packets */

static int take_event(pf_reader *r, const Tlpf__TracePacket *pk, tl_err *err)
{
    const Tlpf__TrackEvent *te = pk->track_event;
    uint32_t seq = pk->trusted_packet_sequence_id;
    int type = te->has_type ? (int)te->type : 0;
    if (type != TLPF__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN && type != TLPF__TRACK_EVENT__TYPE__TYPE_SLICE_END) {
        tl_build_other(r->b, r->uid++, type == TLPF__TRACK_EVENT__TYPE__TYPE_COUNTER ? 'C' : 'i');
        return 0;
    }
    if (!pk->has_timestamp) return fail(r, err, "track event without a timestamp (TracePacket.timestamp)");
    if (pk->timestamp > (uint64_t)INT64_MAX) return fail(r, err, "timestamp out of range (over 2^63 - 1 ns)");
    int64_t ts = (int64_t)pk->timestamp;
    uint64_t uuid = te->has_track_uuid ? te->track_uuid : 0;
    if (type == TLPF__TRACK_EVENT__TYPE__TYPE_SLICE_END) return slice_end(r, seq, ts, te, uuid, err);
    slice_begin(r, seq, ts, te, uuid);
    return 0;
}

/* One TracePacket's bytes. */
static int take_packet(pf_reader *r, const unsigned char *p, size_t n, tl_err *err)
{
    if (n > 2 * PF_MAX_DEPTH && packet_too_deep(p, n)) /* each level takes at least 2 bytes */
        return fail(r, err, "debug annotations nested more than 64 levels deep");
    Tlpf__TracePacket *pk = tlpf__trace_packet__unpack(&r->alloc, n, p);
    if (!pk) pkt_reset(&r->pkt);
    if (!pk) return fail(r, err, "expected a TracePacket; these bytes do not decode as one (corrupt or truncated)");
    uint32_t seq = pk->trusted_packet_sequence_id;
    if ((pk->has_sequence_flags && (pk->sequence_flags & 1)) ||
        (pk->has_incremental_state_cleared && pk->incremental_state_cleared)) {
        int isnew;
        size_t *g = tl_imap_put(&r->seq_gen, seq, &isnew);
        ++*g; /* interned data of earlier generations is no longer found */
    }
    if (pk->interned_data) take_interned(r, seq, pk->interned_data);
    if (pk->track_descriptor) take_track(r, pk->track_descriptor);
    int rc = pk->track_event ? take_event(r, pk, err) : 0;
    pkt_reset(&r->pkt); /* the packet and everything protobuf-c allocated for it */
    return rc;
}

/* Reads the next packet header at window offset *pos: 0 and the packet's
 * span, 1 when the window ends first, or TL_EFORMAT. */
static int packet_span(pf_reader *r, const unsigned char *w, size_t len, size_t *pos, size_t *plen,
                       tl_err *err)
{
    uint64_t tag, n;
    size_t q = *pos;
    int st = rd_varint(w, len, &q, &tag);
    if (st > 0) return 1;
    if (st < 0) return fail(r, err, "malformed varint (expected a Trace field tag)");
    if (tag != 0x0a) {
        char msg[128];
        snprintf(msg, sizeof msg, "expected a TracePacket (Trace field 1, length-delimited), found field %" PRIu64
                 " wire type %u", tag >> 3, (unsigned)(tag & 7));
        return fail(r, err, msg);
    }
    st = rd_varint(w, len, &q, &n);
    if (st > 0) return 1;
    if (st < 0) return fail(r, err, "malformed varint (expected a TracePacket length)");
    if (n > len - q) return 1;
    *pos = q;
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
