/* tracediff.c — TraceDiff core (spec diff-compare-phases.md A1-A5): the
 * per-trace tree view over the stored columns, name normalisation, the
 * recursive merge with its four alignment phases, the UID map, the
 * merged-tree printer and the entry points, which run the merge and then
 * the report tables (A6-A8) of tracediff_stats.c; both share the private
 * state declared in tracediff_internal.h. */
#include "query/diff/tracediff_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------
 * Interned strings: normalised names of both traces share one id space so
 * that every name comparison in the alignment is an integer compare. */

int32_t td_intern(td_strtab *st, const char *s, size_t n)
{
    size_t *id = tl_smap_get(&st->ids, s, n);
    if (id) return (int32_t)*id;
    char *copy = tl_arena_strndup(&st->arena, s, n);
    *tl_smap_put(&st->ids, copy, n, NULL) = st->strs.n;
    tl_vec_push(&st->strs, copy);
    return (int32_t)st->strs.n - 1;
}

static void strtab_free(td_strtab *st)
{
    tl_smap_free(&st->ids);
    tl_vec_free(&st->strs);
    tl_arena_free(&st->arena);
}

/* ---------------------------------------------------------------------------
 * A2 name normalisation. */

static int is_hex(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
static int is_ws(unsigned char c) { return c == ' ' || (c >= '\t' && c <= '\r') || c == 0x1c || c == 0x1d || c == 0x1e || c == 0x1f; }

void tl_diff_norm_name(const char *s, int strip, tl_buf *out)
{
    size_t n = strlen(s);
    out->n = 0;
    /* 1. 0x<hex>+ -> 0xXXXX */
    tl_buf a = {0};
    for (size_t i = 0; i < n;) {
        if (s[i] == '0' && i + 2 < n && s[i + 1] == 'x' && is_hex(s[i + 2])) {
            tl_buf_append(&a, "0xXXXX", 6);
            i += 2;
            while (i < n && is_hex(s[i])) i++;
            continue;
        }
        tl_buf_putc(&a, s[i++]);
    }
    /* 2. .py(<digits>): -> .py: */
    tl_buf b = {0};
    for (size_t i = 0; i < a.n;) {
        if (i + 4 <= a.n && memcmp(a.p + i, ".py(", 4) == 0) {
            size_t j = i + 4;
            while (j < a.n && a.p[j] >= '0' && a.p[j] <= '9') j++;
            if (j > i + 4 && j + 1 < a.n && a.p[j] == ')' && a.p[j + 1] == ':') {
                tl_buf_append(&b, ".py:", 4);
                i = j + 2;
                continue;
            }
        }
        tl_buf_putc(&b, a.p[i++]);
    }
    tl_buf_free(&a);
    const char *p = b.p ? b.p : "";
    size_t len = b.n;
    /* 3. strip: ":" + whitespace+ + non-whitespace+ at the very end, then a
     *    .py path keeps its last component. */
    if (strip) {
        size_t q = len;
        while (q > 0 && !is_ws((unsigned char)p[q - 1])) q--;   /* start of the final token */
        if (q < len && q > 0) {
            size_t w = q;
            while (w > 0 && is_ws((unsigned char)p[w - 1])) w--; /* start of the blank run */
            if (w < q && w > 0 && p[w - 1] == ':') len = w - 1;
        }
        if (len >= 3 && memcmp(p + len - 3, ".py", 3) == 0 && memchr(p, '/', len)) {
            size_t k = len;
            while (k > 0 && p[k - 1] != '/') k--;
            p += k;
            len -= k;
        }
    }
    /* 4. the two module-launch names are one */
    if ((len == 21 && memcmp(p, "hipModuleLaunchKernel", 21) == 0) ||
        (len == 14 && memcmp(p, "cuLaunchKernel", 14) == 0)) {
        p = "__kernel_launch__";
        len = 17;
    }
    tl_buf_append(out, p, len);
    tl_buf_putc(out, 0);
    out->n--;
    tl_buf_free(&b);
}

int32_t td_norm(tl_diff *d, const td_side *s_, int32_t r, int strip)
{
    td_side *s = (td_side *)s_;
    uint32_t sid = s->t->name[r];
    const char *nm = tl_trace_str(s->t, sid);
    int empty = !nm || !*nm;
    if (!empty && sid < s->dict_n && s->nrm[strip][sid] >= 0) return s->nrm[strip][sid];
    char buf[24];
    tl_diff_norm_name(td_name(s, r, buf), strip, &d->tmp);
    int32_t id = td_intern(&d->names, d->tmp.p, d->tmp.n);
    if (!empty && sid < s->dict_n) s->nrm[strip][sid] = id;
    return id;
}

/* ---------------------------------------------------------------------------
 * The tree view of one trace (A1). */

/* by the µs doubles (ties keep row order, as the reference's stable sort) */
static int cmp_ts_row(const void *a, const void *b, void *ctx)
{
    const double *ts = ctx;
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    if (ts[x] != ts[y]) return ts[x] < ts[y] ? -1 : 1;
    return x < y ? -1 : x > y;
}

static int name_eq(const tl_trace *t, int32_t r, const char *lit)
{
    const char *s = tl_trace_str(t, t->name[r]);
    return s && strcmp(s, lit) == 0;
}

/* gpu_events (A1): for each runtime call in file order, its GPU events are
 * appended to it and to every ancestor; a node with any, or a GPU event
 * itself, is on the GPU path (TD_ON). */
static void side_gpu_events(td_side *s)
{
    const tl_trace *t = s->t;
    size_t n = s->n;
    s->nge = tl_xcalloc(n ? n : 1, sizeof *s->nge);
    s->ge = tl_xcalloc(n ? n : 1, sizeof *s->ge);
    size_t gtotal = 0;
    for (size_t r = 0; r < n; r++) {
        if (!tl_kind_is_runtime(t->kind[r])) continue;
        for (uint32_t c = 0; c < s->nkids[r]; c++) {
            int32_t g = s->kids[r][c];
            if (!(s->fl[g] & TD_GPU)) continue;
            for (int32_t a = (int32_t)r; a >= 0; a = s->parent[a]) { s->nge[a]++; gtotal++; }
        }
    }
    s->gpool = tl_xmalloc((gtotal ? gtotal : 1) * sizeof *s->gpool);
    size_t off = 0;
    for (size_t i = 0; i < n; i++) { s->ge[i] = s->gpool + off; off += s->nge[i]; }
    uint32_t *gf = tl_xcalloc(n ? n : 1, sizeof *gf);
    for (size_t r = 0; r < n; r++) {
        if (!tl_kind_is_runtime(t->kind[r])) continue;
        for (uint32_t c = 0; c < s->nkids[r]; c++) {
            int32_t g = s->kids[r][c];
            if (!(s->fl[g] & TD_GPU)) continue;
            for (int32_t a = (int32_t)r; a >= 0; a = s->parent[a]) ((int32_t *)s->ge[a])[gf[a]++] = g;
        }
    }
    free(gf);
    for (size_t i = 0; i < n; i++)
        if ((s->fl[i] & TD_GPU) || s->nge[i]) s->fl[i] |= TD_ON;
}

static int build_side(tl_diff *d, td_side *s, const tl_trace *t, int python, tl_err *err)
{
    size_t n = t->n;
    s->t = t;
    s->n = n;
    s->python = python;
    s->dict_n = (size_t)t->dict.n;
    for (int k = 0; k < 2; k++) {
        s->nrm[k] = tl_xmalloc((s->dict_n ? s->dict_n : 1) * sizeof(int32_t));
        memset(s->nrm[k], 0xff, (s->dict_n ? s->dict_n : 1) * sizeof(int32_t));
    }
    const int32_t *par = python ? t->parent_py : t->parent;
    if (n && !par)
        return tl_errf(err, TL_EUNSUPPORTED, "trace has no tree columns (ingested by an older version?)");
    s->parent = tl_xmalloc((n ? n : 1) * sizeof *s->parent);
    if (n) memcpy(s->parent, par, n * sizeof *s->parent);
    s->fl = tl_xcalloc(n ? n : 1, 1);
    s->ts_us = tl_xmalloc((n ? n : 1) * sizeof(double));
    s->end_us = tl_xmalloc((n ? n : 1) * sizeof(double));
    for (size_t i = 0; i < n; i++) {
        uint8_t k = t->kind[i];
        uint8_t f = 0;
        if (k == TL_K_CPU_OP) f |= TD_CPU | TD_HOST;
        if (k == TL_K_PYTHON && python) f |= TD_HOST;
        if (tl_kind_is_runtime(k)) {
            f |= TD_HOST;
            if (!name_eq(t, (int32_t)i, "hipGraphLaunch") && !name_eq(t, (int32_t)i, "cudaGraphLaunch")) f |= TD_RT;
        }
        if (tl_kind_is_gpu(k)) f |= TD_GPU;
        if (k == TL_K_KERNEL) f |= TD_KERNEL | TD_KLIKE;
        if (k == TL_K_MEMCPY) f |= TD_KLIKE;
        s->fl[i] = f;
        /* §3.2: doubles of µs, end computed once, as the reference does */
        s->ts_us[i] = tl_trace_ts_us(t, i);
        s->end_us[i] = s->ts_us[i] + tl_trace_dur_us(t, i);
    }

    /* Host rows in the nesting order (stable ts sort), replayed to find the
     * cpu roots: a parentless cpu_op may be a top-level op or one the
     * builder dropped (bleed rule), which the stored columns cannot tell. */
    TL_VEC(int32_t) host = {0};
    for (size_t i = 0; i < n; i++)
        if (s->fl[i] & TD_HOST) tl_vec_push(&host, (int32_t)i);
    if (host.n > 1) qsort_r(host.v, host.n, sizeof *host.v, cmp_ts_row, s->ts_us);

    tl_imap th = {0}; /* (pid, tid, flags) -> stack index for the nesting replay */
    typedef struct { TL_VEC(int32_t) st; int cpu; } stk;
    TL_VEC(stk) stacks = {0};
    TL_VEC(int32_t) croots = {0};
    size_t mismatches = 0;
    for (size_t h = 0; h < host.n; h++) {
        int32_t e = host.v[h];
        uint64_t key = tl_mix64((uint64_t)tl_trace_pid(t, e) ^ 0x9e3779b97f4a7c15ULL);
        key = tl_mix64(key ^ (uint64_t)tl_trace_tid(t, e) ^ ((uint64_t)(t->idflags[e] & 3) << 62));
        int isnew;
        size_t *slot = tl_imap_put(&th, key, &isnew);
        if (isnew) {
            stk z = {0};
            tl_vec_push(&stacks, z);
            *slot = stacks.n - 1;
        }
        stk *S = &stacks.v[*slot];
        while (S->st.n && s->ts_us[e] >= s->end_us[S->st.v[S->st.n - 1]]) {
            int32_t top = S->st.v[--S->st.n];
            if (s->fl[top] & TD_CPU) S->cpu--;
        }
        if (S->st.n && s->end_us[e] > s->end_us[S->st.v[S->st.n - 1]]) {
            int32_t top = S->st.v[S->st.n - 1];
            if (s->end_us[top] - s->ts_us[e] < 1.0 && S->st.n >= 2) {
                S->st.n--;
                if (s->fl[top] & TD_CPU) S->cpu--;
            } else {
                if (s->parent[e] != -1) mismatches++;
                continue;
            }
        }
        int32_t expect = S->st.n ? S->st.v[S->st.n - 1] : -1;
        if (expect != s->parent[e]) mismatches++;
        tl_vec_push(&S->st, e);
        if (s->fl[e] & TD_CPU) {
            if (S->cpu == 0) tl_vec_push(&croots, e);
            S->cpu++;
        }
    }
    for (size_t i = 0; i < stacks.n; i++) tl_vec_free(&stacks.v[i].st);
    tl_vec_free(&stacks);
    tl_imap_free(&th);
    if (mismatches && d->log)
        fprintf(d->log, "[TraceDiff] warning: %zu stored tree edges differ from the nesting replay\n", mismatches);

    /* children lists: host children in nesting order, then GPU children
     * (appended at link time, file order) */
    s->nkids = tl_xcalloc(n ? n : 1, sizeof *s->nkids);
    s->kids = tl_xcalloc(n ? n : 1, sizeof *s->kids);
    size_t total = 0;
    for (size_t i = 0; i < n; i++)
        if (s->parent[i] >= 0 && ((s->fl[i] & (TD_HOST | TD_GPU)))) { s->nkids[s->parent[i]]++; total++; }
    s->kpool = tl_xmalloc((total ? total : 1) * sizeof *s->kpool);
    uint32_t *fill = tl_xcalloc(n ? n : 1, sizeof *fill);
    size_t off = 0;
    for (size_t i = 0; i < n; i++) { s->kids[i] = s->kpool + off; off += s->nkids[i]; }
    for (size_t h = 0; h < host.n; h++) {
        int32_t e = host.v[h], p = s->parent[e];
        if (p >= 0) ((int32_t *)s->kids[p])[fill[p]++] = e;
    }
    for (size_t i = 0; i < n; i++) {
        int32_t p = s->parent[i];
        if ((s->fl[i] & TD_GPU) && p >= 0) ((int32_t *)s->kids[p])[fill[p]++] = (int32_t)i;
    }
    free(fill);
    tl_vec_free(&host);

    side_gpu_events(s);

    /* A3: top-level roots, with the reference's in-place rewiring */
    for (size_t k = 0; k < croots.n; k++) {
        int32_t R = croots.v[k];
        while (s->parent[R] >= 0) R = s->parent[R];
        int32_t C = R;
        while (s->nkids[C] == 1 && !(s->fl[s->kids[C][0]] & (TD_CPU | TD_RT))) C = s->kids[C][0];
        if (C != R) {
            s->kids[R] = s->kids[C];
            s->nkids[R] = s->nkids[C];
            for (uint32_t c = 0; c < s->nkids[R]; c++) s->parent[s->kids[R][c]] = R;
        }
        int dup = 0;
        for (size_t j = 0; j < s->nroots && !dup; j++) dup = s->roots[j] == C;
        if (!dup) {
            if (s->nroots == s->roots_cap) {
                s->roots_cap = s->roots_cap ? s->roots_cap * 2 : 64;
                s->roots = tl_xrealloc(s->roots, s->roots_cap * sizeof *s->roots);
            }
            s->roots[s->nroots++] = C;
        }
    }
    s->ncpu_roots = croots.n;
    tl_vec_free(&croots);
    return TL_OK;
}

static void side_free(td_side *s)
{
    free(s->parent);
    free(s->fl);
    free(s->ts_us);
    free(s->end_us);
    free(s->kids);
    free(s->nkids);
    free(s->kpool);
    free(s->ge);
    free(s->nge);
    free(s->gpool);
    free(s->roots);
    free(s->nrm[0]);
    free(s->nrm[1]);
    free(s->map);
}

/* Row of a UID (rows are in file order, so UIDs ascend), or -1. */
int32_t td_row_of_uid(const td_side *s, int64_t uid)
{
    size_t lo = 0, hi = s->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if ((int64_t)s->t->uid[mid] < uid) lo = mid + 1;
        else hi = mid;
    }
    return lo < s->n && (int64_t)s->t->uid[lo] == uid ? (int32_t)lo : -1;
}

