/* attention.c — scaled-dot-product attention models (perf-models.md §5.2):
 * per-op argument layouts (aten SDPA, flash-attn, varlen, AITER, FA3,
 * Evoformer) feeding one set of formulas: forward FLOPs of QKᵀ and PV
 * (halved when causal), backward FLOPs with the flash recomputation, and
 * bytes of q/k/v/out charged at a constant 2 bytes per element — the
 * reference's deliberate simplification — except flash_bwd in forward mode. */
#include "query/perfmodel/pm_internal.h"

#include <string.h>

typedef struct sdpa {
    pnum B, NQ, HQ, NKV, HKV, dqk, dv;
    int causal, flash;
} sdpa;

static pnum mul(pnum a, pnum b) { return pn_mul(a, b); }
static pnum add(pnum a, pnum b) { return pn_add(a, b); }

static pnum f_fwd(pm_in *in, const sdpa *s, pnum NQ, pnum NKV)
{
    /* B·H_Q·(2·N_Q·N_KV·d_h_qk) + B·H_Q·(2·N_Q·N_KV·d_h_v) */
    pnum bh = mul(s->B, s->HQ);
    pnum qk = mul(bh, mul(mul(mul(PN_I(2), NQ), NKV), s->dqk));
    pnum pv = mul(bh, mul(mul(mul(PN_I(2), NQ), NKV), s->dv));
    pnum f = add(qk, pv);
    if (s->causal) {
        if (pn_cmp(NQ, NKV) != 0) pm_raise(in, "causal attention with N_Q != N_KV");
        f = pn_div(f, PN_I(2));
    }
    return f;
}

static pnum f_bwd(pm_in *in, const sdpa *s, pnum NQ, pnum NKV)
{
    pnum bh2 = mul(mul(s->B, s->HQ), PN_I(2));
    pnum grp = pn_sub(pn_fdiv(s->HQ, s->HKV), PN_I(1)); /* H_Q // H_KV - 1 */
    pnum recompute = s->flash ? mul(mul(mul(bh2, NQ), NKV), s->dqk) : PN_I(0);
    pnum dV = add(mul(mul(mul(bh2, NKV), NQ), s->dv), mul(mul(mul(s->B, NKV), s->dv), grp));
    pnum dP = mul(mul(mul(bh2, NQ), NKV), s->dv);
    pnum dQ = mul(mul(mul(bh2, NQ), NKV), s->dqk);
    pnum dK = add(mul(mul(mul(bh2, NKV), NQ), s->dqk), mul(mul(mul(s->B, NKV), s->dqk), grp));
    pnum f = add(add(add(add(recompute, dV), dP), dQ), dK);
    if (s->causal) {
        if (pn_cmp(NQ, NKV) != 0) pm_raise(in, "causal attention with N_Q != N_KV");
        f = pn_div(f, PN_I(2));
    }
    return f;
}

static pnum e_fwd(const sdpa *s)
{
    pnum e = mul(mul(mul(s->B, s->NQ), s->HQ), s->dqk);
    e = add(e, mul(mul(mul(s->B, s->NKV), s->HKV), s->dqk));
    e = add(e, mul(mul(mul(s->B, s->NKV), s->HKV), s->dv));
    e = add(e, mul(mul(mul(s->B, s->NQ), s->HQ), s->dv));
    return e;
}

static pnum e_bwd(const sdpa *s)
{
    pnum e = mul(mul(mul(mul(PN_I(2), s->B), s->NQ), s->HQ), s->dqk);
    e = add(e, mul(mul(mul(mul(PN_I(2), s->B), s->NKV), s->HKV), s->dqk));
    e = add(e, mul(mul(mul(mul(PN_I(2), s->B), s->NKV), s->HKV), s->dv));
    e = add(e, mul(mul(mul(s->B, s->NQ), s->HQ), s->dv));
    return e;
}

/* Reads q, k, v through the (B, H, N, d) index order and applies the strict
 * consistency checks. ib < 0: no batch index (varlen: B = 1, no check). */
