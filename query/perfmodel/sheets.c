/* sheets.c — the per-category perf sheets (pytorch-report.md §9.6,
 * perf-models.md §2, §7, §8): per-instance metrics, the param columns as
 * text typed over the whole sheet the way pandas types a column (an int
 * column with a float or a missing value prints 512.0), grouping by name +
 * params (+ num_kernels, is_recompute), pandas' aggregate arithmetic
 * (Kahan sums and means, Welford sample std, middle-pair median), the
 * kernel-list summary cells, the final sort, and the fwd/bwd set-aside rules
 * of §9.6.1. Sheets are aggregated into an internal form first so that the
 * set-aside rows can move between sheets before one tl_table is emitted. */
#include "query/perfmodel/pm_internal.h"
#include "query/core/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- aggregated form ------------------------------------------------------------ */

typedef struct agg_group {
    const char *name;
    const char **ptext; /* per sheet key; NULL = missing cell */
    int64_t num_kernels;
    int recompute; /* -1 missing */
    double gflops, mb, fpb;
    double tb[5], tf[5]; /* mean, median, std, min, max */
    const char *pname, *plabel, *tname, *cspec;
    double roof_time;
    const char *roof_bound;
    double pct[5];
    const char *kd_summary, *kd_trunc; /* trunc NULL = missing */
    const char *dims, *types, *strides, *ci;
    double kt[6]; /* mean, median, std, min, max, sum */
    int64_t count, uid_first;
    /* kl_overlap sheets: the overlap cells, and the total kernel time and
     * first UID of the groups sharing this one's key without the names */
    const char *ov_names, *ov_summary, *ov_trunc;
    double ov_pct[5];
    double base_total;
    int64_t base_uid;
} agg_group;

typedef struct agg_sheet {
    const char **keys;
    size_t nkeys;
    agg_group *groups;
    size_t ngroups;
    int kt_int;   /* every instance had an empty kernel set: int columns */
    int any_roof; /* some instance has roofline values */
} agg_sheet;

/* ---- model lookup by name address --------------------------------------------------- */

/* tl_pm_find of instance names, cached by the name's address. Instance
 * names are a trace dictionary's strings (one address per distinct name)
 * and every family pass looks up every instance of the trace, so uncached
 * lookups (strlen + hash + probe) would weigh on every family sheet. Equal addresses are equal strings, so a hit is exact;
 * a miss only costs the lookup. */
enum { OPC_SLOTS = 256 };
typedef struct opcache {
    const char *name[OPC_SLOTS];
    const tl_pm_op *op[OPC_SLOTS];
} opcache;

static const tl_pm_op *find_op(opcache *c, const char *name)
{
    size_t h = (size_t)(((uint64_t)(uintptr_t)name >> 3) * 0x9E3779B97F4A7C15ull >> 56);
    if (c->name[h] != name) { /* an empty slot holds NULL, whose op is NULL too */
        c->name[h] = name;
        c->op[h] = tl_pm_find(name);
    }
    return c->op[h];
}

/* ---- per-instance rows ------------------------------------------------------------ */

/* A surviving instance, reduced to what aggregation needs: the parsed arg
 * trees and model params live in a per-instance scratch arena that is freed
 * right away, so a sheet over a million ops keeps ~100 bytes per op. */
enum { PK_MISSING_NAN, PK_NONE, PK_BOOL, PK_INT, PK_FLOAT, PK_OTHER };

typedef struct pparam {
    uint32_t key;     /* index into the sheet's key list */
    uint8_t kind;     /* PK_* */
    const char *text; /* Python str() of the value (interned); NULL for None/NaN */
} pparam;

typedef struct prow {
    const tl_pm_instance *inst;
    uint32_t st;  /* its memo entry (the model's result), shared by equal rows */
    uint32_t nk;  /* kernels in the mode's set */
    double kt;    /* their busy time; 0 when there are none */
} prow;

/* Model results repeat: a trace runs the same layer with the same shapes many
 * times. The static part of a row (everything but the kernel-time rates) is
 * memoised per (name, arg texts, kernel names) within one sheet build.
 * ConvBias ops are never memoised: evaluating them fills the ctx cache. */
typedef struct memo_ent {
    uint64_t h;
    const char *key; /* memo_key's bytes */
    size_t klen;
    int ok;
    double gflops, mb, fpb, bytes;
    int has_bytes;
    const char *cspec;
    pparam *p;
    size_t np;
} memo_ent;

typedef struct memo {
    tl_hidx idx;           /* memo key -> index in e */
    TL_VEC(memo_ent) e;
} memo;

/* The entry of key, NULL when absent; *at is then the slot memo_add
 * fills. */
static memo_ent *memo_find(memo *m, uint64_t h, const char *key, size_t klen, size_t *at)
{
    size_t i = tl_hidx_home(&m->idx, h);
    for (; m->idx.ids[i]; i = tl_hidx_next(&m->idx, i)) {
        memo_ent *x = &m->e.v[m->idx.ids[i] - 1];
        if (m->idx.hashes[i] == h && x->klen == klen && memcmp(x->key, key, klen) == 0) return x;
    }
    *at = i;
    return NULL;
}

static void memo_add(memo *m, size_t at, const memo_ent *r)
{
    tl_hidx_set(&m->idx, at, r->h, (uint32_t)m->e.n);
    tl_vec_push(&m->e, *r);
}

/* A row's kernel-time rates (§6.3, the same arithmetic as
 * tl_pm_metrics_eval) and roofline (§6.5), from its model result and
 * kernel time t, derived where the group reads them. */
typedef struct prates {
    double tflops, tbs;
    tl_pm_roofline rf;
} prates;

static void row_rates(const memo_ent *st, double t, const tl_pm_arch *arch, prates *r)
{
    r->tflops = t != 0 ? (st->gflops / 1e3) / (t / 1e6) : NAN;
    r->tbs = (t != 0 && st->has_bytes) ? (st->bytes / 1e12) / (t / 1e6) : NAN;
    tl_pm_roofline_eval(arch, st->gflops, st->has_bytes, st->bytes, st->cspec, t, &r->rf);
}

/* Statistics over non-NaN values, pandas' group-by arithmetic: Kahan mean,
 * Welford sample std (both in row order), selection median. */
