/* sqlvtab.c — SQLite virtual tables over the trace store (see sqlvtab.h).
 * Each table is an eponymous module whose schema comes from the shared
 * ad-hoc schema (adhoc_schema.c), so SQL and `tracelens query` see the same
 * columns with the same meaning. A cursor walks the traces the pushed-down
 * constraints allow, opens a short-lived reader per trace, narrows the
 * table's rows with the pushed row predicates (the verb engine's vectorised
 * evaluator), and gathers a column's values for those rows the first time
 * SQLite asks for that column. A cursor keeps its trace open across
 * xFilter calls, so the inner side of a join by (trace_id, uid) costs one
 * binary search per probe. */
#include "query/adhoc/adhoc.h"
#include "query/adhoc/adhoc_internal.h"

#include <ctype.h>
#include <strings.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/lazylib.h"

/* The SQLite functions this file calls, bound on first use
 * (base/lazylib.h): only `tracelens sql` loads the library. */
#define SQLITE_FUNCS(X) \
    X(sqlite3_close) \
    X(sqlite3_column_count) \
    X(sqlite3_column_double) \
    X(sqlite3_column_int64) \
    X(sqlite3_column_name) \
    X(sqlite3_column_text) \
    X(sqlite3_column_type) \
    X(sqlite3_create_function) \
    X(sqlite3_create_module_v2) \
    X(sqlite3_db_config) \
    X(sqlite3_declare_vtab) \
    X(sqlite3_errmsg) \
    X(sqlite3_error_offset) \
    X(sqlite3_finalize) \
    X(sqlite3_free) \
    X(sqlite3_get_auxdata) \
    X(sqlite3_interrupt) \
    X(sqlite3_limit) \
    X(sqlite3_malloc) \
    X(sqlite3_mprintf) \
    X(sqlite3_open_v2) \
    X(sqlite3_prepare_v2) \
    X(sqlite3_result_double) \
    X(sqlite3_result_error) \
    X(sqlite3_result_error_nomem) \
    X(sqlite3_result_int) \
    X(sqlite3_result_int64) \
    X(sqlite3_result_null) \
    X(sqlite3_result_text) \
    X(sqlite3_set_auxdata) \
    X(sqlite3_set_authorizer) \
    X(sqlite3_sql) \
    X(sqlite3_step) \
    X(sqlite3_stmt_readonly) \
    X(sqlite3_value_double) \
    X(sqlite3_value_dup) \
    X(sqlite3_value_free) \
    X(sqlite3_value_int64) \
    X(sqlite3_value_text) \
    X(sqlite3_value_type) \
    X(sqlite3_vtab_config) \
    X(sqlite3_vtab_in) \
    X(sqlite3_vtab_in_first) \
    X(sqlite3_vtab_in_next)
TL_LAZY_API(SQ, SQLITE_FUNCS, TL_SONAME_SQLITE, "sql");

/* ---- connection context --------------------------------------------------- */
typedef struct sqlctx {
    tl_store *s;
    tl_reader *r;            /* the catalog snapshot every table reads */
    aq_catalog cat;
    const atomic_int *cancel;
    int refs;
    aq_coldef meta_def;      /* traces.metadata: the whole metadata JSON */
    double kind_rows[TL_K_COUNT], all_rows;
} sqlctx;

static void ctx_unref(void *p)
{
    sqlctx *c = p;
    if (!c || --c->refs > 0) return;
    aq_catalog_free(&c->cat);
    tl_reader_close(c->r);
    free(c);
}

typedef struct vmod {
    sqlctx *c;
    const aq_tabdef *tab;
} vmod;

static void vmod_free(void *p)
{
    vmod *m = p;
    ctx_unref(m->c);
    free(m);
}

typedef struct vcol {
    aq_colref ref;
    const char *sqlname;
    int hidden;
    const char *alias_of; /* a sheet's header naming column alias_of: hidden */
} vcol;

typedef TL_VEC(vcol) vcol_vec;

typedef struct vtab {
    sqlite3_vtab base;
    sqlctx *c;
    const aq_tabdef *tab;
    vcol *cols;
    int ncols;
    int col_uid;             /* -1 when the table has no uid */
    tl_arena arena;
} vtab;

/* ---- schema ------------------------------------------------------------- */
static const aq_coldef *trace_def(aq_src src, const char *store)
{
    size_t n;
    const aq_coldef *d = aq_trace_cols(&n);
    for (size_t i = 0; i < n; i++)
        if (d[i].src == src && (!store || (d[i].store && !strcmp(d[i].store, store)))) return &d[i];
    return NULL;
}

static void add_col(vcol_vec *v, tl_arena *a, const aq_coldef *d, const char *arg, const char *sqlname, int hidden)
{
    vcol c;
    memset(&c, 0, sizeof c);
    c.ref.def = d;
    c.ref.arg = arg ? tl_arena_strdup(a, arg) : NULL;
    c.ref.display = tl_arena_strdup(a, sqlname);
    c.sqlname = c.ref.display;
    c.hidden = hidden;
    tl_vec_push(v, c);
}

static const char *sql_type(aq_type t)
{
    return t == AQ_INT ? "INTEGER" : t == AQ_FLOAT ? "REAL" : "TEXT";
}

/* Every column a table declares: its own, the trace-level ones (hidden
 * in row tables), one label_KEY per label key in the store, and, hidden,
 * the report sheets' own headers ("op category", "Kernel duration (µs)")
 * as aliases of the SQL names, so a quoted sheet header names its column. */
