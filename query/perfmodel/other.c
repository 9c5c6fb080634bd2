/* other.c — the remaining core models (perf-models.md §5.8, §5.9): Primus
 * grouped GEMM (fixed-K and variable-K, two argument layouts each), MoE
 * dispatch/combine traffic, causal conv1d and Mamba SSD, fused RoPE and
 * cross-entropy. These are CODE-only in the spec (no reference CSV row),
 * so they follow the spec text literally. */
#include "query/perfmodel/pm_internal.h"

#include <stdlib.h>
#include <string.h>

/* bpe(Types[0]) with the reference's fallback of 2 bytes */
static int bpe0_or2(pm_in *in)
{
    if (!tl_pv_is_seq(in->types) || tl_pv_len(in->types) == 0) return 2;
    const tl_pv *t = tl_pv_at(in->types, 0);
    int b = t && t->kind == TL_PV_STR ? pm_bpe(t->u.s.p) : 0;
    return b ? b : 2;
}

static const char *type0_opt(pm_in *in)
{
    const tl_pv *t = tl_pv_at(in->types, 0);
    return t && t->kind == TL_PV_STR ? t->u.s.p : NULL;
}

static const char *type_opt(pm_in *in, long i)
{
    const tl_pv *t = tl_pv_at(in->types, i);
    return t && t->kind == TL_PV_STR ? t->u.s.p : NULL;
}

/* ---- grouped GEMM ------------------------------------------------------------- */

static int pos_int(const tl_pv *v, int64_t *out)
{
    if (!v || v->kind != TL_PV_INT || v->u.i.big || v->u.i.v <= 0) return 0;
    *out = v->u.i.v;
    return 1;
}

typedef TL_VEC(int64_t) i64vec;

/* every 2-element list of positive ints found by recursive descent */
static void collect_pairs(const tl_pv *v, i64vec *out, int depth)
{
    if (!tl_pv_is_seq(v) || depth > 64) return;
    int64_t a, b;
    if (tl_pv_len(v) == 2 && pos_int(tl_pv_at(v, 0), &a) && pos_int(tl_pv_at(v, 1), &b)) {
        tl_vec_push(out, a);
        tl_vec_push(out, b);
        return;
    }
    for (size_t i = 0; i < tl_pv_len(v); i++) collect_pairs(tl_pv_at(v, (long)i), out, depth + 1);
}

