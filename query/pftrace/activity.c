/* activity.c — the hip_activity report (pftrace_hip_activity_analysis.py):
 * GPU events per agent (first-seen order of args.agent), kernel
 * categories by name, RCCL overlap with compute by the reference's two
 * pointers, category_summary (per GPU, then the mean per category),
 * xla_top, and the kernel/HIP summaries of activity_summary.c. */
#include "query/pftrace/pftrace.h"
#include "query/pftrace/pf_internal.h"

#include <stdlib.h>
#include <string.h>

void tl_pf_activity_opts_default(tl_pf_activity_opts *o)
{
    memset(o, 0, sizeof *o);
    o->min_tid = -1000000000;
    o->max_tid = 1000000000;
    o->min_event_ns = 5000;
    o->kernel_summary = 1;
    o->hip_summary = 1;
    o->hip_summary_group = "name";
    o->top_xla = 30;
    o->kernel_summary_top = 200;
    o->hip_summary_top = 200;
}

/* Categories in the order of category_summary's rows (SUMMARY_ROWS). */
enum { C_XLA, C_AITER_FWD, C_AITER_BWD, C_GEMM, C_CK_BWD, C_CK_FWD, C_TE, C_MEMCPY, C_FILL, C_RCCL, C_N };

static int any_of(const char *lower, const char *const *pats)
{
    for (size_t i = 0; pats[i]; i++)
        if (strstr(lower, pats[i])) return 1;
    return 0;
}

/* classify(): the first rule whose (case-insensitive) pattern the name holds. */
static int classify(tl_arena *a, const char *name)
{
    if (tl_is_comm_kernel_name(name, strlen(name))) return C_RCCL;
    const char *l = pf_lower(a, name);
    static const char *const gemm[] = {"cublaslt", "cijk", "gemm", "nvjet", NULL};
    static const char *const ckbwd[] = {"fmhabwd", "kernel_func", "flash_bprop", NULL};
    static const char *const ckfwd[] = {"fmhafwd", "flash_fprop", NULL};
    static const char *const mem[] = {"copy", "memcpy", "memset", NULL};
    static const char *const te[] = {"transformer_engine", NULL};
    static const char *const afwd[] = {"aiter::fmha_fwd", NULL};
    static const char *const abwd[] = {"aiter::fmha_bwd", NULL};
    static const char *const fill[] = {"fillbuffer", NULL};
    if (any_of(l, gemm)) return C_GEMM;
    if (any_of(l, ckbwd)) return C_CK_BWD;
    if (any_of(l, ckfwd)) return C_CK_FWD;
    if (any_of(l, mem)) return C_MEMCPY;
    if (any_of(l, te)) return C_TE;
    if (any_of(l, afwd)) return C_AITER_FWD;
    if (any_of(l, abwd)) return C_AITER_BWD;
    if (any_of(l, fill)) return C_FILL;
    return C_XLA;
}

static void list_push(pf_act_list *l, const pf_act_ev *e)
{
    if (l->n == l->cap) l->v = tl_xrealloc(l->v, (l->cap = l->cap * 2 + 16) * sizeof *l->v);
    l->v[l->n++] = *e;
}

static int cmp_ev(const void *x, const void *y)
{
    const pf_act_ev *a = x, *b = y;
    if (a->ts_ns != b->ts_ns) return a->ts_ns < b->ts_ns ? -1 : 1;
    if (a->dur_ns != b->dur_ns) return a->dur_ns < b->dur_ns ? -1 : 1;
    int c = strcmp(a->name, b->name);
    return c ? c : (a->seq > b->seq) - (a->seq < b->seq);
}

/* Sorts by (ts, dur, name), ties in event order (an empty list has no array). */
static void list_sort(pf_act_list *l)
{
    if (l->n > 1) qsort(l->v, l->n, sizeof *l->v, cmp_ev);
}

/* extract_time_ns(): args begin_ns/delta_ns, else ts/dur in µs (times
 * 1000 when ts < 10^10). -1 where int() raises. */
