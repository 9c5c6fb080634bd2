/* trace.c — loading a stored trace's columns for analysis (see trace.h),
 * and small lookups into raw args JSON text. */
#include "query/core/trace.h"
#include "ingest/json.h"

#include <stdlib.h>
#include <string.h>

static int load(tl_trace *t, const char *table, const char *col, const void **dst, int optional,
                tl_err *err)
{
    tl_colview v;
    int rc = tl_reader_column(t->reader, t->id, table, col, &v, err);
    if (rc) {
        if (optional && rc == TL_ENOTFOUND) { *dst = NULL; return 0; }
        return rc;
    }
    *dst = v.data;
    return 0;
}

static const char *json_str_field(tl_arena *a, const char *json, const char *key)
{
    tl_buf out = {0};
    if (tl_args_get_str(json, strlen(json), key, &out) != 0) { tl_buf_free(&out); return NULL; }
    char *s = tl_arena_strdup(a, out.p ? out.p : "");
    tl_buf_free(&out);
    return s;
}

int tl_trace_load_head(tl_reader *r, uint64_t id, tl_trace **out, tl_err *err)
{
    *out = NULL;
    tl_trace *t = tl_xcalloc(1, sizeof *t);
    t->id = id;
    t->reader = r;
    tl_arena_init(&t->arena, 1 << 16);
    int rc = tl_reader_catalog(r, id, &t->catalog, err);
    if (rc) goto fail;
    t->format = json_str_field(&t->arena, t->catalog, "format");
    if (!t->format) t->format = "kineto";
    rc = tl_reader_dict(r, id, &t->dict, err);
    if (rc) goto fail;
    int64_t nev = 0, nm = 0;
    tl_args_get_i64(t->catalog, strlen(t->catalog), "events", &nev);
    tl_args_get_i64(t->catalog, strlen(t->catalog), "meta_events", &nm);
    t->n = nev > 0 ? (size_t)nev : 0;
    t->nmeta = nm > 0 ? (size_t)nm : 0;
    if (t->nmeta) {
#define M(col, field) if ((rc = load(t, TL_T_META, col, (const void **)&t->field, 0, err))) goto fail
        M(TL_C_UID, m_uid); M(TL_C_NAME, m_name); M(TL_C_PID, m_pid); M(TL_C_TID, m_tid);
        M(TL_C_IDFLAGS, m_idflags);
#undef M
        rc = tl_reader_column(r, id, TL_T_META, TL_C_ARGS, &t->m_args, err);
        if (rc) goto fail;
    }
    *out = t;
    return TL_OK;
fail:
    tl_trace_free(t);
    return rc;
}

