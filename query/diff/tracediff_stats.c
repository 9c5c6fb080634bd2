/* tracediff_stats.c — what TraceDiff reports once the trees are merged
 * (spec diff-compare-phases.md A6-A10): diff_stats (one row per GPU event,
 * attributed to its lowest common ancestor), the unique-args summary with
 * pandas' compensated sums, the cpu-op <-> kernel maps and the renaming side
 * effects the reference files depend on, the per-LCA summary, the unified
 * sheet's enrichment and the file writer. */
#include "query/diff/tracediff_internal.h"
#include "query/core/interval.h"
#include "query/core/pyval.h"
#include "query/core/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct td_row {
    uint8_t side;             /* 0 trace1, 1 trace2 */
    int32_t gpu, cpu;         /* rows */
    double kt, busy;          /* kernel_time (raw dur), busy_time (rounded) */
    const char *lca;          /* NULL = null */
    int64_t lca_id;           /* -1 = null */
    int32_t lca_m;            /* merged LCA node (-1: none), for debug columns */
    int32_t root;             /* merged root index */
    const char *name, *cpu_name, *dims, *strides, *type, *conc, *nn_stack, *nn_parent;
} td_row;

typedef struct td_group {
    size_t first;             /* row of the first member (keys) */
    int64_t count;
    double sum, mean;
    const char *cpu_name;     /* after renaming */
    const char *nn_parent;    /* after space removal */
} td_group;

struct td_stats {
    TL_VEC(td_row) rows;
    TL_VEC(td_group) groups;  /* summary rows in output order */
    int identical, empty;
    int int_kt, int_busy;     /* kernel_time / busy_time are Python ints (int_text) */
    tl_table *stats;          /* as written (identical: trace1 rows, no source) */
    tl_table *stats_src;      /* always with source (the A10 sheet) */
    tl_table *summary;
    char *map1, *map2, *map;  /* JSON texts */
    const char **argtxt[2][4];/* per side, per arg kind: dict sid -> tuple text */
    tl_arena a;
};

static const char *SRC[2] = {"trace1", "trace2"};

/* ---- small helpers ------------------------------------------------------ */

static double busy_time(const td_side *s, const int32_t *ev, size_t n)
{
    if (!n) return 0.0;
    tl_fival *v = tl_xmalloc(n * sizeof *v);
    for (size_t i = 0; i < n; i++) v[i] = (tl_fival){s->ts_us[ev[i]], s->end_us[ev[i]]};
    double total = tl_fival_union_len(v, n);
    free(v);
    return total;
}

/* Are the trace's kernel_time (its durs) and busy_time (sums of end -
 * start) Python ints in the reference? They are when the trace writes
 * every dur (and ts) as a JSON integer, as old Kineto does; pandas then
 * prints those columns as integers ("2", not "2.0"). Unknown (a store
 * from before ingest recorded it): floats. */
static void int_text(const tl_trace *t, int *kt, int *busy)
{
    int ts_int, dur_int;
    if (!tl_trace_time_text(t, &ts_int, &dur_int)) ts_int = dur_int = 0;
    *kt = dur_int;
    *busy = ts_int && dur_int;
}

/* A time cell: an integer in an int64 column (whole values), else a float. */
static void set_time(tl_table *t, size_t col, size_t row, double v, int as_int)
{
    if (as_int) tl_table_set_i64(t, col, row, (int64_t)llround(v));
    else tl_table_set_f64(t, col, row, v);
}

/* numpy's round(x, 3): scale, round half to even, unscale. */
static double np_round3(double x) { return rint(x * 1000.0) / 1000.0; }

/* Display name with every "(<digits>)" removed (LCA names). */
static const char *strip_paren_digits(tl_arena *a, const char *s)
{
    size_t n = strlen(s);
    char *o = tl_arena_alloc(a, n + 1);
    size_t k = 0;
    for (size_t i = 0; i < n;) {
        if (s[i] == '(') {
            size_t j = i + 1;
            while (j < n && s[j] >= '0' && s[j] <= '9') j++;
            if (j > i + 1 && j < n && s[j] == ')') { i = j + 1; continue; }
        }
        o[k++] = s[i++];
    }
    o[k] = 0;
    return o;
}

static int32_t cpu_ancestor(const td_side *s, int32_t g)
{
    for (int32_t a = s->parent[g]; a >= 0; a = s->parent[a])
        if (s->fl[a] & TD_CPU) return a;
    return -1;
}

/* Parent op's arg k (0 dims, 1 strides, 2 type, 3 concrete) as Python tuple
 * text; "" when absent. */
static const char *arg_text(tl_diff *d, int side, int32_t cpu, int k)
{
    td_stats *st = d->st;
    const tl_trace *t = d->s[side].t;
    const uint32_t *col = k == 0 ? t->in_dims : k == 1 ? t->in_strides : k == 2 ? t->in_type : t->concrete;
    uint32_t sid = col[cpu];
    if (!sid) return "";
    if (!st->argtxt[side][k]) st->argtxt[side][k] = tl_xcalloc(d->s[side].dict_n + 1, sizeof(char *));
    if (sid <= d->s[side].dict_n && st->argtxt[side][k][sid]) return st->argtxt[side][k][sid];
    size_t len;
    const char *txt = tl_dict_get(&t->dict, sid, &len);
    char *out = NULL;
    tl_err e = {0};
    if (tl_pv_reformat(&st->a, txt, len, TL_PV_TUPLES, &out, &e) != 0) out = tl_arena_strndup(&st->a, txt, len);
    if (sid <= d->s[side].dict_n) st->argtxt[side][k][sid] = out;
    return out;
}

/* nn_module_stack of a cpu op: enclosing "nn.Module: X" python frames with a
 * trailing _<digits> removed, outermost first; "root" when none (always
 * without python functions). Returned joined with ';' plus the last one. */
static void nn_stack(tl_diff *d, int side, int32_t cpu, const char **joined, const char **last)
{
    const td_side *s = &d->s[side];
    *joined = *last = "root";
    if (!s->python) return;
    TL_VEC(const char *) names = {0};
    TL_VEC(size_t) lens = {0};
    for (int32_t a = s->parent[cpu]; a >= 0; a = s->parent[a]) {
        if (s->t->kind[a] != TL_K_PYTHON) continue;
        const char *nm = tl_trace_str(s->t, s->t->name[a]);
        if (!nm || strncmp(nm, "nn.Module: ", 11) != 0) continue;
        size_t n = strlen(nm), k = n;
        while (k > 0 && nm[k - 1] >= '0' && nm[k - 1] <= '9') k--;
        if (k < n && k > 0 && nm[k - 1] == '_') n = k - 1;
        tl_vec_push(&names, nm);
        tl_vec_push(&lens, n);
    }
    if (names.n) {
        tl_buf b = {0};
        for (size_t i = names.n; i-- > 0;) {
            tl_buf_append(&b, names.v[i], lens.v[i]);
            if (i) tl_buf_putc(&b, ';');
        }
        *joined = tl_arena_strndup(&d->st->a, b.p, b.n);
        *last = tl_arena_strndup(&d->st->a, names.v[0], lens.v[0]);
        tl_buf_free(&b);
    }
    tl_vec_free(&names);
    tl_vec_free(&lens);
}

/* ---- A6: rows ------------------------------------------------------------ */

typedef TL_VEC(int32_t) ivec;

