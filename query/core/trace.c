/* trace.c — loading a stored trace's columns for analysis (see trace.h),
 * and small lookups into raw args JSON text. */
#include "query/core/trace.h"
#include "ingest/json.h"

#include <stdlib.h>
#include <string.h>

/* ---- the column table ----------------------------------------------------
 * Every column a load reads is defined here, once: its store name
 * (ingest/schema.h), type, where tl_trace keeps it, whether a store may
 * lack it, the value that means "none" in it, and what its values must
 * satisfy. The checks are what the reports index with: a value that fails
 * one would make them read outside an array. */

/* What a column's values must satisfy. */
typedef enum col_check {
    CK_ANY,   /* any value */
    CK_STR,   /* a string id below the dictionary size */
    CK_ROW,   /* an events row, or -1 */
    CK_TREE,  /* CK_ROW, and following the rows never comes back (parents) */
    CK_KIND,  /* a tl_kind */
    CK_ASC,   /* strictly ascending (uids: rows are in file order) */
    CK_IDSTR, /* a string id where the row's idflags has a bit of `idmask` */
} col_check;

typedef struct coldef {
    const char *name;
    tl_ctype type;
    size_t off;      /* of the column's pointer in tl_trace */
    int optional;    /* stores may lack it (the pointer stays NULL) */
    int64_t none;    /* the value that means "no value" */
    col_check check;
    uint8_t idmask;   /* CK_IDSTR: the idflags bit saying the value is a string id */
} coldef;

#define COL(nm, f, ty, opt, none, ck, bit) {nm, TL_CT_##ty, offsetof(tl_trace, f), opt, none, ck, bit}
#define EV(c, f, ty, opt, none, ck, bit) [TL_TCI_##c] = COL(TL_C_##c, f, ty, opt, none, ck, bit)
/* string ids: 0 is the absent value (ingest/builder.c) */
static const coldef EVENT_COLS[TL_TCI_N] = {
    EV(UID, uid, U32, 0, 0, CK_ASC, 0),          EV(TS, ts, I64, 0, TL_NONE, CK_ANY, 0),
    EV(DUR, dur, I64, 0, TL_NONE, CK_ANY, 0),     EV(NAME, name, U32, 0, 0, CK_STR, 0),
    EV(CAT, cat, U32, 0, 0, CK_STR, 0),           EV(KIND, kind, U8, 0, TL_K_OTHER, CK_KIND, 0),
    EV(PID, pid, I64, 0, TL_NONE, CK_IDSTR, 1),   EV(TID, tid, I64, 0, TL_NONE, CK_IDSTR, 2),
    EV(IDFLAGS, idflags, U8, 0, 0, CK_ANY, 0),    EV(CORR, corr, I64, 0, TL_NONE, CK_ANY, 0),
    EV(EXTID, ext_id, I64, 0, TL_NONE, CK_ANY, 0), EV(STREAM, stream, I64, 0, TL_NONE, CK_ANY, 0),
    EV(DEVICE, device, I64, 0, TL_NONE, CK_ANY, 0), EV(SEQ, seq, I64, 0, TL_NONE, CK_ANY, 0),
    EV(FWDTID, fwd_tid, I64, 0, TL_NONE, CK_ANY, 0), EV(INDIMS, in_dims, U32, 0, 0, CK_STR, 0),
    EV(INTYPE, in_type, U32, 0, 0, CK_STR, 0),    EV(INSTRIDES, in_strides, U32, 0, 0, CK_STR, 0),
    EV(CONCRETE, concrete, U32, 0, 0, CK_STR, 0), EV(GRID, grid, U32, 0, 0, CK_STR, 0),
    EV(BLOCK, block, U32, 0, 0, CK_STR, 0),       EV(PARENT, parent, I32, 1, -1, CK_TREE, 0),
    EV(PARENT_PY, parent_py, I32, 1, -1, CK_TREE, 0), EV(LAUNCHER, launcher, I32, 1, -1, CK_ROW, 0),
    EV(LINKED, linked, U8, 1, 0, CK_ANY, 0),
};
#undef EV
static const coldef FLOW_COLS[] = {
    COL(TL_C_UID, f_uid, U32, 0, 0, CK_ANY, 0),       COL(TL_C_CAT, f_cat, U32, 0, 0, CK_STR, 0),
    COL(TL_C_NAME, f_name, U32, 0, 0, CK_STR, 0),     COL(TL_C_F_PH, f_ph, U8, 0, 0, CK_ANY, 0),
    COL(TL_C_IDFLAGS, f_idflags, U8, 0, 0, CK_ANY, 0), COL(TL_C_F_ID, f_id, I64, 0, TL_NONE, CK_ANY, 0),
    COL(TL_C_PID, f_pid, I64, 0, TL_NONE, CK_IDSTR, 1), COL(TL_C_TID, f_tid, I64, 0, TL_NONE, CK_IDSTR, 2),
    COL(TL_C_TS, f_ts, I64, 0, TL_NONE, CK_ANY, 0),
};
static const coldef META_COLS[] = {
    COL(TL_C_UID, m_uid, U32, 0, 0, CK_ANY, 0),        COL(TL_C_NAME, m_name, U32, 0, 0, CK_STR, 0),
    COL(TL_C_PID, m_pid, I64, 0, TL_NONE, CK_IDSTR, 1), COL(TL_C_TID, m_tid, I64, 0, TL_NONE, CK_IDSTR, 2),
    COL(TL_C_IDFLAGS, m_idflags, U8, 0, 0, CK_ANY, 0),
};
#undef COL
#define NCOLS(a) (sizeof a / sizeof *a)

