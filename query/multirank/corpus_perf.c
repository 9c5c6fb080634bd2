/* corpus_perf.c — the op-group sheets (gemm, conv, attn, un_elemwise,
 * bin_elemwise) of the multi-configuration workbook, as the reference's
 * generator builds them (branch feat/gen_report_node_replay_bench,
 * perf_report_utils.collect_df_perf_metrics_per_group and
 * TreePerfAnalyzer.summarize_df_perf_metrics): every event with "Input
 * Dims" whose name is in the group's op list (perf_report_configs.py) gets
 * one row per rank; the rows of all ranks are concatenated and grouped by
 * name and parameters. The models are the perf-model module's, with the
 * branch's GEMM batch quirk: its GEMM base class tests hasattr(dict, "B"),
 * which is never true, so "B" is always 1 and a batched GEMM counts one
 * batch's FLOPs and bytes. */
#include "query/multirank/corpus_internal.h"
#include "query/core/stats.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* perf_report_configs.py and the branch's torch_op_mapping.py op lists */
static const char *const GEMM_OPS[] = {"aten::mm", "aten::_scaled_mm", "aten::addmm", "aten::bmm", "aten::baddbmm",
                                       "trtllm::cublas_scaled_mm", "bitsandbytes::int8_linear_matmul",
                                       "_Linear_yfwd_mm", "_LayerNormLinear_yfwd_mm", "tex_ts::te_gemm_ts",
                                       "vllm::gemm_with_dynamic_quant", NULL};
static const char *const CONV_OPS[] = {"aten::convolution", NULL};
static const char *const ATTN_OPS[] = {"aten::_scaled_dot_product_cudnn_attention",
                                       "aten::_scaled_dot_product_efficient_attention",
                                       "aten::_scaled_dot_product_flash_attention", "flash_attn::_flash_attn_forward",
                                       "flash_attn::_flash_attn_varlen_forward", "flash_attn_3::fwd",
                                       "aiter::_flash_attn_forward", "aiter::wrapper_fmha_v3_fwd", NULL};
static const char *const UNARY_OPS[] = {"aten::copy", "aten::copy_", "aten::clamp_min", "aten::clamp_min_",
                                        "aten::clamp_max", "aten::clamp_max_", "aten::sigmoid", NULL};
static const char *const BINARY_OPS[] = {"aten::div", "aten::div_", "aten::mul", "aten::mul_", "aten::add",
                                         "aten::add_", "aten::sigmoid_backward", "aten::threshold_backward", NULL};
static const struct {
    const char *name;
    const char *const *ops;
} GROUPS[CP_NGROUPS] = {
    {"gemm", GEMM_OPS}, {"conv", CONV_OPS}, {"attn", ATTN_OPS}, {"un_elemwise", UNARY_OPS}, {"bin_elemwise", BINARY_OPS},
};
enum { G_GEMM = 0 };

const char *cp_group_name(size_t g) { return g < CP_NGROUPS ? GROUPS[g].name : NULL; }

static int group_of_name(const char *name)
{
    for (int g = 0; g < CP_NGROUPS; g++)
        for (const char *const *o = GROUPS[g].ops; *o; o++)
            if (!strcmp(*o, name)) return g;
    return -1;
}

/* TreePerfAnalyzer.non_data_mov_filter: kernels that only move data */
static int data_movement(const char *kernel)
{
    return strstr(kernel, "at::native::direct_copy_kernel_cuda") || strstr(kernel, "transpose_");
}

static const char *arg_text(const pyt_ctx *c, uint32_t sid)
{
    return sid && sid < c->t->dict.n ? tl_trace_str(c->t, sid) : NULL;
}

/* A model evaluation, shared by every event with the same name, args and
 * (for GEMMs, whose transpose parameter reads them) kernel names. */
typedef struct cp_model {
    int ok;
    cp_param *p;
    size_t np;
    double flops, bytes;
    int has_bytes;
} cp_model;

/* One rank's collection state: the model memo and the texts copied out of
 * the trace's dictionary, once per string id. */
