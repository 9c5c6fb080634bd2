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

#include <stdlib.h>
#include <string.h>

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
        *ts = tl_ns_us(b->n_ts.v[e]);
        *dur = tl_ns_us(tl_build_dur(b, e));
    }
}

/* The sort key of a row's ts without sub_ns rows: below 2^43 µs (small),
 * where distinct ns stay distinct doubles, the ns themselves, else the
 * reference's µs double; both mapped to an order-preserving u64. */
static inline uint64_t ts_key(const int64_t *ts, uint32_t row, int small)
{
    if (small) return (uint64_t)ts[row] ^ 0x8000000000000000ULL;
    double d = tl_ns_us(ts[row]) + 0.0; /* -0.0 as 0.0 */
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return u >> 63 ? ~u : u | 0x8000000000000000ULL;
}

static int cmp_row(const void *x, const void *y)
{
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    return (a > b) - (a < b);
}

/* In-place MSD radix sort of rows by (ts_key - base), byte `shift` down,
 * then rows of equal keys in row order: the order a stable sort of rows
 * given in row order gives, without the copies of keys and rows an LSD
 * radix sort takes (they would add 20 bytes per row of the largest
 * thread to the ingest's peak). */
static void msd_sort(const int64_t *ts, int small, uint64_t base, uint32_t *rows, size_t n, int shift)
{
#define DIGIT(r) ((size_t)(((ts_key(ts, (r), small) - base) >> shift) & 255))
    if (n <= 32) { /* insertion sort by (key, row) */
        for (size_t i = 1; i < n; i++) {
            uint32_t r = rows[i];
            uint64_t k = ts_key(ts, r, small);
            size_t j = i;
            for (; j > 0; j--) {
                uint64_t kj = ts_key(ts, rows[j - 1], small);
                if (kj < k || (kj == k && rows[j - 1] < r)) break;
                rows[j] = rows[j - 1];
            }
            rows[j] = r;
        }
        return;
    }
    size_t count[256] = {0}, next[256], end[256];
    for (size_t i = 0; i < n; i++) count[DIGIT(rows[i])]++;
    size_t at = 0;
    for (int d = 0; d < 256; d++) next[d] = at, at += count[d], end[d] = at;
    for (int d = 0; d < 256; d++) {
        while (next[d] < end[d]) { /* cycle the row at next[d] to its bucket */
            uint32_t r = rows[next[d]];
            size_t dd;
            while ((dd = DIGIT(r)) != (size_t)d) {
                uint32_t t = rows[next[dd]];
                rows[next[dd]++] = r;
                r = t;
            }
            rows[next[d]++] = r;
        }
    }
#undef DIGIT
    at = 0;
    for (int d = 0; d < 256; at += count[d], d++) {
        if (count[d] < 2) continue;
        if (shift) msd_sort(ts, small, base, rows + at, count[d], shift - 8);
        else qsort(rows + at, count[d], sizeof *rows, cmp_row); /* equal keys: row order */
    }
}

/* Stable sort of rows (given in row order) by ts as the reference's µs
 * doubles (times a few ns apart tie at epoch scale and keep UID order).
 * Without sub_ns rows, rows in ns order are in that order too and are
 * left as they are, and below 2^43 µs, where distinct ns stay distinct
 * doubles, the ns are the key. */
