/* graph_replay.c — capture-trace classification and the replay/capture merge
 * of inference.h. Matching is by kernel-name sequence because that is what
 * both traces share exactly: the capture's launch calls carry args.kernel,
 * the replay's GPU events carry the same names in launch order. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* qsort_r */
#endif
#include "query/inference/inference.h"
#include "query/inference/inference_internal.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ingest/json.h"

static const char *nm(const tl_trace *t, size_t i) { return tl_trace_str(t, t->name[i]); }

static int is_graph_launch(const tl_trace *t, size_t i)
{
    if (!tl_kind_is_runtime(t->kind[i])) return 0;
    const char *n = nm(t, i);
    return n && (!strcmp(n, "cudaGraphLaunch") || !strcmp(n, "hipGraphLaunch"));
}

void tl_gr_classify(const tl_trace *cap, int64_t *bs, int *full)
{
    size_t nbegin = 0;
    *bs = -1;
    for (size_t i = 0; i < cap->n; i++) {
        const char *n = nm(cap, i);
        if (!n) continue;
        if (tl_kind_is_runtime(cap->kind[i]) && strstr(n, "StreamBeginCapture")) nbegin++;
        if (*bs < 0 && (cap->kind[i] == TL_K_USER_ANNOTATION) && !strncmp(n, "capture_", 8) &&
            n[8] >= '0' && n[8] <= '9')
            *bs = strtoll(n + 8, NULL, 10);
    }
    *full = nbegin <= 1;
    if (*bs >= 0) return;
    /* most common first dimension of cpu-op inputs */
    size_t cap_n = 0, cnt_n = 0;
    int64_t *vals = NULL;
    size_t *cnt = NULL;
    for (size_t i = 0; i < cap->n; i++) {
        if (cap->kind[i] != TL_K_CPU_OP || !cap->in_dims[i]) continue;
        const char *d = tl_trace_str(cap, cap->in_dims[i]);
        const char *p = d ? strstr(d, "[[") : NULL;
        if (!p || p[2] < '0' || p[2] > '9') continue;
        int64_t v = strtoll(p + 2, NULL, 10);
        size_t k = 0;
        while (k < cnt_n && vals[k] != v) k++;
        if (k == cnt_n) {
            if (cnt_n == cap_n) {
                cap_n = cap_n ? cap_n * 2 : 16;
                vals = realloc(vals, cap_n * sizeof *vals);
                cnt = realloc(cnt, cap_n * sizeof *cnt);
            }
            vals[cnt_n] = v;
            cnt[cnt_n++] = 0;
        }
        cnt[k]++;
    }
    size_t best = 0;
    for (size_t k = 0; k < cnt_n; k++)
        if (cnt[k] > best) best = cnt[k], *bs = vals[k];
    free(vals);
    free(cnt);
}

/* ---- capture windows ----------------------------------------------------- */

/* One capture window as the reference's merge reads it: the CPU subtree
 * below a CaptureRoot (every cpu op or python function in the window
 * whose tree parent lies outside it, with all their descendants), in the
 * order it numbers the copies: by capture ts, ties in breadth-first
 * order. */
typedef struct cwin {
    size_t src;
    int64_t pid, tid;         /* the StreamBeginCapture's thread */
    uint8_t idf;
    int64_t lo, hi;           /* ns: end of the begin call, start of the end call */
    int32_t *launch;          /* launch-call rows, ts order */
    const char **tok;         /* their match tokens */
    size_t nl;
    int32_t *rows;            /* the subtree's rows in copy order */
    int32_t *par;             /* per rows[q]: its parent's index in rows, -1 the CaptureRoot */
    size_t nrows;
} cwin;

static const char TOK_MEMCPY[] = "\x01memcpy", TOK_MEMSET[] = "\x01memset";

static const char *gpu_tok(const tl_trace *t, size_t g)
{
    return t->kind[g] == TL_K_MEMCPY ? TOK_MEMCPY : t->kind[g] == TL_K_MEMSET ? TOK_MEMSET : nm(t, g);
}

static int cmp_rows_ts_ctx(const void *a, const void *b, void *ctx)
{
    const tl_trace *t = ctx;
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    if (t->ts[x] != t->ts[y]) return t->ts[x] < t->ts[y] ? -1 : 1;
    return x < y ? -1 : x > y;
}

static void sort_rows(const tl_trace *t, int32_t *rows, size_t n)
{
    qsort_r(rows, n, sizeof *rows, cmp_rows_ts_ctx, (void *)t);
}

