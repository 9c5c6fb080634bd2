/* test_extension_models.c — the reference's extension models built here
 * (query/perfmodel/extension.c, inference_attention.c) on hand-made args.
 * Each expected value is the reference's formula worked by hand (Python
 * expression beside it); the same events fed to the reference's classes
 * (PerfModel/extensions) give the same numbers. */
#include "query/perfmodel/perfmodel.h"
#include "tests/unit/tl_test.h"

#include <string.h>

static tl_arena A;

typedef struct res {
    int rc;
    tl_pm_result r;
    const char *params;
} res;

static res eval(const char *op, const char *dims, const char *types, const char *strides, const char *ci,
                const char *annotation)
{
    res o;
    memset(&o, 0, sizeof o);
    tl_pm_args a = {.input_dims = dims, .input_type = types, .input_strides = strides, .concrete_inputs = ci,
                    .annotation = annotation};
    tl_err e = {0};
    o.rc = tl_pm_eval(tl_pm_find(op), &a, TL_PM_FWD, NULL, &A, &o.r, &e);
    if (!o.rc) {
        tl_buf b = {0};
        tl_pm_params_repr(&b, &o.r);
        o.params = tl_arena_strndup(&A, b.p ? b.p : "", b.n);
        tl_buf_free(&b);
    }
    return o;
}

/* q (100, 16, 64) bf16, k/v caches (5000, 4, 64) fp8: H_Q 16, H_KV 4, d 64;
 * context sums c_sq 96, c_sk 1096, c_sqsq 4608, c_sqsk 52608; generation
 * g_sq 4, g_sk 4000, g_sqsq 4, g_sqsk 4000.
 * flops = 16*(2*52608*64) + 16*(2*52608*64) - 16*4608*64 - 16*4608*64
 *       + 16*(2*4000*64) + 16*(2*4000*64)                         = 222429184
 * bytes = (96+4)*(16*64 + 16*64 + 4*64 + 4*64)*2
 *       + ((1096-96) + (4000-4))*(4*64 + 4*64)*1                  = 3069952 */
static const char *Q_DIMS = "[[100,16,64],[5000,4,64],[5000,4,64],[100,16,64]]";
static const char *Q_TYPES = "[\"c10::BFloat16\",\"c10::Float8_e4m3fn\",\"c10::Float8_e4m3fn\",\"c10::BFloat16\"]";

