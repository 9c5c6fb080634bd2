/* tracegen_build.h — builds one rank's catalogue: model dimensions from the
 * seed, every op's argument block (Input Dims / Input type / Input Strides /
 * Concrete Inputs with shapes that agree with the op's real signature), every
 * kernel's name and launch geometry with a nominal duration from a simple
 * roofline (H100-like: ~450 TFLOP/s bf16, ~2.4 TB/s), and the collective
 * sites with this rank's process-group arguments. Built once per rank so the
 * hot loop only copies text. Included only by tools/tracegen.c. */
#ifndef TRACEGEN_BUILD_H
#define TRACEGEN_BUILD_H

#include "tools/tracegen_model.h"

static const char *S(model *m, const char *s) { return sa_dup(&m->sa, s, strlen(s)); }

static void mk_op(model *m, opspec *o, const char *name, argb *a, int64_t host, int64_t alloc)
{
    memset(o, 0, sizeof *o);
    o->name = S(m, name);
    o->nlen = (uint32_t)strlen(name);
    if (a) {
        obuf t = {0};
        ob_printf(&t, "\"Concrete Inputs\": [%.*s], \"Input type\": [%.*s], \"Input Strides\": [%.*s], "
                      "\"Input Dims\": [%.*s]",
                  (int)a->ci.n, a->ci.p, (int)a->ty.n, a->ty.p, (int)a->st.n, a->st.p,
                  (int)a->di.n, a->di.p);
        o->args = sa_dup(&m->sa, t.p, t.n);
        o->alen = (uint32_t)t.n;
        free(t.p);
        free(a->ci.p), free(a->ty.p), free(a->st.p), free(a->di.p);
        memset(a, 0, sizeof *a);
    } else {
        o->args = "";
    }
    o->host = host;
    o->alloc = alloc;
    if ((strstr(name, "Backward") && strncmp(name, "aten::", 6) != 0) ||
        strcmp(name, "torch::autograd::AccumulateGrad") == 0) {
        char ev[160];
        int n = snprintf(ev, sizeof ev, "autograd::engine::evaluate_function: %s", name);
        o->evname = sa_dup(&m->sa, ev, (size_t)n);
        o->evlen = (uint32_t)n;
    }
}
static void op_k(opspec *o, const kspec *k) { o->k[o->nk++] = k; }

static void mk_k(model *m, kspec *k, int api, const char *name, int64_t dur, int64_t gx,
                 int64_t gy, int64_t gz, int bx, int by, int bz, int regs, int smem)
{
    memset(k, 0, sizeof *k);
    k->kind = GK_KERNEL;
    k->api = (uint8_t)api;
    k->name = S(m, name);
    k->nlen = (uint32_t)strlen(name);
    k->dur = dur;
    uint64_t blocks = (uint64_t)(gx * gy * gz);
    uint64_t bps = blocks * 1000000ULL / 132; /* millionths, 132 SMs */
    uint64_t wps = bps * (uint64_t)(bx * by * bz) / 32;
    uint64_t occ = wps / 640000; /* warps per SM / 64 * 100 */
    if (occ > 100) occ = 100;
    obuf t = {0};
    ob_printf(&t, ",\n      \"registers per thread\": %d,\n      \"shared memory\": %d,\n      \"blocks per SM\": ",
              regs, smem);
    ob_reserve(&t, 64);
    ob_fix6(&t, bps);
    ob_puts(&t, ",\n      \"warps per SM\": ");
    ob_reserve(&t, 64);
    ob_fix6(&t, wps);
    ob_printf(&t, ",\n      \"grid\": [%lld, %lld, %lld],\n      \"block\": [%d, %d, %d],\n      \"est. achieved occupancy %%\": %d",
              (long long)gx, (long long)gy, (long long)gz, bx, by, bz, (int)occ);
    k->meta = sa_dup(&m->sa, t.p, t.n);
    k->mlen = (uint32_t)t.n;
    free(t.p);
}
static void mk_copy(model *m, kspec *k, int kind, const char *name, int64_t bytes, int64_t bw)
{
    memset(k, 0, sizeof *k);
    k->kind = (uint8_t)kind;
    k->api = kind == GK_MEMSET ? API_MEMSET : API_MEMCPY;
    k->name = S(m, name);
    k->nlen = (uint32_t)strlen(name);
    k->bytes = bytes;
    k->dur = 1200 + bytes / bw;
    k->meta = "";
}
static int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
static int64_t gemm_ns(int64_t M, int64_t N, int64_t K)
{
    return 1800 + 2 * M * N * K / 450000 + 2 * (M * K + K * N + M * N) / 2400;
}
static int64_t ew_ns(int64_t bytes) { return 1400 + bytes / 2200; }