typedef struct cp_cache {
    const pyt_ctx *c;
    tl_arena *a;          /* the rows' texts */
    tl_arena scratch;     /* model evaluations */
    tl_pm_ctx *pm;
    tl_smap memo;         /* key text -> models index */
    TL_VEC(cp_model) models;
    tl_buf key;
    const char **name;    /* per string id: verbatim copy in a */
    const char **repr;    /* per string id: Python repr of an arg in a */
} cp_cache;

static const char *name_text(cp_cache *k, uint32_t sid)
{
    if (!k->name[sid]) k->name[sid] = tl_arena_strdup(k->a, tl_trace_str(k->c->t, sid));
    return k->name[sid];
}

/* The Python repr of an arg (the cell pandas writes for a list), or NULL. */
static const char *arg_repr(cp_cache *k, uint32_t sid)
{
    const char *raw = arg_text(k->c, sid);
    if (!raw) return NULL;
    if (!k->repr[sid]) {
        char *out;
        tl_err e;
        k->repr[sid] = tl_pv_reformat(k->a, raw, strlen(raw), 0, &out, &e) == 0 ? out : tl_arena_strdup(k->a, raw);
    }
    return k->repr[sid];
}

/* The model's params into m (texts in a); the branch's GEMM batch quirk
 * divides flops and bytes by B and reports B = 1. */
static void take_params(const tl_pm_result *res, int group, tl_arena *a, cp_model *m)
{
    m->np = res->nparams;
    m->p = tl_arena_alloc(a, (m->np ? m->np : 1) * sizeof *m->p);
    tl_buf b = {0};
    for (size_t i = 0; i < res->nparams; i++) {
        const tl_pv *v = res->params[i].val;
        cp_param *p = &m->p[i];
        p->key = res->params[i].key;
        p->text = NULL;
        if (tl_pv_is_none(v) || (v->kind == TL_PV_FLOAT && isnan(v->u.f))) {
            p->kind = CP_NA;
            continue;
        }
        p->kind = v->kind == TL_PV_BOOL ? CP_BOOL
                  : (v->kind == TL_PV_INT && !v->u.i.big) ? CP_INT
                  : v->kind == TL_PV_FLOAT ? CP_FLOAT
                  : CP_OTHER;
        if (group == G_GEMM && p->kind == CP_INT && !strcmp(p->key, "B") && v->u.i.v > 1) {
            m->flops /= (double)v->u.i.v;
            m->bytes /= (double)v->u.i.v;
            p->text = "1";
            continue;
        }
        b.n = 0;
        tl_pv_write_str(&b, v, 0);
        p->text = tl_arena_strndup(a, b.p ? b.p : "", b.n);
    }
    tl_buf_free(&b);
}

/* The model of event i (its kernels: rows[0..n), by start time). */
static const cp_model *model_of(cp_cache *k, int32_t i, int group, const tl_pm_op *op, const int32_t *rows,
                                size_t n)
{
    const tl_trace *t = k->c->t;
    uint32_t ids[5] = {t->name[i], t->in_dims[i], t->in_type[i], t->in_strides[i], t->concrete[i]};
    k->key.n = 0;
    for (int f = 0; f < 5; f++) tl_buf_printf(&k->key, "%x,", ids[f]);
    if (group == G_GEMM)
        for (size_t q = 0; q < n; q++) tl_buf_printf(&k->key, "%x,", t->name[rows[q]]);
    tl_buf_putc(&k->key, 0);
    size_t *hit = tl_smap_get(&k->memo, k->key.p, k->key.n - 1);
    if (hit) return &k->models.v[*hit];
    const char **names = tl_arena_alloc(&k->scratch, (n ? n : 1) * sizeof *names);
    for (size_t q = 0; q < n; q++) names[q] = pyt_name(k->c, rows[q]);
    tl_pm_args args = {
        .input_dims = arg_text(k->c, ids[1]),
        .input_type = arg_text(k->c, ids[2]),
        .input_strides = arg_text(k->c, ids[3]),
        .concrete_inputs = arg_text(k->c, ids[4]),
        .has_seq = t->seq[i] != TL_NONE,
        .seq = t->seq[i],
        .kernel_names = names,
        .nkernels = n,
    };
    cp_model m = {0};
    tl_pm_result res;
    tl_err e;
    if (tl_pm_eval(op, &args, TL_PM_FWD, k->pm, &k->scratch, &res, &e) == 0) {
        m.ok = 1;
        m.flops = res.flops;
        m.bytes = res.bytes;
        m.has_bytes = res.has_bytes;
        take_params(&res, group, k->a, &m);
    }
    int isnew;
    *tl_smap_put(&k->memo, tl_arena_strndup(k->a, k->key.p, k->key.n - 1), k->key.n - 1, &isnew) = k->models.n;
    tl_vec_push(&k->models, m);
    return &k->models.v[k->models.n - 1];
}