static int is_host(int k) { return k == TL_K_CPU_OP || k == TL_K_PYTHON || tl_kind_is_runtime(k); }

/* Host children of every row (the tree with python functions), each
 * row's in (ts, UID) order as the reference's tree lists them. */
typedef struct kids {
    size_t *off; /* n + 1 */
    int32_t *v;
} kids;

static void kids_build(const tl_trace *t, kids *k)
{
    k->off = tl_xcalloc(t->n + 1, sizeof *k->off);
    k->v = tl_xmalloc((t->n + 1) * sizeof *k->v);
    for (size_t i = 0; i < t->n; i++)
        if (is_host(t->kind[i]) && t->parent_py[i] >= 0) k->off[t->parent_py[i] + 1]++;
    for (size_t i = 0; i < t->n; i++) k->off[i + 1] += k->off[i];
    size_t *fill = tl_xmalloc((t->n + 1) * sizeof *fill);
    memcpy(fill, k->off, (t->n + 1) * sizeof *fill);
    for (size_t i = 0; i < t->n; i++)
        if (is_host(t->kind[i]) && t->parent_py[i] >= 0) k->v[fill[t->parent_py[i]]++] = (int32_t)i;
    free(fill);
    for (size_t i = 0; i < t->n; i++)
        if (k->off[i + 1] - k->off[i] > 1) sort_rows(t, k->v + k->off[i], k->off[i + 1] - k->off[i]);
}

/* qsort_r context of the copy order: ts of the rows, by BFS index */
typedef struct bfs_ord {
    const tl_trace *t;
    const int32_t *rows;
} bfs_ord;

static int cmp_bfs(const void *a, const void *b, void *ctx)
{
    const bfs_ord *o = ctx;
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    int64_t tx = o->t->ts[o->rows[x]], ty = o->t->ts[o->rows[y]];
    if (tx != ty) return tx < ty ? -1 : 1;
    return x < y ? -1 : x > y;
}

/* The subtree of window w (lo, hi set): w->rows and w->par. inwin and
 * pos are per-row scratch arrays of the capture trace, left cleared. */
static void window_subtree(const tl_trace *t, const kids *k, cwin *w, uint8_t *inwin, int32_t *pos,
                           tl_arena *a)
{
    for (size_t i = 0; i < t->n; i++) inwin[i] = t->ts[i] >= w->lo && t->ts[i] + tl_trace_dur(t, i) <= w->hi;
    int32_t *bfs = tl_xmalloc((t->n + 1) * sizeof *bfs);
    size_t nb = 0;
    for (size_t i = 0; i < t->n; i++)
        if (inwin[i] && (t->kind[i] == TL_K_CPU_OP || t->kind[i] == TL_K_PYTHON) && t->parent_py[i] >= 0 &&
            !inwin[t->parent_py[i]])
            bfs[nb++] = (int32_t)i;
    /* breadth first, each row once (inwin now marks the rows taken: a
     * root can also lie below one whose end bleeds out of the window) */
    memset(inwin, 0, t->n);
    for (size_t q = 0; q < nb; q++) inwin[bfs[q]] = 1;
    for (size_t q = 0; q < nb; q++) {
        int32_t r = bfs[q];
        for (size_t c = k->off[r]; c < k->off[r + 1]; c++)
            if (!inwin[k->v[c]]) {
                inwin[k->v[c]] = 1;
                bfs[nb++] = k->v[c];
            }
    }
    memset(inwin, 0, t->n);
    int32_t *ord = tl_xmalloc((nb + 1) * sizeof *ord);
    for (size_t q = 0; q < nb; q++) ord[q] = (int32_t)q;
    bfs_ord o = {t, bfs};
    qsort_r(ord, nb, sizeof *ord, cmp_bfs, &o);
    w->rows = tl_arena_alloc(a, (nb + 1) * sizeof *w->rows);
    w->par = tl_arena_alloc(a, (nb + 1) * sizeof *w->par);
    w->nrows = nb;
    for (size_t q = 0; q < nb; q++) {
        w->rows[q] = bfs[ord[q]];
        pos[w->rows[q]] = (int32_t)q;
        inwin[w->rows[q]] = 1;
    }
    for (size_t q = 0; q < nb; q++) {
        int32_t p = t->parent_py[w->rows[q]];
        w->par[q] = p >= 0 && inwin[p] ? pos[p] : -1;
    }
    for (size_t q = 0; q < nb; q++) inwin[w->rows[q]] = 0;
    free(ord);
    free(bfs);
}