static const char *K_XMMA = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas";
static const char *K_XMMA_NN = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_nn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas";
static const char *K_NVJET_DX = "nvjet_hsh_256x128_64x4_1x2_h_bz_coopA_NNN";
static const char *K_NVJET_DW = "nvjet_hsh_128x256_64x4_2x1_v_bz_coopB_NTN";
static const char *K_SUM = "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<c10::BFloat16, at::native::func_wrapper_t<c10::BFloat16, at::native::sum_functor<c10::BFloat16, float, c10::BFloat16>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, c10::BFloat16, 4> >(at::native::ReduceOp<c10::BFloat16, at::native::func_wrapper_t<c10::BFloat16, at::native::sum_functor<c10::BFloat16, float, c10::BFloat16>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, c10::BFloat16, 4>)";
static const char *K_ADD = "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul>)";
static const char *K_COPY = "void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl_nocast<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#12}::operator()() const::{lambda(c10::BFloat16)#1}>(at::TensorIteratorBase&, at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#12}::operator()() const::{lambda(c10::BFloat16)#1} const&)::{lambda(int)#1}>(int, at::native::gpu_kernel_impl_nocast<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#12}::operator()() const::{lambda(c10::BFloat16)#1}>(at::TensorIteratorBase&, at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#12}::operator()() const::{lambda(c10::BFloat16)#1} const&)::{lambda(int)#1})";
static const char *K_TOF = "void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1}, std::array<char*, 2ul> >(int, at::native::(anonymous namespace)::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1}, std::array<char*, 2ul>)";
static const char *K_GELU = "void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::BFloat16)#1}, std::array<char*, 2ul> >(int, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::BFloat16)#1}, std::array<char*, 2ul>)";
static const char *K_GELUB = "void at::native::vectorized_elementwise_kernel<4, at::native::GeluBackwardCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::BFloat16, c10::BFloat16)#1}, std::array<char*, 3ul> >(int, at::native::GeluBackwardCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::BFloat16, c10::BFloat16)#1}, std::array<char*, 3ul>)";
static const char *K_LN = "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, float>(int, float, c10::BFloat16 const*, c10::BFloat16 const*, c10::BFloat16 const*, float*, float*, c10::BFloat16*)";
static const char *K_LNB1 = "void at::native::(anonymous namespace)::layer_norm_grad_input_kernel_vectorized<c10::BFloat16, float>(c10::BFloat16 const*, c10::BFloat16 const*, float const*, float const*, c10::BFloat16 const*, c10::BFloat16*, int)";
static const char *K_LNB2 = "void at::native::(anonymous namespace)::GammaBetaBackwardCUDAKernelTemplate<c10::BFloat16, float, 32u, 32u, 256u, false, true>(long, long, c10::BFloat16 const*, c10::BFloat16 const*, float const*, float const*, c10::BFloat16*, c10::BFloat16*)";
static const char *K_FLASH = "void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<64, 128, 128, 4, false, false, cutlass::bfloat16_t, Flash_kernel_traits<64, 128, 128, 4, cutlass::bfloat16_t> >, false, false, false, false, true, true, false, false>(pytorch_flash::Flash_fwd_params)";
static const char *K_FB1 = "void pytorch_flash::flash_bwd_dot_do_o_kernel<true, Flash_bwd_kernel_traits<64, 128, 128, 8, 4, 2, 4, false, false, cutlass::bfloat16_t, Flash_kernel_traits<64, 128, 128, 8, cutlass::bfloat16_t> > >(pytorch_flash::Flash_bwd_params)";
static const char *K_FB2 = "void pytorch_flash::flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<Flash_bwd_kernel_traits<64, 128, 128, 8, 4, 2, 4, false, false, cutlass::bfloat16_t, Flash_kernel_traits<64, 128, 128, 8, cutlass::bfloat16_t> >, false, false, false, false, false, false, false>(pytorch_flash::Flash_bwd_params)";
static const char *K_FB3 = "void pytorch_flash::flash_bwd_convert_dq_kernel<Flash_bwd_kernel_traits<64, 128, 128, 8, 4, 2, 4, false, false, cutlass::bfloat16_t, Flash_kernel_traits<64, 128, 128, 8, cutlass::bfloat16_t> > >(pytorch_flash::Flash_bwd_params, int)";
static const char *K_CAT = "void at::native::(anonymous namespace)::CatArrayBatchedCopy_contig<at::native::(anonymous namespace)::OpaqueType<2u>, unsigned int, 4, 128, 1>(at::native::(anonymous namespace)::OpaqueType<2u>*, at::native::(anonymous namespace)::CatArrInputTensorMetadata<at::native::(anonymous namespace)::OpaqueType<2u>, unsigned int, 128, 1>, at::native::(anonymous namespace)::TensorSizeStride<unsigned int, 4u>, int, unsigned int)";
static const char *K_N2N = "void cudnn::engines_precompiled::nchwToNhwcKernel<__nv_bfloat16, __nv_bfloat16, float, false, true, (cudnnKernelDataType_t)0>(cudnn::engines_precompiled::nchw2nhwc_params_t<float>, __nv_bfloat16 const*, __nv_bfloat16*)";
static const char *K_N2C = "void cudnn::engines_precompiled::nhwcToNchwKernel<__nv_bfloat16, __nv_bfloat16, float, true, false, (cudnnKernelDataType_t)0>(cudnn::engines_precompiled::nhwc2nchw_params_t<float>, __nv_bfloat16 const*, __nv_bfloat16*)";
static const char *K_FPROP = "void cutlass__5x_cudnn::Kernel<cutlass_tensorop_bf16_s16816fprop_optimized_bf16_256x64_32x4_nhwc_align8>(cutlass_tensorop_bf16_s16816fprop_optimized_bf16_256x64_32x4_nhwc_align8::Params)";
static const char *K_WGRAD = "void cutlass__5x_cudnn::Kernel<cutlass_tensorop_bf16_s16816wgrad_optimized_bf16_128x128_32x3_nhwc_align8>(cutlass_tensorop_bf16_s16816wgrad_optimized_bf16_128x128_32x3_nhwc_align8::Params)";
static const char *K_MEAN = "void at::native::reduce_kernel<128, 4, at::native::ReduceOp<c10::BFloat16, at::native::MeanOps<c10::BFloat16, float, float, c10::BFloat16>, unsigned int, c10::BFloat16, 4> >(at::native::ReduceOp<c10::BFloat16, at::native::MeanOps<c10::BFloat16, float, float, c10::BFloat16>, unsigned int, c10::BFloat16, 4>)";
static const char *K_FSUM = "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::func_wrapper_t<float, at::native::sum_functor<float, float, float>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, float, 4> >(at::native::ReduceOp<float, at::native::func_wrapper_t<float, at::native::sum_functor<float, float, float>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, float, 4>)";
static const char *K_DIV = "void at::native::vectorized_elementwise_kernel<4, at::native::BUnaryFunctor<c10::BFloat16, c10::BFloat16, c10::BFloat16, at::native::binary_internal::DivFunctor<c10::BFloat16> >, std::array<char*, 2ul> >(int, at::native::BUnaryFunctor<c10::BFloat16, c10::BFloat16, c10::BFloat16, at::native::binary_internal::DivFunctor<c10::BFloat16> >, std::array<char*, 2ul>)";
static const char *K_MULS = "void at::native::vectorized_elementwise_kernel<4, at::native::AUnaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float> >, std::array<char*, 2ul> >(int, at::native::AUnaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float> >, std::array<char*, 2ul>)";
static const char *K_FMUL = "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::TensorListMetadata<1>, at::native::(anonymous namespace)::BinaryOpScalarFunctor<c10::BFloat16, 1, 1, 0>, std::multiplies<float>, float>(at::native::(anonymous namespace)::TensorListMetadata<1>, at::native::(anonymous namespace)::BinaryOpScalarFunctor<c10::BFloat16, 1, 1, 0>, std::multiplies<float>, float)";
static const char *K_ADAMW = "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::FusedOptimizerTensorListMetadata<4>, at::native::(anonymous namespace)::FusedAdamMathFunctor<c10::BFloat16, 4, (at::native::ADAM_MODE)1, false>, float*, double, double, double, double, double, double, bool, float*, float*>(at::native::(anonymous namespace)::FusedOptimizerTensorListMetadata<4>, at::native::(anonymous namespace)::FusedAdamMathFunctor<c10::BFloat16, 4, (at::native::ADAM_MODE)1, false>, float*, double, double, double, double, double, double, bool, float*, float*)";

