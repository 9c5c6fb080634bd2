/* tracegen_step.h — the script of one profiler step: forward on the main
 * thread (python frames wrapping cpu_ops), backward on the autograd thread
 * (evaluate_function nodes sharing forward sequence numbers), planted NCCL
 * collectives, fused AdamW and the loss.item() sync. Included only by
 * tools/tracegen.c. */
#ifndef TRACEGEN_STEP_H
#define TRACEGEN_STEP_H

#include "tools/tracegen_catalog.h"

enum { HS_CONV, HS_FLAT, HS_TPE, HS_POS, HS_LNF, HS_MEAN, HS_HT, HS_HMM, HS_TO, HS_SUM, HS_MUL, HS_N };

static int64_t nseq(gen *g) { return (int64_t)++g->st.seq; }
static void py(gen *g, int which, int modid) { py_open(g, g->m->pyn_static[which], modid); }

/* ---------------------------------------------------------- collectives */
static void truth_record(gen *g, const collsite *c, int p, int64_t k, int64_t T0, int64_t X,
                         int64_t amax)
{
    const model *m = g->m;
    obuf *t = g->truth;
    int first = pg_first(m, p), n = pg_size(m, p);
    ob_printf(t, "%s\n    {\"pg\": \"%d\", \"pg_desc\": \"%s\", \"index\": %lld, \"collective_id\": \"%d_%lld\", "
                 "\"step\": %lld, \"name\": \"%s\", \"kernel\": \"%.*s\", \"dtype\": \"%s\", \"dtype_size\": %d, "
                 "\"in_nelems\": %lld, \"out_nelems\": %lld, \"bytes\": %lld, \"out_bytes\": %lld, "
                 "\"group_size\": %d, \"stream\": %d, \"group_ranks\": ",
              g->st.truth_n ? "," : "", p, p ? "tp_group" : "default_pg", (long long)k, p, (long long)k,
              (long long)g->st.step, ct_name[c->type], (int)c->k.nlen, c->k.name, c->dtype, c->dsize,
              (long long)c->in_n, (long long)c->out_n, (long long)(c->in_n * c->dsize),
              (long long)(c->out_n * c->dsize), n, p ? TG_STREAM_COMMTP : TG_STREAM_COMM0);
    ob_reserve(t, 64);
    ob_rank_list(t, m, p);
    ob_puts(t, ", \"t0_us\": ");
    ob_reserve(t, 256);
    ob_us(t, T0);
    OB_LIT(t, ", \"xfer_us\": ");
    ob_us(t, X);
    OB_LIT(t, ", \"max_arrival_us\": ");
    ob_us(t, amax);
    OB_LIT(t, ", \"ranks\": {");
    for (int i = 0; i < n; i++) {
        int r = first + i;
        int64_t a = tg_arrival_ns(p, k, r, m->world), tl = tg_tail_ns(p, k, r);
        int64_t ts = T0 + a, end = T0 + amax + X + tl;
        ob_reserve(t, 256);
        if (i) OB_LIT(t, ", ");
        OB_LIT(t, "\"");
        ob_u64(t, (uint64_t)r);
        OB_LIT(t, "\": {\"ts\": ");
        ob_us(t, ts);
        OB_LIT(t, ", \"dur\": ");
        ob_us(t, end - ts);
        OB_LIT(t, ", \"arrival_us\": ");
        ob_us(t, a);
        OB_LIT(t, ", \"tail_us\": ");
        ob_us(t, tl);
        if (c->type == CT_ALLTOALLV) {
            OB_LIT(t, ", \"in_split_size\": \"");
            ob_splits(t, m, c->in_n, r, 0);
            OB_LIT(t, "\"");
        }
        OB_LIT(t, "}");
    }
    ob_puts(t, "}}");
    g->st.truth_n++;
}