/* ---- checks ---------------------------------------------------------------- */

/* What one column's values are checked against. */
typedef struct check_in {
    uint64_t rows;          /* events rows (CK_ROW) */
    uint64_t dict_n;        /* dictionary size (CK_STR, CK_IDSTR) */
    const uint8_t *idflags; /* the table's idflags, same rows (CK_IDSTR) */
    int64_t prev;           /* CK_ASC: the value before this chunk (-1: none) */
} check_in;

static int value_bad(const coldef *d, const void *data, size_t i, const check_in *c)
{
    switch (d->check) {
    case CK_STR: return ((const uint32_t *)data)[i] >= c->dict_n;
    case CK_ROW: case CK_TREE: return (uint64_t)((uint32_t)((const int32_t *)data)[i] + 1u) > c->rows;
    case CK_KIND: return ((const uint8_t *)data)[i] >= TL_K_COUNT;
    case CK_ASC: return (int64_t)((const uint32_t *)data)[i] <= (i ? ((const uint32_t *)data)[i - 1] : c->prev);
    case CK_IDSTR: return (c->idflags[i] & d->idmask) && (uint64_t)((const int64_t *)data)[i] >= c->dict_n;
    default: return 0;
    }
}

static size_t first_bad(const coldef *d, const void *data, size_t n, const check_in *c)
{
    size_t i = 0;
    while (i < n && !value_bad(d, data, i, c)) i++;
    return i;
}

/* The checks below run in blocks of a fixed length, which GCC vectorizes
 * at -O2 (its cheap cost model takes loops of known trip count only): the
 * load's cost is one pass over memory just decoded. */
#define CHECK_BLOCK 64

static int u32_at_least(const uint32_t *v, size_t n, uint64_t lim)
{
    if (lim > UINT32_MAX) return 0;
    uint32_t l = (uint32_t)lim, bad = 0;
    size_t i = 0;
    for (; i + CHECK_BLOCK <= n; i += CHECK_BLOCK) {
        uint32_t b = 0;
        for (size_t k = 0; k < CHECK_BLOCK; k++) b |= v[i + k] >= l;
        bad |= b;
    }
    for (; i < n; i++) bad |= v[i] >= l;
    return bad != 0;
}

static int u8_at_least(const uint8_t *v, size_t n, uint8_t lim)
{
    uint8_t bad = 0;
    size_t i = 0;
    for (; i + CHECK_BLOCK <= n; i += CHECK_BLOCK) {
        uint8_t b = 0;
        for (size_t k = 0; k < CHECK_BLOCK; k++) b |= v[i + k] >= lim;
        bad |= b;
    }
    for (; i < n; i++) bad |= v[i] >= lim;
    return bad != 0;
}

/* any value neither -1 nor below rows */
static int rows_bad(const int32_t *v, size_t n, uint64_t rows)
{
    uint32_t r = rows > UINT32_MAX ? UINT32_MAX : (uint32_t)rows, bad = 0;
    size_t i = 0;
    for (; i + CHECK_BLOCK <= n; i += CHECK_BLOCK) {
        uint32_t b = 0;
        for (size_t k = 0; k < CHECK_BLOCK; k++) b |= (uint32_t)v[i + k] + 1u > r;
        bad |= b;
    }
    for (; i < n; i++) bad |= (uint32_t)v[i] + 1u > r;
    return bad != 0;
}

static int not_ascending(const uint32_t *v, size_t n, int64_t prev)
{
    uint32_t bad = (int64_t)v[0] <= prev;
    size_t i = 1;
    for (; i + CHECK_BLOCK <= n; i += CHECK_BLOCK) {
        uint32_t b = 0;
        for (size_t k = 0; k < CHECK_BLOCK; k++) b |= v[i + k] <= v[i + k - 1];
        bad |= b;
    }
    for (; i < n; i++) bad |= v[i] <= v[i - 1];
    return bad != 0;
}

/* any value at or above lim in a row whose flags have a bit of mask (pid
 * and tid string ids): blocks with no such row, the common case, cost one
 * pass over the flags */