/* aten::linear on x (2-D [T, in] or 3-D [Bt, S, in]) and its backward. */
static void mk_lin(model *m, linspec *L, shp x, int64_t in, int64_t out)
{
    int64_t T = numel(x) / in;
    argb a = {0};
    shp W = sh2(out, in), Wt = sh2(in, out), Wts = sh2(1, in), b = sh1(out);
    shp x2 = sh2(T, in), g2 = sh2(T, out);
    ab_t(&a, BF16, x), ab_t(&a, BF16, W), ab_t(&a, BF16, b);
    mk_op(m, &L->linear, "aten::linear", &a, 900, 0);
    ab_t(&a, BF16, W);
    mk_op(m, &L->t, "aten::t", &a, 500, 0);
    ab_t(&a, BF16, W), ab_s(&a, "Scalar", "0"), ab_s(&a, "Scalar", "1");
    mk_op(m, &L->transpose, "aten::transpose", &a, 400, 0);
    char l1[64], l2[64];
    snprintf(l1, sizeof l1, "[%lld, %lld]", (long long)in, (long long)out);
    snprintf(l2, sizeof l2, "[1, %lld]", (long long)in);
    ab_t(&a, BF16, W), ab_s(&a, "ScalarList", l1), ab_s(&a, "ScalarList", l2),
        ab_s(&a, "Scalar", "0");
    mk_op(m, &L->as_strided, "aten::as_strided", &a, 300, 0);
    ab_ts(&a, BF16, b, sh1(1)), ab_t(&a, BF16, x2), ab_ts(&a, BF16, Wt, Wts);
    ab_s(&a, "Scalar", "1"), ab_s(&a, "Scalar", "1");
    mk_op(m, &L->addmm, "aten::addmm", &a, 4200, T * out * 2);
    mk_k(m, &L->k_fwd, API_LAUNCH, K_XMMA, gemm_ns(T, out, in), cdiv(out, 128), cdiv(T, 128), 1,
         384, 1, 1, 168, 231424);
    op_k(&L->addmm, &L->k_fwd);
    /* backward */
    ab_t(&a, BF16, g2);
    mk_op(m, &L->bnode, "AddmmBackward0", &a, 700, 0);
    ab_t(&a, BF16, g2), ab_t(&a, BF16, W);
    mk_op(m, &L->mm_dx, "aten::mm", &a, 3800, T * in * 2);
    mk_k(m, &L->k_dx, API_LAUNCH, K_NVJET_DX, gemm_ns(T, in, out), cdiv(in, 128) * cdiv(T, 256) < 132 ? cdiv(in, 128) * cdiv(T, 256) : 132, 1, 1, 384, 1, 1, 168, 213264);
    op_k(&L->mm_dx, &L->k_dx);
    ab_ts(&a, BF16, sh2(out, T), sh2(1, out)), ab_t(&a, BF16, x2);
    mk_op(m, &L->mm_dw, "aten::mm", &a, 3800, out * in * 2);
    mk_k(m, &L->k_dw, API_LAUNCH, K_NVJET_DW, gemm_ns(out, in, T), cdiv(out, 128) * cdiv(in, 256) < 132 ? cdiv(out, 128) * cdiv(in, 256) : 132, 1, 1, 384, 1, 1, 168, 213264);
    op_k(&L->mm_dw, &L->k_dw);
    ab_t(&a, BF16, g2), ab_s(&a, "ScalarList", "[0]"), ab_s(&a, "Scalar", "True"), ab_s(&a, "", "");
    mk_op(m, &L->sum_db, "aten::sum", &a, 3300, out * 2);
    mk_k(m, &L->k_db, API_LAUNCH, K_SUM, ew_ns(T * out * 2), cdiv(out, 32), 16, 1, 32, 16, 1, 40, 16);
    op_k(&L->sum_db, &L->k_db);
    ab_ts(&a, BF16, Wt, Wts);
    mk_op(m, &L->tnode, "TBackward0", &a, 500, 0);
    ab_ts(&a, BF16, Wt, Wts);
    mk_op(m, &L->tt, "aten::t", &a, 400, 0);
    ab_t(&a, BF16, W);
    mk_op(m, &L->agw, "torch::autograd::AccumulateGrad", &a, 900, 0);
    ab_t(&a, BF16, b);
    mk_op(m, &L->agb, "torch::autograd::AccumulateGrad", &a, 900, 0);
    ab_t(&a, BF16, W);
    mk_op(m, &L->det_w, "aten::detach", &a, 500, 0);
    ab_t(&a, BF16, b);
    mk_op(m, &L->det_b, "aten::detach", &a, 500, 0);
    L->wparams = out * in + out;
}

