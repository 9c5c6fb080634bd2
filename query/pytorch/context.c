/* context.c — the report context: everything the PyTorch report's
 * sheets derive from the stored tree once per report (spec pytorch-report.md
 * §3-§4): µs times exactly as the reference computes them, children lists in
 * the reference's order, pre-order ranges (so "all GPU events below X" is a
 * slice), GPU classes (§5.1), kernel launchers (§4.4), fwd/bwd links (§4.6),
 * recompute marks (§4.7) and metadata names (§2.4), with the helpers every
 * sheet shares (row order, busy time, options). The parent edges
 * themselves come from ingest (query/core/trace.h); nothing re-parses the file. */
#include "query/pytorch/pytorch_internal.h"
#include "query/core/interval.h"

#include <ctype.h>
#include <stdlib.h>

/* ---- stable radix sort of rows by a double key ---------------------------- */

static uint64_t dkey(double d)
{
    uint64_t u;
    memcpy(&u, &d, 8);
    /* order-preserving map of IEEE doubles onto unsigned integers */
    return (u >> 63) ? ~u : (u | 0x8000000000000000ULL);
}

/* Sorts rows stably by their µs start (pyt_ts). */
static void radix_sort_rows(int32_t *rows, size_t n, const pyt_ctx *c)
{
    if (n < 2) return;
    int sorted = 1;
    for (size_t i = 1; i < n && sorted; i++)
        if (pyt_ts(c, rows[i]) < pyt_ts(c, rows[i - 1])) sorted = 0;
    if (sorted) return;
    uint64_t *k = tl_xmalloc(n * sizeof *k);
    for (size_t i = 0; i < n; i++) k[i] = dkey(pyt_ts(c, rows[i]));
    tl_radix_sort_rows((uint32_t *)rows, k, n); /* rows are >= 0 */
    free(k);
}

void pyt_sort_rows_by_ts(const pyt_ctx *c, int32_t *rows, size_t n)
{
    if (n < 2) return;
    /* small lists (kernel lists of one op): insertion sort, stable */
    if (n <= 32) {
        for (size_t i = 1; i < n; i++) {
            int32_t x = rows[i];
            size_t j = i;
            while (j > 0 && pyt_ts(c, rows[j - 1]) > pyt_ts(c, x)) { rows[j] = rows[j - 1]; j--; }
            rows[j] = x;
        }
        return;
    }
    radix_sort_rows(rows, n, c);
}

/* ---- busy time, options --------------------------------------------------- */

/* Busy time (length of the union) of the given GPU rows; 0 when n == 0. */
double pyt_busy(const pyt_ctx *c, const int32_t *rows, size_t n)
{
    tl_fival small[64];
    tl_fival *v = n <= 64 ? small : tl_xmalloc(n * sizeof *v);
    for (size_t i = 0; i < n; i++) v[i] = (tl_fival){pyt_ts(c, rows[i]), pyt_te(c, rows[i])};
    double tot = tl_fival_union_len(v, n);
    if (v != small) free(v);
    return tot;
}

int pyt_family_wanted(const tl_pyt_opts *o, const char *family)
{
    if (!o->perf_families) return 1;
    for (const char *const *f = o->perf_families; *f; f++)
        if (!strcmp(*f, family)) return 1;
    return 0;
}

void tl_pyt_opts_default(tl_pyt_opts *o)
{
    memset(o, 0, sizeof *o);
    o->short_kernel_threshold_us = 10;
    o->short_kernel_bins = 100;
    o->topk_short_kernels = -1;
}

/* ---- GPU classes (§5.1) ------------------------------------------------------ */

/* the one definition ingest also uses (launchers, the args_sel table) */
int pyt_is_comm_name(const char *s) { return tl_is_comm_kernel_name(s, strlen(s)); }

/* Full match of MEMORY_COPY_(HOST_TO_DEVICE|DEVICE_TO_HOST|DEVICE_TO_DEVICE)
 * or __amd_rocclr_copyBuffer(Rect)?(Aligned)?, each optionally ".kd". */
static int legacy_copy_name(const char *s)
{
    size_t n = strlen(s);
    if (n > 3 && !strcmp(s + n - 3, ".kd")) n -= 3;
    static const char *const full[] = {"MEMORY_COPY_HOST_TO_DEVICE", "MEMORY_COPY_DEVICE_TO_HOST",
                                       "MEMORY_COPY_DEVICE_TO_DEVICE", "__amd_rocclr_copyBuffer",
                                       "__amd_rocclr_copyBufferRect", "__amd_rocclr_copyBufferAligned",
                                       "__amd_rocclr_copyBufferRectAligned"};
    for (size_t i = 0; i < sizeof full / sizeof full[0]; i++)
        if (strlen(full[i]) == n && !strncmp(s, full[i], n)) return 1;
    return 0;
}