static void emit(tl_diff *d, int side, const int32_t *ev, size_t n, const char *lca, int64_t lca_id,
                 int32_t lca_m, int32_t root)
{
    td_stats *st = d->st;
    const td_side *s = &d->s[side];
    double busy = np_round3(busy_time(s, ev, n));
    char buf[24];
    for (size_t i = 0; i < n; i++) {
        int32_t g = ev[i], cpu = cpu_ancestor(s, g);
        if (cpu < 0) continue;
        td_row r = {0};
        r.side = (uint8_t)side;
        r.gpu = g;
        r.cpu = cpu;
        r.kt = tl_trace_dur_us(s->t, g);
        r.busy = busy;
        r.lca = lca;
        r.lca_id = lca_id;
        r.lca_m = lca_m;
        r.root = root;
        r.name = tl_arena_strdup(&st->a, td_name(s, g, buf));
        r.cpu_name = tl_arena_strdup(&st->a, td_name(s, cpu, buf));
        r.dims = arg_text(d, side, cpu, 0);
        r.strides = arg_text(d, side, cpu, 1);
        r.type = arg_text(d, side, cpu, 2);
        r.conc = arg_text(d, side, cpu, 3);
        nn_stack(d, side, cpu, &r.nn_stack, &r.nn_parent);
        tl_vec_push(&st->rows, r);
    }
}

static int32_t node_u(const td_mnode *nd, int side) { return side ? nd->u2 : nd->u1; }

static void walk(tl_diff *d, uint8_t *visited, int32_t m, int32_t parent, int32_t root)
{
    if (visited[m]) return;
    const td_mnode *nd = &d->nodes.v[m];
    int on[2];
    for (int k = 0; k < 2; k++) {
        int32_t u = node_u(nd, k);
        on[k] = u >= 0 && (d->s[k].fl[u] & TD_ON);
    }
    td_stats *st = d->st;
    if (nd->type == TD_COMBINED) {
        if (on[0] && on[1]) {
            ivec N[2] = {{0}, {0}};
            for (uint32_t c = 0; c < nd->nk; c++) {
                int32_t k = d->mkids.v[nd->koff + c];
                const td_mnode *kn = &d->nodes.v[k];
                if (kn->type == TD_COMBINED) continue;
                for (int sd = 0; sd < 2; sd++) {
                    int32_t u = node_u(kn, sd);
                    if (u >= 0 && (d->s[sd].fl[u] & TD_ON)) tl_vec_push(&N[sd], k);
                }
            }
            int klike = (d->s[0].fl[nd->u1] & TD_KLIKE) && (d->s[1].fl[nd->u2] & TD_KLIKE);
            if (N[0].n || N[1].n || klike) {
                char b1[24], b2[24];
                const char *n1 = strip_paren_digits(&st->a, td_name(&d->s[0], nd->u1, b1));
                const char *n2 = strip_paren_digits(&st->a, td_name(&d->s[1], nd->u2, b2));
                const char *lca = strcmp(n1, n2) == 0 ? n1 : tl_arena_printf(&st->a, "%s | %s", n1, n2);
                for (int sd = 0; sd < 2; sd++) {
                    const td_side *s = &d->s[sd];
                    ivec ev = {0};
                    for (size_t c = 0; c < N[sd].n; c++) {
                        int32_t u = node_u(&d->nodes.v[N[sd].v[c]], sd);
                        for (uint32_t g = 0; g < s->nge[u]; g++) tl_vec_push(&ev, s->ge[u][g]);
                        if (s->fl[u] & TD_KLIKE) tl_vec_push(&ev, u);
                    }
                    int32_t own = node_u(nd, sd);
                    if (s->fl[own] & TD_KLIKE) tl_vec_push(&ev, own);
                    emit(d, sd, ev.v, ev.n, lca, m, m, root);
                    tl_vec_free(&ev);
                }
                visited[m] = 1;
                for (int sd = 0; sd < 2; sd++)
                    for (size_t c = 0; c < N[sd].n; c++) visited[N[sd].v[c]] = 1;
            }
            tl_vec_free(&N[0]);
            tl_vec_free(&N[1]);
        }
        if (on[0] || on[1])
            for (uint32_t c = 0; c < nd->nk; c++) walk(d, visited, d->mkids.v[nd->koff + c], m, root);
        return;
    }
    int sd = nd->type == TD_TRACE1 ? 0 : 1;
    if (!on[sd]) return;
    int32_t u = node_u(nd, sd);
    const char *lca = NULL;
    int64_t lid = -1;
    if (parent >= 0) {
        int32_t pu = node_u(&d->nodes.v[parent], sd);
        char b[24];
        if (pu >= 0) lca = strip_paren_digits(&st->a, td_name(&d->s[sd], pu, b));
        lid = parent;
    }
    emit(d, sd, d->s[sd].ge[u], d->s[sd].nge[u], lca, lid, parent, root);
}

/* ---- tables ------------------------------------------------------------- */

static int streq0(const char *a, const char *b)
{
    if (!a || !b) return a == b;
    return strcmp(a, b) == 0;
}

static int rows_same(const tl_diff *d, const td_row *a, const td_row *b)
{
    return strcmp(a->name, b->name) == 0 && strcmp(a->cpu_name, b->cpu_name) == 0 &&
           d->s[a->side].t->uid[a->cpu] == d->s[b->side].t->uid[b->cpu] && strcmp(a->dims, b->dims) == 0 &&
           strcmp(a->strides, b->strides) == 0 && strcmp(a->type, b->type) == 0 &&
           strcmp(a->conc, b->conc) == 0 && a->kt == b->kt && a->busy == b->busy && streq0(a->lca, b->lca) &&
           a->lca_id == b->lca_id && d->s[a->side].t->uid[a->gpu] == d->s[b->side].t->uid[b->gpu] &&
           strcmp(a->nn_stack, b->nn_stack) == 0 && strcmp(a->nn_parent, b->nn_parent) == 0;
}

static void join_gpu_kids(tl_diff *d, int sd, int32_t u, tl_buf *b)
{
    b->n = 0;
    const td_side *s = &d->s[sd];
    char nb[24];
    if (u < 0) return;
    int first = 1;
    for (uint32_t c = 0; c < s->nkids[u]; c++) {
        int32_t k = s->kids[u][c];
        if (!(s->fl[k] & TD_ON)) continue;
        if (!first) tl_buf_puts(b, "; ");
        tl_buf_puts(b, td_name(s, k, nb));
        first = 0;
    }
}

