/* col.c — per-trace column access for ad-hoc queries. A query opens
 * one short-lived reader per trace and decodes only the columns it names,
 * chunk by chunk (no concatenation: rows are located through chunk start
 * offsets, since blob columns are cut by bytes, not rows). Values are
 * gathered over a sorted row selection into dense vectors; string columns
 * stay dictionary ids so predicates and grouping work per distinct string,
 * not per row. Report sheets are computed per trace from the same store. */
#include "query/adhoc/adhoc_internal.h"
#include "query/pytorch/pytorch.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Kind names as a dictionary whose id is kind + 1 (id 0 stays "null"). */
static const char KIND_BYTES[] =
    "\0other\0cpu_op\0python_function\0cuda_runtime\0cuda_driver\0kernel\0gpu_memcpy\0gpu_memset\0"
    "user_annotation\0gpu_user_annotation";
static const uint64_t KIND_OFFS[TL_K_COUNT + 2] = {0, 1, 7, 14, 30, 43, 55, 62, 73, 84, 100, 120};
static const tl_dict KIND_DICT = {TL_K_COUNT + 1, KIND_OFFS, KIND_BYTES};
const tl_dict *aq_kind_dict(void) { return &KIND_DICT; }

int aq_tctx_begin(aq_tctx *x, tl_store *s, const aq_trace *t, tl_err *err)
{
    memset(x, 0, sizeof *x);
    x->t = t;
    tl_arena_init(&x->arena, 256 * 1024);
    x->nrows = t->events > 0 ? (uint64_t)t->events : 0;
    return tl_reader_open(s, &x->r, err);
}

void aq_tctx_end(aq_tctx *x)
{
    if (x->report_free) x->report_free(x->report_owner);
    tl_reader_close(x->r);
    tl_arena_free(&x->arena);
    memset(x, 0, sizeof *x);
}

typedef struct chunk_acc {
    TL_VEC(tl_colview) v;
} chunk_acc;

static int chunk_cb(void *ctx, uint32_t no, const tl_colview *v)
{
    (void)no;
    chunk_acc *a = ctx;
    tl_vec_push(&a->v, *v);
    return 0;
}

int aq_tctx_chunks(aq_tctx *x, const char *col, const aq_chunks **out, tl_err *err)
{
    for (int i = 0; i < x->ncache; i++)
        if (!strcmp(x->cache[i].name, col)) { *out = &x->cache[i].ch; return TL_OK; }
    if (x->ncache == (int)(sizeof x->cache / sizeof *x->cache))
        return tl_errf(err, TL_EUSAGE, "too many columns in one query");
    int rc = aq_tctx_dict(x, err);
    if (rc) return rc;
    chunk_acc acc = {0};
    tl_trace_bounds b = {x->t->events > 0 ? (uint64_t)x->t->events : 0, x->dict.n};
    rc = tl_trace_column_chunks(x->r, x->t->id, col, &b, chunk_cb, &acc, err);
    if (rc) { tl_vec_free(&acc.v); return rc; }
    aq_chunks *c = &x->cache[x->ncache].ch;
    x->cache[x->ncache].name = col;
    c->nchunks = acc.v.n;
    c->v = tl_arena_alloc(&x->arena, (acc.v.n ? acc.v.n : 1) * sizeof *c->v);
    c->start = tl_arena_alloc(&x->arena, (acc.v.n + 1) * sizeof *c->start);
    uint64_t row = 0;
    for (size_t i = 0; i < acc.v.n; i++) {
        c->v[i] = acc.v.v[i];
        c->start[i] = row;
        row += acc.v.v[i].n;
    }
    c->start[acc.v.n] = row;
    c->n = row;
    c->type = acc.v.n ? acc.v.v[0].type : TL_CT_U8;
    tl_vec_free(&acc.v);
    x->ncache++;
    *out = c;
    return TL_OK;
}

int aq_tctx_dict(aq_tctx *x, tl_err *err)
{
    if (x->have_dict) return TL_OK;
    int rc = tl_reader_dict(x->r, x->t->id, &x->dict, err);
    if (rc) return rc;
    x->have_dict = 1;
    return TL_OK;
}

static size_t chunk_of(const aq_chunks *c, uint64_t row)
{
    size_t lo = 0, hi = c->nchunks;
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if (c->start[mid] <= row) lo = mid; else hi = mid;
    }
    return lo;
}

