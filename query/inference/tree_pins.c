/* tree_pins.c — the trees of traces the inference commands derive (graph
 * merge, SGLang names, pseudo ops, split pieces), pinned on their builds
 * (tl_build_pin_parent) rather than rebuilt from times, and the UID the
 * reference gives an event it appends to a trace. */
#include "query/inference/inference.h"
#include "query/inference/inference_internal.h"

#include <stdlib.h>
#include <string.h>

void inf_pin_source_tree(const tl_trace *t, tl_build *b)
{
    if (!t->parent || !t->parent_py) return;
    for (size_t i = 0; i < t->n; i++) {
        int k = t->kind[i];
        if (k == TL_K_CPU_OP || k == TL_K_PYTHON || tl_kind_is_runtime(k))
            tl_build_pin_parent(b, (uint32_t)i, t->parent[i], t->parent_py[i]);
    }
}

/* The nearest ancestor of row i that keep holds, as a row of the copy
 * (rows: t's row -> the copy's), or -1. */
static int32_t kept_ancestor(const int32_t *up, const uint8_t *keep, const int32_t *rows, int32_t i)
{
    int32_t p = up[i];
    while (p >= 0 && !keep[p]) p = up[p];
    return p >= 0 ? rows[p] : -1;
}

void inf_pin_kept_tree(const tl_trace *t, tl_build *b, const uint8_t *keep)
{
    if (!t->parent || !t->parent_py || !t->catalog || !strstr(t->catalog, "\"graph_replay\":\"merged\""))
        return;
    int32_t *rows = tl_xmalloc((t->n ? t->n : 1) * sizeof *rows);
    int32_t k = 0;
    for (size_t i = 0; i < t->n; i++) rows[i] = keep[i] ? k++ : -1;
    for (size_t i = 0; i < t->n; i++) {
        int kd = t->kind[i];
        if (!keep[i] || (kd != TL_K_CPU_OP && kd != TL_K_PYTHON && !tl_kind_is_runtime(kd))) continue;
        tl_build_pin_parent(b, (uint32_t)rows[i], kept_ancestor(t->parent, keep, rows, (int32_t)i),
                            kept_ancestor(t->parent_py, keep, rows, (int32_t)i));
    }
    free(rows);
}

uint32_t inf_uid_end(const tl_trace *t)
{
    const char *c = t->catalog ? t->catalog : "";
    const char *m = strstr(c, "\"uid_end\":\"");
    int64_t tot = 0, v;
    if (m) {
        tot = strtoll(m + 11, NULL, 10);
    } else {
        static const char *const keys[] = {"events", "flows", "meta_events", "instant_events", "other_events"};
        for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
            if (tl_args_get_i64(c, strlen(c), keys[i], &v) == 0) tot += v;
    }
    uint32_t end = tot > 0 && tot < UINT32_MAX ? (uint32_t)tot : 0;
    for (size_t i = 0; i < t->n; i++)
        if (t->uid[i] >= end) end = t->uid[i] + 1;
    return end;
}

/* DFS enter/exit counters of the subtree under root (children in row
 * order), iteratively: enter[r], leave[r] for every row below root. */
static void dfs_number(const size_t *off, const int32_t *kid, int32_t root, int64_t *enter, int64_t *leave)
{
    TL_VEC(int32_t) st = {0};
    TL_VEC(size_t) pos = {0};
    int64_t c = 0;
    enter[root] = c++;
    tl_vec_push(&st, root);
    tl_vec_push(&pos, off[root]);
    while (st.n) {
        int32_t r = st.v[st.n - 1];
        size_t p = pos.v[pos.n - 1];
        if (p == off[r + 1]) {
            leave[r] = c++;
            st.n--;
            pos.n--;
            continue;
        }
        pos.v[pos.n - 1]++;
        int32_t k = kid[p];
        enter[k] = c++;
        tl_vec_push(&st, k);
        tl_vec_push(&pos, off[k]);
    }
    tl_vec_free(&st);
    tl_vec_free(&pos);
}

int64_t *inf_export_times(const tl_trace *t)
{
    if (!t->parent_py) return NULL;
    size_t nroot = 0;
    for (size_t i = 0; i < t->n; i++)
        nroot += tl_kind_is_runtime(t->kind[i]) && !strcmp(tl_trace_str(t, t->name[i]), "CaptureRoot");
    if (!nroot) return NULL;
    /* host children per row (tree with python functions), rows ascending */
    size_t *off = tl_xcalloc(t->n + 1, sizeof *off);
    int32_t *kid = tl_xmalloc((t->n + 1) * sizeof *kid);
    for (size_t i = 0; i < t->n; i++)
        if (!tl_kind_is_gpu(t->kind[i]) && t->parent_py[i] >= 0) off[t->parent_py[i] + 1]++;
    for (size_t i = 0; i < t->n; i++) off[i + 1] += off[i];
    size_t *fill = tl_xmalloc((t->n + 1) * sizeof *fill);
    memcpy(fill, off, (t->n + 1) * sizeof *fill);
    for (size_t i = 0; i < t->n; i++)
        if (!tl_kind_is_gpu(t->kind[i]) && t->parent_py[i] >= 0) kid[fill[t->parent_py[i]]++] = (int32_t)i;
    free(fill);
    int64_t *tm = tl_xmalloc((2 * t->n + 1) * sizeof *tm);
    for (size_t i = 0; i < t->n; i++) tm[2 * i] = t->ts[i], tm[2 * i + 1] = t->dur[i];
    int64_t *enter = tl_xmalloc((t->n + 1) * sizeof *enter), *leave = tl_xmalloc((t->n + 1) * sizeof *leave);
    for (size_t i = 0; i < t->n; i++) {
        if (!tl_kind_is_runtime(t->kind[i]) || strcmp(tl_trace_str(t, t->name[i]), "CaptureRoot")) continue;
        dfs_number(off, kid, (int32_t)i, enter, leave);
        /* one step of at least 1 ns per counter, within the root's span
         * when it is long enough */
        int64_t steps = leave[i] + 1, q = t->dur[i] / steps > 0 ? t->dur[i] / steps : 1;
        TL_VEC(int32_t) st = {0};
        tl_vec_push(&st, (int32_t)i);
        while (st.n) {
            int32_t r = st.v[--st.n];
            tm[2 * r] = t->ts[i] + enter[r] * q;
            tm[2 * r + 1] = (leave[r] - enter[r]) * q;
            for (size_t p = off[r]; p < off[r + 1]; p++) tl_vec_push(&st, kid[p]);
        }
        tl_vec_free(&st);
    }
    free(enter);
    free(leave);
    free(off);
    free(kid);
    return tm;
}