static void stats5(const double *v, size_t n, double *out /* mean, median, std, min, max */, double *tmp)
{
    size_t c = 0;
    tl_kahan sum = {0, 0};
    tl_welford w = {0, 0, 0};
    double mn = NAN, mx = NAN;
    for (size_t i = 0; i < n; i++) {
        double x = v[i];
        if (isnan(x)) continue;
        tmp[c++] = x;
        tl_kahan_add(&sum, x);
        tl_welford_add(&w, x);
        if (c == 1 || x < mn) mn = x;
        if (c == 1 || x > mx) mx = x;
    }
    if (!c) {
        for (int k = 0; k < 5; k++) out[k] = NAN;
        return;
    }
    out[0] = sum.sum / (double)c;
    out[1] = tl_median_f64(tmp, c);
    out[2] = tl_welford_std(&w, 1);
    out[3] = mn;
    out[4] = mx;
}

/* ---- string interning (param texts repeat across instances) ----------------------- */

typedef struct intern {
    tl_smap map; /* the texts (values unused); keys are the copies in a */
    tl_arena *a;
} intern;

static const char *intern_str(intern *t, const char *s, size_t n)
{
    if (t->map.cap) {
        size_t i = tl_smap_slot(&t->map, s, n, tl_hash64(s, n, 0));
        if (t->map.keys[i]) return t->map.keys[i];
    }
    const char *copy = tl_arena_strndup(t->a, s, n);
    tl_smap_put(&t->map, copy, n, NULL);
    return copy;
}

/* ---- param column typing (pandas dtype inference over all raw rows) ----------------- */

enum { COL_OBJECT, COL_INT, COL_FLOAT, COL_BOOL };

static const pparam *find_param(const pparam *p, size_t np, uint32_t key)
{
    for (size_t i = 0; i < np; i++)
        if (p[i].key == key) return &p[i];
    return NULL;
}

/* Every param column's type in one pass over the rows (a pass per column
 * re-read every row once per key: a tenth of the workbook's family
 * sheets). A row's value of a key is its first param of that key, missing
 * when it has none. E: the memo entries the rows refer to. */
static void col_types(const prow *rows, size_t nr, const memo_ent *E, size_t nk, int *ctype)
{
    enum { F_MISSING = 1, F_BOOL = 2, F_INT = 4, F_FLOAT = 8, F_OTHER = 16 };
    unsigned char *fl = tl_xcalloc(nk ? nk : 1, 1);
    size_t *present = tl_xcalloc(nk ? nk : 1, sizeof *present);
    for (size_t r = 0; r < nr; r++) {
        const pparam *p = E[rows[r].st].p;
        size_t np = E[rows[r].st].np;
        for (size_t i = 0; i < np; i++) {
            uint32_t key = p[i].key;
            if (key >= nk || find_param(p, np, key) != &p[i]) continue; /* not the first of its key */
            present[key]++;
            int k = p[i].kind;
            if (k == PK_MISSING_NAN || k == PK_NONE) fl[key] |= F_MISSING;
            else if (k == PK_BOOL) fl[key] |= F_BOOL;
            else if (k == PK_INT) fl[key] |= F_INT;
            else if (k == PK_FLOAT) fl[key] |= F_FLOAT;
            else fl[key] |= F_OTHER;
        }
    }
    for (size_t key = 0; key < nk; key++) {
        unsigned f = fl[key] | (present[key] < nr ? F_MISSING : 0);
        int missing = f & F_MISSING, b = f & F_BOOL, i = f & F_INT, fl64 = f & F_FLOAT;
        if ((f & F_OTHER) || (b && (i || fl64))) ctype[key] = COL_OBJECT;
        else if (b) ctype[key] = missing ? COL_OBJECT : COL_BOOL;
        else if (i || fl64) ctype[key] = (fl64 || missing) ? COL_FLOAT : COL_INT;
        else ctype[key] = COL_OBJECT; /* all missing */
    }
    free(fl);
    free(present);
}

/* The cell text under the column's type (NULL = missing cell) and the
 * grouping text, in which None and NaN stay distinct as after astype(str). */
static const char *typed_text(intern *in, const pparam *p, int type, const char **key)
{
    int k = p ? p->kind : PK_MISSING_NAN;
    if (k == PK_MISSING_NAN || k == PK_NONE) {
        *key = (k == PK_MISSING_NAN || type == COL_FLOAT || type == COL_INT) ? "\x01nan" : "\x01None";
        return NULL;
    }
    const char *s = p->text;
    if (type == COL_FLOAT && k == PK_INT) { /* an int in a float64 column prints as 512.0 */
        char num[48];
        tl_fmt_pyfloat(strtod(s, NULL), num);
        s = intern_str(in, num, strlen(num));
    }
    *key = s;
    return s;
}

static const char *arg_text(tl_arena *a, const char *raw)
{
    if (!raw) return NULL;
    char *out;
    tl_err e;
    if (tl_pv_reformat(a, raw, strlen(raw), 0, &out, &e) == 0) return out;
    return raw; /* unreadable: keep the text as written */
}

/* ---- build one aggregated sheet ------------------------------------------------------ */

typedef TL_VEC(const char *) keyvec;

static uint32_t key_index(keyvec *keys, const char *key)
{
    for (size_t j = 0; j < keys->n; j++)
        if (keys->v[j] == key || strcmp(keys->v[j], key) == 0) return (uint32_t)j;
    tl_vec_push(keys, key);
    return (uint32_t)(keys->n - 1);
}


/* The memo key: the addresses of the name and arg texts (and, for GEMM,
 * of the kernel names), not the texts. Instance strings are a trace
 * dictionary's, one address per distinct text, so equal addresses are
 * equal texts and a hit is exact; equal texts at two addresses (instances
 * of two traces) only miss the memo. A key built from the texts would cost
 * a strlen and copy of every arg and kernel name per instance. The output
 * type is the exception: it is
 * copied per instance, so its text goes in. */
