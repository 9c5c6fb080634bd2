/* memory_copy.c — memory_copy_by_copy_bytes: the number of memory_copy
 * events per (copy_bytes, direction), direction "h2d (GPU dst)",
 * "d2h (GPU src)", "d2d (GPU src -> GPU dst)" or "other", rows in
 * (copy_bytes, direction) order as pandas' groupby(...).size() gives them
 * (generate_perf_report_pftrace_memory_copy.py). */
#include "query/pftrace/pftrace.h"
#include "query/pftrace/pf_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct copy_row {
    int64_t bytes;
    const char *dir;
} copy_row;

static int cmp_row(const void *x, const void *y)
{
    const copy_row *a = x, *b = y;
    if (a->bytes != b->bytes) return a->bytes < b->bytes ? -1 : 1;
    return strcmp(a->dir, b->dir);
}

/* Python's str.strip() of ASCII white space, then str.upper(). */
static const char *strip_upper(tl_arena *a, const char *s)
{
    while (*s == ' ' || (*s >= '\t' && *s <= '\r')) s++;
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || (s[n - 1] >= '\t' && s[n - 1] <= '\r'))) n--;
    char *o = tl_arena_strndup(a, s, n);
    for (char *p = o; *p; p++)
        if (*p >= 'a' && *p <= 'z') *p = (char)(*p - 32);
    return o;
}

/* "N" for an agent int() takes, else "?". */
static const char *agent_text(tl_arena *a, const pf_ev *e, const char *key)
{
    int present;
    int64_t v;
    const tl_pv *pv = pf_arg(e, key, &present);
    if (!pv || pf_py_int(pv, &v)) return "?";
    return tl_arena_printf(a, "%lld", (long long)v);
}

static const char *direction(tl_arena *a, const pf_ev *e)
{
    const char *name = strip_upper(a, e->name);
    if (strstr(name, "MEMORY_COPY_HOST_TO_DEVICE"))
        return tl_arena_printf(a, "h2d (GPU %s)", agent_text(a, e, "dst_agent"));
    if (strstr(name, "MEMORY_COPY_DEVICE_TO_HOST"))
        return tl_arena_printf(a, "d2h (GPU %s)", agent_text(a, e, "src_agent"));
    if (strstr(name, "MEMORY_COPY_DEVICE_TO_DEVICE"))
        return tl_arena_printf(a, "d2d (GPU %s -> GPU %s)", agent_text(a, e, "src_agent"), agent_text(a, e, "dst_agent"));
    return "other";
}

int tl_pf_memory_copy_report(const tl_trace *t, tl_table **out, tl_err *err)
{
    *out = NULL;
    pf_events ev;
    int rc = pf_events_load(t, &ev, err);
    if (rc) {
        pf_events_free(&ev);
        return rc;
    }
    copy_row *rows = tl_xmalloc((ev.n ? ev.n : 1) * sizeof *rows);
    size_t n = 0;
    for (size_t i = 0; i < ev.n; i++) {
        const pf_ev *e = &ev.v[i];
        if (strcmp(strip_upper(&ev.arena, e->cat), "MEMORY_COPY")) continue; /* .strip().lower() == "memory_copy" */
        int present;
        int64_t bytes;
        const tl_pv *v = pf_arg(e, "copy_bytes", &present);
        if (!v || pf_py_int(v, &bytes)) continue;
        rows[n++] = (copy_row){bytes, direction(&ev.arena, e)};
    }
    qsort(rows, n, sizeof *rows, cmp_row);
    tl_table *tab = tl_table_new("memory_copy_by_copy_bytes");
    tl_table_add_col(tab, "copy_bytes", TL_I64);
    tl_table_add_col(tab, "direction", TL_STR);
    tl_table_add_col(tab, "count", TL_I64);
    for (size_t g0 = 0, g1; g0 < n; g0 = g1) {
        for (g1 = g0 + 1; g1 < n && !cmp_row(&rows[g0], &rows[g1]);) g1++;
        size_t r = tl_table_add_row(tab);
        tl_table_set_i64(tab, 0, r, rows[g0].bytes);
        tl_table_set_str(tab, 1, r, rows[g0].dir);
        tl_table_set_i64(tab, 2, r, (int64_t)(g1 - g0));
    }
    free(rows);
    pf_events_free(&ev);
    *out = tab;
    return 0;
}
