/* ops.c — the launcher-based sheets of the PyTorch report (spec
 * pytorch-report.md §9.2-§9.4): ops_summary_by_category, ops_summary and
 * ops_unique_args (plus its _kl_overlap twin's inputs), all grouped from the
 * launcher table: one row per kernel launcher with its direct and subtree
 * kernel times. Also the kernel-detail list summaries (§9.10) shared with
 * unified_perf_summary, which delegate to the perf-model module's
 * implementation so both sheet families print identical text. */
#include "query/pytorch/pytorch_internal.h"
#include "query/core/stats.h"
#include "query/perfmodel/perfmodel.h"

#include <stdlib.h>

/* Cache of summaries by the exact kernel lists: an op's unique-args group
 * and its unified_perf_summary group usually summarise the same kernels,
 * and the text (NumPy statistics printed as Python) is the costly part. */
typedef struct kd_ent {
    int32_t *seq;      /* nlists, then per list: n, rows */
    size_t len;
    const char *summary, *trunc;
} kd_ent;

static uint64_t kd_key(const pyt_klist *lists, size_t nlists, int32_t **seq, size_t *len)
{
    size_t n = 1;
    for (size_t i = 0; i < nlists; i++) n += 1 + lists[i].n;
    int32_t *s = tl_xmalloc(n * sizeof *s);
    size_t k = 0;
    s[k++] = (int32_t)nlists;
    for (size_t i = 0; i < nlists; i++) {
        s[k++] = (int32_t)lists[i].n;
        memcpy(s + k, lists[i].rows, lists[i].n * sizeof *s);
        k += lists[i].n;
    }
    *seq = s;
    *len = n;
    return tl_hash64(s, n * sizeof *s, 11);
}

int pyt_kdetails(pyt_ctx *c, const pyt_klist *lists, size_t nlists, tl_arena *a,
                 const char **summary, const char **trunc)
{
    *summary = *trunc = NULL;
    int32_t *seq;
    size_t len;
    struct { uint64_t h; size_t len; } key;
    memset(&key, 0, sizeof key);
    key.h = kd_key(lists, nlists, &seq, &len);
    key.len = len;
    if (!c->kd_init) {
        tl_bmap_init(&c->kd_map, sizeof key, 256);
        c->kd_init = 1;
    }
    int isnew;
    size_t *slot = tl_bmap_put(&c->kd_map, &key, &isnew);
    kd_ent *e = NULL;
    if (!isnew) {
        e = ((kd_ent **)c->kd_ents)[*slot];
        if (e->len != len || memcmp(e->seq, seq, len * sizeof *seq)) e = NULL; /* hash collision */
    }
    if (!e) {
        size_t tot = 0;
        for (size_t i = 0; i < nlists; i++) tot += lists[i].n;
        tl_pm_kernel *k = tl_xmalloc((tot ? tot : 1) * sizeof *k);
        const tl_pm_kernel **lp = tl_xmalloc((nlists ? nlists : 1) * sizeof *lp);
        size_t *lens = tl_xmalloc((nlists ? nlists : 1) * sizeof *lens);
        size_t q = 0;
        for (size_t i = 0; i < nlists; i++) {
            lp[i] = k + q;
            lens[i] = lists[i].n;
            for (size_t j = 0; j < lists[i].n; j++, q++) {
                int32_t r = lists[i].rows[j];
                k[q].name = pyt_name(c, r);
                k[q].dur = pyt_dur(c, r);
                k[q].has_stream = pyt_stream(c, r, &k[q].stream);
            }
        }
        tl_buf s = {0}, t = {0};
        int has_trunc = tl_pm_kdetails_summarize(lp, lens, nlists, &s, &t);
        e = tl_arena_zalloc(&c->arena, sizeof *e);
        e->seq = tl_arena_alloc(&c->arena, len * sizeof *seq);
        memcpy(e->seq, seq, len * sizeof *seq);
        e->len = len;
        e->summary = tl_arena_strndup(&c->arena, s.p ? s.p : "", s.n);
        e->trunc = has_trunc ? tl_arena_strndup(&c->arena, t.p ? t.p : "", t.n) : NULL;
        tl_buf_free(&s);
        tl_buf_free(&t);
        free(k);
        free(lp);
        free(lens);
        if (isnew) {
            if (c->kd_n == c->kd_cap) {
                c->kd_cap = c->kd_cap ? c->kd_cap * 2 : 256;
                c->kd_ents = tl_xrealloc(c->kd_ents, c->kd_cap * sizeof(kd_ent *));
            }
            ((kd_ent **)c->kd_ents)[c->kd_n] = e;
            *slot = c->kd_n++;
        }
    }
    free(seq);
    *summary = tl_arena_strdup(a, e->summary);
    if (e->trunc) *trunc = tl_arena_strdup(a, e->trunc);
    return 0;
}