/* The row of event i, or -1 when the reference's metric computation fails
 * for it (no model, args that do not fit, a GEMM without kernels). */
static int make_row(cp_cache *k, int32_t i, int group, const tl_pm_op *op, int32_t **rows, size_t *cap, cp_row *row)
{
    const pyt_ctx *c = k->c;
    const tl_trace *t = c->t;
    size_t n = 0;
    pyt_subtree_gpu(c, i, rows, &n, cap);
    pyt_sort_rows_by_ts(c, *rows, n);
    /* the branch's GEMM model reads kernel names it never set when the op has no kernel */
    if (group == G_GEMM && n == 0) return -1;
    const cp_model *m = model_of(k, i, group, op, *rows, n);
    if (!m->ok) return -1;
    memset(row, 0, sizeof *row);
    row->name = name_text(k, t->name[i]);
    row->uid = t->uid[i];
    row->p = m->p;
    row->np = m->np;
    row->k = tl_arena_alloc(k->a, (n ? n : 1) * sizeof *row->k);
    row->nk = n;
    for (size_t q = 0; q < n; q++) {
        int32_t g = (*rows)[q];
        row->k[q].name = name_text(k, t->name[g]);
        row->k[q].dur = pyt_dur(c, g);
        row->k[q].has_stream = pyt_stream(c, g, &row->k[q].stream);
    }
    row->kt = n ? pyt_busy(c, *rows, n) : 0;
    size_t nd = 0;
    for (size_t q = 0; q < n; q++) /* compacts rows to the non-data-movement kernels */
        if (!data_movement(row->k[q].name)) (*rows)[nd++] = (*rows)[q];
    row->ndm_kt = nd ? pyt_busy(c, *rows, nd) : 0;
    double bytes = m->bytes;
    row->gflops = m->flops / 1e9;
    row->mb = m->has_bytes ? bytes / (1024.0 * 1024.0) : NAN;
    row->fpb = m->has_bytes && bytes > 0 ? (row->gflops * 1e9) / bytes : NAN;
    row->tflops = row->kt > 0 ? (row->gflops / 1e3) / (row->kt / 1e6) : NAN;
    row->tbs = m->has_bytes && row->kt > 0 ? (bytes / 1e12) / (row->kt / 1e6) : NAN;
    row->ndm_tflops = row->ndm_kt > 0 ? (row->gflops / 1e3) / (row->ndm_kt / 1e6) : NAN;
    row->dims = arg_repr(k, t->in_dims[i]);
    row->types = arg_repr(k, t->in_type[i]);
    row->strides = arg_repr(k, t->in_strides[i]);
    row->concrete = arg_repr(k, t->concrete[i]);
    return 0;
}