static void memo_key(tl_buf *b, const tl_pm_op *op, const tl_pm_args *in, const char *const *knames)
{
    const char *parts[] = {in->name, in->input_dims, in->input_type, in->input_strides, in->concrete_inputs,
                           in->annotation};
    b->n = 0;
    tl_buf_append(b, parts, sizeof parts); /* NULL (absent) differs from any text's address */
    size_t ol = in->output_type ? strlen(in->output_type) + 1 : 0; /* 0: absent */
    tl_buf_append(b, &ol, sizeof ol);
    if (ol) tl_buf_append(b, in->output_type, ol);
    if (strcmp(op->family, "GEMM") != 0) return;
    tl_buf_append(b, &in->nkernels, sizeof in->nkernels); /* GEMM transpose reads kernel names */
    for (size_t i = 0; i < in->nkernels; i++) tl_buf_append(b, &knames[i], sizeof knames[i]);
}

/* Evaluates the model once per distinct memo key (scratch arena freed right
 * away); *st gets the row's memo entry (an entry of its own when the op is
 * not memoised). Returns 0 if the op has a row. */
static int static_part(tl_arena *a, intern *it, keyvec *keys, memo *mm, tl_buf *kb, const tl_pm_op *op,
                       const tl_pm_source *src, const tl_pm_instance *inst, tl_pm_mode mode, tl_pm_ctx *ctx,
                       uint32_t *st)
{
    int cacheable = op->model_id != PM_CONVBIAS_FWD && op->model_id != PM_CONVBIAS_BWD;
    size_t at = 0;
    uint64_t h = 0;
    tl_pm_fields f;
    src->fields(src->src, inst, &f);
    tl_pm_args args;
    tl_pm_args_of(&f, inst, &args);
    /* the op's own kernels by start time (GEMM transpose detection) */
    const char *kn1[8], **names = inst->nfwd <= 8 ? kn1 : tl_xmalloc(inst->nfwd * sizeof *names);
    tl_pm_kernel_names(src, inst, names);
    args.kernel_names = names;
    args.nkernels = inst->nfwd;
    if (cacheable) {
        memo_key(kb, op, &args, names);
        h = tl_hash64(kb->p, kb->n, 0);
        const memo_ent *hit = memo_find(mm, h, kb->p, kb->n, &at);
        if (hit) {
            if (names != kn1) free(names);
            *st = (uint32_t)(hit - mm->e.v);
            return hit->ok ? 0 : -1;
        }
    }
    args.name = NULL; /* the sheets evaluate the op's model by its entry */
    memo_ent r = {0};
    tl_arena s;
    tl_arena_init(&s, 16 * 1024);
    tl_pm_result res;
    tl_err e;
    if (tl_pm_eval(op, &args, mode, ctx, &s, &res, &e) == 0) {
        r.ok = 1;
        r.gflops = res.gflops;
        r.mb = res.data_moved_mb;
        r.fpb = res.flops_per_byte;
        r.bytes = res.bytes;
        r.has_bytes = res.has_bytes;
        r.cspec = intern_str(it, res.compute_spec, strlen(res.compute_spec));
        r.np = res.nparams;
        r.p = tl_arena_alloc(a, (r.np ? r.np : 1) * sizeof *r.p);
        tl_buf b = {0};
        for (size_t i = 0; i < res.nparams; i++) {
            const tl_pv *v = res.params[i].val;
            pparam *p = &r.p[i];
            p->key = key_index(keys, res.params[i].key); /* keys are the models' static literals */
            p->text = NULL;
            if (tl_pv_is_none(v)) p->kind = PK_NONE;
            else if (v->kind == TL_PV_FLOAT && isnan(v->u.f)) p->kind = PK_MISSING_NAN;
            else {
                p->kind = v->kind == TL_PV_BOOL ? PK_BOOL
                          : (v->kind == TL_PV_INT && !v->u.i.big) ? PK_INT
                          : v->kind == TL_PV_FLOAT ? PK_FLOAT
                          : PK_OTHER;
                b.n = 0;
                tl_pv_write_str(&b, v, 0);
                p->text = intern_str(it, b.p ? b.p : "", b.n);
            }
        }
        tl_buf_free(&b);
    }
    tl_arena_free(&s);
    if (names != kn1) free(names);
    if (cacheable) {
        r.h = h;
        char *k = tl_arena_alloc(a, kb->n ? kb->n : 1);
        memcpy(k, kb->p, kb->n);
        r.key = k;
        r.klen = kb->n;
        memo_add(mm, at, &r);
    } else if (r.ok) {
        tl_vec_push(&mm->e, r); /* the row's alone, found by no key */
    }
    *st = (uint32_t)(mm->e.n - 1);
    return r.ok ? 0 : -1;
}

static int make_row(tl_arena *a, intern *it, keyvec *keys, memo *mm, tl_buf *kb, const tl_pm_op *op,
                    const tl_pm_source *src, const tl_pm_instance *inst, tl_pm_mode mode, tl_pm_ctx *ctx,
                    prow *row)
{
    if (mode == TL_PM_BWD && !inst->has_bwd_events) return -1; /* checked on the event itself */
    uint32_t st;
    if (static_part(a, it, keys, mm, kb, op, src, inst, mode, ctx, &st) != 0) return -1;
    tl_pm_kset ks = tl_pm_kset_of(inst, mode);
    row->inst = inst;
    row->st = st;
    row->nk = (uint32_t)ks.n;
    row->kt = ks.n ? ks.time_us : 0.0;
    return 0;
}

/* One group's row: its key columns from its first row, the first
 * non-missing value of each "first" column (pandas first), the five stats
 * of TB/s, TFLOPS/s, Pct Roofline and kernel time (plus the kernel-time
 * sum), and the kernel details summary of its rows' kernel lists in the
 * mode. mem: the group's c row indices in row order. */
/* numpy's round(x, 2) (DataFrame.round): scale, round half to even, unscale */
static double np_round2(double x) { return rint(x * 100.0) / 100.0; }

/* The kl_overlap cells of a group: the first names (pandas "first": the
 * first non-missing), the details summary of the members' lists and the
 * overlap_pct statistics, rounded to 2, std 0.0 where a mean exists. */