int64_t aq_chunks_get(const aq_chunks *c, uint64_t row)
{
    if (row >= c->n) return INT64_MIN;
    size_t k = chunk_of(c, row);
    uint64_t j = row - c->start[k];
    const void *d = c->v[k].data;
    switch (c->type) {
    case TL_CT_U8: return ((const uint8_t *)d)[j];
    case TL_CT_I32: return ((const int32_t *)d)[j];
    case TL_CT_U32: return ((const uint32_t *)d)[j];
    case TL_CT_I64: return ((const int64_t *)d)[j];
    default: return INT64_MIN;
    }
}

/* Gathers rows (ascending) of a fixed-width column, widened to int64. */
static void gather_i64(const aq_chunks *c, const uint32_t *rows, size_t m, int64_t *out)
{
    size_t i = 0;
    for (size_t k = 0; k < c->nchunks && i < m; k++) {
        uint64_t s = c->start[k], e = c->start[k + 1];
        const void *d = c->v[k].data;
        switch (c->type) {
#define G(T) { const T *p = (const T *)d; for (; i < m && rows[i] < e; i++) out[i] = (int64_t)p[rows[i] - s]; } break
        case TL_CT_U8: G(uint8_t);
        case TL_CT_I32: G(int32_t);
        case TL_CT_U32: G(uint32_t);
        case TL_CT_I64: G(int64_t);
#undef G
        default: for (; i < m && rows[i] < e; i++) out[i] = INT64_MIN; break;
        }
    }
    for (; i < m; i++) out[i] = INT64_MIN; /* rows past the column (never for a sound store) */
}

static void gather_u32(const aq_chunks *c, const uint32_t *rows, size_t m, uint32_t *out)
{
    size_t i = 0;
    if (c->type == TL_CT_U32 || c->type == TL_CT_I32) {
        for (size_t k = 0; k < c->nchunks && i < m; k++) {
            uint64_t s = c->start[k], e = c->start[k + 1];
            const uint32_t *p = (const uint32_t *)c->v[k].data;
            for (; i < m && rows[i] < e; i++) out[i] = p[rows[i] - s];
        }
    }
    for (; i < m; i++) out[i] = 0;
}

/* Text of a blob row ("" when none). */
static const char *blob_at(const aq_chunks *c, uint64_t row, size_t *len)
{
    if (row >= c->n || c->type != TL_CT_BLOB) { *len = 0; return ""; }
    size_t k = chunk_of(c, row);
    uint64_t j = row - c->start[k];
    const tl_colview *v = &c->v[k];
    uint64_t a = v->offsets[j], b = v->offsets[j + 1];
    *len = b > a ? (size_t)(b - a - 1) : 0;
    return v->bytes + a;
}

int aq_tctx_rows(aq_tctx *x, const aq_tabdef *tab, uint32_t **rows, size_t *m, tl_err *err)
{
    if (tab->kind_filter < 0) {
        /* every event: the row count comes from a small column */
        const aq_chunks *k;
        int rc = aq_tctx_chunks(x, TL_C_KIND, &k, err);
        if (rc) return rc;
        uint32_t *r = tl_arena_alloc(&x->arena, (x->nrows ? x->nrows : 1) * sizeof *r);
        for (uint64_t i = 0; i < x->nrows; i++) r[i] = (uint32_t)i;
        *rows = r;
        *m = x->nrows;
        return TL_OK;
    }
    const aq_chunks *k;
    int rc = aq_tctx_chunks(x, TL_C_KIND, &k, err);
    if (rc) return rc;
    size_t cap = x->t->kinds[tab->kind_filter] > 0 ? (size_t)x->t->kinds[tab->kind_filter] : 64;
    uint32_t *r = tl_arena_alloc(&x->arena, cap * sizeof *r);
    size_t n = 0;
    uint8_t want = (uint8_t)tab->kind_filter;
    for (size_t c = 0; c < k->nchunks; c++) {
        const uint8_t *p = k->v[c].data;
        uint64_t s = k->start[c], cn = k->v[c].n;
        for (uint64_t j = 0; j < cn; j++) {
            if (p[j] != want) continue;
            if (n == cap) {
                uint32_t *nr = tl_arena_alloc(&x->arena, cap * 2 * sizeof *nr);
                memcpy(nr, r, cap * sizeof *r);
                r = nr;
                cap *= 2;
            }
            r[n++] = (uint32_t)(s + j);
        }
    }
    *rows = r;
    *m = n;
    return TL_OK;
}

