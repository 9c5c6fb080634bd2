/* hip_api.c — api_kernel_summary: HIP API calls joined to the kernels of
 * their correlation id, T = A (API) + Q (queue: kernel start - API end,
 * at least 0) + K (kernel), grouped by (PID, TID, DevId, API Name, Kernel
 * Name), the reference's pftrace_hip_api_analysis.py step for step. */
#include "query/pftrace/pftrace.h"
#include "query/pftrace/pf_internal.h"

#include <stdlib.h>
#include <string.h>

static const char *const LAUNCH_HIP[] = {
    "hipModuleLaunchKernel", "hipLaunchKernelGGL", "hipLaunchKernel", "hipExtLaunchKernelGGL",
    "hipModuleLaunchCooperativeKernel", "hipExtModuleLaunchKernel", "hipMemset", "hipMemcpyHtoDAsync",
    "hipMemcpyDtoHAsync", "hipMemsetD32Async", NULL,
};

/* args time of an event: begin, end, delta in ns; 0 when the reference
 * gets (None, None, None). The args' begin_ns/end_ns/delta_ns, else ts/dur
 * in µs times 1000. -1: a value int() refuses (the reference raises). */
static int time_ns(const pf_ev *e, int64_t *b, int64_t *en, int64_t *d)
{
    int pb, pe, pd;
    const tl_pv *vb = pf_arg(e, "begin_ns", &pb), *ve = pf_arg(e, "end_ns", &pe), *vd = pf_arg(e, "delta_ns", &pd);
    if (vb && ve) {
        if (pf_py_int(vb, b) || pf_py_int(ve, en)) return -1;
        if (!vd) {
            *d = *en - *b;
            return 1;
        }
        return pf_py_int(vd, d) ? -1 : 1;
    }
    *b = e->ts_us * 1000;
    *d = e->dur_us * 1000;
    *en = *b + *d;
    return 1;
}

/* The first of the keys whose value int() takes (optional_int), else 0. */
static int first_int(const pf_ev *e, const char *const *keys, int64_t *out)
{
    for (size_t i = 0; keys[i]; i++) {
        int present;
        const tl_pv *v = pf_arg(e, keys[i], &present);
        if (present && pf_py_int(v, out) == 0) return 1;
    }
    return 0;
}

static int is_hip_api(const pf_ev *e)
{
    int present;
    return !strcmp(e->cat, "hip_api") && pf_arg(e, "corr_id", &present) != NULL;
}

static int has_launch_kernel(const char *name)
{
    /* re.search(r"(?:Launch).*Kernel", name, re.IGNORECASE) */
    const char *l = strcasestr(name, "launch");
    return l && strcasestr(l + 6, "kernel") != NULL;
}

static int is_launch_api(const pf_ev *e)
{
    if (!is_hip_api(e)) return 0;
    for (size_t i = 0; LAUNCH_HIP[i]; i++)
        if (!strcmp(e->name, LAUNCH_HIP[i])) return 1;
    return has_launch_kernel(e->name);
}

static int is_kernel(tl_arena *a, const pf_ev *e, int *bad)
{
    const char *name = pf_lower(a, e->name), *cat = pf_lower(a, e->cat);
    size_t n = strlen(name);
    if ((n >= 3 && !strcmp(name + n - 3, ".kd")) || strstr(name, ".kd ")) return 1;
    if (strstr(cat, "kernel_dispatch") || strstr(cat, "gpu_activity") || strstr(cat, "kernel") ||
        strstr(cat, "memory_copy")) {
        int64_t b, en, d;
        int st = time_ns(e, &b, &en, &d);
        if (st < 0) *bad = 1;
        return st > 0 && d > 0 && !strstr(name, "register");
    }
    return 0;
}

static const char *kernel_name(tl_arena *a, const pf_ev *e)
{
    static const char *const keys[] = {"kernel_name", "KernelName", "symbol", "symbol_name", "funcName", NULL};
    for (size_t i = 0; keys[i]; i++) {
        int present;
        const tl_pv *v = pf_arg(e, keys[i], &present);
        if (v && tl_pv_truthy(v)) return pf_py_str(a, v);
    }
    return e->name;
}