/* One collective of group p at nominal earliest start `base`. */
static void plant(gen *g, const collsite *c, int p, int64_t base, const rev *r, uint64_t ua_ext)
{
    const model *m = g->m;
    int64_t k = g->st.pg_k[p]++;
    int first = pg_first(m, p), n = pg_size(m, p);
    int64_t T0 = base > g->st.pg_nom[p] ? base : g->st.pg_nom[p];
    int64_t amax = 0;
    for (int i = 0; i < n; i++) {
        int64_t a = tg_arrival_ns(p, k, first + i, m->world);
        if (a > amax) amax = a;
    }
    int cross = first / m->gpn != (first + n - 1) / m->gpn;
    int64_t X = tg_xfer_ns(c->type, c->full_bytes, n, cross);
    int64_t Tend = T0 + amax + X;
    g->st.pg_nom[p] = Tend + TG_TAIL_MAX;
    int me = m->rank - first;
    if (me >= 0 && me < n) {
        int64_t ts = T0 + tg_arrival_ns(p, k, m->rank, m->world);
        int64_t end = Tend + tg_tail_ns(p, k, m->rank);
        g->st.pg_act[p] = end;
        gev *e = tg_push(&g->gpu);
        e->ts = ts, e->dur = end - ts, e->k = &c->k, e->coll = c->coll, e->clen = c->clen;
        e->stream = (uint16_t)(p ? TG_STREAM_COMMTP : TG_STREAM_COMM0);
        e->ext = r->ext, e->corr = r->corr;
        gua *u = tg_push(&g->gua);
        u->ts = ts, u->dur = end - ts, u->name = c->uaname, u->nlen = c->ualen;
        u->stream = e->stream, u->ext = ua_ext;
    }
    if (g->truth) truth_record(g, c, p, k, T0, X, amax);
}

/* The compute stream waits for process groups [p0, p1). The nominal time is
 * the envelope over all of them, so it is the same on every rank even though
 * TP pairs finish at different times; the actual wait is for the rank's own
 * group `mine` (never later than the envelope). */
static void comp_waits_for(gen *g, int p0, int p1, int mine)
{
    for (int p = p0; p < p1; p++)
        if (g->st.nom[SS_COMP] < g->st.pg_nom[p]) g->st.nom[SS_COMP] = g->st.pg_nom[p];
    if (g->st.act[SS_COMP] < g->st.pg_act[mine]) g->st.act[SS_COMP] = g->st.pg_act[mine];
}

/* c10d op -> record_param_comms -> nccl:* annotation -> NCCL launch. */
static void coll(gen *g, int thr, const collsite *c, int compute_waits)
{
    const model *m = g->m;
    op_open(g, thr, c->c10d, HK_OP, -1, 0);
    op_open(g, thr, c->rpc, HK_OP, -1, 0);
    int ua = h_open(g, thr, HK_UA, c->uaname, c->ualen, c->ua->args, c->ua->alen, -1, 0);
    uint64_t ua_ext = g->ops[thr].v[ua].id;
    adv(g, thr, 1500, 4000);
    rt_call(g, thr, API_EVREC);
    rt_call(g, thr, API_WAITEV);
    const rev *r = rt_call(g, thr, API_LAUNCH_EXC);
    int64_t base = r->ts + R(g, 3000, 6000);
    if (base < g->st.nom[SS_COMP]) base = g->st.nom[SS_COMP];
    int mine;
    if (c->pgkind == PG_DEFAULT) {
        plant(g, c, 0, base, r, ua_ext);
        mine = 0;
    } else { /* every TP pair runs its own copy at the same point */
        for (int p = 1; p < m->npg; p++) plant(g, c, p, base, r, ua_ext);
        mine = m->my_tp_pg;
    }
    h_close(g, thr);
    op_close(g, thr);
    op_close(g, thr);
    if (compute_waits) {
        rt_call(g, thr, API_EVREC);
        rt_call(g, thr, API_WAITEV);
        comp_waits_for(g, c->pgkind == PG_DEFAULT ? 0 : 1, c->pgkind == PG_DEFAULT ? 1 : m->npg, mine);
    }
}