static int grouped_gemm(pm_in *in, pm_out *out)
{
    if (in->mode == TL_PM_BWD) return PM_NOTIMPL;
    const tl_pv *d0 = pm_dims(in, 0), *d1 = pm_dims(in, 1);
    int vk = in->id == PM_GROUPED_GEMM_VK;
    i64vec groups = {0}; /* M_i, K_i, N_i triples */
    int64_t M = 0, K = 0, N = 0, G = 0, a, b, c, x, y;
    int ok = 0;
    if (!vk) {
        if (tl_pv_is_seq(d0) && tl_pv_len(d0) >= 2 && pos_int(tl_pv_at(d0, 0), &a) && pos_int(tl_pv_at(d0, 1), &b) &&
            tl_pv_is_seq(d1) && tl_pv_len(d1) == 3 && pos_int(tl_pv_at(d1, 0), &c) && pos_int(tl_pv_at(d1, 1), &x) &&
            pos_int(tl_pv_at(d1, 2), &y) && (x == b || y == b)) {
            M = a, K = b, G = c, N = x == b ? y : x;
            ok = 1;
        }
    } else if (tl_pv_is_seq(d0) && tl_pv_len(d0) == 2 && pos_int(tl_pv_at(d0, 0), &a) &&
               pos_int(tl_pv_at(d0, 1), &b) && tl_pv_is_seq(d1) && tl_pv_len(d1) == 2 &&
               pos_int(tl_pv_at(d1, 0), &c) && pos_int(tl_pv_at(d1, 1), &x)) {
        tl_vec_push(&groups, a);
        tl_vec_push(&groups, b);
        tl_vec_push(&groups, x);
        ok = 1;
    }
    if (!ok) {
        i64vec l = {0}, r = {0};
        collect_pairs(d0, &l, 0);
        collect_pairs(d1, &r, 0);
        size_t n = l.n / 2;
        if (n && n == r.n / 2) {
            ok = 1;
            if (!vk) {
                K = l.v[1], N = r.v[1], G = (int64_t)n;
                for (size_t i = 0; i < n && ok; i++) {
                    if (l.v[2 * i + 1] != K || r.v[2 * i] != K || r.v[2 * i + 1] != N) ok = 0;
                    M += l.v[2 * i];
                }
            } else {
                for (size_t i = 0; i < n && ok; i++) {
                    if (l.v[2 * i + 1] != r.v[2 * i]) ok = 0;
                    tl_vec_push(&groups, l.v[2 * i]);
                    tl_vec_push(&groups, l.v[2 * i + 1]);
                    tl_vec_push(&groups, r.v[2 * i + 1]);
                }
            }
        }
        tl_vec_free(&l);
        tl_vec_free(&r);
    }
    /* copy groups into the arena before any raise can skip the free */
    size_t ng = groups.n / 3;
    int64_t *gv = tl_arena_alloc(in->a, (groups.n ? groups.n : 1) * sizeof *gv);
    if (groups.n) memcpy(gv, groups.v, groups.n * sizeof *gv);
    tl_vec_free(&groups);
    if (!ok) pm_raise(in, "grouped GEMM shapes match no layout");

    const char *t0 = pm_type(in, 0);
    int bin = pm_bpe(t0), bout = pm_ntypes(in) >= 2 ? pm_bpe(pm_type(in, 1)) : bin;
    out->maf = "matrix";
    out->cs_dtype = t0;
    if (!vk) {
        if (!bin || !bout) pm_raise(in, "grouped GEMM with unknown dtype");
        pnum pM = PN_I(M), pK = PN_I(K), pN = PN_I(N);
        out->flops = pn_mul(pn_mul(pn_mul(PN_I(2), pM), pK), pN);
        pnum y2 = pn_mul(pn_add(pn_mul(pM, pK), pn_mul(pn_mul(PN_I(G), pK), pN)), PN_I(bin));
        out->bytes = pn_add(y2, pn_mul(pn_mul(pM, pN), PN_I(bout)));
        out->has_bytes = 1;
        pm_param(in, out, "M", pm_v_int(in, M));
        pm_param(in, out, "K", pm_v_int(in, K));
        pm_param(in, out, "N", pm_v_int(in, N));
        pm_param(in, out, "G", pm_v_int(in, G));
        pm_param(in, out, "bpe_in", pm_v_int(in, bin));
        pm_param(in, out, "bpe_out", pm_v_int(in, bout));
        return PM_OK;
    }
    pnum f = PN_I(0), by = PN_I(0), sumM = PN_I(0);
    tl_pv *pairs = tl_pv_new_seq(in->a, TL_PV_LIST, ng);
    for (size_t i = 0; i < ng; i++) {
        pnum m = PN_I(gv[3 * i]), k = PN_I(gv[3 * i + 1]), n = PN_I(gv[3 * i + 2]);
        f = pn_add(f, pn_mul(pn_mul(pn_mul(PN_I(2), m), k), n));
        if (bin && bout)
            by = pn_add(by, pn_add(pn_mul(pn_add(pn_mul(m, k), pn_mul(k, n)), PN_I(bin)), pn_mul(pn_mul(m, n), PN_I(bout))));
        sumM = pn_add(sumM, m);
        pairs->u.seq.v[i] = pm_v_tup(in, 2, pm_v_tup(in, 2, pm_v_pn(in, m), pm_v_pn(in, k)),
                                     pm_v_tup(in, 2, pm_v_pn(in, k), pm_v_pn(in, n)));
    }
    out->flops = f;
    out->has_bytes = bin && bout;
    out->bytes = by;
    pm_param(in, out, "M", pm_v_pn(in, sumM));
    pm_param(in, out, "K", pm_v_int(in, gv[1]));
    pm_param(in, out, "N", pm_v_int(in, gv[2]));
    pm_param(in, out, "G", pm_v_int(in, (int64_t)ng));
    pm_param(in, out, "bpe_in", bin ? pm_v_int(in, bin) : NULL);
    pm_param(in, out, "bpe_out", bout ? pm_v_int(in, bout) : NULL);
    pm_param(in, out, "group_pairs", pairs);
    return PM_OK;
}

/* ---- MoE dispatch / combine ------------------------------------------------------ */