static void table_cols(const sqlctx *c, const aq_tabdef *tab, vcol_vec *cols, tl_arena *a)
{
    size_t ntc;
    const aq_coldef *tcs = aq_trace_cols(&ntc);
    if (tab->kind == AQ_TAB_TRACES) {
        for (size_t i = 0; i < ntc; i++)
            if (tcs[i].src != AQ_S_LABEL && tcs[i].src != AQ_S_META) add_col(cols, a, &tcs[i], NULL, tcs[i].name, 0);
        add_col(cols, a, &c->meta_def, "", "metadata", 0);
        /* "id" names the trace as the catalog does; trace_id joins with the row tables */
        add_col(cols, a, trace_def(AQ_S_TRACE_ID, NULL), NULL, "id", 1);
    } else {
        add_col(cols, a, trace_def(AQ_S_TRACE_ID, NULL), NULL, "trace_id", 0);
        for (size_t i = 0; i < tab->ncols; i++)
            if (tab->cols[i].src != AQ_S_ARGKEY) add_col(cols, a, &tab->cols[i], NULL, tab->cols[i].name, 0);
        static const aq_src HID[] = {AQ_S_PATH, AQ_S_FORMAT, AQ_S_CONFIG, AQ_S_RANK, AQ_S_RUN, AQ_S_INGEST_TIME};
        for (size_t i = 0; i < sizeof HID / sizeof *HID; i++) {
            const aq_coldef *d = trace_def(HID[i], NULL);
            add_col(cols, a, d, NULL, d->name, 1);
        }
    }
    /* one label_KEY column per label key present in the store */
    const aq_coldef *ld = trace_def(AQ_S_LABEL, NULL);
    for (size_t k = 0; k < c->cat.label_keys.n; k++) {
        const char *key = c->cat.label_keys.v[k];
        char nm[300];
        size_t j = (size_t)snprintf(nm, sizeof nm, "label_");
        for (const char *p = key; *p && j + 1 < sizeof nm; p++)
            nm[j++] = isalnum((unsigned char)*p) || (unsigned char)*p >= 0x80 ? *p : '_';
        nm[j] = 0;
        int dup = 0;
        for (size_t q = 0; q < cols->n; q++) dup |= !strcasecmp(cols->v[q].sqlname, nm);
        if (dup) snprintf(nm + j, sizeof nm - j, "_%zu", k);
        add_col(cols, a, ld, key, nm, tab->kind != AQ_TAB_TRACES);
    }
    for (size_t i = 0; i < tab->ncols; i++) {
        const aq_coldef *d = &tab->cols[i];
        if (d->src != AQ_S_REPCOL || !d->store) continue;
        int dup = 0;
        for (size_t q = 0; q < cols->n; q++) dup |= !strcasecmp(cols->v[q].sqlname, d->store);
        if (dup) continue;
        add_col(cols, a, d, NULL, d->store, 1);
        cols->v[cols->n - 1].alias_of = d->name;
    }
}

static int vconnect(sqlite3 *db, void *aux, int argc, const char *const *argv, sqlite3_vtab **out, char **errp)
{
    (void)argc; (void)argv; (void)errp;
    vmod *m = aux;
    vtab *vt = SQ.sqlite3_malloc(sizeof *vt);
    if (!vt) return SQLITE_NOMEM;
    memset(vt, 0, sizeof *vt);
    vt->c = m->c;
    vt->tab = m->tab;
    vt->col_uid = -1;
    tl_arena_init(&vt->arena, 4096);
    vcol_vec cols = {0};
    table_cols(m->c, m->tab, &cols, &vt->arena);
    if (m->tab->kind != AQ_TAB_TRACES)
        for (size_t i = 0; i < cols.n && vt->col_uid < 0; i++)
            if (!cols.v[i].hidden && !strcmp(cols.v[i].sqlname, "uid")) vt->col_uid = (int)i;
    tl_buf b = {0};
    tl_buf_puts(&b, "CREATE TABLE x(");
    for (size_t i = 0; i < cols.n; i++) {
        tl_buf_printf(&b, "%s\"", i ? ", " : "");
        for (const char *p = cols.v[i].sqlname; *p; p++) {
            if (*p == '"') tl_buf_putc(&b, '"');
            tl_buf_putc(&b, *p);
        }
        tl_buf_printf(&b, "\" %s%s", sql_type(cols.v[i].ref.def->type), cols.v[i].hidden ? " HIDDEN" : "");
    }
    tl_buf_putc(&b, ')');
    int rc = SQ.sqlite3_declare_vtab(db, b.p);
    tl_buf_free(&b);
    if (rc != SQLITE_OK) {
        tl_vec_free(&cols);
        tl_arena_free(&vt->arena);
        SQ.sqlite3_free(vt);
        return rc;
    }
    vt->cols = tl_arena_alloc(&vt->arena, (cols.n ? cols.n : 1) * sizeof(vcol));
    memcpy(vt->cols, cols.v, cols.n * sizeof(vcol));
    vt->ncols = (int)cols.n;
    tl_vec_free(&cols);
    SQ.sqlite3_vtab_config(db, SQLITE_VTAB_INNOCUOUS);
    *out = &vt->base;
    return SQLITE_OK;
}

static int vdisconnect(sqlite3_vtab *p)
{
    vtab *vt = (vtab *)p;
    tl_arena_free(&vt->arena);
    SQ.sqlite3_free(vt);
    return SQLITE_OK;
}

/* ---- planning ------------------------------------------------------------ */
enum { P_EQ = 1, P_LT, P_LE, P_GT, P_GE, P_LIKE, P_RE, P_IN };

static int map_op(unsigned char op)
{
    switch (op) {
    case SQLITE_INDEX_CONSTRAINT_EQ: return P_EQ;
    case SQLITE_INDEX_CONSTRAINT_LT: return P_LT;
    case SQLITE_INDEX_CONSTRAINT_LE: return P_LE;
    case SQLITE_INDEX_CONSTRAINT_GT: return P_GT;
    case SQLITE_INDEX_CONSTRAINT_GE: return P_GE;
    case SQLITE_INDEX_CONSTRAINT_LIKE: return P_LIKE;
    case SQLITE_INDEX_CONSTRAINT_REGEXP: return P_RE;
    default: return 0;
    }
}

static double table_rows(const vtab *vt)
{
    const sqlctx *c = vt->c;
    double n = (double)c->cat.v.n;
    if (vt->tab->kind == AQ_TAB_TRACES) return n > 0 ? n : 1;
    if (vt->tab->kind == AQ_TAB_REPORT) return n * 40 + 1;
    double r = vt->tab->kind_filter >= 0 ? c->kind_rows[vt->tab->kind_filter] : c->all_rows;
    return r > 1 ? r : 1;
}