static int act_time(const pf_ev *e, int64_t *ts, int64_t *dur)
{
    int pb, pd;
    const tl_pv *b = pf_arg(e, "begin_ns", &pb), *d = pf_arg(e, "delta_ns", &pd);
    if (pb && pd) return pf_py_int(b, ts) || pf_py_int(d, dur) ? -1 : 0;
    *ts = e->ts_us;
    *dur = e->dur_us;
    if (*ts < 10000000000LL) {
        *ts *= 1000;
        *dur *= 1000;
    }
    return 0;
}

/* _safe_int(args.get(key)), with None as 0 (the summaries' _nz / `or 0`). */
static int64_t arg_int0(const pf_ev *e, const char *key)
{
    int present;
    int64_t v;
    const tl_pv *pv = pf_arg(e, key, &present);
    return pv && pf_py_int(pv, &v) == 0 ? v : 0;
}

/* What the report derives from the events (build_event_lists and _run). */
typedef struct act {
    tl_smap agent_idx;
    const char **agents;
    size_t nagents;
    pf_act_list *compute, *rccl; /* per GPU, sorted by (ts, dur, name) */
    pf_act_list hip;
    const char **xla_name;       /* xla aggregate in first-seen order */
    int64_t *xla_ns, *xla_cnt;
    size_t nxla;
    tl_smap xla_idx;
    int64_t (*cat)[C_N][2];      /* per GPU: ns and count per category */
    int64_t *overlapped, *non_overlapped, *compute_total;
} act;

static void act_free(act *A)
{
    for (size_t g = 0; g < A->nagents; g++) {
        free(A->compute[g].v);
        free(A->rccl[g].v);
    }
    free(A->compute);
    free(A->rccl);
    free(A->hip.v);
    free(A->agents);
    free(A->xla_name);
    free(A->xla_ns);
    free(A->xla_cnt);
    free(A->cat);
    free(A->overlapped);
    free(A->non_overlapped);
    free(A->compute_total);
    tl_smap_free(&A->agent_idx);
    tl_smap_free(&A->xla_idx);
}

static const char *agent_key(tl_arena *a, const pf_ev *e)
{
    int present;
    const tl_pv *v = pf_arg(e, "agent", &present);
    return v && tl_pv_truthy(v) ? tl_pv_repr(a, v, 0) : NULL;
}

static void discover_gpus(const pf_events *ev, act *A, tl_arena *a)
{
    A->agents = tl_xmalloc((ev->n ? ev->n : 1) * sizeof *A->agents);
    for (size_t i = 0; i < ev->n; i++) {
        const char *k = agent_key(a, &ev->v[i]);
        if (!k) continue;
        int isnew;
        size_t *ix = tl_smap_put(&A->agent_idx, k, strlen(k), &isnew);
        if (!isnew) continue;
        int present;
        *ix = A->nagents;
        A->agents[A->nagents++] = pf_py_str(a, pf_arg(&ev->v[i], "agent", &present));
    }
    size_t n = A->nagents ? A->nagents : 1;
    A->compute = tl_xcalloc(n, sizeof *A->compute);
    A->rccl = tl_xcalloc(n, sizeof *A->rccl);
    A->cat = tl_xcalloc(n, sizeof *A->cat);
    A->overlapped = tl_xcalloc(n, sizeof *A->overlapped);
    A->non_overlapped = tl_xcalloc(n, sizeof *A->non_overlapped);
    A->compute_total = tl_xcalloc(n, sizeof *A->compute_total);
}

static void xla_add(act *A, const char *key, int64_t ns)
{
    int isnew;
    size_t *ix = tl_smap_put(&A->xla_idx, key, strlen(key), &isnew);
    if (isnew) {
        *ix = A->nxla++;
        A->xla_name[*ix] = key;
    }
    A->xla_ns[*ix] += ns;
    A->xla_cnt[*ix] += 1;
}