static void test_inference_attention(void)
{
    const char *forms[] = {
        "execute_100_context_2(sq96sk1096sqsq4608sqsk52608)_generation_4(sq4sk4000sqsq4sqsk4000)",
        "step[MIXED bs=6 c=2 g=4 c_sq=96 c_sk=1096 c_sqsq=4608 c_sqsk=52608 g_sq=4 g_sk=4000 g_sqsq=4 g_sqsk=4000]",
    };
    for (int i = 0; i < 2; i++) {
        res o = eval("vllm::unified_attention_with_output", Q_DIMS, Q_TYPES, NULL, NULL, forms[i]);
        CHECK_EQ_I(o.rc, 0);
        CHECK_NEAR(o.r.flops, 222429184.0, 0);
        CHECK_NEAR(o.r.bytes, 3069952.0, 0);
        CHECK_EQ_S(o.r.compute_spec, "matrix_bf16");
        CHECK_EQ_S(o.params, "{'B': 1, 'N_Q': 100, 'H_Q': 16, 'H_V': 4, 'H_K': 4, 'N_KV': 5000, 'H_KV': 4, "
                             "'d_h_qk': 64, 'd_h_v': 64, 'dropout': 0.0, 'causal': False, 'flash_impl': True, "
                             "'c_sq': 96, 'c_sk': 1096, 'c_sqsq': 4608, 'c_sqsk': 52608, 'g_sq': 4, 'g_sk': 4000, "
                             "'g_sqsq': 4, 'g_sqsk': 4000, 'dtype_Q': 'c10::BFloat16', 'dtype_KV': "
                             "'c10::Float8_e4m3fn'}");
    }
    /* ATOM: decode[...] fills the generation sums only:
     * flops = 16*(2*4000*64)*2 = 16384000;
     * bytes = 4*(2*16*64 + 2*4*64)*2 + (4000-4)*(2*4*64)*1 = 2066432 */
    res o = eval("vllm::unified_attention_with_output", Q_DIMS, Q_TYPES, NULL, NULL,
                 "decode[bs=4 tok=4 d=4 sqsq=4 sqsk=4000 sk=4000]");
    CHECK_EQ_I(o.rc, 0);
    CHECK_NEAR(o.r.flops, 16384000.0, 0);
    CHECK_NEAR(o.r.bytes, 2066432.0, 0);
    /* prefill[...] with a ctx list: context sums only (flops 206045184, bytes 1003520) */
    o = eval("vllm::unified_attention_with_output", Q_DIMS, Q_TYPES, NULL, NULL,
             "prefill[bs=2 tok=96 ctx=[48, 48] sqsq=4608 sqsk=52608 sk=1096]");
    CHECK_EQ_I(o.rc, 0);
    CHECK_NEAR(o.r.flops, 206045184.0, 0);
    CHECK_NEAR(o.r.bytes, 1003520.0, 0);
    /* no sq/sk: the native vLLM form, "NA" (no enclosing annotation), none */
    CHECK_EQ_I(eval("vllm::unified_attention_with_output", Q_DIMS, Q_TYPES, NULL, NULL,
                    "execute_context_2(96)_generation_4(4)").rc, TL_EFORMAT);
    CHECK_EQ_I(eval("vllm::unified_attention_with_output", Q_DIMS, Q_TYPES, NULL, NULL, "NA").rc, TL_EFORMAT);
    CHECK_EQ_I(eval("vllm::unified_attention_with_output", Q_DIMS, Q_TYPES, NULL, NULL, NULL).rc, TL_EFORMAT);
    /* sq/sk all zero: "not implemented" (the reference drops the row) */
    CHECK_EQ_I(eval("vllm::unified_attention_with_output", Q_DIMS, Q_TYPES, NULL, NULL,
                    "execute_0_context_0(sq0sk0sqsq0sqsk0)_generation_0(sq0sk0sqsq0sqsk0)").rc, TL_EUNSUPPORTED);
    /* d_h_v from v (Input Dims[2][-1]) for mha_batch_prefill: d_qk 192, d_v 128
     * flops = 16*(2*52608*192 + 2*52608*128 - 4608*192 - 4608*128)
     *       + 16*(2*4000*192 + 2*4000*128)                             = 556072960
     * bytes = 100*(16*192 + 16*128 + 4*192 + 4*128)*2 + 4996*(4*192 + 4*128)*2 = 14069760 */
    o = eval("aiter::mha_batch_prefill", "[[100,16,192],[5000,4,192],[5000,4,128]]",
             "[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\"]", NULL, NULL, forms[0]);
    CHECK_EQ_I(o.rc, 0);
    CHECK_NEAR(o.r.flops, 556072960.0, 0);
    CHECK_NEAR(o.r.bytes, 14069760.0, 0);
}