/* ------------------------------------------------------------ forward */
static void op_launch_rest(gen *g, int thr, const opspec *o)
{
    for (int i = 0; i < o->nk; i++) launch(g, thr, o->k[i], SS_COMP);
}
static void f_linear(gen *g, const linspec *L, const char *pyname, int modid, int64_t *st, int64_t *sm)
{
    py_open(g, pyname, modid);
    py(g, PYS_LINFWD, -1);
    *st = nseq(g), *sm = nseq(g);
    op_open(g, 0, &L->linear, HK_SEQ, *st, 0);
    op_open(g, 0, &L->t, HK_SEQ, *st, 0);
    op_open(g, 0, &L->transpose, HK_SEQ, *st, 0);
    LEAFS(g, 0, &L->as_strided, *st);
    op_close(g, 0);
    op_close(g, 0);
    LEAFS(g, 0, &L->addmm, *sm);
    op_close(g, 0);
    py_close(g);
    py_close(g);
}
static void f_ln(gen *g, const char *pyname, int modid, int64_t *s)
{
    const model *m = g->m;
    py_open(g, pyname, modid);
    py(g, PYS_LNFWD, -1);
    *s = nseq(g);
    op_open(g, 0, &m->ln_fwd, HK_SEQ, *s, 0);
    LEAFS(g, 0, &m->ln_nat, *s);
    op_close(g, 0);
    py_close(g);
    py_close(g);
}
static int is_moe(const model *m, int b) { return m->E && b % m->moe_every == m->moe_every - 1; }

static void f_block(gen *g, int b)
{
    const model *m = g->m;
    const xops *xo = X(m);
    const char **n = m->py_block + b * PYB_N;
    int64_t *sq = g->seqs + (size_t)b * SQ_N;
    int moe = is_moe(m, b);
    py_open(g, n[PYB_BLOCK], b);
    py(g, PYS_BLOCKFWD, -1);
    f_ln(g, n[PYB_LN1], 2 * b, &sq[SQ_LN1]);
    py_open(g, n[PYB_ATTN], b);
    py(g, PYS_ATTNFWD, -1);
    f_linear(g, &m->qkv, n[PYB_QKV], 4 * b, &sq[SQ_QKV_T], &sq[SQ_QKV]);
    LEAFS(g, 0, &m->view_qkv, sq[SQ_VIEW] = nseq(g));
    LEAFS(g, 0, &m->permute, sq[SQ_PERM] = nseq(g));
    sq[SQ_UNBIND] = nseq(g);
    op_open(g, 0, &m->unbind, HK_SEQ, sq[SQ_UNBIND], 0);
    for (int i = 0; i < 3; i++) LEAFS(g, 0, &m->select, sq[SQ_UNBIND]);
    op_close(g, 0);
    py(g, PYS_SDPA, -1);
    int64_t s = sq[SQ_SDPA] = nseq(g);
    op_open(g, 0, &m->sdpa, HK_SEQ, s, 0);
    op_open(g, 0, &m->sdpa_flash, HK_SEQ, s, 0);
    for (int i = 0; i < 3; i++) LEAFS(g, 0, &m->transpose_q, s);
    op_open(g, 0, &m->flash_fwd, HK_SEQ, s, 0);
    LEAFS(g, 0, &m->empty_like, s);
    LEAFS(g, 0, &m->empty, s);
    rt_call(g, 0, API_FUNCATTR);
    op_launch_rest(g, 0, &m->flash_fwd);
    op_close(g, 0);
    op_close(g, 0);
    op_close(g, 0);
    py_close(g);
    LEAFS(g, 0, &m->attn_tr, sq[SQ_TR] = nseq(g));
    sq[SQ_RESHAPE] = nseq(g);
    op_open(g, 0, &xo->reshape_r, HK_SEQ, sq[SQ_RESHAPE], 0);
    LEAFS(g, 0, &xo->view_r, sq[SQ_RESHAPE]);
    op_close(g, 0);
    f_linear(g, &m->proj, n[PYB_PROJ], 4 * b + 1, &sq[SQ_PROJ_T], &sq[SQ_PROJ]);
    py_close(g);
    py_close(g);
    if (m->tp) coll(g, 0, &m->c_tp, 1);
    LEAFS(g, 0, &m->add_res, sq[SQ_ADD1] = nseq(g));
    f_ln(g, n[PYB_LN2], 2 * b + 1, &sq[SQ_LN2]);
    py_open(g, n[PYB_MLP], b);
    if (!moe) {
        py(g, PYS_MLPFWD, -1);
        f_linear(g, &m->fc1, n[PYB_FC1], 4 * b + 2, &sq[SQ_FC1_T], &sq[SQ_FC1]);
        py_open(g, n[PYB_GELU], b);
        py(g, PYS_GELUFWD, -1);
        LEAFS(g, 0, &m->gelu, sq[SQ_GELU] = nseq(g));
        py_close(g);
        py_close(g);
        f_linear(g, &m->fc2, n[PYB_FC2], 4 * b + 3, &sq[SQ_FC2_T], &sq[SQ_FC2]);
    } else {
        py(g, PYS_MOEFWD, -1);
        if (m->world > 1) {
            py(g, PYS_A2A, -1);
            coll(g, 0, &m->c_a2a, 1);
            py_close(g);
        }
        LEAF(g, 0, &m->bmm_view);
        LEAFS(g, 0, &m->bmm1, sq[SQ_BMM1] = nseq(g));
        py_open(g, n[PYB_GELU], b);
        py(g, PYS_GELUFWD, -1);
        LEAFS(g, 0, &xo->gelu_moe, sq[SQ_GELU] = nseq(g));
        py_close(g);
        py_close(g);
        LEAFS(g, 0, &m->bmm2, sq[SQ_BMM2] = nseq(g));
        if (m->world > 1) {
            py(g, PYS_A2A, -1);
            coll(g, 0, &m->c_a2a, 1);
            py_close(g);
        }
    }
    py_close(g);
    py_close(g);
    LEAFS(g, 0, &m->add_res, sq[SQ_ADD2] = nseq(g));
    py_close(g);
    py_close(g);
}

