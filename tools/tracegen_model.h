/* tracegen_model.h — what tracegen simulates: a data-parallel ViT-style
 * training step (patch-embed conv, transformer blocks with flash SDPA, MoE
 * blocks with all_to_allv, tensor-parallel allreduces, DDP gradient buckets,
 * fused AdamW) on one H100 per rank. This file holds the event records of one
 * step, the shape of the per-rank catalogue of ops/kernels (filled once by
 * tracegen_catalog.h so the hot loop only copies text), the host/GPU timeline
 * primitives and the planted collective formulas. The step itself is scripted
 * in tracegen_step.h; emission and the driver live in tracegen.c.
 *
 * Time is int64 nanoseconds. Every rank shares one "nominal" schedule driven
 * by a seed-only random stream: host times, nominal kernel durations, and the
 * collective start points. Per-rank kernels only ever run *faster* than
 * nominal (stateless jitter), so host syncs, collectives and stream waits,
 * which all use nominal times, are identical on every rank. That is what lets
 * rank 0 write truth.json for every rank while it generates its own file. */
#ifndef TRACEGEN_MODEL_H
#define TRACEGEN_MODEL_H

#include "tools/tracegen_fmt.h"

/* ---------------------------------------------------------------- events */
enum { HK_OP, HK_SEQ, HK_EVAL, HK_UA, HK_PY };

typedef struct hev { /* host X event: cpu_op, user_annotation, python_function */
    int64_t ts, end;
    const char *name, *args;
    uint32_t nlen, alen;
    uint64_t id;     /* External id, or Python id */
    int64_t seq;     /* Sequence number, or Python parent id (-1 = null) */
    int32_t modid;   /* Python module id, -1 none */
    uint8_t kind, fwdtid;
} hev;

enum { GK_KERNEL, GK_MEMCPY, GK_MEMSET };
enum { FLOW_NONE, FLOW_S, FLOW_F };
enum {
    API_LAUNCH, API_LAUNCH_EXC, API_CU_LAUNCH, API_MEMCPY, API_MEMSET, API_EVREC, API_WAITEV,
    API_STREAMSYNC, API_ISCAPT, API_FUNCATTR, API_N
};
static const struct {
    const char *name;
    int cbid;
    uint8_t flow, driver;
    int64_t lo, hi; /* host duration range, ns */
} tg_api[API_N] = {
    {"cudaLaunchKernel", 211, FLOW_S, 0, 2600, 6800},
    {"cudaLaunchKernelExC", 430, FLOW_S, 0, 4200, 11000},
    {"cuLaunchKernel", 307, FLOW_S, 1, 3100, 6400},
    {"cudaMemcpyAsync", 41, FLOW_S, 0, 5200, 14000},
    {"cudaMemsetAsync", 51, FLOW_S, 0, 3100, 8200},
    {"cudaEventRecord", 135, FLOW_F, 0, 1500, 4100},
    {"cudaStreamWaitEvent", 147, FLOW_F, 0, 900, 2900},
    {"cudaStreamSynchronize", 131, FLOW_S, 0, 2000, 5000},
    {"cudaStreamIsCapturing", 317, FLOW_F, 0, 400, 1300},
    {"cudaFuncSetAttribute", 273, FLOW_F, 0, 800, 3100},
};

typedef struct kspec { /* one GPU activity an op launches */
    uint8_t kind, api;
    const char *name, *meta; /* meta: kernel text after the correlation id */
    uint32_t nlen, mlen;
    int64_t dur, bytes; /* nominal ns; bytes for memcpy/memset */
} kspec;

typedef struct rev { /* cuda_runtime / cuda_driver call */
    int64_t ts, dur;
    uint64_t ext, corr;
    uint8_t api, thr;
} rev;

typedef struct gev { /* kernel / gpu_memcpy / gpu_memset */
    int64_t ts, dur;
    const kspec *k;
    const char *coll; /* collective args appended to a NCCL kernel */
    uint32_t clen;
    uint16_t stream;
    uint64_t ext, corr;
} gev;

typedef struct mev { /* [memory] instant */
    int64_t ts, bytes, total, reserved;
    uint64_t addr;
    uint8_t thr;
} mev;

typedef struct gua { /* gpu_user_annotation */
    int64_t ts, dur;
    const char *name;
    uint32_t nlen;
    uint16_t stream;
    uint64_t ext;
} gua;