static void fill_overlap(tl_arena *a, const prow *rows, const size_t *mem, size_t c, const tl_pm_kernel **kl,
                         size_t *kn, double *vals, double *tmp, tl_buf *sb, tl_buf *tb, agg_group *grp)
{
    const double **pl = tl_xmalloc((c ? c : 1) * sizeof *pl);
    for (size_t i = 0; i < c; i++) {
        const tl_pm_extra *x = rows[mem[i]].inst->extra;
        const char *names = x ? x->ov_names : NULL;
        if (!grp->ov_names && names) grp->ov_names = names;
        kl[i] = names ? x->ov_details : NULL;
        kn[i] = names ? x->ov_ndetails : 0;
        pl[i] = names ? x->ov_detail_pct : NULL;
        vals[i] = names ? x->ov_pct : NAN;
    }
    sb->n = tb->n = 0;
    int has_trunc = tl_pm_kdetails_summarize_overlap(kl, pl, kn, c, sb, tb);
    free(pl);
    grp->ov_summary = tl_arena_strndup(a, sb->p ? sb->p : "", sb->n);
    grp->ov_trunc = has_trunc ? tl_arena_strndup(a, tb->p ? tb->p : "", tb->n) : NULL;
    stats5(vals, c, grp->ov_pct, tmp);
    if (!isnan(grp->ov_pct[0]) && isnan(grp->ov_pct[2])) grp->ov_pct[2] = 0.0;
    for (int k = 0; k < 5; k++) grp->ov_pct[k] = np_round2(grp->ov_pct[k]);
}

/* The group's "first" cells of the event's texts: the first non-missing
 * value of each in row order (pandas first). */
static void group_texts(tl_arena *a, const tl_pm_source *src, const prow *rows, const size_t *mem, size_t c,
                        agg_group *grp)
{
    for (size_t i = 0; i < c; i++) {
        if (grp->pname && grp->plabel && grp->tname && grp->dims && grp->types && grp->strides && grp->ci) break;
        tl_pm_fields f;
        src->fields(src->src, rows[mem[i]].inst, &f);
        if (!grp->pname && f.process_name) grp->pname = f.process_name;
        if (!grp->plabel && f.process_label) grp->plabel = f.process_label;
        if (!grp->tname && f.thread_name) grp->tname = f.thread_name;
        if (!grp->dims && f.input_dims) grp->dims = arg_text(a, f.input_dims);
        if (!grp->types && f.input_type) grp->types = arg_text(a, f.input_type);
        if (!grp->strides && f.input_strides) grp->strides = arg_text(a, f.input_strides);
        if (!grp->ci && f.concrete_inputs) grp->ci = arg_text(a, f.concrete_inputs);
    }
}

typedef TL_VEC(tl_pm_kernel) kvec;

/* The group's kernel lists in the mode, one per row (each by start time),
 * read from the source into kb (reused from group to group) and listed in
 * kl / kn. */
static void group_kernels(const tl_pm_source *src, const prow *rows, const size_t *mem, size_t c,
                          tl_pm_mode mode, kvec *kb, const tl_pm_kernel **kl, size_t *kn)
{
    kb->n = 0;
    for (size_t i = 0; i < c; i++) {
        tl_pm_kset ks = tl_pm_kset_of(rows[mem[i]].inst, mode);
        kn[i] = ks.n;
        for (size_t j = 0; j < ks.n; j++) {
            tl_pm_kernel k;
            src->kernel(src->src, ks.k[j], &k);
            tl_vec_push(kb, k);
        }
    }
    for (size_t i = 0, at = 0; i < c; at += kn[i++]) kl[i] = kn[i] ? kb->v + at : NULL; /* kb is complete: no more moves */
}

/* The group's model cells (pandas first: the first non-missing in row
 * order) and its rows' rates: tb, tf, pct each c values. */
static void group_rates(const prow *rows, const size_t *mem, size_t c, const memo_ent *E, const tl_pm_arch *arch,
                        double *tb, double *tf, double *pct, agg_group *grp)
{
    grp->gflops = grp->mb = grp->fpb = grp->roof_time = NAN;
    for (size_t i = 0; i < c; i++) {
        const prow *p = &rows[mem[i]];
        const memo_ent *st = &E[p->st];
        prates r;
        row_rates(st, p->kt, arch, &r);
        if (isnan(grp->gflops) && !isnan(st->gflops)) grp->gflops = st->gflops;
        if (isnan(grp->mb) && !isnan(st->mb)) grp->mb = st->mb;
        if (isnan(grp->fpb) && !isnan(st->fpb)) grp->fpb = st->fpb;
        if (!grp->cspec && st->cspec) grp->cspec = st->cspec;
        if (r.rf.valid && isnan(grp->roof_time)) grp->roof_time = r.rf.time_us;
        if (r.rf.valid && !grp->roof_bound) grp->roof_bound = r.rf.bound; /* static strings */
        tb[i] = r.tbs;
        tf[i] = r.tflops;
        pct[i] = r.rf.valid ? r.rf.pct : NAN;
    }
}

static void fill_group(tl_arena *a, intern *it, const tl_pm_source *src, const prow *rows, const size_t *mem,
                       size_t c, const memo_ent *E, size_t nk, const int *ctype, tl_pm_mode mode,
                       const tl_pm_sheet_opts *o, kvec *kbuf, agg_group *grp)
{
    const prow *r0 = &rows[mem[0]];
    double *vals = tl_xmalloc(4 * c * sizeof *vals), *tmp = tl_xmalloc(c * sizeof *tmp);
    const tl_pm_kernel **kl = tl_xmalloc(c * sizeof *kl);
    size_t *kn = tl_xmalloc(c * sizeof *kn);
    tl_pm_fields f0;
    src->fields(src->src, r0->inst, &f0);
    grp->name = f0.name;
    grp->ptext = tl_arena_alloc(a, (nk ? nk : 1) * sizeof *grp->ptext);
    for (size_t k = 0; k < nk; k++) {
        const char *key;
        grp->ptext[k] = typed_text(it, find_param(E[r0->st].p, E[r0->st].np, (uint32_t)k), ctype[k], &key);
    }
    grp->num_kernels = (int64_t)r0->nk;
    grp->recompute = r0->inst->is_recompute;
    grp->count = (int64_t)c;
    grp->uid_first = f0.uid;
    double *tb = vals + c, *tf = vals + 2 * c, *pct = vals + 3 * c;
    group_rates(rows, mem, c, E, o->arch, tb, tf, pct, grp);
    group_texts(a, src, rows, mem, c, grp);
    stats5(tb, c, grp->tb, tmp);
    stats5(tf, c, grp->tf, tmp);
    stats5(pct, c, grp->pct, tmp);
    for (size_t i = 0; i < c; i++) vals[i] = rows[mem[i]].kt;
    stats5(vals, c, grp->kt, tmp);
    grp->kt[5] = tl_sum_kahan(vals, c);
    group_kernels(src, rows, mem, c, mode, kbuf, kl, kn);
    tl_buf sb = {0}, tbuf = {0};
    int has_trunc = tl_pm_kdetails_summarize(kl, kn, c, &sb, &tbuf);
    grp->kd_summary = tl_arena_strndup(a, sb.p ? sb.p : "", sb.n);
    grp->kd_trunc = has_trunc ? tl_arena_strndup(a, tbuf.p ? tbuf.p : "", tbuf.n) : NULL;
    if (o->kl_overlap) fill_overlap(a, rows, mem, c, kl, kn, vals, tmp, &sb, &tbuf, grp);
    tl_buf_free(&sb);
    tl_buf_free(&tbuf);
    free(vals);
    free(tmp);
    free(kl);
    free(kn);
}