static void test_elementwise_and_norm(void)
{
    /* silu_and_mul(out bf16 (8, 256), input float (8, 512)):
     * flops = 5*8*256 = 10240; bytes = 2*2048*4 + 2048*2 = 20480; precision of the input */
    res o = eval("sgl_kernel::silu_and_mul", "[[8,256],[8,512]]", "[\"c10::BFloat16\",\"float\"]",
                 "[[256,1],[512,1]]", NULL, NULL);
    CHECK_EQ_I(o.rc, 0);
    CHECK_NEAR(o.r.flops, 10240.0, 0);
    CHECK_NEAR(o.r.bytes, 20480.0, 0);
    CHECK_EQ_S(o.r.compute_spec, "vector_fp32");
    CHECK_EQ_S(o.params, "{'op_shape': (8, 256), 'dtype_in_out': ('float', 'c10::BFloat16'), "
                         "'stride_input': (512, 1), 'stride_output': (256, 1)}");
    /* gelu_tanh: 10*2048 = 20480 FLOPs, bytes 2*2048*2 + 2048*2 = 12288; an
     * unknown width ('c10::Float' is not in the table) fails */
    o = eval("aiter::gelu_tanh_and_mul", "[[8,256],[8,512]]", "[\"c10::BFloat16\",\"c10::BFloat16\"]",
             "[[256,1],[512,1]]", NULL, NULL);
    CHECK_NEAR(o.r.flops, 20480.0, 0);
    CHECK_NEAR(o.r.bytes, 12288.0, 0);
    CHECK_EQ_I(eval("aiter::silu_and_mul", "[[8,256],[8,512]]", "[\"c10::BFloat16\",\"c10::Float\"]",
                    "[[256,1],[512,1]]", NULL, NULL).rc, TL_EFORMAT);
    /* rmsnorm(out, x (4, 7168), w (7168,), eps): n = 28672, C = 7168
     * flops = n/C*(2*C + 2) + 2*n = 114696.0; bytes = 2*n*2 + C*2 = 129024 */
    o = eval("aiter::rmsnorm", "[[4,7168],[4,7168],[7168],[]]",
             "[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"Scalar\"]", "[[7168,1],[7168,1],[1],[]]",
             NULL, NULL);
    CHECK_EQ_I(o.rc, 0);
    CHECK_NEAR(o.r.flops, 114696.0, 0);
    CHECK_NEAR(o.r.bytes, 129024.0, 0);
    CHECK_EQ_S(o.params, "{'op_shape': (4, 7168), 'dtype_in_out': ('c10::BFloat16', None), 'stride_input': "
                         "(7168, 1), 'stride_output': None, 'num_channels': 7168, 'has_bias': False, "
                         "'is_affine': True, 'is_training': False}");
    /* add_rmsnorm (weight at 4): flops = n + 114696.0 = 143368.0;
     * bytes = 2*n*2 + C*2 + 2*n*2 = 243712 */
    o = eval("aiter::add_rmsnorm", "[[4,7168],[4,7168],[4,7168],[4,7168],[7168],[]]",
             "[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"Scalar\"]",
             "[[7168,1],[7168,1],[7168,1],[7168,1],[1],[]]", NULL, NULL);
    CHECK_NEAR(o.r.flops, 143368.0, 0);
    CHECK_NEAR(o.r.bytes, 243712.0, 0);
    CHECK_EQ_S(o.r.compute_spec, "vector_bf16");
}

static void test_rope_and_cache(void)
{
    /* rotary_embedding(positions, q (16, 4096), k (16, 1024), _, cache (4096, 128), _),
     * head_size int('128'), rot_dim cache[1] = 128:
     * num_elements = 16*(4096//128 + 1024//128)*128 = 81920; flops 3*n, bytes 2*n*2 */
    res o = eval("sgl_kernel::rotary_embedding", "[[16],[16,4096],[16,1024],[],[4096,128],[]]",
                 "[\"long int\",\"c10::BFloat16\",\"c10::BFloat16\",\"Scalar\",\"c10::BFloat16\",\"Scalar\"]", NULL,
                 "[\"\",\"\",\"\",\"128\",\"\",\"True\"]", NULL);
    CHECK_EQ_I(o.rc, 0);
    CHECK_NEAR(o.r.flops, 245760.0, 0);
    CHECK_NEAR(o.r.bytes, 327680.0, 0);
    CHECK_EQ_S(o.params, "{'num_elements': 81920}");
    /* store_cache(k (64, 1024), ...): 0 FLOPs, 4*65536*2 bytes */
    o = eval("sglang::store_cache", "[[64,1024],[64,1024],[100,1024],[100,1024],[64],[],[]]",
             "[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"long int\",\"Scalar\","
             "\"Scalar\"]", NULL, NULL, NULL);
    CHECK_EQ_I(o.rc, 0);
    CHECK_NEAR(o.r.flops, 0.0, 0);
    CHECK_NEAR(o.r.bytes, 524288.0, 0);
    CHECK_EQ_S(o.params, "{'op_shape': (64, 1024), 'nelems': 65536, 'dtype': 'c10::BFloat16'}");
}

