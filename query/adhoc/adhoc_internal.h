/* adhoc_internal.h — what the verb engine (adhoc_*.c) and the SQLite
 * virtual tables (sqlvtab.c) share: the table/column schema, catalog
 * records of traces, per-trace column access that decodes only the columns
 * a query names, value vectors over a row selection, the where-expression
 * tree, and a text pool that gives strings from different traces (whose
 * dictionary ids differ) one identity. Not part of the module's API. */
#ifndef TL_ADHOC_INTERNAL_H
#define TL_ADHOC_INTERNAL_H

#include <regex.h>
#include <stdint.h>
#include <stddef.h>
#include "query/adhoc/adhoc.h"
#include "query/core/trace.h"
#include "ingest/schema.h"
#include "query/core/packed.h"
#include "query/core/stats.h"

/* ---- schema ------------------------------------------------------------ */
typedef enum aq_type {
    AQ_INT = 1,   /* int64; null = INT64_MIN */
    AQ_FLOAT = 2, /* double; null = NaN */
    AQ_STR = 3,   /* text; null = NULL */
    AQ_DYN = 4,   /* text that compares as a number against number literals */
} aq_type;

typedef enum aq_src {
    /* trace-level: one value per trace, from the catalog */
    AQ_S_TRACE_ID = 1, AQ_S_PATH, AQ_S_FORMAT, AQ_S_CONFIG, AQ_S_RANK, AQ_S_RUN,
    AQ_S_INGEST_TIME, AQ_S_INGESTED, AQ_S_LABEL, AQ_S_META, AQ_S_CATNUM, AQ_S_KINDCOUNT,
    AQ_S_GPU_SPAN,
    AQ_S_TRACE_LAST = 99,
    /* row-level: events columns */
    AQ_S_I64 = 100, /* i64 store column, TL_NONE = null */
    AQ_S_U32,       /* u32 store column (uid) */
    AQ_S_U8,        /* u8 store column (linked) */
    AQ_S_STR,       /* u32 string id, 0 = null */
    AQ_S_KIND,      /* u8 tl_kind shown as its category name */
    AQ_S_ROWUID,    /* i32 row index shown as the uid of that row, -1 = null */
    AQ_S_ROWNAME,   /* i32 row index shown as the name of that row */
    AQ_S_BLOB,      /* args JSON text */
    AQ_S_IDTEXT,    /* pid / tid: number or string id by idflags */
    AQ_S_END,       /* ts + dur */
    AQ_S_KTIME,     /* ops: sum of dur of the kernels it launched */
    AQ_S_KCOUNT,    /* ops: number of kernels it launched */
    AQ_S_ARGKEY,    /* args.KEY: one key of the args JSON */
    /* report sheets */
    AQ_S_REPCOL = 200,
} aq_src;

typedef struct aq_coldef {
    const char *name;
    aq_type type;
    aq_src src;
    const char *store;  /* store column, catalog key, or report column header */
    const char *doc;
} aq_coldef;

enum { AQ_TAB_ROWS = 0, AQ_TAB_TRACES = 1, AQ_TAB_REPORT = 2 };

typedef struct aq_tabdef {
    const char *name;
    int kind;           /* AQ_TAB_* */
    int kind_filter;    /* rows: -1 every event, else the tl_kind kept */
    const aq_coldef *cols;
    size_t ncols;
    const char *default_select; /* comma list for row output */
    const char *doc;
} aq_tabdef;

const aq_tabdef *aq_table_find(const char *name);
const aq_tabdef *aq_table_at(size_t i); /* NULL past the end */
/* Trace-level columns every table has. */
const aq_coldef *aq_trace_cols(size_t *n);

/* A resolved column reference. */
typedef struct aq_colref {
    const aq_coldef *def;
    char *arg;      /* label key, meta path or args key (AQ_S_LABEL/META/ARGKEY) */
    char *display;  /* output name */
} aq_colref;

static inline int aq_is_trace_level(const aq_colref *c) { return c->def->src < AQ_S_TRACE_LAST; }