/* kl_overlap: each group's base group is the groups whose keys agree up
 * to the names ('\x1e'); its kernel-time total (pandas' transform("sum"):
 * a Kahan sum) and smallest first UID order the sheet. */
static void base_totals(agg_sheet *s, const char *const *keys)
{
    size_t ng = s->ngroups;
    tl_smap bm = {0};
    tl_smap_init(&bm, ng);
    size_t *bof = tl_xmalloc((ng ? ng : 1) * sizeof *bof);
    tl_kahan *tot = tl_xcalloc(ng ? ng : 1, sizeof *tot);
    int64_t *uid = tl_xmalloc((ng ? ng : 1) * sizeof *uid);
    char **bkey = tl_xcalloc(ng ? ng : 1, sizeof *bkey); /* NUL-terminated copies the map points at */
    size_t nb = 0;
    for (size_t g = 0; g < ng; g++) {
        const char *k = keys[g], *e = strchr(k, '\x1e');
        size_t kl = e ? (size_t)(e - k) : strlen(k);
        bkey[g] = tl_xmalloc(kl + 1);
        memcpy(bkey[g], k, kl);
        bkey[g][kl] = 0;
        int isnew;
        size_t *b = tl_smap_put(&bm, bkey[g], kl, &isnew);
        if (isnew) {
            *b = nb;
            uid[nb++] = s->groups[g].uid_first;
        }
        bof[g] = *b;
        tl_kahan_add(&tot[*b], s->groups[g].kt[5]);
        if (s->groups[g].uid_first < uid[*b]) uid[*b] = s->groups[g].uid_first;
    }
    for (size_t g = 0; g < ng; g++) {
        s->groups[g].base_total = tot[bof[g]].sum;
        s->groups[g].base_uid = uid[bof[g]];
    }
    tl_smap_free(&bm);
    for (size_t g = 0; g < ng; g++) free(bkey[g]);
    free(bkey);
    free(bof);
    free(tot);
    free(uid);
}

static int aggregate(tl_arena *a, const tl_pm_source *src, const tl_pm_instance *inst, size_t n, tl_pm_mode mode,
                     const tl_pm_sheet_opts *o, tl_pm_ctx *ctx, agg_sheet *out)
{
    memset(out, 0, sizeof *out);
    prow *rows = tl_xmalloc((n ? n : 1) * sizeof *rows);
    size_t nr = 0;
    intern it = {.a = a};
    keyvec keys = {0};
    memo mm = {0};
    tl_hidx_init(&mm.idx, 128);
    tl_buf mkb = {0};
    opcache *oc = tl_xcalloc(1, sizeof *oc);
    for (size_t i = 0; i < n; i++) {
        const char *name = src->name(src->src, &inst[i]);
        const tl_pm_op *op = find_op(oc, name);
        if (!op) continue;
        if (mode == TL_PM_BWD && strcmp(name, "vllm::unified_attention_with_output") == 0) continue;
        if (make_row(a, &it, &keys, &mm, &mkb, op, src, &inst[i], mode, ctx, &rows[nr]) == 0) nr++;
    }
    tl_hidx_free(&mm.idx);
    free(oc);
    tl_buf_free(&mkb);
    if (!nr) {
        tl_vec_free(&mm.e);
        free(rows);
        tl_smap_free(&it.map);
        tl_vec_free(&keys);
        return 0;
    }
    size_t nk = keys.n;
    out->keys = tl_arena_alloc(a, (nk ? nk : 1) * sizeof *out->keys);
    if (nk) memcpy(out->keys, keys.v, nk * sizeof *out->keys);
    out->nkeys = nk;
    tl_vec_free(&keys);
    int *ctype = tl_arena_alloc(a, (nk ? nk : 1) * sizeof *ctype);
    const memo_ent *E = mm.e.v; /* the rows' model results, complete from here on */
    col_types(rows, nr, E, nk, ctype);

    /* group keys: name + typed param texts (+ num_kernels, is_recompute) */
    long *gof = tl_xmalloc(nr * sizeof *gof);
    tl_smap gmap = {0}; /* group key text -> group */
    tl_smap_init(&gmap, 64); /* grows with the groups */
    TL_VEC(size_t) first = {0}; /* first row of each group */
    TL_VEC(const char *) gkeys = {0}; /* its key text */
    out->kt_int = 1;
    tl_buf kb = {0};
    /* Rows of one memo entry share its params array: with the same kernel
     * count and recompute mark they have the same group key, so the key
     * text is built once per (params, count, mark), not per row. */
    struct pkey { const pparam *p; size_t nk; int64_t rc; const char *ov; };
    tl_bmap pc; /* pkey -> group */
    tl_bmap_init(&pc, sizeof(struct pkey), 64);
    for (size_t r = 0; r < nr; r++) {
        if (rows[r].nk) out->kt_int = 0;
        if (o->arch && !out->any_roof) {
            prates pr;
            row_rates(&E[rows[r].st], rows[r].kt, o->arch, &pr);
            out->any_roof = pr.rf.valid;
        }
        size_t nkr = o->group_by_num_kernels ? rows[r].nk : 0;
        int rcr = o->detect_recompute ? rows[r].inst->is_recompute : 0;
        int isnew;
        const tl_pm_extra *x = rows[r].inst->extra;
        const char *ovr = o->kl_overlap && x ? x->ov_names : NULL;
        size_t *pg = tl_bmap_put(&pc, &(struct pkey){E[rows[r].st].p, nkr, rcr, ovr}, &isnew);
        if (!isnew) {
            gof[r] = (long)*pg;
            continue;
        }
        kb.n = 0;
        tl_buf_puts(&kb, src->name(src->src, rows[r].inst));
        for (size_t k = 0; k < nk; k++) {
            const char *key;
            typed_text(&it, find_param(E[rows[r].st].p, E[rows[r].st].np, (uint32_t)k), ctype[k], &key);
            tl_buf_putc(&kb, '\x1f');
            tl_buf_puts(&kb, key);
        }
        if (o->group_by_num_kernels) tl_buf_printf(&kb, "\x1f%u", (unsigned)rows[r].nk);
        if (o->detect_recompute) tl_buf_printf(&kb, "\x1f%d", rows[r].inst->is_recompute);
        if (o->kl_overlap) { /* the names last: the key before them is the base group's */
            tl_buf_putc(&kb, '\x1e');
            if (ovr) tl_buf_puts(&kb, ovr);
            else tl_buf_putc(&kb, '\x1d'); /* None */
        }
        const char *ks = kb.p ? kb.p : "";
        size_t *g = tl_smap_get(&gmap, ks, kb.n);
        if (!g) {
            const char *kc = tl_arena_strndup(a, ks, kb.n);
            g = tl_smap_put(&gmap, kc, kb.n, NULL);
            *g = first.n;
            tl_vec_push(&first, r);
            tl_vec_push(&gkeys, kc);
        }
        gof[r] = (long)*g;
        *pg = *g;
    }
    tl_buf_free(&kb);
    tl_smap_free(&gmap);
    tl_bmap_free(&pc);

    /* aggregate each group over its rows in row order */
    size_t ng = first.n;
    out->groups = tl_arena_zalloc(a, ng * sizeof *out->groups);
    out->ngroups = ng;
    size_t *cnt = tl_xcalloc(ng, sizeof *cnt), *start = tl_xcalloc(ng + 1, sizeof *start);
    for (size_t r = 0; r < nr; r++) cnt[gof[r]]++;
    for (size_t g = 0; g < ng; g++) start[g + 1] = start[g] + cnt[g];
    size_t *members = tl_xmalloc(nr * sizeof *members), *fill = tl_xcalloc(ng, sizeof *fill);
    for (size_t r = 0; r < nr; r++) members[start[gof[r]] + fill[gof[r]]++] = r;

    kvec kbuf = {0};
    for (size_t g = 0; g < ng; g++)
        fill_group(a, &it, src, rows, members + start[g], cnt[g], E, nk, ctype, mode, o, &kbuf, &out->groups[g]);
    tl_vec_free(&kbuf);
    if (o->kl_overlap) base_totals(out, gkeys.v);
    tl_vec_free(&gkeys);
    free(cnt);
    free(start);
    free(members);
    free(fill);
    free(gof);
    tl_smap_free(&it.map);
    tl_vec_free(&first);
    tl_vec_free(&mm.e);
    free(rows);
    return 0;
}