static tl_table *stats_table(tl_diff *d, int with_source, int only_trace1)
{
    td_stats *st = d->st;
    tl_table *t = tl_table_new("diff_stats");
    size_t c_name = tl_table_add_col(t, "name", TL_STR);
    size_t c_cpu = tl_table_add_col(t, "cpu_op_name", TL_STR);
    size_t c_cuid = tl_table_add_col(t, "cpu_op_uid", TL_I64);
    size_t c_src = with_source ? tl_table_add_col(t, "source", TL_STR) : 0;
    size_t c_dims = tl_table_add_col(t, "Input Dims", TL_STR);
    size_t c_str = tl_table_add_col(t, "Input Strides", TL_STR);
    size_t c_typ = tl_table_add_col(t, "Input type", TL_STR);
    size_t c_con = tl_table_add_col(t, "Concrete Inputs", TL_STR);
    size_t c_kt = tl_table_add_col(t, "kernel_time", st->int_kt ? TL_I64 : TL_F64);
    size_t c_busy = tl_table_add_col(t, "busy_time", st->int_busy ? TL_I64 : TL_F64);
    size_t c_lca = tl_table_add_col(t, "lowest_common_ancestor_name", TL_STR);
    size_t c_lid = tl_table_add_col(t, "lowest_common_ancestor_id", TL_I64);
    size_t c_guid = tl_table_add_col(t, "gpu_op_uid", TL_I64);
    size_t c_nns = tl_table_add_col(t, "nn_module_stack", TL_STR);
    size_t c_nnp = tl_table_add_col(t, "nn_module_parent", TL_STR);
    size_t c_dbg = 0;
    if (d->opts.debug) {
        c_dbg = tl_table_add_col(t, "lca_children_t1", TL_STR);
        tl_table_add_col(t, "lca_children_t2", TL_STR);
        tl_table_add_col(t, "root_index", TL_I64);
        tl_table_add_col(t, "callstack", TL_STR);
    }
    tl_buf b = {0};
    for (size_t i = 0; i < st->rows.n; i++) {
        const td_row *r = &st->rows.v[i];
        if (only_trace1 && r->side) continue;
        const td_side *s = &d->s[r->side];
        size_t k = tl_table_add_row(t);
        tl_table_set_str_ref(t, c_name, k, r->name);
        tl_table_set_str_ref(t, c_cpu, k, r->cpu_name);
        tl_table_set_i64(t, c_cuid, k, s->t->uid[r->cpu]);
        if (with_source) tl_table_set_str_ref(t, c_src, k, SRC[r->side]);
        tl_table_set_str_ref(t, c_dims, k, r->dims);
        tl_table_set_str_ref(t, c_str, k, r->strides);
        tl_table_set_str_ref(t, c_typ, k, r->type);
        tl_table_set_str_ref(t, c_con, k, r->conc);
        set_time(t, c_kt, k, r->kt, st->int_kt);
        set_time(t, c_busy, k, r->busy, st->int_busy);
        tl_table_set_str_ref(t, c_lca, k, r->lca);
        if (r->lca_id >= 0) tl_table_set_i64(t, c_lid, k, r->lca_id);
        tl_table_set_i64(t, c_guid, k, s->t->uid[r->gpu]);
        tl_table_set_str_ref(t, c_nns, k, r->nn_stack);
        tl_table_set_str_ref(t, c_nnp, k, r->nn_parent);
        if (d->opts.debug) {
            const td_mnode *ln = r->lca_m >= 0 ? &d->nodes.v[r->lca_m] : NULL;
            join_gpu_kids(d, 0, ln ? ln->u1 : -1, &b);
            tl_table_set_strn(t, c_dbg, k, b.p ? b.p : "", b.n);
            join_gpu_kids(d, 1, ln ? ln->u2 : -1, &b);
            tl_table_set_strn(t, c_dbg + 1, k, b.p ? b.p : "", b.n);
            tl_table_set_i64(t, c_dbg + 2, k, r->root);
            /* names from the root down to the event's parent */
            TL_VEC(int32_t) path = {0};
            for (int32_t a = s->parent[r->gpu]; a >= 0; a = s->parent[a]) tl_vec_push(&path, a);
            b.n = 0;
            char nb[24];
            for (size_t p = path.n; p-- > 0;) {
                tl_buf_puts(&b, td_name(s, path.v[p], nb));
                if (p) tl_buf_puts(&b, ", ");
            }
            tl_table_set_strn(t, c_dbg + 3, k, b.p ? b.p : "", b.n);
            tl_vec_free(&path);
        }
    }
    tl_buf_free(&b);
    tl_table_int_na_as_float(t);
    return t;
}

/* ---- A7: summary --------------------------------------------------------- */

static const td_row *ROWS;
static const tl_diff *DIFF;

static int64_t row_cuid(const td_row *r) { return DIFF->s[r->side].t->uid[r->cpu]; }

static int cmp_group_key(const void *pa, const void *pb)
{
    const td_row *a = &ROWS[*(const size_t *)pa], *b = &ROWS[*(const size_t *)pb];
    int c;
    if ((c = strcmp(a->name, b->name))) return c;
    if ((c = strcmp(a->cpu_name, b->cpu_name))) return c;
    int64_t ua = row_cuid(a), ub = row_cuid(b);
    if (ua != ub) return ua < ub ? -1 : 1;
    if (a->side != b->side) return a->side < b->side ? -1 : 1;
    if ((c = strcmp(a->dims, b->dims))) return c;
    if ((c = strcmp(a->strides, b->strides))) return c;
    if ((c = strcmp(a->type, b->type))) return c;
    if ((c = strcmp(a->conc, b->conc))) return c;
    if (a->busy != b->busy) return a->busy < b->busy ? -1 : 1;
    if (!a->lca != !b->lca) return a->lca ? -1 : 1;
    if (a->lca && (c = strcmp(a->lca, b->lca))) return c;
    if ((c = strcmp(a->nn_stack, b->nn_stack))) return c;
    if ((c = strcmp(a->nn_parent, b->nn_parent))) return c;
    size_t x = *(const size_t *)pa, y = *(const size_t *)pb;
    return x < y ? -1 : x > y;
}

static int same_key(const td_row *a, const td_row *b)
{
    return strcmp(a->name, b->name) == 0 && strcmp(a->cpu_name, b->cpu_name) == 0 &&
           row_cuid(a) == row_cuid(b) && a->side == b->side && strcmp(a->dims, b->dims) == 0 &&
           strcmp(a->strides, b->strides) == 0 && strcmp(a->type, b->type) == 0 &&
           strcmp(a->conc, b->conc) == 0 && a->busy == b->busy && streq0(a->lca, b->lca) &&
           strcmp(a->nn_stack, b->nn_stack) == 0 && strcmp(a->nn_parent, b->nn_parent) == 0;
}

static const td_group *GROUPS;

static int cmp_pystr_f(double a, double b)
{
    char x[40], y[40];
    tl_fmt_pyfloat(a, x);
    tl_fmt_pyfloat(b, y);
    return strcmp(x, y);
}

static int cmp_pystr_i(int64_t a, int64_t b)
{
    char x[24], y[24];
    snprintf(x, sizeof x, "%lld", (long long)a);
    snprintf(y, sizeof y, "%lld", (long long)b);
    return strcmp(x, y);
}

/* kernel_time_sum desc, then every other column ascending by str() text. */
static int cmp_group_out(const void *pa, const void *pb)
{
    size_t ia = *(const size_t *)pa, ib = *(const size_t *)pb;
    const td_group *ga = &GROUPS[ia], *gb = &GROUPS[ib];
    if (ga->sum != gb->sum) return ga->sum > gb->sum ? -1 : 1;
    const td_row *a = &ROWS[ga->first], *b = &ROWS[gb->first];
    int c;
    if ((c = strcmp(a->name, b->name))) return c;
    if ((c = cmp_pystr_i(ga->count, gb->count))) return c;
    if ((c = strcmp(a->cpu_name, b->cpu_name))) return c;
    if ((c = cmp_pystr_i(row_cuid(a), row_cuid(b)))) return c;
    if ((c = strcmp(SRC[a->side], SRC[b->side]))) return c;
    if ((c = strcmp(a->dims, b->dims))) return c;
    if ((c = strcmp(a->strides, b->strides))) return c;
    if ((c = strcmp(a->type, b->type))) return c;
    if ((c = strcmp(a->conc, b->conc))) return c;
    if ((c = cmp_pystr_f(a->busy, b->busy))) return c;
    if ((c = strcmp(a->lca ? a->lca : "nan", b->lca ? b->lca : "nan"))) return c;
    if ((c = strcmp(a->nn_stack, b->nn_stack))) return c;
    if ((c = strcmp(a->nn_parent, b->nn_parent))) return c;
    if ((c = cmp_pystr_f(ga->mean, gb->mean))) return c;
    return ia < ib ? -1 : ia > ib;
}

