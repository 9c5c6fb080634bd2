/* mhc.c — the reference's mHC (manifold hyper-connection) extension models
 * of AITER, and aiter::topk_softplus which shares their base (MoE_aux):
 * sizes from fixed argument positions, b = bpe of the input dtype (its
 * Input type entry, c10::BFloat16 when the list is shorter; an unknown
 * width makes bytes unknown), fp32 mixes, GEMM outputs and scales.
 *
 *   mhc_post (x (M, C) at 1, n = Dims[0][1]):
 *     FLOPs 2·M·n·C·(n+1); bytes M·C·b + 2·M·n·C·b + 4·M·n + 4·M·n²
 *   mhc_pre_gemm_sqrsum (x (M, n, C) at 2, fn (hc3, K) at 3, split_k = Dims[0][0]):
 *     FLOPs 2·M·hc3·K; bytes M·n·C·b + 4·hc3·K + 4·split_k·M·hc3 + 4·split_k·M
 *   mhc_pre_big_fuse_rmsnorm (x (M, C) at 2, n = Dims[0][1], hc3 = Dims[6][0],
 *     split_k = Dims[3][0], dtype at 7):
 *     FLOPs 2·M·C·n + 5·M·C; bytes M·n·C·b + 4·split_k·M·hc3 + C·b + M·C·b
 *     + 4·M·n + 4·M·n²
 *   mhc_fused_post_pre_gemm_sqrsum (x (M, C) at 3, n = Dims[2][1], fn (hc3, K)
 *     at 7, split_k = Dims[0][0]): FLOPs 2·M·n·C·(n+1) + 2·M·hc3·K; bytes
 *     M·C·b + 3·M·n·C·b + 4·M·n + 4·M·n² + 4·hc3·K + 4·split_k·M·hc3 + 4·split_k·M
 *   topk_softplus (gating (M, E) at 2, topk = Dims[0][1]):
 *     FLOPs 6·M·E; bytes M·E·b + 4·E + 8·M·topk
 *
 * Compute Spec vector_<precision>, matrix_ for the two GEMM ones; no backward. */
#include "query/perfmodel/pm_internal.h"

static int64_t D(pm_in *in, long i, long j) { return pm_dim(in, pm_dims(in, i), j); }
static pnum P(int64_t v) { return PN_I(v); }
static pnum mul(pnum a, pnum b) { return pn_mul(a, b); }
static pnum add(pnum a, pnum b) { return pn_add(a, b); }

static void put(pm_in *in, pm_out *out, const char *k, int64_t v) { pm_param(in, out, k, pm_v_int(in, v)); }

int pm_mhc(pm_in *in, pm_out *out)
{
    if (in->mode == TL_PM_BWD) return PM_NOTIMPL;
    int id = in->id;
    long ti = id == PM_MHC_POST ? 1 : id == PM_MHC_PRE_BIG_FUSE ? 7 : id == PM_MHC_FUSED_POST_PRE ? 3 : 2;
    const char *dt = (long)pm_ntypes(in) > ti ? pm_type(in, ti) : "c10::BFloat16";
    int64_t M, n, C, hc3 = 0, K = 0, sk = 0, E = 0, topk = 0;
    switch (id) {
    case PM_MHC_POST:
        M = D(in, 1, 0); C = D(in, 1, 1); n = D(in, 0, 1);
        break;
    case PM_MHC_PRE_GEMM:
        M = D(in, 2, 0); n = D(in, 2, 1); C = D(in, 2, 2); hc3 = D(in, 3, 0); K = D(in, 3, 1); sk = D(in, 0, 0);
        break;
    case PM_MHC_PRE_BIG_FUSE:
        M = D(in, 2, 0); C = D(in, 2, 1); n = D(in, 0, 1); hc3 = D(in, 6, 0); sk = D(in, 3, 0);
        break;
    case PM_MHC_FUSED_POST_PRE:
        M = D(in, 3, 0); C = D(in, 3, 1); n = D(in, 2, 1); hc3 = D(in, 7, 0); K = D(in, 7, 1); sk = D(in, 0, 0);
        break;
    default: /* PM_TOPK_SOFTPLUS */
        M = D(in, 2, 0); E = D(in, 2, 1); topk = D(in, 0, 1); n = 1; C = E;
        break;
    }
    put(in, out, "M", M);
    put(in, out, "n", n);
    put(in, out, "C", C);
    if (id == PM_TOPK_SOFTPLUS) {
        put(in, out, "E", E);
        put(in, out, "topk", topk);
    } else if (id == PM_MHC_POST) {
        pm_param(in, out, "hc3", NULL);
    } else {
        put(in, out, "hc3", hc3);
        if (id != PM_MHC_PRE_BIG_FUSE) put(in, out, "K", K);
        put(in, out, "split_k", sk);
    }
    pm_param(in, out, "dtype_in", pm_v_str(in, dt));
    pnum m = P(M), nn = P(n), c = P(C), four = P(4);
    pnum mixes = add(mul(mul(m, nn), four), mul(mul(mul(m, nn), nn), four));
    pnum gemm_out = add(mul(mul(mul(P(sk), m), P(hc3)), four), mul(mul(P(sk), m), four));
    pnum post = mul(mul(mul(mul(P(2), m), nn), c), add(nn, P(1)));
    pnum b = P(pm_bpe(dt)), mnc = mul(mul(mul(m, nn), c), b), mc = mul(mul(m, c), b);
    switch (id) {
    case PM_MHC_POST:
        out->flops = post;
        out->bytes = add(add(mc, mul(P(2), mnc)), mixes);
        break;
    case PM_MHC_PRE_GEMM:
        out->flops = mul(mul(mul(P(2), m), P(hc3)), P(K));
        out->bytes = add(add(mnc, mul(mul(P(hc3), P(K)), four)), gemm_out);
        break;
    case PM_MHC_PRE_BIG_FUSE:
        out->flops = add(mul(mul(mul(P(2), m), c), nn), mul(mul(P(5), m), c));
        out->bytes = add(add(add(mnc, mul(mul(mul(P(sk), m), P(hc3)), four)), add(mul(c, b), mc)), mixes);
        break;
    case PM_MHC_FUSED_POST_PRE:
        out->flops = add(post, mul(mul(mul(P(2), m), P(hc3)), P(K)));
        out->bytes = add(add(add(mc, mul(P(3), mnc)), mixes), add(mul(mul(P(hc3), P(K)), four), gemm_out));
        break;
    default:
        out->flops = mul(mul(P(6), m), P(E));
        out->bytes = add(add(mul(mul(m, P(E)), b), mul(P(E), four)), mul(mul(P(8), m), P(topk)));
        break;
    }
    out->has_bytes = pm_bpe(dt) != 0;
    out->maf = id == PM_MHC_PRE_GEMM || id == PM_MHC_FUSED_POST_PRE ? "matrix" : "vector";
    out->cs_dtype = dt;
    return PM_OK;
}