static int legacy_fill_name(const char *s)
{
    size_t n = strlen(s);
    if (n > 3 && !strcmp(s + n - 3, ".kd")) n -= 3;
    return (n == 23 && !strncmp(s, "__amd_rocclr_fillBuffer", 23)) ||
           (n == 30 && !strncmp(s, "__amd_rocclr_fillBufferAligned", 30));
}

int pyt_row_is_comm(pyt_ctx *c, int32_t row)
{
    uint32_t id = c->t->name[row];
    if (id >= c->t->dict.n) return pyt_is_comm_name(pyt_name(c, row));
    if (!c->name_comm[id]) c->name_comm[id] = pyt_is_comm_name(tl_trace_str(c->t, id)) ? 2 : 1;
    return c->name_comm[id] == 2;
}

/* ---- args of the rows the report reads (pyt_args) -----------------------------
 * The report needs args only of Reduce-model ops ("Output type") and of
 * communication kernels (coll_analysis). Those rows are copied out of the
 * args_sel table when the trace has it (ingest/schema.h: a few % of the
 * args column, which for a 1 GB rank is ~500 MB to decompress), else in one
 * pass over the args column's chunks -- no decoding of the whole column
 * into one block -- on a worker thread started before the context is
 * built, so that the decoding (most of it LZ4 and first-touch page faults:
 * ~10 ms on owlv2) overlaps the tree work. The store's readers may be used
 * from another thread (MDB_NOTLS) but not by two at once: until the first
 * pyt_args call joins the worker, the report does not touch the reader
 * (tl_trace_args and the plugins come after that join). */

struct pyt_args_job {
    const tl_trace *t;
    int32_t *rows;          /* ascending */
    size_t n, next;
    uint64_t base;          /* first row of the current chunk */
    const char **txt;       /* per rows[i]: the copied args text, NULL if not copied
                             * (per needed row, not per event: a 1 GB rank has
                             * 2.2 M events and ~35 k needed rows) */
    tl_arena arena;         /* the worker's own: the context's arena is not shared */
    int sel;                /* read from the args_sel table (holds every needed row
                             * that has args the report reads; the others get "") */
    tl_thread *thr;         /* the pass's thread until joined; NULL when it ran inline */
    double wait_s;          /* time the report spent waiting for it */
};

static int args_chunk(void *ctx, uint32_t chunk, const tl_colview *v)
{
    (void)chunk;
    pyt_args_job *j = ctx;
    if (v->type != TL_CT_BLOB) return 1; /* a damaged column: the rows left read "" (tl_trace_args) */
    while (j->next < j->n && (uint64_t)j->rows[j->next] < j->base + v->n) {
        uint64_t i = (uint64_t)j->rows[j->next] - j->base;
        size_t len = (size_t)(v->offsets[i + 1] - v->offsets[i] - 1);
        j->txt[j->next++] = tl_arena_strndup(&j->arena, v->bytes + v->offsets[i], len);
    }
    j->base += v->n;
    return j->next == j->n; /* stop after the last needed row */
}

static int sel_row(void *ctx, uint32_t row, const char *args, size_t len)
{
    pyt_args_job *j = ctx;
    while (j->next < j->n && (uint32_t)j->rows[j->next] < row) j->txt[j->next++] = "";
    if (j->next < j->n && (uint32_t)j->rows[j->next] == row) j->txt[j->next++] = tl_arena_strndup(&j->arena, args, len);
    return j->next == j->n;
}

static void *args_worker(void *arg)
{
    pyt_args_job *j = arg;
    if (j->sel) {
        if (tl_args_sel_walk(j->t->reader, j->t->id, sel_row, j, NULL) == 0)
            while (j->next < j->n) j->txt[j->next++] = "";
        tl_reader_drop_resident(j->t->reader); /* the args_sel pages were read once */
        return NULL; /* (on a store error the rows left fall back to tl_trace_args) */
    }
    /* a trace without an args column: the rows stay NULL (tl_trace_args
     * then answers "") */
    /* args_chunk copies the rows it needs: one chunk decoded at a time */
    (void)tl_reader_column_scan(j->t->reader, j->t->id, TL_T_EVENTS, TL_C_ARGS, args_chunk, j, NULL);
    tl_reader_drop_resident(j->t->reader); /* the args pages were read once */
    return NULL;
}