/* ------------------------------------------------------------ backward */
static void bn_open(gen *g, const opspec *bn, int64_t seq)
{
    h_open(g, 1, HK_EVAL, bn->evname, bn->evlen, "", 0, seq, 1);
    adv(g, 1, 300, 1200);
    op_open(g, 1, bn, HK_SEQ, seq, 1);
}
static void bn_close(gen *g)
{
    op_close(g, 1);
    h_close(g, 1);
}
static void b_ag(gen *g, const opspec *agop, const opspec *det)
{
    h_open(g, 1, HK_OP, agop->evname, agop->evlen, "", 0, -1, 0);
    adv(g, 1, 300, 900);
    op_open(g, 1, agop, HK_OP, -1, 0);
    LEAF(g, 1, det);
    op_close(g, 1);
    h_close(g, 1);
}
static void b_linear(gen *g, const linspec *L, int64_t st, int64_t sm)
{
    bn_open(g, &L->bnode, sm);
    LEAF(g, 1, &L->tt);
    LEAF(g, 1, &L->mm_dx);
    LEAF(g, 1, &L->tt);
    LEAF(g, 1, &L->mm_dw);
    LEAF(g, 1, &L->sum_db);
    bn_close(g);
    bn_open(g, &L->tnode, st);
    LEAF(g, 1, &L->tt);
    bn_close(g);
    b_ag(g, &L->agw, &L->det_w);
    b_ag(g, &L->agb, &L->det_b);
}
static void b_ln(gen *g, int64_t s)
{
    const model *m = g->m;
    bn_open(g, &m->ln_bnode, s);
    LEAF(g, 1, &m->ln_bwd);
    bn_close(g);
    b_ag(g, &m->ln_agw, &m->ln_det);
    b_ag(g, &m->ln_agw, &m->ln_det);
}
static void b_block(gen *g, int b)
{
    const model *m = g->m;
    const xops *xo = X(m);
    const int64_t *sq = g->seqs + (size_t)b * SQ_N;
    int moe = is_moe(m, b);
    bn_open(g, &m->add_bnode, sq[SQ_ADD2]);
    bn_close(g);
    if (!moe) {
        b_linear(g, &m->fc2, sq[SQ_FC2_T], sq[SQ_FC2]);
        bn_open(g, &m->gelu_bnode, sq[SQ_GELU]);
        LEAF(g, 1, &m->gelu_bwd);
        bn_close(g);
        b_linear(g, &m->fc1, sq[SQ_FC1_T], sq[SQ_FC1]);
    } else {
        if (m->world > 1) coll(g, 1, &m->c_a2a, 1);
        bn_open(g, &m->bmm_bnode, sq[SQ_BMM2]);
        LEAF(g, 1, &m->bmm_dx2);
        LEAF(g, 1, &m->bmm_dw2);
        bn_close(g);
        b_ag(g, &xo->ag_m2, &xo->det_m2);
        bn_open(g, &xo->gelu_moe_bnode, sq[SQ_GELU]);
        LEAF(g, 1, &xo->gelu_moe_bwd);
        bn_close(g);
        bn_open(g, &m->bmm_bnode, sq[SQ_BMM1]);
        LEAF(g, 1, &m->bmm_dx1);
        LEAF(g, 1, &m->bmm_dw1);
        bn_close(g);
        b_ag(g, &xo->ag_m1, &xo->det_m1);
        if (m->world > 1) coll(g, 1, &m->c_a2a, 1);
    }
    b_ln(g, sq[SQ_LN2]);
    bn_open(g, &m->add_bnode, sq[SQ_ADD1]);
    bn_close(g);
    if (m->tp) coll(g, 1, &m->c_tp, 1);
    b_linear(g, &m->proj, sq[SQ_PROJ_T], sq[SQ_PROJ]);
    bn_open(g, &m->reshape_bnode, sq[SQ_RESHAPE]);
    LEAF(g, 1, &m->reshape_b);
    bn_close(g);
    bn_open(g, &m->tr_bnode, sq[SQ_TR]);
    LEAF(g, 1, &m->tr_b);
    bn_close(g);
    bn_open(g, &m->sdpa_bnode, sq[SQ_SDPA]);
    op_open(g, 1, &m->sdpa_bwd, HK_OP, -1, 0);
    op_open(g, 1, &m->flash_bwd, HK_OP, -1, 0);
    op_open(g, 1, &m->zeros, HK_OP, -1, 0);
    LEAF(g, 1, &xo->empty_z);
    LEAF(g, 1, &m->zero_);
    op_close(g, 1);
    launch(g, 1, &m->k_fb1, SS_COMP);
    launch(g, 1, &m->k_fb2, SS_COMP);
    launch(g, 1, &m->k_fb3, SS_COMP);
    op_close(g, 1);
    op_close(g, 1);
    bn_close(g);
    bn_open(g, &m->unbind_bnode, sq[SQ_UNBIND]);
    op_open(g, 1, &m->stack, HK_OP, -1, 0);
    LEAF(g, 1, &m->cat);
    op_close(g, 1);
    bn_close(g);
    bn_open(g, &m->perm_bnode, sq[SQ_PERM]);
    LEAF(g, 1, &m->perm_b);
    bn_close(g);
    bn_open(g, &m->view_bnode, sq[SQ_VIEW]);
    LEAF(g, 1, &m->view_b);
    bn_close(g);
    b_linear(g, &m->qkv, sq[SQ_QKV_T], sq[SQ_QKV]);
    b_ln(g, sq[SQ_LN1]);
    coll(g, 1, &m->c_bucket[moe ? 1 : 0], 0); /* DDP bucket of this block's grads */
}