void cp_collect(pyt_ctx *c, tl_arena *a, cp_rows out[CP_NGROUPS])
{
    const tl_trace *t = c->t;
    if (!t->in_dims) return;
    size_t nd = t->dict.n ? t->dict.n : 1;
    int8_t *gof = tl_xmalloc(nd); /* group per name id, -2 not looked up */
    memset(gof, -2, nd);
    cp_cache k = {.c = c, .a = a, .pm = tl_pm_ctx_new()};
    tl_arena_init(&k.scratch, 64 * 1024);
    k.name = tl_xcalloc(nd, sizeof *k.name);
    k.repr = tl_xcalloc(nd, sizeof *k.repr);
    int32_t *rows = NULL;
    size_t cap = 0;
    for (size_t i = 0; i < t->n; i++) {
        if (!t->in_dims[i]) continue;
        uint32_t nm = t->name[i];
        if (nm >= t->dict.n) continue;
        if (gof[nm] == -2) gof[nm] = (int8_t)group_of_name(tl_trace_str(t, nm));
        int g = gof[nm];
        const tl_pm_op *op = g >= 0 ? pyt_pm_op(c, (int32_t)i) : NULL;
        cp_row row;
        if (op && make_row(&k, (int32_t)i, g, op, &rows, &cap, &row) == 0) tl_vec_push(&out[g], row);
    }
    free(rows);
    free(k.name), free(k.repr);
    tl_vec_free(&k.models);
    tl_smap_free(&k.memo);
    tl_buf_free(&k.key);
    tl_arena_free(&k.scratch);
    tl_pm_ctx_free(k.pm);
    free(gof);
}

/* ---- the pooled sheet ---------------------------------------------------------------- */

enum { CT_STR, CT_BOOL, CT_I64, CT_F64 };

/* A row's value of key (its first param of that key), or NULL. */
static const cp_param *param_of(const cp_row *r, const char *key)
{
    for (size_t i = 0; i < r->np; i++)
        if (!strcmp(r->p[i].key, key)) return &r->p[i];
    return NULL;
}

/* The column type pandas gives a param column over all rows. */
static int param_type(const cp_row *const *rows, size_t n, const char *key)
{
    int missing = 0, b = 0, in = 0, fl = 0, other = 0;
    for (size_t r = 0; r < n; r++) {
        const cp_param *p = param_of(rows[r], key);
        int k = p ? p->kind : CP_NA;
        missing |= k == CP_NA, b |= k == CP_BOOL, in |= k == CP_INT, fl |= k == CP_FLOAT, other |= k == CP_OTHER;
    }
    if (other || (b && (in || fl))) return CT_STR;
    if (b) return missing ? CT_STR : CT_BOOL;
    if (in || fl) return fl || missing ? CT_F64 : CT_I64;
    return CT_STR;
}

/* Statistics of a group over non-NaN values: pandas' group-by mean (Kahan),
 * sample std (Welford) and sum. */
typedef struct gstat {
    tl_kahan sum;
    tl_welford w;
    size_t n;
} gstat;

static void gstat_add(gstat *s, double x)
{
    if (isnan(x)) return;
    tl_kahan_add(&s->sum, x);
    tl_welford_add(&s->w, x);
    s->n++;
}
static double gstat_mean(const gstat *s) { return s->n ? s->sum.sum / (double)s->n : NAN; }
static double gstat_std(const gstat *s) { return s->n > 1 ? tl_welford_std(&s->w, 1) : NAN; }

/* TreePerfAnalyzer._summarize_kernel_stats(agg_metrics=["mean", "std"]):
 * kernel lists aligned by position against the group's first non-empty
 * list; lists of another length (empty ones too) are left out. */
static void kernel_stats(tl_buf *b, const cp_row *const *rows, size_t n)
{
    const cp_row *tpl = NULL;
    for (size_t r = 0; r < n && !tpl; r++)
        if (rows[r]->nk) tpl = rows[r];
    if (!tpl) {
        tl_buf_puts(b, "[]");
        return;
    }
    double *d = tl_xmalloc(n * sizeof *d);
    char num[40];
    tl_buf_putc(b, '[');
    for (size_t k = 0; k < tpl->nk; k++) {
        size_t m = 0;
        for (size_t r = 0; r < n; r++)
            if (rows[r]->nk == tpl->nk) d[m++] = rows[r]->k[k].dur;
        if (k) tl_buf_puts(b, ", ");
        tl_buf_puts(b, "{'name': ");
        tl_buf_pystr(b, tpl->k[k].name, strlen(tpl->k[k].name));
        if (tpl->k[k].has_stream) tl_buf_printf(b, ", 'stream': %lld", (long long)tpl->k[k].stream);
        else tl_buf_puts(b, ", 'stream': None");
        tl_buf_printf(b, ", 'count': %zu", m);
        tl_fmt_pyfloat(tl_sum_pairwise(d, m), num);
        tl_buf_printf(b, ", 'total_duration_us': %s", num);
        tl_fmt_pyfloat(tl_mean_pairwise(d, m), num);
        tl_buf_printf(b, ", 'mean_duration_us': %s", num);
        tl_fmt_pyfloat(tl_std_pairwise(d, m, 0), num);
        tl_buf_printf(b, ", 'std_dev_duration_us': %s}", num);
    }
    tl_buf_putc(b, ']');
    free(d);
}