static int ids_bad(const int64_t *v, const uint8_t *flags, uint8_t mask, size_t n, uint64_t lim)
{
    int bad = 0;
    for (size_t i = 0; i < n; i += CHECK_BLOCK) {
        size_t m = n - i < CHECK_BLOCK ? n - i : CHECK_BLOCK;
        uint8_t any = 0;
        if (m == CHECK_BLOCK)
            for (size_t k = 0; k < CHECK_BLOCK; k++) any |= flags[i + k];
        else
            for (size_t k = 0; k < m; k++) any |= flags[i + k];
        if (!(any & mask)) continue;
        for (size_t k = 0; k < m; k++) bad |= (flags[i + k] & mask) && (uint64_t)v[i + k] >= lim;
    }
    return bad;
}

/* Whether any of n values fails the column's check. */
static int any_bad(const coldef *d, const void *data, size_t n, const check_in *c)
{
    if (!n) return 0;
    switch (d->check) {
    case CK_STR: return u32_at_least(data, n, c->dict_n);
    case CK_ROW: case CK_TREE: return rows_bad(data, n, c->rows);
    case CK_KIND: return u8_at_least(data, n, TL_K_COUNT);
    case CK_ASC: return not_ascending(data, n, c->prev);
    case CK_IDSTR: return ids_bad(data, c->idflags, d->idmask, n, c->dict_n);
    default: return 0;
    }
}

/* What a value of the column must be, for messages. */
static void expect_text(const coldef *d, const check_in *c, char *buf, size_t n)
{
    switch (d->check) {
    case CK_STR: case CK_IDSTR:
        snprintf(buf, n, "a string id below the dictionary size %llu", (unsigned long long)c->dict_n);
        break;
    case CK_ROW: case CK_TREE: snprintf(buf, n, "-1 or a row below %llu", (unsigned long long)c->rows); break;
    case CK_KIND: snprintf(buf, n, "a kind below %d", TL_K_COUNT); break;
    case CK_ASC: snprintf(buf, n, "above the previous row's (uids ascend)"); break;
    default: snprintf(buf, n, "valid"); break;
    }
}

/* TL_ESTORE for a column of trace id that fails a check: the message names
 * the trace, table and column (what: the finding). */
static int col_damaged(tl_err *err, uint64_t id, const char *table, const char *col, const char *what)
{
    char hex[17];
    tl_id_format(id, hex);
    return tl_errf(err, TL_ESTORE,
                   "trace %s, table %s, column %s: %s; the store is damaged or was written by another "
                   "program: run `tracelens check`", hex, table, col, what);
}

/* Checks n values of a column (rows base.. of its table); TL_ESTORE
 * naming the first bad row. */
static int check_values(uint64_t id, const char *table, const coldef *d, const void *data, size_t n,
                        uint64_t base, const check_in *c, tl_err *err)
{
    if (d->check == CK_ANY || !any_bad(d, data, n, c)) return TL_OK;
    size_t i = first_bad(d, data, n, c);
    int64_t v = d->type == TL_CT_U8 ? ((const uint8_t *)data)[i]
              : d->type == TL_CT_I32 ? ((const int32_t *)data)[i]
              : d->type == TL_CT_U32 ? ((const uint32_t *)data)[i] : ((const int64_t *)data)[i];
    char want[96], what[192];
    expect_text(d, c, want, sizeof want);
    snprintf(what, sizeof what, "row %llu holds %lld, not %s", (unsigned long long)(base + i), (long long)v, want);
    return col_damaged(err, id, table, d->name, what);
}

/* ---- loading ----------------------------------------------------------------- */

static const void **col_ptr(tl_trace *t, const coldef *d) { return (const void **)((char *)t + d->off); }

/* Reads one column of `rows` rows into t: into a block of its own when
 * own is not NULL (*own gets it), else as the reader's view. An optional
 * column a store lacks leaves the pointer NULL. */
static int load_col(tl_trace *t, const char *table, const coldef *d, uint64_t rows, void **own, tl_err *err)
{
    const void **dst = col_ptr(t, d);
    int rc;
    if (own) {
        size_t w = tl_ctype_size(d->type);
        void *buf = tl_big_alloc((rows ? rows : 1) * w);
        rc = tl_reader_column_into(t->reader, t->id, table, d->name, buf, w, rows, err);
        if (rc) tl_big_free(buf);
        else *dst = *own = buf;
    } else {
        tl_colview v;
        rc = tl_reader_column_of(t->reader, t->id, table, d->name, d->type, &v, err);
        if (!rc && v.n != rows) {
            char what[96];
            snprintf(what, sizeof what, "has %llu rows, not the catalog's %llu", (unsigned long long)v.n,
                     (unsigned long long)rows);
            return col_damaged(err, t->id, table, d->name, what);
        }
        if (!rc) *dst = v.data;
    }
    return rc == TL_ENOTFOUND && d->optional ? TL_OK : rc;
}

/* The first row of a parent column (values in range) from which following
 * parents comes back to a row already on the path, or -1 when they form a
 * forest. Each row is walked once: 0 unseen, 1 on the current path, 2 done. */
