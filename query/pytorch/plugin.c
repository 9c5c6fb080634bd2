/* plugin.c — host side of the report's plugin interface (query/pytorch/plugin.h):
 * dlopen a shared object, call its registration function with a table of
 * callbacks, keep what it registered (categories, perf models, extra
 * tables) and run the extra tables over a trace. The plugin never links
 * against tracelens: everything it may call is in the api struct. */
#include "query/pytorch/plugin.h"
#include "query/pytorch/pytorch_internal.h"

#include <dlfcn.h>
#include <stdlib.h>

typedef struct plug_table {
    char *name;
    tl_plugin_table_fn fn;
    void *user;
} plug_table;

struct tl_plugin_set {
    TL_VEC(void *) handles;
    TL_VEC(char *) cat_op;
    TL_VEC(char *) cat_name;
    TL_VEC(tl_plugin_perf_model) models;
    TL_VEC(plug_table) tables;
    const char *loading; /* path being registered, for log messages */
};

static char *dupz(const char *s) { return tl_xstrdup(s ? s : ""); }

static void h_add_category(void *host, const char *op, const char *category)
{
    tl_plugin_set *s = host;
    if (!op || !category) return;
    tl_vec_push(&s->cat_op, dupz(op));
    tl_vec_push(&s->cat_name, dupz(category));
}

static void h_add_perf_model(void *host, const tl_plugin_perf_model *m)
{
    tl_plugin_set *s = host;
    if (!m || !m->op || !m->eval) return;
    tl_plugin_perf_model c = *m;
    c.op = dupz(m->op);
    c.category = dupz(m->category ? m->category : "other");
    c.sheet = m->sheet ? dupz(m->sheet) : NULL;
    c.compute_spec = m->compute_spec ? dupz(m->compute_spec) : NULL;
    tl_vec_push(&s->models, c);
}

static void h_add_table(void *host, const char *name, tl_plugin_table_fn fn, void *user)
{
    tl_plugin_set *s = host;
    if (!name || !fn) return;
    plug_table t = {dupz(name), fn, user};
    tl_vec_push(&s->tables, t);
}

static void h_log(void *host, const char *msg)
{
    tl_plugin_set *s = host;
    fprintf(stderr, "tracelens: plugin %s: %s\n", s->loading ? s->loading : "", msg ? msg : "");
}

/* ---- services over a trace ------------------------------------------------ */

typedef struct plug_view {
    const tl_trace *t;
    pyt_ctx *c;
    tl_buf arg;
} plug_view;

static const char *s_event_name(const tl_plugin_trace *pt, size_t row)
{
    const plug_view *v = pt->impl;
    return row < v->t->n ? tl_trace_str(v->t, v->t->name[row]) : "";
}

static const char *s_event_cat(const tl_plugin_trace *pt, size_t row)
{
    const plug_view *v = pt->impl;
    return row < v->t->n ? tl_trace_str(v->t, v->t->cat[row]) : "";
}

static const char *s_event_arg(const tl_plugin_trace *pt, size_t row, const char *key)
{
    plug_view *v = (plug_view *)pt->impl;
    if (row >= v->t->n || !key) return NULL;
    size_t len, vl;
    const char *args = tl_trace_args(v->t, row, &len);
    const char *val = tl_args_get(args, len, key, &vl);
    if (!val) return NULL;
    v->arg.n = 0;
    tl_buf_append(&v->arg, val, vl);
    tl_buf_putc(&v->arg, 0);
    return v->arg.p;
}

static double s_busy(const tl_plugin_trace *pt, const int32_t *rows, size_t n)
{
    const plug_view *v = pt->impl;
    for (size_t i = 0; i < n; i++)
        if (rows[i] < 0 || (size_t)rows[i] >= v->t->n) return NAN;
    return pyt_busy(v->c, rows, n);
}

static size_t s_col_str(tl_table *t, const char *n) { return tl_table_add_col(t, n, TL_STR); }
static size_t s_col_i64(tl_table *t, const char *n) { return tl_table_add_col(t, n, TL_I64); }
static size_t s_col_f64(tl_table *t, const char *n) { return tl_table_add_col(t, n, TL_F64); }
static size_t s_add_row(tl_table *t) { return tl_table_add_row(t); }
static void s_set_str(tl_table *t, size_t c, size_t r, const char *s)
{
    if (c < t->ncols && r < t->nrows && t->cols[c].type == TL_STR) tl_table_set_str(t, c, r, s);
}
static void s_set_i64(tl_table *t, size_t c, size_t r, int64_t x)
{
    if (c < t->ncols && r < t->nrows && t->cols[c].type == TL_I64) tl_table_set_i64(t, c, r, x);
}
static void s_set_f64(tl_table *t, size_t c, size_t r, double x)
{
    if (c < t->ncols && r < t->nrows && t->cols[c].type == TL_F64) tl_table_set_f64(t, c, r, x);
}

static const tl_plugin_api g_api = {
    .abi = TL_PLUGIN_ABI,
    .add_category = h_add_category,
    .add_perf_model = h_add_perf_model,
    .add_table = h_add_table,
    .log = h_log,
    .event_name = s_event_name,
    .event_cat = s_event_cat,
    .event_arg = s_event_arg,
    .busy_time_us = s_busy,
    .col_str = s_col_str,
    .col_i64 = s_col_i64,
    .col_f64 = s_col_f64,
    .add_row = s_add_row,
    .set_str = s_set_str,
    .set_i64 = s_set_i64,
    .set_f64 = s_set_f64,
};

