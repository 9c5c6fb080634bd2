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
#include "ingest/builder_internal.h"

#include <ctype.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* A (pid, tid) as one hashable value (string ids kept apart by flags). */
static uint64_t thread_key(int64_t pid, int64_t tid, uint8_t flags)
{
    uint64_t h = tl_mix64((uint64_t)pid ^ 0x9e3779b97f4a7c15ULL);
    return tl_mix64(h ^ (uint64_t)tid ^ ((uint64_t)(flags & 3) << 62));
}

/* Index of row e in the sub_ns rows (ascending), -1 when not there. */
static ptrdiff_t sub_ns_index(const tl_build *b, uint32_t e)
{
    size_t lo = 0, hi = b->sub_row.n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (b->sub_row.v[mid] < e) lo = mid + 1;
        else hi = mid;
    }
    return lo < b->sub_row.n && b->sub_row.v[lo] == e ? (ptrdiff_t)lo : -1;
}

/* Row e's ts and duration as the reference's µs doubles. */
static void times_us(const tl_build *b, uint32_t e, double *ts, double *dur)
{
    ptrdiff_t k = b->sub_row.n ? sub_ns_index(b, e) : -1;
    if (k >= 0) {
        *ts = b->sub_ts.v[k];
        *dur = b->sub_dur.v[k];
    } else {
        *ts = tl_ns_us(b->ts.v[e]);
        *dur = tl_ns_us(b->dur.v[e]);
    }
}

/* Stable sort of rows by ts as the reference's µs doubles (times a few
 * ns apart tie at epoch scale and keep UID order). Without sub_ns rows,
 * rows in ns order are in that order too and are left as they are, and
 * below 2^43 µs, where distinct ns stay distinct doubles, the ns are the
 * key. */