static void sort_by_ts(const tl_build *b, uint32_t *rows, size_t n)
{
    const int64_t *ts = b->n_ts.v;
    const uint64_t lim = (uint64_t)1000 << 43; /* ns */
    int sorted = !b->sub_row.n, small = !b->sub_row.n;
    for (size_t i = 1; i < n && sorted; i++)
        if (ts[rows[i]] < ts[rows[i - 1]]) sorted = 0;
    if (sorted) return;
    for (size_t i = 0; i < n && small; i++) small = (uint64_t)ts[rows[i]] + lim < 2 * lim;
    if (!b->sub_row.n) {
        uint64_t mn = UINT64_MAX, mx = 0;
        for (size_t i = 0; i < n; i++) {
            uint64_t k = ts_key(ts, rows[i], small);
            if (k < mn) mn = k;
            if (k > mx) mx = k;
        }
        if (mx == mn) return; /* all keys equal: stable order is the order */
        int bits = 64 - __builtin_clzll(mx - mn);
        msd_sort(ts, small, mn, rows, n, (bits - 1) / 8 * 8);
        return;
    }
    uint64_t *k = tl_xmalloc(n * sizeof *k);
    for (size_t i = 0; i < n; i++) {
        double d, dur;
        times_us(b, rows[i], &d, &dur);
        d += 0.0; /* -0.0 as 0.0 */
        uint64_t u;
        memcpy(&u, &d, sizeof u);
        k[i] = u >> 63 ? ~u : u | 0x8000000000000000ULL; /* order-preserving */
    }
    tl_radix_sort_rows(rows, k, n);
    free(k);
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
    size_t n = b->n, nt = b->nthreads;
    size_t *start = tl_xcalloc(nt + 1, sizeof *start);
    for (size_t i = 0; i < n; i++) {
        uint8_t k = b->cls.v[i] & CLS_KIND;
        if (k == TL_K_CPU_OP || tl_kind_is_runtime(k) || k == TL_K_PYTHON) start[b->thr.v[i] + 1]++;
    }
    /* stable bucketing by thread: start[t] .. start[t + 1] */
    for (size_t t = 0; t < nt; t++) start[t + 1] += start[t];
    size_t m = start[nt];
    uint32_t *by_thread = tl_xmalloc((m ? m : 1) * sizeof *by_thread);
    size_t *fill = tl_xmalloc((nt ? nt : 1) * sizeof *fill);
    memcpy(fill, start, nt * sizeof *fill);
    for (size_t i = 0; i < n; i++) {
        uint8_t k = b->cls.v[i] & CLS_KIND;
        if (k == TL_K_CPU_OP || tl_kind_is_runtime(k) || k == TL_K_PYTHON) by_thread[fill[b->thr.v[i]]++] = (uint32_t)i;
    }
    free(fill);

    nest_stack plain = {0}, py = {0};
    for (size_t t = 0; t < nt; t++) {
        uint32_t *tr = by_thread + start[t];
        size_t tn = start[t + 1] - start[t];
        sort_by_ts(b, tr, tn);
        plain.st.n = py.st.n = 0;
        for (size_t r = 0; r < tn; r++) {
            uint32_t e = tr[r];
            /* t_end = ts + dur in µs doubles, computed once (§3.2) */
            double ts, dur;
            if (b->sub_row.n) times_us(b, e, &ts, &dur);
            else ts = tl_ns_us(b->n_ts.v[e]), dur = tl_ns_us(tl_build_dur(b, e));
            double te = ts + dur;
            nest_one(&py, e, ts, te, parent_py);
            if ((b->cls.v[e] & CLS_KIND) != TL_K_PYTHON) nest_one(&plain, e, ts, te, parent);
        }
    }
    tl_vec_free(&plain.st);
    tl_vec_free(&py.st);
    free(start);
    free(by_thread);
}

static void link_gpu(tl_build *b);

void tl_build_pin_parent(tl_build *b, uint32_t row, int32_t parent, int32_t parent_py)
{
    tl_vec_push(&b->pin_row, (int32_t)row);
    tl_vec_push(&b->pin_parent, parent);
    tl_vec_push(&b->pin_parent_py, parent_py);
}

/* The pinned parents (tl_build_pin_parent) over the nesting's. */
static void apply_pins(tl_build *b)
{
    for (size_t i = 0; i < b->pin_row.n; i++) {
        b->parent[b->pin_row.v[i]] = b->pin_parent.v[i];
        b->parent_py[b->pin_row.v[i]] = b->pin_parent_py.v[i];
    }
}

/* §4.4 launcher attribution (default tree: python functions excluded).
 * §5.1: communication kernels never get a launcher. */
static void attribute_launchers(tl_build *b)
{
    for (size_t k = 0; k < b->n; k++) {
        uint8_t c = b->cls.v[k];
        if (!tl_kind_is_gpu(c & CLS_KIND) || !b->linked[k] || (c & CLS_COMM)) continue;
        int32_t r = b->parent[k];
        if (r < 0) continue;
        int32_t l = r;
        for (int32_t a = b->parent[r]; a >= 0; a = b->parent[a]) {
            uint8_t ac = b->cls.v[a], ak = ac & CLS_KIND;
            if (ak == TL_K_CPU_OP) {
                if (ac & CLS_EXEC) continue;
                l = a;
                break;
            }
            if (ak == TL_K_PYTHON) continue;
            break;
        }
        b->launcher[k] = l;
    }
}

/* The GPU linking (§4.3), then, with its indexes freed, the host nesting
 * (§4.2) and the pinned parents over it, then the launchers: one after the other, so that their working
 * sets do not add up. The linking writes GPU rows of parent, the nesting
 * host rows of parent and parent_py. */
