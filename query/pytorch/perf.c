/* perf.c — the perf-model ("roofline") sheet families of the
 * PyTorch report (spec pytorch-report.md §7, §9.6): collects every event
 * whose name has a model, with its forward kernel set (its subtree) and
 * backward kernel set (the subtrees of its linked backward events), and
 * hands them to the perf-model module (query/perfmodel/perfmodel.h), which evaluates
 * the models and lays out the sheets. Also builds the same per-event
 * instance for unified_perf_summary. */
#include "query/pytorch/pytorch_internal.h"
#include "query/core/stats.h"
#include "query/perfmodel/perfmodel.h"
#include "query/pytorch/plugin.h"

#include <stdlib.h>

static const char *arg_raw(pyt_ctx *c, uint32_t sid)
{
    if (!sid || sid >= c->t->dict.n) return NULL;
    return tl_trace_str(c->t, sid);
}

/* Sorts a kernel set's rows by start time and returns its busy time. */
static double sort_kset(pyt_ctx *c, int32_t *rows, size_t n)
{
    pyt_sort_rows_by_ts(c, rows, n);
    return n ? pyt_busy(c, rows, n) : 0;
}

/* GPU events of the backward subtree of row (§4.6): the subtrees of the
 * bwd events of row and of all its descendants, deduplicated, appended to
 * (*out)[n0 ..]. Returns how many. */
static size_t bwd_gpu(pyt_ctx *c, int32_t row, int32_t **out, size_t n0, size_t *cap, uint8_t *mark)
{
    size_t n = n0;
    int32_t *tmp = NULL;
    size_t tn = 0, tcap = 0;
    for (uint32_t q = c->pos[row]; q < c->end[row]; q++) {
        int32_t b = pyt_bwd_of(c, c->order[q]);
        if (b < 0) continue;
        pyt_subtree_gpu(c, b, &tmp, &tn, &tcap);
        for (size_t i = 0; i < tn; i++) {
            if (mark[tmp[i]]) continue;
            mark[tmp[i]] = 1;
            if (n == *cap) {
                *cap = *cap ? *cap * 2 : 64;
                *out = tl_xrealloc(*out, *cap * sizeof **out);
            }
            (*out)[n++] = tmp[i];
        }
    }
    for (size_t i = n0; i < n; i++) mark[(*out)[i]] = 0;
    free(tmp);
    return n - n0;
}

static _Thread_local const int64_t *g_ann_ts;
static int cmp_ann(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    if (g_ann_ts[x] != g_ann_ts[y]) return g_ann_ts[x] < g_ann_ts[y] ? -1 : 1;
    return x < y ? -1 : x > y;
}

/* The step annotation of an attention call, as the reference attaches it
 * (apply_annotation) to the events named by a prefix of
 * tl_pyt_opts.annotated_ops (the default report: every
 * vllm::unified_attention_with_output* event): the name of the first user
 * annotation (CPU or GPU, by start time) with ts_a <= ts_e and
 * ts_e + dur_e < ts_a + dur_a, else "NA". Its InferenceAttention model reads
 * the sq/sk aggregates from that text. Other events get none (NULL). */
static const char *step_annotation(pyt_ctx *c, int32_t row)
{
    static const char *const dflt[] = {"vllm::unified_attention_with_output", NULL};
    const char *const *pre = c->o->annotated_ops ? c->o->annotated_ops : dflt;
    const char *nm = pyt_name(c, row);
    size_t k = 0;
    while (pre[k] && strncmp(nm, pre[k], strlen(pre[k])) != 0) k++;
    if (!pre[k]) return NULL;
    const tl_trace *t = c->t;
    if (!c->ann_done) {
        c->ann_done = 1;
        c->ann_rows = tl_xcalloc(c->n ? c->n : 1, sizeof *c->ann_rows);
        for (size_t i = 0; i < c->n; i++)
            if (t->kind[i] == TL_K_USER_ANNOTATION || t->kind[i] == TL_K_GPU_ANNOTATION)
                c->ann_rows[c->n_ann++] = (int32_t)i;
        g_ann_ts = t->ts;
        qsort(c->ann_rows, c->n_ann, sizeof *c->ann_rows, cmp_ann);
    }
    int64_t ts = t->ts[row], end = ts + tl_trace_dur(t, row);
    for (size_t k = 0; k < c->n_ann; k++) {
        int32_t a = c->ann_rows[k];
        if (t->ts[a] > ts) break; /* sorted by start: no later one encloses it */
        if (end < t->ts[a] + tl_trace_dur(t, a)) return pyt_name(c, a);
    }
    return "NA";
}

