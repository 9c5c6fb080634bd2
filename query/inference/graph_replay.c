/* graph_replay.c — capture-trace classification and the replay/capture merge
 * of inference.h. Matching is by kernel-name sequence because that is what
 * both traces share exactly: the capture's launch calls carry args.kernel,
 * the replay's GPU events carry the same names in launch order. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* qsort_r */
#endif
#include "query/inference/inference.h"

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

typedef struct cwin {
    size_t src;
    int64_t pid, tid;
    uint8_t idf;
    int64_t lo, hi;           /* ns */
    int32_t *launch;          /* launch-call rows, ts order */
    const char **tok;         /* their match tokens */
    size_t nl;
    int32_t *rows;            /* host rows copied with the window */
    size_t nrows;
    uint32_t maxuid;
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

static int same_thread(const tl_trace *t, size_t a, size_t b)
{
    return t->pid[a] == t->pid[b] && t->tid[a] == t->tid[b] && t->idflags[a] == t->idflags[b];
}

/* Capture windows of one capture trace, appended to *v. Token strings are
 * copied into arena a (the capture trace outlives the merge anyway). */
static void find_windows(const tl_trace *t, size_t src, cwin **v, size_t *n, size_t *cap, tl_arena *a)
{
    for (size_t i = 0; i < t->n; i++) {
        if (!tl_kind_is_runtime(t->kind[i]) || !nm(t, i) || !strstr(nm(t, i), "StreamBeginCapture"))
            continue;
        size_t e = (size_t)-1;
        for (size_t j = 0; j < t->n; j++)
            if (tl_kind_is_runtime(t->kind[j]) && same_thread(t, i, j) && t->ts[j] > t->ts[i] &&
                nm(t, j) && strstr(nm(t, j), "StreamEndCapture") &&
                (e == (size_t)-1 || t->ts[j] < t->ts[e]))
                e = j;
        if (e == (size_t)-1) continue;
        cwin w = {src, t->pid[i], t->tid[i], t->idflags[i], t->ts[i], t->ts[e] + t->dur[e], NULL, NULL, 0, NULL, 0, 0};
        w.launch = tl_arena_alloc(a, (t->n + 1) * sizeof *w.launch);
        w.rows = tl_arena_alloc(a, (t->n + 1) * sizeof *w.rows);
        for (size_t j = 0; j < t->n; j++) {
            if (!same_thread(t, i, j) || t->ts[j] < w.lo || t->ts[j] + t->dur[j] > w.hi) continue;
            int k = t->kind[j];
            if (k != TL_K_CPU_OP && k != TL_K_PYTHON && !tl_kind_is_runtime(k) && k != TL_K_USER_ANNOTATION)
                continue;
            w.rows[w.nrows++] = (int32_t)j;
            if (t->uid[j] > w.maxuid) w.maxuid = t->uid[j];
            const char *n2 = nm(t, j);
            if (!tl_kind_is_runtime(k) || !n2 || j == i || j == e) continue;
            if (strstr(n2, "GraphLaunch")) continue;
            if (strstr(n2, "Launch") || ((strstr(n2, "Memcpy") || strstr(n2, "Memset")) && strstr(n2, "Async")))
                w.launch[w.nl++] = (int32_t)j;
        }
        sort_rows(t, w.launch, w.nl);
        w.tok = tl_arena_alloc(a, (w.nl + 1) * sizeof *w.tok);
        for (size_t k = 0; k < w.nl; k++) {
            int32_t j = w.launch[k];
            const char *n2 = nm(t, (size_t)j);
            if (strstr(n2, "Memcpy")) w.tok[k] = TOK_MEMCPY;
            else if (strstr(n2, "Memset")) w.tok[k] = TOK_MEMSET;
            else {
                size_t al;
                const char *args = tl_trace_args(t, (size_t)j, &al);
                tl_buf b = {0};
                if (args && al && tl_args_get_str(args, al, "kernel", &b) == 0 && b.n) {
                    w.tok[k] = tl_arena_strndup(a, b.p, b.n);
                } else
                    w.tok[k] = n2;
                tl_buf_free(&b);
            }
        }
        if (*n == *cap) {
            *cap = *cap ? *cap * 2 : 8;
            *v = realloc(*v, *cap * sizeof **v);
        }
        (*v)[(*n)++] = w;
    }
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
        if (tl_kind_is_gpu(t->kind[g])) *gpu_total_us += (double)t->dur[g] / 1000.0;
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
            l->sum_us += (double)t->dur[g] / 1000.0;
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
    uint64_t h = tl_hash64("graphmerge-2", 12, 0);
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

/* One past the largest event, flow and metadata position of the replay:
 * copied capture rows get positions above it. */
static uint32_t replay_uid_end(const tl_trace *rp)
{
    uint32_t uid_base = 0;
    for (size_t i = 0; i < rp->n; i++)
        if (rp->uid[i] >= uid_base) uid_base = rp->uid[i] + 1;
    for (size_t f = 0; f < rp->nflows; f++)
        if (rp->f_uid[f] >= uid_base) uid_base = rp->f_uid[f] + 1;
    for (size_t m = 0; m < rp->nmeta; m++)
        if (rp->m_uid[m] >= uid_base) uid_base = rp->m_uid[m] + 1;
    return uid_base;
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

/* Copies the capture rows of launch j's window onto a synthetic thread of
 * the replay, times shifted to the launch, and links each matched launch
 * call to its replay kernel with an ac2g flow pair. klink: per replay row
 * the link id of a matched kernel. */
static void copy_window(tl_build *b, const tl_trace *rp, const glaunch *l, size_t j, const cwin *w,
                        const tl_trace *ct, const int64_t *klink, uint32_t uid_base, uint32_t fl_name)
{
    int64_t shift = rp->ts[l->row] - w->lo;
    uint8_t pstr = rp->idflags[l->row] & 1;
    int64_t pid = pstr ? tl_restr(b, rp, (uint32_t)rp->pid[l->row]) : rp->pid[l->row];
    int64_t tid = window_tid(j); /* one synthetic thread per graph launch */
    /* launch row of the window -> replay kernel */
    int32_t *kof = malloc((ct->n ? ct->n : 1) * sizeof *kof);
    for (size_t q = 0; q < w->nrows; q++) kof[w->rows[q]] = -1;
    for (size_t i = 0; i < l->nk; i++)
        if (l->match[i] >= 0) kof[w->launch[l->match[i]]] = l->k[i];
    for (size_t q = 0; q < w->nrows; q++) {
        int32_t cr = w->rows[q];
        tl_ev_in e;
        tl_event_in(b, ct, (size_t)cr, &e);
        e.uid = uid_base + ct->uid[cr];
        e.ts += shift;
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
    }
    free(kof);
}

/* The merged trace's rows: the replay with every matched kernel given a
 * fresh link id, then the copied capture windows, then the replay's steps
 * as the extra blob "inference_steps". */
static tl_build *build_merged(const tl_trace *rp, const glaunch *L, size_t nl, const cwin *W,
                              const tl_gr_source *caps)
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

    uint32_t uid_base = replay_uid_end(rp);
    uint32_t fl_name = tl_build_str(b, "ac2g", 4);
    for (size_t j = 0; j < nl; j++) {
        const glaunch *l = &L[j];
        if (l->win < 0 || !l->nmatch) continue;
        const cwin *w = &W[l->win];
        copy_window(b, rp, l, j, w, caps[w->src].t, klink, uid_base, fl_name);
        uid_base += w->maxuid + 1;
    }
    /* the synthetic threads' names, after every copied row */
    for (size_t j = 0; j < nl; j++) {
        const glaunch *l = &L[j];
        if (l->win < 0 || !l->nmatch) continue;
        uint8_t pstr = rp->idflags[l->row] & 1;
        int64_t pid = pstr ? tl_restr(b, rp, (uint32_t)rp->pid[l->row]) : rp->pid[l->row];
        name_thread(b, rp, &W[l->win], caps[W[l->win].src].t, uid_base++, pid, pstr, window_tid(j));
    }
    free(klink);

    /* the steps, as seen in the replay: host times of the copied ops no
     * longer tell which step a kernel belongs to */
    tl_steps st;
    tl_steps_find(rp, &st);
    tl_buf sb = {0};
    tl_steps_serialise(&st, &sb);
    tl_build_extra(b, "inference_steps", sb.p ? sb.p : "", sb.n);
    tl_buf_free(&sb);
    tl_steps_free(&st);
    return b;
}

/* Labels (parent, capture count) and path "<replay path>#graph-merged". */
static void merged_facts(const tl_trace *rp, const tl_gr_source *caps, size_t ncap, tl_derived *d)
{
    snprintf(d->labels, sizeof d->labels,
             "{\"graph_replay\":\"merged\",\"parent\":\"%016llx\",\"captures\":\"%zu\"}",
             (unsigned long long)rp->id, ncap);
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
        tl_build *b = build_merged(rp, L, nl, W, caps);
        rc = tl_build_tree(b, err);
        if (rc) {
            tl_build_free(b);
        } else {
            out->build = b;
            merged_facts(rp, caps, ncap, out);
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