#define TG_VEC(T) struct { T *v; size_t n, cap; }
#define tg_push(vec)                                                                       \
    (((vec)->n == (vec)->cap                                                               \
          ? ((vec)->cap = (vec)->cap ? (vec)->cap * 2 : 256,                               \
             (vec)->v = tg_xrealloc((vec)->v, (vec)->cap * sizeof *(vec)->v))              \
          : 0),                                                                            \
     memset(&(vec)->v[(vec)->n], 0, sizeof *(vec)->v), &(vec)->v[(vec)->n++])
static void *tg_xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n);
    if (!q) {
        fprintf(stderr, "tracegen: out of memory\n");
        exit(1);
    }
    return q;
}

/* ------------------------------------------------------------- op specs */
typedef struct opspec {
    const char *name, *args; /* args: '"Concrete Inputs": [...], ... "Input Dims": [...]' */
    const char *evname;      /* "autograd::engine::evaluate_function: <name>" for autograd nodes */
    uint32_t nlen, alen, evlen;
    int64_t host;  /* extra host time spent in the op itself, ns */
    int64_t alloc; /* bytes allocated (a [memory] instant), 0 = none */
    const kspec *k[4];
    int nk;
} opspec;

/* argument-block builder: four parallel JSON lists, as Kineto writes them */
typedef struct argb {
    obuf ci, ty, st, di;
    int n;
} argb;
typedef struct shp {
    int nd;
    int64_t d[6];
} shp;
static shp sh1(int64_t a) { return (shp){1, {a}}; }
static shp sh2(int64_t a, int64_t b) { return (shp){2, {a, b}}; }
static shp sh3(int64_t a, int64_t b, int64_t c) { return (shp){3, {a, b, c}}; }
static shp sh4(int64_t a, int64_t b, int64_t c, int64_t d) { return (shp){4, {a, b, c, d}}; }
static shp sh5(int64_t a, int64_t b, int64_t c, int64_t d, int64_t e)
{
    return (shp){5, {a, b, c, d, e}};
}
static shp contig(shp s)
{
    shp r = {s.nd, {0}};
    int64_t m = 1;
    for (int i = s.nd - 1; i >= 0; i--) {
        r.d[i] = m;
        m *= s.d[i];
    }
    return r;
}
static int64_t numel(shp s)
{
    int64_t m = 1;
    for (int i = 0; i < s.nd; i++) m *= s.d[i];
    return m;
}
static void ob_shape(obuf *b, shp s)
{
    ob_reserve(b, 8 + 22 * (size_t)s.nd);
    ob_putc(b, '[');
    for (int i = 0; i < s.nd; i++) {
        if (i) OB_LIT(b, ", ");
        ob_i64(b, s.d[i]);
    }
    ob_putc(b, ']');
}
static void ab_sep(argb *a)
{
    if (a->n++) {
        ob_puts(&a->ci, ", ");
        ob_puts(&a->ty, ", ");
        ob_puts(&a->st, ", ");
        ob_puts(&a->di, ", ");
    }
}
static void ab_q(obuf *b, const char *s) { ob_printf(b, "\"%s\"", s); }
static void ab_ts(argb *a, const char *ty, shp d, shp s)
{
    ab_sep(a);
    ab_q(&a->ci, "");
    ab_q(&a->ty, ty);
    ob_shape(&a->st, s);
    ob_shape(&a->di, d);
}
static void ab_t(argb *a, const char *ty, shp d) { ab_ts(a, ty, d, contig(d)); }
static void ab_s(argb *a, const char *ty, const char *ci) /* scalar / list / none */
{
    ab_sep(a);
    ab_q(&a->ci, ci);
    ab_q(&a->ty, ty);
    ob_puts(&a->st, "[]");
    ob_puts(&a->di, "[]");
}
static void ab_tl1(argb *a, int64_t n) /* TensorList holding one flat tensor */
{
    ab_sep(a);
    ab_q(&a->ci, "");
    ab_q(&a->ty, "TensorList");
    ob_puts(&a->st, "[[1]]");
    ob_printf(&a->di, "[[%lld]]", (long long)n);
}