int tl_trace_load_cols(tl_reader *r, uint64_t id, tl_trace_cols cols, tl_trace **out, tl_err *err)
{
    tl_trace *t;
    int rc = tl_trace_load_head(r, id, &t, err);
    if (rc) return rc;
    int all = cols == TL_TRACE_ALL;
    if (t->n) {
#define L(col, field) if ((rc = load(t, TL_T_EVENTS, col, (const void **)&t->field, 0, err))) goto fail
#define LO(col, field) if ((rc = load(t, TL_T_EVENTS, col, (const void **)&t->field, 1, err))) goto fail
        L(TL_C_UID, uid); L(TL_C_TS, ts); L(TL_C_DUR, dur); L(TL_C_NAME, name); L(TL_C_CAT, cat);
        L(TL_C_KIND, kind); L(TL_C_PID, pid); L(TL_C_TID, tid); L(TL_C_IDFLAGS, idflags);
        L(TL_C_CORR, corr); L(TL_C_EXTID, ext_id); L(TL_C_STREAM, stream);
        L(TL_C_SEQ, seq); L(TL_C_INDIMS, in_dims); L(TL_C_INTYPE, in_type);
        L(TL_C_INSTRIDES, in_strides); L(TL_C_CONCRETE, concrete);
        LO(TL_C_PARENT, parent); LO(TL_C_PARENT_PY, parent_py); LO(TL_C_LAUNCHER, launcher);
        if (all) {
            L(TL_C_DEVICE, device); L(TL_C_FWDTID, fwd_tid); L(TL_C_GRID, grid); L(TL_C_BLOCK, block);
            LO(TL_C_LINKED, linked);
        }
#undef L
#undef LO
        /* args (the largest column) is decoded on first use: most
         * reports never read it. */
    }
    int64_t nf = 0;
    if (all) tl_args_get_i64(t->catalog, strlen(t->catalog), "flows", &nf);
    t->nflows = nf > 0 ? (size_t)nf : 0;
    if (t->nflows) {
#define F(col, field) if ((rc = load(t, TL_T_FLOWS, col, (const void **)&t->field, 0, err))) goto fail
        F(TL_C_UID, f_uid); F(TL_C_CAT, f_cat); F(TL_C_NAME, f_name); F(TL_C_F_PH, f_ph);
        F(TL_C_IDFLAGS, f_idflags); F(TL_C_F_ID, f_id); F(TL_C_PID, f_pid); F(TL_C_TID, f_tid);
        F(TL_C_TS, f_ts);
#undef F
    }
    /* the columns are decoded (or used in place, faulting back in when
     * read): the compressed pages need not stay resident */
    tl_reader_drop_resident(r);
    *out = t;
    return TL_OK;
fail:
    tl_trace_free(t);
    return rc;
}

int tl_trace_load(tl_reader *r, uint64_t id, tl_trace **out, tl_err *err)
{
    return tl_trace_load_cols(r, id, TL_TRACE_ALL, out, err);
}

void tl_trace_free(tl_trace *t)
{
    if (!t) return;
    tl_arena_free(&t->arena);
    free(t);
}

const char *tl_trace_args(const tl_trace *t, size_t i, size_t *len)
{
    if (!t->args_loaded && t->n) {
        /* Lazy load; the trace is logically const (a cache fill). */
        tl_trace *m = (tl_trace *)t;
        m->args_loaded = 1;
        if (tl_reader_column(m->reader, m->id, TL_T_EVENTS, TL_C_ARGS, &m->args, NULL) != 0)
            memset(&m->args, 0, sizeof m->args);
    }
    if (i >= t->args.n) { if (len) *len = 0; return ""; }
    if (len) *len = (size_t)(t->args.offsets[i + 1] - t->args.offsets[i] - 1);
    return t->args.bytes + t->args.offsets[i];
}

const char *tl_trace_extra(const tl_trace *t, const char *name, size_t *len)
{
    tl_colview v;
    if (tl_reader_column(t->reader, t->id, TL_T_EXTRA, name, &v, NULL) != 0 || v.n < 1) return NULL;
    if (len) *len = (size_t)(v.offsets[1] - v.offsets[0] - 1);
    return v.bytes + v.offsets[0];
}

static const char *id_text(const tl_trace *t, int64_t v, int is_str, char *buf, size_t n)
{
    if (is_str) return tl_trace_str(t, (uint32_t)v);
    snprintf(buf, n, "%lld", (long long)v);
    return buf;
}

const char *tl_trace_pid_text(const tl_trace *t, size_t i, char *buf, size_t n)
{
    return id_text(t, t->pid[i], t->idflags[i] & 1, buf, n);
}

const char *tl_trace_tid_text(const tl_trace *t, size_t i, char *buf, size_t n)
{
    return id_text(t, t->tid[i], t->idflags[i] & 2, buf, n);
}

const char *tl_args_get(const char *args, size_t len, const char *key, size_t *vlen)
{
    if (!args || !len) return NULL;
    tl_err err;
    tl_json j;
    tl_json_init_buf(&j, args, len, "args", &err);
    if (tl_json_expect(&j, '{', "{")) return NULL;
    int first = 1;
    const char *k;
    size_t kn, klen = strlen(key);
    const char *found = NULL;
    size_t flen = 0;
    for (;;) {
        if (tl_json_obj_next(&j, &first, &k, &kn) || !k) break;
        const char *v;
        size_t vn;
        if (tl_json_skip(&j, &v, &vn)) break;
        if (kn == klen && memcmp(k, key, kn) == 0) { found = v; flen = vn; } /* last wins */
    }
    if (found && vlen) *vlen = flen;
    return found;
}