/* The fields of row's event that few instances have (Reduce ops' output
 * type, attention calls' step annotation, pseudo ops' args), in the
 * context's arena; NULL when it has none. */
static const tl_pm_extra *build_extra(pyt_ctx *c, int32_t row)
{
    tl_pm_extra x = {.ov_pct = NAN};
    const tl_pm_op *op = pyt_pm_op(c, row);
    if (op && !strcmp(op->family, "Reduce")) {
        size_t len, vl;
        const char *args = pyt_args(c, row, &len);
        const char *v = tl_args_get(args, len, TL_ARG_OUTPUT_TYPE, &vl);
        if (v) x.output_type = tl_arena_strndup(&c->arena, v, vl);
    }
    x.annotation = step_annotation(c, row);
    if (!strncmp(pyt_name(c, row), "pseudo_op::", 11)) {
        size_t len;
        const char *args = pyt_args(c, row, &len);
        if (args) x.pseudo_args = tl_arena_strndup(&c->arena, args, len);
    }
    if (!x.output_type && !x.annotation && !x.pseudo_args) return NULL;
    tl_pm_extra *e = tl_arena_alloc(&c->arena, sizeof *e);
    *e = x;
    return e;
}

/* Builds row's instance into *in; its kernel handles (the event rows) and
 * extra fields live in the context's arena. */
static int build_instance(pyt_ctx *c, int32_t row, tl_pm_instance *in)
{
    if (!c->pm_mark) c->pm_mark = tl_xcalloc(c->n ? c->n : 1, 1); /* bwd_gpu's dedup marks */
    memset(in, 0, sizeof *in);
    in->row = row;
    in->extra = build_extra(c, row);
    int32_t *rows = NULL;
    size_t nf = 0, nb = 0, cap = 0;
    pyt_subtree_gpu(c, row, &rows, &nf, &cap);
    in->fwd_time_us = sort_kset(c, rows, nf);
    in->has_bwd_events = pyt_bwd_of(c, row) >= 0;
    if (in->has_bwd_events) {
        nb = bwd_gpu(c, row, &rows, nf, &cap, c->pm_mark);
        in->bwd_time_us = sort_kset(c, rows + nf, nb);
    }
    if (nf + nb) {
        int32_t *k = tl_arena_alloc(&c->arena, (nf + nb) * sizeof *k);
        memcpy(k, rows, (nf + nb) * sizeof *k);
        in->k = k;
    }
    in->nfwd = (uint32_t)nf;
    in->nbwd = (uint32_t)nb;
    in->is_recompute = (int8_t)(c->recompute ? c->recompute[row] : -1);
    free(rows);
    return 0;
}

/* The event fields of an instance read from the trace alone (no context
 * cache, so any thread may call it); process and thread names are left
 * NULL. */
static void trace_fields(const tl_trace *t, int32_t row, tl_pm_fields *f)
{
    memset(f, 0, sizeof *f);
    f->name = tl_trace_str(t, t->name[row]);
    f->uid = t->uid[row];
    uint32_t sid[4] = {t->in_dims[row], t->in_type[row], t->in_strides[row], t->concrete[row]};
    const char **dst[4] = {&f->input_dims, &f->input_type, &f->input_strides, &f->concrete_inputs};
    for (int i = 0; i < 4; i++) *dst[i] = sid[i] && sid[i] < t->dict.n ? tl_trace_str(t, sid[i]) : NULL;
    f->seq = tl_trace_seq(t, row);
    f->has_seq = f->seq != TL_NONE;
}

void pyt_pm_fields(const pyt_ctx *c, const tl_pm_instance *in, tl_pm_fields *f)
{
    trace_fields(c->t, in->row, f);
}

/* The instance cache, for the modelled events only (a small share of all
 * events): the perf job's instances in row order, then a map for the rows
 * asked for outside the job (Inductor Triton kernels, plugin models). */
static tl_pm_instance *pm_cached(const pyt_ctx *c, int32_t row)
{
    size_t lo = 0, hi = c->pm_nsorted;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c->pm_sorted[mid].row < row) lo = mid + 1;
        else hi = mid;
    }
    if (lo < c->pm_nsorted && c->pm_sorted[lo].row == row) return (tl_pm_instance *)&c->pm_sorted[lo];
    const size_t *v = tl_imap_get(&c->pm_inst, (uint64_t)row);
    return v ? (tl_pm_instance *)(uintptr_t)*v : NULL;
}