/* ---------------------------------------------------------------------------
 * Alignment helpers (A4). */

typedef TL_VEC(int32_t) ivec;

static void gpu_kids(const td_side *s, int32_t x, ivec *out)
{
    out->n = 0;
    if (x < 0) return;
    for (uint32_t c = 0; c < s->nkids[x]; c++) {
        int32_t k = s->kids[x][c];
        if (s->fl[k] & TD_ON) tl_vec_push(out, k);
    }
}

static void sort_by_ts(const td_side *s, int32_t *v, size_t n)
{
    /* stable insertion sort on the µs doubles (times that tie there keep
     * their order): lists are short and mostly sorted already */
    for (size_t i = 1; i < n; i++) {
        int32_t x = v[i];
        double tx = s->ts_us[x];
        size_t j = i;
        while (j > 0 && s->ts_us[v[j - 1]] > tx) { v[j] = v[j - 1]; j--; }
        v[j] = x;
    }
}

static int any_rt(const td_side *s, const int32_t *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s->fl[v[i]] & TD_RT) return 1;
    return 0;
}

/* A4.10: walk down single-GPU-child wrappers. Returns the stop node; G gets
 * its GPU children when it stopped on |G| != 1 (else empty). */
static int32_t collapse(const td_side *s, int32_t x, ivec *G)
{
    G->n = 0;
    for (;;) {
        if (x < 0 || (s->fl[x] & TD_RT)) { G->n = 0; return x; }
        if (s->fl[x] & TD_CPU) {
            int rt = 0;
            for (uint32_t c = 0; c < s->nkids[x] && !rt; c++) rt = (s->fl[s->kids[x][c]] & TD_RT) != 0;
            if (rt) { G->n = 0; return x; }
        }
        gpu_kids(s, x, G);
        if (G->n != 1) return x;
        x = G->v[0];
    }
}