/* Agents in first-seen order: the GPU index of a kernel without a device
 * id (discover_agent_to_devid). Keyed by the value's repr. */
typedef struct agents {
    tl_smap idx;
    size_t n;
} agents;

static const char *agent_key(tl_arena *a, const pf_ev *e)
{
    int present;
    const tl_pv *v = pf_arg(e, "agent", &present);
    return v && tl_pv_truthy(v) ? tl_pv_repr(a, v, 0) : NULL;
}

typedef struct api_row {
    int64_t pid, tid, dev;
    const char *api, *kern;
    int64_t t, a, q, k;
    int has_t; /* 0: an API without kernel (T empty, Q and K 0) */
} api_row;

static int cmp_key(const void *x, const void *y)
{
    const api_row *a = x, *b = y;
    if (a->pid != b->pid) return a->pid < b->pid ? -1 : 1;
    if (a->tid != b->tid) return a->tid < b->tid ? -1 : 1;
    if (a->dev != b->dev) return a->dev < b->dev ? -1 : 1;
    int c = strcmp(a->api, b->api);
    return c ? c : strcmp(a->kern, b->kern);
}

/* Correlation ids in first-seen order of their API event (Python dict
 * order: a later event of the same id replaces the value, not the place)
 * and the kernels of each id in event order. */
typedef struct corr_index {
    tl_imap api_of;     /* corr -> slot in api + 1 */
    int64_t *api_corr;  /* per slot: the id */
    size_t *api;        /* per slot: the (last) API event */
    size_t napi;
    tl_imap kern_of;    /* corr -> kernel list + 1 */
    size_t *khead, *ktail, nk;
    size_t *knext;      /* per event: the next kernel of its id + 1 */
} corr_index;

static void corr_index_free(corr_index *c)
{
    tl_imap_free(&c->api_of);
    tl_imap_free(&c->kern_of);
    free(c->api_corr);
    free(c->api);
    free(c->khead);
    free(c->ktail);
    free(c->knext);
}

static void add_kernel(corr_index *c, int64_t corr, size_t i)
{
    int isnew;
    size_t *l = tl_imap_put(&c->kern_of, (uint64_t)corr, &isnew);
    if (isnew) {
        *l = ++c->nk;
        c->khead[*l - 1] = c->ktail[*l - 1] = i + 1;
        return;
    }
    c->knext[c->ktail[*l - 1] - 1] = i + 1;
    c->ktail[*l - 1] = i + 1;
}

static void add_api(corr_index *c, int64_t corr, size_t i)
{
    int isnew;
    size_t *s = tl_imap_put(&c->api_of, (uint64_t)corr, &isnew);
    if (isnew) {
        *s = ++c->napi;
        c->api_corr[*s - 1] = corr;
    }
    c->api[*s - 1] = i;
}

static int index_events(const pf_events *ev, const regex_t *excl, corr_index *c, tl_err *err)
{
    static const char *const corr_keys[] = {"corr_id", "correlation_id", "correlationId", "CorrId", NULL};
    size_t n = ev->n ? ev->n : 1;
    tl_imap_init(&c->api_of, 64);
    tl_imap_init(&c->kern_of, 64);
    c->api_corr = tl_xcalloc(n, sizeof *c->api_corr);
    c->api = tl_xcalloc(n, sizeof *c->api);
    c->khead = tl_xcalloc(n, sizeof *c->khead);
    c->ktail = tl_xcalloc(n, sizeof *c->ktail);
    c->knext = tl_xcalloc(n, sizeof *c->knext);
    tl_arena scratch;
    tl_arena_init(&scratch, 1 << 14);
    int rc = 0;
    for (size_t i = 0; i < ev->n && !rc; i++) {
        const pf_ev *e = &ev->v[i];
        int64_t corr;
        if (!first_int(e, corr_keys, &corr)) continue;
        int bad = 0;
        if (is_kernel(&scratch, e, &bad)) {
            if (!excl || regexec(excl, kernel_name(&scratch, e), 0, NULL, 0) != 0) add_kernel(c, corr, i);
        } else {
            const char *cat = pf_lower(&scratch, e->cat);
            if (is_hip_api(e) || !strcmp(cat, "cuda_api") || !strcmp(cat, "cupti")) add_api(c, corr, i);
        }
        if (bad) rc = tl_errf(err, TL_EFORMAT, "event %zu (%s): begin_ns/end_ns/delta_ns not integers", i, e->name);
    }
    tl_arena_free(&scratch);
    return rc;
}