static void test_quant_and_collectives(void)
{
    /* per_group_quant(out fp8 (64, 4096), input bf16 (64, 4096), scale float (64, 1)):
     * flops = 262144 * 2.59375 = 679936.0; bytes = 262144*1 + 262144*2 + 64*4 = 786688 */
    res o = eval("aiter::dynamic_per_token_scaled_quant", "[[64,4096],[64,4096],[64,1]]",
                 "[\"c10::Float8_e4m3fnuz\",\"c10::BFloat16\",\"float\"]", "[[4096,1],[4096,1],[1,1]]", NULL, NULL);
    CHECK_EQ_I(o.rc, 0);
    CHECK_NEAR(o.r.flops, 679936.0, 0);
    CHECK_NEAR(o.r.bytes, 786688.0, 0);
    CHECK_EQ_S(o.r.compute_spec, "vector_bf16");
    CHECK_EQ_S(o.params, "{'shape_in1': (64, 4096), 'shape_in2': (64, 1), 'shape_out': (64, 4096), "
                         "'dtype_in1_in2_out': ('c10::BFloat16', 'float', 'c10::Float8_e4m3fnuz'), "
                         "'stride_input1': (4096, 1), 'stride_input2': (1, 1), 'stride_output': (4096, 1)}");
    /* triton_per_token_group_quant_fp8(x (64, 4000), group int('100')):
     * flops = 6*64*4000 = 1536000; groups = (4000 + 99)//100 = 40;
     * bytes = 256000*2 + 256000 + 64*40*4 = 778240 */
    o = eval("vllm::triton_per_token_group_quant_fp8", "[[64,4000],[]]", "[\"c10::BFloat16\",\"Scalar\"]", NULL,
             "[\"\",\"100\"]", NULL);
    CHECK_EQ_I(o.rc, 0);
    CHECK_NEAR(o.r.flops, 1536000.0, 0);
    CHECK_NEAR(o.r.bytes, 778240.0, 0);
    CHECK_EQ_S(o.params, "{'M': 64, 'N': 4000, 'group_size': 100, 'num_groups': 40, 'shape_x': (64, 4000), "
                         "'dtype_x': 'c10::BFloat16', 'shape_in1': (64, 4000), 'shape_in2': (), 'shape_out': "
                         "(64, 4000), 'dtype_in1_in2_out': ('c10::BFloat16', None, 'c10::float8_e4m3fn'), "
                         "'stride_input1': None, 'stride_input2': None, 'stride_output': None}");
    /* 1-D x (4000,), group 'None' -> 128: M 1, groups (4000 + 127)//128 = 32;
     * flops 24000, bytes 4000*2 + 4000 + 32*4 = 12128 */
    o = eval("vllm::triton_per_token_group_quant_fp8", "[[4000]]", "[\"c10::BFloat16\"]", NULL,
             "[\"\",\"None\"]", NULL);
    CHECK_NEAR(o.r.flops, 24000.0, 0);
    CHECK_NEAR(o.r.bytes, 12128.0, 0);
    /* fused all-reduce + RMSNorm (input (8, 7168) at 2, weight at 6): n = 57344,
     * flops = n + (n//7168)*(2*7168 + 2) + 2*n = 286736;
     * bytes = 2*n*2 + 7168*2 + 2*n*2 = 473088; no Compute Spec */
    o = eval("aiter::fused_allreduce_rmsnorm", "[[],[],[8,7168],[8,7168],[8,7168],[8,7168],[7168]]",
             "[\"\",\"\",\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\","
             "\"c10::BFloat16\"]",
             "[[],[],[7168,1],[7168,1],[7168,1],[7168,1],[1]]", NULL, NULL);
    CHECK_EQ_I(o.rc, 0);
    CHECK_NEAR(o.r.flops, 286736.0, 0);
    CHECK_NEAR(o.r.bytes, 473088.0, 0);
    CHECK_EQ_S(o.r.compute_spec, "");
    CHECK_EQ_S(o.params, "{'op_shape': (8, 7168), 'dtype_in': 'c10::BFloat16', 'stride_input': (7168, 1), "
                         "'num_channels': 7168}");
    /* reduce_scatter (in (64, 1024), out (8, 1024)): (65536 + 8192)*2 = 147456;
     * all_reduce: 2*65536*2 = 262144; reg_all_gather (out at 0): 147456 */
    o = eval("aiter::reduce_scatter", "[[],[64,1024],[8,1024]]", "[\"\",\"c10::BFloat16\",\"c10::BFloat16\"]",
             "[[],[1024,1],[1024,1]]", NULL, NULL);
    CHECK_NEAR(o.r.bytes, 147456.0, 0);
    CHECK_EQ_S(o.params, "{'op_shape': (64, 1024), 'out_shape': (8, 1024), 'dtype_in': 'c10::BFloat16', "
                         "'stride_input': (1024, 1)}");
    o = eval("_C_custom_ar::all_reduce", "[[],[64,1024]]", "[\"\",\"c10::BFloat16\"]", "[[],[1024,1]]", NULL, NULL);
    CHECK_NEAR(o.r.flops, 0.0, 0);
    CHECK_NEAR(o.r.bytes, 262144.0, 0);
    o = eval("sglang::reg_all_gather_into_tensor", "[[64,1024],[8,1024]]", "[\"c10::BFloat16\",\"c10::BFloat16\"]",
             NULL, NULL, NULL);
    CHECK_NEAR(o.r.bytes, 147456.0, 0);
    CHECK_EQ_S(o.params, "{'out_shape': (64, 1024), 'op_shape': (8, 1024), 'dtype_in': 'c10::BFloat16'}");
    /* unknown width: fails */
    CHECK_EQ_I(eval("_C_custom_ar::all_reduce", "[[],[64]]", "[\"\",\"c10::Float\"]", "[[],[1]]", NULL, NULL).rc,
               TL_EFORMAT);
}