/* Resolves a column name for a table: exact, then case-insensitive, then
 * normalised (lower case, runs of non-alphanumerics as '_'); label.K /
 * label_K, meta.PATH, args.KEY are dynamic. Returns 0 or -1 with a
 * "did you mean" hint in hint (may be empty). */
int aq_resolve_col(const aq_tabdef *t, const char *name, aq_colref *out, tl_arena *a, char *hint,
                   size_t hintsz);
/* Normalised form used by resolution and by SQL column names. */
void aq_norm_name(const char *s, char *out, size_t n);
/* The column of a result or report table by name: exact, then
 * case-insensitive, then normalised (aq_norm_name); -1 when none. */
long aq_table_col_named(const tl_table *t, const char *name);

/* ---- catalog ------------------------------------------------------------ */
typedef struct aq_trace {
    uint64_t id;
    char hex[17];
    const char *json;    /* catalog text, valid while the main reader is open */
    char *path, *format, *config, *run; /* NULL = null */
    int64_t rank;        /* INT64_MIN = null */
    int64_t ingest_ns, events, gpu_events, flows, source_bytes;
    int64_t ts_min, ts_max, gpu_ts_min, gpu_ts_max;
    int64_t kinds[TL_K_COUNT];
    size_t nlabels;
    char **lkey, **lval;
} aq_trace;

typedef struct aq_catalog {
    TL_VEC(aq_trace) v;
    TL_VEC(char *) label_keys; /* union over every trace, sorted */
    tl_arena arena;
} aq_catalog;

int aq_catalog_load(tl_reader *r, aq_catalog *c, tl_err *err);
void aq_catalog_free(aq_catalog *c);
const char *aq_trace_label(const aq_trace *t, const char *key); /* NULL if absent */
/* Raw JSON value of a dotted path inside the catalog "metadata" object
 * (decoded into out as text: strings unquoted, numbers/objects verbatim).
 * Returns 0 when found. */
int aq_trace_meta(const aq_trace *t, const char *path, tl_buf *out);

/* What a selection over one process's stores leaves to be decided over
 * every process's (query --mpi, share.c): each trace-id selector's
 * matches here ("no such trace" and "ambiguous" are judged over all of
 * them) and last:N, applied to the union. */
typedef struct aq_id_alt {
    char *sel, *val;           /* the selector and the id (prefix) it names */
    TL_VEC(uint64_t) hits;     /* ids of the traces here that it matched */
} aq_id_alt;
typedef struct aq_select_global {
    TL_VEC(aq_id_alt) ids;
    int64_t last;              /* last:N, or -1 */
} aq_select_global;
void aq_select_global_free(aq_select_global *g);

/* Applies --trace selectors: keep[i] = 0 for traces that fail. With g,
 * the id checks and last:N are left to aq_share_selection (g records
 * them). */
int aq_select_traces(tl_reader *r, const aq_catalog *c, const char *const *sel, size_t nsel,
                     uint8_t *keep, aq_select_global *g, tl_err *err);

/* ---- one selection over every process's stores (share.c) ---------------- */
/* Makes keep[] this process's share of the selection over all processes:
 * exchanges (share->allgather) whether each process could read its
 * stores (failed: its error code, else 0), the id selectors' matches, the
 * label keys and the (id, ingest time) of each process's kept traces;
 * then checks the id selectors as one store would, keeps one copy of a
 * trace held by several processes (the lowest process's, as a store list
 * keeps its first shard's), applies last:N to the union and replaces the
 * catalog's label keys with the union of all. Every process must call it,
 * failed or not; all return the same status. */
int aq_share_selection(const tl_adhoc_share *share, int failed, aq_catalog *c, uint8_t *keep,
                       const aq_select_global *g, tl_err *err);

/* JSON helpers over catalog text. */
const char *aq_json_skip(const char *p, const char *end);       /* one value */
const char *aq_json_ws(const char *p, const char *end);
/* Decodes a JSON string starting at p (the quote); appends to out; returns past it. */
const char *aq_json_str(const char *p, const char *end, tl_buf *out);

