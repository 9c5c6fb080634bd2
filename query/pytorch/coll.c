/* coll.c — the coll_analysis sheet of the PyTorch report (spec
 * pytorch-report.md §9.9): NCCL/RCCL kernels with their collective
 * metadata (process group, collective, dtype, message sizes, stream),
 * grouped per distinct collective and timed with their raw durations. The
 * metadata comes from the kernels' own args, read from the stored raw args
 * text; rows lacking any grouping key are dropped, as in the reference. */
#include "query/pytorch/pytorch_internal.h"

#include <stdlib.h>

enum { V_MISS = 0, V_INT, V_FLT, V_STR };

typedef struct cval {
    int kind;
    int64_t i;
    double f;
    const char *s;
} cval;

#define NKEYS 11
static const char *const KEYS[NKEYS] = {TL_ARG_RANK,       TL_ARG_PG_NAME,    TL_ARG_PG_RANKS, TL_ARG_COLL_NAME,
                                        TL_ARG_GROUP_SIZE, TL_ARG_DTYPE,      TL_ARG_IN_NELEMS, TL_ARG_OUT_NELEMS,
                                        TL_ARG_IN_SPLIT,   TL_ARG_OUT_SPLIT,  TL_ARG_STREAM};

typedef struct cev {
    cval k[NKEYS];
    double dur, in_mb, out_mb;
} cev;

static cval read_arg(pyt_ctx *c, const char *args, size_t len, const char *key)
{
    cval v = {0};
    size_t vl;
    const char *s = tl_args_get(args, len, key, &vl);
    if (!s) return v;
    if (s[0] == '"') {
        tl_buf b = {0};
        tl_args_get_str(args, len, key, &b);
        v.kind = V_STR;
        v.s = tl_arena_strndup(&c->arena, b.p ? b.p : "", b.n);
        tl_buf_free(&b);
    } else if (s[0] == '[' || s[0] == '{') {
        char *out = NULL;
        tl_err e = {0};
        if (tl_pv_reformat(&c->arena, s, vl, TL_PV_TUPLES, &out, &e) == 0) {
            v.kind = V_STR;
            v.s = out;
        }
    } else if (vl == 4 && !strncmp(s, "null", 4)) {
        /* missing */
    } else if ((vl == 4 && !strncmp(s, "true", 4)) || (vl == 5 && !strncmp(s, "false", 5))) {
        v.kind = V_STR;
        v.s = s[0] == 't' ? "True" : "False";
    } else {
        char tmp[64];
        if (vl >= sizeof tmp) return v;
        memcpy(tmp, s, vl);
        tmp[vl] = 0;
        if (strpbrk(tmp, ".eE") || strstr(tmp, "NaN") || strstr(tmp, "Infinity")) {
            v.kind = V_FLT;
            v.f = strtod(tmp, NULL);
        } else {
            v.kind = V_INT;
            v.i = strtoll(tmp, NULL, 10);
        }
    }
    return v;
}

static int dtype_bytes(const char *d)
{
    static const struct { const char *n; int b; } t[] = {
        {"Float", 4}, {"Int", 4}, {"Long", 8}, {"BFloat16", 2}, {"Bool", 1},
        {"Byte", 1}, {"Double", 8}, {"Half", 2}, {"Short", 2}};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (!strcmp(d, t[i].n)) return t[i].b;
    return 0;
}

static double as_num(const cval *v) { return v->kind == V_INT ? (double)v->i : v->f; }

static int cmp_val(const cval *a, const cval *b)
{
    if (a->kind == V_STR && b->kind == V_STR) return strcmp(a->s, b->s);
    if (a->kind == V_STR) return 1; /* numbers before strings (never mixed in practice) */
    if (b->kind == V_STR) return -1;
    double x = as_num(a), y = as_num(b);
    return x < y ? -1 : x > y;
}

/* per thread: the corpus workbook runs reports of several ranks at once */
static _Thread_local cev *sort_ev;
static int cmp_group(const void *x, const void *y)
{
    const cev *a = &sort_ev[*(const size_t *)x], *b = &sort_ev[*(const size_t *)y];
    for (int k = 0; k < NKEYS; k++) {
        int r = cmp_val(&a->k[k], &b->k[k]);
        if (r) return r;
    }
    return 0;
}

static void key_text(tl_buf *b, const cval *v)
{
    char num[48];
    switch (v->kind) {
    case V_INT: tl_buf_printf(b, "i%lld", (long long)v->i); break;
    case V_FLT: tl_fmt_pyfloat(v->f, num); tl_buf_printf(b, "f%s", num); break;
    case V_STR: tl_buf_putc(b, 's'); tl_buf_puts(b, v->s); break;
    default: break;
    }
    tl_buf_putc(b, '\x1f');
}

typedef TL_VEC(cev) cevvec;