/* ------------------------------------------------------------ the model */
#define BF16 "c10::BFloat16"
enum { PG_DEFAULT, PG_TP };
enum { CT_ALLREDUCE, CT_BROADCAST, CT_ALLGATHER, CT_REDUCE_SCATTER, CT_ALLTOALLV };

typedef struct collsite {
    int type, pgkind, dsize; /* dsize: bytes per element */
    const char *dtype;
    int64_t in_n, out_n, full_bytes;
    const opspec *c10d, *rpc, *ua;
    const char *uaname;
    uint32_t ualen;
    kspec k;
    const char *coll; /* kernel collective args for this rank */
    uint32_t clen;
} collsite;

typedef struct linspec { /* aten::linear and its backward, one shape */
    opspec linear, t, transpose, as_strided, addmm;
    opspec bnode, mm_dx, mm_dw, sum_db, tnode, tt, agw, agb, det_w, det_b;
    kspec k_fwd, k_dx, k_dw, k_db;
    int64_t wparams;
} linspec;

typedef struct model {
    sarena sa;
    /* identity */
    int rank, world, tp, npg, dev, my_tp_pg, gpn;
    int64_t pid, tid_main, tid_bwd;
    uint64_t seed;
    /* dims */
    int64_t Bt, S, H, NH, HD, F, E, IMG, P, NCLS, L;
    int moe_every;
    /* ops */
    linspec qkv, proj, fc1, fc2, head;
    opspec ln_fwd, ln_nat, ln_bnode, ln_bwd, ln_agw, ln_det;
    opspec view_qkv, permute, unbind, select, sdpa, sdpa_flash, transpose_q, flash_fwd, empty_like,
        empty, attn_tr;
    opspec add_res, add_bnode, gelu, gelu_bnode, gelu_bwd;
    opspec sdpa_bnode, sdpa_bwd, flash_bwd, zeros, zero_, reshape_bnode, reshape_b, tr_bnode, tr_b,
        unbind_bnode, stack, cat, perm_bnode, perm_b, view_bnode, view_b;
    opspec bmm1, bmm2, bmm_view, bmm_bnode, bmm_dx1, bmm_dw1, bmm_dx2, bmm_dw2;
    /* stem/head/loss/optimizer */
    opspec to_in, tocopy_in, empty_strided_in, copy_in;
    opspec conv2d, convolution, _convolution, cudnn_conv, conv_bias, flatten, view_pe, transpose_pe,
        add_pos;
    opspec conv_bnode, conv_bwd, add_pos_bnode, mean_pool, mean_bnode, expand_m, div_m;
    opspec to_f, tocopy_f, copy_f, loss_sum, sum_bnode, expand_s, tocopy_bnode, to_b, tocopy_b,
        copy_b;
    opspec zero_grad_ua, opt_ua, foreach_mul, fused_adamw, item, local_scalar;
    kspec k_ln, k_lnb1, k_lnb2, k_flash, k_add, k_gelu, k_gelub, k_fb1, k_fb2, k_fb3, k_memset_fb,
        k_cat, k_bmm1, k_bmm2, k_bmmb, k_memcpy_in, k_memset_conv, k_n2n, k_fprop, k_n2c, k_cn2n,
        k_wgrad, k_cbsum, k_mean, k_div, k_tof, k_sum, k_fmul, k_adamw, k_dtoh;
    /* collectives: c_bucket[0] dense block, [1] MoE block, [2] head/conv/norms */
    collsite c_bcast, c_agather, c_rscatter, c_tp, c_a2a, c_loss, *c_bucket;
    int nbucket;
    /* python frame names: PYB_* per block, PYS_* static */
    const char **py_block; /* [L * PYB_N] */
    const char *pyn_static[32];
    struct xops *xo; /* further ops (tracegen_catalog.h) */
} model;

enum { /* per-block python frame names */
    PYB_BLOCK, PYB_LN1, PYB_ATTN, PYB_QKV, PYB_PROJ, PYB_LN2, PYB_MLP, PYB_FC1, PYB_GELU, PYB_FC2,
    PYB_N
};
enum {
    PYS_STEP, PYS_LOADER, PYS_DDP, PYS_DDPFWD, PYS_VIT, PYS_VITFWD, PYS_PE, PYS_CONV, PYS_CONVFWD,
    PYS_CONVF, PYS_LNF, PYS_HEAD, PYS_LINFWD, PYS_LNFWD, PYS_BLOCKFWD, PYS_ATTNFWD, PYS_MLPFWD,
    PYS_GELUFWD, PYS_BWD1, PYS_BWD2, PYS_BWD3, PYS_BWD4, PYS_OPT1, PYS_OPT2, PYS_OPT3, PYS_SDPA,
    PYS_MOEFWD, PYS_A2A, PYS_EVAL, PYS_N
};