/* ---- the launcher table (§9 "Common derived inputs") ------------------------ */

/* What the launcher sheets read of launcher j beyond the context's launcher
 * arrays: its direct kernels sorted by ts, and with group_by_parent_module
 * its module call stack and parent module. The other fields (name,
 * category, argument reprs, metadata names, recompute mark) are looked up
 * where a sheet reads them: the argument reprs and names are cached per
 * string id, so a per-launcher copy of them would only hold memory (nine
 * pointers a launcher, ~10 % of the events). Freed after the sheets. */
typedef struct ltab {
    size_t n;
    int32_t *ks;         /* launcher j's kernels: ks[c->l_koff[j] .. c->l_koff[j + 1]) */
    /* group_by_parent_module: the nn.Module call stack (list repr) and the
     * parent module; NULL otherwise */
    const char **stack, **pmod;
} ltab;

/* Appends Python's repr of a frame name as the reference's call stack
 * holds it: names over 256 characters cut there with ".." appended. */
static void put_frame(tl_buf *b, const char *nm)
{
    size_t n = strlen(nm);
    if (n <= 256) {
        tl_buf_pystr(b, nm, n);
        return;
    }
    char *cut = tl_xmalloc(259);
    memcpy(cut, nm, 256);
    memcpy(cut + 256, "..", 3);
    tl_buf_pystr(b, cut, 258);
    free(cut);
}

/* The name without its "_<digits>" runs (re.sub(r"_\d+", "", name)). */
static const char *strip_num_suffixes(pyt_ctx *c, const char *nm)
{
    size_t n = strlen(nm);
    char *o = tl_xmalloc(n + 1);
    size_t k = 0;
    for (size_t i = 0; i < n;) {
        if (nm[i] == '_' && nm[i + 1] >= '0' && nm[i + 1] <= '9') {
            i++;
            while (nm[i] >= '0' && nm[i] <= '9') i++;
            continue;
        }
        o[k++] = nm[i++];
    }
    o[k] = 0;
    const char *r = pyt_intern(c, o);
    free(o);
    return r;
}

/* Launcher row r's call stack filtered to nn.Module frames (the reference's
 * traverse_parents_and_get_callstack(filter=("nn.Module",))) and its parent
 * module: the innermost such frame without "_<digits>", or "NA". */
static void module_stack(pyt_ctx *c, int32_t r, tl_buf *b, const char **stack, const char **pmod)
{
    b->n = 0;
    tl_buf_putc(b, '[');
    put_frame(b, pyt_name(c, r));
    const char *first = NULL;
    for (int32_t a = c->parent[r]; a >= 0; a = c->parent[a]) {
        const char *nm = pyt_name(c, a);
        if (!strstr(nm, "nn.Module")) continue;
        tl_buf_puts(b, ", ");
        put_frame(b, nm);
        if (!first) first = nm;
    }
    tl_buf_putc(b, ']');
    tl_buf_putc(b, 0);
    *stack = pyt_intern(c, b->p);
    if (!first) {
        *pmod = "NA";
        return;
    }
    if (strlen(first) > 256) {
        char cut[259];
        memcpy(cut, first, 256);
        memcpy(cut + 256, "..", 3);
        *pmod = strip_num_suffixes(c, cut);
    } else {
        *pmod = strip_num_suffixes(c, first);
    }
}

static void ltab_build(pyt_ctx *c, ltab *L)
{
    size_t n = c->nl, nk = n ? c->l_koff[n] : 0;
    L->n = n;
    L->stack = L->pmod = NULL;
    if (c->o->group_by_parent_module) {
        tl_buf sb = {0};
        L->stack = tl_xmalloc((n ? n : 1) * sizeof *L->stack);
        L->pmod = tl_xmalloc((n ? n : 1) * sizeof *L->pmod);
        for (size_t j = 0; j < n; j++) module_stack(c, c->l_row[j], &sb, &L->stack[j], &L->pmod[j]);
        tl_buf_free(&sb);
    }
    L->ks = tl_xmalloc((nk ? nk : 1) * sizeof *L->ks);
    memcpy(L->ks, c->l_k, nk * sizeof *L->ks);
    for (size_t j = 0; j < n; j++)
        pyt_sort_rows_by_ts(c, L->ks + c->l_koff[j], c->l_koff[j + 1] - c->l_koff[j]);
}

static void ltab_free(ltab *L)
{
    free(L->ks);
    free(L->stack);
    free(L->pmod);
}