static int moe_comm(pm_in *in, pm_out *out)
{
    const tl_pv *x = pm_dims(in, 0);
    int64_t tok = pm_dim(in, x, 0), hid = pm_dim(in, x, 1);
    const char *t0 = type0_opt(in);
    int b = pm_bpe(t0);
    pm_param(in, out, "num_tokens", pm_v_int(in, tok));
    pm_param(in, out, "hidden_dim", pm_v_int(in, hid));
    pm_param(in, out, "bpe", b ? pm_v_int(in, b) : NULL);
    out->flops = PN_I(0);
    out->has_bytes = b != 0;
    out->bytes = pn_mul(pn_mul(PN_I(tok), PN_I(hid)), PN_I(b));
    out->maf = NULL; /* the reference gives MoE comm no Compute Spec */
    return PM_OK;
}

/* ---- SSM ------------------------------------------------------------------------ */

static int causal_conv1d(pm_in *in, pm_out *out)
{
    if (in->mode == TL_PM_BWD) return PM_NOTIMPL;
    const tl_pv *x = pm_dims(in, 0), *w = pm_dims(in, 1);
    pnum b = PN_I(pm_dim(in, x, 0)), c = PN_I(pm_dim(in, x, 1)), s = PN_I(pm_dim(in, x, 2));
    pnum k = PN_I(pm_dim(in, w, 1));
    const tl_pv *bias = tl_pv_at(in->dims, 2);
    int has_bias = pm_ndims(in) > 2 && tl_pv_is_seq(bias) && tl_pv_len(bias) > 0;
    int bpe = bpe0_or2(in);
    pm_param(in, out, "batch", pm_v_pn(in, b));
    pm_param(in, out, "channels", pm_v_pn(in, c));
    pm_param(in, out, "seq_len", pm_v_pn(in, s));
    pm_param(in, out, "kernel_size", pm_v_pn(in, k));
    pm_param(in, out, "has_bias", pm_v_bool(in, has_bias));
    out->flops = pn_mul(pn_mul(pn_mul(pn_mul(PN_I(2), b), c), s), k);
    pnum e = pn_add(pn_mul(pn_mul(pn_mul(PN_I(2), b), c), s), pn_mul(c, k));
    e = pn_add(e, has_bias ? c : PN_I(0));
    out->has_bytes = 1;
    out->bytes = pn_mul(e, PN_I(bpe));
    out->maf = "matrix";
    out->cs_dtype = type0_opt(in);
    return PM_OK;
}

static int64_t ci_int_or(pm_in *in, long i, int64_t dflt)
{
    const char *s = pm_ci_opt(in, i);
    return s && *s ? pm_py_int(in, s) : dflt;
}

static int mamba_ssd(pm_in *in, pm_out *out)
{
    const tl_pv *z = pm_dims(in, 0), *cw = pm_dims(in, 1);
    int64_t B = pm_dim(in, z, 0), T = pm_dim(in, z, 1), D = pm_dim(in, z, 2);
    int64_t CC = pm_dim(in, cw, 0), dconv = pm_dim(in, cw, 1);
    int64_t H = pm_dim(in, pm_dims(in, 3), 0);
    int64_t C = ci_int_or(in, 6, 128), P = ci_int_or(in, 15, 64), G = ci_int_or(in, 16, 1);
    pnum dinner = pn_mul(PN_I(H), PN_I(P));
    pnum num = pn_sub(pn_sub(PN_I(D), pn_mul(PN_I(2), dinner)), PN_I(H));
    pnum den = pn_mul(PN_I(2), PN_I(G));
    if (num.bad || den.bad || den.i == 0 || num.i % den.i != 0 || num.i / den.i <= 0)
        pm_raise(in, "Mamba state size is not a positive integer");
    pnum N = PN_I(0);
    N.i = num.i / den.i;
    pnum pB = PN_I(B), pT = PN_I(T), pH = PN_I(H), pP = PN_I(P), pC = PN_I(C), pG = PN_I(G);
    pm_param(in, out, "B", pm_v_pn(in, pB));
    pm_param(in, out, "T", pm_v_pn(in, pT));
    pm_param(in, out, "H", pm_v_pn(in, pH));
    pm_param(in, out, "P", pm_v_pn(in, pP));
    pm_param(in, out, "G", pm_v_pn(in, pG));
    pm_param(in, out, "N", pm_v_pn(in, N));
    pm_param(in, out, "C", pm_v_pn(in, pC));
    pm_param(in, out, "d_inner", pm_v_pn(in, dinner));
    pm_param(in, out, "d_conv", pm_v_int(in, dconv));
    pm_param(in, out, "conv_channels", pm_v_int(in, CC));
    pm_param(in, out, "combined_dim", pm_v_int(in, D));
    pnum f = pn_mul(pn_mul(pn_mul(pn_mul(PN_I(2), pB), PN_I(CC)), pT), PN_I(dconv));
    f = pn_add(f, pn_mul(pn_mul(pn_mul(pn_mul(pn_mul(PN_I(2), pB), pG), pT), pC), N));
    f = pn_add(f, pn_mul(pn_mul(pn_mul(pn_mul(pn_mul(PN_I(2), pB), pH), pT), pC), pP));
    f = pn_add(f, pn_mul(pn_mul(pn_mul(pn_mul(pn_mul(PN_I(4), pB), pH), pT), N), pP));
    out->flops = f;
    int bpe = bpe0_or2(in);
    int bdt = pm_bpe(type_opt(in, 3)), bA = pm_bpe(type_opt(in, 4)), bD = pm_bpe(type_opt(in, 5));
    if (!bdt) bdt = 4;
    if (!bA) bA = 4;
    if (!bD) bD = bpe;
    pnum e = PN_I(bpe);
    pnum y = pn_mul(pn_mul(pn_mul(pB, pT), PN_I(D)), e);
    y = pn_add(y, pn_mul(pn_mul(PN_I(CC), PN_I(dconv)), e));
    y = pn_add(y, pn_mul(PN_I(CC), e));
    y = pn_add(y, pn_mul(pH, PN_I(bdt + bA + bD)));
    y = pn_add(y, pn_mul(pn_mul(pn_mul(pB, pT), dinner), e));
    out->has_bytes = 1;
    out->bytes = y;
    out->maf = "matrix";
    out->cs_dtype = type0_opt(in);
    return PM_OK;
}