/* ------------------------------------------------------------- state */
enum { SS_COMP, SS_COPY, SS_N };
static const int tg_stream_id[SS_N] = {7, 13};
#define TG_STREAM_COMM0 22 /* default process group's NCCL stream */
#define TG_STREAM_COMMTP 26

typedef struct gstate { /* everything a step changes; copied to retry a step */
    uint64_t rng;
    int64_t cur[2];
    int64_t nom[SS_N], act[SS_N];
    uint64_t ext, corr, evidx, pyid, seq;
    int64_t step, alloc, reserved;
    int64_t fill_left, fill_q;
    int64_t truth_n;
    int64_t *pg_nom, *pg_act; /* per process group (all groups of the job) */
    int64_t *pg_k;
} gstate;

static void gs_copy(gstate *d, const gstate *s, int npg)
{
    int64_t *a = d->pg_nom, *b = d->pg_act, *c = d->pg_k;
    *d = *s;
    d->pg_nom = a;
    d->pg_act = b;
    d->pg_k = c;
    memcpy(d->pg_nom, s->pg_nom, (size_t)npg * sizeof(int64_t));
    memcpy(d->pg_act, s->pg_act, (size_t)npg * sizeof(int64_t));
    memcpy(d->pg_k, s->pg_k, (size_t)npg * sizeof(int64_t));
}
static void gs_alloc(gstate *g, int npg)
{
    g->pg_nom = calloc((size_t)npg, sizeof(int64_t));
    g->pg_act = calloc((size_t)npg, sizeof(int64_t));
    g->pg_k = calloc((size_t)npg, sizeof(int64_t));
    if (!g->pg_nom || !g->pg_act || !g->pg_k) {
        fprintf(stderr, "tracegen: out of memory\n");
        exit(1);
    }
}
static void gs_free(gstate *g)
{
    free(g->pg_nom);
    free(g->pg_act);
    free(g->pg_k);
}

typedef struct gen {
    const model *m;
    gstate st;
    TG_VEC(hev) ops[2];
    TG_VEC(hev) py;
    TG_VEC(rev) rt;
    TG_VEC(gev) gpu;
    TG_VEC(mev) mem;
    TG_VEC(gua) gua;
    int opstk[2][64], nop[2]; /* open host events (indices into ops[thr]) */
    uint64_t extstk[2][64];
    int next[2];
    int pystk[64], npy;
    int64_t alloc_sites;
    obuf *truth; /* rank 0 only: collective records of this step */
    int L;       /* blocks in this step */
    /* per-step forward sequence numbers, reused by the backward pass */
    int64_t *seqs; /* [L+1][SQ_N] */
} gen;

enum {
    SQ_LN1, SQ_QKV_T, SQ_QKV, SQ_VIEW, SQ_PERM, SQ_UNBIND, SQ_SDPA, SQ_TR, SQ_RESHAPE,
    SQ_PROJ_T, SQ_PROJ, SQ_ADD1, SQ_LN2, SQ_FC1_T, SQ_FC1, SQ_GELU, SQ_FC2_T, SQ_FC2, SQ_ADD2,
    SQ_BMM1, SQ_BMM2, SQ_N
};

/* ---------------------------------------------------- timeline primitives */
static inline int64_t R(gen *g, int64_t lo, int64_t hi) { return tg_range(&g->st.rng, lo, hi); }
static inline void adv(gen *g, int thr, int64_t lo, int64_t hi) { g->st.cur[thr] += R(g, lo, hi); }