/* ---- report sheets ----------------------------------------------------- */
typedef struct rep_owner {
    tl_trace *tr;
    tl_pyt_sheets sheets;
} rep_owner;

static void rep_free(void *p)
{
    rep_owner *o = p;
    if (!o) return;
    tl_pyt_sheets_free(&o->sheets);
    tl_trace_free(o->tr);
    free(o);
}

int aq_tctx_report(aq_tctx *x, const aq_tabdef *tab, tl_err *err)
{
    if (x->report || x->report_owner) return TL_OK;
    if (!x->t->format || strcmp(x->t->format, "kineto") != 0) return TL_OK; /* no such sheet */
    if (x->t->gpu_events <= 0) return TL_OK;
    rep_owner *o = tl_xcalloc(1, sizeof *o);
    int rc = tl_trace_load(x->r, x->t->id, &o->tr, err);
    if (rc) { free(o); return rc; }
    tl_pyt_opts o2;
    tl_pyt_opts_default(&o2);
    o2.quiet = 1;
    if (!strcmp(tab->name, "kernel_summary")) o2.kernel_summary = 1;
    tl_err e2 = {0};
    rc = tl_pytorch_report(o->tr, &o2, &o->sheets, &e2);
    x->report_owner = o;
    x->report_free = rep_free;
    if (rc) return TL_OK; /* e.g. no GPU events: the trace has no such sheet */
    x->report = tl_pyt_sheet(&o->sheets, tab->name);
    if (x->report) x->nrows = x->report->nrows;
    return TL_OK;
}

/* ---- derived columns ---------------------------------------------------- */
static int launched_time(aq_tctx *x, tl_err *err)
{
    if (x->ktime) return TL_OK;
    const aq_chunks *kind, *lau, *dur;
    int rc;
    if ((rc = aq_tctx_chunks(x, TL_C_KIND, &kind, err)) || (rc = aq_tctx_chunks(x, TL_C_LAUNCHER, &lau, err)) ||
        (rc = aq_tctx_chunks(x, TL_C_DUR, &dur, err)))
        return rc;
    uint64_t n = x->nrows;
    x->ktime = tl_arena_zalloc(&x->arena, (n ? n : 1) * sizeof(int64_t));
    x->kcount = tl_arena_zalloc(&x->arena, (n ? n : 1) * sizeof(int64_t));
    for (size_t c = 0; c < kind->nchunks; c++) {
        const uint8_t *p = kind->v[c].data;
        uint64_t s = kind->start[c];
        for (uint64_t j = 0; j < kind->v[c].n; j++) {
            if (!tl_kind_is_gpu(p[j])) continue;
            int64_t l = aq_chunks_get(lau, s + j);
            if (l < 0 || (uint64_t)l >= n) continue;
            int64_t d = aq_chunks_get(dur, s + j);
            if (d == INT64_MIN) continue;
            x->ktime[l] += d;
            x->kcount[l]++;
        }
    }
    return TL_OK;
}

/* ---- vectors ------------------------------------------------------------- */
long aq_table_col_named(const tl_table *t, const char *name)
{
    long c = tl_table_col(t, name);
    if (c >= 0) return c;
    for (size_t i = 0; i < t->ncols; i++)
        if (!strcasecmp(t->cols[i].name, name)) return (long)i;
    char a[256], b[256];
    aq_norm_name(name, a, sizeof a);
    for (size_t i = 0; i < t->ncols; i++) {
        aq_norm_name(t->cols[i].name, b, sizeof b);
        if (!strcmp(a, b)) return (long)i;
    }
    return -1;
}

/* Values of a report-sheet column (x->report, computed per trace) at rows,
 * as text, integers or floats by the column's declared type; all missing
 * when the sheet lacks the column. */