/* The launch calls of window w and their match tokens: runtime calls of
 * its subtree naming a launch, memcpy or memset, in ts order. */
static void window_launches(const tl_trace *t, cwin *w, tl_arena *a)
{
    w->launch = tl_arena_alloc(a, (w->nrows + 1) * sizeof *w->launch);
    for (size_t q = 0; q < w->nrows; q++) {
        int32_t j = w->rows[q];
        const char *n2 = nm(t, (size_t)j);
        if (!tl_kind_is_runtime(t->kind[j]) || !n2 || strstr(n2, "GraphLaunch")) continue;
        if (strcasestr(n2, "launch") || strcasestr(n2, "memcpy") || strcasestr(n2, "memset"))
            w->launch[w->nl++] = j;
    }
    w->tok = tl_arena_alloc(a, (w->nl + 1) * sizeof *w->tok);
    for (size_t k = 0; k < w->nl; k++) {
        int32_t j = w->launch[k];
        const char *n2 = nm(t, (size_t)j);
        size_t al;
        const char *args = tl_trace_args(t, (size_t)j, &al);
        tl_buf b = {0};
        if (args && al && tl_args_get_str(args, al, "kernel", &b) == 0 && b.n)
            w->tok[k] = tl_arena_strndup(a, b.p, b.n);
        else if (strstr(n2, "Memcpy"))
            w->tok[k] = TOK_MEMCPY;
        else if (strstr(n2, "Memset"))
            w->tok[k] = TOK_MEMSET;
        else
            w->tok[k] = n2;
        tl_buf_free(&b);
    }
}

/* Rows of runtime calls (cuda_runtime) whose name contains what, in UID order. */
static int32_t *runtime_named(const tl_trace *t, const char *what, size_t *n)
{
    int32_t *v = tl_xmalloc((t->n + 1) * sizeof *v);
    *n = 0;
    for (size_t i = 0; i < t->n; i++)
        if (t->kind[i] == TL_K_RUNTIME && nm(t, i) && strstr(nm(t, i), what)) v[(*n)++] = (int32_t)i;
    return v;
}

/* Capture windows of one capture trace, appended to *v: the reference
 * pairs the n-th StreamBeginCapture with the n-th StreamEndCapture. Token
 * strings are copied into arena a. A trace stored without its python
 * tree has no windows. */
static void find_windows(const tl_trace *t, size_t src, cwin **v, size_t *n, size_t *cap, tl_arena *a)
{
    if (!t->parent_py) return;
    kids k;
    kids_build(t, &k);
    uint8_t *inwin = tl_xcalloc(t->n + 1, 1);
    int32_t *pos = tl_xmalloc((t->n + 1) * sizeof *pos);
    size_t nb, ne;
    int32_t *begin = runtime_named(t, "StreamBeginCapture", &nb), *end = runtime_named(t, "StreamEndCapture", &ne);
    for (size_t c = 0; c < nb && c < ne; c++) {
        int32_t bi = begin[c], ei = end[c];
        cwin w = {.src = src, .pid = tl_trace_pid(t, bi), .tid = tl_trace_tid(t, bi), .idf = t->idflags[bi],
                  .lo = t->ts[bi] + tl_trace_dur(t, bi), .hi = t->ts[ei]};
        window_subtree(t, &k, &w, inwin, pos, a);
        window_launches(t, &w, a);
        if (*n == *cap) {
            *cap = *cap ? *cap * 2 : 8;
            *v = realloc(*v, *cap * sizeof **v);
        }
        (*v)[(*n)++] = w;
    }
    free(begin);
    free(end);
    free(inwin);
    free(pos);
    free(k.off);
    free(k.v);
}

/* ---- replay launches ----------------------------------------------------- */

typedef struct glaunch {
    int32_t row;
    int32_t *k;   /* GPU rows, ts order */
    size_t nk;
    double sum_us;
    long win;     /* matched capture window, -1 none */
    int32_t *match; /* per kernel: index into the window's launches, -1 */
    size_t nmatch;
} glaunch;