/* A4.11: edit-distance alignment; matches only on equal names. The
 * backtrack only asks whether dp[i][j] == dp[i-1][j] + 1, so the table is
 * kept as one bit per cell (two int rows while filling): sibling lists of
 * tens of thousands (python functions on) stay small. */
static void wf(const int32_t *na, size_t m, const int32_t *nb, size_t n, td_ops *out)
{
    size_t W = n + 1;
    int32_t *prev = tl_xmalloc(W * sizeof *prev), *cur = tl_xmalloc(W * sizeof *cur);
    uint64_t *up = tl_xcalloc(((m + 1) * W + 63) / 64, sizeof *up);
#define UP(i, j) ((up[((i) * W + (j)) >> 6] >> (((i) * W + (j)) & 63)) & 1)
    for (size_t j = 0; j <= n; j++) prev[j] = (int32_t)j;
    for (size_t i = 1; i <= m; i++) {
        cur[0] = (int32_t)i;
        for (size_t j = 1; j <= n; j++) {
            int32_t a = prev[j] + 1, b = cur[j - 1] + 1;
            int32_t c = prev[j - 1] + (na[i - 1] == nb[j - 1] ? 0 : 1);
            int32_t v = a < b ? a : b;
            cur[j] = v < c ? v : c;
            if (cur[j] == prev[j] + 1) up[(i * W + j) >> 6] |= 1ull << ((i * W + j) & 63);
        }
        int32_t *t = prev;
        prev = cur;
        cur = t;
    }
    size_t start = out->n;
    size_t i = m, j = n;
    while (i > 0 || j > 0) {
        td_op op;
        if (i > 0 && j > 0 && na[i - 1] == nb[j - 1]) {
            op.op = 'M'; op.i = (int32_t)(i - 1); op.j = (int32_t)(j - 1);
            i--; j--;
        } else if (i > 0 && (j == 0 || UP(i, j))) {
            op.op = 'D'; op.i = (int32_t)(i - 1); op.j = -1;
            i--;
        } else {
            op.op = 'I'; op.i = -1; op.j = (int32_t)(j - 1);
            j--;
        }
        tl_vec_push(out, op);
    }
#undef UP
    for (size_t x = start, y = out->n; x + 1 < y; x++, y--) {
        td_op tmp = out->v[x];
        out->v[x] = out->v[y - 1];
        out->v[y - 1] = tmp;
    }
    free(prev);
    free(cur);
    free(up);
}

/* Shape signature (A4.12 step 2): up to 4 levels of sorted GPU-path child
 * names, stopping after the first empty level. */
