/* trace_links.c — the reference's runtime -> GPU linking on a loaded trace.
 *
 * Ingest links GPU events to runtime calls through ac2g flows and, for a
 * trace that has no ac2g start flow at all (older Kineto writes
 * `async_cpu_to_gpu` flows, some exporters none), by correlation id: more
 * correct, since otherwise such a trace has almost no GPU work under any
 * op. The reference links only through ac2g flows (and graph launches by
 * correlation), so on those traces its reports differ. For byte-exact
 * comparisons with it, this undoes the correlation-only links in the
 * loaded copy of the edge columns; the store is not changed. */
#include "query/core/trace.h"

#include <string.h>

/* Does the trace have an ac2g start flow (then ingest linked through
 * flows only, exactly as the reference)? */
static int has_ac2g_start(const tl_trace *t)
{
    for (size_t f = 0; f < t->nflows; f++) {
        if (t->f_ph[f] != 's') continue;
        const char *cat = tl_trace_str(t, t->f_cat[f]);
        if (cat && strcmp(cat, "ac2g") == 0) return 1;
    }
    return 0;
}

static int is_graph_launch(const tl_trace *t, size_t row)
{
    const char *nm = tl_trace_str(t, t->name[row]);
    return nm && (strcmp(nm, "cudaGraphLaunch") == 0 || strcmp(nm, "hipGraphLaunch") == 0);
}

/* A private copy of an edge column in the trace's arena (columns may be
 * read in place from the store's map, which is read-only). */
static void *own_copy(tl_trace *t, const void *col, size_t width)
{
    void *p = tl_arena_alloc(&t->arena, (t->n ? t->n : 1) * width);
    if (t->n) memcpy(p, col, t->n * width);
    return p;
}

/* The catalog's count of stored flows (0 when absent). */
static int64_t catalog_flows(const tl_trace *t)
{
    int64_t v = 0;
    if (t->catalog) tl_args_get_i64(t->catalog, strlen(t->catalog), "flows", &v);
    return v;
}

int tl_trace_reference_links(tl_trace *t, size_t *dropped_out, tl_err *err)
{
    *dropped_out = 0;
    if (t->nflows == 0 && catalog_flows(t) > 0)
        return tl_errf(err, TL_EUSAGE, "trace %016llx: the reference's linking needs the flows table loaded",
                       (unsigned long long)t->id);
    if (!t->parent || !t->kind || !t->name || has_ac2g_start(t)) return TL_OK;
    size_t n = t->n, dropped = 0;
    int32_t *parent = NULL, *parent_py = NULL, *launcher = NULL;
    uint8_t *linked = NULL;
    uint32_t graph_name = UINT32_MAX, other_name = UINT32_MAX; /* last names seen */
    for (size_t g = 0; g < n; g++) {
        if (!tl_kind_is_gpu(t->kind[g])) continue;
        int32_t r = (parent ? parent : t->parent)[g];
        if (r < 0 || !tl_kind_is_runtime(t->kind[r])) continue;
        uint32_t nm = t->name[r];
        int graph = nm == graph_name ? 1 : nm == other_name ? 0 : is_graph_launch(t, (size_t)r);
        if (graph) {
            graph_name = nm;
            continue;
        }
        other_name = nm;
        if (!parent) {
            parent = own_copy(t, t->parent, sizeof *parent);
            if (t->parent_py) parent_py = own_copy(t, t->parent_py, sizeof *parent_py);
            if (t->launcher) launcher = own_copy(t, t->launcher, sizeof *launcher);
            if (t->linked) linked = own_copy(t, t->linked, sizeof *linked);
        }
        parent[g] = -1;
        if (parent_py) parent_py[g] = -1;
        if (launcher) launcher[g] = -1;
        if (linked) linked[g] = 0;
        dropped++;
    }
    if (parent) {
        t->parent = parent;
        if (parent_py) t->parent_py = parent_py;
        if (launcher) t->launcher = launcher;
        if (linked) t->linked = linked;
    }
    *dropped_out = dropped;
    return TL_OK;
}