static void build_groups(tl_diff *d)
{
    td_stats *st = d->st;
    size_t n = st->rows.n;
    size_t *idx = tl_xmalloc((n ? n : 1) * sizeof *idx);
    for (size_t i = 0; i < n; i++) idx[i] = i;
    ROWS = st->rows.v;
    DIFF = d;
    qsort(idx, n, sizeof *idx, cmp_group_key);
    TL_VEC(td_group) g = {0};
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        while (j < n && same_key(&ROWS[idx[i]], &ROWS[idx[j]])) j++;
        /* members are in row order (the key sort breaks ties by row), so
         * the compensated sum adds them in diff_stats order as pandas does */
        td_group gr = {idx[i], (int64_t)(j - i), 0, 0, NULL, NULL};
        tl_kahan sum = {0, 0};
        for (size_t k = i; k < j; k++) tl_kahan_add(&sum, ROWS[idx[k]].kt);
        gr.sum = sum.sum;
        gr.mean = sum.sum / (double)gr.count;
        tl_vec_push(&g, gr);
        i = j;
    }
    free(idx);
    size_t *ord = tl_xmalloc((g.n ? g.n : 1) * sizeof *ord);
    for (size_t i = 0; i < g.n; i++) ord[i] = i;
    GROUPS = g.v;
    qsort(ord, g.n, sizeof *ord, cmp_group_out);
    for (size_t i = 0; i < g.n; i++) tl_vec_push(&st->groups, g.v[ord[i]]);
    free(ord);
    tl_vec_free(&g);
}

/* ---- A8: maps and renaming ------------------------------------------------ */

typedef TL_VEC(const char *) svec;

static int svec_has(const svec *v, const char *s)
{
    for (size_t i = 0; i < v->n; i++)
        if (strcmp(v->v[i], s) == 0) return 1;
    return 0;
}

static void svec_add_unique(svec *v, const char *s)
{
    if (!svec_has(v, s)) tl_vec_push(v, s);
}

static void svec_remove(svec *v, size_t i)
{
    memmove(v->v + i, v->v + i + 1, (v->n - i - 1) * sizeof *v->v);
    v->n--;
}

