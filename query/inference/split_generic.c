/* split_generic.c — the reference splitter's fallback for traces without
 * step annotations (Trace2Tree/inference_iteration_roots.py,
 * find_iteration_roots_generic): over the host call tree with python
 * functions (the stored parent_py edges, which are the reference's
 * TraceToTree with add_python_func), breadth first from the top of every
 * thread that holds a cpu_op, the first node whose children repeat a name
 * sequence at least 3 times over more than half of them (after a prefix)
 * gives one iteration root per repetition, spanning the block. Only
 * subtrees that launch GPU work are searched. */
#include "query/inference/inference.h"
#include "query/inference/split_internal.h"

#include <stdlib.h>
#include <string.h>

static int is_host(int k) { return k == TL_K_CPU_OP || k == TL_K_PYTHON || tl_kind_is_runtime(k); }

static const double *g_order_ts; /* qsort context of cmp_ts_row */
static int cmp_ts_row(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    if (g_order_ts[x] != g_order_ts[y]) return g_order_ts[x] < g_order_ts[y] ? -1 : 1;
    return x < y ? -1 : x > y;
}

/* The tree's children lists (CSR: kids[first[i] .. first[i + 1])): host
 * children in ts order, then the GPU events a runtime call launched. */
typedef struct gtree {
    size_t *first, *kids;
    uint8_t *gpu;   /* the node launches GPU work (itself or below) */
    size_t *order;  /* host rows in ts order */
    size_t nhost;
} gtree;

static void tree_build(const sc_index *x, gtree *g)
{
    const tl_trace *t = x->t;
    size_t n = t->n;
    g->first = calloc(n + 2, sizeof *g->first);
    g->kids = tl_xmalloc((n + 1) * sizeof *g->kids);
    g->gpu = calloc(n + 1, 1);
    g->order = tl_xmalloc((n + 1) * sizeof *g->order);
    g->nhost = 0;
    for (size_t i = 0; i < n; i++)
        if (is_host(t->kind[i])) g->order[g->nhost++] = i;
    g_order_ts = x->ts;
    qsort(g->order, g->nhost, sizeof *g->order, cmp_ts_row);
    for (size_t i = 0; i < n; i++)
        if (t->parent_py[i] >= 0) g->first[t->parent_py[i] + 1]++;
    for (size_t i = 0; i < n; i++) g->first[i + 1] += g->first[i];
    size_t *fill = tl_xmalloc((n + 1) * sizeof *fill);
    memcpy(fill, g->first, (n + 1) * sizeof *fill);
    for (size_t k = 0; k < g->nhost; k++) {
        size_t i = g->order[k];
        if (t->parent_py[i] >= 0) g->kids[fill[t->parent_py[i]]++] = i;
    }
    for (size_t i = 0; i < n; i++) {
        if (is_host(t->kind[i]) || t->parent_py[i] < 0) continue;
        g->kids[fill[t->parent_py[i]]++] = i;
        for (int32_t p = t->parent_py[i]; p >= 0 && !g->gpu[p]; p = t->parent_py[p]) g->gpu[p] = 1;
    }
    free(fill);
}

static void tree_free(gtree *g) { free(g->first), free(g->kids), free(g->gpu), free(g->order); }

/* _find_repeating_period: the first (start, period) whose pattern repeats
 * at least 3 times from start, covering more than half of the rest. */
static int repeating_period(const uint32_t *names, size_t n, size_t *period, size_t *start)
{
    for (size_t s = 0; s < n; s++) {
        const uint32_t *suf = names + s;
        size_t m = n - s;
        for (size_t p = 1; p <= m / 2; p++) {
            size_t count = 0, i = 0;
            while (i + p <= m && !memcmp(suf + i, suf, p * sizeof *suf)) count++, i += p;
            if (count >= 3 && (double)(count * p) > (double)m * 0.5) {
                *period = p, *start = s;
                return 1;
            }
        }
    }
    return 0;
}

/* The roots of the repetitions under node: the n-th occurrence of the
 * pattern's first name up to the n-th of its last. */