typedef struct sig {
    int nlev;
    ivec lev[4];
} sig;

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return x < y ? -1 : x > y;
}

static void make_sig(tl_diff *d, const td_side *s, int32_t x, sig *g)
{
    memset(g, 0, sizeof *g);
    ivec cur = {0}, next = {0}, kids = {0};
    tl_vec_push(&cur, x);
    for (int k = 0; k < 4; k++) {
        next.n = 0;
        for (size_t i = 0; i < cur.n; i++) {
            gpu_kids(s, cur.v[i], &kids);
            for (size_t c = 0; c < kids.n; c++) tl_vec_push(&next, kids.v[c]);
        }
        ivec *L = &g->lev[g->nlev++];
        for (size_t i = 0; i < next.n; i++) tl_vec_push(L, td_norm(d, s, next.v[i], 0));
        if (L->n > 1) qsort(L->v, L->n, sizeof *L->v, cmp_i32);
        if (!next.n) break;
        ivec t = cur;
        cur = next;
        next = t;
    }
    tl_vec_free(&cur);
    tl_vec_free(&next);
    tl_vec_free(&kids);
}

static void sig_free(sig *g)
{
    for (int k = 0; k < 4; k++) tl_vec_free(&g->lev[k]);
}

static void sig_score(const sig *a, const sig *b, int *full, int *overlap)
{
    int L = a->nlev > b->nlev ? a->nlev : b->nlev;
    static const ivec empty = {0};
    *full = 0;
    *overlap = 0;
    for (int k = 0; k < L; k++) {
        const ivec *x = k < a->nlev ? &a->lev[k] : &empty;
        const ivec *y = k < b->nlev ? &b->lev[k] : &empty;
        if (x->n == y->n && (x->n == 0 || memcmp(x->v, y->v, x->n * sizeof *x->v) == 0)) {
            (*full)++;
            continue;
        }
        size_t i = 0, j = 0;
        int ov = 0;
        while (i < x->n && j < y->n) {
            if (x->v[i] == y->v[j]) { ov++; i++; j++; }
            else if (x->v[i] < y->v[j]) i++;
            else j++;
        }
        *overlap = ov;
        return;
    }
    *full = L;
}

typedef struct cand {
    int full, overlap, wfm;
    int32_t i, j;
} cand;

static int cmp_cand(const void *pa, const void *pb)
{
    const cand *a = pa, *b = pb;
    if (a->full != b->full) return a->full > b->full ? -1 : 1;
    if (a->overlap != b->overlap) return a->overlap > b->overlap ? -1 : 1;
    if (a->wfm != b->wfm) return a->wfm ? -1 : 1;
    if (a->i != b->i) return a->i < b->i ? -1 : 1;
    return a->j < b->j ? -1 : a->j > b->j;
}

static int cmp_op_ij(const void *pa, const void *pb)
{
    const td_op *a = pa, *b = pb;
    if (a->i != b->i) return a->i < b->i ? -1 : 1;
    return a->j < b->j ? -1 : a->j > b->j;
}

/* A4.12: re-pair siblings that share a name by subtree shape. ops cover
 * a[0..m) and b[0..n). */
static void disambiguate(tl_diff *d, const int32_t *a, size_t m, const int32_t *b, size_t n,
                         td_ops *ops)
{
    if (!m || !n) return;
    int32_t *na = tl_xmalloc(m * sizeof *na), *nb = tl_xmalloc(n * sizeof *nb);
    for (size_t i = 0; i < m; i++) na[i] = td_norm(d, &d->s[0], a[i], 0);
    for (size_t j = 0; j < n; j++) nb[j] = td_norm(d, &d->s[1], b[j], 0);
    /* ambiguous names */
    ivec amb = {0};
    for (size_t o = 0; o < ops->n; o++) {
        if (ops->v[o].op != 'M') continue;
        int32_t cand_names[2] = {na[ops->v[o].i], nb[ops->v[o].j]};
        for (int c = 0; c < 2; c++) {
            int32_t nm = cand_names[c];
            int seen = 0;
            for (size_t k = 0; k < amb.n && !seen; k++) seen = amb.v[k] == nm;
            if (seen) continue;
            size_t ca = 0, cb = 0;
            for (size_t i = 0; i < m; i++) ca += na[i] == nm;
            for (size_t j = 0; j < n; j++) cb += nb[j] == nm;
            if (ca && cb && (ca > 1 || cb > 1)) tl_vec_push(&amb, nm);
        }
    }
    if (!amb.n) {
        free(na);
        free(nb);
        return;
    }
    /* WF partner of each side-1 index (a match pairs each index once) */
    int32_t *was = tl_xmalloc(m * sizeof *was);
    for (size_t i = 0; i < m; i++) was[i] = -1;
    for (size_t o = 0; o < ops->n; o++)
        if (ops->v[o].op == 'M') was[ops->v[o].i] = ops->v[o].j;
    int32_t *pa = tl_xmalloc(m * sizeof *pa), *pb = tl_xmalloc(n * sizeof *pb);
    for (size_t i = 0; i < m; i++) pa[i] = -1;
    for (size_t j = 0; j < n; j++) pb[j] = -1;
    sig *sa = tl_xcalloc(m, sizeof *sa), *sb = tl_xcalloc(n, sizeof *sb);
    uint8_t *hasa = tl_xcalloc(m, 1), *hasb = tl_xcalloc(n, 1);
    int changed = 0;
    TL_VEC(cand) cs = {0};
    for (size_t k = 0; k < amb.n; k++) {
        int32_t nm = amb.v[k];
        cs.n = 0;
        size_t ca = 0, cb = 0;
        for (size_t i = 0; i < m; i++) {
            if (na[i] != nm) continue;
            ca++;
            if (!hasa[i]) { make_sig(d, &d->s[0], a[i], &sa[i]); hasa[i] = 1; }
        }
        for (size_t j = 0; j < n; j++) {
            if (nb[j] != nm) continue;
            cb++;
            if (!hasb[j]) { make_sig(d, &d->s[1], b[j], &sb[j]); hasb[j] = 1; }
        }
        for (size_t i = 0; i < m; i++) {
            if (na[i] != nm) continue;
            for (size_t j = 0; j < n; j++) {
                if (nb[j] != nm) continue;
                cand c = {0, 0, was[i] == (int32_t)j, (int32_t)i, (int32_t)j};
                sig_score(&sa[i], &sb[j], &c.full, &c.overlap);
                tl_vec_push(&cs, c);
            }
        }
        qsort(cs.v, cs.n, sizeof *cs.v, cmp_cand);
        size_t want = ca < cb ? ca : cb, got = 0;
        for (size_t c = 0; c < cs.n && got < want; c++) {
            if (pa[cs.v[c].i] >= 0 || pb[cs.v[c].j] >= 0) continue;
            pa[cs.v[c].i] = cs.v[c].j;
            pb[cs.v[c].j] = cs.v[c].i;
            got++;
            if (!cs.v[c].wfm) changed = 1;
        }
    }
    tl_vec_free(&cs);
    if (changed) {
        td_ops out = {0};
        uint8_t *cov_a = tl_xcalloc(m, 1), *cov_b = tl_xcalloc(n, 1);
#define AMB_A(i) (isamb(&amb, na[i]))
        for (size_t o = 0; o < ops->n; o++) {
            td_op op = ops->v[o];
            int touch = 0;
            for (size_t k = 0; k < amb.n && !touch; k++) {
                if (op.i >= 0 && na[op.i] == amb.v[k]) touch = 1;
                if (op.j >= 0 && nb[op.j] == amb.v[k]) touch = 1;
            }
            if (touch) continue;
            tl_vec_push(&out, op);
            if (op.i >= 0) cov_a[op.i] = 1;
            if (op.j >= 0) cov_b[op.j] = 1;
        }
#undef AMB_A
        size_t mstart = out.n;
        for (size_t i = 0; i < m; i++)
            if (pa[i] >= 0) {
                td_op op = {'M', (int32_t)i, pa[i]};
                tl_vec_push(&out, op);
                cov_a[i] = 1;
                cov_b[pa[i]] = 1;
            }
        qsort(out.v + mstart, out.n - mstart, sizeof *out.v, cmp_op_ij);
        /* new deletes / inserts: every index not covered any more (the
         * ambiguous ones, plus the partner of a dropped stripped-name match) */
        for (size_t i = 0; i < m; i++)
            if (!cov_a[i]) { td_op op = {'D', (int32_t)i, -1}; tl_vec_push(&out, op); }
        for (size_t j = 0; j < n; j++)
            if (!cov_b[j]) { td_op op = {'I', -1, (int32_t)j}; tl_vec_push(&out, op); }
        free(cov_a);
        free(cov_b);
        free(ops->v);
        *ops = out;
    }
    for (size_t i = 0; i < m; i++) if (hasa[i]) sig_free(&sa[i]);
    for (size_t j = 0; j < n; j++) if (hasb[j]) sig_free(&sb[j]);
    free(sa);
    free(sb);
    free(hasa);
    free(hasb);
    free(was);
    free(pa);
    free(pb);
    free(na);
    free(nb);
    tl_vec_free(&amb);
}

