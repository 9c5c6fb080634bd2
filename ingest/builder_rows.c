/* builder_rows.c — the main builder's event and flow rows. Each stored
 * column is buffered for one chunk of TL_CHUNK_ROWS rows and handed to the
 * store's writer when the chunk is full (the same chunks as encoding the
 * whole column at the end), so no column is held whole; the tree build
 * keeps what it needs of a row in compact form: the kind and the name's
 * class in one byte, a thread index, ts and dur, the link values of the
 * rows that have one, and the ac2g flows. */
#include "ingest/builder_internal.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

static const struct { const char *name; tl_ctype type; } HOT_DEFS[HOT_N] = {
    [HOT_UID] = {TL_C_UID, TL_CT_U32},   [HOT_TS] = {TL_C_TS, TL_CT_I64},         [HOT_DUR] = {TL_C_DUR, TL_CT_I64},
    [HOT_NAME] = {TL_C_NAME, TL_CT_U32}, [HOT_CAT] = {TL_C_CAT, TL_CT_U32},       [HOT_KIND] = {TL_C_KIND, TL_CT_U8},
    [HOT_PID] = {TL_C_PID, TL_CT_I64},   [HOT_TID] = {TL_C_TID, TL_CT_I64},       [HOT_IDFLAGS] = {TL_C_IDFLAGS, TL_CT_U8},
    [HOT_CORR] = {TL_C_CORR, TL_CT_I64}, [HOT_EXTID] = {TL_C_EXTID, TL_CT_I64},
};
static const struct { const char *name; tl_ctype type; } FHOT_DEFS[FHOT_N] = {
    [FHOT_UID] = {TL_C_UID, TL_CT_U32},  [FHOT_PH] = {TL_C_F_PH, TL_CT_U8},   [FHOT_CAT] = {TL_C_CAT, TL_CT_U32},
    [FHOT_NAME] = {TL_C_NAME, TL_CT_U32}, [FHOT_ID] = {TL_C_F_ID, TL_CT_I64}, [FHOT_PID] = {TL_C_PID, TL_CT_I64},
    [FHOT_TID] = {TL_C_TID, TL_CT_I64},  [FHOT_IDFLAGS] = {TL_C_IDFLAGS, TL_CT_U8}, [FHOT_TS] = {TL_C_TS, TL_CT_I64},
};

void tl_build_rows_init(tl_build *b)
{
    for (int i = 0; i < HOT_N; i++) {
        b->hot[i] = (cold_col){HOT_DEFS[i].name, HOT_DEFS[i].type, NULL, 0};
        b->hot[i].buf = tl_xmalloc((size_t)TL_CHUNK_ROWS * tl_ctype_size(HOT_DEFS[i].type));
    }
    for (int i = 0; i < FHOT_N; i++) {
        b->fhot[i] = (cold_col){FHOT_DEFS[i].name, FHOT_DEFS[i].type, NULL, 0};
        b->fhot[i].buf = tl_xmalloc((size_t)TL_CHUNK_ROWS * tl_ctype_size(FHOT_DEFS[i].type));
    }
    tl_imap_init(&b->thread_ids, 64);
    tl_imap_init(&b->long_dur, 16);
    b->ts_min = b->g_min = INT64_MAX;
    b->ts_max = b->g_max = INT64_MIN;
    b->bad_row = SIZE_MAX;
}

void tl_build_rows_free(tl_build *b)
{
    for (int i = 0; i < HOT_N; i++) {
        free(b->hot[i].buf);
        b->hot[i].buf = NULL;
    }
    for (int i = 0; i < FHOT_N; i++) {
        free(b->fhot[i].buf);
        b->fhot[i].buf = NULL;
    }
    tl_vec_free(&b->cls); tl_vec_free(&b->thr);
    tl_build_times_free(b);
    if (b->thread_ids.cap) tl_imap_free(&b->thread_ids);
    memset(&b->thread_ids, 0, sizeof b->thread_ids);
    tl_vec_free(&b->name_cls); tl_vec_free(&b->cat_ac2g);
    tl_vec_free(&b->kc_row); tl_vec_free(&b->kc_val); tl_vec_free(&b->ke_row); tl_vec_free(&b->ke_val);
    tl_vec_free(&b->a_id); tl_vec_free(&b->a_thr); tl_vec_free(&b->a_ph);
}

void tl_build_times_free(tl_build *b)
{
    tl_vec_free(&b->n_ts);
    tl_vec_free(&b->n_dur);
    if (b->long_dur.cap) tl_imap_free(&b->long_dur);
    memset(&b->long_dur, 0, sizeof b->long_dur);
}