static void pm_cache_put(pyt_ctx *c, int32_t row, tl_pm_instance *in)
{
    *tl_imap_put(&c->pm_inst, (uint64_t)row, NULL) = (size_t)(uintptr_t)in;
}

const tl_pm_instance *pyt_pm_instance(pyt_ctx *c, int32_t row)
{
    /* built once per event: unified_perf_summary and the perf sheets both
     * need the kernel sets of the same ops */
    tl_pm_instance *in = pm_cached(c, row);
    if (!in) {
        in = tl_arena_alloc(&c->arena, sizeof *in);
        build_instance(c, row, in);
        pm_cache_put(c, row, in);
    }
    return in;
}

/* The perf-model family sheets need only the instances (in row order; the
 * context's cache is this array) and the perf-model module, never the
 * context: they are built on a worker thread (pyt_perf_launch) while the
 * caller goes on with the sheets after unified_perf_summary (the
 * instances are built first, on the caller's thread, since that fills the
 * context's cache). */
/* An event's process and thread names by its (pid, tid, id flags), for
 * the sheets' worker (pyt_meta_names interns on the context). */
typedef struct pm_meta {
    int64_t pid, tid;
    int64_t fl;
    const char *pname, *plabel, *tname;
} pm_meta;

struct pyt_perf_job {
    const tl_trace *t;
    tl_pm_source src;     /* the sheets' view of the trace: this job */
    pm_meta *meta;        /* sorted by (pid, tid, fl) */
    size_t nmeta;
    tl_pm_instance *inst; /* row (UID) order */
    int inst_owned_by_ctx; /* inst is in the context's pm_blocks */
    size_t n;
    uint8_t *fam;         /* each instance's family index (the registry has at most 32) */
    size_t *fam_n;        /* instances per family */
    tl_pm_sheet_opts so;
    int kl_overlap;         /* also the _kl_overlap twins (--include_overlap_info) */
    size_t nfam;
    tl_table **fw, **bw;    /* per family */
    tl_table **fwk, **bwk;  /* their _kl_overlap twins */
    int rc;
    tl_err err;
    tl_thread *thr;         /* the sheets' thread, NULL when they ran inline */
    int launched;           /* the sheets are being built or done (pyt_perf_launch) */
};

static int cmp_meta(const void *a, const void *b)
{
    const pm_meta *x = a, *y = b;
    if (x->pid != y->pid) return x->pid < y->pid ? -1 : 1;
    if (x->tid != y->tid) return x->tid < y->tid ? -1 : 1;
    return (x->fl > y->fl) - (x->fl < y->fl);
}

static const char *src_name(const void *src, const tl_pm_instance *in)
{
    const pyt_perf_job *j = src;
    return tl_trace_str(j->t, j->t->name[in->row]);
}

static void src_fields(const void *src, const tl_pm_instance *in, tl_pm_fields *f)
{
    const pyt_perf_job *j = src;
    trace_fields(j->t, in->row, f);
    pm_meta key = {tl_trace_pid(j->t, in->row), tl_trace_tid(j->t, in->row), j->t->idflags[in->row] & 3, 0, 0, 0};
    const pm_meta *m = bsearch(&key, j->meta, j->nmeta, sizeof *j->meta, cmp_meta);
    if (!m) return; /* every instance's pair is listed (pyt_perf_start) */
    f->process_name = m->pname;
    f->process_label = m->plabel;
    f->thread_name = m->tname;
}

static void src_kernel(const void *src, int32_t k, tl_pm_kernel *out)
{
    const tl_trace *t = ((const pyt_perf_job *)src)->t;
    out->name = tl_trace_str(t, t->name[k]);
    out->dur = tl_trace_dur_us(t, (size_t)k);
    out->stream = tl_trace_stream(t, (size_t)k);
    out->has_stream = out->stream != TL_NONE;
}

/* The process and thread names of the job's instances, one entry per
 * distinct (pid, tid, id flags), sorted for src_fields. */