static void check(const char *op, const char *dims, const char *types, double flops, double bytes, const char *spec,
                  const char *params)
{
    res o = eval(op, dims, types, NULL, NULL, NULL);
    CHECK_EQ_I(o.rc, 0);
    CHECK_NEAR(o.r.flops, flops, 0);
    CHECK_NEAR(o.r.bytes, bytes, 0);
    CHECK_EQ_S(o.r.compute_spec, spec);
    CHECK_EQ_S(o.params, params);
}

static void test_mhc_and_sampling(void)
{
    /* M 8, n 4, C 7168, hc3 24, K 28672, split_k 2, b 2:
     * post  flops 2*8*4*7168*(4+1) = 2293760; bytes 8*7168*2 + 2*8*4*7168*2 + 4*8*4 + 4*8*16 = 1032832 */
    check("aiter::mhc_post", "[[8,4],[8,7168],[],[]]", "[\"float\",\"c10::BFloat16\"]", 2293760.0, 1032832.0,
          "vector_bf16", "{'M': 8, 'n': 4, 'C': 7168, 'hc3': None, 'dtype_in': 'c10::BFloat16'}");
    /* pre_gemm flops 2*8*24*28672 = 11010048; bytes 8*4*7168*2 + 4*24*28672 + 4*2*8*24 + 4*2*8 = 3212864 */
    check("aiter::mhc_pre_gemm_sqrsum", "[[2,8,24],[2,8],[8,4,7168],[24,28672]]",
          "[\"float\",\"float\",\"c10::BFloat16\",\"float\"]", 11010048.0, 3212864.0, "matrix_bf16",
          "{'M': 8, 'n': 4, 'C': 7168, 'hc3': 24, 'K': 28672, 'split_k': 2, 'dtype_in': 'c10::BFloat16'}");
    /* big_fuse flops 2*8*7168*4 + 5*8*7168 = 745472;
     * bytes 8*4*7168*2 + 4*2*8*24 + 7168*2 + 8*7168*2 + 4*8*4 + 4*8*16 = 589952 */
    check("aiter::mhc_pre_big_fuse_rmsnorm", "[[8,4],[8,4,4],[8,7168],[2,8,24],[2,8],[4],[24],[7168]]",
          "[\"float\",\"float\",\"float\",\"float\",\"float\",\"float\",\"float\",\"c10::BFloat16\"]", 745472.0,
          589952.0, "vector_bf16",
          "{'M': 8, 'n': 4, 'C': 7168, 'hc3': 24, 'split_k': 2, 'dtype_in': 'c10::BFloat16'}");
    /* fused_post_pre flops 2293760 + 11010048 = 13303808;
     * bytes 8*7168*2 + 3*8*4*7168*2 + 4*8*4 + 4*8*16 + 4*24*28672 + 4*2*8*24 + 4*2*8 = 4245696 */
    check("aiter::mhc_fused_post_pre_gemm_sqrsum",
          "[[2,8,24],[2,8],[8,4,7168],[8,7168],[8,4],[8,4,4],[8,4,7168],[24,28672]]",
          "[\"float\",\"float\",\"c10::BFloat16\",\"c10::BFloat16\"]", 13303808.0, 4245696.0, "matrix_bf16",
          "{'M': 8, 'n': 4, 'C': 7168, 'hc3': 24, 'K': 28672, 'split_k': 2, 'dtype_in': 'c10::BFloat16'}");
    /* topk_softplus M 16, E 256, topk 8: flops 6*16*256 = 24576; bytes 16*256*2 + 4*256 + 8*16*8 = 10240 */
    check("aiter::topk_softplus", "[[16,8],[16,8],[16,256],[256]]",
          "[\"float\",\"int\",\"c10::BFloat16\",\"float\"]", 24576.0, 10240.0, "vector_bf16",
          "{'M': 16, 'n': 1, 'C': 256, 'E': 256, 'topk': 8, 'dtype_in': 'c10::BFloat16'}");
    /* mixed sampling T 16, V 32000: flops 2*T*V = 1024000; bytes T*V*(2+4) + 4*T = 3072064 */
    check("aiter::mixed_sample_outer_exponential", "[[16],[16,32000],[16,32000]]",
          "[\"long int\",\"c10::BFloat16\",\"float\"]", 1024000.0, 3072064.0, "vector_bf16",
          "{'T': 16, 'V': 32000, 'dtype_logits': 'c10::BFloat16', 'dtype_noise': 'float'}");
    /* 1-D logits, one type listed: V 1, logits c10::bfloat16 and noise float by default */
    check("aiter::mixed_sample_outer_exponential", "[[16],[16]]", "[\"long int\"]", 32.0, 160.0, "vector_bf16",
          "{'T': 16, 'V': 1, 'dtype_logits': 'c10::bfloat16', 'dtype_noise': 'float'}");
}

