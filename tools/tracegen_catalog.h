/* tracegen_catalog.h — model construction from the seed: dimensions, every
 * op, kernel, collective site and python frame name of one rank. Included
 * only by tools/tracegen.c. */
#ifndef TRACEGEN_CATALOG_H
#define TRACEGEN_CATALOG_H

#include "tools/tracegen_build.h"

static void mk_ag(model *m, opspec *ag, opspec *det, shp s)
{
    argb a = {0};
    ab_t(&a, BF16, s);
    mk_op(m, ag, "torch::autograd::AccumulateGrad", &a, 900, 0);
    ab_t(&a, BF16, s);
    mk_op(m, det, "aten::detach", &a, 500, 0);
}
/* extra per-model ops that do not fit the named fields */
struct xops {
    opspec gelu_moe, gelu_moe_bnode, gelu_moe_bwd, ag_m1, det_m1, ag_m2, det_m2, ag_cw, det_cw,
        ag_cb, det_cb, pos_sum, to_bf, tocopy_bf, es_bf, copy_bf, view_r, reshape_r, empty_z,
        mul_loss, mul_bnode, mul_b;
    kspec k_pos_sum, k_copy_bf, k_mul;
};
typedef struct xops xops;
static const xops *X(const model *m) { return m->xo; }

static void model_build(model *m, uint64_t seed, int rank, int world, int L)
{
    memset(m, 0, sizeof *m);
    m->seed = seed, m->rank = rank, m->world = world, m->L = L;
    m->tp = (world >= 4 && world % 2 == 0) ? 2 : 0;
    m->npg = 1 + (m->tp ? world / m->tp : 0);
    m->my_tp_pg = m->tp ? 1 + rank / m->tp : 0;
    m->gpn = 8;
    m->dev = rank % m->gpn;
    uint64_t h = tg_mix(seed ^ 0x7261636567656eULL);
    static const int64_t Hs[] = {768, 1024, 1280, 1536}, IMGs[] = {224, 384, 512}, Bs[] = {8, 16, 32};
    m->H = Hs[h % 4];
    m->IMG = IMGs[(h >> 8) % 3];
    m->P = 16;
    m->S = (m->IMG / m->P) * (m->IMG / m->P);
    m->Bt = Bs[(h >> 16) % 3];
    while (m->Bt > 1 && m->Bt * m->S > 16384) m->Bt /= 2;
    m->HD = 64, m->NH = m->H / 64, m->F = 4 * m->H, m->NCLS = 1000;
    m->E = 2; /* local experts per rank */
    m->moe_every = L >= 4 ? 4 : (L > 0 ? L : 1); /* small models still get one MoE block */
    uint64_t ph = tg_mix(seed ^ 0x706964ULL);
    m->pid = 20000 + (int64_t)(ph % 40000) + 7 * rank;
    m->tid_main = m->pid;
    m->tid_bwd = m->pid + 113;

    int64_t Bt = m->Bt, Sq = m->S, H = m->H, NH = m->NH, HD = m->HD, F = m->F, T = Bt * Sq;
    shp x = sh3(Bt, Sq, H), xf = sh3(Bt, Sq, F);
    char b1[96], b2[96];
    argb a = {0};
    xops *xo = calloc(1, sizeof *xo);
    if (!xo) exit(1);
    m->xo = xo;
    const char *eps = "9.9999999999999995e-07";

    mk_lin(m, &m->qkv, x, H, 3 * H);
    mk_lin(m, &m->proj, x, H, H);
    mk_lin(m, &m->fc1, x, H, F);
    mk_lin(m, &m->fc2, xf, F, H);
    mk_lin(m, &m->head, sh2(Bt, H), H, m->NCLS);

    /* layer norm */
    snprintf(b1, sizeof b1, "[%lld]", (long long)H);
    ab_t(&a, BF16, x), ab_s(&a, "ScalarList", b1), ab_t(&a, BF16, sh1(H)), ab_t(&a, BF16, sh1(H));
    ab_s(&a, "Scalar", eps), ab_s(&a, "Scalar", "True");
    mk_op(m, &m->ln_fwd, "aten::layer_norm", &a, 1100, 0);
    ab_t(&a, BF16, x), ab_s(&a, "ScalarList", b1), ab_t(&a, BF16, sh1(H)), ab_t(&a, BF16, sh1(H));
    ab_s(&a, "Scalar", eps);
    mk_op(m, &m->ln_nat, "aten::native_layer_norm", &a, 3600, T * H * 2);
    mk_k(m, &m->k_ln, API_LAUNCH, K_LN, ew_ns(2 * T * H * 2), T, 1, 1, 32, 4, 1, 34, 24);
    op_k(&m->ln_nat, &m->k_ln);
    ab_t(&a, BF16, x);
    mk_op(m, &m->ln_bnode, "NativeLayerNormBackward0", &a, 700, 0);
    ab_t(&a, BF16, x), ab_t(&a, BF16, x), ab_s(&a, "ScalarList", b1), ab_t(&a, "float", sh3(Bt, Sq, 1));
    ab_t(&a, "float", sh3(Bt, Sq, 1)), ab_t(&a, BF16, sh1(H)), ab_t(&a, BF16, sh1(H));
    ab_s(&a, "ScalarList", "[True, True, True]");
    mk_op(m, &m->ln_bwd, "aten::native_layer_norm_backward", &a, 4100, T * H * 2);
    mk_k(m, &m->k_lnb1, API_LAUNCH, K_LNB1, ew_ns(3 * T * H * 2), T, 1, 1, 32, 4, 1, 40, 0);
    mk_k(m, &m->k_lnb2, API_LAUNCH, K_LNB2, ew_ns(2 * T * H * 2), cdiv(H, 32), 1, 1, 32, 32, 1, 64, 8192);
    op_k(&m->ln_bwd, &m->k_lnb1), op_k(&m->ln_bwd, &m->k_lnb2);
    mk_ag(m, &m->ln_agw, &m->ln_det, sh1(H));

    /* attention */
    snprintf(b1, sizeof b1, "[%lld, %lld, 3, %lld, %lld]", (long long)Bt, (long long)Sq, (long long)NH, (long long)HD);
    ab_t(&a, BF16, sh3(Bt, Sq, 3 * H)), ab_s(&a, "ScalarList", b1);
    mk_op(m, &m->view_qkv, "aten::view", &a, 700, 0);
    ab_t(&a, BF16, sh5(Bt, Sq, 3, NH, HD)), ab_s(&a, "ScalarList", "[2, 0, 3, 1, 4]");
    mk_op(m, &m->permute, "aten::permute", &a, 700, 0);
    shp u5 = sh5(3, Bt, NH, Sq, HD), u5s = sh5(H, Sq * 3 * H, HD, 3 * H, 1);
    ab_ts(&a, BF16, u5, u5s), ab_s(&a, "Scalar", "0");
    mk_op(m, &m->unbind, "aten::unbind", &a, 900, 0);
    ab_ts(&a, BF16, u5, u5s), ab_s(&a, "Scalar", "0"), ab_s(&a, "Scalar", "0");
    mk_op(m, &m->select, "aten::select", &a, 400, 0);
    shp q4 = sh4(Bt, NH, Sq, HD), q4s = sh4(Sq * 3 * H, HD, 3 * H, 1);
    shp k4 = sh4(Bt, Sq, NH, HD), k4s = sh4(Sq * 3 * H, 3 * H, HD, 1);
    for (int i = 0; i < 3; i++) ab_ts(&a, BF16, q4, q4s);
    ab_s(&a, "", ""), ab_s(&a, "Scalar", "0."), ab_s(&a, "Scalar", "False"), ab_s(&a, "", ""),
        ab_s(&a, "Scalar", "False");
    mk_op(m, &m->sdpa, "aten::scaled_dot_product_attention", &a, 1500, 0);
    for (int i = 0; i < 3; i++) ab_ts(&a, BF16, q4, q4s);
    ab_s(&a, "Scalar", "0."), ab_s(&a, "Scalar", "False"), ab_s(&a, "Scalar", "False"),
        ab_s(&a, "Scalar", "0.125");
    mk_op(m, &m->sdpa_flash, "aten::_scaled_dot_product_flash_attention", &a, 1800, 0);
    ab_ts(&a, BF16, q4, q4s), ab_s(&a, "Scalar", "1"), ab_s(&a, "Scalar", "2");
    mk_op(m, &m->transpose_q, "aten::transpose", &a, 400, 0);
    snprintf(b1, sizeof b1, "%lld", (long long)Sq);
    for (int i = 0; i < 3; i++) ab_ts(&a, BF16, k4, k4s);
    ab_s(&a, "", ""), ab_s(&a, "", ""), ab_s(&a, "Scalar", b1), ab_s(&a, "Scalar", b1);
    ab_s(&a, "Scalar", "0."), ab_s(&a, "Scalar", "False"), ab_s(&a, "Scalar", "False"),
        ab_s(&a, "Scalar", "0.125");
    for (int i = 0; i < 4; i++) ab_s(&a, "", "");
    mk_op(m, &m->flash_fwd, "aten::_flash_attention_forward", &a, 3900, T * H * 2 + Bt * NH * Sq * 4);
    int64_t fl = 4 * Bt * NH * Sq * Sq * HD;
    mk_k(m, &m->k_flash, API_LAUNCH, K_FLASH, 3000 + fl / 300000, cdiv(Sq, 128), Bt, NH, 128, 1, 1, 255, 49152);
    op_k(&m->flash_fwd, &m->k_flash);
    ab_t(&a, BF16, k4);
    for (int i = 0; i < 5; i++) ab_s(&a, "", "");
    mk_op(m, &m->empty_like, "aten::empty_like", &a, 900, 0);
    snprintf(b2, sizeof b2, "[%lld, %lld, %lld]", (long long)Bt, (long long)NH, (long long)Sq);
    ab_s(&a, "ScalarList", b2), ab_s(&a, "Scalar", "6"), ab_s(&a, "Scalar", "0");
    for (int i = 0; i < 3; i++) ab_s(&a, "", "");
    mk_op(m, &m->empty, "aten::empty", &a, 800, 0);
    ab_ts(&a, BF16, q4, sh4(Sq * H, HD, H, 1)), ab_s(&a, "Scalar", "1"), ab_s(&a, "Scalar", "2");
    mk_op(m, &m->attn_tr, "aten::transpose", &a, 400, 0);
    snprintf(b2, sizeof b2, "[%lld, %lld, %lld]", (long long)Bt, (long long)Sq, (long long)H);
    ab_t(&a, BF16, k4), ab_s(&a, "ScalarList", b2);
    mk_op(m, &xo->reshape_r, "aten::reshape", &a, 800, 0);
    ab_t(&a, BF16, k4), ab_s(&a, "ScalarList", b2);
    mk_op(m, &xo->view_r, "aten::view", &a, 600, 0);
    /* attention backward */
    ab_ts(&a, BF16, q4, sh4(Sq * H, HD, H, 1));
    mk_op(m, &m->sdpa_bnode, "ScaledDotProductFlashAttentionBackward0", &a, 900, 0);
    ab_ts(&a, BF16, q4, sh4(Sq * H, HD, H, 1));
    for (int i = 0; i < 3; i++) ab_ts(&a, BF16, q4, q4s);
    ab_ts(&a, BF16, q4, sh4(Sq * H, HD, H, 1)), ab_t(&a, "float", sh3(Bt, NH, Sq));
    ab_s(&a, "", ""), ab_s(&a, "", ""), ab_s(&a, "Scalar", b1), ab_s(&a, "Scalar", b1);
    ab_s(&a, "Scalar", "0."), ab_s(&a, "Scalar", "False"), ab_t(&a, "long int", sh1(2)),
        ab_t(&a, "long int", sh1(1)), ab_s(&a, "Scalar", "0.125");
    mk_op(m, &m->sdpa_bwd, "aten::_scaled_dot_product_flash_attention_backward", &a, 2100, 0);
    for (int i = 0; i < 5; i++) ab_ts(&a, BF16, k4, i == 0 || i == 4 ? contig(k4) : k4s);
    ab_t(&a, "float", sh3(Bt, NH, Sq));
    ab_s(&a, "", ""), ab_s(&a, "", ""), ab_s(&a, "Scalar", b1), ab_s(&a, "Scalar", b1);
    ab_s(&a, "Scalar", "0."), ab_s(&a, "Scalar", "False"), ab_t(&a, "long int", sh1(2)),
        ab_t(&a, "long int", sh1(1)), ab_s(&a, "Scalar", "0.125"), ab_s(&a, "", ""), ab_s(&a, "", "");
    mk_op(m, &m->flash_bwd, "aten::_flash_attention_backward", &a, 4600, 3 * T * H * 2);
    mk_k(m, &m->k_fb1, API_LAUNCH, K_FB1, ew_ns(2 * T * H * 2), cdiv(Sq, 128), Bt, NH, 256, 1, 1, 40, 0);
    mk_k(m, &m->k_fb2, API_LAUNCH, K_FB2, 6000 + fl * 5 / 2 / 260000, cdiv(Sq, 128), Bt, NH, 256, 1, 1, 255, 98304);
    mk_k(m, &m->k_fb3, API_LAUNCH, K_FB3, ew_ns(T * H * 6), cdiv(Sq, 128), Bt, NH, 256, 1, 1, 48, 24576);
    snprintf(b2, sizeof b2, "[%lld, %lld, %lld, %lld]", (long long)Bt, (long long)Sq, (long long)NH, (long long)HD);
    ab_s(&a, "ScalarList", b2), ab_s(&a, "Scalar", "6"), ab_s(&a, "", ""), ab_s(&a, "Scalar", "0"), ab_s(&a, "", "");
    mk_op(m, &m->zeros, "aten::zeros", &a, 1100, T * H * 4);
    ab_s(&a, "ScalarList", b2), ab_s(&a, "Scalar", "6"), ab_s(&a, "Scalar", "0");
    for (int i = 0; i < 3; i++) ab_s(&a, "", "");
    mk_op(m, &xo->empty_z, "aten::empty", &a, 700, 0);
    ab_t(&a, "float", k4);
    mk_op(m, &m->zero_, "aten::zero_", &a, 1200, 0);
    mk_copy(m, &m->k_memset_fb, GK_MEMSET, "Memset (Device)", T * H * 4, 2600);
    op_k(&m->zero_, &m->k_memset_fb);
    ab_t(&a, BF16, q4);
    mk_op(m, &m->unbind_bnode, "UnbindBackward0", &a, 700, 0);
    ab_sep(&a);
    ab_q(&a.ci, ""), ab_q(&a.ty, "TensorList");
    ob_printf(&a.st, "[[%lld, %lld, %lld, %lld], [%lld, %lld, %lld, %lld], [%lld, %lld, %lld, %lld]]",
              (long long)(Sq * H), (long long)HD, (long long)H, 1LL, (long long)(Sq * H), (long long)HD,
              (long long)H, 1LL, (long long)(Sq * H), (long long)HD, (long long)H, 1LL);
    ob_printf(&a.di, "[[%lld, %lld, %lld, %lld], [%lld, %lld, %lld, %lld], [%lld, %lld, %lld, %lld]]",
              (long long)Bt, (long long)NH, (long long)Sq, (long long)HD, (long long)Bt, (long long)NH,
              (long long)Sq, (long long)HD, (long long)Bt, (long long)NH, (long long)Sq, (long long)HD);
    ab_s(&a, "Scalar", "0");
    mk_op(m, &m->stack, "aten::stack", &a, 1300, 0);
    ab_sep(&a);
    ab_q(&a.ci, ""), ab_q(&a.ty, "TensorList");
    ob_printf(&a.st, "[[%lld, %lld, %lld, %lld, %lld], [%lld, %lld, %lld, %lld, %lld], [%lld, %lld, %lld, %lld, %lld]]",
              (long long)(NH * Sq * HD), (long long)(Sq * HD), (long long)HD, 1LL, 1LL,
              (long long)(NH * Sq * HD), (long long)(Sq * HD), (long long)HD, 1LL, 1LL,
              (long long)(NH * Sq * HD), (long long)(Sq * HD), (long long)HD, 1LL, 1LL);
    ob_printf(&a.di, "[[1, %lld, %lld, %lld, %lld], [1, %lld, %lld, %lld, %lld], [1, %lld, %lld, %lld, %lld]]",
              (long long)Bt, (long long)NH, (long long)Sq, (long long)HD, (long long)Bt, (long long)NH,
              (long long)Sq, (long long)HD, (long long)Bt, (long long)NH, (long long)Sq, (long long)HD);
    ab_s(&a, "Scalar", "0");
    mk_op(m, &m->cat, "aten::cat", &a, 2600, 3 * T * H * 2);
    mk_k(m, &m->k_cat, API_LAUNCH, K_CAT, ew_ns(2 * 3 * T * H * 2), cdiv(T * H, 65536) * 2, 3, 1, 128, 1, 1, 32, 0);
    op_k(&m->cat, &m->k_cat);
    ab_t(&a, BF16, u5);
    mk_op(m, &m->perm_bnode, "PermuteBackward0", &a, 600, 0);
    ab_t(&a, BF16, u5), ab_s(&a, "ScalarList", "[1, 3, 0, 2, 4]");
    mk_op(m, &m->perm_b, "aten::permute", &a, 600, 0);
    ab_t(&a, BF16, sh5(Bt, Sq, 3, NH, HD));
    mk_op(m, &m->view_bnode, "ViewBackward0", &a, 600, 0);
    snprintf(b2, sizeof b2, "[%lld, %lld, %lld]", (long long)Bt, (long long)Sq, (long long)(3 * H));
    ab_t(&a, BF16, sh5(Bt, Sq, 3, NH, HD)), ab_s(&a, "ScalarList", b2);
    mk_op(m, &m->view_b, "aten::view", &a, 600, 0);
    ab_t(&a, BF16, x);
    mk_op(m, &m->reshape_bnode, "ViewBackward0", &a, 600, 0); /* reshape's backward */
    snprintf(b2, sizeof b2, "[%lld, %lld, %lld, %lld]", (long long)Bt, (long long)Sq, (long long)NH, (long long)HD);
    ab_t(&a, BF16, x), ab_s(&a, "ScalarList", b2);
    mk_op(m, &m->reshape_b, "aten::view", &a, 600, 0);
    ab_t(&a, BF16, k4);
    mk_op(m, &m->tr_bnode, "TransposeBackward0", &a, 600, 0);
    ab_t(&a, BF16, k4), ab_s(&a, "Scalar", "1"), ab_s(&a, "Scalar", "2");
    mk_op(m, &m->tr_b, "aten::transpose", &a, 400, 0);

    /* residual add, gelu */
    ab_t(&a, BF16, x), ab_t(&a, BF16, x), ab_s(&a, "Scalar", "1");
    mk_op(m, &m->add_res, "aten::add", &a, 3100, T * H * 2);
    mk_k(m, &m->k_add, API_LAUNCH, K_ADD, ew_ns(3 * T * H * 2), cdiv(T * H, 512), 1, 1, 128, 1, 1, 24, 0);
    op_k(&m->add_res, &m->k_add);
    ab_t(&a, BF16, x);
    mk_op(m, &m->add_bnode, "AddBackward0", &a, 500, 0);
    ab_t(&a, BF16, xf), ab_s(&a, "", "");
    mk_op(m, &m->gelu, "aten::gelu", &a, 3000, T * F * 2);
    mk_k(m, &m->k_gelu, API_LAUNCH, K_GELU, ew_ns(2 * T * F * 2), cdiv(T * F, 512), 1, 1, 128, 1, 1, 30, 0);
    op_k(&m->gelu, &m->k_gelu);
    ab_t(&a, BF16, xf);
    mk_op(m, &m->gelu_bnode, "GeluBackward0", &a, 600, 0);
    ab_t(&a, BF16, xf), ab_t(&a, BF16, xf), ab_s(&a, "c10::string_view", "none");
    mk_op(m, &m->gelu_bwd, "aten::gelu_backward", &a, 3100, T * F * 2);
    mk_k(m, &m->k_gelub, API_LAUNCH, K_GELUB, ew_ns(3 * T * F * 2), cdiv(T * F, 512), 1, 1, 128, 1, 1, 32, 0);
    op_k(&m->gelu_bwd, &m->k_gelub);

    /* MoE experts: E local experts, tokens balanced after all_to_allv */
    int64_t Eg = m->E ? m->E : 1, Te = T / Eg;
    shp xe = sh3(Eg, Te, H), he = sh3(Eg, Te, F);
    ab_t(&a, BF16, xe), ab_t(&a, BF16, sh3(Eg, H, F));
    mk_op(m, &m->bmm1, "aten::bmm", &a, 4000, Eg * Te * F * 2);
    mk_k(m, &m->k_bmm1, API_LAUNCH, K_XMMA_NN, Eg * gemm_ns(Te, F, H), cdiv(F, 128), cdiv(Te, 128), Eg, 384, 1, 1, 168, 231424);
    op_k(&m->bmm1, &m->k_bmm1);
    ab_t(&a, BF16, he), ab_t(&a, BF16, sh3(Eg, F, H));
    mk_op(m, &m->bmm2, "aten::bmm", &a, 4000, Eg * Te * H * 2);
    mk_k(m, &m->k_bmm2, API_LAUNCH, K_XMMA_NN, Eg * gemm_ns(Te, H, F), cdiv(H, 128), cdiv(Te, 128), Eg, 384, 1, 1, 168, 231424);
    op_k(&m->bmm2, &m->k_bmm2);
    snprintf(b2, sizeof b2, "[%lld, %lld, %lld]", (long long)Eg, (long long)Te, (long long)H);
    ab_t(&a, BF16, x), ab_s(&a, "ScalarList", b2);
    mk_op(m, &m->bmm_view, "aten::view", &a, 600, 0);
    ab_t(&a, BF16, xe);
    mk_op(m, &m->bmm_bnode, "BmmBackward0", &a, 700, 0);
    mk_k(m, &m->k_bmmb, API_LAUNCH, K_XMMA_NN, Eg * gemm_ns(Te, F, H), cdiv(F, 128), cdiv(Te, 128), Eg, 384, 1, 1, 168, 231424);
    ab_t(&a, BF16, xe), ab_ts(&a, BF16, sh3(Eg, H, F), sh3(F * H, 1, H));
    mk_op(m, &m->bmm_dx2, "aten::bmm", &a, 3800, Eg * Te * F * 2);
    ab_ts(&a, BF16, sh3(Eg, F, Te), sh3(Te * F, 1, F)), ab_t(&a, BF16, xe);
    mk_op(m, &m->bmm_dw2, "aten::bmm", &a, 3800, Eg * F * H * 2);
    ab_t(&a, BF16, he), ab_ts(&a, BF16, sh3(Eg, F, H), sh3(F * H, 1, F));
    mk_op(m, &m->bmm_dx1, "aten::bmm", &a, 3800, Eg * Te * H * 2);
    ab_ts(&a, BF16, sh3(Eg, H, Te), sh3(Te * H, 1, H)), ab_t(&a, BF16, he);
    mk_op(m, &m->bmm_dw1, "aten::bmm", &a, 3800, Eg * H * F * 2);
    op_k(&m->bmm_dx2, &m->k_bmmb), op_k(&m->bmm_dw2, &m->k_bmmb);
    op_k(&m->bmm_dx1, &m->k_bmmb), op_k(&m->bmm_dw1, &m->k_bmmb);
    ab_t(&a, BF16, he), ab_s(&a, "", "");
    mk_op(m, &xo->gelu_moe, "aten::gelu", &a, 3000, T * F * 2);
    op_k(&xo->gelu_moe, &m->k_gelu);
    ab_t(&a, BF16, he);
    mk_op(m, &xo->gelu_moe_bnode, "GeluBackward0", &a, 600, 0);
    ab_t(&a, BF16, he), ab_t(&a, BF16, he), ab_s(&a, "c10::string_view", "none");
    mk_op(m, &xo->gelu_moe_bwd, "aten::gelu_backward", &a, 3100, T * F * 2);
    op_k(&xo->gelu_moe_bwd, &m->k_gelub);
    mk_ag(m, &xo->ag_m1, &xo->det_m1, sh3(Eg, H, F));
    mk_ag(m, &xo->ag_m2, &xo->det_m2, sh3(Eg, F, H));

    /* input pipeline: pinned uint8 images -> device (copy stream) -> bf16 */
    int64_t IMG = m->IMG;
    shp img = sh4(Bt, 3, IMG, IMG);
    ab_t(&a, "unsigned char", img), ab_s(&a, "Scalar", ""), ab_s(&a, "Scalar", ""), ab_s(&a, "", "");
    ab_s(&a, "", ""), ab_s(&a, "Scalar", "True"), ab_s(&a, "Scalar", "False"), ab_s(&a, "", "");
    mk_op(m, &m->to_in, "aten::to", &a, 1500, 0);
    ab_t(&a, "unsigned char", img);
    for (int i = 0; i < 4; i++) ab_s(&a, "", "");
    ab_s(&a, "Scalar", "True"), ab_s(&a, "", "");
    mk_op(m, &m->tocopy_in, "aten::_to_copy", &a, 1700, 0);
    snprintf(b1, sizeof b1, "[%lld, 3, %lld, %lld]", (long long)Bt, (long long)IMG, (long long)IMG);
    snprintf(b2, sizeof b2, "[%lld, %lld, %lld, 1]", (long long)(3 * IMG * IMG), (long long)(IMG * IMG), (long long)IMG);
    ab_s(&a, "ScalarList", b1), ab_s(&a, "ScalarList", b2), ab_s(&a, "Scalar", "0"),
        ab_s(&a, "Scalar", "0"), ab_s(&a, "", ""), ab_s(&a, "Scalar", "False");
    mk_op(m, &m->empty_strided_in, "aten::empty_strided", &a, 2200, Bt * 3 * IMG * IMG);
    ab_t(&a, "unsigned char", img), ab_t(&a, "unsigned char", img), ab_s(&a, "Scalar", "True");
    mk_op(m, &m->copy_in, "aten::copy_", &a, 1900, 0);
    mk_copy(m, &m->k_memcpy_in, GK_MEMCPY, "Memcpy HtoD (Pinned -> Device)", Bt * 3 * IMG * IMG, 24);
    op_k(&m->copy_in, &m->k_memcpy_in);
    ab_t(&a, "unsigned char", img), ab_s(&a, "Scalar", "15"), ab_s(&a, "Scalar", "False"),
        ab_s(&a, "Scalar", "False"), ab_s(&a, "", "");
    mk_op(m, &xo->to_bf, "aten::to", &a, 1200, 0);
    ab_t(&a, "unsigned char", img), ab_s(&a, "Scalar", "15");
    for (int i = 0; i < 3; i++) ab_s(&a, "", "");
    ab_s(&a, "Scalar", "False"), ab_s(&a, "", "");
    mk_op(m, &xo->tocopy_bf, "aten::_to_copy", &a, 1400, 0);
    ab_s(&a, "ScalarList", b1), ab_s(&a, "ScalarList", b2), ab_s(&a, "Scalar", "15"),
        ab_s(&a, "Scalar", "0"), ab_s(&a, "", ""), ab_s(&a, "", "");
    mk_op(m, &xo->es_bf, "aten::empty_strided", &a, 1500, Bt * 3 * IMG * IMG * 2);
    ab_t(&a, BF16, img), ab_t(&a, "unsigned char", img), ab_s(&a, "Scalar", "False");
    mk_op(m, &xo->copy_bf, "aten::copy_", &a, 2600, 0);
    mk_k(m, &xo->k_copy_bf, API_LAUNCH, K_COPY, ew_ns(Bt * 3 * IMG * IMG * 3), cdiv(Bt * 3 * IMG * IMG, 512), 1, 1, 128, 1, 1, 18, 0);
    op_k(&xo->copy_bf, &xo->k_copy_bf);

    /* patch embedding conv: conv2d -> convolution -> _convolution -> cudnn_convolution */
    int64_t PP = IMG / 16;
    shp w = sh4(H, 3, 16, 16), bb = sh1(H), o4 = sh4(Bt, H, PP, PP);
    ab_t(&a, BF16, img), ab_t(&a, BF16, w), ab_t(&a, BF16, bb);
    ab_s(&a, "ScalarList", "[16, 16]"), ab_s(&a, "ScalarList", "[0, 0]"), ab_s(&a, "ScalarList", "[1, 1]"),
        ab_s(&a, "Scalar", "1");
    mk_op(m, &m->conv2d, "aten::conv2d", &a, 1300, 0);
    ab_t(&a, BF16, img), ab_t(&a, BF16, w), ab_t(&a, BF16, bb);
    ab_s(&a, "ScalarList", "[16, 16]"), ab_s(&a, "ScalarList", "[0, 0]"), ab_s(&a, "ScalarList", "[1, 1]");
    ab_s(&a, "Scalar", "False"), ab_s(&a, "ScalarList", "[0, 0]"), ab_s(&a, "Scalar", "1");
    mk_op(m, &m->convolution, "aten::convolution", &a, 1300, 0);
    ab_t(&a, BF16, img), ab_t(&a, BF16, w), ab_t(&a, BF16, bb);
    ab_s(&a, "ScalarList", "[16, 16]"), ab_s(&a, "ScalarList", "[0, 0]"), ab_s(&a, "ScalarList", "[1, 1]");
    ab_s(&a, "Scalar", "False"), ab_s(&a, "ScalarList", "[0, 0]"), ab_s(&a, "Scalar", "1");
    ab_s(&a, "Scalar", "False"), ab_s(&a, "Scalar", "False"), ab_s(&a, "Scalar", "True"),
        ab_s(&a, "Scalar", "True");
    mk_op(m, &m->_convolution, "aten::_convolution", &a, 2100, 0);
    ab_t(&a, BF16, img), ab_t(&a, BF16, w);
    ab_s(&a, "ScalarList", "[0, 0]"), ab_s(&a, "ScalarList", "[16, 16]"), ab_s(&a, "ScalarList", "[1, 1]");
    ab_s(&a, "Scalar", "1"), ab_s(&a, "Scalar", "False"), ab_s(&a, "Scalar", "False"),
        ab_s(&a, "Scalar", "True");
    mk_op(m, &m->cudnn_conv, "aten::cudnn_convolution", &a, 9000, Bt * H * PP * PP * 2);
    int64_t cfl = 2 * Bt * PP * PP * H * 3 * 256;
    mk_copy(m, &m->k_memset_conv, GK_MEMSET, "Memset (Device)", 1 << 20, 2600);
    mk_k(m, &m->k_n2n, API_LAUNCH, K_N2N, ew_ns(Bt * 3 * IMG * IMG * 4), cdiv(IMG * IMG, 256), 1, Bt, 256, 1, 1, 32, 2112);
    mk_k(m, &m->k_fprop, API_CU_LAUNCH, K_FPROP, 2500 + cfl / 380000, cdiv(Bt * PP * PP, 256), cdiv(H, 64), 1, 128, 1, 1, 246, 81920);
    mk_k(m, &m->k_n2c, API_LAUNCH, K_N2C, ew_ns(Bt * H * PP * PP * 4), cdiv(PP * PP, 32), cdiv(H, 32), Bt, 256, 1, 1, 36, 2112);
    op_k(&m->cudnn_conv, &m->k_memset_conv), op_k(&m->cudnn_conv, &m->k_n2n);
    op_k(&m->cudnn_conv, &m->k_fprop), op_k(&m->cudnn_conv, &m->k_n2c);
    ab_t(&a, BF16, o4), ab_ts(&a, BF16, sh4(1, H, 1, 1), sh4(H, 1, 1, 1)), ab_s(&a, "Scalar", "1");
    mk_op(m, &m->conv_bias, "aten::add_", &a, 2900, 0);
    op_k(&m->conv_bias, &m->k_add);
    ab_t(&a, BF16, o4), ab_s(&a, "Scalar", "2"), ab_s(&a, "Scalar", "-1");
    mk_op(m, &m->flatten, "aten::flatten", &a, 900, 0);
    snprintf(b1, sizeof b1, "[%lld, %lld, %lld]", (long long)Bt, (long long)H, (long long)Sq);
    ab_t(&a, BF16, o4), ab_s(&a, "ScalarList", b1);
    mk_op(m, &m->view_pe, "aten::view", &a, 600, 0);
    ab_t(&a, BF16, sh3(Bt, H, Sq)), ab_s(&a, "Scalar", "1"), ab_s(&a, "Scalar", "2");
    mk_op(m, &m->transpose_pe, "aten::transpose", &a, 400, 0);
    ab_ts(&a, BF16, x, sh3(Sq * H, 1, Sq)), ab_t(&a, BF16, sh3(1, Sq, H)), ab_s(&a, "Scalar", "1");
    mk_op(m, &m->add_pos, "aten::add", &a, 3000, T * H * 2);
    op_k(&m->add_pos, &m->k_add);
    ab_t(&a, BF16, x);
    mk_op(m, &m->add_pos_bnode, "AddBackward0", &a, 500, 0);
    ab_t(&a, BF16, x), ab_s(&a, "ScalarList", "[0]"), ab_s(&a, "Scalar", "True"), ab_s(&a, "", "");
    mk_op(m, &xo->pos_sum, "aten::sum", &a, 3200, Sq * H * 2);
    mk_k(m, &xo->k_pos_sum, API_LAUNCH, K_SUM, ew_ns(T * H * 2), cdiv(Sq * H, 512), 1, 1, 32, 16, 1, 40, 16);
    op_k(&xo->pos_sum, &xo->k_pos_sum);
    ab_t(&a, BF16, o4);
    mk_op(m, &m->conv_bnode, "ConvolutionBackward0", &a, 800, 0);
    snprintf(b1, sizeof b1, "[%lld]", (long long)H);
    ab_t(&a, BF16, o4), ab_t(&a, BF16, img), ab_t(&a, BF16, w), ab_s(&a, "ScalarList", b1);
    ab_s(&a, "ScalarList", "[16, 16]"), ab_s(&a, "ScalarList", "[0, 0]"), ab_s(&a, "ScalarList", "[1, 1]");
    ab_s(&a, "Scalar", "False"), ab_s(&a, "ScalarList", "[0, 0]"), ab_s(&a, "Scalar", "1");
    ab_s(&a, "ScalarList", "[False, True, True]");
    mk_op(m, &m->conv_bwd, "aten::convolution_backward", &a, 11000, H * 3 * 256 * 2 + H * 2);
    mk_k(m, &m->k_cn2n, API_LAUNCH, K_N2N, ew_ns(Bt * H * PP * PP * 4), cdiv(PP * PP, 32), cdiv(H, 32), Bt, 256, 1, 1, 32, 2112);
    mk_k(m, &m->k_wgrad, API_CU_LAUNCH, K_WGRAD, 2500 + cfl / 300000, cdiv(H, 128), 1, 24, 128, 1, 1, 232, 73728);
    mk_k(m, &m->k_cbsum, API_LAUNCH, K_SUM, ew_ns(Bt * H * PP * PP * 2), cdiv(H, 32), 16, 1, 32, 16, 1, 40, 16);
    op_k(&m->conv_bwd, &m->k_cn2n), op_k(&m->conv_bwd, &m->k_wgrad), op_k(&m->conv_bwd, &m->k_cbsum);
    mk_ag(m, &xo->ag_cw, &xo->det_cw, w);
    mk_ag(m, &xo->ag_cb, &xo->det_cb, bb);

    /* head: mean-pool, linear, float sum loss */
    ab_t(&a, BF16, x), ab_s(&a, "ScalarList", "[1]"), ab_s(&a, "Scalar", "False"), ab_s(&a, "", "");
    mk_op(m, &m->mean_pool, "aten::mean", &a, 3300, Bt * H * 2);
    mk_k(m, &m->k_mean, API_LAUNCH, K_MEAN, ew_ns(T * H * 2), cdiv(Bt * H, 128), 1, 1, 32, 4, 1, 52, 16);
    op_k(&m->mean_pool, &m->k_mean);
    ab_t(&a, BF16, sh2(Bt, H));
    mk_op(m, &m->mean_bnode, "MeanBackward1", &a, 700, 0);
    snprintf(b1, sizeof b1, "[%lld, %lld, %lld]", (long long)Bt, (long long)Sq, (long long)H);
    ab_t(&a, BF16, sh3(Bt, 1, H)), ab_s(&a, "ScalarList", b1), ab_s(&a, "Scalar", "False");
    mk_op(m, &m->expand_m, "aten::expand", &a, 700, 0);
    snprintf(b1, sizeof b1, "%lld", (long long)Sq);
    ab_ts(&a, BF16, x, sh3(H, 0, 1)), ab_s(&a, "Scalar", b1);
    mk_op(m, &m->div_m, "aten::div", &a, 3000, T * H * 2);
    mk_k(m, &m->k_div, API_LAUNCH, K_DIV, ew_ns(2 * T * H * 2), cdiv(T * H, 512), 1, 1, 128, 1, 1, 22, 0);
    op_k(&m->div_m, &m->k_div);
    shp lg = sh2(Bt, m->NCLS);
    ab_t(&a, BF16, lg), ab_s(&a, "Scalar", "6"), ab_s(&a, "Scalar", "False"), ab_s(&a, "Scalar", "False"),
        ab_s(&a, "", "");
    mk_op(m, &m->to_f, "aten::to", &a, 1100, 0);
    ab_t(&a, BF16, lg), ab_s(&a, "Scalar", "6");
    for (int i = 0; i < 3; i++) ab_s(&a, "", "");
    ab_s(&a, "Scalar", "False"), ab_s(&a, "", "");
    mk_op(m, &m->tocopy_f, "aten::_to_copy", &a, 1300, Bt * m->NCLS * 4);
    ab_t(&a, "float", lg), ab_t(&a, BF16, lg), ab_s(&a, "Scalar", "False");
    mk_op(m, &m->copy_f, "aten::copy_", &a, 2600, 0);
    mk_k(m, &m->k_tof, API_LAUNCH, K_TOF, ew_ns(Bt * m->NCLS * 6), cdiv(Bt * m->NCLS, 512), 1, 1, 128, 1, 1, 20, 0);
    op_k(&m->copy_f, &m->k_tof);
    ab_t(&a, "float", lg), ab_s(&a, "", "");
    mk_op(m, &m->loss_sum, "aten::sum", &a, 3100, 512);
    mk_k(m, &m->k_sum, API_LAUNCH, K_FSUM, ew_ns(Bt * m->NCLS * 4), 1, 1, 1, 512, 1, 1, 32, 16);
    op_k(&m->loss_sum, &m->k_sum);
    snprintf(b1, sizeof b1, "%.17g", 1.0 / (double)Bt);
    ab_t(&a, "float", (shp){0, {0}}), ab_s(&a, "Scalar", b1);
    mk_op(m, &xo->mul_loss, "aten::mul", &a, 3000, 512);
    mk_k(m, &xo->k_mul, API_LAUNCH, K_MULS, ew_ns(8), 1, 1, 1, 128, 1, 1, 22, 0);
    op_k(&xo->mul_loss, &xo->k_mul);
    ab_t(&a, "float", (shp){0, {0}});
    mk_op(m, &xo->mul_bnode, "MulBackward0", &a, 700, 0);
    ab_t(&a, "float", (shp){0, {0}}), ab_s(&a, "Scalar", b1);
    mk_op(m, &xo->mul_b, "aten::mul", &a, 3000, 512);
    op_k(&xo->mul_b, &xo->k_mul);
    ab_t(&a, "float", (shp){0, {0}});
    mk_op(m, &m->sum_bnode, "SumBackward0", &a, 700, 0);
    snprintf(b1, sizeof b1, "[%lld, %lld]", (long long)Bt, (long long)m->NCLS);
    ab_t(&a, "float", (shp){0, {0}}), ab_s(&a, "ScalarList", b1), ab_s(&a, "Scalar", "False");
    mk_op(m, &m->expand_s, "aten::expand", &a, 700, 0);
    ab_ts(&a, "float", lg, sh2(0, 0));
    mk_op(m, &m->tocopy_bnode, "ToCopyBackward0", &a, 700, 0);
    ab_ts(&a, "float", lg, sh2(0, 0)), ab_s(&a, "Scalar", "15"), ab_s(&a, "Scalar", "False"),
        ab_s(&a, "Scalar", "False"), ab_s(&a, "", "");
    mk_op(m, &m->to_b, "aten::to", &a, 1100, 0);
    ab_ts(&a, "float", lg, sh2(0, 0)), ab_s(&a, "Scalar", "15");
    for (int i = 0; i < 3; i++) ab_s(&a, "", "");
    ab_s(&a, "Scalar", "False"), ab_s(&a, "", "");
    mk_op(m, &m->tocopy_b, "aten::_to_copy", &a, 1300, Bt * m->NCLS * 2);
    ab_t(&a, BF16, lg), ab_ts(&a, "float", lg, sh2(0, 0)), ab_s(&a, "Scalar", "False");
    mk_op(m, &m->copy_b, "aten::copy_", &a, 2600, 0);
    op_k(&m->copy_b, &xo->k_copy_bf);

    /* optimizer, loss.item() */
    mk_op(m, &m->zero_grad_ua, "Optimizer.zero_grad#AdamW.zero_grad", NULL, 9000, 0);
    mk_op(m, &m->opt_ua, "Optimizer.step#AdamW.step", NULL, 3000, 0);
    int64_t Ptot = m->qkv.wparams + m->proj.wparams + m->fc1.wparams + m->fc2.wparams + 4 * H;
    Ptot = Ptot * (L > 0 ? L : 1) + m->head.wparams + H * 3 * 256 + H + Sq * H;
    ab_s(&a, "TensorList", ""), ab_s(&a, "Scalar", "0.99990000000000001");
    mk_op(m, &m->foreach_mul, "aten::_foreach_mul_", &a, 24000, 0);
    mk_k(m, &m->k_fmul, API_LAUNCH, K_FMUL, ew_ns(Ptot * 2), 320, 1, 1, 512, 1, 1, 32, 0);
    op_k(&m->foreach_mul, &m->k_fmul), op_k(&m->foreach_mul, &m->k_fmul);
    for (int i = 0; i < 6; i++) ab_s(&a, "TensorList", "");
    ab_s(&a, "Scalar", "0.001"), ab_s(&a, "Scalar", "0.90000000000000002"), ab_s(&a, "Scalar", "0.999");
    ab_s(&a, "Scalar", "0.01"), ab_s(&a, "Scalar", "1e-08"), ab_s(&a, "Scalar", "False"),
        ab_s(&a, "Scalar", "False"), ab_s(&a, "", ""), ab_s(&a, "", "");
    mk_op(m, &m->fused_adamw, "aten::_fused_adamw_", &a, 41000, 0);
    mk_k(m, &m->k_adamw, API_LAUNCH, K_ADAMW, ew_ns(Ptot * 10), 320, 1, 1, 512, 1, 1, 72, 0);
    op_k(&m->fused_adamw, &m->k_adamw), op_k(&m->fused_adamw, &m->k_adamw);
    ab_t(&a, "float", (shp){0, {0}});
    mk_op(m, &m->item, "aten::item", &a, 1200, 0);
    ab_t(&a, "float", (shp){0, {0}});
    mk_op(m, &m->local_scalar, "aten::_local_scalar_dense", &a, 2400, 0);
    mk_copy(m, &m->k_dtoh, GK_MEMCPY, "Memcpy DtoH (Device -> Pageable)", 4, 1);
    op_k(&m->local_scalar, &m->k_dtoh);

    /* collectives */
    int W = world;
    int64_t posn = cdiv(Sq * H, W) * W;
    mk_coll(m, &m->c_bcast, CT_BROADCAST, PG_DEFAULT, 2, 4096 + H, 4096 + H);
    mk_coll(m, &m->c_agather, CT_ALLGATHER, PG_DEFAULT, 2, posn / W, posn);
    mk_coll(m, &m->c_rscatter, CT_REDUCE_SCATTER, PG_DEFAULT, 2, posn, posn / W);
    if (m->tp) mk_coll(m, &m->c_tp, CT_ALLREDUCE, PG_TP, 2, T * H, T * H);
    if (world > 1) mk_coll(m, &m->c_a2a, CT_ALLTOALLV, PG_DEFAULT, 2, T * H, T * H);
    mk_coll(m, &m->c_loss, CT_ALLREDUCE, PG_DEFAULT, 4, 1, 1);
    int64_t pdense = m->qkv.wparams + m->proj.wparams + m->fc1.wparams + m->fc2.wparams + 4 * H;
    int64_t pmoe = m->qkv.wparams + m->proj.wparams + 2 * Eg * H * F + 4 * H;
    int64_t pfinal = m->head.wparams + 2 * H + H * 3 * 256 + H;
    m->nbucket = 3;
    m->c_bucket = calloc(3, sizeof(collsite));
    if (!m->c_bucket) exit(1);
    mk_coll(m, &m->c_bucket[0], CT_ALLREDUCE, PG_DEFAULT, 2, pdense, pdense);
    mk_coll(m, &m->c_bucket[1], CT_ALLREDUCE, PG_DEFAULT, 2, pmoe, pmoe);
    mk_coll(m, &m->c_bucket[2], CT_ALLREDUCE, PG_DEFAULT, 2, pfinal, pfinal);

    /* python frames */
    static const char *ps[PYS_N] = {
        "train.py(212): train_step", "torch/utils/data/dataloader.py(708): __next__",
        "nn.Module: DistributedDataParallel_0", "torch/nn/parallel/distributed.py(1637): forward",
        "nn.Module: VisionTransformer_0", "model.py(141): forward", "nn.Module: PatchEmbed_0",
        "nn.Module: Conv2d_0", "torch/nn/modules/conv.py(554): forward",
        "torch/nn/modules/conv.py(549): _conv_forward", NULL, NULL,
        "torch/nn/modules/linear.py(125): forward", "torch/nn/modules/normalization.py(217): forward",
        "model.py(88): forward", "model.py(61): forward", "model.py(32): forward",
        "torch/nn/modules/activation.py(734): forward", "torch/_tensor.py(626): backward",
        "torch/autograd/__init__.py(347): backward", "torch/autograd/graph.py(823): _engine_run_backward",
        "<built-in method run_backward of torch._C._EngineBase object at 0x7f3c9a2e5f20>",
        "torch/optim/optimizer.py(487): wrapper", "torch/optim/adamw.py(209): step",
        "torch/optim/adamw.py(771): _fused_adamw", "<built-in function scaled_dot_product_attention>",
        "model.py(47): forward", "torch/distributed/distributed_c10d.py(4126): all_to_all_single",
        "train.py(240): evaluate"};
    for (int i = 0; i < PYS_N; i++) m->pyn_static[i] = ps[i];
    snprintf(b1, sizeof b1, "nn.Module: LayerNorm_%d", 2 * L);
    m->pyn_static[PYS_LNF] = S(m, b1);
    snprintf(b1, sizeof b1, "nn.Module: Linear_%d", 4 * L);
    m->pyn_static[PYS_HEAD] = S(m, b1);
    m->py_block = calloc((size_t)(L > 0 ? L : 1) * PYB_N, sizeof(char *));
    if (!m->py_block) exit(1);
    for (int b = 0; b < L; b++) {
        const char **n = m->py_block + b * PYB_N;
        int moe = m->E && b % m->moe_every == m->moe_every - 1;
        snprintf(b1, sizeof b1, "nn.Module: Block_%d", b), n[PYB_BLOCK] = S(m, b1);
        snprintf(b1, sizeof b1, "nn.Module: LayerNorm_%d", 2 * b), n[PYB_LN1] = S(m, b1);
        snprintf(b1, sizeof b1, "nn.Module: Attention_%d", b), n[PYB_ATTN] = S(m, b1);
        snprintf(b1, sizeof b1, "nn.Module: Linear_%d", 4 * b), n[PYB_QKV] = S(m, b1);
        snprintf(b1, sizeof b1, "nn.Module: Linear_%d", 4 * b + 1), n[PYB_PROJ] = S(m, b1);
        snprintf(b1, sizeof b1, "nn.Module: LayerNorm_%d", 2 * b + 1), n[PYB_LN2] = S(m, b1);
        snprintf(b1, sizeof b1, moe ? "nn.Module: MoE_%d" : "nn.Module: Mlp_%d", b), n[PYB_MLP] = S(m, b1);
        snprintf(b1, sizeof b1, "nn.Module: Linear_%d", 4 * b + 2), n[PYB_FC1] = S(m, b1);
        snprintf(b1, sizeof b1, "nn.Module: GELU_%d", b), n[PYB_GELU] = S(m, b1);
        snprintf(b1, sizeof b1, "nn.Module: Linear_%d", 4 * b + 3), n[PYB_FC2] = S(m, b1);
    }
}
static void model_free(model *m)
{
    free_coll(&m->c_bcast), free_coll(&m->c_agather), free_coll(&m->c_rscatter), free_coll(&m->c_loss);
    if (m->tp) free_coll(&m->c_tp);
    if (m->world > 1) free_coll(&m->c_a2a);
    for (int i = 0; i < m->nbucket; i++) free_coll(&m->c_bucket[i]);
    free(m->c_bucket);
    free(m->py_block);
    free(m->xo);
    sa_free(&m->sa);
}

#endif
