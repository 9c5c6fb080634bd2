/* split_extract.c — what one piece of the reference's splitter holds
 * (split_inference/trace_extraction.py, extract_iteration): for each of
 * its iteration roots, the events of the root's thread that lie inside it,
 * then the flows and the GPU events of their correlation ids (wherever
 * those run); then the events without a timestamp. Also the GPU event
 * count, busy time and span it reports, and the batch sizes it reads from
 * attention / quant ops. */
#include "query/inference/inference.h"
#include "query/inference/split_internal.h"

#include <stdlib.h>
#include <string.h>

static int cmp_pair(const void *a, const void *b)
{
    const sc_pair *x = a, *y = b;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    return x->row < y->row ? -1 : x->row > y->row;
}

static int cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return x < y ? -1 : x > y;
}

static const char *str_of(const tl_trace *t, uint32_t sid) { return sid ? tl_trace_str(t, sid) : ""; }

static int is_gpu_cat(const char *c)
{
    return !strcmp(c, "kernel") || !strcmp(c, "gpu_memcpy") || !strcmp(c, "gpu_memset") ||
           !strcmp(c, "gpu_user_annotation");
}

static const double *g_ts; /* qsort context of cmp_by_ts */
static int cmp_by_ts(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    if (g_ts[x] != g_ts[y]) return g_ts[x] < g_ts[y] ? -1 : 1;
    return x < y ? -1 : x > y;
}

/* preprocess_trace: the correlation maps, and the rows in time order. */
void sc_index_build(sc_index *c, const tl_trace *t)
{
    memset(c, 0, sizeof *c);
    c->t = t;
    size_t n = t->n ? t->n : 1;
    c->ts = tl_xmalloc(n * sizeof *c->ts);
    c->end = tl_xmalloc(n * sizeof *c->end);
    c->by_ts = tl_xmalloc(n * sizeof *c->by_ts);
    c->gpu = tl_xmalloc(n * sizeof *c->gpu);
    for (size_t i = 0; i < t->n; i++) {
        c->ts[i] = tl_trace_ts_us(t, i);
        c->end[i] = c->ts[i] + tl_trace_dur_us(t, i);
        c->by_ts[i] = i;
        if (t->corr[i] != TL_NONE && is_gpu_cat(str_of(t, t->cat[i]))) c->gpu[c->ngpu++] = (sc_pair){t->corr[i], i};
    }
    g_ts = c->ts;
    qsort(c->by_ts, t->n, sizeof *c->by_ts, cmp_by_ts);
    qsort(c->gpu, c->ngpu, sizeof *c->gpu, cmp_pair);
    c->flow = tl_xmalloc((t->nflows + 1) * sizeof *c->flow);
    c->meta = tl_xmalloc((t->nflows + 1) * sizeof *c->meta);
    for (size_t f = 0; f < t->nflows; f++) {
        if (t->f_ts[f] == TL_NONE) c->meta[c->nmeta++] = f;
        else if ((t->f_ph[f] == 's' || t->f_ph[f] == 'f') && t->f_id[f] >= 0)
            c->flow[c->nflow++] = (sc_pair){t->f_id[f], f};
    }
    qsort(c->flow, c->nflow, sizeof *c->flow, cmp_pair);
    tl_trace_time_text(t, &c->ts_int, &c->dur_int);
}

/* First index of p[0..n) whose key is >= key. */
static size_t lower_key(const sc_pair *p, size_t n, int64_t key)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t m = lo + (hi - lo) / 2;
        if (p[m].key < key) lo = m + 1;
        else hi = m;
    }
    return lo;
}

static int same_thread(const tl_trace *t, size_t a, size_t b)
{
    return t->pid[a] == t->pid[b] && t->tid[a] == t->tid[b] && (t->idflags[a] & 3) == (t->idflags[b] & 3);
}

/* "Input Dims"[0][0] of a row whose name marks the batch dimension
 * (vLLM's unified attention, SGLang's per-token-group quant). */
static void batch_of(const tl_trace *t, size_t i, sc_piece *p)
{
    const char *nm = str_of(t, t->name[i]);
    if (!strstr(nm, "vllm::unified_attention_with_output") && !strstr(nm, "sgl_kernel::sgl_per_token_group_quant_8bit"))
        return;
    const char *d = t->in_dims ? str_of(t, t->in_dims[i]) : "";
    while (*d == ' ') d++;
    if (*d++ != '[') return;
    while (*d == ' ') d++;
    if (*d++ != '[') return;
    while (*d == ' ') d++;
    char *e;
    long long v = strtoll(d, &e, 10);
    if (e != d && (*e == ',' || *e == ']' || *e == ' ')) tl_vec_push(&p->batch, (int64_t)v);
}

/* One root's share of a piece: its thread's events inside it, then the
 * flows and the GPU events of their correlation ids. */