/* build_event_lists and build_hip_api_events. */
static int build_lists(const pf_events *ev, const tl_pf_activity_opts *o, act *A, tl_arena *a, tl_err *err)
{
    discover_gpus(ev, A, a);
    size_t n = ev->n ? ev->n : 1;
    A->xla_name = tl_xcalloc(n, sizeof *A->xla_name);
    A->xla_ns = tl_xcalloc(n, sizeof *A->xla_ns);
    A->xla_cnt = tl_xcalloc(n, sizeof *A->xla_cnt);
    for (size_t i = 0; i < ev->n; i++) {
        const pf_ev *e = &ev->v[i];
        pf_act_ev x;
        memset(&x, 0, sizeof x);
        x.name = e->name;
        x.seq = i;
        int is_hip = !strcmp(e->cat, "hip_api");
        const char *k = agent_key(a, e);
        size_t *g = k ? tl_smap_get(&A->agent_idx, k, strlen(k)) : NULL;
        if (!g && !is_hip) continue;
        if (act_time(e, &x.ts_ns, &x.dur_ns))
            return tl_errf(err, TL_EFORMAT, "event %zu (%s): begin_ns/delta_ns not integers", i, e->name);
        if (x.dur_ns <= 0 || e->tid < o->min_tid || e->tid > o->max_tid) continue;
        if (is_hip) {
            x.stream = arg_int0(e, "stream_ID");
            x.op = arg_int0(e, "operation");
            if (x.dur_ns >= o->min_event_ns) list_push(&A->hip, &x);
        }
        if (!g) continue;
        x.grid = arg_int0(e, "grid_size");
        x.block = arg_int0(e, "workgroup_size");
        x.vgpr = arg_int0(e, "VGPR_Count");
        x.accum_vgpr = arg_int0(e, "Accum_VGPR_Count");
        x.sgpr = arg_int0(e, "SGPR_Count");
        x.lds = arg_int0(e, "LDS_Block_Size");
        x.scratch = arg_int0(e, "Scratch_Size");
        int c = classify(a, e->name);
        list_push(c == C_RCCL ? &A->rccl[*g] : &A->compute[*g], &x);
        if (c == C_XLA) xla_add(A, o->merge_kernels ? pf_strip_digits(a, e->name) : e->name, x.dur_ns);
    }
    for (size_t g = 0; g < A->nagents; g++) {
        list_sort(&A->compute[g]);
        list_sort(&A->rccl[g]);
    }
    list_sort(&A->hip);
    return 0;
}

/* rccl_overlap_two_pointer over the events of at least min_ns. */
static void overlap(const pf_act_list *comp, const pf_act_list *comm, int64_t min_ns, int64_t *ov, int64_t *nonov)
{
    size_t i = 0;
    int64_t over = 0, total = 0;
    for (size_t ci = 0; ci < comm->n; ci++) {
        const pf_act_ev *c = &comm->v[ci];
        if (c->dur_ns < min_ns) continue;
        int64_t cs = c->ts_ns, ce = c->ts_ns + c->dur_ns;
        total += c->dur_ns;
        while (i < comp->n && (comp->v[i].dur_ns < min_ns || comp->v[i].ts_ns + comp->v[i].dur_ns <= cs)) i++;
        for (size_t k = i; k < comp->n;) {
            const pf_act_ev *x = &comp->v[k];
            if (x->dur_ns < min_ns) {
                k++;
                continue;
            }
            if (x->ts_ns >= ce) break;
            int64_t e1 = x->ts_ns + x->dur_ns;
            int64_t lo = x->ts_ns > cs ? x->ts_ns : cs, hi = e1 < ce ? e1 : ce;
            if (hi > lo) over += hi - lo;
            if (e1 <= ce) k++;
            else break;
        }
    }
    *ov = over;
    *nonov = total - over;
}

/* Per GPU: time and count per category, compute total, RCCL overlap. */
static void gpu_stats(act *A, int64_t min_ns, tl_arena *a)
{
    for (size_t g = 0; g < A->nagents; g++) {
        const pf_act_list *lists[2] = {&A->compute[g], &A->rccl[g]};
        for (size_t l = 0; l < 2; l++)
            for (size_t i = 0; i < lists[l]->n; i++) {
                const pf_act_ev *x = &lists[l]->v[i];
                if (x->dur_ns < min_ns) continue;
                int c = classify(a, x->name);
                A->cat[g][c][0] += x->dur_ns;
                A->cat[g][c][1] += 1;
            }
        int64_t ct = 0;
        for (int c = 0; c < C_N; c++)
            if (c != C_RCCL) ct += A->cat[g][c][0];
        A->compute_total[g] = ct;
        overlap(&A->compute[g], &A->rccl[g], min_ns, &A->overlapped[g], &A->non_overlapped[g]);
    }
}