static void sort_by_ts(const tl_build *b, uint32_t *rows, size_t n)
{
    const int64_t *ts = b->ts.v;
    const uint64_t lim = (uint64_t)1000 << 43; /* ns */
    int sorted = !b->sub_row.n, small = !b->sub_row.n;
    for (size_t i = 1; i < n && sorted; i++)
        if (ts[rows[i]] < ts[rows[i - 1]]) sorted = 0;
    if (sorted) return;
    for (size_t i = 0; i < n && small; i++) small = (uint64_t)ts[rows[i]] + lim < 2 * lim;
    uint64_t *k = tl_xmalloc(n * sizeof *k);
    for (size_t i = 0; i < n; i++) {
        if (small) {
            k[i] = (uint64_t)ts[rows[i]] ^ 0x8000000000000000ULL; /* order-preserving */
            continue;
        }
        double d, dur;
        if (b->sub_row.n) times_us(b, rows[i], &d, &dur);
        else d = tl_ns_us(ts[rows[i]]);
        d += 0.0; /* -0.0 as 0.0 */
        uint64_t u;
        memcpy(&u, &d, sizeof u);
        k[i] = u >> 63 ? ~u : u | 0x8000000000000000ULL; /* order-preserving */
    }
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
 * functions, parent_py[] with them. The reference sorts all events by ts
 * (stably) and then walks each (pid, tid) stack; only the order within a
 * thread matters, so the rows (cpu_ops, runtime calls, python functions)
 * are bucketed by thread in UID order and each thread's rows sorted by ts
 * stably, which is the same order, and one thread's rows need no sort
 * when they come in ts order. The non-python rows of a stable
 * sort are in the order a stable sort of them alone gives, so one order
 * serves both trees. */
static void nest(tl_build *b, int32_t *parent, int32_t *parent_py)
{
    size_t n = b->n;
    uint32_t *rows = tl_xmalloc((n ? n : 1) * sizeof *rows);
    uint32_t *thr = tl_xmalloc((n ? n : 1) * sizeof *thr); /* thread index of rows[i] */
    TL_VEC(size_t) count = {0};
    tl_imap threads; /* thread_key -> thread index */
    tl_imap_init(&threads, 64);
    uint64_t last_key = 0;
    int32_t last_t = -1;
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        uint8_t k = b->kind.v[i];
        if (k != TL_K_CPU_OP && !tl_kind_is_runtime(k) && k != TL_K_PYTHON) continue;
        uint64_t key = thread_key(b->pid.v[i], b->tid.v[i], b->idflags.v[i]);
        if (last_t < 0 || key != last_key) { /* runs of one thread are common */
            int isnew;
            size_t *slot = tl_imap_put(&threads, key, &isnew);
            if (isnew) {
                *slot = count.n;
                tl_vec_push(&count, (size_t)0);
            }
            last_t = (int32_t)*slot;
            last_key = key;
        }
        count.v[last_t]++;
        rows[m] = (uint32_t)i;
        thr[m++] = (uint32_t)last_t;
    }
    tl_imap_free(&threads);

    /* stable bucketing by thread: start[t] .. start[t + 1] */
    size_t *start = tl_xmalloc((count.n + 1) * sizeof *start);
    start[0] = 0;
    for (size_t t = 0; t < count.n; t++) start[t + 1] = start[t] + count.v[t];
    uint32_t *by_thread = tl_xmalloc((m ? m : 1) * sizeof *by_thread);
    for (size_t t = 0; t < count.n; t++) count.v[t] = start[t];
    for (size_t r = 0; r < m; r++) by_thread[count.v[thr[r]]++] = rows[r];
    free(thr);
    free(rows);

    nest_stack plain = {0}, py = {0};
    for (size_t t = 0; t < count.n; t++) {
        uint32_t *tr = by_thread + start[t];
        size_t tn = start[t + 1] - start[t];
        sort_by_ts(b, tr, tn);
        plain.st.n = py.st.n = 0;
        for (size_t r = 0; r < tn; r++) {
            uint32_t e = tr[r];
            /* t_end = ts + dur in µs doubles, computed once (§3.2) */
            double ts, dur;
            if (b->sub_row.n) times_us(b, e, &ts, &dur);
            else ts = tl_ns_us(b->ts.v[e]), dur = tl_ns_us(b->dur.v[e]);
            double te = ts + dur;
            nest_one(&py, e, ts, te, parent_py);
            if (b->kind.v[e] != TL_K_PYTHON) nest_one(&plain, e, ts, te, parent);
        }
    }
    tl_vec_free(&plain.st);
    tl_vec_free(&py.st);
    tl_vec_free(&count);
    free(start);
    free(by_thread);
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
    /* §5.1: communication kernels never get a launcher; each distinct name
     * is classified once (0 unknown, 1 no, 2 yes) */
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

/* ---- link value -> row, dense when the values allow ----
 * Correlation ids, External ids and ac2g flow ids are small consecutive
 * integers in every trace we have seen, so an array indexed by value - lo
 * replaces the hash map there: hashing them was two thirds of the tree
 * build (a 1 GB trace: imap lookups 0.15 s of CPU, cache misses all).
 * Values spread wider fall back to a tl_imap. */
typedef struct keyidx {
    int64_t lo;
    uint64_t span;  /* dense: values lo .. lo + span - 1 */
    int32_t *dense; /* NULL: sparse */
    tl_imap sparse;
} keyidx;

static void keyidx_init(keyidx *x, int64_t lo, int64_t hi, size_t nkeys)
{
    memset(x, 0, sizeof *x);
    uint64_t span = nkeys ? (uint64_t)hi - (uint64_t)lo + 1 : 0;
    if (nkeys && span && span <= 4 * (uint64_t)nkeys + 4096) {
        x->lo = lo;
        x->span = span;
        x->dense = tl_xmalloc(span * sizeof *x->dense);
        memset(x->dense, 0xff, span * sizeof *x->dense); /* -1: absent */
    } else {
        tl_imap_init(&x->sparse, nkeys);
    }
}

/* The row of value v, -1 when absent. */
static int32_t keyidx_get(const keyidx *x, int64_t v)
{
    if (!x->dense) {
        const size_t *r = tl_imap_get(&x->sparse, (uint64_t)v);
        return r ? (int32_t)*r : -1;
    }
    uint64_t o = (uint64_t)v - (uint64_t)x->lo;
    return o < x->span ? x->dense[o] : -1;
}

/* Sets the row of v (v within the range given to keyidx_init); with
 * keep_first, only when v has none. Returns the row v had, or -1. */
static int32_t keyidx_set(keyidx *x, int64_t v, int32_t row, int keep_first)
{
    int32_t old;
    if (!x->dense) {
        int isnew;
        size_t *r = tl_imap_put(&x->sparse, (uint64_t)v, &isnew);
        old = isnew ? -1 : (int32_t)*r;
        if (isnew || !keep_first) *r = (size_t)row;
        return old;
    }
    int32_t *d = &x->dense[(uint64_t)v - (uint64_t)x->lo];
    old = *d;
    if (old < 0 || !keep_first) *d = row;
    return old;
}

static void keyidx_free(keyidx *x)
{
    if (x->dense) free(x->dense);
    else tl_imap_free(&x->sparse);
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

    /* §3.4 indexes, each sized by the values it will hold: the last ac2g
     * start and end flow per id, and every keyed event in a chain per
     * link value (UID order: first row + next). */
    size_t nflow_s = 0, nflow_f = 0, nkeyed = 0;
    int64_t flo = INT64_MAX, fhi = INT64_MIN, klo = INT64_MAX, khi = INT64_MIN;
    for (size_t f = 0; f < b->nflows; f++) {
        if (b->f_cat.v[f] != ac2g || (b->f_ph.v[f] != 's' && b->f_ph.v[f] != 'f')) continue;
        nflow_s += b->f_ph.v[f] == 's';
        nflow_f += b->f_ph.v[f] == 'f';
        int64_t v = b->f_id.v[f];
        if (v < flo) flo = v;
        if (v > fhi) fhi = v;
    }
    for (size_t i = 0; i < n; i++) {
        int64_t v = key[i];
        if (v == TL_NONE) continue;
        nkeyed++;
        if (v < klo) klo = v;
        if (v > khi) khi = v;
    }
    keyidx fstart, fend, first;
    keyidx_init(&fstart, flo, fhi, nflow_s);
    keyidx_init(&fend, flo, fhi, nflow_f);
    keyidx_init(&first, klo, khi, nkeyed);
    for (size_t f = 0; f < b->nflows; f++) {
        if (b->f_cat.v[f] != ac2g) continue;
        if (b->f_ph.v[f] == 's') keyidx_set(&fstart, b->f_id.v[f], (int32_t)f, 0);
        else if (b->f_ph.v[f] == 'f') keyidx_set(&fend, b->f_id.v[f], (int32_t)f, 0);
    }
    int32_t *next = tl_xmalloc((n ? n : 1) * sizeof *next);
    int32_t *last = tl_xmalloc((n ? n : 1) * sizeof *last); /* of a chain, at its first row */
    for (size_t i = 0; i < n; i++) {
        next[i] = -1;
        if (key[i] == TL_NONE) continue;
        int32_t head = keyidx_set(&first, key[i], (int32_t)i, 1);
        if (head < 0) head = (int32_t)i;
        else next[last[head]] = (int32_t)i;
        last[head] = (int32_t)i;
    }
    /* Without any ac2g start flow, link by correlation alone (beyond the
     * reference, which then finds no GPU events). */
    int by_corr = nflow_s == 0;

    /* §4.3 runtime -> GPU */
    for (size_t r = 0; r < n; r++) {
        if (!tl_kind_is_runtime(b->kind.v[r]) || key[r] == TL_NONE) continue;
        int graph = name_is(b, b->name.v[r], "cudaGraphLaunch") || name_is(b, b->name.v[r], "hipGraphLaunch");
        int32_t g0 = keyidx_get(&first, key[r]); /* >= 0: r is in its own chain */
        if (graph || by_corr) {
            for (int32_t g = g0; g >= 0; g = next[g]) {
                if (!tl_kind_is_gpu(b->kind.v[g])) continue;
                if (by_corr && !graph && b->linked[g]) continue;
                b->parent[g] = b->parent_py[g] = (int32_t)r;
                b->linked[g] = 1;
            }
            continue;
        }
        if (keyidx_get(&fstart, key[r]) < 0) continue;
        int32_t fe = keyidx_get(&fend, key[r]);
        if (fe < 0) continue;
        /* The reference's (pid, tid, link) dict holds the last event in
         * UID order with the flow end's pid and tid; only a GPU event
         * there is linked. That depends on the link value alone, so it is
         * looked up once per chain and kept in last[] of the chain's
         * first row as -2 - hit (rows there, >= 0, mean not yet): runtime
         * calls sharing a value cost one walk. */
        if (last[g0] >= 0) {
            int64_t pid = b->f_pid.v[fe], tid = b->f_tid.v[fe];
            uint8_t fl = b->f_idflags.v[fe] & 3;
            int32_t hit = -1;
            for (int32_t e = g0; e >= 0; e = next[e])
                if (b->pid.v[e] == pid && b->tid.v[e] == tid && (b->idflags.v[e] & 3) == fl) hit = e;
            last[g0] = -2 - hit;
        }
        int32_t hit = -2 - last[g0];
        if (hit < 0 || !tl_kind_is_gpu(b->kind.v[hit])) continue;
        b->parent[hit] = b->parent_py[hit] = (int32_t)r;
        b->linked[hit] = 1;
    }

    free(next);
    free(last);
    keyidx_free(&fstart);
    keyidx_free(&fend);
    keyidx_free(&first);
}