static size_t find_launches(const tl_trace *t, glaunch **out, double *gpu_total_us)
{
    size_t n = 0;
    for (size_t i = 0; i < t->n; i++) n += is_graph_launch(t, i);
    *gpu_total_us = 0;
    for (size_t g = 0; g < t->n; g++)
        if (tl_kind_is_gpu(t->kind[g])) *gpu_total_us += (double)tl_trace_dur(t, g) / 1000.0;
    *out = NULL;
    if (!n) return 0;
    glaunch *L = calloc(n, sizeof *L);
    int32_t *idx = malloc(t->n * sizeof *idx);
    for (size_t i = 0; i < t->n; i++) idx[i] = -1;
    size_t k = 0;
    for (size_t i = 0; i < t->n; i++)
        if (is_graph_launch(t, i)) {
            idx[i] = (int32_t)k;
            L[k++].row = (int32_t)i;
        }
    size_t *cnt = calloc(n, sizeof *cnt);
    for (size_t g = 0; g < t->n; g++)
        if (tl_kind_is_gpu(t->kind[g]) && t->parent && t->parent[g] >= 0 && idx[t->parent[g]] >= 0)
            cnt[idx[t->parent[g]]]++;
    for (size_t j = 0; j < n; j++) {
        L[j].k = malloc((cnt[j] + 1) * sizeof *L[j].k);
        L[j].match = malloc((cnt[j] + 1) * sizeof *L[j].match);
        L[j].win = -1;
    }
    for (size_t g = 0; g < t->n; g++)
        if (tl_kind_is_gpu(t->kind[g]) && t->parent && t->parent[g] >= 0 && idx[t->parent[g]] >= 0) {
            glaunch *l = &L[idx[t->parent[g]]];
            l->k[l->nk++] = (int32_t)g;
            l->sum_us += (double)tl_trace_dur(t, g) / 1000.0;
        }
    for (size_t j = 0; j < n; j++) sort_rows(t, L[j].k, L[j].nk);
    free(cnt);
    free(idx);
    *out = L;
    return n;
}

static void free_launches(glaunch *L, size_t n)
{
    for (size_t j = 0; j < n; j++) {
        free(L[j].k);
        free(L[j].match);
    }
    free(L);
}

/* in-order greedy pairing of replay kernels with capture launches */
static size_t pair(const tl_trace *t, const glaunch *l, const cwin *w, int32_t *match)
{
    size_t j = 0, m = 0;
    for (size_t i = 0; i < l->nk; i++) {
        match[i] = -1;
        const char *tk = gpu_tok(t, (size_t)l->k[i]);
        for (size_t q = j; q < w->nl; q++)
            if (tk && !strcmp(tk, w->tok[q])) {
                match[i] = (int32_t)q;
                j = q + 1;
                m++;
                break;
            }
    }
    return m;
}

static int exact(const tl_trace *t, const glaunch *l, const cwin *w)
{
    if (l->nk != w->nl) return 0;
    for (size_t i = 0; i < l->nk; i++) {
        const char *tk = gpu_tok(t, (size_t)l->k[i]);
        if (!tk || strcmp(tk, w->tok[i])) return 0;
    }
    return 1;
}

/* ---- summary tables ------------------------------------------------------ */

static tl_table *launch_table(const tl_trace *t, const glaunch *L, size_t n, double gpu_total,
                              const cwin *W, const tl_gr_source *caps)
{
    tl_table *s = tl_table_new("graph_launches");
    size_t c0 = tl_table_add_col(s, "UID", TL_I64);
    size_t c1 = tl_table_add_col(s, "name", TL_STR);
    size_t c2 = tl_table_add_col(s, "ts (µs)", TL_F64);
    size_t c3 = tl_table_add_col(s, "kernels", TL_I64);
    size_t c4 = tl_table_add_col(s, "kernel time (µs)", TL_F64);
    size_t c5 = tl_table_add_col(s, "GPU time (%)", TL_F64);
    size_t c6 = tl_table_add_col(s, "capture file", TL_STR);
    size_t c7 = tl_table_add_col(s, "capture mode", TL_STR);
    size_t c8 = tl_table_add_col(s, "capture batch_size", TL_I64);
    size_t c9 = tl_table_add_col(s, "kernels attributed", TL_I64);
    size_t c10 = tl_table_add_col(s, "status", TL_STR);
    for (size_t j = 0; j < n; j++) {
        const glaunch *l = &L[j];
        size_t r = tl_table_add_row(s);
        tl_table_set_i64(s, c0, r, t->uid[l->row]);
        tl_table_set_str(s, c1, r, nm(t, (size_t)l->row));
        tl_table_set_f64(s, c2, r, (double)t->ts[l->row] / 1000.0);
        tl_table_set_i64(s, c3, r, (int64_t)l->nk);
        tl_table_set_f64(s, c4, r, l->sum_us);
        tl_table_set_f64(s, c5, r, gpu_total > 0 ? l->sum_us / gpu_total * 100.0 : 0.0);
        tl_table_set_i64(s, c9, r, (int64_t)l->nmatch);
        if (!W) {
            tl_table_set_str(s, c10, r,
                             "unresolved: pass --capture_folder DIR (graph-capture traces) to attribute "
                             "these kernels to the CPU ops that captured them");
            continue;
        }
        if (l->win < 0) {
            tl_table_set_str(s, c10, r, "unresolved: no capture window matches its kernel sequence");
            continue;
        }
        const tl_gr_source *src = &caps[W[l->win].src];
        tl_table_set_str(s, c6, r, src->file ? src->file : "");
        tl_table_set_str(s, c7, r, src->full ? "FULL" : "PIECEWISE");
        if (src->batch_size >= 0) tl_table_set_i64(s, c8, r, src->batch_size);
        tl_table_set_str(s, c10, r, l->nmatch == l->nk ? "resolved" : "partly resolved");
    }
    return s;
}