static void shapes(pm_in *in, sdpa *s, long iq, long ib, long ih, long inn, long id)
{
    const tl_pv *q = pm_dims(in, iq), *k = pm_dims(in, iq + 1), *v = pm_dims(in, iq + 2);
    int64_t Bq = 1, Bk = 1, Bv = 1;
    if (ib >= 0) {
        Bq = pm_dim(in, q, ib);
        Bk = pm_dim(in, k, ib);
        Bv = pm_dim(in, v, ib);
    }
    int64_t Hq = pm_dim(in, q, ih), Hk = pm_dim(in, k, ih), Hv = pm_dim(in, v, ih);
    int64_t Nq = pm_dim(in, q, inn), Nk = pm_dim(in, k, inn), Nv = pm_dim(in, v, inn);
    int64_t dq = pm_dim(in, q, id), dk = pm_dim(in, k, id), dv = pm_dim(in, v, id);
    if (Bq != Bk || Bq != Bv) pm_raise(in, "attention batch sizes differ");
    if (Hk != Hv) pm_raise(in, "attention H_K != H_V");
    if (Nk != Nv) pm_raise(in, "attention N_K != N_V");
    if (dq != dk) pm_raise(in, "attention d_q != d_k");
    s->B = PN_I(Bq);
    s->NQ = PN_I(Nq);
    s->HQ = PN_I(Hq);
    s->NKV = PN_I(Nk);
    s->HKV = PN_I(Hk);
    s->dqk = PN_I(dq);
    s->dv = PN_I(dv);
}

static void shape_params(pm_in *in, pm_out *out, const sdpa *s)
{
    pm_param(in, out, "B", pm_v_pn(in, s->B));
    pm_param(in, out, "N_Q", pm_v_pn(in, s->NQ));
    pm_param(in, out, "H_Q", pm_v_pn(in, s->HQ));
    pm_param(in, out, "N_KV", pm_v_pn(in, s->NKV));
    pm_param(in, out, "H_KV", pm_v_pn(in, s->HKV));
    pm_param(in, out, "d_h_qk", pm_v_pn(in, s->dqk));
    pm_param(in, out, "d_h_v", pm_v_pn(in, s->dv));
}

static int is_bwd_op(int id)
{
    return id == PM_FLASH_BWD || id == PM_VARLEN_BWD || id == PM_AITER_FA_BWD || id == PM_AITER_V3_BWD ||
           id == PM_AITER_MHA_BWD;
}

/* FLOPs and bytes of one attention op. Varlen ops count one sequence at
 * the max lengths plus the others at the mean of the remaining tokens (and
 * record num_seqs / max_seqlen params); bytes are charged at 2 bytes per
 * element, except flash_bwd in forward mode (t0's real width). */