static void collect_meta(pyt_ctx *c, pyt_perf_job *j)
{
    const tl_trace *t = c->t;
    TL_VEC(pm_meta) v = {0};
    tl_bmap seen;
    tl_bmap_init(&seen, 3 * sizeof(int64_t), 64);
    for (size_t i = 0; i < j->n; i++) {
        int32_t row = j->inst[i].row;
        pm_meta m = {tl_trace_pid(t, row), tl_trace_tid(t, row), t->idflags[row] & 3, 0, 0, 0};
        if (v.n && !cmp_meta(&m, &v.v[v.n - 1])) continue; /* consecutive ops mostly share it */
        int isnew;
        tl_bmap_put(&seen, &m, &isnew); /* the key is the struct's first 24 bytes */
        if (!isnew) continue;
        pyt_meta_names(c, row, &m.pname, &m.plabel, &m.tname);
        tl_vec_push(&v, m);
    }
    tl_bmap_free(&seen);
    qsort(v.v, v.n, sizeof *v.v, cmp_meta);
    j->meta = v.v;
    j->nmeta = v.n;
}

static void *perf_worker(void *arg)
{
    pyt_perf_job *j = arg;
    tl_pm_sheet_opts kl = j->so;
    kl.kl_overlap = 1;
    for (size_t f = 0; f < j->nfam && !j->rc; f++) {
        /* the family's instances alone, so that its sheets read only those */
        size_t n = j->fam_n[f], m = 0;
        if (!n) continue;
        tl_pm_instance *in = tl_xmalloc(n * sizeof *in);
        for (size_t i = 0; i < j->n; i++)
            if (j->fam[i] == f) in[m++] = j->inst[i];
        j->rc = tl_pm_family_sheets(tl_pm_family_at(f), &j->src, in, n, &j->so, &j->fw[f], &j->bw[f], &j->err);
        if (!j->rc && j->kl_overlap)
            j->rc = tl_pm_family_sheets(tl_pm_family_at(f), &j->src, in, n, &kl, &j->fwk[f], &j->bwk[f], &j->err);
        free(in);
    }
    return NULL;
}

/* The job's sheet settings and result slots. */
static void job_sheets_init(pyt_ctx *c, pyt_perf_job *j, size_t nfam)
{
    j->kl_overlap = c->o->include_overlap_info;
    j->t = c->t;
    j->src = (tl_pm_source){.src = j, .name = src_name, .fields = src_fields, .kernel = src_kernel};
    collect_meta(c, j);
    j->so.arch = c->o->arch;
    j->so.group_by_num_kernels = c->o->group_by_num_kernels;
    j->so.detect_recompute = c->o->detect_recompute;
    j->so.ctx = tl_pm_ctx_new();
    j->nfam = nfam;
    j->fw = tl_xcalloc(nfam ? nfam : 1, sizeof *j->fw);
    j->bw = tl_xcalloc(nfam ? nfam : 1, sizeof *j->bw);
    j->fwk = tl_xcalloc(nfam ? nfam : 1, sizeof *j->fwk);
    j->bwk = tl_xcalloc(nfam ? nfam : 1, sizeof *j->bwk);
}

pyt_perf_job *pyt_perf_start(pyt_ctx *c)
{
    const tl_trace *t = c->t;
    pyt_perf_job *j = tl_xcalloc(1, sizeof *j);
    size_t nfam = tl_pm_nfamilies();
    /* candidates: every event (any category) whose name has a model, with
     * its family's index (-1: no model), found once per name */
    enum { FAM_UNSEEN = -2 };
    int *famof = tl_xmalloc((t->dict.n ? t->dict.n : 1) * sizeof *famof);
    for (size_t d = 0; d < t->dict.n; d++) famof[d] = FAM_UNSEEN;
    size_t n = 0;
    j->fam_n = tl_xcalloc(nfam ? nfam : 1, sizeof *j->fam_n);
    for (size_t i = 0; i < c->n; i++) {
        uint32_t id = t->name[i];
        if (id >= t->dict.n) continue;
        if (famof[id] == FAM_UNSEEN) {
            const char *nm = tl_trace_str(t, id);
            /* a plugin model for the same name replaces the built-in one */
            const tl_pm_op *op = c->o->plugins && tl_plugin_perf_model_for(c->o->plugins, nm) ? NULL : tl_pm_find(nm);
            famof[id] = -1;
            if (op && !pyt_family_wanted(c->o, op->family)) op = NULL;
            for (size_t f = 0; op && f < nfam; f++)
                if (!strcmp(op->family, tl_pm_family_at(f))) { famof[id] = (int)f; break; }
        }
        if (famof[id] >= 0) {
            n++;
            j->fam_n[famof[id]]++;
        }
    }
    if (n) {
        /* built in row order (that fills the context's caches in the order
         * unified_perf_summary uses); the worker reads each family's apart */
        j->inst = tl_big_alloc(n * sizeof *j->inst);
        j->fam = tl_xmalloc(n);
        int32_t *lj = c->o->include_overlap_info ? pyt_launcher_index(c) : NULL;
        size_t k = 0;
        for (size_t i = 0; i < c->n; i++) {
            uint32_t id = t->name[i];
            if (id >= t->dict.n || famof[id] < 0) continue;
            tl_pm_instance *slot = &j->inst[k];
            j->fam[k++] = (uint8_t)famof[id];
            const tl_pm_instance *had = c->pm_uncached ? NULL : pm_cached(c, (int32_t)i);
            if (had) *slot = *had;
            else build_instance(c, (int32_t)i, slot);
            if (lj) pyt_instance_overlap(c, lj, (int32_t)i, slot);
        }
        if (!c->pm_uncached) {
            /* one copy, shared by the cache and the job (read only from here
             * on, on both threads; the overlap fields are read by the perf
             * sheets alone) */
            c->pm_sorted = j->inst;
            c->pm_nsorted = n;
            tl_vec_push(&c->pm_blocks, j->inst);
            j->inst_owned_by_ctx = 1;
        }
        free(lj);
        j->n = n;
        job_sheets_init(c, j, nfam);
    }
    free(famof);
    return j;
}