/* ---- host API ---------------------------------------------------------------- */

tl_plugin_set *tl_plugin_set_new(void) { return tl_xcalloc(1, sizeof(tl_plugin_set)); }

void tl_plugin_set_free(tl_plugin_set *s)
{
    if (!s) return;
    for (size_t i = 0; i < s->cat_op.n; i++) { free(s->cat_op.v[i]); free(s->cat_name.v[i]); }
    tl_vec_free(&s->cat_op);
    tl_vec_free(&s->cat_name);
    for (size_t i = 0; i < s->models.n; i++) {
        free((char *)s->models.v[i].op);
        free((char *)s->models.v[i].category);
        free((char *)s->models.v[i].sheet);
        free((char *)s->models.v[i].compute_spec);
    }
    tl_vec_free(&s->models);
    for (size_t i = 0; i < s->tables.n; i++) free(s->tables.v[i].name);
    tl_vec_free(&s->tables);
    /* handles stay open until here: registered callbacks live in them */
    for (size_t i = 0; i < s->handles.n; i++) dlclose(s->handles.v[i]);
    tl_vec_free(&s->handles);
    free(s);
}

int tl_plugin_is_plugin_path(const char *path)
{
    size_t n = strlen(path);
    return n > 3 && !strcmp(path + n - 3, ".so");
}

int tl_plugin_load(tl_plugin_set *s, const char *path, tl_err *err)
{
    if (!tl_plugin_is_plugin_path(path))
        return tl_errf(err, TL_EUSAGE, "%s: not a plugin (a plugin's name ends in .so)", path);
    /* dlopen searches the library path for a bare name; a plugin is a file */
    char buf[4096];
    if (!strchr(path, '/')) { snprintf(buf, sizeof buf, "./%s", path); path = buf; }
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) return tl_errf(err, TL_EIO, "cannot load plugin %s: %s", path, dlerror());
    tl_plugin_register_fn fn;
    *(void **)(&fn) = dlsym(h, TL_PLUGIN_REGISTER_SYMBOL);
    if (!fn) {
        dlclose(h);
        return tl_errf(err, TL_EFORMAT, "%s: no %s() — not a tracelens plugin", path,
                       TL_PLUGIN_REGISTER_SYMBOL);
    }
    tl_vec_push(&s->handles, h);
    s->loading = path;
    int rc = fn(&g_api, s);
    s->loading = NULL;
    if (rc) return tl_errf(err, TL_EFORMAT, "%s: registration failed (%d)", path, rc);
    return 0;
}

void tl_plugin_apply_categories(const tl_plugin_set *s, tl_catreg *r)
{
    if (!s) return;
    /* a plugin perf model brings its category (§6.1 a), explicit category
     * entries override it (§6.1 b) */
    for (size_t i = 0; i < s->models.n; i++) tl_catreg_set(r, s->models.v[i].op, s->models.v[i].category);
    for (size_t i = 0; i < s->cat_op.n; i++) tl_catreg_set(r, s->cat_op.v[i], s->cat_name.v[i]);
}

const tl_plugin_perf_model *tl_plugin_perf_model_for(const tl_plugin_set *s, const char *op)
{
    if (!s || !op) return NULL;
    /* later registrations win */
    for (size_t i = s->models.n; i-- > 0;)
        if (!strcmp(s->models.v[i].op, op)) return &s->models.v[i];
    return NULL;
}

size_t tl_plugin_nperf_models(const tl_plugin_set *s) { return s ? s->models.n : 0; }
const tl_plugin_perf_model *tl_plugin_perf_model_at(const tl_plugin_set *s, size_t i)
{
    return s && i < s->models.n ? &s->models.v[i] : NULL;
}

int tl_plugin_run_tables(const tl_plugin_set *s, const tl_trace *t, tl_pyt_sheets *out, tl_err *err)
{
    if (!s || !s->tables.n) return 0;
    tl_pyt_opts o;
    tl_pyt_opts_default(&o);
    o.quiet = 1;
    pyt_ctx c;
    tl_catreg *cr = tl_catreg_new();
    int rc = pyt_ctx_init(&c, t, &o, cr, err);
    if (rc) { pyt_ctx_free(&c); tl_catreg_free(cr); return rc; }
    /* launcher per GPU row, from the report's own attribution */
    int32_t *launcher = tl_xmalloc((t->n ? t->n : 1) * sizeof *launcher);
    for (size_t i = 0; i < t->n; i++) launcher[i] = -1;
    for (size_t j = 0; j < c.nl; j++)
        for (uint32_t k = c.l_koff[j]; k < c.l_koff[j + 1]; k++) launcher[c.l_k[k]] = c.l_row[j];
    plug_view v = {t, &c, {0}};
    tl_plugin_trace pt = {t->n, t->uid, t->ts, t->dur, t->kind, c.parent, launcher, &v};
    for (size_t i = 0; i < s->tables.n; i++) {
        tl_table *tab = tl_table_new(s->tables.v[i].name);
        int r = s->tables.v[i].fn(s->tables.v[i].user, &pt, tab);
        if (r) {
            fprintf(stderr, "tracelens: plugin table %s failed (%d); skipped\n", s->tables.v[i].name, r);
            tl_table_free(tab);
            continue;
        }
        if (!tab->ncols) { tl_table_free(tab); continue; }
        pyt_sheets_push(out, tab);
    }
    tl_buf_free(&v.arg);
    free(launcher);
    pyt_ctx_free(&c);
    tl_catreg_free(cr);
    return 0;
}