/* The group's key: name and every param column's value (NA as one value). */
static void group_key(tl_buf *b, const cp_row *r, const char *const *keys, const int *types, size_t nkeys)
{
    b->n = 0;
    tl_buf_puts(b, r->name);
    for (size_t k = 0; k < nkeys; k++) {
        const cp_param *p = param_of(r, keys[k]);
        tl_buf_putc(b, '\x1f');
        if (!p || p->kind == CP_NA) tl_buf_putc(b, '\x01');
        else if (types[k] == CT_F64 || types[k] == CT_I64) tl_buf_printf(b, "%.17g", strtod(p->text, NULL));
        else tl_buf_puts(b, p->text);
    }
    tl_buf_putc(b, 0);
}

typedef struct cgroup {
    TL_VEC(const cp_row *) rows;
    double ksum;
    int64_t uid;
    size_t first; /* order of first appearance */
} cgroup;

static const cgroup *sort_groups;
static int cmp_groups(const void *x, const void *y)
{
    const cgroup *a = &sort_groups[*(const size_t *)x], *b = &sort_groups[*(const size_t *)y];
    if (a->ksum != b->ksum) return a->ksum > b->ksum ? -1 : 1;
    if (a->uid != b->uid) return a->uid < b->uid ? -1 : 1;
    return a->first < b->first ? -1 : a->first > b->first;
}

static void set_num(tl_table *t, size_t c, size_t r, double v)
{
    if (!isnan(v)) tl_table_set_f64(t, c, r, v);
}

static const char *first_text(const cgroup *g, size_t off)
{
    for (size_t i = 0; i < g->rows.n; i++) {
        const char *s = *(const char *const *)((const char *)g->rows.v[i] + off);
        if (s) return s;
    }
    return NULL;
}

static double first_num(const cgroup *g, size_t off)
{
    for (size_t i = 0; i < g->rows.n; i++) {
        double v = *(const double *)((const char *)g->rows.v[i] + off);
        if (!isnan(v)) return v;
    }
    return NAN;
}

/* The statistic columns of one group's row r. */
static void fill_stats(tl_table *t, size_t col, size_t r, const cgroup *g, tl_buf *kd)
{
    gstat tb = {0}, tf = {0}, ntf = {0}, nkt = {0}, kt = {0};
    for (size_t i = 0; i < g->rows.n; i++) {
        const cp_row *x = g->rows.v[i];
        gstat_add(&tb, x->tbs), gstat_add(&tf, x->tflops), gstat_add(&ntf, x->ndm_tflops);
        gstat_add(&nkt, x->ndm_kt), gstat_add(&kt, x->kt);
    }
    set_num(t, col++, r, first_num(g, offsetof(cp_row, gflops)));
    set_num(t, col++, r, first_num(g, offsetof(cp_row, mb)));
    set_num(t, col++, r, first_num(g, offsetof(cp_row, fpb)));
    set_num(t, col++, r, gstat_mean(&tb)), set_num(t, col++, r, gstat_std(&tb));
    set_num(t, col++, r, gstat_mean(&tf)), set_num(t, col++, r, gstat_std(&tf));
    set_num(t, col++, r, gstat_mean(&ntf)), set_num(t, col++, r, gstat_std(&ntf));
    tl_table_set_f64(t, col++, r, nkt.sum.sum);
    kd->n = 0;
    kernel_stats(kd, g->rows.v, g->rows.n);
    tl_table_set_strn(t, col++, r, kd->p, kd->n);
    static const size_t ARGS[] = {offsetof(cp_row, dims), offsetof(cp_row, types), offsetof(cp_row, strides),
                                  offsetof(cp_row, concrete)};
    for (size_t k = 0; k < 4; k++, col++) {
        const char *s = first_text(g, ARGS[k]);
        if (s) tl_table_set_str(t, col, r, s);
    }
    set_num(t, col++, r, gstat_mean(&kt)), set_num(t, col++, r, gstat_std(&kt));
    tl_table_set_f64(t, col++, r, kt.sum.sum);
    tl_table_set_i64(t, col++, r, (int64_t)g->rows.n);
    tl_table_set_i64(t, col++, r, g->uid);
}

