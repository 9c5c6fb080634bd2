/* tree.c — builds the event tree and the runtime -> GPU links at ingest,
 * exactly as spec/pytorch-report.md §3-§4 define them, and stores them as
 * edge columns (parent, parent_py, launcher, linked) so no report rebuilds
 * them:
 *   - host nesting per (pid, tid) stack over a stable ts sort, with the
 *     reference's pop / bleed (< 1 µs) / drop rules, once without and once
 *     with python_function events;
 *   - GPU events linked to runtime calls through ac2g flows (s/f pairs) and
 *     the (pid, tid, correlation) index, graph launches by correlation;
 *   - beyond the reference: a trace without any ac2g flow (older Kineto,
 *     rocprof, XPlane) links GPU events to runtime calls by correlation id;
 *   - kernel launcher attribution (§4.4) for the default (no python) tree.
 * Times are compared as the reference does: doubles of µs, t_end = ts + dur
 * computed once (§3.2, §5.4). */
#include "builder_internal.h"

#include <ctype.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* ---- a small open-addressing map: 64-bit key -> row (int32) ----
 * Sized from the number of keys it will hold (at most half full); rows fit
 * 32 bits (the store's edge columns are int32 too). The maps are the
 * largest part of a trace's peak memory at ingest, so slots are 13 bytes. */
typedef struct imap {
    uint64_t *keys;
    int32_t *vals;
    uint8_t *used;
    size_t cap, n;
} imap;

static void imap_init(imap *m, size_t hint)
{
    m->cap = 64;
    while (m->cap < hint * 2) m->cap *= 2;
    m->keys = tl_xcalloc(m->cap, sizeof *m->keys);
    m->vals = tl_xcalloc(m->cap, sizeof *m->vals);
    m->used = tl_xcalloc(m->cap, 1);
    m->n = 0;
}

static void imap_free(imap *m)
{
    free(m->keys);
    free(m->vals);
    free(m->used);
}

static int32_t *imap_slot(imap *m, uint64_t key, int create);

static void imap_grow(imap *m)
{
    imap o = *m;
    m->cap *= 2;
    m->keys = tl_xcalloc(m->cap, sizeof *m->keys);
    m->vals = tl_xcalloc(m->cap, sizeof *m->vals);
    m->used = tl_xcalloc(m->cap, 1);
    m->n = 0;
    for (size_t i = 0; i < o.cap; i++)
        if (o.used[i]) *imap_slot(m, o.keys[i], 1) = o.vals[i];
    imap_free(&o);
}

static int32_t *imap_slot(imap *m, uint64_t key, int create)
{
    size_t i = tl_mix64(key) & (m->cap - 1);
    while (m->used[i]) {
        if (m->keys[i] == key) return &m->vals[i];
        i = (i + 1) & (m->cap - 1);
    }
    if (!create) return NULL;
    if ((m->n + 1) * 2 > m->cap) {
        imap_grow(m);
        return imap_slot(m, key, 1);
    }
    m->used[i] = 1;
    m->keys[i] = key;
    m->vals[i] = -1;
    m->n++;
    return &m->vals[i];
}

static uint64_t key3(int64_t pid, int64_t tid, uint8_t flags, int64_t link)
{
    uint64_t h = tl_mix64((uint64_t)pid ^ 0x9e3779b97f4a7c15ULL);
    h = tl_mix64(h ^ (uint64_t)tid ^ ((uint64_t)(flags & 3) << 62));
    return tl_mix64(h ^ (uint64_t)link);
}

/* Stable sort of rows by ts (already sorted: left as is). */
static void sort_by_ts(const int64_t *ts, uint32_t *rows, size_t n)
{
    int sorted = 1;
    for (size_t i = 1; i < n && sorted; i++)
        if (ts[rows[i]] < ts[rows[i - 1]]) sorted = 0;
    if (sorted) return;
    uint64_t *k = tl_xmalloc(n * sizeof *k);
    for (size_t i = 0; i < n; i++) k[i] = (uint64_t)ts[rows[i]] ^ 0x8000000000000000ULL; /* order-preserving */
    tl_radix_sort_rows(rows, k, n);
    free(k);
}

static int name_is(const tl_build *b, uint32_t id, const char *lit)
{
    size_t n;
    const char *s = tl_build_strget(b, id, &n);
    return n == strlen(lit) && memcmp(s, lit, n) == 0;
}

static int name_has_launch(const tl_build *b, uint32_t id)
{
    size_t n;
    const char *s = tl_build_strget(b, id, &n);
    for (size_t i = 0; i + 6 <= n; i++)
        if (tolower((unsigned char)s[i]) == 'l' && strncasecmp(s + i, "launch", 6) == 0) return 1;
    return 0;
}

/* §5.1: communication kernels never get a launcher. */
int tl_is_comm_kernel_name(const char *s, size_t n)
{
    for (size_t i = 0; i + 4 <= n; i++) {
        if (strncasecmp(s + i, "nccl", 4) == 0 || strncasecmp(s + i, "rccl", 4) == 0) return 1;
        if (i + 19 <= n && strncasecmp(s + i, "cross_device_reduce", 19) == 0) return 1;
    }
    return 0;
}

/* One (pid, tid) stack of open events for the §4.2 nesting, each with
 * its end time (so that no per-event time arrays are needed). */
typedef struct open_ev {
    int32_t row;
    double end;
} open_ev;
typedef struct nest_stack {
    TL_VEC(open_ev) st;
} nest_stack;

/* §4.2 for one event e (start ts, end te, in µs as the reference's
 * doubles) against one thread's stack: pops what ended, the bleed (< 1 µs
 * overlap) and drop rules. An event that joins the tree is pushed, and
 * parent[e] set when the stack had an open event; a dropped one is left
 * out. */
static void nest_one(nest_stack *S, uint32_t e, double ts, double te, int32_t *parent)
{
    while (S->st.n && ts >= S->st.v[S->st.n - 1].end) S->st.n--;
    if (S->st.n && te > S->st.v[S->st.n - 1].end) {
        double overlap = S->st.v[S->st.n - 1].end - ts;
        if (overlap < 1.0 && S->st.n >= 2) S->st.n--;
        else return; /* dropped from the tree */
    }
    if (S->st.n) parent[e] = S->st.v[S->st.n - 1].row;
    open_ev o = {(int32_t)e, te};
    tl_vec_push(&S->st, o);
}

/* §4.2 host nesting, both trees in one pass: parent[] without python
 * functions, parent_py[] with them. One stable ts sort of cpu_ops, runtime
 * calls and python functions serves both: the non-python rows of a stable
 * sort are in the order a stable sort of them alone gives. Each event's
 * thread is looked up once for both stacks. */
static void nest(tl_build *b, int32_t *parent, int32_t *parent_py)
{
    size_t n = b->n;
    uint32_t *rows = tl_xmalloc((n ? n : 1) * sizeof *rows);
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        uint8_t k = b->kind.v[i];
        if (k == TL_K_CPU_OP || tl_kind_is_runtime(k) || k == TL_K_PYTHON) rows[m++] = (uint32_t)i;
    }
    sort_by_ts(b->ts.v, rows, m);

    imap threads;
    imap_init(&threads, 64);
    TL_VEC(nest_stack) plain = {0}, py = {0}; /* per thread, by the map's index */
    uint64_t last_key = 0;
    int64_t last_slot = -1;
    for (size_t r = 0; r < m; r++) {
        uint32_t e = rows[r];
        uint64_t k = key3(b->pid.v[e], b->tid.v[e], b->idflags.v[e], 0);
        int64_t t = last_slot;
        if (t < 0 || k != last_key) { /* runs of one thread are common */
            int32_t *slot = imap_slot(&threads, k, 1);
            if (*slot < 0) {
                nest_stack s0 = {0};
                tl_vec_push(&plain, s0);
                tl_vec_push(&py, s0);
                *slot = (int32_t)plain.n - 1;
            }
            t = last_slot = *slot;
            last_key = k;
        }
        /* t_end = ts + dur in µs doubles, computed once (§3.2) */
        double ts = (double)b->ts.v[e] / 1000.0, te = ts + (double)b->dur.v[e] / 1000.0;
        nest_one(&py.v[t], e, ts, te, parent_py);
        if (b->kind.v[e] != TL_K_PYTHON) nest_one(&plain.v[t], e, ts, te, parent);
    }
    for (size_t i = 0; i < plain.n; i++) {
        tl_vec_free(&plain.v[i].st);
        tl_vec_free(&py.v[i].st);
    }
    tl_vec_free(&plain);
    tl_vec_free(&py);
    imap_free(&threads);
    free(rows);
}