pyt_args_job *pyt_args_start(const tl_trace *t, const tl_pyt_opts *o)
{
    if (t->args_loaded || !t->reader || !t->n) return NULL; /* tl_trace_args is direct then */
    /* per name, each test made once: bit 0 Reduce model known, bit 1 it is
     * one; bit 2 comm test made, bit 3 communication kernel name */
    uint8_t *cls = tl_xcalloc(t->dict.n ? t->dict.n : 1, 1);
    int comm = !o->disable_coll_analysis;
    int reduce = pyt_family_wanted(o, "Reduce");
    TL_VEC(int32_t) rows = {0};
    for (size_t i = 0; i < t->n; i++) {
        int k = t->kind[i];
        uint32_t nm = t->name[i];
        if (nm >= t->dict.n) continue;
        int need = 0;
        if (k == TL_K_KERNEL && comm) {
            if (!(cls[nm] & 4)) cls[nm] |= 4 | (pyt_is_comm_name(tl_trace_str(t, nm)) ? 8 : 0);
            need = cls[nm] & 8;
        } else if (reduce && (k == TL_K_CPU_OP || k == TL_K_PYTHON)) {
            if (!(cls[nm] & 1)) {
                const tl_pm_op *op = tl_pm_find(tl_trace_str(t, nm));
                cls[nm] |= 1 | (op && !strcmp(op->family, "Reduce") ? 2 : 0);
            }
            need = cls[nm] & 2;
        }
        if (need) tl_vec_push(&rows, (int32_t)i);
    }
    free(cls);
    if (!rows.n) {
        tl_vec_free(&rows);
        return NULL;
    }
    pyt_args_job *j = tl_xcalloc(1, sizeof *j);
    j->t = t;
    j->rows = rows.v;
    j->n = rows.n;
    j->txt = tl_xcalloc(j->n, sizeof *j->txt);
    tl_arena_init(&j->arena, 1 << 16);
    j->sel = tl_catalog_has_args_sel(t->catalog);
    /* plugins may read args (tl_trace_args) at any point of the report:
     * with plugins, or without a thread, the same pass runs now */
    if (o->plugins || o->serial || !(j->thr = tl_thread_start(args_worker, j))) args_worker(j);
    return j;
}

static void args_join(pyt_args_job *j)
{
    if (j && j->thr) {
        double t0 = tl_now();
        tl_thread_join(j->thr);
        j->thr = NULL;
        j->wait_s = tl_now() - t0;
    }
}

double pyt_args_wait_ms(const pyt_ctx *c) { return c->args_job ? c->args_job->wait_s * 1e3 : 0; }

void pyt_args_free(pyt_args_job *j)
{
    if (!j) return;
    args_join(j);
    free(j->rows);
    free(j->txt);
    tl_arena_free(&j->arena);
    free(j);
}

void pyt_args_join(pyt_ctx *c) { args_join(c->args_job); }

const char *pyt_args(pyt_ctx *c, int32_t row, size_t *len)
{
    pyt_args_job *j = c->args_job;
    args_join(j);
    const char *a = NULL;
    if (j) { /* rows are ascending */
        size_t lo = 0, hi = j->n;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (j->rows[mid] < row) lo = mid + 1;
            else hi = mid;
        }
        if (lo < j->n && j->rows[lo] == row) a = j->txt[lo];
    }
    if (!a) return tl_trace_args(c->t, (size_t)row, len);
    *len = strlen(a);
    return a;
}

const tl_pm_op *pyt_pm_op(pyt_ctx *c, int32_t row)
{
    const tl_trace *t = c->t;
    uint32_t id = t->name[row];
    if (id >= t->dict.n) return tl_pm_find(pyt_name(c, row));
    if (!c->pm_op_of) {
        c->pm_op_of = tl_xcalloc(t->dict.n, sizeof *c->pm_op_of);
        c->pm_op_done = tl_xcalloc(t->dict.n, 1);
    }
    if (!c->pm_op_done[id]) {
        c->pm_op_done[id] = 1;
        c->pm_op_of[id] = tl_pm_find(tl_trace_str(t, id));
    }
    return c->pm_op_of[id];
}

static uint8_t gpu_class(pyt_ctx *c, int32_t row)
{
    int k = c->t->kind[row];
    if (k == TL_K_MEMCPY) return PYT_G_MEMCPY;
    if (k == TL_K_KERNEL) {
        const char *s = pyt_name(c, row);
        if (s[0] == 'M' || s[0] == '_') {
            if (legacy_copy_name(s)) return PYT_G_MEMCPY;
            if (legacy_fill_name(s)) return PYT_G_COMP;
        }
    }
    return pyt_row_is_comm(c, row) ? PYT_G_COMM : PYT_G_COMP;
}

/* ---- metadata names (§2.4) --------------------------------------------------- */

typedef struct meta_ent {
    int64_t pid, tid;
    uint8_t flags; /* bit0 pid str, bit1 tid str, bit2 has tid */
    const char *pname, *plabel, *tname;
} meta_ent;

typedef struct meta_tab {
    meta_ent *v;
    size_t n;
} meta_tab;

static meta_tab g_dummy_meta;

static meta_ent *meta_find(meta_tab *m, int64_t pid, int64_t tid, uint8_t flags)
{
    for (size_t i = 0; i < m->n; i++)
        if (m->v[i].pid == pid && m->v[i].tid == tid && m->v[i].flags == flags) return &m->v[i];
    return NULL;
}