static int vbestindex(sqlite3_vtab *p, sqlite3_index_info *info)
{
    vtab *vt = (vtab *)p;
    double ntr = vt->c->cat.v.n ? (double)vt->c->cat.v.n : 1;
    double rows = table_rows(vt), traces = ntr;
    int argn = 0, has_tid = 0, has_uid = 0;
    tl_buf plan = {0};
    for (int i = 0; i < info->nConstraint; i++) {
        const struct sqlite3_index_constraint *k = &info->aConstraint[i];
        if (!k->usable || k->iColumn < 0 || k->iColumn >= vt->ncols || argn >= 64) continue;
        int op = map_op(k->op);
        if (!op) continue;
        const vcol *col = &vt->cols[k->iColumn];
        int trace_level = aq_is_trace_level(&col->ref);
        if (!trace_level && vt->tab->kind == AQ_TAB_TRACES) continue;
        if (op == P_LIKE && col->ref.def->type != AQ_STR) continue;
        if (op == P_RE && col->ref.def->type == AQ_INT) continue;
        int is_tid = col->ref.def->src == AQ_S_TRACE_ID && op == P_EQ;
        if (is_tid && SQ.sqlite3_vtab_in(info, i, -1)) {
            SQ.sqlite3_vtab_in(info, i, 1); /* all IN values at once: one pass over the catalog */
            op = P_IN;
        }
        info->aConstraintUsage[i].argvIndex = ++argn;
        info->aConstraintUsage[i].omit = 0; /* SQLite re-checks: push-down only narrows */
        tl_buf_printf(&plan, "%d:%d;", k->iColumn, op);
        if (is_tid) { has_tid = 1; traces = op == P_IN ? 4 : 1; }
        else if (trace_level) traces /= op == P_EQ ? 8 : 2;
        else if (k->iColumn == vt->col_uid && op == P_EQ) has_uid = 1;
        else rows /= op == P_EQ ? 20 : 3;
    }
    if (traces < 1) traces = 1;
    double est = rows * traces / ntr;
    if (has_uid) est = has_tid ? 1 : traces;
    if (est < 1) est = 1;
    info->estimatedRows = (sqlite3_int64)est;
    info->estimatedCost = est + traces * 2;
    if (has_uid && has_tid) info->idxFlags |= SQLITE_INDEX_SCAN_UNIQUE;
    info->idxNum = 0;
    info->idxStr = SQ.sqlite3_mprintf("%s", plan.p ? plan.p : "");
    info->needToFreeIdxStr = 1;
    tl_buf_free(&plan);
    return SQLITE_OK;
}

/* ---- cursor ------------------------------------------------------------- */
typedef struct tfilter {
    const aq_colref *col;
    int op;
    sqlite3_value *v;
} tfilter;

typedef struct vcur {
    sqlite3_vtab_cursor base;
    vtab *vt;
    /* filter */
    size_t *cand;            /* candidate trace indices */
    size_t ncand, ci;
    TL_VEC(tfilter) tf;      /* trace-level constraints */
    aq_expr *rowf;           /* row constraints (AND tree), or NULL */
    tl_arena farena;         /* per-xFilter allocations */
    const char *plan_str;    /* idxStr the parsed plan below belongs to */
    int plan_n, plan_col[64], plan_op[64];
    int64_t uid_eq;          /* INT64_MIN: none */
    int uid_none;            /* uid constraint that no row can meet */
    /* current trace */
    size_t open_ti;          /* catalog index of the open trace, or SIZE_MAX */
    aq_tctx x;
    tl_arena tarena;         /* traces table values */
    uint32_t *rows;
    size_t m, pos;
    aq_vec *vecs;
    uint8_t *have;
    int eof;
} vcur;

static int vopen(sqlite3_vtab *p, sqlite3_vtab_cursor **out)
{
    vtab *vt = (vtab *)p;
    vcur *c = SQ.sqlite3_malloc(sizeof *c);
    if (!c) return SQLITE_NOMEM;
    memset(c, 0, sizeof *c);
    c->vt = vt;
    c->open_ti = SIZE_MAX;
    c->vecs = tl_xcalloc((size_t)vt->ncols, sizeof *c->vecs);
    c->have = tl_xcalloc((size_t)vt->ncols, 1);
    tl_arena_init(&c->farena, 4096);
    tl_arena_init(&c->tarena, 4096);
    *out = &c->base;
    return SQLITE_OK;
}

static void close_trace(vcur *c)
{
    if (c->open_ti != SIZE_MAX && c->vt->tab->kind != AQ_TAB_TRACES) aq_tctx_end(&c->x);
    c->open_ti = SIZE_MAX;
    tl_arena_free(&c->tarena);
}

static void clear_filter(vcur *c)
{
    for (size_t i = 0; i < c->tf.n; i++) SQ.sqlite3_value_free(c->tf.v[i].v);
    c->tf.n = 0;
    aq_expr_free(c->rowf);
    c->rowf = NULL;
    free(c->cand);
    c->cand = NULL;
    c->ncand = c->ci = 0;
    tl_arena_free(&c->farena);
}

static int vclose(sqlite3_vtab_cursor *p)
{
    vcur *c = (vcur *)p;
    close_trace(c);
    clear_filter(c);
    tl_vec_free(&c->tf);
    free(c->vecs);
    free(c->have);
    SQ.sqlite3_free(c);
    return SQLITE_OK;
}

static int set_err(vtab *vt, const char *msg)
{
    SQ.sqlite3_free(vt->base.zErrMsg);
    vt->base.zErrMsg = SQ.sqlite3_mprintf("%s", msg);
    return SQLITE_ERROR;
}

/* Trace-level constraint check: compares the catalog value like SQLite would,
 * but only rejects when sure (SQLite re-checks every row anyway). */
static int trace_ok(vcur *c, const aq_trace *t)
{
    for (size_t i = 0; i < c->tf.n; i++) {
        const tfilter *f = &c->tf.v[i];
        aq_vec v;
        if (aq_trace_value(t, f->col, &c->farena, &v)) continue;
        sqlite3_value *sv = f->v;
        int st = SQ.sqlite3_value_type(sv);
        if (st == SQLITE_NULL) return 0; /* = NULL, < NULL ... never hold */
        if (v.vt == AQ_V_I64) {
            if (v.i[0] == INT64_MIN) return 0;
            if (st != SQLITE_INTEGER && st != SQLITE_FLOAT) continue;
            double a = (double)v.i[0], b = SQ.sqlite3_value_double(sv);
            int ok = f->op == P_EQ ? a == b : f->op == P_LT ? a < b : f->op == P_LE ? a <= b
                   : f->op == P_GT ? a > b : f->op == P_GE ? a >= b : 1;
            if (!ok) return 0;
        } else {
            const char *s = v.t[0];
            if (!s) return 0;
            if (st != SQLITE_TEXT) continue;
            const char *b = (const char *)SQ.sqlite3_value_text(sv);
            int ok = 1;
            if (f->op == P_LIKE) ok = aq_like(b, s);
            else if (f->op == P_RE) {
                regex_t re;
                if (regcomp(&re, b, REG_EXTENDED | REG_NOSUB) == 0) {
                    ok = regexec(&re, s, 0, NULL, 0) == 0;
                    regfree(&re);
                }
            } else {
                int cmp = strcmp(s, b);
                ok = f->op == P_EQ ? cmp == 0 : f->op == P_LT ? cmp < 0 : f->op == P_LE ? cmp <= 0
                   : f->op == P_GT ? cmp > 0 : cmp >= 0;
            }
            if (!ok) return 0;
        }
    }
    return 1;
}