void tl_build_set_threads(tl_build *b, int n) { b->threads = n; }

static void *nest_thread(void *arg)
{
    tl_build *b = arg;
    nest(b, b->parent, b->parent_py);
    return NULL;
}

static void link_gpu(tl_build *b, uint32_t ac2g);

int tl_build_tree(tl_build *b, tl_err *err)
{
    (void)err;
    size_t n = b->n;
    b->parent = tl_xmalloc((n ? n : 1) * sizeof *b->parent);
    b->parent_py = tl_xmalloc((n ? n : 1) * sizeof *b->parent_py);
    b->launcher = tl_xmalloc((n ? n : 1) * sizeof *b->launcher);
    b->linked = tl_xcalloc(n ? n : 1, 1);
    for (size_t i = 0; i < n; i++) b->parent[i] = b->parent_py[i] = b->launcher[i] = -1;
    if (!n) return TL_OK;

    /* The host nesting (§4.2) and the GPU linking (§4.3) write different
     * rows of parent/parent_py (host events; GPU events) and otherwise only
     * read the columns, so they run side by side; the names they intern
     * are interned first (the dictionary is not shared safely). */
    uint32_t ac2g = tl_build_str(b, "ac2g", 4);
    uint32_t exec_id = tl_build_str(b, "execute", 7);
    pthread_t th;
    int threaded = 0;
    if (strcmp(b->format, "kineto") == 0) {
        threaded = n >= 16384 && b->threads != 1 && pthread_create(&th, NULL, nest_thread, b) == 0;
        if (!threaded) nest(b, b->parent, b->parent_py);
    }
    link_gpu(b, ac2g);
    if (threaded) pthread_join(th, NULL);

    /* §4.4 launcher attribution (default tree: python functions excluded) */
    /* comm classification once per distinct name: 0 unknown, 1 no, 2 yes */
    uint8_t *comm = tl_xcalloc(b->soff.n + 1, 1);
    for (size_t k = 0; k < n; k++) {
        if (!tl_kind_is_gpu(b->kind.v[k]) || !b->linked[k]) continue;
        uint32_t nm_id = b->name.v[k];
        if (!comm[nm_id]) {
            size_t nl;
            const char *nm = tl_build_strget(b, nm_id, &nl);
            comm[nm_id] = tl_is_comm_kernel_name(nm, nl) ? 2 : 1;
        }
        if (comm[nm_id] == 2) continue;
        int32_t r = b->parent[k];
        if (r < 0) continue;
        int32_t l = r;
        for (int32_t a = b->parent[r]; a >= 0; a = b->parent[a]) {
            uint8_t ak = b->kind.v[a];
            if (ak == TL_K_CPU_OP) {
                if (b->name.v[a] == exec_id) continue;
                l = a;
                break;
            }
            if (ak == TL_K_PYTHON) continue;
            break;
        }
        b->launcher[k] = l;
    }
    free(comm);
    return TL_OK;
}