/* ---- init ----------------------------------------------------------------------- */

static int starts(const char *s, const char *p) { return strncmp(s, p, strlen(p)) == 0; }

static int same_thread(const tl_trace *t, int32_t a, int32_t b)
{
    return tl_trace_pid(t, a) == tl_trace_pid(t, b) && tl_trace_tid(t, a) == tl_trace_tid(t, b) &&
           (t->idflags[a] & 3) == (t->idflags[b] & 3);
}

static void build_meta(pyt_ctx *c)
{
    const tl_trace *t = c->t;
    meta_tab *m = tl_arena_zalloc(&c->arena, sizeof *m);
    m->v = tl_arena_zalloc(&c->arena, (t->nmeta + 1) * sizeof *m->v);
    tl_buf b = {0};
    for (size_t i = 0; i < t->nmeta; i++) {
        const char *nm = tl_trace_str(t, t->m_name[i]);
        const char *key;
        int field;
        if (!strcmp(nm, "process_name")) { key = "name"; field = 0; }
        else if (!strcmp(nm, "process_labels")) { key = "labels"; field = 1; }
        else if (!strcmp(nm, "thread_name")) { key = "name"; field = 2; }
        else continue;
        size_t len = (size_t)(t->m_args.offsets[i + 1] - t->m_args.offsets[i] - 1);
        const char *args = t->m_args.bytes + t->m_args.offsets[i];
        if (tl_args_get_str(args, len, key, &b) != 0) continue;
        uint8_t fl = t->m_idflags[i] & 7;
        int64_t tid = (fl & 4) ? t->m_tid[i] : 0;
        meta_ent *e = meta_find(m, t->m_pid[i], tid, fl);
        if (!e) {
            e = &m->v[m->n++];
            e->pid = t->m_pid[i];
            e->tid = tid;
            e->flags = fl;
        }
        char *tmp = tl_arena_strndup(&c->arena, b.p ? b.p : "", b.n);
        const char *val = pyt_intern(c, tmp);
        if (field == 0) e->pname = val;
        else if (field == 1) e->plabel = val;
        else e->tname = val;
    }
    tl_buf_free(&b);
    c->meta = m;
}

void pyt_meta_names(pyt_ctx *c, int32_t row, const char **pname, const char **plabel,
                    const char **tname)
{
    meta_tab *m = c->meta ? c->meta : &g_dummy_meta;
    const tl_trace *t = c->t;
    uint8_t fl = t->idflags[row] & 3;
    /* process fields live under (pid, integer tid 0) */
    meta_ent *p = meta_find(m, tl_trace_pid(t, row), 0, (uint8_t)((fl & 1) | 4));
    meta_ent *th = meta_find(m, tl_trace_pid(t, row), tl_trace_tid(t, row), (uint8_t)(fl | 4));
    const char *unk = pyt_intern(c, "Unknown");
    *pname = p && p->pname ? p->pname : unk;
    *plabel = p && p->plabel ? p->plabel : unk;
    *tname = th && th->tname ? th->tname : unk;
}

/* ---- arg reprs -------------------------------------------------------------------- */

static const char *arg_repr(pyt_ctx *c, uint32_t sid, const char **cache, unsigned flags)
{
    if (!sid || sid >= c->t->dict.n) return NULL;
    if (cache[sid]) return cache[sid][0] ? cache[sid] : NULL;
    size_t len;
    const char *txt = tl_dict_get(&c->t->dict, sid, &len);
    char *out = NULL;
    tl_err err = {0};
    if (tl_pv_reformat(&c->arena, txt, len, flags, &out, &err) != 0)
        out = tl_arena_strndup(&c->arena, txt, len); /* unparsable: verbatim */
    /* interned: equal texts share one pointer (group keys hold pointers) */
    cache[sid] = pyt_intern(c, out);
    return cache[sid];
}

const char *pyt_arg_tuple(pyt_ctx *c, uint32_t sid) { return arg_repr(c, sid, c->tuple_repr, TL_PV_TUPLES); }
const char *pyt_arg_list(pyt_ctx *c, uint32_t sid) { return arg_repr(c, sid, c->list_repr, 0); }

/* ---- subtree queries ------------------------------------------------------------------ */

/* index in gpu_by_pos of the first GPU event at pre-order position q or later */
static size_t gpu_at_or_after(const pyt_ctx *c, uint32_t q)
{
    size_t lo = 0, hi = c->ngpu;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c->pos[c->gpu_by_pos[mid]] < q) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

void pyt_subtree_gpu(const pyt_ctx *c, int32_t row, int32_t **out, size_t *n, size_t *cap)
{
    *n = 0;
    size_t a = gpu_at_or_after(c, c->pos[row] + 1), b = gpu_at_or_after(c, c->end[row]);
    size_t m = b > a ? b - a : 0;
    if (m > *cap) {
        *cap = m * 2;
        *out = tl_xrealloc(*out, *cap * sizeof **out);
    }
    if (m) memcpy(*out, c->gpu_by_pos + a, m * sizeof **out);
    *n = m;
}