static void report_col(aq_tctx *x, const aq_coldef *d, const uint32_t *rows, size_t m, aq_vec *out)
{
    tl_arena *a = &x->arena;
    size_t mm = m ? m : 1;
    const tl_table *t = x->report;
    long col = t ? aq_table_col_named(t, d->store) : -1;
    if (d->type == AQ_STR) {
        out->vt = AQ_V_TEXT;
        out->t = tl_arena_alloc(a, mm * sizeof(const char *));
        char buf[64];
        for (size_t i = 0; i < m; i++) {
            if (col < 0 || tl_table_is_missing(t, (size_t)col, rows[i])) { out->t[i] = NULL; continue; }
            const char *s = tl_table_cell_text(t, (size_t)col, rows[i], buf, sizeof buf);
            out->t[i] = s == buf ? tl_arena_strdup(a, buf) : s;
        }
    } else if (d->type == AQ_INT) {
        out->vt = AQ_V_I64;
        out->i = tl_arena_alloc(a, mm * sizeof(int64_t));
        for (size_t i = 0; i < m; i++) {
            double v = col < 0 ? NAN : tl_table_num(t, (size_t)col, rows[i]);
            out->i[i] = isnan(v) ? INT64_MIN : (int64_t)llround(v);
        }
    } else {
        out->vt = AQ_V_F64;
        out->f = tl_arena_alloc(a, mm * sizeof(double));
        for (size_t i = 0; i < m; i++) out->f[i] = col < 0 ? NAN : tl_table_num(t, (size_t)col, rows[i]);
    }
}