static void extract_root(const sc_index *c, const sc_root *root, sc_piece *p)
{
    const tl_trace *t = c->t;
    double rs = root->ts, re = root->end;
    size_t lo = 0, hi = t->n;
    while (lo < hi) {
        size_t m = lo + (hi - lo) / 2;
        if (c->ts[c->by_ts[m]] < rs) lo = m + 1;
        else hi = m;
    }
    TL_VEC(size_t) rows = {0};
    for (size_t k = lo; k < t->n && c->ts[c->by_ts[k]] <= re; k++) {
        size_t i = c->by_ts[k];
        if (c->end[i] <= re && same_thread(t, i, root->row)) tl_vec_push(&rows, i);
    }
    qsort(rows.v, rows.n, sizeof *rows.v, cmp_size);
    TL_VEC(int64_t) corr = {0};
    for (size_t k = 0; k < rows.n; k++) {
        tl_vec_push(&p->items, ((tl_kx_item){TL_KX_EVENT, rows.v[k]}));
        if (t->corr[rows.v[k]] != TL_NONE) tl_vec_push(&corr, t->corr[rows.v[k]]);
        batch_of(t, rows.v[k], p);
    }
    /* the reference walks its set of correlation ids: CPython's order */
    int64_t *ids = tl_xmalloc((corr.n + 1) * sizeof *ids);
    size_t u = sc_py_set_order(corr.v, corr.n, ids);
    if (u) memcpy(corr.v, ids, u * sizeof *ids);
    free(ids);
    for (size_t k = 0; k < u; k++)
        for (size_t f = lower_key(c->flow, c->nflow, corr.v[k]); f < c->nflow && c->flow[f].key == corr.v[k]; f++)
            tl_vec_push(&p->items, ((tl_kx_item){TL_KX_FLOW, c->flow[f].row}));
    double lo_ts = 0, hi_end = 0;
    size_t ng = 0;
    for (size_t k = 0; k < u; k++)
        for (size_t g = lower_key(c->gpu, c->ngpu, corr.v[k]); g < c->ngpu && c->gpu[g].key == corr.v[k]; g++) {
            size_t i = c->gpu[g].row;
            tl_vec_push(&p->items, ((tl_kx_item){TL_KX_EVENT, i}));
            if (!ng || c->ts[i] < lo_ts) lo_ts = c->ts[i];
            if (!ng || c->end[i] > hi_end) hi_end = c->end[i];
            p->gpu_busy += tl_trace_dur_us(t, i);
            ng++;
        }
    if (ng) p->gpu_dur += hi_end - lo_ts;
    p->gpu_events += ng;
    tl_vec_free(&rows);
    tl_vec_free(&corr);
}

/* CPython's iteration order of a set of ints built by adding v[0..n) in
 * order (open addressing, 9 linear probes, then perturbation; resized to
 * 4x the used count, 2x past 50,000, once 3/5 full): the order
 * list(set(v)) gives. Returns
 * the distinct count; out (n slots) gets them. */
size_t sc_py_set_order(const int64_t *v, size_t n, int64_t *out)
{
    size_t mask = 7, fill = 0;
    int64_t *key = tl_xmalloc(8 * sizeof *key);
    uint8_t *used = calloc(8, 1);
    for (size_t k = 0; k <= n; k++) {
        if (k < n) {
            int64_t h = v[k] == -1 ? -2 : v[k];
            size_t i = (size_t)h & mask, perturb = (size_t)h;
            for (;;) {
                size_t probes = i + 9 <= mask ? 9 : 0, j = i;
                int done = 0;
                for (size_t q = 0; q <= probes; q++, j++) {
                    if (!used[j]) {
                        used[j] = 1, key[j] = v[k], fill++, done = 1;
                        break;
                    }
                    if (key[j] == v[k]) {
                        done = 2;
                        break;
                    }
                }
                if (done) break;
                perturb >>= 5;
                i = (i * 5 + 1 + perturb) & mask;
            }
            if (fill * 5 < mask * 3) continue;
        } else break;
        size_t ns = 8, minused = fill > 50000 ? fill * 2 : fill * 4;
        while (ns <= minused) ns <<= 1;
        int64_t *nk = tl_xmalloc(ns * sizeof *nk);
        uint8_t *nu = calloc(ns, 1);
        for (size_t j = 0; j <= mask; j++) {
            if (!used[j]) continue;
            int64_t h = key[j] == -1 ? -2 : key[j];
            size_t i = (size_t)h & (ns - 1), perturb = (size_t)h;
            for (;;) {
                size_t probes = i + 9 <= ns - 1 ? 9 : 0, q;
                for (q = 0; q <= probes && nu[i + q]; q++) {}
                if (q <= probes) {
                    i += q;
                    break;
                }
                perturb >>= 5;
                i = (i * 5 + 1 + perturb) & (ns - 1);
            }
            nu[i] = 1, nk[i] = key[j];
        }
        free(key), free(used);
        key = nk, used = nu, mask = ns - 1;
    }
    size_t m = 0;
    for (size_t j = 0; j <= mask; j++)
        if (used[j]) out[m++] = key[j];
    free(key), free(used);
    return m;
}

void sc_extract(const sc_index *c, const sc_root *roots, size_t n, sc_piece *p)
{
    memset(p, 0, sizeof *p);
    for (size_t k = 0; k < n; k++) extract_root(c, &roots[k], p);
    for (size_t k = 0; k < c->nmeta; k++) tl_vec_push(&p->items, ((tl_kx_item){TL_KX_FLOW, c->meta[k]}));
}

void sc_piece_free(sc_piece *p)
{
    tl_vec_free(&p->items);
    tl_vec_free(&p->batch);
}

void sc_index_free(sc_index *c)
{
    free(c->ts), free(c->end), free(c->by_ts), free(c->gpu), free(c->flow), free(c->meta);
}