static const int32_t *g_sort_parent;
static int cmp_parent_row(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    int32_t px = g_sort_parent[x], py = g_sort_parent[y];
    if (px != py) return px < py ? -1 : 1;
    return x < y ? -1 : x > y;
}

void pyt_gpu_events(const pyt_ctx *c, int32_t row, int32_t **out, size_t *n, size_t *cap)
{
    if (pyt_is_gpu(c, row)) { *n = 0; return; }
    pyt_subtree_gpu(c, row, out, n, cap);
    /* §4.3: appended per runtime call in UID order, then GPU order */
    int sorted = 1;
    for (size_t i = 1; i < *n && sorted; i++) {
        int32_t x = (*out)[i - 1], y = (*out)[i];
        if (c->parent[x] > c->parent[y] || (c->parent[x] == c->parent[y] && x > y)) sorted = 0;
    }
    if (!sorted) {
        g_sort_parent = c->parent;
        qsort(*out, *n, sizeof **out, cmp_parent_row);
    }
}

/* ---- init ------------------------------------------------------------------------------ */

/* fwd/bwd links (§4.6): in each group of rows with one sequence number,
 * the autograd evaluate_function is the backward of the latest row on
 * another thread. */
static int cmp_link(const void *a, const void *b)
{
    int32_t x = ((const int32_t *)a)[0], y = ((const int32_t *)b)[0];
    return (x > y) - (x < y);
}

void pyt_link_sort(int32_t (*v)[2], size_t n)
{
    if (n) qsort(v, n, sizeof *v, cmp_link);
}

static void link_fwd_bwd(pyt_ctx *c)
{
    size_t lcap = 0;
    const tl_trace *t = c->t;
    size_t n = c->n;
    /* rows with a sequence number grouped by it, each group in UID
     * order (a stable sort by (seq, row)). Sequence numbers count up per
     * op, so a counting sort over their range does it in three passes, and
     * its counts give the groups; a sparse range falls back to the radix
     * sort. Both are linear: large ranks have millions of such rows. */
    size_t ns = 0;
    int64_t smin = INT64_MAX, smax = INT64_MIN;
    for (size_t i = 0; i < n; i++) {
        int64_t q = tl_trace_seq(t, i);
        if (q == TL_NONE) continue;
        ns++;
        if (q < smin) smin = q;
        if (q > smax) smax = q;
    }
    int32_t *sr = tl_xmalloc((ns ? ns : 1) * sizeof *sr);
    uint32_t *gend = NULL; /* counting sort: end of the group of each value */
    size_t nv = 0;
    if (ns && (uint64_t)smax - (uint64_t)smin < 4 * (uint64_t)ns + 1024) {
        nv = (size_t)((uint64_t)smax - (uint64_t)smin) + 1;
        gend = tl_xcalloc(nv + 1, sizeof *gend);
        for (size_t i = 0; i < n; i++) {
            int64_t q = tl_trace_seq(t, i);
            if (q != TL_NONE) gend[(uint64_t)q - (uint64_t)smin + 1]++;
        }
        for (size_t v = 0; v < nv; v++) gend[v + 1] += gend[v];
        for (size_t i = 0; i < n; i++) {
            int64_t q = tl_trace_seq(t, i);
            if (q != TL_NONE) sr[gend[(uint64_t)q - (uint64_t)smin]++] = (int32_t)i;
        }
        /* gend[v] is now the end of value v's group (and the start of v + 1's) */
    } else if (ns) {
        uint64_t *sk = tl_xmalloc(ns * sizeof *sk);
        size_t k = 0;
        for (size_t i = 0; i < n; i++) {
            int64_t q = tl_trace_seq(t, i);
            if (q != TL_NONE) {
                sk[k] = (uint64_t)q ^ 0x8000000000000000ULL; /* order-preserving for int64 */
                sr[k++] = (int32_t)i;
            }
        }
        tl_radix_sort_rows((uint32_t *)sr, sk, ns);
        free(sk);
    }
    /* per name: 0 not tested, 1 no, 2 an autograd evaluate_function */
    uint8_t *is_eval = tl_xcalloc(t->dict.n ? t->dict.n : 1, 1);
    for (size_t a = 0, v = 0; a < ns;) {
        size_t b = a;
        if (gend) {
            while (gend[v] == a) v++; /* values no row has */
            b = gend[v++];
        } else {
            while (b < ns && tl_trace_seq(t, sr[b]) == tl_trace_seq(t, sr[a])) b++;
        }
        int32_t bwd = -1;
        for (size_t k = a; k < b && bwd < 0; k++) {
            uint32_t nm = t->name[sr[k]];
            if (nm >= t->dict.n) continue;
            if (!is_eval[nm])
                is_eval[nm] = starts(pyt_name(c, sr[k]), "autograd::engine::evaluate_function:") ? 2 : 1;
            if (is_eval[nm] == 2) bwd = sr[k];
        }
        if (bwd >= 0) {
            int32_t fwd = -1;
            for (size_t k = a; k < b; k++) {
                int32_t r = sr[k];
                if (same_thread(t, r, bwd)) continue;
                if (fwd < 0 || pyt_ts(c, r) > pyt_ts(c, fwd)) fwd = r;
            }
            if (fwd >= 0) {
                if (c->nlink == lcap) {
                    lcap = lcap ? lcap * 2 : 64;
                    c->fwd_link = tl_xrealloc(c->fwd_link, lcap * sizeof *c->fwd_link);
                }
                c->fwd_link[c->nlink][0] = bwd;
                c->fwd_link[c->nlink++][1] = fwd;
            }
        }
        a = b;
    }
    free(is_eval);
    free(gend);
    free(sr);
    /* each row is in one sequence group, so either end of a link is unique */
    c->bwd_link = tl_xmalloc((c->nlink ? c->nlink : 1) * sizeof *c->bwd_link);
    for (size_t i = 0; i < c->nlink; i++) {
        c->bwd_link[i][0] = c->fwd_link[i][1];
        c->bwd_link[i][1] = c->fwd_link[i][0];
    }
    pyt_link_sort(c->fwd_link, c->nlink);
    pyt_link_sort(c->bwd_link, c->nlink);
    c->has_fwd = tl_xcalloc(n / 8 + 1, 1);
    c->has_bwd = tl_xcalloc(n / 8 + 1, 1);
    for (size_t i = 0; i < c->nlink; i++) {
        int32_t b = c->fwd_link[i][0], f = c->fwd_link[i][1];
        c->has_fwd[b >> 3] |= (uint8_t)(1u << (b & 7));
        c->has_bwd[f >> 3] |= (uint8_t)(1u << (f & 7));
    }
}