static const char *l_name(const pyt_ctx *c, size_t j) { return pyt_name(c, c->l_row[j]); }
static int l_rec(const pyt_ctx *c, size_t j) { return c->recompute ? c->recompute[c->l_row[j]] : -1; }
static size_t l_nk(const pyt_ctx *c, size_t j) { return c->l_koff[j + 1] - c->l_koff[j]; }

/* ---- ops_summary_by_category / ops_summary ----------------------------------- */

typedef struct sgroup {
    const char *key, *key2; /* key2: the parent module (module grouping), else NULL */
    size_t first;           /* launcher index of the first member */
    int rec;
    tl_kahan dsum, ssum; /* the group sums, as pandas computes them */
    int64_t count;
    TL_VEC(const char *) cats;
} sgroup;

static int cmp_sgroup(const void *a, const void *b)
{
    const sgroup *x = *(const sgroup *const *)a, *y = *(const sgroup *const *)b;
    int c = strcmp(x->key, y->key);
    if (c) return c;
    if (x->key2 && y->key2 && (c = strcmp(x->key2, y->key2))) return c;
    return x->rec - y->rec;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Groups launchers by their category (by_name 0) or name (1), plus the
 * parent module when grouped by it, plus is_recompute, in ascending key
 * order, then sorts by the direct-time sum descending the way pandas does
 * (§8 note: NumPy's unstable introsort decides the order of ties). Keys
 * are dictionary or interned pointers, one per distinct text. */
static sgroup **group_simple(const pyt_ctx *c, const ltab *L, int by_name, size_t *ng_out, sgroup **store)
{
    struct { const char *key, *key2; int64_t rec; } bk;
    tl_bmap m;
    tl_bmap_init(&m, sizeof bk, 64);
    TL_VEC(sgroup) g = {0};
    size_t last = 0;
    for (size_t j = 0; j < L->n; j++) {
        /* keys are interned (one pointer per text), and runs of launchers
         * of one op are common: the previous launcher's group first */
        const char *k1 = by_name ? l_name(c, j) : c->l_cat[j];
        const char *k2 = L->pmod ? L->pmod[j] : NULL;
        int rec = l_rec(c, j);
        if (!(g.n && g.v[last].key == k1 && g.v[last].key2 == k2 && g.v[last].rec == rec)) {
            memset(&bk, 0, sizeof bk);
            bk.key = k1;
            bk.key2 = k2;
            bk.rec = rec;
            int isnew;
            size_t *slot = tl_bmap_put(&m, &bk, &isnew);
            if (isnew) {
                *slot = g.n;
                tl_vec_push(&g, ((sgroup){.key = k1, .key2 = k2, .first = j, .rec = rec}));
            }
            last = *slot;
        }
        sgroup *s = &g.v[last];
        s->count++;
        /* the group sums run in launcher order (pandas) */
        tl_kahan_add(&s->dsum, c->l_direct[j]);
        tl_kahan_add(&s->ssum, c->l_subtree[j]);
        int have = 0;
        for (size_t q = 0; q < s->cats.n; q++)
            if (!strcmp(s->cats.v[q], c->l_cat[j])) have = 1;
        if (!have) tl_vec_push(&s->cats, c->l_cat[j]);
    }
    tl_bmap_free(&m);
    size_t ng = g.n;
    sgroup **order = tl_xmalloc((ng ? ng : 1) * sizeof *order);
    for (size_t i = 0; i < ng; i++) order[i] = &g.v[i];
    qsort(order, ng, sizeof *order, cmp_sgroup);
    double *sums = tl_xmalloc((ng ? ng : 1) * sizeof *sums);
    size_t *idx = tl_xmalloc((ng ? ng : 1) * sizeof *idx);
    for (size_t i = 0; i < ng; i++) { sums[i] = order[i]->dsum.sum; idx[i] = i; }
    pyt_sort_desc(c, idx, ng, sums);
    sgroup **sorted = tl_xmalloc((ng ? ng : 1) * sizeof *sorted);
    for (size_t i = 0; i < ng; i++) sorted[i] = order[idx[i]];
    free(order);
    free(sums);
    free(idx);
    *ng_out = ng;
    *store = g.v;
    return sorted;
}

static void free_groups(sgroup *g, size_t ng, sgroup **sorted)
{
    for (size_t i = 0; i < ng; i++) tl_vec_free(&g[i].cats);
    free(g);
    free(sorted);
}

static tl_table *sheet_by_category(pyt_ctx *c, const ltab *L)
{
    size_t ng;
    sgroup *g;
    sgroup **s = group_simple(c, L, 0, &ng, &g);
    tl_table *t = tl_table_new("ops_summary_by_category");
    size_t c0 = tl_table_add_col(t, "op category", TL_STR);
    long cpm = L->pmod ? (long)tl_table_add_col(t, "parent_module", TL_STR) : -1;
    long crec = c->recompute ? (long)tl_table_add_col(t, "is_recompute", TL_BOOL) : -1;
    size_t ccount = tl_table_add_col(t, "Count", TL_I64);
    long ccs = L->stack ? (long)tl_table_add_col(t, "call_stack_first", TL_STR) : -1;
    size_t cms = tl_table_add_col(t, "total_direct_kernel_time_ms", TL_F64);
    for (size_t i = 0; i < ng; i++) {
        size_t r = tl_table_add_row(t);
        tl_table_set_str(t, c0, r, s[i]->key);
        if (cpm >= 0) tl_table_set_str(t, (size_t)cpm, r, s[i]->key2);
        if (crec >= 0) tl_table_set_bool(t, (size_t)crec, r, s[i]->rec);
        tl_table_set_i64(t, ccount, r, s[i]->count);
        if (ccs >= 0) tl_table_set_str(t, (size_t)ccs, r, L->stack[s[i]->first]);
        tl_table_set_f64(t, cms, r, s[i]->dsum.sum / 1000.0);
    }
    pyt_add_percentages(t, cms);
    free_groups(g, ng, s);
    return t;
}

static tl_table *sheet_ops_summary(pyt_ctx *c, const ltab *L)
{
    size_t ng;
    sgroup *g;
    sgroup **s = group_simple(c, L, 1, &ng, &g);
    tl_table *t = tl_table_new("ops_summary");
    /* the inference report's module summary: subtree sum and count, no
     * subtree ms; parent_module and call_stack_first when grouped by it */
    int mod = c->o->module_summaries;
    size_t c0 = tl_table_add_col(t, "name", TL_STR);
    long cpm = L->pmod ? (long)tl_table_add_col(t, "parent_module", TL_STR) : -1;
    long crec = c->recompute ? (long)tl_table_add_col(t, "is_recompute", TL_BOOL) : -1;
    size_t cds = tl_table_add_col(t, "total_direct_kernel_time_sum", TL_F64);
    size_t css = tl_table_add_col(t, "total_subtree_kernel_time_sum", TL_F64);
    long csc = mod ? (long)tl_table_add_col(t, "total_subtree_kernel_time_count", TL_I64) : -1;
    size_t cdm = tl_table_add_col(t, "total_direct_kernel_time_ms", TL_F64);
    long csm = mod ? -1 : (long)tl_table_add_col(t, "total_subtree_kernel_time_ms", TL_F64);
    size_t ccount = tl_table_add_col(t, "Count", TL_I64);
    size_t ccat = tl_table_add_col(t, "Categories", TL_STR);
    long ccs = L->stack ? (long)tl_table_add_col(t, "call_stack_first", TL_STR) : -1;
    tl_buf b = {0};
    for (size_t i = 0; i < ng; i++) {
        size_t r = tl_table_add_row(t);
        tl_table_set_str(t, c0, r, s[i]->key);
        if (cpm >= 0) tl_table_set_str(t, (size_t)cpm, r, s[i]->key2);
        if (crec >= 0) tl_table_set_bool(t, (size_t)crec, r, s[i]->rec);
        tl_table_set_f64(t, cds, r, s[i]->dsum.sum);
        tl_table_set_f64(t, css, r, s[i]->ssum.sum);
        if (csc >= 0) tl_table_set_i64(t, (size_t)csc, r, s[i]->count);
        tl_table_set_f64(t, cdm, r, s[i]->dsum.sum / 1000.0);
        if (csm >= 0) tl_table_set_f64(t, (size_t)csm, r, s[i]->ssum.sum / 1000.0);
        tl_table_set_i64(t, ccount, r, s[i]->count);
        if (ccs >= 0) tl_table_set_str(t, (size_t)ccs, r, L->stack[s[i]->first]);
        qsort(s[i]->cats.v, s[i]->cats.n, sizeof *s[i]->cats.v, cmp_str);
        b.n = 0;
        tl_buf_putc(&b, '[');
        for (size_t q = 0; q < s[i]->cats.n; q++) {
            if (q) tl_buf_puts(&b, ", ");
            tl_buf_pystr(&b, s[i]->cats.v[q], strlen(s[i]->cats.v[q]));
        }
        tl_buf_putc(&b, ']');
        tl_table_set_strn(t, ccat, r, b.p, b.n);
    }
    tl_buf_free(&b);
    pyt_add_percentages(t, cdm);
    free_groups(g, ng, s);
    return t;
}

/* ---- ops_unique_args (§9.4) -------------------------------------------------- */

typedef struct ugroup {
    size_t first;            /* launcher index of the first member */
    uint32_t *m;             /* members in launcher order (into the sheet's member array) */
    size_t nm;
    double dsum;
    int64_t ex_uid;
    /* _kl_overlap sorting: totals over the groups sharing the key without
     * the overlap names (§9.11) */
    size_t base;
    double base_total;
    int64_t base_min_uid;
    const char *ov_names;
} ugroup;

/* per thread: the corpus workbook runs reports of several ranks at once */
static _Thread_local ugroup *sort_ugroups;
static int cmp_ugroup(const void *a, const void *b)
{
    const ugroup *x = &sort_ugroups[*(const size_t *)a], *y = &sort_ugroups[*(const size_t *)b];
    if (x->dsum > y->dsum) return -1;
    if (x->dsum < y->dsum) return 1;
    if (x->ex_uid != y->ex_uid) return x->ex_uid < y->ex_uid ? -1 : 1;
    return *(const size_t *)a < *(const size_t *)b ? -1 : 1;
}

static int cmp_kl(const void *a, const void *b)
{
    const ugroup *x = &sort_ugroups[*(const size_t *)a], *y = &sort_ugroups[*(const size_t *)b];
    if (x->base_total != y->base_total) return x->base_total > y->base_total ? -1 : 1;
    if (x->base_min_uid != y->base_min_uid) return x->base_min_uid < y->base_min_uid ? -1 : 1;
    if (x->ov_names != y->ov_names) {
        if (!x->ov_names || !y->ov_names) return x->ov_names ? -1 : 1;
        int r = strcmp(x->ov_names, y->ov_names);
        if (r) return r;
    }
    if (x->dsum != y->dsum) return x->dsum > y->dsum ? -1 : 1;
    if (x->ex_uid != y->ex_uid) return x->ex_uid < y->ex_uid ? -1 : 1;
    return *(const size_t *)a < *(const size_t *)b ? -1 : 1;
}

/* base groups of the kl sort: same key except the overlap names */
static void kl_bases(ugroup *g, size_t ng, const void *keys, size_t keylen)
{
    tl_bmap m;
    tl_bmap_init(&m, keylen, ng);
    double *tot = tl_xcalloc(ng ? ng : 1, sizeof *tot);
    int64_t *mn = tl_xmalloc((ng ? ng : 1) * sizeof *mn);
    size_t nb = 0;
    for (size_t i = 0; i < ng; i++) {
        int isnew;
        size_t *slot = tl_bmap_put(&m, (const char *)keys + i * keylen, &isnew);
        if (isnew) { *slot = nb; mn[nb] = g[i].ex_uid; nb++; }
        g[i].base = *slot;
        tot[*slot] += g[i].dsum;
        if (g[i].ex_uid < mn[*slot]) mn[*slot] = g[i].ex_uid;
    }
    for (size_t i = 0; i < ng; i++) { g[i].base_total = tot[g[i].base]; g[i].base_min_uid = mn[g[i].base]; }
    tl_bmap_free(&m);
    free(tot);
    free(mn);
}

/* The group key of ops_unique_args: interned pointers (equal texts share
 * one pointer), the kernel count when grouped by it, the recompute mark
 * and (kl_overlap) the overlapping kernels' names. */
typedef struct ukey {
    const char *p[10]; /* p[9]: the parent module when grouped by it */
    int64_t nk, rec;
    const char *ov;
} ukey;

/* The texts of launcher j that ops_unique_args groups by and prints, in
 * ukey's p[] order. */
enum { UK_NAME, UK_CAT, UK_PNAME, UK_PLABEL, UK_TNAME, UK_DIMS, UK_TYPES, UK_STRIDES, UK_CONC, UK_PMOD };

/* Launcher j's key, without the overlap names. */
static void fill_key(ukey *key, pyt_ctx *c, const ltab *L, size_t j)
{
    memset(key, 0, sizeof *key);
    const tl_trace *t = c->t;
    int32_t r = c->l_row[j];
    key->p[UK_NAME] = l_name(c, j);
    key->p[UK_CAT] = c->l_cat[j];
    pyt_meta_names(c, r, &key->p[UK_PNAME], &key->p[UK_PLABEL], &key->p[UK_TNAME]);
    key->p[UK_DIMS] = pyt_arg_tuple(c, t->in_dims[r]);
    key->p[UK_TYPES] = pyt_arg_tuple(c, t->in_type[r]);
    key->p[UK_STRIDES] = pyt_arg_tuple(c, t->in_strides[r]);
    key->p[UK_CONC] = pyt_arg_tuple(c, t->concrete[r]);
    key->p[UK_PMOD] = L->pmod ? L->pmod[j] : NULL;
    key->nk = c->o->group_by_num_kernels ? (int64_t)l_nk(c, j) : 0;
    key->rec = l_rec(c, j);
}

/* The overlap cells of a kl_overlap row: the names, the summary and the
 * statistics of the overlap percentage of the group's members. */
static void set_overlap_cells(tl_table *t, size_t r, const ugroup *G, const pyt_ovf *ovf, const pyt_ovf **ol,
                              double *tmp, long cov, size_t cos, size_t cot, const size_t *cop)
{
    if (G->ov_names) tl_table_set_str(t, (size_t)cov, r, G->ov_names);
    for (size_t q = 0; q < G->nm; q++) ol[q] = &ovf[G->m[q]];
    const char *os, *ot;
    pyt_overlap_summary(ol, G->nm, &t->arena, &os, &ot);
    tl_table_set_str_ref(t, cos, r, os);
    if (ot) tl_table_set_str_ref(t, cot, r, ot);
    for (size_t q = 0; q < G->nm; q++) tmp[q] = ovf[G->m[q]].pct;
    pyt_stats st;
    pyt_stats_of(tmp, G->nm, &st);
    if (!isnan(st.mean) && isnan(st.std)) st.std = 0.0; /* filled where a mean exists */
    double v[5] = {st.mean, st.median, st.std, st.min, st.max};
    for (int k = 0; k < 5; k++) tl_table_set_f64(t, cop[k], r, pyt_round2(v[k]));
}

/* The groups of ops_unique_args in order of their first member, each with
 * its members (launcher indexes, in launcher order, in *members) and
 * direct-time sum; *maxm: the largest group's size. */
static ugroup *group_unique(pyt_ctx *c, const ltab *L, const pyt_ovf *ovf, size_t *ng_out, uint32_t **members,
                            size_t *maxm)
{
    ukey key;
    tl_bmap m;
    tl_bmap_init(&m, sizeof key, 64);
    TL_VEC(ugroup) g = {0};
    uint32_t *gid = tl_xmalloc((L->n ? L->n : 1) * sizeof *gid);
    for (size_t j = 0; j < L->n; j++) {
        fill_key(&key, c, L, j);
        key.ov = ovf ? ovf[j].names : NULL;
        int isnew;
        size_t *slot = tl_bmap_put(&m, &key, &isnew);
        if (isnew) {
            *slot = g.n;
            tl_vec_push(&g, ((ugroup){.first = j, .ex_uid = c->t->uid[c->l_row[j]], .ov_names = key.ov}));
        }
        gid[j] = (uint32_t)*slot;
        g.v[*slot].nm++;
    }
    tl_bmap_free(&m);
    /* members grouped by group, each in launcher order */
    uint32_t *mem = tl_xmalloc((L->n ? L->n : 1) * sizeof *mem);
    size_t off = 0, mx = 0;
    for (size_t i = 0; i < g.n; i++) {
        g.v[i].m = mem + off;
        off += g.v[i].nm;
        if (g.v[i].nm > mx) mx = g.v[i].nm;
        g.v[i].nm = 0;
    }
    for (size_t j = 0; j < L->n; j++) {
        ugroup *G = &g.v[gid[j]];
        G->m[G->nm++] = (uint32_t)j;
    }
    free(gid);
    double *tmp = tl_xmalloc((mx ? mx : 1) * sizeof *tmp);
    for (size_t i = 0; i < g.n; i++) {
        for (size_t q = 0; q < g.v[i].nm; q++) tmp[q] = c->l_direct[g.v[i].m[q]];
        g.v[i].dsum = tl_sum_kahan(tmp, g.v[i].nm);
    }
    free(tmp);
    *ng_out = g.n;
    *members = mem;
    *maxm = mx;
    return g.v;
}

/* The row order of ops_unique_args: by direct-time sum; for _kl_overlap
 * by the totals of the groups sharing the key without the overlap names. */
static size_t *order_unique(pyt_ctx *c, const ltab *L, ugroup *g, size_t ng, int kl)
{
    size_t *ord = tl_xmalloc((ng ? ng : 1) * sizeof *ord);
    for (size_t i = 0; i < ng; i++) ord[i] = i;
    sort_ugroups = g;
    if (kl) {
        /* the key without the overlap names, per group */
        ukey key;
        char *bk = tl_xcalloc(ng ? ng : 1, sizeof key);
        for (size_t i = 0; i < ng; i++) {
            fill_key(&key, c, L, g[i].first);
            memcpy(bk + i * sizeof key, &key, sizeof key);
        }
        kl_bases(g, ng, bk, sizeof key);
        free(bk);
        qsort(ord, ng, sizeof *ord, cmp_kl);
    } else {
        qsort(ord, ng, sizeof *ord, cmp_ugroup);
    }
    return ord;
}

static tl_table *sheet_unique_args(pyt_ctx *c, const ltab *L, const pyt_ovf *ovf)
{
    size_t ng, maxm;
    uint32_t *members;
    ugroup *g = group_unique(c, L, ovf, &ng, &members, &maxm);
    size_t *ord = order_unique(c, L, g, ng, ovf != NULL);

    tl_table *t = tl_table_new(ovf ? "ops_unique_args_kl_overlap" : "ops_unique_args");
    size_t cn = tl_table_add_col(t, "name", TL_STR);
    long cov = ovf ? (long)tl_table_add_col(t, "overlapping_kernel_names", TL_STR) : -1;
    size_t ccat = tl_table_add_col(t, "op category", TL_STR);
    long cpm = L->pmod ? (long)tl_table_add_col(t, "parent_module", TL_STR) : -1;
    size_t cpn = tl_table_add_col(t, "process_name", TL_STR);
    size_t cpl = tl_table_add_col(t, "process_label", TL_STR);
    size_t ctn = tl_table_add_col(t, "thread_name", TL_STR);
    size_t cd = tl_table_add_col(t, "Input Dims", TL_STR);
    size_t cty = tl_table_add_col(t, "Input type", TL_STR);
    size_t cst = tl_table_add_col(t, "Input Strides", TL_STR);
    size_t cci = tl_table_add_col(t, "Concrete Inputs", TL_STR);
    long cnk = c->o->group_by_num_kernels ? (long)tl_table_add_col(t, "num_kernels", TL_I64) : -1;
    long crec = c->recompute ? (long)tl_table_add_col(t, "is_recompute", TL_BOOL) : -1;
    size_t ccount = tl_table_add_col(t, "operation_count", TL_I64);
    long cfo = c->o->include_first_occurrence_time
                   ? (long)tl_table_add_col(t, "first_occurrence_time", TL_F64) : -1;
    static const char *const stat[] = {"mean", "median", "std", "min", "max", "sum"};
    size_t cstat[6][2];
    char nm[96];
    for (int s = 0; s < 6; s++) {
        snprintf(nm, sizeof nm, "total_direct_kernel_time_%s", stat[s]);
        cstat[s][0] = tl_table_add_col(t, nm, TL_F64);
        snprintf(nm, sizeof nm, "total_subtree_kernel_time_%s", stat[s]);
        cstat[s][1] = tl_table_add_col(t, nm, TL_F64);
    }
    size_t cex = tl_table_add_col(t, "ex_UID", TL_I64);
    long ccs = L->stack ? (long)tl_table_add_col(t, "call_stack", TL_STR) : -1;
    size_t cks = tl_table_add_col(t, "kernel_details_summary", TL_STR);
    size_t ctr = tl_table_add_col(t, "trunc_kernel_details", TL_STR);
    size_t cos = 0, cot = 0, cop[5] = {0};
    static const char *const OST[] = {"mean", "median", "std", "min", "max"};
    if (ovf) {
        cos = tl_table_add_col(t, "overlapping_kernels_details_summary", TL_STR);
        cot = tl_table_add_col(t, "trunc_overlapping_kernels_details", TL_STR);
        for (int k = 0; k < 5; k++) {
            snprintf(nm, sizeof nm, "overlap_pct_%s", OST[k]);
            cop[k] = tl_table_add_col(t, nm, TL_F64);
        }
    }
    size_t mz = maxm ? maxm : 1;
    const pyt_ovf **ol = ovf ? tl_xmalloc(mz * sizeof *ol) : NULL;
    double *tmp = tl_xmalloc(mz * sizeof *tmp);
    pyt_klist *kl = tl_xmalloc(mz * sizeof *kl);

    double tsmin = INFINITY;
    if (cfo >= 0)
        for (size_t j = 0; j < L->n; j++)
            if (pyt_ts(c, c->l_row[j]) < tsmin) tsmin = pyt_ts(c, c->l_row[j]);
    ukey key;
    for (size_t oi = 0; oi < ng; oi++) {
        ugroup *G = &g[ord[oi]];
        size_t f = G->first, r = tl_table_add_row(t);
        fill_key(&key, c, L, f);
        tl_table_set_str(t, cn, r, key.p[UK_NAME]);
        tl_table_set_str(t, ccat, r, key.p[UK_CAT]);
        if (cpm >= 0) tl_table_set_str(t, (size_t)cpm, r, key.p[UK_PMOD]);
        tl_table_set_str(t, cpn, r, key.p[UK_PNAME]);
        tl_table_set_str(t, cpl, r, key.p[UK_PLABEL]);
        tl_table_set_str(t, ctn, r, key.p[UK_TNAME]);
        if (key.p[UK_DIMS]) tl_table_set_str(t, cd, r, key.p[UK_DIMS]);
        if (key.p[UK_TYPES]) tl_table_set_str(t, cty, r, key.p[UK_TYPES]);
        if (key.p[UK_STRIDES]) tl_table_set_str(t, cst, r, key.p[UK_STRIDES]);
        if (key.p[UK_CONC]) tl_table_set_str(t, cci, r, key.p[UK_CONC]);
        if (cnk >= 0) tl_table_set_i64(t, (size_t)cnk, r, (int64_t)l_nk(c, f));
        if (crec >= 0) tl_table_set_bool(t, (size_t)crec, r, (int)key.rec);
        tl_table_set_i64(t, ccount, r, (int64_t)G->nm);
        if (cfo >= 0) {
            double mn = INFINITY;
            for (size_t q = 0; q < G->nm; q++)
                if (pyt_ts(c, c->l_row[G->m[q]]) < mn) mn = pyt_ts(c, c->l_row[G->m[q]]);
            tl_table_set_f64(t, (size_t)cfo, r, mn - tsmin);
        }
        for (int w = 0; w < 2; w++) {
            for (size_t q = 0; q < G->nm; q++) tmp[q] = (w ? c->l_subtree : c->l_direct)[G->m[q]];
            pyt_stats st;
            pyt_stats_of(tmp, G->nm, &st);
            double v[6] = {st.mean, st.median, st.std, st.min, st.max, st.sum};
            for (int s = 0; s < 6; s++) tl_table_set_f64(t, cstat[s][w], r, v[s]);
        }
        tl_table_set_i64(t, cex, r, G->ex_uid);
        if (ccs >= 0) tl_table_set_str(t, (size_t)ccs, r, L->stack[f]);
        for (size_t q = 0; q < G->nm; q++) {
            kl[q].rows = L->ks + c->l_koff[G->m[q]];
            kl[q].n = l_nk(c, G->m[q]);
        }
        const char *ks, *kt;
        pyt_kdetails(c, kl, G->nm, &t->arena, &ks, &kt);
        if (ks) tl_table_set_str_ref(t, cks, r, ks);
        if (kt) tl_table_set_str_ref(t, ctr, r, kt);
        if (ovf) set_overlap_cells(t, r, G, ovf, ol, tmp, cov, cos, cot, cop);
    }
    free(ol);
    pyt_add_percentages(t, cstat[5][0]);
    free(kl);
    free(tmp);
    free(ord);
    free(members);
    free(g);
    return t;
}

/* ops_summary alone, for the per-configuration workbook
 * (query/multirank/corpus_report.c), which pools no other launcher sheet:
 * the sorted kernel lists and module stacks of ltab_build are what the
 * other launcher sheets need. Same groups, sums and order as
 * pyt_sheets_ops. */
int pyt_sheet_ops_summary(pyt_ctx *c, tl_pyt_sheets *out, tl_err *err)
{
    (void)err;
    if (!c->nl) return 0;
    ltab L = {.n = c->nl};
    pyt_sheets_push(out, sheet_ops_summary(c, &L));
    return 0;
}

int pyt_sheets_ops(pyt_ctx *c, tl_pyt_sheets *out, tl_err *err)
{
    (void)err;
    if (!c->nl) return 0; /* no launchers: the launcher sheets are omitted */
    ltab L;
    ltab_build(c, &L);
    pyt_sheets_push(out, sheet_by_category(c, &L));
    pyt_sheets_push(out, sheet_ops_summary(c, &L));
    pyt_sheets_push(out, sheet_unique_args(c, &L, NULL));
    if (c->o->include_overlap_info) {
        if (!c->overlap) c->overlap = pyt_overlap_build(c);
        pyt_ovf *ovf = tl_xcalloc(L.n ? L.n : 1, sizeof *ovf);
        for (size_t j = 0; j < L.n; j++)
            pyt_overlap_fields(c, c->overlap, L.ks + c->l_koff[j], l_nk(c, j), &c->arena, &ovf[j]);
        pyt_sheets_push(out, sheet_unique_args(c, &L, ovf));
        free(ovf);
    }
    ltab_free(&L);
    return 0;
}