static int64_t parent_loop(const int32_t *parent, size_t n)
{
    /* written before the walk reads it: a fresh block read first maps
     * the shared zero page, and every later first write to one of its
     * pages is a copy and a TLB flush on every CPU running this process */
    uint8_t *state = tl_xmalloc(n ? n : 1);
    memset(state, 0, n ? n : 1);
    int64_t loop = -1;
    for (size_t i = 0; i < n && loop < 0; i++) {
        int64_t r = (int64_t)i;
        while (r >= 0 && state[r] == 0) {
            state[r] = 1;
            r = parent[r];
        }
        if (r >= 0 && state[r] == 1) loop = r;
        for (int64_t q = (int64_t)i; q >= 0 && state[q] == 1; q = parent[q]) state[q] = 2;
    }
    free(state);
    return loop;
}

/* Checks the loaded columns of one table (those in `which`, a bit per
 * entry of cols) against the trace; idflags: the table's. */
static int check_table(tl_trace *t, const char *table, const coldef *cols, size_t ncols, uint64_t which,
                       uint64_t rows, const uint8_t *idflags, tl_err *err)
{
    check_in c = {.rows = t->n, .dict_n = t->dict.n, .idflags = idflags, .prev = -1};
    for (size_t i = 0; i < ncols; i++) {
        const void *data = *col_ptr(t, &cols[i]);
        if (!(which >> i & 1) || !data || (cols[i].check == CK_IDSTR && !idflags)) continue;
        int rc = check_values(t->id, table, &cols[i], data, rows, 0, &c, err);
        if (rc) return rc;
        int64_t loop = cols[i].check == CK_TREE ? parent_loop(data, rows) : -1;
        if (loop >= 0) {
            char what[96];
            snprintf(what, sizeof what, "row %lld is its own ancestor (the parents form a loop)", (long long)loop);
            return col_damaged(err, t->id, table, cols[i].name, what);
        }
    }
    return TL_OK;
}

/* Loads and checks the columns of one table (a bit per entry of cols in
 * which; own: an array of blocks for TL_TC_OWNED, else NULL). */
static int load_table(tl_trace *t, const char *table, const coldef *cols, size_t ncols, uint64_t which,
                      uint64_t rows, void **own, const uint8_t *const *idflags, tl_err *err)
{
    for (size_t i = 0; i < ncols; i++) {
        if (!(which >> i & 1)) continue;
        int rc = load_col(t, table, &cols[i], rows, own ? &own[i] : NULL, err);
        if (rc) return rc;
        /* one column's store pages resident at a time (a view read in
         * place faults its pages back in when read) */
        tl_reader_drop_resident(t->reader);
    }
    return check_table(t, table, cols, ncols, which, rows, *idflags, err);
}

static const char *json_str_field(tl_arena *a, const char *json, const char *key)
{
    tl_buf out = {0};
    if (tl_args_get_str(json, strlen(json), key, &out) != 0) { tl_buf_free(&out); return NULL; }
    char *s = tl_arena_strdup(a, out.p ? out.p : "");
    tl_buf_free(&out);
    return s;
}

static uint64_t catalog_count(const char *catalog, const char *key)
{
    int64_t v = 0;
    tl_args_get_i64(catalog, strlen(catalog), key, &v);
    return v > 0 ? (uint64_t)v : 0;
}

/* The catalog (and format), the dictionary, the counts and the metadata table. */
static int load_head(tl_trace *t, tl_err *err)
{
    int rc = tl_reader_catalog(t->reader, t->id, &t->catalog, err);
    if (rc) return rc;
    t->format = json_str_field(&t->arena, t->catalog, "format");
    if (!t->format) t->format = "kineto";
    if ((rc = tl_reader_dict(t->reader, t->id, &t->dict, err))) return rc;
    t->n = catalog_count(t->catalog, "events");
    t->nmeta = catalog_count(t->catalog, "meta_events");
    if (!t->nmeta) return TL_OK;
    rc = load_table(t, TL_T_META, META_COLS, NCOLS(META_COLS), ((uint64_t)1 << NCOLS(META_COLS)) - 1, t->nmeta,
                    NULL, &t->m_idflags, err);
    if (rc) return rc;
    if ((rc = tl_reader_column_of(t->reader, t->id, TL_T_META, TL_C_ARGS, TL_CT_BLOB, &t->m_args, err))) return rc;
    if (t->m_args.n != t->nmeta) return col_damaged(err, t->id, TL_T_META, TL_C_ARGS, "row count differs from the catalog's");
    return TL_OK;
}

/* The per-event µs doubles of the loaded ts / dur columns when the trace
 * has a sub_ns table: tl_ns_us of each ns, the table's rows over them. */