/* The rows of one API event (packed_rows), appended to *rows. */
static int api_rows(const pf_events *ev, const corr_index *c, size_t slot, const tl_pf_hip_api_opts *o,
                    tl_smap *agents_idx, tl_arena *a, api_row **rows, size_t *nrows, size_t *cap)
{
    static const char *const dev_keys[] = {"device_id", "deviceId", "dev_id", "DevId", "gpu_id", "gpuId", NULL};
    const pf_ev *api = &ev->v[c->api[slot]];
    if (!o->include_nonlaunch_apis && !is_launch_api(api)) return 0;
    int64_t b, en, d;
    if (time_ns(api, &b, &en, &d) < 0) return -1;
    size_t *l = tl_imap_get(&c->kern_of, (uint64_t)c->api_corr[slot]);
    size_t first = l ? c->khead[*l - 1] : 0;
    if (!first) {
        if (!o->include_nonlaunch_apis) return 0;
        if (*nrows == *cap) *rows = tl_xrealloc(*rows, (*cap = *cap * 2 + 16) * sizeof **rows);
        (*rows)[(*nrows)++] = (api_row){api->pid, api->tid, 0, api->name, "", 0, d, 0, 0, 0};
        return 0;
    }
    size_t only = 0; /* without multi: the earliest kernel (first of equal begins) */
    if (!o->allow_multi_kernel_per_api && c->knext[first - 1]) {
        int64_t best = 0;
        for (size_t k = first; k; k = c->knext[k - 1]) {
            int64_t kb, ke, kd;
            if (time_ns(&ev->v[k - 1], &kb, &ke, &kd) < 0) return -1;
            if (!only || kb < best) only = k, best = kb;
        }
    }
    for (size_t k = only ? only : first; k; k = only ? 0 : c->knext[k - 1]) {
        const pf_ev *ke = &ev->v[k - 1];
        int64_t kb, kend, kd;
        if (time_ns(ke, &kb, &kend, &kd) < 0) return -1;
        int64_t dev = 0;
        if (!first_int(ke, dev_keys, &dev)) {
            const char *ag = agent_key(a, ke);
            size_t *ix = ag ? tl_smap_get(agents_idx, ag, strlen(ag)) : NULL;
            dev = ix ? (int64_t)*ix : 0;
        }
        int64_t q = kb - en > 0 ? kb - en : 0;
        if (*nrows == *cap) *rows = tl_xrealloc(*rows, (*cap = *cap * 2 + 16) * sizeof **rows);
        (*rows)[(*nrows)++] = (api_row){api->pid, api->tid, dev, api->name, kernel_name(a, ke), d + q + kd, d, q, kd, 1};
    }
    return 0;
}

static void discover_agents(const pf_events *ev, tl_arena *a, tl_smap *m)
{
    size_t n = 0;
    for (size_t i = 0; i < ev->n; i++) {
        const char *k = agent_key(a, &ev->v[i]);
        if (!k) continue;
        int isnew;
        size_t *v = tl_smap_put(m, k, strlen(k), &isnew);
        if (isnew) *v = n++;
    }
}

static const char *const STAT_COLS[] = {"Avg_ns", "Med_ns", "Min_ns", "Max_ns", "StdDev_ns"};