int tl_build_tree(tl_build *b, tl_err *err)
{
    (void)err;
    size_t n = b->n;
    b->parent = tl_xmalloc((n ? n : 1) * sizeof *b->parent);
    b->linked = tl_xcalloc(n ? n : 1, 1);
    for (size_t i = 0; i < n; i++) b->parent[i] = -1;
    if (n) {
        /* interned as the stored dictionary has always had them */
        (void)tl_build_str(b, "ac2g", 4);
        (void)tl_build_str(b, "execute", 7);
        link_gpu(b);
    }
    /* GPU rows have the same parent in both trees; the nesting sets the
     * host rows of each */
    b->parent_py = tl_xmalloc((n ? n : 1) * sizeof *b->parent_py);
    if (n) memcpy(b->parent_py, b->parent, n * sizeof *b->parent_py);
    if (n && strcmp(b->format, "kineto") == 0) nest(b, b->parent, b->parent_py);
    apply_pins(b);
    tl_build_times_free(b);
    b->launcher = tl_xmalloc((n ? n : 1) * sizeof *b->launcher);
    for (size_t i = 0; i < n; i++) b->launcher[i] = -1;
    if (n) attribute_launchers(b);
    tl_vec_free(&b->cls);
    tl_vec_free(&b->thr);
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

/* §3.3-§4.3: GPU events linked to their runtime calls (parent and linked
 * of GPU rows only), through the rows with a link value
 * (b->kc_* or b->ke_*, in row order). */
static void link_gpu(tl_build *b)
{
    /* §3.3 linking key */
    int use_ext = b->key_mode == 2;
    size_t nk = use_ext ? b->ke_row.n : b->kc_row.n;
    const uint32_t *krow = use_ext ? b->ke_row.v : b->kc_row.v;
    const int64_t *kval = use_ext ? b->ke_val.v : b->kc_val.v;
    const uint8_t *cls = b->cls.v;

    /* §3.4 indexes, each sized by the values it will hold: the last ac2g
     * start and end flow per id, and every keyed event in a chain per
     * link value (row order: first record + next). */
    size_t nflow_s = 0, nflow_f = 0, na = b->a_id.n;
    int64_t flo = INT64_MAX, fhi = INT64_MIN, klo = INT64_MAX, khi = INT64_MIN;
    for (size_t f = 0; f < na; f++) {
        nflow_s += b->a_ph.v[f] == 's';
        nflow_f += b->a_ph.v[f] == 'f';
        int64_t v = b->a_id.v[f];
        if (v < flo) flo = v;
        if (v > fhi) fhi = v;
    }
    for (size_t j = 0; j < nk; j++) {
        if (kval[j] < klo) klo = kval[j];
        if (kval[j] > khi) khi = kval[j];
    }
    keyidx fstart, fend, first;
    keyidx_init(&fstart, flo, fhi, nflow_s);
    keyidx_init(&fend, flo, fhi, nflow_f);
    keyidx_init(&first, klo, khi, nk);
    for (size_t f = 0; f < na; f++) {
        if (b->a_ph.v[f] == 's') keyidx_set(&fstart, b->a_id.v[f], (int32_t)f, 0);
        else keyidx_set(&fend, b->a_id.v[f], (int32_t)f, 0);
    }
    int32_t *next = tl_xmalloc((nk ? nk : 1) * sizeof *next);
    int32_t *last = tl_xmalloc((nk ? nk : 1) * sizeof *last); /* of a chain, at its first record */
    for (size_t j = 0; j < nk; j++) {
        next[j] = -1;
        int32_t head = keyidx_set(&first, kval[j], (int32_t)j, 1);
        if (head < 0) head = (int32_t)j;
        else next[last[head]] = (int32_t)j;
        last[head] = (int32_t)j;
    }
    /* Without any ac2g start flow, link by correlation alone (beyond the
     * reference, which then finds no GPU events). */
    int by_corr = nflow_s == 0;

    /* §4.3 runtime -> GPU */
    for (size_t j = 0; j < nk; j++) {
        int32_t r = (int32_t)krow[j];
        if (!tl_kind_is_runtime(cls[r] & CLS_KIND)) continue;
        int graph = (cls[r] & CLS_GRAPH) != 0;
        int32_t g0 = keyidx_get(&first, kval[j]); /* r's record is in this chain */
        if (graph || by_corr) {
            for (int32_t g = g0; g >= 0; g = next[g]) {
                uint32_t e = krow[g];
                if (!tl_kind_is_gpu(cls[e] & CLS_KIND)) continue;
                if (by_corr && !graph && b->linked[e]) continue;
                b->parent[e] = r;
                b->linked[e] = 1;
            }
            continue;
        }
        if (keyidx_get(&fstart, kval[j]) < 0) continue;
        int32_t fe = keyidx_get(&fend, kval[j]);
        if (fe < 0) continue;
        /* The reference's (pid, tid, link) dict holds the last event in
         * row order with the flow end's pid and tid; only a GPU event
         * there is linked. That depends on the link value alone, so it is
         * looked up once per chain and kept in last[] of the chain's
         * first record as -2 - row (records there, >= 0, mean not yet):
         * runtime calls sharing a value cost one walk. */
        if (last[g0] >= 0) {
            uint32_t t = b->a_thr.v[fe];
            int32_t hit = -1;
            for (int32_t g = g0; g >= 0; g = next[g])
                if (b->thr.v[krow[g]] == t) hit = (int32_t)krow[g];
            last[g0] = -2 - hit;
        }
        int32_t hit = -2 - last[g0];
        if (hit < 0 || !tl_kind_is_gpu(cls[hit] & CLS_KIND)) continue;
        b->parent[hit] = r;
        b->linked[hit] = 1;
    }

    free(next);
    free(last);
    keyidx_free(&fstart);
    keyidx_free(&fend);
    keyidx_free(&first);
    tl_vec_free(&b->kc_row); tl_vec_free(&b->kc_val); tl_vec_free(&b->ke_row); tl_vec_free(&b->ke_val);
    tl_vec_free(&b->a_id); tl_vec_free(&b->a_thr); tl_vec_free(&b->a_ph);
}