tl_table *tl_gr_launch_table(const tl_trace *t)
{
    glaunch *L;
    double tot;
    size_t n = find_launches(t, &L, &tot);
    if (!n) return NULL;
    tl_table *s = launch_table(t, L, n, tot, NULL, NULL);
    free_launches(L, n);
    return s;
}

/* ---- merge --------------------------------------------------------------- */

uint64_t tl_gr_merged_id(const tl_trace *rp, const tl_gr_source *caps, size_t ncap)
{
    /* the salt names the merge's layout: a store keeps merges of an older
     * layout under other ids instead of handing them back */
    uint64_t h = tl_hash64("graphmerge-3", 12, 0);
    h = tl_hash64(&rp->id, sizeof rp->id, h);
    for (size_t c = 0; c < ncap; c++) h = tl_hash64(&caps[c].t->id, sizeof caps[c].t->id, h);
    return h;
}

/* Pairs every graph launch with a capture window: exact sequence matches
 * first, round robin over equal candidates (piecewise graphs of identical
 * layers); else the best greedy pairing when it covers at least half of the
 * kernels. */
static void match_launches(const tl_trace *rp, glaunch *L, size_t nl, const cwin *W, size_t nw)
{
    size_t last = (size_t)-1;
    for (size_t j = 0; j < nl; j++) {
        glaunch *l = &L[j];
        long pick = -1;
        for (size_t q = 1; q <= nw && pick < 0; q++) {
            size_t w = (last + q) % nw;
            if (exact(rp, l, &W[w])) pick = (long)w;
        }
        if (pick < 0) {
            size_t best = 0;
            int32_t *tmp = malloc((l->nk + 1) * sizeof *tmp);
            for (size_t w = 0; w < nw; w++) {
                size_t m = pair(rp, l, &W[w], tmp);
                if (m > best) best = m, pick = (long)w;
            }
            free(tmp);
            if (best * 2 < l->nk || !best) pick = -1;
        }
        if (pick >= 0) {
            l->win = pick;
            l->nmatch = pair(rp, l, &W[pick], l->match);
            last = (size_t)pick;
        }
    }
}

/* The synthetic thread of graph launch j's copied window. */
static int64_t window_tid(size_t j) { return 0x7ffe0000LL + (int64_t)j; }

/* An id of the capture trace ct (a pid or tid, string ids by their text)
 * equals one of the replay rp. */
static int same_id(const tl_trace *rp, int64_t rv, int rstr, const tl_trace *ct, int64_t cv, int cstr)
{
    if (rstr != cstr) return 0;
    if (!rstr) return rv == cv;
    const char *a = tl_trace_str(rp, (uint32_t)rv), *b = tl_trace_str(ct, (uint32_t)cv);
    return a && b && !strcmp(a, b);
}

/* The synthetic thread of a copied window is named as the reference's
 * merged tree names the capture's ops: by the replay's thread_name of the
 * capture thread's (pid, tid), when the replay has one. */