int aq_vec_get(aq_tctx *x, const aq_colref *c, const uint32_t *rows, size_t m, aq_vec *out,
               tl_err *err)
{
    if (aq_is_trace_level(c)) return aq_trace_value(x->t, c, &x->arena, out) ? tl_errf(err, TL_EUSAGE, "bad column") : 0;
    memset(out, 0, sizeof *out);
    out->n = m;
    tl_arena *a = &x->arena;
    size_t mm = m ? m : 1;
    const aq_chunks *ch = NULL;
    int rc = 0;
    const aq_coldef *d = c->def;
    switch (d->src) {
    case AQ_S_I64: case AQ_S_U32: case AQ_S_U8:
        if ((rc = aq_tctx_chunks(x, d->store, &ch, err))) return rc;
        out->vt = AQ_V_I64;
        out->i = tl_arena_alloc(a, mm * sizeof(int64_t));
        gather_i64(ch, rows, m, out->i);
        return TL_OK;
    case AQ_S_END: {
        const aq_chunks *ts, *du;
        if ((rc = aq_tctx_chunks(x, TL_C_TS, &ts, err)) || (rc = aq_tctx_chunks(x, TL_C_DUR, &du, err))) return rc;
        out->vt = AQ_V_I64;
        out->i = tl_arena_alloc(a, mm * sizeof(int64_t));
        int64_t *tmp = tl_arena_alloc(a, mm * sizeof(int64_t));
        gather_i64(ts, rows, m, out->i);
        gather_i64(du, rows, m, tmp);
        for (size_t i = 0; i < m; i++)
            out->i[i] = out->i[i] == INT64_MIN || tmp[i] == INT64_MIN ? INT64_MIN : out->i[i] + tmp[i];
        return TL_OK;
    }
    case AQ_S_STR:
        if ((rc = aq_tctx_chunks(x, d->store, &ch, err)) || (rc = aq_tctx_dict(x, err))) return rc;
        out->vt = AQ_V_SID;
        out->dict = &x->dict;
        out->s = tl_arena_alloc(a, mm * sizeof(uint32_t));
        gather_u32(ch, rows, m, out->s);
        for (size_t i = 0; i < m; i++)
            if (out->s[i] >= x->dict.n) out->s[i] = 0;
        return TL_OK;
    case AQ_S_KIND: {
        if ((rc = aq_tctx_chunks(x, TL_C_KIND, &ch, err))) return rc;
        out->vt = AQ_V_SID;
        out->dict = &KIND_DICT;
        out->s = tl_arena_alloc(a, mm * sizeof(uint32_t));
        int64_t *tmp = tl_arena_alloc(a, mm * sizeof(int64_t));
        gather_i64(ch, rows, m, tmp);
        for (size_t i = 0; i < m; i++) out->s[i] = tmp[i] >= 0 && tmp[i] < TL_K_COUNT ? (uint32_t)tmp[i] + 1 : 1;
        return TL_OK;
    }
    case AQ_S_ROWUID: case AQ_S_ROWNAME: {
        const aq_chunks *tgt;
        if ((rc = aq_tctx_chunks(x, d->store, &ch, err))) return rc;
        int is_name = d->src == AQ_S_ROWNAME;
        if ((rc = aq_tctx_chunks(x, is_name ? TL_C_NAME : TL_C_UID, &tgt, err))) return rc;
        if (is_name && (rc = aq_tctx_dict(x, err))) return rc;
        int64_t *idx = tl_arena_alloc(a, mm * sizeof(int64_t));
        gather_i64(ch, rows, m, idx);
        if (is_name) {
            out->vt = AQ_V_SID;
            out->dict = &x->dict;
            out->s = tl_arena_alloc(a, mm * sizeof(uint32_t));
            for (size_t i = 0; i < m; i++) {
                int64_t v = idx[i] >= 0 ? aq_chunks_get(tgt, (uint64_t)idx[i]) : 0;
                out->s[i] = v > 0 && (uint64_t)v < x->dict.n ? (uint32_t)v : 0;
            }
        } else {
            out->vt = AQ_V_I64;
            out->i = idx;
            for (size_t i = 0; i < m; i++) idx[i] = idx[i] >= 0 ? aq_chunks_get(tgt, (uint64_t)idx[i]) : INT64_MIN;
        }
        return TL_OK;
    }
    case AQ_S_BLOB: case AQ_S_ARGKEY: {
        if ((rc = aq_tctx_chunks(x, TL_C_ARGS, &ch, err))) return rc;
        out->vt = AQ_V_TEXT;
        out->t = tl_arena_alloc(a, mm * sizeof(const char *));
        tl_buf b = {0};
        for (size_t i = 0; i < m; i++) {
            size_t len;
            const char *s = blob_at(ch, rows[i], &len);
            if (d->src == AQ_S_BLOB) { out->t[i] = len ? s : NULL; continue; }
            size_t vl;
            const char *v = len ? tl_args_get(s, len, c->arg, &vl) : NULL;
            if (!v || (vl == 4 && !memcmp(v, "null", 4))) { out->t[i] = NULL; continue; }
            if (*v == '"') {
                b.n = 0;
                aq_json_str(v, v + vl, &b);
                out->t[i] = tl_arena_strndup(a, b.p ? b.p : "", b.n);
            } else {
                out->t[i] = tl_arena_strndup(a, v, vl);
            }
        }
        tl_buf_free(&b);
        return TL_OK;
    }
    case AQ_S_IDTEXT: {
        const aq_chunks *fl;
        if ((rc = aq_tctx_chunks(x, d->store, &ch, err)) || (rc = aq_tctx_chunks(x, TL_C_IDFLAGS, &fl, err)) ||
            (rc = aq_tctx_dict(x, err)))
            return rc;
        int bit = !strcmp(d->store, TL_C_PID) ? 1 : 2;
        int64_t *v = tl_arena_alloc(a, mm * sizeof(int64_t)), *f = tl_arena_alloc(a, mm * sizeof(int64_t));
        gather_i64(ch, rows, m, v);
        gather_i64(fl, rows, m, f);
        out->vt = AQ_V_TEXT;
        out->t = tl_arena_alloc(a, mm * sizeof(const char *));
        for (size_t i = 0; i < m; i++) {
            if (f[i] != INT64_MIN && (f[i] & bit)) out->t[i] = v[i] > 0 && (uint64_t)v[i] < x->dict.n ? tl_dict_get(&x->dict, (uint32_t)v[i], NULL) : NULL;
            else if (v[i] == INT64_MIN) out->t[i] = NULL;
            else out->t[i] = tl_arena_printf(a, "%lld", (long long)v[i]);
        }
        return TL_OK;
    }
    case AQ_S_KTIME: case AQ_S_KCOUNT: {
        if ((rc = launched_time(x, err))) return rc;
        const int64_t *src = d->src == AQ_S_KTIME ? x->ktime : x->kcount;
        out->vt = AQ_V_I64;
        out->i = tl_arena_alloc(a, mm * sizeof(int64_t));
        for (size_t i = 0; i < m; i++) out->i[i] = rows[i] < x->nrows ? src[rows[i]] : INT64_MIN;
        return TL_OK;
    }
    case AQ_S_REPCOL:
        report_col(x, d, rows, m, out);
        return TL_OK;
    default:
        return tl_errf(err, TL_EUSAGE, "column %s cannot be read here", c->display);
    }
}
