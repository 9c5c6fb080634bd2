/* split.c — derived traces: row copying into a builder (shared with the
 * graph-replay merge) and the per-step / steady-state windows of
 * `tracelens split`. A derived trace goes through the same tree builder as
 * an ingested file and comes back unstored (tl_derived): the command layer
 * stores it as ingest stores a file, so every report works on it unchanged. */
#include "query/inference/inference.h"
#include "query/inference/inference_internal.h"
#include "query/inference/split_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ingest/json.h"

static uint32_t rs(tl_build *b, const tl_trace *t, uint32_t sid)
{
    if (!sid) return 0;
    size_t n;
    const char *s = tl_dict_get(&t->dict, sid, &n);
    return s ? tl_build_str(b, s, n) : 0;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* the catalog's "metadata" object -> top-level keys of the new trace */
void inf_catalog_metadata_each(const tl_trace *t,
                               void (*fn)(void *ctx, const char *k, size_t kn, const char *v, size_t vn), void *ctx)
{
    const char *m = t->catalog ? strstr(t->catalog, "\"metadata\":{") : NULL;
    if (!m) return;
    m += strlen("\"metadata\":");
    tl_err err = {0};
    tl_json j;
    tl_json_init_buf(&j, m, strlen(m), "catalog", &err);
    if (tl_json_expect(&j, '{', "object")) return;
    int first = 1;
    const char *k;
    size_t kn;
    while (tl_json_obj_next(&j, &first, &k, &kn) == 0 && k) {
        const char *v;
        size_t vn;
        if (tl_json_skip(&j, &v, &vn)) return;
        fn(ctx, k, kn, v, vn);
    }
}

static void toplevel_into_build(void *ctx, const char *k, size_t kn, const char *v, size_t vn)
{
    tl_build_toplevel(ctx, k, kn, v, vn);
}

static void copy_toplevel(tl_build *b, const tl_trace *t)
{
    inf_catalog_metadata_each(t, toplevel_into_build, b);
}

void tl_event_in(tl_build *b, const tl_trace *t, size_t i, tl_ev_in *e)
{
    memset(e, 0, sizeof *e);
    e->uid = t->uid[i];
    e->ts = t->ts[i];
    e->dur = t->dur[i];
    e->name = rs(b, t, t->name[i]);
    e->cat = rs(b, t, t->cat[i]);
    e->kind = t->kind[i];
    e->pid_is_str = t->idflags[i] & 1;
    e->tid_is_str = (t->idflags[i] >> 1) & 1;
    e->pid = e->pid_is_str ? rs(b, t, (uint32_t)t->pid[i]) : t->pid[i];
    e->tid = e->tid_is_str ? rs(b, t, (uint32_t)t->tid[i]) : t->tid[i];
    e->corr = t->corr[i];
    e->ext_id = t->ext_id[i];
    e->stream = t->stream[i];
    e->device = t->device[i];
    e->seq = t->seq[i];
    e->fwd_tid = t->fwd_tid[i];
    e->in_dims = rs(b, t, t->in_dims[i]);
    e->in_type = rs(b, t, t->in_type[i]);
    e->in_strides = rs(b, t, t->in_strides[i]);
    e->concrete = rs(b, t, t->concrete[i]);
    e->grid = rs(b, t, t->grid[i]);
    e->block = rs(b, t, t->block[i]);
    size_t al;
    const char *a = tl_trace_args(t, i, &al);
    if (a && al) {
        e->args = a;
        e->args_len = al;
    }
}

uint32_t tl_restr(tl_build *b, const tl_trace *t, uint32_t sid) { return rs(b, t, sid); }

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* The copied rows' uids in ascending order, so that a copied row's fresh
 * uid is its rank: its position in the trace written out as Kineto JSON. */
static uint32_t *kept_uids(const tl_trace *t, const uint8_t *keep, const uint8_t *fkeep, size_t *n)
{
    uint32_t *u = tl_xmalloc((t->n + t->nflows + t->nmeta + 1) * sizeof *u);
    size_t k = 0;
    for (size_t i = 0; i < t->n; i++)
        if (!keep || keep[i]) u[k++] = t->uid[i];
    for (size_t f = 0; f < t->nflows; f++)
        if (fkeep[f]) u[k++] = t->f_uid[f];
    for (size_t m = 0; m < t->nmeta; m++) u[k++] = t->m_uid[m];
    qsort(u, k, sizeof *u, cmp_u32);
    *n = k;
    return u;
}

static uint32_t new_uid(const uint32_t *u, size_t n, uint32_t old)
{
    if (!u) return old;
    const uint32_t *p = bsearch(&old, u, n, sizeof *u, cmp_u32);
    return p ? (uint32_t)(p - u) : old;
}

void tl_copy_rows(tl_build *b, const tl_trace *t, const uint8_t *keep, const int64_t *corr, int fresh_uids)
{
    uint8_t *fkeep = tl_xmalloc(t->nflows + 1);
    memset(fkeep, 1, t->nflows + 1);
    if (keep) {
        int64_t *kc = tl_xmalloc((t->n ? t->n : 1) * sizeof *kc);
        size_t nkc = 0;
        for (size_t i = 0; i < t->n; i++)
            if (keep[i] && t->corr[i] != TL_NONE) kc[nkc++] = t->corr[i];
        qsort(kc, nkc, sizeof *kc, cmp_i64);
        for (size_t f = 0; f < t->nflows; f++) fkeep[f] = bsearch(&t->f_id[f], kc, nkc, sizeof *kc, cmp_i64) != NULL;
        free(kc);
    }
    size_t nu = 0;
    uint32_t *u = fresh_uids ? kept_uids(t, keep, fkeep, &nu) : NULL;
    for (size_t i = 0; i < t->n; i++) {
        if (keep && !keep[i]) continue;
        tl_ev_in e;
        tl_event_in(b, t, i, &e);
        e.uid = new_uid(u, nu, e.uid);
        if (corr && corr[i] != TL_NONE) e.corr = corr[i];
        tl_build_event(b, &e);
    }
    for (size_t f = 0; f < t->nflows; f++) {
        if (!fkeep[f]) continue;
        uint8_t ps = t->f_idflags[f] & 1, ts = (t->f_idflags[f] >> 1) & 1;
        tl_build_flow(b, new_uid(u, nu, t->f_uid[f]), (char)t->f_ph[f], rs(b, t, t->f_cat[f]),
                      rs(b, t, t->f_name[f]), t->f_id[f], ps ? rs(b, t, (uint32_t)t->f_pid[f]) : t->f_pid[f],
                      ts ? rs(b, t, (uint32_t)t->f_tid[f]) : t->f_tid[f], ps, ts, t->f_ts[f]);
    }
    for (size_t m = 0; m < t->nmeta; m++) {
        uint8_t ps = t->m_idflags[m] & 1, ts = (t->m_idflags[m] >> 1) & 1, ht = (t->m_idflags[m] >> 2) & 1;
        const char *a = NULL;
        size_t al = 0;
        if (t->m_args.offsets && m < t->m_args.n) {
            a = t->m_args.bytes + t->m_args.offsets[m];
            al = (size_t)(t->m_args.offsets[m + 1] - t->m_args.offsets[m]);
        }
        tl_build_meta(b, new_uid(u, nu, t->m_uid[m]), rs(b, t, t->m_name[m]),
                      ps ? rs(b, t, (uint32_t)t->m_pid[m]) : t->m_pid[m],
                      ts ? rs(b, t, (uint32_t)t->m_tid[m]) : t->m_tid[m], ps, ts, ht, al ? a : NULL, al);
    }
    copy_toplevel(b, t);
    free(u);
    free(fkeep);
}

size_t tl_split_windows(const tl_trace *t, int steady, tl_window **out)
{
    tl_steps s;
    tl_steps_find(t, &s);
    if (!s.n) {
        tl_steps_free(&s);
        tl_steps_find_profiler(t, &s);
    }
    *out = NULL;
    if (!s.n) {
        tl_steps_free(&s);
        return 0;
    }
    tl_window *w = tl_xmalloc((s.n + 3) * sizeof *w);
    size_t nw = 0;
    if (!steady) {
        for (size_t i = 0; i < s.n; i++) {
            const tl_step *st = &s.v[i];
            w[nw++] = (tl_window){st->cpu_ts, st->cpu_end, st->gpu_lo, st->gpu_hi, st->kind,
                                  st->bs, st->tokens, i, 1, NULL};
        }
    } else {
        nw = sc_steps_steady(&s, w);
    }
    tl_steps_free(&s);
    *out = w;
    return nw;
}

const char *tl_split_step_label(int kind)
{
    return kind == TL_STEP_PREFILL_ONLY  ? "prefill"
           : kind == TL_STEP_DECODE_ONLY ? "decode"
           : kind == TL_STEP_DIFFUSION   ? "diffusion"
           : kind == TL_STEP_PROFILER    ? "profiler_step"
                                         : "prefilldecode";
}

void tl_derived_free(tl_derived *d)
{
    if (d->build) tl_build_free(d->build);
    d->build = NULL;
}

uint64_t tl_split_id(const tl_trace *t, const tl_window *w, int steady)
{
    uint64_t h = tl_hash64("split", 5, 0);
    h = tl_hash64(&t->id, sizeof t->id, h);
    int64_t wk[5] = {w->host_lo, w->host_hi, w->gpu_lo, w->gpu_hi, w->kind};
    h = tl_hash64(wk, sizeof wk, h);
    if (w->label) h = tl_hash64(w->label, strlen(w->label), h); /* steady windows may share steps */
    return tl_hash64(&steady, sizeof steady, h);
}

/* The catalog facts of a window: labels (step kind, batch size, parent,
 * window) and the parent's path with a "#step<N>" suffix, or for a steady
 * window "#<label>-<N>" (label as the reference's file names). */
static void split_facts(const tl_trace *t, const tl_window *w, int steady, tl_derived *d)
{
    char idhex[17];
    snprintf(idhex, sizeof idhex, "%016llx", (unsigned long long)t->id);
    snprintf(d->labels, sizeof d->labels,
             "{\"step\":\"%s\",\"kind\":\"%s\",\"bs\":\"%lld\",\"tokens\":\"%lld\",\"parent\":\"%s\","
             "\"window\":\"%s %zu-%zu\",\"steps\":\"%zu\"}",
             tl_split_step_label(w->kind), tl_step_kind_name(w->kind), (long long)w->bs, (long long)w->tokens, idhex,
             w->label ? w->label : "step", w->first_step, w->first_step + w->nsteps - 1, w->nsteps);
    const char *pp = NULL;
    char pbuf[2048] = "";
    if (t->catalog && (pp = strstr(t->catalog, "\"path\":\""))) {
        pp += 8;
        size_t k = 0;
        while (pp[k] && pp[k] != '"' && k + 1 < sizeof pbuf) {
            pbuf[k] = pp[k];
            k++;
        }
        pbuf[k] = 0;
    }
    snprintf(d->path, sizeof d->path, "%s#%s%s%zu", pbuf, w->label ? w->label : "step", w->label ? "-" : "",
             w->first_step);
    d->info = (tl_build_info){.id = tl_split_id(t, w, steady), .path = d->path,
                              .format = t->format ? t->format : "kineto", .rank = -1, .labels_json = d->labels};
}

/* Keeps the launch call of every kept GPU row (the host row with its
 * correlation id) and the CPU ops and Python frames around it, wherever they
 * lie in time. A graph-replay merge hangs the capturing ops of replayed
 * kernels under the graph launch, whose ancestors can end after the step's
 * host interval; without them the piece's kernels would lose the ops that
 * launched them. */
static void keep_launch_chains(const tl_trace *t, uint8_t *keep)
{
    int64_t *kc = tl_xmalloc((t->n ? t->n : 1) * sizeof *kc);
    size_t nkc = 0;
    for (size_t i = 0; i < t->n; i++)
        if (keep[i] && tl_kind_is_gpu(t->kind[i]) && t->corr[i] != TL_NONE) kc[nkc++] = t->corr[i];
    qsort(kc, nkc, sizeof *kc, cmp_i64);
    for (size_t i = 0; i < t->n; i++) {
        if (keep[i] || tl_kind_is_gpu(t->kind[i]) || t->corr[i] == TL_NONE) continue;
        if (!bsearch(&t->corr[i], kc, nkc, sizeof *kc, cmp_i64)) continue;
        keep[i] = 1;
        for (int32_t j = t->parent ? t->parent[i] : -1; j >= 0 && !keep[j]; j = t->parent[j]) keep[j] = 1;
        for (int32_t j = t->parent_py ? t->parent_py[i] : -1; j >= 0; j = t->parent_py[j]) keep[j] = 1;
    }
    free(kc);
}

int tl_split_build(const tl_trace *t, const tl_window *w, int steady, tl_derived *out, tl_err *err)
{
    memset(out, 0, sizeof *out);
    uint8_t *keep = tl_xmalloc(t->n ? t->n : 1);
    for (size_t i = 0; i < t->n; i++) {
        int64_t a = t->ts[i], e = t->ts[i] + t->dur[i];
        keep[i] = tl_kind_is_gpu(t->kind[i]) || t->kind[i] == TL_K_GPU_ANNOTATION
                      ? (w->gpu_lo <= w->gpu_hi && a >= w->gpu_lo && a <= w->gpu_hi)
                      : (a >= w->host_lo && e <= w->host_hi);
    }
    keep_launch_chains(t, keep);
    tl_build *b = tl_build_new();
    tl_build_set_format(b, t->format ? t->format : "kineto");
    tl_copy_rows(b, t, keep, NULL, 1);
    inf_pin_kept_tree(t, b, keep);
    free(keep);
    int rc = tl_build_tree(b, err);
    if (rc) {
        tl_build_free(b);
        return rc;
    }
    out->build = b;
    split_facts(t, w, steady, out);
    return 0;
}
