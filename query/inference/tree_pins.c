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