static int cmp_groups(const void *x, const void *y)
{
    const agg_group *a = x, *b = y;
    if (a->kt[5] > b->kt[5]) return -1;
    if (a->kt[5] < b->kt[5]) return 1;
    return a->uid_first < b->uid_first ? -1 : a->uid_first > b->uid_first;
}

/* kl_overlap: base groups by total descending, then smallest first UID
 * (base groups never tie on it), then the groups of one base group as the
 * plain sheet orders them */
static int cmp_groups_kl(const void *x, const void *y)
{
    const agg_group *a = x, *b = y;
    if (a->base_total > b->base_total) return -1;
    if (a->base_total < b->base_total) return 1;
    if (a->base_uid != b->base_uid) return a->base_uid < b->base_uid ? -1 : 1;
    return cmp_groups(x, y);
}

static void sort_groups(agg_sheet *s, const tl_pm_sheet_opts *o)
{
    if (s->ngroups) qsort(s->groups, s->ngroups, sizeof *s->groups, o->kl_overlap ? cmp_groups_kl : cmp_groups);
}

/* ---- emit ------------------------------------------------------------------------------ */

static void set_f(tl_table *t, size_t c, size_t r, double v)
{
    if (isnan(v)) tl_table_set_missing(t, c, r);
    else tl_table_set_f64(t, c, r, v);
}

static void set_s(tl_table *t, size_t c, size_t r, const char *s)
{
    if (s) tl_table_set_str(t, c, r, s);
    else tl_table_set_missing(t, c, r);
}

static const char *const STAT5[] = {"mean", "median", "std", "min", "max"};