static void check_ci(const char *op, const char *dims, const char *types, const char *strides, const char *ci,
                     double flops, double bytes)
{
    res o = eval(op, dims, types, strides, ci, NULL);
    CHECK_EQ_I(o.rc, 0);
    CHECK_NEAR(o.r.flops, flops, 0);
    CHECK_NEAR(o.r.bytes, bytes, 0);
}

static void test_rmsnorm_variants(void)
{
    /* n = 4*7168 = 28672, C 7168, rows 4.0: base flops 4.0*(2*7168 + 2) + 2*n = 114696.0
     * dynamicquant_ck: + 2n = 172040.0; bytes n*2 + C*2 + n + 4*4 = 100368 */
    const char *q_dims = "[[4,7168],[4,7168],[4,56],[7168],[],[]]";
    const char *q_types = "[\"c10::Float8_e4m3fnuz\",\"c10::BFloat16\",\"float\",\"c10::BFloat16\",\"Scalar\",\"Scalar\"]";
    const char *q_str = "[[7168,1],[7168,1],[56,1],[1],[],[]]";
    check_ci("aiter::rmsnorm2d_fwd_with_dynamicquant_ck", q_dims, q_types, q_str, NULL, 172040.0, 100368.0);
    /* rmsnorm_quant group int('128'): groups 56; bytes n*2 + C*2 + n + 4*56*4 = 101248;
     * without Concrete Inputs[5] the group is C: one group, 100368 */
    check_ci("aiter::rmsnorm_quant", q_dims, q_types, q_str, "[\"\",\"\",\"\",\"\",\"\",\"128\"]", 172040.0, 101248.0);
    check_ci("aiter::rmsnorm_quant", q_dims, q_types, q_str, "[\"\",\"\",\"\",\"\",\"\"]", 172040.0, 100368.0);
    /* vLLM fp8 group quant (x (4, 1536), group int('100')): n 6144; flops
     * 4.0*(2*1536 + 2) + 2n + 2n = 36872.0; groups 16; bytes n*2 + 1536*2 + n + 4*16*4 = 21760 */
    check_ci("vllm::rocm_aiter_rmsnorm_fp8_group_quant", "[[4,1536],[1536],[],[]]",
             "[\"c10::BFloat16\",\"c10::BFloat16\",\"Scalar\",\"Scalar\"]", "[[1536,1],[1],[],[]]",
             "[\"\",\"\",\"1e-06\",\"100\"]", 36872.0, 21760.0);
    /* with add (weight at 2, group at [4] = 128): flops + 3n = 43016.0; groups 12;
     * bytes 3*n*2 + 1536*2 + n + 4*12*4 = 46272 */
    check_ci("vllm::rocm_aiter_rmsnorm_with_add_fp8_group_quant", "[[4,1536],[4,1536],[1536],[],[]]",
             "[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"Scalar\",\"Scalar\"]",
             "[[1536,1],[1536,1],[1],[],[]]", "[\"\",\"\",\"\",\"1e-06\",\"128\"]", 43016.0, 46272.0);
    /* add + pad (x (4, 2880), pad to 256 -> 3072): flops n + base = 57608.0;
     * bytes 2*n*2 + 2880*2 + 4*3072*2 + 4*2880*2 = 99456; the group/pad text is required */
    check_ci("vllm::rocm_aiter_triton_add_rmsnorm_pad", "[[4,2880],[2880],[],[4,2880],[]]",
             "[\"c10::BFloat16\",\"c10::BFloat16\",\"Scalar\",\"c10::BFloat16\",\"Scalar\"]",
             "[[2880,1],[1],[],[2880,1],[]]", "[\"\",\"\",\"1e-06\",\"\",\"256\"]", 57608.0, 99456.0);
    CHECK_EQ_I(eval("vllm::rocm_aiter_triton_add_rmsnorm_pad", "[[4,2880],[2880],[],[4,2880],[]]",
                    "[\"c10::BFloat16\",\"c10::BFloat16\",\"Scalar\",\"c10::BFloat16\",\"Scalar\"]",
                    "[[2880,1],[1],[],[2880,1],[]]", "[\"\",\"\",\"1e-06\",\"\",\"\"]", NULL).rc, TL_EFORMAT);
}