static void mem_event(gen *g, int thr, int64_t ts, int64_t bytes)
{
    const model *m = g->m;
    g->st.alloc += bytes;
    int64_t need = (g->st.alloc + (2 << 20) - 1) & ~(int64_t)((2 << 20) - 1);
    if (need > g->st.reserved) g->st.reserved = need;
    mev *e = tg_push(&g->mem);
    e->ts = ts;
    e->bytes = bytes;
    e->total = g->st.alloc;
    e->reserved = g->st.reserved;
    /* addresses differ per rank; stateless so the shared stream is untouched */
    e->addr = 0x7f2a00000000ULL +
              ((tg_mix(m->seed ^ ((uint64_t)m->rank << 40) ^ g->st.evidx ^ (uint64_t)g->mem.n *
                                                                                 0x9e37ULL) &
                0xfffffffULL)
               << 9);
    e->thr = (uint8_t)thr;
}

/* Opens a host event on thread thr at the thread's cursor. */
static int h_open(gen *g, int thr, int kind, const char *name, uint32_t nlen, const char *args,
                  uint32_t alen, int64_t seq, int fwdtid)
{
    hev *e = tg_push(&g->ops[thr]);
    e->ts = g->st.cur[thr];
    e->name = name;
    e->nlen = nlen;
    e->args = args;
    e->alen = alen;
    e->id = ++g->st.ext;
    e->seq = seq;
    e->modid = -1;
    e->kind = (uint8_t)kind;
    e->fwdtid = (uint8_t)fwdtid;
    int idx = (int)(g->ops[thr].n - 1);
    if (kind != HK_UA) g->extstk[thr][g->next[thr]++] = e->id;
    g->opstk[thr][g->nop[thr]++] = idx;
    return idx;
}
static void h_close(gen *g, int thr)
{
    int idx = g->opstk[thr][--g->nop[thr]];
    hev *e = &g->ops[thr].v[idx];
    if (e->kind != HK_UA) g->next[thr]--;
    adv(g, thr, 300, 1400);
    e->end = g->st.cur[thr];
    /* a sibling never starts exactly at this end: readers compute ts + dur in
     * double, which can round past the next ts and look like an overlap */
    adv(g, thr, 150, 700);
}
static void op_open(gen *g, int thr, const opspec *o, int kind, int64_t seq, int fwdtid)
{
    h_open(g, thr, kind, o->name, o->nlen, o->args, o->alen, seq, fwdtid);
    int64_t t0 = g->st.cur[thr];
    adv(g, thr, 600, 2600);
    if (o->alloc > 0) {
        mem_event(g, thr, t0 + 150, o->alloc);
        g->alloc_sites++;
        int64_t q = g->st.fill_left < g->st.fill_q ? g->st.fill_left : g->st.fill_q;
        for (int64_t i = 0; i < q; i++) /* cuBLAS/cuDNN workspace churn (size filler) */
            mem_event(g, thr, t0 + 160 + 5 * i, (i & 1) ? -(4 << 20) : (4 << 20));
        g->st.fill_left -= q;
    }
    g->st.cur[thr] += o->host;
}
static void op_close(gen *g, int thr) { h_close(g, thr); }

static void py_open(gen *g, const char *name, int modid)
{
    hev *e = tg_push(&g->py);
    e->ts = g->st.cur[0];
    e->name = name;
    e->nlen = (uint32_t)strlen(name);
    e->id = ++g->st.pyid;
    e->seq = g->npy ? (int64_t)g->py.v[g->pystk[g->npy - 1]].id : -1;
    e->modid = modid;
    e->kind = HK_PY;
    g->pystk[g->npy++] = (int)(g->py.n - 1);
    adv(g, 0, 400, 2200);
}
static void py_close(gen *g)
{
    hev *e = &g->py.v[g->pystk[--g->npy]];
    adv(g, 0, 300, 1500);
    e->end = g->st.cur[0];
    adv(g, 0, 150, 700);
}

/* A runtime call that is not a launch. */
static rev *rt_call(gen *g, int thr, int api)
{
    rev *r = tg_push(&g->rt);
    r->ts = g->st.cur[thr];
    r->dur = R(g, tg_api[api].lo, tg_api[api].hi);
    r->ext = g->next[thr] ? g->extstk[thr][g->next[thr] - 1] : 0;
    r->corr = ++g->st.corr;
    r->api = (uint8_t)api;
    r->thr = (uint8_t)thr;
    g->st.cur[thr] += r->dur;
    adv(g, thr, 200, 900);
    return r;
}