/* A row constraint as an expression leaf, or NULL when it cannot narrow safely. */
static aq_expr *row_leaf(vcur *c, const aq_colref *col, int op, sqlite3_value *v)
{
    int st = SQ.sqlite3_value_type(v);
    aq_type ct = col->def->type;
    aq_expr *e = tl_arena_zalloc(&c->farena, sizeof *e);
    e->t = AQ_E_CMP;
    e->col = *col;
    if (op == P_LIKE || op == P_RE) {
        if (st != SQLITE_TEXT) return NULL;
        e->lit.s = tl_arena_strdup(&c->farena, (const char *)SQ.sqlite3_value_text(v));
        e->op = op == P_LIKE ? AQ_OP_LIKE : AQ_OP_RE;
        if (op == P_RE) {
            if (regcomp(&e->re, e->lit.s, REG_EXTENDED | REG_NOSUB)) return NULL;
            e->has_re = 1;
        }
        return e;
    }
    e->op = op == P_EQ ? AQ_OP_EQ : op == P_LT ? AQ_OP_LT : op == P_LE ? AQ_OP_LE : op == P_GT ? AQ_OP_GT : AQ_OP_GE;
    if (ct == AQ_INT || ct == AQ_FLOAT) {
        if (st == SQLITE_INTEGER) { e->lit.isnum = e->lit.isint = 1; e->lit.i = SQ.sqlite3_value_int64(v); e->lit.f = (double)e->lit.i; }
        else if (st == SQLITE_FLOAT) { e->lit.isnum = 1; e->lit.f = SQ.sqlite3_value_double(v); }
        else return NULL;
        return e;
    }
    if (ct == AQ_STR && st == SQLITE_TEXT) {
        e->lit.s = tl_arena_strdup(&c->farena, (const char *)SQ.sqlite3_value_text(v));
        return e;
    }
    return NULL; /* text column vs number, DYN columns: SQLite's affinity rules decide */
}

static int vt_advance(vcur *c);

/* Catalog index of a trace id given as 16 hex digits, or SIZE_MAX. */
static size_t trace_index(const sqlctx *sc, sqlite3_value *v)
{
    if (SQ.sqlite3_value_type(v) != SQLITE_TEXT) return SIZE_MAX;
    const char *hex = (const char *)SQ.sqlite3_value_text(v);
    uint64_t id;
    if (!hex || strlen(hex) != 16 || tl_id_parse(hex, &id) != 0) return SIZE_MAX;
    size_t lo = 0, hi = sc->cat.v.n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (sc->cat.v.v[mid].id < id) lo = mid + 1; else hi = mid;
    }
    /* ids print in lower case: "ABCD..." is not "abcd..." to SQLite */
    if (lo < sc->cat.v.n && sc->cat.v.v[lo].id == id && !strcmp(sc->cat.v.v[lo].hex, hex)) return lo;
    return SIZE_MAX;
}

static int cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return x < y ? -1 : x > y;
}

static int vfilter(sqlite3_vtab_cursor *p, int idxNum, const char *idxStr, int argc, sqlite3_value **argv)
{
    (void)idxNum;
    vcur *c = (vcur *)p;
    vtab *vt = c->vt;
    sqlctx *sc = vt->c;
    clear_filter(c);
    c->uid_eq = INT64_MIN;
    c->uid_none = 0;
    c->eof = 0;
    size_t ntr = sc->cat.v.n;
    /* the plan string is parsed once per distinct plan (joins call xFilter
     * once per outer row with the same plan) */
    if (c->plan_str != idxStr) {
        c->plan_n = 0;
        const char *s = idxStr ? idxStr : "";
        while (*s && c->plan_n < (int)(sizeof c->plan_col / sizeof *c->plan_col)) {
            int col = 0, op = 0;
            if (sscanf(s, "%d:%d", &col, &op) != 2) break;
            c->plan_col[c->plan_n] = col;
            c->plan_op[c->plan_n++] = op;
            s = strchr(s, ';');
            s = s ? s + 1 : "";
        }
        c->plan_str = idxStr;
    }
    int have_ids = 0;
    size_t nids = 0;
    for (int a = 0; a < argc && a < c->plan_n; a++) {
        int col = c->plan_col[a], op = c->plan_op[a];
        const vcol *vc = &vt->cols[col];
        if (op == P_IN || (op == P_EQ && vc->ref.def->src == AQ_S_TRACE_ID)) {
            /* trace ids: looked up in the (id-sorted) catalog, never scanned */
            TL_VEC(size_t) mine = {0};
            if (op == P_IN) {
                sqlite3_value *v = NULL;
                for (int rc = SQ.sqlite3_vtab_in_first(argv[a], &v); rc == SQLITE_OK && v; rc = SQ.sqlite3_vtab_in_next(argv[a], &v)) {
                    size_t ti = trace_index(sc, v);
                    if (ti != SIZE_MAX) tl_vec_push(&mine, ti);
                }
            } else {
                size_t ti = trace_index(sc, argv[a]);
                if (ti != SIZE_MAX) tl_vec_push(&mine, ti);
            }
            if (mine.n > 1) qsort(mine.v, mine.n, sizeof *mine.v, cmp_size);
            if (!have_ids) {
                free(c->cand);
                c->cand = tl_xmalloc((mine.n ? mine.n : 1) * sizeof *c->cand);
                nids = 0;
                for (size_t i = 0; i < mine.n; i++)
                    if (!nids || c->cand[nids - 1] != mine.v[i]) c->cand[nids++] = mine.v[i];
            } else {
                size_t k = 0;
                for (size_t i = 0; i < nids; i++)
                    if (bsearch(&c->cand[i], mine.v, mine.n, sizeof *mine.v, cmp_size)) c->cand[k++] = c->cand[i];
                nids = k;
            }
            tl_vec_free(&mine);
            have_ids = 1;
            continue;
        }
        if (aq_is_trace_level(&vc->ref)) {
            tfilter f = {&vc->ref, op, SQ.sqlite3_value_dup(argv[a])};
            tl_vec_push(&c->tf, f);
            continue;
        }
        if (col == vt->col_uid && op == P_EQ) {
            int st = SQ.sqlite3_value_type(argv[a]);
            if (st == SQLITE_INTEGER) { c->uid_eq = SQ.sqlite3_value_int64(argv[a]); continue; }
            if (st == SQLITE_NULL) { c->uid_none = 1; continue; }
        }
        if (vt->tab->kind == AQ_TAB_TRACES) continue;
        aq_expr *leaf = row_leaf(c, &vc->ref, op, argv[a]);
        if (!leaf) continue;
        if (!c->rowf) c->rowf = leaf;
        else {
            aq_expr *and = tl_arena_zalloc(&c->farena, sizeof *and);
            and->t = AQ_E_AND;
            and->a = c->rowf;
            and->b = leaf;
            c->rowf = and;
        }
    }
    if (!have_ids) {
        c->cand = tl_xmalloc((ntr ? ntr : 1) * sizeof *c->cand);
        for (size_t i = 0; i < ntr; i++) c->cand[i] = i;
        nids = ntr;
    }
    c->ncand = 0;
    for (size_t i = 0; i < nids; i++)
        if (!c->tf.n || trace_ok(c, &sc->cat.v.v[c->cand[i]])) c->cand[c->ncand++] = c->cand[i];
    c->ci = 0;
    c->m = c->pos = 0;
    /* position on the first row */
    return vt_advance(c);
}