/* Row r of a chunk buffer of type T. */
#define AT(cols, i, T, r) (((T *)(cols)[i].buf)[r])

/* Encodes a set of chunk buffers; cols[0].n counts the rows of all. */
static void flush_set(tl_build *b, cold_col *cols, int n, const char *table)
{
    uint32_t rows = cols[0].n;
    if (!rows) return;
    for (int i = 0; i < n; i++) tl_wtrace_put_chunk(b->w, table, cols[i].name, cols[i].type, cols[i].buf, rows);
    cols[0].n = 0;
}

void tl_build_rows_seal(tl_build *b)
{
    flush_set(b, b->hot, HOT_N, TL_T_EVENTS);
    flush_set(b, b->fhot, FHOT_N, TL_T_FLOWS);
}

/* A (pid, tid) as one hashable value (string ids kept apart by flags). */
static uint64_t thread_key(int64_t pid, int64_t tid, uint8_t flags)
{
    uint64_t h = tl_mix64((uint64_t)pid ^ 0x9e3779b97f4a7c15ULL);
    return tl_mix64(h ^ (uint64_t)tid ^ ((uint64_t)(flags & 3) << 62));
}

uint32_t tl_build_thread(tl_build *b, int64_t pid, int64_t tid, uint8_t idflags)
{
    uint64_t key = thread_key(pid, tid, idflags);
    if (b->nthreads && key == b->last_thread_key) return b->last_thread; /* runs of one thread are common */
    int isnew;
    size_t *slot = tl_imap_put(&b->thread_ids, key, &isnew);
    if (isnew) *slot = b->nthreads++;
    b->last_thread_key = key;
    b->last_thread = (uint32_t)*slot;
    return b->last_thread;
}

static int has_launch(const char *s, size_t n)
{
    for (size_t i = 0; i + 6 <= n; i++)
        if (tolower((unsigned char)s[i]) == 'l' && strncasecmp(s + i, "launch", 6) == 0) return 1;
    return 0;
}

static int is_lit(const char *s, size_t n, const char *lit) { return n == strlen(lit) && !memcmp(s, lit, n); }

/* The CLS_* flags of name id `name`, classified once per id. */
static uint8_t name_flags(tl_build *b, uint32_t name)
{
    if (name < b->name_cls.n && b->name_cls.v[name]) return (uint8_t)(b->name_cls.v[name] & ~CLS_KNOWN);
    while (b->name_cls.n <= name) tl_vec_push(&b->name_cls, 0);
    uint8_t f = b->name_cls.v[name];
    if (!f) {
        size_t n;
        const char *s = tl_build_strget(b, name, &n);
        f = CLS_KNOWN;
        if (has_launch(s, n)) f |= CLS_LAUNCH;
        if (is_lit(s, n, "cudaGraphLaunch") || is_lit(s, n, "hipGraphLaunch")) f |= CLS_GRAPH;
        if (tl_is_comm_kernel_name(s, n)) f |= CLS_COMM;
        if (is_lit(s, n, "execute")) f |= CLS_EXEC;
        b->name_cls.v[name] = f;
    }
    return (uint8_t)(f & ~CLS_KNOWN);
}

/* §3.3: the first runtime call with "launch" in its name decides the link
 * value: its correlation, or the External id when it has none. Until
 * then rows with either are kept; then only the deciding one's. */
static void add_keys(tl_build *b, uint32_t row, uint8_t cls, int64_t corr, int64_t ext_id)
{
    if (!b->key_mode && tl_kind_is_runtime(cls & CLS_KIND) && (cls & CLS_LAUNCH)) {
        b->key_mode = corr == TL_NONE ? 2 : 1;
        if (b->key_mode == 1) {
            tl_vec_free(&b->ke_row);
            tl_vec_free(&b->ke_val);
        } else {
            tl_vec_free(&b->kc_row);
            tl_vec_free(&b->kc_val);
        }
    }
    if (b->key_mode != 2 && corr != TL_NONE) {
        tl_vec_push(&b->kc_row, row);
        tl_vec_push(&b->kc_val, corr);
    }
    if (b->key_mode != 1 && ext_id != TL_NONE) {
        tl_vec_push(&b->ke_row, row);
        tl_vec_push(&b->ke_val, ext_id);
    }
}