/* §3.3-§4.3: GPU events linked to their runtime calls (parent, parent_py
 * and linked of GPU rows only). */
static void link_gpu(tl_build *b, uint32_t ac2g)
{
    size_t n = b->n;
    /* §3.3 linking key */
    int use_ext = 0;
    for (size_t i = 0; i < n; i++) {
        if (tl_kind_is_runtime(b->kind.v[i]) && name_has_launch(b, b->name.v[i])) {
            use_ext = b->corr.v[i] == TL_NONE;
            break;
        }
    }
    const int64_t *key = use_ext ? b->ext_id.v : b->corr.v;

    /* §3.4 indexes, each map sized by the keys it will hold */
    size_t nflow_s = 0, nflow_f = 0, ngpu_keyed = 0;
    for (size_t f = 0; f < b->nflows; f++) {
        if (b->f_cat.v[f] != ac2g) continue;
        nflow_s += b->f_ph.v[f] == 's';
        nflow_f += b->f_ph.v[f] == 'f';
    }
    for (size_t i = 0; i < n; i++) ngpu_keyed += key[i] != TL_NONE && tl_kind_is_gpu(b->kind.v[i]);
    imap fstart, fend, by_ptl, gpu_first;
    imap_init(&fstart, nflow_s);
    imap_init(&fend, nflow_f);
    imap_init(&by_ptl, ngpu_keyed);
    imap_init(&gpu_first, ngpu_keyed);
    for (size_t f = 0; f < b->nflows; f++) {
        if (b->f_cat.v[f] != ac2g) continue;
        if (b->f_ph.v[f] == 's') *imap_slot(&fstart, (uint64_t)b->f_id.v[f], 1) = (int32_t)f;
        else if (b->f_ph.v[f] == 'f') *imap_slot(&fend, (uint64_t)b->f_id.v[f], 1) = (int32_t)f;
    }
    /* by_ptl: (pid, tid, link) -> the last event in UID order with that
     * key, as the reference's dict; the lookup below wants a GPU event
     * there. Only GPU events create entries (a key no GPU event has
     * fails the lookup either way); any later event overwrites one, so a
     * key whose last event is not a GPU event still fails as before. */
    /* GPU events by link value, UID order: first index + next chain. */
    int32_t *gpu_next = tl_xmalloc(n * sizeof *gpu_next);
    int32_t *gpu_last = tl_xmalloc(n * sizeof *gpu_last);
    for (size_t i = 0; i < n; i++) {
        gpu_next[i] = -1;
        if (key[i] == TL_NONE) continue;
        int gpu = tl_kind_is_gpu(b->kind.v[i]);
        int32_t *p = imap_slot(&by_ptl, key3(b->pid.v[i], b->tid.v[i], b->idflags.v[i], key[i]), gpu);
        if (p) *p = (int32_t)i;
        if (gpu) {
            int32_t *s = imap_slot(&gpu_first, (uint64_t)key[i], 1);
            if (*s < 0) *s = (int32_t)i;
            else gpu_next[gpu_last[*s]] = (int32_t)i;
            gpu_last[*s] = (int32_t)i;
        }
    }
    /* Without any ac2g start flow, link by correlation alone (beyond the
     * reference, which then finds no GPU events). */
    int by_corr = nflow_s == 0;

    /* §4.3 runtime -> GPU */
    for (size_t r = 0; r < n; r++) {
        if (!tl_kind_is_runtime(b->kind.v[r]) || key[r] == TL_NONE) continue;
        int graph = name_is(b, b->name.v[r], "cudaGraphLaunch") || name_is(b, b->name.v[r], "hipGraphLaunch");
        if (graph || by_corr) {
            int32_t *s = imap_slot(&gpu_first, (uint64_t)key[r], 0);
            for (int32_t g = s ? *s : -1; g >= 0; g = gpu_next[g]) {
                if (by_corr && !graph && b->linked[g]) continue;
                b->parent[g] = b->parent_py[g] = (int32_t)r;
                b->linked[g] = 1;
            }
            continue;
        }
        int32_t *fs = imap_slot(&fstart, (uint64_t)key[r], 0);
        int32_t *fe = imap_slot(&fend, (uint64_t)key[r], 0);
        if (!fs || !fe) continue;
        size_t f = (size_t)*fe;
        int32_t *g = imap_slot(&by_ptl, key3(b->f_pid.v[f], b->f_tid.v[f], b->f_idflags.v[f], key[r]), 0);
        if (!g || !tl_kind_is_gpu(b->kind.v[*g])) continue;
        b->parent[*g] = b->parent_py[*g] = (int32_t)r;
        b->linked[*g] = 1;
    }

    free(gpu_next);
    free(gpu_last);
    imap_free(&fstart);
    imap_free(&fend);
    imap_free(&by_ptl);
    imap_free(&gpu_first);
}