/* Binary search of a uid in the (ascending) uid column; SIZE_MAX if absent. */
static size_t find_uid(aq_tctx *x, int64_t uid, tl_err *err)
{
    const aq_chunks *u;
    if (aq_tctx_chunks(x, TL_C_UID, &u, err)) return SIZE_MAX;
    uint64_t lo = 0, hi = u->n;
    while (lo < hi) {
        uint64_t mid = (lo + hi) / 2;
        if (aq_chunks_get(u, mid) < uid) lo = mid + 1; else hi = mid;
    }
    return lo < u->n && aq_chunks_get(u, lo) == uid ? (size_t)lo : SIZE_MAX;
}

/* Loads the rows of candidate trace c->cand[c->ci]; 0 ok (m may be 0). */
static int load_trace_rows(vcur *c, tl_err *err)
{
    vtab *vt = c->vt;
    sqlctx *sc = vt->c;
    size_t ti = c->cand[c->ci];
    const aq_trace *t = &sc->cat.v.v[ti];
    memset(c->have, 0, (size_t)vt->ncols);
    c->m = c->pos = 0;
    if (vt->tab->kind == AQ_TAB_TRACES) {
        close_trace(c);
        c->open_ti = ti;
        c->x.t = t;
        c->rows = tl_arena_zalloc(&c->tarena, sizeof *c->rows);
        c->m = 1;
        return 0;
    }
    if (vt->tab->kind == AQ_TAB_ROWS && vt->tab->kind_filter >= 0) {
        int64_t total = 0;
        for (int k = 0; k < TL_K_COUNT; k++) total += t->kinds[k];
        if (total > 0 && t->kinds[vt->tab->kind_filter] == 0) return 0;
    }
    if (c->uid_none) return 0;
    if (c->open_ti != ti) {
        close_trace(c);
        int rc = aq_tctx_begin(&c->x, sc->s, t, err);
        if (rc) return rc;
        c->open_ti = ti;
    }
    aq_tctx *x = &c->x;
    int rc = 0;
    if (vt->tab->kind == AQ_TAB_REPORT) {
        rc = aq_tctx_report(x, vt->tab, err);
        if (rc) return rc;
        if (!x->report) return 0;
        c->m = x->report->nrows;
        c->rows = tl_arena_alloc(&x->arena, (c->m ? c->m : 1) * sizeof *c->rows);
        for (size_t i = 0; i < c->m; i++) c->rows[i] = (uint32_t)i;
    } else if (c->uid_eq != INT64_MIN) {
        size_t r = find_uid(x, c->uid_eq, err);
        if (r == SIZE_MAX) return 0;
        if (vt->tab->kind_filter >= 0) {
            const aq_chunks *k;
            if ((rc = aq_tctx_chunks(x, TL_C_KIND, &k, err))) return rc;
            if (aq_chunks_get(k, r) != vt->tab->kind_filter) return 0;
        }
        c->rows = tl_arena_alloc(&x->arena, sizeof *c->rows);
        c->rows[0] = (uint32_t)r;
        c->m = 1;
    } else {
        rc = aq_tctx_rows(x, vt->tab, &c->rows, &c->m, err);
        if (rc == TL_ENOTFOUND) { c->m = 0; return 0; }
        if (rc) return rc;
    }
    if (c->m && c->rowf) {
        uint8_t *mask = tl_arena_alloc(&x->arena, c->m);
        if ((rc = aq_expr_eval(x, c->rowf, c->rows, c->m, mask, err))) return rc;
        size_t k = 0;
        for (size_t i = 0; i < c->m; i++)
            if (mask[i]) c->rows[k++] = c->rows[i];
        c->m = k;
    }
    return 0;
}

static int vt_advance(vcur *c)
{
    for (;;) {
        if (c->pos < c->m) return SQLITE_OK;
        if (c->ci >= c->ncand) { c->eof = 1; return SQLITE_OK; }
        if (c->vt->c->cancel && atomic_load_explicit(c->vt->c->cancel, memory_order_relaxed)) return SQLITE_INTERRUPT;
        tl_err err = {0};
        int rc = load_trace_rows(c, &err);
        if (rc) return set_err(c->vt, err.msg);
        c->ci++;
        if (c->m) return SQLITE_OK;
    }
}

static int vnext(sqlite3_vtab_cursor *p)
{
    vcur *c = (vcur *)p;
    c->pos++;
    if (c->pos < c->m) return SQLITE_OK;
    return vt_advance(c);
}

static int veof(sqlite3_vtab_cursor *p) { return ((vcur *)p)->eof; }