static int is_coll_event(pyt_ctx *c, size_t i)
{
    const tl_trace *t = c->t;
    return t->kind[i] == TL_K_KERNEL && pyt_row_is_comm(c, (int32_t)i) &&
           (tl_trace_corr(t, i) != TL_NONE || tl_trace_ext_id(t, i) != TL_NONE);
}

/* The communication kernels with their keys read from the args, in one
 * block of their count (tl_big_alloc: a large trace has millions). */
static void collect_events(pyt_ctx *c, cevvec *ev)
{
    size_t n = 0;
    for (size_t i = 0; i < c->n; i++) n += (size_t)is_coll_event(c, i);
    if (!n) return;
    ev->v = tl_big_alloc(n * sizeof *ev->v);
    ev->cap = n;
    for (size_t i = 0; i < c->n; i++) {
        if (!is_coll_event(c, i)) continue;
        size_t len;
        const char *args = pyt_args(c, (int32_t)i, &len);
        cev e;
        memset(&e, 0, sizeof e);
        e.k[0].kind = V_INT; /* rank 0: a single-trace report */
        for (int k = 1; k < NKEYS; k++) e.k[k] = read_arg(c, args, len, KEYS[k]);
        if (e.k[3].kind == V_MISS) {
            const char *nm = pyt_name(c, (int32_t)i);
            for (const char *p = nm; *p; p++)
                if (!strncasecmp(p, "cross_device_reduce", 19)) {
                    e.k[3].kind = V_STR;
                    e.k[3].s = "allreduce";
                    break;
                }
        }
        e.dur = pyt_dur(c, (int32_t)i);
        int bpe = e.k[5].kind == V_STR ? dtype_bytes(e.k[5].s) : 0;
        e.in_mb = (bpe && (e.k[6].kind == V_INT || e.k[6].kind == V_FLT)) ? as_num(&e.k[6]) * bpe / 1048576.0 : NAN;
        e.out_mb = (bpe && (e.k[7].kind == V_INT || e.k[7].kind == V_FLT)) ? as_num(&e.k[7]) * bpe / 1048576.0 : NAN;
        ev->v[ev->n++] = e;
    }
}

/* Process-group naming: "all" when no event names a group and every
 * rank (there is one) uses at most one stream, else "Unknown_Group" for
 * the events without one. */
static void name_process_groups(cevvec *ev)
{
    int any_pg = 0, nstreams = 0;
    int64_t s0 = 0;
    int multi = 0;
    for (size_t i = 0; i < ev->n; i++) {
        cval *pg = &ev->v[i].k[1];
        if (pg->kind != V_MISS && !(pg->kind == V_STR && !strcmp(pg->s, "Unknown_Group"))) any_pg = 1;
        cval *st = &ev->v[i].k[10];
        if (st->kind == V_INT) {
            if (!nstreams) { s0 = st->i; nstreams = 1; }
            else if (st->i != s0) multi = 1;
        }
    }
    for (size_t i = 0; i < ev->n; i++) {
        cval *pg = &ev->v[i].k[1];
        if (pg->kind == V_MISS) {
            pg->kind = V_STR;
            pg->s = (!any_pg && !multi) ? "all" : "Unknown_Group";
        } else if (!any_pg && !multi) {
            pg->kind = V_STR;
            pg->s = "all";
        }
    }
}