static int load_sub_ns(tl_trace *t, tl_trace_cols cols, tl_err *err)
{
    if (!(cols & (TL_TC(TS) | TL_TC(DUR))) || !catalog_count(t->catalog, TL_T_SUB_NS)) return TL_OK;
    tl_sub_ns sub;
    int rc = tl_sub_ns_read(t->reader, t->id, t->n, &sub, err);
    if (rc || !sub.n) return rc;
    if (t->ts) {
        double *v = tl_arena_alloc(&t->arena, t->n * sizeof *v);
        for (size_t i = 0; i < t->n; i++) v[i] = tl_ns_us(t->ts[i]);
        for (size_t k = 0; k < sub.n; k++) v[sub.row[k]] = sub.ts_us[k];
        t->ts_us_sub = v;
    }
    if (t->dur || t->narrow[TL_TCI_DUR].v) {
        double *v = tl_arena_alloc(&t->arena, t->n * sizeof *v);
        for (size_t i = 0; i < t->n; i++) v[i] = tl_ns_us(tl_trace_dur(t, i));
        for (size_t k = 0; k < sub.n; k++) v[sub.row[k]] = sub.dur_us[k];
        t->dur_us_sub = v;
    }
    return TL_OK;
}

void tl_trace_ts_us_fill(const tl_trace *t, double *out)
{
    size_t n = t->n;
    if (t->ts_us_sub) {
        memcpy(out, t->ts_us_sub, n * sizeof *out);
        return;
    }
    /* within +-2^53 ns (the catalog's span of starts and ends), as in
     * every trace but epoch-stamped ones, a plain division is the
     * correctly rounded value */
    int64_t lo = INT64_MIN, hi = INT64_MAX, lim = (int64_t)1 << 53;
    tl_args_get_i64(t->catalog, strlen(t->catalog), "ts_min_ns", &lo);
    tl_args_get_i64(t->catalog, strlen(t->catalog), "ts_max_ns", &hi);
    if (lo > -lim && hi < lim)
        for (size_t i = 0; i < n; i++) out[i] = (double)t->ts[i] / 1000.0;
    else
        for (size_t i = 0; i < n; i++) out[i] = tl_ns_us(t->ts[i]);
}

/* ---- narrow columns (TL_TC_NARROW) -------------------------------------------
 * Each int64 events column but ts is decoded one chunk at a time into a
 * scratch buffer (tl_reader_column_scan) and kept at 4 bytes a value; pid
 * and tid become one index into the trace's distinct (pid, tid) pairs. */

/* Whether a TL_TC_NARROW load holds events column i in a narrow form. */
static int held_narrow(int i) { return EVENT_COLS[i].type == TL_CT_I64 && i != TL_TCI_TS; }

int64_t tl_narrow_wide(const tl_narrow_col *c, size_t i)
{
    size_t lo = 0, hi = c->nexc;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c->exc_row[mid] < i) lo = mid + 1;
        else hi = mid;
    }
    return c->exc_val[lo]; /* the load put every TL_NARROW_WIDE row there */
}

/* Value -> dense index, with the last lookup cached (rows of one thread
 * come in runs). */
typedef struct dense_ix {
    tl_imap m;
    uint64_t last_key;
    uint32_t last;
    int any;
} dense_ix;

static uint32_t dense_of(dense_ix *x, uint64_t key)
{
    if (x->any && key == x->last_key) return x->last;
    int isnew;
    size_t *slot = tl_imap_put(&x->m, key, &isnew);
    if (isnew) *slot = x->m.n - 1;
    x->any = 1;
    x->last_key = key;
    x->last = (uint32_t)*slot;
    return x->last;
}

/* One narrow column's scan: the generic 4-byte form, or the pid pass
 * (thread[i] = the pid's index) and the tid pass (thread[i] = the pair's). */
typedef struct narrow_scan {
    tl_trace *t;
    const coldef *d;
    uint64_t rows;                     /* rows scanned so far */
    tl_narrow_col *nc;                 /* the generic form, else NULL */
    TL_VEC(uint32_t) erow;
    TL_VEC(int64_t) eval;
    uint32_t *thread;                  /* pid / tid passes */
    dense_ix vals, pairs;              /* pid or tid values; (pid index, tid index) pairs */
    TL_VEC(int64_t) pids;              /* value of each pid index */
    TL_VEC(tl_trace_thread) threads;   /* tid pass: value of each pair */
    int rc;                            /* a failed check */
    tl_err *err;
} narrow_scan;

static void narrow_values(narrow_scan *s, const int64_t *v, size_t n)
{
    int32_t *out = s->nc->v + s->rows;
    for (size_t k = 0; k < n; k++) {
        int64_t x = v[k];
        if (x > TL_NARROW_WIDE && x <= INT32_MAX) {
            out[k] = (int32_t)x;
        } else if (x == TL_NONE) {
            out[k] = TL_NARROW_NONE;
        } else {
            out[k] = TL_NARROW_WIDE;
            tl_vec_push(&s->erow, (uint32_t)(s->rows + k));
            tl_vec_push(&s->eval, x);
        }
    }
}