static int vcolumn(sqlite3_vtab_cursor *p, sqlite3_context *ctx, int i)
{
    vcur *c = (vcur *)p;
    vtab *vt = c->vt;
    if (i < 0 || i >= vt->ncols) { SQ.sqlite3_result_null(ctx); return SQLITE_OK; }
    const vcol *col = &vt->cols[i];
    aq_vec *v = &c->vecs[i];
    if (!c->have[i]) {
        if (vt->tab->kind == AQ_TAB_TRACES || aq_is_trace_level(&col->ref)) {
            const aq_trace *t = &vt->c->cat.v.v[c->open_ti];
            tl_arena *a = vt->tab->kind == AQ_TAB_TRACES ? &c->tarena : &c->x.arena;
            if (aq_trace_value(t, &col->ref, a, v)) { SQ.sqlite3_result_null(ctx); return SQLITE_OK; }
        } else {
            tl_err err = {0};
            if (aq_vec_get(&c->x, &col->ref, c->rows, c->m, v, &err)) {
                SQ.sqlite3_result_error(ctx, err.msg, -1);
                return SQLITE_ERROR;
            }
        }
        c->have[i] = 1;
    }
    size_t k = v->konst ? 0 : c->pos;
    switch (v->vt) {
    case AQ_V_I64:
        if (v->i[k] == INT64_MIN) SQ.sqlite3_result_null(ctx);
        else if (col->ref.def->type == AQ_FLOAT) SQ.sqlite3_result_double(ctx, (double)v->i[k]);
        else SQ.sqlite3_result_int64(ctx, v->i[k]);
        break;
    case AQ_V_F64:
        if (isnan(v->f[k])) SQ.sqlite3_result_null(ctx);
        else SQ.sqlite3_result_double(ctx, v->f[k]);
        break;
    default: {
        const char *s = aq_vec_text(v, k);
        if (!s) SQ.sqlite3_result_null(ctx);
        else SQ.sqlite3_result_text(ctx, s, -1, SQLITE_TRANSIENT);
        break;
    }
    }
    return SQLITE_OK;
}

static int vrowid(sqlite3_vtab_cursor *p, sqlite3_int64 *rowid)
{
    vcur *c = (vcur *)p;
    *rowid = (sqlite3_int64)(((uint64_t)c->open_ti << 32) | (c->m ? c->rows[c->pos] : 0));
    return SQLITE_OK;
}

static sqlite3_module MODULE = {
    .iVersion = 0,
    .xCreate = vconnect,
    .xConnect = vconnect,
    .xBestIndex = vbestindex,
    .xDisconnect = vdisconnect,
    .xDestroy = vdisconnect,
    .xOpen = vopen,
    .xClose = vclose,
    .xFilter = vfilter,
    .xNext = vnext,
    .xEof = veof,
    .xColumn = vcolumn,
    .xRowid = vrowid,
};

/* ---- regexp(pattern, text) ------------------------------------------------ */
static void re_free(void *p)
{
    regfree(p);
    free(p);
}

static void fn_regexp(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    (void)argc;
    if (SQ.sqlite3_value_type(argv[0]) == SQLITE_NULL || SQ.sqlite3_value_type(argv[1]) == SQLITE_NULL) {
        SQ.sqlite3_result_null(ctx);
        return;
    }
    regex_t *re = SQ.sqlite3_get_auxdata(ctx, 0);
    if (!re) {
        const char *pat = (const char *)SQ.sqlite3_value_text(argv[0]);
        re = tl_xmalloc(sizeof *re);
        int rc = regcomp(re, pat, REG_EXTENDED | REG_NOSUB);
        if (rc) {
            char rb[200], msg[600];
            regerror(rc, re, rb, sizeof rb);
            free(re);
            snprintf(msg, sizeof msg, "bad regex '%s': %s", pat, rb);
            SQ.sqlite3_result_error(ctx, msg, -1);
            return;
        }
        SQ.sqlite3_set_auxdata(ctx, 0, re, re_free);
        re = SQ.sqlite3_get_auxdata(ctx, 0);
        if (!re) { SQ.sqlite3_result_error_nomem(ctx); return; }
    }
    const char *s = (const char *)SQ.sqlite3_value_text(argv[1]);
    SQ.sqlite3_result_int(ctx, s && regexec(re, s, 0, NULL, 0) == 0);
}

/* ---- read only ------------------------------------------------------------
 * SQL may come from a dashboard or a shared file, so the connection only
 * reads: an authorizer refuses every action but reading tables, calling
 * functions (not load_extension) and a few pragmas that only report; a
 * prepared statement that would still write (VACUUM) is refused by
 * sqlite3_stmt_readonly; ATTACH is also capped at 0 databases. */

/* Pragmas that only report, with or without an argument. */
static const char *const READ_PRAGMAS[] = {
    "table_info", "table_xinfo", "table_list", "function_list", "module_list", "pragma_list",
    "collation_list", "compile_options", "database_list", "index_list", "index_info", "index_xinfo",
    "foreign_key_list",
};

/* What the authorizer refused during the prepare running on this thread
 * ("ATTACH", "PRAGMA journal_mode"): the error message names it. */
static _Thread_local char refused[80];

static int refuse(const char *what, const char *detail)
{
    snprintf(refused, sizeof refused, "%s%s%s", what, detail ? " " : "", detail ? detail : "");
    return SQLITE_DENY;
}

static int read_pragma(const char *name)
{
    for (size_t i = 0; i < sizeof READ_PRAGMAS / sizeof *READ_PRAGMAS; i++)
        if (name && !strcasecmp(name, READ_PRAGMAS[i])) return 1;
    return 0;
}

/* The statement a refused action belongs to, for the message. */
static const char *action_name(int action)
{
    switch (action) {
    case SQLITE_ATTACH: return "ATTACH";
    case SQLITE_DETACH: return "DETACH";
    case SQLITE_INSERT: return "INSERT";
    case SQLITE_UPDATE: return "UPDATE";
    case SQLITE_DELETE: return "DELETE";
    case SQLITE_CREATE_TABLE: return "CREATE TABLE";
    case SQLITE_CREATE_TEMP_TABLE: return "CREATE TEMP TABLE";
    case SQLITE_CREATE_VIEW: return "CREATE VIEW";
    case SQLITE_CREATE_TEMP_VIEW: return "CREATE TEMP VIEW";
    case SQLITE_CREATE_INDEX: case SQLITE_CREATE_TEMP_INDEX: return "CREATE INDEX";
    case SQLITE_CREATE_TRIGGER: case SQLITE_CREATE_TEMP_TRIGGER: return "CREATE TRIGGER";
    case SQLITE_CREATE_VTABLE: return "CREATE VIRTUAL TABLE";
    case SQLITE_DROP_TABLE: case SQLITE_DROP_TEMP_TABLE: return "DROP TABLE";
    case SQLITE_DROP_VIEW: case SQLITE_DROP_TEMP_VIEW: return "DROP VIEW";
    case SQLITE_DROP_INDEX: case SQLITE_DROP_TEMP_INDEX: return "DROP INDEX";
    case SQLITE_DROP_TRIGGER: case SQLITE_DROP_TEMP_TRIGGER: return "DROP TRIGGER";
    case SQLITE_DROP_VTABLE: return "DROP VIRTUAL TABLE";
    case SQLITE_ALTER_TABLE: return "ALTER TABLE";
    case SQLITE_ANALYZE: return "ANALYZE";
    case SQLITE_REINDEX: return "REINDEX";
    case SQLITE_TRANSACTION: return "transaction";
    case SQLITE_SAVEPOINT: return "SAVEPOINT";
    default: return "statement";
    }
}