static int cmp_cstr(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

typedef struct renamer {
    svec from, to;                 /* rename map, insertion order, last wins */
    svec mod_op[2];                /* module_of: op names per source */
    svec *mod_list[2];             /* parallel lists of distinct parents */
} renamer;

static const svec *module_of(const renamer *R, const char *op)
{
    for (int s = 1; s >= 0; s--)
        for (size_t i = 0; i < R->mod_op[s].n; i++)
            if (strcmp(R->mod_op[s].v[i], op) == 0) return &R->mod_list[s][i];
    return NULL;
}

static const char *after_colons(const char *s)
{
    const char *p = s, *q;
    while ((q = strstr(p, "::"))) p = q + 2;
    return p;
}

static const char *common_name(tl_arena *a, const renamer *R, const char *n1, const char *n2)
{
    const char *x = after_colons(n1), *y = after_colons(n2);
    if (strcmp(x, y) == 0) return x;
    if (strstr(y, x)) return x;
    if (strstr(x, y)) return y;
    size_t lx = strlen(x), ly = strlen(y);
    size_t kx = lx < 20 ? lx : 20, ky = ly < 20 ? ly : 20;
    if (kx == ky && memcmp(x, y, kx) == 0) return tl_arena_printf(a, "%s/%s", x, y);
    const svec *m1 = module_of(R, n1), *m2 = module_of(R, n2);
    if (m1 && m2 && m1->n == 1 && m2->n == 1 && strcmp(m1->v[0], m2->v[0]) == 0) {
        const char *m = m1->v[0];
        char *o = tl_arena_alloc(a, strlen(m) + 1);
        size_t k = 0;
        for (; *m; m++)
            if (*m != ' ') o[k++] = *m;
        o[k] = 0;
        return o;
    }
    return NULL;
}

static void rename_set(renamer *R, const char *from, const char *to)
{
    for (size_t i = 0; i < R->from.n; i++)
        if (strcmp(R->from.v[i], from) == 0) { R->to.v[i] = to; return; }
    tl_vec_push(&R->from, from);
    tl_vec_push(&R->to, to);
}

static const char *rename_get(const renamer *R, const char *s)
{
    for (size_t i = 0; i < R->from.n; i++)
        if (strcmp(R->from.v[i], s) == 0) return R->to.v[i];
    return s;
}

static void try_pair(tl_diff *d, renamer *R, const char *n1, const char *n2, int *ok)
{
    const char *x = common_name(&d->st->a, R, n1, n2);
    *ok = x != NULL;
    if (!x) {
        if (d->log) fprintf(d->log, "[TraceDiff] No common name found for %s and %s\n", n1, n2);
        return;
    }
    if (d->log) fprintf(d->log, "[TraceDiff] Renaming: %s, %s to %s\n", n1, n2, x);
    rename_set(R, n1, x);
    rename_set(R, n2, x);
}

static void build_renames(tl_diff *d, renamer *R)
{
    td_stats *st = d->st;
    const td_row *rows = st->rows.v;
    size_t n = st->rows.n;
    /* module_of: distinct parents per op, per source; trace2 wins */
    for (int s = 0; s < 2; s++) {
        size_t cap = 0;
        for (size_t i = 0; i < n; i++) {
            if (rows[i].side != s) continue;
            size_t k;
            for (k = 0; k < R->mod_op[s].n; k++)
                if (strcmp(R->mod_op[s].v[k], rows[i].cpu_name) == 0) break;
            if (k == R->mod_op[s].n) {
                tl_vec_push(&R->mod_op[s], rows[i].cpu_name);
                if (k >= cap) {
                    cap = cap ? cap * 2 : 16;
                    R->mod_list[s] = tl_xrealloc(R->mod_list[s], cap * sizeof *R->mod_list[s]);
                }
                memset(&R->mod_list[s][k], 0, sizeof R->mod_list[s][k]);
            }
            svec_add_unique(&R->mod_list[s][k], rows[i].nn_parent);
        }
    }
    /* LCAs in first-appearance order, each with its op names per source
     * (LCA ids are merged node ids, so an array indexes them) */
    TL_VEC(int64_t) lcas = {0};
    int32_t *slot = tl_xmalloc((d->nodes.n + 1) * sizeof *slot);
    for (size_t i = 0; i <= d->nodes.n; i++) slot[i] = -1;
    for (size_t i = 0; i < n; i++) {
        if (rows[i].lca_id < 0 || slot[rows[i].lca_id] >= 0) continue;
        slot[rows[i].lca_id] = (int32_t)lcas.n;
        tl_vec_push(&lcas, rows[i].lca_id);
    }
    svec *names = tl_xcalloc(2 * (lcas.n + 1), sizeof *names);
    for (size_t i = 0; i < n; i++)
        if (rows[i].lca_id >= 0) svec_add_unique(&names[2 * (size_t)slot[rows[i].lca_id] + rows[i].side], rows[i].cpu_name);
    free(slot);
    svec seen = {0};
    for (size_t l = 0; l < lcas.n; l++) {
        svec *nm = &names[2 * l];
        int skip = !nm[0].n || !nm[1].n;
        if (!skip) {
            int all = 1;
            for (int s = 0; s < 2 && all; s++)
                for (size_t k = 0; k < nm[s].n && all; k++) all = svec_has(&seen, nm[s].v[k]);
            skip = all;
        }
        if (!skip) {
            for (int s = 0; s < 2; s++)
                for (size_t k = 0; k < nm[s].n; k++) svec_add_unique(&seen, nm[s].v[k]);
            int ok;
            if (nm[0].n == nm[1].n) {
                for (size_t k = 0; k < nm[0].n; k++)
                    if (strcmp(nm[0].v[k], nm[1].v[k]) != 0) try_pair(d, R, nm[0].v[k], nm[1].v[k], &ok);
            } else {
                for (size_t a = 0; a < nm[0].n;) {
                    size_t b;
                    for (b = 0; b < nm[1].n; b++)
                        if (strcmp(nm[0].v[a], nm[1].v[b]) == 0) break;
                    if (b < nm[1].n) { svec_remove(&nm[0], a); svec_remove(&nm[1], b); }
                    else a++;
                }
                for (size_t a = 0; a < nm[0].n;) {
                    int hit = 0;
                    for (size_t b = 0; b < nm[1].n && !hit; b++) {
                        const char *x = common_name(&st->a, R, nm[0].v[a], nm[1].v[b]);
                        if (!x) continue;
                        if (d->log) fprintf(d->log, "[TraceDiff] Renaming: %s, %s to %s\n", nm[0].v[a], nm[1].v[b], x);
                        rename_set(R, nm[0].v[a], x);
                        rename_set(R, nm[1].v[b], x);
                        svec_remove(&nm[1], b);
                        hit = 1;
                    }
                    if (hit) svec_remove(&nm[0], a);
                    else a++;
                }
                if ((nm[0].n || nm[1].n) && d->log)
                    fprintf(d->log, "[TraceDiff] Unmatched for LCA %lld: %zu trace1, %zu trace2 op names\n",
                            (long long)lcas.v[l], nm[0].n, nm[1].n);
            }
        }
        tl_vec_free(&nm[0]);
        tl_vec_free(&nm[1]);
    }
    free(names);
    tl_vec_free(&seen);
    tl_vec_free(&lcas);
}

static void renamer_free(renamer *R)
{
    tl_vec_free(&R->from);
    tl_vec_free(&R->to);
    for (int s = 0; s < 2; s++) {
        for (size_t i = 0; i < R->mod_op[s].n; i++) tl_vec_free(&R->mod_list[s][i]);
        free(R->mod_list[s]);
        tl_vec_free(&R->mod_op[s]);
    }
}

static void indent(tl_buf *b, int lvl)
{
    tl_buf_putc(b, '\n');
    for (int i = 0; i < lvl; i++) tl_buf_puts(b, "  ");
}

static void json_list(tl_buf *b, const svec *v, int lvl)
{
    if (!v->n) { tl_buf_puts(b, "[]"); return; }
    tl_buf_putc(b, '[');
    for (size_t i = 0; i < v->n; i++) {
        if (i) tl_buf_putc(b, ',');
        indent(b, lvl + 1);
        tl_buf_json_str(b, v->v[i], strlen(v->v[i]));
    }
    indent(b, lvl);
    tl_buf_putc(b, ']');
}

static void sort_unique(svec *v)
{
    if (v->n > 1) qsort(v->v, v->n, sizeof *v->v, cmp_cstr);
    size_t k = 0;
    for (size_t i = 0; i < v->n; i++)
        if (!k || strcmp(v->v[k - 1], v->v[i]) != 0) v->v[k++] = v->v[i];
    v->n = k;
}

/* cpu_op_map_trace<s>.json: op -> sorted unique kernels, from summary rows. */
static char *side_map_json(tl_diff *d, int side)
{
    td_stats *st = d->st;
    svec ops = {0};
    for (size_t g = 0; g < st->groups.n; g++) {
        const td_row *r = &st->rows.v[st->groups.v[g].first];
        if (r->side == side) svec_add_unique(&ops, r->cpu_name);
    }
    sort_unique(&ops);
    tl_buf b = {0};
    if (!ops.n) tl_buf_puts(&b, "{}");
    else {
        tl_buf_putc(&b, '{');
        for (size_t o = 0; o < ops.n; o++) {
            svec ks = {0};
            for (size_t g = 0; g < st->groups.n; g++) {
                const td_row *r = &st->rows.v[st->groups.v[g].first];
                if (r->side == side && strcmp(r->cpu_name, ops.v[o]) == 0) tl_vec_push(&ks, r->name);
            }
            sort_unique(&ks);
            if (o) tl_buf_putc(&b, ',');
            indent(&b, 1);
            tl_buf_json_str(&b, ops.v[o], strlen(ops.v[o]));
            tl_buf_puts(&b, ": ");
            json_list(&b, &ks, 1);
            tl_vec_free(&ks);
        }
        indent(&b, 0);
        tl_buf_putc(&b, '}');
    }
    tl_vec_free(&ops);
    char *s = tl_arena_strndup(&st->a, b.p, b.n);
    tl_buf_free(&b);
    return s;
}

/* cpu_op_map.json after renaming (group cpu_name / nn_parent are final). */
static char *full_map_json(tl_diff *d)
{
    td_stats *st = d->st;
    svec ops = {0};
    for (size_t g = 0; g < st->groups.n; g++) svec_add_unique(&ops, st->groups.v[g].cpu_name);
    tl_buf b = {0};
    if (!ops.n) tl_buf_puts(&b, "{}");
    else {
        tl_buf_putc(&b, '{');
        for (size_t o = 0; o < ops.n; o++) {
            if (o) tl_buf_putc(&b, ',');
            indent(&b, 1);
            tl_buf_json_str(&b, ops.v[o], strlen(ops.v[o]));
            tl_buf_puts(&b, ": ");
            int nsrc = 0;
            for (int s = 0; s < 2; s++) {
                svec ks = {0}, ps = {0};
                for (size_t g = 0; g < st->groups.n; g++) {
                    const td_group *gr = &st->groups.v[g];
                    const td_row *r = &st->rows.v[gr->first];
                    if (r->side != s || strcmp(gr->cpu_name, ops.v[o]) != 0) continue;
                    tl_vec_push(&ks, r->name);
                    tl_vec_push(&ps, gr->nn_parent);
                }
                if (ks.n && !(st->identical && s == 1)) {
                    sort_unique(&ks);
                    sort_unique(&ps);
                    int lv = st->identical ? 1 : 2;
                    if (!st->identical) {
                        tl_buf_puts(&b, nsrc ? "," : "{");
                        indent(&b, 2);
                        tl_buf_json_str(&b, SRC[s], strlen(SRC[s]));
                        tl_buf_puts(&b, ": ");
                    }
                    tl_buf_putc(&b, '{');
                    indent(&b, lv + 1);
                    tl_buf_puts(&b, "\"kernels\": ");
                    json_list(&b, &ks, lv + 1);
                    tl_buf_putc(&b, ',');
                    indent(&b, lv + 1);
                    tl_buf_puts(&b, "\"nn_module_parents\": ");
                    json_list(&b, &ps, lv + 1);
                    indent(&b, lv);
                    tl_buf_putc(&b, '}');
                    nsrc++;
                }
                tl_vec_free(&ks);
                tl_vec_free(&ps);
            }
            if (!st->identical) {
                if (nsrc) { indent(&b, 1); tl_buf_putc(&b, '}'); }
                else tl_buf_puts(&b, "{}");
            }
        }
        indent(&b, 0);
        tl_buf_putc(&b, '}');
    }
    tl_vec_free(&ops);
    char *s = tl_arena_strndup(&st->a, b.p, b.n);
    tl_buf_free(&b);
    return s;
}

static tl_table *summary_table(tl_diff *d)
{
    td_stats *st = d->st;
    int with_src = !st->identical;
    tl_table *t = tl_table_new("diff_stats_unique_args_summary");
    size_t c_name = tl_table_add_col(t, "name", TL_STR);
    size_t c_cnt = tl_table_add_col(t, "operation_count", TL_I64);
    size_t c_cpu = tl_table_add_col(t, "cpu_op_name", TL_STR);
    size_t c_cuid = tl_table_add_col(t, "cpu_op_uid", TL_I64);
    size_t c_src = with_src ? tl_table_add_col(t, "source", TL_STR) : 0;
    size_t c_dims = tl_table_add_col(t, "Input Dims", TL_STR);
    size_t c_str = tl_table_add_col(t, "Input Strides", TL_STR);
    size_t c_typ = tl_table_add_col(t, "Input type", TL_STR);
    size_t c_con = tl_table_add_col(t, "Concrete Inputs", TL_STR);
    size_t c_busy = tl_table_add_col(t, "busy_time", st->int_busy ? TL_I64 : TL_F64);
    size_t c_lca = tl_table_add_col(t, "lowest_common_ancestor_name", TL_STR);
    size_t c_nns = tl_table_add_col(t, "nn_module_stack", TL_STR);
    size_t c_nnp = tl_table_add_col(t, "nn_module_parent", TL_STR);
    size_t c_mean = tl_table_add_col(t, "kernel_time_mean", TL_F64);
    /* an int64 column's sum stays int64 */
    size_t c_sum = tl_table_add_col(t, "kernel_time_sum", st->int_kt ? TL_I64 : TL_F64);
    for (size_t g = 0; g < st->groups.n; g++) {
        const td_group *gr = &st->groups.v[g];
        const td_row *r = &st->rows.v[gr->first];
        if (st->identical && r->side) continue;
        size_t k = tl_table_add_row(t);
        tl_table_set_str_ref(t, c_name, k, r->name);
        tl_table_set_i64(t, c_cnt, k, gr->count);
        tl_table_set_str_ref(t, c_cpu, k, gr->cpu_name);
        tl_table_set_i64(t, c_cuid, k, d->s[r->side].t->uid[r->cpu]);
        if (with_src) tl_table_set_str_ref(t, c_src, k, SRC[r->side]);
        tl_table_set_str_ref(t, c_dims, k, r->dims);
        tl_table_set_str_ref(t, c_str, k, r->strides);
        tl_table_set_str_ref(t, c_typ, k, r->type);
        tl_table_set_str_ref(t, c_con, k, r->conc);
        set_time(t, c_busy, k, r->busy, st->int_busy);
        tl_table_set_str_ref(t, c_lca, k, r->lca);
        tl_table_set_str_ref(t, c_nns, k, r->nn_stack);
        tl_table_set_str_ref(t, c_nnp, k, gr->nn_parent);
        tl_table_set_f64(t, c_mean, k, gr->mean);
        set_time(t, c_sum, k, gr->sum, st->int_kt);
    }
    return t;
}

int td_build_stats(tl_diff *d, tl_err *err)
{
    (void)err;
    td_stats *st = tl_xcalloc(1, sizeof *st);
    d->st = st;
    tl_arena_init(&st->a, 1 << 16);
    uint8_t *visited = tl_xcalloc(d->nodes.n + 1, 1);
    for (size_t r = 0; r < d->mroots.n; r++) walk(d, visited, d->mroots.v[r], -1, (int32_t)r);
    free(visited);
    if (!st->rows.n) {
        if (d->log) fprintf(d->log, "[TraceDiff] No GPU events found in either trace\n");
        st->identical = st->empty = 1;
        return TL_OK;
    }
    /* A6.6 identical traces */
    size_t n1 = 0, n2 = 0;
    for (size_t i = 0; i < st->rows.n; i++) {
        if (st->rows.v[i].side) n2++;
        else n1++;
    }
    if (n1 == n2) {
        const td_row **a = tl_xmalloc(n1 * sizeof *a), **b = tl_xmalloc(n2 * sizeof *b);
        size_t ka = 0, kb = 0;
        for (size_t i = 0; i < st->rows.n; i++) {
            if (st->rows.v[i].side) b[kb++] = &st->rows.v[i];
            else a[ka++] = &st->rows.v[i];
        }
        int same = 1;
        for (size_t i = 0; i < n1 && same; i++) same = rows_same(d, a[i], b[i]);
        free(a);
        free(b);
        if (same) {
            st->identical = 1;
            if (d->log) fprintf(d->log, "[TraceDiff] Identical traces detected\n");
        }
    }
    /* the dtype pandas gives kernel_time and busy_time: int64 when every
     * row's value is a Python int (a side with rows must be whole-µs) */
    st->int_kt = st->int_busy = 1;
    for (int side = 0; side < 2; side++) {
        if (!(side ? n2 : n1)) continue;
        int kt, busy;
        int_text(d->s[side].t, &kt, &busy);
        st->int_kt &= kt;
        st->int_busy &= busy;
    }
    st->stats_src = stats_table(d, 1, 0);
    st->stats = st->identical ? stats_table(d, 0, 1) : NULL;

    /* A7 summary, A8 maps (before renaming), then the renaming side effects */
    build_groups(d);
    st->map1 = side_map_json(d, 0);
    st->map2 = side_map_json(d, 1);
    renamer R;
    memset(&R, 0, sizeof R);
    build_renames(d, &R);
    for (size_t g = 0; g < st->groups.n; g++) {
        td_group *gr = &st->groups.v[g];
        const td_row *r = &st->rows.v[gr->first];
        gr->cpu_name = rename_get(&R, r->cpu_name);
        size_t L = strlen(r->nn_parent), k = 0;
        char *p = tl_arena_alloc(&st->a, L + 1);
        for (size_t i = 0; i < L; i++)
            if (r->nn_parent[i] != ' ') p[k++] = r->nn_parent[i];
        p[k] = 0;
        gr->nn_parent = p;
    }
    renamer_free(&R);
    st->map = full_map_json(d);
    st->summary = summary_table(d);
    return TL_OK;
}

void td_stats_free(tl_diff *d)
{
    td_stats *st = d->st;
    if (!st) return;
    tl_vec_free(&st->rows);
    tl_vec_free(&st->groups);
    tl_table_free(st->stats);
    tl_table_free(st->stats_src);
    tl_table_free(st->summary);
    for (int s = 0; s < 2; s++)
        for (int k = 0; k < 4; k++) free(st->argtxt[s][k]);
    tl_arena_free(&st->a);
    free(st);
    d->st = NULL;
}

/* ---- public accessors ------------------------------------------------------ */

int tl_diff_identical(const tl_diff *d) { return d->st && d->st->identical; }
int tl_diff_empty(const tl_diff *d) { return !d->st || d->st->empty; }

const tl_table *tl_diff_stats(const tl_diff *d)
{
    if (!d->st || d->st->empty) return NULL;
    return d->st->stats ? d->st->stats : d->st->stats_src;
}

const tl_table *tl_diff_summary(const tl_diff *d) { return d->st ? d->st->summary : NULL; }

static tl_table *copy_table(const tl_table *src, const char *name)
{
    tl_table *t = tl_table_new(name);
    for (size_t c = 0; c < src->ncols; c++) tl_table_add_col(t, src->cols[c].name, src->cols[c].type);
    tl_table_set_nrows(t, src->nrows);
    for (size_t c = 0; c < src->ncols; c++) {
        t->cols[c].as_float = src->cols[c].as_float;
        for (size_t r = 0; r < src->nrows; r++) {
            if (tl_table_is_missing(src, c, r)) continue;
            switch (src->cols[c].type) {
            case TL_STR: tl_table_set_str(t, c, r, src->cols[c].v.s[r]); break;
            case TL_I64: tl_table_set_i64(t, c, r, src->cols[c].v.i[r]); break;
            case TL_F64: tl_table_set_f64(t, c, r, src->cols[c].v.f[r]); break;
            case TL_BOOL: tl_table_set_bool(t, c, r, src->cols[c].v.b[r]); break;
            }
        }
    }
    return t;
}

tl_table *tl_diff_stats_sheet(const tl_diff *d)
{
    if (!d->st || d->st->empty) return NULL;
    return copy_table(d->st->stats_src, "diff_stats");
}

/* ---- A10.1 per-LCA summary --------------------------------------------------- */

typedef struct lca_acc {
    int64_t id;
    const td_row *first[2];
    size_t count[2];
    svec kernels[2], ops[2];
} lca_acc;
typedef TL_VEC(lca_acc) lca_vec;

static void lca_collect(const tl_diff *d, lca_vec *out)
{
    const td_stats *st = d->st;
    int32_t *slot = tl_xmalloc((d->nodes.n + 1) * sizeof *slot);
    for (size_t i = 0; i <= d->nodes.n; i++) slot[i] = -1;
    for (size_t i = 0; i < st->rows.n; i++) {
        const td_row *r = &st->rows.v[i];
        if (r->lca_id < 0) continue;
        if (slot[r->lca_id] < 0) {
            lca_acc z;
            memset(&z, 0, sizeof z);
            z.id = r->lca_id;
            slot[r->lca_id] = (int32_t)out->n;
            tl_vec_push(out, z);
        }
        lca_acc *A = &out->v[slot[r->lca_id]];
        if (!A->first[r->side]) A->first[r->side] = r;
        A->count[r->side]++;
        tl_vec_push(&A->kernels[r->side], r->name);
        svec_add_unique(&A->ops[r->side], r->cpu_name);
    }
    free(slot);
}

static void lca_free(lca_vec *v)
{
    for (size_t i = 0; i < v->n; i++)
        for (int s = 0; s < 2; s++) {
            tl_vec_free(&v->v[i].kernels[s]);
            tl_vec_free(&v->v[i].ops[s]);
        }
    tl_vec_free(v);
}

static const double *LCA_T1;
static int cmp_lca_t1(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    if (LCA_T1[x] != LCA_T1[y]) return LCA_T1[x] > LCA_T1[y] ? -1 : 1;
    return x < y ? -1 : x > y;
}

tl_table *tl_diff_lca_summary(const tl_diff *d)
{
    tl_table *t = tl_table_new("lca_summary");
    const char *cols[] = {"name", "lowest_common_ancestor_name", "lowest_common_ancestor_id",
                          "nn_module_stack", "nn_module_parent", "Input Dims", "Input type",
                          "Input Strides", "Concrete Inputs", "kernel_time_trace1_us",
                          "kernel_time_trace2_us", "num_kernels_trace1", "num_kernels_trace2",
                          "kernel_names_trace1", "kernel_names_trace2", "speedup (trace2/trace1)",
                          "delta_us (trace2 - trace1)"};
    const tl_type types[] = {TL_STR, TL_STR, TL_I64, TL_STR, TL_STR, TL_STR, TL_STR, TL_STR, TL_STR,
                             TL_F64, TL_F64, TL_I64, TL_I64, TL_STR, TL_STR, TL_F64, TL_F64};
    for (size_t c = 0; c < sizeof cols / sizeof *cols; c++) tl_table_add_col(t, cols[c], types[c]);
    if (!d->st || d->st->empty) return t;
    lca_vec L = {0};
    lca_collect(d, &L);
    double *t1 = tl_xmalloc((L.n ? L.n : 1) * sizeof *t1);
    size_t *ord = tl_xmalloc((L.n ? L.n : 1) * sizeof *ord);
    for (size_t i = 0; i < L.n; i++) {
        t1[i] = L.v[i].first[0] ? L.v[i].first[0]->busy : 0.0;
        ord[i] = i;
    }
    LCA_T1 = t1;
    qsort(ord, L.n, sizeof *ord, cmp_lca_t1);
    double tot1 = 0, tot2 = 0;
    tl_buf b = {0};
    for (size_t o = 0; o < L.n; o++) {
        lca_acc *A = &L.v[ord[o]];
        size_t r = tl_table_add_row(t);
        const td_row *f = A->first[0] ? A->first[0] : A->first[1];
        int ns = A->ops[0].n ? 0 : 1;
        b.n = 0;
        if (!A->ops[ns].n) tl_buf_puts(&b, "unknown");
        else {
            svec s = {0};
            for (size_t k = 0; k < A->ops[ns].n; k++) tl_vec_push(&s, A->ops[ns].v[k]);
            if (s.n > 1) qsort(s.v, s.n, sizeof *s.v, cmp_cstr);
            for (size_t k = 0; k < s.n; k++) {
                if (k) tl_buf_puts(&b, " | ");
                tl_buf_puts(&b, s.v[k]);
            }
            tl_vec_free(&s);
        }
        tl_table_set_strn(t, 0, r, b.p, b.n);
        tl_table_set_str(t, 1, r, f->lca);
        tl_table_set_i64(t, 2, r, A->id);
        tl_table_set_str(t, 3, r, f->nn_stack);
        tl_table_set_str(t, 4, r, f->nn_parent);
        tl_table_set_str(t, 5, r, f->dims);
        tl_table_set_str(t, 6, r, f->type);
        tl_table_set_str(t, 7, r, f->strides);
        tl_table_set_str(t, 8, r, f->conc);
        double k1 = A->first[0] ? A->first[0]->busy : 0.0, k2 = A->first[1] ? A->first[1]->busy : 0.0;
        tot1 += k1;
        tot2 += k2;
        tl_table_set_f64(t, 9, r, k1);
        tl_table_set_f64(t, 10, r, k2);
        tl_table_set_i64(t, 11, r, (int64_t)A->count[0]);
        tl_table_set_i64(t, 12, r, (int64_t)A->count[1]);
        for (int s = 0; s < 2; s++) {
            b.n = 0;
            tl_buf_putc(&b, '[');
            for (size_t k = 0; k < A->kernels[s].n; k++) {
                if (k) tl_buf_puts(&b, ", ");
                tl_buf_pystr(&b, A->kernels[s].v[k], strlen(A->kernels[s].v[k]));
            }
            tl_buf_putc(&b, ']');
            tl_table_set_strn(t, 13 + (size_t)s, r, b.p, b.n);
        }
        if (k1 > 0) tl_table_set_f64(t, 15, r, k2 / k1);
        tl_table_set_f64(t, 16, r, k2 - k1);
    }
    tl_buf_free(&b);
    if (tot1 > 0 && tot2 > 0) {
        size_t p1 = tl_table_add_col(t, "pct_of_trace1_total (%)", TL_F64);
        size_t cu = tl_table_add_col(t, "cumulative_pct_trace1 (%)", TL_F64);
        size_t p2 = tl_table_add_col(t, "pct_of_trace2_total (%)", TL_F64);
        double run = 0;
        for (size_t r = 0; r < t->nrows; r++) {
            double a = t->cols[9].v.f[r] / tot1 * 100.0;
            run += a;
            tl_table_set_f64(t, p1, r, a);
            tl_table_set_f64(t, cu, r, run);
            tl_table_set_f64(t, p2, r, t->cols[10].v.f[r] / tot2 * 100.0);
        }
    }
    free(t1);
    free(ord);
    lca_free(&L);
    return t;
}

/* ---- A10 unified sheet: the diff columns the report hook adds ---------------- */

/* Moves the last k columns of t to just after column `after`. */
static void move_cols_after(tl_table *t, size_t after, size_t k)
{
    size_t n = t->ncols, start = n - k;
    tl_column *tmp = tl_xmalloc(k * sizeof *tmp);
    memcpy(tmp, t->cols + start, k * sizeof *tmp);
    memmove(t->cols + after + 1 + k, t->cols + after + 1, (start - after - 1) * sizeof *tmp);
    memcpy(t->cols + after + 1, tmp, k * sizeof *tmp);
    free(tmp);
}

typedef struct uidrow {
    int64_t uid;
    size_t row;
} uidrow;

static int cmp_uidrow(const void *a, const void *b)
{
    const uidrow *x = a, *y = b;
    if (x->uid != y->uid) return x->uid < y->uid ? -1 : 1;
    return x->row < y->row ? -1 : x->row > y->row;
}

int tl_diff_enrich_unified(const tl_diff *d, tl_table *u, const int64_t *gpu_uids, const size_t *uid_row,
                           size_t n, tl_err *err)
{
    (void)err;
    if (!u || !d->st || d->st->empty) return TL_OK;
    long ks = tl_table_col(u, "Kernel Time (\xc2\xb5s)_sum");
    if (ks < 0) return TL_OK;
    size_t R = u->nrows;
    double *a1 = tl_xcalloc(R + 1, sizeof *a1), *a2 = tl_xcalloc(R + 1, sizeof *a2);
    int64_t *cnt2 = tl_xcalloc(R + 1, sizeof *cnt2);
    uint8_t *hit = tl_xcalloc(R + 1, 1);
    tl_buf *ids = tl_xcalloc(R + 1, sizeof *ids), *names = tl_xcalloc(R + 1, sizeof *names);
    /* gpu uid -> summary rows: the pairs sorted by uid, looked up by bisection */
    uidrow *m = tl_xmalloc((n ? n : 1) * sizeof *m);
    for (size_t i = 0; i < n; i++) { m[i].uid = gpu_uids[i]; m[i].row = uid_row[i]; }
    qsort(m, n, sizeof *m, cmp_uidrow);
    lca_vec L = {0};
    lca_collect(d, &L);
    const td_stats *st = d->st;
    /* trace1 rows of each LCA (LCA ids are merged node ids) */
    int32_t *slot = tl_xmalloc((d->nodes.n + 1) * sizeof *slot);
    for (size_t i = 0; i <= d->nodes.n; i++) slot[i] = -1;
    for (size_t l = 0; l < L.n; l++) slot[L.v[l].id] = (int32_t)l;
    size_t *cnt = tl_xcalloc(L.n + 1, sizeof *cnt), *start = tl_xcalloc(L.n + 2, sizeof *start);
    for (size_t i = 0; i < st->rows.n; i++)
        if (st->rows.v[i].lca_id >= 0 && !st->rows.v[i].side) cnt[slot[st->rows.v[i].lca_id]]++;
    for (size_t l = 0; l < L.n; l++) start[l + 1] = start[l] + cnt[l];
    size_t *byl = tl_xmalloc((start[L.n] + 1) * sizeof *byl);
    memset(cnt, 0, (L.n + 1) * sizeof *cnt);
    for (size_t i = 0; i < st->rows.n; i++)
        if (st->rows.v[i].lca_id >= 0 && !st->rows.v[i].side) {
            size_t l = (size_t)slot[st->rows.v[i].lca_id];
            byl[start[l] + cnt[l]++] = i;
        }
    size_t *rows = tl_xmalloc((R + 1) * sizeof *rows);
    uint32_t *mark = tl_xcalloc(R + 1, sizeof *mark);
    for (size_t l = 0; l < L.n; l++) {
        lca_acc *A = &L.v[l];
        if (!A->first[0]) continue;
        double t1 = A->first[0]->busy, t2 = A->first[1] ? A->first[1]->busy : 0.0;
        size_t nr = 0;
        for (size_t q = start[l]; q < start[l + 1]; q++) {
            int64_t guid = d->s[0].t->uid[st->rows.v[byl[q]].gpu];
            size_t lo = 0, hi = n;
            while (lo < hi) {
                size_t mid = (lo + hi) / 2;
                if (m[mid].uid < guid) lo = mid + 1;
                else hi = mid;
            }
            for (size_t k = lo; k < n && m[k].uid == guid; k++) {
                if (m[k].row >= R || mark[m[k].row] == l + 1) continue;
                mark[m[k].row] = (uint32_t)(l + 1);
                rows[nr++] = m[k].row;
            }
        }
        for (size_t q = 0; q < nr; q++) {
            size_t row = rows[q];
            a1[row] += t1;
            a2[row] += t2;
            if (A->first[1]) cnt2[row]++;
            if (hit[row]) { tl_buf_puts(&ids[row], "; "); tl_buf_puts(&names[row], "; "); }
            hit[row] = 1;
            tl_buf_printf(&ids[row], "%lld", (long long)A->id);
            tl_buf_puts(&names[row], A->first[0]->lca ? A->first[0]->lca : "");
        }
    }
    free(slot);
    free(cnt);
    free(start);
    free(byl);
    free(mark);
    size_t c0 = tl_table_add_col(u, "speedup (trace2/trace1)", TL_F64);
    size_t c1 = tl_table_add_col(u, "delta_us (trace2 - trace1)", TL_F64);
    size_t c2 = tl_table_add_col(u, "lca_count_trace2", TL_I64);
    size_t c3 = tl_table_add_col(u, "lca_id", TL_STR);
    size_t c4 = tl_table_add_col(u, "lca_name", TL_STR);
    size_t c5 = tl_table_add_col(u, "lca_total_kernel_time_trace1_us", TL_F64);
    size_t c6 = tl_table_add_col(u, "lca_total_kernel_time_trace2_us", TL_F64);
    for (size_t r = 0; r < R; r++) {
        if (!hit[r]) continue;
        if (a1[r] != 0) tl_table_set_f64(u, c0, r, a2[r] / a1[r]);
        tl_table_set_f64(u, c1, r, a2[r] - tl_table_num(u, (size_t)ks, r));
        tl_table_set_i64(u, c2, r, cnt2[r]);
        tl_table_set_strn(u, c3, r, ids[r].p, ids[r].n);
        tl_table_set_strn(u, c4, r, names[r].p ? names[r].p : "", names[r].n);
        tl_table_set_f64(u, c5, r, a1[r]);
        tl_table_set_f64(u, c6, r, a2[r]);
    }
    (void)c6;
    if (tl_table_col_has_missing(u, c2)) u->cols[c2].as_float = 1;
    move_cols_after(u, (size_t)ks, 7);
    for (size_t r = 0; r <= R; r++) { tl_buf_free(&ids[r]); tl_buf_free(&names[r]); }
    free(ids);
    free(names);
    free(rows);
    free(m);
    free(a1);
    free(a2);
    free(cnt2);
    free(hit);
    lca_free(&L);
    return TL_OK;
}

const char *tl_diff_map_json(const tl_diff *d, int which)
{
    if (!d->st || d->st->empty) return NULL;
    return which == 1 ? d->st->map1 : which == 2 ? d->st->map2 : d->st->map;
}