static void thread_values(narrow_scan *s, const int64_t *v, size_t n)
{
    uint32_t *th = s->thread + s->rows;
    int pid = s->d == &EVENT_COLS[TL_TCI_PID];
    for (size_t k = 0; k < n; k++) {
        uint32_t q = dense_of(&s->vals, (uint64_t)v[k]);
        if (pid) {
            if (q == s->pids.n) tl_vec_push(&s->pids, v[k]);
            th[k] = q;
            continue;
        }
        uint32_t pair = dense_of(&s->pairs, (uint64_t)th[k] << 32 | q);
        if (pair == s->threads.n) tl_vec_push(&s->threads, ((tl_trace_thread){s->pids.v[th[k]], v[k]}));
        th[k] = pair;
    }
}

static int narrow_chunk(void *ctx, uint32_t chunk, const tl_colview *v)
{
    narrow_scan *s = ctx;
    tl_trace *t = s->t;
    char what[96];
    if (v->type != TL_CT_I64) {
        snprintf(what, sizeof what, "chunk %u holds %s values, not i64", chunk, tl_ctype_name(v->type));
        s->rc = col_damaged(s->err, t->id, TL_T_EVENTS, s->d->name, what);
        return 1;
    }
    if (v->n > t->n - s->rows) {
        snprintf(what, sizeof what, "has more rows than the catalog's %llu", (unsigned long long)t->n);
        s->rc = col_damaged(s->err, t->id, TL_T_EVENTS, s->d->name, what);
        return 1;
    }
    check_in c = {.rows = t->n, .dict_n = t->dict.n, .idflags = t->idflags ? t->idflags + s->rows : NULL, .prev = -1};
    if ((s->rc = check_values(t->id, TL_T_EVENTS, s->d, v->data, (size_t)v->n, s->rows, &c, s->err))) return 1;
    if (s->nc) narrow_values(s, v->data, (size_t)v->n);
    else thread_values(s, v->data, (size_t)v->n);
    s->rows += v->n;
    return 0;
}

/* Scans events column i into s (its form set up by the caller). */
static int narrow_scan_col(narrow_scan *s, int i)
{
    s->d = &EVENT_COLS[i];
    s->rows = 0;
    int rc = tl_reader_column_scan(s->t->reader, s->t->id, TL_T_EVENTS, s->d->name, narrow_chunk, s, s->err);
    /* the scanned pages are not read again: drop them before the next
     * column maps its own */
    tl_reader_drop_resident(s->t->reader);
    if (!rc) rc = s->rc;
    if (!rc && s->rows != s->t->n) {
        char what[96];
        snprintf(what, sizeof what, "has %llu rows, not the catalog's %llu", (unsigned long long)s->rows,
                 (unsigned long long)s->t->n);
        rc = col_damaged(s->err, s->t->id, TL_T_EVENTS, s->d->name, what);
    }
    return rc;
}

/* pid and tid into t->thread and t->threads. */
static int load_threads(tl_trace *t, tl_err *err)
{
    narrow_scan s = {.t = t, .err = err};
    s.thread = tl_big_alloc((t->n ? t->n : 1) * sizeof *s.thread);
    t->thread = s.thread;
    int rc = narrow_scan_col(&s, TL_TCI_PID);
    tl_imap_free(&s.vals.m);
    memset(&s.vals, 0, sizeof s.vals);
    if (!rc) rc = narrow_scan_col(&s, TL_TCI_TID);
    tl_imap_free(&s.vals.m);
    tl_imap_free(&s.pairs.m);
    tl_vec_free(&s.pids);
    t->threads = s.threads.v;
    t->nthreads = s.threads.n;
    return rc;
}

/* Events column i into t->narrow[i]. */
static int load_narrow(tl_trace *t, int i, tl_err *err)
{
    tl_narrow_col *nc = &t->narrow[i];
    narrow_scan s = {.t = t, .nc = nc, .err = err};
    nc->v = tl_big_alloc((t->n ? t->n : 1) * sizeof *nc->v);
    int rc = narrow_scan_col(&s, i);
    nc->nexc = s.erow.n;
    nc->exc_row = s.erow.v;
    nc->exc_val = s.eval.v;
    return rc;
}

/* The narrow forms of the int64 columns in cols (idflags loaded). */
static int load_narrow_cols(tl_trace *t, tl_trace_cols cols, tl_err *err)
{
    int rc = TL_OK;
    if (cols & (TL_TC(PID) | TL_TC(TID))) rc = load_threads(t, err);
    for (int i = 0; i < TL_TCI_N && !rc; i++)
        if ((cols >> i & 1) && held_narrow(i) && i != TL_TCI_PID && i != TL_TCI_TID) rc = load_narrow(t, i, err);
    return rc;
}

static void free_narrow(tl_trace *t)
{
    if (t->narrow[TL_TCI_DUR].v) t->dur_us_sub = NULL;
    for (int i = 0; i < TL_TCI_N; i++) {
        tl_narrow_col *nc = &t->narrow[i];
        tl_big_free(nc->v);
        free(nc->exc_row);
        free(nc->exc_val);
        memset(nc, 0, sizeof *nc);
    }
    tl_big_free((void *)t->thread);
    free((void *)t->threads);
    t->thread = NULL;
    t->threads = NULL;
    t->nthreads = 0;
}