/* Launchers (§4.4): in order of their first kernel, then stable by ts,
 * with their kernels, direct and subtree kernel time, first kernel and
 * category. The kernels with a launcher are listed once, in UID order,
 * with their launcher (rather than a launcher per event, -1 for most, read
 * twice more over all events). */
static void build_launchers(pyt_ctx *c)
{
    const tl_trace *t = c->t;
    size_t n = c->n, nz = n ? n : 1;
    int32_t *lidx = tl_xmalloc(nz * sizeof *lidx); /* launcher row -> index */
    for (size_t i = 0; i < n; i++) lidx[i] = -1;
    int32_t *lrows = tl_xmalloc((c->ngpu ? c->ngpu : 1) * sizeof *lrows);
    int32_t *kk = tl_xmalloc((c->ngpu ? c->ngpu : 1) * sizeof *kk); /* kernel rows with a launcher */
    int32_t *kl = tl_xmalloc((c->ngpu ? c->ngpu : 1) * sizeof *kl); /* and their launchers */
    size_t nl = 0, nkl = 0;
    for (size_t k = 0; k < n; k++) {
        if (!c->gclass[k] || c->parent[k] < 0 || pyt_row_is_comm(c, (int32_t)k)) continue;
        int32_t r = c->parent[k], l = r;
        for (int32_t a = c->parent[r]; a >= 0; a = c->parent[a]) {
            int ak = t->kind[a];
            if (ak == TL_K_CPU_OP) {
                if ((int32_t)t->name[a] == c->execute_id || pyt_is_pseudo_op(c, a)) continue;
                l = a;
                break;
            }
            if (ak == TL_K_PYTHON) continue;
            break;
        }
        kk[nkl] = (int32_t)k;
        kl[nkl++] = l;
        if (lidx[l] < 0) { lidx[l] = (int32_t)nl; lrows[nl++] = l; }
    }
    radix_sort_rows(lrows, nl, c);
    for (size_t j = 0; j < nl; j++) lidx[lrows[j]] = (int32_t)j;
    c->nl = nl;
    c->l_row = lrows;
    c->l_koff = tl_xcalloc(nl + 1, sizeof *c->l_koff);
    for (size_t q = 0; q < nkl; q++) c->l_koff[lidx[kl[q]] + 1]++;
    for (size_t j = 0; j < nl; j++) c->l_koff[j + 1] += c->l_koff[j];
    c->l_k = tl_xmalloc((nkl ? nkl : 1) * sizeof *c->l_k);
    uint32_t *lf = tl_xmalloc((nl ? nl : 1) * sizeof *lf);
    memcpy(lf, c->l_koff, nl * sizeof *lf);
    for (size_t q = 0; q < nkl; q++) c->l_k[lf[lidx[kl[q]]]++] = kk[q];
    free(lf);
    free(kk);
    free(kl);
    free(lidx);

    c->l_direct = tl_xmalloc((nl ? nl : 1) * sizeof *c->l_direct);
    c->l_subtree = tl_xmalloc((nl ? nl : 1) * sizeof *c->l_subtree);
    c->l_first = tl_xmalloc((nl ? nl : 1) * sizeof *c->l_first);
    c->l_cat = tl_xmalloc((nl ? nl : 1) * sizeof *c->l_cat);
    int32_t *buf = NULL;
    size_t bn = 0, bcap = 0;
    for (size_t j = 0; j < nl; j++) {
        const int32_t *d = c->l_k + c->l_koff[j];
        size_t dn = c->l_koff[j + 1] - c->l_koff[j];
        c->l_direct[j] = pyt_busy(c, d, dn);
        pyt_subtree_gpu(c, c->l_row[j], &buf, &bn, &bcap);
        c->l_subtree[j] = bn ? pyt_busy(c, buf, bn) : 0;
        int32_t first = d[0];
        for (size_t q = 1; q < dn; q++)
            if (pyt_ts(c, d[q]) < pyt_ts(c, first)) first = d[q];
        c->l_first[j] = first;
        c->l_cat[j] = pyt_category(c, c->l_row[j], first);
    }
    free(buf);
}