/* WF + disambiguation over two row lists; ops index into a / b. */
static void aligned_wf(tl_diff *d, const int32_t *a, size_t m, const int32_t *b, size_t n, int strip,
                       td_ops *out)
{
    out->n = 0;
    int32_t *na = tl_xmalloc((m ? m : 1) * sizeof *na), *nb = tl_xmalloc((n ? n : 1) * sizeof *nb);
    for (size_t i = 0; i < m; i++) na[i] = td_norm(d, &d->s[0], a[i], strip);
    for (size_t j = 0; j < n; j++) nb[j] = td_norm(d, &d->s[1], b[j], strip);
    wf(na, m, nb, n, out);
    free(na);
    free(nb);
    disambiguate(d, a, m, b, n, out);
}

static void positional(size_t n, td_ops *out)
{
    out->n = 0;
    for (size_t i = 0; i < n; i++) {
        td_op op = {'M', (int32_t)i, (int32_t)i};
        tl_vec_push(out, op);
    }
}

/* Phase 2 / the free re-alignment of Phase 3. */
static void initial_align(tl_diff *d, const int32_t *a, size_t m, const int32_t *b, size_t n,
                          td_ops *out)
{
    if (m == n && !any_rt(&d->s[0], a, m) && !any_rt(&d->s[1], b, n)) positional(m, out);
    else aligned_wf(d, a, m, b, n, 0, out);
}

static int in_names(tl_diff *d, const td_side *s, const ivec *v, int32_t nm)
{
    for (size_t i = 0; i < v->n; i++)
        if (td_norm(d, s, v->v[i], 0) == nm) return 1;
    return 0;
}

static int32_t pos_of(const ivec *v, int32_t row)
{
    for (size_t i = 0; i < v->n; i++)
        if (v->v[i] == row) return (int32_t)i;
    return -1;
}