static void sdpa_numbers(pm_in *in, const sdpa *s, const char *t0, pm_out *out)
{
    int use_bwd = in->mode == TL_PM_BWD || is_bwd_op(in->id);
    if (in->id == PM_VARLEN_FWD || in->id == PM_VARLEN_BWD) {
        int bw = in->id == PM_VARLEN_BWD;
        pnum nsq = pn_sub(PN_I(pm_dim(in, pm_dims(in, bw ? 9 : 3), 0)), PN_I(1));
        pnum nskv = pn_sub(PN_I(pm_dim(in, pm_dims(in, bw ? 10 : 4), 0)), PN_I(1));
        pnum mq = PN_F(pm_py_float(in, pm_ci(in, bw ? 11 : 5)));
        pnum mkv = PN_F(pm_py_float(in, pm_ci(in, bw ? 12 : 6)));
        pm_param(in, out, "num_seqs_q", pm_v_pn(in, nsq));
        pm_param(in, out, "num_seqs_kv", pm_v_pn(in, nskv));
        pm_param(in, out, "max_seqlen_q", pm_v_pn(in, mq));
        pm_param(in, out, "max_seqlen_kv", pm_v_pn(in, mkv));
        pnum (*f)(pm_in *, const sdpa *, pnum, pnum) = use_bwd ? f_bwd : f_fwd;
        pnum flops = f(in, s, mq, mkv);
        if (pn_cmp(nsq, PN_I(1)) > 0) {
            pnum one = PN_I(1);
            pnum nq = pn_fdiv(pn_sub(s->NQ, mq), pn_sub(nsq, one));
            pnum nkv = pn_fdiv(pn_sub(s->NKV, mkv), pn_sub(nskv, one));
            flops = pn_add(flops, pn_mul(pn_sub(nsq, one), f(in, s, nq, nkv)));
        }
        out->flops = flops;
        out->has_bytes = 1;
        out->bytes = use_bwd ? pn_mul(e_bwd(s), PN_I(2)) : pn_mul(e_fwd(s), PN_I(2));
    } else if (!use_bwd) {
        out->flops = f_fwd(in, s, s->NQ, s->NKV);
        out->has_bytes = 1;
        out->bytes = pn_mul(e_fwd(s), PN_I(2));
    } else {
        out->flops = f_bwd(in, s, s->NQ, s->NKV);
        out->has_bytes = 1;
        if (in->id == PM_FLASH_BWD && in->mode == TL_PM_FWD) {
            /* the one model that charges the real element width */
            int w = pm_bpe(t0);
            out->has_bytes = w != 0;
            out->bytes = pn_mul(e_bwd(s), PN_I(w));
        } else {
            out->bytes = pn_mul(e_bwd(s), PN_I(2));
        }
    }
}