int pyt_ctx_init(pyt_ctx *c, const tl_trace *t, const tl_pyt_opts *o, const tl_catreg *cat,
                 tl_err *err)
{
    memset(c, 0, sizeof *c);
    c->t = t;
    c->o = o;
    c->cat = cat;
    c->n = t->n;
    tl_arena_init(&c->arena, 1 << 16);
    size_t n = t->n, nz = n ? n : 1;
    c->python = o->detect_recompute || o->include_call_stack || o->group_by_parent_module;
    c->parent = c->python ? t->parent_py : t->parent;
    if (!c->parent) {
        c->parent_own = tl_big_alloc(nz * sizeof *c->parent_own);
        for (size_t i = 0; i < n; i++) c->parent_own[i] = -1;
        c->parent = c->parent_own;
    }
    size_t nd = t->dict.n ? t->dict.n : 1;
    c->name_comm = tl_xcalloc(nd, 1);
    c->name_cat = tl_xcalloc(nd, sizeof *c->name_cat);
    c->name_cat_done = tl_xcalloc(nd, 1);
    c->tuple_repr = tl_xcalloc(nd, sizeof *c->tuple_repr);
    c->list_repr = tl_xcalloc(nd, sizeof *c->list_repr);

    c->gclass = tl_big_alloc(nz);
    /* children lists (CSR), only to build the pre-order from */
    uint32_t *ch_off = tl_big_calloc(n + 1, sizeof *ch_off);
    /* a GPU event's class depends on its name alone (and on whether it is
     * a kernel: the legacy copy names are kernels'), found once per name:
     * per name, bits 0-3 the class as a kernel + 1, bits 4-7 otherwise */
    uint8_t *ncls = tl_xcalloc(nd, 1);
    int any_cpu = 0;
    /* one pass: GPU classes and the children counts */
    for (size_t i = 0; i < n; i++) {
        int k = t->kind[i];
        uint8_t g = PYT_G_NONE;
        if (k == TL_K_MEMCPY) {
            g = PYT_G_MEMCPY;
        } else if (tl_kind_is_gpu(k)) {
            uint32_t nm = t->name[i];
            int sh = k == TL_K_KERNEL ? 0 : 4;
            if (nm < t->dict.n && (ncls[nm] >> sh & 15)) g = (uint8_t)((ncls[nm] >> sh & 15) - 1);
            else {
                g = gpu_class(c, (int32_t)i);
                if (nm < t->dict.n) ncls[nm] |= (uint8_t)((g + 1) << sh);
            }
        } else if (k == TL_K_CPU_OP) {
            any_cpu = 1;
        }
        c->gclass[i] = g;
        if (g) c->ngpu++;
        if (c->parent[i] >= 0) ch_off[c->parent[i] + 1]++;
    }
    free(ncls);
    c->any_gpu = c->ngpu > 0;
    c->gpu_only = !any_cpu;

    /* children: counted above; fill host children in stable ts order, GPU
     * children in UID order */
    for (size_t i = 0; i < n; i++) ch_off[i + 1] += ch_off[i];
    int32_t *ch = tl_big_alloc((ch_off[n] ? ch_off[n] : 1) * sizeof *ch);
    uint32_t *fill = tl_big_alloc(nz * sizeof *fill);
    memcpy(fill, ch_off, n * sizeof *fill);
    /* Host children in UID order, then each parent's list sorted stably by
     * ts on its own: the same order as one stable sort of all host rows
     * distributed to their parents, but most lists are short and already
     * in order, where the global sort cost a third of this function. */
    for (size_t i = 0; i < n; i++)
        if (c->parent[i] >= 0 && !c->gclass[i]) ch[fill[c->parent[i]]++] = (int32_t)i;
    for (size_t p = 0; p < n; p++)
        if (fill[p] - ch_off[p] >= 2) pyt_sort_rows_by_ts(c, ch + ch_off[p], fill[p] - ch_off[p]);
    for (size_t i = 0; i < n; i++)
        if (c->parent[i] >= 0 && c->gclass[i]) ch[fill[c->parent[i]]++] = (int32_t)i;

    /* pre-order over the forest */
    c->pos = tl_big_alloc(nz * sizeof *c->pos);
    c->end = tl_big_alloc(nz * sizeof *c->end);
    c->order = tl_big_alloc(nz * sizeof *c->order);
    int32_t *stack = tl_big_alloc(nz * sizeof *stack);
    uint32_t *it = fill; /* reuse: next child index per node on the stack */
    uint32_t p = 0;
    for (size_t r = 0; r < n; r++) {
        if (c->parent[r] >= 0) continue;
        size_t sp = 0;
        stack[sp++] = (int32_t)r;
        c->pos[r] = p;
        c->order[p++] = (int32_t)r;
        it[r] = ch_off[r];
        while (sp) {
            int32_t x = stack[sp - 1];
            if (it[x] < ch_off[x + 1]) {
                int32_t y = ch[it[x]++];
                c->pos[y] = p;
                c->order[p++] = y;
                it[y] = ch_off[y];
                stack[sp++] = y;
            } else {
                c->end[x] = p;
                sp--;
            }
        }
    }
    tl_big_free(stack);
    tl_big_free(fill);
    tl_big_free(ch);
    tl_big_free(ch_off);
    if (p != n) return tl_errf(err, TL_EFORMAT, "trace tree is not a forest (%u of %zu events reached)", p, n);

    /* GPU events by pre-order position */
    c->gpu_by_pos = tl_big_alloc((c->ngpu ? c->ngpu : 1) * sizeof *c->gpu_by_pos);
    size_t g = 0;
    for (size_t q = 0; q < n; q++) {
        int32_t r = c->order[q];
        if (c->gclass[r]) c->gpu_by_pos[g++] = r;
    }

    /* recompute marks (§4.7) */
    if (o->detect_recompute) {
        c->recompute = tl_xcalloc(nz, 1);
        for (size_t i = 0; i < n; i++) {
            if (t->kind[i] != TL_K_PYTHON) continue;
            const char *nm = pyt_name(c, (int32_t)i);
            if (!strstr(nm, "torch/utils/checkpoint.py") || !strstr(nm, "recompute_fn")) continue;
            for (uint32_t q = c->pos[i]; q < c->end[i]; q++) c->recompute[c->order[q]] = 1;
        }
    }

    /* fwd/bwd links (§4.6) */
    link_fwd_bwd(c);

    build_meta(c);
    c->execute_id = -1;
    for (uint32_t id = 0; id < t->dict.n; id++)
        if (!strcmp(tl_trace_str(t, id), "execute")) { c->execute_id = (int32_t)id; break; }

    build_launchers(c);
    return TL_OK;
}