/* A4.7 Phase 3: look through one-sided wrappers. */
static void reconcile(tl_diff *d, ivec *L1, ivec *L2, td_ops *ops)
{
    const td_side *s1 = &d->s[0], *s2 = &d->s[1];
    uint8_t *sub1 = tl_xcalloc(L1->n + 1, 1), *sub2 = tl_xcalloc(L2->n + 1, 1);
    ivec kD = {0}, kI = {0};
    int any = 0;
    for (size_t a = 0; a < ops->n; a++) {
        if (ops->v[a].op != 'D') continue;
        int32_t D = L1->v[ops->v[a].i];
        if (s1->fl[D] & (TD_KERNEL | TD_RT)) continue;
        gpu_kids(s1, D, &kD);
        int32_t nD = td_norm(d, s1, D, 0);
        for (size_t b = 0; b < ops->n; b++) {
            if (ops->v[b].op != 'I') continue;
            int32_t I = L2->v[ops->v[b].j];
            if (s2->fl[I] & (TD_KERNEL | TD_RT)) continue;
            gpu_kids(s2, I, &kI);
            int32_t nI = td_norm(d, s2, I, 0);
            if (in_names(d, s2, &kI, nD)) { sub2[ops->v[b].j] = 1; any = 1; }
            if (in_names(d, s1, &kD, nI)) { sub1[ops->v[a].i] = 1; any = 1; }
            if (kD.n && kI.n && kD.n == kI.n) {
                int eq = 1;
                for (size_t k = 0; k < kD.n && eq; k++)
                    eq = td_norm(d, s1, kD.v[k], 0) == td_norm(d, s2, kI.v[k], 0);
                if (eq) { sub1[ops->v[a].i] = 1; sub2[ops->v[b].j] = 1; any = 1; }
            }
        }
    }
    if (!any) goto done;
    ivec N1 = {0}, N2 = {0};
    for (size_t i = 0; i < L1->n; i++) {
        if (sub1[i]) {
            gpu_kids(s1, L1->v[i], &kD);
            for (size_t k = 0; k < kD.n; k++) tl_vec_push(&N1, kD.v[k]);
        } else tl_vec_push(&N1, L1->v[i]);
    }
    for (size_t j = 0; j < L2->n; j++) {
        if (sub2[j]) {
            gpu_kids(s2, L2->v[j], &kI);
            for (size_t k = 0; k < kI.n; k++) tl_vec_push(&N2, kI.v[k]);
        } else tl_vec_push(&N2, L2->v[j]);
    }
    sort_by_ts(s1, N1.v, N1.n);
    sort_by_ts(s2, N2.v, N2.n);
    td_ops out = {0};
    uint8_t *pin1 = tl_xcalloc(N1.n + 1, 1), *pin2 = tl_xcalloc(N2.n + 1, 1);
    for (size_t o = 0; o < ops->n; o++) {
        if (ops->v[o].op != 'M') continue;
        int32_t i = pos_of(&N1, L1->v[ops->v[o].i]), j = pos_of(&N2, L2->v[ops->v[o].j]);
        if (i < 0 || j < 0) continue;
        td_op op = {'M', i, j};
        tl_vec_push(&out, op);
        pin1[i] = pin2[j] = 1;
    }
    ivec f1 = {0}, f2 = {0}, r1 = {0}, r2 = {0};
    for (size_t i = 0; i < N1.n; i++) if (!pin1[i]) { tl_vec_push(&f1, (int32_t)i); tl_vec_push(&r1, N1.v[i]); }
    for (size_t j = 0; j < N2.n; j++) if (!pin2[j]) { tl_vec_push(&f2, (int32_t)j); tl_vec_push(&r2, N2.v[j]); }
    if (f1.n && f2.n) {
        td_ops fo = {0};
        initial_align(d, r1.v, r1.n, r2.v, r2.n, &fo);
        for (size_t o = 0; o < fo.n; o++) {
            td_op op = fo.v[o];
            if (op.i >= 0) op.i = f1.v[op.i];
            if (op.j >= 0) op.j = f2.v[op.j];
            tl_vec_push(&out, op);
        }
        tl_vec_free(&fo);
    } else if (f1.n) {
        for (size_t i = 0; i < f1.n; i++) { td_op op = {'D', f1.v[i], -1}; tl_vec_push(&out, op); }
    } else {
        for (size_t j = 0; j < f2.n; j++) { td_op op = {'I', -1, f2.v[j]}; tl_vec_push(&out, op); }
    }
    tl_vec_free(&f1);
    tl_vec_free(&f2);
    tl_vec_free(&r1);
    tl_vec_free(&r2);
    free(pin1);
    free(pin2);
    free(L1->v);
    free(L2->v);
    *L1 = (ivec){N1.v, N1.n, N1.cap};
    *L2 = (ivec){N2.v, N2.n, N2.cap};
    free(ops->v);
    *ops = out;
done:
    tl_vec_free(&kD);
    tl_vec_free(&kI);
    free(sub1);
    free(sub2);
}

/* A4.8 Phase 4: collapse the unmatched and align them again, then with
 * stripped names. */
static void canonicalise(tl_diff *d, ivec *L1, ivec *L2, td_ops *ops)
{
    ivec dl = {0}, il = {0}, G = {0};
    for (size_t o = 0; o < ops->n; o++) {
        if (ops->v[o].op == 'D') tl_vec_push(&dl, ops->v[o].i);
        else if (ops->v[o].op == 'I') tl_vec_push(&il, ops->v[o].j);
    }
    if (!dl.n || !il.n) goto done;
    for (size_t k = 0; k < dl.n; k++) L1->v[dl.v[k]] = collapse(&d->s[0], L1->v[dl.v[k]], &G);
    for (size_t k = 0; k < il.n; k++) L2->v[il.v[k]] = collapse(&d->s[1], L2->v[il.v[k]], &G);
    ivec ra = {0}, rb = {0};
    for (size_t k = 0; k < dl.n; k++) tl_vec_push(&ra, L1->v[dl.v[k]]);
    for (size_t k = 0; k < il.n; k++) tl_vec_push(&rb, L2->v[il.v[k]]);
    td_ops p1 = {0}, p2 = {0}, out = {0};
    aligned_wf(d, ra.v, ra.n, rb.v, rb.n, 0, &p1);
    for (size_t o = 0; o < p1.n; o++) {
        if (p1.v[o].i >= 0) p1.v[o].i = dl.v[p1.v[o].i];
        if (p1.v[o].j >= 0) p1.v[o].j = il.v[p1.v[o].j];
    }
    ivec l1 = {0}, l2 = {0};
    for (size_t o = 0; o < p1.n; o++) {
        if (p1.v[o].op == 'D') tl_vec_push(&l1, p1.v[o].i);
        else if (p1.v[o].op == 'I') tl_vec_push(&l2, p1.v[o].j);
    }
    for (size_t o = 0; o < ops->n; o++)
        if (ops->v[o].op == 'M') tl_vec_push(&out, ops->v[o]);
    if (l1.n && l2.n) {
        for (size_t o = 0; o < p1.n; o++)
            if (p1.v[o].op == 'M') tl_vec_push(&out, p1.v[o]);
        ra.n = rb.n = 0;
        for (size_t k = 0; k < l1.n; k++) tl_vec_push(&ra, L1->v[l1.v[k]]);
        for (size_t k = 0; k < l2.n; k++) tl_vec_push(&rb, L2->v[l2.v[k]]);
        aligned_wf(d, ra.v, ra.n, rb.v, rb.n, 1, &p2);
        for (size_t o = 0; o < p2.n; o++) {
            td_op op = p2.v[o];
            if (op.i >= 0) op.i = l1.v[op.i];
            if (op.j >= 0) op.j = l2.v[op.j];
            tl_vec_push(&out, op);
        }
    } else {
        for (size_t o = 0; o < p1.n; o++) tl_vec_push(&out, p1.v[o]);
    }
    free(ops->v);
    *ops = out;
    tl_vec_free(&p1);
    tl_vec_free(&p2);
    tl_vec_free(&l1);
    tl_vec_free(&l2);
    tl_vec_free(&ra);
    tl_vec_free(&rb);
done:
    tl_vec_free(&dl);
    tl_vec_free(&il);
    tl_vec_free(&G);
}

/* ---------------------------------------------------------------------------
 * A4 recursive merge. */