/* ------------------------------------------------------- collectives */
static const char *ct_name[] = {"allreduce", "broadcast", "_allgather_base", "_reduce_scatter_base",
                                "all_to_allv"};
static const char *ct_ua[] = {"nccl:all_reduce", "nccl:broadcast", "nccl:_all_gather_base",
                              "nccl:_reduce_scatter_base", "nccl:all_to_all"};

/* Members of process group p: p == 0 is the world, p >= 1 the TP pairs. */
static int pg_first(const model *m, int p) { return p == 0 ? 0 : m->tp * (p - 1); }
static int pg_size(const model *m, int p) { return p == 0 ? m->world : m->tp; }
static void ob_rank_list(obuf *b, const model *m, int p)
{
    ob_reserve(b, 2);
    ob_putc(b, '[');
    for (int i = 0; i < pg_size(m, p); i++) {
        ob_reserve(b, 32);
        if (i) OB_LIT(b, ", ");
        ob_u64(b, (uint64_t)(pg_first(m, p) + i));
    }
    ob_reserve(b, 1);
    ob_putc(b, ']');
}
/* all_to_allv: tokens rank src sends to rank dst (in elements); every rank's
 * list is a rotation of the same weights, so all ranks move the same total. */
static int64_t a2a_split(const model *m, int64_t total, int src, int dst)
{
    int n = m->world;
    int64_t wsum = 0;
    for (int i = 0; i < n; i++) wsum += 1 + i % 4;
    int mi = ((dst - src) % n + n) % n;
    int64_t tok = total / m->H;
    int64_t share = tok * (1 + mi % 4) / wsum;
    if (mi == 0) { /* remainder to the self slot */
        int64_t s = 0;
        for (int i = 0; i < n; i++) s += tok * (1 + i % 4) / wsum;
        share += tok - s;
    }
    return share * m->H;
}
static void ob_splits(obuf *b, const model *m, int64_t total, int r, int out)
{
    ob_reserve(b, 64);
    ob_putc(b, '[');
    for (int j = 0; j < m->world; j++) {
        ob_reserve(b, 32);
        if (j) OB_LIT(b, ", ");
        ob_i64(b, out ? a2a_split(m, total, j, r) : a2a_split(m, total, r, j));
    }
    ob_putc(b, ']');
}