static void name_thread(tl_build *b, const tl_trace *rp, const cwin *w, const tl_trace *ct, uint32_t uid,
                        int64_t pid, uint8_t pstr, int64_t tid)
{
    for (size_t m = 0; m < rp->nmeta; m++) {
        uint8_t fl = rp->m_idflags[m];
        if (!(fl & 4) || strcmp(tl_trace_str(rp, rp->m_name[m]), "thread_name")) continue;
        if (!same_id(rp, rp->m_pid[m], fl & 1, ct, w->pid, w->idf & 1) ||
            !same_id(rp, rp->m_tid[m], (fl >> 1) & 1, ct, w->tid, (w->idf >> 1) & 1))
            continue;
        size_t len = (size_t)(rp->m_args.offsets[m + 1] - rp->m_args.offsets[m] - 1);
        tl_build_meta(b, uid, tl_build_str(b, "thread_name", 11), pid, tid, pstr, 0, 1,
                      rp->m_args.bytes + rp->m_args.offsets[m], len);
        return;
    }
}

/* Copies launch j's window as the reference's merge hangs it under the
 * graph launch: a CaptureRoot runtime event, then the window's subtree,
 * numbered from uid_base in copy order, each with the launch's ts and
 * dur and its tree parent pinned (the CaptureRoot under the launch, the
 * subtree's roots under the CaptureRoot), on a synthetic thread of the
 * launch's process. Each matched launch call is linked to its replay
 * kernel with an ac2g flow pair. klink: per replay row the link id of a
 * matched kernel. Returns the number of uids used. */
static uint32_t copy_window(tl_build *b, const tl_trace *rp, const glaunch *l, size_t j, const cwin *w,
                            const tl_trace *ct, const int64_t *klink, uint32_t uid_base, uint32_t fl_name)
{
    uint8_t pstr = rp->idflags[l->row] & 1;
    int64_t pid = pstr ? tl_restr(b, rp, (uint32_t)rp->pid[l->row]) : rp->pid[l->row];
    int64_t tid = window_tid(j); /* one synthetic thread per graph launch */
    int64_t ts = rp->ts[l->row], dur = rp->dur[l->row];
    /* launch row of the window -> replay kernel */
    int32_t *kof = tl_xmalloc((ct->n ? ct->n : 1) * sizeof *kof);
    for (size_t q = 0; q < w->nrows; q++) kof[w->rows[q]] = -1;
    for (size_t i = 0; i < l->nk; i++)
        if (l->match[i] >= 0) kof[w->launch[l->match[i]]] = l->k[i];
    uint32_t root = (uint32_t)tl_build_nevents(b);
    tl_ev_in e = {.uid = uid_base, .ts = ts, .dur = dur, .name = tl_build_str(b, "CaptureRoot", 11),
                  .cat = tl_build_str(b, "cuda_runtime", 12), .kind = TL_K_RUNTIME, .pid = pid,
                  .pid_is_str = pstr, .tid = tid, .corr = TL_NONE, .ext_id = TL_NONE, .stream = TL_NONE,
                  .device = TL_NONE, .seq = TL_NONE, .fwd_tid = TL_NONE};
    tl_build_event(b, &e);
    tl_build_pin_parent(b, root, l->row, l->row);
    for (size_t q = 0; q < w->nrows; q++) {
        int32_t cr = w->rows[q];
        tl_event_in(b, ct, (size_t)cr, &e);
        e.uid = uid_base + 1 + (uint32_t)q;
        e.ts = ts;
        e.dur = dur;
        e.pid = pid;
        e.pid_is_str = pstr;
        e.tid = tid;
        e.tid_is_str = 0;
        e.corr = TL_NONE;
        e.ext_id = TL_NONE;
        int32_t k = kof[cr];
        if (k >= 0) {
            e.corr = klink[k];
            tl_build_flow(b, e.uid, 's', fl_name, fl_name, e.corr, pid, tid, pstr, 0, e.ts);
            uint8_t kp = rp->idflags[k] & 1, kt = (rp->idflags[k] >> 1) & 1;
            tl_build_flow(b, e.uid, 'f', fl_name, fl_name, e.corr,
                          kp ? tl_restr(b, rp, (uint32_t)rp->pid[k]) : rp->pid[k],
                          kt ? tl_restr(b, rp, (uint32_t)rp->tid[k]) : rp->tid[k], kp, kt, rp->ts[k]);
        }
        tl_build_event(b, &e);
        /* the tree without python functions: the nearest other ancestor */
        int32_t p = w->par[q];
        while (p >= 0 && ct->kind[w->rows[p]] == TL_K_PYTHON) p = w->par[p];
        int32_t plain = ct->kind[cr] == TL_K_PYTHON ? -1 : p >= 0 ? (int32_t)(root + 1) + p : (int32_t)root;
        tl_build_pin_parent(b, root + 1 + (uint32_t)q, plain,
                            w->par[q] >= 0 ? (int32_t)(root + 1) + w->par[q] : (int32_t)root);
    }
    free(kof);
    return 1 + (uint32_t)w->nrows;
}