/* ---- text pool: one id per distinct text across all traces -------------- */
typedef struct aq_pool {
    tl_arena *arena;        /* where texts live (the result table's arena) */
    const char **text;      /* id -> text; id 0 unused (null) */
    size_t n, cap;
    tl_hidx idx;            /* text -> id */
} aq_pool;
void aq_pool_init(aq_pool *p, tl_arena *a);
void aq_pool_free(aq_pool *p);
uint32_t aq_pool_intern(aq_pool *p, const char *s, size_t n);

/* ---- per-trace column access -------------------------------------------- */
typedef struct aq_chunks {
    tl_ctype type;
    size_t nchunks;
    tl_colview *v;
    uint64_t *start;   /* nchunks+1 row starts */
    uint64_t n;
} aq_chunks;

/* Static dictionary of kind names (id = tl_kind). */
const tl_dict *aq_kind_dict(void);

typedef struct aq_tctx {
    tl_reader *r;
    const aq_trace *t;
    tl_arena arena;       /* per-trace scratch; freed by aq_tctx_end */
    uint64_t nrows;       /* event rows (or report rows) */
    int have_dict;
    tl_dict dict;
    struct { const char *name; aq_chunks ch; } cache[40];
    int ncache;
    int64_t *ktime, *kcount; /* derived per event row (lazy) */
    tl_table *report;        /* report sheet of this trace (report tables) */
    void *report_owner;      /* freed with the context */
    void (*report_free)(void *);
} aq_tctx;

int aq_tctx_begin(aq_tctx *x, tl_store *s, const aq_trace *t, tl_err *err);
void aq_tctx_end(aq_tctx *x);
int aq_tctx_chunks(aq_tctx *x, const char *col, const aq_chunks **out, tl_err *err);
int aq_tctx_dict(aq_tctx *x, tl_err *err);
/* Rows of a trace that a table keeps (kind filter): *rows (arena), *m. */
int aq_tctx_rows(aq_tctx *x, const aq_tabdef *tab, uint32_t **rows, size_t *m, tl_err *err);
/* Loads the report sheet of a report table (x->report; NULL when the trace
 * has none, e.g. no GPU events or not a PyTorch trace). */
int aq_tctx_report(aq_tctx *x, const aq_tabdef *tab, tl_err *err);
/* Random access to one value of a fixed-width chunked column. */
int64_t aq_chunks_get(const aq_chunks *c, uint64_t row);

/* A column's values over a row selection. */
typedef enum { AQ_V_I64 = 1, AQ_V_F64, AQ_V_SID, AQ_V_TEXT } aq_vtype;
typedef struct aq_vec {
    aq_vtype vt;
    int konst;            /* one value for every row (stored at [0]) */
    size_t n;
    int64_t *i;
    double *f;
    uint32_t *s;          /* AQ_V_SID: ids into dict, 0 = null */
    const tl_dict *dict;
    const char **t;       /* AQ_V_TEXT: NULL = null */
} aq_vec;

/* Values of column c over rows[0..m) (sorted ascending) of trace x. */
int aq_vec_get(aq_tctx *x, const aq_colref *c, const uint32_t *rows, size_t m, aq_vec *out,
               tl_err *err);
/* Text of element i ("" never: NULL for null). */
static inline const char *aq_vec_text(const aq_vec *v, size_t i)
{
    size_t k = v->konst ? 0 : i;
    if (v->vt == AQ_V_TEXT) return v->t[k];
    if (v->vt == AQ_V_SID) return v->s[k] ? tl_dict_get(v->dict, v->s[k], NULL) : NULL;
    return NULL;
}
/* Trace-level value as a one-element vector. */
int aq_trace_value(const aq_trace *t, const aq_colref *c, tl_arena *a, aq_vec *out);