void pyt_perf_launch(pyt_ctx *c, pyt_perf_job *j)
{
    if (!j || j->launched) return;
    j->launched = 1;
    if (!j->n) return;
    if (c->o->serial || !(j->thr = tl_thread_start(perf_worker, j))) perf_worker(j);
}

int pyt_perf_finish(pyt_ctx *c, pyt_perf_job *j, tl_pyt_sheets *out, tl_err *err)
{
    if (!j) return 0;
    if (out) pyt_perf_launch(c, j); /* (discarding: no sheets to build) */
    if (j->thr) tl_thread_join(j->thr);
    j->thr = NULL;
    int rc = j->rc;
    for (size_t f = 0; f < j->nfam; f++) {
        /* in family order, each family's _kl_overlap twins after its own
         * sheets (the reference's order) */
        tl_table *ts[4] = {j->fw[f], j->bw[f], j->fwk[f], j->bwk[f]};
        for (int k = 0; k < 4; k++)
            if (ts[k]) { if (out && !rc) pyt_sheets_push(out, ts[k]); else tl_table_free(ts[k]); }
    }
    if (rc && err) *err = j->err;
    if (j->so.ctx) tl_pm_ctx_free(j->so.ctx);
    free(j->fw);
    free(j->bw);
    free(j->fwk);
    free(j->bwk);
    if (!j->inst_owned_by_ctx) tl_big_free(j->inst);
    free(j->meta);
    free(j->fam);
    free(j->fam_n);
    free(j);
    if (!rc && out && c->o->plugins) rc = pyt_sheets_plugin_perf(c, out, err);
    return rc;
}

int pyt_sheets_perf(pyt_ctx *c, tl_pyt_sheets *out, tl_err *err)
{
    return pyt_perf_finish(c, pyt_perf_start(c), out, err);
}

/* ---- perf models registered by plugins (query/pytorch/plugin.h) -------------------
 * A plugin model gives FLOPs, bytes and parameters per instance; the sheet
 * is laid out like a built-in perf sheet (§9.6.3): grouped by name and the
 * parameter texts, the same rate and kernel-time statistics, sorted by
 * total kernel time. */

int pyt_plugin_eval(pyt_ctx *c, const tl_plugin_perf_model *pm, int32_t row, pyt_plugin_metrics *m)
{
    const tl_trace *t = c->t;
    memset(m, 0, sizeof *m);
    double flops = 0, bytes = 0;
    int has_bytes = 0;
    tl_plugin_params *par = tl_arena_zalloc(&c->arena, sizeof *par);
    if (pm->eval(pm->user, arg_raw(c, t->in_dims[row]), arg_raw(c, t->in_type[row]),
                 arg_raw(c, t->in_strides[row]), arg_raw(c, t->concrete[row]), &flops, &bytes, &has_bytes,
                 par))
        return -1;
    if (par->n > 16) par->n = 16;
    const tl_pm_instance *in = pyt_pm_instance(c, row);
    double kt = in->nfwd ? in->fwd_time_us : 0;
    m->params = par;
    m->gflops = flops / 1e9;
    m->has_bytes = has_bytes;
    m->data_mb = has_bytes ? bytes / 1048576.0 : NAN;
    m->fpb = has_bytes && bytes != 0 ? flops / bytes : NAN;
    m->ktime = kt;
    m->tflops = kt != 0 ? (m->gflops / 1e3) / (kt / 1e6) : NAN;
    m->tbs = kt != 0 && has_bytes ? (bytes / 1e12) / (kt / 1e6) : NAN;
    m->cspec = pm->compute_spec ? pm->compute_spec : "";
    tl_buf b = {0};
    tl_buf_putc(&b, '{');
    for (size_t i = 0; i < par->n; i++) {
        if (i) tl_buf_puts(&b, ", ");
        tl_buf_pystr(&b, par->key[i] ? par->key[i] : "", strlen(par->key[i] ? par->key[i] : ""));
        tl_buf_puts(&b, ": ");
        tl_buf_puts(&b, par->val[i]);
    }
    tl_buf_putc(&b, '}');
    m->params_text = par->n ? tl_arena_strndup(&c->arena, b.p, b.n) : NULL;
    tl_buf_free(&b);
    return 0;
}