int tl_trace_load_cols(tl_reader *r, uint64_t id, tl_trace_cols cols, tl_trace **out, tl_err *err)
{
    *out = NULL;
    tl_trace *t = tl_xcalloc(1, sizeof *t);
    t->id = id;
    t->reader = r;
    tl_arena_init(&t->arena, 1 << 16);
    int rc = load_head(t, err);
    /* pid and tid are string ids where idflags says so */
    if (cols & (TL_TC(PID) | TL_TC(TID))) cols |= TL_TC(IDFLAGS);
    tl_trace_cols wide = cols & TL_TC_EVENTS, narrow = 0;
    for (int i = 0; i < TL_TCI_N && (cols & TL_TC_NARROW); i++)
        if (held_narrow(i)) narrow |= wide & ((tl_trace_cols)1 << i);
    wide &= ~narrow;
    if (!rc && t->n)
        rc = load_table(t, TL_T_EVENTS, EVENT_COLS, TL_TCI_N, wide, t->n, (cols & TL_TC_OWNED) ? t->owned : NULL,
                        &t->idflags, err);
    if (!rc && t->n && narrow) rc = load_narrow_cols(t, narrow, err);
    if (!rc && t->n) rc = load_sub_ns(t, cols, err);
    t->nflows = (cols & TL_TC_FLOWS) ? catalog_count(t->catalog ? t->catalog : "", "flows") : 0;
    if (!rc && t->nflows)
        rc = load_table(t, TL_T_FLOWS, FLOW_COLS, NCOLS(FLOW_COLS), ((uint64_t)1 << NCOLS(FLOW_COLS)) - 1,
                        t->nflows, NULL, &t->f_idflags, err);
    if (rc) {
        tl_trace_free(t);
        return rc;
    }
    /* args (the largest column) is decoded on first use: most reports
     * never read it. The columns are decoded (or used in place, faulting
     * back in when read): the compressed pages need not stay resident. */
    tl_reader_drop_resident(r);
    *out = t;
    return TL_OK;
}

int tl_trace_load(tl_reader *r, uint64_t id, tl_trace **out, tl_err *err)
{
    return tl_trace_load_cols(r, id, TL_TRACE_ALL, out, err);
}

void tl_trace_drop_columns(tl_trace *t)
{
    for (int i = 0; i < TL_TCI_N; i++) {
        if (!t->owned[i]) continue;
        *col_ptr(t, &EVENT_COLS[i]) = NULL;
        if (i == TL_TCI_TS) t->ts_us_sub = NULL;
        if (i == TL_TCI_DUR) t->dur_us_sub = NULL;
        tl_big_free(t->owned[i]);
        t->owned[i] = NULL;
    }
    free_narrow(t);
}

void tl_trace_free(tl_trace *t)
{
    if (!t) return;
    tl_trace_drop_columns(t);
    tl_arena_free(&t->arena);
    free(t);
}

/* ---- chunk-wise walks ---------------------------------------------------------- */

typedef struct chunk_walk {
    const coldef *d;   /* NULL: a column the table does not define */
    const char *col;
    int type;          /* every chunk's type: d's, else the first chunk's; -1 before it */
    int values;        /* check the values (not for pid / tid, which need idflags) */
    uint64_t id, rows; /* rows walked so far */
    check_in c;
    int (*cb)(void *ctx, uint32_t chunk, const tl_colview *v);
    void *ctx;
    int stopped;       /* cb stopped the walk */
    int rc;            /* a failed check */
    tl_err *err;
} chunk_walk;

static int checked_chunk(void *ctx, uint32_t chunk, const tl_colview *v)
{
    chunk_walk *w = ctx;
    if (w->type < 0) w->type = v->type;
    if ((int)v->type != w->type) {
        char what[96];
        snprintf(what, sizeof what, "chunk %u holds %s values, not %s", chunk, tl_ctype_name(v->type),
                 tl_ctype_name((tl_ctype)w->type));
        w->rc = col_damaged(w->err, w->id, TL_T_EVENTS, w->col, what);
        return 1;
    }
    if (w->values && (w->rc = check_values(w->id, TL_T_EVENTS, w->d, v->data, (size_t)v->n, w->rows, &w->c, w->err)))
        return 1;
    if (w->values && w->d->check == CK_ASC && v->n) w->c.prev = ((const uint32_t *)v->data)[v->n - 1];
    w->rows += v->n;
    return w->stopped = w->cb(w->ctx, chunk, v);
}