void pyt_ctx_drop_tree(pyt_ctx *c)
{
    tl_big_free(c->pos);
    tl_big_free(c->end);
    tl_big_free(c->order);
    tl_big_free(c->gpu_by_pos);
    c->pos = c->end = NULL;
    c->order = c->gpu_by_pos = NULL;
}

void pyt_ctx_free(pyt_ctx *c)
{
    tl_big_free(c->parent_own);
    free(c->name_comm);
    free(c->name_cat);
    free(c->name_cat_done);
    free(c->tuple_repr);
    free(c->list_repr);
    tl_big_free(c->gclass);
    tl_big_free(c->pos);
    tl_big_free(c->end);
    tl_big_free(c->order);
    tl_big_free(c->gpu_by_pos);
    tl_imap_free(&c->pm_inst);
    for (size_t i = 0; i < c->pm_blocks.n; i++) tl_big_free(c->pm_blocks.v[i]); /* perf.c: heap or big */
    tl_vec_free(&c->pm_blocks);
    pyt_overlap_free(c->overlap);
    if (c->kd_init) tl_bmap_free(&c->kd_map);
    free(c->kd_ents);
    free(c->pm_mark);
    free(c->ann_rows);
    pyt_args_free(c->args_job);
    free(c->pm_op_of);
    free(c->pm_op_done);
    free(c->recompute);
    free(c->fwd_link);
    free(c->bwd_link);
    free(c->has_fwd);
    free(c->has_bwd);
    free(c->l_row);
    free(c->l_koff);
    free(c->l_k);
    free(c->l_direct);
    free(c->l_subtree);
    free(c->l_first);
    free(c->l_cat);
    if (c->intern_init) tl_smap_free(&c->intern);
    free(c->intern_str);
    tl_arena_free(&c->arena);
    memset(c, 0, sizeof *c);
}