static const char *const SUMMARY_ROWS[] = {"xla", "aiterfwd", "aiterbwd", "gemm", "ckbwd", "ckfwd", "te",
                                          "memcpy/memset", "fillBuffer", "rccl", "overlapped_comm",
                                          "non_overlapped_comm", "compute_total", "total_incl_comm"};
#define NSUMMARY 14

static int cmp_str(const void *x, const void *y)
{
    return strcmp(*(const char *const *)x, *(const char *const *)y);
}

/* category_summary: 14 rows per GPU, then per category (alphabetical, as
 * groupby sorts) the mean over GPUs ("GPU ID" Avg). */
static tl_table *category_summary(const act *A, tl_arena *a)
{
    tl_table *t = tl_table_new("category_summary");
    if (!A->nagents) return t;
    tl_table_add_col(t, "GPU ID", TL_STR);
    tl_table_add_col(t, "Category", TL_STR);
    tl_table_add_col(t, "Total runtime (ms)", TL_F64);
    tl_table_add_col(t, "Total count", TL_F64); /* the mean rows make pandas' column float */
    tl_table_add_col(t, "Fraction of compute runtime", TL_F64);
    tl_table_add_col(t, "Fraction of total runtime", TL_F64);
    for (size_t g = 0; g < A->nagents; g++) {
        int64_t compute = A->compute_total[g], total = compute + A->cat[g][C_RCCL][0];
        int64_t v[NSUMMARY][2];
        for (int c = 0; c < C_N; c++) v[c][0] = A->cat[g][c][0], v[c][1] = A->cat[g][c][1];
        int64_t extra[4] = {A->overlapped[g], A->non_overlapped[g], compute, total};
        for (int c = 0; c < 4; c++) v[C_N + c][0] = extra[c], v[C_N + c][1] = 0;
        for (int c = 0; c < NSUMMARY; c++) {
            size_t r = tl_table_add_row(t);
            tl_table_set_str(t, 0, r, tl_arena_printf(a, "%zu", g));
            tl_table_set_str(t, 1, r, SUMMARY_ROWS[c]);
            tl_table_set_f64(t, 2, r, (double)v[c][0] / 1e6);
            tl_table_set_f64(t, 3, r, (double)v[c][1]);
            tl_table_set_f64(t, 4, r, compute > 0 ? (double)v[c][0] / (double)compute : 0.0);
            tl_table_set_f64(t, 5, r, total > 0 ? (double)v[c][0] / (double)total : 0.0);
        }
    }
    const char *sorted[NSUMMARY];
    memcpy(sorted, SUMMARY_ROWS, sizeof sorted);
    qsort(sorted, NSUMMARY, sizeof *sorted, cmp_str);
    size_t per = NSUMMARY;
    for (int s = 0; s < NSUMMARY; s++) {
        size_t c = 0;
        while (strcmp(SUMMARY_ROWS[c], sorted[s])) c++;
        size_t r = tl_table_add_row(t);
        tl_table_set_str(t, 0, r, "Avg");
        tl_table_set_str(t, 1, r, sorted[s]);
        for (size_t col = 2; col < 6; col++) {
            double sum = 0;
            for (size_t g = 0; g < A->nagents; g++) sum += t->cols[col].v.f[g * per + c];
            tl_table_set_f64(t, col, r, sum / (double)A->nagents);
        }
    }
    return t;
}

/* xla_top: the XLA-category kernels by total time (ties first-seen), the
 * first top_n of them as Python's [:top_n] slices. */