static void test_mxfp4_and_rope(void)
{
    /* mxfp4 flatten quant x (33, 100) bf16: n 3300; flops 2n = 6600;
     * bytes n*2 + n*0.5 + n//32 = 8353.0 */
    res o = eval("sglang_profiler::fused_mxfp4_quant_fused_flatten_mxfp4_quant", "[[33,100]]", "[\"c10::BFloat16\"]",
                 "[[100,1]]", NULL, NULL);
    CHECK_EQ_I(o.rc, 0);
    CHECK_NEAR(o.r.flops, 6600.0, 0);
    CHECK_NEAR(o.r.bytes, 8353.0, 0);
    CHECK_EQ_S(o.r.compute_spec, "vector_bf16");
    CHECK_EQ_S(o.params, "{'op_shape': (33, 100), 'dtype_in_out': ('c10::BFloat16', 'c10::BFloat16'), "
                         "'stride_input': (100, 1), 'stride_output': None}");
    /* x at 2 (64, 256), no strides read: n 16384; flops 32768; bytes 32768 + 8192.0 + 512 = 41472.0 */
    o = eval("aiter::fused_dynamic_mxfp4_quant_moe_sort_hip", "[[],[],[64,256]]", "[\"\",\"\",\"c10::BFloat16\"]",
             NULL, NULL, NULL);
    CHECK_NEAR(o.r.flops, 32768.0, 0);
    CHECK_NEAR(o.r.bytes, 41472.0, 0);
    CHECK_EQ_S(o.params, "{'op_shape': (64, 256), 'dtype_in_out': ('c10::BFloat16', 'c10::BFloat16'), "
                         "'stride_input': None, 'stride_output': None}");
    o = eval("aiter::dynamic_per_group_scaled_quant_fp4", "[[],[64,256]]", "[\"\",\"c10::BFloat16\"]", NULL, NULL,
             NULL);
    CHECK_NEAR(o.r.bytes, 41472.0, 0);
    /* rope_cached_positions_2c (x (16, 32, 128) at 2, y (16, 8, 128) at 3): n 81920;
     * flops 3n = 245760; bytes 2*n*bpe('long int' = 8) = 1310720; no precision for long int */
    o = eval("aiter::rope_cached_positions_2c_fwd_impl", "[[16],[4096,64],[16,32,128],[16,8,128]]",
             "[\"long int\",\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\"]", NULL, NULL, NULL);
    CHECK_EQ_I(o.rc, 0);
    CHECK_NEAR(o.r.flops, 245760.0, 0);
    CHECK_NEAR(o.r.bytes, 1310720.0, 0);
    CHECK_EQ_S(o.r.compute_spec, "");
    CHECK_EQ_S(o.params, "{'x_shape': (16, 32, 128), 'y_shape': (16, 8, 128), 'num_elements': 81920}");
}