/* --------------------------------------------------------------- a step */
/* mode 0: training step; mode 1: forward-only evaluation step (used only to
 * fit the last step of very small traces). */
static void gen_step(gen *g, int L, const char *stepname, int mode)
{
    const model *m = g->m;
    const xops *xo = X(m);
    int64_t hs[HS_N];
    g->L = L;
    g->alloc_sites = 0;
    int64_t baseline = g->st.alloc;
    int ps = h_open(g, 0, HK_UA, stepname, (uint32_t)strlen(stepname), "", 0, -1, 0);
    uint64_t step_ext = g->ops[0].v[ps].id;
    adv(g, 0, 2000, 6000);
    py(g, mode ? PYS_EVAL : PYS_STEP, -1);
    if (!mode) {
        h_open(g, 0, HK_UA, m->zero_grad_ua.name, m->zero_grad_ua.nlen, "", 0, -1, 0);
        adv(g, 0, 5000, 15000);
        h_close(g, 0);
    }
    py(g, PYS_LOADER, -1);
    adv(g, 0, 60000, 240000);
    py_close(g);
    /* images -> device on the copy stream, then cast on the compute stream */
    op_open(g, 0, &m->to_in, HK_OP, -1, 0);
    op_open(g, 0, &m->tocopy_in, HK_OP, -1, 0);
    LEAF(g, 0, &m->empty_strided_in);
    op_open(g, 0, &m->copy_in, HK_OP, -1, 0);
    launch(g, 0, &m->k_memcpy_in, SS_COPY);
    op_close(g, 0);
    op_close(g, 0);
    op_close(g, 0);
    stream_wait(g, 0, SS_COMP, SS_COPY);
    op_open(g, 0, &xo->to_bf, HK_OP, -1, 0);
    op_open(g, 0, &xo->tocopy_bf, HK_OP, -1, 0);
    LEAF(g, 0, &xo->es_bf);
    LEAF(g, 0, &xo->copy_bf);
    op_close(g, 0);
    op_close(g, 0);
    /* forward */
    py(g, PYS_DDP, 0);
    py(g, PYS_DDPFWD, -1);
    coll(g, 0, &m->c_bcast, 1);
    py(g, PYS_VIT, 0);
    py(g, PYS_VITFWD, -1);
    py(g, PYS_PE, 0);
    py(g, PYS_CONV, 0);
    py(g, PYS_CONVFWD, -1);
    py(g, PYS_CONVF, -1);
    hs[HS_CONV] = nseq(g);
    op_open(g, 0, &m->conv2d, HK_SEQ, hs[HS_CONV], 0);
    op_open(g, 0, &m->convolution, HK_SEQ, hs[HS_CONV], 0);
    op_open(g, 0, &m->_convolution, HK_SEQ, hs[HS_CONV], 0);
    rt_call(g, 0, API_ISCAPT);
    LEAFS(g, 0, &m->cudnn_conv, hs[HS_CONV]);
    LEAFS(g, 0, &m->conv_bias, hs[HS_CONV]);
    op_close(g, 0);
    op_close(g, 0);
    op_close(g, 0);
    py_close(g);
    py_close(g);
    py_close(g);
    hs[HS_FLAT] = nseq(g);
    op_open(g, 0, &m->flatten, HK_SEQ, hs[HS_FLAT], 0);
    LEAFS(g, 0, &m->view_pe, hs[HS_FLAT]);
    op_close(g, 0);
    LEAFS(g, 0, &m->transpose_pe, hs[HS_TPE] = nseq(g));
    py_close(g);
    coll(g, 0, &m->c_agather, 1);
    LEAFS(g, 0, &m->add_pos, hs[HS_POS] = nseq(g));
    for (int b = 0; b < L; b++) f_block(g, b);
    f_ln(g, m->pyn_static[PYS_LNF], 2 * m->L, &hs[HS_LNF]);
    LEAFS(g, 0, &m->mean_pool, hs[HS_MEAN] = nseq(g));
    f_linear(g, &m->head, m->pyn_static[PYS_HEAD], 4 * m->L, &hs[HS_HT], &hs[HS_HMM]);
    py_close(g);
    py_close(g);
    py_close(g);
    py_close(g);
    hs[HS_TO] = nseq(g);
    op_open(g, 0, &m->to_f, HK_SEQ, hs[HS_TO], 0);
    op_open(g, 0, &m->tocopy_f, HK_SEQ, hs[HS_TO], 0);
    LEAFS(g, 0, &m->copy_f, hs[HS_TO]);
    op_close(g, 0);
    op_close(g, 0);
    LEAFS(g, 0, &m->loss_sum, hs[HS_SUM] = nseq(g));
    LEAFS(g, 0, &xo->mul_loss, hs[HS_MUL] = nseq(g));
    if (mode) goto logging;
    /* backward: main thread blocks in run_backward, the autograd thread works */
    for (int i = PYS_BWD1; i <= PYS_BWD4; i++) py(g, i, -1);
    g->st.cur[1] = g->st.cur[0] + R(g, 8000, 20000);
    bn_open(g, &xo->mul_bnode, hs[HS_MUL]);
    LEAF(g, 1, &xo->mul_b);
    bn_close(g);
    bn_open(g, &m->sum_bnode, hs[HS_SUM]);
    LEAF(g, 1, &m->expand_s);
    bn_close(g);
    bn_open(g, &m->tocopy_bnode, hs[HS_TO]);
    op_open(g, 1, &m->to_b, HK_OP, -1, 0);
    op_open(g, 1, &m->tocopy_b, HK_OP, -1, 0);
    LEAF(g, 1, &m->copy_b);
    op_close(g, 1);
    op_close(g, 1);
    bn_close(g);
    b_linear(g, &m->head, hs[HS_HT], hs[HS_HMM]);
    bn_open(g, &m->mean_bnode, hs[HS_MEAN]);
    LEAF(g, 1, &m->expand_m);
    LEAF(g, 1, &m->div_m);
    bn_close(g);
    b_ln(g, hs[HS_LNF]);
    for (int b = L - 1; b >= 0; b--) b_block(g, b);
    bn_open(g, &m->add_pos_bnode, hs[HS_POS]);
    LEAF(g, 1, &xo->pos_sum);
    bn_close(g);
    coll(g, 1, &m->c_rscatter, 0);
    bn_open(g, &m->conv_bnode, hs[HS_CONV]);
    LEAF(g, 1, &m->conv_bwd);
    bn_close(g);
    b_ag(g, &xo->ag_cw, &xo->det_cw);
    b_ag(g, &xo->ag_cb, &xo->det_cb);
    coll(g, 1, &m->c_bucket[2], 0);
    if (g->st.cur[0] < g->st.cur[1]) g->st.cur[0] = g->st.cur[1];
    adv(g, 0, 3000, 9000);
    for (int i = PYS_BWD1; i <= PYS_BWD4; i++) py_close(g);
    /* optimizer: the compute stream waits for every gradient allreduce */
    py(g, PYS_OPT1, -1);
    h_open(g, 0, HK_UA, m->opt_ua.name, m->opt_ua.nlen, "", 0, -1, 0);
    adv(g, 0, 2000, 5000);
    py(g, PYS_OPT2, -1);
    py(g, PYS_OPT3, -1);
    rt_call(g, 0, API_EVREC);
    rt_call(g, 0, API_WAITEV);
    comp_waits_for(g, 0, 1, 0);
    if (m->tp) comp_waits_for(g, 1, m->npg, m->my_tp_pg);
    LEAF(g, 0, &m->foreach_mul);
    LEAF(g, 0, &m->fused_adamw);
    py_close(g);
    py_close(g);
    h_close(g, 0);
    py_close(g);
logging:
    /* loss logging: allreduce then loss.item() (host waits for the GPU) */
    coll(g, 0, &m->c_loss, 1);
    op_open(g, 0, &m->item, HK_OP, -1, 0);
    op_open(g, 0, &m->local_scalar, HK_OP, -1, 0);
    launch(g, 0, &m->k_dtoh, SS_COMP);
    host_sync(g, 0, SS_COMP);
    op_close(g, 0);
    op_close(g, 0);
    py_close(g);
    /* leftover size filler, then the caching allocator returns to baseline */
    for (int64_t i = 0; g->st.fill_left > 0; i++, g->st.fill_left--)
        mem_event(g, 0, g->st.cur[0] + 10 * i, (i & 1) ? -(4 << 20) : (4 << 20));
    adv(g, 0, 1000, 3000);
    mem_event(g, 0, g->st.cur[0], baseline - g->st.alloc);
    adv(g, 0, 1000, 3000);
    h_close(g, 0);
    /* the step as seen on the GPU */
    int64_t lo = INT64_MAX, hi = 0;
    for (size_t i = 0; i < g->gpu.n; i++) {
        if (g->gpu.v[i].ts < lo) lo = g->gpu.v[i].ts;
        if (g->gpu.v[i].ts + g->gpu.v[i].dur > hi) hi = g->gpu.v[i].ts + g->gpu.v[i].dur;
    }
    gua *u = tg_push(&g->gua);
    u->ts = lo, u->dur = hi - lo, u->name = g->ops[0].v[ps].name, u->nlen = g->ops[0].v[ps].nlen;
    u->stream = (uint16_t)tg_stream_id[SS_COMP], u->ext = step_ext;
    g->st.step++;
    g->st.cur[0] += R(g, 20000, 120000); /* to the next ProfilerStep */
}

#endif