/* The summary columns after the params, in the reference's order. */
static const struct {
    const char *name;
    tl_type type;
} STAT_COLS[] = {
    {"GFLOPS_first", TL_F64}, {"Data Moved (MB)_first", TL_F64}, {"FLOPS/Byte_first", TL_F64},
    {"TB/s_mean", TL_F64}, {"TB/s_std", TL_F64}, {"TFLOPS/s_mean", TL_F64}, {"TFLOPS/s_std", TL_F64},
    {"Non-Data-Mov TFLOPS/s_mean", TL_F64}, {"Non-Data-Mov TFLOPS/s_std", TL_F64},
    {"Non-Data-Mov Kernel Time (µs)_sum", TL_F64}, {"kernel_details__summarize_kernel_stats", TL_STR},
    {"Input Dims_first", TL_STR}, {"Input type_first", TL_STR}, {"Input Strides_first", TL_STR},
    {"Concrete Inputs_first", TL_STR}, {"Kernel Time (µs)_mean", TL_F64}, {"Kernel Time (µs)_std", TL_F64},
    {"Kernel Time (µs)_sum", TL_F64}, {"name_count", TL_I64}, {"UID_first", TL_I64},
};

/* The table's param cells of row r from the group's first row. */
static void fill_params(tl_table *t, size_t r, const cp_row *x, const char *const *keys, const int *types,
                        size_t nkeys)
{
    for (size_t k = 0; k < nkeys; k++) {
        const cp_param *p = param_of(x, keys[k]);
        if (!p || p->kind == CP_NA) continue;
        if (types[k] == CT_I64) tl_table_set_i64(t, 1 + k, r, strtoll(p->text, NULL, 10));
        else if (types[k] == CT_F64) tl_table_set_f64(t, 1 + k, r, strtod(p->text, NULL));
        else if (types[k] == CT_BOOL) tl_table_set_bool(t, 1 + k, r, !strcmp(p->text, "True"));
        else tl_table_set_str(t, 1 + k, r, p->text);
    }
}