/* ---- expressions ------------------------------------------------------- */
typedef enum { AQ_E_AND = 1, AQ_E_OR, AQ_E_NOT, AQ_E_CMP, AQ_E_IN, AQ_E_NULL } aq_etype;
typedef enum {
    AQ_OP_EQ = 1, AQ_OP_NE, AQ_OP_LT, AQ_OP_LE, AQ_OP_GT, AQ_OP_GE,
    AQ_OP_RE, AQ_OP_NRE, AQ_OP_CONTAINS, AQ_OP_LIKE,
} aq_op;

typedef struct aq_lit {
    int isnum, isint;
    int64_t i;
    double f;
    char *s;      /* text form (strings; numbers as written) */
} aq_lit;

typedef struct aq_expr aq_expr;
struct aq_expr {
    aq_etype t;
    aq_expr *a, *b;        /* AND/OR/NOT children */
    aq_colref col;
    aq_op op;
    int icase, negate;     /* ~* and LIKE / NOT IN, IS NOT NULL */
    aq_lit lit;
    aq_lit *list;          /* IN */
    size_t nlist;
    regex_t re;
    int has_re;
    int trace_level;       /* every column below is trace-level */
};

typedef struct aq_parse_ctx {
    const aq_tabdef *tab;
    const char *what;      /* "--where", "--by", ... for messages */
    const char *text;
    tl_arena *arena;
} aq_parse_ctx;

int aq_parse_where(aq_parse_ctx *pc, aq_expr **out, tl_err *err);
void aq_expr_free(aq_expr *e);  /* regexes */
/* Evaluates e over rows: mask[i] = 1 where it holds. */
int aq_expr_eval(aq_tctx *x, const aq_expr *e, const uint32_t *rows, size_t m, uint8_t *mask,
                 tl_err *err);
/* Evaluates a trace-level expression on a catalog record. */
int aq_expr_eval_trace(const aq_trace *t, const aq_expr *e, tl_arena *a);

/* Aggregate functions. */
typedef enum {
    AQ_A_COUNT = 1, AQ_A_SUM, AQ_A_MEAN, AQ_A_MIN, AQ_A_MAX, AQ_A_MEDIAN, AQ_A_PCT, AQ_A_STD,
    AQ_A_NUNIQUE,
} aq_afn;

typedef struct aq_aggdef {
    aq_afn fn;
    double q;         /* AQ_A_PCT: 0..1 */
    int star;         /* count(*) */
    aq_colref col;
    char *name;       /* output column name */
} aq_aggdef;

/* "col, col" lists (backticks quote names with spaces or commas). */
int aq_parse_cols(aq_parse_ctx *pc, aq_colref **out, size_t *n, tl_err *err);
int aq_parse_aggs(aq_parse_ctx *pc, aq_aggdef **out, size_t *n, tl_err *err);
typedef struct aq_sortkey { char *name; int desc; int pos, len; } aq_sortkey;
int aq_parse_sort(aq_parse_ctx *pc, aq_sortkey **out, size_t *n, tl_err *err);

/* Formats a usage error pointing at text[pos..pos+len). */
int aq_errtok(tl_err *err, const char *what, const char *text, int pos, int len, const char *fmt,
              ...) __attribute__((format(printf, 6, 7)));

/* Whether a column holds ns times (units.c). */
int aq_colref_is_time(const aq_colref *c);
/* The side-by-side form of a grouped result t whose columns are the group
 * keys, then the pivot column pcol, then nagg aggregates (pivot.c; see
 * tl_adhoc_query.pivot); prefix starts each value column's name. src[i] gets the column of t that output column i
 * comes from; src holds pcol + nagg * (distinct pivot values) entries
 * (t->ncols * t->nrows suffices). */
tl_table *aq_pivot(const tl_table *t, size_t pcol, size_t nagg, const char *prefix, size_t *src);

/* SQL-style LIKE (case-insensitive ASCII, % and _), as SQLite does it. */
int aq_like(const char *pat, const char *s);