/* ---- RoPE, cross-entropy --------------------------------------------------------- */

static int fused_rope(pm_in *in, pm_out *out)
{
    if (in->mode == TL_PM_BWD) return PM_NOTIMPL;
    const tl_pv *x = pm_dims(in, 0);
    static const char *keys[] = {"seq_len", "batch", "heads", "head_dim"};
    for (long i = 0; i < 4; i++) pm_param(in, out, keys[i], pm_v_int(in, pm_dim(in, x, i)));
    pnum ne = pm_prod(in, x);
    pm_param(in, out, "num_elements", pm_v_pn(in, ne));
    out->flops = pn_mul(PN_I(3), ne);
    out->has_bytes = 1;
    out->bytes = pn_mul(pn_mul(PN_I(2), ne), PN_I(bpe0_or2(in)));
    out->maf = "vector";
    out->cs_dtype = type0_opt(in);
    return PM_OK;
}

static int cross_entropy(pm_in *in, pm_out *out)
{
    if (in->mode == TL_PM_BWD) return PM_NOTIMPL;
    const tl_pv *x = pm_dims(in, 0);
    pnum b = PN_I(pm_dim(in, x, 0)), v = PN_I(pm_dim(in, x, -1));
    pm_param(in, out, "batch", pm_v_pn(in, b));
    pm_param(in, out, "vocab_size", pm_v_pn(in, v));
    pm_param(in, out, "logits_shape", pm_v_tuple(in, x));
    out->flops = pn_mul(pn_mul(PN_I(5), b), v);
    pnum y = pn_mul(pm_prod(in, x), PN_I(bpe0_or2(in)));
    y = pn_add(pn_add(y, pn_mul(PN_I(8), b)), pn_mul(PN_I(4), b));
    out->has_bytes = 1;
    out->bytes = y;
    out->maf = "vector";
    out->cs_dtype = type0_opt(in);
    return PM_OK;
}

int pm_other(pm_in *in, pm_out *out)
{
    switch (in->id) {
    case PM_GROUPED_GEMM:
    case PM_GROUPED_GEMM_VK:
        return grouped_gemm(in, out);
    case PM_MOE_COMM:
        return moe_comm(in, out);
    case PM_CAUSAL_CONV1D:
        return causal_conv1d(in, out);
    case PM_MAMBA_SSD:
        return mamba_ssd(in, out);
    case PM_FUSED_ROPE:
        return fused_rope(in, out);
    case PM_CROSS_ENTROPY:
        return cross_entropy(in, out);
    default:
        pm_raise(in, "unknown model");
    }
}