int tl_trace_column_chunks(tl_reader *r, uint64_t id, const char *col, const tl_trace_bounds *b,
                           int (*cb)(void *ctx, uint32_t chunk, const tl_colview *v), void *ctx, tl_err *err)
{
    chunk_walk w = {.col = col, .type = -1, .id = id, .c = {.rows = b->rows, .dict_n = b->dict_n, .prev = -1},
                    .cb = cb, .ctx = ctx, .err = err};
    for (int i = 0; i < TL_TCI_N; i++)
        if (!strcmp(EVENT_COLS[i].name, col)) w.d = &EVENT_COLS[i];
    if (w.d) w.type = w.d->type;
    /* pid and tid need idflags, which a walk of one column does not have */
    w.values = w.d && w.d->check != CK_IDSTR;
    int rc = tl_reader_column_chunks(r, id, TL_T_EVENTS, col, checked_chunk, &w, err);
    if (rc || w.rc) return rc ? rc : w.rc;
    if (!w.stopped && w.rows != b->rows) {
        char what[96];
        snprintf(what, sizeof what, "has %llu rows, not the catalog's %llu", (unsigned long long)w.rows,
                 (unsigned long long)b->rows);
        return col_damaged(err, id, TL_T_EVENTS, col, what);
    }
    return TL_OK;
}
const char *tl_trace_args(const tl_trace *t, size_t i, size_t *len)
{
    if (!t->args_loaded && t->n) {
        /* Lazy load; the trace is logically const (a cache fill). */
        tl_trace *m = (tl_trace *)t;
        m->args_loaded = 1;
        if (tl_reader_column_of(m->reader, m->id, TL_T_EVENTS, TL_C_ARGS, TL_CT_BLOB, &m->args, NULL) != 0)
            memset(&m->args, 0, sizeof m->args);
    }
    if (i >= t->args.n) { if (len) *len = 0; return ""; }
    if (len) *len = (size_t)(t->args.offsets[i + 1] - t->args.offsets[i] - 1);
    return t->args.bytes + t->args.offsets[i];
}

const char *tl_trace_extra(const tl_trace *t, const char *name, size_t *len)
{
    tl_colview v;
    if (tl_reader_column_of(t->reader, t->id, TL_T_EXTRA, name, TL_CT_BLOB, &v, NULL) != 0 || v.n < 1) return NULL;
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
    return id_text(t, tl_trace_pid(t, i), t->idflags[i] & 1, buf, n);
}

const char *tl_trace_tid_text(const tl_trace *t, size_t i, char *buf, size_t n)
{
    return id_text(t, tl_trace_tid(t, i), t->idflags[i] & 2, buf, n);
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
    if (v->type != TL_CT_BLOB || w->next + v->n > w->nrows) return w->bad = 1;
    for (uint64_t i = 0; i < v->n; i++) {
        size_t len = (size_t)(v->offsets[i + 1] - v->offsets[i] - 1);
        if (w->fn(w->ctx, w->row[w->next++], v->bytes + v->offsets[i], len)) return 1;
    }
    return 0;
}

/* The args_sel rows are events rows, ascending (each selected once). */
static int check_sel_rows(tl_reader *r, uint64_t id, const tl_colview *rows, tl_err *err)
{
    static const coldef ROW = {TL_C_ROW, TL_CT_U32, 0, 0, 0, CK_ASC, 0};
    const char *catalog;
    int rc = tl_reader_catalog(r, id, &catalog, err);
    if (rc) return rc;
    uint64_t nev = catalog_count(catalog, "events");
    check_in c = {.rows = nev, .prev = -1};
    if ((rc = check_values(id, TL_T_ARGS_SEL, &ROW, rows->data, (size_t)rows->n, 0, &c, err))) return rc;
    uint32_t last = rows->n ? ((const uint32_t *)rows->data)[rows->n - 1] : 0;
    if (rows->n && last >= nev) {
        char what[96];
        snprintf(what, sizeof what, "row %llu holds %u, not an events row (below %llu)",
                 (unsigned long long)rows->n - 1, last, (unsigned long long)nev);
        return col_damaged(err, id, TL_T_ARGS_SEL, TL_C_ROW, what);
    }
    return TL_OK;
}

int tl_args_sel_walk(tl_reader *r, uint64_t id,
                     int (*fn)(void *ctx, uint32_t row, const char *args, size_t len), void *ctx,
                     tl_err *err)
{
    tl_colview rows;
    int rc = tl_reader_column_of(r, id, TL_T_ARGS_SEL, TL_C_ROW, TL_CT_U32, &rows, err);
    if (rc == TL_ENOTFOUND) return TL_OK; /* no event was selected */
    if (rc) return rc;
    if ((rc = check_sel_rows(r, id, &rows, err))) return rc;
    sel_walk w = {(const uint32_t *)rows.data, rows.n, 0, fn, ctx, 0};
    rc = tl_reader_column_scan(r, id, TL_T_ARGS_SEL, TL_C_ARGS, sel_chunk, &w, err);
    if (!rc && w.bad)
        rc = col_damaged(err, id, TL_T_ARGS_SEL, TL_C_ARGS,
                         "holds more values than the row column, or values other than text");
    return rc;
}