/* A4.4: GPU-path children plus the same-named non-GPU child of the other side. */
static void add_missing(tl_diff *d, int side, int32_t u_other, const ivec *mine, const ivec *theirs,
                        ivec *out_theirs)
{
    const td_side *so = &d->s[side ^ 1], *sm = &d->s[side];
    if (u_other < 0) return;
    ivec done = {0};
    for (size_t i = 0; i < mine->n; i++) {
        int32_t nm = td_norm(d, sm, mine->v[i], 0);
        int skip = 0;
        for (size_t k = 0; k < done.n && !skip; k++) skip = done.v[k] == nm;
        for (size_t k = 0; k < theirs->n && !skip; k++) skip = td_norm(d, so, theirs->v[k], 0) == nm;
        if (skip) continue;
        tl_vec_push(&done, nm);
        int32_t last = -1;
        for (uint32_t c = 0; c < so->nkids[u_other]; c++) {
            int32_t k = so->kids[u_other][c];
            if (td_norm(d, so, k, 0) == nm) last = k;
        }
        if (last >= 0) tl_vec_push(out_theirs, last);
    }
    tl_vec_free(&done);
}

static int32_t merge(tl_diff *d, int32_t u1, int32_t u2)
{
    uint64_t key = ((uint64_t)(uint32_t)(u1 + 1) << 32) | (uint32_t)(u2 + 1);
    int isnew;
    size_t *memo = tl_imap_put(&d->memo, key, &isnew);
    if (!isnew) return (int32_t)*memo;
    int32_t mid = (int32_t)d->nodes.n;
    *memo = (size_t)mid;
    td_mnode nd = {u1, u2, u1 >= 0 && u2 >= 0 ? TD_COMBINED : (u1 >= 0 ? TD_TRACE1 : TD_TRACE2),
                   0, 0, u1, u2};
    tl_vec_push(&d->nodes, nd);
    if (u1 >= 0) d->s[0].map[u1] = u2;
    if (u2 >= 0) d->s[1].map[u2] = u1;

    ivec L1 = {0}, L2 = {0}, x1 = {0}, x2 = {0}, G = {0};
    gpu_kids(&d->s[0], u1, &L1);
    gpu_kids(&d->s[1], u2, &L2);
    add_missing(d, 0, u2, &L1, &L2, &x2);
    add_missing(d, 1, u1, &L2, &L1, &x1);
    for (size_t i = 0; i < x1.n; i++) tl_vec_push(&L1, x1.v[i]);
    for (size_t i = 0; i < x2.n; i++) tl_vec_push(&L2, x2.v[i]);
    sort_by_ts(&d->s[0], L1.v, L1.n);
    sort_by_ts(&d->s[1], L2.v, L2.n);

    /* Phase 1 */
    if (L1.n != L2.n) {
        if (L1.n == 1) {
            int32_t x = collapse(&d->s[0], L1.v[0], &G);
            if (G.n) {
                d->nodes.v[mid].u1 = x;
                L1.n = 0;
                for (size_t i = 0; i < G.n; i++) tl_vec_push(&L1, G.v[i]);
            }
        } else if (L2.n == 1) {
            int32_t x = collapse(&d->s[1], L2.v[0], &G);
            if (G.n) {
                d->nodes.v[mid].u2 = x;
                L2.n = 0;
                for (size_t i = 0; i < G.n; i++) tl_vec_push(&L2, G.v[i]);
            }
        }
    }
    /* Phase 2 */
    td_ops ops = {0};
    initial_align(d, L1.v, L1.n, L2.v, L2.n, &ops);
    /* Phase 3 */
    int nonmatch = 0;
    for (size_t o = 0; o < ops.n && !nonmatch; o++) nonmatch = ops.v[o].op != 'M';
    if (nonmatch) reconcile(d, &L1, &L2, &ops);
    /* Phase 4 */
    int hasd = 0, hasi = 0;
    for (size_t o = 0; o < ops.n; o++) {
        hasd |= ops.v[o].op == 'D';
        hasi |= ops.v[o].op == 'I';
    }
    if (hasd && hasi) canonicalise(d, &L1, &L2, &ops);

    ivec kids = {0};
    for (size_t o = 0; o < ops.n; o++) {
        td_op op = ops.v[o];
        int32_t c = merge(d, op.i >= 0 ? L1.v[op.i] : -1, op.j >= 0 ? L2.v[op.j] : -1);
        tl_vec_push(&kids, c);
    }
    d->nodes.v[mid].koff = (uint32_t)d->mkids.n;
    d->nodes.v[mid].nk = (uint32_t)kids.n;
    for (size_t i = 0; i < kids.n; i++) tl_vec_push(&d->mkids, kids.v[i]);
    tl_vec_free(&kids);
    tl_vec_free(&ops);
    tl_vec_free(&L1);
    tl_vec_free(&L2);
    tl_vec_free(&x1);
    tl_vec_free(&x2);
    tl_vec_free(&G);
    return mid;
}

/* ---------------------------------------------------------------------------
 * Public entry. */

int tl_diff_run(const tl_trace *t1, const tl_trace *t2, const tl_diff_opts *o, tl_diff **out,
                tl_err *err)
{
    *out = NULL;
    tl_diff *d = tl_xcalloc(1, sizeof *d);
    if (o) d->opts = *o;
    d->log = d->opts.log;
    tl_arena_init(&d->names.arena, 1 << 16);
    tl_arena_init(&d->arena, 1 << 16);
    int rc = build_side(d, &d->s[0], t1, d->opts.python, err);
    if (!rc) rc = build_side(d, &d->s[1], t2, d->opts.python, err);
    if (rc) {
        tl_diff_free(d);
        return rc;
    }
    if (!d->s[0].ncpu_roots || !d->s[1].ncpu_roots) {
        tl_diff_free(d);
        return tl_errf(err, TL_EFORMAT, "Both trees must have at least one root node in cpu_root_nodes.");
    }
    for (int k = 0; k < 2; k++) {
        td_side *s = &d->s[k];
        s->map = tl_xmalloc((s->n ? s->n : 1) * sizeof *s->map);
        for (size_t i = 0; i < s->n; i++) s->map[i] = TD_UNSEEN;
    }
    size_t nr = d->s[0].nroots > d->s[1].nroots ? d->s[0].nroots : d->s[1].nroots;
    for (size_t i = 0; i < nr; i++) {
        int32_t r1 = i < d->s[0].nroots ? d->s[0].roots[i] : -1;
        int32_t r2 = i < d->s[1].nroots ? d->s[1].roots[i] : -1;
        int32_t m = merge(d, r1, r2);
        tl_vec_push(&d->mroots, m);
    }
    rc = td_build_stats(d, err);
    if (rc) {
        tl_diff_free(d);
        return rc;
    }
    *out = d;
    return TL_OK;
}

void tl_diff_free(tl_diff *d)
{
    if (!d) return;
    side_free(&d->s[0]);
    side_free(&d->s[1]);
    strtab_free(&d->names);
    tl_vec_free(&d->nodes);
    tl_vec_free(&d->mkids);
    tl_vec_free(&d->mroots);
    tl_imap_free(&d->memo);
    tl_buf_free(&d->tmp);
    td_stats_free(d);
    tl_arena_free(&d->arena);
    free(d);
}