static tl_table *emit(const agg_sheet *s, const char *name, const tl_pm_sheet_opts *o)
{
    tl_table *t = tl_table_new(name);
    size_t c_name = tl_table_add_col(t, "name", TL_STR);
    long c_ovn = o->kl_overlap ? (long)tl_table_add_col(t, "overlapping_kernel_names_first", TL_STR) : -1;
    size_t c_par = 0;
    for (size_t k = 0; k < s->nkeys; k++) {
        char col[256];
        snprintf(col, sizeof col, "param: %s", s->keys[k]);
        size_t ci = tl_table_add_col(t, col, TL_STR);
        if (k == 0) c_par = ci;
    }
    long c_nk = o->group_by_num_kernels ? (long)tl_table_add_col(t, "num_kernels", TL_I64) : -1;
    long c_rc = o->detect_recompute ? (long)tl_table_add_col(t, "is_recompute", TL_BOOL) : -1;
    size_t c_gf = tl_table_add_col(t, "GFLOPS_first", TL_F64);
    size_t c_mb = tl_table_add_col(t, "Data Moved (MB)_first", TL_F64);
    size_t c_fb = tl_table_add_col(t, "FLOPS/Byte_first", TL_F64);
    size_t c_tb = 0, c_tf = 0, c_pct = 0;
    char col[128];
    for (int k = 0; k < 5; k++) {
        snprintf(col, sizeof col, "TB/s_%s", STAT5[k]);
        size_t ci = tl_table_add_col(t, col, TL_F64);
        if (!k) c_tb = ci;
    }
    for (int k = 0; k < 5; k++) {
        snprintf(col, sizeof col, "TFLOPS/s_%s", STAT5[k]);
        size_t ci = tl_table_add_col(t, col, TL_F64);
        if (!k) c_tf = ci;
    }
    size_t c_pn = tl_table_add_col(t, "process_name_first", TL_STR);
    size_t c_pl = tl_table_add_col(t, "process_label_first", TL_STR);
    size_t c_tn = tl_table_add_col(t, "thread_name_first", TL_STR);
    size_t c_cs = tl_table_add_col(t, "Compute Spec", TL_STR);
    int roof = o->arch && s->any_roof;
    size_t c_rt = 0, c_rb = 0;
    if (roof) {
        c_rt = tl_table_add_col(t, "Roofline Time (\xc2\xb5s)_first", TL_F64);
        c_rb = tl_table_add_col(t, "Roofline Bound_first", TL_STR);
        for (int k = 0; k < 5; k++) {
            snprintf(col, sizeof col, "Pct Roofline_%s", STAT5[k]);
            size_t ci = tl_table_add_col(t, col, TL_F64);
            if (!k) c_pct = ci;
        }
    }
    size_t c_kd = tl_table_add_col(t, "kernel_details__summarize_kernel_stats", TL_STR);
    size_t c_kt = tl_table_add_col(t, "trunc_kernel_details", TL_STR);
    size_t c_ovs = 0, c_ovt = 0, c_ovp = 0;
    if (o->kl_overlap) {
        c_ovs = tl_table_add_col(t, "overlapping_kernels_details__summarize_kernel_stats", TL_STR);
        c_ovt = tl_table_add_col(t, "trunc_overlapping_kernels_details", TL_STR);
        for (int k = 0; k < 5; k++) {
            snprintf(col, sizeof col, "overlap_pct_%s", STAT5[k]);
            size_t ci = tl_table_add_col(t, col, TL_F64);
            if (!k) c_ovp = ci;
        }
    }
    size_t c_id = tl_table_add_col(t, "Input Dims_first", TL_STR);
    size_t c_it = tl_table_add_col(t, "Input type_first", TL_STR);
    size_t c_is = tl_table_add_col(t, "Input Strides_first", TL_STR);
    size_t c_ci = tl_table_add_col(t, "Concrete Inputs_first", TL_STR);
    static const char *const KT[] = {"mean", "median", "std", "min", "max", "sum"};
    size_t c_k0 = 0;
    for (int k = 0; k < 6; k++) {
        snprintf(col, sizeof col, "Kernel Time (\xc2\xb5s)_%s", KT[k]);
        /* an all-empty kernel set is the integer 0: min/max/sum stay int */
        int as_int = s->kt_int && (k == 3 || k == 4 || k == 5);
        size_t ci = tl_table_add_col(t, col, as_int ? TL_I64 : TL_F64);
        if (!k) c_k0 = ci;
    }
    size_t c_cnt = tl_table_add_col(t, "name_count", TL_I64);
    size_t c_uid = tl_table_add_col(t, "UID_first", TL_I64);

    for (size_t g = 0; g < s->ngroups; g++) {
        const agg_group *grp = &s->groups[g];
        size_t r = tl_table_add_row(t);
        tl_table_set_str(t, c_name, r, grp->name);
        for (size_t k = 0; k < s->nkeys; k++) set_s(t, c_par + k, r, grp->ptext ? grp->ptext[k] : NULL);
        if (c_nk >= 0) tl_table_set_i64(t, (size_t)c_nk, r, grp->num_kernels);
        if (c_rc >= 0) {
            if (grp->recompute < 0) tl_table_set_missing(t, (size_t)c_rc, r);
            else tl_table_set_bool(t, (size_t)c_rc, r, grp->recompute);
        }
        set_f(t, c_gf, r, grp->gflops);
        set_f(t, c_mb, r, grp->mb);
        set_f(t, c_fb, r, grp->fpb);
        for (int k = 0; k < 5; k++) {
            set_f(t, c_tb + (size_t)k, r, grp->tb[k]);
            set_f(t, c_tf + (size_t)k, r, grp->tf[k]);
        }
        set_s(t, c_pn, r, grp->pname);
        set_s(t, c_pl, r, grp->plabel);
        set_s(t, c_tn, r, grp->tname);
        set_s(t, c_cs, r, grp->cspec);
        if (roof) {
            set_f(t, c_rt, r, grp->roof_time);
            set_s(t, c_rb, r, grp->roof_bound);
            for (int k = 0; k < 5; k++) set_f(t, c_pct + (size_t)k, r, grp->pct[k]);
        }
        set_s(t, c_kd, r, grp->kd_summary);
        set_s(t, c_kt, r, grp->kd_trunc);
        if (c_ovn >= 0) {
            set_s(t, (size_t)c_ovn, r, grp->ov_names);
            set_s(t, c_ovs, r, grp->ov_summary);
            set_s(t, c_ovt, r, grp->ov_trunc);
            for (int k = 0; k < 5; k++) set_f(t, c_ovp + (size_t)k, r, grp->ov_pct[k]);
        }
        set_s(t, c_id, r, grp->dims);
        set_s(t, c_it, r, grp->types);
        set_s(t, c_is, r, grp->strides);
        set_s(t, c_ci, r, grp->ci);
        for (int k = 0; k < 6; k++) {
            int as_int = s->kt_int && (k == 3 || k == 4 || k == 5);
            if (as_int) tl_table_set_i64(t, c_k0 + (size_t)k, r, (int64_t)grp->kt[k]);
            else set_f(t, c_k0 + (size_t)k, r, grp->kt[k]);
        }
        tl_table_set_i64(t, c_cnt, r, grp->count);
        tl_table_set_i64(t, c_uid, r, grp->uid_first);
    }
    return t;
}

static const tl_pm_sheet_opts *opts_or_default(const tl_pm_sheet_opts *o)
{
    static const tl_pm_sheet_opts none = {0};
    return o ? o : &none;
}

