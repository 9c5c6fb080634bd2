/* pseudo_ops.c — the reference's pseudo ops (--enable_pseudo_ops,
 * Trace2Tree/extensions/pseudo_ops_registry.apply_pseudo_op_extensions,
 * TraceLens main 171dd747): synthetic cpu ops that isolate single kernels
 * of a fused framework op so that each gets its own perf model.
 *
 * Built here: the unfused Triton MoE of vLLM
 * (moe_unfused_triton_pseudo_ops.py), which fires when the trace has a
 * `vllm::moe_forward` op, no `vllm::rocm_aiter_fused_moe` op and some kernel
 * whose name contains "matmul_ogs" (any case). For every moe_forward, the
 * matmul_ogs kernels of its subtree in start order get
 * `pseudo_op::moe_triton_unfused_up` (the first) and
 * `pseudo_op::moe_triton_unfused_down` (the others), and a sole
 * matmul_scatter kernel gets `pseudo_op::moe_triton_unfused_finalize_matmul_scatter`.
 * A pseudo op carries the moe_forward's shapes, its sequence number (the
 * moe_forward's position when it has none), the kernel's correlation as
 * External id, "Pseudo op": true and the MoE args (GEMM type, index, gated
 * — a _swiglu or _glu kernel —, topk from the k of the first TopK op below
 * the moe_forward, 4 without one).
 *
 * The reference appends the pseudo op to its tree's events (UID: their
 * count) as the child of the launch call's parent with the launch call as
 * its child, without re-parenting the launch call. Here it is a cpu op
 * with the launch call's span, appended after the source's events with
 * the reference's UID; the source's tree is pinned on the copied events
 * (inf_pin_source_tree), the pseudo op under the launch call's parent and
 * the launch call under the pseudo op, so that the launch call's kernels
 * are the pseudo op's. The PyTorch report passes over ops named
 * pseudo_op:: when it looks for a kernel's launcher and gives them no
 * duration, as the reference (whose pseudo op has no ts/dur) does. The
 * result is a derived trace (inference.h) stored beside the source. */
#include "query/inference/inference.h"
#include "query/inference/inference_internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int contains_nocase(const char *s, const char *needle)
{
    size_t k = strlen(needle);
    for (; *s; s++) {
        size_t j = 0;
        while (j < k && s[j] && tolower((unsigned char)s[j]) == needle[j]) j++;
        if (j == k) return 1;
    }
    return 0;
}

static int named(const tl_trace *t, size_t i, const char *name) { return !strcmp(tl_trace_str(t, t->name[i]), name); }

/* The creator's gate of apply_pseudo_op_extensions. */
static int moe_triton_fires(const tl_trace *t)
{
    int moe = 0, aiter = 0, ogs = 0;
    for (size_t i = 0; i < t->n; i++) {
        if (named(t, i, "vllm::moe_forward")) moe = 1;
        else if (named(t, i, "vllm::rocm_aiter_fused_moe")) aiter = 1;
        else if (t->kind[i] == TL_K_KERNEL && contains_nocase(tl_trace_str(t, t->name[i]), "matmul_ogs")) ogs = 1;
    }
    return moe && !aiter && ogs;
}

/* The cpu op of the moe_forward whose subtree holds GPU event k (its
 * launch call's nearest moe_forward ancestor), or -1. */
static int32_t moe_of(const tl_trace *t, size_t k)
{
    int32_t r = t->parent[k];
    if (r < 0) return -1;
    for (int32_t a = t->parent[r]; a >= 0; a = t->parent[a])
        if (t->kind[a] == TL_K_CPU_OP && named(t, (size_t)a, "vllm::moe_forward")) return a;
    return -1;
}

/* k of the first TopK op below moe m (python functions included), 4 when
 * none has an integer second concrete input. */
static int64_t moe_topk(const tl_trace *t, int32_t m)
{
    int64_t best_ts = INT64_MAX, k = 4;
    for (size_t i = 0; i < t->n; i++) {
        if (t->kind[i] != TL_K_CPU_OP || !strstr(tl_trace_str(t, t->name[i]), "TopK") || t->ts[i] >= best_ts)
            continue;
        int32_t a = t->parent_py[i];
        while (a >= 0 && a != m) a = t->parent_py[a];
        if (a != m) continue;
        /* Concrete Inputs ['', '4', ...]: the second string */
        const char *ci = t->concrete[i] ? tl_trace_str(t, t->concrete[i]) : NULL;
        const char *q = ci ? strchr(ci, ',') : NULL;
        q = q ? strchr(q, '"') : NULL;
        if (!q) continue;
        char *end;
        long long v = strtoll(q + 1, &end, 10);
        if (end == q + 1 || *end != '"') continue;
        best_ts = t->ts[i];
        k = v;
    }
    return k;
}