static tl_table *summary_table(void)
{
    tl_table *t = tl_table_new("api_kernel_summary");
    const char *ints[] = {"PID", "TID", "DevId", "Count", "QCount"};
    for (size_t i = 0; i < 5; i++) tl_table_add_col(t, ints[i], TL_I64);
    const char letters[] = "TAQK";
    for (size_t l = 0; l < 4; l++)
        for (size_t s = 0; s < 5; s++) {
            char name[32];
            snprintf(name, sizeof name, "%c%s", letters[l], STAT_COLS[s]);
            tl_table_add_col(t, name, s == 2 || s == 3 ? TL_I64 : TL_F64);
        }
    tl_table_add_col(t, "API Name", TL_STR);
    tl_table_add_col(t, "Kernel Name", TL_STR);
    return t;
}

/* One output row from rows[g0..g1) (one group). */
static void emit_group(tl_table *t, const api_row *rows, size_t g0, size_t g1, int64_t *scratch)
{
    size_t r = tl_table_add_row(t);
    const api_row *k = &rows[g0];
    tl_table_set_i64(t, 0, r, k->pid);
    tl_table_set_i64(t, 1, r, k->tid);
    tl_table_set_i64(t, 2, r, k->dev);
    int64_t qcount = 0;
    for (size_t i = g0; i < g1; i++) qcount += rows[i].has_t;
    tl_table_set_i64(t, 3, r, (int64_t)(g1 - g0));
    tl_table_set_i64(t, 4, r, qcount);
    for (size_t l = 0; l < 4; l++) {
        size_t n = 0;
        for (size_t i = g0; i < g1; i++) {
            const api_row *x = &rows[i];
            if (l == 0 && !x->has_t) continue; /* T of an API without kernel is empty */
            scratch[n++] = l == 0 ? x->t : l == 1 ? x->a : l == 2 ? x->q : x->k;
        }
        pf_stats s;
        pf_stats_of(scratch, n, &s);
        size_t c = 5 + 5 * l;
        tl_table_set_f64(t, c, r, s.avg);
        tl_table_set_f64(t, c + 1, r, s.med);
        tl_table_set_i64(t, c + 2, r, s.min);
        tl_table_set_i64(t, c + 3, r, s.max);
        tl_table_set_f64(t, c + 4, r, s.std);
    }
    tl_table_set_str(t, 25, r, k->api);
    tl_table_set_str(t, 26, r, k->kern);
}

int tl_pf_hip_api_report(const tl_trace *t, const tl_pf_hip_api_opts *o, tl_table **out, tl_err *err)
{
    *out = NULL;
    regex_t re;
    int has_re = o->exclude_kernel_regex && *o->exclude_kernel_regex;
    if (has_re && pf_regex_compile(o->exclude_kernel_regex, &re, err)) return err->code;
    pf_events ev;
    corr_index c;
    memset(&c, 0, sizeof c);
    tl_smap agents_idx;
    tl_smap_init(&agents_idx, 16);
    tl_arena a;
    tl_arena_init(&a, 1 << 14);
    api_row *rows = NULL;
    size_t nrows = 0, cap = 0;
    int rc = pf_events_load(t, &ev, err);
    if (!rc) {
        discover_agents(&ev, &a, &agents_idx);
        rc = index_events(&ev, has_re ? &re : NULL, &c, err);
    }
    for (size_t s = 0; !rc && s < c.napi; s++)
        if (api_rows(&ev, &c, s, o, &agents_idx, &a, &rows, &nrows, &cap))
            rc = tl_errf(err, TL_EFORMAT, "begin_ns/end_ns/delta_ns of an event are not integers");
    if (!rc) {
        /* stable order is not needed: a group's statistics sort its values */
        if (nrows > 1) qsort(rows, nrows, sizeof *rows, cmp_key);
        tl_table *tab = summary_table();
        int64_t *scratch = tl_xmalloc((nrows ? nrows : 1) * sizeof *scratch);
        for (size_t g0 = 0, g1; g0 < nrows; g0 = g1) {
            for (g1 = g0 + 1; g1 < nrows && !cmp_key(&rows[g0], &rows[g1]);) g1++;
            emit_group(tab, rows, g0, g1, scratch);
        }
        free(scratch);
        *out = tab;
    }
    free(rows);
    tl_arena_free(&a);
    tl_smap_free(&agents_idx);
    corr_index_free(&c);
    pf_events_free(&ev);
    if (has_re) regfree(&re);
    return rc;
}