tl_table *cp_group_sheet(size_t g, cp_rows *const *ranks, size_t n)
{
    TL_VEC(const cp_row *) all = {0};
    TL_VEC(const char *) keys = {0}; /* param columns, first appearance */
    for (size_t r = 0; r < n; r++)
        for (size_t i = 0; i < ranks[r][g].n; i++) {
            const cp_row *x = &ranks[r][g].v[i];
            tl_vec_push(&all, x);
            for (size_t p = 0; p < x->np; p++) {
                size_t k = 0;
                while (k < keys.n && strcmp(keys.v[k], x->p[p].key)) k++;
                if (k == keys.n) tl_vec_push(&keys, x->p[p].key);
            }
        }
    if (!all.n) return NULL;
    /* the column types over one row per model (rows of a model have the same params) */
    tl_smap seen = {0};
    TL_VEC(const cp_row *) reps = {0};
    char pk[48];
    for (size_t i = 0; i < all.n; i++) {
        int len = snprintf(pk, sizeof pk, "%p", (const void *)all.v[i]->p), isnew;
        if (tl_smap_get(&seen, pk, (size_t)len)) continue;
        tl_smap_put(&seen, tl_xstrdup(pk), (size_t)len, &isnew);
        tl_vec_push(&reps, all.v[i]);
    }
    int *types = tl_xmalloc((keys.n ? keys.n : 1) * sizeof *types);
    for (size_t k = 0; k < keys.n; k++) types[k] = param_type(reps.v, reps.n, keys.v[k]);
    for (size_t i = 0; i < seen.cap; i++) free((void *)seen.keys[i]);
    tl_smap_free(&seen);
    tl_vec_free(&reps);
    /* groups in first-appearance order; rows with the same name text and
     * model (params array) share a group, so the key text is made once per
     * such pair (pm: "name address, params address" -> group) */
    tl_smap m = {0}, pm = {0};
    TL_VEC(cgroup) G = {0};
    tl_buf key = {0};
    for (size_t i = 0; i < all.n; i++) {
        int len = snprintf(pk, sizeof pk, "%p,%p", (const void *)all.v[i]->name, (const void *)all.v[i]->p);
        size_t *pslot = tl_smap_get(&pm, pk, (size_t)len), gi;
        if (pslot) {
            gi = *pslot;
        } else {
            group_key(&key, all.v[i], keys.v, types, keys.n);
            size_t *slot = tl_smap_get(&m, key.p, strlen(key.p));
            if (slot) {
                gi = *slot;
            } else {
                int isnew;
                gi = G.n;
                *tl_smap_put(&m, tl_xstrdup(key.p), strlen(key.p), &isnew) = gi;
                cgroup z = {.uid = all.v[i]->uid, .first = gi};
                tl_vec_push(&G, z);
            }
            int isnew;
            *tl_smap_put(&pm, tl_xstrdup(pk), (size_t)len, &isnew) = gi;
        }
        tl_vec_push(&G.v[gi].rows, all.v[i]);
    }
    size_t *perm = tl_xmalloc(G.n * sizeof *perm);
    for (size_t i = 0; i < G.n; i++) {
        tl_kahan s = {0, 0};
        for (size_t j = 0; j < G.v[i].rows.n; j++) tl_kahan_add(&s, G.v[i].rows.v[j]->kt);
        G.v[i].ksum = s.sum;
        perm[i] = i;
    }
    sort_groups = G.v;
    qsort(perm, G.n, sizeof *perm, cmp_groups);

    tl_table *t = tl_table_new(GROUPS[g].name);
    tl_table_add_col(t, "name", TL_STR);
    static const tl_type CT[] = {[CT_STR] = TL_STR, [CT_BOOL] = TL_BOOL, [CT_I64] = TL_I64, [CT_F64] = TL_F64};
    char cn[160];
    for (size_t k = 0; k < keys.n; k++) {
        snprintf(cn, sizeof cn, "param: %s", keys.v[k]);
        tl_table_add_col(t, cn, CT[types[k]]);
    }
    size_t c0 = t->ncols;
    for (size_t k = 0; k < sizeof STAT_COLS / sizeof *STAT_COLS; k++)
        tl_table_add_col(t, STAT_COLS[k].name, STAT_COLS[k].type);
    size_t c_cum = tl_table_add_col(t, "kernel_time_sum_cum_pct", TL_F64);
    tl_table_set_nrows(t, G.n);
    double *ks = tl_xmalloc(G.n * sizeof *ks);
    for (size_t r = 0; r < G.n; r++) {
        const cgroup *x = &G.v[perm[r]];
        tl_table_set_str(t, 0, r, x->rows.v[0]->name);
        fill_params(t, r, x->rows.v[0], keys.v, types, keys.n);
        fill_stats(t, c0, r, x, &key);
        ks[r] = x->ksum;
    }
    /* Series.cumsum() / Series.sum() (NumPy's pairwise sum) */
    double total = tl_sum_pairwise(ks, G.n), run = 0;
    for (size_t r = 0; r < G.n; r++) {
        run += ks[r];
        set_num(t, c_cum, r, run / total);
    }
    free(ks);
    for (size_t i = 0; i < G.n; i++) tl_vec_free(&G.v[i].rows);
    tl_vec_free(&G);
    for (size_t i = 0; i < m.cap; i++) free((void *)m.keys[i]);
    for (size_t i = 0; i < pm.cap; i++) free((void *)pm.keys[i]);
    tl_smap_free(&m);
    tl_smap_free(&pm);
    tl_buf_free(&key);
    free(perm), free(types);
    tl_vec_free(&keys);
    tl_vec_free(&all);
    return t;
}