typedef struct pseudo {
    int32_t kernel, launch, moe;
    const char *name;
    const char *gemm_type; /* "up", "down", "finalize_matmul_scatter" */
    int index, gated;
    int64_t topk;
} pseudo;

typedef TL_VEC(pseudo) pseudo_vec;

static int by_kernel_ts(const void *x, const void *y, const tl_trace *t)
{
    const pseudo *a = x, *b = y;
    if (t->ts[a->kernel] != t->ts[b->kernel]) return t->ts[a->kernel] < t->ts[b->kernel] ? -1 : 1;
    return a->kernel < b->kernel ? -1 : a->kernel > b->kernel;
}

/* The pseudo ops of one moe_forward m from its kernels ks[0..nk) (row
 * order), appended to out; taken marks launch calls that have one. */
static void moe_pseudo_ops(const tl_trace *t, int32_t m, const int32_t *ks, size_t nk, pseudo_vec *out,
                           uint8_t *taken)
{
    size_t first = out->n, nscatter = 0;
    int32_t scatter = -1;
    for (size_t j = 0; j < nk; j++) {
        const char *kn = tl_trace_str(t, t->name[ks[j]]);
        if (contains_nocase(kn, "matmul_scatter")) {
            nscatter++;
            scatter = ks[j];
        }
        if (t->kind[ks[j]] != TL_K_KERNEL || !contains_nocase(kn, "matmul_ogs")) continue;
        pseudo p = {.kernel = ks[j], .launch = t->parent[ks[j]], .moe = m};
        p.gated = contains_nocase(kn, "_swiglu") || contains_nocase(kn, "_glu");
        tl_vec_push(out, p);
    }
    if (out->n == first) return;
    int64_t topk = moe_topk(t, m);
    /* insertion sort by kernel start (a handful per op) */
    for (size_t a = first + 1; a < out->n; a++)
        for (size_t b = a; b > first && by_kernel_ts(&out->v[b], &out->v[b - 1], t) < 0; b--) {
            pseudo x = out->v[b];
            out->v[b] = out->v[b - 1];
            out->v[b - 1] = x;
        }
    for (size_t a = first; a < out->n; a++) {
        pseudo *p = &out->v[a];
        p->index = (int)(a - first);
        p->gemm_type = p->index == 0 ? "up" : "down";
        p->name = p->index == 0 ? "pseudo_op::moe_triton_unfused_up" : "pseudo_op::moe_triton_unfused_down";
        p->topk = topk;
    }
    if (nscatter == 1) {
        pseudo p = {.kernel = scatter, .launch = t->parent[scatter], .moe = m, .index = -1, .topk = -1,
                    .gemm_type = "finalize_matmul_scatter",
                    .name = "pseudo_op::moe_triton_unfused_finalize_matmul_scatter"};
        tl_vec_push(out, p);
    }
    /* one pseudo op per launch call (the reference cannot move a launch
     * call twice either) */
    size_t k = first;
    for (size_t a = first; a < out->n; a++) {
        int32_t l = out->v[a].launch;
        if (l < 0 || taken[l]) continue;
        taken[l] = 1;
        out->v[k++] = out->v[a];
    }
    out->n = k;
}

/* All pseudo ops of t, in moe_forward order; *n their count (malloc'd). */
static pseudo *find_pseudo_ops(const tl_trace *t, size_t *n)
{
    *n = 0;
    if (!moe_triton_fires(t)) return NULL;
    size_t nz = t->n ? t->n : 1;
    /* GPU events grouped by their moe_forward, rows in order */
    int32_t *moe = tl_xmalloc(nz * sizeof *moe);
    size_t *cnt = tl_xcalloc(nz + 1, sizeof *cnt);
    for (size_t i = 0; i < t->n; i++) {
        moe[i] = tl_kind_is_gpu(t->kind[i]) ? moe_of(t, i) : -1;
        if (moe[i] >= 0) cnt[moe[i] + 1]++;
    }
    for (size_t i = 0; i < t->n; i++) cnt[i + 1] += cnt[i];
    int32_t *ks = tl_xmalloc((cnt[t->n] ? cnt[t->n] : 1) * sizeof *ks);
    size_t *fill = tl_xmalloc(nz * sizeof *fill);
    memcpy(fill, cnt, t->n * sizeof *fill);
    for (size_t i = 0; i < t->n; i++)
        if (moe[i] >= 0) ks[fill[moe[i]]++] = (int32_t)i;
    uint8_t *taken = tl_xcalloc(nz, 1);
    pseudo_vec out = {0};
    for (size_t m = 0; m < t->n; m++)
        if (cnt[m + 1] > cnt[m]) moe_pseudo_ops(t, (int32_t)m, ks + cnt[m], cnt[m + 1] - cnt[m], &out, taken);
    free(taken);
    free(fill);
    free(ks);
    free(cnt);
    free(moe);
    *n = out.n;
    return out.v;
}