static void mk_coll(model *m, collsite *c, int type, int pgkind, int dsize, int64_t in_n,
                    int64_t out_n)
{
    memset(c, 0, sizeof *c);
    c->type = type;
    c->pgkind = pgkind;
    c->dsize = dsize;
    c->dtype = dsize == 4 ? "Float" : "BFloat16";
    c->in_n = in_n;
    c->out_n = out_n;
    c->full_bytes = (type == CT_ALLGATHER ? out_n : in_n) * dsize;
    int p = pgkind == PG_DEFAULT ? 0 : m->my_tp_pg;
    int gsize = pg_size(m, p), gstart = pg_first(m, p), grank = m->rank - gstart;
    const char *desc = p == 0 ? "default_pg" : "tp_group";
    const char *ty = dsize == 4 ? "float" : BF16;
    obuf ranks = {0}, ins = {0}, outs = {0};
    ob_reserve(&ranks, 64);
    ob_rank_list(&ranks, m, p);
    if (type == CT_ALLTOALLV) {
        ob_splits(&ins, m, in_n, m->rank, 0);
        ob_splits(&outs, m, in_n, m->rank, 1);
    } else {
        ob_puts(&ins, "[]");
        ob_puts(&outs, "[]");
    }
    argb a = {0};
    opspec *o = calloc(3, sizeof *o);
    if (!o) exit(1);
    char sz[32];
    switch (type) {
    case CT_ALLREDUCE:
        ab_tl1(&a, in_n), ab_s(&a, "", ""), ab_s(&a, "", ""), ab_s(&a, "", ""), ab_s(&a, "Scalar", "-1");
        mk_op(m, &o[0], "c10d::allreduce_", &a, 2500, 0);
        break;
    case CT_BROADCAST:
        ab_tl1(&a, in_n), ab_s(&a, "", ""), ab_s(&a, "Scalar", "0"), ab_s(&a, "Scalar", "0"),
            ab_s(&a, "Scalar", "True"), ab_s(&a, "Scalar", "-1");
        mk_op(m, &o[0], "c10d::broadcast_", &a, 2500, 0);
        break;
    case CT_ALLGATHER:
    case CT_REDUCE_SCATTER:
        ab_t(&a, ty, sh1(out_n)), ab_t(&a, ty, sh1(in_n)), ab_s(&a, "", "");
        if (type == CT_REDUCE_SCATTER) ab_s(&a, "", "");
        ab_s(&a, "Scalar", "False"), ab_s(&a, "Scalar", "-1");
        mk_op(m, &o[0], type == CT_ALLGATHER ? "c10d::_allgather_base_" : "c10d::_reduce_scatter_base_",
              &a, 2500, out_n * dsize);
        break;
    default: {
        obuf t1 = {0}, t2 = {0};
        ob_printf(&t1, "%.*s", (int)outs.n, outs.p);
        ob_printf(&t2, "%.*s", (int)ins.n, ins.p);
        ab_t(&a, ty, sh1(out_n)), ab_t(&a, ty, sh1(in_n)), ab_s(&a, "", "");
        ab_s(&a, "ScalarList", t1.p), ab_s(&a, "ScalarList", t2.p), ab_s(&a, "Scalar", "-1");
        mk_op(m, &o[0], "c10d::alltoall_base_", &a, 2500, out_n * dsize);
        free(t1.p), free(t2.p);
    }
    }
    /* record_param_comms: key order as Kineto writes it */
    ab_tl1(&a, in_n);
    ab_s(&a, "", ""), ab_s(&a, "", ""), ab_s(&a, "Scalar", "0"), ab_s(&a, "", "");
    {
        obuf t1 = {0}, t2 = {0};
        ob_printf(&t1, "%.*s", (int)ins.n, ins.p);
        ob_printf(&t2, "%.*s", (int)outs.n, outs.p);
        ab_s(&a, "ScalarList", t1.p), ab_s(&a, "ScalarList", t2.p);
        free(t1.p), free(t2.p);
    }
    snprintf(sz, sizeof sz, "%d", gstart);
    ab_s(&a, "Scalar", sz);
    ab_s(&a, "Scalar", "1");
    snprintf(sz, sizeof sz, "%d", gsize);
    ab_s(&a, "Scalar", sz);
    obuf t = {0};
    ob_printf(&t, "\"Collective name\": \"%s\", \"Process Group Description\": \"%s\", \"dtype\": \"%s\", "
                  "\"Rank\": %d, \"Input Strides\": [%.*s], \"Concrete Inputs\": [%.*s], \"Out msg nelems\": %lld, "
                  "\"Process Group Name\": \"%d\", \"Input type\": [%.*s], \"Global rank stride\": 1, "
                  "\"Out split size\": \"%.*s\", \"In split size\": \"%.*s\", \"Process Group Ranks\": \"%.*s\", "
                  "\"Group size\": %d, \"Input Dims\": [%.*s], \"Global rank start\": %d, \"In msg nelems\": %lld",
              ct_name[type], desc, c->dtype, grank, (int)a.st.n, a.st.p, (int)a.ci.n, a.ci.p,
              (long long)out_n, p, (int)a.ty.n, a.ty.p, (int)outs.n, outs.p, (int)ins.n, ins.p,
              (int)ranks.n, ranks.p, gsize, (int)a.di.n, a.di.p, gstart, (long long)in_n);
    free(a.ci.p), free(a.ty.p), free(a.st.p), free(a.di.p);
    memset(&a, 0, sizeof a);
    mk_op(m, &o[1], "record_param_comms", NULL, 3500, 0);
    o[1].args = sa_dup(&m->sa, t.p, t.n);
    o[1].alen = (uint32_t)t.n;
    t.n = 0;
    ab_t(&a, ty, sh1(in_n));
    mk_op(m, &o[2], ct_ua[type], &a, 900, 0);
    c->c10d = &o[0], c->rpc = &o[1], c->ua = &o[2];
    c->uaname = o[2].name, c->ualen = o[2].nlen;
    /* the kernel */
    const char *dt = dsize == 4 ? "f32" : "bf16";
    const char *algo = c->full_bytes < 65536 ? "RING_LL" : c->full_bytes < (4 << 20) ? "RING_LL128" : "RING_SIMPLE";
    char kn[160];
    switch (type) {
    case CT_ALLREDUCE: snprintf(kn, sizeof kn, "ncclDevKernel_AllReduce_Sum_%s_%s(ncclDevKernelArgsStorage<4096ul>)", dt, algo); break;
    case CT_BROADCAST: snprintf(kn, sizeof kn, "ncclDevKernel_Broadcast_%s(ncclDevKernelArgsStorage<4096ul>)", algo); break;
    case CT_ALLGATHER: snprintf(kn, sizeof kn, "ncclDevKernel_AllGather_%s(ncclDevKernelArgsStorage<4096ul>)", algo); break;
    case CT_REDUCE_SCATTER: snprintf(kn, sizeof kn, "ncclDevKernel_ReduceScatter_Sum_%s_%s(ncclDevKernelArgsStorage<4096ul>)", dt, algo); break;
    default: snprintf(kn, sizeof kn, "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)");
    }
    int64_t ch = c->full_bytes < 65536 ? 2 : c->full_bytes < (4 << 20) ? 16 : 32;
    mk_k(m, &c->k, API_LAUNCH_EXC, kn, 0, ch, 1, 1, type == CT_ALLTOALLV ? 256 : 544, 1, 1, 96, 0);
    ob_printf(&t, ",\n      \"Collective name\": \"%s\", \"In msg nelems\": %lld, \"Out msg nelems\": %lld, "
                  "\"Group size\": %d, \"dtype\": \"%s\", \"In split size\": \"%.*s\", \"Out split size\": \"%.*s\", "
                  "\"Process Group Name\": \"%d\", \"Process Group Description\": \"%s\", \"Process Group Ranks\": \"%.*s\"",
              ct_name[type], (long long)in_n, (long long)out_n, gsize, c->dtype, (int)ins.n, ins.p,
              (int)outs.n, outs.p, p, desc, (int)ranks.n, ranks.p);
    c->coll = sa_dup(&m->sa, t.p, t.n);
    c->clen = (uint32_t)t.n;
    free(t.p), free(ranks.p), free(ins.p), free(outs.p);
}
static void free_coll(collsite *c) { free((void *)c->c10d); }

#endif