int tl_pm_sheet_build(const char *sheet_name, const tl_pm_source *src, const tl_pm_instance *inst, size_t n,
                      tl_pm_mode mode, const tl_pm_sheet_opts *opts, tl_table **out, tl_err *err)
{
    (void)err;
    *out = NULL;
    opts = opts_or_default(opts);
    tl_arena a;
    tl_arena_init(&a, 1 << 16);
    tl_pm_ctx *own = opts->ctx ? NULL : tl_pm_ctx_new();
    agg_sheet s;
    aggregate(&a, src, inst, n, mode, opts, opts->ctx ? opts->ctx : own, &s);
    if (s.ngroups) {
        sort_groups(&s, opts);
        *out = emit(&s, sheet_name, opts);
    }
    tl_pm_ctx_free(own);
    tl_arena_free(&a);
    return 0;
}

/* ---- families and the set-aside rules ------------------------------------------------------ */

static int name_in(const char *name, const char *const *list)
{
    for (; *list; list++)
        if (strcmp(name, *list) == 0) return 1;
    return 0;
}

static const char *const SET_ASIDE[] = {"flash_attn::_flash_attn_varlen_backward", "aten::convolution_backward",
                                        "ConvBias_Backward", "ConvBiasReLU_Backward", NULL};
static const char *const DROP_FROM_BWD[] = {"aten::convolution", "aten::miopen_convolution",
                                            "aten::cudnn_convolution", "ConvBias_", "ConvBiasReLU_", NULL};

/* dst := dst rows then src rows, columns unioned (dst's first) */
static void concat(tl_arena *a, agg_sheet *dst, const agg_sheet *src)
{
    size_t nk = dst->nkeys;
    const char **keys = tl_arena_alloc(a, (dst->nkeys + src->nkeys + 1) * sizeof *keys);
    if (dst->nkeys) memcpy(keys, dst->keys, dst->nkeys * sizeof *keys); /* keys may be NULL when empty */
    for (size_t k = 0; k < src->nkeys; k++) {
        size_t j;
        for (j = 0; j < nk; j++)
            if (strcmp(keys[j], src->keys[k]) == 0) break;
        if (j == nk) keys[nk++] = src->keys[k];
    }
    agg_group *merged = tl_arena_zalloc(a, (dst->ngroups + src->ngroups + 1) * sizeof *merged);
    for (int part = 0; part < 2; part++) {
        const agg_sheet *s = part ? src : dst;
        for (size_t i = 0; i < s->ngroups; i++) {
            agg_group grp = s->groups[i];
            const char **pt = tl_arena_zalloc(a, (nk ? nk : 1) * sizeof *pt);
            for (size_t k = 0; k < s->nkeys; k++)
                for (size_t j = 0; j < nk; j++)
                    if (strcmp(keys[j], s->keys[k]) == 0) pt[j] = grp.ptext ? grp.ptext[k] : NULL;
            grp.ptext = pt;
            merged[part ? dst->ngroups + i : i] = grp;
        }
    }
    dst->kt_int = (dst->ngroups ? dst->kt_int : 1) && (src->ngroups ? src->kt_int : 1);
    dst->any_roof = dst->any_roof || src->any_roof;
    dst->keys = keys;
    dst->nkeys = nk;
    dst->groups = merged;
    dst->ngroups += src->ngroups;
}

int tl_pm_family_sheets(const char *family, const tl_pm_source *src, const tl_pm_instance *inst, size_t n,
                        const tl_pm_sheet_opts *opts, tl_table **fwd, tl_table **bwd, tl_err *err)
{
    *fwd = NULL;
    if (bwd) *bwd = NULL;
    if (!family) return tl_errf(err, TL_EUSAGE, "perf sheets: no family");
    opts = opts_or_default(opts);
    tl_arena a;
    tl_arena_init(&a, 1 << 16);
    tl_pm_ctx *own = opts->ctx ? NULL : tl_pm_ctx_new();
    tl_pm_ctx *ctx = opts->ctx ? opts->ctx : own;

    /* this family's candidates, in the given (UID) order: inst itself when
     * every instance is one (the report passes each family's apart) */
    tl_pm_instance *own_inst = NULL;
    const tl_pm_instance *mine = inst;
    size_t nm = 0;
    opcache *oc = tl_xcalloc(1, sizeof *oc);
    for (size_t i = 0; i < n; i++) {
        const tl_pm_op *op = find_op(oc, src->name(src->src, &inst[i]));
        int in_family = op && strcmp(op->family, family) == 0;
        if (!in_family && !own_inst) { /* the first one not of the family */
            own_inst = tl_xmalloc(n * sizeof *own_inst);
            memcpy(own_inst, inst, i * sizeof *inst);
            mine = own_inst;
        }
        if (in_family && own_inst) own_inst[nm] = inst[i];
        nm += in_family;
    }
    free(oc);
    int single = tl_pm_family_single(family);
    const char *kl = opts->kl_overlap ? "_kl_overlap" : "";
    char name[128];
    agg_sheet f, b, aside;
    aggregate(&a, src, mine, nm, TL_PM_FWD, opts, ctx, &f);
    sort_groups(&f, opts);
    if (single) {
        snprintf(name, sizeof name, "%s%s", family, kl);
        if (f.ngroups) *fwd = emit(&f, name, opts);
    } else {
        /* move the explicit backward ops out of _fwd, keeping their order */
        aside = f;
        aside.groups = tl_arena_zalloc(&a, (f.ngroups + 1) * sizeof *aside.groups);
        aside.ngroups = 0;
        size_t keep = 0;
        for (size_t i = 0; i < f.ngroups; i++) {
            if (name_in(f.groups[i].name, SET_ASIDE)) aside.groups[aside.ngroups++] = f.groups[i];
            else f.groups[keep++] = f.groups[i];
        }
        f.ngroups = keep;
        snprintf(name, sizeof name, "%s_fwd%s", family, kl);
        if (f.ngroups) *fwd = emit(&f, name, opts);

        aggregate(&a, src, mine, nm, TL_PM_BWD, opts, ctx, &b);
        sort_groups(&b, opts);
        if (aside.ngroups) concat(&a, &b, &aside);
        size_t k2 = 0;
        for (size_t i = 0; i < b.ngroups; i++)
            if (!name_in(b.groups[i].name, DROP_FROM_BWD)) b.groups[k2++] = b.groups[i];
        b.ngroups = k2;
        snprintf(name, sizeof name, "%s_bwd%s", family, kl);
        if (b.ngroups && bwd) *bwd = emit(&b, name, opts);
    }
    free(own_inst);
    tl_pm_ctx_free(own);
    tl_arena_free(&a);
    return 0;
}