/* The merged trace's rows: the replay with every matched kernel given a
 * fresh link id, then the copied capture windows, then the replay's steps
 * as the extra blob "inference_steps". */
static tl_build *build_merged(const tl_trace *rp, const glaunch *L, size_t nl, const cwin *W,
                              const tl_gr_source *caps, uint32_t *uid_end)
{
    tl_build *b = tl_build_new();
    tl_build_set_format(b, "kineto");
    int64_t *klink = malloc((rp->n ? rp->n : 1) * sizeof *klink);
    for (size_t i = 0; i < rp->n; i++) klink[i] = TL_NONE;
    /* link ids far above any correlation a profiler writes */
    int64_t link = (int64_t)1 << 52;
    for (size_t j = 0; j < nl; j++)
        for (size_t i = 0; i < L[j].nk; i++)
            if (L[j].win >= 0 && L[j].match[i] >= 0) klink[L[j].k[i]] = link++;
    tl_copy_rows(b, rp, NULL, klink, 0);
    inf_pin_source_tree(rp, b);

    uint32_t uid_base = inf_uid_end(rp);
    uint32_t fl_name = tl_build_str(b, "ac2g", 4);
    for (size_t j = 0; j < nl; j++) {
        const glaunch *l = &L[j];
        if (l->win < 0 || !l->nmatch) continue;
        const cwin *w = &W[l->win];
        uid_base += copy_window(b, rp, l, j, w, caps[w->src].t, klink, uid_base, fl_name);
    }
    *uid_end = uid_base;
    /* the synthetic threads' names, after every copied row */
    for (size_t j = 0; j < nl; j++) {
        const glaunch *l = &L[j];
        if (l->win < 0 || !l->nmatch) continue;
        uint8_t pstr = rp->idflags[l->row] & 1;
        int64_t pid = pstr ? tl_restr(b, rp, (uint32_t)rp->pid[l->row]) : rp->pid[l->row];
        name_thread(b, rp, &W[l->win], caps[W[l->win].src].t, uid_base++, pid, pstr, window_tid(j));
    }
    free(klink);

    /* the steps, as seen in the replay, travel with the merged trace */
    tl_steps st;
    tl_steps_find(rp, &st);
    tl_buf sb = {0};
    tl_steps_serialise(&st, &sb);
    tl_build_extra(b, "inference_steps", sb.p ? sb.p : "", sb.n);
    tl_buf_free(&sb);
    tl_steps_free(&st);
    return b;
}

/* Labels (parent, capture count, uid_end: one past the last copy's uid,
 * see inf_uid_end) and path "<replay path>#graph-merged". */
static void merged_facts(const tl_trace *rp, const tl_gr_source *caps, size_t ncap, uint32_t uid_end,
                         tl_derived *d)
{
    snprintf(d->labels, sizeof d->labels,
             "{\"graph_replay\":\"merged\",\"parent\":\"%016llx\",\"captures\":\"%zu\",\"uid_end\":\"%u\"}",
             (unsigned long long)rp->id, ncap, uid_end);
    const char *pp = rp->catalog ? strstr(rp->catalog, "\"path\":\"") : NULL;
    size_t k = 0;
    if (pp)
        for (pp += 8; pp[k] && pp[k] != '"' && k + 32 < sizeof d->path; k++) d->path[k] = pp[k];
    snprintf(d->path + k, sizeof d->path - k, "#graph-merged");
    d->info = (tl_build_info){.id = tl_gr_merged_id(rp, caps, ncap), .path = d->path, .format = "kineto",
                              .rank = -1, .labels_json = d->labels};
}

int tl_gr_merge(const tl_trace *rp, const tl_gr_source *caps, size_t ncap, tl_derived *out,
                tl_table **summary, tl_err *err)
{
    if (summary) *summary = NULL;
    if (out) memset(out, 0, sizeof *out);
    tl_arena a;
    tl_arena_init(&a, 1 << 16);
    cwin *W = NULL;
    size_t nw = 0, capw = 0;
    for (size_t c = 0; c < ncap; c++) find_windows(caps[c].t, c, &W, &nw, &capw, &a);
    glaunch *L;
    double gpu_total;
    size_t nl = find_launches(rp, &L, &gpu_total);
    match_launches(rp, L, nl, W, nw);
    if (summary) *summary = launch_table(rp, L, nl, gpu_total, W, caps);

    int rc = 0;
    if (out) {
        uint32_t uid_end;
        tl_build *b = build_merged(rp, L, nl, W, caps, &uid_end);
        rc = tl_build_tree(b, err);
        if (rc) {
            tl_build_free(b);
        } else {
            out->build = b;
            merged_facts(rp, caps, ncap, uid_end, out);
        }
    }
    free_launches(L, nl);
    free(W);
    tl_arena_free(&a);
    return rc;
}