static tl_table *xla_top(const act *A, long long top_n)
{
    tl_table *t = tl_table_new("xla_top");
    size_t *order = tl_xmalloc((A->nxla ? A->nxla : 1) * sizeof *order);
    int64_t total = 0;
    for (size_t i = 0; i < A->nxla; i++) order[i] = i, total += A->xla_ns[i];
    /* stable insertion by total descending */
    for (size_t i = 1; i < A->nxla; i++) {
        size_t x = order[i], j = i;
        for (; j > 0 && A->xla_ns[order[j - 1]] < A->xla_ns[x]; j--) order[j] = order[j - 1];
        order[j] = x;
    }
    long long n = (long long)A->nxla;
    long long keep = top_n >= 0 ? (top_n < n ? top_n : n) : (n + top_n > 0 ? n + top_n : 0);
    if (keep > 0) {
        tl_table_add_col(t, "Kernel", TL_STR);
        tl_table_add_col(t, "Total time (ms)", TL_F64);
        tl_table_add_col(t, "Count", TL_I64);
        tl_table_add_col(t, "Fraction of XLA", TL_F64);
    }
    double denom = total ? (double)total : 1.0;
    for (long long i = 0; i < keep; i++) {
        size_t x = order[i], r = tl_table_add_row(t);
        tl_table_set_str(t, 0, r, A->xla_name[x]);
        tl_table_set_f64(t, 1, r, (double)A->xla_ns[x] / 1e6);
        tl_table_set_i64(t, 2, r, A->xla_cnt[x]);
        tl_table_set_f64(t, 3, r, (double)A->xla_ns[x] / denom);
    }
    free(order);
    return t;
}

/* get_df_kernel_summary: every GPU's events of at least min_ns (RCCL too
 * on request), Time % against the summed per-GPU baselines. */
static tl_table *kernel_summary(const act *A, const tl_pf_activity_opts *o, tl_arena *a)
{
    size_t total = 0;
    for (size_t g = 0; g < A->nagents; g++) total += A->compute[g].n + A->rccl[g].n;
    const pf_act_ev **evs = tl_xmalloc((total ? total : 1) * sizeof *evs);
    size_t n = 0;
    int64_t baseline = 0;
    for (size_t g = 0; g < A->nagents; g++) {
        for (size_t i = 0; i < A->compute[g].n; i++)
            if (A->compute[g].v[i].dur_ns >= o->min_event_ns) evs[n++] = &A->compute[g].v[i];
        for (size_t i = 0; o->kernel_summary_include_rccl && i < A->rccl[g].n; i++)
            if (A->rccl[g].v[i].dur_ns >= o->min_event_ns) evs[n++] = &A->rccl[g].v[i];
        baseline += A->compute_total[g] + (o->baseline_compute ? 0 : A->cat[g][C_RCCL][0]);
    }
    tl_table *t = pf_kernel_summary(evs, n, baseline, o->group_by_name, o->merge_kernels, a);
    free(evs);
    return t;
}

int tl_pf_activity_report(const tl_trace *t, const tl_pf_activity_opts *o, tl_pf_activity_result *res, tl_err *err)
{
    memset(res, 0, sizeof *res);
    pf_events ev;
    act A;
    memset(&A, 0, sizeof A);
    tl_smap_init(&A.agent_idx, 8);
    tl_smap_init(&A.xla_idx, 64);
    tl_arena a;
    tl_arena_init(&a, 1 << 16);
    int rc = pf_events_load(t, &ev, err);
    if (!rc) rc = build_lists(&ev, o, &A, &a, err);
    if (!rc) {
        gpu_stats(&A, o->min_event_ns, &a);
        res->sheets[res->nsheets++] = category_summary(&A, &a);
        res->sheets[res->nsheets++] = xla_top(&A, o->top_xla);
        if (o->kernel_summary) res->sheets[res->nsheets++] = kernel_summary(&A, o, &a);
        if (o->hip_summary) res->sheets[res->nsheets++] = pf_hip_summary(&A.hip, o->hip_summary_group, &a);
        tl_buf names = {0};
        for (size_t g = 0; g < A.nagents; g++) {
            if (g) tl_buf_puts(&names, ", ");
            tl_buf_puts(&names, A.agents[g]);
        }
        res->agents = tl_xstrndup(names.p ? names.p : "", names.n);
        tl_buf_free(&names);
    }
    act_free(&A);
    pf_events_free(&ev);
    tl_arena_free(&a);
    return rc;
}

void tl_pf_activity_result_free(tl_pf_activity_result *res)
{
    for (size_t i = 0; i < res->nsheets; i++) tl_table_free(res->sheets[i]);
    free(res->agents);
    memset(res, 0, sizeof *res);
}