static void test_fused_moe(void)
{
    /* fmoe block-scale: out (16, 7168), w1 (256, 4096, 7168), w2 (256, 7168, 2048),
     * topk int('8'): N = 2048 * (7168 // 7168), gated (4096 == 2*2048);
     * flops = 2*16*7168*2048*8*2 + 2*16*7168*2048*8 + 16*7168*(2*8 - 1) = 11276009472;
     * E_active = 256*(1 - ((256-8)/256)**16); bytes = 16*7168*1 + E_active*2048*7168*1*2
     *   + E_active*2048*7168*1 + 16*7168*2 = 4490777269.369158 (float) */
    const char *ci = "[\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"8\"]";
    res o = eval("aiter::fmoe_fp8_blockscale_g1u1", "[[16,7168],[16,7168],[256,4096,7168],[256,7168,2048],[16,8]]",
                 "[\"c10::BFloat16\",\"c10::Float8_e4m3fnuz\",\"c10::Float8_e4m3fnuz\",\"c10::Float8_e4m3fnuz\"]", NULL,
                 ci, NULL);
    CHECK_EQ_I(o.rc, 0);
    CHECK_NEAR(o.r.flops, 11276009472.0, 0);
    CHECK_NEAR(o.r.bytes, 4490777269.369158, 1e-6);
    CHECK_EQ_S(o.r.compute_spec, "matrix_fp8");
    CHECK_EQ_S(o.params, "{'num_tokens': 16, 'hidden_dim': 7168, 'inter_dim': 2048, 'num_experts': 256, "
                         "'topk': 8, 'gated': True, 'input_dtype': 'c10::Float8_e4m3fnuz', 'weight_dtype': "
                         "'c10::Float8_e4m3fnuz', 'output_dtype': 'c10::BFloat16'}");
    /* packed fp4 weights: w1 (64, 1536, 1024), w2 (64, 2048, 768): N = 768 * (2048 // 1024)
     * = 1536, not gated; topk 6; flops = 2*4*2048*1536*6 * 2 + 4*2048*11 = 302080000;
     * bytes = 4*2048*2 + 2 * E_active*1536*2048*0.5 + 4*2048*2 = 65561408.0 */
    o = eval("aiter::fmoe_g1u1", "[[4,2048],[4,2048],[64,1536,1024],[64,2048,768],[4,8]]",
             "[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::Float4_e2m1fn_x2\",\"c10::Float4_e2m1fn_x2\"]", NULL,
             "[\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"6\"]", NULL);
    CHECK_EQ_I(o.rc, 0);
    CHECK_NEAR(o.r.flops, 302080000.0, 0);
    CHECK_NEAR(o.r.bytes, 65561408.0, 1e-6);
    CHECK_EQ_S(o.r.compute_spec, "matrix_bf16");
    /* no top-k: fails */
    CHECK_EQ_I(eval("aiter::fmoe_g1u1", "[[4,2048],[4,2048],[64,1536,1024],[64,2048,768]]",
                    "[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\"]", NULL, "[\"\"]", NULL).rc, TL_EFORMAT);
}

int main(void)
{
    tl_arena_init(&A, 1 << 16);
    test_inference_attention();
    test_elementwise_and_norm();
    test_rope_and_cache();
    test_quant_and_collectives();
    test_mhc_and_sampling();
    test_rmsnorm_variants();
    test_mxfp4_and_rope();
    test_fused_moe();
    tl_arena_free(&A);
    return tl_test_done("test_extension_models");
}