int pm_attention(pm_in *in, pm_out *out)
{
    sdpa s;
    memset(&s, 0, sizeof s);
    s.flash = 1;
    double dropout = 0.0;
    int has_dropout = 1, has_dtype = 1, has_strides = 0;
    long iq = 0, ib = 0, ih = 2, inn = 1, idd = 3; /* flash layout (B, N, H, d) */
    const char *t0 = NULL, *t1 = NULL;
    tl_pv *dtypes = NULL;

    switch (in->id) {
    case PM_SDPA_FLASH:
    case PM_SDPA_EFF:
    case PM_SDPA_CUDNN: {
        ih = 1, inn = 2; /* (B, H, N, d) */
        shapes(in, &s, 0, ib, ih, inn, idd);
        long di = in->id == PM_SDPA_FLASH ? 3 : 5, ci = in->id == PM_SDPA_FLASH ? 4 : 6;
        dropout = pm_optional_float(pm_ci_opt(in, di));
        s.causal = pm_lower_true(pm_ci_opt(in, ci));
        s.flash = in->id == PM_SDPA_FLASH;
        break;
    }
    case PM_FLASH_FWD:
        shapes(in, &s, 0, ib, ih, inn, idd);
        dropout = pm_py_float(in, pm_ci(in, 3));
        s.causal = pm_py_bool(in, pm_ci(in, 5));
        has_strides = 1;
        break;
    case PM_FLASH_BWD: {
        iq = 1;
        shapes(in, &s, 1, ib, ih, inn, idd);
        const char *d = pm_ci_opt(in, 8), *c = pm_ci_opt(in, 10);
        dropout = d && *d ? pm_py_float(in, d) : 0.0;
        s.causal = c && *c ? pm_py_bool(in, c) : 1;
        has_strides = 1;
        break;
    }
    case PM_VARLEN_FWD:
    case PM_VARLEN_BWD: {
        int bw = in->id == PM_VARLEN_BWD;
        iq = bw ? 1 : 0;
        shapes(in, &s, iq, -1, 1, 0, 2);
        dropout = pm_py_float(in, pm_ci(in, bw ? 13 : 7));
        s.causal = pm_py_bool(in, pm_ci(in, bw ? 15 : 9));
        has_strides = 1;
        break;
    }
    case PM_AITER_FA_FWD:
        shapes(in, &s, 0, ib, ih, inn, idd);
        dropout = pm_optional_float(pm_ci_opt(in, 3));
        s.causal = pm_lower_true(pm_ci_opt(in, 5));
        has_dtype = 0;
        break;
    case PM_AITER_FA_BWD:
        shapes(in, &s, 0, ib, ih, inn, idd);
        dropout = pm_optional_float(pm_ci_opt(in, 10));
        s.causal = pm_lower_true(pm_ci_opt(in, 12));
        has_dtype = 0;
        break;
    case PM_AITER_V3_FWD:
        shapes(in, &s, 1, ib, ih, inn, idd);
        dropout = pm_optional_float(pm_ci_opt(in, 4));
        s.causal = pm_lower_true(pm_ci_opt(in, 6));
        has_dtype = 0;
        break;
    case PM_AITER_V3_BWD:
        shapes(in, &s, 1, ib, ih, inn, idd);
        dropout = pm_optional_float(pm_ci_opt(in, 7));
        s.causal = pm_lower_true(pm_ci_opt(in, 9));
        has_dtype = 0;
        break;
    case PM_AITER_MHA_FWD:
        shapes(in, &s, 0, ib, ih, inn, idd);
        dropout = pm_optional_float(pm_ci_opt(in, 3));
        s.causal = pm_lower_true(pm_ci_opt(in, 5));
        has_dtype = 0;
        break;
    case PM_AITER_MHA_BWD:
        shapes(in, &s, 1, ib, ih, inn, idd);
        dropout = pm_optional_float(pm_ci_opt(in, 6));
        s.causal = pm_lower_true(pm_ci_opt(in, 8));
        has_dtype = 0;
        break;
    case PM_FA3_FWD:
        shapes(in, &s, 0, ib, ih, inn, idd);
        dropout = 0.0;
        s.causal = pm_lower_true(pm_ci_opt(in, 24));
        has_dtype = 0;
        break;
    case PM_EVOFORMER: {
        const tl_pv *q = pm_dims(in, 0);
        s.B = pn_mul(PN_I(pm_dim(in, q, 0)), PN_I(pm_dim(in, q, 1)));
        s.NQ = s.NKV = PN_I(pm_dim(in, q, 2));
        s.HQ = s.HKV = PN_I(pm_dim(in, q, 3));
        s.dqk = s.dv = PN_I(pm_dim(in, q, 4));
        s.causal = 0;
        s.flash = 0;
        has_dropout = 0;
        has_dtype = 0;
        if (tl_pv_is_seq(in->types) && tl_pv_len(in->types) > 0) {
            t0 = pm_type(in, 0);
            dtypes = tl_pv_new_seq(in->a, TL_PV_LIST, 1);
            dtypes->u.seq.v[0] = pm_v_str(in, t0);
        }
        break;
    }
    default:
        pm_raise(in, "unknown attention model");
    }

    if (has_dtype) {
        t0 = pm_type(in, 0);
        t1 = pm_type(in, 1);
        dtypes = pm_v_tup(in, 2, pm_v_str(in, t0), pm_v_str(in, t1));
    }

    /* params */
    shape_params(in, out, &s);
    if (has_strides) {
        pm_param(in, out, "q_stride", pm_v_tuple(in, pm_stride(in, iq)));
        pm_param(in, out, "k_stride", pm_v_tuple(in, pm_stride(in, iq + 1)));
        pm_param(in, out, "v_stride", pm_v_tuple(in, pm_stride(in, iq + 2)));
    }
    if (has_dropout) pm_param(in, out, "dropout", pm_v_float(in, dropout));
    pm_param(in, out, "causal", pm_v_bool(in, s.causal));
    pm_param(in, out, "flash_impl", pm_v_bool(in, s.flash));
    if (has_dtype || in->id == PM_EVOFORMER) pm_param(in, out, "dtype_A_B", dtypes);

    sdpa_numbers(in, &s, t0, out);
    out->maf = "matrix";
    out->cs_dtype = (has_dtype || in->id == PM_EVOFORMER) ? t0 : NULL;
    return PM_OK;
}