/* ---- capture folder ------------------------------------------------------ */

static char *read_file(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    tl_buf b = {0};
    char tmp[8192];
    size_t k;
    while ((k = fread(tmp, 1, sizeof tmp, f)) > 0) tl_buf_append(&b, tmp, k);
    fclose(f);
    tl_buf_putc(&b, 0);
    *n = b.n - 1;
    return b.p;
}

static int cmp_cstr(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int tl_gr_read_folder(const char *dir, char ***files, int64_t **bs, int **full, tl_err *err)
{
    *files = NULL;
    *bs = NULL;
    *full = NULL;
    char path[4096];
    snprintf(path, sizeof path, "%s/execution_details.json", dir);
    size_t len;
    char *txt = read_file(path, &len);
    size_t n = 0, cap = 0;
    if (txt) {
        tl_json j;
        tl_json_init_buf(&j, txt, len, path, err);
        int rc = tl_json_expect(&j, '[', "array of capture entries");
        int first = 1, more = 1;
        while (!rc && !(rc = tl_json_arr_next(&j, &first, &more)) && more) {
            if ((rc = tl_json_expect(&j, '{', "object"))) break;
            int f2 = 1;
            const char *k;
            size_t kn;
            char *file = NULL;
            int64_t b = -1;
            int fu = -1;
            while (!(rc = tl_json_obj_next(&j, &f2, &k, &kn)) && k) {
                const char *v;
                size_t vn;
                if (kn == 4 && !memcmp(k, "file", 4)) {
                    int esc;
                    if ((rc = tl_json_string(&j, &v, &vn, &esc))) break;
                    file = malloc(strlen(dir) + vn + 2);
                    sprintf(file, "%s/%.*s", dir, (int)vn, v);
                } else if (kn == 10 && !memcmp(k, "batch_size", 10)) {
                    if ((rc = tl_json_i64(&j, &b))) break;
                } else if (kn == 4 && !memcmp(k, "mode", 4)) {
                    int esc;
                    if ((rc = tl_json_string(&j, &v, &vn, &esc))) break;
                    fu = vn == 4 && !memcmp(v, "FULL", 4) ? 1 : 0;
                } else if ((rc = tl_json_skip(&j, &v, &vn)))
                    break;
            }
            if (rc) {
                free(file);
                break;
            }
            if (!file) continue;
            if (n == cap) {
                cap = cap ? cap * 2 : 8;
                *files = realloc(*files, cap * sizeof **files);
                *bs = realloc(*bs, cap * sizeof **bs);
                *full = realloc(*full, cap * sizeof **full);
            }
            (*files)[n] = file;
            (*bs)[n] = b;
            (*full)[n++] = fu;
        }
        free(txt);
        if (rc) {
            for (size_t i = 0; i < n; i++) free((*files)[i]);
            free(*files), free(*bs), free(*full);
            *files = NULL, *bs = NULL, *full = NULL;
            return rc;
        }
        return (int)n;
    }
    DIR *d = opendir(dir);
    if (!d) return tl_errf(err, TL_EIO, "%s: cannot open capture folder", dir);
    struct dirent *de;
    while ((de = readdir(d))) {
        size_t l = strlen(de->d_name);
        if (!((l > 5 && !strcmp(de->d_name + l - 5, ".json")) || (l > 8 && !strcmp(de->d_name + l - 8, ".json.gz"))))
            continue;
        if (!strcmp(de->d_name, "execution_details.json")) continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 8;
            *files = realloc(*files, cap * sizeof **files);
            *bs = realloc(*bs, cap * sizeof **bs);
            *full = realloc(*full, cap * sizeof **full);
        }
        (*files)[n] = malloc(strlen(dir) + l + 2);
        sprintf((*files)[n], "%s/%s", dir, de->d_name);
        (*bs)[n] = -1;
        (*full)[n++] = -1;
    }
    closedir(d);
    /* deterministic order (bs/full are all unknown, so only files move) */
    if (n) qsort(*files, n, sizeof **files, cmp_cstr);
    return (int)n;
}