static size_t block_roots(const sc_index *x, const size_t *kid, size_t nk, size_t s, size_t p, sc_root *out)
{
    const tl_trace *t = x->t;
    uint32_t fname = t->name[kid[s]], lname = t->name[kid[s + p - 1]];
    size_t nf = 0, nl = 0, nr = 0;
    size_t *fa = tl_xmalloc((nk + 1) * sizeof *fa), *la = tl_xmalloc((nk + 1) * sizeof *la);
    for (size_t i = s; i < nk; i++) {
        if (t->name[kid[i]] == fname) fa[nf++] = i;
        if (t->name[kid[i]] == lname) la[nl++] = i;
    }
    for (size_t k = 0; k < nf && k < nl && la[k] >= fa[k]; k++) {
        size_t f = kid[fa[k]], l = kid[la[k]];
        double dur = (x->ts[l] + tl_trace_dur_us(t, l)) - x->ts[f];
        out[nr++] = (sc_root){f, x->ts[f], x->ts[f] + dur};
    }
    free(fa), free(la);
    return nr;
}

/* The tops of the threads: each cpu_op without a cpu_op above it, walked
 * up to its topmost ancestor, in ts order, each once. */
static size_t thread_tops(const tl_trace *t, const gtree *g, size_t *tops)
{
    size_t nt = 0;
    uint8_t *seen = calloc(t->n + 1, 1);
    for (size_t k = 0; k < g->nhost; k++) {
        size_t i = g->order[k];
        if (t->kind[i] != TL_K_CPU_OP) continue;
        int32_t p = t->parent_py[i], top = (int32_t)i;
        int nested = 0;
        for (; p >= 0; p = t->parent_py[p]) {
            nested |= t->kind[p] == TL_K_CPU_OP;
            top = p;
        }
        if (!nested && !seen[top]) seen[top] = 1, tops[nt++] = (size_t)top;
    }
    free(seen);
    return nt;
}

size_t sc_generic_roots(const sc_index *x, FILE *log, sc_root **out)
{
    const tl_trace *t = x->t;
    *out = NULL;
    fputs("Building tree with add_python_func=True\nBuilding CPU op tree with add_python_func=True\n", log);
    if (!t->parent_py) {
        fputs("Generic fallback: TraceToTree build failed (the store has no call tree), skipping.\n", log);
        return 0;
    }
    gtree g;
    tree_build(x, &g);
    size_t *queue = tl_xmalloc((t->n + 1) * sizeof *queue), *depth = tl_xmalloc((t->n + 1) * sizeof *depth);
    size_t qh = 0, qt = thread_tops(t, &g, queue), nr = 0;
    for (size_t k = 0; k < qt; k++) depth[k] = 0;
    uint32_t *names = tl_xmalloc((t->n + 1) * sizeof *names);
    if (!qt) fputs("Generic fallback: no root nodes found.\n", log);
    while (qh < qt && !nr) {
        size_t cur = queue[qh], d = depth[qh++];
        const size_t *kid = g.kids + g.first[cur];
        size_t nk = g.first[cur + 1] - g.first[cur], any = 0, p, s;
        for (size_t k = 0; k < nk; k++) any |= g.gpu[kid[k]], names[k] = t->name[kid[k]];
        if (!any) continue;
        if (!repeating_period(names, nk, &p, &s)) {
            for (size_t k = 0; k < nk; k++)
                if (g.gpu[kid[k]]) depth[qt] = d + 1, queue[qt++] = kid[k];
            continue;
        }
        fprintf(log, "Generic fallback: repeating pattern found under '%s' at depth %zu\n",
                t->name[cur] ? tl_trace_str(t, t->name[cur]) : "", d);
        fprintf(log, "Generic fallback: period=%zu\n", p);
        *out = tl_xmalloc((nk + 1) * sizeof **out);
        nr = block_roots(x, kid, nk, s, p, *out);
        fprintf(log, "Generic fallback: identified %zu iterations.\n", nr);
        if (!nr) {
            free(*out);
            *out = NULL;
            break;
        }
    }
    if (qt && !nr) fputs("Generic fallback: no repeating child pattern found.\n", log);
    free(queue), free(depth), free(names);
    tree_free(&g);
    return nr;
}