/* The A10 report hook (diff.h): the merge, then its two sheets. */
int tl_diff_comparison_sheets(const tl_trace *t1, const tl_trace *t2, const tl_diff_opts *o, tl_table *unified,
                              const int64_t *gpu_uids, const size_t *uid_row, size_t n,
                              tl_table **diff_stats_sheet, tl_err *err)
{
    *diff_stats_sheet = NULL;
    if (unified && !unified->nrows) return TL_OK; /* the reference runs it only with rows */
    tl_diff *d;
    int rc = tl_diff_run(t1, t2, o, &d, err);
    if (rc) return rc;
    *diff_stats_sheet = tl_diff_stats_sheet(d);
    rc = tl_diff_enrich_unified(d, unified, gpu_uids, uid_row, n, err);
    tl_diff_free(d);
    return rc;
}

size_t tl_diff_merged_nodes(const tl_diff *d) { return d->nodes.n; }

size_t tl_diff_roots(const tl_diff *d, size_t *n1, size_t *n2)
{
    if (n1) *n1 = d->s[0].nroots;
    if (n2) *n2 = d->s[1].nroots;
    return d->mroots.n;
}

int64_t tl_diff_corresponding_uid(const tl_diff *d, int tree, int64_t uid)
{
    if (tree != 1 && tree != 2) return -1;
    const td_side *s = &d->s[tree - 1], *o = &d->s[2 - tree];
    int32_t r = td_row_of_uid(s, uid);
    if (r < 0 || s->map[r] < 0) return -1;
    return (int64_t)o->t->uid[s->map[r]];
}

tl_table *tl_diff_uid_map(const tl_diff *d)
{
    tl_table *t = tl_table_new("uid_map");
    size_t ct = tl_table_add_col(t, "tree", TL_I64);
    size_t cu = tl_table_add_col(t, "uid", TL_I64);
    size_t cn = tl_table_add_col(t, "name", TL_STR);
    size_t cc = tl_table_add_col(t, "corresponding_uid", TL_I64);
    for (int k = 0; k < 2; k++) {
        const td_side *s = &d->s[k], *o = &d->s[k ^ 1];
        for (size_t i = 0; i < s->n; i++) {
            if (s->map[i] == TD_UNSEEN) continue;
            size_t r = tl_table_add_row(t);
            char buf[24];
            tl_table_set_i64(t, ct, r, k + 1);
            tl_table_set_i64(t, cu, r, s->t->uid[i]);
            tl_table_set_str(t, cn, r, td_name(s, (int32_t)i, buf));
            if (s->map[i] >= 0) tl_table_set_i64(t, cc, r, o->t->uid[s->map[i]]);
        }
    }
    return t;
}

/* ---------------------------------------------------------------------------
 * A5 merged tree text. */

static const char *mnode_name(const tl_diff *d, int side, int32_t row, char buf[24])
{
    return row >= 0 ? td_name(&d->s[side], row, buf) : "";
}

static void print_node(const tl_diff *d, tl_buf *b, int32_t m, tl_buf *prefix, int last)
{
    const td_mnode *nd = &d->nodes.v[m];
    char b1[24], b2[24];
    if (prefix->n) tl_buf_append(b, prefix->p, prefix->n);
    tl_buf_puts(b, last ? "\xe2\x94\x94\xe2\x94\x80\xe2\x94\x80 " : "\xe2\x94\x9c\xe2\x94\x80\xe2\x94\x80 ");
    const char *n1 = mnode_name(d, 0, nd->u1, b1), *n2 = mnode_name(d, 1, nd->u2, b2);
    if (nd->type == TD_COMBINED) {
        if (strcmp(n1, n2) == 0) tl_buf_puts(b, n1);
        else tl_buf_printf(b, "combined: %s | %s", n1, n2);
    } else if (nd->type == TD_TRACE1) {
        tl_buf_printf(b, ">> trace1: %s", n1);
    } else {
        tl_buf_printf(b, "<< trace2: %s", n2);
    }
    tl_buf_putc(b, '\n');
    size_t keep = prefix->n;
    tl_buf_puts(prefix, last ? "    " : "\xe2\x94\x82   ");
    /* children grouped by type: combined, trace1, trace2 */
    size_t total = nd->nk, seen = 0;
    for (int ty = 0; ty < 3; ty++)
        for (uint32_t c = 0; c < nd->nk; c++) {
            int32_t k = d->mkids.v[nd->koff + c];
            if (d->nodes.v[k].type != ty) continue;
            seen++;
            print_node(d, b, k, prefix, seen == total);
        }
    prefix->n = keep;
}

void tl_diff_tree_text(const tl_diff *d, int prune_non_gpu, tl_buf *b)
{
    tl_buf prefix = {0};
    tl_buf_reserve(&prefix, 256);
    for (size_t r = 0; r < d->mroots.n; r++) {
        int32_t m = d->mroots.v[r];
        const td_mnode *nd = &d->nodes.v[m];
        if (prune_non_gpu) {
            /* the "last" flag stays on the unpruned index (A5 quirk) */
            int on = (nd->u1 >= 0 && (d->s[0].fl[nd->u1] & TD_ON)) ||
                     (nd->u2 >= 0 && (d->s[1].fl[nd->u2] & TD_ON));
            if (!on) continue;
        }
        prefix.n = 0;
        print_node(d, b, m, &prefix, r + 1 == d->mroots.n);
    }
    tl_buf_free(&prefix);
}

int tl_diff_subtree_text(const tl_diff *d, int64_t uid1, int64_t uid2, tl_buf *b, tl_err *err)
{
    if (uid1 < 0 && uid2 < 0)
        return tl_errf(err, TL_EUSAGE, "At least one of uid_tree1 or uid_tree2 must be provided.");
    if (!d->nodes.n)
        return tl_errf(err, TL_EUSAGE, "merged_tree is not initialized. Call merge_trees() first.");
    int side = uid1 >= 0 ? 0 : 1;
    int32_t row = td_row_of_uid(&d->s[side], side == 0 ? uid1 : uid2);
    for (size_t m = 0; row >= 0 && m < d->nodes.n; m++) {
        int32_t u = side == 0 ? d->nodes.v[m].u1 : d->nodes.v[m].u2;
        if (u != row) continue;
        tl_buf prefix = {0};
        print_node(d, b, (int32_t)m, &prefix, 1);
        tl_buf_free(&prefix);
        return TL_OK;
    }
    return tl_errf(err, TL_ENOTFOUND, "Could not find merged node for the given UID.");
}