typedef struct ppgroup {
    const char *name;
    const tl_plugin_params *par;
    TL_VEC(size_t) m;
    double ksum;
    int64_t uid_first;
} ppgroup;

static ppgroup *pp_sort;
static int cmp_pp(const void *a, const void *b)
{
    const ppgroup *x = &pp_sort[*(const size_t *)a], *y = &pp_sort[*(const size_t *)b];
    if (x->ksum != y->ksum) return x->ksum > y->ksum ? -1 : 1;
    return x->uid_first < y->uid_first ? -1 : x->uid_first > y->uid_first;
}

/* The sheet a plugin perf model writes to: its own name, else
 * <category>_plugin. */
static void plugin_sheet_name(const tl_plugin_perf_model *pm, char *out, size_t n)
{
    snprintf(out, n, "%s", pm->sheet ? pm->sheet : "");
    if (!out[0]) snprintf(out, n, "%s_plugin", pm->category);
}

/* mean, median, std, min, max (and sum when ncols is 6) of x[0..n) into
 * row r's columns cols. */
static void set_stats(tl_table *t, size_t r, const size_t *cols, int ncols, double *x, size_t n)
{
    pyt_stats s;
    pyt_stats_of(x, n, &s);
    double v[6] = {s.mean, s.median, s.std, s.min, s.max, s.sum};
    for (int k = 0; k < ncols; k++) tl_table_set_f64(t, cols[k], r, v[k]);
}

/* The kernel details of a group: each instance's kernels (its subtree)
 * sorted by ts. kl, kr: room for the group's instances. */
static void group_kdetails(pyt_ctx *c, const int32_t *rows, const ppgroup *G, pyt_klist *kl, int32_t **kr,
                           tl_arena *arena, const char **ks, const char **kt)
{
    size_t n = G->m.n;
    for (size_t q = 0; q < n; q++) {
        int32_t *rr = NULL;
        size_t rn = 0, rcap = 0;
        pyt_subtree_gpu(c, rows[G->m.v[q]], &rr, &rn, &rcap);
        pyt_sort_rows_by_ts(c, rr, rn);
        kr[q] = rr;
        kl[q].rows = rr;
        kl[q].n = rn;
    }
    pyt_kdetails(c, kl, n, arena, ks, kt);
    for (size_t q = 0; q < n; q++) { free(kr[q]); kr[q] = NULL; }
}

typedef TL_VEC(const char *) strlist;

/* Groups the instances (metrics ms, event rows) by name and parameter texts
 * into g (first-seen order); keys gets every parameter name, first-seen
 * order. Returns the group count. */
static size_t group_instances(pyt_ctx *c, const pyt_plugin_metrics *ms, const int32_t *rows, size_t nms,
                              strlist *keys, ppgroup *g)
{
    size_t ng = 0;
    tl_smap gm;
    tl_smap_init(&gm, nms);
    tl_buf kb = {0};
    for (size_t i = 0; i < nms; i++) {
        const tl_plugin_params *p = ms[i].params;
        for (size_t k = 0; k < p->n; k++) {
            int have = 0;
            for (size_t q = 0; q < keys->n; q++) if (!strcmp(keys->v[q], p->key[k])) have = 1;
            if (!have) tl_vec_push(keys, p->key[k]);
        }
    }
    for (size_t i = 0; i < nms; i++) {
        kb.n = 0;
        tl_buf_puts(&kb, pyt_name(c, rows[i]));
        for (size_t q = 0; q < keys->n; q++) {
            tl_buf_putc(&kb, '\x1f');
            const tl_plugin_params *p = ms[i].params;
            const char *v = "nan";
            for (size_t k = 0; k < p->n; k++) if (!strcmp(p->key[k], keys->v[q])) v = p->val[k];
            tl_buf_puts(&kb, v);
        }
        tl_buf_putc(&kb, 0);
        int isnew;
        char *key = tl_arena_strdup(&c->arena, kb.p);
        size_t *slot = tl_smap_put(&gm, key, strlen(key), &isnew);
        if (isnew) {
            *slot = ng;
            g[ng].name = pyt_name(c, rows[i]);
            g[ng].par = ms[i].params;
            g[ng].uid_first = c->t->uid[rows[i]];
            ng++;
        }
        tl_vec_push(&g[*slot].m, i);
    }
    tl_buf_free(&kb);
    tl_smap_free(&gm);
    return ng;
}