/* ---- plan (plan.c) ------------------------------------------------------- */
typedef struct aq_plan {
    const aq_tabdef *tab;
    aq_expr *where;
    aq_colref *by;
    size_t nby;
    aq_aggdef *agg;
    size_t nagg;
    aq_colref *sel;
    size_t nsel;
    aq_sortkey *sort;
    size_t nsort;
    int group_mode;
    int pivot;          /* the last by column is --pivot's */
    int64_t limit;
    tl_arena arena;
} aq_plan;

/* Parses the query's flags into p (its arena holds what it parses); 0 or
 * TL_EUSAGE with a message pointing at the token. p is freed either way
 * with aq_plan_free. */
int aq_plan_build(const tl_adhoc_query *q, aq_plan *p, tl_err *err);
void aq_plan_free(aq_plan *p);
/* The result column type of a column. */
tl_type aq_out_type(const aq_colref *c);
/* Sorts t by the --sort keys (groups: default the first aggregate, largest
 * first; the group keys break ties) and keeps the first --top rows. */
int aq_sort_and_limit(aq_plan *p, tl_table *t, const char *sort_text, tl_err *err);
/* The sorted result's last steps: the pivot (and then the limit on its
 * rows) and the time unit. Returns the table to hand out (t or its
 * pivoted replacement). */
tl_table *aq_finish(const aq_plan *p, const tl_adhoc_query *q, tl_table *t);

/* ---- group accumulators (groups.c) ------------------------------------------ */
typedef struct aq_acc {
    int isint;               /* numeric input is int64 */
    int64_t *cnt;
    int64_t *isum;
    double *fsum;
    int64_t *imin, *imax;
    double *fmin, *fmax;
    tl_welford *w;           /* std */
    TL_VEC(double) * vals;   /* median / percentiles */
    tl_bmap set;             /* nunique */
} aq_acc;

typedef struct aq_gstate {
    size_t nkeys, nagg;
    uint64_t *keys;          /* ng * nkeys codes */
    size_t ng, cap;
    tl_hidx idx;             /* key codes -> group id */
    aq_acc *acc;             /* one per aggregate */
} aq_gstate;

void aq_gstate_init(aq_gstate *g, const aq_plan *p);
void aq_gstate_free(aq_gstate *g);
/* The group of a tuple of key codes (p->nby of them), made when new. */
uint32_t aq_group_of(aq_gstate *g, const aq_plan *p, const uint64_t *codes);
/* Records code c in group g of a nunique accumulator's set. */
void aq_nunique_add(tl_bmap *s, uint32_t g, uint64_t c);
/* Folds src's groups into dst (both of plan p, codes of one text pool). */
void aq_gstate_merge(aq_gstate *dst, const aq_gstate *src, const aq_plan *p);
/* The result rows of g in t: the group keys (texts from pool), then one
 * column per aggregate. */
void aq_gstate_table(const aq_gstate *g, const aq_plan *p, const aq_pool *pool, tl_table *t);
/* g as bytes for another process: keys and distinct values of text
 * columns as text, accumulators as numbers (groups in order). */
void aq_gstate_pack(tl_buf *b, const aq_gstate *g, const aq_plan *p, const aq_pool *pool);
/* Reads a packed g into g, fresh from aq_gstate_init (texts interned in
 * pool); 0 or TL_EFORMAT (in->bad) when the bytes are malformed. */
int aq_gstate_unpack(tl_unpack *in, aq_gstate *g, const aq_plan *p, aq_pool *pool);

/* ---- partial answers (part.c; tl_adhoc_run_part) ----------------------- */
/* A read error instead of an answer. */
void aq_part_put_error(tl_buf *b, int code, const char *msg);
void aq_part_put_groups(tl_buf *b, const aq_gstate *g, const aq_plan *p, const aq_pool *pool);
/* Row output t, made of nblocks traces' rows in trace order: trace ids[i]
 * gave rows[i] rows. */
void aq_part_put_rows(tl_buf *b, const uint64_t *ids, const uint64_t *rows, size_t nblocks, const tl_table *t);

#endif