size_t tl_pseudo_ops(const tl_trace *t)
{
    size_t n;
    free(find_pseudo_ops(t, &n));
    return n;
}

uint64_t tl_pseudo_ops_id(const tl_trace *t)
{
    return tl_hash64(&t->id, sizeof t->id, tl_hash64("pseudo-ops-2", 12, 0));
}

static const char *raw(const tl_trace *t, uint32_t sid) { return sid ? tl_trace_str(t, sid) : "null"; }

/* The pseudo op of p as an event with uid and the launch call's span. */
static void pseudo_event(tl_build *b, const tl_trace *t, const pseudo *p, uint32_t uid, tl_buf *args)
{
    tl_ev_in e;
    tl_event_in(b, t, (size_t)p->launch, &e);
    int32_t m = p->moe;
    int64_t seq = t->seq[m] != TL_NONE ? t->seq[m] : (int64_t)t->uid[m];
    e.uid = uid;
    e.name = tl_build_str(b, p->name, strlen(p->name));
    e.cat = tl_build_str(b, "cpu_op", 6);
    e.kind = TL_K_CPU_OP;
    e.corr = e.stream = e.device = e.fwd_tid = TL_NONE;
    e.ext_id = t->corr[p->kernel];
    e.seq = seq;
    e.in_dims = tl_restr(b, t, t->in_dims[m]);
    e.in_type = tl_restr(b, t, t->in_type[m]);
    e.in_strides = tl_restr(b, t, t->in_strides[m]);
    e.concrete = tl_restr(b, t, t->concrete[m]);
    e.grid = e.block = 0;
    args->n = 0;
    char num[64];
    tl_buf_puts(args, "{\"Input Dims\": ");
    tl_buf_puts(args, raw(t, t->in_dims[m]));
    tl_buf_puts(args, ", \"Input type\": ");
    tl_buf_puts(args, raw(t, t->in_type[m]));
    tl_buf_puts(args, ", \"Input Strides\": ");
    tl_buf_puts(args, raw(t, t->in_strides[m]));
    tl_buf_puts(args, ", \"Concrete Inputs\": ");
    tl_buf_puts(args, raw(t, t->concrete[m]));
    snprintf(num, sizeof num, ", \"Sequence number\": %lld", (long long)seq);
    tl_buf_puts(args, num);
    snprintf(num, sizeof num, ", \"External id\": %lld", (long long)e.ext_id);
    tl_buf_puts(args, num);
    tl_buf_puts(args, ", \"Pseudo op\": true, \"MoE GEMM type\": \"");
    tl_buf_puts(args, p->gemm_type);
    tl_buf_putc(args, '"');
    if (p->index >= 0) {
        snprintf(num, sizeof num, ", \"MoE GEMM index\": %d, \"MoE GEMM gated\": %s, \"MoE topk\": %lld", p->index,
                 p->gated ? "true" : "false", (long long)p->topk);
        tl_buf_puts(args, num);
    }
    tl_buf_putc(args, '}');
    e.args = args->p;
    e.args_len = args->n;
    tl_build_event(b, &e);
}

int tl_pseudo_ops_build(const tl_trace *t, tl_derived *out, tl_err *err)
{
    memset(out, 0, sizeof *out);
    size_t np;
    pseudo *ps = find_pseudo_ops(t, &np);
    tl_build *b = tl_build_new();
    tl_build_set_format(b, "kineto");
    for (size_t i = 0; i < t->n; i++) {
        tl_ev_in e;
        tl_event_in(b, t, i, &e);
        tl_build_event(b, &e);
    }
    inf_pin_source_tree(t, b);
    tl_buf args = {0};
    uint32_t uid_end = inf_uid_end(t);
    for (size_t j = 0; j < np; j++) {
        int32_t l = ps[j].launch;
        uint32_t row = (uint32_t)(t->n + j);
        pseudo_event(b, t, &ps[j], uid_end + (uint32_t)j, &args);
        tl_build_pin_parent(b, row, t->parent[l], t->parent_py[l]);
        tl_build_pin_parent(b, (uint32_t)l, (int32_t)row, (int32_t)row);
    }
    tl_buf_free(&args);
    free(ps);
    return inf_derived_finish(t, b, uid_end + (uint32_t)np, tl_pseudo_ops_id(t), "pseudo-ops",
                              "{\"pseudo_ops\":\"moe_triton_unfused\"", out, err);
}