static int authorize(void *ud, int action, const char *a1, const char *a2, const char *db, const char *trigger)
{
    (void)ud, (void)db, (void)trigger;
    switch (action) {
    case SQLITE_SELECT:
    case SQLITE_READ:
    case SQLITE_RECURSIVE:
        return SQLITE_OK;
    case SQLITE_FUNCTION:
        return a2 && !strcasecmp(a2, "load_extension") ? refuse("load_extension", NULL) : SQLITE_OK;
    case SQLITE_PRAGMA:
        return read_pragma(a1) ? SQLITE_OK : refuse("PRAGMA", a1);
    case SQLITE_INSERT:
    case SQLITE_UPDATE:
    case SQLITE_DELETE:
        /* Schema-table writes are the bookkeeping of a statement checked
         * on its own action (CREATE, DROP), and SQLite codes one while a
         * virtual table declares its columns; the statement itself is
         * refused by that action or by sqlite3_stmt_readonly. */
        if (a1 && (!strcmp(a1, "sqlite_master") || !strcmp(a1, "sqlite_temp_master"))) return SQLITE_OK;
        return refuse(action_name(action), NULL);
    default:
        return refuse(action_name(action), NULL);
    }
}

/* The first word of a statement, upper-cased ("VACUUM"). */
static void first_word(const char *sql, char *out, size_t n)
{
    size_t k = 0;
    while (*sql && isspace((unsigned char)*sql)) sql++;
    for (; k + 1 < n && isalpha((unsigned char)sql[k]); k++) out[k] = (char)toupper((unsigned char)sql[k]);
    out[k] = 0;
}

/* Makes db read-only: the authorizer, no attached databases, no loadable
 * extensions, defensive mode (no writes to the schema). */
static void read_only(sqlite3 *db)
{
    SQ.sqlite3_set_authorizer(db, authorize, NULL);
    SQ.sqlite3_limit(db, SQLITE_LIMIT_ATTACHED, 0);
    SQ.sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0, (int *)NULL);
    SQ.sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, (int *)NULL);
}

/* Double quotes name columns only: "op category" is the sheet's column or
 * an error, never silently the text 'op category' (SQLite's legacy
 * fallback); text takes single quotes. */
static void strict_quotes(sqlite3 *db)
{
    SQ.sqlite3_db_config(db, SQLITE_DBCONFIG_DQS_DML, 0, (int *)NULL);
    SQ.sqlite3_db_config(db, SQLITE_DBCONFIG_DQS_DDL, 0, (int *)NULL);
}

/* ---- schema listing ------------------------------------------------------ */
int tl_sql_schema(tl_store *s, tl_table **out, tl_err *err)
{
    sqlctx c;
    memset(&c, 0, sizeof c);
    int rc = tl_reader_open(s, &c.r, err);
    if (rc) return rc;
    if ((rc = aq_catalog_load(c.r, &c.cat, err))) { tl_reader_close(c.r); return rc; }
    c.meta_def = *trace_def(AQ_S_META, NULL);
    c.meta_def.name = "metadata";
    tl_table *t = tl_table_new("schema");
    enum { C_TABLE, C_COLUMN, C_TYPE, C_HIDDEN, C_ALIAS, C_DOC };
    static const char *const NAMES[] = {"table", "column", "type", "hidden", "alias_of", "description"};
    for (size_t k = 0; k < sizeof NAMES / sizeof *NAMES; k++) tl_table_add_col(t, NAMES[k], TL_STR);
    tl_arena a;
    tl_arena_init(&a, 4096);
    for (size_t i = 0; aq_table_at(i); i++) {
        const aq_tabdef *tab = aq_table_at(i);
        vcol_vec cols = {0};
        table_cols(&c, tab, &cols, &a);
        for (size_t k = 0; k < cols.n; k++) {
            const vcol *v = &cols.v[k];
            size_t r = tl_table_add_row(t);
            tl_table_set_str(t, C_TABLE, r, tab->name);
            tl_table_set_str(t, C_COLUMN, r, v->sqlname);
            tl_table_set_str(t, C_TYPE, r, sql_type(v->ref.def->type));
            tl_table_set_str(t, C_HIDDEN, r, v->hidden ? "yes" : "no");
            tl_table_set_str(t, C_ALIAS, r, v->alias_of ? v->alias_of : "");
            const char *doc = v->ref.def->doc;
            if (v->ref.def->src == AQ_S_LABEL) doc = "user label (ingest --label, tracelens label)";
            else if (&c.meta_def == v->ref.def) doc = "the trace's top-level metadata (JSON text)";
            tl_table_set_str(t, C_DOC, r, doc ? doc : "");
        }
        tl_vec_free(&cols);
    }
    tl_arena_free(&a);
    aq_catalog_free(&c.cat);
    tl_reader_close(c.r);
    *out = t;
    return TL_OK;
}

/* ---- connection ---------------------------------------------------------- */
int tl_sql_open(tl_store *s, const atomic_int *cancel, sqlite3 **dbp, tl_err *err)
{
    *dbp = NULL;
    int rc = tl_lazylib_bind(&SQ_lib, &SQ, err);
    if (rc) return rc;
    sqlctx *c = tl_xcalloc(1, sizeof *c);
    c->s = s;
    c->cancel = cancel;
    rc = tl_reader_open(s, &c->r, err);
    if (rc) { free(c); return rc; }
    if ((rc = aq_catalog_load(c->r, &c->cat, err))) { tl_reader_close(c->r); free(c); return rc; }
    const aq_coldef *md = trace_def(AQ_S_META, NULL);
    c->meta_def = *md;
    c->meta_def.name = "metadata";
    for (size_t i = 0; i < c->cat.v.n; i++) {
        for (int k = 0; k < TL_K_COUNT; k++) c->kind_rows[k] += (double)c->cat.v.v[i].kinds[k];
        c->all_rows += (double)c->cat.v.v[i].events;
    }
    sqlite3 *db;
    if (SQ.sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        ctx_unref(c);
        return tl_errf(err, TL_ENOMEM, "cannot open SQLite");
    }
    c->refs = 1; /* dropped below once every module holds its own reference */
    for (size_t i = 0; aq_table_at(i); i++) {
        vmod *m = tl_xmalloc(sizeof *m);
        m->c = c;
        m->tab = aq_table_at(i);
        c->refs++;
        if (SQ.sqlite3_create_module_v2(db, m->tab->name, &MODULE, m, vmod_free) != SQLITE_OK) {
            rc = tl_errf(err, TL_ESTORE, "SQLite: %s", SQ.sqlite3_errmsg(db));
            SQ.sqlite3_close(db);
            ctx_unref(c);
            return rc;
        }
    }
    ctx_unref(c);
    read_only(db);
    strict_quotes(db);
    SQ.sqlite3_create_function(db, "regexp", 2, SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS, NULL, fn_regexp, NULL, NULL);
    *dbp = db;
    return TL_OK;
}