int pyt_sheets_plugin_perf(pyt_ctx *c, tl_pyt_sheets *out, tl_err *err)
{
    (void)err;
    const tl_plugin_set *ps = c->o->plugins;
    size_t nm = tl_plugin_nperf_models(ps);
    /* one sheet per distinct sheet name, in registration order */
    for (size_t mi = 0; mi < nm; mi++) {
        const tl_plugin_perf_model *pm = tl_plugin_perf_model_at(ps, mi);
        char sheet[128];
        plugin_sheet_name(pm, sheet, sizeof sheet);
        int dup = 0;
        for (size_t k = 0; k < mi && !dup; k++) {
            const tl_plugin_perf_model *q = tl_plugin_perf_model_at(ps, k);
            char s2[128];
            plugin_sheet_name(q, s2, sizeof s2);
            if (!strcmp(s2, sheet)) dup = 1;
        }
        if (dup) continue;
        /* instances of every model writing to this sheet, UID order */
        TL_VEC(pyt_plugin_metrics) ms = {0};
        TL_VEC(int32_t) rows = {0};
        for (size_t i = 0; i < c->n; i++) {
            const tl_plugin_perf_model *q = tl_plugin_perf_model_for(ps, pyt_name(c, (int32_t)i));
            if (!q) continue;
            char s2[128];
            plugin_sheet_name(q, s2, sizeof s2);
            if (strcmp(s2, sheet)) continue;
            pyt_plugin_metrics m;
            if (pyt_plugin_eval(c, q, (int32_t)i, &m)) continue;
            tl_vec_push(&ms, m);
            tl_vec_push(&rows, (int32_t)i);
        }
        if (!ms.n) { tl_vec_free(&ms); tl_vec_free(&rows); continue; }
        /* group by name + parameter texts */
        ppgroup *g = tl_xcalloc(ms.n, sizeof *g);
        strlist keys = {0};
        size_t ng = group_instances(c, ms.v, rows.v, ms.n, &keys, g);
        double *tmp = tl_xmalloc(ms.n * sizeof *tmp);
        size_t *ord = tl_xmalloc(ng * sizeof *ord);
        for (size_t i = 0; i < ng; i++) {
            for (size_t q = 0; q < g[i].m.n; q++) tmp[q] = ms.v[g[i].m.v[q]].ktime;
            g[i].ksum = tl_sum_kahan(tmp, g[i].m.n);
            ord[i] = i;
        }
        pp_sort = g;
        qsort(ord, ng, sizeof *ord, cmp_pp);
        tl_table *t = tl_table_new(sheet);
        size_t cn = tl_table_add_col(t, "name", TL_STR);
        size_t *cp = tl_xmalloc((keys.n ? keys.n : 1) * sizeof *cp);
        char nmb[160];
        for (size_t q = 0; q < keys.n; q++) {
            snprintf(nmb, sizeof nmb, "param: %s", keys.v[q]);
            cp[q] = tl_table_add_col(t, nmb, TL_STR);
        }
        size_t cgf = tl_table_add_col(t, "GFLOPS_first", TL_F64);
        size_t cdm = tl_table_add_col(t, "Data Moved (MB)_first", TL_F64);
        size_t cfb = tl_table_add_col(t, "FLOPS/Byte_first", TL_F64);
        static const char *const ST[] = {"mean", "median", "std", "min", "max", "sum"};
        size_t ctb[5], ctf[5], ckt[6];
        for (int k = 0; k < 5; k++) { snprintf(nmb, sizeof nmb, "TB/s_%s", ST[k]); ctb[k] = tl_table_add_col(t, nmb, TL_F64); }
        for (int k = 0; k < 5; k++) { snprintf(nmb, sizeof nmb, "TFLOPS/s_%s", ST[k]); ctf[k] = tl_table_add_col(t, nmb, TL_F64); }
        size_t cpn = tl_table_add_col(t, "process_name_first", TL_STR);
        size_t cpl = tl_table_add_col(t, "process_label_first", TL_STR);
        size_t ctn = tl_table_add_col(t, "thread_name_first", TL_STR);
        size_t ccs = tl_table_add_col(t, "Compute Spec", TL_STR);
        size_t cks = tl_table_add_col(t, "kernel_details__summarize_kernel_stats", TL_STR);
        size_t ctr = tl_table_add_col(t, "trunc_kernel_details", TL_STR);
        size_t cdi = tl_table_add_col(t, "Input Dims_first", TL_STR);
        size_t cty = tl_table_add_col(t, "Input type_first", TL_STR);
        size_t cst = tl_table_add_col(t, "Input Strides_first", TL_STR);
        size_t cci = tl_table_add_col(t, "Concrete Inputs_first", TL_STR);
        for (int k = 0; k < 6; k++) { snprintf(nmb, sizeof nmb, "Kernel Time (µs)_%s", ST[k]); ckt[k] = tl_table_add_col(t, nmb, TL_F64); }
        size_t ccount = tl_table_add_col(t, "name_count", TL_I64);
        size_t cuid = tl_table_add_col(t, "UID_first", TL_I64);
        pyt_klist *kl = tl_xmalloc(ms.n * sizeof *kl);
        int32_t **kr = tl_xcalloc(ms.n, sizeof *kr);
        for (size_t oi = 0; oi < ng; oi++) {
            const ppgroup *G = &g[ord[oi]];
            size_t r = tl_table_add_row(t), f = G->m.v[0], n = G->m.n;
            int32_t row0 = rows.v[f];
            tl_table_set_str(t, cn, r, G->name);
            for (size_t q = 0; q < keys.n; q++) {
                const char *v = "nan";
                for (size_t k = 0; k < G->par->n; k++) if (!strcmp(G->par->key[k], keys.v[q])) v = G->par->val[k];
                tl_table_set_str(t, cp[q], r, v);
            }
            const pyt_plugin_metrics *m0 = &ms.v[f];
            tl_table_set_f64(t, cgf, r, m0->gflops);
            tl_table_set_f64(t, cdm, r, m0->data_mb);
            tl_table_set_f64(t, cfb, r, m0->fpb);
            for (size_t q = 0; q < n; q++) tmp[q] = ms.v[G->m.v[q]].tbs;
            set_stats(t, r, ctb, 5, tmp, n);
            for (size_t q = 0; q < n; q++) tmp[q] = ms.v[G->m.v[q]].tflops;
            set_stats(t, r, ctf, 5, tmp, n);
            const char *pn, *pl, *tn;
            pyt_meta_names(c, row0, &pn, &pl, &tn);
            tl_table_set_str(t, cpn, r, pn);
            tl_table_set_str(t, cpl, r, pl);
            tl_table_set_str(t, ctn, r, tn);
            tl_table_set_str(t, ccs, r, m0->cspec);
            const char *ks, *kt;
            group_kdetails(c, rows.v, G, kl, kr, &t->arena, &ks, &kt);
            if (ks) tl_table_set_str_ref(t, cks, r, ks);
            if (kt) tl_table_set_str_ref(t, ctr, r, kt);
            const char *d = pyt_arg_list(c, c->t->in_dims[row0]);
            if (d) tl_table_set_str(t, cdi, r, d);
            if ((d = pyt_arg_list(c, c->t->in_type[row0]))) tl_table_set_str(t, cty, r, d);
            if ((d = pyt_arg_list(c, c->t->in_strides[row0]))) tl_table_set_str(t, cst, r, d);
            if ((d = pyt_arg_list(c, c->t->concrete[row0]))) tl_table_set_str(t, cci, r, d);
            for (size_t q = 0; q < n; q++) tmp[q] = ms.v[G->m.v[q]].ktime;
            set_stats(t, r, ckt, 6, tmp, n);
            tl_table_set_i64(t, ccount, r, (int64_t)n);
            tl_table_set_i64(t, cuid, r, G->uid_first);
        }
        pyt_sheets_push(out, t);
        free(kl);
        free(kr);
        free(cp);
        free(tmp);
        free(ord);
        for (size_t i = 0; i < ng; i++) tl_vec_free(&g[i].m);
        free(g);
        tl_vec_free(&keys);
        tl_vec_free(&ms);
        tl_vec_free(&rows);
    }
    return 0;
}