/* The catalog's figures and the first end time out of range. */
static void add_stats(tl_build *b, uint8_t kind, int64_t ts, int64_t dur)
{
    b->kinds[kind < TL_K_COUNT ? kind : 0]++;
    int64_t end;
    if (tl_time_end(ts, dur, &end)) {
        if (b->bad_row == SIZE_MAX) b->bad_row = b->n, b->bad_ts = ts, b->bad_dur = dur;
        return;
    }
    if (ts < b->ts_min) b->ts_min = ts;
    if (end > b->ts_max) b->ts_max = end;
    if (tl_kind_is_gpu(kind)) {
        b->ngpu++;
        if (ts < b->g_min) b->g_min = ts;
        if (end > b->g_max) b->g_max = end;
    }
}

void tl_build_add_row(tl_build *b, uint32_t uid, int64_t ts, int64_t dur, uint32_t name, uint32_t cat, uint8_t kind,
                      int64_t pid, int64_t tid, uint8_t idflags, int64_t corr, int64_t ext_id)
{
    cold_col *h = b->hot;
    uint32_t r = h[0].n;
    AT(h, HOT_UID, uint32_t, r) = uid;
    AT(h, HOT_TS, int64_t, r) = ts;
    AT(h, HOT_DUR, int64_t, r) = dur;
    AT(h, HOT_NAME, uint32_t, r) = name;
    AT(h, HOT_CAT, uint32_t, r) = cat;
    AT(h, HOT_KIND, uint8_t, r) = kind;
    AT(h, HOT_PID, int64_t, r) = pid;
    AT(h, HOT_TID, int64_t, r) = tid;
    AT(h, HOT_IDFLAGS, uint8_t, r) = idflags;
    AT(h, HOT_CORR, int64_t, r) = corr;
    AT(h, HOT_EXTID, int64_t, r) = ext_id;
    if (++h[0].n == TL_CHUNK_ROWS) flush_set(b, b->hot, HOT_N, TL_T_EVENTS);

    uint8_t cls = (uint8_t)((kind & CLS_KIND) | name_flags(b, name));
    tl_vec_push(&b->cls, cls);
    tl_vec_push(&b->thr, tl_build_thread(b, pid, tid, idflags));
    tl_vec_push(&b->n_ts, ts);
    if ((uint64_t)dur < UINT32_MAX) {
        tl_vec_push(&b->n_dur, (uint32_t)dur);
    } else {
        int isnew;
        *tl_imap_put(&b->long_dur, b->n, &isnew) = (size_t)dur;
        tl_vec_push(&b->n_dur, UINT32_MAX);
    }
    add_keys(b, (uint32_t)b->n, cls, corr, ext_id);
    add_stats(b, kind, ts, dur);
    b->n++;
}

/* Is flow category id cat "ac2g"? Tested once per id. */
static int is_ac2g(tl_build *b, uint32_t cat)
{
    while (b->cat_ac2g.n <= cat) tl_vec_push(&b->cat_ac2g, 0);
    if (!b->cat_ac2g.v[cat]) {
        size_t n;
        const char *s = tl_build_strget(b, cat, &n);
        b->cat_ac2g.v[cat] = is_lit(s, n, "ac2g") ? 2 : 1;
    }
    return b->cat_ac2g.v[cat] == 2;
}

void tl_build_add_flow(tl_build *b, uint32_t uid, uint8_t ph, uint32_t cat, uint32_t name, int64_t id, int64_t pid,
                       int64_t tid, uint8_t idflags, int64_t ts)
{
    cold_col *f = b->fhot;
    uint32_t r = f[0].n;
    AT(f, FHOT_UID, uint32_t, r) = uid;
    AT(f, FHOT_PH, uint8_t, r) = ph;
    AT(f, FHOT_CAT, uint32_t, r) = cat;
    AT(f, FHOT_NAME, uint32_t, r) = name;
    AT(f, FHOT_ID, int64_t, r) = id;
    AT(f, FHOT_PID, int64_t, r) = pid;
    AT(f, FHOT_TID, int64_t, r) = tid;
    AT(f, FHOT_IDFLAGS, uint8_t, r) = idflags;
    AT(f, FHOT_TS, int64_t, r) = ts;
    if (++f[0].n == TL_CHUNK_ROWS) flush_set(b, b->fhot, FHOT_N, TL_T_FLOWS);
    if ((ph == 's' || ph == 'f') && is_ac2g(b, cat)) {
        tl_vec_push(&b->a_id, id);
        tl_vec_push(&b->a_thr, tl_build_thread(b, pid, tid, idflags));
        tl_vec_push(&b->a_ph, ph);
    }
    b->nflows++;
}