int tl_args_get_str(const char *args, size_t len, const char *key, tl_buf *out)
{
    size_t vn;
    const char *v = tl_args_get(args, len, key, &vn);
    if (!v) return TL_ENOTFOUND;
    out->n = 0;
    if (vn >= 2 && v[0] == '"') {
        tl_err err;
        tl_json j;
        tl_json_init_buf(&j, v, vn, "args", &err);
        tl_json_unescape(&j, v + 1, vn - 2, out);
    } else {
        tl_buf_append(out, v, vn);
    }
    return 0;
}

int tl_args_get_i64(const char *args, size_t len, const char *key, int64_t *v)
{
    size_t vn;
    const char *s = tl_args_get(args, len, key, &vn);
    if (!s) return TL_ENOTFOUND;
    char tmp[64];
    if (vn >= sizeof tmp) return TL_EFORMAT;
    memcpy(tmp, s, vn);
    tmp[vn] = 0;
    char *end;
    long long x = strtoll(tmp, &end, 10);
    if (end == tmp) return TL_EFORMAT;
    *v = x;
    return 0;
}

int tl_args_get_f64(const char *args, size_t len, const char *key, double *v)
{
    size_t vn;
    const char *s = tl_args_get(args, len, key, &vn);
    if (!s) return TL_ENOTFOUND;
    char tmp[64];
    if (vn >= sizeof tmp) return TL_EFORMAT;
    memcpy(tmp, s, vn);
    tmp[vn] = 0;
    char *end;
    double x = strtod(tmp, &end);
    if (end == tmp) return TL_EFORMAT;
    *v = x;
    return 0;
}

/* set once at start-up, before any reader thread */
static int args_sel_off;

void tl_args_sel_use(int on) { args_sel_off = !on; }

int tl_catalog_has_args_sel(const char *catalog)
{
    if (args_sel_off) return 0;
    size_t vl;
    const char *v = catalog ? tl_args_get(catalog, strlen(catalog), "args_sel", &vl) : NULL;
    return v && vl == 4 && !memcmp(v, "true", 4);
}

typedef struct sel_walk {
    const uint32_t *row;
    uint64_t nrows, next;
    int (*fn)(void *ctx, uint32_t row, const char *args, size_t len);
    void *ctx;
    int bad;
} sel_walk;

static int sel_chunk(void *ctx, uint32_t chunk, const tl_colview *v)
{
    (void)chunk;
    sel_walk *w = ctx;
    if (w->next + v->n > w->nrows) return w->bad = 1;
    for (uint64_t i = 0; i < v->n; i++) {
        size_t len = (size_t)(v->offsets[i + 1] - v->offsets[i] - 1);
        if (w->fn(w->ctx, w->row[w->next++], v->bytes + v->offsets[i], len)) return 1;
    }
    return 0;
}

int tl_args_sel_walk(tl_reader *r, uint64_t id,
                     int (*fn)(void *ctx, uint32_t row, const char *args, size_t len), void *ctx,
                     tl_err *err)
{
    tl_colview rows;
    int rc = tl_reader_column(r, id, TL_T_ARGS_SEL, TL_C_ROW, &rows, err);
    if (rc == TL_ENOTFOUND) return TL_OK; /* no event was selected */
    if (rc) return rc;
    sel_walk w = {(const uint32_t *)rows.data, rows.n, 0, fn, ctx, 0};
    rc = tl_reader_column_scan(r, id, TL_T_ARGS_SEL, TL_C_ARGS, sel_chunk, &w, err);
    if (!rc && w.bad) rc = tl_errf(err, TL_ESTORE, "args_sel: more args than rows");
    return rc;
}