/* per-rank speed-up of one kernel, in per-mille [0, 30): stateless */
static int64_t rank_jitter(const model *m, uint64_t corr)
{
    return (int64_t)(tg_mix(m->seed * 0x100000001b3ULL ^ ((uint64_t)m->rank << 48) ^ corr) % 30);
}

/* Launches k on stream slot ss; kernel is queued behind the stream's work. */
static void launch(gen *g, int thr, const kspec *k, int ss)
{
    rev *r = rt_call(g, thr, k->api);
    int64_t ready = r->ts + R(g, 2400, 5200);
    int64_t gap = R(g, 700, 1700);
    int64_t ns = g->st.nom[ss] + gap, as = g->st.act[ss] + gap;
    if (ns < ready) ns = ready;
    if (as < ready) as = ready;
    int64_t ad = k->dur - k->dur * rank_jitter(g->m, r->corr) / 1000;
    g->st.nom[ss] = ns + k->dur;
    g->st.act[ss] = as + ad;
    gev *e = tg_push(&g->gpu);
    e->ts = as;
    e->dur = ad;
    e->k = k;
    e->stream = (uint16_t)tg_stream_id[ss];
    e->ext = r->ext;
    e->corr = r->corr;
}
/* Stream dst waits for everything queued on src (cudaStreamWaitEvent). */
static void stream_wait(gen *g, int thr, int dst, int src)
{
    rt_call(g, thr, API_EVREC);
    rt_call(g, thr, API_WAITEV);
    if (g->st.nom[dst] < g->st.nom[src]) g->st.nom[dst] = g->st.nom[src];
    if (g->st.act[dst] < g->st.act[src]) g->st.act[dst] = g->st.act[src];
}
/* Host blocks until stream ss drains (nominal time, identical on all ranks). */
static void host_sync(gen *g, int thr, int ss)
{
    rev *r = tg_push(&g->rt);
    r->ts = g->st.cur[thr];
    int64_t done = g->st.nom[ss] + R(g, 1500, 4000);
    int64_t d = R(g, tg_api[API_STREAMSYNC].lo, tg_api[API_STREAMSYNC].hi);
    if (r->ts + d < done) d = done - r->ts;
    r->dur = d;
    r->ext = g->next[thr] ? g->extstk[thr][g->next[thr] - 1] : 0;
    r->corr = ++g->st.corr;
    r->api = API_STREAMSYNC;
    r->thr = (uint8_t)thr;
    g->st.cur[thr] += d;
    adv(g, thr, 300, 1200);
}

/* A leaf op that launches its kernels on the compute stream. */
static void leaf(gen *g, int thr, const opspec *o, int kind, int64_t seq, int fwdtid)
{
    op_open(g, thr, o, kind, seq, fwdtid);
    for (int i = 0; i < o->nk; i++) {
        const kspec *k = o->k[i];
        launch(g, thr, k, SS_COMP);
    }
    op_close(g, thr);
}
#define LEAF(g, thr, o) leaf((g), (thr), (o), HK_OP, -1, 0)
#define LEAFS(g, thr, o, s) leaf((g), (thr), (o), HK_SEQ, (s), 0)
#define LEAFB(g, thr, o) leaf((g), (thr), (o), HK_OP, -1, 1)

/* ------------------------------------------------- planted collectives */
/* These four functions are the documented contract (docs/TRACEGEN.md,
 * --help); tests recompute them from truth.json. */
static int64_t tg_arrival_ns(int p, int64_t k, int r, int world)
{
    return 1000 * ((7 * k + 3 * r + 5 * p) % 11) + ((world > 1 && r == world - 1) ? 5000 : 0);
}
static int64_t tg_tail_ns(int p, int64_t k, int r) { return 100 * ((k + 3 * r + p) % 7); }
#define TG_TAIL_MAX 600
static int64_t tg_xfer_ns(int type, int64_t full_bytes, int n, int cross_node)
{
    int64_t num, den;
    switch (type) {
    case CT_ALLREDUCE: num = 2 * (n - 1), den = n; break;
    case CT_BROADCAST: num = n > 1 ? 1 : 0, den = 1; break;
    default: num = n - 1, den = n; break;
    }
    int64_t wire = full_bytes * num / den;
    int64_t bw = cross_node ? 45 : 150; /* bytes per ns = GB/s */
    return 6000 + (wire + bw - 1) / bw;
}

#endif