void tl_sql_close(sqlite3 *db)
{
    if (db) SQ.sqlite3_close(db);
}

void tl_sql_interrupt(sqlite3 *db)
{
    if (db) SQ.sqlite3_interrupt(db);
}

typedef struct cell {
    int type;
    int64_t i;
    double f;
    char *s;
} cell;

/* Prepares the statement at tail (sql: the whole text, for the caret),
 * refusing one that would write. *st NULL: nothing to run. */
static int prepare_read(sqlite3 *db, const char *sql, const char *tail, sqlite3_stmt **st, const char **next,
                        tl_err *err)
{
    refused[0] = 0;
    *st = NULL;
    if (SQ.sqlite3_prepare_v2(db, tail, -1, st, next) != SQLITE_OK) {
        if (refused[0]) return tl_errf(err, TL_EUSAGE, "sql: only reading is allowed (%s refused)", refused);
        int off = SQ.sqlite3_error_offset(db);
        const char *msg = SQ.sqlite3_errmsg(db);
        if (off < 0) return tl_errf(err, TL_EUSAGE, "sql: %s", msg);
        int pos = (int)(tail - sql) + off, len = 1;
        while (sql[pos + len] && (isalnum((unsigned char)sql[pos + len]) || sql[pos + len] == '_')) len++;
        return aq_errtok(err, "sql", sql, pos, len, "%s", msg);
    }
    if (*st && !SQ.sqlite3_stmt_readonly(*st)) {
        char word[32];
        first_word(SQ.sqlite3_sql(*st), word, sizeof word);
        SQ.sqlite3_finalize(*st);
        *st = NULL;
        return tl_errf(err, TL_EUSAGE, "sql: only reading is allowed (%s refused)", word[0] ? word : "statement");
    }
    return TL_OK;
}

int tl_sql_query(sqlite3 *db, const char *sql, tl_table **out, tl_err *err)
{
    *out = NULL;
    const char *tail = sql;
    tl_table *result = NULL;
    while (tail && *tail) {
        while (*tail && isspace((unsigned char)*tail)) tail++;
        if (!*tail) break;
        sqlite3_stmt *st = NULL;
        const char *next = NULL;
        int rc = prepare_read(db, sql, tail, &st, &next, err);
        if (rc) {
            tl_table_free(result);
            return rc;
        }
        if (!st) { tail = next; continue; } /* a comment or empty statement */
        int ncol = SQ.sqlite3_column_count(st);
        TL_VEC(cell) cells = {0};
        size_t nrows = 0;
        while ((rc = SQ.sqlite3_step(st)) == SQLITE_ROW) {
            for (int k = 0; k < ncol; k++) {
                cell cl = {SQ.sqlite3_column_type(st, k), 0, 0, NULL};
                if (cl.type == SQLITE_INTEGER) cl.i = SQ.sqlite3_column_int64(st, k);
                else if (cl.type == SQLITE_FLOAT) cl.f = SQ.sqlite3_column_double(st, k);
                else if (cl.type != SQLITE_NULL) cl.s = tl_xstrdup((const char *)SQ.sqlite3_column_text(st, k));
                tl_vec_push(&cells, cl);
            }
            nrows++;
        }
        if (rc != SQLITE_DONE) {
            int code = rc == SQLITE_INTERRUPT ? TL_EINTR_ADHOC : TL_EUSAGE;
            int r = tl_errf(err, code, "sql: %s", rc == SQLITE_INTERRUPT ? "interrupted" : SQ.sqlite3_errmsg(db));
            for (size_t i = 0; i < cells.n; i++) free(cells.v[i].s);
            tl_vec_free(&cells);
            SQ.sqlite3_finalize(st);
            tl_table_free(result);
            return r;
        }
        if (ncol > 0) {
            tl_table_free(result);
            result = tl_table_new("sql");
            for (int k = 0; k < ncol; k++) {
                /* column type: integers, else numbers, else text */
                int any_text = 0, any_float = 0;
                for (size_t r = 0; r < nrows; r++) {
                    int ty = cells.v[r * (size_t)ncol + (size_t)k].type;
                    any_text |= ty == SQLITE_TEXT || ty == SQLITE_BLOB;
                    any_float |= ty == SQLITE_FLOAT;
                }
                tl_type tt = any_text ? TL_STR : any_float ? TL_F64 : TL_I64;
                const char *nm = SQ.sqlite3_column_name(st, k);
                size_t col = tl_table_add_col(result, nm ? nm : "?", tt);
                tl_table_set_nrows(result, nrows);
                for (size_t r = 0; r < nrows; r++) {
                    const cell *cl = &cells.v[r * (size_t)ncol + (size_t)k];
                    if (cl->type == SQLITE_NULL) continue;
                    if (tt == TL_I64) tl_table_set_i64(result, col, r, cl->i);
                    else if (tt == TL_F64) tl_table_set_f64(result, col, r, cl->type == SQLITE_INTEGER ? (double)cl->i : cl->f);
                    else if (cl->s) tl_table_set_str(result, col, r, cl->s);
                    else {
                        char b[40];
                        if (cl->type == SQLITE_INTEGER) snprintf(b, sizeof b, "%lld", (long long)cl->i);
                        else tl_fmt_pyfloat(cl->f, b);
                        tl_table_set_str(result, col, r, b);
                    }
                }
            }
            tl_table_set_nrows(result, nrows);
        }
        for (size_t i = 0; i < cells.n; i++) free(cells.v[i].s);
        tl_vec_free(&cells);
        SQ.sqlite3_finalize(st);
        tail = next;
    }
    *out = result ? result : tl_table_new("sql");
    return TL_OK;
}