int pyt_sheet_coll(pyt_ctx *c, tl_pyt_sheets *out, tl_err *err)
{
    (void)err;
    cevvec ev = {0};
    int miss_int[NKEYS] = {0}, any_int[NKEYS] = {0};
    collect_events(c, &ev);
    if (!ev.n) return 0;
    name_process_groups(&ev);
    for (size_t i = 0; i < ev.n; i++)
        for (int k = 0; k < NKEYS; k++) {
            if (ev.v[i].k[k].kind == V_MISS) miss_int[k] = 1;
            if (ev.v[i].k[k].kind == V_INT) any_int[k] = 1;
        }

    /* group (rows with a missing key dropped), ascending key order */
    tl_smap m;
    tl_smap_init(&m, 64);
    size_t *first = tl_xmalloc(ev.n * sizeof *first), ng = 0;
    size_t *gid = tl_xmalloc(ev.n * sizeof *gid);
    tl_buf kb = {0};
    for (size_t i = 0; i < ev.n; i++) {
        gid[i] = SIZE_MAX;
        int drop = 0;
        kb.n = 0;
        for (int k = 0; k < NKEYS; k++) {
            if (ev.v[i].k[k].kind == V_MISS) drop = 1;
            key_text(&kb, &ev.v[i].k[k]);
        }
        if (drop) continue;
        int isnew;
        char *key = tl_arena_strndup(&c->arena, kb.p, kb.n);
        size_t *slot = tl_smap_put(&m, key, kb.n, &isnew);
        if (isnew) { *slot = ng; first[ng++] = i; }
        gid[i] = *slot;
    }
    tl_buf_free(&kb);
    tl_smap_free(&m);
    if (!ng) {
        free(first); free(gid); tl_big_free(ev.v);
        return 0;
    }
    size_t *ord = tl_xmalloc(ng * sizeof *ord);
    for (size_t g = 0; g < ng; g++) ord[g] = first[g];
    sort_ev = ev.v;
    qsort(ord, ng, sizeof *ord, cmp_group); /* ord: event index of each group's first member */
    size_t *ginv = tl_xmalloc(ng * sizeof *ginv);
    for (size_t r = 0; r < ng; r++) ginv[gid[ord[r]]] = r; /* group id -> ascending rank */
    double *sums = tl_xcalloc(ng, sizeof *sums);
    double *tmp = tl_xmalloc(ev.n * sizeof *tmp);
    pyt_stats *st = tl_xmalloc(ng * sizeof *st);
    double *inmb = tl_xmalloc(ng * sizeof *inmb), *outmb = tl_xmalloc(ng * sizeof *outmb);
    for (size_t r = 0; r < ng; r++) {
        size_t g = gid[ord[r]], nm = 0;
        inmb[r] = outmb[r] = NAN;
        for (size_t i = 0; i < ev.n; i++) {
            if (gid[i] != g) continue;
            tmp[nm++] = ev.v[i].dur;
            if (isnan(inmb[r])) inmb[r] = ev.v[i].in_mb;
            if (isnan(outmb[r])) outmb[r] = ev.v[i].out_mb;
        }
        pyt_stats_of(tmp, nm, &st[r]);
        sums[r] = st[r].sum;
    }
    (void)ginv;
    size_t *idx = tl_xmalloc(ng * sizeof *idx);
    for (size_t r = 0; r < ng; r++) idx[r] = r;
    pyt_sort_desc(c, idx, ng, sums);

    tl_table *tab = tl_table_new("coll_analysis");
    size_t kc[NKEYS];
    for (int k = 0; k < NKEYS; k++) {
        int numeric = any_int[k];
        int isflt = 0;
        for (size_t i = 0; i < ev.n; i++) if (ev.v[i].k[k].kind == V_FLT) isflt = 1;
        kc[k] = tl_table_add_col(tab, KEYS[k], isflt ? TL_F64 : numeric ? TL_I64 : TL_STR);
        if (numeric && !isflt && miss_int[k]) tab->cols[kc[k]].as_float = 1;
    }
    size_t cin = tl_table_add_col(tab, "In msg size (MB)_first", TL_F64);
    size_t cout = tl_table_add_col(tab, "Out msg size (MB)_first", TL_F64);
    size_t cs = tl_table_add_col(tab, "dur_sum", TL_F64);
    size_t cmean = tl_table_add_col(tab, "dur_mean", TL_F64);
    size_t cstd = tl_table_add_col(tab, "dur_std", TL_F64);
    size_t cmin = tl_table_add_col(tab, "dur_min", TL_F64);
    size_t cmax = tl_table_add_col(tab, "dur_max", TL_F64);
    size_t ccnt = tl_table_add_col(tab, "operation_count", TL_I64);
    for (size_t q = 0; q < ng; q++) {
        size_t r = idx[q];
        const cev *e = &ev.v[ord[r]];
        size_t row = tl_table_add_row(tab);
        for (int k = 0; k < NKEYS; k++) {
            const cval *v = &e->k[k];
            tl_column *col = &tab->cols[kc[k]];
            if (col->type == TL_STR) {
                char num[48];
                if (v->kind == V_STR) tl_table_set_str(tab, kc[k], row, v->s);
                else if (v->kind == V_INT) { snprintf(num, sizeof num, "%lld", (long long)v->i); tl_table_set_str(tab, kc[k], row, num); }
                else { tl_fmt_pyfloat(v->f, num); tl_table_set_str(tab, kc[k], row, num); }
            } else if (col->type == TL_I64) {
                if (v->kind == V_INT) tl_table_set_i64(tab, kc[k], row, v->i);
            } else {
                tl_table_set_f64(tab, kc[k], row, as_num(v));
            }
        }
        tl_table_set_f64(tab, cin, row, inmb[r]);
        tl_table_set_f64(tab, cout, row, outmb[r]);
        tl_table_set_f64(tab, cs, row, st[r].sum);
        tl_table_set_f64(tab, cmean, row, st[r].mean);
        tl_table_set_f64(tab, cstd, row, st[r].std);
        tl_table_set_f64(tab, cmin, row, st[r].min);
        tl_table_set_f64(tab, cmax, row, st[r].max);
        tl_table_set_i64(tab, ccnt, row, (int64_t)st[r].n);
    }
    pyt_sheets_push(out, tab);
    free(idx); free(st); free(inmb); free(outmb); free(tmp); free(sums); free(ginv);
    free(ord); free(first); free(gid);
    tl_big_free(ev.v);
    return 0;
}
